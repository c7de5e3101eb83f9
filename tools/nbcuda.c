/* nbcuda.c — main() of the nbcuda command-line tool: `detect`, `detect --json`, `version`,
 * `--help`, and dispatch of `compile` to tools/cmd_compile.c.
 *
 * Exit codes: 0 success; 1 the operation failed (for detect: no supported device, or no
 * usable driver, with one line on stderr saying why); 2 usage errors (unknown subcommand or
 * option).
 *
 * `detect` prints numba's cuda.detect() report (nbc_detect). `detect --json` prints the same
 * facts as one JSON object: {"driver": ..., "driver_version": ..., "devices": [...],
 * "supported": N} or, when CUDA is unusable, {"error": ..., "status": ...} with exit code 1.
 */
#include <stdio.h>
#include <string.h>

#include "nbcuda.h"
#include "cli.h"

/* Used until tools/cmd_compile.c (another part of the project) is linked in. */
__attribute__((weak)) int nbc__cli_compile(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "nbcuda compile: not built\n");
  return 2;
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: nbcuda <command> [options]\n"
          "\n"
          "Numba's CUDA host API and Python-kernel compiler, in C.\n"
          "\n"
          "commands:\n"
          "  detect [--json]   list the CUDA devices as numba.cuda.detect() does; exit 0 if a\n"
          "                    supported device exists, 1 otherwise\n"
          "  compile ...       compile a Python function to PTX or LTO-IR (nbcuda compile --help)\n"
          "  version           print the versions of nbcuda, the CUDA driver and runtime\n"
          "  --help, -h        print this help\n"
          "\n"
          "environment: NBCUDA_DRIVER (path of libcuda, 0 disables CUDA),\n"
          "             NBCUDA_PER_THREAD_DEFAULT_STREAM=1\n");
}

/* Writes s as a JSON string literal. */
static void json_string(FILE *out, const char *s) {
  fputc('"', out);
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(out, "\\%c", c);
    else if (c == '\n')
      fputs("\\n", out);
    else if (c == '\t')
      fputs("\\t", out);
    else if (c < 0x20)
      fprintf(out, "\\u%04x", c);
    else
      fputc(c, out);
  }
  fputc('"', out);
}

static void fail_line(const char *command, nbc_status_t st) {
  /* One line: the message may hold numba's "\n...:" later-failure form. */
  char line[2048];
  snprintf(line, sizeof line, "%s", nbc_last_error());
  for (char *p = line; *p; p++)
    if (*p == '\n') *p = ' ';
  fprintf(stderr, "nbcuda %s: %s: %s\n", command, nbc_status_string(st), line);
}

static int detect_json(void) {
  int count = 0;
  nbc_status_t st = nbc_device_count(&count);
  if (st != NBC_OK) {
    printf("{\"error\": ");
    json_string(stdout, nbc_last_error());
    printf(", \"status\": ");
    json_string(stdout, nbc_status_name(st));
    printf("}\n");
    fail_line("detect", st);
    return 1;
  }
  int version = 0, supported = 0;
  nbc_driver_version(&version);
  printf("{\"driver\": ");
  json_string(stdout, nbc_driver_path());
  printf(", \"driver_version\": [%d, %d], \"devices\": [", version / 1000,
         (version % 1000) / 10);
  for (int i = 0; i < count; i++) {
    nbc_device_t *d;
    if ((st = nbc_device_get(i, &d)) != NBC_OK) {
      fail_line("detect", st);
      return 1;
    }
    int major, minor;
    nbc_device_compute_capability(d, &major, &minor);
    int ok = major > 3 || (major == 3 && minor >= 5);
    supported += ok;
    printf("%s{\"id\": %d, \"name\": ", i ? ", " : "", nbc_device_id(d));
    json_string(stdout, nbc_device_name(d));
    printf(", \"uuid\": ");
    json_string(stdout, nbc_device_uuid(d));
    printf(", \"compute_capability\": [%d, %d], \"supported\": %s}", major, minor,
           ok ? "true" : "false");
  }
  printf("], \"supported\": %d}\n", supported);
  if (!supported) {
    fprintf(stderr, "nbcuda detect: no supported CUDA device (%d found)\n", count);
    return 1;
  }
  return 0;
}

static int cmd_detect(int argc, char **argv) {
  int json = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) {
      json = 1;
    } else {
      fprintf(stderr, "nbcuda detect: unknown option '%s'\n", argv[i]);
      return 2;
    }
  }
  if (json) return detect_json();
  int any = 0;
  nbc_status_t st = nbc_detect(stdout, &any);
  if (st != NBC_OK) {
    fail_line("detect", st);
    return 1;
  }
  if (!any) {
    fprintf(stderr, "nbcuda detect: no supported CUDA device\n");
    return 1;
  }
  return 0;
}

static int cmd_version(void) {
  printf("nbcuda %s\n", nbc_version_string());
  int version = 0;
  if (nbc_driver_version(&version) == NBC_OK)
    printf("CUDA driver %d.%d (%s)\n", version / 1000, (version % 1000) / 10,
           nbc_driver_path());
  else
    printf("CUDA driver: unavailable (%s)\n", nbc_last_error());
  int major, minor;
  nbc_runtime_source_t source;
  if (nbc_runtime_get_version(&major, &minor, &source) == NBC_OK)
    printf("CUDA runtime %d.%d (from %s)\n", major, minor,
           source == NBC_RUNTIME_CUDART  ? "libcudart"
           : source == NBC_RUNTIME_NVRTC ? "NVRTC"
                                         : "libNVVM");
  else
    printf("CUDA runtime: unavailable (%s)\n", nbc_last_error());
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *command = argv[1];
  if (strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0 ||
      strcmp(command, "help") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(command, "detect") == 0) return cmd_detect(argc - 1, argv + 1);
  if (strcmp(command, "version") == 0 || strcmp(command, "--version") == 0) return cmd_version();
  if (strcmp(command, "compile") == 0) return nbc__cli_compile(argc - 1, argv + 1);
  fprintf(stderr, "nbcuda: unknown command '%s' (try nbcuda --help)\n", command);
  return 2;
}
