/* gufunc.c — numba's cuda.guvectorize: generalized GPU ufuncs, which map a function over
 * the outer dimensions of arrays while it sees their inner (core) dimensions whole.
 *
 *   @cuda.guvectorize(["void(float32[:], float32[:], float32[:])"], "(n),(n)->()")
 *   def dot(a, b, out):
 *       s = 0.0
 *       for i in range(a.shape[0]):
 *           s += a[i] * b[i]
 *       out[0] = s
 *   r = dot(x, y)               # x, y of shape (..., n): r of shape (...); out=, stream=
 *
 * Each type signature compiles numba-cuda's CUDAGUFuncVectorize kernel: the function becomes a
 * device function, and a kernel from numba's template (the library kernel
 * src/library/gufunc.py, filled with the signature's parameters; compiled by nbcuda as
 * vectorize.c does)
 *
 *   def __gufunc_<name>(arg0, arg1, arg2):
 *       __tid__ = __cuda__.grid(1)
 *       if __tid__ < min(arg0.shape[0], arg1.shape[0], arg2.shape[0]):
 *           __core__(arg0[__tid__, :], arg1[__tid__, :], arg2[__tid__:(__tid__ + 1)])
 *
 * is jitted with one more (outer) dimension per argument. A call follows numba's
 * GeneralizedUFunc and GUFuncCallSteps: inputs (and outputs given positionally or as out=)
 * are device arrays or go through numpy.asarray; the layout binds each core symbol to one size
 * ("arg #i: shape[j] mismatch argument", "arg #i: insufficient inner dimension"), the largest
 * outer shape is the loop and others must be it, () or (1,) ("arg #i: outer dimension
 * mismatch"); the kernel is the one for the input dtypes, else the first whose dtypes the
 * inputs cast to safely (host inputs are cast); outputs are allocated on the device
 * (shape loop + core), inputs copied there on the stream, a scalar input is broadcast with a
 * zero stride, and the kernel runs once per outer element. Results come back to the host when
 * every argument and output was a host array; one output is returned as is, several as a
 * tuple.
 *
 * Where numba is broken nbcuda does what its users would expect: the fallback signature is the
 * first the inputs cast to safely (numba tests the opposite direction, numpy.can_cast(signature
 * type, input type), so float64 inputs select a float32 kernel and are cast down; a scalar
 * input selects a signature whose type holds its value exactly, so `twice(10)` runs an int32
 * kernel as in numba), and type
 * signatures are required (numba-cuda's dynamic guvectorize fails with an option error).
 */
#include "nbcuda_py.h"

#include <ctype.h>
#include <string.h>

#include <structmember.h>

typedef struct {
  PyObject_HEAD
  PyObject *name;      /* the function's __name__ */
  PyObject *py_func;   /* the core function */
  PyObject *signature; /* the layout, e.g. "(m,n),(n,p)->(m,p)" */
  PyObject *inputsig;  /* list of tuples of symbols, one per input */
  PyObject *outputsig; /* the same per output */
  PyObject *functions; /* dict: input dtypes -> (output dtypes, kernel), in signature order */
  PyObject *identity;
  PyObject *sigs; /* list: the type signatures guvectorize() was given (what pickling sends) */
} GUFuncObject;

/* ------------------------------------------------------------ the layout --------------- */

/* One side of a layout ("(m,n),(n)"): a list of tuples of symbols; NULL with numba's
 * ValueError 'bad token in signature "x"'. */
static PyObject *parse_groups(const char *p, const char *end) {
  PyObject *groups = PyList_New(0);
  while (groups && p < end) {
    if (*p != '(') goto bad;
    p++;
    PyObject *symbols = PyList_New(0);
    while (symbols && p < end && *p != ')') {
      if (*p == ',') {
        p++;
        continue;
      }
      const char *s = p;
      if (!(isalpha((unsigned char)*p) || *p == '_')) {
        Py_DECREF(symbols);
        goto bad;
      }
      while (p < end && (isalnum((unsigned char)*p) || *p == '_')) p++;
      PyObject *sym = PyUnicode_FromStringAndSize(s, p - s);
      if (!sym || PyList_Append(symbols, sym) < 0) Py_CLEAR(symbols);
      Py_XDECREF(sym);
    }
    if (!symbols) {
      Py_CLEAR(groups);
      break;
    }
    if (p >= end) {
      Py_DECREF(symbols);
      goto bad;
    }
    p++; /* ')' */
    PyObject *tuple = PyList_AsTuple(symbols);
    Py_DECREF(symbols);
    if (!tuple || PyList_Append(groups, tuple) < 0) Py_CLEAR(groups);
    Py_XDECREF(tuple);
    if (groups && p < end && *p != ',') goto bad;
    if (groups && p < end) p++; /* a delimiter, not a separator: "(n),(n)," is fine */
  }
  return groups;
bad:
  PyErr_Format(PyExc_ValueError, "bad token in signature \"%.1s\"", p < end ? p : "");
  Py_XDECREF(groups);
  return NULL;
}

