/* lower_array.c — arrays, tuples and the cuda module's memory functions to NVVM IR: element
 * addresses (data + sum(index_k * stride_k) in bytes; the contiguous axis of a C or F array
 * through a typed getelementptr, and no negative-index wraparound where infer proved the index
 * non-negative), views by basic indexing (slices and partial indexing: a new array struct over
 * the same memory), array attributes, tuple items, thread and block indices (sign-extended to
 * int64 as numba does), cuda.grid/gridsize, barriers, shared arrays (an internal addrspace(3)
 * global per call site), local arrays (an alloca), constant arrays (an addrspace(4) global),
 * atomics (atomicrmw for integers, the NVVM float-add intrinsics, compare-and-swap loops for
 * float max/min) and numba's cache-hinted loads and stores (ld.global.<op> / st.global.<op> as
 * inline asm). lower_expr.c and lower_call.c dispatch to the functions declared in lower.h; the
 * warp, vote, fence, bit and math intrinsics are lowered in lib_cuda.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/lower.h"

/* --------------------------------------------------------------- arrays ------------- */

nbc__lval nbc__lower_array_field(nbc__lowerer *L, nbc__lval arr, int field, int k) {
  const char *x = tmp(L);
  if (k >= 0)
    EMIT("%s = extractvalue %s %s, %d, %d", x, ltype(L, arr.type), arr.v, field, k);
  else
    EMIT("%s = extractvalue %s %s, %d", x, ltype(L, arr.type), arr.v, field);
  return (nbc__lval){T(NBC__T_INT64), x};
}

static bool const_index(const nbc__node *n, int64_t *pv) {
  if (n->kind == NBC__N_INT && !n->big) {
    *pv = n->value.i;
    return true;
  }
  if (n->kind == NBC__N_UNARY && n->op == NBC__OP_NEG && n->a->kind == NBC__N_INT &&
      !n->a->big) {
    *pv = -n->a->value.i;
    return true;
  }
  return false;
}

/* An index value (an integer or a boolean) as intp for axis `axis` of arr, wrapped around
 * (idx < 0 ? idx + shape : idx) unless it is unsigned or known non-negative. */
static const char *wrap_index(nbc__lowerer *L, nbc__lval arr, nbc__lval v, int axis,
                              bool nonneg) {
  bool sgn = is_int(v.type) && nbc__type_is_signed(v.type);
  v = nbc__lower_convert(L, v, sgn ? T(NBC__T_INT64) : T(NBC__T_UINT64));
  if (!sgn || nonneg) return v.v;
  nbc__lval shape = nbc__lower_array_field(L, arr, 5, axis);
  const char *neg = tmp(L), *w = tmp(L), *x = tmp(L);
  EMIT("%s = icmp slt i64 %s, 0", neg, v.v);
  EMIT("%s = add i64 %s, %s", w, v.v, shape.v);
  EMIT("%s = select i1 %s, i64 %s, i64 %s", x, neg, w, v.v);
  return x;
}

/* One index expression as intp, wrapped around when it may be negative. */
static const char *index_value(nbc__lowerer *L, nbc__lval arr, nbc__node *ix, int axis,
                               bool nonneg) {
  nbc__lval v = nbc__lower_expr(L, ix);
  if (!v.type || !(is_int(v.type) || is_bool(v.type))) {
    nbc__lower_error(L, ix, "array index must be an integer, not %s",
                     v.type ? nbc__type_name(L->ctx, v.type) : "?");
    return "0";
  }
  int64_t c;
  return wrap_index(L, arr, v, axis, nonneg || (const_index(ix, &c) && c >= 0));
}

/* The element of array value arr at byte offset off from its data pointer. */
static const char *element_at(nbc__lowerer *L, nbc__lval arr, const char *off) {
  const char *et = nbc__lower_mtype(L, arr.type->dtype);
  const char *data = nbc__lower_array_field(L, arr, 4, -1).v;
  const char *p8 = tmp(L), *q8 = tmp(L), *pt = tmp(L);
  EMIT("%s = bitcast %s* %s to i8*", p8, et, data);
  EMIT("%s = getelementptr i8, i8* %s, i64 %s", q8, p8, off);
  EMIT("%s = bitcast i8* %s to %s*", pt, q8, et);
  return pt;
}

/* The element pointer for the intp indices iv[0..ndim-1] (already wrapped around) into an
 * array value. */
static const char *element_address(nbc__lowerer *L, nbc__lval arr, const char **iv) {
  const nbc__type *at = arr.type;
  const char *et = nbc__lower_mtype(L, at->dtype);
  /* The axis whose stride is the item size, known at compile time. */
  int contig = at->layout == 'C' ? at->ndim - 1 : at->layout == 'F' ? 0 : -1;
  if (at->ndim == 1 && at->layout != 'A') contig = 0;
  const char *off = NULL;
  for (int k = 0; k < at->ndim; k++) {
    if (k == contig) continue;
    nbc__lval st = nbc__lower_array_field(L, arr, 6, k);
    const char *m = tmp(L);
    EMIT("%s = mul i64 %s, %s", m, iv[k], st.v);
    if (off) {
      const char *s = tmp(L);
      EMIT("%s = add i64 %s, %s", s, off, m);
      off = s;
    } else {
      off = m;
    }
  }
  const char *base = off ? element_at(L, arr, off) : nbc__lower_array_field(L, arr, 4, -1).v;
  if (contig < 0) return base;
  const char *p = tmp(L);
  EMIT("%s = getelementptr %s, %s* %s, i64 %s", p, et, et, base, iv[contig]);
  return p;
}

/* The element pointer for indices into an array value. */
static const char *element_ptr(nbc__lowerer *L, nbc__node *where, nbc__lval arr,
                               nbc__node **idx, int nidx, bool nonneg) {
  const nbc__type *at = arr.type;
  if (nidx != at->ndim) {
    nbc__lower_error(L, where,
                     "%d-dimensional array indexed with %d indices (slices and "
                     "partial indexing are not supported)",
                     at->ndim, nidx);
    return NULL;
  }
  const char **iv = nbc__arena_alloc(L->arena, sizeof *iv * (size_t)(nidx + 1));
  if (!iv) {
    nbc__diag_oom(L->ctx);
    return NULL;
  }
  for (int k = 0; k < nidx; k++) {
    if (idx[k]->kind == NBC__N_SLICE) {
      nbc__lower_error(L, idx[k], "array slices are not supported");
      return NULL;
    }
    iv[k] = index_value(L, arr, idx[k], k, nonneg);
  }
  if (nbc__lower_failed(L)) return NULL;
  return element_address(L, arr, iv);
}

static void index_list(nbc__node *b, nbc__node ***pidx, int *pn) {
  if (b->kind == NBC__N_TUPLE) {
    *pidx = b->list.items;
    *pn = b->list.count;
  } else {
    static _Thread_local nbc__node *one[1];
    one[0] = b;
    *pidx = one;
    *pn = 1;
  }
}

static const char *flat_element(nbc__lowerer *L, nbc__lval arr, nbc__node *index);
static const char *hint_element_ptr(nbc__lowerer *L, nbc__node *where, nbc__lval arr,
                                    nbc__node *ix, bool nonneg);

/* numba's CPointer p: the address p[i] finds (no bounds). */
static const char *pointer_element(nbc__lowerer *L, nbc__lval p, nbc__node *ix) {
  nbc__lval iv = nbc__lower_convert(L, nbc__lower_expr(L, ix), T(NBC__T_INT64));
  const char *et = nbc__lower_mtype(L, p.type->dtype), *r = tmp(L);
  EMIT("%s = getelementptr %s, %s* %s, i64 %s", r, et, et, p.v, iv.v);
  return r;
}

const char *nbc__lower_element_ptr(nbc__lowerer *L, nbc__node *s, nbc__lval *parray) {
  nbc__lval arr = nbc__lower_expr(L, s->a);
  if (arr.type && arr.type->kind == NBC__T_FLAT) {
    arr.type = arr.type->dtype;
    *parray = arr;
    return flat_element(L, arr, s->b);
  }
  *parray = arr;
  if (arr.type && arr.type->kind == NBC__T_POINTER) return pointer_element(L, arr, s->b);
  if (!arr.type || arr.type->kind != NBC__T_ARRAY) {
    nbc__lower_error(L, s, "'%s' object is not subscriptable as an array",
                     arr.type ? nbc__type_name(L->ctx, arr.type) : "?");
    return NULL;
  }
  nbc__node **idx;
  int n;
  index_list(s->b, &idx, &n);
  nbc__node *copy[32];
  if (n > 32) {
    nbc__lower_error(L, s, "too many indices");
    return NULL;
  }
  if (n) memcpy(copy, idx, sizeof *idx * (size_t)n); /* a[()]: no index */
  return element_ptr(L, s, arr, copy, n, s->info != NULL);
}

