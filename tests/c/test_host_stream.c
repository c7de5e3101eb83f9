/* test_host_stream.c — streams: create/destroy (and their failures), the three default
 * streams and external streams (never destroyed), numba's repr strings, synchronize and query
 * while work is pending, callbacks firing in order with the stream, status and argument, and
 * lazy context creation by the stream factories.
 *
 * Runs against the test driver (CI) and the real driver (GPU machine). Fault injection and
 * the fixture's launch delay need REQUIRE_TESTDRIVER() (test_gpu.c has the real-GPU
 * counterparts with a kernel that spins); live-stream and callback counters are checked when
 * the fixture is present.
 */
#include <pthread.h>

#include "nbcuda.h"
#include "test.h"
#include "testdriver.h"

static void expect_live_streams(int n) {
  if (tdrv_present()) ASSERT_EQ(tdrv()->live_streams(), n);
}

/* The device of this thread's current context, -1 when none. */
static int current_id(void) {
  nbc_device_t *cur = NULL;
  ASSERT_OK(nbc_device_current(&cur));
  return cur ? nbc_device_id(cur) : -1;
}

TEST(create_destroy) {
  REQUIRE_DRIVER();
  nbc_stream_t *s = NULL;
  ASSERT_OK(nbc_stream_create(&s));
  ASSERT(s != NULL);
  if (tdrv_present()) ASSERT_EQ(tdrv()->stack_depth(), 1); /* device 0's context created */
  ASSERT_EQ(current_id(), 0);
  ASSERT_EQ(nbc_stream_kind(s), NBC_STREAM_CREATED);
  ASSERT(nbc_stream_handle(s) > 2);
  nbc_context_t *ctx = NULL; /* made in the current context; the default streams have none */
  ASSERT_OK(nbc_current_context(-1, &ctx));
  ASSERT(nbc_stream_context(s) == ctx);
  nbc_stream_t *d = NULL;
  ASSERT_OK(nbc_default_stream(&d));
  ASSERT(nbc_stream_context(d) == NULL && nbc_stream_context(NULL) == NULL);
  expect_live_streams(1);
  ASSERT_OK(nbc_stream_query(s)); /* nothing queued */
  char repr[64], expected[64];
  nbc_stream_repr(s, repr, sizeof repr);
  snprintf(expected, sizeof expected, "<CUDA stream %" PRIuPTR ">", nbc_stream_handle(s));
  ASSERT_STREQ(repr, expected);
  /* Idle, it is kept for the next create (the driver is not asked for another), and a reset
   * of its context destroys it. */
  uintptr_t handle = nbc_stream_handle(s);
  int creates = tdrv_present() ? tdrv()->calls("cuStreamCreate") : 0;
  nbc_stream_destroy(s);
  expect_live_streams(1);
  ASSERT_OK(nbc_stream_create(&s));
  ASSERT_EQ(nbc_stream_handle(s), handle);
  if (tdrv_present()) ASSERT_EQ(tdrv()->calls("cuStreamCreate"), creates);
  ASSERT_OK(nbc_stream_query(s));
  nbc_stream_destroy(s);
  ASSERT_OK(nbc_context_reset(ctx));
  expect_live_streams(0);
  nbc_stream_destroy(NULL);
  ASSERT_STATUS(nbc_stream_create(NULL), NBC_INVALID_ARGUMENT);
}

TEST(create_fails) {
  REQUIRE_TESTDRIVER();
  nbc_stream_t *s = (nbc_stream_t *)1;
  tdrv()->fail("cuStreamCreate", 1, 2);
  ASSERT_STATUS(nbc_stream_create(&s), NBC_OUT_OF_MEMORY);
  ASSERT(s == NULL);
  ASSERT_STREQ(nbc_last_error(), "cuStreamCreate: CUDA_ERROR_OUT_OF_MEMORY (2)");
  ASSERT_STREQ(nbc_last_driver_detail(), ""); /* nothing added after the code */
  ASSERT_EQ(nbc_last_driver_error(), 2);
  ASSERT_STREQ(nbc_last_driver_call(), "cuStreamCreate");
  tdrv()->fail("cuStreamCreate", 1, 999);
  ASSERT_STATUS(nbc_stream_create(&s), NBC_DRIVER_ERROR);
  ASSERT_OK(nbc_stream_create(&s));
  nbc_stream_destroy(s);
  /* A failure that is not a driver call has no driver detail either. */
  ASSERT_STATUS(nbc_stream_create(NULL), NBC_INVALID_ARGUMENT);
  ASSERT_STREQ(nbc_last_driver_detail(), "");
}