/* numba's parse_signature: (inputs, outputs); every output symbol must be an input's. */
static int parse_layout(PyObject *layout, PyObject **pin, PyObject **pout) {
  *pin = *pout = NULL;
  const char *text = PyUnicode_AsUTF8(layout);
  if (!text) return -1;
  size_t n = strlen(text);
  char *flat = PyMem_Malloc(n + 1), *q = flat;
  if (!flat) {
    PyErr_NoMemory();
    return -1;
  }
  for (const char *p = text; *p; p++)
    if (!isspace((unsigned char)*p)) *q++ = *p;
  *q = 0;
  char *arrow = strstr(flat, "->");
  const char *ins_end = arrow ? arrow : q, *outs = arrow ? arrow + 2 : q;
  *pin = parse_groups(flat, ins_end);
  *pout = *pin ? parse_groups(outs, q) : NULL;
  PyMem_Free(flat);
  if (!*pout) goto fail;
  PyObject *defined = PySet_New(NULL), *missing = PyList_New(0);
  for (Py_ssize_t i = 0; defined && i < PyList_GET_SIZE(*pin); i++) {
    PyObject *g = PyList_GET_ITEM(*pin, i);
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(g); j++)
      if (PySet_Add(defined, PyTuple_GET_ITEM(g, j)) < 0) Py_CLEAR(defined);
  }
  for (Py_ssize_t i = 0; defined && missing && i < PyList_GET_SIZE(*pout); i++) {
    PyObject *g = PyList_GET_ITEM(*pout, i);
    for (Py_ssize_t j = 0; missing && j < PyTuple_GET_SIZE(g); j++)
      if (!PySet_Contains(defined, PyTuple_GET_ITEM(g, j)) &&
          PyList_Append(missing, PyTuple_GET_ITEM(g, j)) < 0)
        Py_CLEAR(missing);
  }
  int ok = defined && missing && PyList_GET_SIZE(missing) == 0;
  if (defined && missing && !ok && PyList_Sort(missing) == 0) {
    PyObject *sep = PyUnicode_FromString(",");
    PyObject *names = sep ? PyUnicode_Join(sep, missing) : NULL;
    if (names) PyErr_Format(PyExc_NameError, "undefined output symbols: %U", names);
    Py_XDECREF(sep);
    Py_XDECREF(names);
  }
  Py_XDECREF(defined);
  Py_XDECREF(missing);
  if (ok) return 0;
fail:
  Py_CLEAR(*pin);
  Py_CLEAR(*pout);
  return -1;
}

/* ------------------------------------------------------------ the GUFunc object ------- */

static int gufunc_traverse(GUFuncObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->name);
  Py_VISIT(self->py_func);
  Py_VISIT(self->signature);
  Py_VISIT(self->inputsig);
  Py_VISIT(self->outputsig);
  Py_VISIT(self->functions);
  Py_VISIT(self->identity);
  Py_VISIT(self->sigs);
  return 0;
}

static int gufunc_clear(GUFuncObject *self) {
  Py_CLEAR(self->name);
  Py_CLEAR(self->py_func);
  Py_CLEAR(self->signature);
  Py_CLEAR(self->inputsig);
  Py_CLEAR(self->outputsig);
  Py_CLEAR(self->functions);
  Py_CLEAR(self->identity);
  Py_CLEAR(self->sigs);
  return 0;
}

static void gufunc_dealloc(GUFuncObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  gufunc_clear(self);
  tp->tp_free(self);
  Py_DECREF(tp);
}

static Py_ssize_t nin_of(GUFuncObject *g) { return PyList_GET_SIZE(g->inputsig); }
static Py_ssize_t nout_of(GUFuncObject *g) { return PyList_GET_SIZE(g->outputsig); }

/* The core dimensions of argument i (inputs, then outputs). */
static Py_ssize_t core_ndim(GUFuncObject *g, Py_ssize_t i) {
  PyObject *group = i < nin_of(g) ? PyList_GET_ITEM(g->inputsig, i)
                                  : PyList_GET_ITEM(g->outputsig, i - nin_of(g));
  return PyTuple_GET_SIZE(group);
}

