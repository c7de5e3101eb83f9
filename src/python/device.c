/* device.c — Device, the device scope `gpus[i]` (numba's _DeviceContextManager), the device
 * list `gpus`, and select_device / get_current_device / list_devices.
 *
 * Device objects wrap the C library's per-ordinal nbc_device_t (which lives for the process)
 * and are cached, one per ordinal, in the module state, so `gpus[0].id is ...` style
 * identity holds and attribute reads are cached on the object. Any attribute X that is not
 * a known one reads CU_DEVICE_ATTRIBUTE_X through nbc_device_attribute_lookup, like numba's
 * Device.__getattr__. `gpus[i]` is a context manager: __enter__ pushes the device's primary
 * context once and returns None, __exit__ pops it once (nbc_device_enter/exit hold the
 * rules, including "Cannot switch CUDA-context." inside require_context); every other
 * attribute is forwarded to the Device. The device list is built on first use, which is
 * when the driver is initialised (never at import).
 */
#include "nbcuda_py.h"

#include <ctype.h>
#include <string.h>

typedef struct {
  PyObject_HEAD
  nbc_device_t *dev;
  int id;
  PyObject *attrs; /* dict: CU_DEVICE_ATTRIBUTE_* values read so far */
} DeviceObject;

typedef struct {
  PyObject_HEAD
  PyObject *device; /* DeviceObject */
} ManagedObject;

typedef struct {
  PyObject_HEAD
} DeviceListObject;

/* ------------------------------------------------------------------ Device ------------ */

static int device_traverse(DeviceObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->attrs);
  return 0;
}

static void device_dealloc(DeviceObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  Py_CLEAR(self->attrs);
  tp->tp_free(self);
  Py_DECREF(tp);
}

PyObject *nbc__py_device_object(nbc__py_state *st, nbc_device_t *dev) {
  int id = nbc_device_id(dev);
  if (!st->devices && !(st->devices = PyList_New(0))) return NULL;
  while (PyList_GET_SIZE(st->devices) <= id)
    if (PyList_Append(st->devices, Py_None) < 0) return NULL;
  PyObject *o = PyList_GET_ITEM(st->devices, id);
  if (o != Py_None) return Py_NewRef(o);
  DeviceObject *d = PyObject_GC_New(DeviceObject, st->DeviceType);
  if (!d) return NULL;
  d->dev = dev;
  d->id = id;
  d->attrs = PyDict_New();
  PyObject_GC_Track(d);
  if (!d->attrs) {
    Py_DECREF(d);
    return NULL;
  }
  PyList_SetItem(st->devices, id, Py_NewRef(d));
  return (PyObject *)d;
}

static PyObject *device_get_id(DeviceObject *self, void *c) {
  (void)c;
  return PyLong_FromLong(self->id);
}
static PyObject *device_get_name(DeviceObject *self, void *c) {
  (void)c;
  return PyUnicode_FromString(nbc_device_name(self->dev));
}
static PyObject *device_get_uuid(DeviceObject *self, void *c) {
  (void)c;
  return PyUnicode_FromString(nbc_device_uuid(self->dev));
}
static PyObject *device_get_cc(DeviceObject *self, void *c) {
  (void)c;
  int major = 0, minor = 0;
  nbc_device_compute_capability(self->dev, &major, &minor);
  return Py_BuildValue("(ii)", major, minor);
}
static PyObject *device_get_fp16(DeviceObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(nbc_device_supports_float16(self->dev));
}
/* bfloat16 from cc 8.0 and fp8 from cc 8.9, as numba's Device says. */
static PyObject *device_get_bf16(DeviceObject *self, void *c) {
  (void)c;
  int major = 0, minor = 0;
  nbc_device_compute_capability(self->dev, &major, &minor);
  return PyBool_FromLong(major >= 8);
}
static PyObject *device_get_fp8(DeviceObject *self, void *c) {
  (void)c;
  int major = 0, minor = 0;
  nbc_device_compute_capability(self->dev, &major, &minor);
  return PyBool_FromLong(major * 10 + minor >= 89);
}

