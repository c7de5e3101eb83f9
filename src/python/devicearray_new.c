/* devicearray_new.c — the module functions that make device arrays (to_device,
 * device_array, device_array_like, from_cuda_array_interface, as_cuda_array,
 * is_cuda_array), and the array view a kernel launch takes of any array argument. Both
 * read arrays from the same sources, host buffers and __cuda_array_interface__, whose
 * readers are here (devicearray.c's copy_to_device uses nbc__py_host_buffer too). The
 * object itself is in devicearray.c (devicearray.h).
 *
 * Host data comes in through the buffer protocol (numpy arrays, array.array, memoryview...),
 * contiguous in C or F order only, as numba requires ("Array contains non-contiguous
 * buffer..."); anything without a buffer goes through numpy.asarray first, like numba's
 * np.array(obj). Objects with __cuda_array_interface__ (CuPy, PyTorch) are wrapped without a
 * copy and kept alive by the wrapper; a stream in the interface becomes the array's stream,
 * as external_stream(its stream), and a structured typestr ("|V16") takes its fields from
 * the interface's `descr`. to_device, device_array and device_array_like bind the array to
 * their stream argument.
 *
 * The launch view (nbc__py_array_view_get) reads an nbcuda array's fields directly — no
 * attribute lookups on the launch hot path — and falls back to __dlpack__ (CUDA memory only,
 * devicearray_dlpack.c), then __cuda_array_interface__, then to host buffers, which are copied to the device for the launch and back after it,
 * as numba does for host arrays passed to kernels.
 */
#include "devicearray.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ buffers and interfaces -- */

/* An exact numpy.ndarray's buffer without the format string, which numpy builds anew for
 * every export, and its element type from its dtype object through nbc__py_dtype_arg's cache
 * (and for a structured dtype, the dtype in *precord). 1 on success; 0 (nothing held, no
 * error) when the general path must judge the array. */
static int ndarray_buffer(nbc__py_state *st, PyObject *obj, Py_buffer *view, int writable,
                          char *pkind, int *pitemsize, PyObject **precord) {
  PyObject *dt = nbc__py_numpy_dtype_of(st, obj);
  int ok = dt && nbc__py_dtype_arg(st, dt, pkind, pitemsize, precord) == 0;
  Py_XDECREF(dt);
  if (ok && nbc__py_numpy_view(st, obj, writable, *pitemsize, view)) return 1;
  if (ok && PyObject_GetBuffer(obj, view, PyBUF_STRIDES | (writable ? PyBUF_WRITABLE : 0)) == 0) {
    if (view->itemsize == *pitemsize) return 1;
    PyBuffer_Release(view);
  }
  Py_CLEAR(*precord);
  PyErr_Clear();
  return 0;
}

/* The structured dtype of a buffer whose format is one ("T{d:a:i:b:}"): the dtype of the
 * object it came from, which must match the buffer's item size. A new reference, or NULL
 * with TypeError. */
static PyObject *buffer_record(nbc__py_state *st, PyObject *obj, const Py_buffer *view) {
  PyObject *dt = nbc__py_host_dtype(st, obj);
  if (!dt) return NULL;
  PyObject *size = PyObject_GetAttrString(dt, "itemsize");
  Py_ssize_t n = size ? PyLong_AsSsize_t(size) : -1;
  Py_XDECREF(size);
  if (n != view->itemsize && !PyErr_Occurred())
    PyErr_Format(PyExc_TypeError, "the buffer's format '%s' has %zd-byte items, its dtype %R "
                 "%zd-byte ones", view->format, view->itemsize, dt, n);
  if (PyErr_Occurred() || nbc__py_record_check(dt) < 0) Py_CLEAR(dt);
  return dt;
}

/* Gets a contiguous host buffer of obj (numpy.asarray for objects without one). *pkind is
 * the element's kind letter (0 for a format nbcuda does not know); for kind 'V' *precord is
 * the numpy dtype with the fields (a new reference; else NULL). */