/* Compiles one type signature (numba's DeviceGUFuncVectorize.add). */
static int gufunc_add(nbc__py_state *st, PyObject *module, GUFuncObject *g, PyObject *sig,
                      Py_ssize_t index) {
  PyObject *text;
  nbc_signature_t *csig;
  if (nbc__py_parse_signature(st, sig, &text, &csig) < 0) return -1;
  int rc = -1, nargs = nbc_signature_nargs(csig);
  Py_ssize_t nin = nin_of(g), nout = nout_of(g);
  PyObject *np = nbc__py_numpy(st), *comma = PyUnicode_FromString(", ");
  PyObject *names = PyList_New(0), *checks = PyList_New(0), *items = PyList_New(0);
  PyObject *outer = PyList_New(0), *indtypes = PyTuple_New(nin), *outdtypes = PyTuple_New(nout);
  PyObject *name = NULL, *source = NULL, *filename = NULL, *stager = NULL, *ksig = NULL;
  PyObject *kernel = NULL, *value = NULL;
  if (!np || !comma || !names || !checks || !items || !outer || !indtypes || !outdtypes)
    goto done;
  const char *ret = nbc_signature_return_type(csig);
  if (ret && strcmp(ret, "none") && strcmp(ret, "void")) {
    PyErr_Format(PyExc_TypeError, "guvectorized functions cannot return values: signature %U "
                 "specifies %s return type", text, ret);
    goto done;
  }
  if (nargs != nin + nout) {
    PyErr_Format(PyExc_TypeError, "guvectorize: %U has %d arguments; the layout %U has %zd",
                 text, nargs, g->signature, nin + nout);
    goto done;
  }
  for (int i = 0; i < nargs; i++) {
    const nbc_param_info_t *p = nbc_signature_param(csig, i);
    Py_ssize_t nd = core_ndim(g, i);
    if (p->kind == NBC_PARAM_OTHER) {
      PyErr_Format(PyExc_TypeError, "guvectorize: argument %d of %U is %s, not a scalar or "
                   "array type", i + 1, text, p->type_name);
      goto done;
    }
    if (p->kind == NBC_PARAM_SCALAR && nd > 0) {
      PyErr_SetString(PyExc_ValueError, "gufunc signature mismatch: ndim>0 for scalar");
      goto done;
    }
    PyObject *dims = PyUnicode_FromString(":"), *index = PyUnicode_FromString("__tid__");
    for (Py_ssize_t d = 0; dims && index && d < nd; d++) {
      Py_SETREF(dims, PyUnicode_FromFormat("%U, :", dims));
      Py_SETREF(index, PyUnicode_FromFormat("%U, :", index));
    }
    if (index && nd == 0 && p->kind == NBC_PARAM_ARRAY && p->ndim == 1)
      Py_SETREF(index, PyUnicode_FromString("__tid__:(__tid__ + 1)")); /* stays an array */
    PyObject *argname = PyUnicode_FromFormat("arg%d", i);
    PyObject *check = argname ? PyUnicode_FromFormat("%U.shape[0]", argname) : NULL;
    PyObject *item = check && index ? PyUnicode_FromFormat("%U[%U]", argname, index) : NULL;
    PyObject *type = item && dims ? PyUnicode_FromFormat("%s[%U]", p->dtype_name, dims) : NULL;
    PyObject *dt = type ? PyObject_CallMethod(np, "dtype", "s", p->dtype_name) : NULL;
    int bad = !dt || PyList_Append(names, argname) < 0 || PyList_Append(checks, check) < 0 ||
              PyList_Append(items, item) < 0 || PyList_Append(outer, type) < 0;
    if (dt && !bad) {
      if (i < nin)
        PyTuple_SET_ITEM(indtypes, i, Py_NewRef(dt));
      else
        PyTuple_SET_ITEM(outdtypes, i - nin, Py_NewRef(dt));
    }
    Py_XDECREF(dims);
    Py_XDECREF(index);
    Py_XDECREF(argname);
    Py_XDECREF(check);
    Py_XDECREF(item);
    Py_XDECREF(type);
    Py_XDECREF(dt);
    if (bad) goto done;
  }
  PyObject *args_text = PyUnicode_Join(comma, names), *checks_text = PyUnicode_Join(comma, checks);
  PyObject *items_text = PyUnicode_Join(comma, items), *outer_text = PyUnicode_Join(comma, outer);
  name = nbc__py_kernel_name(g->name);
  if (args_text && checks_text && items_text && outer_text && name) {
    /* the kernel: src/library/gufunc.py filled for this signature */
    const char *const pairs[] = {"NAME", PyUnicode_AsUTF8(name), "PARAMS",
                                 PyUnicode_AsUTF8(args_text), "LENGTHS",
                                 PyUnicode_AsUTF8(checks_text), "ARGS",
                                 PyUnicode_AsUTF8(items_text), NULL};
    if (pairs[1] && pairs[3] && pairs[5] && pairs[7])
      source = nbc__py_library_fill(st, "gufunc", pairs);
    ksig = PyUnicode_FromFormat("void(%U)", outer_text);
  }
  Py_XDECREF(args_text);
  Py_XDECREF(checks_text);
  Py_XDECREF(items_text);
  Py_XDECREF(outer_text);
  filename = source && ksig ? PyUnicode_FromFormat("<nbcuda.guvectorize %U #%zd>", name, index)
                            : NULL;
  stager = filename ? PyUnicode_FromFormat("__gufunc_%U", name) : NULL;
  kernel = stager ? nbc__py_stage_kernel(module, g->py_func, source, stager, filename, ksig)
                  : NULL;
  value = kernel ? PyTuple_Pack(2, outdtypes, kernel) : NULL;
  if (value && PyDict_SetItem(g->functions, indtypes, value) == 0) rc = 0;
done:
  nbc_signature_destroy(csig);
  Py_XDECREF(text);
  Py_XDECREF(comma);
  Py_XDECREF(names);
  Py_XDECREF(checks);
  Py_XDECREF(items);
  Py_XDECREF(outer);
  Py_XDECREF(indtypes);
  Py_XDECREF(outdtypes);
  Py_XDECREF(name);
  Py_XDECREF(source);
  Py_XDECREF(filename);
  Py_XDECREF(stager);
  Py_XDECREF(ksig);
  Py_XDECREF(kernel);
  Py_XDECREF(value);
  return rc;
}

/* ------------------------------------------------------------ scheduling -------------- */

typedef struct {
  PyObject *inner;     /* list: the core shape of each input (tuple) */
  PyObject *oshapes;   /* list: the core shape of each output */
  PyObject *loopdims;  /* the outer shape looped over */
  Py_ssize_t loopn;    /* its number of elements */
} schedule;

static void schedule_clear(schedule *s) {
  Py_CLEAR(s->inner);
  Py_CLEAR(s->oshapes);
  Py_CLEAR(s->loopdims);
}

static Py_ssize_t product(PyObject *shape) {
  Py_ssize_t n = 1;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(shape); i++)
    n *= PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
  return n;
}

