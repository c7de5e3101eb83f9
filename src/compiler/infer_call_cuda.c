/* infer_call_cuda.c — calls of the cuda module's functions (lib_cuda.c's table says which
 * path a name takes): shared, local and constant arrays, atomics, cache-hinted loads and
 * stores, grid and gridsize, syncthreads, libdevice, fp16/bf16, vector types, carray/farray
 * and cg.this_grid; the warp, vote, fence, bit and math intrinsics are typed by lib_cuda.c.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/infer.h"

/* The dtype of a shared/local array: a type global, cuda.float32, ... */
const nbc__type *nbc__infer_call_cuda_dtype_of(infer *I, nbc__node *n, const nbc__type *t) {
  if (is_kind(t, NBC__T_DTYPE)) return t->dtype;
  TYPING(I, n, "the dtype must be a numba type such as float32, not %s",
         nbc__infer_tname(I, t));
  return NULL;
}

/* A shared/local array's dtype argument: a type, or numpy's name of one as a string
 * ("int32"), which numba-cuda accepts too. */
static const nbc__type *array_dtype(infer *I, nbc__node *n) {
  if (n->kind == NBC__N_STR) {
    const nbc__type *t = nbc__numpy_dtype_string(n->str);
    if (!t || !nbc__type_is_number(t))
      return TYPING(I, n, "Invalid NumPy dtype specified: '%s'", n->str ? n->str : ""), NULL;
    return t;
  }
  const nbc__type *t = nbc__infer_expr(I, n);
  return t ? nbc__infer_call_cuda_dtype_of(I, n, t) : NULL;
}

/* numba's text of an argument's type as its "No implementation of function" message shows
 * it: a constant integer is Literal[int](v), a list of them list(int64)<iv=[...]>, a tuple
 * Tuple(items), a type class(type), anything else its type. */
static void numba_arg_text(infer *I, nbc__buf *out, nbc__node *a) {
  int64_t v;
  if (a->kind == NBC__N_LIST || a->kind == NBC__N_TUPLE) {
    bool consts = a->kind == NBC__N_LIST;
    for (int i = 0; consts && i < a->list.count; i++)
      consts =
          nbc__infer_expr(I, a->list.items[i]) && nbc__infer_const_int(I, a->list.items[i], &v);
    if (consts && a->list.count > 0) {
      nbc__buf_puts(out, "list(int64)<iv=[");
      for (int i = 0; i < a->list.count; i++) {
        nbc__infer_const_int(I, a->list.items[i], &v);
        nbc__buf_printf(out, "%s%lld", i ? ", " : "", (long long)v);
      }
      nbc__buf_puts(out, "]>");
      return;
    }
    /* a list is not a value kernels have: its items' types */
    nbc__buf_puts(out, a->kind == NBC__N_LIST ? "list(" : "Tuple(");
    for (int i = 0; i < a->list.count; i++) {
      if (i) nbc__buf_puts(out, ", ");
      numba_arg_text(I, out, a->list.items[i]);
    }
    nbc__buf_puts(out, ")");
    return;
  }
  if (nbc__infer_const_int(I, a, &v)) {
    nbc__buf_printf(out, "Literal[int](%lld)", (long long)v);
    return;
  }
  if (a->kind == NBC__N_STR) {
    nbc__buf_printf(out, "Literal[str](%s)", a->str ? a->str : "");
    return;
  }
  const nbc__type *t = a->type ? a->type : nbc__infer_expr(I, a);
  if (is_kind(t, NBC__T_DTYPE))
    nbc__buf_printf(out, "class(%s)", nbc__infer_tname(I, t->dtype));
  else
    nbc__buf_puts(out, t ? nbc__infer_tname(I, t) : "undefined");
}

/* A refused shape of cuda.shared.array / cuda.local.array (call n), reported at `at` as
 * numba does ("No implementation of function Function(<function shared.array>) found for
 * signature: >>> array(shape=..., dtype=...)"), then why. Returns 0. */
static int shape_refused(infer *I, nbc__node *n, nbc__node *at, const char *fname,
                         const char *why) {
  if (!I->final) return 0;
  nbc__buf sig;
  nbc__buf_init(&sig, I->ctx->arena);
  for (int i = 0; i < n->list.count; i++) {
    nbc__node *a = n->list.items[i];
    if (i) nbc__buf_puts(&sig, ", ");
    if (a->kind == NBC__N_KEYWORD) nbc__buf_printf(&sig, "%s=", a->str);
    numba_arg_text(I, &sig, a->kind == NBC__N_KEYWORD ? a->a : a);
  }
  const char *name = strncmp(fname, "cuda.", 5) == 0 ? fname + 5 : fname;
  const char *dot = strrchr(name, '.');
  TYPING(I, at,
         "No implementation of function Function(<function %s>) found for "
         "signature:\n \n >>> %s(%s)\n \nthe shape of %s() %s",
         name, dot ? dot + 1 : name, sig.data ? sig.data : "", fname, why);
  return 0;
}

