/* types.c — numba's type objects under numba's names: nbcuda.float32, int64, void, boolean,
 * the aliases (f4, i8, b1, intp, double, float_, ...), array types made by slicing a scalar
 * type (float32[:] is "array(float32, 1d, A)", float32[:, ::1] is "array(float32, 2d, C)",
 * float32[::1, :] is "array(float32, 2d, F)"), and signatures made by calling a type with
 * argument types (float32(float32, int64) prints "(float32, int64) -> float32").
 *
 * They exist so that code written for numba can spell signatures with objects: a tuple of
 * type objects, or a type-built signature, is turned into the signature text that the C
 * signature parser takes (nbc__py_signature_text), and compile() returns its resty as one
 * of these objects. One heap type, NbType, holds every kind; the object keeps both the name
 * numba prints and the text the C parser reads ("bool" prints, "boolean" parses). Calling a
 * scalar type with a value converts it like numba does (numba.float32(1.7) is a
 * numpy.float32).
 */
#include "nbcuda_py.h"

#include <string.h>

enum { T_SCALAR, T_VOID, T_ARRAY, T_SIGNATURE, T_OTHER, T_RECORD, T_DATETIME };

typedef struct {
  PyObject_HEAD
  int kind;
  PyObject *name;    /* numba's str() */
  PyObject *sigtext; /* the C signature parser's spelling */
  PyObject *dtype;   /* ARRAY: element type; SIGNATURE: return type or None */
  PyObject *args;    /* SIGNATURE: tuple of argument types */
  int ndim;
  char layout;
  int bitwidth;
  const char *typestr; /* SCALAR: numpy typestr */
  int packed;          /* RECORD: numpy's align=False */
  int readonly;        /* ARRAY: numba's readonly array (the kernel never writes it) */
} NbType;

static int numba_array_mutable(PyObject *obj);

/* Whether obj is one of the objects of this file (a type, an array type or a signature). */
static int is_nbtype(nbc__py_state *st, PyObject *obj) {
  return PyObject_TypeCheck(obj, st->NbTypeType) || Py_TYPE(obj) == st->NbSignatureType;
}

/* The scalar types: canonical printed name, parser spelling, numpy typestr, bits, then the
 * aliases that name the same object. */
static const struct scalar_def {
  const char *name, *sigtext, *typestr;
  int bits;
  const char *aliases[8];
} scalar_defs[] = {
    {"bool", "boolean", "|b1", 8, {"boolean", "bool_", "b1"}},
    {"int8", "int8", "|i1", 8, {"i1", "char"}},
    {"int16", "int16", "<i2", 16, {"i2", "short"}},
    {"int32", "int32", "<i4", 32, {"i4", "intc"}},
    {"int64", "int64", "<i8", 64, {"i8", "intp", "int_", "long_", "longlong", "ssize_t"}},
    {"uint8", "uint8", "|u1", 8, {"u1", "byte", "uchar"}},
    {"uint16", "uint16", "<u2", 16, {"u2", "ushort"}},
    {"uint32", "uint32", "<u4", 32, {"u4", "uintc"}},
    {"uint64", "uint64", "<u8", 64, {"u8", "uintp", "uint", "ulong", "ulonglong", "size_t"}},
    {"float16", "float16", "<f2", 16, {"f2"}},
    {"float32", "float32", "<f4", 32, {"f4", "float_"}},
    {"float64", "float64", "<f8", 64, {"f8", "double"}},
    {"complex64", "complex64", "<c8", 64, {"c8"}},
    {"complex128", "complex128", "<c16", 128, {"c16"}},
};

static NbType *type_new_of(PyTypeObject *tp, int kind, PyObject *name, PyObject *sigtext) {
  NbType *t = PyObject_GC_New(NbType, tp);
  if (!t) return NULL;
  t->kind = kind;
  t->name = Py_NewRef(name);
  t->sigtext = Py_NewRef(sigtext);
  t->dtype = NULL;
  t->args = NULL;
  t->ndim = 0;
  t->layout = 0;
  t->bitwidth = 0;
  t->typestr = NULL;
  t->packed = 0;
  t->readonly = 0;
  PyObject_GC_Track(t);
  return t;
}

/* A new object of the class its kind has (tuple types choose theirs: tuple_type). */
static NbType *type_new(nbc__py_state *st, int kind, PyObject *name, PyObject *sigtext) {
  PyTypeObject *tp = kind == T_ARRAY       ? st->NbArrayType
                     : kind == T_SIGNATURE ? st->NbSignatureType
                                           : st->NbTypeType;
  return type_new_of(tp, kind, name, sigtext);
}

static int type_traverse(NbType *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->dtype);
  Py_VISIT(self->args);
  return 0;
}

static int type_clear(NbType *self) {
  Py_CLEAR(self->dtype);
  Py_CLEAR(self->args);
  return 0;
}

static void type_dealloc(NbType *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  type_clear(self);
  Py_XDECREF(self->name);
  Py_XDECREF(self->sigtext);
  tp->tp_free(self);
  Py_DECREF(tp);
}

static PyObject *type_str(NbType *self) { return Py_NewRef(self->name); }

static PyObject *type_repr(NbType *self) {
  if (self->kind == T_ARRAY)
    return PyUnicode_FromFormat("Array(%R, %d, '%c', %s, aligned=%s)", self->dtype, self->ndim,
                                self->layout, self->readonly ? "True" : "False",
                                ((NbType *)self->dtype)->packed ? "False" : "True");
  return Py_NewRef(self->name);
}

static Py_hash_t type_hash(NbType *self) { return PyObject_Hash(self->sigtext); }

/* Equal to the same type of nbcuda's, and to numba's own object of the type (compile()'s
 * resty == numba.types.float64), by their signature spellings. (Their hashes differ from
 * numba's: a set or dict mixing both keeps both.) */
static PyObject *type_richcompare(PyObject *a, PyObject *b, int op) {
  if (op != Py_EQ && op != Py_NE) Py_RETURN_NOTIMPLEMENTED;
  PyObject *other = NULL;
  if (Py_TYPE(a) == Py_TYPE(b)) {
    other = Py_NewRef(((NbType *)b)->sigtext);
  } else {
    nbc__py_state *st = nbc__py_state_of(a);
    if (!st) return NULL;
    if (is_nbtype(st, b) || !nbc__py_is_type(st, b, &other)) Py_RETURN_NOTIMPLEMENTED;
  }
  int eq = PyUnicode_Compare(((NbType *)a)->sigtext, other) == 0;
  Py_DECREF(other);
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

/* The signature spelling of an array type: base[:, ::1] for layout 'C' ('::1' on the last
 * dimension for 'C', on the first for 'F', none for 'A'); a 0-d array, which slices cannot
 * spell, as numba prints it: array(base, 0d, C). */
static PyObject *array_sigtext(PyObject *base, long ndim, char layout) {
  if (ndim == 0) return PyUnicode_FromFormat("array(%U, 0d, %c)", base, layout);
  PyObject *sig = PyUnicode_FromFormat("%U[", base);
  for (long i = 0; sig && i < ndim; i++) {
    int unit = (layout == 'C' && i == ndim - 1) || (layout == 'F' && i == 0);
    Py_SETREF(sig, PyUnicode_FromFormat("%U%s%s", sig, i ? ", " : "", unit ? "::1" : ":"));
  }
  if (sig) Py_SETREF(sig, PyUnicode_FromFormat("%U]", sig));
  return sig;
}

/* The array type of ndim dimensions of dtype (a scalar or record type) in layout, read-only
 * or not (which only numba's printed spelling can say). */
static PyObject *array_type(nbc__py_state *st, NbType *dtype, int ndim, char layout,
                            int readonly) {
  /* numba prints an array of a packed record "unaligned array(...)" */
  const char *flags = dtype->packed ? (readonly ? "unaligned readonly " : "unaligned ")
                                    : (readonly ? "readonly " : "");
  PyObject *name =
      PyUnicode_FromFormat("%sarray(%U, %dd, %c)", flags, dtype->name, ndim, layout);
  PyObject *sig = !name      ? NULL
                  : readonly ? PyUnicode_FromFormat("readonly array(%U, %dd, %c)",
                                                    dtype->sigtext, ndim, layout)
                             : array_sigtext(dtype->sigtext, ndim, layout);
  NbType *t = name && sig ? type_new(st, T_ARRAY, name, sig) : NULL;
  Py_XDECREF(name);
  Py_XDECREF(sig);
  if (!t) return NULL;
  t->dtype = Py_NewRef(dtype);
  t->ndim = ndim;
  t->layout = layout;
  t->readonly = readonly;
  return (PyObject *)t;
}

PyObject *nbc__py_array_of(nbc__py_state *st, PyObject *dtype, int ndim, char layout) {
  if (!dtype || Py_TYPE(dtype) != st->NbTypeType) {
    if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "no array type of %R", dtype);
    return NULL;
  }
  return array_type(st, (NbType *)dtype, ndim, layout, 0);
}

