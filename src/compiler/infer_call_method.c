/* infer_call_method.c — calls of array methods and of what computes as one: a.reshape,
 * a.view, a.transpose(axes), a.fill, operator.setitem, and the reductions (a.sum(), np.sum(a),
 * ...) as calls of arraymath.c's generated functions for the array's type.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/infer.h"

/* numba's resolve_reshape: a contiguous (C or F) array takes integers or one tuple of them,
 * and gives a view of as many dimensions in its own layout. */
const nbc__type *nbc__infer_call_method_reshape(infer *I, nbc__node *n, const nbc__type *at,
                                                const nbc__type **types, int nargs) {
  for (int i = 0; i < nargs; i++)
    if (n->list.items[i]->kind == NBC__N_KEYWORD)
      return TYPING(I, n, "reshape() takes no keyword arguments"), NULL;
  if (at->layout != 'C' && at->layout != 'F')
    return TYPING(I, n, "reshape() supports contiguous array only (%s)",
                  nbc__infer_tname(I, at)),
           NULL;
  if (nargs == 0) return TYPING(I, n, "reshape() take at least one arg"), NULL;
  int ndim = nargs;
  if (nargs == 1 && types[0]->kind == NBC__T_TUPLE) {
    ndim = types[0]->count;
    for (int k = 0; k < ndim; k++)
      if (!nbc__type_is_int(types[0]->items[k]))
        return TYPING(I, n, "reshape() arg cannot be %s", nbc__infer_tname(I, types[0])), NULL;
  } else {
    for (int i = 0; i < nargs; i++)
      if (!nbc__type_is_int(types[i]))
        return TYPING(I, n->list.items[i], "reshape() arg cannot be %s",
                      nbc__infer_tname(I, types[i])),
               NULL;
  }
  if (ndim < 1 || ndim > 32)
    return UNSUPPORTED(I, n, "reshape() to %d dimensions is not supported (1 to 32 are)", ndim),
           NULL;
  nbc__type *t = (nbc__type *)nbc__type_array(I->ctx, at->dtype, ndim, at->layout);
  nbc__call *c = t ? nbc__infer_call_new(I, n, NBC__B_RESHAPE, "reshape", nargs) : NULL;
  if (!c) return NULL;
  t->readonly = at->readonly;
  memcpy(c->argtypes, types, sizeof *types * (size_t)nargs);
  c->ret = t;
  return t;
}

/* a.view(dtype) as numba types it (resolve_view): the same array with another number dtype,
 * its ndim and layout kept; whether the sizes fit is numba's run-time check (ValueError
 * "new type not compatible with array"). */
/* The dtype view(dtype) names, its argument's type in *pt; NULL once reported. */
static const nbc__type *view_dtype(infer *I, nbc__node *n, const nbc__type **pt) {
  if (n->list.count != 1 || n->list.items[0]->kind == NBC__N_KEYWORD)
    return TYPING(I, n, "view() takes exactly one argument, the dtype"), NULL;
  *pt = nbc__infer_expr(I, n->list.items[0]);
  return *pt ? nbc__infer_call_cuda_dtype_of(I, n->list.items[0], *pt) : NULL;
}

const nbc__type *nbc__infer_call_method_view(infer *I, nbc__node *n, const nbc__type *at) {
  const nbc__type *t = NULL, *dt = view_dtype(I, n, &t);
  if (!dt) return NULL;
  if (!nbc__type_is_number(dt) || !nbc__type_is_number(at->dtype))
    return UNSUPPORTED(I, n, "view() of %s as %s: nbcuda reinterprets arrays of numbers only",
                       nbc__infer_tname(I, at), nbc__infer_tname(I, dt)),
           NULL;
  nbc__type *vt = (nbc__type *)nbc__type_array(I->ctx, dt, at->ndim, at->layout);
  nbc__call *c = vt ? nbc__infer_call_new(I, n, NBC__B_VIEW, "view", 1) : NULL;
  if (!c) return NULL;
  vt->readonly = at->readonly;
  c->argtypes[0] = t;
  c->ret = vt;
  n->a->type = at;
  return vt;
}

/* x.view(dtype) of an integer or float scalar, as numba's scalar_view types it: the same bits
 * as another integer or float type of the same size (x.view(np.int64) of a float64). */
const nbc__type *nbc__infer_call_method_scalar_view(infer *I, nbc__node *n,
                                                    const nbc__type *xt) {
  const nbc__type *t = NULL, *dt = view_dtype(I, n, &t);
  if (!dt) return NULL;
  if (!nbc__type_is_int(dt) && !nbc__type_is_float(dt))
    return TYPING(I, n, "view() of %s as %s: a scalar is viewed as an integer or float type",
                  nbc__infer_tname(I, xt), nbc__infer_tname(I, dt)),
           NULL;
  if (nbc__type_size(dt) != nbc__type_size(xt))
    return TYPING(I, n, "Changing the dtype of a 0d array is only supported if the itemsize is "
                        "unchanged (view() of %s as %s)",
                  nbc__infer_tname(I, xt), nbc__infer_tname(I, dt)),
           NULL;
  nbc__call *c = nbc__infer_call_new(I, n, NBC__B_VIEW, "view", 1);
  if (!c) return NULL;
  c->argtypes[0] = t;
  c->ret = dt;
  n->a->type = xt;
  return dt;
}

