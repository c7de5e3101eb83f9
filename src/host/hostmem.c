/* hostmem.c — host memory the device can reach: page-locked allocations (cuMemHostAlloc),
 * pinning of existing memory (cuMemHostRegister), the device address of mapped memory
 * (cuMemHostGetDevicePointer) and managed memory (cuMemAllocManaged).
 *
 * Page-locked memory belongs to the context it was made in, and a reset of that context
 * (nbc_device_reset, nbc_close) destroys it with everything else. nbcuda records each
 * allocation and registration with its context and the context's lifetime then, in a table
 * keyed by the host address (ptrtable.c), so that a free or unregister after such a reset only
 * drops the record: the driver may since have handed the same address out again, and a late
 * cuMemFreeHost would free someone else's memory. The record also tells nbc_mem_host_free
 * which context's deferred-cleanup scope applies (deferred.c).
 *
 * Memory allocated with NBC_HOST_ALLOC_OUTLIVE_RESET is pages of nbcuda's own (an anonymous
 * mapping) page-locked with cuMemHostRegister instead: the driver frees what cuMemHostAlloc
 * gave with its context, under arrays that still view it, while a registration it only
 * drops. Such a record carries the flag and the mapping's size; its free unregisters the
 * pages when their context still lives and unmaps them in every case.
 *
 * Managed memory is device memory to the driver (freed with cuMemFree), so it is tracked with
 * the other device allocations of memory.c and freed with nbc_mem_free.
 */
#include <sys/mman.h>
#include <unistd.h>

#include "host/host.h"

static nbc__ptrtable_t table; /* zeroed: empty and unlocked */

/* The tag of a record: how the memory was made, so that freeing an allocation never takes a
 * registration of the same address for it, nor the other way round. */
enum { ALLOCATED = 0, REGISTERED = 1 };

/* Takes ptr's record out of the table into *r: 1, or 0 when nbcuda does not know ptr. */
static int untrack(const void *ptr, int tag, nbc__ptr_record_t *r) {
  return nbc__ptrtable_take(&table, (uintptr_t)ptr, tag, r);
}

/* Looks ptr up without removing it: *pcontext and whether its context was reset since. */
static int lookup(const void *ptr, int tag, nbc_context_t **pcontext, int *poutlived) {
  nbc__ptr_record_t r;
  if (!nbc__ptrtable_find(&table, (uintptr_t)ptr, tag, &r)) return 0;
  *pcontext = r.context;
  *poutlived = nbc__outlived(r.context, r.lifetime);
  return 1;
}

static nbc_status_t record(void *ptr, int tag, nbc_context_t *context, size_t bytes,
                           unsigned flags) {
  nbc__ptr_record_t r = {.address = (uintptr_t)ptr,
                         .tag = tag,
                         .lifetime = atomic_load(&context->lifetime),
                         .context = context,
                         .bytes = bytes,
                         .flags = flags};
  if (nbc__ptrtable_add(&table, &r) < 0)
    return nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  return NBC_OK;
}

/* ---------------------------------------------------------------- page-locked memory -- */

/* OUTLIVE_RESET memory: whole pages mapped here and registered with the driver; *pbytes
 * becomes the mapping's size. */
static nbc_status_t own_pages(size_t *pbytes, unsigned flags, void **pptr) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = *pbytes;
  if (bytes > SIZE_MAX - page)
    return nbc__set_error(NBC_NO_MEMORY, "cannot allocate %zu bytes of host memory", bytes);
  bytes = (bytes + page - 1) / page * page;
  void *ptr = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (ptr == MAP_FAILED)
    return nbc__set_error(NBC_NO_MEMORY, "cannot map %zu bytes of host memory", bytes);
  unsigned reg = (flags & NBC_HOST_ALLOC_PORTABLE ? NBC_HOST_REGISTER_PORTABLE : 0) |
                 (flags & NBC_HOST_ALLOC_DEVICEMAP ? NBC_HOST_REGISTER_DEVICEMAP : 0);
  CUresult res = nbc__cu.cuMemHostRegister(ptr, bytes, reg);
  if (res != NBC__CUDA_SUCCESS) {
    munmap(ptr, bytes);
    return nbc__driver_failf("cuMemHostRegister", res,
                             " (page-locking %zu bytes of host memory)", bytes);
  }
  *pbytes = bytes;
  *pptr = ptr;
  return NBC_OK;
}

