/* host_util.h — helpers of the host API's C tests that count the test driver's allocations.
 *
 * nbc_mem_free keeps small freed blocks for reuse (src/host/reuse.c): the driver still counts
 * them allocated. A test that checks nbcuda freed what it should counts after the current
 * context's kept blocks went back to the driver. */
#ifndef NBCUDA_TEST_HOST_UTIL_H
#define NBCUDA_TEST_HOST_UTIL_H

#include "nbcuda.h"
#include "testdriver.h"

/* The test driver's live device allocations once every retained primary context freed its
 * kept blocks (a context nobody retains is not made). */
static inline int live_allocations_released(void) {
  int n = 0;
  if (nbc_device_count(&n) != NBC_OK) n = 0;
  for (int i = 0; i < n; i++) {
    nbc_device_t *d;
    nbc_context_t *c;
    if (tdrv()->primary_refcount(i) > 0 && nbc_device_get(i, &d) == NBC_OK &&
        nbc_device_primary_context(d, &c) == NBC_OK)
      (void)nbc_context_release_freed(c);
  }
  return tdrv()->live_allocations();
}

#endif
