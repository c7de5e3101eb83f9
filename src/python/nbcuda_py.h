/* nbcuda_py.h — the internal header of the `nbcuda` CPython extension, one section per file.
 *
 * The extension is thin: every behaviour lives in libnbcuda (include/nbcuda.h); these files
 * convert Python arguments, call the C API and turn a failed nbc_status_t into the Python
 * exception numba-cuda raises for it (errors.c). The module uses multi-phase
 * initialisation, a module-state struct instead of C globals, and heap types created from
 * PyType_Spec with the module as their owner, so every object finds the state through its
 * type (nbc__py_state_of). The only C globals are in stream.c: the queue that stream
 * callbacks, which run on a thread of the CUDA driver, hand completions through (the driver
 * thread holds no reference to any Python object it could reach the state by).
 */
#ifndef NBCUDA_PY_H
#define NBCUDA_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "nbcuda.h"

#define NBC__PY_DTYPE_CACHE 32
#define NBC__PY_FREE_ARRAYS 16

/* The state each concern owns, embedded in the module state (nbc__py_state) under the
 * concern's name: its file makes and changes it, others only read what its comment offers.
 * Each concern's X list names its objects, which the module's traverse and clear visit. */

/* config.c: the nbcuda.config module and the settings the hot paths read from it, kept up
 * to date by config's __setattr__: whether a small grid and a host array passed to a kernel
 * warn (numba's NumbaPerformanceWarning), and CUDA_ARRAY_INTERFACE_SYNC (an interface's
 * stream is synchronized first). */
typedef struct nbc__py_config_state {
  PyObject *module;
  int warn_low_occupancy, warn_implicit_copy;
  int cai_sync;
} nbc__py_config_state;
#define NBC__PY_CONFIG_OBJECTS(X) X(config.module)

/* errors.c's warnings: the _warning_class(name) function, the classes it gave by name (a
 * dict, NULL for none yet) and which of numba's errors modules were loaded then (a bitmask:
 * the classes are made again when that changes), and those modules' names (interned). */
typedef struct nbc__py_warnings_state {
  PyObject *maker;
  PyObject *classes;
  int numba;
  PyObject *str_numba_errors[2]; /* "numba.core.errors", "numba.cuda.core.errors" */
} nbc__py_warnings_state;
#define NBC__PY_WARNINGS_OBJECTS(X)                                                          \
  X(warnings.maker) X(warnings.classes) X(warnings.str_numba_errors[0])                    \
  X(warnings.str_numba_errors[1])

/* emm.c: the EMM plugin class of set_memory_manager() (NULL: nbcuda's own allocation),
 * whether NUMBA_CUDA_MEMORY_MANAGER was looked at, the namespace holding the plugin base
 * classes (made on first use) and the MemoryInfo namedtuple class (read by context.c). */
typedef struct nbc__py_emm_state {
  PyObject *manager;
  int env_checked;
  PyObject *classes;
  PyObject *memory_info;
} nbc__py_emm_state;
#define NBC__PY_EMM_OBJECTS(X) X(emm.manager) X(emm.classes) X(emm.memory_info)

/* hostmemory.c: the MappedNDArray and ManagedNDArray classes, made on first use. */
typedef struct nbc__py_hostmem_state {
  PyObject *mapped_class, *managed_class;
} nbc__py_hostmem_state;
#define NBC__PY_HOSTMEM_OBJECTS(X) X(hostmem.mapped_class) X(hostmem.managed_class)

/* devicearray.c: the dtype arguments seen (compared by identity, a list) with their codes,
 * kind << 8 | itemsize, and the numpy dtype object of each code (a list); and dead
 * DeviceNDArray objects kept for reuse (their memory, untracked, no references held), so that
 * making an array skips Python's allocator and GC bookkeeping. */
typedef struct nbc__py_devicearray_state {
  PyObject *dtype_keys, *dtype_objs;
  unsigned short dtype_key_codes[NBC__PY_DTYPE_CACHE], dtype_obj_codes[NBC__PY_DTYPE_CACHE];
  PyObject *free[NBC__PY_FREE_ARRAYS];
  int nfree;
} nbc__py_devicearray_state;
#define NBC__PY_DEVICEARRAY_OBJECTS(X) X(arrays.dtype_keys) X(arrays.dtype_objs)

