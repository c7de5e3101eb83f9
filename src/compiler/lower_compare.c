/* lower_compare.c — comparisons and logic in NVVM IR: numba's comparisons of numbers (in the
 * operands' common type; float16 natively, complex, bfloat16 and datetimes through their
 * files), tuples (item by item, `in` included), None, Optional values (`is None`: the valid
 * bit) and enum members; chained comparisons, the short-circuit `and` / `or` (the value of
 * the deciding operand) and conditional expressions.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/lower.h"

/* The type two values are compared in: numba's arithmetic promotion of the pair. */
static const nbc__type *compare_type(nbc__lowerer *L, const nbc__type *a, const nbc__type *b) {
  if (nbc__type_equal(a, b)) return a;
  const char *why = NULL;
  const nbc__type *t = nbc__type_binop(NBC__OP_ADD, a, b, &why);
  if (t) return t;
  return nbc__type_unify(L->ctx, a, b);
}

/* Tuples compared as numba does: == and != item by item (tuples of other lengths are not
 * equal); <, <=, >, >= by the first items that differ (numba's tuple_cmp_ordered), else by the
 * lengths. `x in t`: x == one of t's items. */
static const char *compare_tuples(nbc__lowerer *L, nbc__node *where, nbc__op op, nbc__lval a,
                                  nbc__lval b) {
  bool in = op == NBC__OP_IN || op == NBC__OP_NOTIN;
  int na = in ? b.type->count : a.type->count, nb = b.type->count;
  if (in || op == NBC__OP_EQ || op == NBC__OP_NE) {
    /* in: any item equal (an `or` from false); ==: all items equal (an `and` from true) */
    const char *acc = in ? "false" : na == nb ? "true" : "false";
    for (int i = 0; na == nb && i < nb; i++) {
      nbc__lval left = in ? a : nbc__lower_tuple_at(L, a, i);
      const char *eq =
          nbc__lower_compare_values(L, where, NBC__OP_EQ, left, nbc__lower_tuple_at(L, b, i));
      const char *x = tmp(L);
      EMIT("%s = %s i1 %s, %s", x, in ? "or" : "and", acc, eq);
      acc = x;
    }
    if (op == NBC__OP_IN || op == NBC__OP_EQ) return acc;
    const char *x = tmp(L);
    EMIT("%s = xor i1 %s, true", x, acc);
    return x;
  }
  bool lengths = op == NBC__OP_LT   ? na < nb
                 : op == NBC__OP_LE ? na <= nb
                 : op == NBC__OP_GT ? na > nb
                                    : na >= nb;
  const char *res = nbc__lower_alloca(L, "i1");
  int end = nbc__lower_label(L);
  for (int i = 0; i < na && i < nb; i++) {
    nbc__lval x = nbc__lower_tuple_at(L, a, i), y = nbc__lower_tuple_at(L, b, i);
    const char *ne = nbc__lower_compare_values(L, where, NBC__OP_NE, x, y);
    int differ = nbc__lower_label(L), same = nbc__lower_label(L);
    nbc__lower_condbr(L, ne, differ, same);
    nbc__lower_block(L, differ);
    EMIT("store i1 %s, i1* %s", nbc__lower_compare_values(L, where, op, x, y), res);
    nbc__lower_br(L, end);
    nbc__lower_block(L, same);
  }
  EMIT("store i1 %s, i1* %s", lengths ? "true" : "false", res);
  nbc__lower_block(L, end);
  const char *x = tmp(L);
  EMIT("%s = load i1, i1* %s", x, res);
  return x;
}

