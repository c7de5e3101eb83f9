/* kernel.c — the Kernel object jit() returns for a kernel (`k = jit("void(float32[:])")(f)`,
 * launched as `k[grid, block](args)` or `k[grid, block, stream, shared_bytes](args)`):
 * numba's dispatcher, its compilation, specialisation and inspection. The launcher k[...]
 * returns and the launch itself are in launch.c; jit() and device functions in jit.c; the
 * objects' structs in kernel.h.
 *
 * jit(sig) compiles the kernel at once with the Numba ABI (as numba does for explicit
 * signatures); jit([sig, ...]) compiles each and picks per launch the overload the
 * arguments match best; jit without a signature compiles one specialisation per distinct
 * argument-type signature on first launch, typing arguments the way numba's typeof does
 * (arrays: dtype, ndim and layout C/F/A; Python int -> int64, uint64 from 2**63 to
 * 2**64 - 1 and numba's ValueError beyond, float -> float64, bool, complex -> complex128;
 * numpy scalars by dtype). With jit(cache=True) compilations go
 * through the disk cache (cache.c).
 *
 * k[...] returns the launcher of the last configuration when this one is the same, so
 * `k[g, b](args)` in a loop makes no launcher object. k.forall(ntasks, tpb=0, stream=0,
 * sharedmem=0) is numba's ForAll, a launcher whose grid covers ntasks threads (launch.c);
 * k.specialize(*args) is the kernel compiled for those arguments' types.
 *
 * Inspection, as numba's dispatcher: `specialized`, `overloads` ({argument types: kernel}),
 * get_regs_per_thread/get_shared_mem_per_block/get_local_mem_per_thread/get_const_mem_size/
 * get_max_threads_per_block(signature=None), and on a kernel compiled for one signature
 * numba's _Kernel properties (regs_per_thread, ...) and max_cooperative_grid_blocks; the code
 * is loaded in the current context as for a launch and asked with nbc_function_attribute.
 */
#include "devicearray.h"
#include "kernel.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ Kernel ------------------ */

static int kernel_traverse(KernelObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->py_func);
  Py_VISIT(self->defaults);
  Py_VISIT(self->specializations);
  Py_VISIT(self->dispatch);
  Py_VISIT(self->last_config);
  Py_VISIT(self->last_launcher);
  Py_VISIT(self->links);
  Py_VISIT(self->referenced);
  Py_VISIT(self->raises);
  Py_VISIT(self->jit_config);
  Py_VISIT(self->extensions);
  Py_VISIT(self->last_overload);
  return 0;
}

/* The cached launcher refers back to its kernel: the garbage collector breaks that cycle here
 * (the kernel stays usable: the next k[...] makes a launcher again). */
static int kernel_clear(KernelObject *self) {
  Py_CLEAR(self->last_config);
  Py_CLEAR(self->last_launcher);
  return 0;
}

/* Frees compiled code: loaded, the kernel layer's kernel made at its first load, with its
 * modules and its result (result itself); or result, never loaded. */
static void drop_code(nbc_compile_result_t *result, nbc_kernel_t *loaded) {
  if (loaded)
    nbc_kernel_destroy(loaded);
  else
    nbc_compile_result_destroy(result);
}

static void kernel_dealloc(KernelObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  drop_code(self->result, self->loaded);
  nbc_signature_destroy(self->sig);
  Py_CLEAR(self->py_func);
  Py_CLEAR(self->defaults);
  Py_CLEAR(self->sigtext);
  Py_CLEAR(self->specializations);
  Py_CLEAR(self->dispatch);
  Py_CLEAR(self->cache_hits);
  Py_CLEAR(self->cache_misses);
  Py_CLEAR(self->links);
  Py_CLEAR(self->referenced);
  Py_CLEAR(self->raises);
  Py_CLEAR(self->jit_config);
  Py_CLEAR(self->extensions);
  Py_CLEAR(self->last_overload);
  kernel_clear(self);
  tp->tp_free(self);
  Py_DECREF(tp);
}

