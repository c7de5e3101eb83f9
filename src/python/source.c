/* source.c — the text nbcuda compiles for a Python function: its source as CPython kept it
 * (the file through linecache, an exec()'d string from exec_source.c's window, a lambda
 * found in its line), dedented, checked to be the code Python runs (a file edited since
 * import is a RuntimeError), and the error when there is none (`python -c`, a .pyc only). */
#include "nbcuda_py.h"

#include <stdlib.h>
#include <string.h>


/* The ast.Lambda node of lambda f in the parsed module text of its file: on f's first line,
 * with f's positional parameters (the first such, when one line holds several alike); NULL
 * without an exception when there is none. */
static PyObject *find_lambda(PyObject *ast, PyObject *tree, PyObject *code) {
  PyObject *lambda_type = PyObject_GetAttrString(ast, "Lambda");
  PyObject *nodes = lambda_type ? PyObject_CallMethod(ast, "walk", "(O)", tree) : NULL;
  PyObject *it = nodes ? PyObject_GetIter(nodes) : NULL;
  PyObject *first = it ? PyObject_GetAttrString(code, "co_firstlineno") : NULL;
  PyObject *names = first ? PyObject_GetAttrString(code, "co_varnames") : NULL;
  PyObject *argc = names ? PyObject_GetAttrString(code, "co_argcount") : NULL;
  Py_ssize_t nargs = argc ? PyLong_AsSsize_t(argc) : -1;
  PyObject *found = NULL, *node;
  while (nargs >= 0 && !found && (node = PyIter_Next(it))) {
    int match = PyObject_IsInstance(node, lambda_type) == 1;
    PyObject *lineno = match ? PyObject_GetAttrString(node, "lineno") : NULL;
    match = lineno && PyObject_RichCompareBool(lineno, first, Py_EQ) == 1;
    Py_XDECREF(lineno);
    PyObject *args = match ? PyObject_GetAttrString(node, "args") : NULL;
    PyObject *params = args ? PyObject_GetAttrString(args, "args") : NULL;
    match = params && PyList_Check(params) && PyList_GET_SIZE(params) == nargs;
    for (Py_ssize_t i = 0; match && i < nargs; i++) {
      PyObject *arg = PyObject_GetAttrString(PyList_GET_ITEM(params, i), "arg");
      match = arg && PyObject_RichCompareBool(arg, PyTuple_GetItem(names, i), Py_EQ) == 1;
      Py_XDECREF(arg);
    }
    Py_XDECREF(params);
    Py_XDECREF(args);
    if (match) found = Py_NewRef(node);
    Py_DECREF(node);
  }
  PyErr_Clear(); /* no lambda found is answered by the caller's error */
  Py_XDECREF(argc);
  Py_XDECREF(names);
  Py_XDECREF(first);
  Py_XDECREF(it);
  Py_XDECREF(nodes);
  Py_XDECREF(lambda_type);
  return found;
}

/* A lambda's source as a def: `def _lambda_(a, b):\n    return (a + b)\n`, its body cut out
 * of its file with ast (inspect gives the whole statement around a lambda), the def's line
 * placed just above the lambda's so diagnostics give the lambda's line, and *pfile the file
 * name (a new reference). NULL with an exception set, or without one when the lambda's
 * source cannot be found. */
