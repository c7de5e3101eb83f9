/* hostmemory.c — host memory the device can reach, as numba.cuda offers it: pinned_array,
 * mapped_array, managed_array (and their *_like forms), the scopes `with pinned(*arrays):`
 * and `with mapped(*arrays) as devarys:`, and `with defer_cleanup():`.
 *
 * The memory is owned by a _HostMemory object (page-locked, mapped, managed or registered
 * memory of the C library, hostmem.c), which exports it through the buffer protocol; the
 * arrays are numpy arrays made on that buffer (numpy.ndarray(shape, dtype, strides, order,
 * buffer=owner)), so numpy keeps the owner alive through `base` and the memory is freed when
 * the last array or view goes away. pinned_array returns a plain numpy array, as numba does.
 * mapped_array and managed_array return instances of MappedNDArray / ManagedNDArray,
 * subclasses of numpy.ndarray made once per module on first use (numpy is imported lazily),
 * whose only addition is __cuda_array_interface__: it walks `base` to the owner and gives
 * the device address of the array's first element (the mapped address of page-locked memory
 * may differ from its host address), so nbcuda kernels, to_device() and other CUDA libraries
 * take them without a copy; views and slices keep the class and so the interface.
 *
 * pinned() and mapped() pin the arrays' memory (cuMemHostRegister) on entering the block and
 * unpin it on leaving, also when the body raised; mapped() yields device arrays on the mapped
 * addresses (one, or a list for several arrays). defer_cleanup() opens a deferred-cleanup
 * scope of the current context in the C library (nbc_context_defer_cleanup_begin/end): frees
 * of device and page-locked memory requested inside it happen when the outermost scope ends.
 */
#include "nbcuda_py.h"

#include <string.h>

enum host_kind { HOST_PINNED, HOST_MAPPED, HOST_MANAGED, HOST_REGISTERED };

typedef struct {
  PyObject_HEAD
  enum host_kind kind;
  void *host;               /* first byte */
  nbc_devptr_t dptr;        /* device address of host[0]; 0 when not mapped */
  Py_ssize_t nbytes;        /* what the buffer exports (may be 0) */
  int live;                 /* not yet freed / unregistered */
  nbc_context_t *context;   /* the context allocated in (not for registrations), */
  unsigned lifetime;        /* and nbc_context_lifetime(context) then */
  PyObject *stream;         /* CAI "stream" value: None or the stream handle */
  PyObject *stream_arg;     /* the stream as given (numba's .stream): a Stream or 0 */
  PyObject *pinned;         /* the object whose memory is registered (HOST_REGISTERED) */
  PyObject *cai;            /* __cuda_array_interface__ of a registered array (mapped()) */
} HostMemObject;

static const char *const kind_names[] = {"pinned", "mapped", "managed", "registered"};

/* ------------------------------------------------------------ _HostMemory -------------- */

static HostMemObject *hostmem_new(nbc__py_state *st, enum host_kind kind) {
  HostMemObject *m = PyObject_GC_New(HostMemObject, st->HostMemType);
  if (!m) return NULL;
  m->kind = kind;
  m->host = NULL;
  m->dptr = 0;
  m->nbytes = 0;
  m->live = 0;
  m->context = NULL;
  m->lifetime = 0;
  m->stream = Py_NewRef(Py_None);
  m->stream_arg = NULL;
  m->pinned = NULL;
  m->cai = NULL;
  PyObject_GC_Track(m);
  return m;
}

/* Frees or unpins the memory once; the C library's status. */
static nbc_status_t hostmem_release(HostMemObject *m) {
  if (!m->live) return NBC_OK;
  m->live = 0;
  switch (m->kind) {
  case HOST_PINNED:
  case HOST_MAPPED: return nbc_mem_host_free(m->host);
  case HOST_REGISTERED: return nbc_mem_host_unregister(m->host);
  case HOST_MANAGED: return nbc_mem_free(m->dptr); /* it held its context (OUTLIVE_RESET) */
  }
  return NBC_OK;
}

static int hostmem_traverse(HostMemObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->stream);
  Py_VISIT(self->stream_arg);
  Py_VISIT(self->pinned);
  Py_VISIT(self->cai);
  return 0;
}

static int hostmem_clear(HostMemObject *self) {
  Py_CLEAR(self->stream);
  Py_CLEAR(self->stream_arg);
  Py_CLEAR(self->pinned);
  Py_CLEAR(self->cai);
  return 0;
}

static void hostmem_dealloc(HostMemObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  hostmem_release(self); /* a failure cannot be reported from here; numba stays silent too */
  hostmem_clear(self);
  tp->tp_free(self);
  Py_DECREF(tp);
}

static int hostmem_getbuffer(HostMemObject *self, Py_buffer *view, int flags) {
  if (!self->live || self->kind == HOST_REGISTERED) {
    PyErr_SetString(PyExc_BufferError, "the host memory was freed");
    return -1;
  }
  return PyBuffer_FillInfo(view, (PyObject *)self, self->host, self->nbytes, 0, flags);
}

static PyObject *hostmem_repr(HostMemObject *self) {
  return PyUnicode_FromFormat("<nbcuda %s host memory of %zd bytes at %p%s>",
                              kind_names[self->kind], self->nbytes, self->host,
                              self->live ? "" : " (freed)");
}

static PyObject *hostmem_get_cai(HostMemObject *self, void *closure) {
  (void)closure;
  if (!self->cai) {
    PyErr_SetString(PyExc_AttributeError, "__cuda_array_interface__");
    return NULL;
  }
  return Py_NewRef(self->cai);
}

static PyObject *hostmem_get_device_pointer(HostMemObject *self, void *closure) {
  (void)closure;
  if (!self->dptr) Py_RETURN_NONE;
  return PyLong_FromUnsignedLongLong(self->dptr);
}

static PyObject *hostmem_get_host_pointer(HostMemObject *self, void *closure) {
  (void)closure;
  return PyLong_FromVoidPtr(self->host);
}

static PyObject *hostmem_get_size(HostMemObject *self, void *closure) {
  (void)closure;
  return PyLong_FromSsize_t(self->nbytes);
}

/* numba's .handle: the device address of mapped and managed memory, else the host address. */
static PyObject *hostmem_get_handle(HostMemObject *self, void *closure) {
  (void)closure;
  if (self->dptr) return PyLong_FromUnsignedLongLong(self->dptr);
  return PyLong_FromVoidPtr(self->host);
}

/* numba's .owner: the object whose memory mempin registered, else the memory itself. */
static PyObject *hostmem_get_owner(HostMemObject *self, void *closure) {
  (void)closure;
  return Py_NewRef(self->pinned ? self->pinned : (PyObject *)self);
}

