/* vectorize.c — numba's cuda.vectorize: element-wise GPU ufuncs from a scalar function.
 *
 *   @cuda.vectorize(["float32(float32, float32)", "float64(float64, float64)"])
 *   def add(a, b):
 *       return a + b
 *   out = add(x, y)          # arrays (host or device) and scalars; out=, stream=
 *   total = add.reduce(x)    # a binary ufunc folds a 1-D array
 *
 * Each signature is compiled as numba-cuda's CUDAVectorize does: the function becomes a device
 * function, and a kernel written from numba's template (the library kernel
 * src/library/vectorize.py, filled with the signature's parameters; compiled by nbcuda like
 * any kernel: the text is run in a copy of the function's globals with __cuda__ and
 * __core__ added, its file name registered in linecache)
 *
 *   def __vectorized_<name>(a0, a1, __out__):
 *       __tid__ = __cuda__.grid(1)
 *       if __tid__ < __out__.shape[0]:
 *           __out__[__tid__] = __core__(a0[__tid__], a1[__tid__])
 *
 * is jitted for 1-D arrays of the argument types and of the result type. A call follows
 * numba's UFuncMechanism.call: device arrays (anything with __cuda_array_interface__) stay
 * where they are, Python and numpy scalars become one-element arrays, other arguments go
 * through numpy.asarray; the signature is the one whose argument dtypes equal the arrays'
 * exactly (scalars match exactly first, then any type; numba's messages when none or several
 * match); arguments are broadcast (numba's rules and "failed to broadcast argument #i"),
 * ravelled when the result has several dimensions, copied to the device on the stream, and the
 * kernel runs over all elements (forall). Without out= the result is a device array if any
 * argument was one, else a host array; out= may be a device or a host array.
 *
 * Where numba is broken nbcuda does what its users expect: a host out= of several dimensions
 * works (numba's assert compares it with the ravelled shape), broadcast host arrays are made
 * contiguous before the copy, and a bare @vectorize (no signatures, which numba-cuda cannot
 * compile) is a TypeError that says so.
 */
#include "nbcuda_py.h"

#include <string.h>

#include <structmember.h>

typedef struct {
  PyObject_HEAD
  PyObject *name;      /* the function's __name__ */
  PyObject *py_func;   /* the scalar function */
  PyObject *functions; /* dict: tuple of argument dtypes -> (result dtype, kernel), in the
                        * order of the signatures (numba's kernelmap) */
  PyObject *identity;  /* None, 0, 1 or "reorderable" */
  PyObject *sigs;      /* list: the signatures vectorize() was given (what pickling sends) */
} UFuncObject;

/* ------------------------------------------------------------ helpers ----------------- */

PyObject *nbc__py_call_method_kw(PyObject *obj, const char *name, PyObject *args,
                                PyObject *kwargs) {
  PyObject *fn = PyObject_GetAttrString(obj, name);
  PyObject *r = fn ? PyObject_Call(fn, args, kwargs) : NULL;
  Py_XDECREF(fn);
  return r;
}

PyObject *nbc__py_call_with_stream(PyObject *obj, const char *name, PyObject *arg,
                                  PyObject *stream) {
  PyObject *args = arg ? PyTuple_Pack(1, arg) : PyTuple_New(0);
  PyObject *kw = args ? Py_BuildValue("{sO}", "stream", stream) : NULL;
  PyObject *r = kw ? nbc__py_call_method_kw(obj, name, args, kw) : NULL;
  Py_XDECREF(args);
  Py_XDECREF(kw);
  return r;
}

int nbc__py_is_device_array(nbc__py_state *st, PyObject *obj) {
  PyObject *cai = NULL;
  int r = nbc__py_optional_attr(obj, st->str_cai, &cai);
  Py_XDECREF(cai);
  if (r < 0) PyErr_Clear(); /* as hasattr */
  return r > 0;
}

PyObject *nbc__py_as_device_array(nbc__py_state *st, PyObject *module, PyObject *obj) {
  if (Py_TYPE(obj) == st->DeviceArrayType) return Py_NewRef(obj);
  return PyObject_CallMethod(module, "as_cuda_array", "(O)", obj);
}

PyObject *nbc__py_attr_tuple(PyObject *obj, const char *name) {
  PyObject *v = PyObject_GetAttrString(obj, name);
  if (v && !PyTuple_Check(v)) Py_SETREF(v, PySequence_Tuple(v));
  return v;
}

Py_ssize_t nbc__py_attr_ssize(PyObject *obj, const char *name) {
  PyObject *v = PyObject_GetAttrString(obj, name);
  Py_ssize_t n = v ? PyNumber_AsSsize_t(v, PyExc_OverflowError) : -1;
  Py_XDECREF(v);
  return n;
}

/* ------------------------------------------------------------ the UFunc object -------- */

static int ufunc_traverse(UFuncObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->name);
  Py_VISIT(self->py_func);
  Py_VISIT(self->functions);
  Py_VISIT(self->identity);
  Py_VISIT(self->sigs);
  return 0;
}

static int ufunc_clear(UFuncObject *self) {
  Py_CLEAR(self->name);
  Py_CLEAR(self->py_func);
  Py_CLEAR(self->functions);
  Py_CLEAR(self->identity);
  Py_CLEAR(self->sigs);
  return 0;
}

static void ufunc_dealloc(UFuncObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  ufunc_clear(self);
  tp->tp_free(self);
  Py_DECREF(tp);
}

