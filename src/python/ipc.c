/* ipc.c — CUDA IPC in the Python module, as numba.cuda offers it: DeviceNDArray's
 * get_ipc_handle(), Context.get_ipc_handle(memory), the picklable IpcHandle and
 * IpcArrayHandle, and open_ipc_array(handle, shape, dtype, strides=None, offset=0).
 *
 * The work is libnbcuda's (src/host/ipc.c: nbc_ipc_get_handle, nbc_ipc_open,
 * nbc_ipc_close); this file keeps numba's objects and messages around it:
 *   - IpcHandle holds the C handle, `base` (the exported memory's owner in the exporting
 *     process, None once unpickled) and, while open, the mapped pointer. Opening a handle
 *     that still has its base is numba's ValueError "opening IpcHandle from original
 *     process"; opening twice "IpcHandle is already opened"; closing a closed one
 *     "IpcHandle not opened". It pickles through nbcuda._rebuild_ipc_handle with the 64
 *     handle bytes, size, source_info, offset and the exporting pid;
 *   - open() gives a MemoryPointer over the mapped range (memorypointer.c), owned by the
 *     IpcHandle, as numba's; open_array() makes the device array with
 *     from_cuda_array_interface, owned by the IpcHandle: the mapping stays while the array
 *     lives unless close() is called, and an
 *     IpcHandle that dies open closes its mapping. After close() the array's address is
 *     unmapped, so copies through it raise CudaAPIError (the driver's
 *     CUDA_ERROR_INVALID_VALUE), as in numba the array is dead then;
 *   - IpcArrayHandle(ipc_handle, array_desc) adds the array's shape, strides and dtype:
 *     open() gives the array in the current context, close() unmaps, and `with h as arr:`
 *     does both. open_ipc_array returns one of these over a handle made from raw bytes,
 *     which is the same context manager, and closes the mapping even when the block raises.
 * numba's staged open (open_staged(context), and what open()/open_array() do when the opening
 * device has no peer access to the exporting one): a copy in new memory of the opening
 * context (nbc_ipc_open_staged), owned by the MemoryPointer (or array) returned, the handle
 * then open with nothing mapped, as numba's _StagedIpcImpl.
 */
#include "nbcuda_py.h"
#include "devicearray.h"

#include <string.h>

typedef struct {
  PyObject_HEAD nbc_ipc_handle_t h;
  PyObject *base;      /* the exported memory's owner, or NULL (unpickled, from bytes) */
  nbc_devptr_t opened; /* the mapped range while open, else 0 */
  int staged;          /* open through a staged copy (nothing mapped) */
} IpcHandleObject;

typedef struct {
  PyObject_HEAD PyObject *ipc_handle; /* an IpcHandle */
  PyObject *array_desc;               /* dict(shape=..., strides=..., dtype=...) */
} IpcArrayHandleObject;

/* ------------------------------------------------------------ helpers ----------------- */

/* A context argument: None is the current context (NULL for the C API), a Context its
 * device's primary context. */
static int context_arg(nbc__py_state *st, PyObject *obj, nbc_context_t **pctx) {
  *pctx = NULL;
  if (obj == Py_None) return 0;
  PyObject *device = PyObject_GetAttrString(obj, "device");
  PyObject *id = device ? PyObject_GetAttrString(device, "id") : NULL;
  Py_XDECREF(device);
  long ordinal = id ? PyLong_AsLong(id) : -1;
  Py_XDECREF(id);
  if (ordinal == -1 && PyErr_Occurred()) {
    PyErr_Format(PyExc_TypeError, "expected a Context (from current_context()), not %.200s",
                 Py_TYPE(obj)->tp_name);
    return -1;
  }
  nbc_device_t *dev;
  nbc_status_t s = nbc_device_get((int)ordinal, &dev);
  if (s == NBC_OK) s = nbc_device_primary_context(dev, pctx);
  return s == NBC_OK ? 0 : nbc__py_raise_int(st, s);
}

/* The bytes from the first element to past the last of a strided array (nbc__py_extent):
 * 0 when empty; -1 with ValueError for negative strides, which export memory before the
 * pointer, and for an extent beyond the address space. */
