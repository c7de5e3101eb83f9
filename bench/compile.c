/* compile.c — nbcuda's compile time per corpus case, next to libNVVM's own time on the IR
 * nbcuda emitted (issue 3's benchmark).
 *
 * For every case of the corpus (the CASES lists of the tests/corpus .py files, read with a small
 * scanner of Python tuples) the benchmark compiles the function as numba-cuda's
 * cuda.compile would: device functions with device=True and the C ABI, kernels with
 * device=False and the Numba ABI, -opt=3, PTX, for one compute capability (--cc, 9.0 by
 * default). It measures, after one warm-up compile in the same process:
 *
 *   - the whole nbc_compile, and each phase nbc__compile_ex times (load, signature, infer,
 *     lower, nvvm); "front+lower" is the sum of every phase before libNVVM, i.e. what
 *     nbcuda itself costs;
 *   - libNVVM's own time on the very IR nbcuda emitted (taken once with the IR dump, then
 *     handed to nbc__nvvm_compile with the same options: verify, lazy libdevice when the IR
 *     calls __nv_ functions, compile), so the share of the front end is measured against the
 *     part nbcuda cannot make faster;
 *   - the first compile in a fresh process: the benchmark runs itself again with
 *     `--first KEY` (fork + exec of /proc/self/exe), which compiles that one case once and
 *     prints the time of that first nbc_compile (it includes loading libNVVM and reading
 *     libdevice) and of the whole process; the parent keeps the medians over several
 *     processes.
 *
 * Each figure is the median over --repeat compiles (or --first-runs processes), so that
 * one preempted run does not move it. Output: a markdown table
 *   case | kind | front+lower µs | libNVVM ms | total ms | front share % | first-call ms
 * and summary lines with the medians over cases; --phases adds a table per phase, --json
 * prints everything as one JSON object instead (bench/compile_numba.py reads it).
 *
 * A case is named KEY = "name:signature" (e.g. "add:float32(float32, float32)"); --case
 * takes a KEY or a bare name (every signature of that function). A case that fails to
 * compile is reported in the table with its error and does not stop the others.
 */
#include <errno.h>
#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compiler/compiler.h"
#include "nbcuda.h"

#ifndef NBCUDA_SOURCE_DIR
#define NBCUDA_SOURCE_DIR "."
#endif

enum { MAX_CASES = 512, MAX_REPEAT = 10000 };

typedef struct bench_case {
  char file[1024];
  char name[128], sig[256], kind[16];
  char key[400];
  /* Results (milliseconds unless said otherwise). */
  bool ok;
  char error[512];
  double total_ms;
  double phase_ms[NBC__PHASE_COUNT];
  double front_ms;    /* every phase before libNVVM */
  double nvvm_ms;     /* libNVVM alone on the emitted IR */
  bool libdevice;     /* the IR calls libdevice */
  size_t ir_bytes;
  double first_ms;    /* first nbc_compile in a fresh process; < 0 when not measured */
  double first_nvvm_ms; /* its libNVVM phase */
  double process_ms;  /* fork to exit of that process */
} bench_case;

typedef struct bench_options {
  int cc_major, cc_minor;
  int repeat;
  int first_runs;
  const char *corpus;
  const char *only;  /* --case */
  bool json, phases;
} bench_options;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The median of v[0..n) (sorts v); 0 for n == 0. */
static double median(double *v, int n) {
  if (n <= 0) return 0;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static char *read_file(const char *path, size_t *psize) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, len = 0;
  char *s = malloc(cap);
  while (s) {
    len += fread(s + len, 1, cap - len - 1, f);
    if (len < cap - 1) break;
    char *t = realloc(s, cap * 2);
    if (!t) {
      free(s);
      s = NULL;
      break;
    }
    s = t;
    cap *= 2;
  }
  int bad = ferror(f);
  fclose(f);
  if (!s || bad) {
    free(s);
    return NULL;
  }
  s[len] = '\0';
  if (psize) *psize = len;
  return s;
}

/* ------------------------------------------------------------- the corpus scanner ----- */

/* A cursor over Python source that knows strings and comments, enough to walk the CASES
 * list: `CASES = [ (name, signature, kind, {...}), ... ]` where the first three items are
 * string literals and the rest may be any nesting of brackets, strings and numbers. */
