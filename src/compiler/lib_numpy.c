/* lib_numpy.c — the numpy namespace of the kernel language: the names of the numpy module a
 * kernel may use, one table of its ufuncs (UFUNCS: a row each, with its loops, the math
 * function or the operation computing it and how numba computes it on a complex number),
 * numba's typing of the calls, and the lowering of the ufuncs that have no math equivalent.
 *
 * Numba users write `import numpy as np` and then `np.float32(x)`,
 * `cuda.shared.array(256, dtype=np.float32)`, `np.sqrt(x)`, `np.pi`. What each name means:
 *
 *  - dtypes (np.float32, np.int64, np.bool_, np.double, ...): a scalar type, used as a
 *    conversion or a dtype, named by numpy's own aliases (np.byte is int8 here, where numba's
 *    `byte` is uint8);
 *  - constants: np.pi, np.e, np.euler_gamma, np.inf, np.nan (numba freezes them as float64);
 *  - ufuncs on scalars: the common ones with a math equivalent (sqrt, exp, log, sin,
 *    arctan2, ...), absolute, floor/ceil/trunc, isnan/isinf/isfinite, isnat (of dates) and
 *    minimum/maximum/fmin/fmax, the bitwise ones (bitwise_and/or/xor, invert, left_shift,
 *    right_shift) and conjugate. Everything else of numpy is refused by name.
 *
 * Typing follows numba's ufunc_find_matching_loop (numba/np/numpy_support.py): numpy's
 * loops are tried in order and the first whose input type every argument can be cast to
 * "safely" wins, the output being that loop's output type. Numba adds one rule: when the
 * arguments mix integers and floats, any integer casts to any float, so
 * np.arctan2(int64, float32) is float32 while np.sqrt(int32) is float64 and np.sqrt(int16)
 * float32 (int16 casts safely to float32). Numba has no float16 loops; numba-cuda then fails
 * to lower float16 operands, so they are refused here, as are complex values.
 *
 * Calls: nbc__numpy_call types a ufunc on scalars with those loops and records it as the
 * builtin that computes the same thing
 * (MATH "sqrt" with the argument converted to the loop's type, ABS, MIN/MAX on integers, a
 * conversion for floor of an integer). The float minimum/maximum/fmin/fmax propagate or
 * ignore NaN as numpy does, unlike Python's min/max: they are NBC__B_NUMPY calls lowered
 * here with the select sequences of numba's npyfuncs.np_real_{minimum,maximum,fmin,fmax}
 * _impl. Over arrays with an explicit output, and on complex numbers with numba's npyfuncs
 * formulas, a ufunc is a call of generated kernel-language source (the end of this file).
 * Adding a ufunc is a row of UFUNCS.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/infer.h"
#include "compiler/lower.h"

/* ------------------------------------------------------------------------ the names --- */

static const struct {
  const char *name;
  nbc__type_kind kind;
} dtypes[] = {
    {"bool_", NBC__T_BOOL},         {"bool", NBC__T_BOOL},
    {"int8", NBC__T_INT8},          {"byte", NBC__T_INT8},
    {"int16", NBC__T_INT16},        {"short", NBC__T_INT16},
    {"int32", NBC__T_INT32},        {"intc", NBC__T_INT32},
    {"int64", NBC__T_INT64},        {"intp", NBC__T_INT64},
    {"int_", NBC__T_INT64},         {"long", NBC__T_INT64},
    {"longlong", NBC__T_INT64},     {"uint8", NBC__T_UINT8},
    {"ubyte", NBC__T_UINT8},        {"uint16", NBC__T_UINT16},
    {"ushort", NBC__T_UINT16},      {"uint32", NBC__T_UINT32},
    {"uintc", NBC__T_UINT32},       {"uint64", NBC__T_UINT64},
    {"uintp", NBC__T_UINT64},       {"uint", NBC__T_UINT64},
    {"ulong", NBC__T_UINT64},       {"ulonglong", NBC__T_UINT64},
    {"float16", NBC__T_FLOAT16},    {"half", NBC__T_FLOAT16},
    {"float32", NBC__T_FLOAT32},    {"single", NBC__T_FLOAT32},
    {"float64", NBC__T_FLOAT64},    {"double", NBC__T_FLOAT64},
    {"float_", NBC__T_FLOAT64},     {"complex64", NBC__T_COMPLEX64},
    {"csingle", NBC__T_COMPLEX64},  {"complex128", NBC__T_COMPLEX128},
    {"cdouble", NBC__T_COMPLEX128}, {"complex_", NBC__T_COMPLEX128},
};

const nbc__type *nbc__numpy_dtype(const char *name) {
  for (size_t i = 0; name && i < sizeof dtypes / sizeof dtypes[0]; i++)
    if (strcmp(dtypes[i].name, name) == 0) return nbc__type_scalar(dtypes[i].kind);
  return NULL;
}

