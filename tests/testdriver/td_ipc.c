/* td_ipc.c — CUDA IPC in the test driver: cuIpcGetMemHandle, cuIpcOpenMemHandle,
 * cuIpcCloseMemHandle and cuMemGetAddressRange.
 *
 * The fixture's memory is host RAM of one process, and a child forked after cuInit cannot
 * use the driver (as with the real one), so memory is never really shared between
 * processes. What is modelled is the contract nbcuda relies on:
 *   - a handle names an allocation: 8 magic bytes, the exporting pid and the allocation's
 *     fake device address (never reused, so a freed allocation's handle stays dead);
 *     cuIpcGetMemHandle wants the allocation's base (an interior pointer or managed memory
 *     is CUDA_ERROR_INVALID_VALUE);
 *   - opening a handle in the process that made it is CUDA_ERROR_INVALID_CONTEXT, as on the
 *     real driver, unless NBCUDA_TESTDRIVER_IPC_SAME_PROCESS=1 (read at each open), which
 *     lets tests open their own handles as if they came from another process;
 *   - a handle of another process cannot be mapped here (CUDA_ERROR_MAP_FAILED), nor one
 *     whose allocation was freed; bytes that are not a handle are CUDA_ERROR_INVALID_VALUE;
 *   - an open maps the allocation at a new fake address range in the current context, the
 *     same address again for a second open in that context (the driver counts opens), and
 *     copies through the mapping reach the allocation's memory; close takes the mapping's
 *     base in the context that opened it; destroying or resetting that context unmaps it.
 * cuMemGetAddressRange answers for device and managed allocations and for mappings
 * (CUDA_ERROR_NOT_FOUND otherwise).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "td.h"

static const char magic[8] = {'n', 'b', 'c', 'T', 'D', 'i', 'p', 'c'};

typedef struct td_mapping {
  CUdeviceptr va;     /* where the allocation is mapped in ctx */
  CUdeviceptr source; /* the exported allocation's base */
  size_t size;
  int refs; /* opens not yet closed */
  struct CUctx_st *ctx;
  struct td_mapping *next;
} td_mapping;

static td_mapping *mappings;

/* The handle's fields, in the order they are stored after the magic. */
typedef struct handle_fields {
  int64_t pid;
  uint64_t source;
} handle_fields;

unsigned char *td__ipc_resolve(CUdeviceptr dptr, size_t bytes) {
  for (td_mapping *m = mappings; m; m = m->next)
    if (dptr >= m->va && dptr - m->va <= m->size && bytes <= m->size - (dptr - m->va))
      return td__mem_resolve(m->source + (dptr - m->va), bytes);
  return NULL;
}

void td__ipc_release(struct CUctx_st *ctx) {
  for (td_mapping **p = &mappings; *p;) {
    td_mapping *m = *p;
    if (m->ctx == ctx) {
      *p = m->next;
      free(m);
    } else {
      p = &m->next;
    }
  }
}

__attribute__((visibility("default"))) int tdrv_live_ipc_mappings(void) {
  pthread_mutex_lock(&td__lock);
  int n = 0;
  for (td_mapping *m = mappings; m; m = m->next)
    n++;
  pthread_mutex_unlock(&td__lock);
  return n;
}

CUresult CUDAAPI cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr) {
  TD_ENTER("cuMemGetAddressRange", "cuMemGetAddressRange_v2");
  pthread_mutex_lock(&td__lock);
  struct CUctx_st *ctx;
  CUresult r = td__current(&ctx);
  CUdeviceptr base = 0;
  size_t size = 0;
  int managed;
  if (r == CUDA_SUCCESS && !td__mem_range(dptr, &base, &size, &managed)) {
    r = CUDA_ERROR_NOT_FOUND;
    for (td_mapping *m = mappings; m; m = m->next)
      if (m->ctx == ctx && dptr >= m->va && dptr - m->va < m->size) {
        base = m->va;
        size = m->size;
        r = CUDA_SUCCESS;
      }
  }
  pthread_mutex_unlock(&td__lock);
  if (r == CUDA_SUCCESS) {
    if (pbase) *pbase = base; /* either output may be NULL, as with the real driver */
    if (psize) *psize = size;
  }
  return r;
}

