/* td_hostmem.c — page-locked host memory of the test driver: cuMemHostAlloc/cuMemFreeHost,
 * cuMemHostRegister/cuMemHostUnregister and cuMemHostGetDevicePointer.
 *
 * Allocations are pages mapped here; registrations only remember the range. Both belong to
 * the context current when they were made and disappear with it (td__ctx_release_resources),
 * as on the real driver. A freed allocation's pages are made inaccessible (PROT_NONE) and
 * kept so for the next QUARANTINE frees, so that any later read or write through a stale
 * pointer faults at once instead of reaching memory the process reused — the real driver
 * unmaps them too.
 *
 * Device addresses: as under unified addressing on the real driver, the device address of
 * page-locked memory is its host address — except for write-combined allocations, whose
 * device address is the host address with bit 62 set (cuda.h: such memory must be reached
 * through cuMemHostGetDevicePointer). A caller that passes the host pointer of write-combined
 * memory where the device address belongs is thereby caught by the range checks of copies.
 * td__hostmem_resolve maps device addresses back for copies, so mapped memory can be the
 * source or target of cuMemcpy* like device memory.
 *
 * Errors, as documented in cuda.h: registering a range that overlaps page-locked memory is
 * CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, unregistering an address that is not the start of
 * a registration CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, freeing an address that is not the
 * start of an allocation and asking the device address of memory that is not page-locked
 * CUDA_ERROR_INVALID_VALUE.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "td.h"

#define WC_TAG ((CUdeviceptr)1 << 62)

typedef struct td_host {
  unsigned char *p;
  size_t size;
  unsigned flags;
  int registered;
  struct CUctx_st *ctx;
  struct td_host *next;
} td_host;

static td_host *hosts;

static CUdeviceptr device_address(const td_host *h) {
  CUdeviceptr va = (CUdeviceptr)(uintptr_t)h->p;
  return !h->registered && (h->flags & CU_MEMHOSTALLOC_WRITECOMBINED) ? va | WC_TAG : va;
}

unsigned char *td__hostmem_resolve(CUdeviceptr dptr, size_t bytes) {
  for (td_host *h = hosts; h; h = h->next) {
    CUdeviceptr va = device_address(h);
    if (dptr >= va && dptr - va <= h->size && bytes <= h->size - (dptr - va))
      return h->p + (dptr - va);
  }
  return NULL;
}

int td__host_is_locked(const void *p, size_t bytes) {
  const unsigned char *c = p;
  for (td_host *h = hosts; h; h = h->next)
    if (c >= h->p && c - h->p <= (ptrdiff_t)h->size && bytes <= h->size - (size_t)(c - h->p))
      return 1;
  return 0;
}

/* The page-locked range containing [p, p + bytes), or NULL. Lock held. */
static td_host *find_overlap(const unsigned char *p, size_t bytes) {
  for (td_host *h = hosts; h; h = h->next)
    if (p < h->p + h->size && h->p < p + bytes) return h;
  return NULL;
}

/* Freed allocations still reserved (and inaccessible): a ring of the last QUARANTINE. Each
 * is one mapping; the ring bounds them well below the kernel's vm.max_map_count. */
#define QUARANTINE 1024
static struct {
  void *p;
  size_t size;
} quarantine[QUARANTINE];
static unsigned quarantined;

static size_t mapped_size(size_t bytes) {
  return (bytes + 4095) / 4096 * 4096;
}

static void unmap_later(unsigned char *p, size_t bytes) {
  size_t size = mapped_size(bytes);
  mprotect(p, size, PROT_NONE);
  madvise(p, size, MADV_DONTNEED);
  unsigned slot = quarantined++ % QUARANTINE;
  if (quarantine[slot].p) munmap(quarantine[slot].p, quarantine[slot].size);
  quarantine[slot].p = p;
  quarantine[slot].size = size;
}

static void host_free(td_host *h) {
  if (!h->registered) unmap_later(h->p, h->size);
  free(h);
}

void td__hostmem_release(struct CUctx_st *ctx) {
  for (td_host **p = &hosts; *p;) {
    td_host *h = *p;
    if (h->ctx == ctx) {
      *p = h->next;
      host_free(h);
    } else {
      p = &h->next;
    }
  }
}

