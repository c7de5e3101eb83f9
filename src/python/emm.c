/* emm.c — numba's External Memory Management (EMM) plugins: device memory from another
 * allocator (RMM, CuPy's pool, ...).
 *
 *   class Pool(cuda.HostOnlyCUDAMemoryManager):        # or GetIpcHandleMixin, BaseCUDA...
 *       def memalloc(self, size): ... return cuda.MemoryPointer(self.context, ptr, size,
 *                                                               finalizer=free_it)
 *       def initialize(self): ...
 *       def get_memory_info(self): ...
 *       @property
 *       def interface_version(self): return 1
 *   cuda.set_memory_manager(Pool)
 *
 * set_memory_manager(cls) checks cls(context=None).interface_version == 1 (numba's
 * RuntimeError "EMM Plugin interface has version %d - version %d required" otherwise);
 * NUMBA_CUDA_MEMORY_MANAGER=<module> names a module whose `_numba_memory_manager` is the class,
 * looked at before the first allocation when none was set ("default": nbcuda's own). Each
 * Context gets its instance, cls(context=ctx) then initialize(), at its first device
 * allocation after that; every device allocation of nbcuda (device_array, to_device,
 * device_array_like, Context.memalloc, the copies launches make of host arrays aside) then
 * calls its memalloc(size), and the array keeps the returned pointer, which owns the memory
 * (nbcuda frees nothing of it). Context.get_memory_info() asks the plugin; Context.reset()
 * and close() call its reset() and make the next allocation create a new instance.
 *
 * What nbcuda does not route to the plugin, where numba does: pinned and mapped host memory
 * (memhostalloc, mempin: nbcuda's own, which HostOnlyCUDAMemoryManager's methods also give),
 * IPC handles (Context.get_ipc_handle works on any device memory: GetIpcHandleMixin's method
 * calls it) and defer_cleanup (nbcuda's own scope). The base classes and MemoryInfo (numba's
 * namedtuple, which get_memory_info returns) are Python, made from the text below when the
 * module is imported: they are plain module attributes, not names a module __getattr__ makes
 * on first use, since CPython does not specialize attribute loads (cuda.synchronize) on a
 * module that has a __getattr__.
 */
#include "nbcuda_py.h"

#include <stdlib.h>
#include <string.h>

#define EMM_INTERFACE_VERSION 1

