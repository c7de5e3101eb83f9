/* kernel_from_source.c — a Python kernel compiled, launched twice and checked through
 * nbcuda's C API alone (nbc_kernel_*): what a C program does to run a Numba kernel.
 *
 * The kernel is saxpy of examples/saxpy.py (r = a * x + y), read from the file named on the
 * command line. nbc_kernel_create compiles it; the first launch loads its code into the
 * current context, the second reuses that module (nbc_kernel_load_count stays 1 and the
 * function is the same); the arguments are typed (nbc_arg_array, nbc_arg_float) and packed
 * into numba's flattened array layout by the library. The second launch adds x once more,
 * so r = (a + 1) * x + y is checked against the CPU.
 *
 * On nbcuda's software test driver (NBCUDA_TESTDRIVER set, as ctest runs it without a GPU)
 * kernels are counted, not run: the value check is skipped, saying so. Without any device
 * the program says why and exits 0.
 *
 *   kernel_from_source examples/saxpy.py
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "nbcuda.h"

#define SIGNATURE "void(float32[::1], float32, float32[::1], float32[::1])"

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *text = NULL;
  long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (text = malloc((size_t)n + 1)) &&
      fread(text, 1, (size_t)n, f) == (size_t)n) {
    text[n] = '\0';
  } else {
    free(text);
    text = NULL;
  }
  fclose(f);
  return text;
}

#define CHECK(call)                                                                        \
  do {                                                                                     \
    if ((call) != NBC_OK) {                                                                \
      fprintf(stderr, "kernel_from_source: %s: %s\n", #call, nbc_last_error());            \
      return 1;                                                                            \
    }                                                                                      \
  } while (0)

enum { N = 1 << 16 };

/* Launches k over n elements (r = a * x + y) and reports what is loaded after it. */
static int launch(nbc_kernel_t *k, int which, nbc_devptr_t r, float a, nbc_devptr_t x,
                  nbc_devptr_t y, nbc_function_t **pfn) {
  static const int64_t n = N;
  nbc_arg_t args[4] = {nbc_arg_array(r, 'f', 4, 1, &n, NULL), nbc_arg_float(a),
                       nbc_arg_array(x, 'f', 4, 1, &n, NULL),
                       nbc_arg_array(y, 'f', 4, 1, &n, NULL)};
  unsigned grid[3] = {N / 256, 1, 1}, block[3] = {256, 1, 1};
  CHECK(nbc_kernel_launch(k, grid, block, 0, NULL, args, 4));
  CHECK(nbc_kernel_function(k, pfn));
  printf("kernel_from_source: launch %d: function %p, code loaded %lu time(s)\n", which,
         nbc_function_handle(*pfn), nbc_kernel_load_count(k));
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: kernel_from_source SAXPY.py\n");
    return 2;
  }
  char *text = read_file(argv[1]);
  if (!text) {
    fprintf(stderr, "kernel_from_source: cannot read %s\n", argv[1]);
    return 1;
  }
  int count = 0;
  if (nbc_device_count(&count) != NBC_OK || count == 0) {
    printf("kernel_from_source: no GPU to run on (%s); nothing launched\n",
           count == 0 && nbc_last_error()[0] == '\0' ? "no device" : nbc_last_error());
    free(text);
    return 0;
  }
  nbc_source_t source = {.text = text, .filename = argv[1]};
  nbc_kernel_t *k = NULL;
  CHECK(nbc_kernel_create(&source, "saxpy", SIGNATURE, NULL, NULL, NULL, &k));
  static float x[N], y[N], r[N];
  for (int i = 0; i < N; i++) {
    x[i] = (float)(i % 1000) * 0.001f;
    y[i] = (float)(i % 77) - 38.0f;
  }
  nbc_devptr_t dr, dx, dy;
  CHECK(nbc_mem_alloc(sizeof r, &dr));
  CHECK(nbc_mem_alloc(sizeof x, &dx));
  CHECK(nbc_mem_alloc(sizeof y, &dy));
  CHECK(nbc_memcpy_htod(dx, x, sizeof x));
  CHECK(nbc_memcpy_htod(dy, y, sizeof y));
  const float a = 2.5f;
  nbc_function_t *first = NULL, *second = NULL;
  if (launch(k, 1, dr, a, dx, dy, &first) != 0) return 1;
  if (launch(k, 2, dr, 1.0f, dx, dr, &second) != 0) return 1; /* r = x + r */
  if (first != second || nbc_kernel_load_count(k) != 1) {
    fprintf(stderr, "kernel_from_source: the second launch loaded the code again\n");
    return 1;
  }
  printf("kernel_from_source: the second launch reused the module the first loaded\n");
  CHECK(nbc_synchronize());
  CHECK(nbc_memcpy_dtoh(r, dr, sizeof r));
  int bad = 0;
  const char *software = getenv("NBCUDA_TESTDRIVER");
  if (software && *software) {
    printf("kernel_from_source: value check skipped: the driver is nbcuda's software test "
           "driver, which counts launches but runs no kernel\n");
  } else {
    for (int i = 0; i < N; i++) {
      float want = (a + 1.0f) * x[i] + y[i];
      if (fabsf(r[i] - want) > 1e-5f * fabsf(want) + 1e-5f) bad++;
    }
    printf("kernel_from_source: %s on %d elements (%d mismatches)\n",
           bad ? "FAILED" : "correct", N, bad);
  }
  nbc_mem_free(dr);
  nbc_mem_free(dx);
  nbc_mem_free(dy);
  nbc_kernel_destroy(k);
  free(text);
  return bad ? 1 : 0;
}
