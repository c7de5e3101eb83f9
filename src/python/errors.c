/* errors.c — nbcuda's Python exceptions and the mapping of nbc_status_t to them.
 *
 * The classes copy numba-cuda's (cudadrv/error.py): CudaSupportError is an ImportError (so
 * it has .msg), CudaAPIError(code, msg) is a CudaDriverError whose str() is
 * "[201] Call to cuStreamCreate results in CUDA_ERROR_INVALID_CONTEXT", NvvmError carries
 * libNVVM's log, TypingError (a CompileError) carries the compiler's diagnostic with the
 * file, line, source line and caret. They are defined by a few lines of Python run once per
 * module object, because exception classes with custom __init__/__str__ are clearer there
 * than as hand-built C types, and they cost nothing on any hot path.
 *
 * nbc__py_raise reads the per-thread message of the C library (nbc_last_error(), and for
 * driver failures nbc_last_driver_error()/nbc_last_driver_call()) and picks the class by the
 * error's kind (nbc_last_error_kind(), one table below) and its status, following what
 * numba-cuda raises in the same situation; it never reads the message to choose.
 *
 * Code written for numba catches numba's TypingError. When numba's errors module is loaded
 * (never imported here), the TypingError raised is a subclass of both nbcuda's and numba's
 * (_typing_error_class), made once per set of numba classes; its str() is the message alone.
 * So are the warnings (_warning_class) and, when numba-cuda's driver module or cuda.core is
 * loaded, a failed driver call's CudaAPIError (_api_error_class: numba-cuda's CudaAPIError and
 * cuda.core's CUDAError, which numba-cuda 0.30 raises from launches).
 */
#include "nbcuda_py.h"

#include <string.h>

