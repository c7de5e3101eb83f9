/* devicearray_index.c — indexing and views of a DeviceNDArray: d[key] and d[key] = value
 * (and the getitem/setitem methods), reshape, ravel, squeeze, split, view(dtype) and bind,
 * and transpose, which makes a new array. The object, its copies and its type are in
 * devicearray.c, whose method table and mapping slots name these functions (devicearray.h).
 *
 * Views (d[2:10], d[:, 1], reshape, ravel) are arrays over part of another array's memory,
 * with their own shape and strides, as numba's DeviceNDArray over gpu_data.view(): they
 * hold the owner of the allocation (or the foreign object), which frees it when the last
 * of them dies, share its dtype object and inherit its stream (numba's reshape excepted).
 * d[i, j] copies one element to a numpy scalar; d[key] = value writes through one copy for
 * a contiguous target, one per contiguous run otherwise (numba launches an assignment
 * kernel). d[i] of a structured array is its element copied to the host, a numpy.void
 * (numba gives a DeviceRecord over the device memory instead).
 */
#include "devicearray.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <string.h>

/* ------------------------------------------------------------ views ------------------- */

/* A view of parent's memory with this geometry (numba's DeviceNDArray over
 * gpu_data.view(...)): no allocation of its own; it holds the allocation's owner (or the
 * foreign object a wrapped array holds), its Context and the owner's lifetime, so the
 * memory lives while any view does and a reset is noticed through every view. It is bound
 * to stream (borrowed, checked by the caller; NULL: none), as numba passes each view its
 * stream. */
static ArrayObject *array_view(nbc__py_state *st, ArrayObject *parent, nbc_devptr_t data,
                               int ndim, const int64_t *shape, const int64_t *strides,
                               PyObject *stream) {
  ArrayObject *a = nbc__py_array_alloc(st);
  if (!a || nbc__py_array_set_ndim(a, ndim) < 0) {
    Py_XDECREF(a);
    return NULL;
  }
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) {
    a->shape[d] = shape[d];
    a->strides[d] = strides[d];
    n *= shape[d];
  }
  a->data = n ? data : 0;
  a->nbytes = (size_t)(n * parent->itemsize);
  a->kind = parent->kind;
  a->itemsize = parent->itemsize;
  memcpy(a->typestr, parent->typestr, sizeof a->typestr);
  a->base = Py_NewRef(parent->owned || !parent->base ? (PyObject *)parent : parent->base);
  a->context = Py_XNewRef(parent->context);
  a->dtype = Py_XNewRef(parent->dtype);
  a->cctx = parent->cctx;
  a->lifetime = parent->lifetime;
  a->stream = Py_XNewRef(stream);
  return a;
}

/* Basic indexing as numba's dummyarray does it: integers (negative from the end) drop their
 * axis, slices keep it with a new start, length and stride, missing trailing indices are
 * ':'. An Ellipsis stands for the axes not named (numba's dummyarray has none; numpy's
 * meaning). The result's first element is at *poffset bytes from self's. */
static int index_geometry(ArrayObject *self, PyObject *key, int64_t *poffset, int *pndim,
                          int64_t *shape, int64_t *strides) {
  PyObject *items = PyTuple_Check(key) ? Py_NewRef(key) : PyTuple_Pack(1, key);
  if (!items) return -1;
  Py_ssize_t nitems = PyTuple_GET_SIZE(items), named = 0, ellipsis = -1;
  for (Py_ssize_t i = 0; i < nitems; i++) {
    if (PyTuple_GET_ITEM(items, i) != Py_Ellipsis) {
      named++;
    } else if (ellipsis >= 0) {
      Py_DECREF(items);
      PyErr_SetString(PyExc_IndexError, "an index can only have a single ellipsis ('...')");
      return -1;
    } else {
      ellipsis = i;
    }
  }
  if (named > self->ndim) {
    Py_DECREF(items);
    PyErr_Format(PyExc_IndexError, "%zd extra indices given", named - self->ndim);
    return -1;
  }
  int64_t offset = 0;
  int axis = 0, out = 0;
  for (Py_ssize_t i = 0; i < nitems; i++) {
    PyObject *it = PyTuple_GET_ITEM(items, i);
    if (it == Py_Ellipsis) {
      for (Py_ssize_t k = 0; k < self->ndim - named; k++, axis++, out++) {
        shape[out] = self->shape[axis];
        strides[out] = self->strides[axis];
      }
    } else if (PySlice_Check(it)) {
      Py_ssize_t start, stop, step;
      if (PySlice_Unpack(it, &start, &stop, &step) < 0) goto fail;
      Py_ssize_t len = PySlice_AdjustIndices((Py_ssize_t)self->shape[axis], &start, &stop, step);
      offset += start * self->strides[axis];
      shape[out] = len;
      /* with two or more elements |step| < the extent, so the product fits; a huge step
       * (a[::2**63]) picks one element, whose stride is never used to move */
      strides[out++] = len > 1 ? step * self->strides[axis] : self->strides[axis];
      axis++;
    } else if (PyIndex_Check(it) && !PyBool_Check(it)) {
      Py_ssize_t k = PyNumber_AsSsize_t(it, PyExc_IndexError);
      if (k == -1 && PyErr_Occurred()) goto fail;
      int64_t n = self->shape[axis];
      if (k < -n || k >= n) {
        PyErr_Format(PyExc_IndexError, "index %zd is out of bounds for axis %d with size %lld",
                     k, axis, (long long)n);
        goto fail;
      }
      offset += (k < 0 ? k + n : k) * self->strides[axis++];
    } else {
      PyErr_Format(PyExc_IndexError, "only integers, slices (`:`) and ellipsis (`...`) are "
                   "valid indices of a device array, not %.200s", Py_TYPE(it)->tp_name);
      goto fail;
    }
  }
  for (; axis < self->ndim; axis++, out++) {
    shape[out] = self->shape[axis];
    strides[out] = self->strides[axis];
  }
  Py_DECREF(items);
  *poffset = offset;
  *pndim = out;
  return 0;
fail:
  Py_DECREF(items);
  return -1;
}

