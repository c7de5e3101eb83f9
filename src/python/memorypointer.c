/* memorypointer.c — MemoryPointer: raw device memory, as numba's Context.memalloc(bytesize)
 * returns it (an AutoFreePointer), DeviceNDArray.gpu_data, and numba's constructor
 * MemoryPointer(context, pointer, size, owner=None, finalizer=None) over memory from elsewhere
 * (EMM plugins, emm.c: freeing it calls the finalizer).
 *
 * A MemoryPointer is the address and size of device memory with numba's fields: context,
 * device_pointer and handle (the address as an int: numba's CUdeviceptr converts with
 * int()), device_pointer_value (None for the NULL pointer), device_ctypes_pointer (a
 * ctypes.c_size_t), size, owner, and __cuda_memory__. Methods: memset(byte, count=None,
 * stream=0), view(start, stop=None), own(), free().
 *
 * Ownership follows numba's AutoFreePointer: the pointer memalloc returns owns the
 * allocation, and views (view(), own()) hold their owner, so the memory is freed when the
 * last of them goes away, or at once by owner.free() (numba: "Freeing dead memory" when
 * called twice; a view's free() does nothing, as numba's plain MemoryPointer). gpu_data of an
 * array is a view whose owner is the array. Unlike numba, memset and view refuse ranges
 * outside the memory (ValueError) instead of passing them to the driver, and memory that was
 * freed cannot be used any more: ValueError after free(), CudaAPIError after a reset of its
 * context (as arrays). Pointers to the same address and size compare equal.
 */
#include "nbcuda_py.h"

typedef struct {
  PyObject_HEAD
  nbc_devptr_t ptr;
  size_t size;
  PyObject *context;   /* the Context, or NULL when not known */
  nbc_context_t *cctx; /* its C context */
  unsigned lifetime;   /* nbc_context_lifetime(cctx) when the memory was allocated */
  PyObject *owner;     /* views: what keeps the memory (a MemoryPointer or an array) */
  int live;            /* owners: not freed yet */
  /* made by MemoryPointer(...) over memory nbcuda did not allocate: freeing it is calling
   * finalizer (once; None: nothing), not nbc_mem_free */
  int foreign;
  PyObject *finalizer;
} MemPtrObject;

static nbc__py_state *state(MemPtrObject *self) { return nbc__py_state_of((PyObject *)self); }

static int memptr_traverse(MemPtrObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->context);
  Py_VISIT(self->owner);
  Py_VISIT(self->finalizer);
  return 0;
}

static int memptr_clear(MemPtrObject *self) {
  Py_CLEAR(self->context);
  Py_CLEAR(self->owner);
  Py_CLEAR(self->finalizer);
  return 0;
}

/* Frees an owner's memory once; not after a reset of its context (the memory went with it,
 * and its address may be someone else's now). */
static nbc_status_t release(MemPtrObject *self) {
  if (self->owner || !self->live) return NBC_OK;
  self->live = 0;
  if (self->foreign) { /* numba's finalizer: called once, its errors unraisable */
    PyObject *fin = self->finalizer;
    self->finalizer = NULL;
    PyObject *r = fin && fin != Py_None ? PyObject_CallNoArgs(fin) : Py_NewRef(Py_None);
    if (!r) PyErr_WriteUnraisable(fin);
    Py_XDECREF(r);
    Py_XDECREF(fin);
    return NBC_OK;
  }
  if (!self->ptr || nbc_context_lifetime(self->cctx) != self->lifetime) return NBC_OK;
  return nbc_mem_free(self->ptr);
}

static void memptr_dealloc(MemPtrObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  release(self); /* a failure cannot be reported from here; numba stays silent too */
  memptr_clear(self);
  tp->tp_free(self);
  Py_DECREF(tp);
}