static PyObject *hostmem_get_ctypes_pointer(HostMemObject *self, void *closure) {
  (void)closure;
  return nbc__py_ctypes_size_t(self->dptr);
}

static PyObject *hostmem_get_kind(HostMemObject *self, void *closure) {
  (void)closure;
  return PyUnicode_FromString(kind_names[self->kind]);
}

static PyObject *hostmem_free(HostMemObject *self, PyObject *unused) {
  (void)unused;
  nbc_status_t s = hostmem_release(self);
  if (s != NBC_OK) return nbc__py_raise(nbc__py_state_of((PyObject *)self), s);
  Py_RETURN_NONE;
}

static PyGetSetDef hostmem_getset[] = {
    {"__cuda_array_interface__", (getter)hostmem_get_cai, NULL,
     "The mapped array's interface (memory registered by mapped() only).", NULL},
    {"device_pointer", (getter)hostmem_get_device_pointer, NULL,
     "The device address of the first byte, or None when the memory is not mapped.", NULL},
    {"host_pointer", (getter)hostmem_get_host_pointer, NULL, "The host address.", NULL},
    {"size", (getter)hostmem_get_size, NULL, "Bytes.", NULL},
    {"kind", (getter)hostmem_get_kind, NULL, "'pinned', 'mapped', 'managed', 'registered'.",
     NULL},
    {"handle", (getter)hostmem_get_handle, NULL,
     "The device address of mapped or managed memory, else the host address.", NULL},
    {"owner", (getter)hostmem_get_owner, NULL,
     "The object whose memory mempin() registered, else this memory.", NULL},
    {"device_pointer_value", (getter)hostmem_get_device_pointer, NULL,
     "The device address, or None when the memory is not mapped.", NULL},
    {"device_ctypes_pointer", (getter)hostmem_get_ctypes_pointer, NULL,
     "The device address as a ctypes.c_size_t (0 when not mapped).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef hostmem_methods[] = {
    {"free", (PyCFunction)hostmem_free, METH_NOARGS,
     "free($self, /)\n--\n\n"
     "Frees (or unpins) the memory now; arrays on it must not be used afterwards."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot hostmem_slots[] = {
    {Py_tp_dealloc, hostmem_dealloc},
    {Py_tp_traverse, hostmem_traverse},
    {Py_tp_clear, hostmem_clear},
    {Py_tp_repr, hostmem_repr},
    {Py_tp_getset, hostmem_getset},
    {Py_tp_methods, hostmem_methods},
    {Py_bf_getbuffer, hostmem_getbuffer},
    {Py_tp_doc, (void *)"Page-locked, mapped or managed host memory owned by nbcuda."},
    {0, NULL},
};

static PyType_Spec hostmem_spec = {
    .name = "nbcuda._HostMemory",
    .basicsize = sizeof(HostMemObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION |
             Py_TPFLAGS_IMMUTABLETYPE,
    .slots = hostmem_slots,
};

/* ------------------------------------------------------------ the array classes ------- */

/* The _HostMemory at the end of arr's `base` chain; a borrowed reference, or NULL with
 * TypeError. */
static HostMemObject *owner_of(nbc__py_state *st, PyObject *arr) {
  PyObject *o = Py_NewRef(arr);
  for (int depth = 0; depth < 64 && o != Py_None; depth++) {
    if (Py_TYPE(o) == st->HostMemType) {
      Py_DECREF(o); /* the array holds it */
      return (HostMemObject *)o;
    }
    PyObject *base = PyObject_GetAttrString(o, "base");
    Py_DECREF(o);
    if (!base) {
      PyErr_Clear();
      break;
    }
    o = base;
  }
  if (o) Py_DECREF(o);
  PyErr_SetString(PyExc_TypeError,
                  "this array does not view memory from mapped_array() or managed_array()");
  return NULL;
}

/* __cuda_array_interface__ of a MappedNDArray / ManagedNDArray (a property's getter). */
static PyObject *array_cai(PyObject *module, PyObject *arr) {
  nbc__py_state *st = nbc__py_module_state(module);
  HostMemObject *m = owner_of(st, arr);
  if (!m) return NULL;
  if (!m->live || !m->dptr) {
    PyErr_SetString(PyExc_ValueError, "the array's memory was freed");
    return NULL;
  }
  if (nbc_context_lifetime(m->context) != m->lifetime) {
    PyErr_Format(PyExc_ValueError,
                 "the %s array's memory is no longer on the device: its context was reset "
                 "(cuda.close() or Device.reset()) after the array was made; the array stays "
                 "valid on the host",
                 kind_names[m->kind]);
    return NULL;
  }
  PyObject *ai = PyObject_GetAttrString(arr, "__array_interface__");
  if (!ai) return NULL;
  PyObject *cai = NULL, *data = NULL;
  PyObject *shape = PyDict_GetItemString(ai, "shape");
  PyObject *typestr = PyDict_GetItemString(ai, "typestr");
  PyObject *strides = PyDict_GetItemString(ai, "strides");
  PyObject *hdata = PyDict_GetItemString(ai, "data");
  if (!shape || !typestr || !hdata || !PyTuple_Check(hdata) || PyTuple_GET_SIZE(hdata) < 1) {
    PyErr_SetString(PyExc_ValueError, "unexpected __array_interface__");
    goto done;
  }
  void *p = PyLong_AsVoidPtr(PyTuple_GET_ITEM(hdata, 0));
  if (PyErr_Occurred()) goto done;
  char *lo = m->host, *q = p;
  if (q < lo || q > lo + m->nbytes) {
    PyErr_SetString(PyExc_ValueError, "the array lies outside its mapped memory");
    goto done;
  }
  data = Py_BuildValue("(KO)", (unsigned long long)(m->dptr + (nbc_devptr_t)(q - lo)), Py_False);
  if (!data) goto done;
  cai = Py_BuildValue("{sOsOsOsOsisO}", "shape", shape, "strides", strides ? strides : Py_None,
                      "typestr", typestr, "data", data, "version", 3, "stream", m->stream);
  /* a structured dtype's fields: numpy's descr, as a device array of one exports them */
  PyObject *descr = PyDict_GetItemString(ai, "descr");
  if (cai && descr && PyUnicode_Check(typestr) && PyUnicode_READ_CHAR(typestr, 1) == 'V' &&
      PyDict_SetItemString(cai, "descr", descr) < 0)
    Py_CLEAR(cai);
done:
  Py_XDECREF(data);
  Py_DECREF(ai);
  return cai;
}

static PyMethodDef array_cai_def = {"__cuda_array_interface__", array_cai, METH_O,
                                    "The CUDA array interface (version 3) of the array."};

/* numba's MappedNDArray/ManagedNDArray .stream: the stream given when it was made, or 0. */
static PyObject *array_stream(PyObject *module, PyObject *arr) {
  HostMemObject *m = owner_of(nbc__py_module_state(module), arr);
  if (!m) return NULL;
  return m->stream_arg ? Py_NewRef(m->stream_arg) : PyLong_FromLong(0);
}

static PyMethodDef array_stream_def = {"stream", array_stream, METH_O,
                                       "The stream the array was made with (numba's .stream)."};

/* MappedNDArray or ManagedNDArray (made once): numpy.ndarray plus the interface. */
static PyObject *array_class(nbc__py_state *st, PyObject *module, enum host_kind kind) {
  PyObject **slot = kind == HOST_MANAGED ? &st->hostmem.managed_class : &st->hostmem.mapped_class;
  if (*slot) return *slot;
  PyObject *np = nbc__py_numpy(st);
  if (!np) return NULL;
  PyObject *ndarray = PyObject_GetAttrString(np, "ndarray");
  PyObject *fget = ndarray ? PyCFunction_NewEx(&array_cai_def, module, NULL) : NULL;
  PyObject *prop = fget ? PyObject_CallOneArg((PyObject *)&PyProperty_Type, fget) : NULL;
  PyObject *sget = prop ? PyCFunction_NewEx(&array_stream_def, module, NULL) : NULL;
  PyObject *sprop = sget ? PyObject_CallOneArg((PyObject *)&PyProperty_Type, sget) : NULL;
  PyObject *ns = sprop ? Py_BuildValue("{sOsOsOss}", "__cuda_array_interface__", prop,
                                       "stream", sprop, "__module__", st->module_name, "__doc__",
                                      kind == HOST_MANAGED
                                          ? "A numpy array on managed memory (managed_array)."
                                          : "A numpy array on mapped page-locked memory "
                                            "(mapped_array).")
                    : NULL;
  PyObject *cls = ns ? PyObject_CallFunction((PyObject *)&PyType_Type, "s(O)O",
                                             kind == HOST_MANAGED ? "ManagedNDArray"
                                                                  : "MappedNDArray",
                                             ndarray, ns)
                     : NULL;
  Py_XDECREF(ndarray);
  Py_XDECREF(fget);
  Py_XDECREF(prop);
  Py_XDECREF(sget);
  Py_XDECREF(sprop);
  Py_XDECREF(ns);
  *slot = cls;
  return cls;
}

/* ------------------------------------------------------------ shapes and sizes -------- */

typedef struct {
  PyObject *shape;   /* tuple of ints */
  PyObject *strides; /* tuple of ints */
  PyObject *dtype;   /* numpy dtype */
  Py_ssize_t nbytes; /* numba's memory_size_from_info */
} geometry;

static void geometry_clear(geometry *g) {
  Py_CLEAR(g->shape);
  Py_CLEAR(g->strides);
  Py_CLEAR(g->dtype);
}

/* An int or a sequence of ints as a tuple (numba accepts both for shape and strides). */
static PyObject *int_tuple(PyObject *obj, const char *what) {
  if (PyLong_Check(obj)) return PyTuple_Pack(1, obj);
  PyObject *seq = PySequence_Tuple(obj);
  if (!seq) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s must be an int or a tuple of ints, not %s", what,
                 Py_TYPE(obj)->tp_name);
    return NULL;
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(seq); i++) {
    PyObject *v = PyNumber_Index(PyTuple_GET_ITEM(seq, i));
    if (!v) {
      Py_DECREF(seq);
      return NULL;
    }
    Py_DECREF(v);
  }
  return seq;
}

PyObject *nbc__py_dense_strides(PyObject *shape, Py_ssize_t itemsize, char order) {
  Py_ssize_t nd = PyTuple_GET_SIZE(shape);
  PyObject *strides = PyTuple_New(nd);
  Py_ssize_t stride = itemsize;
  for (Py_ssize_t k = 0; strides && k < nd; k++) {
    Py_ssize_t d = order == 'C' ? nd - 1 - k : k;
    PyObject *v = PyLong_FromSsize_t(stride);
    if (!v) {
      Py_CLEAR(strides);
      break;
    }
    PyTuple_SET_ITEM(strides, d, v);
    Py_ssize_t extent = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, d));
    if (extent == -1 && PyErr_Occurred()) {
      Py_CLEAR(strides);
    } else if (extent > 0 && __builtin_mul_overflow(stride, extent, &stride)) {
      nbc__py_too_big();
      Py_CLEAR(strides);
    }
  }
  return strides;
}

