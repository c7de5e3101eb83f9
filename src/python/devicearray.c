/* devicearray.c — device arrays: DeviceNDArray, to_device(), device_array(),
 * device_array_like(), and the array view a kernel launch takes of any array argument.
 *
 * A DeviceNDArray is device memory (nbc_mem_alloc, freed when the object dies) plus numpy
 * geometry: shape, strides in bytes, numpy's typestr ("<f4"). Host data comes in through
 * the buffer protocol (numpy arrays, array.array, memoryview...), contiguous in C or F
 * order only, as numba requires ("Array contains non-contiguous buffer..."); anything
 * without a buffer goes through numpy.asarray first, like numba's np.array(obj). Objects
 * with __cuda_array_interface__ (CuPy, PyTorch) are wrapped without a copy and kept alive
 * by the wrapper. The array exposes __cuda_array_interface__ version 3 itself, and
 * copy_to_host() returns numpy arrays. numpy is imported the first time it is needed, not
 * at import, to keep `import nbcuda` fast.
 *
 * Arrays remember the C context their memory was allocated in. A copy between two arrays of
 * different contexts (two devices) goes through nbc_memcpy_peer, which names both contexts
 * and so works whichever context is current (and without peer access, which only makes it
 * faster); arrays of one context, or wrapped ones whose context is unknown, use
 * nbc_memcpy_dtod. Arrays also remember that context's lifetime (nbc_context_lifetime) at
 * allocation: once close() or Device.reset() reset the context, the memory is gone and the
 * driver may have handed its address to a new allocation, so every use of the array (copies,
 * indexing, kernel arguments) raises CudaAPIError (CUDA_ERROR_CONTEXT_IS_DESTROYED) and its
 * death frees nothing. A reset of another device's context changes nothing for it.
 *
 * Views (d[2:10], d[:, 1], reshape, ravel) are arrays over part of another array's memory,
 * with their own shape and strides, as numba's DeviceNDArray over gpu_data.view(): they
 * hold the owner of the allocation (or the foreign object), which frees it when the last
 * of them dies. d[i, j] copies one element to a numpy scalar; d[key] = value writes through
 * one copy for a contiguous target, one per contiguous run otherwise (numba launches an
 * assignment kernel); copy_to_host of a strided view copies the enclosing extent and lets
 * numpy pick the elements, as numba does.
 *
 * Arrays remember a stream, as numba's DeviceNDArray.stream: to_device, device_array and
 * device_array_like bind the array to their stream argument, an imported
 * __cuda_array_interface__ to external_stream(its stream), and views inherit it (numba's
 * reshape excepted); bind(stream) makes a copy bound to another. Methods given stream=0
 * (copy_to_host, copy_to_device, getitem, setitem, ravel, squeeze, split) and d[...] use the
 * array's stream then (numba's _default_stream), so copies queue there asynchronously.
 *
 * Structured (record) dtypes, np.dtype([("a", np.float64), ("b", np.int32)], align=True),
 * have kind 'V' and typestr "|V16"; the kind and itemsize cannot say their fields, so such
 * an array keeps the exact numpy dtype object from the moment it is made (to_device,
 * device_array, an imported __cuda_array_interface__ whose `descr` lists the fields) and its
 * views share it. Scalar dtypes keep the fast paths: their dtype object is made on first use
 * from the typestr, and every structured case is a branch on kind 'V'. Raw bytes
 * (np.dtype('V8')) are kept as such; subarray dtypes (np.dtype((np.float32, 3))) and dtypes
 * holding Python objects are refused. As in numba, copies between arrays check that the
 * dtypes are equal where a structured one takes part ("incompatible dtype"); scalar ones
 * are checked by size, as before. d[i] of a structured array is its element copied to the
 * host, a numpy.void (numba gives a DeviceRecord over the device memory instead).
 *
 * The launch view (nbc__py_array_view_get) reads an nbcuda array's fields directly — no
 * attribute lookups on the launch hot path — and falls back to __cuda_array_interface__,
 * then to host buffers, which are copied to the device for the launch and back after it,
 * as numba does for host arrays passed to kernels.
 */
#include "nbcuda_py.h"

#include <stdlib.h>
#include <string.h>

#define INLINE_DIMS 4

typedef struct {
  PyObject_HEAD
  nbc_devptr_t data;
  size_t nbytes;
  int ndim;
  /* dims for up to INLINE_DIMS dimensions, else PyMem_Malloc'd (array_set_ndim): the object
   * then stays small enough for Python's small-object allocator */
  int64_t *shape, *strides;
  char typestr[16];
  char kind;
  int itemsize;
  int owned;         /* free the memory when the object dies */
  PyObject *base;    /* the object whose memory this wraps, or NULL */
  PyObject *context; /* the Context the memory belongs to, or NULL */
  nbc_context_t *cctx; /* its C context (NULL: wrapped memory, context unknown) */
  unsigned lifetime;   /* nbc_context_lifetime(cctx) when the memory was allocated */
  /* numpy dtype: made on first use from kind and itemsize, except for kind 'V' (structured),
   * whose exact dtype is set when the array is made */
  PyObject *dtype;
  /* the stream the array is bound to (numba's DeviceNDArray.stream): a Stream or an object
   * with __cuda_stream__, or NULL for numba's 0; methods given stream=0 use it */
  PyObject *stream;
  int64_t dims[2 * INLINE_DIMS];
} ArrayObject;

/* Sets the number of dimensions, with room for the shape and strides; -1 with MemoryError. */
static int array_set_ndim(ArrayObject *a, int ndim) {
  if (ndim > INLINE_DIMS && a->shape == a->dims) {
    int64_t *p = PyMem_Malloc(sizeof(int64_t) * 2 * (size_t)ndim);
    if (!p) {
      PyErr_NoMemory();
      return -1;
    }
    a->shape = p;
    a->strides = p + ndim;
  }
  a->ndim = ndim;
  return 0;
}

static const char noncontig_msg[] =
    "Array contains non-contiguous buffer and cannot be transferred as a single memory "
    "region. Please ensure contiguous buffer with numpy .ascontiguousarray()";

/* ------------------------------------------------------------ dtype caches ------------ */

/* A dtype as a code, kind << 8 | itemsize (0 when it does not fit). */
static unsigned short dtype_code(char kind, int itemsize) {
  return itemsize > 0 && itemsize < 256 ? (unsigned short)(((unsigned char)kind << 8) | itemsize)
                                        : 0;
}

/* Appends (obj, code) to a cache list and its parallel code array, while there is room. */
static void cache_put(PyObject **plist, unsigned short *codes, PyObject *obj,
                      unsigned short code) {
  if (!code || (!*plist && !(*plist = PyList_New(0)))) {
    PyErr_Clear();
    return;
  }
  Py_ssize_t n = PyList_GET_SIZE(*plist);
  if (n >= NBC__PY_DTYPE_CACHE) return;
  if (PyList_Append(*plist, obj) < 0) {
    PyErr_Clear();
    return;
  }
  codes[n] = code;
}

/* The numpy dtype object of (kind, itemsize), made once per dtype; a new reference. Kind 'V'
 * is never cached: its arrays hold their own dtype and only raw bytes come here. */
static PyObject *dtype_object(nbc__py_state *st, char kind, int itemsize, const char *typestr) {
  unsigned short code = kind == 'V' ? 0 : dtype_code(kind, itemsize);
  if (code && st->dtype_objs)
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(st->dtype_objs); i++)
      if (st->dtype_obj_codes[i] == code) return Py_NewRef(PyList_GET_ITEM(st->dtype_objs, i));
  if (!nbc__py_numpy(st)) return NULL;
  PyObject *dt = PyObject_CallFunction(st->np_dtype, "s", typestr);
  if (dt) cache_put(&st->dtype_objs, st->dtype_obj_codes, dt, code);
  return dt;
}

char nbc__py_format_kind(const char *format, Py_ssize_t itemsize) {
  (void)itemsize;
  if (!format) return 'u';
  if (*format == '>' || *format == '!') return 0; /* big-endian data is not supported */
  if (*format == '@' || *format == '=' || *format == '<' || *format == '|') format++;
  if (format[0] == 'Z') return (format[1] == 'e' || format[1] == 'f' || format[1] == 'd') ? 'c' : 0;
  if (format[0] == 'T' && format[1] == '{') return 'V'; /* numpy's structured dtypes */
  if (format[0] >= '0' && format[0] <= '9') { /* "8x": numpy's raw bytes, np.dtype('V8') */
    while (*format >= '0' && *format <= '9') format++;
    return format[0] == 'x' && format[1] == '\0' ? 'V' : 0;
  }
  if (format[1] != '\0') return 0;
  switch (format[0]) {
  case '?': return 'b';
  case 'b': case 'h': case 'i': case 'l': case 'q': case 'n': return 'i';
  case 'B': case 'H': case 'I': case 'L': case 'Q': case 'N': return 'u';
  case 'e': case 'f': case 'd': return 'f';
  default: return 0;
  }
}

/* "<f4", "|b1", "|V16": written by hand because snprintf costs as much as the rest of
 * to_device. */
static void set_typestr(char *out, char kind, int itemsize) {
  char digits[12];
  int n = 0;
  unsigned v = itemsize > 0 ? (unsigned)itemsize : 0;
  do digits[n++] = (char)('0' + v % 10);
  while ((v /= 10) != 0);
  *out++ = itemsize == 1 || kind == 'V' ? '|' : '<';
  *out++ = kind;
  while (n > 0) *out++ = digits[--n];
  *out = 0;
}

/* ------------------------------------------------------------ the object -------------- */

