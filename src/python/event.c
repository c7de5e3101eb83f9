/* event.c — Event and the factories event(timing=True) and event_elapsed_time(a, b).
 *
 * An Event wraps an nbc_event_t made in the current context (event() makes one current
 * first, like numba's) and keeps a reference to that Context. query() is False while the
 * event is pending; synchronize() releases the GIL while it waits (a completed event is
 * answered by a query, without the release); elapsed_time between events of which one was
 * made with timing=False is a ValueError naming the reason (numba passes the driver's
 * CUDA_ERROR_INVALID_HANDLE through; SPEC.md asks for a clear error).
 * Stream arguments accept 0, None, an nbcuda Stream or any object with __cuda_stream__
 * (cuda.core streams), as numba's _stream_handle does.
 */
#include "nbcuda_py.h"

/* Not tracked by the garbage collector: it refers only to its Context, which refers to
 * no Event, so it can be part of no cycle (and creation skips the GC's bookkeeping). */
typedef struct {
  PyObject_HEAD
  nbc_event_t *e;
  PyObject *context;
} EventObject;

static void event_dealloc(EventObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  nbc_event_destroy(self->e);
  Py_CLEAR(self->context);
  tp->tp_free(self);
  Py_DECREF(tp);
}

static nbc__py_state *state(EventObject *self) { return nbc__py_state_of((PyObject *)self); }

static PyObject *event_query(EventObject *self, PyObject *unused) {
  (void)unused;
  nbc_status_t s = nbc_event_query(self->e);
  if (s == NBC_OK) Py_RETURN_TRUE;
  if (s == NBC_NOT_READY) Py_RETURN_FALSE;
  return nbc__py_raise(state(self), s);
}

/* Runs op(event, stream) with the stream argument converted (0 by default). The call
 * arrives through vectorcall: a positional stream (or none) is read off the vector; keywords
 * and errors take PyArg_ParseTupleAndKeywords's path (nbc__py_parse_slow). */
static PyObject *with_stream(EventObject *self, PyObject *const *args, Py_ssize_t nargsf,
                             PyObject *kwnames, const char *fmt,
                             nbc_status_t (*op)(nbc_event_t *, nbc_stream_t *)) {
  static char *kwlist[] = {"stream", NULL};
  PyObject *stream_obj = NULL;
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (!kwnames && nargs <= 1) {
    if (nargs) stream_obj = args[0];
  } else if (!nbc__py_parse_slow(args, nargsf, kwnames, fmt, kwlist, &stream_obj)) {
    return NULL;
  }
  nbc__py_state *st = state(self);
  nbc_stream_t *s = NULL, *temp = NULL;
  if (nbc__py_stream_arg(st, stream_obj, &s, &temp) < 0) return NULL;
  nbc_status_t rc = op(self->e, s);
  if (temp) nbc_stream_destroy(temp);
  if (rc != NBC_OK) return nbc__py_raise(st, rc);
  Py_RETURN_NONE;
}

static PyObject *event_record(EventObject *self, PyObject *const *args, Py_ssize_t nargsf,
                              PyObject *kwnames) {
  return with_stream(self, args, nargsf, kwnames, "|O:record", nbc_event_record);
}

static PyObject *event_wait(EventObject *self, PyObject *const *args, Py_ssize_t nargsf,
                            PyObject *kwnames) {
  return with_stream(self, args, nargsf, kwnames, "|O:wait", nbc_event_wait);
}

/* A completed event needs no wait: the non-blocking query answers without releasing the GIL
 * (which costs about as much as the driver call). Pending work, or any error, goes to the
 * blocking call with the GIL released; errors are reported as that call reports them. */
static PyObject *event_synchronize(EventObject *self, PyObject *unused) {
  (void)unused;
  if (nbc_event_query(self->e) == NBC_OK) Py_RETURN_NONE;
  nbc_status_t s;
  Py_BEGIN_ALLOW_THREADS s = nbc_event_synchronize(self->e);
  Py_END_ALLOW_THREADS if (s != NBC_OK) return nbc__py_raise(state(self), s);
  Py_RETURN_NONE;
}

static PyObject *elapsed(nbc__py_state *st, PyObject *a, PyObject *b) {
  if (Py_TYPE(a) != st->EventType || Py_TYPE(b) != st->EventType) {
    PyErr_SetString(PyExc_TypeError, "event_elapsed_time() takes two Events");
    return NULL;
  }
  float ms = 0;
  nbc_status_t s = nbc_event_elapsed_time(((EventObject *)a)->e, ((EventObject *)b)->e, &ms);
  if (s != NBC_OK) return nbc__py_raise(st, s);
  return PyFloat_FromDouble(ms);
}