TEST(default_streams) {
  REQUIRE_DRIVER();
  nbc_stream_t *d, *l, *p, *d2;
  ASSERT_OK(nbc_default_stream(&d));
  ASSERT_OK(nbc_legacy_default_stream(&l));
  ASSERT_OK(nbc_per_thread_default_stream(&p));
  ASSERT_OK(nbc_default_stream(&d2));
  ASSERT(d == d2);
  ASSERT_EQ(nbc_stream_handle(d), 0);
  ASSERT_EQ(nbc_stream_handle(l), 1);
  ASSERT_EQ(nbc_stream_handle(p), 2);
  ASSERT_EQ(nbc_stream_kind(d), NBC_STREAM_DEFAULT);
  ASSERT_EQ(nbc_stream_kind(l), NBC_STREAM_LEGACY);
  ASSERT_EQ(nbc_stream_kind(p), NBC_STREAM_PER_THREAD);
  char repr[64];
  nbc_stream_repr(d, repr, sizeof repr);
  ASSERT_STREQ(repr, "<Default CUDA stream>");
  nbc_stream_repr(l, repr, sizeof repr);
  ASSERT_STREQ(repr, "<Legacy default CUDA stream>");
  nbc_stream_repr(p, repr, sizeof repr);
  ASSERT_STREQ(repr, "<Per-thread default CUDA stream>");
  nbc_stream_repr(NULL, repr, sizeof repr);
  ASSERT_STREQ(repr, "<Default CUDA stream>");
  nbc_stream_repr(l, repr, 8); /* truncated, NUL-terminated */
  ASSERT_STREQ(repr, "<Legacy");
  nbc_stream_destroy(d); /* singletons: nothing happens */
  nbc_stream_destroy(l);
  nbc_stream_destroy(p);
  ASSERT_OK(nbc_stream_synchronize(d));
  ASSERT_OK(nbc_stream_synchronize(l));
  ASSERT_OK(nbc_stream_synchronize(p));
  ASSERT_OK(nbc_stream_synchronize(NULL));
  ASSERT_STATUS(nbc_default_stream(NULL), NBC_INVALID_ARGUMENT);
}

TEST(external_streams) {
  REQUIRE_DRIVER();
  nbc_stream_t *owned, *ext;
  ASSERT_OK(nbc_stream_create(&owned));
  ASSERT_OK(nbc_external_stream(nbc_stream_handle(owned), &ext));
  ASSERT_EQ(nbc_stream_kind(ext), NBC_STREAM_EXTERNAL);
  ASSERT_EQ(nbc_stream_handle(ext), nbc_stream_handle(owned));
  char repr[64], expected[64];
  nbc_stream_repr(ext, repr, sizeof repr);
  snprintf(expected, sizeof expected, "<External CUDA stream %" PRIuPTR ">",
           nbc_stream_handle(owned));
  ASSERT_STREQ(repr, expected);
  ASSERT_OK(nbc_stream_synchronize(ext));
  nbc_stream_destroy(ext); /* frees the wrapper only */
  expect_live_streams(1);
  ASSERT_OK(nbc_stream_synchronize(owned)); /* so the driver's stream still exists */
  nbc_stream_destroy(owned);
  expect_live_streams(1); /* idle: kept for the next nbc_stream_create */
  nbc_context_t *ctx;
  ASSERT_OK(nbc_current_context(-1, &ctx));
  ASSERT_OK(nbc_context_reset(ctx));
  expect_live_streams(0);
  /* An external handle that is one of the default streams prints as such. */
  nbc_stream_t *zero;
  ASSERT_OK(nbc_external_stream(0, &zero));
  nbc_stream_repr(zero, repr, sizeof repr);
  ASSERT_STREQ(repr, "<Default CUDA stream>");
  nbc_stream_destroy(zero);
  /* Arbitrary values are wrapped without being checked (numba's 0x12345678 test). */
  ASSERT_OK(nbc_external_stream(0x12345678, &ext));
  ASSERT_EQ(nbc_stream_handle(ext), 0x12345678);
  nbc_stream_destroy(ext);
  ASSERT_STATUS(nbc_external_stream(1, NULL), NBC_INVALID_ARGUMENT);
}

