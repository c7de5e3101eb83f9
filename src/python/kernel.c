/* kernel.c — jit(): device functions, kernels and their launches
 * (`k = jit("void(float32[:])")(f)`, then `k[grid, block](args)` or
 * `k[grid, block, stream, shared_bytes](args)`).
 *
 * jit(device=True) returns a DeviceFunction that keeps .py_func: it is never compiled on its
 * own; kernels calling it resolve it to that function (compile.c's resolver). jit(sig)
 * compiles the kernel at once with the Numba ABI (as numba does for explicit signatures);
 * jit without a signature compiles one specialisation per distinct argument-type signature
 * on first launch, typing arguments the way numba's typeof does (arrays: dtype, ndim and
 * layout C/F/A; Python int -> int64, float -> float64, bool, complex -> complex128; numpy
 * scalars by dtype).
 *
 * A launch: the kernel's code is loaded once per context (nbc_module_load_data, the entry
 * found by nbc_compile_result_symbol), the signature's parameter layout is parsed once
 * (nbc_signature_parse), and each launch packs the arguments into one stack buffer with
 * nbc_signature_pack_* and calls nbc_launch_packed. The hot path does no Python attribute
 * lookup for nbcuda device arrays and Python scalars (objects with __cuda_array_interface__
 * cost one lookup; host arrays are copied to the device and back, as numba does). The
 * launcher supports vectorcall, so `k[g, b](x, y)` builds no argument tuple.
 *
 * k.forall(ntasks, tpb=0, stream=0, sharedmem=0) is numba's ForAll: a launcher whose grid
 * covers ntasks threads, in blocks of tpb or, when tpb is 0, of the largest block the
 * specialisation can have (what numba-cuda's get_max_potential_block_size answers);
 * k.specialize(*args) is the kernel compiled for those arguments' types.
 *
 * Inspection, as numba's dispatcher: `specialized`, `overloads` ({argument types: kernel}),
 * get_regs_per_thread/get_shared_mem_per_block/get_local_mem_per_thread/get_const_mem_size/
 * get_max_threads_per_block(signature=None), and on a kernel compiled for one signature
 * numba's _Kernel properties (regs_per_thread, ...) and max_cooperative_grid_blocks; the code
 * is loaded in the current context as for a launch and asked with nbc_function_attribute.
 */
#include "nbcuda_py.h"

#include <structmember.h>

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LOADED 8 /* contexts a kernel is loaded in at once (one per device in use) */

typedef struct {
  PyObject_HEAD
  PyObject *py_func;
  PyObject *sigtext;          /* eager: the signature; lazy: NULL */
  PyObject *specializations;  /* lazy: dict sigtext -> Kernel */
  int fixed;                  /* jit([sig, ...]): only these, no new specialisation */
  PyObject *dispatch;         /* fixed: dict argument types -> the overload chosen for them */
  nbc_compile_options_t opts;
  unsigned max_registers;     /* numba's jit(max_registers=N), applied when code is loaded */
  int cooperative; /* synchronises the grid: linked with libcudadevrt.a, launched
                      cooperatively (the code calls cudaCG*, or a declared function it calls
                      was declared use_cooperative=True) */
  int fp16;        /* calls numba.cuda.fp16's wrappers: their shim is linked */
  nbc_signature_t *sig;
  nbc_compile_result_t *result;
  struct {
    nbc_context_t *ctx;
    unsigned lifetime; /* nbc_context_lifetime(ctx) when loaded */
    nbc_module_t *module;
    nbc_function_t *function;
  } loaded[MAX_LOADED];
  int nloaded;
  /* The last configuration k[...] was given and its launcher, returned again for an equal
   * configuration (config_same): `k[g, b](args)` in a loop then makes no launcher object. */
  PyObject *last_config;
  PyObject *last_launcher;
  /* jit(cache=True) (cache.c): whether compilations go through the disk cache, and numba's
   * stats, {signature: count} of cache hits and misses (NULL until the first). */
  int cache;
  PyObject *cache_hits, *cache_misses;
  /* Files linked with the code when it is loaded (link.c): a dispatcher's jit(link=[...]);
   * a compiled kernel's, plus those of the declare_device() functions it calls. A tuple of
   * str, or NULL for none. */
  PyObject *links;
  /* A debug=True kernel's exception table (nbc__py_compile_function_links): per raise site
   * (class, args, (function, file, line)), read after each launch; NULL for none. */
  PyObject *raises;
} KernelObject;

typedef struct {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  KernelObject *kernel;
  unsigned grid[3], block[3];
  unsigned shared;
  PyObject *stream; /* NULL: default */
  /* k.forall(ntasks, tpb): -1 for k[...]; else the grid is ceil(ntasks / block) and a block
   * of 0 threads is asked of the driver per launch (the specialisation's largest block). */
  long long ntasks;
  /* numba's pre_launch_callbacks: NULL until read; each is called as cb(kernel, launcher)
   * before every launch through this launcher. */
  PyObject *callbacks;
} LauncherObject;

typedef struct {
  PyObject_HEAD
  PyObject *py_func;
  int forceinline; /* jit(device=True, forceinline=True): inlined into every caller */
} DeviceFunctionObject;

/* ------------------------------------------------------------ DeviceFunction ---------- */

static int devfn_traverse(DeviceFunctionObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->py_func);
  return 0;
}

