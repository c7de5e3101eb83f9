/* test_multigpu.c — several devices at once: the device list, nested device scopes restoring
 * the previous context, one thread per device working concurrently (select_device, stream,
 * event, memory, a launch), UUIDs, nbc_close on the main thread resetting every device, an
 * event of one device waited on by another device's stream, and peer access and copies.
 *
 * Every test needs two devices (REQUIRE_DEVICES(2)): the test driver has two by default, so
 * they run on CI, and on a machine with one GPU they skip. A launch on the test driver runs
 * no code, so what a kernel computed is checked only where kernels execute
 * (gpu_kernels_execute()); the fixture's counters (stack depth, resets, allocations per
 * device) are checked when it is present, and otherwise the state nbcuda reads back.
 */
#include <pthread.h>

#include "gpu_kernels.h"
#include "nbcuda.h"
#include "test.h"
#include "testdriver.h"

#define MAX_DEVICES 16

/* Device count, at least 2 (else the test skips), at most MAX_DEVICES used. */
static int devices(void) {
  REQUIRE_DEVICES(2);
  int n = 0;
  ASSERT_OK(nbc_device_count(&n));
  if (tdrv_present()) ASSERT_EQ(n, 2);
  return n < MAX_DEVICES ? n : MAX_DEVICES;
}

static nbc_device_t *device(int i) {
  nbc_device_t *d = NULL;
  ASSERT_OK(nbc_device_get(i, &d));
  return d;
}

/* The device of this thread's current context, NULL when none. */
static nbc_device_t *current(void) {
  nbc_device_t *cur = (nbc_device_t *)1;
  ASSERT_OK(nbc_device_current(&cur));
  return cur;
}

static void expect_depth(int depth) {
  if (tdrv_present()) ASSERT_EQ(tdrv()->stack_depth(), depth);
}

TEST(device_count_and_list) {
  int n = devices();
  nbc_device_t *list[MAX_DEVICES];
  int count = 0;
  ASSERT_OK(nbc_list_devices(list, MAX_DEVICES, &count));
  ASSERT(count >= n);
  for (int i = 0; i < n; i++) {
    ASSERT(list[i] == device(i));
    ASSERT_EQ(nbc_device_id(list[i]), i);
    for (int j = 0; j < i; j++)
      ASSERT(list[j] != list[i]);
  }
  ASSERT(current() == NULL); /* listing creates no context */
}

TEST(uuids_distinct) {
  int n = devices();
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++)
      ASSERT(strcmp(nbc_device_uuid(device(i)), nbc_device_uuid(device(j))) != 0);
}

/* Inside a scope everything happens on that device: the current context, the current
 * device, and where memory is allocated (the fixture counts bytes per device). */
static void check_scope(nbc_device_t *d) {
  ASSERT(current() == d);
  nbc_device_t *got;
  ASSERT_OK(nbc_get_current_device(&got));
  ASSERT(got == d);
  nbc_context_t *c;
  ASSERT_OK(nbc_current_context(-1, &c));
  ASSERT(nbc_context_device(c) == d);
  ASSERT_OK(nbc_context_release_freed(c)); /* a kept block would be reused */
  size_t before = tdrv_present() ? tdrv()->allocated_bytes(nbc_device_id(d)) : 0;
  nbc_devptr_t p;
  ASSERT_OK(nbc_mem_alloc(4096, &p));
  if (tdrv_present()) ASSERT(tdrv()->allocated_bytes(nbc_device_id(d)) >= before + 4096);
  ASSERT_OK(nbc_mem_free(p));
}

