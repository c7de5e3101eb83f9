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
 *
 * The same test tells whether a file still holds the function Python runs
 * (nbc__py_source_is_current): a module edited after import has new text under the old
 * function, and nbcuda compiles the text. The file's text as linecache has it, compiled with
 * the function's __future__ flags, must hold a code object equal to the function's, or one
 * that an import hook such as pytest's assertion rewriting turned into the function's by
 * adding code (transformed_from); the compiled text is kept per file while linecache keeps
 * the same lines, so a file is compiled again only when it changed.
 */
#include "nbcuda_py.h"

#include <pthread.h>
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

/* One compile() of a text, run on a thread of its own (compile_job_run). */
typedef struct compile_job {
  const char *text;
  PyObject *filename;
  PyCompilerFlags flags;
  PyObject *result;                /* the code object, or NULL */
  PyObject *exc_type, *exc_value, *exc_tb; /* its exception */
} compile_job;

/* The compile itself, on the thread that holds the GIL: a lookup's compile, which the audit
 * hook leaves out. */
static void compile_job_do(compile_job *j) {
  looking_up++;
  j->result = Py_CompileStringObject(j->text, j->filename, Py_file_input, &j->flags, -1);
  looking_up--;
}

static void *compile_job_thread(void *arg) {
  compile_job *j = arg;
  PyGILState_STATE gil = PyGILState_Ensure();
  compile_job_do(j);
  if (!j->result) PyErr_Fetch(&j->exc_type, &j->exc_value, &j->exc_tb);
  PyGILState_Release(gil);
  return NULL;
}

/* CPython's compiler recurses on the text's nesting, which the interpreter's own thread (8 MB
 * here) held when it first compiled the file, but a caller's thread may be far smaller (a
 * Python thread after threading.stack_size(256 * 1024)): the compile runs on a thread with a
 * stack like the main thread's, the caller waiting without the GIL; on its own thread when
 * none can be made. */
enum { COMPILE_STACK = 64 << 20 };

static PyObject *compile_job_run(compile_job *j) {
  pthread_attr_t attr;
  pthread_t thread;
  int started = 0;
  if (pthread_attr_init(&attr) == 0) {
    if (pthread_attr_setstacksize(&attr, COMPILE_STACK) == 0) {
      Py_BEGIN_ALLOW_THREADS;
      started = pthread_create(&thread, &attr, compile_job_thread, j) == 0;
      if (started) pthread_join(thread, NULL);
      Py_END_ALLOW_THREADS;
    }
    pthread_attr_destroy(&attr);
  }
  if (!started) {
    compile_job_do(j);
    return j->result;
  }
  if (!j->result) PyErr_Restore(j->exc_type, j->exc_value, j->exc_tb);
  return j->result;
}

/* Compiles text as a module under filename with the __future__ flags of code; NULL with an
 * exception (a SyntaxError when the text does not compile). */
static PyObject *compile_like(PyObject *text, PyObject *filename, PyObject *code) {
  PyObject *flags = PyObject_GetAttrString(code, "co_flags");
  if (!flags) return NULL;
  int future = (int)PyLong_AsLong(flags) & PyCF_MASK;
  Py_DECREF(flags);
  const char *s = PyUnicode_AsUTF8(text);
  if (!s) return NULL;
  compile_job job = {.text = s,
                     .filename = filename,
                     .flags = {.cf_flags = future | PyCF_SOURCE_IS_UTF8,
                               .cf_feature_version = PY_MINOR_VERSION}};
  return compile_job_run(&job);
}

/* Whether every item of the tuple sub is in sup (items equal and of the same type, so 1 and
 * 1.0 differ); 1, 0, or -1 with an exception. Code objects are left out. */
static int tuple_within(PyObject *sub, PyObject *sup) {
  if (!PyTuple_Check(sub) || !PyTuple_Check(sup)) return 0;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(sub); i++) {
    PyObject *a = PyTuple_GET_ITEM(sub, i);
    if (PyCode_Check(a)) continue;
    int found = 0;
    for (Py_ssize_t j = 0; !found && j < PyTuple_GET_SIZE(sup); j++) {
      PyObject *b = PyTuple_GET_ITEM(sup, j);
      if (Py_TYPE(a) != Py_TYPE(b)) continue;
      found = PyObject_RichCompareBool(a, b, Py_EQ);
      if (found < 0) return -1;
    }
    if (!found) return 0;
  }
  return 1;
}

/* The set of source lines code's instructions come from. */
static PyObject *code_lines(PyObject *code) {
  PyObject *set = PySet_New(NULL);
  PyObject *it = set ? PyObject_CallMethod(code, "co_lines", NULL) : NULL;
  PyObject *iter = it ? PyObject_GetIter(it) : NULL;
  PyObject *item;
  while (iter && (item = PyIter_Next(iter))) {
    PyObject *line = PyTuple_Check(item) && PyTuple_GET_SIZE(item) == 3
                         ? PyTuple_GET_ITEM(item, 2)
                         : Py_None;
    int rc = line == Py_None ? 0 : PySet_Add(set, line);
    Py_DECREF(item);
    if (rc < 0) break;
  }
  Py_XDECREF(iter);
  Py_XDECREF(it);
  if (PyErr_Occurred()) Py_CLEAR(set);
  return set;
}

/* Whether running is plain (the code the text compiles to) transformed by an import hook
 * that adds code, as pytest's assertion rewriting does: the same name, first line, argument
 * counts and source lines, every constant, name and local of plain kept, and something added.
 * An edit of the file changes one of those (a constant, a name, a line) or adds nothing, so
 * it is not taken for a transformation. 1, 0, or -1 with an exception. */