/* d[key] (numba's _do_getitem): a view sharing d's memory, bound to stream (borrowed,
 * checked; NULL: none), or for a single element its value copied to the host as a numpy
 * scalar of the dtype (numba's hostary[0]), on that stream. */
static PyObject *do_getitem(ArrayObject *self, PyObject *key, PyObject *stream) {
  nbc__py_state *st = state((PyObject *)self);
  int64_t offset, shape[NBC__PY_MAXDIM], strides[NBC__PY_MAXDIM];
  int ndim;
  if (index_geometry(self, key, &offset, &ndim, shape, strides) < 0) return NULL;
  if (ndim > 0 || (self->ndim == 0 && !PyTuple_Check(key))) {
    if (nbc__py_array_alive(st, self, "DeviceNDArray.__getitem__") < 0) return NULL;
    return (PyObject *)array_view(st, self, self->data + (nbc_devptr_t)offset, ndim, shape,
                                  strides, stream);
  }
  if (nbc__py_array_alive(st, self, "cuMemcpyDtoH") < 0) return NULL;
  PyObject *dtype = nbc__py_array_dtype_obj(self); /* imports numpy */
  const int64_t one = 1;
  PyObject *host = dtype ? nbc__py_numpy_empty(st, dtype, 1, &one, 0) : NULL;
  Py_XDECREF(dtype);
  Py_buffer view;
  if (!host || (!nbc__py_numpy_view(st, host, 1, self->itemsize, &view) &&
                PyObject_GetBuffer(host, &view, PyBUF_WRITABLE | PyBUF_ANY_CONTIGUOUS) < 0)) {
    Py_XDECREF(host);
    return NULL;
  }
  nbc_stream_t *s = NULL, *temp = NULL;
  nbc_status_t rc = NBC_OK;
  if (nbc__py_stream_arg(st, stream, &s, &temp) == 0) {
    rc = nbc__py_copy_dtoh_into(st, NULL, view.buf, self->data + (nbc_devptr_t)offset,
                                (size_t)self->itemsize, s);
    if (rc == NBC_OK) rc = nbc__py_wait_copy(s); /* the value is read below */
  }
  nbc_stream_destroy(temp);
  PyBuffer_Release(&view);
  PyObject *r = PyErr_Occurred()  ? NULL
                : rc == NBC_OK   ? PySequence_GetItem(host, 0)
                                 : nbc__py_raise(st, rc);
  Py_DECREF(host);
  return r;
}

/* d[key]: on the array's own stream, as numba's __getitem__. */
PyObject *nbc__py_array_subscript(ArrayObject *self, PyObject *key) {
  return do_getitem(self, key, self->stream);
}

/* getitem(item, stream=0): d[item] on stream, or the array's own for 0. */
PyObject *nbc__py_array_getitem(ArrayObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"item", "stream", NULL};
  PyObject *item, *stream_obj = NULL, *stream;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:getitem", kwlist, &item, &stream_obj))
    return NULL;
  if (nbc__py_stream_to_bind(state((PyObject *)self), nbc__py_own_stream(self, stream_obj),
                             &stream) < 0)
    return NULL;
  PyObject *r = do_getitem(self, item, stream);
  Py_XDECREF(stream);
  return r;
}

/* Writes a C-ordered host buffer into a view of any strides: one copy per run of adjacent
 * elements (a row when the last axis is unit-strided, else an element). numba assigns with
 * a kernel; copies keep nbcuda free of a compiled helper, at the cost of many small copies
 * for element-strided views. */
static nbc_status_t scatter_htod(nbc_devptr_t dst, const ArrayObject *v, const char *src,
                                 nbc_stream_t *s) {
  int nd = v->ndim;
  int64_t run = 1;
  if (nd > 0 && v->strides[nd - 1] == v->itemsize) run = v->shape[--nd];
  size_t bytes = (size_t)(run * v->itemsize);
  int64_t idx[NBC__PY_MAXDIM] = {0}, total = 1;
  for (int d = 0; d < nd; d++) total *= v->shape[d];
  for (int64_t i = 0; i < total; i++) {
    int64_t off = 0;
    for (int d = 0; d < nd; d++) off += idx[d] * v->strides[d];
    nbc_status_t rc =
        nbc__py_copy_htod(dst + (nbc_devptr_t)off, src + (size_t)i * bytes, bytes, s);
    if (rc != NBC_OK) return rc;
    for (int d = nd - 1; d >= 0 && ++idx[d] == v->shape[d]; d--) idx[d] = 0;
  }
  return NBC_OK;
}