TEST(nested_scopes_restore_previous_context) {
  devices();
  nbc_device_t *d0 = device(0), *d1 = device(1);
  /* From an empty stack. */
  ASSERT(current() == NULL);
  ASSERT_OK(nbc_device_enter(d0));
  check_scope(d0);
  ASSERT_OK(nbc_device_enter(d1));
  check_scope(d1);
  expect_depth(2);
  ASSERT_OK(nbc_device_exit(d1));
  check_scope(d0);
  ASSERT_OK(nbc_device_exit(d0));
  ASSERT(current() == NULL);
  expect_depth(0);
  /* From a selected device: the selection is what the scopes return to. */
  nbc_device_t *selected;
  ASSERT_OK(nbc_select_device(1, &selected));
  ASSERT(selected == d1);
  ASSERT_OK(nbc_device_enter(d0));
  ASSERT_OK(nbc_device_enter(d1));
  check_scope(d1);
  ASSERT_OK(nbc_device_exit(d1));
  check_scope(d0);
  ASSERT_OK(nbc_device_exit(d0));
  check_scope(d1);
  expect_depth(1);
  /* The same device twice nests as well. */
  ASSERT_OK(nbc_device_enter(d1));
  ASSERT_OK(nbc_device_exit(d1));
  check_scope(d1);
  /* Leaving the wrong device is reported (and pops). */
  ASSERT_OK(nbc_device_enter(d0));
  ASSERT_STATUS(nbc_device_exit(d1), NBC_CONTEXT_MISMATCH);
  check_scope(d1);
}

/* ---- one thread per device -------------------------------------------------------------- */

#define ELEMENTS 4096
#define ROUNDS 3

typedef struct worker {
  int dev;
  int execute; /* kernels run: check add_one's result */
  pthread_barrier_t *start;
  const char *failure; /* NULL when every step worked */
  char detail[256];
} worker;

#define WORKER_CHECK(w, cond, what)                                                            \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      (w)->failure = (what);                                                                   \
      snprintf((w)->detail, sizeof(w)->detail, "%s", nbc_last_error());                        \
      return;                                                                                  \
    }                                                                                          \
  } while (0)

static void work_on_device(worker *w) {
  nbc_device_t *d, *cur = NULL;
  WORKER_CHECK(w, nbc_select_device(w->dev, &d) == NBC_OK, "select_device");
  WORKER_CHECK(w, nbc_device_current(&cur) == NBC_OK && cur == d, "current device");
  pthread_barrier_wait(w->start); /* every thread works at the same time from here */
  gpu_kernels k;
  WORKER_CHECK(w,
               nbc_module_load_data(gpu_kernels_ptx, strlen(gpu_kernels_ptx), NBC_IMAGE_PTX,
                                    &k.module) == NBC_OK,
               "module load");
  WORKER_CHECK(w, nbc_module_get_function(k.module, "add_one", &k.add_one) == NBC_OK,
               "get_function");
  nbc_stream_t *s = NULL;
  nbc_event_t *done = NULL;
  WORKER_CHECK(w, nbc_stream_create(&s) == NBC_OK, "stream_create");
  WORKER_CHECK(w, nbc_event_create(1, &done) == NBC_OK, "event_create");
  static _Thread_local uint32_t host[ELEMENTS];
  for (int round = 0; round < ROUNDS; round++) {
    nbc_devptr_t p = 0, q = 0;
    WORKER_CHECK(w, nbc_mem_alloc(sizeof host, &p) == NBC_OK, "mem_alloc");
    WORKER_CHECK(w, nbc_mem_alloc(sizeof host, &q) == NBC_OK, "mem_alloc");
    for (int i = 0; i < ELEMENTS; i++)
      host[i] = (uint32_t)(w->dev * 1000000 + round * 10000 + i);
    WORKER_CHECK(w, nbc_memcpy_htod_async(p, host, sizeof host, s) == NBC_OK, "htod_async");
    WORKER_CHECK(w, gpu_add_one(&k, s, p, ELEMENTS) == NBC_OK, "launch");
    WORKER_CHECK(w, nbc_event_record(done, s) == NBC_OK, "event_record");
    WORKER_CHECK(w, nbc_event_synchronize(done) == NBC_OK, "event_synchronize");
    WORKER_CHECK(w, nbc_memcpy_dtod(q, p, sizeof host) == NBC_OK, "dtod");
    memset(host, 0, sizeof host);
    WORKER_CHECK(w, nbc_memcpy_dtoh(host, q, sizeof host) == NBC_OK, "dtoh");
    uint32_t add = w->execute ? 1 : 0;
    for (int i = 0; i < ELEMENTS; i++)
      WORKER_CHECK(w, host[i] == (uint32_t)(w->dev * 1000000 + round * 10000 + i) + add,
                   "data read back");
    WORKER_CHECK(w, nbc_mem_free(p) == NBC_OK && nbc_mem_free(q) == NBC_OK, "mem_free");
  }
  WORKER_CHECK(w, nbc_device_current(&cur) == NBC_OK && cur == d, "current device after");
  nbc_event_destroy(done);
  nbc_stream_destroy(s);
  nbc_module_destroy(k.module);
  WORKER_CHECK(w, nbc_close() == NBC_OK, "close");
}