const nbc__type *nbc__numpy_dtype_string(const char *text) {
  if (!text) return NULL;
  const nbc__type *t = nbc__numpy_dtype(text);
  if (t) return t;
  const char *s = text;
  if (*s == '<' || *s == '=' || *s == '|') s++; /* this machine's order; '>' is not it */
  static const struct {
    const char *code;
    nbc__type_kind kind;
  } codes[] = {{"?", NBC__T_BOOL},     {"b1", NBC__T_BOOL},     {"b", NBC__T_INT8},
               {"i1", NBC__T_INT8},    {"B", NBC__T_UINT8},     {"u1", NBC__T_UINT8},
               {"h", NBC__T_INT16},    {"i2", NBC__T_INT16},    {"H", NBC__T_UINT16},
               {"u2", NBC__T_UINT16},  {"i", NBC__T_INT32},     {"i4", NBC__T_INT32},
               {"I", NBC__T_UINT32},   {"u4", NBC__T_UINT32},   {"l", NBC__T_INT64},
               {"q", NBC__T_INT64},    {"i8", NBC__T_INT64},    {"L", NBC__T_UINT64},
               {"Q", NBC__T_UINT64},   {"u8", NBC__T_UINT64},   {"e", NBC__T_FLOAT16},
               {"f2", NBC__T_FLOAT16}, {"f", NBC__T_FLOAT32},   {"f4", NBC__T_FLOAT32},
               {"d", NBC__T_FLOAT64},  {"f8", NBC__T_FLOAT64},  {"F", NBC__T_COMPLEX64},
               {"c8", NBC__T_COMPLEX64}, {"D", NBC__T_COMPLEX128}, {"c16", NBC__T_COMPLEX128}};
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
    if (strcmp(codes[i].code, s) == 0) return nbc__type_scalar(codes[i].kind);
  /* dates: M8[unit], m8[unit], datetime64[unit], timedelta64[unit] */
  nbc__type_kind kind = NBC__T_VOID;
  size_t skip = 0;
  if (strncmp(s, "M8[", 3) == 0 || strncmp(s, "m8[", 3) == 0) {
    kind = s[0] == 'M' ? NBC__T_DATETIME : NBC__T_TIMEDELTA;
    skip = 3;
  } else if (strncmp(text, "datetime64[", 11) == 0 || strncmp(text, "timedelta64[", 12) == 0) {
    kind = text[0] == 'd' ? NBC__T_DATETIME : NBC__T_TIMEDELTA;
    s = text;
    skip = kind == NBC__T_DATETIME ? 11 : 12;
  }
  const char *close = kind != NBC__T_VOID ? strchr(s + skip, ']') : NULL;
  if (!close || close[1]) return NULL;
  int unit = nbc__datetime_unit(s + skip, (size_t)(close - s - skip));
  return unit >= 0 ? nbc__type_datetime(kind, unit) : NULL;
}

bool nbc__numpy_constant(const char *name, double *pv) {
  static const struct {
    const char *name;
    double value;
  } consts[] = {{"pi", 3.141592653589793},
                {"e", 2.718281828459045},
                {"euler_gamma", 0.5772156649015329},
                {"inf", INFINITY},
                {"nan", NAN}};
  for (size_t i = 0; name && i < sizeof consts / sizeof consts[0]; i++)
    if (strcmp(consts[i].name, name) == 0) {
      *pv = consts[i].value;
      return true;
    }
  return false;
}

/* Which loops a ufunc has (numpy's, less float16, long double, complex and object; the
 * comparisons and logical ufuncs have their complex loops, nbc__type_numpy). */
typedef enum loops {
  LOOPS_FLOAT,  /* f->f d->d */
  LOOPS_ALL,    /* ?->? b->b ... Q->Q f->f d->d */
  LOOPS_PRED,   /* the same inputs, a boolean output */
  LOOPS_NOBOOL, /* b->b ... d->d: power */
  LOOPS_INT,    /* ?->? b->b ... Q->Q: the bitwise ufuncs */
  LOOPS_SHIFT,  /* b->b ... Q->Q: left_shift, right_shift */
  LOOPS_NUMBER, /* b->b ... d->d, and complex: conjugate */
  LOOPS_DATES,  /* M->? m->?: isnat */
} loops;

/* How a ufunc is computed besides its loops (numpy.c's lowering, or the builtin it is
 * recorded as): by its math function (the row's math, or a conversion of an integer for
 * floor/ceil/trunc), as abs, minimum/maximum (NaN wins) and fmin/fmax (the number wins), as
 * a bitwise operator (op), np.invert, np.conjugate, a comparison (op), a logical operator (op
 * AND, OR, BITXOR or NOT, which is xor with true), or isnat. op is 0 for the others. */
typedef enum how {
  BY_MATH,
  BY_ABS,
  BY_MINIMUM,
  BY_MAXIMUM,
  BY_FMIN,
  BY_FMAX,
  BY_BITWISE,
  BY_INVERT,
  BY_CONJUGATE,
  BY_COMPARE,
  BY_LOGICAL,
  BY_ISNAT,
} how;

/* numpy's ufuncs that kernels have:
 *   U(name, alias, nin, loops, math, how, op, cmath, formula)
 * name numpy's __name__, alias another numpy name of the same ufunc (or NULL), nin its
 * inputs, loops which loops it has, math the math function computing it on the loop's float
 * type (or NULL), how and op as above; on a complex number numba computes it with cmath's
 * function cmath (or NULL), or with its own npyfuncs formula when formula is true
 * (src/library/npyfuncs.py's _np_<name>). */