static int array_traverse(ArrayObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->base);
  Py_VISIT(self->context);
  Py_VISIT(self->dtype);
  Py_VISIT(self->stream);
  return 0;
}

/* Breaks reference cycles (an object with __cuda_stream__ or __cuda_array_interface__ that
 * refers back to the array). The memory itself is freed by array_dealloc, which needs none
 * of these. */
static int array_clear(ArrayObject *self) {
  Py_CLEAR(self->base);
  Py_CLEAR(self->context);
  Py_CLEAR(self->dtype);
  Py_CLEAR(self->stream);
  return 0;
}

static void array_dealloc(ArrayObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  /* Not after a reset of its context: the memory is gone and its address may belong to
   * someone else. */
  if (self->owned && self->data && nbc_context_lifetime(self->cctx) == self->lifetime)
    nbc_mem_free(self->data);
  Py_CLEAR(self->base);
  Py_CLEAR(self->context);
  Py_CLEAR(self->dtype);
  Py_CLEAR(self->stream);
  if (self->shape != self->dims) PyMem_Free(self->shape);
  tp->tp_free(self);
  Py_DECREF(tp);
}

static ArrayObject *array_alloc(nbc__py_state *st) {
  ArrayObject *a = PyObject_GC_New(ArrayObject, st->DeviceArrayType);
  if (!a) return NULL;
  a->data = 0;
  a->nbytes = 0;
  a->ndim = 0;
  a->shape = a->dims;
  a->strides = a->dims + INLINE_DIMS;
  a->typestr[0] = 0;
  a->kind = 0;
  a->itemsize = 0;
  a->owned = 0;
  a->base = a->context = a->dtype = a->stream = NULL;
  a->cctx = NULL;
  a->lifetime = 0;
  PyObject_GC_Track(a);
  return a;
}

typedef struct {
  size_t nbytes;
  nbc_devptr_t data;
  nbc_context_t *ctx;
} alloc_call;

static nbc_status_t alloc_in_context(void *arg) {
  alloc_call *c = arg;
  nbc_status_t s = nbc_current_context(-1, &c->ctx); /* the attached one: no driver call */
  /* numba uses a NULL pointer for empty arrays */
  if (s == NBC_OK && c->nbytes) s = nbc_mem_alloc(c->nbytes, &c->data);
  return s;
}

/* The allocation is made inside nbc_require_context (nbc__py_context_call), so one check of
 * the current context serves both the Context kept with the memory and the allocation. */
PyObject *nbc__py_device_alloc(nbc__py_state *st, size_t nbytes, nbc_devptr_t *pptr,
                               nbc_context_t **pctx, PyObject **powner) {
  *powner = NULL;
  int plugin = st->memory_manager ? 1 : nbc__py_emm_active(st);
  if (plugin < 0) return NULL;
  /* with a plugin, only the context here (nbytes 0 allocates nothing); the plugin after */
  alloc_call c = {plugin ? 0 : nbytes, 0, NULL};
  PyObject *context = nbc__py_context_call(st, alloc_in_context, &c);
  if (!context) {
    if (c.data) nbc_mem_free(c.data);
    return NULL;
  }
  if (plugin && nbytes) {
    *powner = nbc__py_emm_memalloc(st, context, nbytes, &c.data);
    if (!*powner) Py_CLEAR(context);
  }
  *pptr = c.data;
  *pctx = c.ctx;
  return context;
}

/* Allocates device memory for the array's geometry in the current context; memory of an EMM
 * plugin is kept by its pointer object, the array's base. */
static int array_allocate(nbc__py_state *st, ArrayObject *a) {
  a->context = nbc__py_device_alloc(st, a->nbytes, &a->data, &a->cctx, &a->base);
  if (!a->context) return -1;
  a->owned = a->data != 0 && !a->base;
  a->lifetime = nbc_context_lifetime(a->cctx);
  return 0;
}

/* 0 while the array's memory is there; -1 with CudaAPIError ("Call to <call> results in
 * CUDA_ERROR_CONTEXT_IS_DESTROYED (the array was made in a context that was reset since)")
 * once its context was reset: the reset freed the memory and the driver may have given its
 * address to a new allocation, so nothing may read or write it any more. */
static int array_alive(nbc__py_state *st, const ArrayObject *a, const char *call) {
  nbc_status_t s = nbc_context_check_lifetime(a->cctx, a->lifetime, call, "array");
  return s == NBC_OK ? 0 : nbc__py_raise_int(st, s);
}

static int is_contig(const ArrayObject *a, char order) {
  int64_t expect = a->itemsize;
  for (int k = 0; k < a->ndim; k++) {
    int d = order == 'C' ? a->ndim - 1 - k : k;
    if (a->shape[d] == 0) return 1;
    if (a->shape[d] != 1 && a->strides[d] != expect) return 0;
    expect *= a->shape[d];
  }
  return 1;
}

/* The array's element count from its shape: ValueError for a negative extent, or for
 * bytes that do not fit in 63 bits (which would wrap to a small allocation under a huge
 * shape), as numpy says them; like numpy, the nonzero extents of an empty array count too,
 * so that dense strides cannot overflow. */
static int checked_count(const ArrayObject *a, int64_t *pcount) {
  int64_t n = 1;
  int zero = 0;
  for (int d = 0; d < a->ndim; d++) {
    if (a->shape[d] < 0) {
      PyErr_SetString(PyExc_ValueError, "negative dimensions are not allowed");
      return -1;
    }
    zero |= a->shape[d] == 0;
  }
  for (int d = 0; d < a->ndim; d++) {
    if (a->shape[d] == 0) continue;
    if (a->shape[d] > INT64_MAX / a->itemsize / n) return nbc__py_too_big();
    n *= a->shape[d];
  }
  *pcount = zero ? 0 : n;
  return 0;
}

static void dense_strides(ArrayObject *a, char order) {
  int64_t s = a->itemsize;
  for (int k = 0; k < a->ndim; k++) {
    int d = order == 'F' ? k : a->ndim - 1 - k;
    a->strides[d] = s;
    s *= a->shape[d];
  }
}

/* Runs a copy with the GIL released when it is large enough to be worth it. */
static nbc_status_t copy_htod(nbc_devptr_t dst, const void *src, size_t n, nbc_stream_t *s) {
  nbc_status_t rc;
  if (n < 65536) return s ? nbc_memcpy_htod_async(dst, src, n, s) : nbc_memcpy_htod(dst, src, n);
  Py_BEGIN_ALLOW_THREADS rc = s ? nbc_memcpy_htod_async(dst, src, n, s) : nbc_memcpy_htod(dst, src, n);
  Py_END_ALLOW_THREADS return rc;
}

static nbc_status_t copy_dtoh(void *dst, nbc_devptr_t src, size_t n, nbc_stream_t *s) {
  nbc_status_t rc;
  if (n < 65536) return s ? nbc_memcpy_dtoh_async(dst, src, n, s) : nbc_memcpy_dtoh(dst, src, n);
  Py_BEGIN_ALLOW_THREADS rc = s ? nbc_memcpy_dtoh_async(dst, src, n, s) : nbc_memcpy_dtoh(dst, src, n);
  Py_END_ALLOW_THREADS return rc;
}

/* Device to device: a peer copy between arrays of two contexts (devices), else within one. */
static nbc_status_t copy_dtod(const ArrayObject *dst, const ArrayObject *src, size_t n) {
  nbc_status_t rc;
  int peer = dst->cctx && src->cctx && dst->cctx != src->cctx;
  if (n < 65536)
    return peer ? nbc_memcpy_peer(dst->data, dst->cctx, src->data, src->cctx, n)
                : nbc_memcpy_dtod(dst->data, src->data, n);
  Py_BEGIN_ALLOW_THREADS rc = peer ? nbc_memcpy_peer(dst->data, dst->cctx, src->data, src->cctx, n)
                                   : nbc_memcpy_dtod(dst->data, src->data, n);
  Py_END_ALLOW_THREADS return rc;
}

static int dtype_arg(nbc__py_state *st, PyObject *dtype, char *pkind, int *pitemsize,
                     PyObject **precord);

/* An exact numpy.ndarray's buffer without the format string, which numpy builds anew for
 * every export, and its element type from its dtype object through dtype_arg's cache (and
 * for a structured dtype, the dtype in *precord). 1 on success; 0 (nothing held, no error)
 * when the general path must judge the array. */
