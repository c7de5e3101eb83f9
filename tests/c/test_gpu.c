/* test_gpu.c — what only a real GPU can show: kernels from hand-written PTX and from Python
 * source (nbc_compile, PTX and LTO-IR) computing the right numbers through nbc_launch and
 * nbc_launch_packed, events timing a kernel of known duration, streams and events NOT_READY
 * while a kernel runs, callbacks firing after the kernel before them, the per-thread default
 * stream not serialising with another thread's work (and the legacy one doing so), device
 * reset and nbc_close followed by new work, memory info following a big allocation, and a
 * child forked after initialisation getting NBC_FORKED.
 *
 * Every test but kernels_assemble skips unless kernels really execute: when NBCUDA_TESTDRIVER
 * is set (CI), when the driver cannot be used, and when the driver loaded is nbcuda's
 * software test driver under NBCUDA_DRIVER. tests/gpu/run.sh runs them on the H200.
 *
 * Durations come from gpu_kernels.h's spin kernel, which waits on %globaltimer (wall-clock
 * nanoseconds), so they hold whatever the clock rate; the bounds leave room for other test
 * processes sharing the GPU (ctest -j).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "gpu_kernels.h"
#include "nbcuda.h"
#include "ptx_check.h"
#include "test.h"
#include "testdriver.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Skips unless kernels execute here; then selects device 0 (its context is current). */
static nbc_device_t *require_gpu(void) {
  if (tdrv_present())
    SKIP("needs a real GPU (NBCUDA_TESTDRIVER is set: the test driver runs no kernels)");
  const char *why = nbc_driver_init_error();
  if (why) tdrv_skip_("needs a real GPU: %s", why);
  int n = 0;
  if (nbc_device_count(&n) != NBC_OK || n < 1)
    tdrv_skip_("needs a real GPU: %s", nbc_last_error());
  if (tdrv_is_fixture(nbc_driver_path()))
    SKIP("needs a real GPU (the driver loaded is nbcuda's software test driver)");
  nbc_device_t *d;
  ASSERT_OK(nbc_select_device(0, &d));
  return d;
}

/* ---- kernels ------------------------------------------------------------------------------
 */

/* Runs everywhere: the PTX the other tests launch is valid for the assembler. */
TEST(kernels_assemble) {
  char log[8192];
  int rc = ptx_check_ptxas(gpu_kernels_ptx, strlen(gpu_kernels_ptx), 0, log, sizeof log);
  if (rc < 0) SKIP("ptxas not found");
  if (rc != 0) TEST_FAIL_("ptxas rejected gpu_kernels.h:\n%s", log);
}

#define BIG_N ((1u << 20) + 3u) /* not a multiple of the block size */

static uint32_t *host_ramp(size_t n) {
  uint32_t *h = malloc(n * sizeof *h);
  ASSERT(h != NULL);
  for (size_t i = 0; i < n; i++)
    h[i] = (uint32_t)(i * 7u);
  return h;
}

static void expect_ramp_plus(nbc_devptr_t p, size_t n, uint32_t plus) {
  uint32_t *h = calloc(n, sizeof *h);
  ASSERT(h != NULL);
  ASSERT_OK(nbc_memcpy_dtoh(h, p, n * sizeof *h));
  for (size_t i = 0; i < n; i++)
    if (h[i] != (uint32_t)(i * 7u) + plus)
      TEST_FAIL_("element %zu is %u, expected %u", i, h[i], (uint32_t)(i * 7u) + plus);
  free(h);
}

