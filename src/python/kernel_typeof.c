/* kernel_typeof.c — the numba type of each argument a launch is given (numba's typeof for
 * a dispatcher without signatures): arrays of every kind (numpy, device, CUDA array interface,
 * DLPack), scalars, Python ints as numba types them, tuples, records, enums; and the
 * signature they make, "void(float32[::1], int64)". kernel.c chooses or compiles the overload
 * for it. */
#include "kernel.h"

#include <string.h>

/* TypeError for an argument whose elements kernels cannot take (strings, dates, objects):
 * its type and, for an array, its dtype. */
static void element_refused(PyObject *a) {
  PyObject *dt = PyObject_GetAttrString(a, "dtype");
  if (!dt) PyErr_Clear();
  if (dt)
    PyErr_Format(PyExc_TypeError, "unsupported kernel argument of type %s: arrays of %R "
                 "cannot be passed to kernels (their elements are numbers, booleans or "
                 "records of them)", Py_TYPE(a)->tp_name, dt);
  else
    PyErr_Format(PyExc_TypeError, "unsupported kernel argument of type %s",
                 Py_TYPE(a)->tp_name);
  Py_XDECREF(dt);
}

/* An exact numpy array of dates or records (numpy exports no buffer of dates, nor of records
 * holding them): its geometry read from the array itself. 1 when *v is filled, 0 when a is
 * not such an array (the buffer protocol then judges it). */
static int ndarray_geometry(nbc__py_state *st, PyObject *a, nbc__py_array_view *v) {
  char kind = nbc__py_numpy_kind(st, a);
  if (kind != 'M' && kind != 'm' && kind != 'V') return 0;
  PyObject *dt = nbc__py_numpy_dtype_of(st, a);
  Py_ssize_t itemsize = dt ? nbc__py_attr_ssize(dt, "itemsize") : -1;
  Py_buffer b;
  int ok = itemsize > 0 && itemsize <= INT32_MAX &&
           nbc__py_numpy_view(st, a, 0, (int)itemsize, &b);
  if (ok) {
    v->kind = kind;
    v->itemsize = (int)itemsize;
    v->ndim = b.ndim;
    for (int d = 0; d < b.ndim; d++) {
      v->shape[d] = b.shape[d];
      v->strides[d] = b.strides[d];
    }
    v->datetime = kind != 'V' ? nbc__py_dtype_datetime_name(dt) : NULL;
  }
  Py_XDECREF(dt);
  PyErr_Clear();
  return ok;
}

PyObject *nbc__py_kernel_typeof_arg(nbc__py_state *st, PyObject *a);

/* Which of numba's types a Python int takes (numba's _typeof_int): 1 for int64, 2 for
 * uint64 (2**63 to 2**64 - 1), 0 for a value neither holds. */
int nbc__py_kernel_pyint_range(PyObject *a) {
  int overflow = 0;
  (void)PyLong_AsLongLongAndOverflow(a, &overflow);
  if (!overflow) return 1;
  if (overflow < 0) return 0;
  (void)PyLong_AsUnsignedLongLong(a);
  if (!PyErr_Occurred()) return 2;
  PyErr_Clear();
  return 0;
}

/* numba's typeof of a Python int, and its ValueError for one no 64-bit integer holds (which
 * would otherwise reach the kernel wrapped, 2**64 as 0). */
static PyObject *pyint_type_text(PyObject *a) {
  switch (nbc__py_kernel_pyint_range(a)) {
  case 1: return PyUnicode_FromString("int64");
  case 2: return PyUnicode_FromString("uint64");
  }
  PyErr_Format(PyExc_ValueError, "Int value is too large: %S", a);
  return NULL;
}

/* The type of an enum member's value (nbc__py_enum_arg_text's callback). */
static PyObject *enum_value_text(PyObject *value, void *st) {
  return nbc__py_kernel_typeof_arg((nbc__py_state *)st, value);
}

