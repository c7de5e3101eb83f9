/* stream.c — Stream and its factories (stream, default_stream, legacy_default_stream,
 * per_thread_default_stream, external_stream), auto_synchronize(), add_callback() and
 * async_done(), with stream callbacks that never run Python on the driver's thread.
 *
 * Why: numba-cuda's add_callback passes a ctypes trampoline to cuStreamAddCallback, so the
 * user's Python callback runs on a CUDA driver thread that must take the GIL. A main thread
 * that holds the GIL, or any lock the callback wants, while it waits in
 * cuStreamSynchronize — which waits for the callback — deadlocks (numba-cuda issue #317;
 * its stream-callback tests are skipped for that reason).
 *
 * How: add_callback preallocates a completion record holding (stream, callback, arg) and
 * registers a C trampoline with the C library. On the driver thread the trampoline only
 * stores the status, appends the record to a queue under a mutex and signals a condition
 * variable — no Python, no allocation, no CUDA call. A daemon Python thread of ours, the
 * dispatcher ("nbcuda-callbacks", started on the first add_callback), waits on that
 * condition with the GIL released and runs the callbacks in order, with the GIL, as
 * callback(stream, status, arg); an exception in a callback becomes a warning ("Exception in
 * stream callback: ...") as in numba-cuda. So synchronize() returns as soon as the GPU work
 * is done, and callbacks are delivered even while the main thread is blocked (in
 * synchronize(), in a lock, in Event.wait) with the GIL released.
 *
 * async_done() needs a running asyncio loop: it registers a callback whose dispatcher-side
 * half calls loop.call_soon_threadsafe(set, future, stream, status); `set` resolves the
 * future with the stream (or Exception("Stream error N")) unless it was cancelled.
 *
 * The queue is the extension's only C global: the driver thread holds no Python reference
 * through which it could find a module state, and the dispatcher serves every module
 * object of the process.
 */
#include "nbcuda_py.h"

#include <pthread.h>
#include <stdlib.h>

/* Not tracked by the garbage collector: it refers only to its Context, which refers to
 * no Stream, so it can be part of no cycle (and creation skips the GC's bookkeeping). */
typedef struct {
  PyObject_HEAD
  nbc_stream_t *s;
  PyObject *context; /* the Context it was made in, or None */
} StreamObject;

/* One pending callback: made with the GIL in add_callback, queued by the driver thread,
 * consumed and freed by the dispatcher. */
typedef struct completion {
  struct completion *next;
  PyObject *data; /* (stream, callback, arg) */
  nbc_status_t status;
} completion;

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_cond = PTHREAD_COND_INITIALIZER;
static completion *queue_head, *queue_tail;
static int dispatcher_started; /* guarded by the GIL */

/* Runs on the driver's thread: queue and wake, nothing else. */
static void callback_trampoline(nbc_stream_t *stream, nbc_status_t status, void *arg) {
  (void)stream;
  completion *c = arg;
  c->status = status;
  c->next = NULL;
  pthread_mutex_lock(&queue_lock);
  if (queue_tail)
    queue_tail->next = c;
  else
    queue_head = c;
  queue_tail = c;
  pthread_cond_signal(&queue_cond);
  pthread_mutex_unlock(&queue_lock);
}

/* Calls one completed callback; exceptions become warnings. */
static void run_completion(completion *c) {
  PyObject *stream = PyTuple_GET_ITEM(c->data, 0), *cb = PyTuple_GET_ITEM(c->data, 1);
  PyObject *arg = PyTuple_GET_ITEM(c->data, 2);
  PyObject *r = PyObject_CallFunction(cb, "OiO", stream, (int)c->status, arg);
  if (r) {
    Py_DECREF(r);
  } else {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    PyObject *text = value ? PyObject_Str(value) : NULL;
    if (!text || PyErr_WarnFormat(PyExc_UserWarning, 1, "Exception in stream callback: %U",
                                  text) < 0)
      PyErr_WriteUnraisable(cb);
    Py_XDECREF(text);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
  }
  Py_DECREF(c->data);
  free(c);
}