/* A shared/local array's shape: a constant integer, a tuple of them, or a global tuple
 * constant (numba freezes one); its extents in dims (at most 32), the count, or 0 reported
 * (n is the call, for numba's message). */
static int array_shape(infer *I, nbc__node *n, nbc__node *shape, const char *fname,
                       int64_t *dims) {
  if (shape->kind == NBC__N_NAME && !nbc__infer_expr(I, shape)) return 0; /* resolves it */
  const nbc__literal *lit =
      shape->kind == NBC__N_NAME && shape->var >= 0 ? I->fn->vars[shape->var].literal : NULL;
  if (lit && lit->count > 0) { /* a parameter given a constant tuple: its values */
    memcpy(dims, lit->value, sizeof *dims * (size_t)lit->count);
    return lit->count;
  }
  const nbc__global *G = shape->kind == NBC__N_NAME && shape->var < 0 ? shape->info : NULL;
  if (G && G->g.kind == NBC_GLOBAL_TUPLE) { /* SHAPE = 5, 6 */
    if (G->g.tuple_count < 1 || G->g.tuple_count > 32)
      return UNSUPPORTED(I, shape, "an array shape of %d dimensions", G->g.tuple_count), 0;
    for (int i = 0; i < G->g.tuple_count; i++) {
      if (G->g.tuple_items[i].kind != NBC_GLOBAL_INT)
        return TYPING(I, shape, "the shape of %s() must be constant integers", fname), 0;
      dims[i] = G->g.tuple_items[i].value.i;
    }
    return G->g.tuple_count;
  }
  if (shape->kind == NBC__N_LIST) /* numba-cuda refuses a list (its test_sm_creation) */
    return shape_refused(I, n, shape, fname,
                         "must be a constant integer or a tuple of them, not a list");
  if (shape->kind == NBC__N_TUPLE) {
    if (shape->list.count < 1 || shape->list.count > 32)
      return UNSUPPORTED(I, shape, "an array shape of %d dimensions", shape->list.count), 0;
    for (int i = 0; i < shape->list.count; i++)
      if (!nbc__infer_expr(I, shape->list.items[i]) ||
          !nbc__infer_const_int(I, shape->list.items[i], &dims[i]))
        return shape_refused(I, n, shape->list.items[i], fname, "must be constant integers");
    return shape->list.count;
  }
  if (!nbc__infer_expr(I, shape) || !nbc__infer_const_int(I, shape, &dims[0]))
    return shape_refused(I, n, shape, fname, "must be a constant integer or a tuple of them");
  return 1;
}

/* numba-cuda's _validate_alignment of a shared/local array's constant `alignment` (None:
 * the dtype's own): *palign 0 for none; false (reported) for an invalid one, and for a value
 * that is neither a constant integer nor None (numba's RequireLiteralValue). */
static bool array_alignment(infer *I, nbc__node *v, int64_t *palign) {
  *palign = 0;
  if (!v || v->kind == NBC__N_NONE) return true;
  int64_t a;
  if (!nbc__infer_const_int(I, v, &a)) {
    bool constant_other = v->kind == NBC__N_STR || nbc__infer_untyped_global(I, v);
    const nbc__type *t = constant_other ? NULL : nbc__infer_expr(I, v);
    if (t && t->kind == NBC__T_NONE) return true;
    if (!t && !constant_other) return false;
    return TYPING(I, v, "RequireLiteralValue: alignment must be a constant integer");
  }
  const char *why = a <= 0               ? "Alignment must be positive"
                    : (a & (a - 1)) != 0 ? "Alignment must be a power of 2"
                    : a % 8 != 0         ? "Alignment must be a multiple of 8"
                                         : NULL;
  if (why) return VALUE_ERROR(I, v, "ValueError: %s", why);
  *palign = a;
  return true;
}

/* cuda.shared.array / cuda.local.array(shape, dtype, alignment=None): the arguments are
 * typed here, not as values (a string dtype, a list shape). */
