/* devicearray_dlpack.c — DLPack both ways: a device array's __dlpack__ and __dlpack_device__
 * (the producer), from_dlpack(obj) and the kernel argument view of an object with __dlpack__
 * (the consumer). The structs are dlpack.h's; the object is devicearray.c's.
 *
 * Producing. __dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None) returns
 * a capsule "dltensor_versioned" (DLPack 1.0) when max_version's major is 1 or more, else the
 * legacy "dltensor". The tensor is one malloc'd block: the managed struct, then its shape and
 * strides (in elements, as DLPack counts them); its manager_ctx holds a reference to the
 * array, so the memory stays while the consumer holds the tensor, and its deleter drops that
 * reference (taking the GIL: a consumer may call it from any thread). A capsule never
 * consumed calls the deleter from its destructor; one renamed "used_..." by its consumer does
 * nothing. The stream protocol for CUDA: the consumer names its stream (None: the legacy
 * default stream, 1 legacy, 2 per-thread, -1 none, 0 refused as the spec says); that stream
 * waits, on the device, for the work queued so far on the stream the array is bound to (the
 * default stream when none). Strides that are not whole elements are a BufferError, and so
 * are copy=True (nbcuda makes no copies here) and a dl_device other than the array's.
 *
 * Consuming. An object's __dlpack_device__ must be kDLCUDA on the current context's device,
 * kDLCUDAManaged or kDLCUDAHost (pinned host memory, used through its device address);
 * kDLCPU is a BufferError naming nbcuda.to_device, which copies host data. __dlpack__ is
 * called with the consumer's stream and max_version=(1, 0) (again without max_version when a
 * producer older than DLPack 1.0 refuses the keyword); the capsule is renamed "used_..." and
 * kept in an owner capsule of nbcuda's, whose destructor calls the tensor's deleter. Read-only
 * tensors (the DLPack 1.x flag) are refused: nbcuda's arrays and kernel arguments are
 * writable. Element types: int, uint, float, complex, bool (8 bits), bfloat16 (as
 * ml_dtypes.bfloat16, when ml_dtypes is installed); one lane.
 *
 * Kernel arguments follow numba-cuda 0.30 (_to_strided_memory_view, typeof): an object with
 * __dlpack__ is viewed through DLPack before __cuda_array_interface__ is looked at; nbcuda
 * takes that path only when its __dlpack_device__ says CUDA memory (an exact numpy array is
 * never asked), so host objects still go the host-buffer way. Typing asks with stream -1;
 * the launch asks with the launch's stream.
 */
#include "devicearray.h"
#include "dlpack.h"

#include <stdlib.h>
#include <string.h>

static const char capsule_versioned[] = "dltensor_versioned";
static const char capsule_legacy[] = "dltensor";
static const char capsule_owner[] = "nbcuda.dlpack_owner";

/* ------------------------------------------------------------ element types ------------ */

/* The DLPack type of an array's elements; -1 with BufferError for one DLPack has no code for
 * (records, dates, strings). bfloat16 arrays are kind 'V' of 2 bytes whose dtype says so. */
static int dtype_to_dl(ArrayObject *a, nbc_dl_dtype *out) {
  out->bits = (uint8_t)(a->itemsize * 8);
  out->lanes = 1;
  switch (a->kind) {
  case 'i': out->code = NBC_DL_INT; return 0;
  case 'u': out->code = NBC_DL_UINT; return 0;
  case 'f': out->code = NBC_DL_FLOAT; return 0;
  case 'c': out->code = NBC_DL_COMPLEX; return 0;
  case 'b': out->code = NBC_DL_BOOL; return 0;
  default: break;
  }
  if (a->kind == 'V' && a->itemsize == 2 && a->dtype) {
    PyObject *name = PyObject_GetAttrString(a->dtype, "name");
    const char *s = name ? PyUnicode_AsUTF8(name) : NULL;
    int bf16 = s && strcmp(s, "bfloat16") == 0;
    Py_XDECREF(name);
    PyErr_Clear();
    if (bf16) {
      out->code = NBC_DL_BFLOAT;
      return 0;
    }
  }
  PyErr_Format(PyExc_BufferError, "DLPack has no type for arrays of %s", a->typestr);
  return -1;
}

