/* cmd_compile.c — `nbcuda compile`: compiles one Python function to PTX or LTO-IR.
 *
 *   nbcuda compile FILE.py[:FUNC] --sig SIG [--kernel] [--cc M.m] [--output ptx|ltoir|cubin]
 *                  [--abi c|numba] [--abi-name NAME] [--fastmath] [--lineinfo] [--debug]
 *                  [--no-opt] [--forceinline] [--launch-bounds N[,M[,K]]] [-o OUT|-]
 *                  [--time-limit SECONDS] [--dump=tokens|ast|types|ir] [--verbose]
 *                  [--max-source-size N]
 *
 * FILE `-` is standard input (`-:FUNC` names the function), which diagnostics call <stdin>;
 * a file named "-" is ./-. The options are parsed by getopt_long, so they may come before or
 * after FILE, a long option's value may follow '=' or be the next argument, and `--`
 * ends the options.
 *
 * How it works. The arguments become an nbc_compile_options_t and one call to
 * nbc_compile_trace (the public header's compile that also times each phase and can stop
 * after one to return its printed output, --dump). Globals resolve within the file itself (no
 * resolver is passed; src/compiler/resolve.c reads the file's top level, including a
 * helper's `@cuda.jit(device=True, forceinline=True)` decorator, which makes the helper
 * alwaysinline in its callers as in the Python module). The code goes to stdout or to -o; with --verbose the return type, the
 * symbol and the time of each phase go to stderr. Exit status: 0 on success, 1 when the
 * compilation fails (the diagnostic, with file:line:col, the source line and a caret, is
 * printed on stderr), 2 on bad usage.
 */
#include <errno.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "nbcuda.h"

static const char usage_text[] =
    "usage: nbcuda compile FILE.py[:FUNC] --sig SIG [options]\n"
    "\n"
    "Compiles the Python function FUNC of FILE.py (numba's CUDA kernel language) for the\n"
    "signature SIG (numba syntax, e.g. 'float32(float32, float32)' or\n"
    "'void(float32[:], float32[:])') and writes PTX (or LTO-IR) to stdout. FILE - reads\n"
    "standard input (-:FUNC names the function; diagnostics call it <stdin>).\n"
    "\n"
    "options:\n"
    "  --sig SIG             the signature (required)\n"
    "  --kernel              compile a kernel (Numba ABI) instead of a device function\n"
    "  --cc M.m[a|f]         compute capability, 9.0a: arch-specific (default: NBCUDA_DEFAULT_PTX_CC, "
    "NUMBA_CUDA_DEFAULT_PTX_CC or 7.5)\n"
    "  --output ptx|ltoir|cubin  the kind of code (default ptx); cubin: the PTX linked by\n"
    "                        nvJitLink for --cc (else the current device) with what it needs\n"
    "                        (numba.cuda.fp16's wrappers, libcudadevrt.a), ready to load\n"
    "  --abi c|numba         the device function's ABI (default c)\n"
    "  --abi-name NAME       the C ABI symbol, [A-Za-z_][A-Za-z0-9_$]* (default: the\n"
    "                        function's name)\n"
    "  --fastmath            fast, less accurate float math (-ftz=1 -prec-div=0 ...)\n"
    "  --lineinfo            line tables pointing at the Python source\n"
    "  --debug               full debug information (-g)\n"
    "  --no-opt              compile with -opt=0\n"
    "  --forceinline         mark the device function alwaysinline (LTO-IR only); helpers\n"
    "                        of FILE decorated jit(device=True, forceinline=True) are\n"
    "                        always inlined into their callers\n"
    "  --launch-bounds B     kernel launch bounds: MAXTHREADS[,MINBLOCKS[,MAXCLUSTER]]\n"
    "  --time-limit S        end the compile with an error if libNVVM runs longer than S\n"
    "                        seconds (it then runs in a child process, killed at the limit)\n"
    "  --max-source-size N   refuse a FILE of more than N bytes (default:\n"
    "                        NBCUDA_MAX_SOURCE_SIZE or 16 MiB)\n"
    "  -o OUT                write the code to OUT instead of stdout (- is stdout)\n"
    "  --dump=PHASE          print a phase's output instead: tokens, ast, types or ir\n"
    "  -v, --verbose         print the return type and each phase's time to stderr\n"
    "  -h, --help            print this help\n"
    "\n"
    "exit status: 0 success, 1 compile error, 2 bad usage\n";

