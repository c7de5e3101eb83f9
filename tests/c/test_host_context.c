/* test_host_context.c — contexts: lazy creation of device 0's primary context, explicit
 * devnum pushes, memory info, push/pop (empty stack, mismatch), reset, synchronize, close,
 * require_context (attached context, switch refused), a foreign primary context adopted and a
 * foreign non-primary one refused, fault injection on retain/push/synchronize, and 64 threads
 * each with their own context stack.
 *
 * Runs against the test driver (CI) and the real driver (GPU machine): fault injection and
 * the fixture's memory sizes need REQUIRE_TESTDRIVER(); the fixture's stack depth and
 * reference counts are checked when it is present, and otherwise the current device as
 * nbcuda reads it back. Foreign contexts are made through the driver's own entry points
 * (dlsym on the library nbcuda loaded), so they are real contexts on the GPU machine. Tests
 * that push another device's context use the last device (device 1 on the fixture).
 */
#include <pthread.h>

#include "nbcuda.h"
#include "test.h"
#include "testdriver.h"

typedef int (*cu_retain_fn)(void **pctx, int dev);
typedef int (*cu_push_fn)(void *ctx);
typedef int (*cu_pop_fn)(void **pctx);
typedef int (*cu_create_v4_fn)(void **pctx, void *params, unsigned flags, int dev);
typedef int (*cu_destroy_fn)(void *ctx);

/* The number of devices (skips without a working driver). */
static int device_count(void) {
  REQUIRE_DEVICES(1);
  int n = 0;
  ASSERT_OK(nbc_device_count(&n));
  if (tdrv_present()) ASSERT_EQ(n, 2);
  return n;
}

static void expect_depth(int depth) {
  if (tdrv_present()) ASSERT_EQ(tdrv()->stack_depth(), depth);
}

static void expect_refcount(int dev, int count) {
  if (tdrv_present()) ASSERT_EQ(tdrv()->primary_refcount(dev), count);
}

/* The device of this thread's current context, -1 when none. */
static int current_id(void) {
  nbc_device_t *cur = NULL;
  ASSERT_OK(nbc_device_current(&cur));
  return cur ? nbc_device_id(cur) : -1;
}