typedef struct scanner {
  const char *p, *end;
} scanner;

static void skip_space(scanner *s) {
  while (s->p < s->end) {
    if (*s->p == '#') {
      while (s->p < s->end && *s->p != '\n') s->p++;
    } else if (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r' ||
               *s->p == '\\') {
      s->p++;
    } else {
      break;
    }
  }
}

/* Reads a string literal ('...' or "...", with an optional r/b/u prefix already skipped by
 * the caller being impossible here: corpus keys are plain literals) into out. Returns false
 * when the cursor is not at one or it is unterminated. Escapes are kept as written, which is
 * exact for the names and signatures of the corpus (they have none). */
static bool read_string(scanner *s, char *out, size_t size) {
  if (s->p >= s->end || (*s->p != '"' && *s->p != '\'')) return false;
  char q = *s->p++;
  bool triple = s->end - s->p >= 2 && s->p[0] == q && s->p[1] == q;
  if (triple) s->p += 2;
  size_t n = 0;
  while (s->p < s->end) {
    if (*s->p == '\\' && s->p + 1 < s->end) {
      if (out && n + 2 < size) {
        out[n++] = s->p[0];
        out[n++] = s->p[1];
      }
      s->p += 2;
      continue;
    }
    if (*s->p == q &&
        (!triple || (s->end - s->p >= 3 && s->p[1] == q && s->p[2] == q))) {
      s->p += triple ? 3 : 1;
      if (out && size) out[n < size ? n : size - 1] = '\0';
      return true;
    }
    if (!triple && *s->p == '\n') return false;
    if (out && n + 1 < size) out[n++] = *s->p;
    s->p++;
  }
  return false;
}

/* Skips one bracketed group starting at an opening bracket, strings and comments included.
 * Returns false when it is not closed. */
static bool skip_group(scanner *s) {
  int depth = 0;
  while (s->p < s->end) {
    char c = *s->p;
    if (c == '"' || c == '\'') {
      if (!read_string(s, NULL, 0)) return false;
      continue;
    }
    if (c == '#') {
      skip_space(s);
      continue;
    }
    s->p++;
    if (c == '(' || c == '[' || c == '{') depth++;
    if (c == ')' || c == ']' || c == '}') {
      if (--depth == 0) return true;
    }
  }
  return false;
}

/* Finds `CASES = [` at the start of a line. */
static const char *find_cases(const char *text) {
  for (const char *p = text; (p = strstr(p, "CASES")); p += 5) {
    if (p != text && p[-1] != '\n') continue;
    const char *q = p + 5;
    while (*q == ' ') q++;
    if (*q++ != '=') continue;
    while (*q == ' ') q++;
    if (*q == '[') return q;
  }
  return NULL;
}

/* Appends the cases of one file; returns the number added, -1 on a malformed list. */
static int scan_file(const char *path, bench_case *cases, int *pn, int max) {
  size_t size = 0;
  char *text = read_file(path, &size);
  if (!text) {
    fprintf(stderr, "compile_bench: cannot read %s: %s\n", path, strerror(errno));
    return -1;
  }
  const char *list = find_cases(text);
  int added = 0;
  if (!list) {
    free(text);
    return 0;
  }
  scanner s = {list + 1, text + size};
  for (;;) {
    skip_space(&s);
    if (s.p >= s.end) goto bad;
    if (*s.p == ']') break;
    if (*s.p == ',') {
      s.p++;
      continue;
    }
    if (*s.p != '(') goto bad;
    const char *tuple = s.p;
    bench_case c;
    memset(&c, 0, sizeof c);
    char *fields[3] = {c.name, c.sig, c.kind};
    size_t sizes[3] = {sizeof c.name, sizeof c.sig, sizeof c.kind};
    s.p++;
    for (int f = 0; f < 3; f++) {
      skip_space(&s);
      if (!read_string(&s, fields[f], sizes[f])) goto bad;
      skip_space(&s);
      if (s.p >= s.end || (*s.p != ',' && !(f == 2 && *s.p == ')'))) goto bad;
      s.p++;
    }
    s.p = tuple;
    if (!skip_group(&s)) goto bad;
    if (strcmp(c.kind, "device") != 0 && strcmp(c.kind, "kernel") != 0) {
      fprintf(stderr, "compile_bench: %s: case %s has kind '%s' (not device/kernel)\n", path,
              c.name, c.kind);
      goto bad;
    }
    if (*pn >= max) {
      fprintf(stderr, "compile_bench: more than %d cases\n", max);
      goto bad;
    }
    snprintf(c.file, sizeof c.file, "%s", path);
    snprintf(c.key, sizeof c.key, "%s:%s", c.name, c.sig);
    cases[(*pn)++] = c;
    added++;
  }
  free(text);
  return added;
bad:
  fprintf(stderr, "compile_bench: %s: cannot read the CASES list (near byte %ld)\n", path,
          (long)(s.p - text));
  free(text);
  return -1;
}