const nbc__type *nbc__infer_call_cuda_array(infer *I, nbc__node *n, const char *fname) {
  bool shared = strcmp(fname, "cuda.shared.array") == 0;
  nbc__node *shape = NULL, *dtype = NULL, *alignment = NULL;
  for (int i = 0; i < n->list.count; i++) {
    nbc__node *a = n->list.items[i];
    const char *kw = a->kind == NBC__N_KEYWORD ? a->str
                     : i == 0                  ? "shape"
                     : i == 1                  ? "dtype"
                     : i == 2                  ? "alignment"
                                               : NULL;
    nbc__node *v = a->kind == NBC__N_KEYWORD ? a->a : a;
    nbc__node **slot = !kw                            ? NULL
                       : strcmp(kw, "shape") == 0     ? &shape
                       : strcmp(kw, "dtype") == 0     ? &dtype
                       : strcmp(kw, "alignment") == 0 ? &alignment
                                                      : NULL;
    if (!slot)
      return UNSUPPORTED(I, a, "%s() takes (shape, dtype, alignment=None)", fname), NULL;
    if (*slot) return TYPING(I, a, "%s() got multiple values for '%s'", fname, kw), NULL;
    *slot = v;
    if (a->kind == NBC__N_KEYWORD) a->type = T(NBC__T_NONE); /* no run-time value */
  }
  if (!shape || !dtype)
    return TYPING(I, n, "%s() missing required argument '%s'", fname,
                  shape ? "dtype" : "shape"),
           NULL;
  const nbc__type *dt = array_dtype(I, dtype);
  if (!dt) return NULL;
  int64_t dims[32];
  int ndim = array_shape(I, n, shape, fname, dims);
  if (!ndim) return NULL;
  int64_t total = 1;
  for (int i = 0; i < ndim; i++) {
    if (dims[i] < 0)
      return TYPING(I, shape, "negative dimension %lld in %s()", (long long)dims[i], fname),
             NULL;
    if (dims[i] > 0 && total > INT64_MAX / dims[i])
      return TYPING(I, shape, "array too large in %s()", fname), NULL;
    total *= dims[i];
  }
  /* only a 1-d shared array may have no elements: it is the dynamic shared memory */
  if (total == 0 && !(shared && ndim == 1))
    return VALUE_ERROR(I, shape, "ValueError: array length <= 0 in %s()", fname), NULL;
  int64_t align;
  if (!array_alignment(I, alignment, &align)) return NULL;
  nbc__call *c = nbc__infer_call_new(
      I, n, shared ? NBC__B_CUDA_SHARED_ARRAY : NBC__B_CUDA_LOCAL_ARRAY, fname, n->list.count);
  if (!c) return NULL;
  c->alignment = align;
  for (int i = 0; i < n->list.count; i++)
    c->argtypes[i] = T(NBC__T_NONE); /* compile-time arguments */
  c->shape = nbc__infer_alloc(I, sizeof *c->shape * (size_t)ndim);
  if (!c->shape) return NULL;
  memcpy(c->shape, dims, sizeof *dims * (size_t)ndim);
  c->ret = nbc__type_array(I->ctx, dt, ndim, 'C');
  return c->ret;
}

static const struct {
  const char *name;
  nbc__builtin builtin;
  int types; /* 0: int32 uint32 int64 uint64 float32 float64; 1: the integers; 2: unsigned */
} atomic_ops[] = {
    {"add", NBC__B_ATOMIC_ADD, 0},       {"sub", NBC__B_ATOMIC_SUB, 0},
    {"max", NBC__B_ATOMIC_MAX, 0},       {"min", NBC__B_ATOMIC_MIN, 0},
    {"nanmax", NBC__B_ATOMIC_NANMAX, 0}, {"nanmin", NBC__B_ATOMIC_NANMIN, 0},
    {"and_", NBC__B_ATOMIC_AND, 1},      {"or_", NBC__B_ATOMIC_OR, 1},
    {"xor", NBC__B_ATOMIC_XOR, 1},       {"exch", NBC__B_ATOMIC_EXCH, 1},
    {"inc", NBC__B_ATOMIC_INC, 2},       {"dec", NBC__B_ATOMIC_DEC, 2},
    {"cas", NBC__B_ATOMIC_CAS, 1},       {"compare_and_swap", NBC__B_ATOMIC_CAS, 1}};

/* cuda.atomic.<op>(array, index, value) -> the old value (numba-cuda's cudadecl _gen);
 * cas(array, index, old, value) and compare_and_swap(array, old, value) (1-d, element 0)
 * -> the old value. */