static int extent_of(PyObject *shape, PyObject *strides, Py_ssize_t itemsize, size_t *pbytes) {
  Py_ssize_t n = PyTuple_GET_SIZE(shape);
  int64_t *dims = PyMem_Malloc(sizeof *dims * 2 * (size_t)(n ? n : 1)), bytes = 0;
  if (!dims) {
    PyErr_NoMemory();
    return -1;
  }
  int rc = 0, empty = 0;
  for (Py_ssize_t i = 0; i < n && !empty && rc == 0; i++) {
    long long len = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
    long long stride = PyLong_AsLongLong(PyTuple_GET_ITEM(strides, i));
    if (PyErr_Occurred()) {
      rc = -1;
    } else if (len < 0) {
      PyErr_SetString(PyExc_ValueError, "negative dimensions are not allowed");
      rc = -1;
    } else if (len == 0) {
      empty = 1;
    } else if (stride < 0) {
      PyErr_SetString(PyExc_ValueError, "cannot share an array with negative strides over IPC");
      rc = -1;
    }
    dims[i] = len;
    dims[n + i] = stride;
  }
  if (rc == 0 && !empty && nbc__py_extent((int)n, dims, dims + n, itemsize, &bytes) < 0)
    rc = nbc__py_too_big();
  PyMem_Free(dims);
  if (rc == 0) *pbytes = (size_t)bytes;
  return rc;
}

/* numpy.dtype(obj); a new reference. */
static PyObject *as_dtype(nbc__py_state *st, PyObject *obj) {
  if (!nbc__py_numpy(st)) return NULL;
  return PyObject_CallOneArg(st->np_dtype, obj);
}

/* An int or a sequence of ints as a tuple of ints; a new reference. */
static PyObject *int_tuple(PyObject *obj, const char *what) {
  PyObject *t = PyLong_Check(obj) ? PyTuple_Pack(1, obj) : PySequence_Tuple(obj);
  if (!t) {
    PyErr_Format(PyExc_TypeError, "%s must be an int or a sequence of ints", what);
    return NULL;
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(t); i++)
    if (!PyLong_Check(PyTuple_GET_ITEM(t, i))) {
      Py_DECREF(t);
      PyErr_Format(PyExc_TypeError, "%s must be an int or a sequence of ints", what);
      return NULL;
    }
  return t;
}

/* shape, strides (None: C-contiguous, an int: numba's 1-D form) and dtype made canonical
 * into a desc dict(shape=, strides=, dtype=); *pbytes gets the extent. A new reference. */
static PyObject *array_desc(nbc__py_state *st, PyObject *shape_obj, PyObject *dtype_obj,
                            PyObject *strides_obj, size_t *pbytes) {
  PyObject *dtype = as_dtype(st, dtype_obj), *shape = NULL, *strides = NULL, *desc = NULL;
  PyObject *itemsize_obj = dtype ? PyObject_GetAttrString(dtype, "itemsize") : NULL;
  Py_ssize_t itemsize = itemsize_obj ? PyLong_AsSsize_t(itemsize_obj) : -1;
  Py_XDECREF(itemsize_obj);
  if (itemsize < 0 || !(shape = int_tuple(shape_obj, "shape"))) goto done;
  strides =
      strides_obj == Py_None ? nbc__py_dense_strides(shape, itemsize, 'C')
                             : int_tuple(strides_obj, "strides");
  if (!strides) goto done;
  if (PyTuple_GET_SIZE(strides) != PyTuple_GET_SIZE(shape)) {
    PyErr_Format(PyExc_ValueError, "strides %R do not match shape %R", strides, shape);
    goto done;
  }
  if (extent_of(shape, strides, itemsize, pbytes) < 0) goto done;
  desc = Py_BuildValue("{s:O,s:O,s:O}", "shape", shape, "strides", strides, "dtype", dtype);
done:
  Py_XDECREF(dtype);
  Py_XDECREF(shape);
  Py_XDECREF(strides);
  return desc;
}

/* ------------------------------------------------------------ IpcHandle --------------- */

static IpcHandleObject *handle_new(nbc__py_state *st, const nbc_ipc_handle_t *h,
                                   PyObject *base) {
  IpcHandleObject *o = PyObject_GC_New(IpcHandleObject, st->IpcHandleType);
  if (!o) return NULL;
  o->h = *h;
  o->base = Py_XNewRef(base);
  o->opened = 0;
  o->staged = 0;
  PyObject_GC_Track(o);
  return o;
}

static int handle_traverse(IpcHandleObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->base);
  return 0;
}

static int handle_clear(IpcHandleObject *self) {
  Py_CLEAR(self->base);
  return 0;
}

static void handle_dealloc(IpcHandleObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  if (self->opened) nbc_ipc_close(self->opened); /* nothing else can close it now */
  handle_clear(self);
  tp->tp_free(self);
  Py_DECREF(tp);
}

/* numba's errors for a status of nbc_ipc_open(_staged): RuntimeError for a device it cannot
 * find. */
static void open_failed(nbc__py_state *st, nbc_status_t s) {
  if (s == NBC_INVALID_DEVICE)
    PyErr_SetString(PyExc_RuntimeError, nbc_last_error());
  else
    nbc__py_raise(st, s);
}

