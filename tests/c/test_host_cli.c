/* test_host_cli.c — the nbcuda command-line tool: `detect` (report, exit 0 / 1 with one clear
 * stderr line), `detect --json`, `info`, `info --json`, `version`, `-V`, `--help` of the tool
 * and of each command, usage errors (exit 2, one line with a hint, the same in every
 * command). Runs the built binary (NBCUDA_BINARY_DIR/nbcuda) as a child process with the
 * environment of each case.
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
  ASSERT_STREQ(r->err, "nbcuda detect: unknown option '--yaml' (try nbcuda detect --help)\n");
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
  ASSERT(strncmp(r->out, "usage: nbcuda [-h | --help] [-V | --version] <command>", 53) == 0);
  ASSERT_CONTAINS(r->out, "info [--json]");
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
  ASSERT_STREQ(r->err, "nbcuda: no command given (try nbcuda --help)\n");
  ASSERT_STREQ(r->out, "");
}

/* An unknown option is refused the same way by the tool and by every command: exit 2, one
 * line naming the option and the command's --help, nothing on stdout. */
TEST(unknown_option_every_command) {
  static const char *const commands[] = {NULL, "detect", "info", "version", "compile"};
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
    const char *with[] = {commands[i], "--frob", NULL};
    const char *const *args = commands[i] ? with : with + 1;
    char want[128];
    const char *sp = commands[i] ? " " : "", *name = commands[i] ? commands[i] : "";
    run_result *r = run(NULL, args);
    ASSERT_EQ(r->code, 2);
    snprintf(want, sizeof want, "nbcuda%s%s: unknown option '--frob' (try nbcuda%s%s --help)\n",
             sp, name, sp, name);
    ASSERT_STREQ(r->err, want);
    ASSERT_STREQ(r->out, "");
    const char *short_with[] = {commands[i], "-q", NULL};
    r = run(NULL, commands[i] ? short_with : short_with + 1);
    ASSERT_EQ(r->code, 2);
    snprintf(want, sizeof want, "nbcuda%s%s: unknown option '-q' (try nbcuda%s%s --help)\n",
             sp, name, sp, name);
    ASSERT_STREQ(r->err, want);
  }
}

/* Values: a flag given one, an option missing its own, a stray operand. */
TEST(option_value_errors) {
  const char *flag_value[] = {"info", "--json=yes", NULL};
  run_result *r = run(NULL, flag_value);
  ASSERT_EQ(r->code, 2);
  ASSERT_STREQ(r->err, "nbcuda info: option '--json' takes no value (try nbcuda info --help)\n");
  const char *missing[] = {"compile", "f.py:f", "--sig", NULL};
  r = run(NULL, missing);
  ASSERT_EQ(r->code, 2);
  ASSERT_STREQ(r->err,
               "nbcuda compile: option '--sig' needs a value (try nbcuda compile --help)\n");
  const char *missing_short[] = {"compile", "f.py:f", "-o", NULL};
  r = run(NULL, missing_short);
  ASSERT_EQ(r->code, 2);
  ASSERT_STREQ(r->err, "nbcuda compile: option '-o' needs a value (try nbcuda compile --help)\n");
  const char *stray[] = {"detect", "now", NULL};
  r = run(NULL, stray);
  ASSERT_EQ(r->code, 2);
  ASSERT_STREQ(r->err, "nbcuda detect: unexpected argument 'now' (try nbcuda detect --help)\n");
  const char *bad_value[] = {"compile", "f.py:f", "--sig", "(int64,)", "--cc", "nine", NULL};
  r = run(NULL, bad_value);
  ASSERT_EQ(r->code, 2);
  ASSERT_EQ(count_lines(r->err), 1);
  ASSERT_CONTAINS(r->err, "nbcuda compile: --cc expects M.m");
  ASSERT_CONTAINS(r->err, "not 'nine' (try nbcuda compile --help)\n");
}

