/* ipc.c — device memory shared between processes (CUDA IPC): numba's
 * Context.get_ipc_handle, IpcHandle.open and IpcHandle.close.
 *
 * Exporting: the driver exports whole allocations (cuIpcGetMemHandle wants an allocation's
 * base), so nbc_ipc_get_handle finds the base of the pointer's allocation with
 * cuMemGetAddressRange, as numba's GetIpcHandleMixin does, and records the pointer's offset
 * from it and the size of the range shared. The handle also names the exporting device (PCI
 * domain/bus/device as numba's source_info, and the UUID) and the exporting process.
 *
 * Importing: nbc_ipc_open maps the allocation into the given context with
 * CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS (numba's flag) and returns the mapping plus the offset.
 * Before asking the driver it looks for the exporting device among this process's devices
 * (by UUID, else by PCI location): a device this process cannot see, or one without peer
 * access to the opening context's device, is refused with a message that says so (numba
 * copies through host memory in the second case; nbcuda does not). The driver refuses a
 * handle opened by the process that made it with CUDA_ERROR_INVALID_CONTEXT, which says
 * nothing useful, so the message adds the reason when the pids match.
 *
 * Closing needs the mapping's base and its context (cuIpcCloseMemHandle must run in the
 * context that opened it), so every open is recorded in a table keyed by the pointer the
 * caller got (ptrtable.c; the record is the first member of a larger one that keeps the
 * base). The driver maps a handle once per context and counts opens; each open has its own
 * record, so two opens need two closes, as with the driver. A reset of the opening context
 * unmaps everything (the driver destroys the context): the record's lifetime says so, and
 * closing it then only forgets it.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/host.h"

typedef struct ipc_mapping {
  nbc__ptr_record_t record; /* address = what nbc_ipc_open returned; first member */
  CUdeviceptr base;         /* what cuIpcOpenMemHandle returned */
} ipc_mapping;

static nbc__ptrtable_t table; /* zeroed: empty and unlocked */

/* context, or the current one when NULL. */
static nbc_status_t context_or_current(nbc_context_t **pcontext) {
  if (*pcontext) return NBC_OK;
  return nbc__context_ensure(pcontext);
}

/* numba's source_info of device (PCI domain, bus, device) and its UUID. */
static nbc_status_t device_identity(nbc_device_t *device, nbc_ipc_handle_t *h) {
  static const int attributes[3] = {NBC__CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID,
                                    NBC__CU_DEVICE_ATTRIBUTE_PCI_BUS_ID,
                                    NBC__CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID};
  int *fields[3] = {&h->pci_domain_id, &h->pci_bus_id, &h->pci_device_id};
  for (int i = 0; i < 3; i++) {
    nbc_status_t st = nbc_device_attribute(device, attributes[i], fields[i]);
    if (st != NBC_OK) return st;
  }
  snprintf(h->uuid, sizeof h->uuid, "%s", device->uuid);
  return NBC_OK;
}

/* Finds the handle's base and offset (cuMemGetAddressRange) and exports the base; the
 * context is current. */
static nbc_status_t export_range(nbc_devptr_t ptr, size_t bytes, nbc_ipc_handle_t *h) {
  CUdeviceptr base = 0;
  size_t extent = 0;
  CUresult res = nbc__cu.cuMemGetAddressRange(&base, &extent, ptr);
  if (res != NBC__CUDA_SUCCESS)
    return nbc__driver_failf("cuMemGetAddressRange", res,
                             " (address 0x%llx is not device memory of the current context)",
                             (unsigned long long)ptr);
  size_t offset = (size_t)(ptr - base), available = extent - offset;
  if (bytes == 0) bytes = available;
  if (bytes > available)
    return nbc__set_error(NBC_INVALID_ARGUMENT,
                          "cannot export %zu bytes at 0x%llx: its allocation (%zu bytes at "
                          "0x%llx) has only %zu bytes from there",
                          bytes, (unsigned long long)ptr, extent, (unsigned long long)base,
                          available);
  CUipcMemHandle driver_handle;
  res = nbc__cu.cuIpcGetMemHandle(&driver_handle, base);
  if (res != NBC__CUDA_SUCCESS)
    return nbc__driver_failf("cuIpcGetMemHandle", res, " (allocation at 0x%llx)",
                             (unsigned long long)base);
  nbc__memory_exported(base); /* its free goes to the driver: another process may map it */
  memcpy(h->bytes, driver_handle.reserved, NBC_IPC_HANDLE_SIZE);
  h->offset = offset;
  h->size = bytes;
  return NBC_OK;
}