PyObject *nbc__py_array_readonly(nbc__py_state *st, PyObject *array) {
  NbType *a = (NbType *)array;
  if (a->readonly) return array;
  PyObject *r = array_type(st, (NbType *)a->dtype, a->ndim, a->layout, 1);
  Py_DECREF(array);
  return r;
}

/* float32[:, ::1] and friends: each index must be ':' or '::1'. */
static PyObject *type_getitem(NbType *self, PyObject *key) {
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  if (self->kind != T_SCALAR && self->kind != T_RECORD && self->kind != T_DATETIME) {
    PyErr_Format(PyExc_TypeError, "'%U' cannot be indexed", self->name);
    return NULL;
  }
  PyObject *items = PyTuple_Check(key) ? Py_NewRef(key) : PyTuple_Pack(1, key);
  if (!items) return NULL;
  Py_ssize_t ndim = PyTuple_GET_SIZE(items);
  int unit_first = 0, unit_last = 0;
  for (Py_ssize_t i = 0; i < ndim; i++) {
    PyObject *s = PyTuple_GET_ITEM(items, i);
    PyObject *start, *stop, *step;
    if (!PySlice_Check(s)) goto bad;
    start = PyObject_GetAttrString(s, "start");
    stop = PyObject_GetAttrString(s, "stop");
    step = PyObject_GetAttrString(s, "step");
    int ok = start == Py_None && stop == Py_None &&
             (step == Py_None || (PyLong_Check(step) && PyLong_AsLong(step) == 1));
    int unit = step != Py_None;
    Py_XDECREF(start);
    Py_XDECREF(stop);
    Py_XDECREF(step);
    if (!ok) goto bad;
    if (unit && i == 0) unit_first = 1;
    if (unit && i == ndim - 1) unit_last = 1;
    if (unit && i != 0 && i != ndim - 1) goto bad;
  }
  if (ndim == 0 || (unit_first && unit_last && ndim > 1)) goto bad;
  Py_DECREF(items);
  return array_type(st, self, (int)ndim, unit_last ? 'C' : unit_first ? 'F' : 'A', 0);
bad:
  Py_DECREF(items);
  if (!PyErr_Occurred())
    PyErr_SetString(PyExc_TypeError,
                    "array types are spelled with ':' and '::1' slices, e.g. float32[:, ::1]");
  return NULL;
}

/* A signature from a return type (or NULL) and argument types. */
static PyObject *make_signature(nbc__py_state *st, NbType *ret, PyObject *args) {
  PyObject *argnames = PyUnicode_FromString(""), *argsig = PyUnicode_FromString("");
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  for (Py_ssize_t i = 0; argnames && argsig && i < n; i++) {
    NbType *a = (NbType *)PyTuple_GET_ITEM(args, i);
    Py_SETREF(argnames, PyUnicode_FromFormat("%U%s%U", argnames, i ? ", " : "", a->name));
    if (!argnames) break;
    Py_SETREF(argsig, PyUnicode_FromFormat("%U%s%U", argsig, i ? ", " : "", a->sigtext));
  }
  PyObject *name = NULL, *sig = NULL;
  if (argnames && argsig) {
    name = PyUnicode_FromFormat("(%U%s) -> %U", argnames, n == 1 ? "," : "",
                                ret ? ret->name : (PyObject *)NULL);
    sig = ret ? PyUnicode_FromFormat("%U(%U)", ret->sigtext, argsig)
              : PyUnicode_FromFormat("(%U%s)", argsig, n == 1 ? "," : "");
  }
  Py_XDECREF(argnames);
  Py_XDECREF(argsig);
  NbType *t = name && sig ? type_new(st, T_SIGNATURE, name, sig) : NULL;
  Py_XDECREF(name);
  Py_XDECREF(sig);
  if (!t) return NULL;
  t->dtype = Py_NewRef(ret ? (PyObject *)ret : Py_None);
  t->args = Py_NewRef(args);
  return (PyObject *)t;
}

/* nbcuda's type object equal to obj: obj itself, or for one of numba's scalar and array
 * types nbcuda's of the same name (arrays by dtype, ndim and layout); NULL with no error set
 * for anything else. */
static PyObject *own_type(nbc__py_state *st, PyObject *obj) {
  PyObject *text;
  if (is_nbtype(st, obj)) return ((NbType *)obj)->kind == T_SIGNATURE ? NULL : Py_NewRef(obj);
  if (!nbc__py_is_type(st, obj, &text)) return NULL;
  /* a scalar: nbcuda's of the name numba_type_text gives it */
  PyObject *scalar = PyDict_GetItemWithError(st->types, text);
  Py_DECREF(text);
  if (scalar || PyErr_Occurred()) {
    PyErr_Clear();
    return Py_XNewRef(scalar);
  }
  PyObject *layout = PyObject_GetAttrString(obj, "layout");
  if (!layout) {
    PyErr_Clear();
    return NULL;
  }
  PyObject *dtype = PyObject_GetAttrString(obj, "dtype");
  PyObject *ndim = dtype ? PyObject_GetAttrString(obj, "ndim") : NULL;
  PyObject *base = ndim ? own_type(st, dtype) : NULL;
  long n = base ? PyLong_AsLong(ndim) : -1;
  const char *lay = PyUnicode_Check(layout) ? PyUnicode_AsUTF8(layout) : NULL;
  PyObject *t = NULL;
  if (base && Py_TYPE(base) == st->NbTypeType && n >= 0 && n <= NBC__PY_MAXDIM && lay &&
      (lay[0] == 'C' || lay[0] == 'F' || lay[0] == 'A'))
    t = array_type(st, (NbType *)base, (int)n, lay[0], !numba_array_mutable(obj));
  Py_DECREF(layout);
  Py_XDECREF(dtype);
  Py_XDECREF(ndim);
  Py_XDECREF(base);
  PyErr_Clear();
  return t;
}

/* float32(float32, int64) builds a signature (numba's type objects taken as nbcuda's);
 * float32(1.7) converts a value like numba (numpy's scalar of that type). */
static PyObject *type_call(NbType *self, PyObject *args, PyObject *kwargs) {
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  if (kwargs && PyDict_GET_SIZE(kwargs)) {
    PyErr_SetString(PyExc_TypeError, "type objects take no keyword arguments");
    return NULL;
  }
  if (self->kind == T_SIGNATURE) {
    PyErr_SetString(PyExc_TypeError, "a signature cannot be called");
    return NULL;
  }
  PyObject *types = PyTuple_New(n);
  for (Py_ssize_t i = 0; types && i < n; i++) {
    PyObject *t = own_type(st, PyTuple_GET_ITEM(args, i));
    if (!t)
      Py_CLEAR(types);
    else
      PyTuple_SET_ITEM(types, i, t);
  }
  if (types && (n > 0 || self->kind != T_SCALAR)) {
    PyObject *sig = make_signature(st, self, types);
    Py_DECREF(types);
    return sig;
  }
  Py_XDECREF(types);
  if (self->kind == T_SCALAR && n == 1) {
    if (!self->typestr)
      return PyErr_Format(PyExc_TypeError, "%U values exist in kernels only: numpy has no such "
                          "type (convert it in the kernel, as float32(x))", self->name);
    PyObject *np = nbc__py_numpy(st);
    if (!np) return NULL;
    PyObject *dt = PyObject_CallMethod(np, "dtype", "s", self->typestr);
    if (!dt) return NULL;
    PyObject *scalar_type = PyObject_GetAttrString(dt, "type");
    Py_DECREF(dt);
    if (!scalar_type) return NULL;
    PyObject *r = PyObject_CallOneArg(scalar_type, PyTuple_GET_ITEM(args, 0));
    Py_DECREF(scalar_type);
    return r;
  }
  PyErr_Format(PyExc_TypeError, "%U() takes type objects (a signature) or one value",
               self->name);
  return NULL;
}

