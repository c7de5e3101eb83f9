/* td_stream.c — streams and events of the test driver.
 *
 * Each stream (created ones, and one default stream per context for the handles 0,
 * CU_STREAM_LEGACY and CU_STREAM_PER_THREAD) owns a FIFO of td_op and a worker thread,
 * started on the first enqueue, that executes the ops in order: async copies, event
 * records (timestamp = monotonic clock in ms when executed), waits on events, host
 * callbacks and kernel "launches" (which only sleep for the launch delay). An op stays at
 * the head of its queue while it runs, so "the queue is empty" is exactly "the stream is
 * idle", which is what cuStreamQuery, cuStreamSynchronize and cuCtxSynchronize test.
 *
 * Everything is guarded by td__lock. The worker drops the lock while it runs a callback,
 * a host function or a launch delay (user code may call back into the driver), and
 * td__cond is broadcast after every op, so all waiters can recheck their condition.
 *
 * Events: recording bumps the event's record_seq and queues a TD_OP_RECORD carrying that
 * number; executing it sets done_seq and the timestamp. The event is complete when
 * done_seq == record_seq (an event never recorded is complete, as in the real driver).
 * Ops hold a reference on their event so that destroying an event with work in flight is
 * safe; the event is freed when it is destroyed and unreferenced.
 *
 * Destroying a stream lets its queued work finish (cuStreamDestroy) or drops it (context
 * reset/destroy, where the real driver also never runs pending callbacks); the worker is
 * joined, unless the caller is that very worker (a callback destroying its own stream),
 * in which case the worker frees the stream itself when it exits.
 *
 * Simplification: the legacy default stream does not order itself against blocking
 * streams for async work; the synchronous copies (td_memory.c) do wait for the default
 * stream and every blocking stream, which is the ordering tests rely on.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "td.h"

struct CUevent_st {
  struct CUctx_st *ctx;
  unsigned flags;
  uint64_t record_seq;
  uint64_t done_seq;
  double timestamp_ms;
  int destroyed;
  int refs;
  struct CUevent_st *next;
};

struct CUstream_st {
  struct CUctx_st *ctx;
  unsigned flags;
  int is_default;
  td_op *head, *tail;
  pthread_t worker;
  int worker_started;
  int exiting;   /* the worker leaves once the queue is empty */
  int discard;   /* drop queued ops instead of running them */
  int self_free; /* destroyed from its own worker: the worker frees it */
  CUresult error;
  pthread_cond_t work;
  struct CUstream_st *next;
};

static struct CUstream_st *streams; /* created and default streams, all contexts */
static struct CUevent_st *events;   /* live events */

int td__live_streams(void) {
  int n = 0;
  for (struct CUstream_st *s = streams; s; s = s->next)
    n += !s->is_default;
  return n;
}

int td__live_events(void) {
  int n = 0;
  for (struct CUevent_st *e = events; e; e = e->next)
    n++;
  return n;
}

static void event_unref(struct CUevent_st *e) {
  if (--e->refs == 0 && e->destroyed) free(e);
}

/* ---- the worker ----------------------------------------------------------------------- */

static void run_copy(struct CUstream_st *s, td_op *op) {
  unsigned char *dev = td__mem_resolve(op->dptr, op->bytes);
  if (!dev) {
    /* The allocation went away after the copy was queued: on a GPU that is a fault. */
    if (s->error == CUDA_SUCCESS) s->error = CUDA_ERROR_ILLEGAL_ADDRESS;
    return;
  }
  if (op->bytes == 0) return;
  if (op->kind == TD_OP_SET)
    memset(dev, op->value, op->bytes);
  else if (op->kind == TD_OP_HTOD)
    memmove(dev, op->chost, op->bytes);
  else
    memmove(op->host, dev, op->bytes);
}

