/* hostmem.c — host memory the device can reach: page-locked allocations (cuMemHostAlloc),
 * pinning of existing memory (cuMemHostRegister), the device address of mapped memory
 * (cuMemHostGetDevicePointer) and managed memory (cuMemAllocManaged).
 *
 * Page-locked memory belongs to the context it was made in, and a reset of that context
 * (nbc_device_reset, nbc_close) destroys it with everything else. nbcuda records each
 * allocation and registration with its context and the context's lifetime then, in a hash
 * table keyed by the host address, so that a free or unregister after such a reset only drops
 * the record: the driver may since have handed the same address out again, and a late
 * cuMemFreeHost would free someone else's memory. The record also tells nbc_mem_host_free
 * which context's deferred-cleanup scope applies (deferred.c).
 *
 * Managed memory is device memory to the driver (freed with cuMemFree), so it is tracked with
 * the other device allocations of memory.c and freed with nbc_mem_free.
 */
#include <stdlib.h>

#include "host/host.h"

typedef struct host_record {
  void *ptr;
  int registered; /* cuMemHostRegister (else cuMemHostAlloc) */
  nbc_context_t *context;
  unsigned lifetime; /* context->lifetime when made */
  struct host_record *next;
} host_record;

#define BUCKETS 256u

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static host_record *table[BUCKETS];

static unsigned bucket_of(const void *ptr) {
  uint64_t h = (uint64_t)(uintptr_t)ptr * 0x9E3779B97F4A7C15ull;
  return (unsigned)(h >> 56) & (BUCKETS - 1);
}

static void track(host_record *r) {
  unsigned b = bucket_of(r->ptr);
  pthread_mutex_lock(&table_lock);
  r->next = table[b];
  table[b] = r;
  pthread_mutex_unlock(&table_lock);
}

/* Removes and returns the record of ptr of the given kind, or NULL. */
static host_record *untrack(const void *ptr, int registered) {
  unsigned b = bucket_of(ptr);
  pthread_mutex_lock(&table_lock);
  host_record **link = &table[b];
  while (*link && ((*link)->ptr != ptr || (*link)->registered != registered))
    link = &(*link)->next;
  host_record *r = *link;
  if (r) *link = r->next;
  pthread_mutex_unlock(&table_lock);
  return r;
}

/* Looks ptr up without removing it: *pcontext and whether its context was reset since. */
static int lookup(const void *ptr, int registered, nbc_context_t **pcontext, int *poutlived) {
  unsigned b = bucket_of(ptr);
  int found = 0;
  pthread_mutex_lock(&table_lock);
  for (host_record *r = table[b]; r; r = r->next)
    if (r->ptr == ptr && r->registered == registered) {
      *pcontext = r->context;
      *poutlived = nbc__outlived(r->context, r->lifetime);
      found = 1;
      break;
    }
  pthread_mutex_unlock(&table_lock);
  return found;
}

static nbc_status_t record(void *ptr, int registered, nbc_context_t *context) {
  host_record *r = malloc(sizeof *r);
  if (!r) return nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  r->ptr = ptr;
  r->registered = registered;
  r->context = context;
  r->lifetime = atomic_load(&context->lifetime);
  track(r);
  return NBC_OK;
}

/* ---------------------------------------------------------------- page-locked memory -- */

nbc_status_t nbc_mem_host_alloc(size_t bytes, unsigned flags, void **pptr) {
  if (!pptr) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_mem_host_alloc: pptr is NULL");
  *pptr = NULL;
  const unsigned known =
      NBC_HOST_ALLOC_PORTABLE | NBC_HOST_ALLOC_DEVICEMAP | NBC_HOST_ALLOC_WRITECOMBINED;
  if (flags & ~known)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_mem_host_alloc: unknown flags 0x%x",
                          flags & ~known);
  nbc_context_t *context;
  nbc_status_t st = nbc__context_ensure(&context);
  if (st != NBC_OK) return st;
  if (bytes == 0) bytes = 1; /* the driver refuses 0; a unique pointer is what callers need */
  void *ptr = NULL;
  CUresult res = nbc__cu.cuMemHostAlloc(&ptr, bytes, flags);
  if (res != NBC__CUDA_SUCCESS)
    return nbc__driver_failf("cuMemHostAlloc", res,
                             " (allocating %zu bytes of page-locked host memory)", bytes);
  st = record(ptr, 0, context);
  if (st != NBC_OK) {
    nbc__cu.cuMemFreeHost(ptr);
    return st;
  }
  *pptr = ptr;
  return NBC_OK;
}

nbc_status_t nbc__host_free_now(void *ptr) {
  host_record *r = untrack(ptr, 0);
  if (r && nbc__outlived(r->context, r->lifetime)) { /* the reset freed it */
    free(r);
    return NBC_OK;
  }
  CUresult res = nbc__cu.cuMemFreeHost(ptr);
  if (res != NBC__CUDA_SUCCESS) {
    if (r) track(r);
    return nbc__driver_failf("cuMemFreeHost", res, " (address %p)", ptr);
  }
  free(r);
  return NBC_OK;
}

