/* driver_api.h — nbcuda's internal view of the CUDA driver API: our own CUDA types, the ONE
 * list of driver entry points the library uses, the function-pointer table they are resolved
 * into, and the internal error/status helpers of src/driver/.
 *
 * The library never includes cuda.h (users need no CUDA header, and the driver is loaded at run
 * time), so the few types it needs are declared here with the same layout as cuda.h's.
 *
 * Every entry point appears once in NBC_DRIVER_API. The X-macro generates the table
 * (nbc__cu.cuStreamCreate ...) and loader.c's resolution loop, which asks the driver's
 * cuGetProcAddress for each base name at API version NBC__CUDA_API_VERSION, so that the driver
 * itself picks the versioned symbol (cuMemAlloc -> cuMemAlloc_v2) and, when the per-thread
 * default stream is requested, the _ptds/_ptsz variant.
 *
 * Hot path: a host function checks nbc__driver_ensure() (one acquire load of an atomic that is
 * set once) and calls through nbc__cu; nothing else. Errors are formatted only on failure, in
 * nbc__driver_fail, which is out of line and marked cold.
 */
#ifndef NBC_DRIVER_API_H
#define NBC_DRIVER_API_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "nbcuda.h"

/* --- CUDA types (layout-compatible with cuda.h) ---------------------------------------- */
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUuuid_st {
  char bytes[16];
} CUuuid;
typedef void (*CUstreamCallback)(CUstream stream, CUresult status, void *user_data);
typedef int CUjit_option;
typedef struct CUipcMemHandle_st {
  char reserved[64];
} CUipcMemHandle;
/* cuLaunchKernelEx's configuration (cuda.h's CUlaunchAttribute / CUlaunchConfig layout: the
 * attribute's 4-byte id padded to 8, then a 64-byte, 8-aligned value union). */
typedef struct CUlaunchAttribute_st {
  int id;
  char pad[4];
  union {
    char bytes[64];
    int cooperative;
    void *align_;
  } value;
} CUlaunchAttribute;
typedef struct CUlaunchConfig_st {
  unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute *attrs;
  unsigned numAttrs;
} CUlaunchConfig;

/* CUresult values nbcuda acts on. */
enum {
  NBC__CUDA_SUCCESS = 0,
  NBC__CUDA_ERROR_INVALID_VALUE = 1,
  NBC__CUDA_ERROR_OUT_OF_MEMORY = 2,
  NBC__CUDA_ERROR_NOT_INITIALIZED = 3,
  NBC__CUDA_ERROR_STUB_LIBRARY = 34,
  NBC__CUDA_ERROR_NO_DEVICE = 100,
  NBC__CUDA_ERROR_INVALID_DEVICE = 101,
  NBC__CUDA_ERROR_INVALID_CONTEXT = 201,
  NBC__CUDA_ERROR_INVALID_HANDLE = 400,
  NBC__CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
  NBC__CUDA_ERROR_CONTEXT_IS_DESTROYED = 709,
  NBC__CUDA_ERROR_NOT_READY = 600
};

/* Other constants of cuda.h. */
#define NBC__CU_EVENT_DISABLE_TIMING 0x2u
#define NBC__CU_GET_PROC_ADDRESS_DEFAULT 0
#define NBC__CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM 2
#define NBC__CU_JIT_MAX_REGISTERS 0
#define NBC__CU_JIT_ERROR_LOG_BUFFER 5
#define NBC__CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6
#define NBC__CU_LAUNCH_PARAM_END ((void *)0x00)
#define NBC__CU_LAUNCH_PARAM_BUFFER_POINTER ((void *)0x01)
#define NBC__CU_LAUNCH_PARAM_BUFFER_SIZE ((void *)0x02)
#define NBC__CU_LAUNCH_ATTRIBUTE_COOPERATIVE 2
#define NBC__CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define NBC__CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
#define NBC__CU_DEVICE_ATTRIBUTE_PCI_BUS_ID 33
#define NBC__CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID 34
#define NBC__CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID 50
#define NBC__CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define NBC__CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN 97
#define NBC__CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS 0x1u

/* The ABI version every entry point is requested at. 12.0 is the oldest driver API nbcuda
 * supports; asking for it gives signatures that every 12.x and 13.x driver still serves. */
#define NBC__CUDA_API_VERSION 12000

