/* infer_index.c — typing of subscripts and record fields, split from infer.c: array
 * indexing (integers, tuples of integers, a variable holding a tuple) and basic indexing that
 * makes a view (slices, partial indexing) with numba's layouts, tuple items (constant, or at
 * run time for a homogeneous tuple) and constant tuple slices, and a record's fields
 * (rec.x, rec['x']). Assignments to these targets are typed in infer.c with the same
 * functions. Also the non-negative index analysis, which lets lower_array.c skip the
 * wraparound of an index known never to be negative (cuda.grid, range with non-negative
 * bounds, sums and products of those).
 */
#include <string.h>

#include "compiler/infer.h"

/* The type of field `name` of record type r (numba's message when it has none). */
const nbc__type *nbc__infer_record_field(infer *I, nbc__node *n, const nbc__type *r,
                                     const char *name) {
  int i = nbc__type_record_field(r, name, strlen(name));
  if (i < 0)
    return TYPING(I, n, "Unknown attribute '%s' of type %s", name, nbc__infer_tname(I, r)),
           NULL;
  /* a nested record or array of a read-only record is read-only too */
  return r->readonly ? nbc__type_readonly(I->ctx, r->items[i]) : r->items[i];
}

/* rec['name']: the field's type; the index must be a string constant (numba's literal), or
 * an integer constant, the field's position (numba's StaticGetItemLiteralRecord: rec[0] is
 * the first field, a negative one counts from the end as a list of the names would): the
 * index becomes that field's name. */
const nbc__type *nbc__infer_record_subscript(infer *I, nbc__node *n, const nbc__type *r) {
  int64_t pos;
  if (n->b->kind != NBC__N_STR && nbc__infer_const_int(I, n->b, &pos)) {
    if (pos >= r->count || pos < -(int64_t)r->count)
      return nbc__infer_error(I, n->b, NBC_TYPING_ERROR, "Requested index %lld is out of range",
                              (long long)pos),
             NULL;
    n->b->kind = NBC__N_STR;
    n->b->str = r->field_names[pos < 0 ? pos + r->count : pos];
  }
  if (n->b->kind != NBC__N_STR)
    return TYPING(I, n->b, "a record is indexed by a field name given as a string constant "
                  "(rec['x']) or the field's position as an integer constant, not by a "
                  "run-time value"),
           NULL;
  n->b->type = T(NBC__T_NONE); /* the name has no value of its own */
  return nbc__infer_record_field(I, n, r, n->b->str);
}

/* Types one array index (an integer) and converts it to intp. A 0-d array of integers is
 * the integer it holds (numba's "0-d array used as integer index"): the node becomes its
 * read, idx[()]. */
static bool index_item(infer *I, nbc__node *idx) {
  const nbc__type *t = nbc__infer_expr(I, idx);
  if (!t) return false;
  if (t->kind == NBC__T_ARRAY && t->ndim == 0 && nbc__type_is_int(t->dtype)) {
    nbc__node *held = nbc__infer_alloc(I, sizeof *held);
    nbc__node *empty = nbc__infer_alloc(I, sizeof *empty);
    if (!held || !empty) return false;
    *held = *idx;
    *empty = (nbc__node){.kind = NBC__N_TUPLE, .tok = idx->tok, .var = -1};
    *idx = (nbc__node){.kind = NBC__N_SUBSCRIPT, .tok = held->tok, .a = held, .b = empty,
                       .var = -1};
    if (!(t = nbc__infer_expr(I, idx))) return false;
  }
  if (!nbc__type_is_int(t) && t->kind != NBC__T_BOOL) {
    return TYPING(I, idx, "array index must be an integer, not %s", nbc__infer_tname(I, t));
  }
  nbc__infer_cast(idx, T(NBC__T_INT64));
  return true;
}

/* One bound of a slice (start, stop or step): absent, None, or an integer made intp. */
static bool slice_bound(infer *I, nbc__node *b) {
  if (!b || b->kind == NBC__N_NONE) return true;
  const nbc__type *t = nbc__infer_expr(I, b);
  if (!t) return false;
  if (!nbc__type_is_int(t) && t->kind != NBC__T_BOOL)
    return TYPING(I, b, "slice indices must be integers or None, not %s",
                  nbc__infer_tname(I, t));
  nbc__infer_cast(b, T(NBC__T_INT64));
  return true;
}

