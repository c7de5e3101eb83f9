/* test_numba_env.c — numba-cuda's environment switches that the C library honours:
 * NUMBA_DISABLE_CUDA and NUMBA_CUDA_DRIVER (the driver loader, under nbcuda's own
 * NBCUDA_DRIVER), NUMBA_FORCE_CUDA_CC (the architecture of every libNVVM and NVRTC
 * compilation), NUMBA_CUDA_INCLUDE_PATH (NVRTC's toolkit headers when none are beside it). Each test runs in a fresh child process (test.h), so the driver is loaded
 * anew with the environment the test sets. */
#include <sys/stat.h>

#include "nbcuda.h"
#include "test.h"

TEST(disable_cuda_disables_the_driver) {
  setenv("NUMBA_DISABLE_CUDA", "1", 1);
  int count = -1;
  ASSERT_STATUS(nbc_device_count(&count), NBC_DRIVER_DISABLED);
  ASSERT_CONTAINS(nbc_last_error(),
                  "CUDA is disabled due to setting NUMBA_DISABLE_CUDA=1 in the environment");
}

TEST(disable_cuda_zero_leaves_the_driver_alone) {
  setenv("NUMBA_DISABLE_CUDA", "0", 1);
  setenv("NBCUDA_DRIVER", "/nonexistent/libcuda-for-this-test.so", 1);
  int count = -1;
  ASSERT_STATUS(nbc_device_count(&count), NBC_NO_DRIVER);
  ASSERT_CONTAINS(nbc_last_error(), "/nonexistent/libcuda-for-this-test.so is not a file "
                                    "(from NBCUDA_DRIVER)");
}

TEST(numba_cuda_driver_names_the_library) {
  setenv("NBCUDA_DRIVER", "", 1);
  setenv("NUMBA_CUDA_DRIVER", "/nonexistent/libcuda-numba.so", 1);
  int count = -1;
  ASSERT_STATUS(nbc_device_count(&count), NBC_NO_DRIVER);
  ASSERT_CONTAINS(nbc_last_error(),
                  "/nonexistent/libcuda-numba.so is not a file (from NUMBA_CUDA_DRIVER)");
}

TEST(nbcuda_driver_wins_over_numba_cuda_driver) {
  const char *fixture = getenv("NBCUDA_TESTDRIVER");
  if (!fixture || !*fixture) SKIP("needs the test driver");
  setenv("NBCUDA_DRIVER", fixture, 1);
  setenv("NUMBA_CUDA_DRIVER", "/nonexistent/libcuda-numba.so", 1);
  int count = -1;
  ASSERT_OK(nbc_device_count(&count));
  ASSERT(count > 0);
  ASSERT_STREQ(nbc_driver_path(), fixture);
}

/* The PTX of a small device function compiled for cc 9.0. */
static char *ptx_for_cc90(nbc_status_t *pst) {
  nbc_compile_options_t o;
  nbc_compile_options_init(&o);
  o.cc_major = 9;
  o.cc_minor = 0;
  nbc_source_t s = {"def f(a):\n    return a + 1\n", 0, "f.py", 1, 0};
  nbc_compile_result_t *r = NULL;
  *pst = nbc_compile(&s, "f", "float32(float32)", &o, NULL, &r);
  char *code = *pst == NBC_OK ? strdup(nbc_compile_result_code(r, NULL)) : NULL;
  nbc_compile_result_destroy(r);
  return code;
}

TEST(force_cuda_cc_replaces_the_asked_cc) {
  nbc_status_t st;
  char *ptx = ptx_for_cc90(&st);
  ASSERT_OK(st);
  ASSERT_CONTAINS(ptx, ".target sm_90");
  free(ptx);
  /* numba-cuda's get_arch_option: the forced cc as given, an arch suffix ignored */
  static const char *const forced[][2] = {{"8.0", ".target sm_80"}, {"8.6", ".target sm_86"},
                                          {"9.0a", ".target sm_90\n"}};
  for (size_t i = 0; i < sizeof forced / sizeof forced[0]; i++) {
    setenv("NUMBA_FORCE_CUDA_CC", forced[i][0], 1);
    ptx = ptx_for_cc90(&st);
    ASSERT_OK(st);
    ASSERT_CONTAINS(ptx, forced[i][1]);
    free(ptx);
  }
  setenv("NUMBA_FORCE_CUDA_CC", "", 1); /* empty: not set */
  ptx = ptx_for_cc90(&st);
  ASSERT_OK(st);
  ASSERT_CONTAINS(ptx, ".target sm_90");
  free(ptx);
}

