/* testdriver.h — the introspection and control API of libnbcuda_testdriver.so.
 *
 * libnbcuda_testdriver.so is a test fixture: a software implementation of the CUDA driver
 * entry points nbcuda uses (contexts, per-thread context stacks, streams with worker
 * threads, events with timestamps, device memory in host RAM, PTX modules, launches that
 * only count unless NBCUDA_TESTDRIVER_EXECUTE=1). nbcuda loads it like libcuda with NBCUDA_DRIVER=path; tests load it a second
 * time (the same mapping) through NBCUDA_TESTDRIVER=path to look inside and to steer it.
 *
 * The functions below are exported from the .so under these names. Tests do not link the
 * .so: tdrv() dlopens $NBCUDA_TESTDRIVER once and resolves every function, so a test
 * just writes `tdrv()->calls("cuInit")`. tdrv() exits the calling (forked) test process
 * with status 1 and a message when the library cannot be loaded; tdrv_available() lets a
 * test SKIP instead.
 *
 * Environment read by the fixture (at cuInit unless said otherwise):
 *   NBCUDA_TESTDRIVER_MODE          unset | stub (cuInit -> CUDA_ERROR_STUB_LIBRARY) |
 *                                   nodevice (CUDA_ERROR_NO_DEVICE) | initfail
 * (CUDA_ERROR_UNKNOWN) NBCUDA_TESTDRIVER_DEVICES       device count, default 2
 *   NBCUDA_TESTDRIVER_CC            "9.0" or per device "9.0,5.0,3.0" (last repeats);
 * default 9.0 NBCUDA_TESTDRIVER_MEM           bytes per device, default 1 GiB (the CPU
 * driver: the machine's memory) (suffixes K, M, G
 * accepted) NBCUDA_TESTDRIVER_LAUNCH_DELAY_MS  how long each kernel launch "runs" on its stream
 *   NBCUDA_TESTDRIVER_REFUSE_LAUNCH=1  cuLaunchKernel returns CUDA_ERROR_NOT_SUPPORTED
 *   NBCUDA_TESTDRIVER_EXECUTE=1     modules are decoded at load and launches run on the CPU
 *                                   (src/cpudevice), as in libnbcuda_cpudriver.so, which is
 *                                   these sources built with TD_CPU_DRIVER (always on)
 *   NBCUDA_TESTDRIVER_IPC_SAME_PROCESS=1  cuIpcOpenMemHandle maps handles this process made
 *                                   (read at each call; the real driver, and the fixture
 *                                   without it, answer CUDA_ERROR_INVALID_CONTEXT)
 *   NBCUDA_TESTDRIVER_FAIL="cuStreamCreate:1:201,cuEventRecord:3:700"
 *                                   the Nth call (1-based, per base name, all variants
 *                                   together) fails with that CUresult, without side
 *                                   effects; read at the first call of any entry point.
 *
 * Names: a "base name" is the name without version or stream suffix ("cuMemAlloc",
 * "cuStreamSynchronize"); a "symbol" is one exported variant ("cuMemAlloc_v2",
 * "cuStreamSynchronize_ptsz").
 */
#ifndef NBCUDA_TESTDRIVER_H
#define NBCUDA_TESTDRIVER_H

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TDRV_MAX_PARAMS 128
#define TDRV_MAX_PARAM_BYTES 4096
#define TDRV_MAX_NAME 1024 /* numba's mangled names of nested record types run long */

/* What the last accepted cuLaunchKernel asked for. Parameter sizes come from the kernel's
 * `.param` list in its PTX (that is how the real driver knows how many bytes to read
 * from each kernelParams[i]); param_bytes holds the arguments' bytes, packed at
 * param_offset[i] with each parameter's PTX alignment. */
typedef struct tdrv_launch_info {
  char function[TDRV_MAX_NAME];
  unsigned grid[3];
  unsigned block[3];
  unsigned shared_bytes;
  uintptr_t stream; /* the CUstream value as passed (0, 1, 2 or a handle) */
  int per_thread;   /* 1 when launched through cuLaunchKernel_ptsz */
  int device;       /* device ordinal of the launching context */
  int nparams;
  size_t param_size[TDRV_MAX_PARAMS];
  size_t param_offset[TDRV_MAX_PARAMS];
  size_t param_total; /* bytes used in param_bytes */
  unsigned char param_bytes[TDRV_MAX_PARAM_BYTES];
  int cooperative; /* 1 when launched by cuLaunchKernelEx with CU_LAUNCH_ATTRIBUTE_COOPERATIVE */
} tdrv_launch_info;