/* --- The entry points: X(name, parameter list) ------------------------------------------ */
#define NBC_DRIVER_API(X)                                                                  \
  X(cuDriverGetVersion, (int *version))                                                    \
  X(cuDeviceGetCount, (int *count))                                                        \
  X(cuDeviceGet, (CUdevice * device, int ordinal))                                         \
  X(cuDeviceGetName, (char *name, int len, CUdevice dev))                                  \
  X(cuDeviceGetUuid, (CUuuid * uuid, CUdevice dev))                                        \
  X(cuDeviceGetAttribute, (int *value, int attribute, CUdevice dev))                       \
  X(cuDeviceTotalMem, (size_t * bytes, CUdevice dev))                                      \
  X(cuDevicePrimaryCtxRetain, (CUcontext * pctx, CUdevice dev))                            \
  X(cuDevicePrimaryCtxRelease, (CUdevice dev))                                             \
  X(cuDevicePrimaryCtxReset, (CUdevice dev))                                               \
  X(cuDevicePrimaryCtxGetState, (CUdevice dev, unsigned int *flags, int *active))          \
  X(cuCtxGetCurrent, (CUcontext * pctx))                                                   \
  X(cuCtxPushCurrent, (CUcontext ctx))                                                     \
  X(cuCtxPopCurrent, (CUcontext * pctx))                                                   \
  X(cuCtxGetDevice, (CUdevice * device))                                                   \
  X(cuCtxSynchronize, (void))                                                              \
  X(cuMemGetInfo, (size_t * free, size_t * total))                                         \
  X(cuProfilerStart, (void))                                                               \
  X(cuProfilerStop, (void))                                                                \
  X(cuEventCreate, (CUevent * event, unsigned int flags))                                  \
  X(cuEventDestroy, (CUevent event))                                                       \
  X(cuEventRecord, (CUevent event, CUstream stream))                                       \
  X(cuEventQuery, (CUevent event))                                                         \
  X(cuEventSynchronize, (CUevent event))                                                   \
  X(cuEventElapsedTime, (float *ms, CUevent start, CUevent end))                           \
  X(cuStreamCreate, (CUstream * stream, unsigned int flags))                               \
  X(cuStreamDestroy, (CUstream stream))                                                    \
  X(cuStreamSynchronize, (CUstream stream))                                                \
  X(cuStreamQuery, (CUstream stream))                                                      \
  X(cuStreamAddCallback,                                                                   \
    (CUstream stream, CUstreamCallback callback, void *user_data, unsigned int flags))     \
  X(cuStreamWaitEvent, (CUstream stream, CUevent event, unsigned int flags))               \
  X(cuMemAlloc, (CUdeviceptr * dptr, size_t bytes))                                        \
  X(cuMemFree, (CUdeviceptr dptr))                                                         \
  X(cuMemcpyHtoD, (CUdeviceptr dst, const void *src, size_t bytes))                        \
  X(cuMemcpyDtoH, (void *dst, CUdeviceptr src, size_t bytes))                              \
  X(cuMemcpyDtoD, (CUdeviceptr dst, CUdeviceptr src, size_t bytes))                        \
  X(cuMemcpyHtoDAsync, (CUdeviceptr dst, const void *src, size_t bytes, CUstream stream))  \
  X(cuMemcpyDtoHAsync, (void *dst, CUdeviceptr src, size_t bytes, CUstream stream))        \
  X(cuMemsetD8, (CUdeviceptr dst, unsigned char value, size_t count))                      \
  X(cuMemsetD8Async, (CUdeviceptr dst, unsigned char value, size_t count, CUstream stream)) \
  X(cuMemHostAlloc, (void **pp, size_t bytes, unsigned int flags))                         \
  X(cuMemFreeHost, (void *p))                                                              \
  X(cuMemHostRegister, (void *p, size_t bytes, unsigned int flags))                         \
  X(cuMemHostUnregister, (void *p))                                                        \
  X(cuMemHostGetDevicePointer, (CUdeviceptr * pdptr, void *p, unsigned int flags))          \
  X(cuMemAllocManaged, (CUdeviceptr * dptr, size_t bytes, unsigned int flags))              \
  X(cuMemGetAddressRange, (CUdeviceptr * pbase, size_t * psize, CUdeviceptr dptr))        \
  X(cuIpcGetMemHandle, (CUipcMemHandle * handle, CUdeviceptr dptr))                        \
  X(cuIpcOpenMemHandle, (CUdeviceptr * pdptr, CUipcMemHandle handle, unsigned int flags))  \
  X(cuIpcCloseMemHandle, (CUdeviceptr dptr))                                               \
  X(cuDeviceCanAccessPeer, (int *can_access, CUdevice dev, CUdevice peer))                 \
  X(cuCtxEnablePeerAccess, (CUcontext peer, unsigned int flags))                           \
  X(cuMemcpyPeer, (CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, \
                   size_t bytes))                                                          \
  X(cuModuleLoadDataEx, (CUmodule * module, const void *image, unsigned int num_options,   \
                         CUjit_option * options, void **values))                           \
  X(cuModuleUnload, (CUmodule module))                                                     \
  X(cuModuleGetFunction, (CUfunction * function, CUmodule module, const char *name))       \
  X(cuModuleGetGlobal, (CUdeviceptr * dptr, size_t *bytes, CUmodule module, const char *name)) \
  X(cuFuncGetAttribute, (int *value, int attribute, CUfunction function))                  \
  X(cuFuncSetAttribute, (CUfunction function, int attribute, int value))                   \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor,                                           \
    (int *blocks, CUfunction function, int block_size, size_t dynamic_smem))               \
  X(cuLaunchKernel,                                                                        \
    (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,         \
     unsigned bz, unsigned shared, CUstream stream, void **params, void **extra))           \
  X(cuLaunchKernelEx,                                                                      \
    (const CUlaunchConfig *config, CUfunction f, void **params, void **extra))

