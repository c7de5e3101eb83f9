/* kernel_inspect.c — what a kernel's inspect_*() methods give (numba's Dispatcher and
 * _Kernel): the PTX or LTO-IR, the NVVM IR, SASS and its control-flow graph through nvdisasm,
 * the LTO-IR's PTX, and the typed source (inspect_types, _type_annotation), per overload or
 * as a dict over all of them. kernel.c holds the object and its compilation. */
#include "kernel.h"

#include <string.h>

/* The text one overload's inspect_*() gives; NULL with the error set. */
typedef PyObject *(*overload_text_fn)(nbc__py_state *st, KernelObject *ov);

/* A result's code as inspect_asm gives it: the PTX, or bytes of LTO-IR (jit(lto=True)). */
static PyObject *code_text(const nbc_compile_result_t *result, nbc_output_t output) {
  size_t size = 0;
  const char *code = nbc_compile_result_code(result, &size);
  if (output == NBC_OUTPUT_LTOIR) return PyBytes_FromStringAndSize(code, (Py_ssize_t)size);
  return PyUnicode_DecodeUTF8(code, (Py_ssize_t)size, "replace");
}

/* inspect_asm: the overload's code. */
static PyObject *asm_text(nbc__py_state *st, KernelObject *ov) {
  (void)st;
  return code_text(ov->result, ov->opts.output);
}

/* The overload compiled again with opts (its own, changed): what is not kept with its code.
 * NULL with an exception set. */
static nbc_compile_result_t *compile_again(nbc__py_state *st, KernelObject *ov,
                                           const nbc_compile_options_t *opts) {
  const char *sig = PyUnicode_AsUTF8(ov->sigtext);
  if (!sig) return NULL;
  nbc_compile_result_t *result = NULL;
  if (nbc__py_compile_function(st, ov->py_func, sig, opts, &result) < 0) return NULL;
  return result;
}

/* The overload compiled again, stopping before libNVVM (NBC_OUTPUT_NVVM_IR): its IR and
 * typed variables, which are not kept with the code. NULL with an exception set. */
static nbc_compile_result_t *compile_to_ir(nbc__py_state *st, KernelObject *ov) {
  nbc_compile_options_t opts = ov->opts;
  opts.output = NBC_OUTPUT_NVVM_IR;
  return compile_again(st, ov, &opts);
}

/* inspect_asm(cc): the overload's code compiled for compute capability major.minor (its own
 * when that is the one it was compiled for; nbcuda compiles kernels for the default PTX cc). */
static PyObject *asm_text_for_cc(nbc__py_state *st, KernelObject *ov, int major, int minor) {
  int have_major = ov->opts.cc_major, have_minor = ov->opts.cc_minor;
  if (!have_major && !have_minor) nbc_default_ptx_cc(&have_major, &have_minor);
  if (major == have_major && minor == have_minor && !ov->opts.cc_arch) return asm_text(st, ov);
  nbc_compile_options_t opts = ov->opts;
  opts.cc_major = major;
  opts.cc_minor = minor;
  opts.cc_arch = 0;
  nbc_compile_result_t *result = compile_again(st, ov, &opts);
  PyObject *text = result ? code_text(result, opts.output) : NULL;
  nbc_compile_result_destroy(result);
  return text;
}

/* inspect_llvm: the NVVM IR the compiler hands libNVVM for this overload. */
static PyObject *llvm_text(nbc__py_state *st, KernelObject *ov) {
  nbc_compile_result_t *result = compile_to_ir(st, ov);
  if (!result) return NULL;
  size_t size = 0;
  const char *ir = nbc_compile_result_code(result, &size);
  PyObject *text = PyUnicode_DecodeUTF8(ir, (Py_ssize_t)size, "replace");
  nbc_compile_result_destroy(result);
  return text;
}

/* nvdisasm's output (flag -gi or -cfg) for the overload's code linked (with its link files)
 * for the current device, as the launch would load it. */
