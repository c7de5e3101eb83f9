/* compile.c — compile(), compile_ptx() and their *_for_current_device variants: a real
 * Python function compiled by the C compiler (nbc_compile) to PTX or LTO-IR.
 *
 * What goes to the compiler: the function's source from inspect.getsourcelines (decorators
 * included, dedented, with the first line number and the columns removed so diagnostics
 * point into the real file), its file name, its __name__, and a resolver for the global
 * names the body uses. A lambda is given as `def _lambda_(params): return (body)`, its body
 * cut out of its file's text with ast (on the lambda's first line, with its parameters),
 * the def placed one line above the lambda's so diagnostics name the lambda's line.
 *
 * The resolver looks names up in the function's closure cells, then its __globals__ (names
 * found in neither are left to the compiler: builtins such as range/abs/min). It answers:
 * modules math and cuda (nbcuda itself or numba.cuda, by identity or module name), numeric
 * constants (int, float, bool, numpy scalars), numpy arrays of numbers (frozen into the code
 * as constant memory, as numba does: NBC_GLOBAL_ARRAY), device arrays (ours or any object with
 * __cuda_array_interface__, captured by address as numba-cuda does: NBC_GLOBAL_DEVICE_ARRAY,
 * kept alive by the kernel), math functions imported by name, numba type
 * objects (nbcuda.float32 or numba's own), kernel-language names bound without the module
 * (`from nbcuda import grid`: nbcuda's stubs, or numba's from numba.cuda.stubs and
 * numba.cuda.intrinsics, as NBC_GLOBAL_CUDA_NAME), numpy itself, its scalar types and dtypes
 * (np.float32, np.dtype('float32'): by numpy's name of the type) and ufuncs (np.sqrt: by
 * __name__), recognised by type name without importing numpy, and other Python
 * functions — also those wrapped by cuda.jit(device=True), which keep .py_func — for
 * which it gives their own source, file, first line and a child resolver over THEIR
 * globals, so helpers from other modules resolve in their own namespace.
 *
 * The GIL: nbc_compile runs with the GIL released (libNVVM takes milliseconds to seconds
 * and other Python threads should run meanwhile), and the compiler calls the resolver from
 * inside nbc_compile, on the large-stack thread the compile runs on (a thread Python does not
 * know). The callback therefore re-acquires the GIL with PyGILState_Ensure, which gives that
 * thread a thread state, for the duration of each lookup. Anything the resolver hands out
 * (source text, names) is kept alive in the session's list until nbc_compile returns. A
 * Python exception inside the resolver (e.g. getsource failing for a function defined in
 * the REPL) is saved and, when the compile then fails, raised instead of the compiler's
 * "undefined name" error, because it says why.
 *
 * Validation before compiling follows numba-cuda's order and messages exactly
 * ("Unsupported output type: illegal", "Unsupported ABI: fastcall", "The C ABI is not
 * supported for kernels"); compiler statuses map to TypingError/CompileError/NvvmError in
 * errors.c.
 */
#include "nbcuda_py.h"

#include <stdlib.h>
#include <string.h>

typedef struct session session;

typedef struct resolver_data {
  nbc_resolver_t r;
  nbc__py_state *st;
  PyObject *globals; /* dict (borrowed from the function, kept alive by session->keep) */
  PyObject *closure; /* dict of free variables, or NULL */
  PyObject *func;    /* the function (borrowed, kept alive by session->keep) */
  session *sess;
} resolver_data;

struct session {
  PyObject *keep; /* list of everything handed to the compiler */
  resolver_data **children;
  int nchildren, cap;
  /* the first Python exception raised inside the resolver (PyErr_Fetch triple) */
  PyObject *exc_type, *exc_value, *exc_tb;
  PyObject *links; /* files of the declare_device() functions met (list of str) */
  int cooperative;  /* one of them was declared use_cooperative=True */
  PyObject *referenced; /* global device arrays the code refers to by address (list) */
  PyObject *textless; /* functions whose source no file holds (exec_source.c's), or NULL */
};

/* ------------------------------------------------------------ resolver ---------------- */

/* A numpy array global, which numba freezes into the code as constant memory: its elements
 * in native byte order, in Fortran order when the array is Fortran-contiguous and not C
 * (numba's tobytes(order='A') and layout F), else C order; its dtype's name (for records
 * numba's Record(...) text) and shape (none for a 0-d array), kept in the session. Arrays of
 * other than numbers and records are left as OTHER: the compiler says it cannot use them. */
static int array_global(session *sess, PyObject *value, nbc_global_t *g) {
  PyObject *dtype = PyObject_GetAttrString(value, "dtype");
  PyObject *kind = dtype ? PyObject_GetAttrString(dtype, "kind") : NULL;
  PyObject *name = kind ? PyObject_GetAttrString(dtype, "name") : NULL;
  PyObject *shape = name ? PyObject_GetAttrString(value, "shape") : NULL;
  const char *k = kind ? PyUnicode_AsUTF8(kind) : NULL;
  int rc = shape ? 0 : -1;
  Py_ssize_t ndim = shape && PyTuple_Check(shape) ? PyTuple_GET_SIZE(shape) : 0;
  /* a structured dtype: its elements as they are, named by numba's Record(...) text (which
   * refuses raw bytes and what records cannot hold: strings, objects, other byte orders) */
  int record = rc == 0 && k && k[0] == 'V' && ndim <= 32;
  if (record) {
    Py_SETREF(name, nbc__py_record_text(NULL, dtype));
    if (!name) PyErr_Clear(); /* left OTHER: the compiler says it cannot use it */
    record = name != NULL;
  }
  if (rc == 0 && k && (record || strchr("biufc", k[0])) && ndim <= 32) {
    PyObject *native = record ? Py_NewRef(dtype)
                              : PyObject_CallMethod(dtype, "newbyteorder", "s", "=");
    PyObject *copy = native ? PyObject_CallMethod(value, "astype", "(O)", native) : NULL;
    PyObject *flags = copy ? PyObject_GetAttrString(value, "flags") : NULL;
    PyObject *c_contig = flags ? PyObject_GetAttrString(flags, "c_contiguous") : NULL;
    PyObject *f_contig = c_contig ? PyObject_GetAttrString(flags, "f_contiguous") : NULL;
    char layout = f_contig && c_contig == Py_False && f_contig == Py_True ? 'F' : 'C';
    PyObject *bytes = f_contig ? PyObject_CallMethod(copy, "tobytes", "s", layout == 'F' ? "F"
                                                                                     : "C")
                               : NULL;
    Py_XDECREF(f_contig);
    Py_XDECREF(c_contig);
    Py_XDECREF(flags);
    PyObject *dims = bytes ? PyBytes_FromStringAndSize(NULL, (Py_ssize_t)sizeof(int64_t) * ndim)
                           : NULL;
    int64_t *d = dims ? (int64_t *)PyBytes_AS_STRING(dims) : NULL;
    for (Py_ssize_t i = 0; d && i < ndim; i++) {
      d[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
      if (d[i] == -1 && PyErr_Occurred()) d = NULL;
    }
    rc = d && PyList_Append(sess->keep, bytes) == 0 && PyList_Append(sess->keep, dims) == 0 &&
                 PyList_Append(sess->keep, name) == 0
             ? 0
             : -1;
    if (rc == 0) {
      g->kind = NBC_GLOBAL_ARRAY;
      g->name = PyUnicode_AsUTF8(name);
      g->array_data = PyBytes_AS_STRING(bytes);
      g->array_bytes = (size_t)PyBytes_GET_SIZE(bytes);
      g->array_ndim = (int)ndim;
      g->array_shape = d;
      g->array_layout = layout;
      rc = g->name ? 0 : -1;
    }
    Py_XDECREF(dims);
    Py_XDECREF(bytes);
    Py_XDECREF(copy);
    Py_XDECREF(native);
  }
  Py_XDECREF(shape);
  Py_XDECREF(name);
  Py_XDECREF(kind);
  Py_XDECREF(dtype);
  return rc;
}

/* A global device array — ours, numba's, or any object with __cuda_array_interface__ (CuPy,
 * PyTorch) — which numba-cuda captures by pointer: the code refers to the memory by its
 * address, shape and strides (so it sees later copies into it), and the object goes to
 * sess->referenced, to live as long as the code. Arrays of records, 0-d arrays and arrays
 * nbcuda cannot view stay OTHER: the compiler says it cannot use them. */
static int device_array_global(nbc__py_state *st, session *sess, PyObject *value,
                               nbc_global_t *g) {
  nbc__py_array_view v;
  if (nbc__py_array_view_get(st, value, &v) < 0) {
    PyErr_Clear();
    return 0;
  }
  nbc__py_array_view_finish(st, &v, 0); /* device memory: nothing is held */
  const char *dtype = nbc__py_scalar_name(v.kind, v.itemsize);
  if (!dtype || v.kind == 'V' || v.ndim < 0) return 0;
  int readonly = 0;
  if (Py_TYPE(value) != st->DeviceArrayType) { /* the interface's data = (address, readonly) */
    PyObject *cai = PyObject_GetAttr(value, st->str_cai);
    PyObject *data = cai && PyDict_Check(cai) ? PyDict_GetItemString(cai, "data") : NULL;
    if (data && PyTuple_Check(data) && PyTuple_GET_SIZE(data) > 1)
      readonly = PyObject_IsTrue(PyTuple_GET_ITEM(data, 1)) > 0;
    Py_XDECREF(cai);
    PyErr_Clear();
  }
  PyObject *dims = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)sizeof(int64_t) * 2 * v.ndim);
  if (!dims) return -1;
  int64_t *d = (int64_t *)PyBytes_AS_STRING(dims);
  memcpy(d, v.shape, sizeof(int64_t) * (size_t)v.ndim);
  memcpy(d + v.ndim, v.strides, sizeof(int64_t) * (size_t)v.ndim);
  int seen = 0; /* each name use asks again: the list holds each array once */
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(sess->referenced); i++)
    seen |= PyList_GET_ITEM(sess->referenced, i) == value;
  int rc = PyList_Append(sess->keep, dims) == 0 &&
                   (seen || PyList_Append(sess->referenced, value) == 0)
               ? 0
               : -1;
  Py_DECREF(dims);
  if (rc < 0) return -1;
  g->kind = NBC_GLOBAL_DEVICE_ARRAY;
  g->name = dtype;
  g->value.i = (int64_t)v.data;
  g->array_ndim = v.ndim;
  g->array_shape = d;
  g->array_strides = d + v.ndim;
  g->array_layout = nbc__py_view_layout(&v);
  g->array_readonly = readonly;
  return 0;
}