static int ndarray_buffer(nbc__py_state *st, PyObject *obj, Py_buffer *view, int writable,
                          char *pkind, int *pitemsize, PyObject **precord) {
  PyObject *dt = nbc__py_numpy_dtype_of(st, obj);
  int ok = dt && dtype_arg(st, dt, pkind, pitemsize, precord) == 0;
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
static int host_buffer(nbc__py_state *st, PyObject *obj, Py_buffer *view, int writable,
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
  PyObject *arr = np ? PyObject_CallMethod(np, "asarray", "O", obj) : NULL;
  if (!arr) return -1;
  if (PyObject_GetBuffer(arr, view, flags) < 0) {
    Py_DECREF(arr);
    return -1;
  }
  *pholder = arr;
got:
  if (!PyBuffer_IsContiguous(view, 'C') && !PyBuffer_IsContiguous(view, 'F')) {
    PyErr_SetString(PyExc_ValueError, noncontig_msg);
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
 * kind: the element's kind letter when host_buffer knew it, else 0 (read the format). */
static int geometry_from_buffer(ArrayObject *a, const Py_buffer *view, char kind) {
  a->kind = kind ? kind : nbc__py_format_kind(view->format, view->itemsize);
  if (!a->kind) {
    PyErr_Format(PyExc_TypeError, "unsupported buffer format '%s' (numeric little-endian "
                 "scalars and structured dtypes only)", view->format ? view->format : "B");
    return -1;
  }
  a->itemsize = (int)view->itemsize;
  set_typestr(a->typestr, a->kind, a->itemsize);
  if (array_set_ndim(a, view->ndim) < 0) return -1;
  a->nbytes = (size_t)view->len;
  for (int d = 0; d < view->ndim; d++) {
    a->shape[d] = view->shape ? view->shape[d] : view->len / view->itemsize;
    a->strides[d] = view->strides ? view->strides[d] : 0;
  }
  if (!view->strides) dense_strides(a, 'C');
  return 0;
}

/* Fills a from __cuda_array_interface__ of obj (dict already fetched). */
static int geometry_from_cai(ArrayObject *a, PyObject *cai) {
  if (!PyDict_Check(cai)) {
    PyErr_SetString(PyExc_TypeError, "__cuda_array_interface__ must be a dict");
    return -1;
  }
  /* numba's from_cuda_array_interface: an int version is required (numba fails comparing
   * it otherwise), and from version 1 on a mask is refused */
  PyObject *version = PyDict_GetItemString(cai, "version");
  if (!version || !PyLong_Check(version)) {
    PyErr_SetString(PyExc_TypeError, "__cuda_array_interface__ needs an int 'version'");
    return -1;
  }
  PyObject *mask = PyDict_GetItemString(cai, "mask");
  if (PyLong_AsLong(version) >= 1 && mask && mask != Py_None) {
    PyErr_SetString(PyExc_NotImplementedError, "Masked arrays are not supported");
    return -1;
  }
  if (PyErr_Occurred()) return -1; /* a version beyond a C long */
  PyObject *shape = PyDict_GetItemString(cai, "shape");
  PyObject *typestr = PyDict_GetItemString(cai, "typestr");
  PyObject *data = PyDict_GetItemString(cai, "data");
  PyObject *strides = PyDict_GetItemString(cai, "strides");
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
  a->itemsize = atoi(ts + 2);
  if (!strchr("biufcV", a->kind) || a->itemsize <= 0) { /* 'V': wrap_cai reads descr */
    PyErr_Format(PyExc_TypeError, "unsupported typestr %R", typestr);
    return -1;
  }
  set_typestr(a->typestr, a->kind, a->itemsize);
  Py_ssize_t nd = PyTuple_GET_SIZE(shape);
  if (nd > NBC__PY_MAXDIM) {
    PyErr_SetString(PyExc_ValueError, "too many dimensions");
    return -1;
  }
  if (array_set_ndim(a, (int)nd) < 0) return -1;
  int64_t n = 1;
  for (Py_ssize_t d = 0; d < nd; d++) {
    a->shape[d] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, d));
    if (a->shape[d] == -1 && PyErr_Occurred()) return -1;
  }
  if (checked_count(a, &n) < 0) return -1;
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
    dense_strides(a, 'C');
  }
  a->data = (nbc_devptr_t)PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(data, 0));
  a->nbytes = (size_t)(n * a->itemsize);
  return PyErr_Occurred() ? -1 : 0;
}

/* ------------------------------------------------------------ methods ----------------- */

static nbc__py_state *state(PyObject *self) { return nbc__py_state_of(self); }

/* ------------------------------------------------------------ the array's stream ------ */

/* numba's `not stream` for a stream argument: none given, None, 0 or False. */
static int no_stream(PyObject *obj) {
  if (!obj || obj == Py_None) return 1;
  if (!PyLong_Check(obj)) return 0;
  int overflow = 0;
  long v = PyLong_AsLongAndOverflow(obj, &overflow);
  if (v == -1 && PyErr_Occurred()) PyErr_Clear();
  return v == 0 && !overflow;
}

/* The stream a method given `stream` uses: the argument, or the array's own when it is 0
 * (numba's _default_stream). Borrowed; NULL is the default stream. */
static PyObject *own_stream(const ArrayObject *self, PyObject *arg) {
  return no_stream(arg) ? self->stream : arg;
}

/* The stream an array is to be bound to (to_device(stream=...), bind(), a view's): a new
 * reference, or NULL for none. It is checked as every stream argument is (TypeError for a
 * non-stream) so that a bad one fails here, not at a later copy; an int names the default
 * stream in nbcuda and binds nothing. */
static int stream_to_bind(nbc__py_state *st, PyObject *obj, PyObject **pout) {
  *pout = NULL;
  if (no_stream(obj)) return 0;
  nbc_stream_t *s = NULL, *temp = NULL;
  if (nbc__py_stream_arg(st, obj, &s, &temp) < 0) return -1;
  nbc_stream_destroy(temp);
  if (!PyLong_Check(obj)) *pout = Py_NewRef(obj);
  return 0;
}

/* Waits for a copy queued on s (NULL: the copy was synchronous) whose host buffer nbcuda made
 * and reads or frees at once (a scalar read, a temporary source, a new host array). The real
 * driver has finished such a copy of pageable memory when the call returns; the wait makes
 * that hold on any driver. */
static nbc_status_t wait_copy(nbc_stream_t *s) {
  nbc_status_t rc;
  if (!s) return NBC_OK;
  Py_BEGIN_ALLOW_THREADS rc = nbc_stream_synchronize(s);
  Py_END_ALLOW_THREADS return rc;
}

static PyObject *array_dtype_obj(ArrayObject *self) {
  if (!self->dtype)
    self->dtype = dtype_object(state((PyObject *)self), self->kind, self->itemsize, self->typestr);
  return self->dtype ? Py_NewRef(self->dtype) : NULL;
}

PyObject *nbc__py_array_dtype(nbc__py_state *st, PyObject *obj) {
  if (Py_TYPE(obj) != st->DeviceArrayType) {
    PyErr_Format(PyExc_TypeError, "expected an nbcuda DeviceNDArray, not %.200s",
                 Py_TYPE(obj)->tp_name);
    return NULL;
  }
  return array_dtype_obj((ArrayObject *)obj);
}

/* numba's dtype check before a copy (check_array_compatibility: "incompatible dtype: a vs.
 * b"), which nbcuda makes where a structured dtype takes part; copies between scalar dtypes
 * are checked by size alone, as before. other: the other side's numpy dtype (borrowed).
 * 0, or -1 with TypeError. */
static int check_dtype(ArrayObject *self, PyObject *other) {
  PyObject *mine = array_dtype_obj(self);
  int same = mine ? PyObject_RichCompareBool(mine, other, Py_EQ) : -1;
  if (same == 0) PyErr_Format(PyExc_TypeError, "incompatible dtype: %S vs. %S", mine, other);
  Py_XDECREF(mine);
  return same == 1 ? 0 : -1;
}

/* check_dtype against a host object, when self's or its dtype is structured (for a numpy
 * array, a read of its descriptor says; other objects count as scalar unless self is
 * structured). */
static int check_host_dtype(nbc__py_state *st, ArrayObject *self, PyObject *host) {
  if (self->kind != 'V' && nbc__py_numpy_kind(st, host) != 'V') return 0;
  PyObject *dt = nbc__py_host_dtype(st, host);
  int rc = dt ? check_dtype(self, dt) : -1;
  Py_XDECREF(dt);
  return rc;
}

PyObject *nbc__py_int64_tuple(const int64_t *v, int n) {
  PyObject *t = PyTuple_New(n);
  for (int i = 0; t && i < n; i++) {
    PyObject *x = PyLong_FromLongLong(v[i]);
    if (!x) {
      Py_CLEAR(t);
      break;
    }
    PyTuple_SET_ITEM(t, i, x);
  }
  return t;
}

/* A new numpy array of self's shape and dtype, in C or F order (numpy_api.c), with the
 * dtype object cached. */
static PyObject *host_array_like(nbc__py_state *st, ArrayObject *self, int fortran) {
  PyObject *dtype = array_dtype_obj(self); /* imports numpy */
  if (!dtype) return NULL;
  PyObject *out = nbc__py_numpy_empty(st, dtype, self->ndim, self->shape, fortran);
  Py_DECREF(dtype);
  return out;
}

int nbc__py_extent(int ndim, const int64_t *shape, const int64_t *strides, int64_t itemsize,
                   int64_t *pbytes) {
  int64_t lo = 0, hi = itemsize, span;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] == 0) {
      *pbytes = 0;
      return 0;
    }
    if (__builtin_mul_overflow(shape[d] - 1, strides[d], &span) ||
        __builtin_add_overflow(span > 0 ? hi : lo, span, span > 0 ? &hi : &lo))
      return -1;
  }
  return __builtin_sub_overflow(hi, lo, pbytes) ? -1 : 0;
}

/* The bytes from the array's first element to the end of its last (numba's alloc_size of a
 * view, memory_size_from_info); strides are non-negative here, and an array's extent was
 * checked when it was made. */
static size_t extent_bytes(const ArrayObject *a) {
  int64_t bytes = 0;
  nbc__py_extent(a->ndim, a->shape, a->strides, a->itemsize, &bytes);
  return (size_t)bytes;
}

/* copy_to_host of a view that is neither C- nor F-contiguous, as numba does it: the bytes
 * of the enclosing extent come over in one copy and numpy picks the strided elements out
 * (the result is a strided numpy array over that buffer). Into ary: ary must have the
 * view's shape and strides. Negative strides are refused, as numba refuses them. */
