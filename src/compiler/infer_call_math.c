/* infer_call_math.c — calls of the cmath and numpy modules' functions: cmath.<f> through the
 * embedded cmath source, numpy's ufuncs on scalars (numpy.c's loop typing) and over arrays
 * with an output array, complex ufuncs through numba's npyfuncs formulas, and numpy.dtype(x).
 * math.<f> is lib_math.c's.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/infer.h"

/* A ufunc on a complex number that numba computes with its npyfuncs formulas: a call of the
 * generated _np_<name> (numpy.c) for the number's type. */
static const nbc__type *call_complex_formula(infer *I, nbc__node *n, const char *ufunc,
                                             const nbc__type **types) {
  bool c64 = types[0]->kind == NBC__T_COMPLEX64;
  const char *src = nbc__numpy_complex_source(I->ctx, ufunc, c64);
  nbc__global *G = nbc__infer_call_method_generated_function(
      I, nbc__arena_printf(I->ctx->arena, "_np_%s", ufunc), src);
  return G ? nbc__infer_call_user_python(I, n, G, types, 1) : NULL;
}

/* A ufunc over arrays, as numba-cuda runs one in a kernel: with an explicit output array
 * (`np.sin(x, out)`, numpy's `out=` keyword too), which the call returns; numba's loop is
 * chosen by the inputs' element types and its result must cast to out's dtype as numpy's
 * 'same_kind' rule allows. The loops are numpy.c's generated function. Without an output the
 * call would allocate, which kernels cannot. */
static const nbc__type *call_ufunc_arrays(infer *I, nbc__node *n, const char *name, int nin,
                                          const nbc__type **types, int nargs) {
  char what[64];
  snprintf(what, sizeof what, "numpy.%s", name);
  int npos = nbc__infer_call_positional(n);
  if (npos < nargs) {
    nbc__node *kw = n->list.items[npos];
    if (strcmp(kw->str, "out") != 0 || npos != nin || nargs != nin + 1)
      return UNSUPPORTED(I, kw,
                         "%s(): keyword argument '%s' is not supported in kernels "
                         "(only out=, after the inputs)",
                         what, kw->str),
             NULL;
    n->list.items[npos] = kw->a; /* out= is the last positional argument */
  }
  if (nargs == nin)
    return UNSUPPORTED(I, n,
                       "%s() of arrays needs an output array in kernels, which cannot "
                       "allocate one: %s(..., out)",
                       what, what),
           NULL;
  if (nargs != nin + 1) return nbc__infer_call_arg_list_error(I, n, what, types, nargs);
  const nbc__type *out = types[nin];
  if (out->kind != NBC__T_ARRAY)
    return TYPING(I, n, "ufunc '%s' called with an explicit output that is not an array", name),
           NULL;
  if (out->readonly)
    return TYPING(I, n, "%s(): the output %s is read-only", what, nbc__infer_tname(I, out)),
           NULL;
  if (out->ndim < 1)
    return UNSUPPORTED(I, n, "%s(): a 0-d output array is not supported in kernels", what),
           NULL;
  const nbc__type *elems[8];
  for (int k = 0; k < nin; k++) {
    elems[k] = types[k]->kind == NBC__T_ARRAY ? types[k]->dtype : types[k];
    if (!elems[k] || !(nbc__type_is_number(elems[k]) || nbc__type_is_datetime(elems[k])))
      return nbc__infer_call_arg_list_error(I, n, what, types, nargs);
  }
  const nbc__type *loop = NULL;
  const char *why = NULL;
  const nbc__type *r = NULL;
  if (nin == 1 && nbc__type_is_complex(elems[0]) &&
      (nbc__numpy_complex_cmath(name) || nbc__numpy_complex_formula(name))) /* numba's */
    r = strncmp(name, "is", 2) == 0 ? T(NBC__T_BOOL) : elems[0];
  else
    r = nbc__type_numpy(name, elems, nin, &loop, &why);
  if (!r && why) return UNSUPPORTED(I, n, "%s: %s", what, why), NULL;
  if (!r || !nbc__type_is_number(out->dtype) || !nbc__numpy_same_kind(r, out->dtype))
    return TYPING(I, n,
                  "can't resolve ufunc %s for the types of %s (its %s result does not "
                  "cast to the output's %s under numpy's 'same_kind' rule)",
                  name, what, r ? nbc__infer_tname(I, r) : "missing",
                  nbc__infer_tname(I, out->dtype)),
           NULL;
  const char *src = nbc__numpy_ufunc_out_source(I->ctx, name, types, nin, out->ndim);
  nbc__global *G = nbc__infer_call_method_generated_function(I, "_ufunc", src);
  return G ? nbc__infer_call_user_python(I, n, G, types, nargs) : NULL;
}