static int resolve(void *data, const char *name, nbc_global_t *g);

/* A resolver over f's globals and closure, owned by the session. */
static resolver_data *resolver_for(nbc__py_state *st, session *sess, PyObject *f) {
  PyObject *globals = PyObject_GetAttrString(f, "__globals__");
  if (!globals) return NULL;
  if (PyList_Append(sess->keep, globals) < 0) {
    Py_DECREF(globals);
    return NULL;
  }
  Py_DECREF(globals); /* the session's list keeps it alive */
  PyObject *closure = NULL;
  PyObject *cells = PyObject_GetAttrString(f, "__closure__");
  PyObject *code = PyObject_GetAttrString(f, "__code__");
  PyObject *freevars = code ? PyObject_GetAttrString(code, "co_freevars") : NULL;
  Py_XDECREF(code);
  if (cells && cells != Py_None && freevars && PyTuple_Check(cells) && PyTuple_Check(freevars)) {
    closure = PyDict_New();
    for (Py_ssize_t i = 0; closure && i < PyTuple_GET_SIZE(cells) &&
                           i < PyTuple_GET_SIZE(freevars); i++) {
      PyObject *v = PyCell_Get(PyTuple_GET_ITEM(cells, i));
      if (!v) { /* an empty cell: not bound yet */
        PyErr_Clear();
        continue;
      }
      if (PyDict_SetItem(closure, PyTuple_GET_ITEM(freevars, i), v) < 0) Py_CLEAR(closure);
      Py_DECREF(v);
    }
    if (closure && PyList_Append(sess->keep, closure) < 0) Py_CLEAR(closure);
    if (closure) Py_DECREF(closure); /* the session's list holds it */
  }
  Py_XDECREF(cells);
  Py_XDECREF(freevars);
  if (PyErr_Occurred()) return NULL;
  if (sess->nchildren == sess->cap) {
    int cap = sess->cap ? sess->cap * 2 : 8;
    resolver_data **c = realloc(sess->children, sizeof *c * (size_t)cap);
    if (!c) {
      PyErr_NoMemory();
      return NULL;
    }
    sess->children = c;
    sess->cap = cap;
  }
  resolver_data *d = calloc(1, sizeof *d);
  if (!d) {
    PyErr_NoMemory();
    return NULL;
  }
  d->r.resolve = resolve;
  d->r.data = d;
  d->st = st;
  d->globals = globals;
  d->closure = closure;
  d->func = f;
  d->sess = sess;
  sess->children[sess->nchildren++] = d;
  return d;
}

/* Whether m is the cuda module: nbcuda itself, or numba.cuda. */
static int is_cuda_module(nbc__py_state *st, PyObject *m) {
  PyObject *name = PyModule_GetNameObject(m);
  if (!name) {
    PyErr_Clear();
    return 0;
  }
  int is = PyUnicode_Compare(name, st->module_name) == 0 ||
           PyUnicode_CompareWithASCIIString(name, "numba.cuda") == 0;
  Py_DECREF(name);
  return is;
}

/* A kernel-language name bound without the module: nbcuda's stubs (intrinsics.c), and
 * numba-cuda's own objects, the stub classes and functions of numba.cuda.stubs (popc,
 * atomic, atomic.add, shared.array), the @intrinsic objects of numba.cuda.intrinsics
 * (grid, shfl_sync) and the functions of numba.cuda.cache_hints (ldcg, stwt), whose
 * __qualname__ is the name after "cuda.". 1 with g filled when value is one, 0 when not,
 * -1 on a Python error. */
static int cuda_name(resolver_data *d, PyObject *value, nbc_global_t *g) {
  const char *ours = nbc__py_stub_name(d->st, value);
  if (ours) {
    g->kind = NBC_GLOBAL_CUDA_NAME;
    g->name = ours; /* lives with the stub, which the function's globals keep */
    return 1;
  }
  if (!PyType_Check(value) && !PyFunction_Check(value) &&
      strcmp(Py_TYPE(value)->tp_name, "_Intrinsic") != 0)
    return 0;
  PyObject *mod = PyObject_GetAttrString(value, "__module__");
  if (!mod) {
    PyErr_Clear();
    return 0;
  }
  int numba = PyUnicode_Check(mod) &&
              (PyUnicode_CompareWithASCIIString(mod, "numba.cuda.stubs") == 0 ||
               PyUnicode_CompareWithASCIIString(mod, "numba.cuda.intrinsics") == 0 ||
               PyUnicode_CompareWithASCIIString(mod, "numba.cuda.cache_hints") == 0);
  /* numba.cuda.libdevice's functions are plain functions of that module: "libdevice.<f>";
   * numba.cuda.bf16's are those of the bindings numba-cuda generates, named as cuda_bf16.h's
   * ("__hadd"): "bf16.__hadd" */
  int libdevice = PyUnicode_Check(mod) && PyFunction_Check(value) &&
                  PyUnicode_CompareWithASCIIString(mod, "numba.cuda.libdevice") == 0;
  int bf16 = PyUnicode_Check(mod) && PyFunction_Check(value) &&
             PyUnicode_CompareWithASCIIString(mod, "numba.cuda._internal.cuda_bf16") == 0;
  /* numba's carray and farray (numba.carray, numba-cuda's numba.cuda.np.numpy_support's) */
  int numpy_support =
      PyUnicode_Check(mod) && PyFunction_Check(value) &&
      (PyUnicode_CompareWithASCIIString(mod, "numba.np.numpy_support") == 0 ||
       PyUnicode_CompareWithASCIIString(mod, "numba.cuda.np.numpy_support") == 0);
  Py_DECREF(mod);
  if (!numba && !libdevice && !numpy_support && !bf16) return 0;
  PyObject *q = PyObject_GetAttrString(value, "__qualname__");
  if (q && libdevice) Py_SETREF(q, PyUnicode_FromFormat("libdevice.%U", q));
  if (q && bf16) Py_SETREF(q, PyUnicode_FromFormat("bf16.%U", q));
  /* of numpy_support's functions, only those two are kernel-language names */
  int other = numpy_support && q && PyUnicode_Check(q) &&
              PyUnicode_CompareWithASCIIString(q, "carray") != 0 &&
              PyUnicode_CompareWithASCIIString(q, "farray") != 0;
  if (!q || !PyUnicode_Check(q) || other || PyList_Append(d->sess->keep, q) < 0) {
    Py_XDECREF(q);
    PyErr_Clear();
    return 0;
  }
  Py_DECREF(q);
  g->kind = NBC_GLOBAL_CUDA_NAME;
  g->name = PyUnicode_AsUTF8(q);
  return g->name ? 1 : -1;
}

