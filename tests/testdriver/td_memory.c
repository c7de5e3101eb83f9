/* td_memory.c — device memory of the test driver: allocations live in host RAM behind
 * fake device addresses, and every copy checks its device range.
 *
 * Addresses: each allocation gets a CUdeviceptr from a counter that starts at
 * 0x7f0000000000 (where the real driver's addresses live) and only grows; sizes are
 * rounded to 512 bytes (2 MiB for large allocations), like the real allocator's
 * granularity. Addresses are never reused, so a copy to freed memory is always caught
 * (CUDA_ERROR_INVALID_VALUE, as the real driver answers for an unknown pointer), and a
 * CUdeviceptr never equals a host pointer, so code that dereferences one on the host
 * crashes in tests instead of silently working. Managed memory (cuMemAllocManaged) is the
 * exception: its device address is its host address, as on the real driver.
 *
 * Accounting: cuMemGetInfo reports total minus the rounded sizes allocated on the
 * current context's device; an allocation that does not fit is CUDA_ERROR_OUT_OF_MEMORY.
 *
 * Synchronous copies (cuMemcpyHtoD & co, cuMemsetD8) first wait for the context's
 * default stream and its blocking streams, the ordering the legacy default stream gives;
 * the _ptds variants wait for the default stream only.
 */
#include <stdlib.h>
#include <string.h>

#include "td.h"

typedef struct td_alloc {
  CUdeviceptr va;
  size_t size;
  size_t charged; /* rounded size counted against the device */
  unsigned char *host;
  struct CUctx_st *ctx;
  struct td_alloc *next;
} td_alloc;

static td_alloc *allocs;
static CUdeviceptr next_va = 0x7f0000000000ull;

int td__live_allocations(void) {
  int n = 0;
  for (td_alloc *a = allocs; a; a = a->next)
    n++;
  return n;
}

unsigned char *td__mem_resolve(CUdeviceptr dptr, size_t bytes) {
  for (td_alloc *a = allocs; a; a = a->next)
    if (dptr >= a->va && dptr - a->va <= a->size && bytes <= a->size - (dptr - a->va))
      return a->host + (dptr - a->va);
  unsigned char *host = td__hostmem_resolve(dptr, bytes);
  if (!host) host = td__module_global_resolve(dptr, bytes);
  return host ? host : td__ipc_resolve(dptr, bytes);
}

unsigned char *td__mem_lookup(CUdeviceptr dptr, size_t bytes, CUdeviceptr *pbase, size_t *plen) {
  for (td_alloc *a = allocs; a; a = a->next)
    if (dptr >= a->va && dptr - a->va <= a->size && bytes <= a->size - (dptr - a->va)) {
      *pbase = a->va;
      *plen = a->size;
      return a->host + (dptr - a->va);
    }
  unsigned char *host = td__mem_resolve(dptr, bytes);
  *pbase = dptr;
  *plen = host ? bytes : 0;
  return host;
}

int td__mem_range(CUdeviceptr dptr, CUdeviceptr *pbase, size_t *psize, int *pmanaged) {
  for (td_alloc *a = allocs; a; a = a->next)
    if (dptr >= a->va && dptr - a->va < a->size) {
      *pbase = a->va;
      *psize = a->size;
      *pmanaged = a->charged == 0; /* managed memory is not charged to the device */
      return 1;
    }
  return 0;
}

CUdeviceptr td__mem_reserve(size_t bytes) {
  const size_t granule = 512;
  next_va = (next_va + granule - 1) / granule * granule;
  CUdeviceptr va = next_va;
  next_va += bytes ? bytes : 1;
  return va;
}

static void alloc_free(td_alloc *a) {
  td__devices[a->ctx->device].used_mem -= a->charged;
  free(a->host);
  free(a);
}

void td__mem_release(struct CUctx_st *ctx) {
  for (td_alloc **p = &allocs; *p;) {
    td_alloc *a = *p;
    if (a->ctx == ctx) {
      *p = a->next;
      alloc_free(a);
    } else {
      p = &a->next;
    }
  }
}

CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize) {
  TD_ENTER("cuMemAlloc", "cuMemAlloc_v2");
  if (!dptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
  size_t granule = bytesize >= ((size_t)2 << 20) ? ((size_t)2 << 20) : 512;
  if (bytesize > SIZE_MAX - granule) return CUDA_ERROR_OUT_OF_MEMORY;
  size_t charged = (bytesize + granule - 1) / granule * granule;
  pthread_mutex_lock(&td__lock);
  struct CUctx_st *ctx;
  CUresult r = td__current(&ctx);
  td_alloc *a = NULL;
  if (r == CUDA_SUCCESS) {
    td_device *d = &td__devices[ctx->device];
    if (d->used_mem > d->total_mem || charged > d->total_mem - d->used_mem)
      r = CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (r == CUDA_SUCCESS) {
    a = calloc(1, sizeof *a);
    if (a) a->host = malloc(bytesize);
    if (!a || !a->host) {
      free(a);
      r = CUDA_ERROR_OUT_OF_MEMORY;
    }
  }
  if (r == CUDA_SUCCESS) {
    next_va = (next_va + granule - 1) / granule * granule;
    a->va = next_va;
    next_va += charged;
    a->size = bytesize;
    a->charged = charged;
    a->ctx = ctx;
    a->next = allocs;
    allocs = a;
    td__devices[ctx->device].used_mem += charged;
    *dptr = a->va;
  }
  pthread_mutex_unlock(&td__lock);
  return r;
}

/* Managed memory is malloc'd memory whose device address is its host address (the program
 * reads and writes it directly); it is listed with the device allocations, so cuMemFree,
 * copies and a context's release treat it alike, and is not counted against the device's
 * memory (the real driver migrates it on demand). */
CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags) {
  TD_ENTER("cuMemAllocManaged", "cuMemAllocManaged");
  if (!dptr || bytesize == 0 || (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
    return CUDA_ERROR_INVALID_VALUE;
  td_alloc *a = calloc(1, sizeof *a);
  if (a) a->host = malloc(bytesize);
  if (!a || !a->host) {
    free(a);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  pthread_mutex_lock(&td__lock);
  struct CUctx_st *ctx;
  CUresult r = td__current(&ctx);
  if (r == CUDA_SUCCESS) {
    a->va = (CUdeviceptr)(uintptr_t)a->host;
    a->size = bytesize;
    a->ctx = ctx;
    a->next = allocs;
    allocs = a;
    *dptr = a->va;
  }
  pthread_mutex_unlock(&td__lock);
  if (r != CUDA_SUCCESS) {
    free(a->host);
    free(a);
  }
  return r;
}

CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr) {
  TD_ENTER("cuMemFree", "cuMemFree_v2");
  if (dptr == 0) return CUDA_SUCCESS; /* like free(NULL), as the real driver */
  pthread_mutex_lock(&td__lock);
  /* The real cuMemFree waits for the device: work still queued on the context's streams may
   * use the memory (a kernel launched just before its argument's array dies). */
  for (td_alloc *a = allocs; a; a = a->next)
    if (a->va == dptr) {
      td__ctx_wait_streams(a->ctx, 1);
      break;
    }
  CUresult r = CUDA_ERROR_INVALID_VALUE; /* unknown, freed or interior pointer */
  for (td_alloc **p = &allocs; *p; p = &(*p)->next) {
    if ((*p)->va == dptr) {
      td_alloc *a = *p;
      *p = a->next;
      alloc_free(a);
      r = CUDA_SUCCESS;
      break;
    }
  }
  pthread_mutex_unlock(&td__lock);
  return r;
}

CUresult CUDAAPI cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes) {
  TD_ENTER("cuMemGetInfo", "cuMemGetInfo_v2");
  if (!free_bytes || !total_bytes) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&td__lock);
  struct CUctx_st *ctx;
  CUresult r = td__current(&ctx);
  if (r == CUDA_SUCCESS) {
    td_device *d = &td__devices[ctx->device];
    *total_bytes = d->total_mem;
    *free_bytes = d->used_mem < d->total_mem ? d->total_mem - d->used_mem : 0;
  }
  pthread_mutex_unlock(&td__lock);
  return r;
}

/* ---- synchronous copies --------------------------------------------------------------- */

enum { DIR_HTOD, DIR_DTOH, DIR_DTOD, DIR_SET };

/* One synchronous operation: needs a current context, waits for the streams the legacy
 * (or per-thread) default stream would wait for, validates the ranges, then copies. */
static CUresult sync_op(int dir, CUdeviceptr dst, CUdeviceptr src, void *hdst, const void *hsrc,
                        unsigned char value, size_t n, int per_thread) {
  if (n == 0) return CUDA_SUCCESS; /* even with a bad pointer, as the real driver */
  if ((dir == DIR_HTOD && !hsrc) || (dir == DIR_DTOH && !hdst)) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&td__lock);
  struct CUctx_st *ctx;
  CUresult r = td__current(&ctx);
  if (r == CUDA_SUCCESS && !per_thread) r = td__ctx_wait_streams(ctx, 0);
  if (r == CUDA_SUCCESS && per_thread && ctx->default_stream)
    r = td__stream_wait_idle(ctx->default_stream);
  if (r == CUDA_SUCCESS) {
    unsigned char *d = dir == DIR_DTOH ? NULL : td__mem_resolve(dst, n);
    unsigned char *s = dir == DIR_DTOH || dir == DIR_DTOD ? td__mem_resolve(src, n) : NULL;
    if ((dir != DIR_DTOH && !d) || ((dir == DIR_DTOH || dir == DIR_DTOD) && !s)) {
      r = CUDA_ERROR_INVALID_VALUE;
    } else if (dir == DIR_HTOD) {
      memmove(d, hsrc, n);
    } else if (dir == DIR_DTOH) {
      memmove(hdst, s, n);
    } else if (dir == DIR_DTOD) {
      memmove(d, s, n);
    } else {
      memset(d, value, n);
    }
  }
  pthread_mutex_unlock(&td__lock);
  return r;
}