static void *worker_main(void *arg) {
  work_on_device(arg);
  return NULL;
}

TEST(thread_per_device_concurrently) {
  int n = devices();
  int execute = gpu_kernels_execute();
  nbc_device_t *main_device;
  ASSERT_OK(nbc_select_device(0, &main_device)); /* the main thread's own choice */
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, (unsigned)n);
  worker w[MAX_DEVICES];
  pthread_t t[MAX_DEVICES];
  /* Device 0 is taken by the last worker too: two threads may share a device. */
  for (int i = 0; i < n; i++) {
    w[i] = (worker){.dev = (i + 1) % n, .execute = execute, .start = &start};
    ASSERT_EQ(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
  }
  for (int i = 0; i < n; i++)
    pthread_join(t[i], NULL);
  pthread_barrier_destroy(&start);
  for (int i = 0; i < n; i++)
    if (w[i].failure) TEST_FAIL_("device %d: %s: %s", w[i].dev, w[i].failure, w[i].detail);
  /* The workers' selections and closes left this thread's stack alone... */
  ASSERT(current() == main_device);
  expect_depth(1);
  /* ... and a worker's nbc_close resets nothing (only the main thread's does). */
  if (tdrv_present())
    for (int i = 0; i < n; i++)
      ASSERT_EQ(tdrv()->primary_reset_count(i), 0);
  if (tdrv_present()) ASSERT_EQ(tdrv()->launch_count(), n * ROUNDS);
}

/* ---- close ------------------------------------------------------------------------------ */

TEST(close_on_main_thread_resets_every_device) {
  int n = devices();
  nbc_devptr_t p[MAX_DEVICES];
  int value = 42;
  for (int i = 0; i < n; i++) {
    nbc_device_t *d;
    ASSERT_OK(nbc_select_device(i, &d));
    ASSERT_OK(nbc_mem_alloc(sizeof value, &p[i]));
    ASSERT_OK(nbc_memcpy_htod(p[i], &value, sizeof value));
  }
  expect_depth(n);
  ASSERT_OK(nbc_close());
  ASSERT(current() == NULL);
  if (tdrv_present()) {
    for (int i = 0; i < n; i++) {
      ASSERT_EQ(tdrv()->primary_reset_count(i), 1);
      ASSERT_EQ(tdrv()->primary_refcount(i), 0);
    }
    ASSERT_EQ(tdrv()->live_allocations(), 0);
  }
  /* Every device's memory went with its reset; each device works again afterwards. */
  for (int i = 0; i < n; i++) {
    nbc_device_t *d = device(i);
    ASSERT_OK(nbc_device_enter(d));
    int back = 0;
    ASSERT(nbc_memcpy_dtoh(&back, p[i], sizeof back) != NBC_OK);
    nbc_devptr_t fresh;
    ASSERT_OK(nbc_mem_alloc(sizeof value, &fresh));
    ASSERT_OK(nbc_memcpy_htod(fresh, &value, sizeof value));
    ASSERT_OK(nbc_memcpy_dtoh(&back, fresh, sizeof back));
    ASSERT_EQ(back, 42);
    ASSERT_OK(nbc_mem_free(fresh));
    ASSERT_OK(nbc_device_exit(d));
  }
}

/* ---- cross-device event ------------------------------------------------------------------ */