static void devfn_dealloc(DeviceFunctionObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  Py_CLEAR(self->py_func);
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

static PyObject *forward_attr(PyObject *f, void *attr) {
  return PyObject_GetAttrString(f, (const char *)attr);
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
    {Py_tp_repr, devfn_repr},
    {Py_tp_getset, devfn_getset},
    {0, NULL},
};

static PyType_Spec devfn_spec = {
    .name = "nbcuda.DeviceFunction",
    .basicsize = sizeof(DeviceFunctionObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION |
             Py_TPFLAGS_IMMUTABLETYPE,
    .slots = devfn_slots,
};

/* ------------------------------------------------------------ Kernel ------------------ */

static int kernel_traverse(KernelObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->py_func);
  Py_VISIT(self->specializations);
  Py_VISIT(self->dispatch);
  Py_VISIT(self->last_config);
  Py_VISIT(self->last_launcher);
  Py_VISIT(self->links);
  Py_VISIT(self->raises);
  return 0;
}

/* The cached launcher refers back to its kernel: the garbage collector breaks that cycle here
 * (the kernel stays usable: the next k[...] makes a launcher again). */
static int kernel_clear(KernelObject *self) {
  Py_CLEAR(self->last_config);
  Py_CLEAR(self->last_launcher);
  return 0;
}

static void kernel_dealloc(KernelObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  /* Modules of contexts reset since (close(), Device.reset()) are gone already. */
  for (int i = 0; i < self->nloaded; i++)
    if (nbc_context_lifetime(self->loaded[i].ctx) == self->loaded[i].lifetime)
      nbc_module_destroy(self->loaded[i].module);
  nbc_signature_destroy(self->sig);
  nbc_compile_result_destroy(self->result);
  Py_CLEAR(self->py_func);
  Py_CLEAR(self->sigtext);
  Py_CLEAR(self->specializations);
  Py_CLEAR(self->dispatch);
  Py_CLEAR(self->cache_hits);
  Py_CLEAR(self->cache_misses);
  Py_CLEAR(self->links);
  Py_CLEAR(self->raises);
  kernel_clear(self);
  tp->tp_free(self);
  Py_DECREF(tp);
}

/* Whether numba's printed return type is void ("none"; the C parser may say "void"). */
static int is_void(const char *ret) {
  return !ret || strcmp(ret, "none") == 0 || strcmp(ret, "void") == 0;
}

static KernelObject *kernel_alloc(nbc__py_state *st, PyObject *py_func,
                                  const nbc_compile_options_t *opts) {
  KernelObject *k = PyObject_GC_New(KernelObject, st->KernelType);
  if (!k) return NULL;
  k->py_func = Py_NewRef(py_func);
  k->sigtext = NULL;
  k->specializations = NULL;
  k->fixed = 0;
  k->dispatch = NULL;
  k->opts = *opts;
  k->max_registers = 0;
  k->cooperative = 0;
  k->fp16 = 0;
  k->sig = NULL;
  k->result = NULL;
  k->nloaded = 0;
  k->last_config = NULL;
  k->last_launcher = NULL;
  k->cache = 0;
  k->cache_hits = k->cache_misses = NULL;
  k->links = NULL;
  k->raises = NULL;
  PyObject_GC_Track(k);
  return k;
}

/* Adds one to counts[sig] (a dict made on first use). */
static int count_up(PyObject **counts, PyObject *sig) {
  if (!*counts && !(*counts = PyDict_New())) return -1;
  PyObject *old = PyDict_GetItemWithError(*counts, sig);
  if (!old && PyErr_Occurred()) return -1;
  PyObject *n = PyLong_FromLong(old ? PyLong_AsLong(old) + 1 : 1);
  int rc = n ? PyDict_SetItem(*counts, sig, n) : -1;
  Py_XDECREF(n);
  return rc;
}

/* The compiled code of py_func for sig: from the disk cache when jit(cache=True) and it holds
 * a current copy, else compiled (and then stored there); stats counted on owner. */
/* Compiles py_func for sig into k, with k->links = jit_links plus the files of the declared
 * functions it calls. */
static int compile_linked(nbc__py_state *st, KernelObject *k, PyObject *py_func, const char *sig,
                          PyObject *jit_links) {
  PyObject *declared = NULL;
  int declared_cooperative = 0;
  int rc = nbc__py_compile_function_links(st, py_func, sig, &k->opts, &k->result, &declared,
                                          &declared_cooperative, &k->raises);
  if (rc == 0) {
    k->cooperative = declared_cooperative || nbc_compile_result_cooperative(k->result);
    k->fp16 = nbc_compile_result_uses_fp16(k->result);
  }
  if (rc == 0 && (PyList_GET_SIZE(declared) || (jit_links && PyTuple_GET_SIZE(jit_links)))) {
    PyObject *all = jit_links ? PySequence_List(jit_links) : PyList_New(0);
    for (Py_ssize_t i = 0; all && i < PyList_GET_SIZE(declared); i++) {
      int seen = PySequence_Contains(all, PyList_GET_ITEM(declared, i));
      if (seen < 0 || (!seen && PyList_Append(all, PyList_GET_ITEM(declared, i)) < 0))
        Py_CLEAR(all);
    }
    Py_XSETREF(k->links, all ? PyList_AsTuple(all) : NULL);
    Py_XDECREF(all);
    if (!k->links) rc = -1;
  }
  Py_XDECREF(declared);
  return rc;
}

static int compile_cached(nbc__py_state *st, KernelObject *k, KernelObject *owner,
                          PyObject *py_func, PyObject *sigtext, const char *sig,
                          PyObject *jit_links) {
  /* debug kernels are not kept: a hit would not know their exception table */
  if (!owner->cache || k->opts.debug) return compile_linked(st, k, py_func, sig, jit_links);
  nbc__py_cache_slot slot;
  int hit = nbc__py_cache_load(st, py_func, sig, &k->opts, &slot, &k->result);
  int rc = 0;
  if (hit) {
    Py_XSETREF(k->links, Py_XNewRef(jit_links));
    k->cooperative = nbc_compile_result_cooperative(k->result);
    k->fp16 = nbc_compile_result_uses_fp16(k->result);
  } else {
    rc = compile_linked(st, k, py_func, sig, jit_links);
    /* Code that calls declared functions is not kept: a hit would not know their files. */
    int declared = k->links && (!jit_links || PyTuple_GET_SIZE(k->links) >
                                                  PyTuple_GET_SIZE(jit_links));
    if (rc == 0 && !declared) nbc__py_cache_store(&slot, k->result);
  }
  nbc__py_cache_slot_free(&slot);
  if (rc == 0) rc = count_up(hit ? &owner->cache_hits : &owner->cache_misses, sigtext);
  return rc;
}

/* Compiles py_func for sigtext as a kernel (Numba ABI) and parses the parameter layout;
 * through the disk cache when owner (the dispatcher that counts the stats; NULL: the new
 * kernel itself) was jitted with cache=True. */
static KernelObject *kernel_compile(nbc__py_state *st, PyObject *py_func, PyObject *sigtext,
                                    const nbc_compile_options_t *opts, int cache,
                                    KernelObject *owner, PyObject *links) {
  KernelObject *k = kernel_alloc(st, py_func, opts);
  if (!k) return NULL;
  k->cache = cache;
  k->sigtext = Py_NewRef(sigtext);
  const char *sig = PyUnicode_AsUTF8(sigtext);
  if (!sig) goto fail;
  nbc_status_t s = nbc_signature_parse(sig, &k->sig);
  if (s != NBC_OK) {
    nbc__py_raise(st, s);
    goto fail;
  }
  const char *ret = nbc_signature_return_type(k->sig);
  if (!is_void(ret)) {
    PyErr_SetString(PyExc_TypeError, "CUDA kernel must have void return type.");
    goto fail;
  }
  if (compile_cached(st, k, owner ? owner : k, py_func, sigtext, sig, links) < 0) goto fail;
  ret = nbc_compile_result_return_type(k->result);
  if (!is_void(ret)) {
    PyErr_SetString(PyExc_TypeError, "CUDA kernel must have void return type.");
    goto fail;
  }
  return k;
fail:
  Py_DECREF(k);
  return NULL;
}

/* The kernel's function in the current context, loading the code there the first time. */
static nbc_function_t *kernel_function(nbc__py_state *st, KernelObject *k) {
  nbc_context_t *ctx = NULL;
  nbc_status_t s = nbc_current_context(-1, &ctx);
  if (s != NBC_OK) {
    nbc__py_raise(st, s);
    return NULL;
  }
  unsigned lifetime = nbc_context_lifetime(ctx);
  for (int i = 0; i < k->nloaded; i++)
    if (k->loaded[i].ctx == ctx && k->loaded[i].lifetime == lifetime)
      return k->loaded[i].function;
  /* Forget code loaded in contexts reset since (that device's context is new); code loaded
   * in other devices' contexts stays. */
  int kept = 0;
  for (int i = 0; i < k->nloaded; i++)
    if (nbc_context_lifetime(k->loaded[i].ctx) == k->loaded[i].lifetime)
      k->loaded[kept++] = k->loaded[i];
  k->nloaded = kept;
  size_t size = 0;
  const char *code = nbc_compile_result_code(k->result, &size);
  nbc_module_t *module = NULL;
  nbc_function_t *fn = NULL;
  nbc_module_load_options_t load = {.max_registers = k->max_registers,
                                    .cudadevrt = k->cooperative,
                                    .fp16 = k->fp16};
  if (k->links && PyTuple_GET_SIZE(k->links)) {
    int lto = k->opts.output == NBC_OUTPUT_LTOIR;
    if (nbc__py_link_load(st, code, size, lto, k->links, &load, &module) < 0) return NULL;
    s = NBC_OK;
  } else {
    s = nbc_module_load_data_ex(code, size, NBC_IMAGE_AUTO, &load, &module);
  }
  if (s == NBC_OK) s = nbc_module_get_function(module, nbc_compile_result_symbol(k->result), &fn);
  if (s != NBC_OK) {
    nbc_module_destroy(module);
    nbc__py_raise(st, s);
    return NULL;
  }
  if (k->nloaded == MAX_LOADED) { /* forget the oldest (its module stays loaded) */
    memmove(&k->loaded[0], &k->loaded[1], sizeof k->loaded[0] * (MAX_LOADED - 1));
    k->nloaded--;
  }
  k->loaded[k->nloaded].ctx = ctx;
  k->loaded[k->nloaded].lifetime = lifetime;
  k->loaded[k->nloaded].module = module;
  k->loaded[k->nloaded].function = fn;
  k->nloaded++;
  return fn;
}

/* Whether obj is a numpy.void (a record scalar); numpy is imported by then. */
static int is_numpy_void(nbc__py_state *st, PyObject *obj) {
  if (!st->np_void) {
    PyObject *np = st->numpy ? st->numpy : nbc__py_numpy(st);
    st->np_void = np ? PyObject_GetAttrString(np, "void") : NULL;
    if (!st->np_void || !PyType_Check(st->np_void)) {
      Py_CLEAR(st->np_void);
      PyErr_Clear();
      return 0;
    }
  }
  return PyObject_TypeCheck(obj, (PyTypeObject *)st->np_void);
}

/* numba's typeof for the lazy jit: the signature spelling of one argument. */
static const char *scalar_name(char kind, int itemsize) {
  switch (kind) {
  case 'b': return "boolean";
  case 'i': return itemsize == 1 ? "int8" : itemsize == 2 ? "int16" : itemsize == 4 ? "int32" : "int64";
  case 'u': return itemsize == 1 ? "uint8" : itemsize == 2 ? "uint16" : itemsize == 4 ? "uint32" : "uint64";
  case 'f': return itemsize == 2 ? "float16" : itemsize == 4 ? "float32" : "float64";
  case 'c': return itemsize == 8 ? "complex64" : "complex128";
  default: return NULL;
  }
}

static PyObject *typeof_arg(nbc__py_state *st, PyObject *a) {
  PyObject *value;
  int copy_in, copy_out;
  if (nbc__py_arg_hint(st, a, &value, &copy_in, &copy_out)) a = value; /* In(x): x's type */
  if (PyBool_Check(a)) return PyUnicode_FromString("boolean");
  if (PyLong_Check(a)) return PyUnicode_FromString("int64");
  if (PyFloat_CheckExact(a)) return PyUnicode_FromString("float64");
  if (PyComplex_CheckExact(a)) return PyUnicode_FromString("complex128");
  /* numpy scalars (numpy.generic: they export a buffer too, so ask numpy): their dtype */
  int np_scalar = strncmp(Py_TYPE(a)->tp_name, "numpy.", 6) == 0;
  if (np_scalar) {
    if (!nbc__py_numpy(st)) return NULL;
    np_scalar = !PyObject_TypeCheck(a, (PyTypeObject *)st->np_ndarray);
  }
  if (np_scalar && is_numpy_void(st, a)) {
    PyObject *dt = PyObject_GetAttrString(a, "dtype"); /* a record: numba's Record type */
    PyObject *text = dt ? nbc__py_record_text(st, dt) : NULL;
    Py_XDECREF(dt);
    return text;
  }
  if (np_scalar) {
    PyObject *dt = PyObject_GetAttrString(a, "dtype");
    PyObject *str = dt ? PyObject_GetAttrString(dt, "str") : NULL;
    const char *ts = str ? PyUnicode_AsUTF8(str) : NULL;
    const char *n = ts ? scalar_name(ts[1] == '?' ? 'b' : ts[1], atoi(ts + 2)) : NULL;
    Py_XDECREF(dt);
    Py_XDECREF(str);
    if (n) return PyUnicode_FromString(n);
    if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "unsupported argument %R", a);
    return NULL;
  }
  if (PyFloat_Check(a)) return PyUnicode_FromString("float64");
  /* Arrays: device arrays and __cuda_array_interface__ objects through the launch view
   * (no copy for those), host buffers through the buffer protocol (no copy either). */
  nbc__py_array_view v;
  v.host = NULL;
  if (Py_TYPE(a) == st->DeviceArrayType || PyObject_HasAttr(a, st->str_cai)) {
    if (nbc__py_array_view_get(st, a, &v) < 0) return NULL;
  } else {
    Py_buffer b;
    if (PyObject_GetBuffer(a, &b, PyBUF_RECORDS_RO) < 0) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "unsupported kernel argument of type %s",
                   Py_TYPE(a)->tp_name);
      return NULL;
    }
    v.kind = nbc__py_format_kind(b.format, b.itemsize); /* 'V' for records ("T{...}") */
    v.itemsize = (int)b.itemsize;
    v.ndim = b.ndim <= NBC__PY_MAXDIM ? b.ndim : 0;
    for (int d = 0; d < v.ndim; d++) {
      v.shape[d] = b.shape ? b.shape[d] : b.len / b.itemsize;
      v.strides[d] = b.strides ? b.strides[d] : 0;
    }
    int64_t stride = v.itemsize;
    for (int d = v.ndim - 1; !b.strides && d >= 0; d--) {
      v.strides[d] = stride;
      stride *= v.shape[d];
    }
    PyBuffer_Release(&b);
  }
  const char *n = scalar_name(v.kind, v.itemsize);
  PyObject *record = NULL; /* an array of records: its element type's text */
  if (v.kind == 'V') {
    PyObject *dt = PyObject_GetAttrString(a, "dtype");
    record = dt ? nbc__py_record_text(st, dt) : NULL;
    Py_XDECREF(dt);
    if (!record) return NULL;
    n = PyUnicode_AsUTF8(record);
  }
  int c = 1, f = 1;
  int64_t ec = v.itemsize, ef = v.itemsize;
  for (int k = 0; k < v.ndim; k++) {
    int dc = v.ndim - 1 - k, df = k;
    if (v.shape[dc] > 1 && v.strides[dc] != ec) c = 0;
    if (v.shape[df] > 1 && v.strides[df] != ef) f = 0;
    ec *= v.shape[dc];
    ef *= v.shape[df];
  }
  if (!n || v.ndim == 0) {
    Py_XDECREF(record);
    PyErr_Format(PyExc_TypeError, "unsupported kernel argument %R", a);
    return NULL;
  }
  char layout = c ? 'C' : (f && v.ndim > 1) ? 'F' : 'A';
  PyObject *s = PyUnicode_FromFormat("%s[", n);
  Py_XDECREF(record);
  for (int d = 0; s && d < v.ndim; d++) {
    int unit = (layout == 'C' && d == v.ndim - 1) || (layout == 'F' && d == 0);
    Py_SETREF(s, PyUnicode_FromFormat("%U%s%s", s, d ? ", " : "", unit ? "::1" : ":"));
  }
  if (s) Py_SETREF(s, PyUnicode_FromFormat("%U]", s));
  return s;
}