CUresult CUDAAPI cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) {
  TD_ENTER("cuMemcpyHtoD", "cuMemcpyHtoD_v2");
  return sync_op(DIR_HTOD, dst, 0, NULL, src, 0, n, 0);
}

CUresult CUDAAPI cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void *src, size_t n) {
  TD_ENTER("cuMemcpyHtoD", "cuMemcpyHtoD_v2_ptds");
  return sync_op(DIR_HTOD, dst, 0, NULL, src, 0, n, 1);
}

CUresult CUDAAPI cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) {
  TD_ENTER("cuMemcpyDtoH", "cuMemcpyDtoH_v2");
  return sync_op(DIR_DTOH, 0, src, dst, NULL, 0, n, 0);
}

CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void *dst, CUdeviceptr src, size_t n) {
  TD_ENTER("cuMemcpyDtoH", "cuMemcpyDtoH_v2_ptds");
  return sync_op(DIR_DTOH, 0, src, dst, NULL, 0, n, 1);
}

CUresult CUDAAPI cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  TD_ENTER("cuMemcpyDtoD", "cuMemcpyDtoD_v2");
  return sync_op(DIR_DTOD, dst, src, NULL, NULL, 0, n, 0);
}

CUresult CUDAAPI cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  TD_ENTER("cuMemcpyDtoD", "cuMemcpyDtoD_v2_ptds");
  return sync_op(DIR_DTOD, dst, src, NULL, NULL, 0, n, 1);
}

CUresult CUDAAPI cuMemsetD8_v2(CUdeviceptr dst, unsigned char uc, size_t n) {
  TD_ENTER("cuMemsetD8", "cuMemsetD8_v2");
  return sync_op(DIR_SET, dst, 0, NULL, NULL, uc, n, 0);
}

CUresult CUDAAPI cuMemsetD8_v2_ptds(CUdeviceptr dst, unsigned char uc, size_t n) {
  TD_ENTER("cuMemsetD8", "cuMemsetD8_v2_ptds");
  return sync_op(DIR_SET, dst, 0, NULL, NULL, uc, n, 1);
}

/* Peer copies name both contexts; each range must lie in memory of its context's device. */
static CUresult memcpy_peer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx,
                            size_t n) {
  pthread_mutex_lock(&td__lock);
  CUresult r = td__ctx_check(dctx);
  if (r == CUDA_SUCCESS) r = td__ctx_check(sctx);
  if (r == CUDA_SUCCESS) r = td__ctx_wait_streams(sctx, 0);
  if (r == CUDA_SUCCESS) r = td__ctx_wait_streams(dctx, 0);
  if (r == CUDA_SUCCESS && n > 0) {
    unsigned char *d = td__mem_resolve(dst, n), *s = td__mem_resolve(src, n);
    if (!d || !s)
      r = CUDA_ERROR_INVALID_VALUE;
    else
      memmove(d, s, n);
  }
  pthread_mutex_unlock(&td__lock);
  return r;
}

CUresult CUDAAPI cuMemcpyPeer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx,
                              size_t n) {
  TD_ENTER("cuMemcpyPeer", "cuMemcpyPeer");
  return memcpy_peer(dst, dctx, src, sctx, n);
}

CUresult CUDAAPI cuMemcpyPeer_ptds(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src,
                                   CUcontext sctx, size_t n) {
  TD_ENTER("cuMemcpyPeer", "cuMemcpyPeer_ptds");
  return memcpy_peer(dst, dctx, src, sctx, n);
}