static PyObject *type_get_name(NbType *self, void *c) {
  (void)c;
  return Py_NewRef(self->name);
}
static PyObject *type_get_bitwidth(NbType *self, void *c) {
  (void)c;
  if (self->kind != T_SCALAR) {
    PyErr_SetString(PyExc_AttributeError, "only scalar types have a bitwidth");
    return NULL;
  }
  return PyLong_FromLong(self->bitwidth);
}
static PyObject *type_get_dtype(NbType *self, void *c) {
  (void)c;
  if (self->kind == T_SIGNATURE || !self->dtype) {
    PyErr_SetString(PyExc_AttributeError,
                    "only array types, UniTuples and CPointers have a dtype");
    return NULL;
  }
  return Py_NewRef(self->dtype);
}
static PyObject *type_get_ndim(NbType *self, void *c) {
  (void)c;
  return PyLong_FromLong(self->ndim);
}
static PyObject *type_get_layout(NbType *self, void *c) {
  (void)c;
  if (self->kind != T_ARRAY) Py_RETURN_NONE;
  return PyUnicode_FromOrdinal(self->layout);
}
static PyObject *type_get_args(NbType *self, void *c) {
  (void)c;
  if (self->kind != T_SIGNATURE) {
    PyErr_SetString(PyExc_AttributeError, "only signatures have args");
    return NULL;
  }
  return Py_NewRef(self->args);
}
static PyObject *type_get_return_type(NbType *self, void *c) {
  (void)c;
  if (self->kind != T_SIGNATURE) {
    PyErr_SetString(PyExc_AttributeError, "only signatures have a return_type");
    return NULL;
  }
  return Py_NewRef(self->dtype);
}
/* complex64.underlying_float is float32, complex128's float64 (numba's Complex types). */
static PyObject *type_get_underlying_float(NbType *self, void *c) {
  (void)c;
  const char *name = self->kind == T_SCALAR ? PyUnicode_AsUTF8(self->name) : NULL;
  const char *part = !name                            ? NULL
                     : strcmp(name, "complex64") == 0  ? "float32"
                     : strcmp(name, "complex128") == 0 ? "float64"
                                                       : NULL;
  PyObject *t = part ? PyDict_GetItemString(nbc__py_state_of((PyObject *)self)->types, part)
                     : NULL;
  if (!t) {
    PyErr_Format(PyExc_AttributeError, "only complex types have an underlying_float, not %U",
                 self->name);
    return NULL;
  }
  return Py_NewRef(t);
}
static PyObject *type_get_sigtext(NbType *self, void *c) {
  (void)c;
  return Py_NewRef(self->sigtext);
}

/* numba's typeof hook: numba.core.typing.typeof falls back to obj._numba_type_ for objects
 * it does not know, so nbcuda's type objects are usable in code numba itself compiles (CPU
 * njit or numba-cuda, e.g. `seed = uint64(seed)` with `from nbcuda import uint64`): a scalar
 * is numba's class of the same scalar (NumberClass), an array type numba's TypeRef of the
 * same array type. The numba types module already loaded answers (numba's, or numba-cuda's
 * own without numba); without one, or for other kinds, AttributeError, which typeof reads as
 * "no hook". */
static PyObject *numba_equivalent(PyObject *numba_types, const NbType *t) {
  if (t->kind == T_SCALAR) return PyObject_GetAttr(numba_types, t->sigtext);
  if (t->kind != T_ARRAY || !t->dtype) return NULL;
  PyObject *dtype = numba_equivalent(numba_types, (const NbType *)t->dtype);
  PyObject *array = dtype ? PyObject_CallMethod(numba_types, "Array", "OiCi", dtype, t->ndim,
                                                (int)t->layout, t->readonly)
                          : NULL;
  Py_XDECREF(dtype);
  return array;
}

static PyObject *type_get_numba_type(NbType *self, void *c) {
  (void)c;
  static const char *const loaded[][2] = {{"numba.core.types", "numba.core.typing.typeof"},
                                          {"numba.cuda.types", "numba.cuda.typing.typeof"}};
  PyObject *r = NULL;
  for (size_t i = 0; !r && i < sizeof loaded / sizeof *loaded; i++) {
    PyObject *name = PyUnicode_FromString(loaded[i][0]);
    PyObject *numba_types = name ? PyImport_GetModule(name) : NULL; /* only if loaded */
    Py_XDECREF(name);
    PyObject *same = numba_types ? numba_equivalent(numba_types, self) : NULL;
    PyObject *typeof = same ? PyImport_ImportModule(loaded[i][1]) : NULL;
    r = typeof ? PyObject_CallMethod(typeof, "typeof", "(O)", same) : NULL;
    Py_XDECREF(typeof);
    Py_XDECREF(same);
    Py_XDECREF(numba_types);
    PyErr_Clear();
  }
  if (!r)
    PyErr_Format(PyExc_AttributeError, "no numba type for %U (numba is not loaded, or it has "
                 "no such type)", self->name);
  return r;
}

static PyGetSetDef type_getset[] = {
    {"name", (getter)type_get_name, NULL, "numba's name of the type", NULL},
    {"bitwidth", (getter)type_get_bitwidth, NULL, "bits of a scalar type", NULL},
    {"dtype", (getter)type_get_dtype, NULL, "element type of an array type", NULL},
    {"ndim", (getter)type_get_ndim, NULL, "dimensions of an array type", NULL},
    {"layout", (getter)type_get_layout, NULL, "'C', 'F' or 'A' for array types", NULL},
    {"args", (getter)type_get_args, NULL, "argument types of a signature", NULL},
    {"return_type", (getter)type_get_return_type, NULL, "return type of a signature", NULL},
    {"underlying_float", (getter)type_get_underlying_float, NULL,
     "float32 for complex64, float64 for complex128", NULL},
    {"signature_text", (getter)type_get_sigtext, NULL, "the text the C parser reads", NULL},
    {"_numba_type_", (getter)type_get_numba_type, NULL, "numba's typeof() of this type", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* Whether numba's array type obj is writable (its `mutable`; true when it has none). */
static int numba_array_mutable(PyObject *obj) {
  PyObject *m = PyObject_GetAttrString(obj, "mutable");
  int r = m ? PyObject_IsTrue(m) : 1;
  Py_XDECREF(m);
  PyErr_Clear();
  return r != 0;
}

/* types.Type(name) and classes derived from it in Python (numba's extension types,
 * `class MyType(types.Type)`): an opaque type of that name, which no kernel signature knows
 * (the C parser says so), so code that defines such classes still imports. The classes of
 * this file make their objects themselves. */
static PyObject *type_base_new(PyTypeObject *cls, PyObject *args, PyObject *kwargs) {
  nbc__py_state *st = (nbc__py_state *)PyType_GetModuleState(cls);
  PyErr_Clear(); /* a class derived in Python has no module of its own */
  PyObject *name = NULL;
  static char *kwlist[] = {"name", NULL};
  /* Type(name) itself; a derived class's arguments are its own __init__'s */
  if (st && cls == st->NbTypeType &&
      !PyArg_ParseTupleAndKeywords(args, kwargs, "|U:Type", kwlist, &name))
    return NULL;
  NbType *t = (NbType *)cls->tp_alloc(cls, 0);
  if (!t) return NULL;
  t->kind = T_OTHER;
  t->name = name ? Py_NewRef(name) : PyUnicode_FromString(cls->tp_name);
  t->sigtext = t->name ? Py_NewRef(t->name) : NULL;
  if (!t->name) Py_CLEAR(t);
  return (PyObject *)t;
}

/* Type.__init__(self, name=None) as a derived class's __init__ calls it: names the object.
 * The objects of nbcuda's own classes (float32, arrays, tuples) are shared and never
 * renamed. */
static int type_base_init(NbType *self, PyObject *args, PyObject *kwargs) {
  PyTypeObject *tp = Py_TYPE(self);
  if ((tp->tp_flags & Py_TPFLAGS_HEAPTYPE) && ((PyHeapTypeObject *)tp)->ht_module) return 0;
  static char *kwlist[] = {"name", NULL};
  PyObject *name = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|U:Type", kwlist, &name)) return -1;
  if (name) {
    Py_SETREF(self->name, Py_NewRef(name));
    Py_SETREF(self->sigtext, Py_NewRef(name));
  }
  return 0;
}

static PyType_Slot type_slots[] = {
    {Py_tp_new, type_base_new},
    {Py_tp_init, type_base_init},
    {Py_tp_dealloc, type_dealloc},
    {Py_tp_traverse, type_traverse},
    {Py_tp_clear, type_clear},
    {Py_tp_str, type_str},
    {Py_tp_repr, type_repr},
    {Py_tp_hash, type_hash},
    {Py_tp_richcompare, type_richcompare},
    {Py_tp_call, type_call},
    {Py_mp_subscript, type_getitem},
    {Py_tp_getset, type_getset},
    {Py_tp_doc, (void *)"Type(name)\n--\n\nA numba type: a scalar, an array type or a signature."},
    {0, NULL},
};

static PyType_Spec type_spec = {
    .name = "nbcuda.Type",
    .basicsize = sizeof(NbType),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE |
             Py_TPFLAGS_BASETYPE,
    .slots = type_slots,
};

/* A signature is no type (numba's Signature is not a types.Type): the same object layout and
 * behaviour under a class of its own. */
static PyType_Spec signature_spec = {
    .name = "nbcuda.Signature",
    .basicsize = sizeof(NbType),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION |
             Py_TPFLAGS_IMMUTABLETYPE,
    .slots = type_slots,
};

/* numba's Array(dtype, ndim, layout, readonly): the array type that slicing spells,
 * float32[:, ::1] for Array(float32, 2, 'C'), or numba's `readonly array(...)`. It is the
 * class of the array types too, so isinstance(t, Array) tells them from scalars as in numba.
 * aligned=False is what numba makes an array of a packed record; of other elements nbcuda
 * refuses it (it reads array elements at their natural alignment). */
static PyObject *array_new(PyTypeObject *cls, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"dtype", "ndim", "layout", "readonly", "name", "aligned", NULL};
  PyObject *dtype, *name = Py_None;
  int ndim, readonly = 0, aligned = 1;
  const char *layout;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Ois|pOp:Array", kwlist, &dtype, &ndim,
                                   &layout, &readonly, &name, &aligned))
    return NULL;
  nbc__py_state *st = (nbc__py_state *)PyType_GetModuleState(cls);
  if (!st) return NULL;
  if (Py_TYPE(dtype) != st->NbTypeType ||
      (((NbType *)dtype)->kind != T_SCALAR && ((NbType *)dtype)->kind != T_RECORD &&
       ((NbType *)dtype)->kind != T_DATETIME)) {
    PyErr_Format(PyExc_TypeError, "Array takes a scalar or record type such as float32, not %R",
                 dtype);
    return NULL;
  }
  if (ndim < 0 || ndim > NBC__PY_MAXDIM) {
    PyErr_Format(PyExc_ValueError, "Array: ndim must be from 0 to %d, not %d", NBC__PY_MAXDIM,
                 ndim);
    return NULL;
  }
  if (strcmp(layout, "C") != 0 && strcmp(layout, "F") != 0 && strcmp(layout, "A") != 0) {
    PyErr_Format(PyExc_ValueError, "Array: layout must be 'C', 'F' or 'A', not '%s'", layout);
    return NULL;
  }
  if (name != Py_None) {
    PyErr_SetString(PyExc_TypeError, "Array: nbcuda's array types have numba's name "
                                     "(name= is not supported)");
    return NULL;
  }
  if (!aligned && !((NbType *)dtype)->packed) {
    PyErr_Format(PyExc_TypeError, "Array: aligned=False is an array of a packed record; "
                 "nbcuda reads arrays of %U at their natural alignment", ((NbType *)dtype)->name);
    return NULL;
  }
  /* a 1-d array contiguous in either order is C, as float32[::1] spells it */
  return array_type(st, (NbType *)dtype, ndim, ndim == 1 && layout[0] == 'F' ? 'C' : layout[0],
                    readonly);
}



