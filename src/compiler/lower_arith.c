/* lower_arith.c — arithmetic in NVVM IR with numba's semantics on the GPU (listed at the top
 * of lower_expr.c): integer floor division and modulo, shifts, powers, float floor division
 * and modulo (CPython's float_divmod), the binary operators on numbers, float16s and tuples,
 * float16 a * b + c as one fma, and the unary operators.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/lower.h"

/* --------------------------------------------------------------- integer ops -------- */

static const char *min_of(nbc__lowerer *L, const nbc__type *t) {
  int bits = nbc__type_bits(t);
  if (bits >= 64) return "-9223372036854775808";
  return nbc__arena_printf(L->arena, "%lld", -(1LL << (bits - 1)));
}

/* Python's floor division / modulo with numba's zero-divisor and overflow results. */
static const char *int_divmod(nbc__lowerer *L, const nbc__type *t, const char *a, const char *b,
                              bool want_div) {
  const char *ty = ltype(L, t);
  const char *zero = tmp(L), *safe = tmp(L), *bad = tmp(L);
  EMIT("%s = icmp eq %s %s, 0", zero, ty, b);
  if (!nbc__type_is_signed(t)) {
    EMIT("%s = select i1 %s, %s 1, %s %s", safe, zero, ty, ty, b);
    const char *r = tmp(L), *res = tmp(L);
    EMIT("%s = %s %s %s, %s", r, want_div ? "udiv" : "urem", ty, a, safe);
    EMIT("%s = select i1 %s, %s 0, %s %s", res, zero, ty, ty, r);
    (void)bad;
    return res;
  }
  const char *amin = tmp(L), *bm1 = tmp(L), *ovf = tmp(L);
  EMIT("%s = icmp eq %s %s, %s", amin, ty, a, min_of(L, t));
  EMIT("%s = icmp eq %s %s, -1", bm1, ty, b);
  EMIT("%s = and i1 %s, %s", ovf, amin, bm1);
  EMIT("%s = or i1 %s, %s", bad, zero, ovf);
  /* The divisor is replaced by 1 where the result is forced, so sdiv never traps. */
  EMIT("%s = select i1 %s, %s 1, %s %s", safe, bad, ty, ty, b);
  const char *q = tmp(L), *r = tmp(L), *rnz = tmp(L), *x = tmp(L), *sd = tmp(L), *adj = tmp(L);
  EMIT("%s = sdiv %s %s, %s", q, ty, a, safe);
  EMIT("%s = srem %s %s, %s", r, ty, a, safe);
  EMIT("%s = icmp ne %s %s, 0", rnz, ty, r);
  EMIT("%s = xor %s %s, %s", x, ty, r, safe);
  EMIT("%s = icmp slt %s %s, 0", sd, ty, x);
  EMIT("%s = and i1 %s, %s", adj, rnz, sd);
  const char *fixed = tmp(L), *res = tmp(L);
  if (want_div) {
    const char *q1 = tmp(L);
    EMIT("%s = sub %s %s, 1", q1, ty, q);
    EMIT("%s = select i1 %s, %s %s, %s %s", fixed, adj, ty, q1, ty, q);
  } else {
    const char *r1 = tmp(L);
    EMIT("%s = add %s %s, %s", r1, ty, r, safe);
    EMIT("%s = select i1 %s, %s %s, %s %s", fixed, adj, ty, r1, ty, r);
  }
  EMIT("%s = select i1 %s, %s 0, %s %s", res, bad, ty, ty, fixed);
  return res;
}

/* Shifts whose amount is out of range give what the GPU gives numba-cuda: 0, or the sign
 * for an arithmetic right shift. */
static const char *int_shift(nbc__lowerer *L, const nbc__type *t, const char *a, const char *b,
                             bool left) {
  const char *ty = ltype(L, t);
  int bits = nbc__type_bits(t);
  const char *big = tmp(L), *amt = tmp(L), *s = tmp(L), *res = tmp(L);
  EMIT("%s = icmp uge %s %s, %d", big, ty, b, bits);
  EMIT("%s = select i1 %s, %s 0, %s %s", amt, big, ty, ty, b);
  if (left) {
    EMIT("%s = shl %s %s, %s", s, ty, a, amt);
    EMIT("%s = select i1 %s, %s 0, %s %s", res, big, ty, ty, s);
  } else if (nbc__type_is_signed(t)) {
    const char *fill = tmp(L);
    EMIT("%s = ashr %s %s, %s", s, ty, a, amt);
    EMIT("%s = ashr %s %s, %d", fill, ty, a, bits - 1);
    EMIT("%s = select i1 %s, %s %s, %s %s", res, big, ty, fill, ty, s);
  } else {
    EMIT("%s = lshr %s %s, %s", s, ty, a, amt);
    EMIT("%s = select i1 %s, %s 0, %s %s", res, big, ty, ty, s);
  }
  return res;
}

