/* host_calls.c — per-call cost of nbcuda's host functions next to the raw driver call.
 *
 * For each host function the benchmark times batches of calls through nbcuda and, in the
 * same run and interleaved with them, batches of the equivalent raw driver calls made
 * through function pointers obtained from the very libcuda nbcuda loaded (dlopen of
 * nbc_driver_path() + its cuGetProcAddress, same API version and stream flags). Each batch
 * gives a per-call average; the table shows the median over batches, so one slow batch (a
 * page fault, a preemption) does not move it. Work a batch queues (launches, copies, records)
 * is drained with a synchronize outside the timed region.
 *
 * The raw side is the driver call(s) the operation needs and nothing else: the C library's
 * own extra driver calls (e.g. cuCtxGetCurrent, to make a context current the way numba's
 * require_context does) count as its overhead. Events are measured both with timing
 * disabled and with timing (the default of numba's event(), and dearer on a GPU).
 *
 * Output: a markdown table `function | nbcuda ns | raw ns | overhead ns` (goal: every
 * overhead <= 20 ns), or with --json one JSON object {"driver", "batches", "calls",
 * "rows": {key: {"name", "nbcuda_ns", "raw_ns", "ok"}}} for bench/results.py.
 *
 * The create + destroy and alloc + free rows time nbcuda's reuse unless NBCUDA_REUSE=0 (a kept
 * stream or event, a freed block handed back: src/host/kept.c, reuse.c) against the raw calls
 * it saves, which is not the same work: the markdown marks them "[reuse on]", and
 * tests/gpu/run.sh runs the binary twice, with and without NBCUDA_REUSE=0, so that
 * bench/results.py can put the reuse-off rows with the like-for-like ones.
 *
 * Usage: NBCUDA_DRIVER=<libcuda.so.1 or the test driver> ./host_calls [--json] [batches]
 * Works against the real driver (GPU machine) and the test driver (CI).
 *
 * Built a second time as a shared library (libhost_calls.so, HOST_CALLS_LIBRARY) so that
 * bench/host_py.py can time the raw driver calls inside the Python process, one batch of
 * them next to each batch of Python calls: host_calls_setup() makes the objects,
 * host_calls_batch(key, which, calls) runs one batch of a row (which: 0 nbcuda's C API,
 * 1 the raw driver) and returns nanoseconds per call; host_calls_raw_op(key) gives a row's
 * function to bench/bare_binding.c, which calls it once per Python call. A separate process measured at
 * another moment differs from the Python process by more than the overheads compared
 * (up to microseconds between runs on the same machine).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nbcuda.h"

typedef int CUresult;
typedef void *CUptr;
typedef unsigned long long CUdeviceptr;

static struct {
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuCtxGetCurrent)(CUptr *);
  CUresult (*cuCtxSynchronize)(void);
  CUresult (*cuStreamCreate)(CUptr *, unsigned);
  CUresult (*cuStreamDestroy)(CUptr);
  CUresult (*cuStreamQuery)(CUptr);
  CUresult (*cuStreamSynchronize)(CUptr);
  CUresult (*cuStreamWaitEvent)(CUptr, CUptr, unsigned);
  CUresult (*cuEventCreate)(CUptr *, unsigned);
  CUresult (*cuEventDestroy)(CUptr);
  CUresult (*cuEventRecord)(CUptr, CUptr);
  CUresult (*cuEventQuery)(CUptr);
  CUresult (*cuEventSynchronize)(CUptr);
  CUresult (*cuEventElapsedTime)(float *, CUptr, CUptr);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuMemGetInfo)(size_t *, size_t *);
  CUresult (*cuLaunchKernel)(CUptr, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUptr, void **, void **);
} raw;

#ifdef HOST_CALLS_LIBRARY
#define MAIN_ONLY __attribute__((unused)) /* the library runs rows; main prints them */
#else
#define MAIN_ONLY
#endif

static const char empty_ptx[] = ".version 7.0\n.target sm_50\n.address_size 64\n"
                                ".visible .entry empty()\n{\n  ret;\n}\n";

static int batches = 201;
MAIN_ONLY static int per_batch = 200;
static int json; /* --json: one JSON object instead of the markdown table */

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return v[n / 2];
}

