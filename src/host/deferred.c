/* deferred.c — deferred cleanup (numba's `with cuda.defer_cleanup():`).
 *
 * numba queues every deallocation and flushes the queue now and then; inside defer_cleanup()
 * the flush is a no-op, so memory freed in the block stays valid until the block ends (work
 * still queued on a stream may be reading it). nbcuda frees at once outside such a scope (to
 * the blocks kept for reuse, reuse.c, when it may), and inside one it does what numba
 * guarantees: each context counts its open scopes, and a free
 * of that context's memory (nbc_mem_free, nbc_mem_host_free) is queued while the count is
 * above zero. The queue is performed, oldest first, when the outermost scope ends, and by
 * nbc_context_reset (a reset frees everything anyway, and the queued addresses must not
 * outlive it: the driver may hand them out again).
 *
 * The count and the queue live in the context record, guarded by one lock of this file: scopes
 * are rare and short, and a free while none is open anywhere costs one atomic read
 * (nbc__defer_any).
 */
#include <stdlib.h>

#include "host/host.h"

struct nbc__deferred {
  enum nbc__free_kind kind;
  uint64_t ptr;
  struct nbc__deferred *next;
};

static pthread_mutex_t defer_lock = PTHREAD_MUTEX_INITIALIZER;
atomic_uint nbc__defer_scopes;

static unsigned depth_of(const nbc_context_t *context) {
  return __atomic_load_n(&context->defer_depth, __ATOMIC_ACQUIRE);
}

int nbc__defer_free(nbc_context_t *context, enum nbc__free_kind kind, uint64_t ptr) {
  if (!context || __builtin_expect(depth_of(context) == 0, 1)) return 0;
  struct nbc__deferred *d = malloc(sizeof *d);
  if (!d) return 0; /* no room to remember it: free now rather than leak */
  d->kind = kind;
  d->ptr = ptr;
  pthread_mutex_lock(&defer_lock);
  int queued = context->defer_depth > 0; /* the scope may have ended meanwhile */
  if (queued) {
    d->next = context->deferred;
    context->deferred = d;
  }
  pthread_mutex_unlock(&defer_lock);
  if (!queued) free(d);
  return queued;
}

/* Detaches the queue and returns it oldest first. Lock held. */
static struct nbc__deferred *take_queue(nbc_context_t *context) {
  struct nbc__deferred *newest = context->deferred, *oldest = NULL;
  context->deferred = NULL;
  while (newest) {
    struct nbc__deferred *next = newest->next;
    newest->next = oldest;
    oldest = newest;
    newest = next;
  }
  return oldest;
}

static nbc_status_t perform(struct nbc__deferred *queue) {
  nbc_status_t first = NBC_OK;
  while (queue) {
    struct nbc__deferred *next = queue->next;
    nbc_status_t st = queue->kind == NBC__FREE_DEVICE
                          ? nbc__memory_free_now(queue->ptr)
                          : nbc__host_free_now((void *)(uintptr_t)queue->ptr);
    if (first == NBC_OK) first = st;
    free(queue);
    queue = next;
  }
  return first;
}

nbc_status_t nbc__defer_flush(nbc_context_t *context) {
  pthread_mutex_lock(&defer_lock);
  struct nbc__deferred *queue = take_queue(context);
  pthread_mutex_unlock(&defer_lock);
  return perform(queue);
}

nbc_status_t nbc_context_defer_cleanup_begin(nbc_context_t *context) {
  if (!context)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_context_defer_cleanup_begin: context is NULL");
  pthread_mutex_lock(&defer_lock);
  __atomic_store_n(&context->defer_depth, context->defer_depth + 1, __ATOMIC_RELEASE);
  atomic_fetch_add(&nbc__defer_scopes, 1);
  pthread_mutex_unlock(&defer_lock);
  return NBC_OK;
}

nbc_status_t nbc_context_defer_cleanup_end(nbc_context_t *context) {
  if (!context)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_context_defer_cleanup_end: context is NULL");
  pthread_mutex_lock(&defer_lock);
  if (context->defer_depth == 0) {
    pthread_mutex_unlock(&defer_lock);
    return nbc__set_error(NBC_INVALID_ARGUMENT,
                          "nbc_context_defer_cleanup_end: no deferred-cleanup scope is open "
                          "for device %d's context",
                          context->device->id);
  }
  unsigned depth = context->defer_depth - 1;
  __atomic_store_n(&context->defer_depth, depth, __ATOMIC_RELEASE);
  atomic_fetch_sub(&nbc__defer_scopes, 1);
  struct nbc__deferred *queue = depth == 0 ? take_queue(context) : NULL;
  pthread_mutex_unlock(&defer_lock);
  /* The frees need no current context (cuMemFree and cuMemFreeHost act on the address), and
   * the driver is loaded: something was allocated. */
  return perform(queue);
}

nbc_status_t nbc_context_deferred(const nbc_context_t *context, size_t *ppending,
                                  unsigned *pdepth) {
  if (!context)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_context_deferred: context is NULL");
  pthread_mutex_lock(&defer_lock);
  size_t n = 0;
  for (const struct nbc__deferred *d = context->deferred; d; d = d->next)
    n++;
  unsigned depth = context->defer_depth;
  pthread_mutex_unlock(&defer_lock);
  if (ppending) *ppending = n;
  if (pdepth) *pdepth = depth;
  return NBC_OK;
}