static int count(int registered) {
  int n = 0;
  for (td_host *h = hosts; h; h = h->next)
    n += h->registered == registered;
  return n;
}

__attribute__((visibility("default"))) int tdrv_live_host_allocations(void) {
  pthread_mutex_lock(&td__lock);
  int n = count(0);
  pthread_mutex_unlock(&td__lock);
  return n;
}

__attribute__((visibility("default"))) int tdrv_live_host_registrations(void) {
  pthread_mutex_lock(&td__lock);
  int n = count(1);
  pthread_mutex_unlock(&td__lock);
  return n;
}

/* Records a page-locked range of the current context; the lock is taken here. */
static CUresult add(unsigned char *p, size_t size, unsigned flags, int registered) {
  td_host *h = calloc(1, sizeof *h);
  if (!h) return CUDA_ERROR_OUT_OF_MEMORY;
  pthread_mutex_lock(&td__lock);
  struct CUctx_st *ctx;
  CUresult r = td__current(&ctx);
  if (r == CUDA_SUCCESS && registered && find_overlap(p, size))
    r = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  if (r == CUDA_SUCCESS) {
    h->p = p;
    h->size = size;
    h->flags = flags;
    h->registered = registered;
    h->ctx = ctx;
    h->next = hosts;
    hosts = h;
  }
  pthread_mutex_unlock(&td__lock);
  if (r != CUDA_SUCCESS) free(h);
  return r;
}

/* Removes the range starting exactly at p of the given kind; 0 when there is none. */
static int remove_range(const void *p, int registered) {
  pthread_mutex_lock(&td__lock);
  int found = 0;
  for (td_host **link = &hosts; *link; link = &(*link)->next) {
    td_host *h = *link;
    if (h->p == p && h->registered == registered) {
      *link = h->next;
      host_free(h);
      found = 1;
      break;
    }
  }
  pthread_mutex_unlock(&td__lock);
  return found;
}

CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags) {
  TD_ENTER("cuMemHostAlloc", "cuMemHostAlloc");
  const unsigned known =
      CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;
  if (!pp || bytesize == 0 || (flags & ~known)) return CUDA_ERROR_INVALID_VALUE;
  if (bytesize > SIZE_MAX - 4096) return CUDA_ERROR_OUT_OF_MEMORY;
  unsigned char *p =
      mmap(NULL, mapped_size(bytesize), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  CUresult r = add(p, bytesize, flags, 0);
  if (r != CUDA_SUCCESS) {
    munmap(p, mapped_size(bytesize));
    return r;
  }
  *pp = p;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFreeHost(void *p) {
  TD_ENTER("cuMemFreeHost", "cuMemFreeHost");
  return remove_range(p, 0) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult host_register(void *p, size_t bytesize, unsigned int flags) {
  const unsigned known = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                         CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY;
  if (!p || bytesize == 0 || (flags & ~known)) return CUDA_ERROR_INVALID_VALUE;
  return add(p, bytesize, flags, 1);
}

CUresult CUDAAPI cuMemHostRegister(void *p, size_t bytesize, unsigned int flags) {
  TD_ENTER("cuMemHostRegister", "cuMemHostRegister");
  return host_register(p, bytesize, flags);
}

CUresult CUDAAPI cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int flags) {
  TD_ENTER("cuMemHostRegister", "cuMemHostRegister_v2");
  return host_register(p, bytesize, flags);
}

CUresult CUDAAPI cuMemHostUnregister(void *p) {
  TD_ENTER("cuMemHostUnregister", "cuMemHostUnregister");
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  return remove_range(p, 1) ? CUDA_SUCCESS : CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
}

CUresult CUDAAPI cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int flags) {
  TD_ENTER("cuMemHostGetDevicePointer", "cuMemHostGetDevicePointer_v2");
  if (!pdptr || !p || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&td__lock);
  struct CUctx_st *ctx;
  CUresult r = td__current(&ctx);
  if (r == CUDA_SUCCESS) {
    td_host *h = find_overlap(p, 1);
    if (!h)
      r = CUDA_ERROR_INVALID_VALUE;
    else
      *pdptr = device_address(h) + (CUdeviceptr)((unsigned char *)p - h->p);
  }
  pthread_mutex_unlock(&td__lock);
  return r;
}
