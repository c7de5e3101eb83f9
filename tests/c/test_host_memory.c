/* test_host_memory.c — memory, modules and launches: allocation (out of memory, failures),
 * copies both ways (sync, async, device to device, memset, bad addresses), loading PTX
 * (with and without a trailing NUL), bad images, kernel lookup, launches with an argument
 * array and with a packed buffer (the test driver records what it received), refused
 * launches, and nvJitLink links (PTX -> cubin; missing nvJitLink).
 *
 * Runs against the test driver (CI) and the real driver (GPU machine). What the fixture
 * records of a launch, its memory size and fault injection need REQUIRE_TESTDRIVER(); the
 * rest checks what any driver answers (the real driver's error codes for these cases are in
 * tests/testdriver/h200_probe.json) and adds the fixture's counters when it is present.
 * Kernels that compute something on a real GPU are in test_gpu.c.
 */
#include <pthread.h>
#include <sys/stat.h>

#include "nbcuda.h"
#include "test.h"
#include "testdriver.h"
#include "host_util.h"

static const char ptx[] = ".version 8.0\n.target sm_75\n.address_size 64\n"
                          ".visible .entry empty()\n{\n  ret;\n}\n"
                          ".visible .entry scale(\n  .param .u64 scale_p0,\n"
                          "  .param .f32 scale_p1,\n  .param .u32 scale_p2\n)\n{\n  ret;\n}\n";

static void expect_live_allocations(int n) {
  if (tdrv_present()) ASSERT_EQ(live_allocations_released(), n);
}

static void expect_live_modules(int n) {
  if (tdrv_present()) ASSERT_EQ(tdrv()->live_modules(), n);
}

TEST(alloc_copy_free) {
  REQUIRE_DRIVER();
  nbc_devptr_t p = 0, q = 0;
  ASSERT_OK(nbc_mem_alloc(64, &p));
  ASSERT(p != 0);
  if (tdrv_present()) ASSERT_EQ(tdrv()->stack_depth(), 1); /* context created lazily */
  nbc_device_t *cur = NULL;
  ASSERT_OK(nbc_device_current(&cur));
  ASSERT_EQ(nbc_device_id(cur), 0);
  ASSERT_OK(nbc_mem_alloc(64, &q));
  ASSERT(q != p);
  expect_live_allocations(2);
  unsigned char in[64], out[64];
  for (int i = 0; i < 64; i++)
    in[i] = (unsigned char)(i * 3);
  ASSERT_OK(nbc_memcpy_htod(p, in, sizeof in));
  ASSERT_OK(nbc_memcpy_dtod(q, p, sizeof in));
  memset(out, 0, sizeof out);
  ASSERT_OK(nbc_memcpy_dtoh(out, q, sizeof out));
  ASSERT(memcmp(in, out, sizeof in) == 0);
  ASSERT_OK(nbc_memset_d8(q, 0xab, 16));
  ASSERT_OK(nbc_memcpy_dtoh(out, q, sizeof out));
  ASSERT_EQ(out[0], 0xab);
  ASSERT_EQ(out[15], 0xab);
  ASSERT_EQ(out[16], in[16]);
  ASSERT_OK(nbc_mem_free(p));
  ASSERT_OK(nbc_mem_free(q));
  ASSERT_OK(nbc_mem_free(0));
  expect_live_allocations(0);
  ASSERT_STATUS(nbc_mem_free(p), NBC_DRIVER_ERROR); /* double free: the driver refuses */
  ASSERT_STATUS(nbc_mem_alloc(8, NULL), NBC_INVALID_ARGUMENT);
}

/* nbc_mem_alloc_current: the memory and the context it belongs to (created when none is
 * current); 0 bytes finds the context and allocates nothing. */
TEST(alloc_current_says_context) {
  REQUIRE_DRIVER();
  nbc_devptr_t p = 1;
  nbc_context_t *ctx = NULL, *cur = NULL;
  ASSERT_OK(nbc_mem_alloc_current(0, &p, &ctx));
  ASSERT(p == 0 && ctx != NULL);
  if (tdrv_present()) ASSERT_EQ(tdrv()->stack_depth(), 1); /* context created lazily */
  expect_live_allocations(0);
  ASSERT_OK(nbc_current_context(-1, &cur));
  ASSERT(cur == ctx);
  ctx = NULL;
  ASSERT_OK(nbc_mem_alloc_current(256, &p, &ctx));
  ASSERT(p != 0 && ctx == cur);
  expect_live_allocations(1);
  unsigned char in[256], out[256];
  for (int i = 0; i < 256; i++)
    in[i] = (unsigned char)(255 - i);
  ASSERT_OK(nbc_memcpy_htod(p, in, sizeof in));
  ASSERT_OK(nbc_memcpy_dtoh(out, p, sizeof out));
  ASSERT(memcmp(in, out, sizeof in) == 0);
  ASSERT_OK(nbc_mem_free(p));
  expect_live_allocations(0);
  ASSERT_STATUS(nbc_mem_alloc_current(8, NULL, &ctx), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "pptr is NULL");
  ASSERT_STATUS(nbc_mem_alloc_current(8, &p, NULL), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "pcontext is NULL");
  if (tdrv_present()) {
    tdrv()->fail("cuMemAlloc", 1, 2); /* CUDA_ERROR_OUT_OF_MEMORY */
    ASSERT_STATUS(nbc_mem_alloc_current(64, &p, &ctx), NBC_OUT_OF_MEMORY);
    ASSERT(p == 0);
    expect_live_allocations(0);
  }
}

TEST(async_copies) {
  REQUIRE_DRIVER();
  nbc_stream_t *s;
  ASSERT_OK(nbc_stream_create(&s));
  nbc_devptr_t p;
  ASSERT_OK(nbc_mem_alloc(4, &p));
  int x = 42, y = 0;
  ASSERT_OK(nbc_memcpy_htod_async(p, &x, sizeof x, s));
  ASSERT_OK(nbc_memcpy_dtoh_async(&y, p, sizeof y, s));
  ASSERT_OK(nbc_stream_synchronize(s));
  ASSERT_EQ(y, 42);
  x = 7;
  ASSERT_OK(nbc_memcpy_htod_async(p, &x, sizeof x, NULL));
  ASSERT_OK(nbc_memcpy_dtoh_async(&y, p, sizeof y, NULL));
  ASSERT_OK(nbc_stream_synchronize(NULL));
  ASSERT_EQ(y, 7);
  ASSERT_OK(nbc_memset_d8_async(p, 0x5a, 3, s)); /* ordered after the copies, before the read */
  ASSERT_OK(nbc_memcpy_dtoh_async(&y, p, sizeof y, s));
  ASSERT_OK(nbc_stream_synchronize(s));
  ASSERT_EQ((unsigned)y, 0x005a5a5au); /* 7 is 07 00 00 00: three bytes set */
  ASSERT_OK(nbc_mem_free(p));
  nbc_stream_destroy(s);
}