static const nbc__type *call_atomic(infer *I, nbc__node *n, const char *fname,
                                    const nbc__type **types, int nargs) {
  if (!nbc__infer_call_no_keywords(I, n, fname)) return NULL;
  int op = -1;
  for (int i = 0; i < (int)(sizeof atomic_ops / sizeof atomic_ops[0]); i++)
    if (strcmp(fname + 12, atomic_ops[i].name) == 0) op = i;
  if (op < 0) return UNSUPPORTED(I, n, "unsupported call of %s", fname), NULL;
  bool cas = atomic_ops[op].builtin == NBC__B_ATOMIC_CAS;
  bool cas_noidx = cas && strcmp(fname + 12, "compare_and_swap") == 0;
  int want = cas_noidx ? 3 : cas ? 4 : 3;
  if (nargs != want || !is_kind(types[0], NBC__T_ARRAY) || (cas_noidx && types[0]->ndim != 1))
    return nbc__infer_call_arg_list_error(I, n, fname, types, nargs);
  const nbc__type *at = types[0], *dt = at->dtype;
  nbc__type_kind k = dt->kind;
  bool uns = k == NBC__T_UINT32 || k == NBC__T_UINT64;
  bool integer = uns || k == NBC__T_INT32 || k == NBC__T_INT64;
  bool fl = k == NBC__T_FLOAT32 || k == NBC__T_FLOAT64;
  int allowed = atomic_ops[op].types;
  if (!(allowed == 0 ? integer || fl : allowed == 1 ? integer : uns))
    return TYPING(I, n, "%s() of an array of %s is not supported", fname,
                  nbc__infer_tname(I, dt)),
           NULL;
  /* The index: an integer or a tuple of integers, one per dimension. */
  const nbc__type *it = T(NBC__T_INT64);
  if (!cas_noidx) {
    nbc__node *idx = n->list.items[1];
    it = types[1];
    if (nbc__type_is_int(it)) {
      if (at->ndim != 1)
        return TYPING(I, idx, "%s() on a %dd array needs a tuple index", fname, at->ndim), NULL;
      nbc__infer_cast(idx, T(NBC__T_INT64));
    } else if (is_kind(it, NBC__T_TUPLE) && it->count == at->ndim) {
      for (int i = 0; i < it->count; i++)
        if (!nbc__type_is_int(it->items[i]))
          return TYPING(I, idx, "%s() index must be integers, not %s", fname,
                        nbc__infer_tname(I, it)),
                 NULL;
      if (idx->kind == NBC__N_TUPLE)
        for (int i = 0; i < idx->list.count; i++)
          nbc__infer_cast(idx->list.items[i], T(NBC__T_INT64));
    } else
      return TYPING(I, idx, "%s() index must be an integer or a tuple of %d integers, not %s",
                    fname, at->ndim, nbc__infer_tname(I, it)),
             NULL;
  }
  /* The value operands (cas: old and value) convert to the dtype. */
  for (int i = cas_noidx ? 1 : 2; i < nargs; i++)
    if (!nbc__type_is_number(types[i]) || !nbc__type_can_convert(types[i], dt))
      return TYPING(I, n->list.items[i], "cannot convert %s to %s in %s()",
                    nbc__infer_tname(I, types[i]), nbc__infer_tname(I, dt), fname),
             NULL;
  nbc__call *c = nbc__infer_call_new(I, n, atomic_ops[op].builtin, fname, nargs);
  if (!c) return NULL;
  c->argtypes[0] = at;
  if (!cas_noidx) c->argtypes[1] = nbc__type_is_int(it) ? T(NBC__T_INT64) : it;
  for (int i = cas_noidx ? 1 : 2; i < nargs; i++) {
    c->argtypes[i] = dt;
    nbc__infer_cast(n->list.items[i], dt);
  }
  c->ret = dt;
  return dt;
}

/* Binds the arguments of call n to the parameters params[0..nparams-1], positional first,
 * then by keyword, into args; false (reported) when one is missing, unknown or given twice. */
static bool bind_args(infer *I, nbc__node *n, const char *what, const char *const *params,
                      int nparams, nbc__node **args) {
  int npos = nbc__infer_call_positional(n), nargs = n->list.count;
  if (npos > nparams)
    return TYPING(I, n->list.items[nparams],
                  "%s() takes %d positional arguments but %d were given", what, nparams, npos);
  for (int k = npos; k < nargs; k++) {
    const nbc__node *kw = n->list.items[k];
    int p = -1;
    for (int j = 0; j < nparams; j++)
      if (strcmp(kw->str, params[j]) == 0) p = j;
    if (p < 0)
      return TYPING(I, kw, "%s() got an unexpected keyword argument '%s'", what, kw->str);
    bool twice = p < npos;
    for (int j = npos; j < k; j++)
      twice = twice || strcmp(n->list.items[j]->str, kw->str) == 0;
    if (twice)
      return TYPING(I, kw, "%s() got multiple values for argument '%s'", what, kw->str);
  }
  for (int j = 0; j < nparams; j++) {
    args[j] = nbc__call_arg(n, j, params[j]);
    if (!args[j]) return TYPING(I, n, "%s() missing required argument: '%s'", what, params[j]);
  }
  return true;
}

