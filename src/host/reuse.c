/* reuse.c — freed device blocks kept by their context for the next allocation of their size.
 *
 * cuMemAlloc + cuMemFree cost the driver some 2.1 µs (H200), and cuMemFree waits for the
 * device's work queued before it (the driver's own guarantee that a freed address handed out
 * again is no longer read or written by anything in flight). nbc_mem_free keeps a small block
 * instead (memory.c); the next allocation of the same size in that context takes it back and
 * gives the same guarantee the cheaper way: unless a context-wide synchronization begun after
 * the free has completed since (the numbers of kept blocks, kept_frees and synced_frees of the
 * context), it synchronizes the context first (cuCtxSynchronize of an idle device: some
 * 0.3 µs). So a reused block is as safe as a new one, and a free never waits. That
 * synchronization would also wait for work queued after the free, which neither the saved
 * cuMemFree nor cuMemAlloc waits for: a block that needs it while kernels were launched in the
 * context since its free (the context's launch count, launch.c) stays kept, and the allocation
 * goes to the driver, so reuse never makes an allocation wait for later work nbcuda queued.
 *
 * Held back: at most NBC__REUSE_MAX blocks of at most 4 MiB each and 32 MiB in all per
 * context (NBCUDA_REUSE_BYTES sets the total, 0 turns reuse off, as NBCUDA_REUSE=0 turns off
 * every reuse: kept.c); a block pushed out by a
 * newer one is freed then. Blocks go back to the driver on nbc_context_get_memory_info (its
 * answer counts them free, as if freed at once), on nbc_context_release_freed, on a reset, and
 * when an allocation runs out of memory (it is retried). Blocks exported through IPC are never
 * kept: another process may map them. Nor is a block freed while another device's primary
 * context is active in the process (cuDevicePrimaryCtxGetState; nbcuda's or another library's):
 * a peer copy or a kernel with peer access there could still be reading it, and synchronizing
 * the block's own context would not wait for that. (Contexts made with cuCtxCreate, which
 * nothing of numba's uses, are not seen.)
 *
 * The list belongs to the context's lifetime, as kept.c's: after a release (reset) the driver
 * has freed what it held. Every section moves a few words under the context's reuse_busy spin
 * lock.
 */
#include <stdlib.h>
#include <string.h>

#include "host/host.h"

#define BLOCK_BYTES_MAX ((size_t)4 << 20)
#define TOTAL_BYTES_DEFAULT ((size_t)32 << 20)

/* The total a context may hold back, read once from NBCUDA_REUSE_BYTES; 0 when
 * NBCUDA_REUSE=0. */
static size_t total_limit(void) {
  static _Atomic size_t cached = SIZE_MAX; /* SIZE_MAX: not read yet */
  size_t limit = atomic_load_explicit(&cached, memory_order_relaxed);
  if (__builtin_expect(limit != SIZE_MAX, 1)) return limit;
  const char *env = getenv("NBCUDA_REUSE_BYTES");
  limit = nbc__reuse_on() ? TOTAL_BYTES_DEFAULT : 0;
  if (limit && env && *env) {
    char *end;
    unsigned long long v = strtoull(env, &end, 10);
    if (*end == '\0' && v < SIZE_MAX) limit = (size_t)v;
  }
  atomic_store_explicit(&cached, limit, memory_order_relaxed);
  return limit;
}

/* Whether a device other than context's has an active primary context in this process
 * (nbcuda's, or another library's): work queued there could still use the block, and
 * synchronizing context would not wait for it. */
static int other_device_active(const nbc_context_t *context) {
  nbc_device_t *devices;
  int count;
  if (nbc__devices(&devices, &count) != NBC_OK) return 1;
  for (int i = 0; i < count; i++) {
    if (devices[i].primary == context) continue;
    if (atomic_load_explicit(&devices[i].primary->handle, memory_order_relaxed))
      return 1; /* nbcuda's own: no need to ask */
    unsigned flags;
    int active = 1;
    if (nbc__cu.cuDevicePrimaryCtxGetState(devices[i].handle, &flags, &active) !=
            NBC__CUDA_SUCCESS ||
        active)
      return 1;
  }
  return 0;
}

/* Whether a synchronization begun after block `number` was kept has completed. */
static int synced_since(const nbc_context_t *context, unsigned number) {
  unsigned synced = atomic_load_explicit(&context->synced_frees, memory_order_acquire);
  return (int)(synced - number) >= 0;
}