/* A DLPack type as an array's kind and itemsize (and, for bfloat16, its numpy dtype in
 * a->dtype); -1 with BufferError for a type nbcuda's arrays cannot hold. */
static int dtype_from_dl(nbc__py_state *st, nbc_dl_dtype t, ArrayObject *a) {
  static const char kinds[] = {[NBC_DL_INT] = 'i',   [NBC_DL_UINT] = 'u',
                               [NBC_DL_FLOAT] = 'f', [NBC_DL_BFLOAT] = 'V',
                               [NBC_DL_COMPLEX] = 'c', [NBC_DL_BOOL] = 'b'};
  char kind = t.code < sizeof kinds ? kinds[t.code] : 0;
  int bytes = t.bits / 8, ok = kind && t.lanes == 1 && t.bits % 8 == 0;
  if (kind == 'i' || kind == 'u') ok = ok && (bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8);
  if (kind == 'f') ok = ok && (bytes == 2 || bytes == 4 || bytes == 8);
  if (kind == 'c') ok = ok && (bytes == 8 || bytes == 16);
  if (kind == 'b' || kind == 'V') ok = ok && bytes == (kind == 'b' ? 1 : 2);
  if (!ok) {
    PyErr_Format(PyExc_BufferError, "DLPack type (code %u, %u bits, %u lanes) has no nbcuda "
                 "array type", t.code, t.bits, t.lanes);
    return -1;
  }
  a->kind = kind;
  a->itemsize = bytes;
  nbc__py_set_typestr(a->typestr, kind, bytes);
  if (kind != 'V') return 0;
  PyObject *ml = PyImport_ImportModule("ml_dtypes"); /* bfloat16's numpy dtype */
  PyObject *np = ml ? nbc__py_numpy(st) : NULL;
  PyObject *bf = np ? PyObject_GetAttrString(ml, "bfloat16") : NULL;
  a->dtype = bf ? PyObject_CallMethod(np, "dtype", "(O)", bf) : NULL;
  Py_XDECREF(ml);
  Py_XDECREF(bf);
  if (a->dtype) return 0;
  PyErr_Clear();
  PyErr_SetString(PyExc_BufferError, "a DLPack bfloat16 tensor needs ml_dtypes (pip install "
                  "ml_dtypes) for its numpy dtype");
  return -1;
}

/* ------------------------------------------------------------ streams --------------------- */

uintptr_t nbc__py_dlpack_stream(nbc_stream_t *s) {
  uintptr_t h = s ? nbc_stream_handle(s) : 0;
  if (h) return h;
  return nbc_driver_per_thread_default_stream() ? 2 : 1;
}

/* Makes the consumer's stream (a DLPack stream number: 1, 2 or a CUstream) wait for the work
 * queued so far on the stream self is bound to; 0 or -1 with an exception. */
static int order_for_consumer(nbc__py_state *st, ArrayObject *self, uintptr_t consumer) {
  nbc_stream_t *own = NULL, *temp = NULL, *cs = NULL, *ctemp = NULL;
  if (nbc__py_stream_arg(st, self->stream, &own, &temp) < 0) return -1;
  uintptr_t producer = nbc__py_dlpack_stream(own);
  nbc_status_t s = consumer == 1   ? nbc_legacy_default_stream(&cs)
                   : consumer == 2 ? nbc_per_thread_default_stream(&cs)
                                   : nbc_external_stream(consumer, &ctemp);
  if (ctemp) cs = ctemp;
  if (s == NBC_OK) s = nbc_stream_wait_handle(cs, producer);
  nbc_stream_destroy(ctemp);
  nbc_stream_destroy(temp);
  return s == NBC_OK ? 0 : nbc__py_raise_int(st, s);
}

/* ------------------------------------------------------------ producing ------------------- */