const char *nbc__lower_mul(nbc__lowerer *L, const nbc__type *t, const char *a, const char *b) {
  const char *x = tmp(L);
  EMIT("%s = %s %s %s, %s", x, is_float(t) ? "fmul" : "mul", ltype(L, t), a, b);
  return x;
}

static const char *libdevice_pow(nbc__lowerer *L, const nbc__type *t, const char *a,
                                 const char *b) {
  return nbc__lower_call2(L, ltype(L, t), nbc__lower_libdevice_name(L, "pow", t), a, b);
}

/* base ** exp with an integer exponent (numba's int_power_impl / static_power_impl); rt is
 * the result type, base is already converted to it. */
const char *nbc__lower_int_power(nbc__lowerer *L, const nbc__type *rt, const char *base,
                                 nbc__lval e, nbc__node *enode) {
  const char *ty = ltype(L, rt);
  const char *one = nbc__lower_const_int(L, rt, 1);
  int64_t k;
  bool neg_const = false;
  if (enode && enode->kind == NBC__N_UNARY && enode->op == NBC__OP_NEG && enode->a &&
      enode->a->kind == NBC__N_INT && !enode->a->big) {
    k = -enode->a->value.i;
    neg_const = true;
  }
  if ((enode && enode->kind == NBC__N_INT && !enode->big && (k = enode->value.i, true)) ||
      neg_const) {
    if (k <= 0x10000 && k >= -0x10000) {
      bool invert = k < 0;
      int64_t n = invert ? -k : k;
      const char *res = one, *val = base;
      while (n != 0) {
        if (n & 1) res = nbc__lower_mul(L, rt, res, val);
        n >>= 1;
        if (n) val = nbc__lower_mul(L, rt, val, val);
      }
      if (!invert) return res;
      const char *x = tmp(L);
      if (is_float(rt)) {
        EMIT("%s = fdiv %s %s, %s", x, ty, one, res);
        return x;
      }
      /* 0 -> the type's minimum; +-1 stay; anything else -> 0. */
      const char *z = tmp(L), *p1 = tmp(L), *m1 = tmp(L), *pm = tmp(L), *r1 = tmp(L);
      EMIT("%s = icmp eq %s %s, 0", z, ty, res);
      EMIT("%s = icmp eq %s %s, 1", p1, ty, res);
      EMIT("%s = icmp eq %s %s, -1", m1, ty, res);
      EMIT("%s = or i1 %s, %s", pm, p1, m1);
      EMIT("%s = select i1 %s, %s %s, %s 0", r1, pm, ty, res, ty);
      EMIT("%s = select i1 %s, %s %s, %s %s", x, z, ty, min_of(L, rt), ty, r1);
      return x;
    }
  }
  /* The general loop, with allocas for r, a and exp. */
  const nbc__type *et = e.type;
  const char *ety = ltype(L, et);
  bool esigned = nbc__type_is_signed(et);
  const char *pr = nbc__lower_alloca(L, ty), *pa = nbc__lower_alloca(L, ty),
             *pe = nbc__lower_alloca(L, ety), *pres = nbc__lower_alloca(L, ty);
  EMIT("store %s %s, %s* %s", ty, one, ty, pr);
  EMIT("store %s %s, %s* %s", ty, base, ty, pa);
  int negl = nbc__lower_label(L), posl = nbc__lower_label(L), big = nbc__lower_label(L),
      loop = nbc__lower_label(L), body = nbc__lower_label(L), done = nbc__lower_label(L),
      end = nbc__lower_label(L), loopstart = nbc__lower_label(L);
  const char *isneg = "false";
  if (esigned) {
    isneg = tmp(L);
    EMIT("%s = icmp slt %s %s, 0", isneg, ety, e.v);
  }
  nbc__lower_condbr(L, isneg, negl, posl);
  /* Negative exponent. */
  nbc__lower_block(L, negl);
  const char *ne = tmp(L);
  EMIT("%s = sub %s 0, %s", ne, ety, e.v);
  EMIT("store %s %s, %s* %s", ety, ne, ety, pe);
  if (is_int(rt)) {
    const char *z = tmp(L), *p1 = tmp(L), *m1 = tmp(L), *odd = tmp(L), *odd1 = tmp(L),
               *mv = tmp(L), *r1 = tmp(L), *r2 = tmp(L), *r3 = tmp(L);
    EMIT("%s = icmp eq %s %s, 0", z, ty, base);
    EMIT("%s = icmp eq %s %s, 1", p1, ty, base);
    EMIT("%s = icmp eq %s %s, -1", m1, ty, base);
    EMIT("%s = and %s %s, 1", odd, ety, ne);
    EMIT("%s = icmp ne %s %s, 0", odd1, ety, odd);
    EMIT("%s = select i1 %s, %s -1, %s 1", mv, odd1, ty, ty);
    EMIT("%s = select i1 %s, %s %s, %s 0", r1, m1, ty, mv, ty);
    EMIT("%s = select i1 %s, %s 1, %s %s", r2, p1, ty, ty, r1);
    EMIT("%s = select i1 %s, %s %s, %s %s", r3, z, ty, min_of(L, rt), ty, r2);
    EMIT("store %s %s, %s* %s", ty, r3, ty, pres);
    nbc__lower_br(L, end);
  } else {
    nbc__lower_br(L, loopstart);
  }
  nbc__lower_block(L, posl);
  EMIT("store %s %s, %s* %s", ety, e.v, ety, pe);
  nbc__lower_br(L, loopstart);
  nbc__lower_block(L, loopstart);
  const char *ev = tmp(L), *isbig = tmp(L);
  EMIT("%s = load %s, %s* %s", ev, ety, ety, pe);
  EMIT("%s = icmp %s %s %s, 65536", isbig, esigned ? "sgt" : "ugt", ety, ev);
  nbc__lower_condbr(L, isbig, big, loop);
  /* Past numba's cutoff: math.pow in double. */
  nbc__lower_block(L, big);
  {
    nbc__lval bv = nbc__lower_convert(L, (nbc__lval){rt, base}, T(NBC__T_FLOAT64));
    nbc__lval xv = nbc__lower_convert(L, e, T(NBC__T_FLOAT64));
    const char *p = nbc__lower_call2(L, "double", "__nv_pow", bv.v, xv.v);
    nbc__lval pv = nbc__lower_convert(L, (nbc__lval){T(NBC__T_FLOAT64), p}, rt);
    EMIT("store %s %s, %s* %s", ty, pv.v, ty, pres);
    nbc__lower_br(L, end);
  }
  nbc__lower_block(L, loop);
  const char *cur = tmp(L), *nz = tmp(L);
  EMIT("%s = load %s, %s* %s", cur, ety, ety, pe);
  EMIT("%s = icmp ne %s %s, 0", nz, ety, cur);
  nbc__lower_condbr(L, nz, body, done);
  nbc__lower_block(L, body);
  {
    const char *bit = tmp(L), *set = tmp(L), *r = tmp(L), *a = tmp(L), *ra = NULL, *rn = tmp(L),
               *sh = tmp(L), *aa = NULL;
    EMIT("%s = and %s %s, 1", bit, ety, cur);
    EMIT("%s = icmp ne %s %s, 0", set, ety, bit);
    EMIT("%s = load %s, %s* %s", r, ty, ty, pr);
    EMIT("%s = load %s, %s* %s", a, ty, ty, pa);
    ra = nbc__lower_mul(L, rt, r, a);
    EMIT("%s = select i1 %s, %s %s, %s %s", rn, set, ty, ra, ty, r);
    EMIT("store %s %s, %s* %s", ty, rn, ty, pr);
    EMIT("%s = lshr %s %s, 1", sh, ety, cur);
    EMIT("store %s %s, %s* %s", ety, sh, ety, pe);
    aa = nbc__lower_mul(L, rt, a, a);
    EMIT("store %s %s, %s* %s", ty, aa, ty, pa);
    nbc__lower_br(L, loop);
  }
  nbc__lower_block(L, done);
  const char *rv = tmp(L);
  EMIT("%s = load %s, %s* %s", rv, ty, ty, pr);
  if (is_float(rt) && esigned) {
    /* 1 / r when the exponent was negative. */
    const char *inv = tmp(L), *sel = tmp(L);
    EMIT("%s = fdiv %s %s, %s", inv, ty, one, rv);
    EMIT("%s = select i1 %s, %s %s, %s %s", sel, isneg, ty, inv, ty, rv);
    rv = sel;
  }
  EMIT("store %s %s, %s* %s", ty, rv, ty, pres);
  nbc__lower_br(L, end);
  nbc__lower_block(L, end);
  const char *out = tmp(L);
  EMIT("%s = load %s, %s* %s", out, ty, ty, pres);
  return out;
}