static void view_store(nbc__lowerer *L, nbc__node *target, nbc__lval v);

void nbc__lower_store_subscript(nbc__lowerer *L, nbc__node *target, nbc__lval v) {
  if (nbc__lower_is_field(target)) {
    nbc__lower_field_store(L, target, v);
    return;
  }
  if (target->type && target->type->kind == NBC__T_ARRAY) {
    view_store(L, target, v);
    return;
  }
  nbc__lval arr;
  const char *p = nbc__lower_element_ptr(L, target, &arr);
  if (!p) return;
  if (arr.type->readonly) {
    nbc__lower_error(L, target, "cannot modify a read-only array");
    return;
  }
  if (arr.type->dtype->kind == NBC__T_RECORD) {
    nbc__lower_record_store(L, v, p);
    return;
  }
  nbc__lower_store(L, nbc__lower_convert(L, v, arr.type->dtype), p);
}

nbc__lval nbc__lower_tuple_at(nbc__lowerer *L, nbc__lval tup, int i) {
  const char *x = tmp(L);
  EMIT("%s = extractvalue %s %s, %d", x, ltype(L, tup.type), tup.v, i);
  return (nbc__lval){tup.type->items[i], x};
}

nbc__lval nbc__lower_tuple_item(nbc__lowerer *L, nbc__node *where, nbc__lval tup,
                                nbc__node *ix) {
  const nbc__type *tt = tup.type;
  int64_t c;
  if (const_index(ix, &c)) {
    if (c < 0) c += tt->count;
    if (c < 0 || c >= tt->count) {
      nbc__lower_error(L, ix, "tuple index out of range");
      return (nbc__lval){T(NBC__T_INT64), "0"};
    }
    return nbc__lower_tuple_at(L, tup, (int)c);
  }
  /* A run-time index needs a homogeneous tuple: spill it to an array and index that. */
  for (int i = 1; i < tt->count; i++)
    if (!nbc__type_equal(tt->items[i], tt->items[0])) {
      nbc__lower_error(L, where, "a heterogeneous tuple needs a constant index");
      return (nbc__lval){T(NBC__T_INT64), "0"};
    }
  if (tt->count == 0) {
    nbc__lower_error(L, where, "tuple index out of range");
    return (nbc__lval){T(NBC__T_INT64), "0"};
  }
  const char *ety = ltype(L, tt->items[0]);
  const char *aty = nbc__arena_printf(L->arena, "[%d x %s]", tt->count, ety);
  const char *slot = nbc__lower_alloca(L, aty);
  for (int i = 0; i < tt->count; i++) {
    const char *x = nbc__lower_tuple_at(L, tup, i).v, *p = tmp(L);
    EMIT("%s = getelementptr %s, %s* %s, i64 0, i64 %d", p, aty, aty, slot, i);
    EMIT("store %s %s, %s* %s", ety, x, ety, p);
  }
  nbc__lval iv = nbc__lower_convert(L, nbc__lower_expr(L, ix), T(NBC__T_INT64));
  const char *neg = tmp(L), *w = tmp(L), *sel = tmp(L), *p = tmp(L), *x = tmp(L);
  EMIT("%s = icmp slt i64 %s, 0", neg, iv.v);
  EMIT("%s = add i64 %s, %d", w, iv.v, tt->count);
  EMIT("%s = select i1 %s, i64 %s, i64 %s", sel, neg, w, iv.v);
  /* numba's getitem_unituple: outside [-count, count) raises IndexError, which ends the
   * thread (reported by a debug kernel) */
  const char *out = tmp(L);
  EMIT("%s = icmp uge i64 %s, %d", out, sel, tt->count);
  nbc__lower_raise_if(L, out, "IndexError", "tuple index out of range", NULL);
  EMIT("%s = getelementptr %s, %s* %s, i64 0, i64 %s", p, aty, aty, slot, sel);
  EMIT("%s = load %s, %s* %s", x, ety, ety, p);
  return (nbc__lval){tt->items[0], x};
}

/* An i64 operand: a <op> b. */
static const char *op64(nbc__lowerer *L, const char *op, const char *a, const char *b) {
  const char *x = tmp(L);
  EMIT("%s = %s i64 %s, %s", x, op, a, b);
  return x;
}

static const char *select64(nbc__lowerer *L, const char *cond, const char *a, const char *b) {
  const char *x = tmp(L);
  EMIT("%s = select i1 %s, i64 %s, i64 %s", x, cond, a, b);
  return x;
}

static const char *icmp(nbc__lowerer *L, const char *pred, const char *a, const char *b) {
  const char *x = tmp(L);
  EMIT("%s = icmp %s i64 %s, %s", x, pred, a, b);
  return x;
}

/* a.flat[i]: the element i steps into the array in C order, whatever its layout (numpy's
 * flat): i, counted from the end when negative, unravelled over the shape from the last
 * axis, each index times its stride. */
static const char *flat_element(nbc__lowerer *L, nbc__lval arr, nbc__node *index) {
  const nbc__type *at = arr.type;
  const char *k = nbc__lower_convert(L, nbc__lower_expr(L, index), T(NBC__T_INT64)).v;
  const char *size = nbc__lower_array_field(L, arr, 2, -1).v;
  k = select64(L, icmp(L, "slt", k, "0"), op64(L, "add", k, size), k);
  if (at->layout == 'C' || at->ndim == 1) { /* dense rows: one stride, the last axis' */
    const char *st = nbc__lower_array_field(L, arr, 6, at->ndim - 1).v;
    return element_at(L, arr, op64(L, "mul", k, st));
  }
  const char *off = "0", *rest = k;
  for (int d = at->ndim - 1; d >= 0; d--) {
    const char *len = nbc__lower_array_field(L, arr, 5, d).v;
    const char *st = nbc__lower_array_field(L, arr, 6, d).v;
    const char *safe = select64(L, icmp(L, "eq", len, "0"), "1", len);
    off = op64(L, "add", off, op64(L, "mul", op64(L, "urem", rest, safe), st));
    rest = op64(L, "udiv", rest, safe);
  }
  return element_at(L, arr, off);
}

/* A slice bound as intp, or NULL when absent or None. */
static const char *bound_value(nbc__lowerer *L, nbc__node *b) {
  if (!b || b->kind == NBC__N_NONE) return NULL;
  return nbc__lower_convert(L, nbc__lower_expr(L, b), T(NBC__T_INT64)).v;
}

/* One given bound adjusted as CPython's PySlice_AdjustIndices does for a dimension of
 * length n: a negative bound counts from the end, then it is clamped to [0, n] (to [-1, n-1]
 * for a negative step). */
static const char *adjust_bound(nbc__lowerer *L, const char *x, const char *n, const char *neg,
                                const char *n_minus_1) {
  const char *y = select64(L, icmp(L, "slt", x, "0"), op64(L, "add", x, n), x);
  const char *low = select64(L, neg, "-1", "0"), *high = select64(L, neg, n_minus_1, n);
  const char *r = select64(L, icmp(L, "slt", y, "0"), low, y);
  return select64(L, icmp(L, "sge", y, n), high, r);
}

/* A view of arr's memory, of array type vt: arr's meminfo and parent, nitems elements, arr's
 * itemsize (vt's dtype's size when the view reads another dtype: a.view(dtype), a.real),
 * data at element pointer pt (NULL: arr's own), vt->ndim extents and strides. Basic
 * indexing, a.T, a.reshape(...) and the views of other dtypes make their views so. */
static nbc__lval make_view(nbc__lowerer *L, nbc__lval arr, const nbc__type *vt, const char *pt,
                           const char *nitems, const char *const *shape,
                           const char *const *stride) {
  const char *aty = ltype(L, arr.type), *vty = ltype(L, vt), *cur = "undef";
  bool retyped = !nbc__type_equal(vt->dtype, arr.type->dtype);
  for (int f = 0; f <= 3; f++) { /* meminfo, parent, nitems, itemsize */
    const char *x = tmp(L), *v = tmp(L);
    if (f == 2) {
      EMIT("%s = insertvalue %s %s, i64 %s, 2", x, vty, cur, nitems);
    } else if (f == 3 && retyped) {
      EMIT("%s = insertvalue %s %s, i64 %lld, 3", x, vty, cur,
           (long long)nbc__type_size(vt->dtype));
    } else {
      const char *ft = f < 2 ? "i8*" : "i64";
      EMIT("%s = extractvalue %s %s, %d", v, aty, arr.v, f);
      EMIT("%s = insertvalue %s %s, %s %s, %d", x, vty, cur, ft, v, f);
    }
    cur = x;
  }
  if (!pt) {
    const char *v = tmp(L);
    EMIT("%s = extractvalue %s %s, 4", v, aty, arr.v);
    pt = v;
  }
  const char *x = tmp(L);
  EMIT("%s = insertvalue %s %s, %s* %s, 4", x, vty, cur, nbc__lower_mtype(L, vt->dtype), pt);
  cur = x;
  for (int k = 0; k < vt->ndim; k++) {
    const char *a = tmp(L), *b = tmp(L);
    EMIT("%s = insertvalue %s %s, i64 %s, 5, %d", a, vty, cur, shape[k], k);
    EMIT("%s = insertvalue %s %s, i64 %s, 6, %d", b, vty, a, stride[k], k);
    cur = b;
  }
  return (nbc__lval){vt, cur};
}

