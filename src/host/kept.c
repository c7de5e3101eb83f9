/* kept.c — driver objects that died unused, kept by their context for the next one made.
 *
 * Creating and destroying a stream costs the driver some 5 µs and an event some 0.4 µs
 * (H200), more than everything else a Python stream() or event() does; a stream found idle
 * or an event found complete when it dies is as good as a new one (stream.c and event.c say
 * why), so its handle goes to a small list of its context instead, and the next create of
 * that kind takes it. The lists belong to the context's lifetime: after a release (reset) the
 * driver has destroyed what they held, so handles of an older lifetime are forgotten, never
 * handed out; nbc_context_reset destroys the current ones through nbc__kept_drain.
 *
 * All lists of a context share its kept_busy spin lock: the sections move a pointer or two.
 *
 * NBCUDA_REUSE=0 turns every reuse off: no stream or event is kept (nor looked at with a
 * query when it dies), and reuse.c keeps no freed device block, so each create and destroy,
 * allocation and free is the driver's own (what bench/host_py.py's "reuse off" rows time).
 */
#include <stdlib.h>
#include <string.h>

#include "host/host.h"

int nbc__reuse_on(void) {
  static _Atomic int cached = -1; /* -1: not read yet */
  int on = atomic_load_explicit(&cached, memory_order_relaxed);
  if (__builtin_expect(on >= 0, 1)) return on;
  const char *env = getenv("NBCUDA_REUSE");
  on = !(env && strcmp(env, "0") == 0);
  atomic_store_explicit(&cached, on, memory_order_relaxed);
  return on;
}

void *nbc__kept_take(nbc_context_t *context, nbc__kept_t *kept, unsigned lifetime) {
  void *handle = NULL;
  nbc__spin_lock(&context->kept_busy);
  if (kept->lifetime != lifetime) kept->count = 0;
  if (kept->count) handle = kept->handles[--kept->count];
  nbc__spin_unlock(&context->kept_busy);
  return handle;
}

int nbc__kept_give(nbc_context_t *context, nbc__kept_t *kept, unsigned limit, unsigned lifetime,
                   void *handle) {
  if (limit > NBC__KEPT_MAX) limit = NBC__KEPT_MAX;
  int taken = 0;
  nbc__spin_lock(&context->kept_busy);
  unsigned now = atomic_load(&context->lifetime);
  if (lifetime != now) {
    taken = 1; /* the release destroyed it */
  } else {
    if (kept->lifetime != now) {
      kept->count = 0;
      kept->lifetime = now;
    }
    if (kept->count < limit) {
      kept->handles[kept->count++] = handle;
      taken = 1;
    }
  }
  nbc__spin_unlock(&context->kept_busy);
  return taken;
}

unsigned nbc__kept_drain(nbc_context_t *context, nbc__kept_t *kept,
                         void *out[NBC__KEPT_MAX]) {
  unsigned lifetime = atomic_load(&context->lifetime), n;
  nbc__spin_lock(&context->kept_busy);
  n = kept->lifetime == lifetime ? kept->count : 0;
  for (unsigned i = 0; i < n; i++) out[i] = kept->handles[i];
  kept->count = 0;
  nbc__spin_unlock(&context->kept_busy);
  return n;
}
