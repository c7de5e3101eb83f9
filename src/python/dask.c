/* dask.c — nbcuda's device arrays in dask.distributed's serialization families, with no Dask
 * imported by nbcuda. When nbcuda is imported into a process where distributed's protocol
 * modules are loaded (a Dask worker unpickling an array's type, a client that imported
 * distributed first), it adds a lazy registration under its module name to distributed's
 * dispatchers, as distributed registers numba and cupy: the first nbcuda array serialized or
 * deserialized there imports nbcuda.dask (src/python/package/dask.py), whose import registers
 * its functions. Elsewhere nothing is done; nbcuda.dask.register() is the explicit way.
 *
 * A process whose distributed lacks these dispatchers (another version) still imports nbcuda:
 * the hook is an optimisation over the pickle family, which device arrays always support. */
#include "nbcuda_py.h"

/* Each family's module and its two dispatchers (dask.utils.Dispatch objects). */
static const char *const families[][3] = {
    {"distributed.protocol.serialize", "dask_serialize", "dask_deserialize"},
    {"distributed.protocol.cuda", "cuda_serialize", "cuda_deserialize"},
};

/* functools.partial(importlib.import_module, "<module>.dask"); NULL with an exception. */
static PyObject *import_glue(nbc__py_state *st) {
  PyObject *functools = PyImport_ImportModule("functools");
  PyObject *importlib = functools ? PyImport_ImportModule("importlib") : NULL;
  PyObject *import_module = importlib ? PyObject_GetAttrString(importlib, "import_module") : NULL;
  PyObject *name = import_module ? PyUnicode_FromFormat("%U.dask", st->module_name) : NULL;
  PyObject *r = name ? PyObject_CallMethod(functools, "partial", "(OO)", import_module, name)
                     : NULL;
  Py_XDECREF(name);
  Py_XDECREF(import_module);
  Py_XDECREF(importlib);
  Py_XDECREF(functools);
  return r;
}

int nbc__py_dask_init(PyObject *module, nbc__py_state *st) {
  (void)module;
  PyObject *modules = PyImport_GetModuleDict(), *glue = NULL;
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
    PyObject *family = PyDict_GetItemString(modules, families[f][0]);
    if (!family || family == Py_None) continue;
    if (!glue && !(glue = import_glue(st))) break;
    for (int d = 1; d <= 2; d++) {
      PyObject *dispatcher = PyObject_GetAttrString(family, families[f][d]);
      PyObject *r = dispatcher ? PyObject_CallMethod(dispatcher, "register_lazy", "(OO)",
                                                     st->module_name, glue)
                               : NULL;
      Py_XDECREF(r);
      Py_XDECREF(dispatcher);
      if (!r) PyErr_Clear();
    }
  }
  Py_XDECREF(glue);
  PyErr_Clear();
  return 0;
}