static int transformed_from(PyObject *plain, PyObject *running) {
  static const char *const same[] = {"co_name", "co_firstlineno", "co_argcount",
                                     "co_posonlyargcount", "co_kwonlyargcount"};
  for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
    PyObject *a = PyObject_GetAttrString(plain, same[i]);
    PyObject *b = a ? PyObject_GetAttrString(running, same[i]) : NULL;
    int eq = b ? PyObject_RichCompareBool(a, b, Py_EQ) : -1;
    Py_XDECREF(a);
    Py_XDECREF(b);
    if (eq <= 0) return eq;
  }
  static const char *const kept_parts[] = {"co_consts", "co_names", "co_varnames"};
  int added = 0;
  for (size_t i = 0; i < sizeof kept_parts / sizeof kept_parts[0]; i++) {
    PyObject *a = PyObject_GetAttrString(plain, kept_parts[i]);
    PyObject *b = a ? PyObject_GetAttrString(running, kept_parts[i]) : NULL;
    int within = b ? tuple_within(a, b) : -1;
    int grew = within > 0 ? tuple_within(b, a) : 1;
    Py_XDECREF(a);
    Py_XDECREF(b);
    if (within <= 0) return within;
    if (grew < 0) return -1;
    added |= !grew;
  }
  if (!added) return 0;
  PyObject *la = code_lines(plain), *lb = la ? code_lines(running) : NULL;
  int eq = lb ? PyObject_RichCompareBool(la, lb, Py_EQ) : -1;
  Py_XDECREF(la);
  Py_XDECREF(lb);
  return eq;
}

/* 1 when module_code (or a code object among its constants, recursively) equals target, or,
 * with transformed set, is its plain form that an import hook turned into target
 * (transformed_from). */
static int holds_code(PyObject *module_code, PyObject *target, int transformed) {
  int eq = PyObject_RichCompareBool(module_code, target, Py_EQ);
  if (eq == 0 && transformed) eq = transformed_from(module_code, target);
  if (eq) return eq;
  PyObject *consts = PyObject_GetAttrString(module_code, "co_consts");
  if (!consts) return -1;
  int found = 0;
  for (Py_ssize_t i = 0; !found && PyTuple_Check(consts) && i < PyTuple_GET_SIZE(consts); i++)
    if (PyCode_Check(PyTuple_GET_ITEM(consts, i)))
      found = holds_code(PyTuple_GET_ITEM(consts, i), target, transformed);
  Py_DECREF(consts);
  return found;
}

/* {filename: (lines, compiled module code)}: each file's text as last checked. */
static PyObject *checked_files;

int nbc__py_source_is_current(PyObject *code, PyObject *lines) {
  if (!PyCode_Check(code) || !PyList_Check(lines) || PyList_GET_SIZE(lines) == 0) return 1;
  PyObject *filename = PyObject_GetAttrString(code, "co_filename");
  if (!filename) return -1;
  if (!checked_files && !(checked_files = PyDict_New())) {
    Py_DECREF(filename);
    return -1;
  }
  PyObject *entry = PyDict_GetItemWithError(checked_files, filename); /* borrowed */
  PyObject *compiled = NULL;
  if (entry && PyTuple_GET_ITEM(entry, 0) == lines) {
    compiled = Py_NewRef(PyTuple_GET_ITEM(entry, 1));
  } else if (!PyErr_Occurred()) {
    PyObject *empty = PyUnicode_FromString("");
    PyObject *text = empty ? PyUnicode_Join(empty, lines) : NULL;
    Py_XDECREF(empty);
    compiled = text ? compile_like(text, filename, code) : NULL;
    Py_XDECREF(text);
    if (!compiled && PyErr_ExceptionMatches(PyExc_SyntaxError)) {
      PyErr_Clear(); /* the file no longer compiles: it is not what Python runs */
      compiled = Py_NewRef(Py_None);
    }
    PyObject *pair = compiled ? PyTuple_Pack(2, lines, compiled) : NULL;
    if (!pair || PyDict_SetItem(checked_files, filename, pair) < 0) Py_CLEAR(compiled);
    Py_XDECREF(pair);
  }
  Py_DECREF(filename);
  if (!compiled) return -1;
  int holds = compiled == Py_None ? 0 : holds_code(compiled, code, 1);
  Py_DECREF(compiled);
  return holds;
}

PyObject *nbc__py_exec_source_lines(PyObject *code) {
  if (!kept || !PyCode_Check(code)) return NULL;
  PyObject *filename = PyObject_GetAttrString(code, "co_filename");
  if (!filename) return NULL;
  PyObject *found = NULL;
  LOCK_KEPT();
  PyObject *entries = PyList_GetSlice(kept, 0, PyList_GET_SIZE(kept)); /* the hook may add */
  UNLOCK_KEPT();
  for (Py_ssize_t i = entries ? PyList_GET_SIZE(entries) - 1 : -1; i >= 0 && !found; i--) {
    PyObject *entry = PyList_GET_ITEM(entries, i);
    int same_file = PyUnicode_Compare(PyTuple_GET_ITEM(entry, 0), filename) == 0;
    if (!same_file) continue;
    PyObject *text = PyTuple_GET_ITEM(entry, 1);
    PyObject *compiled = compile_like(text, filename, code);
    int holds = compiled ? holds_code(compiled, code, 0) : -1;
    Py_XDECREF(compiled);
    if (holds < 0) PyErr_Clear(); /* a text that no longer compiles is not this one */
    if (holds > 0) found = PyUnicode_Splitlines(text, 1);
  }
  Py_XDECREF(entries);
  Py_DECREF(filename);
  return found;
}