static PyObject *copy_strided_to_host(nbc__py_state *st, ArrayObject *self, PyObject *ary,
                                      PyObject *stream_obj) {
  for (int d = 0; d < self->ndim; d++)
    if (self->strides[d] < 0) {
      PyObject *t = nbc__py_int64_tuple(self->strides, self->ndim);
      if (t) PyErr_Format(PyExc_NotImplementedError,
                          "D->H copy not implemented for negative strides: %R", t);
      Py_XDECREF(t);
      return NULL;
    }
  size_t extent = extent_bytes(self);
  PyObject *out = NULL, *buffer = NULL;
  if (ary == Py_None) {
    PyObject *dtype = array_dtype_obj(self), *shape = nbc__py_int64_tuple(self->shape, self->ndim);
    PyObject *strides = nbc__py_int64_tuple(self->strides, self->ndim);
    PyObject *np = nbc__py_numpy(st);
    buffer = np && dtype ? PyObject_CallMethod(np, "empty", "ns", (Py_ssize_t)extent, "b")
                         : NULL;
    PyObject *kw = buffer && shape && strides
                       ? Py_BuildValue("{s:O,s:O,s:O,s:O}", "shape", shape, "dtype", dtype,
                                       "buffer", buffer, "strides", strides)
                       : NULL;
    PyObject *noargs = kw ? PyTuple_New(0) : NULL;
    out = noargs ? PyObject_Call(st->np_ndarray, noargs, kw) : NULL;
    Py_XDECREF(noargs);
    Py_XDECREF(kw);
    Py_XDECREF(dtype);
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    if (!out) {
      Py_XDECREF(buffer);
      return NULL;
    }
  } else {
    if (check_host_dtype(st, self, ary) < 0) return NULL;
    out = Py_NewRef(ary);
  }
  Py_buffer view;
  if (PyObject_GetBuffer(out, &view, PyBUF_WRITABLE | PyBUF_STRIDES) < 0) {
    Py_XDECREF(buffer);
    Py_DECREF(out);
    return NULL;
  }
  int same = view.ndim == self->ndim && view.itemsize == self->itemsize;
  for (int d = 0; same && d < self->ndim; d++)
    same = view.shape[d] == self->shape[d] && view.strides[d] == self->strides[d];
  nbc_stream_t *s = NULL, *temp = NULL;
  nbc_status_t rc = NBC_OK;
  if (!same) {
    PyObject *shape = nbc__py_int64_tuple(self->shape, self->ndim);
    PyObject *strides = nbc__py_int64_tuple(self->strides, self->ndim);
    if (shape && strides)
      PyErr_Format(PyExc_ValueError, "copy_to_host: the host array must have the device "
                   "array's shape %R and strides %R", shape, strides);
    Py_XDECREF(shape);
    Py_XDECREF(strides);
  } else if (nbc__py_stream_arg(st, stream_obj, &s, &temp) == 0 && extent) {
    rc = copy_dtoh(view.buf, self->data, extent, s);
    if (rc == NBC_OK && ary == Py_None) rc = wait_copy(s);
  }
  nbc_stream_destroy(temp);
  PyBuffer_Release(&view);
  Py_XDECREF(buffer);
  if (PyErr_Occurred() || rc != NBC_OK) {
    Py_DECREF(out);
    return PyErr_Occurred() ? NULL : nbc__py_raise(st, rc);
  }
  return out;
}

static PyObject *array_copy_to_host(ArrayObject *self, PyObject *const *args, Py_ssize_t nargsf,
                                    PyObject *kwnames) {
  static char *kwlist[] = {"ary", "stream", NULL};
  PyObject *ary = Py_None, *stream_obj = NULL;
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (!kwnames && nargs <= 2) {
    if (nargs > 0) ary = args[0];
    if (nargs > 1) stream_obj = args[1];
  } else if (!nbc__py_parse_slow(args, nargsf, kwnames, "|OO:copy_to_host", kwlist, &ary,
                                 &stream_obj)) {
    return NULL;
  }
  nbc__py_state *st = state((PyObject *)self);
  if (array_alive(st, self, "cuMemcpyDtoH") < 0) return NULL;
  stream_obj = own_stream(self, stream_obj);
  int c = is_contig(self, 'C'), f = !c && is_contig(self, 'F');
  if (!c && !f) return copy_strided_to_host(st, self, ary, stream_obj);
  PyObject *out;
  if (ary == Py_None) {
    if (!(out = host_array_like(st, self, f))) return NULL;
  } else {
    if (check_host_dtype(st, self, ary) < 0) return NULL;
    out = Py_NewRef(ary);
  }
  Py_buffer view;
  if (!(ary == Py_None && nbc__py_numpy_view(st, out, 1, self->itemsize, &view)) &&
      PyObject_GetBuffer(out, &view, PyBUF_WRITABLE | PyBUF_ANY_CONTIGUOUS) < 0) {
    Py_DECREF(out);
    return NULL;
  }
  if ((size_t)view.len != self->nbytes) {
    PyBuffer_Release(&view);
    Py_DECREF(out);
    PyErr_Format(PyExc_ValueError, "copy_to_host: the host array has %zd bytes, the device "
                 "array %zu", view.len, self->nbytes);
    return NULL;
  }
  nbc_stream_t *s = NULL, *temp = NULL;
  nbc_status_t rc = NBC_OK;
  if (nbc__py_stream_arg(st, stream_obj, &s, &temp) < 0) {
    rc = NBC_INTERNAL;
  } else if (self->nbytes) {
    rc = copy_dtoh(view.buf, self->data, self->nbytes, s);
    if (rc == NBC_OK && ary == Py_None) rc = wait_copy(s);
  }
  nbc_stream_destroy(temp);
  PyBuffer_Release(&view);
  if (rc != NBC_OK) {
    Py_DECREF(out);
    return PyErr_Occurred() ? NULL : nbc__py_raise(st, rc);
  }
  return out;
}

static int copy_from(nbc__py_state *st, ArrayObject *self, PyObject *ary, PyObject *stream_obj) {
  int device = Py_TYPE(ary) == st->DeviceArrayType;
  if (array_alive(st, self, device ? "cuMemcpyDtoD" : "cuMemcpyHtoD") < 0 ||
      (device && array_alive(st, (ArrayObject *)ary, "cuMemcpyDtoD") < 0))
    return -1;
  /* numba's sentry_contiguous: one copy of one region, never a scatter */
  if ((!is_contig(self, 'C') && !is_contig(self, 'F')) ||
      (device && !is_contig((ArrayObject *)ary, 'C') && !is_contig((ArrayObject *)ary, 'F'))) {
    PyErr_SetString(PyExc_ValueError, noncontig_msg);
    return -1;
  }
  nbc_stream_t *s = NULL, *temp = NULL;
  if (nbc__py_stream_arg(st, own_stream(self, stream_obj), &s, &temp) < 0) return -1;
  nbc_status_t rc = NBC_OK;
  if (device) {
    ArrayObject *src = (ArrayObject *)ary;
    PyObject *dt = self->kind == 'V' || src->kind == 'V' ? array_dtype_obj(src) : NULL;
    int bad = dt ? check_dtype(self, dt) : PyErr_Occurred() != NULL;
    Py_XDECREF(dt);
    if (bad) {
      nbc_stream_destroy(temp);
      return -1;
    }
    if (src->nbytes != self->nbytes) {
      nbc_stream_destroy(temp);
      PyErr_SetString(PyExc_ValueError, "copy_to_device: sizes differ");
      return -1;
    }
    if (self->nbytes) rc = copy_dtod(self, src, self->nbytes);
  } else {
    Py_buffer view;
    PyObject *holder = NULL, *record = NULL;
    char kind;
    int itemsize;
    if (host_buffer(st, ary, &view, 0, &holder, &kind, &itemsize, &record) < 0) {
      nbc_stream_destroy(temp);
      return -1;
    }
    int bad = 0;
    if (self->kind == 'V' || kind == 'V') { /* numba compares np.array(ary)'s dtype */
      PyObject *dt = record ? Py_NewRef(record) : nbc__py_host_dtype(st, holder ? holder : ary);
      bad = dt ? check_dtype(self, dt) : -1;
      Py_XDECREF(dt);
    }
    Py_XDECREF(record);
    if (!bad && (size_t)view.len != self->nbytes) {
      PyErr_Format(PyExc_ValueError, "copy_to_device: the host array has %zd bytes, the "
                   "device array %zu", view.len, self->nbytes);
      bad = -1;
    }
    if (bad) {
      PyBuffer_Release(&view);
      Py_XDECREF(holder);
      nbc_stream_destroy(temp);
      return -1;
    }
    if (self->nbytes) rc = copy_htod(self->data, view.buf, self->nbytes, s);
    if (rc == NBC_OK && holder) rc = wait_copy(s); /* holder, made here, dies now */
    PyBuffer_Release(&view);
    Py_XDECREF(holder);
  }
  nbc_stream_destroy(temp);
  return rc == NBC_OK ? 0 : nbc__py_raise_int(st, rc);
}

static PyObject *array_copy_to_device(ArrayObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"ary", "stream", NULL};
  PyObject *ary, *stream_obj = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:copy_to_device", kwlist, &ary,
                                   &stream_obj))
    return NULL;
  if (copy_from(state((PyObject *)self), self, ary, stream_obj) < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *array_array(ArrayObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"dtype", "copy", NULL};
  PyObject *dtype = Py_None, *copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:__array__", kwlist, &dtype, &copy))
    return NULL;
  PyObject *host = array_copy_to_host(self, NULL, 0, NULL);
  if (!host || dtype == Py_None) return host;
  PyObject *r = PyObject_CallMethod(host, "astype", "O", dtype);
  Py_DECREF(host);
  return r;
}

