/* serialize.c — pickling kernels, device functions and configured launches, as numba's
 * dispatchers pickle (multiprocessing, objects sent to worker processes): the Python function
 * and jit()'s options travel, and the receiving process jits the function again (a kernel
 * given signatures compiles them again there; a lazy kernel's specialisations are compiled
 * again on their first launch, as numba's rebuilt dispatcher does).
 *
 * A function importable by its module and qualified name travels by reference, as pickle
 * sends functions. Any other (a function defined inside another, as numba's tests write
 * kernels) travels as its code object (marshal: a process of the same Python reads it), its
 * module's name (its globals are that module's dictionary where it is rebuilt), names,
 * defaults and the values of its closure cells, themselves pickled: a device function it
 * calls through its closure travels with it. The code keeps its file and line, from which
 * nbcuda reads the source it compiles. A configured launch `k[grid, block, stream, shared]`
 * travels as `k.configure(grid, block, stream, shared)`; one with pre-launch callbacks is
 * refused, as numba refuses it. A GPU ufunc or gufunc travels as the call of its decorator
 * (vectorize or guvectorize, their arguments as given, signatures as text) on its function.
 */
#include "nbcuda_py.h"

#include <marshal.h>
#include <string.h>

#include "kernel.h"

static const char function_tag[] = "nbcuda-function";

/* Whether func is what its module's attribute path __qualname__ names (pickle can then send
 * it by reference); errors are cleared: any doubt means no. */
static int importable(PyObject *func) {
  PyObject *modname = PyObject_GetAttrString(func, "__module__");
  PyObject *qualname = modname ? PyObject_GetAttrString(func, "__qualname__") : NULL;
  PyObject *obj = NULL;
  if (qualname && PyUnicode_Check(modname) && PyUnicode_Check(qualname)) {
    obj = PyImport_Import(modname);
    PyObject *dot = obj ? PyUnicode_FromString(".") : NULL;
    PyObject *parts = dot ? PyUnicode_Split(qualname, dot, -1) : NULL;
    Py_XDECREF(dot);
    for (Py_ssize_t i = 0; obj && parts && i < PyList_GET_SIZE(parts); i++)
      Py_SETREF(obj, PyObject_GetAttr(obj, PyList_GET_ITEM(parts, i)));
    Py_XDECREF(parts);
  }
  int same = obj == func;
  Py_XDECREF(obj);
  Py_XDECREF(qualname);
  Py_XDECREF(modname);
  PyErr_Clear();
  return same;
}

/* What pickles func: func itself when importable, else the tuple (tag, marshalled code,
 * module name, __name__, __qualname__, __defaults__, __kwdefaults__, closure values or None,
 * __dict__). */
static PyObject *function_state(PyObject *func) {
  if (importable(func)) return Py_NewRef(func);
  PyObject *code = PyFunction_GetCode(func);
  PyObject *closure = PyFunction_GetClosure(func), *values = Py_None;
  if (closure && closure != Py_None) {
    if (!(values = PyTuple_New(PyTuple_GET_SIZE(closure)))) return NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(closure); i++) {
      PyObject *v = PyCell_GET(PyTuple_GET_ITEM(closure, i));
      if (!v) {
        Py_DECREF(values);
        PyErr_Format(PyExc_ValueError, "cannot pickle %R: a variable it captures has no value "
                     "yet", func);
        return NULL;
      }
      PyTuple_SET_ITEM(values, i, Py_NewRef(v));
    }
  } else {
    Py_INCREF(values);
  }
  PyObject *bytes = PyMarshal_WriteObjectToString(code, Py_MARSHAL_VERSION);
  PyObject *defaults = PyFunction_GetDefaults(func), *kwdefaults = PyFunction_GetKwDefaults(func);
  PyObject *dict = PyObject_GetAttrString(func, "__dict__");
  PyObject *state =
      bytes && dict
          ? Py_BuildValue("(sOOOOOOOO)", function_tag, bytes, PyFunction_GetModule(func),
                          ((PyFunctionObject *)func)->func_name,
                          ((PyFunctionObject *)func)->func_qualname,
                          defaults ? defaults : Py_None, kwdefaults ? kwdefaults : Py_None,
                          values, dict)
          : NULL;
  Py_XDECREF(bytes);
  Py_XDECREF(dict);
  Py_DECREF(values);
  return state;
}