/* a[...] with slices or fewer integers than dimensions: a view of a's memory (numba's basic
 * indexing). Each integer moves the data pointer (negative ones count from the end, as in
 * numba); each slice start:stop:step gives a dimension of CPython's slice length with stride
 * step * stride, its start moving the data pointer; dimensions not indexed are kept. A step
 * of zero, refused at compile time when constant, gives an empty dimension at run time. */
static nbc__lval array_view(nbc__lowerer *L, nbc__node *n) {
  const nbc__type *vt = n->type;
  nbc__lval arr = nbc__lower_expr(L, n->a);
  const nbc__type *at = arr.type;
  nbc__node **idx;
  int count;
  index_list(n->b, &idx, &count);
  /* an ellipsis stands for the dimensions the other indices leave; None adds one */
  int nnew = 0, ell = -1;
  for (int k = 0; k < count; k++) {
    if (idx[k]->kind == NBC__N_ELLIPSIS) ell = k;
    else if (nbc__index_is_newaxis(idx[k])) nnew++;
  }
  int whole = at && at->kind == NBC__T_ARRAY ? at->ndim - (count - (ell >= 0) - nnew) : -1;
  if (!vt || vt->kind != NBC__T_ARRAY || vt->ndim > 32 || whole < 0) {
    nbc__lower_error(L, n, "unsupported array view");
    return (nbc__lval){vt, "undef"};
  }
  const char **shape = nbc__arena_alloc(L->arena, sizeof *shape * (size_t)(vt->ndim + 1));
  const char **stride = nbc__arena_alloc(L->arena, sizeof *stride * (size_t)(vt->ndim + 1));
  if (!shape || !stride) {
    nbc__diag_oom(L->ctx);
    return (nbc__lval){vt, "undef"};
  }
  const char *off = "0";
  int nd = 0, d = 0;
  for (int k = 0; k <= count && d <= at->ndim; k++) {
    if (k == count || k == ell) { /* the ellipsis, and what no index reaches: kept whole */
      int kept = k == ell ? whole : at->ndim - d;
      for (int w = 0; w < kept && nd < vt->ndim; w++, d++) {
        shape[nd] = nbc__lower_array_field(L, arr, 5, d).v;
        stride[nd++] = nbc__lower_array_field(L, arr, 6, d).v;
      }
      continue;
    }
    if (nbc__index_is_newaxis(idx[k])) { /* np.newaxis: a dimension of one element */
      if (nd < vt->ndim) {
        shape[nd] = "1";
        stride[nd++] = "0";
      }
      continue;
    }
    if (d >= at->ndim) break;
    const char *len = nbc__lower_array_field(L, arr, 5, d).v;
    const char *st = nbc__lower_array_field(L, arr, 6, d).v;
    if (idx[k]->kind != NBC__N_SLICE) {
      const char *i = index_value(L, arr, idx[k], d, false);
      off = op64(L, "add", off, op64(L, "mul", i, st));
      d++;
      continue;
    }
    d++;
    if (nd >= vt->ndim) break;
    nbc__node *sl = idx[k];
    const char *step = bound_value(L, sl->c);
    if (!step) step = "1";
    const char *start_v = bound_value(L, sl->a), *stop_v = bound_value(L, sl->b);
    const char *neg = icmp(L, "slt", step, "0"), *nm1 = op64(L, "sub", len, "1");
    const char *start = start_v ? adjust_bound(L, start_v, len, neg, nm1)
                                : select64(L, neg, nm1, "0");
    const char *stop = stop_v ? adjust_bound(L, stop_v, len, neg, nm1)
                              : select64(L, neg, "-1", len);
    /* length: (hi - lo - 1) / |step| + 1 when lo < hi, where (lo, hi) is (start, stop) for a
     * positive step and (stop, start) for a negative one */
    const char *zero_step = icmp(L, "eq", step, "0");
    const char *mag = select64(L, neg, op64(L, "sub", "0", step), step);
    const char *div = select64(L, zero_step, "1", mag);
    const char *lo = select64(L, neg, stop, start), *hi = select64(L, neg, start, stop);
    const char *q = op64(L, "sdiv", op64(L, "sub", op64(L, "sub", hi, lo), "1"), div);
    const char *some = select64(L, icmp(L, "slt", lo, hi), op64(L, "add", q, "1"), "0");
    shape[nd] = select64(L, zero_step, "0", some);
    stride[nd++] = op64(L, "mul", st, step);
    off = op64(L, "add", off, op64(L, "mul", start, st));
  }
  if (nd != vt->ndim) {
    nbc__lower_error(L, n, "unsupported array view");
    return (nbc__lval){vt, "undef"};
  }
  const char *pt = element_at(L, arr, off);
  const char *nitems = "1";
  for (int k = 0; k < nd; k++)
    nitems = op64(L, "mul", nitems, shape[k]);
  return make_view(L, arr, vt, pt, nitems, shape, stride);
}

/* a[...] = number for a view: every element of the view gets it (numba's setitem of a
 * scalar into a slice). One loop over the view's items in C order, each index split into
 * per-axis indices. */
static void view_store(nbc__lowerer *L, nbc__node *target, nbc__lval v) {
  nbc__lval view = array_view(L, target);
  const nbc__type *vt = view.type;
  if (nbc__lower_failed(L) || !vt || vt->kind != NBC__T_ARRAY) return;
  if (!v.type || !(is_int(v.type) || is_float(v.type) || is_bool(v.type) ||
                   nbc__type_is_complex(v.type))) {
    nbc__lower_error(L, target, "only a number can be assigned to an array slice");
    return;
  }
  v = nbc__lower_convert(L, v, vt->dtype);
  const char *total = nbc__lower_array_field(L, view, 2, -1).v;
  const char *counter = nbc__lower_alloca(L, "i64");
  EMIT("store i64 0, i64* %s", counter);
  int test = nbc__lower_label(L), body = nbc__lower_label(L), end = nbc__lower_label(L);
  nbc__lower_block(L, test);
  const char *k = tmp(L);
  EMIT("%s = load i64, i64* %s", k, counter);
  nbc__lower_condbr(L, icmp(L, "slt", k, total), body, end);
  nbc__lower_block(L, body);
  const char *rem = k, *off = "0";
  for (int d = vt->ndim - 1; d >= 0; d--) {
    const char *len = nbc__lower_array_field(L, view, 5, d).v;
    const char *i = op64(L, "srem", rem, len);
    rem = op64(L, "sdiv", rem, len);
    off = op64(L, "add", off, op64(L, "mul", i, nbc__lower_array_field(L, view, 6, d).v));
  }
  nbc__lower_store(L, v, element_at(L, view, off));
  EMIT("store i64 %s, i64* %s", op64(L, "add", k, "1"), counter);
  nbc__lower_br(L, test);
  nbc__lower_block(L, end);
}

nbc__lval nbc__lower_subscript(nbc__lowerer *L, nbc__node *n) {
  const nbc__type *at = n->a->type;
  if (nbc__lower_is_field(n)) return nbc__lower_field_load(L, n);
  if (at && at->kind == NBC__T_ENUM_CLASS) /* Color["red"] */
    return nbc__lower_enum_lookup(L, n, n->a, n->b->str);
  if (at && at->kind == NBC__T_RANGE && at->dtype) /* r[i]: start + i * step */
    return nbc__lower_range_item(L, nbc__lower_expr(L, n->a), nbc__lower_expr(L, n->b));
  if (at && at->kind == NBC__T_TUPLE) {
    nbc__lval tup = nbc__lower_expr(L, n->a);
    if (n->b->kind == NBC__N_SLICE && n->info && n->type && n->type->kind == NBC__T_TUPLE) {
      const nbc__tuple_slice *ts = n->info; /* t[a:b:c]: the items infer.c chose */
      nbc__lval items[64];
      for (int i = 0; i < ts->count; i++) items[i] = nbc__lower_tuple_at(L, tup, ts->index[i]);
      return nbc__lower_make_tuple(L, n->type, items);
    }
    return nbc__lower_tuple_item(L, n, tup, n->b);
  }
  if (n->type && n->type->kind == NBC__T_ARRAY) return array_view(L, n);
  nbc__lval arr;
  const char *p = nbc__lower_element_ptr(L, n, &arr);
  if (!p) return (nbc__lval){n->type, nbc__lower_zero(L, n->type)};
  if (arr.type->dtype->kind == NBC__T_RECORD) return nbc__lower_record_at(L, arr.type->dtype, p);
  return nbc__lower_load(L, arr.type->dtype, p);
}