/* The state of one `nbcuda` module object. */
typedef struct nbc__py_state {
  /* exceptions (errors.c) */
  PyObject *CudaSupportError, *CudaDriverError, *CudaAPIError, *CudaRuntimeError;
  PyObject *NvvmError, *NvvmSupportError, *CompileError, *TypingError, *CCSupportError;
  PyObject *LinkerError;
  PyObject *typing_error_class; /* errors.c's _typing_error_class() */
  PyObject *api_error_class;    /* errors.c's _api_error_class() */
  PyObject *driver_error_class; /* errors.c's _driver_error_class() */
  /* heap types */
  PyTypeObject *DeviceType, *ManagedDeviceType, *DeviceListType, *ContextType;
  PyTypeObject *StreamType, *EventType, *DeviceArrayType, *NbTypeType, *KernelType;
  /* types.c: the classes of array and tuple types (types.Array, Tuple, UniTuple: subclasses
   * of types.Type) and of signatures (not one) */
  PyTypeObject *NbArrayType, *NbTupleType, *NbUniTupleType, *NbSignatureType;
  PyTypeObject *LauncherType, *DeviceFunctionType, *RequireContextType, *ScopeType;
  PyTypeObject *ProfilingRangeType, *RangedFunctionType; /* profiling.c */
  PyTypeObject *RuntimeType, *HostMemType;
  PyTypeObject *StubType;  /* intrinsics.c: host placeholders of kernel-language names */
  PyTypeObject *IpcHandleType, *IpcArrayHandleType; /* ipc.c */
  PyTypeObject *ArgHintType, *InHintType, *OutHintType, *InOutHintType; /* arghint.c */
  PyTypeObject *ReduceType; /* reduce.c */
  PyTypeObject *CompileStatsType; /* kernel.c: k.stats (cache_path, cache_hits, cache_misses) */
  PyTypeObject *MemoryPointerType; /* memorypointer.c */
  PyTypeObject *UFuncType;         /* vectorize.c */
  PyTypeObject *GUFuncType;        /* gufunc.c */
  PyTypeObject *DeclaredType;      /* declared.c */
  PyTypeObject *LinkableCodeType;  /* linkable.c: numba's LinkableCode */
  PyTypeObject *TypesDictType;     /* typesdict.c */
  PyTypeObject *DeallocsType;      /* deallocs.c: numba's _PendingDeallocs */
  /* caches, built lazily */
  PyObject *gpus;          /* the _DeviceList singleton */
  PyObject *devices;       /* list: Device per ordinal (None until made) */
  PyObject *managed;       /* list: _DeviceContextManager per ordinal */
  PyObject *contexts;      /* list: Context per ordinal */
  PyObject *default_streams; /* list: default, legacy, per-thread Stream per ordinal (stream.c) */
  PyObject *types;         /* dict: numba type name/alias -> type object */
  PyObject *numpy;         /* the numpy module, imported on first need */
  PyObject *module_name;   /* "nbcuda" */
  PyObject *dispatcher;    /* the callback dispatcher thread (stream.c), or NULL */
  PyObject *str_cai;       /* "__cuda_array_interface__" */
  PyObject *str_cuda_stream; /* "__cuda_stream__" */
  PyObject *str_dlpack, *str_dlpack_device; /* "__dlpack__", "__dlpack_device__" */
  /* the keys of a __cuda_array_interface__ dict, interned once: a launch with a foreign
   * array reads them per argument (PyDict_GetItemString made and hashed a str per key) */
  PyObject *str_version, *str_mask, *str_shape, *str_typestr, *str_data, *str_strides,
      *str_descr, *str_stream;
  /* devicearray.c's caches, so that device_array/to_device/copy_to_host make no Python-level
   * numpy calls per call: numpy.empty, numpy.ndarray, numpy.dtype, the order strings.
   * ("dtype", interned when the module is made.) */
  PyObject *np_empty, *np_ndarray, *np_dtype, *str_C, *str_F, *str_dtype;
  PyObject *np_void; /* numpy.void, a record argument's type (kernel.c), found on first use */
  /* kernel.c's dispatch: {numpy type: the code of its scalars' numba type, 0 for a type
   * whose instances are not typed by their type alone (ndarray, void, datetime64...)} */
  PyObject *np_scalar_codes;
  void **np_api; /* numpy's C API table (numpy_api.c), NULL when not usable */
  nbc__py_config_state config;
  nbc__py_warnings_state warnings;
  nbc__py_emm_state emm;
  nbc__py_hostmem_state hostmem;
  nbc__py_devicearray_state arrays;
} nbc__py_state;

/* The state of the module that owns an object's type, and of a module object. */
nbc__py_state *nbc__py_state_of(PyObject *self);
nbc__py_state *nbc__py_module_state(PyObject *module);

/* ======================================================================= module.c === */
/* The slow path of a METH_FASTCALL | METH_KEYWORDS function (calls with keywords, wrong
 * counts): parses its vector with PyArg_ParseTupleAndKeywords(fmt, kwlist, ...) semantics and
 * messages, reading well-formed calls of O/p/s formats directly. 1 on success, 0 with an
 * exception set. The fast path (positional arguments only) stays in the caller. */
int nbc__py_parse_slow(PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames,
                       const char *fmt, char **kwlist, ...);

/* obj.name if it exists: 1 and a new reference in *presult; 0 when it does not, or the
 * lookup failed (the error is cleared, as PyObject_GetAttr + PyErr_Clear would), without
 * making an AttributeError for a plain missing attribute. */
int nbc__py_optional_attr(PyObject *obj, PyObject *name, PyObject **presult);

/* types.SimpleNamespace(**kwargs), kwargs a dict this steals (NULL: NULL, the error
 * standing): a new reference, or NULL with an exception set. */
PyObject *nbc__py_namespace(PyObject *kwargs);

/* ======================================================================= errors.c === */
/* Creates the exception classes in the state and adds them to the module. */
int nbc__py_errors_init(PyObject *module, nbc__py_state *st);
/* Raises the exception for a failed status (message from nbc_last_error()) and returns
 * NULL. */
PyObject *nbc__py_raise(nbc__py_state *st, nbc_status_t status);
/* The TypingError class to raise now for an error of that kind (borrowed): nbcuda's, or with
 * numba's errors module loaded a subclass of it and of numba's TypingError; a subclass of
 * ValueError or TypeError too for an error of kind VALUE or TYPE (numba raises those as
 * they are). */
PyObject *nbc__py_typing_error(nbc__py_state *st, nbc_error_kind_t kind);
/* KeyError(key), as a dict raises it: a tuple key stays whole (PyErr_SetObject would take
 * it for the arguments). Returns NULL. */
PyObject *nbc__py_key_error(PyObject *key);
/* Warns numba's warning class_name ("NumbaPerformanceWarning", "NumbaInvalidConfigWarning":
 * nbcuda's, a subclass of numba's too when numba's errors module is loaded); -1 when the
 * warning is an error (a filter), 0 otherwise. */
int nbc__py_warn(nbc__py_state *st, const char *class_name, const char *message);
/* numba's NumbaInvalidConfigWarning of debug=True with opt=True (compile.c): compile_ptx and
 * jit() (when the decorator is made, as numba's) warn it. */
int nbc__py_warn_debug_with_opt(nbc__py_state *st);
/* The same, for functions that return int: returns -1. */
int nbc__py_raise_int(nbc__py_state *st, nbc_status_t status);

/* The check of a module function that takes no arguments, declared METH_FASTCALL rather than
 * METH_NOARGS because the interpreter (3.11, 3.12) specializes its calls of METH_FASTCALL
 * builtins only: CPython's TypeError when any are given (keywords it refuses itself). */
static inline int nbc__py_no_args(const char *name, Py_ssize_t nargs) {
  if (__builtin_expect(nargs == 0, 1)) return 0;
  PyErr_Format(PyExc_TypeError, "nbcuda.%s() takes no arguments (%zd given)", name, nargs);
  return -1;
}
/* numpy's ValueError for a shape whose bytes do not fit ("array is too big; ..."); -1. */
int nbc__py_too_big(void);

/* ======================================================================== types.c === */
/* numba's type objects: nbcuda.float32, int64, void, arrays by slicing, signatures. */
int nbc__py_types_init(PyObject *module, nbc__py_state *st);
/* The signature text of a sig argument (str, a type-built signature, a tuple or list of
 * types); a new reference to a str, or NULL with an exception set. */
PyObject *nbc__py_signature_text(nbc__py_state *st, PyObject *sig);
/* A list of such sig arguments as a new list of their texts. */
PyObject *nbc__py_signature_texts(nbc__py_state *st, PyObject *sigs);
/* The signatures a DeviceFunction (jit(sig, device=True)) was given, joined by ';' (utf-8 of
 * a str it keeps), or NULL: obj is no DeviceFunction, or it has none (jit.c). */