/* A value for a structured target as a numpy array of the target's dtype: arrays and
 * numpy.void scalars must have that dtype (numba's "incompatible dtype"), tuples and lists
 * of tuples are read as its records (numpy.asarray(value, dtype)). */
static PyObject *record_source(nbc__py_state *st, ArrayObject *lhs, PyObject *np,
                               PyObject *host) {
  PyObject *dtype = nbc__py_array_dtype_obj(lhs), *given = NULL, *arr = NULL;
  if (!dtype) return NULL;
  int has = nbc__py_optional_attr(host, st->str_dtype, &given);
  if (!PyErr_Occurred() && (!has || nbc__py_check_dtype(lhs, given) == 0))
    arr = PyObject_CallMethod(np, "asarray", "OO", host, dtype);
  Py_XDECREF(given);
  Py_DECREF(dtype);
  return arr;
}

/* The host value of d[key] = value, checked as numba checks it (no more dimensions than
 * the target; each axis of the value 1 or the target's) and broadcast, in the target's
 * dtype and in C order, or F order for an F-contiguous target. */
/* Dates given to an array of dates: numpy's array of them in the array's unit, as its int64
 * view (numpy exports no buffer of dates; the bytes are the same). */
static PyObject *dates_source(ArrayObject *lhs, PyObject *np, PyObject *host) {
  PyObject *dt = nbc__py_array_dtype_obj(lhs);
  PyObject *arr = dt ? PyObject_CallMethod(np, "asarray", "OO", host, dt) : NULL;
  PyObject *ints = arr ? PyObject_CallMethod(arr, "view", "s", "i8") : NULL;
  Py_XDECREF(dt);
  Py_XDECREF(arr);
  return ints;
}

static PyObject *assign_source(nbc__py_state *st, ArrayObject *lhs, PyObject *value, int f) {
  PyObject *host = Py_TYPE(value) == st->DeviceArrayType
                       ? nbc__py_array_copy_to_host((ArrayObject *)value, NULL, 0, NULL)
                       : Py_NewRef(value);
  PyObject *np = host ? nbc__py_numpy(st) : NULL;
  PyObject *arr = !np                ? NULL
                  : lhs->kind == 'V' ? record_source(st, lhs, np, host)
                  : lhs->kind == 'M' || lhs->kind == 'm' ? dates_source(lhs, np, host)
                                     : PyObject_CallMethod(np, "asarray", "(O)", host);
  Py_XDECREF(host);
  if (!arr) return NULL;
  Py_buffer b;
  if (PyObject_GetBuffer(arr, &b, PyBUF_RECORDS_RO) < 0) {
    Py_DECREF(arr);
    return NULL;
  }
  int ok = 1;
  if (b.ndim > lhs->ndim) {
    PyErr_Format(PyExc_ValueError, "Can't assign %d-D array to %d-D self", b.ndim, lhs->ndim);
    ok = 0;
  }
  for (int i = 0; ok && i < b.ndim; i++) {
    int axis = lhs->ndim - b.ndim + i;
    if (b.shape[i] != 1 && b.shape[i] != lhs->shape[axis]) {
      PyErr_Format(PyExc_ValueError, "Can't copy sequence with size %zd to array axis %d "
                   "with dimension %lld", b.shape[i], axis, (long long)lhs->shape[axis]);
      ok = 0;
    }
  }
  PyBuffer_Release(&b);
  PyObject *shape = ok ? nbc__py_int64_tuple(lhs->shape, lhs->ndim) : NULL;
  PyObject *wide = shape ? PyObject_CallMethod(np, "broadcast_to", "OO", arr, shape) : NULL;
  PyObject *dtype = wide ? nbc__py_array_dtype_obj(lhs) : NULL;
  PyObject *r = dtype ? PyObject_CallMethod(np, "asarray", "OOs", wide, dtype, f ? "F" : "C")
                      : NULL;
  Py_XDECREF(shape);
  Py_XDECREF(wide);
  Py_XDECREF(dtype);
  Py_DECREF(arr);
  return r;
}

/* The element a Python scalar stores into lhs's dtype, in elem, when converting it needs no
 * numpy: an int that fits an integer or converts to a float or complex, a float or complex
 * (numpy.float64 and complex128 are ones) into a float or complex type that holds it, a
 * bool; 0 for any other value or dtype (numpy converts those, with its own rounding,
 * wrapping and warnings: assign_source). */