static int usage_error(const char *fmt, const char *arg) {
  return nbc__cli_usage_error("compile", fmt, arg);
}

/* "N", "N,M" or "N,M,K", each a positive integer that fits in 32 bits. */
static bool parse_launch_bounds(const char *v, nbc_compile_options_t *o) {
  o->nlaunch_bounds = 0;
  for (;;) {
    char *end;
    errno = 0;
    if (!isdigit((unsigned char)*v)) return false;
    unsigned long n = strtoul(v, &end, 10);
    if (errno || n == 0 || n > 0x7fffffffUL || o->nlaunch_bounds == 3) return false;
    o->launch_bounds[o->nlaunch_bounds++] = (unsigned)n;
    if (*end == '\0') return true;
    if (*end != ',') return false;
    v = end + 1;
  }
}

/* The text of f (a file, or standard input), at most limit bytes (a longer one is read no
 * further: *ptoo_long); NULL with errno set when it cannot be read (EISDIR for a
 * directory). Closes f unless it is stdin. */
static char *read_stream(FILE *f, size_t limit, size_t *psize, bool *ptoo_long) {
  struct stat sb;
  if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
    if (f != stdin) fclose(f);
    errno = EISDIR;
    return NULL;
  }
  size_t cap = 1 << 16, len = 0;
  char *data = malloc(cap);
  *ptoo_long = false;
  while (data) {
    size_t n = fread(data + len, 1, cap - len - 1, f);
    len += n;
    if (len > limit) {
      *ptoo_long = true;
      break;
    }
    if (len + 1 < cap) break;
    cap *= 2;
    char *bigger = realloc(data, cap);
    if (!bigger) {
      free(data);
      data = NULL;
    }
    data = bigger;
  }
  int err = ferror(f);
  if (f != stdin) fclose(f);
  if (!data || err) {
    free(data);
    errno = err ? EIO : ENOMEM;
    return NULL;
  }
  data[len] = '\0';
  *psize = len;
  return data;
}

/* "M.m", optionally followed by 'a' or 'f' (an arch- or family-specific target: 9.0a). */
static bool parse_cc(const char *s, int *pmajor, int *pminor, char *parch) {
  char *end;
  long major = strtol(s, &end, 10);
  if (end == s || *end != '.' || major <= 0 || major > 99) return false;
  const char *m = end + 1;
  if (!isdigit((unsigned char)*m)) return false;
  long minor = strtol(m, &end, 10);
  if (end == m || minor < 0 || minor > 9) return false;
  char arch = 0;
  if (*end == 'a' || *end == 'f') arch = *end++;
  if (*end != '\0') return false;
  *pmajor = (int)major;
  *pminor = (int)minor;
  *parch = arch;
  return true;
}

static int write_code(const char *path, const char *code, size_t size) {
  FILE *f = path ? fopen(path, "wb") : stdout;
  if (!f) {
    fprintf(stderr, "nbcuda compile: cannot write %s: %s\n", path, strerror(errno));
    return 1;
  }
  size_t n = fwrite(code, 1, size, f);
  int bad = n != size || (path ? fclose(f) != 0 : fflush(f) != 0);
  if (bad) {
    fprintf(stderr, "nbcuda compile: cannot write %s\n", path ? path : "stdout");
    return 1;
  }
  return 0;
}