/* A tuple value of the given items (converted to the tuple type's items). */
nbc__lval nbc__lower_make_tuple(nbc__lowerer *L, const nbc__type *tt, nbc__lval *items) {
  const char *cur = "undef";
  for (int i = 0; i < tt->count; i++) {
    nbc__lval v = nbc__lower_convert(L, items[i], tt->items[i]);
    const char *x = tmp(L);
    EMIT("%s = insertvalue %s %s, %s %s, %d", x, ltype(L, tt), cur, ltype(L, tt->items[i]), v.v,
         i);
    cur = x;
  }
  return (nbc__lval){tt, cur};
}

/* The same data with the axes in the order perm gives (a.transpose(axes)), or reversed when
 * perm is NULL (a.T): shape and strides permuted, the view's type vt. */
static nbc__lval permuted_view(nbc__lowerer *L, nbc__lval arr, const nbc__type *vt,
                               const int64_t *perm) {
  int nd = arr.type->ndim;
  const char *shape[32], *stride[32];
  for (int k = 0; k < nd && k < 32; k++) {
    int axis = perm ? (int)perm[k] : nd - 1 - k;
    shape[k] = nbc__lower_array_field(L, arr, 5, axis).v;
    stride[k] = nbc__lower_array_field(L, arr, 6, axis).v;
  }
  return make_view(L, arr, vt, NULL, nbc__lower_array_field(L, arr, 2, -1).v, shape, stride);
}

/* arr's data pointer as a pointer to vt's elements, and its extents and strides (up to 32):
 * what a view of another dtype starts from. */
static const char *retyped_geometry(nbc__lowerer *L, nbc__lval arr, const nbc__type *vt,
                                    const char **shape, const char **stride) {
  const char *p = tmp(L);
  EMIT("%s = bitcast %s* %s to %s*", p, nbc__lower_mtype(L, arr.type->dtype),
       nbc__lower_array_field(L, arr, 4, -1).v, nbc__lower_mtype(L, vt->dtype));
  for (int k = 0; k < vt->ndim && k < 32; k++) {
    shape[k] = nbc__lower_array_field(L, arr, 5, k).v;
    stride[k] = nbc__lower_array_field(L, arr, 6, k).v;
  }
  return p;
}

/* a.real / a.imag of a complex array: the same shape and strides over one float of each
 * element (the data pointer moved by one float for imag), itemsize that float's. */
static nbc__lval complex_part_view(nbc__lowerer *L, nbc__lval arr, const nbc__type *vt,
                                   bool imag) {
  const char *shape[32], *stride[32];
  const char *p = retyped_geometry(L, arr, vt, shape, stride);
  if (imag) {
    const char *ft = nbc__lower_mtype(L, vt->dtype), *q = tmp(L);
    EMIT("%s = getelementptr %s, %s* %s, i64 1", q, ft, ft, p);
    p = q;
  }
  return make_view(L, arr, vt, p, nbc__lower_array_field(L, arr, 2, -1).v, shape, stride);
}

nbc__lval nbc__lower_array_attr(nbc__lowerer *L, nbc__node *n, nbc__lval arr) {
  const nbc__type *at = arr.type;
  const char *name = n->str;
  if (strcmp(name, "size") == 0) return nbc__lower_array_field(L, arr, 2, -1);
  if (strcmp(name, "itemsize") == 0) return nbc__lower_array_field(L, arr, 3, -1);
  if (strcmp(name, "flat") == 0) return (nbc__lval){n->type, arr.v}; /* the array itself */
  if (strcmp(name, "ctypes.data") == 0) { /* a.ctypes.data: the data pointer's address */
    const char *r = tmp(L);
    EMIT("%s = ptrtoint %s* %s to i64", r, nbc__lower_mtype(L, at->dtype),
         nbc__lower_array_field(L, arr, 4, -1).v);
    return (nbc__lval){T(NBC__T_UINT64), r};
  }
  if (strcmp(name, "nbytes") == 0) /* numba's array_nbytes: size * itemsize */
    return (nbc__lval){T(NBC__T_INT64),
                       op64(L, "mul", nbc__lower_array_field(L, arr, 2, -1).v,
                            nbc__lower_array_field(L, arr, 3, -1).v)};
  if (strcmp(name, "ndim") == 0)
    return (nbc__lval){T(NBC__T_INT64), nbc__arena_printf(L->arena, "%d", at->ndim)};
  if (strcmp(name, "shape") == 0 || strcmp(name, "strides") == 0) {
    const nbc__type *tt = n->type;
    if (!tt || tt->kind != NBC__T_TUPLE || tt->count != at->ndim) {
      const nbc__type **items =
          nbc__arena_alloc(L->arena, sizeof *items * (size_t)(at->ndim + 1));
      for (int k = 0; k < at->ndim; k++)
        items[k] = T(NBC__T_INT64);
      tt = nbc__type_tuple(L->ctx, items, at->ndim);
    }
    nbc__lval items[32];
    for (int k = 0; k < at->ndim && k < 32; k++)
      items[k] = nbc__lower_array_field(L, arr, name[1] == 'h' ? 5 : 6, k);
    return nbc__lower_make_tuple(L, tt, items);
  }
  if (strcmp(name, "T") == 0) return permuted_view(L, arr, n->type, NULL);
  if (strcmp(name, "real") == 0 || strcmp(name, "imag") == 0) {
    if (nbc__type_is_complex(at->dtype))
      return complex_part_view(L, arr, n->type, name[0] == 'i');
    return arr; /* a real array is its own real part (infer refused the imaginary one) */
  }
  nbc__lower_error(L, n, "unknown attribute '%s' of array", name);
  return (nbc__lval){n->type, "0"};
}

nbc__lval nbc__lower_transpose(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  return permuted_view(L, nbc__lower_expr(L, n->a->a), call->ret, call->shape);
}

/* a.view(dtype) as numba's array_view: the data reinterpreted. With another itemsize the
 * checks numpy 1.23 makes (numba's _compatible_view: the last axis contiguous unless it has
 * one element or the array none, and for a larger dtype its bytes a multiple of the new
 * size), then numba's _change_dtype: the axis resized is the last of a C array, the first of
 * an F one, and for layout A whichever has the old itemsize as stride (neither: "new type
 * not compatible with array"); its extent scales by the ratio of the sizes and its stride
 * becomes the new itemsize. Each failure raises ValueError, as numba's. Unlike numba, which
 * keeps the old fields, the view's itemsize and size are its own. */
nbc__lval nbc__lower_view(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  const nbc__type *vt = call->ret;
  if (vt->kind != NBC__T_ARRAY) { /* a scalar's view: its bits as the other type */
    nbc__lval x = nbc__lower_expr(L, n->a->a);
    const char *from = nbc__lower_ltype(L, x.type), *to = nbc__lower_ltype(L, vt);
    if (strcmp(from, to) == 0) return (nbc__lval){vt, x.v}; /* float16 is its i16 bits */
    const char *r = tmp(L);
    EMIT("%s = bitcast %s %s to %s", r, from, x.v, to);
    return (nbc__lval){vt, r};
  }
  nbc__lval arr = nbc__lower_expr(L, n->a->a);
  int nd = vt->ndim;
  int64_t os = (int64_t)nbc__type_size(arr.type->dtype), ns = (int64_t)nbc__type_size(vt->dtype);
  const char *shape[32], *stride[32];
  const char *p = retyped_geometry(L, arr, vt, shape, stride);
  const char *nitems = nbc__lower_array_field(L, arr, 2, -1).v;
  if (os != ns) { /* (the sizes as operands live in the arena: strides keep s) */
    const char *o = nbc__arena_printf(L->arena, "%lld", (long long)os);
    const char *s = nbc__arena_printf(L->arena, "%lld", (long long)ns);
    int last = nd - 1;
    const char *p1 = icmp(L, "ne", shape[last], "1"), *p2 = icmp(L, "ne", nitems, "0");
    const char *p3 = icmp(L, "ne", stride[last], o), *c12 = tmp(L), *c123 = tmp(L);
    EMIT("%s = and i1 %s, %s", c12, p1, p2);
    EMIT("%s = and i1 %s, %s", c123, c12, p3);
    nbc__lower_raise_if(L, c123, "ValueError",
                        "To change to a dtype of a different size, the last axis must be "
                        "contiguous",
                        NULL);
    if (ns > os)
      nbc__lower_raise_if(L, icmp(L, "ne", op64(L, "srem", op64(L, "mul", shape[last], o), s),
                                  "0"),
                          "ValueError",
                          "When changing to a larger dtype, its size must be a divisor of the "
                          "total size in bytes of the last axis of the array.",
                          NULL);
    /* the axis resized: 1 for the last, 0 for the first */
    const char *at_last = vt->layout == 'C' ? "true" : vt->layout == 'F' ? "false" : NULL;
    if (!at_last) {
      const char *c = icmp(L, "eq", stride[last], o), *f = icmp(L, "eq", stride[0], o);
      const char *neither = tmp(L), *either = tmp(L);
      EMIT("%s = or i1 %s, %s", either, c, f);
      EMIT("%s = xor i1 %s, true", neither, either);
      nbc__lower_raise_if(L, neither, "ValueError", "new type not compatible with array", NULL);
      at_last = c;
    }
    const char *dim = select64(L, at_last, shape[last], shape[0]);
    const char *bytes = op64(L, "mul", dim, o);
    if (ns > os)
      nbc__lower_raise_if(L, icmp(L, "ne", op64(L, "srem", bytes, s), "0"), "ValueError",
                          "new type not compatible with array", NULL);
    const char *newdim = op64(L, "sdiv", bytes, s);
    const char *first_dim = shape[0], *first_stride = stride[0];
    shape[last] = select64(L, at_last, newdim, shape[last]);
    stride[last] = select64(L, at_last, s, stride[last]);
    if (last != 0) {
      shape[0] = select64(L, at_last, first_dim, newdim);
      stride[0] = select64(L, at_last, first_stride, s);
    } else {
      shape[0] = newdim;
      stride[0] = s;
    }
    nitems = op64(L, "sdiv", op64(L, "mul", nitems, o), s);
  }
  return make_view(L, arr, vt, p, nitems, shape, stride);
}

