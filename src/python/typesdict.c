/* typesdict.c — the dicts a kernel answers keyed by argument types (numba's `overloads`,
 * inspect_llvm()/inspect_asm()/..., get_regs_per_thread() and the other resources): a dict
 * subclass that also finds a key given with numba's own type objects.
 *
 * The keys are tuples of nbcuda's type objects, as numba's are tuples of its own. nbcuda's
 * types compare equal to numba's of the same type (types.c) but hash differently, so
 * `k.overloads[sig.args]` with numba's types (numba-cuda's tests, code written against
 * numba) misses the hash lookup; __missing__, `in` and get() then look for an equal key among
 * the few a kernel has.
 */
#include "nbcuda_py.h"

/* The value of the key equal to `key` (a new reference), or NULL with no error set when none
 * is; NULL with an error when a comparison raised. */
static PyObject *find_equal(PyObject *self, PyObject *key) {
  PyObject *k, *v;
  Py_ssize_t pos = 0;
  while (PyDict_Next(self, &pos, &k, &v)) {
    Py_INCREF(k);
    Py_INCREF(v);
    int eq = PyObject_RichCompareBool(k, key, Py_EQ);
    Py_DECREF(k);
    if (eq > 0) return v;
    Py_DECREF(v);
    if (eq < 0) return NULL;
  }
  return NULL;
}

static PyObject *typesdict_missing(PyObject *self, PyObject *key) {
  PyObject *v = find_equal(self, key);
  if (v || PyErr_Occurred()) return v;
  return nbc__py_key_error(key);
}

static int typesdict_contains(PyObject *self, PyObject *key) {
  int in = PyDict_Contains(self, key);
  if (in != 0) return in;
  PyObject *v = find_equal(self, key);
  Py_XDECREF(v);
  return v ? 1 : PyErr_Occurred() ? -1 : 0;
}

static PyObject *typesdict_get(PyObject *self, PyObject *args) {
  PyObject *key, *dflt = Py_None;
  if (!PyArg_UnpackTuple(args, "get", 1, 2, &key, &dflt)) return NULL;
  PyObject *v = PyDict_GetItemWithError(self, key);
  if (v) return Py_NewRef(v);
  if (PyErr_Occurred() || (v = find_equal(self, key)) || PyErr_Occurred()) return v;
  return Py_NewRef(dflt);
}

static PyMethodDef typesdict_methods[] = {
    {"__missing__", typesdict_missing, METH_O, "__missing__($self, key, /)\n--\n\n"
                                               "The value of an equal key (numba's types)."},
    {"get", typesdict_get, METH_VARARGS,
     "get($self, key, default=None, /)\n--\n\n"
     "get(key, default=None), an equal key of numba's types included."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot typesdict_slots[] = {
    {Py_sq_contains, typesdict_contains},
    {Py_tp_methods, typesdict_methods},
    {Py_tp_doc, (void *)"A dict keyed by tuples of types that also takes numba's types."},
    {0, NULL},
};

static PyType_Spec typesdict_spec = {
    .name = "nbcuda._TypesDict",
    .basicsize = 0,
    .flags = Py_TPFLAGS_DEFAULT, /* the garbage collector's support comes from dict */
    .slots = typesdict_slots,
};

PyObject *nbc__py_types_dict_new(nbc__py_state *st) {
  return PyObject_CallNoArgs((PyObject *)st->TypesDictType);
}

int nbc__py_typesdict_init(PyObject *module, nbc__py_state *st) {
  PyObject *base = (PyObject *)&PyDict_Type;
  st->TypesDictType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &typesdict_spec, base);
  return st->TypesDictType ? 0 : -1;
}
