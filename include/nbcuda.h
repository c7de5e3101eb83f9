/* nbcuda.h — the public C API of nbcuda: Numba's CUDA host API and its Python-kernel
 * compiler, in C.
 *
 * One header, no CUDA header needed. Every CUDA library (libcuda, libNVVM, libdevice,
 * nvJitLink, libcudart/NVRTC) is loaded lazily at run time with dlopen; nothing is linked
 * at build time.
 *
 * Conventions:
 *   - functions are nbc_<object>_<verb>; the object acted on comes first, outputs last and
 *     named p...;
 *   - every fallible function returns nbc_status_t (NBC_OK == 0); on failure a message
 *     naming the failing call is kept per thread and read with nbc_last_error();
 *   - handles are opaque; every create has a destroy and every destroy accepts NULL;
 *   - strings returned by the library are owned by the library; each function documents
 *     how long they live.
 */
#ifndef NBCUDA_H
#define NBCUDA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The functions below are libnbcuda's public interface: exported from the shared library,
 * which is built with hidden visibility for everything else (the nbc__ internals). */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header. It is the one place the version is written: CMake and the
 * Python package read it from here. */
#define NBC_VERSION_MAJOR 0
#define NBC_VERSION_MINOR 1
#define NBC_VERSION_PATCH 0
#define NBC_VERSION_STRING "0.1.0"
#define NBC_VERSION (NBC_VERSION_MAJOR * 10000 + NBC_VERSION_MINOR * 100 + NBC_VERSION_PATCH)

/* The version of the libnbcuda actually running, encoded as NBC_VERSION: a program compiled
 * against one header and run with another library detects the mismatch by comparing
 * nbc_version() with NBC_VERSION. */
int nbc_version(void);
/* The running library's version as "MAJOR.MINOR.PATCH"; a static string. */
const char *nbc_version_string(void);

/* ---------------------------------------------------------------------------------------
 * Status codes. One list generates the enum, nbc_status_name() and nbc_status_string().
 * ------------------------------------------------------------------------------------- */
#define NBC_STATUS_MAP(X)                                                                    \
  X(OK, "success")                                                                           \
  X(NO_DRIVER, "the CUDA driver library cannot be found or loaded")                          \
  X(DRIVER_DISABLED, "CUDA is disabled (NBCUDA_DRIVER=0)")                                   \
  X(STUB_DRIVER, "the CUDA driver is the toolkit's stub library, not a real driver")        \
  X(NO_DEVICE, "no CUDA-capable device is available")                                        \
  X(INIT_FAILED, "the CUDA driver failed to initialise")                                     \
  X(DRIVER_ERROR, "a CUDA driver call failed")                                               \
  X(FORKED, "CUDA initialized before forking")                                               \
  X(INVALID_ARGUMENT, "invalid argument")                                                    \
  X(INVALID_DEVICE, "invalid device ordinal")                                                \
  X(OUT_OF_MEMORY, "out of device memory")                                                   \
  X(NO_MEMORY, "out of host memory")                                                         \
  X(NOT_READY, "the operation has not completed yet")                                        \
  X(CONTEXT_SWITCH, "Cannot switch CUDA-context.")                                           \
  X(NON_PRIMARY_CONTEXT, "cannot operate on a non-primary CUDA context")                     \
  X(CONTEXT_MISMATCH, "the context popped is not the context expected")                      \
  X(NO_CONTEXT, "no CUDA context is current on this thread")                                 \
  X(NOT_TIMING_EVENT, "the event was created without timing")                                \
  X(UNSUPPORTED_CC, "compute capability not supported")                                      \
  X(NO_NVVM, "libNVVM cannot be found or loaded")                                            \
  X(NO_LIBDEVICE, "libdevice cannot be found")                                               \
  X(NVVM_ERROR, "libNVVM failed")                                                            \
  X(NO_JITLINK, "nvJitLink cannot be found or loaded")                                       \
  X(LINK_ERROR, "linking failed")                                                            \
  X(NO_RUNTIME, "neither libcudart nor a toolkit library could report a CUDA version")      \
  X(SYNTAX_ERROR, "Python syntax error")                                                     \
  X(UNSUPPORTED, "unsupported Python construct")                                             \
  X(TYPING_ERROR, "typing error")                                                            \
  X(SIGNATURE_ERROR, "invalid signature")                                                    \
  X(COMPILE_ERROR, "compile error")                                                          \
  X(INTERNAL, "internal error in nbcuda")                                                    \
  X(NO_NVRTC, "NVRTC cannot be found or loaded")                                             \
  X(NVRTC_ERROR, "NVRTC failed to compile CUDA C++")                                        \
  X(NO_PROGRAM, "a CUDA toolkit program cannot be found")                                   \
  X(CACHE_ERROR, "the disk cache cannot be written")

typedef enum nbc_status {
#define NBC_STATUS_ENUM_(name, text) NBC_##name,
  NBC_STATUS_MAP(NBC_STATUS_ENUM_)
#undef NBC_STATUS_ENUM_
      NBC_STATUS_COUNT_
} nbc_status_t;

/* "NBC_OK", "NBC_DRIVER_ERROR", ...; "NBC_UNKNOWN" for values outside the enum. */
const char *nbc_status_name(nbc_status_t status);
/* A short English description of the status. */
const char *nbc_status_string(nbc_status_t status);

/* ---------------------------------------------------------------------------------------
 * Error kinds. Beside its status, a failure has a kind where the status alone does not say
 * what it is: numba raises some errors of typing as a ValueError or a TypeError, and a
 * kernel that returns a value as a plain TypeError. One list generates the enum and
 * nbc_error_kind_name(); the Python binding maps kinds to exception classes in one table,
 * and nothing reads a message to learn what kind of failure it reports.
 * ------------------------------------------------------------------------------------- */
#define NBC_ERROR_KIND_MAP(X)                                                                \
  X(NONE, "the status says what failed")                                                     \
  X(VALUE, "a value is invalid (numba: ValueError)")                                         \
  X(TYPE, "a value has the wrong type (numba: TypeError)")                                   \
  X(KERNEL_RETURN, "a kernel returns a value; a kernel returns void (numba: TypeError)")

typedef enum nbc_error_kind {
#define NBC_ERROR_KIND_ENUM_(name, text) NBC_ERROR_KIND_##name,
  NBC_ERROR_KIND_MAP(NBC_ERROR_KIND_ENUM_)
#undef NBC_ERROR_KIND_ENUM_
      NBC_ERROR_KIND_COUNT_
} nbc_error_kind_t;

/* "NBC_ERROR_KIND_VALUE", ...; "NBC_ERROR_KIND_UNKNOWN" for values outside the enum. */
const char *nbc_error_kind_name(nbc_error_kind_t kind);
/* The kind of this thread's last failure (NBC_ERROR_KIND_NONE for most), read like
 * nbc_last_error() and valid as long. */
nbc_error_kind_t nbc_last_error_kind(void);
/* The rule "a kernel returns void": NBC_OK when return_type (a type name as
 * nbc_signature_return_type and nbc_compile_result_return_type give it) is void, none or
 * NULL; else NBC_TYPING_ERROR with "CUDA kernel must have void return type." and kind
 * NBC_ERROR_KIND_KERNEL_RETURN as the last error. */
nbc_status_t nbc_kernel_check_return_type(const char *return_type);

/* The message of this thread's last failure, e.g.
 * "cuStreamCreate: CUDA_ERROR_INVALID_CONTEXT (201)". Empty string after a success that
 * cleared it; never NULL. Valid until the next nbcuda call on this thread. */
const char *nbc_last_error(void);
/* The CUresult of this thread's last failed driver call (0 when the last failure was not a
 * driver call), and the name of that driver call ("" if none). */
int nbc_last_driver_error(void);
const char *nbc_last_driver_call(void);
/* What nbcuda said about that driver failure after "<call>: <NAME> (<code>)" in
 * nbc_last_error(), e.g. " (allocating 1024 bytes on device 0)" or " (the stream was made in a
 * context that was reset since)"; "" when nothing was added or the last failure was not a
 * driver call. */
const char *nbc_last_driver_detail(void);
/* "CUDA_ERROR_INVALID_CONTEXT" for a CUresult (a table of nbcuda's own; works without a
 * driver). "CUDA_ERROR_UNKNOWN_<n>" style text is never returned: unknown codes give NULL. */
const char *nbc_cuda_error_name(int curesult);

/* ---------------------------------------------------------------------------------------
 * Opaque handles.
 * ------------------------------------------------------------------------------------- */
typedef struct nbc_device nbc_device_t;     /* one per ordinal, owned by the library, lives
                                               for the process */
typedef struct nbc_context nbc_context_t;   /* a device's primary context, owned by the
                                               library, lives for the process */
typedef struct nbc_stream nbc_stream_t;     /* created or wrapped streams; destroy them */
typedef struct nbc_event nbc_event_t;
typedef struct nbc_module nbc_module_t;
typedef struct nbc_function nbc_function_t; /* owned by its module */
typedef uint64_t nbc_devptr_t;              /* a device address (CUdeviceptr) */

/* ---------------------------------------------------------------------------------------
 * Detection and the driver.
 * ------------------------------------------------------------------------------------- */

/* 1 when the CUDA driver initialises (cuInit is called) and libNVVM can be loaded; else 0.
 * Never fails; the reason is left in nbc_last_error(). */
int nbc_is_available(void);
/* Prints numba's detect() report to out; *pany_supported (may be NULL) is 1 when at least
 * one device is supported. Creates no context. */
nbc_status_t nbc_detect(FILE *out, int *pany_supported);
/* The same facts as one JSON object on one line (`nbcuda detect --json`):
 *   {"driver": P, "driver_version": [M, m], "devices": [{"id": 0, "name": N, "uuid": U,
 *    "compute_capability": [M, m], "supported": true}, ...], "supported": N}
 * or, when CUDA is unusable, {"error": E, "status": "NBC_..."} and that status returned.
 * *pany_supported as nbc_detect's. Creates no context. */
nbc_status_t nbc_detect_json(FILE *out, int *pany_supported);
/* cuDriverGetVersion, e.g. 13000. */
nbc_status_t nbc_driver_version(int *pversion);
/* The path libcuda was loaded from (or the name given to dlopen), NULL before loading.
 * Lives for the process. */
const char *nbc_driver_path(void);
/* 1 when driver entry points are the per-thread-default-stream (_ptds/_ptsz) variants. */
int nbc_driver_per_thread_default_stream(void);
/* Why the driver cannot be used (numba's cuda_error()): NULL when it initialised, else the
 * description of the failure ("CUDA_ERROR_NO_DEVICE (100)", "CUDA is disabled ..."). Loads
 * and initialises the driver when that has not happened yet. Lives for the process. */
const char *nbc_driver_init_error(void);

/* ---------------------------------------------------------------------------------------
 * Devices.
 * ------------------------------------------------------------------------------------- */
nbc_status_t nbc_device_count(int *pcount);
nbc_status_t nbc_device_get(int ordinal, nbc_device_t **pdevice);
int nbc_device_id(const nbc_device_t *device);
/* The name, e.g. "NVIDIA H200". Lives for the process. */
const char *nbc_device_name(const nbc_device_t *device);
/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", lowercase. Lives for the process. */
const char *nbc_device_uuid(const nbc_device_t *device);
void nbc_device_compute_capability(const nbc_device_t *device, int *pmajor, int *pminor);
/* 1 when compute capability >= 5.3. */
int nbc_device_supports_float16(const nbc_device_t *device);
/* cuDeviceGetAttribute with a CU_DEVICE_ATTRIBUTE_* number. */
nbc_status_t nbc_device_attribute(const nbc_device_t *device, int attribute, int *pvalue);
/* The same by name without its prefix, e.g. "MAX_THREADS_PER_BLOCK"; an unknown name is
 * NBC_INVALID_ARGUMENT. */
nbc_status_t nbc_device_attribute_by_name(const nbc_device_t *device, const char *name,
                                          int *pvalue);