/* carray(ptr, shape) / farray(ptr, shape) as numba's np_cfarray: an array with no meminfo or
 * parent over ptr's memory, the shape given, and dense strides in C or F order. */
nbc__lval nbc__lower_carray(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  const nbc__type *at = call->ret;
  int nd = at->ndim;
  nbc__lval ptr = nbc__lower_expr(L, n->list.items[0]);
  nbc__lval shp = nbc__lower_expr(L, n->list.items[1]);
  const char *shape[32], *stride[32];
  for (int k = 0; k < nd && k < 32; k++) {
    nbc__lval d = call->argtypes[1]->kind == NBC__T_TUPLE ? nbc__lower_tuple_at(L, shp, k) : shp;
    shape[k] = nbc__lower_convert(L, d, T(NBC__T_INT64)).v;
  }
  const char *isz = nbc__arena_printf(L->arena, "%lld", (long long)nbc__type_size(at->dtype));
  const char *step = isz, *nitems = "1";
  for (int i = 0; i < nd; i++) { /* C: the last axis is the densest; F: the first */
    int k = at->layout == 'C' ? nd - 1 - i : i;
    stride[k] = step;
    step = op64(L, "mul", step, shape[k]);
    nitems = op64(L, "mul", nitems, shape[k]);
  }
  const char *ty = ltype(L, at), *cur = tmp(L), *x;
  EMIT("%s = insertvalue %s undef, i8* null, 0", cur, ty);
  x = tmp(L);
  EMIT("%s = insertvalue %s %s, i8* null, 1", x, ty, cur);
  cur = x;
  x = tmp(L);
  EMIT("%s = insertvalue %s %s, i64 %s, 2", x, ty, cur, nitems);
  cur = x;
  x = tmp(L);
  EMIT("%s = insertvalue %s %s, i64 %s, 3", x, ty, cur, isz);
  cur = x;
  x = tmp(L);
  EMIT("%s = insertvalue %s %s, %s* %s, 4", x, ty, cur, nbc__lower_mtype(L, at->dtype), ptr.v);
  cur = x;
  for (int k = 0; k < nd; k++) {
    const char *a = tmp(L), *b = tmp(L);
    EMIT("%s = insertvalue %s %s, i64 %s, 5, %d", a, ty, cur, shape[k], k);
    EMIT("%s = insertvalue %s %s, i64 %s, 6, %d", b, ty, a, stride[k], k);
    cur = b;
  }
  return (nbc__lval){at, cur};
}

/* a.reshape(d0, d1, ...) or a.reshape((d0, d1, ...)) as numba's array_reshape: one -1
 * extent is inferred from the size; a size that does not match, or two -1s, raise numba's
 * ValueError (the thread ends). The view shares the data; its strides are the contiguous
 * ones of its layout (the array's own, C or F). */
nbc__lval nbc__lower_reshape(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  const nbc__type *rt = call->ret;
  nbc__lval arr = nbc__lower_expr(L, n->a->a);
  const char *dims[32];
  int nd = rt->ndim;
  if (call->nargs == 1 && call->argtypes[0]->kind == NBC__T_TUPLE) {
    nbc__lval tup = nbc__lower_expr(L, n->list.items[0]);
    for (int k = 0; k < nd; k++)
      dims[k] = nbc__lower_convert(L, nbc__lower_tuple_at(L, tup, k), T(NBC__T_INT64)).v;
  } else {
    for (int k = 0; k < nd; k++)
      dims[k] = nbc__lower_convert(L, nbc__lower_expr(L, n->list.items[k]), T(NBC__T_INT64)).v;
  }
  if (nbc__lower_failed(L)) return (nbc__lval){rt, nbc__lower_zero(L, rt)};
  /* numba's normalize_reshape_value: known, the product of the other extents */
  const char *known = "1", *nneg = "0", *neg[32];
  for (int k = 0; k < nd; k++) {
    neg[k] = icmp(L, "slt", dims[k], "0");
    known = op64(L, "mul", known, select64(L, neg[k], "1", dims[k]));
    const char *z = tmp(L);
    EMIT("%s = zext i1 %s to i64", z, neg[k]);
    nneg = op64(L, "add", nneg, z);
  }
  const char *size = nbc__lower_array_field(L, arr, 2, -1).v;
  nbc__lower_raise_if(L, icmp(L, "ugt", nneg, "1"), "ValueError",
                      "multiple negative shape values", NULL);
  const char *none = icmp(L, "eq", nneg, "0"), *kz = icmp(L, "eq", known, "0");
  const char *div = select64(L, kz, "1", known); /* no division by zero */
  const char *rem = op64(L, "srem", size, div), *changed0 = icmp(L, "ne", size, known);
  const char *okz = icmp(L, "eq", size, "0"), *okr = icmp(L, "eq", rem, "0");
  /* no -1: the size must be known; one -1: a multiple of known (0 when known is 0) */
  const char *ok1 = tmp(L), *bad1 = tmp(L), *one_neg = tmp(L), *b0 = tmp(L), *b1 = tmp(L),
             *bad = tmp(L);
  EMIT("%s = select i1 %s, i1 %s, i1 %s", ok1, kz, okz, okr);
  EMIT("%s = xor i1 %s, true", bad1, ok1);
  EMIT("%s = xor i1 %s, true", one_neg, none);
  EMIT("%s = and i1 %s, %s", b0, none, changed0);
  EMIT("%s = and i1 %s, %s", b1, one_neg, bad1);
  EMIT("%s = or i1 %s, %s", bad, b0, b1);
  nbc__lower_raise_if(L, bad, "ValueError", "total size of new array must be unchanged", NULL);
  const char *inferred = select64(L, kz, "0", op64(L, "sdiv", size, div));
  for (int k = 0; k < nd; k++)
    dims[k] = select64(L, neg[k], inferred, dims[k]);
  const char *strides[32];
  const char *stride = nbc__lower_array_field(L, arr, 3, -1).v; /* the itemsize */
  for (int j = 0; j < nd; j++) {
    int k = rt->layout == 'F' ? j : nd - 1 - j;
    strides[k] = stride;
    stride = op64(L, "mul", stride, dims[k]);
  }
  return make_view(L, arr, rt, NULL, size, dims, strides);
}

/* --------------------------------------------------------------- CUDA --------------- */

const char *nbc__lower_sreg_axis(nbc__lowerer *L, const char *reg, char axis) {
  const char *name = nbc__arena_printf(L->arena, "llvm.nvvm.read.ptx.sreg.%s.%c", reg, axis);
  nbc__lower_declare(L,
                     nbc__arena_printf(L->arena, "declare i32 @%s() nounwind readnone", name));
  const char *x = tmp(L);
  EMIT("%s = call i32 @%s()", x, name);
  return x;
}

const char *nbc__lower_sreg(nbc__lowerer *L, const char *reg) {
  const char *name = nbc__arena_printf(L->arena, "llvm.nvvm.read.ptx.sreg.%s", reg);
  nbc__lower_declare(L,
                     nbc__arena_printf(L->arena, "declare i32 @%s() nounwind readnone", name));
  const char *x = tmp(L);
  EMIT("%s = call i32 @%s()", x, name);
  return x;
}