const char *nbc__py_devfn_signatures(nbc__py_state *st, PyObject *obj);
/* The type object for numba's printed name (e.g. a compile result's "float64"); a new
 * reference. Unknown names get a new type object printing as the name. */
PyObject *nbc__py_type_from_name(nbc__py_state *st, const char *name);
/* The record type that C's signature printed as name (packed: numpy's align=False). */
PyObject *nbc__py_record_from_name(nbc__py_state *st, const char *name, int packed);
/* The array type of ndim (0 to 32) dimensions of dtype (a scalar or record type object) in
 * layout 'C', 'F' or 'A': what dtype[:, ::1] and types.Array(dtype, ndim, layout) make. */
PyObject *nbc__py_array_of(nbc__py_state *st, PyObject *dtype, int ndim, char layout);
/* The read-only array type of array (numba's readonly array); steals array. */
PyObject *nbc__py_array_readonly(nbc__py_state *st, PyObject *array);
/* numpy's typestr ("<f4") of a scalar type object, NULL when obj is not one. */
const char *nbc__py_type_typestr(nbc__py_state *st, PyObject *obj);
/* Whether obj is a numba type object (nbcuda's or numba's own); *pname gets the name as a
 * new reference. */
int nbc__py_is_type(nbc__py_state *st, PyObject *obj, PyObject **pname);
/* numba's printed Record type of a numpy structured dtype, which the signature parser
 * reads: "Record(a[type=float64;offset=0],b[type=int32;offset=8];16;True)"; NULL with
 * TypeError for fields nbcuda does not support (strings, objects, big-endian numbers). */
PyObject *nbc__py_record_text(nbc__py_state *st, PyObject *dtype);
/* numba's name of numpy's datetime64 / timedelta64 typestr ("<M8[D]" -> "datetime64[D]", a
 * static string), or NULL for any other typestr (multiples of a unit, "M8[25s]", included). */
const char *nbc__py_datetime_name(const char *ts);
/* numba's name of numpy's S<n> / U<n> element ('S' or 'U', itemsize in bytes): "[char x 12]",
 * "[unichr x 12]"; NULL (no error) for anything else. */
PyObject *nbc__py_string_type_text(Py_UCS4 kind, long itemsize);
/* The same name of a numpy dtype object (its str), NULL for another (errors cleared). */
const char *nbc__py_dtype_datetime_name(PyObject *dtype);
/* A numpy datetime64 / timedelta64 scalar: the name of its type (as above) and its int64
 * count in *pcount; NULL for any other value, or with a Python error set. */
const char *nbc__py_datetime_scalar(nbc__py_state *st, PyObject *value, long long *pcount);
/* A small number (1..28) naming one of those static names, 0 for any other pointer. */
int nbc__py_datetime_code(const char *name);
/* The type name of numpy's scalar kind ('b', 'i', 'u', 'f', 'c') and itemsize ("float64",
 * "bool"), or NULL where numba has none (float128, clongdouble...). */
const char *nbc__py_scalar_name(char kind, long itemsize);
/* open, then text_of(item) for each item separated by ", ", then ")": a new reference, or NULL
 * with the exception text_of raised ("Tuple(int64, float64)", "void(float32[::1])"). */
/* Walkers of nested Python objects (kernel arguments, record dtypes) count their depth here
 * instead of on Python's recursion limit, which sys.setrecursionlimit can raise past what the
 * C stack holds: entering a level beyond NBC__PY_MAX_NESTING is -1 with ValueError saying
 * that `what` ("a kernel argument") nests too deep. Each successful enter has one leave. */
#define NBC__PY_MAX_NESTING 256
int nbc__py_nesting_enter(const char *what);
void nbc__py_nesting_leave(void);
PyObject *nbc__py_join_texts(nbc__py_state *st, const char *open, PyObject *const *items,
                             Py_ssize_t n, PyObject *(*text_of)(nbc__py_state *, PyObject *));

/* ======================================================================= device.c === */
int nbc__py_device_init(PyObject *module, nbc__py_state *st);
/* The Device object of an nbc device (cached per ordinal); a new reference. */
PyObject *nbc__py_device_object(nbc__py_state *st, nbc_device_t *device);

/* ====================================================================== context.c === */
int nbc__py_context_init(PyObject *module, nbc__py_state *st);
/* The Context object of an nbc context (cached per device); a new reference. */
PyObject *nbc__py_context_object(nbc__py_state *st, nbc_context_t *context);
/* nbc_current_context(-1) as a Context object; a new reference. */
PyObject *nbc__py_current_context(nbc__py_state *st);
/* Runs fn(arg) inside nbc_require_context (so the C calls fn makes find the current context
 * without asking the driver again) and returns the current Context object, a new reference.
 * NULL with the exception set when the context or fn failed, or the object could not be
 * made; the caller then releases whatever fn made. */
PyObject *nbc__py_context_call(nbc__py_state *st, nbc_context_fn fn, void *arg);

/* ======================================================================= stream.c === */
int nbc__py_stream_init(PyObject *module, nbc__py_state *st);
/* A stream argument (0, None, a Stream, an object with __cuda_stream__) as an nbc stream:
 * *pstream is NULL for the default stream; *ptemp is set when a temporary wrapper was made
 * that the caller must nbc_stream_destroy. Returns -1 with TypeError otherwise. */
int nbc__py_stream_arg(nbc__py_state *st, PyObject *obj, nbc_stream_t **pstream,
                       nbc_stream_t **ptemp);
/* external_stream(handle).synchronize(), the method looked up on the Stream class as numba
 * calls it (CUDA Array Interface v3: a consumer synchronizes the producer's stream). */
int nbc__py_stream_sync_external(nbc__py_state *st, uintptr_t handle);
/* default_stream(): a Stream object for the current context's default stream. */
PyObject *nbc__py_default_stream(nbc__py_state *st);
/* A generic context manager object running C functions on enter and exit (used by
 * profiling() and auto_synchronize()). */
typedef PyObject *(*nbc__py_scope_fn)(PyObject *target);
PyObject *nbc__py_scope_new(nbc__py_state *st, nbc__py_scope_fn enter, nbc__py_scope_fn exit,
                            PyObject *target);

/* ======================================================================== event.c === */
int nbc__py_event_init(PyObject *module, nbc__py_state *st);

/* ==================================================================== profiling.c === */
int nbc__py_profiling_init(PyObject *module, nbc__py_state *st);

