/* td_procaddr.c — the test driver's entry-point table and cuGetProcAddress.
 *
 * Each row is one version of one entry point: the base name callers ask for, the CUDA
 * version that introduced this version, the exported symbol and its function, and, for
 * calls that take a stream or run on the default stream, the per-thread-default-stream
 * variant (_ptds/_ptsz, which exist from CUDA 7.0).
 *
 * Resolution follows the real driver 13000, as observed on an H200 (h200_probe.json):
 *   - the row with the highest version <= cudaVersion wins (cuEventElapsedTime gives v1
 *     for 12000 and _v2 from 12080; cuCtxGetDevice gives _v2 — a different signature —
 *     from 13000);
 *   - flags 0 (DEFAULT) and 1 (LEGACY_STREAM) give the legacy variant, 2
 *     (PER_THREAD_DEFAULT_STREAM) the per-thread one where it exists (and nothing below
 *     cudaVersion 7000);
 *   - an unknown name and a too-small cudaVersion both return CUDA_SUCCESS with *pfn =
 *     NULL and symbolStatus SYMBOL_NOT_FOUND or VERSION_NOT_SUFFICIENT: the real driver
 *     does not return an error code here, so callers must check pfn/symbolStatus.
 * Versions older than the oldest row (e.g. cuMemAlloc v1 for cudaVersion < 3020) are not
 * implemented and answer VERSION_NOT_SUFFICIENT.
 */
#include <string.h>

#include "td.h"

typedef void (*td_fn)(void);

typedef struct proc_row {
  const char *base;
  int version;
  const char *symbol;
  td_fn fn;
  const char *pt_symbol; /* NULL when there is no per-thread variant */
  td_fn pt_fn;
} proc_row;