/* The CU_DEVICE_ATTRIBUTE_* number of a name without its prefix, or -1. */
int nbc_device_attribute_lookup(const char *name);
/* Releases and resets the device's primary context (cuDevicePrimaryCtxReset); while managed
 * memory allocated with NBC_MANAGED_OUTLIVE_RESET lives, the primary context is released and
 * left to that memory (which holds it) instead of reset. */
nbc_status_t nbc_device_reset(nbc_device_t *device);
/* numba's Device.release_primary_context: when nbcuda holds the primary context, its modules
 * and memory are released, then its retain (cuDevicePrimaryCtxRelease); the context is not
 * reset (another holder keeps it alive) and the next use retains it again. Objects made in
 * it count as outlived, as after a reset. When it is the calling thread's current context it
 * is popped (outside nbc_require_context). Nothing to do when it is not held. */
nbc_status_t nbc_device_release_primary_context(nbc_device_t *device);
/* The device's primary context (numba's Device.get_primary_context): retained on first use,
 * the thread's context stack unchanged. A device below compute capability 3.5 is
 * NBC_UNSUPPORTED_CC ("<CUDA device 0 'name'> has compute capability < (3, 5)"). */
nbc_status_t nbc_device_primary_context(nbc_device_t *device, nbc_context_t **pcontext);

/* Pushes the device's primary context (nothing pops it) and returns the device. */
nbc_status_t nbc_select_device(int ordinal, nbc_device_t **pdevice);
/* The device of the current context; creates and pushes device 0's context if none. */
nbc_status_t nbc_get_current_device(nbc_device_t **pdevice);
/* The device of this thread's current context, or NULL when none is current (gpus.current);
 * creates nothing. */
nbc_status_t nbc_device_current(nbc_device_t **pdevice);
/* Fills devices[0..capacity) and sets *pcount to the number of devices. */
nbc_status_t nbc_list_devices(nbc_device_t **devices, int capacity, int *pcount);
/* `with gpus[i]:` — enter pushes the device's primary context exactly once (refused with
 * NBC_CONTEXT_SWITCH inside nbc_require_context when it would switch); exit pops exactly
 * once and checks that the popped context is the device's (NBC_CONTEXT_MISMATCH). */
nbc_status_t nbc_device_enter(nbc_device_t *device);
nbc_status_t nbc_device_exit(nbc_device_t *device);

/* Peer access between devices (cuDeviceCanAccessPeer). *pcan is 1 when `device` can map the
 * memory of `peer`; a device is never its own peer (0). */
nbc_status_t nbc_device_can_access_peer(const nbc_device_t *device, const nbc_device_t *peer,
                                        int *pcan);
/* Lets the current context (created as by nbc_current_context(-1) if none) access the memory
 * of peer's primary context (cuCtxEnablePeerAccess). Enabling it again is not an error; the
 * current context's own device is NBC_INVALID_ARGUMENT. Access stays enabled until either
 * context is reset. */
nbc_status_t nbc_device_enable_peer_access(nbc_device_t *peer);

/* ---------------------------------------------------------------------------------------
 * Contexts (primary contexts only).
 * ------------------------------------------------------------------------------------- */

/* devnum == -1: the attached context inside nbc_require_context, else the current context
 * (a foreign primary context is adopted, a non-primary one is NBC_NON_PRIMARY_CONTEXT), else
 * device 0's primary context is retained and pushed. devnum >= 0: that device's primary
 * context is pushed (on every call). */
nbc_status_t nbc_current_context(int devnum, nbc_context_t **pcontext);
nbc_device_t *nbc_context_device(const nbc_context_t *context);
/* The CUcontext. */
void *nbc_context_handle(const nbc_context_t *context);
nbc_status_t nbc_context_get_memory_info(nbc_context_t *context, size_t *pfree,
                                         size_t *ptotal);
nbc_status_t nbc_context_push(nbc_context_t *context);
/* Pops this thread's top context; NBC_NO_CONTEXT on an empty stack, NBC_CONTEXT_MISMATCH
 * (after popping) when the top was another context. */
nbc_status_t nbc_context_pop(nbc_context_t *context);
/* Frees what nbcuda holds in the context (pending deallocations); does not destroy it. */
nbc_status_t nbc_context_reset(nbc_context_t *context);
nbc_status_t nbc_context_synchronize(nbc_context_t *context);
/* Frees the device blocks the context keeps for reuse. nbc_mem_free keeps a freed block of up
 * to 4 MiB (32 MiB in all, at most 16 blocks; the environment variable NBCUDA_REUSE_BYTES sets
 * the total, 0 turns reuse off) and the next nbc_mem_alloc of the same size in that context
 * takes it back, after a cuCtxSynchronize unless one begun after the free has completed since
 * (what the cuMemFree it saves would have waited for; not when kernels were launched in the
 * context since the free: then the allocation goes to the driver, waiting for nothing).
 * nbc_context_get_memory_info, a reset and an allocation that runs out of memory free them
 * first; managed memory, memory exported through IPC and memory freed while another device's
 * primary context is active are freed at once. */
nbc_status_t nbc_context_release_freed(nbc_context_t *context);
/* How many freed blocks the context keeps for reuse now, and their bytes (either pointer may
 * be NULL): what nbc_context_release_freed would give back to the driver. */
nbc_status_t nbc_context_freed_kept(nbc_context_t *context, size_t *pblocks, size_t *pbytes);
/* How many times the context was reset (nbc_device_reset, nbc_close): memory, streams, events
 * and modules made in it during one lifetime are gone once the number changes, and their
 * addresses may belong to new allocations. 0 for NULL. Record it when allocating, compare
 * before using the memory: */
unsigned nbc_context_lifetime(const nbc_context_t *context);
/* NBC_OK while the context's lifetime is still `lifetime` (or context is NULL: unknown, e.g.
 * foreign memory); else NBC_DRIVER_ERROR without calling the driver, with the driver error
 * CUDA_ERROR_CONTEXT_IS_DESTROYED recorded for `call` and the message "<call>:
 * CUDA_ERROR_CONTEXT_IS_DESTROYED (709) (the <what> was made in a context that was reset
 * since)", as streams and events whose context was reset fail. */
nbc_status_t nbc_context_check_lifetime(const nbc_context_t *context, unsigned lifetime,
                                        const char *call, const char *what);
/* nbc_current_context(-1) then cuCtxSynchronize. */
nbc_status_t nbc_synchronize(void);
/* Pops every context of this thread's stack; on the thread that first initialised nbcuda it
 * also resets every device. */
nbc_status_t nbc_close(void);

typedef nbc_status_t (*nbc_context_fn)(void *arg);
/* Runs fn(arg) with a context attached to this thread (nbc_current_context(-1)); inside it
 * a device scope that would switch context fails with NBC_CONTEXT_SWITCH. Returns fn's
 * status. */
nbc_status_t nbc_require_context(nbc_context_fn fn, void *arg);

/* ---------------------------------------------------------------------------------------
 * Profiling.
 * ------------------------------------------------------------------------------------- */
nbc_status_t nbc_profile_start(void);
nbc_status_t nbc_profile_stop(void);
/* NVTX ranges and marks for a profiler's timeline (Nsight Systems, Nsight Compute): nested
 * ranges per thread, pushed and popped in order. Nothing is linked: a profiler names its tool
 * library in NVTX_INJECTION64_PATH, which the first call loads (NVTX v3); without one each call
 * costs a branch. argb: the range's colour as 0xAARRGGBB, 0 for the tool's own. A pop on a
 * thread with no open range is NBC_INVALID_ARGUMENT. nbc_nvtx_attached: 1 once a tool took
 * the calls, else 0. */
nbc_status_t nbc_nvtx_range_push(const char *name, uint32_t argb);
nbc_status_t nbc_nvtx_range_pop(void);
nbc_status_t nbc_nvtx_mark(const char *name);
int nbc_nvtx_attached(void);

/* ---------------------------------------------------------------------------------------
 * Streams. A NULL stream argument anywhere means the default stream (handle 0).
 * ------------------------------------------------------------------------------------- */
typedef enum nbc_stream_kind {
  NBC_STREAM_CREATED = 0,     /* nbc_stream_create: <CUDA stream N> */
  NBC_STREAM_DEFAULT,         /* handle 0: <Default CUDA stream> */
  NBC_STREAM_LEGACY,          /* handle 1: <Legacy default CUDA stream> */
  NBC_STREAM_PER_THREAD,      /* handle 2: <Per-thread default CUDA stream> */
  NBC_STREAM_EXTERNAL         /* wrapped: <External CUDA stream N> */
} nbc_stream_kind_t;

nbc_status_t nbc_stream_create(nbc_stream_t **pstream);
/* Destroys a created stream; for default and external streams only frees the wrapper. */
void nbc_stream_destroy(nbc_stream_t *stream);
/* The three default streams are library-owned singletons; destroying them does nothing. */
nbc_status_t nbc_default_stream(nbc_stream_t **pstream);
nbc_status_t nbc_legacy_default_stream(nbc_stream_t **pstream);
nbc_status_t nbc_per_thread_default_stream(nbc_stream_t **pstream);
/* Wraps a CUstream the caller owns; nbc_stream_destroy never destroys it. */
nbc_status_t nbc_external_stream(uintptr_t handle, nbc_stream_t **pstream);
uintptr_t nbc_stream_handle(const nbc_stream_t *stream);
nbc_stream_kind_t nbc_stream_kind(const nbc_stream_t *stream);
/* The context a created stream was made in; NULL for the default and external streams
 * (they belong to whichever context is current) and for NULL. */
nbc_context_t *nbc_stream_context(const nbc_stream_t *stream);
/* Writes numba's repr ("<CUDA stream 94...>") into buf (NUL-terminated, truncated). */
void nbc_stream_repr(const nbc_stream_t *stream, char *buf, size_t size);
nbc_status_t nbc_stream_synchronize(nbc_stream_t *stream);
/* Orders the work queued on stream from now on after the work queued so far on the stream
 * whose driver handle is `producer` (a CUstream of another library, 0x1 for the legacy
 * default stream, 0x2 for the per-thread one): an event recorded there that stream waits
 * for, the host not blocked. Nothing when producer is stream's own handle (for the default
 * stream, NULL or handle 0: 0x1, or 0x2 with the per-thread default stream). What a consumer of
 * a __cuda_array_interface__ naming a stream does before using its memory. */
nbc_status_t nbc_stream_wait_handle(nbc_stream_t *stream, uintptr_t producer);
/* NBC_OK when all work is done, NBC_NOT_READY while pending, else an error. */
nbc_status_t nbc_stream_query(nbc_stream_t *stream);

/* Called once when the work queued before it on the stream has completed. It runs on a
 * thread of the CUDA driver: it must not call CUDA (nor nbcuda functions that do), and it
 * must return quickly. status is NBC_OK, or the error of the stream. */
typedef void (*nbc_stream_callback_t)(nbc_stream_t *stream, nbc_status_t status, void *arg);
nbc_status_t nbc_stream_add_callback(nbc_stream_t *stream, nbc_stream_callback_t callback,
                                     void *arg);

/* ---------------------------------------------------------------------------------------
 * Events.
 * ------------------------------------------------------------------------------------- */
nbc_status_t nbc_event_create(int timing, nbc_event_t **pevent);
void nbc_event_destroy(nbc_event_t *event);
nbc_status_t nbc_event_record(nbc_event_t *event, nbc_stream_t *stream);
/* NBC_OK when complete, NBC_NOT_READY while pending, else an error. */
nbc_status_t nbc_event_query(nbc_event_t *event);
nbc_status_t nbc_event_synchronize(nbc_event_t *event);
/* Makes stream wait for the event (cuStreamWaitEvent). */
nbc_status_t nbc_event_wait(nbc_event_t *event, nbc_stream_t *stream);
/* Milliseconds between two recorded timing events; NBC_NOT_TIMING_EVENT if either was
 * created with timing == 0. */
nbc_status_t nbc_event_elapsed_time(nbc_event_t *start, nbc_event_t *end, float *pms);
int nbc_event_is_timing(const nbc_event_t *event);
/* The context the event was created in (current then); NULL for NULL. */
nbc_context_t *nbc_event_context(const nbc_event_t *event);