int nbc__py_host_buffer(nbc__py_state *st, PyObject *obj, Py_buffer *view, int writable,
                        PyObject **pholder, char *pkind, int *pitemsize, PyObject **precord) {
  *pholder = *precord = NULL;
  *pkind = 0;
  int flags = PyBUF_RECORDS_RO | (writable ? PyBUF_WRITABLE : 0);
  if (st->np_ndarray && Py_TYPE(obj) == (PyTypeObject *)st->np_ndarray &&
      ndarray_buffer(st, obj, view, writable, pkind, pitemsize, precord))
    goto got;
  *pkind = 0;
  if (PyObject_GetBuffer(obj, view, flags) == 0) goto got;
  if (writable || !PyErr_ExceptionMatches(PyExc_TypeError)) return -1;
  PyErr_Clear();
  PyObject *np = nbc__py_numpy(st);
  PyObject *arr = np ? PyObject_CallMethod(np, "asarray", "(O)", obj) : NULL;
  if (!arr) return -1;
  if (PyObject_GetBuffer(arr, view, flags) < 0) {
    Py_DECREF(arr);
    return -1;
  }
  *pholder = arr;
got:
  if (!PyBuffer_IsContiguous(view, 'C') && !PyBuffer_IsContiguous(view, 'F')) {
    PyErr_SetString(PyExc_ValueError, nbc__py_noncontig_msg);
    goto fail;
  }
  if (view->ndim > NBC__PY_MAXDIM) {
    PyErr_Format(PyExc_ValueError, "arrays of more than %d dimensions are not supported",
                 NBC__PY_MAXDIM);
    goto fail;
  }
  if (!*pkind) *pkind = nbc__py_format_kind(view->format, view->itemsize);
  if (*pkind == 'V' && !*precord &&
      !(*precord = buffer_record(st, *pholder ? *pholder : obj, view)))
    goto fail;
  return 0;
fail:
  PyBuffer_Release(view);
  Py_CLEAR(*pholder);
  Py_CLEAR(*precord);
  return -1;
}

/* Geometry of a buffer into an array object; -1 with TypeError for unsupported formats.
 * kind: the element's kind letter when nbc__py_host_buffer knew it, else 0 (read the
 * format). */
static int geometry_from_buffer(ArrayObject *a, const Py_buffer *view, char kind,
                                PyObject *dtype) {
  a->kind = kind ? kind : nbc__py_format_kind(view->format, view->itemsize);
  if (!a->kind) {
    PyErr_Format(PyExc_TypeError, "unsupported buffer format '%s' (numeric little-endian "
                 "scalars and structured dtypes only)", view->format ? view->format : "B");
    return -1;
  }
  a->itemsize = (int)view->itemsize;
  nbc__py_set_typestr(a->typestr, a->kind, a->itemsize);
  if ((a->kind == 'M' || a->kind == 'm') &&
      (!dtype || nbc__py_set_dtype_typestr(a->typestr, dtype) < 0)) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "a datetime64 buffer without its "
                                                            "dtype");
    return -1;
  }
  if (nbc__py_array_set_ndim(a, view->ndim) < 0) return -1;
  a->nbytes = (size_t)view->len;
  for (int d = 0; d < view->ndim; d++) {
    a->shape[d] = view->shape ? view->shape[d] : view->len / view->itemsize;
    a->strides[d] = view->strides ? view->strides[d] : 0;
  }
  if (!view->strides) nbc__py_array_dense_strides(a, 'C');
  return 0;
}

/* The entries of an interface dict nbcuda reads (NULL: absent). */
typedef struct {
  PyObject *version, *mask, *shape, *typestr, *data, *strides, *stream;
} cai_entries;

/* Reads cai's entries in one pass over the dict, matching the keys by identity (CuPy's,
 * PyTorch's and any Python literal keys are the interned strings the module state holds:
 * 200 instructions fewer than seven lookups); only when some key is not one of those are
 * the entries still missing looked up by value. -1 with TypeError when cai is not a dict, or
 * with a lookup's error (a key whose __eq__ raised). */
static int cai_read(nbc__py_state *st, PyObject *cai, cai_entries *e) {
  if (!PyDict_Check(cai)) {
    PyErr_SetString(PyExc_TypeError, "__cuda_array_interface__ must be a dict");
    return -1;
  }
  *e = (cai_entries){0};
  PyObject *const names[] = {st->str_version, st->str_mask,    st->str_shape, st->str_typestr,
                             st->str_data,    st->str_strides, st->str_stream};
  PyObject **slots[] = {&e->version, &e->mask,    &e->shape, &e->typestr,
                        &e->data,    &e->strides, &e->stream};
  enum { N = sizeof names / sizeof names[0] };
  Py_ssize_t pos = 0;
  PyObject *key, *value;
  int strangers = 0;
  while (PyDict_Next(cai, &pos, &key, &value)) {
    int i = 0;
    while (i < N && key != names[i]) i++;
    if (i < N)
      *slots[i] = value;
    else if (key != st->str_descr)
      strangers = 1;
  }
  for (int i = 0; strangers && i < N; i++)
    if (!*slots[i] && !(*slots[i] = PyDict_GetItemWithError(cai, names[i])) && PyErr_Occurred())
      return -1;
  return 0;
}

/* An unsigned 64-bit integer (a pointer or a stream handle) from an int; -1 with the error
 * set. Pointers below 2**63 (all of them in practice) take PyLong_AsLongLongAndOverflow's
 * digit loop, not PyLong_AsUnsignedLongLong's byte-array conversion. */