static int scalar_element(const ArrayObject *lhs, PyObject *value, char elem[16]) {
  PyTypeObject *t = Py_TYPE(value);
  char kind = lhs->kind;
  int n = lhs->itemsize;
  if (lhs->typestr[0] == '>') return 0;
  double re = 0, im = 0;
  if (t == &PyBool_Type || t == &PyLong_Type) {
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      return 0;
    }
    if (kind == 'b' && n == 1) {
      elem[0] = v != 0;
      return 1;
    }
    if (kind == 'i' || kind == 'u') {
      long long lo = kind == 'u' ? 0 : n == 8 ? LLONG_MIN : -(1LL << (8 * n - 1));
      long long hi = n == 8 ? LLONG_MAX : kind == 'u' ? (1LL << (8 * n)) - 1
                                                      : (1LL << (8 * n - 1)) - 1;
      if (v < lo || v > hi || (n != 1 && n != 2 && n != 4 && n != 8)) return 0;
      /* little-endian: the low n bytes of the value */
      memcpy(elem, &v, (size_t)n);
      return 1;
    }
    if (t == &PyBool_Type) return 0;
    if ((kind == 'f' && n == 4) || (kind == 'c' && n == 8)) { /* rounded once, as numpy */
      float parts[2] = {(float)v, 0};
      memcpy(elem, parts, (size_t)n);
      return 1;
    }
    re = (double)v;
  } else if (PyFloat_Check(value)) { /* numpy.float64 too: a float */
    re = PyFloat_AS_DOUBLE(value);
  } else if (PyComplex_Check(value) && kind == 'c') { /* numpy.complex128 too */
    re = PyComplex_RealAsDouble(value);
    im = PyComplex_ImagAsDouble(value);
  } else {
    return 0;
  }
  int single = (kind == 'f' && n == 4) || (kind == 'c' && n == 8);
  if (single && ((isfinite(re) && fabs(re) > FLT_MAX) || (isfinite(im) && fabs(im) > FLT_MAX)))
    return 0; /* numpy warns of the overflow to inf */
  if (single) {
    float parts[2] = {(float)re, (float)im};
    memcpy(elem, parts, (size_t)n);
    return 1;
  }
  if ((kind == 'f' && n == 8) || (kind == 'c' && n == 16)) {
    double parts[2] = {re, im};
    memcpy(elem, parts, (size_t)n);
    return 1;
  }
  return 0;
}

/* Whether value's buffer holds exactly the bytes d[key] = value stores (its dtype is the
 * target's, its shape the target's, contiguous in the order the copy reads): then *b is
 * that buffer (the caller releases it) and numpy converts nothing; 0 otherwise. */
static int same_bytes_source(const ArrayObject *lhs, PyObject *value, int f, Py_buffer *b) {
  if (!PyObject_CheckBuffer(value)) return 0;
  if (PyObject_GetBuffer(value, b, PyBUF_RECORDS_RO) < 0) {
    PyErr_Clear();
    b->obj = NULL;
    return 0;
  }
  int same = b->ndim == lhs->ndim && b->itemsize == lhs->itemsize &&
             nbc__py_format_kind(b->format, b->itemsize) == lhs->kind &&
             PyBuffer_IsContiguous(b, f ? 'F' : 'C');
  for (int d = 0; same && d < b->ndim; d++) same = b->shape[d] == lhs->shape[d];
  if (!same) PyBuffer_Release(b); /* sets b->obj to NULL */
  return same;
}

/* Whether a device array value can be copied into lhs on the device: the same dtype and shape,
 * both contiguous in the same order, and memory that does not overlap lhs's (numpy's
 * semantics for d[1:] = d[:-1] need the value read before it is written: the host copy). */
static int device_copyable(const ArrayObject *lhs, const ArrayObject *src, int c, int f) {
  if (src->kind != lhs->kind || src->itemsize != lhs->itemsize || src->ndim != lhs->ndim ||
      lhs->kind == 'V' || !(c ? nbc__py_is_contig(src, 'C') : f && nbc__py_is_contig(src, 'F')))
    return 0;
  for (int d = 0; d < lhs->ndim; d++)
    if (src->shape[d] != lhs->shape[d]) return 0;
  return lhs->data + lhs->nbytes <= src->data || src->data + src->nbytes <= lhs->data;
}

/* d[key] = value (numba's _do_setitem): host values, scalars and device arrays, broadcast
 * as numpy does, copied into the indexed part of d: on stream (borrowed, checked; NULL: the
 * default stream, synchronously). numba queues an assignment kernel there; nbcuda queues
 * copies from a host buffer it made, and so waits for them before the buffer goes. */