/* numba's prepare_shape_strides_dtype and memory_size_from_info. */
static int geometry_get(nbc__py_state *st, PyObject *shape, PyObject *dtype, PyObject *strides,
                        const char *order, geometry *g) {
  memset(g, 0, sizeof *g);
  PyObject *np = nbc__py_numpy(st);
  if (!np) return -1;
  const char *ts = nbc__py_type_typestr(st, dtype); /* nbcuda.float32 and friends */
  g->dtype = ts ? PyObject_CallMethod(np, "dtype", "s", ts)
                : PyObject_CallMethod(np, "dtype", "(O)", dtype);
  if (!g->dtype) goto fail;
  PyObject *isz = PyObject_GetAttrString(g->dtype, "itemsize");
  Py_ssize_t itemsize = isz ? PyLong_AsSsize_t(isz) : -1;
  Py_XDECREF(isz);
  if (itemsize < 0) goto fail;
  if (!(g->shape = int_tuple(shape, "shape"))) goto fail;
  Py_ssize_t nd = PyTuple_GET_SIZE(g->shape);
  if (strides && strides != Py_None) {
    if (!(g->strides = int_tuple(strides, "strides"))) goto fail;
    if (PyTuple_GET_SIZE(g->strides) != nd) {
      PyErr_SetString(PyExc_ValueError, "strides must have one entry per dimension of shape");
      goto fail;
    }
  } else {
    if (strcmp(order, "C") != 0 && strcmp(order, "F") != 0) {
      PyErr_SetString(PyExc_ValueError, "must be either C/F order");
      goto fail;
    }
    if (!(g->strides = nbc__py_dense_strides(g->shape, itemsize, order[0]))) goto fail;
  }
  /* The extent from the lowest to the highest byte any index reaches (nbc__py_extent), read
   * up to the first empty dimension. */
  int64_t *dims = PyMem_Malloc(sizeof *dims * 2 * (size_t)(nd ? nd : 1)), bytes = 0;
  if (!dims) {
    PyErr_NoMemory();
    goto fail;
  }
  int empty = 0;
  for (Py_ssize_t d = 0; d < nd && !empty && !PyErr_Occurred(); d++) {
    dims[d] = PyLong_AsSsize_t(PyTuple_GET_ITEM(g->shape, d));
    dims[nd + d] = PyLong_AsSsize_t(PyTuple_GET_ITEM(g->strides, d));
    if (!PyErr_Occurred() && dims[d] < 0)
      PyErr_SetString(PyExc_ValueError, "negative dimensions are not allowed");
    empty = dims[d] == 0;
  }
  int bad = PyErr_Occurred() ||
            (!empty && nbc__py_extent((int)nd, dims, dims + nd, itemsize, &bytes) < 0);
  PyMem_Free(dims);
  if (bad) goto too_big;
  g->nbytes = (Py_ssize_t)bytes;
  return 0;
too_big: /* a shape or strides whose bytes do not fit: numpy's words */
  if (!PyErr_Occurred()) nbc__py_too_big();
fail:
  geometry_clear(g);
  return -1;
}

