/* test_host_cli.c — the nbcuda command-line tool: `detect` (report, exit 0 / 1 with one clear
 * stderr line), `detect --json`, `version`, `--help`, usage errors (exit 2). Runs the built
 * binary (NBCUDA_BINARY_DIR/nbcuda) as a child process with the environment of each case.
 *
 * The child sees the same driver as this process, so against the real driver (GPU machine)
 * the expected report is built from what the library itself reads (device names, compute
 * capabilities, the driver version); cases that configure the test driver through its
 * NBCUDA_TESTDRIVER_* variables need the fixture.
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "nbcuda.h"
#include "test.h"
#include "testdriver.h"

#define CLI NBCUDA_BINARY_DIR "/nbcuda"

typedef struct run_result {
  int code;
  char out[16384];
  char err[4096];
} run_result;

static void slurp(int fd, char *buf, size_t size) {
  lseek(fd, 0, SEEK_SET);
  ssize_t n = read(fd, buf, size - 1);
  buf[n > 0 ? n : 0] = '\0';
  close(fd);
}

/* Runs the CLI with args (NULL-terminated) after setting env "NAME=value" entries. */
static run_result *run(const char *const *env, const char *const *args) {
  static run_result r;
  struct stat st;
  if (stat(CLI, &st) != 0) SKIP("the nbcuda CLI is not built");
  char out_path[] = "/tmp/nbc_cli_outXXXXXX", err_path[] = "/tmp/nbc_cli_errXXXXXX";
  int out = mkstemp(out_path), err = mkstemp(err_path);
  unlink(out_path);
  unlink(err_path);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    for (const char *const *e = env; e && *e; e++)
      putenv((char *)*e);
    dup2(out, 1);
    dup2(err, 2);
    char *argv[16];
    int n = 0;
    argv[n++] = (char *)CLI;
    for (const char *const *a = args; *a && n < 15; a++)
      argv[n++] = (char *)*a;
    argv[n] = NULL;
    execv(CLI, argv);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  slurp(out, r.out, sizeof r.out);
  slurp(err, r.err, sizeof r.err);
  return &r;
}

static int count_lines(const char *s) {
  int n = 0;
  for (; *s; s++)
    n += *s == '\n';
  return n;
}

/* What `detect` must report for the driver this process sees: the device count, the number
 * of supported devices (compute capability >= 3.5), device 0's name and compute capability.
 * Against the fixture the values are pinned as well, so a library that misreads them fails. */
typedef struct expected_devices {
  int count, supported, major0, minor0;
  char name0[256];
} expected_devices;

static expected_devices *expected(void) {
  static expected_devices e;
  REQUIRE_DRIVER();
  ASSERT_OK(nbc_device_count(&e.count));
  for (int i = 0; i < e.count; i++) {
    nbc_device_t *d;
    int major, minor;
    ASSERT_OK(nbc_device_get(i, &d));
    nbc_device_compute_capability(d, &major, &minor);
    e.supported += major > 3 || (major == 3 && minor >= 5);
    if (i == 0) {
      e.major0 = major;
      e.minor0 = minor;
      snprintf(e.name0, sizeof e.name0, "%s", nbc_device_name(d));
    }
  }
  if (tdrv_present()) {
    ASSERT_EQ(e.count, 2);
    ASSERT_EQ(e.supported, 2);
    ASSERT_STREQ(e.name0, "nbcuda test device 0");
  }
  return &e;
}

TEST(detect_ok) {
  expected_devices *e = expected();
  if (!e->supported) SKIP("no supported device: detect exits 1 (detect_none_supported)");
  const char *args[] = {"detect", NULL};
  run_result *r = run(NULL, args);
  ASSERT_EQ(r->code, 0);
  char head[512], summary[128];
  snprintf(head, sizeof head, "Found %d CUDA devices\nid 0    %20s ", e->count, e->name0);
  ASSERT(strncmp(r->out, head, strlen(head)) == 0);
  snprintf(summary, sizeof summary, "Summary:\n\t%d/%d devices are supported\n", e->supported,
           e->count);
  ASSERT_CONTAINS(r->out, summary);
  ASSERT_STREQ(r->err, "");
}