/* --------------------------------------------------------------- float ops ---------- */

/* numba's real_divmod (CPython's float_divmod) including the zero-divisor branch. */
static const char *float_divmod(nbc__lowerer *L, const nbc__type *t, const char *a,
                                const char *b, bool want_div) {
  const char *ty = ltype(L, t);
  const char *zero = nbc__lower_const_float(L, t, 0.0),
             *nzero = nbc__lower_const_float(L, t, -0.0),
             *one = nbc__lower_const_float(L, t, 1.0),
             *half = nbc__lower_const_float(L, t, 0.5);
  const char *pres = nbc__lower_alloca(L, ty), *pmod = nbc__lower_alloca(L, ty),
             *pdiv = nbc__lower_alloca(L, ty);
  int lz = nbc__lower_label(L), lnz = nbc__lower_label(L), lmodnz = nbc__lower_label(L),
      ladj = nbc__lower_label(L), lmodz = nbc__lower_label(L), lafter = nbc__lower_label(L),
      lend = nbc__lower_label(L);
  const char *bz = tmp(L);
  EMIT("%s = fcmp oeq %s %s, %s", bz, ty, b, zero);
  nbc__lower_condbr(L, bz, lz, lnz);
  nbc__lower_block(L, lz);
  const char *q0 = tmp(L);
  EMIT("%s = %s %s %s, %s", q0, want_div ? "fdiv" : "frem", ty, a, b);
  EMIT("store %s %s, %s* %s", ty, q0, ty, pres);
  nbc__lower_br(L, lend);

  nbc__lower_block(L, lnz);
  const char *mod = tmp(L), *diff = tmp(L), *div = tmp(L);
  EMIT("%s = frem %s %s, %s", mod, ty, a, b);
  EMIT("%s = fsub %s %s, %s", diff, ty, a, mod);
  EMIT("%s = fdiv %s %s, %s", div, ty, diff, b);
  EMIT("store %s %s, %s* %s", ty, mod, ty, pmod);
  EMIT("store %s %s, %s* %s", ty, div, ty, pdiv);
  const char *modt = tmp(L), *wneg = tmp(L), *mneg = tmp(L);
  EMIT("%s = fcmp une %s %s, %s", modt, ty, mod, zero);
  EMIT("%s = fcmp olt %s %s, %s", wneg, ty, b, zero);
  EMIT("%s = fcmp olt %s %s, %s", mneg, ty, mod, zero);
  nbc__lower_condbr(L, modt, lmodnz, lmodz);
  nbc__lower_block(L, lmodnz);
  const char *differ = tmp(L);
  EMIT("%s = icmp ne i1 %s, %s", differ, wneg, mneg);
  nbc__lower_condbr(L, differ, ladj, lafter);
  nbc__lower_block(L, ladj);
  const char *d1 = tmp(L), *m1 = tmp(L);
  EMIT("%s = fsub %s %s, %s", d1, ty, div, one);
  EMIT("%s = fadd %s %s, %s", m1, ty, mod, b);
  EMIT("store %s %s, %s* %s", ty, d1, ty, pdiv);
  EMIT("store %s %s, %s* %s", ty, m1, ty, pmod);
  nbc__lower_br(L, lafter);
  nbc__lower_block(L, lmodz);
  const char *ms = tmp(L);
  EMIT("%s = select i1 %s, %s %s, %s %s", ms, wneg, ty, nzero, ty, zero);
  EMIT("store %s %s, %s* %s", ty, ms, ty, pmod);
  nbc__lower_br(L, lafter);
  nbc__lower_block(L, lafter);
  if (!want_div) {
    const char *m = tmp(L);
    EMIT("%s = load %s, %s* %s", m, ty, ty, pmod);
    EMIT("store %s %s, %s* %s", ty, m, ty, pres);
    nbc__lower_br(L, lend);
  } else {
    int lfl = nbc__lower_label(L), lsign = nbc__lower_label(L);
    const char *d = tmp(L), *dt = tmp(L);
    EMIT("%s = load %s, %s* %s", d, ty, ty, pdiv);
    EMIT("%s = fcmp one %s %s, %s", dt, ty, d, zero);
    nbc__lower_condbr(L, dt, lfl, lsign);
    nbc__lower_block(L, lfl);
    const char *floor_fn =
        nbc__arena_printf(L->arena, "llvm.floor.%s", nbc__lower_intrinsic_suffix(t));
    const char *fl = nbc__lower_call1(L, ty, floor_fn, d);
    const char *fd = tmp(L), *fi = tmp(L), *gt = tmp(L), *sel = tmp(L);
    EMIT("%s = fsub %s %s, %s", fd, ty, d, fl);
    EMIT("%s = fadd %s %s, %s", fi, ty, fl, one);
    EMIT("%s = fcmp ogt %s %s, %s", gt, ty, fd, half);
    EMIT("%s = select i1 %s, %s %s, %s %s", sel, gt, ty, fi, ty, fl);
    EMIT("store %s %s, %s* %s", ty, sel, ty, pres);
    nbc__lower_br(L, lend);
    nbc__lower_block(L, lsign);
    const char *dd = tmp(L), *dv = tmp(L), *q = tmp(L);
    EMIT("%s = fmul %s %s, %s", dd, ty, d, d);
    EMIT("%s = fmul %s %s, %s", dv, ty, dd, a);
    EMIT("%s = fdiv %s %s, %s", q, ty, dv, b);
    EMIT("store %s %s, %s* %s", ty, q, ty, pres);
    nbc__lower_br(L, lend);
  }
  nbc__lower_block(L, lend);
  const char *res = tmp(L);
  EMIT("%s = load %s, %s* %s", res, ty, ty, pres);
  return res;
}