/* Calls of an entry point by base name, all variants together (also counts failed
 * calls and calls refused before cuInit). */
int tdrv_call_count(const char *name);
/* Calls of one exact exported variant, e.g. "cuStreamSynchronize_ptsz". */
int tdrv_variant_count(const char *symbol);
/* Makes the nth call from now (1 = the next one) of base name `name` fail with
 * `curesult`, without side effects. nth == 0 clears every pending failure of `name`. */
void tdrv_fail(const char *name, int nth, int curesult);
/* Overrides one CU_DEVICE_ATTRIBUTE_* of device `dev` (before or after cuInit).
 * Setting COMPUTE_CAPABILITY_MAJOR/MINOR changes the device's compute capability. */
void tdrv_set_attribute(int dev, int attr, int value);
/* Total memory of device `dev` in bytes (before or after cuInit). */
void tdrv_set_total_memory(int dev, size_t bytes);
/* Depth of the calling thread's context stack. */
int tdrv_context_stack_depth(void);
int tdrv_primary_refcount(int dev);
int tdrv_primary_reset_count(int dev);
/* Live objects, over all contexts. */
int tdrv_live_allocations(void);
int tdrv_live_streams(void); /* created streams only, not the default streams */
int tdrv_live_events(void);
int tdrv_live_modules(void);
int tdrv_live_contexts(void); /* non-primary contexts that are not destroyed */
size_t tdrv_allocated_bytes(int dev);
int tdrv_launch_count(void);
/* Copies the last accepted launch into *out; returns 0 when there was none. */
int tdrv_last_launch(tdrv_launch_info *out);
void tdrv_set_launch_delay_ms(int ms);
void tdrv_set_refuse_launch(int refuse);
int tdrv_profiler_state(void); /* 1 started, 0 stopped */
/* Stream callbacks and host functions that have run so far. */
int tdrv_host_callbacks_run(void);
/* Live page-locked host allocations (cuMemHostAlloc) and registrations (cuMemHostRegister). */
int tdrv_live_host_allocations(void);
int tdrv_live_host_registrations(void);
/* Makes the next kernel that runs act as a debug=True kernel whose thread raised: it writes
 * code to its <name>__errcode__ and the thread's position (x, y, z) to __tid{x,y,z}__ and
 * __ctaid{x,y,z}__, when its module has them (cuModuleGetGlobal's variables). One-shot. */
void tdrv_raise_in_next_kernel(int code, const int tid[3], const int ctaid[3]);

/* IPC mappings open (cuIpcOpenMemHandle not yet closed), over all contexts; exported but not in
 * tdrv_api: resolve it with tdrv_sym("tdrv_live_ipc_mappings"). */
int tdrv_live_ipc_mappings(void);

/* ---- dlsym helpers for tests ---------------------------------------------------------- */

typedef struct tdrv_api {
  int (*calls)(const char *name);
  int (*variant_calls)(const char *symbol);
  void (*fail)(const char *name, int nth, int curesult);
  void (*set_attribute)(int dev, int attr, int value);
  void (*set_total_memory)(int dev, size_t bytes);
  int (*stack_depth)(void);
  int (*primary_refcount)(int dev);
  int (*primary_reset_count)(int dev);
  int (*live_allocations)(void);
  int (*live_streams)(void);
  int (*live_events)(void);
  int (*live_modules)(void);
  int (*live_contexts)(void);
  size_t (*allocated_bytes)(int dev);
  int (*launch_count)(void);
  int (*last_launch)(tdrv_launch_info *out);
  void (*set_launch_delay_ms)(int ms);
  void (*set_refuse_launch)(int refuse);
  int (*profiler_state)(void);
  int (*host_callbacks_run)(void);
  int (*live_host_allocations)(void);
  int (*live_host_registrations)(void);
  void *handle; /* the dlopen handle, for dlsym of the CUDA entry points */
} tdrv_api;