/* Reads every case of the corpus folder's .py files, in file name order; -1 on error. */
static int load_corpus(const char *corpus, bench_case *cases, int max) {
  char pattern[1100];
  snprintf(pattern, sizeof pattern, "%s/*.py", corpus);
  glob_t g;
  int rc = glob(pattern, 0, NULL, &g);
  if (rc != 0) {
    fprintf(stderr, "compile_bench: no corpus files match %s\n", pattern);
    if (rc != GLOB_NOMATCH) globfree(&g);
    return -1;
  }
  int n = 0;
  for (size_t i = 0; i < g.gl_pathc; i++) {
    if (scan_file(g.gl_pathv[i], cases, &n, max) < 0) {
      globfree(&g);
      return -1;
    }
  }
  globfree(&g);
  return n;
}

static bool case_selected(const bench_case *c, const char *only) {
  return !only || strcmp(only, c->key) == 0 || strcmp(only, c->name) == 0;
}

/* ------------------------------------------------------------------- measuring ------- */

static nbc_compile_options_t case_options(const bench_case *c, const bench_options *bo) {
  nbc_compile_options_t o;
  nbc_compile_options_init(&o);
  o.cc_major = bo->cc_major;
  o.cc_minor = bo->cc_minor;
  if (strcmp(c->kind, "kernel") == 0) {
    o.device = 0;
    o.abi = NBC_ABI_NUMBA;
  }
  return o;
}

static void set_error(bench_case *c, const char *what) {
  const char *msg = nbc_last_error();
  snprintf(c->error, sizeof c->error, "%s: %s", what, msg && *msg ? msg : "failed");
  for (char *p = c->error; *p; p++)
    if (*p == '\n' || *p == '|') *p = ' ';
  c->ok = false;
}

/* One compile through nbc__compile_ex: its wall time in *ptotal and its phases in info. */
static bool compile_once(const bench_case *c, const nbc_source_t *src,
                         const nbc_compile_options_t *o, nbc__compile_info *info,
                         double *ptotal, nbc_compile_result_t **presult) {
  double t0 = now_ms();
  nbc_status_t st = nbc__compile_ex(src, c->name, c->sig, o, NULL, info, presult);
  *ptotal = now_ms() - t0;
  return st == NBC_OK;
}

/* libNVVM alone on the IR: verify, lazy libdevice, compile, as nbc_compile does it. */
static bool nvvm_once(const nbc_compile_options_t *o, const char *ir, size_t size,
                      bool libdevice, double *pms, bench_case *c) {
  nbc__ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.arena = nbc__arena_create();
  if (!ctx.arena) return false;
  nbc__buf_init(&ctx.diag, ctx.arena);
  ctx.options = o;
  nbc__nvvm_output out;
  double t0 = now_ms();
  bool ok = nbc__nvvm_compile(&ctx, ir, size, libdevice, &out);
  *pms = now_ms() - t0;
  if (!ok) {
    snprintf(c->error, sizeof c->error, "libNVVM on the IR: %s",
             ctx.diag.data && *ctx.diag.data ? ctx.diag.data : nbc_status_string(ctx.status));
    for (char *p = c->error; *p; p++)
      if (*p == '\n' || *p == '|') *p = ' ';
  }
  nbc__nvvm_output_free(&out);
  nbc__arena_destroy(ctx.arena);
  return ok;
}