/* --------------------------------------------------------------- binary ops --------- */

static bool node_is_int_exponent(const nbc__lval *e) {
  return is_int(e->type) || is_bool(e->type);
}

/* debug=True kernels (numba's error_model="python"): a zero divisor of /, //, % or divmod
 * raises ZeroDivisionError with numba's message for the operation and operand kind; divmod
 * is the node of a divmod() call (numba locates a float divmod's error there), else NULL. */
void nbc__lower_check_divisor(nbc__lowerer *L, nbc__op op, const nbc__type *t, const char *b,
                              const nbc__node *divmod) {
  if (!L->raise_symbol) return;
  const char *zero = tmp(L), *message;
  if (is_float(t)) {
    EMIT("%s = fcmp oeq %s %s, %s", zero, ltype(L, t), b, nbc__lower_const_float(L, t, 0.0));
    message = op == NBC__OP_MOD || divmod ? "modulo by zero" : "division by zero";
  } else {
    EMIT("%s = icmp eq %s %s, 0", zero, ltype(L, t), b);
    message = divmod              ? "integer divmod by zero"
              : op == NBC__OP_MOD ? "integer modulo by zero"
                                  : "integer division by zero";
  }
  nbc__lower_raise_if(L, zero, "ZeroDivisionError", message, is_float(t) ? divmod : NULL);
}

