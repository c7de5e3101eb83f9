/* cpudevice.c — the CPU device's speed: thread-instructions per second on one core.
 *
 * For a few corpus kernels (tests/corpus) the benchmark compiles the kernel with the nbcuda
 * CLI as the Python module would (--kernel --abi numba --cc 9.0), decodes the PTX once
 * (nbc__ptx_load, timed too), and runs the launch of the corpus case over host arrays with
 * the interpreter (nbc__ptx_run) on the calling thread. The interpreter counts the
 * thread-instructions it executes (instructions whose guard predicate is false are not
 * counted); the figure is that count over the median wall time of --repeat runs.
 *
 * Output: a markdown table (kernel, threads, thread-instructions, ms, M thread-instr/s) or,
 * with --json, one JSON object. Run: ./cpudevice_bench [--cli PATH] [--repeat N] [--json]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpudevice/ptx.h"

#ifndef NBCUDA_SOURCE_DIR
#define NBCUDA_SOURCE_DIR "."
#endif
#ifndef NBCUDA_CLI
#define NBCUDA_CLI "nbcuda"
#endif

/* An array argument of numba's ABI: meminfo, parent, nitems, itemsize, data, shape, strides. */
typedef struct array {
  void *data;
  int ndim;
  long shape[2];
  long itemsize;
} array;

typedef struct bench_case {
  const char *file, *name, *sig;
  unsigned grid[2], block[2];
  int narrays;
  array arrays[3];
  int has_scalar; /* a float32 scalar after the first array (saxpy's a) */
} bench_case;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *compile_ptx(const char *cli, const bench_case *c) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "%s compile %s/tests/corpus/%s:%s --sig '%s' --kernel --abi numba --cc 9.0", cli,
           NBCUDA_SOURCE_DIR, c->file, c->name, c->sig);
  FILE *p = popen(cmd, "r");
  if (!p) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *text = malloc(cap);
  size_t got;
  while (text && (got = fread(text + n, 1, cap - n - 1, p)) > 0) {
    n += got;
    if (n + 1 == cap) {
      char *grown = realloc(text, cap *= 2);
      if (!grown) {
        free(text);
        text = NULL;
      }
      text = grown;
    }
  }
  if (pclose(p) != 0 || !text || n == 0) {
    free(text);
    return NULL;
  }
  text[n] = '\0';
  return text;
}

static unsigned char *resolve(void *user, uint64_t addr, size_t bytes, uint64_t *base,
                              size_t *len) {
  bench_case *c = user;
  for (int i = 0; i < c->narrays; i++) {
    array *a = &c->arrays[i];
    uint64_t lo = (uint64_t)(uintptr_t)a->data;
    size_t size = (size_t)(a->shape[0] * (a->ndim > 1 ? a->shape[1] : 1) * a->itemsize);
    if (addr >= lo && addr - lo <= size && bytes <= size - (addr - lo)) {
      *base = lo;
      *len = size;
      return (unsigned char *)a->data + (addr - lo);
    }
  }
  return NULL;
}