static int cai_u64(PyObject *o, unsigned long long *pv) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (!overflow && v >= 0) {
    *pv = (unsigned long long)v;
    return 0;
  }
  if (v == -1 && PyErr_Occurred()) return -1;
  *pv = PyLong_AsUnsignedLongLong(o);
  return *pv == (unsigned long long)-1 && PyErr_Occurred() ? -1 : 0;
}

/* Fills a from an interface's entries (cai_read). */
static int geometry_from_cai(ArrayObject *a, const cai_entries *e) {
  /* numba's from_cuda_array_interface: an int version is required (numba fails comparing
   * it otherwise), and from version 1 on a mask is refused */
  if (!e->version || !PyLong_Check(e->version)) {
    PyErr_SetString(PyExc_TypeError, "__cuda_array_interface__ needs an int 'version'");
    return -1;
  }
  if (PyLong_AsLong(e->version) >= 1 && e->mask && e->mask != Py_None) {
    PyErr_SetString(PyExc_NotImplementedError, "Masked arrays are not supported");
    return -1;
  }
  if (PyErr_Occurred()) return -1; /* a version beyond a C long */
  PyObject *shape = e->shape, *typestr = e->typestr, *data = e->data, *strides = e->strides;
  if (!shape || !typestr || !data || !PyTuple_Check(shape) || !PyUnicode_Check(typestr) ||
      !PyTuple_Check(data) || PyTuple_GET_SIZE(data) < 1) {
    PyErr_SetString(PyExc_ValueError, "__cuda_array_interface__ needs shape, typestr, data");
    return -1;
  }
  const char *ts = PyUnicode_AsUTF8(typestr);
  if (!ts || strlen(ts) < 3 || ts[0] == '>') {
    PyErr_Format(PyExc_TypeError, "unsupported typestr %R", typestr);
    return -1;
  }
  a->kind = ts[1] == '?' ? 'b' : ts[1];
  a->itemsize = 0; /* the digits after the kind, all of them ("<f4", "|V16") */
  const char *digit = ts + 2;
  while (*digit >= '0' && *digit <= '9' && a->itemsize < 1 << 20)
    a->itemsize = a->itemsize * 10 + (*digit++ - '0');
  int dates = (a->kind == 'M' || a->kind == 'm') && nbc__py_datetime_name(ts);
  if (a->kind == 'U') a->itemsize *= 4; /* "<U12": characters of 4 bytes */
  if ((*digit && !dates) || !strchr("biufcVMmSU", a->kind) || a->itemsize <= 0) {
    PyErr_Format(PyExc_TypeError, "unsupported typestr %R", typestr); /* 'V': see cai_record */
    return -1;
  }
  nbc__py_set_typestr(a->typestr, a->kind, a->itemsize);
  if (dates) strcpy(a->typestr, ts); /* "<M8[D]": nbc__py_datetime_name checked its length */
  Py_ssize_t nd = PyTuple_GET_SIZE(shape);
  if (nd > NBC__PY_MAXDIM) {
    PyErr_SetString(PyExc_ValueError, "too many dimensions");
    return -1;
  }
  if (nbc__py_array_set_ndim(a, (int)nd) < 0) return -1;
  int64_t n = 1;
  for (Py_ssize_t d = 0; d < nd; d++) {
    a->shape[d] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, d));
    if (a->shape[d] == -1 && PyErr_Occurred()) return -1;
  }
  if (nbc__py_checked_count(a, &n) < 0) return -1;
  if (strides && strides != Py_None) {
    if (!PyTuple_Check(strides) || PyTuple_GET_SIZE(strides) != nd) {
      PyErr_SetString(PyExc_ValueError, "__cuda_array_interface__ strides do not match shape");
      return -1;
    }
    for (Py_ssize_t d = 0; d < nd; d++) {
      a->strides[d] = PyLong_AsLongLong(PyTuple_GET_ITEM(strides, d));
      if (a->strides[d] == -1 && PyErr_Occurred()) return -1;
    }
  } else {
    nbc__py_array_dense_strides(a, 'C');
  }
  unsigned long long ptr;
  if (cai_u64(PyTuple_GET_ITEM(data, 0), &ptr) < 0) return -1;
  a->data = (nbc_devptr_t)ptr;
  a->nbytes = (size_t)(n * a->itemsize);
  return 0;
}

/* ------------------------------------------------------------ factories --------------- */

/* A structured interface's dtype, from its typestr and descr (geometry_from_cai checked the
 * dict and its typestr); 0 or -1. */
static int cai_record(nbc__py_state *st, ArrayObject *a, PyObject *cai) {
  PyObject *descr = PyDict_GetItemWithError(cai, st->str_descr);
  if (!descr && PyErr_Occurred()) return -1;
  PyObject *typestr = PyDict_GetItemWithError(cai, st->str_typestr);
  a->dtype = nbc__py_record_from_cai(st, typestr, descr, a->itemsize);
  return a->dtype ? 0 : -1;
}