static const char *sext64(nbc__lowerer *L, const char *v) {
  const char *x = tmp(L);
  EMIT("%s = sext i32 %s to i64", x, v);
  return x;
}

/* cuda.grid(n): tid + ntid * ctaid per axis; cuda.gridsize(n): ntid * nctaid (int64). */
nbc__lval nbc__lower_grid(nbc__lowerer *L, nbc__node *n, bool size) {
  int64_t dims = 1;
  if (n->list.count != 1 || !const_index(n->list.items[0], &dims) || dims < 1 || dims > 3) {
    nbc__lower_error(L, n, "cuda.%s() takes a constant 1, 2 or 3", size ? "gridsize" : "grid");
    return (nbc__lval){T(NBC__T_INT64), "0"};
  }
  nbc__lval items[3];
  for (int d = 0; d < dims; d++) {
    char axis = (char)('x' + d);
    const char *v;
    if (size) {
      const char *a = sext64(L, nbc__lower_sreg_axis(L, "ntid", axis)),
                 *b = sext64(L, nbc__lower_sreg_axis(L, "nctaid", axis));
      v = tmp(L);
      EMIT("%s = mul i64 %s, %s", v, a, b);
    } else {
      const char *t = sext64(L, nbc__lower_sreg_axis(L, "tid", axis)),
                 *nt = sext64(L, nbc__lower_sreg_axis(L, "ntid", axis)),
                 *c = sext64(L, nbc__lower_sreg_axis(L, "ctaid", axis)), *m = tmp(L);
      v = tmp(L);
      EMIT("%s = mul i64 %s, %s", m, nt, c);
      EMIT("%s = add i64 %s, %s", v, m, t);
    }
    items[d] = (nbc__lval){T(NBC__T_INT64), v};
  }
  if (dims == 1) return items[0];
  const nbc__type *tt = n->type;
  if (!tt || tt->kind != NBC__T_TUPLE) {
    const nbc__type *its[3] = {T(NBC__T_INT64), T(NBC__T_INT64), T(NBC__T_INT64)};
    tt = nbc__type_tuple(L->ctx, its, (int)dims);
  }
  return nbc__lower_make_tuple(L, tt, items);
}

/* The array struct over data (a generic pointer to the elements) with a constant shape
 * and the dense strides of at's layout (C, or F), which LLVM folds into the address
 * arithmetic. */
/* The array struct over data, of constant extents and byte strides (nitems total). */
static nbc__lval constant_geometry(nbc__lowerer *L, const nbc__type *at, const char *data,
                                   const int64_t *shape, const int64_t *strides, int64_t total) {
  const char *et = nbc__lower_mtype(L, at->dtype);
  const char *aty = ltype(L, at);
  const char *cur = tmp(L);
  EMIT("%s = insertvalue %s {i8* null, i8* null, i64 %lld, i64 %zu, %s* null, [%d x i64] "
       "zeroinitializer, [%d x i64] zeroinitializer}, %s* %s, 4",
       cur, aty, (long long)total, nbc__type_size(at->dtype), et, at->ndim, at->ndim, et, data);
  for (int k = 0; k < at->ndim; k++) {
    const char *x = tmp(L), *y = tmp(L);
    EMIT("%s = insertvalue %s %s, i64 %lld, 5, %d", x, aty, cur, (long long)shape[k], k);
    EMIT("%s = insertvalue %s %s, i64 %lld, 6, %d", y, aty, x, (long long)strides[k], k);
    cur = y;
  }
  return (nbc__lval){at, cur};
}

/* A dense array of the layout's order (C, or F) over data. */
static nbc__lval fixed_array(nbc__lowerer *L, const nbc__type *at, const char *data,
                             const int64_t *shape, int64_t total) {
  int64_t strides[32], stride = (int64_t)nbc__type_size(at->dtype);
  bool fortran = at->layout == 'F';
  for (int j = 0; j < at->ndim && j < 32; j++) {
    int k = fortran ? j : at->ndim - 1 - j; /* the axis whose stride is the next larger */
    strides[k] = stride;
    stride *= shape[k];
  }
  return constant_geometry(L, at, data, shape, strides, total);
}

/* numba's make_constant_array: the bytes in an addrspace(4) global named _cudapy_cmem (LLVM
 * numbers the others), aligned to the element, read through a generic pointer (NVVM turns
 * the loads into ld.const). */
nbc__lval nbc__lower_const_array(nbc__lowerer *L, const nbc__type *at, const nbc_global_t *g) {
  const char *et = nbc__lower_mtype(L, at->dtype);
  size_t item = nbc__type_size(at->dtype), n = g->array_bytes;
  int id = L->const_count++;
  const char *name = id ? nbc__arena_printf(L->arena, "@_cudapy_cmem.%d", id) : "@_cudapy_cmem";
  nbc__buf_printf(&L->globals, "%s = internal addrspace(4) constant [%zu x i8] c\"", name, n);
  const unsigned char *bytes = g->array_data;
  for (size_t i = 0; i < n; i++)
    nbc__buf_printf(&L->globals, "\\%02X", bytes[i]);
  /* records are [size x i8], read with the alignment their layout gives (lower_record.c), as
   * local arrays of them (16); numbers with their own */
  nbc__buf_printf(&L->globals, "\", align %zu\n",
                  at->dtype->kind == NBC__T_RECORD ? (size_t)16 : item);
  const char *p = tmp(L), *q = tmp(L), *data = tmp(L);
  EMIT("%s = getelementptr [%zu x i8], [%zu x i8] addrspace(4)* %s, i64 0, i64 0", p, n, n,
       name);
  EMIT("%s = bitcast i8 addrspace(4)* %s to %s addrspace(4)*", q, p, et);
  EMIT("%s = addrspacecast %s addrspace(4)* %s to %s*", data, et, q, et);
  return fixed_array(L, at, data, g->array_shape, (int64_t)(item ? n / item : 0));
}

nbc__lval nbc__lower_device_array_global(nbc__lowerer *L, const nbc__type *at,
                                         const nbc_global_t *g) {
  const char *et = nbc__lower_mtype(L, at->dtype), *data = tmp(L);
  int64_t total = 1;
  for (int k = 0; k < at->ndim; k++)
    total *= g->array_shape[k];
  EMIT("%s = inttoptr i64 %lld to %s*", data, (long long)g->value.i, et);
  return constant_geometry(L, at, data, g->array_shape, g->array_strides, total);
}

/* The dynamic shared memory as a 1-d array: as numba-cuda, its length is the size given at
 * launch (the %dynamic_smem_size register, which NVVM has no intrinsic for) over the item
 * size, so len(), bounds and slices see the elements the launch made room for. */
static nbc__lval dynamic_shared_array(nbc__lowerer *L, const nbc__type *at, const char *data) {
  int64_t zero = 0;
  nbc__lval a = fixed_array(L, at, data, &zero, 0);
  const char *aty = ltype(L, at), *bytes = tmp(L), *wide = tmp(L), *count = tmp(L);
  const char *with_count = tmp(L), *with_shape = tmp(L);
  EMIT("%s = call i32 asm sideeffect \"mov.u32 $0, %%dynamic_smem_size;\", \"=r\"()", bytes);
  EMIT("%s = zext i32 %s to i64", wide, bytes);
  EMIT("%s = udiv i64 %s, %zu", count, wide, nbc__type_size(at->dtype));
  EMIT("%s = insertvalue %s %s, i64 %s, 2", with_count, aty, a.v, count);
  EMIT("%s = insertvalue %s %s, i64 %s, 5, 0", with_shape, aty, with_count, count);
  return (nbc__lval){at, with_shape};
}

/* cuda.shared.array / cuda.local.array: a fixed-size buffer wrapped in the array struct
 * (C layout, constant shape and strides, which LLVM folds into the address arithmetic); a
 * local one zero-filled at the function's entry, as numba-cuda does. */
