/* cache.c — jit(cache=True): the Python side of the kernel layer's disk cache (nbc_cache_*,
 * src/kernel/cache.c, which holds the key, the file format, the directories and the rules of
 * a hit). What only Python knows is gathered here: the function's source file, qualname and
 * first line, the extension module's own file (a rebuilt nbcuda never reads an older one's
 * code) and, as numba's index key has it, a digest (sha256) of the pickled contents of the
 * function's closure cells: closures made by one factory with other captured values are
 * other entries. A closure whose contents do not pickle is not cached. Failing to write is
 * not an error: the cache only saves time. Functions without a source file (the REPL, exec)
 * cannot be cached: jit(cache=True) refuses them as numba does.
 */
#include "nbcuda_py.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* A function's source file, qualname and first line (new references); -1 when it has no
 * file on disk to cache for (no exception set). */
static int function_origin(PyObject *py_func, PyObject **pfile, PyObject **pqualname,
                           long *pline) {
  PyObject *code = PyObject_GetAttrString(py_func, "__code__");
  PyObject *fname = code ? PyObject_GetAttrString(code, "co_filename") : NULL;
  PyObject *first = fname ? PyObject_GetAttrString(code, "co_firstlineno") : NULL;
  PyObject *qual = first ? PyObject_GetAttrString(py_func, "__qualname__") : NULL;
  const char *f = fname && PyUnicode_Check(fname) ? PyUnicode_AsUTF8(fname) : NULL;
  char abs[PATH_MAX];
  int ok = f && qual && PyUnicode_Check(qual) && realpath(f, abs) != NULL;
  if (ok) {
    *pline = PyLong_AsLong(first);
    *pqualname = Py_NewRef(qual);
    *pfile = Py_NewRef(fname);
  }
  Py_XDECREF(qual);
  Py_XDECREF(first);
  Py_XDECREF(fname);
  Py_XDECREF(code);
  PyErr_Clear();
  return ok ? 0 : -1;
}

int nbc__py_cache_check(PyObject *py_func) {
  PyObject *file = NULL, *qual = NULL;
  long line = 0;
  if (function_origin(py_func, &file, &qual, &line) == 0) {
    Py_DECREF(file);
    Py_DECREF(qual);
    return 0;
  }
  PyObject *code = PyObject_GetAttrString(py_func, "__code__");
  PyObject *fname = code ? PyObject_GetAttrString(code, "co_filename") : NULL;
  PyErr_Clear();
  PyErr_Format(PyExc_RuntimeError, "cannot cache function %R: no locator available for file %R",
               py_func, fname ? fname : Py_None);
  Py_XDECREF(fname);
  Py_XDECREF(code);
  return -1;
}

/* The sha256 (hex) of pickle.dumps(tuple of py_func's closure cell contents) into out, "-"
 * for a function without a closure; -1 (no exception set) when the contents do not pickle
 * or a cell is empty, -2 when a cell holds a device array (which pickles as a host copy of
 * its elements: never made for a key): such a function is not cached. */
