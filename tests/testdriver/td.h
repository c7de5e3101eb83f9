/* td.h — internal header of the software CUDA test driver (libnbcuda_testdriver.so).
 *
 * The fixture is split one object per file, like the driver it imitates:
 *   td_state.c    the global lock, call counting, fault injection, cuInit and fork
 *                 detection, error names, the introspection API, teardown at unload
 *   td_procaddr.c the table of exported entry points and cuGetProcAddress
 *   td_device.c   devices and their attributes, the profiler switch
 *   td_context.c  primary and created contexts, the per-thread context stacks
 *   td_stream.c   streams with worker threads, events, host callbacks
 *   td_memory.c   device memory in host RAM behind fake device addresses, managed memory
 *   td_hostmem.c  page-locked host memory: allocations, registrations, mapped addresses
 *   td_ipc.c      IPC memory handles: export, open (same process behind a knob), close
 *   td_module.c   PTX/ELF modules, functions and kernel launches
 *   td_tables.c   generated: CUresult names/strings and default device attributes
 *
 * Locking: one process-wide mutex (td__lock) guards every object list and counter; it is
 * never held while a user callback runs or while a launch "executes" (sleeps). td__cond
 * is broadcast whenever stream work completes, so every waiter (stream, event and context
 * synchronization) waits on it and rechecks its own condition.
 *
 * The handle types of cuda.h are pointers to incomplete structs (struct CUctx_st ...);
 * this fixture completes them, so a CUcontext is simply a pointer to our context object.
 * Every handle a caller passes in is checked against the live lists before use, so a bad
 * or stale handle gives an error code, never a crash.
 */
#ifndef NBCUDA_TD_H
#define NBCUDA_TD_H

#include <cuda.h>
#include <cudaProfiler.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "testdriver.h"

/* cuda.h maps these names to their newest versions; the fixture also exports the older
 * versions under the plain names, as libcuda does, so they must not be macros here. */
#undef cuEventElapsedTime
#undef cuDevicePrimaryCtxRelease
#undef cuDevicePrimaryCtxReset
#undef cuDeviceGetUuid
#undef cuGetProcAddress
#undef cuMemHostRegister
#undef cuIpcOpenMemHandle

/* Older versions and per-thread-stream variants exported by the fixture that cuda.h does
 * not declare in a normal build. */
CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd);
CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev);
CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev);
CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev);
CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                  cuuint64_t flags);
CUresult CUDAAPI cuMemHostRegister(void *p, size_t bytesize, unsigned int flags);
CUresult CUDAAPI cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle,
                                    unsigned int flags);
CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUresult CUDAAPI cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray,
                                int numParams, unsigned int flags, CUdevice dev);
CUresult CUDAAPI cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void *src, size_t n);
CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void *dst, CUdeviceptr src, size_t n);
CUresult CUDAAPI cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n);
CUresult CUDAAPI cuMemcpyPeer_ptds(CUdeviceptr dst, CUcontext dstCtx, CUdeviceptr src,
                                   CUcontext srcCtx, size_t n);
CUresult CUDAAPI cuMemsetD8_v2_ptds(CUdeviceptr dst, unsigned char uc, size_t n);
CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dst, unsigned char uc, size_t n, CUstream h);
CUresult CUDAAPI cuMemsetD8Async_ptsz(CUdeviceptr dst, unsigned char uc, size_t n, CUstream h);
CUresult CUDAAPI cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src, size_t n,
                                           CUstream s);
CUresult CUDAAPI cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n, CUstream s);
CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream s);
CUresult CUDAAPI cuStreamQuery_ptsz(CUstream s);
CUresult CUDAAPI cuStreamAddCallback_ptsz(CUstream s, CUstreamCallback cb, void *user,
                                          unsigned int flags);
CUresult CUDAAPI cuStreamWaitEvent_ptsz(CUstream s, CUevent ev, unsigned int flags);
CUresult CUDAAPI cuLaunchHostFunc_ptsz(CUstream s, CUhostFn fn, void *user);
CUresult CUDAAPI cuEventRecord_ptsz(CUevent ev, CUstream s);
CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
                                       void **kernelParams, void **extra);
CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
                                     unsigned int gz, unsigned int bx, unsigned int by,
                                     unsigned int bz, unsigned int shared, CUstream s,
                                     void **kernelParams, void **extra);

#pragma GCC visibility push(hidden)

#define TD_MAX_DEVICES 16
#define TD_MAX_PEERS 16
#define TD_DRIVER_VERSION 13000

