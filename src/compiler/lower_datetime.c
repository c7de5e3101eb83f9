/* lower_datetime.c — datetime64 and timedelta64 operations to NVVM IR, as numba-cuda lowers
 * them (np/npdatetime.py); their typing is datetime.c.
 *
 * Values are int64 counts of their unit, NaT being INT64_MIN. An operation converts its
 * operands to the result's unit (timedeltas by numba's integer factors; datetimes of years or
 * months first to days or weeks by the calendar, numba's reduce_datetime_for_unit and
 * numpy's year-to-days count) and gives NaT when an operand is NaT. Everything is computed
 * and then selected, without branches; divisions by a run-time value divide by 1 instead
 * where their result is not used, so no path divides by zero or overflows INT64_MIN / -1.
 *
 *   td / number: NaT when td is NaT or the number is 0 (or NaN); floats through double
 *   td / td: float64, NaN when either is NaT
 *   td // td: int64 floor, 0 when either is NaT or the divisor is 0 (numpy's answers)
 *   td % td: Python's modulo, NaT when either is NaT or the divisor is 0
 *   comparisons: False with a NaT operand, except != which is True; timedeltas of units
 *     that cannot convert are unequal
 *   abs(td), -td, +td: NaT stays NaT (its negation is itself)
 */
#include <stdint.h>

#include "compiler/lower.h"

#define NAT "-9223372036854775808"

static const char *emit2(nbc__lowerer *L, const char *op, const char *a, const char *b) {
  const char *x = tmp(L);
  EMIT("%s = %s i64 %s, %s", x, op, a, b);
  return x;
}

static const char *scaled(nbc__lowerer *L, const char *v, int64_t factor) {
  if (factor == 1) return v;
  return emit2(L, "mul", v, nbc__arena_printf(L->arena, "%lld", (long long)factor));
}

static const char *select_i64(nbc__lowerer *L, const char *cond, const char *yes,
                              const char *no) {
  const char *x = tmp(L);
  EMIT("%s = select i1 %s, i64 %s, i64 %s", x, cond, yes, no);
  return x;
}

/* Whether neither value is NaT (b may be NULL). */
static const char *not_nat(nbc__lowerer *L, const char *a, const char *b) {
  const char *x = emit2(L, "icmp ne", a, NAT);
  if (!b) return x;
  const char *y = emit2(L, "icmp ne", b, NAT), *both = tmp(L);
  EMIT("%s = and i1 %s, %s", both, x, y);
  return both;
}

/* Python's floor division and modulo of v by a positive constant d. */
static void floor_divmod_const(nbc__lowerer *L, const char *v, int64_t d, const char **pq,
                               const char **pr) {
  const char *ds = nbc__arena_printf(L->arena, "%lld", (long long)d);
  const char *q = emit2(L, "sdiv", v, ds), *r = emit2(L, "srem", v, ds);
  const char *neg = emit2(L, "icmp slt", r, "0");
  *pq = select_i64(L, neg, emit2(L, "sub", q, "1"), q);
  if (pr) *pr = select_i64(L, neg, emit2(L, "add", r, ds), r);
}

/* Days from 1970-01-01 to the first day of year 1970 + y (numpy's get_datetimestruct_days). */
static const char *year_to_days(nbc__lowerer *L, const char *y) {
  const char *days = emit2(L, "mul", y, "365");
  /* at or after 1970: leap days of (1968, 1900, 1600)-based cycles, this year excluded */
  const char *pos = emit2(L, "add", days, emit2(L, "sdiv", emit2(L, "add", y, "1"), "4"));
  pos = emit2(L, "sub", pos, emit2(L, "sdiv", emit2(L, "add", y, "69"), "100"));
  pos = emit2(L, "add", pos, emit2(L, "sdiv", emit2(L, "add", y, "369"), "400"));
  /* before 1970: counted from 1972 and 2000, this year included */
  const char *neg = emit2(L, "add", days, emit2(L, "sdiv", emit2(L, "add", y, "-2"), "4"));
  const char *from2000 = emit2(L, "add", y, "-30");
  neg = emit2(L, "sub", neg, emit2(L, "sdiv", from2000, "100"));
  neg = emit2(L, "add", neg, emit2(L, "sdiv", from2000, "400"));
  return select_i64(L, emit2(L, "icmp slt", y, "0"), neg, pos);
}