static int do_setitem(ArrayObject *self, PyObject *key, PyObject *value, PyObject *stream) {
  nbc__py_state *st = state((PyObject *)self);
  if (!value) {
    PyErr_SetString(PyExc_TypeError, "cannot delete device array elements");
    return -1;
  }
  int64_t offset, shape[NBC__PY_MAXDIM], strides[NBC__PY_MAXDIM];
  int ndim;
  if (index_geometry(self, key, &offset, &ndim, shape, strides) < 0) return -1;
  if (nbc__py_array_alive(st, self, "cuMemcpyHtoD") < 0) return -1;
  ArrayObject *lhs = array_view(st, self, self->data + (nbc_devptr_t)offset, ndim, shape,
                                strides, stream);
  if (!lhs) return -1;
  int c = nbc__py_is_contig(lhs, 'C'), f = !c && nbc__py_is_contig(lhs, 'F');
  /* the bytes: on the device, a device array copied there (on the default stream, after
   * the work queued on the array's stream, which is blocking; waited for as numba's setitem
   * without a stream waits); else on the host, in the target's order, a scalar's element
   * repeated or a buffer of the target's dtype and shape (no numpy), or the value converted
   * and broadcast by numpy */
  int on_device = Py_TYPE(value) == st->DeviceArrayType &&
                  device_copyable(lhs, (ArrayObject *)value, c, f);
  char elem[16], small[256], *filled = NULL;
  PyObject *src = NULL;
  Py_buffer b;
  b.obj = NULL;
  const char *host = NULL;
  if (on_device) {
    if (nbc__py_array_alive(st, (ArrayObject *)value, "cuMemcpyDtoD") < 0)
      on_device = 0; /* its error stands: nothing is copied */
  } else if (lhs->kind != 'V' && scalar_element(lhs, value, elem)) {
    filled = lhs->nbytes <= sizeof small ? small : PyMem_Malloc(lhs->nbytes);
    for (size_t at = 0; filled && at < lhs->nbytes; at += (size_t)lhs->itemsize)
      memcpy(filled + at, elem, (size_t)lhs->itemsize);
    if (!filled) PyErr_NoMemory();
    host = filled;
  } else if (lhs->kind != 'V' && Py_TYPE(value) != st->DeviceArrayType &&
             same_bytes_source(lhs, value, f, &b)) {
    host = b.buf;
  } else if ((src = assign_source(st, lhs, value, f)) &&
             PyObject_GetBuffer(src, &b, PyBUF_ANY_CONTIGUOUS) == 0) {
    host = b.buf;
  }
  nbc_stream_t *s = NULL, *temp = NULL;
  int rc = -1;
  if ((on_device || host) && nbc__py_stream_arg(st, stream, &s, &temp) == 0) {
    nbc_status_t status = NBC_OK;
    if (lhs->nbytes == 0)
      status = NBC_OK;
    else if (on_device)
      status = nbc__py_copy_dtod(lhs, (ArrayObject *)value, lhs->nbytes);
    else if (c || f)
      status = nbc__py_copy_htod(lhs->data, host, lhs->nbytes, s);
    else
      status = scatter_htod(lhs->data, lhs, host, s);
    if (status == NBC_OK && lhs->nbytes) {
      if (on_device) {
        Py_BEGIN_ALLOW_THREADS status = nbc_stream_synchronize(NULL);
        Py_END_ALLOW_THREADS
      } else {
        status = nbc__py_wait_copy(s);
      }
    }
    rc = status == NBC_OK ? 0 : nbc__py_raise_int(st, status);
  }
  if (b.obj) PyBuffer_Release(&b);
  if (filled != small) PyMem_Free(filled);
  nbc_stream_destroy(temp);
  Py_XDECREF(src);
  Py_DECREF(lhs);
  return rc;
}

/* d[key] = value: on the array's own stream, as numba's __setitem__. */
int nbc__py_array_ass_subscript(ArrayObject *self, PyObject *key, PyObject *value) {
  return do_setitem(self, key, value, self->stream);
}

/* setitem(key, value, stream=0): d[key] = value on stream, or the array's own for 0. */
PyObject *nbc__py_array_setitem(ArrayObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"key", "value", "stream", NULL};
  PyObject *key, *value, *stream_obj = NULL, *stream;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|O:setitem", kwlist, &key, &value,
                                   &stream_obj))
    return NULL;
  if (nbc__py_stream_to_bind(state((PyObject *)self), nbc__py_own_stream(self, stream_obj),
                             &stream) < 0)
    return NULL;
  int rc = do_setitem(self, key, value, stream);
  Py_XDECREF(stream);
  if (rc < 0) return NULL;
  Py_RETURN_NONE;
}

/* A new shape's dimensions from reshape's arguments (ints, or one tuple or list), with one
 * -1 inferred, as numba's dummyarray does. */
static int reshape_dims(ArrayObject *self, PyObject *args, int64_t *dims, int *pndim) {
  PyObject *seq = PyTuple_GET_SIZE(args) == 1 && (PyTuple_Check(PyTuple_GET_ITEM(args, 0)) ||
                                                  PyList_Check(PyTuple_GET_ITEM(args, 0)))
                      ? PySequence_Tuple(PyTuple_GET_ITEM(args, 0))
                      : Py_NewRef(args);
  if (!seq) return -1;
  Py_ssize_t n = PyTuple_GET_SIZE(seq);
  if (n > NBC__PY_MAXDIM) {
    Py_DECREF(seq);
    PyErr_SetString(PyExc_ValueError, "too many dimensions");
    return -1;
  }
  int64_t known = 1, size = 1;
  int unknown = -1;
  for (int d = 0; d < self->ndim; d++) size *= self->shape[d];
  for (Py_ssize_t i = 0; i < n; i++) {
    dims[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(seq, i));
    if (dims[i] == -1 && PyErr_Occurred()) {
      Py_DECREF(seq);
      return -1;
    }
    if (dims[i] >= 0) {
      if (__builtin_mul_overflow(known, dims[i], &known)) known = -1; /* != any size */
    } else if (unknown >= 0) {
      Py_DECREF(seq);
      PyErr_SetString(PyExc_ValueError, "can only specify one unknown dimension");
      return -1;
    } else {
      unknown = (int)i;
    }
  }
  Py_DECREF(seq);
  if (unknown >= 0) {
    if (known <= 0 || size % known != 0) {
      PyErr_SetString(PyExc_ValueError, "cannot infer valid shape for unknown dimension");
      return -1;
    }
    dims[unknown] = size / known;
    known = size;
  }
  if (known != size) {
    PyErr_SetString(PyExc_ValueError, "reshape changes the size of the array");
    return -1;
  }
  *pndim = (int)n;
  return 0;
}