/* numba-cuda's cache_hints.py: ld<op>(array, i) is element i of the array, loaded with
 * ld.global.<op>; st<op>(array, i, value) stores value, converted to the dtype (numba's
 * context.cast), with st.global.<op> and returns None. The array must be an array or a
 * CPointer, i an integer for a pointer or a 1-d array, or a UniTuple of ndim integers, the
 * dtype an integer or a float; the messages are numba's (_validate_arguments, then
 * _validate_bitwidth: every integer and float here is 8, 16, 32 or 64 bits wide). The
 * arguments may be passed by keyword, as numba's overloads name them. */
static const nbc__type *call_cache_hint(infer *I, nbc__node *n, const char *fname) {
  static const char *const params[] = {"array", "i", "value"};
  const char *op = fname + 5; /* "ldcg" */
  bool store = op[0] == 's';
  nbc__node *args[3];
  if (!bind_args(I, n, op, params, store ? 3 : 2, args)) return NULL;
  const nbc__type *at = args[0]->type, *it = args[1]->type;
  bool pointer = is_kind(at, NBC__T_POINTER);
  if (!is_kind(at, NBC__T_ARRAY) && !pointer)
    return TYPING(I, args[0], "%s operates on arrays or pointers. Got type %s", op,
                  nbc__infer_tname(I, at)),
           NULL;
  bool valid = false;
  if (nbc__type_is_int(it)) {
    if (!pointer && at->ndim != 1) /* a pointer takes any integer */
      return TYPING(I, args[1], "Expected %d indices, got a scalar", at->ndim), NULL;
    valid = true;
  } else if (pointer && is_kind(it, NBC__T_TUPLE)) {
    return TYPING(I, args[1], "Pointers only support scalar indexing, got tuple of %d",
                  it->count),
           NULL;
  } else if (is_kind(it, NBC__T_TUPLE) && it->count > 0) {
    bool uni = true;
    for (int k = 1; k < it->count; k++)
      uni = uni && nbc__type_equal(it->items[k], it->items[0]);
    if (uni && it->count != at->ndim)
      return TYPING(I, args[1], "Expected %d indices, got %d", at->ndim, it->count), NULL;
    valid = uni && nbc__type_is_int(it->items[0]);
  }
  if (!valid)
    return TYPING(I, args[1], "%s is not a valid index", nbc__infer_tname(I, it)), NULL;
  const nbc__type *dt = at->dtype;
  if (!nbc__type_is_int(dt) && !nbc__type_is_float(dt))
    return TYPING(I, args[0], "%s requires array of integer or float type, got %s", op,
                  nbc__infer_tname(I, dt)),
           NULL;
  if (store) {
    const nbc__type *vt = args[2]->type;
    if (at->readonly) return TYPING(I, args[0], "cannot modify a read-only array"), NULL;
    if (!nbc__type_is_number(vt) || !nbc__type_can_convert(vt, dt))
      return TYPING(I, args[2], "cannot convert %s to %s in %s()", nbc__infer_tname(I, vt),
                    nbc__infer_tname(I, dt), op),
             NULL;
    nbc__infer_cast(args[2], dt);
  }
  nbc__call *c = nbc__infer_call_new(I, n, NBC__B_CACHE_HINT, fname, store ? 3 : 2);
  if (!c) return NULL;
  c->argtypes[0] = at;
  c->argtypes[1] = it;
  if (store) c->argtypes[2] = dt;
  /* A tuple display is non-negative item by item, cuda.grid(n) always; other tuple values
   * are not analysed. */
  nbc__node *ix = args[1];
  const nbc__call *grid = ix->kind == NBC__N_CALL ? ix->info : NULL;
  bool nonneg = ix->kind == NBC__N_TUPLE || nbc__infer_nonneg(I, ix) ||
                (grid && grid->builtin == NBC__B_CUDA_GRID);
  for (int k = 0; ix->kind == NBC__N_TUPLE && k < ix->list.count; k++)
    nonneg = nonneg && nbc__infer_nonneg(I, ix->list.items[k]);
  c->nonneg = nonneg;
  c->ret = store ? T(NBC__T_NONE) : dt;
  return c->ret;
}

