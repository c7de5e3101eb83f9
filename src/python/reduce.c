/* reduce.c — numba's cuda.reduce / cuda.Reduce: a full reduction of a 1-D array with a
 * binary function, on the GPU.
 *
 *   @cuda.reduce
 *   def sum_reduce(a, b):
 *       return a + b
 *   total = sum_reduce(array)            # host or device array; res=, init=, size=, stream=
 *
 * The reduction kernel is numba's own (numba-cuda's kernels/reduction.py, "a library written
 * in CUDA Python"): the same algorithm, block size (4 warps), grid (at most 64 full blocks
 * plus one partial block, then one block over the partial results) and order of operations,
 * so floating-point sums come out as numba's. It is Python kernel source, the library
 * kernel src/library/reduce.py, compiled by nbcuda's own compiler: per dtype, the text is
 * executed in a fresh namespace where `nbtype` is the dtype's type object and `reduce_op` the
 * user's function as a device function, the file name registered in linecache so the compiler reads the source as for
 * any kernel, and the kernel jitted without a signature.
 *
 * The host side follows numba's Reduce.__call__ step for step: 1-D only, `size` truncates,
 * init cast to the array's dtype, an empty array returns init, the result is partials[0]
 * (a numpy scalar) or, with res=, copied into res[0] on the stream.
 */
#include "nbcuda_py.h"

#include <structmember.h>

typedef struct {
  PyObject_HEAD
  PyObject *functor;
  PyObject *kernels; /* dict: numpy dtype -> the reduction kernel for it */
} ReduceObject;

#define WARPSIZE 32
#define NUMWARPS 4

/* The reduction kernel for arrays of this numpy dtype, made on first use. */
static PyObject *reduce_kernel(nbc__py_state *st, ReduceObject *self, PyObject *module,
                               PyObject *dtype) {
  PyObject *kernel = PyDict_GetItemWithError(self->kernels, dtype);
  if (kernel || PyErr_Occurred()) return Py_XNewRef(kernel);
  PyObject *name = PyObject_GetAttrString(dtype, "name");
  const char *cname = name ? PyUnicode_AsUTF8(name) : NULL;
  PyObject *nbtype = cname ? PyDict_GetItemString(st->types, cname) : NULL;
  if (cname && !nbtype) {
    PyErr_Format(PyExc_TypeError, "cuda.reduce: arrays of %R are not supported", dtype);
    Py_DECREF(name);
    return NULL;
  }
  const char *source = cname ? nbc__py_library_source("reduce") : NULL;
  PyObject *filename = source ? PyUnicode_FromFormat("<nbcuda.reduce %s>", cname) : NULL;
  Py_XDECREF(name);
  PyObject *ns = filename ? PyDict_New() : NULL;
  if (ns && PyDict_SetItemString(ns, "__name__", st->module_name) == 0 &&
      PyDict_SetItemString(ns, "cuda", module) == 0 &&
      PyDict_SetItemString(ns, "nbtype", nbtype) == 0 &&
      PyDict_SetItemString(ns, "_functor", self->functor) == 0 &&
      nbc__py_run_source(source, filename, ns) == 0) {
    kernel = PyDict_GetItemString(ns, "kernel");
    if (kernel && PyDict_SetItem(self->kernels, dtype, kernel) < 0) kernel = NULL;
    Py_XINCREF(kernel);
  }
  Py_XDECREF(ns);
  Py_XDECREF(filename);
  return kernel;
}

static PyObject *reduce_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"functor", NULL};
  PyObject *functor;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:Reduce", kwlist, &functor)) return NULL;
  if (!PyCallable_Check(functor)) {
    PyErr_Format(PyExc_TypeError, "cuda.reduce needs a function, got %R", functor);
    return NULL;
  }
  ReduceObject *self = (ReduceObject *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->functor = Py_NewRef(functor);
  if (!(self->kernels = PyDict_New())) Py_CLEAR(self);
  return (PyObject *)self;
}

static int reduce_traverse(ReduceObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->functor);
  Py_VISIT(self->kernels);
  return 0;
}