/* 1 PiB exceeds any device: the driver's CUDA_ERROR_OUT_OF_MEMORY with nbcuda's context. */
TEST(out_of_memory_any_driver) {
  REQUIRE_DRIVER();
  size_t huge = (size_t)1 << 50;
  nbc_devptr_t p = 1;
  ASSERT_STATUS(nbc_mem_alloc(huge, &p), NBC_OUT_OF_MEMORY);
  ASSERT(p == 0);
  char expected[160];
  snprintf(expected, sizeof expected,
           "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (2) (allocating %zu bytes on device 0)", huge);
  ASSERT_STREQ(nbc_last_error(), expected);
  ASSERT_EQ(nbc_last_driver_error(), 2);
  ASSERT_OK(nbc_mem_alloc(1024, &p)); /* nothing sticky */
  ASSERT_OK(nbc_mem_free(p));
}

TEST(out_of_memory) {
  REQUIRE_TESTDRIVER();
  setenv("NBCUDA_TESTDRIVER_MEM", "1M", 1);
  nbc_devptr_t p = 1;
  ASSERT_STATUS(nbc_mem_alloc(2 << 20, &p), NBC_OUT_OF_MEMORY);
  ASSERT(p == 0);
  ASSERT_STREQ(
      nbc_last_error(),
      "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (2) (allocating 2097152 bytes on device 0)");
  ASSERT_EQ(nbc_last_driver_error(), 2);
  ASSERT_EQ(tdrv()->live_allocations(), 0);
  ASSERT_OK(nbc_mem_alloc(1024, &p));
  ASSERT_OK(nbc_mem_free(p));
}

/* Freed blocks kept for reuse (src/host/reuse.c): the next allocation of the size takes one
 * back, synchronizing the context first unless a synchronization begun after the free has
 * completed since; sizes do not mix; a double free of a kept block is refused as the driver
 * refuses one; memory info, a release and a reset free them; managed and IPC-exported memory
 * is freed at once; at most 16 are kept (the oldest goes); a failed synchronization falls back
 * to a new allocation. */
TEST(freed_blocks_reused) {
  REQUIRE_TESTDRIVER();
  nbc_context_t *ctx;
  ASSERT_OK(nbc_current_context(-1, &ctx));
  int allocs = tdrv()->calls("cuMemAlloc"), frees = tdrv()->calls("cuMemFree");
  int syncs = tdrv()->calls("cuCtxSynchronize");
  nbc_devptr_t p, q, r;
  ASSERT_OK(nbc_mem_alloc(1024, &p));
  ASSERT_OK(nbc_mem_free(p));
  ASSERT_EQ(tdrv()->live_allocations(), 1); /* kept */
  ASSERT_OK(nbc_mem_alloc(1024, &q));
  ASSERT(q == p);
  ASSERT_EQ(tdrv()->calls("cuMemAlloc"), allocs + 1);
  ASSERT_EQ(tdrv()->calls("cuCtxSynchronize"), syncs + 1); /* what cuMemFree waits for */
  ASSERT_OK(nbc_mem_free(q));
  ASSERT_OK(nbc_synchronize());
  ASSERT_OK(nbc_mem_alloc(1024, &q)); /* synchronized after the free: reused at once */
  ASSERT(q == p);
  ASSERT_EQ(tdrv()->calls("cuCtxSynchronize"), syncs + 2);
  ASSERT_OK(nbc_mem_alloc(2048, &r)); /* no block of this size */
  ASSERT_EQ(tdrv()->calls("cuMemAlloc"), allocs + 2);
  ASSERT_OK(nbc_mem_free(q));
  ASSERT_STATUS(nbc_mem_free(q), NBC_DRIVER_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "was freed already");
  ASSERT_OK(nbc_mem_free(r));
  ASSERT_EQ(tdrv()->live_allocations(), 2);
  ASSERT_EQ(tdrv()->calls("cuMemFree"), frees);
  size_t free_bytes, total;
  ASSERT_OK(nbc_context_get_memory_info(ctx, &free_bytes, &total)); /* counted free */
  ASSERT_EQ(tdrv()->live_allocations(), 0);
  ASSERT_EQ(tdrv()->calls("cuMemFree"), frees + 2);
  /* managed memory and exported memory: freed at once */
  ASSERT_OK(nbc_mem_alloc_managed(1024, 1, &p));
  ASSERT_OK(nbc_mem_free(p));
  ASSERT_EQ(tdrv()->live_allocations(), 0);
  ASSERT_OK(nbc_mem_alloc(1024, &p));
  nbc_ipc_handle_t h;
  ASSERT_OK(nbc_ipc_get_handle(ctx, p, 0, &h));
  ASSERT_OK(nbc_mem_free(p));
  ASSERT_EQ(tdrv()->live_allocations(), 0);
  /* at most 16 kept: the 17th free pushes the oldest out */
  nbc_devptr_t many[17];
  for (int i = 0; i < 17; i++) ASSERT_OK(nbc_mem_alloc(512 * (size_t)(i + 1), &many[i]));
  frees = tdrv()->calls("cuMemFree");
  for (int i = 0; i < 17; i++) ASSERT_OK(nbc_mem_free(many[i]));
  ASSERT_EQ(tdrv()->calls("cuMemFree"), frees + 1);
  ASSERT_EQ(tdrv()->live_allocations(), 16);
  size_t blocks = 0, bytes = 0;
  ASSERT_OK(nbc_context_freed_kept(ctx, &blocks, &bytes)); /* sizes 2 to 17 times 512 */
  ASSERT_EQ(blocks, 16);
  ASSERT_EQ(bytes, 512 * (17 * 18 / 2 - 1));
  ASSERT_OK(nbc_mem_alloc(512, &p)); /* the oldest's size: gone, a new one */
  ASSERT_OK(nbc_mem_alloc(512 * 17, &q)); /* the newest's: kept */
  ASSERT(q == many[16]);
  ASSERT_OK(nbc_mem_free(p));
  ASSERT_OK(nbc_mem_free(q));
  ASSERT_OK(nbc_context_release_freed(ctx));
  ASSERT_EQ(tdrv()->live_allocations(), 0);
  ASSERT_OK(nbc_context_freed_kept(ctx, &blocks, NULL));
  ASSERT_EQ(blocks, 0);
  ASSERT_OK(nbc_context_release_freed(ctx)); /* nothing left: nothing to do */
  /* the driver refusing to free a kept block: the release says so, naming the block */
  ASSERT_OK(nbc_mem_alloc(1024, &p));
  ASSERT_OK(nbc_mem_free(p));
  tdrv()->fail("cuMemFree", 1, 999);
  ASSERT_STATUS(nbc_context_release_freed(ctx), NBC_DRIVER_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "cuMemFree: CUDA_ERROR_UNKNOWN (999) (address 0x");
  ASSERT_CONTAINS(nbc_last_error(), "a freed block kept for reuse)");
  ASSERT_EQ(tdrv()->live_allocations(), 1); /* the driver still holds it; a reset frees it */
  ASSERT_STATUS(nbc_mem_free(p), NBC_DRIVER_ERROR); /* still known as freed */
  ASSERT_CONTAINS(nbc_last_error(), "was freed already");
  /* a failed synchronization: the kept block is freed, a new one allocated */
  ASSERT_OK(nbc_mem_alloc(1024, &p));
  ASSERT_OK(nbc_mem_free(p));
  tdrv()->fail("cuCtxSynchronize", 1, 999);
  allocs = tdrv()->calls("cuMemAlloc");
  ASSERT_OK(nbc_mem_alloc(1024, &q));
  ASSERT_EQ(tdrv()->calls("cuMemAlloc"), allocs + 1);
  ASSERT_EQ(tdrv()->live_allocations(), 2);
  /* a reset frees the kept blocks with the rest */
  ASSERT_OK(nbc_mem_alloc(4096, &r));
  ASSERT_OK(nbc_mem_free(r));
  ASSERT_EQ(tdrv()->live_allocations(), 3);
  ASSERT_OK(nbc_context_reset(ctx));
  ASSERT_EQ(tdrv()->live_allocations(), 0);
  ASSERT_OK(nbc_mem_alloc(4096, &r)); /* the reset's blocks are never handed out */
  ASSERT_OK(nbc_mem_free(r));
  ASSERT_STATUS(nbc_context_release_freed(NULL), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_context_freed_kept(NULL, NULL, NULL), NBC_INVALID_ARGUMENT);
}

