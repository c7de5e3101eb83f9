/* intrinsics.c — the kernel language's names as attributes of the module: nbcuda.grid,
 * nbcuda.threadIdx (with .x .y .z), nbcuda.atomic (with .add, .cas, ...), nbcuda.popc...
 *
 * numba.cuda has these names on the host too, as stub classes and `@intrinsic` objects
 * that mean nothing outside a kernel, so that `from numba.cuda import grid` works and code
 * can mention `cuda.popc` anywhere. Here they are objects of one small type, Stub: a name
 * as written after "cuda." ("atomic.add"), its kind (function, namespace or value, from
 * the compiler's own list, nbc_kernel_names(), so the host names and what kernels accept
 * are the same list) and, for a namespace, its members, made when the namespace is first
 * used (libdevice's 317 would otherwise cost a third of the import). Calling one raises
 * NotImplementedError, as numba's stubs do. In a kernel the Python resolver (compile.c)
 * recognises a stub by its type and hands the compiler NBC_GLOBAL_CUDA_NAME with the name,
 * so `grid(1)` compiles exactly as `cuda.grid(1)`.
 *
 * Reprs follow numba's descriptions: "<intrinsic grid>" for functions (numba's repr of its
 * @intrinsic names), "<threadIdx.{x,y,z}>", "<atomic>", "<laneid>" for the others.
 */
#include <stdio.h>

#include "nbcuda_py.h"

#include <string.h>

typedef struct {
  PyObject_HEAD PyObject *name; /* str: "grid", "atomic.add" */
  PyObject *members;            /* dict: member name -> Stub (namespaces; empty otherwise) */
  nbc_kernel_name_kind_t kind;
  int filled; /* the members were made (on first use: libdevice alone has 317) */
} StubObject;

static PyObject *stub_new(nbc__py_state *st, const nbc_kernel_name_t *k);

/* A namespace's members, made the first time they are needed. */
static PyObject *members_of(StubObject *s) {
  if (s->filled) return s->members;
  const char *ns = PyUnicode_AsUTF8(s->name);
  if (!ns) return NULL;
  size_t len = strlen(ns), count = 0;
  const nbc_kernel_name_t *names = nbc_kernel_names(&count);
  nbc__py_state *st = nbc__py_state_of((PyObject *)s);
  for (size_t i = 0; i < count; i++) {
    if (strncmp(names[i].name, ns, len) != 0 || names[i].name[len] != '.') continue;
    PyObject *stub = stub_new(st, &names[i]);
    int rc = stub ? PyDict_SetItemString(s->members, names[i].name + len + 1, stub) : -1;
    Py_XDECREF(stub);
    if (rc < 0) {
      PyDict_Clear(s->members);
      return NULL;
    }
  }
  /* nbcuda.bf16.bfloat16: the type (types.c), as numba.cuda.bf16's */
  PyObject *bf16 = strcmp(ns, "bf16") == 0 ? PyDict_GetItemString(st->types, "bfloat16") : NULL;
  if (bf16 && PyDict_SetItemString(s->members, "bfloat16", bf16) < 0) return NULL;
  s->filled = 1;
  return s->members;
}

const char *nbc__py_stub_name(nbc__py_state *st, PyObject *obj) {
  if (!st->StubType || !Py_IS_TYPE(obj, st->StubType)) return NULL;
  return PyUnicode_AsUTF8(((StubObject *)obj)->name);
}

static PyObject *stub_repr(PyObject *self) {
  StubObject *s = (StubObject *)self;
  if (s->kind == NBC_KERNEL_FUNCTION) return PyUnicode_FromFormat("<intrinsic %U>", s->name);
  if (s->kind == NBC_KERNEL_VALUE || !members_of(s) || PyDict_GET_SIZE(s->members) == 0)
    return PyErr_Occurred() ? NULL : PyUnicode_FromFormat("<%U>", s->name);
  /* A namespace of values (threadIdx) lists them, as numba's Dim3 does; others (atomic,
   * shared) are just named. */
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(s->members, &pos, &key, &value))
    if (((StubObject *)value)->kind != NBC_KERNEL_VALUE)
      return PyUnicode_FromFormat("<%U>", s->name);
  PyObject *comma = PyUnicode_FromString(",");
  PyObject *keys = PyDict_Keys(s->members);
  PyObject *joined = comma && keys ? PyUnicode_Join(comma, keys) : NULL;
  Py_XDECREF(comma);
  Py_XDECREF(keys);
  if (!joined) return NULL;
  PyObject *r = PyUnicode_FromFormat("<%U.{%U}>", s->name, joined);
  Py_DECREF(joined);
  return r;
}

static PyObject *stub_call(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)args;
  (void)kwargs;
  StubObject *s = (StubObject *)self;
  PyErr_Format(PyExc_NotImplementedError,
               "%R cannot be called from host code: cuda.%U is part of the CUDA kernel "
               "language and works only inside kernels and device functions compiled by "
               "cuda.jit",
               self, s->name);
  return NULL;
}

/* Members first, then the type's own attributes (__name__, __doc__...). */
static PyObject *stub_getattro(PyObject *self, PyObject *attr) {
  StubObject *s = (StubObject *)self;
  PyObject *members = members_of(s);
  if (!members) return NULL;
  PyObject *m = PyDict_GetItemWithError(members, attr);
  if (m) return Py_NewRef(m);
  if (PyErr_Occurred()) return NULL;
  return PyObject_GenericGetAttr(self, attr);
}