PyObject *nbc__py_kernel_name(PyObject *name) {
  if (PyUnicode_Check(name) && PyUnicode_IsIdentifier(name)) return Py_NewRef(name);
  return PyUnicode_FromString("ufunc");
}

PyObject *nbc__py_stage_kernel(PyObject *module, PyObject *py_func, PyObject *source,
                               PyObject *stager_name, PyObject *filename, PyObject *ksig) {
  PyObject *jitkw = Py_BuildValue("{sO}", "device", Py_True), *noargs = PyTuple_New(0);
  PyObject *decorator = jitkw && noargs ? nbc__py_call_method_kw(module, "jit", noargs, jitkw)
                                        : NULL;
  PyObject *core = decorator ? PyObject_CallOneArg(decorator, py_func) : NULL;
  Py_XDECREF(jitkw);
  Py_XDECREF(noargs);
  Py_XDECREF(decorator);
  PyObject *globals = core ? PyObject_GetAttrString(py_func, "__globals__") : NULL;
  PyObject *ns = globals && PyDict_Check(globals) ? PyDict_Copy(globals) : NULL;
  PyObject *kernel = NULL;
  Py_XDECREF(globals);
  if (!ns) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "a GPU ufunc needs a Python function");
  } else if (PyDict_SetItemString(ns, "__cuda__", module) == 0 &&
             PyDict_SetItemString(ns, "__core__", core) == 0 &&
             nbc__py_run_source(PyUnicode_AsUTF8(source), filename, ns) == 0) {
    PyObject *stager = PyDict_GetItemWithError(ns, stager_name);
    PyObject *jitted = stager ? PyObject_CallMethod(module, "jit", "(O)", ksig) : NULL;
    kernel = jitted ? PyObject_CallOneArg(jitted, stager) : NULL;
    Py_XDECREF(jitted);
  }
  Py_XDECREF(ns);
  Py_XDECREF(core);
  return kernel;
}

int nbc__py_parse_signature(nbc__py_state *st, PyObject *sig, PyObject **ptext,
                            nbc_signature_t **psig) {
  *psig = NULL;
  *ptext = nbc__py_signature_text(st, sig);
  const char *ctext = *ptext ? PyUnicode_AsUTF8(*ptext) : NULL;
  nbc_status_t s = ctext ? nbc_signature_parse(ctext, psig) : NBC_OK;
  if (ctext && s == NBC_OK) return 0;
  Py_CLEAR(*ptext);
  return ctext ? nbc__py_raise_int(st, s) : -1;
}

/* The result type of a signature that gives none: the type numba infers, as compile()
 * answers it for the arguments. */
static PyObject *inferred_result(PyObject *module, PyObject *py_func, PyObject *text) {
  PyObject *ckw = Py_BuildValue("{sO}", "device", Py_True);
  PyObject *cargs = ckw ? PyTuple_Pack(2, py_func, text) : NULL;
  PyObject *compiled = cargs ? nbc__py_call_method_kw(module, "compile", cargs, ckw) : NULL;
  PyObject *restype = NULL;
  if (compiled && PyTuple_Check(compiled) && PyTuple_GET_SIZE(compiled) == 2)
    restype = PyObject_Str(PyTuple_GET_ITEM(compiled, 1));
  Py_XDECREF(ckw);
  Py_XDECREF(cargs);
  Py_XDECREF(compiled);
  return restype;
}

/* Compiles one signature: the kernel and its kernelmap entry. */
static int ufunc_add(nbc__py_state *st, PyObject *module, UFuncObject *u, PyObject *sig,
                     Py_ssize_t index) {
  PyObject *text;
  nbc_signature_t *csig;
  if (nbc__py_parse_signature(st, sig, &text, &csig) < 0) return -1;
  int rc = -1, nargs = nbc_signature_nargs(csig);
  PyObject *np = nbc__py_numpy(st);
  PyObject *args = PyUnicode_FromString(""), *items = PyUnicode_FromString("");
  PyObject *ksig = PyUnicode_FromString("void("), *key = PyTuple_New(nargs);
  PyObject *restype = NULL, *name = NULL, *source = NULL, *filename = NULL, *stager = NULL;
  PyObject *kernel = NULL, *resdtype = NULL, *value = NULL;
  if (!np || !args || !items || !ksig || !key) goto done;
  if (nargs == 0) {
    PyErr_Format(PyExc_TypeError, "vectorize: %U has no arguments", text);
    goto done;
  }
  for (int i = 0; i < nargs; i++) {
    const nbc_param_info_t *p = nbc_signature_param(csig, i);
    if (p->kind != NBC_PARAM_SCALAR) {
      PyErr_Format(PyExc_TypeError, "vectorize: argument %d of %U is %s, not a scalar type",
                   i + 1, text, p->type_name);
      goto done;
    }
    PyObject *dt = PyObject_CallMethod(np, "dtype", "s", p->dtype_name);
    if (!dt) goto done;
    PyTuple_SET_ITEM(key, i, dt);
    Py_SETREF(args, PyUnicode_FromFormat("%U%sa%d", args, i ? ", " : "", i));
    Py_SETREF(items, PyUnicode_FromFormat("%U%sa%d[__tid__]", items, i ? ", " : "", i));
    Py_SETREF(ksig, PyUnicode_FromFormat("%U%s[:], ", ksig, p->dtype_name));
    if (!args || !items || !ksig) goto done;
  }
  const char *ret = nbc_signature_return_type(csig);
  if (ret && (!strcmp(ret, "none") || !strcmp(ret, "void"))) {
    PyErr_Format(PyExc_TypeError, "vectorize: %U returns nothing; a ufunc needs a result",
                 text);
    goto done;
  }
  restype = ret ? PyUnicode_FromString(ret) : inferred_result(module, u->py_func, text);
  resdtype = restype ? PyObject_CallMethod(np, "dtype", "(O)", restype) : NULL;
  if (!resdtype) goto done;
  Py_SETREF(ksig, PyUnicode_FromFormat("%U%U[:])", ksig, restype));
  name = nbc__py_kernel_name(u->name);
  if (ksig && name) { /* the kernel: src/library/vectorize.py filled for this signature */
    const char *const pairs[] = {"NAME", PyUnicode_AsUTF8(name), "PARAMS", PyUnicode_AsUTF8(args),
                                 "ARGS", PyUnicode_AsUTF8(items), NULL};
    source = pairs[1] && pairs[3] && pairs[5] ? nbc__py_library_fill(st, "vectorize", pairs)
                                              : NULL;
  }
  filename = source ? PyUnicode_FromFormat("<nbcuda.vectorize %U #%zd>", name, index) : NULL;
  stager = filename ? PyUnicode_FromFormat("__vectorized_%U", name) : NULL;
  kernel = stager ? nbc__py_stage_kernel(module, u->py_func, source, stager, filename, ksig)
                  : NULL;
  value = kernel ? PyTuple_Pack(2, resdtype, kernel) : NULL;
  if (value && PyDict_SetItem(u->functions, key, value) == 0) rc = 0;
done:
  nbc_signature_destroy(csig);
  Py_XDECREF(text);
  Py_XDECREF(args);
  Py_XDECREF(items);
  Py_XDECREF(ksig);
  Py_XDECREF(key);
  Py_XDECREF(restype);
  Py_XDECREF(resdtype);
  Py_XDECREF(name);
  Py_XDECREF(source);
  Py_XDECREF(filename);
  Py_XDECREF(stager);
  Py_XDECREF(kernel);
  Py_XDECREF(value);
  return rc;
}