/* The 32 MiB a context keeps at most: a block that does not fit pushes out as many of the
 * oldest as it needs (each freed), and a block above 4 MiB is not kept. */
TEST(kept_bytes_limited) {
  REQUIRE_TESTDRIVER();
  nbc_context_t *ctx;
  ASSERT_OK(nbc_current_context(-1, &ctx));
  ASSERT_OK(nbc_context_release_freed(ctx));
  nbc_devptr_t small[4], big[8];
  for (int i = 0; i < 4; i++) ASSERT_OK(nbc_mem_alloc(1024, &small[i]));
  for (int i = 0; i < 8; i++) ASSERT_OK(nbc_mem_alloc((size_t)4 << 20, &big[i]));
  for (int i = 0; i < 4; i++) ASSERT_OK(nbc_mem_free(small[i]));
  int frees = tdrv()->calls("cuMemFree");
  for (int i = 0; i < 7; i++) ASSERT_OK(nbc_mem_free(big[i]));
  ASSERT_EQ(tdrv()->calls("cuMemFree"), frees); /* 28 MiB and 4 KiB kept */
  ASSERT_OK(nbc_mem_free(big[7])); /* 4 MiB more: the four small ones go */
  ASSERT_EQ(tdrv()->calls("cuMemFree"), frees + 4);
  ASSERT_EQ(tdrv()->live_allocations(), 8);
  nbc_devptr_t p;
  ASSERT_OK(nbc_mem_alloc((size_t)4 << 20, &p));
  ASSERT(p == big[7]); /* the newest of its size */
  ASSERT_OK(nbc_mem_free(p));
  ASSERT_OK(nbc_mem_alloc(((size_t)4 << 20) + 1, &p)); /* too large to keep */
  ASSERT_OK(nbc_mem_free(p));
  ASSERT_EQ(tdrv()->live_allocations(), 8);
  ASSERT_OK(nbc_context_release_freed(ctx));
  ASSERT_EQ(tdrv()->live_allocations(), 0);
}

/* While another device's primary context is active (nbcuda's here), a free goes to the
 * driver: work there (a peer copy, a kernel with peer access) could still read the block. */
TEST(no_reuse_while_another_device_is_active) {
  REQUIRE_TESTDRIVER();
  REQUIRE_DEVICES(2);
  nbc_device_t *d1;
  nbc_context_t *c1;
  ASSERT_OK(nbc_device_get(1, &d1));
  nbc_devptr_t p;
  ASSERT_OK(nbc_mem_alloc(1024, &p));
  ASSERT_OK(nbc_device_primary_context(d1, &c1)); /* device 1's primary context retained */
  int frees = tdrv()->calls("cuMemFree");
  ASSERT_OK(nbc_mem_free(p));
  ASSERT_EQ(tdrv()->calls("cuMemFree"), frees + 1);
  ASSERT_OK(nbc_device_release_primary_context(d1));
  ASSERT_OK(nbc_mem_alloc(1024, &p));
  ASSERT_OK(nbc_mem_free(p)); /* device 0 alone again: kept */
  ASSERT_EQ(tdrv()->calls("cuMemFree"), frees + 1);
}

/* A kept block whose reuse would need a synchronization while kernels were launched since its
 * free stays kept: the allocation goes to the driver and waits for nothing. After a
 * synchronization the block is reused without another. */
TEST(no_reuse_wait_for_kernels_launched_after_the_free) {
  REQUIRE_TESTDRIVER();
  nbc_module_t *m;
  nbc_function_t *f;
  ASSERT_OK(nbc_module_load_data(ptx, strlen(ptx), NBC_IMAGE_AUTO, &m));
  ASSERT_OK(nbc_module_get_function(m, "empty", &f));
  unsigned one[3] = {1, 1, 1};
  nbc_devptr_t p, q, r;
  ASSERT_OK(nbc_mem_alloc(1024, &p));
  ASSERT_OK(nbc_mem_free(p));
  ASSERT_OK(nbc_launch(f, one, one, 0, NULL, NULL)); /* after the free */
  int allocs = tdrv()->calls("cuMemAlloc"), syncs = tdrv()->calls("cuCtxSynchronize");
  ASSERT_OK(nbc_mem_alloc(1024, &q));
  ASSERT(q != p);
  ASSERT_EQ(tdrv()->calls("cuMemAlloc"), allocs + 1);
  ASSERT_EQ(tdrv()->calls("cuCtxSynchronize"), syncs);
  ASSERT_OK(nbc_synchronize());
  ASSERT_OK(nbc_mem_alloc(1024, &r)); /* synchronized since: reused at once */
  ASSERT(r == p);
  ASSERT_EQ(tdrv()->calls("cuMemAlloc"), allocs + 1);
  ASSERT_EQ(tdrv()->calls("cuCtxSynchronize"), syncs + 1);
  ASSERT_OK(nbc_mem_free(q));
  ASSERT_OK(nbc_mem_free(r));
  nbc_module_destroy(m);
}

