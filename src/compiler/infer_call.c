/* infer_call.c — type inference of calls: builtins (range len abs min max int float bool
 * round), dtype conversions (float32(x)), math functions, the cuda module (grid, gridsize,
 * syncthreads, shared/local arrays, atomics, cache-hinted loads and stores) and calls of
 * Python functions, which are specialised for the argument types (infer.c caches them per
 * types and refuses recursion). Each call records an nbc__call in the CALL node's ->info for
 * lower.c, with the types its arguments convert to (also set as the arguments' ->cast).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/infer.h"

/* ------------------------------------------------------------------------ calls */

static nbc__call *call_new(infer *I, nbc__node *n, nbc__builtin b, const char *name,
                           int nargs) {
  nbc__call *c = nbc__infer_alloc(I, sizeof *c);
  if (!c) return NULL;
  c->builtin = b;
  c->name = name;
  c->nargs = nargs;
  c->argtypes = nbc__infer_alloc(I, sizeof *c->argtypes * (size_t)(nargs ? nargs : 1));
  n->info = c;
  return c->argtypes ? c : NULL;
}

/* Positional arguments only (keywords are checked by the callers that take them). */
static int positional(const nbc__node *n) {
  int k = 0;
  while (k < n->list.count && n->list.items[k]->kind != NBC__N_KEYWORD)
    k++;
  return k;
}

static bool no_keywords(infer *I, nbc__node *n, const char *what) {
  if (positional(n) != n->list.count)
    return UNSUPPORTED(I, n->list.items[positional(n)], "%s() takes no keyword arguments",
                       what);
  return true;
}

/* Types the arguments into types[]; false when any is unknown. */
static bool call_args(infer *I, nbc__node *n, const nbc__type **types, int max) {
  bool ok = true;
  for (int i = 0; i < n->list.count && i < max; i++) {
    nbc__node *a = n->list.items[i];
    types[i] = nbc__infer_expr(I, a->kind == NBC__N_KEYWORD ? a->a : a);
    if (a->kind == NBC__N_KEYWORD) a->type = types[i];
    if (!types[i]) ok = false;
  }
  return ok;
}

static const nbc__type *arg_list_error(infer *I, nbc__node *n, const char *what,
                                       const nbc__type **types, int count) {
  nbc__buf b;
  nbc__buf_init(&b, I->ctx->arena);
  for (int i = 0; i < count; i++) {
    if (i) nbc__buf_puts(&b, ", ");
    nbc__type_print(&b, types[i]);
  }
  TYPING(I, n, "Invalid use of %s with parameters (%s)", what, b.data);
  return NULL;
}

/* complex(re[, im]) as numba types it: integers and float32/float64 parts (one complex
 * argument alone is made complex128); complex64 only when every part is float32. */
static const nbc__type *call_complex(infer *I, nbc__node *n, const nbc__type **types,
                                     int nargs) {
  bool ok = nargs == 1 || nargs == 2, all_f32 = true;
  for (int i = 0; ok && i < nargs; i++) {
    const nbc__type *t = types[i];
    bool part = nbc__type_is_int(t) || (t && (t->kind == NBC__T_FLOAT32 ||
                                              t->kind == NBC__T_FLOAT64));
    ok = part || (nargs == 1 && nbc__type_is_complex(t));
    if (!t || t->kind != NBC__T_FLOAT32) all_f32 = false;
  }
  if (!ok) return arg_list_error(I, n, "complex", types, nargs);
  nbc__call *c = call_new(I, n, NBC__B_COMPLEX, "complex", nargs);
  if (!c) return NULL;
  for (int i = 0; i < nargs; i++)
    c->argtypes[i] = types[i];
  c->ret = T(all_f32 ? NBC__T_COMPLEX64 : NBC__T_COMPLEX128);
  return c->ret;
}

static const nbc__type *call_iterable(infer *I, nbc__node *n, const char *name,
                                      const nbc__type **types, int nargs);

static const nbc__type *call_builtin(infer *I, nbc__node *n, const char *name,
                                     const nbc__type **types, int nargs) {
  nbc__builtin b;
  if (!no_keywords(I, n, name)) return NULL;
  bool via_float32 = strcmp(name, "abs") == 0 || strcmp(name, "round") == 0 ||
                     strcmp(name, "bool") == 0; /* numba-cuda: of a bfloat16's float32 */
  for (int i = 0; via_float32 && i < nargs; i++)
    if (nbc__type_is_bf16(types[i])) types[i] = T(NBC__T_FLOAT32);
  if (strcmp(name, "sum") == 0 ||
      ((strcmp(name, "min") == 0 || strcmp(name, "max") == 0) && nargs == 1 &&
       (is_kind(types[0], NBC__T_ARRAY) || is_kind(types[0], NBC__T_TUPLE))))
    return call_iterable(I, n, name, types, nargs);
  if (strcmp(name, "range") == 0) {
    const char *why;
    const nbc__type *ctr = nbc__type_range(types, nargs, &why);
    if (!ctr) return arg_list_error(I, n, "range", types, nargs);
    nbc__call *c = call_new(I, n, NBC__B_RANGE, "range", nargs);
    if (!c) return NULL;
    for (int i = 0; i < nargs; i++) {
      c->argtypes[i] = ctr;
      nbc__infer_cast(n->list.items[i], ctr);
    }
    c->ret = nbc__type_special(I->ctx, NBC__T_RANGE, NULL, ctr); /* range_state_<ctr> */
    return c->ret;
  }
  if (strcmp(name, "len") == 0) {
    if (nargs != 1 || !(is_kind(types[0], NBC__T_ARRAY) || is_kind(types[0], NBC__T_TUPLE) ||
                        is_kind(types[0], NBC__T_RANGE) || is_kind(types[0], NBC__T_FLAT))) {
      if (n->alias && strcmp(n->alias, "$iter") == 0 && nargs == 1) /* desugar.c's loop */
        return TYPING(I, n, "'%s' object is not iterable", nbc__infer_tname(I, types[0])),
               NULL;
      return arg_list_error(I, n, "len", types, nargs);
    }
    nbc__call *c = call_new(I, n, NBC__B_LEN, "len", 1);
    if (!c) return NULL;
    c->argtypes[0] = types[0];
    /* numba: intp (a.flat's: the size), but a range's length is its counter type
     * (range_state_int32: int32) */
    c->ret = is_kind(types[0], NBC__T_RANGE) ? types[0]->dtype : T(NBC__T_INT64);
    return c->ret;
  }
  if (strcmp(name, "pow") == 0) { /* numba's pow(a, b) is a ** b: the node becomes that */
    if (nargs != 2 || n->list.items[0]->kind == NBC__N_KEYWORD ||
        n->list.items[1]->kind == NBC__N_KEYWORD)
      return UNSUPPORTED(I, n, "pow() takes two positional arguments in a kernel (a modulus "
                               "is not supported)"),
             NULL;
    nbc__node *base = n->list.items[0], *exponent = n->list.items[1];
    n->kind = NBC__N_BINOP;
    n->op = NBC__OP_POW;
    n->a = base;
    n->b = exponent;
    n->list.count = 0;
    n->info = NULL;
    return nbc__infer_expr(I, n);
  }
  if (strcmp(name, "tuple") == 0) { /* tuple(t) of a tuple is t itself: the node becomes it */
    if (nargs != 1 || n->list.items[0]->kind == NBC__N_KEYWORD || !is_kind(types[0], NBC__T_TUPLE))
      return UNSUPPORTED(I, n, "tuple() in a kernel takes one tuple (it is that tuple)"), NULL;
    *n = *n->list.items[0];
    return nbc__infer_expr(I, n);
  }
  if (strcmp(name, "complex") == 0) return call_complex(I, n, types, nargs);
  if (strcmp(name, "divmod") == 0) { /* (a // b, a % b), each typed as that operator */
    const nbc__type *conv[2], *items[2];
    const char *reason;
    items[0] = nargs == 2 ? nbc__type_binop_sig(NBC__OP_FLOORDIV, types[0], types[1], conv,
                                                &reason)
                          : NULL;
    items[1] = items[0] ? nbc__type_binop_sig(NBC__OP_MOD, types[0], types[1], conv, &reason)
                        : NULL;
    if (!items[0] || !items[1]) return arg_list_error(I, n, "divmod", types, nargs);
    nbc__call *c = call_new(I, n, NBC__B_DIVMOD, "divmod", 2);
    if (!c) return NULL;
    c->argtypes[0] = types[0];
    c->argtypes[1] = types[1];
    c->ret = nbc__type_tuple(I->ctx, items, 2);
    return c->ret;
  }
  if (strcmp(name, "abs") == 0)
    b = NBC__B_ABS;
  else if (strcmp(name, "min") == 0)
    b = NBC__B_MIN;
  else if (strcmp(name, "max") == 0)
    b = NBC__B_MAX;
  else if (strcmp(name, "int") == 0)
    b = NBC__B_INT;
  else if (strcmp(name, "float") == 0)
    b = NBC__B_FLOAT;
  else if (strcmp(name, "bool") == 0)
    b = NBC__B_BOOL;
  else
    b = NBC__B_ROUND;
  const nbc__type *conv[16];
  const char *why = NULL;
  const nbc__type *r =
      nargs <= 16 ? nbc__type_call_builtin(name, types, nargs, conv, &why) : NULL;
  if (!r) {
    if (why && strstr(why, "not supported") && nargs > 0) return TYPING(I, n, "%s", why), NULL;
    return arg_list_error(I, n, name, types, nargs);
  }
  nbc__call *c = call_new(I, n, b, name, nargs);
  if (!c) return NULL;
  for (int i = 0; i < nargs; i++) {
    c->argtypes[i] = conv[i];
    nbc__infer_cast(n->list.items[i], conv[i]);
  }
  c->ret = r;
  return r;
}

/* numba-cuda's fp16.py overloads math.<f> for a float16 argument with cuda_fp16.h's function
 * (math.sqrt is hsqrt, math.fabs habs, ...): the result is float16, computed as CUDA computes
 * it. The math function's cuda.fp16 counterpart, or NULL. */
static const char *fp16_math_function(const char *name) {
  static const char *const pairs[][2] = {
      {"trunc", "htrunc"}, {"ceil", "hceil"}, {"floor", "hfloor"}, {"fabs", "habs"},
      {"sqrt", "hsqrt"},   {"log", "hlog"},   {"log2", "hlog2"},   {"log10", "hlog10"},
      {"exp", "hexp"},     {"exp2", "hexp2"}, {"tanh", "htanh"},   {"cos", "hcos"},
      {"sin", "hsin"},
  };
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
    if (strcmp(pairs[i][0], name) == 0) return pairs[i][1];
  return NULL;
}

static const nbc__type *call_math(infer *I, nbc__node *n, const char *name,
                                  const nbc__type **types, int nargs) {
  if (!no_keywords(I, n, name)) return NULL;
  const char *hname = nargs == 1 && types[0] && types[0]->kind == NBC__T_FLOAT16
                          ? fp16_math_function(name)
                          : NULL;
  const nbc__type *hret, *hparams[4];
  int hn = 0;
  const char *symbol;
  /* numba-cuda's bf16.py overloads (hsqrt...); its other math functions take its float32 */
  bool bf16 = nargs == 1 && nbc__type_is_bf16(types[0]);
  const char *bname = bf16 ? nbc__bf16_math_function(name) : NULL;
  bool wrapped = bname ? nbc__bf16_find(I->ctx, bname, &hret, hparams, &hn, &symbol)
                       : hname && nbc__fp16_find(I->ctx, hname, &hret, hparams, &hn, &symbol);
  if (bf16 && !wrapped) types[0] = T(NBC__T_FLOAT32);
  if (wrapped && hn == 1) {
    nbc__call *c = call_new(I, n, NBC__B_EXTERN, symbol, 1);
    if (!c) return NULL;
    c->argtypes[0] = hparams[0];
    c->ret = hret;
    return hret;
  }
  const nbc__type *conv[2];
  const char *why;
  const nbc__type *r = nargs <= 2 ? nbc__type_math(name, types, nargs, conv, &why) : NULL;
  if (!r) {
    char what[64];
    snprintf(what, sizeof what, "math.%s", name);
    return arg_list_error(I, n, what, types, nargs);
  }
  nbc__call *c = call_new(I, n, NBC__B_MATH, name, nargs);
  if (!c) return NULL;
  for (int i = 0; i < nargs; i++) {
    c->argtypes[i] = conv[i];
    nbc__infer_cast(n->list.items[i], conv[i]);
  }
  c->ret = r;
  return r;
}

/* numpy.<ufunc> on scalars: numba's loop typing (numpy.c); the call is recorded as the
 * builtin computing the same thing on the loop's type, each argument converted to it. */
static nbc__global *generated_function(infer *I, const char *name, const char *src);
static const nbc__type *call_python(infer *I, nbc__node *n, nbc__global *G,
                                    const nbc__type **types, int nargs);

static const nbc__type *call_cmath(infer *I, nbc__node *n, const char *name,
                                   const nbc__type **types, int nargs);

/* A ufunc on a complex number that numba computes with its npyfuncs formulas: a call of the
 * generated _np_<name> (numpy.c) for the number's type. */
static const nbc__type *call_complex_formula(infer *I, nbc__node *n, const char *ufunc,
                                            const nbc__type **types) {
  bool c64 = types[0]->kind == NBC__T_COMPLEX64;
  const char *src = nbc__numpy_complex_source(I->ctx, ufunc, c64);
  nbc__global *G = generated_function(I, nbc__arena_printf(I->ctx->arena, "_np_%s", ufunc), src);
  return G ? call_python(I, n, G, types, 1) : NULL;
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
  int npos = positional(n);
  if (npos < nargs) {
    nbc__node *kw = n->list.items[npos];
    if (strcmp(kw->str, "out") != 0 || npos != nin || nargs != nin + 1)
      return UNSUPPORTED(I, kw, "%s(): keyword argument '%s' is not supported in kernels "
                                "(only out=, after the inputs)", what, kw->str),
             NULL;
    n->list.items[npos] = kw->a; /* out= is the last positional argument */
  }
  if (nargs == nin)
    return UNSUPPORTED(I, n, "%s() of arrays needs an output array in kernels, which cannot "
                             "allocate one: %s(..., out)", what, what),
           NULL;
  if (nargs != nin + 1) return arg_list_error(I, n, what, types, nargs);
  const nbc__type *out = types[nin];
  if (out->kind != NBC__T_ARRAY)
    return TYPING(I, n, "ufunc '%s' called with an explicit output that is not an array",
                  name),
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
      return arg_list_error(I, n, what, types, nargs);
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
    return TYPING(I, n, "can't resolve ufunc %s for the types of %s (its %s result does not "
                        "cast to the output's %s under numpy's 'same_kind' rule)",
                  name, what, r ? nbc__infer_tname(I, r) : "missing",
                  nbc__infer_tname(I, out->dtype)),
           NULL;
  const char *src = nbc__numpy_ufunc_out_source(I->ctx, name, types, nin, out->ndim);
  nbc__global *G = generated_function(I, "_ufunc", src);
  return G ? call_python(I, n, G, types, nargs) : NULL;
}

static const nbc__type *call_numpy(infer *I, nbc__node *n, const char *name,
                                   const nbc__type **types, int nargs) {
  char what[64];
  snprintf(what, sizeof what, "numpy.%s", name);
  int nin = nbc__numpy_ufunc_nin(name);
  const char *canonical = nbc__numpy_ufunc(name);
  if (nargs == 1 && nin == 1 && nbc__type_is_complex(types[0]) && positional(n) == 1) {
    const char *cm = nbc__numpy_complex_cmath(canonical);
    if (cm) return call_cmath(I, n, cm, types, 1);
    if (nbc__numpy_complex_formula(canonical))
      return call_complex_formula(I, n, canonical, types);
  }
  bool arrays = false;
  for (int i = 0; i < nargs; i++)
    arrays |= types[i]->kind == NBC__T_ARRAY;
  if (nin && (arrays || nargs == nin + 1))
    return call_ufunc_arrays(I, n, canonical, nin, types, nargs);
  if (!no_keywords(I, n, what)) return NULL;
  const nbc__type *loop = NULL;
  const char *why = NULL;
  const nbc__type *r = nbc__type_numpy(name, types, nargs, &loop, &why);
  if (!r) {
    if (why) return UNSUPPORTED(I, n, "%s: %s", what, why), NULL;
    return arg_list_error(I, n, what, types, nargs);
  }
  const char *math = NULL;
  nbc__builtin b = nbc__numpy_builtin(name, loop, &math);
  nbc__call *c = call_new(I, n, b, b == NBC__B_MATH ? math : name, nargs);
  if (!c) return NULL;
  for (int i = 0; i < nargs; i++) {
    c->argtypes[i] = loop;
    nbc__infer_cast(n->list.items[i], loop);
  }
  c->ret = r;
  return r;
}