/* "void(<numba type of each argument>)", e.g. "void(float32[::1], int64)". */
static PyObject *typeof_signature(nbc__py_state *st, PyObject *const *args, Py_ssize_t n) {
  PyObject *sig = PyUnicode_FromString("void(");
  for (Py_ssize_t i = 0; sig && i < n; i++) {
    PyObject *t = typeof_arg(st, args[i]);
    if (!t) {
      Py_CLEAR(sig);
      break;
    }
    Py_SETREF(sig, PyUnicode_FromFormat("%U%s%U", sig, i ? ", " : "", t));
    Py_DECREF(t);
  }
  if (sig) Py_SETREF(sig, PyUnicode_FromFormat("%U)", sig));
  return sig;
}

/* jit([sig, ...]): the overload the arguments match best (the first of equal cost), or a
 * TypeError like numba's "No matching definition for argument type(s) ...". */
static KernelObject *select_overload(nbc__py_state *st, KernelObject *k, PyObject *const *args,
                                     Py_ssize_t n) {
  PyObject *text = typeof_signature(st, args, n);
  if (!text) return NULL;
  /* The same argument types choose the same overload: rated once. */
  if (!k->dispatch && !(k->dispatch = PyDict_New())) {
    Py_DECREF(text);
    return NULL;
  }
  PyObject *known = PyDict_GetItemWithError(k->dispatch, text);
  if (known || PyErr_Occurred()) {
    Py_DECREF(text);
    return (KernelObject *)known; /* borrowed; k->specializations keeps it */
  }
  nbc_signature_t *actual = NULL;
  nbc_status_t s = nbc_signature_parse(PyUnicode_AsUTF8(text), &actual);
  if (s != NBC_OK) {
    Py_DECREF(text);
    nbc__py_raise(st, s);
    return NULL;
  }
  /* The overloads in the order jit() was given them: on equal ratings the first wins. */
  KernelObject *best = NULL;
  PyObject *overloads = k->specializations ? PyDict_Values(k->specializations) : PyList_New(0);
  Py_ssize_t count = overloads ? PyList_GET_SIZE(overloads) : 0;
  const nbc_signature_t **sigs = PyMem_Malloc(sizeof *sigs * (size_t)(count ? count : 1));
  if (overloads && sigs) {
    for (Py_ssize_t i = 0; i < count; i++)
      sigs[i] = ((KernelObject *)PyList_GET_ITEM(overloads, i))->sig;
    int chosen = nbc_signature_best_match(actual, sigs, (int)count);
    if (chosen >= 0) best = (KernelObject *)PyList_GET_ITEM(overloads, chosen);
  } else if (!PyErr_Occurred()) {
    PyErr_NoMemory();
  }
  PyMem_Free(sigs);
  Py_XDECREF(overloads); /* best stays alive: k->specializations holds it */
  nbc_signature_destroy(actual);
  if (!best && !PyErr_Occurred()) {
    PyObject *types = PyUnicode_Substring(text, 5, PyUnicode_GET_LENGTH(text) - 1);
    if (types)
      PyErr_Format(PyExc_TypeError, "No matching definition for argument type(s) %U", types);
    Py_XDECREF(types);
  }
  if (best && PyDict_SetItem(k->dispatch, text, (PyObject *)best) < 0) best = NULL;
  Py_DECREF(text);
  return best;
}

/* The specialisation of a lazy kernel for these arguments (compiled on first use). */
static KernelObject *specialize(nbc__py_state *st, KernelObject *k, PyObject *const *args,
                                Py_ssize_t n) {
  if (k->fixed) return select_overload(st, k, args, n);
  PyObject *sig = typeof_signature(st, args, n);
  if (!sig) return NULL;
  if (!k->specializations && !(k->specializations = PyDict_New())) {
    Py_DECREF(sig);
    return NULL;
  }
  PyObject *found = PyDict_GetItemWithError(k->specializations, sig);
  if (found) {
    Py_DECREF(sig);
    return (KernelObject *)found; /* borrowed; the dict keeps it */
  }
  KernelObject *spec =
      PyErr_Occurred() ? NULL : kernel_compile(st, k->py_func, sig, &k->opts, k->cache, k, k->links);
  if (spec) spec->max_registers = k->max_registers;
  int rc = spec ? PyDict_SetItem(k->specializations, sig, (PyObject *)spec) : -1;
  Py_DECREF(sig);
  Py_XDECREF(spec);
  return rc == 0 ? spec : NULL;
}

/* An argument the signature does not accept (wrong dtype, rank, layout or kind) is a
 * TypeError, as numba's dispatcher answers ("No matching definition for argument type(s)"). */
static int argument_refused(nbc__py_state *st, nbc_status_t s) {
  if (s != NBC_INVALID_ARGUMENT) return nbc__py_raise_int(st, s);
  PyErr_SetString(PyExc_TypeError, nbc_last_error());
  return -1;
}

/* Packs one scalar argument. */
static int pack_scalar(nbc__py_state *st, const nbc_signature_t *sig, int i, char *buf,
                       PyObject *a) {
  nbc_status_t s;
  if (PyLong_Check(a)) { /* bool included */
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(a, &overflow);
    if (overflow) {
      v = (long long)PyLong_AsUnsignedLongLongMask(a);
      if (PyErr_Occurred()) return -1;
    }
    s = nbc_signature_pack_int(sig, i, buf, v);
  } else if (PyFloat_Check(a)) {
    s = nbc_signature_pack_float(sig, i, buf, PyFloat_AS_DOUBLE(a));
  } else if (PyComplex_Check(a)) {
    Py_complex c = PyComplex_AsCComplex(a);
    s = nbc_signature_pack_complex(sig, i, buf, c.real, c.imag);
  } else if (PyIndex_Check(a)) { /* numpy integers */
    PyObject *v = PyNumber_Index(a);
    if (!v) return -1;
    int r = pack_scalar(st, sig, i, buf, v);
    Py_DECREF(v);
    return r;
  } else if (Py_TYPE(a)->tp_as_number && Py_TYPE(a)->tp_as_number->nb_float &&
             !strstr(Py_TYPE(a)->tp_name, "complex")) { /* numpy floats and bools */
    double d = PyFloat_AsDouble(a);
    if (d == -1.0 && PyErr_Occurred()) return -1;
    s = nbc_signature_pack_float(sig, i, buf, d);
  } else if (PyObject_HasAttrString(a, "__complex__")) {
    Py_complex c = PyComplex_AsCComplex(a);
    if (PyErr_Occurred()) return -1;
    s = nbc_signature_pack_complex(sig, i, buf, c.real, c.imag);
  } else {
    PyErr_Format(PyExc_TypeError, "argument %d: expected %s, got %s", i + 1,
                 nbc_signature_param(sig, i)->type_name, Py_TYPE(a)->tp_name);
    return -1;
  }
  return s == NBC_OK ? 0 : argument_refused(st, s);
}

/* numba's ForAll: the block is the one forall() was given, else the largest the kernel can
 * be launched with (numba-cuda's get_max_potential_block_size answers the function's
 * MAX_THREADS_PER_BLOCK), and the grid covers ntasks threads. */
static int forall_dims(nbc__py_state *st, const LauncherObject *L, nbc_function_t *fn,
                       unsigned grid[3], unsigned block[3]) {
  if (block[0] == 0) {
    int most = 0;
    nbc_status_t s = nbc_function_attribute(fn, NBC_FUNCTION_ATTR_MAX_THREADS_PER_BLOCK, &most);
    if (s != NBC_OK) return nbc__py_raise_int(st, s);
    block[0] = most > 0 ? (unsigned)most : 1;
  }
  unsigned long long blocks = ((unsigned long long)L->ntasks + block[0] - 1) / block[0];
  if (blocks > UINT_MAX) {
    PyErr_Format(PyExc_ValueError, "forall: %lld tasks in blocks of %u threads need %llu "
                 "blocks, more than a grid can have", L->ntasks, block[0], blocks);
    return -1;
  }
  grid[0] = (unsigned)blocks;
  return 0;
}

/* The launch itself: pack, launch, copy host arrays back. */
/* numba's pre_launch_callbacks: each called as cb(kernel, launcher), kernel being the
 * overload these arguments launch; a callback that raises stops the launch. */
static int run_pre_launch(LauncherObject *L, KernelObject *k) {
  PyObject *callbacks = PySequence_List(L->callbacks); /* a callback may change the list */
  if (!callbacks) return -1;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(callbacks); i++) {
    PyObject *r = PyObject_CallFunctionObjArgs(PyList_GET_ITEM(callbacks, i), (PyObject *)k,
                                               (PyObject *)L, NULL);
    if (!r) {
      Py_DECREF(callbacks);
      return -1;
    }
    Py_DECREF(r);
  }
  Py_DECREF(callbacks);
  return 0;
}

/* After a launch of a debug=True kernel: numba's _Kernel.launch raises the exception of the
 * raise site that ended a thread first, its first argument prefixed with where and which
 * thread ("In function 'k', file /abs/f.py, line 12, tid=[0, 0, 5] ctaid=[0, 0, 1]: message";
 * an operation's error, a zero divisor, has only the thread). A bare `raise` (numba would call
 * None) is a RuntimeError "...: No active exception to reraise"; a code outside the table
 * numba's SystemError "...: unknown error N in native function". */
