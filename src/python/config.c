/* config.c — nbcuda.config, numba-cuda's `from numba.cuda import config` for the settings
 * nbcuda reads from it:
 * - CUDA_NVRTC_EXTRA_SEARCH_PATHS, the directories (separated by ':') NVRTC searches for
 *   #include when it compiles a linked .cu file. As in numba-cuda it starts from the
 *   environment variable NUMBA_CUDA_NVRTC_EXTRA_SEARCH_PATHS ("" without it) and is read at
 *   each compilation, so a value set before a kernel is first launched takes effect.
 * - numba's performance warnings (NumbaPerformanceWarning): CUDA_LOW_OCCUPANCY_WARNINGS (a
 *   launch configured with a grid of fewer than 128 blocks), CUDA_WARN_ON_IMPLICIT_COPY (a
 *   numpy array passed to a kernel, copied there and back) and DISABLE_PERFORMANCE_WARNINGS,
 *   which silences both; from NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS (default 1),
 *   NUMBA_CUDA_WARN_ON_IMPLICIT_COPY (1) and NUMBA_DISABLE_PERFORMANCE_WARNINGS (0), as
 *   numba's config reads them. The module is of a subclass of ModuleType whose __setattr__
 *   (and __delattr__) recomputes the flags the launch path reads (st->warn_*, st->config.cai_sync), so
 *   `config.CUDA_LOW_OCCUPANCY_WARNINGS = 0` takes effect at once and a launch costs no
 *   attribute lookup.
 * - CUDA_ARRAY_INTERFACE_SYNC (NUMBA_CUDA_ARRAY_INTERFACE_SYNC, 1): whether an object
 *   whose __cuda_array_interface__ names a stream has that stream synchronized before nbcuda
 *   uses its memory (as_cuda_array, from_cuda_array_interface, a kernel argument), as the
 *   interface's version 3 asks of consumers; kept in st->config.cai_sync like the warnings' flags.
 * - the defaults of jit's and compile's debug and opt when they are not given:
 *   CUDA_DEBUGINFO_DEFAULT (NUMBA_CUDA_DEBUGINFO, 0) and OPT (NUMBA_OPT, 3; opt is on unless
 *   it is 0), read when a decorator is made or a function compiled, as numba reads them.
 * - COMPILE_TIME_LIMIT (NBCUDA_COMPILE_TIME_LIMIT, 0: none), nbcuda's own: the seconds
 *   libNVVM may take for one compilation (nbc_compile_options_t.time_limit), read at each
 *   compilation; past it the compile is a CompileError.
 * - numba's dumps of each compilation, printed to sys.stdout (dump.c): DUMP_LLVM
 *   (NUMBA_DUMP_LLVM) the NVVM IR handed to libNVVM and DUMP_ASSEMBLY (NUMBA_DUMP_ASSEMBLY)
 *   the PTX it made, both defaulting to NUMBA_DEBUG (0) as numba's do; read at each
 *   compilation.
 * Two facts code written for numba-cuda reads from its config are there too, as False:
 * ENABLE_CUDASIM (nbcuda has no simulator: kernels run on the device; importing nbcuda with
 * NUMBA_ENABLE_CUDASIM set is an ImportError) and CUDA_ENABLE_NRT
 * (nbcuda has no Numba runtime: no allocation in kernels). Other attributes may be set on
 * the module; nbcuda does not read them (setting these two changes nothing).
 */
#include "nbcuda_py.h"

#include <stdlib.h>

static const char search_paths_name[] = "CUDA_NVRTC_EXTRA_SEARCH_PATHS";

/* The integer settings: name, environment variable, default (FROM_DEBUG: NUMBA_DEBUG's value,
 * 0 without it). */
