/* cmath.c — the cmath module in kernels, as numba-cuda implements it.
 *
 * numba-cuda writes its cmath functions in Python (cpython/cmathimpl.py) and compiles them
 * into the kernel; nbcuda does the same with a port of that file, src/library/cmath.py, a
 * library kernel embedded at build time (nbc_library_kernel_source). infer_call.c's call_cmath types a call as
 * numba's templates do (the argument converted to complex64 or complex128 for the lowered
 * functions, complex arguments only for the overloads) and calls the matching function of the
 * embedded source like any other Python function, so the results follow numba's algorithms
 * operation for operation.
 */
#include <string.h>

#include "compiler/compiler.h"

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