/* ---------------------------------------------------------------------------------------
 * Runtime version.
 * ------------------------------------------------------------------------------------- */
typedef enum nbc_runtime_source {
  NBC_RUNTIME_CUDART = 0, /* cudaRuntimeGetVersion of libcudart */
  NBC_RUNTIME_NVRTC,      /* nvrtcVersion of the toolkit's NVRTC */
  NBC_RUNTIME_NVVM        /* the toolkit version implied by libNVVM */
} nbc_runtime_source_t;

/* The CUDA toolkit folders nbcuda looks in for the toolkit's files (libNVVM, libdevice,
 * libcudart, NVRTC, nvJitLink, libcudadevrt.a, nvdisasm), in order: $CUDA_HOME, $CUDA_PATH,
 * /usr/local/cuda, unset or empty variables skipped. Fills roots and returns how many there
 * are. */
#define NBC_TOOLKIT_ROOTS_MAX 3
int nbc_toolkit_roots(const char *roots[NBC_TOOLKIT_ROOTS_MAX]);
/* Finds one of the CUDA toolkit's programs by name ("nvdisasm") the way nbcuda finds its
 * libraries: each folder of PATH, bin/ of each toolkit root (nbc_toolkit_roots), then
 * NVIDIA's pip wheels (nvidia/cu13/bin, ...) under the site-packages folders in sites
 * (NULL-terminated; the Python module passes sys.path) and NBCUDA_PIP_SITE. sites NULL: the
 * usual site-packages folders instead (the active virtualenv, the system's, the user's).
 * *ppath is the executable's path, valid until the next call on the same thread.
 * NBC_NO_PROGRAM when there is none, with every place tried in nbc_last_error();
 * NBC_INVALID_ARGUMENT for a name nbcuda does not look for. */
nbc_status_t nbc_toolkit_find_program(const char *name, const char *const *sites,
                                      const char **ppath);
/* (major, minor) of the CUDA runtime; *psource (may be NULL) says which library answered. */
nbc_status_t nbc_runtime_get_version(int *pmajor, int *pminor, nbc_runtime_source_t *psource);
/* *psupported = the runtime's major version is one nbcuda supports (12 or 13). */
nbc_status_t nbc_runtime_is_supported_version(int *psupported);
/* The supported (major, minor) pairs: *pversions points to *pcount pairs, static. */
void nbc_runtime_supported_versions(const int (**pversions)[2], int *pcount);

/* ---------------------------------------------------------------------------------------
 * What nbcuda found: the CUDA libraries it loads at run time, where each was found and its
 * version, or why it was not; the environment variables it reads. `nbcuda info` and
 * nbcuda.info() (numba's `numba -s`) are built on these.
 * ------------------------------------------------------------------------------------- */
/* The libraries, in the order nbc_info_print lists them: name (as reports print it). */
#define NBC_LIBRARY_MAP(X)                                                                   \
  X(DRIVER, "libcuda")           /* the CUDA driver */                                       \
  X(NVVM, "libNVVM")             /* compiles NVVM IR to PTX and LTO-IR */                    \
  X(LIBDEVICE, "libdevice")      /* libdevice.10.bc, the math functions' bitcode */          \
  X(NVJITLINK, "nvJitLink")      /* links LTO-IR and several images (optional) */            \
  X(NVRTC, "NVRTC")              /* compiles linked CUDA C++ files (optional) */             \
  X(CUDART, "libcudart")         /* the CUDA runtime, asked for its version (optional) */    \
  X(CUDADEVRT, "libcudadevrt")   /* libcudadevrt.a, linked for grid synchronisation */

typedef enum nbc_library {
#define NBC_LIBRARY_ENUM_(name, text) NBC_LIBRARY_##name,
  NBC_LIBRARY_MAP(NBC_LIBRARY_ENUM_)
#undef NBC_LIBRARY_ENUM_
      NBC_LIBRARY_COUNT_
} nbc_library_t;

/* "libcuda", "libNVVM", ...; NULL for values outside the enum. A static string. */
const char *nbc_library_name(nbc_library_t library);
/* Finds (loading it if that has not happened yet, as its first use would) the library and
 * reports where it is: *ppath the file (or the name the dynamic loader resolved), *pmajor and
 * *pminor its version (-1 and -1 for a file that carries none: libdevice, libcudadevrt).
 * Every output may be NULL. On failure the status is the one its first use would return
 * (NBC_NO_DRIVER, NBC_STUB_DRIVER, NBC_NO_NVVM, NBC_NO_LIBDEVICE, NBC_NO_JITLINK,
 * NBC_NO_NVRTC, NBC_NO_RUNTIME, NBC_LINK_ERROR for libcudadevrt), nbc_last_error() says
 * why and where it looked, the version is -1 and *ppath is the file that was found but
 * cannot be used (a stub libcuda), or NULL. *ppath is valid until the next call of
 * nbc_library_find on the same thread. Never initialises a device context. */
nbc_status_t nbc_library_find(nbc_library_t library, const char **ppath, int *pmajor,
                              int *pminor);
/* The environment variables nbcuda reads (NBCUDA_*, numba-cuda's NUMBA_* and the toolkit's
 * CUDA_HOME, CUDA_PATH), sorted, NULL-terminated; static. */
const char *const *nbc_env_names(void);
/* Prints nbcuda's version, every library of NBC_LIBRARY_MAP with its path and version or
 * why it is missing, the CUDA runtime version, the devices, and those of nbc_env_names()
 * that are set. json 0: a report for people; 1: one JSON object on one line,
 *   {"nbcuda": "0.1.0",
 *    "libraries": {"libcuda": {"path": P, "version": [M, m]} or
 *                             {"path": P or null, "error": E, "status": "NBC_..."}, ...},
 *    "runtime": {"version": [M, m], "source": "libcudart"|"NVRTC"|"libNVVM"} or
 *               {"error": E, "status": S},
 *    "devices": [{"id": 0, "name": N, "uuid": U, "compute_capability": [M, m]}, ...],
 *    "environment": {"NBCUDA_DRIVER": "...", ...}}
 * ("version": null where the file carries none). A library that is missing is part of the
 * report, not a failure: NBC_OK unless out cannot be written (NBC_INVALID_ARGUMENT for a
 * NULL out). Creates no context. */
nbc_status_t nbc_info_print(FILE *out, int json);

/* ---------------------------------------------------------------------------------------
 * Memory (in the current context; one is created as by nbc_current_context(-1)).
 * A NULL stream in the *_async functions is the default stream.
 * ------------------------------------------------------------------------------------- */
nbc_status_t nbc_mem_alloc(size_t bytes, nbc_devptr_t *pptr);
/* nbc_mem_alloc that also says which context the memory belongs to (*pcontext: the current
 * one); bytes 0 allocates nothing (*pptr = 0) and only finds (or creates) the context. One
 * check of the current context serves both. */
nbc_status_t nbc_mem_alloc_current(size_t bytes, nbc_devptr_t *pptr, nbc_context_t **pcontext);
nbc_status_t nbc_mem_free(nbc_devptr_t ptr);
nbc_status_t nbc_memcpy_htod(nbc_devptr_t dst, const void *src, size_t bytes);
nbc_status_t nbc_memcpy_dtoh(void *dst, nbc_devptr_t src, size_t bytes);
nbc_status_t nbc_memcpy_dtod(nbc_devptr_t dst, nbc_devptr_t src, size_t bytes);
/* nbc_memcpy_dtoh into ordinary (pageable) host memory, such as a new array's: up to 1 MiB the
 * copy goes through a page-locked buffer of the current context and memcpy, which on an H200
 * is 0.6-18 us faster than the driver's own path into pageable memory (staging.c); a larger
 * copy, or a buffer busy with another thread's copy, goes directly. Complete on return, as
 * nbc_memcpy_dtoh. Not for page-locked dst: the direct copy into it is the faster. */
nbc_status_t nbc_memcpy_dtoh_pageable(void *dst, nbc_devptr_t src, size_t bytes);
/* dst[j, i] = src[i, j]: the transpose of the rows x cols array at src (strides in bytes, not
 * negative) written C-contiguous (cols x rows) to dst, by a kernel on the device in the
 * current context, queued on stream (NULL: the default stream) — numba's transpose(). The
 * kernel is the library kernel "transpose" (nbc_library_kernel_source), compiled on first
 * use in the process (it needs libNVVM, as any compile does) and loaded into the context on
 * first use there. */
nbc_status_t nbc_transpose2d(nbc_devptr_t dst, nbc_devptr_t src, uint64_t rows, uint64_t cols,
                             int64_t src_stride0, int64_t src_stride1, size_t itemsize,
                             nbc_stream_t *stream);
nbc_status_t nbc_memcpy_htod_async(nbc_devptr_t dst, const void *src, size_t bytes,
                                   nbc_stream_t *stream);
nbc_status_t nbc_memcpy_dtoh_async(void *dst, nbc_devptr_t src, size_t bytes,
                                   nbc_stream_t *stream);
nbc_status_t nbc_memset_d8(nbc_devptr_t dst, unsigned char value, size_t bytes);
/* The same queued on a stream (NULL: the default stream), as the _async copies. */
nbc_status_t nbc_memset_d8_async(nbc_devptr_t dst, unsigned char value, size_t bytes,
                                 nbc_stream_t *stream);
/* Copies between memory of two contexts, e.g. two devices' primary contexts (cuMemcpyPeer;
 * works without peer access, which only makes it faster). Synchronous like the other copies. */
nbc_status_t nbc_memcpy_peer(nbc_devptr_t dst, nbc_context_t *dst_context, nbc_devptr_t src,
                             nbc_context_t *src_context, size_t bytes);

/* CUDA C++ source compiled with the toolkit's NVRTC (loaded on first use, as nvJitLink is),
 * for linking with kernels (numba's link=["f.cu"]): PTX, or LTO-IR with NBC_NVRTC_LTO, for
 * compute capability cc_major.cc_minor; name is the file name for the messages. flags may
 * also ask for line information (NBC_NVRTC_LINEINFO, -lineinfo) and debug information
 * (NBC_NVRTC_DEBUG, -G), as numba's compile_all(lineinfo=, debug=) does. *pcode is malloc'd
 * (free() it), *psize its bytes. A compile failure is NBC_NVRTC_ERROR with NVRTC's log in the
 * message. */
#define NBC_NVRTC_LTO 0x1u
#define NBC_NVRTC_LINEINFO 0x2u
#define NBC_NVRTC_DEBUG 0x4u
nbc_status_t nbc_nvrtc_compile(const char *source, const char *name, int cc_major,
                               int cc_minor, unsigned flags, char **pcode, size_t *psize);
/* The same, with more directories searched for #include: search_paths is numba's
 * CUDA_NVRTC_EXTRA_SEARCH_PATHS, directories separated by ':' (NULL or "": none). */
nbc_status_t nbc_nvrtc_compile_searching(const char *source, const char *name, int cc_major,
                                         int cc_minor, unsigned flags, const char *search_paths,
                                         char **pcode, size_t *psize);

/* Host memory the device can reach (numba's memhostalloc, mempin, memallocmanaged), in the
 * current context (created as by nbc_current_context(-1) if none).
 *
 * nbc_mem_host_alloc: page-locked host memory (cuMemHostAlloc). flags combine
 * NBC_HOST_ALLOC_PORTABLE (usable from every context), NBC_HOST_ALLOC_DEVICEMAP (mapped into
 * the device's address space: nbc_mem_host_device_pointer gives its device address) and
 * NBC_HOST_ALLOC_WRITECOMBINED. A request of 0 bytes allocates 1, so the pointer is unique.
 * Free it with nbc_mem_host_free, which a deferred-cleanup scope defers like nbc_mem_free.
 * Memory of a context that was reset since (nbc_device_reset, nbc_close) is gone with it:
 * freeing it afterwards only forgets it, the driver is not called — unless it was allocated
 * with NBC_HOST_ALLOC_OUTLIVE_RESET: then the pages are nbcuda's own (mmap), page-locked with
 * cuMemHostRegister, and a reset only unpins them; they stay valid until nbc_mem_host_free,
 * whatever the order of reset and free (for memory other objects view, as numpy arrays do).
 * The driver write-combines only memory it allocates, so OUTLIVE_RESET refuses
 * WRITECOMBINED. */
