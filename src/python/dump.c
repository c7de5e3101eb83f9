/* dump.c — numba's DUMP_LLVM and DUMP_ASSEMBLY (NUMBA_DUMP_LLVM=1, NUMBA_DUMP_ASSEMBLY=1, or
 * nbcuda.config.DUMP_LLVM / DUMP_ASSEMBLY set at run time): each compilation prints the NVVM
 * IR it hands libNVVM and the PTX libNVVM makes to sys.stdout, as numba-cuda prints them:
 *
 *   ----------------------------LLVM DUMP simple_cuda-----------------------------
 *   <the IR>
 *   ================================================================================
 *   ------------------------------ASSEMBLY simple_cuda------------------------------
 *   <the PTX>
 *   ================================================================================
 *
 * The IR is the one the PTX was made from (the compiler keeps it, keep_ir: no second
 * compile). LTO-IR output prints no assembly (it is not text; numba prints its PTX only at
 * link time). A compilation served by the disk cache prints nothing, as in numba. */
#include "nbcuda_py.h"

#include <string.h>

nbc_compile_options_t nbc__py_dump_options(nbc__py_state *st, const nbc_compile_options_t *o) {
  nbc_compile_options_t opts = *o;
  if (o->output != NBC_OUTPUT_NVVM_IR && nbc__py_config_on(st, "DUMP_LLVM")) opts.keep_ir = 1;
  opts.warn_uninit = nbc__py_config_on(st, "ALWAYS_WARN_UNINIT_VAR"); /* numba's switch */
  return opts;
}

/* One dump: the title centred in a rule of '-', the text without trailing blanks or NULs
 * (libNVVM pads its PTX), a rule of '='. */
static int print_dump(PyObject *out, const char *title, PyObject *name, const char *text,
                      size_t size) {
  while (size && (text[size - 1] == '\0' || text[size - 1] == '\n' || text[size - 1] == ' '))
    size--;
  PyObject *head = PyUnicode_FromFormat("%s %U", title, name);
  PyObject *rule = head ? PyObject_CallMethod(head, "center", "is", 80, "-") : NULL;
  PyObject *body = PyUnicode_DecodeUTF8(text, (Py_ssize_t)size, "replace");
  int rc = rule && body && PyFile_WriteObject(rule, out, Py_PRINT_RAW) == 0 &&
                   PyFile_WriteString("\n", out) == 0 &&
                   PyFile_WriteObject(body, out, Py_PRINT_RAW) == 0 &&
                   PyFile_WriteString("\n", out) == 0 &&
                   PyFile_WriteString("================================================"
                                      "================================\n",
                                      out) == 0
               ? 0
               : -1;
  Py_XDECREF(head);
  Py_XDECREF(rule);
  Py_XDECREF(body);
  return rc;
}

int nbc__py_dump_compiled(nbc__py_state *st, PyObject *func, const nbc_compile_options_t *o,
                          const nbc_compile_result_t *result) {
  if (o->output == NBC_OUTPUT_NVVM_IR) return 0;
  size_t ir_size = 0;
  const char *ir = nbc_compile_result_ir(result, &ir_size);
  int want_asm = o->output == NBC_OUTPUT_PTX && nbc__py_config_on(st, "DUMP_ASSEMBLY");
  if (!ir && !want_asm) return 0;
  PyObject *out = PySys_GetObject("stdout"); /* borrowed */
  if (!out || out == Py_None) return 0;
  Py_INCREF(out);
  PyObject *name = PyObject_GetAttrString(func, "__qualname__");
  if (!name || !PyUnicode_Check(name)) {
    Py_XDECREF(name);
    PyErr_Clear();
    name = PyObject_Str(func);
  }
  int rc = name ? 0 : -1;
  if (rc == 0 && ir) rc = print_dump(out, "LLVM DUMP", name, ir, ir_size);
  if (rc == 0 && want_asm) {
    size_t size = 0;
    const char *code = nbc_compile_result_code(result, &size);
    rc = print_dump(out, "ASSEMBLY", name, code, size);
  }
  Py_XDECREF(name);
  Py_DECREF(out);
  return rc;
}