/* numba's names of numpy's datetime64 and timedelta64 of each unit it knows. */
static const char *const datetime_units[] = {"Y",  "M",  "W",  "D",  "h",  "m",  "s", "ms",
                                             "us", "ns", "ps", "fs", "as", ""};
#define DT_NAMES_(prefix)                                                                      \
  {prefix "[Y]",  prefix "[M]",  prefix "[W]",  prefix "[D]",  prefix "[h]",                   \
   prefix "[m]",  prefix "[s]",  prefix "[ms]", prefix "[us]", prefix "[ns]",                  \
   prefix "[ps]", prefix "[fs]", prefix "[as]", prefix "[]"}
static const char *const datetime_names[2][14] = {DT_NAMES_("datetime64"),
                                                  DT_NAMES_("timedelta64")};
static const char *const datetime_typestrs[2][14] = {DT_NAMES_("<M8"), DT_NAMES_("<m8")};
#undef DT_NAMES_

const char *nbc__py_datetime_name(const char *ts) {
  if (!ts || (ts[0] != '<' && ts[0] != '=' && ts[0] != '|') || (ts[1] != 'M' && ts[1] != 'm') ||
      ts[2] != '8')
    return NULL;
  const char *unit = "";
  size_t len = 0;
  if (ts[3] == '[') {
    unit = ts + 4;
    const char *end = strchr(unit, ']');
    if (!end || end[1]) return NULL;
    len = (size_t)(end - unit);
  } else if (ts[3]) {
    return NULL;
  }
  for (int u = 0; u < 14; u++)
    if (strlen(datetime_units[u]) == len && memcmp(datetime_units[u], unit, len) == 0)
      return datetime_names[ts[1] == 'm'][u];
  return NULL; /* a multiple of a unit ("M8[25s]"): numba has no type for it */
}

PyObject *nbc__py_string_type_text(Py_UCS4 kind, long itemsize) {
  if (kind == 'S' && itemsize > 0) return PyUnicode_FromFormat("[char x %ld]", itemsize);
  if (kind == 'U' && itemsize > 0 && itemsize % 4 == 0)
    return PyUnicode_FromFormat("[unichr x %ld]", itemsize / 4);
  return NULL;
}

int nbc__py_datetime_code(const char *name) {
  for (int k = 0; k < 2; k++)
    for (int u = 0; u < 14; u++)
      if (datetime_names[k][u] == name) return 1 + 14 * k + u;
  return 0;
}

/* scalar_defs' index of (kind, itemsize), built from the table when the module loads (the
 * same bytes each time): a launch asks once per array argument (lazy kernels' type codes),
 * where the table's search cost ~100 instructions. Indexed by kind letter and log2(itemsize)
 * (1..16 bytes); -1: none. */
static signed char scalar_index[128][5];

static void build_scalar_index(void) {
  memset(scalar_index, -1, sizeof scalar_index);
  for (size_t i = 0; i < sizeof scalar_defs / sizeof scalar_defs[0]; i++) {
    int bytes = scalar_defs[i].bits / 8, lg = 0;
    while ((1 << lg) < bytes) lg++;
    scalar_index[(unsigned char)scalar_defs[i].typestr[1] & 127][lg] = (signed char)i;
  }
}

const char *nbc__py_scalar_name(char kind, long itemsize) {
  int lg = itemsize == 1 ? 0 : itemsize == 2 ? 1 : itemsize == 4 ? 2 : itemsize == 8 ? 3
         : itemsize == 16 ? 4 : -1;
  int i = lg >= 0 && (unsigned char)kind < 128 ? scalar_index[(unsigned char)kind][lg] : -1;
  return i >= 0 ? scalar_defs[i].name : NULL;
}

static int dtype_ints(PyObject *dtype, const char *attr, long *pv) {
  PyObject *v = PyObject_GetAttrString(dtype, attr);
  *pv = v ? PyLong_AsLong(v) : -1;
  Py_XDECREF(v);
  return *pv == -1 && PyErr_Occurred() ? -1 : 0;
}

const char *nbc__py_dtype_datetime_name(PyObject *dtype) {
  PyObject *str = dtype ? PyObject_GetAttrString(dtype, "str") : NULL;
  const char *n = str && PyUnicode_Check(str) ? nbc__py_datetime_name(PyUnicode_AsUTF8(str))
                                              : NULL;
  Py_XDECREF(str);
  PyErr_Clear();
  return n;
}

const char *nbc__py_datetime_scalar(nbc__py_state *st, PyObject *value, long long *pcount) {
  PyObject *dt = PyObject_GetAttr(value, st->str_dtype);
  const char *name = nbc__py_dtype_datetime_name(dt); /* clears a missing dtype's error */
  Py_XDECREF(dt);
  PyObject *count = name ? PyObject_CallMethod(value, "view", "s", "i8") : NULL;
  *pcount = count ? PyLong_AsLongLong(count) : 0;
  Py_XDECREF(count);
  return PyErr_Occurred() ? NULL : name;
}

