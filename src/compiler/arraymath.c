/* arraymath.c — reductions of arrays in kernels (`a.sum()`, `np.max(a)`...), as numba's
 * arraymath.py implements them.
 *
 * numba writes these in Python over np.nditer and compiles them into the kernel; nbcuda writes
 * the same bodies in the kernel language for the array's rank (nested range loops over every
 * element, in C order, as numba's nditer visits them) and compiles them like any Python
 * function (infer_call.c's call_reduction), so types and results follow numba's:
 *
 *   sum        c = RT(0); c += v        RT: int64 / uint64 for smaller (or bool) integers
 *   prod       c = DT(1); c *= v        (c then types as numba unifies it: int64 for int32)
 *   mean       c = ACC(0); c += v; c / a.size      ACC: float64 for integers and bools
 *   var, std   numba's two passes (the mean, then the squared differences); std = var ** 0.5
 *   min, max   the first element, then each: a NaN is returned at once (floats), complex
 *              numbers compare by real then imaginary part; an empty array raises ValueError
 *   argmin, argmax   the flat index of the first extreme (the first NaN for floats)
 *   all, any   the truth of every / some element
 *   nansum, nanprod, nanmean, nanvar, nanstd   the same over the elements that are not NaN
 *              (numba's np_nan* overloads: nansum/nanprod accumulate in int64 for integers,
 *              nanmean in float64 or complex128 and give NaN when no element counts)
 *   nanmin, nanmax   the first element, then each later one not NaN that does not compare
 *              beyond it (complex numbers by real part, then imaginary)
 *   count_nonzero   the number of elements != 0 (int64)
 *
 * The builtins over an iterable are numba's cpython/builtins.py: sum(it, start=0) is
 * `acc = start; for x in it: acc = acc + x` (a tuple's items unrolled), min(it) and max(it)
 * keep the first element and replace it by each later one that compares < (>) it; an empty
 * array raises StopIteration (next() of an exhausted iterator). They take 1-d arrays and
 * tuples (numba's iteration of a 2-d array yields rows, which a kernel cannot add or compare).
 *
 * The bodies are library kernels, templates in src/library/ (arraymath_<family>.py,
 * iterable_sum.py, iterable_minmax.py; REDUCTIONS below says which serves which name), filled
 * per (reduction, rank, element type): the loops over the array's axes (one `for` per axis,
 * in C order, none for a 0-d array), the element's index, the indentation inside the loops,
 * type names and the lines that belong to one element type (the others become comments).
 * The source of one reduction names its function `_<name>`; the compiler loads each distinct
 * text once per compilation.
 */
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"

/* The reductions of arrays:
 *   R(name, template, method)
 * template the library kernel computing it (arraymath_<template>.py), method whether it is
 * an array method too (a.sum()) and not only numpy's function (np.amin(a)). */
#define REDUCTIONS(R)                                                                          \
  R("sum", "sum", true)                                                                        \
  R("prod", "sum", true)                                                                       \
  R("mean", "mean", true)                                                                      \
  R("var", "mean", true)                                                                       \
  R("std", "mean", true)                                                                       \
  R("min", "extreme", true)                                                                    \
  R("max", "extreme", true)                                                                    \
  R("amin", "extreme", false)                                                                  \
  R("amax", "extreme", false)                                                                  \
  R("argmin", "extreme", true)                                                                 \
  R("argmax", "extreme", true)                                                                 \
  R("all", "truth", true)                                                                      \
  R("any", "truth", true)                                                                      \
  R("nansum", "nansum", false)                                                                 \
  R("nanprod", "nansum", false)                                                                \
  R("nanmean", "nanmean", false)                                                               \
  R("nanvar", "nanmean", false)                                                                \
  R("nanstd", "nanmean", false)                                                                \
  R("nanmin", "nanextreme", false)                                                             \
  R("nanmax", "nanextreme", false)                                                             \
  R("count_nonzero", "count", false)

static const struct reduction {
  const char *name, *template;
  bool method;
} reductions[] = {
#define REDUCTION_ROW_(name, template, method) {name, "arraymath_" template, method},
    REDUCTIONS(REDUCTION_ROW_)
#undef REDUCTION_ROW_
};

static const struct reduction *reduction_find(const char *name) {
  for (size_t i = 0; name && i < sizeof reductions / sizeof reductions[0]; i++)
    if (strcmp(reductions[i].name, name) == 0) return &reductions[i];
  return NULL;
}

bool nbc__array_reduction_exists(const char *name) { return reduction_find(name) != NULL; }

bool nbc__array_reduction_is_method(const char *name) {
  const struct reduction *r = reduction_find(name);
  return r && r->method;
}

/* The name numba exports type t under (numba.boolean for bool). */
static const char *numba_name(nbc__ctx *ctx, const nbc__type *t) {
  return t->kind == NBC__T_BOOL ? "boolean" : nbc__type_name(ctx, t);
}

/* numba's _expand_integer: the accumulator of sum. */
static const nbc__type *sum_type(const nbc__type *dt) {
  if (dt->kind == NBC__T_BOOL) return nbc__type_scalar(NBC__T_INT64);
  if (nbc__type_is_int(dt))
    return nbc__type_scalar(nbc__type_is_signed(dt) ? NBC__T_INT64 : NBC__T_UINT64);
  return dt;
}