/* Loads $NBCUDA_TESTDRIVER (reusing the mapping nbcuda already made, if any) and resolves
 * the API. Returns NULL and fills `why` when it cannot. */
static inline const tdrv_api *tdrv_load_(char *why, size_t why_size) {
  static tdrv_api api;
  static int state; /* 0 not tried, 1 loaded, 2 failed */
  static char reason[512];
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&lock);
  if (state == 0) {
    const char *path = getenv("NBCUDA_TESTDRIVER");
    void *h = NULL;
    if (!path || !*path) {
      snprintf(reason, sizeof reason, "NBCUDA_TESTDRIVER is not set");
    } else {
      h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
      if (!h) h = dlopen(path, RTLD_NOW);
      if (!h) snprintf(reason, sizeof reason, "dlopen(%s): %s", path, dlerror());
    }
    state = 2;
    if (h) {
      int missing = 0;
#define TDRV_SYM_(field, sym)                                                                  \
  do {                                                                                         \
    *(void **)(&api.field) = dlsym(h, #sym);                                                   \
    if (!api.field && !missing) {                                                              \
      snprintf(reason, sizeof reason, "%s: no symbol %s", path, #sym);                         \
      missing = 1;                                                                             \
    }                                                                                          \
  } while (0)
      TDRV_SYM_(calls, tdrv_call_count);
      TDRV_SYM_(variant_calls, tdrv_variant_count);
      TDRV_SYM_(fail, tdrv_fail);
      TDRV_SYM_(set_attribute, tdrv_set_attribute);
      TDRV_SYM_(set_total_memory, tdrv_set_total_memory);
      TDRV_SYM_(stack_depth, tdrv_context_stack_depth);
      TDRV_SYM_(primary_refcount, tdrv_primary_refcount);
      TDRV_SYM_(primary_reset_count, tdrv_primary_reset_count);
      TDRV_SYM_(live_allocations, tdrv_live_allocations);
      TDRV_SYM_(live_streams, tdrv_live_streams);
      TDRV_SYM_(live_events, tdrv_live_events);
      TDRV_SYM_(live_modules, tdrv_live_modules);
      TDRV_SYM_(live_contexts, tdrv_live_contexts);
      TDRV_SYM_(allocated_bytes, tdrv_allocated_bytes);
      TDRV_SYM_(launch_count, tdrv_launch_count);
      TDRV_SYM_(last_launch, tdrv_last_launch);
      TDRV_SYM_(set_launch_delay_ms, tdrv_set_launch_delay_ms);
      TDRV_SYM_(set_refuse_launch, tdrv_set_refuse_launch);
      TDRV_SYM_(profiler_state, tdrv_profiler_state);
      TDRV_SYM_(host_callbacks_run, tdrv_host_callbacks_run);
      TDRV_SYM_(live_host_allocations, tdrv_live_host_allocations);
      TDRV_SYM_(live_host_registrations, tdrv_live_host_registrations);
#undef TDRV_SYM_
      api.handle = h;
      if (!missing) state = 1;
    }
  }
  const tdrv_api *result = state == 1 ? &api : NULL;
  if (!result && why) snprintf(why, why_size, "%s", reason);
  pthread_mutex_unlock(&lock);
  return result;
}

static inline int tdrv_available(void) {
  return tdrv_load_(NULL, 0) != NULL;
}

/* The API, or the end of the calling test process: a skip (exit 77, tests/c/test.h) when
 * NBCUDA_TESTDRIVER is unset — the tests then run against the real driver on a GPU machine
 * (tests/gpu/run.sh) and those needing the fixture's introspection cannot apply — and a
 * failure (exit 1) with the reason when it is set but cannot be loaded. */
static inline const tdrv_api *tdrv(void) {
  char why[512];
  const tdrv_api *api = tdrv_load_(why, sizeof why);
  if (!api) {
    const char *path = getenv("NBCUDA_TESTDRIVER");
    fprintf(stderr, "%s: %s\n", path && *path ? "testdriver" : "skipped", why);
    fflush(stderr);
    _exit(path && *path ? 1 : 77);
  }
  return api;
}

/* A CUDA entry point of the fixture by its exported symbol name, e.g.
 * tdrv_sym("cuGetProcAddress_v2"); NULL when absent. */
static inline void *tdrv_sym(const char *symbol) {
  return dlsym(tdrv()->handle, symbol);
}

/* ---- tests that also run against the real driver -------------------------------------
 *
 * The C tests run twice: on CI against this fixture (NBCUDA_DRIVER and NBCUDA_TESTDRIVER set
 * by ctest), and on the GPU machine against the system's libcuda (tests/gpu/run.sh: both
 * unset). A test states what it needs at its start, before any nbcuda call:
 *   REQUIRE_TESTDRIVER()  it steers or inspects the fixture (NBCUDA_TESTDRIVER_* variables,
 *                         fault injection, the fixture's device names or memory sizes);
 *   REQUIRE_DRIVER()      it needs a working driver of any kind (skips against the toolkit's
 *                         stub libcuda or on a machine without a GPU);
 *   REQUIRE_DEVICES(n)    it needs n devices (the multi-GPU tests; the fixture has 2).
 * With the fixture present, REQUIRE_DRIVER and REQUIRE_DEVICES never skip on a driver
 * failure: that is a bug the test must report. Introspection that only strengthens a test
 * that otherwise runs anywhere is guarded with `if (tdrv_present())`. REQUIRE_DRIVER and
 * REQUIRE_DEVICES call nbcuda (nbc_driver_init_error, nbc_device_count), so they are macros:
 * only the tests, which include nbcuda.h, expand them. */

/* 1 when NBCUDA_TESTDRIVER is set: the fixture is the driver and tdrv() works (a set but
 * unloadable path makes tdrv() fail the test). */
static inline int tdrv_present(void) {
  const char *path = getenv("NBCUDA_TESTDRIVER");
  return path && *path;
}

/* Prints "skipped: <why>" and ends the (forked) test process with 77, the harness's skip. */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2), noreturn))
#endif
static inline void
tdrv_skip_(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "skipped: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  fflush(stderr);
  _exit(77);
}