nbc__lval nbc__lower_binop_values(nbc__lowerer *L, nbc__node *where, nbc__op op, nbc__lval a,
                                  nbc__node *bnode, nbc__lval b, const nbc__type *rt) {
  nbc__lval r = {rt, NULL};
  if (nbc__lower_failed(L)) return (nbc__lval){rt, nbc__lower_zero(L, rt)};
  if (rt && nbc__type_is_complex(rt)) return nbc__lower_complex_binop(L, where, op, a, b, rt);
  if (nbc__type_is_datetime(a.type) || nbc__type_is_datetime(b.type))
    return nbc__lower_datetime_binop(L, where, op, a, b, rt);
  if (nbc__type_is_bf16(rt)) return nbc__lower_bf16_binop(L, where, op, a, b, rt);
  if (!rt || !(is_int(rt) || is_float(rt) || is_bool(rt))) {
    nbc__lower_error(L, where, "unsupported operand types for %s: %s and %s", nbc__op_text(op),
                     a.type ? nbc__type_name(L->ctx, a.type) : "?",
                     b.type ? nbc__type_name(L->ctx, b.type) : "?");
    return (nbc__lval){rt, "undef"};
  }
  if (nbc__lower_is_half(rt) && (op == NBC__OP_ADD || op == NBC__OP_SUB || op == NBC__OP_MUL)) {
    /* numba-cuda's float16 + - *: operands become float16, one native instruction */
    a = nbc__lower_convert(L, a, rt);
    b = nbc__lower_convert(L, b, rt);
    const char *instr = op == NBC__OP_ADD   ? "add.f16"
                        : op == NBC__OP_SUB ? "sub.f16"
                                            : "mul.f16";
    return (nbc__lval){rt, nbc__lower_convert_half_instr(L, instr, a.v, b.v, NULL)};
  }
  if (nbc__lower_is_half(rt)) {
    /* other float16 arithmetic: operands become float16 (as numba converts them), the
     * operation runs in float32 and its result is rounded back to float16. */
    a = nbc__lower_convert(L, nbc__lower_convert(L, a, rt), T(NBC__T_FLOAT32));
    if (!(op == NBC__OP_POW && node_is_int_exponent(&b)))
      b = nbc__lower_convert(L, nbc__lower_convert(L, b, rt), T(NBC__T_FLOAT32));
    nbc__lval f = nbc__lower_binop_values(L, where, op, a, bnode, b, T(NBC__T_FLOAT32));
    return nbc__lower_convert(L, f, rt);
  }
  const char *ty = ltype(L, rt);
  a = nbc__lower_convert(L, a, rt);
  if (op == NBC__OP_POW) {
    if (node_is_int_exponent(&b)) {
      if (is_bool(b.type)) b = nbc__lower_convert(L, b, T(NBC__T_INT64));
      r.v = nbc__lower_int_power(L, rt, a.v, b, bnode);
      return r;
    }
    b = nbc__lower_convert(L, b, rt);
    if (!is_float(rt)) {
      nbc__lower_error(L, where, "unsupported operand types for **");
      return r;
    }
    r.v = libdevice_pow(L, rt, a.v, b.v);
    return r;
  }
  b = nbc__lower_convert(L, b, rt);
  if ((op == NBC__OP_DIV &&
       !(rt->kind == NBC__T_FLOAT32 && L->ctx->options->fastmath)) || /* numba's fast path */
      op == NBC__OP_FLOORDIV ||
      op == NBC__OP_MOD)
    nbc__lower_check_divisor(L, op, rt, b.v, NULL);
  const char *x = tmp(L);
  if (is_float(rt)) {
    switch (op) {
    case NBC__OP_ADD:
      EMIT("%s = fadd %s %s, %s", x, ty, a.v, b.v);
      break;
    case NBC__OP_SUB:
      EMIT("%s = fsub %s %s, %s", x, ty, a.v, b.v);
      break;
    case NBC__OP_MUL:
      EMIT("%s = fmul %s %s, %s", x, ty, a.v, b.v);
      break;
    case NBC__OP_DIV:
      if (rt->kind == NBC__T_FLOAT32 && L->ctx->options->fastmath)
        x = nbc__lower_call2(L, "float", "__nv_fast_fdividef", a.v, b.v);
      else
        EMIT("%s = fdiv %s %s, %s", x, ty, a.v, b.v);
      break;
    case NBC__OP_FLOORDIV:
      x = float_divmod(L, rt, a.v, b.v, true);
      break;
    case NBC__OP_MOD:
      x = float_divmod(L, rt, a.v, b.v, false);
      break;
    default:
      nbc__lower_error(L, where, "unsupported operand type(s) for %s: '%s' and '%s'",
                       nbc__op_text(op), nbc__type_name(L->ctx, rt),
                       nbc__type_name(L->ctx, rt));
    }
    r.v = x;
    return r;
  }
  switch (op) {
  case NBC__OP_ADD:
    EMIT("%s = add %s %s, %s", x, ty, a.v, b.v);
    break;
  case NBC__OP_SUB:
    EMIT("%s = sub %s %s, %s", x, ty, a.v, b.v);
    break;
  case NBC__OP_MUL:
    EMIT("%s = mul %s %s, %s", x, ty, a.v, b.v);
    break;
  case NBC__OP_BITAND:
    EMIT("%s = and %s %s, %s", x, ty, a.v, b.v);
    break;
  case NBC__OP_BITOR:
    EMIT("%s = or %s %s, %s", x, ty, a.v, b.v);
    break;
  case NBC__OP_BITXOR:
    EMIT("%s = xor %s %s, %s", x, ty, a.v, b.v);
    break;
  case NBC__OP_FLOORDIV:
    x = int_divmod(L, rt, a.v, b.v, true);
    break;
  case NBC__OP_MOD:
    x = int_divmod(L, rt, a.v, b.v, false);
    break;
  case NBC__OP_LSHIFT:
    x = int_shift(L, rt, a.v, b.v, true);
    break;
  case NBC__OP_RSHIFT:
    x = int_shift(L, rt, a.v, b.v, false);
    break;
  default:
    nbc__lower_error(L, where, "unsupported operand type(s) for %s: '%s' and '%s'",
                     nbc__op_text(op), nbc__type_name(L->ctx, rt), nbc__type_name(L->ctx, rt));
  }
  r.v = x;
  return r;
}