static PyObject *wrap_cai(nbc__py_state *st, PyObject *obj, PyObject *cai) {
  cai_entries e;
  if (cai_read(st, cai, &e) < 0) return NULL;
  ArrayObject *a = nbc__py_array_alloc(st);
  if (!a) return NULL;
  if (geometry_from_cai(a, &e) < 0 || (a->kind == 'V' && cai_record(st, a, cai) < 0)) {
    Py_DECREF(a);
    return NULL;
  }
  a->base = Py_NewRef(obj);
  return (PyObject *)a;
}

/* numba's from_cuda_array_interface(desc, owner=None, sync=True): a device array over the
 * memory desc describes (no copy), holding owner; a masked array is refused. A stream in desc
 * becomes the array's stream, as external_stream(handle) (numba: "No 'Numba default
 * stream'" without one); with sync and config.CUDA_ARRAY_INTERFACE_SYNC (default on), that
 * stream is synchronized first, as numba's. (A kernel argument's stream is not: the launch's
 * stream waits for it instead, nbc__py_array_view_get's producer.) */
static PyObject *from_cai(PyObject *module, PyObject *desc, PyObject *owner, int sync) {
  nbc__py_state *st = nbc__py_module_state(module);
  if (!PyDict_Check(desc)) {
    PyErr_SetString(PyExc_TypeError, "__cuda_array_interface__ must be a dict");
    return NULL;
  }
  PyObject *stream = PyDict_GetItemWithError(desc, st->str_stream), *ext = NULL;
  if (!stream && PyErr_Occurred()) return NULL;
  if (stream && stream != Py_None) {
    unsigned long long h = PyLong_AsUnsignedLongLong(stream);
    if (h == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
    if (!(ext = PyObject_CallMethod(module, "external_stream", "K", h))) return NULL;
    nbc_stream_t *s = NULL, *temp = NULL;
    if (sync && st->config.cai_sync && nbc__py_stream_arg(st, ext, &s, &temp) == 0) {
      nbc_status_t rc;
      Py_BEGIN_ALLOW_THREADS rc = nbc_stream_synchronize(s);
      Py_END_ALLOW_THREADS nbc_stream_destroy(temp);
      if (rc != NBC_OK) nbc__py_raise(st, rc);
    }
    if (PyErr_Occurred()) {
      Py_DECREF(ext);
      return NULL;
    }
  }
  ArrayObject *a = (ArrayObject *)wrap_cai(st, owner ? owner : Py_None, desc);
  if (a)
    a->stream = ext;
  else
    Py_XDECREF(ext);
  return (PyObject *)a;
}

static PyObject *py_to_device(PyObject *module, PyObject *const *args, Py_ssize_t nargsf,
                              PyObject *kwnames) {
  static char *kwlist[] = {"obj", "stream", "copy", "to", NULL};
  PyObject *obj, *stream_obj = NULL, *to = Py_None;
  int copy = 1;
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (!kwnames && nargs >= 1 && nargs <= 2) {
    obj = args[0];
    if (nargs > 1) stream_obj = args[1];
  } else if (!nbc__py_parse_slow(args, nargsf, kwnames, "O|OpO:to_device", kwlist, &obj,
                                 &stream_obj, &copy, &to)) {
    return NULL;
  }
  nbc__py_state *st = nbc__py_module_state(module);
  if (to != Py_None) { /* numba: to.copy_to_device(obj, stream), so to's own stream for 0 */
    if (Py_TYPE(to) != st->DeviceArrayType) {
      PyErr_SetString(PyExc_TypeError, "to_device(to=...) takes a device array");
      return NULL;
    }
    if (copy && nbc__py_array_copy_from(st, (ArrayObject *)to, obj, stream_obj) < 0)
      return NULL;
    return Py_NewRef(to);
  }
  if (Py_TYPE(obj) == st->DeviceArrayType) return Py_NewRef(obj);
  if (!st->numpy && strcmp(Py_TYPE(obj)->tp_name, "numpy.ndarray") == 0 && !nbc__py_numpy(st))
    return NULL; /* numpy made obj: importing it only takes a lookup */
  PyObject *cai;
  /* An exact numpy.ndarray has no __cuda_array_interface__ (nor an instance dict to hold
   * one): no need to look. */
  if ((!st->np_ndarray || Py_TYPE(obj) != (PyTypeObject *)st->np_ndarray) &&
      nbc__py_optional_attr(obj, st->str_cai, &cai)) {
    PyObject *r = from_cai(module, cai, obj, 1); /* numba's auto_device */
    Py_DECREF(cai);
    return r;
  }
  Py_buffer view;
  PyObject *holder = NULL, *record = NULL;
  char kind;
  int itemsize;
  if (nbc__py_host_buffer(st, obj, &view, 0, &holder, &kind, &itemsize, &record) < 0)
    return NULL;
  ArrayObject *a = nbc__py_array_alloc(st);
  if (a) a->dtype = record; /* a structured dtype; NULL for scalars, made on first use */
  else Py_XDECREF(record);
  int ok = a && nbc__py_stream_to_bind(st, stream_obj, &a->stream) == 0 &&
           geometry_from_buffer(a, &view, kind, a->dtype) == 0 &&
           nbc__py_array_allocate(st, a) == 0;
  if (ok && copy && a->nbytes) {
    nbc_stream_t *s = NULL, *temp = NULL;
    ok = nbc__py_stream_arg(st, a->stream, &s, &temp) == 0;
    nbc_status_t rc = ok ? nbc__py_copy_htod(a->data, view.buf, a->nbytes, s) : NBC_OK;
    if (rc == NBC_OK && holder) rc = nbc__py_wait_copy(s); /* holder, made here, dies now */
    nbc_stream_destroy(temp);
    if (rc != NBC_OK) ok = nbc__py_raise_int(st, rc) == 0;
  }
  PyBuffer_Release(&view);
  Py_XDECREF(holder);
  if (!ok) {
    Py_XDECREF(a);
    return NULL;
  }
  return (PyObject *)a;
}

/* device_array's strides argument: one non-negative int per dimension, in bytes; the
 * allocation then spans the extent they describe (numba's memory_size_from_info). */
static int strides_arg(ArrayObject *a, PyObject *strides) {
  PyObject *t = PySequence_Tuple(strides);
  if (!t) return -1;
  int rc = 0;
  if (PyTuple_GET_SIZE(t) != a->ndim) {
    PyErr_Format(PyExc_ValueError, "strides %R do not match the %d dimension(s) of the shape", t,
                 a->ndim);
    rc = -1;
  }
  for (int d = 0; rc == 0 && d < a->ndim; d++) {
    a->strides[d] = PyLong_AsLongLong(PyTuple_GET_ITEM(t, d));
    if (a->strides[d] == -1 && PyErr_Occurred()) {
      rc = -1;
    } else if (a->strides[d] < 0) {
      PyErr_Format(PyExc_ValueError, "strides must not be negative: %R", t);
      rc = -1;
    }
  }
  Py_DECREF(t);
  if (rc < 0 || a->nbytes == 0) return rc;
  int64_t bytes;
  if (nbc__py_extent(a->ndim, a->shape, a->strides, a->itemsize, &bytes) < 0) {
    PyErr_Format(PyExc_ValueError, "strides %R span more memory than can be allocated",
                 strides);
    return -1;
  }
  a->nbytes = (size_t)bytes;
  return 0;
}

static PyObject *make_device_array(nbc__py_state *st, PyObject *shape, PyObject *dtype,
                                   PyObject *strides, char order, PyObject *stream) {
  ArrayObject *a = nbc__py_array_alloc(st);
  if (!a) return NULL;
  if (!dtype) { /* numba's default, float64; its dtype object is made on first use */
    a->kind = 'f';
    a->itemsize = 8;
  } else if (nbc__py_dtype_arg(st, dtype, &a->kind, &a->itemsize, &a->dtype) < 0) {
    goto fail;
  }
  if (nbc__py_stream_to_bind(st, stream, &a->stream) < 0) goto fail;
  nbc__py_set_typestr(a->typestr, a->kind, a->itemsize);
  if ((a->kind == 'M' || a->kind == 'm') && nbc__py_set_dtype_typestr(a->typestr, a->dtype) < 0)
    goto fail;
  /* an int shape is one dimension: read as is, without a tuple */
  PyObject *seq = PyLong_Check(shape) ? NULL : PySequence_Tuple(shape);
  if (!seq && !PyLong_Check(shape)) goto fail;
  if (seq && PyTuple_GET_SIZE(seq) > NBC__PY_MAXDIM) {
    Py_DECREF(seq);
    PyErr_SetString(PyExc_ValueError, "too many dimensions");
    goto fail;
  }
  if (nbc__py_array_set_ndim(a, seq ? (int)PyTuple_GET_SIZE(seq) : 1) < 0) {
    Py_XDECREF(seq);
    goto fail;
  }
  int64_t n = 1;
  for (int d = 0; d < a->ndim && !PyErr_Occurred(); d++)
    a->shape[d] = PyLong_AsLongLong(seq ? PyTuple_GET_ITEM(seq, d) : shape);
  Py_XDECREF(seq);
  if (PyErr_Occurred() || nbc__py_checked_count(a, &n) < 0) goto fail;
  nbc__py_array_dense_strides(a, order);
  a->nbytes = (size_t)(n * a->itemsize);
  if (strides && strides != Py_None && strides_arg(a, strides) < 0) goto fail;
  if (nbc__py_array_allocate(st, a) < 0) goto fail;
  return (PyObject *)a;
fail:
  Py_DECREF(a);
  return NULL;
}

static PyObject *py_device_array(PyObject *module, PyObject *const *args, Py_ssize_t nargsf,
                                 PyObject *kwnames) {
  static char *kwlist[] = {"shape", "dtype", "strides", "order", "stream", NULL};
  PyObject *shape, *dtype = NULL, *strides = Py_None, *stream_obj = NULL;
  const char *order = "C";
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (!kwnames && nargs >= 1 && nargs <= 2) { /* device_array(n) or (shape, dtype) */
    shape = args[0];
    if (nargs > 1) dtype = args[1];
  } else if (!nbc__py_parse_slow(args, nargsf, kwnames, "O|OOsO:device_array", kwlist, &shape,
                                 &dtype, &strides, &order, &stream_obj)) {
    return NULL;
  }
  if (order[0] != 'C' && order[0] != 'F') {
    PyErr_SetString(PyExc_ValueError, "order must be 'C' or 'F'");
    return NULL;
  }
  return make_device_array(nbc__py_module_state(module), shape, dtype, strides, order[0],
                           stream_obj);
}

/* The order a contiguous array is in ('C' first, as numba's _order_like_array): of a device
 * array, or of a host buffer's strides; 0 for a strided one or no buffer. */
static char contiguous_order(nbc__py_state *st, PyObject *ary) {
  if (Py_TYPE(ary) == st->DeviceArrayType) {
    ArrayObject *a = (ArrayObject *)ary;
    return nbc__py_is_contig(a, 'C') ? 'C' : nbc__py_is_contig(a, 'F') ? 'F' : 0;
  }
  Py_buffer b;
  if (!PyObject_CheckBuffer(ary) || PyObject_GetBuffer(ary, &b, PyBUF_STRIDES) < 0) {
    PyErr_Clear();
    return 0;
  }
  char order = PyBuffer_IsContiguous(&b, 'C') ? 'C' : PyBuffer_IsContiguous(&b, 'F') ? 'F' : 0;
  PyBuffer_Release(&b);
  return order;
}

static PyObject *py_device_array_like(PyObject *module, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"ary", "stream", NULL};
  PyObject *ary, *stream_obj = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:device_array_like", kwlist, &ary,
                                   &stream_obj))
    return NULL;
  /* numba: device_array in ary's own layout (order, and strides when not contiguous); a
   * contiguous array's is its order, read here without numpy's flags */
  nbc__py_state *st = nbc__py_module_state(module);
  char order = contiguous_order(st, ary);
  if (order) {
    PyObject *shape = PyObject_GetAttr(ary, st->str_shape);
    PyObject *dtype = shape ? PyObject_GetAttr(ary, st->str_dtype) : NULL;
    PyObject *r = dtype ? make_device_array(st, shape, dtype, NULL, order, stream_obj) : NULL;
    Py_XDECREF(shape);
    Py_XDECREF(dtype);
    return r;
  }
  PyObject *extra = stream_obj ? Py_BuildValue("{sO}", "stream", stream_obj)
                               : Py_BuildValue("{si}", "stream", 0);
  PyObject *r = extra ? nbc__py_like_call(module, "device_array", ary, extra) : NULL;
  Py_XDECREF(extra);
  return r;
}