/* numba's GUFuncEngine.schedule over the inputs' shapes. */
static int schedule_of(GUFuncObject *g, PyObject *inputs, schedule *s) {
  memset(s, 0, sizeof *s);
  Py_ssize_t nin = nin_of(g);
  PyObject *symbols = PyDict_New(), *outer = PyList_New(0);
  s->inner = PyList_New(0);
  s->oshapes = PyList_New(0);
  if (!symbols || !outer || !s->inner || !s->oshapes) goto fail;
  for (Py_ssize_t a = 0; a < nin; a++) {
    PyObject *shape = nbc__py_attr_tuple(PyList_GET_ITEM(inputs, a), "shape");
    if (!shape) goto fail;
    PyObject *syms = PyList_GET_ITEM(g->inputsig, a);
    Py_ssize_t nd = PyTuple_GET_SIZE(shape), ncore = PyTuple_GET_SIZE(syms);
    if (nd < ncore) {
      PyErr_Format(PyExc_ValueError, "arg #%zd: insufficient inner dimension", a + 1);
      Py_DECREF(shape);
      goto fail;
    }
    PyObject *inner = PyTuple_GetSlice(shape, nd - ncore, nd);
    PyObject *out = PyTuple_GetSlice(shape, 0, nd - ncore);
    int bad = !inner || !out || PyList_Append(s->inner, inner) < 0 ||
              PyList_Append(outer, out) < 0;
    for (Py_ssize_t k = 0; !bad && k < ncore; k++) {
      PyObject *sym = PyTuple_GET_ITEM(syms, k), *dim = PyTuple_GET_ITEM(inner, k);
      PyObject *bound = PyDict_GetItemWithError(symbols, sym);
      if (bound) {
        int same = PyObject_RichCompareBool(bound, dim, Py_EQ);
        if (same == 0)
          PyErr_Format(PyExc_ValueError, "arg #%zd: shape[%zd] mismatch argument", a + 1,
                       nd - ncore + k);
        bad = same <= 0;
      } else {
        bad = PyErr_Occurred() || PyDict_SetItem(symbols, sym, dim) < 0;
      }
    }
    Py_XDECREF(inner);
    Py_XDECREF(out);
    Py_DECREF(shape);
    if (bad) goto fail;
  }
  for (Py_ssize_t o = 0; o < nout_of(g); o++) {
    PyObject *syms = PyList_GET_ITEM(g->outputsig, o);
    PyObject *shape = PyTuple_New(PyTuple_GET_SIZE(syms));
    for (Py_ssize_t k = 0; shape && k < PyTuple_GET_SIZE(syms); k++)
      PyTuple_SET_ITEM(shape, k, Py_NewRef(PyDict_GetItem(symbols, PyTuple_GET_ITEM(syms, k))));
    if (!shape || PyList_Append(s->oshapes, shape) < 0) {
      Py_XDECREF(shape);
      goto fail;
    }
    Py_DECREF(shape);
  }
  Py_ssize_t largest = 0, best = -1; /* numpy.argmax: the first of the largest */
  for (Py_ssize_t a = 0; a < nin; a++) {
    Py_ssize_t n = product(PyList_GET_ITEM(outer, a));
    if (n > best) {
      best = n;
      largest = a;
    }
  }
  s->loopdims = nin ? Py_NewRef(PyList_GET_ITEM(outer, largest)) : PyTuple_New(0);
  if (!s->loopdims) goto fail;
  s->loopn = product(s->loopdims);
  for (Py_ssize_t a = 0; a < nin; a++) {
    PyObject *d = PyList_GET_ITEM(outer, a);
    int same = PyObject_RichCompareBool(d, s->loopdims, Py_EQ);
    if (same < 0) goto fail;
    if (same || PyTuple_GET_SIZE(d) == 0 ||
        (PyTuple_GET_SIZE(d) == 1 && PyLong_AsSsize_t(PyTuple_GET_ITEM(d, 0)) == 1))
      continue; /* the same for every iteration */
    PyErr_Format(PyExc_ValueError, "arg #%zd: outer dimension mismatch", a + 1);
    goto fail;
  }
  Py_DECREF(symbols);
  Py_DECREF(outer);
  return 0;
fail:
  Py_XDECREF(symbols);
  Py_XDECREF(outer);
  schedule_clear(s);
  return -1;
}

/* Whether input v (of dtype have) may be given to a kernel taking dtype want: numpy casts
 * have to want safely, or v is a 0-d host array (a Python or numpy scalar) whose value want
 * holds exactly (`twice(10)` for an int32 signature, as numba-cuda answers it). A device
 * array, which cannot be cast, is matched as numba-cuda's _search_matching_signature matches
 * every input, can_cast(want, have), so that the caller's error is numba's: "no matching
 * signature", or the one saying it does not support .astype(). 1, 0 or -1. */
static int input_casts(nbc__py_state *st, PyObject *np, PyObject *v, PyObject *have,
                       PyObject *want) {
  int device = nbc__py_is_device_array(st, v);
  PyObject *r = device ? PyObject_CallMethod(np, "can_cast", "OO", want, have)
                       : PyObject_CallMethod(np, "can_cast", "OO", have, want);
  int ok = r ? PyObject_IsTrue(r) : -1;
  Py_XDECREF(r);
  if (ok != 0 || device) return ok;
  if (nbc__py_attr_ssize(v, "ndim") != 0) { /* not a scalar (or no ndim at all) */
    PyErr_Clear();
    return 0;
  }
  PyObject *cast = PyObject_CallMethod(v, "astype", "O", want);
  PyObject *same = cast ? PyObject_RichCompare(cast, v, Py_EQ) : NULL;
  ok = same ? PyObject_IsTrue(same) : 0;
  Py_XDECREF(cast);
  Py_XDECREF(same);
  if (ok < 0 || PyErr_Occurred()) { /* a value that does not convert: no */
    PyErr_Clear();
    ok = 0;
  }
  return ok;
}