/* The long options; those without a short form have values from 256 up. */
enum {
  OPT_SIG = 256, OPT_KERNEL, OPT_CC, OPT_OUTPUT, OPT_ABI, OPT_ABI_NAME, OPT_FASTMATH,
  OPT_LINEINFO, OPT_DEBUG, OPT_NO_OPT, OPT_FORCEINLINE, OPT_LAUNCH_BOUNDS, OPT_TIME_LIMIT,
  OPT_MAX_SOURCE_SIZE, OPT_DUMP
};
static const struct option longopts[] = {
    {"sig", required_argument, NULL, OPT_SIG},
    {"kernel", no_argument, NULL, OPT_KERNEL},
    {"cc", required_argument, NULL, OPT_CC},
    {"output", required_argument, NULL, OPT_OUTPUT},
    {"abi", required_argument, NULL, OPT_ABI},
    {"abi-name", required_argument, NULL, OPT_ABI_NAME},
    {"fastmath", no_argument, NULL, OPT_FASTMATH},
    {"lineinfo", no_argument, NULL, OPT_LINEINFO},
    {"debug", no_argument, NULL, OPT_DEBUG},
    {"no-opt", no_argument, NULL, OPT_NO_OPT},
    {"forceinline", no_argument, NULL, OPT_FORCEINLINE},
    {"launch-bounds", required_argument, NULL, OPT_LAUNCH_BOUNDS},
    {"time-limit", required_argument, NULL, OPT_TIME_LIMIT},
    {"max-source-size", required_argument, NULL, OPT_MAX_SOURCE_SIZE},
    {"dump", required_argument, NULL, OPT_DUMP},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* What the command line asks for, beyond the compile options. */
typedef struct request {
  const char *target, *sig, *out, *abi;
  bool kernel, verbose, cubin, help;
} request;

/* One option's effect (c as getopt_long returned it, v its value); 0, or the exit status of
 * a usage error. */
static int apply_option(int c, const char *v, request *r, nbc_compile_options_t *o,
                        nbc_compile_trace_t *info) {
  char *end = NULL;
  errno = 0;
  switch (c) {
  case 'h': r->help = true; return 0;
  case 'v': r->verbose = true; return 0;
  case 'o': r->out = strcmp(v, "-") == 0 ? NULL : v; return 0; /* "-": stdout */
  case OPT_SIG: r->sig = v; return 0;
  case OPT_KERNEL: r->kernel = true; return 0;
  case OPT_FASTMATH: o->fastmath = 1; return 0;
  case OPT_LINEINFO: o->lineinfo = 1; return 0;
  case OPT_DEBUG: o->debug = 1; return 0;
  case OPT_NO_OPT: o->opt = 0; return 0;
  case OPT_FORCEINLINE: o->forceinline = 1; return 0;
  case OPT_ABI_NAME: o->abi_name = v; return 0;
  case OPT_CC:
    if (!parse_cc(v, &o->cc_major, &o->cc_minor, &o->cc_arch))
      return usage_error("--cc expects M.m or M.ma / M.mf (e.g. 9.0, 9.0a), not '%s'", v);
    return 0;
  case OPT_OUTPUT:
    r->cubin = strcmp(v, "cubin") == 0;
    if (strcmp(v, "ptx") == 0 || r->cubin) o->output = NBC_OUTPUT_PTX;
    else if (strcmp(v, "ltoir") == 0) o->output = NBC_OUTPUT_LTOIR;
    else return usage_error("--output expects ptx, ltoir or cubin, not '%s'", v);
    return 0;
  case OPT_LAUNCH_BOUNDS:
    if (!parse_launch_bounds(v, o))
      return usage_error("--launch-bounds expects 1 to 3 positive integers N[,M[,K]], not '%s'",
                         v);
    return 0;
  case OPT_TIME_LIMIT:
    o->time_limit = strtod(v, &end);
    if (errno || end == v || *end || !(o->time_limit > 0) || o->time_limit > 1e9)
      return usage_error("--time-limit expects a number of seconds above 0, not '%s'", v);
    return 0;
  case OPT_MAX_SOURCE_SIZE: {
    unsigned long long n = isdigit((unsigned char)*v) ? strtoull(v, &end, 10) : 0;
    if (!n || errno || *end)
      return usage_error("--max-source-size expects a positive number of bytes, not '%s'", v);
    o->max_source_size = (size_t)n;
    return 0;
  }
  case OPT_ABI:
    if (strcmp(v, "c") != 0 && strcmp(v, "numba") != 0)
      return usage_error("--abi expects c or numba, not '%s'", v);
    r->abi = v;
    return 0;
  case OPT_DUMP:
    if (strcmp(v, "tokens") == 0) info->stop_after = NBC_DUMP_TOKENS;
    else if (strcmp(v, "ast") == 0) info->stop_after = NBC_DUMP_AST;
    else if (strcmp(v, "types") == 0) info->stop_after = NBC_DUMP_TYPES;
    else if (strcmp(v, "ir") == 0) info->stop_after = NBC_DUMP_IR;
    else return usage_error("--dump expects tokens, ast, types or ir, not '%s'", v);
    return 0;
  default: return 2; /* not reached: every value of longopts is handled above */
  }
}

/* Whether argv[i] is the separate value of the option before it ("--sig", "-o"). */
static bool is_option_value(char **argv, int i) {
  const char *prev = argv[i - 1];
  if (strcmp(prev, "-o") == 0) return true;
  if (strncmp(prev, "--", 2) != 0 || strchr(prev, '=')) return false;
  for (const struct option *o = longopts; o->name; o++)
    if (o->has_arg == required_argument && strcmp(o->name, prev + 2) == 0) return true;
  return false;
}

/* Standard input with a function, "-:FUNC", would read to getopt_long as the options '-:'
 * and '-F...': it is taken out of argv (shifting the rest down) as the target before
 * getopt_long runs. Returns the new argc. */
static int take_stdin_target(int argc, char **argv, request *r) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) break;
    if (strncmp(argv[i], "-:", 2) != 0 || is_option_value(argv, i)) continue;
    r->target = argv[i];
    memmove(argv + i, argv + i + 1, sizeof *argv * (size_t)(argc - i)); /* with the NULL */
    return argc - 1;
  }
  return argc;
}