/* One benchmark row: op(which) performs one call (which: 0 nbcuda, 1 raw). */
typedef int (*op_fn)(int which);
typedef void (*drain_fn)(void);

static int failures;
static int rows_printed;

/* Whether nbcuda reuses kept streams, events and freed blocks in this process. */
MAIN_ONLY static int reuse_on(void) {
  const char *env = getenv("NBCUDA_REUSE");
  return !(env && strcmp(env, "0") == 0);
}

/* The rows whose nbcuda side takes a kept object when reuse is on. */
MAIN_ONLY static int reused(const char *key) {
  return strstr(key, "create_destroy") != NULL || strstr(key, "free_1k") != NULL;
}

/* key: the row's name in the JSON output (what bench/host_py.py looks up). */
MAIN_ONLY static void row(const char *key, const char *name, op_fn op, drain_fn drain,
                int calls_per_batch) {
  double *t[2];
  t[0] = malloc(sizeof(double) * (size_t)batches);
  t[1] = malloc(sizeof(double) * (size_t)batches);
  if (!t[0] || !t[1]) {
    fprintf(stderr, "host_calls: out of memory\n");
    exit(1);
  }
  int bad = 0;
  for (int b = 0; b < batches; b++) {
    for (int which = 0; which < 2; which++) {
      int w = (b & 1) ? 1 - which : which; /* alternate who goes first */
      double start = now_ns();
      for (int i = 0; i < calls_per_batch; i++) bad |= op(w);
      t[w][b] = (now_ns() - start) / calls_per_batch;
      if (drain) drain();
    }
  }
  double mine = median(t[0], batches), theirs = median(t[1], batches);
  if (json)
    printf("%s\n    \"%s\": {\"name\": \"%s\", \"nbcuda_ns\": %.1f, \"raw_ns\": %.1f, "
           "\"ok\": %s}",
           rows_printed ? "," : "", key, name, mine, theirs, bad ? "false" : "true");
  else
    printf("| %-34s | %9.1f | %9.1f | %8.1f |%s%s\n", name, mine, theirs, mine - theirs,
           reuse_on() && reused(key) ? " [reuse on]" : "", bad ? " (a call FAILED)" : "");
  rows_printed++;
  if (bad) failures++;
  free(t[0]);
  free(t[1]);
}

/* --- the operations -------------------------------------------------------------------- */
static nbc_context_t *ctx;
static nbc_stream_t *stream;
static nbc_event_t *ev_a, *ev_b, *ev_plain, *ev_timed;
static CUptr raw_stream, raw_ev_a, raw_ev_b, raw_ev_plain, raw_ev_timed;
static nbc_function_t *fn;
static CUptr raw_fn, launch_stream;
static nbc_devptr_t dptr;
static unsigned char host_buf[4096];

static void drain(void) {
  nbc_stream_synchronize(stream);
  nbc_synchronize();
}

static int op_device_count(int w) {
  int n;
  return w ? raw.cuDeviceGetCount(&n) != 0 : nbc_device_count(&n) != NBC_OK;
}

static int op_current_context(int w) {
  CUptr c;
  nbc_context_t *x;
  return w ? raw.cuCtxGetCurrent(&c) != 0 : nbc_current_context(-1, &x) != NBC_OK;
}

static int op_stream_create_destroy(int w) {
  if (w) {
    CUptr s;
    if (raw.cuStreamCreate(&s, 0)) return 1;
    return raw.cuStreamDestroy(s) != 0;
  }
  nbc_stream_t *s;
  if (nbc_stream_create(&s) != NBC_OK) return 1;
  nbc_stream_destroy(s);
  return 0;
}

static int event_create_destroy(int w, int timing) {
  if (w) {
    CUptr e;
    if (raw.cuEventCreate(&e, timing ? 0 : 2)) return 1;
    return raw.cuEventDestroy(e) != 0;
  }
  nbc_event_t *e;
  if (nbc_event_create(timing, &e) != NBC_OK) return 1;
  nbc_event_destroy(e);
  return 0;
}

static int op_event_create_destroy(int w) { return event_create_destroy(w, 0); }
static int op_event_create_destroy_timing(int w) { return event_create_destroy(w, 1); }

