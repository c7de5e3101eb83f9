/* profiler.c — cuProfilerStart / cuProfilerStop (numba's profile_start / profile_stop).
 *
 * Both run with a context attached, as numba's require_context-decorated versions do, so a
 * thread without a context gets device 0's primary context pushed first. The profiler acts on
 * the whole process; nesting and pairing are the caller's business (the Python layer's
 * profiling() context manager stops even when its body raises).
 */
#include "host/host.h"

nbc_status_t nbc_profile_start(void) {
  nbc_context_t *context;
  nbc_status_t st = nbc__context_ensure(&context);
  if (st != NBC_OK) return st;
  NBC__CHECK("cuProfilerStart", nbc__cu.cuProfilerStart());
  return NBC_OK;
}

nbc_status_t nbc_profile_stop(void) {
  nbc_context_t *context;
  nbc_status_t st = nbc__context_ensure(&context);
  if (st != NBC_OK) return st;
  NBC__CHECK("cuProfilerStop", nbc__cu.cuProfilerStop());
  return NBC_OK;
}