/* ------------------------------------------------------------ calling ----------------- */

/* numba's _resolve_signature: the kernelmap key the arguments select (a borrowed reference),
 * or NULL with numba's TypeError. types[i] is the array's dtype, NULL for a scalar. */
static PyObject *resolve(nbc__py_state *st, UFuncObject *u, PyObject *argv, PyObject **types,
                         int nscalars) {
  PyObject *np = nbc__py_numpy(st);
  if (!np) return NULL;
  Py_ssize_t n = PyTuple_GET_SIZE(argv);
  PyObject *match = NULL;
  int count = 0;
  for (int pass = nscalars ? 0 : 1; pass < 2 && !count; pass++) {
    Py_ssize_t pos = 0;
    PyObject *formal, *v;
    while (PyDict_Next(u->functions, &pos, &formal, &v)) {
      if (PyTuple_GET_SIZE(formal) != n) continue;
      int all = 1;
      for (Py_ssize_t i = 0; i < n && all; i++) {
        PyObject *actual = types[i];
        if (!actual && pass == 1) continue; /* coercing: a scalar takes any type */
        PyObject *tmp = NULL;
        if (!actual) { /* exact match of scalars: their numpy type */
          PyObject *a = PyObject_CallMethod(np, "asarray", "(O)", PyTuple_GET_ITEM(argv, i));
          actual = tmp = a ? PyObject_GetAttrString(a, "dtype") : NULL;
          Py_XDECREF(a);
          if (!actual) return NULL;
        }
        int eq = PyObject_RichCompareBool(PyTuple_GET_ITEM(formal, i), actual, Py_EQ);
        Py_XDECREF(tmp);
        if (eq < 0) return NULL;
        all = eq;
      }
      if (all) {
        if (!count) match = formal;
        count++;
      }
    }
  }
  if (!count) {
    PyErr_SetString(PyExc_TypeError, "No matching version.  GPU ufunc requires array arguments "
                                     "to have the exact types.  This behaves like regular "
                                     "ufunc with casting='no'.");
    return NULL;
  }
  if (count > 1) {
    PyErr_SetString(PyExc_TypeError, "Failed to resolve ufunc due to ambiguous signature. Too "
                                     "many untyped scalars. Use numpy dtype object to type tag.");
    return NULL;
  }
  return match;
}

/* numba's _multi_broadcast over the arguments' shapes: a new tuple, or NULL with
 * ValueError "failed to broadcast argument #i". */
static PyObject *broadcast_shape(PyObject *shapes) {
  Py_ssize_t n = PyList_GET_SIZE(shapes);
  PyObject *result = Py_NewRef(PyList_GET_ITEM(shapes, 0));
  for (Py_ssize_t i = 1; i < n && result; i++) {
    PyObject *other = PyList_GET_ITEM(shapes, i);
    Py_ssize_t na = PyTuple_GET_SIZE(result), nb = PyTuple_GET_SIZE(other);
    Py_ssize_t nd = na > nb ? na : nb;
    PyObject *next = PyTuple_New(nd);
    for (Py_ssize_t d = 0; next && d < nd; d++) {
      Py_ssize_t a = d - (nd - na) >= 0 ? PyLong_AsSsize_t(PyTuple_GET_ITEM(result, d - (nd - na)))
                                        : 1;
      Py_ssize_t b = d - (nd - nb) >= 0 ? PyLong_AsSsize_t(PyTuple_GET_ITEM(other, d - (nd - nb)))
                                        : 1;
      if (PyErr_Occurred()) {
        Py_CLEAR(next);
        break;
      }
      if (a != b && a != 1 && b != 1) {
        PyErr_Format(PyExc_ValueError, "failed to broadcast argument #%zd", i);
        Py_CLEAR(next);
        break;
      }
      PyTuple_SET_ITEM(next, d, PyLong_FromSsize_t(a == 1 ? b : a));
    }
    Py_SETREF(result, next);
  }
  return result;
}