/* A numpy scalar dtype's scalar name ("float64"), NULL with TypeError for anything else
 * (field_type_text has taken subarrays apart: numpy's base of one is never one itself). */
static const char *field_scalar_name(PyObject *fdt, PyObject *name) {
  PyObject *kind = PyObject_GetAttrString(fdt, "kind");
  PyObject *order = kind ? PyObject_GetAttrString(fdt, "byteorder") : NULL;
  long itemsize = -1;
  const char *k = kind && PyUnicode_Check(kind) ? PyUnicode_AsUTF8(kind) : NULL;
  const char *o = order && PyUnicode_Check(order) ? PyUnicode_AsUTF8(order) : NULL;
  const char *n = NULL;
  if (k && o && dtype_ints(fdt, "itemsize", &itemsize) == 0) {
    if (o[0] == '>')
      PyErr_Format(PyExc_TypeError, "record field '%U' (%R) is big-endian: only native byte "
                   "order is supported", name, fdt);
    else if (!(n = nbc__py_scalar_name(k[0], itemsize)) && (k[0] == 'M' || k[0] == 'm'))
      n = nbc__py_dtype_datetime_name(fdt); /* datetime64[ns], or NULL */
    if (!n && !PyErr_Occurred())
      PyErr_Format(PyExc_TypeError, "record field '%U' has dtype %R: record fields must be "
                   "booleans, integers, floats, complex numbers, dates of one unit or strings",
                   name, fdt);
  }
  Py_XDECREF(kind);
  Py_XDECREF(order);
  return n;
}

/* A record field's type as numba prints it: a scalar's name ("float64"), a record's
 * Record(...) (a record in the record), or a subarray as numba's
 * "nestedarray(float32, (3, 2))"; NULL with TypeError for anything else (strings, objects,
 * big-endian numbers). */
static PyObject *field_type_text(PyObject *fdt, PyObject *name) {
  PyObject *names = PyObject_GetAttrString(fdt, "names"); /* a record in the record */
  if (!names) return NULL;
  int nested = names != Py_None;
  Py_DECREF(names);
  if (nested) {
    if (nbc__py_nesting_enter("a record dtype") < 0) return NULL;
    PyObject *text = nbc__py_record_text(NULL, fdt);
    nbc__py_nesting_leave();
    return text;
  }
  PyObject *sub = PyObject_GetAttrString(fdt, "subdtype");
  if (!sub) return NULL;
  if (sub != Py_None) { /* (base dtype, shape) */
    PyObject *text = NULL;
    if (PyTuple_Check(sub) && PyTuple_GET_SIZE(sub) == 2) {
      PyObject *base = field_type_text(PyTuple_GET_ITEM(sub, 0), name);
      if (base)
        text = PyUnicode_FromFormat("nestedarray(%U, %S)", base, PyTuple_GET_ITEM(sub, 1));
      Py_XDECREF(base);
    }
    Py_DECREF(sub);
    return text;
  }
  Py_DECREF(sub);
  PyObject *kind = PyObject_GetAttrString(fdt, "kind");
  long itemsize = -1;
  int string = kind && PyUnicode_Check(kind) &&
               (PyUnicode_CompareWithASCIIString(kind, "S") == 0 ||
                PyUnicode_CompareWithASCIIString(kind, "U") == 0) &&
               dtype_ints(fdt, "itemsize", &itemsize) == 0;
  PyObject *text = NULL;
  if (string) /* numba's CharSeq and UnicodeCharSeq: [char x 12], [unichr x 12] */
    text = nbc__py_string_type_text(PyUnicode_READ_CHAR(kind, 0), itemsize);
  Py_XDECREF(kind);
  if (string || PyErr_Occurred()) return text;
  const char *n = field_scalar_name(fdt, name);
  return n ? PyUnicode_FromString(n) : NULL;
}

/* Whether dtype is ml_dtypes' bfloat16 (kind 'V', 2 bytes, no fields: numba-cuda's bfloat16,
 * as it types CuPy's and ml_dtypes' arrays of it). 1, 0, or -1 with an error set. */
static int is_ml_bfloat16(PyObject *dtype) {
  PyObject *name = PyObject_GetAttrString(dtype, "name");
  if (!name) return -1;
  int is = PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, "bfloat16") == 0;
  Py_DECREF(name);
  long size = -1;
  if (is && dtype_ints(dtype, "itemsize", &size) < 0) return -1;
  return is && size == 2;
}

PyObject *nbc__py_record_text(nbc__py_state *st, PyObject *dtype) {
  (void)st;
  PyObject *names = PyObject_GetAttrString(dtype, "names");
  PyObject *fields = names ? PyObject_GetAttrString(dtype, "fields") : NULL;
  PyObject *aligned = fields ? PyObject_GetAttrString(dtype, "isalignedstruct") : NULL;
  long size = -1;
  PyObject *text = NULL;
  if (!aligned || dtype_ints(dtype, "itemsize", &size) < 0) goto done;
  if (!PyTuple_Check(names) || !PyMapping_Check(fields)) { /* no fields: bfloat16 or none */
    int bf16 = is_ml_bfloat16(dtype);
    if (bf16 > 0) text = PyUnicode_FromString("__nv_bfloat16");
    else if (bf16 == 0) PyErr_Format(PyExc_TypeError, "%R is not a structured dtype", dtype);
    goto done;
  }
  text = PyUnicode_FromString("Record(");
  for (Py_ssize_t i = 0; text && i < PyTuple_GET_SIZE(names); i++) {
    PyObject *name = PyTuple_GET_ITEM(names, i);
    PyObject *info = PyObject_GetItem(fields, name); /* (dtype, offset[, title]) */
    PyObject *ftext = info && PyTuple_Check(info) && PyTuple_GET_SIZE(info) >= 2
                          ? field_type_text(PyTuple_GET_ITEM(info, 0), name)
                          : NULL;
    long offset = ftext ? PyLong_AsLong(PyTuple_GET_ITEM(info, 1)) : -1;
    Py_XDECREF(info);
    if (!ftext || (offset == -1 && PyErr_Occurred())) {
      if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "bad field '%U' of %R", name, dtype);
      Py_XDECREF(ftext);
      Py_CLEAR(text);
      break;
    }
    if (!PyUnicode_Check(name) || !PyUnicode_IsIdentifier(name)) {
      PyErr_Format(PyExc_TypeError, "record field name %R is not an identifier", name);
      Py_CLEAR(text);
      break;
    }
    Py_SETREF(text, PyUnicode_FromFormat("%U%s%U[type=%U;offset=%ld]", text, i ? "," : "",
                                         name, ftext, offset));
    Py_DECREF(ftext);
  }
  if (text)
    Py_SETREF(text, PyUnicode_FromFormat("%U;%ld;%s)", text, size,
                                         PyObject_IsTrue(aligned) ? "True" : "False"));
done:
  Py_XDECREF(names);
  Py_XDECREF(fields);
  Py_XDECREF(aligned);
  return text;
}

/* from_dtype(dtype): numba's type of a numpy dtype: a scalar type, or a Record type for a
 * structured dtype (which slicing makes into array types, as numba's). */
static PyObject *py_from_dtype(PyObject *module, PyObject *arg) {
  nbc__py_state *st = nbc__py_module_state(module);
  if (!nbc__py_numpy(st)) return NULL;
  PyObject *dtype = PyObject_CallOneArg(st->np_dtype, arg);
  if (!dtype) return NULL;
  PyObject *names = PyObject_GetAttrString(dtype, "names");
  PyObject *result = NULL;
  if (names && names != Py_None) {
    PyObject *text = nbc__py_record_text(st, dtype);
    PyObject *aligned = text ? PyObject_GetAttrString(dtype, "isalignedstruct") : NULL;
    NbType *t = aligned ? type_new(st, T_RECORD, text, text) : NULL;
    if (t) t->packed = !PyObject_IsTrue(aligned);
    Py_XDECREF(text);
    Py_XDECREF(aligned);
    result = (PyObject *)t;
  } else if (names) {
    PyObject *kind = PyObject_GetAttrString(dtype, "kind");
    long itemsize = -1;
    const char *k = kind && PyUnicode_Check(kind) ? PyUnicode_AsUTF8(kind) : NULL;
    const char *n = k && dtype_ints(dtype, "itemsize", &itemsize) == 0
                        ? nbc__py_scalar_name(k[0], itemsize)
                        : NULL;
    const char *dn = !n && k && (k[0] == 'M' || k[0] == 'm') ? nbc__py_dtype_datetime_name(dtype)
                                                              : NULL;
    if (dn) { /* numba's NPDatetime / NPTimedelta, named as numba prints them */
      PyObject *text = PyUnicode_FromString(dn);
      NbType *t = text ? type_new(st, T_DATETIME, text, text) : NULL;
      int code = nbc__py_datetime_code(dn) - 1;
      if (t) t->typestr = datetime_typestrs[code / 14][code % 14]; /* a dtype of arrays */
      result = (PyObject *)t;
      Py_XDECREF(text);
    } else if (n) {
      result = nbc__py_type_from_name(st, n);
    } else if (!PyErr_Occurred()) {
      PyErr_Format(PyExc_NotImplementedError, "unsupported dtype %R", dtype);
    }
    Py_XDECREF(kind);
  }
  Py_XDECREF(names);
  Py_DECREF(dtype);
  return result;
}