static const char errors_source[] =
    "class _ArgsSignature:\n"
    "    '''inspect.signature of an exception class that keeps BaseException's __init__:\n"
    "    (*args); None (inspect's own search) for one with an __init__ of its own.'''\n"
    "    def __get__(self, obj, cls):\n"
    "        if obj is not None or hasattr(cls.__init__, '__code__'):\n"
    "            return None\n"
    "        import inspect\n"
    "        return inspect.Signature([inspect.Parameter(\n"
    "            'args', inspect.Parameter.VAR_POSITIONAL)])\n"
    "class CudaDriverError(Exception):\n"
    "    '''A CUDA driver failure that is not a failed call (e.g. use after fork).'''\n"
    "class CudaRuntimeError(RuntimeError):\n"
    "    '''The CUDA runtime version cannot be determined.'''\n"
    "class CudaSupportError(ImportError):\n"
    "    '''CUDA cannot be used: no driver, a stub driver, no device, disabled.'''\n"
    "class CudaAPIError(CudaDriverError):\n"
    "    '''A CUDA driver call failed: .code is the CUresult, .msg names the call.'''\n"
    "    def __init__(self, code, msg):\n"
    "        self.code = code\n"
    "        self.msg = msg\n"
    "        super().__init__(code, msg)\n"
    "    def __str__(self):\n"
    "        return '[%s] %s' % (self.code, self.msg)\n"
    "class NvvmError(Exception):\n"
    "    '''libNVVM refused the program; the message holds its log.'''\n"
    "class NvvmSupportError(ImportError):\n"
    "    '''libNVVM or libdevice cannot be found.'''\n"
    "class CompileError(Exception):\n"
    "    '''The Python function cannot be compiled (file:line:col, source line, caret).'''\n"
    "class TypingError(CompileError):\n"
    "    '''Typing failed under numba's rules (file:line:col, source line, caret).'''\n"
    "_combined_classes = {}\n"
    "def _combined(mine, theirs, attrs=None):\n"
    "    '''mine, or when some of theirs (classes of numba, numba-cuda or cuda.core that code\n"
    "    written for numba-cuda catches or filters) are loaded, a subclass of mine and them.'''\n"
    "    theirs = [t for t in dict.fromkeys(theirs)  # numba-cuda may re-export numba's\n"
    "              if isinstance(t, type) and issubclass(t, BaseException) and\n"
    "              not issubclass(mine, t)]\n"
    "    # the most derived of them only: a subclass listed with its base has no method order\n"
    "    key = (mine,) + tuple(t for i, t in enumerate(theirs) if not any(\n"
    "        issubclass(u, t) for u in theirs[:i] + theirs[i + 1:]))\n"
    "    if len(key) == 1:\n"
    "        return mine\n"
    "    if key not in _combined_classes:\n"
    "        ns = {'__module__': __name__, '__doc__': mine.__doc__}\n"
    "        ns.update(attrs or {})\n"
    "        try:\n"
    "            _combined_classes[key] = type(mine.__name__, key, ns)\n"
    "        except TypeError:  # no consistent method order with these bases\n"
    "            _combined_classes[key] = mine\n"
    "    return _combined_classes[key]\n"
    "def _loaded(*names):\n"
    "    '''The classes 'module:name' of the modules already imported (imports nothing).'''\n"
    "    import sys\n"
    "    return [getattr(sys.modules.get(m), n, None) for m, n in (x.split(':') for x in names)]\n"
    "def _numba_error_init(self, msg):\n"
    "    Exception.__init__(self, msg)\n"
    "    self.msg, self.loc = msg, None  # numba's NumbaError attributes\n"
    "def _rebuild_error(factory, builtin, args, state):\n"
    "    '''Unpickles an exception of a combined class (one made by a _*_class factory below):\n"
    "    its class made here again by the same factory, with the classes loaded here.'''\n"
    "    import builtins\n"
    "    cls = globals()[factory](*([getattr(builtins, builtin)] if builtin else []))\n"
    "    e = cls.__new__(cls, *args)\n"
    "    e.args = args\n"
    "    e.__dict__.update(state or {})\n"
    "    return e\n"
    "def _reducer(factory, builtin=None):\n"
    "    '''The __reduce__ of a combined class: pickle finds no such class by its name (a pool\n"
    "    process returning one to its parent pickles it).'''\n"
    "    def __reduce__(self):\n"
    "        return (_rebuild_error, (factory, builtin, self.args, dict(self.__dict__)))\n"
    "    return __reduce__\n"
    "def _typing_error_class(builtin=None):\n"
    "    '''TypingError, or when numba's errors module is loaded (code written for numba, which\n"
    "    catches numba's TypingError), a subclass of it and of numba's TypingError classes;\n"
    "    and of builtin (ValueError, TypeError) for what numba raises as that.'''\n"
    "    return _combined(TypingError, _loaded('numba.core.errors:TypingError',\n"
    "                                          'numba.cuda.core.errors:TypingError') +\n"
    "                     ([builtin] if builtin else []),\n"
    "                     {'__init__': _numba_error_init, '__str__': Exception.__str__,\n"
    "                      '__reduce__': _reducer('_typing_error_class',\n"
    "                                             builtin.__name__ if builtin else None)})\n"
    "def _api_error_class():\n"
    "    '''CudaAPIError, or when numba-cuda's driver module or cuda.core is loaded, a subclass\n"
    "    of it and of numba-cuda's CudaAPIError and cuda.core's CUDAError (numba-cuda 0.30\n"
    "    raises the latter from launches), which code written for numba-cuda catches.'''\n"
    "    return _combined(CudaAPIError, _loaded('numba.cuda.cudadrv.driver:CudaAPIError',\n"
    "                                           'cuda.core._utils.cuda_utils:CUDAError'),\n"
    "                     {'__init__': CudaAPIError.__init__, '__str__': CudaAPIError.__str__,\n"
    "                      '__reduce__': _reducer('_api_error_class')})\n"
    "def _driver_error_class():\n"
    "    '''CudaDriverError (use after fork), or when numba-cuda's error module is loaded, a\n"
    "    subclass of it and of numba-cuda's CudaDriverError.'''\n"
    "    return _combined(CudaDriverError, _loaded('numba.cuda.cudadrv.error:CudaDriverError'),\n"
    "                     {'__reduce__': _reducer('_driver_error_class')})\n"
    "class NumbaWarning(Warning):\n"
    "    '''numba's base class of its warnings.'''\n"
    "class NumbaPerformanceWarning(NumbaWarning):\n"
    "    '''Code that works but will run slowly (a small grid, a host array copied).'''\n"
    "class NumbaInvalidConfigWarning(NumbaWarning):\n"
    "    '''An option that is not supported (debug=True with opt=True).'''\n"
    "class NumbaDebugInfoWarning(NumbaWarning):\n"
    "    '''Debug information that may be inaccurate (a function whose source no file holds).'''\n"
    "def _warning_class(name):\n"
    "    '''nbcuda's warning class of that name, or when numba's errors module is loaded (code\n"
    "    written for numba filters and expects numba's classes), a subclass of it and of\n"
    "    numba's classes of that name.'''\n"
    "    return _combined(globals()[name], _loaded('numba.core.errors:' + name,\n"
    "                                              'numba.cuda.core.errors:' + name))\n"
    "class CCSupportError(RuntimeError):\n"
    "    '''The compute capability is not supported.'''\n"
    "class LinkerError(RuntimeError):\n"
    "    '''nvJitLink failed or cannot be found.'''\n"
    "class KernelRuntimeError(RuntimeError):\n"
    "    '''numba-cuda's exception of a thread (its simulator raises it), offered for the\n"
    "    except clauses of code written for numba: a debug kernel raises the exception the\n"
    "    kernel raised, as numba-cuda does on a GPU.'''\n"
    "    def __init__(self, msg, tid=None, ctaid=None):\n"
    "        self.tid = tid\n"
    "        self.ctaid = ctaid\n"
    "        self.msg = msg\n"
    "        super().__init__('An exception was raised in thread=%s block=%s\\n\\t%s'\n"
    "                         % (tid, ctaid, msg))\n"
    "for _c in (CudaDriverError, CudaRuntimeError, CudaSupportError, NvvmError,\n"
    "           NvvmSupportError, CompileError, NumbaWarning, CCSupportError, LinkerError):\n"
    "    _c.__signature__ = _ArgsSignature()\n";

