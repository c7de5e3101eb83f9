/* devicearray.c — the DeviceNDArray object: its device memory and numpy dtype, copies
 * between it and the host or another device array (copy_to_host, copy_to_device), its
 * attributes (shape, __cuda_array_interface__, gpu_data...), and the type. Indexing and the
 * other views are in devicearray_index.c; the functions that make arrays (to_device,
 * device_array...) and the view a kernel launch takes of an array argument are in
 * devicearray_new.c. devicearray.h holds the object's struct and the helpers the three share.
 *
 * A DeviceNDArray is device memory (nbc_mem_alloc, freed when the object dies) plus numpy
 * geometry: shape, strides in bytes, numpy's typestr ("<f4"). Host data comes in through
 * the buffer protocol, contiguous in C or F order only, as numba requires (devicearray_new.c
 * reads it, for copy_to_device as for to_device). The array exposes
 * __cuda_array_interface__ version 3 itself, and copy_to_host() returns numpy arrays;
 * copy_to_host of a strided view copies the enclosing extent and lets numpy pick the
 * elements, as numba does. numpy is imported the first time it is needed, not at import, to
 * keep `import nbcuda` fast.
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
 * are checked by size, as before.
 *
 * Dead arrays of the module's own type go to a short free list in the module state (up to
 * NBC__PY_FREE_ARRAYS, GIL builds) and are reused by the next array made: an array costs a
 * PyObject_Init instead of Python's allocator, its GC link and its free (about a tenth of
 * device_array's own work, callgrind).
 */
#include "devicearray.h"

#include <stdlib.h>
#include <string.h>