static PyObject *disassembled(nbc__py_state *st, KernelObject *ov, const char *flag) {
  size_t size = 0;
  const char *code = nbc_compile_result_code(ov->result, &size);
  nbc_module_load_options_t load = {.max_registers = ov->max_registers,
                                    .cudadevrt = ov->cooperative,
                                    .fp16 = ov->fp16};
  PyObject *cubin =
      nbc__py_link_cubin(st, code, size, ov->opts.output == NBC_OUTPUT_LTOIR, ov->links, &load);
  PyObject *listing = cubin ? nbc__py_disassemble(st, cubin, flag) : NULL;
  Py_XDECREF(cubin);
  return listing;
}

/* inspect_sass: the listing, with line info. */
static PyObject *sass_text(nbc__py_state *st, KernelObject *ov) {
  return disassembled(st, ov, "-gi");
}

/* inspect_sass_cfg: the control flow graph, in DOT. */
static PyObject *sass_cfg_text(nbc__py_state *st, KernelObject *ov) {
  return disassembled(st, ov, "-cfg");
}

/* numba's inspect_*(signature=None): fn's text for the overload of that signature (KeyError
 * when there is none), else a dict argument types -> text over the overloads compiled so far —
 * a kernel jitted for one signature too (numba-cuda 0.30's CUDADispatcher answers so). */
static PyObject *inspect_overloads(KernelObject *self, PyObject *args, PyObject *kwargs,
                                   const char *format, overload_text_fn fn) {
  static char *kwlist[] = {"signature", NULL};
  PyObject *sig = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, kwlist, &sig)) return NULL;
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  /* numba's _Kernel.inspect_asm(cc) of an overload: a compute capability, (9, 0): the code
   * compiled for it */
  int cc = self->result && PyTuple_Check(sig) && PyTuple_GET_SIZE(sig) == 2;
  for (Py_ssize_t i = 0; cc && i < PyTuple_GET_SIZE(sig); i++)
    cc = PyLong_CheckExact(PyTuple_GET_ITEM(sig, i));
  if (cc && fn == asm_text) {
    int major, minor;
    if (PyArg_ParseTuple(sig, "ii:inspect_asm", &major, &minor) == 0) return NULL;
    return asm_text_for_cc(st, self, major, minor);
  }
  /* an overload of a dispatcher (numba's _Kernel: d.overloads[sig]) has one text */
  if (cc || (sig == Py_None && self->overload && self->result)) return fn(st, self);
  if (sig != Py_None) {
    PyObject *key = nbc__py_kernel_key(st, sig);
    PyObject *found = key ? nbc__py_kernel_overload_of(st, self, key) : NULL;
    PyObject *r = NULL;
    if (found && ((KernelObject *)found)->result) {
      r = fn(st, (KernelObject *)found);
    } else if (key && !PyErr_Occurred()) {
      nbc__py_key_error(sig);
    }
    Py_XDECREF(found);
    Py_XDECREF(key);
    return r;
  }
  /* keyed as numba's: each overload's tuple of argument types (one signature: still a
   * dict, as numba-cuda 0.30's) */
  PyObject *all = nbc__py_kernel_overload_list(self), *d = all ? nbc__py_types_dict_new(st) : NULL;
  for (Py_ssize_t i = 0; d && i < PyList_GET_SIZE(all); i++) {
    KernelObject *ov = (KernelObject *)PyList_GET_ITEM(all, i);
    if (!ov->result) continue;
    PyObject *key = nbc__py_kernel_argtypes(st, ov);
    PyObject *text = key ? fn(st, ov) : NULL;
    if (!text || PyDict_SetItem(d, key, text) < 0) Py_CLEAR(d);
    Py_XDECREF(key);
    Py_XDECREF(text);
  }
  Py_XDECREF(all);
  return d;
}

/* inspect_lto_ptx: the PTX nvJitLink makes of a jit(lto=True) overload's LTO-IR (with its
 * link files) for the current device, as numba-cuda's inspect_lto_ptx; RuntimeError without
 * lto, as numba's. */
