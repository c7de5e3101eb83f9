/* spares.c — freed records of one kind kept for the next one made.
 *
 * Making a stream, an event or a device allocation needs a small record of nbcuda's own; a
 * malloc and a free per record cost some 130 instructions (glibc), half of what the rest of
 * the library's part of such a call costs.
 * Each kind of record has a static nbc__spares_t: nbc__spares_take returns a spare (or a new
 * malloc) and nbc__spares_give keeps a dead one (or frees it, beyond NBC__SPARES_MAX), so
 * making and dropping in turn, the usual pattern, reuses one record. A spare's first bytes
 * hold the link to the next; what stays in the list at exit is reachable from the static.
 *
 * The list is guarded by a spin lock (host.h): uncontended it costs half a pthread mutex's
 * instructions, and the sections are a few pointer moves.
 */
#include <stdlib.h>

#include "host/host.h"

void *nbc__spares_pop(nbc__spares_t *spares) {
  void **object = spares->head;
  if (object) {
    spares->head = *object;
    spares->count--;
  }
  return object;
}

int nbc__spares_push(nbc__spares_t *spares, void *object) {
  if (spares->count >= NBC__SPARES_MAX) return 0;
  *(void **)object = spares->head;
  spares->head = object;
  spares->count++;
  return 1;
}

void *nbc__spares_take(nbc__spares_t *spares, size_t size) {
  nbc__spin_lock(&spares->busy);
  void *object = nbc__spares_pop(spares);
  nbc__spin_unlock(&spares->busy);
  return object ? object : malloc(size < sizeof(void *) ? sizeof(void *) : size);
}

void nbc__spares_give(nbc__spares_t *spares, void *object) {
  if (!object) return;
  nbc__spin_lock(&spares->busy);
  int kept = nbc__spares_push(spares, object);
  nbc__spin_unlock(&spares->busy);
  if (!kept) free(object);
}
