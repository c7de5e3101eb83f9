/* staging.c — copies from the device into pageable host memory through a page-locked buffer.
 *
 * The driver copies device memory into pageable host memory through page-locked memory of its
 * own; on an H200 (driver 580, bench/staging_probe.c) a synchronous cuMemcpyDtoH into
 * pageable memory took 0.6–0.8 µs longer for 8 B–4 KiB, 1.4 µs at 16 KiB, 3 µs at 64 KiB and
 * 18 µs at 1 MiB than a copy into page-locked memory followed by memcpy; at 4 MiB the direct
 * copy won.
 * (Host to device has no such gain: the driver's pageable path was the faster for small
 * copies, so nbc_memcpy_htod stays direct.)
 *
 * Each context keeps one page-locked buffer (CU_MEMHOSTALLOC_PORTABLE), allocated on first use
 * and grown by powers of two up to NBC__STAGING_MAX. One copy uses it at a time: a thread that
 * finds it busy, or a copy larger than the limit, takes the direct path; if the buffer cannot
 * be allocated the context stops trying. A reset of the context frees it with the context's
 * other memory (nbc__memory_release_context), before the driver would.
 */
#include <string.h>

#include "host/host.h"

#define NBC__STAGING_MIN ((size_t)64 << 10)
#define NBC__STAGING_MAX ((size_t)1 << 20)
#define NBC__CU_MEMHOSTALLOC_PORTABLE 0x01u

/* The buffer of context, at least bytes long (context taken and current); NULL to copy
 * directly. */
static void *buffer_for(nbc_context_t *context, size_t bytes) {
  if (context->staging_bytes >= bytes) return context->staging;
  if (context->staging_failed) return NULL;
  size_t size = context->staging_bytes ? context->staging_bytes : NBC__STAGING_MIN;
  while (size < bytes) size *= 2;
  void *p = NULL;
  if (nbc__cu.cuMemHostAlloc(&p, size, NBC__CU_MEMHOSTALLOC_PORTABLE) != NBC__CUDA_SUCCESS) {
    context->staging_failed = 1; /* the direct path from now on */
    return NULL;
  }
  if (context->staging) nbc__cu.cuMemFreeHost(context->staging);
  context->staging = p;
  context->staging_bytes = size;
  return p;
}

nbc_status_t nbc_memcpy_dtoh_pageable(void *dst, nbc_devptr_t src, size_t bytes) {
  nbc_context_t *context;
  if (bytes == 0 || bytes > NBC__STAGING_MAX || nbc__context_ensure(&context) != NBC_OK ||
      atomic_exchange_explicit(&context->staging_busy, 1, memory_order_acquire)) /* taken */
    return nbc_memcpy_dtoh(dst, src, bytes);
  void *staging = buffer_for(context, bytes);
  if (!staging) {
    nbc__spin_unlock(&context->staging_busy);
    return nbc_memcpy_dtoh(dst, src, bytes);
  }
  CUresult res = nbc__cu.cuMemcpyDtoH(staging, src, bytes);
  if (res == NBC__CUDA_SUCCESS) memcpy(dst, staging, bytes);
  nbc__spin_unlock(&context->staging_busy);
  if (res == NBC__CUDA_SUCCESS) return NBC_OK;
  return nbc__driver_failf("cuMemcpyDtoH", res, " (%zu bytes)", bytes);
}

void nbc__staging_release(nbc_context_t *context) {
  nbc__spin_lock(&context->staging_busy); /* a copy of another thread finishing with it */
  if (context->staging) nbc__cu.cuMemFreeHost(context->staging);
  context->staging = NULL;
  context->staging_bytes = 0;
  context->staging_failed = 0;
  nbc__spin_unlock(&context->staging_busy);
}