static PyObject *py_from_cuda_array_interface(PyObject *module, PyObject *args,
                                              PyObject *kwargs) {
  static char *kwlist[] = {"desc", "owner", "sync", NULL};
  PyObject *desc, *owner = Py_None;
  int sync = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|Op:from_cuda_array_interface", kwlist,
                                   &desc, &owner, &sync))
    return NULL;
  return from_cai(module, desc, owner, sync);
}

static PyObject *py_as_cuda_array(PyObject *module, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"obj", "sync", NULL};
  PyObject *obj, *cai = NULL;
  int sync = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|p:as_cuda_array", kwlist, &obj, &sync))
    return NULL;
  nbc__py_state *st = nbc__py_module_state(module);
  if (!nbc__py_optional_attr(obj, st->str_cai, &cai)) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_TypeError, "*obj* doesn't implement the cuda array interface.");
    return NULL;
  }
  PyObject *r = from_cai(module, cai, obj, sync);
  Py_DECREF(cai);
  return r;
}

static PyObject *py_is_cuda_array(PyObject *module, PyObject *obj) {
  PyObject *cai = NULL;
  if (nbc__py_optional_attr(obj, nbc__py_module_state(module)->str_cai, &cai)) {
    Py_DECREF(cai);
    Py_RETURN_TRUE;
  }
  if (PyErr_Occurred()) return NULL;
  Py_RETURN_FALSE;
}

