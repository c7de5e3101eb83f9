/* numpy_api.c — numpy, imported on first need, and the two things of its C API that the
 * per-call paths use: making an empty array (copy_to_host, element reads) and reading an
 * exact numpy.ndarray's memory and geometry (to_device, copies, host arrays passed to
 * kernels).
 *
 * nbcuda builds without numpy's headers (numpy is optional until an array is made), so the
 * C API is found the way numpy's own import_array() finds it: the PyCapsule
 * `_ARRAY_API` of numpy._core._multiarray_umath (numpy 2) or numpy.core._multiarray_umath
 * (numpy 1), a table of function pointers whose slots numpy keeps fixed across releases
 * (slot 0 PyArray_GetNDArrayCVersion, 2 PyArray_Type, 94 PyArray_NewFromDescr), and the
 * leading fields of numpy's array struct (data, nd, dimensions, strides, base, descr,
 * flags), which both ABI versions 1 and 2 share. With any other ABI version, or no capsule,
 * the table is not used: arrays come from numpy.empty through vectorcall and are read
 * through the buffer protocol, which is slower (numpy.empty parses its arguments, and a
 * buffer export computes a format string and a buffer-info record) but gives the same
 * result. NBCUDA_NUMPY_CAPI=0 in the environment takes that path on purpose (the tests run
 * both).
 *
 * Structured (record) dtypes are checked and rebuilt here too: a device array of one keeps
 * the numpy dtype object itself (kind and itemsize cannot say its fields), and an imported
 * __cuda_array_interface__ brings its fields in `descr`.
 */
#include "nbcuda_py.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* numpy's PyArrayObject_fields, up to flags (numpy/ndarraytypes.h; unchanged in ABI 1, 2) */
typedef struct {
  PyObject_HEAD
  char *data;
  int nd;
  Py_ssize_t *dimensions;
  Py_ssize_t *strides;
  PyObject *base;
  PyObject *descr;
  int flags;
} np_array_fields;

/* numpy's PyArray_Descr, up to kind (numpy/ndarraytypes.h; unchanged in ABI 1, 2) */
typedef struct {
  PyObject_HEAD
  PyTypeObject *typeobj;
  char kind;
} np_descr_head;

enum { NP_C_CONTIGUOUS = 0x0001, NP_F_CONTIGUOUS = 0x0002, NP_OWNDATA = 0x0004,
       NP_ALIGNED = 0x0100, NP_WRITEABLE = 0x0400 };
enum { SLOT_GET_ABI_VERSION = 0, SLOT_ARRAY_TYPE = 2, SLOT_NEW_FROM_DESCR = 94 };

typedef unsigned (*np_abi_version_fn)(void);
typedef PyObject *(*np_new_from_descr_fn)(PyTypeObject *, PyObject *descr, int nd,
                                          const Py_ssize_t *dims, const Py_ssize_t *strides,
                                          void *data, int flags, PyObject *obj);

/* The capsule's table, when its ABI is one whose slots and struct this file knows. */
static void **find_api_table(void) {
  static const char *const modules[] = {"numpy._core._multiarray_umath",
                                        "numpy.core._multiarray_umath"};
  for (size_t i = 0; i < sizeof modules / sizeof *modules; i++) {
    PyObject *m = PyImport_ImportModule(modules[i]);
    PyObject *cap = m ? PyObject_GetAttrString(m, "_ARRAY_API") : NULL;
    Py_XDECREF(m);
    void **api = cap && PyCapsule_CheckExact(cap) ? PyCapsule_GetPointer(cap, NULL) : NULL;
    Py_XDECREF(cap); /* the module keeps the capsule and its table alive */
    PyErr_Clear();
    if (!api) continue;
    unsigned abi = ((np_abi_version_fn)api[SLOT_GET_ABI_VERSION])();
    unsigned major = abi >> 24;
    return (major == 1 || major == 2) && api[SLOT_ARRAY_TYPE] ? api : NULL;
  }
  return NULL;
}