enum { FROM_DEBUG = -1 };
static const struct {
  const char *name, *env;
  long dflt;
} int_settings[] = {
    {"CUDA_LOW_OCCUPANCY_WARNINGS", "NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", 1},
    {"CUDA_WARN_ON_IMPLICIT_COPY", "NUMBA_CUDA_WARN_ON_IMPLICIT_COPY", 1},
    {"DISABLE_PERFORMANCE_WARNINGS", "NUMBA_DISABLE_PERFORMANCE_WARNINGS", 0},
    {"CUDA_DEBUGINFO_DEFAULT", "NUMBA_CUDA_DEBUGINFO", 0},
    {"OPT", "NUMBA_OPT", 3},
    {"CUDA_ARRAY_INTERFACE_SYNC", "NUMBA_CUDA_ARRAY_INTERFACE_SYNC", 1},
    {"DUMP_LLVM", "NUMBA_DUMP_LLVM", FROM_DEBUG},
    {"DUMP_ASSEMBLY", "NUMBA_DUMP_ASSEMBLY", FROM_DEBUG},
    {"COMPILE_TIME_LIMIT", "NBCUDA_COMPILE_TIME_LIMIT", 0},
};

/* The environment variable's integer value; dflt when it is unset, empty or not an integer
 * (as numba's _readenv). */
static long env_int(const char *name, long dflt) {
  const char *env = getenv(name);
  char *end = NULL;
  long v = env && *env ? strtol(env, &end, 10) : dflt;
  return end && *end ? dflt : v;
}

/* Whether the setting is true now (absent or not answering: false). */
static int setting_on(PyObject *config, const char *name) {
  PyObject *v = PyObject_GetAttrString(config, name);
  int on = v ? PyObject_IsTrue(v) : 0;
  Py_XDECREF(v);
  if (on < 0 || !v) PyErr_Clear();
  return on > 0;
}

int nbc__py_debug_option(nbc__py_state *st, PyObject *given) {
  if (given && given != Py_None) return PyObject_IsTrue(given);
  return setting_on(st->config.module, "CUDA_DEBUGINFO_DEFAULT");
}

int nbc__py_opt_option(nbc__py_state *st, PyObject *given) {
  if (given && given != Py_None) return PyObject_IsTrue(given);
  return setting_on(st->config.module, "OPT");
}

int nbc__py_config_on(nbc__py_state *st, const char *name) { return setting_on(st->config.module, name); }

int nbc__py_compile_time_limit(nbc__py_state *st, double *pseconds) {
  PyObject *v = PyObject_GetAttrString(st->config.module, "COMPILE_TIME_LIMIT");
  double seconds = v ? PyFloat_AsDouble(v) : -1.0;
  Py_XDECREF(v);
  if (seconds == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    PyErr_SetString(PyExc_TypeError,
                    "nbcuda.config.COMPILE_TIME_LIMIT must be a number of seconds (0: none)");
    return -1;
  }
  if (!(seconds >= 0) || seconds > 1e9) {
    PyErr_Format(PyExc_ValueError,
                 "nbcuda.config.COMPILE_TIME_LIMIT must be 0 (no limit) or a number of seconds "
                 "up to 1e9, not %R", v ? v : Py_None);
    return -1;
  }
  *pseconds = seconds;
  return 0;
}

static void refresh_flags(nbc__py_state *st, PyObject *config) {
  int quiet = setting_on(config, "DISABLE_PERFORMANCE_WARNINGS");
  st->config.warn_low_occupancy = !quiet && setting_on(config, "CUDA_LOW_OCCUPANCY_WARNINGS");
  st->config.warn_implicit_copy = !quiet && setting_on(config, "CUDA_WARN_ON_IMPLICIT_COPY");
  st->config.cai_sync = setting_on(config, "CUDA_ARRAY_INTERFACE_SYNC");
}

static int config_setattro(PyObject *self, PyObject *name, PyObject *value) {
  if (PyObject_GenericSetAttr(self, name, value) < 0) return -1;
  refresh_flags(nbc__py_state_of(self), self);
  return 0;
}

static int config_traverse(PyObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  return PyModule_Type.tp_traverse(self, visit, arg);
}

static PyType_Slot config_slots[] = {
    {Py_tp_setattro, config_setattro},
    {Py_tp_traverse, config_traverse},
    {Py_tp_doc, (void *)"The type of nbcuda.config: a module whose settings are checked when "
                        "set (a bad value is refused)."},
    {0, NULL}};
static PyType_Spec config_spec = {"nbcuda._Config", 0, 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, config_slots};

