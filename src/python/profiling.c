/* profiling.c — the profiler from Python: numba's profile_start(), profile_stop() and
 * `with profiling():`, and NVTX ranges and marks on a profiler's timeline (nbc_nvtx_*), as
 * CuPy's time_range offers them:
 *
 *   with nbcuda.profiling.range("step", color=0xFF00FF00): ...
 *   @nbcuda.profiling.range("solve")          # each call of solve is one range
 *   nbcuda.profiling.mark("checkpoint")
 *
 * `profiling` is an object: calling it gives numba's context manager, its methods the NVTX
 * calls. A range object is reusable and re-entrant (each enter pushes, each exit pops); a
 * function it decorates keeps its name, docstring and __wrapped__ (functools.update_wrapper)
 * and binds as a method.
 */
#include "nbcuda_py.h"

#include <structmember.h>

/* ------------------------------------------------------------ profile start / stop ---- */

static PyObject *raise_or_none(PyObject *owner, nbc_status_t s) {
  if (s != NBC_OK) return nbc__py_raise(nbc__py_state_of(owner), s);
  Py_RETURN_NONE;
}

static PyObject *profile_start_target(PyObject *target) {
  return raise_or_none(target, nbc_profile_start());
}

static PyObject *profile_stop_target(PyObject *target) {
  return raise_or_none(target, nbc_profile_stop());
}

static PyObject *py_profile_start(PyObject *module, PyObject *unused) {
  (void)unused;
  nbc_status_t s = nbc_profile_start();
  if (s != NBC_OK) return nbc__py_raise(nbc__py_module_state(module), s);
  Py_RETURN_NONE;
}

static PyObject *py_profile_stop(PyObject *module, PyObject *unused) {
  (void)unused;
  nbc_status_t s = nbc_profile_stop();
  if (s != NBC_OK) return nbc__py_raise(nbc__py_module_state(module), s);
  Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ NVTX ranges ------- */

typedef struct {
  PyObject_HEAD
  PyObject *name; /* bytes: the UTF-8 text NVTX is given */
  uint32_t argb;  /* 0: the tool's colour */
} RangeObject;

typedef struct {
  PyObject_HEAD
  RangeObject *range;
  PyObject *func;
  PyObject *dict; /* __name__, __doc__, __wrapped__ ... from functools.update_wrapper */
  vectorcallfunc vectorcall;
} RangedObject;

static nbc_status_t range_push(RangeObject *r) {
  return nbc_nvtx_range_push(PyBytes_AS_STRING(r->name), r->argb);
}

static PyObject *range_enter(PyObject *self, PyObject *unused) {
  (void)unused;
  nbc_status_t s = range_push((RangeObject *)self);
  if (s != NBC_OK) return nbc__py_raise(nbc__py_state_of(self), s);
  return Py_NewRef(self);
}

static PyObject *range_exit(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)args;
  (void)nargs;
  nbc_status_t s = nbc_nvtx_range_pop();
  if (s != NBC_OK) return nbc__py_raise(nbc__py_state_of(self), s);
  Py_RETURN_FALSE;
}

/* The decorated function, called inside the range; the range closes also when it raises
 * (the function's exception wins over a failed pop). */
static PyObject *ranged_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                   PyObject *kwnames) {
  RangedObject *w = (RangedObject *)self;
  nbc_status_t s = range_push(w->range);
  if (s != NBC_OK) return nbc__py_raise(nbc__py_state_of(self), s);
  PyObject *result = PyObject_Vectorcall(w->func, args, nargsf, kwnames);
  s = nbc_nvtx_range_pop();
  if (s != NBC_OK && result) {
    Py_CLEAR(result);
    return nbc__py_raise(nbc__py_state_of(self), s);
  }
  return result;
}

static PyObject *ranged_get(PyObject *self, PyObject *obj, PyObject *type) {
  (void)type;
  if (!obj || obj == Py_None) return Py_NewRef(self);
  return PyMethod_New(self, obj);
}