/* Days from the epoch to the first day of month m (months since 1970-01). */
static const char *month_to_days(nbc__lowerer *L, const char *m) {
  static const int before[12] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
  const char *year, *month;
  floor_divmod_const(L, m, 12, &year, &month);
  const char *acc = "0";
  for (int k = 1; k < 12; k++)
    acc = select_i64(L, emit2(L, "icmp sge", month, nbc__arena_printf(L->arena, "%d", k)),
                     nbc__arena_printf(L->arena, "%d", before[k]), acc);
  /* a leap year (1970 + year) adds a day from March on */
  const char *actual = emit2(L, "add", year, "1970");
  const char *by4 = emit2(L, "icmp eq", emit2(L, "and", actual, "3"), "0");
  const char *not100 = emit2(L, "icmp ne", emit2(L, "srem", actual, "100"), "0");
  const char *by400 = emit2(L, "icmp eq", emit2(L, "srem", actual, "400"), "0");
  const char *leap = tmp(L), *either = tmp(L), *extra = tmp(L);
  EMIT("%s = or i1 %s, %s", either, not100, by400);
  EMIT("%s = and i1 %s, %s", leap, by4, either);
  EMIT("%s = and i1 %s, %s", extra, leap, emit2(L, "icmp sge", month, "2"));
  const char *one = tmp(L);
  EMIT("%s = zext i1 %s to i64", one, extra);
  return emit2(L, "add", emit2(L, "add", year_to_days(L, year), acc), one);
}

/* A count of unit `from` of a date of kind (DATETIME or TIMEDELTA) in unit `to`, by numba's
 * integer factor; none: reported. */
static const char *in_unit(nbc__lowerer *L, nbc__node *where, nbc__type_kind kind,
                           const char *v, int from, int to) {
  int64_t f = nbc__datetime_factor(from, to);
  if (!f) {
    const char *name = kind == NBC__T_DATETIME ? "datetime64" : "timedelta64";
    nbc__lower_error(L, where, "cannot convert %s[%s] to %s[%s]", name,
                     nbc__type_datetime(kind, from)->name, name,
                     nbc__type_datetime(kind, to)->name);
    return v;
  }
  return scaled(L, v, f);
}

/* A datetime of unit `from` in unit `to` (numba's convert_datetime_for_arith): years and
 * months become days (or weeks) by the calendar, then an integer factor. */
static const char *datetime_in(nbc__lowerer *L, nbc__node *where, const char *v, int from,
                               int to) {
  if (from == to) return v;
  if (to >= 2 && from < 2) {
    const char *days = from == 0 ? year_to_days(L, v) : month_to_days(L, v);
    if (to == 2) {
      const char *weeks;
      floor_divmod_const(L, days, 7, &weeks, NULL);
      v = weeks;
      from = 2;
    } else {
      v = days;
      from = 4;
    }
  }
  return in_unit(L, where, NBC__T_DATETIME, v, from, to);
}

/* A timedelta of unit `from` in unit `to`. */
static const char *timedelta_in(nbc__lowerer *L, nbc__node *where, const char *v, int from,
                                int to) {
  return in_unit(L, where, NBC__T_TIMEDELTA, v, from, to);
}

/* Two timedeltas in the unit of the one the other converts to (numba's normalize_timedeltas);
 * false when neither converts. */
static bool normalized(nbc__lowerer *L, nbc__lval *a, nbc__lval *b) {
  int64_t f = nbc__datetime_factor(a->type->count, b->type->count);
  if (f) {
    a->v = scaled(L, a->v, f);
    return true;
  }
  f = nbc__datetime_factor(b->type->count, a->type->count);
  if (!f) return false;
  b->v = scaled(L, b->v, f);
  return true;
}