static MemPtrObject *memptr_new(nbc__py_state *st) {
  MemPtrObject *m = PyObject_GC_New(MemPtrObject, st->MemoryPointerType);
  if (!m) return NULL;
  m->ptr = 0;
  m->size = 0;
  m->context = m->owner = NULL;
  m->cctx = NULL;
  m->lifetime = 0;
  m->live = 0;
  m->foreign = 0;
  m->finalizer = NULL;
  PyObject_GC_Track(m);
  return m;
}

int nbc__py_memptr_range(nbc__py_state *st, PyObject *obj, nbc_devptr_t *pptr, size_t *psize) {
  if (!PyObject_TypeCheck(obj, st->MemoryPointerType)) return 0;
  *pptr = ((MemPtrObject *)obj)->ptr;
  *psize = ((MemPtrObject *)obj)->size;
  return 1;
}

PyObject *nbc__py_memptr_view(nbc__py_state *st, PyObject *owner, PyObject *context,
                              nbc_context_t *cctx, unsigned lifetime, nbc_devptr_t ptr,
                              size_t size) {
  MemPtrObject *m = memptr_new(st);
  if (!m) return NULL;
  m->ptr = ptr;
  m->size = size;
  m->context = Py_XNewRef(context);
  m->cctx = cctx;
  m->lifetime = lifetime;
  m->owner = Py_XNewRef(owner); /* NULL: the memory is its own */
  m->live = 1;
  return (PyObject *)m;
}

/* 0 while the memory can be used; -1 with CudaAPIError after free() or a reset. */
static int usable(MemPtrObject *self, const char *call) {
  MemPtrObject *root = self;
  while (root->owner && Py_TYPE(root->owner) == Py_TYPE(self))
    root = (MemPtrObject *)root->owner;
  if (!root->owner && !root->live) {
    PyErr_Format(PyExc_ValueError, "%s: the memory was freed", call);
    return -1;
  }
  nbc_status_t s = nbc_context_check_lifetime(self->cctx, self->lifetime, call, "memory");
  return s == NBC_OK ? 0 : nbc__py_raise_int(state(self), s);
}

PyObject *nbc__py_memptr_owned(nbc__py_state *st, PyObject *context, nbc_context_t *cctx,
                               nbc_devptr_t ptr, size_t size) {
  return nbc__py_memptr_view(st, NULL, context, cctx, nbc_context_lifetime(cctx), ptr, size);
}

/* ------------------------------------------------------------ Context.memalloc --------- */

/* _memalloc(bytesize): Context.memalloc runs it with its context pushed (context.c). */
static PyObject *py_memalloc(PyObject *module, PyObject *arg) {
  nbc__py_state *st = nbc__py_module_state(module);
  Py_ssize_t bytes = PyNumber_AsSsize_t(arg, PyExc_OverflowError);
  if (bytes == -1 && PyErr_Occurred()) return NULL;
  if (bytes < 0) {
    PyErr_Format(PyExc_ValueError, "memalloc: negative size %zd", bytes);
    return NULL;
  }
  MemPtrObject *m = memptr_new(st);
  if (!m) return NULL;
  PyObject *plugin_pointer = NULL; /* an EMM plugin's memalloc answer is numba's too */
  m->context = nbc__py_device_alloc(st, (size_t)bytes, &m->ptr, &m->cctx, &plugin_pointer);
  if (!m->context || plugin_pointer) {
    Py_DECREF(m);
    return plugin_pointer;
  }
  m->size = (size_t)bytes;
  m->lifetime = nbc_context_lifetime(m->cctx);
  m->live = 1;
  return (PyObject *)m;
}

/* numba's MemoryPointer(context, pointer, size, owner=None, finalizer=None): memory from
 * elsewhere (an EMM plugin's memalloc): with an owner it is a view keeping the owner alive;
 * without one, freeing it (free(), or its death) calls finalizer() once. */