static PyObject *element_text(nbc__py_state *st, PyObject *item);

/* numba's printed name of the type whose signature text is sig ("UniTuple(float64 x 2)"),
 * from the C signature parser; NULL with TypeError when sig is not a type. */
static PyObject *printed_name(nbc__py_state *st, PyObject *sig) {
  PyObject *text = PyUnicode_FromFormat("(%U,)", sig);
  const char *c = text ? PyUnicode_AsUTF8(text) : NULL;
  nbc_signature_t *parsed = NULL;
  PyObject *name = NULL;
  if (c && nbc_signature_parse(c, &parsed) == NBC_OK) {
    name = PyUnicode_FromString(nbc_signature_param(parsed, 0)->type_name);
    nbc_signature_destroy(parsed);
  } else if (c) {
    nbc__py_raise(st, NBC_SIGNATURE_ERROR);
  }
  Py_XDECREF(text);
  return name;
}

/* The calling thread's nesting depth (a thread's walk never crosses into another thread). */
static _Thread_local int nesting;

int nbc__py_nesting_enter(const char *what) {
  if (nesting >= NBC__PY_MAX_NESTING) {
    PyErr_Format(PyExc_ValueError, "%s nests more than %d levels deep", what,
                 NBC__PY_MAX_NESTING);
    return -1;
  }
  nesting++;
  return 0;
}

void nbc__py_nesting_leave(void) { nesting--; }

PyObject *nbc__py_join_texts(nbc__py_state *st, const char *open, PyObject *const *items,
                             Py_ssize_t n, PyObject *(*text_of)(nbc__py_state *, PyObject *)) {
  PyObject *s = PyUnicode_FromString(open);
  for (Py_ssize_t i = 0; s && i < n; i++) {
    PyObject *t = text_of(st, items[i]);
    if (!t) {
      Py_CLEAR(s);
      break;
    }
    Py_SETREF(s, PyUnicode_FromFormat("%U%s%U", s, i ? ", " : "", t));
    Py_DECREF(t);
  }
  if (s) Py_SETREF(s, PyUnicode_FromFormat("%U)", s));
  return s;
}

/* A tuple type of item types (type objects, or numba's): its signature text and name. */
static PyObject *tuple_type(nbc__py_state *st, PyObject *items, int uni, Py_ssize_t count) {
  PyObject *same[64], *name = NULL;
  for (Py_ssize_t i = 0; uni && i < count; i++) same[i] = items;
  PyObject *sig = nbc__py_join_texts(st, "Tuple(", uni ? same : PySequence_Fast_ITEMS(items),
                                     uni ? count : PyTuple_GET_SIZE(items), element_text);
  if (sig) name = printed_name(st, sig);
  /* numba's Tuple of items of one type is a UniTuple */
  const char *printed = name ? PyUnicode_AsUTF8(name) : NULL;
  int homogeneous = printed && strncmp(printed, "UniTuple(", 9) == 0;
  NbType *t = name ? type_new_of(homogeneous ? st->NbUniTupleType : st->NbTupleType, T_OTHER,
                                 name, sig)
                   : NULL;
  /* the item types (args), for len(), iteration, t[i] and t.types as numba's tuples have */
  if (t) t->args = uni ? PyTuple_New(count) : PySequence_Tuple(items);
  for (Py_ssize_t i = 0; t && t->args && uni && i < count; i++)
    PyTuple_SET_ITEM(t->args, i, Py_NewRef(items));
  if (t && !t->args) Py_CLEAR(t);
  if (t && homogeneous) t->dtype = Py_NewRef(PyTuple_GET_ITEM(t->args, 0));
  Py_XDECREF(sig);
  Py_XDECREF(name);
  return (PyObject *)t;
}

/* numba's UniTuple(dtype, count), the class of tuple types of one item type. */
static PyObject *uni_tuple_new(PyTypeObject *cls, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"dtype", "count", NULL};
  PyObject *dtype;
  Py_ssize_t count;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "On:UniTuple", kwlist, &dtype, &count))
    return NULL;
  if (count < 1 || count > 64) {
    PyErr_SetString(PyExc_ValueError, "UniTuple: count must be from 1 to 64");
    return NULL;
  }
  nbc__py_state *st = (nbc__py_state *)PyType_GetModuleState(cls);
  return st ? tuple_type(st, dtype, 1, count) : NULL;
}

/* numba's Tuple((t1, t2, ...)), the class of the other tuple types (items of one type make a
 * UniTuple, as numba's Tuple.__new__ does). */
static PyObject *tuple_new(PyTypeObject *cls, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"types", NULL};
  PyObject *arg;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:Tuple", kwlist, &arg)) return NULL;
  /* any sequence of types, as numba's (a list too) */
  PyObject *items = PyTuple_Check(arg) || PyList_Check(arg) ? PySequence_Tuple(arg) : NULL;
  if (!items || PyTuple_GET_SIZE(items) < 1 || PyTuple_GET_SIZE(items) > 64) {
    Py_XDECREF(items);
    PyErr_SetString(PyExc_TypeError, "Tuple takes a tuple or list of 1 to 64 item types");
    return NULL;
  }
  nbc__py_state *st = (nbc__py_state *)PyType_GetModuleState(cls);
  PyObject *r = st ? tuple_type(st, items, 0, 0) : NULL;
  Py_DECREF(items);
  return r;
}

/* A tuple type as numba's: a sequence of its item types (len, iteration, t[i]), t.types,
 * t.count. */