/* Runs one op; the lock is held on entry and on return. */
static void run_op(struct CUstream_st *s, td_op *op) {
  switch (op->kind) {
  case TD_OP_HTOD:
  case TD_OP_DTOH:
  case TD_OP_SET:
    run_copy(s, op);
    break;
  case TD_OP_RECORD:
    op->event->timestamp_ms = td__now_ms();
    if (op->event->done_seq < op->seq) op->event->done_seq = op->seq;
    break;
  case TD_OP_WAIT:
    while (op->event->done_seq < op->seq && !op->event->destroyed && !s->discard)
      pthread_cond_wait(&td__cond, &td__lock);
    break;
  case TD_OP_CALLBACK:
  case TD_OP_HOSTFN: {
    CUresult status = s->error;
    td__host_callbacks_run++;
    pthread_mutex_unlock(&td__lock);
    if (op->kind == TD_OP_CALLBACK)
      op->callback(s->is_default ? NULL : s, status, op->user);
    else
      op->hostfn(op->user);
    pthread_mutex_lock(&td__lock);
    break;
  }
  case TD_OP_LAUNCH:
    if (op->delay_ms > 0) {
      pthread_mutex_unlock(&td__lock);
      struct timespec ts = {op->delay_ms / 1000, (long)(op->delay_ms % 1000) * 1000000L};
      while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
      }
      pthread_mutex_lock(&td__lock);
    }
    if (op->launch) {
      CUresult r = td__kernel_run(op);
      if (r != CUDA_SUCCESS && s->error == CUDA_SUCCESS) s->error = r;
    }
    break;
  }
}

static void op_free(td_op *op) {
  if (op->event) event_unref(op->event);
  free(op->launch);
  free(op->staged);
  if (op->program) td__program_unref(op->program);
  free(op);
}

static void *worker_main(void *arg) {
  struct CUstream_st *s = arg;
  pthread_mutex_lock(&td__lock);
  for (;;) {
    while (!s->head && !s->exiting)
      pthread_cond_wait(&s->work, &td__lock);
    if (!s->head) break;
    td_op *op = s->head;
    if (s->discard) {
      /* A dropped record still completes its event, so nobody waits on it forever. */
      if (op->kind == TD_OP_RECORD && op->event->done_seq < op->seq)
        op->event->done_seq = op->seq;
    } else {
      run_op(s, op);
    }
    s->head = op->next;
    if (!s->head) s->tail = NULL;
    op_free(op);
    pthread_cond_broadcast(&td__cond);
  }
  int self_free = s->self_free;
  pthread_mutex_unlock(&td__lock);
  if (self_free) {
    pthread_cond_destroy(&s->work);
    free(s);
  }
  return NULL;
}