TEST(detect_unsupported_devices) {
  REQUIRE_TESTDRIVER();
  const char *env[] = {"NBCUDA_TESTDRIVER_CC=3.0", NULL};
  const char *args[] = {"detect", NULL};
  run_result *r = run(env, args);
  ASSERT_EQ(r->code, 1);
  ASSERT_CONTAINS(r->out, "[NOT SUPPORTED: CC < 3.5]");
  ASSERT_STREQ(r->err, "nbcuda detect: no supported CUDA device\n");
}

TEST(detect_no_device) {
  REQUIRE_TESTDRIVER();
  const char *env[] = {"NBCUDA_TESTDRIVER_MODE=nodevice", NULL};
  const char *args[] = {"detect", NULL};
  run_result *r = run(env, args);
  ASSERT_EQ(r->code, 1);
  ASSERT_STREQ(r->out, "");
  ASSERT_EQ(count_lines(r->err), 1);
  ASSERT_CONTAINS(r->err, "no CUDA-capable device is available");
  ASSERT_CONTAINS(r->err, "CUDA_ERROR_NO_DEVICE (100)");
}

TEST(detect_no_driver) {
  const char *env[] = {"NBCUDA_DRIVER=/nonexistent/libcuda.so.1", NULL};
  const char *args[] = {"detect", NULL};
  run_result *r = run(env, args);
  ASSERT_EQ(r->code, 1);
  ASSERT_EQ(count_lines(r->err), 1);
  ASSERT_CONTAINS(r->err, "nbcuda detect: ");
  ASSERT_CONTAINS(r->err, "/nonexistent/libcuda.so.1");
}

TEST(detect_stub_driver) {
  struct stat st;
  if (stat("/usr/local/cuda/lib64/stubs/libcuda.so", &st) != 0) SKIP("no stub libcuda");
  const char *env[] = {"NBCUDA_DRIVER=/usr/local/cuda/lib64/stubs/libcuda.so", NULL};
  const char *args[] = {"detect", NULL};
  run_result *r = run(env, args);
  ASSERT_EQ(r->code, 1);
  ASSERT_EQ(count_lines(r->err), 1);
  ASSERT_CONTAINS(r->err, "CUDA_ERROR_STUB_LIBRARY (34)");
  ASSERT_CONTAINS(r->err, "stub library");
}

TEST(detect_disabled) {
  const char *env[] = {"NBCUDA_DRIVER=0", NULL};
  const char *args[] = {"detect", NULL};
  run_result *r = run(env, args);
  ASSERT_EQ(r->code, 1);
  ASSERT_EQ(count_lines(r->err), 1);
  ASSERT_CONTAINS(r->err, "CUDA is disabled");
}

/* "[13, 0]" for the driver this process sees (13000 on the fixture). */
static const char *driver_version_json(void) {
  static char text[32];
  int v = 0;
  ASSERT_OK(nbc_driver_version(&v));
  if (tdrv_present()) ASSERT_EQ(v, 13000);
  snprintf(text, sizeof text, "[%d, %d]", v / 1000, (v % 1000) / 10);
  return text;
}