/* Strides of ary broadcast to shape: 0 on new leading axes and on axes that differ. */
static PyObject *broadcast_strides(PyObject *ary, PyObject *shape) {
  PyObject *ashape = nbc__py_attr_tuple(ary, "shape"),
           *astrides = nbc__py_attr_tuple(ary, "strides");
  PyObject *strides = ashape && astrides ? PyTuple_New(PyTuple_GET_SIZE(shape)) : NULL;
  Py_ssize_t nd = PyTuple_GET_SIZE(shape), missing = strides ? nd - PyTuple_GET_SIZE(ashape) : 0;
  for (Py_ssize_t d = 0; strides && d < nd; d++) {
    PyObject *stride = NULL;
    if (d >= missing) {
      int same = PyObject_RichCompareBool(PyTuple_GET_ITEM(ashape, d - missing),
                                          PyTuple_GET_ITEM(shape, d), Py_EQ);
      if (same < 0) {
        Py_CLEAR(strides);
        break;
      }
      if (same) stride = Py_NewRef(PyTuple_GET_ITEM(astrides, d - missing));
    }
    PyTuple_SET_ITEM(strides, d, stride ? stride : PyLong_FromLong(0));
  }
  Py_XDECREF(ashape);
  Py_XDECREF(astrides);
  return strides;
}

PyObject *nbc__py_restrided(nbc__py_state *st, PyObject *module, PyObject *ary,
                           PyObject *shape, PyObject *strides) {
  PyObject *cai = PyObject_GetAttr(ary, st->str_cai);
  PyObject *desc = cai ? PyDict_Copy(cai) : NULL;
  PyObject *r = NULL;
  if (desc && PyDict_SetItemString(desc, "shape", shape) == 0 &&
      PyDict_SetItemString(desc, "strides", strides) == 0)
    r = PyObject_CallMethod(module, "from_cuda_array_interface", "OOO", desc, ary, Py_False);
  Py_XDECREF(cai);
  Py_XDECREF(desc);
  return r;
}

/* An argument broadcast to shape: device arrays as a zero-strided view of the same memory
 * (numba's broadcast_device), host arrays through numpy (then made contiguous, so that they
 * can be copied). */
static PyObject *broadcast_to(nbc__py_state *st, PyObject *module, PyObject *ary,
                              PyObject *shape) {
  if (!nbc__py_is_device_array(st, ary)) {
    PyObject *np = nbc__py_numpy(st);
    PyObject *b = np ? PyObject_CallMethod(np, "broadcast_to", "OO", ary, shape) : NULL;
    PyObject *r = b ? PyObject_CallMethod(np, "ascontiguousarray", "(O)", b) : NULL;
    Py_XDECREF(b);
    return r;
  }
  PyObject *strides = broadcast_strides(ary, shape);
  PyObject *r = strides ? nbc__py_restrided(st, module, ary, shape, strides) : NULL;
  Py_XDECREF(strides);
  return r;
}

/* numba's attempt_ravel: a.ravel(); a device array that cannot be ravelled in place goes
 * through the host. */
static PyObject *ravel(nbc__py_state *st, PyObject *module, PyObject *a, PyObject *stream) {
  PyObject *r = PyObject_CallMethod(a, "ravel", NULL);
  if (r || !PyErr_ExceptionMatches(PyExc_NotImplementedError) || !nbc__py_is_device_array(st, a))
    return r;
  PyErr_Clear();
  PyObject *host = nbc__py_call_with_stream(a, "copy_to_host", NULL, stream);
  PyObject *flat = host ? PyObject_CallMethod(host, "ravel", NULL) : NULL;
  r = flat ? nbc__py_call_with_stream(module, "to_device", flat, stream) : NULL;
  Py_XDECREF(host);
  Py_XDECREF(flat);
  return r;
}

int nbc__py_forall_launch(PyObject *kernel, Py_ssize_t n, PyObject *stream, PyObject *devarys) {
  if (n == 0) return 0;
  PyObject *nobj = PyLong_FromSsize_t(n);
  PyObject *forall = nobj ? nbc__py_call_with_stream(kernel, "forall", nobj, stream) : NULL;
  PyObject *args = forall ? PyList_AsTuple(devarys) : NULL;
  PyObject *r = args ? PyObject_Call(forall, args, NULL) : NULL;
  Py_XDECREF(nobj);
  Py_XDECREF(forall);
  Py_XDECREF(args);
  Py_XDECREF(r);
  return r ? 0 : -1;
}

/* reshape(a, shape) through the method. */
static PyObject *reshaped(PyObject *a, PyObject *shape) {
  return PyObject_CallMethod(a, "reshape", "(O)", shape);
}