int nbc__py_errors_init(PyObject *module, nbc__py_state *st) {
  PyObject *ns = PyDict_New();
  if (!ns) return -1;
  if (PyDict_SetItemString(ns, "__builtins__", PyEval_GetBuiltins()) < 0 ||
      PyDict_SetItemString(ns, "__name__", st->module_name) < 0)
    goto fail;
  PyObject *r = PyRun_String(errors_source, Py_file_input, ns, ns);
  if (!r) goto fail;
  Py_DECREF(r);
  struct {
    const char *name;
    PyObject **slot;
  } items[] = {
      {"CudaDriverError", &st->CudaDriverError},   {"CudaRuntimeError", &st->CudaRuntimeError},
      {"CudaSupportError", &st->CudaSupportError}, {"CudaAPIError", &st->CudaAPIError},
      {"NvvmError", &st->NvvmError},               {"NvvmSupportError", &st->NvvmSupportError},
      {"CompileError", &st->CompileError},         {"TypingError", &st->TypingError},
      {"CCSupportError", &st->CCSupportError},     {"LinkerError", &st->LinkerError},
      {"KernelRuntimeError", NULL}, /* offered, never raised */
      {"NumbaWarning", NULL},       {"NumbaPerformanceWarning", NULL},
      /* warned through _warning_class */
      {"NumbaInvalidConfigWarning", NULL}, {"NumbaDebugInfoWarning", NULL},
      /* pickle's way back to a combined class's exception */
      {"_rebuild_error", NULL},
  };
  st->typing_error_class = Py_XNewRef(PyDict_GetItemString(ns, "_typing_error_class"));
  st->warnings.maker = Py_XNewRef(PyDict_GetItemString(ns, "_warning_class"));
  st->api_error_class = Py_XNewRef(PyDict_GetItemString(ns, "_api_error_class"));
  st->driver_error_class = Py_XNewRef(PyDict_GetItemString(ns, "_driver_error_class"));
  if (!st->typing_error_class || !st->warnings.maker || !st->api_error_class ||
      !st->driver_error_class) {
    PyErr_SetString(PyExc_SystemError, "nbcuda: _typing_error_class not defined");
    goto fail;
  }
  for (size_t i = 0; i < sizeof items / sizeof items[0]; i++) {
    PyObject *cls = PyDict_GetItemString(ns, items[i].name);
    if (!cls) {
      PyErr_Format(PyExc_SystemError, "nbcuda: exception %s not defined", items[i].name);
      goto fail;
    }
    if (items[i].slot) *items[i].slot = Py_NewRef(cls);
    if (PyModule_AddObjectRef(module, items[i].name, cls) < 0) goto fail;
  }
  Py_DECREF(ns);
  return 0;
fail:
  Py_DECREF(ns);
  return -1;
}