/* -V and --version are the version command. */
TEST(version_option) {
  const char *version[] = {"version", NULL};
  run_result *r = run(NULL, version);
  ASSERT_EQ(r->code, 0);
  char want[sizeof r->out];
  snprintf(want, sizeof want, "%s", r->out);
  ASSERT(strncmp(want, "nbcuda " NBC_VERSION_STRING "\n", 7 + strlen(NBC_VERSION_STRING)) == 0);
  const char *short_form[] = {"-V", NULL};
  r = run(NULL, short_form);
  ASSERT_EQ(r->code, 0);
  ASSERT_STREQ(r->out, want);
  const char *long_form[] = {"--version", NULL};
  r = run(NULL, long_form);
  ASSERT_EQ(r->code, 0);
  ASSERT_STREQ(r->out, want);
}

/* Each command's --help (and -h): its own usage on stdout, exit 0. */
TEST(command_help) {
  static const char *const commands[] = {"detect", "info", "version", "compile"};
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
    char want[64];
    snprintf(want, sizeof want, "usage: nbcuda %s", commands[i]);
    const char *args[] = {commands[i], "--help", NULL};
    run_result *r = run(NULL, args);
    ASSERT_EQ(r->code, 0);
    ASSERT(strncmp(r->out, want, strlen(want)) == 0);
    ASSERT_STREQ(r->err, "");
    const char *short_args[] = {commands[i], "-h", NULL};
    r = run(NULL, short_args);
    ASSERT_EQ(r->code, 0);
    ASSERT(strncmp(r->out, want, strlen(want)) == 0);
  }
}

/* The line `info` prints for a library found: name, version, path, as nbc_library_find
 * reports them in this process (which sees the same environment). */
static void expect_library_line(const char *out, nbc_library_t library) {
  const char *path = NULL;
  int major = -1, minor = -1;
  if (nbc_library_find(library, &path, &major, &minor) != NBC_OK) return;
  char version[32] = "-", want[4400];
  if (major >= 0) snprintf(version, sizeof version, "%d.%d", major, minor);
  snprintf(want, sizeof want, "\n  %-13s %-6s %s\n", nbc_library_name(library), version, path);
  ASSERT_CONTAINS(out, want);
}

TEST(info) {
  expected_devices *e = expected();
  const char *args[] = {"info", NULL};
  run_result *r = run(NULL, args);
  ASSERT_EQ(r->code, 0);
  ASSERT_STREQ(r->err, "");
  ASSERT(strncmp(r->out, "nbcuda " NBC_VERSION_STRING "\n\nlibraries:\n",
                 strlen("nbcuda " NBC_VERSION_STRING "\n\nlibraries:\n")) == 0);
  for (int i = 0; i < NBC_LIBRARY_COUNT_; i++) expect_library_line(r->out, (nbc_library_t)i);
  char want[512];
  snprintf(want, sizeof want, "\ndevices: %d\n  0  %s  compute capability %d.%d  GPU-",
           e->count, e->name0, e->major0, e->minor0);
  ASSERT_CONTAINS(r->out, want);
  snprintf(want, sizeof want, "\n  NBCUDA_DRIVER=%s\n", getenv("NBCUDA_DRIVER"));
  if (getenv("NBCUDA_DRIVER")) ASSERT_CONTAINS(r->out, want);
  if (tdrv_present()) ASSERT_CONTAINS(r->out, "\n  libcuda       13.0   ");
}