static const char classes_source[] =
    "from abc import ABCMeta, abstractmethod\n"
    "from collections import namedtuple\n"
    "\n"
    "MemoryInfo = namedtuple('MemoryInfo', 'free,total')\n"
    "\n"
    "\n"
    "class BaseCUDAMemoryManager(object, metaclass=ABCMeta):\n"
    "    \"\"\"Abstract base class for External Memory Management (EMM) Plugins.\"\"\"\n"
    "\n"
    "    def __init__(self, *args, **kwargs):\n"
    "        if 'context' not in kwargs:\n"
    "            raise RuntimeError('Memory manager requires a context')\n"
    "        self.context = kwargs.pop('context')\n"
    "\n"
    "    @abstractmethod\n"
    "    def memalloc(self, size):\n"
    "        \"\"\"A MemoryPointer owning size bytes of device memory.\"\"\"\n"
    "\n"
    "    @abstractmethod\n"
    "    def memhostalloc(self, size, mapped, portable, wc):\n"
    "        \"\"\"Pinned (or mapped) host memory.\"\"\"\n"
    "\n"
    "    @abstractmethod\n"
    "    def mempin(self, owner, pointer, size, mapped):\n"
    "        \"\"\"Pins host memory that is already allocated.\"\"\"\n"
    "\n"
    "    @abstractmethod\n"
    "    def initialize(self):\n"
    "        \"\"\"Readies the instance for use.\"\"\"\n"
    "\n"
    "    @abstractmethod\n"
    "    def get_ipc_handle(self, memory):\n"
    "        \"\"\"An IpcHandle of the memory.\"\"\"\n"
    "\n"
    "    @abstractmethod\n"
    "    def get_memory_info(self):\n"
    "        \"\"\"(free, total) bytes; may raise NotImplementedError.\"\"\"\n"
    "\n"
    "    @abstractmethod\n"
    "    def reset(self):\n"
    "        \"\"\"Clears up all memory allocated in this context.\"\"\"\n"
    "\n"
    "    @abstractmethod\n"
    "    def defer_cleanup(self):\n"
    "        \"\"\"A context manager deferring cleanup while active.\"\"\"\n"
    "\n"
    "    @property\n"
    "    @abstractmethod\n"
    "    def interface_version(self):\n"
    "        \"\"\"The EMM Plugin interface version implemented: 1.\"\"\"\n"
    "\n"
    "\n"
    "class HostOnlyCUDAMemoryManager(BaseCUDAMemoryManager):\n"
    "    \"\"\"Base class for EMM Plugins that only allocate device memory: host memory is\n"
    "    nbcuda's own (as numba's, pinned and mapped by the driver).\"\"\"\n"
    "\n"
    "    def memhostalloc(self, size, mapped=False, portable=False, wc=False):\n"
    "        \"\"\"Page-locked host memory of size bytes from nbcuda (mapped into the\n"
    "        device when mapped is set).\"\"\"\n"
    "        return _nbcuda._memhostalloc(size, mapped, portable, wc)\n"
    "\n"
    "    def mempin(self, owner, pointer, size, mapped=False):\n"
    "        \"\"\"Page-locks size bytes at pointer (owner's memory, kept alive) with\n"
    "        nbcuda.\"\"\"\n"
    "        return _nbcuda._mempin(owner, pointer, size, mapped)\n"
    "\n"
    "    def reset(self):\n"
    "        pass\n"
    "\n"
    "    def defer_cleanup(self):\n"
    "        \"\"\"The context's defer_cleanup(): frees wait for the end of the block.\"\"\"\n"
    "        return self.context.defer_cleanup()\n"
    "\n"
    "\n"
    "class GetIpcHandleMixin:\n"
    "    \"\"\"A default get_ipc_handle(): the context's own (cuIpcGetMemHandle of the\n"
    "    allocation holding the memory).\"\"\"\n"
    "\n"
    "    def get_ipc_handle(self, memory):\n"
    "        \"\"\"An IpcHandle of memory (a MemoryPointer of this context) that another\n"
    "        process can open.\"\"\"\n"
    "        return self.context.get_ipc_handle(memory)\n"
    "\n"
    "\n"
    "class NumbaCUDAMemoryManager(GetIpcHandleMixin, HostOnlyCUDAMemoryManager):\n"
    "    \"\"\"nbcuda's own device memory, as numba's default memory manager: what\n"
    "    Context.memory_manager is while no plugin is set. It delegates to the context.\"\"\"\n"
    "\n"
    "    def initialize(self):\n"
    "        \"\"\"Nothing to do: the context is ready.\"\"\"\n"
    "        pass\n"
    "\n"
    "    def memalloc(self, size):\n"
    "        \"\"\"A MemoryPointer owning size bytes of the context's device memory.\"\"\"\n"
    "        return self.context.memalloc(size)\n"
    "\n"
    "    def memallocmanaged(self, size, attach_global):\n"
    "        \"\"\"Managed memory of size bytes, attached to all streams when attach_global\n"
    "        is true (Context.memallocmanaged).\"\"\"\n"
    "        return self.context.memallocmanaged(size, attach_global)\n"
    "\n"
    "    def get_memory_info(self):\n"
    "        \"\"\"MemoryInfo(free, total) of the context's device.\"\"\"\n"
    "        return self.context.get_memory_info()\n"
    "\n"
    "    def reset(self):\n"
    "        \"\"\"Frees what nbcuda holds in the context (Context.reset).\"\"\"\n"
    "        self.context.reset()\n"
    "\n"
    "    @property\n"
    "    def deallocations(self):\n"
    "        \"\"\"The context's pending deallocations (Context.deallocations).\"\"\"\n"
    "        return self.context.deallocations\n"
    "\n"
    "    @property\n"
    "    def interface_version(self):\n"
    "        \"\"\"The EMM Plugin interface version implemented: 1.\"\"\"\n"
    "        return 1\n"
    "\n"
    "\n"
    "for _c in (MemoryInfo, BaseCUDAMemoryManager, HostOnlyCUDAMemoryManager, "
    "GetIpcHandleMixin, NumbaCUDAMemoryManager):\n"
    "    _c.__module__ = 'nbcuda'\n";