/* The class a _*_class factory of errors_source makes (called with arg unless NULL): the
 * plain class, or its subclass that is numba's (cuda.core's) class too. Borrowed: the
 * factory's cache (or the module) keeps it. On a failure, which cannot happen, plain. */
static PyObject *combined_class(PyObject *factory, PyObject *arg, PyObject *plain) {
  PyObject *cls = arg ? PyObject_CallOneArg(factory, arg) : PyObject_CallNoArgs(factory);
  if (!cls) {
    PyErr_Clear();
    return plain;
  }
  Py_DECREF(cls);
  return cls;
}

/* The one table of error kinds (nbcuda.h): the builtin class numba raises an error of each
 * kind as. A typing failure of kind VALUE (an invalid alignment, a shape of no elements) or
 * TYPE is a TypingError that is that class too; a kernel returning a value is numba's plain
 * TypeError, raised outside typing, whatever the status. */
static const struct {
  PyObject **builtin; /* NULL: the status decides */
  int whatever_the_status;
} kinds[NBC_ERROR_KIND_COUNT_] = {
    [NBC_ERROR_KIND_NONE] = {NULL, 0},
    [NBC_ERROR_KIND_VALUE] = {&PyExc_ValueError, 0},
    [NBC_ERROR_KIND_TYPE] = {&PyExc_TypeError, 0},
    [NBC_ERROR_KIND_KERNEL_RETURN] = {&PyExc_TypeError, 1},
};

static PyObject *kind_builtin(nbc_error_kind_t kind) {
  return (int)kind >= 0 && kind < NBC_ERROR_KIND_COUNT_ && kinds[kind].builtin
             ? *kinds[kind].builtin
             : NULL;
}

PyObject *nbc__py_typing_error(nbc__py_state *st, nbc_error_kind_t kind) {
  return combined_class(st->typing_error_class, kind_builtin(kind), st->TypingError);
}

PyObject *nbc__py_key_error(PyObject *key) {
  PyObject *args = PyTuple_Pack(1, key);
  if (args) PyErr_SetObject(PyExc_KeyError, args);
  Py_XDECREF(args);
  return NULL;
}

/* Which of numba's errors modules are loaded, as a bitmask (the bases _warning_class joins);
 * -1 on an error. */
static int numba_errors_loaded(nbc__py_state *st) {
  PyObject *modules = PyImport_GetModuleDict();
  int bits = 0;
  for (int i = 0; i < 2; i++) {
    if (PyDict_GetItemWithError(modules, st->warnings.str_numba_errors[i])) bits |= 1 << i;
    else if (PyErr_Occurred()) return -1;
  }
  return bits;
}

/* The warning is issued through Python's warnings (its filters, once per location by
 * default); the class is _warning_class's, asked once per name while the numba modules it
 * joins stay the same (a launch of a small grid warns each time: no Python call then). */
int nbc__py_warn(nbc__py_state *st, const char *class_name, const char *message) {
  int numba = numba_errors_loaded(st);
  if (numba < 0) return -1;
  if (numba != st->warnings.numba) {
    Py_CLEAR(st->warnings.classes);
    st->warnings.numba = numba;
  }
  if (!st->warnings.classes && !(st->warnings.classes = PyDict_New())) return -1;
  PyObject *cls = PyDict_GetItemString(st->warnings.classes, class_name);
  if (cls) {
    Py_INCREF(cls);
  } else {
    cls = PyObject_CallFunction(st->warnings.maker, "s", class_name);
    if (!cls || PyDict_SetItemString(st->warnings.classes, class_name, cls) < 0) {
      Py_XDECREF(cls);
      return -1;
    }
  }
  int rc = PyErr_WarnEx(cls, message, 1);
  Py_DECREF(cls);
  return rc;
}

/* CudaAPIError(code, "Call to <fn> results in <CUDA_ERROR_NAME>") for the last driver
 * failure; falls back to the library's message when no driver call is recorded. */