/* A module with one kernel that does nothing, `k`, in *pf. */
static nbc_module_t *empty_kernel(nbc_function_t **pf) {
  static const char ptx[] = ".version 8.0\n.target sm_75\n.address_size 64\n"
                            ".visible .entry k()\n{\n  ret;\n}\n";
  nbc_module_t *m;
  ASSERT_OK(nbc_module_load_data(ptx, sizeof ptx, NBC_IMAGE_PTX, &m));
  ASSERT_OK(nbc_module_get_function(m, "k", pf));
  return m;
}

TEST(query_and_synchronize_pending_work) {
  REQUIRE_TESTDRIVER();
  nbc_stream_t *s;
  ASSERT_OK(nbc_stream_create(&s));
  ASSERT_OK(nbc_stream_query(s));
  nbc_function_t *f;
  nbc_module_t *m = empty_kernel(&f);
  unsigned one[3] = {1, 1, 1};
  tdrv()->set_launch_delay_ms(200);
  ASSERT_OK(nbc_launch(f, one, one, 0, s, NULL));
  ASSERT_STATUS(nbc_stream_query(s), NBC_NOT_READY);
  ASSERT_OK(nbc_stream_synchronize(s));
  ASSERT_OK(nbc_stream_query(s));
  /* A stream destroyed with work pending is destroyed (its work completes), not kept; at
   * most NBC__IDLE_STREAMS (8) idle ones are. */
  nbc_context_t *ctx;
  ASSERT_OK(nbc_current_context(-1, &ctx));
  nbc_module_destroy(m);
  ASSERT_OK(nbc_context_reset(ctx)); /* none kept from earlier tests */
  m = empty_kernel(&f);
  int destroys = tdrv()->calls("cuStreamDestroy"), live = tdrv()->live_streams();
  ASSERT_OK(nbc_launch(f, one, one, 0, s, NULL));
  nbc_stream_destroy(s);
  ASSERT_EQ(tdrv()->calls("cuStreamDestroy"), destroys + 1);
  ASSERT_EQ(tdrv()->live_streams(), live - 1);
  tdrv()->set_launch_delay_ms(0);
  nbc_stream_t *many[10];
  for (int i = 0; i < 10; i++) ASSERT_OK(nbc_stream_create(&many[i]));
  for (int i = 0; i < 10; i++) nbc_stream_destroy(many[i]);
  ASSERT_EQ(tdrv()->calls("cuStreamDestroy"), destroys + 1 + 2);
  ASSERT_EQ(tdrv()->live_streams(), live - 1 + 8);
  nbc_module_destroy(m);
  ASSERT_OK(nbc_context_reset(ctx));
  ASSERT_EQ(tdrv()->live_streams(), live - 1);
}

/* nbc_stream_wait_handle: the consumer's later work waits for what the producer (known by
 * its handle only) has queued; the host does not block; nothing for the same stream. */
TEST(wait_for_a_stream_handle) {
  REQUIRE_TESTDRIVER();
  nbc_stream_t *producer, *consumer;
  ASSERT_OK(nbc_stream_create(&producer));
  ASSERT_OK(nbc_stream_create(&consumer));
  nbc_function_t *f;
  nbc_module_t *m = empty_kernel(&f);
  unsigned one[3] = {1, 1, 1};
  tdrv()->set_launch_delay_ms(200);
  ASSERT_OK(nbc_launch(f, one, one, 0, producer, NULL));
  tdrv()->set_launch_delay_ms(0);
  ASSERT_OK(nbc_stream_query(consumer));
  int records = tdrv()->calls("cuEventRecord");
  ASSERT_OK(nbc_stream_wait_handle(consumer, nbc_stream_handle(producer)));
  ASSERT_EQ(tdrv()->calls("cuEventRecord"), records + 1);
  ASSERT_STATUS(nbc_stream_query(consumer), NBC_NOT_READY); /* behind the producer's kernel */
  ASSERT_OK(nbc_stream_synchronize(consumer));
  ASSERT_OK(nbc_stream_synchronize(producer));
  ASSERT_OK(nbc_stream_wait_handle(producer, nbc_stream_handle(producer)));
  ASSERT_EQ(tdrv()->calls("cuEventRecord"), records + 1); /* the same stream: nothing */
  ASSERT_OK(nbc_stream_wait_handle(NULL, nbc_stream_handle(producer))); /* default stream */
  records = tdrv()->calls("cuEventRecord");
  /* the default stream is the legacy one (0x1) unless per-thread mode is on (0x2) */
  uintptr_t own = nbc_driver_per_thread_default_stream() ? 2 : 1;
  ASSERT_OK(nbc_stream_wait_handle(NULL, own));
  ASSERT_EQ(tdrv()->calls("cuEventRecord"), records);
  tdrv()->fail("cuEventRecord", 1, 400);
  ASSERT_STATUS(nbc_stream_wait_handle(consumer, nbc_stream_handle(producer)),
                NBC_DRIVER_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "cuEventRecord: CUDA_ERROR_INVALID_HANDLE (400)");
  ASSERT_CONTAINS(nbc_last_error(), "waiting for stream 0x");
  ASSERT_OK(nbc_synchronize());
  nbc_module_destroy(m);
  nbc_stream_destroy(consumer);
  nbc_stream_destroy(producer);
  ASSERT_EQ(tdrv()->live_events(), 0);
}