static int closure_digest(nbc__py_state *st, PyObject *py_func, char out[65]) {
  PyObject *cells = PyFunction_Check(py_func) ? PyFunction_GetClosure(py_func) : NULL;
  if (!cells || cells == Py_None || !PyTuple_GET_SIZE(cells)) {
    strcpy(out, "-");
    return 0;
  }
  PyObject *values = PyTuple_New(PyTuple_GET_SIZE(cells)), *digest = NULL;
  for (Py_ssize_t i = 0; values && i < PyTuple_GET_SIZE(cells); i++) {
    PyObject *v = PyCell_GET(PyTuple_GET_ITEM(cells, i));
    if (v && Py_TYPE(v) == st->DeviceArrayType) {
      Py_DECREF(values);
      return -2;
    }
    if (!v) {
      Py_CLEAR(values);
      break;
    }
    PyTuple_SET_ITEM(values, i, Py_NewRef(v));
  }
  PyObject *pickle = values ? PyImport_ImportModule("pickle") : NULL;
  PyObject *bytes = pickle ? PyObject_CallMethod(pickle, "dumps", "Oi", values, 4) : NULL;
  PyObject *hashlib = bytes ? PyImport_ImportModule("hashlib") : NULL;
  PyObject *h = hashlib ? PyObject_CallMethod(hashlib, "sha256", "O", bytes) : NULL;
  digest = h ? PyObject_CallMethod(h, "hexdigest", NULL) : NULL;
  const char *text = digest && PyUnicode_Check(digest) ? PyUnicode_AsUTF8(digest) : NULL;
  int ok = text && strlen(text) == 64;
  if (ok) memcpy(out, text, 65);
  Py_XDECREF(values);
  Py_XDECREF(pickle);
  Py_XDECREF(bytes);
  Py_XDECREF(hashlib);
  Py_XDECREF(h);
  Py_XDECREF(digest);
  PyErr_Clear();
  return ok ? 0 : -1;
}

void nbc__py_cache_slot_free(nbc__py_cache_slot *slot) {
  nbc_cache_entry_destroy(slot->entry);
  slot->entry = NULL;
}

void nbc__py_cache_slot_make(nbc__py_state *st, PyObject *py_func, const char *sig,
                             const nbc_compile_options_t *o, nbc__py_cache_slot *slot) {
  memset(slot, 0, sizeof *slot);
  char closure[65];
  int digest = closure_digest(st, py_func, closure);
  if (digest < 0) {
    slot->uncacheable = digest == -2 ? "as it uses dynamic globals (device arrays)"
                                     : "as the values its closure captures do not pickle";
    return;
  }
  PyObject *file = NULL, *qual = NULL;
  nbc_cache_key_t key = {.signature = sig, .options = o, .extra = closure};
  if (function_origin(py_func, &file, &qual, &key.line) < 0) return;
  PyObject *mod_file = PyModule_GetFilenameObject(PyType_GetModule(st->KernelType));
  key.build_file = mod_file ? PyUnicode_AsUTF8(mod_file) : NULL;
  key.file = PyUnicode_AsUTF8(file);
  key.qualname = PyUnicode_AsUTF8(qual);
  if (key.file && key.qualname && nbc_cache_entry_create(&key, &slot->entry) != NBC_OK)
    slot->entry = NULL; /* no directory to write: compiled each time */
  Py_XDECREF(mod_file);
  Py_DECREF(file);
  Py_DECREF(qual);
  PyErr_Clear();
}

int nbc__py_cache_load(nbc__py_state *st, PyObject *py_func, const char *sig,
                       const nbc_compile_options_t *o, nbc__py_cache_slot *slot,
                       nbc_compile_result_t **presult) {
  nbc__py_cache_slot_make(st, py_func, sig, o, slot);
  *presult = NULL;
  if (slot->entry && nbc_cache_entry_load(slot->entry, presult) != NBC_OK) *presult = NULL;
  return *presult ? 1 : 0;
}

void nbc__py_cache_store(const nbc__py_cache_slot *slot, const nbc_compile_result_t *r) {
  if (slot->entry && r) nbc_cache_entry_store(slot->entry, r); /* a failed write only costs time */
}

/* The directory cached files of py_func go to, for stats.cache_path; None without one. */
PyObject *nbc__py_cache_path(PyObject *py_func) {
  PyObject *file = NULL, *qual = NULL;
  long line = 0;
  if (function_origin(py_func, &file, &qual, &line) < 0) Py_RETURN_NONE;
  Py_DECREF(qual);
  char dir[PATH_MAX];
  const char *f = PyUnicode_AsUTF8(file);
  nbc_status_t s = f ? nbc_cache_dir(f, dir, sizeof dir) : NBC_INVALID_ARGUMENT;
  Py_DECREF(file);
  PyErr_Clear();
  if (s != NBC_OK) Py_RETURN_NONE;
  return PyUnicode_FromString(dir);
}