static PyObject *stub_dir(PyObject *self, PyObject *unused) {
  (void)unused;
  StubObject *s = (StubObject *)self;
  PyObject *members = members_of(s);
  PyObject *names = members ? PyDict_Keys(members) : NULL;
  if (!names) return NULL;
  static const char *const own[] = {"__name__", "__qualname__", "__module__", "__doc__"};
  for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
    PyObject *n = PyUnicode_FromString(own[i]);
    if (!n || PyList_Append(names, n) < 0) {
      Py_XDECREF(n);
      Py_DECREF(names);
      return NULL;
    }
    Py_DECREF(n);
  }
  return names;
}

static PyObject *stub_get_name(PyObject *self, void *closure) {
  (void)closure;
  StubObject *s = (StubObject *)self;
  Py_ssize_t len = PyUnicode_GET_LENGTH(s->name);
  Py_ssize_t dot = PyUnicode_FindChar(s->name, '.', 0, len, -1);
  if (dot == -2) return NULL;
  return dot < 0 ? Py_NewRef(s->name) : PyUnicode_Substring(s->name, dot + 1, len);
}

static PyObject *stub_get_qualname(PyObject *self, void *closure) {
  (void)closure;
  return Py_NewRef(((StubObject *)self)->name);
}

static PyObject *stub_get_doc(PyObject *self, void *closure) {
  (void)closure;
  StubObject *s = (StubObject *)self;
  const char *what = s->kind == NBC_KERNEL_FUNCTION    ? "function"
                     : s->kind == NBC_KERNEL_NAMESPACE ? "namespace"
                                                       : "value";
  return PyUnicode_FromFormat("cuda.%U: a %s of the CUDA kernel language, usable only inside "
                              "kernels and device functions compiled by cuda.jit.",
                              s->name, what);
}

static void stub_dealloc(PyObject *self) {
  StubObject *s = (StubObject *)self;
  PyTypeObject *tp = Py_TYPE(self);
  Py_XDECREF(s->name);
  Py_XDECREF(s->members);
  tp->tp_free(self);
  Py_DECREF(tp);
}

static PyMethodDef stub_methods[] = {
    {"__dir__", stub_dir, METH_NOARGS, "__dir__($self, /)\n--\n\n"
                                       "The stub's attribute names."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef stub_getset[] = {
    {"__name__", stub_get_name, NULL, NULL, NULL},
    {"__qualname__", stub_get_qualname, NULL, NULL, NULL},
    {"__doc__", stub_get_doc, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot stub_slots[] = {
    {Py_tp_dealloc, stub_dealloc},
    {Py_tp_repr, stub_repr},
    {Py_tp_call, stub_call},
    {Py_tp_getattro, stub_getattro},
    {Py_tp_methods, stub_methods},
    {Py_tp_getset, stub_getset},
    {0, NULL},
};

static PyType_Spec stub_spec = {
    .name = "nbcuda.Stub",
    .basicsize = sizeof(StubObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = stub_slots,
};

static PyObject *stub_new(nbc__py_state *st, const nbc_kernel_name_t *k) {
  StubObject *s = (StubObject *)PyType_GenericAlloc(st->StubType, 0);
  if (!s) return NULL;
  s->kind = k->kind;
  s->filled = k->kind != NBC_KERNEL_NAMESPACE;
  s->name = PyUnicode_FromString(k->name);
  s->members = PyDict_New();
  if (!s->name || !s->members) Py_CLEAR(s);
  return (PyObject *)s;
}

int nbc__py_intrinsics_init(PyObject *module, nbc__py_state *st) {
  st->StubType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &stub_spec, NULL);
  if (!st->StubType) return -1;
  size_t count = 0;
  const nbc_kernel_name_t *names = nbc_kernel_names(&count);
  for (size_t i = 0; i < count; i++) {
    if (strchr(names[i].name, '.')) continue; /* a member: its namespace makes it */
    PyObject *stub = stub_new(st, &names[i]);
    int rc = stub ? PyModule_AddObjectRef(module, names[i].name, stub) : -1;
    Py_XDECREF(stub);
    if (rc < 0) return -1;
  }
  /* CUDA's vector type names are numba's aliases of its own: cuda.char2 is cuda.int8x2 */
  static const char *const aliases[][2] = {
      {"char", "int8"},       {"short", "int16"},   {"int", "int32"},   {"long", "int64"},
      {"longlong", "int64"},  {"uchar", "uint8"},   {"ushort", "uint16"}, {"uint", "uint32"},
      {"ulong", "uint64"},    {"ulonglong", "uint64"}, {"float", "float32"},
      {"double", "float64"}};
  for (size_t a = 0; a < sizeof aliases / sizeof aliases[0]; a++)
    for (int n = 1; n <= 4; n++) {
      char alias[32], canonical[32];
      snprintf(alias, sizeof alias, "%s%d", aliases[a][0], n);
      snprintf(canonical, sizeof canonical, "%sx%d", aliases[a][1], n);
      PyObject *target = PyObject_GetAttrString(module, canonical);
      int bad = !target || PyObject_SetAttrString(module, alias, target) < 0;
      Py_XDECREF(target);
      if (bad) return -1;
    }
  /* `from nbcuda.libdevice import fast_expf`, `from nbcuda.bf16 import hadd`, as
   * numba.cuda.libdevice, .fp16 and .bf16 are modules: each namespace stands in sys.modules
   * for it (nbcuda is no package). */
  static const char *const submodules[] = {"libdevice", "fp16", "bf16"};
  for (size_t m = 0; m < sizeof submodules / sizeof submodules[0]; m++) {
    char full[32];
    snprintf(full, sizeof full, "nbcuda.%s", submodules[m]);
    PyObject *ns = PyObject_GetAttrString(module, submodules[m]);
    int rc = ns ? PyDict_SetItemString(PyImport_GetModuleDict(), full, ns) : -1;
    Py_XDECREF(ns);
    if (rc < 0) return -1;
  }
  return 0;
}