nbc__lval nbc__lower_local_or_shared_array(nbc__lowerer *L, nbc__node *n, const nbc__call *call,
                                           bool shared) {
  const nbc__type *at = call->ret ? call->ret : n->type;
  if (!at || at->kind != NBC__T_ARRAY || !call->shape) {
    nbc__lower_error(L, n, "the shape of a %s array must be a constant",
                     shared ? "shared" : "local");
    return (nbc__lval){at, "zeroinitializer"};
  }
  const char *et = nbc__lower_mtype(L, at->dtype);
  int64_t total = 1;
  for (int k = 0; k < at->ndim; k++)
    total *= call->shape[k];
  const char *data = tmp(L);
  /* the alignment asked for (numba-cuda's alignment=), at least the 16 bytes given anyway */
  long long align = call->alignment > 16 ? (long long)call->alignment : 16;
  if (shared) {
    int id = L->shared_count++;
    const char *g = nbc__arena_printf(L->arena, "@\"_cudapy_smem_%d\"", id);
    if (total == 0) {
      /* Size 0 is numba's way to ask for the dynamic shared memory. */
      nbc__buf_printf(&L->globals, "%s = external addrspace(3) global [0 x %s], align %lld\n",
                      g, et, align);
    } else {
      nbc__buf_printf(&L->globals,
                      "%s = internal addrspace(3) global [%lld x %s] undef, align %lld\n", g,
                      (long long)total, et, align);
    }
    const char *p = tmp(L);
    EMIT("%s = getelementptr [%lld x %s], [%lld x %s] addrspace(3)* %s, i64 0, i64 0", p,
         (long long)total, et, (long long)total, et, g);
    EMIT("%s = addrspacecast %s addrspace(3)* %s to %s*", data, et, p, et);
    if (total == 0) return dynamic_shared_array(L, at, data);
  } else {
    /* records are [size x i8]: their fields' accesses assume the alignment the record's
     * layout gives (lower_record.c, at most 8), which the array must then start on: without
     * an alignment asked for, it is allocated as i64s, whose own alignment that is (an
     * alloca says `align` only when asked, as numba-cuda's, whose tests read the IR) */
    bool records = at->dtype->kind == NBC__T_RECORD;
    bool words = records && !call->alignment;
    long long bytes = (long long)total * (long long)nbc__type_size(at->dtype);
    const char *aty = words ? nbc__arena_printf(L->arena, "[%lld x i64]", (bytes + 7) / 8)
                            : nbc__arena_printf(L->arena, "[%lld x %s]", (long long)total, et);
    int n = L->lmem_count++;
    const char *name = n ? nbc__arena_printf(L->arena, "%%\"_cudapy_lmem.%d\"", n)
                         : "%\"_cudapy_lmem\"";
    const char *slot =
        nbc__lower_alloca_aligned(L, aty, call->alignment ? (int)align : 0, name);
    /* zero-filled where it is allocated, as numba-cuda's cgutils.alloca_once fills it: a
     * kernel that reads an element before writing it sees 0 under both */
    nbc__buf_printf(&L->allocas, "  store %s zeroinitializer, %s* %s\n", aty, aty, slot);
    if (words)
      EMIT("%s = bitcast %s* %s to %s*", data, aty, slot, et);
    else
      EMIT("%s = getelementptr %s, %s* %s, i64 0, i64 0", data, aty, aty, slot);
  }
  return fixed_array(L, at, data, call->shape, total);
}

/* A compare-and-swap loop for the unsigned 64-bit inc/dec numba writes in IR
 * (___numba_atomic_u64_inc/dec): new = inc ? (old < v ? old + 1 : 0)
 *                                       : (old - 1 < v ? old - 1 : v). Returns the old value.
 */
static const char *atomic_u64_incdec(nbc__lowerer *L, const char *ptr, const char *v,
                                     bool inc) {
  const char *pold = nbc__lower_alloca(L, "i64");
  const char *first = tmp(L);
  EMIT("%s = load volatile i64, i64* %s", first, ptr);
  EMIT("store i64 %s, i64* %s", first, pold);
  int attempt = nbc__lower_label(L), done = nbc__lower_label(L);
  nbc__lower_br(L, attempt);
  nbc__lower_block(L, attempt);
  const char *old = tmp(L), *chk = tmp(L), *step = tmp(L), *nv = tmp(L), *cas = tmp(L),
             *got = tmp(L), *again = tmp(L);
  EMIT("%s = load i64, i64* %s", old, pold);
  if (inc) {
    EMIT("%s = icmp ult i64 %s, %s", chk, old, v);
    EMIT("%s = add i64 %s, 1", step, old);
    EMIT("%s = select i1 %s, i64 %s, i64 0", nv, chk, step);
  } else {
    EMIT("%s = add i64 %s, -1", step, old);
    EMIT("%s = icmp ult i64 %s, %s", chk, step, v);
    EMIT("%s = select i1 %s, i64 %s, i64 %s", nv, chk, step, v);
  }
  EMIT("%s = cmpxchg volatile i64* %s, i64 %s, i64 %s monotonic monotonic", cas, ptr, old, nv);
  EMIT("%s = extractvalue {i64, i1} %s, 0", got, cas);
  EMIT("store i64 %s, i64* %s", got, pold);
  EMIT("%s = icmp ne i64 %s, %s", again, got, old);
  nbc__lower_condbr(L, again, attempt, done);
  nbc__lower_block(L, done);
  const char *r = tmp(L);
  EMIT("%s = load i64, i64* %s", r, pold);
  return r;
}

/* cuda.atomic.<op>(array, index, value), cas(array, index, old, value) and
 * compare_and_swap(array, old, value): each returns the old value, as numba-cuda's
 * cudaimpl.py lowers them. */
nbc__lval nbc__lower_atomic(nbc__lowerer *L, nbc__node *n, nbc__builtin which) {
  bool is_cas = which == NBC__B_ATOMIC_CAS;
  bool noidx = is_cas && n->list.count == 3;
  if (n->list.count != (is_cas && !noidx ? 4 : 3)) {
    nbc__lower_error(L, n, "atomic operations take (array, index, value)");
    return (nbc__lval){n->type, "0"};
  }
  nbc__lval arr = nbc__lower_expr(L, n->list.items[0]);
  if (!arr.type || arr.type->kind != NBC__T_ARRAY) {
    nbc__lower_error(L, n->list.items[0],
                     "the first argument of an atomic operation must be an array");
    return (nbc__lval){n->type, "0"};
  }
  const char *ptr;
  if (noidx) {
    ptr = nbc__lower_array_field(L, arr, 4, -1).v; /* element 0 of a 1-d array */
  } else { /* an integer, a tuple display, or a tuple value (`bin = (tx, ty)`) */
    ptr = hint_element_ptr(L, n, arr, n->list.items[1], false);
  }
  if (!ptr) return (nbc__lval){n->type, "0"};
  const nbc__type *dt = arr.type->dtype;
  const char *ty = ltype(L, dt);
  nbc__lval v = nbc__lower_convert(L, nbc__lower_expr(L, n->list.items[n->list.count - 1]), dt);
  const char *x = tmp(L);
  if (is_cas) {
    nbc__lval old =
        nbc__lower_convert(L, nbc__lower_expr(L, n->list.items[n->list.count - 2]), dt);
    const char *pair = tmp(L);
    EMIT("%s = cmpxchg %s* %s, %s %s, %s %s monotonic monotonic", pair, ty, ptr, ty, old.v, ty,
         v.v);
    EMIT("%s = extractvalue {%s, i1} %s, 0", x, ty, pair);
    return (nbc__lval){dt, x};
  }
  if (which == NBC__B_ATOMIC_INC || which == NBC__B_ATOMIC_DEC) {
    bool inc = which == NBC__B_ATOMIC_INC;
    if (dt->kind == NBC__T_UINT64) return (nbc__lval){dt, atomic_u64_incdec(L, ptr, v.v, inc)};
    const char *fn =
        inc ? "llvm.nvvm.atomic.load.inc.32.p0i32" : "llvm.nvvm.atomic.load.dec.32.p0i32";
    return (nbc__lval){
        dt, nbc__lower_call_fn(L, "i32", fn, "i32*, i32",
                               nbc__arena_printf(L->arena, "i32* %s, i32 %s", ptr, v.v))};
  }
  if (which == NBC__B_ATOMIC_NANMAX) which = is_int(dt) ? NBC__B_ATOMIC_MAX : which;
  if (which == NBC__B_ATOMIC_NANMIN) which = is_int(dt) ? NBC__B_ATOMIC_MIN : which;
  if (is_int(dt)) {
    bool sgn = nbc__type_is_signed(dt);
    const char *op = which == NBC__B_ATOMIC_ADD   ? "add"
                     : which == NBC__B_ATOMIC_SUB ? "sub"
                     : which == NBC__B_ATOMIC_MAX ? (sgn ? "max" : "umax")
                     : which == NBC__B_ATOMIC_MIN ? (sgn ? "min" : "umin")
                     : which == NBC__B_ATOMIC_AND ? "and"
                     : which == NBC__B_ATOMIC_OR  ? "or"
                     : which == NBC__B_ATOMIC_XOR ? "xor"
                                                  : "xchg";
    /* add/sub/max/min keep their seq_cst; the operations numba added later are monotonic
     * as numba-cuda emits them. */
    bool seq = which == NBC__B_ATOMIC_ADD || which == NBC__B_ATOMIC_SUB ||
               which == NBC__B_ATOMIC_MAX || which == NBC__B_ATOMIC_MIN;
    EMIT("%s = atomicrmw %s %s* %s, %s %s %s", x, op, ty, ptr, ty, v.v,
         seq ? "seq_cst" : "monotonic");
    return (nbc__lval){dt, x};
  }
  if (dt->kind != NBC__T_FLOAT32 && dt->kind != NBC__T_FLOAT64) {
    nbc__lower_error(L, n, "atomic operations on %s arrays are not supported",
                     nbc__type_name(L->ctx, dt));
    return (nbc__lval){dt, "0"};
  }
  const char *sfx = dt->kind == NBC__T_FLOAT32 ? "f32.p0f32" : "f64.p0f64";
  if (which == NBC__B_ATOMIC_ADD || which == NBC__B_ATOMIC_SUB) {
    const char *val = v.v;
    if (which == NBC__B_ATOMIC_SUB) {
      val = tmp(L);
      EMIT("%s = fsub %s %s, %s", val, ty, nbc__lower_const_float(L, dt, -0.0), v.v);
    }
    const char *name = nbc__arena_printf(L->arena, "llvm.nvvm.atomic.load.add.%s", sfx);
    return (nbc__lval){
        dt, nbc__lower_call_fn(L, ty, name, nbc__arena_printf(L->arena, "%s*, %s", ty, ty),
                               nbc__arena_printf(L->arena, "%s* %s, %s %s", ty, ptr, ty, val))};
  }
  if (which != NBC__B_ATOMIC_MAX && which != NBC__B_ATOMIC_MIN &&
      which != NBC__B_ATOMIC_NANMAX && which != NBC__B_ATOMIC_NANMIN) {
    nbc__lower_error(L, n, "this atomic operation on %s arrays is not supported",
                     nbc__type_name(L->ctx, dt));
    return (nbc__lval){dt, "0"};
  }
  /* Float max/min: numba's compare-and-swap loop. It returns early when either value is a
   * NaN and retries while the stored value is still smaller (max) / larger (min). nanmax /
   * nanmin return early only when the value is a NaN and also replace a stored NaN (the
   * unordered comparisons ult / ugt). */
  bool is_max = which == NBC__B_ATOMIC_MAX || which == NBC__B_ATOMIC_NANMAX;
  bool nan = which == NBC__B_ATOMIC_NANMAX || which == NBC__B_ATOMIC_NANMIN;
  const char *ity = dt->kind == NBC__T_FLOAT32 ? "i32" : "i64";
  const char *pold = nbc__lower_alloca(L, ty);
  const char *first = tmp(L), *early = tmp(L);
  EMIT("%s = load volatile %s, %s* %s", first, ty, ty, ptr);
  EMIT("store %s %s, %s* %s", ty, first, ty, pold);
  EMIT("%s = fcmp uno %s %s, %s", early, ty, v.v, nan ? v.v : first);
  int check = nbc__lower_label(L), attempt = nbc__lower_label(L), done = nbc__lower_label(L);
  nbc__lower_condbr(L, early, done, check);
  nbc__lower_block(L, check);
  const char *old = tmp(L), *cmp = tmp(L);
  EMIT("%s = load %s, %s* %s", old, ty, ty, pold);
  EMIT("%s = fcmp %s %s %s, %s", cmp, nan ? (is_max ? "ult" : "ugt") : (is_max ? "olt" : "ogt"),
       ty, old, v.v);
  nbc__lower_condbr(L, cmp, attempt, done);
  nbc__lower_block(L, attempt);
  const char *io = tmp(L), *ip = tmp(L), *in = tmp(L), *cas = tmp(L), *got = tmp(L),
             *dgot = tmp(L);
  EMIT("%s = bitcast %s %s to %s", io, ty, old, ity);
  EMIT("%s = bitcast %s* %s to %s*", ip, ty, ptr, ity);
  EMIT("%s = bitcast %s %s to %s", in, ty, v.v, ity);
  EMIT("%s = cmpxchg volatile %s* %s, %s %s, %s %s monotonic monotonic", cas, ity, ip, ity, io,
       ity, in);
  EMIT("%s = extractvalue {%s, i1} %s, 0", got, ity, cas);
  EMIT("%s = bitcast %s %s to %s", dgot, ity, got, ty);
  EMIT("store %s %s, %s* %s", ty, dgot, ty, pold);
  nbc__lower_br(L, check);
  nbc__lower_block(L, done);
  return (nbc__lval){dt, first};
}