static PyObject *event_elapsed_time(EventObject *self, PyObject *end) {
  return elapsed(state(self), (PyObject *)self, end);
}

static PyObject *event_get_timing(EventObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(nbc_event_is_timing(self->e));
}

static PyObject *event_repr(EventObject *self) {
  return PyUnicode_FromFormat("<CUDA event %p%s>", (void *)self->e,
                              nbc_event_is_timing(self->e) ? "" : " (no timing)");
}

static PyMethodDef event_methods[] = {
    {"query", (PyCFunction)event_query, METH_NOARGS, "query($self, /)\n--\n\n"
                                                     "True when the event has completed."},
    {"record", (PyCFunction)(void (*)(void))event_record, METH_FASTCALL | METH_KEYWORDS,
     "record($self, stream=0)\n--\n\n"
     "Records the event on a stream (0: the default stream)."},
    {"wait", (PyCFunction)(void (*)(void))event_wait, METH_FASTCALL | METH_KEYWORDS,
     "wait($self, stream=0)\n--\n\n"
     "Makes a stream (0: the default stream) wait for the event."},
    {"synchronize", (PyCFunction)event_synchronize, METH_NOARGS,
     "synchronize($self, /)\n--\n\n"
     "Waits until the event has completed."},
    {"elapsed_time", (PyCFunction)event_elapsed_time, METH_O,
     "elapsed_time($self, evtend, /)\n--\n\n"
     "Milliseconds from this event to another."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef event_getset[] = {
    {"timing", (getter)event_get_timing, NULL, "whether the event records time", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot event_slots[] = {
    {Py_tp_dealloc, event_dealloc},
    {Py_tp_repr, event_repr},
    {Py_tp_methods, event_methods},
    {Py_tp_getset, event_getset},
    {Py_tp_doc, (void *)"A CUDA event (see event())."},
    {0, NULL},
};

static PyType_Spec event_spec = {
    .name = "nbcuda.Event",
    .basicsize = sizeof(EventObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION |
             Py_TPFLAGS_IMMUTABLETYPE,
    .slots = event_slots,
};

/* event(timing=True): nbc_event_create makes the event in the current context and says which
 * (nbc_event_context), so checking the current context (one cuCtxGetCurrent) serves both the
 * Context the Event keeps and the creation. */
static PyObject *py_event(PyObject *module, PyObject *const *args, Py_ssize_t nargsf,
                          PyObject *kwnames) {
  static char *kwlist[] = {"timing", NULL};
  int timing = 1;
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (!kwnames && nargs <= 1) {
    if (nargs && (timing = PyObject_IsTrue(args[0])) < 0) return NULL; /* as "p" does */
  } else if (!nbc__py_parse_slow(args, nargsf, kwnames, "|p:event", kwlist, &timing)) {
    return NULL;
  }
  nbc__py_state *st = nbc__py_module_state(module);
  /* made in the current context (one is made current as numba's require_context would),
   * whose Context object the event keeps */
  nbc_event_t *e = NULL;
  nbc_status_t s = nbc_event_create(timing, &e);
  if (s != NBC_OK) return nbc__py_raise(st, s);
  PyObject *ctx = nbc__py_context_object(st, nbc_event_context(e));
  EventObject *o = ctx ? PyObject_New(EventObject, st->EventType) : NULL;
  if (!o) {
    nbc_event_destroy(e);
    Py_XDECREF(ctx);
    return NULL;
  }
  o->e = e;
  o->context = ctx;
  return (PyObject *)o;
}

static PyObject *py_event_elapsed_time(PyObject *module, PyObject *const *args,
                                       Py_ssize_t n) {
  if (n != 2) {
    PyErr_SetString(PyExc_TypeError, "event_elapsed_time(evtstart, evtend)");
    return NULL;
  }
  return elapsed(nbc__py_module_state(module), args[0], args[1]);
}

static PyMethodDef event_functions[] = {
    {"event", (PyCFunction)(void (*)(void))py_event, METH_FASTCALL | METH_KEYWORDS,
     "event($module, timing=True)\n--\n\n"
     "A new Event in the current context; timing=False disables timing."},
    {"event_elapsed_time", (PyCFunction)(void (*)(void))py_event_elapsed_time, METH_FASTCALL,
     "event_elapsed_time($module, evtstart, evtend, /)\n--\n\n"
     "Milliseconds between two recorded timing events."},
    {NULL, NULL, 0, NULL},
};

int nbc__py_event_init(PyObject *module, nbc__py_state *st) {
  st->EventType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &event_spec, NULL);
  if (!st->EventType) return -1;
  if (PyModule_AddObjectRef(module, "Event", (PyObject *)st->EventType) < 0) return -1;
  return PyModule_AddFunctions(module, event_functions);
}