/* One slice of an array index: its bounds typed (intp), a constant zero step refused; a
 * slice has no value of its own (type none). */
static bool slice_item(infer *I, nbc__node *it) {
  if (!slice_bound(I, it->a) || !slice_bound(I, it->b) || !slice_bound(I, it->c)) return false;
  int64_t step;
  if (it->c && nbc__infer_const_int(I, it->c, &step) && step == 0)
    return TYPING(I, it->c, "slice step cannot be zero");
  it->type = T(NBC__T_NONE);
  return true;
}

/* Whether an index item keeps its array contiguous (numba's keeps_contiguity): an integer,
 * or the innermost index being a slice without a step. */
static bool keeps_contiguity(const nbc__node *item, bool innermost) {
  if (item->kind != NBC__N_SLICE) return true;
  return innermost && (!item->c || item->c->kind == NBC__N_NONE);
}

static bool check_contiguity(nbc__node *const *items, int count, bool reversed) {
  for (int k = 0; k < count; k++) {
    const nbc__node *it = items[reversed ? count - 1 - k : k];
    if (!keeps_contiguity(it, k == count - 1)) return false;
  }
  return true;
}

/* Basic indexing that makes a view (numba's get_array_index_type): slices, and fewer
 * integers than dimensions (the trailing ones are whole). The view has one dimension per
 * slice and per dimension not indexed, the element type and read-only-ness of at, and
 * numba's layout: a C array stays C when every index but the innermost is an integer and
 * the innermost has no step; an F array stays F only when every dimension is indexed and
 * the same holds from the other end. */
static const nbc__type *array_view(infer *I, nbc__node *b, const nbc__type *at,
                                   nbc__node *const *items, int count) {
  if (count > at->ndim)
    return TYPING(I, b, "cannot index %s with %d indices", nbc__infer_tname(I, at), count), NULL;
  int nd = at->ndim;
  for (int k = 0; k < count; k++) {
    nbc__node *it = items[k];
    if (it->kind != NBC__N_SLICE) {
      if (!index_item(I, it)) return NULL;
      nd--;
      continue;
    }
    if (!slice_item(I, it)) return NULL;
  }
  char layout = at->layout;
  if (layout == 'C' && !check_contiguity(items, count, false)) layout = 'A';
  if (layout == 'F' && (count != at->ndim || !check_contiguity(items, count, true)))
    layout = 'A';
  nbc__type *vt = (nbc__type *)nbc__type_array(I->ctx, at->dtype, nd, layout);
  if (vt) vt->readonly = at->readonly;
  return vt;
}

/* numba's contiguity check of the indices (in the array's order, or from the other end for
 * F), the ellipsis and None left out as numba leaves them out. */
static bool contiguity_without_none(nbc__node *const *items, int count, bool reversed) {
  nbc__node *kept[64];
  int n = 0;
  for (int k = 0; k < count && n < 64; k++)
    if (!nbc__index_is_newaxis(items[k]) && items[k]->kind != NBC__N_ELLIPSIS)
      kept[n++] = items[k];
  return check_contiguity(kept, n, reversed);
}

const nbc__type *nbc__infer_array_index(infer *I, nbc__node *n, const nbc__type *at,
                                        nbc__node *b);

/* Basic indexing with an Ellipsis or None (numba's get_array_index_type): `...` stands for
 * as many whole dimensions as the other indices leave (one ellipsis at most), None
 * (np.newaxis) adds a dimension of length 1 (stride 0). The layout is numba's, decided by
 * the indices left and right of the ellipsis: a C array stays C when nothing follows the
 * ellipsis and the indices before it keep contiguity, an F array stays F when nothing
 * precedes it and the indices after it keep contiguity from the other end; with every
 * dimension indexed the ellipsis's place does not matter. Indexing every dimension with
 * integers gives the element, as without the ellipsis (numba's result type too). */