/* numpy.ndarray (or cls) on the owner's buffer. */
static PyObject *array_on(nbc__py_state *st, PyObject *cls, geometry *g, const char *order,
                          HostMemObject *m) {
  PyObject *np = nbc__py_numpy(st);
  PyObject *ndarray = cls ? Py_NewRef(cls) : PyObject_GetAttrString(np, "ndarray");
  if (!ndarray) return NULL;
  PyObject *args = PyTuple_New(0);
  PyObject *kw = args ? Py_BuildValue("{sOsOsOsssO}", "shape", g->shape, "dtype", g->dtype,
                                      "strides", g->strides, "order", order, "buffer", m)
                      : NULL;
  PyObject *arr = kw ? PyObject_Call(ndarray, args, kw) : NULL;
  Py_XDECREF(args);
  Py_XDECREF(kw);
  Py_DECREF(ndarray);
  return arr;
}

/* The CAI "stream" of a stream argument: None for the default stream, else its handle. */
static PyObject *stream_value(nbc__py_state *st, PyObject *stream) {
  nbc_stream_t *s = NULL, *temp = NULL;
  if (nbc__py_stream_arg(st, stream, &s, &temp) < 0) return NULL;
  uintptr_t h = s ? nbc_stream_handle(s) : 0;
  nbc_stream_destroy(temp);
  if (h == 0) Py_RETURN_NONE;
  return PyLong_FromSize_t((size_t)h);
}

/* ------------------------------------------------------------ allocating arrays ------- */

/* Allocates m's memory by its kind (pinned, mapped or managed) in the current context; -1
 * with the error set. */
static int hostmem_allocate(nbc__py_state *st, HostMemObject *m, size_t bytes, unsigned flags,
                            int attach_global) {
  nbc_status_t s;
  if (m->kind == HOST_MANAGED) {
    s = nbc_current_context(-1, &m->context); /* the context nbc_mem_alloc_managed uses */
    if (s == NBC_OK) m->lifetime = nbc_context_lifetime(m->context);
    if (s == NBC_OK)
      s = nbc_mem_alloc_managed(
          bytes, NBC_MANAGED_OUTLIVE_RESET | (attach_global ? NBC_MANAGED_ATTACH_GLOBAL : 0u),
          &m->dptr);
    m->host = (void *)(uintptr_t)m->dptr;
  } else {
    /* Arrays view the memory for as long as they live, also after a reset of the context
     * (cuda.close(), Device.reset()), which frees what cuMemHostAlloc gave: so the pages are
     * the C library's own, which a reset only unpins. Write-combining is the driver's only. */
    s = nbc_current_context(-1, &m->context);
    if (s == NBC_OK) m->lifetime = nbc_context_lifetime(m->context);
    flags = (flags & ~NBC_HOST_ALLOC_WRITECOMBINED) | NBC_HOST_ALLOC_OUTLIVE_RESET;
    if (s == NBC_OK) s = nbc_mem_host_alloc(bytes, flags, &m->host);
    if (s == NBC_OK) m->live = 1;
    if (s == NBC_OK && m->kind == HOST_MAPPED) s = nbc_mem_host_device_pointer(m->host, &m->dptr);
  }
  if (s == NBC_OK) m->live = 1;
  m->nbytes = (Py_ssize_t)bytes;
  return s == NBC_OK ? 0 : nbc__py_raise_int(st, s);
}

static PyObject *host_array(PyObject *module, enum host_kind kind, PyObject *shape,
                            PyObject *dtype, PyObject *strides, const char *order,
                            PyObject *stream, unsigned flags, int attach_global) {
  nbc__py_state *st = nbc__py_module_state(module);
  geometry g;
  if (geometry_get(st, shape, dtype, strides, order, &g) < 0) return NULL;
  PyObject *result = NULL, *cls = NULL;
  /* numpy would make an array of objects over the new memory's garbage */
  if (nbc__py_objects_check(g.dtype, kind_names[kind]) < 0) {
    geometry_clear(&g);
    return NULL;
  }
  HostMemObject *m = hostmem_new(st, kind);
  if (!m) goto done;
  if (kind != HOST_PINNED) {
    Py_SETREF(m->stream, stream_value(st, stream));
    m->stream_arg = stream && stream != Py_None ? Py_NewRef(stream) : PyLong_FromLong(0);
    if (!m->stream || !m->stream_arg || !(cls = array_class(st, module, kind))) goto done;
  }
  if (hostmem_allocate(st, m, (size_t)g.nbytes, flags, attach_global) < 0) goto done;
  result = array_on(st, cls, &g, order, m);
done:
  Py_XDECREF(m); /* the array holds it; without one the memory is freed here */
  geometry_clear(&g);
  return result;
}

static PyObject *py_pinned_array(PyObject *module, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"shape", "dtype", "strides", "order", NULL};
  PyObject *shape, *dtype = NULL, *strides = Py_None;
  const char *order = "C";
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OOs:pinned_array", kwlist, &shape, &dtype,
                                   &strides, &order))
    return NULL;
  PyObject *f8 = dtype ? NULL : PyUnicode_FromString("float64");
  PyObject *r = host_array(module, HOST_PINNED, shape, dtype ? dtype : f8, strides, order, NULL,
                           0, 1);
  Py_XDECREF(f8);
  return r;
}

