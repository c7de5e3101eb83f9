/* test_host_hostmem.c — host memory the device can reach and deferred cleanup: page-locked
 * allocations (plain, mapped, write-combined), pinning existing memory, device addresses of
 * mapped memory, managed memory, frees queued inside deferred-cleanup scopes (nested, per
 * context, performed by a reset), and memory that outlived a device reset.
 *
 * Runs against the test driver (CI) and the real driver (GPU machine): what the device sees
 * is checked through cuMemsetD8 on the device address and reads on the host, which any driver
 * answers alike. The fixture's counters of live page-locked memory and fault injection need
 * the test driver and are guarded or REQUIRE_TESTDRIVER()'d.
 */
#include <stdlib.h>

#include "nbcuda.h"
#include "test.h"
#include "testdriver.h"
#include "host_util.h"

#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED 712
#define CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED 713

static void expect_host_allocations(int n) {
  if (tdrv_present()) ASSERT_EQ(tdrv()->live_host_allocations(), n);
}

static void expect_registrations(int n) {
  if (tdrv_present()) ASSERT_EQ(tdrv()->live_host_registrations(), n);
}

static void expect_live_allocations(int n) {
  if (tdrv_present()) ASSERT_EQ(live_allocations_released(), n);
}

static int all_bytes(const unsigned char *p, size_t n, unsigned char value) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != value) return 0;
  return 1;
}

TEST(pinned_alloc_copy_free) {
  REQUIRE_DRIVER();
  void *h = NULL, *back = NULL;
  ASSERT_OK(nbc_mem_host_alloc(256, 0, &h));
  ASSERT(h != NULL);
  ASSERT_OK(nbc_mem_host_alloc(256, NBC_HOST_ALLOC_PORTABLE, &back));
  expect_host_allocations(2);
  unsigned char *in = h, *out = back;
  for (int i = 0; i < 256; i++)
    in[i] = (unsigned char)(i * 7);
  nbc_devptr_t d;
  ASSERT_OK(nbc_mem_alloc(256, &d));
  ASSERT_OK(nbc_memcpy_htod(d, in, 256));
  ASSERT_OK(nbc_memcpy_dtoh(out, d, 256));
  ASSERT(memcmp(in, out, 256) == 0);
  ASSERT_OK(nbc_mem_free(d));
  ASSERT_OK(nbc_mem_host_free(h));
  ASSERT_OK(nbc_mem_host_free(back));
  ASSERT_OK(nbc_mem_host_free(NULL));
  expect_host_allocations(0);
  /* A zero-byte request still gives a unique pointer that can be freed. */
  void *z = NULL;
  ASSERT_OK(nbc_mem_host_alloc(0, 0, &z));
  ASSERT(z != NULL);
  ASSERT_OK(nbc_mem_host_free(z));
}

TEST(pinned_alloc_errors) {
  REQUIRE_DRIVER();
  void *h = (void *)1;
  ASSERT_STATUS(nbc_mem_host_alloc(16, 0, NULL), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_mem_host_alloc(16, 0x80, &h), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "unknown flags 0x80");
  ASSERT(h == NULL);
  expect_host_allocations(0);
  if (tdrv_present()) { /* the real driver's answer to a double free is not ours to probe */
    ASSERT_OK(nbc_mem_host_alloc(16, 0, &h));
    ASSERT_OK(nbc_mem_host_free(h));
    ASSERT_STATUS(nbc_mem_host_free(h), NBC_DRIVER_ERROR);
    ASSERT_EQ(nbc_last_driver_error(), CUDA_ERROR_INVALID_VALUE);
    ASSERT_CONTAINS(nbc_last_error(), "cuMemFreeHost");
  }
}