#define NBC_HOST_ALLOC_PORTABLE 0x01u
#define NBC_HOST_ALLOC_DEVICEMAP 0x02u
#define NBC_HOST_ALLOC_WRITECOMBINED 0x04u
#define NBC_HOST_ALLOC_OUTLIVE_RESET 0x08u
nbc_status_t nbc_mem_host_alloc(size_t bytes, unsigned flags, void **pptr);
/* NULL is accepted; a pointer nbcuda did not allocate is passed to the driver, which judges. */
nbc_status_t nbc_mem_host_free(void *ptr);
/* Page-locks [ptr, ptr + bytes) of existing host memory (cuMemHostRegister), with
 * NBC_HOST_REGISTER_PORTABLE and NBC_HOST_REGISTER_DEVICEMAP. Registering memory that is
 * already page-locked fails (CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED). */
#define NBC_HOST_REGISTER_PORTABLE 0x01u
#define NBC_HOST_REGISTER_DEVICEMAP 0x02u
nbc_status_t nbc_mem_host_register(void *ptr, size_t bytes, unsigned flags);
/* Unpins at once, never deferred (numba unpins immediately, so memory can be pinned again);
 * memory that is not registered fails (CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED). */
nbc_status_t nbc_mem_host_unregister(void *ptr);
/* 1 when ptr is where page-locked memory nbcuda allocated or registered starts (in a context
 * not reset since), else 0: a table lookup, no driver call (asking the driver costs 0.5-0.9 us
 * for pageable memory on an H200, bench/staging_probe.c). */
int nbc_mem_host_pagelocked_by_nbcuda(const void *ptr);
/* The device address of mapped page-locked host memory (cuMemHostGetDevicePointer); ptr may
 * point inside an allocation or registration. */
nbc_status_t nbc_mem_host_device_pointer(void *ptr, nbc_devptr_t *pdptr);
/* Managed memory (cuMemAllocManaged), usable from the host and the device at the same
 * address. flags: NBC_MANAGED_ATTACH_GLOBAL attaches it to every stream
 * (CU_MEM_ATTACH_GLOBAL), without it to the host (CU_MEM_ATTACH_HOST);
 * NBC_MANAGED_OUTLIVE_RESET (for memory other objects view, as numpy arrays do) keeps it valid
 * until nbc_mem_free whatever the order of reset and free: the driver frees managed memory
 * only with its context, so the memory holds its primary context (a retain) until freed;
 * a release (nbc_close) leaves the context to it, and nbc_device_reset then does not reset
 * the primary context while such memory lives (nbcuda's own modules, memory, streams and
 * events in it are released all the same). A request of 0 bytes allocates 1. Free it with
 * nbc_mem_free. */
#define NBC_MANAGED_ATTACH_GLOBAL 0x01u
#define NBC_MANAGED_OUTLIVE_RESET 0x02u
nbc_status_t nbc_mem_alloc_managed(size_t bytes, unsigned flags, nbc_devptr_t *pptr);

/* Deferred cleanup (numba's `with cuda.defer_cleanup():`). Between begin and end, frees of
 * the context's memory (nbc_mem_free, nbc_mem_host_free) are queued instead of performed;
 * they run, in the order requested, when the outermost scope of that context ends. Scopes
 * nest and count per context, from any thread. nbc_context_reset also performs the queued
 * frees. end without a matching begin is NBC_INVALID_ARGUMENT. */
nbc_status_t nbc_context_defer_cleanup_begin(nbc_context_t *context);
nbc_status_t nbc_context_defer_cleanup_end(nbc_context_t *context);
/* How many frees of the context are queued, and the nesting depth of its scopes. */
nbc_status_t nbc_context_deferred(const nbc_context_t *context, size_t *ppending,
                                  unsigned *pdepth);

/* ---------------------------------------------------------------------------------------
 * Interprocess memory (CUDA IPC, Linux): numba's Context.get_ipc_handle / IpcHandle.open.
 *
 * The exporting process calls nbc_ipc_get_handle on device memory it allocated; the handle
 * is plain data (copy it, write it to a pipe or a file) that another process passes to
 * nbc_ipc_open to map the same memory, and unmaps with nbc_ipc_close. The driver exports
 * whole allocations (cuIpcGetMemHandle of the allocation's base, found with
 * cuMemGetAddressRange), so the handle also carries the offset of the pointer inside it and
 * the size of the range shared, plus the identity of the exporting device.
 *
 * The exporting process cannot open its own handle: the driver refuses
 * (CUDA_ERROR_INVALID_CONTEXT, and the message says why). The opening context's device must
 * be the exporting device or one with peer access to it (the mapping enables peer access
 * lazily, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS); numba copies through host memory otherwise
 * (its open_staged), nbcuda refuses with NBC_INVALID_DEVICE. The exporter must keep its
 * allocation until every importer has closed its mapping.
 * ------------------------------------------------------------------------------------- */
#define NBC_IPC_HANDLE_SIZE 64
typedef struct nbc_ipc_handle {
  unsigned char bytes[NBC_IPC_HANDLE_SIZE]; /* the driver's CUipcMemHandle */
  uint64_t offset; /* of the shared range from the start of the exported allocation */
  uint64_t size;   /* bytes of the shared range */
  /* The exporting device, as numba's source_info (PCI domain, bus, device) and its UUID
   * ("GPU-..."); -1 and "" when unknown, e.g. a handle made from the 64 bytes alone, which
   * is then opened in the given context without a device check. */
  int pci_domain_id, pci_bus_id, pci_device_id;
  char uuid[48];
  int64_t pid; /* the exporting process (0: unknown), for the message of a refused open */
} nbc_ipc_handle_t;

/* Exports [ptr, ptr + bytes) of device memory of context (NULL: the current context, as
 * nbc_current_context(-1)); bytes == 0 shares everything from ptr to the end of its
 * allocation. A range that runs past its allocation is NBC_INVALID_ARGUMENT. */
nbc_status_t nbc_ipc_get_handle(nbc_context_t *context, nbc_devptr_t ptr, size_t bytes,
                                nbc_ipc_handle_t *phandle);
/* Fills a handle from the 64 bytes of a CUipcMemHandle another process sent (numba's
 * open_ipc_array): no device identity, the given offset and size. */
void nbc_ipc_handle_from_bytes(const void *bytes, uint64_t offset, uint64_t size,
                               nbc_ipc_handle_t *phandle);
/* Maps the handle's memory into context (NULL: the current context): *pptr is the start of
 * the shared range (the mapping plus the handle's offset). Every successful open needs one
 * nbc_ipc_close; opening one handle twice in a context maps it once (the driver counts). */
nbc_status_t nbc_ipc_open(const nbc_ipc_handle_t *handle, nbc_context_t *context,
                          nbc_devptr_t *pptr);
/* *ppeer: whether nbc_ipc_open can map the handle in context (NULL: the current context):
 * its exporting device is context's or a peer of it, or the handle names none (made from raw
 * bytes). 0: nbc_ipc_open_staged is the way, as numba's IpcHandle.open chooses. */
nbc_status_t nbc_ipc_source_is_peer(const nbc_ipc_handle_t *handle, nbc_context_t *context,
                                    int *ppeer);
/* numba's staged open: a copy of the handle's memory in new device memory of context (NULL:
 * the current context), made by mapping the handle in the exporting device's primary context,
 * copying device to device (the driver stages through the host between devices that are not
 * peers) and unmapping. *pptr is the copy: nbc_mem_free it. A handle that names no exporting
 * device (nbc_ipc_handle_from_bytes) is NBC_INVALID_ARGUMENT. */
nbc_status_t nbc_ipc_open_staged(const nbc_ipc_handle_t *handle, nbc_context_t *context,
                                 nbc_devptr_t *pptr);
/* Unmaps what nbc_ipc_open returned as ptr (cuIpcCloseMemHandle in the opening context).
 * A pointer nbc_ipc_open did not return, or one closed already, is NBC_INVALID_ARGUMENT;
 * after a reset of the opening context the mapping is gone already, and closing is a no-op. */
nbc_status_t nbc_ipc_close(nbc_devptr_t ptr);

/* ---------------------------------------------------------------------------------------
 * Modules and launches.
 * ------------------------------------------------------------------------------------- */
typedef enum nbc_image_kind {
  NBC_IMAGE_AUTO = 0, /* recognised by content: ELF = cubin, ED 43 4E 7F = LTO-IR, else PTX */
  NBC_IMAGE_PTX,
  NBC_IMAGE_CUBIN,
  NBC_IMAGE_FATBIN,
  NBC_IMAGE_LTOIR,
  NBC_IMAGE_OBJECT, /* a relocatable device object (nvcc -dc), linked only */
  NBC_IMAGE_LIBRARY, /* a static library of device objects (.a), linked only */
  NBC_IMAGE_CUDA     /* CUDA C++ source (numba's link=["f.cu"]), linked only: compiled by
                        NVRTC for the link's architecture first, to LTO-IR when the link's
                        first image (the kernel's own code) is LTO-IR, else to PTX */
} nbc_image_kind_t;

typedef struct nbc_image {
  const void *data;
  size_t size; /* for PTX and CUDA C++, the text length (a trailing NUL is not required) */
  nbc_image_kind_t kind;
  const char *name; /* NULL, or the file name NVRTC's messages give a CUDA C++ image */
} nbc_image_t;

/* The kind numba-cuda's linker gives a link file by its extension ext (the text after the
 * last '.', NULL for a name without one): ptx, cubin, fatbin, ltoir, o (a relocatable
 * object), a (a static library), cu (NBC_IMAGE_CUDA). Any other is NBC_LINK_ERROR, numba's
 * "Don't know how to link file with extension .ext". */
nbc_status_t nbc_image_kind_of_extension(const char *ext, nbc_image_kind_t *pkind);

/* Loads one image into the current context. PTX and cubin go to cuModuleLoadData; LTO-IR is
 * linked through nvJitLink for the current device's architecture. */
nbc_status_t nbc_module_load_data(const void *image, size_t size, nbc_image_kind_t kind,
                                  nbc_module_t **pmodule);
/* nbc_module_load_data with options: max_registers (0: no cap) limits the registers per
 * thread of the code the driver or nvJitLink compiles from PTX or LTO-IR (numba's
 * jit(max_registers=N): CU_JIT_MAX_REGISTERS / -maxrregcount); a cubin is used as it is. */
typedef struct nbc_module_load_options {
  unsigned max_registers;
  int cudadevrt; /* link the toolkit's libcudadevrt.a too (grid synchronisation's
                    cudaCG* functions; nbc_compile_result_cooperative says when): the image
                    then goes through nvJitLink. Found through NBCUDA_CUDADEVRT (the file),
                    else lib64/ of $CUDA_HOME, $CUDA_PATH, /usr/local/cuda */
  int fp16;      /* link numba.cuda.fp16's wrappers too (nbc_compile_result_uses_fp16 says
                    when): nbc_fp16_shim_source compiled by NVRTC for the device, once per
                    architecture and process (to LTO-IR when an image is LTO-IR) */
  const char *nvrtc_search_paths; /* directories searched for the #include files of
                                     NBC_IMAGE_CUDA images, as nbc_nvrtc_compile_searching's
                                     search_paths (NULL: none); read during the call only */
} nbc_module_load_options_t;
nbc_status_t nbc_module_load_data_ex(const void *image, size_t size, nbc_image_kind_t kind,
                                     const nbc_module_load_options_t *options,
                                     nbc_module_t **pmodule);
/* Links several images (PTX, cubin, LTO-IR) with nvJitLink (LTO when any is LTO-IR) for the
 * current device and loads the result. */