static PyObject *py_mapped_array(PyObject *module, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"shape", "dtype", "strides", "order", "stream", "portable", "wc",
                           NULL};
  PyObject *shape, *dtype = NULL, *strides = Py_None, *stream = NULL;
  const char *order = "C";
  int portable = 0, wc = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OOsOpp:mapped_array", kwlist, &shape,
                                   &dtype, &strides, &order, &stream, &portable, &wc))
    return NULL;
  unsigned flags = NBC_HOST_ALLOC_DEVICEMAP | (portable ? NBC_HOST_ALLOC_PORTABLE : 0) |
                   (wc ? NBC_HOST_ALLOC_WRITECOMBINED : 0);
  PyObject *f8 = dtype ? NULL : PyUnicode_FromString("float64");
  PyObject *r = host_array(module, HOST_MAPPED, shape, dtype ? dtype : f8, strides, order,
                           stream, flags, 1);
  Py_XDECREF(f8);
  return r;
}

static PyObject *py_managed_array(PyObject *module, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"shape", "dtype", "strides", "order", "stream", "attach_global",
                           NULL};
  PyObject *shape, *dtype = NULL, *strides = Py_None, *stream = NULL;
  const char *order = "C";
  int attach_global = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OOsOp:managed_array", kwlist, &shape,
                                   &dtype, &strides, &order, &stream, &attach_global))
    return NULL;
  PyObject *f8 = dtype ? NULL : PyUnicode_FromString("float64");
  PyObject *r = host_array(module, HOST_MANAGED, shape, dtype ? dtype : f8, strides, order,
                           stream, 0, attach_global);
  Py_XDECREF(f8);
  return r;
}

/* numba's device_array_like, mapped_array_like & co: fname(shape=ary.shape, dtype=ary.dtype,
 * strides=..., order=...) with contiguous strides in ary's own order
 * (_contiguous_strides_like_array, _order_like_array), plus the extra keywords. */
PyObject *nbc__py_like_call(PyObject *module, const char *fname, PyObject *ary,
                            PyObject *extra) {
  PyObject *shape = PyObject_GetAttrString(ary, "shape");
  PyObject *dtype = shape ? PyObject_GetAttrString(ary, "dtype") : NULL;
  PyObject *strides = dtype ? PyObject_GetAttrString(ary, "strides") : NULL;
  PyObject *flags = strides ? PyObject_GetAttrString(ary, "flags") : NULL;
  PyObject *result = NULL, *new_strides = NULL, *kw = NULL;
  if (!flags) goto done;
  /* by key, as numba's _order_like_array reads them: numpy's flags and DeviceNDArray's dict */
  PyObject *ckey = PyUnicode_FromString("C_CONTIGUOUS"),
           *fkey = PyUnicode_FromString("F_CONTIGUOUS");
  PyObject *cc = ckey && fkey ? PyObject_GetItem(flags, ckey) : NULL;
  PyObject *fc = cc ? PyObject_GetItem(flags, fkey) : NULL;
  Py_XDECREF(ckey);
  Py_XDECREF(fkey);
  int is_c = cc ? PyObject_IsTrue(cc) : -1, is_f = fc ? PyObject_IsTrue(fc) : -1;
  Py_XDECREF(cc);
  Py_XDECREF(fc);
  if (is_c < 0 || is_f < 0) goto done;
  Py_ssize_t nd = PyTuple_Check(shape) ? PyTuple_GET_SIZE(shape) : 0;
  const char *order = is_f && !is_c ? "F" : "C";
  if (is_c || is_f || nd <= 1) {
    new_strides = Py_NewRef(Py_None);
  } else {
    /* Order the dimensions by stride, then give each the product of the smaller ones. */
    Py_ssize_t perm[NBC__PY_MAXDIM], st_[NBC__PY_MAXDIM];
    if (nd > NBC__PY_MAXDIM) {
      PyErr_SetString(PyExc_ValueError, "too many dimensions");
      goto done;
    }
    for (Py_ssize_t i = 0; i < nd; i++) {
      perm[i] = i;
      st_[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(strides, i));
    }
    for (Py_ssize_t i = 1; i < nd; i++) /* stable insertion sort, like Python's sort */
      for (Py_ssize_t j = i; j > 0 && st_[perm[j - 1]] > st_[perm[j]]; j--) {
        Py_ssize_t t = perm[j];
        perm[j] = perm[j - 1];
        perm[j - 1] = t;
      }
    PyObject *isz = PyObject_GetAttrString(dtype, "itemsize");
    Py_ssize_t stride = isz ? PyLong_AsSsize_t(isz) : -1;
    Py_XDECREF(isz);
    if (stride < 0 || !(new_strides = PyTuple_New(nd))) goto done;
    for (Py_ssize_t i = 0; i < nd; i++) {
      PyTuple_SET_ITEM(new_strides, perm[i], PyLong_FromSsize_t(stride));
      stride *= PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, perm[i]));
    }
    if (PyErr_Occurred()) goto done;
  }
  kw = extra ? PyDict_Copy(extra) : PyDict_New();
  if (!kw || PyDict_SetItemString(kw, "shape", shape) < 0 ||
      PyDict_SetItemString(kw, "dtype", dtype) < 0 ||
      PyDict_SetItemString(kw, "strides", new_strides) < 0)
    goto done;
  PyObject *o = PyUnicode_FromString(order);
  if (!o || PyDict_SetItemString(kw, "order", o) < 0) {
    Py_XDECREF(o);
    goto done;
  }
  Py_DECREF(o);
  PyObject *fn = PyObject_GetAttrString(module, fname);
  PyObject *empty = fn ? PyTuple_New(0) : NULL;
  result = empty ? PyObject_Call(fn, empty, kw) : NULL;
  Py_XDECREF(fn);
  Py_XDECREF(empty);
done:
  Py_XDECREF(shape);
  Py_XDECREF(dtype);
  Py_XDECREF(strides);
  Py_XDECREF(flags);
  Py_XDECREF(new_strides);
  Py_XDECREF(kw);
  return result;
}

static PyObject *py_pinned_array_like(PyObject *module, PyObject *ary) {
  return nbc__py_like_call(module, "pinned_array", ary, NULL);
}

static PyObject *py_mapped_array_like(PyObject *module, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"ary", "stream", "portable", "wc", NULL};
  PyObject *ary, *stream = NULL, *portable = Py_False, *wc = Py_False;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OOO:mapped_array_like", kwlist, &ary,
                                   &stream, &portable, &wc))
    return NULL;
  PyObject *extra = Py_BuildValue("{sOsOsO}", "stream", stream ? stream : Py_None, "portable",
                                  portable, "wc", wc);
  PyObject *r = extra ? nbc__py_like_call(module, "mapped_array", ary, extra) : NULL;
  Py_XDECREF(extra);
  return r;
}

