/* lib_cmath.c — the cmath namespace of the kernel language, as numba-cuda implements it: one
 * table of its functions (a row each with how numba types it) and the typing of a call.
 *
 * numba-cuda writes its cmath functions in Python (cpython/cmathimpl.py) and compiles them
 * into the kernel; nbcuda does the same with a port of that file, src/library/cmath.py, a
 * library kernel embedded at build time (nbc_library_kernel_source). nbc__cmath_call types a
 * call as numba's templates do (the argument converted to complex64 or complex128 for the lowered
 * functions, complex arguments only for the overloads) and calls the matching function of the
 * embedded source like any other Python function, so the results follow numba's algorithms
 * operation for operation.
 */
#include <stdio.h>
#include <string.h>

#include "compiler/infer.h"

static const struct {
  const char *name;
  nbc__cmath_kind kind;
} functions[] = {
    {"exp", NBC__CMATH_LOWERED},      {"log", NBC__CMATH_LOWERED},
    {"sqrt", NBC__CMATH_LOWERED},     {"cos", NBC__CMATH_LOWERED},
    {"sin", NBC__CMATH_LOWERED},      {"tan", NBC__CMATH_LOWERED},
    {"acos", NBC__CMATH_LOWERED},     {"asin", NBC__CMATH_LOWERED},
    {"atan", NBC__CMATH_LOWERED},     {"asinh", NBC__CMATH_LOWERED},
    {"atanh", NBC__CMATH_LOWERED},    {"isnan", NBC__CMATH_PREDICATE},
    {"isinf", NBC__CMATH_PREDICATE},  {"isfinite", NBC__CMATH_PREDICATE},
    {"log10", NBC__CMATH_OVERLOAD},   {"cosh", NBC__CMATH_OVERLOAD},
    {"sinh", NBC__CMATH_OVERLOAD},    {"tanh", NBC__CMATH_OVERLOAD},
    {"acosh", NBC__CMATH_OVERLOAD},   {"phase", NBC__CMATH_OVERLOAD},
    {"polar", NBC__CMATH_OVERLOAD},   {"rect", NBC__CMATH_RECT},
};

nbc__cmath_kind nbc__cmath_find(const char *name) {
  for (size_t i = 0; name && i < sizeof functions / sizeof functions[0]; i++)
    if (strcmp(functions[i].name, name) == 0) return functions[i].kind;
  return NBC__CMATH_NONE;
}

const char *nbc__cmath_source(void) { return nbc_library_kernel_source("cmath", NULL); }

static bool narrow_complex(const nbc__type *t) {
  switch (t->kind) {
  case NBC__T_COMPLEX64:
  case NBC__T_FLOAT32:
  case NBC__T_FLOAT16:
  case NBC__T_BOOL:
  case NBC__T_INT8:
  case NBC__T_UINT8:
  case NBC__T_INT16:
  case NBC__T_UINT16:
    return true;
  default:
    return false;
  }
}

/* cmath.<name>(...): numba-cuda's cmath, the embedded source above. Its lowered functions have
 * templates of complex64 and complex128: the argument (a number) converts to complex64 when it
 * is complex64 or no wider than float32, else to complex128, and the call goes to the embedded
 * source's _<name>__c64 / _<name>__c128, which return that type (isnan/isinf/isfinite: bool;
 * log takes an optional base of the same type). Its overloads (log10, cosh, sinh, tanh, acosh, phase,
 * polar) take a complex number as it is, rect two floats, and return what their bodies do. */
const nbc__type *nbc__cmath_call(infer *I, nbc__node *n, const char *name,
                                 const nbc__type **types, int nargs) {
  char what[64], fn[64];
  snprintf(what, sizeof what, "cmath.%s", name);
  if (!nbc__infer_call_no_keywords(I, n, what)) return NULL;
  nbc__cmath_kind kind = nbc__cmath_find(name);
  const nbc__type *argv[2] = {NULL, NULL};
  if (kind == NBC__CMATH_RECT) {
    if (nargs != 2 || !nbc__type_is_float(types[0]) || !nbc__type_is_float(types[1]))
      return nbc__infer_call_arg_list_error(I, n, what, types, nargs);
    snprintf(fn, sizeof fn, "_rect_impl");
    argv[0] = types[0];
    argv[1] = types[1];
  } else if (kind == NBC__CMATH_OVERLOAD) {
    if (nargs != 1 || !nbc__type_is_complex(types[0]))
      return nbc__infer_call_arg_list_error(I, n, what, types, nargs);
    snprintf(fn, sizeof fn, "_%s_impl", name);
    argv[0] = types[0];
  } else {
    bool base = strcmp(name, "log") == 0 && nargs == 2;
    if ((nargs != 1 && !base) || !nbc__type_is_number(types[0]) ||
        (base && !nbc__type_is_number(types[1])))
      return nbc__infer_call_arg_list_error(I, n, what, types, nargs);
    bool c64 = narrow_complex(types[0]) && (!base || narrow_complex(types[1]));
    const nbc__type *ct = T(c64 ? NBC__T_COMPLEX64 : NBC__T_COMPLEX128);
    argv[0] = argv[1] = ct;
    for (int i = 0; i < nargs; i++)
      nbc__infer_cast(n->list.items[i], ct);
    if (kind == NBC__CMATH_PREDICATE)
      snprintf(fn, sizeof fn, "_%s_impl", name);
    else
      snprintf(fn, sizeof fn, "_%s__%s", base ? "log_base" : name, c64 ? "c64" : "c128");
  }
  nbc__global *G = nbc__infer_alloc(I, sizeof *G);
  if (!G) return NULL;
  memset(G, 0, sizeof *G);
  G->g.kind = NBC_GLOBAL_FUNCTION;
  G->g.name = nbc__arena_strdup(I->ctx->arena, fn);
  G->g.source = nbc__cmath_source();
  G->g.filename = NBC__CMATH_FILE;
  G->g.first_line = 1;
  G->g.resolver = &nbc__infer_call_own_names;
  if (!G->g.name) return NULL;
  return nbc__infer_call_user_python(I, n, G, argv, nargs);
}