static int classify(resolver_data *d, PyObject *value, nbc_global_t *g);

/* A tuple of numbers (Python's or numpy's), numpy arrays and such tuples, which numba freezes
 * as a constant (the arrays in constant memory): its items in memory the session keeps; OTHER
 * when an item is anything else or there are over 64. */
static int tuple_global(resolver_data *d, PyObject *value, nbc_global_t *g) {
  Py_ssize_t n = PyTuple_GET_SIZE(value);
  if (n > 64) return 0;
  PyObject *store = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)sizeof(nbc_global_t) * (n ? n : 1));
  if (!store || PyList_Append(d->sess->keep, store) < 0) {
    Py_XDECREF(store);
    return -1;
  }
  Py_DECREF(store); /* the session's list keeps it */
  nbc_global_t *items = (nbc_global_t *)PyBytes_AS_STRING(store);
  if (nbc__py_nesting_enter("a global tuple a kernel reads") < 0) return -1;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *item = PyTuple_GET_ITEM(value, i);
    memset(&items[i], 0, sizeof items[i]);
    int rc = !PyNumber_Check(item) && !PyTuple_Check(item) ? 1 : classify(d, item, &items[i]);
    if (rc == 0 && items[i].kind != NBC_GLOBAL_INT && items[i].kind != NBC_GLOBAL_FLOAT &&
        items[i].kind != NBC_GLOBAL_BOOL && items[i].kind != NBC_GLOBAL_TUPLE &&
        items[i].kind != NBC_GLOBAL_ARRAY && items[i].kind != NBC_GLOBAL_COMPLEX)
      rc = 1;
    if (rc) { /* 1: an item the constant cannot hold (OTHER); -1: a Python error */
      nbc__py_nesting_leave();
      return rc < 0 ? -1 : 0;
    }
  }
  nbc__py_nesting_leave();
  g->kind = NBC_GLOBAL_TUPLE;
  g->tuple_items = items;
  g->tuple_count = (int)n;
  return 0;
}

/* A complex number (Python's, or numpy's complex64 / complex128), frozen as numba freezes it:
 * a constant of its type, type_name ("complex64", "complex128"; static). */
static int complex_global(PyObject *value, const char *type_name, nbc_global_t *g) {
  Py_complex c = PyComplex_AsCComplex(value);
  if (c.real == -1.0 && PyErr_Occurred()) return -1;
  g->kind = NBC_GLOBAL_COMPLEX;
  g->name = type_name;
  g->value.f = c.real;
  g->imag = c.imag;
  return 0;
}

/* Whether value is a cffi.FFI object (1), without importing cffi: only when some code has
 * (0 otherwise; -1 on a Python error). */
static int is_cffi_ffi(PyObject *value) {
  PyObject *modules = PySys_GetObject("modules"); /* borrowed */
  PyObject *cffi = modules ? PyDict_GetItemString(modules, "cffi") : NULL;
  if (!cffi) return 0;
  PyObject *cls = PyObject_GetAttrString(cffi, "FFI");
  if (!cls) {
    PyErr_Clear();
    return 0;
  }
  int r = PyType_Check(cls) ? PyObject_IsInstance(value, cls) : 0;
  Py_DECREF(cls);
  return r;
}

