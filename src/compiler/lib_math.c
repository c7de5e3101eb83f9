/* lib_math.c — the math namespace of the kernel language: one table of its functions, and
 * the typing and lowering of each side by side.
 *
 * A row of MATH_FUNCTIONS below names a function, numba-cuda's typing template for it
 * (cudamath.py: the concrete signatures overload resolution chooses from, one or two
 * arguments), the cuda_fp16.h and cuda_bf16.h functions numba-cuda's fp16.py and bf16.py
 * overload it with for a float16 or bfloat16 argument, and its lowering function with the
 * libdevice name it calls (numba-cuda's mathimpl: __nv_<base>f for float32, __nv_<base> for
 * float64, __nv_fast_<base>f under fastmath where libdevice has one). Every reader takes what
 * exists from the table:
 *  - infer_expr.c and infer_global.c accept math.<name> when nbc__math_exists(name);
 *  - infer_call.c types a call through nbc__lib_math_call, which records an NBC__B_MATH call
 *    whose arguments convert to the chosen signature's (numpy's scalar ufuncs record their
 *    math function so too, lib_numpy.c);
 *  - lower_call.c lowers an NBC__B_MATH call through nbc__lib_math_lower, the row's function.
 * Adding a function is a row and, when no lowering here fits it, one function in this file.
 * math's float constants (pi, e, tau, inf, nan) are resolve.c's, since cmath has them too.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compiler/infer.h"
#include "compiler/lower.h"

/* ================================================================== the templates ==== */