TEST(ptx_launch_with_argument_array_and_packed_buffer) {
  require_gpu();
  gpu_kernels k;
  gpu_kernels_load(&k);
  uint32_t *h = host_ramp(BIG_N);
  nbc_devptr_t p;
  ASSERT_OK(nbc_mem_alloc(BIG_N * sizeof *h, &p));
  ASSERT_OK(nbc_memcpy_htod(p, h, BIG_N * sizeof *h));
  ASSERT_OK(gpu_add_one(&k, NULL, p, BIG_N)); /* the default stream */
  ASSERT_OK(nbc_synchronize());
  expect_ramp_plus(p, BIG_N, 1);
  nbc_stream_t *s;
  ASSERT_OK(nbc_stream_create(&s));
  ASSERT_OK(gpu_add_one(&k, s, p, BIG_N));
  ASSERT_OK(gpu_add_one(&k, s, p, BIG_N)); /* in order on one stream */
  ASSERT_OK(nbc_stream_synchronize(s));
  expect_ramp_plus(p, BIG_N, 3);
  /* The same kernel with its two u64 parameters packed in one 16-byte buffer. */
  unsigned char packed[16];
  uint64_t n = BIG_N;
  memcpy(packed, &p, 8);
  memcpy(packed + 8, &n, 8);
  unsigned grid[3] = {(BIG_N + 255) / 256, 1, 1}, block[3] = {256, 1, 1};
  ASSERT_OK(nbc_launch_packed(k.add_one, grid, block, 0, s, packed, sizeof packed));
  ASSERT_OK(nbc_stream_synchronize(s));
  expect_ramp_plus(p, BIG_N, 4);
  /* Only the first n elements: a shorter n leaves the rest alone. */
  ASSERT_OK(gpu_add_one(&k, s, p, 1000));
  ASSERT_OK(nbc_stream_synchronize(s));
  uint32_t edge[2];
  ASSERT_OK(nbc_memcpy_dtoh(edge, p + 999 * sizeof(uint32_t), sizeof edge));
  ASSERT_EQ(edge[0], 999u * 7u + 5u);
  ASSERT_EQ(edge[1], 1000u * 7u + 4u);
  /* A block the device refuses is the driver's error, with the launch described. */
  unsigned huge_block[3] = {4096, 1, 1};
  void *args[] = {&p, &n};
  ASSERT_STATUS(nbc_launch(k.add_one, grid, huge_block, 0, s, args), NBC_DRIVER_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "cuLaunchKernel: ");
  ASSERT_CONTAINS(nbc_last_error(), "block (4096, 1, 1)");
  nbc_stream_destroy(s);
  ASSERT_OK(nbc_mem_free(p));
  gpu_kernels_unload(&k);
  free(h);
}

/* ---- kernels compiled from Python -------------------------------------------------------- */

static const char python_source[] = "from numba import cuda\n"
                                    "\n"
                                    "def saxpy(a, x, y, out):\n"
                                    "    i = cuda.grid(1)\n"
                                    "    if i < out.size:\n"
                                    "        out[i] = a * x[i] + y[i]\n"
                                    "\n"
                                    "def floordiv_mod(a, out):\n"
                                    "    i = cuda.grid(1)\n"
                                    "    if i < a.shape[0]:\n"
                                    "        out[i] = a[i] // 7 * 100 + a[i] % 7\n";

#define SAXPY_SIG "void(float32, float32[::1], float32[::1], float32[::1])"
#define FLOORDIV_SIG "void(int64[::1], int64[::1])"

/* Compiles a kernel of python_source for the device's compute capability. */
static nbc_compile_result_t *compile_kernel(nbc_device_t *d, const char *name, const char *sig,
                                            nbc_output_t output) {
  nbc_compile_options_t o;
  nbc_compile_options_init(&o);
  o.device = 0;
  o.abi = NBC_ABI_NUMBA;
  o.output = output;
  nbc_device_compute_capability(d, &o.cc_major, &o.cc_minor);
  nbc_source_t src = {python_source, 0, "gpu_kernels.py", 1, 0};
  nbc_compile_result_t *r = NULL;
  if (nbc_compile(&src, name, sig, &o, NULL, &r) != NBC_OK)
    TEST_FAIL_("compiling %s: %s", name, nbc_last_error());
  return r;
}

/* The packed parameters of a Numba-ABI kernel: arrays flattened as numba does. */
typedef struct packed_args {
  nbc_signature_t *sig;
  unsigned char *buf;
  size_t size;
} packed_args;

static packed_args pack_begin(const char *signature) {
  packed_args a = {0};
  ASSERT_OK(nbc_signature_parse(signature, &a.sig));
  a.size = nbc_signature_params_size(a.sig);
  a.buf = calloc(1, a.size);
  ASSERT(a.buf != NULL);
  return a;
}