/* A reuse whose synchronization fails frees the block and allocates anew; when the driver
 * refuses that free too, the block stays known until a reset frees it. */
TEST(failed_reuse_keeps_what_the_driver_holds) {
  REQUIRE_TESTDRIVER();
  nbc_context_t *ctx;
  ASSERT_OK(nbc_current_context(-1, &ctx));
  nbc_devptr_t p, q;
  ASSERT_OK(nbc_mem_alloc(1024, &p));
  ASSERT_OK(nbc_mem_free(p));
  tdrv()->fail("cuCtxSynchronize", 1, 999);
  tdrv()->fail("cuMemFree", 1, 999);
  ASSERT_OK(nbc_mem_alloc(1024, &q));
  ASSERT(q != p);
  ASSERT_EQ(tdrv()->live_allocations(), 2);
  ASSERT_OK(nbc_context_reset(ctx));
  ASSERT_EQ(tdrv()->live_allocations(), 0);
}

/* An allocation that runs out of memory frees the kept blocks and tries again. */
TEST(kept_blocks_freed_when_out_of_memory) {
  REQUIRE_TESTDRIVER();
  setenv("NBCUDA_TESTDRIVER_MEM", "1M", 1);
  nbc_devptr_t p[3], q;
  for (int i = 0; i < 3; i++) ASSERT_OK(nbc_mem_alloc((size_t)256 << 10, &p[i]));
  for (int i = 0; i < 3; i++) ASSERT_OK(nbc_mem_free(p[i]));
  ASSERT_EQ(tdrv()->live_allocations(), 3);
  ASSERT_OK(nbc_mem_alloc((size_t)512 << 10, &q));
  ASSERT_EQ(tdrv()->live_allocations(), 1);
  ASSERT_OK(nbc_mem_free(q));
}

TEST(copy_failures) {
  REQUIRE_TESTDRIVER();
  int x = 0;
  nbc_devptr_t p;
  ASSERT_OK(nbc_mem_alloc(4, &p));
  ASSERT_STATUS(nbc_memcpy_htod(p + 4096, &x, sizeof x), NBC_DRIVER_ERROR);
  ASSERT_STREQ(nbc_last_error(), "cuMemcpyHtoD: CUDA_ERROR_INVALID_VALUE (1) (4 bytes)");
  ASSERT_STATUS(nbc_memcpy_dtoh(&x, p, 64), NBC_DRIVER_ERROR); /* past the end */
  tdrv()->fail("cuMemcpyDtoD", 1, 700);
  ASSERT_STATUS(nbc_memcpy_dtod(p, p, 4), NBC_DRIVER_ERROR);
  ASSERT_STREQ(nbc_last_error(), "cuMemcpyDtoD: CUDA_ERROR_ILLEGAL_ADDRESS (700) (4 bytes)");
  tdrv()->fail("cuMemsetD8", 1, 700);
  ASSERT_STATUS(nbc_memset_d8(p, 0, 4), NBC_DRIVER_ERROR);
  tdrv()->fail("cuMemsetD8Async", 1, 700);
  ASSERT_STATUS(nbc_memset_d8_async(p, 0, 4, NULL), NBC_DRIVER_ERROR);
  tdrv()->fail("cuMemcpyHtoDAsync", 1, 700);
  ASSERT_STATUS(nbc_memcpy_htod_async(p, &x, 4, NULL), NBC_DRIVER_ERROR);
  tdrv()->fail("cuMemcpyDtoHAsync", 1, 700);
  ASSERT_STATUS(nbc_memcpy_dtoh_async(&x, p, 4, NULL), NBC_DRIVER_ERROR);
  ASSERT_OK(nbc_mem_free(p)); /* kept for reuse: no driver call */
  ASSERT_STATUS(nbc_mem_free(p), NBC_DRIVER_ERROR); /* a double free, refused as the driver's */
  ASSERT_CONTAINS(nbc_last_error(), "cuMemFree: CUDA_ERROR_INVALID_VALUE (1) (address 0x");
  ASSERT_CONTAINS(nbc_last_error(), "was freed already)");
  ASSERT_EQ(live_allocations_released(), 0);
  /* A block too large to keep goes to the driver, whose failure is the free's. */
  nbc_devptr_t big;
  ASSERT_OK(nbc_mem_alloc((size_t)8 << 20, &big));
  tdrv()->fail("cuMemFree", 1, 999);
  ASSERT_STATUS(nbc_mem_free(big), NBC_DRIVER_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "cuMemFree: CUDA_ERROR_UNKNOWN (999) (address 0x");
  ASSERT_EQ(tdrv()->live_allocations(), 1);
  ASSERT_OK(nbc_mem_free(big)); /* still tracked, freed now */
  ASSERT_EQ(tdrv()->live_allocations(), 0);
  ASSERT_STATUS(nbc_mem_free(big), NBC_DRIVER_ERROR); /* double free: the driver refuses */
}

TEST(copy_creates_context_when_none) {
  /* A pointer from another thread's context: a fresh thread has no context; the copy makes
   * one (device 0's primary, as numba's require_context would) and retries. */
  REQUIRE_DRIVER();
  nbc_devptr_t p;
  ASSERT_OK(nbc_mem_alloc(4, &p));
  nbc_context_t *c;
  ASSERT_OK(nbc_current_context(-1, &c));
  ASSERT_OK(nbc_context_pop(c));
  nbc_device_t *cur = (nbc_device_t *)1;
  ASSERT_OK(nbc_device_current(&cur));
  ASSERT(cur == NULL);
  int x = 5, y = 0;
  ASSERT_OK(nbc_memcpy_htod(p, &x, sizeof x));
  /* The fixture refuses a copy without a context, so one was made; a real driver may copy
   * through unified addressing without one. */
  if (tdrv_present()) ASSERT_EQ(tdrv()->stack_depth(), 1);
  ASSERT_OK(nbc_memcpy_dtoh(&y, p, sizeof y));
  ASSERT_EQ(y, 5);
}

TEST(alloc_failure_injected) {
  REQUIRE_TESTDRIVER();
  nbc_devptr_t p;
  tdrv()->fail("cuMemAlloc", 1, 999);
  ASSERT_STATUS(nbc_mem_alloc(8, &p), NBC_DRIVER_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "cuMemAlloc: CUDA_ERROR_UNKNOWN (999)");
}

