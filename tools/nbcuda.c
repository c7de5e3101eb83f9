/* nbcuda.c — main() of the nbcuda command-line tool: `detect`, `detect --json`, `info`,
 * `info --json`, `version`, `--help`, `--version`, and dispatch of `compile` to
 * tools/cmd_compile.c.
 *
 * Options are parsed by getopt_long, at the top level up to the command word (so that the
 * command's options are left to it) and then by each command; a usage error is one line
 * naming the mistake and where help is (tools/cli.c), with exit status 2.
 *
 * Exit codes: 0 success; 1 the operation failed (for detect: no supported device, or no
 * usable driver, with one line on stderr saying why); 2 usage errors (unknown command or
 * option, a missing or bad value).
 *
 * `detect` prints numba's cuda.detect() report (nbc_detect). `detect --json` prints the same
 * facts as one JSON object (nbc_detect_json): {"driver": ..., "driver_version": ...,
 * "devices": [...], "supported": N} or, when CUDA is unusable, {"error": ..., "status": ...}
 * with exit code 1.
 * `info` prints what nbcuda found (nbc_info_print: each CUDA library's path and version or
 * why it is missing, the runtime, the devices, the environment switches set), numba's
 * `numba -s`; it reports missing libraries and always exits 0.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "nbcuda.h"

/* Used until tools/cmd_compile.c (another part of the project) is linked in. */
__attribute__((weak)) int nbc__cli_compile(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "nbcuda compile: not built\n");
  return 2;
}

static const char usage_text[] =
    "usage: nbcuda [-h | --help] [-V | --version] <command> [options]\n"
    "\n"
    "Numba's CUDA host API and Python-kernel compiler, in C.\n"
    "\n"
    "commands:\n"
    "  detect [--json]   list the CUDA devices as numba.cuda.detect() does; exit 0 if a\n"
    "                    supported device exists, 1 otherwise\n"
    "  info [--json]     where each CUDA library was found and its version (or why not),\n"
    "                    the devices and the environment switches set (numba -s)\n"
    "  compile ...       compile a Python function to PTX, LTO-IR or a cubin\n"
    "                    (nbcuda compile --help)\n"
    "  version           print the versions of nbcuda, the CUDA driver and runtime\n"
    "\n"
    "options:\n"
    "  -h, --help        print this help (nbcuda <command> --help: the command's)\n"
    "  -V, --version     the same as the version command\n"
    "\n"
    "environment: NBCUDA_DRIVER (path of libcuda, 0 disables CUDA),\n"
    "             NBCUDA_PER_THREAD_DEFAULT_STREAM=1; nbcuda info lists every variable read\n"
    "\n"
    "exit status: 0 success, 1 the operation failed, 2 bad usage\n";

static const char detect_usage[] =
    "usage: nbcuda detect [--json]\n"
    "\n"
    "Lists the CUDA devices as numba.cuda.detect() does. Exit status 0 if a supported device\n"
    "exists, 1 otherwise (one line on stderr says why), 2 on bad usage.\n"
    "\n"
    "options:\n"
    "  --json       one JSON object: driver, driver_version, devices, supported\n"
    "  -h, --help   print this help\n";

static const char info_usage[] =
    "usage: nbcuda info [--json]\n"
    "\n"
    "Prints what nbcuda found, as numba -s does: its version; where libcuda, libNVVM,\n"
    "libdevice, nvJitLink, NVRTC, libcudart and libcudadevrt were found and their versions,\n"
    "or why each is unavailable; the CUDA runtime version; the devices; the environment\n"
    "variables nbcuda reads that are set. Exit status 0 (a missing library is reported, not\n"
    "a failure), 2 on bad usage.\n"
    "\n"
    "options:\n"
    "  --json       one JSON object, the same content as Python's nbcuda.info()\n"
    "  -h, --help   print this help\n";

static const char version_usage[] =
    "usage: nbcuda version\n"
    "\n"
    "Prints the versions of nbcuda, the CUDA driver (with its path) and the CUDA runtime.\n";

static void fail_line(const char *command, nbc_status_t st) {
  /* One line: the message may hold numba's "\n...:" later-failure form. */
  char line[2048];
  snprintf(line, sizeof line, "%s", nbc_last_error());
  for (char *p = line; *p; p++)
    if (*p == '\n') *p = ' ';
  fprintf(stderr, "nbcuda %s: %s: %s\n", command, nbc_status_string(st), line);
}

static int detect_json(void) {
  int supported = 0, count = 0;
  nbc_status_t st = nbc_detect_json(stdout, &supported);
  if (st != NBC_OK) {
    fail_line("detect", st);
    return 1;
  }
  if (!supported) {
    nbc_device_count(&count);
    fprintf(stderr, "nbcuda detect: no supported CUDA device (%d found)\n", count);
    return 1;
  }
  return 0;
}

/* The options of a command that has at most --json (pjson NULL: none): 0 to go on, with
 * *pjson set; else the exit status (-1 after --help, which is 0; 2 after a usage error). */
static int json_options(int argc, char **argv, const char *usage, int *pjson) {
  static const struct option with_json[] = {
      {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
  const struct option *longopts = pjson ? with_json : with_json + 1;
  const char *command = argv[0];
  int c;
  opterr = 0;
  optind = 0;
  while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    if (c == 'j') {
      *pjson = 1;
    } else if (c == 'h') {
      fputs(usage, stdout);
      return -1;
    } else {
      return nbc__cli_bad_option(command, c, argv, longopts);
    }
  }
  if (optind < argc)
    return nbc__cli_usage_error(command, "unexpected argument '%s'", argv[optind]);
  return 0;
}

static int cmd_detect(int argc, char **argv) {
  int json = 0, rc = json_options(argc, argv, detect_usage, &json);
  if (rc) return rc < 0 ? 0 : rc;
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

static int cmd_info(int argc, char **argv) {
  int json = 0, rc = json_options(argc, argv, info_usage, &json);
  if (rc) return rc < 0 ? 0 : rc;
  nbc_status_t st = nbc_info_print(stdout, json);
  if (st != NBC_OK) {
    fail_line("info", st);
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
  static const struct option longopts[] = {{"help", no_argument, NULL, 'h'},
                                           {"version", no_argument, NULL, 'V'},
                                           {NULL, 0, NULL, 0}};
  int c;
  opterr = 0;
  /* '+': stop at the command word, whose options are its own. */
  while ((c = getopt_long(argc, argv, "+:hV", longopts, NULL)) != -1) {
    if (c == 'h') {
      fputs(usage_text, stdout);
      return 0;
    }
    if (c == 'V') return cmd_version();
    return nbc__cli_bad_option(NULL, c, argv, longopts);
  }
  if (optind >= argc) return nbc__cli_usage_error(NULL, "%s", "no command given");
  const char *command = argv[optind];
  int sub_argc = argc - optind;
  char **sub_argv = argv + optind;
  if (strcmp(command, "help") == 0) {
    fputs(usage_text, stdout);
    return 0;
  }
  if (strcmp(command, "detect") == 0) return cmd_detect(sub_argc, sub_argv);
  if (strcmp(command, "info") == 0) return cmd_info(sub_argc, sub_argv);
  if (strcmp(command, "version") == 0) {
    int rc = json_options(sub_argc, sub_argv, version_usage, NULL);
    return rc ? (rc < 0 ? 0 : rc) : cmd_version();
  }
  if (strcmp(command, "compile") == 0) {
    optind = 0;
    return nbc__cli_compile(sub_argc, sub_argv);
  }
  return nbc__cli_usage_error(NULL, "unknown command '%s'", command);
}
