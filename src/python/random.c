/* random.c — nbcuda.random, numba.cuda.random's xoroshiro128+ generators:
 *
 *   from nbcuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32
 *   rng = create_xoroshiro128p_states(n_threads, seed=1)
 *   ... in a kernel: x = xoroshiro128p_uniform_float32(rng, thread_id)
 *
 * The numbers are numba's, bit for bit: the host makes the states as numba does
 * (nbc_xoroshiro128p_init) in numba's states array, a 1-d array of the record dtype
 * xoroshiro128p_dtype (whose numba type, xoroshiro128p_type, signatures name), and the device
 * functions are numba's random.py functions as
 * Python kernel code, the library kernel src/library/random.py (which says how its states
 * array differs from numba's), compiled by nbcuda when a kernel calls them. They are made on
 * first use (module __getattr__), so importing nbcuda compiles nothing: their source is
 * registered in linecache as <nbcuda.random> for the compiler to read. The dtype and its type
 * are made on first use as well, as they need numpy.
 */
#include "nbcuda_py.h"

static const char *const device_names[] = {
    "init_xoroshiro128p_state",      "rotl",
    "xoroshiro128p_next",            "xoroshiro128p_jump",
    "uint64_to_unit_float64",        "uint64_to_unit_float32",
    "xoroshiro128p_uniform_float32", "xoroshiro128p_uniform_float64",
    "xoroshiro128p_normal_float32",  "xoroshiro128p_normal_float64",
};
#define NDEVICE ((int)(sizeof device_names / sizeof device_names[0]))

/* The nbcuda module the submodule belongs to (its "_cuda" attribute; borrowed). */
static PyObject *parent_of(PyObject *sub) {
  PyObject *d = PyModule_GetDict(sub);
  PyObject *m = d ? PyDict_GetItemString(d, "_cuda") : NULL;
  if (!m) PyErr_SetString(PyExc_RuntimeError, "nbcuda.random has lost its nbcuda module");
  return m;
}

/* Runs the device functions' source once, putting them into the submodule. */
static int make_device_functions(PyObject *sub) {
  PyObject *d = PyModule_GetDict(sub);
  if (PyDict_GetItemString(d, device_names[0])) return 0;
  PyObject *cuda = parent_of(sub);
  const char *source = cuda ? nbc__py_library_source("random") : NULL;
  if (!source) return -1;
  PyObject *filename = PyUnicode_FromString("<nbcuda.random>");
  PyObject *modname = filename ? PyModule_GetNameObject(sub) : NULL;
  PyObject *ns = modname ? PyDict_New() : NULL;
  int rc = ns && PyDict_SetItemString(ns, "__name__", modname) == 0 &&
                   PyDict_SetItemString(ns, "cuda", cuda) == 0
               ? nbc__py_run_source(source, filename, ns)
               : -1;
  for (int i = 0; rc == 0 && i < NDEVICE; i++) {
    PyObject *f = PyDict_GetItemString(ns, device_names[i]);
    rc = f ? PyDict_SetItemString(d, device_names[i], f) : -1;
  }
  Py_XDECREF(ns);
  Py_XDECREF(modname);
  Py_XDECREF(filename);
  return rc;
}

/* numba's xoroshiro128p_dtype, np.dtype([("s0", uint64), ("s1", uint64)], align=True), and its
 * numba type xoroshiro128p_type (from_dtype of it): made once, kept in the submodule. Returns
 * the dtype (borrowed). */
static PyObject *states_dtype(PyObject *sub) {
  PyObject *d = PyModule_GetDict(sub);
  PyObject *dtype = PyDict_GetItemString(d, "xoroshiro128p_dtype");
  if (dtype) return dtype;
  PyObject *cuda = parent_of(sub);
  nbc__py_state *st = cuda ? nbc__py_module_state(cuda) : NULL;
  PyObject *np = st ? nbc__py_numpy(st) : NULL;
  PyObject *make = np ? PyObject_GetAttrString(np, "dtype") : NULL;
  PyObject *fields = make ? Py_BuildValue("([(ss)(ss)])", "s0", "u8", "s1", "u8") : NULL;
  PyObject *kw = fields ? Py_BuildValue("{sO}", "align", Py_True) : NULL;
  PyObject *made = kw ? PyObject_Call(make, fields, kw) : NULL;
  PyObject *type = made ? PyObject_CallMethod(cuda, "from_dtype", "O", made) : NULL;
  int rc = type && PyDict_SetItemString(d, "xoroshiro128p_type", type) == 0 &&
                   PyDict_SetItemString(d, "xoroshiro128p_dtype", made) == 0
               ? 0
               : -1;
  Py_XDECREF(type);
  Py_XDECREF(made);
  Py_XDECREF(kw);
  Py_XDECREF(fields);
  Py_XDECREF(make);
  return rc == 0 ? PyDict_GetItemString(d, "xoroshiro128p_dtype") : NULL;
}