static int op_event_record(int w) {
  return w ? raw.cuEventRecord(raw_ev_plain, raw_stream) != 0
           : nbc_event_record(ev_plain, stream) != NBC_OK;
}

static int op_event_record_timing(int w) {
  return w ? raw.cuEventRecord(raw_ev_timed, raw_stream) != 0
           : nbc_event_record(ev_timed, stream) != NBC_OK;
}

static int op_event_query(int w) {
  return w ? raw.cuEventQuery(raw_ev_a) != 0 : nbc_event_query(ev_a) != NBC_OK;
}

static int op_event_synchronize(int w) {
  return w ? raw.cuEventSynchronize(raw_ev_a) != 0 : nbc_event_synchronize(ev_a) != NBC_OK;
}

static int op_event_wait(int w) {
  return w ? raw.cuStreamWaitEvent(raw_stream, raw_ev_a, 0) != 0
           : nbc_event_wait(ev_a, stream) != NBC_OK;
}

static int op_event_elapsed(int w) {
  float ms;
  return w ? raw.cuEventElapsedTime(&ms, raw_ev_a, raw_ev_b) != 0
           : nbc_event_elapsed_time(ev_a, ev_b, &ms) != NBC_OK;
}

static int op_stream_query(int w) {
  return w ? raw.cuStreamQuery(raw_stream) != 0 : nbc_stream_query(stream) != NBC_OK;
}

static int op_stream_synchronize(int w) {
  return w ? raw.cuStreamSynchronize(raw_stream) != 0
           : nbc_stream_synchronize(stream) != NBC_OK;
}

static int op_synchronize(int w) {
  return w ? raw.cuCtxSynchronize() != 0 : nbc_synchronize() != NBC_OK;
}

static int op_memcpy_htod(int w) {
  static int value = 42;
  return w ? raw.cuMemcpyHtoD(dptr, &value, 4) != 0
           : nbc_memcpy_htod(dptr, &value, 4) != NBC_OK;
}

/* What to_device(1 KiB) needs from the driver: allocate, copy in, free (when it dies). */
static int op_alloc_htod_free_1k(int w) {
  if (w) {
    CUdeviceptr p;
    if (raw.cuMemAlloc(&p, 1024)) return 1;
    int bad = raw.cuMemcpyHtoD(p, host_buf, 1024) != 0;
    return raw.cuMemFree(p) != 0 || bad;
  }
  nbc_devptr_t p;
  if (nbc_mem_alloc(1024, &p) != NBC_OK) return 1;
  int bad = nbc_memcpy_htod(p, host_buf, 1024) != NBC_OK;
  return nbc_mem_free(p) != NBC_OK || bad;
}

static int op_alloc_free_1k(int w) {
  if (w) {
    CUdeviceptr p;
    if (raw.cuMemAlloc(&p, 1024)) return 1;
    return raw.cuMemFree(p) != 0;
  }
  nbc_devptr_t p;
  if (nbc_mem_alloc(1024, &p) != NBC_OK) return 1;
  return nbc_mem_free(p) != NBC_OK;
}

static int op_memcpy_dtoh_4k(int w) {
  return w ? raw.cuMemcpyDtoH(host_buf, dptr, 4096) != 0
           : nbc_memcpy_dtoh(host_buf, dptr, 4096) != NBC_OK;
}

/* What copy_to_host() of 4 KiB needs: new host memory (freed when the array dies) and the
 * copy into it — nbcuda's through its page-locked staging buffer, as copy_to_host() copies
 * into the array it makes; op_memcpy_dtoh_4k is copy_to_host(out), into memory that exists. */
static int op_malloc_dtoh_free_4k(int w) {
  void *host = malloc(4096);
  if (!host) return 1;
  int bad = w ? raw.cuMemcpyDtoH(host, dptr, 4096) != 0
              : nbc_memcpy_dtoh_pageable(host, dptr, 4096) != NBC_OK;
  free(host);
  return bad;
}

static int op_launch(int w) {
  static const unsigned one[3] = {1, 1, 1};
  return w ? raw.cuLaunchKernel(raw_fn, 1, 1, 1, 1, 1, 1, 0, launch_stream, NULL, NULL) != 0
           : nbc_launch(fn, one, one, 0, stream, NULL) != NBC_OK;
}