/* An entry point of the driver nbcuda loaded (the fixture or libcuda), by exported name. */
static void *driver_sym(const char *symbol) {
  void *h = dlopen(nbc_driver_path(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT(h != NULL);
  void *fn = dlsym(h, symbol);
  dlclose(h);
  return fn;
}

TEST(lazy_context_is_device0_primary) {
  int n = device_count();
  expect_depth(0);
  ASSERT_EQ(current_id(), -1);
  nbc_context_t *c = NULL, *again = NULL;
  ASSERT_OK(nbc_current_context(-1, &c));
  ASSERT(c != NULL);
  ASSERT_EQ(nbc_device_id(nbc_context_device(c)), 0);
  ASSERT(nbc_context_handle(c) != NULL);
  ASSERT_EQ(current_id(), 0);
  expect_depth(1);
  expect_refcount(0, 1);
  ASSERT_OK(nbc_current_context(-1, &again));
  ASSERT(again == c);
  expect_depth(1); /* found, not pushed again */
  expect_refcount(0, 1);
  /* One pop empties the stack: the lazy context was pushed once. */
  ASSERT_OK(nbc_context_pop(c));
  ASSERT_EQ(current_id(), -1);
  ASSERT_STATUS(nbc_current_context(-1, NULL), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_current_context(-2, &c), NBC_INVALID_DEVICE);
  ASSERT_STATUS(nbc_current_context(n, &c), NBC_INVALID_DEVICE);
}

TEST(devnum_pushes_every_call) {
  int last = device_count() - 1;
  nbc_context_t *c1, *c1b, *cur;
  ASSERT_OK(nbc_current_context(last, &c1));
  ASSERT_OK(nbc_current_context(last, &c1b));
  ASSERT(c1 == c1b);
  expect_depth(2);
  expect_refcount(last, 1); /* retained once, cached */
  ASSERT_OK(nbc_current_context(-1, &cur));
  ASSERT(cur == c1);
  /* Two pushes: the first pop leaves the context current. */
  ASSERT_OK(nbc_context_pop(c1));
  ASSERT_EQ(current_id(), last);
  ASSERT_OK(nbc_context_pop(c1));
  ASSERT_EQ(current_id(), -1);
}

/* What any driver reports: free <= total, and asking about a context that is not current
 * leaves this thread's stack as it was. The amounts themselves are the fixture's test
 * (other processes share a real GPU). */
TEST(memory_info_any_driver) {
  int last = device_count() - 1;
  nbc_context_t *c, *other;
  ASSERT_OK(nbc_current_context(-1, &c));
  size_t free_bytes = 0, total = 0;
  ASSERT_OK(nbc_context_get_memory_info(c, &free_bytes, &total));
  ASSERT(total > 0);
  ASSERT(free_bytes <= total);
  ASSERT_OK(nbc_current_context(last, &other));
  ASSERT_OK(nbc_context_pop(other));
  ASSERT_EQ(current_id(), 0);
  size_t other_free = 0, other_total = 0;
  ASSERT_OK(nbc_context_get_memory_info(other, &other_free, &other_total));
  ASSERT(other_total > 0 && other_free <= other_total);
  ASSERT_EQ(current_id(), 0); /* pushed for the query and popped again */
  ASSERT_OK(nbc_context_get_memory_info(NULL, &free_bytes, &total)); /* the current one */
  ASSERT_STATUS(nbc_context_get_memory_info(c, &free_bytes, NULL), NBC_INVALID_ARGUMENT);
}

TEST(memory_info) {
  REQUIRE_TESTDRIVER();
  setenv("NBCUDA_TESTDRIVER_MEM", "64M", 1);
  nbc_context_t *c;
  ASSERT_OK(nbc_current_context(-1, &c));
  size_t free_bytes = 0, total = 0;
  ASSERT_OK(nbc_context_get_memory_info(c, &free_bytes, &total));
  ASSERT_EQ(total, 64 << 20);
  ASSERT(free_bytes <= total);
  nbc_devptr_t p;
  ASSERT_OK(nbc_mem_alloc(1 << 20, &p));
  size_t free_after = 0;
  ASSERT_OK(nbc_context_get_memory_info(NULL, &free_after, &total));
  ASSERT(free_after + (1 << 20) <= free_bytes);
  /* Another device's context is made current for the query and popped again. */
  nbc_context_t *c1;
  nbc_device_t *d1;
  ASSERT_OK(nbc_device_get(1, &d1));
  ASSERT_OK(nbc_current_context(1, &c1));
  ASSERT_OK(nbc_context_pop(c1));
  int depth = tdrv()->stack_depth();
  ASSERT_OK(nbc_context_get_memory_info(c1, &free_bytes, &total));
  ASSERT_EQ(free_bytes, total);
  ASSERT_EQ(tdrv()->stack_depth(), depth);
  ASSERT_STATUS(nbc_context_get_memory_info(c, NULL, &total), NBC_INVALID_ARGUMENT);
  tdrv()->fail("cuMemGetInfo", 1, 999);
  ASSERT_STATUS(nbc_context_get_memory_info(c, &free_bytes, &total), NBC_DRIVER_ERROR);
  ASSERT_STREQ(nbc_last_error(), "cuMemGetInfo: CUDA_ERROR_UNKNOWN (999)");
}

TEST(push_pop) {
  REQUIRE_DEVICES(2);
  nbc_context_t *c0, *c1;
  ASSERT_OK(nbc_current_context(0, &c0));
  ASSERT_OK(nbc_current_context(1, &c1));
  ASSERT_OK(nbc_context_pop(c1));
  ASSERT_EQ(current_id(), 0);
  ASSERT_OK(nbc_context_pop(c0));
  expect_depth(0);
  ASSERT_EQ(current_id(), -1);
  ASSERT_STATUS(nbc_context_pop(c0), NBC_NO_CONTEXT); /* empty stack */
  ASSERT_CONTAINS(nbc_last_error(), "stack is empty");
  ASSERT_OK(nbc_context_push(c1));
  ASSERT_OK(nbc_context_push(c0));
  expect_depth(2);
  ASSERT_EQ(current_id(), 0);
  ASSERT_STATUS(nbc_context_pop(c1), NBC_CONTEXT_MISMATCH); /* c0 was on top */
  expect_depth(1);                                          /* ... and is popped anyway */
  ASSERT_EQ(current_id(), 1);
  ASSERT_OK(nbc_context_pop(c1));
  ASSERT_STATUS(nbc_context_push(NULL), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_context_pop(NULL), NBC_INVALID_ARGUMENT);
  if (!tdrv_present()) return;
  tdrv()->fail("cuCtxPushCurrent", 1, 999);
  ASSERT_STATUS(nbc_context_push(c0), NBC_DRIVER_ERROR);
  ASSERT_STREQ(nbc_last_error(), "cuCtxPushCurrent: CUDA_ERROR_UNKNOWN (999)");
  ASSERT_EQ(tdrv()->stack_depth(), 0);
}

TEST(retain_and_push_failures) {
  REQUIRE_TESTDRIVER();
  nbc_context_t *c;
  tdrv()->fail("cuDevicePrimaryCtxRetain", 1, 2);
  ASSERT_STATUS(nbc_current_context(-1, &c), NBC_OUT_OF_MEMORY);
  ASSERT_STREQ(nbc_last_error(),
               "cuDevicePrimaryCtxRetain: CUDA_ERROR_OUT_OF_MEMORY (2) (device 0)");
  ASSERT_EQ(tdrv()->stack_depth(), 0);
  tdrv()->fail("cuCtxPushCurrent", 1, 999);
  ASSERT_STATUS(nbc_current_context(-1, &c), NBC_DRIVER_ERROR);
  ASSERT_EQ(tdrv()->stack_depth(), 0);
  tdrv()->fail("cuCtxGetCurrent", 1, 999);
  ASSERT_STATUS(nbc_current_context(-1, &c), NBC_DRIVER_ERROR);
  ASSERT_OK(nbc_current_context(-1, &c)); /* recovers */
  ASSERT_EQ(tdrv()->stack_depth(), 1);
  ASSERT_EQ(tdrv()->primary_refcount(0), 1);
}

TEST(synchronize) {
  device_count();
  nbc_context_t *c;
  ASSERT_OK(nbc_synchronize()); /* creates the context lazily */
  expect_depth(1);
  ASSERT_EQ(current_id(), 0);
  ASSERT_OK(nbc_current_context(-1, &c));
  ASSERT_OK(nbc_context_synchronize(c));
  ASSERT_STATUS(nbc_context_synchronize(NULL), NBC_INVALID_ARGUMENT);
  if (!tdrv_present()) return;
  ASSERT_EQ(tdrv()->calls("cuCtxSynchronize"), 2);
  tdrv()->fail("cuCtxSynchronize", 1, 700);
  ASSERT_STATUS(nbc_synchronize(), NBC_DRIVER_ERROR);
  ASSERT_STREQ(nbc_last_error(), "cuCtxSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS (700)");
  tdrv()->fail("cuCtxSynchronize", 1, 700);
  ASSERT_STATUS(nbc_context_synchronize(c), NBC_DRIVER_ERROR);
}

static const char ptx[] = ".version 8.0\n.target sm_75\n.address_size 64\n"
                          ".visible .entry k()\n{\n  ret;\n}\n";

TEST(context_reset_frees_what_nbcuda_holds) {
  device_count();
  nbc_context_t *c;
  ASSERT_OK(nbc_current_context(-1, &c));
  nbc_devptr_t a, b;
  ASSERT_OK(nbc_mem_alloc(16, &a));
  ASSERT_OK(nbc_mem_alloc(32, &b));
  nbc_module_t *m;
  ASSERT_OK(nbc_module_load_data(ptx, strlen(ptx), NBC_IMAGE_PTX, &m));
  int fixture = tdrv_present();
  if (fixture) ASSERT_EQ(tdrv()->live_allocations(), 2);
  if (fixture) ASSERT_EQ(tdrv()->live_modules(), 1);
  ASSERT_OK(nbc_context_reset(c));
  if (fixture) ASSERT_EQ(tdrv()->live_allocations(), 0);
  if (fixture) ASSERT_EQ(tdrv()->live_modules(), 0);
  /* Freed by the reset: any driver refuses to free them again. */
  ASSERT_STATUS(nbc_mem_free(a), NBC_DRIVER_ERROR);
  nbc_function_t *f;
  ASSERT_STATUS(nbc_module_get_function(m, "k", &f), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "unloaded by a context reset");
  nbc_module_destroy(m); /* still safe */
  expect_depth(1);       /* the context is not destroyed nor popped */
  ASSERT_EQ(current_id(), 0);
  ASSERT_OK(nbc_mem_alloc(16, &a));
  ASSERT_STATUS(nbc_context_reset(NULL), NBC_INVALID_ARGUMENT);
}

static void never_called(nbc_stream_t *s, nbc_status_t st, void *arg) {
  (void)s, (void)st, (void)arg;
  abort();
}

/* close() (a device reset) destroys the streams, events and modules of its context in the driver: their
 * handles then point at freed driver memory (the real driver crashed on a stream destroyed
 * after close() in the 2-GPU run). nbcuda refuses every use of them with the driver's own
 * code, and destroying them frees only nbcuda's record. */
TEST(reset_outlives_streams_events_functions) {
  device_count();
  nbc_stream_t *s;
  nbc_event_t *e, *e2;
  nbc_module_t *m;
  nbc_function_t *f;
  nbc_devptr_t p;
  ASSERT_OK(nbc_stream_create(&s));
  ASSERT_OK(nbc_event_create(1, &e));
  ASSERT_OK(nbc_module_load_data(ptx, strlen(ptx), NBC_IMAGE_PTX, &m));
  ASSERT_OK(nbc_module_get_function(m, "k", &f));
  ASSERT_OK(nbc_mem_alloc(16, &p));
  ASSERT_OK(nbc_close()); /* pops, and on this (the first) thread resets every device */
  int fixture = tdrv_present();
  int stream_destroys = fixture ? tdrv()->calls("cuStreamDestroy") : 0;
  int event_destroys = fixture ? tdrv()->calls("cuEventDestroy") : 0;
  ASSERT_OK(nbc_event_create(1, &e2)); /* in device 0's new context */
  ASSERT_STATUS(nbc_stream_synchronize(s), NBC_DRIVER_ERROR);
  ASSERT_STREQ(nbc_last_error(), "cuStreamSynchronize: CUDA_ERROR_CONTEXT_IS_DESTROYED (709) "
                                 "(the stream was made in a context that was reset since)");
  ASSERT_EQ(nbc_last_driver_error(), 709);
  ASSERT_STREQ(nbc_last_driver_detail(),
               " (the stream was made in a context that was reset since)");
  ASSERT_STATUS(nbc_stream_query(s), NBC_DRIVER_ERROR);
  ASSERT_STATUS(nbc_stream_add_callback(s, never_called, NULL), NBC_DRIVER_ERROR);
  ASSERT_STATUS(nbc_event_record(e, NULL), NBC_DRIVER_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "the event was made in a context that was reset since");
  ASSERT_STATUS(nbc_event_record(e2, s), NBC_DRIVER_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "the stream was made");
  ASSERT_STATUS(nbc_event_query(e), NBC_DRIVER_ERROR);
  ASSERT_STATUS(nbc_event_synchronize(e), NBC_DRIVER_ERROR);
  ASSERT_STATUS(nbc_event_wait(e, NULL), NBC_DRIVER_ERROR);
  ASSERT_STATUS(nbc_event_wait(e2, s), NBC_DRIVER_ERROR);
  float ms;
  ASSERT_STATUS(nbc_event_elapsed_time(e, e2, &ms), NBC_DRIVER_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "the start event was made");
  int x = 1;
  ASSERT_STATUS(nbc_memcpy_htod_async(p, &x, sizeof x, s), NBC_DRIVER_ERROR);
  ASSERT_STREQ(nbc_last_driver_call(), "cuMemcpyHtoDAsync");
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  ASSERT_STATUS(nbc_launch(f, grid, block, 0, NULL, NULL), NBC_DRIVER_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "kernel 'k': its module was unloaded by a context reset");
  ASSERT_STATUS(nbc_launch_packed(f, grid, block, 0, NULL, NULL, 0), NBC_DRIVER_ERROR);
  nbc_stream_destroy(s);
  nbc_event_destroy(e);
  nbc_module_destroy(m);
  if (fixture) ASSERT_EQ(tdrv()->calls("cuStreamDestroy"), stream_destroys);
  if (fixture) ASSERT_EQ(tdrv()->calls("cuEventDestroy"), event_destroys);
  /* What is made after the reset works. */
  ASSERT_OK(nbc_event_record(e2, NULL));
  ASSERT_OK(nbc_event_synchronize(e2));
  ASSERT_OK(nbc_stream_create(&s));
  ASSERT_OK(nbc_stream_synchronize(s));
  nbc_stream_destroy(s); /* idle: kept for reuse, destroyed by the next reset */
  nbc_event_destroy(e2);
  if (fixture) ASSERT_EQ(tdrv()->calls("cuStreamDestroy"), stream_destroys);
  nbc_context_t *cur;
  ASSERT_OK(nbc_current_context(-1, &cur));
  ASSERT_OK(nbc_context_reset(cur));
  if (fixture) ASSERT_EQ(tdrv()->calls("cuStreamDestroy"), stream_destroys + 1);
  if (fixture) ASSERT_EQ(tdrv()->calls("cuEventDestroy"), event_destroys + 1);
}

/* The public lifetime: bumped by a reset of that context only; the check names the call. */
TEST(context_lifetime_counts_resets) {
  int n = device_count();
  nbc_context_t *c0, *c1 = NULL;
  ASSERT_OK(nbc_current_context(0, &c0));
  ASSERT_OK(nbc_context_pop(c0));
  if (n > 1) {
    ASSERT_OK(nbc_current_context(1, &c1));
    ASSERT_OK(nbc_context_pop(c1));
  }
  ASSERT_EQ(nbc_context_lifetime(NULL), 0u);
  ASSERT_OK(nbc_context_check_lifetime(NULL, 7, "cuMemcpyHtoD", "array"));
  unsigned l0 = nbc_context_lifetime(c0), l1 = nbc_context_lifetime(c1);
  ASSERT_OK(nbc_context_check_lifetime(c0, l0, "cuMemcpyHtoD", "array"));
  if (n > 1) {
    nbc_device_t *d1;
    ASSERT_OK(nbc_device_get(1, &d1));
    ASSERT_OK(nbc_device_reset(d1));
    ASSERT_EQ(nbc_context_lifetime(c1), l1 + 1);
    ASSERT_STATUS(nbc_context_check_lifetime(c1, l1, "cuMemcpyDtoH", "array"), NBC_DRIVER_ERROR);
    ASSERT_EQ(nbc_context_lifetime(c0), l0); /* device 0 untouched */
    ASSERT_OK(nbc_context_check_lifetime(c0, l0, "cuMemcpyHtoD", "array"));
  }
  nbc_device_t *d0;
  ASSERT_OK(nbc_device_get(0, &d0));
  ASSERT_OK(nbc_device_reset(d0));
  ASSERT_EQ(nbc_context_lifetime(c0), l0 + 1);
  ASSERT_STATUS(nbc_context_check_lifetime(c0, l0, "cuMemcpyHtoD", "array"), NBC_DRIVER_ERROR);
  ASSERT_STREQ(nbc_last_error(), "cuMemcpyHtoD: CUDA_ERROR_CONTEXT_IS_DESTROYED (709) "
                                 "(the array was made in a context that was reset since)");
  ASSERT_EQ(nbc_last_driver_error(), 709);
  ASSERT_STREQ(nbc_last_driver_call(), "cuMemcpyHtoD");
  ASSERT_OK(nbc_context_check_lifetime(c0, l0 + 1, "cuMemcpyHtoD", "array"));
}

static nbc_status_t inside(void *arg) {
  nbc_context_t **out = arg;
  nbc_context_t *c;
  int fixture = tdrv_present();
  int before = fixture ? tdrv()->calls("cuCtxGetCurrent") : 0;
  nbc_status_t st = nbc_current_context(-1, &c);
  if (st != NBC_OK) return st;
  if (fixture && tdrv()->calls("cuCtxGetCurrent") != before)
    return NBC_INTERNAL; /* attached: no call */
  *out = c;
  nbc_context_t *other;
  st = nbc_current_context(1, &other);
  if (st != NBC_CONTEXT_SWITCH) return NBC_INTERNAL;
  if (strcmp(nbc_last_error(), "Cannot switch CUDA-context.") != 0) return NBC_INTERNAL;
  st = nbc_current_context(0, &other); /* the attached context itself: allowed, pushes */
  if (st != NBC_OK || other != c) return NBC_INTERNAL;
  return NBC_NOT_READY; /* fn's status is returned as is */
}

TEST(require_context) {
  REQUIRE_DEVICES(2);
  nbc_context_t *attached = NULL;
  ASSERT_STATUS(nbc_require_context(inside, &attached), NBC_NOT_READY);
  ASSERT(attached != NULL);
  ASSERT_EQ(nbc_device_id(nbc_context_device(attached)), 0);
  expect_depth(2); /* lazily pushed device 0 + the explicit push */
  /* Outside require_context, switching is allowed again. */
  nbc_context_t *c1;
  ASSERT_OK(nbc_current_context(1, &c1));
  ASSERT_STATUS(nbc_require_context(NULL, NULL), NBC_INVALID_ARGUMENT);
}

static nbc_status_t nested_inner(void *arg) {
  (void)arg;
  nbc_context_t *c;
  return nbc_current_context(0, &c);
}

static nbc_status_t nested_outer(void *arg) {
  (void)arg;
  nbc_status_t st = nbc_require_context(nested_inner, NULL);
  if (st != NBC_CONTEXT_SWITCH) return NBC_INTERNAL;
  return NBC_OK;
}

TEST(require_context_uses_current_device) {
  REQUIRE_DEVICES(2);
  nbc_context_t *c1;
  ASSERT_OK(nbc_current_context(1, &c1)); /* device 1 is current: it gets attached */
  ASSERT_OK(nbc_require_context(nested_outer, NULL));
}

TEST(foreign_primary_adopted) {
  int last = device_count() - 1; /* initialises the driver, creates no context */
  nbc_device_t *d;
  ASSERT_OK(nbc_device_get(last, &d));
  cu_retain_fn retain = (cu_retain_fn)(uintptr_t)driver_sym("cuDevicePrimaryCtxRetain");
  cu_push_fn push = (cu_push_fn)(uintptr_t)driver_sym("cuCtxPushCurrent_v2");
  ASSERT(retain && push);
  void *foreign = NULL;
  ASSERT_EQ(retain(&foreign, last), 0);
  ASSERT_EQ(push(foreign), 0);
  nbc_context_t *c;
  ASSERT_OK(nbc_current_context(-1, &c));
  ASSERT(nbc_context_handle(c) == foreign);
  ASSERT_EQ(nbc_device_id(nbc_context_device(c)), last);
  expect_depth(1); /* adopted, nothing pushed */
  nbc_stream_t *s;
  ASSERT_OK(nbc_stream_create(&s));
  nbc_stream_destroy(s);
  ASSERT_OK(nbc_context_pop(c)); /* the foreign push was the only one */
  ASSERT_EQ(current_id(), -1);
}

TEST(foreign_non_primary_refused) {
  device_count();
  nbc_device_t *d;
  ASSERT_OK(nbc_device_get(0, &d));
  cu_create_v4_fn create = (cu_create_v4_fn)(uintptr_t)driver_sym("cuCtxCreate_v4");
  cu_destroy_fn destroy = (cu_destroy_fn)(uintptr_t)driver_sym("cuCtxDestroy_v2");
  ASSERT(create && destroy);
  void *foreign = NULL;
  ASSERT_EQ(create(&foreign, NULL, 0, 0), 0); /* pushed on this thread */
  nbc_context_t *c;
  ASSERT_STATUS(nbc_current_context(-1, &c), NBC_NON_PRIMARY_CONTEXT);
  char expected[128];
  snprintf(expected, sizeof expected, "Numba cannot operate on non-primary CUDA context %lx",
           (unsigned long)(uintptr_t)foreign);
  ASSERT_STREQ(nbc_last_error(), expected);
  nbc_stream_t *s = NULL;
  ASSERT_STATUS(nbc_stream_create(&s), NBC_NON_PRIMARY_CONTEXT);
  nbc_event_t *e = NULL;
  ASSERT_STATUS(nbc_event_create(1, &e), NBC_NON_PRIMARY_CONTEXT);
  nbc_devptr_t p;
  ASSERT_STATUS(nbc_mem_alloc(8, &p), NBC_NON_PRIMARY_CONTEXT);
  if (tdrv_present()) ASSERT_EQ(tdrv()->live_streams(), 0);
  ASSERT_EQ(destroy(foreign), 0);
  ASSERT_OK(nbc_current_context(-1, &c)); /* with the stack empty again, device 0 */
}

TEST(verified_context_cache_follows_the_stack) {
  /* The per-thread fast path must notice a context pushed behind nbcuda's back. */
  int last = device_count() - 1;
  nbc_context_t *c0;
  ASSERT_OK(nbc_current_context(-1, &c0));
  cu_create_v4_fn create = (cu_create_v4_fn)(uintptr_t)driver_sym("cuCtxCreate_v4");
  cu_pop_fn pop = (cu_pop_fn)(uintptr_t)driver_sym("cuCtxPopCurrent_v2");
  cu_destroy_fn destroy = (cu_destroy_fn)(uintptr_t)driver_sym("cuCtxDestroy_v2");
  ASSERT(create && pop && destroy);
  void *foreign;
  ASSERT_EQ(create(&foreign, NULL, 0, last), 0);
  nbc_stream_t *s = NULL;
  ASSERT_STATUS(nbc_stream_create(&s), NBC_NON_PRIMARY_CONTEXT);
  void *popped;
  ASSERT_EQ(pop(&popped), 0);
  ASSERT_OK(nbc_stream_create(&s));
  nbc_stream_destroy(s);
  ASSERT_EQ(destroy(foreign), 0);
}

TEST(close_pops_everything) {
  int n = device_count();
  nbc_context_t *c;
  for (int i = 0; i < 5; i++)
    ASSERT_OK(nbc_current_context(i % n, &c));
  expect_depth(5);
  ASSERT_OK(nbc_close());
  expect_depth(0);
  ASSERT_EQ(current_id(), -1);
  for (int i = 0; i < n; i++)
    expect_refcount(i, 0);
  ASSERT_OK(nbc_close());                 /* idempotent */
  ASSERT_OK(nbc_current_context(-1, &c)); /* usable again */
  ASSERT_EQ(current_id(), 0);
  nbc_devptr_t p;
  ASSERT_OK(nbc_mem_alloc(64, &p));
  ASSERT_OK(nbc_mem_free(p));
  expect_refcount(0, 1);
  if (!tdrv_present()) return;
  tdrv()->fail("cuCtxPopCurrent", 1, 999);
  ASSERT_STATUS(nbc_close(), NBC_DRIVER_ERROR);
}

#define THREADS 64

static int thread_devices; /* devices the threads spread over (2 on the fixture) */

/* This thread's stack depth on the fixture; -1 (never compared) elsewhere. */
static int depth_or_unknown(void) {
  return tdrv_present() ? tdrv()->stack_depth() : -1;
}

static void *thread_stack(void *arg) {
  int id = (int)(intptr_t)arg;
  int dev = id % thread_devices;
  nbc_context_t *c;
  nbc_device_t *cur;
  if (depth_or_unknown() > 0) return (void *)"fresh thread has a context";
  if (nbc_device_current(&cur) != NBC_OK || cur) return (void *)"fresh thread has a device";
  /* Each new thread's first call gets device 0, whatever other threads chose. */
  if (nbc_current_context(-1, &c) != NBC_OK) return (void *)"current_context failed";
  if (nbc_device_id(nbc_context_device(c)) != 0) return (void *)"not device 0";
  for (int i = 0; i < 1 + id % 5; i++)
    if (nbc_current_context(dev, &c) != NBC_OK) return (void *)"push failed";
  if (tdrv_present() && tdrv()->stack_depth() != 2 + id % 5) return (void *)"wrong depth";
  if (nbc_device_current(&cur) != NBC_OK || nbc_device_id(cur) != dev)
    return (void *)"wrong current device";
  nbc_stream_t *s;
  if (nbc_stream_create(&s) != NBC_OK) return (void *)"stream";
  nbc_event_t *e;
  if (nbc_event_create(1, &e) != NBC_OK) return (void *)"event";
  if (nbc_event_record(e, s) != NBC_OK || nbc_event_synchronize(e) != NBC_OK)
    return (void *)"event record";
  nbc_event_destroy(e);
  nbc_stream_destroy(s);
  for (int i = 0; i < 1 + id % 5; i++)
    if (nbc_context_pop(c) != NBC_OK) return (void *)"pop failed";
  if (nbc_device_current(&cur) != NBC_OK || nbc_device_id(cur) != 0)
    return (void *)"previous not restored";
  if (nbc_close() != NBC_OK || depth_or_unknown() > 0) return (void *)"close";
  if (nbc_device_current(&cur) != NBC_OK || cur) return (void *)"close left a context";
  return NULL;
}

TEST(sixty_four_threads_own_stacks) {
  thread_devices = device_count() < 2 ? 1 : 2;
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++)
    ASSERT_EQ(pthread_create(&t[i], NULL, thread_stack, (void *)(intptr_t)i), 0);
  int failures = 0;
  for (int i = 0; i < THREADS; i++) {
    void *why;
    pthread_join(t[i], &why);
    if (why) {
      fprintf(stderr, "thread %d: %s\n", i, (const char *)why);
      failures++;
    }
  }
  ASSERT_EQ(failures, 0);
  if (!tdrv_present()) return;
  ASSERT_EQ(tdrv()->primary_refcount(0), 1); /* retained once, shared by all threads */
  ASSERT_EQ(tdrv()->primary_refcount(1), 1);
  /* Idle streams and complete events the threads left are kept for reuse until the contexts
   * are released; none is lost on the way. */
  ASSERT_OK(nbc_close());
  ASSERT_EQ(tdrv()->live_streams(), 0);
  ASSERT_EQ(tdrv()->live_events(), 0);
}

TEST_LIST(X(reset_outlives_streams_events_functions) X(context_lifetime_counts_resets) X(lazy_context_is_device0_primary) X(devnum_pushes_every_call)
              X(memory_info_any_driver) X(memory_info) X(push_pop) X(retain_and_push_failures)
                  X(synchronize) X(context_reset_frees_what_nbcuda_holds) X(require_context)
                      X(require_context_uses_current_device) X(foreign_primary_adopted)
                          X(foreign_non_primary_refused)
                              X(verified_context_cache_follows_the_stack)
                                  X(close_pops_everything) X(sixty_four_threads_own_stacks))
TEST_MAIN()