/* The template's text filled with pairs (NULL-terminated key, value list), in the arena. */
static const char *fill(nbc__ctx *ctx, const char *template, const char *const *pairs) {
  char *text = NULL;
  if (nbc_library_kernel_fill(template, pairs, &text) != NBC_OK) return NULL;
  const char *copy = nbc__arena_strdup(ctx->arena, text);
  free(text);
  return copy;
}

/* A line of a template that belongs to one case: kept when it applies, else a comment. */
static const char *only_if(bool applies) { return applies ? "" : "#"; }

/* Spaces for an indentation of n. */
static const char *indent(nbc__ctx *ctx, int n) {
  return nbc__arena_printf(ctx->arena, "%*s", n, "");
}

const char *nbc__array_reduction_source(nbc__ctx *ctx, const char *name, const nbc__type *a) {
  const struct reduction *r = reduction_find(name);
  if (!r || a->kind != NBC__T_ARRAY || a->ndim < 0 || !a->dtype) return NULL;
  const nbc__type *dt = a->dtype;
  int nd = a->ndim;
  /* the loops over a's axes, the element's index inside them, the first element's index */
  nbc__buf loops, idx, first, imports;
  nbc__buf_init(&loops, ctx->arena);
  nbc__buf_init(&idx, ctx->arena);
  nbc__buf_init(&first, ctx->arena);
  nbc__buf_init(&imports, ctx->arena);
  nbc__buf_puts(&loops, ""); /* a 0-d array has no loops: the text is empty, not NULL */
  if (nd == 0) { /* a 0-d array's one element: a[()] */
    nbc__buf_puts(&idx, "()");
    nbc__buf_puts(&first, "()");
  }
  for (int d = 0; d < nd; d++) {
    nbc__buf_printf(&loops, "%*sfor i%d in range(a.shape[%d]):\n", 4 + 4 * d, "", d, d);
    nbc__buf_printf(&idx, "%si%d", d ? ", " : "", d);
    nbc__buf_puts(&first, d ? ", 0" : "0");
  }
  /* the type names the bodies use besides boolean, float64 and int64: the accumulator of
   * sum, the element type */
  nbc__buf_puts(&imports, ""); /* often none */
  const nbc__type *named[2] = {sum_type(dt), dt};
  for (int i = 0; i < 2; i++)
    if (named[i]->kind != NBC__T_BOOL && named[i]->kind != NBC__T_FLOAT64 &&
        named[i]->kind != NBC__T_INT64 && (i == 0 || named[1] != named[0]))
      nbc__buf_printf(&imports, ", %s", numba_name(ctx, named[i]));
  bool cx = nbc__type_is_complex(dt), fl = nbc__type_is_float(dt);
  bool integral = nbc__type_is_int(dt) || dt->kind == NBC__T_BOOL;
  bool arg = strncmp(name, "arg", 3) == 0, is_min = strstr(name, "min") != NULL;
  bool product = strstr(name, "prod") != NULL, nan = strncmp(name, "nan", 3) == 0;
  int in = 4 + 4 * nd, nan_in = in + (fl || cx ? 4 : 0);
  const nbc__type *acc = nan ? (integral ? nbc__type_scalar(NBC__T_INT64) : dt)
                         : product ? dt
                                   : sum_type(dt);
  const char *const pairs[] = {
      "NAME", name,
      "IMPORTS", imports.data,
      "LOOPS", loops.data,
      "IDX", idx.data,
      "FIRST", first.data,
      "IN", indent(ctx, in),
      "IN4", indent(ctx, in + 4),
      "NAN_IN", indent(ctx, nan_in),
      "NAN_IN4", indent(ctx, nan_in + 4),
      "FLOAT", only_if(fl),
      "COMPLEX", only_if(cx),
      "REAL", only_if(!cx),
      "ARG", only_if(arg),
      "VALUE", only_if(!arg),
      "INIT", nbc__arena_printf(ctx->arena, "%s(%d)", numba_name(ctx, acc), product),
      "OP", product ? "*" : "+",
      "ACC", integral ? "float64" : numba_name(ctx, dt),
      "ZERO", cx ? "0j" : "0.0",
      "SIGN", is_min ? "<" : ">",
      "EXTREME", is_min ? "minimum" : "maximum",
      "SHORT", is_min ? "min" : "max",
      "RESULT", arg ? "k" : "m",
      "POSITION", arg ? "n" : "v",
      "NOT", strcmp(name, "all") == 0 ? "not " : "",
      "STOP", strcmp(name, "all") == 0 ? "False" : "True",
      "END", strcmp(name, "all") == 0 ? "True" : "False",
      NULL};
  for (size_t i = 0; pairs[i]; i += 2)
    if (!pairs[i + 1]) return NULL; /* out of memory */
  if (loops.oom || idx.oom || first.oom || imports.oom) return NULL;
  return fill(ctx, r->template, pairs);
}

const char *nbc__builtin_reduction_source(nbc__ctx *ctx, const char *name,
                                          const nbc__type *it) {
  bool tuple = it->kind == NBC__T_TUPLE, range = it->kind == NBC__T_RANGE;
  const char *const pairs[] = {"NAME", name,
                               "SIGN", strcmp(name, "min") == 0 ? "<" : ">",
                               "TUPLE", only_if(tuple),
                               "RANGE", only_if(range),
                               "ARRAY", only_if(!tuple && !range),
                               NULL};
  return fill(ctx, strcmp(name, "sum") == 0 ? "iterable_sum" : "iterable_minmax", pairs);
}