/* ---- td_state.c ---------------------------------------------------------------------- */

extern pthread_mutex_t td__lock;
extern pthread_cond_t td__cond;

/* Flags of td__enter. */
enum { TD_NEEDS_INIT = 0, TD_BEFORE_INIT_OK = 1 };

/* Every entry point starts here: counts the call under its base name and exact symbol,
 * applies fault injection, then (unless TD_BEFORE_INIT_OK) refuses the call with
 * CUDA_ERROR_NOT_INITIALIZED before a successful cuInit or in a forked child. */
CUresult td__enter(const char *base, const char *symbol, int flags);
#define TD_ENTER(base, symbol)                                                                 \
  do {                                                                                         \
    CUresult enter_ = td__enter(base, symbol, TD_NEEDS_INIT);                                  \
    if (enter_ != CUDA_SUCCESS) return enter_;                                                 \
  } while (0)

/* Launch behaviour knobs (read at cuInit, changed through the API); guarded by td__lock. */
extern int td__launch_delay_ms;
extern int td__refuse_launch;
/* 1: modules are decoded at load and kernels run on the CPU (src/cpudevice); always in
 * libnbcuda_cpudriver.so, with NBCUDA_TESTDRIVER_EXECUTE=1 in the test driver. */
extern int td__execute;
extern int td__host_callbacks_run;
/* 1 in a process forked after cuInit: worker threads do not exist there. */
int td__forked(void);
/* Monotonic clock in milliseconds. */
double td__now_ms(void);
/* Parses a non-negative integer with an optional K/M/G suffix; -1 when malformed. */
long long td__parse_size(const char *s);

/* ---- td_tables.c (generated) ---------------------------------------------------------- */

typedef struct td_error_entry {
  int code;
  const char *name;
  const char *string;
} td_error_entry;
extern const td_error_entry td__errors[];
extern const int td__error_count;
extern const int td__attribute_max;
extern const int td__attribute_defaults[];

/* ---- td_device.c ---------------------------------------------------------------------- */

struct CUctx_st {
  int device;
  int primary;   /* 1 for the device's primary context (never freed) */
  int destroyed; /* created context after cuCtxDestroy (kept so stale handles are caught) */
  unsigned flags;
  struct CUstream_st *default_stream; /* created on first use */
  struct CUctx_st *peers[TD_MAX_PEERS];
  int npeers;
  struct CUctx_st *next; /* list of created contexts */
};

typedef struct td_device {
  int attrs[160];
  size_t total_mem;
  size_t used_mem;
  struct CUctx_st primary;
  int primary_refcount;
  int primary_active;
  int reset_count;
} td_device;

extern td_device td__devices[TD_MAX_DEVICES];
extern int td__device_count;
extern int td__profiler_on;
/* Reads NBCUDA_TESTDRIVER_DEVICES/_CC/_MEM the first time it is called; later calls do
 * nothing. Called with td__lock held. */
void td__devices_configure(void);
int td__device_valid(CUdevice dev);

/* ---- td_context.c --------------------------------------------------------------------- */

/* The calling thread's current context, checked usable: CUDA_ERROR_INVALID_CONTEXT when
 * none, CUDA_ERROR_CONTEXT_IS_DESTROYED when destroyed or a reset primary. Lock held. */
CUresult td__current(struct CUctx_st **out);
/* Checks a context handle a caller passed in (lock held). */
CUresult td__ctx_check(struct CUctx_st *ctx);
/* Frees every stream, event, allocation and module of ctx (lock held; drops it while
 * joining worker threads). */
void td__ctx_release_resources(struct CUctx_st *ctx);
int td__stack_depth(void);
int td__live_contexts(void);
void td__contexts_free_all(void);

/* ---- td_stream.c ---------------------------------------------------------------------- */

/* Resolves a stream handle (0, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD or a created
 * stream) to its object; default handles need a current context. Lock held. */