/* The type a binary operation computes in: infer's result type, except for true division of
 * integers, whose operands are converted to the float result. */
/* True when n is a float16 product whose value is used as is (no conversion). */
static bool is_half_product(const nbc__node *n) {
  return n && n->kind == NBC__N_BINOP && n->op == NBC__OP_MUL && nbc__lower_is_half(n->type) &&
         (!n->cast || nbc__lower_is_half(n->cast));
}

/* float16 a * b + c and c + a * b (and -): numba-cuda's float16 operators are linked as LTO-IR
 * and contracted into one fma.rn.f16, a single rounding (seen on the H200: two roundings
 * differed by hundreds of ulps near cancellation): the same instruction, the subtracted
 * operand negated first (flipping its sign bit is exact). */
static bool lower_half_fma(nbc__lowerer *L, nbc__node *n, nbc__lval *pr) {
  if (!nbc__lower_is_half(n->type) || (n->op != NBC__OP_ADD && n->op != NBC__OP_SUB))
    return false;
  bool left = is_half_product(n->a);
  nbc__node *prod = left ? n->a : n->b, *other = left ? n->b : n->a;
  if (!is_half_product(prod)) return false;
  const nbc__type *h = n->type;
  nbc__lval x = nbc__lower_convert(L, nbc__lower_expr(L, prod->a), h);
  nbc__lval y = nbc__lower_convert(L, nbc__lower_expr(L, prod->b), h);
  nbc__lval c = nbc__lower_convert(L, nbc__lower_expr(L, other), h);
  const char *xv = x.v, *cv = c.v;
  if (n->op == NBC__OP_SUB && left) { /* a * b - c */
    cv = tmp(L);
    EMIT("%s = xor i16 %s, -32768", cv, c.v);
  } else if (n->op == NBC__OP_SUB) { /* c - a * b = (-a) * b + c */
    xv = tmp(L);
    EMIT("%s = xor i16 %s, -32768", xv, x.v);
  }
  *pr = (nbc__lval){h, nbc__lower_convert_half_instr(L, "fma.rn.f16", xv, y.v, cv)};
  return true;
}