static PyObject *py_managed_array_like(PyObject *module, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"ary", "stream", "attach_global", NULL};
  PyObject *ary, *stream = NULL, *attach_global = Py_True;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OO:managed_array_like", kwlist, &ary,
                                   &stream, &attach_global))
    return NULL;
  PyObject *extra = Py_BuildValue("{sOsO}", "stream", stream ? stream : Py_None,
                                  "attach_global", attach_global);
  PyObject *r = extra ? nbc__py_like_call(module, "managed_array", ary, extra) : NULL;
  Py_XDECREF(extra);
  return r;
}

/* ------------------------------------------------------------ pinned() and mapped() --- */

/* The scope's target: [module, mapped (bool), arrays (tuple), stream (CAI value), flags (int),
 * registered (list of _HostMemory, filled on entering)]. */
enum { T_MODULE, T_MAPPED, T_ARRAYS, T_STREAM, T_FLAGS, T_REGISTERED, T_SIZE };

/* CAI typestr of a buffer's element ("<f8", "|b1"); 0 when the format is not a scalar. */
static int buffer_typestr(const Py_buffer *view, char *out, size_t size) {
  char kind = nbc__py_format_kind(view->format, view->itemsize);
  if (!kind) return 0;
  snprintf(out, size, "%c%c%zd", view->itemsize == 1 ? '|' : '<', kind, view->itemsize);
  return 1;
}

/* Page-locks size bytes at host, which owner's memory holds (kept alive), for a new
 * registered _HostMemory (its death unpins); with mapped set (flags then ask for
 * DEVICEMAP) also its device address. A new reference, or NULL with the error set. */
static HostMemObject *registered(nbc__py_state *st, void *host, Py_ssize_t size,
                                 unsigned flags, PyObject *owner, int mapped) {
  nbc_status_t s = nbc_mem_host_register(host, (size_t)size, flags);
  if (s != NBC_OK) return (HostMemObject *)nbc__py_raise(st, s);
  HostMemObject *m = hostmem_new(st, HOST_REGISTERED);
  if (!m) {
    nbc_mem_host_unregister(host);
    return NULL;
  }
  m->host = host;
  m->nbytes = size;
  m->live = 1;
  m->pinned = Py_NewRef(owner);
  if (mapped && (s = nbc_mem_host_device_pointer(host, &m->dptr)) != NBC_OK) {
    Py_DECREF(m); /* its dealloc unpins */
    return (HostMemObject *)nbc__py_raise(st, s);
  }
  return m;
}

/* Pins one array's memory; with mapped set, also gives the _HostMemory the array's
 * __cuda_array_interface__ on the mapped address. A new reference, or NULL (also for an
 * empty array, with no exception: nothing to pin). */
static HostMemObject *pin_one(nbc__py_state *st, PyObject *ary, int mapped, unsigned flags,
                              PyObject *stream) {
  Py_buffer view;
  if (PyObject_GetBuffer(ary, &view, PyBUF_RECORDS_RO) < 0) return NULL;
  HostMemObject *m = NULL;
  char *lo = view.buf, *hi = (char *)view.buf + view.itemsize;
  int empty = view.len == 0;
  for (int d = 0; d < view.ndim && !empty; d++) {
    Py_ssize_t off = (view.shape[d] - 1) * (view.strides ? view.strides[d] : 0);
    if (off > 0)
      hi += off;
    else
      lo += off;
  }
  if (!view.strides) hi = (char *)view.buf + view.len;
  if (empty) goto done;
  char typestr[16];
  if (mapped && !buffer_typestr(&view, typestr, sizeof typestr)) {
    PyErr_Format(PyExc_TypeError, "cannot map an array of format %s", view.format);
    goto done;
  }
  m = registered(st, lo, hi - lo, flags, ary, mapped);
  if (!m || !mapped) goto done;
  PyObject *shape = PyTuple_New(view.ndim), *strides = PyTuple_New(view.ndim);
  for (int d = 0; shape && strides && d < view.ndim; d++) {
    Py_ssize_t stride = view.strides ? view.strides[d] : view.itemsize;
    PyTuple_SET_ITEM(shape, d, PyLong_FromSsize_t(view.shape[d]));
    PyTuple_SET_ITEM(strides, d, PyLong_FromSsize_t(stride));
  }
  if (view.ndim == 0 || !view.shape) { /* a scalar buffer: one element */
    Py_XSETREF(shape, PyTuple_New(0));
    Py_XSETREF(strides, Py_NewRef(Py_None));
  }
  nbc_devptr_t first = m->dptr + (nbc_devptr_t)((char *)view.buf - lo);
  if (shape && strides && !PyErr_Occurred())
    m->cai = Py_BuildValue("{sOsOsss(KO)sisO}", "shape", shape, "strides", strides, "typestr",
                           typestr, "data", (unsigned long long)first, Py_False, "version", 3,
                           "stream", stream);
  Py_XDECREF(shape);
  Py_XDECREF(strides);
  if (!m->cai) Py_CLEAR(m); /* its dealloc unpins */
done:
  PyBuffer_Release(&view);
  return m;
}

static PyObject *unpin_all(PyObject *target) {
  PyObject *list = PyList_GET_ITEM(target, T_REGISTERED);
  nbc_status_t first = NBC_OK;
  PyObject *owner = NULL;
  for (Py_ssize_t i = 0; PyList_Check(list) && i < PyList_GET_SIZE(list); i++) {
    HostMemObject *m = (HostMemObject *)PyList_GET_ITEM(list, i);
    nbc_status_t s = hostmem_release(m);
    if (first == NBC_OK && s != NBC_OK) {
      first = s;
      owner = (PyObject *)m;
    }
  }
  if (PyList_Check(list) && PyList_SetSlice(list, 0, PyList_GET_SIZE(list), NULL) < 0)
    return NULL;
  if (first != NBC_OK) return nbc__py_raise(nbc__py_state_of(owner), first);
  Py_RETURN_NONE;
}