TEST(mapped_alloc_device_pointer) {
  REQUIRE_DRIVER();
  unsigned flag_sets[] = {NBC_HOST_ALLOC_DEVICEMAP,
                          NBC_HOST_ALLOC_DEVICEMAP | NBC_HOST_ALLOC_PORTABLE,
                          NBC_HOST_ALLOC_DEVICEMAP | NBC_HOST_ALLOC_WRITECOMBINED};
  for (size_t k = 0; k < sizeof flag_sets / sizeof flag_sets[0]; k++) {
    void *h = NULL;
    ASSERT_OK(nbc_mem_host_alloc(128, flag_sets[k], &h));
    memset(h, 0, 128);
    nbc_devptr_t d = 0, inner = 0;
    ASSERT_OK(nbc_mem_host_device_pointer(h, &d));
    ASSERT(d != 0);
    ASSERT_OK(nbc_mem_host_device_pointer((char *)h + 32, &inner));
    ASSERT_EQ(inner, d + 32);
    /* The device writes through its address; the host sees it in place. */
    ASSERT_OK(nbc_memset_d8(d + 32, 0x5a, 64));
    ASSERT_OK(nbc_synchronize());
    const unsigned char *p = h;
    ASSERT(all_bytes(p, 32, 0));
    ASSERT(all_bytes(p + 32, 64, 0x5a));
    ASSERT(all_bytes(p + 96, 32, 0));
    /* The test driver gives write-combined memory a device address unlike its host address
     * (cuda.h: it must be asked for), which catches callers that use the host pointer. */
    if (tdrv_present() && (flag_sets[k] & NBC_HOST_ALLOC_WRITECOMBINED))
      ASSERT(d != (nbc_devptr_t)(uintptr_t)h);
    ASSERT_OK(nbc_mem_host_free(h));
  }
  nbc_devptr_t d = 1;
  ASSERT_STATUS(nbc_mem_host_device_pointer(NULL, &d), NBC_INVALID_ARGUMENT);
  ASSERT_EQ(d, 0);
  ASSERT_STATUS(nbc_mem_host_device_pointer(&d, NULL), NBC_INVALID_ARGUMENT);
  if (tdrv_present()) { /* ordinary memory has no device address */
    int local = 0;
    ASSERT_STATUS(nbc_mem_host_device_pointer(&local, &d), NBC_DRIVER_ERROR);
    ASSERT_CONTAINS(nbc_last_error(), "cuMemHostGetDevicePointer");
  }
}