/* ==================================================================== numpy_api.c === */
/* The numpy module (imported once, with its C API table); a borrowed reference, NULL with
 * ImportError. */
PyObject *nbc__py_numpy(nbc__py_state *st);
/* A new uninitialised numpy array of dtype (a numpy dtype object) and shape, C or F order;
 * NULL with an exception. */
PyObject *nbc__py_numpy_empty(nbc__py_state *st, PyObject *dtype, int ndim, const int64_t *shape,
                              int fortran);
/* An exact numpy.ndarray's memory and geometry read from the array itself, no buffer export:
 * 1 with *view filled (view->obj NULL: the caller keeps obj alive while it uses the view;
 * PyBuffer_Release does nothing), 0 when obj must go through the buffer protocol (not an
 * exact ndarray, unaligned, read-only but writable asked, C API table not usable). */
int nbc__py_numpy_view(nbc__py_state *st, PyObject *obj, int writable, int itemsize,
                       Py_buffer *view);
/* 1 when obj is an exact ndarray whose memory numpy itself allocated (the array, or the one
 * it views, owns its data) and nbcuda did not page-lock (cuda.pinned): ordinary pageable
 * memory, which copies from the device reach faster through nbcuda's staging buffer; 0 when
 * it may be page-locked (pinned_array, mapped_array, another library's memory) or unknown. */
int nbc__py_numpy_pageable(nbc__py_state *st, PyObject *obj);
/* obj.dtype; for an exact ndarray read from the array itself. A new reference. */
PyObject *nbc__py_numpy_dtype_of(nbc__py_state *st, PyObject *obj);
/* The kind letter of a numpy array's dtype ('f', 'V', ...), read from its descriptor when
 * the C API table is usable, else from obj.dtype.kind; 0 when obj is not a numpy array (or
 * numpy was not imported yet). No exception is left set. */
char nbc__py_numpy_kind(nbc__py_state *st, PyObject *obj);
/* A host object's numpy dtype: obj.dtype when that is a numpy dtype, else the dtype numpy
 * reads from the object (numpy.asarray(obj).dtype: a memoryview's format). A new reference,
 * or NULL with an exception. */
PyObject *nbc__py_host_dtype(nbc__py_state *st, PyObject *obj);
/* 0 when a 'V'-kind numpy dtype can be a device array's element (a structured dtype, or raw
 * bytes such as numpy.dtype('V8')); -1 with TypeError for a subarray dtype
 * (numpy.dtype((numpy.float32, 3))) or one holding Python objects. */
int nbc__py_record_check(PyObject *dtype);
/* 0 unless the numpy dtype holds Python objects: then -1 with TypeError saying they cannot live
 * in `memory` ("device", "pinned", ...) memory, whose bytes are no objects' references. */
int nbc__py_objects_check(PyObject *dtype, const char *memory);
/* The numpy dtype of an imported __cuda_array_interface__ whose typestr is "|V<itemsize>":
 * from descr (fields, offsets and padding, as numpy's dtype.descr lists them), or raw bytes
 * (numpy.dtype(typestr)) when descr is NULL, None or the default [('', typestr)]. A new
 * reference, or NULL with TypeError when descr's size is not itemsize or the dtype is
 * refused (nbc__py_record_check). */
PyObject *nbc__py_record_from_cai(nbc__py_state *st, PyObject *typestr, PyObject *descr,
                                  int itemsize);

/* ================================================================== devicearray.c === */
/* A tuple of n ints; NULL with an exception. */
PyObject *nbc__py_int64_tuple(const int64_t *v, int n);
/* ctypes.c_size_t(value): numba's device_ctypes_pointer. */
PyObject *nbc__py_ctypes_size_t(unsigned long long value);
/* numba's memory_size_from_info: the bytes from the lowest to past the highest byte an index
 * of shape/strides reaches (0 when an extent is 0); -1, no exception set, when that does not
 * fit in int64. */
int nbc__py_extent(int ndim, const int64_t *shape, const int64_t *strides, int64_t itemsize,
                   int64_t *pbytes);
int nbc__py_devicearray_init(PyObject *module, nbc__py_state *st);
/* The numpy dtype of an nbcuda device array (for a structured one the exact dtype it was
 * made with: fields, offsets, padding); a new reference, or NULL with TypeError when obj is
 * not an nbcuda DeviceNDArray (other objects: their `dtype` attribute). */
PyObject *nbc__py_array_dtype(nbc__py_state *st, PyObject *obj);
/* For a dtype of kind 'V' (records, raw bytes), cai["descr"] = dtype.descr: the interface's
 * typestr is only "|V<n>", and an importer rebuilds the fields from descr (with the padding
 * entries numpy lists). Nothing for other kinds. 0, or -1 with an exception. */
int nbc__py_cai_set_descr(PyObject *cai, PyObject *dtype);
/* nbytes of device memory (none for 0: the NULL pointer, as numba) in the current context:
 * the Context object (a new reference), *pptr and *pctx; NULL with the error set. With an
 * EMM plugin (set_memory_manager) the plugin allocates: *powner is what its memalloc gave (a
 * new reference, which owns the memory: nbcuda frees nothing), else NULL. */
PyObject *nbc__py_device_alloc(nbc__py_state *st, size_t nbytes, nbc_devptr_t *pptr,
                               nbc_context_t **pctx, PyObject **powner);
/* ========================================================================== emm.c === */
/* numba's External Memory Management plugins: set_memory_manager, the base classes and
 * MemoryInfo, made at import (no module __getattr__: see emm.c). */
int nbc__py_emm_init(PyObject *module, nbc__py_state *st);
/* 1 when a plugin allocates device memory (set, or named by NUMBA_CUDA_MEMORY_MANAGER), 0 when
 * nbcuda does, -1 on error (the named module cannot be imported). */
int nbc__py_emm_active(nbc__py_state *st);
/* The plugin's memalloc(size) in context (a Context): its MemoryPointer (new reference) with
 * *pptr its address; NULL with the error set. */
PyObject *nbc__py_emm_memalloc(nbc__py_state *st, PyObject *context, size_t size,
                               nbc_devptr_t *pptr);
/* The plugin serving context gets reset() (Context.reset, close) and is dropped; 0 or -1. */
int nbc__py_emm_reset(PyObject *context);
/* Context.memory_manager: the plugin instance serving context (a plugin is set; made on first
 * use), or a new NumbaCUDAMemoryManager(context=context), nbcuda's own, delegating to the
 * context; a new reference or NULL. */
