/* datetime.c — numpy's datetime64 and timedelta64 in kernels (numba's NPDatetime(unit) and
 * NPTimedelta(unit)): their types, one per unit, their units' rules and the typing of the
 * operators on them (numba-cuda's np/npdatetime_helpers.py and typing/npdatetime.py). The
 * lowering is lower_datetime.c.
 *
 * A value is an int64 count of its unit since the epoch (datetime64) or a duration
 * (timedelta64); INT64_MIN is NaT. Units carry numba's codes: Y 0, M 1, W 2, D 4, h 5, m 6,
 * s 7, ms 8, us 9, ns 10, ps 11, fs 12, as 13 and 14 for the generic (unit-less) one; a type
 * keeps its code in `count` and its unit's name in `name`.
 *
 * The operators, as numba types them:
 *   td + td, td - td  -> the finer unit of two that convert to it (Y/M and the others do not)
 *   td * int, int * td, td * float, float * td -> td (integers as int64)
 *   td / int, td / float, td // int, td // float -> td
 *   td / td -> float64 (units that convert)
 *   td // td -> int64 and td % td -> td (numpy's answers; numba types // as float64 and
 *     has no %, which its lowering cannot then compile)
 *   dt + td, td + dt, dt - td -> dt of the combined unit (numba's
 *     combine_datetime_timedelta_units: a Y or M timedelta does not combine with finer dates)
 *   dt - dt -> td of the finer unit
 *   comparisons: td with td of units that convert, dt with dt of any units -> bool
 *   -td, +td, abs(td) -> td
 */
#include <string.h>

#include "compiler/compiler.h"

/* code, name: numba's DATETIME_UNITS (code 3 is unused) */
#define UNITS(X)                                                                               \
  X(0, "Y") X(1, "M") X(2, "W") X(4, "D") X(5, "h") X(6, "m") X(7, "s") X(8, "ms") X(9, "us")  \
  X(10, "ns") X(11, "ps") X(12, "fs") X(13, "as") X(14, "")

static const char *const unit_names[NBC__DT_UNITS] = {
#define NAME_(code, name) [code] = name,
    UNITS(NAME_)
#undef NAME_
};
static const nbc__type datetime_types[NBC__DT_UNITS] = {
#define DT_(code, unit) [code] = {.kind = NBC__T_DATETIME, .count = (code), .name = unit},
    UNITS(DT_)
#undef DT_
};
static const nbc__type timedelta_types[NBC__DT_UNITS] = {
#define TD_(code, unit) [code] = {.kind = NBC__T_TIMEDELTA, .count = (code), .name = unit},
    UNITS(TD_)
#undef TD_
};

const nbc__type *nbc__type_datetime(nbc__type_kind kind, int unit) {
  if (unit < 0 || unit >= NBC__DT_UNITS || !unit_names[unit]) return NULL;
  if (kind == NBC__T_DATETIME) return &datetime_types[unit];
  if (kind == NBC__T_TIMEDELTA) return &timedelta_types[unit];
  return NULL;
}

int nbc__datetime_unit(const char *name, size_t len) {
  for (int u = 0; u < NBC__DT_UNITS; u++)
    if (unit_names[u] && strlen(unit_names[u]) == len && memcmp(unit_names[u], name, len) == 0)
      return u;
  return -1;
}

bool nbc__type_is_datetime(const nbc__type *t) {
  return t && (t->kind == NBC__T_DATETIME || t->kind == NBC__T_TIMEDELTA);
}

/* The next finer unit of each and the factor to it (numba's _factors). */
static const struct {
  signed char next;
  short factor;
} steps[NBC__DT_UNITS] = {
    [0] = {1, 12},    [1] = {-1, 0},    [2] = {4, 7},     [3] = {-1, 0},    [4] = {5, 24},
    [5] = {6, 60},    [6] = {7, 60},    [7] = {8, 1000},  [8] = {9, 1000},  [9] = {10, 1000},
    [10] = {11, 1000}, [11] = {12, 1000}, [12] = {13, 1000}, [13] = {-1, 0}, [14] = {-1, 0}};

int64_t nbc__datetime_factor(int from, int to) {
  if (from == NBC__DT_GENERIC) return 1;
  int64_t factor = 1;
  int c = from;
  while (c >= 0 && c < to) {
    if (steps[c].next < 0) return 0;
    factor *= steps[c].factor;
    c = steps[c].next;
  }
  return c == to ? factor : 0;
}