CUresult td__stream_resolve(CUstream handle, struct CUstream_st **out);
/* Queued work item; the fields used depend on the kind. */
typedef struct td_op td_op;
enum td_op_kind {
  TD_OP_HTOD,
  TD_OP_DTOH,
  TD_OP_SET, /* cuMemsetD8Async: bytes of value at dptr */
  TD_OP_RECORD,
  TD_OP_WAIT,
  TD_OP_CALLBACK,
  TD_OP_HOSTFN,
  TD_OP_LAUNCH
};
struct td_op {
  enum td_op_kind kind;
  td_op *next;
  CUdeviceptr dptr;
  void *host;
  const void *chost;
  size_t bytes;
  unsigned char value; /* TD_OP_SET */
  struct CUevent_st *event;
  uint64_t seq;
  CUstreamCallback callback;
  CUhostFn hostfn;
  void *user;
  int delay_ms;
  tdrv_launch_info *launch; /* TD_OP_LAUNCH: what was launched (owned by the op) */
  void *staged; /* TD_OP_HTOD from pageable memory: the bytes taken at the call (owned) */
  struct td_program *program; /* TD_OP_LAUNCH with td__execute: the decoded module (a ref) */
  int entry;                  /* its entry point */
};
/* Appends op (malloc'd by the caller) to the stream's queue, starting its worker on
 * first use. Lock held. Returns CUDA_ERROR_OUT_OF_MEMORY when no thread can start. */
CUresult td__stream_enqueue(struct CUstream_st *s, td_op *op);
/* Waits until the stream's queue is empty (lock held); returns its sticky error. */
CUresult td__stream_wait_idle(struct CUstream_st *s);
/* Waits for every stream of ctx (all = 1) or for its default stream and blocking streams
 * (all = 0, the legacy default stream's implicit synchronization). Lock held. */
CUresult td__ctx_wait_streams(struct CUctx_st *ctx, int all);
/* Destroys every stream (discarding queued work) and event of ctx; lock held. */
void td__streams_release(struct CUctx_st *ctx);
int td__live_streams(void);
int td__live_events(void);

/* ---- td_memory.c ---------------------------------------------------------------------- */

/* Host address backing [dptr, dptr + bytes), or NULL when the range is not inside one
 * live allocation (device, managed, or mapped page-locked memory). Lock held. */
unsigned char *td__mem_resolve(CUdeviceptr dptr, size_t bytes);
void td__mem_release(struct CUctx_st *ctx);
/* td__mem_resolve that also answers the range [*pbase, *pbase + *plen) around dptr whose
 * bytes are contiguous on the host (the whole allocation when dptr is in one). Lock held. */
unsigned char *td__mem_lookup(CUdeviceptr dptr, size_t bytes, CUdeviceptr *pbase, size_t *plen);
int td__live_allocations(void);
/* The device or managed allocation holding dptr: 1 with its base, size and kind, else 0.
 * Lock held. */
int td__mem_range(CUdeviceptr dptr, CUdeviceptr *pbase, size_t *psize, int *pmanaged);
/* A fresh range of fake device addresses that nothing else will get (IPC mappings).
 * Lock held. */
CUdeviceptr td__mem_reserve(size_t bytes);

/* ---- td_ipc.c ------------------------------------------------------------------------- */

/* td__mem_resolve for the addresses of IPC mappings. Lock held. */
unsigned char *td__ipc_resolve(CUdeviceptr dptr, size_t bytes);
/* Drops the IPC mappings opened in ctx. Lock held. */
void td__ipc_release(struct CUctx_st *ctx);

/* ---- td_hostmem.c --------------------------------------------------------------------- */

/* 1 when [p, p + bytes) lies in page-locked host memory (allocated or registered). Lock held. */
int td__host_is_locked(const void *p, size_t bytes);
/* td__mem_resolve for the device addresses of page-locked host memory. Lock held. */
unsigned char *td__hostmem_resolve(CUdeviceptr dptr, size_t bytes);
/* Frees the page-locked allocations and drops the registrations of ctx. Lock held. */
void td__hostmem_release(struct CUctx_st *ctx);

/* ---- td_module.c ---------------------------------------------------------------------- */

void td__modules_release(struct CUctx_st *ctx);
int td__live_modules(void);
/* td__mem_resolve for the addresses of modules' global variables. Lock held. */
unsigned char *td__module_global_resolve(CUdeviceptr dptr, size_t bytes);
int td__launch_count(void);
int td__last_launch(tdrv_launch_info *out);
/* A launched kernel reached by its stream: with td__execute it runs on the CPU (a fault is
 * CUDA_ERROR_ILLEGAL_ADDRESS, its description on stderr), else it computes nothing; a raise
 * requested with tdrv_raise_in_next_kernel is written to the kernel's debug globals. Lock
 * held. */
CUresult td__kernel_run(const td_op *op);
/* Drops the op's reference to its decoded module. Lock held. */
void td__program_unref(struct td_program *p);

/* ---- td_procaddr.c -------------------------------------------------------------------- */

/* 1 when `symbol` is one of the fixture's exported CUDA entry points. */
int td__symbol_known(const char *symbol);

#pragma GCC visibility pop

#endif /* NBCUDA_TD_H */