nbc_status_t nbc_mem_host_free(void *ptr) {
  if (!ptr) return NBC_OK;
  NBC__ENSURE_DRIVER();
  if (nbc__defer_any()) {
    nbc_context_t *context = NULL;
    int outlived = 0;
    if (lookup(ptr, 0, &context, &outlived) && !outlived &&
        nbc__defer_free(context, NBC__FREE_HOST, (uint64_t)(uintptr_t)ptr))
      return NBC_OK;
  }
  return nbc__host_free_now(ptr);
}

nbc_status_t nbc_mem_host_register(void *ptr, size_t bytes, unsigned flags) {
  if (!ptr) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_mem_host_register: ptr is NULL");
  if (bytes == 0)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_mem_host_register: bytes is 0");
  const unsigned known = NBC_HOST_REGISTER_PORTABLE | NBC_HOST_REGISTER_DEVICEMAP;
  if (flags & ~known)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_mem_host_register: unknown flags 0x%x",
                          flags & ~known);
  nbc_context_t *context;
  nbc_status_t st = nbc__context_ensure(&context);
  if (st != NBC_OK) return st;
  /* A registration left over from a context reset is gone as far as the driver knows. */
  nbc_context_t *old = NULL;
  int outlived = 0;
  if (lookup(ptr, 1, &old, &outlived) && outlived) free(untrack(ptr, 1));
  CUresult res = nbc__cu.cuMemHostRegister(ptr, bytes, flags);
  if (res != NBC__CUDA_SUCCESS)
    return nbc__driver_failf("cuMemHostRegister", res, " (%zu bytes at %p)", bytes, ptr);
  st = record(ptr, 1, context);
  if (st != NBC_OK) nbc__cu.cuMemHostUnregister(ptr);
  return st;
}

nbc_status_t nbc_mem_host_unregister(void *ptr) {
  if (!ptr) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_mem_host_unregister: ptr is NULL");
  NBC__ENSURE_DRIVER();
  host_record *r = untrack(ptr, 1);
  if (r && nbc__outlived(r->context, r->lifetime)) { /* the reset unpinned it */
    free(r);
    return NBC_OK;
  }
  CUresult res = nbc__cu.cuMemHostUnregister(ptr);
  if (res != NBC__CUDA_SUCCESS && nbc__context_retry(res)) res = nbc__cu.cuMemHostUnregister(ptr);
  if (res != NBC__CUDA_SUCCESS) {
    if (r) track(r);
    return nbc__driver_failf("cuMemHostUnregister", res, " (address %p)", ptr);
  }
  free(r);
  return NBC_OK;
}

nbc_status_t nbc_mem_host_device_pointer(void *ptr, nbc_devptr_t *pdptr) {
  if (!pdptr)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_mem_host_device_pointer: pdptr is NULL");
  *pdptr = 0;
  if (!ptr)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_mem_host_device_pointer: ptr is NULL");
  NBC__ENSURE_DRIVER();
  CUdeviceptr d = 0;
  CUresult res = nbc__cu.cuMemHostGetDevicePointer(&d, ptr, 0);
  if (res != NBC__CUDA_SUCCESS && nbc__context_retry(res))
    res = nbc__cu.cuMemHostGetDevicePointer(&d, ptr, 0);
  if (res != NBC__CUDA_SUCCESS)
    return nbc__driver_failf("cuMemHostGetDevicePointer", res,
                             " (address %p: is it mapped page-locked memory?)", ptr);
  *pdptr = d;
  return NBC_OK;
}

/* ---------------------------------------------------------------- managed memory ------ */

#define CU_MEM_ATTACH_GLOBAL 0x1u
#define CU_MEM_ATTACH_HOST 0x2u

nbc_status_t nbc_mem_alloc_managed(size_t bytes, int attach_global, nbc_devptr_t *pptr) {
  if (!pptr) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_mem_alloc_managed: pptr is NULL");
  *pptr = 0;
  nbc_context_t *context;
  nbc_status_t st = nbc__context_ensure(&context);
  if (st != NBC_OK) return st;
  if (bytes == 0) bytes = 1;
  CUdeviceptr ptr = 0;
  CUresult res = nbc__cu.cuMemAllocManaged(
      &ptr, bytes, attach_global ? CU_MEM_ATTACH_GLOBAL : CU_MEM_ATTACH_HOST);
  if (res != NBC__CUDA_SUCCESS)
    return nbc__driver_failf("cuMemAllocManaged", res,
                             " (allocating %zu bytes of managed memory on device %d)", bytes,
                             context->device->id);
  st = nbc__memory_track(ptr, bytes, context);
  if (st != NBC_OK) {
    nbc__cu.cuMemFree(ptr);
    return st;
  }
  *pptr = ptr;
  return NBC_OK;
}