/* Dense strides for shape in order 'C' or 'F'; -1 with numpy's "array is too big" when the
 * bytes of the extents other than 0 overflow (as numpy refuses them even in an empty shape:
 * the strides and the product of the extents would overflow). */
static int dense_strides_of(int ndim, const int64_t *shape, int itemsize, char order,
                            int64_t *strides) {
  int64_t s = itemsize, bytes = itemsize; /* s is bytes until an extent is 0, then 0 */
  for (int k = 0; k < ndim; k++) {
    int d = order == 'F' ? k : ndim - 1 - k;
    strides[d] = s;
    if (shape[d] && __builtin_mul_overflow(bytes, shape[d], &bytes)) return nbc__py_too_big();
    s *= shape[d];
  }
  return 0;
}

/* numba's order argument: 'C', 'F', or 'A' (F for an F-contiguous array, else C). */
static int order_arg(ArrayObject *self, const char *order, char *pout) {
  if (strlen(order) != 1 || !strchr("CFA", order[0])) {
    PyErr_SetString(PyExc_ValueError, "order not C|F|A");
    return -1;
  }
  *pout = order[0] == 'A'
              ? (nbc__py_is_contig(self, 'F') && !nbc__py_is_contig(self, 'C') ? 'F' : 'C')
              : order[0];
  return 0;
}

/* reshape(*shape, order='C'): a view; contiguous arrays only (numba: NotImplementedError
 * "operation requires copying" otherwise). Like numba's, the view is bound to no stream:
 * numba's reshape passes none on (unlike ravel, squeeze and the other views). */
PyObject *nbc__py_array_reshape(ArrayObject *self, PyObject *args, PyObject *kwargs) {
  nbc__py_state *st = state((PyObject *)self);
  const char *order = "C";
  if (kwargs) {
    static char *kwlist[] = {"order", NULL};
    PyObject *none = PyTuple_New(0);
    int ok = none && PyArg_ParseTupleAndKeywords(none, kwargs, "|s:reshape", kwlist, &order);
    Py_XDECREF(none);
    if (!ok) return NULL;
  }
  int64_t dims[NBC__PY_MAXDIM], strides[NBC__PY_MAXDIM];
  int ndim;
  char o;
  if (reshape_dims(self, args, dims, &ndim) < 0) return NULL;
  int same = ndim == self->ndim;
  for (int d = 0; same && d < ndim; d++) same = dims[d] == self->shape[d];
  if (nbc__py_array_alive(st, self, "DeviceNDArray.reshape") < 0) return NULL;
  if (same)
    return (PyObject *)array_view(st, self, self->data, ndim, self->shape, self->strides, NULL);
  if (order_arg(self, order, &o) < 0) return NULL;
  if (!nbc__py_is_contig(self, 'C') && !nbc__py_is_contig(self, 'F')) {
    PyErr_SetString(PyExc_NotImplementedError, "operation requires copying");
    return NULL;
  }
  if (dense_strides_of(ndim, dims, self->itemsize, o, strides) < 0) return NULL;
  return (PyObject *)array_view(st, self, self->data, ndim, dims, strides, NULL);
}

/* ravel(order='C', stream=0): a 1-D view of a contiguous array, bound to stream (the array's
 * own for 0). */
PyObject *nbc__py_array_ravel(ArrayObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"order", "stream", NULL};
  const char *order = "C";
  PyObject *stream = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|sO:ravel", kwlist, &order, &stream))
    return NULL;
  nbc__py_state *st = state((PyObject *)self);
  if (strlen(order) != 1 || !strchr("CFA", order[0])) {
    PyErr_SetString(PyExc_ValueError, "order not C|F|A");
    return NULL;
  }
  int c = nbc__py_is_contig(self, 'C'), f = nbc__py_is_contig(self, 'F');
  if (!((order[0] != 'F' && c) || (order[0] != 'C' && f))) {
    PyErr_SetString(PyExc_NotImplementedError, "ravel on non-contiguous array");
    return NULL;
  }
  if (nbc__py_array_alive(st, self, "DeviceNDArray.ravel") < 0) return NULL;
  PyObject *bound;
  if (nbc__py_stream_to_bind(st, nbc__py_own_stream(self, stream), &bound) < 0) return NULL;
  int64_t n = 1, stride = self->itemsize;
  for (int d = 0; d < self->ndim; d++) n *= self->shape[d];
  PyObject *r = (PyObject *)array_view(st, self, self->data, 1, &n, &stride, bound);
  Py_XDECREF(bound);
  return r;
}

/* view(dtype)'s array for the dtype's kind and itemsize; its dtype object is the caller's
 * to set (the view's is self's). */