nbc_status_t nbc_ipc_get_handle(nbc_context_t *context, nbc_devptr_t ptr, size_t bytes,
                                nbc_ipc_handle_t *phandle) {
  if (!phandle) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_ipc_get_handle: NULL handle");
  nbc_ipc_handle_from_bytes(NULL, 0, 0, phandle);
  if (!ptr)
    return nbc__set_error(NBC_INVALID_ARGUMENT,
                          "nbc_ipc_get_handle: NULL pointer (an empty array has no memory to "
                          "share)");
  nbc_status_t st = context_or_current(&context);
  if (st != NBC_OK) return st;
  nbc_ipc_handle_t h;
  nbc_ipc_handle_from_bytes(NULL, 0, 0, &h);
  int pushed;
  st = nbc__context_enter(context, &pushed);
  if (st != NBC_OK) return st;
  st = export_range(ptr, bytes, &h);
  nbc__context_leave(pushed);
  if (st == NBC_OK) st = device_identity(context->device, &h);
  if (st != NBC_OK) return st;
  h.pid = (int64_t)getpid();
  *phandle = h;
  return NBC_OK;
}

void nbc_ipc_handle_from_bytes(const void *bytes, uint64_t offset, uint64_t size,
                               nbc_ipc_handle_t *phandle) {
  if (!phandle) return;
  memset(phandle, 0, sizeof *phandle);
  if (bytes) memcpy(phandle->bytes, bytes, NBC_IPC_HANDLE_SIZE);
  phandle->offset = offset;
  phandle->size = size;
  phandle->pci_domain_id = phandle->pci_bus_id = phandle->pci_device_id = -1;
}

/* The handle's exporting device as "GPU-... (PCI 0000:01:00)" for messages. */
static void describe_source(const nbc_ipc_handle_t *h, char *out, size_t size) {
  snprintf(out, size, "%s%s(PCI domain %d, bus %d, device %d)", h->uuid, h->uuid[0] ? " " : "",
           h->pci_domain_id, h->pci_bus_id, h->pci_device_id);
}

/* Whether device is the one the handle names: by UUID when both sides have one, else by
 * PCI location (numba's identity). */
static nbc_status_t is_source(nbc_device_t *device, const nbc_ipc_handle_t *h, int *pis) {
  *pis = 0;
  if (h->uuid[0] && device->uuid[0]) {
    *pis = strcmp(h->uuid, device->uuid) == 0;
    return NBC_OK;
  }
  nbc_ipc_handle_t mine;
  nbc_status_t st = device_identity(device, &mine);
  if (st != NBC_OK) return st;
  *pis = mine.pci_domain_id == h->pci_domain_id && mine.pci_bus_id == h->pci_bus_id &&
         mine.pci_device_id == h->pci_device_id;
  return NBC_OK;
}

/* The exporting device h names, among this process's: *psource NULL when h names none (a
 * handle made from raw bytes); NBC_INVALID_DEVICE (numba's message) when none matches. */
static nbc_status_t find_source(const nbc_ipc_handle_t *h, nbc_device_t **psource) {
  *psource = NULL;
  if (h->pci_bus_id < 0 && !h->uuid[0]) return NBC_OK;
  nbc_device_t *devices;
  int count;
  nbc_status_t st = nbc__devices(&devices, &count);
  if (st != NBC_OK) return st;
  for (int i = 0; i < count && !*psource; i++) {
    int match;
    if ((st = is_source(&devices[i], h, &match)) != NBC_OK) return st;
    if (match) *psource = &devices[i];
  }
  if (*psource) return NBC_OK;
  char what[128];
  describe_source(h, what, sizeof what);
  return nbc__set_error(NBC_INVALID_DEVICE,
                        "No device of %s is found. Target device may not be visible in this "
                        "process.",
                        what);
}

/* Refuses a handle whose device this process does not see, or that the opening device
 * cannot reach; handles without an identity pass. */