#define UFUNCS(U)                                                                              \
  U("sqrt", NULL, 1, FLOAT, "sqrt", BY_MATH, 0, "sqrt", false)                                 \
  U("exp", NULL, 1, FLOAT, "exp", BY_MATH, 0, "exp", false)                                    \
  U("exp2", NULL, 1, FLOAT, "exp2", BY_MATH, 0, NULL, true)                                    \
  U("expm1", NULL, 1, FLOAT, "expm1", BY_MATH, 0, NULL, true)                                  \
  U("log", NULL, 1, FLOAT, "log", BY_MATH, 0, "log", false)                                    \
  U("log2", NULL, 1, FLOAT, "log2", BY_MATH, 0, NULL, true)                                    \
  U("log10", NULL, 1, FLOAT, "log10", BY_MATH, 0, NULL, true)                                  \
  U("log1p", NULL, 1, FLOAT, "log1p", BY_MATH, 0, NULL, true)                                  \
  U("sin", NULL, 1, FLOAT, "sin", BY_MATH, 0, "sin", false)                                    \
  U("cos", NULL, 1, FLOAT, "cos", BY_MATH, 0, "cos", false)                                    \
  U("tan", NULL, 1, FLOAT, "tan", BY_MATH, 0, "tan", false)                                    \
  U("arcsin", NULL, 1, FLOAT, "asin", BY_MATH, 0, "asin", false)                               \
  U("arccos", NULL, 1, FLOAT, "acos", BY_MATH, 0, "acos", false)                               \
  U("arctan", NULL, 1, FLOAT, "atan", BY_MATH, 0, "atan", false)                               \
  U("sinh", NULL, 1, FLOAT, "sinh", BY_MATH, 0, NULL, true)                                    \
  U("cosh", NULL, 1, FLOAT, "cosh", BY_MATH, 0, NULL, true)                                    \
  U("tanh", NULL, 1, FLOAT, "tanh", BY_MATH, 0, NULL, true)                                    \
  U("arcsinh", NULL, 1, FLOAT, "asinh", BY_MATH, 0, "asinh", false)                            \
  U("arccosh", NULL, 1, FLOAT, "acosh", BY_MATH, 0, NULL, true)                                \
  U("arctanh", NULL, 1, FLOAT, "atanh", BY_MATH, 0, "atanh", false)                            \
  U("fabs", NULL, 1, FLOAT, "fabs", BY_MATH, 0, NULL, false)                                   \
  U("deg2rad", NULL, 1, FLOAT, "radians", BY_MATH, 0, NULL, false)                             \
  U("radians", NULL, 1, FLOAT, "radians", BY_MATH, 0, NULL, false)                             \
  U("rad2deg", NULL, 1, FLOAT, "degrees", BY_MATH, 0, NULL, false)                             \
  U("degrees", NULL, 1, FLOAT, "degrees", BY_MATH, 0, NULL, false)                             \
  U("floor", NULL, 1, ALL, "floor", BY_MATH, 0, NULL, false)                                   \
  U("ceil", NULL, 1, ALL, "ceil", BY_MATH, 0, NULL, false)                                     \
  U("trunc", NULL, 1, ALL, "trunc", BY_MATH, 0, NULL, false)                                   \
  U("absolute", "abs", 1, ALL, NULL, BY_ABS, 0, NULL, false)                                   \
  U("isnan", NULL, 1, PRED, "isnan", BY_MATH, 0, "isnan", false)                               \
  U("isinf", NULL, 1, PRED, "isinf", BY_MATH, 0, "isinf", false)                               \
  U("isfinite", NULL, 1, PRED, "isfinite", BY_MATH, 0, "isfinite", false)                      \
  U("minimum", NULL, 2, ALL, NULL, BY_MINIMUM, 0, NULL, false)                                 \
  U("maximum", NULL, 2, ALL, NULL, BY_MAXIMUM, 0, NULL, false)                                 \
  U("fmin", NULL, 2, ALL, NULL, BY_FMIN, 0, NULL, false)                                       \
  U("fmax", NULL, 2, ALL, NULL, BY_FMAX, 0, NULL, false)                                       \
  U("arctan2", NULL, 2, FLOAT, "atan2", BY_MATH, 0, NULL, false)                               \
  U("hypot", NULL, 2, FLOAT, "hypot", BY_MATH, 0, NULL, false)                                 \
  U("copysign", NULL, 2, FLOAT, "copysign", BY_MATH, 0, NULL, false)                           \
  U("power", NULL, 2, NOBOOL, "pow", BY_MATH, 0, NULL, false)                                  \
  U("bitwise_and", NULL, 2, INT, NULL, BY_BITWISE, NBC__OP_BITAND, NULL, false)                \
  U("bitwise_or", NULL, 2, INT, NULL, BY_BITWISE, NBC__OP_BITOR, NULL, false)                  \
  U("bitwise_xor", NULL, 2, INT, NULL, BY_BITWISE, NBC__OP_BITXOR, NULL, false)                \
  U("invert", "bitwise_not", 1, INT, NULL, BY_INVERT, 0, NULL, false)                          \
  U("left_shift", NULL, 2, SHIFT, NULL, BY_BITWISE, NBC__OP_LSHIFT, NULL, false)               \
  U("right_shift", NULL, 2, SHIFT, NULL, BY_BITWISE, NBC__OP_RSHIFT, NULL, false)              \
  U("conjugate", "conj", 1, NUMBER, NULL, BY_CONJUGATE, 0, NULL, false)                        \
  U("greater", NULL, 2, PRED, NULL, BY_COMPARE, NBC__OP_GT, NULL, false)                       \
  U("greater_equal", NULL, 2, PRED, NULL, BY_COMPARE, NBC__OP_GE, NULL, false)                 \
  U("less", NULL, 2, PRED, NULL, BY_COMPARE, NBC__OP_LT, NULL, false)                          \
  U("less_equal", NULL, 2, PRED, NULL, BY_COMPARE, NBC__OP_LE, NULL, false)                    \
  U("equal", NULL, 2, PRED, NULL, BY_COMPARE, NBC__OP_EQ, NULL, false)                         \
  U("not_equal", NULL, 2, PRED, NULL, BY_COMPARE, NBC__OP_NE, NULL, false)                     \
  U("logical_and", NULL, 2, PRED, NULL, BY_LOGICAL, NBC__OP_AND, NULL, false)                  \
  U("logical_or", NULL, 2, PRED, NULL, BY_LOGICAL, NBC__OP_OR, NULL, false)                    \
  U("logical_xor", NULL, 2, PRED, NULL, BY_LOGICAL, NBC__OP_BITXOR, NULL, false)               \
  U("logical_not", NULL, 1, PRED, NULL, BY_LOGICAL, NBC__OP_NOT, NULL, false)                  \
  U("isnat", NULL, 1, DATES, NULL, BY_ISNAT, 0, NULL, false)