TEST(event_of_one_device_waited_on_by_another) {
  devices();
  int execute = gpu_kernels_execute();
  /* A pending kernel is needed: a real one spins, the fixture's launch "runs" for a set
   * time. The fixture loaded as libcuda without NBCUDA_TESTDRIVER can do neither. */
  int pending = execute || tdrv_present();
  if (tdrv_present()) tdrv()->set_launch_delay_ms(300);
  nbc_device_t *d0 = device(0), *d1 = device(1);
  gpu_kernels k0, k1;
  nbc_stream_t *a, *b;
  nbc_event_t *e, *after;
  nbc_devptr_t flag;
  ASSERT_OK(nbc_device_enter(d0));
  gpu_kernels_load(&k0);
  ASSERT_OK(nbc_stream_create(&a));
  ASSERT_OK(nbc_event_create(0, &e));
  ASSERT_OK(nbc_mem_alloc(sizeof(uint32_t), &flag));
  ASSERT_OK(nbc_memset_d8(flag, 0, sizeof(uint32_t)));
  ASSERT_OK(nbc_device_exit(d0));
  ASSERT_OK(nbc_device_enter(d1));
  gpu_kernels_load(&k1);
  ASSERT_OK(nbc_stream_create(&b));
  ASSERT_OK(nbc_event_create(1, &after));
  ASSERT_OK(nbc_device_exit(d1));

  ASSERT_OK(nbc_device_enter(d0));
  ASSERT_OK(gpu_spin(&k0, a, 300, flag, 7));
  ASSERT_OK(nbc_event_record(e, a));
  ASSERT_OK(nbc_device_exit(d0));
  ASSERT_OK(nbc_device_enter(d1));
  ASSERT_OK(nbc_event_wait(e, b)); /* device 1's stream waits for device 0's kernel */
  ASSERT_OK(nbc_event_record(after, b));
  if (pending) {
    ASSERT_STATUS(nbc_stream_query(b), NBC_NOT_READY);
    ASSERT_STATUS(nbc_event_query(after), NBC_NOT_READY);
  }
  ASSERT_OK(nbc_stream_synchronize(b));
  /* b finished, so what it waited for has finished: the kernel on device 0. */
  ASSERT_OK(nbc_event_query(e));
  ASSERT_OK(nbc_device_exit(d1));
  if (execute) {
    uint32_t seen = 0;
    ASSERT_OK(nbc_memcpy_dtoh(&seen, flag, sizeof seen));
    ASSERT_EQ(seen, 7);
  }
  ASSERT_OK(nbc_device_enter(d0));
  ASSERT_OK(nbc_mem_free(flag));
  nbc_event_destroy(e);
  nbc_stream_destroy(a);
  gpu_kernels_unload(&k0);
  ASSERT_OK(nbc_device_exit(d0));
  ASSERT_OK(nbc_device_enter(d1));
  nbc_event_destroy(after);
  nbc_stream_destroy(b);
  gpu_kernels_unload(&k1);
  ASSERT_OK(nbc_device_exit(d1));
}

/* ---- peer access and copies -------------------------------------------------------------- */

TEST(peer_access) {
  devices();
  nbc_device_t *d0 = device(0), *d1 = device(1);
  int can = -1, self = -1;
  ASSERT_OK(nbc_device_can_access_peer(d0, d1, &can));
  ASSERT(can == 0 || can == 1);
  if (tdrv_present()) ASSERT_EQ(can, 1);
  ASSERT_OK(nbc_device_can_access_peer(d0, d0, &self));
  ASSERT_EQ(self, 0); /* a device is not its own peer */
  ASSERT_STATUS(nbc_device_can_access_peer(NULL, d1, &can), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_device_can_access_peer(d0, d1, NULL), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_device_enable_peer_access(NULL), NBC_INVALID_ARGUMENT);
  ASSERT_OK(nbc_device_can_access_peer(d0, d1, &can));
  ASSERT(current() == NULL); /* asking creates no context */

  ASSERT_OK(nbc_device_enter(d0));
  ASSERT_STATUS(nbc_device_enable_peer_access(d0), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "to itself");
  if (!can) {
    ASSERT(nbc_device_enable_peer_access(d1) != NBC_OK);
    ASSERT_CONTAINS(nbc_last_error(), "cuCtxEnablePeerAccess");
    SKIP("devices 0 and 1 cannot access each other's memory");
  }
  ASSERT_OK(nbc_device_enable_peer_access(d1));
  ASSERT_OK(nbc_device_enable_peer_access(d1)); /* already enabled: still success */
  if (tdrv_present()) ASSERT_EQ(tdrv()->calls("cuCtxEnablePeerAccess"), 2);
  ASSERT_OK(nbc_device_exit(d0));
  /* The other direction is a separate mapping. */
  ASSERT_OK(nbc_device_enter(d1));
  ASSERT_OK(nbc_device_enable_peer_access(d0));
  ASSERT_OK(nbc_device_exit(d1));
}

