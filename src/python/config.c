/* config.c — nbcuda.config, numba-cuda's `from numba.cuda import config` for the setting
 * nbcuda reads from it: CUDA_NVRTC_EXTRA_SEARCH_PATHS, the directories (separated by ':')
 * NVRTC searches for #include when it compiles a linked .cu file. As in numba-cuda it starts
 * from the environment variable NUMBA_CUDA_NVRTC_EXTRA_SEARCH_PATHS ("" without it) and is
 * read at each compilation, so a value set before a kernel is first launched takes effect.
 * Two facts code written for numba-cuda reads from its config are there too, as False:
 * ENABLE_CUDASIM (nbcuda has no simulator: kernels run on the device) and CUDA_ENABLE_NRT
 * (nbcuda has no Numba runtime: no allocation in kernels). Other attributes may be set on
 * the module; nbcuda does not read them (setting these two changes nothing).
 */
#include "nbcuda_py.h"

#include <stdlib.h>

static const char search_paths_name[] = "CUDA_NVRTC_EXTRA_SEARCH_PATHS";

int nbc__py_config_init(PyObject *module, nbc__py_state *st) {
  PyObject *config = PyModule_New("nbcuda.config");
  if (!config) return -1;
  const char *env = getenv("NUMBA_CUDA_NVRTC_EXTRA_SEARCH_PATHS");
  int rc = PyModule_AddStringConstant(config, search_paths_name, env ? env : "") < 0 ||
                   PyModule_AddStringConstant(config, "__doc__",
                                              "numba.cuda.config's settings nbcuda reads "
                                              "(CUDA_NVRTC_EXTRA_SEARCH_PATHS)") < 0 ||
                   PyModule_AddObjectRef(config, "ENABLE_CUDASIM", Py_False) < 0 ||
                   PyModule_AddObjectRef(config, "CUDA_ENABLE_NRT", Py_False) < 0 ||
                   PyModule_AddObjectRef(module, "config", config) < 0 ||
                   PyDict_SetItemString(PyImport_GetModuleDict(), "nbcuda.config", config) < 0
               ? -1
               : 0;
  if (rc == 0) st->config = Py_NewRef(config);
  Py_DECREF(config);
  return rc;
}

PyObject *nbc__py_nvrtc_search_paths(nbc__py_state *st) {
  PyObject *v = PyObject_GetAttrString(st->config, search_paths_name);
  if (v && !PyUnicode_Check(v)) {
    PyErr_Format(PyExc_TypeError, "nbcuda.config.%s must be a str of directories separated "
                 "by ':', not %R", search_paths_name, v);
    Py_CLEAR(v);
  }
  return v;
}