/* The kernelmap key for the inputs' dtypes: theirs exactly, else the first signature they all
 * cast to (input_casts). A borrowed reference, or NULL with TypeError "no matching
 * signature". */
static PyObject *select_types(nbc__py_state *st, GUFuncObject *g, PyObject *inputs,
                              PyObject *indtypes) {
  PyObject *hit = PyDict_GetItemWithError(g->functions, indtypes);
  if (hit || PyErr_Occurred()) return hit ? indtypes : NULL;
  PyObject *np = nbc__py_numpy(st);
  if (!np) return NULL;
  Py_ssize_t pos = 0;
  PyObject *key, *value;
  while (PyDict_Next(g->functions, &pos, &key, &value)) {
    int all = PyTuple_GET_SIZE(key) == PyTuple_GET_SIZE(indtypes);
    for (Py_ssize_t i = 0; all > 0 && i < PyTuple_GET_SIZE(key); i++)
      all = input_casts(st, np, PyList_GET_ITEM(inputs, i), PyTuple_GET_ITEM(indtypes, i),
                        PyTuple_GET_ITEM(key, i));
    if (all < 0) return NULL;
    if (all) return key;
  }
  PyErr_SetString(PyExc_TypeError, "no matching signature");
  return NULL;
}

/* numba's _broadcast of one input (a device array) to odim outer elements of core shape cs. */
static PyObject *broadcast_input(nbc__py_state *st, PyObject *module, PyObject *p,
                                 Py_ssize_t odim, PyObject *cs) {
  Py_ssize_t size = nbc__py_attr_ssize(p, "size");
  if (size < 0) return NULL;
  if (PyTuple_GET_SIZE(cs) == 0 && size == 1) { /* a scalar input: the same for all */
    PyObject *shape = Py_BuildValue("(n)", odim), *strides = Py_BuildValue("(i)", 0);
    PyObject *r = shape && strides ? nbc__py_restrided(st, module, p, shape, strides) : NULL;
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    return r;
  }
  PyObject *head = Py_BuildValue("(n)", odim);
  PyObject *newshape = head ? PySequence_Concat(head, cs) : NULL;
  PyObject *shape = newshape ? nbc__py_attr_tuple(p, "shape") : NULL;
  PyObject *r = NULL;
  Py_XDECREF(head);
  if (!shape) goto done;
  Py_ssize_t nd = PyTuple_GET_SIZE(shape), nnew = PyTuple_GET_SIZE(newshape);
  int same = PyObject_RichCompareBool(shape, newshape, Py_EQ);
  if (same < 0) goto done;
  if (same) {
    r = Py_NewRef(p);
  } else if (nd < nnew) { /* new leading axes with zero strides */
    PyObject *tail = PyTuple_GetSlice(newshape, nnew - nd, nnew);
    int ok = tail ? PyObject_RichCompareBool(tail, shape, Py_EQ) : -1;
    Py_XDECREF(tail);
    if (ok == 0)
      PyErr_SetString(PyExc_ValueError, "cannot add dim and reshape at the same time");
    PyObject *strides = ok > 0 ? nbc__py_attr_tuple(p, "strides") : NULL;
    PyObject *zeros = strides ? PyTuple_New(nnew - nd) : NULL;
    for (Py_ssize_t i = 0; zeros && i < nnew - nd; i++)
      PyTuple_SET_ITEM(zeros, i, PyLong_FromLong(0));
    PyObject *all = zeros ? PySequence_Concat(zeros, strides) : NULL;
    r = all ? nbc__py_restrided(st, module, p, newshape, all) : NULL;
    Py_XDECREF(strides);
    Py_XDECREF(zeros);
    Py_XDECREF(all);
  } else { /* collapsing the outer dimensions */
    r = PyObject_CallMethod(p, "reshape", "(O)", newshape);
  }
done:
  Py_XDECREF(newshape);
  Py_XDECREF(shape);
  return r;
}

/* ------------------------------------------------------------ calling ----------------- */

