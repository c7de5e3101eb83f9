/* enums.c — enum.Enum classes and members as numba-cuda types them: a class a kernel names is
 * numba's EnumClass (its members become constants), a member numba's EnumMember (or, for an
 * IntEnum, IntEnumMember, "IntEnum<int64>(module.QualName)", which is an int wherever a number
 * is needed but keeps its class for `is` and `.value`). A class is identified by its qualified
 * name, "module.QualName", which is the name in the type "Enum<int64>(module.QualName)". Its
 * members' values must be all ints, all floats or all tuples of one type of numbers (numba's
 * one value type): the resolver hands every value over (others as OTHER) and the compiler says
 * so; a kernel argument's type is refused here.
 */
#include "nbcuda_py.h"

#include <string.h>

/* enum.Enum, borrowed from the imported module (sys.modules keeps it). */
static PyObject *enum_base(void) {
  PyObject *m = PyImport_ImportModule("enum");
  PyObject *base = m ? PyObject_GetAttrString(m, "Enum") : NULL;
  Py_XDECREF(m);
  Py_XDECREF(base); /* the module holds it */
  return base;
}

int nbc__py_is_enum_class(PyObject *obj) {
  if (!PyType_Check(obj)) return 0;
  PyObject *base = enum_base();
  if (!base) return -1;
  return obj != base && PyType_IsSubtype((PyTypeObject *)obj, (PyTypeObject *)base);
}

/* 1 when the enum class cls is an IntEnum, 0 when not, -1 with an error. */
static int is_int_enum_class(PyObject *cls) {
  PyObject *m = PyImport_ImportModule("enum");
  PyObject *intenum = m ? PyObject_GetAttrString(m, "IntEnum") : NULL;
  Py_XDECREF(m);
  int is_int = intenum && PyType_Check(intenum)
                   ? PyType_IsSubtype((PyTypeObject *)cls, (PyTypeObject *)intenum)
                   : -1;
  Py_XDECREF(intenum);
  return is_int;
}

int nbc__py_is_enum_member(PyObject *obj) {
  PyObject *base = enum_base();
  if (!base) return -1;
  return PyObject_IsInstance(obj, base);
}

PyObject *nbc__py_enum_class_name(PyObject *cls) {
  PyObject *mod = PyObject_GetAttrString(cls, "__module__");
  PyObject *qual = mod ? PyObject_GetAttrString(cls, "__qualname__") : NULL;
  PyObject *name = qual ? PyUnicode_FromFormat("%S.%S", mod, qual) : NULL;
  Py_XDECREF(mod);
  Py_XDECREF(qual);
  return name;
}

/* A member's value as a global: an int (int64), a float, or a tuple of those (nested tuples
 * too), the items' storage kept alive by keep; anything else OTHER (the compiler says what
 * enums it takes). */
static int member_value(PyObject *value, PyObject *keep, nbc_global_t *g) {
  memset(g, 0, sizeof *g);
  if (PyLong_Check(value) && !PyBool_Check(value)) {
    int overflow = 0;
    g->kind = NBC_GLOBAL_INT;
    g->value.i = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (overflow) g->kind = NBC_GLOBAL_OTHER; /* beyond int64 */
    return PyErr_Occurred() ? -1 : 0;
  }
  if (PyFloat_Check(value)) {
    g->kind = NBC_GLOBAL_FLOAT;
    g->value.f = PyFloat_AsDouble(value);
    return 0;
  }
  if (!PyTuple_CheckExact(value) || PyTuple_GET_SIZE(value) > 64) {
    g->kind = NBC_GLOBAL_OTHER;
    return 0;
  }
  Py_ssize_t n = PyTuple_GET_SIZE(value);
  PyObject *store = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)sizeof(nbc_global_t) * (n ? n : 1));
  if (!store || PyList_Append(keep, store) < 0) {
    Py_XDECREF(store);
    return -1;
  }
  Py_DECREF(store); /* keep holds it */
  nbc_global_t *items = (nbc_global_t *)PyBytes_AS_STRING(store);
  for (Py_ssize_t i = 0; i < n; i++)
    if (member_value(PyTuple_GET_ITEM(value, i), keep, &items[i]) < 0) return -1;
  g->kind = NBC_GLOBAL_TUPLE;
  g->tuple_items = items;
  g->tuple_count = (int)n;
  return 0;
}