/* A kernel-language function of no arguments (syncthreads(), cg.this_grid()): the builtin,
 * returning ret. */
static const nbc__type *call_no_args(infer *I, nbc__node *n, const char *fname,
                                     const nbc__type **types, int nargs, nbc__builtin builtin,
                                     const nbc__type *ret) {
  if (!nbc__infer_call_no_keywords(I, n, fname)) return NULL;
  if (nargs) return nbc__infer_call_arg_list_error(I, n, fname, types, nargs);
  nbc__call *c = nbc__infer_call_new(I, n, builtin, fname, 0);
  if (!c) return NULL;
  c->ret = ret;
  return c->ret;
}

/* grid(ndim) / gridsize(ndim): ndim a constant 1, 2 or 3. */
static const nbc__type *call_grid(infer *I, nbc__node *n, const char *fname,
                                  const nbc__type **types, int nargs) {
  if (!nbc__infer_call_no_keywords(I, n, fname)) return NULL;
  int64_t nd;
  if (nargs == 1 && !nbc__infer_const_int(I, n->list.items[0], &nd)) /* numba's words too */
    return TYPING(I, n,
                  "%s() takes one constant argument, 1, 2 or 3 (RequireLiteralValue: "
                  "its argument is not a constant)",
                  fname),
           NULL;
  if (nargs != 1 || nd < 1 || nd > 3)
    return TYPING(I, n, "%s() takes one constant argument, 1, 2 or 3", fname), NULL;
  nbc__call *c = nbc__infer_call_new(
      I, n, strcmp(fname, "cuda.grid") == 0 ? NBC__B_CUDA_GRID : NBC__B_CUDA_GRIDSIZE, fname,
      1);
  if (!c) return NULL;
  c->argtypes[0] = types[0];
  if (nd == 1)
    c->ret = T(NBC__T_INT64);
  else {
    const nbc__type *items[3] = {T(NBC__T_INT64), T(NBC__T_INT64), T(NBC__T_INT64)};
    c->ret = nbc__type_tuple(I->ctx, items, (int)nd);
  }
  return c->ret;
}

/* const.array_like(a): numba's constant-memory copy of a global array. Global arrays are
 * frozen into constant memory already (NBC_GLOBAL_ARRAY), so the call is `a` itself; any
 * other argument is refused, as numba refuses a non-constant one. */
static const nbc__type *call_const_array(infer *I, nbc__node *n, const char *fname,
                                         const nbc__type **types, int nargs) {
  if (!nbc__infer_call_no_keywords(I, n, fname)) return NULL;
  const nbc__node *a = nargs == 1 ? n->list.items[0] : NULL;
  const nbc__global *G = a && a->kind == NBC__N_NAME && a->var < 0 ? a->info : NULL;
  if (!G || G->g.kind != NBC_GLOBAL_ARRAY || !types[0])
    return TYPING(I, n,
                  "%s() takes one global array (a numpy array of the kernel's module, "
                  "frozen at compile time)",
                  fname),
           NULL;
  nbc__call *c = nbc__infer_call_new(I, n, NBC__B_CUDA_CONST_ARRAY, fname, 1);
  if (!c) return NULL;
  c->argtypes[0] = types[0];
  c->ret = types[0];
  return c->ret;
}

/* cuda.<name>(...): lib_cuda.c's table says which typing path the name takes. */
/* numba.cuda.libdevice.<f>(...): libdevice's function with numba-cuda's signature (its
 * ConcreteTemplate: the arguments convert to the parameter types); a function that also
 * stores results through pointers returns them in a tuple after its own result. */
static const nbc__type *call_libdevice(infer *I, nbc__node *n, const char *fname,
                                       const nbc__type **types, int nargs) {
  const char *name = fname + strlen("cuda.libdevice.");
  const nbc__type *ret;
  const char *codes;
  if (!nbc__infer_call_no_keywords(I, n, fname)) return NULL;
  if (!nbc__libdevice_find(name, &ret, &codes))
    return UNSUPPORTED(I, n, "unknown libdevice function %s", fname), NULL;
  const nbc__type *params[8], *outs[9];
  int nvalues = 0, nouts = 0;
  if (ret->kind != NBC__T_NONE) outs[nouts++] = ret;
  for (const char *c = codes; c[0] && c[1] && nvalues < 8 && nouts < 9; c += 2) {
    if (c[1] == 'p')
      outs[nouts++] = nbc__libdevice_type(c[0]);
    else
      params[nvalues++] = nbc__libdevice_type(c[0]);
  }
  if (nargs != nvalues) return nbc__infer_call_arg_list_error(I, n, fname, types, nargs);
  for (int i = 0; i < nargs; i++)
    if (!nbc__type_is_number(types[i]) || !nbc__type_can_convert(types[i], params[i]))
      return nbc__infer_call_arg_list_error(I, n, fname, types, nargs);
  nbc__call *c = nbc__infer_call_new(I, n, NBC__B_LIBDEVICE,
                                     nbc__arena_printf(I->ctx->arena, "__nv_%s", name), nargs);
  if (!c) return NULL;
  for (int i = 0; i < nargs; i++)
    c->argtypes[i] = params[i];
  bool pointers = strchr(codes, 'p') != NULL;
  c->ret = !pointers ? ret : nbc__type_tuple(I->ctx, outs, nouts);
  return c->ret;
}