static PyObject *view_as(nbc__py_state *st, ArrayObject *self, char kind, int itemsize) {
  if (nbc__py_array_alive(st, self, "DeviceNDArray.view") < 0) return NULL;
  int64_t shape[NBC__PY_MAXDIM], strides[NBC__PY_MAXDIM];
  for (int d = 0; d < self->ndim; d++) {
    shape[d] = self->shape[d];
    strides[d] = self->strides[d];
  }
  if (itemsize != self->itemsize) {
    if (!nbc__py_is_contig(self, 'C')) {
      PyErr_SetString(PyExc_ValueError, "To change to a dtype of a different size, the array "
                                        "must be C-contiguous");
      return NULL;
    }
    if (self->ndim == 0) {
      PyErr_SetString(PyExc_ValueError, "Changing the dtype of a 0d array is only supported if "
                                        "the itemsize is unchanged");
      return NULL;
    }
    int last = self->ndim - 1;
    int64_t bytes = shape[last] * self->itemsize;
    if (bytes % itemsize != 0) {
      PyErr_SetString(PyExc_ValueError, "When changing to a larger dtype, its size must be a "
                                        "divisor of the total size in bytes of the last axis "
                                        "of the array.");
      return NULL;
    }
    shape[last] = bytes / itemsize;
    strides[last] = itemsize;
  }
  ArrayObject *v = array_view(st, self, self->data, self->ndim, shape, strides, self->stream);
  if (!v) return NULL;
  v->kind = kind;
  v->itemsize = itemsize;
  v->nbytes = self->nbytes; /* the same bytes, counted in the new itemsize */
  nbc__py_set_typestr(v->typestr, kind, itemsize);
  return (PyObject *)v;
}

/* view(dtype): the same memory as another dtype (numba's DeviceNDArray.view), bound to the
 * array's stream: a dtype of another size needs a C-contiguous array and rescales the last
 * axis. */
PyObject *nbc__py_array_view_dtype(ArrayObject *self, PyObject *dtype) {
  nbc__py_state *st = state((PyObject *)self);
  char kind;
  int itemsize;
  PyObject *record;
  if (nbc__py_dtype_arg(st, dtype, &kind, &itemsize, &record) < 0) return NULL;
  PyObject *v = view_as(st, self, kind, itemsize);
  if (v) Py_XSETREF(((ArrayObject *)v)->dtype, record); /* NULL: made from the typestr */
  else Py_XDECREF(record);
  if (v && (kind == 'M' || kind == 'm') &&
      nbc__py_set_dtype_typestr(((ArrayObject *)v)->typestr, record) < 0)
    Py_CLEAR(v);
  return v;
}

/* squeeze(axis=None, stream=0): a view without axes of extent 1 (all of them, or those given,
 * which must have extent 1), as numba's dummyarray squeezes, bound to stream (the array's own
 * for 0). */
PyObject *nbc__py_array_squeeze(ArrayObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"axis", "stream", NULL};
  PyObject *axis = Py_None, *stream = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:squeeze", kwlist, &axis, &stream))
    return NULL;
  nbc__py_state *st = state((PyObject *)self);
  int drop[NBC__PY_MAXDIM] = {0};
  if (axis == Py_None) {
    for (int d = 0; d < self->ndim; d++) drop[d] = self->shape[d] == 1;
  } else {
    PyObject *seq = PyLong_Check(axis) ? PyTuple_Pack(1, axis) : PySequence_Tuple(axis);
    if (!seq) return NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(seq); i++) {
      long ax = PyLong_AsLong(PyTuple_GET_ITEM(seq, i));
      if (ax == -1 && PyErr_Occurred()) {
        Py_DECREF(seq);
        return NULL;
      }
      if (ax < 0) ax += self->ndim;
      if (ax < 0 || ax >= self->ndim) {
        PyErr_SetString(PyExc_IndexError, "tuple index out of range");
        Py_DECREF(seq);
        return NULL;
      }
      if (self->shape[ax] != 1) {
        PyErr_SetString(PyExc_ValueError, "cannot select an axis to squeeze out which has size "
                                          "not equal to one");
        Py_DECREF(seq);
        return NULL;
      }
      drop[ax] = 1;
    }
    Py_DECREF(seq);
  }
  if (nbc__py_array_alive(st, self, "DeviceNDArray.squeeze") < 0) return NULL;
  PyObject *bound;
  if (nbc__py_stream_to_bind(st, nbc__py_own_stream(self, stream), &bound) < 0) return NULL;
  int64_t shape[NBC__PY_MAXDIM], strides[NBC__PY_MAXDIM];
  int n = 0;
  for (int d = 0; d < self->ndim; d++)
    if (!drop[d]) {
      shape[n] = self->shape[d];
      strides[n++] = self->strides[d];
    }
  PyObject *r = (PyObject *)array_view(st, self, self->data, n, shape, strides, bound);
  Py_XDECREF(bound);
  return r;
}

/* split(section, stream=0): consecutive views of `section` elements (the last may be
 * shorter) of a 1-D unit-stride array, bound to stream (the array's own for 0); numba yields
 * them from a generator, nbcuda returns an iterator over them. */