/* More allocations than the address table keeps spare records for (64), freed in two orders,
 * then the rest dropped by a reset of their context: every one is known until freed. */
TEST(many_allocations_and_reset) {
  REQUIRE_DRIVER();
  enum { N = 200 };
  nbc_devptr_t p[N];
  for (int i = 0; i < N; i++) ASSERT_OK(nbc_mem_alloc(16 + (size_t)i, &p[i]));
  expect_live_allocations(N);
  for (int i = 0; i < N; i += 2) ASSERT_OK(nbc_mem_free(p[i]));
  for (int i = N - 1; i > N / 2; i -= 2) ASSERT_OK(nbc_mem_free(p[i]));
  for (int i = 0; i < N; i += 2) ASSERT_OK(nbc_mem_alloc(8, &p[i]));
  expect_live_allocations(N - N / 4);
  nbc_context_t *ctx = NULL;
  ASSERT_OK(nbc_current_context(-1, &ctx));
  ASSERT_OK(nbc_context_reset(ctx));
  expect_live_allocations(0);
  nbc_devptr_t q;
  ASSERT_OK(nbc_mem_alloc(8, &q)); /* the table still works after the reset */
  expect_live_allocations(1);
  ASSERT_OK(nbc_mem_free(q));
  expect_live_allocations(0);
}

/* nbc_memcpy_dtoh_pageable: the bytes of a direct copy at every size (through the context's
 * page-locked buffer up to 1 MiB, grown as needed, directly beyond), the driver's error
 * status when the copy fails, and the buffer freed by a reset of its context and made anew
 * after it. */
TEST(staged_copy_to_pageable) {
  REQUIRE_DRIVER();
  enum { BIG = (2 << 20) + 3 };
  unsigned char *in = malloc(BIG), *out = malloc(BIG);
  ASSERT(in && out);
  for (size_t i = 0; i < BIG; i++) in[i] = (unsigned char)(i * 7 + (i >> 12));
  nbc_devptr_t p;
  ASSERT_OK(nbc_mem_alloc(BIG, &p));
  ASSERT_OK(nbc_memcpy_htod(p, in, BIG));
  int hosts = tdrv_present() ? tdrv()->live_host_allocations() : 0;
  static const size_t sizes[] = {0, 1, 8, 4096, 65536, 65537, 300000, 1 << 20, (1 << 20) + 1,
                                 BIG, 5};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    memset(out, 0xee, BIG);
    ASSERT_OK(nbc_memcpy_dtoh_pageable(out, p + 3, sizes[k] > BIG - 3 ? BIG - 3 : sizes[k]));
    size_t n = sizes[k] > BIG - 3 ? BIG - 3 : sizes[k];
    ASSERT(memcmp(out, in + 3, n) == 0);
    if (n < BIG) ASSERT_EQ(out[n], 0xee); /* nothing written past the end */
  }
  if (tdrv_present()) { /* one buffer, grown to 1 MiB (the older ones freed) */
    ASSERT_EQ(tdrv()->live_host_allocations(), hosts + 1);
    tdrv()->fail("cuMemcpyDtoH", 1, 700);
    ASSERT_STATUS(nbc_memcpy_dtoh_pageable(out, p, 64), NBC_DRIVER_ERROR);
    ASSERT_STREQ(nbc_last_error(), "cuMemcpyDtoH: CUDA_ERROR_ILLEGAL_ADDRESS (700) (64 bytes)");
    ASSERT_STATUS(nbc_memcpy_dtoh_pageable(out, p + BIG, 64), NBC_DRIVER_ERROR); /* past it */
  }
  nbc_context_t *ctx = NULL;
  ASSERT_OK(nbc_current_context(-1, &ctx));
  ASSERT_OK(nbc_context_reset(ctx)); /* frees p and the buffer */
  if (tdrv_present()) ASSERT_EQ(tdrv()->live_host_allocations(), hosts);
  ASSERT_OK(nbc_mem_alloc(64, &p));
  ASSERT_OK(nbc_memcpy_htod(p, in, 64));
  memset(out, 0, 64);
  ASSERT_OK(nbc_memcpy_dtoh_pageable(out, p, 64));
  ASSERT(memcmp(out, in, 64) == 0);
  ASSERT_OK(nbc_mem_free(p));
  free(in);
  free(out);
}

enum { THREAD_ROUNDS = 500 };

static void *alloc_free_rounds(void *failed) {
  for (int i = 0; i < THREAD_ROUNDS; i++) {
    nbc_devptr_t a = 0, b = 0;
    if (nbc_mem_alloc(32, &a) != NBC_OK || nbc_mem_alloc(64, &b) != NBC_OK ||
        nbc_mem_free(a) != NBC_OK || nbc_mem_free(b) != NBC_OK) {
      *(int *)failed = 1;
      break;
    }
  }
  return NULL;
}

/* Threads copying at once through the staging buffer (or, finding it busy, directly): every
 * thread reads its own bytes. */
static nbc_devptr_t staged_src;

static void *staged_copy_rounds(void *arg) {
  int id = *(int *)arg;
  unsigned char buf[4096];
  for (int i = 0; i < THREAD_ROUNDS; i++) {
    if (nbc_memcpy_dtoh_pageable(buf, staged_src + (nbc_devptr_t)id * 4096, sizeof buf) !=
            NBC_OK ||
        buf[0] != id || buf[4095] != id) {
      *(int *)arg = -1;
      break;
    }
  }
  return NULL;
}

TEST(staged_copies_from_threads) {
  REQUIRE_DRIVER();
  unsigned char in[4 * 4096];
  for (int t = 0; t < 4; t++) memset(in + t * 4096, t, 4096);
  ASSERT_OK(nbc_mem_alloc(sizeof in, &staged_src));
  ASSERT_OK(nbc_memcpy_htod(staged_src, in, sizeof in));
  pthread_t t[4];
  int ids[4] = {0, 1, 2, 3};
  for (int i = 0; i < 4; i++)
    ASSERT_EQ(pthread_create(&t[i], NULL, staged_copy_rounds, &ids[i]), 0);
  for (int i = 0; i < 4; i++) ASSERT_EQ(pthread_join(t[i], NULL), 0);
  for (int i = 0; i < 4; i++) ASSERT_EQ(ids[i], i);
  ASSERT_OK(nbc_mem_free(staged_src));
}