/* A (device_type, id) pair; 0, or -1 with TypeError naming what it is for. */
static int device_pair(PyObject *obj, const char *what, int *ptype, int *pid) {
  if (PyTuple_Check(obj) && PyTuple_GET_SIZE(obj) == 2) {
    long v[2] = {-1, -1};
    for (int i = 0; i < 2; i++)
      if (PyLong_Check(PyTuple_GET_ITEM(obj, i))) v[i] = PyLong_AsLong(PyTuple_GET_ITEM(obj, i));
    PyErr_Clear();
    if (v[0] >= 0 && v[0] <= INT32_MAX && v[1] >= 0 && v[1] <= INT32_MAX) {
      *ptype = (int)v[0];
      *pid = (int)v[1];
      return 0;
    }
  }
  PyErr_Format(PyExc_TypeError, "%s must be a (device_type, id) tuple of ints, not %R", what,
               obj);
  return -1;
}

/* The device the array's memory is on: its context's, else the current context's. */
static int array_device_id(nbc__py_state *st, ArrayObject *self, int *pid) {
  nbc_context_t *ctx = self->cctx;
  if (!ctx) {
    nbc_status_t s = nbc_current_context(-1, &ctx);
    if (s != NBC_OK) return nbc__py_raise_int(st, s);
  }
  *pid = nbc_device_id(nbc_context_device(ctx));
  return 0;
}

PyObject *nbc__py_array_dlpack_device(ArrayObject *self, PyObject *unused) {
  (void)unused;
  int id = 0;
  if (array_device_id(state((PyObject *)self), self, &id) < 0) return NULL;
  return Py_BuildValue("(ii)", NBC_DL_CUDA, id);
}

/* One block: the managed struct (versioned or legacy) then shape and strides. */
typedef struct {
  union {
    nbc_dl_managed_versioned v;
    nbc_dl_managed legacy;
  } m;
  int versioned;
  int64_t dims[];
} export_block;

/* The deleter the consumer calls once: drops the array the tensor held, frees the block. The
 * interpreter may be finalizing when a foreign library lets go late: the array then stays. */
static void release_block(export_block *b) {
  PyObject *array = b->versioned ? b->m.v.manager_ctx : b->m.legacy.manager_ctx;
  if (array && Py_IsInitialized()) {
    PyGILState_STATE g = PyGILState_Ensure();
    Py_DECREF(array);
    PyGILState_Release(g);
  }
  free(b);
}

static void delete_versioned(nbc_dl_managed_versioned *m) { release_block((export_block *)m); }
static void delete_legacy(nbc_dl_managed *m) { release_block((export_block *)m); }

/* A capsule never consumed still holds its tensor: its destructor deletes it. */
static void capsule_destructor(PyObject *capsule) {
  int versioned = PyCapsule_IsValid(capsule, capsule_versioned);
  if (!versioned && !PyCapsule_IsValid(capsule, capsule_legacy)) return; /* consumed */
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  void *p = PyCapsule_GetPointer(capsule, versioned ? capsule_versioned : capsule_legacy);
  if (p && versioned) ((nbc_dl_managed_versioned *)p)->deleter(p);
  else if (p) ((nbc_dl_managed *)p)->deleter(p);
  PyErr_Restore(t, v, tb);
}

/* __dlpack__'s stream argument as a DLPack stream number: 1 for None; -1 (no ordering)
 * passes through as (uintptr_t)-1. 0 is refused, as the specification asks of CUDA. */
static int stream_number(PyObject *obj, uintptr_t *pout) {
  if (!obj || obj == Py_None) {
    *pout = 1;
    return 0;
  }
  long long v = PyLong_AsLongLong(obj);
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    unsigned long long u = PyLong_AsUnsignedLongLong(obj);
    if (u == (unsigned long long)-1 && PyErr_Occurred()) return -1;
    *pout = (uintptr_t)u;
    return 0;
  }
  if (v == 0 || v < -1) {
    PyErr_Format(PyExc_ValueError, "__dlpack__: stream=%lld is not a CUDA stream (None or 1: "
                 "the legacy default stream, 2: the per-thread one, -1: no ordering)", v);
    return -1;
  }
  *pout = (uintptr_t)v;
  return 0;
}

/* The checks of __dlpack__'s keywords other than stream: the DLPack major version the
 * consumer reads (0: the legacy capsule), dl_device, copy. */