/* PEP 562: the device functions, the dtype and its type appear on first access. */
static PyObject *random_getattr(PyObject *sub, PyObject *name) {
  const char *n = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
  if (n && (strcmp(n, "xoroshiro128p_dtype") == 0 || strcmp(n, "xoroshiro128p_type") == 0)) {
    if (!states_dtype(sub)) return NULL;
    return PyObject_GetAttr(sub, name);
  }
  for (int i = 0; n && i < NDEVICE; i++)
    if (strcmp(n, device_names[i]) == 0) {
      if (make_device_functions(sub) < 0) return NULL;
      return PyObject_GetAttr(sub, name);
    }
  PyErr_Format(PyExc_AttributeError, "module 'nbcuda.random' has no attribute %R", name);
  return NULL;
}

static PyObject *random_dir(PyObject *sub, PyObject *unused) {
  (void)unused;
  static const char *const lazy_types[] = {"xoroshiro128p_dtype", "xoroshiro128p_type"};
  PyObject *keys = PyDict_Keys(PyModule_GetDict(sub));
  for (int i = 0; keys && i < NDEVICE + 2; i++) {
    PyObject *s = PyUnicode_FromString(i < NDEVICE ? device_names[i] : lazy_types[i - NDEVICE]);
    int has = s ? PySequence_Contains(keys, s) : -1;
    if (has == 0 && PyList_Append(keys, s) < 0) has = -1;
    Py_XDECREF(s);
    if (has < 0) Py_CLEAR(keys);
  }
  return keys;
}

/* A host array of n states of xoroshiro128p_dtype for (n, seed, subsequence_start). */
static PyObject *host_states(PyObject *sub, Py_ssize_t n, PyObject *seed_obj,
                             PyObject *sub_obj) {
  unsigned long long seed = PyLong_AsUnsignedLongLongMask(seed_obj);
  if (seed == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
  unsigned long long start = sub_obj ? PyLong_AsUnsignedLongLongMask(sub_obj) : 0;
  if (start == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
  PyObject *dtype = states_dtype(sub);
  nbc__py_state *st = dtype ? nbc__py_module_state(parent_of(sub)) : NULL;
  PyObject *np = st ? nbc__py_numpy(st) : NULL;
  PyObject *arr = np ? PyObject_CallMethod(np, "zeros", "nO", n, dtype) : NULL;
  Py_buffer view;
  if (!arr || PyObject_GetBuffer(arr, &view, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) {
    Py_XDECREF(arr);
    return NULL;
  }
  Py_BEGIN_ALLOW_THREADS nbc_xoroshiro128p_init(view.buf, (size_t)n, seed, start);
  Py_END_ALLOW_THREADS PyBuffer_Release(&view);
  return arr;
}

/* obj.<method>(arg, stream=stream), or without stream= when none was given. */
static PyObject *call_with_stream(PyObject *obj, const char *method, PyObject *arg,
                                  PyObject *stream) {
  PyObject *fn = PyObject_GetAttrString(obj, method);
  PyObject *args = fn ? PyTuple_Pack(1, arg) : NULL;
  PyObject *kw = args && stream ? Py_BuildValue("{sO}", "stream", stream) : NULL;
  PyObject *r = args && (!stream || kw) ? PyObject_Call(fn, args, kw) : NULL;
  Py_XDECREF(kw);
  Py_XDECREF(args);
  Py_XDECREF(fn);
  return r;
}

static PyObject *py_init_states(PyObject *sub, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"states", "seed", "subsequence_start", "stream", NULL};
  PyObject *states, *seed, *start = NULL, *stream = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|OO:init_xoroshiro128p_states", kwlist,
                                   &states, &seed, &start, &stream))
    return NULL;
  PyObject *dtype = states_dtype(sub);
  PyObject *shape = dtype ? PyObject_GetAttrString(states, "shape") : NULL;
  PyObject *its = shape ? PyObject_GetAttrString(states, "dtype") : NULL;
  int same = its ? PyObject_RichCompareBool(its, dtype, Py_EQ) : -1;
  Py_ssize_t n = same == 1 && PyTuple_Check(shape) && PyTuple_GET_SIZE(shape) == 1
                     ? PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, 0))
                     : -1;
  Py_XDECREF(its);
  Py_XDECREF(shape);
  if (n < 0) {
    if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_AttributeError)) {
      PyErr_Clear();
      PyErr_SetString(PyExc_TypeError, "init_xoroshiro128p_states: states must be a 1-d "
                      "device array of xoroshiro128p_dtype, as create_xoroshiro128p_states "
                      "makes");
    }
    return NULL;
  }
  PyObject *host = host_states(sub, n, seed, start);
  PyObject *r = host ? call_with_stream(states, "copy_to_device", host, stream) : NULL;
  Py_XDECREF(host);
  if (!r) return NULL;
  Py_DECREF(r);
  Py_RETURN_NONE;
}