/* numba.cuda.fp16.<f>(...) and numba.cuda.bf16.<f>(...): cuda_fp16.h's or cuda_bf16.h's
 * function through its Numba-ABI wrapper in the shim (fp16.c), typed by numba-cuda's
 * signature: the arguments convert to the parameter types; lowered as a declared device
 * function. */
static const nbc__type *call_fp16(infer *I, nbc__node *n, const char *fname,
                                  const nbc__type **types, int nargs) {
  const nbc__type *ret, *params[4];
  int nparams = 0;
  const char *symbol;
  if (!nbc__infer_call_no_keywords(I, n, fname)) return NULL;
  bool bf16 = strncmp(fname, "cuda.bf16.", 10) == 0;
  if (!(bf16 ? nbc__bf16_find : nbc__fp16_find)(I->ctx, fname + 10, &ret, params, &nparams,
                                                &symbol))
    return UNSUPPORTED(I, n, "unknown %s function %s", bf16 ? "bf16" : "fp16", fname), NULL;
  if (nargs != nparams) return nbc__infer_call_arg_list_error(I, n, fname, types, nargs);
  for (int i = 0; i < nargs; i++)
    if (!(nbc__type_is_number(types[i]) || nbc__type_is_bf16(types[i])) ||
        !nbc__type_can_convert(types[i], params[i]))
      return nbc__infer_call_arg_list_error(I, n, fname, types, nargs);
  nbc__call *c = nbc__infer_call_new(I, n, NBC__B_EXTERN, symbol, nargs);
  if (!c) return NULL;
  for (int i = 0; i < nargs; i++)
    c->argtypes[i] = params[i];
  c->ret = ret;
  return c->ret;
}

/* A vector type's constructor (numba's vector_types.py): arguments that give the vector's
 * elements in order, each a number (converted to the element type) or a vector of the same
 * element type (its elements; x1 vectors count as one), count elements in all. */
static const nbc__type *call_vector(infer *I, nbc__node *n, const char *fname,
                                    const nbc__type **types, int nargs) {
  const char *base;
  int count;
  if (!nbc__infer_call_no_keywords(I, n, fname)) return NULL;
  if (!nbc__vector_type_find(fname + strlen("cuda."), &base, &count))
    return UNSUPPORTED(I, n, "unknown vector type %s", fname), NULL;
  const nbc__type *dtype = nbc__type_by_name(base, strlen(base));
  int total = 0;
  for (int i = 0; i < nargs; i++) {
    if (types[i] && types[i]->kind == NBC__T_VECTOR && nbc__type_equal(types[i]->dtype, dtype))
      total += types[i]->count;
    else if (types[i] && nbc__type_is_number(types[i]) && !nbc__type_is_complex(types[i]))
      total += 1;
    else
      return nbc__infer_call_arg_list_error(I, n, fname, types, nargs);
  }
  if (total != count) return nbc__infer_call_arg_list_error(I, n, fname, types, nargs);
  nbc__call *c = nbc__infer_call_new(I, n, NBC__B_VECTOR, fname, nargs);
  if (!c) return NULL;
  for (int i = 0; i < nargs; i++)
    c->argtypes[i] = types[i];
  c->ret = nbc__type_vector(I->ctx, dtype, count);
  return c->ret;
}

/* numba's carray(ptr, shape, dtype=None) / farray: an array of the given shape (an integer or
 * a tuple of integers) in C or F order over the memory ptr, a CPointer, points to; its dtype
 * is the pointer's, and a dtype given must be that one (numba's BaseCArrayTemplate). */