PyObject *nbc__py_emm_manager(nbc__py_state *st, PyObject *context);
PyObject *nbc__py_emm_own_manager(nbc__py_state *st, PyObject *context);
/* context.c: a Context object's C context, and its plugin slot (emm.c). */
nbc_context_t *nbc__py_context_handle(PyObject *context);
PyObject **nbc__py_context_manager_slot(PyObject *context);

/* ===================================================================== deallocs.c === */
/* Context.deallocations: the context's frees queued by defer_cleanup() plus its blocks kept
 * for reuse, numba's _PendingDeallocs (len, clear, disable, is_disabled). */
int nbc__py_deallocs_init(PyObject *module, nbc__py_state *st);
PyObject *nbc__py_deallocs_new(nbc__py_state *st, PyObject *context);

/* A view of any array argument for a kernel launch: device memory, element, geometry. */
#define NBC__PY_MAXDIM 32
typedef struct nbc__py_array_view {
  nbc_devptr_t data;
  char kind;         /* numpy kind letter */
  int itemsize;
  const char *datetime; /* kinds 'M' and 'm': numba's name of the element ("datetime64[D]",
                         * static), which says the unit; NULL for other kinds */
  int ndim;
  int64_t shape[NBC__PY_MAXDIM];
  int64_t strides[NBC__PY_MAXDIM];
  /* Set when the argument was a host array copied to the device for the launch: the
   * launcher copies it back and frees the device copy afterwards. */
  PyObject *host;    /* the host object (new reference) */
  Py_buffer buffer;  /* its buffer, held until the copy back */
  size_t nbytes;
  int copy_back;     /* 0 for a host array wrapped in cuda.In */
  /* the stream an object's __cuda_array_interface__ names (0: none, or CUDA_ARRAY_INTERFACE_SYNC
   * off): the launch's stream waits for the work queued there so far */
  uintptr_t producer;
  /* what an object's __dlpack__ gave (devicearray_dlpack.c): held until the view is finished,
   * which gives the tensor back to its producer; NULL for other arguments */
  PyObject *owner;
} nbc__py_array_view;
/* Fills *view for obj: an nbcuda device array (fast path), an object with __dlpack__ whose
 * __dlpack_device__ says CUDA memory (asked with DLPack stream number `stream`, -1: no
 * ordering), an object with __cuda_array_interface__, or a host buffer (copied to the
 * device), any of them possibly wrapped in cuda.In/Out/InOut (arghint.c). 0 on success, -1
 * with an exception set; on success the caller calls nbc__py_array_view_finish.
 * nbc__py_array_view_get is nbc__py_array_view_get_on with stream -1. */
int nbc__py_array_view_get_on(nbc__py_state *st, PyObject *obj, intptr_t stream,
                              nbc__py_array_view *view);
int nbc__py_array_view_get(nbc__py_state *st, PyObject *obj, nbc__py_array_view *view);
/* The view of an object with __dlpack__ (devicearray_dlpack.c): 1 with *view filled and
 * view->owner holding the tensor, 0 when obj is not CUDA memory through DLPack (no
 * __dlpack_device__, a host device type, an exact numpy array), -1 with an exception. */
int nbc__py_dlpack_view(nbc__py_state *st, PyObject *obj, intptr_t stream,
                        nbc__py_array_view *view);
/* The DLPack stream number of a stream (NULL: the default stream): its handle, or for the
 * default stream 1 (legacy) or 2 (per-thread default stream builds). */
uintptr_t nbc__py_dlpack_stream(nbc_stream_t *s);
/* The view of a __cuda_array_interface__ dict (its stream in view->producer when
 * CUDA_ARRAY_INTERFACE_SYNC); 0, or -1 with an exception set. Nothing to finish. */
int nbc__py_cai_view(nbc__py_state *st, PyObject *cai, nbc__py_array_view *view);
/* numba's layout of an array's geometry: 'C' when C-contiguous (1-D and 0-d included), 'F'
 * when Fortran-contiguous with 2 or more dimensions, else 'A'; that of a view. */
char nbc__py_layout(int ndim, int64_t itemsize, const int64_t *shape, const int64_t *strides);
char nbc__py_view_layout(const nbc__py_array_view *v);
/* Copies a host argument back and releases what the view holds; -1 with an exception set
 * when the copy failed (the view is released either way). */
int nbc__py_array_view_finish(nbc__py_state *st, nbc__py_array_view *view, int copy_back);
/* numpy kind letter of a buffer format ("f", "<d", "?", "Zf"; 'V' for a structured one,
 * "T{d:a:i:b:}", or raw bytes, "8x"); 0 if unknown. */
char nbc__py_format_kind(const char *format, Py_ssize_t itemsize);

/* ================================================================== exec_source.c === */
/* Installs the audit hook that keeps the texts of compiled strings (once per process, main
 * interpreter): 0, or -1 with an exception set. */
int nbc__py_exec_source_init(void);
/* The lines (ends kept) of the kept text that the function of this code object was made
 * from by exec() or compile() of a string: a new list, or NULL without an exception when
 * none is known. */
PyObject *nbc__py_exec_source_lines(PyObject *code);
/* Whether lines (a file's text as linecache gives it, ends kept) still hold the code object
 * Python runs: 1 when they do (or cannot be checked: no lines), 0 when the file was changed
 * since, -1 with an exception set. */
int nbc__py_source_is_current(PyObject *code, PyObject *lines);

/* ====================================================================== compile.c === */
/* numba's jit(inline=...): 1 for "always" (or True), 0 for "never", None or a callable,
 * -1 with ValueError otherwise. */
int nbc__py_inline_always(PyObject *inline_option);
int nbc__py_compile_init(PyObject *module, nbc__py_state *st);

/* ======================================================================= source.c === */
/* The name a lambda is compiled under: `def <lambda>` is not Python. */
#define NBC__PY_LAMBDA_NAME "_lambda_"
/* inspect.getsourcelines(f): (lines, first line), for a function made by exec() or compile()
 * of a string from the text nbcuda kept of it (exec_source.c); NULL with inspect's OSError
 * when there is none (or another exception). */
PyObject *nbc__py_source_lines(PyObject *f);
/* The name f's def has in its source (its code's co_name); a new reference or NULL. */
PyObject *nbc__py_source_name(PyObject *f);
/* The dedented source of f, its first line, the columns removed, its file and name; the new
 * references are appended to keep (alive until the compile returns), and f to *ptextless (a
 * list made on first use) when no file holds its text. -1 with an exception set. */