/* The warm figures of one case. */
static void measure_warm(bench_case *c, const bench_options *bo) {
  size_t size = 0;
  char *text = read_file(c->file, &size);
  if (!text) {
    snprintf(c->error, sizeof c->error, "cannot read %.400s", c->file);
    return;
  }
  nbc_source_t src = {text, size, c->file, 1, 0};
  nbc_compile_options_t o = case_options(c, bo);
  nbc__compile_info info;
  nbc_compile_result_t *r = NULL;
  double *total = calloc((size_t)bo->repeat, sizeof *total);
  double *front = calloc((size_t)bo->repeat, sizeof *front);
  double *nvvm = calloc((size_t)bo->repeat, sizeof *nvvm);
  double *phase[NBC__PHASE_COUNT] = {0};
  bool alloc_ok = total && front && nvvm;
  for (int p = 0; p < NBC__PHASE_COUNT; p++) {
    phase[p] = calloc((size_t)bo->repeat, sizeof *phase[p]);
    alloc_ok = alloc_ok && phase[p];
  }
  if (!alloc_ok) {
    snprintf(c->error, sizeof c->error, "out of memory");
    goto done;
  }

  /* The warm-up loads libNVVM and libdevice and touches every code path once. */
  memset(&info, 0, sizeof info);
  double t;
  if (!compile_once(c, &src, &o, &info, &t, &r)) {
    set_error(c, "compile");
    goto done;
  }
  nbc_compile_result_destroy(r);
  r = NULL;
  for (int i = 0; i < bo->repeat; i++) {
    if (!compile_once(c, &src, &o, &info, &total[i], &r)) {
      set_error(c, "compile");
      goto done;
    }
    nbc_compile_result_destroy(r);
    r = NULL;
    front[i] = 0;
    for (int p = 0; p < NBC__PHASE_COUNT; p++) {
      phase[p][i] = info.ms[p];
      if (p != NBC__PHASE_NVVM) front[i] += info.ms[p];
    }
  }

  /* The IR, then libNVVM on it alone. */
  info.dump = NBC__DUMP_IR;
  if (!compile_once(c, &src, &o, &info, &t, &r)) {
    set_error(c, "IR dump");
    goto done;
  }
  size_t ir_size = 0;
  const char *ir = nbc_compile_result_code(r, &ir_size);
  c->ir_bytes = ir_size;
  /* lower.c declares every libdevice function it calls; a call is what makes libdevice
   * needed (program->uses_libdevice), and the declaration is its visible trace. */
  c->libdevice = strstr(ir, "@__nv_") != NULL;
  if (!nvvm_once(&o, ir, ir_size, c->libdevice, &t, c)) goto done;
  for (int i = 0; i < bo->repeat; i++) {
    if (!nvvm_once(&o, ir, ir_size, c->libdevice, &nvvm[i], c)) goto done;
  }

  c->total_ms = median(total, bo->repeat);
  c->front_ms = median(front, bo->repeat);
  c->nvvm_ms = median(nvvm, bo->repeat);
  for (int p = 0; p < NBC__PHASE_COUNT; p++) c->phase_ms[p] = median(phase[p], bo->repeat);
  c->ok = true;
done:
  nbc_compile_result_destroy(r);
  free(total);
  free(front);
  free(nvvm);
  for (int p = 0; p < NBC__PHASE_COUNT; p++) free(phase[p]);
  free(text);
}

/* `--first KEY` (the child): one compile in this fresh process. Prints
 * "first <ms> <nvvm ms>" on success; exit status 0 / 1. */
static int run_first(const char *key, const bench_options *bo, bench_case *cases, int n) {
  for (int i = 0; i < n; i++) {
    if (strcmp(cases[i].key, key) != 0) continue;
    size_t size = 0;
    char *text = read_file(cases[i].file, &size);
    if (!text) return 1;
    nbc_source_t src = {text, size, cases[i].file, 1, 0};
    nbc_compile_options_t o = case_options(&cases[i], bo);
    nbc__compile_info info;
    memset(&info, 0, sizeof info);
    nbc_compile_result_t *r = NULL;
    double t;
    bool ok = compile_once(&cases[i], &src, &o, &info, &t, &r);
    nbc_compile_result_destroy(r);
    free(text);
    if (!ok) {
      fprintf(stderr, "%s\n", nbc_last_error());
      return 1;
    }
    printf("first %.6f %.6f\n", t, info.ms[NBC__PHASE_NVVM]);
    return 0;
  }
  fprintf(stderr, "compile_bench: no case %s\n", key);
  return 1;
}