typedef struct nbc__driver_api {
#define NBC__DRIVER_FIELD_(name, params) CUresult (*name) params;
  NBC_DRIVER_API(NBC__DRIVER_FIELD_)
#undef NBC__DRIVER_FIELD_
} nbc__driver_api_t;

/* The resolved table; valid once nbc__driver_ensure() returned NBC_OK. */
extern nbc__driver_api_t nbc__cu;
/* Nonzero once the driver is loaded, cuInit succeeded and the table is filled. */
extern atomic_int nbc__driver_ready;

/* loader.c: loads and initialises the driver once (thread-safe); on failure sets this
 * thread's last error (first failure and later ones worded as numba does) and returns it. */
nbc_status_t nbc__driver_init(void);

static inline nbc_status_t nbc__driver_ensure(void) {
  if (__builtin_expect(atomic_load_explicit(&nbc__driver_ready, memory_order_acquire), 1))
    return NBC_OK;
  return nbc__driver_init();
}

#define NBC__ENSURE_DRIVER()                                                               \
  do {                                                                                     \
    nbc_status_t nbc_st_ = nbc__driver_ensure();                                           \
    if (nbc_st_ != NBC_OK) return nbc_st_;                                                 \
  } while (0)

/* loader.c: 1 when the thread calling it is the one that initialised the driver. */
int nbc__driver_is_init_thread(void);
/* loader.c: the pid recorded at cuInit, 0 before. */
long nbc__driver_init_pid(void);

/* error.c: records a failed driver call in this thread's last error and returns the status
 * it maps to ("cuStreamCreate: CUDA_ERROR_INVALID_CONTEXT (201)"; NBC_FORKED with "CUDA
 * initialized before forking" for CUDA_ERROR_NOT_INITIALIZED in a forked child). */
#if defined(__GNUC__)
__attribute__((cold, noinline))
#endif
nbc_status_t
nbc__driver_fail(const char *call, CUresult result);
/* The same with extra context appended after the standard text (printf format). */
#if defined(__GNUC__)
__attribute__((cold, noinline, format(printf, 3, 4)))
#endif
nbc_status_t
nbc__driver_failf(const char *call, CUresult result, const char *fmt, ...);
/* Sets this thread's last error to a formatted message (no driver call) and returns status. */
#if defined(__GNUC__)
__attribute__((cold, format(printf, 2, 3)))
#endif
nbc_status_t
nbc__set_error(nbc_status_t status, const char *fmt, ...);
/* The same with a kind (nbcuda.h), for failures the status alone does not describe. */
#if defined(__GNUC__)
__attribute__((cold, format(printf, 3, 4)))
#endif
nbc_status_t
nbc__set_error_kind(nbc_status_t status, nbc_error_kind_t kind, const char *fmt, ...);
/* The same, under the name the compiler's files use. */
#if defined(__GNUC__)
__attribute__((cold, format(printf, 2, 3)))
#endif
nbc_status_t
nbc__error_set(nbc_status_t status, const char *fmt, ...);
/* Sets the last error with an explicit driver call and result (used by loader.c for cuInit,
 * whose message wording is numba's "Error at driver init: ..."). */
nbc_status_t nbc__set_driver_error(nbc_status_t status, const char *call, CUresult result,
                                   const char *message);
/* The nbc_status_t a CUresult maps to, without touching the last error (safe on driver
 * threads, e.g. in stream callbacks). */
nbc_status_t nbc__status_from_curesult(CUresult result);

#define NBC__CHECK(call_name, expr)                                                        \
  do {                                                                                     \
    CUresult nbc_res_ = (expr);                                                            \
    if (__builtin_expect(nbc_res_ != NBC__CUDA_SUCCESS, 0))                                \
      return nbc__driver_fail(call_name, nbc_res_);                                        \
  } while (0)

#endif /* NBC_DRIVER_API_H */
