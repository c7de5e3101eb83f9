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
 * Output: a markdown table `function | nbcuda ns | raw ns | overhead ns`. Goal: every
 * overhead <= 20 ns.
 *
 * Usage: NBCUDA_DRIVER=<libcuda.so.1 or the test driver> ./host_calls [batches]
 * Works against the real driver (GPU machine) and the test driver (CI).
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
  CUresult (*cuStreamCreate)(CUptr *, unsigned);
  CUresult (*cuStreamDestroy)(CUptr);
  CUresult (*cuStreamQuery)(CUptr);
  CUresult (*cuStreamSynchronize)(CUptr);
  CUresult (*cuEventCreate)(CUptr *, unsigned);
  CUresult (*cuEventDestroy)(CUptr);
  CUresult (*cuEventRecord)(CUptr, CUptr);
  CUresult (*cuEventQuery)(CUptr);
  CUresult (*cuEventSynchronize)(CUptr);
  CUresult (*cuEventElapsedTime)(float *, CUptr, CUptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemGetInfo)(size_t *, size_t *);
  CUresult (*cuLaunchKernel)(CUptr, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUptr, void **, void **);
} raw;

static const char empty_ptx[] = ".version 7.0\n.target sm_50\n.address_size 64\n"
                                ".visible .entry empty()\n{\n  ret;\n}\n";

static int batches = 201;
static int per_batch = 200;

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

/* One benchmark row: op(arg, which) performs one call (which: 0 nbcuda, 1 raw). */
typedef int (*op_fn)(int which);
typedef void (*drain_fn)(void);

static int failures;

static void row(const char *name, op_fn op, drain_fn drain, int calls_per_batch) {
  double *t[2];
  t[0] = malloc(sizeof(double) * (size_t)batches);
  t[1] = malloc(sizeof(double) * (size_t)batches);
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
  printf("| %-34s | %9.1f | %9.1f | %8.1f |%s\n", name, mine, theirs, mine - theirs,
         bad ? " (a call FAILED)" : "");
  if (bad) failures++;
  free(t[0]);
  free(t[1]);
}

/* --- the operations -------------------------------------------------------------------- */
static nbc_context_t *ctx;
static nbc_stream_t *stream;
static nbc_event_t *ev_a, *ev_b, *ev_plain;
static CUptr raw_stream, raw_ev_a, raw_ev_b, raw_ev_plain;
static nbc_function_t *fn;
static CUptr raw_fn, launch_stream;
static nbc_devptr_t dptr;

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

static int op_event_create_destroy(int w) {
  if (w) {
    CUptr e;
    if (raw.cuEventCreate(&e, 2)) return 1;
    return raw.cuEventDestroy(e) != 0;
  }
  nbc_event_t *e;
  if (nbc_event_create(0, &e) != NBC_OK) return 1;
  nbc_event_destroy(e);
  return 0;
}

static int op_event_record(int w) {
  return w ? raw.cuEventRecord(raw_ev_plain, raw_stream) != 0
           : nbc_event_record(ev_plain, stream) != NBC_OK;
}