static int raise_from_kernel(nbc__py_state *st, KernelObject *k, nbc_function_t *fn,
                             nbc_stream_t *stream) {
  int code = 0, tid[3], ctaid[3];
  nbc_status_t s;
  Py_BEGIN_ALLOW_THREADS s = nbc_debug_exception_read(fn, stream, &code, tid, ctaid);
  Py_END_ALLOW_THREADS if (s != NBC_OK) return nbc__py_raise_int(st, s);
  if (!code) return 0;
  PyObject *cls, *args, *loc = Py_None, *owned = NULL;
  if (code >= 1 && code <= PyTuple_GET_SIZE(k->raises)) {
    PyObject *site = PyTuple_GET_ITEM(k->raises, code - 1);
    cls = PyTuple_GET_ITEM(site, 0);
    args = PyTuple_GET_ITEM(site, 1);
    loc = PyTuple_GET_ITEM(site, 2);
    if (cls == Py_None) {
      cls = PyExc_RuntimeError;
      args = owned = Py_BuildValue("(s)", "No active exception to reraise");
    }
  } else {
    cls = PyExc_SystemError;
    args = owned = Py_BuildValue("(N)", PyUnicode_FromFormat(
                                            "unknown error %d in native function", code));
  }
  PyObject *where = loc == Py_None
                        ? PyUnicode_FromString("")
                        : PyUnicode_FromFormat("In function %R, file %S, line %S, ",
                                               PyTuple_GET_ITEM(loc, 0), PyTuple_GET_ITEM(loc, 1),
                                               PyTuple_GET_ITEM(loc, 2));
  PyObject *prefix = where ? PyUnicode_FromFormat("%Utid=[%d, %d, %d] ctaid=[%d, %d, %d]", where,
                                                  tid[0], tid[1], tid[2], ctaid[0], ctaid[1],
                                                  ctaid[2])
                           : NULL;
  Py_XDECREF(where);
  PyObject *call_args = NULL;
  if (prefix && args && args != Py_None && PyTuple_GET_SIZE(args)) {
    /* ("prefix: first",) + the rest */
    PyObject *first = PyUnicode_FromFormat("%U: %S", prefix, PyTuple_GET_ITEM(args, 0));
    PyObject *rest = first ? PyTuple_GetSlice(args, 1, PyTuple_GET_SIZE(args)) : NULL;
    PyObject *head = rest ? PyTuple_Pack(1, first) : NULL;
    call_args = head ? PySequence_Concat(head, rest) : NULL;
    Py_XDECREF(first);
    Py_XDECREF(rest);
    Py_XDECREF(head);
  } else if (prefix && args) {
    call_args = PyTuple_Pack(1, prefix);
  }
  Py_XDECREF(prefix);
  Py_XDECREF(owned);
  PyObject *exc = call_args ? PyObject_Call(cls, call_args, NULL) : NULL;
  Py_XDECREF(call_args);
  if (exc) {
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
  }
  return -1;
}

/* A record argument, as numba passes one: its bytes (a numpy.void, or any buffer of the
 * record's size) are copied to device memory for the launch and back after it (into the
 * numpy.void's memory even though numpy exports it read-only, as numba's host_pointer
 * forces it writable: a record taken from an array, a[0], writes through to the array). */
static int record_view(nbc__py_state *st, PyObject *obj, const nbc_param_info_t *p,
                       nbc__py_array_view *view) {
  view->host = NULL;
  if (is_numpy_void(st, obj)) { /* its fields must be the parameter's */
    PyObject *dt = PyObject_GetAttrString(obj, "dtype");
    PyObject *text = dt ? nbc__py_record_text(st, dt) : NULL;
    Py_XDECREF(dt);
    if (!text) return -1;
    int same = PyUnicode_CompareWithASCIIString(text, p->type_name) == 0;
    if (!same)
      PyErr_Format(PyExc_TypeError, "expected a record of type %s, got one of type %U",
                   p->type_name, text);
    Py_DECREF(text);
    if (!same) return -1;
  }
  if (PyObject_GetBuffer(obj, &view->buffer, PyBUF_SIMPLE) < 0) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "expected a record (numpy.void) of %s, got %s",
                 p->type_name, Py_TYPE(obj)->tp_name);
    return -1;
  }
  if (view->buffer.len != p->itemsize) {
    PyErr_Format(PyExc_TypeError, "expected a record of %d bytes (%s), got %zd bytes",
                 p->itemsize, p->type_name, view->buffer.len);
    PyBuffer_Release(&view->buffer);
    return -1;
  }
  view->data = 0;
  view->kind = 'V';
  view->itemsize = p->itemsize;
  view->ndim = 0;
  view->nbytes = (size_t)p->itemsize;
  view->copy_back = !view->buffer.readonly || is_numpy_void(st, obj);
  nbc_status_t s = view->nbytes ? nbc_mem_alloc(view->nbytes, &view->data) : NBC_OK;
  if (s == NBC_OK && view->nbytes)
    s = nbc_memcpy_htod(view->data, view->buffer.buf, view->nbytes);
  if (s != NBC_OK) {
    if (view->data) nbc_mem_free(view->data);
    PyBuffer_Release(&view->buffer);
    return nbc__py_raise_int(st, s);
  }
  view->host = Py_NewRef(obj);
  return 0;
}

static PyObject *launch(LauncherObject *L, PyObject *const *args, Py_ssize_t nargs) {
  nbc__py_state *st = nbc__py_state_of((PyObject *)L);
  KernelObject *k = L->kernel;
  if (L->ntasks == 0) Py_RETURN_NONE; /* numba's ForAll: nothing to do, nothing checked */
  if (!k->sigtext) {
    k = specialize(st, k, args, nargs);
    if (!k) return NULL;
  }
  if (L->callbacks && PyList_GET_SIZE(L->callbacks) && run_pre_launch(L, k) < 0) return NULL;
  const nbc_signature_t *sig = k->sig;
  int n = nbc_signature_nargs(sig);
  if (nargs != n) {
    PyErr_Format(PyExc_TypeError, "kernel %R takes %d arguments (%zd given)", k->py_func, n,
                 nargs);
    return NULL;
  }
  nbc_function_t *fn = kernel_function(st, k);
  if (!fn) return NULL;
  unsigned grid[3], block[3];
  memcpy(grid, L->grid, sizeof grid);
  memcpy(block, L->block, sizeof block);
  if (L->ntasks >= 0 && forall_dims(st, L, fn, grid, block) < 0) return NULL;
  size_t size = nbc_signature_params_size(sig);
  _Alignas(16) char stackbuf[1024];
  char *buf = size <= sizeof stackbuf ? stackbuf : malloc(size);
  nbc__py_array_view stackviews[8];
  nbc__py_array_view *views = n <= 8 ? stackviews : calloc((size_t)n, sizeof *views);
  if (!buf || !views) {
    if (buf != stackbuf) free(buf);
    return PyErr_NoMemory();
  }
  int nviews = 0, ok = 1;
  for (int i = 0; ok && i < n; i++) {
    const nbc_param_info_t *p = nbc_signature_param(sig, i);
    if (p->kind == NBC_PARAM_ARRAY) {
      nbc__py_array_view *v = &views[nviews];
      if (nbc__py_array_view_get(st, args[i], v) < 0) {
        ok = 0;
        break;
      }
      nviews++;
      nbc_status_t s = nbc_signature_pack_array(sig, i, buf, v->data, v->kind, v->itemsize,
                                                v->ndim, v->shape, v->strides);
      if (s != NBC_OK) ok = argument_refused(st, s) == 0;
    } else if (p->kind == NBC_PARAM_RECORD) {
      nbc__py_array_view *v = &views[nviews];
      if (record_view(st, args[i], p, v) < 0) {
        ok = 0;
        break;
      }
      nviews++;
      nbc_status_t s = nbc_signature_pack_record(sig, i, buf, v->data, v->itemsize);
      if (s != NBC_OK) ok = argument_refused(st, s) == 0;
    } else {
      ok = pack_scalar(st, sig, i, buf, args[i]) == 0;
    }
  }
  nbc_stream_t *stream = NULL, *temp = NULL;
  if (ok) ok = nbc__py_stream_arg(st, L->stream, &stream, &temp) == 0;
  if (ok && k->raises) {
    nbc_status_t s = nbc_debug_exception_clear(fn, stream);
    if (s != NBC_OK) ok = nbc__py_raise_int(st, s) == 0;
  }
  if (ok) {
    nbc_status_t s = nbc_launch_packed_ex(fn, grid, block, L->shared, stream, buf, size,
                                          k->cooperative ? NBC_LAUNCH_COOPERATIVE : 0);
    if (s != NBC_OK) ok = nbc__py_raise_int(st, s) == 0;
  }
  if (ok && k->raises) ok = raise_from_kernel(st, k, fn, stream) == 0;
  nbc_stream_destroy(temp);
  for (int i = 0; i < nviews; i++) {
    if (!views[i].host) continue;
    if (ok) {
      ok = nbc__py_array_view_finish(st, &views[i], 1) == 0;
    } else { /* keep the first error; release the rest quietly */
      PyObject *t, *v, *tb;
      PyErr_Fetch(&t, &v, &tb);
      nbc__py_array_view_finish(st, &views[i], 0);
      PyErr_Restore(t, v, tb);
    }
  }
  if (buf != stackbuf) free(buf);
  if (views != stackviews) free(views);
  if (!ok) return NULL;
  Py_RETURN_NONE;
}

/* A launch dimension: an int or a tuple of up to three ints. */
static int dims_arg(PyObject *o, unsigned out[3], const char *what) {
  out[0] = out[1] = out[2] = 1;
  if (PyLong_Check(o)) {
    long long v = PyLong_AsLongLong(o);
    if (v < 0 || v > UINT_MAX) goto bad; /* 2**32 + 1 must not launch as 1 */
    out[0] = (unsigned)v;
    return 0;
  }
  if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) < 1 || PyTuple_GET_SIZE(o) > 3) goto bad;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(o); i++) {
    PyObject *x = PyTuple_GET_ITEM(o, i);
    long long v = PyIndex_Check(x) ? PyNumber_AsSsize_t(x, NULL) : -1;
    if (v < 0 || v > UINT_MAX) goto bad;
    out[i] = (unsigned)v;
  }
  return 0;
bad:
  PyErr_Clear();
  PyErr_Format(PyExc_ValueError, "%s must be an int or a tuple of 1 to 3 non-negative ints, "
               "got %R", what, o);
  return -1;
}

static PyObject *launcher_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                     PyObject *kwnames) {
  if (kwnames && PyTuple_GET_SIZE(kwnames)) {
    PyErr_SetString(PyExc_TypeError, "kernels take no keyword arguments");
    return NULL;
  }
  return launch((LauncherObject *)self, args, PyVectorcall_NARGS(nargsf));
}

/* Whether two launch configurations (k[...]'s tuples) are the same: item by item, the same
 * object, or exact ints or tuples of them that are equal. Anything else (numpy integers,
 * other stream objects) counts as different and is parsed anew. */