static PyObject *lto_ptx_text(nbc__py_state *st, KernelObject *ov) {
  if (ov->opts.output != NBC_OUTPUT_LTOIR) {
    PyErr_SetString(PyExc_RuntimeError, "LTO is not enabled");
    return NULL;
  }
  size_t size = 0;
  const char *code = nbc_compile_result_code(ov->result, &size);
  nbc_module_load_options_t load = {.max_registers = ov->max_registers,
                                    .cudadevrt = ov->cooperative,
                                    .fp16 = ov->fp16};
  return nbc__py_link_ptx(st, code, size, 1, ov->links, &load);
}

/* A type object for numba's text of a type: a scalar's own object, an array of one (0-d too)
 * as int32[:, ::1] or types.Array make it, anything else an object that prints the text. */
static PyObject *type_of_text(nbc__py_state *st, const char *text) {
  char dtype[64], layout = 0;
  int ndim = 0, used = 0;
  if (sscanf(text, "array(%63[a-z0-9], %dd, %c)%n", dtype, &ndim, &layout, &used) == 3 &&
      text[used] == 0 && ndim >= 0 && ndim <= NBC__PY_MAXDIM &&
      (layout == 'C' || layout == 'F' || layout == 'A')) {
    PyObject *scalar = PyDict_GetItemString(st->types, dtype);
    PyObject *array = scalar ? nbc__py_array_of(st, scalar, ndim, layout) : NULL;
    if (array || PyErr_Occurred()) return array;
  }
  return nbc__py_type_from_name(st, text);
}

/* numba's typemap of an overload: {variable name: type}, its parameters first. A kernel
 * whose code came from the disk cache is compiled again (to NVVM IR) to type it. */
static PyObject *typemap_of(nbc__py_state *st, KernelObject *ov) {
  nbc_compile_result_t *again = NULL;
  const nbc_compile_result_t *r = ov->result;
  if (r && nbc_compile_result_variable_count(r) == 0 && ov->sigtext) {
    if (!(again = compile_to_ir(st, ov))) return NULL;
    r = again;
  }
  PyObject *d = PyDict_New();
  for (int i = 0; d && i < nbc_compile_result_variable_count(r); i++) {
    const char *type = NULL, *name = nbc_compile_result_variable(r, i, &type);
    PyObject *t = type_of_text(st, type);
    if (!t || PyDict_SetItemString(d, name, t) < 0) Py_CLEAR(d);
    Py_XDECREF(t);
  }
  nbc_compile_result_destroy(again);
  return d;
}

/* numba's overload._type_annotation: an object whose typemap is typemap_of's dict, with
 * the overload's signature; None for a kernel not compiled yet. */
PyObject *nbc__py_kernel_type_annotation(KernelObject *self, void *c) {
  (void)c;
  if (!self->result) Py_RETURN_NONE;
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  PyObject *typemap = typemap_of(st, self);
  PyObject *r = typemap ? nbc__py_namespace(Py_BuildValue("{sOsO}", "typemap", typemap,
                                                          "signature", self->sigtext))
                        : NULL;
  Py_XDECREF(typemap);
  return r;
}

/* inspect_types: the overload's function, signature, source (with its first line's number)
 * and the type of each of its variables, as text. */