static void pack_vector(packed_args *a, int index, nbc_devptr_t data, char kind, int itemsize,
                        int64_t n) {
  ASSERT_OK(nbc_signature_pack_array(a->sig, index, a->buf, data, kind, itemsize, 1, &n, NULL));
}

static void pack_end(packed_args *a) {
  nbc_signature_destroy(a->sig);
  free(a->buf);
}

static void launch_1d(nbc_function_t *f, packed_args *a, int64_t n) {
  unsigned grid[3] = {(unsigned)((n + 127) / 128), 1, 1}, block[3] = {128, 1, 1};
  ASSERT_OK(nbc_launch_packed(f, grid, block, 0, NULL, a->buf, a->size));
  ASSERT_OK(nbc_synchronize());
}

#define SAXPY_N 100003

/* Runs the saxpy kernel found in module m and checks out = 2.5 * x + y. */
static void run_saxpy(nbc_module_t *m, const char *symbol) {
  nbc_function_t *f;
  ASSERT_OK(nbc_module_get_function(m, symbol, &f));
  static float x[SAXPY_N], y[SAXPY_N], out[SAXPY_N];
  for (int i = 0; i < SAXPY_N; i++) {
    x[i] = (float)i * 0.5f - 1000.0f;
    y[i] = (float)(i % 97) * 0.25f;
  }
  nbc_devptr_t dx, dy, dout;
  ASSERT_OK(nbc_mem_alloc(sizeof x, &dx));
  ASSERT_OK(nbc_mem_alloc(sizeof y, &dy));
  ASSERT_OK(nbc_mem_alloc(sizeof out, &dout));
  ASSERT_OK(nbc_memcpy_htod(dx, x, sizeof x));
  ASSERT_OK(nbc_memcpy_htod(dy, y, sizeof y));
  ASSERT_OK(nbc_memset_d8(dout, 0, sizeof out));
  packed_args a = pack_begin(SAXPY_SIG);
  ASSERT_OK(nbc_signature_pack_float(a.sig, 0, a.buf, 2.5));
  pack_vector(&a, 1, dx, 'f', 4, SAXPY_N);
  pack_vector(&a, 2, dy, 'f', 4, SAXPY_N);
  pack_vector(&a, 3, dout, 'f', 4, SAXPY_N);
  launch_1d(f, &a, SAXPY_N);
  ASSERT_OK(nbc_memcpy_dtoh(out, dout, sizeof out));
  for (int i = 0; i < SAXPY_N; i++) {
    float want = 2.5f * x[i] + y[i];
    float tol =
        1e-6f * (want < 0 ? -want : want) + 1e-6f; /* a fused multiply-add rounds once */
    float diff = out[i] - want;
    if (diff > tol || diff < -tol) TEST_FAIL_("out[%d] = %.9g, expected %.9g", i, out[i], want);
  }
  pack_end(&a);
  ASSERT_OK(nbc_mem_free(dx));
  ASSERT_OK(nbc_mem_free(dy));
  ASSERT_OK(nbc_mem_free(dout));
}