const char *nbc__lower_compare_values(nbc__lowerer *L, nbc__node *where, nbc__op op,
                                      nbc__lval a, nbc__lval b) {
  if (a.type && b.type && (op == NBC__OP_IS || op == NBC__OP_ISNOT) &&
      ((a.type->kind == NBC__T_OPTIONAL && b.type->kind == NBC__T_NONE) ||
       (b.type->kind == NBC__T_OPTIONAL && a.type->kind == NBC__T_NONE))) {
    /* x is None for numba's Optional: its valid bit */
    nbc__lval o = a.type->kind == NBC__T_OPTIONAL ? a : b;
    const char *valid = tmp(L), *x = tmp(L);
    EMIT("%s = extractvalue %s %s, 1", valid, ltype(L, o.type), o.v);
    if (op == NBC__OP_ISNOT) return valid;
    EMIT("%s = xor i1 %s, true", x, valid);
    return x;
  }
  if ((a.type && a.type->kind == NBC__T_ENUM) || (b.type && b.type->kind == NBC__T_ENUM)) {
    /* numba's EnumMember: members of one class are equal (and the same object) when their
     * values are; anything else is neither */
    if (!nbc__type_equal(a.type, b.type))
      return op == NBC__OP_EQ || op == NBC__OP_IS ? "false" : "true";
    a.type = a.type->dtype;
    b.type = b.type->dtype;
    op = op == NBC__OP_IS ? NBC__OP_EQ : op == NBC__OP_ISNOT ? NBC__OP_NE : op;
  }
  if (op == NBC__OP_IS || op == NBC__OP_ISNOT) { /* numba's generic_is */
    if (!nbc__type_equal(a.type, b.type)) return op == NBC__OP_IS ? "false" : "true";
    op = op == NBC__OP_IS ? NBC__OP_EQ : NBC__OP_NE;
  }
  if (b.type && b.type->kind == NBC__T_TUPLE &&
      (op == NBC__OP_IN || op == NBC__OP_NOTIN || (a.type && a.type->kind == NBC__T_TUPLE)))
    return compare_tuples(L, where, op, a, b);
  if ((a.type && (a.type->kind == NBC__T_NONE || a.type->kind == NBC__T_VOID)) ||
      (b.type && (b.type->kind == NBC__T_NONE || b.type->kind == NBC__T_VOID))) {
    bool both = a.type && b.type && a.type->kind == b.type->kind;
    if (op == NBC__OP_IS || op == NBC__OP_EQ) return both ? "true" : "false";
    if (op == NBC__OP_ISNOT || op == NBC__OP_NE) return both ? "false" : "true";
  }
  if (nbc__type_is_datetime(a.type) && b.type && a.type->kind == b.type->kind &&
      op != NBC__OP_IN && op != NBC__OP_NOTIN)
    return nbc__lower_datetime_compare(L, where, op, a, b);
  if (nbc__type_is_bf16(a.type) || nbc__type_is_bf16(b.type)) { /* bf16.c's typing */
    const nbc__type *conv[2];
    if (!nbc__bf16_binop_sig(op, a.type, b.type, conv, NULL)) {
      nbc__lower_error(L, where, "unsupported comparison %s between %s and %s",
                       nbc__op_text(op), nbc__type_name(L->ctx, a.type),
                       nbc__type_name(L->ctx, b.type));
      return "false";
    }
    if (nbc__type_is_bf16(conv[0]))
      return nbc__lower_bf16_binop(L, where, op, a, b, T(NBC__T_BOOL)).v;
    a = nbc__lower_convert(L, a, conv[0]);
    b = nbc__lower_convert(L, b, conv[1]);
  }
  const nbc__type *ct = compare_type(L, a.type, b.type);
  if (ct && nbc__type_is_complex(ct)) return nbc__lower_complex_compare(L, where, op, a, b, ct);
  if (!ct || !(is_int(ct) || is_float(ct) || is_bool(ct))) {
    nbc__lower_error(L, where, "unsupported comparison %s between %s and %s", nbc__op_text(op),
                     nbc__type_name(L->ctx, a.type), nbc__type_name(L->ctx, b.type));
    return "false";
  }
  a = nbc__lower_convert(L, a, ct);
  b = nbc__lower_convert(L, b, ct);
  if (nbc__lower_is_half(ct)) { /* numba-cuda's setp.<cmp>.f16 */
    const char *cmp = op == NBC__OP_EQ || op == NBC__OP_IS      ? "eq"
                      : op == NBC__OP_NE || op == NBC__OP_ISNOT ? "neu"
                      : op == NBC__OP_LT                        ? "lt"
                      : op == NBC__OP_LE                        ? "le"
                      : op == NBC__OP_GT                        ? "gt"
                      : op == NBC__OP_GE                        ? "ge"
                                                                : NULL;
    if (cmp) return nbc__lower_convert_half_compare(L, cmp, a.v, b.v);
  }
  const char *ty = ltype(L, ct), *pred = NULL;
  bool f = is_float(ct), s = is_int(ct) && nbc__type_is_signed(ct);
  switch (op) {
  case NBC__OP_EQ:
  case NBC__OP_IS:
    pred = f ? "oeq" : "eq";
    break;
  case NBC__OP_NE:
  case NBC__OP_ISNOT:
    pred = f ? "une" : "ne";
    break;
  case NBC__OP_LT:
    pred = f ? "olt" : s ? "slt" : "ult";
    break;
  case NBC__OP_LE:
    pred = f ? "ole" : s ? "sle" : "ule";
    break;
  case NBC__OP_GT:
    pred = f ? "ogt" : s ? "sgt" : "ugt";
    break;
  case NBC__OP_GE:
    pred = f ? "oge" : s ? "sge" : "uge";
    break;
  default:
    nbc__lower_error(L, where, "unsupported comparison '%s'", nbc__op_text(op));
    return "false";
  }
  const char *x = tmp(L);
  EMIT("%s = %s %s %s %s, %s", x, f ? "fcmp" : "icmp", pred, ty, a.v, b.v);
  return x;
}

