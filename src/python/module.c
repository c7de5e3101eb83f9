/* module.c — the `nbcuda` extension module: definition, multi-phase initialisation, module
 * state, and the module-level functions that belong to no object (is_available, detect,
 * the runtime version wrapper).
 *
 * Initialisation does no CUDA work at all: like numba-cuda, importing nbcuda must not call
 * cuInit (CUDA_VISIBLE_DEVICES set after the import must still count) and must be fast, so
 * every file's init only creates types, exceptions and type objects; the driver is loaded
 * by the C library on first use. numpy is imported on the first call that needs it.
 */
#include "nbcuda_py.h"
#include "devicearray.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

nbc__py_state *nbc__py_module_state(PyObject *module) {
  return (nbc__py_state *)PyModule_GetState(module);
}

nbc__py_state *nbc__py_state_of(PyObject *self) {
  /* the module of the object's class, or of the first base class that has one (a class
   * derived in Python from one of ours, such as a numba extension type on types.Type) */
  for (PyTypeObject *tp = Py_TYPE(self); tp; tp = tp->tp_base)
    if ((tp->tp_flags & Py_TPFLAGS_HEAPTYPE) && ((PyHeapTypeObject *)tp)->ht_module)
      return (nbc__py_state *)PyModule_GetState(((PyHeapTypeObject *)tp)->ht_module);
  PyErr_Format(PyExc_TypeError, "%s is not an object of the nbcuda module",
               Py_TYPE(self)->tp_name);
  return NULL;
}

/* ---------------------------------------------------------------- argument parsing ---- */

/* Hot functions take METH_FASTCALL | METH_KEYWORDS and handle the common calls (positional
 * arguments only) themselves, because PyArg_ParseTupleAndKeywords costs more than the
 * driver call they wrap. Everything else — keywords, wrong counts — comes here. A well-formed
 * call of a function whose format has only O, p and s codes (every keyword one of kwlist,
 * given once, the required arguments there, an s a str without NUL) is read off the vector
 * directly (parse_direct: `device_array(n, dtype=...)`, `to_device(h, stream=s)` make no tuple
 * or dict); any other is parsed by PyArg_ParseTupleAndKeywords itself with the function's
 * format and keyword list, so the results and the error messages are exactly those of a
 * METH_VARARGS | METH_KEYWORDS function. "O" results are borrowed from the caller's vector,
 * which outlives the call. */

/* parse_direct's limit on a function's parameters. */
#define DIRECT_MAX_PARAMS 8

/* 1 with the outputs set, 0 when the call is not one parse_direct reads (nothing set), -1
 * with an exception (a p argument whose truth raised, as PyArg's "p" would raise it). */
static int parse_direct(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                        const char *fmt, char **kwlist, va_list va) {
  char codes[DIRECT_MAX_PARAMS];
  int n = 0, required = -1;
  for (const char *f = fmt; *f && *f != ':'; f++) {
    if (*f == '|') {
      required = n;
      continue;
    }
    if ((*f != 'O' && *f != 'p' && *f != 's') || n == DIRECT_MAX_PARAMS) return 0;
    codes[n++] = *f;
  }
  if (required < 0) required = n;
  for (int i = 0; i <= n; i++)
    if ((kwlist[i] == NULL) != (i == n)) return 0; /* a name per code */
  if (nargs > n) return 0;
  PyObject *given[DIRECT_MAX_PARAMS] = {NULL};
  for (Py_ssize_t i = 0; i < nargs; i++) given[i] = args[i];
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t k = 0; k < nkw; k++) {
    PyObject *name = PyTuple_GET_ITEM(kwnames, k);
    int j = 0;
    while (j < n && PyUnicode_CompareWithASCIIString(name, kwlist[j]) != 0) j++;
    if (j == n || given[j]) return 0; /* unknown, or given twice */
    given[j] = args[nargs + k];
  }
  for (int i = 0; i < required; i++)
    if (!given[i]) return 0;
  const char *text[DIRECT_MAX_PARAMS];
  int truth[DIRECT_MAX_PARAMS];
  for (int i = 0; i < n; i++) { /* converted first: a refusal leaves the outputs alone */
    if (!given[i] || codes[i] == 'O') continue;
    if (codes[i] == 'p' && (truth[i] = PyObject_IsTrue(given[i])) < 0) return -1;
    if (codes[i] == 's') {
      Py_ssize_t len;
      if (!PyUnicode_Check(given[i])) return 0;
      if (!(text[i] = PyUnicode_AsUTF8AndSize(given[i], &len))) return -1;
      if ((size_t)len != strlen(text[i])) return 0;
    }
  }
  for (int i = 0; i < n; i++) {
    if (codes[i] == 'O') {
      PyObject **out = va_arg(va, PyObject **);
      if (given[i]) *out = given[i];
    } else if (codes[i] == 'p') {
      int *out = va_arg(va, int *);
      if (given[i]) *out = truth[i];
    } else {
      const char **out = va_arg(va, const char **);
      if (given[i]) *out = text[i];
    }
  }
  return 1;
}