/* ------------------------------------------------ loads and stores with a cache hint ---- */

/* The element pointer for an index argument: an integer, a tuple display of integers or a
 * tuple value (cuda.grid(2), a variable), each index wrapped around as numba's
 * get_item_pointer(wraparound=True) does unless the call says all are non-negative. */
static const char *hint_element_ptr(nbc__lowerer *L, nbc__node *where, nbc__lval arr,
                                    nbc__node *ix, bool nonneg) {
  const nbc__type *it = ix->type;
  if (ix->kind == NBC__N_TUPLE || !it || it->kind != NBC__T_TUPLE) {
    nbc__node **idx;
    int count;
    index_list(ix, &idx, &count);
    return element_ptr(L, where, arr, idx, count, nonneg);
  }
  nbc__lval tup = nbc__lower_expr(L, ix);
  if (tup.type->count != arr.type->ndim) {
    nbc__lower_error(L, where, "Expected %d indices, got %d", arr.type->ndim, tup.type->count);
    return NULL;
  }
  const char **iv = nbc__arena_alloc(L->arena, sizeof *iv * (size_t)(tup.type->count + 1));
  if (!iv) {
    nbc__diag_oom(L->ctx);
    return NULL;
  }
  for (int k = 0; k < tup.type->count; k++)
    iv[k] = wrap_index(L, arr, nbc__lower_tuple_at(L, tup, k), k, nonneg);
  return element_address(L, arr, iv);
}

/* cuda.ld<op>(array, i) / cuda.st<op>(array, i, value) as numba-cuda's cache_hints.py
 * emits them: inline asm `ld.global.<op>.b<bits> $0, [$1];` with "=r,l" ("=h,l" for 16
 * bits, "=l,l" for 64) and `st.global.<op>.b<bits> [$0], $1;` with "l,<r|h|l>,~{memory}"
 * on the element's address, found as a[i] (or a CPointer's p[i]) finds it. Unlike numba,
 * the asm operand is always the integer type its constraint names (an i32 for 8-bit
 * elements, truncated or zero-extended; i16 for float16, which lives in an i16 anyway) and
 * floats are bitcast to and from it: libNVVM is strict about operand types. */
nbc__lval nbc__lower_cache_hint(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  const char *op = call->name + 5; /* "ldcg" */
  bool store = op[0] == 's';
  nbc__node *an = nbc__call_arg(n, 0, "array"), *ix = nbc__call_arg(n, 1, "i");
  nbc__node *vn = store ? nbc__call_arg(n, 2, "value") : NULL;
  const nbc__type *rt = store ? T(NBC__T_NONE) : call->ret;
  nbc__lval arr = an ? nbc__lower_expr(L, an) : (nbc__lval){NULL, NULL};
  bool pointer = arr.type && arr.type->kind == NBC__T_POINTER;
  if (!arr.type || (arr.type->kind != NBC__T_ARRAY && !pointer) || !ix || (store && !vn)) {
    nbc__lower_error(L, n, "%s takes (array, i%s)", op, store ? ", value" : "");
    return (nbc__lval){rt, nbc__lower_zero(L, rt)};
  }
  const char *ptr = pointer ? pointer_element(L, arr, ix)
                            : hint_element_ptr(L, n, arr, ix, call->nonneg);
  if (!ptr) return (nbc__lval){rt, nbc__lower_zero(L, rt)};
  const nbc__type *dt = arr.type->dtype;
  const char *et = nbc__lower_mtype(L, dt), *ty = ltype(L, dt);
  int bits = nbc__type_bits(dt);
  const char *ity = bits == 64 ? "i64" : bits == 16 ? "i16" : "i32";
  const char *con = bits == 64 ? "l" : bits == 16 ? "h" : "r";
  const char *widen = bits == 8 ? "zext" : is_float(dt) && bits > 16 ? "bitcast" : NULL;
  if (store) {
    nbc__lval v = nbc__lower_convert(L, nbc__lower_expr(L, vn), dt);
    const char *iv = v.v;
    if (widen) {
      iv = tmp(L);
      EMIT("%s = %s %s %s to %s", iv, widen, ty, v.v, ity);
    }
    EMIT("call void asm \"st.global.%s.b%d [$0], $1;\", \"l,%s,~{memory}\"(%s* %s, %s %s)",
         op + 2, bits, con, et, ptr, ity, iv);
    return (nbc__lval){rt, "null"};
  }
  const char *r = tmp(L);
  EMIT("%s = call %s asm \"ld.global.%s.b%d $0, [$1];\", \"=%s,l\"(%s* %s)", r, ity, op + 2,
       bits, con, et, ptr);
  if (!widen) return (nbc__lval){dt, r};
  const char *x = tmp(L);
  EMIT("%s = %s %s %s to %s", x, bits == 8 ? "trunc" : "bitcast", ity, r, ty);
  return (nbc__lval){dt, x};
}