/* operator.setitem(a, i, v): numba's `a[i] = v`, typed as that assignment is. The first walk
 * makes the call's list the target a[i] (marked "$setitem") and v, which the later walks find
 * as they are; the call is None. */
const nbc__type *nbc__infer_call_method_setitem(infer *I, nbc__node *n) {
  bool rewritten = n->list.count == 2 && n->list.items[0]->alias &&
                   strcmp(n->list.items[0]->alias, "$setitem") == 0;
  if (!rewritten) {
    for (int i = 0; i < n->list.count; i++)
      if (n->list.items[i]->kind == NBC__N_KEYWORD)
        return TYPING(I, n, "operator.setitem() takes no keyword arguments"), NULL;
    if (n->list.count != 3)
      return TYPING(I, n, "operator.setitem() takes exactly 3 arguments (%d given)",
                    n->list.count),
             NULL;
    nbc__node *target = nbc__infer_alloc(I, sizeof *target);
    nbc__node **items = nbc__infer_alloc(I, sizeof *items * 2);
    if (!target || !items) return NULL;
    *target = (nbc__node){.kind = NBC__N_SUBSCRIPT,
                          .tok = n->tok,
                          .a = n->list.items[0],
                          .b = n->list.items[1],
                          .var = -1,
                          .alias = "$setitem"};
    items[0] = target;
    items[1] = n->list.items[2];
    n->list.items = items;
    n->list.count = 2;
  }
  nbc__node *target = n->list.items[0], *value = n->list.items[1];
  const nbc__type *t = nbc__infer_expr(I, value);
  if (!t) return NULL;
  int failed = I->failed;
  nbc__infer_assign_target(I, target, value, t);
  if (I->failed != failed) return NULL;
  nbc__call *c = nbc__infer_call_new(I, n, NBC__B_STORE, "setitem", 2);
  if (!c) return NULL;
  c->argtypes[0] = target->type;
  c->argtypes[1] = t;
  c->ret = T(NBC__T_NONE);
  return c->ret;
}

/* a.transpose(axes) as numba types it (resolve_transpose): the axes given as integers or as
 * one tuple of them, one per dimension, each once (negative from the end); the view is
 * a.T's with layout A (a 1-d array's transpose(0) is the array). The axes must be constants
 * here (numba checks them at run time, raising ValueError). */
const nbc__type *nbc__infer_call_method_transpose(infer *I, nbc__node *n, const nbc__type *at) {
  nbc__node *const *items = n->list.items;
  int count = n->list.count;
  if (count == 1 && items[0]->kind == NBC__N_TUPLE) {
    count = items[0]->list.count;
    items = items[0]->list.items;
  }
  for (int k = 0; k < n->list.count; k++)
    if (n->list.items[k]->kind == NBC__N_KEYWORD)
      return TYPING(I, n, "transpose() takes no keyword arguments"), NULL;
  if (count != at->ndim)
    return TYPING(I, n, "transpose() of %s takes %d axes, not %d", nbc__infer_tname(I, at),
                  at->ndim, count),
           NULL;
  int64_t perm[32];
  bool seen[32] = {false};
  for (int k = 0; k < count && k < 32; k++) {
    int64_t ax;
    if (!nbc__infer_const_int(I, items[k], &ax))
      return UNSUPPORTED(I, items[k], "transpose() axes must be constant integers"), NULL;
    if (ax < -at->ndim || ax >= at->ndim)
      return VALUE_ERROR(I, items[k],
                    "ValueError: axis is out of bounds for array of given "
                    "dimension"),
             NULL;
    if (ax < 0) ax += at->ndim;
    if (seen[ax]) return VALUE_ERROR(I, items[k], "ValueError: repeated axis in transpose"), NULL;
    seen[ax] = true;
    perm[k] = ax;
    if (!nbc__infer_expr(I, items[k])) return NULL;
  }
  nbc__type *vt = (nbc__type *)nbc__type_array(I->ctx, at->dtype, at->ndim,
                                               at->ndim == 1 ? at->layout : 'A');
  nbc__call *c = vt ? nbc__infer_call_new(I, n, NBC__B_TRANSPOSE, "transpose", 0) : NULL;
  if (!c) return NULL;
  vt->readonly = at->readonly;
  c->shape = nbc__infer_alloc(I, sizeof *c->shape * (size_t)at->ndim);
  if (!c->shape) return NULL;
  memcpy(c->shape, perm, sizeof *perm * (size_t)at->ndim);
  c->ret = vt;
  n->a->type = at;
  return vt;
}

/* a.fill(v): numba's `a[:] = v` (arrayobj.py's arr_fill). The first walk makes the call's
 * list the view a[:] and v, which the later walks find as they are. */