/* Runs `self --first KEY ...` once; fills the first-compile and whole-process times. */
static bool spawn_first(const bench_case *c, const bench_options *bo, double *pfirst,
                        double *pnvvm, double *pprocess) {
  int fd[2];
  if (pipe(fd) != 0) return false;
  char cc[32];
  snprintf(cc, sizeof cc, "%d.%d", bo->cc_major, bo->cc_minor);
  fflush(NULL);
  double t0 = now_ms();
  pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return false;
  }
  if (pid == 0) {
    dup2(fd[1], STDOUT_FILENO);
    close(fd[0]);
    close(fd[1]);
    char *argv[] = {"compile_bench", "--first",  (char *)c->key,      "--cc",
                    cc,              "--corpus", (char *)bo->corpus, NULL};
    execv("/proc/self/exe", argv);
    _exit(127);
  }
  close(fd[1]);
  char buf[256];
  size_t len = 0;
  ssize_t got;
  while ((got = read(fd[0], buf + len, sizeof buf - 1 - len)) > 0) len += (size_t)got;
  close(fd[0]);
  buf[len] = '\0';
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  *pprocess = now_ms() - t0;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return false;
  return sscanf(buf, "first %lf %lf", pfirst, pnvvm) == 2;
}

static void measure_first(bench_case *c, const bench_options *bo) {
  c->first_ms = c->first_nvvm_ms = c->process_ms = -1;
  if (bo->first_runs <= 0 || !c->ok) return;
  double first[64], nvvm[64], process[64];
  int runs = bo->first_runs < 64 ? bo->first_runs : 64;
  for (int i = 0; i < runs; i++) {
    if (!spawn_first(c, bo, &first[i], &nvvm[i], &process[i])) {
      snprintf(c->error, sizeof c->error, "the first-compile process failed");
      return;
    }
  }
  c->first_ms = median(first, runs);
  c->first_nvvm_ms = median(nvvm, runs);
  c->process_ms = median(process, runs);
}

/* -------------------------------------------------------------------- reporting ------ */

static double share(const bench_case *c) {
  return c->nvvm_ms > 0 ? 100.0 * c->front_ms / c->nvvm_ms : 0;
}

static void print_table(bench_case *cases, int n, const bench_options *bo) {
  printf("Compile time per corpus case: cc %d.%d, -opt=3, PTX; median of %d warm compiles "
         "after one warm-up; first call: median of %d fresh processes.\n\n",
         bo->cc_major, bo->cc_minor, bo->repeat, bo->first_runs);
  printf("| case | kind | front+lower µs | libNVVM ms | total ms | front share %% | "
         "first-call ms |\n");
  printf("|---|---|---:|---:|---:|---:|---:|\n");
  double *fr = calloc((size_t)n + 1, sizeof *fr), *nv = calloc((size_t)n + 1, sizeof *nv);
  double *to = calloc((size_t)n + 1, sizeof *to), *sh = calloc((size_t)n + 1, sizeof *sh);
  double *fi = calloc((size_t)n + 1, sizeof *fi), *pr = calloc((size_t)n + 1, sizeof *pr);
  int ok = 0, firsts = 0, over = 0, failed = 0;
  double worst = 0;
  const char *worst_key = "";
  for (int i = 0; i < n; i++) {
    const bench_case *c = &cases[i];
    if (!c->ok) {
      printf("| `%s` | %s | – | – | – | – | error: %s |\n", c->key, c->kind, c->error);
      failed++;
      continue;
    }
    char first[32] = "–";
    if (c->first_ms >= 0) snprintf(first, sizeof first, "%.2f", c->first_ms);
    else if (c->error[0]) snprintf(first, sizeof first, "failed");
    printf("| `%s` | %s%s | %.0f | %.2f | %.2f | %.1f | %s |\n", c->key, c->kind,
           c->libdevice ? " (libdevice)" : "", c->front_ms * 1e3, c->nvvm_ms, c->total_ms,
           share(c), first);
    if (fr && nv && to && sh && fi && pr) {
      fr[ok] = c->front_ms * 1e3;
      nv[ok] = c->nvvm_ms;
      to[ok] = c->total_ms;
      sh[ok] = share(c);
      if (c->first_ms >= 0) {
        fi[firsts] = c->first_ms;
        pr[firsts++] = c->process_ms;
      }
    }
    ok++;
    if (share(c) > 10.0) over++;
    if (share(c) > worst) {
      worst = share(c);
      worst_key = c->key;
    }
  }
  if (fr && nv && to && sh && fi && pr && ok > 0) {
    printf("\nMedians over %d cases: front+lower %.0f µs, libNVVM %.2f ms, total %.2f ms, "
           "front share %.1f %%",
           ok, median(fr, ok), median(nv, ok), median(to, ok), median(sh, ok));
    if (firsts) printf(", first call %.2f ms (whole process %.2f ms)", median(fi, firsts),
                       median(pr, firsts));
    printf(".\nLargest front share: %.1f %% (`%s`); cases over the 10 %% goal: %d of %d.\n",
           worst, worst_key, over, ok);
  }
  if (failed) printf("Cases that failed: %d.\n", failed);
  free(fr);
  free(nv);
  free(to);
  free(sh);
  free(fi);
  free(pr);
}

