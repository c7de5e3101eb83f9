/* test_host_transpose.c — nbc_transpose2d: the device transpose behind numba's
 * DeviceNDArray.transpose()/.T. The kernels' PTX passes ptxas; transposes of every word
 * width (1, 2, 4, 8 bytes), of 16-byte items, of strided and of only 4-byte-aligned views
 * come back equal to the transpose computed here on the host; a tall array runs more
 * columns than the grid is high; a context reset unloads the module and the next transpose
 * loads it again; bad arguments are refused.
 *
 * The transposed values are checked where the kernel really runs: on the GPU machine
 * (tests/gpu/run.sh ctest). The software test driver runs no kernel code, so there those
 * checks skip and only the launches, the module's life and the argument checks are tested.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host/host.h"
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

TEST(kernels_pass_ptxas) {
  const char *ptx = nbc__transpose_ptx();
  ASSERT(ptx != NULL);
  for (int w = 1; w <= 8; w *= 2) {
    char name[32];
    snprintf(name, sizeof name, "nbc_transpose_w%d(", w);
    ASSERT(strstr(ptx, name) != NULL);
  }
  char log[4096] = "";
  int rc = ptx_check_ptxas(ptx, strlen(ptx), 0, log, sizeof log);
  if (rc < 0) SKIP("ptxas not found");
  if (rc != 0) fprintf(stderr, "%s\n", log);
  ASSERT_EQ(rc, 0);
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
  /* 4 threads per block in y and at most 65535 blocks: 300000 columns need the y loop */
  check_transpose(2, 300000, 300000 * 4, 4, 4, 0);
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

TEST(reset_unloads_and_the_next_transpose_reloads) {
  REQUIRE_DRIVER();
  check_transpose(3, 4, 16, 4, 4, 0);
  ASSERT_OK(nbc_close()); /* pops, and on this (the first) thread resets every device */
  check_transpose(4, 3, 12, 4, 4, 0);
  if (tdrv_present()) ASSERT_EQ(tdrv()->live_modules(), 1); /* the old module is gone */
}

TEST_LIST(X(kernels_pass_ptxas) X(every_word_width_and_layout)
              X(more_columns_than_the_grid_is_high) X(empty_and_bad_arguments)
                  X(reset_unloads_and_the_next_transpose_reloads))
TEST_MAIN()
