/* exec_source.c — the source of functions made by exec() or compile() of a string.
 *
 * nbcuda compiles a kernel from its Python source, which inspect finds through linecache: a
 * function whose code was a string given to exec() ("<string>") has none there. numba-cuda
 * works from bytecode and compiles such functions, and code that generates kernels from
 * templates does this (numba-cuda's own test_atomics makes its kernels so).
 *
 * CPython raises the audit event "compile" (source, filename) whenever it compiles a string.
 * An audit hook (PySys_AddAuditHook, added once when nbcuda is first imported; it acts in the
 * main interpreter only) keeps the texts of the most recent NBC__EXEC_SOURCES of them whose
 * file name is not a file's (it starts with '<'; ast.parse's "<unknown>" excepted) and that
 * define a function or a lambda, each up to NBC__EXEC_SOURCE_MAX bytes and all together
 * up to NBC__EXEC_SOURCES_TOTAL. A function's source is the newest kept text under its
 * co_filename that, compiled again with the function's __future__ flags, holds a code object
 * equal to the function's own (name, first line, bytecode, constants, names, positions): two
 * templates exec'd under "<string>" define their functions at the same lines but differ in
 * their code, so each function gets the text it was made from, never its neighbour's; two
 * texts that compile to equal code are the same function.
 *
 * The hook costs a string comparison per audit event; it never fails the operation it
 * watches (any error of its own is cleared, the pending exception state restored), and it
 * ignores the compilations that a lookup makes.
 */
#include "nbcuda_py.h"

#include <string.h>

#define NBC__EXEC_SOURCES 64
#define NBC__EXEC_SOURCE_MAX (1 << 20)    /* UTF-8 bytes of one text */
#define NBC__EXEC_SOURCES_TOTAL (8 << 20) /* characters of all kept texts */

/* [(filename, source text)], oldest first; made with the hook, kept for the process. The
 * GIL guards it; without one (free-threaded builds) a mutex does. */
static PyObject *kept;
static _Thread_local int looking_up; /* this thread's lookup compiles: not recorded */
#ifdef Py_GIL_DISABLED
static PyMutex kept_lock;
#define LOCK_KEPT() PyMutex_Lock(&kept_lock)
#define UNLOCK_KEPT() PyMutex_Unlock(&kept_lock)
#else
#define LOCK_KEPT() ((void)0)
#define UNLOCK_KEPT() ((void)0)
#endif

static int defines_code(const char *text) {
  return strstr(text, "def ") || strstr(text, "lambda");
}

/* Records one compiled string; -1 with an exception (the hook clears it). */
static int record(PyObject *source, PyObject *filename) {
  /* not a file's name; "<unknown>" is ast.parse's default, a parse rather than code to run */
  if (!PyUnicode_Check(filename) || PyUnicode_GET_LENGTH(filename) == 0 ||
      PyUnicode_READ_CHAR(filename, 0) != '<' ||
      PyUnicode_CompareWithASCIIString(filename, "<unknown>") == 0)
    return 0;
  PyObject *text;
  if (PyBytes_Check(source)) {
    if (PyBytes_GET_SIZE(source) > NBC__EXEC_SOURCE_MAX ||
        !defines_code(PyBytes_AS_STRING(source)))
      return 0;
    text = PyUnicode_DecodeUTF8(PyBytes_AS_STRING(source), PyBytes_GET_SIZE(source), NULL);
  } else if (PyUnicode_Check(source)) {
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(source, &n);
    if (!s) return -1;
    if (n > NBC__EXEC_SOURCE_MAX || !defines_code(s)) return 0;
    text = Py_NewRef(source);
  } else {
    return 0; /* an AST, compiled as it is: no text */
  }
  if (!text) return -1;
  Py_ssize_t count = PyList_GET_SIZE(kept);
  if (count > 0) { /* the same text again (a loop of exec calls): kept once */
    PyObject *last = PyList_GET_ITEM(kept, count - 1);
    int same = PyUnicode_Compare(PyTuple_GET_ITEM(last, 1), text) == 0 &&
               PyUnicode_Compare(PyTuple_GET_ITEM(last, 0), filename) == 0;
    if (same || PyErr_Occurred()) {
      Py_DECREF(text);
      return PyErr_Occurred() ? -1 : 0;
    }
  }
  PyObject *entry = PyTuple_Pack(2, filename, text);
  Py_DECREF(text);
  int rc = entry ? PyList_Append(kept, entry) : -1;
  Py_XDECREF(entry);
  Py_ssize_t total = 0;
  for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(kept); i++)
    total += PyUnicode_GET_LENGTH(PyTuple_GET_ITEM(PyList_GET_ITEM(kept, i), 1));
  while (rc == 0 && PyList_GET_SIZE(kept) > 1 &&
         (PyList_GET_SIZE(kept) > NBC__EXEC_SOURCES || total > NBC__EXEC_SOURCES_TOTAL)) {
    total -= PyUnicode_GET_LENGTH(PyTuple_GET_ITEM(PyList_GET_ITEM(kept, 0), 1));
    rc = PySequence_DelItem(kept, 0);
  }
  return rc;
}

