/* memory.c — device memory: allocation, copies host<->device (sync and on a stream), memset.
 *
 * Allocations are made in the current context (one is created as nbc_current_context(-1)
 * does). nbcuda remembers which context each allocation belongs to, in a table keyed by the
 * device address (ptrtable.c), so that nbc_context_reset can free what nbcuda allocated in a
 * context (numba's Context.reset drops its allocations) and nbc_mem_free of an address nbcuda
 * does not know is still passed to the driver, which judges it.
 *
 * nbc_mem_free inside a deferred-cleanup scope of the allocation's context only queues the free
 * (deferred.c); nbc_context_reset performs the queue before freeing what is left. Elsewhere a
 * freed block of up to 4 MiB is kept for the next allocation of its size (reuse.c): its record
 * stays in the table, tagged NBC__MEM_TAG_KEPT (a reset frees it with the rest, and a second
 * free of it is refused as the driver refuses one); managed memory and memory exported through
 * IPC are marked NBC__MEM_FREE_AT_ONCE and go to the driver.
 *
 * Copies take device addresses, not contexts: they call the driver directly, and only when the
 * driver says CUDA_ERROR_INVALID_CONTEXT on a thread with no context at all is a context
 * created and the call retried — the hot path costs one indirect call.
 */
#include <stdlib.h>

#include "host/host.h"

static nbc__ptrtable_t table; /* zeroed: empty and unlocked */

nbc_status_t nbc__memory_track(nbc_devptr_t ptr, size_t bytes, nbc_context_t *context,
                               unsigned flags) {
  nbc__ptr_record_t r = {.address = (uintptr_t)ptr,
                         .flags = flags,
                         .lifetime =
                             atomic_load_explicit(&context->lifetime, memory_order_relaxed),
                         .context = context,
                         .bytes = bytes};
  if (nbc__ptrtable_add(&table, &r) < 0)
    return nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  return NBC_OK;
}

/* The context of a tracked allocation, or NULL. */
static nbc_context_t *owner_of(CUdeviceptr ptr) {
  nbc__ptr_record_t r;
  return nbc__ptrtable_find(&table, (uintptr_t)ptr, 0, &r) ? r.context : NULL;
}

/* cuMemFree of a kept block (its record goes): NBC_OK, also when a reset took it first. When
 * the driver refuses, the record stays (a reset frees the block, a second free is refused). */
static nbc_status_t free_kept(CUdeviceptr ptr) {
  nbc__ptr_record_t r;
  if (!nbc__ptrtable_take(&table, (uintptr_t)ptr, NBC__MEM_TAG_KEPT, &r)) return NBC_OK;
  CUresult res = nbc__cu.cuMemFree(ptr);
  if (res == NBC__CUDA_SUCCESS) return NBC_OK;
  (void)nbc__ptrtable_add(&table, &r); /* the spare take just left */
  return nbc__driver_failf("cuMemFree", res, " (address 0x%llx, a freed block kept for reuse)",
                           (unsigned long long)ptr);
}

/* free_kept of n blocks: the first failure's status. */
static nbc_status_t free_kept_blocks(const CUdeviceptr *blocks, unsigned n) {
  nbc_status_t st = NBC_OK;
  for (unsigned i = 0; i < n; i++) {
    nbc_status_t s = free_kept(blocks[i]);
    if (st == NBC_OK) st = s;
  }
  return st;
}

/* Frees the context's kept blocks: the first failure's status. *pany: whether there were. */
static nbc_status_t release_kept(nbc_context_t *context, int *pany) {
  CUdeviceptr kept[NBC__REUSE_MAX];
  unsigned n = nbc__reuse_drain(context, kept);
  if (pany) *pany = n > 0;
  return free_kept_blocks(kept, n);
}

int nbc__memory_release_kept(nbc_context_t *context) {
  int any;
  (void)release_kept(context, &any);
  return any;
}

