/* test_host_runtime.c — the runtime version (libcudart, then NVRTC, then NBC_NO_RUNTIME,
 * each searched through NBCUDA_CUDART / NBCUDA_NVRTC / CUDA_HOME / /usr/local/cuda / the
 * loader), the supported-version list, and the profiler (start/stop with a lazily created
 * context, failures). The toolkit here is CUDA 13.0 with libcudart and NVRTC.
 *
 * The runtime version needs no driver, so those tests run anywhere; the profiler runs
 * against any working driver, its state and failures only against the test driver.
 */
#include <sys/stat.h>

#include "nbcuda.h"
#include "test.h"
#include "testdriver.h"

static int have(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

TEST(version_from_cudart) {
  if (!have("/usr/local/cuda/lib64/libcudart.so.13"))
    SKIP("no libcudart 13 in /usr/local/cuda");
  unsetenv("CUDA_HOME");
  unsetenv("CUDA_PATH");
  int major = 0, minor = -1;
  nbc_runtime_source_t source = NBC_RUNTIME_NVVM;
  ASSERT_OK(nbc_runtime_get_version(&major, &minor, &source));
  ASSERT_EQ(major, 13);
  ASSERT(minor >= 0);
  ASSERT_EQ(source, NBC_RUNTIME_CUDART);
  int supported = 0;
  ASSERT_OK(nbc_runtime_is_supported_version(&supported));
  ASSERT_EQ(supported, 1);
  if (tdrv_present()) ASSERT_EQ(tdrv()->calls("cuInit"), 0); /* needs no driver */
  ASSERT(nbc_driver_path() == NULL);                         /* nor loads one */
}

TEST(version_from_nvrtc_when_no_cudart) {
  if (!have("/usr/local/cuda/lib64/libnvrtc.so.13")) SKIP("no NVRTC 13 in /usr/local/cuda");
  setenv("NBCUDA_CUDART", "/nonexistent/libcudart.so", 1);
  int major = 0, minor = 0;
  nbc_runtime_source_t source = NBC_RUNTIME_CUDART;
  ASSERT_OK(nbc_runtime_get_version(&major, &minor, &source));
  ASSERT_EQ(major, 13);
  ASSERT_EQ(source, NBC_RUNTIME_NVRTC);
}

TEST(no_runtime) {
  setenv("NBCUDA_CUDART", "/nonexistent/libcudart.so", 1);
  setenv("NBCUDA_NVRTC", "/nonexistent/libnvrtc.so", 1);
  int major, minor;
  ASSERT_STATUS(nbc_runtime_get_version(&major, &minor, NULL), NBC_NO_RUNTIME);
  ASSERT_CONTAINS(nbc_last_error(), "NBCUDA_CUDART=/nonexistent/libcudart.so");
  ASSERT_CONTAINS(nbc_last_error(), "NBCUDA_NVRTC=/nonexistent/libnvrtc.so");
  int supported = 1;
  ASSERT_STATUS(nbc_runtime_is_supported_version(&supported), NBC_NO_RUNTIME);
  ASSERT_STATUS(nbc_runtime_get_version(NULL, &minor, NULL), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_runtime_is_supported_version(NULL), NBC_INVALID_ARGUMENT);
}

TEST(cuda_home_searched) {
  /* A CUDA_HOME without libraries is searched (and named) before /usr/local/cuda. */
  if (!have("/usr/local/cuda/lib64/libcudart.so.13"))
    SKIP("no libcudart 13 in /usr/local/cuda");
  setenv("CUDA_HOME", "/nonexistent-cuda-home", 1);
  setenv("NBCUDA_NVRTC", "/nonexistent/libnvrtc.so", 1);
  int major, minor;
  nbc_runtime_source_t source;
  ASSERT_OK(nbc_runtime_get_version(&major, &minor, &source));
  ASSERT_EQ(source, NBC_RUNTIME_CUDART);
}

TEST(toolkit_roots) {
  const char *roots[NBC_TOOLKIT_ROOTS_MAX];
  setenv("CUDA_HOME", "/opt/home", 1);
  setenv("CUDA_PATH", "", 1); /* empty: skipped */
  ASSERT_EQ(nbc_toolkit_roots(roots), 2);
  ASSERT_STREQ(roots[0], "/opt/home");
  ASSERT_STREQ(roots[1], "/usr/local/cuda");
  setenv("CUDA_PATH", "/opt/path", 1);
  ASSERT_EQ(nbc_toolkit_roots(roots), 3);
  ASSERT_STREQ(roots[1], "/opt/path");
  unsetenv("CUDA_HOME");
  unsetenv("CUDA_PATH");
  ASSERT_EQ(nbc_toolkit_roots(roots), 1);
  ASSERT_STREQ(roots[0], "/usr/local/cuda");
}

TEST(supported_versions) {
  const int(*versions)[2] = NULL;
  int count = 0;
  nbc_runtime_supported_versions(&versions, &count);
  ASSERT(count >= 2);
  int has12 = 0, has13 = 0;
  for (int i = 0; i < count; i++) {
    ASSERT(versions[i][0] == 12 || versions[i][0] == 13);
    has12 |= versions[i][0] == 12 && versions[i][1] == 0;
    has13 |= versions[i][0] == 13 && versions[i][1] == 0;
    if (i)
      ASSERT(versions[i][0] * 100 + versions[i][1] >
             versions[i - 1][0] * 100 + versions[i - 1][1]);
  }
  ASSERT(has12 && has13);
  nbc_runtime_supported_versions(NULL, NULL); /* allowed */
}

TEST(profiler) {
  REQUIRE_DRIVER();
  int fixture = tdrv_present();
  ASSERT_OK(nbc_profile_start());
  if (fixture) ASSERT_EQ(tdrv()->profiler_state(), 1);
  if (fixture) ASSERT_EQ(tdrv()->stack_depth(), 1); /* like numba's require_context */
  nbc_device_t *cur = NULL;
  ASSERT_OK(nbc_device_current(&cur));
  ASSERT(cur != NULL);
  ASSERT_OK(nbc_profile_stop());
  ASSERT_OK(nbc_profile_stop()); /* stopping twice is fine (h200_probe: profiler_stop_again) */
  if (!fixture) return;
  ASSERT_EQ(tdrv()->profiler_state(), 0);
  tdrv()->fail("cuProfilerStart", 1, 5);
  ASSERT_STATUS(nbc_profile_start(), NBC_DRIVER_ERROR);
  ASSERT_STREQ(nbc_last_error(), "cuProfilerStart: CUDA_ERROR_PROFILER_DISABLED (5)");
  tdrv()->fail("cuProfilerStop", 1, 6);
  ASSERT_STATUS(nbc_profile_stop(), NBC_DRIVER_ERROR);
  ASSERT_STREQ(nbc_last_error(), "cuProfilerStop: CUDA_ERROR_PROFILER_NOT_INITIALIZED (6)");
}

TEST(profiler_without_driver) {
  setenv("NBCUDA_DRIVER", "0", 1);
  ASSERT_STATUS(nbc_profile_start(), NBC_DRIVER_DISABLED);
  ASSERT_STATUS(nbc_profile_stop(), NBC_DRIVER_DISABLED);
}

TEST_LIST(X(version_from_cudart) X(version_from_nvrtc_when_no_cudart) X(no_runtime)
              X(cuda_home_searched) X(toolkit_roots) X(supported_versions) X(profiler)
                  X(profiler_without_driver))
TEST_MAIN()