/* Four threads allocating and freeing at once share the address table. */
TEST(allocations_from_threads) {
  REQUIRE_DRIVER();
  pthread_t t[4];
  int failed[4] = {0};
  for (int i = 0; i < 4; i++)
    ASSERT_EQ(pthread_create(&t[i], NULL, alloc_free_rounds, &failed[i]), 0);
  for (int i = 0; i < 4; i++) ASSERT_EQ(pthread_join(t[i], NULL), 0);
  for (int i = 0; i < 4; i++) ASSERT_EQ(failed[i], 0);
  expect_live_allocations(0);
}

TEST(module_load_and_launch) {
  REQUIRE_TESTDRIVER();
  nbc_module_t *m = NULL;
  /* Without the trailing NUL: nbcuda adds one. */
  ASSERT_OK(nbc_module_load_data(ptx, strlen(ptx), NBC_IMAGE_AUTO, &m));
  ASSERT_EQ(tdrv()->live_modules(), 1);
  nbc_function_t *f, *g;
  ASSERT_OK(nbc_module_get_function(m, "empty", &f));
  ASSERT_OK(nbc_module_get_function(m, "scale", &g));
  ASSERT(nbc_function_handle(f) != NULL);
  ASSERT(nbc_function_handle(f) != nbc_function_handle(g));
  ASSERT(nbc_function_handle(NULL) == NULL);
  unsigned grid[3] = {4, 2, 1}, block[3] = {128, 1, 1};
  ASSERT_OK(nbc_launch(f, grid, block, 0, NULL, NULL));
  ASSERT_EQ(tdrv()->launch_count(), 1);
  uint64_t ptr = 0x1000;
  float factor = 2.5f;
  uint32_t n = 77;
  void *args[] = {&ptr, &factor, &n};
  nbc_stream_t *s;
  ASSERT_OK(nbc_stream_create(&s));
  ASSERT_OK(nbc_launch(g, grid, block, 256, s, args));
  tdrv_launch_info info;
  ASSERT_EQ(tdrv()->last_launch(&info), 1);
  ASSERT_STREQ(info.function, "scale");
  ASSERT_EQ(info.grid[0], 4);
  ASSERT_EQ(info.grid[1], 2);
  ASSERT_EQ(info.block[0], 128);
  ASSERT_EQ(info.shared_bytes, 256);
  ASSERT_EQ(info.stream, nbc_stream_handle(s));
  ASSERT_EQ(info.nparams, 3);
  uint64_t got_ptr;
  float got_factor;
  uint32_t got_n;
  memcpy(&got_ptr, info.param_bytes + info.param_offset[0], 8);
  memcpy(&got_factor, info.param_bytes + info.param_offset[1], 4);
  memcpy(&got_n, info.param_bytes + info.param_offset[2], 4);
  ASSERT_EQ(got_ptr, 0x1000);
  ASSERT(got_factor == 2.5f);
  ASSERT_EQ(got_n, 77);
  /* The same through one packed buffer: u64 at 0, f32 at 8, u32 at 12. */
  unsigned char packed[16];
  ptr = 0x2000;
  n = 99;
  memcpy(packed, &ptr, 8);
  memcpy(packed + 8, &factor, 4);
  memcpy(packed + 12, &n, 4);
  ASSERT_OK(nbc_launch_packed(g, grid, block, 0, s, packed, sizeof packed));
  ASSERT_EQ(tdrv()->last_launch(&info), 1);
  ASSERT_EQ(info.param_total, 16); /* the buffer is passed as given */
  memcpy(&got_ptr, info.param_bytes, 8);
  memcpy(&got_n, info.param_bytes + 12, 4);
  ASSERT_EQ(got_ptr, 0x2000);
  ASSERT_EQ(got_n, 99);
  ASSERT_OK(nbc_launch_packed(f, grid, block, 0, NULL, NULL, 0));
  ASSERT_EQ(tdrv()->launch_count(), 4);
  ASSERT_EQ(tdrv()->last_launch(&info), 1);
  ASSERT_EQ(info.cooperative, 0);
  /* Cooperatively (cuLaunchKernelEx): the same packed parameters, the launch marked so; a
   * grid larger than the device holds at once is the driver's error. */
  ASSERT_OK(nbc_launch_packed_ex(g, grid, block, 0, s, packed, sizeof packed,
                                 NBC_LAUNCH_COOPERATIVE));
  ASSERT_EQ(tdrv()->last_launch(&info), 1);
  ASSERT_EQ(info.cooperative, 1);
  ASSERT_EQ(info.param_total, 16);
  ASSERT_OK(nbc_launch_packed_ex(g, grid, block, 0, s, packed, sizeof packed, 0));
  ASSERT_EQ(tdrv()->last_launch(&info), 1);
  ASSERT_EQ(info.cooperative, 0);
  unsigned huge[3] = {100000, 1, 1};
  ASSERT_STATUS(nbc_launch_packed_ex(g, huge, block, 0, s, packed, sizeof packed,
                                     NBC_LAUNCH_COOPERATIVE),
                NBC_DRIVER_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE");
  ASSERT_CONTAINS(nbc_last_error(), "cooperative launch of kernel 'scale'");
  ASSERT_STATUS(nbc_launch_packed_ex(g, grid, block, 0, s, packed, sizeof packed, 6),
                NBC_INVALID_ARGUMENT);
  ASSERT_OK(nbc_stream_synchronize(s));
  nbc_stream_destroy(s);
  nbc_module_destroy(m);
  ASSERT_EQ(tdrv()->live_modules(), 0);
  nbc_module_destroy(NULL);
}

TEST(launch_failures) {
  REQUIRE_DRIVER(); /* a zero block is CUDA_ERROR_INVALID_VALUE on the real driver too */
  nbc_module_t *m;
  nbc_function_t *f;
  ASSERT_OK(nbc_module_load_data(ptx, sizeof ptx, NBC_IMAGE_PTX, &m));
  ASSERT_OK(nbc_module_get_function(m, "empty", &f));
  unsigned grid[3] = {1, 1, 1}, bad_block[3] = {0, 1, 1}, block[3] = {32, 1, 1};
  ASSERT_STATUS(nbc_launch(f, grid, bad_block, 0, NULL, NULL), NBC_DRIVER_ERROR);
  ASSERT_STREQ(nbc_last_error(),
               "cuLaunchKernel: CUDA_ERROR_INVALID_VALUE (1) (kernel 'empty', grid (1, 1, 1), "
               "block (0, 1, 1), 0 bytes of shared memory)");
  ASSERT_STATUS(nbc_launch(NULL, grid, block, 0, NULL, NULL), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_launch(f, NULL, block, 0, NULL, NULL), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_launch_packed(f, grid, block, 0, NULL, NULL, 8), NBC_INVALID_ARGUMENT);
  ASSERT_OK(nbc_launch(f, grid, block, 0, NULL, NULL)); /* a good launch still works */
  ASSERT_OK(nbc_synchronize());
  if (!tdrv_present()) {
    nbc_module_destroy(m);
    return;
  }
  ASSERT_EQ(tdrv()->launch_count(), 1);
  tdrv()->set_refuse_launch(1);
  ASSERT_STATUS(nbc_launch(f, grid, block, 0, NULL, NULL), NBC_DRIVER_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "cuLaunchKernel: CUDA_ERROR_NOT_SUPPORTED (801)");
  ASSERT_STATUS(nbc_launch_packed(f, grid, block, 0, NULL, NULL, 0), NBC_DRIVER_ERROR);
  tdrv()->set_refuse_launch(0);
  tdrv()->fail("cuLaunchKernel", 1, 719);
  ASSERT_STATUS(nbc_launch(f, grid, block, 0, NULL, NULL), NBC_DRIVER_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "CUDA_ERROR_LAUNCH_FAILED (719)");
  ASSERT_EQ(tdrv()->launch_count(), 1);
  nbc_module_destroy(m);
}

TEST(module_failures) {
  REQUIRE_DRIVER(); /* garbage and a missing kernel give 200 and 500 on the real driver too */
  nbc_module_t *m = (nbc_module_t *)1;
  static const char junk[] = "this is not PTX";
  ASSERT_STATUS(nbc_module_load_data(junk, sizeof junk, NBC_IMAGE_AUTO, &m), NBC_DRIVER_ERROR);
  ASSERT(m == NULL);
  ASSERT_CONTAINS(nbc_last_error(), "cuModuleLoadDataEx: CUDA_ERROR_INVALID_IMAGE (200)");
  ASSERT_CONTAINS(nbc_last_error(), "loading PTX");
  ASSERT_STATUS(nbc_module_load_data(NULL, 4, NBC_IMAGE_PTX, &m), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_module_load_data(ptx, 0, NBC_IMAGE_PTX, &m), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_module_load_data(ptx, sizeof ptx, (nbc_image_kind_t)42, &m),
                NBC_INVALID_ARGUMENT);
  if (tdrv_present()) {
    tdrv()->fail("cuModuleLoadDataEx", 1, 218);
    ASSERT_STATUS(nbc_module_load_data(ptx, sizeof ptx, NBC_IMAGE_PTX, &m), NBC_DRIVER_ERROR);
    ASSERT_CONTAINS(nbc_last_error(), "CUDA_ERROR_INVALID_PTX (218)");
  }
  ASSERT_OK(nbc_module_load_data(ptx, sizeof ptx, NBC_IMAGE_PTX, &m));
  nbc_function_t *f = (nbc_function_t *)1;
  ASSERT_STATUS(nbc_module_get_function(m, "missing", &f), NBC_DRIVER_ERROR);
  ASSERT(f == NULL);
  ASSERT_STREQ(nbc_last_error(),
               "cuModuleGetFunction: CUDA_ERROR_NOT_FOUND (500) (kernel 'missing')");
  ASSERT_STATUS(nbc_module_get_function(m, NULL, &f), NBC_INVALID_ARGUMENT);
  nbc_module_destroy(m);
  expect_live_modules(0);
}

TEST(link_ptx_with_nvjitlink) {
  struct stat st;
  if (stat("/usr/local/cuda/lib64/libnvJitLink.so.13", &st) != 0) SKIP("no nvJitLink 13");
  REQUIRE_DRIVER();
  nbc_image_t images[1] = {{ptx, strlen(ptx), NBC_IMAGE_PTX, NULL}};
  nbc_module_t *m = NULL;
  ASSERT_OK(
      nbc_module_link(images, 1, &m)); /* PTX -> the device's cubin -> cuModuleLoadDataEx */
  expect_live_modules(1);
  nbc_function_t *f;
  ASSERT_OK(nbc_module_get_function(m, "scale", &f));
  nbc_module_destroy(m);
  expect_live_modules(0);
}

TEST(link_errors) {
  struct stat st;
  if (stat("/usr/local/cuda/lib64/libnvJitLink.so.13", &st) != 0) SKIP("no nvJitLink 13");
  REQUIRE_DRIVER(); /* linking is for the current device's architecture */
  static const char broken[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                               ".visible .entry k()\n{\n  bogus_instruction;\n}\n";
  nbc_image_t images[1] = {{broken, sizeof broken, NBC_IMAGE_PTX, NULL}};
  nbc_module_t *m = NULL;
  ASSERT_STATUS(nbc_module_link(images, 1, &m), NBC_LINK_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "nvJitLink");
  ASSERT(m == NULL);
  ASSERT_STATUS(nbc_module_link(images, 0, &m), NBC_INVALID_ARGUMENT);
  nbc_image_t empty[1] = {{NULL, 0, NBC_IMAGE_PTX, NULL}};
  ASSERT_STATUS(nbc_module_link(empty, 1, &m), NBC_INVALID_ARGUMENT);
}

TEST(link_to_cubin_without_loading) {
  struct stat st;
  if (stat("/usr/local/cuda/lib64/libnvJitLink.so.13", &st) != 0) SKIP("no nvJitLink 13");
  nbc_image_t images[1] = {{ptx, strlen(ptx), NBC_IMAGE_PTX, NULL}};
  void *cubin = NULL;
  size_t size = 0;
  /* an explicit target needs no driver, no context */
  ASSERT_OK(nbc_link_cubin(images, 1, 8, 0, 0, &cubin, &size));
  ASSERT(cubin != NULL && size > 64);
  ASSERT(memcmp(cubin, "\x7f" "ELF", 4) == 0);
  nbc_cubin_free(cubin);
  ASSERT_STATUS(nbc_link_cubin(images, 1, 0, 5, 0, &cubin, &size), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "invalid compute capability 0.5");
  ASSERT(cubin == NULL && size == 0);
  ASSERT_STATUS(nbc_link_cubin(images, 0, 8, 0, 0, &cubin, &size), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_link_cubin(images, 1, 8, 0, 0, NULL, &size), NBC_INVALID_ARGUMENT);
  REQUIRE_DRIVER();
  /* 0, 0: the current device's architecture, as nbc_module_link links for */
  ASSERT_OK(nbc_link_cubin(images, 1, 0, 0, 0, &cubin, &size));
  nbc_module_t *m = NULL;
  ASSERT_OK(nbc_module_load_data(cubin, size, NBC_IMAGE_AUTO, &m));
  nbc_function_t *f;
  ASSERT_OK(nbc_module_get_function(m, "scale", &f));
  nbc_module_destroy(m);
  nbc_cubin_free(cubin);
  nbc_cubin_free(NULL);
}

/* The load option cudadevrt links the toolkit's libcudadevrt.a (grid synchronisation): found
 * under CUDA_HOME, or named by NBCUDA_CUDADEVRT; a missing file is a link error naming it. */
TEST(link_cudadevrt) {
  struct stat st;
  if (stat("/usr/local/cuda/lib64/libnvJitLink.so.13", &st) != 0) SKIP("no nvJitLink 13");
  if (stat("/usr/local/cuda/lib64/libcudadevrt.a", &st) != 0) SKIP("no libcudadevrt.a");
  static const char grid_ptx[] =
      ".version 8.0\n.target sm_80\n.address_size 64\n"
      ".extern .func (.param .b64 func_retval0) cudaCGGetIntrinsicHandle(.param .b32 p0);\n"
      ".extern .func (.param .b32 func_retval0) cudaCGSynchronize(.param .b64 p0, "
      ".param .b32 p1);\n"
      ".visible .entry k()\n{\n  .reg .b64 %rd<2>;\n  .reg .b32 %r<2>;\n"
      "  { .param .b32 a0; st.param.b32 [a0], 1; .param .b64 r0;\n"
      "    call.uni (r0), cudaCGGetIntrinsicHandle, (a0); ld.param.b64 %rd1, [r0]; }\n"
      "  { .param .b64 a0; st.param.b64 [a0], %rd1; .param .b32 a1; st.param.b32 [a1], 0;\n"
      "    .param .b32 r0; call.uni (r0), cudaCGSynchronize, (a0, a1); "
      "ld.param.b32 %r1, [r0]; }\n  ret;\n}\n";
  nbc_image_t images[1] = {{grid_ptx, strlen(grid_ptx), NBC_IMAGE_PTX, NULL}};
  void *cubin = NULL;
  size_t size = 0;
  nbc_module_load_options_t plain = {0}, with = {.cudadevrt = 1};
  ASSERT_STATUS(nbc_link_cubin(images, 1, 8, 0, &plain, &cubin, &size), NBC_LINK_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "cudaCGSynchronize");
  ASSERT_OK(nbc_link_cubin(images, 1, 8, 0, &with, &cubin, &size));
  nbc_cubin_free(cubin);
  setenv("NBCUDA_CUDADEVRT", "/nonexistent/libcudadevrt.a", 1);
  ASSERT_STATUS(nbc_link_cubin(images, 1, 8, 0, &with, &cubin, &size), NBC_LINK_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "NBCUDA_CUDADEVRT=/nonexistent/libcudadevrt.a");
  unsetenv("NBCUDA_CUDADEVRT");
  REQUIRE_DRIVER();
  nbc_module_t *m = NULL;
  ASSERT_OK(nbc_module_load_data_ex(grid_ptx, strlen(grid_ptx), NBC_IMAGE_PTX, &with, &m));
  nbc_function_t *f;
  ASSERT_OK(nbc_module_get_function(m, "k", &f));
  nbc_module_destroy(m);
}

/* A kernel calling bfloat16's wrappers links from compute capability 8.0 (the shim's wrappers
 * exist there); below it the link is refused with a message that says so. */
TEST(link_bfloat16_needs_cc_80) {
  struct stat st;
  if (stat("/usr/local/cuda/lib64/libnvJitLink.so.13", &st) != 0) SKIP("no nvJitLink 13");
  static const char bf16_ptx[] =
      ".version 8.0\n.target sm_75\n.address_size 64\n"
      ".extern .func (.param .b32 func_retval0) nbc_bf16___hadd(.param .b64 p0, "
      ".param .b32 p1, .param .b32 p2);\n"
      ".visible .entry k(.param .u64 out)\n{\n  .reg .b64 %rd<2>;\n  .reg .b32 %r<2>;\n"
      "  ld.param.u64 %rd1, [out];\n"
      "  { .param .b64 a0; st.param.b64 [a0], %rd1; .param .b32 a1; st.param.b32 [a1], 0;\n"
      "    .param .b32 a2; st.param.b32 [a2], 0; .param .b32 r0;\n"
      "    call.uni (r0), nbc_bf16___hadd, (a0, a1, a2); ld.param.b32 %r1, [r0]; }\n"
      "  ret;\n}\n";
  nbc_image_t images[1] = {{bf16_ptx, strlen(bf16_ptx), NBC_IMAGE_PTX, NULL}};
  void *cubin = NULL;
  size_t size = 0;
  nbc_module_load_options_t with = {.fp16 = 1};
  ASSERT_STATUS(nbc_link_cubin(images, 1, 7, 5, &with, &cubin, &size), NBC_LINK_ERROR);
  ASSERT_STREQ(nbc_last_error(), "bfloat16 (numba.cuda.bf16) needs compute capability 8.0 or "
                                 "above, as numba-cuda's: cannot link for sm_75");
  if (stat("/usr/local/cuda/lib64/libnvrtc.so.13", &st) != 0) SKIP("no NVRTC 13");
  ASSERT_OK(nbc_link_cubin(images, 1, 8, 0, &with, &cubin, &size));
  nbc_cubin_free(cubin);
}

TEST(no_nvjitlink) {
  setenv("NBCUDA_NVJITLINK", "/nonexistent/libnvJitLink.so", 1);
  REQUIRE_DRIVER();
  static const unsigned char ltoir[] = {0xED, 0x43, 0x4E, 0x7F, 0, 0, 0, 0};
  nbc_module_t *m = NULL;
  ASSERT_STATUS(nbc_module_load_data(ltoir, sizeof ltoir, NBC_IMAGE_AUTO, &m), NBC_NO_JITLINK);
  ASSERT_CONTAINS(nbc_last_error(), "NBCUDA_NVJITLINK=/nonexistent/libnvJitLink.so");
}

TEST_LIST(X(alloc_copy_free) X(alloc_current_says_context) X(async_copies)
              X(out_of_memory_any_driver) X(out_of_memory) X(freed_blocks_reused)
              X(kept_bytes_limited)
              X(no_reuse_while_another_device_is_active)
              X(no_reuse_wait_for_kernels_launched_after_the_free)
              X(failed_reuse_keeps_what_the_driver_holds)
              X(kept_blocks_freed_when_out_of_memory) X(copy_failures)
              X(copy_creates_context_when_none) X(alloc_failure_injected)
              X(many_allocations_and_reset) X(allocations_from_threads)
              X(staged_copy_to_pageable) X(staged_copies_from_threads)
              X(module_load_and_launch) X(launch_failures) X(module_failures)
              X(link_ptx_with_nvjitlink) X(link_errors) X(link_to_cubin_without_loading)
              X(link_cudadevrt) X(link_bfloat16_needs_cc_80) X(no_nvjitlink))
TEST_MAIN()