PyMethodDef nbc__py_array_functions[] = {
    {"from_cuda_array_interface", (PyCFunction)(void (*)(void))py_from_cuda_array_interface,
     METH_VARARGS | METH_KEYWORDS,
     "from_cuda_array_interface($module, desc, owner=None, sync=True)\n--\n\n"
     "A device array over that memory."},
    {"as_cuda_array", (PyCFunction)(void (*)(void))py_as_cuda_array,
     METH_VARARGS | METH_KEYWORDS,
     "as_cuda_array($module, obj, sync=True)\n--\n\n"
     "A device array viewing obj's memory (no copy)."},
    {"from_dlpack", nbc__py_from_dlpack, METH_O,
     "from_dlpack($module, obj, /)\n--\n\n"
     "A device array over the memory of an object with __dlpack__ (CUDA, managed or pinned "
     "host memory), shared, not copied (docs/guide/interop.md)."},
    {"is_cuda_array", py_is_cuda_array, METH_O,
     "is_cuda_array($module, obj, /)\n--\n\n"
     "Whether obj has __cuda_array_interface__."},
    {"to_device", (PyCFunction)(void (*)(void))py_to_device, METH_FASTCALL | METH_KEYWORDS,
     "to_device($module, obj, stream=0, copy=True, to=None)\n--\n\n"
     "A device array with obj's contents."},
    {"device_array", (PyCFunction)(void (*)(void))py_device_array,
     METH_FASTCALL | METH_KEYWORDS,
     "device_array($module, shape, dtype='float64', strides=None, order='C', "
     "stream=0)\n--\n\n"
     "Uninitialised."},
    {"device_array_like", (PyCFunction)(void (*)(void))py_device_array_like,
     METH_VARARGS | METH_KEYWORDS, "device_array_like($module, ary, stream=0)\n--\n\n"
                                   "An uninitialised device array like ary."},
    {NULL, NULL, 0, NULL},
};