int nbc__py_function_source(PyObject *keep, PyObject **ptextless, PyObject *f,
                            const char **ptext, int *pline, int *pcol, const char **pfile,
                            const char **pname);
/* Compiles pyfunc (a Python function) for sig with the options; a new reference to the
 * result object is not made here: *presult is the C result (caller destroys). Returns 0,
 * or -1 with the Python exception set. */
/* The current device's compute capability (a context is made current as needed): 0, or -1
 * with the exception set. */
int nbc__py_current_cc(nbc__py_state *st, int *pmajor, int *pminor);
int nbc__py_compile_function(nbc__py_state *st, PyObject *pyfunc, const char *sig,
                             const nbc_compile_options_t *options,
                             nbc_compile_result_t **presult);
/* What compiling a function gives besides its code; nbc__py_compiled_clear releases it. */
typedef struct nbc__py_compiled {
  PyObject *links; /* files the declare_device() functions it calls link (a list of str) */
  int cooperative; /* one of them was declared use_cooperative=True */
  /* a debug=True kernel's exception table: a tuple holding for each raise site (code i + 1)
   * (class or None, args tuple or None, (function, absolute file, line) or None), the
   * classes looked up as the raising function sees them (TypingError when one is not an
   * exception class); NULL when it has no raise site */
  PyObject *raises;
  /* the global device arrays whose addresses the code holds (a list): whoever keeps the code
   * keeps them, as numba-cuda's code library references them */
  PyObject *referenced;
} nbc__py_compiled;
/* nbc__py_compile_function, also filling *extras (zeroed first; clear it after use). */
int nbc__py_compile_function_extras(nbc__py_state *st, PyObject *pyfunc, const char *sig,
                                    const nbc_compile_options_t *options,
                                    nbc_compile_result_t **presult, nbc__py_compiled *extras);
void nbc__py_compiled_clear(nbc__py_compiled *extras);
/* Runs nbcuda's own Python kernel source (cuda.reduce's kernel, nbcuda.random's device
 * functions) in ns, registered in linecache under filename so the compiler reads the
 * functions it defines like any others. 0, or -1 with an exception set. */
int nbc__py_run_source(const char *source, PyObject *filename, PyObject *ns);
/* library.c: library kernel `name` (nbc_library_kernel_source), or NULL with a RuntimeError;
 * and a template among them filled (nbc_library_kernel_fill) as a str, or NULL with the
 * status's exception. */
const char *nbc__py_library_source(const char *name);
PyObject *nbc__py_library_fill(nbc__py_state *st, const char *name, const char *const *pairs);
/* Options of compile() from its keyword arguments (debug, lineinfo, fastmath, opt, cc). */

/* ======================================================================= kernel.c === */
int nbc__py_kernel_init(PyObject *module, nbc__py_state *st);

/* =================================================================== hostmemory.c === */
/* Contiguous strides (order 'C' or 'F') of a tuple of ints, as a tuple; NULL with numpy's
 * too-big ValueError when the bytes overflow (nonzero extents of an empty shape count too). */
PyObject *nbc__py_dense_strides(PyObject *shape, Py_ssize_t itemsize, char order);
/* numba's *_array_like: module.fname(shape=, dtype=, strides=, order=) in ary's own layout,
 * plus the keywords in extra (or NULL); a new reference, NULL with an exception. */
PyObject *nbc__py_like_call(PyObject *module, const char *fname, PyObject *ary,
                            PyObject *extra);
/* pinned/mapped/managed arrays, pinned(), mapped(), defer_cleanup(). */
int nbc__py_hostmem_init(PyObject *module, nbc__py_state *st);
/* with defer_cleanup(): in context, or NULL for the current context when the block starts. */
PyObject *nbc__py_defer_cleanup(PyObject *module, nbc_context_t *context);

/* =================================================================== intrinsics.c === */
/* The kernel language's names on the module (nbcuda.grid, nbcuda.atomic.add, ...): stubs
 * that raise when called from host code, made from nbc_kernel_names(). */
int nbc__py_intrinsics_init(PyObject *module, nbc__py_state *st);
/* The name after "cuda." ("grid", "atomic.add") when obj is one of those stubs, or NULL;
 * it lives as long as obj. */
const char *nbc__py_stub_name(nbc__py_state *st, PyObject *obj);

/* ====================================================================== arghint.c === */
/* cuda.In, cuda.Out, cuda.InOut. */
int nbc__py_arghint_init(PyObject *module, nbc__py_state *st);
/* Whether obj is one of them: 1 with the wrapped value (borrowed) and which copies the
 * launch makes of a host array, else 0. */
int nbc__py_arg_hint(nbc__py_state *st, PyObject *obj, PyObject **pvalue, int *pcopy_in,
                     int *pcopy_out);

/* ======================================================================= random.c === */
/* nbcuda.random (numba.cuda.random's generators), a submodule in sys.modules. */
/* enums.c: enum.Enum classes and members (1/0, or -1 with the error set); a class's
 * identity "module.QualName" (new reference); an Enum class (or the class of a member) as a
 * resolver answer (NBC_GLOBAL_ENUM, or ENUM_MEMBER with the member's index; values that are
 * not ints, floats or tuples of them given as OTHER, for the compiler to refuse), strings and
 * arrays kept alive in keep;
 * a member's kernel argument type, "Enum<int64>(module.QualName)", from value_text, the
 * kernel argument type of each member's value (kernel.c's typeof), which must be one. */
int nbc__py_is_enum_class(PyObject *obj);
int nbc__py_is_enum_member(PyObject *obj);
PyObject *nbc__py_enum_class_name(PyObject *cls);
/* The type of a member of enum class cls whose value type is value_type ("int64"):
 * "Enum<int64>(module.QualName)", "IntEnum<...>(...)" for an IntEnum (numba's EnumMember,
 * IntEnumMember); a new reference or NULL. */
PyObject *nbc__py_enum_type_text(PyObject *cls, const char *value_type);
/* 1 when obj is an IntEnum member (an int that is an enum member), 0 when not, -1 on error. */
int nbc__py_is_int_enum_member(PyObject *obj);
int nbc__py_enum_describe(PyObject *cls, PyObject *keep, nbc_global_t *g);
int nbc__py_enum_member_describe(PyObject *member, PyObject *keep, nbc_global_t *g);
PyObject *nbc__py_enum_arg_text(PyObject *member, PyObject *(*value_text)(PyObject *value,
                                                                          void *data),
                                void *data);
/* config.c: the nbcuda.config module; its CUDA_NVRTC_EXTRA_SEARCH_PATHS (a new reference to
 * a str, or NULL with the error set). */
