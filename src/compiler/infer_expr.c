/* infer_expr.c — the types of expressions: names (locals by their bindings, globals
 * through infer_global.c), attributes of modules (math, cmath, numpy, numba, cuda) and
 * values, binary, unary and boolean operators, comparisons, conditional expressions and
 * tuples. Subscripts are typed in infer_index.c, calls in infer_call.c. What each records for
 * lowering (->cast, ->info) is listed at the top of infer.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/infer.h"

/* How a function binds one local name (nbc__each_binding): bindings counted, a rebinding
 * (augmented assignment, loop target) as two; value, the last plain `name = value`'s value
 * (NULL when it unpacks). */
typedef struct bindings {
  const char *name;
  int count;
  const nbc__node *value;
} bindings;

static void add_binding(bindings *b, const nbc__node *t, const nbc__node *st) {
  if (st->kind != NBC__N_ASSIGN) {
    b->count += 2; /* rebinds it: never a constant */
    return;
  }
  b->count++;
  b->value = NULL; /* unpacking: not a constant */
  for (int k = 0; k < st->list.count; k++)
    if (st->list.items[k] == t) b->value = st->a;
}

static void count_binding(nbc__node *t, const nbc__node *st, void *data) {
  bindings *b = data;
  if (strcmp(t->str, b->name) == 0) add_binding(b, t, st);
}

/* The bindings of every variable of the function at once (I->binds), for the lookups made
 * per reference: one walk instead of one per reference. */
typedef struct {
  infer *I;
  bindings *binds;
} all_bindings;

static void note_var_binding(nbc__node *t, const nbc__node *st, void *data) {
  all_bindings *a = data;
  int v = nbc__infer_var_find(a->I, t->str);
  if (v >= 0) add_binding(&a->binds[v], t, st);
}

/* The bindings of local variable v in the whole function; NULL when out of memory. The
 * bindings do not change while the function is typed (prune_literal_ifs, ssa.c and
 * closure.c rewrite it before), so the table is built once. */
static const bindings *var_bindings(infer *I, int v) {
  if (!I->binds) {
    all_bindings a = {I, nbc__infer_alloc(I, sizeof(bindings) * (size_t)(I->fn->nvars + 1))};
    if (!a.binds) return NULL;
    nbc__each_binding(&I->fn->def->body, note_var_binding, &a);
    I->binds = a.binds;
    I->nbinds = I->fn->nvars;
  }
  return v < I->nbinds ? &I->binds[v] : NULL;
}

int nbc__infer_expr_local_bindings(nbc__list *body, const char *name,
                                   const nbc__node **pvalue) {
  bindings b = {name, 0, NULL};
  nbc__each_binding(body, count_binding, &b);
  *pvalue = b.value;
  return b.count;
}

/* numba types `N = 100` as the literal 100, which a shape may then use: a local variable
 * that is not a parameter, bound once in the function, to a compile-time integer; or a
 * parameter whose argument was a constant integer (nbc__var.literal). */
static bool const_local_int(infer *I, const nbc__node *n, int64_t *pv, int depth) {
  const nbc__var *v = &I->fn->vars[n->var];
  if (v->literal && v->literal->count == 0) { /* a constant argument */
    *pv = v->literal->value[0];
    return true;
  }
  if (v->is_param || !I->fn->def || depth > 8) return false;
  const bindings *b = var_bindings(I, n->var);
  const nbc__node *value = b ? b->value : NULL;
  if (!b || b->count != 1 || !value) return false;
  if (value->kind == NBC__N_NAME && value->var >= 0)
    return const_local_int(I, value, pv, depth + 1);
  return nbc__infer_const_int(I, value, pv);
}

/* A compile-time integer: an INT literal, its negation, a global integer constant or a local
 * variable bound once to one. */
bool nbc__infer_const_int(infer *I, const nbc__node *n, int64_t *pv) {
  if (!n) return false;
  if (n->kind == NBC__N_NAME && n->var >= 0) return const_local_int(I, n, pv, 0);
  if (n->kind == NBC__N_INT && !n->big) {
    *pv = n->value.i;
    return true;
  }
  if (n->kind == NBC__N_UNARY && n->op == NBC__OP_NEG && n->a && n->a->kind == NBC__N_INT &&
      !n->a->big) {
    *pv = -n->a->value.i;
    return true;
  }
  if (n->kind == NBC__N_NAME && n->var < 0 && n->info) {
    const nbc__global *G = n->info;
    if (G->g.kind == NBC_GLOBAL_INT) {
      *pv = G->g.value.i;
      return true;
    }
  }
  return false;
}