static int audit_hook(const char *event, PyObject *args, void *unused) {
  (void)unused;
  if (event[0] != 'c' || strcmp(event, "compile") != 0 || looking_up || !kept) return 0;
  if (PyInterpreterState_Get() != PyInterpreterState_Main()) return 0;
  if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) != 2) return 0;
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  LOCK_KEPT();
  if (record(PyTuple_GET_ITEM(args, 0), PyTuple_GET_ITEM(args, 1)) < 0) PyErr_Clear();
  UNLOCK_KEPT();
  PyErr_Restore(type, value, tb);
  return 0;
}

int nbc__py_exec_source_init(void) {
  if (kept || PyInterpreterState_Get() != PyInterpreterState_Main()) return 0;
  if (!(kept = PyList_New(0))) return -1;
  if (PySys_AddAuditHook(audit_hook, NULL) < 0) { /* an existing hook refused it */
    PyErr_Clear();
    Py_CLEAR(kept); /* such functions keep having no source */
  }
  return 0;
}

/* 1 when module_code (or a code object among its constants, recursively) equals target. */
static int holds_code(PyObject *module_code, PyObject *target) {
  int eq = PyObject_RichCompareBool(module_code, target, Py_EQ);
  if (eq) return eq;
  PyObject *consts = PyObject_GetAttrString(module_code, "co_consts");
  if (!consts) return -1;
  int found = 0;
  for (Py_ssize_t i = 0; !found && PyTuple_Check(consts) && i < PyTuple_GET_SIZE(consts); i++)
    if (PyCode_Check(PyTuple_GET_ITEM(consts, i)))
      found = holds_code(PyTuple_GET_ITEM(consts, i), target);
  Py_DECREF(consts);
  return found;
}

PyObject *nbc__py_exec_source_lines(PyObject *code) {
  if (!kept || !PyCode_Check(code)) return NULL;
  PyObject *filename = PyObject_GetAttrString(code, "co_filename");
  PyObject *flags = filename ? PyObject_GetAttrString(code, "co_flags") : NULL;
  if (!flags) return NULL;
  int future = (int)PyLong_AsLong(flags) & PyCF_MASK;
  Py_DECREF(flags);
  PyObject *found = NULL;
  looking_up++;
  LOCK_KEPT();
  PyObject *entries = PyList_GetSlice(kept, 0, PyList_GET_SIZE(kept)); /* the hook may add */
  UNLOCK_KEPT();
  for (Py_ssize_t i = entries ? PyList_GET_SIZE(entries) - 1 : -1; i >= 0 && !found; i--) {
    PyObject *entry = PyList_GET_ITEM(entries, i);
    int same_file = PyUnicode_Compare(PyTuple_GET_ITEM(entry, 0), filename) == 0;
    if (!same_file) continue;
    PyObject *text = PyTuple_GET_ITEM(entry, 1);
    const char *s = PyUnicode_AsUTF8(text);
    PyCompilerFlags cf = {.cf_flags = future | PyCF_SOURCE_IS_UTF8,
                          .cf_feature_version = PY_MINOR_VERSION};
    PyObject *compiled = s ? Py_CompileStringObject(s, filename, Py_file_input, &cf, -1) : NULL;
    int holds = compiled ? holds_code(compiled, code) : -1;
    Py_XDECREF(compiled);
    if (holds < 0) PyErr_Clear(); /* a text that no longer compiles is not this one */
    if (holds > 0) found = PyUnicode_Splitlines(text, 1);
  }
  looking_up--;
  Py_XDECREF(entries);
  Py_DECREF(filename);
  return found;
}