nbc_status_t nbc_module_link(const nbc_image_t *images, int count, nbc_module_t **pmodule);
/* The same with load options (max_registers caps the registers of the linked code). */
nbc_status_t nbc_module_link_ex(const nbc_image_t *images, int count,
                                const nbc_module_load_options_t *options,
                                nbc_module_t **pmodule);
/* Links images with nvJitLink for sm_<cc_major><cc_minor> (0, 0: the current context's
 * device) with the options (NULL: none) and loads nothing: *pcubin (release it with
 * nbc_cubin_free) holds *psize bytes. Needs no GPU when the compute capability is given
 * (SASS inspection, ahead of time). */
nbc_status_t nbc_link_cubin(const nbc_image_t *images, int count, int cc_major, int cc_minor,
                            const nbc_module_load_options_t *options, void **pcubin,
                            size_t *psize);
/* The same link with nvJitLink's -ptx: the PTX it makes (for LTO-IR, what link-time
 * optimisation made of it: numba's inspect_lto_ptx), NUL-terminated in *pptx (release it
 * with nbc_cubin_free), *psize bytes without the NUL. */
nbc_status_t nbc_link_ptx(const nbc_image_t *images, int count, int cc_major, int cc_minor,
                          const nbc_module_load_options_t *options, char **pptx,
                          size_t *psize);
void nbc_cubin_free(void *cubin);
void nbc_module_destroy(nbc_module_t *module);
nbc_status_t nbc_module_get_function(nbc_module_t *module, const char *name,
                                     nbc_function_t **pfunction);
/* A variable of the module in global memory (cuModuleGetGlobal): its device address and
 * size (either pointer may be NULL). An unknown name is the driver's CUDA_ERROR_NOT_FOUND. */
nbc_status_t nbc_module_get_global(nbc_module_t *module, const char *name, nbc_devptr_t *pptr,
                                   size_t *psize);
/* The i32 variables of a debug=True kernel <name> with a raise site, "<name>__<v>__" for each
 * v of this list in its order: the raise site's code, then the raising thread's threadIdx z,
 * y, x and blockIdx z, y, x. The compiler emits them; nbc_debug_exception_* read them. */
#define NBC_DEBUG_EXCEPTION_VARIABLES \
  { "errcode", "tidz", "tidy", "tidx", "ctaidz", "ctaidy", "ctaidx" }
/* Launches of a debug=True kernel (nbc_raise_site_t). Before one, clear queues the zeroing of
 * the function's <name>__errcode__ on the stream; after it, read waits for the stream (the
 * launch) and gives the code of the raise site that ended a thread first (0: none), with that
 * thread's threadIdx and blockIdx in numba's order, z, y, x. A function compiled without
 * debug, or with no raise site, has no such variables: the driver's CUDA_ERROR_NOT_FOUND. */
nbc_status_t nbc_debug_exception_clear(nbc_function_t *function, nbc_stream_t *stream);
nbc_status_t nbc_debug_exception_read(nbc_function_t *function, nbc_stream_t *stream,
                                      int *pcode, int tid_zyx[3], int ctaid_zyx[3]);
/* The CUfunction (for interoperability and benchmarks); NULL for NULL. */
void *nbc_function_handle(const nbc_function_t *function);
/* args: an array of pointers to each kernel parameter, as cuLaunchKernel takes them. */
nbc_status_t nbc_launch(nbc_function_t *function, const unsigned grid[3],
                        const unsigned block[3], unsigned shared_bytes, nbc_stream_t *stream,
                        void **args);
/* The same with the parameters packed in one buffer at their natural alignment
 * (CU_LAUNCH_PARAM_BUFFER_POINTER). */
nbc_status_t nbc_launch_packed(nbc_function_t *function, const unsigned grid[3],
                               const unsigned block[3], unsigned shared_bytes,
                               nbc_stream_t *stream, const void *params, size_t params_size);
/* nbc_launch_packed with flags: NBC_LAUNCH_COOPERATIVE launches cooperatively (all blocks
 * resident at once, as grid synchronisation needs: cuLaunchKernelEx with
 * CU_LAUNCH_ATTRIBUTE_COOPERATIVE); a grid larger than the device runs at once is the
 * driver's CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE. 0: nbc_launch_packed. */
enum { NBC_LAUNCH_COOPERATIVE = 1 };
nbc_status_t nbc_launch_packed_ex(nbc_function_t *function, const unsigned grid[3],
                                  const unsigned block[3], unsigned shared_bytes,
                                  nbc_stream_t *stream, const void *params, size_t params_size,
                                  unsigned flags);

/* What a loaded kernel uses (numba's _Kernel.regs_per_thread, shared_mem_per_block, ...):
 * cuFuncGetAttribute's CU_FUNC_ATTRIBUTE_* values, mapped one by one. */
typedef enum nbc_function_attr {
  NBC_FUNCTION_ATTR_MAX_THREADS_PER_BLOCK = 0, /* the largest block it can be launched with */
  NBC_FUNCTION_ATTR_SHARED_SIZE_BYTES,  /* statically allocated shared memory per block */
  NBC_FUNCTION_ATTR_CONST_SIZE_BYTES,   /* user constant memory */
  NBC_FUNCTION_ATTR_LOCAL_SIZE_BYTES,   /* local memory per thread */
  NBC_FUNCTION_ATTR_NUM_REGS,           /* registers per thread */
  NBC_FUNCTION_ATTR_PTX_VERSION,        /* PTX virtual architecture, e.g. 90 */
  NBC_FUNCTION_ATTR_BINARY_VERSION,     /* binary architecture, e.g. 90 */
  NBC_FUNCTION_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES, /* dynamic shared memory a launch may ask */
  /* the share of the unified L1/shared memory it prefers as shared memory: a percentage from
   * 0 (most L1) to 100 (most shared), -1 for the driver's default */
  NBC_FUNCTION_ATTR_PREFERRED_SHARED_MEMORY_CARVEOUT
} nbc_function_attr_t;

/* One attribute of the function in its module's context. A function whose module a context
 * reset unloaded is refused (CUDA_ERROR_CONTEXT_IS_DESTROYED, without calling the driver);
 * an unknown attr is NBC_INVALID_ARGUMENT. */
nbc_status_t nbc_function_attribute(nbc_function_t *function, nbc_function_attr_t attr,
                                    int *pvalue);
/* cuFuncSetAttribute: sets one of the two attributes a function lets change,
 * NBC_FUNCTION_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES (up to the device's opt-in shared memory
 * per block less the function's static shared memory) and
 * NBC_FUNCTION_ATTR_PREFERRED_SHARED_MEMORY_CARVEOUT (-1 to 100); another attr is
 * NBC_INVALID_ARGUMENT, a value the driver refuses its CUDA_ERROR_INVALID_VALUE. A launch that
 * asks for more dynamic shared memory than the function's limit raises the limit itself. */
nbc_status_t nbc_function_set_attribute(nbc_function_t *function, nbc_function_attr_t attr,
                                        int value);
/* cuOccupancyMaxActiveBlocksPerMultiprocessor: how many blocks of block_size threads, each
 * with dynamic_smem bytes of dynamic shared memory, one multiprocessor of the function's
 * device runs at once (0 when such a block cannot run at all). */
nbc_status_t nbc_occupancy_max_active_blocks(nbc_function_t *function, int block_size,
                                             size_t dynamic_smem, int *pblocks);
/* numba's max_cooperative_grid_blocks: the above times the device's multiprocessor count,
 * the largest grid a cooperative launch of that configuration may have. */
nbc_status_t nbc_occupancy_max_cooperative_blocks(nbc_function_t *function, int block_size,
                                                  size_t dynamic_smem, int *pblocks);

/* numba.cuda.random's generator states: n xoroshiro128+ states (two uint64 words each, s0
 * then s1, in states[2 * i], states[2 * i + 1]) initialised as numba's
 * init_xoroshiro128p_states_cpu does (SplitMix64 of the seed, jumped 2**64 steps
 * subsequence_start times, then each state 2**64 steps after the previous). Host only. */
void nbc_xoroshiro128p_init(uint64_t *states, size_t n, uint64_t seed,
                            uint64_t subsequence_start);

/* ---------------------------------------------------------------------------------------
 * compile(): Python source to PTX or LTO-IR. Touches no driver.
 * ------------------------------------------------------------------------------------- */
typedef enum nbc_abi { NBC_ABI_C = 0, NBC_ABI_NUMBA = 1 } nbc_abi_t;
/* NBC_OUTPUT_NVVM_IR: the NVVM IR the compiler hands libNVVM (text), not compiled; for
 * inspection (numba's inspect_llvm). */
typedef enum nbc_output {
  NBC_OUTPUT_PTX = 0,
  NBC_OUTPUT_LTOIR = 1,
  NBC_OUTPUT_NVVM_IR = 2
} nbc_output_t;

typedef struct nbc_compile_options {
  int debug;            /* full debug info, -g */
  int lineinfo;         /* line tables only */
  int device;           /* 1: device function; 0: kernel (Numba ABI only) */
  int fastmath;
  int cc_major;         /* 0: NBCUDA_DEFAULT_PTX_CC, NUMBA_CUDA_DEFAULT_PTX_CC or 7.5 */
  int cc_minor;
  char cc_arch;         /* 0, or 'a' / 'f': the arch- or family-specific target compute_XYa /
                           compute_XYf (numba's cc=(9, 0, "a")); it must be a cc libNVVM
                           supports as such, not a nearest one */
  int opt;              /* 1: -opt=3, 0: -opt=0 */
  nbc_abi_t abi;
  const char *abi_name; /* C ABI symbol name, [A-Za-z_][A-Za-z0-9_$]* (else
                           NBC_INVALID_ARGUMENT); NULL or "": the escaped function name */
  nbc_output_t output;
  int forceinline;      /* device functions, LTO-IR only: `alwaysinline` on the function, so
                           that a later LTO link inlines it (numba's forceinline) */
  int nlaunch_bounds;   /* kernels: how many of launch_bounds are given (0-3) */
  unsigned launch_bounds[3]; /* max threads per block, min blocks per SM, max blocks per
                                cluster (numba's launch_bounds; ignored for device functions) */
  int keep_ir;          /* keep the NVVM IR handed to libNVVM with the result
                           (nbc_compile_result_ir): numba's DUMP_LLVM without a second compile */
  double time_limit;    /* seconds libNVVM may run, 0: no limit. With a limit libNVVM runs in a
                           child process (fork) that is killed at the deadline, and the compile
                           fails with NBC_COMPILE_ERROR "compile exceeded the time limit of N s"
                           (the process, its memory and its threads all end with it) */
  size_t max_source_size; /* the largest source (bytes) compiled, else NBC_INVALID_ARGUMENT;
                             0: $NBCUDA_MAX_SOURCE_SIZE, else NBC_DEFAULT_MAX_SOURCE_SIZE */
} nbc_compile_options_t;

#define NBC_DEFAULT_MAX_SOURCE_SIZE ((size_t)16 << 20) /* 16 MiB */

/* Defaults of numba's compile(): device=1, opt=1, abi C, PTX, everything else 0. */
void nbc_compile_options_init(nbc_compile_options_t *options);
/* The source size limit the options give (max_source_size, else $NBCUDA_MAX_SOURCE_SIZE, a
 * count of bytes, else NBC_DEFAULT_MAX_SOURCE_SIZE); options may be NULL. */
size_t nbc_compile_max_source_size(const nbc_compile_options_t *options);
/* The compute capability a compile with cc 0.0 targets: NBCUDA_DEFAULT_PTX_CC,
 * NUMBA_CUDA_DEFAULT_PTX_CC or 7.5, never below libNVVM's lowest (numba's default PTX cc). */
void nbc_default_ptx_cc(int *pmajor, int *pminor);

/* The kernel language's names in the cuda module, as written after "cuda.": functions
 * ("grid", "shfl_sync", "atomic.add", "shared.array"), namespaces ("atomic", "threadIdx")
 * and values ("laneid", "threadIdx.x"). Bindings make host-side placeholders from them. */
