/* event.c — CUDA events: create (with or without timing), record on a stream, query,
 * synchronize, make a stream wait, and the elapsed time between two events.
 *
 * nbcuda remembers whether an event was created with timing, so that asking the elapsed time
 * of a non-timing event is a clear NBC_NOT_TIMING_EVENT before the driver is asked (the
 * driver would only say CUDA_ERROR_INVALID_HANDLE). Everything else is one driver call; a
 * pending event is NBC_NOT_READY, not an error (numba's Event.query() is False).
 *
 * cuEventCreate + cuEventDestroy cost the driver some 0.4 µs (H200), as much as the rest of
 * a Python event() call, so an event nbc_event_destroy finds complete is kept by its context,
 * up to NBC__IDLE_EVENTS of each timing, and the next nbc_event_create of that timing takes
 * it (one never recorded needs no cuEventQuery to know). A complete event behaves as a new one
 * for everything a caller can ask — query and synchronize succeed, a stream's wait on it is
 * a no-op — except cuEventElapsedTime, which would answer with its old record's time where a
 * new event is CUDA_ERROR_INVALID_HANDLE; so nbcuda remembers whether the event was recorded
 * since it was made and answers that error itself (the handle is never handed out, so no
 * one else records it). The kept events go with their context like kept streams: a reset
 * destroys them, a release makes them stale (the driver destroyed them). NBCUDA_REUSE=0 keeps
 * none (kept.c).
 */
#include "host/host.h"

static nbc__spares_t spares; /* dead nbc_event_t records (spares.c) */

/* Keeps event's driver event for reuse when it is complete and there is room: 1 (also when
 * its context was released meanwhile, which destroyed it), else 0: the caller destroys it. */
static int keep_idle(const nbc_event_t *event) {
  nbc_context_t *context = event->context;
  nbc__kept_t *kept = &context->kept_events[event->timing];
  if (!nbc__reuse_on() || kept->count >= NBC__IDLE_EVENTS || /* a racy peek: the lock decides */
      (event->recorded && nbc__cu.cuEventQuery(event->handle) != NBC__CUDA_SUCCESS))
    return 0;
  return nbc__kept_give(context, kept, NBC__IDLE_EVENTS, event->lifetime, event->handle);
}

void nbc__event_release_idle(nbc_context_t *context) {
  void *idle[NBC__KEPT_MAX];
  for (int timing = 0; timing < 2; timing++) {
    unsigned n = nbc__kept_drain(context, &context->kept_events[timing], idle);
    for (unsigned i = 0; i < n; i++) nbc__cu.cuEventDestroy(idle[i]);
  }
}

nbc_status_t nbc_event_create(int timing, nbc_event_t **pevent) {
  if (!pevent) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_event_create: pevent is NULL");
  *pevent = NULL;
  nbc_context_t *context;
  nbc_status_t st = nbc__context_ensure(&context);
  if (st != NBC_OK) return st;
  nbc_event_t *e = nbc__spares_take(&spares, sizeof *e);
  if (!e) return nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  timing = timing != 0;
  unsigned lifetime = atomic_load(&context->lifetime);
  e->handle = nbc__kept_take(context, &context->kept_events[timing], lifetime);
  CUresult res = e->handle ? NBC__CUDA_SUCCESS
                           : nbc__cu.cuEventCreate(&e->handle,
                                                   timing ? 0u : NBC__CU_EVENT_DISABLE_TIMING);
  if (res != NBC__CUDA_SUCCESS) {
    nbc__spares_give(&spares, e);
    return nbc__driver_fail("cuEventCreate", res);
  }
  e->timing = timing;
  e->recorded = 0;
  e->context = context;
  e->lifetime = lifetime;
  *pevent = e;
  return NBC_OK;
}

void nbc_event_destroy(nbc_event_t *event) {
  if (!event) return;
  /* A reset destroyed it with its context already. */
  if (!NBC__EVENT_GONE(event) && !keep_idle(event)) nbc__cu.cuEventDestroy(event->handle);
  nbc__spares_give(&spares, event);
}

