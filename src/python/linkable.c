/* linkable.c — numba-cuda's LinkableCode classes: code to link held in memory rather than in a
 * file, given to jit(link=[...]) and declare_device(link=[...]) next to (or instead of) paths.
 *
 *   k = cuda.jit(link=[cuda.CUSource(cu_text)])(kernel)
 *   cuda.PTXSource(ptx), cuda.CUSource(src), cuda.Cubin(b), cuda.Fatbin(b), cuda.LTOIR(b),
 *   cuda.Object(b), cuda.Archive(b)          (LinkableCode(data, name=None, ...))
 *   cuda.LinkableCode.from_path("f.cu")      the class chosen by the extension
 *
 * An object holds its data as given (str, bytes or any buffer; io.StringIO / io.BytesIO are
 * read when `data` is asked for, as numba's) and a name for diagnostics (the class's
 * default_name when none). The subclass says what the data is: its `kind` ("ptx", "cu",
 * "cubin", "fatbin", "ltoir", "o", "a"), read by link.c, which compiles CUSource with NVRTC
 * and hands the rest to nvJitLink as the files of those extensions would be. numba's
 * setup_callback / teardown_callback (run with the CUmodule on load and unload) and nrt=True
 * (NRT linked in) have no equivalent: NotImplementedError when given.
 */
#include "nbcuda_py.h"

#include <string.h>
#include <structmember.h>

typedef struct {
  PyObject_HEAD
  PyObject *data;
  PyObject *name; /* None: the class's default_name */
} LinkableObject;

static int linkable_traverse(LinkableObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->data);
  Py_VISIT(self->name);
  return 0;
}

static int linkable_clear(LinkableObject *self) {
  Py_CLEAR(self->data);
  Py_CLEAR(self->name);
  return 0;
}

static void linkable_dealloc(LinkableObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  linkable_clear(self);
  tp->tp_free(self);
  Py_DECREF(tp);
}

static int linkable_init(LinkableObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"data", "name", "setup_callback", "teardown_callback", "nrt", NULL};
  PyObject *data, *name = Py_None, *setup = Py_None, *teardown = Py_None, *nrt = Py_False;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OOOO:LinkableCode", kwlist, &data, &name,
                                   &setup, &teardown, &nrt))
    return -1;
  if (setup != Py_None && !PyCallable_Check(setup)) {
    PyErr_SetString(PyExc_TypeError, "setup_callback must be callable");
    return -1;
  }
  if (teardown != Py_None && !PyCallable_Check(teardown)) {
    PyErr_SetString(PyExc_TypeError, "teardown_callback must be callable");
    return -1;
  }
  if (setup != Py_None || teardown != Py_None) {
    PyErr_SetString(PyExc_NotImplementedError,
                    "nbcuda does not run setup_callback / teardown_callback of linked code "
                    "(numba calls them with the CUmodule on load and unload)");
    return -1;
  }
  int want_nrt = PyObject_IsTrue(nrt);
  if (want_nrt < 0) return -1;
  if (want_nrt) {
    PyErr_SetString(PyExc_NotImplementedError,
                    "nbcuda has no NRT (numba's runtime) to link: nrt=True is not supported");
    return -1;
  }
  if (name != Py_None && !PyUnicode_Check(name)) {
    PyErr_Format(PyExc_TypeError, "name must be a str, not %s", Py_TYPE(name)->tp_name);
    return -1;
  }
  Py_XSETREF(self->data, Py_NewRef(data));
  Py_XSETREF(self->name, Py_NewRef(name));
  return 0;
}

/* The class attribute `attr` of obj's class (a new reference). */
static PyObject *class_attr(PyObject *obj, const char *attr) {
  return PyObject_GetAttrString((PyObject *)Py_TYPE(obj), attr);
}

static PyObject *linkable_get_name(LinkableObject *self, void *c) {
  (void)c;
  if (self->name && self->name != Py_None) return Py_NewRef(self->name);
  return class_attr((PyObject *)self, "default_name");
}

/* data: io.StringIO / io.BytesIO read with getvalue(), anything else as given. */
static PyObject *linkable_get_data(LinkableObject *self, void *c) {
  (void)c;
  PyObject *io = PyImport_ImportModule("io");
  if (!io) return NULL;
  PyObject *sio = PyObject_GetAttrString(io, "StringIO");
  PyObject *bio = sio ? PyObject_GetAttrString(io, "BytesIO") : NULL;
  Py_DECREF(io);
  int is_io = bio ? PyObject_IsInstance(self->data, sio) : -1;
  if (is_io == 0) is_io = PyObject_IsInstance(self->data, bio);
  Py_XDECREF(sio);
  Py_XDECREF(bio);
  if (is_io < 0) return NULL;
  return is_io ? PyObject_CallMethod(self->data, "getvalue", NULL) : Py_NewRef(self->data);
}