static int export_options(nbc__py_state *st, ArrayObject *self, PyObject *max_version,
                          PyObject *dl_device, PyObject *copy, int *pversioned) {
  *pversioned = 0;
  if (max_version && max_version != Py_None) {
    if (!PyTuple_Check(max_version) || PyTuple_GET_SIZE(max_version) < 1) {
      PyErr_SetString(PyExc_TypeError, "__dlpack__: max_version must be a (major, minor) tuple");
      return -1;
    }
    long major = PyLong_AsLong(PyTuple_GET_ITEM(max_version, 0));
    if (major == -1 && PyErr_Occurred()) return -1;
    *pversioned = major >= NBC_DLPACK_MAJOR;
  }
  if (dl_device && dl_device != Py_None) {
    int type, id, mine = 0;
    if (device_pair(dl_device, "__dlpack__: dl_device", &type, &id) < 0 ||
        array_device_id(st, self, &mine) < 0)
      return -1;
    if (type != NBC_DL_CUDA || id != mine) {
      PyErr_Format(PyExc_BufferError, "__dlpack__: the array is on device (%d, %d), not (%d, "
                   "%d); nbcuda exports without copying", NBC_DL_CUDA, mine, type, id);
      return -1;
    }
  }
  int c = copy && copy != Py_None ? PyObject_IsTrue(copy) : 0;
  if (c < 0) return -1;
  if (c) {
    PyErr_SetString(PyExc_BufferError, "__dlpack__: copy=True is not supported (nbcuda exports "
                    "the array's own memory; copy it first with copy_to_device)");
    return -1;
  }
  return 0;
}

/* The tensor of self in a new block holding a reference to self; NULL with an exception. */
static export_block *export_tensor(nbc__py_state *st, ArrayObject *self, int versioned) {
  nbc_dl_tensor t = {0};
  int id = 0;
  if (nbc__py_array_alive(st, self, "__dlpack__") < 0 || dtype_to_dl(self, &t.dtype) < 0 ||
      array_device_id(st, self, &id) < 0)
    return NULL;
  for (int d = 0; d < self->ndim; d++)
    if (self->strides[d] % self->itemsize) {
      PyErr_Format(PyExc_BufferError, "__dlpack__: stride %lld of axis %d is not a whole "
                   "number of %d-byte elements", (long long)self->strides[d], d,
                   self->itemsize);
      return NULL;
    }
  export_block *b = calloc(1, sizeof *b + 2 * sizeof(int64_t) * (size_t)self->ndim);
  if (!b) return (export_block *)PyErr_NoMemory();
  t.data = (void *)(uintptr_t)self->data;
  t.device = (nbc_dl_device){NBC_DL_CUDA, id};
  t.ndim = self->ndim;
  t.shape = b->dims;
  t.strides = b->dims + self->ndim;
  for (int d = 0; d < self->ndim; d++) {
    t.shape[d] = self->shape[d];
    t.strides[d] = self->strides[d] / self->itemsize;
  }
  b->versioned = versioned;
  if (versioned) {
    b->m.v.version = (nbc_dl_version){NBC_DLPACK_MAJOR, NBC_DLPACK_MINOR};
    b->m.v.manager_ctx = Py_NewRef((PyObject *)self);
    b->m.v.deleter = delete_versioned;
    b->m.v.dl_tensor = t;
  } else {
    b->m.legacy.manager_ctx = Py_NewRef((PyObject *)self);
    b->m.legacy.deleter = delete_legacy;
    b->m.legacy.dl_tensor = t;
  }
  return b;
}

PyObject *nbc__py_array_dlpack(ArrayObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"stream", "max_version", "dl_device", "copy", NULL};
  PyObject *stream = NULL, *max_version = NULL, *dl_device = NULL, *copy = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOO:__dlpack__", kwlist, &stream,
                                   &max_version, &dl_device, &copy))
    return NULL;
  nbc__py_state *st = state((PyObject *)self);
  uintptr_t consumer;
  int versioned;
  if (stream_number(stream, &consumer) < 0 ||
      export_options(st, self, max_version, dl_device, copy, &versioned) < 0)
    return NULL;
  if (consumer != (uintptr_t)-1 && order_for_consumer(st, self, consumer) < 0) return NULL;
  export_block *b = export_tensor(st, self, versioned);
  if (!b) return NULL;
  PyObject *capsule = PyCapsule_New(b, versioned ? capsule_versioned : capsule_legacy,
                                    capsule_destructor);
  if (!capsule) release_block(b);
  return capsule;
}

