/* stream.c — streams: created, default (0), legacy (1), per-thread (2) and external ones;
 * synchronize, query and host callbacks.
 *
 * An nbc_stream_t wraps a CUstream and remembers what kind it is, which decides its repr and
 * whether nbc_stream_destroy may destroy the driver stream: only streams nbc_stream_create
 * made are ever destroyed; the three default streams are library singletons and external
 * streams belong to their creator (numba-cuda-behaviour.md §2.16).
 *
 * With NBCUDA_PER_THREAD_DEFAULT_STREAM=1 the entry points are the driver's _ptsz variants,
 * so handle 0 (the default stream) means the calling thread's default stream, as in CUDA.
 *
 * Making a stream costs the driver some 5 µs (cuStreamCreate + cuStreamDestroy, H200), so a
 * stream nbc_stream_destroy finds idle (cuStreamQuery: nothing queued is pending, no capture)
 * is not destroyed but kept by its context, up to NBC__IDLE_STREAMS, and the next
 * nbc_stream_create there takes it: the same blocking stream as a new one, since nothing
 * nbcuda offers changes a stream's settings. A busy stream is destroyed as before (its work
 * completes). The kept streams go with their context: nbc_context_reset destroys them, and
 * after a release of the context they are forgotten (the driver destroyed them).
 * NBCUDA_REUSE=0 keeps none (kept.c).
 *
 * Callbacks go through cuStreamAddCallback with flags 0, like numba. The driver calls them on
 * one of ITS threads once the work queued before them has completed; the trampoline passes
 * the nbcuda stream, the status and the user's argument, then frees its small record. The
 * callback must not call CUDA (the driver forbids it there) and should return quickly.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "host/host.h"

static nbc_stream_t default_stream = {(CUstream)0, NBC_STREAM_DEFAULT, NULL, 0};
static nbc_stream_t legacy_stream = {(CUstream)1, NBC_STREAM_LEGACY, NULL, 0};
static nbc_stream_t per_thread_stream = {(CUstream)2, NBC_STREAM_PER_THREAD, NULL, 0};

static nbc__spares_t spares; /* dead nbc_stream_t records (spares.c) */

static int is_singleton(const nbc_stream_t *s) {
  return s == &default_stream || s == &legacy_stream || s == &per_thread_stream;
}

/* Keeps stream's driver stream for reuse when it is idle and there is room: 1 (also when
 * its context was released meanwhile, which destroyed it), else 0: the caller destroys it. */
static int keep_idle(const nbc_stream_t *stream) {
  nbc_context_t *context = stream->context;
  if (!nbc__reuse_on() ||
      context->kept_streams.count >= NBC__IDLE_STREAMS || /* a racy peek: the lock decides */
      nbc__cu.cuStreamQuery(stream->handle) != NBC__CUDA_SUCCESS)
    return 0;
  return nbc__kept_give(context, &context->kept_streams, NBC__IDLE_STREAMS, stream->lifetime,
                        stream->handle);
}

void nbc__stream_release_idle(nbc_context_t *context) {
  void *idle[NBC__KEPT_MAX];
  unsigned n = nbc__kept_drain(context, &context->kept_streams, idle);
  for (unsigned i = 0; i < n; i++) nbc__cu.cuStreamDestroy(idle[i]);
}

nbc_status_t nbc_stream_create(nbc_stream_t **pstream) {
  if (!pstream) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_stream_create: pstream is NULL");
  *pstream = NULL;
  nbc_context_t *context;
  nbc_status_t st = nbc__context_ensure(&context);
  if (st != NBC_OK) return st;
  nbc_stream_t *s = nbc__spares_take(&spares, sizeof *s);
  if (!s) return nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  unsigned lifetime = atomic_load(&context->lifetime);
  s->handle = nbc__kept_take(context, &context->kept_streams, lifetime);
  CUresult res = s->handle ? NBC__CUDA_SUCCESS : nbc__cu.cuStreamCreate(&s->handle, 0);
  if (res != NBC__CUDA_SUCCESS) {
    nbc__spares_give(&spares, s);
    return nbc__driver_fail("cuStreamCreate", res);
  }
  s->kind = NBC_STREAM_CREATED;
  s->context = context;
  s->lifetime = lifetime;
  *pstream = s;
  return NBC_OK;
}