/* A double as a timedelta: NaN is NaT (numba's _cast_to_timedelta). */
static const char *double_to_timedelta(nbc__lowerer *L, const char *d) {
  const char *nan = tmp(L), *i = tmp(L);
  EMIT("%s = fcmp uno double %s, %s", nan, d, d);
  EMIT("%s = fptosi double %s to i64", i, d);
  return select_i64(L, nan, NAT, i);
}

static const char *to_double(nbc__lowerer *L, nbc__lval v) {
  if (v.type && v.type->kind == NBC__T_FLOAT64) return v.v;
  const char *x = tmp(L);
  if (v.type && nbc__type_is_float(v.type))
    EMIT("%s = fpext %s %s to double", x, ltype(L, v.type), v.v);
  else
    EMIT("%s = sitofp i64 %s to double", x, v.v);
  return x;
}

/* td * number (either order) and td / number, td // number. */
static nbc__lval timedelta_number(nbc__lowerer *L, nbc__op op, nbc__lval td, nbc__lval num,
                                  const nbc__type *rt) {
  const char *ok = not_nat(L, td.v, NULL), *r;
  bool fl = num.type && nbc__type_is_float(num.type);
  if (op == NBC__OP_MUL) {
    if (fl) {
      const char *p = tmp(L);
      EMIT("%s = fmul double %s, %s", p, to_double(L, td), to_double(L, num));
      r = double_to_timedelta(L, p);
    } else {
      r = emit2(L, "mul", td.v, num.v);
    }
  } else if (fl) { /* a zero or NaN divisor gives NaT */
    const char *d = to_double(L, num), *nz = tmp(L), *both = tmp(L), *q = tmp(L);
    EMIT("%s = fcmp one double %s, 0.0", nz, d);
    EMIT("%s = and i1 %s, %s", both, ok, nz);
    ok = both;
    EMIT("%s = fdiv double %s, %s", q, to_double(L, td), d);
    r = double_to_timedelta(L, q);
  } else {
    const char *nz = emit2(L, "icmp ne", num.v, "0"), *both = tmp(L);
    EMIT("%s = and i1 %s, %s", both, ok, nz);
    ok = both;
    r = emit2(L, "sdiv", td.v, select_i64(L, ok, num.v, "1"));
  }
  return (nbc__lval){rt, select_i64(L, ok, r, NAT)};
}

/* Python's floor division and modulo of a by b where ok (b != 0, neither NaT). */
static void floor_divmod(nbc__lowerer *L, const char *a, const char *b, const char *ok,
                         const char **pq, const char **pr) {
  const char *d = select_i64(L, ok, b, "1");
  const char *q = emit2(L, "sdiv", a, d), *r = emit2(L, "srem", a, d);
  /* a remainder whose sign differs from the divisor's moves the quotient down */
  const char *rnz = emit2(L, "icmp ne", r, "0");
  const char *differ = emit2(L, "icmp slt", emit2(L, "xor", r, d), "0");
  const char *adjust = tmp(L);
  EMIT("%s = and i1 %s, %s", adjust, rnz, differ);
  *pq = select_i64(L, adjust, emit2(L, "sub", q, "1"), q);
  *pr = select_i64(L, adjust, emit2(L, "add", r, d), r);
}