static const nbc__type *special_index(infer *I, nbc__node *n, const nbc__type *at,
                                      nbc__node *b, nbc__node *const *items, int count) {
  int ell = -1, nnew = 0, nint = 0;
  for (int k = 0; k < count; k++) {
    nbc__node *it = items[k];
    if (it->kind == NBC__N_ELLIPSIS) {
      if (ell >= 0)
        return TYPING(I, it, "Only one ellipsis allowed in array indices"), NULL;
      ell = k;
      it->type = T(NBC__T_NONE);
    } else if (it->kind == NBC__N_SLICE) {
      if (!slice_item(I, it)) return NULL;
    } else {
      const nbc__type *t = nbc__infer_expr(I, it);
      if (!t) return NULL;
      if (t->kind == NBC__T_NONE) {
        nnew++;
        continue;
      }
      if (!index_item(I, it)) return NULL;
      nint++;
    }
  }
  int nidx = count - (ell >= 0) - nnew;
  if (nidx > at->ndim)
    return TYPING(I, b, "cannot index %s with %d indices", nbc__infer_tname(I, at), nidx), NULL;
  int nd = at->ndim - nint + nnew;
  if (nidx == at->ndim && nd == 0) { /* every dimension an integer: the element */
    nbc__node **rest = nbc__infer_alloc(I, sizeof *rest * (size_t)count);
    if (!rest) return NULL;
    int m = 0;
    for (int k = 0; k < count; k++)
      if (k != ell) rest[m++] = items[k];
    b->list.items = rest;
    b->list.count = m;
    return nbc__infer_array_index(I, n, at, b);
  }
  if (nd > 32) return UNSUPPORTED(I, b, "arrays of more than 32 dimensions"), NULL;
  int split = ell >= 0 ? ell : count; /* items[0..split) left, (split..count) right */
  bool all = nidx == at->ndim;
  char layout = at->layout;
  if (layout == 'C' &&
      ((!all && split < count - 1) || !contiguity_without_none(items, count, false)))
    layout = 'A';
  if (layout == 'F' && ((!all && split > 0) || !contiguity_without_none(items, count, true)))
    layout = 'A';
  nbc__type *vt = (nbc__type *)nbc__type_array(I->ctx, at->dtype, nd, layout);
  if (vt) vt->readonly = at->readonly;
  n->info = NULL;
  if (b->kind == NBC__N_TUPLE) b->type = T(NBC__T_NONE);
  return vt;
}

/* Indexes array type at with index node b (ints or a tuple of ints, or slices); returns the
 * dtype, or the view's array type for basic indexing that leaves dimensions. */
/* A[idx] with idx a variable holding a tuple (numba indexes with its items): the index becomes
 * the tuple display (idx[0], idx[1], ...), each item read from the variable. */
static nbc__node *spread_tuple_index(infer *I, nbc__node *b) {
  if (b->kind != NBC__N_NAME) return b;
  const nbc__type *t = nbc__infer_expr(I, b);
  if (!t || t->kind != NBC__T_TUPLE || t->count < 1 || t->count > 32) return b;
  nbc__node *tuple = nbc__infer_alloc(I, sizeof *tuple);
  nbc__node **items = nbc__infer_alloc(I, sizeof *items * (size_t)t->count);
  if (!tuple || !items) return b;
  *tuple = (nbc__node){.kind = NBC__N_TUPLE, .tok = b->tok, .var = -1};
  for (int k = 0; k < t->count; k++) {
    nbc__node *sub = nbc__infer_alloc(I, sizeof *sub), *ix = nbc__infer_alloc(I, sizeof *ix);
    nbc__node *name = nbc__node_clone(I->ctx, b);
    if (!sub || !ix || !name) return b;
    *ix = (nbc__node){.kind = NBC__N_INT, .tok = b->tok, .var = -1};
    ix->value.i = k;
    *sub = (nbc__node){.kind = NBC__N_SUBSCRIPT, .tok = b->tok, .a = name, .b = ix, .var = -1};
    items[k] = sub;
  }
  tuple->list.items = items;
  tuple->list.count = t->count;
  return tuple;
}