/* The same on the default stream (handle 0), where a Python launch without a stream goes. */
static int op_launch_default_stream(int w) {
  static const unsigned one[3] = {1, 1, 1};
  return w ? raw.cuLaunchKernel(raw_fn, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL) != 0
           : nbc_launch(fn, one, one, 0, NULL, NULL) != NBC_OK;
}

static int op_memory_info(int w) {
  size_t f, t;
  return w ? raw.cuMemGetInfo(&f, &t) != 0
           : nbc_context_get_memory_info(ctx, &f, &t) != NBC_OK;
}

/* --- setup ----------------------------------------------------------------------------- */
static int resolve_raw(void) {
  const char *path = nbc_driver_path();
  void *lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (!lib) lib = dlopen(path, RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "host_calls: dlopen(%s): %s\n", path, dlerror());
    return -1;
  }
  typedef CUresult (*gpa_fn)(const char *, void **, int, uint64_t, int *);
  gpa_fn gpa = (gpa_fn)(uintptr_t)dlsym(lib, "cuGetProcAddress_v2");
  if (!gpa) {
    fprintf(stderr, "host_calls: %s has no cuGetProcAddress_v2\n", path);
    return -1;
  }
  uint64_t flags = nbc_driver_per_thread_default_stream() ? 2 : 0;
  struct {
    const char *name;
    void **slot;
  } table[] = {
      {"cuDeviceGetCount", (void **)&raw.cuDeviceGetCount},
      {"cuCtxGetCurrent", (void **)&raw.cuCtxGetCurrent},
      {"cuCtxSynchronize", (void **)&raw.cuCtxSynchronize},
      {"cuStreamCreate", (void **)&raw.cuStreamCreate},
      {"cuStreamDestroy", (void **)&raw.cuStreamDestroy},
      {"cuStreamQuery", (void **)&raw.cuStreamQuery},
      {"cuStreamSynchronize", (void **)&raw.cuStreamSynchronize},
      {"cuStreamWaitEvent", (void **)&raw.cuStreamWaitEvent},
      {"cuEventCreate", (void **)&raw.cuEventCreate},
      {"cuEventDestroy", (void **)&raw.cuEventDestroy},
      {"cuEventRecord", (void **)&raw.cuEventRecord},
      {"cuEventQuery", (void **)&raw.cuEventQuery},
      {"cuEventSynchronize", (void **)&raw.cuEventSynchronize},
      {"cuEventElapsedTime", (void **)&raw.cuEventElapsedTime},
      {"cuMemAlloc", (void **)&raw.cuMemAlloc},
      {"cuMemFree", (void **)&raw.cuMemFree},
      {"cuMemcpyHtoD", (void **)&raw.cuMemcpyHtoD},
      {"cuMemcpyDtoH", (void **)&raw.cuMemcpyDtoH},
      {"cuMemGetInfo", (void **)&raw.cuMemGetInfo},
      {"cuLaunchKernel", (void **)&raw.cuLaunchKernel},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    int status = 0;
    if (gpa(table[i].name, table[i].slot, 12000, flags, &status) != 0 || !*table[i].slot) {
      fprintf(stderr, "host_calls: cuGetProcAddress(%s) failed\n", table[i].name);
      return -1;
    }
  }
  return 0;
}

#define CHECK(call)                                                                        \
  do {                                                                                     \
    nbc_status_t st_ = (call);                                                             \
    if (st_ != NBC_OK) {                                                                   \
      fprintf(stderr, "host_calls: %s: %s: %s\n", #call, nbc_status_name(st_),            \
              nbc_last_error());                                                           \
      return 1;                                                                            \
    }                                                                                      \
  } while (0)

#define CHECK_RAW(call)                                                                    \
  do {                                                                                     \
    CUresult r_ = (call);                                                                  \
    if (r_ != 0) {                                                                         \
      fprintf(stderr, "host_calls: %s returned %d\n", #call, r_);                          \
      return 1;                                                                            \
    }                                                                                      \
  } while (0)

/* Prints s as a JSON string body (the driver path may hold anything). */
MAIN_ONLY static void json_string(const char *s) {
  putchar('"');
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      printf("\\%c", c);
    else if (c < 0x20)
      printf("\\u%04x", c);
    else
      putchar(c);
  }
  putchar('"');
}