static PyObject *types_text(nbc__py_state *st, KernelObject *ov) {
  PyObject *typemap = typemap_of(st, ov);
  /* the source as the compiler read it (a function made from a string included) */
  PyObject *lines = typemap ? nbc__py_source_lines(ov->py_func) : NULL;
  if (!lines && typemap) PyErr_Clear(); /* the typemap is still worth showing */
  PyObject *name = PyObject_GetAttrString(ov->py_func, "__qualname__");
  PyObject *code = name ? PyObject_GetAttrString(ov->py_func, "__code__") : NULL;
  PyObject *file = code ? PyObject_GetAttrString(code, "co_filename") : NULL;
  PyObject *rule = PyUnicode_FromString("--------------------------------------------------"
                                        "------------------------------\n");
  PyObject *out = file && rule && typemap
                      ? PyUnicode_FromFormat("%U %U\n%U# File: %U\n", name, ov->sigtext, rule,
                                             file)
                      : NULL;
  if (out && lines) {
    PyObject *empty = PyUnicode_FromString("");
    PyObject *src = empty ? PyUnicode_Join(empty, PyTuple_GET_ITEM(lines, 0)) : NULL;
    Py_XDECREF(empty);
    Py_SETREF(out, src ? PyUnicode_FromFormat("%U# --- LINE %S ---\n%U", out,
                                              PyTuple_GET_ITEM(lines, 1), src)
                       : NULL);
    Py_XDECREF(src);
  }
  if (out) Py_SETREF(out, PyUnicode_FromFormat("%U# --- variables ---\n", out));
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (out && typemap && PyDict_Next(typemap, &pos, &key, &value))
    Py_SETREF(out, PyUnicode_FromFormat("%U#   %U :: %S\n", out, key, value));
  if (out) Py_SETREF(out, PyUnicode_FromFormat("%U%U", out, rule));
  Py_XDECREF(rule);
  Py_XDECREF(file);
  Py_XDECREF(code);
  Py_XDECREF(name);
  Py_XDECREF(lines);
  Py_XDECREF(typemap);
  return out;
}

/* numba's inspect_types(file=None): each overload's types_text, written to file (a text
 * stream; sys.stdout by default). */
PyObject *nbc__py_kernel_inspect_types(KernelObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"file", "signature", NULL};
  PyObject *file = Py_None, *sig = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:inspect_types", kwlist, &file, &sig))
    return NULL;
  PyObject *pass = Py_BuildValue("(O)", sig);
  PyObject *texts = pass ? inspect_overloads(self, pass, NULL, "|O:inspect_types", types_text)
                         : NULL;
  Py_XDECREF(pass);
  if (!texts) return NULL;
  if (file == Py_None && !(file = PySys_GetObject("stdout"))) {
    Py_DECREF(texts);
    PyErr_SetString(PyExc_RuntimeError, "inspect_types: no sys.stdout");
    return NULL;
  }
  PyObject *all = PyDict_Check(texts) ? PyDict_Values(texts) : Py_BuildValue("[O]", texts);
  Py_DECREF(texts);
  for (Py_ssize_t i = 0; all && i < PyList_GET_SIZE(all); i++) {
    PyObject *r = PyObject_CallMethod(file, "write", "(O)", PyList_GET_ITEM(all, i));
    if (!r) Py_CLEAR(all);
    Py_XDECREF(r);
  }
  if (!all) return NULL;
  Py_DECREF(all);
  Py_RETURN_NONE;
}

PyObject *nbc__py_kernel_inspect_asm(KernelObject *self, PyObject *args, PyObject *kwargs) {
  return inspect_overloads(self, args, kwargs, "|O:inspect_asm", asm_text);
}
PyObject *nbc__py_kernel_inspect_llvm(KernelObject *self, PyObject *args, PyObject *kwargs) {
  return inspect_overloads(self, args, kwargs, "|O:inspect_llvm", llvm_text);
}
PyObject *nbc__py_kernel_inspect_sass(KernelObject *self, PyObject *args, PyObject *kwargs) {
  return inspect_overloads(self, args, kwargs, "|O:inspect_sass", sass_text);
}
PyObject *nbc__py_kernel_inspect_sass_cfg(KernelObject *self, PyObject *args,
                                         PyObject *kwargs) {
  return inspect_overloads(self, args, kwargs, "|O:inspect_sass_cfg", sass_cfg_text);
}
PyObject *nbc__py_kernel_inspect_lto_ptx(KernelObject *self, PyObject *args, PyObject *kwargs) {
  return inspect_overloads(self, args, kwargs, "|O:inspect_lto_ptx", lto_ptx_text);
}