static void print_phases(const bench_case *cases, int n) {
  printf("\nPer phase (median µs):\n\n| case |");
  for (int p = 0; p < NBC__PHASE_COUNT; p++) printf(" %s |", nbc__compile_phase_names[p]);
  printf(" IR bytes |\n|---|");
  for (int p = 0; p <= NBC__PHASE_COUNT; p++) printf("---:|");
  printf("\n");
  for (int i = 0; i < n; i++) {
    if (!cases[i].ok) continue;
    printf("| `%s` |", cases[i].key);
    for (int p = 0; p < NBC__PHASE_COUNT; p++) printf(" %.0f |", cases[i].phase_ms[p] * 1e3);
    printf(" %zu |\n", cases[i].ir_bytes);
  }
}

static void json_string(const char *s) {
  putchar('"');
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') printf("\\%c", ch);
    else if (ch == '\n') printf("\\n");
    else if (ch < 0x20) printf("\\u%04x", ch);
    else putchar(ch);
  }
  putchar('"');
}

static void print_json(const bench_case *cases, int n, const bench_options *bo) {
  printf("{\"cc\": \"%d.%d\", \"repeat\": %d, \"first_runs\": %d, \"cases\": [", bo->cc_major,
         bo->cc_minor, bo->repeat, bo->first_runs);
  for (int i = 0; i < n; i++) {
    const bench_case *c = &cases[i];
    printf("%s\n  {\"key\": ", i ? "," : "");
    json_string(c->key);
    printf(", \"name\": ");
    json_string(c->name);
    printf(", \"sig\": ");
    json_string(c->sig);
    printf(", \"kind\": ");
    json_string(c->kind);
    printf(", \"file\": ");
    json_string(c->file);
    printf(", \"ok\": %s", c->ok ? "true" : "false");
    if (!c->ok) {
      printf(", \"error\": ");
      json_string(c->error);
      printf("}");
      continue;
    }
    printf(", \"total_ms\": %.6f, \"front_ms\": %.6f, \"nvvm_ms\": %.6f, \"front_share\": %.3f",
           c->total_ms, c->front_ms, c->nvvm_ms, share(c));
    printf(", \"libdevice\": %s, \"ir_bytes\": %zu, \"phases_ms\": {",
           c->libdevice ? "true" : "false", c->ir_bytes);
    for (int p = 0; p < NBC__PHASE_COUNT; p++)
      printf("%s\"%s\": %.6f", p ? ", " : "", nbc__compile_phase_names[p], c->phase_ms[p]);
    printf("}");
    if (c->first_ms >= 0)
      printf(", \"first_ms\": %.6f, \"first_nvvm_ms\": %.6f, \"process_ms\": %.6f", c->first_ms,
             c->first_nvvm_ms, c->process_ms);
    else
      printf(", \"first_ms\": null, \"first_nvvm_ms\": null, \"process_ms\": null");
    if (c->error[0]) {
      printf(", \"first_error\": ");
      json_string(c->error);
    }
    printf("}");
  }
  printf("\n]}\n");
}

/* ------------------------------------------------------------------------ main ------- */