static int config_same(PyObject *a, PyObject *b) {
  if (a == b) return 1;
  if (!PyTuple_CheckExact(a) || !PyTuple_CheckExact(b) ||
      PyTuple_GET_SIZE(a) != PyTuple_GET_SIZE(b))
    return 0;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(a); i++) {
    PyObject *x = PyTuple_GET_ITEM(a, i), *y = PyTuple_GET_ITEM(b, i);
    if (x == y) continue;
    if (PyLong_CheckExact(x) && PyLong_CheckExact(y)) {
      if (PyObject_RichCompareBool(x, y, Py_EQ) != 1) return 0;
    } else if (!PyTuple_CheckExact(x) || !config_same(x, y)) {
      return 0;
    }
  }
  return 1;
}

/* A new launcher for the configuration key. */
static PyObject *make_launcher(KernelObject *self, PyObject *key) {
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  if (!PyTuple_Check(key) || PyTuple_GET_SIZE(key) < 2 || PyTuple_GET_SIZE(key) > 4) {
    PyErr_SetString(PyExc_ValueError, "must specify at least the griddim and blockdim: "
                    "kernel[griddim, blockdim] or kernel[griddim, blockdim, stream, "
                    "sharedmem]");
    return NULL;
  }
  LauncherObject *L = PyObject_GC_New(LauncherObject, st->LauncherType);
  if (!L) return NULL;
  L->vectorcall = launcher_vectorcall;
  L->kernel = (KernelObject *)Py_NewRef(self);
  L->stream = NULL;
  L->shared = 0;
  L->ntasks = -1;
  L->callbacks = NULL;
  PyObject_GC_Track(L);
  Py_ssize_t n = PyTuple_GET_SIZE(key);
  if (dims_arg(PyTuple_GET_ITEM(key, 0), L->grid, "griddim") < 0 ||
      dims_arg(PyTuple_GET_ITEM(key, 1), L->block, "blockdim") < 0)
    goto fail;
  if (n > 2) {
    PyObject *s = PyTuple_GET_ITEM(key, 2);
    nbc_stream_t *dummy, *temp;
    if (nbc__py_stream_arg(st, s, &dummy, &temp) < 0) goto fail; /* validate early */
    nbc_stream_destroy(temp);
    L->stream = Py_NewRef(s);
  }
  if (n > 3) {
    long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(key, 3));
    if (v < 0 || v > UINT_MAX) { /* cuLaunchKernel takes an unsigned int: no wrap to 0 */
      if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_OverflowError)) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "sharedmem must be an int from 0 to %u, got %R",
                     UINT_MAX, PyTuple_GET_ITEM(key, 3));
      }
      goto fail;
    }
    L->shared = (unsigned)v;
  }
  return (PyObject *)L;
fail:
  Py_DECREF(L);
  return NULL;
}

/* k[griddim, blockdim(, stream(, sharedmem))]: the launcher of the last configuration when
 * this one is the same (launchers are immutable), else a new one, which is kept. */
static PyObject *kernel_getitem(KernelObject *self, PyObject *key) {
  if (self->last_config && config_same(self->last_config, key))
    return Py_NewRef(self->last_launcher);
  PyObject *L = make_launcher(self, key);
  if (L && PyTuple_CheckExact(key)) {
    Py_XSETREF(self->last_config, Py_NewRef(key));
    Py_XSETREF(self->last_launcher, Py_NewRef(L));
  }
  return L;
}

/* numba's Dispatcher.forall(ntasks, tpb=0, stream=0, sharedmem=0): a launcher of a 1-D grid
 * of ntasks threads (the kernel checks cuda.grid(1) < ntasks itself). */
static PyObject *kernel_forall(KernelObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"ntasks", "tpb", "stream", "sharedmem", NULL};
  PyObject *ntasks_obj, *tpb = NULL, *stream = NULL, *sharedmem = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OOO:forall", kwlist, &ntasks_obj, &tpb,
                                   &stream, &sharedmem))
    return NULL;
  long long ntasks = PyLong_AsLongLong(ntasks_obj); /* ints and numpy integers */
  if (ntasks == -1 && PyErr_Occurred()) return NULL;
  if (ntasks < 0) {
    PyErr_Format(PyExc_ValueError, "Can't create ForAll with negative task count: %lld",
                 ntasks);
    return NULL;
  }
  if (tpb && !PyIndex_Check(tpb)) {
    PyErr_Format(PyExc_TypeError, "forall: tpb must be an int, got %R", tpb);
    return NULL;
  }
  PyObject *zero = PyLong_FromLong(0), *block = tpb ? PyNumber_Index(tpb) : Py_XNewRef(zero);
  PyObject *key = zero && block ? PyTuple_Pack(4, zero, block, stream ? stream : zero,
                                               sharedmem ? sharedmem : zero)
                                : NULL;
  Py_XDECREF(zero);
  Py_XDECREF(block);
  LauncherObject *L = key ? (LauncherObject *)make_launcher(self, key) : NULL;
  Py_XDECREF(key);
  if (L) L->ntasks = ntasks;
  return (PyObject *)L;
}

/* numba's Dispatcher.specialize(*args): the kernel compiled for these arguments' types, a
 * kernel of its own (specialized is True). */
static PyObject *kernel_specialize(KernelObject *self, PyObject *const *args, Py_ssize_t n) {
  if (self->sigtext) {
    PyErr_SetString(PyExc_RuntimeError, "Dispatcher already specialized");
    return NULL;
  }
  KernelObject *k = specialize(nbc__py_state_of((PyObject *)self), self, args, n);
  return Py_XNewRef((PyObject *)k);
}

static PyObject *kernel_call(KernelObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  (void)args;
  (void)kwargs;
  PyErr_SetString(PyExc_ValueError, "kernel launch configuration was not specified. Use the "
                  "syntax:\n\nkernel_function[blockspergrid, threadsperblock](arg0, arg1, "
                  "..., argn)");
  return NULL;
}

static PyObject *kernel_py_func(KernelObject *self, void *c) {
  (void)c;
  return Py_NewRef(self->py_func);
}
static PyObject *kernel_forward(KernelObject *self, void *attr) {
  return forward_attr(self->py_func, attr);
}
static PyObject *kernel_signatures(KernelObject *self, void *c) {
  (void)c;
  if (self->sigtext) return Py_BuildValue("[O]", self->sigtext);
  return self->specializations ? PyDict_Keys(self->specializations) : PyList_New(0);
}
static PyObject *kernel_symbol(KernelObject *self, void *c) {
  (void)c;
  if (!self->result) Py_RETURN_NONE;
  return PyUnicode_FromString(nbc_compile_result_symbol(self->result));
}

/* ---------------------------------------------- resources (numba's get_regs_per_thread) */
/* A kernel compiled for one signature (jit(sig), or an overload of the others) answers
 * nbc_function_attribute for its code loaded in the current context, loaded there the way a
 * launch loads it. The dispatcher-level get_*(signature=None) follow numba's rules: the
 * value of the given signature's overload (a KeyError when none was compiled), else of the
 * only one of a specialized kernel, else a dict {argument types: value} over the compiled
 * overloads, keyed as numba's `overloads`. */

static PyObject *resource_of(nbc__py_state *st, KernelObject *ov, nbc_function_attr_t attr) {
  nbc_function_t *fn = kernel_function(st, ov);
  if (!fn) return NULL;
  int value = 0;
  nbc_status_t s = nbc_function_attribute(fn, attr, &value);
  if (s != NBC_OK) return nbc__py_raise(st, s);
  return PyLong_FromLong(value);
}

/* numba's key of an overload: the tuple of its argument types (nbcuda's type objects, so
 * k.overloads[(nbcuda.float32[::1], nbcuda.int64)] finds it). */
static PyObject *argtypes_of(nbc__py_state *st, const KernelObject *ov) {
  int n = nbc_signature_nargs(ov->sig);
  PyObject *key = PyTuple_New(n);
  for (int i = 0; key && i < n; i++) {
    const nbc_param_info_t *p = nbc_signature_param(ov->sig, i);
    PyObject *t =
        nbc__py_type_from_name(st, p->kind == NBC_PARAM_ARRAY ? p->dtype_name : p->type_name);
    if (t && p->kind == NBC_PARAM_ARRAY) { /* dtype[:, ::1] as a user would write it */
      PyObject *index = PyTuple_New(p->ndim);
      for (int d = 0; index && d < p->ndim; d++) {
        int unit = (p->layout == 'C' && d == p->ndim - 1) || (p->layout == 'F' && d == 0);
        PyObject *one = unit ? PyLong_FromLong(1) : NULL;
        PyObject *slice = !unit || one ? PySlice_New(NULL, NULL, one) : NULL;
        Py_XDECREF(one);
        if (!slice)
          Py_CLEAR(index);
        else
          PyTuple_SET_ITEM(index, d, slice);
      }
      Py_SETREF(t, index ? PyObject_GetItem(t, index) : NULL);
      Py_XDECREF(index);
    }
    if (!t)
      Py_CLEAR(key);
    else
      PyTuple_SET_ITEM(key, i, t);
  }
  return key;
}

/* The compiled overloads, in the order they were compiled (a new list). */
static PyObject *overload_list(KernelObject *k) {
  if (k->sigtext) return Py_BuildValue("[O]", (PyObject *)k);
  return k->specializations ? PyDict_Values(k->specializations) : PyList_New(0);
}

/* Whether two parsed signatures have the same argument types. */
static int same_args(const nbc_signature_t *a, const nbc_signature_t *b) {
  int n = nbc_signature_nargs(a);
  if (n != nbc_signature_nargs(b)) return 0;
  for (int i = 0; i < n; i++)
    if (strcmp(nbc_signature_param(a, i)->type_name, nbc_signature_param(b, i)->type_name))
      return 0;
  return 1;
}

/* The overload compiled for `signature`: a signature object (numba's or nbcuda's, by its
 * args), a tuple of argument types or a signature string; a KeyError naming the argument
 * types when none was compiled for them. Borrowed (the kernel keeps it). */