static const nbc__type *name_expr(infer *I, nbc__node *n) {
  int v = nbc__infer_var_find(I, n->str);
  if (v >= 0) {
    n->var = v;
    n->info = NULL;
    const nbc__type *t = I->fn->vars[v].type;
    if (!t) TYPING(I, n, "cannot determine the type of '%s'", n->str);
    return t;
  }
  n->var = -1;
  nbc__global *G = n->info;
  const nbc__scope *where = NULL;
  const nbc__nested *nested = G ? NULL : nbc__scope_find(I->fn->scope, n->str, &where);
  if (nested) { /* a nested function of this function or of one enclosing it (closure.c) */
    G = nbc__infer_alloc(I, sizeof *G);
    if (!G) return NULL;
    G->g.kind = NBC_GLOBAL_FUNCTION;
    G->g.name = nested->name;
    G->module = I->fn->module;
    G->nested = nested;
    G->scope = where;
    n->info = G;
  }
  if (!G) {
    G = nbc__infer_global_lookup(I, n, n->str);
    if (!G) return NULL;
    n->info = G;
  }
  return nbc__infer_global_type(I, n, G);
}

/* A module's float constant (math.pi, numpy.inf) as n's FLOAT global. */
static const nbc__type *float_attr(infer *I, nbc__node *n, double v) {
  nbc_global_t g;
  memset(&g, 0, sizeof g);
  g.kind = NBC_GLOBAL_FLOAT;
  g.value.f = v;
  g.name = n->str;
  if (!n->info) n->info = nbc__infer_global_new(I, &g);
  return T(NBC__T_FLOAT64);
}

/* math's float constants (pi, e, tau, inf, nan; cmath has the same), or NULL (nothing
 * reported) for any other name. */
static const nbc__type *float_constant_attr(infer *I, nbc__node *n) {
  double v;
  return nbc__math_constant(n->str, &v) ? float_attr(I, n, v) : NULL;
}

/* math.<attr> and cmath.<attr>: a float constant or a function of the module. */
static const nbc__type *math_attr(infer *I, nbc__node *n) {
  const nbc__type *t = float_constant_attr(I, n);
  return t ? t
           : nbc__infer_global_module_function(I, n, "math", n->str, nbc__math_exists,
                                               "attribute ");
}

static const nbc__type *cmath_attr(infer *I, nbc__node *n) {
  const nbc__type *t = float_constant_attr(I, n);
  return t ? t
           : nbc__infer_global_module_function(
                 I, n, "cmath", n->str, nbc__infer_global_cmath_exists, "cmath function ");
}

/* numpy.<attr>: a dtype, a constant or a ufunc (lib_numpy.c). */
static const nbc__type *numpy_attr(infer *I, nbc__node *n) {
  double v;
  if (strcmp(n->str, "newaxis") == 0) return T(NBC__T_NONE); /* None: an array index */
  if (strcmp(n->str, "ndindex") == 0) /* desugar.c rewrites the loops it can */
    return UNSUPPORTED(I, n,
                       "numpy.ndindex(...) is supported as a for loop's iterable, with "
                       "a shape of known length: integers, a tuple display, a "
                       "parameter tuple or a parameter array's .shape"),
           NULL;
  if (nbc__numpy_constant(n->str, &v)) return float_attr(I, n, v);
  if (strcmp(n->str, "dtype") == 0) /* np.dtype("float32"): infer_call.c's call_np_dtype */
    return nbc__type_special(I->ctx, NBC__T_FUNCTION, "numpy.dtype", NULL);
  const nbc__type *t = nbc__numpy_dtype(n->str);
  if (t) return nbc__type_special(I->ctx, NBC__T_DTYPE, nbc__type_name(I->ctx, t), t);
  const char *u = nbc__numpy_ufunc(n->str);
  if (!u && nbc__array_reduction_exists(n->str)) u = n->str; /* np.sum(a)... (arraymath.c) */
  if (u) {
    char buf[128];
    snprintf(buf, sizeof buf, "numpy.%s", u);
    return nbc__type_special(I->ctx, NBC__T_FUNCTION, buf, NULL);
  }
  UNSUPPORTED(I, n, "'numpy.%s' is not supported in kernels", n->str);
  return NULL;
}

/* <mod>.<a> for a cuda MODULE type ("cuda", "cuda.atomic", "cuda.threadIdx"), from
 * lib_cuda.c's table: a namespace is a MODULE type, a function a FUNCTION type named
 * "cuda.<name>", a value an int32 (numba types laneid, warpsize and the index registers as
 * int32); cuda.<dtype> is the dtype. */
/* numba.<name>: its scalar types (numba.float32, numba.boolean, numba.intp...) as dtypes
 * and conversions, numba.types (the same names) and numba.cuda. */
static const nbc__type *numba_attr(infer *I, nbc__node *n) {
  if (strcmp(n->str, "cuda") == 0)
    return nbc__type_special(I->ctx, NBC__T_MODULE, "cuda", NULL);
  if (strcmp(n->str, "types") == 0)
    return nbc__type_special(I->ctx, NBC__T_MODULE, "numba", NULL);
  if (strcmp(n->str, "carray") == 0 || strcmp(n->str, "farray") == 0) /* numba.carray */
    return nbc__type_special(I->ctx, NBC__T_FUNCTION,
                             n->str[0] == 'c' ? "cuda.carray" : "cuda.farray", NULL);
  const nbc__type *t = nbc__type_by_name(n->str, strlen(n->str));
  if (t) return nbc__type_special(I->ctx, NBC__T_DTYPE, n->str, t);
  UNSUPPORTED(I, n,
              "'numba.%s' is not supported in kernels (numba's types, carray, farray "
              "and numba.cuda are)",
              n->str);
  return NULL;
}