static Py_ssize_t tuple_len(NbType *self) { return PyTuple_GET_SIZE(self->args); }
static PyObject *tuple_item(NbType *self, Py_ssize_t i) {
  if (i < 0 || i >= PyTuple_GET_SIZE(self->args)) {
    PyErr_SetString(PyExc_IndexError, "tuple index out of range");
    return NULL;
  }
  return Py_NewRef(PyTuple_GET_ITEM(self->args, i));
}
static PyObject *tuple_subscript(NbType *self, PyObject *key) {
  return PyObject_GetItem(self->args, key);
}
static PyObject *tuple_get_types(NbType *self, void *c) {
  (void)c;
  return Py_NewRef(self->args);
}
static PyObject *tuple_get_count(NbType *self, void *c) {
  (void)c;
  return PyLong_FromSsize_t(PyTuple_GET_SIZE(self->args));
}
static PyGetSetDef tuple_getset[] = {
    {"types", (getter)tuple_get_types, NULL, "the item types", NULL},
    {"count", (getter)tuple_get_count, NULL, "the number of items", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};
#define TUPLE_SLOTS                                                                        \
  {Py_sq_length, tuple_len}, {Py_sq_item, tuple_item}, {Py_mp_length, tuple_len},          \
      {Py_mp_subscript, tuple_subscript}, {Py_tp_getset, tuple_getset},

/* The classes under types.Type: constructors of their types, and what isinstance asks. */
#define SUBCLASS_SLOTS(new_fn, doc)                                                         \
  {Py_tp_new, new_fn}, {Py_tp_dealloc, type_dealloc}, {Py_tp_traverse, type_traverse},      \
      {Py_tp_clear, type_clear}, {Py_tp_doc, (void *)doc}, {0, NULL}
static PyType_Slot array_slots[] = {SUBCLASS_SLOTS(
    array_new, "Array(dtype, ndim, layout, readonly=False, name=None, aligned=True)\n--\n\n"
               "numba's array type, as float32[:, ::1] is "
               "Array(float32, 2, 'C').")};
static PyType_Slot tuple_slots[] = {TUPLE_SLOTS SUBCLASS_SLOTS(
    tuple_new, "Tuple(types)\n--\n\nnumba's Tuple((t1, t2, ...)): a tuple type of those "
               "items.")};
static PyType_Slot uni_tuple_slots[] = {TUPLE_SLOTS SUBCLASS_SLOTS(
    uni_tuple_new,
    "UniTuple(dtype, count)\n--\n\nnumba's tuple type of count items of one type.")};
#undef TUPLE_SLOTS
#undef SUBCLASS_SLOTS
#define SUBCLASS_SPEC(tpname, slot_table)                                                    \
  {.name = tpname, .basicsize = sizeof(NbType),                                              \
   .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,              \
   .slots = slot_table}
static PyType_Spec array_spec = SUBCLASS_SPEC("nbcuda.types.Array", array_slots);
static PyType_Spec tuple_spec = SUBCLASS_SPEC("nbcuda.types.Tuple", tuple_slots);
static PyType_Spec uni_tuple_spec = SUBCLASS_SPEC("nbcuda.types.UniTuple", uni_tuple_slots);
#undef SUBCLASS_SPEC

/* numba's CPointer(dtype): a pointer to a scalar, printed "float32*", spelled
 * "CPointer(float32)" in signatures. */
static PyObject *py_cpointer(PyObject *module, PyObject *dtype) {
  nbc__py_state *st = nbc__py_module_state(module);
  if (Py_TYPE(dtype) != st->NbTypeType || ((NbType *)dtype)->kind != T_SCALAR) {
    PyErr_Format(PyExc_TypeError, "CPointer takes a scalar type such as float32, not %R",
                 dtype);
    return NULL;
  }
  PyObject *sig = PyUnicode_FromFormat("CPointer(%U)", ((NbType *)dtype)->sigtext);
  PyObject *name = sig ? printed_name(st, sig) : NULL;
  NbType *t = name ? type_new(st, T_OTHER, name, sig) : NULL;
  if (t) t->dtype = Py_NewRef(dtype);
  Py_XDECREF(sig);
  Py_XDECREF(name);
  return (PyObject *)t;
}

/* nbcuda.types' own: numba's pointer type constructor (bound to the nbcuda module, whose
 * state it uses). */
static PyMethodDef tuple_functions[] = {
    {"CPointer", py_cpointer, METH_O,
     "CPointer($module, dtype, /)\n--\n\n"
     "numba's CPointer(dtype): the type of an address of dtype values (a kernel argument is "
     "an int address; p[i] reads and writes)."},
    {NULL, NULL, 0, NULL},
};

static PyMethodDef types_functions[] = {
    {"from_dtype", py_from_dtype, METH_O,
     "from_dtype($module, dtype, /)\n--\n\n"
     "numba's type of a numpy dtype (a scalar, or a Record for a structured dtype)."},
    {NULL, NULL, 0, NULL},
};

int nbc__py_types_init(PyObject *module, nbc__py_state *st) {
  build_scalar_index();
  st->NbTypeType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &type_spec, NULL);
  st->NbSignatureType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &signature_spec, NULL);
  if (!st->NbTypeType || !st->NbSignatureType) return -1;
  PyObject *base = (PyObject *)st->NbTypeType;
  st->NbArrayType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &array_spec, base);
  st->NbTupleType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &tuple_spec, base);
  st->NbUniTupleType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &uni_tuple_spec, base);
  if (!st->NbArrayType || !st->NbTupleType || !st->NbUniTupleType ||
      PyModule_AddFunctions(module, types_functions) < 0)
    return -1;
  st->types = PyDict_New();
  if (!st->types) return -1;
  for (size_t i = 0; i < sizeof scalar_defs / sizeof scalar_defs[0]; i++) {
    const struct scalar_def *d = &scalar_defs[i];
    PyObject *name = PyUnicode_FromString(d->name), *sig = PyUnicode_FromString(d->sigtext);
    NbType *t = name && sig ? type_new(st, T_SCALAR, name, sig) : NULL;
    Py_XDECREF(name);
    Py_XDECREF(sig);
    if (!t) return -1;
    t->bitwidth = d->bits;
    t->typestr = d->typestr;
    /* numba.cuda.bool too (a star import shadows the builtin there as well) */
    int rc = PyDict_SetItemString(st->types, d->name, (PyObject *)t);
    if (rc == 0) rc = PyModule_AddObjectRef(module, d->name, (PyObject *)t);
    for (int a = 0; rc == 0 && d->aliases[a]; a++) {
      rc = PyModule_AddObjectRef(module, d->aliases[a], (PyObject *)t);
      if (rc == 0) rc = PyDict_SetItemString(st->types, d->aliases[a], (PyObject *)t);
    }
    Py_DECREF(t);
    if (rc < 0) return -1;
  }
  /* numba-cuda's bfloat16 (numba.cuda.types.bfloat16, printed __nv_bfloat16): a type of
   * kernels only, numpy having none (no typestr); also nbcuda.bf16.bfloat16 (intrinsics.c) */
  PyObject *bf_name = PyUnicode_FromString("__nv_bfloat16");
  NbType *bf = bf_name ? type_new(st, T_SCALAR, bf_name, bf_name) : NULL;
  Py_XDECREF(bf_name);
  if (!bf) return -1;
  bf->bitwidth = 16;
  int bf_rc = PyModule_AddObjectRef(module, "bfloat16", (PyObject *)bf);
  if (bf_rc == 0) bf_rc = PyDict_SetItemString(st->types, "bfloat16", (PyObject *)bf);
  Py_DECREF(bf);
  if (bf_rc < 0) return -1;
  PyObject *none_name = PyUnicode_FromString("none"), *void_sig = PyUnicode_FromString("void");
  NbType *v = none_name && void_sig ? type_new(st, T_VOID, none_name, void_sig) : NULL;
  Py_XDECREF(none_name);
  Py_XDECREF(void_sig);
  if (!v) return -1;
  int rc = PyModule_AddObjectRef(module, "void", (PyObject *)v);
  if (rc == 0) rc = PyModule_AddObjectRef(module, "none", (PyObject *)v);
  if (rc == 0) rc = PyDict_SetItemString(st->types, "none", (PyObject *)v);
  if (rc == 0) rc = PyDict_SetItemString(st->types, "void", (PyObject *)v);
  Py_DECREF(v);
  if (rc < 0) return -1;
  /* nbcuda.types, as numba-cuda's numba.cuda.types (`from numba.cuda import types`): a
   * module of the type objects, which kernels use as numba's types */
  PyObject *types = PyModule_New("nbcuda.types");
  PyObject *dict = types ? PyModule_GetDict(types) : NULL; /* borrowed */
  rc = dict ? PyDict_Update(dict, st->types) : -1;
  PyObject *doc = rc == 0 ? PyUnicode_FromString(
                                "numba's types for kernels (numba.cuda.types): the scalar "
                                "types, Array, Tuple, UniTuple, CPointer and from_dtype.")
                          : NULL;
  rc = doc ? PyDict_SetItemString(dict, "__doc__", doc) : -1;
  Py_XDECREF(doc);
  PyObject *from_dtype = rc == 0 ? PyObject_GetAttrString(module, "from_dtype") : NULL;
  rc = from_dtype ? PyDict_SetItemString(dict, "from_dtype", from_dtype) : -1;
  for (PyMethodDef *def = tuple_functions; rc == 0 && def->ml_name; def++) {
    PyObject *f = PyCFunction_NewEx(def, module, NULL);
    rc = f ? PyDict_SetItemString(dict, def->ml_name, f) : -1;
    Py_XDECREF(f);
  }
  /* numba's base class of types, for isinstance(t, types.Type) */
  if (rc == 0) rc = PyDict_SetItemString(dict, "Type", (PyObject *)st->NbTypeType);
  if (rc == 0) rc = PyDict_SetItemString(dict, "Array", (PyObject *)st->NbArrayType);
  if (rc == 0) rc = PyDict_SetItemString(dict, "Tuple", (PyObject *)st->NbTupleType);
  if (rc == 0) rc = PyDict_SetItemString(dict, "UniTuple", (PyObject *)st->NbUniTupleType);
  if (rc == 0) rc = PyModule_AddObjectRef(module, "types", types);
  /* `from nbcuda.types import int32`: nbcuda is no package, so sys.modules names it */
  if (rc == 0) rc = PyDict_SetItemString(PyImport_GetModuleDict(), "nbcuda.types", types);
  Py_XDECREF(from_dtype);
  Py_XDECREF(types);
  return rc;
}