TEST(compiled_python_kernels) {
  nbc_device_t *d = require_gpu();
  nbc_compile_result_t *r = compile_kernel(d, "saxpy", SAXPY_SIG, NBC_OUTPUT_PTX);
  size_t size;
  const char *code = nbc_compile_result_code(r, &size);
  nbc_module_t *m;
  ASSERT_OK(nbc_module_load_data(code, size, NBC_IMAGE_PTX, &m));
  run_saxpy(m, nbc_compile_result_symbol(r));
  nbc_module_destroy(m);
  nbc_compile_result_destroy(r);

  /* Python's floor division and modulo (sign of the divisor) on the device. */
  r = compile_kernel(d, "floordiv_mod", FLOORDIV_SIG, NBC_OUTPUT_PTX);
  code = nbc_compile_result_code(r, &size);
  ASSERT_OK(nbc_module_load_data(code, size, NBC_IMAGE_AUTO, &m));
  nbc_function_t *f;
  ASSERT_OK(nbc_module_get_function(m, nbc_compile_result_symbol(r), &f));
  enum { N = 201 };
  int64_t a[N], out[N];
  for (int i = 0; i < N; i++)
    a[i] = i - 100;
  nbc_devptr_t da, dout;
  ASSERT_OK(nbc_mem_alloc(sizeof a, &da));
  ASSERT_OK(nbc_mem_alloc(sizeof out, &dout));
  ASSERT_OK(nbc_memcpy_htod(da, a, sizeof a));
  packed_args args = pack_begin(FLOORDIV_SIG);
  pack_vector(&args, 0, da, 'i', 8, N);
  pack_vector(&args, 1, dout, 'i', 8, N);
  launch_1d(f, &args, N);
  ASSERT_OK(nbc_memcpy_dtoh(out, dout, sizeof out));
  for (int i = 0; i < N; i++) {
    int64_t q = a[i] / 7, m7 = a[i] % 7;
    if (m7 != 0 && m7 < 0) {
      q -= 1;
      m7 += 7;
    }
    ASSERT_EQ(out[i], q * 100 + m7);
  }
  ASSERT_EQ(out[0], -15 * 100 + 5); /* -100 // 7 == -15, -100 % 7 == 5 */
  pack_end(&args);
  ASSERT_OK(nbc_mem_free(da));
  ASSERT_OK(nbc_mem_free(dout));
  nbc_module_destroy(m);
  nbc_compile_result_destroy(r);
}

TEST(ltoir_loaded_and_linked) {
  nbc_device_t *d = require_gpu();
  nbc_compile_result_t *r = compile_kernel(d, "saxpy", SAXPY_SIG, NBC_OUTPUT_LTOIR);
  size_t size;
  const unsigned char *code = (const unsigned char *)nbc_compile_result_code(r, &size);
  ASSERT(size > 4 && code[0] == 0xED && code[1] == 0x43 && code[2] == 0x4E && code[3] == 0x7F);
  /* Recognised by content and linked by nvJitLink for this device. */
  nbc_module_t *m;
  nbc_status_t st = nbc_module_load_data(code, size, NBC_IMAGE_AUTO, &m);
  if (st == NBC_NO_JITLINK) SKIP("nvJitLink is not available");
  ASSERT_OK(st);
  run_saxpy(m, nbc_compile_result_symbol(r));
  nbc_module_destroy(m);
  /* The same through nbc_module_link, with a PTX image of other kernels alongside. */
  nbc_image_t images[2] = {{code, size, NBC_IMAGE_LTOIR, NULL},
                           {gpu_kernels_ptx, strlen(gpu_kernels_ptx), NBC_IMAGE_PTX, NULL}};
  ASSERT_OK(nbc_module_link(images, 2, &m));
  run_saxpy(m, nbc_compile_result_symbol(r));
  nbc_function_t *add_one;
  ASSERT_OK(nbc_module_get_function(m, "add_one", &add_one));
  nbc_module_destroy(m);
  nbc_compile_result_destroy(r);
}

/* ---- events, queries, callbacks ------------------------------------------------------------
 */

TEST(events_time_a_kernel_of_known_duration) {
  require_gpu();
  gpu_kernels k;
  gpu_kernels_load(&k);
  nbc_stream_t *s;
  nbc_event_t *start, *end, *mid;
  ASSERT_OK(nbc_stream_create(&s));
  ASSERT_OK(nbc_event_create(1, &start));
  ASSERT_OK(nbc_event_create(1, &mid));
  ASSERT_OK(nbc_event_create(1, &end));
  ASSERT_OK(nbc_event_record(start, s));
  ASSERT_OK(gpu_spin(&k, s, 100, 0, 0));
  ASSERT_OK(nbc_event_record(mid, s));
  ASSERT_OK(gpu_spin(&k, s, 20, 0, 0));
  ASSERT_OK(nbc_event_record(end, s));
  ASSERT_OK(nbc_event_synchronize(end));
  float long_ms = 0, short_ms = 0, back_ms = 0;
  ASSERT_OK(nbc_event_elapsed_time(start, mid, &long_ms));
  ASSERT_OK(nbc_event_elapsed_time(mid, end, &short_ms));
  ASSERT_OK(nbc_event_elapsed_time(mid, start, &back_ms));
  if (!(long_ms >= 99.0f && long_ms < 3000.0f))
    TEST_FAIL_("100 ms kernel timed at %g ms", long_ms);
  if (!(short_ms >= 19.0f && short_ms < 2000.0f))
    TEST_FAIL_("20 ms kernel timed at %g ms", short_ms);
  ASSERT(short_ms < long_ms);
  ASSERT(back_ms < 0 && back_ms > -long_ms - 1.0f); /* the order of the events matters */
  nbc_event_destroy(start);
  nbc_event_destroy(mid);
  nbc_event_destroy(end);
  nbc_stream_destroy(s);
  gpu_kernels_unload(&k);
}