int nbc__py_parse_slow(PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames,
                       const char *fmt, char **kwlist, ...) {
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  va_list direct;
  va_start(direct, kwlist);
  int rc = parse_direct(args, nargs, kwnames, fmt, kwlist, direct);
  va_end(direct);
  if (rc != 0) return rc > 0;
  PyObject *tuple = PyTuple_New(nargs), *dict = NULL;
  if (!tuple) return 0;
  for (Py_ssize_t i = 0; i < nargs; i++) PyTuple_SET_ITEM(tuple, i, Py_NewRef(args[i]));
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  if (nkw) {
    if (!(dict = PyDict_New())) {
      Py_DECREF(tuple);
      return 0;
    }
    for (Py_ssize_t i = 0; i < nkw; i++)
      if (PyDict_SetItem(dict, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) < 0) {
        Py_DECREF(tuple);
        Py_DECREF(dict);
        return 0;
      }
  }
  va_list va;
  va_start(va, kwlist);
  int ok = PyArg_VaParseTupleAndKeywords(tuple, dict, fmt, kwlist, va);
  va_end(va);
  Py_DECREF(tuple);
  Py_XDECREF(dict);
  return ok;
}

/* obj.name when it exists: 1 with *presult set, or 0 (any lookup error cleared). Unlike
 * PyObject_GetAttr + PyErr_Clear, a missing attribute on an ordinary object (a numpy array
 * asked for __cuda_array_interface__) makes no AttributeError, whose message formatting
 * costs more than the rest of to_device. */
int nbc__py_optional_attr(PyObject *obj, PyObject *name, PyObject **presult) {
#if PY_VERSION_HEX >= 0x030D0000
  int rc = PyObject_GetOptionalAttr(obj, name, presult);
#else
  int rc = _PyObject_LookupAttr(obj, name, presult);
#endif
  if (rc < 0) {
    PyErr_Clear();
    *presult = NULL;
    return 0;
  }
  return rc;
}

PyObject *nbc__py_namespace(PyObject *kwargs) {
  if (!kwargs) return NULL;
  PyObject *types = PyImport_ImportModule("types");
  PyObject *ns = types ? PyObject_GetAttrString(types, "SimpleNamespace") : NULL;
  PyObject *empty = ns ? PyTuple_New(0) : NULL;
  PyObject *r = empty ? PyObject_Call(ns, empty, kwargs) : NULL;
  Py_XDECREF(empty);
  Py_XDECREF(ns);
  Py_XDECREF(types);
  Py_DECREF(kwargs);
  return r;
}

/* ---------------------------------------------------------------- detection ----------- */

static PyObject *py_is_available(PyObject *module, PyObject *unused) {
  (void)module;
  (void)unused;
  int ok;
  Py_BEGIN_ALLOW_THREADS ok = nbc_is_available();
  Py_END_ALLOW_THREADS return PyBool_FromLong(ok);
}

/* What a C report writer printed to a FILE, as a str: the writer runs with the GIL released,
 * into a memory stream; NULL with the exception set when it fails. */
typedef nbc_status_t (*report_writer)(FILE *out, void *arg);