static int ranged_traverse(RangedObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->range);
  Py_VISIT(self->func);
  Py_VISIT(self->dict);
  return 0;
}

static int ranged_clear(RangedObject *self) {
  Py_CLEAR(self->range);
  Py_CLEAR(self->func);
  Py_CLEAR(self->dict);
  return 0;
}

static void ranged_dealloc(RangedObject *self) {
  PyTypeObject *type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  ranged_clear(self);
  type->tp_free(self);
  Py_DECREF(type);
}

static PyMemberDef ranged_members[] = {
    {"__dictoffset__", T_PYSSIZET, offsetof(RangedObject, dict), READONLY, NULL},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(RangedObject, vectorcall), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef ranged_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot ranged_slots[] = {
    {Py_tp_call, (void *)PyVectorcall_Call},
    {Py_tp_getset, ranged_getset},
    {Py_tp_descr_get, (void *)ranged_get},
    {Py_tp_members, ranged_members},
    {Py_tp_traverse, (void *)ranged_traverse},
    {Py_tp_clear, (void *)ranged_clear},
    {Py_tp_dealloc, (void *)ranged_dealloc},
    {Py_tp_doc, (void *)"A function whose every call is an NVTX range (profiling.range)."},
    {0, NULL},
};

static PyType_Spec ranged_spec = {
    .name = "nbcuda.RangedFunction",
    .basicsize = sizeof(RangedObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
             Py_TPFLAGS_METHOD_DESCRIPTOR,
    .slots = ranged_slots,
};

/* range(func): the decorator form. */
static PyObject *range_call(PyObject *self, PyObject *args, PyObject *kwargs) {
  PyObject *func;
  if (kwargs && PyDict_GET_SIZE(kwargs)) {
    PyErr_SetString(PyExc_TypeError, "a profiling.range decorates one function, positionally");
    return NULL;
  }
  if (!PyArg_ParseTuple(args, "O:range", &func)) return NULL;
  if (!PyCallable_Check(func)) {
    PyErr_Format(PyExc_TypeError, "a profiling.range decorates a callable, not %.100s",
                 Py_TYPE(func)->tp_name);
    return NULL;
  }
  nbc__py_state *st = nbc__py_state_of(self);
  RangedObject *w = PyObject_GC_New(RangedObject, st->RangedFunctionType);
  if (!w) return NULL;
  w->range = (RangeObject *)Py_NewRef(self);
  w->func = Py_NewRef(func);
  w->dict = NULL;
  w->vectorcall = ranged_vectorcall;
  PyObject_GC_Track(w);
  PyObject *functools = PyImport_ImportModule("functools");
  PyObject *done =
      functools ? PyObject_CallMethod(functools, "update_wrapper", "OO", (PyObject *)w, func)
                : NULL;
  Py_XDECREF(functools);
  if (!done) {
    Py_DECREF(w);
    return NULL;
  }
  Py_DECREF(done);
  return (PyObject *)w;
}

static PyObject *range_repr(PyObject *self) {
  RangeObject *r = (RangeObject *)self;
  PyObject *text =
      PyUnicode_DecodeUTF8(PyBytes_AS_STRING(r->name), PyBytes_GET_SIZE(r->name), "replace");
  if (!text) return NULL;
  char color[32] = "";
  if (r->argb) snprintf(color, sizeof color, " color=0x%08X", (unsigned)r->argb);
  PyObject *repr = PyUnicode_FromFormat("<nbcuda.profiling.range %R%s>", text, color);
  Py_DECREF(text);
  return repr;
}

static int range_traverse(RangeObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  return 0;
}

static void range_dealloc(RangeObject *self) {
  PyTypeObject *type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  Py_XDECREF(self->name);
  type->tp_free(self);
  Py_DECREF(type);
}

static PyMethodDef range_methods[] = {
    {"__enter__", range_enter, METH_NOARGS, "Opens the range on this thread."},
    {"__exit__", (PyCFunction)(void (*)(void))range_exit, METH_FASTCALL,
     "Closes the range, also when the body raised."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot range_slots[] = {
    {Py_tp_methods, range_methods},
    {Py_tp_call, (void *)range_call},
    {Py_tp_repr, (void *)range_repr},
    {Py_tp_traverse, (void *)range_traverse},
    {Py_tp_dealloc, (void *)range_dealloc},
    {Py_tp_doc, (void *)"An NVTX range: a context manager, and a decorator of functions."},
    {0, NULL},
};

static PyType_Spec range_spec = {
    .name = "nbcuda.ProfilingRange",
    .basicsize = sizeof(RangeObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .slots = range_slots,
};

/* The UTF-8 text of a name argument (a new bytes object), or NULL with TypeError. */
static PyObject *name_bytes(PyObject *name, const char *what) {
  if (!PyUnicode_Check(name)) {
    PyErr_Format(PyExc_TypeError, "%s: the name must be a str, not %.100s", what,
                 Py_TYPE(name)->tp_name);
    return NULL;
  }
  PyObject *bytes = PyUnicode_AsUTF8String(name);
  if (bytes && memchr(PyBytes_AS_STRING(bytes), '\0', (size_t)PyBytes_GET_SIZE(bytes))) {
    Py_DECREF(bytes);
    PyErr_Format(PyExc_ValueError, "%s: the name contains a NUL character", what);
    return NULL;
  }
  return bytes;
}

/* ------------------------------------------------------------- the profiling object --- */

/* profiling.range(name, color=None) */
static PyObject *profiling_range(PyObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"name", "color", NULL};
  PyObject *name, *color = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:range", kwlist, &name, &color))
    return NULL;
  unsigned long argb = 0;
  if (color != Py_None) {
    if (!PyLong_Check(color) || PyBool_Check(color)) {
      PyErr_Format(PyExc_TypeError,
                   "profiling.range: color must be an int 0xAARRGGBB or None, not %.100s",
                   Py_TYPE(color)->tp_name);
      return NULL;
    }
    argb = PyLong_AsUnsignedLong(color);
    if ((argb == (unsigned long)-1 && PyErr_Occurred()) || argb > 0xFFFFFFFFul) {
      PyErr_Clear();
      PyErr_SetString(PyExc_ValueError,
                      "profiling.range: color must be 0xAARRGGBB, from 0 to 0xFFFFFFFF");
      return NULL;
    }
  }
  PyObject *bytes = name_bytes(name, "profiling.range");
  if (!bytes) return NULL;
  nbc__py_state *st = nbc__py_state_of(self);
  RangeObject *r = PyObject_GC_New(RangeObject, st->ProfilingRangeType);
  if (!r) {
    Py_DECREF(bytes);
    return NULL;
  }
  r->name = bytes;
  r->argb = (uint32_t)argb;
  PyObject_GC_Track(r);
  return (PyObject *)r;
}

/* profiling.mark(name) */
static PyObject *profiling_mark(PyObject *self, PyObject *name) {
  PyObject *bytes = name_bytes(name, "profiling.mark");
  if (!bytes) return NULL;
  nbc_status_t s = nbc_nvtx_mark(PyBytes_AS_STRING(bytes));
  Py_DECREF(bytes);
  return raise_or_none(self, s);
}

/* profiling(): numba's context manager; the scope's target is this object, through whose
 * type the callbacks find the module state. */
static PyObject *profiling_call(PyObject *self, PyObject *args, PyObject *kwargs) {
  if (PyTuple_GET_SIZE(args) || (kwargs && PyDict_GET_SIZE(kwargs))) {
    PyErr_SetString(PyExc_TypeError, "profiling() takes no arguments");
    return NULL;
  }
  return nbc__py_scope_new(nbc__py_state_of(self), profile_start_target, profile_stop_target,
                           self);
}

static PyObject *profiling_get_attached(PyObject *self, void *closure) {
  (void)self;
  (void)closure;
  return PyBool_FromLong(nbc_nvtx_attached());
}

/* __signature__: profiling() takes nothing (inspect reads no text signature from an
 * instance's __call__ slot). */
static PyObject *profiling_get_signature(PyObject *self, void *closure) {
  (void)self;
  (void)closure;
  PyObject *inspect = PyImport_ImportModule("inspect");
  PyObject *sig = inspect ? PyObject_CallMethod(inspect, "Signature", NULL) : NULL;
  Py_XDECREF(inspect);
  return sig;
}

static PyObject *profiling_repr(PyObject *self) {
  (void)self;
  return PyUnicode_FromString("<nbcuda.profiling>");
}

static int profiling_traverse(PyObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  return 0;
}

static void profiling_dealloc(PyObject *self) {
  PyTypeObject *type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  type->tp_free(self);
  Py_DECREF(type);
}

static PyMethodDef profiling_methods[] = {
    {"range", (PyCFunction)(void (*)(void))profiling_range, METH_VARARGS | METH_KEYWORDS,
     "range($self, name, color=None)\n--\n\n"
     "An NVTX range named name on a profiler's timeline (Nsight Systems): use it as a context\n"
     "manager (`with profiling.range(\"step\"):`) or as a decorator, where each call of the\n"
     "function is one range. color: the range's colour as an int 0xAARRGGBB, or None for the\n"
     "profiler's own. Ranges nest per thread. Without a profiler attached a range costs a\n"
     "call and a branch; nothing is loaded."},
    {"mark", profiling_mark, METH_O,
     "mark($self, name, /)\n--\n\n"
     "An NVTX mark (an instant event) named name on a profiler's timeline."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef profiling_getset[] = {
    {"attached", profiling_get_attached, NULL,
     "True once a profiler's NVTX tool took the calls (NVTX_INJECTION64_PATH), else False.",
     NULL},
    {"__signature__", profiling_get_signature, NULL, "profiling(): no arguments.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot profiling_slots[] = {
    {Py_tp_call, (void *)profiling_call},
    {Py_tp_methods, profiling_methods},
    {Py_tp_getset, profiling_getset},
    {Py_tp_repr, (void *)profiling_repr},
    {Py_tp_traverse, (void *)profiling_traverse},
    {Py_tp_dealloc, (void *)profiling_dealloc},
    {Py_tp_doc,
     (void *)"Context manager: profile_start(), then profile_stop() even when the body raises.\n"
             "profiling.range(name, color=None) and profiling.mark(name) put NVTX ranges and\n"
             "marks on a profiler's timeline."},
    {0, NULL},
};

static PyType_Spec profiling_spec = {
    .name = "nbcuda.Profiling",
    .basicsize = sizeof(PyObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = profiling_slots,
};

static PyMethodDef profiling_functions[] = {
    {"profile_start", py_profile_start, METH_NOARGS, "profile_start($module, /)\n--\n\n"
                                                     "Starts the CUDA profiler."},
    {"profile_stop", py_profile_stop, METH_NOARGS, "profile_stop($module, /)\n--\n\n"
                                                   "Stops the CUDA profiler."},
    {NULL, NULL, 0, NULL},
};

int nbc__py_profiling_init(PyObject *module, nbc__py_state *st) {
  PyTypeObject *type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &profiling_spec, NULL);
  st->ProfilingRangeType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &range_spec, NULL);
  st->RangedFunctionType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &ranged_spec, NULL);
  if (!type || !st->ProfilingRangeType || !st->RangedFunctionType) {
    Py_XDECREF(type);
    return -1;
  }
  PyObject *profiling = (PyObject *)PyObject_GC_New(PyObject, type);
  Py_DECREF(type); /* the instance holds it */
  if (!profiling) return -1;
  PyObject_GC_Track(profiling);
  int rc = PyModule_AddObjectRef(module, "profiling", profiling);
  Py_DECREF(profiling);
  if (rc < 0) return -1;
  return PyModule_AddFunctions(module, profiling_functions);
}
