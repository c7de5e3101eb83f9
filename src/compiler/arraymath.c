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
 * The source of one reduction names its function `_<name>` and is generated per (reduction,
 * rank, element type); the compiler loads each distinct text once per compilation.
 */
#include <string.h>

#include "compiler/compiler.h"

static const char *const reductions[] = {"sum",    "prod", "mean", "var",  "std",
                                         "min",    "max",  "amin", "amax", "argmin",
                                         "argmax", "all",  "any",  NULL};
/* numpy's functions only, not array methods */
static const char *const function_reductions[] = {
    "amin",   "amax",   "nansum", "nanprod", "nanmean",       "nanvar",
    "nanstd", "nanmin", "nanmax", "count_nonzero", NULL};

static bool listed(const char *const *list, const char *name) {
  for (int i = 0; name && list[i]; i++)
    if (strcmp(list[i], name) == 0) return true;
  return false;
}

bool nbc__array_reduction_exists(const char *name) {
  return listed(reductions, name) || listed(function_reductions, name);
}

bool nbc__array_reduction_is_method(const char *name) {
  return listed(reductions, name) && !listed(function_reductions, name);
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

/* Opens the loops over every element of a rank-ndim array `a` (indentation 4 per level; none
 * for a 0-d array) and leaves the element's index expression in idx; returns the body's
 * indentation. */
static int open_loops(nbc__buf *b, int ndim, nbc__buf *idx) {
  if (ndim == 0) nbc__buf_puts(idx, "()"); /* a 0-d array's one element: a[()] */
  for (int d = 0; d < ndim; d++) {
    nbc__buf_printf(b, "%*sfor i%d in range(a.shape[%d]):\n", 4 + 4 * d, "", d, d);
    nbc__buf_printf(idx, "%si%d", d ? ", " : "", d);
  }
  return 4 + 4 * ndim;
}

/* The index of the first element: a[0, 0, ...]. */
static void first_index(nbc__buf *b, int ndim) {
  if (ndim == 0) nbc__buf_puts(b, "()");
  for (int d = 0; d < ndim; d++)
    nbc__buf_puts(b, d ? ", 0" : "0");
}

static void accumulate(nbc__buf *b, int ndim, const char *init, const char *op) {
  nbc__buf idx;
  nbc__buf_init(&idx, b->arena);
  nbc__buf_printf(b, "    c = %s\n", init);
  int in = open_loops(b, ndim, &idx);
  nbc__buf_printf(b, "%*sc %s= a[%s]\n", in, "", op, idx.data);
}

/* min/max (sign "<" or ">"), or argmin/argmax (arg). */
static void extreme(nbc__buf *b, int ndim, const nbc__type *dt, const char *sign, bool arg,
                    const char *empty) {
  bool fl = nbc__type_is_float(dt), cx = nbc__type_is_complex(dt);
  nbc__buf idx;
  nbc__buf_init(&idx, b->arena);
  nbc__buf_printf(b, "    if a.size == 0:\n        raise ValueError(\"%s\")\n    m = a[",
                  empty);
  first_index(b, ndim);
  nbc__buf_puts(b, arg ? "]\n    k = 0\n" : "]\n");
  if (fl) nbc__buf_printf(b, "    if math.isnan(m):\n        return %s\n", arg ? "k" : "m");
  if (arg) nbc__buf_puts(b, "    n = 0\n");
  int in = open_loops(b, ndim, &idx);
  nbc__buf_printf(b, "%*sv = a[%s]\n", in, "", idx.data);
  if (fl)
    nbc__buf_printf(b, "%*sif math.isnan(v):\n%*sreturn %s\n", in, "", in + 4, "",
                    arg ? "n" : "v");
  if (cx)
    nbc__buf_printf(b, "%*sif v.real %s m.real or (v.real == m.real and v.imag %s m.imag):\n",
                    in, "", sign, sign);
  else
    nbc__buf_printf(b, "%*sif v %s m:\n", in, "", sign);
  nbc__buf_printf(b, "%*sm = v\n", in + 4, "");
  if (arg) nbc__buf_printf(b, "%*sk = n\n%*sn += 1\n", in + 4, "", in, "");
  nbc__buf_printf(b, "    return %s\n", arg ? "k" : "m");
}

static void truth(nbc__buf *b, int ndim, bool all) {
  nbc__buf idx;
  nbc__buf_init(&idx, b->arena);
  int in = open_loops(b, ndim, &idx);
  nbc__buf_printf(b, "%*sif %sa[%s]:\n%*sreturn %s\n    return %s\n", in, "", all ? "not " : "",
                  idx.data, in + 4, "", all ? "False" : "True", all ? "True" : "False");
}

/* Opens the loops of a NaN-skipping reduction (numba's get_isnan: floats and complex numbers
 * are tested, other elements never are NaN): each element in v, the body's indentation
 * returned. */
static int open_nan_skip(nbc__buf *b, int ndim, const nbc__type *dt) {
  nbc__buf idx;
  nbc__buf_init(&idx, b->arena);
  int in = open_loops(b, ndim, &idx);
  nbc__buf_printf(b, "%*sv = a[%s]\n", in, "", idx.data);
  if (nbc__type_is_complex(dt))
    nbc__buf_printf(b, "%*sif not (math.isnan(v.real) or math.isnan(v.imag)):\n", in, "");
  else if (nbc__type_is_float(dt))
    nbc__buf_printf(b, "%*sif not math.isnan(v):\n", in, "");
  else
    return in;
  return in + 4;
}

/* numba's np.nanmin / np.nanmax (nan_min_max_factory): the first element, then each later one
 * that is not NaN and not beyond it; a NaN first element is replaced by the first number
 * after it. */
static void nan_extreme(nbc__buf *b, int ndim, const nbc__type *dt, const char *sign) {
  nbc__buf_puts(b, "    if a.size == 0:\n        raise ValueError(\"zero-size array to "
                   "reduction operation not possible\")\n    r = a[");
  first_index(b, ndim);
  nbc__buf_puts(b, "]\n");
  if (nbc__type_is_complex(dt)) {
    nbc__buf idx;
    nbc__buf_init(&idx, b->arena);
    int in = open_loops(b, ndim, &idx);
    nbc__buf_printf(b, "%*sv = a[%s]\n", in, "", idx.data);
    nbc__buf_printf(b, "%*sif math.isnan(r.real) and not math.isnan(v.real):\n%*sr = v\n", in,
                    "", in + 4, "");
    nbc__buf_printf(b, "%*selif v.real %s r.real:\n%*sr = v\n", in, "", sign, in + 4, "");
    nbc__buf_printf(b, "%*selif v.real == r.real and v.imag %s r.imag:\n%*sr = v\n", in, "",
                    sign, in + 4, "");
  } else {
    int in = open_nan_skip(b, ndim, dt);
    /* numba's `if not comparison_op(return_val, v)`: the comparison reversed */
    nbc__buf_printf(b, "%*sif not r %s v:\n%*sr = v\n", in, "", sign, in + 4, "");
  }
  nbc__buf_puts(b, "    return r\n");
}

/* _nanmean(a), which nanvar and nanstd use too: numba's c = 0.0, count = 0 and np.divide(c,
 * count), NaN (NaN + NaNj for complex numbers) when every element is NaN or there is none. A
 * complex c is divided as numpy's (and numba's npyfuncs) complex division divides by count +
 * 0j: each part plus the other times 0, times the reciprocal of count. */
static void nan_mean(nbc__buf *b, int ndim, const nbc__type *dt) {
  bool cx = nbc__type_is_complex(dt);
  nbc__buf_printf(b, "def _nanmean(a):\n    c = %s\n    n = 0\n", cx ? "0j" : "0.0");
  int in = open_nan_skip(b, ndim, dt);
  nbc__buf_printf(b, "%*sc += v\n%*sn += 1\n", in, "", in, "");
  if (cx)
    nbc__buf_puts(b, "    if n == 0:\n        return complex(math.nan, math.nan)\n"
                     "    scl = 1.0 / n\n"
                     "    return complex((c.real + c.imag * 0.0) * scl, "
                     "(c.imag - c.real * 0.0) * scl)\n\n\n");
  else
    nbc__buf_puts(b, "    if n == 0:\n        return math.nan\n    return c / n\n\n\n");
}

/* _mean(a), which var and std use too. */
static void mean(nbc__buf *b, int ndim, const nbc__type *dt, nbc__ctx *ctx) {
  bool integral = nbc__type_is_int(dt) || dt->kind == NBC__T_BOOL;
  const char *acc = integral ? "float64" : numba_name(ctx, dt);
  nbc__buf_puts(b, "def _mean(a):\n");
  accumulate(b, ndim, nbc__arena_printf(ctx->arena, "%s(0)", acc), "+");
  nbc__buf_puts(b, "    return c / a.size\n\n\n");
}

const char *nbc__array_reduction_source(nbc__ctx *ctx, const char *name, const nbc__type *a) {
  if (a->kind != NBC__T_ARRAY || a->ndim < 0 || !a->dtype) return NULL;
  const nbc__type *dt = a->dtype;
  int nd = a->ndim;
  nbc__buf b;
  nbc__buf_init(&b, ctx->arena);
  /* the type names the bodies use: the accumulators, the element type, int64 (nansum's) */
  nbc__buf_puts(&b, "import math\nfrom numba import boolean, float64, int64");
  const nbc__type *named[2] = {sum_type(dt), dt};
  for (int i = 0; i < 2; i++)
    if (named[i]->kind != NBC__T_BOOL && named[i]->kind != NBC__T_FLOAT64 &&
        named[i]->kind != NBC__T_INT64 && (i == 0 || named[1] != named[0]))
      nbc__buf_printf(&b, ", %s", numba_name(ctx, named[i]));
  nbc__buf_puts(&b, "\n\n\n");
  if (strcmp(name, "mean") == 0 || strcmp(name, "var") == 0 || strcmp(name, "std") == 0)
    mean(&b, nd, dt, ctx);
  if (strcmp(name, "var") == 0 || strcmp(name, "std") == 0) {
    nbc__buf idx;
    nbc__buf_init(&idx, ctx->arena);
    nbc__buf_puts(&b, "def _var(a):\n    m = _mean(a)\n    ssd = 0\n");
    int in = open_loops(&b, nd, &idx);
    nbc__buf_printf(&b, "%*sval = a[%s] - m\n%*sssd += (val * val.conjugate()).real\n", in, "",
                    idx.data, in, "");
    nbc__buf_puts(&b, "    return ssd / a.size\n\n\n");
    if (name[0] == 's') nbc__buf_puts(&b, "def _std(a):\n    return _var(a) ** 0.5\n");
  } else if (strcmp(name, "sum") == 0 || strcmp(name, "prod") == 0) {
    bool sum = name[0] == 's';
    const char *init =
        nbc__arena_printf(ctx->arena, "%s(%d)", numba_name(ctx, sum ? sum_type(dt) : dt), !sum);
    nbc__buf_printf(&b, "def _%s(a):\n", name);
    accumulate(&b, nd, init, sum ? "+" : "*");
    nbc__buf_puts(&b, "    return c\n");
  } else if (strncmp(name, "nan", 3) != 0 && (strstr(name, "min") || strstr(name, "max"))) {
    bool arg = name[0] == 'a' && name[1] == 'r', is_min = strstr(name, "min") != NULL;
    const char *empty = arg ? (is_min ? "attempt to get argmin of an empty sequence"
                                      : "attempt to get argmax of an empty sequence")
                            : (is_min ? "zero-size array to reduction operation minimum "
                                        "which has no identity"
                                      : "zero-size array to reduction operation maximum "
                                        "which has no identity");
    nbc__buf_printf(&b, "def _%s(a):\n", name);
    extreme(&b, nd, dt, is_min ? "<" : ">", arg, empty);
  } else if (strcmp(name, "all") == 0 || strcmp(name, "any") == 0) {
    nbc__buf_printf(&b, "def _%s(a):\n", name);
    truth(&b, nd, name[1] == 'l');
  } else if (strcmp(name, "nansum") == 0 || strcmp(name, "nanprod") == 0) {
    /* numba's retty: intp for integers (and bools, which c += v makes int64), else the
     * dtype */
    bool sum = name[3] == 's', integral = nbc__type_is_int(dt) || dt->kind == NBC__T_BOOL;
    nbc__buf_printf(&b, "def _%s(a):\n    c = %s(%d)\n", name,
                    integral ? "int64" : numba_name(ctx, dt), !sum);
    int in = open_nan_skip(&b, nd, dt);
    nbc__buf_printf(&b, "%*sc %s= v\n    return c\n", in, "", sum ? "+" : "*");
  } else if (strcmp(name, "nanmean") == 0 || strcmp(name, "nanvar") == 0 ||
             strcmp(name, "nanstd") == 0) {
    nan_mean(&b, nd, dt);
    if (strcmp(name, "nanmean") != 0) {
      nbc__buf_puts(&b, "def _nanvar(a):\n    m = _nanmean(a)\n    ssd = 0.0\n    n = 0\n");
      int in = open_nan_skip(&b, nd, dt);
      nbc__buf_printf(&b, "%*sval = v - m\n%*sssd += (val * val.conjugate()).real\n"
                          "%*sn += 1\n", in, "", in, "", in, "");
      nbc__buf_puts(&b, "    if n == 0:\n        return math.nan\n    return ssd / n\n\n\n");
      if (name[3] == 's') nbc__buf_puts(&b, "def _nanstd(a):\n    return _nanvar(a) ** 0.5\n");
    }
  } else if (strcmp(name, "nanmin") == 0 || strcmp(name, "nanmax") == 0) {
    nbc__buf_printf(&b, "def _%s(a):\n", name);
    nan_extreme(&b, nd, dt, name[4] == 'i' ? "<" : ">");
  } else if (strcmp(name, "count_nonzero") == 0) {
    nbc__buf idx;
    nbc__buf_init(&idx, ctx->arena);
    nbc__buf_puts(&b, "def _count_nonzero(a):\n    c = 0\n");
    int in = open_loops(&b, nd, &idx);
    nbc__buf_printf(&b, "%*sif a[%s] != 0:\n%*sc += 1\n    return c\n", in, "", idx.data,
                    in + 4, "");
  }
  return b.oom ? NULL : b.data;
}

const char *nbc__builtin_reduction_source(nbc__ctx *ctx, const char *name,
                                          const nbc__type *it) {
  nbc__buf b;
  nbc__buf_init(&b, ctx->arena);
  nbc__buf_puts(&b, "from numba import literal_unroll\n\n\n");
  bool tuple = it->kind == NBC__T_TUPLE;
  if (strcmp(name, "sum") == 0) {
    nbc__buf_puts(&b, "def _sum(a, start):\n    acc = start\n");
    nbc__buf_puts(&b, tuple ? "    for x in literal_unroll(a):\n        acc = acc + x\n"
                      : it->kind == NBC__T_RANGE ? "    for x in a:\n        acc = acc + x\n"
                            : "    for i in range(a.shape[0]):\n        acc = acc + a[i]\n");
    nbc__buf_puts(&b, "    return acc\n");
  } else { /* min, max */
    const char *sign = strcmp(name, "min") == 0 ? "<" : ">";
    nbc__buf_printf(&b, "def _%s(a):\n", name);
    if (tuple)
      nbc__buf_printf(&b,
                      "    m = a[0]\n    for v in literal_unroll(a):\n        if v %s m:\n"
                      "            m = v\n    return m\n",
                      sign);
    else
      nbc__buf_printf(&b,
                      "    if a.shape[0] == 0:\n        raise StopIteration()\n"
                      "    m = a[0]\n    for i in range(1, a.shape[0]):\n"
                      "        v = a[i]\n        if v %s m:\n            m = v\n"
                      "    return m\n",
                      sign);
  }
  return b.oom ? NULL : b.data;
}