static PyObject *linkable_repr(LinkableObject *self) {
  PyObject *name = linkable_get_name(self, NULL);
  if (!name) return NULL;
  PyObject *r = PyUnicode_FromFormat("<%s %R>", _PyType_Name(Py_TYPE(self)), name);
  Py_DECREF(name);
  return r;
}

/* The class for a file extension (".cu", ...); ValueError("Unknown extension: ...") as
 * numba's. */
static PyObject *class_for_extension(PyObject *module, PyObject *ext) {
  static const char *const classes[][2] = {
      {".cu", "CUSource"}, {".ptx", "PTXSource"}, {".fatbin", "Fatbin"}, {".cubin", "Cubin"},
      {".a", "Archive"},   {".o", "Object"},      {".ltoir", "LTOIR"},
  };
  const char *e = PyUnicode_AsUTF8(ext);
  if (!e) return NULL;
  for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
    if (strcmp(e, classes[i][0]) == 0) return PyObject_GetAttrString(module, classes[i][1]);
  PyErr_Format(PyExc_ValueError, "Unknown extension: %U", ext);
  return NULL;
}

/* LinkableCode.from_path(path): the file read (text for .cu and .ptx, else bytes) into the
 * class its extension names, named by the file's base name without the extension. */
static PyObject *linkable_from_path(PyObject *cls, PyObject *path) {
  (void)cls; /* numba's is a staticmethod: the extension picks the class */
  PyObject *module = PyImport_ImportModule("nbcuda");
  PyObject *fspath = module ? PyOS_FSPath(path) : NULL;
  if (!fspath) {
    Py_XDECREF(module);
    return NULL;
  }
  PyObject *osp = PyImport_ImportModule("os.path");
  PyObject *parts = osp ? PyObject_CallMethod(osp, "splitext", "(O)", fspath) : NULL;
  PyObject *base = parts ? PyObject_CallMethod(osp, "basename", "(O)", PyTuple_GET_ITEM(parts, 0))
                         : NULL;
  PyObject *klass = base ? class_for_extension(module, PyTuple_GET_ITEM(parts, 1)) : NULL;
  PyObject *result = NULL;
  if (klass) {
    const char *ext = PyUnicode_AsUTF8(PyTuple_GET_ITEM(parts, 1));
    int text = ext && (strcmp(ext, ".cu") == 0 || strcmp(ext, ".ptx") == 0);
    PyObject *data = nbc__py_read_file(fspath, text ? "r" : "rb");
    if (data) {
      PyObject *args = PyTuple_Pack(1, data), *kw = Py_BuildValue("{sO}", "name", base);
      result = args && kw ? PyObject_Call(klass, args, kw) : NULL;
      Py_XDECREF(args);
      Py_XDECREF(kw);
      Py_DECREF(data);
    }
  }
  Py_XDECREF(klass);
  Py_XDECREF(base);
  Py_XDECREF(parts);
  Py_XDECREF(osp);
  Py_DECREF(fspath);
  Py_DECREF(module);
  return result;
}

/* LinkableCode.from_path_or_obj(x): from_path for a str, x itself otherwise. */
static PyObject *linkable_from_path_or_obj(PyObject *cls, PyObject *obj) {
  if (PyUnicode_Check(obj)) return linkable_from_path(cls, obj);
  return Py_NewRef(obj);
}

