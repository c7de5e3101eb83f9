/* infer_call.c — type inference of calls: the dispatch over what is called (methods of
 * numbers and arrays, builtins, dtype conversions (float32(x)), the math, cmath, numpy,
 * operator and cuda modules, Python functions), print, f(*t) and ffi.from_buffer, and the
 * helpers every kind of call shares. Each kind has its file: infer_call_builtin.c,
 * infer_call_cuda.c, infer_call_method.c, infer_call_user.c, and the library's namespaces
 * lib_cuda.c (the cuda intrinsics), lib_math.c, lib_cmath.c and lib_numpy.c. Each call
 * records an nbc__call in the CALL node's ->info for lower.c, with the types its arguments
 * convert to (also set as the arguments' ->cast; nbc__infer_call_record does both).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/infer.h"

/* ------------------------------------------------------------------------ calls */

/* Generated sources (the embedded cmath, arraymath.c's functions) resolve their own names
 * (their imports and constants): a resolver without a function makes global lookups use the
 * module's bindings. */
const nbc_resolver_t nbc__infer_call_own_names = {NULL, NULL};

nbc__call *nbc__infer_call_new(infer *I, nbc__node *n, nbc__builtin b, const char *name,
                               int nargs) {
  nbc__call *c = nbc__infer_alloc(I, sizeof *c);
  if (!c) return NULL;
  c->builtin = b;
  c->name = name;
  c->nargs = nargs;
  c->argtypes = nbc__infer_alloc(I, sizeof *c->argtypes * (size_t)(nargs ? nargs : 1));
  n->info = c;
  return c->argtypes ? c : NULL;
}

/* The tail of nbc__infer_call_record(_each): argument i converts to argtypes[i], or to each
 * when argtypes is NULL. */
static const nbc__type *record(infer *I, nbc__node *n, nbc__builtin b, const char *name,
                               int nargs, const nbc__type *const *argtypes,
                               const nbc__type *each, const nbc__type *ret) {
  nbc__call *c = nbc__infer_call_new(I, n, b, name, nargs);
  if (!c) return NULL;
  for (int i = 0; i < nargs; i++) {
    nbc__node *a = n->list.items[i];
    if (a->kind == NBC__N_KEYWORD) a = a->a;
    const nbc__type *to = argtypes ? argtypes[i] : each;
    c->argtypes[i] = to ? to : a->type;
    nbc__infer_cast(a, to);
  }
  c->ret = ret;
  return ret;
}

const nbc__type *nbc__infer_call_record(infer *I, nbc__node *n, nbc__builtin b, const char *name,
                                        int nargs, const nbc__type *const *argtypes,
                                        const nbc__type *ret) {
  return record(I, n, b, name, nargs, argtypes, NULL, ret);
}

const nbc__type *nbc__infer_call_record_each(infer *I, nbc__node *n, nbc__builtin b,
                                             const char *name, int nargs,
                                             const nbc__type *each, const nbc__type *ret) {
  return record(I, n, b, name, nargs, NULL, each, ret);
}

/* Positional arguments only (keywords are checked by the callers that take them). */
int nbc__infer_call_positional(const nbc__node *n) {
  int k = 0;
  while (k < n->list.count && n->list.items[k]->kind != NBC__N_KEYWORD)
    k++;
  return k;
}

bool nbc__infer_call_no_keywords(infer *I, nbc__node *n, const char *what) {
  if (nbc__infer_call_positional(n) != n->list.count)
    return UNSUPPORTED(I, n->list.items[nbc__infer_call_positional(n)],
                       "%s() takes no keyword arguments", what);
  return true;
}

/* Types the arguments into types[]; false when any is unknown. */
bool nbc__infer_call_args(infer *I, nbc__node *n, const nbc__type **types, int max) {
  bool ok = true;
  for (int i = 0; i < n->list.count && i < max; i++) {
    nbc__node *a = n->list.items[i];
    types[i] = nbc__infer_expr(I, a->kind == NBC__N_KEYWORD ? a->a : a);
    if (a->kind == NBC__N_KEYWORD) a->type = types[i];
    if (!types[i]) ok = false;
  }
  return ok;
}