/* The handle's checks before an open, and the C context of `context` (None: the current
 * one); 0, or -1 with numba's ValueError. */
static int open_checks(IpcHandleObject *self, PyObject *context, nbc_context_t **pctx) {
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  if (self->base) {
    PyErr_SetString(PyExc_ValueError, "opening IpcHandle from original process");
    return -1;
  }
  if (self->opened || self->staged) {
    PyErr_SetString(PyExc_ValueError, "IpcHandle is already opened");
    return -1;
  }
  if (context_arg(st, context, pctx) < 0) return -1;
  nbc_status_t s = *pctx ? NBC_OK : nbc_current_context(-1, pctx);
  return s == NBC_OK ? 0 : nbc__py_raise_int(st, s);
}

/* Maps the handle in ctx; the pointer, or 0 with an exception. */
static nbc_devptr_t handle_map(IpcHandleObject *self, nbc_context_t *ctx) {
  nbc_devptr_t ptr = 0;
  nbc_status_t s = nbc_ipc_open(&self->h, ctx, &ptr);
  if (s != NBC_OK) {
    open_failed(nbc__py_state_of((PyObject *)self), s);
    return 0;
  }
  self->opened = ptr;
  return ptr;
}

/* numba's staged open in ctx: a MemoryPointer owning a copy of the memory, whose address
 * goes to *pptr (pptr may be NULL). */
static PyObject *handle_stage(IpcHandleObject *self, nbc_context_t *ctx, nbc_devptr_t *pptr) {
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  nbc_devptr_t ptr = 0;
  nbc_status_t s = nbc_ipc_open_staged(&self->h, ctx, &ptr);
  if (s != NBC_OK) {
    open_failed(st, s);
    return NULL;
  }
  PyObject *ctx_obj = nbc__py_context_object(st, ctx);
  PyObject *memory = ctx_obj ? nbc__py_memptr_owned(st, ctx_obj, ctx, ptr, (size_t)self->h.size)
                             : NULL;
  Py_XDECREF(ctx_obj);
  if (!memory) {
    nbc_mem_free(ptr);
    return NULL;
  }
  self->staged = 1;
  if (pptr) *pptr = ptr;
  return memory;
}

/* Whether ctx's device can map the handle (numba's can_access_peer); -1 with an exception. */
static int maps_directly(IpcHandleObject *self, nbc_context_t *ctx) {
  int peer = 1;
  nbc_status_t s = nbc_ipc_source_is_peer(&self->h, ctx, &peer);
  if (s != NBC_OK) {
    open_failed(nbc__py_state_of((PyObject *)self), s);
    return -1;
  }
  return peer;
}

/* open(context=None): numba's MemoryPointer over the mapped range, owned by the handle (the
 * mapping stays until close() or the handle's death); from a device without peer access to
 * the exporting one, a staged copy, as numba's open chooses open_staged. */
static PyObject *handle_open(IpcHandleObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs > 1) return PyErr_Format(PyExc_TypeError, "open() takes at most 1 argument");
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  nbc_context_t *ctx = NULL;
  if (open_checks(self, nargs ? args[0] : Py_None, &ctx) < 0) return NULL;
  int direct = maps_directly(self, ctx);
  if (direct <= 0) return direct < 0 ? NULL : handle_stage(self, ctx, NULL);
  nbc_devptr_t ptr = handle_map(self, ctx);
  if (!ptr) return NULL;
  PyObject *memory = NULL, *ctx_obj = nbc__py_context_object(st, ctx);
  if (ctx_obj)
    memory = nbc__py_memptr_view(st, (PyObject *)self, ctx_obj, ctx, nbc_context_lifetime(ctx),
                                 ptr, (size_t)self->h.size);
  Py_XDECREF(ctx_obj);
  if (!memory) {
    nbc_ipc_close(ptr);
    self->opened = 0;
  }
  return memory;
}

/* open_staged(context): numba's copy of the memory in context's device, whichever device
 * that is (a MemoryPointer owning it; the handle is open until close()). */
static PyObject *handle_open_staged(IpcHandleObject *self, PyObject *context) {
  nbc_context_t *ctx = NULL;
  if (open_checks(self, context, &ctx) < 0) return NULL;
  return handle_stage(self, ctx, NULL);
}

/* The device array over ptr: from_cuda_array_interface, owned by owner (the handle, for a
 * mapping; the MemoryPointer of a staged copy). */