/* Sets the number of dimensions, with room for the shape and strides; -1 with MemoryError. */
int nbc__py_array_set_ndim(ArrayObject *a, int ndim) {
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

const char nbc__py_noncontig_msg[] =
    "Array contains non-contiguous buffer and cannot be transferred as a single memory "
    "region. Please ensure contiguous buffer with numpy .ascontiguousarray()";

/* ------------------------------------------------------------ dtype caches ------------ */

/* A dtype as a code, kind << 8 | itemsize (0 when it does not fit). */
static unsigned short dtype_code(char kind, int itemsize) {
  if (kind == 'M' || kind == 'm') return 0; /* dates: the kind and size do not say the unit */
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
 * is never cached: its arrays hold their own dtype and only raw bytes come here; nor are dates
 * (their typestr, "<M8[D]", says their unit). */
static PyObject *dtype_object(nbc__py_state *st, char kind, int itemsize, const char *typestr) {
  unsigned short code = kind == 'V' ? 0 : dtype_code(kind, itemsize);
  if (code && st->arrays.dtype_objs)
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(st->arrays.dtype_objs); i++)
      if (st->arrays.dtype_obj_codes[i] == code) return Py_NewRef(PyList_GET_ITEM(st->arrays.dtype_objs, i));
  if (!nbc__py_numpy(st)) return NULL;
  PyObject *dt = PyObject_CallFunction(st->np_dtype, "s", typestr);
  if (dt) cache_put(&st->arrays.dtype_objs, st->arrays.dtype_obj_codes, dt, code);
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
    while (*format >= '0' && *format <= '9') format++; /* "12s", "12w": S12, U12 */
    if (format[1] != '\0') return 0;
    return format[0] == 'x' ? 'V' : format[0] == 's' ? 'S' : format[0] == 'w' ? 'U' : 0;
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

/* "<f4", "|b1", "|V16", "|S12", "<U12" (characters, 4 bytes each): written by hand because
 * snprintf costs as much as the rest of to_device. */
void nbc__py_set_typestr(char *out, char kind, int itemsize) {
  char digits[12];
  int n = 0;
  unsigned v = itemsize > 0 ? (unsigned)itemsize / (kind == 'U' ? 4 : 1) : 0;
  do digits[n++] = (char)('0' + v % 10);
  while ((v /= 10) != 0);
  *out++ = itemsize == 1 || kind == 'V' || kind == 'S' ? '|' : '<';
  *out++ = kind;
  while (n > 0) *out++ = digits[--n];
  *out = 0;
}

int nbc__py_set_dtype_typestr(char *out, PyObject *dtype) {
  PyObject *str = PyObject_GetAttrString(dtype, "str");
  const char *ts = str && PyUnicode_Check(str) ? PyUnicode_AsUTF8(str) : NULL;
  int ok = ts && strlen(ts) < 16;
  if (ok) strcpy(out, ts);
  else if (ts) PyErr_Format(PyExc_TypeError, "unsupported dtype %R", dtype);
  Py_XDECREF(str);
  return ok ? 0 : -1;
}

/* A structured (or raw bytes) dtype argument: the numpy dtype itself in *precord, once
 * nbc__py_record_check accepts it. dt: numpy.dtype(dtype), or NULL when not made yet. */
static int record_arg(nbc__py_state *st, PyObject *dtype, PyObject *dt, PyObject **precord) {
  PyObject *np = nbc__py_numpy(st);
  PyObject *made = dt ? Py_NewRef(dt) : np ? PyObject_CallMethod(np, "dtype", "(O)", dtype) : NULL;
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
int nbc__py_dtype_arg(nbc__py_state *st, PyObject *dtype, char *pkind, int *pitemsize,
                      PyObject **precord) {
  *precord = NULL;
  if (st->arrays.dtype_keys)
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(st->arrays.dtype_keys); i++)
      if (PyList_GET_ITEM(st->arrays.dtype_keys, i) == dtype) {
        *pkind = (char)(st->arrays.dtype_key_codes[i] >> 8);
        *pitemsize = st->arrays.dtype_key_codes[i] & 0xff;
        return 0;
      }
  const char *ts = nbc__py_type_typestr(st, dtype);
  PyObject *np = NULL, *dt = NULL, *str = NULL;
  if (!ts) {
    np = nbc__py_numpy(st);
    dt = np ? PyObject_CallMethod(np, "dtype", "(O)", dtype) : NULL;
    str = dt ? PyObject_GetAttrString(dt, "str") : NULL;
    ts = str ? PyUnicode_AsUTF8(str) : NULL;
  }
  int rc = -1;
  if (ts) {
    *pkind = ts[1];
    *pitemsize = atoi(ts + 2) * (ts[1] == 'U' ? 4 : 1); /* "<U12": characters of 4 bytes */
    if (*pkind == 'V' && *pitemsize > 0) {
      rc = record_arg(st, dtype, dt, precord);
    } else if ((*pkind == 'M' || *pkind == 'm') && ts[0] != '>' && nbc__py_datetime_name(ts)) {
      /* dates keep their dtype too: their unit is in it */
      PyObject *made = dt                  ? Py_NewRef(dt)
                       : nbc__py_numpy(st) ? PyObject_CallFunction(st->np_dtype, "s", ts)
                                           : NULL;
      *precord = made;
      rc = made ? 0 : -1;
    } else {
      rc = (ts[0] != '>' && strchr("biufcSU", *pkind) && *pitemsize > 0) ? 0 : -1;
      if (rc < 0) PyErr_Format(PyExc_TypeError, "unsupported dtype %R", dtype);
    }
  }
  if (rc == 0 && !*precord && (PyType_Check(dtype) || Py_TYPE(dtype) == st->NbTypeType ||
                  (st->np_dtype && PyObject_TypeCheck(dtype, (PyTypeObject *)st->np_dtype))))
    cache_put(&st->arrays.dtype_keys, st->arrays.dtype_key_codes, dtype, dtype_code(*pkind, *pitemsize));
  Py_XDECREF(dt);
  Py_XDECREF(str);
  return rc;
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
#ifndef Py_GIL_DISABLED /* the list is guarded by the GIL */
  nbc__py_state *st = state((PyObject *)self);
  /* kept for reuse while the module is alive (module_clear drains the list) */
  if (tp == st->DeviceArrayType && st->arrays.nfree < NBC__PY_FREE_ARRAYS)
    st->arrays.free[st->arrays.nfree++] = (PyObject *)self;
  else
#endif
    tp->tp_free(self);
  Py_DECREF(tp);
}

void nbc__py_array_freelist_clear(nbc__py_state *st) {
  while (st->arrays.nfree > 0) PyObject_GC_Del(st->arrays.free[--st->arrays.nfree]);
}

ArrayObject *nbc__py_array_alloc(nbc__py_state *st) {
  ArrayObject *a;
  if (st->arrays.nfree > 0) {
    a = (ArrayObject *)st->arrays.free[--st->arrays.nfree];
    PyObject_Init((PyObject *)a, st->DeviceArrayType);
  } else {
    a = PyObject_GC_New(ArrayObject, st->DeviceArrayType);
    if (!a) return NULL;
  }
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
  a->type_code = 0;
  PyObject_GC_Track(a);
  return a;
}

/* One check of the current context (nbc_mem_alloc_current) serves both the Context kept
 * with the memory and the allocation. */
PyObject *nbc__py_device_alloc(nbc__py_state *st, size_t nbytes, nbc_devptr_t *pptr,
                               nbc_context_t **pctx, PyObject **powner) {
  *powner = NULL;
  int plugin = st->emm.manager ? 1 : nbc__py_emm_active(st);
  if (plugin < 0) return NULL;
  /* with a plugin, only the context here (nbytes 0 allocates nothing); the plugin after.
   * numba uses a NULL pointer for empty arrays. */
  nbc_devptr_t data = 0;
  nbc_context_t *ctx = NULL;
  nbc_status_t s = nbc_mem_alloc_current(plugin ? 0 : nbytes, &data, &ctx);
  if (s != NBC_OK) return nbc__py_raise(st, s);
  PyObject *context = nbc__py_context_object(st, ctx);
  if (!context) {
    if (data) nbc_mem_free(data);
    return NULL;
  }
  if (plugin && nbytes) {
    *powner = nbc__py_emm_memalloc(st, context, nbytes, &data);
    if (!*powner) Py_CLEAR(context);
  }
  *pptr = data;
  *pctx = ctx;
  return context;
}

/* Allocates device memory for the array's geometry in the current context; memory of an EMM
 * plugin is kept by its pointer object, the array's base. */
int nbc__py_array_allocate(nbc__py_state *st, ArrayObject *a) {
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
int nbc__py_array_alive(nbc__py_state *st, const ArrayObject *a, const char *call) {
  nbc_status_t s = nbc_context_check_lifetime(a->cctx, a->lifetime, call, "array");
  return s == NBC_OK ? 0 : nbc__py_raise_int(st, s);
}

int nbc__py_is_contig(const ArrayObject *a, char order) {
  return nbc_array_is_contiguous(order, a->ndim, a->shape, a->strides, a->itemsize);
}

/* The array's element count from its shape: ValueError for a negative extent, or for
 * bytes that do not fit in 63 bits (which would wrap to a small allocation under a huge
 * shape), as numpy says them; like numpy, the nonzero extents of an empty array count too,
 * so that dense strides cannot overflow. */
int nbc__py_checked_count(const ArrayObject *a, int64_t *pcount) {
  int64_t n = 1;
  int zero = 0;
  for (int d = 0; d < a->ndim; d++) {
    if (a->shape[d] < 0) {
      PyErr_SetString(PyExc_ValueError, "negative dimensions are not allowed");
      return -1;
    }
    zero |= a->shape[d] == 0;
  }
  int64_t bytes = a->itemsize; /* n * itemsize, checked: no division on this path */
  for (int d = 0; d < a->ndim; d++) {
    if (a->shape[d] == 0) continue;
    if (__builtin_mul_overflow(bytes, a->shape[d], &bytes)) return nbc__py_too_big();
    n *= a->shape[d];
  }
  *pcount = zero ? 0 : n;
  return 0;
}

void nbc__py_array_dense_strides(ArrayObject *a, char order) {
  int64_t s = a->itemsize;
  for (int k = 0; k < a->ndim; k++) {
    int d = order == 'F' ? k : a->ndim - 1 - k;
    a->strides[d] = s;
    s *= a->shape[d];
  }
}

/* Runs a copy with the GIL released when it is large enough to be worth it. */
nbc_status_t nbc__py_copy_htod(nbc_devptr_t dst, const void *src, size_t n, nbc_stream_t *s) {
  nbc_status_t rc;
  if (n < 65536) return s ? nbc_memcpy_htod_async(dst, src, n, s) : nbc_memcpy_htod(dst, src, n);
  Py_BEGIN_ALLOW_THREADS rc =
      s ? nbc_memcpy_htod_async(dst, src, n, s) : nbc_memcpy_htod(dst, src, n);
  Py_END_ALLOW_THREADS return rc;
}

nbc_status_t nbc__py_copy_dtoh(void *dst, nbc_devptr_t src, size_t n, nbc_stream_t *s) {
  nbc_status_t rc;
  if (n < 65536) return s ? nbc_memcpy_dtoh_async(dst, src, n, s) : nbc_memcpy_dtoh(dst, src, n);
  Py_BEGIN_ALLOW_THREADS rc =
      s ? nbc_memcpy_dtoh_async(dst, src, n, s) : nbc_memcpy_dtoh(dst, src, n);
  Py_END_ALLOW_THREADS return rc;
}

nbc_status_t nbc__py_copy_dtoh_into(nbc__py_state *st, PyObject *host, void *dst,
                                    nbc_devptr_t src, size_t n, nbc_stream_t *s) {
  nbc_status_t rc;
  if (s || (host && host != Py_None && !nbc__py_numpy_pageable(st, host)))
    return nbc__py_copy_dtoh(dst, src, n, s);
  if (n < 65536) return nbc_memcpy_dtoh_pageable(dst, src, n);
  Py_BEGIN_ALLOW_THREADS rc = nbc_memcpy_dtoh_pageable(dst, src, n);
  Py_END_ALLOW_THREADS return rc;
}

/* Device to device: a peer copy between arrays of two contexts (devices), else within one. */
nbc_status_t nbc__py_copy_dtod(const ArrayObject *dst, const ArrayObject *src, size_t n) {
  nbc_status_t rc;
  int peer = dst->cctx && src->cctx && dst->cctx != src->cctx;
  if (n < 65536)
    return peer ? nbc_memcpy_peer(dst->data, dst->cctx, src->data, src->cctx, n)
                : nbc_memcpy_dtod(dst->data, src->data, n);
  Py_BEGIN_ALLOW_THREADS rc = peer ? nbc_memcpy_peer(dst->data, dst->cctx, src->data, src->cctx, n)
                                   : nbc_memcpy_dtod(dst->data, src->data, n);
  Py_END_ALLOW_THREADS return rc;
}

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
PyObject *nbc__py_own_stream(const ArrayObject *self, PyObject *arg) {
  return no_stream(arg) ? self->stream : arg;
}

/* The stream an array is to be bound to (to_device(stream=...), bind(), a view's): a new
 * reference, or NULL for none. It is checked as every stream argument is (TypeError for a
 * non-stream) so that a bad one fails here, not at a later copy; an int names the default
 * stream in nbcuda and binds nothing. */
int nbc__py_stream_to_bind(nbc__py_state *st, PyObject *obj, PyObject **pout) {
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
nbc_status_t nbc__py_wait_copy(nbc_stream_t *s) {
  nbc_status_t rc;
  if (!s) return NBC_OK;
  Py_BEGIN_ALLOW_THREADS rc = nbc_stream_synchronize(s);
  Py_END_ALLOW_THREADS return rc;
}

PyObject *nbc__py_array_dtype_obj(ArrayObject *self) {
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
  return nbc__py_array_dtype_obj((ArrayObject *)obj);
}

/* numba's dtype check before a copy (check_array_compatibility: "incompatible dtype: a vs.
 * b"), which nbcuda makes where a structured dtype takes part; copies between scalar dtypes
 * are checked by size alone, as before. other: the other side's numpy dtype (borrowed).
 * 0, or -1 with TypeError. */
int nbc__py_check_dtype(ArrayObject *self, PyObject *other) {
  PyObject *mine = nbc__py_array_dtype_obj(self);
  int same = mine ? PyObject_RichCompareBool(mine, other, Py_EQ) : -1;
  if (same == 0) PyErr_Format(PyExc_TypeError, "incompatible dtype: %S vs. %S", mine, other);
  Py_XDECREF(mine);
  return same == 1 ? 0 : -1;
}

/* nbc__py_check_dtype against a host object, when self's or its dtype is structured or the
 * host's holds objects, which bytes from the device would make into references to nothing (for
 * a numpy array, a read of its descriptor says; other objects count as scalar unless self is
 * structured). */
static int check_host_dtype(nbc__py_state *st, ArrayObject *self, PyObject *host) {
  char kind = nbc__py_numpy_kind(st, host);
  if (self->kind != 'V' && kind != 'V' && kind != 'O') return 0;
  PyObject *dt = nbc__py_host_dtype(st, host);
  int rc = dt ? nbc__py_check_dtype(self, dt) : -1;
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
  PyObject *dtype = nbc__py_array_dtype_obj(self); /* imports numpy */
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
    PyObject *dtype = nbc__py_array_dtype_obj(self),
             *shape = nbc__py_int64_tuple(self->shape, self->ndim);
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
    rc = nbc__py_copy_dtoh_into(st, ary, view.buf, self->data, extent, s);
    if (rc == NBC_OK && ary == Py_None) rc = nbc__py_wait_copy(s);
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

PyObject *nbc__py_array_copy_to_host(ArrayObject *self, PyObject *const *args,
                                     Py_ssize_t nargsf, PyObject *kwnames) {
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
  if (nbc__py_array_alive(st, self, "cuMemcpyDtoH") < 0) return NULL;
  stream_obj = nbc__py_own_stream(self, stream_obj);
  int c = nbc__py_is_contig(self, 'C'), f = !c && nbc__py_is_contig(self, 'F');
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
    rc = nbc__py_copy_dtoh_into(st, ary, view.buf, self->data, self->nbytes, s);
    if (rc == NBC_OK && ary == Py_None) rc = nbc__py_wait_copy(s);
  }
  nbc_stream_destroy(temp);
  PyBuffer_Release(&view);
  if (rc != NBC_OK) {
    Py_DECREF(out);
    return PyErr_Occurred() ? NULL : nbc__py_raise(st, rc);
  }
  return out;
}

int nbc__py_array_copy_from(nbc__py_state *st, ArrayObject *self, PyObject *ary,
                            PyObject *stream_obj) {
  int device = Py_TYPE(ary) == st->DeviceArrayType;
  if (nbc__py_array_alive(st, self, device ? "cuMemcpyDtoD" : "cuMemcpyHtoD") < 0 ||
      (device && nbc__py_array_alive(st, (ArrayObject *)ary, "cuMemcpyDtoD") < 0))
    return -1;
  /* numba's sentry_contiguous: one copy of one region, never a scatter */
  if ((!nbc__py_is_contig(self, 'C') && !nbc__py_is_contig(self, 'F')) ||
      (device && !nbc__py_is_contig((ArrayObject *)ary, 'C') &&
       !nbc__py_is_contig((ArrayObject *)ary, 'F'))) {
    PyErr_SetString(PyExc_ValueError, nbc__py_noncontig_msg);
    return -1;
  }
  nbc_stream_t *s = NULL, *temp = NULL;
  if (nbc__py_stream_arg(st, nbc__py_own_stream(self, stream_obj), &s, &temp) < 0) return -1;
  nbc_status_t rc = NBC_OK;
  if (device) {
    ArrayObject *src = (ArrayObject *)ary;
    PyObject *dt = self->kind == 'V' || src->kind == 'V' ? nbc__py_array_dtype_obj(src) : NULL;
    int bad = dt ? nbc__py_check_dtype(self, dt) : PyErr_Occurred() != NULL;
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
    if (self->nbytes) rc = nbc__py_copy_dtod(self, src, self->nbytes);
  } else {
    Py_buffer view;
    PyObject *holder = NULL, *record = NULL;
    char kind;
    int itemsize;
    if (nbc__py_host_buffer(st, ary, &view, 0, &holder, &kind, &itemsize, &record) < 0) {
      nbc_stream_destroy(temp);
      return -1;
    }
    int bad = 0;
    if (self->kind == 'V' || kind == 'V') { /* numba compares np.array(ary)'s dtype */
      PyObject *dt = record ? Py_NewRef(record) : nbc__py_host_dtype(st, holder ? holder : ary);
      bad = dt ? nbc__py_check_dtype(self, dt) : -1;
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
    if (self->nbytes) rc = nbc__py_copy_htod(self->data, view.buf, self->nbytes, s);
    if (rc == NBC_OK && holder) rc = nbc__py_wait_copy(s); /* holder, made here, dies now */
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
  if (nbc__py_array_copy_from(state((PyObject *)self), self, ary, stream_obj) < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *array_array(ArrayObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"dtype", "copy", NULL};
  PyObject *dtype = Py_None, *copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:__array__", kwlist, &dtype, &copy))
    return NULL;
  PyObject *host = nbc__py_array_copy_to_host(self, NULL, 0, NULL);
  if (!host || dtype == Py_None) return host;
  PyObject *r = PyObject_CallMethod(host, "astype", "(O)", dtype);
  Py_DECREF(host);
  return r;
}

static PyObject *array_is_c(ArrayObject *self, PyObject *u) {
  (void)u;
  return PyBool_FromLong(nbc__py_is_contig(self, 'C'));
}
static PyObject *array_is_f(ArrayObject *self, PyObject *u) {
  (void)u;
  return PyBool_FromLong(nbc__py_is_contig(self, 'F'));
}

/* ------------------------------------------------------------ attributes -------------- */

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
  return nbc__py_array_transpose(self, NULL, NULL);
}

/* numba's flags: a dict of the two contiguity flags. */
static PyObject *get_flags(ArrayObject *self, void *c) {
  (void)c;
  return Py_BuildValue("{s:O,s:O}",
                       "C_CONTIGUOUS", nbc__py_is_contig(self, 'C') ? Py_True : Py_False,
                       "F_CONTIGUOUS", nbc__py_is_contig(self, 'F') ? Py_True : Py_False);
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
  return nbc__py_array_dtype_obj(self);
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

int nbc__py_cai_set_descr(PyObject *cai, PyObject *dtype) {
  PyObject *kind = PyObject_GetAttrString(dtype, "kind");
  if (!kind) return -1;
  int rc = 0;
  if (PyUnicode_Check(kind) && PyUnicode_CompareWithASCIIString(kind, "V") == 0) {
    PyObject *descr = PyObject_GetAttrString(dtype, "descr");
    rc = descr ? PyDict_SetItemString(cai, "descr", descr) : -1;
    Py_XDECREF(descr);
  }
  Py_DECREF(kind);
  return rc;
}

static int add_descr(ArrayObject *self, PyObject *cai) {
  PyObject *dtype = nbc__py_array_dtype_obj(self);
  int rc = dtype ? nbc__py_cai_set_descr(cai, dtype) : -1;
  Py_XDECREF(dtype);
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
  /* made item by item under the interned keys (a dict other libraries read per launch) */
  nbc__py_state *st = state((PyObject *)self);
  PyObject *keys[] = {st->str_shape, st->str_strides, st->str_data, st->str_typestr,
                      st->str_stream, st->str_version};
  PyObject *ptr = PyLong_FromUnsignedLongLong((unsigned long long)self->data);
  PyObject *values[] = {
      nbc__py_int64_tuple(self->shape, self->ndim),
      nbc__py_is_contig(self, 'C') ? Py_NewRef(Py_None)
                                   : nbc__py_int64_tuple(self->strides, self->ndim),
      ptr ? PyTuple_Pack(2, ptr, Py_False) : NULL,
      PyUnicode_FromString(self->typestr),
      stream == Py_None ? Py_NewRef(Py_None) : stream,
      PyLong_FromLong(3)};
  Py_XDECREF(ptr);
  enum { NITEMS = sizeof keys / sizeof keys[0] };
  PyObject *d = PyDict_New();
  for (int i = 0; i < NITEMS; i++)
    if (d && (!values[i] || PyDict_SetItem(d, keys[i], values[i]) < 0)) Py_CLEAR(d);
  for (int i = 0; i < NITEMS; i++) Py_XDECREF(values[i]);
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

/* self[i], so that `for x in d` and zip(d, ...) iterate as over numba's DeviceNDArray (whose
 * __getitem__ Python iterates with): scalars copied to the host for 1-D, rows as device
 * arrays for more dimensions, IndexError past the end. */
static PyObject *array_item(ArrayObject *self, Py_ssize_t i) {
  if (self->ndim == 0) {
    PyErr_SetString(PyExc_TypeError, "iteration over a 0-d array");
    return NULL;
  }
  if (i < 0 || (uint64_t)i >= (uint64_t)self->shape[0]) {
    PyErr_SetString(PyExc_IndexError, "index out of range");
    return NULL;
  }
  PyObject *index = PyLong_FromSsize_t(i);
  PyObject *r = index ? nbc__py_array_subscript(self, index) : NULL;
  Py_XDECREF(index);
  return r;
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

/* Pickling (multiprocessing, Dask's pickle family): the elements travel as a numpy array
 * copied to host memory, contiguous (a strided view is compacted in C order first), and the
 * receiving process rebuilds the array with to_device() in its current context, on its
 * current device. numpy's own pickling of that host array sends its buffer out of band under
 * protocol 5 when the pickler is given a buffer_callback, so the host copy is made once.
 * The stream an array is bound to stays behind: streams belong to one process. */
static PyObject *array_reduce_ex(ArrayObject *self, PyObject *protocol) {
  (void)protocol;
  nbc__py_state *st = state((PyObject *)self);
  PyObject *host = nbc__py_array_copy_to_host(self, NULL, 0, NULL);
  if (host && !nbc__py_is_contig(self, 'C') && !nbc__py_is_contig(self, 'F')) {
    PyObject *np = nbc__py_numpy(st);
    Py_SETREF(host, np ? PyObject_CallMethod(np, "ascontiguousarray", "(O)", host) : NULL);
  }
  PyObject *module = host ? PyImport_Import(st->module_name) : NULL;
  PyObject *rebuild = module ? PyObject_GetAttrString(module, "to_device") : NULL;
  Py_XDECREF(module);
  if (!rebuild) {
    Py_XDECREF(host);
    return NULL;
  }
  return Py_BuildValue("(N(N))", rebuild, host);
}

/* copy.copy(d): numba's shallow copy, a new array object on the same memory bound to the
 * same stream (what the pickling above would otherwise make a copy of the data for). */
static PyObject *array_copy(ArrayObject *self, PyObject *unused) {
  (void)unused;
  PyObject *args = Py_BuildValue("(O)", self->stream ? self->stream : Py_None);
  PyObject *r = args ? nbc__py_array_bind(self, args, NULL) : NULL;
  Py_XDECREF(args);
  return r;
}

static PyMethodDef array_methods[] = {
    {"__reduce_ex__", (PyCFunction)array_reduce_ex, METH_O,
     "__reduce_ex__($self, protocol, /)\n--\n\n"
     "Pickling: a contiguous host copy, rebuilt by to_device() where it is unpickled."},
    {"__copy__", (PyCFunction)array_copy, METH_NOARGS,
     "__copy__($self, /)\n--\n\n"
     "copy.copy(): a new array object on the same memory, bound to the same stream."},
    {"as_cuda_arg", array_as_cuda_arg, METH_NOARGS,
     "as_cuda_arg($self, /)\n--\n\n"
     "The device pointer as a ctypes.c_size_t (device_ctypes_pointer)."},
    {"copy_to_host", (PyCFunction)(void (*)(void))nbc__py_array_copy_to_host,
     METH_FASTCALL | METH_KEYWORDS,
     "copy_to_host($self, ary=None, stream=0)\n--\n\n"
     "Copies to a new numpy array (or into ary) and returns it; on stream (the array's own "
     "for 0), asynchronously into a given ary; with no stream at all, synchronously."},
    {"copy_to_device", (PyCFunction)(void (*)(void))array_copy_to_device,
     METH_VARARGS | METH_KEYWORDS,
     "copy_to_device($self, ary, stream=0)\n--\n\n"
     "Copies a host buffer or device array into this array, on stream (the array's own for "
     "0)."},
    {"is_c_contiguous", (PyCFunction)array_is_c, METH_NOARGS,
     "is_c_contiguous($self, /)\n--\n\n"
     "Whether the array is C-contiguous (row-major, no gaps)."},
    {"is_f_contiguous", (PyCFunction)array_is_f, METH_NOARGS,
     "is_f_contiguous($self, /)\n--\n\n"
     "Whether the array is Fortran-contiguous (column-major, no gaps)."},
    {"reshape", (PyCFunction)(void (*)(void))nbc__py_array_reshape,
     METH_VARARGS | METH_KEYWORDS,
     "reshape($self, *newshape, order='C')\n--\n\n"
     "A view of a contiguous array with a new shape."},
    {"ravel", (PyCFunction)(void (*)(void))nbc__py_array_ravel, METH_VARARGS | METH_KEYWORDS,
     "ravel($self, order='C', stream=0)\n--\n\n"
     "A 1-D view of a contiguous array."},
    {"view", (PyCFunction)nbc__py_array_view_dtype, METH_O,
     "view($self, dtype, /)\n--\n\n"
     "The same memory as another dtype (a C-contiguous array for another size)."},
    {"squeeze", (PyCFunction)(void (*)(void))nbc__py_array_squeeze,
     METH_VARARGS | METH_KEYWORDS,
     "squeeze($self, axis=None, stream=0)\n--\n\n"
     "A view without axes of extent 1."},
    {"split", (PyCFunction)(void (*)(void))nbc__py_array_split, METH_VARARGS | METH_KEYWORDS,
     "split($self, section, stream=0)\n--\n\n"
     "Views of `section` elements each of a 1-D unit-stride array."},
    {"transpose", (PyCFunction)(void (*)(void))nbc__py_array_transpose,
     METH_VARARGS | METH_KEYWORDS,
     "transpose($self, axes=None)\n--\n\n"
     "A new array with the transposed values (2-D only)."},
    {"__array__", (PyCFunction)(void (*)(void))array_array, METH_VARARGS | METH_KEYWORDS,
     "__array__($self, dtype=None, copy=None)\n--\n\n"
     "numpy conversion: a copy to the host."},
    {"bind", (PyCFunction)(void (*)(void))nbc__py_array_bind, METH_VARARGS | METH_KEYWORDS,
     "bind($self, stream=0)\n--\n\n"
     "The array over the same memory, bound to stream (its methods given stream=0 use it)."},
    {"getitem", (PyCFunction)(void (*)(void))nbc__py_array_getitem,
     METH_VARARGS | METH_KEYWORDS,
     "getitem($self, item, stream=0)\n--\n\n"
     "self[item] on stream (the array's own for 0)."},
    {"setitem", (PyCFunction)(void (*)(void))nbc__py_array_setitem,
     METH_VARARGS | METH_KEYWORDS,
     "setitem($self, key, value, stream=0)\n--\n\n"
     "self[key] = value on stream (the array's own for 0)."},
    {"__dlpack__", (PyCFunction)(void (*)(void))nbc__py_array_dlpack,
     METH_VARARGS | METH_KEYWORDS,
     "__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
     "A DLPack capsule of the array's memory, shared (docs/guide/interop.md)."},
    {"__dlpack_device__", (PyCFunction)nbc__py_array_dlpack_device, METH_NOARGS,
     "__dlpack_device__($self, /)\n--\n\n"
     "(2, device id): kDLCUDA and the array's device."},
    {"get_ipc_handle", nbc__py_ipc_array_get_handle, METH_NOARGS,
     "get_ipc_handle($self, /)\n--\n\n"
     "An IpcArrayHandle another process can open to share this memory (Linux; ipc.c)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef array_getset[] = {
    {"shape", (getter)get_shape, NULL, "The extent of each dimension (a tuple).", NULL},
    {"strides", (getter)get_strides, NULL, "in bytes", NULL},
    {"dtype", (getter)get_dtype, NULL, "numpy dtype", NULL},
    {"size", (getter)get_size, NULL, "number of elements", NULL},
    {"ndim", (getter)get_ndim, NULL, "The number of dimensions.", NULL},
    {"nbytes", (getter)get_nbytes, NULL, "The size of the data in bytes (size * itemsize).", NULL},
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
    {Py_mp_subscript, nbc__py_array_subscript},
    {Py_mp_ass_subscript, nbc__py_array_ass_subscript},
    {Py_sq_length, array_len},
    {Py_sq_item, array_item},
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

int nbc__py_devicearray_init(PyObject *module, nbc__py_state *st) {
  st->DeviceArrayType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &array_spec, NULL);
  if (!st->DeviceArrayType) return -1;
  if (PyModule_AddObjectRef(module, "DeviceNDArray", (PyObject *)st->DeviceArrayType) < 0)
    return -1;
  return PyModule_AddFunctions(module, nbc__py_array_functions);
}