static PyObject *array_is_c(ArrayObject *self, PyObject *u) {
  (void)u;
  return PyBool_FromLong(is_contig(self, 'C'));
}
static PyObject *array_is_f(ArrayObject *self, PyObject *u) {
  (void)u;
  return PyBool_FromLong(is_contig(self, 'F'));
}

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
  ArrayObject *a = array_alloc(st);
  if (!a || array_set_ndim(a, ndim) < 0) {
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
    if (array_alive(st, self, "DeviceNDArray.__getitem__") < 0) return NULL;
    return (PyObject *)array_view(st, self, self->data + (nbc_devptr_t)offset, ndim, shape,
                                  strides, stream);
  }
  if (array_alive(st, self, "cuMemcpyDtoH") < 0) return NULL;
  PyObject *dtype = array_dtype_obj(self); /* imports numpy */
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
    rc = copy_dtoh(view.buf, self->data + (nbc_devptr_t)offset, (size_t)self->itemsize, s);
    if (rc == NBC_OK) rc = wait_copy(s); /* the value is read below */
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
static PyObject *array_subscript(ArrayObject *self, PyObject *key) {
  return do_getitem(self, key, self->stream);
}

/* getitem(item, stream=0): d[item] on stream, or the array's own for 0. */
static PyObject *array_getitem(ArrayObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"item", "stream", NULL};
  PyObject *item, *stream_obj = NULL, *stream;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:getitem", kwlist, &item, &stream_obj))
    return NULL;
  if (stream_to_bind(state((PyObject *)self), own_stream(self, stream_obj), &stream) < 0)
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
    nbc_status_t rc = copy_htod(dst + (nbc_devptr_t)off, src + (size_t)i * bytes, bytes, s);
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
  PyObject *dtype = array_dtype_obj(lhs), *given = NULL, *arr = NULL;
  if (!dtype) return NULL;
  int has = nbc__py_optional_attr(host, st->str_dtype, &given);
  if (!PyErr_Occurred() && (!has || check_dtype(lhs, given) == 0))
    arr = PyObject_CallMethod(np, "asarray", "OO", host, dtype);
  Py_XDECREF(given);
  Py_DECREF(dtype);
  return arr;
}

/* The host value of d[key] = value, checked as numba checks it (no more dimensions than
 * the target; each axis of the value 1 or the target's) and broadcast, in the target's
 * dtype and in C order, or F order for an F-contiguous target. */
static PyObject *assign_source(nbc__py_state *st, ArrayObject *lhs, PyObject *value, int f) {
  PyObject *host = Py_TYPE(value) == st->DeviceArrayType
                       ? array_copy_to_host((ArrayObject *)value, NULL, 0, NULL)
                       : Py_NewRef(value);
  PyObject *np = host ? nbc__py_numpy(st) : NULL;
  PyObject *arr = !np                ? NULL
                  : lhs->kind == 'V' ? record_source(st, lhs, np, host)
                                     : PyObject_CallMethod(np, "asarray", "O", host);
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
  PyObject *dtype = wide ? array_dtype_obj(lhs) : NULL;
  PyObject *r = dtype ? PyObject_CallMethod(np, "asarray", "OOs", wide, dtype, f ? "F" : "C")
                      : NULL;
  Py_XDECREF(shape);
  Py_XDECREF(wide);
  Py_XDECREF(dtype);
  Py_DECREF(arr);
  return r;
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
  if (array_alive(st, self, "cuMemcpyHtoD") < 0) return -1;
  ArrayObject *lhs = array_view(st, self, self->data + (nbc_devptr_t)offset, ndim, shape,
                                strides, stream);
  if (!lhs) return -1;
  int c = is_contig(lhs, 'C'), f = !c && is_contig(lhs, 'F');
  PyObject *src = assign_source(st, lhs, value, f);
  Py_buffer b;
  nbc_stream_t *s = NULL, *temp = NULL;
  int rc = -1;
  if (src && nbc__py_stream_arg(st, stream, &s, &temp) == 0 &&
      PyObject_GetBuffer(src, &b, PyBUF_ANY_CONTIGUOUS) == 0) {
    nbc_status_t status = NBC_OK;
    if (lhs->nbytes == 0)
      status = NBC_OK;
    else if (c || f)
      status = copy_htod(lhs->data, b.buf, lhs->nbytes, s);
    else
      status = scatter_htod(lhs->data, lhs, b.buf, s);
    if (status == NBC_OK && lhs->nbytes) status = wait_copy(s);
    PyBuffer_Release(&b);
    rc = status == NBC_OK ? 0 : nbc__py_raise_int(st, status);
  }
  nbc_stream_destroy(temp);
  Py_XDECREF(src);
  Py_DECREF(lhs);
  return rc;
}

/* d[key] = value: on the array's own stream, as numba's __setitem__. */
static int array_ass_subscript(ArrayObject *self, PyObject *key, PyObject *value) {
  return do_setitem(self, key, value, self->stream);
}

/* setitem(key, value, stream=0): d[key] = value on stream, or the array's own for 0. */
static PyObject *array_setitem(ArrayObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"key", "value", "stream", NULL};
  PyObject *key, *value, *stream_obj = NULL, *stream;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|O:setitem", kwlist, &key, &value,
                                   &stream_obj))
    return NULL;
  if (stream_to_bind(state((PyObject *)self), own_stream(self, stream_obj), &stream) < 0)
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

/* Dense strides for shape in order 'C' or 'F'. */
static void dense_strides_of(int ndim, const int64_t *shape, int itemsize, char order,
                             int64_t *strides) {
  int64_t s = itemsize;
  for (int k = 0; k < ndim; k++) {
    int d = order == 'F' ? k : ndim - 1 - k;
    strides[d] = s;
    s *= shape[d];
  }
}

/* numba's order argument: 'C', 'F', or 'A' (F for an F-contiguous array, else C). */
static int order_arg(ArrayObject *self, const char *order, char *pout) {
  if (strlen(order) != 1 || !strchr("CFA", order[0])) {
    PyErr_SetString(PyExc_ValueError, "order not C|F|A");
    return -1;
  }
  *pout = order[0] == 'A' ? (is_contig(self, 'F') && !is_contig(self, 'C') ? 'F' : 'C')
                          : order[0];
  return 0;
}

/* reshape(*shape, order='C'): a view; contiguous arrays only (numba: NotImplementedError
 * "operation requires copying" otherwise). Like numba's, the view is bound to no stream:
 * numba's reshape passes none on (unlike ravel, squeeze and the other views). */
static PyObject *array_reshape(ArrayObject *self, PyObject *args, PyObject *kwargs) {
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
  if (array_alive(st, self, "DeviceNDArray.reshape") < 0) return NULL;
  if (same)
    return (PyObject *)array_view(st, self, self->data, ndim, self->shape, self->strides, NULL);
  if (order_arg(self, order, &o) < 0) return NULL;
  if (!is_contig(self, 'C') && !is_contig(self, 'F')) {
    PyErr_SetString(PyExc_NotImplementedError, "operation requires copying");
    return NULL;
  }
  dense_strides_of(ndim, dims, self->itemsize, o, strides);
  return (PyObject *)array_view(st, self, self->data, ndim, dims, strides, NULL);
}

/* ravel(order='C', stream=0): a 1-D view of a contiguous array, bound to stream (the array's
 * own for 0). */
static PyObject *array_ravel(ArrayObject *self, PyObject *args, PyObject *kwargs) {
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
  int c = is_contig(self, 'C'), f = is_contig(self, 'F');
  if (!((order[0] != 'F' && c) || (order[0] != 'C' && f))) {
    PyErr_SetString(PyExc_NotImplementedError, "ravel on non-contiguous array");
    return NULL;
  }
  if (array_alive(st, self, "DeviceNDArray.ravel") < 0) return NULL;
  PyObject *bound;
  if (stream_to_bind(st, own_stream(self, stream), &bound) < 0) return NULL;
  int64_t n = 1, stride = self->itemsize;
  for (int d = 0; d < self->ndim; d++) n *= self->shape[d];
  PyObject *r = (PyObject *)array_view(st, self, self->data, 1, &n, &stride, bound);
  Py_XDECREF(bound);
  return r;
}

/* view(dtype)'s array for the dtype's kind and itemsize; its dtype object is the caller's
 * to set (the view's is self's). */