TEST(stream_and_event_not_ready_while_a_kernel_runs) {
  require_gpu();
  gpu_kernels k;
  gpu_kernels_load(&k);
  nbc_stream_t *s;
  nbc_event_t *e;
  ASSERT_OK(nbc_stream_create(&s));
  ASSERT_OK(nbc_event_create(0, &e));
  ASSERT_OK(nbc_stream_query(s));
  double t0 = now_ms();
  ASSERT_OK(gpu_spin(&k, s, 500, 0, 0));
  ASSERT_OK(nbc_event_record(e, s));
  ASSERT_STATUS(nbc_stream_query(s), NBC_NOT_READY);
  ASSERT_STATUS(nbc_event_query(e), NBC_NOT_READY);
  ASSERT_OK(nbc_event_synchronize(e));
  double waited = now_ms() - t0;
  if (waited < 450.0)
    TEST_FAIL_("event_synchronize returned after %g ms of a 500 ms kernel", waited);
  ASSERT_OK(nbc_event_query(e));
  ASSERT_OK(nbc_stream_query(s));
  /* The same on the default stream, with nbc_synchronize. */
  ASSERT_OK(gpu_spin(&k, NULL, 200, 0, 0));
  ASSERT_STATUS(nbc_stream_query(NULL), NBC_NOT_READY);
  ASSERT_OK(nbc_synchronize());
  ASSERT_OK(nbc_stream_query(NULL));
  nbc_event_destroy(e);
  nbc_stream_destroy(s);
  gpu_kernels_unload(&k);
}

typedef struct callback_record {
  atomic_int ran;
  double at_ms;
  nbc_stream_t *stream;
  nbc_status_t status;
  pthread_t thread;
} callback_record;

static void on_kernel_done(nbc_stream_t *stream, nbc_status_t status, void *arg) {
  callback_record *r = arg;
  r->at_ms = now_ms();
  r->stream = stream;
  r->status = status;
  r->thread = pthread_self();
  atomic_store(&r->ran, 1);
}

/* The callback comes after the kernel queued before it: not while it spins, at about its
 * end, and the kernel's store is in memory by then. */
static void check_callback_after_kernel(nbc_stream_t *s, nbc_stream_t *expected_stream) {
  gpu_kernels k;
  gpu_kernels_load(&k);
  nbc_devptr_t flag;
  ASSERT_OK(nbc_mem_alloc(sizeof(uint32_t), &flag));
  ASSERT_OK(nbc_memset_d8(flag, 0, sizeof(uint32_t)));
  callback_record rec;
  memset(&rec, 0, sizeof rec);
  atomic_init(&rec.ran, 0);
  double t0 = now_ms();
  ASSERT_OK(gpu_spin(&k, s, 300, flag, 0xC0FFEE));
  ASSERT_OK(nbc_stream_add_callback(s, on_kernel_done, &rec));
  ASSERT_EQ(atomic_load(&rec.ran), 0); /* the kernel is still spinning */
  ASSERT_OK(nbc_stream_synchronize(s));
  ASSERT_EQ(atomic_load(&rec.ran), 1);
  if (rec.at_ms - t0 < 280.0)
    TEST_FAIL_("the callback ran %g ms after a 300 ms kernel was launched", rec.at_ms - t0);
  ASSERT(rec.stream == expected_stream);
  ASSERT_EQ(rec.status, NBC_OK);
  ASSERT(!pthread_equal(rec.thread, pthread_self()));
  uint32_t seen = 0;
  ASSERT_OK(nbc_memcpy_dtoh(&seen, flag, sizeof seen));
  ASSERT_EQ(seen, 0xC0FFEE);
  ASSERT_OK(nbc_mem_free(flag));
  gpu_kernels_unload(&k);
}