const nbc__type *nbc__infer_array_index(infer *I, nbc__node *n, const nbc__type *at, nbc__node *b) {
  if (b->kind == NBC__N_NAME) b = n->b = spread_tuple_index(I, b);
  int count = b->kind == NBC__N_TUPLE ? b->list.count : 1;
  nbc__node *const *items = b->kind == NBC__N_TUPLE ? b->list.items : &b;
  bool sliced = false;
  for (int k = 0; k < count; k++) {
    if (items[k]->kind == NBC__N_SLICE) sliced = true;
    if (items[k]->kind == NBC__N_ELLIPSIS || items[k]->kind == NBC__N_NONE ||
        (items[k]->kind == NBC__N_ATTR && strcmp(items[k]->str, "newaxis") == 0))
      return special_index(I, n, at, b, items, count);
  }
  if (sliced || count < at->ndim) {
    n->info = NULL;
    const nbc__type *vt = array_view(I, b, at, items, count);
    if (vt && b->kind == NBC__N_TUPLE) b->type = T(NBC__T_NONE);
    return vt;
  }
  if (count != at->ndim) /* numba's message */
    return TYPING(I, b, "cannot index %s with %d indices", nbc__infer_tname(I, at), count), NULL;
  bool nonneg = true;
  if (b->kind == NBC__N_TUPLE) {
    const nbc__type *items[32];
    for (int i = 0; i < count; i++) {
      if (!index_item(I, b->list.items[i])) return NULL;
      items[i < 32 ? i : 31] = T(NBC__T_INT64);
      if (!nbc__infer_nonneg(I, b->list.items[i])) nonneg = false;
    }
    b->type = nbc__type_tuple(I->ctx, items, count > 32 ? 32 : count);
  } else {
    if (!index_item(I, b)) return NULL;
    nonneg = nbc__infer_nonneg(I, b);
  }
  n->info = nonneg && I->final ? (void *)n : NULL;
  return at->readonly ? nbc__type_readonly(I->ctx, at->dtype) : at->dtype;
}

/* One constant bound of a tuple slice (absent or None: *pset false). */
static bool slice_const(infer *I, nbc__node *b, int64_t *pv, bool *pset) {
  *pset = b && b->kind != NBC__N_NONE;
  if (!*pset) return true;
  if (!nbc__infer_const_int(I, b, pv))
    return UNSUPPORTED(I, b, "a tuple is sliced with constant integers only"), false;
  nbc__infer_expr(I, b);
  return true;
}

/* t[start:stop:step] of a tuple with constant bounds, Python's slice semantics: the new
 * tuple's type; n->info the items taken (nbc__tuple_slice, for lower_array.c). */
static const nbc__type *tuple_slice(infer *I, nbc__node *n, const nbc__type *t) {
  nbc__node *s = n->b;
  int64_t start = 0, stop = 0, step = 1;
  bool has_start, has_stop, has_step;
  if (!slice_const(I, s->a, &start, &has_start) || !slice_const(I, s->b, &stop, &has_stop) ||
      !slice_const(I, s->c, &step, &has_step))
    return NULL;
  if (step == 0) return TYPING(I, s, "slice step cannot be zero"), NULL;
  int64_t len = t->count;
  int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? len : len - 1;
  if (!has_start) start = step > 0 ? 0 : len - 1;
  else if (start < 0) start = start + len < lo ? lo : start + len;
  else if (start > hi) start = hi;
  if (!has_stop) stop = step > 0 ? len : -1;
  else if (stop < 0) stop = stop + len < lo ? lo : stop + len;
  else if (stop > hi) stop = hi;
  nbc__tuple_slice *ts = nbc__infer_alloc(I, sizeof *ts);
  if (!ts) return NULL;
  ts->count = 0;
  const nbc__type *items[64];
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    items[ts->count] = t->items[i];
    ts->index[ts->count++] = (int)i;
  }
  n->info = ts;
  return nbc__type_tuple(I->ctx, items, ts->count);
}