/* The dtype of a shared/local array: a type global, cuda.float32, ... */
static const nbc__type *dtype_of(infer *I, nbc__node *n, const nbc__type *t) {
  if (is_kind(t, NBC__T_DTYPE)) return t->dtype;
  TYPING(I, n, "the dtype must be a numba type such as float32, not %s",
         nbc__infer_tname(I, t));
  return NULL;
}

/* A shared/local array's dtype argument: a type, or numpy's name of one as a string
 * ("int32"), which numba-cuda accepts too. */
static const nbc__type *array_dtype(infer *I, nbc__node *n) {
  if (n->kind == NBC__N_STR) {
    const nbc__type *t = nbc__numpy_dtype_string(n->str);
    if (!t || !nbc__type_is_number(t))
      return TYPING(I, n, "Invalid NumPy dtype specified: '%s'", n->str ? n->str : ""), NULL;
    return t;
  }
  const nbc__type *t = nbc__infer_expr(I, n);
  return t ? dtype_of(I, n, t) : NULL;
}

/* numpy.dtype(x) as numba types it: x a string naming a type kernels have ("float32", "f4",
 * "<i8", "M8[D]") or a type (np.float32), giving that type as a value (a dtype argument of
 * cuda.local.array, a.view, a.astype...); it has no run-time value. */
static const nbc__type *call_np_dtype(infer *I, nbc__node *n) {
  if (!no_keywords(I, n, "numpy.dtype")) return NULL;
  nbc__node *a = n->list.count == 1 ? n->list.items[0] : NULL;
  const nbc__type *arg = a && a->kind != NBC__N_STR ? nbc__infer_expr(I, a) : NULL;
  if (a && a->kind != NBC__N_STR && !arg) return NULL; /* reported */
  const nbc__type *t = !a                        ? NULL
                       : a->kind == NBC__N_STR   ? nbc__numpy_dtype_string(a->str)
                       : is_kind(arg, NBC__T_DTYPE) ? arg->dtype
                                                 : NULL;
  if (!t) {
    if (a && a->kind == NBC__N_STR)
      return TYPING(I, n, "numpy.dtype('%s'): not a type kernels have (numbers, booleans and "
                    "datetime64/timedelta64 are)", a->str ? a->str : ""),
             NULL;
    return TYPING(I, n, "numpy.dtype() takes one string literal (\"float32\", \"f4\") or "
                  "type (np.float32)"),
           NULL;
  }
  return nbc__type_special(I->ctx, NBC__T_DTYPE, nbc__type_name(I->ctx, t), t);
}

/* float("nan"), float("-inf"), float("1.5"): the number Python's float() makes of the literal,
 * the call becoming that constant (numba types float() of a string literal and folds it). */
static const nbc__type *float_of_string(infer *I, nbc__node *n) {
  const char *text = n->list.items[0]->str ? n->list.items[0]->str : "";
  while (*text == ' ' || *text == '\t' || *text == '\n') text++;
  char *end = NULL;
  double v = strtod(text, &end);
  while (end && (*end == ' ' || *end == '\t' || *end == '\n')) end++;
  bool hex = strchr(text, 'x') || strchr(text, 'X'); /* strtod reads hex, Python does not */
  if (!end || end == text || *end || hex)
    return TYPING(I, n, "could not convert string to float: '%s'", text), NULL;
  n->kind = NBC__N_FLOAT;
  n->value.f = v;
  n->list.count = 0;
  return nbc__infer_expr(I, n);
}

/* numba's text of an argument's type as its "No implementation of function" message shows
 * it: a constant integer is Literal[int](v), a list of them list(int64)<iv=[...]>, a tuple
 * Tuple(items), a type class(type), anything else its type. */
static void numba_arg_text(infer *I, nbc__buf *out, nbc__node *a) {
  int64_t v;
  if (a->kind == NBC__N_LIST || a->kind == NBC__N_TUPLE) {
    bool consts = a->kind == NBC__N_LIST;
    for (int i = 0; consts && i < a->list.count; i++)
      consts = nbc__infer_expr(I, a->list.items[i]) &&
               nbc__infer_const_int(I, a->list.items[i], &v);
    if (consts && a->list.count > 0) {
      nbc__buf_puts(out, "list(int64)<iv=[");
      for (int i = 0; i < a->list.count; i++) {
        nbc__infer_const_int(I, a->list.items[i], &v);
        nbc__buf_printf(out, "%s%lld", i ? ", " : "", (long long)v);
      }
      nbc__buf_puts(out, "]>");
      return;
    }
    /* a list is not a value kernels have: its items' types */
    nbc__buf_puts(out, a->kind == NBC__N_LIST ? "list(" : "Tuple(");
    for (int i = 0; i < a->list.count; i++) {
      if (i) nbc__buf_puts(out, ", ");
      numba_arg_text(I, out, a->list.items[i]);
    }
    nbc__buf_puts(out, ")");
    return;
  }
  if (nbc__infer_const_int(I, a, &v)) {
    nbc__buf_printf(out, "Literal[int](%lld)", (long long)v);
    return;
  }
  if (a->kind == NBC__N_STR) {
    nbc__buf_printf(out, "Literal[str](%s)", a->str ? a->str : "");
    return;
  }
  const nbc__type *t = a->type ? a->type : nbc__infer_expr(I, a);
  if (is_kind(t, NBC__T_DTYPE))
    nbc__buf_printf(out, "class(%s)", nbc__infer_tname(I, t->dtype));
  else
    nbc__buf_puts(out, t ? nbc__infer_tname(I, t) : "undefined");
}

/* A refused shape of cuda.shared.array / cuda.local.array (call n), reported at `at` as
 * numba does ("No implementation of function Function(<function shared.array>) found for
 * signature: >>> array(shape=..., dtype=...)"), then why. Returns 0. */
static int shape_refused(infer *I, nbc__node *n, nbc__node *at, const char *fname,
                         const char *why) {
  if (!I->final) return 0;
  nbc__buf sig;
  nbc__buf_init(&sig, I->ctx->arena);
  for (int i = 0; i < n->list.count; i++) {
    nbc__node *a = n->list.items[i];
    if (i) nbc__buf_puts(&sig, ", ");
    if (a->kind == NBC__N_KEYWORD) nbc__buf_printf(&sig, "%s=", a->str);
    numba_arg_text(I, &sig, a->kind == NBC__N_KEYWORD ? a->a : a);
  }
  const char *name = strncmp(fname, "cuda.", 5) == 0 ? fname + 5 : fname;
  const char *dot = strrchr(name, '.');
  TYPING(I, at, "No implementation of function Function(<function %s>) found for "
         "signature:\n \n >>> %s(%s)\n \nthe shape of %s() %s", name, dot ? dot + 1 : name,
         sig.data ? sig.data : "", fname, why);
  return 0;
}

/* A shared/local array's shape: a constant integer, a tuple of them, or a global tuple
 * constant (numba freezes one); its extents in dims (at most 32), the count, or 0 reported
 * (n is the call, for numba's message). */
static int array_shape(infer *I, nbc__node *n, nbc__node *shape, const char *fname,
                       int64_t *dims) {
  if (shape->kind == NBC__N_NAME && !nbc__infer_expr(I, shape)) return 0; /* resolves it */
  const nbc__literal *lit = shape->kind == NBC__N_NAME && shape->var >= 0
                                ? I->fn->vars[shape->var].literal
                                : NULL;
  if (lit && lit->count > 0) { /* a parameter given a constant tuple: its values */
    memcpy(dims, lit->value, sizeof *dims * (size_t)lit->count);
    return lit->count;
  }
  const nbc__global *G = shape->kind == NBC__N_NAME && shape->var < 0 ? shape->info : NULL;
  if (G && G->g.kind == NBC_GLOBAL_TUPLE) { /* SHAPE = 5, 6 */
    if (G->g.tuple_count < 1 || G->g.tuple_count > 32)
      return UNSUPPORTED(I, shape, "an array shape of %d dimensions", G->g.tuple_count), 0;
    for (int i = 0; i < G->g.tuple_count; i++) {
      if (G->g.tuple_items[i].kind != NBC_GLOBAL_INT)
        return TYPING(I, shape, "the shape of %s() must be constant integers", fname), 0;
      dims[i] = G->g.tuple_items[i].value.i;
    }
    return G->g.tuple_count;
  }
  if (shape->kind == NBC__N_LIST) /* numba-cuda refuses a list (its test_sm_creation) */
    return shape_refused(I, n, shape, fname,
                         "must be a constant integer or a tuple of them, not a list");
  if (shape->kind == NBC__N_TUPLE) {
    if (shape->list.count < 1 || shape->list.count > 32)
      return UNSUPPORTED(I, shape, "an array shape of %d dimensions", shape->list.count), 0;
    for (int i = 0; i < shape->list.count; i++)
      if (!nbc__infer_expr(I, shape->list.items[i]) ||
          !nbc__infer_const_int(I, shape->list.items[i], &dims[i]))
        return shape_refused(I, n, shape->list.items[i], fname, "must be constant integers");
    return shape->list.count;
  }
  if (!nbc__infer_expr(I, shape) || !nbc__infer_const_int(I, shape, &dims[0]))
    return shape_refused(I, n, shape, fname, "must be a constant integer or a tuple of them");
  return 1;
}

/* numba-cuda's _validate_alignment of a shared/local array's constant `alignment` (None:
 * the dtype's own): *palign 0 for none; false (reported) for an invalid one, and for a value
 * that is neither a constant integer nor None (numba's RequireLiteralValue). */
static bool array_alignment(infer *I, nbc__node *v, int64_t *palign) {
  *palign = 0;
  if (!v || v->kind == NBC__N_NONE) return true;
  int64_t a;
  if (!nbc__infer_const_int(I, v, &a)) {
    bool constant_other = v->kind == NBC__N_STR || nbc__infer_untyped_global(I, v);
    const nbc__type *t = constant_other ? NULL : nbc__infer_expr(I, v);
    if (t && t->kind == NBC__T_NONE) return true;
    if (!t && !constant_other) return false;
    return TYPING(I, v, "RequireLiteralValue: alignment must be a constant integer");
  }
  const char *why = a <= 0 ? "Alignment must be positive"
                    : (a & (a - 1)) != 0 ? "Alignment must be a power of 2"
                    : a % 8 != 0         ? "Alignment must be a multiple of 8"
                                         : NULL;
  if (why) return TYPING(I, v, "ValueError: %s", why);
  *palign = a;
  return true;
}

/* cuda.shared.array / cuda.local.array(shape, dtype, alignment=None): the arguments are
 * typed here, not as values (a string dtype, a list shape). */
static const nbc__type *call_array(infer *I, nbc__node *n, const char *fname) {
  bool shared = strcmp(fname, "cuda.shared.array") == 0;
  nbc__node *shape = NULL, *dtype = NULL, *alignment = NULL;
  for (int i = 0; i < n->list.count; i++) {
    nbc__node *a = n->list.items[i];
    const char *kw = a->kind == NBC__N_KEYWORD ? a->str
                     : i == 0                  ? "shape"
                     : i == 1                  ? "dtype"
                     : i == 2                  ? "alignment"
                                               : NULL;
    nbc__node *v = a->kind == NBC__N_KEYWORD ? a->a : a;
    nbc__node **slot = !kw                              ? NULL
                       : strcmp(kw, "shape") == 0     ? &shape
                       : strcmp(kw, "dtype") == 0     ? &dtype
                       : strcmp(kw, "alignment") == 0 ? &alignment
                                                      : NULL;
    if (!slot) return UNSUPPORTED(I, a, "%s() takes (shape, dtype, alignment=None)", fname), NULL;
    if (*slot) return TYPING(I, a, "%s() got multiple values for '%s'", fname, kw), NULL;
    *slot = v;
    if (a->kind == NBC__N_KEYWORD) a->type = T(NBC__T_NONE); /* no run-time value */
  }
  if (!shape || !dtype)
    return TYPING(I, n, "%s() missing required argument '%s'", fname,
                  shape ? "dtype" : "shape"),
           NULL;
  const nbc__type *dt = array_dtype(I, dtype);
  if (!dt) return NULL;
  int64_t dims[32];
  int ndim = array_shape(I, n, shape, fname, dims);
  if (!ndim) return NULL;
  int64_t total = 1;
  for (int i = 0; i < ndim; i++) {
    if (dims[i] < 0)
      return TYPING(I, shape, "negative dimension %lld in %s()", (long long)dims[i], fname),
             NULL;
    if (dims[i] > 0 && total > INT64_MAX / dims[i])
      return TYPING(I, shape, "array too large in %s()", fname), NULL;
    total *= dims[i];
  }
  /* only a 1-d shared array may have no elements: it is the dynamic shared memory */
  if (total == 0 && !(shared && ndim == 1))
    return TYPING(I, shape, "ValueError: array length <= 0 in %s()", fname), NULL;
  int64_t align;
  if (!array_alignment(I, alignment, &align)) return NULL;
  nbc__call *c = call_new(I, n, shared ? NBC__B_CUDA_SHARED_ARRAY : NBC__B_CUDA_LOCAL_ARRAY,
                          fname, n->list.count);
  if (!c) return NULL;
  c->alignment = align;
  for (int i = 0; i < n->list.count; i++)
    c->argtypes[i] = T(NBC__T_NONE); /* compile-time arguments */
  c->shape = nbc__infer_alloc(I, sizeof *c->shape * (size_t)ndim);
  if (!c->shape) return NULL;
  memcpy(c->shape, dims, sizeof *dims * (size_t)ndim);
  c->ret = nbc__type_array(I->ctx, dt, ndim, 'C');
  return c->ret;
}

static const struct {
  const char *name;
  nbc__builtin builtin;
  int types; /* 0: int32 uint32 int64 uint64 float32 float64; 1: the integers; 2: unsigned */
} atomic_ops[] = {
    {"add", NBC__B_ATOMIC_ADD, 0},       {"sub", NBC__B_ATOMIC_SUB, 0},
    {"max", NBC__B_ATOMIC_MAX, 0},       {"min", NBC__B_ATOMIC_MIN, 0},
    {"nanmax", NBC__B_ATOMIC_NANMAX, 0}, {"nanmin", NBC__B_ATOMIC_NANMIN, 0},
    {"and_", NBC__B_ATOMIC_AND, 1},      {"or_", NBC__B_ATOMIC_OR, 1},
    {"xor", NBC__B_ATOMIC_XOR, 1},       {"exch", NBC__B_ATOMIC_EXCH, 1},
    {"inc", NBC__B_ATOMIC_INC, 2},       {"dec", NBC__B_ATOMIC_DEC, 2},
    {"cas", NBC__B_ATOMIC_CAS, 1},       {"compare_and_swap", NBC__B_ATOMIC_CAS, 1}};

/* cuda.atomic.<op>(array, index, value) -> the old value (numba-cuda's cudadecl _gen);
 * cas(array, index, old, value) and compare_and_swap(array, old, value) (1-d, element 0)
 * -> the old value. */