static PyObject *view_as(nbc__py_state *st, ArrayObject *self, char kind, int itemsize) {
  if (array_alive(st, self, "DeviceNDArray.view") < 0) return NULL;
  int64_t shape[NBC__PY_MAXDIM], strides[NBC__PY_MAXDIM];
  for (int d = 0; d < self->ndim; d++) {
    shape[d] = self->shape[d];
    strides[d] = self->strides[d];
  }
  if (itemsize != self->itemsize) {
    if (!is_contig(self, 'C')) {
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
  set_typestr(v->typestr, kind, itemsize);
  return (PyObject *)v;
}

/* view(dtype): the same memory as another dtype (numba's DeviceNDArray.view), bound to the
 * array's stream: a dtype of another size needs a C-contiguous array and rescales the last
 * axis. */
static PyObject *array_view_dtype(ArrayObject *self, PyObject *dtype) {
  nbc__py_state *st = state((PyObject *)self);
  char kind;
  int itemsize;
  PyObject *record;
  if (dtype_arg(st, dtype, &kind, &itemsize, &record) < 0) return NULL;
  PyObject *v = view_as(st, self, kind, itemsize);
  if (v) Py_XSETREF(((ArrayObject *)v)->dtype, record); /* NULL: made from the typestr */
  else Py_XDECREF(record);
  return v;
}

/* squeeze(axis=None, stream=0): a view without axes of extent 1 (all of them, or those given,
 * which must have extent 1), as numba's dummyarray squeezes, bound to stream (the array's own
 * for 0). */
static PyObject *array_squeeze(ArrayObject *self, PyObject *args, PyObject *kwargs) {
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
  if (array_alive(st, self, "DeviceNDArray.squeeze") < 0) return NULL;
  PyObject *bound;
  if (stream_to_bind(st, own_stream(self, stream), &bound) < 0) return NULL;
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
static PyObject *array_split(ArrayObject *self, PyObject *args, PyObject *kwargs) {
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
  if (array_alive(st, self, "DeviceNDArray.split") < 0) return NULL;
  PyObject *bound;
  if (stream_to_bind(st, own_stream(self, stream), &bound) < 0) return NULL;
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
static PyObject *array_transpose(ArrayObject *self, PyObject *args, PyObject *kwargs) {
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
  if (array_alive(st, self, "cuLaunchKernel") < 0) return NULL;
  ArrayObject *a = array_alloc(st);
  if (!a || array_set_ndim(a, 2) < 0) {
    Py_XDECREF(a);
    return NULL;
  }
  a->kind = self->kind;
  a->itemsize = self->itemsize;
  memcpy(a->typestr, self->typestr, sizeof a->typestr);
  a->dtype = Py_XNewRef(self->dtype);
  a->shape[0] = self->shape[1];
  a->shape[1] = self->shape[0];
  dense_strides(a, 'C');
  a->nbytes = (size_t)(self->shape[0] * self->shape[1]) * (size_t)self->itemsize;
  if (array_allocate(st, a) < 0) {
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
static PyObject *array_bind(ArrayObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"stream", NULL};
  PyObject *stream_obj = NULL, *bound;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:bind", kwlist, &stream_obj)) return NULL;
  nbc__py_state *st = state((PyObject *)self);
  if (array_alive(st, self, "DeviceNDArray.bind") < 0) return NULL;
  if (stream_to_bind(st, stream_obj, &bound) < 0) return NULL;
  ArrayObject *a = array_view(st, self, self->data, self->ndim, self->shape, self->strides, bound);
  Py_XDECREF(bound);
  return (PyObject *)a;
}

/* numba's .stream: the stream the array is bound to, or 0. */
static PyObject *get_stream(ArrayObject *self, void *c) {
  (void)c;
  return self->stream ? Py_NewRef(self->stream) : PyLong_FromLong(0);
}

/* numba's alloc_size: the bytes from the array's lowest to its highest byte
 * (memory_size_from_info), 0 for an empty array. */
static PyObject *get_alloc_size(ArrayObject *self, void *c) {
  (void)c;
  int64_t bytes;
  if (nbc__py_extent(self->ndim, self->shape, self->strides, self->itemsize, &bytes) < 0) {
    PyErr_SetString(PyExc_OverflowError, "alloc_size: the array's extent does not fit in "
                                         "64 bits");
    return NULL;
  }
  return PyLong_FromLongLong(bytes);
}

/* numba's gpu_data: a MemoryPointer over the array's bytes, from its lowest to its highest
 * (alloc_size bytes), that keeps the array and so its memory alive. */
static PyObject *get_gpu_data(ArrayObject *self, void *c) {
  int64_t bytes = 0, lo = 0;
  PyObject *size = get_alloc_size(self, c);
  if (!size) return NULL;
  bytes = PyLong_AsLongLong(size);
  Py_DECREF(size);
  for (int d = 0; d < self->ndim && bytes > 0; d++)
    if (self->strides[d] < 0) lo += (self->shape[d] - 1) * self->strides[d];
  return nbc__py_memptr_view(state((PyObject *)self), (PyObject *)self, self->context,
                             self->cctx, self->lifetime,
                             bytes ? self->data + (nbc_devptr_t)lo : self->data, (size_t)bytes);
}

/* numba's device_ctypes_pointer: the data pointer as a ctypes.c_size_t, as numba-cuda's
 * MemoryPointer gives it (0 for an empty array). */
static PyObject *get_ctypes_pointer(ArrayObject *self, void *c) {
  (void)c;
  return nbc__py_ctypes_size_t(self->data);
}

PyObject *nbc__py_ctypes_size_t(unsigned long long value) {
  PyObject *ctypes = PyImport_ImportModule("ctypes");
  PyObject *r = ctypes ? PyObject_CallMethod(ctypes, "c_size_t", "K", value) : NULL;
  Py_XDECREF(ctypes);
  return r;
}

static PyObject *get_T(ArrayObject *self, void *c) {
  (void)c;
  return array_transpose(self, NULL, NULL);
}

/* numba's flags: a dict of the two contiguity flags. */
static PyObject *get_flags(ArrayObject *self, void *c) {
  (void)c;
  return Py_BuildValue("{s:O,s:O}", "C_CONTIGUOUS", is_contig(self, 'C') ? Py_True : Py_False,
                       "F_CONTIGUOUS", is_contig(self, 'F') ? Py_True : Py_False);
}

static PyObject *get_shape(ArrayObject *self, void *c) {
  (void)c;
  return nbc__py_int64_tuple(self->shape, self->ndim);
}
static PyObject *get_strides(ArrayObject *self, void *c) {
  (void)c;
  return nbc__py_int64_tuple(self->strides, self->ndim);
}
static PyObject *get_dtype(ArrayObject *self, void *c) {
  (void)c;
  return array_dtype_obj(self);
}
static PyObject *get_size(ArrayObject *self, void *c) {
  (void)c;
  int64_t n = 1;
  for (int d = 0; d < self->ndim; d++) n *= self->shape[d];
  return PyLong_FromLongLong(n);
}
static PyObject *get_ndim(ArrayObject *self, void *c) {
  (void)c;
  return PyLong_FromLong(self->ndim);
}
static PyObject *get_nbytes(ArrayObject *self, void *c) {
  (void)c;
  return PyLong_FromSize_t(self->nbytes);
}
static PyObject *get_ptr(ArrayObject *self, void *c) {
  (void)c;
  return PyLong_FromUnsignedLongLong(self->data);
}

/* A structured array's interface also lists its fields: descr, numpy's dtype.descr (with
 * the padding entries numpy gives), from which an importer rebuilds the dtype. 0 or -1. */
static int add_descr(ArrayObject *self, PyObject *cai) {
  PyObject *dtype = array_dtype_obj(self);
  PyObject *descr = dtype ? PyObject_GetAttrString(dtype, "descr") : NULL;
  int rc = descr ? PyDict_SetItemString(cai, "descr", descr) : -1;
  Py_XDECREF(dtype);
  Py_XDECREF(descr);
  return rc;
}

/* Version 3 of the interface: strides None when C-contiguous, data (pointer, read-only),
 * stream the handle of the array's stream as numba gives it (None when it has none, or when
 * that is the default stream, whose handle 0 the interface does not allow). */
static PyObject *get_cai(ArrayObject *self, void *c) {
  (void)c;
  PyObject *stream = Py_None;
  if (self->stream) {
    nbc_stream_t *s = NULL, *temp = NULL;
    if (nbc__py_stream_arg(state((PyObject *)self), self->stream, &s, &temp) < 0) return NULL;
    uintptr_t h = nbc_stream_handle(s);
    nbc_stream_destroy(temp);
    if (h && !(stream = PyLong_FromUnsignedLongLong((unsigned long long)h))) return NULL;
  }
  PyObject *shape = nbc__py_int64_tuple(self->shape, self->ndim);
  PyObject *strides = is_contig(self, 'C') ? Py_NewRef(Py_None)
                                           : nbc__py_int64_tuple(self->strides, self->ndim);
  PyObject *d = shape && strides
                    ? Py_BuildValue("{s:O,s:O,s:(KO),s:s,s:O,s:i}", "shape", shape, "strides",
                                    strides, "data", (unsigned long long)self->data, Py_False,
                                    "typestr", self->typestr, "stream", stream, "version", 3)
                    : NULL;
  Py_XDECREF(shape);
  Py_XDECREF(strides);
  if (stream != Py_None) Py_DECREF(stream);
  if (d && self->kind == 'V' && add_descr(self, d) < 0) Py_CLEAR(d);
  return d;
}

static Py_ssize_t array_len(ArrayObject *self) {
  if (self->ndim == 0) {
    PyErr_SetString(PyExc_TypeError, "len() of unsized object");
    return -1;
  }
  return (Py_ssize_t)self->shape[0];
}

static PyObject *array_repr(ArrayObject *self) {
  PyObject *shape = nbc__py_int64_tuple(self->shape, self->ndim);
  if (!shape) return NULL;
  PyObject *r = PyUnicode_FromFormat("<nbcuda.DeviceNDArray shape=%R typestr='%s' at %p>",
                                     shape, self->typestr, (void *)(uintptr_t)self->data);
  Py_DECREF(shape);
  return r;
}

/* numba's as_cuda_arg(): the device pointer as a kernel argument, device_ctypes_pointer. */
static PyObject *array_as_cuda_arg(PyObject *self, PyObject *unused) {
  (void)unused;
  return get_ctypes_pointer((ArrayObject *)self, NULL);
}

static PyMethodDef array_methods[] = {
    {"as_cuda_arg", array_as_cuda_arg, METH_NOARGS,
     "as_cuda_arg(): the device pointer as a ctypes.c_size_t (device_ctypes_pointer)."},
    {"copy_to_host", (PyCFunction)(void (*)(void))array_copy_to_host,
     METH_FASTCALL | METH_KEYWORDS,
     "copy_to_host(ary=None, stream=0): copies to a new numpy array (or into ary) and returns "
     "it; on stream (the array's own for 0), asynchronously into a given ary; with no stream "
     "at all, synchronously."},
    {"copy_to_device", (PyCFunction)(void (*)(void))array_copy_to_device,
     METH_VARARGS | METH_KEYWORDS,
     "copy_to_device(ary, stream=0): copies a host buffer or device array into this array, "
     "on stream (the array's own for 0)."},
    {"is_c_contiguous", (PyCFunction)array_is_c, METH_NOARGS, NULL},
    {"is_f_contiguous", (PyCFunction)array_is_f, METH_NOARGS, NULL},
    {"reshape", (PyCFunction)(void (*)(void))array_reshape, METH_VARARGS | METH_KEYWORDS,
     "reshape(*shape, order='C'): a view of a contiguous array with a new shape."},
    {"ravel", (PyCFunction)(void (*)(void))array_ravel, METH_VARARGS | METH_KEYWORDS,
     "ravel(order='C', stream=0): a 1-D view of a contiguous array."},
    {"view", (PyCFunction)array_view_dtype, METH_O,
     "view(dtype): the same memory as another dtype (a C-contiguous array for another size)."},
    {"squeeze", (PyCFunction)(void (*)(void))array_squeeze, METH_VARARGS | METH_KEYWORDS,
     "squeeze(axis=None, stream=0): a view without axes of extent 1."},
    {"split", (PyCFunction)(void (*)(void))array_split, METH_VARARGS | METH_KEYWORDS,
     "split(section, stream=0): views of `section` elements each of a 1-D unit-stride array."},
    {"transpose", (PyCFunction)(void (*)(void))array_transpose, METH_VARARGS | METH_KEYWORDS,
     "transpose(axes=None): a new array with the transposed values (2-D only)."},
    {"__array__", (PyCFunction)(void (*)(void))array_array, METH_VARARGS | METH_KEYWORDS,
     "numpy conversion: a copy to the host."},
    {"bind", (PyCFunction)(void (*)(void))array_bind, METH_VARARGS | METH_KEYWORDS,
     "bind(stream=0): the array over the same memory, bound to stream (its methods given "
     "stream=0 use it)."},
    {"getitem", (PyCFunction)(void (*)(void))array_getitem, METH_VARARGS | METH_KEYWORDS,
     "getitem(item, stream=0): self[item] on stream (the array's own for 0)."},
    {"setitem", (PyCFunction)(void (*)(void))array_setitem, METH_VARARGS | METH_KEYWORDS,
     "setitem(key, value, stream=0): self[key] = value on stream (the array's own for 0)."},
    {"get_ipc_handle", nbc__py_ipc_array_get_handle, METH_NOARGS,
     "An IpcArrayHandle another process can open to share this memory (Linux; ipc.c)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef array_getset[] = {
    {"shape", (getter)get_shape, NULL, NULL, NULL},
    {"strides", (getter)get_strides, NULL, "in bytes", NULL},
    {"dtype", (getter)get_dtype, NULL, "numpy dtype", NULL},
    {"size", (getter)get_size, NULL, "number of elements", NULL},
    {"ndim", (getter)get_ndim, NULL, NULL, NULL},
    {"nbytes", (getter)get_nbytes, NULL, NULL, NULL},
    {"device_pointer", (getter)get_ptr, NULL, "the device address as an int", NULL},
    {"__cuda_array_interface__", (getter)get_cai, NULL, "version 3", NULL},
    {"T", (getter)get_T, NULL, "transpose()", NULL},
    {"flags", (getter)get_flags, NULL, "C_CONTIGUOUS and F_CONTIGUOUS", NULL},
    {"stream", (getter)get_stream, NULL, "the stream the array is bound to, or 0", NULL},
    {"alloc_size", (getter)get_alloc_size, NULL, "bytes spanned by the array's elements", NULL},
    {"gpu_data", (getter)get_gpu_data, NULL,
     "a MemoryPointer over the array's bytes (keeps the array alive)", NULL},
    {"device_ctypes_pointer", (getter)get_ctypes_pointer, NULL,
     "the device address as a ctypes.c_size_t", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot array_slots[] = {
    {Py_tp_dealloc, array_dealloc},
    {Py_tp_traverse, array_traverse},
    {Py_tp_clear, array_clear},
    {Py_tp_repr, array_repr},
    {Py_mp_length, array_len},
    {Py_mp_subscript, array_subscript},
    {Py_mp_ass_subscript, array_ass_subscript},
    {Py_sq_length, array_len},
    {Py_tp_methods, array_methods},
    {Py_tp_getset, array_getset},
    {Py_tp_doc, (void *)"An array in device memory (see to_device, device_array)."},
    {0, NULL},
};

static PyType_Spec array_spec = {
    .name = "nbcuda.DeviceNDArray",
    .basicsize = sizeof(ArrayObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION |
             Py_TPFLAGS_IMMUTABLETYPE,
    .slots = array_slots,
};

/* ------------------------------------------------------------ factories --------------- */

/* A structured interface's dtype, from its typestr and descr (geometry_from_cai checked the
 * dict and its typestr); 0 or -1. */
static int cai_record(nbc__py_state *st, ArrayObject *a, PyObject *cai) {
  a->dtype = nbc__py_record_from_cai(st, PyDict_GetItemString(cai, "typestr"),
                                     PyDict_GetItemString(cai, "descr"), a->itemsize);
  return a->dtype ? 0 : -1;
}

static PyObject *wrap_cai(nbc__py_state *st, PyObject *obj, PyObject *cai) {
  ArrayObject *a = array_alloc(st);
  if (!a) return NULL;
  if (geometry_from_cai(a, cai) < 0 || (a->kind == 'V' && cai_record(st, a, cai) < 0)) {
    Py_DECREF(a);
    return NULL;
  }
  a->base = Py_NewRef(obj);
  return (PyObject *)a;
}

/* numba's from_cuda_array_interface(desc, owner=None, sync=True): a device array over the
 * memory desc describes (no copy), holding owner; a masked array is refused. A stream in desc
 * becomes the array's stream, as external_stream(handle) (numba: "No 'Numba default
 * stream'" without one); with sync, that stream is synchronized first (numba:
 * CUDA_ARRAY_INTERFACE_SYNC, default on). */
static PyObject *from_cai(PyObject *module, PyObject *desc, PyObject *owner, int sync) {
  nbc__py_state *st = nbc__py_module_state(module);
  if (!PyDict_Check(desc)) {
    PyErr_SetString(PyExc_TypeError, "__cuda_array_interface__ must be a dict");
    return NULL;
  }
  PyObject *stream = PyDict_GetItemString(desc, "stream"), *ext = NULL;
  if (stream && stream != Py_None) {
    unsigned long long h = PyLong_AsUnsignedLongLong(stream);
    if (h == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
    if (!(ext = PyObject_CallMethod(module, "external_stream", "K", h))) return NULL;
    nbc_stream_t *s = NULL, *temp = NULL;
    if (sync && nbc__py_stream_arg(st, ext, &s, &temp) == 0) {
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
    if (copy && copy_from(st, (ArrayObject *)to, obj, stream_obj) < 0) return NULL;
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
  if (host_buffer(st, obj, &view, 0, &holder, &kind, &itemsize, &record) < 0) return NULL;
  ArrayObject *a = array_alloc(st);
  if (a) a->dtype = record; /* a structured dtype; NULL for scalars, made on first use */
  else Py_XDECREF(record);
  int ok = a && stream_to_bind(st, stream_obj, &a->stream) == 0 &&
           geometry_from_buffer(a, &view, kind) == 0 && array_allocate(st, a) == 0;
  if (ok && copy && a->nbytes) {
    nbc_stream_t *s = NULL, *temp = NULL;
    ok = nbc__py_stream_arg(st, a->stream, &s, &temp) == 0;
    nbc_status_t rc = ok ? copy_htod(a->data, view.buf, a->nbytes, s) : NBC_OK;
    if (rc == NBC_OK && holder) rc = wait_copy(s); /* holder, made here, dies now */
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

/* A structured (or raw bytes) dtype argument: the numpy dtype itself in *precord, once
 * nbc__py_record_check accepts it. dt: numpy.dtype(dtype), or NULL when not made yet. */
static int record_arg(nbc__py_state *st, PyObject *dtype, PyObject *dt, PyObject **precord) {
  PyObject *np = nbc__py_numpy(st);
  PyObject *made = dt ? Py_NewRef(dt) : np ? PyObject_CallMethod(np, "dtype", "O", dtype) : NULL;
  if (!made || nbc__py_record_check(made) < 0) {
    Py_XDECREF(made);
    return -1;
  }
  *precord = made;
  return 0;
}

/* dtype argument -> kind, itemsize (nbcuda type objects, numpy dtypes, anything
 * numpy.dtype() takes), and for a structured dtype (kind 'V') the numpy dtype itself in
 * *precord (a new reference; NULL for scalar kinds): its fields are what kind and itemsize
 * cannot say. Types and dtype objects of scalars seen before (np.float32, np.dtype('f4'),
 * nbcuda.float32) are answered from an identity cache; others ask numpy each time,
 * structured ones always (a code cannot tell two of one size apart). */
static int dtype_arg(nbc__py_state *st, PyObject *dtype, char *pkind, int *pitemsize,
                     PyObject **precord) {
  *precord = NULL;
  if (st->dtype_keys)
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(st->dtype_keys); i++)
      if (PyList_GET_ITEM(st->dtype_keys, i) == dtype) {
        *pkind = (char)(st->dtype_key_codes[i] >> 8);
        *pitemsize = st->dtype_key_codes[i] & 0xff;
        return 0;
      }
  const char *ts = nbc__py_type_typestr(st, dtype);
  PyObject *np = NULL, *dt = NULL, *str = NULL;
  if (!ts) {
    np = nbc__py_numpy(st);
    dt = np ? PyObject_CallMethod(np, "dtype", "O", dtype) : NULL;
    str = dt ? PyObject_GetAttrString(dt, "str") : NULL;
    ts = str ? PyUnicode_AsUTF8(str) : NULL;
  }
  int rc = -1;
  if (ts) {
    *pkind = ts[1];
    *pitemsize = atoi(ts + 2);
    if (*pkind == 'V' && *pitemsize > 0) {
      rc = record_arg(st, dtype, dt, precord);
    } else {
      rc = (ts[0] != '>' && strchr("biufc", *pkind) && *pitemsize > 0) ? 0 : -1;
      if (rc < 0) PyErr_Format(PyExc_TypeError, "unsupported dtype %R", dtype);
    }
  }
  if (rc == 0 && !*precord && (PyType_Check(dtype) || Py_TYPE(dtype) == st->NbTypeType ||
                  (st->np_dtype && PyObject_TypeCheck(dtype, (PyTypeObject *)st->np_dtype))))
    cache_put(&st->dtype_keys, st->dtype_key_codes, dtype, dtype_code(*pkind, *pitemsize));
  Py_XDECREF(dt);
  Py_XDECREF(str);
  return rc;
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
  ArrayObject *a = array_alloc(st);
  if (!a) return NULL;
  if (dtype_arg(st, dtype, &a->kind, &a->itemsize, &a->dtype) < 0) goto fail;
  if (stream_to_bind(st, stream, &a->stream) < 0) goto fail;
  set_typestr(a->typestr, a->kind, a->itemsize);
  /* an int shape is one dimension: read as is, without a tuple */
  PyObject *seq = PyLong_Check(shape) ? NULL : PySequence_Tuple(shape);
  if (!seq && !PyLong_Check(shape)) goto fail;
  if (seq && PyTuple_GET_SIZE(seq) > NBC__PY_MAXDIM) {
    Py_DECREF(seq);
    PyErr_SetString(PyExc_ValueError, "too many dimensions");
    goto fail;
  }
  if (array_set_ndim(a, seq ? (int)PyTuple_GET_SIZE(seq) : 1) < 0) {
    Py_XDECREF(seq);
    goto fail;
  }
  int64_t n = 1;
  for (int d = 0; d < a->ndim && !PyErr_Occurred(); d++)
    a->shape[d] = PyLong_AsLongLong(seq ? PyTuple_GET_ITEM(seq, d) : shape);
  Py_XDECREF(seq);
  if (PyErr_Occurred() || checked_count(a, &n) < 0) goto fail;
  dense_strides(a, order);
  a->nbytes = (size_t)(n * a->itemsize);
  if (strides && strides != Py_None && strides_arg(a, strides) < 0) goto fail;
  if (array_allocate(st, a) < 0) goto fail;
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
  nbc__py_state *st = nbc__py_module_state(module);
  PyObject *dt = dtype ? Py_NewRef(dtype) : PyDict_GetItemString(st->types, "float64");
  if (!dtype) Py_XINCREF(dt);
  if (!dt) return NULL;
  if (order[0] != 'C' && order[0] != 'F') {
    Py_DECREF(dt);
    PyErr_SetString(PyExc_ValueError, "order must be 'C' or 'F'");
    return NULL;
  }
  PyObject *r = make_device_array(st, shape, dt, strides, order[0], stream_obj);
  Py_DECREF(dt);
  return r;
}

static PyObject *py_device_array_like(PyObject *module, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"ary", "stream", NULL};
  PyObject *ary, *stream_obj = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:device_array_like", kwlist, &ary,
                                   &stream_obj))
    return NULL;
  /* numba: device_array in ary's own layout (order, and strides when not contiguous) */
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

static PyMethodDef array_functions[] = {
    {"from_cuda_array_interface", (PyCFunction)(void (*)(void))py_from_cuda_array_interface,
     METH_VARARGS | METH_KEYWORDS,
     "from_cuda_array_interface(desc, owner=None, sync=True): a device array over that memory."},
    {"as_cuda_array", (PyCFunction)(void (*)(void))py_as_cuda_array,
     METH_VARARGS | METH_KEYWORDS,
     "as_cuda_array(obj, sync=True): a device array viewing obj's memory (no copy)."},
    {"is_cuda_array", py_is_cuda_array, METH_O,
     "Whether obj has __cuda_array_interface__."},
    {"to_device", (PyCFunction)(void (*)(void))py_to_device, METH_FASTCALL | METH_KEYWORDS,
     "to_device(obj, stream=0, copy=True, to=None): a device array with obj's contents."},
    {"device_array", (PyCFunction)(void (*)(void))py_device_array,
     METH_FASTCALL | METH_KEYWORDS,
     "device_array(shape, dtype=float64, strides=None, order='C', stream=0): uninitialised."},
    {"device_array_like", (PyCFunction)(void (*)(void))py_device_array_like,
     METH_VARARGS | METH_KEYWORDS, "An uninitialised device array like ary."},
    {NULL, NULL, 0, NULL},
};

int nbc__py_devicearray_init(PyObject *module, nbc__py_state *st) {
  st->DeviceArrayType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &array_spec, NULL);
  if (!st->DeviceArrayType) return -1;
  if (PyModule_AddObjectRef(module, "DeviceNDArray", (PyObject *)st->DeviceArrayType) < 0)
    return -1;
  return PyModule_AddFunctions(module, array_functions);
}

/* ------------------------------------------------------------ launch views ------------ */

int nbc__py_array_view_get(nbc__py_state *st, PyObject *obj, nbc__py_array_view *view) {
  view->host = NULL;
  if (Py_TYPE(obj) == st->DeviceArrayType) { /* the hot path: plain field reads */
    ArrayObject *a = (ArrayObject *)obj;
    if (array_alive(st, a, "cuLaunchKernel") < 0) return -1;
    view->data = a->data;
    view->kind = a->kind;
    view->itemsize = a->itemsize;
    view->ndim = a->ndim;
    memcpy(view->shape, a->shape, sizeof(int64_t) * (size_t)a->ndim);
    memcpy(view->strides, a->strides, sizeof(int64_t) * (size_t)a->ndim);
    return 0;
  }
  /* cuda.In/Out/InOut: the copies a host array gets; a device array is used in place */
  PyObject *value;
  int copy_in = 1, copy_out = 1;
  if (nbc__py_arg_hint(st, obj, &value, &copy_in, &copy_out)) {
    if (Py_TYPE(value) == st->DeviceArrayType) return nbc__py_array_view_get(st, value, view);
    obj = value;
  }
  ArrayObject tmp;
  int64_t dims[2 * NBC__PY_MAXDIM];
  tmp.shape = dims; /* room for any ndim: array_set_ndim allocates nothing */
  tmp.strides = dims + NBC__PY_MAXDIM;
  PyObject *cai;
  if (nbc__py_optional_attr(obj, st->str_cai, &cai)) {
    int rc = geometry_from_cai(&tmp, cai);
    Py_DECREF(cai);
    if (rc < 0) return -1;
  } else {
    PyObject *holder = NULL, *record = NULL;
    char kind;
    int itemsize;
    /* only a copy back needs a writable buffer (cuda.In takes read-only arrays) */
    if (host_buffer(st, obj, &view->buffer, copy_out, &holder, &kind, &itemsize, &record) < 0) {
      if (!PyErr_ExceptionMatches(PyExc_BufferError) &&
          !PyErr_ExceptionMatches(PyExc_TypeError))
        return -1;
      PyErr_Format(PyExc_TypeError, "cannot pass %s as an array to a kernel: it is not a "
                   "device array, has no __cuda_array_interface__ and no %sbuffer",
                   Py_TYPE(obj)->tp_name, copy_out ? "writable " : "");
      return -1;
    }
    Py_XDECREF(holder); /* numpy.asarray's array: the buffer holds it */
    Py_XDECREF(record); /* the view needs kind 'V' and the itemsize only */
    if (geometry_from_buffer(&tmp, &view->buffer, kind) < 0) {
      PyBuffer_Release(&view->buffer);
      return -1;
    }
    tmp.data = 0;
    view->nbytes = tmp.nbytes;
    if (tmp.nbytes) {
      nbc_status_t s = nbc_mem_alloc(tmp.nbytes, &tmp.data);
      if (s == NBC_OK && copy_in) s = copy_htod(tmp.data, view->buffer.buf, tmp.nbytes, NULL);
      if (s != NBC_OK) {
        if (tmp.data) nbc_mem_free(tmp.data);
        PyBuffer_Release(&view->buffer);
        return nbc__py_raise_int(st, s);
      }
    }
    view->host = Py_NewRef(obj);
    view->copy_back = copy_out;
  }
  view->data = tmp.data;
  view->kind = tmp.kind;
  view->itemsize = tmp.itemsize;
  view->ndim = tmp.ndim;
  memcpy(view->shape, tmp.shape, sizeof(int64_t) * (size_t)tmp.ndim);
  memcpy(view->strides, tmp.strides, sizeof(int64_t) * (size_t)tmp.ndim);
  return 0;
}

int nbc__py_array_view_finish(nbc__py_state *st, nbc__py_array_view *view, int copy_back) {
  if (!view->host) return 0;
  nbc_status_t s = NBC_OK;
  if (copy_back && view->copy_back && view->nbytes)
    s = copy_dtoh(view->buffer.buf, view->data, view->nbytes, NULL);
  if (view->data) nbc_mem_free(view->data);
  PyBuffer_Release(&view->buffer);
  Py_CLEAR(view->host);
  return s == NBC_OK ? 0 : nbc__py_raise_int(st, s);
}