nbc_status_t nbc_context_release_freed(nbc_context_t *context) {
  if (!context)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_context_release_freed: context is NULL");
  NBC__ENSURE_DRIVER();
  return release_kept(context, NULL);
}

nbc_status_t nbc_context_freed_kept(nbc_context_t *context, size_t *pblocks, size_t *pbytes) {
  if (!context)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_context_freed_kept: context is NULL");
  size_t blocks, bytes;
  nbc__reuse_count(context, &blocks, &bytes);
  if (pblocks) *pblocks = blocks;
  if (pbytes) *pbytes = bytes;
  return NBC_OK;
}

void nbc__memory_exported(nbc_devptr_t base) {
  (void)nbc__ptrtable_set_flags(&table, (uintptr_t)base, 0, NBC__MEM_FREE_AT_ONCE);
}

void nbc__memory_release_context(nbc_context_t *context) {
  nbc__defer_flush(context); /* the queued frees, while their addresses are still ours */
  CUdeviceptr kept[NBC__REUSE_MAX]; /* the kept blocks' records go with the rest below */
  (void)nbc__reuse_drain(context, kept);
  nbc__staging_release(context);
  nbc__ptr_record_t *mine = nbc__ptrtable_detach_context(&table, context);
  while (mine) {
    nbc__ptr_record_t *next = mine->next;
    /* memory that holds the context outlives the reset: freed by its nbc_mem_free only */
    if (!(mine->flags & NBC__MEM_HOLDS_CONTEXT) || nbc__ptrtable_add(&table, mine) < 0)
      nbc__cu.cuMemFree((CUdeviceptr)mine->address);
    free(mine);
    mine = next;
  }
}

/* cuMemFree of managed memory that holds its primary context (record r, taken from the
 * table), in that context (the thread may have none, or another, current after a reset);
 * then the hold ends, which destroys the context when it was the last user. */
static nbc_status_t free_holding(const nbc__ptr_record_t *r) {
  nbc_device_t *device = r->context->device;
  CUcontext held = nbc__context_held(device), popped = NULL;
  int pushed = held && nbc__cu.cuCtxPushCurrent(held) == NBC__CUDA_SUCCESS;
  CUresult res = nbc__cu.cuMemFree((CUdeviceptr)r->address);
  if (pushed) nbc__cu.cuCtxPopCurrent(&popped);
  if (res != NBC__CUDA_SUCCESS) {
    (void)nbc__ptrtable_add(&table, r); /* still allocated: a later free may succeed */
    return nbc__driver_failf("cuMemFree", res, " (managed memory at 0x%llx)",
                             (unsigned long long)r->address);
  }
  nbc__context_unhold(device);
  return NBC_OK;
}

/* A kept block of bytes for context, tracked again: 1 with *pptr, or 0 (none, or the
 * synchronization its reuse needs failed: the block is freed, and the driver's allocation
 * will say why). */
static int reuse(nbc_context_t *context, size_t bytes, CUdeviceptr *pptr) {
  CUdeviceptr ptr;
  int idle;
  nbc__ptr_record_t r;
  if (!nbc__reuse_take(context, bytes, &ptr, &idle)) return 0;
  if (!nbc__ptrtable_retag(&table, (uintptr_t)ptr, NBC__MEM_TAG_KEPT, 0, 0, &r))
    return 0; /* a reset freed it meanwhile */
  /* first what its free would have waited for (reuse.c) */
  if (idle || nbc__context_sync(context) == NBC__CUDA_SUCCESS) {
    *pptr = ptr;
    return 1;
  }
  if (nbc__ptrtable_take(&table, (uintptr_t)ptr, 0, &r) &&
      nbc__cu.cuMemFree(ptr) != NBC__CUDA_SUCCESS)
    (void)nbc__ptrtable_add(&table, &r); /* the driver still holds it: a reset frees it */
  return 0;
}