static int reduce_clear(ReduceObject *self) {
  Py_CLEAR(self->functor);
  Py_CLEAR(self->kernels);
  return 0;
}

static void reduce_dealloc(ReduceObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  reduce_clear(self);
  tp->tp_free(self);
  Py_DECREF(tp);
}

/* obj[start:stop] (None for an open end). */
static PyObject *slice_of(PyObject *obj, Py_ssize_t start, Py_ssize_t stop) {
  PyObject *a = PyLong_FromSsize_t(start), *b = stop < 0 ? Py_NewRef(Py_None)
                                                          : PyLong_FromSsize_t(stop);
  PyObject *sl = a && b ? PySlice_New(a, b, NULL) : NULL;
  PyObject *r = sl ? PyObject_GetItem(obj, sl) : NULL;
  Py_XDECREF(sl);
  Py_XDECREF(a);
  Py_XDECREF(b);
  return r;
}

/* kernel[grid, block, stream](args...) */
static int launch(PyObject *kernel, Py_ssize_t grid, Py_ssize_t block, PyObject *stream,
                  PyObject *arr, PyObject *partials, PyObject *init, int use_init) {
  PyObject *config = Py_BuildValue("(nnO)", grid, block, stream);
  PyObject *launcher = config ? PyObject_GetItem(kernel, config) : NULL;
  PyObject *r = launcher ? PyObject_CallFunction(launcher, "OOOO", arr, partials, init,
                                                 use_init ? Py_True : Py_False)
                         : NULL;
  Py_XDECREF(config);
  Py_XDECREF(launcher);
  Py_XDECREF(r);
  return r ? 0 : -1;
}