TEST(peer_copy) {
  devices();
  int execute = gpu_kernels_execute();
  nbc_device_t *d0 = device(0), *d1 = device(1);
  enum { N = 1 << 16 };
  static uint32_t host[N], back[N];
  for (int i = 0; i < N; i++)
    host[i] = (uint32_t)i * 2654435761u;
  nbc_context_t *c0, *c1;
  nbc_devptr_t src, dst;
  ASSERT_OK(nbc_device_enter(d0));
  ASSERT_OK(nbc_current_context(-1, &c0));
  ASSERT_OK(nbc_mem_alloc(sizeof host, &src));
  ASSERT_OK(nbc_memcpy_htod(src, host, sizeof host));
  ASSERT_OK(nbc_device_exit(d0));
  ASSERT_OK(nbc_device_enter(d1));
  ASSERT_OK(nbc_current_context(-1, &c1));
  ASSERT_OK(nbc_mem_alloc(sizeof host, &dst));
  ASSERT_OK(nbc_device_exit(d1));
  ASSERT(nbc_context_device(c0) == d0 && nbc_context_device(c1) == d1);

  /* With no context current at all: cuMemcpyPeer names both. */
  ASSERT(current() == NULL);
  ASSERT_OK(nbc_memcpy_peer(dst, c1, src, c0, sizeof host));
  ASSERT_OK(nbc_device_enter(d1));
  ASSERT_OK(nbc_memcpy_dtoh(back, dst, sizeof back));
  ASSERT(memcmp(host, back, sizeof host) == 0);
  /* Device 1 changes the data (where kernels run), and it comes back to device 0. */
  gpu_kernels k;
  gpu_kernels_load(&k);
  ASSERT_OK(gpu_add_one(&k, NULL, dst, N));
  ASSERT_OK(nbc_synchronize());
  ASSERT_OK(nbc_memcpy_peer(src, c0, dst, c1, sizeof host));
  ASSERT_OK(nbc_device_exit(d1));
  ASSERT_OK(nbc_device_enter(d0));
  ASSERT_OK(nbc_memcpy_dtoh(back, src, sizeof back));
  for (int i = 0; i < N; i++)
    ASSERT_EQ(back[i], host[i] + (execute ? 1u : 0u));
  ASSERT_OK(nbc_device_exit(d0));

  ASSERT_STATUS(nbc_memcpy_peer(dst, NULL, src, c0, 4), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_memcpy_peer(dst, c1, src, NULL, 4), NBC_INVALID_ARGUMENT);
  /* Past the end of the allocations: the driver refuses, nbcuda names the copy. */
  ASSERT(nbc_memcpy_peer(dst, c1, src, c0, sizeof host * 4) != NBC_OK);
  ASSERT_CONTAINS(nbc_last_error(), "cuMemcpyPeer: ");
  ASSERT_CONTAINS(nbc_last_error(), "from device 0 to device 1)");
  ASSERT_OK(nbc_device_enter(d1));
  gpu_kernels_unload(&k);
  ASSERT_OK(nbc_mem_free(dst));
  ASSERT_OK(nbc_device_exit(d1));
  ASSERT_OK(nbc_device_enter(d0));
  ASSERT_OK(nbc_mem_free(src));
  ASSERT_OK(nbc_device_exit(d0));
}

TEST_LIST(X(device_count_and_list) X(uuids_distinct) X(nested_scopes_restore_previous_context)
              X(thread_per_device_concurrently) X(close_on_main_thread_resets_every_device)
                  X(event_of_one_device_waited_on_by_another) X(peer_access) X(peer_copy))
TEST_MAIN()