/* Fills g for value; 0 on success (kind may be OTHER), -1 on a Python error. */
static int classify(resolver_data *d, PyObject *value, nbc_global_t *g) {
  nbc__py_state *st = d->st;
  session *sess = d->sess;
  PyObject *tname = NULL;
  g->kind = NBC_GLOBAL_OTHER;
  if (PyTuple_Check(value)) return tuple_global(d, value, g);
  if (PyModule_Check(value)) {
    const char *n = PyModule_GetName(value);
    if (!n) return -1;
    if (strcmp(n, "math") == 0)
      g->kind = NBC_GLOBAL_MODULE_MATH;
    else if (strcmp(n, "cmath") == 0)
      g->kind = NBC_GLOBAL_MODULE_CMATH;
    else if (strcmp(n, "operator") == 0)
      g->kind = NBC_GLOBAL_MODULE_OPERATOR;
    else if (strcmp(n, "numpy") == 0)
      g->kind = NBC_GLOBAL_MODULE_NUMPY;
    else if (strcmp(n, "numba") == 0 || strcmp(n, "numba.types") == 0 ||
             strcmp(n, "numba.core.types") == 0 || strcmp(n, "numba.cuda.types") == 0 ||
             strcmp(n, "nbcuda.types") == 0)
      g->kind = NBC_GLOBAL_MODULE_NUMBA;
    else if (is_cuda_module(st, value))
      g->kind = NBC_GLOBAL_MODULE_CUDA;
    else if (strcmp(n, "numba.cuda.libdevice") == 0) { /* from numba.cuda import libdevice */
      g->kind = NBC_GLOBAL_CUDA_NAME;
      g->name = "libdevice";
    } else { /* any other module: the code reaches into it as "mod.attr" (resolve_locked) */
      g->kind = NBC_GLOBAL_MODULE;
      g->name = n;
    }
    return 0;
  }
  int named = cuda_name(d, value, g);
  if (named) return named < 0 ? -1 : 0;
  if (value == Py_None) {
    g->kind = NBC_GLOBAL_NONE;
    return 0;
  }
  if (PyBool_Check(value)) {
    g->kind = NBC_GLOBAL_BOOL;
    g->value.i = value == Py_True;
    return 0;
  }
  int member = nbc__py_is_int_enum_member(value); /* Shape.circle: not an int constant */
  if (member) return member < 0 ? -1 : nbc__py_enum_member_describe(value, sess->keep, g);
  if (PyLong_Check(value)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (!overflow) {
      g->kind = NBC_GLOBAL_INT;
      g->value.i = v;
    }
    return PyErr_Occurred() ? -1 : 0;
  }
  if (PyFloat_Check(value)) {
    g->kind = NBC_GLOBAL_FLOAT;
    g->value.f = PyFloat_AS_DOUBLE(value);
    return 0;
  }
  if (PyComplex_Check(value)) /* 1j, complex(a, b), numpy.complex128 (a complex subclass) */
    return complex_global(value, "complex128", g);
  if (PyType_Check(value)) { /* np.float32 & co: subclasses of numpy.generic */
    const PyTypeObject *t = (const PyTypeObject *)value;
    /* ml_dtypes.bfloat16, numba-cuda's bfloat16 as it types ml_dtypes' and CuPy's arrays */
    const char *dot = strrchr(t->tp_name, '.');
    int bf16 = strcmp(dot ? dot + 1 : t->tp_name, "bfloat16") == 0;
    for (const PyTypeObject *b = t; b; b = b->tp_base)
      if (strcmp(b->tp_name, "numpy.generic") == 0 &&
          (strncmp(t->tp_name, "numpy.", 6) == 0 || bf16)) {
        g->kind = NBC_GLOBAL_TYPE;
        g->name = bf16 ? "bfloat16" : t->tp_name + 6; /* "float32": numpy's names */
        return 0;
      }
  }
  int ffi = is_cffi_ffi(value);
  if (ffi) { /* numba's cffi support: kernels call ffi.from_buffer(array) */
    if (ffi > 0) g->kind = NBC_GLOBAL_CFFI;
    return ffi < 0 ? -1 : 0;
  }
  int enum_kind = nbc__py_is_enum_class(value);
  if (enum_kind == 0 && nbc__py_is_enum_member(value) > 0) enum_kind = 2;
  if (enum_kind < 0 || PyErr_Occurred()) return -1;
  if (enum_kind == 1) return nbc__py_enum_describe(value, sess->keep, g); /* class Color(Enum) */
  if (enum_kind == 2) return nbc__py_enum_member_describe(value, sess->keep, g); /* Color.red */
  const char *tp = Py_TYPE(value)->tp_name;
  int is_ufunc = strcmp(tp, "numpy.ufunc") == 0;
  if (is_ufunc || strncmp(tp, "numpy.dtype", 11) == 0) { /* np.sqrt, np.dtype('float32') */
    /* a structured dtype by numba's Record(...) text (its name is only "void<bits>") */
    PyObject *fields = is_ufunc ? NULL : PyObject_GetAttrString(value, "fields");
    int record = fields && fields != Py_None;
    Py_XDECREF(fields);
    PyErr_Clear();
    PyObject *n = record     ? nbc__py_record_text(NULL, value)
                  : is_ufunc ? PyObject_GetAttrString(value, "__name__")
                             : PyObject_GetAttrString(value, "name");
    if (!n || !PyUnicode_Check(n) || PyList_Append(sess->keep, n) < 0) {
      Py_XDECREF(n);
      PyErr_Clear();
      return 0;
    }
    Py_DECREF(n);
    g->kind = is_ufunc ? NBC_GLOBAL_NUMPY_FUNCTION : NBC_GLOBAL_TYPE;
    g->name = PyUnicode_AsUTF8(n);
    return g->name ? 0 : -1;
  }
  if (strcmp(tp, "numpy.ndarray") == 0) return array_global(sess, value, g);
  if (Py_TYPE(value) == st->DeviceArrayType || PyObject_HasAttr(value, st->str_cai))
    return device_array_global(st, sess, value, g);
  if (strncmp(tp, "numpy.", 6) == 0) { /* numpy scalars, without importing numpy */
    if (strcmp(tp, "numpy.datetime64") == 0 || strcmp(tp, "numpy.timedelta64") == 0) {
      long long v;
      const char *name = nbc__py_datetime_scalar(st, value, &v);
      if (PyErr_Occurred()) return -1;
      if (name) { /* a multiple of a unit stays unknown to the kernel (OTHER) */
        g->kind = NBC_GLOBAL_DATETIME;
        g->name = name; /* static */
        g->value.i = v;
      }
    } else if (strcmp(tp, "numpy.complex64") == 0) {
      return complex_global(value, "complex64", g);
    } else if (strncmp(tp, "numpy.bool", 10) == 0) {
      int t = PyObject_IsTrue(value);
      if (t < 0) return -1;
      g->kind = NBC_GLOBAL_BOOL;
      g->value.i = t;
    } else if (PyIndex_Check(value)) {
      PyObject *i = PyNumber_Index(value);
      if (!i) return -1;
      int overflow = 0;
      long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
      Py_DECREF(i);
      if (!overflow) {
        g->kind = NBC_GLOBAL_INT;
        g->value.i = v;
      }
    } else if (Py_TYPE(value)->tp_as_number && Py_TYPE(value)->tp_as_number->nb_float &&
               !PyComplex_Check(value) && strstr(tp, "complex") == NULL) {
      double v = PyFloat_AsDouble(value);
      if (v == -1.0 && PyErr_Occurred()) return -1;
      g->kind = NBC_GLOBAL_FLOAT;
      g->value.f = v;
    }
    return 0;
  }
  if (nbc__py_is_type(st, value, &tname)) {
    if (PyList_Append(sess->keep, tname) < 0) {
      Py_DECREF(tname);
      return -1;
    }
    Py_DECREF(tname);
    g->kind = NBC_GLOBAL_TYPE;
    g->name = PyUnicode_AsUTF8(tname);
    return 0;
  }
  if (PyCFunction_Check(value)) { /* from math import sqrt */
    PyObject *mod = PyObject_GetAttrString(value, "__module__");
    if (!mod) {
      PyErr_Clear();
      return 0;
    }
    /* math's, cmath's, or operator's (whose functions live in _operator) */
    int is_math = PyUnicode_Check(mod) && PyUnicode_CompareWithASCIIString(mod, "math") == 0;
    int is_cmath = PyUnicode_Check(mod) && PyUnicode_CompareWithASCIIString(mod, "cmath") == 0;
    int is_operator =
        PyUnicode_Check(mod) && (PyUnicode_CompareWithASCIIString(mod, "_operator") == 0 ||
                                 PyUnicode_CompareWithASCIIString(mod, "operator") == 0);
    Py_DECREF(mod);
    if (is_math || is_cmath || is_operator) {
      PyObject *n = PyObject_GetAttrString(value, "__name__");
      if (!n || PyList_Append(sess->keep, n) < 0) {
        Py_XDECREF(n);
        return -1;
      }
      Py_DECREF(n);
      g->kind = is_math    ? NBC_GLOBAL_MATH_FUNCTION
                : is_cmath ? NBC_GLOBAL_CMATH_FUNCTION
                           : NBC_GLOBAL_OPERATOR_FUNCTION;
      g->name = PyUnicode_AsUTF8(n);
    }
    return 0;
  }
  const char *dname, *dsig;
  PyObject *dlink;
  int dcoop = 0, dc_abi = 0;
  int declared = nbc__py_declared(st, value, &dname, &dsig, &dlink, &dcoop, &dc_abi);
  if (declared < 0) return -1;
  if (declared) { /* declare_device(): its object keeps the strings (sess->keep keeps it) */
    if (PyList_Append(sess->keep, value) < 0) return -1;
    sess->cooperative |= dcoop;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(dlink); i++) {
      int seen = PySequence_Contains(sess->links, PyTuple_GET_ITEM(dlink, i));
      if (seen < 0 || (!seen && PyList_Append(sess->links, PyTuple_GET_ITEM(dlink, i)) < 0))
        return -1;
    }
    g->kind = NBC_GLOBAL_DECLARED;
    g->name = dname;
    g->signature = dsig;
    g->declared_c_abi = dc_abi;
    return 0;
  }
  /* A GPU ufunc is no device function (numba: "Untyped global name") */
  if (Py_TYPE(value) == st->UFuncType || Py_TYPE(value) == st->GUFuncType) return 0;
  /* A function, or a cuda.jit(device=True) wrapper of one (ours or numba's) */
  PyObject *func = NULL;
  if (PyFunction_Check(value)) {
    func = Py_NewRef(value);
  } else {
    func = PyObject_GetAttrString(value, "py_func");
    if (!func) PyErr_Clear();
    if (func && !PyFunction_Check(func)) Py_CLEAR(func);
  }
  if (!func) return 0;
  int rc = PyList_Append(sess->keep, func);
  Py_DECREF(func);
  if (rc < 0) return -1;
  resolver_data *child = resolver_for(st, sess, func);
  if (!child) return -1;
  if (nbc__py_function_source(sess->keep, &sess->textless, func,
                              &g->source, &g->first_line, &g->col_offset, &g->filename,
                      &g->name) < 0)
    return -1;
  g->kind = NBC_GLOBAL_FUNCTION;
  g->resolver = &child->r;
  g->signature = nbc__py_devfn_signatures(st, value); /* value keeps the text alive */
  if (g->signature && PyList_Append(sess->keep, value) < 0) return -1;
  /* jit(device=True, forceinline=True), ours or numba's: their targetoptions say it. */
  g->forceinline = 0;
  if (!PyFunction_Check(value)) {
    PyObject *to = PyObject_GetAttrString(value, "targetoptions");
    if (!to) PyErr_Clear();
    PyObject *fi = to && PyDict_Check(to) ? PyDict_GetItemString(to, "forceinline") : NULL;
    PyObject *inl = to && PyDict_Check(to) ? PyDict_GetItemString(to, "inline") : NULL;
    g->forceinline = (fi && PyObject_IsTrue(fi) > 0) || (inl && nbc__py_inline_always(inl) > 0);
    PyErr_Clear();
    Py_XDECREF(to);
  }
  return 0;
}