TEST(callbacks_fire_after_kernels) {
  require_gpu();
  nbc_stream_t *s, *d;
  ASSERT_OK(nbc_stream_create(&s));
  check_callback_after_kernel(s, s);
  nbc_stream_destroy(s);
  ASSERT_OK(nbc_default_stream(&d));
  check_callback_after_kernel(NULL, d);
}

/* ---- per-thread default stream --------------------------------------------------------------
 */

/* Thread A spins a long kernel on stream `kind` (NULL: the default stream) of its own; then
 * this thread runs a short kernel on the same kind of stream and synchronises it. Returns
 * how long that took and whether A's kernel was still running afterwards. */
typedef struct overlap {
  gpu_kernels *k;
  nbc_stream_t *stream;
  nbc_event_t *a_done;
  pthread_barrier_t launched;
  nbc_status_t a_status;
} overlap;

static void *long_kernel_thread(void *arg) {
  overlap *o = arg;
  nbc_device_t *d;
  o->a_status = nbc_select_device(0, &d);
  if (o->a_status == NBC_OK) o->a_status = gpu_spin(o->k, o->stream, 1000, 0, 0);
  if (o->a_status == NBC_OK) o->a_status = nbc_event_record(o->a_done, o->stream);
  pthread_barrier_wait(&o->launched);
  if (o->a_status == NBC_OK) o->a_status = nbc_event_synchronize(o->a_done);
  return NULL;
}

static double short_work_while_other_thread_spins(nbc_stream_t *stream, int *pother_running) {
  gpu_kernels k;
  gpu_kernels_load(&k);
  overlap o = {.k = &k, .stream = stream};
  ASSERT_OK(nbc_event_create(0, &o.a_done));
  pthread_barrier_init(&o.launched, NULL, 2);
  nbc_devptr_t p;
  ASSERT_OK(nbc_mem_alloc(256 * sizeof(uint32_t), &p));
  ASSERT_OK(nbc_memset_d8(p, 0, 256 * sizeof(uint32_t)));
  pthread_t a;
  ASSERT_EQ(pthread_create(&a, NULL, long_kernel_thread, &o), 0);
  pthread_barrier_wait(&o.launched);
  double t0 = now_ms();
  ASSERT_OK(gpu_add_one(&k, stream, p, 256));
  ASSERT_OK(nbc_stream_synchronize(stream));
  double took = now_ms() - t0;
  *pother_running = nbc_event_query(o.a_done) == NBC_NOT_READY;
  pthread_join(a, NULL);
  ASSERT_OK(o.a_status);
  uint32_t first = 0;
  ASSERT_OK(nbc_memcpy_dtoh(&first, p, sizeof first));
  ASSERT_EQ(first, 1);
  ASSERT_OK(nbc_mem_free(p));
  pthread_barrier_destroy(&o.launched);
  nbc_event_destroy(o.a_done);
  gpu_kernels_unload(&k);
  return took;
}

TEST(per_thread_default_stream_does_not_serialise) {
  setenv("NBCUDA_PER_THREAD_DEFAULT_STREAM", "1", 1); /* read when the driver loads */
  require_gpu();
  ASSERT_EQ(nbc_driver_per_thread_default_stream(), 1);
  int other_running = 0;
  double took = short_work_while_other_thread_spins(NULL, &other_running);
  if (took > 500.0)
    TEST_FAIL_("the default stream waited %g ms for another thread's 1 s kernel", took);
  ASSERT(other_running);
}

