/* jit.c — jit() itself: the decorator numba's cuda.jit is (`jit(f)`, `jit(sig)(f)`,
 * `jit(device=True)(f)`, with numba's options), and the DeviceFunction objects it makes.
 *
 * jit(...) checks its options at once, as numba does, and keeps them in a tuple; applied to
 * a function, a kernel is made by kernel.c (compiled at once when a signature or a list of
 * them was given, else per argument types on first launch). jit(device=True) returns a
 * DeviceFunction that keeps .py_func: it is never compiled on its own; kernels calling it
 * resolve it to that function (compile.c's resolver), inlining it into every caller when it
 * was marked forceinline (or numba's inline="always").
 */
#include "kernel.h"

typedef struct {
  PyObject_HEAD
  PyObject *py_func;
  int forceinline; /* jit(device=True, forceinline=True): inlined into every caller */
  /* jit(sig or [sigs], device=True): the signatures' canonical texts joined by ';' (a str),
   * which calls convert their arguments to (compile.c's resolver passes them on); NULL when
   * it was given none and is specialised per call. */
  PyObject *signatures;
  nbc_compile_options_t opts; /* jit's debug, lineinfo, fastmath, opt: for inspect_asm */
  PyObject *jit_config;       /* what jit() was given (its config tuple): for pickling */
} DeviceFunctionObject;

const char *nbc__py_devfn_signatures(nbc__py_state *st, PyObject *obj) {
  if (Py_TYPE(obj) != st->DeviceFunctionType) return NULL;
  PyObject *sigs = ((DeviceFunctionObject *)obj)->signatures;
  return sigs ? PyUnicode_AsUTF8(sigs) : NULL;
}

/* ------------------------------------------------------------ DeviceFunction ---------- */

static int devfn_traverse(DeviceFunctionObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->py_func);
  Py_VISIT(self->jit_config);
  return 0;
}

static void devfn_dealloc(DeviceFunctionObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  Py_CLEAR(self->py_func);
  Py_CLEAR(self->signatures);
  Py_CLEAR(self->jit_config);
  tp->tp_free(self);
  Py_DECREF(tp);
}

static PyObject *devfn_call(DeviceFunctionObject *self, PyObject *args, PyObject *kwargs) {
  (void)args;
  (void)kwargs;
  PyErr_Format(PyExc_TypeError, "device function %R can only be called from a kernel or "
               "another device function", self->py_func);
  return NULL;
}

static PyObject *devfn_repr(DeviceFunctionObject *self) {
  return PyUnicode_FromFormat("<nbcuda device function %R>", self->py_func);
}

static PyObject *devfn_forward(DeviceFunctionObject *self, void *attr) {
  return forward_attr(self->py_func, attr);
}
static PyObject *devfn_py_func(DeviceFunctionObject *self, void *c) {
  (void)c;
  return Py_NewRef(self->py_func);
}

/* numba's dispatcher attribute; compile()'s resolver reads forceinline from it (for numba's
 * device functions too). */
static PyObject *devfn_targetoptions(DeviceFunctionObject *self, void *c) {
  (void)c;
  return Py_BuildValue("{sOsO}", "device", Py_True, "forceinline",
                       self->forceinline ? Py_True : Py_False);
}

/* The PTX of the device function compiled alone for sig with its jit options and the Numba
 * ABI (a .func), as numba-cuda's device dispatcher's inspect_asm shows it. */
static PyObject *devfn_asm(DeviceFunctionObject *self, nbc__py_state *st, PyObject *sig) {
  PyObject *text = nbc__py_signature_text(st, sig);
  const char *c = text ? PyUnicode_AsUTF8(text) : NULL;
  nbc_compile_result_t *result = NULL;
  PyObject *r = NULL;
  if (c && nbc__py_compile_function(st, self->py_func, c, &self->opts, &result) == 0) {
    size_t size = 0;
    const char *code = nbc_compile_result_code(result, &size);
    r = PyUnicode_DecodeUTF8(code, (Py_ssize_t)size, "replace");
    nbc_compile_result_destroy(result);
  }
  Py_XDECREF(text);
  return r;
}