static PyObject *gufunc_call(GUFuncObject *self, PyObject *args, PyObject *kwargs) {
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  PyObject *module = PyType_GetModule(Py_TYPE(self));
  PyObject *np = nbc__py_numpy(st);
  if (!module || !np) return NULL;
  Py_ssize_t nin = nin_of(self), nout = nout_of(self), nargs = PyTuple_GET_SIZE(args);
  PyObject *out = kwargs ? PyDict_GetItemString(kwargs, "out") : NULL;
  PyObject *stream = kwargs ? PyDict_GetItemString(kwargs, "stream") : NULL;
  if (out == Py_None) out = NULL;
  PyObject *zero = PyLong_FromLong(0);
  if (!zero) return NULL;
  if (!stream) stream = zero;
  PyObject *inputs = PyList_New(0), *outputs = PyList_New(0), *params = PyList_New(0);
  PyObject *devouts = PyList_New(0), *indtypes = NULL, *result = NULL;
  schedule sch = {0};
  if (!inputs || !outputs || !params || !devouts) goto done;
  if (kwargs) {
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (PyDict_Next(kwargs, &pos, &k, &v))
      if (PyUnicode_CompareWithASCIIString(k, "out") &&
          PyUnicode_CompareWithASCIIString(k, "stream")) {
        PyErr_Format(PyExc_TypeError, "%U() got an unexpected keyword argument %R", self->name, k);
        goto done;
      }
  }
  if ((!out || nargs < nin) && nargs != nin && nargs != nin + nout) { /* out= gives no inputs */
    PyErr_Format(PyExc_TypeError, "This gufunc accepts %zd positional argument%s (when "
                 "providing input only) or %zd positional argument%s (when providing input "
                 "and output). Got %zd positional argument%s.", nin, nin != 1 ? "s" : "",
                 nin + nout, nin + nout != 1 ? "s" : "", nargs, nargs != 1 ? "s" : "");
    goto done;
  }
  if (out && nargs > nin) {
    PyErr_SetString(PyExc_ValueError,
                    "cannot specify argument 'out' as both positional and keyword");
    goto done;
  }
  /* outputs: given (positionally, or out= — a tuple of them for several outputs, where numba
   * would put the tuple itself in each slot) or None; device ones as device arrays */
  int host_only = 1;
  for (Py_ssize_t o = 0; o < nout; o++) {
    PyObject *given = nargs > nin ? PyTuple_GET_ITEM(args, nin + o)
                      : out && PyTuple_Check(out) && PyTuple_GET_SIZE(out) == nout
                          ? PyTuple_GET_ITEM(out, o)
                          : out ? out : Py_None;
    PyObject *v;
    if (given != Py_None && nbc__py_is_device_array(st, given)) {
      v = nbc__py_as_device_array(st, module, given);
      host_only = 0;
    } else if (given != Py_None && nargs > nin) {
      v = PyObject_CallMethod(np, "asarray", "(O)", given);
    } else {
      v = Py_NewRef(given);
    }
    if (!v || PyList_Append(outputs, v) < 0) {
      Py_XDECREF(v);
      goto done;
    }
    Py_DECREF(v);
  }
  for (Py_ssize_t i = 0; i < nin; i++) {
    PyObject *a = PyTuple_GET_ITEM(args, i), *v;
    if (nbc__py_is_device_array(st, a)) {
      v = nbc__py_as_device_array(st, module, a);
      host_only = 0;
    } else {
      v = PyObject_CallMethod(np, "asarray", "(O)", a);
    }
    if (!v || PyList_Append(inputs, v) < 0) {
      Py_XDECREF(v);
      goto done;
    }
    Py_DECREF(v);
  }
  /* _schedule: shapes, kernel, output shapes */
  if (schedule_of(self, inputs, &sch) < 0) goto done;
  indtypes = PyTuple_New(nin);
  for (Py_ssize_t i = 0; indtypes && i < nin; i++) {
    PyObject *dt = PyObject_GetAttrString(PyList_GET_ITEM(inputs, i), "dtype");
    if (!dt) goto done;
    PyTuple_SET_ITEM(indtypes, i, dt);
  }
  if (!indtypes) goto done;
  PyObject *key = select_types(st, self, inputs, indtypes);
  PyObject *entry = key ? PyDict_GetItemWithError(self->functions, key) : NULL;
  if (!entry) goto done;
  PyObject *outdtypes = PyTuple_GET_ITEM(entry, 0), *kernel = PyTuple_GET_ITEM(entry, 1);
  for (Py_ssize_t o = 0; o < nout; o++) {
    PyObject *given = PyList_GET_ITEM(outputs, o);
    if (given == Py_None) continue;
    PyObject *want = PySequence_Concat(sch.loopdims, PyList_GET_ITEM(sch.oshapes, o));
    PyObject *have = want ? nbc__py_attr_tuple(given, "shape") : NULL;
    int same = have ? PyObject_RichCompareBool(want, have, Py_EQ) : -1;
    Py_XDECREF(want);
    Py_XDECREF(have);
    if (same == 0) PyErr_SetString(PyExc_ValueError, "output shape mismatch");
    if (same <= 0) goto done;
  }
  /* adjust_input_types: host inputs cast to the kernel's types */
  for (Py_ssize_t i = 0; i < nin; i++) {
    PyObject *want = PyTuple_GET_ITEM(key, i), *have = PyTuple_GET_ITEM(indtypes, i);
    int same = PyObject_RichCompareBool(want, have, Py_EQ);
    if (same < 0) goto done;
    if (same) continue;
    PyObject *v = PyList_GET_ITEM(inputs, i);
    if (nbc__py_is_device_array(st, v)) {
      PyErr_Format(PyExc_TypeError, "compatible signature is possible by casting but %R does "
                   "not support .astype()", (PyObject *)Py_TYPE(v));
      goto done;
    }
    PyObject *cast = PyObject_CallMethod(v, "astype", "(O)", want);
    if (!cast) goto done;
    PyList_SetItem(inputs, i, cast);
  }
  if (sch.loopn <= 0) {
    PyErr_SetString(PyExc_ValueError, "zero looping dimension");
    goto done;
  }
  Py_ssize_t odim = PyTuple_GET_SIZE(sch.loopdims) ? sch.loopn : 1;
  /* prepare_inputs and _broadcast */
  for (Py_ssize_t i = 0; i < nin; i++) {
    PyObject *v = PyList_GET_ITEM(inputs, i), *d;
    d = nbc__py_is_device_array(st, v) ? Py_NewRef(v)
                                        : nbc__py_call_with_stream(module, "to_device", v, stream);
    PyObject *b = d ? broadcast_input(st, module, d, odim, PyList_GET_ITEM(sch.inner, i)) : NULL;
    Py_XDECREF(d);
    if (!b || PyList_Append(params, b) < 0) {
      Py_XDECREF(b);
      goto done;
    }
    Py_DECREF(b);
  }
  /* prepare_outputs: device outputs given are used, the others allocated */
  for (Py_ssize_t o = 0; o < nout; o++) {
    PyObject *given = PyList_GET_ITEM(outputs, o), *d;
    PyObject *oshape = PyList_GET_ITEM(sch.oshapes, o);
    if (given != Py_None && !host_only) {
      d = Py_NewRef(given);
    } else {
      PyObject *shape = PySequence_Concat(sch.loopdims, oshape);
      PyObject *dargs = shape ? PyTuple_Pack(2, shape, PyTuple_GET_ITEM(outdtypes, o)) : NULL;
      PyObject *dkw = dargs ? Py_BuildValue("{sO}", "stream", stream) : NULL;
      d = dkw ? nbc__py_call_method_kw(module, "device_array", dargs, dkw) : NULL;
      Py_XDECREF(shape);
      Py_XDECREF(dargs);
      Py_XDECREF(dkw);
    }
    PyObject *head = d ? Py_BuildValue("(n)", odim) : NULL;
    PyObject *flat = head ? PySequence_Concat(head, oshape) : NULL;
    PyObject *r = flat ? PyObject_CallMethod(d, "reshape", "(O)", flat) : NULL;
    int bad = !r || PyList_Append(devouts, d) < 0 || PyList_Append(params, r) < 0;
    Py_XDECREF(head);
    Py_XDECREF(flat);
    Py_XDECREF(r);
    Py_XDECREF(d);
    if (bad) goto done;
  }
  if (nbc__py_forall_launch(kernel, sch.loopn, stream, params) < 0) goto done;
  /* post_process_outputs */
  PyObject *results = PyList_New(0);
  for (Py_ssize_t o = 0; results && o < nout; o++) {
    PyObject *d = PyList_GET_ITEM(devouts, o), *given = PyList_GET_ITEM(outputs, o), *r;
    if (host_only) {
      r = given == Py_None ? nbc__py_call_with_stream(d, "copy_to_host", NULL, stream)
                           : nbc__py_call_with_stream(d, "copy_to_host", given, stream);
    } else {
      r = Py_NewRef(PyList_GET_ITEM(outputs, 0) != Py_None ? given : d);
    }
    if (!r || PyList_Append(results, r) < 0) Py_CLEAR(results);
    Py_XDECREF(r);
  }
  if (results)
    result = nout == 1 ? Py_NewRef(PyList_GET_ITEM(results, 0)) : PyList_AsTuple(results);
  Py_XDECREF(results);
done:
  schedule_clear(&sch);
  Py_XDECREF(inputs);
  Py_XDECREF(outputs);
  Py_XDECREF(params);
  Py_XDECREF(devouts);
  Py_XDECREF(indtypes);
  Py_DECREF(zero);
  return result;
}

