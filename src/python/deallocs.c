/* deallocs.c — numba's pending deallocations of a context: `ctx.deallocations` (and
 * `ctx.memory_manager.deallocations`), numba's _PendingDeallocs.
 *
 * numba queues the device frees of a context and performs them when the queue is long or large,
 * at clear(), and never while disabled (defer_cleanup()). nbcuda frees at once, except for two
 * kinds of freed memory the driver does not have back yet, which are what this object counts:
 * the frees queued inside a `with defer_cleanup():` block (performed when the outermost block
 * ends), and the small blocks kept for reuse (src/host/reuse.c). So
 *
 *   len(ctx.deallocations)    the queued frees plus the kept blocks;
 *   ctx.deallocations.clear() gives the kept blocks back to the driver, unless a
 *                             defer_cleanup() block of the context is open (numba's clear()
 *                             does nothing while disabled);
 *   .disable()                ctx.defer_cleanup(), a context manager;
 *   .is_disabled              whether such a block is open.
 *
 * The common idiom `cuda.current_context().deallocations.clear()` (free what is pending now)
 * works as in numba.
 */
#include "nbcuda_py.h"

typedef struct {
  PyObject_HEAD
  PyObject *context; /* the Context */
} DeallocsObject;

static int deallocs_traverse(DeallocsObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->context);
  return 0;
}

static void deallocs_dealloc(DeallocsObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  Py_CLEAR(self->context);
  tp->tp_free(self);
  Py_DECREF(tp);
}

/* 0 for NBC_OK, else -1 with the status raised. */
static int checked(DeallocsObject *self, nbc_status_t s) {
  if (s == NBC_OK) return 0;
  nbc__py_raise(nbc__py_state_of((PyObject *)self), s);
  return -1;
}

/* The queued frees and the defer_cleanup() depth of the context; -1 with the error raised. */
static int deferred(DeallocsObject *self, size_t *ppending, unsigned *pdepth) {
  return checked(self,
                 nbc_context_deferred(nbc__py_context_handle(self->context), ppending, pdepth));
}

static Py_ssize_t deallocs_len(DeallocsObject *self) {
  size_t pending = 0, kept = 0;
  if (deferred(self, &pending, NULL) < 0 ||
      checked(self, nbc_context_freed_kept(nbc__py_context_handle(self->context), &kept,
                                           NULL)) < 0)
    return -1;
  return (Py_ssize_t)(pending + kept);
}

static PyObject *deallocs_clear(DeallocsObject *self, PyObject *unused) {
  (void)unused;
  unsigned depth = 0;
  if (deferred(self, NULL, &depth) < 0) return NULL;
  if (depth) Py_RETURN_NONE; /* disabled: the queued frees wait for the block's end */
  nbc_status_t s;
  Py_BEGIN_ALLOW_THREADS s = nbc_context_release_freed(nbc__py_context_handle(self->context));
  Py_END_ALLOW_THREADS if (checked(self, s) < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *deallocs_disable(DeallocsObject *self, PyObject *unused) {
  (void)unused;
  return PyObject_CallMethod(self->context, "defer_cleanup", NULL);
}

static PyObject *deallocs_get_is_disabled(DeallocsObject *self, void *c) {
  (void)c;
  unsigned depth = 0;
  if (deferred(self, NULL, &depth) < 0) return NULL;
  return PyBool_FromLong(depth > 0);
}

static PyObject *deallocs_repr(DeallocsObject *self) {
  Py_ssize_t n = deallocs_len(self);
  if (n < 0) return NULL;
  return PyUnicode_FromFormat("<nbcuda pending deallocations of %R: %zd>", self->context, n);
}

static PyMethodDef deallocs_methods[] = {
    {"clear", (PyCFunction)deallocs_clear, METH_NOARGS,
     "clear($self, /)\n--\n\n"
     "Gives the freed blocks kept for reuse back to the driver (nothing while disabled)."},
    {"disable", (PyCFunction)deallocs_disable, METH_NOARGS,
     "disable($self, /)\n--\n\n"
     "with deallocations.disable(): the context's defer_cleanup()."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef deallocs_getset[] = {
    {"is_disabled", (getter)deallocs_get_is_disabled, NULL,
     "whether a defer_cleanup() block of the context is open", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot deallocs_slots[] = {
    {Py_tp_dealloc, deallocs_dealloc},
    {Py_tp_traverse, deallocs_traverse},
    {Py_tp_methods, deallocs_methods},
    {Py_tp_getset, deallocs_getset},
    {Py_tp_repr, deallocs_repr},
    {Py_sq_length, deallocs_len},
    {Py_tp_doc, (void *)"A context's freed memory the driver does not have back yet: frees "
                        "queued by defer_cleanup() and blocks kept for reuse (numba's "
                        "_PendingDeallocs)."},
    {0, NULL},
};

static PyType_Spec deallocs_spec = {
    .name = "nbcuda.PendingDeallocs",
    .basicsize = sizeof(DeallocsObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION |
             Py_TPFLAGS_IMMUTABLETYPE,
    .slots = deallocs_slots,
};

PyObject *nbc__py_deallocs_new(nbc__py_state *st, PyObject *context) {
  DeallocsObject *d = PyObject_GC_New(DeallocsObject, st->DeallocsType);
  if (!d) return NULL;
  d->context = Py_NewRef(context);
  PyObject_GC_Track(d);
  return (PyObject *)d;
}

int nbc__py_deallocs_init(PyObject *module, nbc__py_state *st) {
  st->DeallocsType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &deallocs_spec, NULL);
  return st->DeallocsType ? 0 : -1;
}
