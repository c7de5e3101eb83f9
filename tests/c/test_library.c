/* test_library.c — the library kernels (the .py files of src/library, embedded at build) and
 * nbc_transpose2d, the device transpose behind numba's DeviceNDArray.transpose()/.T, compiled
 * from src/library/transpose.py. Every library kernel is embedded and found by name; a
 * template is filled, and a placeholder without a value is refused by name. The transpose
 * kernels compile from the embedded source and their PTX passes ptxas; transposes of every
 * word width (1, 2, 4, 8 bytes), of 16-byte items, of strided and of only 4-byte-aligned views
 * come back equal to the transpose computed here on the host; a wide array runs more column
 * tiles than one block each, a tall one more row tiles than the grid is high; a context reset
 * unloads the module and the next transpose loads it again; bad arguments are refused; a
 * user's NBCUDA_MAX_SOURCE_SIZE does not stop the library's own compile.
 *
 * The transposed values are checked where the kernel really runs: on the GPU machine
 * (tests/gpu/run.sh ctest). The software test driver runs no kernel code, so there those
 * checks skip and only the launches, the module's life and the argument checks are tested.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nbcuda.h"
#include "ptx_check.h"
#include "test.h"
#include "testdriver.h"

/* 1 when kernels run here (a real driver with a device): the transposed values can be
 * checked; the test driver and the toolkit's stub run no kernel code. */
static int kernels_run(void) {
  int n = 0;
  return !tdrv_present() && !nbc_driver_init_error() && nbc_device_count(&n) == NBC_OK &&
         n > 0 && !tdrv_is_fixture(nbc_driver_path());
}

/* Skips a test whose every check is a transposed value, unless kernels run here. */
#define REQUIRE_KERNELS_RUN()                                                                  \
  do {                                                                                         \
    if (!kernels_run()) SKIP("needs a real GPU: the transposed values come from the kernel");  \
  } while (0)

TEST(every_library_kernel_is_embedded) {
  static const char *const names[] = {
      "cmath",           "transpose",        "random",          "reduce",
      "vectorize",       "gufunc",           "npyfuncs",        "arraymath_sum",
      "arraymath_mean",  "arraymath_extreme", "arraymath_truth", "arraymath_nansum",
      "arraymath_nanmean", "arraymath_nanextreme", "arraymath_count", "iterable_sum",
      "iterable_minmax"};
  for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
    size_t size = 0;
    const char *text = nbc_library_kernel_source(names[k], &size);
    if (!text) fprintf(stderr, "no library kernel %s\n", names[k]);
    ASSERT(text != NULL);
    ASSERT(size > 0 && strlen(text) == size);
  }
  size_t size = 1;
  ASSERT(nbc_library_kernel_source("no_such_kernel", &size) == NULL);
  ASSERT_EQ(size, 0);
  ASSERT(nbc_library_kernel_source(NULL, NULL) == NULL);
}

TEST(templates_are_filled_by_name) {
  static const char *const pairs[] = {"NAME", "f", "PARAMS", "a0, a1", "ARGS",
                                      "a0[__tid__], a1[__tid__]", NULL};
  char *text = NULL;
  ASSERT_OK(nbc_library_kernel_fill("vectorize", pairs, &text));
  ASSERT(strstr(text, "def __vectorized_f(a0, a1, __out__):") != NULL);
  ASSERT(strstr(text, "__core__(a0[__tid__], a1[__tid__])") != NULL);
  ASSERT(strchr(text, '@') == NULL);
  free(text);
  static const char *const missing[] = {"NAME", "f", NULL};
  ASSERT_STATUS(nbc_library_kernel_fill("vectorize", missing, &text), NBC_INVALID_ARGUMENT);
  ASSERT(text == NULL);
  ASSERT(strstr(nbc_last_error(), "@PARAMS@") != NULL);
  ASSERT_STATUS(nbc_library_kernel_fill("no_such_kernel", pairs, &text), NBC_INVALID_ARGUMENT);
  ASSERT(strstr(nbc_last_error(), "no_such_kernel") != NULL);
  /* a file without placeholders comes back whole; decorators are not placeholders */
  ASSERT_OK(nbc_library_kernel_fill("random", NULL, &text));
  ASSERT(strcmp(text, nbc_library_kernel_source("random", NULL)) == 0);
  free(text);
}