static PyObject *gufunc_repr(GUFuncObject *self) {
  return PyUnicode_FromFormat("<nbcuda generalized GPU ufunc %U %U (%zd signatures)>",
                              self->name, self->signature, PyDict_Size(self->functions));
}

/* Pickled as guvectorize(signatures, layout, identity=...)(py_func). */
static PyObject *gufunc_pickle(GUFuncObject *self, PyObject *unused) {
  (void)unused;
  return nbc__py_decorated_reduce((PyObject *)self, "guvectorize", self->sigs, self->signature,
                                  self->identity, self->py_func);
}

static PyMethodDef gufunc_methods[] = {
    {"__reduce__", (PyCFunction)gufunc_pickle, METH_NOARGS,
     "__reduce__($self, /)\n--\n\n"
     "Pickles the gufunc as its core function, type signatures, layout and identity."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef gufunc_members[] = {
    {"__name__", T_OBJECT, offsetof(GUFuncObject, name), READONLY, "the function's name"},
    {"py_func", T_OBJECT, offsetof(GUFuncObject, py_func), READONLY, "the core function"},
    {"signature", T_OBJECT, offsetof(GUFuncObject, signature), READONLY,
     "the layout, e.g. '(m,n),(n,p)->(m,p)'"},
    {"functions", T_OBJECT, offsetof(GUFuncObject, functions), READONLY,
     "{input dtypes: (output dtypes, kernel)}, numba's kernelmap"},
    {"identity", T_OBJECT, offsetof(GUFuncObject, identity), READONLY,
     "None, 0, 1 or 'reorderable'"},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot gufunc_slots[] = {
    {Py_tp_call, gufunc_call},
    {Py_tp_traverse, gufunc_traverse},
    {Py_tp_clear, gufunc_clear},
    {Py_tp_dealloc, gufunc_dealloc},
    {Py_tp_repr, gufunc_repr},
    {Py_tp_members, gufunc_members},
    {Py_tp_methods, gufunc_methods},
    {Py_tp_doc, (void *)"A generalized GPU ufunc made by guvectorize(): call it with arrays "
                        "(out=, stream=)."},
    {0, NULL},
};

static PyType_Spec gufunc_spec = {
    .name = "nbcuda.GUFunc",
    .basicsize = sizeof(GUFuncObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION |
             Py_TPFLAGS_IMMUTABLETYPE,
    .slots = gufunc_slots,
};

/* ------------------------------------------------------------ guvectorize() ----------- */

/* The decorator: self is (type signatures, layout, identity, module). */
static PyObject *build(PyObject *self, PyObject *func) {
  PyObject *module = PyTuple_GET_ITEM(self, 3);
  nbc__py_state *st = nbc__py_module_state(module);
  if (!PyCallable_Check(func)) {
    PyErr_Format(PyExc_TypeError, "guvectorize decorates a function, not %R", func);
    return NULL;
  }
  GUFuncObject *g = PyObject_GC_New(GUFuncObject, st->GUFuncType);
  if (!g) return NULL;
  g->py_func = Py_NewRef(func);
  g->signature = Py_NewRef(PyTuple_GET_ITEM(self, 1));
  g->identity = Py_NewRef(PyTuple_GET_ITEM(self, 2));
  g->sigs = Py_NewRef(PyTuple_GET_ITEM(self, 0));
  g->functions = PyDict_New();
  g->name = PyObject_GetAttrString(func, "__name__");
  g->inputsig = g->outputsig = NULL;
  PyObject_GC_Track(g);
  if (!g->functions || !g->name || parse_layout(g->signature, &g->inputsig, &g->outputsig) < 0) {
    Py_DECREF(g);
    return NULL;
  }
  PyObject *sigs = PyTuple_GET_ITEM(self, 0);
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(sigs); i++)
    if (gufunc_add(st, module, g, PyList_GET_ITEM(sigs, i), i) < 0) {
      Py_DECREF(g);
      return NULL;
    }
  return (PyObject *)g;
}

static PyMethodDef build_def = {"guvectorize_decorator", build, METH_O,
                                "Compiles the function for the signatures given to guvectorize."};

/* guvectorize(ftylist, signature, target='cuda', identity=None, cache=False,
 * writable_args=(), nopython=True) */
static PyObject *py_guvectorize(PyObject *module, PyObject *args, PyObject *kwargs) {
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  if (n == 1) {
    PyErr_SetString(PyExc_TypeError,
                    "nbcuda.guvectorize needs type signatures, e.g. @guvectorize(['void("
                    "float32[:], float32[:])'], '(n)->()'): GPU gufuncs are compiled when "
                    "they are made");
    return NULL;
  }
  if (n != 2) {
    PyErr_SetString(PyExc_TypeError, "guvectorize() takes one or two positional arguments");
    return NULL;
  }
  PyObject *ftylist = PyTuple_GET_ITEM(args, 0), *layout = PyTuple_GET_ITEM(args, 1);
  PyObject *identity = Py_None, *list = NULL, *result = NULL, *bad = PyList_New(0);
  if (!bad) return NULL;
  if (!PyUnicode_Check(layout)) {
    PyErr_Format(PyExc_TypeError, "guvectorize: the layout must be a str like '(n)->()', not "
                 "%R", layout);
    goto done;
  }
  Py_ssize_t pos = 0;
  PyObject *k, *v;
  while (kwargs && PyDict_Next(kwargs, &pos, &k, &v)) {
    const char *key = PyUnicode_AsUTF8(k);
    if (!key) goto done;
    int truth = PyObject_IsTrue(v);
    if (truth < 0) goto done;
    if (!strcmp(key, "target")) {
      if (!PyUnicode_Check(v) || PyUnicode_CompareWithASCIIString(v, "cuda")) {
        PyErr_Format(PyExc_ValueError, "Unsupported target: %S", v);
        goto done;
      }
    } else if (!strcmp(key, "identity")) {
      identity = v;
    } else if (!strcmp(key, "cache")) {
      if (truth) {
        PyErr_SetString(PyExc_TypeError, "caching is not supported");
        goto done;
      }
    } else if (!strcmp(key, "writable_args")) {
      if (truth) {
        PyErr_SetString(PyExc_TypeError, "writable_args are not supported");
        goto done;
      }
    } else if (!strcmp(key, "nopython")) {
      if (!truth) {
        PyErr_SetString(PyExc_TypeError, "nopython flag must be True");
        goto done;
      }
    } else {
      PyObject *r = PyObject_Repr(k);
      if (!r || PyList_Append(bad, r) < 0) {
        Py_XDECREF(r);
        goto done;
      }
      Py_DECREF(r);
    }
  }
  if (PyList_GET_SIZE(bad)) {
    PyObject *sep = PyUnicode_FromString(", ");
    PyObject *opts = sep ? PyUnicode_Join(sep, bad) : NULL;
    if (opts)
      PyErr_Format(PyExc_TypeError, "The following target options are not supported: %U",
                   opts);
    Py_XDECREF(sep);
    Py_XDECREF(opts);
    goto done;
  }
  if (!nbc__py_identity_ok(identity)) {
    PyErr_Format(PyExc_ValueError, "Invalid identity value %R", identity);
    goto done;
  }
  list = PyUnicode_Check(ftylist) ? Py_BuildValue("[O]", ftylist) : PySequence_List(ftylist);
  if (!list) goto done;
  if (PyList_GET_SIZE(list) == 0) {
    PyErr_SetString(PyExc_TypeError, "nbcuda.guvectorize needs at least one type signature");
    goto done;
  }
  PyObject *self = Py_BuildValue("(OOOO)", list, layout, identity, module);
  result = self ? PyCFunction_NewEx(&build_def, self, NULL) : NULL;
  Py_XDECREF(self);
done:
  Py_XDECREF(list);
  Py_DECREF(bad);
  return result;
}

static PyMethodDef gufunc_functions[] = {
    {"guvectorize", (PyCFunction)(void (*)(void))py_guvectorize, METH_VARARGS | METH_KEYWORDS,
     "guvectorize($module, ftylist, signature, /, **kws)\n--\n\n"
     "A decorator making a generalized GPU ufunc (numba's cuda.guvectorize)."},
    {NULL, NULL, 0, NULL},
};

int nbc__py_gufunc_init(PyObject *module, nbc__py_state *st) {
  st->GUFuncType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &gufunc_spec, NULL);
  if (!st->GUFuncType) return -1;
  if (PyModule_AddObjectRef(module, "GUFunc", (PyObject *)st->GUFuncType) < 0) return -1;
  return PyModule_AddFunctions(module, gufunc_functions);
}