/* ---- asynchronous copies -------------------------------------------------------------- */

/* The range is checked now (the real driver rejects an unknown pointer at the call) and
 * again when the copy runs, in case the memory was freed in between. Page-locked host memory
 * is copied when the stream gets there; pageable memory as the real driver handles it: the
 * bytes of a host-to-device copy are taken at the call (its staging buffer), and a
 * device-to-host copy returns only once it is done. */
static CUresult async_copy(int dir, CUdeviceptr dptr, void *host, const void *chost, size_t n,
                           CUstream h) {
  if (!(dir == DIR_HTOD ? chost : host)) return CUDA_ERROR_INVALID_VALUE;
  td_op *op = calloc(1, sizeof *op);
  if (!op) return CUDA_ERROR_OUT_OF_MEMORY;
  op->kind = dir == DIR_HTOD ? TD_OP_HTOD : TD_OP_DTOH;
  op->dptr = dptr;
  op->host = host;
  op->chost = chost;
  op->bytes = n;
  pthread_mutex_lock(&td__lock);
  int pageable = n > 0 && !td__host_is_locked(dir == DIR_HTOD ? chost : host, n);
  struct CUstream_st *s;
  CUresult r = td__stream_resolve(h, &s);
  if (r == CUDA_SUCCESS && n > 0 && !td__mem_resolve(dptr, n)) r = CUDA_ERROR_INVALID_VALUE;
  if (r == CUDA_SUCCESS && pageable && dir == DIR_HTOD) {
    op->staged = malloc(n);
    if (op->staged) {
      memcpy(op->staged, chost, n);
      op->chost = op->staged;
    } else {
      r = CUDA_ERROR_OUT_OF_MEMORY;
    }
  }
  if (r == CUDA_SUCCESS) {
    r = td__stream_enqueue(s, op);
    if (r == CUDA_SUCCESS && pageable && dir == DIR_DTOH) r = td__stream_wait_idle(s);
  } else {
    free(op->staged);
    free(op);
  }
  pthread_mutex_unlock(&td__lock);
  return r;
}

CUresult CUDAAPI cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream h) {
  TD_ENTER("cuMemcpyHtoDAsync", "cuMemcpyHtoDAsync_v2");
  return async_copy(DIR_HTOD, dst, NULL, src, n, h);
}

CUresult CUDAAPI cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src, size_t n,
                                           CUstream h) {
  TD_ENTER("cuMemcpyHtoDAsync", "cuMemcpyHtoDAsync_v2_ptsz");
  return async_copy(DIR_HTOD, dst, NULL, src, n, h);
}

CUresult CUDAAPI cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream h) {
  TD_ENTER("cuMemcpyDtoHAsync", "cuMemcpyDtoHAsync_v2");
  return async_copy(DIR_DTOH, src, dst, NULL, n, h);
}

CUresult CUDAAPI cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n, CUstream h) {
  TD_ENTER("cuMemcpyDtoHAsync", "cuMemcpyDtoHAsync_v2_ptsz");
  return async_copy(DIR_DTOH, src, dst, NULL, n, h);
}

/* cuMemsetD8Async: the range is checked at the call and again when the stream gets there. */
static CUresult async_set(CUdeviceptr dptr, unsigned char value, size_t n, CUstream h) {
  td_op *op = calloc(1, sizeof *op);
  if (!op) return CUDA_ERROR_OUT_OF_MEMORY;
  op->kind = TD_OP_SET;
  op->dptr = dptr;
  op->value = value;
  op->bytes = n;
  pthread_mutex_lock(&td__lock);
  struct CUstream_st *s;
  CUresult r = td__stream_resolve(h, &s);
  if (r == CUDA_SUCCESS && n > 0 && !td__mem_resolve(dptr, n)) r = CUDA_ERROR_INVALID_VALUE;
  if (r == CUDA_SUCCESS)
    r = td__stream_enqueue(s, op);
  else
    free(op);
  pthread_mutex_unlock(&td__lock);
  return r;
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dst, unsigned char uc, size_t n, CUstream h) {
  TD_ENTER("cuMemsetD8Async", "cuMemsetD8Async");
  return async_set(dst, uc, n, h);
}

CUresult CUDAAPI cuMemsetD8Async_ptsz(CUdeviceptr dst, unsigned char uc, size_t n, CUstream h) {
  TD_ENTER("cuMemsetD8Async", "cuMemsetD8Async_ptsz");
  return async_set(dst, uc, n, h);
}