const nbc__type *nbc__infer_call_arg_list_error(infer *I, nbc__node *n, const char *what,
                                                const nbc__type **types, int count) {
  nbc__buf b;
  nbc__buf_init(&b, I->ctx->arena);
  for (int i = 0; i < count; i++) {
    if (i) nbc__buf_puts(&b, ", ");
    nbc__type_print(&b, types[i]);
  }
  TYPING(I, n, "Invalid use of %s with parameters (%s)", what, b.data);
  return NULL;
}

/* Whether numba's CUDA print can print a value of type t: integers, floats, booleans and
 * tuples of them (printimpl.py's print_item cases). */
static bool printable(const nbc__type *t) {
  if (!t) return false;
  if (nbc__type_is_int(t) || nbc__type_is_float(t) || t->kind == NBC__T_BOOL) return true;
  if (t->kind != NBC__T_TUPLE) return false;
  for (int i = 0; i < t->count; i++)
    if (!printable(t->items[i])) return false;
  return true;
}

/* print(a, "text", b): numba's CUDA print, one vprintf of the items joined by spaces. String
 * literals are printed as they are (they have no other use in a kernel, so they are not
 * typed as values). */
static const nbc__type *call_print(infer *I, nbc__node *n) {
  if (!nbc__infer_call_no_keywords(I, n, "print")) return NULL;
  int nargs = n->list.count;
  nbc__call *c = nbc__infer_call_new(I, n, NBC__B_PRINT, "print", nargs);
  if (!c) return NULL;
  for (int i = 0; i < nargs; i++) {
    nbc__node *a = n->list.items[i];
    if (a->kind == NBC__N_STR) {
      c->argtypes[i] = NULL;
      continue;
    }
    const nbc__type *t = nbc__infer_expr(I, a);
    if (!t) return NULL;
    if (!printable(t))
      return TYPING(I, a, "printing unimplemented for values of type %s",
                    nbc__infer_tname(I, t)),
             NULL;
    c->argtypes[i] = t;
  }
  c->ret = T(NBC__T_NONE);
  return c->ret;
}

/* f(*t): a tuple's items as positional arguments, as numba unpacks them. Each starred
 * argument becomes its items, SUBSCRIPT nodes t[i] marked "$star" that share t and, in c, a
 * node whose info the lowering keeps t's value in, so t is evaluated once (at item 0); a
 * variable holding an empty tuple (a device function's empty *args) becomes nothing.
 * false after an error. */
static bool is_starred(const nbc__node *a) {
  return a->kind == NBC__N_OTHER_EXPR && !a->str && a->a && nbc__tok_is(a->tok, "*");
}

static bool expand_starred(infer *I, nbc__node *n) {
  int extra = 0, starred = 0;
  for (int i = 0; i < n->list.count; i++) {
    nbc__node *a = n->list.items[i];
    if (!is_starred(a)) continue;
    starred++;
    const nbc__type *t = nbc__infer_expr(I, a->a);
    if (!t) return false;
    if (t->kind != NBC__T_TUPLE)
      return TYPING(I, a, "*args in a call unpacks a tuple in kernels, not %s",
                    nbc__infer_tname(I, t));
    /* an empty tuple gives no item to evaluate it at: only a variable's (no effects) */
    if (t->count == 0 && a->a->kind != NBC__N_NAME)
      return UNSUPPORTED(I, a, "unpacking an empty tuple into a call is not supported");
    extra += t->count - 1;
  }
  if (!starred) return true;
  nbc__node **items = nbc__infer_alloc(I, sizeof *items * (size_t)(n->list.count + extra + 1));
  if (!items) return false;
  int k = 0;
  for (int i = 0; i < n->list.count; i++) {
    nbc__node *a = n->list.items[i];
    if (!is_starred(a)) {
      items[k++] = a;
      continue;
    }
    const nbc__type *t = a->a->type;
    nbc__node *holder = nbc__infer_alloc(I, sizeof *holder);
    if (!holder) return false;
    *holder = (nbc__node){.kind = NBC__N_OTHER_EXPR, .tok = a->tok, .var = -1};
    for (int j = 0; j < t->count; j++) {
      nbc__node *index = nbc__infer_alloc(I, sizeof *index);
      nbc__node *item = nbc__infer_alloc(I, sizeof *item);
      if (!index || !item) return false;
      *index = (nbc__node){.kind = NBC__N_INT, .tok = a->tok, .var = -1, .value.i = j};
      *item = (nbc__node){.kind = NBC__N_SUBSCRIPT, .tok = a->tok, .a = a->a, .b = index,
                          .c = holder, .var = -1, .alias = "$star"};
      items[k++] = item;
    }
  }
  n->list.items = items;
  n->list.count = k;
  return true;
}