/* Drops blocks of an older lifetime (the driver freed them). Lock held. */
static void current_lifetime(nbc__reuse_t *reuse, unsigned lifetime) {
  if (reuse->lifetime == lifetime) return;
  reuse->count = 0;
  reuse->bytes = 0;
  reuse->lifetime = lifetime;
}

int nbc__reuse_keep(nbc_context_t *context, unsigned lifetime, CUdeviceptr ptr, size_t bytes,
                    CUdeviceptr evicted[NBC__REUSE_MAX], unsigned *pevicted) {
  *pevicted = 0;
  size_t limit = total_limit();
  if (bytes == 0 || bytes > BLOCK_BYTES_MAX || bytes > limit || other_device_active(context))
    return 0;
  int kept = 0;
  nbc__spin_lock(&context->reuse_busy);
  nbc__reuse_t *reuse = &context->reuse;
  if (lifetime == atomic_load(&context->lifetime)) {
    current_lifetime(reuse, lifetime);
    /* the oldest make room: one for the count, as many as the bytes need (bytes <= limit) */
    unsigned out = 0;
    while (out < reuse->count &&
           (reuse->count - out == NBC__REUSE_MAX || reuse->bytes + bytes > limit)) {
      evicted[out] = reuse->blocks[out].ptr;
      reuse->bytes -= reuse->blocks[out++].bytes;
    }
    reuse->count -= out;
    memmove(&reuse->blocks[0], &reuse->blocks[out], reuse->count * sizeof reuse->blocks[0]);
    *pevicted = out;
    unsigned number = atomic_load_explicit(&context->kept_frees, memory_order_relaxed) + 1;
    atomic_store_explicit(&context->kept_frees, number, memory_order_release); /* locked */
    reuse->blocks[reuse->count++] = (nbc__reuse_block_t){
        ptr, bytes, number, __atomic_load_n(&context->launches, __ATOMIC_RELAXED)};
    reuse->bytes += bytes;
    kept = 1;
  }
  nbc__spin_unlock(&context->reuse_busy);
  return kept;
}

int nbc__reuse_take(nbc_context_t *context, size_t bytes, CUdeviceptr *pptr, int *pidle) {
  int found = 0;
  if (!__atomic_load_n(&context->reuse.count, __ATOMIC_RELAXED)) return 0; /* a hint */
  unsigned launches = __atomic_load_n(&context->launches, __ATOMIC_RELAXED);
  nbc__spin_lock(&context->reuse_busy);
  nbc__reuse_t *reuse = &context->reuse;
  current_lifetime(reuse, atomic_load(&context->lifetime));
  for (unsigned i = reuse->count; i-- > 0;) { /* the newest first: the likeliest idle */
    const nbc__reuse_block_t *b = &reuse->blocks[i];
    if (b->bytes != bytes) continue;
    int idle = synced_since(context, b->number);
    if (!idle && b->launches != launches) continue; /* a synchronization would wait for more */
    *pptr = b->ptr;
    *pidle = idle;
    reuse->bytes -= bytes;
    memmove(&reuse->blocks[i], &reuse->blocks[i + 1],
            (--reuse->count - i) * sizeof reuse->blocks[0]);
    found = 1;
    break;
  }
  nbc__spin_unlock(&context->reuse_busy);
  return found;
}

unsigned nbc__reuse_drain(nbc_context_t *context, CUdeviceptr out[NBC__REUSE_MAX]) {
  if (!__atomic_load_n(&context->reuse.count, __ATOMIC_RELAXED)) return 0; /* a hint */
  nbc__spin_lock(&context->reuse_busy);
  nbc__reuse_t *reuse = &context->reuse;
  current_lifetime(reuse, atomic_load(&context->lifetime));
  unsigned n = reuse->count;
  for (unsigned i = 0; i < n; i++) out[i] = reuse->blocks[i].ptr;
  reuse->count = 0;
  reuse->bytes = 0;
  nbc__spin_unlock(&context->reuse_busy);
  return n;
}

void nbc__reuse_count(nbc_context_t *context, size_t *pblocks, size_t *pbytes) {
  nbc__spin_lock(&context->reuse_busy);
  nbc__reuse_t *reuse = &context->reuse;
  current_lifetime(reuse, atomic_load(&context->lifetime));
  *pblocks = reuse->count;
  *pbytes = reuse->bytes;
  nbc__spin_unlock(&context->reuse_busy);
}