static KernelObject *overload_for(nbc__py_state *st, KernelObject *k, PyObject *signature) {
  PyObject *text = nbc__py_signature_text(st, signature);
  if (!text) return NULL;
  const char *utf8 = PyUnicode_AsUTF8(text);
  nbc_signature_t *wanted = NULL;
  nbc_status_t s = utf8 ? nbc_signature_parse(utf8, &wanted) : NBC_OK;
  Py_DECREF(text);
  if (!utf8) return NULL;
  if (s != NBC_OK) {
    nbc__py_raise(st, s);
    return NULL;
  }
  KernelObject *found = NULL;
  PyObject *all = overload_list(k);
  for (Py_ssize_t i = 0; all && !found && i < PyList_GET_SIZE(all); i++) {
    KernelObject *ov = (KernelObject *)PyList_GET_ITEM(all, i);
    if (same_args(ov->sig, wanted)) found = ov;
  }
  Py_XDECREF(all); /* found stays alive: the kernel holds its overloads */
  nbc_signature_destroy(wanted);
  if (!found && !PyErr_Occurred()) {
    PyObject *args = PyObject_HasAttrString(signature, "args")
                         ? PyObject_GetAttrString(signature, "args")
                         : Py_NewRef(signature);
    PyObject *exc_args = args ? PyTuple_Pack(1, args) : NULL; /* KeyError(key), as a dict */
    if (exc_args) PyErr_SetObject(PyExc_KeyError, exc_args);
    Py_XDECREF(exc_args);
    Py_XDECREF(args);
  }
  return found;
}

static PyObject *resource_query(KernelObject *self, PyObject *args, PyObject *kwargs,
                                nbc_function_attr_t attr) {
  static char *kwlist[] = {"signature", NULL};
  PyObject *signature = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O", kwlist, &signature)) return NULL;
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  if (signature != Py_None) {
    KernelObject *ov = overload_for(st, self, signature);
    return ov ? resource_of(st, ov, attr) : NULL;
  }
  if (self->sigtext) return resource_of(st, self, attr);
  PyObject *all = overload_list(self), *d = all ? PyDict_New() : NULL;
  for (Py_ssize_t i = 0; d && i < PyList_GET_SIZE(all); i++) {
    KernelObject *ov = (KernelObject *)PyList_GET_ITEM(all, i);
    PyObject *key = argtypes_of(st, ov);
    PyObject *value = key ? resource_of(st, ov, attr) : NULL;
    if (!value || PyDict_SetItem(d, key, value) < 0) Py_CLEAR(d);
    Py_XDECREF(key);
    Py_XDECREF(value);
  }
  Py_XDECREF(all);
  return d;
}

#define RESOURCE_METHOD(name, attr)                                                            \
  static PyObject *kernel_##name(KernelObject *self, PyObject *args, PyObject *kwargs) {       \
    return resource_query(self, args, kwargs, attr);                                           \
  }
RESOURCE_METHOD(get_regs_per_thread, NBC_FUNCTION_ATTR_NUM_REGS)
RESOURCE_METHOD(get_shared_mem_per_block, NBC_FUNCTION_ATTR_SHARED_SIZE_BYTES)
RESOURCE_METHOD(get_local_mem_per_thread, NBC_FUNCTION_ATTR_LOCAL_SIZE_BYTES)
RESOURCE_METHOD(get_const_mem_size, NBC_FUNCTION_ATTR_CONST_SIZE_BYTES)
RESOURCE_METHOD(get_max_threads_per_block, NBC_FUNCTION_ATTR_MAX_THREADS_PER_BLOCK)
#undef RESOURCE_METHOD

/* numba's _Kernel properties (regs_per_thread, ...) exist on the overloads only: a kernel
 * still to be specialised has none, as numba's dispatcher has none. */
static int require_overload(KernelObject *self, const char *what) {
  if (self->sigtext) return 0;
  PyErr_Format(PyExc_AttributeError,
               "%s belongs to a kernel compiled for one signature; this kernel has %s: use "
               "k.overloads[argtypes].%s or k.get_...(signature)",
               what, self->fixed ? "several" : "one per argument types", what);
  return -1;
}

static PyObject *kernel_resource_property(KernelObject *self, void *attr) {
  static const char *const names[] = {
      [NBC_FUNCTION_ATTR_MAX_THREADS_PER_BLOCK] = "max_threads_per_block",
      [NBC_FUNCTION_ATTR_SHARED_SIZE_BYTES] = "shared_mem_per_block",
      [NBC_FUNCTION_ATTR_CONST_SIZE_BYTES] = "const_mem_size",
      [NBC_FUNCTION_ATTR_LOCAL_SIZE_BYTES] = "local_mem_per_thread",
      [NBC_FUNCTION_ATTR_NUM_REGS] = "regs_per_thread",
  };
  nbc_function_attr_t a = (nbc_function_attr_t)(intptr_t)attr;
  if (require_overload(self, names[a]) < 0) return NULL;
  return resource_of(nbc__py_state_of((PyObject *)self), self, a);
}

/* numba's _Kernel.max_cooperative_grid_blocks(blockdim, dynsmemsize=0): the blocks one SM
 * runs at once times the SMs, for the current context's device; blockdim an int or a tuple
 * (its product). */
static PyObject *kernel_max_cooperative_grid_blocks(KernelObject *self, PyObject *args,
                                                    PyObject *kwargs) {
  static char *kwlist[] = {"blockdim", "dynsmemsize", NULL};
  PyObject *blockdim;
  long long dynsmem = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|L:max_cooperative_grid_blocks", kwlist,
                                   &blockdim, &dynsmem))
    return NULL;
  if (require_overload(self, "max_cooperative_grid_blocks") < 0) return NULL;
  unsigned dims[3];
  if (dims_arg(blockdim, dims, "blockdim") < 0) return NULL;
  unsigned long long threads = (unsigned long long)dims[0] * dims[1] * dims[2];
  if (threads == 0 || threads > INT_MAX || dynsmem < 0) {
    PyErr_Format(PyExc_ValueError,
                 "blockdim %R and dynsmemsize %lld must be positive and "
                 "fit the device",
                 blockdim, dynsmem);
    return NULL;
  }
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  nbc_function_t *fn = kernel_function(st, self);
  if (!fn) return NULL;
  int blocks = 0;
  nbc_status_t s =
      nbc_occupancy_max_cooperative_blocks(fn, (int)threads, (size_t)dynsmem, &blocks);
  if (s != NBC_OK) return nbc__py_raise(st, s);
  return PyLong_FromLong(blocks);
}

/* numba's `overloads`: {argument types: the kernel compiled for them}. */
static PyObject *kernel_overloads(KernelObject *self, void *c) {
  (void)c;
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  PyObject *all = overload_list(self), *d = all ? PyDict_New() : NULL;
  for (Py_ssize_t i = 0; d && i < PyList_GET_SIZE(all); i++) {
    PyObject *ov = PyList_GET_ITEM(all, i);
    PyObject *key = argtypes_of(st, (KernelObject *)ov);
    if (!key || PyDict_SetItem(d, key, ov) < 0) Py_CLEAR(d);
    Py_XDECREF(key);
  }
  Py_XDECREF(all);
  return d;
}

/* numba's nopython_signatures: each overload's signature, void(argument types). */
static PyObject *kernel_nopython_signatures(KernelObject *self, void *c) {
  (void)c;
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  PyObject *all = overload_list(self);
  PyObject *voidtype = all ? nbc__py_type_from_name(st, "void") : NULL;
  PyObject *r = voidtype ? PyList_New(0) : NULL;
  for (Py_ssize_t i = 0; r && i < PyList_GET_SIZE(all); i++) {
    PyObject *args = argtypes_of(st, (KernelObject *)PyList_GET_ITEM(all, i));
    PyObject *sig = args ? PyObject_Call(voidtype, args, NULL) : NULL;
    if (!sig || PyList_Append(r, sig) < 0) Py_CLEAR(r);
    Py_XDECREF(sig);
    Py_XDECREF(args);
  }
  Py_XDECREF(voidtype);
  Py_XDECREF(all);
  return r;
}

/* numba's `stats`: (cache_path, cache_hits, cache_misses), the hits and misses of the disk
 * cache per signature (jit(cache=True); cache_path None and no counts without it). */
static PyObject *kernel_stats(KernelObject *self, void *c) {
  (void)c;
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  PyObject *r = PyStructSequence_New(st->CompileStatsType);
  if (!r) return NULL;
  PyObject *path = self->cache ? nbc__py_cache_path(self->py_func) : Py_NewRef(Py_None);
  PyObject *hits = self->cache_hits ? PyDict_Copy(self->cache_hits) : PyDict_New();
  PyObject *misses = self->cache_misses ? PyDict_Copy(self->cache_misses) : PyDict_New();
  if (!path || !hits || !misses) {
    Py_XDECREF(path);
    Py_XDECREF(hits);
    Py_XDECREF(misses);
    Py_DECREF(r);
    return NULL;
  }
  PyStructSequence_SET_ITEM(r, 0, path);
  PyStructSequence_SET_ITEM(r, 1, hits);
  PyStructSequence_SET_ITEM(r, 2, misses);
  return r;
}

/* numba's `specialized`: jit with one signature (not a list, not lazily compiled). */
static PyObject *kernel_specialized(KernelObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(self->sigtext != NULL);
}

/* A kernel signature as the key specialisations use: "void(<argument types>)" in canonical
 * form; a new reference, or NULL (TypeError for a signature that returns a value). */
static PyObject *kernel_key(nbc__py_state *st, PyObject *sig) {
  PyObject *text;
  nbc_signature_t *csig;
  if (nbc__py_parse_signature(st, sig, &text, &csig) < 0) return NULL;
  const char *ret = nbc_signature_return_type(csig), *canon = nbc_signature_text(csig);
  PyObject *key = NULL;
  if (ret && strcmp(ret, "none") && strcmp(ret, "void"))
    PyErr_Format(PyExc_TypeError, "a kernel returns nothing: %U returns %s", text, ret);
  else if (!ret)
    key = PyUnicode_FromFormat("void%s", canon);
  else
    key = PyUnicode_FromFormat("void%s", strchr(canon, '('));
  nbc_signature_destroy(csig);
  Py_DECREF(text);
  return key;
}

/* The compiled kernel whose signature is key (kernel_key's form): this one, one of a
 * jit([...]) list, or a specialisation made so far; a new reference, or NULL (no error set
 * when there is none). */
static PyObject *overload_of(nbc__py_state *st, KernelObject *self, PyObject *key) {
  if (self->result) { /* one signature, this kernel's */
    PyObject *own = kernel_key(st, self->sigtext);
    int same = own ? PyUnicode_Compare(own, key) == 0 : 0;
    Py_XDECREF(own);
    return same ? Py_NewRef(self) : NULL;
  }
  if (!self->specializations) return NULL;
  if (!self->fixed) return Py_XNewRef(PyDict_GetItemWithError(self->specializations, key));
  Py_ssize_t pos = 0;
  PyObject *text, *ov;
  while (!PyErr_Occurred() && PyDict_Next(self->specializations, &pos, &text, &ov)) {
    PyObject *k = kernel_key(st, text);
    int same = k && PyUnicode_Compare(k, key) == 0;
    Py_XDECREF(k);
    if (same) return Py_NewRef(ov);
  }
  return NULL;
}