/* ------------------------------------------------------------ consuming ------------------- */

/* The owner capsule's destructor: the tensor taken from a producer goes back to it. */
static void owner_destructor(PyObject *owner) {
  void *p = PyCapsule_GetPointer(owner, capsule_owner);
  if (!p) {
    PyErr_Clear();
    return;
  }
  if (PyCapsule_GetContext(owner)) {
    nbc_dl_managed_versioned *m = p;
    if (m->deleter) m->deleter(m);
  } else {
    nbc_dl_managed *m = p;
    if (m->deleter) m->deleter(m);
  }
}

/* obj's __dlpack_device__ as (type, id); 1 when read, 0 when obj has no such method, -1 with
 * an exception. */
static int dlpack_device(nbc__py_state *st, PyObject *obj, int *ptype, int *pid) {
  PyObject *fn;
  if (!nbc__py_optional_attr(obj, st->str_dlpack_device, &fn)) return PyErr_Occurred() ? -1 : 0;
  PyObject *dev = PyObject_CallNoArgs(fn);
  Py_DECREF(fn);
  if (!dev) return -1;
  int rc = device_pair(dev, "__dlpack_device__()'s result", ptype, pid);
  Py_DECREF(dev);
  return rc < 0 ? -1 : 1;
}

/* obj.__dlpack__(stream=..., max_version=(1, 0)), again without max_version when the
 * producer predates it (TypeError); kDLCUDAHost memory is asked without a stream. */
static PyObject *call_dlpack(nbc__py_state *st, PyObject *obj, int type, intptr_t stream) {
  PyObject *fn = PyObject_GetAttr(obj, st->str_dlpack);
  if (!fn) return NULL;
  PyObject *s = type == NBC_DL_CUDA_HOST ? Py_NewRef(Py_None) : PyLong_FromSsize_t(stream);
  PyObject *kw = s ? Py_BuildValue("{sOs(ii)}", "stream", s, "max_version", NBC_DLPACK_MAJOR,
                                   NBC_DLPACK_MINOR)
                   : NULL;
  PyObject *r = kw ? PyObject_VectorcallDict(fn, NULL, 0, kw) : NULL;
  if (!r && kw && PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear();
    r = PyDict_DelItemString(kw, "max_version") == 0 ? PyObject_VectorcallDict(fn, NULL, 0, kw)
                                                      : NULL;
  }
  Py_XDECREF(kw);
  Py_XDECREF(s);
  Py_DECREF(fn);
  return r;
}

/* Takes the tensor out of a producer's capsule: renames it "used_...", and returns the owner
 * capsule that gives the tensor back when it dies, with the tensor and its flags in *pt and
 * *pflags. NULL with an exception (the tensor then given back already). */
static PyObject *take_capsule(PyObject *capsule, nbc_dl_tensor **pt, uint64_t *pflags) {
  int versioned = PyCapsule_IsValid(capsule, capsule_versioned);
  if (!versioned && !PyCapsule_IsValid(capsule, capsule_legacy)) {
    PyErr_Format(PyExc_TypeError, "__dlpack__ returned %R, not an unconsumed DLPack capsule "
                 "(\"dltensor_versioned\" or \"dltensor\")", capsule);
    return NULL;
  }
  void *p = PyCapsule_GetPointer(capsule, versioned ? capsule_versioned : capsule_legacy);
  if (!p || PyCapsule_SetName(capsule, versioned ? "used_dltensor_versioned" : "used_dltensor") < 0)
    return NULL;
  PyObject *owner = PyCapsule_New(p, capsule_owner, owner_destructor);
  if (owner && versioned && PyCapsule_SetContext(owner, owner) < 0) Py_CLEAR(owner);
  if (!owner) { /* give the tensor back at once */
    if (versioned) ((nbc_dl_managed_versioned *)p)->deleter(p);
    else if (((nbc_dl_managed *)p)->deleter) ((nbc_dl_managed *)p)->deleter(p);
    return NULL;
  }
  if (versioned) {
    nbc_dl_managed_versioned *m = p;
    if (m->version.major != NBC_DLPACK_MAJOR) {
      PyErr_Format(PyExc_BufferError, "the DLPack tensor is version %u.%u; nbcuda reads %d.x",
                   m->version.major, m->version.minor, NBC_DLPACK_MAJOR);
      Py_DECREF(owner);
      return NULL;
    }
    *pt = &m->dl_tensor;
    *pflags = m->flags;
  } else {
    *pt = &((nbc_dl_managed *)p)->dl_tensor;
    *pflags = 0;
  }
  return owner;
}