nbc_status_t nbc_mem_host_alloc(size_t bytes, unsigned flags, void **pptr) {
  if (!pptr) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_mem_host_alloc: pptr is NULL");
  *pptr = NULL;
  const unsigned known = NBC_HOST_ALLOC_PORTABLE | NBC_HOST_ALLOC_DEVICEMAP |
                         NBC_HOST_ALLOC_WRITECOMBINED | NBC_HOST_ALLOC_OUTLIVE_RESET;
  if (flags & ~known)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_mem_host_alloc: unknown flags 0x%x",
                          flags & ~known);
  const unsigned outlive = flags & NBC_HOST_ALLOC_OUTLIVE_RESET;
  if (outlive && (flags & NBC_HOST_ALLOC_WRITECOMBINED))
    return nbc__set_error(NBC_INVALID_ARGUMENT,
                          "nbc_mem_host_alloc: NBC_HOST_ALLOC_OUTLIVE_RESET memory cannot be "
                          "write-combined (only the driver's own allocations are)");
  nbc_context_t *context;
  nbc_status_t st = nbc__context_ensure(&context);
  if (st != NBC_OK) return st;
  if (bytes == 0) bytes = 1; /* the driver refuses 0; a unique pointer is what callers need */
  void *ptr = NULL;
  if (outlive) {
    st = own_pages(&bytes, flags, &ptr);
    if (st != NBC_OK) return st;
  } else {
    CUresult res = nbc__cu.cuMemHostAlloc(&ptr, bytes, flags);
    if (res != NBC__CUDA_SUCCESS)
      return nbc__driver_failf("cuMemHostAlloc", res,
                               " (allocating %zu bytes of page-locked host memory)", bytes);
  }
  st = record(ptr, ALLOCATED, context, bytes, outlive);
  if (st != NBC_OK) {
    if (outlive) {
      nbc__cu.cuMemHostUnregister(ptr);
      munmap(ptr, bytes);
    } else {
      nbc__cu.cuMemFreeHost(ptr);
    }
    return st;
  }
  *pptr = ptr;
  return NBC_OK;
}

/* Frees OUTLIVE_RESET memory: unpinned while its context lives, unmapped always. */
static nbc_status_t free_own_pages(nbc__ptr_record_t *r) {
  void *ptr = (void *)r->address;
  if (!nbc__outlived(r->context, r->lifetime)) {
    CUresult res = nbc__cu.cuMemHostUnregister(ptr);
    if (res != NBC__CUDA_SUCCESS && nbc__context_retry(res)) res = nbc__cu.cuMemHostUnregister(ptr);
    if (res != NBC__CUDA_SUCCESS) {
      (void)nbc__ptrtable_add(&table, r); /* the spare it just left */
      return nbc__driver_failf("cuMemHostUnregister", res, " (address %p)", ptr);
    }
  }
  munmap(ptr, r->bytes);
  return NBC_OK;
}

nbc_status_t nbc__host_free_now(void *ptr) {
  nbc__ptr_record_t r;
  int known = untrack(ptr, ALLOCATED, &r);
  if (known && (r.flags & NBC_HOST_ALLOC_OUTLIVE_RESET)) return free_own_pages(&r);
  if (known && nbc__outlived(r.context, r.lifetime)) return NBC_OK; /* the reset freed it */
  CUresult res = nbc__cu.cuMemFreeHost(ptr);
  if (res != NBC__CUDA_SUCCESS) {
    if (known) (void)nbc__ptrtable_add(&table, &r); /* the spare it just left */
    return nbc__driver_failf("cuMemFreeHost", res, " (address %p)", ptr);
  }
  return NBC_OK;
}