static PyObject *array_over(IpcHandleObject *self, nbc_devptr_t ptr, PyObject *desc,
                            PyObject *owner) {
  PyObject *module = PyType_GetModule(Py_TYPE(self));
  PyObject *dtype = PyDict_GetItemString(desc, "dtype");
  PyObject *typestr = module && dtype ? PyObject_GetAttrString(dtype, "str") : NULL;
  PyObject *cai = typestr
                      ? Py_BuildValue("{s:O,s:O,s:O,s:(KO),s:i}", "shape",
                                      PyDict_GetItemString(desc, "shape"), "strides",
                                      PyDict_GetItemString(desc, "strides"), "typestr", typestr,
                                      "data", (unsigned long long)ptr, Py_False, "version", 3)
                      : NULL;
  Py_XDECREF(typestr);
  if (cai && nbc__py_cai_set_descr(cai, dtype) < 0) Py_CLEAR(cai); /* a record's fields */
  PyObject *array = cai ? PyObject_CallMethod(module, "from_cuda_array_interface", "OOO", cai,
                                              owner, Py_False)
                        : NULL;
  Py_XDECREF(cai);
  return array;
}

/* open_array(context, shape, dtype, strides=None): open() as a device array. */
static PyObject *handle_open_array(IpcHandleObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"context", "shape", "dtype", "strides", NULL};
  PyObject *context, *shape, *dtype, *strides = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|O:open_array", kwlist, &context, &shape,
                                   &dtype, &strides))
    return NULL;
  size_t bytes;
  PyObject *desc =
      array_desc(nbc__py_state_of((PyObject *)self), shape, dtype, strides, &bytes);
  if (!desc) return NULL;
  nbc_context_t *ctx = NULL;
  int direct = open_checks(self, context, &ctx) < 0 ? -1 : maps_directly(self, ctx);
  PyObject *array = NULL;
  if (direct == 0) { /* a staged copy, which the array owns */
    nbc_devptr_t ptr = 0;
    PyObject *copy = handle_stage(self, ctx, &ptr);
    array = copy ? array_over(self, ptr, desc, copy) : NULL;
    Py_XDECREF(copy);
    if (copy && !array) self->staged = 0;
  } else if (direct > 0) {
    nbc_devptr_t ptr = handle_map(self, ctx);
    array = ptr ? array_over(self, ptr, desc, (PyObject *)self) : NULL;
    if (ptr && !array) {
      nbc_ipc_close(ptr);
      self->opened = 0;
    }
  }
  Py_DECREF(desc);
  return array;
}

static PyObject *handle_close(IpcHandleObject *self, PyObject *unused) {
  (void)unused;
  if (self->staged) { /* numba's _StagedIpcImpl.close: nothing mapped */
    self->staged = 0;
    Py_RETURN_NONE;
  }
  if (!self->opened) {
    PyErr_SetString(PyExc_ValueError, "IpcHandle not opened");
    return NULL;
  }
  nbc_status_t s = nbc_ipc_close(self->opened);
  if (s != NBC_OK) return nbc__py_raise(nbc__py_state_of((PyObject *)self), s);
  self->opened = 0;
  Py_RETURN_NONE;
}

/* numba's source_info dict (plus the UUID), or None for a handle without one. */
static PyObject *source_info(const nbc_ipc_handle_t *h) {
  if (h->pci_bus_id < 0 && !h->uuid[0]) Py_RETURN_NONE;
  return Py_BuildValue("{s:i,s:i,s:i,s:s}", "pci_domain_id", h->pci_domain_id, "pci_bus_id",
                       h->pci_bus_id, "pci_device_id", h->pci_device_id, "uuid", h->uuid);
}

static PyObject *handle_reduce(IpcHandleObject *self, PyObject *unused) {
  (void)unused;
  PyObject *module = PyType_GetModule(Py_TYPE(self));
  PyObject *rebuild = module ? PyObject_GetAttrString(module, "_rebuild_ipc_handle") : NULL;
  PyObject *info = rebuild ? source_info(&self->h) : NULL;
  PyObject *r =
      info ? Py_BuildValue("O(y#KOKL)", rebuild, (const char *)self->h.bytes,
                           (Py_ssize_t)NBC_IPC_HANDLE_SIZE, (unsigned long long)self->h.size,
                           info, (unsigned long long)self->h.offset, (long long)self->h.pid)
           : NULL;
  Py_XDECREF(rebuild);
  Py_XDECREF(info);
  return r;
}

static PyObject *handle_get_base(IpcHandleObject *self, void *u) {
  (void)u;
  return Py_NewRef(self->base ? self->base : Py_None);
}