static const nbc__type *call_carray(infer *I, nbc__node *n, const char *fname,
                                    const nbc__type **types, int nargs) {
  const char *what = fname + 5;
  int npos = nbc__infer_call_positional(n);
  const nbc__type *dtype_arg = npos > 2 ? types[2] : NULL;
  for (int i = npos; i < nargs; i++) {
    const char *kw = n->list.items[i]->str;
    if (!kw || strcmp(kw, "dtype") != 0 || dtype_arg)
      return TYPING(I, n->list.items[i], "%s() got an unexpected keyword argument '%s'", what,
                    kw ? kw : "?"),
             NULL;
    dtype_arg = types[i];
  }
  if (npos < 2 || npos > 3)
    return TYPING(I, n, "%s() takes a pointer, a shape and an optional dtype (%d given)", what,
                  nargs),
           NULL;
  if (types[0]->kind != NBC__T_POINTER)
    return TYPING(I, n->list.items[0],
                  "%s() takes a pointer (numba's CPointer) as its first "
                  "argument, not %s",
                  what, nbc__infer_tname(I, types[0])),
           NULL;
  const nbc__type *shape = types[1];
  int ndim = 1;
  if (shape->kind == NBC__T_TUPLE) {
    ndim = shape->count;
    for (int k = 0; k < ndim; k++)
      if (!nbc__type_is_int(shape->items[k])) ndim = -1;
  } else if (!nbc__type_is_int(shape)) {
    ndim = -1;
  }
  if (ndim < 1 || ndim > 32)
    return TYPING(I, n->list.items[1], "%s() takes a shape of 1 to 32 integers, not %s", what,
                  nbc__infer_tname(I, shape)),
           NULL;
  const nbc__type *dt = types[0]->dtype;
  if (dtype_arg) {
    const nbc__type *want = nbc__infer_call_cuda_dtype_of(I, n, dtype_arg);
    if (!want) return NULL;
    if (!nbc__type_equal(want, dt))
      return TYPING(I, n, "%s(): mismatching dtype '%s' for pointer type '%s'", what,
                    nbc__infer_tname(I, want), nbc__infer_tname(I, types[0])),
             NULL;
  }
  nbc__call *c = nbc__infer_call_new(I, n, NBC__B_CARRAY, fname, 2);
  const nbc__type *at =
      c ? nbc__type_array(I->ctx, dt, ndim, what[0] == 'c' ? 'C' : 'F') : NULL;
  if (!at) return NULL;
  c->argtypes[0] = types[0];
  c->argtypes[1] = shape;
  c->ret = at;
  return at;
}

const nbc__type *nbc__infer_call_cuda(infer *I, nbc__node *n, const char *fname,
                                      const nbc__type **types, int nargs) {
  switch (nbc__cuda_name_call(nbc__cuda_name_find(fname + 5))) {
  case NBC__KERNEL_CALL_ATOMIC:
    return call_atomic(I, n, fname, types, nargs);
  case NBC__KERNEL_CALL_CONST_ARRAY:
    return call_const_array(I, n, fname, types, nargs);
  case NBC__KERNEL_CALL_INTRINSIC: /* lib_cuda.c's table */
    return nbc__lib_cuda_type(I, n, fname, types, nargs);
  case NBC__KERNEL_CALL_SYNCTHREADS:
    return call_no_args(I, n, fname, types, nargs, NBC__B_CUDA_SYNCTHREADS, T(NBC__T_NONE));
  case NBC__KERNEL_CALL_GRID:
    return call_grid(I, n, fname, types, nargs);
  case NBC__KERNEL_CALL_LIBDEVICE:
    return call_libdevice(I, n, fname, types, nargs);
  case NBC__KERNEL_CALL_THIS_GRID: /* numba's GridGroup: the grid of the cooperative launch */
    return call_no_args(I, n, fname, types, nargs, NBC__B_CG_THIS_GRID, T(NBC__T_GRID_GROUP));
  case NBC__KERNEL_CALL_FP16:
  case NBC__KERNEL_CALL_BF16:
    return call_fp16(I, n, fname, types, nargs);
  case NBC__KERNEL_CALL_VECTOR:
    return call_vector(I, n, fname, types, nargs);
  case NBC__KERNEL_CALL_CACHE_HINT:
    return call_cache_hint(I, n, fname);
  case NBC__KERNEL_CALL_CARRAY:
    return call_carray(I, n, fname, types, nargs);
  case NBC__KERNEL_CALL_ARRAY: /* typed before its arguments, in nbc__infer_call */
  case NBC__KERNEL_CALL_NONE:
    break;
  }
  return UNSUPPORTED(I, n, "unsupported call of %s", fname), NULL;
}