static nbc_module_t *module;
static int set_up;

/* The objects every row uses, nbcuda's and the raw driver's; 0 on success. */
static int setup(void) {
  CHECK(nbc_current_context(-1, &ctx));
  if (resolve_raw() != 0) return 1;
  CHECK(nbc_stream_create(&stream));
  CHECK_RAW(raw.cuStreamCreate(&raw_stream, 0));
  CHECK(nbc_event_create(1, &ev_a));
  CHECK(nbc_event_create(1, &ev_b));
  CHECK(nbc_event_create(0, &ev_plain));
  CHECK(nbc_event_create(1, &ev_timed));
  CHECK_RAW(raw.cuEventCreate(&raw_ev_a, 0));
  CHECK_RAW(raw.cuEventCreate(&raw_ev_b, 0));
  CHECK_RAW(raw.cuEventCreate(&raw_ev_plain, 2));
  CHECK_RAW(raw.cuEventCreate(&raw_ev_timed, 0));
  CHECK(nbc_event_record(ev_a, stream));
  CHECK(nbc_event_record(ev_b, stream));
  CHECK_RAW(raw.cuEventRecord(raw_ev_a, raw_stream));
  CHECK_RAW(raw.cuEventRecord(raw_ev_b, raw_stream));
  CHECK(nbc_stream_synchronize(stream));
  CHECK_RAW(raw.cuStreamSynchronize(raw_stream));
  CHECK(nbc_mem_alloc(4096, &dptr));
  CHECK(nbc_module_load_data(empty_ptx, sizeof empty_ptx, NBC_IMAGE_PTX, &module));
  CHECK(nbc_module_get_function(module, "empty", &fn));
  /* The raw launch uses the same function and stream, so only the wrapper differs. */
  raw_fn = nbc_function_handle(fn);
  launch_stream = (CUptr)nbc_stream_handle(stream);
  set_up = 1;
  return 0;
}

static void teardown(void) {
  raw.cuStreamSynchronize(raw_stream);
  nbc_mem_free(dptr);
  nbc_module_destroy(module);
  nbc_event_destroy(ev_a);
  nbc_event_destroy(ev_b);
  nbc_event_destroy(ev_plain);
  nbc_event_destroy(ev_timed);
  nbc_stream_destroy(stream);
  raw.cuEventDestroy(raw_ev_a);
  raw.cuEventDestroy(raw_ev_b);
  raw.cuEventDestroy(raw_ev_plain);
  raw.cuEventDestroy(raw_ev_timed);
  raw.cuStreamDestroy(raw_stream);
}

/* The rows, in output order; calls per batch = per_batch / divisor. */
static const struct bench_row {
  const char *key, *name;
  op_fn op;
  drain_fn drain;
  int divisor;
} rows[] = {
    {"device_count", "nbc_device_count", op_device_count, NULL, 1},
    {"current_context", "nbc_current_context(-1)", op_current_context, NULL, 1},
    {"stream_create_destroy", "nbc_stream_create + destroy", op_stream_create_destroy, NULL, 4},
    {"event_create_destroy", "nbc_event_create(0) + destroy", op_event_create_destroy, NULL, 4},
    {"event_create_destroy_timing", "nbc_event_create(1) + destroy",
     op_event_create_destroy_timing, NULL, 4},
    {"event_record", "nbc_event_record (no timing)", op_event_record, drain, 1},
    {"event_record_timing", "nbc_event_record (timing event)", op_event_record_timing, drain, 1},
    {"event_query", "nbc_event_query (done)", op_event_query, NULL, 1},
    {"event_synchronize", "nbc_event_synchronize (done)", op_event_synchronize, NULL, 1},
    {"event_wait", "nbc_event_wait", op_event_wait, drain, 1},
    {"event_elapsed_time", "nbc_event_elapsed_time", op_event_elapsed, NULL, 1},
    {"stream_query", "nbc_stream_query (idle)", op_stream_query, NULL, 1},
    {"stream_synchronize", "nbc_stream_synchronize (idle)", op_stream_synchronize, NULL, 1},
    {"synchronize", "nbc_synchronize (idle)", op_synchronize, NULL, 1},
    {"memcpy_htod", "nbc_memcpy_htod (4 bytes)", op_memcpy_htod, NULL, 4},
    {"alloc_htod_free_1k", "alloc + htod + free (1 KiB)", op_alloc_htod_free_1k, NULL, 4},
    {"memcpy_dtoh_4k", "nbc_memcpy_dtoh (4 KiB)", op_memcpy_dtoh_4k, NULL, 4},
    {"malloc_dtoh_free_4k", "malloc + nbc_memcpy_dtoh_pageable + free (4 KiB)",
     op_malloc_dtoh_free_4k, NULL, 4},
    {"alloc_free_1k", "nbc_mem_alloc + free (1 KiB)", op_alloc_free_1k, NULL, 4},
    {"launch", "nbc_launch (empty kernel)", op_launch, drain, 1},
    {"launch_default_stream", "nbc_launch (default stream)", op_launch_default_stream, drain, 1},
    {"memory_info", "nbc_context_get_memory_info", op_memory_info, NULL, 4},
};