static PyObject *report_text(nbc__py_state *st, report_writer write, void *arg) {
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  if (!out) return PyErr_NoMemory();
  nbc_status_t s;
  Py_BEGIN_ALLOW_THREADS s = write(out, arg);
  Py_END_ALLOW_THREADS fclose(out);
  PyObject *str = s == NBC_OK ? PyUnicode_DecodeUTF8(text, (Py_ssize_t)size, "replace")
                              : nbc__py_raise(st, s);
  free(text);
  return str;
}

static nbc_status_t write_detect(FILE *out, void *pany) { return nbc_detect(out, pany); }

static nbc_status_t write_info_json(FILE *out, void *unused) {
  (void)unused;
  return nbc_info_print(out, 1);
}

/* detect() prints through sys.stdout (so that redirection and pytest's capture work), hence
 * the report is first written to a memory stream. */
static PyObject *py_detect(PyObject *module, PyObject *unused) {
  (void)unused;
  int any = 0;
  PyObject *str = report_text(nbc__py_module_state(module), write_detect, &any);
  if (!str) return NULL;
  PyObject *sys_stdout = PySys_GetObject("stdout");
  if (sys_stdout && sys_stdout != Py_None) {
    PyObject *r = PyObject_CallMethod(sys_stdout, "write", "(O)", str);
    if (!r) {
      Py_DECREF(str);
      return NULL;
    }
    Py_DECREF(r);
  }
  Py_DECREF(str);
  return PyBool_FromLong(any);
}

/* info(): nbc_info_print's JSON report (the same text as `nbcuda info --json`) as a dict. */
static PyObject *py_info(PyObject *module, PyObject *unused) {
  (void)unused;
  PyObject *text = report_text(nbc__py_module_state(module), write_info_json, NULL);
  PyObject *json = text ? PyImport_ImportModule("json") : NULL;
  PyObject *dict = json ? PyObject_CallMethod(json, "loads", "(O)", text) : NULL;
  Py_XDECREF(json);
  Py_XDECREF(text);
  return dict;
}

/* numba's cuda_error(): None when the driver initialised, else the reason. */
static PyObject *py_cuda_error(PyObject *module, PyObject *unused) {
  (void)module;
  (void)unused;
  int count = 0;
  nbc_status_t s = nbc_device_count(&count);
  if (s == NBC_OK) Py_RETURN_NONE;
  const char *msg = nbc_last_error();
  return PyUnicode_FromString(msg && *msg ? msg : nbc_status_string(s));
}

/* The path the C library loaded libcuda from (tests use it to tell the test driver). */
static PyObject *py_driver_path(PyObject *module, PyObject *unused) {
  (void)module;
  (void)unused;
  const char *p = nbc_driver_path();
  if (!p) Py_RETURN_NONE;
  return PyUnicode_DecodeFSDefault(p);
}

/* ---------------------------------------------------------------- runtime ------------- */

typedef struct {
  PyObject_HEAD
} RuntimeObject;

static PyObject *runtime_get_version(PyObject *self, PyObject *unused) {
  (void)unused;
  int major = 0, minor = 0;
  nbc_status_t s = nbc_runtime_get_version(&major, &minor, NULL);
  if (s != NBC_OK) return nbc__py_raise(nbc__py_state_of(self), s);
  return Py_BuildValue("(ii)", major, minor);
}

static PyObject *runtime_get_source(PyObject *self, PyObject *unused) {
  (void)unused;
  int major = 0, minor = 0;
  nbc_runtime_source_t src = NBC_RUNTIME_CUDART;
  nbc_status_t s = nbc_runtime_get_version(&major, &minor, &src);
  if (s != NBC_OK) return nbc__py_raise(nbc__py_state_of(self), s);
  return PyUnicode_FromString(src == NBC_RUNTIME_CUDART ? "cudart"
                              : src == NBC_RUNTIME_NVRTC ? "nvrtc"
                                                         : "nvvm");
}

static PyObject *is_supported(nbc__py_state *st) {
  int ok = 0;
  nbc_status_t s = nbc_runtime_is_supported_version(&ok);
  if (s != NBC_OK) return nbc__py_raise(st, s);
  return PyBool_FromLong(ok);
}