/* Libraries that cannot be found are reported with the reason, and info still succeeds. */
TEST(info_not_found) {
  const char *env[] = {"NBCUDA_NVVM=/nonexistent/libnvvm.so", "NBCUDA_NVJITLINK=/nonexistent/j.so",
                       "NBCUDA_DRIVER=0", NULL};
  const char *args[] = {"info", NULL};
  run_result *r = run(env, args);
  ASSERT_EQ(r->code, 0);
  ASSERT_CONTAINS(r->out, "\n  libcuda       unavailable: CUDA is disabled due to setting "
                          "NBCUDA_DRIVER=0 in the environment\n");
  ASSERT_CONTAINS(r->out, "\n  libNVVM       unavailable: libNVVM cannot be found or loaded; "
                          "searched:\n      - /nonexistent/libnvvm.so (NBCUDA_NVVM: no such file)\n");
  ASSERT_CONTAINS(r->out, "\n  nvJitLink     unavailable: nvJitLink cannot be found or loaded "
                          "(searched NBCUDA_NVJITLINK=/nonexistent/j.so)\n");
  ASSERT_CONTAINS(r->out, "\ndevices: none (libcuda is unavailable)\n");
  ASSERT_CONTAINS(r->out, "\n  NBCUDA_NVVM=/nonexistent/libnvvm.so\n");
  ASSERT_CONTAINS(r->out, "\n  NBCUDA_DRIVER=0\n");
}

TEST(info_json) {
  expected_devices *e = expected();
  const char *args[] = {"info", "--json", NULL};
  run_result *r = run(NULL, args);
  ASSERT_EQ(r->code, 0);
  ASSERT_EQ(count_lines(r->out), 1);
  ASSERT(strncmp(r->out, "{\"nbcuda\": \"" NBC_VERSION_STRING "\", \"libraries\": {\"libcuda\": ",
                 strlen("{\"nbcuda\": \"" NBC_VERSION_STRING "\", \"libraries\": {\"libcuda\": ")) == 0);
  char want[512];
  snprintf(want, sizeof want, "\"devices\": [{\"id\": 0, \"name\": \"%s\", \"uuid\": \"GPU-",
           e->name0);
  ASSERT_CONTAINS(r->out, want);
  const char *path = NULL;
  int major, minor;
  if (nbc_library_find(NBC_LIBRARY_NVVM, &path, &major, &minor) == NBC_OK) {
    snprintf(want, sizeof want, "\"libNVVM\": {\"path\": \"%s\", \"version\": [%d, %d]}", path,
             major, minor);
    ASSERT_CONTAINS(r->out, want);
  }
  if (nbc_library_find(NBC_LIBRARY_LIBDEVICE, &path, NULL, NULL) == NBC_OK) {
    snprintf(want, sizeof want, "\"libdevice\": {\"path\": \"%s\", \"version\": null}", path);
    ASSERT_CONTAINS(r->out, want);
  }
  ASSERT_CONTAINS(r->out, "\"environment\": {");
}

TEST(info_json_not_found) {
  const char *env[] = {"NBCUDA_NVVM=/nonexistent", "NBCUDA_DRIVER=0", NULL};
  const char *args[] = {"info", "--json", NULL};
  run_result *r = run(env, args);
  ASSERT_EQ(r->code, 0);
  ASSERT_CONTAINS(r->out, "\"libcuda\": {\"path\": null, \"error\": \"CUDA is disabled");
  ASSERT_CONTAINS(r->out, "\"status\": \"NBC_DRIVER_DISABLED\"}");
  ASSERT_CONTAINS(r->out, "\"libNVVM\": {\"path\": null, \"error\": \"libNVVM cannot be found "
                          "or loaded; searched:\\n  - /nonexistent (NBCUDA_NVVM: no such file)\\n");
  ASSERT_CONTAINS(r->out, "\"status\": \"NBC_NO_NVVM\"}");
  ASSERT_CONTAINS(r->out, "\"devices\": [], ");
  ASSERT_CONTAINS(r->out, "\"NBCUDA_NVVM\": \"/nonexistent\"");
}

TEST_LIST(X(detect_ok) X(detect_unsupported_devices) X(detect_no_device) X(detect_no_driver)
              X(detect_stub_driver) X(detect_disabled) X(detect_json) X(detect_json_no_driver)
                  X(detect_bad_option) X(version) X(version_without_driver) X(help)
                      X(usage_errors) X(unknown_option_every_command) X(option_value_errors)
                          X(version_option) X(command_help) X(info) X(info_not_found)
                              X(info_json) X(info_json_not_found))
TEST_MAIN()