/* A DLPack tensor's memory and geometry into a (whose shape and strides have room for
 * NBC__PY_MAXDIM dimensions or are set by nbc__py_array_set_ndim); 0 or -1 with an exception. */
static int geometry_from_dl(nbc__py_state *st, const nbc_dl_tensor *t, uint64_t flags,
                            ArrayObject *a) {
  if (flags & NBC_DL_FLAG_READ_ONLY) {
    PyErr_SetString(PyExc_BufferError, "the DLPack tensor is read-only; nbcuda's device arrays "
                    "and kernel arguments are writable");
    return -1;
  }
  if (t->ndim < 0 || t->ndim > NBC__PY_MAXDIM) {
    PyErr_Format(PyExc_BufferError, "a DLPack tensor of %d dimensions (at most %d)", t->ndim,
                 NBC__PY_MAXDIM);
    return -1;
  }
  if (dtype_from_dl(st, t->dtype, a) < 0 || nbc__py_array_set_ndim(a, t->ndim) < 0) return -1;
  for (int d = 0; d < t->ndim; d++) a->shape[d] = t->shape[d];
  int64_t n;
  if (nbc__py_checked_count(a, &n) < 0) return -1;
  if (t->strides)
    for (int d = 0; d < t->ndim; d++) a->strides[d] = t->strides[d] * a->itemsize;
  else
    nbc__py_array_dense_strides(a, 'C');
  uintptr_t ptr = (uintptr_t)t->data + (uintptr_t)t->byte_offset;
  if (t->device.device_type == NBC_DL_CUDA_HOST && n) {
    nbc_devptr_t dptr;
    nbc_status_t s = nbc_mem_host_device_pointer((void *)ptr, &dptr);
    if (s != NBC_OK) return nbc__py_raise_int(st, s);
    ptr = (uintptr_t)dptr;
  }
  a->data = (nbc_devptr_t)ptr;
  a->nbytes = (size_t)(n * a->itemsize);
  return 0;
}

/* Whether a device type/id is memory a kernel in the current context can use: 1 yes, 0 not
 * CUDA memory at all (kDLCPU and others), -1 with BufferError for another device's memory. */
static int usable_device(nbc__py_state *st, int type, int id) {
  if (type == NBC_DL_CUDA_HOST || type == NBC_DL_CUDA_MANAGED) return 1;
  if (type != NBC_DL_CUDA) return 0;
  nbc_context_t *ctx;
  nbc_status_t s = nbc_current_context(-1, &ctx);
  if (s != NBC_OK) return nbc__py_raise_int(st, s);
  int mine = nbc_device_id(nbc_context_device(ctx));
  if (id == mine) return 1;
  PyErr_Format(PyExc_BufferError, "the DLPack tensor is on CUDA device %d, the current context "
               "on device %d", id, mine);
  return -1;
}

/* The tensor of an object whose device is usable, into a; the owner capsule, or NULL. */
static PyObject *import_tensor(nbc__py_state *st, PyObject *obj, int type, intptr_t stream,
                               ArrayObject *a) {
  PyObject *capsule = call_dlpack(st, obj, type, stream);
  if (!capsule) return NULL;
  nbc_dl_tensor *t;
  uint64_t flags;
  PyObject *owner = take_capsule(capsule, &t, &flags);
  Py_DECREF(capsule);
  if (owner && geometry_from_dl(st, t, flags, a) < 0) Py_CLEAR(owner);
  return owner;
}