/* Whether numba's printed return type is void ("none"; the C parser may say "void"). */
KernelObject *nbc__py_kernel_alloc(nbc__py_state *st, PyObject *py_func,
                                   const nbc_compile_options_t *opts) {
  KernelObject *k = PyObject_GC_New(KernelObject, st->KernelType);
  if (!k) return NULL;
  k->py_func = Py_NewRef(py_func);
  k->nparams = -1;
  k->defaults = NULL;
  if (PyFunction_Check(py_func)) {
    PyObject *d = PyFunction_GetDefaults(py_func); /* borrowed */
    k->nparams = ((PyCodeObject *)PyFunction_GetCode(py_func))->co_argcount;
    if (d && PyTuple_Check(d) && PyTuple_GET_SIZE(d)) k->defaults = Py_NewRef(d);
  }
  k->sigtext = NULL;
  k->specializations = NULL;
  k->fixed = 0;
  k->overload = 0;
  k->dispatch = NULL;
  k->opts = *opts;
  k->max_registers = 0;
  k->jit_config = NULL;
  k->extensions = NULL;
  k->carveout = NBC__PY_NO_CARVEOUT;
  k->forceinline = 0;
  k->cooperative = 0;
  k->fp16 = 0;
  k->sig = NULL;
  k->result = NULL;
  k->loaded = NULL;
  k->last_config = NULL;
  k->last_launcher = NULL;
  k->cache = 0;
  k->cache_hits = k->cache_misses = NULL;
  k->links = NULL;
  k->raises = NULL;
  k->referenced = NULL;
  k->nlast_codes = 0;
  k->last_overload = NULL;
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

/* Compiles py_func for sig into k, with k->links = jit_links plus the files of the declared
 * functions it calls. */
static int compile_linked(nbc__py_state *st, KernelObject *k, PyObject *py_func, const char *sig,
                          PyObject *jit_links) {
  nbc__py_compiled extras;
  int rc = nbc__py_compile_function_extras(st, py_func, sig, &k->opts, &k->result, &extras);
  PyObject *declared = extras.links;
  if (rc == 0) {
    k->cooperative = extras.cooperative || nbc_compile_result_cooperative(k->result);
    k->fp16 = nbc_compile_result_uses_fp16(k->result);
    Py_XSETREF(k->raises, Py_XNewRef(extras.raises));
    Py_XSETREF(k->referenced, PyList_GET_SIZE(extras.referenced) ? Py_NewRef(extras.referenced)
                                                                 : NULL);
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
  nbc__py_compiled_clear(&extras);
  return rc;
}

/* Stores k's freshly compiled code in the cache slot, unless it calls declared functions (a
 * hit would not know their files) or holds device arrays' addresses, which another process
 * does not have, or its closure does not pickle (no key): then a NumbaWarning says so, as
 * numba warns of a function it cannot cache (numba-cuda raises PicklingError for the device
 * arrays; nbcuda runs the code, uncached). -1 when the warning is an error. */
static int cache_store_keepable(nbc__py_state *st, const KernelObject *k, PyObject *jit_links,
                                const nbc__py_cache_slot *slot) {
  int declared = k->links && (!jit_links || PyTuple_GET_SIZE(k->links) >
                                                PyTuple_GET_SIZE(jit_links));
  const char *why = slot->uncacheable          ? slot->uncacheable
                    : k->referenced            ? "as it uses dynamic globals (device arrays)"
                    : declared                 ? "as it calls declared device functions"
                                               : NULL;
  if (!why) {
    nbc__py_cache_store(slot, k->result);
    return 0;
  }
  PyObject *qual = PyObject_GetAttrString(k->py_func, "__qualname__");
  const char *name = qual && PyUnicode_Check(qual) ? PyUnicode_AsUTF8(qual) : NULL;
  char msg[512];
  snprintf(msg, sizeof msg, "Cannot cache compiled function \"%s\" %s", name ? name : "?",
           why);
  Py_XDECREF(qual);
  PyErr_Clear();
  return nbc__py_warn(st, "NumbaWarning", msg);
}

/* The compiled code of py_func for sig: from the disk cache when jit(cache=True) and it holds
 * a current copy, else compiled (and then stored there); stats counted on owner. */
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
    if (rc == 0) rc = cache_store_keepable(st, k, jit_links, &slot);
  }
  nbc__py_cache_slot_free(&slot);
  if (rc == 0) rc = count_up(hit ? &owner->cache_hits : &owner->cache_misses, sigtext);
  return rc;
}

/* numba's recompile() of one compiled kernel k (an eager kernel, or a dispatcher's overload;
 * owner: the one jitted, whose cache flag counts): compiled afresh from its source, globals
 * read again, and written over its disk cache entry; the modules loaded from the old code are
 * unloaded, so the next launch loads the new. On failure k keeps its old code. */
static int recompile_one(nbc__py_state *st, KernelObject *k, KernelObject *owner,
                         PyObject *jit_links) {
  const char *sig = PyUnicode_AsUTF8(k->sigtext);
  if (!sig) return -1;
  nbc_compile_result_t *old = k->result;
  nbc_kernel_t *old_loaded = k->loaded;
  PyObject *old_links = k->links;
  k->result = NULL;
  k->loaded = NULL;
  k->links = NULL;
  if (compile_linked(st, k, k->py_func, sig, jit_links) < 0) {
    nbc_compile_result_destroy(k->result);
    k->result = old;
    k->loaded = old_loaded;
    Py_XSETREF(k->links, old_links);
    return -1;
  }
  if (!k->links) k->links = Py_XNewRef(jit_links);
  Py_XDECREF(old_links);
  drop_code(old, old_loaded); /* the modules of the old code are unloaded */
  if (owner->cache && !k->opts.debug) {
    nbc__py_cache_slot slot; /* written over, not read */
    nbc__py_cache_slot_make(st, k->py_func, sig, &k->opts, &slot);
    int rc = cache_store_keepable(st, k, jit_links, &slot);
    nbc__py_cache_slot_free(&slot);
    return rc;
  }
  return 0;
}

/* jit(link=[...])'s files of the kernel jitted (a tuple, or NULL for none). */
static PyObject *jit_links_of(const KernelObject *k) {
  PyObject *links = k->jit_config ? PyTuple_GET_ITEM(k->jit_config, 10) : k->links;
  return links && PyTuple_GET_SIZE(links) ? links : NULL;
}

/* numba's Dispatcher.recompile(): every signature compiled so far compiled afresh (a global
 * changed since is read again), the disk cache rewritten. */
static PyObject *kernel_recompile(KernelObject *self, PyObject *unused) {
  (void)unused;
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  PyObject *jit_links = jit_links_of(self);
  if (self->sigtext) {
    if (recompile_one(st, self, self, jit_links) < 0) return NULL;
    Py_RETURN_NONE;
  }
  PyObject *overloads = self->specializations ? PyDict_Values(self->specializations) : NULL;
  if (self->specializations && !overloads) return NULL;
  for (Py_ssize_t i = 0; overloads && i < PyList_GET_SIZE(overloads); i++)
    if (recompile_one(st, (KernelObject *)PyList_GET_ITEM(overloads, i), self, jit_links) < 0) {
      Py_DECREF(overloads);
      return NULL;
    }
  Py_XDECREF(overloads);
  Py_RETURN_NONE;
}

/* numba's Dispatcher.disable_compile(val=True): a kernel jitted without signatures stops
 * compiling new ones (its launches then choose among those compiled, converting arguments as
 * jit([sigs]) does: numba's jit([sigs]) is this call after compiling them), or starts again
 * (val false). Disabling needs one signature compiled (numba's assertion). A kernel jitted
 * with one signature never compiles another: enabling it is refused. */