/* The call itself, once the keywords are known (numba's UFuncMechanism.call). */
static PyObject *ufunc_apply(UFuncObject *self, PyObject *argv, PyObject *out,
                             PyObject *stream) {
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  PyObject *module = PyType_GetModule(Py_TYPE(self));
  PyObject *np = nbc__py_numpy(st);
  if (!module || !np) return NULL;
  Py_ssize_t n = PyTuple_GET_SIZE(argv);
  PyObject *arrays = PyList_New(n), *types_list = PyList_New(n), *shapes = PyList_New(0);
  PyObject *devarys = PyList_New(0);
  PyObject *result = NULL, *shape = NULL, *outshape = NULL, *devout = NULL, *number = NULL;
  PyObject *types[64];
  int nscalars = 0, any_device = 0;
  if (!arrays || !types_list || !shapes || !devarys) goto done;
  if (n > 64) {
    PyErr_SetString(PyExc_TypeError, "too many arguments for a GPU ufunc");
    goto done;
  }
  number = PyObject_GetAttrString(np, "number");
  if (!number) goto done;
  /* _fill_arrays, _fill_argtypes */
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *arg = PyTuple_GET_ITEM(argv, i), *a = NULL;
    int scalar = 0;
    if (nbc__py_is_device_array(st, arg)) {
      a = nbc__py_as_device_array(st, module, arg);
    } else {
      scalar = PyLong_Check(arg) || PyFloat_Check(arg) || PyComplex_Check(arg);
      if (!scalar && (scalar = PyObject_IsInstance(arg, number)) < 0) goto done;
      a = scalar ? Py_NewRef(Py_None) : PyObject_CallMethod(np, "asarray", "(O)", arg);
    }
    if (!a) goto done;
    PyList_SET_ITEM(arrays, i, a);
    PyObject *dt = scalar ? Py_NewRef(Py_None) : PyObject_GetAttrString(a, "dtype");
    if (!dt) goto done;
    PyList_SET_ITEM(types_list, i, dt);
    types[i] = scalar ? NULL : dt;
    nscalars += scalar;
  }
  if (PyDict_Size(self->functions) == 0) {
    PyErr_Format(PyExc_TypeError, "%U has no compiled signatures", self->name);
    goto done;
  }
  PyObject *key = resolve(st, self, argv, types, nscalars);
  PyObject *entry = key ? PyDict_GetItemWithError(self->functions, key) : NULL;
  if (!entry) goto done;
  PyObject *resty = PyTuple_GET_ITEM(entry, 0), *kernel = PyTuple_GET_ITEM(entry, 1);
  /* _get_actual_args: scalars as one-element arrays of the selected type */
  for (Py_ssize_t i = 0; i < n; i++) {
    if (types[i]) continue;
    PyObject *one = PyObject_CallMethod(np, "array", "[O]O", PyTuple_GET_ITEM(argv, i),
                                        PyTuple_GET_ITEM(key, i));
    if (!one) goto done;
    PyList_SetItem(arrays, i, one);
  }
  /* _broadcast */
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *s = nbc__py_attr_tuple(PyList_GET_ITEM(arrays, i), "shape");
    if (!s || PyList_Append(shapes, s) < 0) {
      Py_XDECREF(s);
      goto done;
    }
    Py_DECREF(s);
  }
  if (!(shape = broadcast_shape(shapes))) goto done;
  for (Py_ssize_t i = 0; i < n; i++) {
    int same = PyObject_RichCompareBool(PyList_GET_ITEM(shapes, i), shape, Py_EQ);
    if (same < 0) goto done;
    if (same) continue;
    PyObject *b = broadcast_to(st, module, PyList_GET_ITEM(arrays, i), shape);
    if (!b) goto done;
    PyList_SetItem(arrays, i, b);
  }
  outshape = Py_NewRef(shape);
  if (out && out != Py_None && nbc__py_is_device_array(st, out)) {
    out = nbc__py_as_device_array(st, module, out);
    if (!out) goto done;
  } else {
    Py_XINCREF(out);
  }
  int multi = PyTuple_GET_SIZE(shape) > 1;
  /* ravelled when the result has several dimensions, then on the device */
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *a = Py_NewRef(PyList_GET_ITEM(arrays, i));
    if (multi) Py_SETREF(a, ravel(st, module, a, stream));
    if (a && nbc__py_is_device_array(st, a))
      any_device = 1;
    else if (a)
      Py_SETREF(a, nbc__py_call_with_stream(module, "to_device", a, stream));
    if (!a || PyList_Append(devarys, a) < 0) {
      Py_XDECREF(a);
      goto done_out;
    }
    Py_DECREF(a);
  }
  Py_ssize_t total = 1;
  for (Py_ssize_t d = 0; d < PyTuple_GET_SIZE(shape); d++)
    total *= PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, d));
  PyObject *flat_shape = multi ? Py_BuildValue("(n)", total) : Py_NewRef(shape);
  if (!flat_shape) goto done_out;
  int out_device = out && out != Py_None && nbc__py_is_device_array(st, out);
  if (out_device) {
    devout = multi ? ravel(st, module, out, stream) : Py_NewRef(out);
  } else {
    if (out && out != Py_None) { /* a host array: the result's shape and type */
      PyObject *oshape = nbc__py_attr_tuple(out, "shape"),
               *odtype = oshape ? PyObject_GetAttrString(out, "dtype") : NULL;
      int ok_shape = odtype ? PyObject_RichCompareBool(oshape, outshape, Py_EQ) : -1;
      int ok_type = ok_shape > 0 ? PyObject_RichCompareBool(odtype, resty, Py_EQ) : -1;
      if (ok_shape == 0 || ok_type == 0)
        PyErr_Format(PyExc_ValueError, "out= must be an array of shape %R and dtype %R, not "
                                       "%R and %R", outshape, resty, oshape, odtype);
      Py_XDECREF(oshape);
      Py_XDECREF(odtype);
      if (ok_shape <= 0 || ok_type <= 0) {
        Py_DECREF(flat_shape);
        goto done_out;
      }
    }
    PyObject *dargs = Py_BuildValue("(OO)", flat_shape, resty);
    PyObject *dkw = dargs ? Py_BuildValue("{sO}", "stream", stream) : NULL;
    devout = dkw ? nbc__py_call_method_kw(module, "device_array", dargs, dkw) : NULL;
    Py_XDECREF(dargs);
    Py_XDECREF(dkw);
  }
  Py_DECREF(flat_shape);
  if (!devout || PyList_Append(devarys, devout) < 0) goto done_out;
  if (nbc__py_forall_launch(kernel, total, stream, devarys) < 0) goto done_out;
  if (out_device || ((!out || out == Py_None) && any_device)) {
    result = reshaped(devout, outshape);
  } else if (!out || out == Py_None) {
    PyObject *host = PyObject_CallMethod(devout, "copy_to_host", NULL);
    result = host ? reshaped(host, outshape) : NULL;
    Py_XDECREF(host);
  } else {
    PyObject *shaped = reshaped(devout, outshape);
    PyObject *copy = shaped ? PyObject_GetAttrString(shaped, "copy_to_host") : NULL;
    PyObject *cargs = copy ? PyTuple_Pack(1, out) : NULL;
    PyObject *ckw = cargs ? Py_BuildValue("{sO}", "stream", stream) : NULL;
    result = ckw ? PyObject_Call(copy, cargs, ckw) : NULL;
    Py_XDECREF(shaped);
    Py_XDECREF(copy);
    Py_XDECREF(cargs);
    Py_XDECREF(ckw);
  }
