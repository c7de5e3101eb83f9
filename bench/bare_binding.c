/* bare_binding.c — the thinnest possible Python binding of a raw driver call, as a control for
 * bench/host_py.py.
 *
 * host_py.py compares each nbcuda Python call with the same driver call(s) made in a tight C
 * loop (bench/host_calls.c, which=1). The difference mixes two things: what nbcuda's binding
 * executes, and what any Python binding pays to reach the driver from the interpreter (the
 * call statement, and the driver call itself running slower between interpreter steps, with
 * its caches and branch history disturbed, than back to back in C). This module measures the
 * second part alone: bare_binding.call(op, release_gil[, which]) returns a callable object
 * whose call runs one raw host_calls row — op is the address of the row's function from
 * host_calls_raw_op(key) — and returns None, with no argument to convert and no result object
 * to build (vectorcall, no keywords); which=0 runs the row's nbcuda C API side instead of
 * the raw driver (host_calls' own copy of the library). Python figure - bare figure is then
 * what the binding adds; bare - raw is what no binding can avoid.
 *
 * With release_gil the call is made between Py_BEGIN_ALLOW_THREADS / Py_END_ALLOW_THREADS,
 * as a binding of a blocking call must (cuCtxSynchronize).
 *
 * Built by host_py.py at run time with the interpreter's headers (no part of nbcuda). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>

typedef int (*raw_op)(int which); /* host_calls.c's row function; which = 1: the raw driver */

typedef struct {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  raw_op op;
  int which; /* the row's argument: 1 the raw driver (host_py.py's case), 0 nbcuda's C API */
  int release_gil;
} BareCall;

static PyObject *failed(void) {
  PyErr_SetString(PyExc_RuntimeError, "bare_binding: the raw driver call failed");
  return NULL;
}

static PyObject *bare_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf,
                                 PyObject *kwnames) {
  (void)args;
  BareCall *self = (BareCall *)callable;
  if (PyVectorcall_NARGS(nargsf) != 0 || kwnames) {
    PyErr_SetString(PyExc_TypeError, "bare_binding call takes no arguments");
    return NULL;
  }
  int bad;
  if (self->release_gil) {
    Py_BEGIN_ALLOW_THREADS bad = self->op(self->which);
    Py_END_ALLOW_THREADS
  } else {
    bad = self->op(self->which);
  }
  if (bad) return failed();
  Py_RETURN_NONE;
}

static PyTypeObject BareCallType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "bare_binding.BareCall",
    .tp_basicsize = sizeof(BareCall),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(BareCall, vectorcall),
    .tp_call = PyVectorcall_Call,
};

static PyObject *make_call(PyObject *module, PyObject *args) {
  (void)module;
  unsigned long long address;
  int release_gil, which = 1;
  if (!PyArg_ParseTuple(args, "Kp|i", &address, &release_gil, &which)) return NULL;
  if (!address) {
    PyErr_SetString(PyExc_ValueError, "bare_binding.call: no row function (address 0)");
    return NULL;
  }
  BareCall *o = PyObject_New(BareCall, &BareCallType);
  if (!o) return NULL;
  o->vectorcall = bare_vectorcall;
  o->op = (raw_op)(uintptr_t)address;
  o->which = which;
  o->release_gil = release_gil;
  return (PyObject *)o;
}

static PyMethodDef methods[] = {
    {"call", make_call, METH_VARARGS,
     "call(op_address, release_gil, which=1) -> a callable running one host_calls row"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "bare_binding", "The thinnest binding of a raw driver call", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_bare_binding(void) {
  if (PyType_Ready(&BareCallType) < 0) return NULL;
  return PyModule_Create(&module);
}