int nbc_event_is_timing(const nbc_event_t *event) { return event && event->timing; }

nbc_context_t *nbc_event_context(const nbc_event_t *event) {
  return event ? event->context : NULL;
}

nbc_status_t nbc_event_record(nbc_event_t *event, nbc_stream_t *stream) {
  if (!event) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_event_record: event is NULL");
  if (NBC__EVENT_GONE(event)) return nbc__outlived_fail("cuEventRecord", "event");
  if (NBC__STREAM_GONE(stream)) return nbc__outlived_fail("cuEventRecord", "stream");
  CUresult res = nbc__cu.cuEventRecord(event->handle, stream ? stream->handle : NULL);
  if (__builtin_expect(res == NBC__CUDA_SUCCESS, 1)) {
    event->recorded = 1;
    return NBC_OK;
  }
  return nbc__driver_fail("cuEventRecord", res);
}

nbc_status_t nbc_event_query(nbc_event_t *event) {
  if (!event) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_event_query: event is NULL");
  if (NBC__EVENT_GONE(event)) return nbc__outlived_fail("cuEventQuery", "event");
  CUresult res = nbc__cu.cuEventQuery(event->handle);
  if (__builtin_expect(res == NBC__CUDA_SUCCESS, 1)) return NBC_OK;
  if (res == NBC__CUDA_ERROR_NOT_READY) return NBC_NOT_READY;
  return nbc__driver_fail("cuEventQuery", res);
}

nbc_status_t nbc_event_synchronize(nbc_event_t *event) {
  if (!event)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_event_synchronize: event is NULL");
  if (NBC__EVENT_GONE(event)) return nbc__outlived_fail("cuEventSynchronize", "event");
  NBC__CHECK("cuEventSynchronize", nbc__cu.cuEventSynchronize(event->handle));
  return NBC_OK;
}

nbc_status_t nbc_event_wait(nbc_event_t *event, nbc_stream_t *stream) {
  if (!event) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_event_wait: event is NULL");
  if (NBC__EVENT_GONE(event)) return nbc__outlived_fail("cuStreamWaitEvent", "event");
  if (NBC__STREAM_GONE(stream)) return nbc__outlived_fail("cuStreamWaitEvent", "stream");
  NBC__CHECK("cuStreamWaitEvent",
             nbc__cu.cuStreamWaitEvent(stream ? stream->handle : NULL, event->handle, 0));
  return NBC_OK;
}

nbc_status_t nbc_event_elapsed_time(nbc_event_t *start, nbc_event_t *end, float *pms) {
  if (!start || !end || !pms)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_event_elapsed_time: NULL argument");
  if (__builtin_expect(!start->timing || !end->timing, 0))
    return nbc__set_error(NBC_NOT_TIMING_EVENT,
                          "cuEventElapsedTime: the %s event was created with timing disabled "
                          "(nbc_event_create(0, ...)); create both events with timing",
                          !start->timing ? "start" : "end");
  if (NBC__EVENT_GONE(start) || NBC__EVENT_GONE(end))
    return nbc__outlived_fail("cuEventElapsedTime",
                              NBC__EVENT_GONE(start) ? "start event" : "end event");
  /* The driver's answer for a new event never recorded, which a kept one would not give. */
  if (__builtin_expect(!start->recorded || !end->recorded, 0))
    return nbc__driver_fail("cuEventElapsedTime", NBC__CUDA_ERROR_INVALID_HANDLE);
  CUresult res = nbc__cu.cuEventElapsedTime(pms, start->handle, end->handle);
  if (__builtin_expect(res == NBC__CUDA_SUCCESS, 1)) return NBC_OK;
  if (res == NBC__CUDA_ERROR_NOT_READY) {
    nbc__driver_fail("cuEventElapsedTime", res);
    return NBC_NOT_READY;
  }
  return nbc__driver_fail("cuEventElapsedTime", res);
}