/* ------------------------------------------------------------ launch views ------------ */

/* The stream a __cuda_array_interface__ names (its "stream": absent or None for none) in
 * *phandle, 0 for none; -1 with an exception for a value that is not a handle. */
static int cai_stream(const cai_entries *e, uintptr_t *phandle) {
  *phandle = 0;
  if (!e->stream || e->stream == Py_None) return 0;
  unsigned long long h;
  if (cai_u64(e->stream, &h) < 0) return -1;
  *phandle = (uintptr_t)h;
  return 0;
}

/* An array's pointer and geometry into a view. */
static void view_geometry(nbc__py_array_view *view, const ArrayObject *a) {
  view->data = a->data;
  view->kind = a->kind;
  view->itemsize = a->itemsize;
  view->datetime = a->kind == 'M' || a->kind == 'm' ? nbc__py_datetime_name(a->typestr) : NULL;
  view->ndim = a->ndim;
  memcpy(view->shape, a->shape, sizeof(int64_t) * (size_t)a->ndim);
  memcpy(view->strides, a->strides, sizeof(int64_t) * (size_t)a->ndim);
}

int nbc__py_cai_view(nbc__py_state *st, PyObject *cai, nbc__py_array_view *view) {
  view->host = NULL;
  view->producer = 0;
  view->owner = NULL;
  ArrayObject tmp;
  int64_t dims[2 * NBC__PY_MAXDIM];
  tmp.shape = dims; /* room for any ndim: nbc__py_array_set_ndim allocates nothing */
  tmp.strides = dims + NBC__PY_MAXDIM;
  cai_entries e;
  if (cai_read(st, cai, &e) < 0 || geometry_from_cai(&tmp, &e) < 0 ||
      (st->config.cai_sync && cai_stream(&e, &view->producer) < 0))
    return -1;
  view_geometry(view, &tmp);
  return 0;
}

int nbc__py_array_view_get(nbc__py_state *st, PyObject *obj, nbc__py_array_view *view) {
  return nbc__py_array_view_get_on(st, obj, -1, view);
}