void nbc_stream_destroy(nbc_stream_t *stream) {
  if (!stream || is_singleton(stream)) return;
  /* A reset destroyed it with its context already. */
  if (stream->kind == NBC_STREAM_CREATED && !NBC__STREAM_GONE(stream) && !keep_idle(stream))
    nbc__cu.cuStreamDestroy(stream->handle);
  nbc__spares_give(&spares, stream);
}

static nbc_status_t get_singleton(nbc_stream_t *s, nbc_stream_t **pstream, const char *fn) {
  if (!pstream) return nbc__set_error(NBC_INVALID_ARGUMENT, "%s: pstream is NULL", fn);
  *pstream = NULL;
  nbc_context_t *context;
  nbc_status_t st = nbc__context_ensure(&context);
  if (st != NBC_OK) return st;
  *pstream = s;
  return NBC_OK;
}

nbc_status_t nbc_default_stream(nbc_stream_t **pstream) {
  return get_singleton(&default_stream, pstream, "nbc_default_stream");
}

nbc_status_t nbc_legacy_default_stream(nbc_stream_t **pstream) {
  return get_singleton(&legacy_stream, pstream, "nbc_legacy_default_stream");
}

nbc_status_t nbc_per_thread_default_stream(nbc_stream_t **pstream) {
  return get_singleton(&per_thread_stream, pstream, "nbc_per_thread_default_stream");
}

nbc_status_t nbc_external_stream(uintptr_t handle, nbc_stream_t **pstream) {
  if (!pstream)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_external_stream: pstream is NULL");
  *pstream = NULL;
  nbc_context_t *context;
  nbc_status_t st = nbc__context_ensure(&context);
  if (st != NBC_OK) return st;
  nbc_stream_t *s = nbc__spares_take(&spares, sizeof *s);
  if (!s) return nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  s->handle = (CUstream)handle;
  s->kind = NBC_STREAM_EXTERNAL;
  s->context = NULL; /* its creator owns it: nbcuda cannot know when it goes */
  s->lifetime = 0;
  *pstream = s;
  return NBC_OK;
}

uintptr_t nbc_stream_handle(const nbc_stream_t *stream) {
  return stream ? (uintptr_t)stream->handle : 0;
}

nbc_stream_kind_t nbc_stream_kind(const nbc_stream_t *stream) {
  return stream ? stream->kind : NBC_STREAM_DEFAULT;
}

nbc_context_t *nbc_stream_context(const nbc_stream_t *stream) {
  return stream && stream->kind == NBC_STREAM_CREATED ? stream->context : NULL;
}

/* numba's Stream.__repr__: the handle decides the default-stream names first. */
void nbc_stream_repr(const nbc_stream_t *stream, char *buf, size_t size) {
  if (!buf || size == 0) return;
  uintptr_t h = nbc_stream_handle(stream);
  if (h == 0)
    snprintf(buf, size, "<Default CUDA stream>");
  else if (h == 1)
    snprintf(buf, size, "<Legacy default CUDA stream>");
  else if (h == 2)
    snprintf(buf, size, "<Per-thread default CUDA stream>");
  else if (stream->kind == NBC_STREAM_EXTERNAL)
    snprintf(buf, size, "<External CUDA stream %" PRIuPTR ">", h);
  else
    snprintf(buf, size, "<CUDA stream %" PRIuPTR ">", h);
}

nbc_status_t nbc_stream_synchronize(nbc_stream_t *stream) {
  NBC__ENSURE_DRIVER();
  if (NBC__STREAM_GONE(stream)) return nbc__outlived_fail("cuStreamSynchronize", "stream");
  CUresult res = nbc__cu.cuStreamSynchronize(stream ? stream->handle : NULL);
  if (__builtin_expect(res == NBC__CUDA_SUCCESS, 1)) return NBC_OK;
  if (nbc__context_retry(res)) res = nbc__cu.cuStreamSynchronize(stream ? stream->handle : NULL);
  if (res == NBC__CUDA_SUCCESS) return NBC_OK;
  return nbc__driver_fail("cuStreamSynchronize", res);
}