static const struct ufunc {
  const char *name, *alias;
  int nin;
  loops loops;
  const char *math;
  how how;
  nbc__op op;
  const char *cmath;
  bool formula;
} ufuncs[] = {
#define UFUNC_ROW_(name, alias, nin, loops, math, how, op, cmath, formula)                       \
  {name, alias, nin, LOOPS_##loops, math, how, (nbc__op)op, cmath, formula},
    UFUNCS(UFUNC_ROW_)
#undef UFUNC_ROW_
};

static const struct ufunc *ufunc_find(const char *name) {
  for (size_t i = 0; name && i < sizeof ufuncs / sizeof ufuncs[0]; i++)
    if (strcmp(ufuncs[i].name, name) == 0 ||
        (ufuncs[i].alias && strcmp(ufuncs[i].alias, name) == 0))
      return &ufuncs[i];
  return NULL;
}

const char *nbc__numpy_ufunc(const char *name) {
  const struct ufunc *u = ufunc_find(name);
  return u ? u->name : NULL;
}

int nbc__numpy_ufunc_nin(const char *name) {
  const struct ufunc *u = ufunc_find(name);
  return u ? u->nin : 0;
}

/* ----------------------------------------------------------------------- the typing --- */

/* np.can_cast(from, to, 'safe') over bool, the integers and float32/float64. */
static bool can_cast_safe(const nbc__type *from, const nbc__type *to) {
  if (nbc__type_equal(from, to) || from->kind == NBC__T_BOOL) return true;
  int fb = nbc__type_bits(from), tb = nbc__type_bits(to);
  if (nbc__type_is_float(from)) return nbc__type_is_float(to) && tb >= fb;
  if (nbc__type_is_float(to)) return tb > fb || to->kind == NBC__T_FLOAT64;
  if (!nbc__type_is_int(to)) return false;
  if (nbc__type_is_signed(from)) return nbc__type_is_signed(to) && tb >= fb;
  return nbc__type_is_signed(to) ? tb > fb : tb >= fb;
}

static bool same_kind(const nbc__type *from, const nbc__type *to) {
  if (nbc__type_equal(from, to) || from->kind == NBC__T_BOOL) return true;
  if (nbc__type_is_complex(to)) return nbc__type_is_number(from);
  if (nbc__type_is_float(to)) return nbc__type_is_int(from) || nbc__type_is_float(from);
  if (!nbc__type_is_int(to) || !nbc__type_is_int(from)) return false;
  return nbc__type_is_signed(from) == nbc__type_is_signed(to) || can_cast_safe(from, to);
}

const nbc__type *nbc__type_numpy(const char *name, const nbc__type *const *args, int nargs,
                                 const nbc__type **ploop, const char **pwhy) {
  static const nbc__type_kind all[] = {
      NBC__T_BOOL,   NBC__T_INT8,  NBC__T_UINT8,  NBC__T_INT16,   NBC__T_UINT16, NBC__T_INT32,
      NBC__T_UINT32, NBC__T_INT64, NBC__T_UINT64, NBC__T_FLOAT32, NBC__T_FLOAT64};
  const struct ufunc *u = ufunc_find(name);
  *pwhy = NULL;
  if (!u) return *pwhy = "unknown NumPy ufunc", NULL;
  if (nargs != u->nin) return NULL;
  if (u->loops == LOOPS_DATES) { /* the argument itself; NaT is INT64_MIN */
    if (!nbc__type_is_datetime(args[0]))
      return *pwhy = "it takes a datetime64 or timedelta64 (numpy's isnat)", NULL;
    *ploop = args[0];
    return nbc__type_scalar(NBC__T_BOOL);
  }
  if (u->loops == LOOPS_NUMBER && args[0] && nbc__type_is_complex(args[0])) /* F->F, D->D */
    return *ploop = args[0];
  bool any_int = false, any_float = false, any_complex = false, c64 = true;
  for (int i = 0; i < nargs; i++) {
    const nbc__type *t = args[i];
    if (!t || !nbc__type_is_number(t)) return NULL;
    any_complex |= nbc__type_is_complex(t);
    c64 = c64 && (t->kind == NBC__T_COMPLEX64 ||
                  (!nbc__type_is_complex(t) && can_cast_safe(t, nbc__type_scalar(NBC__T_FLOAT32))));
  }
  /* the comparisons and logical ufuncs have numpy's FF->? and DD->? loops: the first that
   * every argument casts to safely */
  bool minmax = u->how == BY_MINIMUM || u->how == BY_MAXIMUM || u->how == BY_FMIN ||
                u->how == BY_FMAX;
  if (any_complex && minmax) { /* FF->F, DD->D (numba's np_complex_maximum_impl...) */
    *ploop = nbc__type_scalar(c64 ? NBC__T_COMPLEX64 : NBC__T_COMPLEX128);
    return *ploop;
  }
  if (any_complex && u->loops == LOOPS_PRED && !u->math) {
    *ploop = nbc__type_scalar(c64 ? NBC__T_COMPLEX64 : NBC__T_COMPLEX128);
    return nbc__type_scalar(NBC__T_BOOL);
  }
  for (int i = 0; i < nargs; i++) {
    const nbc__type *t = args[i];
    if (nbc__type_is_complex(t)) return *pwhy = "complex arguments are not supported", NULL;
    if (t->kind == NBC__T_FLOAT16) return *pwhy = "float16 arguments are not supported", NULL;
    any_int |= nbc__type_is_int(t);
    any_float |= nbc__type_is_float(t);
  }
  bool mixed = any_int && any_float; /* numba: then any integer casts to any float */
  size_t first = u->loops == LOOPS_FLOAT ? 9
                 : u->loops == LOOPS_NOBOOL || u->loops == LOOPS_SHIFT || u->loops == LOOPS_NUMBER
                     ? 1
                     : 0;
  size_t end = u->loops == LOOPS_INT || u->loops == LOOPS_SHIFT ? 9 : sizeof all / sizeof all[0];
  for (size_t k = first; k < end; k++) {
    const nbc__type *loop = nbc__type_scalar(all[k]);
    bool viable = true;
    for (int i = 0; i < nargs && viable; i++)
      viable = (mixed && nbc__type_is_int(args[i]) && nbc__type_is_float(loop)) ||
               can_cast_safe(args[i], loop);
    if (!viable) continue;
    if (u->loops == LOOPS_NOBOOL && !nbc__type_is_float(loop))
      return *pwhy = "integer loops are not supported (use ** or convert to float)", NULL;
    *ploop = loop;
    return u->loops == LOOPS_PRED ? nbc__type_scalar(NBC__T_BOOL) : loop;
  }
  return NULL;
}

/* What computes the ufunc on its loop's type, for infer_call.c: a math function, ABS,
 * MIN/MAX, a conversion (floor of an integer is the integer) or NUMPY (lowered below). */
static nbc__builtin builtin_of(const char *name, const nbc__type *loop, const char **pmath) {
  const struct ufunc *u = ufunc_find(name);
  *pmath = NULL;
  if (!u) return NBC__B_NUMPY;
  bool fl = nbc__type_is_float(loop) || nbc__type_is_complex(loop);
  if (u->how == BY_ABS) return NBC__B_ABS;
  if (u->how == BY_MINIMUM || u->how == BY_FMIN) return fl ? NBC__B_NUMPY : NBC__B_MIN;
  if (u->how == BY_MAXIMUM || u->how == BY_FMAX) return fl ? NBC__B_NUMPY : NBC__B_MAX;
  if (u->loops == LOOPS_ALL && !fl) return NBC__B_CAST; /* floor/ceil/trunc of an integer */
  if (!u->math) return NBC__B_NUMPY; /* the bitwise ufuncs and conjugate, lowered below */
  *pmath = u->math;
  return NBC__B_MATH;
}

/* --------------------------------------------------------------------- the lowering --- */

/* The bitwise ufuncs on their loop's type, with numba's integer operations (numbers.py's
 * int_and_impl... on the loop type: the shifts as the operators lower them, at the loop's
 * width); np.invert of a bool is `not`. np.conjugate of a real number is itself. */
static nbc__lval lower_bitwise(nbc__lowerer *L, nbc__node *n, const struct ufunc *u,
                               const nbc__type *rt) {
  nbc__lval a = nbc__lower_convert(L, nbc__lower_expr(L, n->list.items[0]), rt);
  if (u->how == BY_CONJUGATE)
    return nbc__type_is_complex(rt) ? nbc__lower_complex_conjugate(L, a) : a;
  if (u->how == BY_INVERT) {
    const char *x = nbc__lower_tmp(L);
    nbc__lower_emit(L, "%s = xor %s %s, %s", x, nbc__lower_ltype(L, rt), a.v,
                    rt->kind == NBC__T_BOOL ? "true" : "-1");
    return (nbc__lval){rt, x};
  }
  nbc__lval b = nbc__lower_convert(L, nbc__lower_expr(L, n->list.items[1]), rt);
  return nbc__lower_binop_values(L, n, u->op, a, n->list.items[1], b, rt);
}

/* numba's np_complex_gt_impl... (NumPy's CGT, CGE, CLT, CLE of loops.c.src): complex numbers
 * ordered by their real parts, then their imaginary parts; a NaN imaginary part makes the
 * comparison of different real parts false. op is GT, GE, LT or LE. */
static const char *complex_order(nbc__lowerer *L, nbc__node *n, nbc__op op, nbc__lval a,
                                 nbc__lval b) {
  nbc__lval xr = nbc__lower_complex_part(L, a, 0), xi = nbc__lower_complex_part(L, a, 1);
  nbc__lval yr = nbc__lower_complex_part(L, b, 0), yi = nbc__lower_complex_part(L, b, 1);
  nbc__op strict = op == NBC__OP_GT || op == NBC__OP_GE ? NBC__OP_GT : NBC__OP_LT;
  const char *reals = nbc__lower_compare_values(L, n, strict, xr, yr);
  const char *ordered = nbc__lower_tmp(L), *first = nbc__lower_tmp(L);
  nbc__lower_emit(L, "%s = fcmp ord %s %s, %s", ordered, nbc__lower_ltype(L, xi.type), xi.v,
                  yi.v);
  nbc__lower_emit(L, "%s = and i1 %s, %s", first, reals, ordered);
  const char *same = nbc__lower_compare_values(L, n, NBC__OP_EQ, xr, yr);
  const char *imags = nbc__lower_compare_values(L, n, op, xi, yi);
  const char *second = nbc__lower_tmp(L), *r = nbc__lower_tmp(L);
  nbc__lower_emit(L, "%s = and i1 %s, %s", second, same, imags);
  nbc__lower_emit(L, "%s = or i1 %s, %s", r, first, second);
  return r;
}

/* Whether the complex number z is NaN: either part is. */
static const char *complex_isnan(nbc__lowerer *L, nbc__lval z) {
  nbc__lval re = nbc__lower_complex_part(L, z, 0), im = nbc__lower_complex_part(L, z, 1);
  const char *ty = nbc__lower_ltype(L, re.type), *r = nbc__lower_tmp(L);
  const char *i = nbc__lower_tmp(L), *x = nbc__lower_tmp(L);
  nbc__lower_emit(L, "%s = fcmp uno %s %s, %s", r, ty, re.v, re.v);
  nbc__lower_emit(L, "%s = fcmp uno %s %s, %s", i, ty, im.v, im.v);
  nbc__lower_emit(L, "%s = or i1 %s, %s", x, r, i);
  return x;
}

/* The comparison and logical ufuncs: the arguments converted to the loop's type, then
 * compared as the operators compare (an unordered float comparison is false, except for
 * not_equal; complex numbers ordered as complex_order does), or their truth values
 * combined; a bool. */
static nbc__lval lower_predicate(nbc__lowerer *L, nbc__node *n, const struct ufunc *u,
                                 const nbc__call *call) {
  nbc__lval v[2];
  for (int k = 0; k < u->nin; k++)
    v[k] = nbc__lower_convert(L, nbc__lower_expr(L, n->list.items[k]), call->argtypes[k]);
  const char *x = NULL;
  if (u->how == BY_LOGICAL) {
    const char *a = nbc__lower_truth(L, v[0]), *b = u->nin > 1 ? nbc__lower_truth(L, v[1]) : NULL;
    const char *op = u->op == NBC__OP_AND  ? "and"
                     : u->op == NBC__OP_OR ? "or"
                                           : "xor"; /* xor, and not: xor true */
    x = nbc__lower_tmp(L);
    nbc__lower_emit(L, "%s = %s i1 %s, %s", x, op, a, b ? b : "true");
  } else {
    nbc__op op = u->op;
    x = nbc__type_is_complex(v[0].type) && op != NBC__OP_EQ && op != NBC__OP_NE
            ? complex_order(L, n, op, v[0], v[1])
            : nbc__lower_compare_values(L, n, op, v[0], v[1]);
  }
  return (nbc__lval){nbc__type_scalar(NBC__T_BOOL), x};
}

/* np.minimum/maximum (NaN wins) and np.fmin/fmax (the number wins) on floats; the bitwise
 * ufuncs and conjugate (lower_bitwise); comparisons and logical ufuncs (lower_predicate). */
nbc__lval nbc__numpy_lower(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  const nbc__type *rt = call->ret;
  const char *name = call->name ? call->name : "?";
  const struct ufunc *u = ufunc_find(name);
  if (u && u->loops == LOOPS_DATES && n->list.count == 1) { /* isnat */
    nbc__lval v = nbc__lower_expr(L, n->list.items[0]);
    const char *x = nbc__lower_tmp(L);
    nbc__lower_emit(L, "%s = icmp eq i64 %s, -9223372036854775808", x, v.v);
    return (nbc__lval){nbc__type_scalar(NBC__T_BOOL), x};
  }
  if (u && u->loops == LOOPS_PRED && !u->math && n->list.count == u->nin)
    return lower_predicate(L, n, u, call);
  if (u && !u->math && u->loops != LOOPS_ALL && rt && n->list.count == u->nin)
    return lower_bitwise(L, n, u, rt);
  bool complex = rt && nbc__type_is_complex(rt);
  if (n->list.count != 2 || !rt || !(nbc__type_is_float(rt) || complex)) {
    nbc__lower_error(L, n, "numpy.%s of these types is not supported", name);
    return (nbc__lval){rt, "0"};
  }
  nbc__lval a = nbc__lower_convert(L, nbc__lower_expr(L, n->list.items[0]), rt);
  nbc__lval b = nbc__lower_convert(L, nbc__lower_expr(L, n->list.items[1]), rt);
  if (nbc__lower_failed(L)) return (nbc__lval){rt, "0"};
  bool is_max = u && (u->how == BY_MAXIMUM || u->how == BY_FMAX);
  bool prefer_nan = u && (u->how == BY_MAXIMUM || u->how == BY_MINIMUM);
  const char *ty = nbc__lower_ltype(L, rt);
  const char *nan_of, *any_nan, *cmp;
  const char *nan_res = nbc__lower_tmp(L), *num_res = nbc__lower_tmp(L);
  const char *res = nbc__lower_tmp(L);
  /* maximum: a NaN first operand wins, else the second (NaN or not); fmax: a NaN second
   * operand loses to the first, else the second. A complex number is NaN when either part
   * is, and complex numbers are ordered as complex_order orders them (numba's
   * np_complex_maximum_impl...). */
  nbc__lval tested = prefer_nan ? a : b;
  if (complex) {
    nan_of = complex_isnan(L, tested);
    any_nan = nbc__lower_tmp(L);
    nbc__lower_emit(L, "%s = or i1 %s, %s", any_nan, complex_isnan(L, a), complex_isnan(L, b));
    cmp = complex_order(L, n, is_max ? NBC__OP_GE : NBC__OP_LE, a, b);
  } else {
    nan_of = nbc__lower_tmp(L);
    any_nan = nbc__lower_tmp(L);
    cmp = nbc__lower_tmp(L);
    nbc__lower_emit(L, "%s = fcmp uno %s %s, %s", nan_of, ty, tested.v, tested.v);
    nbc__lower_emit(L, "%s = fcmp uno %s %s, %s", any_nan, ty, a.v, b.v);
    nbc__lower_emit(L, "%s = fcmp %s %s %s, %s", cmp, is_max ? "oge" : "ole", ty, a.v, b.v);
  }
  nbc__lower_emit(L, "%s = select i1 %s, %s %s, %s %s", nan_res, nan_of, ty, a.v, ty, b.v);
  nbc__lower_emit(L, "%s = select i1 %s, %s %s, %s %s", num_res, cmp, ty, a.v, ty, b.v);
  nbc__lower_emit(L, "%s = select i1 %s, %s %s, %s %s", res, any_nan, ty, nan_res, ty, num_res);
  return (nbc__lval){rt, res};
}

/* ------------------------------------------------------- arrays with an explicit output --- */

/* numba's ufunc kernel with an explicit output, in the kernel language: each array input of
 * rank m lines up with out's last m axes, where each of its extents must be out's or 1 (the
 * index then stays 0), else the thread raises numba's ValueError; numbers are used as they
 * are. The loops visit out in C order; each element is the scalar ufunc of the inputs'
 * elements, stored with the conversion of an assignment; out is returned. */
static const char *ufunc_out_source(nbc__ctx *ctx, const char *name,
                                        const nbc__type *const *args, int nin, int out_ndim) {
  const struct ufunc *u = ufunc_find(name);
  if (!u || nin != u->nin || out_ndim < 1) return NULL;
  nbc__buf b;
  nbc__buf_init(&b, ctx->arena);
  nbc__buf_puts(&b, "import numpy as np\n\n\ndef _ufunc(");
  for (int k = 0; k < nin; k++)
    nbc__buf_printf(&b, "x%d, ", k);
  nbc__buf_puts(&b, "out):\n");
  for (int k = 0; k < nin; k++) /* more dimensions than out: numba's error at run time */
    if (args[k]->kind == NBC__T_ARRAY && args[k]->ndim > out_ndim) {
      nbc__buf_printf(&b, "    raise ValueError(\"unable to broadcast argument %d to output "
                          "array\")\n    return out\n", k);
      return b.oom ? NULL : b.data;
    }
  for (int k = 0; k < nin; k++) {
    if (args[k]->kind != NBC__T_ARRAY) continue;
    int m = args[k]->ndim;
    for (int j = 0; j < m; j++) {
      int d = j + out_ndim - m;
      nbc__buf_printf(&b,
                      "    if x%d.shape[%d] != out.shape[%d] and x%d.shape[%d] != 1:\n"
                      "        raise ValueError(\"unable to broadcast argument %d to output "
                      "array\")\n"
                      "    s%d_%d = 1 if x%d.shape[%d] != 1 else 0\n",
                      k, j, d, k, j, k, k, j, k, j);
    }
  }
  for (int d = 0; d < out_ndim; d++)
    nbc__buf_printf(&b, "%*sfor i%d in range(out.shape[%d]):\n", 4 + 4 * d, "", d, d);
  int in = 4 + 4 * out_ndim;
  nbc__buf_printf(&b, "%*sout[", in, "");
  for (int d = 0; d < out_ndim; d++)
    nbc__buf_printf(&b, "%si%d", d ? ", " : "", d);
  nbc__buf_printf(&b, "] = np.%s(", u->name);
  for (int k = 0; k < nin; k++) {
    nbc__buf_printf(&b, "%sx%d", k ? ", " : "", k);
    if (args[k]->kind != NBC__T_ARRAY) continue;
    int m = args[k]->ndim;
    nbc__buf_puts(&b, "[");
    for (int j = 0; j < m; j++)
      nbc__buf_printf(&b, "%si%d * s%d_%d", j ? ", " : "", j + out_ndim - m, k, j);
    nbc__buf_puts(&b, m ? "]" : "()]");
  }
  nbc__buf_puts(&b, ")\n    return out\n");
  return b.oom ? NULL : b.data;
}

/* ----------------------------------------------------------- complex numbers (npyfuncs) --- */

static const char *complex_cmath(const char *ufunc) {
  const struct ufunc *u = ufunc_find(ufunc);
  return u ? u->cmath : NULL;
}

/* The ufuncs numba computes on a complex number with formulas of its own (its npyfuncs, NumPy's
 * funcs.inc.src as numba translates them; the others go to cmath): each is `_np_<name>(z)` of
 * the library kernel src/library/npyfuncs.py, a template whose @F@ and @C@ stand for the float
 * and complex types of the precision (float32 parts and constants for complex64, as numba's
 * ty.underlying_float). */
static bool complex_formula(const char *ufunc) {
  const struct ufunc *u = ufunc_find(ufunc);
  return u && u->formula;
}

static const char *complex_source(nbc__ctx *ctx, const char *name, bool c64) {
  if (!complex_formula(name)) return NULL;
  const char *const pairs[] = {"F", c64 ? "np.float32" : "np.float64",
                               "C", c64 ? "np.complex64" : "np.complex128", NULL};
  char *text = NULL;
  if (nbc_library_kernel_fill("npyfuncs", pairs, &text) != NBC_OK) return NULL;
  const char *copy = nbc__arena_strdup(ctx->arena, text);
  free(text);
  return copy;
}

/* ------------------------------------------------------------------ the calls --- */

/* A ufunc on a complex number that numba computes with its npyfuncs formulas: a call of the
 * generated _np_<name> (below) for the number's type. */
static const nbc__type *call_complex_formula(infer *I, nbc__node *n, const char *ufunc,
                                             const nbc__type **types) {
  bool c64 = types[0]->kind == NBC__T_COMPLEX64;
  const char *src = complex_source(I->ctx, ufunc, c64);
  nbc__global *G = nbc__infer_call_method_generated_function(
      I, nbc__arena_printf(I->ctx->arena, "_np_%s", ufunc), src);
  return G ? nbc__infer_call_user_python(I, n, G, types, 1) : NULL;
}

/* A ufunc over arrays, as numba-cuda runs one in a kernel: with an explicit output array
 * (`np.sin(x, out)`, numpy's `out=` keyword too), which the call returns; numba's loop is
 * chosen by the inputs' element types and its result must cast to out's dtype as numpy's
 * 'same_kind' rule allows. The loops are ufunc_out_source's generated function. Without an
 * output the call would allocate, which kernels cannot. */
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
  const struct ufunc *u = ufunc_find(name);
  if (nin == 1 && nbc__type_is_complex(elems[0]) && u && (u->cmath || u->formula)) /* numba's */
    r = u->loops == LOOPS_PRED ? T(NBC__T_BOOL) : elems[0];
  else
    r = nbc__type_numpy(name, elems, nin, &loop, &why);
  if (!r && why) return UNSUPPORTED(I, n, "%s: %s", what, why), NULL;
  if (!r || !nbc__type_is_number(out->dtype) || !same_kind(r, out->dtype))
    return TYPING(I, n,
                  "can't resolve ufunc %s for the types of %s (its %s result does not "
                  "cast to the output's %s under numpy's 'same_kind' rule)",
                  name, what, r ? nbc__infer_tname(I, r) : "missing",
                  nbc__infer_tname(I, out->dtype)),
           NULL;
  const char *src = ufunc_out_source(I->ctx, name, types, nin, out->ndim);
  nbc__global *G = nbc__infer_call_method_generated_function(I, "_ufunc", src);
  return G ? nbc__infer_call_user_python(I, n, G, types, nargs) : NULL;
}