static const nbc__type *call_atomic(infer *I, nbc__node *n, const char *fname,
                                    const nbc__type **types, int nargs) {
  if (!no_keywords(I, n, fname)) return NULL;
  int op = -1;
  for (int i = 0; i < (int)(sizeof atomic_ops / sizeof atomic_ops[0]); i++)
    if (strcmp(fname + 12, atomic_ops[i].name) == 0) op = i;
  if (op < 0) return UNSUPPORTED(I, n, "unsupported call of %s", fname), NULL;
  bool cas = atomic_ops[op].builtin == NBC__B_ATOMIC_CAS;
  bool cas_noidx = cas && strcmp(fname + 12, "compare_and_swap") == 0;
  int want = cas_noidx ? 3 : cas ? 4 : 3;
  if (nargs != want || !is_kind(types[0], NBC__T_ARRAY) || (cas_noidx && types[0]->ndim != 1))
    return arg_list_error(I, n, fname, types, nargs);
  const nbc__type *at = types[0], *dt = at->dtype;
  nbc__type_kind k = dt->kind;
  bool uns = k == NBC__T_UINT32 || k == NBC__T_UINT64;
  bool integer = uns || k == NBC__T_INT32 || k == NBC__T_INT64;
  bool fl = k == NBC__T_FLOAT32 || k == NBC__T_FLOAT64;
  int allowed = atomic_ops[op].types;
  if (!(allowed == 0 ? integer || fl : allowed == 1 ? integer : uns))
    return TYPING(I, n, "%s() of an array of %s is not supported", fname,
                  nbc__infer_tname(I, dt)),
           NULL;
  /* The index: an integer or a tuple of integers, one per dimension. */
  const nbc__type *it = T(NBC__T_INT64);
  if (!cas_noidx) {
    nbc__node *idx = n->list.items[1];
    it = types[1];
    if (nbc__type_is_int(it)) {
      if (at->ndim != 1)
        return TYPING(I, idx, "%s() on a %dd array needs a tuple index", fname, at->ndim), NULL;
      nbc__infer_cast(idx, T(NBC__T_INT64));
    } else if (is_kind(it, NBC__T_TUPLE) && it->count == at->ndim) {
      for (int i = 0; i < it->count; i++)
        if (!nbc__type_is_int(it->items[i]))
          return TYPING(I, idx, "%s() index must be integers, not %s", fname,
                        nbc__infer_tname(I, it)),
                 NULL;
      if (idx->kind == NBC__N_TUPLE)
        for (int i = 0; i < idx->list.count; i++)
          nbc__infer_cast(idx->list.items[i], T(NBC__T_INT64));
    } else
      return TYPING(I, idx, "%s() index must be an integer or a tuple of %d integers, not %s",
                    fname, at->ndim, nbc__infer_tname(I, it)),
             NULL;
  }
  /* The value operands (cas: old and value) convert to the dtype. */
  for (int i = cas_noidx ? 1 : 2; i < nargs; i++)
    if (!nbc__type_is_number(types[i]) || !nbc__type_can_convert(types[i], dt))
      return TYPING(I, n->list.items[i], "cannot convert %s to %s in %s()",
                    nbc__infer_tname(I, types[i]), nbc__infer_tname(I, dt), fname),
             NULL;
  nbc__call *c = call_new(I, n, atomic_ops[op].builtin, fname, nargs);
  if (!c) return NULL;
  c->argtypes[0] = at;
  if (!cas_noidx) c->argtypes[1] = nbc__type_is_int(it) ? T(NBC__T_INT64) : it;
  for (int i = cas_noidx ? 1 : 2; i < nargs; i++) {
    c->argtypes[i] = dt;
    nbc__infer_cast(n->list.items[i], dt);
  }
  c->ret = dt;
  return dt;
}

/* ----------------------------------------- loads and stores with a cache hint ---- */

/* Binds the arguments of call n to the parameters params[0..nparams-1], positional first,
 * then by keyword, into args; false (reported) when one is missing, unknown or given twice. */
static bool bind_args(infer *I, nbc__node *n, const char *what, const char *const *params,
                      int nparams, nbc__node **args) {
  int npos = positional(n), nargs = n->list.count;
  if (npos > nparams)
    return TYPING(I, n->list.items[nparams],
                  "%s() takes %d positional arguments but %d were given", what, nparams, npos);
  for (int k = npos; k < nargs; k++) {
    const nbc__node *kw = n->list.items[k];
    int p = -1;
    for (int j = 0; j < nparams; j++)
      if (strcmp(kw->str, params[j]) == 0) p = j;
    if (p < 0)
      return TYPING(I, kw, "%s() got an unexpected keyword argument '%s'", what, kw->str);
    bool twice = p < npos;
    for (int j = npos; j < k; j++)
      twice = twice || strcmp(n->list.items[j]->str, kw->str) == 0;
    if (twice)
      return TYPING(I, kw, "%s() got multiple values for argument '%s'", what, kw->str);
  }
  for (int j = 0; j < nparams; j++) {
    args[j] = nbc__call_arg(n, j, params[j]);
    if (!args[j]) return TYPING(I, n, "%s() missing required argument: '%s'", what, params[j]);
  }
  return true;
}

/* numba-cuda's cache_hints.py: ld<op>(array, i) is element i of the array, loaded with
 * ld.global.<op>; st<op>(array, i, value) stores value, converted to the dtype (numba's
 * context.cast), with st.global.<op> and returns None. The array must be an array or a
 * CPointer, i an integer for a pointer or a 1-d array, or a UniTuple of ndim integers, the
 * dtype an integer or a float; the messages are numba's (_validate_arguments, then
 * _validate_bitwidth: every integer and float here is 8, 16, 32 or 64 bits wide). The
 * arguments may be passed by keyword, as numba's overloads name them. */
static const nbc__type *call_cache_hint(infer *I, nbc__node *n, const char *fname) {
  static const char *const params[] = {"array", "i", "value"};
  const char *op = fname + 5; /* "ldcg" */
  bool store = op[0] == 's';
  nbc__node *args[3];
  if (!bind_args(I, n, op, params, store ? 3 : 2, args)) return NULL;
  const nbc__type *at = args[0]->type, *it = args[1]->type;
  bool pointer = is_kind(at, NBC__T_POINTER);
  if (!is_kind(at, NBC__T_ARRAY) && !pointer)
    return TYPING(I, args[0], "%s operates on arrays or pointers. Got type %s", op,
                  nbc__infer_tname(I, at)),
           NULL;
  bool valid = false;
  if (nbc__type_is_int(it)) {
    if (!pointer && at->ndim != 1) /* a pointer takes any integer */
      return TYPING(I, args[1], "Expected %d indices, got a scalar", at->ndim), NULL;
    valid = true;
  } else if (pointer && is_kind(it, NBC__T_TUPLE)) {
    return TYPING(I, args[1], "Pointers only support scalar indexing, got tuple of %d",
                  it->count),
           NULL;
  } else if (is_kind(it, NBC__T_TUPLE) && it->count > 0) {
    bool uni = true;
    for (int k = 1; k < it->count; k++)
      uni = uni && nbc__type_equal(it->items[k], it->items[0]);
    if (uni && it->count != at->ndim)
      return TYPING(I, args[1], "Expected %d indices, got %d", at->ndim, it->count), NULL;
    valid = uni && nbc__type_is_int(it->items[0]);
  }
  if (!valid)
    return TYPING(I, args[1], "%s is not a valid index", nbc__infer_tname(I, it)), NULL;
  const nbc__type *dt = at->dtype;
  if (!nbc__type_is_int(dt) && !nbc__type_is_float(dt))
    return TYPING(I, args[0], "%s requires array of integer or float type, got %s", op,
                  nbc__infer_tname(I, dt)),
           NULL;
  if (store) {
    const nbc__type *vt = args[2]->type;
    if (at->readonly) return TYPING(I, args[0], "cannot modify a read-only array"), NULL;
    if (!nbc__type_is_number(vt) || !nbc__type_can_convert(vt, dt))
      return TYPING(I, args[2], "cannot convert %s to %s in %s()", nbc__infer_tname(I, vt),
                    nbc__infer_tname(I, dt), op),
             NULL;
    nbc__infer_cast(args[2], dt);
  }
  nbc__call *c = call_new(I, n, NBC__B_CACHE_HINT, fname, store ? 3 : 2);
  if (!c) return NULL;
  c->argtypes[0] = at;
  c->argtypes[1] = it;
  if (store) c->argtypes[2] = dt;
  /* A tuple display is non-negative item by item, cuda.grid(n) always; other tuple values
   * are not analysed. */
  nbc__node *ix = args[1];
  const nbc__call *grid = ix->kind == NBC__N_CALL ? ix->info : NULL;
  bool nonneg = ix->kind == NBC__N_TUPLE || nbc__infer_nonneg(I, ix) ||
                (grid && grid->builtin == NBC__B_CUDA_GRID);
  for (int k = 0; ix->kind == NBC__N_TUPLE && k < ix->list.count; k++)
    nonneg = nonneg && nbc__infer_nonneg(I, ix->list.items[k]);
  c->nonneg = nonneg;
  c->ret = store ? T(NBC__T_NONE) : dt;
  return c->ret;
}

/* ------------------------------------ warp, vote, fence, bit and math intrinsics ---- */

/* One concrete signature of numba-cuda's cudadecl templates: ret(args[0..nargs-1]). */
typedef struct icase {
  nbc__type_kind ret, args[3];
} icase;

#define IC1(r, a)                                                                              \
  {                                                                                            \
    NBC__T_##r, {                                                                              \
      NBC__T_##a, NBC__T_VOID, NBC__T_VOID                                                     \
    }                                                                                          \
  }
static const icase popc_cases[] = {IC1(INT8, INT8),     IC1(INT16, INT16),  IC1(INT32, INT32),
                                   IC1(INT64, INT64),   IC1(UINT8, UINT8),  IC1(UINT16, UINT16),
                                   IC1(UINT32, UINT32), IC1(UINT64, UINT64)};
static const icase ffs_cases[] = {IC1(UINT32, INT8),   IC1(UINT32, INT16), IC1(UINT32, INT32),
                                  IC1(UINT32, INT64),  IC1(UINT32, UINT8), IC1(UINT32, UINT16),
                                  IC1(UINT32, UINT32), IC1(UINT32, UINT64)};
static const icase brev_cases[] = {IC1(UINT32, UINT32), IC1(UINT64, UINT64)};
static const icase cbrt_cases[] = {IC1(FLOAT32, FLOAT32), IC1(FLOAT64, FLOAT64)};
/* match_any_sync / match_all_sync (mask, value): the value's case picks .b32 or .b64;
 * nanosleep(ns) takes a uint32 (numba-cuda's Cuda_match_*_sync and Cuda_nanosleep). The
 * return types (int32, Tuple(int32, bool), none) are set by the caller. */
static const icase match_cases[] = {
    {NBC__T_INT32, {NBC__T_INT32, NBC__T_INT32, NBC__T_VOID}},
    {NBC__T_INT32, {NBC__T_INT32, NBC__T_INT64, NBC__T_VOID}},
    {NBC__T_INT32, {NBC__T_INT32, NBC__T_FLOAT32, NBC__T_VOID}},
    {NBC__T_INT32, {NBC__T_INT32, NBC__T_FLOAT64, NBC__T_VOID}}};
static const icase nanosleep_cases[] = {IC1(NONE, UINT32)};
static const icase fma_cases[] = {
    {NBC__T_FLOAT32, {NBC__T_FLOAT32, NBC__T_FLOAT32, NBC__T_FLOAT32}},
    {NBC__T_FLOAT64, {NBC__T_FLOAT64, NBC__T_FLOAT64, NBC__T_FLOAT64}}};
#undef IC1

/* numba's overload resolution over concrete cases (types.c's rating, for up to three
 * arguments): every argument must convert, unsafe conversions allowed; the first case with
 * the fewest (unsafe, safe, promote) conversions wins. Returns its index or -1. */
static int icase_resolve(const icase *cases, int ncases, const nbc__type **types, int nargs) {
  int best = -1, best_rate[3] = {0, 0, 0};
  if (nargs > 3) return -1; /* icase holds three arguments */
  for (int k = 0; k < nargs; k++)
    if (!nbc__type_is_number(types[k])) return -1;
  for (int i = 0; i < ncases; i++) {
    const nbc__type *formals[3];
    for (int k = 0; k < nargs; k++) formals[k] = T(cases[i].args[k]);
    int rate[3];
    if (!nbc__type_rate(types, formals, nargs, true, rate)) continue;
    if (best < 0 || nbc__type_rate_less(rate, best_rate)) {
      best = i;
      memcpy(best_rate, rate, sizeof rate);
    }
  }
  return best;
}

/* Records the call with every argument converted to argtypes[i] (NULL: kept as it is). */
static const nbc__type *intrinsic_call(infer *I, nbc__node *n, const char *fname, int nargs,
                                       const nbc__type **argtypes, const nbc__type *ret) {
  nbc__call *c = call_new(I, n, NBC__B_CUDA_INTRINSIC, fname, nargs);
  if (!c) return NULL;
  for (int i = 0; i < nargs; i++) {
    nbc__node *a = n->list.items[i];
    if (a->kind == NBC__N_KEYWORD) a = a->a;
    c->argtypes[i] = argtypes[i] ? argtypes[i] : a->type;
    if (argtypes[i]) nbc__infer_cast(a, argtypes[i]);
  }
  c->ret = ret;
  return ret;
}

/* Mask and lane arguments: numba truncates any integer to 32 bits. */
static bool int_arg(infer *I, nbc__node *n, const char *fname, const nbc__type *t,
                    const char *what) {
  if (nbc__type_is_int(t)) return true;
  TYPING(I, n, "%s() %s must be an integer, not %s", fname, what, nbc__infer_tname(I, t));
  return false;
}