static PyObject *runtime_is_supported_version(PyObject *self, PyObject *unused) {
  (void)unused;
  return is_supported(nbc__py_state_of(self));
}

static PyObject *runtime_supported_versions(PyObject *self, void *closure) {
  (void)self;
  (void)closure;
  const int(*versions)[2] = NULL;
  int count = 0;
  nbc_runtime_supported_versions(&versions, &count);
  PyObject *t = PyTuple_New(count);
  for (int i = 0; t && i < count; i++) {
    PyObject *pair = Py_BuildValue("(ii)", versions[i][0], versions[i][1]);
    if (!pair) {
      Py_CLEAR(t);
      break;
    }
    PyTuple_SET_ITEM(t, i, pair);
  }
  return t;
}

static PyObject *runtime_repr(PyObject *self) {
  (void)self;
  return PyUnicode_FromString("<nbcuda runtime>");
}

static PyMethodDef runtime_methods[] = {
    {"get_version", runtime_get_version, METH_NOARGS,
     "get_version($self, /)\n--\n\n"
     "(major, minor) of the CUDA runtime (libcudart, else the toolkit's NVRTC/libNVVM)."},
    {"get_source", runtime_get_source, METH_NOARGS,
     "get_source($self, /)\n--\n\n"
     "Which library answered get_version(): 'cudart', 'nvrtc' or 'nvvm'."},
    {"is_supported_version", runtime_is_supported_version, METH_NOARGS,
     "is_supported_version($self, /)\n--\n\n"
     "Whether the runtime's major version is one nbcuda supports."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef runtime_getset[] = {
    {"supported_versions", runtime_supported_versions, NULL,
     "The supported (major, minor) versions.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static void runtime_dealloc(PyObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  tp->tp_free(self);
  Py_DECREF(tp);
}

static PyType_Slot runtime_slots[] = {
    {Py_tp_dealloc, runtime_dealloc},
    {Py_tp_methods, runtime_methods},
    {Py_tp_getset, runtime_getset},
    {Py_tp_repr, runtime_repr},
    {Py_tp_doc, (void *)"The CUDA runtime version wrapper (nbcuda.runtime)."},
    {0, NULL},
};

static PyType_Spec runtime_spec = {
    .name = "nbcuda.Runtime",
    .basicsize = sizeof(RuntimeObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = runtime_slots,
};

static PyObject *py_is_supported_version(PyObject *module, PyObject *unused) {
  (void)unused;
  return is_supported(nbc__py_module_state(module));
}

/* numba's literal_unroll on the host: the container itself. In a kernel, a `for` over it
 * is unrolled per item (desugar.c). */
static PyObject *py_literal_unroll(PyObject *module, PyObject *container) {
  (void)module;
  return Py_NewRef(container);
}

static PyMethodDef module_functions[] = {
    {"literal_unroll", py_literal_unroll, METH_O,
     "literal_unroll($module, container, /)\n--\n\n"
     "numba's literal_unroll: in a kernel, `for v in literal_unroll(t)` runs the body once "
     "per item of the tuple t, each typed alone; on the host, t itself."},
    {"is_available", py_is_available, METH_NOARGS,
     "is_available($module, /)\n--\n\n"
     "Whether the CUDA driver initialises and libNVVM can be loaded; never raises."},
    {"detect", py_detect, METH_NOARGS,
     "detect($module, /)\n--\n\n"
     "Prints the devices found (numba's format); True if any is supported."},
    {"info", py_info, METH_NOARGS,
     "info($module, /)\n--\n\n"
     "What nbcuda found, as `nbcuda info --json` reports it (numba's `numba -s`): a dict of "
     "nbcuda's version, each CUDA library's path and version or why it is unavailable, the "
     "CUDA runtime, the devices and the environment variables nbcuda reads that are set. See "
     "docs/guide/troubleshooting.md."},
    {"cuda_error", py_cuda_error, METH_NOARGS,
     "cuda_error($module, /)\n--\n\n"
     "None when CUDA initialised, else the reason it did not."},
    {"is_supported_version", py_is_supported_version, METH_NOARGS,
     "is_supported_version($module, /)\n--\n\n"
     "Whether the CUDA runtime version is supported."},
    {"_driver_path", py_driver_path, METH_NOARGS, "_driver_path($module, /)\n--\n\n"
                                                  "The libcuda path in use (or None)."},
    {NULL, NULL, 0, NULL},
};

/* ---------------------------------------------------------------- the module ---------- */

/* ------------------------------------------- numba.cuda.<sub> where numba.cuda is nbcuda -- */

/* Programs bind numba.cuda to nbcuda (sys.modules["numba.cuda"] = nbcuda) and then import
 * numba-cuda's submodules: `from numba.cuda.random import create_xoroshiro128p_states`,
 * `from numba.cuda.types import float32`. nbcuda has a __path__ (which makes the import system
 * look for its submodules) and a finder at the end of sys.meta_path answers numba.cuda.<sub> with nbcuda's submodule <sub> (what sys.modules holds
 * as "nbcuda.<sub>": random, types, config, libdevice, fp16, bf16) while numba.cuda is an
 * nbcuda module; any other name it leaves to the other finders. */
static struct PyModuleDef nbcuda_module;

/* The submodule that numba.cuda.<sub> `name` stands for (a new reference), or NULL without an
 * error when there is none. */
static PyObject *bound_submodule(PyObject *name) {
  const char *n = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
  if (!n || strncmp(n, "numba.cuda.", 11) != 0 || strchr(n + 11, '.') || !n[11]) return NULL;
  PyObject *modules = PyImport_GetModuleDict();
  PyObject *bound = PyDict_GetItemString(modules, "numba.cuda"); /* borrowed */
  if (!bound || !PyModule_Check(bound) || PyModule_GetDef(bound) != &nbcuda_module)
    return NULL;
  char full[64];
  if (snprintf(full, sizeof full, "nbcuda.%s", n + 11) >= (int)sizeof full) return NULL;
  PyObject *sub = PyDict_GetItemString(modules, full); /* borrowed */
  PyObject *attr = sub ? PyObject_GetAttrString(bound, n + 11) : NULL;
  if (attr != sub) Py_CLEAR(attr);
  PyErr_Clear();
  return attr;
}

static PyObject *finder_find_spec(PyObject *finder, PyObject *args) {
  PyObject *name, *path = NULL, *target = NULL;
  if (!PyArg_UnpackTuple(args, "find_spec", 1, 3, &name, &path, &target)) return NULL;
  PyObject *sub = bound_submodule(name);
  if (!sub) Py_RETURN_NONE;
  Py_DECREF(sub);
  PyObject *machinery = PyImport_ImportModule("importlib.machinery");
  PyObject *spec = machinery ? PyObject_CallMethod(machinery, "ModuleSpec", "OO", name, finder)
                             : NULL;
  Py_XDECREF(machinery);
  return spec;
}

static PyObject *finder_create_module(PyObject *finder, PyObject *spec) {
  (void)finder;
  PyObject *name = PyObject_GetAttrString(spec, "name");
  PyObject *sub = name ? bound_submodule(name) : NULL;
  if (name && !sub)
    PyErr_Format(PyExc_ImportError, "%U is no longer an nbcuda submodule", name);
  Py_XDECREF(name);
  return sub;
}

static PyObject *finder_exec_module(PyObject *finder, PyObject *module) {
  (void)finder, (void)module;
  Py_RETURN_NONE; /* the submodule is nbcuda's, made when nbcuda was */
}

static PyMethodDef finder_functions[] = {
    {"find_spec", finder_find_spec, METH_VARARGS,
     "find_spec(name, path=None, target=None, /)\n--\n\n"
     "A spec for numba.cuda.<sub> while numba.cuda is nbcuda, else None."},
    {"create_module", finder_create_module, METH_O,
     "create_module(spec, /)\n--\n\nnbcuda's submodule the spec names."},
    {"exec_module", finder_exec_module, METH_O, "exec_module(module, /)\n--\n\nNothing."},
    {NULL, NULL, 0, NULL},
};

/* The finder appended to sys.meta_path, once per process, and an empty nbcuda.__path__ where
 * the import system gave none (an installed nbcuda is the package nbcuda/, whose __init__ is
 * this extension: its directory is its __path__). */
static int submodule_finder_init(PyObject *module) {
  int has = PyObject_HasAttrString(module, "__path__");
  PyObject *path = has ? NULL : PyList_New(0);
  if (!has && (!path || PyModule_AddObject(module, "__path__", path) < 0)) {
    Py_XDECREF(path);
    return -1;
  }
  PyObject *meta_path = PySys_GetObject("meta_path"); /* borrowed */
  if (!meta_path || !PyList_Check(meta_path)) return 0; /* no import system to join */
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(meta_path); i++) {
    PyObject *f = PyList_GET_ITEM(meta_path, i);
    if (PyModule_Check(f) && strcmp(PyModule_GetName(f) ? PyModule_GetName(f) : "",
                                    "nbcuda._submodule_finder") == 0)
      return 0;
    PyErr_Clear();
  }
  PyObject *finder = PyModule_New("nbcuda._submodule_finder");
  int rc = finder && PyModule_AddFunctions(finder, finder_functions) == 0 &&
                   PyList_Append(meta_path, finder) == 0
               ? 0
               : -1;
  Py_XDECREF(finder);
  return rc;
}

static int module_exec(PyObject *module) {
  nbc__py_state *st = nbc__py_module_state(module);
  /* the strings the hot paths look things up by, interned once */
  struct { PyObject **slot; const char *text; } keys[] = {
      {&st->module_name, "nbcuda"},
      {&st->str_cai, "__cuda_array_interface__"},
      {&st->str_cuda_stream, "__cuda_stream__"},
      {&st->str_dlpack, "__dlpack__"}, {&st->str_dlpack_device, "__dlpack_device__"},
      {&st->str_version, "version"}, {&st->str_mask, "mask"},       {&st->str_shape, "shape"},
      {&st->str_typestr, "typestr"}, {&st->str_data, "data"},       {&st->str_strides, "strides"},
      {&st->str_descr, "descr"},     {&st->str_stream, "stream"},   {&st->str_dtype, "dtype"},
      {&st->warnings.str_numba_errors[0], "numba.core.errors"},
      {&st->warnings.str_numba_errors[1], "numba.cuda.core.errors"}};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (!(*keys[i].slot = PyUnicode_InternFromString(keys[i].text))) return -1;
  if (PyModule_AddFunctions(module, module_functions) < 0) return -1;
  st->RuntimeType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &runtime_spec, NULL);
  if (!st->RuntimeType) return -1;
  PyObject *rt = PyType_GenericAlloc(st->RuntimeType, 0);
  if (!rt || PyModule_AddObject(module, "runtime", rt) < 0) {
    Py_XDECREF(rt);
    return -1;
  }
  if (nbc__py_errors_init(module, st) < 0 || nbc__py_types_init(module, st) < 0 ||
      nbc__py_device_init(module, st) < 0 || nbc__py_context_init(module, st) < 0 ||
      nbc__py_profiling_init(module, st) < 0 ||
      nbc__py_stream_init(module, st) < 0 || nbc__py_event_init(module, st) < 0 ||
      nbc__py_devicearray_init(module, st) < 0 || nbc__py_compile_init(module, st) < 0 ||
      nbc__py_kernel_init(module, st) < 0 || nbc__py_hostmem_init(module, st) < 0 ||
      nbc__py_intrinsics_init(module, st) < 0 || nbc__py_ipc_init(module, st) < 0 ||
      nbc__py_arghint_init(module, st) < 0 || nbc__py_reduce_init(module, st) < 0 ||
      nbc__py_random_init(module, st) < 0 || nbc__py_memptr_init(module, st) < 0 ||
      nbc__py_vectorize_init(module, st) < 0 || nbc__py_gufunc_init(module, st) < 0 ||
      nbc__py_declared_init(module, st) < 0 || nbc__py_linkable_init(module, st) < 0 ||
      nbc__py_emm_init(module, st) < 0 || nbc__py_deallocs_init(module, st) < 0 ||
      nbc__py_config_init(module, st) < 0 ||
      nbc__py_typesdict_init(module, st) < 0 || nbc__py_serialize_init(module, st) < 0 ||
      nbc__py_dask_init(module, st) < 0)
    return -1;
  if (PyModule_AddStringConstant(module, "__version__", nbc_version_string()) < 0) return -1;
  return submodule_finder_init(module);
}

#define STATE_OBJECTS(X)                                                                   \
  X(CudaSupportError) X(CudaDriverError) X(CudaAPIError) X(CudaRuntimeError) X(NvvmError) \
  X(NvvmSupportError) X(CompileError) X(TypingError) X(CCSupportError) X(LinkerError)      \
  X(DeviceType) X(ManagedDeviceType) X(DeviceListType) X(ContextType) X(StreamType)        \
  X(EventType) X(DeviceArrayType) X(NbTypeType) X(NbArrayType) X(NbSignatureType)          \
  X(NbTupleType) X(NbUniTupleType) X(KernelType) X(LauncherType)                          \
  X(DeviceFunctionType) X(RequireContextType) X(ScopeType) X(RuntimeType) X(gpus)          \
  X(devices) X(managed) X(contexts) X(types) X(numpy) X(module_name)        \
  X(dispatcher) X(str_cai) X(str_cuda_stream) X(str_version) X(str_mask) X(str_shape)   \
  X(str_dlpack) X(str_dlpack_device)                                                      \
  X(str_typestr) X(str_data) X(str_strides) X(str_descr) X(str_stream) X(HostMemType)   \
  X(np_empty) X(np_ndarray)                                                               \
  X(np_dtype) X(str_C) X(str_F)                                                           \
  X(str_dtype) X(StubType) X(IpcHandleType)                 \
  X(IpcArrayHandleType) X(ArgHintType) X(InHintType) X(OutHintType) X(InOutHintType)    \
  X(ReduceType) X(CompileStatsType) X(MemoryPointerType) X(UFuncType) X(GUFuncType)     \
  X(DeclaredType) X(LinkableCodeType) X(TypesDictType)                                         \
  X(np_void) X(np_scalar_codes) X(typing_error_class) X(api_error_class)   \
  X(default_streams)                                                                     \
  X(driver_error_class) X(DeallocsType) X(ProfilingRangeType) X(RangedFunctionType)         \
  NBC__PY_CONFIG_OBJECTS(X) NBC__PY_WARNINGS_OBJECTS(X) NBC__PY_EMM_OBJECTS(X)            \
  NBC__PY_HOSTMEM_OBJECTS(X) NBC__PY_DEVICEARRAY_OBJECTS(X)

static int module_traverse(PyObject *module, visitproc visit, void *arg) {
  nbc__py_state *st = nbc__py_module_state(module);
  if (!st) return 0;
#define VISIT_(f) Py_VISIT(st->f);
  STATE_OBJECTS(VISIT_)
#undef VISIT_
  return 0;
}

static int module_clear(PyObject *module) {
  nbc__py_state *st = nbc__py_module_state(module);
  if (!st) return 0;
  nbc__py_array_freelist_clear(st);
#define CLEAR_(f) Py_CLEAR(st->f);
  STATE_OBJECTS(CLEAR_)
#undef CLEAR_
  return 0;
}

static void module_free(void *module) { module_clear((PyObject *)module); }

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, module_exec},
    {0, NULL},
};

static struct PyModuleDef nbcuda_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "nbcuda",
    .m_doc = "nbcuda: Numba's CUDA host API and Python-kernel compiler, written in C.\n\n"
             "`import nbcuda as cuda` runs code written for numba.cuda's host API; "
             "`cuda.compile(pyfunc, sig)` compiles a Python function to PTX or LTO-IR.",
    .m_size = sizeof(nbc__py_state),
    .m_slots = module_slots,
    .m_traverse = module_traverse,
    .m_clear = module_clear,
    .m_free = module_free,
};

PyMODINIT_FUNC PyInit_nbcuda(void) { return PyModuleDef_Init(&nbcuda_module); }