/* cuMemAlloc in the current context, which goes to *pcontext when that is not NULL. */
static nbc_status_t alloc_current(size_t bytes, nbc_devptr_t *pptr, nbc_context_t **pcontext) {
  nbc_context_t *context;
  nbc_status_t st = nbc__context_ensure(&context);
  if (st != NBC_OK) return st;
  if (pcontext) *pcontext = context;
  if (!bytes && pcontext) return NBC_OK;
  CUdeviceptr ptr = 0;
  if (reuse(context, bytes, &ptr)) {
    *pptr = ptr;
    return NBC_OK;
  }
  CUresult res = nbc__cu.cuMemAlloc(&ptr, bytes);
  if (res == NBC__CUDA_ERROR_OUT_OF_MEMORY && nbc__memory_release_kept(context))
    res = nbc__cu.cuMemAlloc(&ptr, bytes);
  if (res != NBC__CUDA_SUCCESS)
    return nbc__driver_failf("cuMemAlloc", res, " (allocating %zu bytes on device %d)", bytes,
                             context->device->id);
  st = nbc__memory_track(ptr, bytes, context, 0);
  if (st != NBC_OK) {
    nbc__cu.cuMemFree(ptr);
    return st;
  }
  *pptr = ptr;
  return NBC_OK;
}

nbc_status_t nbc_mem_alloc(size_t bytes, nbc_devptr_t *pptr) {
  if (!pptr) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_mem_alloc: pptr is NULL");
  *pptr = 0;
  return alloc_current(bytes, pptr, NULL);
}

nbc_status_t nbc_mem_alloc_current(size_t bytes, nbc_devptr_t *pptr, nbc_context_t **pcontext) {
  if (!pptr || !pcontext)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_mem_alloc_current: %s is NULL",
                          pptr ? "pcontext" : "pptr");
  *pptr = 0;
  *pcontext = NULL;
  return alloc_current(bytes, pptr, pcontext);
}

/* Keeps the block of record r (retagged kept) for reuse: 1, with *pst the status of freeing
 * the kept blocks it pushed out; or 0, retagged back, for the caller to free. */
static int keep(const nbc__ptr_record_t *r, nbc_status_t *pst) {
  CUdeviceptr evicted[NBC__REUSE_MAX];
  unsigned n;
  *pst = NBC_OK;
  if (nbc__reuse_keep(r->context, r->lifetime, (CUdeviceptr)r->address, r->bytes, evicted,
                      &n)) {
    *pst = free_kept_blocks(evicted, n);
    return 1;
  }
  nbc__ptr_record_t back;
  (void)nbc__ptrtable_retag(&table, r->address, NBC__MEM_TAG_KEPT, 0, 0, &back);
  return 0;
}

/* Frees ptr now (to the blocks kept for reuse when it may be); untracked addresses go to the
 * driver only when pass_unknown is set, and a kept one is a double free. */
static nbc_status_t free_now(nbc_devptr_t ptr, int pass_unknown) {
  nbc__ptr_record_t r;
  int found = nbc__ptrtable_retag(&table, (uintptr_t)ptr, 0, NBC__MEM_TAG_KEPT,
                                  NBC__MEM_FREE_AT_ONCE, &r);
  nbc_status_t st;
  if (found > 0 && keep(&r, &st)) return st;
  if (!found) {
    if (nbc__ptrtable_find(&table, (uintptr_t)ptr, NBC__MEM_TAG_KEPT, &r))
      return nbc__driver_failf("cuMemFree", NBC__CUDA_ERROR_INVALID_VALUE,
                               " (address 0x%llx was freed already)", (unsigned long long)ptr);
    if (!pass_unknown) return NBC_OK;
  }
  int known = found && nbc__ptrtable_take(&table, (uintptr_t)ptr, 0, &r);
  if (known && (r.flags & NBC__MEM_HOLDS_CONTEXT)) return free_holding(&r);
  CUresult res = nbc__cu.cuMemFree(ptr);
  if (res != NBC__CUDA_SUCCESS) {
    /* the driver still holds it allocated (add reuses the spare that take just left) */
    if (known) (void)nbc__ptrtable_add(&table, &r);
    return nbc__driver_failf("cuMemFree", res, " (address 0x%llx)", (unsigned long long)ptr);
  }
  return NBC_OK;
}

