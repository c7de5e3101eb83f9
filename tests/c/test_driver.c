/* test_driver.c — the driver layer: loading libcuda (NBCUDA_DRIVER, disabled, missing, the
 * toolkit's stub), cuInit on first use only, numba's first/later init-failure messages, the
 * status and CUresult name tables, the per-thread last error, fork detection and the choice of
 * per-thread-default-stream entry points.
 *
 * Runs against the test driver (NBCUDA_DRIVER / NBCUDA_TESTDRIVER set by ctest) and, on the
 * GPU machine, against the real driver: tests that steer the fixture (modes, fault injection,
 * call counts) say REQUIRE_TESTDRIVER(), the others check what any driver must answer and add
 * the fixture's call counts when it is present. Tests that need another driver set
 * NBCUDA_DRIVER themselves before the first nbcuda call (each test is its own process).
 */
#include <pthread.h>
#include <sys/stat.h>

#include "nbcuda.h"
#include "test.h"
#include "testdriver.h"

#define STUB_LIBCUDA "/usr/local/cuda/lib64/stubs/libcuda.so"

TEST(status_names_and_strings) {
  ASSERT_STREQ(nbc_status_name(NBC_OK), "NBC_OK");
  ASSERT_STREQ(nbc_status_name(NBC_DRIVER_ERROR), "NBC_DRIVER_ERROR");
  ASSERT_STREQ(nbc_status_name(NBC_INTERNAL), "NBC_INTERNAL");
  ASSERT_STREQ(nbc_status_name((nbc_status_t)-1), "NBC_UNKNOWN");
  ASSERT_STREQ(nbc_status_name(NBC_STATUS_COUNT_), "NBC_UNKNOWN");
  ASSERT_STREQ(nbc_status_string(NBC_FORKED), "CUDA initialized before forking");
  ASSERT_STREQ(nbc_status_string(NBC_CONTEXT_SWITCH), "Cannot switch CUDA-context.");
  ASSERT_STREQ(nbc_status_string((nbc_status_t)9999), "unknown status");
}

TEST(cuda_error_names) {
  ASSERT_STREQ(nbc_cuda_error_name(0), "CUDA_SUCCESS");
  ASSERT_STREQ(nbc_cuda_error_name(201), "CUDA_ERROR_INVALID_CONTEXT");
  ASSERT_STREQ(nbc_cuda_error_name(34), "CUDA_ERROR_STUB_LIBRARY");
  ASSERT_STREQ(nbc_cuda_error_name(100), "CUDA_ERROR_NO_DEVICE");
  ASSERT_STREQ(nbc_cuda_error_name(999), "CUDA_ERROR_UNKNOWN");
  ASSERT(nbc_cuda_error_name(12345) == NULL);
  ASSERT(nbc_cuda_error_name(-1) == NULL);
}

TEST(no_cuinit_before_first_use) {
  /* Nothing is loaded until a call needs the driver. */
  ASSERT(nbc_driver_path() == NULL);
  int fixture = tdrv_present();
  if (fixture) ASSERT_EQ(tdrv()->calls("cuInit"), 0);
  REQUIRE_DRIVER();
  int n = 0;
  ASSERT_OK(nbc_device_count(&n));
  ASSERT(n >= 1);
  if (fixture) ASSERT_EQ(n, 2);
  if (fixture) ASSERT_EQ(tdrv()->calls("cuInit"), 1);
  ASSERT_OK(nbc_device_count(&n));
  if (fixture) ASSERT_EQ(tdrv()->calls("cuInit"), 1); /* once per process */
  if (getenv("NBCUDA_DRIVER"))
    ASSERT_STREQ(nbc_driver_path(), getenv("NBCUDA_DRIVER"));
  else
    ASSERT_CONTAINS(nbc_driver_path(), "libcuda.so");
  ASSERT(nbc_driver_init_error() == NULL);
}