TEST(register_unregister) {
  REQUIRE_DRIVER();
  size_t bytes = 2 * 4096;
  void *buf = NULL;
  ASSERT(posix_memalign(&buf, 4096, bytes) == 0);
  memset(buf, 0, bytes);
  ASSERT_OK(nbc_mem_host_register(buf, bytes, NBC_HOST_REGISTER_DEVICEMAP));
  expect_registrations(1);
  nbc_devptr_t d = 0;
  ASSERT_OK(nbc_mem_host_device_pointer(buf, &d));
  ASSERT_OK(nbc_memset_d8(d + 4096, 0x11, 4096));
  ASSERT_OK(nbc_synchronize());
  ASSERT(all_bytes(buf, 4096, 0));
  ASSERT(all_bytes((unsigned char *)buf + 4096, 4096, 0x11));
  /* Pinning pinned memory again is the driver's error, named. */
  ASSERT_STATUS(nbc_mem_host_register(buf, bytes, 0), NBC_DRIVER_ERROR);
  ASSERT_EQ(nbc_last_driver_error(), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  ASSERT_CONTAINS(nbc_last_error(), "cuMemHostRegister");
  ASSERT_OK(nbc_mem_host_unregister(buf));
  expect_registrations(0);
  ASSERT_STATUS(nbc_mem_host_unregister(buf), NBC_DRIVER_ERROR);
  ASSERT_EQ(nbc_last_driver_error(), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  ASSERT_CONTAINS(nbc_last_error(), "cuMemHostUnregister");
  /* Unpinning is immediate, so the memory can be pinned again at once. */
  ASSERT_OK(nbc_mem_host_register(buf, bytes, 0));
  ASSERT_OK(nbc_mem_host_unregister(buf));
  ASSERT_STATUS(nbc_mem_host_register(NULL, bytes, 0), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_mem_host_register(buf, 0, 0), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_mem_host_register(buf, bytes, 0x40), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_mem_host_unregister(NULL), NBC_INVALID_ARGUMENT);
  expect_registrations(0);
  free(buf);
}

TEST(managed_memory) {
  REQUIRE_DRIVER();
  for (int attach_global = 1; attach_global >= 0; attach_global--) {
    nbc_devptr_t m = 0;
    ASSERT_OK(nbc_mem_alloc_managed(64 * sizeof(int), attach_global, &m));
    ASSERT(m != 0);
    expect_live_allocations(1);
    int *host = (int *)(uintptr_t)m; /* one address for both sides */
    for (int i = 0; i < 64; i++)
      host[i] = i * i;
    int out[64];
    ASSERT_OK(nbc_memcpy_dtoh(out, m, sizeof out));
    ASSERT_EQ(out[63], 63 * 63);
    ASSERT_OK(nbc_memset_d8(m, 0, 8 * sizeof(int)));
    ASSERT_OK(nbc_synchronize());
    ASSERT_EQ(host[7], 0);
    ASSERT_EQ(host[8], 64);
    ASSERT_OK(nbc_mem_free(m));
    expect_live_allocations(0);
  }
  nbc_devptr_t z = 0;
  ASSERT_OK(nbc_mem_alloc_managed(0, 1, &z)); /* 0 bytes: still a unique address */
  ASSERT(z != 0);
  ASSERT_OK(nbc_mem_free(z));
  ASSERT_STATUS(nbc_mem_alloc_managed(8, 1, NULL), NBC_INVALID_ARGUMENT);
}

/* NBC_MANAGED_OUTLIVE_RESET memory stays valid through nbc_close and nbc_device_reset (it
 * holds the primary context), and the context goes with the last such free. */
TEST(managed_memory_outlives_reset) {
  REQUIRE_DRIVER();
  nbc_device_t *dev;
  ASSERT_OK(nbc_device_get(0, &dev));
  for (int reset = 0; reset <= 1; reset++) {
    nbc_devptr_t m = 0, n = 0;
    ASSERT_OK(nbc_mem_alloc_managed(4096, NBC_MANAGED_ATTACH_GLOBAL | NBC_MANAGED_OUTLIVE_RESET,
                                    &m));
    ASSERT_OK(nbc_mem_alloc_managed(64, NBC_MANAGED_OUTLIVE_RESET, &n));
    unsigned char *host = (unsigned char *)(uintptr_t)m;
    memset(host, 0x5a, 4096);
    int resets = tdrv_present() ? tdrv()->primary_reset_count(0) : 0;
    if (reset) ASSERT_OK(nbc_device_reset(dev));
    ASSERT_OK(nbc_close()); /* also pops the context, which the last free below destroys */
    if (tdrv_present()) {
      ASSERT_EQ(tdrv()->primary_reset_count(0), resets); /* released to the memory, not reset */
      ASSERT_EQ(tdrv()->primary_refcount(0), 1);
    }
    ASSERT(all_bytes(host, 4096, 0x5a)); /* ASan would see a freed block here */
    memset(host, 0x11, 4096);
    ASSERT_OK(nbc_mem_free(n));
    if (tdrv_present()) ASSERT_EQ(tdrv()->primary_refcount(0), 1); /* m still holds it */
    ASSERT(all_bytes(host, 4096, 0x11));
    ASSERT_OK(nbc_mem_free(m));
    if (tdrv_present()) ASSERT_EQ(tdrv()->primary_refcount(0), 0);
  }
  /* freed before any reset: an ordinary free, and the hold ends with it */
  nbc_devptr_t m = 0;
  ASSERT_OK(nbc_mem_alloc_managed(16, NBC_MANAGED_OUTLIVE_RESET, &m));
  ASSERT_OK(nbc_mem_free(m));
  ASSERT_OK(nbc_close());
  if (tdrv_present()) ASSERT_EQ(tdrv()->primary_refcount(0), 0);
  ASSERT_STATUS(nbc_mem_alloc_managed(8, 0x80, &m), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "unknown flags 0x80");
}

TEST(failures_injected) {
  REQUIRE_TESTDRIVER();
  const tdrv_api *t = tdrv();
  void *h = NULL;
  t->fail("cuMemHostAlloc", 1, CUDA_ERROR_OUT_OF_MEMORY);
  ASSERT_STATUS(nbc_mem_host_alloc(64, 0, &h), NBC_OUT_OF_MEMORY);
  ASSERT_CONTAINS(nbc_last_error(), "cuMemHostAlloc: CUDA_ERROR_OUT_OF_MEMORY (2)");
  ASSERT_CONTAINS(nbc_last_error(), "64 bytes of page-locked host memory");
  ASSERT(h == NULL);
  expect_host_allocations(0);

  ASSERT_OK(nbc_mem_host_alloc(64, 0, &h));
  t->fail("cuMemFreeHost", 1, CUDA_ERROR_INVALID_VALUE);
  ASSERT_STATUS(nbc_mem_host_free(h), NBC_DRIVER_ERROR);
  expect_host_allocations(1); /* still allocated, still known: the next free works */
  ASSERT_OK(nbc_mem_host_free(h));
  expect_host_allocations(0);

  static unsigned char buf[4096];
  t->fail("cuMemHostRegister", 1, CUDA_ERROR_INVALID_VALUE);
  ASSERT_STATUS(nbc_mem_host_register(buf, sizeof buf, 0), NBC_DRIVER_ERROR);
  expect_registrations(0);
  ASSERT_OK(nbc_mem_host_register(buf, sizeof buf, 0));
  t->fail("cuMemHostUnregister", 1, CUDA_ERROR_INVALID_VALUE);
  ASSERT_STATUS(nbc_mem_host_unregister(buf), NBC_DRIVER_ERROR);
  expect_registrations(1);
  ASSERT_OK(nbc_mem_host_unregister(buf));
  expect_registrations(0);

  nbc_devptr_t m = 0;
  t->fail("cuMemAllocManaged", 1, CUDA_ERROR_OUT_OF_MEMORY);
  ASSERT_STATUS(nbc_mem_alloc_managed(32, 1, &m), NBC_OUT_OF_MEMORY);
  ASSERT_CONTAINS(nbc_last_error(), "cuMemAllocManaged");
  ASSERT_CONTAINS(nbc_last_error(), "32 bytes of managed memory on device 0");
  ASSERT_EQ(m, 0);
  expect_live_allocations(0);

  t->fail("cuMemHostGetDevicePointer", 1, CUDA_ERROR_INVALID_VALUE);
  ASSERT_OK(nbc_mem_host_alloc(64, NBC_HOST_ALLOC_DEVICEMAP, &h));
  nbc_devptr_t d = 5;
  ASSERT_STATUS(nbc_mem_host_device_pointer(h, &d), NBC_DRIVER_ERROR);
  ASSERT_EQ(d, 0);
  ASSERT_OK(nbc_mem_host_free(h));
}

TEST(defer_cleanup_nested) {
  REQUIRE_DRIVER();
  nbc_context_t *ctx = NULL;
  ASSERT_OK(nbc_current_context(-1, &ctx));
  nbc_devptr_t p = 0, q = 0;
  void *h = NULL;
  size_t pending = 9;
  unsigned depth = 9;
  ASSERT_OK(nbc_mem_alloc(64, &p));
  ASSERT_OK(nbc_mem_host_alloc(64, 0, &h));
  ASSERT_OK(nbc_context_defer_cleanup_begin(ctx));
  ASSERT_OK(nbc_mem_free(p));
  ASSERT_OK(nbc_mem_host_free(h));
  ASSERT_OK(nbc_context_deferred(ctx, &pending, &depth));
  ASSERT_EQ(pending, 2);
  ASSERT_EQ(depth, 1);
  expect_live_allocations(1);
  expect_host_allocations(1);
  /* Memory whose free was requested stays usable until the scope ends. */
  unsigned char in[64], out[64];
  memset(in, 3, sizeof in);
  ASSERT_OK(nbc_memcpy_htod(p, in, sizeof in));
  ASSERT_OK(nbc_memcpy_dtoh(out, p, sizeof out));
  ASSERT(all_bytes(out, sizeof out, 3));

  ASSERT_OK(nbc_context_defer_cleanup_begin(ctx)); /* nested */
  ASSERT_OK(nbc_mem_alloc(64, &q));
  ASSERT_OK(nbc_mem_free(q));
  ASSERT_OK(nbc_context_defer_cleanup_end(ctx));
  ASSERT_OK(nbc_context_deferred(ctx, &pending, &depth));
  ASSERT_EQ(pending, 3); /* the inner end is not the outermost */
  ASSERT_EQ(depth, 1);
  expect_live_allocations(2);

  ASSERT_OK(nbc_context_defer_cleanup_end(ctx));
  ASSERT_OK(nbc_context_deferred(ctx, &pending, &depth));
  ASSERT_EQ(pending, 0);
  ASSERT_EQ(depth, 0);
  expect_live_allocations(0);
  expect_host_allocations(0);

  /* Outside a scope frees are performed at once again (kept for reuse: reuse.c). */
  ASSERT_OK(nbc_mem_alloc(64, &p));
  ASSERT_OK(nbc_mem_free(p));
  expect_live_allocations(0);
  ASSERT_STATUS(nbc_context_defer_cleanup_end(ctx), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "no deferred-cleanup scope is open");
  ASSERT_STATUS(nbc_context_defer_cleanup_begin(NULL), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_context_defer_cleanup_end(NULL), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_context_deferred(NULL, &pending, &depth), NBC_INVALID_ARGUMENT);
}

TEST(defer_cleanup_reset_performs_queue) {
  REQUIRE_DRIVER();
  nbc_context_t *ctx = NULL;
  ASSERT_OK(nbc_current_context(-1, &ctx));
  nbc_devptr_t p = 0, m = 0;
  void *h = NULL;
  ASSERT_OK(nbc_mem_alloc(64, &p));
  ASSERT_OK(nbc_mem_alloc_managed(64, 1, &m));
  ASSERT_OK(nbc_mem_host_alloc(64, 0, &h));
  ASSERT_OK(nbc_context_defer_cleanup_begin(ctx));
  ASSERT_OK(nbc_mem_free(p));
  ASSERT_OK(nbc_mem_free(m));
  ASSERT_OK(nbc_mem_host_free(h));
  size_t pending = 0;
  ASSERT_OK(nbc_context_deferred(ctx, &pending, NULL));
  ASSERT_EQ(pending, 3);
  ASSERT_OK(nbc_context_reset(ctx));
  ASSERT_OK(nbc_context_deferred(ctx, &pending, NULL));
  ASSERT_EQ(pending, 0);
  expect_live_allocations(0);
  expect_host_allocations(0);
  ASSERT_OK(nbc_context_defer_cleanup_end(ctx)); /* the scope is still open, now empty */
}

TEST(defer_cleanup_is_per_context) {
  REQUIRE_DRIVER();
  REQUIRE_DEVICES(2);
  nbc_device_t *d0 = NULL, *d1 = NULL;
  ASSERT_OK(nbc_device_get(0, &d0));
  ASSERT_OK(nbc_device_get(1, &d1));
  nbc_context_t *c0 = NULL;
  ASSERT_OK(nbc_current_context(0, &c0));
  ASSERT_OK(nbc_context_defer_cleanup_begin(c0));
  nbc_devptr_t p0 = 0, p1 = 0;
  ASSERT_OK(nbc_mem_alloc(64, &p0));
  ASSERT_OK(nbc_device_enter(d1));
  ASSERT_OK(nbc_mem_alloc(64, &p1));
  ASSERT_OK(nbc_mem_free(p1)); /* device 1 has no open scope: freed now */
  ASSERT_OK(nbc_device_exit(d1));
  expect_live_allocations(1);
  ASSERT_OK(nbc_mem_free(p0));
  expect_live_allocations(1);
  ASSERT_OK(nbc_context_defer_cleanup_end(c0));
  expect_live_allocations(0);
}

TEST(host_memory_outlives_reset) {
  REQUIRE_DRIVER();
  void *h = NULL;
  ASSERT_OK(nbc_mem_host_alloc(64, 0, &h));
  static unsigned char buf[4096];
  ASSERT_OK(nbc_mem_host_register(buf, sizeof buf, 0));
  ASSERT_OK(nbc_close()); /* pops the context and resets every device */
  expect_host_allocations(0); /* the reset destroyed them with the context */
  expect_registrations(0);
  int frees = tdrv_present() ? tdrv()->calls("cuMemFreeHost") : 0;
  int unregisters = tdrv_present() ? tdrv()->calls("cuMemHostUnregister") : 0;
  /* Freeing afterwards only forgets them: their addresses may be someone else's now. */
  ASSERT_OK(nbc_mem_host_free(h));
  ASSERT_OK(nbc_mem_host_unregister(buf));
  if (tdrv_present()) {
    ASSERT_EQ(tdrv()->calls("cuMemFreeHost"), frees);
    ASSERT_EQ(tdrv()->calls("cuMemHostUnregister"), unregisters);
  }
  /* The memory can be pinned again in the new context. */
  ASSERT_OK(nbc_mem_host_register(buf, sizeof buf, 0));
  ASSERT_OK(nbc_mem_host_unregister(buf));
}

TEST_LIST(X(pinned_alloc_copy_free) X(pinned_alloc_errors) X(mapped_alloc_device_pointer)
              X(register_unregister) X(managed_memory) X(managed_memory_outlives_reset)
              X(failures_injected)
                  X(defer_cleanup_nested) X(defer_cleanup_reset_performs_queue)
                      X(defer_cleanup_is_per_context) X(host_memory_outlives_reset))
TEST_MAIN()