static const nbc__type *cuda_attr(infer *I, const nbc__node *n, const char *mod,
                                  const char *a) {
  char buf[160];
  bool top = strcmp(mod, "cuda") == 0;
  const nbc_kernel_name_t *k = top ? nbc__cuda_name_find(a)
                               : strncmp(mod, "cuda.", 5) == 0
                                   ? nbc__cuda_member_find(mod + 5, a)
                                   : NULL;
  if (k) {
    snprintf(buf, sizeof buf, "cuda.%s", k->name);
    switch (k->kind) {
    case NBC_KERNEL_NAMESPACE:
      return nbc__type_special(I->ctx, NBC__T_MODULE, buf, NULL);
    case NBC_KERNEL_FUNCTION:
      return nbc__type_special(I->ctx, NBC__T_FUNCTION, buf, NULL);
    case NBC_KERNEL_VALUE:
      return T(NBC__T_INT32);
    }
  }
  bool bf16 = strcmp(mod, "cuda.bf16") == 0 && strcmp(a, "bfloat16") == 0; /* its type */
  const nbc__type *t = top || bf16 ? nbc__type_by_name(a, strlen(a)) : NULL;
  if (t) return nbc__type_special(I->ctx, NBC__T_DTYPE, a, t);
  UNSUPPORTED(I, n, "unsupported attribute '%s.%s'", mod, a);
  return NULL;
}

/* A kernel-language name bound without the module (`from nbcuda import grid, atomic`,
 * `add = cuda.atomic.add` at module level): typed as cuda.<name> is, with the same errors.
 * A member value (`tx = cuda.threadIdx.x` at module level) is refused, as in numba-cuda:
 * the register can only be read inside the kernel. */
const nbc__type *nbc__infer_expr_cuda_name_type(infer *I, const nbc__node *n,
                                                const char *name) {
  const char *dot = name ? strchr(name, '.') : NULL;
  if (!dot) return cuda_attr(I, n, "cuda", name ? name : "?");
  const nbc_kernel_name_t *k = nbc__cuda_name_find(name);
  if (k && k->kind == NBC_KERNEL_VALUE) {
    UNSUPPORTED(I, n,
                "global '%s' is cuda.%s read outside a kernel, which is not supported: read "
                "cuda.%s inside the kernel",
                n->str, name, name);
    return NULL;
  }
  char head[128];
  snprintf(head, sizeof head, "%.*s", (int)(dot - name), name);
  const nbc__type *ns = cuda_attr(I, n, "cuda", head);
  if (!ns) return NULL;
  if (ns->kind != NBC__T_MODULE) {
    TYPING(I, n, "Unknown attribute '%s' of type %s", dot + 1, nbc__infer_tname(I, ns));
    return NULL;
  }
  return cuda_attr(I, n, ns->name, dot + 1);
}

/* The enum global a node names (Color in Color.red), or NULL. */
const nbc__global *nbc__infer_enum_global(const nbc__node *n) {
  const nbc__global *G = n->kind == NBC__N_NAME && n->var < 0 ? n->info : NULL;
  return G && G->g.kind == NBC_GLOBAL_ENUM ? G : NULL;
}

/* Color.red, Color["red"]: the member of the enum class node o names (its global). */
const nbc__type *nbc__infer_enum_lookup(infer *I, nbc__node *n, const nbc__node *cls,
                                        const nbc__type *ct, const char *name) {
  const nbc__global *G = nbc__infer_enum_global(cls);
  if (!G)
    return UNSUPPORTED(I, n, "an enum class is used by its name in kernels (%s)",
                       nbc__infer_tname(I, ct)),
           NULL;
  return nbc__infer_enum_member(I, n, &G->g, name) < 0
             ? NULL
             : nbc__infer_global_enum_member_type(I, ct);
}

/* `mod.attr` of a Python module (NBC_GLOBAL_MODULE): n becomes the global name
 * "mod.attr", looked up through the resolver as any global, so that the rest of the compiler
 * (calls, constants, arrays, lowering) sees a name. */
static const nbc__type *module_attr(infer *I, nbc__node *n, const char *path) {
  const char *full = nbc__arena_printf(I->ctx->arena, "%s.%s", path, n->str);
  if (!full) return NULL;
  nbc_global_t g;
  if (nbc__infer_resolve(I->fn->resolver, I->fn->module, full, &g) != 0 ||
      g.kind == NBC_GLOBAL_UNDEFINED)
    return TYPING(I, n, "AttributeError: module '%s' has no attribute '%s'", path, n->str),
           NULL;
  nbc__global *G = nbc__infer_global_new(I, &g);
  if (!G) return NULL;
  n->kind = NBC__N_NAME;
  n->str = full;
  n->a = NULL;
  n->var = -1;
  n->info = G;
  return nbc__infer_global_type(I, n, G);
}