nbc_status_t nbc_mem_host_free(void *ptr) {
  if (!ptr) return NBC_OK;
  NBC__ENSURE_DRIVER();
  if (nbc__defer_any()) {
    nbc_context_t *context = NULL;
    int outlived = 0;
    if (lookup(ptr, ALLOCATED, &context, &outlived) && !outlived &&
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
  nbc__ptr_record_t gone;
  if (lookup(ptr, REGISTERED, &old, &outlived) && outlived) untrack(ptr, REGISTERED, &gone);
  CUresult res = nbc__cu.cuMemHostRegister(ptr, bytes, flags);
  if (res != NBC__CUDA_SUCCESS)
    return nbc__driver_failf("cuMemHostRegister", res, " (%zu bytes at %p)", bytes, ptr);
  st = record(ptr, REGISTERED, context, bytes, 0);
  if (st != NBC_OK) nbc__cu.cuMemHostUnregister(ptr);
  return st;
}

nbc_status_t nbc_mem_host_unregister(void *ptr) {
  if (!ptr) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_mem_host_unregister: ptr is NULL");
  NBC__ENSURE_DRIVER();
  nbc__ptr_record_t r;
  int known = untrack(ptr, REGISTERED, &r);
  if (known && nbc__outlived(r.context, r.lifetime)) return NBC_OK; /* the reset unpinned it */
  CUresult res = nbc__cu.cuMemHostUnregister(ptr);
  if (res != NBC__CUDA_SUCCESS && nbc__context_retry(res)) res = nbc__cu.cuMemHostUnregister(ptr);
  if (res != NBC__CUDA_SUCCESS) {
    if (known) (void)nbc__ptrtable_add(&table, &r); /* the spare it just left */
    return nbc__driver_failf("cuMemHostUnregister", res, " (address %p)", ptr);
  }
  return NBC_OK;
}

int nbc_mem_host_pagelocked_by_nbcuda(const void *ptr) {
  nbc_context_t *context;
  int outlived;
  if (!ptr) return 0;
  if (lookup(ptr, ALLOCATED, &context, &outlived) && !outlived) return 1;
  return lookup(ptr, REGISTERED, &context, &outlived) && !outlived;
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

nbc_status_t nbc_mem_alloc_managed(size_t bytes, unsigned flags, nbc_devptr_t *pptr) {
  if (!pptr) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_mem_alloc_managed: pptr is NULL");
  *pptr = 0;
  if (flags & ~(NBC_MANAGED_ATTACH_GLOBAL | NBC_MANAGED_OUTLIVE_RESET))
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_mem_alloc_managed: unknown flags 0x%x",
                          flags);
  nbc_context_t *context;
  nbc_status_t st = nbc__context_ensure(&context);
  if (st != NBC_OK) return st;
  if (bytes == 0) bytes = 1;
  int hold = (flags & NBC_MANAGED_OUTLIVE_RESET) != 0;
  if (hold && (st = nbc__context_hold(context->device)) != NBC_OK) return st;
  CUdeviceptr ptr = 0;
  CUresult res = nbc__cu.cuMemAllocManaged(
      &ptr, bytes, flags & NBC_MANAGED_ATTACH_GLOBAL ? CU_MEM_ATTACH_GLOBAL : CU_MEM_ATTACH_HOST);
  if (res != NBC__CUDA_SUCCESS) {
    if (hold) nbc__context_unhold(context->device);
    return nbc__driver_failf("cuMemAllocManaged", res,
                             " (allocating %zu bytes of managed memory on device %d)", bytes,
                             context->device->id);
  }
  st = nbc__memory_track(ptr, bytes, context,
                         NBC__MEM_FREE_AT_ONCE | (hold ? NBC__MEM_HOLDS_CONTEXT : 0u));
  if (st != NBC_OK) {
    nbc__cu.cuMemFree(ptr);
    if (hold) nbc__context_unhold(context->device);
    return st;
  }
  *pptr = ptr;
  return NBC_OK;
}