/* inspect_asm(signature=None): numba-cuda's device dispatcher's — the PTX for a signature, or
 * a dict signature -> PTX over the signatures it was jitted for (empty without). */
static PyObject *devfn_inspect_asm(DeviceFunctionObject *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"signature", NULL};
  PyObject *sig = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:inspect_asm", kwlist, &sig)) return NULL;
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  if (sig != Py_None) return devfn_asm(self, st, sig);
  PyObject *d = PyDict_New();
  if (!d || !self->signatures) return d;
  PyObject *sep = PyUnicode_FromString(";");
  PyObject *parts = sep ? PyUnicode_Split(self->signatures, sep, -1) : NULL;
  Py_XDECREF(sep);
  for (Py_ssize_t i = 0; parts && i < PyList_GET_SIZE(parts); i++) {
    PyObject *one = PyList_GET_ITEM(parts, i), *ptx = devfn_asm(self, st, one);
    if (!ptx || PyDict_SetItem(d, one, ptx) < 0) Py_CLEAR(parts);
    Py_XDECREF(ptx);
  }
  if (!parts) Py_CLEAR(d);
  Py_XDECREF(parts);
  return d;
}

/* numba-cuda's answers for what a device function cannot do: be launched, have SASS. */
static PyObject *devfn_getitem(DeviceFunctionObject *self, PyObject *key) {
  (void)self;
  (void)key;
  PyErr_SetString(PyExc_RuntimeError, "Cannot compile a device function as a kernel");
  return NULL;
}

static PyObject *devfn_inspect_sass(DeviceFunctionObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  (void)args;
  (void)kw;
  PyErr_SetString(PyExc_RuntimeError, "Cannot inspect SASS of a device function");
  return NULL;
}