/* The function function_state describes (a new reference). */
static PyObject *function_from_state(PyObject *state) {
  if (!PyTuple_Check(state)) return Py_NewRef(state);
  PyObject *tag, *bytes, *modname, *name, *qualname, *defaults, *kwdefaults, *values, *dict;
  if (!PyArg_ParseTuple(state, "OSOUUOOOO!:function state", &tag, &bytes, &modname, &name,
                        &qualname, &defaults, &kwdefaults, &values, &PyDict_Type, &dict))
    return NULL;
  if (!PyUnicode_Check(tag) || PyUnicode_CompareWithASCIIString(tag, function_tag) != 0) {
    PyErr_SetString(PyExc_ValueError, "not the state of a pickled nbcuda function");
    return NULL;
  }
  PyObject *code = PyMarshal_ReadObjectFromString(PyBytes_AS_STRING(bytes),
                                                  PyBytes_GET_SIZE(bytes));
  if (!code) return NULL;
  if (!PyCode_Check(code)) {
    Py_DECREF(code);
    PyErr_SetString(PyExc_ValueError, "a pickled nbcuda function's code is not a code object");
    return NULL;
  }
  /* its globals: its module's, imported here; a module that cannot be imported leaves the
   * builtins only (names the kernel reads from it then fail when it is compiled) */
  PyObject *module = PyUnicode_Check(modname) ? PyImport_Import(modname) : NULL;
  PyObject *globals = module ? Py_NewRef(PyModule_GetDict(module)) : NULL;
  Py_XDECREF(module);
  if (!globals) {
    PyErr_Clear();
    globals = Py_BuildValue("{sOsO}", "__builtins__", PyEval_GetBuiltins(), "__name__",
                            modname);
  }
  PyObject *func = globals ? PyFunction_NewWithQualName(code, globals, qualname) : NULL;
  Py_DECREF(code);
  Py_XDECREF(globals);
  if (!func) return NULL;
  int rc = PyObject_SetAttrString(func, "__name__", name);
  if (rc == 0 && defaults != Py_None) rc = PyFunction_SetDefaults(func, defaults);
  if (rc == 0 && kwdefaults != Py_None) rc = PyFunction_SetKwDefaults(func, kwdefaults);
  if (rc == 0 && values != Py_None) {
    PyObject *cells = PyTuple_Check(values) ? PyTuple_New(PyTuple_GET_SIZE(values)) : NULL;
    for (Py_ssize_t i = 0; cells && i < PyTuple_GET_SIZE(values); i++) {
      PyObject *cell = PyCell_New(PyTuple_GET_ITEM(values, i));
      if (!cell)
        Py_CLEAR(cells);
      else
        PyTuple_SET_ITEM(cells, i, cell);
    }
    rc = cells ? PyFunction_SetClosure(func, cells) : -1;
    if (!cells && !PyErr_Occurred())
      PyErr_SetString(PyExc_ValueError, "a pickled nbcuda function's closure is not a tuple");
    Py_XDECREF(cells);
  }
  if (rc == 0 && PyDict_GET_SIZE(dict)) {
    PyObject *own = PyObject_GetAttrString(func, "__dict__");
    rc = own ? PyDict_Update(own, dict) : -1;
    Py_XDECREF(own);
  }
  if (rc < 0) Py_CLEAR(func);
  return func;
}

/* jit()'s config with its signature as text (or a list of texts): type objects given to
 * jit() need not pickle themselves. */
static PyObject *config_state(nbc__py_state *st, PyObject *config) {
  PyObject *sig = PyTuple_GET_ITEM(config, 0), *text;
  if (sig == Py_None || PyUnicode_Check(sig)) return Py_NewRef(config);
  text = PyList_Check(sig) ? nbc__py_signature_texts(st, sig) : nbc__py_signature_text(st, sig);
  if (!text) return NULL;
  PyObject *copy = PyTuple_New(PyTuple_GET_SIZE(config));
  if (!copy) {
    Py_DECREF(text);
    return NULL;
  }
  PyTuple_SET_ITEM(copy, 0, text);
  for (Py_ssize_t i = 1; i < PyTuple_GET_SIZE(config); i++)
    PyTuple_SET_ITEM(copy, i, Py_NewRef(PyTuple_GET_ITEM(config, i)));
  return copy;
}