static PyMethodDef linkable_methods[] = {
    {"from_path", (PyCFunction)linkable_from_path, METH_O | METH_CLASS,
     "from_path($type, path, /)\n--\n\n"
     "The file's contents as the LinkableCode its extension names."},
    {"from_path_or_obj", (PyCFunction)linkable_from_path_or_obj, METH_O | METH_CLASS,
     "from_path_or_obj($type, path_or_obj, /)\n--\n\n"
     "From_path(x) for a path, else x."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef linkable_getset[] = {
    {"name", (getter)linkable_get_name, NULL, "the name used in diagnostics", NULL},
    {"data", (getter)linkable_get_data, NULL, "the code (str, bytes or a buffer)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef linkable_members[] = {
    {"_name", T_OBJECT, offsetof(LinkableObject, name), READONLY, "the name given, or None"},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot linkable_slots[] = {
    {Py_tp_dealloc, linkable_dealloc},
    {Py_tp_traverse, linkable_traverse},
    {Py_tp_clear, linkable_clear},
    {Py_tp_init, linkable_init},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_repr, linkable_repr},
    {Py_tp_methods, linkable_methods},
    {Py_tp_getset, linkable_getset},
    {Py_tp_members, linkable_members},
    {Py_tp_doc, (void *)"LinkableCode(data, name=None, setup_callback=None, teardown_callback=None, "
                        "nrt=False)\n--\n\nCode to link, held in memory."},
    {0, NULL},
};

static PyType_Spec linkable_spec = {
    .name = "nbcuda.LinkableCode",
    .basicsize = sizeof(LinkableObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE,
    .slots = linkable_slots,
};

/* The subclasses: name, kind (link.c's), default_name, doc. */
static const struct {
  const char *name, *kind, *default_name, *doc;
} kinds[] = {
    {"PTXSource", "ptx", "<unnamed-ptx>", "PTX source code in memory."},
    {"CUSource", "cu", "<unnamed-cu>", "CUDA C/C++ source code in memory."},
    {"Fatbin", "fatbin", "<unnamed-fatbin>", "An ELF Fatbin in memory."},
    {"Cubin", "cubin", "<unnamed-cubin>", "An ELF Cubin in memory."},
    {"Archive", "a", "<unnamed-archive>", "An archive of objects in memory."},
    {"Object", "o", "<unnamed-object>", "An object file in memory."},
    {"LTOIR", "ltoir", "<unnamed-ltoir>", "An LTOIR file in memory."},
};

int nbc__py_linkable(nbc__py_state *st, PyObject *obj, const char **pkind, PyObject **pdata,
                     PyObject **pname) {
  if (!PyObject_TypeCheck(obj, st->LinkableCodeType)) return 0;
  *pkind = NULL;
  *pdata = *pname = NULL;
  PyObject *kind = class_attr(obj, "kind");
  if (!kind) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%R has no kind: link one of LinkableCode's subclasses "
                 "(PTXSource, CUSource, Cubin, Fatbin, LTOIR, Object, Archive)", obj);
    return -1;
  }
  const char *k = PyUnicode_Check(kind) ? PyUnicode_AsUTF8(kind) : NULL;
  if (!k) {
    Py_DECREF(kind);
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%R: its class's kind must be a str", obj);
    return -1;
  }
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (strcmp(k, kinds[i].kind) == 0) *pkind = kinds[i].kind;
  if (!*pkind) PyErr_Format(st->LinkerError, "Don't know how to link code of kind %s", k);
  Py_DECREF(kind);
  if (!*pkind) return -1;
  PyObject *data = linkable_get_data((LinkableObject *)obj, NULL);
  if (data && PyUnicode_Check(data)) {
    Py_SETREF(data, PyUnicode_AsUTF8String(data));
  } else if (data && !PyBytes_Check(data)) {
    Py_SETREF(data, PyBytes_FromObject(data)); /* any buffer */
  }
  PyObject *name = data ? linkable_get_name((LinkableObject *)obj, NULL) : NULL;
  if (!name) {
    Py_XDECREF(data);
    return -1;
  }
  *pdata = data;
  *pname = name;
  return 1;
}

int nbc__py_linkable_init(PyObject *module, nbc__py_state *st) {
  st->LinkableCodeType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &linkable_spec, NULL);
  if (!st->LinkableCodeType ||
      PyModule_AddObjectRef(module, "LinkableCode", (PyObject *)st->LinkableCodeType) < 0)
    return -1;
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    PyObject *ns = Py_BuildValue("{ssssssss}", "kind", kinds[i].kind, "default_name",
                                 kinds[i].default_name, "__doc__", kinds[i].doc, "__module__",
                                 "nbcuda");
    PyObject *cls = ns ? PyObject_CallFunction((PyObject *)&PyType_Type, "s(O)O",
                                               kinds[i].name, st->LinkableCodeType, ns)
                       : NULL;
    Py_XDECREF(ns);
    if (!cls) return -1;
    int rc = PyModule_AddObjectRef(module, kinds[i].name, cls);
    Py_DECREF(cls);
    if (rc < 0) return -1;
  }
  return 0;
}