static PyObject *memptr_construct(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"context", "pointer", "size", "owner", "finalizer", NULL};
  PyObject *context, *pointer, *owner = Py_None, *finalizer = Py_None;
  Py_ssize_t size;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOn|OO:MemoryPointer", kwlist, &context,
                                   &pointer, &size, &owner, &finalizer))
    return NULL;
  nbc__py_state *st = (nbc__py_state *)PyType_GetModuleState(type);
  if (size < 0) {
    PyErr_Format(PyExc_ValueError, "MemoryPointer: negative size %zd", size);
    return NULL;
  }
  if (finalizer != Py_None && !PyCallable_Check(finalizer)) {
    PyErr_SetString(PyExc_TypeError, "MemoryPointer: finalizer must be callable");
    return NULL;
  }
  /* an int, or a ctypes pointer (c_void_p, c_uint64: its value; None is NULL) */
  PyObject *value = PyLong_Check(pointer) ? Py_NewRef(pointer)
                                          : PyObject_GetAttrString(pointer, "value");
  unsigned long long ptr = 0;
  if (value && value != Py_None) ptr = PyLong_AsUnsignedLongLong(value);
  Py_XDECREF(value);
  if (!value || PyErr_Occurred()) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "MemoryPointer: pointer must be an int or a ctypes pointer, "
                 "not %.200s", Py_TYPE(pointer)->tp_name);
    return NULL;
  }
  int is_context = PyObject_TypeCheck(context, st->ContextType);
  MemPtrObject *m = memptr_new(st);
  if (!m) return NULL;
  m->ptr = (nbc_devptr_t)ptr;
  m->size = (size_t)size;
  m->context = is_context ? Py_NewRef(context) : NULL;
  m->cctx = is_context ? nbc__py_context_handle(context) : NULL;
  m->lifetime = m->cctx ? nbc_context_lifetime(m->cctx) : 0;
  m->live = 1;
  m->foreign = 1;
  if (owner != Py_None)
    m->owner = Py_NewRef(owner);
  else
    m->finalizer = Py_NewRef(finalizer);
  return (PyObject *)m;
}

/* ------------------------------------------------------------ methods ----------------- */

static PyObject *memptr_free(MemPtrObject *self, PyObject *unused) {
  (void)unused;
  if (self->owner) Py_RETURN_NONE; /* a view: numba's plain MemoryPointer frees nothing */
  if (!self->live) {
    PyErr_SetString(PyExc_RuntimeError, "Freeing dead memory");
    return NULL;
  }
  nbc_status_t s = release(self);
  if (s != NBC_OK) return nbc__py_raise(state(self), s);
  Py_RETURN_NONE;
}

static PyObject *memptr_memset(MemPtrObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"byte", "count", "stream", NULL};
  int byte;
  PyObject *count_obj = Py_None, *stream_obj = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "i|OO:memset", kwlist, &byte, &count_obj,
                                   &stream_obj))
    return NULL;
  size_t count = self->size;
  if (count_obj != Py_None) {
    Py_ssize_t n = PyNumber_AsSsize_t(count_obj, PyExc_OverflowError);
    if (n == -1 && PyErr_Occurred()) return NULL;
    if (n < 0 || (size_t)n > self->size) {
      PyErr_Format(PyExc_ValueError, "memset: count %zd is outside the %zu bytes of memory", n,
                   self->size);
      return NULL;
    }
    count = (size_t)n;
  }
  if (usable(self, "cuMemsetD8") < 0) return NULL;
  nbc__py_state *st = state(self);
  nbc_stream_t *stream = NULL, *temp = NULL;
  int given = stream_obj ? PyObject_IsTrue(stream_obj) : 0; /* numba: `if stream:` */
  if (given < 0) return NULL;
  if (given && nbc__py_stream_arg(st, stream_obj, &stream, &temp) < 0) return NULL;
  nbc_status_t s;
  if (given)
    s = nbc_memset_d8_async(self->ptr, (unsigned char)byte, count, stream);
  else
    s = nbc_memset_d8(self->ptr, (unsigned char)byte, count);
  nbc_stream_destroy(temp);
  if (s != NBC_OK) return nbc__py_raise(st, s);
  Py_RETURN_NONE;
}