#define C1(r, x)                                                                               \
  { NBC__T_##r, NBC__T_##x, NBC__T_VOID }
#define C2(r, x, y)                                                                            \
  { NBC__T_##r, NBC__T_##x, NBC__T_##y }
static const nbc__type_case unary_fp16[] = {C1(FLOAT64, INT64), C1(FLOAT64, UINT64),
                                            C1(FLOAT32, FLOAT32), C1(FLOAT64, FLOAT64),
                                            C1(FLOAT16, FLOAT16)};
static const nbc__type_case unary[] = {C1(FLOAT64, INT64), C1(FLOAT64, UINT64),
                                       C1(FLOAT32, FLOAT32), C1(FLOAT64, FLOAT64)};
static const nbc__type_case pred[] = {C1(BOOL, INT64), C1(BOOL, UINT64), C1(BOOL, FLOAT32),
                                      C1(BOOL, FLOAT64)};
static const nbc__type_case binary_int[] = {
    C2(FLOAT64, INT64, INT64), C2(FLOAT64, UINT64, UINT64), C2(FLOAT32, FLOAT32, FLOAT32),
    C2(FLOAT64, FLOAT64, FLOAT64)};
static const nbc__type_case binary[] = {C2(FLOAT32, FLOAT32, FLOAT32),
                                        C2(FLOAT64, FLOAT64, FLOAT64)};
static const nbc__type_case pow_[] = {C2(FLOAT32, FLOAT32, FLOAT32),
                                      C2(FLOAT64, FLOAT64, FLOAT64),
                                      C2(FLOAT32, FLOAT32, INT32), C2(FLOAT64, FLOAT64, INT32)};
static const nbc__type_case ldexp_[] = {C2(FLOAT32, FLOAT32, INT32),
                                        C2(FLOAT64, FLOAT64, INT32)};
/* frexp and modf: ret holds the argument kind; the tuple is nbc__type_math's. */
static const nbc__type_case frexp_[] = {C1(FLOAT32, FLOAT32), C1(FLOAT64, FLOAT64)};
static const nbc__type_case modf_[] = {C1(FLOAT64, FLOAT64), C1(FLOAT32, FLOAT32)};
#undef C1
#undef C2

/* ================================================================== the lowerings ==== */

struct math_fn;
/* Lowers the call of f with its arguments args[0..na) in the float type ft they compute in,
 * or returns a value whose v is NULL when na is not the function's arity. */
typedef nbc__lval lower_fn(nbc__lowerer *L, const struct math_fn *f, const nbc__call *call,
                           const nbc__lval *args, int na, const nbc__type *ft);

static lower_fn lower_unary, lower_tanh, lower_binary, lower_pow, lower_pred, lower_finite,
    lower_frexp, lower_modf, lower_radians, lower_degrees, lower_ldexp;

/* ===================================================================== the table ==== */

/* The math module's functions:
 *   F(name, template, fp16, bf16, lower, base, base64)
 * template the typing cases above; fp16 / bf16 the cuda_fp16.h / cuda_bf16.h function of a
 * float16 / bfloat16 argument (NULL: none; a bfloat16 argument then computes in float32);
 * lower this file's lowering; base the libdevice name (__nv_<base>f for float32), base64 the
 * float64 one when it is not __nv_<base>. */
#define MATH_FUNCTIONS(F)                                                                      \
  F("ceil", unary_fp16, "hceil", "hceil", lower_unary, "ceil", NULL)                           \
  F("cos", unary_fp16, "hcos", "hcos", lower_unary, "cos", NULL)                               \
  F("exp", unary_fp16, "hexp", "hexp", lower_unary, "exp", NULL)                               \
  F("floor", unary_fp16, "hfloor", "hfloor", lower_unary, "floor", NULL)                       \
  F("log", unary_fp16, "hlog", "hlog", lower_unary, "log", NULL)                               \
  F("log10", unary_fp16, "hlog10", "hlog10", lower_unary, "log10", NULL)                       \
  F("sin", unary_fp16, "hsin", "hsin", lower_unary, "sin", NULL)                               \
  F("sqrt", unary_fp16, "hsqrt", "hsqrt", lower_unary, "sqrt", NULL)                           \
  F("trunc", unary_fp16, "htrunc", "htrunc", lower_unary, "trunc", NULL)                       \
  F("exp2", unary_fp16, "hexp2", "hexp2", lower_unary, "exp2", NULL)                           \
  F("fabs", unary_fp16, "habs", NULL, lower_unary, "fabs", NULL)                               \
  F("log2", unary_fp16, "hlog2", NULL, lower_unary, "log2", NULL)                              \
  F("acos", unary, NULL, NULL, lower_unary, "acos", NULL)                                      \
  F("acosh", unary, NULL, NULL, lower_unary, "acosh", NULL)                                    \
  F("asin", unary, NULL, NULL, lower_unary, "asin", NULL)                                      \
  F("asinh", unary, NULL, NULL, lower_unary, "asinh", NULL)                                    \
  F("atan", unary, NULL, NULL, lower_unary, "atan", NULL)                                      \
  F("atanh", unary, NULL, NULL, lower_unary, "atanh", NULL)                                    \
  F("cosh", unary, NULL, NULL, lower_unary, "cosh", NULL)                                      \
  F("degrees", unary, NULL, NULL, lower_degrees, NULL, NULL)                                   \
  F("erf", unary, NULL, NULL, lower_unary, "erf", NULL)                                        \
  F("erfc", unary, NULL, NULL, lower_unary, "erfc", NULL)                                      \
  F("expm1", unary, NULL, NULL, lower_unary, "expm1", NULL)                                    \
  F("gamma", unary, NULL, NULL, lower_unary, "tgamma", NULL)                                   \
  F("lgamma", unary, NULL, NULL, lower_unary, "lgamma", NULL)                                  \
  F("log1p", unary, NULL, NULL, lower_unary, "log1p", NULL)                                    \
  F("radians", unary, NULL, NULL, lower_radians, NULL, NULL)                                   \
  F("sinh", unary, NULL, NULL, lower_unary, "sinh", NULL)                                      \
  F("tan", unary, NULL, NULL, lower_unary, "tan", NULL)                                        \
  F("tanh", unary, "htanh", "htanh", lower_tanh, "tanh", NULL)                                 \
  F("isnan", pred, NULL, NULL, lower_pred, "isnan", "isnand")                                  \
  F("isinf", pred, NULL, NULL, lower_pred, "isinf", "isinfd")                                  \
  F("isfinite", pred, NULL, NULL, lower_finite, "finite", "isfinited")                         \
  F("atan2", binary_int, NULL, NULL, lower_binary, "atan2", NULL)                              \
  F("hypot", binary_int, NULL, NULL, lower_binary, "hypot", NULL)                              \
  F("copysign", binary, NULL, NULL, lower_binary, "copysign", NULL)                            \
  F("fmod", binary, NULL, NULL, lower_binary, "fmod", NULL)                                    \
  F("nextafter", binary, NULL, NULL, lower_binary, "nextafter", NULL)                          \
  F("remainder", binary, NULL, NULL, lower_binary, "remainder", NULL)                          \
  F("pow", pow_, NULL, NULL, lower_pow, "pow", NULL)                                           \
  F("ldexp", ldexp_, NULL, NULL, lower_ldexp, "ldexp", NULL)                                   \
  F("frexp", frexp_, NULL, NULL, lower_frexp, "frexp", NULL)                                   \
  F("modf", modf_, NULL, NULL, lower_modf, "modf", NULL)

static const struct math_fn {
  const char *name;
  const nbc__type_case *cases;
  int ncases;
  const char *fp16, *bf16;
  lower_fn *lower;
  const char *base, *base64;
} math_fns[] = {
#define ROW_(name, cases, fp16, bf16, lower, base, base64)                                     \
  {name, cases, (int)(sizeof cases / sizeof *cases), fp16, bf16, lower, base, base64},
    MATH_FUNCTIONS(ROW_)
#undef ROW_
};

static const struct math_fn *math_find(const char *name) {
  for (size_t i = 0; name && i < sizeof math_fns / sizeof math_fns[0]; i++)
    if (strcmp(math_fns[i].name, name) == 0) return &math_fns[i];
  return NULL;
}

static int arity(const struct math_fn *f) { return f->cases[0].b == NBC__T_VOID ? 1 : 2; }

/* ======================================================================= typing ==== */

bool nbc__math_exists(const char *name) { return math_find(name) != NULL; }

const nbc__type *nbc__type_math(const char *name, const nbc__type *const *args, int nargs,
                                const nbc__type **pargs, const char **pwhy) {
  const nbc__type *argbuf[2];
  if (!pargs) pargs = argbuf;
  if (pwhy) *pwhy = NULL;
  const struct math_fn *f = math_find(name);
  if (!f) {
    if (pwhy) *pwhy = "unknown math function";
    return NULL;
  }
  int want = arity(f);
  if (nargs != want) {
    if (pwhy) *pwhy = want == 1 ? "takes exactly one argument" : "takes exactly two arguments";
    return NULL;
  }
  const nbc__type *r = nbc__type_resolve_cases(f->cases, f->ncases, args, nargs, true, pargs);
  if (!r) {
    if (pwhy) *pwhy = "no matching definition for the argument types";
    return NULL;
  }
  if (f->lower == lower_frexp) return nbc__type_frexp_result(r);
  if (f->lower == lower_modf) return nbc__type_modf_result(r);
  return r;
}

const nbc__type *nbc__lib_math_call(infer *I, nbc__node *n, const char *name,
                                    const nbc__type **types, int nargs) {
  if (!nbc__infer_call_no_keywords(I, n, name)) return NULL;
  const struct math_fn *f = nargs == 1 ? math_find(name) : NULL;
  const char *hname = f && types[0] && types[0]->kind == NBC__T_FLOAT16 ? f->fp16 : NULL;
  const nbc__type *hret, *hparams[4];
  int hn = 0;
  const char *symbol;
  /* numba-cuda's bf16.py overloads (hsqrt...); its other math functions take its float32 */
  bool bf16 = nargs == 1 && nbc__type_is_bf16(types[0]);
  const char *bname = bf16 && f ? f->bf16 : NULL;
  bool wrapped = bname ? nbc__bf16_find(I->ctx, bname, &hret, hparams, &hn, &symbol)
                       : hname && nbc__fp16_find(I->ctx, hname, &hret, hparams, &hn, &symbol);
  if (bf16 && !wrapped) types[0] = T(NBC__T_FLOAT32);
  if (wrapped && hn == 1)
    return nbc__infer_call_record(I, n, NBC__B_EXTERN, symbol, 1, hparams, hret);
  const nbc__type *conv[2];
  const char *why;
  const nbc__type *r = nargs <= 2 ? nbc__type_math(name, types, nargs, conv, &why) : NULL;
  if (!r) {
    char what[64];
    snprintf(what, sizeof what, "math.%s", name);
    return nbc__infer_call_arg_list_error(I, n, what, types, nargs);
  }
  return nbc__infer_call_record(I, n, NBC__B_MATH, name, nargs, conv, r);
}

/* ===================================================================== lowering ==== */

static nbc__lval not_this_arity(const nbc__type *ft) { return (nbc__lval){ft, NULL}; }

static nbc__lval lower_unary(nbc__lowerer *L, const struct math_fn *f, const nbc__call *call,
                             const nbc__lval *args, int na, const nbc__type *ft) {
  (void)call;
  if (na != 1) return not_this_arity(ft);
  nbc__lval a = nbc__lower_convert(L, args[0], ft);
  return (nbc__lval){ft, nbc__lower_call1(L, ltype(L, ft),
                                          nbc__lower_libdevice_name(L, f->base, ft), a.v)};
}

/* Under fastmath a float32 tanh is PTX's tanh.approx.f32 (numba-cuda's fastmath tanh). */
static nbc__lval lower_tanh(nbc__lowerer *L, const struct math_fn *f, const nbc__call *call,
                            const nbc__lval *args, int na, const nbc__type *ft) {
  if (na != 1 || !L->ctx->options->fastmath || ft->kind != NBC__T_FLOAT32)
    return lower_unary(L, f, call, args, na, ft);
  nbc__lval a = nbc__lower_convert(L, args[0], ft);
  const char *x = tmp(L);
  EMIT("%s = call float asm \"tanh.approx.f32 $0, $1;\", \"=f,f\"(float %s)", x, a.v);
  return (nbc__lval){ft, x};
}

static nbc__lval lower_binary(nbc__lowerer *L, const struct math_fn *f, const nbc__call *call,
                              const nbc__lval *args, int na, const nbc__type *ft) {
  (void)call;
  if (na != 2) return not_this_arity(ft);
  nbc__lval a = nbc__lower_convert(L, args[0], ft), b = nbc__lower_convert(L, args[1], ft);
  return (nbc__lval){ft, nbc__lower_call2(L, ltype(L, ft),
                                          nbc__lower_libdevice_name(L, f->base, ft), a.v, b.v)};
}

/* pow with an int32 exponent is libdevice's powi. */
static nbc__lval lower_pow(nbc__lowerer *L, const struct math_fn *f, const nbc__call *call,
                           const nbc__lval *args, int na, const nbc__type *ft) {
  if (na != 2 || args[1].type->kind != NBC__T_INT32)
    return lower_binary(L, f, call, args, na, ft);
  bool f32 = ft->kind == NBC__T_FLOAT32;
  const char *ty = ltype(L, ft);
  nbc__lval a = nbc__lower_convert(L, args[0], ft);
  return (nbc__lval){
      ft, nbc__lower_call_fn(L, ty, f32 ? "__nv_powif" : "__nv_powi",
                             nbc__arena_printf(L->arena, "%s, i32", ty),
                             nbc__arena_printf(L->arena, "%s %s, i32 %s", ty, a.v, args[1].v))};
}

/* isnan/isinf/isfinite: libdevice's i32 answer as a bool; of an integer, of_int (an
 * integer is never NaN or infinite). */
static nbc__lval predicate(nbc__lowerer *L, const struct math_fn *f, const nbc__lval *args,
                           int na, const nbc__type *ft, const char *of_int) {
  if (na != 1) return not_this_arity(ft);
  if (!is_float(args[0].type)) return (nbc__lval){T(NBC__T_BOOL), of_int};
  bool f32 = ft->kind == NBC__T_FLOAT32;
  const char *ty = ltype(L, ft);
  nbc__lval a = nbc__lower_convert(L, args[0], ft);
  const char *fn = f32 ? nbc__arena_printf(L->arena, "__nv_%sf", f->base)
                       : nbc__arena_printf(L->arena, "__nv_%s", f->base64);
  const char *r =
      nbc__lower_call_fn(L, "i32", fn, ty, nbc__arena_printf(L->arena, "%s %s", ty, a.v));
  const char *x = tmp(L);
  EMIT("%s = icmp ne i32 %s, 0", x, r);
  return (nbc__lval){T(NBC__T_BOOL), x};
}

static nbc__lval lower_pred(nbc__lowerer *L, const struct math_fn *f, const nbc__call *call,
                            const nbc__lval *args, int na, const nbc__type *ft) {
  (void)call;
  return predicate(L, f, args, na, ft, "false");
}

static nbc__lval lower_finite(nbc__lowerer *L, const struct math_fn *f, const nbc__call *call,
                              const nbc__lval *args, int na, const nbc__type *ft) {
  (void)call;
  return predicate(L, f, args, na, ft, "true");
}

/* numba: libdevice's frexp/modf, the second result through a pointer of type oty: (mantissa,
 * int32 exponent) and (fractional part, integral part). */
static nbc__lval lower_pair(nbc__lowerer *L, const struct math_fn *f, const nbc__call *call,
                            const nbc__lval *args, const char *oty) {
  const nbc__type *rt = call->ret, *pt = rt->items[0];
  const char *pty = ltype(L, pt);
  if (!oty) oty = pty;
  nbc__lval a = nbc__lower_convert(L, args[0], pt);
  const char *slot = nbc__lower_alloca(L, oty);
  const char *fn = nbc__arena_printf(L->arena, "__nv_%s%s", f->base,
                                     pt->kind == NBC__T_FLOAT32 ? "f" : "");
  nbc__lval items[2] = {{pt, nbc__lower_call_fn(L, pty, fn,
                                                nbc__arena_printf(L->arena, "%s, %s*", pty, oty),
                                                nbc__arena_printf(L->arena, "%s %s, %s* %s", pty,
                                                                  a.v, oty, slot))},
                        {rt->items[1], tmp(L)}};
  EMIT("%s = load %s, %s* %s", items[1].v, oty, oty, slot);
  return nbc__lower_make_tuple(L, rt, items);
}

static bool pair_result(int na, const nbc__call *call) {
  return na == 1 && call->ret && call->ret->kind == NBC__T_TUPLE && call->ret->count == 2;
}

static nbc__lval lower_frexp(nbc__lowerer *L, const struct math_fn *f, const nbc__call *call,
                             const nbc__lval *args, int na, const nbc__type *ft) {
  return pair_result(na, call) ? lower_pair(L, f, call, args, "i32") : not_this_arity(ft);
}

static nbc__lval lower_modf(nbc__lowerer *L, const struct math_fn *f, const nbc__call *call,
                            const nbc__lval *args, int na, const nbc__type *ft) {
  return pair_result(na, call) ? lower_pair(L, f, call, args, NULL) : not_this_arity(ft);
}

/* radians and degrees: the argument times pi/180 or 180/pi. */
static nbc__lval scaled(nbc__lowerer *L, const nbc__lval *args, int na, const nbc__type *ft,
                        double k) {
  if (na != 1) return not_this_arity(ft);
  nbc__lval a = nbc__lower_convert(L, args[0], ft);
  return (nbc__lval){ft, nbc__lower_mul(L, ft, a.v, nbc__lower_const_float(L, ft, k))};
}

static nbc__lval lower_radians(nbc__lowerer *L, const struct math_fn *f, const nbc__call *call,
                               const nbc__lval *args, int na, const nbc__type *ft) {
  (void)f, (void)call;
  return scaled(L, args, na, ft, M_PI / 180.0);
}

static nbc__lval lower_degrees(nbc__lowerer *L, const struct math_fn *f, const nbc__call *call,
                               const nbc__lval *args, int na, const nbc__type *ft) {
  (void)f, (void)call;
  return scaled(L, args, na, ft, 180.0 / M_PI);
}

static nbc__lval lower_ldexp(nbc__lowerer *L, const struct math_fn *f, const nbc__call *call,
                             const nbc__lval *args, int na, const nbc__type *ft) {
  (void)f, (void)call;
  if (na != 2) return not_this_arity(ft);
  bool f32 = ft->kind == NBC__T_FLOAT32;
  const char *ty = ltype(L, ft);
  nbc__lval a = nbc__lower_convert(L, args[0], ft);
  nbc__lval e = nbc__lower_convert(L, args[1], T(NBC__T_INT32));
  return (nbc__lval){ft, nbc__lower_call_fn(L, ty, f32 ? "__nv_ldexpf" : "__nv_ldexp",
                                            nbc__arena_printf(L->arena, "%s, i32", ty),
                                            nbc__arena_printf(L->arena, "%s %s, i32 %s", ty,
                                                              a.v, e.v))};
}

nbc__lval nbc__lib_math_lower(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  const char *name = call->name ? call->name : n->a->str;
  nbc__lval args[3];
  int na = n->list.count;
  if (na > 3) na = 3;
  for (int i = 0; i < na; i++)
    args[i] = nbc__lower_expr(L, n->list.items[i]);
  if (nbc__lower_failed(L)) return (nbc__lval){n->type, "0"};
  /* The float type computed in: the argument's if float, else float64; float16 arguments
   * compute in float32 (numba-cuda's fp16 math does, then rounds). */
  const nbc__type *ft = na > 0 && nbc__lower_is_half(args[0].type) ? T(NBC__T_FLOAT32)
                        : na > 0 && is_float(args[0].type)         ? args[0].type
                                                                   : T(NBC__T_FLOAT64);
  if (na == 2 && is_float(args[1].type) && nbc__type_bits(args[1].type) > nbc__type_bits(ft))
    ft = args[1].type;
  const struct math_fn *f = math_find(name);
  nbc__lval r = f ? f->lower(L, f, call, args, na, ft) : not_this_arity(ft);
  if (r.v) return r;
  nbc__lower_error(L, n, "math.%s with %d argument%s is not supported", name, na,
                   na == 1 ? "" : "s");
  return (nbc__lval){n->type, "0"};
}