TEST(explicit_per_thread_stream_does_not_serialise) {
  unsetenv("NBCUDA_PER_THREAD_DEFAULT_STREAM");
  unsetenv("NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM");
  require_gpu();
  ASSERT_EQ(nbc_driver_per_thread_default_stream(), 0);
  nbc_stream_t *ptds;
  ASSERT_OK(nbc_per_thread_default_stream(&ptds));
  int other_running = 0;
  double took = short_work_while_other_thread_spins(ptds, &other_running);
  if (took > 500.0)
    TEST_FAIL_("the per-thread stream waited %g ms for another thread's 1 s kernel", took);
  ASSERT(other_running);
}

/* The control: without the per-thread default stream both threads share the legacy
 * default stream, so the short kernel waits for the long one. */
TEST(legacy_default_stream_serialises) {
  unsetenv("NBCUDA_PER_THREAD_DEFAULT_STREAM");
  unsetenv("NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM");
  require_gpu();
  ASSERT_EQ(nbc_driver_per_thread_default_stream(), 0);
  int other_running = 1;
  double took = short_work_while_other_thread_spins(NULL, &other_running);
  if (took < 800.0)
    TEST_FAIL_("the legacy default stream ran past another thread's kernel (%g ms)", took);
  ASSERT(!other_running);
}

/* ---- reset, close, memory, fork ------------------------------------------------------------
 */

TEST(device_reset_then_new_work) {
  nbc_device_t *d = require_gpu();
  gpu_kernels k;
  gpu_kernels_load(&k);
  nbc_stream_t *old_stream;
  ASSERT_OK(nbc_stream_create(&old_stream));
  uint32_t *h = host_ramp(BIG_N);
  nbc_devptr_t old;
  ASSERT_OK(nbc_mem_alloc(BIG_N * sizeof *h, &old));
  ASSERT_OK(nbc_memcpy_htod(old, h, BIG_N * sizeof *h));
  ASSERT_OK(gpu_add_one(&k, old_stream, old, BIG_N));
  ASSERT_OK(nbc_stream_synchronize(old_stream));

  ASSERT_OK(nbc_device_reset(d));
  /* The reset context is still on this thread's stack, and the driver refuses work in it
   * until it is retained again (CUDA_ERROR_CONTEXT_IS_DESTROYED, h200_probe's
   * memalloc_after_reset): as in numba, selecting the device makes it usable again. */
  nbc_device_t *again;
  ASSERT_OK(nbc_select_device(0, &again));
  ASSERT(again == d);
  /* Everything of the old context is gone: its memory, its module, its streams. */
  uint32_t one;
  ASSERT(nbc_memcpy_dtoh(&one, old, sizeof one) != NBC_OK);
  nbc_function_t *f;
  ASSERT_STATUS(nbc_module_get_function(k.module, "add_one", &f), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "unloaded by a context reset");
  gpu_kernels_unload(&k);
  /* old_stream's handle died with the context: using it is undefined behaviour in the real
   * driver (it crashed the H200 run), so it is neither queried nor destroyed here. */
  (void)old_stream;

  /* New work in the fresh context. */
  gpu_kernels_load(&k);
  nbc_devptr_t p;
  ASSERT_OK(nbc_mem_alloc(BIG_N * sizeof *h, &p));
  ASSERT_OK(nbc_memcpy_htod(p, h, BIG_N * sizeof *h));
  nbc_stream_t *s;
  ASSERT_OK(nbc_stream_create(&s));
  ASSERT_OK(gpu_add_one(&k, s, p, BIG_N));
  ASSERT_OK(nbc_stream_synchronize(s));
  expect_ramp_plus(p, BIG_N, 1);
  nbc_stream_destroy(s);
  ASSERT_OK(nbc_mem_free(p));
  gpu_kernels_unload(&k);
  free(h);
}