static PyObject *lambda_as_def(PyObject *f, int *pline, PyObject **pfile) {
  PyObject *code = PyObject_GetAttrString(f, "__code__");
  PyObject *file = code ? PyObject_GetAttrString(code, "co_filename") : NULL;
  PyObject *globals = file ? PyObject_GetAttrString(f, "__globals__") : NULL;
  PyObject *linecache = globals ? PyImport_ImportModule("linecache") : NULL;
  PyObject *lines = linecache ? PyObject_CallMethod(linecache, "getlines", "OO", file, globals)
                              : NULL;
  if (lines && PyList_Check(lines) && PyList_GET_SIZE(lines) == 0) { /* exec() of a string */
    PyObject *made = nbc__py_exec_source_lines(code);
    if (made) Py_SETREF(lines, made);
  }
  PyObject *empty = lines ? PyUnicode_FromString("") : NULL;
  PyObject *full = empty ? PyUnicode_Join(empty, lines) : NULL;
  PyObject *ast = full ? PyImport_ImportModule("ast") : NULL;
  PyObject *tree = ast ? PyObject_CallMethod(ast, "parse", "(O)", full) : NULL;
  if (!tree) PyErr_Clear(); /* no file or not parseable: no source */
  PyObject *node = tree ? find_lambda(ast, tree, code) : NULL;
  PyObject *body = node ? PyObject_GetAttrString(node, "body") : NULL;
  PyObject *segment = body ? PyObject_CallMethod(ast, "get_source_segment", "OO", full, body)
                           : NULL;
  PyObject *lineno = segment && segment != Py_None ? PyObject_GetAttrString(node, "lineno")
                                                   : NULL;
  PyObject *names = lineno ? PyObject_GetAttrString(code, "co_varnames") : NULL;
  PyObject *argc = names ? PyObject_GetAttrString(code, "co_argcount") : NULL;
  PyObject *params = argc ? PyTuple_GetSlice(names, 0, PyLong_AsSsize_t(argc)) : NULL;
  PyObject *comma = params ? PyUnicode_FromString(", ") : NULL;
  PyObject *joined = comma ? PyUnicode_Join(comma, params) : NULL;
  PyObject *text = joined ? PyUnicode_FromFormat("def " NBC__PY_LAMBDA_NAME "(%U):\n    return (%U)\n",
                                                 joined, segment)
                          : NULL;
  if (text) {
    *pline = (int)PyLong_AsLong(lineno) - 1;
    *pfile = Py_NewRef(file);
  }
  Py_XDECREF(joined);
  Py_XDECREF(comma);
  Py_XDECREF(params);
  Py_XDECREF(argc);
  Py_XDECREF(names);
  Py_XDECREF(lineno);
  Py_XDECREF(segment);
  Py_XDECREF(body);
  Py_XDECREF(node);
  Py_XDECREF(tree);
  Py_XDECREF(ast);
  Py_XDECREF(full);
  Py_XDECREF(empty);
  Py_XDECREF(lines);
  Py_XDECREF(linecache);
  Py_XDECREF(globals);
  Py_XDECREF(file);
  Py_XDECREF(code);
  return text;
}

/* inspect's "could not get source code" for f, replaced by an OSError saying why nbcuda
 * needs it and where none exists (the original is its __cause__). */
static void no_source_error(PyObject *f) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (tb && value) PyException_SetTraceback(value, tb);
  PyObject *code = PyObject_GetAttrString(f, "__code__");
  PyObject *file = code ? PyObject_GetAttrString(code, "co_filename") : NULL;
  PyErr_Clear();
  PyErr_Format(PyExc_OSError,
               "nbcuda compiles %R from its Python source, and there is none for it in %R: "
               "of functions made from strings, nbcuda knows the text of those made by the "
               "64 latest exec(), eval() or compile() calls since it was imported, and a "
               "function typed at an interactive prompt has none (define it in a file, or put "
               "its text in linecache under its file name as IPython does)",
               f, file ? file : Py_None);
  Py_XDECREF(file);
  Py_XDECREF(code);
  PyObject *t2, *v2, *tb2;
  PyErr_Fetch(&t2, &v2, &tb2);
  PyErr_NormalizeException(&t2, &v2, &tb2);
  if (v2 && value) PyException_SetCause(v2, Py_NewRef(value));
  PyErr_Restore(t2, v2, tb2);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
}

/* inspect.getsourcelines(f) for a function made by exec() or compile() of a string, from the
 * text nbcuda kept of it (exec_source.c): (the def's block, its first line), as inspect
 * gives it for a file; NULL with inspect's OSError left set when no text is known. */