/* The dispatcher thread's body: never returns (a daemon thread; it ends with the process). */
static PyObject *py_dispatch_callbacks(PyObject *module, PyObject *unused) {
  (void)module;
  (void)unused;
  for (;;) {
    completion *list;
    Py_BEGIN_ALLOW_THREADS pthread_mutex_lock(&queue_lock);
    while (!queue_head) pthread_cond_wait(&queue_cond, &queue_lock);
    list = queue_head;
    queue_head = queue_tail = NULL;
    pthread_mutex_unlock(&queue_lock);
    Py_END_ALLOW_THREADS while (list) {
      completion *next = list->next;
      run_completion(list);
      list = next;
    }
  }
  return NULL;
}

static int start_dispatcher(PyObject *self) {
  if (dispatcher_started) return 0;
  PyObject *module = PyType_GetModule(Py_TYPE(self));
  PyObject *threading = module ? PyImport_ImportModule("threading") : NULL;
  if (!threading) return -1;
  PyObject *target = PyObject_GetAttrString(module, "_dispatch_callbacks");
  PyObject *thread = NULL, *kwargs = NULL, *args = NULL;
  if (target) kwargs = Py_BuildValue("{s:O,s:s,s:O}", "target", target, "name",
                                     "nbcuda-callbacks", "daemon", Py_True);
  PyObject *cls = PyObject_GetAttrString(threading, "Thread");
  args = PyTuple_New(0);
  if (cls && kwargs && args) thread = PyObject_Call(cls, args, kwargs);
  PyObject *r = thread ? PyObject_CallMethod(thread, "start", NULL) : NULL;
  int rc = -1;
  if (r) {
    rc = 0;
    dispatcher_started = 1;
    nbc__py_state *st = nbc__py_state_of(self);
    Py_XSETREF(st->dispatcher, Py_NewRef(thread));
  }
  Py_XDECREF(r);
  Py_XDECREF(thread);
  Py_XDECREF(cls);
  Py_XDECREF(args);
  Py_XDECREF(kwargs);
  Py_XDECREF(target);
  Py_DECREF(threading);
  return rc;
}

/* ------------------------------------------------------------------ Stream ------------ */

static void stream_dealloc(StreamObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  nbc_stream_destroy(self->s); /* default and external streams are not destroyed */
  Py_CLEAR(self->context);
  tp->tp_free(self);
  Py_DECREF(tp);
}

static PyObject *stream_wrap(nbc__py_state *st, nbc_stream_t *s, PyObject *context) {
  StreamObject *o = PyObject_New(StreamObject, st->StreamType);
  if (!o) {
    nbc_stream_destroy(s);
    return NULL;
  }
  o->s = s;
  o->context = Py_NewRef(context ? context : Py_None);
  return (PyObject *)o;
}

static PyObject *stream_repr(StreamObject *self) {
  char buf[128];
  nbc_stream_repr(self->s, buf, sizeof buf);
  return PyUnicode_FromString(buf);
}

static PyObject *stream_int(StreamObject *self) {
  return PyLong_FromUnsignedLongLong((unsigned long long)nbc_stream_handle(self->s));
}

static PyObject *stream_cuda_stream(StreamObject *self, PyObject *unused) {
  (void)unused;
  return Py_BuildValue("(iK)", 0, (unsigned long long)nbc_stream_handle(self->s));
}

static PyObject *stream_get_handle(StreamObject *self, void *c) {
  (void)c;
  return stream_int(self);
}

static PyObject *stream_get_external(StreamObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(nbc_stream_kind(self->s) == NBC_STREAM_EXTERNAL);
}

static PyObject *stream_get_context(StreamObject *self, void *c) {
  (void)c;
  return Py_NewRef(self->context);
}

/* The blocking synchronize, with the GIL released while the driver waits. */
static PyObject *stream_wait_idle(StreamObject *self) {
  nbc_status_t s;
  Py_BEGIN_ALLOW_THREADS s = nbc_stream_synchronize(self->s);
  Py_END_ALLOW_THREADS if (s != NBC_OK) return nbc__py_raise(nbc__py_state_of((PyObject *)self), s);
  Py_RETURN_NONE;
}

/* An idle stream needs no wait: the non-blocking query answers without releasing the GIL
 * (which costs about as much as the driver call). Pending work, or any error, goes to the
 * blocking call with the GIL released; errors are reported as that call reports them. */
static PyObject *stream_synchronize(StreamObject *self, PyObject *unused) {
  (void)unused;
  if (nbc_stream_query(self->s) == NBC_OK) Py_RETURN_NONE;
  return stream_wait_idle(self);
}