int nbc__py_config_init(PyObject *module, nbc__py_state *st);
PyObject *nbc__py_nvrtc_search_paths(nbc__py_state *st);
/* A jit() or compile() call's debug and opt: the truth of the value given, or when it gives
 * none (NULL or None) numba's config default, CUDA_DEBUGINFO_DEFAULT and OPT != 0; 1, 0,
 * or -1 with an exception set. */
int nbc__py_debug_option(nbc__py_state *st, PyObject *given);
int nbc__py_opt_option(nbc__py_state *st, PyObject *given);
/* Whether nbcuda.config's setting `name` is true now (absent or not answering: false). */
int nbc__py_config_on(nbc__py_state *st, const char *name);
/* config.COMPILE_TIME_LIMIT in seconds (0: none): 0, or -1 with TypeError / ValueError. */
int nbc__py_compile_time_limit(nbc__py_state *st, double *pseconds);
/* dump.c: numba's DUMP_LLVM / DUMP_ASSEMBLY. nbc__py_dump_options: the options of a
 * compilation with keep_ir set when config.DUMP_LLVM asks for its IR. nbc__py_dump_compiled:
 * after it, the IR and the PTX printed to sys.stdout as numba prints them, each under a
 * "LLVM DUMP <name>" / "ASSEMBLY <name>" rule (name: the function's __qualname__); 0, or -1
 * with an exception set. Compilations that stop at the IR (inspect_llvm) print nothing. */
nbc_compile_options_t nbc__py_dump_options(nbc__py_state *st, const nbc_compile_options_t *o);
int nbc__py_dump_compiled(nbc__py_state *st, PyObject *func, const nbc_compile_options_t *o,
                          const nbc_compile_result_t *result);
int nbc__py_random_init(PyObject *module, nbc__py_state *st);

/* ======================================================================== cache.c === */
/* jit(cache=True): one compilation's cache entry (the kernel layer's nbc_cache_entry_t). */
typedef struct nbc__py_cache_slot {
  nbc_cache_entry_t *entry; /* NULL: not cached */
  const char *uncacheable;  /* why the function cannot be kept (its closure), or NULL */
} nbc__py_cache_slot;
/* 0 when py_func has a source file to cache for; else numba's RuntimeError. */
int nbc__py_cache_check(PyObject *py_func);
/* The slot of py_func's compilation for sig and o (no entry when it cannot be cached; the
 * reason in uncacheable when it is its closure): where nbc__py_cache_store writes. Never
 * raises; the slot is freed with nbc__py_cache_slot_free. */
void nbc__py_cache_slot_make(nbc__py_state *st, PyObject *py_func, const char *sig,
                             const nbc_compile_options_t *o, nbc__py_cache_slot *slot);
/* 1 with the cached result of py_func for sig and o when the cache holds a current one;
 * 0 on a miss (the slot says where the result goes: nbc__py_cache_store after compiling).
 * Never raises. The slot is freed with nbc__py_cache_slot_free either way. */
int nbc__py_cache_load(nbc__py_state *st, PyObject *py_func, const char *sig,
                       const nbc_compile_options_t *o, nbc__py_cache_slot *slot,
                       nbc_compile_result_t **presult);
void nbc__py_cache_store(const nbc__py_cache_slot *slot, const nbc_compile_result_t *result);
void nbc__py_cache_slot_free(nbc__py_cache_slot *slot);
/* The directory py_func's cache files go to (stats.cache_path), or None. */
PyObject *nbc__py_cache_path(PyObject *py_func);

/* ======================================================================= reduce.c === */
/* cuda.reduce / cuda.Reduce. */
int nbc__py_reduce_init(PyObject *module, nbc__py_state *st);

/* ========================================================================== ipc.c === */
/* IpcHandle, IpcArrayHandle, open_ipc_array and the unpickler's _rebuild_ipc_handle. */
/* declared.c: declare_device() and its objects. 1 with the symbol, signature, link tuple
 * (borrowed), use_cooperative and whether it has the C ABI when obj is one, 0 when not, -1
 * on error. */
int nbc__py_declared_init(PyObject *module, nbc__py_state *st);
int nbc__py_declared(nbc__py_state *st, PyObject *obj, const char **pname, const char **psig,
                     PyObject **plink, int *pcooperative, int *pc_abi);
/* link.c: links the kernel's code (LTO-IR when lto is set, else PTX) with the files (a tuple
 * of str) for the current device and loads the result; -1 with the error set. */
int nbc__py_link_load(nbc__py_state *st, const char *code, size_t size, int lto,
                      PyObject *links, const nbc_module_load_options_t *options,
                      nbc_module_t **pmodule);
/* The same linked code as a cubin (bytes) for the current device, loaded nowhere (links may
 * be NULL: the code alone); NULL with the error set. */
PyObject *nbc__py_link_cubin(nbc__py_state *st, const char *code, size_t size, int lto,
                             PyObject *links, const nbc_module_load_options_t *options);
/* The same link to PTX (nvJitLink -ptx; a str): numba's inspect_lto_ptx. */
PyObject *nbc__py_link_ptx(nbc__py_state *st, const char *code, size_t size, int lto,
                           PyObject *links, const nbc_module_load_options_t *options);
/* sass.c: nvdisasm's output for a cubin with flag "-gi" (numba's inspect_sass: the listing)
 * or "-cfg" (inspect_sass_cfg: the control flow graph in DOT); nvdisasm is looked for on
 * PATH, in the toolkit and in a Python-packaged toolkit. */
PyObject *nbc__py_disassemble(nbc__py_state *st, PyObject *cubin, const char *flag);
/* The whole file through io.open(path, mode).read() (OSError naming the file on failure; the
 * file is closed also after a failed read). */
PyObject *nbc__py_read_file(PyObject *path, const char *mode);
/* A link= argument (None, a path or LinkableCode, a sequence of them) as a tuple of str and
 * LinkableCode objects; NULL with TypeError. */
PyObject *nbc__py_link_paths(nbc__py_state *st, PyObject *link);
/* numba's compile_all: the code of each file in links (a tuple or list of paths and
 * LinkableCode objects), in order — CUDA C++ compiled by NVRTC for sm_<major><minor> with
 * nbc_nvrtc_compile's flags into a PTXSource (an LTOIR with NBC_NVRTC_LTO) named after it, the
 * rest as LinkableCode (from_path for a path) — then, when fp16 is set, the fp16 wrappers'
 * shim compiled the same way. A new list; NULL with the exception set. */