static PyObject *exec_source_lines(PyObject *inspect, PyObject *f) {
  PyObject *code = PyObject_GetAttrString(f, "__code__");
  PyObject *first = code ? PyObject_GetAttrString(code, "co_firstlineno") : NULL;
  if (!first) {
    PyErr_Clear();
    PyErr_SetString(PyExc_OSError, "could not get source code");
    Py_XDECREF(code);
    return NULL;
  }
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyObject *all = nbc__py_exec_source_lines(code);
  Py_ssize_t line = PyLong_AsSsize_t(first);
  PyObject *rest = all && line >= 1 ? PyList_GetSlice(all, line - 1, PyList_GET_SIZE(all)) : NULL;
  PyObject *block = rest ? PyObject_CallMethod(inspect, "getblock", "(O)", rest) : NULL;
  PyObject *result = block ? PyTuple_Pack(2, block, first) : NULL;
  Py_XDECREF(block);
  Py_XDECREF(rest);
  Py_XDECREF(all);
  Py_DECREF(first);
  Py_DECREF(code);
  if (result || PyErr_Occurred()) {
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
  } else {
    PyErr_Restore(type, value, tb); /* none known: inspect's own error */
  }
  return result;
}

/* nbc__py_source_lines, *pkept set when the text is exec_source.c's (no file holds it). */
static PyObject *source_lines(PyObject *f, int *pkept) {
  PyObject *inspect = PyImport_ImportModule("inspect");
  PyObject *lines_lnum = inspect ? PyObject_CallMethod(inspect, "getsourcelines", "(O)", f) : NULL;
  *pkept = 0;
  if (!lines_lnum && inspect && PyErr_ExceptionMatches(PyExc_OSError)) {
    lines_lnum = exec_source_lines(inspect, f);
    *pkept = lines_lnum != NULL;
  }
  Py_XDECREF(inspect);
  return lines_lnum;
}

PyObject *nbc__py_source_lines(PyObject *f) {
  int kept;
  return source_lines(f, &kept);
}

/* The name f's def has in its source: its code's co_name (code generating functions may
 * rename one through __name__, as numba-cuda's test_ufuncs does). A new reference, or NULL
 * with an exception set. */
PyObject *nbc__py_source_name(PyObject *f) {
  PyObject *code = PyObject_GetAttrString(f, "__code__");
  PyObject *name = code ? PyObject_GetAttrString(code, "co_name") : NULL;
  Py_XDECREF(code);
  return name;
}

/* 0 when f's file still holds the code Python runs for f (or f has no file linecache knows),
 * -1 with an exception set: RuntimeError when the file was edited since Python compiled f,
 * because nbcuda compiles the text and would compile what the file says now, not what runs. */
static int source_unchanged(PyObject *f) {
  PyObject *code = PyObject_GetAttrString(f, "__code__");
  PyObject *file = code ? PyObject_GetAttrString(code, "co_filename") : NULL;
  PyObject *globals = file ? PyObject_GetAttrString(f, "__globals__") : NULL;
  PyObject *linecache = globals ? PyImport_ImportModule("linecache") : NULL;
  PyObject *checked = linecache ? PyObject_CallMethod(linecache, "checkcache", "(O)", file)
                                : NULL;
  PyObject *lines = checked ? PyObject_CallMethod(linecache, "getlines", "OO", file, globals)
                            : NULL;
  int current = lines ? nbc__py_source_is_current(code, lines) : -1;
  if (current == 0) {
    PyObject *qualname = PyObject_GetAttrString(f, "__qualname__");
    PyObject *first = qualname ? PyObject_GetAttrString(code, "co_firstlineno") : NULL;
    if (first)
      PyErr_Format(PyExc_RuntimeError,
                   "%U changed after Python compiled %U (line %S of the file then): nbcuda "
                   "compiles a function from its source text, and the file no longer holds "
                   "the code Python runs for it. Reload the module (importlib.reload) or "
                   "restart the interpreter so that both are the same",
                   file, qualname, first);
    Py_XDECREF(first);
    Py_XDECREF(qualname);
  }
  Py_XDECREF(lines);
  Py_XDECREF(checked);
  Py_XDECREF(linecache);
  Py_XDECREF(globals);
  Py_XDECREF(file);
  Py_XDECREF(code);
  return current > 0 ? 0 : -1;
}