/* The command line into r, o and info: 0, or the exit status of a usage error. */
static int parse_arguments(int argc, char **argv, request *r, nbc_compile_options_t *o,
                           nbc_compile_trace_t *info) {
  int c;
  opterr = 0;
  optind = 0;
  argc = take_stdin_target(argc, argv, r);
  while ((c = getopt_long(argc, argv, ":ho:v", longopts, NULL)) != -1) {
    if (c == '?' || c == ':') return nbc__cli_bad_option("compile", c, argv, longopts);
    int rc = apply_option(c, optarg, r, o, info);
    if (rc || r->help) return rc;
  }
  if (optind < argc && !r->target) r->target = argv[optind++];
  if (optind < argc) return usage_error("unexpected argument '%s'", argv[optind]);
  if (!r->target) return usage_error("%s", "no FILE.py[:FUNC] given");
  if (!r->sig) return usage_error("%s", "--sig is required");
  if (r->kernel) {
    if (r->abi && strcmp(r->abi, "c") == 0)
      return usage_error("%s", "--abi c cannot be used with --kernel");
    o->device = 0;
    o->abi = NBC_ABI_NUMBA;
  } else if (r->abi) {
    o->abi = strcmp(r->abi, "numba") == 0 ? NBC_ABI_NUMBA : NBC_ABI_C;
  }
  return 0;
}

/* The text of path ("-": standard input) within the options' size limit; NULL after
 * printing why not. */