static PyObject *py_create_states(PyObject *sub, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"n", "seed", "subsequence_start", "stream", NULL};
  Py_ssize_t n;
  PyObject *seed, *start = NULL, *stream = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "nO|OO:create_xoroshiro128p_states", kwlist,
                                   &n, &seed, &start, &stream))
    return NULL;
  if (n < 0) {
    PyErr_SetString(PyExc_ValueError, "create_xoroshiro128p_states: n must be >= 0");
    return NULL;
  }
  PyObject *cuda = parent_of(sub);
  PyObject *host = cuda ? host_states(sub, n, seed, start) : NULL;
  PyObject *r = host ? call_with_stream(cuda, "to_device", host, stream) : NULL;
  Py_XDECREF(host);
  return r;
}

static PyMethodDef random_functions[] = {
    {"create_xoroshiro128p_states", (PyCFunction)(void (*)(void))py_create_states,
     METH_VARARGS | METH_KEYWORDS,
     "create_xoroshiro128p_states($module, n, seed, subsequence_start=0, stream=0)\n--\n\n"
     "N generator states on the device (an array of n xoroshiro128p_dtype records), as numba "
     "makes them."},
    {"init_xoroshiro128p_states", (PyCFunction)(void (*)(void))py_init_states,
     METH_VARARGS | METH_KEYWORDS,
     "init_xoroshiro128p_states($module, states, seed, subsequence_start=0, stream=0)\n--\n\n"
     "init_xoroshiro128p_states(states, seed, subsequence_start=0, stream=0)"},
    {"__getattr__", (PyCFunction)random_getattr, METH_O, "__getattr__($module, name, /)\n--\n\n"
                                                         "The module's device functions, "
                                                         "made on first use."},
    {"__dir__", (PyCFunction)random_dir, METH_NOARGS, "__dir__($module, /)\n--\n\n"
                                                      "The module's names, device functions "
                                                      "included."},
    {NULL, NULL, 0, NULL},
};

int nbc__py_random_init(PyObject *module, nbc__py_state *st) {
  (void)st;
  PyObject *sub = PyModule_New("nbcuda.random");
  if (!sub) return -1;
  PyObject *modules = PyImport_GetModuleDict();
  int rc = PyModule_AddFunctions(sub, random_functions) < 0 ||
                   PyModule_AddObjectRef(sub, "_cuda", module) < 0 ||
                   PyModule_AddStringConstant(sub, "__doc__", "numba.cuda.random's "
                                              "xoroshiro128+ generators (docs/guide/library.md)") < 0 ||
                   PyModule_AddObjectRef(module, "random", sub) < 0 ||
                   PyDict_SetItemString(modules, "nbcuda.random", sub) < 0
               ? -1
               : 0;
  Py_DECREF(sub);
  return rc;
}