const nbc__type *nbc__infer_call_method_fill(infer *I, nbc__node *n, const nbc__type *at) {
  bool rewritten = n->list.count == 2 && n->list.items[0]->kind == NBC__N_SUBSCRIPT &&
                   n->list.items[0]->a == n->a->a;
  if (!rewritten) {
    if (n->list.count != 1 || n->list.items[0]->kind == NBC__N_KEYWORD)
      return TYPING(I, n, "fill() takes exactly one positional argument (the value)"), NULL;
    nbc__node *view = nbc__infer_alloc(I, sizeof *view);
    nbc__node *all = nbc__infer_alloc(I, sizeof *all);
    nbc__node **items = nbc__infer_alloc(I, sizeof *items * 2);
    if (!view || !all || !items) return NULL;
    *all = (nbc__node){.kind = NBC__N_SLICE, .tok = n->tok, .var = -1};
    *view =
        (nbc__node){.kind = NBC__N_SUBSCRIPT, .tok = n->tok, .a = n->a->a, .b = all, .var = -1};
    items[0] = view;
    items[1] = n->list.items[0];
    n->list.items = items;
    n->list.count = 2;
  }
  nbc__node *view = n->list.items[0], *value = n->list.items[1];
  const nbc__type *vt = nbc__infer_array_index(I, view, at, view->b);
  const nbc__type *t = nbc__infer_expr(I, value);
  if (!vt || !t) return NULL;
  view->type = vt;
  if (vt->readonly) return TYPING(I, n, "cannot modify a read-only array"), NULL;
  if (!nbc__type_is_number(t) || !nbc__type_can_convert(t, vt->dtype))
    return TYPING(I, value, "Cannot convert %s to %s in fill()", nbc__infer_tname(I, t),
                  nbc__infer_tname(I, vt->dtype)),
           NULL;
  nbc__infer_cast(value, vt->dtype);
  nbc__call *c = nbc__infer_call_new(I, n, NBC__B_STORE, "fill", 2);
  if (!c) return NULL;
  c->argtypes[0] = vt;
  c->argtypes[1] = vt->dtype;
  c->ret = T(NBC__T_NONE);
  return c->ret;
}

/* The function `name` of arraymath.c's generated source src (NULL: out of memory), as a
 * global the call_python of a call resolves (the source's own imports name its globals). */
nbc__global *nbc__infer_call_method_generated_function(infer *I, const char *name,
                                                       const char *src) {
  nbc__global *G = name && src ? nbc__infer_alloc(I, sizeof *G) : NULL;
  if (!G) {
    nbc__diag_oom(I->ctx);
    I->failed = true;
    return NULL;
  }
  memset(G, 0, sizeof *G);
  G->g.kind = NBC_GLOBAL_FUNCTION;
  G->g.name = name;
  G->g.source = src;
  G->g.filename = NBC__ARRAYMATH_FILE;
  G->g.first_line = 1;
  G->g.resolver = &nbc__infer_call_own_names;
  return G;
}

/* a.sum(), np.sum(a) and the other reductions of arrays: a call of arraymath.c's function for
 * the array's type, the array its one argument (the call node's list becomes that). */
const nbc__type *nbc__infer_call_method_reduction(infer *I, nbc__node *n, const char *name,
                                                  nbc__node *array, int extra_args) {
  if (extra_args)
    return UNSUPPORTED(I, n,
                       "%s() with arguments (axis, dtype, out...) is not supported in "
                       "kernels: only the reduction of the whole array is",
                       name),
           NULL;
  const nbc__type *t = nbc__infer_expr(I, array);
  if (!t) return NULL;
  if (t->kind != NBC__T_ARRAY)
    return TYPING(I, n, "%s() of %s is not supported in kernels (arrays are)", name,
                  nbc__infer_tname(I, t)),
           NULL;
  if (nbc__type_is_complex(t->dtype) && strncmp(name, "arg", 3) == 0)
    return TYPING(I, n, "%s() of %s: complex numbers have no order", name,
                  nbc__infer_tname(I, t)),
           NULL;
  if (!nbc__type_is_number(t->dtype))
    return TYPING(I, n, "%s() of %s is not supported: its elements are not numbers", name,
                  nbc__infer_tname(I, t)),
           NULL;
  const char *why = NULL;
  if ((strcmp(name, "all") == 0 || strcmp(name, "any") == 0) &&
      !nbc__type_truth(t->dtype, &why))
    return TYPING(I, n, "%s() of %s: %s", name, nbc__infer_tname(I, t), why), NULL;
  nbc__node **items = nbc__infer_alloc(I, sizeof *items);
  nbc__global *G = nbc__infer_call_method_generated_function(
      I, nbc__arena_printf(I->ctx->arena, "_%s", name),
      nbc__array_reduction_source(I->ctx, name, t));
  if (!items || !G) return NULL;
  items[0] = array;
  n->list.items = items;
  n->list.count = 1;
  const nbc__type *argv[1] = {t};
  return nbc__infer_call_user_python(I, n, G, argv, 1);
}