static PyMethodDef devfn_methods[] = {
    {"__reduce__", nbc__py_jitted_reduce, METH_NOARGS,
     "__reduce__($self, /)\n--\n\n"
     "Pickles the device function as its Python function and jit()'s options."},
    {"inspect_asm", (PyCFunction)(void (*)(void))devfn_inspect_asm,
     METH_VARARGS | METH_KEYWORDS,
     "inspect_asm($self, signature=None)\n--\n\n"
     "The device function's PTX for that signature (a dict over its jitted signatures "
     "without one), compiled with its options."},
    {"inspect_sass", (PyCFunction)(void (*)(void))devfn_inspect_sass,
     METH_VARARGS | METH_KEYWORDS, "inspect_sass($self, signature=None)\n--\n\n"
                                   "RuntimeError, as numba-cuda: a device function has no "
                                   "SASS"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef devfn_getset[] = {
    {"py_func", (getter)devfn_py_func, NULL, "the Python function", NULL},
    {"targetoptions", (getter)devfn_targetoptions, NULL, "jit's options, as numba's", NULL},
    {"__name__", (getter)devfn_forward, NULL, NULL, "__name__"},
    {"__qualname__", (getter)devfn_forward, NULL, NULL, "__qualname__"},
    {"__doc__", (getter)devfn_forward, NULL, NULL, "__doc__"},
    {"__module__", (getter)devfn_forward, NULL, NULL, "__module__"},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot devfn_slots[] = {
    {Py_tp_dealloc, devfn_dealloc},
    {Py_tp_traverse, devfn_traverse},
    {Py_tp_call, devfn_call},
    {Py_mp_subscript, devfn_getitem},
    {Py_tp_repr, devfn_repr},
    {Py_tp_getset, devfn_getset},
    {Py_tp_methods, devfn_methods},
    {0, NULL},
};

static PyType_Spec devfn_spec = {
    .name = "nbcuda.DeviceFunction",
    .basicsize = sizeof(DeviceFunctionObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION |
             Py_TPFLAGS_IMMUTABLETYPE,
    .slots = devfn_slots,
};

/* ------------------------------------------------------------ jit() ------------------- */

/* A device function's signature, or list of them, as their canonical texts joined by ';'. */
static PyObject *device_signatures(nbc__py_state *st, PyObject *sig) {
  if (!PyList_Check(sig)) return nbc__py_signature_text(st, sig);
  PyObject *texts = nbc__py_signature_texts(st, sig), *joined = NULL;
  PyObject *sep = texts ? PyUnicode_FromString(";") : NULL;
  if (sep) joined = PyUnicode_Join(sep, texts);
  Py_XDECREF(sep);
  Py_XDECREF(texts);
  return joined;
}

/* What jit(...) was given, kept in the decorator's self tuple:
 * (sig or None, device, debug, lineinfo, fastmath, opt, launch_bounds, forceinline,
 * max_registers as an int, 0 for none, cache, link files, lto, shared memory carveout as an
 * int, NBC__PY_NO_CARVEOUT for none, extensions as a tuple); a device function marked
 * forceinline is emitted alwaysinline in every kernel that calls it. */
/* numba's jit(dispatcher) is a new dispatcher of the same Python function: a kernel or a
 * device function gives its own; anything else is itself (borrowed) */
static PyObject *python_function_of(nbc__py_state *st, PyObject *obj) {
  if (Py_IS_TYPE(obj, st->KernelType)) return ((KernelObject *)obj)->py_func;
  if (Py_IS_TYPE(obj, st->DeviceFunctionType)) return ((DeviceFunctionObject *)obj)->py_func;
  return obj;
}

/* The options of config a kernel keeps: the register cap and carveout it is loaded with,
 * forceinline, numba's extensions. -1 with the error set. */
static int kernel_options(KernelObject *k, PyObject *config) {
  k->max_registers = (unsigned)PyLong_AsUnsignedLong(PyTuple_GET_ITEM(config, 8));
  k->carveout = (int)PyLong_AsLong(PyTuple_GET_ITEM(config, 12));
  k->forceinline = PyObject_IsTrue(PyTuple_GET_ITEM(config, 7));
  if (PyErr_Occurred()) return -1; /* a pickled config's ints out of range */
  PyObject *extensions = PyTuple_GET_ITEM(config, 13);
  if (PyTuple_GET_SIZE(extensions) && !(k->extensions = PySequence_List(extensions))) return -1;
  return 0;
}

static PyObject *build(PyObject *module, PyObject *config, PyObject *func) {
  nbc__py_state *st = nbc__py_module_state(module);
  PyObject *sig = PyTuple_GET_ITEM(config, 0);
  int device = PyObject_IsTrue(PyTuple_GET_ITEM(config, 1));
  nbc_compile_options_t o;
  nbc_compile_options_init(&o);
  o.device = 0;
  o.abi = NBC_ABI_NUMBA;
  o.debug = PyObject_IsTrue(PyTuple_GET_ITEM(config, 2));
  o.lineinfo = PyObject_IsTrue(PyTuple_GET_ITEM(config, 3));
  o.fastmath = PyObject_IsTrue(PyTuple_GET_ITEM(config, 4));
  o.opt = PyTuple_GET_ITEM(config, 5) == Py_None ? 1 : PyObject_IsTrue(PyTuple_GET_ITEM(config, 5));
  if (nbc__py_launch_bounds(PyTuple_GET_ITEM(config, 6), &o) < 0) return NULL;
  /* jit(lto=True): the kernel is LTO-IR, linked by nvJitLink at load (a device function is
   * compiled into its callers: it follows theirs) */
  if (PyTuple_GET_ITEM(config, 11) == Py_True) o.output = NBC_OUTPUT_LTOIR;
  func = python_function_of(st, func);
  if (!PyFunction_Check(func)) {
    PyErr_Format(PyExc_TypeError, "jit() decorates Python functions, got %R", func);
    return NULL;
  }
  if (device) {
    if (PyTuple_GET_SIZE(PyTuple_GET_ITEM(config, 10))) {
      PyErr_SetString(PyExc_NotImplementedError,
                      "jit(device=True, link=[...]) is not supported by nbcuda: give the files "
                      "to the kernel's jit(link=[...]) or to declare_device(..., link=[...])");
      return NULL;
    }
    DeviceFunctionObject *d = PyObject_GC_New(DeviceFunctionObject, st->DeviceFunctionType);
    if (!d) return NULL;
    d->py_func = Py_NewRef(func);
    d->forceinline = PyObject_IsTrue(PyTuple_GET_ITEM(config, 7));
    d->signatures = NULL;
    d->jit_config = NULL;
    d->opts = o;
    d->opts.device = 1;
    d->opts.abi = NBC_ABI_NUMBA;
    d->opts.output = NBC_OUTPUT_PTX;
    PyObject_GC_Track(d);
    if (sig != Py_None && !(d->signatures = device_signatures(st, sig))) {
      Py_DECREF(d);
      return NULL;
    }
    return (PyObject *)d;
  }
  int cache = PyObject_IsTrue(PyTuple_GET_ITEM(config, 9));
  PyObject *links = PyTuple_GET_SIZE(PyTuple_GET_ITEM(config, 10)) ? PyTuple_GET_ITEM(config, 10)
                                                                    : NULL;
  if (cache && nbc__py_cache_check(func) < 0) return NULL;
  if (sig != Py_None && !PyList_Check(sig)) { /* one signature: compiled now */
    PyObject *text = nbc__py_signature_text(st, sig);
    KernelObject *k = text ? nbc__py_kernel_compile(st, func, text, &o, cache, NULL, links) : NULL;
    Py_XDECREF(text);
    if (k && kernel_options(k, config) < 0) Py_CLEAR(k);
    return (PyObject *)k;
  }
  /* a dispatcher: specialised per launch (no signature) or over the signatures given, each
   * compiled now and chosen per launch; its overloads take its load options */
  KernelObject *k = nbc__py_kernel_alloc(st, func, &o);
  if (!k) return NULL;
  if (kernel_options(k, config) < 0) goto fail;
  k->cache = cache;
  k->links = Py_XNewRef(links);
  if (sig == Py_None) return (PyObject *)k;
  k->fixed = 1;
  if (!(k->specializations = PyDict_New())) goto fail;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(sig); i++) {
    PyObject *text = nbc__py_signature_text(st, PyList_GET_ITEM(sig, i));
    KernelObject *ov = text ? nbc__py_kernel_compile(st, func, text, &o, cache, k, links) : NULL;
    int rc = ov ? PyDict_SetItem(k->specializations, text, (PyObject *)ov) : -1;
    Py_XDECREF(text);
    Py_XDECREF(ov);
    if (rc < 0) goto fail;
  }
  return (PyObject *)k;
fail:
  Py_DECREF(k);
  return NULL;
}

PyObject *nbc__py_jit_apply(PyObject *module, PyObject *config, PyObject *func) {
  nbc__py_state *st = nbc__py_module_state(module);
  PyObject *r = build(module, config, func);
  if (r && Py_IS_TYPE(r, st->KernelType))
    Py_XSETREF(((KernelObject *)r)->jit_config, Py_NewRef(config));
  else if (r)
    Py_XSETREF(((DeviceFunctionObject *)r)->jit_config, Py_NewRef(config));
  return r;
}

PyObject *nbc__py_jit_config(nbc__py_state *st, PyObject *obj, PyObject **pfunc) {
  if (Py_IS_TYPE(obj, st->KernelType)) {
    *pfunc = ((KernelObject *)obj)->py_func;
    return ((KernelObject *)obj)->jit_config;
  }
  if (Py_IS_TYPE(obj, st->DeviceFunctionType)) {
    *pfunc = ((DeviceFunctionObject *)obj)->py_func;
    return ((DeviceFunctionObject *)obj)->jit_config;
  }
  *pfunc = NULL;
  return NULL;
}

static PyObject *py_jit_apply(PyObject *self, PyObject *func) {
  /* self is (module, config) */
  return nbc__py_jit_apply(PyTuple_GET_ITEM(self, 0), PyTuple_GET_ITEM(self, 1), func);
}

static PyMethodDef jit_apply_def = {"jit_decorator", py_jit_apply, METH_O,
                                    "Applies jit's options to a function."};

/* numba's jit(shared_memory_carveout=...): "MaxL1" (0), "MaxShared" (100), "default" (-1),
 * in any case, or an int from -1 to 100 (the percentage of the unified L1/shared memory
 * preferred as shared memory); numba's ValueError or TypeError for anything else.
 * NBC__PY_NO_CARVEOUT for None (and with the error set). */
static int shared_memory_carveout(PyObject *arg) {
  if (arg == Py_None) return NBC__PY_NO_CARVEOUT;
  if (PyUnicode_Check(arg)) {
    static const struct {
      const char *name;
      int value;
    } names[] = {{"default", -1}, {"maxl1", 0}, {"maxshared", 100}};
    PyObject *lower = PyObject_CallMethod(arg, "lower", NULL);
    for (size_t i = 0; lower && i < sizeof names / sizeof names[0]; i++)
      if (PyUnicode_CompareWithASCIIString(lower, names[i].name) == 0) {
        Py_DECREF(lower);
        return names[i].value;
      }
    if (lower)
      PyErr_Format(PyExc_ValueError,
                   "Invalid carveout value: %U. Must be -1 to 100 or one of ['default', "
                   "'maxl1', 'maxshared']",
                   arg);
    Py_XDECREF(lower);
    return NBC__PY_NO_CARVEOUT;
  }
  if (PyLong_Check(arg)) {
    int overflow = 0;
    long v = PyLong_AsLongAndOverflow(arg, &overflow);
    if (!overflow && v >= -1 && v <= 100) return (int)v;
    PyErr_SetString(PyExc_ValueError, "Carveout must be between -1 and 100");
    return NBC__PY_NO_CARVEOUT;
  }
  PyErr_Format(PyExc_TypeError, "shared_memory_carveout must be str or int, got %s",
               Py_TYPE(arg)->tp_name);
  return NBC__PY_NO_CARVEOUT;
}

/* Replaces each of the n options by Py_True or Py_False (borrowed), its truth; -1 with the
 * error set when one's __bool__ raises. */
static int truths(PyObject **options[], size_t n) {
  for (size_t i = 0; i < n; i++) {
    int truth = PyObject_IsTrue(*options[i]);
    if (truth < 0) return -1;
    *options[i] = truth ? Py_True : Py_False;
  }
  return 0;
}

static PyObject *py_jit(PyObject *module, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"func_or_sig", "device", "debug", "lineinfo", "fastmath", "opt",
                           "inline", "link", "cache", "max_registers", "launch_bounds",
                           "forceinline", "lto", "shared_memory_carveout", "extensions",
                           NULL};
  PyObject *target = Py_None, *device = Py_False, *debug = Py_None, *lineinfo = Py_False;
  PyObject *fastmath = Py_False, *opt = Py_None, *inl = Py_None, *link = Py_None;
  PyObject *cache = Py_False, *maxreg = Py_None, *bounds = Py_None, *forceinline = Py_False;
  PyObject *lto = Py_False, *carveout_arg = Py_None, *extensions = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OOOOOOOOOOOOOOO:jit", kwlist, &target,
                                   &device, &debug, &lineinfo, &fastmath, &opt, &inl, &link,
                                   &cache, &maxreg, &bounds, &forceinline, &lto, &carveout_arg,
                                   &extensions))
    return NULL;
  int carveout = shared_memory_carveout(carveout_arg);
  if (carveout == NBC__PY_NO_CARVEOUT && PyErr_Occurred()) return NULL;
  int lto_on = PyObject_IsTrue(lto);
  if (lto_on < 0) return NULL;
  /* the config holds True or False: build() reads these options without an error path */
  PyObject **flags[] = {&device, &lineinfo, &fastmath, &forceinline};
  if (truths(flags, sizeof flags / sizeof *flags) < 0) return NULL;
  /* not given: numba's config defaults (NUMBA_CUDA_DEBUGINFO, NUMBA_OPT) */
  nbc__py_state *st = nbc__py_module_state(module);
  int debugging = nbc__py_debug_option(st, debug);
  if (debugging < 0) return NULL;
  int optimising = nbc__py_opt_option(st, opt);
  if (optimising < 0) return NULL;
  debug = debugging ? Py_True : Py_False;
  opt = optimising ? Py_True : Py_False;
  if (debugging && optimising && nbc__py_warn_debug_with_opt(st) < 0) return NULL;
  int lines = PyObject_IsTrue(lineinfo);
  if (lines < 0) return NULL;
  if (debugging && lines &&
      nbc__py_warn(st, "NumbaInvalidConfigWarning",
                   "debug and lineinfo are mutually exclusive. Use debug to get full debug "
                   "info (this disables some optimizations), or lineinfo for line info only "
                   "with code generation unaffected.") < 0)
    return NULL;
  /* Checked now, as numba does when the decorator is made. */
  nbc_compile_options_t check;
  if (nbc__py_launch_bounds(bounds, &check) < 0) return NULL;
  target = python_function_of(st, target);
  /* numba's sigutils.is_signature (a str, a tuple of types, a signature object) or a list of
   * signatures; anything else is the function to compile, refused by build() when it is no
   * Python function */
  int is_func = target != Py_None && !PyUnicode_Check(target) && !PyTuple_Check(target) &&
                !PyList_Check(target) && !PyObject_TypeCheck(target, st->NbTypeType) &&
                Py_TYPE(target) != st->NbSignatureType &&
                !PyObject_HasAttrString(target, "return_type");
  PyObject *sig = is_func ? Py_None : target;
  if (PyList_Check(sig) && PyList_GET_SIZE(sig) == 0) {
    PyErr_SetString(PyExc_ValueError, "jit() was given an empty list of signatures");
    return NULL;
  }
  /* numba's inline="always" (or the older inline=True) asks for the same as forceinline:
   * no call left in the callers; "never" and a cost-model callable ask for nothing. */
  int always = nbc__py_inline_always(inl);
  if (always < 0) return NULL;
  /* numba's max_registers: None or a positive int, the register cap of the kernel's code */
  unsigned long max_registers = 0;
  if (maxreg != Py_None) {
    long v = PyLong_Check(maxreg) ? PyLong_AsLong(maxreg) : -1;
    if ((v == -1 && PyErr_Occurred()) || v <= 0 || v > 255) {
      PyErr_Clear();
      PyErr_Format(PyExc_ValueError, "max_registers must be None or an int from 1 to 255, not %R",
                   maxreg);
      return NULL;
    }
    max_registers = (unsigned long)v;
  }
  int cached = PyObject_IsTrue(cache);
  if (cached < 0) return NULL;
  PyObject *links = nbc__py_link_paths(nbc__py_module_state(module), link);
  if (!links) return NULL;
  /* numba's extensions: a sequence of objects with prepare_args(), kept as a tuple */
  extensions = extensions == Py_None ? PyTuple_New(0) : PySequence_Tuple(extensions);
  if (!extensions) {
    Py_DECREF(links);
    return NULL;
  }
  PyObject *config =
      Py_BuildValue("(OOOOOOOOkONOiN)", sig, device, debug, lineinfo, fastmath, opt, bounds,
                    always ? Py_True : forceinline, max_registers, cached ? Py_True : Py_False,
                    links, lto_on ? Py_True : Py_False, carveout, extensions);
  if (!config) return NULL;
  if (is_func) {
    PyObject *r = nbc__py_jit_apply(module, config, target);
    Py_DECREF(config);
    return r;
  }
  PyObject *self = PyTuple_Pack(2, module, config);
  Py_DECREF(config);
  if (!self) return NULL;
  PyObject *deco = PyCFunction_NewEx(&jit_apply_def, self, NULL);
  Py_DECREF(self);
  return deco;
}

static PyMethodDef kernel_functions[] = {
    {"jit", (PyCFunction)(void (*)(void))py_jit, METH_VARARGS | METH_KEYWORDS,
     "jit($module, func_or_sig=None, device=False, debug=None, lineinfo=False, "
     "fastmath=False, opt=None, inline=None, link=None, cache=False, max_registers=None, "
     "launch_bounds=None, forceinline=False, lto=False, shared_memory_carveout=None, "
     "extensions=None)\n--\n\n"
     "A kernel (LTO-IR linked by nvJitLink with lto=True; compiled now when a signature is "
     "given, else per argument types on first launch) or, with device=True, a device "
     "function."},
    {NULL, NULL, 0, NULL},
};

int nbc__py_jit_init(PyObject *module, nbc__py_state *st) {
  st->DeviceFunctionType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &devfn_spec, NULL);
  if (!st->DeviceFunctionType) return -1;
  return PyModule_AddFunctions(module, kernel_functions);
}