int nbc__py_array_view_get_on(nbc__py_state *st, PyObject *obj, intptr_t stream,
                              nbc__py_array_view *view) {
  view->host = NULL;
  view->producer = 0;
  view->owner = NULL;
  if (Py_TYPE(obj) == st->DeviceArrayType) { /* the hot path: plain field reads */
    ArrayObject *a = (ArrayObject *)obj;
    if (nbc__py_array_alive(st, a, "cuLaunchKernel") < 0) return -1;
    view_geometry(view, a);
    return 0;
  }
  /* cuda.In/Out/InOut: the copies a host array gets; a device array is used in place */
  PyObject *value;
  int copy_in = 1, copy_out = 1, hinted = nbc__py_arg_hint(st, obj, &value, &copy_in, &copy_out);
  if (hinted) {
    if (Py_TYPE(value) == st->DeviceArrayType) return nbc__py_array_view_get(st, value, view);
    obj = value;
  }
  /* numba-cuda 0.30 views an object through __dlpack__ before __cuda_array_interface__ */
  int dl = nbc__py_dlpack_view(st, obj, stream, view);
  if (dl) return dl < 0 ? -1 : 0;
  PyObject *cai;
  if (nbc__py_optional_attr(obj, st->str_cai, &cai)) {
    int rc = nbc__py_cai_view(st, cai, view);
    Py_DECREF(cai);
    return rc;
  }
  ArrayObject tmp;
  int64_t dims[2 * NBC__PY_MAXDIM];
  tmp.shape = dims; /* room for any ndim: nbc__py_array_set_ndim allocates nothing */
  tmp.strides = dims + NBC__PY_MAXDIM;
  PyObject *holder = NULL, *record = NULL;
  char kind;
  int itemsize;
  /* only a copy back needs a writable buffer (cuda.In takes read-only arrays) */
  if (nbc__py_host_buffer(st, obj, &view->buffer, copy_out, &holder, &kind, &itemsize,
                          &record) < 0) {
    if (!PyErr_ExceptionMatches(PyExc_BufferError) &&
        !PyErr_ExceptionMatches(PyExc_TypeError))
      return -1;
    PyErr_Format(PyExc_TypeError, "cannot pass %s as an array to a kernel: it is not a "
                 "device array, has no __cuda_array_interface__ and no %sbuffer",
                 Py_TYPE(obj)->tp_name, copy_out ? "writable " : "");
    return -1;
  }
  Py_XDECREF(holder); /* numpy.asarray's array: the buffer holds it */
  /* record: a structured dtype or a date's (its unit); the view keeps neither */
  /* numba's auto_device: a numpy array not wrapped in cuda.In/Out/InOut */
  if (st->config.warn_implicit_copy && !hinted &&
      (st->np_ndarray ? PyObject_TypeCheck(obj, (PyTypeObject *)st->np_ndarray)
                      : strcmp(Py_TYPE(obj)->tp_name, "numpy.ndarray") == 0) &&
      nbc__py_warn(st, "NumbaPerformanceWarning", "Host array used in CUDA kernel will "
                   "incur copy overhead to/from device.") < 0) {
    PyBuffer_Release(&view->buffer);
    Py_XDECREF(record);
    return -1;
  }
  int rc = geometry_from_buffer(&tmp, &view->buffer, kind, record);
  Py_XDECREF(record);
  if (rc < 0) {
    PyBuffer_Release(&view->buffer);
    return -1;
  }
  tmp.data = 0;
  view->nbytes = tmp.nbytes;
  if (tmp.nbytes) {
    nbc_status_t s = nbc_mem_alloc(tmp.nbytes, &tmp.data);
    if (s == NBC_OK && copy_in)
      s = nbc__py_copy_htod(tmp.data, view->buffer.buf, tmp.nbytes, NULL);
    if (s != NBC_OK) {
      if (tmp.data) nbc_mem_free(tmp.data);
      PyBuffer_Release(&view->buffer);
      return nbc__py_raise_int(st, s);
    }
  }
  view->host = Py_NewRef(obj);
  view->copy_back = copy_out;
  view_geometry(view, &tmp);
  return 0;
}

char nbc__py_layout(int ndim, int64_t itemsize, const int64_t *shape, const int64_t *strides) {
  int c = 1, f = 1;
  int64_t ec = itemsize, ef = itemsize;
  for (int k = 0; k < ndim; k++) {
    int dc = ndim - 1 - k, df = k;
    if (shape[dc] > 1 && strides[dc] != ec) c = 0;
    if (shape[df] > 1 && strides[df] != ef) f = 0;
    ec *= shape[dc];
    ef *= shape[df];
  }
  return c ? 'C' : (f && ndim > 1) ? 'F' : 'A';
}

char nbc__py_view_layout(const nbc__py_array_view *v) {
  return nbc__py_layout(v->ndim, v->itemsize, v->shape, v->strides);
}

int nbc__py_array_view_finish(nbc__py_state *st, nbc__py_array_view *view, int copy_back) {
  Py_CLEAR(view->owner); /* a DLPack tensor goes back to its producer */
  if (!view->host) return 0;
  nbc_status_t s = NBC_OK;
  if (copy_back && view->copy_back && view->nbytes)
    s = nbc__py_copy_dtoh_into(st, view->host, view->buffer.buf, view->data, view->nbytes,
                               NULL);
  if (view->data) nbc_mem_free(view->data);
  PyBuffer_Release(&view->buffer);
  Py_CLEAR(view->host);
  return s == NBC_OK ? 0 : nbc__py_raise_int(st, s);
}