int nbc__py_enum_describe(PyObject *cls, PyObject *keep, nbc_global_t *g) {
  PyObject *members = PyObject_GetAttrString(cls, "__members__");
  PyObject *items = members ? PyMapping_Items(members) : NULL; /* (name, member), aliases too */
  Py_XDECREF(members);
  if (!items || PyList_GET_SIZE(items) > 64) {
    Py_XDECREF(items);
    return items ? 0 : -1; /* more members than a kernel takes: left OTHER */
  }
  Py_ssize_t n = PyList_GET_SIZE(items);
  PyObject *vals = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)sizeof(nbc_global_t) * n);
  PyObject *names = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)sizeof(char *) * n);
  PyObject *qual = nbc__py_enum_class_name(cls);
  int rc = vals && names && qual && PyList_Append(keep, vals) == 0 &&
                   PyList_Append(keep, names) == 0 && PyList_Append(keep, qual) == 0 &&
                   PyList_Append(keep, items) == 0
               ? 0
               : -1;
  nbc_global_t *v = rc == 0 ? (nbc_global_t *)PyBytes_AS_STRING(vals) : NULL;
  const char **nm = rc == 0 ? (const char **)PyBytes_AS_STRING(names) : NULL;
  for (Py_ssize_t i = 0; rc == 0 && i < n; i++) {
    PyObject *pair = PyList_GET_ITEM(items, i);
    PyObject *value = PyObject_GetAttrString(PyTuple_GET_ITEM(pair, 1), "value");
    memset(&v[i], 0, sizeof v[i]);
    nm[i] = PyUnicode_AsUTF8(PyTuple_GET_ITEM(pair, 0));
    if (!value || !nm[i] || member_value(value, keep, &v[i]) < 0) rc = -1;
    Py_XDECREF(value);
  }
  if (rc == 0 && !PyErr_Occurred()) {
    int is_int = is_int_enum_class(cls);
    if (is_int < 0) {
      rc = -1;
    } else {
      g->kind = NBC_GLOBAL_ENUM;
      g->name = PyUnicode_AsUTF8(qual);
      g->tuple_count = (int)n;
      g->tuple_items = v;
      g->enum_names = nm;
      g->enum_int = is_int;
    }
  }
  if (PyErr_Occurred()) rc = -1;
  Py_XDECREF(vals);
  Py_XDECREF(names);
  Py_XDECREF(qual);
  Py_XDECREF(items);
  return rc;
}

int nbc__py_enum_member_describe(PyObject *member, PyObject *keep, nbc_global_t *g) {
  PyObject *cls = (PyObject *)Py_TYPE(member);
  if (nbc__py_enum_describe(cls, keep, g) < 0) return -1;
  if (g->kind != NBC_GLOBAL_ENUM) return 0;
  PyObject *name = PyObject_GetAttrString(member, "name");
  const char *n = name ? PyUnicode_AsUTF8(name) : NULL;
  g->kind = NBC_GLOBAL_OTHER;
  for (int i = 0; n && i < g->tuple_count; i++)
    if (strcmp(g->enum_names[i], n) == 0) {
      g->kind = NBC_GLOBAL_ENUM_MEMBER;
      g->value.i = i;
      break;
    }
  Py_XDECREF(name);
  return PyErr_Occurred() ? -1 : 0;
}

PyObject *nbc__py_enum_type_text(PyObject *cls, const char *value_type) {
  int is_int = is_int_enum_class(cls); /* numba's IntEnumMember */
  PyObject *qual = is_int >= 0 ? nbc__py_enum_class_name(cls) : NULL;
  PyObject *text = qual ? PyUnicode_FromFormat("%s<%s>(%U)", is_int ? "IntEnum" : "Enum",
                                               value_type, qual)
                        : NULL;
  Py_XDECREF(qual);
  return text;
}

int nbc__py_is_int_enum_member(PyObject *obj) {
  if (!PyLong_Check(obj) || PyLong_CheckExact(obj) || PyBool_Check(obj)) return 0;
  return nbc__py_is_enum_member(obj);
}

PyObject *nbc__py_enum_arg_text(PyObject *member, PyObject *(*value_text)(PyObject *value,
                                                                          void *data),
                                void *data) {
  PyObject *cls = (PyObject *)Py_TYPE(member);
  PyObject *members = PyObject_GetAttrString(cls, "__members__");
  PyObject *values = members ? PyMapping_Values(members) : NULL;
  Py_XDECREF(members);
  if (!values) return NULL;
  PyObject *first = NULL; /* the value type all members share */
  int same = PyList_GET_SIZE(values) > 0;
  for (Py_ssize_t i = 0; same && i < PyList_GET_SIZE(values); i++) {
    PyObject *v = PyObject_GetAttrString(PyList_GET_ITEM(values, i), "value");
    PyObject *t = v && !PyBool_Check(v) ? value_text(v, data) : NULL;
    Py_XDECREF(v);
    if (!t) {
      PyErr_Clear();
      same = 0;
    } else if (!first) {
      first = t;
    } else {
      same = PyUnicode_Compare(first, t) == 0;
      Py_DECREF(t);
    }
  }
  Py_DECREF(values);
  const char *ft = same && first ? PyUnicode_AsUTF8(first) : NULL;
  /* numbers, or tuples of them: what the compiler takes */
  if (ft && strcmp(ft, "int64") && strcmp(ft, "float64") && strncmp(ft, "UniTuple(", 9) &&
      strncmp(ft, "Tuple(", 6))
    ft = NULL;
  PyObject *text = ft ? nbc__py_enum_type_text(cls, ft) : NULL;
  if (!ft && !PyErr_Occurred())
    PyErr_Format(PyExc_TypeError, "unsupported kernel argument %R: kernels take members of "
                 "enums whose values are all ints, all floats or all tuples of one type of "
                 "numbers", member);
  Py_XDECREF(first);
  return text;
}