CUresult CUDAAPI cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr) {
  TD_ENTER("cuIpcGetMemHandle", "cuIpcGetMemHandle");
  if (!pHandle) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&td__lock);
  struct CUctx_st *ctx;
  CUresult r = td__current(&ctx);
  CUdeviceptr base;
  size_t size;
  int managed;
  if (r == CUDA_SUCCESS &&
      (!td__mem_range(dptr, &base, &size, &managed) || base != dptr || managed))
    r = CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_unlock(&td__lock);
  if (r != CUDA_SUCCESS) return r;
  handle_fields f = {(int64_t)getpid(), (uint64_t)dptr};
  memset(pHandle, 0, sizeof *pHandle);
  memcpy(pHandle->reserved, magic, sizeof magic);
  memcpy(pHandle->reserved + sizeof magic, &f, sizeof f);
  return CUDA_SUCCESS;
}

/* Why this process may not map the handle, or CUDA_SUCCESS with its fields. */
static CUresult read_handle(const CUipcMemHandle *handle, handle_fields *f) {
  if (memcmp(handle->reserved, magic, sizeof magic) != 0) return CUDA_ERROR_INVALID_VALUE;
  memcpy(f, handle->reserved + sizeof magic, sizeof *f);
  if (f->pid != (int64_t)getpid()) return CUDA_ERROR_MAP_FAILED; /* not reachable here */
  const char *knob = getenv("NBCUDA_TESTDRIVER_IPC_SAME_PROCESS");
  if (!knob || strcmp(knob, "1") != 0) return CUDA_ERROR_INVALID_CONTEXT; /* the exporter */
  return CUDA_SUCCESS;
}

static CUresult ipc_open(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int flags) {
  if (!pdptr || (flags & ~(unsigned)CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS))
    return CUDA_ERROR_INVALID_VALUE;
  handle_fields f;
  pthread_mutex_lock(&td__lock);
  struct CUctx_st *ctx;
  CUresult r = td__current(&ctx);
  if (r == CUDA_SUCCESS) r = read_handle(&handle, &f);
  CUdeviceptr base = 0;
  size_t size = 0;
  int managed = 0;
  if (r == CUDA_SUCCESS &&
      (!td__mem_range((CUdeviceptr)f.source, &base, &size, &managed) || base != f.source))
    r = CUDA_ERROR_MAP_FAILED; /* freed by the exporter */
  td_mapping *m = NULL;
  if (r == CUDA_SUCCESS) {
    for (m = mappings; m; m = m->next)
      if (m->ctx == ctx && m->source == base) break;
    if (m) {
      m->refs++;
    } else if ((m = calloc(1, sizeof *m)) == NULL) {
      r = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
      m->va = td__mem_reserve(size);
      m->source = base;
      m->size = size;
      m->refs = 1;
      m->ctx = ctx;
      m->next = mappings;
      mappings = m;
    }
  }
  if (r == CUDA_SUCCESS) *pdptr = m->va;
  pthread_mutex_unlock(&td__lock);
  return r;
}

CUresult CUDAAPI cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle,
                                    unsigned int flags) {
  TD_ENTER("cuIpcOpenMemHandle", "cuIpcOpenMemHandle");
  return ipc_open(pdptr, handle, flags);
}

CUresult CUDAAPI cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle,
                                       unsigned int flags) {
  TD_ENTER("cuIpcOpenMemHandle", "cuIpcOpenMemHandle_v2");
  return ipc_open(pdptr, handle, flags);
}

CUresult CUDAAPI cuIpcCloseMemHandle(CUdeviceptr dptr) {
  TD_ENTER("cuIpcCloseMemHandle", "cuIpcCloseMemHandle");
  pthread_mutex_lock(&td__lock);
  struct CUctx_st *ctx;
  CUresult r = td__current(&ctx);
  if (r == CUDA_SUCCESS) {
    r = CUDA_ERROR_INVALID_VALUE; /* not a mapping's base in this context */
    for (td_mapping **p = &mappings; *p; p = &(*p)->next) {
      td_mapping *m = *p;
      if (m->ctx != ctx || m->va != dptr) continue;
      if (--m->refs == 0) {
        *p = m->next;
        free(m);
      }
      r = CUDA_SUCCESS;
      break;
    }
  }
  pthread_mutex_unlock(&td__lock);
  return r;
}