static const char *const class_names[] = {"MemoryInfo", "BaseCUDAMemoryManager",
                                          "HostOnlyCUDAMemoryManager", "GetIpcHandleMixin",
                                          "NumbaCUDAMemoryManager"};

/* Runs classes_source in a namespace of its own (kept in st->emm.classes) and makes its
 * classes attributes of the module; st->emm.memory_info is MemoryInfo. */
static int make_classes(PyObject *module, nbc__py_state *st) {
  PyObject *ns = PyDict_New();
  int ok = ns && PyDict_SetItemString(ns, "__builtins__", PyEval_GetBuiltins()) == 0 &&
           PyDict_SetItemString(ns, "__name__", st->module_name) == 0 &&
           PyDict_SetItemString(ns, "_nbcuda", module) == 0;
  PyObject *code = ok ? Py_CompileString(classes_source, "<nbcuda emm>", Py_file_input) : NULL;
  PyObject *r = code ? PyEval_EvalCode(code, ns, ns) : NULL;
  Py_XDECREF(code);
  if (!r) {
    Py_XDECREF(ns);
    return -1;
  }
  Py_DECREF(r);
  st->emm.classes = ns;
  for (size_t i = 0; i < sizeof class_names / sizeof *class_names; i++) {
    PyObject *cls = PyDict_GetItemString(ns, class_names[i]);
    if (!cls || PyModule_AddObjectRef(module, class_names[i], cls) < 0) {
      if (!PyErr_Occurred())
        PyErr_Format(PyExc_SystemError, "nbcuda: the EMM source made no %s", class_names[i]);
      return -1;
    }
  }
  /* get_memory_info fills instances itself: it must be a tuple subclass, as namedtuples are. */
  PyObject *info = PyDict_GetItemString(ns, "MemoryInfo");
  if (!PyType_Check(info) || !PyType_IsSubtype((PyTypeObject *)info, &PyTuple_Type)) {
    PyErr_SetString(PyExc_SystemError, "collections.namedtuple did not make a tuple class");
    return -1;
  }
  st->emm.memory_info = Py_NewRef(info);
  return 0;
}

/* cls(context=context), as numba makes a plugin instance; a new reference or NULL. */
static PyObject *instance(PyObject *cls, PyObject *context) {
  PyObject *kwargs = Py_BuildValue("{sO}", "context", context);
  PyObject *empty = PyTuple_New(0);
  PyObject *m = kwargs && empty ? PyObject_Call(cls, empty, kwargs) : NULL;
  Py_XDECREF(kwargs);
  Py_XDECREF(empty);
  return m;
}

/* 0 when cls(context=None).interface_version is the one supported, else -1 with numba's
 * RuntimeError (or what the class raised). */
static int check_version(PyObject *cls) {
  PyObject *dummy = instance(cls, Py_None);
  PyObject *iv = dummy ? PyObject_GetAttrString(dummy, "interface_version") : NULL;
  Py_XDECREF(dummy);
  if (!iv) return -1;
  long v = PyLong_AsLong(iv);
  Py_DECREF(iv);
  if (v == -1 && PyErr_Occurred()) return -1;
  if (v == EMM_INTERFACE_VERSION) return 0;
  PyErr_Format(PyExc_RuntimeError, "EMM Plugin interface has version %ld - version %d required",
               v, EMM_INTERFACE_VERSION);
  return -1;
}

static PyObject *py_set_memory_manager(PyObject *module, PyObject *cls) {
  nbc__py_state *st = nbc__py_module_state(module);
  if (check_version(cls) < 0) return NULL;
  Py_XSETREF(st->emm.manager, Py_NewRef(cls));
  st->emm.env_checked = 1; /* an explicit choice wins over the environment */
  Py_RETURN_NONE;
}