PyObject *nbc__py_numpy(nbc__py_state *st) {
  if (st->numpy) return st->numpy;
  PyObject *np = PyImport_ImportModule("numpy");
  if (!np) return NULL;
  st->np_empty = PyObject_GetAttrString(np, "empty");
  st->np_ndarray = st->np_empty ? PyObject_GetAttrString(np, "ndarray") : NULL;
  st->np_dtype = st->np_ndarray ? PyObject_GetAttrString(np, "dtype") : NULL;
  st->str_C = PyUnicode_InternFromString("C");
  st->str_F = PyUnicode_InternFromString("F");
  if (!st->np_empty || !st->np_ndarray || !st->np_dtype || !st->str_C || !st->str_F ||
      !PyType_Check(st->np_ndarray) || !PyType_Check(st->np_dtype)) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ImportError, "numpy lacks empty/ndarray/dtype");
    Py_CLEAR(st->np_empty);
    Py_CLEAR(st->np_ndarray);
    Py_CLEAR(st->np_dtype);
    Py_DECREF(np);
    return NULL;
  }
  const char *use = getenv("NBCUDA_NUMPY_CAPI"); /* "0": test the fallback paths */
  void **api = use && strcmp(use, "0") == 0 ? NULL : find_api_table();
  /* the table's array type must be the ndarray numpy exports, or the table is not used */
  st->np_api = api && (PyObject *)api[SLOT_ARRAY_TYPE] == st->np_ndarray ? api : NULL;
  st->numpy = np;
  return np;
}

PyObject *nbc__py_numpy_empty(nbc__py_state *st, PyObject *dtype, int ndim, const int64_t *shape,
                              int fortran) {
  if (!nbc__py_numpy(st)) return NULL;
  if (st->np_api && ndim <= NBC__PY_MAXDIM) {
    Py_ssize_t dims[NBC__PY_MAXDIM];
    for (int d = 0; d < ndim; d++) dims[d] = (Py_ssize_t)shape[d];
    np_new_from_descr_fn new_array = (np_new_from_descr_fn)st->np_api[SLOT_NEW_FROM_DESCR];
    Py_INCREF(dtype); /* PyArray_NewFromDescr steals the descriptor, also on failure */
    return new_array((PyTypeObject *)st->np_ndarray, dtype, ndim, dims, NULL, NULL,
                     fortran ? NP_F_CONTIGUOUS : 0, NULL);
  }
  PyObject *t = nbc__py_int64_tuple(shape, ndim);
  if (!t) return NULL;
  PyObject *argv[3] = {t, dtype, fortran ? st->str_F : st->str_C};
  PyObject *out = PyObject_Vectorcall(st->np_empty, argv, 3, NULL);
  Py_DECREF(t);
  return out;
}

int nbc__py_numpy_view(nbc__py_state *st, PyObject *obj, int writable, int itemsize,
                       Py_buffer *view) {
  if (!st->np_api || Py_TYPE(obj) != (PyTypeObject *)st->np_ndarray) return 0;
  const np_array_fields *a = (const np_array_fields *)obj;
  if (!(a->flags & NP_ALIGNED) || (writable && !(a->flags & NP_WRITEABLE)) ||
      a->nd > NBC__PY_MAXDIM)
    return 0;
  Py_ssize_t len = itemsize;
  for (int d = 0; d < a->nd; d++) len *= a->dimensions[d];
  memset(view, 0, sizeof *view);
  view->buf = a->data;
  view->obj = NULL; /* the caller holds obj; PyBuffer_Release does nothing */
  view->len = len;
  view->itemsize = itemsize;
  view->readonly = !(a->flags & NP_WRITEABLE);
  view->ndim = a->nd;
  view->shape = a->dimensions;
  view->strides = a->strides;
  return 1;
}

int nbc__py_numpy_pageable(nbc__py_state *st, PyObject *obj) {
  if (!st->np_api || Py_TYPE(obj) != (PyTypeObject *)st->np_ndarray) return 0;
  const np_array_fields *a = (const np_array_fields *)obj, *root = a;
  for (int depth = 0; root->base; depth++) { /* views of views: the array that owns it */
    if (depth == 16 || Py_TYPE(root->base) != (PyTypeObject *)st->np_ndarray) return 0;
    root = (const np_array_fields *)root->base;
  }
  return (root->flags & NP_OWNDATA) && !nbc_mem_host_pagelocked_by_nbcuda(root->data) &&
         !nbc_mem_host_pagelocked_by_nbcuda(a->data);
}

PyObject *nbc__py_numpy_dtype_of(nbc__py_state *st, PyObject *obj) {
  if (st->np_api && Py_TYPE(obj) == (PyTypeObject *)st->np_ndarray)
    return Py_NewRef(((const np_array_fields *)obj)->descr);
  return PyObject_GetAttr(obj, st->str_dtype);
}