/* numba's typeof for the lazy jit: the signature spelling of one argument. */
PyObject *nbc__py_kernel_typeof_arg(nbc__py_state *st, PyObject *a) {
  PyObject *value;
  int copy_in, copy_out;
  if (nbc__py_arg_hint(st, a, &value, &copy_in, &copy_out)) a = value; /* In(x): x's type */
  if (PyBool_Check(a)) return PyUnicode_FromString("boolean");
  if (PyTuple_Check(a) && !PyTuple_CheckExact(a)) { /* a namedtuple: numba's NamedTuple */
    PyObject *fields = PyObject_GetAttrString((PyObject *)Py_TYPE(a), "_fields");
    if (!fields) PyErr_Clear();
    if (fields && PyTuple_Check(fields) && PyTuple_GET_SIZE(fields) == PyTuple_GET_SIZE(a)) {
      PyObject *s = PyUnicode_FromFormat("NamedTuple(%s", _PyType_Name(Py_TYPE(a)));
      for (Py_ssize_t i = 0; s && i < PyTuple_GET_SIZE(a); i++) {
        PyObject *t = nbc__py_nesting_enter("a kernel argument") < 0
                          ? NULL
                          : nbc__py_kernel_typeof_arg(st, PyTuple_GET_ITEM(a, i));
        if (t) nbc__py_nesting_leave();
        Py_SETREF(s, t ? PyUnicode_FromFormat("%U, %S: %U", s, PyTuple_GET_ITEM(fields, i), t)
                       : NULL);
        Py_XDECREF(t);
      }
      Py_DECREF(fields);
      if (s) Py_SETREF(s, PyUnicode_FromFormat("%U)", s));
      return s;
    }
    Py_XDECREF(fields);
  }
  if (PyTuple_Check(a)) { /* numba's Tuple of the items' types (an empty one too) */
    if (nbc__py_nesting_enter("a kernel argument") < 0) return NULL;
    PyObject *s = nbc__py_join_texts(st, "Tuple(", PySequence_Fast_ITEMS(a),
                                     PyTuple_GET_SIZE(a), nbc__py_kernel_typeof_arg);
    nbc__py_nesting_leave();
    return s;
  }
  if (a == Py_None) return PyUnicode_FromString("none"); /* numba's NoneType: nothing passed */
  int member = nbc__py_is_int_enum_member(a); /* numba's IntEnumMember: IntEnum<int64>(m.S) */
  if (member) return member > 0 ? nbc__py_enum_arg_text(a, enum_value_text, st) : NULL;
  if (PyLong_Check(a)) return pyint_type_text(a);
  if (PyFloat_CheckExact(a)) return PyUnicode_FromString("float64");
  if (PyComplex_CheckExact(a)) return PyUnicode_FromString("complex128");
  /* numpy scalars (numpy.generic: they export a buffer too, so ask numpy): their dtype */
  /* (numpy.record, np.recarray's element, is a Python subclass of numpy.void named "record";
   * an object can only be one once numpy is loaded, so this imports nothing) */
  int np_scalar = strncmp(Py_TYPE(a)->tp_name, "numpy.", 6) == 0 ||
                  (PyDict_GetItemString(PyImport_GetModuleDict(), "numpy") &&
                   nbc__py_is_numpy_void(st, a));
  if (np_scalar) {
    if (!nbc__py_numpy(st)) return NULL;
    np_scalar = !PyObject_TypeCheck(a, (PyTypeObject *)st->np_ndarray);
  }
  if (np_scalar && nbc__py_is_numpy_void(st, a)) {
    PyObject *dt = PyObject_GetAttrString(a, "dtype"); /* a record: numba's Record type */
    PyObject *text = dt ? nbc__py_record_text(st, dt) : NULL;
    Py_XDECREF(dt);
    return text;
  }
  if (np_scalar) {
    PyObject *dt = PyObject_GetAttrString(a, "dtype");
    PyObject *str = dt ? PyObject_GetAttrString(dt, "str") : NULL;
    const char *ts = str ? PyUnicode_AsUTF8(str) : NULL;
    const char *n = ts ? nbc__py_scalar_name(ts[1], atol(ts + 2)) : NULL;
    if (!n && ts) n = nbc__py_datetime_name(ts); /* numba's NPDatetime / NPTimedelta */
    PyObject *r = n ? PyUnicode_FromString(n) : NULL;
    if (!n && !PyErr_Occurred())
      PyErr_Format(PyExc_TypeError, "unsupported kernel argument %R: numba has no type for "
                   "numpy's %R", a, dt);
    Py_XDECREF(dt);
    Py_XDECREF(str);
    return r;
  }
  if (PyFloat_Check(a)) return PyUnicode_FromString("float64");
  /* Arrays: device arrays and __cuda_array_interface__ objects through the launch view
   * (no copy for those), host buffers through the buffer protocol (no copy either). */
  nbc__py_array_view v;
  v.host = NULL;
  v.datetime = NULL;
  PyObject *cai = NULL;
  int dl = 0;
  if (Py_TYPE(a) == st->DeviceArrayType) {
    if (nbc__py_array_view_get(st, a, &v) < 0) return NULL;
  } else if ((dl = nbc__py_dlpack_view(st, a, -1, &v)) != 0) { /* numba-cuda: before the CAI */
    if (dl < 0) return NULL;
    Py_CLEAR(v.owner); /* typing reads the geometry only */
  } else if (nbc__py_optional_attr(a, st->str_cai, &cai)) {
    int rc = nbc__py_cai_view(st, cai, &v);
    Py_DECREF(cai);
    if (rc < 0) return NULL;
  } else {
    Py_buffer b;
    if (ndarray_geometry(st, a, &v)) goto typed;
    if (PyObject_GetBuffer(a, &b, PyBUF_RECORDS_RO) < 0) {
      PyErr_Clear();
      int member = nbc__py_is_enum_member(a); /* numba's EnumMember: Enum<int64>(mod.Color) */
      if (member) return member > 0 ? nbc__py_enum_arg_text(a, enum_value_text, st) : NULL;
      element_refused(a);
      return NULL;
    }
    v.kind = nbc__py_format_kind(b.format, b.itemsize); /* 'V' for records ("T{...}") */
    v.itemsize = (int)b.itemsize;
    v.ndim = b.ndim <= NBC__PY_MAXDIM ? b.ndim : 0;
    for (int d = 0; d < v.ndim; d++) {
      v.shape[d] = b.shape ? b.shape[d] : b.len / b.itemsize;
      v.strides[d] = b.strides ? b.strides[d] : 0;
    }
    int64_t stride = v.itemsize;
    for (int d = v.ndim - 1; !b.strides && d >= 0; d--) {
      v.strides[d] = stride;
      stride *= v.shape[d];
    }
    PyBuffer_Release(&b);
  }
typed:;
  const char *n = nbc__py_scalar_name(v.kind, v.itemsize);
  if (!n && (v.kind == 'M' || v.kind == 'm')) n = v.datetime; /* numba's NPDatetime(unit) */
  PyObject *record = NULL; /* an array of records or strings: its element type's text */
  if (v.kind == 'V') {
    PyObject *dt = PyObject_GetAttrString(a, "dtype");
    record = dt ? nbc__py_record_text(st, dt) : NULL;
    Py_XDECREF(dt);
    if (!record) return NULL;
    n = PyUnicode_AsUTF8(record);
  } else if (v.kind == 'S' || v.kind == 'U') { /* numba's CharSeq and UnicodeCharSeq */
    record = nbc__py_string_type_text((Py_UCS4)v.kind, v.itemsize);
    if (record) n = PyUnicode_AsUTF8(record);
  }
  if (record && v.ndim == 0 && Py_TYPE(a) == st->DeviceArrayType && v.kind == 'V')
    return record; /* to_device(record): numba's DeviceRecord, a Record argument */
  if (n && v.ndim == 0) { /* a 0-d array: numba's array(dtype, 0d, C) */
    PyObject *s = PyUnicode_FromFormat("array(%s, 0d, C)", n);
    Py_XDECREF(record);
    return s;
  }
  if (!n || v.ndim == 0) {
    Py_XDECREF(record);
    if (!n && v.ndim > 0)
      element_refused(a);
    else
      PyErr_Format(PyExc_TypeError, "unsupported kernel argument %R", a);
    return NULL;
  }
  char layout = nbc__py_view_layout(&v);
  PyObject *s = PyUnicode_FromFormat("%s[", n);
  Py_XDECREF(record);
  for (int d = 0; s && d < v.ndim; d++) {
    int unit = (layout == 'C' && d == v.ndim - 1) || (layout == 'F' && d == 0);
    Py_SETREF(s, PyUnicode_FromFormat("%U%s%s", s, d ? ", " : "", unit ? "::1" : ":"));
  }
  if (s) Py_SETREF(s, PyUnicode_FromFormat("%U]", s));
  return s;
}

/* "void(<numba type of each argument>)", e.g. "void(float32[::1], int64)". */
PyObject *nbc__py_kernel_typeof_signature(nbc__py_state *st, PyObject *const *args, Py_ssize_t n) {
  return nbc__py_join_texts(st, "void(", args, n, nbc__py_kernel_typeof_arg);
}