/* The pointer that owns the memory of self (itself when it owns it). */
static PyObject *owner_of(MemPtrObject *self) {
  return self->owner ? self->owner : (PyObject *)self;
}

static PyObject *memptr_view(MemPtrObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"start", "stop", NULL};
  Py_ssize_t start, stop = -1;
  PyObject *stop_obj = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "n|O:view", kwlist, &start, &stop_obj))
    return NULL;
  if (stop_obj != Py_None) {
    stop = PyNumber_AsSsize_t(stop_obj, PyExc_OverflowError);
    if (stop == -1 && PyErr_Occurred()) return NULL;
  } else {
    stop = (Py_ssize_t)self->size;
  }
  if (stop < start) {
    PyErr_SetString(PyExc_RuntimeError, "size cannot be negative"); /* numba's words */
    return NULL;
  }
  if (!self->ptr) {
    if (stop != start) {
      PyErr_SetString(PyExc_RuntimeError, "non-empty slice into empty slice");
      return NULL;
    }
    return Py_NewRef(self);
  }
  if (start < 0 || (size_t)stop > self->size) {
    PyErr_Format(PyExc_ValueError, "view(%zd, %zd) is outside the %zu bytes of memory", start,
                 stop, self->size);
    return NULL;
  }
  return nbc__py_memptr_view(state(self), owner_of(self), self->context, self->cctx,
                             self->lifetime, self->ptr + (nbc_devptr_t)start,
                             (size_t)(stop - start));
}

static PyObject *memptr_own(MemPtrObject *self, PyObject *unused) {
  (void)unused;
  return nbc__py_memptr_view(state(self), owner_of(self), self->context, self->cctx,
                             self->lifetime, self->ptr, self->size);
}

/* ------------------------------------------------------------ attributes -------------- */

static PyObject *get_context(MemPtrObject *self, void *c) {
  (void)c;
  return Py_NewRef(self->context ? self->context : Py_None);
}

static PyObject *get_pointer(MemPtrObject *self, void *c) {
  (void)c;
  return PyLong_FromUnsignedLongLong(self->ptr);
}

static PyObject *get_pointer_value(MemPtrObject *self, void *c) {
  (void)c;
  if (!self->ptr) Py_RETURN_NONE;
  return PyLong_FromUnsignedLongLong(self->ptr);
}

static PyObject *get_ctypes_pointer(MemPtrObject *self, void *c) {
  (void)c;
  return nbc__py_ctypes_size_t(self->ptr);
}

static PyObject *get_size(MemPtrObject *self, void *c) {
  (void)c;
  return PyLong_FromSize_t(self->size);
}

static PyObject *get_owner(MemPtrObject *self, void *c) {
  (void)c;
  return Py_NewRef(owner_of(self));
}

static PyObject *get_true(MemPtrObject *self, void *c) {
  (void)self;
  (void)c;
  Py_RETURN_TRUE;
}

static PyObject *memptr_repr(MemPtrObject *self) {
  return PyUnicode_FromFormat("<nbcuda.MemoryPointer %p of %zu bytes%s>",
                              (void *)(uintptr_t)self->ptr, self->size,
                              !self->owner && !self->live ? " (freed)" : "");
}