/* ffi.from_buffer(a) of a cffi.FFI global (numba's cffi_utils): a CPointer to the data of
 * a contiguous array, which a declared function takes ("float32(CPointer(float32), int32)");
 * numba's messages for anything else. */
static const nbc__type *call_from_buffer(infer *I, nbc__node *n, const nbc__type **types,
                                         int nargs) {
  if (!nbc__infer_call_no_keywords(I, n, "from_buffer")) return NULL;
  if (nargs != 1)
    return TYPING(I, n, "from_buffer() takes one argument, an array (%d given)", nargs), NULL;
  const nbc__type *a = types[0];
  if (a->kind != NBC__T_ARRAY)
    return TYPING(I, n->list.items[0], "from_buffer() takes an array, not %s",
                  nbc__infer_tname(I, a)),
           NULL;
  if (a->layout != 'C' && a->layout != 'F')
    return TYPING(I, n->list.items[0], "from_buffer() unsupported on non-contiguous buffers "
                  "(got %s)", nbc__infer_tname(I, a)),
           NULL;
  nbc__call *c = nbc__infer_call_new(I, n, NBC__B_FROM_BUFFER, "from_buffer", 1);
  if (!c) return NULL;
  c->argtypes[0] = a;
  c->ret = nbc__type_pointer(I->ctx, a->dtype);
  return c->ret;
}