TEST(synchronize_and_query_failures) {
  REQUIRE_TESTDRIVER();
  nbc_stream_t *s;
  ASSERT_OK(nbc_stream_create(&s));
  tdrv()->fail("cuStreamSynchronize", 1, 700);
  ASSERT_STATUS(nbc_stream_synchronize(s), NBC_DRIVER_ERROR);
  ASSERT_STREQ(nbc_last_error(), "cuStreamSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS (700)");
  tdrv()->fail("cuStreamQuery", 1, 999);
  ASSERT_STATUS(nbc_stream_query(s), NBC_DRIVER_ERROR);
  ASSERT_STREQ(nbc_last_error(), "cuStreamQuery: CUDA_ERROR_UNKNOWN (999)");
  nbc_stream_destroy(s);
}

TEST(default_stream_ops_create_a_context) {
  /* Copying on the default stream from a fresh thread needs a context: created lazily. */
  REQUIRE_DRIVER();
  ASSERT_OK(nbc_stream_synchronize(NULL));
  if (tdrv_present()) ASSERT_EQ(tdrv()->stack_depth(), 1);
  ASSERT_EQ(current_id(), 0);
}

typedef struct record {
  pthread_mutex_t lock;
  int order[16];
  int count;
  nbc_stream_t *streams[16];
  nbc_status_t statuses[16];
  pthread_t threads[16];
} record;

/* arg points to a record pointer. */
static void on_done(nbc_stream_t *stream, nbc_status_t status, void *arg) {
  record *r = *(record **)arg;
  pthread_mutex_lock(&r->lock);
  r->streams[r->count] = stream;
  r->statuses[r->count] = status;
  r->threads[r->count] = pthread_self();
  r->count++;
  pthread_mutex_unlock(&r->lock);
}

typedef struct cb_arg {
  record *rec;
  int id;
} cb_arg;

static void on_done_ordered(nbc_stream_t *stream, nbc_status_t status, void *arg) {
  cb_arg *a = arg;
  pthread_mutex_lock(&a->rec->lock);
  a->rec->order[a->rec->count] = a->id;
  a->rec->streams[a->rec->count] = stream;
  a->rec->statuses[a->rec->count] = status;
  a->rec->threads[a->rec->count] = pthread_self();
  a->rec->count++;
  pthread_mutex_unlock(&a->rec->lock);
}

TEST(callbacks_fire_in_order) {
  record rec = {.lock = PTHREAD_MUTEX_INITIALIZER};
  cb_arg args[8];
  REQUIRE_DRIVER();
  nbc_stream_t *s;
  ASSERT_OK(nbc_stream_create(&s));
  if (tdrv_present()) tdrv()->set_launch_delay_ms(20); /* real kernels take their own time */
  static const char ptx[] = ".version 8.0\n.target sm_75\n.address_size 64\n"
                            ".visible .entry k()\n{\n  ret;\n}\n";
  nbc_module_t *m;
  nbc_function_t *f;
  ASSERT_OK(nbc_module_load_data(ptx, sizeof ptx, NBC_IMAGE_PTX, &m));
  ASSERT_OK(nbc_module_get_function(m, "k", &f));
  unsigned one[3] = {1, 1, 1};
  for (int i = 0; i < 8; i++) {
    args[i].rec = &rec;
    args[i].id = i;
    if (i % 2 == 0) ASSERT_OK(nbc_launch(f, one, one, 0, s, NULL));
    ASSERT_OK(nbc_stream_add_callback(s, on_done_ordered, &args[i]));
  }
  ASSERT_OK(nbc_stream_synchronize(s));
  ASSERT_EQ(rec.count, 8);
  for (int i = 0; i < 8; i++) {
    ASSERT_EQ(rec.order[i], i);
    ASSERT(rec.streams[i] == s);
    ASSERT_EQ(rec.statuses[i], NBC_OK);
    ASSERT(!pthread_equal(rec.threads[i], pthread_self())); /* on a driver thread */
  }
  if (tdrv_present()) ASSERT_EQ(tdrv()->host_callbacks_run(), 8);
  nbc_module_destroy(m);
  nbc_stream_destroy(s);
}

