/* arghint.c — numba's kernel-argument hints cuda.In, cuda.Out and cuda.InOut.
 *
 * A host array passed to a kernel is copied to the device before the launch and back after
 * it. Wrapping it says which copies are wanted: In(a) copies in only (a may be read-only),
 * Out(a) only back (the device copy starts uninitialised), InOut(a) both, as an unwrapped
 * host array. A wrapped device array or __cuda_array_interface__ object is used in place,
 * with no copy, as numba does. InOut is a subclass of Out, as in numba; each has `.value`.
 * The launch reads the hint through nbc__py_arg_hint (devicearray.c's launch view), lazy
 * kernels type the wrapped value (kernel.c).
 */
#include "nbcuda_py.h"

#include <structmember.h>

typedef struct {
  PyObject_HEAD
  PyObject *value;
} ArgHintObject;

static PyObject *hint_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"value", NULL};
  PyObject *value;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O", kwlist, &value)) return NULL;
  ArgHintObject *self = (ArgHintObject *)type->tp_alloc(type, 0);
  if (self) self->value = Py_NewRef(value);
  return (PyObject *)self;
}

static int hint_traverse(ArgHintObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->value);
  return 0;
}

static int hint_clear(ArgHintObject *self) {
  Py_CLEAR(self->value);
  return 0;
}

static void hint_dealloc(ArgHintObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  hint_clear(self);
  tp->tp_free(self);
  Py_DECREF(tp);
}

static PyObject *hint_repr(ArgHintObject *self) {
  return PyUnicode_FromFormat("%s(%R)", _PyType_Name(Py_TYPE(self)), self->value);
}

static PyMemberDef hint_members[] = {
    {"value", T_OBJECT, offsetof(ArgHintObject, value), READONLY, "the wrapped argument"},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot hint_slots[] = {
    {Py_tp_new, hint_new},
    {Py_tp_traverse, hint_traverse},
    {Py_tp_clear, hint_clear},
    {Py_tp_dealloc, hint_dealloc},
    {Py_tp_repr, hint_repr},
    {Py_tp_members, hint_members},
    {0, NULL},
};

/* In, Out and InOut add nothing to the base but their names (and InOut its base, Out);
 * they inherit its garbage-collection support with its traverse and clear. */
#define HINT_SPEC(var, pyname, extra_flags, doc)                                           \
  static PyType_Slot var##_slots[] = {{Py_tp_doc, (void *)doc}, {0, NULL}};               \
  static PyType_Spec var = {.name = "nbcuda." pyname,                                      \
                            .basicsize = sizeof(ArgHintObject),                            \
                            .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |       \
                                     (extra_flags),                                        \
                            .slots = var##_slots}

static PyType_Spec base_spec = {
    .name = "nbcuda.ArgHint",
    .basicsize = sizeof(ArgHintObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE |
             Py_TPFLAGS_IMMUTABLETYPE,
    .slots = hint_slots,
};
HINT_SPEC(in_spec, "In", 0,
          "In(value)\n--\n\nA kernel argument (an array) copied to the device only.");
HINT_SPEC(out_spec, "Out", Py_TPFLAGS_BASETYPE,
          "Out(value)\n--\n\nA kernel argument (an array) copied back to the host only.");
HINT_SPEC(inout_spec, "InOut", 0,
          "InOut(value)\n--\n\nA kernel argument (an array) copied in and back.");

int nbc__py_arg_hint(nbc__py_state *st, PyObject *obj, PyObject **pvalue, int *pcopy_in,
                     int *pcopy_out) {
  if (!PyObject_TypeCheck(obj, st->ArgHintType)) return 0;
  *pvalue = ((ArgHintObject *)obj)->value;
  int out = PyObject_TypeCheck(obj, st->OutHintType);
  *pcopy_in = !out || PyObject_TypeCheck(obj, st->InOutHintType);
  *pcopy_out = out;
  return 1;
}

static int add_type(PyObject *module, PyType_Spec *spec, PyTypeObject *base,
                    PyTypeObject **ptype, const char *exported) {
  *ptype = (PyTypeObject *)PyType_FromModuleAndSpec(module, spec, (PyObject *)base);
  if (!*ptype) return -1;
  return exported ? PyModule_AddObjectRef(module, exported, (PyObject *)*ptype) : 0;
}

int nbc__py_arghint_init(PyObject *module, nbc__py_state *st) {
  if (add_type(module, &base_spec, NULL, &st->ArgHintType, NULL) < 0 ||
      add_type(module, &in_spec, st->ArgHintType, &st->InHintType, "In") < 0 ||
      add_type(module, &out_spec, st->ArgHintType, &st->OutHintType, "Out") < 0 ||
      add_type(module, &inout_spec, st->OutHintType, &st->InOutHintType, "InOut") < 0)
    return -1;
  return 0;
}