static const nbc__type *attr_expr(infer *I, nbc__node *n) {
  /* numba's ArrayCTypes: a.ctypes.data is the address of a's data (uintp); the node becomes
   * the attribute "ctypes.data" of the array */
  if (strcmp(n->str, "data") == 0 && n->a && n->a->kind == NBC__N_ATTR &&
      strcmp(n->a->str, "ctypes") == 0) {
    const nbc__type *arr = nbc__infer_expr(I, n->a->a);
    if (!arr) return NULL;
    if (arr->kind == NBC__T_ARRAY) {
      n->a = n->a->a;
      n->str = "ctypes.data";
    }
  }
  const nbc__type *o = nbc__infer_expr(I, n->a);
  if (!o) return NULL;
  if (nbc__type_is_int_enum(n->a->type) &&
      strcmp(n->str, "value") == 0) { /* m.value: m itself */
    n->a->cast = NULL;
    return n->a->type->dtype;
  }
  const char *path = nbc__py_module_path(o);
  if (path) return module_attr(I, n, path);
  if (o->kind == NBC__T_RECORD) return nbc__infer_record_field(I, n, o, n->str);
  if (o->kind == NBC__T_ENUM_CLASS) return nbc__infer_enum_lookup(I, n, n->a, o, n->str);
  if (o->kind == NBC__T_ENUM && strcmp(n->str, "value") == 0) return o->dtype;
  if (o->kind == NBC__T_MODULE) {
    if (strcmp(o->name, "math") == 0) return math_attr(I, n);
    if (strcmp(o->name, "cmath") == 0) return cmath_attr(I, n);
    if (strcmp(o->name, "numpy") == 0) return numpy_attr(I, n);
    if (strcmp(o->name, "numba") == 0) return numba_attr(I, n);
    if (strcmp(o->name, "cffi.FFI") == 0) {
      if (strcmp(n->str, "from_buffer") == 0)
        return nbc__type_special(I->ctx, NBC__T_FUNCTION, "cffi.from_buffer", NULL);
      return UNSUPPORTED(I, n,
                         "'ffi.%s' is not supported in kernels: of a cffi.FFI object "
                         "they call from_buffer(array)",
                         n->str),
             NULL;
    }
    if (strcmp(o->name, "operator") == 0)
      return nbc__infer_global_module_function(I, n, "operator", n->str, nbc__operator_exists,
                                               "operator function ");
    return cuda_attr(I, n, o->name, n->str);
  }
  if (o->kind == NBC__T_ARRAY) {
    if (strcmp(n->str, "shape") == 0 || strcmp(n->str, "strides") == 0) {
      const nbc__type *items[32]; /* signatures allow at most 32 dimensions */
      int nd = o->ndim < 32 ? o->ndim : 32;
      for (int i = 0; i < nd; i++)
        items[i] = T(NBC__T_INT64);
      return nbc__type_tuple(I->ctx, items, nd);
    }
    if (strcmp(n->str, "size") == 0 || strcmp(n->str, "ndim") == 0 ||
        strcmp(n->str, "itemsize") == 0 || strcmp(n->str, "nbytes") == 0)
      return T(NBC__T_INT64);
    if (strcmp(n->str, "ctypes.data") == 0) return T(NBC__T_UINT64); /* (above) */
    if (strcmp(n->str, "flat") == 0) /* numpy's flat iterator over the array */
      return nbc__type_special(I->ctx, NBC__T_FLAT, NULL, o);
    if (strcmp(n->str, "dtype") == 0 && nbc__type_is_number(o->dtype)) /* numba's DType */
      return nbc__type_special(I->ctx, NBC__T_DTYPE, "dtype", o->dtype);
    /* numba's array_real_part / array_imag_part: a complex array's parts are views of its
     * memory (layout A: every other float); a real array is its own real part, and its
     * imaginary part would be a new array of zeros, which a kernel cannot allocate */
    if (strcmp(n->str, "real") == 0 || strcmp(n->str, "imag") == 0) {
      if (nbc__type_is_complex(o->dtype)) {
        nbc__type *t = (nbc__type *)nbc__type_array(I->ctx, nbc__type_complex_part(o->dtype),
                                                    o->ndim, 'A');
        if (t) t->readonly = o->readonly;
        return t;
      }
      if (n->str[0] == 'r' && nbc__type_is_number(o->dtype)) return o;
      if (nbc__type_is_number(o->dtype)) {
        TYPING(I, n,
               "the imaginary part of %s would be a new array of zeros, and kernels "
               "cannot allocate arrays",
               nbc__infer_tname(I, o));
        return NULL;
      }
    }
    if (strcmp(n->str, "T") == 0) { /* numba's transpose: a view, C and F swapped */
      char layout = o->ndim < 2        ? o->layout
                    : o->layout == 'C' ? 'F'
                    : o->layout == 'F' ? 'C'
                                       : 'A';
      nbc__type *t = (nbc__type *)nbc__type_array(I->ctx, o->dtype, o->ndim, layout);
      if (t) t->readonly = o->readonly;
      return t;
    }
  }
  /* a.dtype.type: the dtype's scalar class (a.dtype.type(x) converts as np.float32(x)) */
  if (o->kind == NBC__T_DTYPE && o->name && strcmp(o->name, "dtype") == 0 &&
      strcmp(n->str, "type") == 0)
    return nbc__type_special(I->ctx, NBC__T_DTYPE, nbc__type_name(I->ctx, o->dtype), o->dtype);
  /* a named tuple's field (numba's NamedTuple): t.x is t[i], the node becomes that */
  if (o->kind == NBC__T_TUPLE && o->field_names) {
    for (int i = 0; i < o->count; i++) {
      if (strcmp(o->field_names[i], n->str) != 0) continue;
      nbc__node *index = nbc__infer_alloc(I, sizeof *index);
      if (!index) return NULL;
      memset(index, 0, sizeof *index);
      index->kind = NBC__N_INT;
      index->tok = n->tok;
      index->var = -1;
      index->value.i = i;
      n->kind = NBC__N_SUBSCRIPT;
      n->b = index;
      n->str = NULL;
      return nbc__infer_expr(I, n);
    }
  }
  /* a vector type's members: x, y, z, w (as many as it has) */
  if (o->kind == NBC__T_VECTOR && n->str[0] && !n->str[1]) {
    const char *at = strchr("xyzw", n->str[0]);
    if (at && at - "xyzw" < o->count) return o->dtype;
  }
  /* numba's .real and .imag of numbers: the parts of a complex, an int or float itself */
  if ((nbc__type_is_int(o) || nbc__type_is_float(o) || nbc__type_is_complex(o)) &&
      (strcmp(n->str, "real") == 0 || strcmp(n->str, "imag") == 0))
    return nbc__type_is_complex(o) ? nbc__type_complex_part(o) : o;
  TYPING(I, n, "Unknown attribute '%s' of type %s", n->str, nbc__infer_tname(I, o));
  return NULL;
}