done_out:
  Py_XDECREF(out);
done:
  Py_XDECREF(arrays);
  Py_XDECREF(types_list);
  Py_XDECREF(shapes);
  Py_XDECREF(devarys);
  Py_XDECREF(shape);
  Py_XDECREF(outshape);
  Py_XDECREF(devout);
  Py_XDECREF(number);
  return result;
}

/* ufunc(*args, out=None, stream=0); other keywords are warned about, as numba does. */
static PyObject *ufunc_call(UFuncObject *self, PyObject *args, PyObject *kwargs) {
  PyObject *out = Py_None, *stream = NULL, *zero = PyLong_FromLong(0);
  if (!zero) return NULL;
  PyObject *rest = kwargs ? PyDict_Copy(kwargs) : PyDict_New();
  PyObject *result = NULL;
  if (!rest) goto done;
  PyObject *v;
  if ((v = PyDict_GetItemString(rest, "out"))) {
    out = Py_NewRef(v);
    PyDict_DelItemString(rest, "out");
  } else {
    Py_INCREF(out);
  }
  if ((v = PyDict_GetItemString(rest, "stream"))) {
    stream = Py_NewRef(v);
    PyDict_DelItemString(rest, "stream");
  } else {
    stream = Py_NewRef(zero);
  }
  if (PyDict_Size(rest) > 0) {
    PyObject *keys = PySequence_List(rest);
    PyObject *sep = keys ? PyUnicode_FromString(", ") : NULL;
    PyObject *joined = sep ? PyUnicode_Join(sep, keys) : NULL;
    int w = joined ? PyErr_WarnFormat(PyExc_UserWarning, 1, "unrecognized keywords: %U",
                                      joined)
                   : -1;
    Py_XDECREF(keys);
    Py_XDECREF(sep);
    Py_XDECREF(joined);
    if (w < 0) goto done_kw;
  }
  result = ufunc_apply(self, args, out, stream);
done_kw:
  Py_DECREF(out);
  Py_DECREF(stream);
done:
  Py_XDECREF(rest);
  Py_DECREF(zero);
  return result;
}

/* numba's __reduce: folds mem (a 1-D device array) in halves with out= the left half. */
static PyObject *fold(UFuncObject *self, PyObject *mem, PyObject *stream, PyObject *keep) {
  Py_ssize_t n = nbc__py_attr_ssize(mem, "size");
  if (n < 0) return NULL;
  PyObject *parts = n % 2 ? PyObject_CallMethod(mem, "split", "n", n - 1)
                          : PyObject_CallMethod(mem, "split", "n", n / 2);
  PyObject *seq = parts ? PySequence_Tuple(parts) : NULL;
  Py_XDECREF(parts);
  if (!seq) return NULL;
  if (PyTuple_GET_SIZE(seq) != 2 || PyList_Append(keep, seq) < 0) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "split gave no two halves");
    Py_DECREF(seq);
    return NULL;
  }
  PyObject *left = PyTuple_GET_ITEM(seq, 0), *right = PyTuple_GET_ITEM(seq, 1);
  PyObject *result = NULL, *pair = NULL;
  if (n % 2) { /* odd: fold all but the last, then combine with it */
    PyObject *folded = fold(self, left, stream, keep);
    pair = folded ? PyTuple_Pack(2, folded, right) : NULL;
    if (pair) result = ufunc_apply(self, pair, folded, stream);
    Py_XDECREF(folded);
  } else {
    pair = PyTuple_Pack(2, left, right);
    PyObject *r = pair ? ufunc_apply(self, pair, left, stream) : NULL;
    if (r) result = n / 2 > 1 ? fold(self, left, stream, keep) : Py_NewRef(left);
    Py_XDECREF(r);
  }
  Py_XDECREF(pair);
  Py_DECREF(seq);
  return result;
}