static PyObject *kernel_disable_compile(KernelObject *self, PyObject *const *args,
                                        Py_ssize_t nargs) {
  if (nargs > 1) {
    PyErr_Format(PyExc_TypeError, "disable_compile() takes at most 1 argument (%zd given)",
                 nargs);
    return NULL;
  }
  int disable = nargs ? PyObject_IsTrue(args[0]) : 1;
  if (disable < 0) return NULL;
  if (self->sigtext) {
    if (disable) Py_RETURN_NONE;
    PyErr_SetString(PyExc_NotImplementedError, "a kernel jitted with one signature compiles "
                    "no other: jit it without a signature to compile per argument types");
    return NULL;
  }
  if (disable && (!self->specializations || !PyDict_GET_SIZE(self->specializations))) {
    PyErr_SetString(PyExc_AssertionError, "disable_compile() needs a signature compiled");
    return NULL;
  }
  self->fixed = disable;
  Py_CLEAR(self->dispatch); /* the choices made in the other mode */
  Py_CLEAR(self->last_overload);
  self->nlast_codes = 0;
  Py_RETURN_NONE;
}

/* numba's _can_compile: whether a launch with new argument types compiles a specialisation. */
static PyObject *kernel_can_compile(KernelObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(!self->sigtext && !self->fixed);
}

static PyObject *signature_argtypes(nbc__py_state *st, const nbc_signature_t *sig);

/* numba's Dispatcher.typeof_pyval(val): the type a launch gives the argument val (the type
 * object, as k.signatures holds them). */
static PyObject *kernel_typeof_pyval(KernelObject *self, PyObject *val) {
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  PyObject *text = nbc__py_kernel_typeof_signature(st, &val, 1);
  if (!text) return NULL;
  nbc_signature_t *sig = NULL;
  nbc_status_t s = nbc_signature_parse(PyUnicode_AsUTF8(text), &sig);
  Py_DECREF(text);
  if (s != NBC_OK) return nbc__py_raise(st, s);
  PyObject *types = signature_argtypes(st, sig);
  nbc_signature_destroy(sig);
  PyObject *t = types ? Py_NewRef(PyTuple_GET_ITEM(types, 0)) : NULL;
  Py_XDECREF(types);
  return t;
}

/* Compiles py_func for sigtext as a kernel (Numba ABI) and parses the parameter layout;
 * through the disk cache when owner (the dispatcher that counts the stats and whose load
 * options the overload takes; NULL: the new kernel itself) was jitted with cache=True. */
KernelObject *nbc__py_kernel_compile(nbc__py_state *st, PyObject *py_func, PyObject *sigtext,
                                     const nbc_compile_options_t *opts, int cache,
                                     KernelObject *owner, PyObject *links) {
  KernelObject *k = nbc__py_kernel_alloc(st, py_func, opts);
  if (!k) return NULL;
  k->cache = cache;
  if (owner) { /* the dispatcher's load options */
    k->overload = 1;
    k->max_registers = owner->max_registers;
    k->carveout = owner->carveout;
  }
  k->sigtext = Py_NewRef(sigtext);
  const char *sig = PyUnicode_AsUTF8(sigtext);
  if (!sig) goto fail;
  nbc_status_t s = nbc_signature_parse_args(sig, NULL, 0, 1, &k->sig); /* kernel limits */
  if (s != NBC_OK) {
    nbc__py_raise(st, s);
    goto fail;
  }
  k->nviews = nbc__py_launch_views(k->sig);
  s = nbc_kernel_check_return_type(nbc_signature_return_type(k->sig));
  if (s == NBC_OK) {
    if (compile_cached(st, k, owner ? owner : k, py_func, sigtext, sig, links) < 0) goto fail;
    s = nbc_kernel_check_return_type(nbc_compile_result_return_type(k->result));
  }
  if (s != NBC_OK) {
    nbc__py_raise(st, s);
    goto fail;
  }
  return k;
fail:
  Py_DECREF(k);
  return NULL;
}