PyObject *nbc__py_jitted_reduce(PyObject *self, PyObject *unused) {
  (void)unused;
  nbc__py_state *st = nbc__py_state_of(self);
  if (!st) return NULL;
  PyObject *func = NULL, *config = nbc__py_jit_config(st, self, &func);
  if (!config) {
    PyErr_Format(PyExc_TypeError, "cannot pickle %R: only kernels and device functions jit() "
                 "made pickle (an overload does not)", self);
    return NULL;
  }
  PyObject *module = PyType_GetModule(Py_TYPE(self));
  PyObject *rebuild = module ? PyObject_GetAttrString(module, "_rebuild_jit") : NULL;
  PyObject *cstate = rebuild ? config_state(st, config) : NULL;
  PyObject *fstate = cstate ? function_state(func) : NULL;
  PyObject *r = fstate ? Py_BuildValue("(O(OO))", rebuild, cstate, fstate) : NULL;
  Py_XDECREF(rebuild);
  Py_XDECREF(cstate);
  Py_XDECREF(fstate);
  return r;
}

PyObject *nbc__py_launcher_reduce(PyObject *self, PyObject *unused) {
  (void)unused;
  LauncherObject *L = (LauncherObject *)self;
  if (L->callbacks && PyList_Check(L->callbacks) && PyList_GET_SIZE(L->callbacks)) {
    PyObject *pickle = PyImport_ImportModule("pickle");
    PyObject *error = pickle ? PyObject_GetAttrString(pickle, "PicklingError") : NULL;
    if (error)
      PyErr_SetString(error, "Cannot pickle configured launches with pre-launch callbacks");
    Py_XDECREF(error);
    Py_XDECREF(pickle);
    return NULL;
  }
  if (L->ntasks >= 0) {
    PyErr_SetString(PyExc_TypeError, "cannot pickle a forall() launcher: pickle the kernel");
    return NULL;
  }
  PyObject *configure = PyObject_GetAttrString((PyObject *)L->kernel, "configure");
  PyObject *r =
      configure ? Py_BuildValue("(O((III)(III)OI))", configure, L->grid[0], L->grid[1],
                                L->grid[2], L->block[0], L->block[1], L->block[2],
                                L->stream ? L->stream : Py_None, L->shared)
                : NULL;
  Py_XDECREF(configure);
  return r;
}

/* The decorators whose products pickle as nbc__py_decorated_reduce describes. */
static const char *const decorators[] = {"vectorize", "guvectorize"};

PyObject *nbc__py_decorated_reduce(PyObject *self, const char *decorator, PyObject *sigs,
                                   PyObject *layout, PyObject *identity, PyObject *func) {
  nbc__py_state *st = nbc__py_state_of(self);
  PyObject *texts = st ? nbc__py_signature_texts(st, sigs) : NULL;
  PyObject *args = !texts ? NULL : layout ? PyTuple_Pack(2, texts, layout) : PyTuple_Pack(1, texts);
  PyObject *kwargs = args ? Py_BuildValue("{sO}", "identity", identity) : NULL;
  PyObject *module = kwargs ? PyType_GetModule(Py_TYPE(self)) : NULL;
  PyObject *rebuild = module ? PyObject_GetAttrString(module, "_rebuild_decorated") : NULL;
  PyObject *fstate = rebuild ? function_state(func) : NULL;
  PyObject *r = fstate ? Py_BuildValue("(O(sOOO))", rebuild, decorator, args, kwargs, fstate)
                       : NULL;
  Py_XDECREF(texts);
  Py_XDECREF(args);
  Py_XDECREF(kwargs);
  Py_XDECREF(rebuild);
  Py_XDECREF(fstate);
  return r;
}

/* nbcuda._rebuild_decorated(decorator, args, kwargs, function state): what a pickled ufunc or
 * gufunc is made again by. */