/* numpy.<ufunc> on scalars: numba's loop typing (numpy.c); the call is recorded as the
 * builtin computing the same thing on the loop's type, each argument converted to it. */
const nbc__type *nbc__infer_call_math_numpy(infer *I, nbc__node *n, const char *name,
                                            const nbc__type **types, int nargs) {
  char what[64];
  snprintf(what, sizeof what, "numpy.%s", name);
  int nin = nbc__numpy_ufunc_nin(name);
  const char *canonical = nbc__numpy_ufunc(name);
  if (nargs == 1 && nin == 1 && nbc__type_is_complex(types[0]) &&
      nbc__infer_call_positional(n) == 1) {
    const char *cm = nbc__numpy_complex_cmath(canonical);
    if (cm) return nbc__infer_call_math_cmath(I, n, cm, types, 1);
    if (nbc__numpy_complex_formula(canonical))
      return call_complex_formula(I, n, canonical, types);
  }
  bool arrays = false;
  for (int i = 0; i < nargs; i++)
    arrays |= types[i]->kind == NBC__T_ARRAY;
  if (nin && (arrays || nargs == nin + 1))
    return call_ufunc_arrays(I, n, canonical, nin, types, nargs);
  if (!nbc__infer_call_no_keywords(I, n, what)) return NULL;
  const nbc__type *loop = NULL;
  const char *why = NULL;
  const nbc__type *r = nbc__type_numpy(name, types, nargs, &loop, &why);
  if (!r) {
    if (why) return UNSUPPORTED(I, n, "%s: %s", what, why), NULL;
    return nbc__infer_call_arg_list_error(I, n, what, types, nargs);
  }
  const char *math = NULL;
  nbc__builtin b = nbc__numpy_builtin(name, loop, &math);
  return nbc__infer_call_record_each(I, n, b, b == NBC__B_MATH ? math : name, nargs, loop, r);
}

/* numpy.dtype(x) as numba types it: x a string naming a type kernels have ("float32", "f4",
 * "<i8", "M8[D]") or a type (np.float32), giving that type as a value (a dtype argument of
 * cuda.local.array, a.view, a.astype...); it has no run-time value. */
const nbc__type *nbc__infer_call_math_np_dtype(infer *I, nbc__node *n) {
  if (!nbc__infer_call_no_keywords(I, n, "numpy.dtype")) return NULL;
  nbc__node *a = n->list.count == 1 ? n->list.items[0] : NULL;
  const nbc__type *arg = a && a->kind != NBC__N_STR ? nbc__infer_expr(I, a) : NULL;
  if (a && a->kind != NBC__N_STR && !arg) return NULL; /* reported */
  const nbc__type *t = !a                           ? NULL
                       : a->kind == NBC__N_STR      ? nbc__numpy_dtype_string(a->str)
                       : is_kind(arg, NBC__T_DTYPE) ? arg->dtype
                                                    : NULL;
  if (!t) {
    if (a && a->kind == NBC__N_STR)
      return TYPING(I, n,
                    "numpy.dtype('%s'): not a type kernels have (numbers, booleans and "
                    "datetime64/timedelta64 are)",
                    a->str ? a->str : ""),
             NULL;
    return TYPING(I, n,
                  "numpy.dtype() takes one string literal (\"float32\", \"f4\") or "
                  "type (np.float32)"),
           NULL;
  }
  return nbc__type_special(I->ctx, NBC__T_DTYPE, nbc__type_name(I->ctx, t), t);
}

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

/* cmath.<name>(...): numba-cuda's cmath (cmath.c). Its lowered functions have templates of
 * complex64 and complex128: the argument (a number) converts to complex64 when it is complex64
 * or no wider than float32, else to complex128, and the call goes to the embedded source's
 * _<name>__c64 / _<name>__c128, which return that type (isnan/isinf/isfinite: bool; log takes
 * an optional base of the same type). Its overloads (log10, cosh, sinh, tanh, acosh, phase,
 * polar) take a complex number as it is, rect two floats, and return what their bodies do. */
const nbc__type *nbc__infer_call_math_cmath(infer *I, nbc__node *n, const char *name,
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