CUresult td__stream_enqueue(struct CUstream_st *s, td_op *op) {
  if (!s->worker_started) {
    if (pthread_create(&s->worker, NULL, worker_main, s) != 0) {
      free(op->launch);
      free(op->staged);
      free(op); /* its event reference is taken below, not yet */
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    s->worker_started = 1;
  }
  if (op->event) op->event->refs++;
  op->next = NULL;
  if (s->tail)
    s->tail->next = op;
  else
    s->head = op;
  s->tail = op;
  pthread_cond_signal(&s->work);
  return CUDA_SUCCESS;
}

CUresult td__stream_wait_idle(struct CUstream_st *s) {
  while (s->head)
    pthread_cond_wait(&td__cond, &td__lock);
  return s->error;
}

/* Waits until every matching stream of ctx is idle. Streams can be destroyed while we
 * sleep, so the list is rescanned from the start after every wait. */
CUresult td__ctx_wait_streams(struct CUctx_st *ctx, int all) {
  CUresult r = CUDA_SUCCESS;
  for (;;) {
    struct CUstream_st *busy = NULL;
    for (struct CUstream_st *s = streams; s && !busy; s = s->next) {
      if (s->ctx != ctx) continue;
      if (!all && !s->is_default && (s->flags & CU_STREAM_NON_BLOCKING)) continue;
      if (s->head) busy = s;
    }
    if (!busy) break;
    pthread_cond_wait(&td__cond, &td__lock);
  }
  for (struct CUstream_st *s = streams; s; s = s->next)
    if (s->ctx == ctx && s->error != CUDA_SUCCESS && r == CUDA_SUCCESS) r = s->error;
  return r;
}

static struct CUstream_st *stream_new(struct CUctx_st *ctx, unsigned flags, int is_default) {
  struct CUstream_st *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->ctx = ctx;
  s->flags = flags;
  s->is_default = is_default;
  pthread_cond_init(&s->work, NULL);
  s->next = streams;
  streams = s;
  return s;
}

/* Unlinks s, stops its worker (after its queue drains, or dropping the queue when
 * discard) and frees it. Lock held; dropped while joining. */
static void stream_destroy(struct CUstream_st *s, int discard) {
  for (struct CUstream_st **p = &streams; *p; p = &(*p)->next)
    if (*p == s) {
      *p = s->next;
      break;
    }
  if (s->ctx->default_stream == s) s->ctx->default_stream = NULL;
  s->exiting = 1;
  if (discard) s->discard = 1;
  pthread_cond_signal(&s->work);
  pthread_cond_broadcast(&td__cond); /* wake a TD_OP_WAIT that should now give up */
  if (!s->worker_started) {
    pthread_cond_destroy(&s->work);
    free(s);
    return;
  }
  if (pthread_equal(pthread_self(), s->worker)) {
    s->self_free = 1;
    pthread_detach(s->worker);
    return;
  }
  pthread_t worker = s->worker;
  pthread_mutex_unlock(&td__lock);
  pthread_join(worker, NULL);
  pthread_mutex_lock(&td__lock);
  pthread_cond_destroy(&s->work);
  free(s);
}

void td__streams_release(struct CUctx_st *ctx) {
  for (;;) {
    struct CUstream_st *victim = NULL;
    for (struct CUstream_st *s = streams; s && !victim; s = s->next)
      if (s->ctx == ctx) victim = s;
    if (!victim) break;
    stream_destroy(victim, 1);
  }
  for (struct CUevent_st **p = &events; *p;) {
    struct CUevent_st *e = *p;
    if (e->ctx == ctx) {
      *p = e->next;
      e->destroyed = 1;
      if (e->refs == 0) free(e);
    } else {
      p = &e->next;
    }
  }
}

static int stream_known(struct CUstream_st *s) {
  for (struct CUstream_st *it = streams; it; it = it->next)
    if (it == s && !it->is_default) return 1;
  return 0;
}

CUresult td__stream_resolve(CUstream handle, struct CUstream_st **out) {
  *out = NULL;
  if (handle == NULL || handle == CU_STREAM_LEGACY || handle == CU_STREAM_PER_THREAD) {
    struct CUctx_st *ctx;
    CUresult r = td__current(&ctx);
    if (r != CUDA_SUCCESS) return r;
    if (!ctx->default_stream) {
      ctx->default_stream = stream_new(ctx, 0, 1);
      if (!ctx->default_stream) return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *out = ctx->default_stream;
    return CUDA_SUCCESS;
  }
  if (!stream_known(handle)) return CUDA_ERROR_INVALID_HANDLE;
  *out = handle;
  return CUDA_SUCCESS;
}

/* ---- streams -------------------------------------------------------------------------- */

CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags) {
  TD_ENTER("cuStreamCreate", "cuStreamCreate");
  if (!phStream || (Flags & ~(unsigned)CU_STREAM_NON_BLOCKING)) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&td__lock);
  struct CUctx_st *ctx;
  CUresult r = td__current(&ctx);
  if (r == CUDA_SUCCESS) {
    struct CUstream_st *s = stream_new(ctx, Flags, 0);
    if (s)
      *phStream = s;
    else
      r = CUDA_ERROR_OUT_OF_MEMORY;
  }
  pthread_mutex_unlock(&td__lock);
  return r;
}

CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream) {
  TD_ENTER("cuStreamDestroy", "cuStreamDestroy_v2");
  pthread_mutex_lock(&td__lock);
  CUresult r = CUDA_SUCCESS;
  if (!stream_known(hStream))
    r = CUDA_ERROR_INVALID_HANDLE; /* also 0, 1 and 2 */
  else
    stream_destroy(hStream, 0);
  pthread_mutex_unlock(&td__lock);
  return r;
}

static CUresult stream_synchronize(CUstream h) {
  pthread_mutex_lock(&td__lock);
  struct CUstream_st *s;
  CUresult r = td__stream_resolve(h, &s);
  if (r == CUDA_SUCCESS) r = td__stream_wait_idle(s);
  pthread_mutex_unlock(&td__lock);
  return r;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream h) {
  TD_ENTER("cuStreamSynchronize", "cuStreamSynchronize");
  return stream_synchronize(h);
}

CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream h) {
  TD_ENTER("cuStreamSynchronize", "cuStreamSynchronize_ptsz");
  return stream_synchronize(h);
}

static CUresult stream_query(CUstream h) {
  pthread_mutex_lock(&td__lock);
  struct CUstream_st *s;
  CUresult r = td__stream_resolve(h, &s);
  if (r == CUDA_SUCCESS) r = s->head ? CUDA_ERROR_NOT_READY : s->error;
  pthread_mutex_unlock(&td__lock);
  return r;
}

CUresult CUDAAPI cuStreamQuery(CUstream h) {
  TD_ENTER("cuStreamQuery", "cuStreamQuery");
  return stream_query(h);
}

CUresult CUDAAPI cuStreamQuery_ptsz(CUstream h) {
  TD_ENTER("cuStreamQuery", "cuStreamQuery_ptsz");
  return stream_query(h);
}