/* numba's tuple arithmetic: t + u concatenates, t * k (or k * t) repeats t for a constant
 * integer k (none for k <= 0). NULL when the operands are not tuples of these forms, or, with
 * *perr set, after reporting an error. */
static const nbc__type *tuple_binop(infer *I, nbc__node *n, const nbc__type *a,
                                    const nbc__type *b, bool *perr) {
  *perr = true;
  const nbc__type *items[64];
  if (n->op == NBC__OP_ADD && a->kind == NBC__T_TUPLE && b->kind == NBC__T_TUPLE) {
    if (a->count + b->count > 64)
      return UNSUPPORTED(I, n, "tuples of more than 64 items"), NULL;
    for (int i = 0; i < a->count; i++)
      items[i] = a->items[i];
    for (int i = 0; i < b->count; i++)
      items[a->count + i] = b->items[i];
    return nbc__type_tuple(I->ctx, items, a->count + b->count);
  }
  if (n->op != NBC__OP_MUL || (a->kind == NBC__T_TUPLE) == (b->kind == NBC__T_TUPLE)) {
    *perr = false;
    return NULL;
  }
  const nbc__type *t = a->kind == NBC__T_TUPLE ? a : b;
  int64_t k;
  if (!nbc__infer_const_int(I, a->kind == NBC__T_TUPLE ? n->b : n->a, &k))
    return UNSUPPORTED(I, n, "a tuple can be repeated a constant number of times only"), NULL;
  if (k < 0) k = 0;
  if (t->count * k > 64) return UNSUPPORTED(I, n, "tuples of more than 64 items"), NULL;
  for (int64_t r = 0; r < k; r++)
    for (int i = 0; i < t->count; i++)
      items[r * t->count + i] = t->items[i];
  return nbc__type_tuple(I->ctx, items, (int)(t->count * k));
}

/* Numeric operands required: reports "Invalid use of OP with parameters (A, B)". */
static const nbc__type *binop_expr(infer *I, nbc__node *n) {
  const nbc__type *a = nbc__infer_expr(I, n->a), *b = nbc__infer_expr(I, n->b);
  if (!a || !b) return NULL;
  if (a->kind == NBC__T_TUPLE || b->kind == NBC__T_TUPLE) {
    bool err;
    const nbc__type *t = tuple_binop(I, n, a, b, &err);
    if (t || err) return t;
  }
  const nbc__type *args[2];
  const char *why;
  const nbc__type *r = nbc__type_binop_sig(n->op, a, b, args, &why);
  if (!r)
    return TYPING(I, n, "Invalid use of %s with parameters (%s, %s)", nbc__op_text(n->op),
                  nbc__infer_tname(I, a), nbc__infer_tname(I, b)),
           NULL;
  nbc__infer_cast(n->a, args[0]);
  nbc__infer_cast(n->b, args[1]);
  return r;
}