/* numba's handle.reserved: the 64 bytes, on an object of their own. */
static PyObject *handle_get_handle(IpcHandleObject *self, void *u) {
  (void)u;
  return nbc__py_namespace(Py_BuildValue("{s:y#}", "reserved", (const char *)self->h.bytes,
                                         (Py_ssize_t)NBC_IPC_HANDLE_SIZE));
}

static PyObject *handle_get_size(IpcHandleObject *self, void *u) {
  (void)u;
  return PyLong_FromUnsignedLongLong(self->h.size);
}

static PyObject *handle_get_offset(IpcHandleObject *self, void *u) {
  (void)u;
  return PyLong_FromUnsignedLongLong(self->h.offset);
}

static PyObject *handle_get_source_info(IpcHandleObject *self, void *u) {
  (void)u;
  return source_info(&self->h);
}

static PyMethodDef handle_methods[] = {
    {"open", (PyCFunction)(void (*)(void))handle_open, METH_FASTCALL,
     "open($self, context=None, /)\n--\n\n"
     "Maps the memory in context (a staged copy from a device without peer access to the "
     "exporting one); returns a MemoryPointer over it, as numba's."},
    {"open_direct", (PyCFunction)(void (*)(void))handle_open, METH_FASTCALL,
     "open_direct($self, context=None, /)\n--\n\n"
     "The same as open()."},
    {"open_staged", (PyCFunction)handle_open_staged, METH_O,
     "open_staged($self, context, /)\n--\n\n"
     "A copy of the memory in context's device, whichever device that is; returns a "
     "MemoryPointer owning the copy (the handle stays open until close())."},
    {"open_array", (PyCFunction)(void (*)(void))handle_open_array, METH_VARARGS | METH_KEYWORDS,
     "open_array($self, context, shape, dtype, strides=None)\n--\n\n"
     "Open() as a device array."},
    {"close", (PyCFunction)handle_close, METH_NOARGS, "close($self, /)\n--\n\n"
                                                      "Unmaps the memory open() mapped."},
    {"__reduce__", (PyCFunction)handle_reduce, METH_NOARGS, "__reduce__($self, /)\n--\n\n"
                                                            "Pickles the handle for the "
                                                            "process that opens it."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef handle_getset[] = {
    {"base", (getter)handle_get_base, NULL, "the exported memory's owner; None once pickled",
     NULL},
    {"handle", (getter)handle_get_handle, NULL, "the CUipcMemHandle: .reserved is its 64 bytes",
     NULL},
    {"size", (getter)handle_get_size, NULL, "bytes shared", NULL},
    {"offset", (getter)handle_get_offset, NULL, "of the memory in the exported allocation",
     NULL},
    {"source_info", (getter)handle_get_source_info, NULL,
     "the exporting device: pci_domain_id, pci_bus_id, pci_device_id, uuid", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot handle_slots[] = {
    {Py_tp_dealloc, handle_dealloc},
    {Py_tp_traverse, handle_traverse},
    {Py_tp_clear, handle_clear},
    {Py_tp_methods, handle_methods},
    {Py_tp_getset, handle_getset},
    {Py_tp_doc,
     (void *)"A CUDA IPC memory handle; pickles to another process, which opens it."},
    {0, NULL},
};

static PyType_Spec handle_spec = {
    .name = "nbcuda.IpcHandle",
    .basicsize = sizeof(IpcHandleObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION |
             Py_TPFLAGS_IMMUTABLETYPE,
    .slots = handle_slots,
};

/* Fills the handle's device identity from a source_info dict (the keys it has). */
static int read_source_info(PyObject *info, nbc_ipc_handle_t *h) {
  if (!PyDict_Check(info)) {
    PyErr_SetString(PyExc_TypeError, "source_info must be a dict or None");
    return -1;
  }
  static const char *const keys[3] = {"pci_domain_id", "pci_bus_id", "pci_device_id"};
  int *fields[3] = {&h->pci_domain_id, &h->pci_bus_id, &h->pci_device_id};
  for (int i = 0; i < 3; i++) {
    PyObject *v = PyDict_GetItemString(info, keys[i]);
    if (v && (*fields[i] = PyLong_AsLong(v)) == -1 && PyErr_Occurred()) return -1;
  }
  PyObject *uuid = PyDict_GetItemString(info, "uuid");
  if (uuid && PyUnicode_Check(uuid))
    snprintf(h->uuid, sizeof h->uuid, "%s", PyUnicode_AsUTF8(uuid));
  return 0;
}

/* _rebuild_ipc_handle(handle_bytes, size, source_info, offset, pid=0): the unpickler's side. */
static PyObject *py_rebuild_ipc_handle(PyObject *module, PyObject *args) {
  Py_buffer bytes;
  unsigned long long size, offset;
  long long pid = 0;
  PyObject *info;
  if (!PyArg_ParseTuple(args, "y*KOK|L:_rebuild_ipc_handle", &bytes, &size, &info, &offset,
                        &pid))
    return NULL;
  nbc_ipc_handle_t h;
  int ok = bytes.len == NBC_IPC_HANDLE_SIZE;
  if (ok) nbc_ipc_handle_from_bytes(bytes.buf, offset, size, &h);
  PyBuffer_Release(&bytes);
  if (!ok)
    return PyErr_Format(PyExc_ValueError, "an IPC handle has %d bytes", NBC_IPC_HANDLE_SIZE);
  h.pid = pid;
  if (info != Py_None && read_source_info(info, &h) < 0) return NULL;
  return (PyObject *)handle_new(nbc__py_module_state(module), &h, NULL);
}

/* ------------------------------------------------------------ IpcArrayHandle ---------- */

static PyObject *array_handle_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"ipc_handle", "array_desc", NULL};
  PyObject *ipc_handle, *desc;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!:IpcArrayHandle", kwlist, &ipc_handle,
                                   &PyDict_Type, &desc))
    return NULL;
  nbc__py_state *st = PyType_GetModuleState(type);
  if (!st || Py_TYPE(ipc_handle) != st->IpcHandleType) {
    PyErr_SetString(PyExc_TypeError, "IpcArrayHandle: ipc_handle must be an IpcHandle");
    return NULL;
  }
  IpcArrayHandleObject *o = (IpcArrayHandleObject *)type->tp_alloc(type, 0);
  if (!o) return NULL;
  o->ipc_handle = Py_NewRef(ipc_handle);
  o->array_desc = Py_NewRef(desc);
  return (PyObject *)o;
}

static int array_handle_traverse(IpcArrayHandleObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->ipc_handle);
  Py_VISIT(self->array_desc);
  return 0;
}