int nbc__py_function_source(PyObject *keep, PyObject **ptextless, PyObject *f,
                            const char **ptext, int *pline, int *pcol, const char **pfile,
                            const char **pname) {
  if (source_unchanged(f) < 0) return -1;
  PyObject *fname = nbc__py_source_name(f);
  int is_lambda = fname && PyUnicode_Check(fname) &&
                  PyUnicode_CompareWithASCIIString(fname, "<lambda>") == 0;
  Py_XDECREF(fname);
  if (is_lambda) {
    int line = 0;
    PyObject *file = NULL, *def = lambda_as_def(f, &line, &file);
    if (file && PyList_Append(keep, def) == 0 && PyList_Append(keep, file) == 0) {
      *ptext = PyUnicode_AsUTF8(def);
      *pfile = PyUnicode_AsUTF8(file);
      *pname = NBC__PY_LAMBDA_NAME;
      *pline = line;
      *pcol = 0;
    }
    Py_XDECREF(def);
    Py_XDECREF(file);
    if (PyErr_Occurred()) return -1;
    if (file) return *ptext && *pfile ? 0 : -1;
    /* no source found: inspect's own error, below, says why */
  }
  int kept = 0;
  PyObject *lines_lnum = source_lines(f, &kept);
  if (!lines_lnum) {
    if (PyErr_ExceptionMatches(PyExc_OSError)) no_source_error(f);
    return -1;
  }
  if (kept && ((!*ptextless && !(*ptextless = PyList_New(0))) ||
               PyList_Append(*ptextless, f) < 0)) {
    Py_DECREF(lines_lnum);
    return -1;
  }
  PyObject *lines = PyTuple_GetItem(lines_lnum, 0);
  long first = PyLong_AsLong(PyTuple_GetItem(lines_lnum, 1));
  PyObject *empty = PyUnicode_FromString("");
  PyObject *joined = lines && empty ? PyUnicode_Join(empty, lines) : NULL;
  Py_XDECREF(empty);
  Py_DECREF(lines_lnum);
  if (!joined) return -1;
  Py_ssize_t n = 0;
  const char *src = PyUnicode_AsUTF8AndSize(joined, &n);
  if (!src) {
    Py_DECREF(joined);
    return -1;
  }
  /* The common indentation of non-blank lines. */
  int indent = -1;
  for (const char *p = src; *p;) {
    int w = 0;
    while (p[w] == ' ' || p[w] == '\t') w++;
    if (p[w] && p[w] != '\n' && p[w] != '#' && (indent < 0 || w < indent)) indent = w;
    const char *nl = strchr(p, '\n');
    p = nl ? nl + 1 : p + strlen(p);
  }
  if (indent < 0) indent = 0;
  char *out = malloc((size_t)n + 1), *o = out;
  if (!out) {
    Py_DECREF(joined);
    PyErr_NoMemory();
    return -1;
  }
  for (const char *p = src; *p;) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
    size_t skip = 0;
    while (skip < (size_t)indent && skip < len && (p[skip] == ' ' || p[skip] == '\t')) skip++;
    memcpy(o, p + skip, len - skip);
    o += len - skip;
    p += len;
  }
  *o = 0;
  PyObject *text = PyUnicode_FromStringAndSize(out, o - out);
  free(out);
  Py_DECREF(joined);
  PyObject *code = PyObject_GetAttrString(f, "__code__");
  PyObject *file = code ? PyObject_GetAttrString(code, "co_filename") : NULL;
  PyObject *name = nbc__py_source_name(f);
  Py_XDECREF(code);
  int rc = -1;
  if (text && file && name && PyList_Append(keep, text) == 0 &&
      PyList_Append(keep, file) == 0 && PyList_Append(keep, name) == 0) {
    *ptext = PyUnicode_AsUTF8(text);
    *pfile = PyUnicode_AsUTF8(file);
    *pname = PyUnicode_AsUTF8(name);
    *pline = (int)first;
    *pcol = indent;
    rc = *ptext && *pfile && *pname ? 0 : -1;
  }
  if (rc < 0 && !PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "function source unavailable");
  Py_XDECREF(text);
  Py_XDECREF(file);
  Py_XDECREF(name);
  return rc;
}