#define ROW(base, ver, sym)                                                                    \
  { base, ver, #sym, (td_fn)sym, NULL, NULL }
#define ROWPT(base, ver, sym, ptsym)                                                           \
  { base, ver, #sym, (td_fn)sym, #ptsym, (td_fn)ptsym }

static const proc_row rows[] = {
    ROW("cuInit", 2000, cuInit),
    ROW("cuDriverGetVersion", 2020, cuDriverGetVersion),
    ROW("cuGetErrorName", 6000, cuGetErrorName),
    ROW("cuGetErrorString", 6000, cuGetErrorString),
    ROW("cuGetProcAddress", 11030, cuGetProcAddress),
    ROW("cuGetProcAddress", 12000, cuGetProcAddress_v2),
    ROW("cuDeviceGetCount", 2000, cuDeviceGetCount),
    ROW("cuDeviceGet", 2000, cuDeviceGet),
    ROW("cuDeviceGetName", 2000, cuDeviceGetName),
    ROW("cuDeviceGetUuid", 9020, cuDeviceGetUuid),
    ROW("cuDeviceGetUuid", 11040, cuDeviceGetUuid_v2),
    ROW("cuDeviceGetAttribute", 2000, cuDeviceGetAttribute),
    ROW("cuDeviceTotalMem", 3020, cuDeviceTotalMem_v2),
    ROW("cuDeviceGetPCIBusId", 4010, cuDeviceGetPCIBusId),
    ROW("cuDeviceCanAccessPeer", 4000, cuDeviceCanAccessPeer),
    ROW("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain),
    ROW("cuDevicePrimaryCtxRelease", 7000, cuDevicePrimaryCtxRelease),
    ROW("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2),
    ROW("cuDevicePrimaryCtxReset", 7000, cuDevicePrimaryCtxReset),
    ROW("cuDevicePrimaryCtxReset", 11000, cuDevicePrimaryCtxReset_v2),
    ROW("cuDevicePrimaryCtxGetState", 7000, cuDevicePrimaryCtxGetState),
    ROW("cuCtxCreate", 3020, cuCtxCreate_v2),
    ROW("cuCtxCreate", 11040, cuCtxCreate_v3),
    ROW("cuCtxCreate", 12050, cuCtxCreate_v4),
    ROW("cuCtxDestroy", 4000, cuCtxDestroy_v2),
    ROW("cuCtxGetCurrent", 4000, cuCtxGetCurrent),
    ROW("cuCtxSetCurrent", 4000, cuCtxSetCurrent),
    ROW("cuCtxPushCurrent", 4000, cuCtxPushCurrent_v2),
    ROW("cuCtxPopCurrent", 4000, cuCtxPopCurrent_v2),
    ROW("cuCtxGetDevice", 2000, cuCtxGetDevice),
    ROW("cuCtxGetDevice", 13000, cuCtxGetDevice_v2),
    ROW("cuCtxSynchronize", 2000, cuCtxSynchronize),
    ROW("cuCtxSynchronize", 13000, cuCtxSynchronize_v2),
    ROW("cuCtxEnablePeerAccess", 4000, cuCtxEnablePeerAccess),
    ROW("cuMemGetInfo", 3020, cuMemGetInfo_v2),
    ROW("cuProfilerStart", 4000, cuProfilerStart),
    ROW("cuProfilerStop", 4000, cuProfilerStop),
    ROW("cuEventCreate", 2000, cuEventCreate),
    ROW("cuEventDestroy", 4000, cuEventDestroy_v2),
    ROWPT("cuEventRecord", 2000, cuEventRecord, cuEventRecord_ptsz),
    ROW("cuEventQuery", 2000, cuEventQuery),
    ROW("cuEventSynchronize", 2000, cuEventSynchronize),
    ROW("cuEventElapsedTime", 2000, cuEventElapsedTime),
    ROW("cuEventElapsedTime", 12080, cuEventElapsedTime_v2),
    ROW("cuStreamCreate", 2000, cuStreamCreate),
    ROW("cuStreamDestroy", 4000, cuStreamDestroy_v2),
    ROWPT("cuStreamSynchronize", 2000, cuStreamSynchronize, cuStreamSynchronize_ptsz),
    ROWPT("cuStreamQuery", 2000, cuStreamQuery, cuStreamQuery_ptsz),
    ROWPT("cuStreamAddCallback", 5000, cuStreamAddCallback, cuStreamAddCallback_ptsz),
    ROWPT("cuStreamWaitEvent", 3020, cuStreamWaitEvent, cuStreamWaitEvent_ptsz),
    ROWPT("cuLaunchHostFunc", 10000, cuLaunchHostFunc, cuLaunchHostFunc_ptsz),
    ROW("cuMemAlloc", 3020, cuMemAlloc_v2),
    ROW("cuMemFree", 3020, cuMemFree_v2),
    ROWPT("cuMemcpyHtoD", 3020, cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds),
    ROWPT("cuMemcpyDtoH", 3020, cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds),
    ROWPT("cuMemcpyDtoD", 3020, cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds),
    ROWPT("cuMemcpyHtoDAsync", 3020, cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz),
    ROWPT("cuMemcpyDtoHAsync", 3020, cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz),
    ROWPT("cuMemcpyPeer", 4000, cuMemcpyPeer, cuMemcpyPeer_ptds),
    ROWPT("cuMemsetD8", 3020, cuMemsetD8_v2, cuMemsetD8_v2_ptds),
    ROWPT("cuMemsetD8Async", 3020, cuMemsetD8Async, cuMemsetD8Async_ptsz),
    ROW("cuMemAllocManaged", 6000, cuMemAllocManaged),
    ROW("cuMemGetAddressRange", 3020, cuMemGetAddressRange_v2),
    ROW("cuIpcGetMemHandle", 4010, cuIpcGetMemHandle),
    ROW("cuIpcOpenMemHandle", 4010, cuIpcOpenMemHandle),
    ROW("cuIpcOpenMemHandle", 11000, cuIpcOpenMemHandle_v2),
    ROW("cuIpcCloseMemHandle", 4010, cuIpcCloseMemHandle),
    ROW("cuMemHostAlloc", 2020, cuMemHostAlloc),
    ROW("cuMemFreeHost", 2000, cuMemFreeHost),
    ROW("cuMemHostRegister", 4000, cuMemHostRegister),
    ROW("cuMemHostRegister", 6050, cuMemHostRegister_v2),
    ROW("cuMemHostUnregister", 4000, cuMemHostUnregister),
    ROW("cuMemHostGetDevicePointer", 3020, cuMemHostGetDevicePointer_v2),
    ROW("cuModuleLoadData", 2000, cuModuleLoadData),
    ROW("cuModuleLoadDataEx", 2010, cuModuleLoadDataEx),
    ROW("cuModuleUnload", 2000, cuModuleUnload),
    ROW("cuModuleGetFunction", 2000, cuModuleGetFunction),
    ROW("cuModuleGetGlobal", 3020, cuModuleGetGlobal_v2),
    ROW("cuFuncGetAttribute", 2020, cuFuncGetAttribute),
    ROW("cuFuncSetAttribute", 9000, cuFuncSetAttribute),
    ROW("cuOccupancyMaxActiveBlocksPerMultiprocessor", 6050,
        cuOccupancyMaxActiveBlocksPerMultiprocessor),
    ROWPT("cuLaunchKernel", 4000, cuLaunchKernel, cuLaunchKernel_ptsz),
    ROWPT("cuLaunchKernelEx", 11060, cuLaunchKernelEx, cuLaunchKernelEx_ptsz),
};

#define NROWS (sizeof rows / sizeof rows[0])
#define PER_THREAD_FIRST_VERSION 7000

int td__symbol_known(const char *symbol) {
  for (size_t i = 0; i < NROWS; i++)
    if (strcmp(rows[i].symbol, symbol) == 0 ||
        (rows[i].pt_symbol && strcmp(rows[i].pt_symbol, symbol) == 0))
      return 1;
  return 0;
}

static CUresult resolve(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                        CUdriverProcAddressQueryResult *status) {
  if (!symbol || !pfn) return CUDA_ERROR_INVALID_VALUE;
  const cuuint64_t known =
      CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  if (flags & ~known) return CUDA_ERROR_INVALID_VALUE;
  int per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  const proc_row *best = NULL;
  int exists = 0;
  for (size_t i = 0; i < NROWS; i++) {
    if (strcmp(rows[i].base, symbol) != 0) continue;
    exists = 1;
    if (rows[i].version <= cudaVersion && (!best || rows[i].version > best->version))
      best = &rows[i];
  }
  td_fn fn = NULL;
  if (best) {
    fn = best->fn;
    if (per_thread && best->pt_fn)
      fn = cudaVersion >= PER_THREAD_FIRST_VERSION ? best->pt_fn : NULL;
  }
  /* Function pointers travel through void * in this API; memcpy keeps ISO C happy. */
  memset(pfn, 0, sizeof *pfn);
  if (fn) memcpy(pfn, &fn, sizeof fn);
  if (status)
    *status = fn       ? CU_GET_PROC_ADDRESS_SUCCESS
              : exists ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                       : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                     cuuint64_t flags, CUdriverProcAddressQueryResult *status) {
  CUresult r = td__enter("cuGetProcAddress", "cuGetProcAddress_v2", TD_BEFORE_INIT_OK);
  if (r != CUDA_SUCCESS) return r;
  return resolve(symbol, pfn, cudaVersion, flags, status);
}

CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                  cuuint64_t flags) {
  CUresult r = td__enter("cuGetProcAddress", "cuGetProcAddress", TD_BEFORE_INIT_OK);
  if (r != CUDA_SUCCESS) return r;
  return resolve(symbol, pfn, cudaVersion, flags, NULL);
}
