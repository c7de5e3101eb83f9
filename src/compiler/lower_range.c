/* lower_range.c — range(...) as a value: the loops desugar.c makes over a range bound to a
 * name, enumerate(range(...)), zip(range(...), ...), len(range(...)), sum(range(...)).
 *
 * A range value is numba's RangeModel, a struct {start, stop, step} of the counter type
 * infer.c chose (int32, int64 or uint64). `for i in range(...)` itself never makes one:
 * lower.c's loop takes the call's arguments as they are.
 */
#include "compiler/lower.h"

static const char *field(nbc__lowerer *L, nbc__lval r, int k) {
  const char *x = nbc__lower_tmp(L);
  nbc__lower_emit(L, "%s = extractvalue %s %s, %d", x, nbc__lower_ltype(L, r.type), r.v, k);
  return x;
}

nbc__lval nbc__lower_range_value(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  const nbc__type *rt = call->ret, *ct = rt ? rt->dtype : NULL;
  int na = n->list.count;
  if (!ct || na < 1 || na > 3) {
    nbc__lower_error(L, n, "range expected 1 to 3 arguments, got %d", na);
    return (nbc__lval){rt, "undef"};
  }
  const char *part[3] = {"0", NULL, "1"};
  for (int i = 0; i < na; i++)
    part[na == 1 ? 1 : i] = nbc__lower_convert(L, nbc__lower_expr(L, n->list.items[i]), ct).v;
  const char *ty = nbc__lower_ltype(L, ct), *sty = nbc__lower_ltype(L, rt);
  if (na == 3) { /* numba's range constructor: ValueError for a zero step */
    const char *zero = nbc__lower_tmp(L);
    nbc__lower_emit(L, "%s = icmp eq %s %s, 0", zero, ty, part[2]);
    nbc__lower_raise_if(L, zero, "ValueError", "range() arg 3 must not be zero", n);
  }
  const char *cur = "undef";
  for (int k = 0; k < 3; k++) {
    const char *x = nbc__lower_tmp(L);
    nbc__lower_emit(L, "%s = insertvalue %s %s, %s %s, %d", x, sty, cur, ty, part[k], k);
    cur = x;
  }
  return (nbc__lval){rt, cur};
}

/* Python's len(range): (hi - lo - 1) / |step| + 1 when lo < hi, (lo, hi) being (start, stop)
 * for a positive step and (stop, start) for a negative one; else 0. In the counter type, as
 * numba's range_len gives it. */
nbc__lval nbc__lower_range_len(nbc__lowerer *L, nbc__lval r) {
  const nbc__type *ct = r.type->dtype;
  const char *ty = nbc__lower_ltype(L, ct);
  bool is_signed = nbc__type_is_signed(ct);
  const char *start = field(L, r, 0), *stop = field(L, r, 1), *step = field(L, r, 2);
  const char *neg = "false", *mag = nbc__lower_tmp(L), *lo = nbc__lower_tmp(L),
             *hi = nbc__lower_tmp(L), *some = nbc__lower_tmp(L), *d = nbc__lower_tmp(L),
             *q = nbc__lower_tmp(L), *n1 = nbc__lower_tmp(L), *len = nbc__lower_tmp(L),
             *negstep = nbc__lower_tmp(L);
  if (is_signed) { /* an unsigned step is never negative */
    neg = nbc__lower_tmp(L);
    nbc__lower_emit(L, "%s = icmp slt %s %s, 0", neg, ty, step);
  }
  nbc__lower_emit(L, "%s = sub %s 0, %s", negstep, ty, step);
  nbc__lower_emit(L, "%s = select i1 %s, %s %s, %s %s", mag, neg, ty, negstep, ty, step);
  nbc__lower_emit(L, "%s = select i1 %s, %s %s, %s %s", lo, neg, ty, stop, ty, start);
  nbc__lower_emit(L, "%s = select i1 %s, %s %s, %s %s", hi, neg, ty, start, ty, stop);
  nbc__lower_emit(L, "%s = icmp %s %s %s, %s", some, is_signed ? "slt" : "ult", ty, lo, hi);
  nbc__lower_emit(L, "%s = sub %s %s, %s", d, ty, hi, lo);
  const char *dm1 = nbc__lower_tmp(L), *safe = nbc__lower_tmp(L);
  nbc__lower_emit(L, "%s = sub %s %s, 1", dm1, ty, d);
  /* a zero step was refused when the range was made; keep the division defined anyway */
  const char *zstep = nbc__lower_tmp(L);
  nbc__lower_emit(L, "%s = icmp eq %s %s, 0", zstep, ty, mag);
  nbc__lower_emit(L, "%s = select i1 %s, %s 1, %s %s", safe, zstep, ty, ty, mag);
  nbc__lower_emit(L, "%s = udiv %s %s, %s", q, ty, dm1, safe);
  nbc__lower_emit(L, "%s = add %s %s, 1", n1, ty, q);
  nbc__lower_emit(L, "%s = select i1 %s, %s %s, %s 0", len, some, ty, n1, ty);
  return (nbc__lval){ct, len};
}

/* r[i] as Python indexes a range: a negative i counts from the end (len(r) + i); like an
 * array's index in a kernel, one out of range is not checked. */
nbc__lval nbc__lower_range_item(nbc__lowerer *L, nbc__lval r, nbc__lval i) {
  const nbc__type *ct = r.type->dtype;
  const char *ty = nbc__lower_ltype(L, ct);
  const char *k = nbc__lower_convert(L, i, ct).v;
  if (nbc__type_is_signed(ct)) {
    const char *neg = nbc__lower_tmp(L), *wrapped = nbc__lower_tmp(L), *kk = nbc__lower_tmp(L);
    nbc__lower_emit(L, "%s = icmp slt %s %s, 0", neg, ty, k);
    nbc__lower_emit(L, "%s = add %s %s, %s", wrapped, ty, k, nbc__lower_range_len(L, r).v);
    nbc__lower_emit(L, "%s = select i1 %s, %s %s, %s %s", kk, neg, ty, wrapped, ty, k);
    k = kk;
  }
  const char *start = field(L, r, 0), *step = field(L, r, 2);
  const char *off = nbc__lower_tmp(L), *x = nbc__lower_tmp(L);
  nbc__lower_emit(L, "%s = mul %s %s, %s", off, ty, k, step);
  nbc__lower_emit(L, "%s = add %s %s, %s", x, ty, start, off);
  return (nbc__lval){ct, x};
}