/* t + u and t * k of tuples (infer.c's tuple_binop): the items of both, or of t k times. */
static nbc__lval tuple_binop(nbc__lowerer *L, nbc__node *n, nbc__lval a, nbc__lval b) {
  nbc__lval items[64];
  int k = 0;
  bool concat = n->op == NBC__OP_ADD;
  nbc__lval t = concat || a.type->kind == NBC__T_TUPLE ? a : b;
  int reps = concat ? 1 : t.type->count ? n->type->count / t.type->count : 0;
  for (int r = 0; r < reps; r++)
    for (int i = 0; i < t.type->count && k < 64; i++)
      items[k++] = nbc__lower_tuple_at(L, t, i);
  for (int i = 0; concat && i < b.type->count && k < 64; i++)
    items[k++] = nbc__lower_tuple_at(L, b, i);
  return nbc__lower_make_tuple(L, n->type, items);
}

nbc__lval nbc__lower_arith_binop(nbc__lowerer *L, nbc__node *n) {
  nbc__lval fused;
  if (lower_half_fma(L, n, &fused)) return fused;
  nbc__lval a = nbc__lower_expr(L, n->a);
  nbc__lval b = nbc__lower_expr(L, n->b);
  const nbc__type *rt = n->type;
  if (rt && rt->kind == NBC__T_TUPLE) return tuple_binop(L, n, a, b);
  if (n->op == NBC__OP_DIV && rt && is_int(rt)) rt = T(NBC__T_FLOAT64);
  return nbc__lower_binop_values(L, n, n->op, a, n->b, b, rt);
}