typedef enum nbc_kernel_name_kind {
  NBC_KERNEL_FUNCTION,  /* called in a kernel: cuda.grid(1), cuda.atomic.add(a, i, v) */
  NBC_KERNEL_NAMESPACE, /* holds the names "<name>.<member>" that follow it in the list */
  NBC_KERNEL_VALUE      /* read in a kernel: cuda.laneid, cuda.threadIdx.x */
} nbc_kernel_name_kind_t;

typedef struct nbc_kernel_name {
  const char *name;
  nbc_kernel_name_kind_t kind;
} nbc_kernel_name_t;

/* Every name the compiler accepts after "cuda.", namespaces before their members; a static
 * list of *pcount entries. */
const nbc_kernel_name_t *nbc_kernel_names(size_t *pcount);

/* What a global name of the Python source means, as answered by a resolver. */
typedef enum nbc_global_kind {
  NBC_GLOBAL_UNDEFINED = 0, /* not found */
  NBC_GLOBAL_INT,           /* value.i */
  NBC_GLOBAL_FLOAT,         /* value.f */
  NBC_GLOBAL_BOOL,          /* value.i (0 or 1) */
  NBC_GLOBAL_MODULE_MATH,   /* the math module */
  NBC_GLOBAL_MODULE_CUDA,   /* nbcuda or numba.cuda */
  NBC_GLOBAL_MATH_FUNCTION, /* a function of math: name */
  NBC_GLOBAL_TYPE,          /* a numba type used as a conversion or dtype: name ("float32") */
  NBC_GLOBAL_FUNCTION,      /* a Python function: source, filename, first_line, name,
                               resolver for its own globals */
  NBC_GLOBAL_OTHER,         /* something the kernel language cannot use: name NULL, or its
                               class as Python prints it ("<class 'str'>"), for the error */
  NBC_GLOBAL_MODULE_NUMPY,  /* the numpy module: kernels use its dtypes (np.float32), the
                               constants pi, e, euler_gamma, inf, nan and common ufuncs on
                               scalars (np.sqrt, np.minimum...) */
  NBC_GLOBAL_NUMPY_FUNCTION, /* a numpy ufunc: name, numpy's __name__ ("sqrt", "absolute") */
  NBC_GLOBAL_CUDA_NAME,      /* a kernel-language name of the cuda module bound without it
                                (`from nbcuda import grid`, `add = cuda.atomic.add`): name,
                                as written after "cuda." ("grid", "atomic", "atomic.add");
                                the kernel uses it exactly as cuda.<name> */
  NBC_GLOBAL_ARRAY,          /* an array (numpy's) frozen into the code as constant memory,
                                as numba freezes global arrays (and cuda.const.array_like):
                                name, its dtype ("float32"); array_data, its elements,
                                array_bytes long, in array_layout's order ('F': Fortran,
                                else C); array_ndim and array_shape. The kernel sees a
                                read-only contiguous array of that layout */
  NBC_GLOBAL_DECLARED,       /* a device function implemented elsewhere and linked in
                                (numba's declare_device): name, its symbol; signature, its
                                numba signature ("float32(float32, int32)", scalars only).
                                Calls use the Numba ABI, `int name(RT *ret, args...)`, or
                                with declared_c_abi the C ABI, `RT name(args...)` */
  NBC_GLOBAL_MODULE_CMATH,   /* the cmath module: numba's complex functions (cmath.exp,
                                cmath.sqrt, cmath.phase, ...) */
  NBC_GLOBAL_CMATH_FUNCTION, /* a function of cmath: name ("exp") */
  NBC_GLOBAL_TUPLE,          /* a tuple of numbers, a constant as numba freezes global tuples:
                                tuple_count items in tuple_items, each INT, FLOAT, BOOL or
                                TUPLE (nested up to 8 deep) */
  NBC_GLOBAL_MODULE_NUMBA,   /* the numba module (or numba.types): kernels use its types
                                (numba.float32 as a dtype or a conversion) and numba.cuda */
  NBC_GLOBAL_MODULE_OPERATOR,   /* the operator module: operator.add(a, b) is a + b... */
  NBC_GLOBAL_OPERATOR_FUNCTION, /* a function of operator: name ("add", "and_", "getitem") */
  NBC_GLOBAL_DEVICE_ARRAY,      /* an array in device memory, which the code refers to by its
                                   address, as numba-cuda captures a global device array:
                                   value.i, the address; name, its dtype ("float32");
                                   array_ndim, array_shape and array_strides (bytes);
                                   array_layout 'C', 'F' or 'A'; array_readonly. The kernel
                                   sees the memory itself: writes land there, and it sees
                                   what the host copies in later */
  NBC_GLOBAL_ENUM,              /* an enum.Enum class (numba's EnumClass): name, the class's
                                   qualified name (its identity); tuple_count members,
                                   tuple_items their values (all INT or all FLOAT),
                                   enum_names their names (aliases included); enum_int for
                                   an IntEnum, whose members are their int values */
  NBC_GLOBAL_ENUM_MEMBER,       /* a member of such a class: the class as for ENUM, and
                                   value.i the member's index in it */
  NBC_GLOBAL_MODULE,            /* any other Python module (`import helpers`): name, its
                                   name. `helpers.x` in the code is then resolved as the
                                   global "helpers.x" (the resolver reads the attribute),
                                   so a module's functions, constants and arrays work as
                                   the function's own globals do */
  NBC_GLOBAL_NONE,              /* None, a constant as numba freezes it (`ALIGN = None`,
                                   then `cuda.local.array(4, f32, alignment=ALIGN)`) */
  NBC_GLOBAL_CFFI,              /* a cffi.FFI object: kernels call its from_buffer(array),
                                   a CPointer to the array's data (numba's cffi support) */
  NBC_GLOBAL_DATETIME           /* a numpy datetime64 or timedelta64 scalar, a constant as
                                   numba freezes it: name its type ("datetime64[D]",
                                   "timedelta64[s]"), value.i its int64 count (NaT INT64_MIN) */
} nbc_global_kind_t;

struct nbc_resolver;

typedef struct nbc_global {
  nbc_global_kind_t kind;
  union {
    int64_t i;
    double f;
  } value;
  /* Strings need only live until the resolver is called again; the compiler copies them. */
  const char *name;
  const char *source;
  const char *filename;
  int first_line;
  int col_offset;
  const struct nbc_resolver *resolver; /* for NBC_GLOBAL_FUNCTION; NULL: the same resolver */
  int forceinline; /* NBC_GLOBAL_FUNCTION: compile it `alwaysinline` (numba's
                      jit(device=True, forceinline=True)) */
  /* NBC_GLOBAL_ARRAY; like strings, they need only live until the resolver is called again */
  const void *array_data;
  size_t array_bytes;
  int array_ndim; /* 1..32 */
  const int64_t *array_shape;
  char array_layout; /* 'F' for Fortran order; 'C' or 0 for C order; DEVICE_ARRAY: 'A' too */
  const int64_t *array_strides; /* NBC_GLOBAL_DEVICE_ARRAY: bytes per step of each axis */
  int array_readonly;           /* NBC_GLOBAL_DEVICE_ARRAY: the kernel may not write it */
  const char *const *enum_names; /* NBC_GLOBAL_ENUM(_MEMBER): the members' names */
  int enum_int;                  /* NBC_GLOBAL_ENUM(_MEMBER): an IntEnum */
  /* NBC_GLOBAL_DECLARED: its signature. NBC_GLOBAL_FUNCTION: NULL, or the signatures it was
   * jitted for (`jit("int32(int32)", device=True)`; several joined by ';'): calls choose one
   * as numba does (equal argument types, else the first they convert to) and convert to it */
  const char *signature;
  /* NBC_GLOBAL_TUPLE (0..64 items); they need only live until the resolver is called again */
  int tuple_count;
  const struct nbc_global *tuple_items;
  /* NBC_GLOBAL_DECLARED: nonzero for the C ABI (numba's declare_device(abi="c")): called as
   * `RT name(args...)`, a void function for a void signature; 0: the Numba ABI */
  int declared_c_abi;
} nbc_global_t;

/* Fills *pglobal for `name` and returns 0, or returns nonzero when the name is unknown. */
typedef int (*nbc_resolve_fn)(void *data, const char *name, nbc_global_t *pglobal);

typedef struct nbc_resolver {
  nbc_resolve_fn resolve;
  void *data;
} nbc_resolver_t;

typedef struct nbc_source {
  const char *text;     /* the Python source holding the function (dedented) */
  size_t size;          /* its length; 0: strlen(text) */
  const char *filename; /* for diagnostics and line info; NULL: "<string>" */
  int first_line;       /* line number of text's first line in the file (1-based); 0: 1 */
  int col_offset;       /* columns removed by dedenting, added back in diagnostics */
} nbc_source_t;

typedef struct nbc_compile_result nbc_compile_result_t;

/* Compiles function `name` of the source for the signature (numba syntax) with the options
 * (NULL: defaults). resolver may be NULL: then globals resolve within the source itself
 * (module-level constants, functions and imports of math/cuda/numba/nbcuda) and the modules
 * of the program it imports, read from the files next to source->filename as Python 3 finds
 * absolute imports (`import helpers`: helpers.py or helpers/__init__.py). On failure the
 * diagnostic ("file:line:col: error: ...", the source line and a caret) is in
 * nbc_last_error(). Thread-safe. */
nbc_status_t nbc_compile(const nbc_source_t *source, const char *name, const char *signature,
                         const nbc_compile_options_t *options, const nbc_resolver_t *resolver,
                         nbc_compile_result_t **presult);
void nbc_compile_result_destroy(nbc_compile_result_t *result);
/* nbc_compile that also times each phase of the compiler and can stop after one, for tools
 * (the CLI's --verbose and --dump): trace->stop_after (in) NBC_DUMP_NONE compiles fully,
 * another value makes the result's code that phase's printed output (tokens, AST, types or
 * the NVVM IR); trace->ms (out) the milliseconds spent in each phase, named by
 * nbc_compile_phase_name. trace may be NULL (then this is nbc_compile). */
typedef enum nbc_dump {
  NBC_DUMP_NONE = 0,
  NBC_DUMP_TOKENS,
  NBC_DUMP_AST,
  NBC_DUMP_TYPES,
  NBC_DUMP_IR
} nbc_dump_t;
#define NBC_COMPILE_PHASE_COUNT 5
typedef struct nbc_compile_trace {
  nbc_dump_t stop_after;
  double ms[NBC_COMPILE_PHASE_COUNT];
} nbc_compile_trace_t;
nbc_status_t nbc_compile_trace(const nbc_source_t *source, const char *name,
                               const char *signature, const nbc_compile_options_t *options,
                               const nbc_resolver_t *resolver, nbc_compile_trace_t *trace,
                               nbc_compile_result_t **presult);
/* "load", "signature", "infer", "lower", "nvvm" for 0 .. NBC_COMPILE_PHASE_COUNT - 1, NULL
 * outside; static strings. */
const char *nbc_compile_phase_name(int phase);
/* PTX text (NUL-terminated; size excludes the NUL) or LTO-IR bytes. Live with the result. */
const char *nbc_compile_result_code(const nbc_compile_result_t *result, size_t *psize);
/* The NVVM IR libNVVM compiled into the code (NUL-terminated; size excludes the NUL), when the
 * options asked to keep it (keep_ir); else NULL and size 0. Lives with the result. */
const char *nbc_compile_result_ir(const nbc_compile_result_t *result, size_t *psize);
/* The return type as numba prints it: "float64", "void", ... */
const char *nbc_compile_result_return_type(const nbc_compile_result_t *result);
/* The symbol of the compiled function in the code (the kernel entry's name). */
const char *nbc_compile_result_symbol(const nbc_compile_result_t *result);
/* libNVVM's log (warnings), "" when empty. */
const char *nbc_compile_result_log(const nbc_compile_result_t *result);
/* 1 when the code synchronises the grid (cuda.cg.this_grid().sync()): it calls cudadevrt's
 * cudaCGGetIntrinsicHandle / cudaCGSynchronize, so it must be linked with libcudadevrt.a
 * (nbc_module_load_options_t.cudadevrt) and launched cooperatively (NBC_LAUNCH_COOPERATIVE). */