/* Reduce.__call__(arr, size=None, res=None, init=0, stream=0), as numba's. */
static PyObject *reduce_call(ReduceObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"arr", "size", "res", "init", "stream", NULL};
  PyObject *arr, *size = Py_None, *res = Py_None, *init_obj = NULL, *stream = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OOOO:reduce", kwlist, &arr, &size, &res,
                                   &init_obj, &stream))
    return NULL;
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  PyObject *module = PyType_GetModule(Py_TYPE(self));
  PyObject *zero = PyLong_FromLong(0);
  if (!zero) return NULL;
  if (!init_obj) init_obj = zero;
  if (!stream) stream = zero;
  PyObject *result = NULL, *dtype = NULL, *init = NULL, *kernel = NULL, *partials = NULL;
  PyObject *ndim = PyObject_GetAttrString(arr, "ndim");
  long nd = ndim ? PyLong_AsLong(ndim) : -1;
  Py_XDECREF(ndim);
  if (nd != 1) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "only support 1D array");
    goto done;
  }
  Py_INCREF(arr);
  if (size != Py_None) {
    PyObject *sl = PySlice_New(NULL, size, NULL);
    PyObject *cut = sl ? PyObject_GetItem(arr, sl) : NULL;
    Py_XDECREF(sl);
    Py_SETREF(arr, cut);
    if (!arr) goto done;
  }
  /* init = arr.dtype.type(init) */
  dtype = PyObject_GetAttrString(arr, "dtype");
  PyObject *scalar_type = dtype ? PyObject_GetAttrString(dtype, "type") : NULL;
  init = scalar_type ? PyObject_CallOneArg(scalar_type, init_obj) : NULL;
  Py_XDECREF(scalar_type);
  PyObject *n_obj = init ? PyObject_GetAttrString(arr, "size") : NULL;
  Py_ssize_t n = n_obj ? PyNumber_AsSsize_t(n_obj, PyExc_OverflowError) : -1;
  Py_XDECREF(n_obj);
  if (n < 0 && PyErr_Occurred()) goto done_arr;
  if (n < 1) {
    result = Py_NewRef(init);
    goto done_arr;
  }
  if (!(kernel = reduce_kernel(st, self, module, dtype))) goto done_arr;
  const Py_ssize_t blocksize = NUMWARPS * WARPSIZE;
  Py_ssize_t size_full = (n / blocksize) * blocksize, size_partial = n - size_full;
  Py_ssize_t full_blockct = size_full / blocksize < WARPSIZE * 2 ? size_full / blocksize
                                                                  : WARPSIZE * 2;
  Py_ssize_t partials_size = full_blockct + (size_partial ? 1 : 0);
  partials = PyObject_CallMethod(module, "device_array", "(n)O", partials_size, dtype);
  if (!partials) goto done_arr;
  if (size_full) {
    PyObject *a = slice_of(arr, 0, size_full), *p = a ? slice_of(partials, 0, full_blockct)
                                                      : NULL;
    int rc = p ? launch(kernel, full_blockct, blocksize, stream, a, p, init, 1) : -1;
    Py_XDECREF(a);
    Py_XDECREF(p);
    if (rc < 0) goto done_arr;
  }
  if (size_partial) {
    PyObject *a = slice_of(arr, size_full, -1), *p = a ? slice_of(partials, full_blockct, -1)
                                                       : NULL;
    int rc = p ? launch(kernel, 1, size_partial, stream, a, p, init, !full_blockct) : -1;
    Py_XDECREF(a);
    Py_XDECREF(p);
    if (rc < 0) goto done_arr;
  }
  if (partials_size > 1 &&
      launch(kernel, 1, partials_size, stream, partials, partials, init, 0) < 0)
    goto done_arr;
  if (res != Py_None) { /* res[:1].copy_to_device(partials[:1], stream=stream) */
    PyObject *dst = slice_of(res, 0, 1), *src = dst ? slice_of(partials, 0, 1) : NULL;
    PyObject *copy = src ? PyObject_GetAttrString(dst, "copy_to_device") : NULL;
    PyObject *cargs = copy ? PyTuple_Pack(1, src) : NULL;
    PyObject *ckw = cargs ? Py_BuildValue("{sO}", "stream", stream) : NULL;
    PyObject *r = ckw ? PyObject_Call(copy, cargs, ckw) : NULL;
    if (r) result = Py_NewRef(Py_None);
    Py_XDECREF(r);
    Py_XDECREF(ckw);
    Py_XDECREF(cargs);
    Py_XDECREF(copy);
    Py_XDECREF(src);
    Py_XDECREF(dst);
  } else {
    PyObject *first = PyLong_FromLong(0);
    result = first ? PyObject_GetItem(partials, first) : NULL;
    Py_XDECREF(first);
  }
done_arr:
  Py_DECREF(arr);
done:
  Py_XDECREF(partials);
  Py_XDECREF(kernel);
  Py_XDECREF(init);
  Py_XDECREF(dtype);
  Py_DECREF(zero);
  return result;
}

static PyMemberDef reduce_members[] = {
    {"_functor", T_OBJECT, offsetof(ReduceObject, functor), READONLY, "the binary function"},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot reduce_slots[] = {
    {Py_tp_new, reduce_new},
    {Py_tp_call, reduce_call},
    {Py_tp_traverse, reduce_traverse},
    {Py_tp_clear, reduce_clear},
    {Py_tp_dealloc, reduce_dealloc},
    {Py_tp_members, reduce_members},
    {Py_tp_doc, (void *)"Reduce(functor)\n--\n\nA reduction of 1-D arrays with the binary function "
                        "functor (numba's cuda.reduce); call it with (arr, size=None, "
                        "res=None, init=0, stream=0)."},
    {0, NULL},
};

static PyType_Spec reduce_spec = {
    .name = "nbcuda.Reduce",
    .basicsize = sizeof(ReduceObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = reduce_slots,
};

int nbc__py_reduce_init(PyObject *module, nbc__py_state *st) {
  PyTypeObject *type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &reduce_spec, NULL);
  if (!type) return -1;
  st->ReduceType = type;
  if (PyModule_AddObjectRef(module, "Reduce", (PyObject *)type) < 0) return -1;
  return PyModule_AddObjectRef(module, "reduce", (PyObject *)type);
}