static int array_handle_clear(IpcArrayHandleObject *self) {
  Py_CLEAR(self->ipc_handle);
  Py_CLEAR(self->array_desc);
  return 0;
}

static void array_handle_dealloc(IpcArrayHandleObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  array_handle_clear(self);
  tp->tp_free(self);
  Py_DECREF(tp);
}

/* open(): a device array sharing the exporting process's memory, in the current context. */
static PyObject *array_handle_open(IpcArrayHandleObject *self, PyObject *unused) {
  (void)unused;
  PyObject *d = self->array_desc;
  PyObject *shape = PyDict_GetItemString(d, "shape"), *dtype = PyDict_GetItemString(d, "dtype");
  PyObject *strides = PyDict_GetItemString(d, "strides");
  if (!shape || !dtype) {
    PyErr_SetString(PyExc_ValueError, "IpcArrayHandle: array_desc needs shape and dtype");
    return NULL;
  }
  PyObject *args = Py_BuildValue("(OOOO)", Py_None, shape, dtype, strides ? strides : Py_None);
  PyObject *r =
      args ? handle_open_array((IpcHandleObject *)self->ipc_handle, args, NULL) : NULL;
  Py_XDECREF(args);
  return r;
}

static PyObject *array_handle_close(IpcArrayHandleObject *self, PyObject *unused) {
  return handle_close((IpcHandleObject *)self->ipc_handle, unused);
}

static PyObject *array_handle_exit(IpcArrayHandleObject *self, PyObject *args) {
  (void)args;
  PyObject *r = array_handle_close(self, NULL);
  if (!r) return NULL;
  Py_DECREF(r);
  Py_RETURN_FALSE; /* never swallow the block's exception */
}

static PyObject *array_handle_reduce(IpcArrayHandleObject *self, PyObject *unused) {
  (void)unused;
  return Py_BuildValue("O(OO)", (PyObject *)Py_TYPE(self), self->ipc_handle, self->array_desc);
}

static PyMethodDef array_handle_methods[] = {
    {"open", (PyCFunction)array_handle_open, METH_NOARGS,
     "open($self, /)\n--\n\n"
     "A DeviceNDArray over the shared memory; not in the process that made the handle."},
    {"close", (PyCFunction)array_handle_close, METH_NOARGS,
     "close($self, /)\n--\n\n"
     "Unmaps the memory; the array from open() must not be used afterwards."},
    {"__enter__", (PyCFunction)array_handle_open, METH_NOARGS, "__enter__($self, /)\n--\n\n"
                                                               "open(): the with block gets "
                                                               "the DeviceNDArray over the "
                                                               "shared memory."},
    {"__exit__", (PyCFunction)array_handle_exit, METH_VARARGS,
     "__exit__($self, *exc_info)\n--\n\n"
     "close() at the end of the with block; exceptions propagate."},
    {"__reduce__", (PyCFunction)array_handle_reduce, METH_NOARGS, "__reduce__($self, /)\n--\n\n"
                                                                  "Pickles the handle for "
                                                                  "the process that opens it."},
    {NULL, NULL, 0, NULL},
};