static PyObject *device_reset(DeviceObject *self, PyObject *unused) {
  (void)unused;
  nbc_status_t s;
  Py_BEGIN_ALLOW_THREADS s = nbc_device_reset(self->dev);
  Py_END_ALLOW_THREADS if (s != NBC_OK) return nbc__py_raise(nbc__py_state_of((PyObject *)self), s);
  Py_RETURN_NONE;
}

/* numba's Device.release_primary_context: gives up nbcuda's retain of the primary context
 * (what was made in it through nbcuda is released first); not a reset. */
static PyObject *device_release_primary_context(DeviceObject *self, PyObject *unused) {
  (void)unused;
  nbc_status_t s;
  Py_BEGIN_ALLOW_THREADS s = nbc_device_release_primary_context(self->dev);
  Py_END_ALLOW_THREADS if (s != NBC_OK) return nbc__py_raise(nbc__py_state_of((PyObject *)self), s);
  Py_RETURN_NONE;
}

/* numba's Device.get_primary_context: the Context object, the context stack unchanged. */
static PyObject *device_get_primary_context(DeviceObject *self, PyObject *unused) {
  (void)unused;
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  nbc_context_t *context = NULL;
  nbc_status_t s = nbc_device_primary_context(self->dev, &context);
  if (s == NBC_UNSUPPORTED_CC) { /* numba raises CudaSupportError here */
    PyErr_SetString(st->CudaSupportError, nbc_last_error());
    return NULL;
  }
  if (s != NBC_OK) return nbc__py_raise(st, s);
  return nbc__py_context_object(st, context);
}

static PyObject *device_repr(DeviceObject *self) {
  return PyUnicode_FromFormat("<CUDA device %d '%s'>", self->id, nbc_device_name(self->dev));
}

static Py_hash_t device_hash(DeviceObject *self) { return self->id == -1 ? -2 : self->id; }

static PyObject *device_richcompare(PyObject *a, PyObject *b, int op) {
  if ((op != Py_EQ && op != Py_NE) || Py_TYPE(a) != Py_TYPE(b)) Py_RETURN_NOTIMPLEMENTED;
  int eq = ((DeviceObject *)a)->id == ((DeviceObject *)b)->id;
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

/* Unknown attributes read CU_DEVICE_ATTRIBUTE_<NAME>; names of attributes are upper case,
 * so lower-case misses (typos of methods) stay plain AttributeErrors. */
static PyObject *device_getattro(DeviceObject *self, PyObject *name) {
  /* Attributes read before are answered first, without raising an AttributeError inside. */
  PyObject *hit = PyDict_GetItemWithError(self->attrs, name);
  if (hit) return Py_NewRef(hit);
  if (PyErr_Occurred()) return NULL;
  PyObject *r = PyObject_GenericGetAttr((PyObject *)self, name);
  if (r || !PyErr_ExceptionMatches(PyExc_AttributeError)) return r;
  const char *s = PyUnicode_AsUTF8(name);
  if (!s) return NULL;
  PyObject *cached = PyDict_GetItemWithError(self->attrs, name);
  if (cached) {
    PyErr_Clear();
    return Py_NewRef(cached);
  }
  if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_AttributeError)) return NULL;
  if (nbc_device_attribute_lookup(s) < 0) return NULL; /* keep the AttributeError */
  PyErr_Clear();
  int value = 0;
  nbc_status_t st = nbc_device_attribute_by_name(self->dev, s, &value);
  if (st != NBC_OK) return nbc__py_raise(nbc__py_state_of((PyObject *)self), st);
  r = PyLong_FromLong(value);
  if (r && PyDict_SetItem(self->attrs, name, r) < 0) Py_CLEAR(r);
  return r;
}