static const nbc__type *unary_expr(infer *I, nbc__node *n) {
  const nbc__type *a = nbc__infer_expr(I, n->a);
  if (!a) return NULL;
  const nbc__type *arg;
  const char *why;
  const nbc__type *r = nbc__type_unop_sig(n->op, a, &arg, &why);
  if (!r)
    return TYPING(I, n, "Invalid use of %s with parameters (%s)", nbc__op_text(n->op),
                  nbc__infer_tname(I, a)),
           NULL;
  nbc__infer_cast(n->a, arg);
  return r;
}

bool nbc__infer_expr_truth(infer *I, nbc__node *n, const nbc__type *t) {
  const char *why;
  if (!t) return false;
  if (!nbc__type_truth(t, &why)) return TYPING(I, n, "%s (%s)", why, nbc__infer_tname(I, t));
  return true;
}

static const nbc__type *boolop_expr(infer *I, nbc__node *n) {
  const nbc__type *a = nbc__infer_expr(I, n->a), *b = nbc__infer_expr(I, n->b);
  if (!a || !b) return NULL;
  if (!nbc__infer_expr_truth(I, n->a, a)) return NULL;
  const nbc__type *u = nbc__type_unify(I->ctx, a, b);
  if (!u)
    return TYPING(I, n, "Cannot unify %s and %s for the value of '%s'", nbc__infer_tname(I, a),
                  nbc__infer_tname(I, b), nbc__op_text(n->op)),
           NULL;
  nbc__infer_cast(n->a, u);
  nbc__infer_cast(n->b, u);
  return u;
}

/* Whether op compares values of types a and b: numbers by numba's rules, tuples item by item
 * (numba's tuple_cmp_ordered and tuple equality: the common items, then the lengths), where
 * each pair of items must compare with != as well as op. One walk over the items, whose
 * leaves check both: asking for != and op of every item in turn doubled the work with each
 * level of nesting. */
static bool comparable_items(nbc__op op, const nbc__type *a, const nbc__type *b, bool item) {
  if (a->kind == NBC__T_TUPLE && b->kind == NBC__T_TUPLE) {
    for (int i = 0; i < a->count && i < b->count; i++)
      if (!comparable_items(op, a->items[i], b->items[i], true)) return false;
    return true;
  }
  if (a->kind == NBC__T_TUPLE || b->kind == NBC__T_TUPLE) return false;
  const nbc__type *conv[2];
  const char *why;
  return (!item || nbc__type_binop_sig(NBC__OP_NE, a, b, conv, &why) != NULL) &&
         nbc__type_binop_sig(op, a, b, conv, &why) != NULL;
}

static bool comparable(nbc__op op, const nbc__type *a, const nbc__type *b) {
  return comparable_items(op, a, b, false);
}

/* An expression that may stay Optional or an IntEnum member (see keep_optional). */
const nbc__type *nbc__infer_expr_keeping_optional(infer *I, nbc__node *n) {
  I->keep_optional = true;
  const nbc__type *t = nbc__infer_expr(I, n);
  I->keep_optional = false;
  return t;
}