static const nbc__type *call_cuda_intrinsic(infer *I, nbc__node *n, const char *fname,
                                            const nbc__type **types, int nargs) {
  const char *name = fname + 5;
  const nbc__type *conv[3] = {NULL, NULL, NULL};
  nbc__node **args = n->list.items;
  if (strcmp(name, "syncwarp") == 0) {
    /* syncwarp() or syncwarp(mask): numba's (none) and (none, int32) cases; mask= is
     * accepted too (numba's stub names the parameter so). */
    if (nargs == 1 && args[0]->kind == NBC__N_KEYWORD && strcmp(args[0]->str, "mask") != 0)
      return TYPING(I, args[0], "%s() got an unexpected keyword argument '%s'", fname,
                    args[0]->str),
             NULL;
    if (nargs > 1 || (nargs == 1 && (!nbc__type_is_number(types[0]) ||
                                     !nbc__type_can_convert(types[0], T(NBC__T_INT32)))))
      return arg_list_error(I, n, fname, types, nargs);
    conv[0] = T(NBC__T_INT32);
    return intrinsic_call(I, n, fname, nargs, conv, T(NBC__T_NONE));
  }
  if (!no_keywords(I, n, fname)) return NULL;
  bool shfl = strncmp(name, "shfl_", 5) == 0;
  bool vote = strcmp(name, "ballot_sync") == 0 || strcmp(name, "all_sync") == 0 ||
              strcmp(name, "any_sync") == 0 || strcmp(name, "eq_sync") == 0;
  bool barrier = strncmp(name, "syncthreads_", 12) == 0;
  bool match = strncmp(name, "match_", 6) == 0;
  int want = shfl || strcmp(name, "fma") == 0 || strcmp(name, "selp") == 0 ? 3
             : vote || match                                               ? 2
             : barrier || strcmp(name, "popc") == 0 || strcmp(name, "brev") == 0 ||
                     strcmp(name, "clz") == 0 || strcmp(name, "ffs") == 0 ||
                     strcmp(name, "cbrt") == 0 || strcmp(name, "nanosleep") == 0
                 ? 1
                 : 0;
  if (nargs != want) return arg_list_error(I, n, fname, types, nargs);
  if (want == 0) {
    /* activemask, lanemask_lt: uint32; the fences: none. */
    bool mask = strcmp(name, "activemask") == 0 || strcmp(name, "lanemask_lt") == 0;
    return intrinsic_call(I, n, fname, 0, conv, T(mask ? NBC__T_UINT32 : NBC__T_NONE));
  }
  if (shfl) {
    nbc__type_kind k = types[1]->kind;
    if (k != NBC__T_INT32 && k != NBC__T_INT64 && k != NBC__T_FLOAT32 && k != NBC__T_FLOAT64)
      return TYPING(I, args[1], "%s only supports 32- and 64-bit ints and floats, not %s",
                    fname, nbc__infer_tname(I, types[1])),
             NULL;
    if (!int_arg(I, args[0], fname, types[0], "mask") ||
        !int_arg(I, args[2], fname, types[2],
                 strcmp(name, "shfl_sync") == 0       ? "src_lane"
                 : strcmp(name, "shfl_xor_sync") == 0 ? "lane_mask"
                                                      : "delta"))
      return NULL;
    conv[0] = conv[2] = T(NBC__T_INT32);
    return intrinsic_call(I, n, fname, 3, conv, types[1]);
  }
  if (vote) {
    if (!nbc__type_is_int(types[0]))
      return TYPING(I, args[0], "Mask type must be an integer. Got %s",
                    nbc__infer_tname(I, types[0])),
             NULL;
    if (!nbc__type_is_int(types[1]) && !is_kind(types[1], NBC__T_BOOL))
      return TYPING(I, args[1], "Predicate must be an integer or boolean. Got %s",
                    nbc__infer_tname(I, types[1])),
             NULL;
    conv[0] = T(NBC__T_INT32);
    return intrinsic_call(I, n, fname, 2, conv,
                          T(strcmp(name, "ballot_sync") == 0 ? NBC__T_INT32 : NBC__T_BOOL));
  }
  if (barrier) {
    /* numba-cuda: an integer predicate (not a boolean), truncated to int32. */
    if (!nbc__type_is_int(types[0])) return arg_list_error(I, n, fname, types, nargs);
    conv[0] = T(NBC__T_INT32);
    return intrinsic_call(I, n, fname, 1, conv, T(NBC__T_INT32));
  }
  if (strcmp(name, "selp") == 0) {
    nbc__type_kind k = types[1]->kind;
    bool ok = nbc__type_equal(types[1], types[2]) &&
              (k == NBC__T_FLOAT64 || k == NBC__T_FLOAT32 || k == NBC__T_INT16 ||
               k == NBC__T_UINT16 || k == NBC__T_INT32 || k == NBC__T_UINT32 ||
               k == NBC__T_INT64 || k == NBC__T_UINT64);
    if (!ok) return arg_list_error(I, n, fname, types, nargs);
    /* numba types any predicate but only a boolean lowers (select needs an i1). */
    if (!is_kind(types[0], NBC__T_BOOL))
      return TYPING(I, args[0], "%s() predicate must be a boolean, not %s", fname,
                    nbc__infer_tname(I, types[0])),
             NULL;
    return intrinsic_call(I, n, fname, 3, conv, types[1]);
  }
  if (match) {
    int i = icase_resolve(match_cases, 4, types, 2);
    if (i < 0) return arg_list_error(I, n, fname, types, nargs);
    conv[0] = T(match_cases[i].args[0]);
    conv[1] = T(match_cases[i].args[1]);
    const nbc__type *ret = T(NBC__T_INT32);
    if (strcmp(name, "match_all_sync") == 0) {
      const nbc__type *items[2] = {T(NBC__T_INT32), T(NBC__T_BOOL)}; /* (mask, pred) */
      ret = nbc__type_tuple(I->ctx, items, 2);
    }
    return intrinsic_call(I, n, fname, 2, conv, ret);
  }
  const icase *cases;
  int ncases;
  if (strcmp(name, "nanosleep") == 0)
    cases = nanosleep_cases, ncases = 1;
  else if (strcmp(name, "popc") == 0 || strcmp(name, "clz") == 0)
    cases = popc_cases, ncases = (int)(sizeof popc_cases / sizeof *popc_cases);
  else if (strcmp(name, "ffs") == 0)
    cases = ffs_cases, ncases = (int)(sizeof ffs_cases / sizeof *ffs_cases);
  else if (strcmp(name, "brev") == 0)
    cases = brev_cases, ncases = (int)(sizeof brev_cases / sizeof *brev_cases);
  else if (strcmp(name, "cbrt") == 0)
    cases = cbrt_cases, ncases = (int)(sizeof cbrt_cases / sizeof *cbrt_cases);
  else
    cases = fma_cases, ncases = (int)(sizeof fma_cases / sizeof *fma_cases);
  int i = icase_resolve(cases, ncases, types, nargs);
  if (i < 0) return arg_list_error(I, n, fname, types, nargs);
  for (int k = 0; k < nargs; k++)
    conv[k] = T(cases[i].args[k]);
  /* numba-cuda lowers ffs only for 32- and 64-bit integers. */
  if (strcmp(name, "ffs") == 0 && nbc__type_bits(conv[0]) < 32)
    return TYPING(I, n, "%s() of %s is not supported (numba-cuda has no %s lowering)", fname,
                  nbc__infer_tname(I, conv[0]), nbc__infer_tname(I, conv[0])),
           NULL;
  return intrinsic_call(I, n, fname, nargs, conv, T(cases[i].ret));
}

/* A kernel-language function of no arguments (syncthreads(), cg.this_grid()): the builtin,
 * returning ret. */
static const nbc__type *call_no_args(infer *I, nbc__node *n, const char *fname,
                                     const nbc__type **types, int nargs, nbc__builtin builtin,
                                     const nbc__type *ret) {
  if (!no_keywords(I, n, fname)) return NULL;
  if (nargs) return arg_list_error(I, n, fname, types, nargs);
  nbc__call *c = call_new(I, n, builtin, fname, 0);
  if (!c) return NULL;
  c->ret = ret;
  return c->ret;
}

/* grid(ndim) / gridsize(ndim): ndim a constant 1, 2 or 3. */
static const nbc__type *call_grid(infer *I, nbc__node *n, const char *fname,
                                  const nbc__type **types, int nargs) {
  if (!no_keywords(I, n, fname)) return NULL;
  int64_t nd;
  if (nargs == 1 && !nbc__infer_const_int(I, n->list.items[0], &nd)) /* numba's words too */
    return TYPING(I, n, "%s() takes one constant argument, 1, 2 or 3 (RequireLiteralValue: "
                        "its argument is not a constant)", fname),
           NULL;
  if (nargs != 1 || nd < 1 || nd > 3)
    return TYPING(I, n, "%s() takes one constant argument, 1, 2 or 3", fname), NULL;
  nbc__call *c =
      call_new(I, n, strcmp(fname, "cuda.grid") == 0 ? NBC__B_CUDA_GRID : NBC__B_CUDA_GRIDSIZE,
               fname, 1);
  if (!c) return NULL;
  c->argtypes[0] = types[0];
  if (nd == 1)
    c->ret = T(NBC__T_INT64);
  else {
    const nbc__type *items[3] = {T(NBC__T_INT64), T(NBC__T_INT64), T(NBC__T_INT64)};
    c->ret = nbc__type_tuple(I->ctx, items, (int)nd);
  }
  return c->ret;
}

/* const.array_like(a): numba's constant-memory copy of a global array. Global arrays are
 * frozen into constant memory already (NBC_GLOBAL_ARRAY), so the call is `a` itself; any
 * other argument is refused, as numba refuses a non-constant one. */
static const nbc__type *call_const_array(infer *I, nbc__node *n, const char *fname,
                                         const nbc__type **types, int nargs) {
  if (!no_keywords(I, n, fname)) return NULL;
  const nbc__node *a = nargs == 1 ? n->list.items[0] : NULL;
  const nbc__global *G = a && a->kind == NBC__N_NAME && a->var < 0 ? a->info : NULL;
  if (!G || G->g.kind != NBC_GLOBAL_ARRAY || !types[0])
    return TYPING(I, n, "%s() takes one global array (a numpy array of the kernel's module, "
                  "frozen at compile time)", fname),
           NULL;
  nbc__call *c = call_new(I, n, NBC__B_CUDA_CONST_ARRAY, fname, 1);
  if (!c) return NULL;
  c->argtypes[0] = types[0];
  c->ret = types[0];
  return c->ret;
}

/* cuda.<name>(...): cuda_names.c's table says which typing path the name takes. */
/* numba.cuda.libdevice.<f>(...): libdevice's function with numba-cuda's signature (its
 * ConcreteTemplate: the arguments convert to the parameter types); a function that also
 * stores results through pointers returns them in a tuple after its own result. */
static const nbc__type *call_libdevice(infer *I, nbc__node *n, const char *fname,
                                       const nbc__type **types, int nargs) {
  const char *name = fname + strlen("cuda.libdevice.");
  const nbc__type *ret;
  const char *codes;
  if (!no_keywords(I, n, fname)) return NULL;
  if (!nbc__libdevice_find(name, &ret, &codes))
    return UNSUPPORTED(I, n, "unknown libdevice function %s", fname), NULL;
  const nbc__type *params[8], *outs[9];
  int nvalues = 0, nouts = 0;
  if (ret->kind != NBC__T_NONE) outs[nouts++] = ret;
  for (const char *c = codes; c[0] && c[1] && nvalues < 8 && nouts < 9; c += 2) {
    if (c[1] == 'p')
      outs[nouts++] = nbc__libdevice_type(c[0]);
    else
      params[nvalues++] = nbc__libdevice_type(c[0]);
  }
  if (nargs != nvalues) return arg_list_error(I, n, fname, types, nargs);
  for (int i = 0; i < nargs; i++)
    if (!nbc__type_is_number(types[i]) || !nbc__type_can_convert(types[i], params[i]))
      return arg_list_error(I, n, fname, types, nargs);
  nbc__call *c = call_new(I, n, NBC__B_LIBDEVICE, nbc__arena_printf(I->ctx->arena, "__nv_%s", name),
                          nargs);
  if (!c) return NULL;
  for (int i = 0; i < nargs; i++)
    c->argtypes[i] = params[i];
  bool pointers = strchr(codes, 'p') != NULL;
  c->ret = !pointers ? ret : nbc__type_tuple(I->ctx, outs, nouts);
  return c->ret;
}

/* numba.cuda.fp16.<f>(...) and numba.cuda.bf16.<f>(...): cuda_fp16.h's or cuda_bf16.h's
 * function through its Numba-ABI wrapper in the shim (fp16.c), typed by numba-cuda's
 * signature: the arguments convert to the parameter types; lowered as a declared device
 * function. */
static const nbc__type *call_fp16(infer *I, nbc__node *n, const char *fname,
                                  const nbc__type **types, int nargs) {
  const nbc__type *ret, *params[4];
  int nparams = 0;
  const char *symbol;
  if (!no_keywords(I, n, fname)) return NULL;
  bool bf16 = strncmp(fname, "cuda.bf16.", 10) == 0;
  if (!(bf16 ? nbc__bf16_find : nbc__fp16_find)(I->ctx, fname + 10, &ret, params, &nparams,
                                                &symbol))
    return UNSUPPORTED(I, n, "unknown %s function %s", bf16 ? "bf16" : "fp16", fname), NULL;
  if (nargs != nparams) return arg_list_error(I, n, fname, types, nargs);
  for (int i = 0; i < nargs; i++)
    if (!(nbc__type_is_number(types[i]) || nbc__type_is_bf16(types[i])) ||
        !nbc__type_can_convert(types[i], params[i]))
      return arg_list_error(I, n, fname, types, nargs);
  nbc__call *c = call_new(I, n, NBC__B_EXTERN, symbol, nargs);
  if (!c) return NULL;
  for (int i = 0; i < nargs; i++)
    c->argtypes[i] = params[i];
  c->ret = ret;
  return c->ret;
}

/* A vector type's constructor (numba's vector_types.py): arguments that give the vector's
 * elements in order, each a number (converted to the element type) or a vector of the same
 * element type (its elements; x1 vectors count as one), count elements in all. */
static const nbc__type *call_vector(infer *I, nbc__node *n, const char *fname,
                                    const nbc__type **types, int nargs) {
  const char *base;
  int count;
  if (!no_keywords(I, n, fname)) return NULL;
  if (!nbc__vector_type_find(fname + strlen("cuda."), &base, &count))
    return UNSUPPORTED(I, n, "unknown vector type %s", fname), NULL;
  const nbc__type *dtype = nbc__type_by_name(base, strlen(base));
  int total = 0;
  for (int i = 0; i < nargs; i++) {
    if (types[i] && types[i]->kind == NBC__T_VECTOR && nbc__type_equal(types[i]->dtype, dtype))
      total += types[i]->count;
    else if (types[i] && nbc__type_is_number(types[i]) && !nbc__type_is_complex(types[i]))
      total += 1;
    else
      return arg_list_error(I, n, fname, types, nargs);
  }
  if (total != count) return arg_list_error(I, n, fname, types, nargs);
  nbc__call *c = call_new(I, n, NBC__B_VECTOR, fname, nargs);
  if (!c) return NULL;
  for (int i = 0; i < nargs; i++)
    c->argtypes[i] = types[i];
  c->ret = nbc__type_vector(I->ctx, dtype, count);
  return c->ret;
}

/* numba's carray(ptr, shape, dtype=None) / farray: an array of the given shape (an integer or
 * a tuple of integers) in C or F order over the memory ptr, a CPointer, points to; its dtype
 * is the pointer's, and a dtype given must be that one (numba's BaseCArrayTemplate). */
static const nbc__type *call_carray(infer *I, nbc__node *n, const char *fname,
                                    const nbc__type **types, int nargs) {
  const char *what = fname + 5;
  int npos = positional(n);
  const nbc__type *dtype_arg = npos > 2 ? types[2] : NULL;
  for (int i = npos; i < nargs; i++) {
    const char *kw = n->list.items[i]->str;
    if (!kw || strcmp(kw, "dtype") != 0 || dtype_arg)
      return TYPING(I, n->list.items[i], "%s() got an unexpected keyword argument '%s'", what,
                    kw ? kw : "?"),
             NULL;
    dtype_arg = types[i];
  }
  if (npos < 2 || npos > 3)
    return TYPING(I, n, "%s() takes a pointer, a shape and an optional dtype (%d given)", what,
                  nargs),
           NULL;
  if (types[0]->kind != NBC__T_POINTER)
    return TYPING(I, n->list.items[0], "%s() takes a pointer (numba's CPointer) as its first "
                  "argument, not %s", what, nbc__infer_tname(I, types[0])),
           NULL;
  const nbc__type *shape = types[1];
  int ndim = 1;
  if (shape->kind == NBC__T_TUPLE) {
    ndim = shape->count;
    for (int k = 0; k < ndim; k++)
      if (!nbc__type_is_int(shape->items[k])) ndim = -1;
  } else if (!nbc__type_is_int(shape)) {
    ndim = -1;
  }
  if (ndim < 1 || ndim > 32)
    return TYPING(I, n->list.items[1], "%s() takes a shape of 1 to 32 integers, not %s", what,
                  nbc__infer_tname(I, shape)),
           NULL;
  const nbc__type *dt = types[0]->dtype;
  if (dtype_arg) {
    const nbc__type *want = dtype_of(I, n, dtype_arg);
    if (!want) return NULL;
    if (!nbc__type_equal(want, dt))
      return TYPING(I, n, "%s(): mismatching dtype '%s' for pointer type '%s'", what,
                    nbc__infer_tname(I, want), nbc__infer_tname(I, types[0])),
             NULL;
  }
  nbc__call *c = call_new(I, n, NBC__B_CARRAY, fname, 2);
  const nbc__type *at = c ? nbc__type_array(I->ctx, dt, ndim, what[0] == 'c' ? 'C' : 'F') : NULL;
  if (!at) return NULL;
  c->argtypes[0] = types[0];
  c->argtypes[1] = shape;
  c->ret = at;
  return at;
}

