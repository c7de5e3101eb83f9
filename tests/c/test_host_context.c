/* test_host_context.c — contexts: lazy creation of device 0's primary context, explicit
 * devnum pushes, memory info, push/pop (empty stack, mismatch), reset, synchronize, close,
 * require_context (attached context, switch refused), a foreign primary context adopted and a
 * foreign non-primary one refused, fault injection on retain/push/synchronize, and 64 threads
 * each with their own context stack. Runs against the test driver.
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

TEST(lazy_context_is_device0_primary) {
  ASSERT_EQ(tdrv()->stack_depth(), 0);
  nbc_context_t *c = NULL, *again = NULL;
  ASSERT_OK(nbc_current_context(-1, &c));
  ASSERT(c != NULL);
  ASSERT_EQ(nbc_device_id(nbc_context_device(c)), 0);
  ASSERT(nbc_context_handle(c) != NULL);
  ASSERT_EQ(tdrv()->stack_depth(), 1);
  ASSERT_EQ(tdrv()->primary_refcount(0), 1);
  ASSERT_OK(nbc_current_context(-1, &again));
  ASSERT(again == c);
  ASSERT_EQ(tdrv()->stack_depth(), 1); /* found, not pushed again */
  ASSERT_EQ(tdrv()->primary_refcount(0), 1);
  ASSERT_STATUS(nbc_current_context(-1, NULL), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_current_context(-2, &c), NBC_INVALID_DEVICE);
  ASSERT_STATUS(nbc_current_context(2, &c), NBC_INVALID_DEVICE);
}

TEST(devnum_pushes_every_call) {
  nbc_context_t *c1, *c1b, *cur;
  ASSERT_OK(nbc_current_context(1, &c1));
  ASSERT_OK(nbc_current_context(1, &c1b));
  ASSERT(c1 == c1b);
  ASSERT_EQ(tdrv()->stack_depth(), 2);
  ASSERT_EQ(tdrv()->primary_refcount(1), 1); /* retained once, cached */
  ASSERT_OK(nbc_current_context(-1, &cur));
  ASSERT(cur == c1);
}

TEST(memory_info) {
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
  nbc_context_t *c0, *c1;
  ASSERT_OK(nbc_current_context(0, &c0));
  ASSERT_OK(nbc_current_context(1, &c1));
  ASSERT_OK(nbc_context_pop(c1));
  ASSERT_OK(nbc_context_pop(c0));
  ASSERT_EQ(tdrv()->stack_depth(), 0);
  ASSERT_STATUS(nbc_context_pop(c0), NBC_NO_CONTEXT); /* empty stack */
  ASSERT_CONTAINS(nbc_last_error(), "stack is empty");
  ASSERT_OK(nbc_context_push(c1));
  ASSERT_OK(nbc_context_push(c0));
  ASSERT_EQ(tdrv()->stack_depth(), 2);
  ASSERT_STATUS(nbc_context_pop(c1), NBC_CONTEXT_MISMATCH); /* c0 was on top */
  ASSERT_EQ(tdrv()->stack_depth(), 1);                    /* ... and is popped anyway */
  ASSERT_OK(nbc_context_pop(c1));
  ASSERT_STATUS(nbc_context_push(NULL), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_context_pop(NULL), NBC_INVALID_ARGUMENT);
  tdrv()->fail("cuCtxPushCurrent", 1, 999);
  ASSERT_STATUS(nbc_context_push(c0), NBC_DRIVER_ERROR);
  ASSERT_STREQ(nbc_last_error(), "cuCtxPushCurrent: CUDA_ERROR_UNKNOWN (999)");
  ASSERT_EQ(tdrv()->stack_depth(), 0);
}

TEST(retain_and_push_failures) {
  nbc_context_t *c;
  tdrv()->fail("cuDevicePrimaryCtxRetain", 1, 2);
  ASSERT_STATUS(nbc_current_context(-1, &c), NBC_OUT_OF_MEMORY);
  ASSERT_STREQ(nbc_last_error(), "cuDevicePrimaryCtxRetain: CUDA_ERROR_OUT_OF_MEMORY (2) (device 0)");
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
  nbc_context_t *c;
  ASSERT_OK(nbc_synchronize()); /* creates the context lazily */
  ASSERT_EQ(tdrv()->stack_depth(), 1);
  ASSERT_OK(nbc_current_context(-1, &c));
  ASSERT_OK(nbc_context_synchronize(c));
  ASSERT_EQ(tdrv()->calls("cuCtxSynchronize"), 2);
  tdrv()->fail("cuCtxSynchronize", 1, 700);
  ASSERT_STATUS(nbc_synchronize(), NBC_DRIVER_ERROR);
  ASSERT_STREQ(nbc_last_error(), "cuCtxSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS (700)");
  tdrv()->fail("cuCtxSynchronize", 1, 700);
  ASSERT_STATUS(nbc_context_synchronize(c), NBC_DRIVER_ERROR);
  ASSERT_STATUS(nbc_context_synchronize(NULL), NBC_INVALID_ARGUMENT);
}

