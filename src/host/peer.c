/* peer.c — memory shared between devices: whether one device can map another's memory,
 * enabling that mapping for the current context, and copies between two contexts.
 *
 * numba-cuda has no public API for this (its driver module calls cuCtxEnablePeerAccess for
 * IPC handles only); nbcuda offers the three driver calls every multi-GPU program needs, in
 * nbcuda's terms:
 *   - devices are nbc_device_t and contexts are nbcuda's primary-context records, so a
 *     caller never handles a CUcontext;
 *   - enabling access is made idempotent: the driver's CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED
 *     means the wanted state already holds, which is success for a caller that cannot know
 *     whether another part of the program enabled it first;
 *   - a device's own context is refused before the driver is asked, with a message that says
 *     so (the driver's answer for it differs between versions);
 *   - cuMemcpyPeer names both contexts, so it needs no current context; the contexts are
 *     retained first (a context record whose device was reset holds no CUcontext until then)
 *     and, like the other copies (memory.c), a thread without any context gets one when a
 *     driver insists on it.
 * Peer mappings belong to the contexts: a reset of either device (nbc_device_reset,
 * nbc_close) removes them, and they must be enabled again afterwards.
 */
#include "host/host.h"

nbc_status_t nbc_device_can_access_peer(const nbc_device_t *device, const nbc_device_t *peer,
                                        int *pcan) {
  if (pcan) *pcan = 0;
  if (!device || !peer || !pcan)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_device_can_access_peer: NULL argument");
  NBC__ENSURE_DRIVER();
  int can = 0;
  CUresult res = nbc__cu.cuDeviceCanAccessPeer(&can, device->handle, peer->handle);
  if (res != NBC__CUDA_SUCCESS)
    return nbc__driver_failf("cuDeviceCanAccessPeer", res, " (device %d, peer %d)", device->id,
                             peer->id);
  /* The driver answers 0 for a device and itself; kept explicit so the documented answer
   * does not depend on the driver version. */
  *pcan = device != peer && can != 0;
  return NBC_OK;
}

nbc_status_t nbc_device_enable_peer_access(nbc_device_t *peer) {
  if (!peer)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_device_enable_peer_access: peer is NULL");
  nbc_context_t *context;
  nbc_status_t st = nbc__context_ensure(&context);
  if (st != NBC_OK) return st;
  if (context->device == peer)
    return nbc__set_error(NBC_INVALID_ARGUMENT,
                          "cannot enable peer access from device %d to itself: the current "
                          "context is that device's own",
                          peer->id);
  nbc_context_t *peer_context;
  st = nbc__context_primary(peer, &peer_context);
  if (st != NBC_OK) return st;
  CUresult res = nbc__cu.cuCtxEnablePeerAccess(atomic_load(&peer_context->handle), 0);
  if (res == NBC__CUDA_SUCCESS || res == NBC__CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
    return NBC_OK;
  return nbc__driver_failf("cuCtxEnablePeerAccess", res, " (device %d -> peer device %d)",
                           context->device->id, peer->id);
}

/* The CUcontext of a context record, retained if the device was reset since (or never
 * used): NULL with the last error set when that fails. */
static CUcontext retained_handle(nbc_context_t *context, nbc_status_t *pstatus) {
  nbc_context_t *same;
  *pstatus = nbc__context_primary(context->device, &same);
  return *pstatus == NBC_OK ? atomic_load(&context->handle) : NULL;
}

nbc_status_t nbc_memcpy_peer(nbc_devptr_t dst, nbc_context_t *dst_context, nbc_devptr_t src,
                             nbc_context_t *src_context, size_t bytes) {
  if (!dst_context || !src_context)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_memcpy_peer: NULL context");
  NBC__ENSURE_DRIVER();
  nbc_status_t st;
  CUcontext dst_handle = retained_handle(dst_context, &st);
  if (!dst_handle) return st;
  CUcontext src_handle = retained_handle(src_context, &st);
  if (!src_handle) return st;
  CUresult res = nbc__cu.cuMemcpyPeer(dst, dst_handle, src, src_handle, bytes);
  if (res != NBC__CUDA_SUCCESS && nbc__context_retry(res))
    res = nbc__cu.cuMemcpyPeer(dst, dst_handle, src, src_handle, bytes);
  if (res != NBC__CUDA_SUCCESS)
    return nbc__driver_failf("cuMemcpyPeer", res, " (%zu bytes from device %d to device %d)",
                             bytes, src_context->device->id, dst_context->device->id);
  return NBC_OK;
}