int nbc__py_inline_always(PyObject *inline_option) {
  if (!inline_option || inline_option == Py_None || inline_option == Py_False) return 0;
  if (inline_option == Py_True) return 1;
  if (PyUnicode_Check(inline_option)) {
    if (PyUnicode_CompareWithASCIIString(inline_option, "always") == 0) return 1;
    if (PyUnicode_CompareWithASCIIString(inline_option, "never") == 0) return 0;
  } else if (PyCallable_Check(inline_option)) {
    return 0; /* numba's cost model, judged per call site: nothing is forced */
  }
  PyErr_Format(PyExc_ValueError,
               "inline must be 'never', 'always' or a callable (numba's cost model), not %R",
               inline_option);
  return -1;
}

/* What name means to the function: its closure's cell, else its global (borrowed); NULL,
 * with an error set only when the lookup itself failed, when it has neither. */
static PyObject *lookup_name(resolver_data *d, PyObject *name) {
  PyObject *value = d->closure ? PyDict_GetItemWithError(d->closure, name) : NULL;
  if (!value && !PyErr_Occurred() && PyDict_Check(d->globals))
    value = PyDict_GetItemWithError(d->globals, name);
  return value;
}

/* A name, or "mod.attr[.attr...]" for a module global's attribute (the compiler asks for
 * those only once `mod` resolved to NBC_GLOBAL_MODULE): each step before the last must be a
 * module. */
static int resolve_locked(resolver_data *d, const char *name, nbc_global_t *g) {
  const char *dot = strchr(name, '.');
  PyObject *key = dot ? PyUnicode_FromStringAndSize(name, dot - name) : PyUnicode_FromString(name);
  if (!key) return -1;
  PyObject *value = Py_XNewRef(lookup_name(d, key));
  Py_DECREF(key);
  while (value && dot) {
    const char *attr = dot + 1;
    dot = strchr(attr, '.');
    PyObject *a = dot ? PyUnicode_FromStringAndSize(attr, dot - attr) : PyUnicode_FromString(attr);
    PyObject *next = NULL;
    if (a && PyModule_Check(value)) nbc__py_optional_attr(value, a, &next);
    Py_XDECREF(a);
    Py_SETREF(value, next);
  }
  if (!value) return PyErr_Occurred() ? -1 : 1;
  int rc = classify(d, value, g);
  if (rc == 0 && g->kind == NBC_GLOBAL_OTHER && !g->name) {
    /* what the compiler cannot use: its class, for numba's "Cannot determine Numba type of
     * <class '...'>" */
    PyObject *cls = PyObject_Repr((PyObject *)Py_TYPE(value));
    if (cls && PyList_Append(d->sess->keep, cls) == 0) g->name = PyUnicode_AsUTF8(cls);
    Py_XDECREF(cls);
    if (!g->name) rc = -1;
  }
  Py_DECREF(value);
  return rc;
}

/* The callback nbc_compile calls, without the GIL: take it for the lookup. Returns 0 with
 * *g filled, nonzero when the name is not a global of the function. */
static int resolve(void *data, const char *name, nbc_global_t *g) {
  resolver_data *d = data;
  PyGILState_STATE gil = PyGILState_Ensure();
  memset(g, 0, sizeof *g);
  int rc = resolve_locked(d, name, g);
  if (rc < 0) {
    if (!d->sess->exc_type)
      PyErr_Fetch(&d->sess->exc_type, &d->sess->exc_value, &d->sess->exc_tb);
    PyErr_Clear();
    memset(g, 0, sizeof *g);
    g->kind = NBC_GLOBAL_OTHER;
    rc = 0;
  }
  PyGILState_Release(gil);
  return rc;
}

static void session_free(session *sess) {
  for (int i = 0; i < sess->nchildren; i++) free(sess->children[i]);
  free(sess->children);
  Py_CLEAR(sess->keep);
  Py_CLEAR(sess->exc_type);
  Py_CLEAR(sess->exc_value);
  Py_CLEAR(sess->exc_tb);
  Py_CLEAR(sess->links);
  Py_CLEAR(sess->referenced);
  Py_CLEAR(sess->textless);
}

/* The compiler's warnings (one a line: nbc_compile_result_warnings) as numba's NumbaWarning,
 * each line its message. */
static int warn_compiler(nbc__py_state *st, const char *text) {
  while (text && *text) {
    const char *end = strchr(text, '\n');
    size_t n = end ? (size_t)(end - text) : strlen(text);
    char *line = PyMem_Malloc(n + 1);
    if (!line) return PyErr_NoMemory(), -1;
    memcpy(line, text, n);
    line[n] = '\0';
    int rc = nbc__py_warn(st, "NumbaWarning", line);
    PyMem_Free(line);
    if (rc < 0) return -1;
    text = end ? end + 1 : text + n;
  }
  return 0;
}

/* numba's NumbaDebugInfoWarning, once per function compiled with debug info whose source no
 * file holds (exec() of a string: nbcuda compiled it from the text it kept, a debugger finds
 * no file). -1 when a warning filter makes it an error. */
static int warn_textless(nbc__py_state *st, const session *sess) {
  for (Py_ssize_t i = 0; sess->textless && i < PyList_GET_SIZE(sess->textless); i++) {
    PyObject *msg = PyUnicode_FromFormat("Could not find source for function: %S. Debug line "
                                         "information may be inaccurate.",
                                         PyList_GET_ITEM(sess->textless, i));
    int rc = msg ? nbc__py_warn(st, "NumbaDebugInfoWarning", PyUnicode_AsUTF8(msg)) : -1;
    Py_XDECREF(msg);
    if (rc < 0) return -1;
  }
  return 0;
}

/* ------------------------------------------------------------ built-in kernel code ---- */

int nbc__py_run_source(const char *source, PyObject *filename, PyObject *ns) {
  /* registered as IPython registers its cells: inspect.getsourcelines then finds the source
   * of the functions it defines, and so does the compiler */
  PyObject *text = PyUnicode_FromString(source);
  PyObject *linecache = text ? PyImport_ImportModule("linecache") : NULL;
  PyObject *cache = linecache ? PyObject_GetAttrString(linecache, "cache") : NULL;
  PyObject *lines = cache ? PyObject_CallMethod(text, "splitlines", "(O)", Py_True) : NULL;
  PyObject *entry = lines ? Py_BuildValue("(nOOO)", PyUnicode_GET_LENGTH(text), Py_None, lines,
                                          filename)
                          : NULL;
  PyObject *code = NULL, *ran = NULL;
  if (entry && PyObject_SetItem(cache, filename, entry) == 0 &&
      PyDict_SetItemString(ns, "__builtins__", PyEval_GetBuiltins()) == 0 &&
      (code = Py_CompileStringObject(source, filename, Py_file_input, NULL, -1)))
    ran = PyEval_EvalCode(code, ns, ns);
  int rc = ran ? 0 : -1;
  Py_XDECREF(ran);
  Py_XDECREF(code);
  Py_XDECREF(entry);
  Py_XDECREF(lines);
  Py_XDECREF(cache);
  Py_XDECREF(linecache);
  Py_XDECREF(text);
  return rc;
}

/* ------------------------------------------------------------ compiling --------------- */

int nbc__py_compile_function(nbc__py_state *st, PyObject *pyfunc, const char *sig,
                             const nbc_compile_options_t *options,
                             nbc_compile_result_t **presult) {
  return nbc__py_compile_function_extras(st, pyfunc, sig, options, presult, NULL);
}

void nbc__py_compiled_clear(nbc__py_compiled *extras) {
  Py_CLEAR(extras->links);
  Py_CLEAR(extras->raises);
  Py_CLEAR(extras->referenced);
  extras->cooperative = 0;
}

/* ------------------------------------------------------- debug=True raise sites -------- */

/* The resolver of the function a raise site is in (by name and file), else (an operation's
 * error, without location) the top one. */
static resolver_data *site_resolver(session *sess, const nbc_raise_site_t *site) {
  for (int i = 0; site->function && i < sess->nchildren; i++) {
    PyObject *f = sess->children[i]->func;
    PyObject *name = nbc__py_source_name(f);
    PyObject *code = PyObject_GetAttrString(f, "__code__");
    PyObject *file = code ? PyObject_GetAttrString(code, "co_filename") : NULL;
    const char *n = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    const char *fn = file && PyUnicode_Check(file) ? PyUnicode_AsUTF8(file) : NULL;
    int same = n && fn && strcmp(fn, site->filename) == 0 &&
               (strcmp(n, site->function) == 0 ||
                (strcmp(n, "<lambda>") == 0 && strcmp(site->function, NBC__PY_LAMBDA_NAME) == 0));
    Py_XDECREF(name);
    Py_XDECREF(code);
    Py_XDECREF(file);
    PyErr_Clear();
    if (same) return sess->children[i];
  }
  return sess->children[0];
}