/* query(): True when all work is done (numba-cuda's Stream has none; cuda.core's has). */
static PyObject *stream_query(StreamObject *self, PyObject *unused) {
  (void)unused;
  nbc_status_t s = nbc_stream_query(self->s);
  if (s == NBC_OK) Py_RETURN_TRUE;
  if (s == NBC_NOT_READY) Py_RETURN_FALSE;
  return nbc__py_raise(nbc__py_state_of((PyObject *)self), s);
}

/* auto_synchronize()'s exit: always the blocking call (once per scope, not a hot path). */
static PyObject *sync_exit(PyObject *target) { return stream_wait_idle((StreamObject *)target); }

static PyObject *stream_auto_synchronize(StreamObject *self, PyObject *unused) {
  (void)unused;
  return nbc__py_scope_new(nbc__py_state_of((PyObject *)self), NULL, sync_exit,
                           (PyObject *)self);
}

/* Registers callback(stream, status, arg) to run on the dispatcher thread. */
static int add_callback(StreamObject *self, PyObject *cb, PyObject *arg) {
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  if (!PyCallable_Check(cb)) {
    PyErr_SetString(PyExc_TypeError, "add_callback() takes a callable");
    return -1;
  }
  if (start_dispatcher((PyObject *)self) < 0) return -1;
  completion *c = calloc(1, sizeof *c);
  if (!c) {
    PyErr_NoMemory();
    return -1;
  }
  c->data = PyTuple_Pack(3, (PyObject *)self, cb, arg);
  if (!c->data) {
    free(c);
    return -1;
  }
  nbc_status_t s = nbc_stream_add_callback(self->s, callback_trampoline, c);
  if (s != NBC_OK) {
    Py_DECREF(c->data);
    free(c);
    return nbc__py_raise_int(st, s);
  }
  return 0;
}

