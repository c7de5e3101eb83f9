/* test_public_tools.c — the public entries the CLI is built on (tools/ includes only
 * nbcuda.h): nbc_compile_trace (a compile timed phase by phase, or stopped after a phase to
 * return its printed output), nbc_compile_phase_name, and nbc_detect_json. The CLI's own
 * output is tested in test_host_cli.c and tests/c/cli_compile.cmake.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "nbcuda.h"
#include "test.h"
#include "testdriver.h"

static const char source[] = "def add(a, b):\n    return a + b\n";

TEST(phase_names) {
  static const char *const names[] = {"load", "signature", "infer", "lower", "nvvm"};
  for (int p = 0; p < NBC_COMPILE_PHASE_COUNT; p++) ASSERT_STREQ(nbc_compile_phase_name(p), names[p]);
  ASSERT(nbc_compile_phase_name(-1) == NULL);
  ASSERT(nbc_compile_phase_name(NBC_COMPILE_PHASE_COUNT) == NULL);
}

/* Stopped after typing: the code is the printed types, and libNVVM's phase took no time. */
TEST(trace_stops_after_a_phase) {
  nbc_source_t src = {source, 0, "add.py", 1, 0};
  nbc_compile_trace_t trace = {.stop_after = NBC_DUMP_TYPES};
  trace.ms[NBC_COMPILE_PHASE_COUNT - 1] = -1;
  nbc_compile_result_t *r = NULL;
  ASSERT_OK(nbc_compile_trace(&src, "add", "float32(float32, float32)", NULL, NULL, &trace, &r));
  size_t n = 0;
  const char *code = nbc_compile_result_code(r, &n);
  ASSERT(n > 0);
  ASSERT_CONTAINS(code, "float32");
  ASSERT(strstr(code, ".version") == NULL); /* no PTX */
  ASSERT(trace.ms[0] >= 0);
  ASSERT(trace.ms[NBC_COMPILE_PHASE_COUNT - 1] == 0); /* libNVVM did not run */
  nbc_compile_result_destroy(r);
}

/* Without a stop, a full compile (when libNVVM is here), each phase timed. */
TEST(trace_times_a_full_compile) {
  struct stat st;
  if (stat("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc", &st) != 0) SKIP("no CUDA toolkit");
  nbc_source_t src = {source, 0, "add.py", 1, 0};
  nbc_compile_trace_t trace = {.stop_after = NBC_DUMP_NONE};
  nbc_compile_result_t *r = NULL;
  ASSERT_OK(nbc_compile_trace(&src, "add", "float32(float32, float32)", NULL, NULL, &trace, &r));
  ASSERT_CONTAINS(nbc_compile_result_code(r, NULL), ".version");
  ASSERT(trace.ms[NBC_COMPILE_PHASE_COUNT - 1] > 0);
  nbc_compile_result_destroy(r);
}

TEST(trace_rejects_an_unknown_stop) {
  nbc_source_t src = {source, 0, "add.py", 1, 0};
  nbc_compile_trace_t trace = {.stop_after = (nbc_dump_t)99};
  nbc_compile_result_t *r = NULL;
  ASSERT_STATUS(nbc_compile_trace(&src, "add", "float32(float32, float32)", NULL, NULL, &trace, &r),
                NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "99 is no nbc_dump_t");
}

TEST(detect_json_arguments_and_failure) {
  ASSERT_STATUS(nbc_detect_json(NULL, NULL), NBC_INVALID_ARGUMENT);
  setenv("NBCUDA_DRIVER", "0", 1);
  char buf[4096] = "";
  FILE *out = fmemopen(buf, sizeof buf, "w");
  ASSERT(out != NULL);
  int any = 1;
  ASSERT_STATUS(nbc_detect_json(out, &any), NBC_DRIVER_DISABLED);
  fclose(out);
  ASSERT_EQ(any, 0);
  ASSERT(strncmp(buf, "{\"error\": \"CUDA is disabled", 27) == 0);
  ASSERT_CONTAINS(buf, "\"status\": \"NBC_DRIVER_DISABLED\"}\n");
  ASSERT_CONTAINS(nbc_last_error(), "NBCUDA_DRIVER=0");
}

TEST(detect_json_lists_the_devices) {
  REQUIRE_DRIVER();
  char buf[8192] = "";
  FILE *out = fmemopen(buf, sizeof buf, "w");
  ASSERT(out != NULL);
  int any = 0, count = 0;
  ASSERT_OK(nbc_detect_json(out, &any));
  fclose(out);
  ASSERT_OK(nbc_device_count(&count));
  ASSERT(strncmp(buf, "{\"driver\": \"", 12) == 0);
  ASSERT_CONTAINS(buf, "{\"id\": 0, \"name\": \"");
  ASSERT_EQ(any, count > 0);
}

TEST_LIST(X(phase_names) X(trace_stops_after_a_phase) X(trace_times_a_full_compile)
              X(trace_rejects_an_unknown_stop) X(detect_json_arguments_and_failure)
                  X(detect_json_lists_the_devices))
TEST_MAIN()