static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                          ".visible .entry k()\n{\n  ret;\n}\n";

TEST(context_reset_frees_what_nbcuda_holds) {
  nbc_context_t *c;
  ASSERT_OK(nbc_current_context(-1, &c));
  nbc_devptr_t a, b;
  ASSERT_OK(nbc_mem_alloc(16, &a));
  ASSERT_OK(nbc_mem_alloc(32, &b));
  nbc_module_t *m;
  ASSERT_OK(nbc_module_load_data(ptx, strlen(ptx), NBC_IMAGE_PTX, &m));
  ASSERT_EQ(tdrv()->live_allocations(), 2);
  ASSERT_EQ(tdrv()->live_modules(), 1);
  ASSERT_OK(nbc_context_reset(c));
  ASSERT_EQ(tdrv()->live_allocations(), 0);
  ASSERT_EQ(tdrv()->live_modules(), 0);
  nbc_function_t *f;
  ASSERT_STATUS(nbc_module_get_function(m, "k", &f), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "unloaded by a context reset");
  nbc_module_destroy(m); /* still safe */
  ASSERT_EQ(tdrv()->stack_depth(), 1); /* the context is not destroyed nor popped */
  ASSERT_OK(nbc_mem_alloc(16, &a));
  ASSERT_STATUS(nbc_context_reset(NULL), NBC_INVALID_ARGUMENT);
}

static nbc_status_t inside(void *arg) {
  nbc_context_t **out = arg;
  nbc_context_t *c;
  int before = tdrv()->calls("cuCtxGetCurrent");
  nbc_status_t st = nbc_current_context(-1, &c);
  if (st != NBC_OK) return st;
  if (tdrv()->calls("cuCtxGetCurrent") != before) return NBC_INTERNAL; /* attached: no call */
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
  nbc_context_t *attached = NULL;
  ASSERT_STATUS(nbc_require_context(inside, &attached), NBC_NOT_READY);
  ASSERT(attached != NULL);
  ASSERT_EQ(nbc_device_id(nbc_context_device(attached)), 0);
  ASSERT_EQ(tdrv()->stack_depth(), 2); /* lazily pushed device 0 + the explicit push */
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
  nbc_context_t *c1;
  ASSERT_OK(nbc_current_context(1, &c1)); /* device 1 is current: it gets attached */
  ASSERT_OK(nbc_require_context(nested_outer, NULL));
}

TEST(foreign_primary_adopted) {
  nbc_device_t *d;
  ASSERT_OK(nbc_device_get(1, &d)); /* initialises the driver, creates no context */
  cu_retain_fn retain = (cu_retain_fn)(uintptr_t)tdrv_sym("cuDevicePrimaryCtxRetain");
  cu_push_fn push = (cu_push_fn)(uintptr_t)tdrv_sym("cuCtxPushCurrent_v2");
  ASSERT(retain && push);
  void *foreign = NULL;
  ASSERT_EQ(retain(&foreign, 1), 0);
  ASSERT_EQ(push(foreign), 0);
  nbc_context_t *c;
  ASSERT_OK(nbc_current_context(-1, &c));
  ASSERT(nbc_context_handle(c) == foreign);
  ASSERT_EQ(nbc_device_id(nbc_context_device(c)), 1);
  ASSERT_EQ(tdrv()->stack_depth(), 1); /* adopted, nothing pushed */
  nbc_stream_t *s;
  ASSERT_OK(nbc_stream_create(&s));
  nbc_stream_destroy(s);
}

TEST(foreign_non_primary_refused) {
  nbc_device_t *d;
  ASSERT_OK(nbc_device_get(0, &d));
  cu_create_v4_fn create = (cu_create_v4_fn)(uintptr_t)tdrv_sym("cuCtxCreate_v4");
  cu_destroy_fn destroy = (cu_destroy_fn)(uintptr_t)tdrv_sym("cuCtxDestroy_v2");
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
  ASSERT_EQ(tdrv()->live_streams(), 0);
  ASSERT_EQ(destroy(foreign), 0);
  ASSERT_OK(nbc_current_context(-1, &c)); /* with the stack empty again, device 0 */
}