static PyObject *stream_add_callback(StreamObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"callback", "arg", NULL};
  PyObject *cb, *arg = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:add_callback", kwlist, &cb, &arg))
    return NULL;
  if (add_callback(self, cb, arg) < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *stream_async_done(StreamObject *self, PyObject *unused) {
  (void)unused;
  PyObject *asyncio = PyImport_ImportModule("asyncio");
  if (!asyncio) return NULL;
  PyObject *loop = PyObject_CallMethod(asyncio, "get_running_loop", NULL);
  Py_DECREF(asyncio);
  if (!loop) return NULL;
  PyObject *future = PyObject_CallMethod(loop, "create_future", NULL);
  Py_DECREF(loop);
  if (!future) return NULL;
  PyObject *module = PyType_GetModule(Py_TYPE(self));
  PyObject *resolve = module ? PyObject_GetAttrString(module, "_async_resolve") : NULL;
  int rc = resolve ? add_callback(self, resolve, future) : -1;
  Py_XDECREF(resolve);
  if (rc < 0) {
    Py_DECREF(future);
    return NULL;
  }
  return future;
}

static PyMethodDef stream_methods[] = {
    {"synchronize", (PyCFunction)stream_synchronize, METH_NOARGS,
     "synchronize($self, /)\n--\n\n"
     "Waits for all work queued on the stream."},
    {"query", (PyCFunction)stream_query, METH_NOARGS, "query($self, /)\n--\n\n"
                                                      "True when all work is done."},
    {"auto_synchronize", (PyCFunction)stream_auto_synchronize, METH_NOARGS,
     "auto_synchronize($self, /)\n--\n\n"
     "Context manager yielding the stream; synchronizes on exit, even on error."},
    {"add_callback", (PyCFunction)(void (*)(void))stream_add_callback,
     METH_VARARGS | METH_KEYWORDS,
     "add_callback($self, callback, arg=None)\n--\n\n"
     "callback(stream, status, arg) runs after the queued work, on nbcuda's dispatcher "
     "thread (never on the driver's)."},
    {"async_done", (PyCFunction)stream_async_done, METH_NOARGS,
     "async_done($self, /)\n--\n\n"
     "An asyncio future resolved with the stream when the queued work is done."},
    {"__cuda_stream__", (PyCFunction)stream_cuda_stream, METH_NOARGS, "__cuda_stream__($self, "
                                                                      "/)\n--\n\n"
                                                                      "(0, handle)"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef stream_getset[] = {
    {"handle", (getter)stream_get_handle, NULL, "the CUstream as an int", NULL},
    {"external", (getter)stream_get_external, NULL, "made by external_stream()", NULL},
    {"context", (getter)stream_get_context, NULL, "the Context it was made in", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot stream_slots[] = {
    {Py_tp_dealloc, stream_dealloc},
    {Py_tp_repr, stream_repr},
    {Py_nb_int, stream_int},
    {Py_tp_methods, stream_methods},
    {Py_tp_getset, stream_getset},
    {Py_tp_doc, (void *)"A CUDA stream (see stream(), default_stream(), ...)."},
    {0, NULL},
};

/* Not immutable: numba-cuda's Stream is a Python class that programs and tests patch
 * (unittest.mock.patch.object(Stream, "synchronize") to see the CUDA Array Interface's
 * synchronization), and nbcuda calls synchronize() through the class where numba does. */
static PyType_Spec stream_spec = {
    .name = "nbcuda.Stream",
    .basicsize = sizeof(StreamObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = stream_slots,
};

int nbc__py_stream_arg(nbc__py_state *st, PyObject *obj, nbc_stream_t **pstream,
                       nbc_stream_t **ptemp) {
  *pstream = NULL;
  *ptemp = NULL;
  if (!obj || obj == Py_None) return 0;
  if (Py_TYPE(obj) == st->StreamType) {
    *pstream = ((StreamObject *)obj)->s;
    return 0;
  }
  if (PyLong_CheckExact(obj)) {
    int overflow = 0;
    if (PyLong_AsLongAndOverflow(obj, &overflow) == 0 && !overflow) return 0;
  }
  /* cuda.core streams and others with the stream protocol: wrap the handle, temporarily. */
  PyObject *meth = PyObject_GetAttr(obj, st->str_cuda_stream);
  if (!meth) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "Expected a Stream object or 0, got %s",
                 Py_TYPE(obj)->tp_name);
    return -1;
  }
  PyObject *t = PyObject_CallNoArgs(meth);
  Py_DECREF(meth);
  if (!t) return -1;
  unsigned long long h = 0;
  if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 2) {
    Py_DECREF(t);
    PyErr_SetString(PyExc_TypeError, "__cuda_stream__() must return (version, handle)");
    return -1;
  }
  PyObject *version = PyTuple_GET_ITEM(t, 0);
  if (!PyLong_Check(version) || PyLong_AsLong(version) != 0) { /* numba asserts ver == 0 */
    PyErr_Clear();
    PyErr_Format(PyExc_ValueError, "__cuda_stream__() returned version %R; version 0 expected",
                 version);
    Py_DECREF(t);
    return -1;
  }
  h = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(t, 1));
  Py_DECREF(t);
  if (h == (unsigned long long)-1 && PyErr_Occurred()) return -1;
  nbc_status_t s = nbc_external_stream((uintptr_t)h, ptemp);
  if (s != NBC_OK) return nbc__py_raise_int(st, s);
  *pstream = *ptemp;
  return 0;
}

/* ------------------------------------------------------------ module functions -------- */

typedef nbc_status_t (*stream_factory)(nbc_stream_t **pstream);

typedef struct {
  stream_factory factory;
  uintptr_t handle; /* external_stream's */
  nbc_stream_t *s;
} stream_make;

static nbc_status_t make_in_context(void *arg) {
  stream_make *m = arg;
  return m->factory ? m->factory(&m->s) : nbc_external_stream(m->handle, &m->s);
}

/* The default, legacy and per-thread default streams are immutable singletons of the C
 * library, so their Stream objects are made once per context and handed out again:
 * default_stream() builds no object (numba makes a new one per call; nothing tells them
 * apart but `is`). The slot of the stream m makes in ctx, in st->default_streams (3 per
 * ordinal, which the module state owns: a Context holding its streams would be a cycle
 * through Streams the GC does not track), or NULL for other streams or without memory. A
 * slot holds None or a Stream, which is handed out only when it belongs to ctx (the
 * ordinal's Context object may have been replaced). */
static PyObject **default_stream_slot(nbc__py_state *st, const stream_make *m,
                                      PyObject *ctx) {
  int kind = m->factory == nbc_default_stream           ? 0
             : m->factory == nbc_legacy_default_stream  ? 1
             : m->factory == nbc_per_thread_default_stream ? 2
                                                           : -1;
  if (kind < 0) return NULL;
  nbc_device_t *dev = nbc_context_device(nbc__py_context_handle(ctx));
  Py_ssize_t at = (Py_ssize_t)(dev ? nbc_device_id(dev) : 0) * 3 + kind;
  if (!st->default_streams && !(st->default_streams = PyList_New(0))) {
    PyErr_Clear();
    return NULL;
  }
  while (PyList_GET_SIZE(st->default_streams) <= at)
    if (PyList_Append(st->default_streams, Py_None) < 0) {
      PyErr_Clear();
      return NULL;
    }
  return &PyList_GET_ITEM(st->default_streams, at);
}

/* Like numba's (require_context) factories: a context is made current first, and the
 * stream keeps a reference to it. A created stream knows its context (nbc_stream_create makes
 * one current as needed); the others are made inside nbc_require_context
 * (nbc__py_context_call). Either way one cuCtxGetCurrent serves both. */
static PyObject *make_stream(nbc__py_state *st, stream_make *m) {
  PyObject *ctx;
  if (m->factory == nbc_stream_create) {
    nbc_status_t s = nbc_stream_create(&m->s);
    ctx = s == NBC_OK ? nbc__py_context_object(st, nbc_stream_context(m->s))
                      : nbc__py_raise(st, s);
  } else {
    ctx = nbc__py_context_call(st, make_in_context, m);
  }
  if (!ctx) {
    nbc_stream_destroy(m->s);
    return NULL;
  }
  PyObject **slot = default_stream_slot(st, m, ctx);
  if (slot && *slot != Py_None && ((StreamObject *)*slot)->context == ctx) {
    Py_DECREF(ctx);
    return Py_NewRef(*slot);
  }
  PyObject *o = stream_wrap(st, m->s, ctx);
  Py_DECREF(ctx);
  if (o && slot) Py_SETREF(*slot, Py_NewRef(o));
  return o;
}

int nbc__py_stream_sync_external(nbc__py_state *st, uintptr_t handle) {
  stream_make m = {NULL, handle, NULL};
  PyObject *stream = make_stream(st, &m);
  PyObject *r = stream ? PyObject_CallMethod(stream, "synchronize", NULL) : NULL;
  Py_XDECREF(stream);
  Py_XDECREF(r);
  return r ? 0 : -1;
}

static PyObject *factory_stream(PyObject *module, stream_factory factory) {
  stream_make m = {factory, 0, NULL};
  return make_stream(nbc__py_module_state(module), &m);
}

PyObject *nbc__py_default_stream(nbc__py_state *st) {
  stream_make m = {nbc_default_stream, 0, NULL};
  return make_stream(st, &m);
}

static PyObject *py_stream(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
  (void)args;
  if (nbc__py_no_args("stream", nargs) < 0) return NULL;
  return factory_stream(m, nbc_stream_create);
}
static PyObject *py_default_stream(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
  (void)args;
  if (nbc__py_no_args("default_stream", nargs) < 0) return NULL;
  return nbc__py_default_stream(nbc__py_module_state(m));
}
static PyObject *py_legacy_default_stream(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
  (void)args;
  if (nbc__py_no_args("legacy_default_stream", nargs) < 0) return NULL;
  return factory_stream(m, nbc_legacy_default_stream);
}
static PyObject *py_per_thread_default_stream(PyObject *m, PyObject *const *args,
                                              Py_ssize_t nargs) {
  (void)args;
  if (nbc__py_no_args("per_thread_default_stream", nargs) < 0) return NULL;
  return factory_stream(m, nbc_per_thread_default_stream);
}

static PyObject *py_external_stream(PyObject *module, PyObject *ptr) {
  nbc__py_state *st = nbc__py_module_state(module);
  if (!PyLong_Check(ptr)) {
    PyErr_SetString(PyExc_TypeError, "ptr for external stream must be an int");
    return NULL;
  }
  unsigned long long h = PyLong_AsUnsignedLongLong(ptr);
  if (h == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
  stream_make m = {NULL, (uintptr_t)h, NULL};
  return make_stream(st, &m);
}

/* _async_resolve(stream, status, future): the dispatcher-side half of async_done(); hands
 * the result to the future's loop thread-safely. */
static PyObject *py_async_resolve(PyObject *module, PyObject *const *args, Py_ssize_t n) {
  if (n != 3) {
    PyErr_SetString(PyExc_TypeError, "_async_resolve(stream, status, future)");
    return NULL;
  }
  PyObject *loop = PyObject_CallMethod(args[2], "get_loop", NULL);
  PyObject *set = loop ? PyObject_GetAttrString(module, "_async_set") : NULL;
  PyObject *r = set ? PyObject_CallMethod(loop, "call_soon_threadsafe", "OOOO", set, args[2],
                                          args[0], args[1])
                    : NULL;
  Py_XDECREF(loop);
  Py_XDECREF(set);
  if (!r) return NULL;
  Py_DECREF(r);
  Py_RETURN_NONE;
}

/* _async_set(future, stream, status): runs on the loop; cancelled futures are left alone. */
static PyObject *py_async_set(PyObject *module, PyObject *const *args, Py_ssize_t n) {
  (void)module;
  if (n != 3) {
    PyErr_SetString(PyExc_TypeError, "_async_set(future, stream, status)");
    return NULL;
  }
  PyObject *done = PyObject_CallMethod(args[0], "done", NULL);
  if (!done) return NULL;
  int is_done = PyObject_IsTrue(done);
  Py_DECREF(done);
  if (is_done < 0) return NULL;
  if (is_done) Py_RETURN_NONE;
  long status = PyLong_AsLong(args[2]);
  if (status == -1 && PyErr_Occurred()) return NULL;
  PyObject *r;
  if (status == 0) {
    r = PyObject_CallMethod(args[0], "set_result", "(O)", args[1]);
  } else {
    PyObject *exc = PyUnicode_FromFormat("Stream error %ld", status);
    PyObject *e = exc ? PyObject_CallOneArg(PyExc_Exception, exc) : NULL;
    Py_XDECREF(exc);
    r = e ? PyObject_CallMethod(args[0], "set_exception", "(O)", e) : NULL;
    Py_XDECREF(e);
  }
  if (!r) return NULL;
  Py_DECREF(r);
  Py_RETURN_NONE;
}

static PyMethodDef stream_functions[] = {
    {"stream", (PyCFunction)(void (*)(void))py_stream, METH_FASTCALL,
     "stream($module, /)\n--\n\n"
     "A new stream (cuStreamCreate)."},
    {"default_stream", (PyCFunction)(void (*)(void))py_default_stream, METH_FASTCALL,
     "default_stream($module, /)\n--\n\n"
     "The default stream (handle 0)."},
    {"legacy_default_stream", (PyCFunction)(void (*)(void))py_legacy_default_stream,
     METH_FASTCALL, "legacy_default_stream($module, /)\n--\n\n"
                    "The legacy default stream (handle 1)."},
    {"per_thread_default_stream", (PyCFunction)(void (*)(void))py_per_thread_default_stream,
     METH_FASTCALL, "per_thread_default_stream($module, /)\n--\n\n"
                    "The per-thread default stream (handle 2)."},
    {"external_stream", py_external_stream, METH_O,
     "external_stream($module, ptr, /)\n--\n\n"
     "Wraps a CUstream handle (an int) that the caller owns."},
    {"_dispatch_callbacks", py_dispatch_callbacks, METH_NOARGS,
     "_dispatch_callbacks($module, /)\n--\n\n"
     "The stream-callback dispatcher thread's body (internal)."},
    {"_async_resolve", (PyCFunction)(void (*)(void))py_async_resolve, METH_FASTCALL,
     "_async_resolve($module, *args)\n--\n\n"
     "internal: async_done's callback"},
    {"_async_set", (PyCFunction)(void (*)(void))py_async_set, METH_FASTCALL,
     "_async_set($module, *args)\n--\n\n"
     "internal: resolves async_done's future on its loop"},
    {NULL, NULL, 0, NULL},
};

int nbc__py_stream_init(PyObject *module, nbc__py_state *st) {
  st->StreamType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &stream_spec, NULL);
  if (!st->StreamType) return -1;
  if (PyModule_AddObjectRef(module, "Stream", (PyObject *)st->StreamType) < 0) return -1;
  return PyModule_AddFunctions(module, stream_functions);
}