static nbc_status_t check_source(const nbc_ipc_handle_t *h, nbc_device_t *target) {
  nbc_device_t *source;
  nbc_status_t st = find_source(h, &source);
  if (st != NBC_OK || !source || source == target) return st;
  char what[128];
  describe_source(h, what, sizeof what);
  int can = 0;
  if ((st = nbc_device_can_access_peer(target, source, &can)) != NBC_OK) return st;
  if (!can)
    return nbc__set_error(NBC_INVALID_DEVICE,
                          "cannot map IPC memory of device %d %s in a context of device %d: "
                          "device %d has no peer access to it (nbc_ipc_open_staged copies it)",
                          source->id, what, target->id, target->id);
  return NBC_OK;
}

/* cuIpcOpenMemHandle in the current context; *pbase gets the mapping. */
static nbc_status_t map_handle(const nbc_ipc_handle_t *h, CUdeviceptr *pbase) {
  CUipcMemHandle driver_handle;
  memcpy(driver_handle.reserved, h->bytes, NBC_IPC_HANDLE_SIZE);
  CUresult res =
      nbc__cu.cuIpcOpenMemHandle(pbase, driver_handle, NBC__CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  if (res == NBC__CUDA_SUCCESS) return NBC_OK;
  if (res == NBC__CUDA_ERROR_INVALID_CONTEXT && h->pid == (int64_t)getpid())
    return nbc__driver_failf("cuIpcOpenMemHandle", res,
                             " (the handle was made by this process, pid %lld: CUDA opens IPC "
                             "handles only in other processes)",
                             (long long)h->pid);
  return nbc__driver_fail("cuIpcOpenMemHandle", res);
}

/* Checks that the mapped allocation holds the handle's range, and unmaps it when the driver
 * says it does not. A driver that cannot tell (no address range for an imported mapping) is
 * taken at its word that the mapping is good: the check only catches a wrong offset or size
 * early, before a copy through the mapping would. */
static nbc_status_t check_extent(const nbc_ipc_handle_t *h, CUdeviceptr base) {
  CUdeviceptr start = 0;
  size_t extent = 0;
  CUresult res = nbc__cu.cuMemGetAddressRange(&start, &extent, base);
  if (res != NBC__CUDA_SUCCESS || (h->offset <= extent && h->size <= extent - h->offset))
    return NBC_OK;
  nbc__cu.cuIpcCloseMemHandle(base);
  return nbc__set_error(NBC_INVALID_ARGUMENT,
                        "the IPC handle's range (offset %llu, %llu bytes) runs past the "
                        "exported allocation (%zu bytes)",
                        (unsigned long long)h->offset, (unsigned long long)h->size, extent);
}

nbc_status_t nbc_ipc_open(const nbc_ipc_handle_t *handle, nbc_context_t *context,
                          nbc_devptr_t *pptr) {
  if (pptr) *pptr = 0;
  if (!handle || !pptr)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_ipc_open: NULL argument");
  nbc_status_t st = context_or_current(&context);
  if (st != NBC_OK) return st;
  if ((st = check_source(handle, context->device)) != NBC_OK) return st;
  ipc_mapping *m = malloc(sizeof *m);
  if (!m) return nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  int pushed;
  st = nbc__context_enter(context, &pushed);
  if (st == NBC_OK) {
    st = map_handle(handle, &m->base);
    if (st == NBC_OK) st = check_extent(handle, m->base);
    nbc__context_leave(pushed);
  }
  if (st != NBC_OK) {
    free(m);
    return st;
  }
  m->record.address = (uintptr_t)(m->base + handle->offset);
  m->record.tag = 0;
  m->record.lifetime = nbc_context_lifetime(context);
  m->record.context = context;
  m->record.bytes = (size_t)handle->size;
  nbc__ptrtable_insert(&table, &m->record);
  *pptr = (nbc_devptr_t)m->record.address;
  return NBC_OK;
}

/* The arguments of nbc_ipc_source_is_peer and nbc_ipc_open_staged (out: their result
 * pointer): *pcontext (NULL: the current context) and the exporting device the handle names
 * (NULL: none). */
static nbc_status_t context_and_source(const char *fn, const nbc_ipc_handle_t *handle,
                                       const void *out, nbc_context_t **pcontext,
                                       nbc_device_t **psource) {
  *psource = NULL;
  if (!handle || !out) return nbc__set_error(NBC_INVALID_ARGUMENT, "%s: NULL argument", fn);
  nbc_status_t st = context_or_current(pcontext);
  return st == NBC_OK ? find_source(handle, psource) : st;
}

nbc_status_t nbc_ipc_source_is_peer(const nbc_ipc_handle_t *handle, nbc_context_t *context,
                                    int *ppeer) {
  if (ppeer) *ppeer = 1;
  nbc_device_t *source;
  nbc_status_t st =
      context_and_source("nbc_ipc_source_is_peer", handle, ppeer, &context, &source);
  if (st != NBC_OK || !source || source == context->device) return st;
  return nbc_device_can_access_peer(context->device, source, ppeer);
}

/* Unmaps a mapping made by map_handle in context (the caller's status is kept: st). */
static nbc_status_t unmap_in(nbc_context_t *context, CUdeviceptr base, nbc_status_t st) {
  int pushed;
  nbc_status_t entered = nbc__context_enter(context, &pushed);
  if (entered != NBC_OK) return st != NBC_OK ? st : entered;
  CUresult res = nbc__cu.cuIpcCloseMemHandle(base);
  nbc__context_leave(pushed);
  if (res != NBC__CUDA_SUCCESS && st == NBC_OK)
    st = nbc__driver_failf("cuIpcCloseMemHandle", res, " (staging mapping at 0x%llx)",
                           (unsigned long long)base);
  return st;
}

nbc_status_t nbc_ipc_open_staged(const nbc_ipc_handle_t *handle, nbc_context_t *context,
                                 nbc_devptr_t *pptr) {
  if (pptr) *pptr = 0;
  nbc_device_t *source;
  nbc_status_t st = context_and_source("nbc_ipc_open_staged", handle, pptr, &context, &source);
  if (st != NBC_OK) return st;
  if (!source)
    return nbc__set_error(NBC_INVALID_ARGUMENT,
                          "nbc_ipc_open_staged: the handle names no exporting device (one made "
                          "from raw bytes): IPC handle doesn't have source info");
  nbc_context_t *exporter;
  if ((st = nbc_device_primary_context(source, &exporter)) != NBC_OK) return st;
  /* mapped in a context of the exporting device, where the driver always can */
  CUdeviceptr base = 0;
  int pushed;
  if ((st = nbc__context_enter(exporter, &pushed)) != NBC_OK) return st;
  st = map_handle(handle, &base);
  nbc__context_leave(pushed);
  if (st != NBC_OK) return st;
  if ((st = check_extent(handle, base)) != NBC_OK) return unmap_in(exporter, base, st);
  /* copied into memory of context (the driver stages it through the host when the devices
   * are not peers) and waited for, so that the mapping can go */
  nbc_devptr_t copy = 0;
  if ((st = nbc__context_enter(context, &pushed)) == NBC_OK) {
    st = nbc_mem_alloc((size_t)handle->size, &copy);
    if (st == NBC_OK && handle->size)
      st = nbc_memcpy_dtod(copy, (nbc_devptr_t)(base + handle->offset), (size_t)handle->size);
    if (st == NBC_OK) st = nbc_context_synchronize(context);
    nbc__context_leave(pushed);
  }
  st = unmap_in(exporter, base, st);
  if (st != NBC_OK) {
    if (copy) nbc_mem_free(copy);
    return st;
  }
  *pptr = copy;
  return NBC_OK;
}

nbc_status_t nbc_ipc_close(nbc_devptr_t ptr) {
  nbc__ptr_record_t *r = nbc__ptrtable_remove(&table, (uintptr_t)ptr, 0);
  if (!r)
    return nbc__set_error(NBC_INVALID_ARGUMENT,
                          "nbc_ipc_close: 0x%llx is not an open IPC mapping (not returned by "
                          "nbc_ipc_open, or closed already)",
                          (unsigned long long)ptr);
  ipc_mapping *m = (ipc_mapping *)r;
  if (nbc__outlived(r->context, r->lifetime)) { /* unmapped with its context */
    free(m);
    return NBC_OK;
  }
  int pushed;
  nbc_status_t st = nbc__context_enter(r->context, &pushed);
  if (st == NBC_OK) {
    CUresult res = nbc__cu.cuIpcCloseMemHandle(m->base);
    nbc__context_leave(pushed);
    if (res != NBC__CUDA_SUCCESS)
      st = nbc__driver_failf("cuIpcCloseMemHandle", res, " (mapping at 0x%llx)",
                             (unsigned long long)m->base);
  }
  if (st != NBC_OK) {
    nbc__ptrtable_insert(&table, r); /* still mapped: it can be closed again */
    return st;
  }
  free(m);
  return NBC_OK;
}