/* The exception class a site names (dotted), looked up as the function sees it: closure,
 * globals, builtins; TypingError when it is not an exception class. */
static PyObject *site_class(nbc__py_state *st, resolver_data *d, const nbc_raise_site_t *site) {
  PyObject *dot = PyUnicode_FromString("."), *text = PyUnicode_FromString(site->exception);
  PyObject *names = text && dot ? PyUnicode_Split(text, dot, -1) : NULL;
  Py_XDECREF(dot);
  PyObject *v = NULL;
  if (names) {
    PyObject *first = PyList_GET_ITEM(names, 0);
    v = lookup_name(d, first);
    if (!v && !PyErr_Occurred()) v = PyDict_GetItemWithError(PyEval_GetBuiltins(), first);
    Py_XINCREF(v);
    for (Py_ssize_t i = 1; v && i < PyList_GET_SIZE(names); i++)
      Py_SETREF(v, PyObject_GetAttr(v, PyList_GET_ITEM(names, i)));
  }
  Py_XDECREF(names);
  Py_XDECREF(text);
  if (PyErr_Occurred()) PyErr_Clear();
  if (v && PyExceptionClass_Check(v)) return v;
  Py_XDECREF(v);
  PyErr_Format(nbc__py_typing_error(st, NBC_ERROR_KIND_NONE),
               "%s:%d: debug=True: '%s', raised in function '%s', is not an exception class "
               "the function can see", site->filename, site->line, site->exception,
               site->function);
  return NULL;
}

/* numba's exception table of a debug kernel: for each raise site (code i + 1) a tuple
 * (class or None, args tuple or None, (function, absolute file, line) or None). */
static PyObject *raise_table(nbc__py_state *st, session *sess, const nbc_compile_result_t *r) {
  int n = nbc_compile_result_raise_count(r);
  if (!n) return NULL;
  PyObject *ast = PyImport_ImportModule("ast");
  PyObject *path = PyImport_ImportModule("os.path");
  PyObject *table = ast && path ? PyTuple_New(n) : NULL;
  for (int i = 0; table && i < n; i++) {
    const nbc_raise_site_t *site = nbc_compile_result_raise_site(r, i);
    PyObject *cls = site->exception ? site_class(st, site_resolver(sess, site), site)
                                    : Py_NewRef(Py_None);
    PyObject *args = !cls          ? NULL
                     : site->args ? PyObject_CallMethod(ast, "literal_eval", "s", site->args)
                                  : Py_NewRef(Py_None);
    PyObject *loc = !args             ? NULL
                    : !site->function ? Py_NewRef(Py_None) /* an operation's error */
                                      : NULL;
    if (args && site->function) {
      PyObject *file = PyObject_CallMethod(path, "abspath", "s", site->filename);
      loc = file ? Py_BuildValue("(sOi)", site->function, file, site->line) : NULL;
      Py_XDECREF(file);
    }
    PyObject *entry = loc ? PyTuple_Pack(3, cls, args, loc) : NULL;
    Py_XDECREF(cls);
    Py_XDECREF(args);
    Py_XDECREF(loc);
    if (!entry) Py_CLEAR(table);
    else PyTuple_SET_ITEM(table, i, entry);
  }
  Py_XDECREF(ast);
  Py_XDECREF(path);
  return table;
}

int nbc__py_compile_function_extras(nbc__py_state *st, PyObject *pyfunc, const char *sig,
                                    const nbc_compile_options_t *options,
                                    nbc_compile_result_t **presult, nbc__py_compiled *extras) {
  *presult = NULL;
  if (extras) memset(extras, 0, sizeof *extras);
  PyObject *func = Py_NewRef(pyfunc);
  if (!PyFunction_Check(func)) { /* a jit(device=True) wrapper or numba dispatcher */
    PyObject *inner = PyObject_GetAttrString(func, "py_func");
    Py_DECREF(func);
    if (!inner || !PyFunction_Check(inner)) {
      Py_XDECREF(inner);
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "compile() takes a Python function, got %R", pyfunc);
      return -1;
    }
    func = inner;
  }
  session sess = {PyList_New(0), NULL, 0, 0, NULL, NULL, NULL, PyList_New(0), 0, PyList_New(0),
                  NULL};
  if (!sess.keep || !sess.links || !sess.referenced) {
    session_free(&sess);
    Py_DECREF(func);
    return -1;
  }
  nbc_source_t src = {0};
  const char *name = NULL;
  resolver_data *top = NULL;
  int rc = -1;
  if (PyList_Append(sess.keep, func) < 0) goto done;
  if (nbc__py_function_source(sess.keep, &sess.textless, func,
                              &src.text, &src.first_line, &src.col_offset, &src.filename,
                      &name) < 0)
    goto done;
  top = resolver_for(st, &sess, func);
  if (!top) goto done;
  nbc_status_t s;
  nbc_compile_options_t opts = nbc__py_dump_options(st, options);
  if (nbc__py_compile_time_limit(st, &opts.time_limit) < 0) goto done;
  Py_BEGIN_ALLOW_THREADS s = nbc_compile(&src, name, sig, &opts, &top->r, presult);
  Py_END_ALLOW_THREADS if (s == NBC_OK) {
    rc = 0;
    if (nbc__py_dump_compiled(st, func, &opts, *presult) < 0 ||
        warn_compiler(st, nbc_compile_result_warnings(*presult)) < 0 ||
        ((options->debug || options->lineinfo) && warn_textless(st, &sess) < 0)) {
      rc = -1;
      nbc_compile_result_destroy(*presult);
      *presult = NULL;
    } else if (extras) {
      extras->raises = raise_table(st, &sess, *presult);
      if (!extras->raises && PyErr_Occurred()) {
        rc = -1;
        nbc_compile_result_destroy(*presult);
        *presult = NULL;
      } else {
        extras->links = Py_NewRef(sess.links);
        extras->referenced = Py_NewRef(sess.referenced);
        extras->cooperative = sess.cooperative;
      }
    }
  } else if (sess.exc_type) {
    PyErr_Restore(sess.exc_type, sess.exc_value, sess.exc_tb);
    sess.exc_type = sess.exc_value = sess.exc_tb = NULL;
  } else {
    nbc__py_raise(st, s);
  }
done:
  session_free(&sess);
  Py_DECREF(func);
  return rc;
}

/* Keyword arguments common to the four entry points. */
typedef struct {
  PyObject *pyfunc, *sig, *debug, *lineinfo, *device, *fastmath, *cc, *opt, *abi, *abi_info;
  PyObject *output, *forceinline, *launch_bounds;
} compile_args;

static int truthy(PyObject *o, int dflt) {
  if (!o || o == Py_None) return dflt;
  return PyObject_IsTrue(o);
}

/* The cc of the current device (for *_for_current_device). */
int nbc__py_current_cc(nbc__py_state *st, int *pmajor, int *pminor) {
  nbc_device_t *dev = NULL;
  nbc_status_t s = nbc_get_current_device(&dev);
  if (s != NBC_OK) return nbc__py_raise_int(st, s);
  nbc_device_compute_capability(dev, pmajor, pminor);
  return 0;
}

/* numba's launch_bounds: None, an int (max threads per block) or a tuple of one to three
 * ints (max threads per block, min blocks per SM, max blocks per cluster). */