TEST(driver_version) {
  REQUIRE_DRIVER();
  int v = 0;
  ASSERT_OK(nbc_driver_version(&v));
  ASSERT(v >= 12000); /* nbcuda needs a CUDA 12 or newer driver */
  ASSERT_EQ(v % 10, 0);
  if (tdrv_present()) ASSERT_EQ(v, 13000);
  ASSERT_STATUS(nbc_driver_version(NULL), NBC_INVALID_ARGUMENT);
}

TEST(driver_version_failure) {
  REQUIRE_TESTDRIVER();
  int v = 0;
  tdrv()->fail("cuDriverGetVersion", 1, 999);
  ASSERT_STATUS(nbc_driver_version(&v), NBC_DRIVER_ERROR);
  ASSERT_STREQ(nbc_last_error(), "cuDriverGetVersion: CUDA_ERROR_UNKNOWN (999)");
  ASSERT_EQ(nbc_last_driver_error(), 999);
  ASSERT_STREQ(nbc_last_driver_call(), "cuDriverGetVersion");
}

TEST(disabled) {
  setenv("NBCUDA_DRIVER", "0", 1);
  int n = -1;
  ASSERT_STATUS(nbc_device_count(&n), NBC_DRIVER_DISABLED);
  ASSERT_CONTAINS(nbc_last_error(), "CUDA is disabled");
  ASSERT_CONTAINS(nbc_last_error(), "NBCUDA_DRIVER=0");
  ASSERT_EQ(nbc_is_available(), 0);
  ASSERT(nbc_driver_path() == NULL);
  ASSERT_CONTAINS(nbc_driver_init_error(), "CUDA is disabled");
  nbc_stream_t *s = NULL;
  ASSERT_STATUS(nbc_stream_create(&s), NBC_DRIVER_DISABLED);
  ASSERT(s == NULL);
}