static const nbc__type *compare_expr(infer *I, nbc__node *n) {
  int count = n->list.count;
  /* `x is None` / `x is not None` test an Optional itself */
  bool is_test = count == 1 && (n->ops[0] == NBC__OP_IS || n->ops[0] == NBC__OP_ISNOT);
  const nbc__type *left =
      is_test ? nbc__infer_expr_keeping_optional(I, n->a) : nbc__infer_expr(I, n->a);
  const nbc__type **conv =
      nbc__infer_alloc(I, sizeof *conv * (size_t)(2 * (count ? count : 1)));
  if (!conv) return NULL;
  bool ok = left != NULL;
  nbc__node *lnode = n->a;
  for (int i = 0; i < count; i++) {
    nbc__node *rnode = n->list.items[i];
    const nbc__type *right =
        is_test ? nbc__infer_expr_keeping_optional(I, rnode) : nbc__infer_expr(I, rnode);
    if (!left || !right) {
      ok = false;
      left = right;
      lnode = rnode;
      continue;
    }
    nbc__op op = n->ops[i];
    const char *why;
    if (op == NBC__OP_IN || op == NBC__OP_NOTIN) { /* x in tuple: x == one of its items */
      bool ok_in = right->kind == NBC__T_TUPLE;
      for (int k = 0; ok_in && k < right->count; k++)
        ok_in = comparable(NBC__OP_EQ, left, right->items[k]);
      if (!ok_in)
        return UNSUPPORTED(I, n,
                           "unsupported comparison %s %s %s (a kernel tests membership "
                           "in tuples)",
                           nbc__infer_tname(I, left), nbc__op_text(op),
                           nbc__infer_tname(I, right)),
               NULL;
      conv[2 * i] = left;
      conv[2 * i + 1] = right;
    } else if (left->kind == NBC__T_ENUM || right->kind == NBC__T_ENUM) {
      /* numba's EnumMember: members of one class compare (==, !=, is, is not) by value;
       * anything else is not equal (the lowering's constant) */
      if (op != NBC__OP_EQ && op != NBC__OP_NE && op != NBC__OP_IS && op != NBC__OP_ISNOT)
        return TYPING(I, n, "Invalid use of %s with parameters (%s, %s)", nbc__op_text(op),
                      nbc__infer_tname(I, left), nbc__infer_tname(I, right)),
               NULL;
      conv[2 * i] = left;
      conv[2 * i + 1] = right;
    } else if ((op == NBC__OP_EQ || op == NBC__OP_NE) &&
               (left->kind == NBC__T_NONE || right->kind == NBC__T_NONE) &&
               left->kind != NBC__T_OPTIONAL && right->kind != NBC__T_OPTIONAL) {
      /* None == x: numba's comparison of None with a value of another type is False (the
       * lowering's constant), with None True */
      conv[2 * i] = left;
      conv[2 * i + 1] = right;
    } else if (op == NBC__OP_IS || op == NBC__OP_ISNOT) {
      /* numba's generic_is: values of one type compare with ==, of two types never are the
       * same object (no conversion); arrays and records have no default `is` */
      if (nbc__type_equal(left, right) &&
          (left->kind == NBC__T_ARRAY || left->kind == NBC__T_RECORD))
        return UNSUPPORTED(I, n, "no default `is` implementation for %s",
                           nbc__infer_tname(I, left)),
               NULL;
      if (nbc__type_equal(left, right) && left->kind != NBC__T_NONE &&
          !nbc__type_is_number(left) && left->kind != NBC__T_TUPLE)
        return UNSUPPORTED(I, n, "unsupported comparison %s %s %s", nbc__infer_tname(I, left),
                           nbc__op_text(op), nbc__infer_tname(I, right)),
               NULL;
      conv[2 * i] = left;
      conv[2 * i + 1] = right;
    } else if (left->kind == NBC__T_TUPLE || right->kind == NBC__T_TUPLE) {
      if (!comparable(op, left, right))
        return TYPING(I, n, "Invalid use of %s with parameters (%s, %s)", nbc__op_text(op),
                      nbc__infer_tname(I, left), nbc__infer_tname(I, right)),
               NULL;
      conv[2 * i] = left;
      conv[2 * i + 1] = right;
    } else if (!nbc__type_binop_sig(op, left, right, &conv[2 * i], &why))
      return TYPING(I, n, "Invalid use of %s with parameters (%s, %s)", nbc__op_text(op),
                    nbc__infer_tname(I, left), nbc__infer_tname(I, right)),
             NULL;
    (void)lnode;
    left = right;
    lnode = rnode;
  }
  if (!ok) return NULL;
  n->info = conv;
  if (count == 1) {
    nbc__infer_cast(n->a, conv[0]);
    nbc__infer_cast(n->list.items[0], conv[1]);
  }
  return T(NBC__T_BOOL);
}

static const nbc__type *ifexp_expr(infer *I, nbc__node *n) {
  const nbc__type *c = nbc__infer_expr(I, n->a), *a = nbc__infer_expr(I, n->b),
                  *b = nbc__infer_expr(I, n->c);
  /* Before the final walk a branch may be unknown yet (a recursive call whose return type
   * the other branch gives, as numba's branches assign one variable): the other one then. */
  if (!I->final && c && (a || b) && !(a && b)) return a ? a : b;
  if (!c || !a || !b) return NULL;
  if (!nbc__infer_expr_truth(I, n->a, c)) return NULL;
  const nbc__type *u = nbc__type_unify(I->ctx, a, b);
  if (!u)
    return TYPING(I, n, "Cannot unify %s and %s for the conditional expression",
                  nbc__infer_tname(I, a), nbc__infer_tname(I, b)),
           NULL;
  nbc__infer_cast(n->b, u);
  nbc__infer_cast(n->c, u);
  return u;
}

static const nbc__type *tuple_expr(infer *I, nbc__node *n) {
  const nbc__type *items[64];
  if (n->list.count > 64) return UNSUPPORTED(I, n, "tuples of more than 64 items"), NULL;
  bool ok = true;
  for (int i = 0; i < n->list.count; i++) {
    items[i] = nbc__infer_expr(I, n->list.items[i]);
    if (!items[i])
      ok = false;
    else if (!nbc__type_is_number(items[i]) && !nbc__type_is_datetime(items[i]) &&
             items[i]->kind != NBC__T_TUPLE && items[i]->kind != NBC__T_ARRAY &&
             items[i]->kind != NBC__T_VECTOR && !nbc__type_is_bf16(items[i])) {
      /* a recursive call's value in its own return (numba's issue 4387, make_list(n) ->
       * (n, make_list(n - 1))): the type would grow without end */
      const nbc__node *it = n->list.items[i];
      const nbc__call *c = it->kind == NBC__N_CALL ? it->info : NULL;
      if (c && c->func && c->func->inferring)
        return TYPING(I, it,
                      "Return type of recursive function does not converge: '%s' "
                      "returns %s here, and a tuple holding it would need to hold its own "
                      "return type",
                      c->func->name, nbc__infer_tname(I, items[i])),
               NULL;
      return UNSUPPORTED(I, it, "tuples may only hold numbers, not %s",
                         nbc__infer_tname(I, items[i])),
             NULL;
    }
  }
  return ok ? nbc__type_tuple(I->ctx, items, n->list.count) : NULL;
}