static int op_event_query(int w) {
  return w ? raw.cuEventQuery(raw_ev_a) != 0 : nbc_event_query(ev_a) != NBC_OK;
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

static int op_memcpy_htod(int w) {
  static int value = 42;
  return w ? raw.cuMemcpyHtoD(dptr, &value, 4) != 0
           : nbc_memcpy_htod(dptr, &value, 4) != NBC_OK;
}

static int op_launch(int w) {
  static const unsigned one[3] = {1, 1, 1};
  return w ? raw.cuLaunchKernel(raw_fn, 1, 1, 1, 1, 1, 1, 0, launch_stream, NULL, NULL) != 0
           : nbc_launch(fn, one, one, 0, stream, NULL) != NBC_OK;
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
      {"cuStreamCreate", (void **)&raw.cuStreamCreate},
      {"cuStreamDestroy", (void **)&raw.cuStreamDestroy},
      {"cuStreamQuery", (void **)&raw.cuStreamQuery},
      {"cuStreamSynchronize", (void **)&raw.cuStreamSynchronize},
      {"cuEventCreate", (void **)&raw.cuEventCreate},
      {"cuEventDestroy", (void **)&raw.cuEventDestroy},
      {"cuEventRecord", (void **)&raw.cuEventRecord},
      {"cuEventQuery", (void **)&raw.cuEventQuery},
      {"cuEventSynchronize", (void **)&raw.cuEventSynchronize},
      {"cuEventElapsedTime", (void **)&raw.cuEventElapsedTime},
      {"cuMemcpyHtoD", (void **)&raw.cuMemcpyHtoD},
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

int main(int argc, char **argv) {
  if (argc > 1) batches = atoi(argv[1]) | 1;
  if (batches < 3) batches = 3;
  CHECK(nbc_current_context(-1, &ctx));
  if (resolve_raw() != 0) return 1;
  CHECK(nbc_stream_create(&stream));
  CHECK_RAW(raw.cuStreamCreate(&raw_stream, 0));
  CHECK(nbc_event_create(1, &ev_a));
  CHECK(nbc_event_create(1, &ev_b));
  CHECK(nbc_event_create(0, &ev_plain));
  CHECK_RAW(raw.cuEventCreate(&raw_ev_a, 0));
  CHECK_RAW(raw.cuEventCreate(&raw_ev_b, 0));
  CHECK_RAW(raw.cuEventCreate(&raw_ev_plain, 2));
  CHECK(nbc_event_record(ev_a, stream));
  CHECK(nbc_event_record(ev_b, stream));
  CHECK_RAW(raw.cuEventRecord(raw_ev_a, raw_stream));
  CHECK_RAW(raw.cuEventRecord(raw_ev_b, raw_stream));
  CHECK(nbc_stream_synchronize(stream));
  CHECK_RAW(raw.cuStreamSynchronize(raw_stream));
  CHECK(nbc_mem_alloc(4, &dptr));
  nbc_module_t *module;
  CHECK(nbc_module_load_data(empty_ptx, sizeof empty_ptx, NBC_IMAGE_PTX, &module));
  CHECK(nbc_module_get_function(module, "empty", &fn));
  /* The raw launch uses the same function and stream, so only the wrapper differs. */
  raw_fn = nbc_function_handle(fn);
  launch_stream = (CUptr)nbc_stream_handle(stream);

  nbc_device_t *dev;
  CHECK(nbc_get_current_device(&dev));
  int version = 0;
  nbc_driver_version(&version);
  printf("host_calls: %s, driver %s (CUDA %d.%d)%s; median of %d batches of %d calls\n\n",
         nbc_device_name(dev), nbc_driver_path(), version / 1000, (version % 1000) / 10,
         nbc_driver_per_thread_default_stream() ? ", per-thread default stream" : "", batches,
         per_batch);
  printf("| %-34s | %9s | %9s | %8s |\n", "function", "nbcuda ns", "raw ns", "overhead ns");
  printf("|%s|%s|%s|%s|\n", "------------------------------------", "----------:",
         "----------:", "----------:");
  row("nbc_device_count", op_device_count, NULL, per_batch);
  row("nbc_current_context(-1)", op_current_context, NULL, per_batch);
  row("nbc_stream_create + destroy", op_stream_create_destroy, NULL, per_batch / 4);
  row("nbc_event_create + destroy", op_event_create_destroy, NULL, per_batch / 4);
  row("nbc_event_record", op_event_record, drain, per_batch);
  row("nbc_event_query (done)", op_event_query, NULL, per_batch);
  row("nbc_event_elapsed_time", op_event_elapsed, NULL, per_batch);
  row("nbc_stream_query (idle)", op_stream_query, NULL, per_batch);
  row("nbc_stream_synchronize (idle)", op_stream_synchronize, NULL, per_batch);
  row("nbc_memcpy_htod (4 bytes)", op_memcpy_htod, NULL, per_batch / 4);
  row("nbc_launch (empty kernel)", op_launch, drain, per_batch);
  row("nbc_context_get_memory_info", op_memory_info, NULL, per_batch / 4);

  raw.cuStreamSynchronize(raw_stream);
  nbc_mem_free(dptr);
  nbc_module_destroy(module);
  nbc_event_destroy(ev_a);
  nbc_event_destroy(ev_b);
  nbc_event_destroy(ev_plain);
  nbc_stream_destroy(stream);
  raw.cuEventDestroy(raw_ev_a);
  raw.cuEventDestroy(raw_ev_b);
  raw.cuEventDestroy(raw_ev_plain);
  raw.cuStreamDestroy(raw_stream);
  if (failures) fprintf(stderr, "host_calls: %d rows had failing calls\n", failures);
  return failures ? 1 : 0;
}