char nbc__py_numpy_kind(nbc__py_state *st, PyObject *obj) {
  if (!st->np_ndarray || !PyObject_TypeCheck(obj, (PyTypeObject *)st->np_ndarray)) return 0;
  if (st->np_api) /* subclasses share the array struct */
    return ((const np_descr_head *)((const np_array_fields *)obj)->descr)->kind;
  PyObject *dt = PyObject_GetAttr(obj, st->str_dtype);
  PyObject *kind = dt ? PyObject_GetAttrString(dt, "kind") : NULL;
  const char *k = kind && PyUnicode_Check(kind) ? PyUnicode_AsUTF8(kind) : NULL;
  char r = k ? k[0] : 0;
  Py_XDECREF(dt);
  Py_XDECREF(kind);
  PyErr_Clear();
  return r;
}

PyObject *nbc__py_host_dtype(nbc__py_state *st, PyObject *obj) {
  PyObject *np = nbc__py_numpy(st), *dt = NULL;
  if (!np) return NULL;
  if (nbc__py_optional_attr(obj, st->str_dtype, &dt) &&
      PyObject_TypeCheck(dt, (PyTypeObject *)st->np_dtype))
    return dt;
  Py_CLEAR(dt);
  if (PyErr_Occurred()) return NULL;
  PyObject *arr = PyObject_CallMethod(np, "asarray", "(O)", obj);
  dt = arr ? PyObject_GetAttr(arr, st->str_dtype) : NULL;
  Py_XDECREF(arr);
  return dt;
}

int nbc__py_objects_check(PyObject *dtype, const char *memory) {
  PyObject *hasobject = PyObject_GetAttrString(dtype, "hasobject");
  int objects = hasobject ? PyObject_IsTrue(hasobject) : -1;
  Py_XDECREF(hasobject);
  if (objects > 0)
    PyErr_Format(PyExc_TypeError, "dtype %R holds Python objects, which cannot live in "
                 "%s memory", dtype, memory);
  return objects ? -1 : 0;
}

int nbc__py_record_check(PyObject *dtype) {
  PyObject *sub = PyObject_GetAttrString(dtype, "subdtype");
  int rc = -1;
  if (!sub) {
    /* the error is set */
  } else if (sub != Py_None) {
    PyErr_Format(PyExc_TypeError, "subarray dtype %R is not supported as an element type: use "
                 "an array of its base dtype with the extra dimensions", dtype);
  } else {
    rc = nbc__py_objects_check(dtype, "device");
  }
  Py_XDECREF(sub);
  return rc;
}

/* numpy.lib.format.descr_to_dtype(descr), which drops the nameless padding entries numpy's
 * dtype.descr lists (numpy.dtype(descr) would make them fields named f2...); numpy.dtype(descr)
 * where numpy lacks it. A new reference. */
static PyObject *dtype_from_descr(nbc__py_state *st, PyObject *descr) {
  PyObject *format = PyImport_ImportModule("numpy.lib.format");
  PyObject *fn = format ? PyObject_GetAttrString(format, "descr_to_dtype") : NULL;
  Py_XDECREF(format);
  if (!fn) {
    PyErr_Clear();
    return PyObject_CallOneArg(st->np_dtype, descr);
  }
  PyObject *dt = PyObject_CallOneArg(fn, descr);
  Py_DECREF(fn);
  return dt;
}

PyObject *nbc__py_record_from_cai(nbc__py_state *st, PyObject *typestr, PyObject *descr,
                                  int itemsize) {
  if (!nbc__py_numpy(st)) return NULL;
  /* no descr, or the interface's default one, [('', typestr)]: raw bytes */
  int plain = !descr || descr == Py_None;
  if (!plain) {
    PyObject *dflt = Py_BuildValue("[(sO)]", "", typestr);
    plain = dflt ? PyObject_RichCompareBool(descr, dflt, Py_EQ) : -1;
    Py_XDECREF(dflt);
    if (plain < 0) return NULL;
  }
  PyObject *dt = plain ? PyObject_CallOneArg(st->np_dtype, typestr) : dtype_from_descr(st, descr);
  if (!dt) return NULL;
  PyObject *size = PyObject_GetAttrString(dt, "itemsize");
  long n = size ? PyLong_AsLong(size) : -1;
  Py_XDECREF(size);
  if (n != itemsize && !PyErr_Occurred())
    PyErr_Format(PyExc_TypeError, "__cuda_array_interface__: descr %R describes %ld-byte "
                 "elements, typestr %R %d-byte ones", descr, n, typestr, itemsize);
  if (PyErr_Occurred() || nbc__py_record_check(dt) < 0) Py_CLEAR(dt);
  return dt;
}