static PyObject *array_handle_get_ipc_handle(IpcArrayHandleObject *self, void *u) {
  (void)u;
  return Py_NewRef(self->ipc_handle);
}

static PyObject *array_handle_get_desc(IpcArrayHandleObject *self, void *u) {
  (void)u;
  return Py_NewRef(self->array_desc);
}

/* numba's attribute names (_ipc_handle, _array_desc) and plain ones. */
static PyGetSetDef array_handle_getset[] = {
    {"_ipc_handle", (getter)array_handle_get_ipc_handle, NULL, NULL, NULL},
    {"_array_desc", (getter)array_handle_get_desc, NULL, NULL, NULL},
    {"ipc_handle", (getter)array_handle_get_ipc_handle, NULL, "the IpcHandle", NULL},
    {"array_desc", (getter)array_handle_get_desc, NULL, "dict(shape=, strides=, dtype=)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot array_handle_slots[] = {
    {Py_tp_new, array_handle_new},
    {Py_tp_dealloc, array_handle_dealloc},
    {Py_tp_traverse, array_handle_traverse},
    {Py_tp_clear, array_handle_clear},
    {Py_tp_methods, array_handle_methods},
    {Py_tp_getset, array_handle_getset},
    {Py_tp_doc,
     (void *)"IpcArrayHandle(ipc_handle, array_desc)\n--\n\nA device array another process "
             "can open; `with h as arr:` opens and closes it."},
    {0, NULL},
};

static PyType_Spec array_handle_spec = {
    .name = "nbcuda.IpcArrayHandle",
    .basicsize = sizeof(IpcArrayHandleObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = array_handle_slots,
};

static PyObject *array_handle_make(nbc__py_state *st, PyObject *ipc_handle, PyObject *desc) {
  IpcArrayHandleObject *o = PyObject_GC_New(IpcArrayHandleObject, st->IpcArrayHandleType);
  if (!o) return NULL;
  o->ipc_handle = Py_NewRef(ipc_handle);
  o->array_desc = Py_NewRef(desc);
  PyObject_GC_Track(o);
  return (PyObject *)o;
}

/* ------------------------------------------------------------ exporting --------------- */

/* Exports memory (an object with __cuda_array_interface__) of ctx (NULL: current): the
 * IpcHandle, and its array desc in *pdesc when pdesc is not NULL. */
/* The IpcHandle of [ptr, ptr + bytes) in ctx (NULL: the current context), owned by memory. */
static PyObject *export_range(nbc__py_state *st, PyObject *memory, nbc_context_t *ctx,
                              unsigned long long ptr, size_t bytes) {
  if (!ptr || !bytes) {
    PyErr_SetString(PyExc_ValueError, "cannot share an empty array over IPC");
    return NULL;
  }
  nbc_ipc_handle_t h;
  nbc_status_t s = nbc_ipc_get_handle(ctx, ptr, bytes, &h);
  if (s != NBC_OK) return nbc__py_raise(st, s);
  return (PyObject *)handle_new(st, &h, memory);
}

static PyObject *export(nbc__py_state *st, PyObject *memory, nbc_context_t *ctx,
                        PyObject **pdesc) {
  nbc_devptr_t mptr;
  size_t msize;
  if (!pdesc && nbc__py_memptr_range(st, memory, &mptr, &msize)) /* numba's array.gpu_data */
    return export_range(st, memory, ctx, mptr, msize);
  PyObject *cai = PyObject_GetAttr(memory, st->str_cai);
  if (!cai) return NULL;
  PyObject *data = PyDict_Check(cai) ? PyDict_GetItemString(cai, "data") : NULL;
  PyObject *shape = PyDict_Check(cai) ? PyDict_GetItemString(cai, "shape") : NULL;
  PyObject *typestr = PyDict_Check(cai) ? PyDict_GetItemString(cai, "typestr") : NULL;
  PyObject *strides = PyDict_Check(cai) ? PyDict_GetItemString(cai, "strides") : NULL;
  PyObject *result = NULL, *desc = NULL;
  if (!data || !PyTuple_Check(data) || PyTuple_GET_SIZE(data) < 1 || !shape || !typestr) {
    PyErr_SetString(PyExc_TypeError, "get_ipc_handle: not a valid __cuda_array_interface__");
    goto done;
  }
  unsigned long long ptr = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(data, 0));
  if (PyErr_Occurred()) goto done;
  size_t bytes;
  desc = array_desc(st, shape, typestr, strides ? strides : Py_None, &bytes);
  if (!desc) goto done;
  result = export_range(st, memory, ctx, ptr, bytes);
  if (result && pdesc) *pdesc = Py_NewRef(desc);
done:
  Py_DECREF(cai);
  Py_XDECREF(desc);
  return result;
}

PyObject *nbc__py_ipc_array_get_handle(PyObject *array, PyObject *unused) {
  (void)unused;
  nbc__py_state *st = nbc__py_state_of(array);
  /* after a reset the address may be another allocation's, which must not be exported */
  if (Py_TYPE(array) == st->DeviceArrayType &&
      nbc__py_array_alive(st, (const ArrayObject *)array, "DeviceNDArray.get_ipc_handle") < 0)
    return NULL;
  PyObject *desc = NULL;
  PyObject *h = export(st, array, NULL, &desc);
  if (!h) return NULL;
  /* numba's desc is the array's own shape, strides and dtype objects. */
  PyObject *r = NULL;
  PyObject *dtype = PyObject_GetAttrString(array, "dtype");
  if (dtype && PyDict_SetItemString(desc, "dtype", dtype) == 0)
    r = array_handle_make(st, h, desc);
  Py_XDECREF(dtype);
  Py_DECREF(h);
  Py_DECREF(desc);
  return r;
}

PyObject *nbc__py_ipc_context_get_handle(PyObject *context, PyObject *memory) {
  nbc__py_state *st = nbc__py_state_of(context);
  nbc_context_t *ctx;
  if (context_arg(st, context, &ctx) < 0) return NULL;
  return export(st, memory, ctx, NULL);
}

/* ------------------------------------------------------------ open_ipc_array ---------- */

static PyObject *py_open_ipc_array(PyObject *module, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"handle", "shape", "dtype", "strides", "offset", NULL};
  PyObject *handle, *shape, *dtype, *strides = Py_None;
  unsigned long long offset = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|OK:open_ipc_array", kwlist, &handle,
                                   &shape, &dtype, &strides, &offset))
    return NULL;
  nbc__py_state *st = nbc__py_module_state(module);
  PyObject *bytes = PyBytes_FromObject(handle);
  if (!bytes) return NULL;
  if (PyBytes_GET_SIZE(bytes) != NBC_IPC_HANDLE_SIZE) {
    PyErr_Format(PyExc_ValueError, "open_ipc_array: an IPC handle has %d bytes, not %zd",
                 NBC_IPC_HANDLE_SIZE, PyBytes_GET_SIZE(bytes));
    Py_DECREF(bytes);
    return NULL;
  }
  size_t size;
  PyObject *desc = array_desc(st, shape, dtype, strides, &size);
  PyObject *r = NULL;
  if (desc) {
    nbc_ipc_handle_t h;
    nbc_ipc_handle_from_bytes(PyBytes_AS_STRING(bytes), offset, size, &h);
    PyObject *ipc = (PyObject *)handle_new(st, &h, NULL);
    if (ipc) r = array_handle_make(st, ipc, desc);
    Py_XDECREF(ipc);
  }
  Py_DECREF(bytes);
  Py_XDECREF(desc);
  return r;
}