static const nbc__type *expr_inner(infer *I, nbc__node *n) {
  switch (n->kind) {
  case NBC__N_INT:
    if (n->big) {
      /* numba types literals above INT64_MAX as uint64. */
      return T(NBC__T_UINT64);
    }
    return T(NBC__T_INT64);
  case NBC__N_FLOAT:
    return T(NBC__T_FLOAT64);
  case NBC__N_COMPLEX:
    return T(NBC__T_COMPLEX128);
  case NBC__N_BOOL:
    return T(NBC__T_BOOL);
  case NBC__N_NONE:
    return T(NBC__T_NONE);
  case NBC__N_NAME:
    return name_expr(I, n);
  case NBC__N_ATTR:
    return attr_expr(I, n);
  case NBC__N_SUBSCRIPT:
    return nbc__infer_subscript(I, n);
  case NBC__N_CALL:
    return nbc__infer_call(I, n);
  case NBC__N_BINOP:
    if (n->op == NBC__OP_MATMUL)
      return UNSUPPORTED(I, n, "the operator '@' is not supported"), NULL;
    return binop_expr(I, n);
  case NBC__N_UNARY:
    return unary_expr(I, n);
  case NBC__N_BOOLOP:
    return boolop_expr(I, n);
  case NBC__N_COMPARE:
    return compare_expr(I, n);
  case NBC__N_IFEXP:
    return ifexp_expr(I, n);
  case NBC__N_TUPLE:
    return tuple_expr(I, n);
  case NBC__N_STR:
    return UNSUPPORTED(I, n, "strings are not supported in kernels"), NULL;
  case NBC__N_LIST:
    return UNSUPPORTED(I, n, "lists are not supported in kernels"), NULL;
  case NBC__N_DICT:
    return UNSUPPORTED(I, n, "dicts are not supported in kernels"), NULL;
  case NBC__N_SLICE:
    return UNSUPPORTED(I, n, "a slice is only supported as an array index"), NULL;
  case NBC__N_KEYWORD:
    return nbc__infer_expr(I, n->a);
  case NBC__N_ELLIPSIS:
    return UNSUPPORTED(I, n, "Ellipsis (...) is only supported as an array index"), NULL;
  case NBC__N_FUNCDEF: /* a lambda closure.c did not lift: not bound to a name */
    return UNSUPPORTED(I, n,
                       "a lambda can only be assigned to a name and called (numba "
                       "inlines it at its calls)"),
           NULL;
  default: {
    if (n->kind == NBC__N_OTHER_EXPR && n->str) return UNSUPPORTED(I, n, "%s", n->str), NULL;
    const char *what = n->tok && n->tok->len > 0 ? nbc__tok_start(n->tok) : "?";
    int len = n->tok ? n->tok->len : 1;
    return UNSUPPORTED(I, n, "unsupported expression: '%.*s'", len, what), NULL;
  }
  }
}

const nbc__type *nbc__infer_expr(infer *I, nbc__node *n) {
  if (!n) return NULL;
  bool keep = I->keep_optional; /* for this node, not for its operands */
  I->keep_optional = false;
  n->cast = NULL;
  const nbc__type *t = expr_inner(I, n);
  if (t && t->nest > NBC__TYPE_MAX_NEST) /* `x1 = (x0,)`, `x2 = (x1,)` ... */
    return UNSUPPORTED(I, n, "types nested more than %d deep (%s)", NBC__TYPE_MAX_NEST,
                       "a tuple in a tuple in a tuple ..."),
           NULL;
  if (t && nbc__type_values(t) > NBC__TYPE_MAX_VALUES) /* `x1 = (x0, x0)` ... */
    return UNSUPPORTED(I, n,
                       "a tuple of more than %d values in all (counting those of the "
                       "tuples in it): %d",
                       NBC__TYPE_MAX_VALUES, nbc__type_values(t)),
           NULL;
  n->type = t;
  /* numba: an Optional used as a value (TypeError if None); an IntEnum member used as its int
   * (kept for `is`, `.value`, and assigned to a name or returned as it is) */
  if (t && (t->kind == NBC__T_OPTIONAL || nbc__type_is_int_enum(t)) && !keep) {
    n->cast = t->dtype;
    return t->dtype;
  }
  return t;
}