static PyObject *py_rebuild_decorated(PyObject *module, PyObject *args) {
  const char *decorator;
  PyObject *dargs, *kwargs, *fstate;
  if (!PyArg_ParseTuple(args, "sO!O!O:_rebuild_decorated", &decorator, &PyTuple_Type, &dargs,
                        &PyDict_Type, &kwargs, &fstate))
    return NULL;
  size_t i = 0;
  while (i < sizeof decorators / sizeof *decorators && strcmp(decorators[i], decorator)) i++;
  if (i == sizeof decorators / sizeof *decorators) {
    PyErr_Format(PyExc_ValueError, "_rebuild_decorated: %s is not a decorator of nbcuda",
                 decorator);
    return NULL;
  }
  PyObject *make = PyObject_GetAttrString(module, decorator);
  PyObject *wrap = make ? PyObject_Call(make, dargs, kwargs) : NULL;
  PyObject *func = wrap ? function_from_state(fstate) : NULL;
  PyObject *r = func ? PyObject_CallOneArg(wrap, func) : NULL;
  Py_XDECREF(func);
  Py_XDECREF(wrap);
  Py_XDECREF(make);
  return r;
}

/* A pickled jit() config as jit() makes one: its flags True or False, its links and extensions
 * through jit()'s own checks into tuples, its two ints checked (a pickle is data: jit.c reads
 * the config's items without checking their types). A new reference; NULL with the error
 * set. */
static PyObject *config_checked(nbc__py_state *st, PyObject *config) {
  if (PyTuple_GET_SIZE(config) != 14 || !PyLong_Check(PyTuple_GET_ITEM(config, 8)) ||
      !PyLong_Check(PyTuple_GET_ITEM(config, 12))) {
    PyErr_SetString(PyExc_ValueError, "_rebuild_jit: not the options of a pickled kernel");
    return NULL;
  }
  PyObject *items = PySequence_List(config), *r = NULL;
  if (!items) return NULL;
  static const int flags[] = {1, 2, 3, 4, 5, 7, 9, 11}; /* None stays: opt's "the default" */
  for (size_t i = 0; i < sizeof flags / sizeof *flags; i++) {
    PyObject *flag = PyList_GET_ITEM(items, flags[i]);
    int truth = flag == Py_None ? 0 : PyObject_IsTrue(flag);
    if (truth < 0) {
      Py_DECREF(items);
      return NULL;
    }
    if (flag != Py_None) PyList_SetItem(items, flags[i], PyBool_FromLong(truth));
  }
  PyObject *links = nbc__py_link_paths(st, PyList_GET_ITEM(items, 10));
  PyObject *extensions = links ? PySequence_Tuple(PyList_GET_ITEM(items, 13)) : NULL;
  if (extensions) { /* PyList_SetItem takes the new items and drops the old */
    if (PyList_SetItem(items, 10, links) == 0 && PyList_SetItem(items, 13, extensions) == 0)
      r = PyList_AsTuple(items);
  } else {
    Py_XDECREF(links);
  }
  Py_XDECREF(items);
  return r;
}

/* nbcuda._rebuild_jit(config, function state): what a pickled kernel or device function is
 * made again by. */
static PyObject *py_rebuild_jit(PyObject *module, PyObject *args) {
  PyObject *config, *fstate;
  if (!PyArg_ParseTuple(args, "O!O:_rebuild_jit", &PyTuple_Type, &config, &fstate)) return NULL;
  config = config_checked(nbc__py_module_state(module), config);
  PyObject *func = config ? function_from_state(fstate) : NULL;
  PyObject *r = func ? nbc__py_jit_apply(module, config, func) : NULL;
  Py_XDECREF(func);
  Py_XDECREF(config);
  return r;
}

static PyMethodDef serialize_functions[] = {
    {"_rebuild_jit", py_rebuild_jit, METH_VARARGS,
     "_rebuild_jit($module, *state)\n--\n\n"
     "A pickled kernel or device function made again."},
    {"_rebuild_decorated", py_rebuild_decorated, METH_VARARGS,
     "_rebuild_decorated($module, *state)\n--\n\n"
     "A pickled ufunc or gufunc made again."},
    {NULL, NULL, 0, NULL},
};

int nbc__py_serialize_init(PyObject *module, nbc__py_state *st) {
  (void)st;
  return PyModule_AddFunctions(module, serialize_functions);
}