/* Entering pinned()/mapped(): pins every array; on a failure unpins those already pinned. */
static PyObject *pin_all(PyObject *target) {
  PyObject *module = PyList_GET_ITEM(target, T_MODULE);
  nbc__py_state *st = nbc__py_module_state(module);
  int mapped = PyObject_IsTrue(PyList_GET_ITEM(target, T_MAPPED));
  PyObject *arrays = PyList_GET_ITEM(target, T_ARRAYS);
  PyObject *stream = PyList_GET_ITEM(target, T_STREAM);
  unsigned flags = (unsigned)PyLong_AsUnsignedLong(PyList_GET_ITEM(target, T_FLAGS));
  PyObject *list = PyList_GET_ITEM(target, T_REGISTERED);
  PyObject *devarys = mapped ? PyList_New(0) : NULL;
  if (mapped && !devarys) return NULL;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(arrays); i++) {
    PyObject *ary = PyTuple_GET_ITEM(arrays, i);
    HostMemObject *m = pin_one(st, ary, mapped, flags, stream);
    if (!m && PyErr_Occurred()) goto fail;
    if (m && PyList_Append(list, (PyObject *)m) < 0) {
      Py_DECREF(m);
      goto fail;
    }
    if (mapped) {
      /* The device array wraps the mapped address through __cuda_array_interface__; an
       * empty array needs no memory and is copied as is. */
      PyObject *d = PyObject_CallMethod(module, "to_device", "(O)", m ? (PyObject *)m : ary);
      if (!d || PyList_Append(devarys, d) < 0) {
        Py_XDECREF(d);
        Py_XDECREF(m);
        goto fail;
      }
      Py_DECREF(d);
    }
    Py_XDECREF(m);
  }
  if (!mapped) Py_RETURN_NONE;
  if (PyList_GET_SIZE(devarys) == 1) {
    PyObject *one = Py_NewRef(PyList_GET_ITEM(devarys, 0));
    Py_DECREF(devarys);
    return one;
  }
  return devarys;
fail:
  Py_XDECREF(devarys);
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyObject *r = unpin_all(target);
  Py_XDECREF(r);
  PyErr_Clear();
  PyErr_Restore(type, value, tb);
  return NULL;
}

static PyObject *pin_scope(PyObject *module, PyObject *arrays, int mapped, PyObject *stream,
                           unsigned flags) {
  nbc__py_state *st = nbc__py_module_state(module);
  PyObject *stream_cai = stream_value(st, stream);
  if (!stream_cai) return NULL;
  PyObject *target = Py_BuildValue("[OOONIN]", module, mapped ? Py_True : Py_False, arrays,
                                   stream_cai, flags, PyList_New(0));
  if (!target) return NULL;
  PyObject *scope = nbc__py_scope_new(st, pin_all, unpin_all, target);
  Py_DECREF(target);
  return scope;
}

static PyObject *py_pinned(PyObject *module, PyObject *args) {
  return pin_scope(module, args, 0, NULL, 0);
}

static PyObject *py_mapped(PyObject *module, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"stream", "portable", "wc", NULL};
  PyObject *stream = NULL;
  int portable = 0, wc = 0;
  PyObject *none = PyTuple_New(0);
  int ok = none && PyArg_ParseTupleAndKeywords(none, kwargs, "|Opp:mapped", kwlist, &stream,
                                               &portable, &wc);
  Py_XDECREF(none);
  if (!ok) return NULL;
  /* wc applies to allocations only: registered memory keeps its caching. */
  unsigned flags = NBC_HOST_REGISTER_DEVICEMAP | (portable ? NBC_HOST_REGISTER_PORTABLE : 0);
  return pin_scope(module, args, 1, stream, flags);
}

/* ------------------------------------------------------------ defer_cleanup() --------- */

/* The target: [module, the context's address (int) while the scope is open, else None, the
 * context to defer in (int) or None for the current one at entry]. */
static PyObject *defer_enter(PyObject *target) {
  nbc__py_state *st = nbc__py_module_state(PyList_GET_ITEM(target, 0));
  nbc_context_t *context = NULL;
  PyObject *fixed = PyList_GET_ITEM(target, 2);
  nbc_status_t s = NBC_OK;
  if (fixed != Py_None)
    context = PyLong_AsVoidPtr(fixed);
  else
    s = nbc_current_context(-1, &context);
  if (s == NBC_OK) s = nbc_context_defer_cleanup_begin(context);
  if (s != NBC_OK) return nbc__py_raise(st, s);
  PyObject *addr = PyLong_FromVoidPtr(context);
  if (!addr || PyList_SetItem(target, 1, addr) < 0) {
    nbc_context_defer_cleanup_end(context);
    return NULL;
  }
  Py_RETURN_NONE;
}

static PyObject *defer_exit(PyObject *target) {
  nbc__py_state *st = nbc__py_module_state(PyList_GET_ITEM(target, 0));
  PyObject *addr = PyList_GET_ITEM(target, 1);
  if (addr == Py_None) Py_RETURN_NONE; /* entering failed */
  nbc_context_t *context = PyLong_AsVoidPtr(addr);
  if (PyList_SetItem(target, 1, Py_NewRef(Py_None)) < 0) return NULL;
  nbc_status_t s;
  Py_BEGIN_ALLOW_THREADS s = nbc_context_defer_cleanup_end(context);
  Py_END_ALLOW_THREADS if (s != NBC_OK) return nbc__py_raise(st, s);
  Py_RETURN_NONE;
}

PyObject *nbc__py_defer_cleanup(PyObject *module, nbc_context_t *context) {
  PyObject *fixed = context ? PyLong_FromVoidPtr(context) : Py_NewRef(Py_None);
  PyObject *target = fixed ? Py_BuildValue("[OON]", module, Py_None, fixed) : NULL;
  if (!target) return NULL;
  PyObject *scope = nbc__py_scope_new(nbc__py_module_state(module), defer_enter, defer_exit,
                                      target);
  Py_DECREF(target);
  return scope;
}

static PyObject *py_defer_cleanup(PyObject *module, PyObject *unused) {
  (void)unused;
  return nbc__py_defer_cleanup(module, NULL);
}

/* ------------------------------------------------------------ Context's allocators ---- */

/* _memhostalloc(bytesize, mapped=False, portable=False, wc=False): Context.memhostalloc runs
 * it with its context pushed (context.c); page-locked memory, mapped into the device when
 * mapped is set. */
static PyObject *py_memhostalloc(PyObject *module, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"bytesize", "mapped", "portable", "wc", NULL};
  Py_ssize_t bytes;
  int mapped = 0, portable = 0, wc = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "n|ppp:memhostalloc", kwlist, &bytes, &mapped,
                                   &portable, &wc))
    return NULL;
  if (bytes < 0) {
    PyErr_Format(PyExc_ValueError, "memhostalloc: negative size %zd", bytes);
    return NULL;
  }
  nbc__py_state *st = nbc__py_module_state(module);
  unsigned flags = (mapped ? NBC_HOST_ALLOC_DEVICEMAP : 0) |
                   (portable ? NBC_HOST_ALLOC_PORTABLE : 0) |
                   (wc ? NBC_HOST_ALLOC_WRITECOMBINED : 0);
  HostMemObject *m = hostmem_new(st, mapped ? HOST_MAPPED : HOST_PINNED);
  if (m && hostmem_allocate(st, m, (size_t)bytes, flags, 1) < 0) Py_CLEAR(m);
  return (PyObject *)m;
}