/* The signature text of one element of a tuple signature. */
static PyObject *element_text(nbc__py_state *st, PyObject *item) {
  PyObject *name = NULL;
  if (PyUnicode_Check(item)) return Py_NewRef(item);
  if (nbc__py_is_type(st, item, &name)) {
    if (is_nbtype(st, item)) {
      Py_DECREF(name);
      return Py_NewRef(((NbType *)item)->sigtext);
    }
    return name;
  }
  PyErr_Format(PyExc_TypeError, "a signature takes type objects, got %R", item);
  return NULL;
}

PyObject *nbc__py_signature_texts(nbc__py_state *st, PyObject *sigs) {
  PyObject *texts = PyList_New(PyList_GET_SIZE(sigs));
  for (Py_ssize_t i = 0; texts && i < PyList_GET_SIZE(sigs); i++) {
    PyObject *t = nbc__py_signature_text(st, PyList_GET_ITEM(sigs, i));
    if (!t)
      Py_CLEAR(texts);
    else
      PyList_SET_ITEM(texts, i, t);
  }
  return texts;
}

PyObject *nbc__py_signature_text(nbc__py_state *st, PyObject *sig) {
  if (PyUnicode_Check(sig)) return Py_NewRef(sig);
  if (is_nbtype(st, sig)) return Py_NewRef(((NbType *)sig)->sigtext);
  if (PyTuple_Check(sig) || PyList_Check(sig)) {
    Py_ssize_t n = PySequence_Size(sig);
    PyObject *text = PyUnicode_FromString("(");
    for (Py_ssize_t i = 0; text && i < n; i++) {
      PyObject *item = PySequence_GetItem(sig, i);
      PyObject *t = item ? element_text(st, item) : NULL;
      Py_XDECREF(item);
      if (!t) {
        Py_DECREF(text);
        return NULL;
      }
      Py_SETREF(text, PyUnicode_FromFormat("%U%s%U", text, i ? ", " : "", t));
      Py_DECREF(t);
    }
    if (text) Py_SETREF(text, PyUnicode_FromFormat("%U%s)", text, n == 1 ? "," : ""));
    return text;
  }
  /* numba's own Signature objects: "(float32, int64) -> float32" is rebuilt from parts. */
  PyObject *args = PyObject_GetAttrString(sig, "args");
  PyObject *ret = args ? PyObject_GetAttrString(sig, "return_type") : NULL;
  if (!args || !ret) {
    Py_XDECREF(args);
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "invalid signature %R: expected a str, a tuple of types "
                 "or a signature", sig);
    return NULL;
  }
  PyObject *argtext = nbc__py_signature_text(st, args);
  PyObject *rettext = ret == Py_None ? NULL : element_text(st, ret);
  PyObject *text = NULL;
  if (argtext && (rettext || ret == Py_None))
    text = rettext ? PyUnicode_FromFormat("%U%U", rettext, argtext) : Py_NewRef(argtext);
  Py_DECREF(args);
  Py_DECREF(ret);
  Py_XDECREF(argtext);
  Py_XDECREF(rettext);
  return text;
}

PyObject *nbc__py_record_from_name(nbc__py_state *st, const char *name, int packed) {
  PyObject *s = PyUnicode_FromString(name);
  NbType *t = s ? type_new(st, T_RECORD, s, s) : NULL;
  Py_XDECREF(s);
  if (t) t->packed = packed;
  return (PyObject *)t;
}

PyObject *nbc__py_type_from_name(nbc__py_state *st, const char *name) {
  PyObject *t = PyDict_GetItemString(st->types, name);
  if (t) return Py_NewRef(t);
  PyObject *s = PyUnicode_FromString(name);
  if (!s) return NULL;
  NbType *o = type_new(st, T_OTHER, s, s);
  Py_DECREF(s);
  return (PyObject *)o;
}

const char *nbc__py_type_typestr(nbc__py_state *st, PyObject *obj) {
  if (Py_TYPE(obj) != st->NbTypeType ||
      (((NbType *)obj)->kind != T_SCALAR && ((NbType *)obj)->kind != T_DATETIME))
    return NULL;
  return ((NbType *)obj)->typestr;
}

/* numba's EnumMember / IntEnumMember type (its instance_class an enum class): the spelling
 * with the class's qualified name, which numba's str() leaves out ("Enum<int64>(Color)");
 * NULL with no error for other objects. */
static PyObject *numba_type_text(nbc__py_state *st, PyObject *obj);

static PyObject *enum_member_text(nbc__py_state *st, PyObject *obj) {
  PyObject *cls = PyObject_GetAttrString(obj, "instance_class");
  int is_enum = cls ? nbc__py_is_enum_class(cls) : (PyErr_Clear(), 0);
  PyObject *dtype = is_enum > 0 ? PyObject_GetAttrString(obj, "dtype") : NULL;
  PyObject *dtext = dtype ? numba_type_text(st, dtype) : NULL;
  PyObject *text = dtext ? nbc__py_enum_type_text(cls, PyUnicode_AsUTF8(dtext)) : NULL;
  Py_XDECREF(cls);
  Py_XDECREF(dtype);
  Py_XDECREF(dtext);
  return text;
}

/* The signature spelling of one of numba's own type objects: scalars print as their name
 * ("bool" is spelled "boolean"), arrays are rebuilt from dtype, ndim and layout. */
static PyObject *numba_type_text(nbc__py_state *st, PyObject *obj) {
  /* one of nbcuda's inside numba's (numba's types.Array(nbcuda.float32, 1, "C")) */
  if (is_nbtype(st, obj)) return Py_NewRef(((NbType *)obj)->sigtext);
  PyObject *layout = PyObject_GetAttrString(obj, "layout");
  if (!layout) {
    PyErr_Clear();
    PyObject *members = enum_member_text(st, obj);
    if (members || PyErr_Occurred()) return members;
    PyObject *s = PyObject_Str(obj);
    if (s && PyUnicode_CompareWithASCIIString(s, "bool") == 0)
      Py_SETREF(s, PyUnicode_FromString("boolean"));
    else if (s && PyUnicode_CompareWithASCIIString(s, "none") == 0)
      Py_SETREF(s, PyUnicode_FromString("void"));
    return s;
  }
  PyObject *dtype = PyObject_GetAttrString(obj, "dtype");
  PyObject *ndim = PyObject_GetAttrString(obj, "ndim");
  PyObject *dtext = dtype ? numba_type_text(st, dtype) : NULL;
  PyObject *text = NULL;
  const char *lay = PyUnicode_Check(layout) ? PyUnicode_AsUTF8(layout) : "A";
  long n = ndim ? PyLong_AsLong(ndim) : -1;
  int readonly = !numba_array_mutable(obj);
  if (dtext && n >= 0 && lay)
    text = readonly ? PyUnicode_FromFormat("readonly array(%U, %ldd, %c)", dtext, n,
                                           n == 1 && lay[0] == 'F' ? 'C' : lay[0])
                    : array_sigtext(dtext, n, lay[0]);
  Py_DECREF(layout);
  Py_XDECREF(dtype);
  Py_XDECREF(ndim);
  Py_XDECREF(dtext);
  if (!text && !PyErr_Occurred())
    PyErr_Format(PyExc_TypeError, "cannot use numba type %R in a signature", obj);
  return text;
}

int nbc__py_is_type(nbc__py_state *st, PyObject *obj, PyObject **pname) {
  if (is_nbtype(st, obj)) {
    *pname = Py_NewRef(((NbType *)obj)->sigtext);
    return 1;
  }
  /* numba's types are instances of classes in numba.core.types.* */
  PyObject *mod = PyObject_GetAttrString((PyObject *)Py_TYPE(obj), "__module__");
  if (!mod) {
    PyErr_Clear();
    return 0;
  }
  const char *m = PyUnicode_Check(mod) ? PyUnicode_AsUTF8(mod) : NULL;
  /* numba's (numba.core.types; numba.np.types: NPDatetime, NPTimedelta) and numba-cuda
   * 0.30's own copy of them (numba.cuda.types) */
  int is = m && (strncmp(m, "numba.core.types", 16) == 0 ||
                 strncmp(m, "numba.np.types", 14) == 0 ||
                 strncmp(m, "numba.cuda.types", 16) == 0);
  Py_DECREF(mod);
  if (!is) return 0;
  *pname = numba_type_text(st, obj);
  if (!*pname) {
    PyErr_Clear();
    return 0;
  }
  return 1;
}