static const char usage_text[] =
    "usage: compile_bench [--cc M.m] [--repeat N] [--first-runs N] [--case NAME|NAME:SIG]\n"
    "                     [--corpus DIR] [--phases] [--json]\n"
    "  --cc M.m          compute capability to compile for (default 9.0)\n"
    "  --repeat N        warm compiles per case, after one warm-up (default 20)\n"
    "  --first-runs N    fresh processes per case for the first-call time (default 5; 0: "
    "skip)\n"
    "  --case KEY        only this case: name:signature as listed, or a function name\n"
    "  --corpus DIR      folder of the corpus .py files (default the source tree's)\n"
    "  --phases          add a table of each phase's time\n"
    "  --json            print the results as JSON instead of markdown\n";

static int usage_error(const char *what, const char *arg) {
  fprintf(stderr, "compile_bench: %s%s\n%s", what, arg ? arg : "", usage_text);
  return 2;
}

static bool parse_int(const char *s, int lo, int hi, int *pv) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) return false;
  *pv = (int)v;
  return true;
}

int main(int argc, char **argv) {
  bench_options bo = {9, 0, 20, 5, NBCUDA_SOURCE_DIR "/tests/corpus", NULL, false, false};
  const char *first = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    bool takes = strcmp(a, "--cc") == 0 || strcmp(a, "--repeat") == 0 ||
                 strcmp(a, "--first-runs") == 0 || strcmp(a, "--case") == 0 ||
                 strcmp(a, "--corpus") == 0 || strcmp(a, "--first") == 0;
    if (takes && !v) return usage_error("missing value after ", a);
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage_text, stdout);
      return 0;
    } else if (strcmp(a, "--cc") == 0) {
      char dot = 0, extra = 0;
      if (sscanf(v, "%d%c%d%c", &bo.cc_major, &dot, &bo.cc_minor, &extra) != 3 || dot != '.' ||
          bo.cc_major < 1 || bo.cc_minor < 0)
        return usage_error("--cc expects M.m (e.g. 9.0), not ", v);
    } else if (strcmp(a, "--repeat") == 0) {
      if (!parse_int(v, 1, MAX_REPEAT, &bo.repeat))
        return usage_error("--repeat expects 1..10000, not ", v);
    } else if (strcmp(a, "--first-runs") == 0) {
      if (!parse_int(v, 0, 64, &bo.first_runs))
        return usage_error("--first-runs expects 0..64, not ", v);
    } else if (strcmp(a, "--case") == 0) {
      bo.only = v;
    } else if (strcmp(a, "--corpus") == 0) {
      bo.corpus = v;
    } else if (strcmp(a, "--first") == 0) {
      first = v;
    } else if (strcmp(a, "--json") == 0) {
      bo.json = true;
    } else if (strcmp(a, "--phases") == 0) {
      bo.phases = true;
    } else {
      return usage_error("unknown argument ", a);
    }
    if (takes) i++;
  }

  static bench_case cases[MAX_CASES];
  int n = load_corpus(bo.corpus, cases, MAX_CASES);
  if (n < 0) return 1;
  if (first) return run_first(first, &bo, cases, n);

  int m = 0;
  for (int i = 0; i < n; i++)
    if (case_selected(&cases[i], bo.only)) cases[m++] = cases[i];
  if (m == 0) {
    fprintf(stderr, "compile_bench: no case %s in %s\n", bo.only ? bo.only : "at all",
            bo.corpus);
    return 1;
  }
  if (nbc__nvvm_load() != NBC_OK) {
    fprintf(stderr, "compile_bench: %s\n", nbc__nvvm_load_error());
    return 1;
  }
  int failed = 0;
  bool progress = isatty(STDERR_FILENO);
  for (int i = 0; i < m; i++) {
    measure_warm(&cases[i], &bo);
    measure_first(&cases[i], &bo);
    if (!cases[i].ok) failed++;
    if (progress) {
      fprintf(stderr, "\r%d/%d cases", i + 1, m);
      fflush(stderr);
    }
  }
  if (progress) fprintf(stderr, "\r\033[K");
  if (bo.json) {
    print_json(cases, m, &bo);
  } else {
    print_table(cases, m, &bo);
    if (bo.phases) print_phases(cases, m);
  }
  return failed ? 1 : 0;
}