/* 1 when the driver library at `path` (nbc_driver_path()) is this fixture, e.g. when it is
 * loaded through NBCUDA_DRIVER without NBCUDA_TESTDRIVER: launches then run no code, so tests
 * that check what a kernel computed must skip. */
static inline int tdrv_is_fixture(const char *path) {
  if (!path) return 0;
  void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (!h) return 0;
  int fixture = dlsym(h, "tdrv_call_count") != NULL;
  dlclose(h);
  return fixture;
}

#define REQUIRE_TESTDRIVER()                                                                   \
  do {                                                                                         \
    if (!tdrv_present()) tdrv_skip_("needs the test driver (NBCUDA_TESTDRIVER is not set)");   \
    (void)tdrv();                                                                              \
  } while (0)

#define REQUIRE_DRIVER()                                                                       \
  do {                                                                                         \
    if (!tdrv_present()) {                                                                     \
      const char *why_ = nbc_driver_init_error();                                              \
      if (why_) tdrv_skip_("needs a working CUDA driver: %s", why_);                           \
    }                                                                                          \
  } while (0)

#define REQUIRE_DEVICES(n)                                                                     \
  do {                                                                                         \
    int have_ = 0;                                                                             \
    if (nbc_device_count(&have_) != NBC_OK) {                                                  \
      if (tdrv_present()) {                                                                    \
        fprintf(stderr, "%s:%d: nbc_device_count failed: %s\n", __FILE__, __LINE__,            \
                nbc_last_error());                                                             \
        fflush(stderr);                                                                        \
        _exit(1);                                                                              \
      }                                                                                        \
      tdrv_skip_("needs %d CUDA device%s: %s", (int)(n), (n) == 1 ? "" : "s",                  \
                 nbc_last_error());                                                            \
    }                                                                                          \
    if (have_ < (n))                                                                           \
      tdrv_skip_("needs %d CUDA device%s, found %d", (int)(n), (n) == 1 ? "" : "s", have_);    \
  } while (0)

#ifdef __cplusplus
}
#endif

#endif /* NBCUDA_TESTDRIVER_H */