PyObject *nbc__py_from_dlpack(PyObject *module, PyObject *obj) {
  nbc__py_state *st = nbc__py_module_state(module);
  if (Py_TYPE(obj) == st->DeviceArrayType) return Py_NewRef(obj);
  int type, id;
  int has = dlpack_device(st, obj, &type, &id);
  if (has < 0) return NULL;
  if (!has || !PyObject_HasAttr(obj, st->str_dlpack)) {
    PyErr_Format(PyExc_TypeError, "from_dlpack: %s has no __dlpack__ and __dlpack_device__",
                 Py_TYPE(obj)->tp_name);
    return NULL;
  }
  int usable = usable_device(st, type, id);
  if (usable < 0) return NULL;
  if (!usable) {
    PyErr_Format(PyExc_BufferError, "from_dlpack: %s is in %s memory (DLPack device type %d), "
                 "not CUDA memory; nbcuda.to_device(obj) copies it to the device",
                 Py_TYPE(obj)->tp_name, type == NBC_DL_CPU ? "host" : "non-CUDA", type);
    return NULL;
  }
  ArrayObject *a = nbc__py_array_alloc(st);
  if (!a) return NULL;
  /* the producer orders its work before the default stream's, which the array's methods use */
  a->base = import_tensor(st, obj, type, (intptr_t)nbc__py_dlpack_stream(NULL), a);
  if (!a->base) {
    Py_DECREF(a);
    return NULL;
  }
  return (PyObject *)a;
}

/* Whether obj's dtype is one numba-cuda does not ask DLPack for (_UNSUPPORTED_DLPACK_TYPES:
 * records, datetime64, timedelta64, which DLPack has no code for and CuPy refuses with a
 * BufferError): its dtype's kind is 'V', 'M' or 'm'. 0 for no such dtype or no dtype. */
static int dtype_without_dlpack(PyObject *obj) {
  PyObject *dtype = PyObject_GetAttrString(obj, "dtype");
  PyObject *kind = dtype ? PyObject_GetAttrString(dtype, "kind") : NULL;
  const char *k = kind && PyUnicode_Check(kind) ? PyUnicode_AsUTF8(kind) : NULL;
  int skip = k && (strcmp(k, "V") == 0 || strcmp(k, "M") == 0 || strcmp(k, "m") == 0);
  Py_XDECREF(kind);
  Py_XDECREF(dtype);
  PyErr_Clear();
  return skip;
}

int nbc__py_dlpack_view(nbc__py_state *st, PyObject *obj, intptr_t stream,
                        nbc__py_array_view *view) {
  /* an exact numpy array is host memory: not asked */
  if (st->np_ndarray && Py_TYPE(obj) == (PyTypeObject *)st->np_ndarray) return 0;
  int type, id;
  int has = dlpack_device(st, obj, &type, &id);
  if (has <= 0) return has;
  int usable = usable_device(st, type, id);
  if (usable <= 0) return usable;
  if (!PyObject_HasAttr(obj, st->str_dlpack)) return 0;
  /* as numba-cuda: dates and records go through __cuda_array_interface__ instead */
  if (dtype_without_dlpack(obj)) return 0;
  ArrayObject tmp;
  int64_t dims[2 * NBC__PY_MAXDIM];
  tmp.shape = dims; /* room for any ndim: nbc__py_array_set_ndim allocates nothing */
  tmp.strides = dims + NBC__PY_MAXDIM;
  tmp.dtype = NULL;
  PyObject *owner = import_tensor(st, obj, type, stream, &tmp);
  Py_XDECREF(tmp.dtype); /* bfloat16's: the kernel types the object's own dtype */
  if (!owner) return -1;
  view->data = tmp.data;
  view->kind = tmp.kind;
  view->itemsize = tmp.itemsize;
  view->datetime = NULL;
  view->ndim = tmp.ndim;
  memcpy(view->shape, tmp.shape, sizeof(int64_t) * (size_t)tmp.ndim);
  memcpy(view->strides, tmp.strides, sizeof(int64_t) * (size_t)tmp.ndim);
  view->owner = owner;
  return 1;
}