/* _memallocmanaged(bytesize, attach_global=True): Context.memallocmanaged. */
static PyObject *py_memallocmanaged(PyObject *module, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"bytesize", "attach_global", NULL};
  Py_ssize_t bytes;
  int attach_global = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "n|p:memallocmanaged", kwlist, &bytes,
                                   &attach_global))
    return NULL;
  if (bytes < 0) {
    PyErr_Format(PyExc_ValueError, "memallocmanaged: negative size %zd", bytes);
    return NULL;
  }
  nbc__py_state *st = nbc__py_module_state(module);
  HostMemObject *m = hostmem_new(st, HOST_MANAGED);
  if (m && hostmem_allocate(st, m, (size_t)bytes, 0, attach_global) < 0) Py_CLEAR(m);
  return (PyObject *)m;
}

/* A host address argument: an int, or an object whose .value is one (ctypes.c_void_p). */
static int address_arg(PyObject *obj, void **pout) {
  PyObject *value = PyLong_Check(obj) ? Py_NewRef(obj) : PyObject_GetAttrString(obj, "value");
  if (!value || !PyLong_Check(value)) {
    Py_XDECREF(value);
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "mempin: pointer must be an int or a ctypes.c_void_p, not %s",
                 Py_TYPE(obj)->tp_name);
    return -1;
  }
  *pout = PyLong_AsVoidPtr(value);
  Py_DECREF(value);
  return PyErr_Occurred() ? -1 : 0;
}

/* _mempin(owner, pointer, size, mapped=False): Context.mempin. Page-locks size bytes at
 * pointer, which owner's memory holds (kept alive), until the result dies or is freed; the
 * unpinning is immediate, as numba's. */
static PyObject *py_mempin(PyObject *module, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"owner", "pointer", "size", "mapped", NULL};
  PyObject *owner, *pointer;
  Py_ssize_t size;
  int mapped = 0;
  void *host;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOn|p:mempin", kwlist, &owner, &pointer, &size,
                                   &mapped) ||
      address_arg(pointer, &host) < 0)
    return NULL;
  if (size <= 0 || !host) {
    PyErr_Format(PyExc_ValueError, "mempin: cannot pin %zd bytes at %p", size, host);
    return NULL;
  }
  unsigned flags = mapped ? NBC_HOST_REGISTER_DEVICEMAP : 0;
  return (PyObject *)registered(nbc__py_module_state(module), host, size, flags, owner, mapped);
}

/* ------------------------------------------------------------ the module -------------- */

static PyMethodDef hostmem_functions[] = {
    {"pinned_array", (PyCFunction)(void (*)(void))py_pinned_array, METH_VARARGS | METH_KEYWORDS,
     "pinned_array($module, shape, dtype='float64', strides=None, order='C')\n--\n\n"
     "A numpy array on page-locked host memory."},
    {"mapped_array", (PyCFunction)(void (*)(void))py_mapped_array, METH_VARARGS | METH_KEYWORDS,
     "mapped_array($module, shape, dtype='float64', strides=None, order='C', stream=0, "
     "portable=False, wc=False)\n--\n\n"
     "A numpy array on page-locked memory mapped into the device, with "
     "__cuda_array_interface__."},
    {"managed_array", (PyCFunction)(void (*)(void))py_managed_array,
     METH_VARARGS | METH_KEYWORDS,
     "managed_array($module, shape, dtype='float64', strides=None, order='C', stream=0, "
     "attach_global=True)\n--\n\n"
     "A numpy array on managed memory, with __cuda_array_interface__."},
    {"pinned_array_like", py_pinned_array_like, METH_O,
     "pinned_array_like($module, ary, /)\n--\n\n"
     "Pinned_array with ary's shape, dtype and layout."},
    {"mapped_array_like", (PyCFunction)(void (*)(void))py_mapped_array_like,
     METH_VARARGS | METH_KEYWORDS,
     "mapped_array_like($module, ary, stream=0, portable=False, wc=False)\n--\n\n"
     "Mapped_array like ary."},
    {"managed_array_like", (PyCFunction)(void (*)(void))py_managed_array_like,
     METH_VARARGS | METH_KEYWORDS,
     "managed_array_like($module, ary, stream=0, attach_global=True)\n--\n\n"
     "Managed_array like ary."},
    {"pinned", py_pinned, METH_VARARGS,
     "pinned($module, *arylist)\n--\n\n"
     "with pinned(*arrays): page-locks the arrays' memory for the block."},
    {"mapped", (PyCFunction)(void (*)(void))py_mapped, METH_VARARGS | METH_KEYWORDS,
     "mapped($module, *arylist, stream=0, portable=False, wc=False)\n--\n\n"
     "with mapped(*arrays, stream=0, portable=False, wc=False) as devarys: maps the arrays' "
     "memory into the device for the block; yields a device array (a list for several)."},
    {"_memhostalloc", (PyCFunction)(void (*)(void))py_memhostalloc,
     METH_VARARGS | METH_KEYWORDS, "_memhostalloc($module, bytesize, mapped=False, "
                                   "portable=False, wc=False)\n--\n\n"
                                   "Context.memhostalloc in the current context."},
    {"_memallocmanaged", (PyCFunction)(void (*)(void))py_memallocmanaged,
     METH_VARARGS | METH_KEYWORDS,
     "_memallocmanaged($module, bytesize, attach_global=True)\n--\n\n"
     "Context.memallocmanaged in the current context."},
    {"_mempin", (PyCFunction)(void (*)(void))py_mempin, METH_VARARGS | METH_KEYWORDS,
     "_mempin($module, owner, pointer, size, mapped=False)\n--\n\n"
     "Context.mempin in the current context."},
    {"defer_cleanup", py_defer_cleanup, METH_NOARGS,
     "defer_cleanup($module, /)\n--\n\n"
     "with defer_cleanup(): frees of device memory requested inside happen at the end of the "
     "outermost block."},
    {NULL, NULL, 0, NULL},
};

int nbc__py_hostmem_init(PyObject *module, nbc__py_state *st) {
  st->HostMemType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &hostmem_spec, NULL);
  if (!st->HostMemType) return -1;
  return PyModule_AddFunctions(module, hostmem_functions);
}