/* numpy.<ufunc> on scalars: numba's loop typing (below); the call is recorded as the
 * builtin computing the same thing on the loop's type, each argument converted to it. */
const nbc__type *nbc__numpy_call(infer *I, nbc__node *n, const char *name,
                                 const nbc__type **types, int nargs) {
  char what[64];
  snprintf(what, sizeof what, "numpy.%s", name);
  int nin = nbc__numpy_ufunc_nin(name);
  const char *canonical = nbc__numpy_ufunc(name);
  if (nargs == 1 && nin == 1 && nbc__type_is_complex(types[0]) &&
      nbc__infer_call_positional(n) == 1) {
    const char *cm = complex_cmath(canonical);
    if (cm) return nbc__cmath_call(I, n, cm, types, 1);
    if (complex_formula(canonical))
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
  nbc__builtin b = builtin_of(name, loop, &math);
  return nbc__infer_call_record_each(I, n, b, b == NBC__B_MATH ? math : name, nargs, loop, r);
}

/* numpy.dtype(x) as numba types it: x a string naming a type kernels have ("float32", "f4",
 * "<i8", "M8[D]") or a type (np.float32), giving that type as a value (a dtype argument of
 * cuda.local.array, a.view, a.astype...); it has no run-time value. */
const nbc__type *nbc__numpy_call_dtype(infer *I, nbc__node *n) {
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