/* numba's can_cast_timedelta_units: whether timedeltas of unit from convert to unit to. */
static bool casts(int from, int to) {
  if (from == to || from == NBC__DT_GENERIC) return true;
  if (from > to || to == NBC__DT_GENERIC) return false;
  return !(from <= 1 && to > 1);
}

int nbc__datetime_best_unit(int a, int b) {
  if (a == NBC__DT_GENERIC) return b;
  if (b == NBC__DT_GENERIC) return a;
  return a > b ? a : b;
}

/* numba's combine_datetime_timedelta_units: the unit of dt +- td, or -1. */
static int combine(int dt, int td) {
  if (dt == NBC__DT_GENERIC) return td;
  if (td == NBC__DT_GENERIC) return dt;
  if (td < 2 && dt >= 2) return -1;
  return dt > td ? dt : td;
}

static const nbc__type *td_of(int unit) { return nbc__type_datetime(NBC__T_TIMEDELTA, unit); }
static const nbc__type *dt_of(int unit) { return nbc__type_datetime(NBC__T_DATETIME, unit); }

const nbc__type *nbc__datetime_binop_sig(nbc__op op, const nbc__type *a, const nbc__type *b,
                                         const nbc__type **pargs, const char **pwhy) {
  bool atd = a->kind == NBC__T_TIMEDELTA, btd = b->kind == NBC__T_TIMEDELTA;
  bool adt = a->kind == NBC__T_DATETIME, bdt = b->kind == NBC__T_DATETIME;
  const nbc__type *i64 = nbc__type_scalar(NBC__T_INT64);
  pargs[0] = a;
  pargs[1] = b;
  bool convertible = atd && btd && (casts(a->count, b->count) || casts(b->count, a->count));
  switch (op) {
  case NBC__OP_ADD:
  case NBC__OP_SUB:
    if (atd && btd && convertible) return casts(a->count, b->count) ? b : a;
    if ((adt && btd) || (op == NBC__OP_ADD && atd && bdt)) {
      int unit = adt ? combine(a->count, b->count) : combine(b->count, a->count);
      if (unit >= 0) return dt_of(unit);
      if (pwhy) *pwhy = "a timedelta64 of years or months does not combine with a finer "
                        "datetime64";
      return NULL;
    }
    if (op == NBC__OP_SUB && adt && bdt) return td_of(nbc__datetime_best_unit(a->count, b->count));
    break;
  case NBC__OP_MUL:
    if (atd != btd && (atd ? (nbc__type_is_int(b) || nbc__type_is_float(b))
                           : (nbc__type_is_int(a) || nbc__type_is_float(a)))) {
      if (nbc__type_is_int(atd ? b : a)) pargs[atd ? 1 : 0] = i64;
      return atd ? a : b;
    }
    break;
  case NBC__OP_DIV:
  case NBC__OP_FLOORDIV:
    if (atd && (nbc__type_is_int(b) || nbc__type_is_float(b))) {
      if (nbc__type_is_int(b)) pargs[1] = i64;
      return a;
    }
    if (convertible) return nbc__type_scalar(op == NBC__OP_DIV ? NBC__T_FLOAT64 : NBC__T_INT64);
    break;
  case NBC__OP_MOD:
    if (convertible) return casts(a->count, b->count) ? b : a;
    break;
  case NBC__OP_LT:
  case NBC__OP_LE:
  case NBC__OP_GT:
  case NBC__OP_GE:
  case NBC__OP_EQ:
  case NBC__OP_NE:
    if (convertible || (adt && bdt)) return nbc__type_scalar(NBC__T_BOOL);
    break;
  default:
    break;
  }
  if (pwhy) *pwhy = "unsupported operand types";
  return NULL;
}

const nbc__type *nbc__datetime_unop_sig(nbc__op op, const nbc__type *a, const nbc__type **parg,
                                        const char **pwhy) {
  *parg = a;
  if (a->kind == NBC__T_TIMEDELTA && (op == NBC__OP_NEG || op == NBC__OP_POS)) return a;
  if (pwhy) *pwhy = "unsupported operand type";
  return NULL;
}