TEST(force_cuda_cc_that_is_not_a_cc_is_an_error) {
  static const char *const bad[] = {"nine", "9", "9.", ".0", "9.10"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    setenv("NUMBA_FORCE_CUDA_CC", bad[i], 1);
    nbc_status_t st;
    char *ptx = ptx_for_cc90(&st);
    ASSERT(ptx == NULL);
    ASSERT_EQ(st, NBC_UNSUPPORTED_CC);
    char expected[128];
    snprintf(expected, sizeof expected, "NUMBA_FORCE_CUDA_CC='%s' is not a compute capability",
             bad[i]);
    ASSERT_CONTAINS(nbc_last_error(), expected);
  }
}

TEST(force_cuda_cc_applies_to_nvrtc) {
  static const char src[] = "extern \"C\" __device__ int twice(int *r, int a) {\n"
                            "  *r = 2 * a;\n  return 0;\n}\n";
  setenv("NUMBA_FORCE_CUDA_CC", "8.0", 1);
  char *code = NULL;
  size_t n = 0;
  nbc_status_t st = nbc_nvrtc_compile(src, "twice.cu", 9, 0, 0, &code, &n);
  if (st == NBC_NO_NVRTC) SKIP("no NVRTC");
  ASSERT_OK(st);
  ASSERT_CONTAINS(code, ".target sm_80");
  free(code);
  setenv("NUMBA_FORCE_CUDA_CC", "x", 1);
  ASSERT_STATUS(nbc_nvrtc_compile(src, "twice.cu", 9, 0, 0, &code, &n), NBC_UNSUPPORTED_CC);
  ASSERT_CONTAINS(nbc_last_error(), "NUMBA_FORCE_CUDA_CC='x'");
}

/* An NVRTC with no toolkit headers beside it: a link to the toolkit's library in a fresh
 * <tmp>/lib64/, loaded through NBCUDA_NVRTC. Returns the source to compile (it includes a
 * toolkit header). */
static char tmp_dir[] = "/tmp/nbc_nvrtc_XXXXXX", lib64[64], nvrtc_link[96];

static void remove_tmp_dir(void) {
  unlink(nvrtc_link);
  rmdir(lib64);
  rmdir(tmp_dir);
}

static const char *nvrtc_without_headers(void) {
  const char *real = "/usr/local/cuda/lib64/libnvrtc.so.13";
  if (access(real, R_OK) != 0) SKIP("no NVRTC at /usr/local/cuda/lib64");
  char *dir = mkdtemp(tmp_dir);
  ASSERT(dir != NULL);
  snprintf(lib64, sizeof lib64, "%s/lib64", dir);
  snprintf(nvrtc_link, sizeof nvrtc_link, "%s/libnvrtc.so.13", lib64);
  ASSERT(mkdir(lib64, 0700) == 0 && symlink(real, nvrtc_link) == 0);
  setenv("NBCUDA_NVRTC", nvrtc_link, 1);
  return "#include <cuda_device_runtime_api.h>\n"
         "extern \"C\" __device__ int one(int *r) { *r = 1; return 0; }\n";
}

TEST(include_path_gives_nvrtc_the_toolkit_headers) {
  const char *src = nvrtc_without_headers();
  setenv("NUMBA_CUDA_INCLUDE_PATH", "/usr/local/cuda/include", 1);
  char *code = NULL;
  size_t n = 0;
  nbc_status_t st = nbc_nvrtc_compile(src, "one.cu", 9, 0, 0, &code, &n);
  remove_tmp_dir();
  ASSERT_OK(st);
  ASSERT_CONTAINS(code, "one");
  free(code);
}

TEST(without_include_path_the_headers_are_missing) {
  const char *src = nvrtc_without_headers();
  unsetenv("NUMBA_CUDA_INCLUDE_PATH");
  char *code = NULL;
  size_t n = 0;
  nbc_status_t st = nbc_nvrtc_compile(src, "one.cu", 9, 0, 0, &code, &n);
  remove_tmp_dir();
  ASSERT_EQ(st, NBC_NVRTC_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "cuda_device_runtime_api.h");
}

TEST_LIST(X(disable_cuda_disables_the_driver) X(disable_cuda_zero_leaves_the_driver_alone)
              X(numba_cuda_driver_names_the_library) X(nbcuda_driver_wins_over_numba_cuda_driver)
                  X(force_cuda_cc_replaces_the_asked_cc)
                      X(force_cuda_cc_that_is_not_a_cc_is_an_error)
                          X(force_cuda_cc_applies_to_nvrtc)
                              X(include_path_gives_nvrtc_the_toolkit_headers)
                                  X(without_include_path_the_headers_are_missing))
TEST_MAIN()