const nbc__type *nbc__infer_call(infer *I, nbc__node *n) {
  n->info = NULL;
  if (!expand_starred(I, n)) return NULL;
  /* x.conjugate() of a number: itself, or a complex's conjugate (numba) */
  if (n->a->kind == NBC__N_ATTR && strcmp(n->a->str, "conjugate") == 0) {
    const nbc__type *o = nbc__infer_expr(I, n->a->a);
    if (o && (nbc__type_is_int(o) || nbc__type_is_float(o) || nbc__type_is_complex(o))) {
      if (n->list.count) return TYPING(I, n, "conjugate() takes no arguments"), NULL;
      nbc__call *c = nbc__infer_call_new(I, n, NBC__B_CONJUGATE, "conjugate", 0);
      if (!c) return NULL;
      c->ret = o;
      n->a->type = o;
      return o;
    }
  }
  /* i.bit_count() of an integer: numba-cuda's overload, cuda.popc(i) */
  if (n->a->kind == NBC__N_ATTR && strcmp(n->a->str, "bit_count") == 0) {
    nbc__node *obj = n->a->a;
    const nbc__type *o = nbc__infer_expr(I, obj);
    if (o && nbc__type_is_int(o)) {
      bool rewritten = n->list.count == 1 && n->list.items[0] == obj; /* an earlier walk */
      if (n->list.count && !rewritten)
        return TYPING(I, n, "bit_count() takes no arguments"), NULL;
      if (!rewritten) {
        nbc__node **args = nbc__infer_alloc(I, sizeof *args);
        if (!args) return NULL;
        args[0] = obj;
        n->list.items = args;
        n->list.count = 1;
      }
      return nbc__infer_call_cuda(I, n, "cuda.popc", &o, 1);
    }
  }
  /* g.sync() of a GridGroup: numba's grid synchronisation, returning cudaCGSynchronize's
   * int32 status */
  if (n->a->kind == NBC__N_ATTR && strcmp(n->a->str, "sync") == 0) {
    const nbc__type *o = nbc__infer_expr(I, n->a->a);
    if (o && o->kind == NBC__T_GRID_GROUP) {
      if (n->list.count) return TYPING(I, n, "GridGroup.sync() takes no arguments"), NULL;
      nbc__call *c = nbc__infer_call_new(I, n, NBC__B_CG_SYNC, "GridGroup.sync", 0);
      if (!c) return NULL;
      c->ret = T(NBC__T_INT32);
      n->a->type = o;
      return c->ret;
    }
  }
  /* a.transpose(): a.T, the call becoming that attribute; with axes, call_transpose */
  if (n->a->kind == NBC__N_ATTR && strcmp(n->a->str, "transpose") == 0) {
    const nbc__type *o = nbc__infer_expr(I, n->a->a);
    if (o && o->kind == NBC__T_ARRAY) {
      if (n->list.count > 1 || (n->list.count == 1 && n->list.items[0]->kind != NBC__N_NONE))
        return nbc__infer_call_method_transpose(I, n, o);
      nbc__node *array = n->a->a;
      n->kind = NBC__N_ATTR;
      n->a = array;
      n->str = "T";
      n->list.count = 0;
      n->info = NULL;
      return nbc__infer_expr(I, n);
    }
  }
  /* a.fill(v) */
  if (n->a->kind == NBC__N_ATTR && strcmp(n->a->str, "fill") == 0) {
    const nbc__type *o = nbc__infer_expr(I, n->a->a);
    if (o && o->kind == NBC__T_ARRAY) return nbc__infer_call_method_fill(I, n, o);
  }
  /* a.view(dtype) */
  if (n->a->kind == NBC__N_ATTR && strcmp(n->a->str, "view") == 0) {
    const nbc__type *o = nbc__infer_expr(I, n->a->a);
    if (o && o->kind == NBC__T_ARRAY) return nbc__infer_call_method_view(I, n, o);
    if (o && (nbc__type_is_int(o) || nbc__type_is_float(o)))
      return nbc__infer_call_method_scalar_view(I, n, o);
  }
  /* a.reshape(...) */
  if (n->a->kind == NBC__N_ATTR && strcmp(n->a->str, "reshape") == 0) {
    const nbc__type *o = nbc__infer_expr(I, n->a->a);
    if (o && o->kind == NBC__T_ARRAY) {
      const nbc__type *types[64];
      if (n->list.count > 64) return UNSUPPORTED(I, n, "reshape() of more than 64 arguments"), NULL;
      if (!nbc__infer_call_args(I, n, types, 64)) return NULL;
      n->a->type = o;
      return nbc__infer_call_method_reshape(I, n, o, types, n->list.count);
    }
  }
  /* a.sum() and the other reductions of an array */
  if (n->a->kind == NBC__N_ATTR && nbc__array_reduction_is_method(n->a->str)) {
    const nbc__type *o = nbc__infer_expr(I, n->a->a);
    /* (the list holds the array once rewritten, for the walks after the first) */
    bool rewritten = n->list.count == 1 && n->list.items[0] == n->a->a;
    if (o && o->kind == NBC__T_ARRAY)
      return nbc__infer_call_method_reduction(I, n, n->a->str, n->a->a,
                                              rewritten ? 0 : n->list.count);
  }
  const nbc__type *f = nbc__infer_expr(I, n->a);
  const nbc__global *pg = f && n->a->kind == NBC__N_NAME && n->a->var < 0 ? n->a->info : NULL;
  if (pg && nbc__infer_is_builtin(pg) && strcmp(pg->g.name, "print") == 0)
    return call_print(I, n);
  if (pg && nbc__infer_is_builtin(pg) && strcmp(pg->g.name, "isinstance") == 0)
    return nbc__infer_call_builtin_isinstance(I, n); /* its second argument is not a value */
  if (pg && nbc__infer_is_builtin(pg) && strcmp(pg->g.name, "float") == 0 &&
      n->list.count == 1 && n->list.items[0]->kind == NBC__N_STR)
    return nbc__infer_call_builtin_float_of_string(
        I, n); /* float("nan"): a constant, as numba folds it */
  if (f && f->kind == NBC__T_FUNCTION && f->name && strncmp(f->name, "cuda.", 5) == 0 &&
      nbc__cuda_name_call(nbc__cuda_name_find(f->name + 5)) == NBC__KERNEL_CALL_ARRAY)
    return nbc__infer_call_cuda_array(I, n, f->name); /* its arguments are not values */
  if (f && f->kind == NBC__T_FUNCTION && f->name && strcmp(f->name, "numpy.dtype") == 0)
    return nbc__numpy_call_dtype(I, n); /* nor is its string */
  const nbc__type *types[64];
  int nargs = n->list.count;
  if (nargs > 64) return UNSUPPORTED(I, n, "calls with more than 64 arguments"), NULL;
  bool ok = nbc__infer_call_args(I, n, types, 64);
  if (!f || !ok) return NULL;
  int npos = nbc__infer_call_positional(n);
  if (f->kind == NBC__T_DTYPE && f->name && strcmp(f->name, "dtype") == 0)
    return TYPING(I, n, "No type info available for %s as a callable (a.dtype.type is)",
                  nbc__infer_tname(I, f)),
           NULL;
  if (f->kind == NBC__T_DTYPE) {
    if (!nbc__infer_call_no_keywords(I, n, f->name)) return NULL;
    if (npos != 1 || !(nbc__type_is_number(types[0]) || nbc__type_is_bf16(types[0])) ||
        !nbc__type_can_convert(types[0], f->dtype))
      return nbc__infer_call_arg_list_error(I, n, nbc__infer_tname(I, f), types, nargs);
    nbc__call *c = nbc__infer_call_new(I, n, NBC__B_CAST, f->name, 1);
    if (!c) return NULL;
    c->argtypes[0] = types[0];
    c->ret = f->dtype;
    return c->ret;
  }
  if (f->kind != NBC__T_FUNCTION)
    return TYPING(I, n, "'%s' object is not callable", nbc__infer_tname(I, f)), NULL;
  const nbc__global *G = n->a->kind != NBC__N_NAME ? NULL
                         : n->a->var < 0          ? n->a->info
                                                  : I->fn->vars[n->a->var].function;
  if (G && G->g.kind == NBC_GLOBAL_FUNCTION)
    return nbc__infer_call_user(I, n, (nbc__global *)G, types, nargs);
  if (G && G->g.kind == NBC_GLOBAL_DECLARED)
    return nbc__infer_call_user_declared(I, n, G, types, nargs);
  if (G && nbc__infer_is_builtin(G))
    return nbc__infer_call_builtin(I, n, G->g.name, types, nargs);
  if (strncmp(f->name, "math.", 5) == 0)
    return nbc__lib_math_call(I, n, f->name + 5, types, nargs);
  if (strncmp(f->name, "cmath.", 6) == 0)
    return nbc__cmath_call(I, n, f->name + 6, types, nargs);
  if (strncmp(f->name, "numpy.", 6) == 0 && nbc__array_reduction_exists(f->name + 6)) {
    if (!nargs || n->list.items[0]->kind == NBC__N_KEYWORD)
      return TYPING(I, n, "%s() takes an array as its first argument", f->name), NULL;
    return nbc__infer_call_method_reduction(I, n, f->name + 6, n->list.items[0], nargs - 1);
  }
  if (strncmp(f->name, "numpy.", 6) == 0)
    return nbc__numpy_call(I, n, f->name + 6, types, nargs);
  if (strcmp(f->name, "operator.setitem") == 0) return nbc__infer_call_method_setitem(I, n);
  if (strncmp(f->name, "operator.", 9) == 0) return nbc__infer_operator_call(I, n, f->name + 9);
  if (strncmp(f->name, "cuda.", 5) == 0)
    return nbc__infer_call_cuda(I, n, f->name, types, nargs);
  if (strcmp(f->name, "cffi.from_buffer") == 0) return call_from_buffer(I, n, types, nargs);
  return UNSUPPORTED(I, n, "unsupported call of %s", nbc__infer_tname(I, f)), NULL;
}