TEST(callback_on_default_stream) {
  REQUIRE_DRIVER();
  record rec = {.lock = PTHREAD_MUTEX_INITIALIZER};
  record *p = &rec;
  ASSERT_OK(nbc_stream_add_callback(NULL, on_done, &p));
  nbc_stream_t *d;
  ASSERT_OK(nbc_default_stream(&d));
  ASSERT_OK(nbc_stream_add_callback(d, on_done, &p));
  ASSERT_OK(nbc_stream_synchronize(d));
  ASSERT_EQ(rec.count, 2);
  ASSERT(rec.streams[0] == d); /* NULL means the default stream singleton */
  ASSERT(rec.streams[1] == d);
}

TEST(callback_failures) {
  REQUIRE_TESTDRIVER();
  nbc_stream_t *s;
  ASSERT_OK(nbc_stream_create(&s));
  record rec = {.lock = PTHREAD_MUTEX_INITIALIZER};
  record *p = &rec;
  ASSERT_STATUS(nbc_stream_add_callback(s, NULL, NULL), NBC_INVALID_ARGUMENT);
  tdrv()->fail("cuStreamAddCallback", 1, 999);
  ASSERT_STATUS(nbc_stream_add_callback(s, on_done, &p), NBC_DRIVER_ERROR);
  ASSERT_STREQ(nbc_last_error(), "cuStreamAddCallback: CUDA_ERROR_UNKNOWN (999)");
  ASSERT_OK(nbc_stream_synchronize(s));
  ASSERT_EQ(rec.count, 0); /* never runs, record freed (ASan checks the leak) */
  nbc_stream_destroy(s);
}

/* NBCUDA_REUSE=0 (read on first use, so set before this process's first destroy): no
 * stream, event or device block is kept, so every create, destroy, allocation and free is the
 * driver's own call, and a dying stream is not queried (bench/host_py.py's "reuse off" rows
 * time exactly the raw calls). */
TEST(reuse_off_every_create_and_destroy_reaches_the_driver) {
  REQUIRE_TESTDRIVER();
  ASSERT(setenv("NBCUDA_REUSE", "0", 1) == 0);
  static const char *const calls[] = {"cuStreamCreate", "cuStreamDestroy", "cuStreamQuery",
                                      "cuEventCreate",  "cuEventDestroy",  "cuMemAlloc",
                                      "cuMemFree"};
  enum { N = sizeof calls / sizeof calls[0], ROUNDS = 5 };
  nbc_stream_t *warm; /* the context exists before counting */
  ASSERT_OK(nbc_stream_create(&warm));
  int before[N];
  for (int i = 0; i < N; i++) before[i] = tdrv()->calls(calls[i]);
  for (int r = 0; r < ROUNDS; r++) {
    nbc_stream_t *s;
    nbc_event_t *e;
    nbc_devptr_t p;
    ASSERT_OK(nbc_stream_create(&s));
    nbc_stream_destroy(s);
    ASSERT_OK(nbc_event_create(1, &e));
    nbc_event_destroy(e);
    ASSERT_OK(nbc_mem_alloc(1024, &p));
    ASSERT_OK(nbc_mem_free(p));
  }
  static const int want[N] = {ROUNDS, ROUNDS, 0, ROUNDS, ROUNDS, ROUNDS, ROUNDS};
  for (int i = 0; i < N; i++) {
    if (tdrv()->calls(calls[i]) - before[i] != want[i])
      fprintf(stderr, "%s: %d calls, expected %d\n", calls[i],
              tdrv()->calls(calls[i]) - before[i], want[i]);
    ASSERT_EQ(tdrv()->calls(calls[i]) - before[i], want[i]);
  }
  nbc_stream_destroy(warm);
}

TEST_LIST(X(create_destroy) X(create_fails) X(default_streams) X(external_streams)
              X(query_and_synchronize_pending_work) X(wait_for_a_stream_handle)
                  X(synchronize_and_query_failures)
                  X(default_stream_ops_create_a_context) X(callbacks_fire_in_order)
                      X(callback_on_default_stream) X(callback_failures)
                          X(reuse_off_every_create_and_destroy_reaches_the_driver))
TEST_MAIN()