TEST(verified_context_cache_follows_the_stack) {
  /* The per-thread fast path must notice a context pushed behind nbcuda's back. */
  nbc_context_t *c0;
  ASSERT_OK(nbc_current_context(-1, &c0));
  cu_create_v4_fn create = (cu_create_v4_fn)(uintptr_t)tdrv_sym("cuCtxCreate_v4");
  cu_pop_fn pop = (cu_pop_fn)(uintptr_t)tdrv_sym("cuCtxPopCurrent_v2");
  cu_destroy_fn destroy = (cu_destroy_fn)(uintptr_t)tdrv_sym("cuCtxDestroy_v2");
  void *foreign;
  ASSERT_EQ(create(&foreign, NULL, 0, 1), 0);
  nbc_stream_t *s = NULL;
  ASSERT_STATUS(nbc_stream_create(&s), NBC_NON_PRIMARY_CONTEXT);
  void *popped;
  ASSERT_EQ(pop(&popped), 0);
  ASSERT_OK(nbc_stream_create(&s));
  nbc_stream_destroy(s);
  ASSERT_EQ(destroy(foreign), 0);
}

TEST(close_pops_everything) {
  nbc_context_t *c;
  for (int i = 0; i < 5; i++) ASSERT_OK(nbc_current_context(i % 2, &c));
  ASSERT_EQ(tdrv()->stack_depth(), 5);
  ASSERT_OK(nbc_close());
  ASSERT_EQ(tdrv()->stack_depth(), 0);
  ASSERT_EQ(tdrv()->primary_refcount(0), 0);
  ASSERT_EQ(tdrv()->primary_refcount(1), 0);
  ASSERT_OK(nbc_close()); /* idempotent */
  ASSERT_OK(nbc_current_context(-1, &c)); /* usable again */
  ASSERT_EQ(tdrv()->primary_refcount(0), 1);
  tdrv()->fail("cuCtxPopCurrent", 1, 999);
  ASSERT_STATUS(nbc_close(), NBC_DRIVER_ERROR);
}

#define THREADS 64

static void *thread_stack(void *arg) {
  int id = (int)(intptr_t)arg;
  int dev = id % 2;
  nbc_context_t *c;
  if (tdrv()->stack_depth() != 0) return (void *)"fresh thread has a context";
  /* Each new thread's first call gets device 0, whatever other threads chose. */
  if (nbc_current_context(-1, &c) != NBC_OK) return (void *)"current_context failed";
  if (nbc_device_id(nbc_context_device(c)) != 0) return (void *)"not device 0";
  for (int i = 0; i < 1 + id % 5; i++)
    if (nbc_current_context(dev, &c) != NBC_OK) return (void *)"push failed";
  if (tdrv()->stack_depth() != 2 + id % 5) return (void *)"wrong depth";
  nbc_device_t *cur;
  if (nbc_device_current(&cur) != NBC_OK || nbc_device_id(cur) != dev)
    return (void *)"wrong current device";
  nbc_stream_t *s;
  if (nbc_stream_create(&s) != NBC_OK) return (void *)"stream";
  nbc_stream_destroy(s);
  for (int i = 0; i < 1 + id % 5; i++)
    if (nbc_context_pop(c) != NBC_OK) return (void *)"pop failed";
  if (nbc_device_current(&cur) != NBC_OK || nbc_device_id(cur) != 0)
    return (void *)"previous not restored";
  if (nbc_close() != NBC_OK || tdrv()->stack_depth() != 0) return (void *)"close";
  return NULL;
}

TEST(sixty_four_threads_own_stacks) {
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
  ASSERT_EQ(tdrv()->primary_refcount(0), 1); /* retained once, shared by all threads */
  ASSERT_EQ(tdrv()->primary_refcount(1), 1);
  ASSERT_EQ(tdrv()->live_streams(), 0);
}

TEST_LIST(X(lazy_context_is_device0_primary) X(devnum_pushes_every_call) X(memory_info)
              X(push_pop) X(retain_and_push_failures) X(synchronize)
                  X(context_reset_frees_what_nbcuda_holds) X(require_context)
                      X(require_context_uses_current_device) X(foreign_primary_adopted)
                          X(foreign_non_primary_refused) X(verified_context_cache_follows_the_stack)
                              X(close_pops_everything) X(sixty_four_threads_own_stacks))
TEST_MAIN()