static PyMethodDef memptr_methods[] = {
    {"free", (PyCFunction)memptr_free, METH_NOARGS,
     "free($self, /)\n--\n\n"
     "Frees the memory now (the owner only; a view's free() does nothing)."},
    {"memset", (PyCFunction)(void (*)(void))memptr_memset, METH_VARARGS | METH_KEYWORDS,
     "memset($self, byte, count=None, stream=0)\n--\n\n"
     "Sets count bytes (all by default); queued on the stream when one is given."},
    {"view", (PyCFunction)(void (*)(void))memptr_view, METH_VARARGS | METH_KEYWORDS,
     "view($self, start, stop=None)\n--\n\n"
     "A MemoryPointer over bytes [start, stop) that keeps the memory alive."},
    {"own", (PyCFunction)memptr_own, METH_NOARGS,
     "own($self, /)\n--\n\n"
     "A MemoryPointer over the whole memory that keeps it alive."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef memptr_getset[] = {
    {"context", (getter)get_context, NULL, "the Context the memory belongs to", NULL},
    {"device_pointer", (getter)get_pointer, NULL, "the device address as an int", NULL},
    {"handle", (getter)get_pointer, NULL, "the device address as an int", NULL},
    {"device_pointer_value", (getter)get_pointer_value, NULL,
     "the device address, or None for the NULL pointer", NULL},
    {"device_ctypes_pointer", (getter)get_ctypes_pointer, NULL,
     "the device address as a ctypes.c_size_t", NULL},
    {"size", (getter)get_size, NULL, "bytes", NULL},
    {"_cuda_memsize_", (getter)get_size, NULL, "bytes", NULL},
    {"owner", (getter)get_owner, NULL, "the object that owns the memory", NULL},
    {"__cuda_memory__", (getter)get_true, NULL, "True: device memory", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* Two pointers are equal when they name the same memory: address and size (numba's views
 * share one gpu_data object, `a.view(np.int64).gpu_data == a.gpu_data`; here each access
 * makes one). Hashed the same way. */
static PyObject *memptr_richcompare(PyObject *a, PyObject *b, int op) {
  if ((op != Py_EQ && op != Py_NE) || Py_TYPE(b) != Py_TYPE(a)) Py_RETURN_NOTIMPLEMENTED;
  const MemPtrObject *x = (const MemPtrObject *)a, *y = (const MemPtrObject *)b;
  int same = x->ptr == y->ptr && x->size == y->size;
  return PyBool_FromLong(op == Py_EQ ? same : !same);
}

static Py_hash_t memptr_hash(PyObject *self) {
  const MemPtrObject *m = (const MemPtrObject *)self;
  Py_hash_t h = (Py_hash_t)(m->ptr ^ (m->size * 1000003u));
  return h == -1 ? -2 : h;
}

static PyType_Slot memptr_slots[] = {
    {Py_tp_richcompare, memptr_richcompare},
    {Py_tp_hash, memptr_hash},
    {Py_tp_dealloc, memptr_dealloc},
    {Py_tp_traverse, memptr_traverse},
    {Py_tp_clear, memptr_clear},
    {Py_tp_repr, memptr_repr},
    {Py_tp_methods, memptr_methods},
    {Py_tp_getset, memptr_getset},
    {Py_tp_new, memptr_construct},
    {Py_tp_doc, (void *)"MemoryPointer(context, pointer, size, owner=None, finalizer=None)\n--\n\n"
                        "Device memory from Context.memalloc(), a view of device memory, or "
                        "memory from elsewhere (an EMM plugin's) over pointer."},
    {0, NULL},
};

static PyType_Spec memptr_spec = {
    .name = "nbcuda.MemoryPointer",
    .basicsize = sizeof(MemPtrObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = memptr_slots,
};

static PyMethodDef memptr_functions[] = {
    {"_memalloc", py_memalloc, METH_O,
     "_memalloc($module, bytesize, /)\n--\n\n"
     "Device memory in the current context (Context.memalloc)."},
    {NULL, NULL, 0, NULL},
};

int nbc__py_memptr_init(PyObject *module, nbc__py_state *st) {
  st->MemoryPointerType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &memptr_spec, NULL);
  if (!st->MemoryPointerType) return -1;
  if (PyModule_AddObjectRef(module, "MemoryPointer", (PyObject *)st->MemoryPointerType) < 0)
    return -1;
  return PyModule_AddFunctions(module, memptr_functions);
}