/* numba's Dispatcher.compile(sig): the kernel for that signature, compiled now by a kernel
 * jitted without signatures (and kept for its launches); a kernel jitted with signatures has
 * those only (numba's RuntimeError "Compilation disabled" for any other). */
static PyObject *kernel_compile_sig(KernelObject *self, PyObject *sig) {
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  PyObject *key = kernel_key(st, sig);
  if (!key) return NULL;
  PyObject *found = overload_of(st, self, key);
  if (!found && !PyErr_Occurred() && !self->result && !self->fixed) {
    if (!self->specializations && !(self->specializations = PyDict_New())) goto done;
    KernelObject *spec =
        kernel_compile(st, self->py_func, key, &self->opts, self->cache, self, self->links);
    if (spec) spec->max_registers = self->max_registers;
    if (spec && PyDict_SetItem(self->specializations, key, (PyObject *)spec) < 0) Py_CLEAR(spec);
    found = (PyObject *)spec;
  }
  if (!found && !PyErr_Occurred())
    PyErr_SetString(PyExc_RuntimeError, "Compilation disabled");
done:
  Py_DECREF(key);
  return found;
}

/* The text one overload's inspect_*() gives; NULL with the error set. */
typedef PyObject *(*overload_text_fn)(nbc__py_state *st, KernelObject *ov);

/* inspect_asm: the PTX (bytes of LTO-IR for jit(lto=True)). */
static PyObject *asm_text(nbc__py_state *st, KernelObject *ov) {
  (void)st;
  size_t size = 0;
  const char *code = nbc_compile_result_code(ov->result, &size);
  if (ov->opts.output == NBC_OUTPUT_LTOIR) return PyBytes_FromStringAndSize(code, (Py_ssize_t)size);
  return PyUnicode_DecodeUTF8(code, (Py_ssize_t)size, "replace");
}

/* inspect_llvm: the NVVM IR the compiler hands libNVVM for this overload (compiled again,
 * stopping before libNVVM: the IR is not kept with the code). */
static PyObject *llvm_text(nbc__py_state *st, KernelObject *ov) {
  const char *sig = PyUnicode_AsUTF8(ov->sigtext);
  if (!sig) return NULL;
  nbc_compile_options_t opts = ov->opts;
  opts.output = NBC_OUTPUT_NVVM_IR;
  nbc_compile_result_t *result = NULL;
  if (nbc__py_compile_function(st, ov->py_func, sig, &opts, &result) < 0) return NULL;
  size_t size = 0;
  const char *ir = nbc_compile_result_code(result, &size);
  PyObject *text = PyUnicode_DecodeUTF8(ir, (Py_ssize_t)size, "replace");
  nbc_compile_result_destroy(result);
  return text;
}

/* inspect_sass: nvdisasm's listing of the overload's code linked (with its link files) for
 * the current device, as the launch would load it. */
static PyObject *sass_text(nbc__py_state *st, KernelObject *ov) {
  size_t size = 0;
  const char *code = nbc_compile_result_code(ov->result, &size);
  nbc_module_load_options_t load = {.max_registers = ov->max_registers,
                                    .cudadevrt = ov->cooperative,
                                    .fp16 = ov->fp16};
  PyObject *cubin =
      nbc__py_link_cubin(st, code, size, ov->opts.output == NBC_OUTPUT_LTOIR, ov->links, &load);
  PyObject *listing = cubin ? nbc__py_disassemble(st, cubin) : NULL;
  Py_XDECREF(cubin);
  return listing;
}

/* numba's inspect_*(signature=None): fn's text for the overload of that signature (KeyError
 * when there is none), for a kernel compiled for one signature its text, else a dict
 * signature -> text over the overloads compiled so far. */
static PyObject *inspect_overloads(KernelObject *self, PyObject *args, PyObject *kwargs,
                                   const char *format, overload_text_fn fn) {
  static char *kwlist[] = {"signature", NULL};
  PyObject *sig = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, kwlist, &sig)) return NULL;
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  if (sig != Py_None) {
    PyObject *key = kernel_key(st, sig);
    PyObject *found = key ? overload_of(st, self, key) : NULL;
    PyObject *r = NULL;
    if (found && ((KernelObject *)found)->result)
      r = fn(st, (KernelObject *)found);
    else if (key && !PyErr_Occurred())
      PyErr_SetObject(PyExc_KeyError, sig);
    Py_XDECREF(found);
    Py_XDECREF(key);
    return r;
  }
  if (self->result) return fn(st, self);
  PyObject *d = PyDict_New();
  if (!d || !self->specializations) return d;
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(self->specializations, &pos, &key, &value)) {
    PyObject *text = fn(st, (KernelObject *)value);
    if (!text || PyDict_SetItem(d, key, text) < 0) {
      Py_XDECREF(text);
      Py_DECREF(d);
      return NULL;
    }
    Py_DECREF(text);
  }
  return d;
}

static PyObject *kernel_inspect_asm(KernelObject *self, PyObject *args, PyObject *kwargs) {
  return inspect_overloads(self, args, kwargs, "|O:inspect_asm", asm_text);
}
static PyObject *kernel_inspect_llvm(KernelObject *self, PyObject *args, PyObject *kwargs) {
  return inspect_overloads(self, args, kwargs, "|O:inspect_llvm", llvm_text);
}
static PyObject *kernel_inspect_sass(KernelObject *self, PyObject *args, PyObject *kwargs) {
  return inspect_overloads(self, args, kwargs, "|O:inspect_sass", sass_text);
}

/* numba's Dispatcher.configure(griddim, blockdim, stream=0, sharedmem=0): k[...]. */
static PyObject *kernel_configure(KernelObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"griddim", "blockdim", "stream", "sharedmem", NULL};
  PyObject *grid, *block, *stream = NULL, *shared = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|OO:configure", kwlist, &grid, &block,
                                   &stream, &shared))
    return NULL;
  PyObject *zero = PyLong_FromLong(0);
  PyObject *key = !zero    ? NULL
                  : shared ? PyTuple_Pack(4, grid, block, stream ? stream : zero, shared)
                  : stream ? PyTuple_Pack(3, grid, block, stream)
                           : PyTuple_Pack(2, grid, block);
  PyObject *r = key ? kernel_getitem(self, key) : NULL;
  Py_XDECREF(key);
  Py_XDECREF(zero);
  return r;
}

#define KW_METHOD(name, doc)                                                               \
  {#name, (PyCFunction)(void (*)(void))kernel_##name, METH_VARARGS | METH_KEYWORDS, doc}

static PyMethodDef kernel_methods[] = {
    {"compile", (PyCFunction)kernel_compile_sig, METH_O,
     "compile(signature): the kernel compiled for it (jit without signatures keeps it for its "
     "launches; jit with signatures has only those: RuntimeError otherwise)."},
    KW_METHOD(configure, "configure(griddim, blockdim, stream=0, sharedmem=0): k[griddim, "
              "blockdim, stream, sharedmem]."),
    KW_METHOD(inspect_asm, "inspect_asm(signature=None): the PTX of that overload, or of the "
              "kernel (a dict signature -> PTX for kernels jitted without one or with "
              "several)."),
    KW_METHOD(inspect_llvm, "inspect_llvm(signature=None): the NVVM IR handed to libNVVM, as "
              "inspect_asm gives PTX."),
    KW_METHOD(inspect_sass, "inspect_sass(signature=None): nvdisasm's listing of the code "
              "linked for the current device, as inspect_asm gives PTX."),
    KW_METHOD(get_regs_per_thread, "get_regs_per_thread(signature=None): registers per thread "
              "of that overload (a dict over the overloads when none and not specialized)."),
    KW_METHOD(get_shared_mem_per_block, "get_shared_mem_per_block(signature=None): static "
              "shared memory bytes per block."),
    KW_METHOD(get_local_mem_per_thread, "get_local_mem_per_thread(signature=None): local "
              "memory bytes per thread."),
    KW_METHOD(get_const_mem_size, "get_const_mem_size(signature=None): constant memory bytes."),
    KW_METHOD(get_max_threads_per_block, "get_max_threads_per_block(signature=None): the "
              "largest block the kernel can be launched with."),
    KW_METHOD(forall, "forall(ntasks, tpb=0, stream=0, sharedmem=0): a launcher of ntasks "
              "threads in blocks of tpb (0: the largest block the kernel can have)."),
    {"specialize", (PyCFunction)(void (*)(void))kernel_specialize, METH_FASTCALL,
     "specialize(*args): the kernel compiled for these arguments' types."},
    KW_METHOD(max_cooperative_grid_blocks, "max_cooperative_grid_blocks(blockdim, "
              "dynsmemsize=0): the largest cooperative grid on the current device."),
    {NULL, NULL, 0, NULL},
};
#undef KW_METHOD

static PyGetSetDef kernel_getset[] = {
    {"py_func", (getter)kernel_py_func, NULL, "the Python function", NULL},
    {"signatures", (getter)kernel_signatures, NULL, "the compiled signatures", NULL},
    {"symbol", (getter)kernel_symbol, NULL, "the kernel entry's name in the PTX", NULL},
    {"overloads", (getter)kernel_overloads, NULL, "{argument types: compiled kernel}", NULL},
    {"nopython_signatures", (getter)kernel_nopython_signatures, NULL,
     "the overloads' signatures, void(argument types)", NULL},
    {"func_code", (getter)kernel_forward, NULL, "the Python function's code object",
     "__code__"},
    {"specialized", (getter)kernel_specialized, NULL, "compiled for one signature", NULL},
    {"stats", (getter)kernel_stats, NULL, "(cache_path, cache_hits, cache_misses)", NULL},
    {"regs_per_thread", (getter)kernel_resource_property, NULL, "registers per thread",
     (void *)(intptr_t)NBC_FUNCTION_ATTR_NUM_REGS},
    {"shared_mem_per_block", (getter)kernel_resource_property, NULL,
     "static shared memory bytes per block", (void *)(intptr_t)NBC_FUNCTION_ATTR_SHARED_SIZE_BYTES},
    {"local_mem_per_thread", (getter)kernel_resource_property, NULL,
     "local memory bytes per thread", (void *)(intptr_t)NBC_FUNCTION_ATTR_LOCAL_SIZE_BYTES},
    {"const_mem_size", (getter)kernel_resource_property, NULL, "constant memory bytes",
     (void *)(intptr_t)NBC_FUNCTION_ATTR_CONST_SIZE_BYTES},
    {"max_threads_per_block", (getter)kernel_resource_property, NULL,
     "the largest block it can be launched with",
     (void *)(intptr_t)NBC_FUNCTION_ATTR_MAX_THREADS_PER_BLOCK},
    {"__name__", (getter)kernel_forward, NULL, NULL, "__name__"},
    {"__qualname__", (getter)kernel_forward, NULL, NULL, "__qualname__"},
    {"__doc__", (getter)kernel_forward, NULL, NULL, "__doc__"},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyObject *kernel_repr(KernelObject *self) {
  return PyUnicode_FromFormat("<nbcuda kernel %R%s%S>", self->py_func,
                              self->sigtext ? " " : "", self->sigtext ? self->sigtext : Py_None);
}

static PyType_Slot kernel_slots[] = {
    {Py_tp_dealloc, kernel_dealloc},
    {Py_tp_traverse, kernel_traverse},
    {Py_tp_clear, kernel_clear},
    {Py_tp_repr, kernel_repr},
    {Py_mp_subscript, kernel_getitem},
    {Py_tp_call, kernel_call},
    {Py_tp_methods, kernel_methods},
    {Py_tp_getset, kernel_getset},
    {Py_tp_doc, (void *)"A CUDA kernel: launch it with kernel[griddim, blockdim](args)."},
    {0, NULL},
};

static PyType_Spec kernel_spec = {
    .name = "nbcuda.Kernel",
    .basicsize = sizeof(KernelObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION |
             Py_TPFLAGS_IMMUTABLETYPE,
    .slots = kernel_slots,
};

/* ------------------------------------------------------------ Launcher ---------------- */

static int launcher_traverse(LauncherObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->kernel);
  Py_VISIT(self->stream);
  Py_VISIT(self->callbacks);
  return 0;
}

static int launcher_clear(LauncherObject *self) {
  Py_CLEAR(self->kernel);
  Py_CLEAR(self->stream);
  Py_CLEAR(self->callbacks);
  return 0;
}

static void launcher_dealloc(LauncherObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  launcher_clear(self);
  tp->tp_free(self);
  Py_DECREF(tp);
}

static PyMemberDef launcher_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(LauncherObject, vectorcall), READONLY, NULL},
    {"sharedmem", T_UINT, offsetof(LauncherObject, shared), READONLY,
     "dynamic shared memory bytes per block"},
    {NULL, 0, 0, 0, NULL},
};