TEST(kernels_pass_ptxas) {
  static const char *const words[] = {"uint8", "uint16", "uint32", "uint64"};
  size_t size;
  const char *text = nbc_library_kernel_source("transpose", &size);
  ASSERT(text != NULL);
  nbc_source_t source = {text, size, "transpose.py", 1, 0};
  nbc_compile_options_t options;
  nbc_compile_options_init(&options);
  options.device = 0;
  options.abi = NBC_ABI_NUMBA;
  for (int w = 1, k = 0; w <= 8; w *= 2, k++) {
    char name[32], sig[96];
    snprintf(name, sizeof name, "transpose_w%d", w);
    snprintf(sig, sizeof sig, "void(%s[:, :, :], %s[:, :, ::1])", words[k], words[k]);
    nbc_compile_result_t *r = NULL;
    nbc_status_t st = nbc_compile(&source, name, sig, &options, NULL, &r);
    if (st == NBC_NO_NVVM) SKIP("libNVVM not found");
    if (st != NBC_OK) fprintf(stderr, "%s\n", nbc_last_error());
    ASSERT_OK(st);
    size_t n;
    const char *ptx = nbc_compile_result_code(r, &n);
    ASSERT(strstr(ptx, ".shared") != NULL && strstr(ptx, "bar.sync") != NULL); /* tiles */
    char log[4096] = "";
    int rc = ptx_check_ptxas(ptx, n, 0, log, sizeof log);
    nbc_compile_result_destroy(r);
    if (rc < 0) SKIP("ptxas not found");
    if (rc != 0) fprintf(stderr, "%s\n", log);
    ASSERT_EQ(rc, 0);
  }
}

/* Transposes the rows x cols view at byte offset `offset` of a buffer holding bytes
 * 0, 1, 2, ... with strides s0, s1 and item size `size`, and compares with the host where
 * kernels run. */
static void check_transpose(uint64_t rows, uint64_t cols, int64_t s0, int64_t s1, size_t size,
                            size_t offset) {
  size_t extent = offset + (size_t)((rows - 1) * (uint64_t)s0 + (cols - 1) * (uint64_t)s1) + size;
  size_t out_bytes = rows * cols * size;
  unsigned char *host = malloc(extent), *back = malloc(out_bytes), *want = malloc(out_bytes);
  ASSERT(host && back && want);
  for (size_t k = 0; k < extent; k++) host[k] = (unsigned char)(k * 7 + 3);
  for (uint64_t i = 0; i < rows; i++)
    for (uint64_t j = 0; j < cols; j++)
      memcpy(want + (j * rows + i) * size, host + offset + i * (uint64_t)s0 + j * (uint64_t)s1,
             size);
  nbc_devptr_t src, dst;
  ASSERT_OK(nbc_mem_alloc(extent, &src));
  ASSERT_OK(nbc_mem_alloc(out_bytes, &dst));
  ASSERT_OK(nbc_memcpy_htod(src, host, extent));
  ASSERT_OK(nbc_transpose2d(dst, src + offset, rows, cols, s0, s1, size, NULL));
  ASSERT_OK(nbc_memcpy_dtoh(back, dst, out_bytes));
  if (kernels_run()) { /* the test driver launches it but computes nothing */
    if (memcmp(back, want, out_bytes) != 0)
      fprintf(stderr, "transpose %llux%llu strides (%lld, %lld) size %zu offset %zu differs\n",
              (unsigned long long)rows, (unsigned long long)cols, (long long)s0,
              (long long)s1, size, offset);
    ASSERT(memcmp(back, want, out_bytes) == 0);
  }
  ASSERT_OK(nbc_mem_free(src));
  ASSERT_OK(nbc_mem_free(dst));
  free(host);
  free(back);
  free(want);
}