TEST(close_then_reuse) {
  require_gpu();
  gpu_kernels k;
  gpu_kernels_load(&k);
  nbc_devptr_t p;
  ASSERT_OK(nbc_mem_alloc(4096, &p));
  ASSERT_OK(nbc_close());
  nbc_device_t *cur = (nbc_device_t *)1;
  ASSERT_OK(nbc_device_current(&cur));
  ASSERT(cur == NULL);
  nbc_function_t *f;
  ASSERT_STATUS(nbc_module_get_function(k.module, "spin", &f), NBC_INVALID_ARGUMENT);
  gpu_kernels_unload(&k);
  /* Used again: device 0's context comes back lazily and runs kernels. */
  uint32_t *h = host_ramp(BIG_N);
  ASSERT_OK(nbc_mem_alloc(BIG_N * sizeof *h, &p));
  ASSERT_OK(nbc_device_current(&cur));
  ASSERT_EQ(nbc_device_id(cur), 0);
  gpu_kernels_load(&k);
  ASSERT_OK(nbc_memcpy_htod(p, h, BIG_N * sizeof *h));
  ASSERT_OK(gpu_add_one(&k, NULL, p, BIG_N));
  ASSERT_OK(nbc_synchronize());
  expect_ramp_plus(p, BIG_N, 1);
  ASSERT_OK(nbc_mem_free(p));
  gpu_kernels_unload(&k);
  ASSERT_OK(nbc_close()); /* twice in a process */
  free(h);
}

TEST(memory_info_follows_a_big_allocation) {
  require_gpu();
  const size_t gib = (size_t)1 << 30, big = 4 * gib;
  nbc_context_t *c;
  ASSERT_OK(nbc_current_context(-1, &c));
  size_t free0, total0, free1, total1, free2, total2;
  ASSERT_OK(nbc_context_get_memory_info(c, &free0, &total0));
  ASSERT(free0 <= total0);
  if (free0 < big + 2 * gib) SKIP("less than 6 GiB of device memory free");
  nbc_devptr_t p;
  ASSERT_OK(nbc_mem_alloc(big, &p));
  ASSERT_OK(nbc_memset_d8(p, 0x5a, big)); /* touch it all */
  ASSERT_OK(nbc_context_get_memory_info(c, &free1, &total1));
  ASSERT_EQ(total1, total0);
  /* Other test processes share the GPU: a 1 GiB margin for what they free meanwhile. */
  if (free1 > free0 - big + gib)
    TEST_FAIL_("free memory went from %zu to %zu after allocating %zu bytes", free0, free1,
               big);
  ASSERT_OK(nbc_mem_free(p));
  ASSERT_OK(nbc_context_get_memory_info(NULL, &free2, &total2));
  if (free2 + gib < free1 + big)
    TEST_FAIL_("free memory went from %zu to %zu after freeing %zu bytes", free1, free2, big);
}

TEST(fork_after_init_gives_forked_in_the_child) {
  require_gpu();
  nbc_devptr_t p;
  uint32_t v = 77;
  ASSERT_OK(nbc_mem_alloc(sizeof v, &p));
  ASSERT_OK(nbc_memcpy_htod(p, &v, sizeof v));
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    nbc_devptr_t q = 0;
    uint32_t got = 0;
    int ok = nbc_mem_alloc(16, &q) == NBC_FORKED &&
             strstr(nbc_last_error(), "CUDA initialized before forking") != NULL &&
             nbc_memcpy_dtoh(&got, p, sizeof got) == NBC_FORKED;
    nbc_stream_t *s = NULL;
    ok = ok && nbc_stream_create(&s) == NBC_FORKED && s == NULL;
    if (!ok) fprintf(stderr, "child: %s\n", nbc_last_error());
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  /* The parent is unaffected. */
  uint32_t back = 0;
  ASSERT_OK(nbc_memcpy_dtoh(&back, p, sizeof back));
  ASSERT_EQ(back, 77);
  ASSERT_OK(nbc_mem_free(p));
}

TEST_LIST(X(kernels_assemble) X(ptx_launch_with_argument_array_and_packed_buffer)
              X(compiled_python_kernels) X(ltoir_loaded_and_linked)
                  X(events_time_a_kernel_of_known_duration)
                      X(stream_and_event_not_ready_while_a_kernel_runs)
                          X(callbacks_fire_after_kernels)
                              X(per_thread_default_stream_does_not_serialise)
                                  X(explicit_per_thread_stream_does_not_serialise)
                                      X(legacy_default_stream_serialises)
                                          X(device_reset_then_new_work) X(close_then_reuse)
                                              X(memory_info_follows_a_big_allocation)
                                                  X(fork_after_init_gives_forked_in_the_child))
TEST_MAIN()