/* griddim / blockdim: the configuration's dimensions as numba normalises them, (x, y, z).
 * A forall launcher's grid depends on the kernel's largest block: None until launched. */
static PyObject *launcher_griddim(LauncherObject *self, void *c) {
  (void)c;
  if (self->ntasks >= 0) Py_RETURN_NONE;
  return Py_BuildValue("(III)", self->grid[0], self->grid[1], self->grid[2]);
}
static PyObject *launcher_blockdim(LauncherObject *self, void *c) {
  (void)c;
  if (self->ntasks >= 0 && self->block[0] == 0) Py_RETURN_NONE;
  return Py_BuildValue("(III)", self->block[0], self->block[1], self->block[2]);
}
/* stream: the stream object given, else the default stream (numba's Stream for 0). */
static PyObject *launcher_stream(LauncherObject *self, void *c) {
  (void)c;
  if (self->stream && self->stream != Py_None &&
      !(PyLong_CheckExact(self->stream) && PyLong_AsLong(self->stream) == 0))
    return Py_NewRef(self->stream);
  return nbc__py_default_stream(nbc__py_state_of((PyObject *)self));
}
static PyObject *launcher_dispatcher(LauncherObject *self, void *c) {
  (void)c;
  return Py_NewRef((PyObject *)self->kernel);
}
/* pre_launch_callbacks: a list of its own; reading it takes the launcher out of the
 * kernel's reuse (k[g, b] then makes a new one, as every numba configuration is new). */
static PyObject *launcher_callbacks(LauncherObject *self, void *c) {
  (void)c;
  if (!self->callbacks) {
    self->callbacks = PyList_New(0);
    if (!self->callbacks) return NULL;
  }
  KernelObject *k = self->kernel;
  if (k->last_launcher == (PyObject *)self) {
    Py_CLEAR(k->last_config);
    Py_CLEAR(k->last_launcher);
  }
  return Py_NewRef(self->callbacks);
}

static PyGetSetDef launcher_getset[] = {
    {"griddim", (getter)launcher_griddim, NULL, "(x, y, z) blocks", NULL},
    {"blockdim", (getter)launcher_blockdim, NULL, "(x, y, z) threads per block", NULL},
    {"stream", (getter)launcher_stream, NULL, "the stream launches go to", NULL},
    {"dispatcher", (getter)launcher_dispatcher, NULL, "the kernel", NULL},
    {"pre_launch_callbacks", (getter)launcher_callbacks, NULL,
     "callables called as cb(kernel, launcher) before each launch", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot launcher_slots[] = {
    {Py_tp_dealloc, launcher_dealloc},
    {Py_tp_traverse, launcher_traverse},
    {Py_tp_clear, launcher_clear},
    {Py_tp_getset, launcher_getset},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_members, launcher_members},
    {0, NULL},
};

static PyType_Spec launcher_spec = {
    .name = "nbcuda._KernelLauncher",
    .basicsize = sizeof(LauncherObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION |
             Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_VECTORCALL,
    .slots = launcher_slots,
};

/* ------------------------------------------------------------ jit() ------------------- */

/* What jit(...) was given, kept in the decorator's self tuple:
 * (sig or None, device, debug, lineinfo, fastmath, opt, launch_bounds, forceinline,
 * max_registers as an int, 0 for none, cache); a device function marked forceinline is
 * emitted alwaysinline in every kernel that calls it. */
static PyObject *apply_jit(PyObject *module, PyObject *config, PyObject *func) {
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
    PyObject_GC_Track(d);
    return (PyObject *)d;
  }
  unsigned max_registers = (unsigned)PyLong_AsUnsignedLong(PyTuple_GET_ITEM(config, 8));
  int cache = PyObject_IsTrue(PyTuple_GET_ITEM(config, 9));
  PyObject *links = PyTuple_GET_SIZE(PyTuple_GET_ITEM(config, 10)) ? PyTuple_GET_ITEM(config, 10)
                                                                    : NULL;
  if (cache && nbc__py_cache_check(func) < 0) return NULL;
  if (sig == Py_None) {
    KernelObject *k = kernel_alloc(st, func, &o);
    if (k) k->max_registers = max_registers;
    if (k) k->cache = cache;
    if (k) k->links = Py_XNewRef(links);
    return (PyObject *)k;
  }
  if (PyList_Check(sig)) { /* several signatures: each compiled now, chosen per launch */
    KernelObject *k = kernel_alloc(st, func, &o);
    if (!k) return NULL;
    k->max_registers = max_registers;
    k->cache = cache;
    k->links = Py_XNewRef(links);
    k->fixed = 1;
    if (!(k->specializations = PyDict_New())) goto fail;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(sig); i++) {
      PyObject *text = nbc__py_signature_text(st, PyList_GET_ITEM(sig, i));
      KernelObject *ov = text ? kernel_compile(st, func, text, &o, cache, k, links) : NULL;
      if (ov) ov->max_registers = max_registers;
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
  PyObject *text = nbc__py_signature_text(st, sig);
  if (!text) return NULL;
  KernelObject *k = kernel_compile(st, func, text, &o, cache, NULL, links);
  Py_DECREF(text);
  if (k) k->max_registers = max_registers;
  return (PyObject *)k;
}

static PyObject *py_jit_apply(PyObject *self, PyObject *func) {
  /* self is (module, config) */
  return apply_jit(PyTuple_GET_ITEM(self, 0), PyTuple_GET_ITEM(self, 1), func);
}

static PyMethodDef jit_apply_def = {"jit_decorator", py_jit_apply, METH_O,
                                    "Applies jit's options to a function."};

static PyObject *py_jit(PyObject *module, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"func_or_sig", "device", "debug", "lineinfo", "fastmath", "opt",
                           "inline", "link", "cache", "max_registers", "launch_bounds",
                           "forceinline", NULL};
  PyObject *target = Py_None, *device = Py_False, *debug = Py_False, *lineinfo = Py_False;
  PyObject *fastmath = Py_False, *opt = Py_None, *inl = Py_None, *link = Py_None;
  PyObject *cache = Py_False, *maxreg = Py_None, *bounds = Py_None, *forceinline = Py_False;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OOOOOOOOOOOO:jit", kwlist, &target,
                                   &device, &debug, &lineinfo, &fastmath, &opt, &inl, &link,
                                   &cache, &maxreg, &bounds, &forceinline))
    return NULL;
  /* Checked now, as numba does when the decorator is made. */
  nbc_compile_options_t check;
  if (nbc__py_launch_bounds(bounds, &check) < 0) return NULL;
  int is_func = PyFunction_Check(target);
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
  PyObject *config =
      Py_BuildValue("(OOOOOOOOkON)", sig, device, debug, lineinfo, fastmath, opt, bounds,
                    always ? Py_True : forceinline, max_registers, cached ? Py_True : Py_False,
                    links);
  if (!config) return NULL;
  if (is_func) {
    PyObject *r = apply_jit(module, config, target);
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
     "jit(func_or_sig=None, device=False, debug=False, lineinfo=False, fastmath=False, "
     "opt=True, launch_bounds=None, max_registers=None, cache=False): a kernel (compiled now "
     "when a signature is given, else per argument "
     "types on first launch) or, with device=True, a device function."},
    {NULL, NULL, 0, NULL},
};

static PyStructSequence_Field stats_fields[] = {
    {"cache_path", "where jit(cache=True) keeps the compiled code (None: not cached)"},
    {"cache_hits", "{signature: compilations taken from the cache}"},
    {"cache_misses", "{signature: compilations made and stored}"},
    {NULL, NULL},
};

static PyStructSequence_Desc stats_desc = {"nbcuda.CompileStats",
                                           "A kernel's compile statistics (numba's stats).",
                                           stats_fields, 3};

int nbc__py_kernel_init(PyObject *module, nbc__py_state *st) {
  st->CompileStatsType = PyStructSequence_NewType(&stats_desc);
  if (!st->CompileStatsType) return -1;
  st->KernelType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &kernel_spec, NULL);
  st->LauncherType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &launcher_spec, NULL);
  st->DeviceFunctionType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &devfn_spec, NULL);
  if (!st->KernelType || !st->LauncherType || !st->DeviceFunctionType) return -1;
  return PyModule_AddFunctions(module, kernel_functions);
}