nbc_status_t nbc__memory_free_now(nbc_devptr_t ptr) { return free_now(ptr, 0); }

/* Inside a deferred-cleanup scope of the allocation's context the free is queued (deferred.c);
 * the address check costs a table lookup only when some scope may be open. */
nbc_status_t nbc_mem_free(nbc_devptr_t ptr) {
  if (!ptr) return NBC_OK;
  NBC__ENSURE_DRIVER();
  if (nbc__defer_any() && nbc__defer_free(owner_of(ptr), NBC__FREE_DEVICE, ptr)) return NBC_OK;
  return free_now(ptr, 1);
}

/* Calls a context-free driver function, creating a context once if the thread has none. */
#define CALL_WITH_CONTEXT(name, ...)                                                       \
  do {                                                                                     \
    NBC__ENSURE_DRIVER();                                                                  \
    CUresult res_ = nbc__cu.name(__VA_ARGS__);                                             \
    if (__builtin_expect(res_ == NBC__CUDA_SUCCESS, 1)) return NBC_OK;                     \
    if (nbc__context_retry(res_)) res_ = nbc__cu.name(__VA_ARGS__);                        \
    if (res_ == NBC__CUDA_SUCCESS) return NBC_OK;                                          \
    return nbc__driver_failf(#name, res_, " (%zu bytes)", bytes);                          \
  } while (0)

nbc_status_t nbc_memcpy_htod(nbc_devptr_t dst, const void *src, size_t bytes) {
  CALL_WITH_CONTEXT(cuMemcpyHtoD, dst, src, bytes);
}

nbc_status_t nbc_memcpy_dtoh(void *dst, nbc_devptr_t src, size_t bytes) {
  CALL_WITH_CONTEXT(cuMemcpyDtoH, dst, src, bytes);
}

nbc_status_t nbc_memcpy_dtod(nbc_devptr_t dst, nbc_devptr_t src, size_t bytes) {
  CALL_WITH_CONTEXT(cuMemcpyDtoD, dst, src, bytes);
}

nbc_status_t nbc_memcpy_htod_async(nbc_devptr_t dst, const void *src, size_t bytes,
                                   nbc_stream_t *stream) {
  if (NBC__STREAM_GONE(stream)) return nbc__outlived_fail("cuMemcpyHtoDAsync", "stream");
  CALL_WITH_CONTEXT(cuMemcpyHtoDAsync, dst, src, bytes, stream ? stream->handle : NULL);
}

nbc_status_t nbc_memcpy_dtoh_async(void *dst, nbc_devptr_t src, size_t bytes,
                                   nbc_stream_t *stream) {
  if (NBC__STREAM_GONE(stream)) return nbc__outlived_fail("cuMemcpyDtoHAsync", "stream");
  CALL_WITH_CONTEXT(cuMemcpyDtoHAsync, dst, src, bytes, stream ? stream->handle : NULL);
}

nbc_status_t nbc_memset_d8(nbc_devptr_t dst, unsigned char value, size_t bytes) {
  CALL_WITH_CONTEXT(cuMemsetD8, dst, value, bytes);
}

nbc_status_t nbc_memset_d8_async(nbc_devptr_t dst, unsigned char value, size_t bytes,
                                 nbc_stream_t *stream) {
  if (NBC__STREAM_GONE(stream)) return nbc__outlived_fail("cuMemsetD8Async", "stream");
  CALL_WITH_CONTEXT(cuMemsetD8Async, dst, value, bytes, stream ? stream->handle : NULL);
}
