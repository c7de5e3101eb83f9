/* infer_call.c — type inference of calls: builtins (range len abs min max int float bool
 * round), dtype conversions (float32(x)), math functions, the cuda module (grid, gridsize,
 * syncthreads, shared/local arrays, atomics) and calls of Python functions, which are
 * specialised for the argument types (infer.c caches them per types and refuses
 * recursion). Each call records an nbc__call in the CALL node's ->info for lower.c, with
 * the types its arguments convert to (also set as the arguments' ->cast).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/infer.h"

/* ------------------------------------------------------------------------ calls */

static nbc__call *call_new(infer *I, nbc__node *n, nbc__builtin b, const char *name,
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

/* Positional arguments only (keywords are checked by the callers that take them). */
static int positional(const nbc__node *n) {
  int k = 0;
  while (k < n->list.count && n->list.items[k]->kind != NBC__N_KEYWORD)
    k++;
  return k;
}

static bool no_keywords(infer *I, nbc__node *n, const char *what) {
  if (positional(n) != n->list.count)
    return UNSUPPORTED(I, n->list.items[positional(n)], "%s() takes no keyword arguments",
                       what);
  return true;
}

/* Types the arguments into types[]; false when any is unknown. */
static bool call_args(infer *I, nbc__node *n, const nbc__type **types, int max) {
  bool ok = true;
  for (int i = 0; i < n->list.count && i < max; i++) {
    nbc__node *a = n->list.items[i];
    types[i] = nbc__infer_expr(I, a->kind == NBC__N_KEYWORD ? a->a : a);
    if (a->kind == NBC__N_KEYWORD) a->type = types[i];
    if (!types[i]) ok = false;
  }
  return ok;
}

static const nbc__type *arg_list_error(infer *I, nbc__node *n, const char *what,
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

static const nbc__type *call_builtin(infer *I, nbc__node *n, const char *name,
                                     const nbc__type **types, int nargs) {
  nbc__builtin b;
  if (!no_keywords(I, n, name)) return NULL;
  if (strcmp(name, "range") == 0) {
    const char *why;
    const nbc__type *ctr = nbc__type_range(types, nargs, &why);
    if (!ctr) return arg_list_error(I, n, "range", types, nargs);
    nbc__call *c = call_new(I, n, NBC__B_RANGE, "range", nargs);
    if (!c) return NULL;
    for (int i = 0; i < nargs; i++) {
      c->argtypes[i] = ctr;
      nbc__infer_cast(n->list.items[i], ctr);
    }
    c->ret = T(NBC__T_RANGE);
    return c->ret;
  }
  if (strcmp(name, "len") == 0) {
    if (nargs != 1 || !(is_kind(types[0], NBC__T_ARRAY) || is_kind(types[0], NBC__T_TUPLE)))
      return arg_list_error(I, n, "len", types, nargs);
    nbc__call *c = call_new(I, n, NBC__B_LEN, "len", 1);
    if (!c) return NULL;
    c->argtypes[0] = types[0];
    c->ret = T(NBC__T_INT64);
    return c->ret;
  }
  if (strcmp(name, "abs") == 0)
    b = NBC__B_ABS;
  else if (strcmp(name, "min") == 0)
    b = NBC__B_MIN;
  else if (strcmp(name, "max") == 0)
    b = NBC__B_MAX;
  else if (strcmp(name, "int") == 0)
    b = NBC__B_INT;
  else if (strcmp(name, "float") == 0)
    b = NBC__B_FLOAT;
  else if (strcmp(name, "bool") == 0)
    b = NBC__B_BOOL;
  else
    b = NBC__B_ROUND;
  const nbc__type *conv[16];
  const char *why = NULL;
  const nbc__type *r =
      nargs <= 16 ? nbc__type_call_builtin(name, types, nargs, conv, &why) : NULL;
  if (!r) {
    if (why && strstr(why, "not supported") && nargs > 0) return TYPING(I, n, "%s", why), NULL;
    return arg_list_error(I, n, name, types, nargs);
  }
  nbc__call *c = call_new(I, n, b, name, nargs);
  if (!c) return NULL;
  for (int i = 0; i < nargs; i++) {
    c->argtypes[i] = conv[i];
    nbc__infer_cast(n->list.items[i], conv[i]);
  }
  c->ret = r;
  return r;
}

static const nbc__type *call_math(infer *I, nbc__node *n, const char *name,
                                  const nbc__type **types, int nargs) {
  if (!no_keywords(I, n, name)) return NULL;
  const nbc__type *conv[2];
  const char *why;
  const nbc__type *r = nargs <= 2 ? nbc__type_math(name, types, nargs, conv, &why) : NULL;
  if (!r) {
    char what[64];
    snprintf(what, sizeof what, "math.%s", name);
    return arg_list_error(I, n, what, types, nargs);
  }
  nbc__call *c = call_new(I, n, NBC__B_MATH, name, nargs);
  if (!c) return NULL;
  for (int i = 0; i < nargs; i++) {
    c->argtypes[i] = conv[i];
    nbc__infer_cast(n->list.items[i], conv[i]);
  }
  c->ret = r;
  return r;
}

/* numpy.<ufunc> on scalars: numba's loop typing (numpy.c); the call is recorded as the
 * builtin computing the same thing on the loop's type, each argument converted to it. */
static const nbc__type *call_numpy(infer *I, nbc__node *n, const char *name,
                                   const nbc__type **types, int nargs) {
  char what[64];
  snprintf(what, sizeof what, "numpy.%s", name);
  if (!no_keywords(I, n, what)) return NULL;
  const nbc__type *loop = NULL;
  const char *why = NULL;
  const nbc__type *r = nbc__type_numpy(name, types, nargs, &loop, &why);
  if (!r) {
    if (why) return UNSUPPORTED(I, n, "%s: %s", what, why), NULL;
    return arg_list_error(I, n, what, types, nargs);
  }
  const char *math = NULL;
  nbc__builtin b = nbc__numpy_builtin(name, loop, &math);
  nbc__call *c = call_new(I, n, b, b == NBC__B_MATH ? math : name, nargs);
  if (!c) return NULL;
  for (int i = 0; i < nargs; i++) {
    c->argtypes[i] = loop;
    nbc__infer_cast(n->list.items[i], loop);
  }
  c->ret = r;
  return r;
}

/* The dtype of a shared/local array: a type global, cuda.float32, ... */
static const nbc__type *dtype_of(infer *I, nbc__node *n, const nbc__type *t) {
  if (is_kind(t, NBC__T_DTYPE)) return t->dtype;
  TYPING(I, n, "the dtype must be a numba type such as float32, not %s",
         nbc__infer_tname(I, t));
  return NULL;
}

static const nbc__type *call_array(infer *I, nbc__node *n, const char *fname,
                                   const nbc__type **types) {
  bool shared = strcmp(fname, "cuda.shared.array") == 0;
  nbc__node *shape = NULL, *dtype = NULL;
  const nbc__type *dtype_t = NULL;
  int npos = positional(n);
  for (int i = 0; i < n->list.count; i++) {
    nbc__node *a = n->list.items[i];
    const char *kw = a->kind == NBC__N_KEYWORD ? a->str
                     : i == 0                  ? "shape"
                     : i == 1                  ? "dtype"
                                               : NULL;
    nbc__node *v = a->kind == NBC__N_KEYWORD ? a->a : a;
    if (!kw || (strcmp(kw, "shape") != 0 && strcmp(kw, "dtype") != 0) || (i >= 2 && i < npos))
      return UNSUPPORTED(I, a, "%s() takes (shape, dtype)", fname), NULL;
    if (strcmp(kw, "shape") == 0) {
      if (shape) return TYPING(I, a, "%s() got multiple values for 'shape'", fname), NULL;
      shape = v;
    } else {
      if (dtype) return TYPING(I, a, "%s() got multiple values for 'dtype'", fname), NULL;
      dtype = v;
      dtype_t = types[i];
    }
  }
  if (!shape || !dtype)
    return TYPING(I, n, "%s() missing required argument '%s'", fname,
                  shape ? "dtype" : "shape"),
           NULL;
  const nbc__type *dt = dtype_of(I, dtype, dtype_t);
  if (!dt) return NULL;
  int64_t dims[32];
  int ndim = 0;
  if (shape->kind == NBC__N_TUPLE) {
    if (shape->list.count < 1 || shape->list.count > 32)
      return UNSUPPORTED(I, shape, "an array shape of %d dimensions", shape->list.count), NULL;
    for (int i = 0; i < shape->list.count; i++)
      if (!nbc__infer_const_int(I, shape->list.items[i], &dims[ndim++]))
        return TYPING(I, shape->list.items[i], "the shape of %s() must be constant integers",
                      fname),
               NULL;
  } else if (!nbc__infer_const_int(I, shape, &dims[ndim++]))
    return TYPING(I, shape, "the shape of %s() must be a constant integer or a tuple of them",
                  fname),
           NULL;
  int64_t total = 1;
  for (int i = 0; i < ndim; i++) {
    if (dims[i] < 0)
      return TYPING(I, shape, "negative dimension %lld in %s()", (long long)dims[i], fname),
             NULL;
    if (dims[i] > 0 && total > INT64_MAX / dims[i])
      return TYPING(I, shape, "array too large in %s()", fname), NULL;
    total *= dims[i];
  }
  nbc__call *c = call_new(I, n, shared ? NBC__B_CUDA_SHARED_ARRAY : NBC__B_CUDA_LOCAL_ARRAY,
                          fname, n->list.count);
  if (!c) return NULL;
  for (int i = 0; i < n->list.count; i++)
    c->argtypes[i] = types[i];
  c->shape = nbc__infer_alloc(I, sizeof *c->shape * (size_t)ndim);
  if (!c->shape) return NULL;
  memcpy(c->shape, dims, sizeof *dims * (size_t)ndim);
  c->ret = nbc__type_array(I->ctx, dt, ndim, 'C');
  return c->ret;
}

static const nbc__type *call_atomic(infer *I, nbc__node *n, const char *fname,
                                    const nbc__type **types, int nargs) {
  if (!no_keywords(I, n, fname)) return NULL;
  if (nargs != 3 || !is_kind(types[0], NBC__T_ARRAY))
    return arg_list_error(I, n, fname, types, nargs);
  const nbc__type *at = types[0], *dt = at->dtype;
  nbc__type_kind k = dt->kind;
  if (k != NBC__T_INT32 && k != NBC__T_UINT32 && k != NBC__T_INT64 && k != NBC__T_UINT64 &&
      k != NBC__T_FLOAT32 && k != NBC__T_FLOAT64)
    return TYPING(I, n, "%s() of an array of %s is not supported", fname,
                  nbc__infer_tname(I, dt)),
           NULL;
  /* The index: an integer or a tuple of integers, one per dimension. */
  nbc__node *idx = n->list.items[1];
  const nbc__type *it = types[1];
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
  if (!nbc__type_is_number(types[2]) || !nbc__type_can_convert(types[2], dt))
    return TYPING(I, n->list.items[2], "cannot convert %s to %s in %s()",
                  nbc__infer_tname(I, types[2]), nbc__infer_tname(I, dt), fname),
           NULL;
  nbc__builtin b = strcmp(fname, "cuda.atomic.add") == 0   ? NBC__B_ATOMIC_ADD
                   : strcmp(fname, "cuda.atomic.sub") == 0 ? NBC__B_ATOMIC_SUB
                   : strcmp(fname, "cuda.atomic.max") == 0 ? NBC__B_ATOMIC_MAX
                                                           : NBC__B_ATOMIC_MIN;
  nbc__call *c = call_new(I, n, b, fname, 3);
  if (!c) return NULL;
  c->argtypes[0] = at;
  c->argtypes[1] = nbc__type_is_int(it) ? T(NBC__T_INT64) : it;
  c->argtypes[2] = dt;
  nbc__infer_cast(n->list.items[2], dt);
  c->ret = dt;
  return dt;
}

static const nbc__type *call_cuda(infer *I, nbc__node *n, const char *fname,
                                  const nbc__type **types, int nargs) {
  if (strncmp(fname, "cuda.atomic.", 12) == 0) return call_atomic(I, n, fname, types, nargs);
  if (strcmp(fname, "cuda.shared.array") == 0 || strcmp(fname, "cuda.local.array") == 0)
    return call_array(I, n, fname, types);
  if (!no_keywords(I, n, fname)) return NULL;
  if (strcmp(fname, "cuda.syncthreads") == 0) {
    if (nargs) return arg_list_error(I, n, fname, types, nargs);
    nbc__call *c = call_new(I, n, NBC__B_CUDA_SYNCTHREADS, fname, 0);
    if (!c) return NULL;
    c->ret = T(NBC__T_NONE);
    return c->ret;
  }
  /* grid(ndim) / gridsize(ndim): ndim a constant 1, 2 or 3. */
  int64_t nd;
  if (nargs != 1 || !nbc__infer_const_int(I, n->list.items[0], &nd) || nd < 1 || nd > 3)
    return TYPING(I, n, "%s() takes one constant argument, 1, 2 or 3", fname), NULL;
  nbc__call *c =
      call_new(I, n, strcmp(fname, "cuda.grid") == 0 ? NBC__B_CUDA_GRID : NBC__B_CUDA_GRIDSIZE,
               fname, 1);
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

/* A Python function: find its FUNCDEF and nbc__infer_specialise it for the argument types. */
static const nbc__type *call_python(infer *I, nbc__node *n, nbc__global *G,
                                    const nbc__type **types, int nargs) {
  if (!no_keywords(I, n, G->g.name)) return NULL;
  const nbc__module *module = G->module ? G->module : I->fn->module;
  const nbc_resolver_t *resolver = G->g.resolver ? G->g.resolver : I->fn->resolver;
  nbc__node *def = NULL;
  bool same = !G->g.source || (module && module->file && module->file->text &&
                               strcmp(G->g.source, module->file->text) == 0);
  if (same && module) def = nbc__module_function(module, G->g.name);
  if (!def && G->g.source) {
    /* Another source: load it once per compilation. */
    nbc__module *m = NULL;
    for (int i = 0; i < I->P->nmodules; i++)
      if (strcmp(I->P->modules[i]->file->text, G->g.source) == 0) m = I->P->modules[i];
    if (!m) {
      nbc__file *f = nbc__infer_alloc(I, sizeof *f);
      if (!f) return NULL;
      f->name = G->g.filename ? G->g.filename : "<string>";
      f->text = G->g.source;
      f->size = strlen(G->g.source);
      f->first_line = G->g.first_line > 0 ? G->g.first_line : 1;
      f->col_offset = G->g.col_offset;
      m = nbc__module_load(I->ctx, f);
      if (!m) {
        I->failed = true;
        return NULL;
      }
      nbc__module **ms = nbc__infer_alloc(I, sizeof *ms * (size_t)(I->P->nmodules + 1));
      if (!ms) return NULL;
      if (I->P->nmodules) memcpy(ms, I->P->modules, sizeof *ms * (size_t)I->P->nmodules);
      ms[I->P->nmodules++] = m;
      I->P->modules = ms;
    }
    module = m;
    def = nbc__module_function(m, G->g.name);
  }
  if (!def) return TYPING(I, n, "cannot find the source of function '%s'", G->g.name), NULL;
  if (!nbc__infer_check_params(I->ctx, I, def)) return NULL;
  if (def->params.count != nargs)
    return TYPING(I, n, "%s() takes %d positional argument%s but %d %s given", G->g.name,
                  def->params.count, def->params.count == 1 ? "" : "s", nargs,
                  nargs == 1 ? "was" : "were"),
           NULL;
  for (int i = 0; i < nargs; i++)
    if (!nbc__type_is_number(types[i]) && !is_kind(types[i], NBC__T_ARRAY) &&
        !is_kind(types[i], NBC__T_TUPLE))
      return TYPING(I, n->list.items[i], "cannot pass a value of type %s to '%s'",
                    nbc__infer_tname(I, types[i]), G->g.name),
             NULL;
  nbc__func *callee =
      nbc__infer_specialise(I->P, module, def, resolver, types, nargs, NULL, false, n, I);
  if (!callee) return NULL;
  if (G->g.forceinline) callee->forceinline = true;
  nbc__call *c = call_new(I, n, NBC__B_FUNC, G->g.name, nargs);
  if (!c) return NULL;
  c->func = callee;
  for (int i = 0; i < nargs; i++)
    c->argtypes[i] = types[i];
  c->ret = callee->ret;
  if (I->final) {
    if (I->ncallees == I->capcallees) {
      int cap = I->capcallees ? 2 * I->capcallees : 8;
      nbc__func **cs = nbc__infer_alloc(I, sizeof *cs * (size_t)cap);
      if (!cs) return NULL;
      if (I->ncallees) memcpy(cs, I->callees, sizeof *cs * (size_t)I->ncallees);
      I->callees = cs;
      I->capcallees = cap;
    }
    I->callees[I->ncallees++] = callee;
  }
  if (is_kind(callee->ret, NBC__T_VOID)) return T(NBC__T_NONE);
  return callee->ret;
}

const nbc__type *nbc__infer_call(infer *I, nbc__node *n) {
  n->info = NULL;
  const nbc__type *f = nbc__infer_expr(I, n->a);
  const nbc__type *types[64];
  int nargs = n->list.count;
  if (nargs > 64) return UNSUPPORTED(I, n, "calls with more than 64 arguments"), NULL;
  bool ok = call_args(I, n, types, 64);
  if (!f || !ok) return NULL;
  int npos = positional(n);
  if (f->kind == NBC__T_DTYPE) {
    if (!no_keywords(I, n, f->name)) return NULL;
    if (npos != 1 || !nbc__type_is_number(types[0]) ||
        !nbc__type_can_convert(types[0], f->dtype))
      return arg_list_error(I, n, nbc__infer_tname(I, f), types, nargs);
    nbc__call *c = call_new(I, n, NBC__B_CAST, f->name, 1);
    if (!c) return NULL;
    c->argtypes[0] = types[0];
    c->ret = f->dtype;
    return c->ret;
  }
  if (f->kind != NBC__T_FUNCTION)
    return TYPING(I, n, "'%s' object is not callable", nbc__infer_tname(I, f)), NULL;
  const nbc__global *G = n->a->kind == NBC__N_NAME && n->a->var < 0 ? n->a->info : NULL;
  if (G && G->g.kind == NBC_GLOBAL_FUNCTION)
    return call_python(I, n, (nbc__global *)G, types, npos == nargs ? nargs : npos);
  if (G && nbc__infer_is_builtin(G)) return call_builtin(I, n, G->g.name, types, nargs);
  if (strncmp(f->name, "math.", 5) == 0) return call_math(I, n, f->name + 5, types, nargs);
  if (strncmp(f->name, "numpy.", 6) == 0) return call_numpy(I, n, f->name + 6, types, nargs);
  if (strncmp(f->name, "cuda.", 5) == 0) return call_cuda(I, n, f->name, types, nargs);
  return UNSUPPORTED(I, n, "unsupported call of %s", nbc__infer_tname(I, f)), NULL;
}