/* numba's CUDAUFuncDispatcher.reduce(arg, stream=0) of a binary ufunc over a 1-D array. */
static PyObject *ufunc_reduce(UFuncObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"arg", "stream", NULL};
  PyObject *arg, *stream = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:reduce", kwlist, &arg, &stream))
    return NULL;
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  PyObject *module = PyType_GetModule(Py_TYPE(self));
  Py_ssize_t pos = 0;
  PyObject *key, *value;
  if (!PyDict_Next(self->functions, &pos, &key, &value) || PyTuple_GET_SIZE(key) != 2) {
    PyErr_Format(PyExc_TypeError, "reduce needs a binary ufunc; %U is not one", self->name);
    return NULL;
  }
  Py_ssize_t ndim = nbc__py_attr_ssize(arg, "ndim");
  if (ndim < 0) return NULL;
  if (ndim != 1) {
    PyErr_Format(PyExc_ValueError, "reduce needs a 1-D array, not %zd-D", ndim);
    return NULL;
  }
  Py_ssize_t n = nbc__py_attr_ssize(arg, "size");
  if (n < 0) return NULL;
  if (n == 0) {
    PyErr_SetString(PyExc_TypeError, "Reduction on an empty array.");
    return NULL;
  }
  if (n == 1) return PySequence_GetItem(arg, 0);
  int truth = stream ? PyObject_IsTrue(stream) : 0;
  if (truth < 0) return NULL;
  PyObject *s = truth ? Py_NewRef(stream) : PyObject_CallMethod(module, "stream", NULL);
  PyObject *mem = NULL, *out = NULL, *buf = NULL, *result = NULL, *keep = PyList_New(0);
  if (!s || !keep) goto done;
  mem = nbc__py_is_device_array(st, arg)
            ? Py_NewRef(arg)
            : nbc__py_call_with_stream(module, "to_device", arg, s);
  out = mem ? fold(self, mem, s, keep) : NULL;
  PyObject *dtype = out ? PyObject_GetAttrString(arg, "dtype") : NULL;
  PyObject *np = dtype ? nbc__py_numpy(st) : NULL;
  buf = np ? PyObject_CallMethod(np, "empty", "iO", 1, dtype) : NULL;
  Py_XDECREF(dtype);
  PyObject *copied = buf ? nbc__py_call_with_stream(out, "copy_to_host", buf, s) : NULL;
  /* numba runs this under stream.auto_synchronize() */
  PyObject *synced = copied ? PyObject_CallMethod(s, "synchronize", NULL) : NULL;
  if (synced) result = PySequence_GetItem(buf, 0);
  Py_XDECREF(copied);
  Py_XDECREF(synced);
done:
  Py_XDECREF(s);
  Py_XDECREF(mem);
  Py_XDECREF(out);
  Py_XDECREF(buf);
  Py_XDECREF(keep);
  return result;
}

static PyObject *ufunc_repr(UFuncObject *self) {
  return PyUnicode_FromFormat("<nbcuda GPU ufunc %U (%zd signatures)>", self->name,
                              PyDict_Size(self->functions));
}

/* Pickled as vectorize(signatures, identity=...)(py_func), compiled again where it lands. */
static PyObject *ufunc_pickle(UFuncObject *self, PyObject *unused) {
  (void)unused;
  return nbc__py_decorated_reduce((PyObject *)self, "vectorize", self->sigs, NULL,
                                  self->identity, self->py_func);
}