TEST(missing_path) {
  setenv("NBCUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  int n;
  ASSERT_STATUS(nbc_device_count(&n), NBC_NO_DRIVER);
  ASSERT_CONTAINS(nbc_last_error(), "/nonexistent/libcuda.so.1");
  ASSERT_CONTAINS(nbc_last_error(), "cannot be found");
  nbc_context_t *c;
  ASSERT_STATUS(nbc_current_context(-1, &c), NBC_NO_DRIVER);
}

TEST(not_a_driver) {
  /* A shared library that exists but is no driver: libm has no cuInit. */
  const char *libm = "/lib/x86_64-linux-gnu/libm.so.6";
  struct stat st;
  if (stat(libm, &st) != 0) SKIP("no libm at the Debian path");
  setenv("NBCUDA_DRIVER", libm, 1);
  int n;
  ASSERT_STATUS(nbc_device_count(&n), NBC_NO_DRIVER);
  ASSERT_CONTAINS(nbc_last_error(), "has no cuInit");
}

TEST(unloadable_file) {
  /* A file that exists but is not a shared object: dlopen's reason is reported. */
  setenv("NBCUDA_DRIVER", NBCUDA_SOURCE_DIR "/CMakeLists.txt", 1);
  int n;
  ASSERT_STATUS(nbc_device_count(&n), NBC_NO_DRIVER);
  ASSERT_CONTAINS(nbc_last_error(), "error occurred during load");
  ASSERT_CONTAINS(nbc_last_error(), "CMakeLists.txt");
}

TEST(toolkit_stub) {
  struct stat st;
  if (stat(STUB_LIBCUDA, &st) != 0) SKIP("no toolkit stub libcuda");
  setenv("NBCUDA_DRIVER", STUB_LIBCUDA, 1);
  int n;
  ASSERT_STATUS(nbc_device_count(&n), NBC_STUB_DRIVER);
  ASSERT_CONTAINS(nbc_last_error(), "Error at driver init: CUDA_ERROR_STUB_LIBRARY (34)");
  ASSERT_CONTAINS(nbc_last_error(), "stub library");
  ASSERT_CONTAINS(nbc_last_error(), STUB_LIBCUDA);
  ASSERT_EQ(nbc_last_driver_error(), 34);
  ASSERT_STREQ(nbc_last_driver_call(), "cuInit");
  ASSERT_EQ(nbc_is_available(), 0);
}

TEST(testdriver_stub_mode) {
  REQUIRE_TESTDRIVER();
  setenv("NBCUDA_TESTDRIVER_MODE", "stub", 1);
  int n;
  ASSERT_STATUS(nbc_device_count(&n), NBC_STUB_DRIVER);
  ASSERT_CONTAINS(nbc_last_error(), "CUDA_ERROR_STUB_LIBRARY (34)");
}

/* numba: the first failure says "Error at driver init: <desc>", later ones
 * "Error at driver init: \n<desc>:". */
TEST(first_and_later_init_failure_messages) {
  REQUIRE_TESTDRIVER();
  setenv("NBCUDA_TESTDRIVER_MODE", "initfail", 1);
  int n;
  ASSERT_STATUS(nbc_device_count(&n), NBC_INIT_FAILED);
  ASSERT_STREQ(nbc_last_error(), "Error at driver init: CUDA_ERROR_UNKNOWN (999)");
  ASSERT_STATUS(nbc_device_count(&n), NBC_INIT_FAILED);
  ASSERT_STREQ(nbc_last_error(), "Error at driver init: \nCUDA_ERROR_UNKNOWN (999):");
  ASSERT_STREQ(nbc_driver_init_error(), "CUDA_ERROR_UNKNOWN (999)");
  ASSERT_EQ(tdrv()->calls("cuInit"), 1); /* not retried */
}

TEST(no_device) {
  REQUIRE_TESTDRIVER();
  setenv("NBCUDA_TESTDRIVER_MODE", "nodevice", 1);
  int n;
  ASSERT_STATUS(nbc_device_count(&n), NBC_NO_DEVICE);
  ASSERT_STREQ(nbc_last_error(), "Error at driver init: CUDA_ERROR_NO_DEVICE (100)");
  nbc_stream_t *s;
  ASSERT_STATUS(nbc_stream_create(&s), NBC_NO_DEVICE);
  FILE *out = tmpfile();
  int any = 1;
  ASSERT_STATUS(nbc_detect(out, &any), NBC_NO_DEVICE);
  ASSERT_EQ(any, 0);
  fclose(out);
}

TEST(missing_entry_point_is_clear) {
  /* The fixture answers CUDA_ERROR_NOT_FOUND for cuGetProcAddress of an entry point when
   * told to fail it; nbcuda names the entry point. */
  REQUIRE_TESTDRIVER();
  tdrv()->fail("cuGetProcAddress", 1, 500);
  int n;
  nbc_status_t st = nbc_device_count(&n);
  ASSERT_STATUS(st, NBC_INIT_FAILED);
  ASSERT_CONTAINS(nbc_last_error(), "cuGetProcAddress(\"cuDriverGetVersion\"");
  ASSERT_CONTAINS(nbc_last_error(), "CUDA_ERROR_NOT_FOUND (500)");
}

static void *other_thread_error(void *arg) {
  (void)arg;
  nbc_event_t *e = NULL;
  static char copy[256];
  tdrv()->fail("cuEventCreate", 1, 2);
  nbc_status_t st = nbc_event_create(1, &e);
  snprintf(copy, sizeof copy, "%d %s", (int)st, nbc_last_error());
  return copy;
}

TEST(last_error_is_per_thread) {
  REQUIRE_TESTDRIVER();
  int v;
  tdrv()->fail("cuDriverGetVersion", 1, 999);
  ASSERT_STATUS(nbc_driver_version(&v), NBC_DRIVER_ERROR);
  pthread_t t;
  void *result;
  pthread_create(&t, NULL, other_thread_error, NULL);
  pthread_join(t, &result);
  char expected[128];
  snprintf(expected, sizeof expected, "%d cuEventCreate: CUDA_ERROR_OUT_OF_MEMORY (2)",
           (int)NBC_OUT_OF_MEMORY);
  ASSERT_STREQ((const char *)result, expected);
  ASSERT_STREQ(nbc_last_error(), "cuDriverGetVersion: CUDA_ERROR_UNKNOWN (999)");
}

static void *fresh_thread_error(void *arg) {
  (void)arg;
  static char copy[256];
  snprintf(copy, sizeof copy, "[%s][%s][%s][%d]", nbc_last_error(), nbc_last_driver_call(),
           nbc_last_driver_detail(), nbc_last_driver_error());
  return copy;
}

/* The record is allocated on a thread's first failure: before it, every reader says nothing. */
TEST(last_error_of_a_thread_without_failures_is_empty) {
  REQUIRE_TESTDRIVER();
  int v;
  tdrv()->fail("cuDriverGetVersion", 1, 999);
  ASSERT_STATUS(nbc_driver_version(&v), NBC_DRIVER_ERROR); /* this thread has a record now */
  pthread_t t;
  void *result;
  pthread_create(&t, NULL, fresh_thread_error, NULL);
  pthread_join(t, &result);
  ASSERT_STREQ((const char *)result, "[][][][0]");
}

TEST(fork_after_init) {
  REQUIRE_DRIVER();
  nbc_stream_t *s;
  ASSERT_OK(nbc_stream_create(&s));
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    nbc_stream_t *t = NULL;
    nbc_status_t st = nbc_stream_create(&t);
    int ok = st == NBC_FORKED && strstr(nbc_last_error(), "CUDA initialized before forking") &&
             nbc_last_driver_error() == 3;
    nbc_event_t *e;
    ok = ok && nbc_event_create(1, &e) == NBC_FORKED;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  nbc_stream_destroy(s);
}

TEST(fork_before_init_is_fine) {
  /* Only the child initialises; the parent checks the driver afterwards (a skip there on
   * a machine without a driver comes after the child has run). */
  int fixture = tdrv_present();
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    int n = 0;
    if (nbc_device_count(&n) != NBC_OK) _exit(fixture ? 1 : 2);
    _exit(n >= 1 && (!fixture || n == 2) ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT(WIFEXITED(status));
  if (WEXITSTATUS(status) == 2) {
    REQUIRE_DRIVER(); /* the driver cannot initialise here: skips */
    TEST_FAIL_("the child could not count devices but the parent can");
  }
  ASSERT_EQ(WEXITSTATUS(status), 0);
  REQUIRE_DRIVER();
  int n = 0;
  ASSERT_OK(nbc_device_count(&n)); /* the parent initialises after its child did */
  ASSERT(n >= 1);
}

TEST(legacy_stream_entry_points_by_default) {
  unsetenv("NBCUDA_PER_THREAD_DEFAULT_STREAM");
  unsetenv("NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM");
  REQUIRE_DRIVER();
  nbc_stream_t *s;
  ASSERT_OK(nbc_default_stream(&s));
  ASSERT_OK(nbc_stream_synchronize(s));
  ASSERT_EQ(nbc_driver_per_thread_default_stream(), 0);
  if (!tdrv_present()) return; /* which variant was called: only the fixture can tell */
  ASSERT_EQ(tdrv()->variant_calls("cuStreamSynchronize"), 1);
  ASSERT_EQ(tdrv()->variant_calls("cuStreamSynchronize_ptsz"), 0);
}

/* With the real driver the flag and working default-stream calls are checked here; that the
 * per-thread stream really is per thread is test_gpu.c's per_thread_default_stream. */
static void check_ptds(void) {
  REQUIRE_DRIVER();
  nbc_stream_t *s;
  ASSERT_OK(nbc_default_stream(&s));
  ASSERT_OK(nbc_stream_synchronize(s));
  ASSERT_OK(nbc_stream_query(s));
  ASSERT_EQ(nbc_driver_per_thread_default_stream(), 1);
  int fixture = tdrv_present();
  if (fixture) ASSERT_EQ(tdrv()->variant_calls("cuStreamSynchronize_ptsz"), 1);
  if (fixture) ASSERT_EQ(tdrv()->variant_calls("cuStreamSynchronize"), 0);
  if (fixture) ASSERT_EQ(tdrv()->variant_calls("cuStreamQuery_ptsz"), 1);
  nbc_devptr_t p;
  int x = 7, y = 0;
  ASSERT_OK(nbc_mem_alloc(sizeof x, &p));
  ASSERT_OK(nbc_memcpy_htod(p, &x, sizeof x));
  if (fixture) ASSERT_EQ(tdrv()->variant_calls("cuMemcpyHtoD_v2_ptds"), 1);
  ASSERT_OK(nbc_memcpy_dtoh(&y, p, sizeof y));
  ASSERT_EQ(y, 7);
  ASSERT_OK(nbc_mem_free(p));
}

TEST(per_thread_default_stream_nbcuda_variable) {
  setenv("NBCUDA_PER_THREAD_DEFAULT_STREAM", "1", 1);
  check_ptds();
}

TEST(per_thread_default_stream_numba_variable) {
  setenv("NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM", "1", 1);
  check_ptds();
}

TEST(per_thread_default_stream_other_values_ignored) {
  setenv("NBCUDA_PER_THREAD_DEFAULT_STREAM", "0", 1);
  REQUIRE_DRIVER();
  nbc_stream_t *s;
  ASSERT_OK(nbc_default_stream(&s));
  ASSERT_OK(nbc_stream_synchronize(s));
  ASSERT_EQ(nbc_driver_per_thread_default_stream(), 0);
  if (tdrv_present()) ASSERT_EQ(tdrv()->variant_calls("cuStreamSynchronize_ptsz"), 0);
}

static void *concurrent_first_use(void *arg) {
  (void)arg;
  int n = 0;
  return (void *)(intptr_t)(nbc_device_count(&n) == NBC_OK ? n : -1);
}

TEST(concurrent_first_use_inits_once) {
  /* Whether the driver works is asked in a child, so that the 16 threads really are the
   * first users of nbcuda in this process. */
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    REQUIRE_DRIVER();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 77) SKIP("needs a working CUDA driver");
  pthread_t t[16];
  for (int i = 0; i < 16; i++)
    pthread_create(&t[i], NULL, concurrent_first_use, NULL);
  int first = 0;
  for (int i = 0; i < 16; i++) {
    void *n;
    pthread_join(t[i], &n);
    ASSERT((intptr_t)n >= 1);
    if (i == 0) first = (int)(intptr_t)n;
    ASSERT_EQ((intptr_t)n, first); /* every thread sees the same, fully built list */
  }
  if (tdrv_present()) {
    ASSERT_EQ(first, 2);
    ASSERT_EQ(tdrv()->calls("cuInit"), 1);
  }
}

TEST_LIST(X(status_names_and_strings) X(cuda_error_names) X(no_cuinit_before_first_use)
              X(driver_version) X(driver_version_failure) X(disabled) X(missing_path)
                  X(not_a_driver) X(unloadable_file) X(toolkit_stub) X(testdriver_stub_mode)
                      X(first_and_later_init_failure_messages) X(no_device)
                          X(missing_entry_point_is_clear) X(last_error_is_per_thread) X(last_error_of_a_thread_without_failures_is_empty)
                              X(fork_after_init) X(fork_before_init_is_fine)
                                  X(legacy_stream_entry_points_by_default)
                                      X(per_thread_default_stream_nbcuda_variable)
                                          X(per_thread_default_stream_numba_variable)
                                              X(per_thread_default_stream_other_values_ignored)
                                                  X(concurrent_first_use_inits_once))
TEST_MAIN()