int nbc__py_launch_bounds(PyObject *bounds, nbc_compile_options_t *o) {
  if (!bounds || bounds == Py_None) return 0;
  PyObject *seq = PyLong_Check(bounds) ? PyTuple_Pack(1, bounds)
                                       : PySequence_Tuple(bounds);
  if (!seq) {
    PyErr_Format(PyExc_TypeError,
                 "launch_bounds must be an int or a tuple of ints, got %R", bounds);
    return -1;
  }
  Py_ssize_t n = PyTuple_GET_SIZE(seq);
  if (n > 3) {
    PyErr_Format(PyExc_ValueError,
                 "Got %zd launch bounds: %R. A maximum of three are supported: "
                 "(max_threads_per_block, min_blocks_per_sm, max_blocks_per_cluster)",
                 n, bounds);
    Py_DECREF(seq);
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    long v = PyLong_AsLong(PyTuple_GET_ITEM(seq, i));
    if (v == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "launch bound %zd must be an int, got %R", i,
                   PyTuple_GET_ITEM(seq, i));
      Py_DECREF(seq);
      return -1;
    }
    if (v < 0 || v > 0x7fffffffL) {
      PyErr_Format(PyExc_ValueError, "launch bound %zd must be between 0 and 2**31-1, got %ld",
                   i, v);
      Py_DECREF(seq);
      return -1;
    }
    o->launch_bounds[i] = (unsigned)v;
  }
  o->nlaunch_bounds = (int)n;
  Py_DECREF(seq);
  return 0;
}

/* What compile_all needs besides the code: the files the function links (declare_device's
 * link=), whether the fp16 wrappers are called, the cc compiled for, and how NVRTC compiles
 * the CUDA C++ among them (nbc_nvrtc_compile's flags: the output's kind, lineinfo, debug). */
typedef struct {
  PyObject *links;
  int fp16;
  int cc_major, cc_minor;
  unsigned nvrtc_flags;
} link_needs;

int nbc__py_warn_debug_with_opt(nbc__py_state *st) {
  return nbc__py_warn(st, "NumbaInvalidConfigWarning",
                      "debug=True with opt=True is not supported by CUDA. This may result in a "
                      "crash - set debug=False or opt=False.");
}

static PyObject *do_compile(PyObject *module, compile_args *a, int default_device,
                            const char *default_abi, int for_current_device,
                            link_needs *needs) {
  nbc__py_state *st = nbc__py_module_state(module);
  const char *output = "ptx", *abi = default_abi;
  if (a->output && a->output != Py_None) {
    if (!PyUnicode_Check(a->output) ||
        (PyUnicode_CompareWithASCIIString(a->output, "ptx") != 0 &&
         PyUnicode_CompareWithASCIIString(a->output, "ltoir") != 0)) {
      PyErr_Format(PyExc_NotImplementedError, "Unsupported output type: %S", a->output);
      return NULL;
    }
    output = PyUnicode_AsUTF8(a->output);
  }
  int forceinline = truthy(a->forceinline, 0);
  if (forceinline < 0) return NULL;
  if (forceinline && strcmp(output, "ltoir") != 0) {
    PyErr_SetString(PyExc_ValueError, "Can only designate forced inlining in LTO-IR");
    return NULL;
  }
  if (a->abi && a->abi != Py_None) {
    if (!PyUnicode_Check(a->abi) || (PyUnicode_CompareWithASCIIString(a->abi, "numba") != 0 &&
                                     PyUnicode_CompareWithASCIIString(a->abi, "c") != 0)) {
      PyErr_Format(PyExc_NotImplementedError, "Unsupported ABI: %S", a->abi);
      return NULL;
    }
    abi = PyUnicode_AsUTF8(a->abi);
  }
  int device = truthy(a->device, default_device);
  if (device < 0) return NULL;
  if (strcmp(abi, "c") == 0 && !device) {
    PyErr_SetString(PyExc_NotImplementedError, "The C ABI is not supported for kernels");
    return NULL;
  }
  if (forceinline && !device) {
    PyErr_SetString(PyExc_ValueError, "Cannot force-inline kernels");
    return NULL;
  }
  nbc_compile_options_t o;
  nbc_compile_options_init(&o);
  o.forceinline = forceinline;
  if (nbc__py_launch_bounds(a->launch_bounds, &o) < 0) return NULL;
  o.device = device;
  o.abi = strcmp(abi, "c") == 0 ? NBC_ABI_C : NBC_ABI_NUMBA;
  o.output = strcmp(output, "ltoir") == 0 ? NBC_OUTPUT_LTOIR : NBC_OUTPUT_PTX;
  if ((o.debug = nbc__py_debug_option(st, a->debug)) < 0 ||
      (o.lineinfo = truthy(a->lineinfo, 0)) < 0 || (o.fastmath = truthy(a->fastmath, 0)) < 0 ||
      (o.opt = nbc__py_opt_option(st, a->opt)) < 0)
    return NULL;
  if (o.debug && o.opt && nbc__py_warn_debug_with_opt(st) < 0) return NULL;
  if (for_current_device) {
    if (nbc__py_current_cc(st, &o.cc_major, &o.cc_minor) < 0) return NULL;
  } else if (a->cc && a->cc != Py_None) {
    int ok = PyTuple_Check(a->cc) && PyTuple_GET_SIZE(a->cc) >= 2;
    if (ok) {
      o.cc_major = (int)PyLong_AsLong(PyTuple_GET_ITEM(a->cc, 0));
      o.cc_minor = (int)PyLong_AsLong(PyTuple_GET_ITEM(a->cc, 1));
      ok = !PyErr_Occurred();
    }
    if (!ok) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "cc must be a tuple (major, minor), got %R", a->cc);
      return NULL;
    }
    if (PyTuple_GET_SIZE(a->cc) == 3) { /* numba: (9, 0, "a") -> compute_90a */
      PyObject *arch = PyTuple_GET_ITEM(a->cc, 2);
      const char *text = PyUnicode_Check(arch) ? PyUnicode_AsUTF8(arch) : NULL;
      if (!text || (strcmp(text, "a") != 0 && strcmp(text, "f") != 0 && *text)) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError,
                     "the third item of cc must be 'a' (arch-specific) or 'f' "
                     "(family-specific), got %R", arch);
        return NULL;
      }
      o.cc_arch = *text;
    } else if (PyTuple_GET_SIZE(a->cc) > 3) {
      PyErr_Format(PyExc_TypeError, "cc must be (major, minor) or (major, minor, arch), got %R",
                   a->cc);
      return NULL;
    }
  }
  PyObject *abi_name = NULL;
  if (a->abi_info && a->abi_info != Py_None) {
    if (!PyDict_Check(a->abi_info)) {
      PyErr_SetString(PyExc_TypeError, "abi_info must be a dict");
      return NULL;
    }
    abi_name = PyDict_GetItemString(a->abi_info, "abi_name");
    if (abi_name && !PyUnicode_Check(abi_name)) {
      PyErr_SetString(PyExc_TypeError, "abi_info['abi_name'] must be a str");
      return NULL;
    }
    Py_ssize_t len = 0;
    if (abi_name && !(o.abi_name = PyUnicode_AsUTF8AndSize(abi_name, &len))) return NULL;
    if (abi_name && strlen(o.abi_name) != (size_t)len) { /* C sees it up to the NUL */
      PyErr_SetString(PyExc_ValueError, "abi_info['abi_name'] must not hold a NUL character");
      return NULL;
    }
  }
  PyObject *sigtext = nbc__py_signature_text(st, a->sig);
  if (!sigtext) return NULL;
  const char *sig = PyUnicode_AsUTF8(sigtext);
  if (!device) { /* numba: a kernel's declared return type must be void */
    nbc_signature_t *parsed = NULL;
    nbc_status_t s = nbc_signature_parse_args(sig, NULL, 0, 1, &parsed); /* kernel limits */
    if (s != NBC_OK) {
      Py_DECREF(sigtext);
      return nbc__py_raise(st, s);
    }
    s = nbc_kernel_check_return_type(nbc_signature_return_type(parsed));
    nbc_signature_destroy(parsed);
    if (s != NBC_OK) {
      Py_DECREF(sigtext);
      return nbc__py_raise(st, s);
    }
  }
  nbc_compile_result_t *result = NULL;
  nbc__py_compiled extras;
  int rc = nbc__py_compile_function_extras(st, a->pyfunc, sig, &o, &result, &extras);
  Py_DECREF(sigtext);
  if (rc == 0 && needs) needs->links = Py_NewRef(extras.links);
  nbc__py_compiled_clear(&extras);
  if (rc < 0) return NULL;
  if (needs) {
    needs->fp16 = nbc_compile_result_uses_fp16(result);
    needs->cc_major = o.cc_major;
    needs->cc_minor = o.cc_minor;
    if (!o.cc_major && !o.cc_minor) nbc_default_ptx_cc(&needs->cc_major, &needs->cc_minor);
    needs->nvrtc_flags = (o.output == NBC_OUTPUT_LTOIR ? NBC_NVRTC_LTO : 0) |
                         (o.lineinfo ? NBC_NVRTC_LINEINFO : 0) | (o.debug ? NBC_NVRTC_DEBUG : 0);
  }
  const char *resty = nbc_compile_result_return_type(result);
  nbc_status_t rs = device ? NBC_OK : nbc_kernel_check_return_type(resty);
  if (rs != NBC_OK) {
    nbc_compile_result_destroy(result);
    return nbc__py_raise(st, rs);
  }
  size_t size = 0;
  const char *code = nbc_compile_result_code(result, &size);
  PyObject *code_obj = o.output == NBC_OUTPUT_LTOIR
                           ? PyBytes_FromStringAndSize(code, (Py_ssize_t)size)
                           : PyUnicode_DecodeUTF8(code, (Py_ssize_t)size, "replace");
  PyObject *type = code_obj ? nbc__py_type_from_name(st, resty ? resty : "none") : NULL;
  const char *log = nbc_compile_result_log(result);
  int warn_rc = log && *log ? PyErr_WarnFormat(PyExc_UserWarning, 1, "NVVM: %s", log) : 0;
  nbc_compile_result_destroy(result);
  if (!type || warn_rc < 0) {
    Py_XDECREF(code_obj);
    Py_XDECREF(type);
    return NULL;
  }
  PyObject *r = PyTuple_Pack(2, code_obj, type);
  Py_DECREF(code_obj);
  Py_DECREF(type);
  return r;
}