static PyMethodDef ipc_functions[] = {
    {"open_ipc_array", (PyCFunction)(void (*)(void))py_open_ipc_array,
     METH_VARARGS | METH_KEYWORDS,
     "open_ipc_array($module, handle, shape, dtype, strides=None, offset=0)\n--\n\n"
     "A context manager giving a device array over the memory of a raw 64-byte IPC handle; "
     "closed at the exit."},
    {"_rebuild_ipc_handle", py_rebuild_ipc_handle, METH_VARARGS, "_rebuild_ipc_handle($module, "
                                                                 "*state)\n--\n\n"
                                                                 "Unpickles an IpcHandle."},
    {NULL, NULL, 0, NULL},
};

int nbc__py_ipc_init(PyObject *module, nbc__py_state *st) {
  st->IpcHandleType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &handle_spec, NULL);
  if (!st->IpcHandleType) return -1;
  st->IpcArrayHandleType =
      (PyTypeObject *)PyType_FromModuleAndSpec(module, &array_handle_spec, NULL);
  if (!st->IpcArrayHandleType) return -1;
  if (PyModule_AddType(module, st->IpcHandleType) < 0 ||
      PyModule_AddType(module, st->IpcArrayHandleType) < 0)
    return -1;
  return PyModule_AddFunctions(module, ipc_functions);
}
