/* run_saxpy.c — loads the PTX that `nbcuda compile examples/saxpy.py:saxpy --kernel` made and
 * runs it through nbcuda's C API: a copy of what a C program does with a compiled kernel.
 *
 * The kernel takes numba's flattened array arguments: for each array, meminfo, parent,
 * nitems, itemsize, data, shape[ndim], strides[ndim] (strides in bytes). The program packs
 * them, launches over 2^20 elements, copies the result back and checks it against the CPU.
 * Without a usable GPU it says why and exits 0, so the quick start works on any machine.
 *
 *   run_saxpy saxpy.ptx
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbcuda.h"

/* One flattened 1-D array argument, laid out as the kernel's parameters. */
typedef struct array1d {
  void *meminfo, *parent;
  int64_t nitems, itemsize;
  nbc_devptr_t data;
  int64_t shape, stride;
} array1d;

static array1d array_arg(nbc_devptr_t data, int64_t n) {
  array1d a = {NULL, NULL, n, sizeof(float), data, n, sizeof(float)};
  return a;
}

static char *read_file(const char *path, size_t *psize) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) buf[n] = '\0';
  *psize = (size_t)n;
  return buf;
}

/* The name after ".entry" in the PTX: the kernel's symbol. */
static int entry_name(const char *ptx, char *out, size_t size) {
  const char *p = strstr(ptx, ".entry");
  if (!p) return -1;
  p += strlen(".entry");
  while (*p == ' ' || *p == '\t') p++;
  size_t n = strcspn(p, "( \t\n");
  if (n == 0 || n >= size) return -1;
  memcpy(out, p, n);
  out[n] = '\0';
  return 0;
}

#define CHECK(call)                                                                        \
  do {                                                                                     \
    nbc_status_t st_ = (call);                                                             \
    if (st_ != NBC_OK) {                                                                   \
      fprintf(stderr, "run_saxpy: %s: %s\n", #call, nbc_last_error());                     \
      return 1;                                                                            \
    }                                                                                      \
  } while (0)

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: run_saxpy SAXPY.ptx\n");
    return 2;
  }
  int count = 0;
  if (nbc_device_count(&count) != NBC_OK || count == 0) {
    printf("run_saxpy: no GPU to run on (%s); the PTX was compiled, nothing launched\n",
           count == 0 && nbc_last_error()[0] == '\0' ? "no device" : nbc_last_error());
    return 0;
  }
  size_t size = 0;
  char *ptx = read_file(argv[1], &size);
  char symbol[512];
  if (!ptx || entry_name(ptx, symbol, sizeof symbol) != 0) {
    fprintf(stderr, "run_saxpy: cannot read a kernel entry from %s\n", argv[1]);
    free(ptx);
    return 1;
  }
  enum { N = 1 << 20 };
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *r = malloc(N * sizeof *r);
  float a = 2.5f;
  for (int i = 0; i < N; i++) {
    x[i] = (float)(i % 1000) * 0.001f;
    y[i] = (float)(i % 77) - 38.0f;
  }
  nbc_module_t *module = NULL;
  nbc_function_t *fn = NULL;
  nbc_devptr_t dr, dx, dy;
  CHECK(nbc_module_load_data(ptx, size, NBC_IMAGE_PTX, &module));
  CHECK(nbc_module_get_function(module, symbol, &fn));
  CHECK(nbc_mem_alloc(N * sizeof(float), &dr));
  CHECK(nbc_mem_alloc(N * sizeof(float), &dx));
  CHECK(nbc_mem_alloc(N * sizeof(float), &dy));
  CHECK(nbc_memcpy_htod(dx, x, N * sizeof(float)));
  CHECK(nbc_memcpy_htod(dy, y, N * sizeof(float)));
  array1d ar = array_arg(dr, N), ax = array_arg(dx, N), ay = array_arg(dy, N);
  void *args[] = {&ar.meminfo, &ar.parent, &ar.nitems, &ar.itemsize, &ar.data, &ar.shape,
                  &ar.stride, &a, &ax.meminfo, &ax.parent, &ax.nitems, &ax.itemsize,
                  &ax.data, &ax.shape, &ax.stride, &ay.meminfo, &ay.parent, &ay.nitems,
                  &ay.itemsize, &ay.data, &ay.shape, &ay.stride};
  unsigned grid[3] = {N / 256, 1, 1}, block[3] = {256, 1, 1};
  CHECK(nbc_launch(fn, grid, block, 0, NULL, args));
  CHECK(nbc_memcpy_dtoh(r, dr, N * sizeof(float)));
  int bad = 0;
  for (int i = 0; i < N; i++)
    if (fabsf(r[i] - (a * x[i] + y[i])) > 1e-5f * fabsf(a * x[i] + y[i]) + 1e-6f) bad++;
  printf("run_saxpy: %s on %d elements (%d mismatches)\n", bad ? "FAILED" : "correct", N, bad);
  nbc_mem_free(dr);
  nbc_mem_free(dx);
  nbc_mem_free(dy);
  nbc_module_destroy(module);
  free(ptx);
  free(x);
  free(y);
  free(r);
  return bad ? 1 : 0;
}