nbc__lval nbc__lower_arith_unary(nbc__lowerer *L, nbc__node *n) {
  nbc__lval a = nbc__lower_expr(L, n->a);
  const nbc__type *rt = n->type;
  if (n->op == NBC__OP_NOT) {
    const char *t = nbc__lower_truth(L, a), *x = tmp(L);
    EMIT("%s = xor i1 %s, true", x, t);
    return (nbc__lval){T(NBC__T_BOOL), x};
  }
  if (nbc__type_is_datetime(a.type) && (n->op == NBC__OP_NEG || n->op == NBC__OP_POS))
    return nbc__lower_datetime_unary(L, n->op, a);
  if (rt && nbc__type_is_complex(rt) && (n->op == NBC__OP_NEG || n->op == NBC__OP_POS)) {
    a = nbc__lower_convert(L, a, rt);
    return n->op == NBC__OP_POS ? a : nbc__lower_complex_neg(L, a);
  }
  if (nbc__type_is_bf16(rt)) /* cuda_bf16.hpp's unary + and - */
    return n->op == NBC__OP_POS ? a : nbc__lower_bf16_neg(L, a);
  if (!rt || !(is_int(rt) || is_float(rt) || is_bool(rt))) {
    nbc__lower_error(L, n, "bad operand type for unary %s: '%s'", nbc__op_text(n->op),
                     a.type ? nbc__type_name(L->ctx, a.type) : "?");
    return (nbc__lval){rt, "undef"};
  }
  /* numba negates and inverts integers at the operand's own width and only then widens the
   * result (int_negate_impl / int_invert_impl): ~uint16(x) is 0xffff ^ x zero-extended, and
   * -int8(-128) stays -128. Booleans and floats are converted first. */
  const nbc__type *wt = rt;
  if ((n->op == NBC__OP_NEG || n->op == NBC__OP_INVERT) && a.type && is_int(a.type))
    wt = a.type;
  else
    a = nbc__lower_convert(L, a, rt);
  if (nbc__lower_is_half(rt) && n->op == NBC__OP_NEG) /* numba-cuda's neg.f16 */
    return (nbc__lval){rt, nbc__lower_half_unary(L, "neg.f16", a.v)};
  const char *ty = ltype(L, wt), *x = tmp(L);
  switch (n->op) {
  case NBC__OP_POS:
    return a;
  case NBC__OP_NEG: {
    double d;
    if (is_float(rt) && nbc__lower_convert_float_literal(a.v, &d)) /* a constant stays one */
      return (nbc__lval){rt, nbc__lower_const_float(L, rt, -d)};
    long k;
    if (is_float(rt))
      EMIT("%s = fsub %s %s, %s", x, ty, nbc__lower_const_float(L, rt, -0.0), a.v);
    else if (wt == rt && nbc__type_bits(rt) == 64 && nbc__lower_convert_int_literal(a.v, &k) &&
             k != LONG_MIN)
      return (nbc__lval){rt, nbc__arena_printf(L->arena, "%ld", -k)}; /* stays a constant */
    else
      EMIT("%s = sub %s 0, %s", x, ty, a.v);
    break;
  }
  case NBC__OP_INVERT:
    if (is_float(rt)) {
      nbc__lower_error(L, n, "bad operand type for unary ~: '%s'", nbc__type_name(L->ctx, rt));
      return a;
    }
    EMIT("%s = xor %s %s, %s", x, ty, a.v, is_bool(rt) ? "true" : "-1");
    break;
  default:
    nbc__lower_error(L, n, "unsupported unary operator '%s'", nbc__op_text(n->op));
  }
  return nbc__lower_convert(L, (nbc__lval){wt, x}, rt);
}