nbc_status_t nbc_stream_wait_handle(nbc_stream_t *stream, uintptr_t producer) {
  NBC__ENSURE_DRIVER();
  if (NBC__STREAM_GONE(stream)) return nbc__outlived_fail("cuStreamWaitEvent", "stream");
  CUstream consumer = stream ? stream->handle : NULL;
  /* the same stream: handle 0 is the legacy default stream (0x1), or the per-thread one
   * (0x2) when the driver's entry points are the per-thread-default-stream variants */
  uintptr_t same = (uintptr_t)consumer;
  if (!same) same = nbc_driver_per_thread_default_stream() ? 2 : 1;
  if ((uintptr_t)consumer == producer || same == producer) return NBC_OK;
  CUevent event = NULL;
  const char *call = "cuEventCreate";
  CUresult res = nbc__cu.cuEventCreate(&event, NBC__CU_EVENT_DISABLE_TIMING);
  if (res == NBC__CUDA_SUCCESS) {
    call = "cuEventRecord";
    res = nbc__cu.cuEventRecord(event, (CUstream)producer);
  }
  if (res == NBC__CUDA_SUCCESS) {
    call = "cuStreamWaitEvent";
    res = nbc__cu.cuStreamWaitEvent(consumer, event, 0);
  }
  if (event) nbc__cu.cuEventDestroy(event); /* a pending wait keeps what it needs */
  if (res == NBC__CUDA_SUCCESS) return NBC_OK;
  return nbc__driver_failf(call, res, " (waiting for stream 0x%llx)",
                           (unsigned long long)producer);
}

nbc_status_t nbc_stream_query(nbc_stream_t *stream) {
  NBC__ENSURE_DRIVER();
  if (NBC__STREAM_GONE(stream)) return nbc__outlived_fail("cuStreamQuery", "stream");
  CUresult res = nbc__cu.cuStreamQuery(stream ? stream->handle : NULL);
  if (__builtin_expect(res == NBC__CUDA_SUCCESS, 1)) return NBC_OK;
  if (res == NBC__CUDA_ERROR_NOT_READY) return NBC_NOT_READY;
  if (nbc__context_retry(res)) {
    res = nbc__cu.cuStreamQuery(stream ? stream->handle : NULL);
    if (res == NBC__CUDA_SUCCESS) return NBC_OK;
    if (res == NBC__CUDA_ERROR_NOT_READY) return NBC_NOT_READY;
  }
  return nbc__driver_fail("cuStreamQuery", res);
}

typedef struct callback_record {
  nbc_stream_t *stream;
  nbc_stream_callback_t callback;
  void *arg;
} callback_record;

/* Runs on a driver thread. */
static void trampoline(CUstream handle, CUresult status, void *user_data) {
  (void)handle;
  callback_record *r = user_data;
  r->callback(r->stream, nbc__status_from_curesult(status), r->arg);
  free(r);
}

nbc_status_t nbc_stream_add_callback(nbc_stream_t *stream, nbc_stream_callback_t callback,
                                     void *arg) {
  if (!callback)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_stream_add_callback: callback is NULL");
  NBC__ENSURE_DRIVER();
  if (!stream) stream = &default_stream;
  if (NBC__STREAM_GONE(stream)) return nbc__outlived_fail("cuStreamAddCallback", "stream");
  callback_record *r = malloc(sizeof *r);
  if (!r) return nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  r->stream = stream;
  r->callback = callback;
  r->arg = arg;
  CUresult res = nbc__cu.cuStreamAddCallback(stream->handle, trampoline, r, 0);
  if (res != NBC__CUDA_SUCCESS && nbc__context_retry(res))
    res = nbc__cu.cuStreamAddCallback(stream->handle, trampoline, r, 0);
  if (res != NBC__CUDA_SUCCESS) {
    free(r); /* the driver did not take it: the callback will never run */
    return nbc__driver_fail("cuStreamAddCallback", res);
  }
  return NBC_OK;
}