int nbc__py_emm_active(nbc__py_state *st) {
  if (st->emm.manager) return 1;
  if (st->emm.env_checked) return 0;
  st->emm.env_checked = 1;
  const char *name = getenv("NBCUDA_MEMORY_MANAGER");
  if (!name || !*name) name = getenv("NUMBA_CUDA_MEMORY_MANAGER");
  if (!name || !*name || strcmp(name, "default") == 0) return 0;
  PyObject *mod = PyImport_ImportModule(name);
  PyObject *cls = mod ? PyObject_GetAttrString(mod, "_numba_memory_manager") : NULL;
  Py_XDECREF(mod);
  if (!cls || check_version(cls) < 0) {
    Py_XDECREF(cls);
    st->emm.env_checked = 0; /* reported now, and again at the next allocation */
    return -1;
  }
  st->emm.manager = cls;
  return 1;
}

/* The plugin instance serving context: made (cls(context=...), initialize()) on first use. */
static PyObject *manager_of(nbc__py_state *st, PyObject *context) {
  PyObject **slot = nbc__py_context_manager_slot(context);
  if (*slot) return *slot;
  PyObject *m = instance(st->emm.manager, context);
  PyObject *r = m ? PyObject_CallMethod(m, "initialize", NULL) : NULL;
  if (!r) {
    Py_XDECREF(m);
    return NULL;
  }
  Py_DECREF(r);
  *slot = m;
  return m;
}

PyObject *nbc__py_emm_manager(nbc__py_state *st, PyObject *context) {
  return Py_XNewRef(manager_of(st, context));
}

PyObject *nbc__py_emm_own_manager(nbc__py_state *st, PyObject *context) {
  PyObject *cls = PyDict_GetItemString(st->emm.classes, "NumbaCUDAMemoryManager");
  return cls ? instance(cls, context) : NULL;
}

PyObject *nbc__py_emm_memalloc(nbc__py_state *st, PyObject *context, size_t size,
                               nbc_devptr_t *pptr) {
  *pptr = 0;
  PyObject *m = manager_of(st, context);
  PyObject *mp = m ? PyObject_CallMethod(m, "memalloc", "n", (Py_ssize_t)size) : NULL;
  if (!mp) return NULL;
  /* numba's MemoryPointer and nbcuda's both give their address as a ctypes pointer */
  PyObject *cp = PyObject_GetAttrString(mp, "device_ctypes_pointer");
  PyObject *value = cp ? PyObject_GetAttrString(cp, "value") : NULL;
  Py_XDECREF(cp);
  unsigned long long v = 0;
  if (value && value != Py_None) v = PyLong_AsUnsignedLongLong(value);
  Py_XDECREF(value);
  if (!value || PyErr_Occurred()) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "the memory manager's memalloc(%zu) gave %R, not a MemoryPointer (an object "
                 "with device_ctypes_pointer)", size, mp);
    Py_DECREF(mp);
    return NULL;
  }
  *pptr = (nbc_devptr_t)v;
  return mp;
}

int nbc__py_emm_reset(PyObject *context) {
  PyObject **slot = nbc__py_context_manager_slot(context);
  PyObject *m = *slot;
  if (!m) return 0;
  *slot = NULL;
  PyObject *r = PyObject_CallMethod(m, "reset", NULL);
  Py_DECREF(m);
  Py_XDECREF(r);
  return r ? 0 : -1;
}

static PyMethodDef emm_functions[] = {
    {"set_memory_manager", py_set_memory_manager, METH_O,
     "set_memory_manager($module, mm_plugin, /)\n--\n\n"
     "Device memory comes from cls(context=ctx).memalloc(size), an EMM plugin (numba's "
     "interface version 1)."},
    {NULL, NULL, 0, NULL},
};

int nbc__py_emm_init(PyObject *module, nbc__py_state *st) {
  if (make_classes(module, st) < 0) return -1;
  return PyModule_AddFunctions(module, emm_functions);
}