/* a < b < c: each operand evaluated once, later comparisons skipped once one is false. */
nbc__lval nbc__lower_compare(nbc__lowerer *L, nbc__node *n) {
  const nbc__type *bt = T(NBC__T_BOOL);
  /* infer.c leaves in ->info the types each comparison converts its left and right operand
   * to (a chain's middle operand may convert differently on each side). */
  const nbc__type **conv = n->info;
  if (n->list.count == 1) {
    nbc__lval a = nbc__lower_expr(L, n->a), b = nbc__lower_expr(L, n->list.items[0]);
    if (conv) {
      a = nbc__lower_convert(L, a, conv[0]);
      b = nbc__lower_convert(L, b, conv[1]);
    }
    return (nbc__lval){bt, nbc__lower_compare_values(L, n, n->ops[0], a, b)};
  }
  const char *res = nbc__lower_alloca(L, "i1");
  int end = nbc__lower_label(L);
  nbc__lval left = nbc__lower_expr(L, n->a);
  for (int i = 0; i < n->list.count; i++) {
    nbc__lval right = nbc__lower_expr(L, n->list.items[i]);
    nbc__lval l = left, r = right;
    if (conv) {
      l = nbc__lower_convert(L, l, conv[2 * i]);
      r = nbc__lower_convert(L, r, conv[2 * i + 1]);
    }
    const char *c = nbc__lower_compare_values(L, n, n->ops[i], l, r);
    EMIT("store i1 %s, i1* %s", c, res);
    if (i + 1 < n->list.count) {
      int next = nbc__lower_label(L);
      nbc__lower_condbr(L, c, next, end);
      nbc__lower_block(L, next);
    }
    left = right;
  }
  nbc__lower_block(L, end);
  const char *x = tmp(L);
  EMIT("%s = load i1, i1* %s", x, res);
  return (nbc__lval){bt, x};
}

/* `a and b` / `a or b` return one of the operands (unified to the node's type), evaluating
 * b only when needed. */
nbc__lval nbc__lower_compare_boolop(nbc__lowerer *L, nbc__node *n) {
  const nbc__type *rt = n->type ? n->type : T(NBC__T_BOOL);
  const char *ty = ltype(L, rt);
  const char *res = nbc__lower_alloca(L, ty);
  nbc__lval a = nbc__lower_expr(L, n->a);
  const char *c = nbc__lower_truth(L, a);
  nbc__lval ac = nbc__lower_convert(L, a, rt);
  EMIT("store %s %s, %s* %s", ty, ac.v, ty, res);
  int rhs = nbc__lower_label(L), end = nbc__lower_label(L);
  if (n->op == NBC__OP_AND)
    nbc__lower_condbr(L, c, rhs, end);
  else
    nbc__lower_condbr(L, c, end, rhs);
  nbc__lower_block(L, rhs);
  nbc__lval b = nbc__lower_convert(L, nbc__lower_expr(L, n->b), rt);
  EMIT("store %s %s, %s* %s", ty, b.v, ty, res);
  nbc__lower_block(L, end);
  const char *x = tmp(L);
  EMIT("%s = load %s, %s* %s", x, ty, ty, res);
  return (nbc__lval){rt, x};
}

nbc__lval nbc__lower_compare_ifexp(nbc__lowerer *L, nbc__node *n) {
  const nbc__type *rt = n->type;
  const char *ty = ltype(L, rt);
  const char *res = nbc__lower_alloca(L, ty);
  const char *c = nbc__lower_truth(L, nbc__lower_expr(L, n->a));
  int yes = nbc__lower_label(L), no = nbc__lower_label(L), end = nbc__lower_label(L);
  nbc__lower_condbr(L, c, yes, no);
  nbc__lower_block(L, yes);
  nbc__lval b = nbc__lower_convert(L, nbc__lower_expr(L, n->b), rt);
  EMIT("store %s %s, %s* %s", ty, b.v, ty, res);
  nbc__lower_br(L, end);
  nbc__lower_block(L, no);
  nbc__lval c2 = nbc__lower_convert(L, nbc__lower_expr(L, n->c), rt);
  EMIT("store %s %s, %s* %s", ty, c2.v, ty, res);
  nbc__lower_block(L, end);
  const char *x = tmp(L);
  EMIT("%s = load %s, %s* %s", x, ty, ty, res);
  return (nbc__lval){rt, x};
}