int nbc_compile_result_cooperative(const nbc_compile_result_t *result);
/* 1 when the code calls numba.cuda.fp16's functions: their wrappers (nbc_fp16_shim_source,
 * CUDA C++ over cuda_fp16.h) must be compiled with NVRTC and linked
 * (nbc_module_load_options_t.fp16). */
int nbc_compile_result_uses_fp16(const nbc_compile_result_t *result);
/* The CUDA C++ of every numba.cuda.fp16 wrapper, `extern "C" __device__ int
 * nbc_fp16_<function>(RT *ret, args...)` (Numba ABI; float16 as its 16 bits). Static; NULL
 * only when out of memory. */
const char *nbc_fp16_shim_source(void);
/* debug=True kernels (numba's): a thread that raises an exception (raise, a failed assert,
 * in the kernel or a device function it calls) ends, and the first one to do so in a launch
 * records its raise site's code in the global i32 `<symbol>__errcode__` (an atomic
 * compare-and-swap from 0) and its position in `<symbol>__tid{x,y,z}__` and
 * `__ctaid{x,y,z}__`, which the host reads after the launch (nbc_debug_exception_read) to
 * raise what numba raises. Device functions and kernels compiled without debug end the thread
 * and record nothing (count 0). Sites are numbered from 1 in the order they are lowered. */
typedef struct nbc_raise_site {
  int code;              /* the value stored in <symbol>__errcode__ */
  const char *exception; /* the class as written ("ValueError", "errors.Bad"), "AssertionError"
                            for assert, NULL for a bare `raise` */
  const char *args;      /* the constant arguments as a Python tuple literal ("('no', 3)", "()"),
                            NULL for a class raised without a call */
  const char *function;  /* the Python function holding the statement; NULL (and filename
                            NULL, line 0) for an operation's error, a zero divisor's
                            ZeroDivisionError, which numba reports without a location */
  const char *filename;  /* its file, as the source named it */
  int line;              /* the statement's line in that file */
} nbc_raise_site_t;
/* The compiled function's local variables as typed (its parameters first), as numba's
 * typemap of the function gives them (NBC_OUTPUT_NVVM_IR results have them too): the count
 * (0 for a result made by nbc_compile_result_create), and variable i's name, with numba's
 * text of its type in *ptype (NULL for i out of range). Live with the result. */
int nbc_compile_result_variable_count(const nbc_compile_result_t *result);
const char *nbc_compile_result_variable(const nbc_compile_result_t *result, int i,
                                        const char **ptype);
int nbc_compile_result_raise_count(const nbc_compile_result_t *result);
/* Site i (0-based; its code is i + 1), or NULL out of range. Lives with the result. */
const nbc_raise_site_t *nbc_compile_result_raise_site(const nbc_compile_result_t *result, int i);
/* A result holding code compiled earlier (a cache's copy): code and size as
 * nbc_compile_result_code gave them, the symbol and return type as their accessors did; the
 * log is empty. Everything is copied. */
nbc_status_t nbc_compile_result_create(const char *code, size_t size, const char *symbol,
                                       const char *return_type,
                                       nbc_compile_result_t **presult);

/* The library kernels: nbcuda's own device code as kernel-language source (the .py files of
 * src/library: the transpose, cuda.reduce's kernel, nbcuda.random's device functions, cmath,
 * and the templates of vectorize's, guvectorize's and numpy's generated functions), embedded
 * at build time and compiled like any kernel. By file name without ".py" ("transpose"): the text,
 * NUL-terminated and static, its length in *psize when psize is not NULL; NULL for an unknown
 * name. */
const char *nbc_library_kernel_source(const char *name, size_t *psize);
/* A template among them with each placeholder @KEY@ (capitals, digits, '_') replaced by its
 * value: pairs holds KEY, value, KEY, value, ... and a NULL. *ptext is malloc'd (free() it).
 * An unknown name or a placeholder without a value is NBC_INVALID_ARGUMENT naming it. */
nbc_status_t nbc_library_kernel_fill(const char *name, const char *const *pairs, char **ptext);

/* ---------------------------------------------------------------------------------------
 * Signatures and kernel parameters (for bindings that launch compiled kernels).
 *
 * A parsed signature says how each argument reaches a kernel compiled with the Numba ABI:
 * a scalar in its own width (booleans as one byte, complex as two floats), an array
 * flattened to meminfo, parent, nitems, itemsize, data, shape[ndim], strides[ndim] (strides
 * in bytes). Offsets are those of the packed buffer nbc_launch_packed takes (natural
 * alignment), so a binding parses once, then packs each launch with the functions below.
 * ------------------------------------------------------------------------------------- */
typedef struct nbc_signature nbc_signature_t;

typedef enum nbc_param_kind {
  NBC_PARAM_SCALAR = 0, /* bool, integers, floats, complex */
  NBC_PARAM_ARRAY,      /* an array of scalars */
  NBC_PARAM_OTHER,      /* other types (tuples holding records...): nbc_signature_pack_*
                           refuses them */
  NBC_PARAM_RECORD,     /* a record (numpy structured scalar): a pointer to its bytes */
  NBC_PARAM_TUPLE,      /* a tuple of scalars and arrays (or of such tuples), flattened item
                           by item as numba passes it: items describes each, packed on its
                           own */
  NBC_PARAM_POINTER,    /* numba's CPointer(scalar): an address (8 bytes); dtype_name,
                           dtype_kind and itemsize describe what it points to */
  NBC_PARAM_NONE        /* None ("none"; "void" as an argument is numba's same NoneType):
                           no bytes, as numba passes nothing for it; the kernel's
                           `p is None` is a constant */
} nbc_param_kind_t;

typedef struct nbc_param_info {
  nbc_param_kind_t kind;
  const char *type_name;  /* numba's printed type: "float32", "array(float32, 2d, C)" */
  const char *dtype_name; /* the scalar or element type: "float32"; "" for OTHER */
  char dtype_kind;        /* numpy's kind: 'b' bool, 'i', 'u', 'f', 'c', 'V' record, 'M'
                             datetime64, 'm' timedelta64 (dtype_name says the unit: an array
                             of another unit packs alike, the caller checks); 0 for OTHER */
  int itemsize;           /* bytes of the scalar, record or element */
  int ndim;               /* arrays */
  char layout;            /* arrays: 'C', 'F' or 'A' */
  int readonly;           /* arrays: read-only (numba's readonly array): the kernel never
                             writes it */
  int unaligned;          /* arrays: of a packed record (numpy's align=False; numba's
                             unaligned array) */
  size_t offset;          /* byte offset of the parameter in the packed buffer */
  size_t size;            /* bytes the (flattened) parameter occupies */
  int nitems;             /* TUPLE: its items, described in items (offsets in the buffer) */
  const struct nbc_param_info *items;
} nbc_param_info_t;

/* Parses a signature in numba's syntax ("void(float32[:], int64)", "(float64,)"). A bad
 * signature is NBC_SIGNATURE_ERROR with the column in nbc_last_error(). */
nbc_status_t nbc_signature_parse(const char *text, nbc_signature_t **psig);
/* nbc_signature_parse for a signature typed from a call's arguments (a function compiled at
 * its first call, numba's lazy jit), the i-th passed for the parameter names[i] (nnames of
 * them; NULL and 0 for a signature the user wrote): an error in an argument's type names the
 * parameter and says what is wrong ("the value passed for 't' (argument 1) cannot be typed: a
 * tuple of more than 64 items ..."), not a column of a text the caller never wrote. kernel:
 * the flattened parameters must also fit the driver's limit for kernels of the default
 * target (32,764 bytes from compute capability 7.0), as nbc_compile checks a kernel's. */
nbc_status_t nbc_signature_parse_args(const char *text, const char *const *names, int nnames,
                                      int kernel, nbc_signature_t **psig);
void nbc_signature_destroy(nbc_signature_t *sig);
int nbc_signature_nargs(const nbc_signature_t *sig);
/* numba's overload resolution: the index of the candidate whose parameters the argument
 * types of `actual` convert to with the best rating (fewest unsafe, then safe, then promoting
 * conversions; the first of equal rating; an array only towards layout A), or -1 when none
 * accepts them all. The compiler resolves typing overloads with the same rating. */
int nbc_signature_best_match(const nbc_signature_t *actual,
                             const nbc_signature_t *const *candidates, int ncandidates);
/* The same, with in *psecond (when not NULL) the first other candidate rated as well as the
 * one returned (-1 when none): numba's dispatcher refuses such an ambiguous call. */
int nbc_signature_best_matches(const nbc_signature_t *actual,
                               const nbc_signature_t *const *candidates, int ncandidates,
                               int *psecond);
/* The declared return type as numba prints it, NULL when only arguments were given. Lives
 * with the signature. */
const char *nbc_signature_return_type(const nbc_signature_t *sig);
/* The signature in canonical text form, e.g. "void(array(float32, 1d, A))" is printed as
 * "void(float32[:])". Lives with the signature. */
const char *nbc_signature_text(const nbc_signature_t *sig);
/* Parameter index (0-based); NULL when out of range. Lives with the signature. */
const nbc_param_info_t *nbc_signature_param(const nbc_signature_t *sig, int index);
/* Bytes of the packed parameter buffer of all arguments: exactly the end of the last one
 * (no padding after it), the size CU_LAUNCH_PARAM_BUFFER_SIZE must give. */
size_t nbc_signature_params_size(const nbc_signature_t *sig);
/* Whether an array of ndim extents shape and byte strides, elements of itemsize bytes, is
 * contiguous in order 'C' (the last axis densest) or 'F' (the first); an array with an empty
 * axis is both, whatever its strides (numpy's rule). The check the packing below makes. */
int nbc_array_is_contiguous(char order, int ndim, const int64_t *shape,
                            const int64_t *strides, int64_t itemsize);
/* Writes array argument `index` into params: its data pointer, shape and strides (bytes;
 * NULL: contiguous in the layout's order, C for 'A'). The element (dtype_kind, itemsize),
 * ndim and, for layouts C and F, the contiguity must match the signature, else
 * NBC_INVALID_ARGUMENT saying what was expected and what was given. Integers of the
 * signature's width are accepted whatever their signedness (int32 data for uint32[:], read as
 * the signature says, as numba passes an array to a kernel of one signature); elements of
 * another kind or width are refused. */
nbc_status_t nbc_signature_pack_array(const nbc_signature_t *sig, int index, void *params,
                                      nbc_devptr_t data, char dtype_kind, int itemsize,
                                      int ndim, const int64_t *shape, const int64_t *strides);
/* The same for one scalar described by p: a SCALAR parameter or a scalar item of a TUPLE
 * parameter (nbc_signature_param(...)->items[k], recursively); p->type_name names it in
 * errors. */
nbc_status_t nbc_param_pack_int(const nbc_param_info_t *p, void *params, int64_t value);
nbc_status_t nbc_param_pack_float(const nbc_param_info_t *p, void *params, double value);
nbc_status_t nbc_param_pack_complex(const nbc_param_info_t *p, void *params, double re,
                                    double im);
/* The same for an array described by p: an array item of a TUPLE parameter (numba's tuples
 * of arrays: each item flattened as an array argument is). */
nbc_status_t nbc_param_pack_array(const nbc_param_info_t *p, void *params, nbc_devptr_t data,
                                  char dtype_kind, int itemsize, int ndim,
                                  const int64_t *shape, const int64_t *strides);
/* Writes pointer argument `index` (numba's CPointer), or the pointer described by p: the
 * address as given (numba passes the int it is given). */
nbc_status_t nbc_signature_pack_pointer(const nbc_signature_t *sig, int index, void *params,
                                        uint64_t address);
nbc_status_t nbc_param_pack_pointer(const nbc_param_info_t *p, void *params, uint64_t address);
/* Writes record argument `index`: the device address of a copy of its itemsize bytes, which
 * must be the record's size (numba copies a record argument to the device, passes the
 * pointer, and copies it back after the launch). */