static PyGetSetDef device_getset[] = {
    {"id", (getter)device_get_id, NULL, "the device ordinal", NULL},
    {"name", (getter)device_get_name, NULL, "the device name", NULL},
    {"uuid", (getter)device_get_uuid, NULL, "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", NULL},
    {"compute_capability", (getter)device_get_cc, NULL, "(major, minor)", NULL},
    {"supports_float16", (getter)device_get_fp16, NULL, "cc >= 5.3", NULL},
    {"supports_bfloat16", (getter)device_get_bf16, NULL, "cc >= 8.0", NULL},
    {"supports_fp8", (getter)device_get_fp8, NULL, "cc >= 8.9", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* numba's Device.get_device_identity(): the PCI location, which names the device across
 * processes (ordinals depend on CUDA_VISIBLE_DEVICES). */
static PyObject *device_get_device_identity(PyObject *self, PyObject *unused) {
  (void)unused;
  static const char *const keys[][2] = {{"pci_domain_id", "PCI_DOMAIN_ID"},
                                        {"pci_bus_id", "PCI_BUS_ID"},
                                        {"pci_device_id", "PCI_DEVICE_ID"}};
  PyObject *identity = PyDict_New();
  for (size_t k = 0; identity && k < sizeof keys / sizeof *keys; k++) {
    PyObject *v = PyObject_GetAttrString(self, keys[k][1]);
    if (!v || PyDict_SetItemString(identity, keys[k][0], v) < 0) Py_CLEAR(identity);
    Py_XDECREF(v);
  }
  return identity;
}

/* numba's Device.from_identity(identity): the device of this process with that identity. */
static PyObject *device_from_identity(PyObject *cls, PyObject *identity) {
  nbc__py_state *st = PyType_GetModuleState((PyTypeObject *)cls);
  if (!st) return NULL;
  int count = 0;
  nbc_status_t s = nbc_device_count(&count);
  if (s != NBC_OK) return nbc__py_raise(st, s);
  for (int i = 0; i < count; i++) {
    nbc_device_t *dev;
    if ((s = nbc_device_get(i, &dev)) != NBC_OK) return nbc__py_raise(st, s);
    PyObject *d = nbc__py_device_object(st, dev);
    PyObject *mine = d ? device_get_device_identity(d, NULL) : NULL;
    int same = mine ? PyObject_RichCompareBool(mine, identity, Py_EQ) : -1;
    Py_XDECREF(mine);
    if (same != 0) {
      if (same < 0) Py_CLEAR(d);
      return d;
    }
    Py_DECREF(d);
  }
  return PyErr_Format(PyExc_RuntimeError,
                      "No device of %R is found. Target device may not be visible in this "
                      "process.",
                      identity);
}

static PyMethodDef device_methods[] = {
    {"get_device_identity", device_get_device_identity, METH_NOARGS,
     "get_device_identity($self, /)\n--\n\n"
     "{'pci_domain_id', 'pci_bus_id', 'pci_device_id'}: the device across processes."},
    {"from_identity", device_from_identity, METH_O | METH_CLASS,
     "from_identity($type, identity, /)\n--\n\n"
     "The Device of this process with that get_device_identity()."},
    {"reset", (PyCFunction)device_reset, METH_NOARGS,
     "reset($self, /)\n--\n\n"
     "Releases and resets the device's primary context."},
    {"release_primary_context", (PyCFunction)device_release_primary_context, METH_NOARGS,
     "release_primary_context($self, /)\n--\n\n"
     "Releases nbcuda's retain of the primary context (its nbcuda objects first)."},
    {"get_primary_context", (PyCFunction)device_get_primary_context, METH_NOARGS,
     "get_primary_context($self, /)\n--\n\n"
     "The device's primary Context (retained on first use; the context stack is unchanged)."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot device_slots[] = {
    {Py_tp_dealloc, device_dealloc},
    {Py_tp_traverse, device_traverse},
    {Py_tp_repr, device_repr},
    {Py_tp_hash, device_hash},
    {Py_tp_richcompare, device_richcompare},
    {Py_tp_getattro, device_getattro},
    {Py_tp_getset, device_getset},
    {Py_tp_methods, device_methods},
    {Py_tp_doc, (void *)"A CUDA device (not instantiable; see gpus and select_device)."},
    {0, NULL},
};

static PyType_Spec device_spec = {
    .name = "nbcuda.Device",
    .basicsize = sizeof(DeviceObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION |
             Py_TPFLAGS_IMMUTABLETYPE,
    .slots = device_slots,
};

/* ------------------------------------------------------------ Managed device ---------- */

static int managed_traverse(ManagedObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->device);
  return 0;
}

static void managed_dealloc(ManagedObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  Py_CLEAR(self->device);
  tp->tp_free(self);
  Py_DECREF(tp);
}

static nbc_device_t *managed_dev(ManagedObject *self) {
  return ((DeviceObject *)self->device)->dev;
}

static PyObject *managed_enter(ManagedObject *self, PyObject *unused) {
  (void)unused;
  nbc_status_t s = nbc_device_enter(managed_dev(self));
  if (s != NBC_OK) return nbc__py_raise(nbc__py_state_of((PyObject *)self), s);
  Py_RETURN_NONE;
}

static PyObject *managed_exit(ManagedObject *self, PyObject *args) {
  (void)args;
  nbc_status_t s = nbc_device_exit(managed_dev(self));
  if (s != NBC_OK) return nbc__py_raise(nbc__py_state_of((PyObject *)self), s);
  Py_RETURN_FALSE;
}

static PyObject *managed_str(ManagedObject *self) {
  return PyUnicode_FromFormat("<Managed Device %d>", ((DeviceObject *)self->device)->id);
}

static PyObject *managed_getattro(ManagedObject *self, PyObject *name) {
  PyObject *r = PyObject_GenericGetAttr((PyObject *)self, name);
  if (r || !PyErr_ExceptionMatches(PyExc_AttributeError)) return r;
  PyErr_Clear();
  return PyObject_GetAttr(self->device, name);
}

static PyMethodDef managed_methods[] = {
    {"__enter__", (PyCFunction)managed_enter, METH_NOARGS,
     "__enter__($self, /)\n--\n\n"
     "Pushes the device's primary context; returns None."},
    {"__exit__", (PyCFunction)managed_exit, METH_VARARGS, "__exit__($self, *exc_info)\n--\n\n"
                                                          "Pops the context pushed."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot managed_slots[] = {
    {Py_tp_dealloc, managed_dealloc},
    {Py_tp_traverse, managed_traverse},
    {Py_tp_str, managed_str},
    {Py_tp_getattro, managed_getattro},
    {Py_tp_methods, managed_methods},
    {Py_tp_doc, (void *)"gpus[i]: a device scope; attributes are the Device's."},
    {0, NULL},
};

static PyType_Spec managed_spec = {
    .name = "nbcuda._DeviceContextManager",
    .basicsize = sizeof(ManagedObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION |
             Py_TPFLAGS_IMMUTABLETYPE,
    .slots = managed_slots,
};

/* ------------------------------------------------------------------ gpus -------------- */

/* The list of managed devices, built on first use (this initialises the driver). */
static PyObject *managed_list(nbc__py_state *st) {
  if (st->managed) return st->managed;
  int count = 0;
  nbc_status_t s = nbc_device_count(&count);
  if (s != NBC_OK) return nbc__py_raise(st, s);
  PyObject *list = PyList_New(count);
  if (!list) return NULL;
  for (int i = 0; i < count; i++) {
    nbc_device_t *dev = NULL;
    s = nbc_device_get(i, &dev);
    if (s != NBC_OK) {
      Py_DECREF(list);
      return nbc__py_raise(st, s);
    }
    PyObject *d = nbc__py_device_object(st, dev);
    ManagedObject *m = d ? PyObject_GC_New(ManagedObject, st->ManagedDeviceType) : NULL;
    if (!m) {
      Py_XDECREF(d);
      Py_DECREF(list);
      return NULL;
    }
    m->device = d;
    PyObject_GC_Track(m);
    PyList_SET_ITEM(list, i, (PyObject *)m);
  }
  st->managed = list;
  return list;
}

static Py_ssize_t gpus_len(PyObject *self) {
  PyObject *l = managed_list(nbc__py_state_of(self));
  return l ? PyList_GET_SIZE(l) : -1;
}

static PyObject *gpus_getitem(PyObject *self, PyObject *key) {
  PyObject *l = managed_list(nbc__py_state_of(self));
  if (!l) return NULL;
  if (PySlice_Check(key)) return PyObject_GetItem(l, key);
  /* numba converts any index with int() (CUdevice objects included). */
  PyObject *i = PyLong_Check(key) ? Py_NewRef(key) : PyNumber_Long(key);
  if (!i) return NULL;
  PyObject *r = PyObject_GetItem(l, i);
  Py_DECREF(i);
  return r;
}

static PyObject *gpus_iter(PyObject *self) {
  PyObject *l = managed_list(nbc__py_state_of(self));
  return l ? PyObject_GetIter(l) : NULL;
}

static PyObject *gpus_str(PyObject *self) {
  PyObject *l = managed_list(nbc__py_state_of(self));
  if (!l) return NULL;
  PyObject *sep = PyUnicode_FromString(", ");
  PyObject *parts = PyList_New(0);
  for (Py_ssize_t i = 0; sep && parts && i < PyList_GET_SIZE(l); i++) {
    PyObject *s = PyObject_Str(PyList_GET_ITEM(l, i));
    if (!s || PyList_Append(parts, s) < 0) Py_CLEAR(parts);
    Py_XDECREF(s);
  }
  PyObject *r = sep && parts ? PyUnicode_Join(sep, parts) : NULL;
  Py_XDECREF(sep);
  Py_XDECREF(parts);
  return r;
}

/* gpus.current: the scope of the device whose context is current on this thread, or None;
 * creates no context. */
static PyObject *gpus_current(PyObject *self, void *c) {
  (void)c;
  nbc__py_state *st = nbc__py_state_of(self);
  nbc_device_t *dev = NULL;
  nbc_status_t s = nbc_device_current(&dev);
  if (s != NBC_OK) return nbc__py_raise(st, s);
  if (!dev) Py_RETURN_NONE;
  PyObject *l = managed_list(st);
  if (!l) return NULL;
  int id = nbc_device_id(dev);
  if (id < 0 || id >= PyList_GET_SIZE(l)) Py_RETURN_NONE;
  return Py_NewRef(PyList_GET_ITEM(l, id));
}

static PyObject *gpus_lst(PyObject *self, void *c) {
  (void)c;
  PyObject *l = managed_list(nbc__py_state_of(self));
  return l ? PyList_GetSlice(l, 0, PyList_GET_SIZE(l)) : NULL;
}

static void gpus_dealloc(PyObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  tp->tp_free(self);
  Py_DECREF(tp);
}

static PyGetSetDef gpus_getset[] = {
    {"current", gpus_current, NULL, "the device scope of the current context, or None", NULL},
    {"lst", gpus_lst, NULL, "the device scopes, as a list", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot gpus_slots[] = {
    {Py_tp_dealloc, gpus_dealloc},
    {Py_mp_length, gpus_len},
    {Py_sq_length, gpus_len},
    {Py_mp_subscript, gpus_getitem},
    {Py_tp_iter, gpus_iter},
    {Py_tp_str, gpus_str},
    {Py_tp_getset, gpus_getset},
    {Py_tp_doc, (void *)"The CUDA devices: gpus[i], len(gpus), iteration, gpus.current."},
    {0, NULL},
};

static PyType_Spec gpus_spec = {
    .name = "nbcuda._DeviceList",
    .basicsize = sizeof(DeviceListObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = gpus_slots,
};

/* ------------------------------------------------------------ module functions -------- */

static PyObject *py_select_device(PyObject *module, PyObject *arg) {
  nbc__py_state *st = nbc__py_module_state(module);
  int ordinal = (int)PyLong_AsLong(arg);
  if (ordinal == -1 && PyErr_Occurred()) return NULL;
  nbc_device_t *dev = NULL;
  nbc_status_t s = nbc_select_device(ordinal, &dev);
  if (s != NBC_OK) return nbc__py_raise(st, s);
  return nbc__py_device_object(st, dev);
}

static PyObject *py_get_current_device(PyObject *module, PyObject *const *args,
                                       Py_ssize_t nargs) {
  (void)args;
  if (nbc__py_no_args("get_current_device", nargs) < 0) return NULL;
  nbc__py_state *st = nbc__py_module_state(module);
  nbc_device_t *dev = NULL;
  nbc_status_t s = nbc_get_current_device(&dev);
  if (s != NBC_OK) return nbc__py_raise(st, s);
  return nbc__py_device_object(st, dev);
}

static PyObject *py_list_devices(PyObject *module, PyObject *unused) {
  (void)unused;
  return Py_NewRef(nbc__py_module_state(module)->gpus);
}

/* numba's is_*_supported(): float16 always; bfloat16 from compute capability 8.0 and fp8 from
 * 8.9 on the current device. */
static PyObject *current_cc_at_least(PyObject *module, int major, int minor) {
  int M = 0, m = 0;
  if (nbc__py_current_cc(nbc__py_module_state(module), &M, &m) < 0) return NULL;
  return PyBool_FromLong(M > major || (M == major && m >= minor));
}

static PyObject *py_is_float16_supported(PyObject *module, PyObject *unused) {
  (void)module;
  (void)unused;
  Py_RETURN_TRUE;
}

static PyObject *py_is_bfloat16_supported(PyObject *module, PyObject *unused) {
  (void)unused;
  return current_cc_at_least(module, 8, 0);
}

static PyObject *py_is_fp8_supported(PyObject *module, PyObject *unused) {
  (void)unused;
  return current_cc_at_least(module, 8, 9);
}

static PyMethodDef device_functions[] = {
    {"is_float16_supported", py_is_float16_supported, METH_NOARGS,
     "is_float16_supported($module, /)\n--\n\n"
     "True: float16 is supported (as in current numba-cuda)."},
    {"is_bfloat16_supported", py_is_bfloat16_supported, METH_NOARGS,
     "is_bfloat16_supported($module, /)\n--\n\n"
     "Whether the current device has compute capability >= 8.0."},
    {"is_fp8_supported", py_is_fp8_supported, METH_NOARGS,
     "is_fp8_supported($module, /)\n--\n\n"
     "Whether the current device has compute capability >= 8.9."},
    {"select_device", py_select_device, METH_O,
     "select_device($module, device_id, /)\n--\n\n"
     "Pushes device i's primary context (nothing pops it) and returns the Device."},
    {"get_current_device", (PyCFunction)(void (*)(void))py_get_current_device, METH_FASTCALL,
     "get_current_device($module, /)\n--\n\n"
     "The Device of the current context (creates device 0's if none)."},
    {"list_devices", py_list_devices, METH_NOARGS, "list_devices($module, /)\n--\n\n"
                                                   "The device list (gpus)."},
    {NULL, NULL, 0, NULL},
};

int nbc__py_device_init(PyObject *module, nbc__py_state *st) {
  st->DeviceType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &device_spec, NULL);
  st->ManagedDeviceType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &managed_spec, NULL);
  st->DeviceListType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &gpus_spec, NULL);
  if (!st->DeviceType || !st->ManagedDeviceType || !st->DeviceListType) return -1;
  if (PyModule_AddObjectRef(module, "Device", (PyObject *)st->DeviceType) < 0) return -1;
  st->gpus = PyType_GenericAlloc(st->DeviceListType, 0);
  if (!st->gpus || PyModule_AddObjectRef(module, "gpus", st->gpus) < 0) return -1;
  return PyModule_AddFunctions(module, device_functions);
}