const nbc__type *nbc__infer_subscript(infer *I, nbc__node *n) {
  const nbc__type *o = nbc__infer_expr(I, n->a);
  if (!o) return NULL;
  if (o->kind == NBC__T_ARRAY) return nbc__infer_array_index(I, n, o, n->b);
  if (o->kind == NBC__T_FLAT) { /* a.flat[i]: the i-th element in C order */
    if (n->b->kind == NBC__N_SLICE || n->b->kind == NBC__N_TUPLE)
      return UNSUPPORTED(I, n->b, "a.flat is indexed by one integer in a kernel"), NULL;
    if (!index_item(I, n->b)) return NULL;
    return o->dtype->dtype;
  }
  if (o->kind == NBC__T_RANGE && o->dtype) { /* r[i]: start + i * step (desugar.c's loops) */
    if (!index_item(I, n->b)) return NULL;
    nbc__infer_cast(n->b, o->dtype);
    return o->dtype;
  }
  if (o->kind == NBC__T_ENUM_CLASS) { /* Color["red"]: the member named by a string */
    if (n->b->kind != NBC__N_STR)
      return TYPING(I, n->b, "an enum class is indexed by a member's name (a string "
                             "constant)"),
             NULL;
    return nbc__infer_enum_lookup(I, n, n->a, o, n->b->str);
  }
  if (o->kind == NBC__T_POINTER) { /* numba's CPointer: p[i], an integer index */
    if (n->b->kind == NBC__N_SLICE || n->b->kind == NBC__N_TUPLE)
      return TYPING(I, n->b, "a pointer (%s) is indexed by one integer",
                    nbc__infer_tname(I, o)),
             NULL;
    if (!index_item(I, n->b)) return NULL;
    return o->dtype;
  }
  if (o->kind == NBC__T_RECORD) return nbc__infer_record_subscript(I, n, o);
  if (o->kind == NBC__T_TUPLE && n->b->kind == NBC__N_SLICE) return tuple_slice(I, n, o);
  if (o->kind == NBC__T_TUPLE) {
    int64_t k;
    if (!nbc__infer_const_int(I, n->b, &k)) {
      /* numba's getitem of a UniTuple at a run-time index (lower_array.c: out of range
       * raises IndexError); other tuples need a constant one */
      const nbc__type *it = nbc__infer_expr(I, n->b);
      if (!it) return NULL;
      bool uniform = o->count > 0;
      for (int i = 1; i < o->count; i++)
        uniform = uniform && nbc__type_equal(o->items[i], o->items[0]);
      if (!uniform)
        return TYPING(I, n->b, "a tuple of %s needs a constant index (numba: getitem(%s, %s))",
                      o->count ? "mixed types" : "no items", nbc__infer_tname(I, o),
                      nbc__infer_tname(I, it)),
               NULL;
      if (!nbc__type_is_int(it) && it->kind != NBC__T_BOOL)
        return TYPING(I, n->b, "tuple indices must be integers, not %s",
                      nbc__infer_tname(I, it)),
               NULL;
      nbc__infer_cast(n->b, T(NBC__T_INT64));
      return o->items[0];
    }
    nbc__infer_expr(I, n->b);
    if (k < 0) k += o->count;
    if (k < 0 || k >= o->count) return TYPING(I, n->b, "tuple index out of range"), NULL;
    return o->items[k];
  }
  nbc__infer_expr(I, n->b);
  TYPING(I, n, "'%s' object is not subscriptable", nbc__infer_tname(I, o));
  return NULL;
}

/* ---------------------------------------------------- non-negative index analysis */

bool nbc__infer_nonneg(infer *I, const nbc__node *n) {
  if (!n || !I->defs) return false;
  int64_t v;
  switch (n->kind) {
  case NBC__N_INT:
    return !n->big && n->value.i >= 0;
  case NBC__N_BOOL:
    return true;
  case NBC__N_NAME:
    if (n->var >= 0) return I->defs[n->var].nonneg;
    if (n->info && ((const nbc__global *)n->info)->g.kind == NBC_GLOBAL_CUDA_NAME)
      return n->type && nbc__type_is_int(n->type); /* laneid, warpsize */
    return nbc__infer_const_int(I, n, &v) && v >= 0;
  case NBC__N_ATTR:
    /* cuda.threadIdx.x etc. are special registers (never negative); .size/.ndim too. */
    if (n->a && n->a->type && n->a->type->kind == NBC__T_MODULE)
      return n->type && nbc__type_is_int(n->type);
    return n->a && is_kind(n->a->type, NBC__T_ARRAY) &&
           (strcmp(n->str, "size") == 0 || strcmp(n->str, "ndim") == 0);
  case NBC__N_SUBSCRIPT: /* a.shape[k] */
    return n->a && n->a->kind == NBC__N_ATTR && n->a->str && strcmp(n->a->str, "shape") == 0 &&
           n->a->a && is_kind(n->a->a->type, NBC__T_ARRAY);
  case NBC__N_CALL: {
    const nbc__call *c = n->info;
    if (!c) return false;
    if (c->builtin == NBC__B_CUDA_GRID || c->builtin == NBC__B_CUDA_GRIDSIZE ||
        c->builtin == NBC__B_LEN)
      return is_kind(c->ret, NBC__T_INT64);
    return false;
  }
  case NBC__N_BINOP:
    if (!n->type || !nbc__type_is_int(n->type)) return false;
    if (n->op == NBC__OP_ADD || n->op == NBC__OP_MUL)
      return nbc__infer_nonneg(I, n->a) && nbc__infer_nonneg(I, n->b);
    if (n->op == NBC__OP_FLOORDIV || n->op == NBC__OP_MOD)
      return nbc__infer_nonneg(I, n->a) && nbc__infer_const_int(I, n->b, &v) && v > 0;
    return false;
  default:
    return false;
  }
}