nbc__lval nbc__lower_datetime_binop(nbc__lowerer *L, nbc__node *where, nbc__op op, nbc__lval a,
                                    nbc__lval b, const nbc__type *rt) {
  bool atd = a.type->kind == NBC__T_TIMEDELTA, btd = b.type->kind == NBC__T_TIMEDELTA;
  bool adt = a.type->kind == NBC__T_DATETIME, bdt = b.type->kind == NBC__T_DATETIME;
  if (op == NBC__OP_MUL && atd != btd) return timedelta_number(L, op, atd ? a : b, atd ? b : a, rt);
  if ((op == NBC__OP_DIV || op == NBC__OP_FLOORDIV) && atd && !btd)
    return timedelta_number(L, op, a, b, rt);
  const char *ok = not_nat(L, a.v, b.v);
  if (adt || bdt) { /* dt +- td, td + dt, dt - dt: both in the result's unit */
    nbc__lval dt = adt ? a : b, other = adt ? b : a;
    int unit = rt->count;
    const char *x = datetime_in(L, where, dt.v, dt.type->count, unit);
    const char *y = other.type->kind == NBC__T_DATETIME
                        ? datetime_in(L, where, other.v, other.type->count, unit)
                        : timedelta_in(L, where, other.v, other.type->count, unit);
    const char *r = op == NBC__OP_ADD ? emit2(L, "add", x, y) : emit2(L, "sub", x, y);
    return (nbc__lval){rt, select_i64(L, ok, r, NAT)};
  }
  /* timedelta with timedelta */
  if (op == NBC__OP_ADD || op == NBC__OP_SUB) {
    const char *x = timedelta_in(L, where, a.v, a.type->count, rt->count);
    const char *y = timedelta_in(L, where, b.v, b.type->count, rt->count);
    const char *r = emit2(L, op == NBC__OP_ADD ? "add" : "sub", x, y);
    return (nbc__lval){rt, select_i64(L, ok, r, NAT)};
  }
  if (!normalized(L, &a, &b)) {
    nbc__lower_error(L, where, "cannot convert timedelta64[%s] and timedelta64[%s] to one unit",
                     a.type->name, b.type->name);
    return (nbc__lval){rt, "0"};
  }
  if (op == NBC__OP_DIV) {
    const char *q = tmp(L), *r = tmp(L);
    EMIT("%s = fdiv double %s, %s", q, to_double(L, a), to_double(L, b));
    EMIT("%s = select i1 %s, double %s, double 0x7FF8000000000000", r, ok, q);
    return (nbc__lval){rt, r};
  }
  const char *both = tmp(L);
  EMIT("%s = and i1 %s, %s", both, ok, emit2(L, "icmp ne", b.v, "0"));
  const char *q, *r;
  floor_divmod(L, a.v, b.v, both, &q, &r);
  if (op == NBC__OP_FLOORDIV) return (nbc__lval){rt, select_i64(L, both, q, "0")};
  return (nbc__lval){rt, select_i64(L, both, r, NAT)}; /* % */
}

const char *nbc__lower_datetime_compare(nbc__lowerer *L, nbc__node *where, nbc__op op,
                                        nbc__lval a, nbc__lval b) {
  const char *ok = not_nat(L, a.v, b.v);
  bool same = true;
  if (a.type->kind == NBC__T_DATETIME) {
    int unit = nbc__datetime_best_unit(a.type->count, b.type->count);
    a.v = datetime_in(L, where, a.v, a.type->count, unit);
    b.v = datetime_in(L, where, b.v, b.type->count, unit);
  } else {
    same = normalized(L, &a, &b);
  }
  const char *pred = op == NBC__OP_EQ ? "eq" : op == NBC__OP_NE ? "ne" : op == NBC__OP_LT ? "slt"
                     : op == NBC__OP_LE ? "sle" : op == NBC__OP_GT ? "sgt" : "sge";
  const char *c;
  if (same) {
    c = tmp(L);
    EMIT("%s = icmp %s i64 %s, %s", c, pred, a.v, b.v);
  } else { /* units that cannot convert: unequal (typing admits only == and != here) */
    c = op == NBC__OP_NE ? "true" : "false";
  }
  const char *r = tmp(L);
  EMIT("%s = select i1 %s, i1 %s, i1 %s", r, ok, c, op == NBC__OP_NE ? "true" : "false");
  return r;
}

nbc__lval nbc__lower_datetime_unary(nbc__lowerer *L, nbc__op op, nbc__lval a) {
  if (op == NBC__OP_POS) return a;
  /* NaT's negation is NaT itself in two's complement */
  return (nbc__lval){a.type, emit2(L, "sub", "0", a.v)};
}

nbc__lval nbc__lower_datetime_abs(nbc__lowerer *L, nbc__lval a) {
  const char *neg = emit2(L, "sub", "0", a.v);
  return (nbc__lval){a.type, select_i64(L, emit2(L, "icmp slt", a.v, "0"), neg, a.v)};
}