PyObject *nbc__py_array_split(ArrayObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"section", "stream", NULL};
  Py_ssize_t section;
  PyObject *stream = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "n|O:split", kwlist, &section, &stream))
    return NULL;
  nbc__py_state *st = state((PyObject *)self);
  if (self->ndim != 1) {
    PyErr_SetString(PyExc_ValueError, "only support 1d array");
    return NULL;
  }
  if (self->strides[0] != self->itemsize) {
    PyErr_SetString(PyExc_ValueError, "only support unit stride");
    return NULL;
  }
  if (section <= 0) {
    PyErr_SetString(PyExc_ValueError, "section must be a positive number of elements");
    return NULL;
  }
  if (nbc__py_array_alive(st, self, "DeviceNDArray.split") < 0) return NULL;
  PyObject *bound;
  if (nbc__py_stream_to_bind(st, nbc__py_own_stream(self, stream), &bound) < 0) return NULL;
  int64_t size = self->shape[0];
  PyObject *parts = PyList_New(0);
  for (int64_t begin = 0; parts && begin < size; begin += section) {
    int64_t n = size - begin < section ? size - begin : section;
    int64_t stride = self->itemsize;
    PyObject *v = (PyObject *)array_view(
        st, self, self->data + (nbc_devptr_t)(begin * self->itemsize), 1, &n, &stride, bound);
    if (!v || PyList_Append(parts, v) < 0) Py_CLEAR(parts);
    Py_XDECREF(v);
  }
  Py_XDECREF(bound);
  if (!parts) return NULL;
  PyObject *it = PyObject_GetIter(parts);
  Py_DECREF(parts);
  return it;
}

/* transpose(axes=None) and .T, 2-D only: as numba, a new C-contiguous array holding the
 * transposed values, made by a kernel on the device (nbc_transpose2d) queued on the array's
 * stream (the default stream when it has none), and bound to that stream, as numba's
 * transpose(a) does with a.stream. */
PyObject *nbc__py_array_transpose(ArrayObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"axes", NULL};
  PyObject *axes = Py_None;
  if (args && !PyArg_ParseTupleAndKeywords(args, kwargs, "|O:transpose", kwlist, &axes))
    return NULL;
  nbc__py_state *st = state((PyObject *)self);
  int given = axes == Py_None ? 0 : PyObject_IsTrue(axes);
  if (given < 0) return NULL;
  if (given) {
    PyObject *t = PySequence_Tuple(axes);
    if (!t) return NULL;
    int identity = PyTuple_GET_SIZE(t) == self->ndim, valid = PyTuple_GET_SIZE(t) == 2;
    long a0 = -1, a1 = -1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(t); i++) {
      long v = PyLong_AsLong(PyTuple_GET_ITEM(t, i));
      if (v == -1 && PyErr_Occurred()) break;
      if (v != i) identity = 0;
      if (i == 0) a0 = v;
      if (i == 1) a1 = v;
    }
    Py_DECREF(t);
    if (PyErr_Occurred()) return NULL;
    if (identity) return Py_NewRef(self);
    valid = valid && ((a0 == 0 && a1 == 1) || (a0 == 1 && a1 == 0));
    if (self->ndim == 2 && !valid) {
      PyErr_Format(PyExc_ValueError, "invalid axes list %R", axes);
      return NULL;
    }
  }
  if (self->ndim != 2) {
    PyErr_SetString(PyExc_NotImplementedError,
                    "transposing a non-2D DeviceNDArray isn't supported");
    return NULL;
  }
  if (nbc__py_array_alive(st, self, "cuLaunchKernel") < 0) return NULL;
  ArrayObject *a = nbc__py_array_alloc(st);
  if (!a || nbc__py_array_set_ndim(a, 2) < 0) {
    Py_XDECREF(a);
    return NULL;
  }
  a->kind = self->kind;
  a->itemsize = self->itemsize;
  memcpy(a->typestr, self->typestr, sizeof a->typestr);
  a->dtype = Py_XNewRef(self->dtype);
  a->shape[0] = self->shape[1];
  a->shape[1] = self->shape[0];
  nbc__py_array_dense_strides(a, 'C');
  a->nbytes = (size_t)(self->shape[0] * self->shape[1]) * (size_t)self->itemsize;
  if (nbc__py_array_allocate(st, a) < 0) {
    Py_DECREF(a);
    return NULL;
  }
  if (self->cctx && a->cctx && self->cctx != a->cctx) {
    Py_DECREF(a);
    PyErr_SetString(PyExc_ValueError, "transpose: the array belongs to another device's "
                                      "context; make that device current first");
    return NULL;
  }
  nbc_stream_t *s = NULL, *temp = NULL;
  if (nbc__py_stream_arg(st, self->stream, &s, &temp) < 0) {
    Py_DECREF(a);
    return NULL;
  }
  a->stream = Py_XNewRef(self->stream);
  nbc_status_t rc = nbc_transpose2d(a->data, self->data, (uint64_t)self->shape[0],
                                    (uint64_t)self->shape[1], self->strides[0],
                                    self->strides[1], (size_t)self->itemsize, s);
  nbc_stream_destroy(temp);
  if (rc != NBC_OK) {
    Py_DECREF(a);
    return nbc__py_raise(st, rc);
  }
  return (PyObject *)a;
}

/* bind(stream=0): numba's copy of the array (the same memory and geometry) bound to stream,
 * so that its methods given stream=0 use it; 0 binds none. */
PyObject *nbc__py_array_bind(ArrayObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"stream", NULL};
  PyObject *stream_obj = NULL, *bound;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:bind", kwlist, &stream_obj)) return NULL;
  nbc__py_state *st = state((PyObject *)self);
  if (nbc__py_array_alive(st, self, "DeviceNDArray.bind") < 0) return NULL;
  if (nbc__py_stream_to_bind(st, stream_obj, &bound) < 0) return NULL;
  ArrayObject *a = array_view(st, self, self->data, self->ndim, self->shape, self->strides, bound);
  Py_XDECREF(bound);
  return (PyObject *)a;
}