nbc_status_t nbc_signature_pack_record(const nbc_signature_t *sig, int index, void *params,
                                       nbc_devptr_t data, int itemsize);
/* Writes scalar argument `index` converted to its declared type as numba converts Python
 * values: integers wrap to the width (a float argument to an integer parameter truncates),
 * bool is 0/1, floats round to float32/float16, complex takes (re, im); a complex value for
 * an integer, float or boolean parameter is NBC_INVALID_ARGUMENT (numba has no conversion
 * from complex to a real type). A datetime64 or timedelta64 parameter takes its int64
 * count through nbc_signature_pack_int only. */
nbc_status_t nbc_signature_pack_int(const nbc_signature_t *sig, int index, void *params,
                                    int64_t value);
nbc_status_t nbc_signature_pack_float(const nbc_signature_t *sig, int index, void *params,
                                      double value);
nbc_status_t nbc_signature_pack_complex(const nbc_signature_t *sig, int index, void *params,
                                        double re, double im);

/* ---------------------------------------------------------------------------------------
 * Kernels. A Python kernel compiled once, loaded once per context, launched.
 *
 * An nbc_kernel_t owns a kernel compiled with the Numba ABI (its compile result and the
 * parameter layout of its signature) and the module its code became in each context it ran
 * in: loaded at the first nbc_kernel_function or nbc_kernel_launch in a context, reused by
 * every later one there, unloaded by nbc_kernel_destroy. A context reset unloads it with the
 * context's other modules, and the next use there loads it again. One thread uses a kernel
 * at a time (the caller serialises, as the Python binding's GIL does): a launch in a context
 * the kernel is loaded in takes no lock and, for parameters of up to 1,024 bytes, allocates
 * nothing. examples/kernel_from_source.c is a whole program.
 * ------------------------------------------------------------------------------------- */
typedef struct nbc_kernel nbc_kernel_t;

/* Makes the module of kernel's code in the current context, for a caller that links code of
 * its own at each load (the Python binding reads its link files then): *pmodule becomes the
 * kernel's, unloaded with it. Called only where the kernel is not loaded yet. */
typedef nbc_status_t (*nbc_kernel_load_fn)(void *data, const nbc_kernel_t *kernel,
                                           nbc_module_t **pmodule);

typedef struct nbc_kernel_options {
  /* applied at each load: max_registers caps the registers per thread (numba's
   * max_registers); cudadevrt and fp16 link libcudadevrt.a and the fp16 wrappers also when
   * the compile result does not ask for them (nbc_compile_result_cooperative / _uses_fp16
   * are honoured whatever these say) */
  nbc_module_load_options_t module;
  /* nonzero: NBC_FUNCTION_ATTR_PREFERRED_SHARED_MEMORY_CARVEOUT is set to carveout (-1 to
   * 100, numba's shared_memory_carveout) at each load */
  int set_carveout;
  int carveout;
  /* images linked with the code at each load (nbc_module_link_ex; CUDA C++ ones compiled by
   * NVRTC there, searching module.nvrtc_search_paths): copied at create, with the paths */
  const nbc_image_t *links;
  int nlinks;
  /* NULL: the kernel loads its code itself; else load(load_data, kernel, &module) does */
  nbc_kernel_load_fn load;
  void *load_data;
} nbc_kernel_options_t;

/* Compiles function `name` of source as a kernel for signature (numba syntax, a void
 * return) as nbc_compile does with compile (NULL: its defaults; device is taken as 0 and
 * the ABI as Numba's, whatever compile says) and resolver, and keeps the result with the
 * load options (NULL: none). Nothing is loaded yet. The compiler's diagnostic is in
 * nbc_last_error() on failure. */
nbc_status_t nbc_kernel_create(const nbc_source_t *source, const char *name,
                               const char *signature, const nbc_compile_options_t *compile,
                               const nbc_resolver_t *resolver,
                               const nbc_kernel_options_t *options, nbc_kernel_t **pkernel);
/* A kernel of code compiled before (a disk cache's copy, a result compiled with options of
 * the caller's): result, a kernel compiled with the Numba ABI for signature, becomes the
 * kernel's on success (destroyed with it); on failure it stays the caller's. */
nbc_status_t nbc_kernel_create_from_result(nbc_compile_result_t *result, const char *signature,
                                           const nbc_kernel_options_t *options,
                                           nbc_kernel_t **pkernel);
/* Unloads the kernel's modules (those of contexts reset since are gone already) and frees
 * it with its compile result. NULL is accepted. */
void nbc_kernel_destroy(nbc_kernel_t *kernel);
/* The compile result and the parsed signature: live with the kernel. */
const nbc_compile_result_t *nbc_kernel_result(const nbc_kernel_t *kernel);
const nbc_signature_t *nbc_kernel_signature(const nbc_kernel_t *kernel);
/* The kernel's function in the current context (created as by nbc_current_context(-1) if
 * none), loading its code there the first time: owned by the kernel, valid until it is
 * destroyed or the context is reset. */
nbc_status_t nbc_kernel_function(nbc_kernel_t *kernel, nbc_function_t **pfunction);
/* How many times the kernel's code has been loaded since it was created: one per context it
 * ran in (again after a reset), however many launches there were. */
unsigned long nbc_kernel_load_count(const nbc_kernel_t *kernel);

/* One argument of a launch, as the parameter it is passed for takes it (numba's flattened
 * array ABI is made from it: nbc_signature_pack_*). Make one with the nbc_arg_* functions. */
typedef enum nbc_arg_kind {
  NBC_ARG_INT = 1, /* i: an integer or bool parameter (wrapped to its width), a float or
                      complex one (converted), a datetime64/timedelta64 one (its count) */
  NBC_ARG_FLOAT,   /* f: a float, complex (f + 0j), integer (truncated) or bool parameter */
  NBC_ARG_COMPLEX, /* f + im j: a complex parameter only */
  NBC_ARG_ARRAY,   /* an array parameter: data, dtype_kind, itemsize, ndim, shape, strides */
  NBC_ARG_RECORD,  /* a record parameter: data, the device address of its itemsize bytes */
  NBC_ARG_POINTER, /* a CPointer parameter: address */
  NBC_ARG_TUPLE,   /* a tuple parameter: nitems items, each an argument for its item */
  NBC_ARG_NONE     /* a None parameter: nothing is passed */
} nbc_arg_kind_t;

typedef struct nbc_arg {
  nbc_arg_kind_t kind;
  int64_t i;
  double f, im;
  uint64_t address;
  nbc_devptr_t data;      /* device address of the first element (records: of the bytes) */
  char dtype_kind;        /* numpy's kind of the elements: 'b', 'i', 'u', 'f', 'c', 'M', 'm' */
  int itemsize;           /* bytes per element (records: of the record) */
  int ndim;
  const int64_t *shape;   /* ndim extents; live until the launch returns */
  const int64_t *strides; /* ndim byte strides, or NULL: contiguous in the parameter's
                             layout order (C for 'A') */
  int nitems;
  const struct nbc_arg *items;
} nbc_arg_t;

/* An argument of each kind, the fields its kind does not use zero. Arrays: shape and strides
 * are the caller's (not copied), read when the launch packs them; a tuple's items too. */
nbc_arg_t nbc_arg_int(int64_t value);
nbc_arg_t nbc_arg_float(double value);
nbc_arg_t nbc_arg_complex(double re, double im);
nbc_arg_t nbc_arg_array(nbc_devptr_t data, char dtype_kind, int itemsize, int ndim,
                        const int64_t *shape, const int64_t *strides);
nbc_arg_t nbc_arg_record(nbc_devptr_t data, int itemsize);
nbc_arg_t nbc_arg_pointer(uint64_t address);
nbc_arg_t nbc_arg_tuple(const nbc_arg_t *items, int nitems);
nbc_arg_t nbc_arg_none(void);

/* Packs args (nargs of them, one per parameter of the kernel's signature) into numba's
 * flattened parameter buffer and launches the kernel's function in the current context
 * (loaded there first if need be) on stream (NULL: the default stream), cooperatively when
 * its code synchronises the grid. A wrong number of arguments, or an argument of a kind its
 * parameter does not take (an array where a scalar is expected, an array of another dtype,
 * rank or layout), is NBC_INVALID_ARGUMENT naming the argument, what its parameter expects
 * and what was given; nothing is launched then. A debug=True kernel's exception is read
 * with nbc_debug_exception_read (the function from nbc_kernel_function). */
nbc_status_t nbc_kernel_launch(nbc_kernel_t *kernel, const unsigned grid[3],
                               const unsigned block[3], unsigned shared_bytes,
                               nbc_stream_t *stream, const nbc_arg_t *args, int nargs);
/* Only the packing: args into params (nbc_signature_params_size(nbc_kernel_signature(k))
 * bytes), checked as nbc_kernel_launch checks them. */
nbc_status_t nbc_kernel_pack(const nbc_kernel_t *kernel, const nbc_arg_t *args, int nargs,
                             void *params);

/* ---------------------------------------------------------------------------------------
 * The disk cache. A kernel's compile result kept in a file, as numba's cache=True keeps it,
 * so that another process skips the compiler: one file per (function, signature, compile
 * options) in the first of $NBCUDA_CACHE_DIR (else $NUMBA_CACHE_DIR)/<hash of the source's
 * directory>/, the source's __pycache__/ when it can be written, and
 * ${XDG_CACHE_HOME:-~/.cache}/nbcuda/<hash of the source's directory>/. An entry is current
 * while the source file keeps its modification time and size and the key is the same; a
 * stale, truncated or foreign file is a miss. Only the source file is watched, as in numba.
 *
 *   nbc_cache_entry_create(&key, &e);  nbc_cache_entry_load(e, &result);
 *   if (!result) { compile; nbc_cache_entry_store(e, result); }  nbc_cache_entry_destroy(e);
 * ------------------------------------------------------------------------------------- */
typedef struct nbc_cache_key {
  const char *file;       /* the kernel's source file (made absolute); its stamp is checked */
  const char *qualname;   /* the function's qualified name (Python's __qualname__) */
  long line;              /* the function's first line */
  const char *signature;  /* as compiled (numba syntax) */
  const nbc_compile_options_t *options; /* as compiled; NULL: nbc_compile_options_init's */
  const char *build_file; /* NULL, or a file whose size and modification time join the key
                             (the Python extension: a rebuilt nbcuda reads no older code) */
  const char *extra;      /* NULL, or text the code also depends on (the binding: a digest
                             of a closure's captured values) */
} nbc_cache_key_t;

typedef struct nbc_cache_entry nbc_cache_entry_t;

/* The entry of key: where its file is and what it must hold. The cache directory is made if
 * need be: NBC_CACHE_ERROR when none of the three can be written, NBC_INVALID_ARGUMENT when
 * the source file does not exist (a function without one, from exec or the REPL, cannot be
 * cached). Nothing is read yet. */
nbc_status_t nbc_cache_entry_create(const nbc_cache_key_t *key, nbc_cache_entry_t **pentry);
/* NULL is accepted. */
void nbc_cache_entry_destroy(nbc_cache_entry_t *entry);
/* The entry's file: <stem>.<qualname>-<line>.<hash of the key>.nbcuda; lives with it. */
const char *nbc_cache_entry_path(const nbc_cache_entry_t *entry);
/* The result the entry's file holds (release with nbc_compile_result_destroy) when it is
 * current; NBC_OK with *presult NULL on a miss (no file, a stale or foreign one). */
nbc_status_t nbc_cache_entry_load(const nbc_cache_entry_t *entry,
                                  nbc_compile_result_t **presult);
/* Writes result as the entry's file (to a temporary file renamed over it, so a reader never
 * sees half a file); NBC_CACHE_ERROR naming the file when it cannot be written. */
nbc_status_t nbc_cache_entry_store(const nbc_cache_entry_t *entry,
                                   const nbc_compile_result_t *result);
/* The directory the entries of kernels in source file `file` go to, made if need be, into
 * buf (size bytes); errors as nbc_cache_entry_create's. */
nbc_status_t nbc_cache_dir(const char *file, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif /* NBCUDA_H */