/* numba-cuda's switches nbcuda does not act on are refused where numba would read them, so
 * that setting one is never silently ignored: the simulator is an ImportError (code expecting
 * it would otherwise run on a GPU, or fail far from the cause), and the driver-call log's and
 * the linker log's settings a warning. */
static const char *const unsupported_switches[] = {
    "NUMBA_CUDA_LOG_LEVEL", "NUMBA_CUDA_LOG_API_ARGS", "NUMBA_CUDA_LOG_SIZE",
    "NUMBA_CUDA_VERBOSE_JIT_LOG"};

static int refuse_unsupported_switches(void) {
  if (env_int("NUMBA_ENABLE_CUDASIM", 0) != 0) {
    PyErr_SetString(PyExc_ImportError,
                    "NUMBA_ENABLE_CUDASIM is set, but nbcuda has no CUDA simulator: its kernels "
                    "are compiled to PTX and run on a GPU. Unset NUMBA_ENABLE_CUDASIM to use "
                    "nbcuda (compile_ptx and compile work without a GPU), or import numba.cuda "
                    "to run kernels in numba-cuda's simulator");
    return -1;
  }
  for (size_t i = 0; i < sizeof unsupported_switches / sizeof unsupported_switches[0]; i++) {
    const char *v = getenv(unsupported_switches[i]);
    if (v && *v &&
        PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
                         "%s=%s is set, but nbcuda does not log driver API calls or the "
                         "linker's messages: the setting has no effect",
                         unsupported_switches[i], v) < 0)
      return -1;
  }
  return 0;
}

int nbc__py_config_init(PyObject *module, nbc__py_state *st) {
  if (refuse_unsupported_switches() < 0) return -1;
  PyObject *config = PyModule_New("nbcuda.config");
  if (!config) return -1;
  PyObject *cls = PyType_FromModuleAndSpec(module, &config_spec, (PyObject *)&PyModule_Type);
  int rc = !cls || PyObject_SetAttrString(config, "__class__", cls) < 0 ? -1 : 0;
  Py_XDECREF(cls);
  for (size_t i = 0; rc == 0 && i < sizeof int_settings / sizeof int_settings[0]; i++) {
    long dflt = int_settings[i].dflt == FROM_DEBUG ? env_int("NUMBA_DEBUG", 0)
                                                   : int_settings[i].dflt;
    rc = PyModule_AddIntConstant(config, int_settings[i].name,
                                 env_int(int_settings[i].env, dflt));
  }
  if (rc < 0) {
    Py_DECREF(config);
    return -1;
  }
  refresh_flags(st, config);
  const char *env = getenv("NUMBA_CUDA_NVRTC_EXTRA_SEARCH_PATHS");
  rc = PyModule_AddStringConstant(config, search_paths_name, env ? env : "") < 0 ||
                   PyModule_AddStringConstant(config, "__doc__",
                                              "numba.cuda.config's settings nbcuda reads: "
                                              "CUDA_NVRTC_EXTRA_SEARCH_PATHS, the performance "
                                              "warnings' switches, the debug and opt "
                                              "defaults, CUDA_ARRAY_INTERFACE_SYNC, "
                                              "DUMP_LLVM and DUMP_ASSEMBLY") < 0 ||
                   PyModule_AddObjectRef(config, "ENABLE_CUDASIM", Py_False) < 0 ||
                   PyModule_AddObjectRef(config, "CUDA_ENABLE_NRT", Py_False) < 0 ||
                   PyModule_AddObjectRef(module, "config", config) < 0 ||
                   PyDict_SetItemString(PyImport_GetModuleDict(), "nbcuda.config", config) < 0
               ? -1
               : 0;
  if (rc == 0) st->config.module = Py_NewRef(config);
  Py_DECREF(config);
  return rc;
}

PyObject *nbc__py_nvrtc_search_paths(nbc__py_state *st) {
  PyObject *v = PyObject_GetAttrString(st->config.module, search_paths_name);
  if (v && !PyUnicode_Check(v)) {
    PyErr_Format(PyExc_TypeError, "nbcuda.config.%s must be a str of directories separated "
                 "by ':', not %R", search_paths_name, v);
    Py_CLEAR(v);
  }
  return v;
}
