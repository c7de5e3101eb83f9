/* declared.c — numba's cuda.declare_device(name, sig, link=None): a device function written
 * elsewhere (CUDA C++, PTX, ...) that kernels call by its symbol, and the files to link for it.
 *
 *   mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)", link=["mul.cu"])
 *
 *   extern "C" __device__ int mul_f32_f32(float *ret, float a, float b) {
 *       *ret = a * b; return 0;   // numba's ABI: the result through a pointer, a status back
 *   }
 *
 * The object only carries the symbol, the signature (text) and the link files; compile.c's
 * resolver hands the first two to the compiler (NBC_GLOBAL_DECLARED: a call converts its
 * arguments to the declared types and calls `i32 @name(RT*, args...)`) and collects the link
 * files, which the kernel links with its own code when it is loaded (link.c). As in
 * numba-cuda, the arguments are scalars or pointers to them (CPointer(float32): a kernel
 * passes one it was given), the result a scalar; calling the object from the host is a
 * TypeError. abi="c" (numba-cuda 0.30's) declares a plain C function instead,
 * `extern "C" __device__ float mul_f32_f32(float a, float b)`, void for a void signature.
 */
#include "nbcuda_py.h"

#include <structmember.h>

typedef struct {
  PyObject_HEAD
  PyObject *name;  /* the symbol */
  PyObject *sig;   /* the signature text */
  PyObject *link;  /* tuple of file paths (str) */
  int use_cooperative;
  int c_abi; /* abi="c" */
} DeclaredObject;

static int declared_traverse(DeclaredObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->name);
  Py_VISIT(self->sig);
  Py_VISIT(self->link);
  return 0;
}

static void declared_dealloc(DeclaredObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  Py_CLEAR(self->name);
  Py_CLEAR(self->sig);
  Py_CLEAR(self->link);
  tp->tp_free(self);
  Py_DECREF(tp);
}

static PyObject *declared_call(DeclaredObject *self, PyObject *args, PyObject *kwargs) {
  (void)args;
  (void)kwargs;
  PyErr_Format(PyExc_TypeError, "%U is a device function: call it from a kernel", self->name);
  return NULL;
}

static PyObject *declared_repr(DeclaredObject *self) {
  return PyUnicode_FromFormat("<nbcuda declared device function %U %U>", self->name,
                              self->sig);
}

int nbc__py_declared(nbc__py_state *st, PyObject *obj, const char **pname, const char **psig,
                     PyObject **plink, int *pcooperative, int *pc_abi) {
  if (Py_TYPE(obj) != st->DeclaredType) return 0;
  DeclaredObject *d = (DeclaredObject *)obj;
  *pname = PyUnicode_AsUTF8(d->name);
  *psig = PyUnicode_AsUTF8(d->sig);
  *plink = d->link;
  *pcooperative = d->use_cooperative;
  *pc_abi = d->c_abi;
  return *pname && *psig ? 1 : -1;
}

/* declare_device(name, sig, link=None, use_cooperative=False, abi="numba") */
static PyObject *py_declare_device(PyObject *module, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"name", "sig", "link", "use_cooperative", "abi", NULL};
  PyObject *name, *sig, *link = Py_None, *abi = NULL;
  int coop = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "UO|OpO:declare_device", kwlist, &name, &sig,
                                   &link, &coop, &abi))
    return NULL;
  int c_abi = abi && PyUnicode_Check(abi) && PyUnicode_CompareWithASCIIString(abi, "c") == 0;
  if (abi && !c_abi &&
      !(PyUnicode_Check(abi) && PyUnicode_CompareWithASCIIString(abi, "numba") == 0)) {
    PyErr_Format(PyExc_NotImplementedError, "Unsupported ABI: %S", abi);
    return NULL;
  }
  nbc__py_state *st = nbc__py_module_state(module);
  PyObject *text, *paths = NULL;
  nbc_signature_t *csig;
  if (nbc__py_parse_signature(st, sig, &text, &csig) < 0) return NULL;
  const char *ret = nbc_signature_return_type(csig);
  int nargs = nbc_signature_nargs(csig), ok = ret != NULL;
  for (int i = 0; ok && i < nargs; i++) {
    nbc_param_kind_t kind = nbc_signature_param(csig, i)->kind;
    ok = kind == NBC_PARAM_SCALAR || kind == NBC_PARAM_POINTER;
  }
  nbc_signature_destroy(csig);
  if (!ret) { /* numba-cuda's words */
    PyErr_Format(PyExc_TypeError, "Return type must be provided for device declarations "
                 "(declare_device: %U)", text);
    Py_DECREF(text);
    return NULL;
  }
  if (!ok) {
    PyErr_Format(PyExc_TypeError, "declare_device: %U must take scalars and CPointer(scalar) "
                 "only (e.g. 'float32(CPointer(float32), int32)')", text);
    Py_DECREF(text);
    return NULL;
  }
  if (!(paths = nbc__py_link_paths(st, link))) {
    Py_DECREF(text);
    return NULL;
  }
  DeclaredObject *d = PyObject_GC_New(DeclaredObject, st->DeclaredType);
  if (!d) {
    Py_DECREF(text);
    Py_DECREF(paths);
    return NULL;
  }
  d->name = Py_NewRef(name);
  d->sig = text;
  d->link = paths;
  d->use_cooperative = coop;
  d->c_abi = c_abi;
  PyObject_GC_Track(d);
  return (PyObject *)d;
}

static PyMemberDef declared_members[] = {
    {"name", T_OBJECT, offsetof(DeclaredObject, name), READONLY, "the symbol"},
    {"sig", T_OBJECT, offsetof(DeclaredObject, sig), READONLY, "the signature"},
    {"link", T_OBJECT, offsetof(DeclaredObject, link), READONLY, "the files linked for it"},
    {"use_cooperative", T_BOOL, offsetof(DeclaredObject, use_cooperative), READONLY, NULL},
    {"c_abi", T_BOOL, offsetof(DeclaredObject, c_abi), READONLY, "declared with abi=\"c\""},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot declared_slots[] = {
    {Py_tp_dealloc, declared_dealloc},
    {Py_tp_traverse, declared_traverse},
    {Py_tp_call, declared_call},
    {Py_tp_repr, declared_repr},
    {Py_tp_members, declared_members},
    {Py_tp_doc, (void *)"A device function declared with declare_device()."},
    {0, NULL},
};

static PyType_Spec declared_spec = {
    .name = "nbcuda.DeclaredDevice",
    .basicsize = sizeof(DeclaredObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION |
             Py_TPFLAGS_IMMUTABLETYPE,
    .slots = declared_slots,
};

static PyMethodDef declared_functions[] = {
    {"declare_device", (PyCFunction)(void (*)(void))py_declare_device,
     METH_VARARGS | METH_KEYWORDS,
     "declare_device($module, name, sig, link=None, use_cooperative=False, abi='numba')\n--\n\n"
     "A device function implemented elsewhere (numba's ABI: int name(RT *ret, args...); "
     "abi='c': RT name(args...)), linked from the files given."},
    {NULL, NULL, 0, NULL},
};

int nbc__py_declared_init(PyObject *module, nbc__py_state *st) {
  st->DeclaredType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &declared_spec, NULL);
  if (!st->DeclaredType) return -1;
  return PyModule_AddFunctions(module, declared_functions);
}