/* Records what is assigned to each variable (only the first walk after the fixed point
 * reads these). */
static void def_target(infer *I, const nbc__node *t, const nbc__node *value, int kind) {
  if (!t) return;
  if (t->kind == NBC__N_NAME) {
    int v = nbc__infer_var_find(I, t->str);
    if (v < 0) return;
    I->defs[v].ndefs++;
    I->defs[v].def = value;
    I->defs[v].def_kind = kind;
  } else if (t->kind == NBC__N_TUPLE || t->kind == NBC__N_LIST) {
    /* Unpacking cuda.grid(n) gives non-negative elements; anything else is not tracked. */
    bool grid = value && value->kind == NBC__N_CALL && value->info &&
                ((const nbc__call *)value->info)->builtin == NBC__B_CUDA_GRID;
    for (int i = 0; i < t->list.count; i++)
      def_target(I, t->list.items[i], value, grid ? 2 : 3);
  }
}

void nbc__infer_collect_defs(infer *I, const nbc__list *body) {
  for (int i = 0; i < body->count; i++) {
    const nbc__node *s = body->items[i];
    switch (s->kind) {
    case NBC__N_ASSIGN:
      for (int k = 0; k < s->list.count; k++)
        def_target(I, s->list.items[k], s->a, 0);
      break;
    case NBC__N_AUGASSIGN:
      def_target(I, s->a, NULL, 3);
      def_target(I, s->a, NULL, 3);
      break;
    case NBC__N_FOR:
      def_target(I, s->a, s->b, 1);
      nbc__infer_collect_defs(I, &s->body);
      nbc__infer_collect_defs(I, &s->orelse);
      break;
    case NBC__N_IF:
    case NBC__N_WHILE:
      nbc__infer_collect_defs(I, &s->body);
      nbc__infer_collect_defs(I, &s->orelse);
      break;
    default:
      break;
    }
  }
}

/* Least fixed point: a variable is non-negative when its single definition is. */
void nbc__infer_nonneg_analysis(infer *I) {
  for (int v = 0; v < I->fn->nvars; v++)
    I->defs[v].nonneg = false;
  bool changed = true;
  while (changed) {
    changed = false;
    for (int v = 0; v < I->fn->nvars; v++) {
      vardef *d = &I->defs[v];
      if (d->nonneg || d->ndefs != 1 || I->fn->vars[v].is_param) continue;
      if (!nbc__type_is_int(I->fn->vars[v].type)) continue;
      bool nn = false;
      if (d->def_kind == 0)
        nn = nbc__infer_nonneg(I, d->def);
      else if (d->def_kind == 2)
        nn = true;
      else if (d->def_kind == 1 && d->def && d->def->kind == NBC__N_CALL) {
        /* range(stop) / range(start, stop) / range(start, stop, step > 0 constant). */
        const nbc__node *r = d->def;
        int64_t step;
        if (r->list.count == 1)
          nn = true;
        else if (r->list.count == 2)
          nn = nbc__infer_nonneg(I, r->list.items[0]);
        else if (r->list.count == 3)
          nn = nbc__infer_nonneg(I, r->list.items[0]) &&
               ((nbc__infer_const_int(I, r->list.items[2], &step) && step > 0) ||
                nbc__infer_nonneg(I, r->list.items[2]));
        /* A step that is non-negative but zero would not loop: still never negative. */
      }
      if (nn) {
        d->nonneg = true;
        changed = true;
      }
    }
  }
}