/* The parameter bytes: each array's 5 + 2 * ndim words, the scalar after the first array. */
static size_t pack(const bench_case *c, const nbc__ptx_func *f, unsigned char *buf) {
  size_t k = 0, end = 0;
  for (int i = 0; i < c->narrays; i++) {
    const array *a = &c->arrays[i];
    uint64_t words[9] = {0, 0, (uint64_t)(a->shape[0] * (a->ndim > 1 ? a->shape[1] : 1)),
                         (uint64_t)a->itemsize, (uint64_t)(uintptr_t)a->data};
    int nw = 5;
    for (int d = 0; d < a->ndim; d++)
      words[nw++] = (uint64_t)a->shape[d];
    for (int d = 0; d < a->ndim; d++)
      words[nw++] = (uint64_t)(a->itemsize * (d + 1 < a->ndim ? a->shape[1] : 1));
    for (int w = 0; w < nw && k < f->nformals; w++, k++)
      memcpy(buf + f->formal_off[k], &words[w], f->formal_size[k]);
    if (i == 0 && c->has_scalar && k < f->nformals) {
      float s = 1.5f;
      memcpy(buf + f->formal_off[k++], &s, 4);
    }
  }
  for (size_t i = 0; i < f->nformals; i++)
    if (f->formal_off[i] + f->formal_size[i] > end) end = f->formal_off[i] + f->formal_size[i];
  return end;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  const char *cli = NBCUDA_CLI;
  int repeat = 5, json = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--cli") && i + 1 < argc) cli = argv[++i];
    else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--json")) json = 1;
    else {
      fprintf(stderr, "usage: %s [--cli PATH] [--repeat N] [--json]\n", argv[0]);
      return 2;
    }
  }
  if (repeat < 1) repeat = 1;
  enum { N = 1 << 18 };
  static bench_case cases[] = {
      {"arrays.py", "saxpy", "void(float32[:], float32, float32[:], float32[:])", {N / 256, 1},
       {256, 1}, 3, {{0, 1, {N}, 4}, {0, 1, {N}, 4}, {0, 1, {N}, 4}}, 1},
      {"arrays.py", "matmul_naive", "void(float32[:, :], float32[:, :], float32[:, :])", {8, 6},
       {16, 16}, 3, {{0, 2, {128, 96}, 4}, {0, 2, {128, 64}, 4}, {0, 2, {64, 96}, 4}}, 0},
      {"shared_memory.py", "fast_matmul", "void(float32[:, :], float32[:, :], float32[:, :])",
       {8, 8}, {16, 16}, 3, {{0, 2, {128, 128}, 4}, {0, 2, {128, 128}, 4}, {0, 2, {128, 128}, 4}},
       0},
  };
  int ncases = (int)(sizeof cases / sizeof cases[0]);
  if (json) printf("{\"repeat\": %d, \"cases\": [", repeat);
  else
    printf("| kernel | threads | thread-instructions | decode ms | run ms | M thread-instr/s |\n"
           "|---|---|---|---|---|---|\n");
  int status = 0;
  for (int ci = 0; ci < ncases; ci++) {
    bench_case *c = &cases[ci];
    for (int i = 0; i < c->narrays; i++) {
      array *a = &c->arrays[i];
      size_t n = (size_t)(a->shape[0] * (a->ndim > 1 ? a->shape[1] : 1));
      float *d = malloc(n * sizeof *d);
      for (size_t k = 0; d && k < n; k++)
        d[k] = (float)((k * 2654435761u) % 1000) / 500.0f - 1.0f;
      a->data = d;
    }
    char *ptx = compile_ptx(cli, c);
    if (!ptx) {
      fprintf(stderr, "%s: compiling with %s failed\n", c->name, cli);
      status = 1;
      continue;
    }
    char msg[600];
    nbc__ptx_module *m = NULL;
    double t0 = now_s();
    int ok = nbc__ptx_load(ptx, &m, msg, sizeof msg);
    double decode_ms = (now_s() - t0) * 1e3;
    free(ptx);
    if (!ok) {
      fprintf(stderr, "%s: %s\n", c->name, msg);
      status = 1;
      continue;
    }
    int entry = -1;
    for (int i = 0; i < m->nfuncs && entry < 0; i++)
      if (m->funcs[i].is_entry) entry = i;
    unsigned char params[4096] = {0};
    size_t psize = pack(c, &m->funcs[entry], params);
    nbc__ptx_launch L = {.grid = {c->grid[0], c->grid[1], 1},
                         .block = {c->block[0], c->block[1], 1},
                         .params = params,
                         .param_size = psize,
                         .resolve = resolve,
                         .user = c};
    double *ms = calloc((size_t)repeat, sizeof *ms);
    uint64_t instructions = 0;
    for (int r = 0; r < repeat && ms; r++) {
      t0 = now_s();
      if (!nbc__ptx_run(m, entry, &L, msg, sizeof msg)) {
        fprintf(stderr, "%s: %s\n", c->name, msg);
        status = 1;
        break;
      }
      ms[r] = (now_s() - t0) * 1e3;
      instructions = L.instructions;
    }
    if (ms) qsort(ms, (size_t)repeat, sizeof *ms, cmp_double);
    double med = ms ? ms[repeat / 2] : 0;
    unsigned long long threads = (unsigned long long)c->grid[0] * c->grid[1] * c->block[0] *
                                 c->block[1];
    double rate = med > 0 ? (double)instructions / (med * 1e-3) / 1e6 : 0;
    if (json)
      printf("%s{\"kernel\": \"%s\", \"threads\": %llu, \"thread_instructions\": %llu, "
             "\"decode_ms\": %.3f, \"run_ms\": %.3f, \"mips\": %.1f}",
             ci ? ", " : "", c->name, threads, (unsigned long long)instructions, decode_ms, med,
             rate);
    else
      printf("| %s | %llu | %llu | %.2f | %.2f | %.1f |\n", c->name, threads,
             (unsigned long long)instructions, decode_ms, med, rate);
    free(ms);
    nbc__ptx_free(m);
    for (int i = 0; i < c->narrays; i++)
      free(c->arrays[i].data);
  }
  if (json) printf("]}\n");
  return status;
}