static char *read_source(const char *path, const char *name, const nbc_compile_options_t *o,
                         size_t *psize) {
  size_t limit = nbc_compile_max_source_size(o);
  bool too_long = false;
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  char *text = f ? read_stream(f, limit, psize, &too_long) : NULL;
  if (!text) {
    if (errno == EISDIR)
      fprintf(stderr, "nbcuda compile: cannot read %s: it is a directory, not a Python file\n",
              name);
    else
      fprintf(stderr, "nbcuda compile: cannot read %s: %s\n", name, strerror(errno));
    return NULL;
  }
  if (too_long) {
    fprintf(stderr, "nbcuda compile: %s is more than %zu bytes, the limit on a source (raise it "
            "with --max-source-size or NBCUDA_MAX_SOURCE_SIZE)\n", name, limit);
    free(text);
    return NULL;
  }
  return text;
}

int nbc__cli_compile(int argc, char **argv) {
  nbc_compile_options_t o;
  nbc_compile_options_init(&o);
  request r = {0};
  nbc_compile_trace_t info;
  memset(&info, 0, sizeof info);
  int usage = parse_arguments(argc, argv, &r, &o, &info);
  if (r.help) {
    fputs(usage_text, stdout);
    return 0;
  }
  if (usage) return usage;
  const char *out = r.out;
  bool cubin = r.cubin, verbose = r.verbose;

  /* FILE.py:FUNC — the last ':' separates the function (a Windows drive letter is not a
   * concern here). */
  char *path = strdup(r.target);
  if (!path) return 1;
  char *colon = strrchr(path, ':');
  const char *func = NULL;
  if (colon) {
    *colon = '\0';
    func = colon + 1;
  }
  const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
  size_t size = 0;
  char *text = read_source(path, name, &o, &size);
  if (!text) {
    free(path);
    return 1;
  }
  nbc_source_t src = {text, size, name, 1, 0};
  nbc_compile_result_t *result = NULL;
  nbc_status_t st = nbc_compile_trace(&src, func, r.sig, &o, NULL, &info, &result);
  int rc = 0;
  if (st != NBC_OK) {
    const char *msg = nbc_last_error();
    fprintf(stderr, "%s\n", msg && *msg ? msg : nbc_status_string(st));
    rc = 1;
  } else {
    size_t n = 0;
    const char *code = nbc_compile_result_code(result, &n);
    if (cubin && info.stop_after == NBC_DUMP_NONE) {
      nbc_image_t image = {code, n, NBC_IMAGE_PTX, NULL};
      nbc_module_load_options_t load = {.fp16 = nbc_compile_result_uses_fp16(result),
                                        .cudadevrt = nbc_compile_result_cooperative(result)};
      void *bin = NULL;
      size_t bin_size = 0;
      st = nbc_link_cubin(&image, 1, o.cc_major, o.cc_minor, &load, &bin, &bin_size);
      if (st != NBC_OK) {
        fprintf(stderr, "%s\n", nbc_last_error());
        rc = 1;
      } else {
        rc = write_code(out, (const char *)bin, bin_size);
      }
      nbc_cubin_free(bin);
    } else {
      rc = write_code(out, code, n);
    }
    if (verbose) {
      double total = 0;
      fprintf(stderr, "return type: %s\n", nbc_compile_result_return_type(result));
      if (info.stop_after == NBC_DUMP_NONE) fprintf(stderr, "symbol: %s\n", nbc_compile_result_symbol(result));
      for (int p = 0; p < NBC_COMPILE_PHASE_COUNT; p++) {
        fprintf(stderr, "%-10s %9.3f ms\n", nbc_compile_phase_name(p), info.ms[p]);
        total += info.ms[p];
      }
      fprintf(stderr, "%-10s %9.3f ms\n", "total", total);
      const char *log = nbc_compile_result_log(result);
      if (*log) fprintf(stderr, "libNVVM log:\n%s\n", log);
    }
  }
  nbc_compile_result_destroy(result);
  free(text);
  free(path);
  return rc;
}