static PyMethodDef ufunc_methods[] = {
    {"__reduce__", (PyCFunction)ufunc_pickle, METH_NOARGS,
     "__reduce__($self, /)\n--\n\n"
     "Pickles the ufunc as its scalar function, signatures and identity."},
    {"reduce", (PyCFunction)(void (*)(void))ufunc_reduce, METH_VARARGS | METH_KEYWORDS,
     "reduce($self, arg, stream=0)\n--\n\n"
     "Folds a 1-D array with a binary ufunc (numba's pairwise order)."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef ufunc_members[] = {
    {"__name__", T_OBJECT, offsetof(UFuncObject, name), READONLY, "the function's name"},
    {"py_func", T_OBJECT, offsetof(UFuncObject, py_func), READONLY, "the scalar function"},
    {"functions", T_OBJECT, offsetof(UFuncObject, functions), READONLY,
     "{argument dtypes: (result dtype, kernel)}, numba's kernelmap"},
    {"identity", T_OBJECT, offsetof(UFuncObject, identity), READONLY,
     "None, 0, 1 or 'reorderable'"},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot ufunc_slots[] = {
    {Py_tp_call, ufunc_call},
    {Py_tp_traverse, ufunc_traverse},
    {Py_tp_clear, ufunc_clear},
    {Py_tp_dealloc, ufunc_dealloc},
    {Py_tp_repr, ufunc_repr},
    {Py_tp_methods, ufunc_methods},
    {Py_tp_members, ufunc_members},
    {Py_tp_doc, (void *)"A GPU ufunc made by vectorize(): call it with arrays and scalars "
                        "(out=, stream=)."},
    {0, NULL},
};

static PyType_Spec ufunc_spec = {
    .name = "nbcuda.UFunc",
    .basicsize = sizeof(UFuncObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION |
             Py_TPFLAGS_IMMUTABLETYPE,
    .slots = ufunc_slots,
};

/* ------------------------------------------------------------ vectorize() ------------- */

/* The decorator vectorize(sigs) returns: self is (signatures, identity). */
static PyObject *build(PyObject *self, PyObject *func) {
  PyObject *module = PyTuple_GET_ITEM(self, 2);
  nbc__py_state *st = nbc__py_module_state(module);
  if (!PyCallable_Check(func)) {
    PyErr_Format(PyExc_TypeError, "vectorize decorates a function, not %R", func);
    return NULL;
  }
  UFuncObject *u = PyObject_GC_New(UFuncObject, st->UFuncType);
  if (!u) return NULL;
  u->py_func = Py_NewRef(func);
  u->identity = Py_NewRef(PyTuple_GET_ITEM(self, 1));
  u->sigs = Py_NewRef(PyTuple_GET_ITEM(self, 0));
  u->functions = PyDict_New();
  u->name = PyObject_GetAttrString(func, "__name__");
  PyObject_GC_Track(u);
  if (!u->functions || !u->name) {
    Py_DECREF(u);
    return NULL;
  }
  PyObject *sigs = PyTuple_GET_ITEM(self, 0);
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(sigs); i++)
    if (ufunc_add(st, module, u, PyList_GET_ITEM(sigs, i), i) < 0) {
      Py_DECREF(u);
      return NULL;
    }
  return (PyObject *)u;
}

static PyMethodDef build_def = {"vectorize_decorator", build, METH_O,
                                "Compiles the function for the signatures given to vectorize."};

int nbc__py_identity_ok(PyObject *identity) {
  if (identity == Py_None) return 1;
  if (PyUnicode_Check(identity))
    return PyUnicode_CompareWithASCIIString(identity, "reorderable") == 0;
  if (!PyLong_Check(identity)) return 0;
  long v = PyLong_AsLong(identity);
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return 0;
  }
  return v == 0 || v == 1;
}

static PyObject *py_vectorize(PyObject *module, PyObject *args, PyObject *kwargs) {
  PyObject *sigs = NULL, *target = NULL, *identity = Py_None, *cache = Py_False;
  if (PyTuple_GET_SIZE(args) > 1) {
    PyErr_SetString(PyExc_TypeError, "vectorize() takes at most one positional argument");
    return NULL;
  }
  if (PyTuple_GET_SIZE(args)) sigs = PyTuple_GET_ITEM(args, 0);
  PyObject *kw = kwargs ? PyDict_Copy(kwargs) : PyDict_New();
  if (!kw) return NULL;
  PyObject *v, *list = NULL, *result = NULL;
  if (!sigs && (v = PyDict_GetItemString(kw, "ftylist_or_function"))) sigs = v;
  if ((v = PyDict_GetItemString(kw, "target"))) target = v;
  if ((v = PyDict_GetItemString(kw, "identity"))) identity = v;
  if ((v = PyDict_GetItemString(kw, "cache"))) cache = v;
  const char *known[] = {"ftylist_or_function", "target", "identity", "cache"};
  for (size_t i = 0; i < sizeof known / sizeof *known; i++)
    if (PyDict_GetItemString(kw, known[i]) && PyDict_DelItemString(kw, known[i]) < 0) goto done;
  if (target && (!PyUnicode_Check(target) ||
                 PyUnicode_CompareWithASCIIString(target, "cuda") != 0)) {
    PyErr_Format(PyExc_ValueError, "Unsupported target: %S", target);
    goto done;
  }
  int caching = PyObject_IsTrue(cache);
  if (caching) {
    if (caching > 0) PyErr_SetString(PyExc_TypeError, "caching is not supported");
    goto done;
  }
  if (!nbc__py_identity_ok(identity)) {
    PyErr_Format(PyExc_ValueError, "Invalid identity value %R", identity);
    goto done;
  }
  Py_ssize_t pos = 0;
  PyObject *opt, *val;
  while (PyDict_Next(kw, &pos, &opt, &val)) {
    if (PyUnicode_Check(opt) && PyUnicode_CompareWithASCIIString(opt, "nopython") == 0) {
      if (PyErr_WarnEx(PyExc_RuntimeWarning, "nopython kwarg for cuda target is redundant",
                       1) < 0)
        goto done;
      continue;
    }
    PyErr_Format(PyExc_KeyError, "Unrecognized options. cuda vectorize target does not "
                                 "support option: '%S'", opt);
    goto done;
  }
  if (!sigs || PyFunction_Check(sigs) || (PyCallable_Check(sigs) && !PyUnicode_Check(sigs))) {
    PyErr_SetString(PyExc_TypeError,
                    "nbcuda.vectorize needs signatures, e.g. @vectorize(['float32(float32, "
                    "float32)']): GPU ufuncs are compiled when they are made");
    goto done;
  }
  list = PyUnicode_Check(sigs) ? Py_BuildValue("[O]", sigs) : PySequence_List(sigs);
  if (!list) goto done;
  if (PyList_GET_SIZE(list) == 0) {
    PyErr_SetString(PyExc_TypeError, "nbcuda.vectorize needs at least one signature");
    goto done;
  }
  PyObject *self = Py_BuildValue("(OOO)", list, identity, module);
  result = self ? PyCFunction_NewEx(&build_def, self, NULL) : NULL;
  Py_XDECREF(self);
done:
  Py_XDECREF(list);
  Py_DECREF(kw);
  return result;
}

static PyMethodDef vectorize_functions[] = {
    {"vectorize", (PyCFunction)(void (*)(void))py_vectorize, METH_VARARGS | METH_KEYWORDS,
     "vectorize($module, ftylist_or_function=(), /, **kws)\n--\n\n"
     "A decorator making a GPU ufunc (numba's cuda.vectorize)."},
    {NULL, NULL, 0, NULL},
};

int nbc__py_vectorize_init(PyObject *module, nbc__py_state *st) {
  st->UFuncType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &ufunc_spec, NULL);
  if (!st->UFuncType) return -1;
  if (PyModule_AddObjectRef(module, "UFunc", (PyObject *)st->UFuncType) < 0) return -1;
  return PyModule_AddFunctions(module, vectorize_functions);
}