/* Whether obj is a numpy.void (a record scalar); numpy is imported by then. */
int nbc__py_is_numpy_void(nbc__py_state *st, PyObject *obj) {
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


static PyObject *signature_argtypes(nbc__py_state *st, const nbc_signature_t *sig);

/* numba's TypeError for arguments two overloads match equally well: "Ambiguous overloading
 * for <function> (argument types):\n(first) -> none\n(second) -> none". */
static void ambiguous(nbc__py_state *st, KernelObject *k, const nbc_signature_t *actual,
                      const nbc_signature_t *first, const nbc_signature_t *second) {
  PyObject *a = signature_argtypes(st, actual), *f = signature_argtypes(st, first);
  PyObject *g = signature_argtypes(st, second);
  PyObject *ra = a ? PyObject_Repr(a) : NULL, *rf = f ? PyObject_Repr(f) : NULL;
  PyObject *rg = g ? PyObject_Repr(g) : NULL;
  if (ra && rf && rg) /* a tuple of one prints "(t,)"; numba's signatures print "(t)" too */
    PyErr_Format(PyExc_TypeError, "Ambiguous overloading for %R %U:\n%U -> none\n%U -> none",
                 k->py_func, ra, rf, rg);
  Py_XDECREF(a);
  Py_XDECREF(f);
  Py_XDECREF(g);
  Py_XDECREF(ra);
  Py_XDECREF(rf);
  Py_XDECREF(rg);
}

/* jit([sig, ...]): the overload the arguments match best, or a TypeError like numba's: "No
 * matching definition for argument type(s) ..." when none does, "Ambiguous overloading ..."
 * when two match equally well. */
static KernelObject *select_overload(nbc__py_state *st, KernelObject *k, PyObject *const *args,
                                     Py_ssize_t n) {
  PyObject *text = nbc__py_kernel_typeof_signature(st, args, n);
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
  /* The overloads in the order jit() was given them. */
  KernelObject *best = NULL;
  PyObject *overloads = k->specializations ? PyDict_Values(k->specializations) : PyList_New(0);
  Py_ssize_t count = overloads ? PyList_GET_SIZE(overloads) : 0;
  const nbc_signature_t **sigs = PyMem_Malloc(sizeof *sigs * (size_t)(count ? count : 1));
  if (overloads && sigs) {
    for (Py_ssize_t i = 0; i < count; i++)
      sigs[i] = ((KernelObject *)PyList_GET_ITEM(overloads, i))->sig;
    int second = -1, chosen = nbc_signature_best_matches(actual, sigs, (int)count, &second);
    if (chosen >= 0 && second >= 0)
      ambiguous(st, k, actual, sigs[chosen], sigs[second]);
    else if (chosen >= 0)
      best = (KernelObject *)PyList_GET_ITEM(overloads, chosen);
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

/* Whether sig, typed from a launch's arguments, is one kernels can take; else the C API's
 * TypingError naming the parameter each was passed for (the code's argument names). */
static int check_argument_types(nbc__py_state *st, PyObject *py_func, PyObject *sig) {
  PyObject *code = PyObject_GetAttrString(py_func, "__code__");
  PyObject *names = code ? PyObject_GetAttrString(code, "co_varnames") : NULL;
  PyObject *argcount = code ? PyObject_GetAttrString(code, "co_argcount") : NULL;
  Py_XDECREF(code);
  Py_ssize_t n = argcount ? PyLong_AsSsize_t(argcount) : -1;
  Py_XDECREF(argcount);
  if (!names || !PyTuple_Check(names) || n < 0 || n > PyTuple_GET_SIZE(names)) {
    Py_XDECREF(names);
    PyErr_Clear(); /* no code object: the compile says what is wrong */
    return 0;
  }
  const char **texts = PyMem_Malloc(sizeof *texts * (size_t)(n ? n : 1));
  int rc = texts ? 0 : (PyErr_NoMemory(), -1);
  for (Py_ssize_t i = 0; rc == 0 && i < n; i++)
    if (!(texts[i] = PyUnicode_AsUTF8(PyTuple_GET_ITEM(names, i)))) rc = -1;
  const char *text = rc == 0 ? PyUnicode_AsUTF8(sig) : NULL;
  nbc_signature_t *parsed = NULL;
  nbc_status_t s = text ? nbc_signature_parse_args(text, texts, (int)n, 1, &parsed) : NBC_OK;
  if (!text) rc = -1;
  else if (s != NBC_OK) rc = (nbc__py_raise(st, s), -1);
  nbc_signature_destroy(parsed);
  PyMem_Free(texts);
  Py_DECREF(names);
  return rc;
}

/* The specialisation of a lazy kernel for these arguments (compiled on first use). */
static KernelObject *lazy_specialization(nbc__py_state *st, KernelObject *k,
                                         PyObject *const *args, Py_ssize_t n) {
  PyObject *sig = nbc__py_kernel_typeof_signature(st, args, n);
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
  KernelObject *spec = PyErr_Occurred() || check_argument_types(st, k->py_func, sig) < 0
                           ? NULL
                           : nbc__py_kernel_compile(st, k->py_func, sig, &k->opts, k->cache, k,
                                                    k->links);
  int rc = spec ? PyDict_SetItem(k->specializations, sig, (PyObject *)spec) : -1;
  Py_DECREF(sig);
  Py_XDECREF(spec);
  return rc == 0 ? spec : NULL;
}

/* The code of an array's numba type (fast_type_code): element kind and size (for dates their
 * unit: datetime, nbc__py_datetime_name's answer), ndim, layout; 0 for records and elements
 * numba has no type for. */
static uint64_t array_type_code(char kind, int itemsize, int ndim, const int64_t *shape,
                                const int64_t *strides, const char *datetime) {
  int unit = kind == 'M' || kind == 'm' ? nbc__py_datetime_code(datetime) : 0;
  if (kind == 'V' || (!unit && !nbc__py_scalar_name(kind, itemsize))) return 0;
  char layout = nbc__py_layout(ndim, itemsize, shape, strides);
  return 1 | (uint64_t)(unsigned char)kind << 8 | (uint64_t)(uint16_t)itemsize << 16 |
         (uint64_t)(uint8_t)ndim << 32 | (uint64_t)(unsigned char)layout << 40 |
         (uint64_t)unit << 48;
}

/* The code of a numpy scalar's numba type (fast_type_code), by its type: numpy's scalar types
 * are typed by their type alone (numpy.float32 is float32), so the first of each is typed in
 * full and its answer kept; other numpy types (arrays, records, dates) keep 0. */
static uint64_t numpy_scalar_code(nbc__py_state *st, PyObject *a) {
  if (!st->np_scalar_codes && !(st->np_scalar_codes = PyDict_New())) goto error;
  PyObject *known = PyDict_GetItemWithError(st->np_scalar_codes, (PyObject *)Py_TYPE(a));
  if (known) return PyLong_AsUnsignedLongLong(known);
  if (PyErr_Occurred()) goto error;
  PyObject *text = nbc__py_kernel_typeof_arg(st, a);
  if (!text) goto error;
  const char *name = PyUnicode_AsUTF8(text);
  uint64_t code = 0;
  for (const char *k = "biufc"; name && !code && *k; k++)
    for (int size = 1; !code && size <= 16; size *= 2) {
      const char *n = nbc__py_scalar_name(*k, size);
      if (n && strcmp(n, name) == 0) /* one code per type: its place in the dict */
        code = 6 | (uint64_t)(PyDict_GET_SIZE(st->np_scalar_codes) + 1) << 8;
    }
  Py_DECREF(text);
  PyObject *value = name ? PyLong_FromUnsignedLongLong(code) : NULL;
  int rc = value ? PyDict_SetItem(st->np_scalar_codes, (PyObject *)Py_TYPE(a), value) : -1;
  Py_XDECREF(value);
  if (rc < 0) goto error;
  return code;
error:
  PyErr_Clear(); /* typed in full again, which reports it */
  return 0;
}

/* A code of an argument's numba type for the kinds of argument launches see most: an array
 * of numbers (an nbcuda device array, or an object with __cuda_array_interface__), an exact
 * bool, int, float or complex, a numpy scalar of a number type; 0 for any other (typed in
 * full by nbc__py_kernel_typeof_arg each time; an interface that does not parse is too, with
 * its error). Equal codes are equal types: nbc__py_kernel_typeof_arg spells such an argument
 * from exactly these. An interface is parsed into *pview when given (its ndim left -1
 * otherwise). */
static uint64_t fast_type_code(nbc__py_state *st, PyObject *a, nbc__py_array_view *pview) {
  PyTypeObject *t = Py_TYPE(a);
  if (t == st->DeviceArrayType) {
    ArrayObject *x = (ArrayObject *)a;
    if (x->type_code) return x->type_code;
    const char *dates = x->kind == 'M' || x->kind == 'm' ? nbc__py_datetime_name(x->typestr)
                                                         : NULL;
    return x->type_code = array_type_code(x->kind, x->itemsize, x->ndim, x->shape, x->strides,
                                          dates);
  }
  if (t == &PyBool_Type) return 2;
  if (t == &PyLong_Type) { /* int64, else uint64 (typed apart), else typeof_arg's error */
    int range = nbc__py_kernel_pyint_range(a);
    return range == 1 ? 3 : range == 2 ? 8 : 0;
  }
  if (t == &PyFloat_Type) return 4;
  if (t == &PyComplex_Type) return 5;
  if (strncmp(t->tp_name, "numpy.", 6) == 0 && t != (PyTypeObject *)st->np_ndarray)
    return numpy_scalar_code(st, a);
  PyObject *cai;
  if (t == &PyTuple_Type || a == Py_None) return 0;
  nbc__py_array_view local, *v = pview ? pview : &local;
  /* an object with __dlpack__ (numba-cuda: before the CAI): typed here, asked again by the
   * launch with its stream, so *pview stays unparsed */
  int dl = nbc__py_dlpack_view(st, a, -1, &local);
  if (dl < 0) PyErr_Clear();
  if (dl) Py_CLEAR(local.owner);
  if (dl > 0)
    return array_type_code(local.kind, local.itemsize, local.ndim, local.shape, local.strides,
                           NULL);
  if (dl < 0 || !nbc__py_optional_attr(a, st->str_cai, &cai)) return 0;
  int rc = nbc__py_cai_view(st, cai, v);
  Py_DECREF(cai);
  if (rc < 0) {
    v->ndim = -1;
    PyErr_Clear();
    return 0;
  }
  return array_type_code(v->kind, v->itemsize, v->ndim, v->shape, v->strides,
                         v->kind == 'M' || v->kind == 'm' ? v->datetime : NULL);
}

/* The kernel a lazy or jit([sigs]) kernel launches for these arguments. The last answer is
 * given again when the arguments' type codes are the last ones (the text of their types,
 * and the dict lookups behind it, are then not made). */
KernelObject *nbc__py_specialize(nbc__py_state *st, KernelObject *k, PyObject *const *args,
                                 Py_ssize_t n, nbc__py_array_view *views) {
  uint64_t codes[NBC__PY_FAST_ARGS];
  int coded = n <= NBC__PY_FAST_ARGS;
  for (Py_ssize_t i = 0; coded && i < n; i++)
    coded = (codes[i] = fast_type_code(st, args[i], views ? &views[i] : NULL)) != 0;
  if (coded && k->last_overload && k->nlast_codes == n &&
      memcmp(codes, k->last_codes, sizeof codes[0] * (size_t)n) == 0)
    return (KernelObject *)k->last_overload;
  KernelObject *ov = k->fixed ? select_overload(st, k, args, n)
                              : lazy_specialization(st, k, args, n);
  if (ov && coded) {
    memcpy(k->last_codes, codes, sizeof codes[0] * (size_t)n);
    k->nlast_codes = (int)n;
    Py_XSETREF(k->last_overload, Py_NewRef((PyObject *)ov));
  }
  return ov;
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

/* k[griddim, blockdim(, stream(, sharedmem))]: the launcher of the last configuration when
 * this one is the same (launchers are immutable), else a new one, which is kept. */
static PyObject *kernel_getitem(KernelObject *self, PyObject *key) {
  PyObject *L;
  if (self->last_config && config_same(self->last_config, key)) {
    L = Py_NewRef(self->last_launcher);
  } else {
    L = nbc__py_launcher_new(self, key);
    if (L && PyTuple_CheckExact(key)) {
      Py_XSETREF(self->last_config, Py_NewRef(key));
      Py_XSETREF(self->last_launcher, Py_NewRef(L));
    }
  }
  /* each configuration warns of a small grid, as numba's _LaunchConfiguration does */
  nbc__py_state *st = L ? nbc__py_state_of((PyObject *)self) : NULL;
  if (st && st->config.warn_low_occupancy &&
      nbc__py_warn_small_grid(st, ((LauncherObject *)L)->grid) < 0)
    Py_CLEAR(L);
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
  LauncherObject *L = key ? (LauncherObject *)nbc__py_launcher_new(self, key) : NULL;
  Py_XDECREF(key);
  if (L) L->ntasks = ntasks;
  return (PyObject *)L;
}

static PyObject *kernel_compile_sig(KernelObject *self, PyObject *sig);

/* numba's Dispatcher.specialize(*args): the kernel compiled for these arguments' types, a
 * kernel of its own (specialized is True). Given type objects (nbcuda's or numba's:
 * k.specialize(float32[::1])) it is compiled for those types, where numba would type each as
 * a reference to a type. */
static PyObject *kernel_specialize(KernelObject *self, PyObject *const *args, Py_ssize_t n) {
  if (self->sigtext) {
    PyErr_SetString(PyExc_RuntimeError, "Dispatcher already specialized");
    return NULL;
  }
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  int types = n > 0 && !self->fixed;
  for (Py_ssize_t i = 0; types && i < n; i++) {
    PyObject *text = NULL;
    types = nbc__py_is_type(st, args[i], &text);
    Py_XDECREF(text);
  }
  if (types) {
    PyObject *sig = PyTuple_New(n);
    for (Py_ssize_t i = 0; sig && i < n; i++) PyTuple_SET_ITEM(sig, i, Py_NewRef(args[i]));
    PyObject *r = sig ? kernel_compile_sig(self, sig) : NULL;
    Py_XDECREF(sig);
    return r;
  }
  KernelObject *k = nbc__py_specialize(st, self, args, n, NULL);
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
  nbc_function_t *fn = nbc__py_kernel_function(st, ov);
  if (!fn) return NULL;
  int value = 0;
  nbc_status_t s = nbc_function_attribute(fn, attr, &value);
  if (s != NBC_OK) return nbc__py_raise(st, s);
  return PyLong_FromLong(value);
}

/* numba's key of an overload: the tuple of its argument types (nbcuda's type objects, so
 * k.overloads[(nbcuda.float32[::1], nbcuda.int64)] finds it). */
PyObject *nbc__py_kernel_argtypes(nbc__py_state *st, const KernelObject *ov) {
  return signature_argtypes(st, ov->sig);
}

static PyObject *signature_argtypes(nbc__py_state *st, const nbc_signature_t *sig) {
  int n = nbc_signature_nargs(sig);
  PyObject *key = PyTuple_New(n);
  for (int i = 0; key && i < n; i++) {
    const nbc_param_info_t *p = nbc_signature_param(sig, i);
    PyObject *t =
        p->kind == NBC_PARAM_ARRAY && p->dtype_kind == 'V' && p->unaligned
            ? nbc__py_record_from_name(st, p->dtype_name, 1)
            : nbc__py_type_from_name(st, p->kind == NBC_PARAM_ARRAY ? p->dtype_name : p->type_name);
    if (t && p->kind == NBC_PARAM_ARRAY) /* dtype[:, ::1], as a user would write it */
      Py_SETREF(t, nbc__py_array_of(st, t, p->ndim, p->layout));
    if (t && p->kind == NBC_PARAM_ARRAY && p->readonly) t = nbc__py_array_readonly(st, t);
    if (!t)
      Py_CLEAR(key);
    else
      PyTuple_SET_ITEM(key, i, t);
  }
  return key;
}

/* The compiled overloads, in the order they were compiled (a new list). */
PyObject *nbc__py_kernel_overload_list(KernelObject *k) {
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
  PyObject *all = nbc__py_kernel_overload_list(k);
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
    if (args) nbc__py_key_error(args);
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
  PyObject *all = nbc__py_kernel_overload_list(self), *d = all ? nbc__py_types_dict_new(st) : NULL;
  for (Py_ssize_t i = 0; d && i < PyList_GET_SIZE(all); i++) {
    KernelObject *ov = (KernelObject *)PyList_GET_ITEM(all, i);
    PyObject *key = nbc__py_kernel_argtypes(st, ov);
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
  if (nbc__py_dims_arg(blockdim, dims, "blockdim") < 0) return NULL;
  unsigned long long threads = (unsigned long long)dims[0] * dims[1] * dims[2];
  if (threads == 0 || threads > INT_MAX || dynsmem < 0) {
    PyErr_Format(PyExc_ValueError,
                 "blockdim %R and dynsmemsize %lld must be positive and "
                 "fit the device",
                 blockdim, dynsmem);
    return NULL;
  }
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  nbc_function_t *fn = nbc__py_kernel_function(st, self);
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
  PyObject *all = nbc__py_kernel_overload_list(self), *d = all ? nbc__py_types_dict_new(st) : NULL;
  for (Py_ssize_t i = 0; d && i < PyList_GET_SIZE(all); i++) {
    PyObject *ov = PyList_GET_ITEM(all, i);
    PyObject *key = nbc__py_kernel_argtypes(st, (KernelObject *)ov);
    if (!key || PyDict_SetItem(d, key, ov) < 0) Py_CLEAR(d);
    Py_XDECREF(key);
  }
  Py_XDECREF(all);
  return d;
}

/* numba's extensions list: mutable, kept (launches read it). */
static PyObject *kernel_get_extensions(KernelObject *self, void *c) {
  (void)c;
  if (!self->extensions && !(self->extensions = PyList_New(0))) return NULL;
  return Py_NewRef(self->extensions);
}

static int kernel_set_extensions(KernelObject *self, PyObject *value, void *c) {
  (void)c;
  PyObject *list = value ? PySequence_List(value) : PyList_New(0);
  if (!list) return -1;
  Py_XSETREF(self->extensions, list);
  return 0;
}

static PyObject *kernel_specializations(KernelObject *self, void *c) {
  if (self->sigtext || self->fixed)
    return nbc__py_types_dict_new(nbc__py_state_of((PyObject *)self));
  return kernel_overloads(self, c);
}

/* numba's signatures: list(overloads), each overload's tuple of argument types. */
static PyObject *kernel_signatures(KernelObject *self, void *c) {
  PyObject *overloads = kernel_overloads(self, c);
  PyObject *r = overloads ? PyDict_Keys(overloads) : NULL;
  Py_XDECREF(overloads);
  return r;
}

/* numba's nopython_signatures: each overload's signature, void(argument types). */
static PyObject *kernel_nopython_signatures(KernelObject *self, void *c) {
  (void)c;
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  PyObject *all = nbc__py_kernel_overload_list(self);
  PyObject *voidtype = all ? nbc__py_type_from_name(st, "void") : NULL;
  PyObject *r = voidtype ? PyList_New(0) : NULL;
  for (Py_ssize_t i = 0; r && i < PyList_GET_SIZE(all); i++) {
    PyObject *args = nbc__py_kernel_argtypes(st, (KernelObject *)PyList_GET_ITEM(all, i));
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

/* numba's _Kernel.cooperative: whether the compiled code synchronises the grid (this_grid(),
 * sync_group(), a declare_device(use_cooperative=True) function); False before compiling. */
static PyObject *kernel_cooperative(KernelObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(self->cooperative);
}

/* numba's `specialized`: jit with one signature (not a list, not lazily compiled). */
static PyObject *kernel_specialized(KernelObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(self->sigtext != NULL);
}

/* A kernel signature as the key specialisations use: "void(<argument types>)" in canonical
 * form; a new reference, or NULL (TypeError for a signature that returns a value). */
PyObject *nbc__py_kernel_key(nbc__py_state *st, PyObject *sig) {
  PyObject *text;
  nbc_signature_t *csig;
  if (nbc__py_parse_signature(st, sig, &text, &csig) < 0) return NULL;
  const char *ret = nbc_signature_return_type(csig), *canon = nbc_signature_text(csig);
  PyObject *key = NULL;
  if (ret && strcmp(ret, "none") && strcmp(ret, "void"))
    PyErr_Format(PyExc_TypeError, "a kernel returns nothing: %U returns %s", text, ret);
  else {
    /* "(int32,)", a tuple of one argument type's spelling, is "void(int32)" */
    const char *args = ret ? strchr(canon, '(') : canon;
    size_t len = strlen(args);
    int one = len >= 3 && strcmp(args + len - 2, ",)") == 0;
    PyObject *inner = PyUnicode_FromStringAndSize(args, (Py_ssize_t)(one ? len - 2 : len));
    key = inner ? PyUnicode_FromFormat("void%U%s", inner, one ? ")" : "") : NULL;
    Py_XDECREF(inner);
  }
  nbc_signature_destroy(csig);
  Py_DECREF(text);
  return key;
}

/* The compiled kernel whose signature is key (nbc__py_kernel_key's form): this one, one of a
 * jit([...]) list, or a specialisation made so far; a new reference, or NULL (no error set
 * when there is none). */
PyObject *nbc__py_kernel_overload_of(nbc__py_state *st, KernelObject *self, PyObject *key) {
  if (self->result) { /* one signature, this kernel's */
    PyObject *own = nbc__py_kernel_key(st, self->sigtext);
    int same = own ? PyUnicode_Compare(own, key) == 0 : 0;
    Py_XDECREF(own);
    return same ? Py_NewRef(self) : NULL;
  }
  if (!self->specializations) return NULL;
  if (!self->fixed) return Py_XNewRef(PyDict_GetItemWithError(self->specializations, key));
  Py_ssize_t pos = 0;
  PyObject *text, *ov;
  while (!PyErr_Occurred() && PyDict_Next(self->specializations, &pos, &text, &ov)) {
    PyObject *k = nbc__py_kernel_key(st, text);
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
  PyObject *key = nbc__py_kernel_key(st, sig);
  if (!key) return NULL;
  PyObject *found = nbc__py_kernel_overload_of(st, self, key);
  if (!found && !PyErr_Occurred() && !self->result && !self->fixed) {
    if (!self->specializations && !(self->specializations = PyDict_New())) goto done;
    KernelObject *spec = nbc__py_kernel_compile(st, self->py_func, key, &self->opts,
                                                self->cache, self, self->links);
    if (spec && PyDict_SetItem(self->specializations, key, (PyObject *)spec) < 0) Py_CLEAR(spec);
    found = (PyObject *)spec;
  }
  if (!found && !PyErr_Occurred())
    PyErr_SetString(PyExc_RuntimeError, "Compilation disabled");
done:
  Py_DECREF(key);
  return found;
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
#define KW_INSPECT(name, doc)                                                              \
  {#name, (PyCFunction)(void (*)(void))nbc__py_kernel_##name, METH_VARARGS | METH_KEYWORDS, doc}

static PyMethodDef kernel_methods[] = {
    {"__reduce__", nbc__py_jitted_reduce, METH_NOARGS,
     "__reduce__($self, /)\n--\n\n"
     "Pickles the kernel as its Python function and jit()'s options (serialize.c)."},
    {"disable_compile", (PyCFunction)(void (*)(void))kernel_disable_compile, METH_FASTCALL,
     "disable_compile($self, val=True, /)\n--\n\n"
     "No new signature compiled at launch (numba's)."},
    {"typeof_pyval", (PyCFunction)kernel_typeof_pyval, METH_O,
     "typeof_pyval($self, val, /)\n--\n\n"
     "The type a launch gives the argument val."},
    {"recompile", (PyCFunction)kernel_recompile, METH_NOARGS,
     "recompile($self, /)\n--\n\n"
     "Every signature compiled so far compiled afresh from the source (globals read again) "
     "and the disk cache rewritten, as numba's Dispatcher.recompile()."},
    {"compile", (PyCFunction)kernel_compile_sig, METH_O,
     "compile($self, sig, /)\n--\n\n"
     "The kernel compiled for it (jit without signatures keeps it for its launches; jit with "
     "signatures has only those: RuntimeError otherwise)."},
    KW_METHOD(configure, "configure($self, griddim, blockdim, stream=0, sharedmem=0)\n--\n\n"
                         "K[griddim, blockdim, stream, sharedmem]."),
    KW_INSPECT(inspect_asm, "inspect_asm($self, signature=None)\n--\n\n"
                           "The PTX of that overload, or a dict argument types -> PTX of "
                           "all; an overload (k.overloads[types], numba's _Kernel) gives its "
                           "own PTX."),
    KW_INSPECT(inspect_llvm, "inspect_llvm($self, signature=None)\n--\n\n"
                            "The NVVM IR handed to libNVVM, as inspect_asm gives PTX."),
    KW_INSPECT(inspect_types, "inspect_types($self, file=None, signature=None)\n--\n\n"
                             "Writes each overload's source and the types of its variables "
                             "(numba's typemap) to file (sys.stdout)."),
    KW_INSPECT(inspect_sass, "inspect_sass($self, signature=None)\n--\n\n"
                            "Nvdisasm's listing of the code linked for the current device, "
                            "as inspect_asm gives PTX."),
    KW_INSPECT(inspect_sass_cfg, "inspect_sass_cfg($self, signature=None)\n--\n\n"
                                "Nvdisasm's control flow graph (DOT) of the code linked for "
                                "the current device."),
    KW_INSPECT(inspect_lto_ptx, "inspect_lto_ptx($self, signature=None)\n--\n\n"
                               "The PTX nvJitLink makes of a jit(lto=True) kernel's LTO-IR "
                               "for the current device, as inspect_asm gives PTX."),
    KW_METHOD(get_regs_per_thread, "get_regs_per_thread($self, signature=None)\n--\n\n"
                                   "Registers per thread of that overload (a dict over the "
                                   "overloads when none and not specialized)."),
    KW_METHOD(get_shared_mem_per_block,
        "get_shared_mem_per_block($self, signature=None)\n--\n\n"
        "Static shared memory bytes per block."),
    KW_METHOD(get_local_mem_per_thread,
        "get_local_mem_per_thread($self, signature=None)\n--\n\n"
        "Local memory bytes per thread."),
    KW_METHOD(get_const_mem_size, "get_const_mem_size($self, signature=None)\n--\n\n"
                                  "Constant memory bytes."),
    KW_METHOD(get_max_threads_per_block,
        "get_max_threads_per_block($self, signature=None)\n--\n\n"
        "The largest block the kernel can be launched with."),
    KW_METHOD(forall, "forall($self, ntasks, tpb=0, stream=0, sharedmem=0)\n--\n\n"
                      "A launcher of ntasks threads in blocks of tpb (0: the largest block "
                      "the kernel can have)."),
    {"specialize", (PyCFunction)(void (*)(void))kernel_specialize, METH_FASTCALL,
     "specialize($self, *args)\n--\n\n"
     "The kernel compiled for these arguments' types."},
    KW_METHOD(max_cooperative_grid_blocks, "max_cooperative_grid_blocks($self, blockdim, "
                                           "dynsmemsize=0)\n--\n\n"
                                           "The largest cooperative grid on the current "
                                           "device."),
    {NULL, NULL, 0, NULL},
};
#undef KW_METHOD

/* numba's dispatcher attribute; compile()'s resolver reads forceinline from it when the
 * kernel is called from another kernel (as numba's dispatchers are, as device functions). */
static PyObject *kernel_targetoptions(KernelObject *self, void *c) {
  (void)c;
  return Py_BuildValue("{sOsOsOsO}", "device", Py_False, "debug",
                       self->opts.debug ? Py_True : Py_False, "fastmath",
                       self->opts.fastmath ? Py_True : Py_False, "forceinline",
                       self->forceinline ? Py_True : Py_False);
}

static PyGetSetDef kernel_getset[] = {
    {"_can_compile", (getter)kernel_can_compile, NULL,
     "Whether a launch with new argument types compiles (numba's).", NULL},
    {"py_func", (getter)kernel_py_func, NULL, "the Python function", NULL},
    {"signatures", (getter)kernel_signatures, NULL,
     "the compiled signatures: each overload's tuple of argument types, as numba's", NULL},
    {"symbol", (getter)kernel_symbol, NULL, "the kernel entry's name in the PTX", NULL},
    {"overloads", (getter)kernel_overloads, NULL, "{argument types: compiled kernel}", NULL},
    {"extensions", (getter)kernel_get_extensions, (setter)kernel_set_extensions,
     "numba's extensions: objects whose prepare_args(ty, val, stream=, retr=) returns each "
     "argument's (type, value) before a launch; retr collects callables run after it",
     NULL},
    {"specializations", (getter)kernel_specializations, NULL,
     "{argument types: kernel} of a kernel jitted without signatures: those specialize() and "
     "launches made so far (numba's keeps specialize()'s only); empty for the others", NULL},
    {"nopython_signatures", (getter)kernel_nopython_signatures, NULL,
     "the overloads' signatures, void(argument types)", NULL},
    {"func_code", (getter)kernel_forward, NULL, "the Python function's code object",
     "__code__"},
    {"specialized", (getter)kernel_specialized, NULL, "compiled for one signature", NULL},
    {"cooperative", (getter)kernel_cooperative, NULL,
     "the code synchronises the grid: launched cooperatively, linked with libcudadevrt", NULL},
    {"targetoptions", (getter)kernel_targetoptions, NULL, "jit's options, as numba's", NULL},
    {"_type_annotation", (getter)nbc__py_kernel_type_annotation, NULL,
     "numba's: typemap, {variable: type} of a compiled kernel (None before)", NULL},
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
  if (!self->sigtext) return PyUnicode_FromFormat("<nbcuda kernel %R>", self->py_func);
  return PyUnicode_FromFormat("<nbcuda kernel %R %S>", self->py_func, self->sigtext);
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
    /* no Py_tp_doc: a type made from a spec sets its doc over the __doc__ getset, and a
     * kernel's __doc__ is its function's, as numba's dispatcher's (numba issue #5902) */
    {0, NULL},
};

static PyType_Spec kernel_spec = {
    .name = "nbcuda.Kernel",
    .basicsize = sizeof(KernelObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION |
             Py_TPFLAGS_IMMUTABLETYPE,
    .slots = kernel_slots,
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

/* The Kernel and CompileStats types; the launcher type (launch.c); the DeviceFunction type
 * and jit() (jit.c). */
int nbc__py_kernel_init(PyObject *module, nbc__py_state *st) {
  st->CompileStatsType = PyStructSequence_NewType(&stats_desc);
  if (!st->CompileStatsType) return -1;
  st->KernelType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &kernel_spec, NULL);
  if (!st->KernelType) return -1;
  if (nbc__py_launcher_init(module, st) < 0) return -1;
  return nbc__py_jit_init(module, st);
}