/* Queues a callback or host function; exactly one of cb and fn is set. */
static CUresult enqueue_host(CUstream h, CUstreamCallback cb, CUhostFn fn, void *user) {
  td_op *op = calloc(1, sizeof *op);
  if (!op) return CUDA_ERROR_OUT_OF_MEMORY;
  op->kind = cb ? TD_OP_CALLBACK : TD_OP_HOSTFN;
  op->callback = cb;
  op->hostfn = fn;
  op->user = user;
  pthread_mutex_lock(&td__lock);
  struct CUstream_st *s;
  CUresult r = td__stream_resolve(h, &s);
  if (r == CUDA_SUCCESS)
    r = td__stream_enqueue(s, op);
  else
    free(op);
  pthread_mutex_unlock(&td__lock);
  return r;
}

CUresult CUDAAPI cuStreamAddCallback(CUstream h, CUstreamCallback cb, void *user,
                                     unsigned int flags) {
  TD_ENTER("cuStreamAddCallback", "cuStreamAddCallback");
  if (!cb || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  return enqueue_host(h, cb, NULL, user);
}

CUresult CUDAAPI cuStreamAddCallback_ptsz(CUstream h, CUstreamCallback cb, void *user,
                                          unsigned int flags) {
  TD_ENTER("cuStreamAddCallback", "cuStreamAddCallback_ptsz");
  if (!cb || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  return enqueue_host(h, cb, NULL, user);
}

CUresult CUDAAPI cuLaunchHostFunc(CUstream h, CUhostFn fn, void *user) {
  TD_ENTER("cuLaunchHostFunc", "cuLaunchHostFunc");
  if (!fn) return CUDA_ERROR_INVALID_VALUE;
  return enqueue_host(h, NULL, fn, user);
}

CUresult CUDAAPI cuLaunchHostFunc_ptsz(CUstream h, CUhostFn fn, void *user) {
  TD_ENTER("cuLaunchHostFunc", "cuLaunchHostFunc_ptsz");
  if (!fn) return CUDA_ERROR_INVALID_VALUE;
  return enqueue_host(h, NULL, fn, user);
}

/* ---- events --------------------------------------------------------------------------- */

static int event_known(struct CUevent_st *e) {
  for (struct CUevent_st *it = events; it; it = it->next)
    if (it == e) return 1;
  return 0;
}

CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int Flags) {
  TD_ENTER("cuEventCreate", "cuEventCreate");
  const unsigned known =
      CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
  if (!phEvent || (Flags & ~known)) return CUDA_ERROR_INVALID_VALUE;
  /* Interprocess events must have timing disabled. */
  if ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING))
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&td__lock);
  struct CUctx_st *ctx;
  CUresult r = td__current(&ctx);
  if (r == CUDA_SUCCESS) {
    struct CUevent_st *e = calloc(1, sizeof *e);
    if (!e) {
      r = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
      e->ctx = ctx;
      e->flags = Flags;
      e->next = events;
      events = e;
      *phEvent = e;
    }
  }
  pthread_mutex_unlock(&td__lock);
  return r;
}

CUresult CUDAAPI cuEventDestroy_v2(CUevent hEvent) {
  TD_ENTER("cuEventDestroy", "cuEventDestroy_v2");
  pthread_mutex_lock(&td__lock);
  CUresult r = CUDA_ERROR_INVALID_HANDLE;
  for (struct CUevent_st **p = &events; *p; p = &(*p)->next) {
    if (*p == hEvent) {
      *p = hEvent->next;
      hEvent->destroyed = 1;
      pthread_cond_broadcast(&td__cond);
      if (hEvent->refs == 0) free(hEvent);
      r = CUDA_SUCCESS;
      break;
    }
  }
  pthread_mutex_unlock(&td__lock);
  return r;
}

static CUresult event_record(CUevent ev, CUstream h) {
  td_op *op = calloc(1, sizeof *op);
  if (!op) return CUDA_ERROR_OUT_OF_MEMORY;
  pthread_mutex_lock(&td__lock);
  struct CUstream_st *s = NULL;
  CUresult r = event_known(ev) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  if (r == CUDA_SUCCESS) r = td__stream_resolve(h, &s);
  /* The event and the stream must belong to the same context. */
  if (r == CUDA_SUCCESS && s->ctx != ev->ctx) r = CUDA_ERROR_INVALID_HANDLE;
  if (r == CUDA_SUCCESS) {
    op->kind = TD_OP_RECORD;
    op->event = ev;
    op->seq = ++ev->record_seq;
    r = td__stream_enqueue(s, op);
  } else {
    free(op);
  }
  pthread_mutex_unlock(&td__lock);
  return r;
}

CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream) {
  TD_ENTER("cuEventRecord", "cuEventRecord");
  return event_record(hEvent, hStream);
}

CUresult CUDAAPI cuEventRecord_ptsz(CUevent hEvent, CUstream hStream) {
  TD_ENTER("cuEventRecord", "cuEventRecord_ptsz");
  return event_record(hEvent, hStream);
}

CUresult CUDAAPI cuEventQuery(CUevent hEvent) {
  TD_ENTER("cuEventQuery", "cuEventQuery");
  pthread_mutex_lock(&td__lock);
  CUresult r = CUDA_ERROR_INVALID_HANDLE;
  if (event_known(hEvent))
    r = hEvent->done_seq >= hEvent->record_seq ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
  pthread_mutex_unlock(&td__lock);
  return r;
}

CUresult CUDAAPI cuEventSynchronize(CUevent hEvent) {
  TD_ENTER("cuEventSynchronize", "cuEventSynchronize");
  pthread_mutex_lock(&td__lock);
  CUresult r = CUDA_ERROR_INVALID_HANDLE;
  if (event_known(hEvent)) {
    uint64_t target = hEvent->record_seq;
    hEvent->refs++; /* it may be destroyed while we sleep */
    while (hEvent->done_seq < target && !hEvent->destroyed)
      pthread_cond_wait(&td__cond, &td__lock);
    r = hEvent->destroyed ? CUDA_ERROR_INVALID_HANDLE : CUDA_SUCCESS;
    event_unref(hEvent);
  }
  pthread_mutex_unlock(&td__lock);
  return r;
}

/* Real driver answers: INVALID_HANDLE for unknown, timing-disabled or never-recorded
 * events, NOT_READY while either record is pending; end before start is negative. */
static CUresult elapsed(float *ms, CUevent start, CUevent end) {
  if (!ms) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&td__lock);
  CUresult r = CUDA_SUCCESS;
  if (!event_known(start) || !event_known(end))
    r = CUDA_ERROR_INVALID_HANDLE;
  else if ((start->flags | end->flags) & CU_EVENT_DISABLE_TIMING)
    r = CUDA_ERROR_INVALID_HANDLE;
  else if (start->record_seq == 0 || end->record_seq == 0)
    r = CUDA_ERROR_INVALID_HANDLE;
  else if (start->done_seq < start->record_seq || end->done_seq < end->record_seq)
    r = CUDA_ERROR_NOT_READY;
  else
    *ms = (float)(end->timestamp_ms - start->timestamp_ms);
  pthread_mutex_unlock(&td__lock);
  return r;
}

CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd) {
  TD_ENTER("cuEventElapsedTime", "cuEventElapsedTime");
  return elapsed(pMilliseconds, hStart, hEnd);
}

CUresult CUDAAPI cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd) {
  TD_ENTER("cuEventElapsedTime", "cuEventElapsedTime_v2");
  return elapsed(pMilliseconds, hStart, hEnd);
}

static CUresult stream_wait_event(CUstream h, CUevent ev, unsigned flags) {
  if (flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL) return CUDA_ERROR_INVALID_VALUE;
  td_op *op = calloc(1, sizeof *op);
  if (!op) return CUDA_ERROR_OUT_OF_MEMORY;
  pthread_mutex_lock(&td__lock);
  struct CUstream_st *s = NULL;
  CUresult r = td__stream_resolve(h, &s);
  if (r == CUDA_SUCCESS && !event_known(ev)) r = CUDA_ERROR_INVALID_HANDLE;
  if (r == CUDA_SUCCESS && ev->record_seq > ev->done_seq) {
    /* Only pending records are waited for; an unrecorded or completed event is a no-op. */
    op->kind = TD_OP_WAIT;
    op->event = ev;
    op->seq = ev->record_seq;
    r = td__stream_enqueue(s, op);
    op = NULL;
  }
  free(op);
  pthread_mutex_unlock(&td__lock);
  return r;
}

CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags) {
  TD_ENTER("cuStreamWaitEvent", "cuStreamWaitEvent");
  return stream_wait_event(hStream, hEvent, Flags);
}

CUresult CUDAAPI cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags) {
  TD_ENTER("cuStreamWaitEvent", "cuStreamWaitEvent_ptsz");
  return stream_wait_event(hStream, hEvent, Flags);
}