TEST(detect_json) {
  expected_devices *e = expected();
  if (!e->supported) SKIP("no supported device: detect exits 1");
  const char *args[] = {"detect", "--json", NULL};
  run_result *r = run(NULL, args);
  ASSERT_EQ(r->code, 0);
  ASSERT(strncmp(r->out, "{\"driver\": \"", 12) == 0);
  char want[512];
  snprintf(want, sizeof want, "\"driver_version\": %s", driver_version_json());
  ASSERT_CONTAINS(r->out, want);
  snprintf(want, sizeof want, "{\"id\": 0, \"name\": \"%s\", \"uuid\": \"GPU-", e->name0);
  ASSERT_CONTAINS(r->out, want);
  snprintf(want, sizeof want, "\"compute_capability\": [%d, %d], \"supported\": true}",
           e->major0, e->minor0);
  ASSERT_CONTAINS(r->out, want);
  snprintf(want, sizeof want, "\"supported\": %d}\n", e->supported);
  ASSERT_CONTAINS(r->out, want);
  ASSERT_EQ(count_lines(r->out), 1);
}

TEST(detect_json_no_driver) {
  const char *env[] = {"NBCUDA_DRIVER=0", NULL};
  const char *args[] = {"detect", "--json", NULL};
  run_result *r = run(env, args);
  ASSERT_EQ(r->code, 1);
  ASSERT(strncmp(r->out, "{\"error\": \"CUDA is disabled", 27) == 0);
  ASSERT_CONTAINS(r->out, "\"status\": \"NBC_DRIVER_DISABLED\"}");
  ASSERT_EQ(count_lines(r->err), 1);
}

TEST(detect_bad_option) {
  const char *args[] = {"detect", "--yaml", NULL};
  run_result *r = run(NULL, args);
  ASSERT_EQ(r->code, 2);
  ASSERT_STREQ(r->err, "nbcuda detect: unknown option '--yaml'\n");
}

TEST(version) {
  REQUIRE_DRIVER();
  const char *args[] = {"version", NULL};
  run_result *r = run(NULL, args);
  ASSERT_EQ(r->code, 0);
  ASSERT(strncmp(r->out, "nbcuda " NBC_VERSION_STRING "\n",
                 strlen("nbcuda " NBC_VERSION_STRING "\n")) == 0);
  int v = 0;
  ASSERT_OK(nbc_driver_version(&v));
  if (tdrv_present()) ASSERT_EQ(v, 13000);
  char want[64];
  snprintf(want, sizeof want, "CUDA driver %d.%d (", v / 1000, (v % 1000) / 10);
  ASSERT_CONTAINS(r->out, want);
  ASSERT_CONTAINS(r->out, "CUDA runtime ");
}

TEST(version_without_driver) {
  const char *env[] = {"NBCUDA_DRIVER=0", NULL};
  const char *args[] = {"version", NULL};
  run_result *r = run(env, args);
  ASSERT_EQ(r->code, 0);
  ASSERT_CONTAINS(r->out, "CUDA driver: unavailable (CUDA is disabled");
}

TEST(help) {
  const char *args[] = {"--help", NULL};
  run_result *r = run(NULL, args);
  ASSERT_EQ(r->code, 0);
  ASSERT(strncmp(r->out, "usage: nbcuda <command>", 23) == 0);
  ASSERT_CONTAINS(r->out, "detect [--json]");
  ASSERT_CONTAINS(r->out, "version");
  ASSERT_CONTAINS(r->out, "compile");
  const char *short_args[] = {"-h", NULL};
  ASSERT_EQ(run(NULL, short_args)->code, 0);
}

TEST(usage_errors) {
  const char *args[] = {"frobnicate", NULL};
  run_result *r = run(NULL, args);
  ASSERT_EQ(r->code, 2);
  ASSERT_STREQ(r->err, "nbcuda: unknown command 'frobnicate' (try nbcuda --help)\n");
  const char *none[] = {NULL};
  r = run(NULL, none);
  ASSERT_EQ(r->code, 2);
  ASSERT_CONTAINS(r->err, "usage: nbcuda");
}

TEST_LIST(X(detect_ok) X(detect_unsupported_devices) X(detect_no_device) X(detect_no_driver)
              X(detect_stub_driver) X(detect_disabled) X(detect_json) X(detect_json_no_driver)
                  X(detect_bad_option) X(version) X(version_without_driver) X(help)
                      X(usage_errors))
TEST_MAIN()