#ifdef HOST_CALLS_LIBRARY
/* The library's two entry points (see the top of the file). */
__attribute__((visibility("default"))) int host_calls_setup(void) {
  return set_up ? 0 : setup();
}

__attribute__((visibility("default"))) void host_calls_teardown(void) {
  if (set_up) teardown();
  set_up = 0;
}

/* The row's function (op(1) makes its raw driver call(s) once), for bench/bare_binding.c to
 * call from Python; NULL for an unknown key. */
__attribute__((visibility("default"))) void *host_calls_raw_op(const char *key) {
  for (size_t r = 0; key && r < sizeof rows / sizeof rows[0]; r++)
    if (strcmp(rows[r].key, key) == 0) return (void *)(uintptr_t)rows[r].op;
  return NULL;
}

/* ns per call of one batch of `calls` calls of row `key` (which: 0 nbcuda, 1 raw), drained
 * after; negative for an unknown key, before setup, or when a call failed. */
__attribute__((visibility("default"))) double host_calls_batch(const char *key, int which,
                                                               int calls) {
  if (!set_up || !key || calls < 1) return -1;
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
    if (strcmp(rows[r].key, key) != 0) continue;
    int bad = 0;
    double start = now_ns();
    for (int i = 0; i < calls; i++) bad |= rows[r].op(which != 0);
    double per_call = (now_ns() - start) / calls;
    if (rows[r].drain) rows[r].drain();
    return bad ? -2 : per_call;
  }
  return -1;
}
#else
int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) {
      json = 1;
    } else if (argv[i][0] >= '0' && argv[i][0] <= '9') {
      batches = atoi(argv[i]) | 1;
    } else {
      fprintf(stderr, "usage: %s [--json] [batches]\n", argv[0]);
      return 2;
    }
  }
  if (batches < 3) batches = 3;
  if (setup() != 0) return 1;

  nbc_device_t *dev;
  CHECK(nbc_get_current_device(&dev));
  int version = 0;
  nbc_driver_version(&version);
  if (json) {
    printf("{\n  \"device\": ");
    json_string(nbc_device_name(dev));
    printf(",\n  \"driver\": ");
    json_string(nbc_driver_path());
    printf(",\n  \"cuda_version\": %d,\n  \"batches\": %d,\n  \"calls\": %d,\n  \"rows\": {",
           version, batches, per_batch);
  } else {
    printf("host_calls: %s, driver %s (CUDA %d.%d)%s; median of %d batches of %d calls\n\n",
           nbc_device_name(dev), nbc_driver_path(), version / 1000, (version % 1000) / 10,
           nbc_driver_per_thread_default_stream() ? ", per-thread default stream" : "",
           batches, per_batch);
    printf("| %-34s | %9s | %9s | %8s |\n", "function", "nbcuda ns", "raw ns", "overhead ns");
    printf("|%s|%s|%s|%s|\n", "------------------------------------", "----------:",
           "----------:", "----------:");
  }
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
    row(rows[r].key, rows[r].name, rows[r].op, rows[r].drain, per_batch / rows[r].divisor);
  if (json) printf("\n  }\n}\n");
  teardown();
  if (failures) fprintf(stderr, "host_calls: %d rows had failing calls\n", failures);
  return failures ? 1 : 0;
}
#endif