static const nbc__type *call_cuda(infer *I, nbc__node *n, const char *fname,
                                  const nbc__type **types, int nargs) {
  switch (nbc__cuda_name_call(nbc__cuda_name_find(fname + 5))) {
  case NBC__KERNEL_CALL_ATOMIC:
    return call_atomic(I, n, fname, types, nargs);
  case NBC__KERNEL_CALL_CONST_ARRAY:
    return call_const_array(I, n, fname, types, nargs);
  case NBC__KERNEL_CALL_INTRINSIC:
    return call_cuda_intrinsic(I, n, fname, types, nargs);
  case NBC__KERNEL_CALL_SYNCTHREADS:
    return call_no_args(I, n, fname, types, nargs, NBC__B_CUDA_SYNCTHREADS, T(NBC__T_NONE));
  case NBC__KERNEL_CALL_GRID:
    return call_grid(I, n, fname, types, nargs);
  case NBC__KERNEL_CALL_LIBDEVICE:
    return call_libdevice(I, n, fname, types, nargs);
  case NBC__KERNEL_CALL_THIS_GRID: /* numba's GridGroup: the grid of the cooperative launch */
    return call_no_args(I, n, fname, types, nargs, NBC__B_CG_THIS_GRID, T(NBC__T_GRID_GROUP));
  case NBC__KERNEL_CALL_FP16:
  case NBC__KERNEL_CALL_BF16:
    return call_fp16(I, n, fname, types, nargs);
  case NBC__KERNEL_CALL_VECTOR:
    return call_vector(I, n, fname, types, nargs);
  case NBC__KERNEL_CALL_CACHE_HINT:
    return call_cache_hint(I, n, fname);
  case NBC__KERNEL_CALL_CARRAY:
    return call_carray(I, n, fname, types, nargs);
  case NBC__KERNEL_CALL_ARRAY: /* typed before its arguments, in nbc__infer_call */
  case NBC__KERNEL_CALL_NONE:
    break;
  }
  return UNSUPPORTED(I, n, "unsupported call of %s", fname), NULL;
}

/* The embedded cmath source resolves its own names (its imports and constants): a resolver
 * without a function makes global_lookup use the module's bindings. */
static const nbc_resolver_t own_names = {NULL, NULL};