TEST(every_word_width_and_layout) {
  REQUIRE_KERNELS_RUN();
  static const size_t sizes[] = {1, 2, 4, 8, 16};
  for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
    size_t z = sizes[k];
    check_transpose(37, 129, (int64_t)(129 * z), (int64_t)z, z, 0);         /* C order */
    check_transpose(37, 129, (int64_t)z, (int64_t)(37 * z), z, 0);          /* F order */
    check_transpose(20, 9, (int64_t)(40 * z), (int64_t)(3 * z), z, 5 * z);  /* a strided view */
    check_transpose(1, 300, (int64_t)(300 * z), (int64_t)z, z, 0);          /* one row */
  }
  check_transpose(6, 7, 7 * 8, 8, 8, 4); /* int64 items only 4-byte aligned: 4-byte words */
  check_transpose(5, 3, 3 * 4, 4, 4, 2); /* 2-byte aligned float32 items */
}

TEST(more_columns_than_the_grid_is_high) {
  REQUIRE_KERNELS_RUN();
  /* 300000 columns: 9375 column tiles of 32 */
  check_transpose(2, 300000, 300000 * 4, 4, 4, 0);
}

TEST(more_rows_than_the_grid_is_high) {
  REQUIRE_KERNELS_RUN();
  /* at most 65535 blocks of 32 rows in y: 2200000 rows need the kernel's loop over tiles */
  check_transpose(2200000, 3, 3 * 2, 2, 2, 0);
}

TEST(empty_and_bad_arguments) {
  REQUIRE_DRIVER();
  nbc_devptr_t p;
  ASSERT_OK(nbc_mem_alloc(64, &p));
  ASSERT_OK(nbc_transpose2d(p, p, 0, 5, 20, 4, 4, NULL)); /* nothing to do */
  ASSERT_OK(nbc_transpose2d(0, 0, 5, 0, 0, 4, 4, NULL));  /* empty arrays have no memory */
  ASSERT_STATUS(nbc_transpose2d(0, p, 2, 2, 8, 4, 4, NULL), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_transpose2d(p, p, 2, 2, -8, 4, 4, NULL), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_transpose2d(p, p, 2, 2, 8, 4, 0, NULL), NBC_INVALID_ARGUMENT);
  ASSERT(strstr(nbc_last_error(), "nbc_transpose2d") != NULL);
  ASSERT_OK(nbc_mem_free(p));
}

TEST(the_users_source_size_limit_is_not_the_librarys) {
  REQUIRE_DRIVER();
  setenv("NBCUDA_MAX_SOURCE_SIZE", "16", 1); /* for the user's code, far below transpose.py */
  check_transpose(3, 5, 20, 4, 4, 0);
}

TEST(reset_unloads_and_the_next_transpose_reloads) {
  REQUIRE_DRIVER();
  check_transpose(3, 4, 16, 4, 4, 0);
  ASSERT_OK(nbc_close()); /* pops, and on this (the first) thread resets every device */
  check_transpose(4, 3, 12, 4, 4, 0);
  if (tdrv_present()) ASSERT_EQ(tdrv()->live_modules(), 1); /* the old module is gone */
}

TEST_LIST(X(every_library_kernel_is_embedded) X(templates_are_filled_by_name)
              X(kernels_pass_ptxas) X(every_word_width_and_layout)
                  X(more_columns_than_the_grid_is_high) X(more_rows_than_the_grid_is_high)
                      X(empty_and_bad_arguments) X(the_users_source_size_limit_is_not_the_librarys)
                          X(reset_unloads_and_the_next_transpose_reloads))
TEST_MAIN()