PyObject *nbc__py_link_codes(nbc__py_state *st, PyObject *module, PyObject *links, int fp16,
                             int major, int minor, unsigned flags);
/* linkable.c: LinkableCode and its subclasses (PTXSource, CUSource, ...). 1 when obj is one,
 * with its kind ("ptx", "cu", "cubin", "fatbin", "ltoir", "o", "a": static), its data as bytes
 * and its name (new references); 0 when not; -1 on error. */
int nbc__py_linkable_init(PyObject *module, nbc__py_state *st);
/* typesdict.c: a new empty dict keyed by tuples of types whose lookups also take numba's
 * type objects (kernels' overloads, inspect_* and resource dicts). */
PyObject *nbc__py_types_dict_new(nbc__py_state *st);
int nbc__py_typesdict_init(PyObject *module, nbc__py_state *st);
int nbc__py_serialize_init(PyObject *module, nbc__py_state *st);
/* What pickles an object a decorator of the module made from func (vectorize, guvectorize):
 * unpickling calls nbcuda.<decorator>(sigs' texts[, layout], identity=identity)(func)
 * (serialize.c); layout NULL for vectorize. */
PyObject *nbc__py_decorated_reduce(PyObject *self, const char *decorator, PyObject *sigs,
                                   PyObject *layout, PyObject *identity, PyObject *func);
/* ======================================================================== dask.c === */
/* Where distributed is loaded, its lazy registrations of nbcuda's device arrays (importing
 * nbcuda.dask on first use); never fails. */
int nbc__py_dask_init(PyObject *module, nbc__py_state *st);
int nbc__py_linkable(nbc__py_state *st, PyObject *obj, const char **pkind, PyObject **pdata,
                     PyObject **pname);
/* vectorize.c: vectorize() and the GPU ufuncs it makes. */
int nbc__py_vectorize_init(PyObject *module, nbc__py_state *st);
/* Helpers of the ufunc call mechanisms (vectorize.c, gufunc.c), numba's steps:
 * getattr(obj, name)(*args, **kwargs); the same with one positional argument (or none) and
 * stream=; hasattr(obj, "__cuda_array_interface__"); nbcuda arrays as they are, others through
 * as_cuda_array; an attribute as a tuple, or as an int; kernel.forall(n, stream=)(*list),
 * nothing for n == 0 (0 or -1). */
PyObject *nbc__py_call_method_kw(PyObject *obj, const char *name, PyObject *args,
                                 PyObject *kwargs);
PyObject *nbc__py_call_with_stream(PyObject *obj, const char *name, PyObject *arg,
                                   PyObject *stream);
int nbc__py_is_device_array(nbc__py_state *st, PyObject *obj);
PyObject *nbc__py_as_device_array(nbc__py_state *st, PyObject *module, PyObject *obj);
PyObject *nbc__py_attr_tuple(PyObject *obj, const char *name);
Py_ssize_t nbc__py_attr_ssize(PyObject *obj, const char *name);
int nbc__py_forall_launch(PyObject *kernel, Py_ssize_t n, PyObject *stream, PyObject *args);
/* A ufunc signature (str, type objects, ...) as text and parsed; -1 with the error set. */
int nbc__py_parse_signature(nbc__py_state *st, PyObject *sig, PyObject **ptext,
                            nbc_signature_t **psig);
/* numba's parse_identity: None, 0, 1 or "reorderable". */
int nbc__py_identity_ok(PyObject *identity);
/* A device array over ary's memory with the given shape and strides (numba's
 * DeviceNDArray(shape, strides, dtype, gpu_data=ary.gpu_data)), keeping ary alive. */
PyObject *nbc__py_restrided(nbc__py_state *st, PyObject *module, PyObject *ary,
                           PyObject *shape, PyObject *strides);
/* The function's name if it is an identifier (it names the kernel), else "ufunc". */
PyObject *nbc__py_kernel_name(PyObject *name);
/* Compiles a kernel written as Python text (numba's ufunc templates): source runs in a copy of
 * py_func's globals with __cuda__ (the module) and __core__ (py_func as a device function)
 * added, under filename (registered in linecache); the function stager_name it defines is
 * jitted with the signature ksig. A new reference, or NULL. */
PyObject *nbc__py_stage_kernel(PyObject *module, PyObject *py_func, PyObject *source,
                               PyObject *stager_name, PyObject *filename, PyObject *ksig);
/* gufunc.c: guvectorize() and the generalized GPU ufuncs it makes. */
int nbc__py_gufunc_init(PyObject *module, nbc__py_state *st);
/* memorypointer.c: MemoryPointer (Context.memalloc, DeviceNDArray.gpu_data). */
int nbc__py_memptr_init(PyObject *module, nbc__py_state *st);
/* A MemoryPointer owning [ptr, ptr + size) of nbc_mem_alloc'd memory of cctx (its Context
 * object: context), freed when the pointer is freed or dies. */
PyObject *nbc__py_memptr_owned(nbc__py_state *st, PyObject *context, nbc_context_t *cctx,
                               nbc_devptr_t ptr, size_t size);
/* Whether obj is a MemoryPointer; if so, its address and size in bytes. */
int nbc__py_memptr_range(nbc__py_state *st, PyObject *obj, nbc_devptr_t *pptr, size_t *psize);
/* A MemoryPointer over [ptr, ptr + size) that keeps owner (which keeps the memory) alive;
 * owner NULL: the pointer owns the memory (nbc__py_memptr_owned). */
PyObject *nbc__py_memptr_view(nbc__py_state *st, PyObject *owner, PyObject *context,
                              nbc_context_t *cctx, unsigned lifetime, nbc_devptr_t ptr,
                              size_t size);
int nbc__py_ipc_init(PyObject *module, nbc__py_state *st);
/* DeviceNDArray.get_ipc_handle() (METH_NOARGS): an IpcArrayHandle of the array's memory. */
PyObject *nbc__py_ipc_array_get_handle(PyObject *array, PyObject *unused);
/* Context.get_ipc_handle(memory) (METH_O): an IpcHandle of memory (a MemoryPointer, as
 * numba's array.gpu_data, or an object with __cuda_array_interface__) in that context. */
PyObject *nbc__py_ipc_context_get_handle(PyObject *context, PyObject *memory);

/* compile.c: numba's launch_bounds argument (None, an int, or a tuple of one to three ints)
 * into o->launch_bounds; -1 with an exception set when it is malformed. */
int nbc__py_launch_bounds(PyObject *bounds, nbc_compile_options_t *o);

#endif /* NBCUDA_PY_H */