static bool narrow_complex(const nbc__type *t) {
  switch (t->kind) {
  case NBC__T_COMPLEX64: case NBC__T_FLOAT32: case NBC__T_FLOAT16: case NBC__T_BOOL:
  case NBC__T_INT8: case NBC__T_UINT8: case NBC__T_INT16: case NBC__T_UINT16:
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
static const nbc__type *call_cmath(infer *I, nbc__node *n, const char *name,
                                   const nbc__type **types, int nargs) {
  char what[64], fn[64];
  snprintf(what, sizeof what, "cmath.%s", name);
  if (!no_keywords(I, n, what)) return NULL;
  nbc__cmath_kind kind = nbc__cmath_find(name);
  const nbc__type *argv[2] = {NULL, NULL};
  if (kind == NBC__CMATH_RECT) {
    if (nargs != 2 || !nbc__type_is_float(types[0]) || !nbc__type_is_float(types[1]))
      return arg_list_error(I, n, what, types, nargs);
    snprintf(fn, sizeof fn, "_rect_impl");
    argv[0] = types[0];
    argv[1] = types[1];
  } else if (kind == NBC__CMATH_OVERLOAD) {
    if (nargs != 1 || !nbc__type_is_complex(types[0]))
      return arg_list_error(I, n, what, types, nargs);
    snprintf(fn, sizeof fn, "_%s_impl", name);
    argv[0] = types[0];
  } else {
    bool base = strcmp(name, "log") == 0 && nargs == 2;
    if ((nargs != 1 && !base) || !nbc__type_is_number(types[0]) ||
        (base && !nbc__type_is_number(types[1])))
      return arg_list_error(I, n, what, types, nargs);
    bool c64 = narrow_complex(types[0]) && (!base || narrow_complex(types[1]));
    const nbc__type *ct = T(c64 ? NBC__T_COMPLEX64 : NBC__T_COMPLEX128);
    argv[0] = argv[1] = ct;
    for (int i = 0; i < nargs; i++) nbc__infer_cast(n->list.items[i], ct);
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
  G->g.resolver = &own_names;
  if (!G->g.name) return NULL;
  return call_python(I, n, G, argv, nargs);
}

/* numba's resolve_reshape: a contiguous (C or F) array takes integers or one tuple of them,
 * and gives a view of as many dimensions in its own layout. */
static const nbc__type *call_reshape(infer *I, nbc__node *n, const nbc__type *at,
                                     const nbc__type **types, int nargs) {
  for (int i = 0; i < nargs; i++)
    if (n->list.items[i]->kind == NBC__N_KEYWORD)
      return TYPING(I, n, "reshape() takes no keyword arguments"), NULL;
  if (at->layout != 'C' && at->layout != 'F')
    return TYPING(I, n, "reshape() supports contiguous array only (%s)",
                  nbc__infer_tname(I, at)),
           NULL;
  if (nargs == 0) return TYPING(I, n, "reshape() take at least one arg"), NULL;
  int ndim = nargs;
  if (nargs == 1 && types[0]->kind == NBC__T_TUPLE) {
    ndim = types[0]->count;
    for (int k = 0; k < ndim; k++)
      if (!nbc__type_is_int(types[0]->items[k]))
        return TYPING(I, n, "reshape() arg cannot be %s", nbc__infer_tname(I, types[0])),
               NULL;
  } else {
    for (int i = 0; i < nargs; i++)
      if (!nbc__type_is_int(types[i]))
        return TYPING(I, n->list.items[i], "reshape() arg cannot be %s",
                      nbc__infer_tname(I, types[i])),
               NULL;
  }
  if (ndim < 1 || ndim > 32)
    return UNSUPPORTED(I, n, "reshape() to %d dimensions is not supported (1 to 32 are)",
                       ndim),
           NULL;
  nbc__type *t = (nbc__type *)nbc__type_array(I->ctx, at->dtype, ndim, at->layout);
  nbc__call *c = t ? call_new(I, n, NBC__B_RESHAPE, "reshape", nargs) : NULL;
  if (!c) return NULL;
  t->readonly = at->readonly;
  memcpy(c->argtypes, types, sizeof *types * (size_t)nargs);
  c->ret = t;
  return t;
}

/* a.view(dtype) as numba types it (resolve_view): the same array with another number dtype,
 * its ndim and layout kept; whether the sizes fit is numba's run-time check (ValueError
 * "new type not compatible with array"). */
static const nbc__type *call_view(infer *I, nbc__node *n, const nbc__type *at) {
  if (n->list.count != 1 || n->list.items[0]->kind == NBC__N_KEYWORD)
    return TYPING(I, n, "view() takes exactly one argument, the dtype"), NULL;
  const nbc__type *t = nbc__infer_expr(I, n->list.items[0]);
  const nbc__type *dt = t ? dtype_of(I, n->list.items[0], t) : NULL;
  if (!dt) return NULL;
  if (!nbc__type_is_number(dt) || !nbc__type_is_number(at->dtype))
    return UNSUPPORTED(I, n, "view() of %s as %s: nbcuda reinterprets arrays of numbers only",
                       nbc__infer_tname(I, at), nbc__infer_tname(I, dt)),
           NULL;
  nbc__type *vt = (nbc__type *)nbc__type_array(I->ctx, dt, at->ndim, at->layout);
  nbc__call *c = vt ? call_new(I, n, NBC__B_VIEW, "view", 1) : NULL;
  if (!c) return NULL;
  vt->readonly = at->readonly;
  c->argtypes[0] = t;
  c->ret = vt;
  n->a->type = at;
  return vt;
}

/* operator.setitem(a, i, v): numba's `a[i] = v`, typed as that assignment is. The first walk
 * makes the call's list the target a[i] (marked "$setitem") and v, which the later walks find
 * as they are; the call is None. */
static const nbc__type *call_setitem(infer *I, nbc__node *n) {
  bool rewritten = n->list.count == 2 && n->list.items[0]->alias &&
                   strcmp(n->list.items[0]->alias, "$setitem") == 0;
  if (!rewritten) {
    for (int i = 0; i < n->list.count; i++)
      if (n->list.items[i]->kind == NBC__N_KEYWORD)
        return TYPING(I, n, "operator.setitem() takes no keyword arguments"), NULL;
    if (n->list.count != 3)
      return TYPING(I, n, "operator.setitem() takes exactly 3 arguments (%d given)",
                    n->list.count),
             NULL;
    nbc__node *target = nbc__infer_alloc(I, sizeof *target);
    nbc__node **items = nbc__infer_alloc(I, sizeof *items * 2);
    if (!target || !items) return NULL;
    *target = (nbc__node){.kind = NBC__N_SUBSCRIPT, .tok = n->tok, .a = n->list.items[0],
                          .b = n->list.items[1], .var = -1, .alias = "$setitem"};
    items[0] = target;
    items[1] = n->list.items[2];
    n->list.items = items;
    n->list.count = 2;
  }
  nbc__node *target = n->list.items[0], *value = n->list.items[1];
  const nbc__type *t = nbc__infer_expr(I, value);
  if (!t) return NULL;
  int failed = I->failed;
  nbc__infer_assign_target(I, target, value, t);
  if (I->failed != failed) return NULL;
  nbc__call *c = call_new(I, n, NBC__B_STORE, "setitem", 2);
  if (!c) return NULL;
  c->argtypes[0] = target->type;
  c->argtypes[1] = t;
  c->ret = T(NBC__T_NONE);
  return c->ret;
}

/* a.transpose(axes) as numba types it (resolve_transpose): the axes given as integers or as
 * one tuple of them, one per dimension, each once (negative from the end); the view is
 * a.T's with layout A (a 1-d array's transpose(0) is the array). The axes must be constants
 * here (numba checks them at run time, raising ValueError). */
static const nbc__type *call_transpose(infer *I, nbc__node *n, const nbc__type *at) {
  nbc__node *const *items = n->list.items;
  int count = n->list.count;
  if (count == 1 && items[0]->kind == NBC__N_TUPLE) {
    count = items[0]->list.count;
    items = items[0]->list.items;
  }
  for (int k = 0; k < n->list.count; k++)
    if (n->list.items[k]->kind == NBC__N_KEYWORD)
      return TYPING(I, n, "transpose() takes no keyword arguments"), NULL;
  if (count != at->ndim)
    return TYPING(I, n, "transpose() of %s takes %d axes, not %d", nbc__infer_tname(I, at),
                  at->ndim, count),
           NULL;
  int64_t perm[32];
  bool seen[32] = {false};
  for (int k = 0; k < count && k < 32; k++) {
    int64_t ax;
    if (!nbc__infer_const_int(I, items[k], &ax))
      return UNSUPPORTED(I, items[k], "transpose() axes must be constant integers"), NULL;
    if (ax < -at->ndim || ax >= at->ndim)
      return TYPING(I, items[k], "ValueError: axis is out of bounds for array of given "
                                 "dimension"),
             NULL;
    if (ax < 0) ax += at->ndim;
    if (seen[ax]) return TYPING(I, items[k], "ValueError: repeated axis in transpose"), NULL;
    seen[ax] = true;
    perm[k] = ax;
    if (!nbc__infer_expr(I, items[k])) return NULL;
  }
  nbc__type *vt = (nbc__type *)nbc__type_array(I->ctx, at->dtype, at->ndim,
                                               at->ndim == 1 ? at->layout : 'A');
  nbc__call *c = vt ? call_new(I, n, NBC__B_TRANSPOSE, "transpose", 0) : NULL;
  if (!c) return NULL;
  vt->readonly = at->readonly;
  c->shape = nbc__infer_alloc(I, sizeof *c->shape * (size_t)at->ndim);
  if (!c->shape) return NULL;
  memcpy(c->shape, perm, sizeof *perm * (size_t)at->ndim);
  c->ret = vt;
  n->a->type = at;
  return vt;
}

/* a.fill(v): numba's `a[:] = v` (arrayobj.py's arr_fill). The first walk makes the call's
 * list the view a[:] and v, which the later walks find as they are. */
static const nbc__type *call_fill(infer *I, nbc__node *n, const nbc__type *at) {
  bool rewritten = n->list.count == 2 && n->list.items[0]->kind == NBC__N_SUBSCRIPT &&
                   n->list.items[0]->a == n->a->a;
  if (!rewritten) {
    if (n->list.count != 1 || n->list.items[0]->kind == NBC__N_KEYWORD)
      return TYPING(I, n, "fill() takes exactly one positional argument (the value)"), NULL;
    nbc__node *view = nbc__infer_alloc(I, sizeof *view);
    nbc__node *all = nbc__infer_alloc(I, sizeof *all);
    nbc__node **items = nbc__infer_alloc(I, sizeof *items * 2);
    if (!view || !all || !items) return NULL;
    *all = (nbc__node){.kind = NBC__N_SLICE, .tok = n->tok, .var = -1};
    *view = (nbc__node){.kind = NBC__N_SUBSCRIPT, .tok = n->tok, .a = n->a->a, .b = all,
                        .var = -1};
    items[0] = view;
    items[1] = n->list.items[0];
    n->list.items = items;
    n->list.count = 2;
  }
  nbc__node *view = n->list.items[0], *value = n->list.items[1];
  const nbc__type *vt = nbc__infer_array_index(I, view, at, view->b);
  const nbc__type *t = nbc__infer_expr(I, value);
  if (!vt || !t) return NULL;
  view->type = vt;
  if (vt->readonly) return TYPING(I, n, "cannot modify a read-only array"), NULL;
  if (!nbc__type_is_number(t) || !nbc__type_can_convert(t, vt->dtype))
    return TYPING(I, value, "Cannot convert %s to %s in fill()", nbc__infer_tname(I, t),
                  nbc__infer_tname(I, vt->dtype)),
           NULL;
  nbc__infer_cast(value, vt->dtype);
  nbc__call *c = call_new(I, n, NBC__B_STORE, "fill", 2);
  if (!c) return NULL;
  c->argtypes[0] = vt;
  c->argtypes[1] = vt->dtype;
  c->ret = T(NBC__T_NONE);
  return c->ret;
}

/* The function `name` of arraymath.c's generated source src (NULL: out of memory), as a
 * global the call_python of a call resolves (the source's own imports name its globals). */
static nbc__global *generated_function(infer *I, const char *name, const char *src) {
  nbc__global *G = name && src ? nbc__infer_alloc(I, sizeof *G) : NULL;
  if (!G) {
    nbc__diag_oom(I->ctx);
    I->failed = true;
    return NULL;
  }
  memset(G, 0, sizeof *G);
  G->g.kind = NBC_GLOBAL_FUNCTION;
  G->g.name = name;
  G->g.source = src;
  G->g.filename = NBC__ARRAYMATH_FILE;
  G->g.first_line = 1;
  G->g.resolver = &own_names;
  return G;
}

/* a.sum(), np.sum(a) and the other reductions of arrays: a call of arraymath.c's function for
 * the array's type, the array its one argument (the call node's list becomes that). */
static const nbc__type *call_reduction(infer *I, nbc__node *n, const char *name,
                                       nbc__node *array, int extra_args) {
  if (extra_args)
    return UNSUPPORTED(I, n, "%s() with arguments (axis, dtype, out...) is not supported in "
                             "kernels: only the reduction of the whole array is", name),
           NULL;
  const nbc__type *t = nbc__infer_expr(I, array);
  if (!t) return NULL;
  if (t->kind != NBC__T_ARRAY)
    return TYPING(I, n, "%s() of %s is not supported in kernels (arrays are)", name,
                  nbc__infer_tname(I, t)),
           NULL;
  if (nbc__type_is_complex(t->dtype) && strncmp(name, "arg", 3) == 0)
    return TYPING(I, n, "%s() of %s: complex numbers have no order", name,
                  nbc__infer_tname(I, t)),
           NULL;
  if (!nbc__type_is_number(t->dtype))
    return TYPING(I, n, "%s() of %s is not supported: its elements are not numbers", name,
                  nbc__infer_tname(I, t)),
           NULL;
  const char *why = NULL;
  if ((strcmp(name, "all") == 0 || strcmp(name, "any") == 0) && !nbc__type_truth(t->dtype, &why))
    return TYPING(I, n, "%s() of %s: %s", name, nbc__infer_tname(I, t), why), NULL;
  nbc__node **items = nbc__infer_alloc(I, sizeof *items);
  nbc__global *G = generated_function(I, nbc__arena_printf(I->ctx->arena, "_%s", name),
                                      nbc__array_reduction_source(I->ctx, name, t));
  if (!items || !G) return NULL;
  items[0] = array;
  n->list.items = items;
  n->list.count = 1;
  const nbc__type *argv[1] = {t};
  return call_python(I, n, G, argv, 1);
}

/* sum(it[, start]), min(it) and max(it) of a 1-d array or a tuple: a call of arraymath.c's
 * function, as numba's builtins.py overloads them; sum's default start, 0, becomes the call's
 * second argument. */
static const nbc__type *call_iterable(infer *I, nbc__node *n, const char *name,
                                      const nbc__type **types, int nargs) {
  bool sum = strcmp(name, "sum") == 0;
  if (nargs < 1 || nargs > (sum ? 2 : 1))
    return TYPING(I, n, "%s() takes %s", name, sum ? "an iterable and an optional start"
                                                    : "one iterable or several values"),
           NULL;
  const nbc__type *it = types[0];
  bool tuple = it->kind == NBC__T_TUPLE, array = it->kind == NBC__T_ARRAY;
  bool range = sum && it->kind == NBC__T_RANGE && it->dtype; /* sum(range(...)) */
  if (!(tuple && it->count > 0) && !(array && it->ndim == 1) && !range)
    return TYPING(I, n, "%s() of %s is not supported in kernels (1-d arrays and non-empty "
                        "tuples are: a 2-d array iterates its rows)", name,
                  nbc__infer_tname(I, it)),
           NULL;
  const nbc__type *items = array || range ? it->dtype : it->items[0];
  for (int k = 0; tuple && k < it->count; k++)
    if (!nbc__type_is_number(it->items[k])) items = it->items[k];
  bool dates = !sum && nbc__type_is_datetime(items); /* of one type, as numba unifies them */
  for (int k = 0; dates && tuple && k < it->count; k++)
    dates = nbc__type_equal(it->items[k], items);
  if (!dates && (!nbc__type_is_number(items) || (!sum && nbc__type_is_complex(items))))
    return TYPING(I, n, "%s() of %s: %s", name, nbc__infer_tname(I, it),
                  sum ? "its items are not numbers" : "its items have no order"),
           NULL;
  const char *fn = sum ? "_sum" : strcmp(name, "min") == 0 ? "_min" : "_max";
  nbc__global *G = generated_function(I, fn, nbc__builtin_reduction_source(I->ctx, name, it));
  if (!G) return NULL;
  if (sum && nargs == 1) { /* numba's default start: the int64 0 */
    nbc__node *zero = nbc__infer_alloc(I, sizeof *zero);
    nbc__node **list = nbc__infer_alloc(I, sizeof *list * 2);
    if (!zero || !list) return NULL;
    *zero = (nbc__node){.kind = NBC__N_INT, .tok = n->tok, .var = -1};
    list[0] = n->list.items[0];
    list[1] = zero;
    n->list.items = list;
    n->list.count = 2;
    if (!nbc__infer_expr(I, zero)) return NULL;
  }
  const nbc__type *argv[2] = {it, sum ? (nargs == 2 ? types[1] : T(NBC__T_INT64)) : NULL};
  if (sum && !nbc__type_is_number(argv[1]))
    return TYPING(I, n, "sum() start must be a number, not %s", nbc__infer_tname(I, argv[1])),
           NULL;
  return call_python(I, n, G, argv, sum ? 2 : 1);
}

/* A Python function: find its FUNCDEF and nbc__infer_specialise it for the argument types. */
/* A call of a function declared with its signature (numba's declare_device): the
 * arguments convert to the declared parameter types, the result is the declared type (a
 * scalar, or a CPointer as numba's cooperative-groups example returns). */
static const nbc__type *call_declared(infer *I, nbc__node *n, const nbc__global *G,
                                      const nbc__type **types, int nargs) {
  const char *name = G->g.name ? G->g.name : "?";
  if (!no_keywords(I, n, name)) return NULL;
  for (const char *p = name; *p; p++)
    if (!(isalnum((unsigned char)*p) || *p == '_' || *p == '$' || *p == '.'))
      return UNSUPPORTED(I, n, "declared device function name '%s' is not a symbol", name),
             NULL;
  nbc__signature sig;
  if (!G->g.signature || !nbc__signature_parse(I->ctx, G->g.signature, &sig)) {
    I->failed = true;
    return NULL;
  }
  if (!sig.ret)
    return TYPING(I, n, "declared device function '%s' needs a return type in its signature "
                        "'%s'", name, G->g.signature),
           NULL;
  bool void_ret = sig.ret->kind == NBC__T_VOID || sig.ret->kind == NBC__T_NONE;
  if (!void_ret && !nbc__type_is_number(sig.ret) && !is_kind(sig.ret, NBC__T_POINTER))
    return UNSUPPORTED(I, n, "declared device function '%s' returns %s; nbcuda declares "
                             "functions of scalars and pointers to them", name,
                       nbc__infer_tname(I, sig.ret)),
           NULL;
  if (sig.nargs != nargs)
    return TYPING(I, n, "%s() takes %d positional argument%s but %d %s given", name,
                  sig.nargs, sig.nargs == 1 ? "" : "s", nargs, nargs == 1 ? "was" : "were"),
           NULL;
  for (int i = 0; i < nargs; i++) {
    if (is_kind(sig.args[i], NBC__T_POINTER)) { /* numba's CPointer(T): the same pointer */
      if (!nbc__type_equal(types[i], sig.args[i]))
        return TYPING(I, n->list.items[i], "cannot pass a value of type %s to '%s' as %s",
                      nbc__infer_tname(I, types[i]), name, nbc__infer_tname(I, sig.args[i])),
               NULL;
      continue;
    }
    if (!nbc__type_is_number(sig.args[i]))
      return UNSUPPORTED(I, n, "declared device function '%s' takes %s; nbcuda declares "
                               "functions of scalars and pointers to them", name,
                         nbc__infer_tname(I, sig.args[i])),
             NULL;
    if (!nbc__type_is_number(types[i]) || !nbc__type_can_convert(types[i], sig.args[i]))
      return TYPING(I, n->list.items[i], "cannot pass a value of type %s to '%s' as %s",
                    nbc__infer_tname(I, types[i]), name, nbc__infer_tname(I, sig.args[i])),
             NULL;
  }
  nbc__call *c = call_new(I, n, NBC__B_EXTERN, name, nargs);
  if (!c) return NULL;
  for (int i = 0; i < nargs; i++)
    c->argtypes[i] = sig.args[i];
  c->ret = void_ret ? T(NBC__T_NONE) : sig.ret;
  c->c_abi = G->g.declared_c_abi != 0;
  return c->ret;
}

/* Whether a value of type t is an instance of the class spec names, as numba's isinstance
 * answers at compile time: int, float, complex and bool are numba's types of Python's
 * values, int64, float64, complex128 and boolean, matched exactly (an int32 is not an int
 * there, a float32 not a float); tuple matches any tuple; a numba or numpy type
 * (numba.float32, np.int64) matches that type, a tuple display any of its items (numba-cuda
 * 0.30.4's answers). 1 or 0; -1 reported when spec is none of these. */
int nbc__infer_isinstance(infer *I, const nbc__type *t, nbc__node *spec) {
  if (spec->kind == NBC__N_TUPLE) {
    int any = 0;
    for (int i = 0; i < spec->list.count; i++) {
      int r = nbc__infer_isinstance(I, t, spec->list.items[i]);
      if (r < 0) return -1;
      any |= r;
    }
    spec->type = T(NBC__T_NONE); /* no value of its own */
    return any;
  }
  const nbc__type *c = nbc__infer_expr(I, spec);
  if (!c) return -1;
  const nbc__global *G = spec->kind == NBC__N_NAME && spec->var < 0 ? spec->info : NULL;
  if (c->kind == NBC__T_DTYPE && c->dtype) return nbc__type_equal(t, c->dtype);
  if (G && nbc__infer_is_builtin(G)) {
    const char *k = G->g.name;
    if (strcmp(k, "int") == 0) return is_kind(t, NBC__T_INT64);
    if (strcmp(k, "float") == 0) return is_kind(t, NBC__T_FLOAT64);
    if (strcmp(k, "complex") == 0) return is_kind(t, NBC__T_COMPLEX128);
    if (strcmp(k, "bool") == 0) return is_kind(t, NBC__T_BOOL);
    if (strcmp(k, "tuple") == 0) return is_kind(t, NBC__T_TUPLE);
  }
  TYPING(I, spec, "isinstance() takes int, float, complex, bool, tuple, a numba or numpy "
                  "scalar type, or a tuple of those, not %s", nbc__infer_tname(I, c));
  return -1;
}

/* isinstance(x, spec): a constant of compile time (numba's), the node made that boolean. */
static const nbc__type *call_isinstance(infer *I, nbc__node *n) {
  if (!no_keywords(I, n, "isinstance")) return NULL;
  if (n->list.count != 2)
    return TYPING(I, n, "isinstance() takes 2 arguments (%d given)", n->list.count), NULL;
  const nbc__type *t = nbc__infer_expr(I, n->list.items[0]);
  if (!t) return NULL;
  int r = nbc__infer_isinstance(I, t, n->list.items[1]);
  if (r < 0) return NULL;
  if (I->final) { /* the value is known: the node is that constant from now on */
    n->kind = NBC__N_BOOL;
    n->value.i = r;
    n->list.count = 0;
  }
  return T(NBC__T_BOOL);
}

/* The FUNCDEF a FUNCTION global names and its module: a nested function's lifted def, else
 * the function of that name in its source (loaded once per compilation); NULL reported, as
 * is a parameter list a function cannot have (nbc__infer_check_params). */
static nbc__node *function_def(infer *I, nbc__node *n, nbc__global *G,
                               const nbc__module **pmodule) {
  const nbc__module *module = G->module ? G->module : I->fn->module;
  *pmodule = module;
  nbc__node *def = G->nested ? G->nested->def : NULL;
  if (def) return nbc__infer_check_params(I->ctx, I, def) ? def : NULL;
  bool same = !G->g.source || (module && module->file && module->file->text &&
                               strcmp(G->g.source, module->file->text) == 0);
  if (same && module) def = nbc__module_function(module, G->g.name);
  if (!def && G->g.source) {
    /* Another source: load it once per compilation. */
    nbc__module *m = NULL;
    for (int i = 0; i < I->P->nmodules; i++)
      if (strcmp(I->P->modules[i]->file->text, G->g.source) == 0) m = I->P->modules[i];
    if (!m) {
      nbc__file *f = nbc__infer_alloc(I, sizeof *f);
      if (!f) return NULL;
      f->name = G->g.filename ? G->g.filename : "<string>";
      f->text = G->g.source;
      f->size = strlen(G->g.source);
      f->first_line = G->g.first_line > 0 ? G->g.first_line : 1;
      f->col_offset = G->g.col_offset;
      m = nbc__module_load(I->ctx, f);
      if (!m) {
        I->failed = true;
        return NULL;
      }
      nbc__module **ms = nbc__infer_alloc(I, sizeof *ms * (size_t)(I->P->nmodules + 1));
      if (!ms) return NULL;
      if (I->P->nmodules) memcpy(ms, I->P->modules, sizeof *ms * (size_t)I->P->nmodules);
      ms[I->P->nmodules++] = m;
      I->P->modules = ms;
    }
    *pmodule = m;
    def = nbc__module_function(m, G->g.name);
  }
  if (!def) return TYPING(I, n, "cannot find the source of function '%s'", G->g.name), NULL;
  return nbc__infer_check_params(I->ctx, I, def) ? def : NULL;
}

/* Python's "f() takes 1 positional argument but 2 were given"; a nested function's captured
 * variables (closure.c passes them first) are not counted: they are not the user's. */
static void *arity_error(infer *I, nbc__node *n, const nbc__global *G, int nparams,
                         int given) {
  int hidden = G->nested ? G->nested->ncaptured : 0;
  nparams -= hidden;
  given -= hidden;
  TYPING(I, n, "%s() takes %d positional argument%s but %d %s given", G->g.name, nparams,
         nparams == 1 ? "" : "s", given, given == 1 ? "was" : "were");
  return NULL;
}

static const nbc__type *call_function(infer *I, nbc__node *n, nbc__global *G, nbc__node *def,
                                      const nbc__module *module, const nbc__type **types,
                                      int nargs);

/* A call of a generated Python function (cmath, arraymath.c): positional arguments only. */
static const nbc__type *call_python(infer *I, nbc__node *n, nbc__global *G,
                                    const nbc__type **types, int nargs) {
  if (!no_keywords(I, n, G->g.name)) return NULL;
  const nbc__module *module;
  nbc__node *def = function_def(I, n, G, &module);
  return def ? call_function(I, n, G, def, module, types, nargs) : NULL;
}

/* A parameter's default value as the constant the call passes: a number or bool literal
 * (negated or not), None, or a global name of the function's module bound to one; NULL
 * reported.
 * Python evaluates a default once, where the function is defined: a constant is the same
 * wherever it is copied. */
static nbc__node *default_value(infer *I, nbc__node *call, const nbc__global *G,
                                const nbc__module *module, const nbc__node *param) {
  const nbc__node *d = param->a, *lit = d;
  if (lit->kind == NBC__N_UNARY && (lit->op == NBC__OP_NEG || lit->op == NBC__OP_POS)) lit = lit->a;
  switch (lit->kind) {
  case NBC__N_INT: case NBC__N_FLOAT: case NBC__N_COMPLEX: case NBC__N_BOOL:
    return nbc__node_clone(I->ctx, d);
  case NBC__N_NONE: /* `def f(a, b=None)`: the callee is specialised for a None b */
    return d == lit ? nbc__node_clone(I->ctx, d) : NULL;
  case NBC__N_NAME: {
    if (d != lit) break;
    nbc_global_t g;
    int rc = nbc__infer_resolve(G->g.resolver ? G->g.resolver : I->fn->resolver, module,
                                d->str, &g);
    if (rc != 0 || (g.kind != NBC_GLOBAL_INT && g.kind != NBC_GLOBAL_FLOAT &&
                    g.kind != NBC_GLOBAL_BOOL && g.kind != NBC_GLOBAL_NONE))
      break;
    nbc__node *v = nbc__node_clone(I->ctx, d);
    if (!v) return NULL;
    v->kind = g.kind == NBC_GLOBAL_INT    ? NBC__N_INT
              : g.kind == NBC_GLOBAL_BOOL ? NBC__N_BOOL
              : g.kind == NBC_GLOBAL_NONE ? NBC__N_NONE
                                          : NBC__N_FLOAT;
    v->value.i = g.value.i;
    if (g.kind == NBC_GLOBAL_FLOAT) v->value.f = g.value.f;
    v->str = NULL;
    return v;
  }
  default:
    break;
  }
  return TYPING(I, call, "the default value of parameter '%s' of %s() is not supported: "
                "kernels take a number, a bool, None, or a global constant of one",
                param->str, G->g.name),
         NULL;
}

/* Python's "f() missing 2 required positional arguments: 'a' and 'b'". */
static void *missing_error(infer *I, nbc__node *n, const char *fname, nbc__node *def,
                           nbc__node **bound, int first) {
  nbc__buf b;
  nbc__buf_init(&b, I->ctx->arena);
  int count = 0, total = 0;
  for (int j = first; j < def->params.count; j++)
    total += !bound[j] && !def->params.items[j]->a;
  for (int j = first; j < def->params.count; j++) {
    if (bound[j] || def->params.items[j]->a) continue;
    count++;
    nbc__buf_printf(&b, "%s'%s'", count == 1 ? "" : count == total ? " and " : ", ",
                    def->params.items[j]->str);
  }
  TYPING(I, n, "%s() missing %d required positional argument%s: %s", fname, total,
         total == 1 ? "" : "s", b.data ? b.data : "");
  return NULL;
}

/* A call of the user's Python function (a global one or a nested one): the arguments bound
 * to the parameters as Python binds them (positional, by keyword, then the defaults), and
 * the call's list rewritten in the parameters' order, which the lowering passes as they
 * are. The captured variables closure.c passes first to a nested function are not the
 * user's: messages leave them out, and no keyword names them. */
static const nbc__type *call_user(infer *I, nbc__node *n, nbc__global *G,
                                  const nbc__type **types, int nargs) {
  const nbc__module *module;
  nbc__node *def = function_def(I, n, G, &module);
  if (!def) return NULL;
  int np = def->params.count, npos = positional(n);
  int hidden = G->nested ? G->nested->ncaptured : 0;
  /* *args: the positional arguments past the others, as one tuple ("$varargs", made once:
   * the next pass finds the call's list already bound) */
  bool vararg = np && def->params.items[np - 1]->vararg;
  int fixed = np - vararg;
  if (npos == nargs && nargs == np &&
      (!vararg || (n->list.items[np - 1]->alias &&
                   strcmp(n->list.items[np - 1]->alias, "$varargs") == 0)))
    return call_function(I, n, G, def, module, types, nargs);
  if (npos > np && !vararg) return arity_error(I, n, G, np, npos);
  nbc__node **bound = nbc__infer_alloc(I, sizeof *bound * (size_t)(np ? np : 1));
  const nbc__type **btypes = nbc__infer_alloc(I, sizeof *btypes * (size_t)(np ? np : 1));
  if (!bound || !btypes) return NULL;
  for (int i = 0; i < npos && i < fixed; i++) {
    bound[i] = n->list.items[i];
    btypes[i] = types[i];
  }
  if (vararg) {
    int extra = npos > fixed ? npos - fixed : 0;
    nbc__node *t = nbc__infer_alloc(I, sizeof *t);
    nbc__node **items = nbc__infer_alloc(I, sizeof *items * (size_t)(extra ? extra : 1));
    if (!t || !items) return NULL;
    for (int i = 0; i < extra; i++) items[i] = n->list.items[fixed + i];
    *t = (nbc__node){.kind = NBC__N_TUPLE, .tok = n->tok, .var = -1, .alias = "$varargs",
                     .list = {items, extra}};
    t->type = nbc__type_tuple(I->ctx, types + fixed, extra);
    if (!t->type) return NULL;
    bound[np - 1] = t;
    btypes[np - 1] = t->type;
  }
  for (int k = npos; k < nargs; k++) {
    nbc__node *kw = n->list.items[k];
    int j = hidden;
    while (j < fixed && strcmp(def->params.items[j]->str, kw->str) != 0)
      j++;
    if (j == fixed)
      return TYPING(I, kw, "%s() got an unexpected keyword argument '%s'", G->g.name, kw->str),
             NULL;
    if (bound[j])
      return TYPING(I, kw, "%s() got multiple values for argument '%s'", G->g.name, kw->str),
             NULL;
    bound[j] = kw->a;
    btypes[j] = types[k];
  }
  for (int j = hidden; j < fixed; j++)
    if (!bound[j] && !def->params.items[j]->a)
      return missing_error(I, n, G->g.name, def, bound, hidden);
  for (int j = hidden; j < fixed; j++) {
    if (bound[j]) continue;
    bound[j] = default_value(I, n, G, module, def->params.items[j]);
    btypes[j] = bound[j] ? nbc__infer_expr(I, bound[j]) : NULL;
    if (!btypes[j]) return NULL;
  }
  n->list.items = bound;
  n->list.count = np;
  return call_function(I, n, G, def, module, btypes, np);
}

/* Whether e is the name `name`, or a tuple holding it. */
static bool names(const nbc__node *e, const char *name) {
  if (!e) return false;
  if (e->kind == NBC__N_NAME) return e->str && strcmp(e->str, name) == 0;
  if (e->kind == NBC__N_TUPLE)
    for (int i = 0; i < e->list.count; i++)
      if (names(e->list.items[i], name)) return true;
  return false;
}

/* Whether node n uses `name` (a char *) where numba needs a literal: the shape of a shared or
 * local array (`cuda.shared.array(n, ...)`, `(n, 4)`), or an `if` that numba prunes when it
 * is a literal (`if flag:`, `if not flag:`). */
static bool needs_literal_here(const nbc__node *n, const void *pname) {
  const char *name = pname;
  if (n->kind == NBC__N_IF) {
    const nbc__node *c = n->a;
    if (c && c->kind == NBC__N_UNARY && c->op == NBC__OP_NOT) c = c->a;
    if (c && c->kind == NBC__N_NAME && c->str && strcmp(c->str, name) == 0) return true;
  }
  return n->kind == NBC__N_CALL && n->a && n->a->kind == NBC__N_ATTR && n->a->str &&
         strcmp(n->a->str, "array") == 0 && n->a->a &&
         (n->a->a->kind == NBC__N_ATTR || n->a->a->kind == NBC__N_NAME) && n->a->a->str &&
         (strcmp(n->a->a->str, "shared") == 0 || strcmp(n->a->a->str, "local") == 0) &&
         names(nbc__call_arg(n, 0, "shape"), name);
}

/* The same anywhere in the subtree n. */
static bool needs_literal(const nbc__node *n, const char *name) {
  return nbc__node_any(n, needs_literal_here, name);
}

/* The constants among a call's arguments that def needs as constants (needs_literal), as
 * numba types a constant argument as a literal and specialises the callee for it: integers,
 * bools and tuples of integers. NULL when there are none. */
static nbc__literal *call_literals(infer *I, nbc__node *n, const nbc__node *def, int nargs) {
  nbc__literal *lits = NULL;
  for (int i = 0; i < nargs && i < def->params.count; i++) {
    const nbc__node *a = n->list.items[i];
    const char *pname = def->params.items[i]->str;
    bool any = false;
    for (int k = 0; !any && k < def->body.count; k++)
      any = needs_literal(def->body.items[k], pname);
    if (!any) continue;
    nbc__literal lit = {0};
    if (a->kind == NBC__N_BOOL) {
      lit.set = true;
      lit.value[0] = a->value.i != 0;
    } else if (a->kind == NBC__N_TUPLE && a->list.count >= 1 && a->list.count <= 8) {
      lit.set = true;
      lit.count = a->list.count;
      for (int k = 0; lit.set && k < a->list.count; k++)
        lit.set = nbc__infer_const_int(I, a->list.items[k], &lit.value[k]);
    } else {
      lit.set = nbc__infer_const_int(I, a, &lit.value[0]);
    }
    if (!lit.set) continue;
    if (!lits) {
      if (!(lits = nbc__infer_alloc(I, sizeof *lits * (size_t)nargs))) return NULL;
      memset(lits, 0, sizeof *lits * (size_t)nargs);
    }
    lits[i] = lit;
  }
  return lits;
}

/* A function passed to a device function, as numba passes its function types (compile-time
 * values: the callee is specialised for each function it is given and calls it): a global
 * Python or declared function (the type then refers to its global), or a function named by
 * its path (cuda.atomic.add, math.sin, numpy.sqrt, operator.add). NULL after reporting any
 * other (a nested function, a builtin). */
static const nbc__type *function_argument(infer *I, nbc__node *a, const nbc__type *t,
                                          const char *callee) {
  const nbc__global *F = NULL;
  if (a->kind == NBC__N_NAME) F = a->var < 0 ? a->info : I->fn->vars[a->var].function;
  /* a nested function that captures nothing (closure.c) is called like a global one */
  if (F && (F->g.kind == NBC_GLOBAL_FUNCTION || F->g.kind == NBC_GLOBAL_DECLARED) &&
      (!F->nested || !F->nested->ncaptured)) {
    if (t->ref == F) return t;
    nbc__type *r = nbc__infer_alloc(I, sizeof *r);
    if (!r) return NULL;
    *r = *t;
    r->ref = F;
    return r;
  }
  static const char *const paths[] = {"cuda.", "math.", "cmath.", "numpy.", "operator."};
  for (size_t k = 0; !F && t->name && k < sizeof paths / sizeof *paths; k++)
    if (strncmp(t->name, paths[k], strlen(paths[k])) == 0) return t;
  return TYPING(I, a, "cannot pass %s to '%s': a device function may be given global "
                      "Python and device functions, and cuda, math, numpy and operator "
                      "functions",
                nbc__infer_tname(I, t), callee),
         NULL;
}

/* What passing a t where sig_t is declared costs, as numba's overload resolution ranks it:
 * 0 the same type, 1 a safe conversion (widening, an integer to a float that holds it, a
 * real to a complex), 2 any other conversion of numbers; -1 none (anything but numbers
 * must be of that very type). */
static int conversion_rank(const nbc__type *sig_t, const nbc__type *t) {
  if (nbc__type_equal(sig_t, t)) return 0;
  if (!nbc__type_is_number(sig_t) || !nbc__type_is_number(t) ||
      !nbc__type_can_convert(t, sig_t))
    return -1;
  size_t from = nbc__type_size(t), to = nbc__type_size(sig_t);
  if (t->kind == NBC__T_BOOL || nbc__type_is_complex(sig_t)) return 1;
  if (nbc__type_is_int(t) && nbc__type_is_int(sig_t))
    return to > from || (to == from && nbc__type_is_signed(t) == nbc__type_is_signed(sig_t))
               ? (nbc__type_is_signed(t) && !nbc__type_is_signed(sig_t) ? 2 : 1)
               : 2;
  if (nbc__type_is_int(t) && nbc__type_is_float(sig_t))
    return to == 8 || (to == 4 && from <= 2) ? 1 : 2;
  if (nbc__type_is_float(t) && nbc__type_is_float(sig_t)) return to > from ? 1 : 2;
  return 2;
}

/* A device function jitted with signatures (`jit("int32(int32, int32)", device=True)`):
 * numba compiles those only and converts a call's arguments to the one chosen — the one
 * whose conversions rank lowest (conversion_rank summed; the first of equals). The
 * arguments' types become the declared ones (casts recorded) and *pret the declared return
 * type. */
static bool declared_signature(infer *I, nbc__node *n, const nbc__global *G,
                               const nbc__type **types, int nargs, const nbc__type **pret) {
  const char *text = G->g.signature;
  nbc__signature chosen = {0};
  int best = -1;
  while (*text && best != 0) {
    const char *end = strchr(text, ';');
    size_t len = end ? (size_t)(end - text) : strlen(text);
    char *one = nbc__infer_alloc(I, len + 1);
    if (!one) return false;
    memcpy(one, text, len);
    one[len] = 0;
    text += len + (end ? 1 : 0);
    nbc__signature sig;
    if (!nbc__signature_parse(I->ctx, one, &sig)) {
      I->failed = true;
      return false;
    }
    if (sig.nargs != nargs) continue;
    int rank = 0;
    for (int i = 0; i < nargs && rank >= 0; i++) {
      int r = conversion_rank(sig.args[i], types[i]);
      rank = r < 0 ? -1 : rank + r;
    }
    if (rank >= 0 && (best < 0 || rank < best)) {
      chosen = sig;
      best = rank;
    }
  }
  if (best < 0) {
    nbc__buf b;
    nbc__buf_init(&b, I->ctx->arena);
    for (int i = 0; i < nargs; i++) {
      if (i) nbc__buf_puts(&b, ", ");
      nbc__type_print(&b, types[i]);
    }
    return TYPING(I, n, "Invalid use of type(CUDADispatcher(<function %s>)) with parameters "
                        "(%s): no matching definition; %s() was jitted for '%s'",
                  G->g.name, b.data ? b.data : "", G->g.name, G->g.signature);
  }
  for (int i = 0; i < nargs; i++) {
    if (!nbc__type_equal(chosen.args[i], types[i]))
      nbc__infer_cast(n->list.items[i], chosen.args[i]);
    types[i] = chosen.args[i];
  }
  *pret = chosen.ret; /* "(args)": the return type is inferred, as numba does */
  return true;
}

/* The call of def (G's function) with the arguments' types, specialised. */
static const nbc__type *call_function(infer *I, nbc__node *n, nbc__global *G, nbc__node *def,
                                      const nbc__module *module, const nbc__type **types,
                                      int nargs) {
  const nbc_resolver_t *resolver = G->g.resolver ? G->g.resolver : I->fn->resolver;
  if (def->params.count != nargs) return arity_error(I, n, G, def->params.count, nargs);
  const nbc__type *declared = NULL;
  if (G->g.signature && !declared_signature(I, n, G, types, nargs, &declared)) return NULL;
  /* an IntEnum member passed positionally stays one (numba's IntEnumMember parameter: `is`
   * and `.value` in the callee), where call_args used it as its int */
  for (int i = 0; !G->g.signature && positional(n) == nargs && i < nargs; i++) {
    nbc__node *a = n->list.items[i];
    if (nbc__type_is_int_enum(a->type) && a->cast == types[i]) {
      a->cast = NULL;
      types[i] = a->type;
    }
  }
  for (int i = 0; i < nargs; i++)
    if (is_kind(types[i], NBC__T_FUNCTION) &&
        !(types[i] = function_argument(I, n->list.items[i], types[i], G->g.name)))
      return NULL;
  for (int i = 0; i < nargs; i++)
    if (!nbc__type_is_number(types[i]) && !nbc__type_is_datetime(types[i]) &&
        !is_kind(types[i], NBC__T_DTYPE) && !nbc__type_is_bf16(types[i]) &&
        !is_kind(types[i], NBC__T_FUNCTION) && !is_kind(types[i], NBC__T_ARRAY) &&
        !is_kind(types[i], NBC__T_TUPLE) && !is_kind(types[i], NBC__T_VECTOR) &&
        !is_kind(types[i], NBC__T_GRID_GROUP) && !is_kind(types[i], NBC__T_RECORD) &&
        !is_kind(types[i], NBC__T_POINTER) && !is_kind(types[i], NBC__T_ENUM) &&
        !is_kind(types[i], NBC__T_NONE) && !(is_kind(types[i], NBC__T_RANGE) && types[i]->dtype))
      return TYPING(I, n->list.items[i], "cannot pass a value of type %s to '%s'",
                    nbc__infer_tname(I, types[i]), G->g.name),
             NULL;
  nbc__literal *literals = call_literals(I, n, def, nargs);
  bool failed_before = I->ctx->status != NBC_OK; /* then the callee is not typed at all */
  nbc__func *callee = nbc__infer_specialise(I->P, module, def, resolver, types, literals,
                                             nargs, declared, false, G->scope, n, I);
  if (!callee && I->deferred) {
    /* the callee (or one it calls) waits for the return type of a function further down
     * the stack (the awaited one): this walk takes what the callee returned so far, and the
     * callee is typed again in the next. The awaited function itself goes on (its
     * deferral is settled); one above it is abandoned after this walk. The awaited
     * function's last walk needs the callee typed. */
    if (I->P->depth - 1 <= I->P->awaited) {
      I->P->awaited = -1;
      I->deferred = false;
      if (I->final)
        return TYPING(I, n, "cannot type infer runaway recursion: the return type of the "
                      "recursive function '%s' needs a return that does not recurse",
                      I->fn->name),
               NULL;
    }
    return I->final ? NULL : I->deferred_ret;
  }
  if (!callee) {
    if (failed_before) return NULL; /* the error is another call's: no "During" for this one */
    const nbc__token *tok = n->tok;
    const nbc__file *f = tok ? tok->file : NULL;
    nbc__diag_during(I->ctx, "resolving callee type: type(CUDADispatcher(<function %s>))",
                     def->str ? def->str : G->g.name);
    nbc__diag_during(I->ctx, "typing of call at %s (%d)", f && f->name ? f->name : "<string>",
                     nbc__token_user_line(tok));
    return NULL;
  }
  const nbc__type *ret = callee->ret;
  if (callee->inferring && !ret) { /* a recursive call: the returns typed so far */
    ret = callee->ret_estimate;
    /* mutual recursion: the callee's walk under way may have seen a return already */
    if (!ret && callee != I->fn && callee->partial_ret) ret = *callee->partial_ret;
    if (!ret && callee != I->fn) { /* not known yet: typed again in the callee's next walk */
      int at = I->P->depth - 1;
      while (at > 0 && I->P->stack[at] != callee) at--;
      if (I->P->awaited < 0 || at < I->P->awaited) I->P->awaited = at;
      I->deferred = true;
      return NULL;
    }
    if (!ret)
      return TYPING(I, n, "cannot type infer runaway recursion: the return type of the "
                    "recursive function '%s' needs a return that does not recurse", G->g.name),
             NULL;
    if (callee != I->fn && I->final) { /* what this function's code is typed with */
      if (callee->handed_ret && !nbc__type_equal(callee->handed_ret, ret))
        callee->handed_mismatch = true;
      callee->handed_ret = ret;
    }
  }
  if (G->g.forceinline) callee->forceinline = true;
  nbc__call *c = call_new(I, n, NBC__B_FUNC, G->g.name, nargs);
  if (!c) return NULL;
  c->func = callee;
  for (int i = 0; i < nargs; i++)
    c->argtypes[i] = types[i];
  c->ret = ret;
  if (I->final) {
    if (I->ncallees == I->capcallees) {
      int cap = I->capcallees ? 2 * I->capcallees : 8;
      nbc__func **cs = nbc__infer_alloc(I, sizeof *cs * (size_t)cap);
      if (!cs) return NULL;
      if (I->ncallees) memcpy(cs, I->callees, sizeof *cs * (size_t)I->ncallees);
      I->callees = cs;
      I->capcallees = cap;
    }
    I->callees[I->ncallees++] = callee;
  }
  if (is_kind(ret, NBC__T_VOID)) return T(NBC__T_NONE);
  return ret;
}

/* Whether numba's CUDA print can print a value of type t: integers, floats, booleans and
 * tuples of them (printimpl.py's print_item cases). */
static bool printable(const nbc__type *t) {
  if (!t) return false;
  if (nbc__type_is_int(t) || nbc__type_is_float(t) || t->kind == NBC__T_BOOL) return true;
  if (t->kind != NBC__T_TUPLE) return false;
  for (int i = 0; i < t->count; i++)
    if (!printable(t->items[i])) return false;
  return true;
}

/* print(a, "text", b): numba's CUDA print, one vprintf of the items joined by spaces. String
 * literals are printed as they are (they have no other use in a kernel, so they are not
 * typed as values). */
static const nbc__type *call_print(infer *I, nbc__node *n) {
  if (!no_keywords(I, n, "print")) return NULL;
  int nargs = n->list.count;
  nbc__call *c = call_new(I, n, NBC__B_PRINT, "print", nargs);
  if (!c) return NULL;
  for (int i = 0; i < nargs; i++) {
    nbc__node *a = n->list.items[i];
    if (a->kind == NBC__N_STR) {
      c->argtypes[i] = NULL;
      continue;
    }
    const nbc__type *t = nbc__infer_expr(I, a);
    if (!t) return NULL;
    if (!printable(t))
      return TYPING(I, a, "printing unimplemented for values of type %s",
                    nbc__infer_tname(I, t)),
             NULL;
    c->argtypes[i] = t;
  }
  c->ret = T(NBC__T_NONE);
  return c->ret;
}

/* f(*t): a tuple's items as positional arguments, as numba unpacks them. Each starred
 * argument becomes its items, SUBSCRIPT nodes t[i] marked "$star" that share t and, in c, a
 * node whose info the lowering keeps t's value in, so t is evaluated once (at item 0); a
 * variable holding an empty tuple (a device function's empty *args) becomes nothing.
 * false after an error. */
static bool is_starred(const nbc__node *a) {
  return a->kind == NBC__N_OTHER_EXPR && !a->str && a->a && nbc__tok_is(a->tok, "*");
}

static bool expand_starred(infer *I, nbc__node *n) {
  int extra = 0, starred = 0;
  for (int i = 0; i < n->list.count; i++) {
    nbc__node *a = n->list.items[i];
    if (!is_starred(a)) continue;
    starred++;
    const nbc__type *t = nbc__infer_expr(I, a->a);
    if (!t) return false;
    if (t->kind != NBC__T_TUPLE)
      return TYPING(I, a, "*args in a call unpacks a tuple in kernels, not %s",
                    nbc__infer_tname(I, t));
    /* an empty tuple gives no item to evaluate it at: only a variable's (no effects) */
    if (t->count == 0 && a->a->kind != NBC__N_NAME)
      return UNSUPPORTED(I, a, "unpacking an empty tuple into a call is not supported");
    extra += t->count - 1;
  }
  if (!starred) return true;
  nbc__node **items = nbc__infer_alloc(I, sizeof *items * (size_t)(n->list.count + extra + 1));
  if (!items) return false;
  int k = 0;
  for (int i = 0; i < n->list.count; i++) {
    nbc__node *a = n->list.items[i];
    if (!is_starred(a)) {
      items[k++] = a;
      continue;
    }
    const nbc__type *t = a->a->type;
    nbc__node *holder = nbc__infer_alloc(I, sizeof *holder);
    if (!holder) return false;
    *holder = (nbc__node){.kind = NBC__N_OTHER_EXPR, .tok = a->tok, .var = -1};
    for (int j = 0; j < t->count; j++) {
      nbc__node *index = nbc__infer_alloc(I, sizeof *index);
      nbc__node *item = nbc__infer_alloc(I, sizeof *item);
      if (!index || !item) return false;
      *index = (nbc__node){.kind = NBC__N_INT, .tok = a->tok, .var = -1, .value.i = j};
      *item = (nbc__node){.kind = NBC__N_SUBSCRIPT, .tok = a->tok, .a = a->a, .b = index,
                          .c = holder, .var = -1, .alias = "$star"};
      items[k++] = item;
    }
  }
  n->list.items = items;
  n->list.count = k;
  return true;
}

/* ffi.from_buffer(a) of a cffi.FFI global (numba's cffi_utils): a CPointer to the data of
 * a contiguous array, which a declared function takes ("float32(CPointer(float32), int32)");
 * numba's messages for anything else. */
static const nbc__type *call_from_buffer(infer *I, nbc__node *n, const nbc__type **types,
                                         int nargs) {
  if (!no_keywords(I, n, "from_buffer")) return NULL;
  if (nargs != 1)
    return TYPING(I, n, "from_buffer() takes one argument, an array (%d given)", nargs), NULL;
  const nbc__type *a = types[0];
  if (a->kind != NBC__T_ARRAY)
    return TYPING(I, n->list.items[0], "from_buffer() takes an array, not %s",
                  nbc__infer_tname(I, a)),
           NULL;
  if (a->layout != 'C' && a->layout != 'F')
    return TYPING(I, n->list.items[0], "from_buffer() unsupported on non-contiguous buffers "
                  "(got %s)", nbc__infer_tname(I, a)),
           NULL;
  nbc__call *c = call_new(I, n, NBC__B_FROM_BUFFER, "from_buffer", 1);
  if (!c) return NULL;
  c->argtypes[0] = a;
  c->ret = nbc__type_pointer(I->ctx, a->dtype);
  return c->ret;
}

const nbc__type *nbc__infer_call(infer *I, nbc__node *n) {
  n->info = NULL;
  if (!expand_starred(I, n)) return NULL;
  /* x.conjugate() of a number: itself, or a complex's conjugate (numba) */
  if (n->a->kind == NBC__N_ATTR && strcmp(n->a->str, "conjugate") == 0) {
    const nbc__type *o = nbc__infer_expr(I, n->a->a);
    if (o && (nbc__type_is_int(o) || nbc__type_is_float(o) || nbc__type_is_complex(o))) {
      if (n->list.count) return TYPING(I, n, "conjugate() takes no arguments"), NULL;
      nbc__call *c = call_new(I, n, NBC__B_CONJUGATE, "conjugate", 0);
      if (!c) return NULL;
      c->ret = o;
      n->a->type = o;
      return o;
    }
  }
  /* i.bit_count() of an integer: numba-cuda's overload, cuda.popc(i) */
  if (n->a->kind == NBC__N_ATTR && strcmp(n->a->str, "bit_count") == 0) {
    nbc__node *obj = n->a->a;
    const nbc__type *o = nbc__infer_expr(I, obj);
    if (o && nbc__type_is_int(o)) {
      bool rewritten = n->list.count == 1 && n->list.items[0] == obj; /* an earlier walk */
      if (n->list.count && !rewritten)
        return TYPING(I, n, "bit_count() takes no arguments"), NULL;
      if (!rewritten) {
        nbc__node **args = nbc__infer_alloc(I, sizeof *args);
        if (!args) return NULL;
        args[0] = obj;
        n->list.items = args;
        n->list.count = 1;
      }
      return call_cuda(I, n, "cuda.popc", &o, 1);
    }
  }
  /* g.sync() of a GridGroup: numba's grid synchronisation, returning cudaCGSynchronize's
   * int32 status */
  if (n->a->kind == NBC__N_ATTR && strcmp(n->a->str, "sync") == 0) {
    const nbc__type *o = nbc__infer_expr(I, n->a->a);
    if (o && o->kind == NBC__T_GRID_GROUP) {
      if (n->list.count) return TYPING(I, n, "GridGroup.sync() takes no arguments"), NULL;
      nbc__call *c = call_new(I, n, NBC__B_CG_SYNC, "GridGroup.sync", 0);
      if (!c) return NULL;
      c->ret = T(NBC__T_INT32);
      n->a->type = o;
      return c->ret;
    }
  }
  /* a.transpose(): a.T, the call becoming that attribute; with axes, call_transpose */
  if (n->a->kind == NBC__N_ATTR && strcmp(n->a->str, "transpose") == 0) {
    const nbc__type *o = nbc__infer_expr(I, n->a->a);
    if (o && o->kind == NBC__T_ARRAY) {
      if (n->list.count > 1 || (n->list.count == 1 && n->list.items[0]->kind != NBC__N_NONE))
        return call_transpose(I, n, o);
      nbc__node *array = n->a->a;
      n->kind = NBC__N_ATTR;
      n->a = array;
      n->str = "T";
      n->list.count = 0;
      n->info = NULL;
      return nbc__infer_expr(I, n);
    }
  }
  /* a.fill(v) */
  if (n->a->kind == NBC__N_ATTR && strcmp(n->a->str, "fill") == 0) {
    const nbc__type *o = nbc__infer_expr(I, n->a->a);
    if (o && o->kind == NBC__T_ARRAY) return call_fill(I, n, o);
  }
  /* a.view(dtype) */
  if (n->a->kind == NBC__N_ATTR && strcmp(n->a->str, "view") == 0) {
    const nbc__type *o = nbc__infer_expr(I, n->a->a);
    if (o && o->kind == NBC__T_ARRAY) return call_view(I, n, o);
  }
  /* a.reshape(...) */
  if (n->a->kind == NBC__N_ATTR && strcmp(n->a->str, "reshape") == 0) {
    const nbc__type *o = nbc__infer_expr(I, n->a->a);
    if (o && o->kind == NBC__T_ARRAY) {
      const nbc__type *types[64];
      if (n->list.count > 64) return UNSUPPORTED(I, n, "reshape() of more than 64 arguments"), NULL;
      if (!call_args(I, n, types, 64)) return NULL;
      n->a->type = o;
      return call_reshape(I, n, o, types, n->list.count);
    }
  }
  /* a.sum() and the other reductions of an array */
  if (n->a->kind == NBC__N_ATTR && nbc__array_reduction_is_method(n->a->str)) {
    const nbc__type *o = nbc__infer_expr(I, n->a->a);
    /* (the list holds the array once rewritten, for the walks after the first) */
    bool rewritten = n->list.count == 1 && n->list.items[0] == n->a->a;
    if (o && o->kind == NBC__T_ARRAY)
      return call_reduction(I, n, n->a->str, n->a->a, rewritten ? 0 : n->list.count);
  }
  const nbc__type *f = nbc__infer_expr(I, n->a);
  const nbc__global *pg = f && n->a->kind == NBC__N_NAME && n->a->var < 0 ? n->a->info : NULL;
  if (pg && nbc__infer_is_builtin(pg) && strcmp(pg->g.name, "print") == 0)
    return call_print(I, n);
  if (pg && nbc__infer_is_builtin(pg) && strcmp(pg->g.name, "isinstance") == 0)
    return call_isinstance(I, n); /* its second argument is not a value */
  if (pg && nbc__infer_is_builtin(pg) && strcmp(pg->g.name, "float") == 0 &&
      n->list.count == 1 && n->list.items[0]->kind == NBC__N_STR)
    return float_of_string(I, n); /* float("nan"): a constant, as numba folds it */
  if (f && f->kind == NBC__T_FUNCTION && f->name && strncmp(f->name, "cuda.", 5) == 0 &&
      nbc__cuda_name_call(nbc__cuda_name_find(f->name + 5)) == NBC__KERNEL_CALL_ARRAY)
    return call_array(I, n, f->name); /* its arguments are not values */
  if (f && f->kind == NBC__T_FUNCTION && f->name && strcmp(f->name, "numpy.dtype") == 0)
    return call_np_dtype(I, n); /* nor is its string */
  const nbc__type *types[64];
  int nargs = n->list.count;
  if (nargs > 64) return UNSUPPORTED(I, n, "calls with more than 64 arguments"), NULL;
  bool ok = call_args(I, n, types, 64);
  if (!f || !ok) return NULL;
  int npos = positional(n);
  if (f->kind == NBC__T_DTYPE && f->name && strcmp(f->name, "dtype") == 0)
    return TYPING(I, n, "No type info available for %s as a callable (a.dtype.type is)",
                  nbc__infer_tname(I, f)),
           NULL;
  if (f->kind == NBC__T_DTYPE) {
    if (!no_keywords(I, n, f->name)) return NULL;
    if (npos != 1 || !(nbc__type_is_number(types[0]) || nbc__type_is_bf16(types[0])) ||
        !nbc__type_can_convert(types[0], f->dtype))
      return arg_list_error(I, n, nbc__infer_tname(I, f), types, nargs);
    nbc__call *c = call_new(I, n, NBC__B_CAST, f->name, 1);
    if (!c) return NULL;
    c->argtypes[0] = types[0];
    c->ret = f->dtype;
    return c->ret;
  }
  if (f->kind != NBC__T_FUNCTION)
    return TYPING(I, n, "'%s' object is not callable", nbc__infer_tname(I, f)), NULL;
  const nbc__global *G = n->a->kind != NBC__N_NAME ? NULL
                         : n->a->var < 0          ? n->a->info
                                                  : I->fn->vars[n->a->var].function;
  if (G && G->g.kind == NBC_GLOBAL_FUNCTION)
    return call_user(I, n, (nbc__global *)G, types, nargs);
  if (G && G->g.kind == NBC_GLOBAL_DECLARED) return call_declared(I, n, G, types, nargs);
  if (G && nbc__infer_is_builtin(G)) return call_builtin(I, n, G->g.name, types, nargs);
  if (strncmp(f->name, "math.", 5) == 0) return call_math(I, n, f->name + 5, types, nargs);
  if (strncmp(f->name, "cmath.", 6) == 0) return call_cmath(I, n, f->name + 6, types, nargs);
  if (strncmp(f->name, "numpy.", 6) == 0 && nbc__array_reduction_exists(f->name + 6)) {
    if (!nargs || n->list.items[0]->kind == NBC__N_KEYWORD)
      return TYPING(I, n, "%s() takes an array as its first argument", f->name), NULL;
    return call_reduction(I, n, f->name + 6, n->list.items[0], nargs - 1);
  }
  if (strncmp(f->name, "numpy.", 6) == 0) return call_numpy(I, n, f->name + 6, types, nargs);
  if (strcmp(f->name, "operator.setitem") == 0) return call_setitem(I, n);
  if (strncmp(f->name, "operator.", 9) == 0) return nbc__infer_operator_call(I, n, f->name + 9);
  if (strncmp(f->name, "cuda.", 5) == 0) return call_cuda(I, n, f->name, types, nargs);
  if (strcmp(f->name, "cffi.from_buffer") == 0) return call_from_buffer(I, n, types, nargs);
  return UNSUPPORTED(I, n, "unsupported call of %s", nbc__infer_tname(I, f)), NULL;
}
