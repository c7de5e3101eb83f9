/* kernel.h — private header shared by the three files of jit() and its objects, one section
 * per file: kernel.c (the Kernel object, numba's dispatcher: compilation, typing of
 * arguments, specialisation and overload selection, k[...], properties and inspection),
 * launch.c (the launcher k[...] returns and the launch itself: loading the code per
 * context, packing the arguments, launching, raising a debug kernel's exception) and jit.c
 * (the jit() decorator and the DeviceFunction objects it makes). Nothing else includes it:
 * the rest of the extension knows only nbc__py_kernel_init (nbcuda_py.h) and the types in
 * the module state.
 *
 * KernelObject and LauncherObject are here so that each file reads and writes their fields
 * directly: the launch path reads the kernel's loaded code, signature and flags with no
 * accessor call in between.
 */
#ifndef NBCUDA_KERNEL_H
#define NBCUDA_KERNEL_H

#include "nbcuda_py.h"

#define NBC__PY_NO_CARVEOUT INT_MIN
#define NBC__PY_FAST_ARGS 8 /* the most arguments the dispatch's last answer remembers */

typedef struct {
  PyObject_HEAD
  PyObject *py_func;
  /* py_func's parameters and their defaults (__defaults__, NULL for none): a launch with
   * fewer arguments fills the omitted ones from them, as numba's dispatcher folds them */
  int nparams;
  PyObject *defaults;
  PyObject *sigtext;          /* eager: the signature; lazy: NULL */
  PyObject *specializations;  /* lazy: dict sigtext -> Kernel */
  int fixed;                  /* jit([sig, ...]): only these, no new specialisation */
  int overload;               /* made by a dispatcher for one signature (numba's _Kernel) */
  PyObject *dispatch;         /* fixed: dict argument types -> the overload chosen for them */
  nbc_compile_options_t opts;
  unsigned max_registers;     /* numba's jit(max_registers=N), applied when code is loaded */
  /* numba's jit(shared_memory_carveout=...) as a percentage (-1: the driver's default), set on
   * the code when it is loaded; NBC__PY_NO_CARVEOUT when not given */
  int carveout;
  /* jit(forceinline=True) or inline="always": called from another kernel, it is inlined into
   * its callers (targetoptions says so to the resolver, as numba's dispatcher's does) */
  int forceinline;
  int cooperative; /* synchronises the grid: linked with libcudadevrt.a, launched
                      cooperatively (the code calls cudaCG*, or a declared function it calls
                      was declared use_cooperative=True) */
  int fp16;        /* calls numba.cuda.fp16's wrappers: their shim is linked */
  nbc_signature_t *sig;
  int nviews; /* the array views a launch may need (nbc__py_launch_views of sig) */
  /* The compiled code: owned here until its first load, then by the kernel layer's
   * loaded (nbc_kernel_create_from_result at that load, with the load options above), which
   * keeps its module per context (nbc__py_kernel_function) and whose result this stays. */
  nbc_compile_result_t *result;
  nbc_kernel_t *loaded;
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
  /* A debug=True kernel's exception table (nbc__py_compile_function_extras): per raise site
   * (class, args, (function, file, line)), read after each launch; NULL for none. */
  PyObject *raises;
  /* The global device arrays the code refers to by address (a list, or NULL for none):
   * kept alive with it. */
  PyObject *referenced;
  /* What jit() was given (jit.c's config tuple), for pickling: NULL for an overload a
   * dispatcher made. */
  PyObject *jit_config;
  /* numba's extensions (jit(extensions=[...]), k.extensions): objects whose
   * prepare_args(ty, val, stream=, retr=) replaces each argument before a launch; NULL for
   * none yet (a list once read or given). */
  PyObject *extensions;
  /* The dispatch's last answer (nbc__py_specialize): the arguments' type codes
   * (fast_type_code) and the overload they chose, a strong reference (NULL for none): the same
   * kinds of arguments, launch after launch, are not typed again. */
  uint64_t last_codes[NBC__PY_FAST_ARGS];
  int nlast_codes;
  PyObject *last_overload;
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

/* numba's NumbaPerformanceWarning of a configuration of fewer than 128 blocks (when
 * st->config.warn_low_occupancy); -1 when the warning is an error. */
int nbc__py_warn_small_grid(nbc__py_state *st, const unsigned grid[3]);

/* A Python function's attribute (attr is its name): the dunder attributes kernels and device
 * functions forward to the function they were made from. */
static inline PyObject *forward_attr(PyObject *f, void *attr) {
  return PyObject_GetAttrString(f, (const char *)attr);
}

/* ======================================================================= kernel.c === */
/* jit.c: jit()'s options (config) applied to a Python function, as the decorator does: a
 * kernel or a device function that remembers config (serialize.c pickles it). */
PyObject *nbc__py_jit_apply(PyObject *module, PyObject *config, PyObject *func);
/* jit.c: the config tuple and Python function (borrowed, *pfunc) of a kernel or device
 * function jit() made; NULL (no error) for anything else. */
PyObject *nbc__py_jit_config(nbc__py_state *st, PyObject *obj, PyObject **pfunc);
/* serialize.c: __reduce__ of kernels and device functions, and of configured launches. */
PyObject *nbc__py_jitted_reduce(PyObject *self, PyObject *unused);
PyObject *nbc__py_launcher_reduce(PyObject *self, PyObject *unused);

/* kernel.c: the argument types of a compiled kernel, as numba keys its overloads (a new
 * tuple of nbcuda's type objects). */
PyObject *nbc__py_kernel_argtypes(nbc__py_state *st, const KernelObject *ov);

/* A kernel of py_func with these options, nothing compiled yet (jit() without a signature,
 * or the start of nbc__py_kernel_compile); NULL with the error set. */
KernelObject *nbc__py_kernel_alloc(nbc__py_state *st, PyObject *py_func,
                                   const nbc_compile_options_t *opts);
/* py_func compiled for sigtext as a kernel, its parameter layout parsed; through the disk
 * cache when cache is set, the stats counted on owner (NULL: the new kernel itself), whose
 * load options (register cap, carveout) the kernel takes; links: jit(link=[...])'s files, or
 * NULL. A new reference, or NULL with the error set. */
KernelObject *nbc__py_kernel_compile(nbc__py_state *st, PyObject *py_func, PyObject *sigtext,
                                     const nbc_compile_options_t *opts, int cache,
                                     KernelObject *owner, PyObject *links);
/* The kernel a kernel without one signature launches for these arguments: the overload
 * they match (jit([sig, ...])) or the specialisation for their types, compiled on first
 * use. Borrowed (k keeps it), or NULL with the error set. views (NULL, or one for each of
 * the first NBC__PY_FAST_ARGS arguments, each with ndim -1): the __cuda_array_interface__
 * of an argument read to type it is parsed into its view, for the launch to pack from
 * instead of asking the object again (CuPy and PyTorch make theirs anew at each read). */
KernelObject *nbc__py_specialize(nbc__py_state *st, KernelObject *k, PyObject *const *args,
                                 Py_ssize_t n, nbc__py_array_view *views);
/* Whether obj is a numpy.void (a record scalar); numpy is imported by then. */
int nbc__py_is_numpy_void(nbc__py_state *st, PyObject *obj);

/* kernel.c, shared with kernel_inspect.c: the compiled overloads in compile order (a new
 * list); the canonical key "void(<argument types>)" of a signature (TypeError for one that
 * returns a value); the overload whose key is key (a new reference, or NULL with no error
 * set when there is none). */
PyObject *nbc__py_kernel_overload_list(KernelObject *k);
PyObject *nbc__py_kernel_key(nbc__py_state *st, PyObject *sig);
PyObject *nbc__py_kernel_overload_of(nbc__py_state *st, KernelObject *self, PyObject *key);

/* kernel_typeof.c ---------------------------------------------------------------------- */
/* The signature spelling of the numba type of argument a ("float32[::1]"), or NULL with
 * numba's error; "void(<each argument's>)" of n arguments; and whether a Python int is an
 * int64 (1), a uint64 (2) or neither (0), as numba types it. */
PyObject *nbc__py_kernel_typeof_arg(nbc__py_state *st, PyObject *a);
PyObject *nbc__py_kernel_typeof_signature(nbc__py_state *st, PyObject *const *args,
                                          Py_ssize_t n);
int nbc__py_kernel_pyint_range(PyObject *a);

/* kernel_inspect.c: the methods inspect_asm, inspect_llvm, inspect_types, inspect_sass,
 * inspect_sass_cfg, inspect_lto_ptx and the _type_annotation property. */
PyObject *nbc__py_kernel_inspect_asm(KernelObject *self, PyObject *args, PyObject *kwargs);
PyObject *nbc__py_kernel_inspect_llvm(KernelObject *self, PyObject *args, PyObject *kwargs);
PyObject *nbc__py_kernel_inspect_types(KernelObject *self, PyObject *args, PyObject *kwargs);
PyObject *nbc__py_kernel_inspect_sass(KernelObject *self, PyObject *args, PyObject *kwargs);
PyObject *nbc__py_kernel_inspect_sass_cfg(KernelObject *self, PyObject *args,
                                          PyObject *kwargs);
PyObject *nbc__py_kernel_inspect_lto_ptx(KernelObject *self, PyObject *args, PyObject *kwargs);
PyObject *nbc__py_kernel_type_annotation(KernelObject *self, void *c);

/* ======================================================================= launch.c === */
/* The kernel's function in the current context, loading the code there the first time;
 * NULL with the error set. */
nbc_function_t *nbc__py_kernel_function(nbc__py_state *st, KernelObject *k);
/* How many array arguments, tuple items included, a launch with signature sig may have to
 * take views of (host arrays copied in and back). */
int nbc__py_launch_views(const nbc_signature_t *sig);
/* A launch dimension: an int or a tuple of up to three ints, into out (unused ones 1); 0,
 * or -1 with a ValueError naming what. */
int nbc__py_dims_arg(PyObject *o, unsigned out[3], const char *what);
/* A new launcher of kernel self for the configuration key (griddim, blockdim(, stream(,
 * sharedmem))); NULL with the error set. */
PyObject *nbc__py_launcher_new(KernelObject *self, PyObject *key);
/* Creates the launcher type (st->LauncherType); 0, or -1 with the error set. */
int nbc__py_launcher_init(PyObject *module, nbc__py_state *st);

/* ========================================================================== jit.c === */
/* Creates the DeviceFunction type and adds jit() to the module; 0, or -1 with the error
 * set. */
int nbc__py_jit_init(PyObject *module, nbc__py_state *st);

#endif