static PyObject *compile_entry(PyObject *module, PyObject *args, PyObject *kwargs,
                               int default_device, const char *default_abi, int current,
                               int allow_output) {
  static char *kwlist[] = {"pyfunc", "sig", "debug", "lineinfo", "device", "fastmath", "cc",
                           "opt", "abi", "abi_info", "output", "forceinline",
                           "launch_bounds", NULL};
  static char *kwlist_ptx[] = {"pyfunc", "sig", "debug", "lineinfo", "device", "fastmath",
                               "cc", "opt", "abi", "abi_info", "forceinline",
                               "launch_bounds", NULL};
  compile_args a = {0};
  int ok = allow_output
               ? PyArg_ParseTupleAndKeywords(args, kwargs, "OO|OOOOOOOOOOO:compile", kwlist,
                                             &a.pyfunc, &a.sig, &a.debug, &a.lineinfo,
                                             &a.device, &a.fastmath, &a.cc, &a.opt, &a.abi,
                                             &a.abi_info, &a.output, &a.forceinline,
                                             &a.launch_bounds)
               : PyArg_ParseTupleAndKeywords(args, kwargs, "OO|OOOOOOOOOO:compile_ptx",
                                             kwlist_ptx, &a.pyfunc, &a.sig, &a.debug,
                                             &a.lineinfo, &a.device, &a.fastmath, &a.cc,
                                             &a.opt, &a.abi, &a.abi_info, &a.forceinline,
                                             &a.launch_bounds);
  if (!ok) return NULL;
  return do_compile(module, &a, default_device, default_abi, current, NULL);
}

/* numba's compile_all(pyfunc, sig, ..., output="ltoir"): ([code, then the code of every file
 * the function links], resty). The function's own code is compile()'s; each file that its
 * declare_device() functions link follows (nbc__py_link_codes: CUDA C++ compiled by NVRTC
 * with the same lineinfo / debug, the rest as LinkableCode), then the fp16 wrappers' shim
 * when it calls numba.cuda.fp16's functions. */
static PyObject *py_compile_all(PyObject *module, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"pyfunc", "sig", "debug", "lineinfo", "device", "fastmath", "cc",
                           "opt", "abi", "abi_info", "output", "forceinline",
                           "launch_bounds", NULL};
  compile_args a = {0};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|OOOOOOOOOOO:compile_all", kwlist,
                                   &a.pyfunc, &a.sig, &a.debug, &a.lineinfo, &a.device,
                                   &a.fastmath, &a.cc, &a.opt, &a.abi, &a.abi_info, &a.output,
                                   &a.forceinline, &a.launch_bounds))
    return NULL;
  PyObject *ltoir = PyUnicode_FromString("ltoir");
  if (!ltoir) return NULL;
  if (!a.output || a.output == Py_None) a.output = ltoir;
  link_needs needs = {0};
  PyObject *compiled = do_compile(module, &a, 1, "c", 0, &needs);
  Py_DECREF(ltoir);
  PyObject *codes = compiled ? nbc__py_link_codes(nbc__py_module_state(module), module,
                                                  needs.links, needs.fp16, needs.cc_major,
                                                  needs.cc_minor, needs.nvrtc_flags)
                             : NULL;
  Py_XDECREF(needs.links);
  PyObject *r = NULL;
  if (codes && PyList_Insert(codes, 0, PyTuple_GET_ITEM(compiled, 0)) == 0)
    r = PyTuple_Pack(2, codes, PyTuple_GET_ITEM(compiled, 1));
  Py_XDECREF(codes);
  Py_XDECREF(compiled);
  return r;
}

static PyObject *py_compile(PyObject *m, PyObject *args, PyObject *kw) {
  return compile_entry(m, args, kw, 1, "c", 0, 1);
}
static PyObject *py_compile_for_current_device(PyObject *m, PyObject *args, PyObject *kw) {
  return compile_entry(m, args, kw, 1, "c", 1, 1);
}
static PyObject *py_compile_ptx(PyObject *m, PyObject *args, PyObject *kw) {
  return compile_entry(m, args, kw, 0, "numba", 0, 0);
}
static PyObject *py_compile_ptx_for_current_device(PyObject *m, PyObject *args, PyObject *kw) {
  return compile_entry(m, args, kw, 0, "numba", 1, 0);
}

#define KW_FN(f) (PyCFunction)(void (*)(void))(f), METH_VARARGS | METH_KEYWORDS
static PyMethodDef compile_functions[] = {
    {"compile", KW_FN(py_compile),
     "compile($module, pyfunc, sig, debug=None, lineinfo=False, device=True, fastmath=False, "
     "cc=None, opt=None, abi='c', abi_info=None, output='ptx', forceinline=False, "
     "launch_bounds=None)\n--\n\n"
     "Compiles pyfunc for the type signature sig; returns (code, resty): the code (PTX or "
     "LTO-IR, as output says) and the return type."},
    {"compile_for_current_device", KW_FN(py_compile_for_current_device),
     "compile_for_current_device($module, pyfunc, sig, debug=None, lineinfo=False, "
     "device=True, fastmath=False, cc=None, opt=None, abi='c', abi_info=None, output='ptx', "
     "forceinline=False, launch_bounds=None)\n--\n\n"
     "compile() for the current device's compute capability."},
    {"compile_all", KW_FN(py_compile_all),
     "compile_all($module, pyfunc, sig, debug=None, lineinfo=False, device=True, "
     "fastmath=False, cc=None, opt=None, abi='c', abi_info=None, output='ltoir', "
     "forceinline=False, launch_bounds=None)\n--\n\n"
     "compile() and the code of the files the function links: returns ([code, linked "
     "code...], resty)."},
    {"compile_ptx", KW_FN(py_compile_ptx),
     "compile_ptx($module, pyfunc, sig, debug=None, lineinfo=False, device=False, "
     "fastmath=False, cc=None, opt=None, abi='numba', abi_info=None, forceinline=False, "
     "launch_bounds=None)\n--\n\n"
     "A kernel (device=False) with the Numba ABI -> (ptx, resty)"},
    {"compile_ptx_for_current_device", KW_FN(py_compile_ptx_for_current_device),
     "compile_ptx_for_current_device($module, pyfunc, sig, debug=None, lineinfo=False, "
     "device=False, fastmath=False, cc=None, opt=None, abi='numba', abi_info=None, "
     "forceinline=False, launch_bounds=None)\n--\n\n"
     "compile_ptx() for the current device's compute capability."},
    {NULL, NULL, 0, NULL},
};

int nbc__py_compile_init(PyObject *module, nbc__py_state *st) {
  (void)st;
  if (nbc__py_exec_source_init() < 0) return -1;
  return PyModule_AddFunctions(module, compile_functions);
}