static PyObject *raise_api_error(nbc__py_state *st, const char *fallback) {
  int code = nbc_last_driver_error();
  const char *call = nbc_last_driver_call();
  const char *name = nbc_cuda_error_name(code);
  PyObject *msg;
  if (call && *call) {
    /* What the library added after "<call>: <NAME> (<code>)" says why, e.g. " (the array
     * was made in a context that was reset since)": keep it. */
    const char *why = nbc_last_driver_detail();
    msg = name ? PyUnicode_FromFormat("Call to %s results in %s%s", call, name, why)
               : PyUnicode_FromFormat("Call to %s results in CUDA error %d%s", call, code, why);
  } else
    msg = PyUnicode_FromString(fallback);
  if (!msg) return NULL;
  /* CudaAPIError, or its subclass that is numba-cuda's and cuda.core's class too */
  PyObject *cls = combined_class(st->api_error_class, NULL, st->CudaAPIError);
  PyObject *exc = PyObject_CallFunction(cls, "iO", code, msg);
  Py_DECREF(msg);
  if (exc) {
    PyErr_SetObject(cls, exc);
    Py_DECREF(exc);
  }
  return NULL;
}

PyObject *nbc__py_raise(nbc__py_state *st, nbc_status_t status) {
  const char *msg = nbc_last_error();
  if (!msg || !*msg) msg = nbc_status_string(status);
  nbc_error_kind_t kind = nbc_last_error_kind();
  if ((int)kind >= 0 && kind < NBC_ERROR_KIND_COUNT_ && kinds[kind].whatever_the_status) {
    PyErr_SetString(*kinds[kind].builtin, msg);
    return NULL;
  }
  PyObject *cls;
  switch (status) {
  case NBC_NO_DRIVER:
  case NBC_DRIVER_DISABLED:
  case NBC_STUB_DRIVER:
  case NBC_NO_DEVICE:
  case NBC_INIT_FAILED:
    /* numba: "Error at driver init: <description>" */
    if (strncmp(msg, "Error at driver init", 20) == 0)
      PyErr_SetString(st->CudaSupportError, msg);
    else
      PyErr_Format(st->CudaSupportError, "Error at driver init: %s", msg);
    return NULL;
  case NBC_DRIVER_ERROR: return raise_api_error(st, msg);
  case NBC_OUT_OF_MEMORY:
    if (nbc_last_driver_error() != 0) return raise_api_error(st, msg);
    cls = PyExc_MemoryError;
    break;
  case NBC_FORKED: /* CudaDriverError, or its subclass that is numba-cuda's class too */
    cls = combined_class(st->driver_error_class, NULL, st->CudaDriverError);
    break;
  case NBC_INVALID_ARGUMENT:
  case NBC_NOT_TIMING_EVENT: cls = PyExc_ValueError; break;
  case NBC_INVALID_DEVICE: cls = PyExc_IndexError; break;
  case NBC_NO_MEMORY: cls = PyExc_MemoryError; break;
  case NBC_CONTEXT_SWITCH:
  case NBC_NON_PRIMARY_CONTEXT:
  case NBC_NO_CONTEXT:
  case NBC_NOT_READY: cls = PyExc_RuntimeError; break;
  case NBC_CONTEXT_MISMATCH: cls = PyExc_AssertionError; break;
  case NBC_UNSUPPORTED_CC: cls = st->CCSupportError; break;
  case NBC_NO_NVVM:
  case NBC_NO_LIBDEVICE: cls = st->NvvmSupportError; break;
  case NBC_NVVM_ERROR: cls = st->NvvmError; break;
  case NBC_NO_JITLINK:
  case NBC_NO_NVRTC:
  case NBC_LINK_ERROR: cls = st->LinkerError; break;
  case NBC_NVRTC_ERROR: cls = st->CompileError; break;
  case NBC_NO_RUNTIME: cls = st->CudaRuntimeError; break;
  case NBC_SYNTAX_ERROR:
  case NBC_COMPILE_ERROR: cls = st->CompileError; break;
  case NBC_UNSUPPORTED:
  case NBC_TYPING_ERROR:
  case NBC_SIGNATURE_ERROR: cls = nbc__py_typing_error(st, kind); break;
  default: cls = PyExc_SystemError; break;
  }
  PyErr_SetString(cls, msg);
  return NULL;
}

int nbc__py_raise_int(nbc__py_state *st, nbc_status_t status) {
  nbc__py_raise(st, status);
  return -1;
}

int nbc__py_too_big(void) {
  PyErr_SetString(PyExc_ValueError, "array is too big; `arr.size * arr.dtype.itemsize` is "
                                    "larger than the maximum possible size.");
  return -1;
}
