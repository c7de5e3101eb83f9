/* infer.c — type inference: types one Python function for one signature, specialising
 * every Python function it calls for the argument types of each call.
 *
 * How it works. Each specialisation types its own clone of the FUNCDEF. Names assigned
 * anywhere in the function are its locals (Python's rule); every other name is a global,
 * asked of the resolver (or of the module itself), then of the builtins. A local's type is
 * the unification of everything assigned to it, which inference computes as a fixed
 * point: walk the body, unify each assignment into its variable, and walk again until no
 * variable changes (loop-carried variables need more than one walk). Walks before the
 * fixed point stay silent about failures, because an operand may still be unknown; one
 * final walk over the converged types records every expression's type, the conversions
 * (->cast) numba's chosen signatures imply, the calls (nbc__call) and reports the first
 * error at its source position.
 *
 * Beyond the contract in compiler.h, infer.c records for lower.c:
 *  - BINOP/UNARY: operand ->cast = the operand type of numba's chosen signature;
 *  - COMPARE: ->info = an array of 2 * count types, the conversions of the left and right
 *    operands of each comparison (the middle operand of a chain may convert differently
 *    in its two comparisons); a single comparison also sets the operands' ->cast;
 *  - BOOLOP/IFEXP: both values convert (->cast) to the unified type; the truth test is
 *    done on the operand's own type;
 *  - AUGASSIGN: ->type = the operation's result, a->cast / b->cast = the operand types,
 *    ->cast = the type stored (the variable's type or the array's dtype);
 *  - tuple-unpacking targets: each NAME target has ->type = the element's type and ->cast
 *    the variable's type when they differ;
 *  - RANGE calls: argtypes[i] is the counter type (int32, int64 or uint64);
 *  - callees never reached in the final walk of their caller are dropped from the program.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"

/* The state of one program's inference. */
typedef struct inferp {
  nbc__ctx *ctx;
  nbc__program *prog;
  nbc__func *stack[64]; /* specialisations being inferred, for recursion */
  int depth;
  nbc__module **modules; /* modules loaded for callees from other sources */
  int nmodules;
} inferp;

/* Per-variable facts for the non-negative index analysis. */
typedef struct vardef {
  int ndefs;            /* assignments (augmented ones count as two) */
  const nbc__node *def; /* the value of the single assignment */
  int def_kind;         /* 0: plain value, 1: range loop, 2: element of cuda.grid(n) */
  bool nonneg;
} vardef;

/* The state of one specialisation's inference. */
typedef struct infer {
  inferp *P;
  nbc__ctx *ctx;
  nbc__func *fn;
  const nbc__file *file;
  int capvars;
  bool changed;
  bool final;        /* the last walk: record everything, report errors */
  bool failed;
  int loop_depth;
  const nbc__type *ret; /* unification of the returned values (inferred return) */
  bool returns_value;
  vardef *defs;
  nbc__func **callees;
  int ncallees, capcallees;
} infer;

static const nbc__type *T(nbc__type_kind k) { return nbc__type_scalar(k); }

/* ------------------------------------------------------------------- diagnostics */

static bool err_at(infer *I, const nbc__node *n, nbc_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static bool err_at(infer *I, const nbc__node *n, nbc_status_t status, const char *fmt, ...) {
  if (!I->final || I->failed) {
    I->failed = I->failed || I->final;
    return false;
  }
  I->failed = true;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* A call is shown at the start of its callee (`cuda.grid(4)` at `cuda`); other nodes at
   * their own token (a binary operator at the operator). */
  while (n && n->kind == NBC__N_CALL && n->a) {
    n = n->a;
    while (n->kind == NBC__N_ATTR && n->a) n = n->a;
  }
  const nbc__file *file = n && n->tok ? n->tok->file : I->file;
  int line = n && n->tok ? n->tok->line : 1, col = n && n->tok ? n->tok->col : 1;
  nbc__diag_error(I->ctx, status, file, line, col, "%s", msg);
  return false;
}

#define TYPING(I, n, ...) err_at((I), (n), NBC_TYPING_ERROR, __VA_ARGS__)
#define UNSUPPORTED(I, n, ...) err_at((I), (n), NBC_UNSUPPORTED, __VA_ARGS__)

static const char *tname(infer *I, const nbc__type *t) { return nbc__type_name(I->ctx, t); }

static void *alloc(infer *I, size_t size) {
  void *p = nbc__arena_alloc(I->ctx->arena, size);
  if (!p) {
    nbc__diag_oom(I->ctx);
    I->failed = true;
  }
  return p;
}

/* -------------------------------------------------------------------- variables */

static int var_find(infer *I, const char *name) {
  for (int i = 0; i < I->fn->nvars; i++)
    if (strcmp(I->fn->vars[i].name, name) == 0) return i;
  return -1;
}

static int var_add(infer *I, const char *name) {
  int i = var_find(I, name);
  if (i >= 0) return i;
  if (I->fn->nvars == I->capvars) {
    int cap = I->capvars ? I->capvars * 2 : 16;
    nbc__var *v = alloc(I, sizeof *v * (size_t)cap);
    if (!v) return -1;
    if (I->fn->nvars) memcpy(v, I->fn->vars, sizeof *v * (size_t)I->fn->nvars);
    I->fn->vars = v;
    I->capvars = cap;
  }
  nbc__var *v = &I->fn->vars[I->fn->nvars];
  memset(v, 0, sizeof *v);
  v->name = name;
  v->param_index = -1;
  return I->fn->nvars++;
}

static void collect_target(infer *I, nbc__node *t) {
  if (!t) return;
  if (t->kind == NBC__N_NAME)
    var_add(I, t->str);
  else if (t->kind == NBC__N_TUPLE || t->kind == NBC__N_LIST)
    for (int i = 0; i < t->list.count; i++) collect_target(I, t->list.items[i]);
}

static void collect_locals(infer *I, nbc__list *body) {
  for (int i = 0; i < body->count; i++) {
    nbc__node *s = body->items[i];
    switch (s->kind) {
    case NBC__N_ASSIGN:
      for (int k = 0; k < s->list.count; k++) collect_target(I, s->list.items[k]);
      break;
    case NBC__N_AUGASSIGN: collect_target(I, s->a); break;
    case NBC__N_FOR:
      collect_target(I, s->a);
      collect_locals(I, &s->body);
      collect_locals(I, &s->orelse);
      break;
    case NBC__N_IF:
    case NBC__N_WHILE:
    case NBC__N_TRY:
      collect_locals(I, &s->body);
      collect_locals(I, &s->orelse);
      break;
    default: break;
    }
  }
}

/* Unifies t into variable v; reports a failure in the final walk. */
static bool var_assign(infer *I, int v, const nbc__type *t, const nbc__node *at) {
  if (v < 0 || !t) return t != NULL;
  nbc__var *var = &I->fn->vars[v];
  if (!var->type) {
    var->type = t;
    I->changed = true;
    return true;
  }
  if (var->is_param && !nbc__type_equal(var->type, t)) {
    /* numba unifies parameters too: the argument is converted at entry. */
  }
  const nbc__type *u = nbc__type_unify(I->ctx, var->type, t);
  if (!u)
    return TYPING(I, at, "Cannot unify %s and %s for '%s'", tname(I, var->type), tname(I, t),
                  var->name);
  if (!nbc__type_equal(u, var->type)) {
    var->type = u;
    I->changed = true;
  }
  return true;
}

/* Sets n->cast when the value of n must be converted to `to`. */
static void set_cast(nbc__node *n, const nbc__type *to) {
  if (!n || !to) return;
  n->cast = n->type && nbc__type_equal(n->type, to) ? NULL : to;
}

/* --------------------------------------------------------------------- globals */

static nbc__global *global_new(infer *I, const nbc_global_t *g) {
  nbc__global *G = alloc(I, sizeof *G);
  if (!G) return NULL;
  G->g = *g;
  nbc__arena *a = I->ctx->arena;
  if (g->name) G->g.name = nbc__arena_strdup(a, g->name);
  if (g->source) G->g.source = nbc__arena_strdup(a, g->source);
  if (g->filename) G->g.filename = nbc__arena_strdup(a, g->filename);
  G->module = I->fn->module;
  return G;
}

static const char *const builtin_names[] = {"range", "len", "abs", "min", "max",
                                            "int",   "float", "bool", "round"};

/* What a global name means, or NULL (reported) when it has none. */
static nbc__global *global_lookup(infer *I, const nbc__node *n, const char *name) {
  nbc_global_t g;
  memset(&g, 0, sizeof g);
  int rc;
  if (I->fn->resolver && I->fn->resolver->resolve)
    rc = I->fn->resolver->resolve(I->fn->resolver->data, name, &g);
  else
    rc = nbc__module_resolve((void *)I->fn->module, name, &g);
  if (rc != 0 || g.kind == NBC_GLOBAL_UNDEFINED) {
    memset(&g, 0, sizeof g);
    for (size_t i = 0; i < sizeof builtin_names / sizeof builtin_names[0]; i++)
      if (strcmp(builtin_names[i], name) == 0) {
        g.kind = NBC_GLOBAL_OTHER;
        g.name = name;
        nbc__global *G = global_new(I, &g);
        if (G) G->module = NULL; /* a builtin: kind OTHER, no module */
        return G;
      }
    TYPING(I, n, "NameError: name '%s' is not defined", name);
    return NULL;
  }
  return global_new(I, &g);
}

static bool is_builtin_global(const nbc__global *G) {
  return G && G->g.kind == NBC_GLOBAL_OTHER && !G->module;
}

/* The type of a global's value. */
static const nbc__type *global_type(infer *I, const nbc__node *n, nbc__global *G) {
  switch (G->g.kind) {
  case NBC_GLOBAL_INT: return T(NBC__T_INT64);
  case NBC_GLOBAL_FLOAT: return T(NBC__T_FLOAT64);
  case NBC_GLOBAL_BOOL: return T(NBC__T_BOOL);
  case NBC_GLOBAL_MODULE_MATH: return nbc__type_special(I->ctx, NBC__T_MODULE, "math", NULL);
  case NBC_GLOBAL_MODULE_CUDA: return nbc__type_special(I->ctx, NBC__T_MODULE, "cuda", NULL);
  case NBC_GLOBAL_MATH_FUNCTION: {
    if (!G->g.name || !nbc__math_exists(G->g.name)) {
      UNSUPPORTED(I, n, "unsupported math function 'math.%s'", G->g.name ? G->g.name : "?");
      return NULL;
    }
    char buf[128];
    snprintf(buf, sizeof buf, "math.%s", G->g.name);
    return nbc__type_special(I->ctx, NBC__T_FUNCTION, buf, NULL);
  }
  case NBC_GLOBAL_TYPE: {
    const nbc__type *t = G->g.name ? nbc__type_by_name(G->g.name, strlen(G->g.name)) : NULL;
    if (!t) {
      UNSUPPORTED(I, n, "unsupported type '%s'", G->g.name ? G->g.name : "?");
      return NULL;
    }
    return nbc__type_special(I->ctx, NBC__T_DTYPE, G->g.name, t);
  }
  case NBC_GLOBAL_FUNCTION:
    return nbc__type_special(I->ctx, NBC__T_FUNCTION, G->g.name ? G->g.name : n->str, NULL);
  case NBC_GLOBAL_OTHER:
    if (is_builtin_global(G)) return nbc__type_special(I->ctx, NBC__T_FUNCTION, G->g.name, NULL);
    UNSUPPORTED(I, n, "global '%s' is not supported in a kernel", n->str);
    return NULL;
  default:
    TYPING(I, n, "NameError: name '%s' is not defined", n->str);
    return NULL;
  }
}

/* ------------------------------------------------------------------ expressions */

static const nbc__type *expr(infer *I, nbc__node *n);
static nbc__func *specialise(inferp *P, const nbc__module *module, nbc__node *def,
                             const nbc_resolver_t *resolver, const nbc__type **args,
                             int nargs, const nbc__type *declared, bool is_entry,
                             const nbc__node *call_site, infer *caller);

static bool is_kind(const nbc__type *t, nbc__type_kind k) { return t && t->kind == k; }

/* A compile-time integer: an INT literal, its negation, or a global integer constant. */
static bool const_int(infer *I, const nbc__node *n, int64_t *pv) {
  if (!n) return false;
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
  (void)I;
  return false;
}

static const nbc__type *name_expr(infer *I, nbc__node *n) {
  int v = var_find(I, n->str);
  if (v >= 0) {
    n->var = v;
    n->info = NULL;
    const nbc__type *t = I->fn->vars[v].type;
    if (!t) TYPING(I, n, "cannot determine the type of '%s'", n->str);
    return t;
  }
  n->var = -1;
  nbc__global *G = n->info;
  if (!G) {
    G = global_lookup(I, n, n->str);
    if (!G) return NULL;
    n->info = G;
  }
  return global_type(I, n, G);
}

/* math.<attr> */
static const nbc__type *math_attr(infer *I, nbc__node *n) {
  static const struct {
    const char *name;
    double value;
  } consts[] = {{"pi", 3.141592653589793},
                {"e", 2.718281828459045},
                {"tau", 6.283185307179586},
                {"inf", __builtin_inf()},
                {"nan", __builtin_nan("")}};
  for (size_t i = 0; i < sizeof consts / sizeof consts[0]; i++)
    if (strcmp(n->str, consts[i].name) == 0) {
      nbc_global_t g;
      memset(&g, 0, sizeof g);
      g.kind = NBC_GLOBAL_FLOAT;
      g.value.f = consts[i].value;
      g.name = consts[i].name;
      if (!n->info) n->info = global_new(I, &g);
      return T(NBC__T_FLOAT64);
    }
  if (nbc__math_exists(n->str)) {
    char buf[128];
    snprintf(buf, sizeof buf, "math.%s", n->str);
    return nbc__type_special(I->ctx, NBC__T_FUNCTION, buf, NULL);
  }
  UNSUPPORTED(I, n, "unsupported attribute 'math.%s'", n->str);
  return NULL;
}

static const nbc__type *cuda_attr(infer *I, nbc__node *n, const char *mod) {
  char buf[160];
  const char *a = n->str;
  if (strcmp(mod, "cuda") == 0) {
    static const char *const submodules[] = {"threadIdx", "blockIdx", "blockDim", "gridDim",
                                             "shared",    "local",    "atomic"};
    for (size_t i = 0; i < sizeof submodules / sizeof submodules[0]; i++)
      if (strcmp(a, submodules[i]) == 0) {
        snprintf(buf, sizeof buf, "cuda.%s", a);
        return nbc__type_special(I->ctx, NBC__T_MODULE, buf, NULL);
      }
    if (strcmp(a, "grid") == 0 || strcmp(a, "gridsize") == 0 || strcmp(a, "syncthreads") == 0) {
      snprintf(buf, sizeof buf, "cuda.%s", a);
      return nbc__type_special(I->ctx, NBC__T_FUNCTION, buf, NULL);
    }
    const nbc__type *t = nbc__type_by_name(a, strlen(a));
    if (t) return nbc__type_special(I->ctx, NBC__T_DTYPE, a, t);
  } else if (strcmp(mod, "cuda.threadIdx") == 0 || strcmp(mod, "cuda.blockIdx") == 0 ||
             strcmp(mod, "cuda.blockDim") == 0 || strcmp(mod, "cuda.gridDim") == 0) {
    if (strcmp(a, "x") == 0 || strcmp(a, "y") == 0 || strcmp(a, "z") == 0)
      return T(NBC__T_INT32); /* numba types the special registers as int32 */
  } else if (strcmp(mod, "cuda.shared") == 0 || strcmp(mod, "cuda.local") == 0) {
    if (strcmp(a, "array") == 0) {
      snprintf(buf, sizeof buf, "%s.array", mod);
      return nbc__type_special(I->ctx, NBC__T_FUNCTION, buf, NULL);
    }
  } else if (strcmp(mod, "cuda.atomic") == 0) {
    if (strcmp(a, "add") == 0 || strcmp(a, "sub") == 0 || strcmp(a, "max") == 0 ||
        strcmp(a, "min") == 0) {
      snprintf(buf, sizeof buf, "cuda.atomic.%s", a);
      return nbc__type_special(I->ctx, NBC__T_FUNCTION, buf, NULL);
    }
  }
  UNSUPPORTED(I, n, "unsupported attribute '%s.%s'", mod, a);
  return NULL;
}

static const nbc__type *attr_expr(infer *I, nbc__node *n) {
  const nbc__type *o = expr(I, n->a);
  if (!o) return NULL;
  if (o->kind == NBC__T_MODULE) {
    if (strcmp(o->name, "math") == 0) return math_attr(I, n);
    return cuda_attr(I, n, o->name);
  }
  if (o->kind == NBC__T_ARRAY) {
    if (strcmp(n->str, "shape") == 0 || strcmp(n->str, "strides") == 0) {
      const nbc__type *items[32]; /* signatures allow at most 32 dimensions */
      int nd = o->ndim < 32 ? o->ndim : 32;
      for (int i = 0; i < nd; i++) items[i] = T(NBC__T_INT64);
      return nbc__type_tuple(I->ctx, items, nd);
    }
    if (strcmp(n->str, "size") == 0 || strcmp(n->str, "ndim") == 0 ||
        strcmp(n->str, "itemsize") == 0 || strcmp(n->str, "nbytes") == 0)
      return T(NBC__T_INT64);
  }
  TYPING(I, n, "Unknown attribute '%s' of type %s", n->str, tname(I, o));
  return NULL;
}

/* Types one array index (an integer) and converts it to intp. */
static bool index_item(infer *I, nbc__node *idx) {
  const nbc__type *t = expr(I, idx);
  if (!t) return false;
  if (!nbc__type_is_int(t) && t->kind != NBC__T_BOOL) {
    if (idx->kind == NBC__N_SLICE)
      return UNSUPPORTED(I, idx, "array slicing is not supported");
    return TYPING(I, idx, "array index must be an integer, not %s", tname(I, t));
  }
  set_cast(idx, T(NBC__T_INT64));
  return true;
}

static bool nonneg_expr(infer *I, const nbc__node *n);

/* Indexes array type at with index node b (ints or a tuple of ints); returns the dtype. */
static const nbc__type *array_index(infer *I, nbc__node *n, const nbc__type *at, nbc__node *b) {
  int count = b->kind == NBC__N_TUPLE ? b->list.count : 1;
  if (b->kind == NBC__N_SLICE ||
      (b->kind == NBC__N_TUPLE && count > 0 && b->list.items[0]->kind == NBC__N_SLICE))
    return UNSUPPORTED(I, b, "array slicing is not supported"), NULL;
  if (count != at->ndim)
    return UNSUPPORTED(I, b, "%d-d indexing of %s is not supported (index every dimension)",
                       count, tname(I, at)),
           NULL;
  bool nonneg = true;
  if (b->kind == NBC__N_TUPLE) {
    const nbc__type *items[32];
    for (int i = 0; i < count; i++) {
      if (!index_item(I, b->list.items[i])) return NULL;
      items[i < 32 ? i : 31] = T(NBC__T_INT64);
      if (!nonneg_expr(I, b->list.items[i])) nonneg = false;
    }
    b->type = nbc__type_tuple(I->ctx, items, count > 32 ? 32 : count);
  } else {
    if (!index_item(I, b)) return NULL;
    nonneg = nonneg_expr(I, b);
  }
  n->info = nonneg && I->final ? (void *)n : NULL;
  return at->dtype;
}

static const nbc__type *subscript_expr(infer *I, nbc__node *n) {
  const nbc__type *o = expr(I, n->a);
  if (!o) return NULL;
  if (o->kind == NBC__T_ARRAY) return array_index(I, n, o, n->b);
  if (o->kind == NBC__T_TUPLE) {
    int64_t k;
    if (!const_int(I, n->b, &k)) {
      expr(I, n->b);
      return UNSUPPORTED(I, n->b, "a tuple index must be a constant integer"), NULL;
    }
    expr(I, n->b);
    if (k < 0) k += o->count;
    if (k < 0 || k >= o->count)
      return TYPING(I, n->b, "tuple index out of range"), NULL;
    return o->items[k];
  }
  expr(I, n->b);
  TYPING(I, n, "'%s' object is not subscriptable", tname(I, o));
  return NULL;
}

/* Numeric operands required: reports "Invalid use of OP with parameters (A, B)". */
static const nbc__type *binop_expr(infer *I, nbc__node *n) {
  const nbc__type *a = expr(I, n->a), *b = expr(I, n->b);
  if (!a || !b) return NULL;
  const nbc__type *args[2];
  const char *why;
  const nbc__type *r = nbc__type_binop_sig(n->op, a, b, args, &why);
  if (!r)
    return TYPING(I, n, "Invalid use of %s with parameters (%s, %s)", nbc__op_text(n->op),
                  tname(I, a), tname(I, b)),
           NULL;
  set_cast(n->a, args[0]);
  set_cast(n->b, args[1]);
  return r;
}

static const nbc__type *unary_expr(infer *I, nbc__node *n) {
  const nbc__type *a = expr(I, n->a);
  if (!a) return NULL;
  const nbc__type *arg;
  const char *why;
  const nbc__type *r = nbc__type_unop_sig(n->op, a, &arg, &why);
  if (!r)
    return TYPING(I, n, "Invalid use of %s with parameters (%s)", nbc__op_text(n->op),
                  tname(I, a)),
           NULL;
  set_cast(n->a, arg);
  return r;
}

static bool truth(infer *I, nbc__node *n, const nbc__type *t) {
  const char *why;
  if (!t) return false;
  if (!nbc__type_truth(t, &why)) return TYPING(I, n, "%s (%s)", why, tname(I, t));
  return true;
}

static const nbc__type *boolop_expr(infer *I, nbc__node *n) {
  const nbc__type *a = expr(I, n->a), *b = expr(I, n->b);
  if (!a || !b) return NULL;
  if (!truth(I, n->a, a)) return NULL;
  const nbc__type *u = nbc__type_unify(I->ctx, a, b);
  if (!u)
    return TYPING(I, n, "Cannot unify %s and %s for the value of '%s'", tname(I, a),
                  tname(I, b), nbc__op_text(n->op)),
           NULL;
  set_cast(n->a, u);
  set_cast(n->b, u);
  return u;
}

static const nbc__type *compare_expr(infer *I, nbc__node *n) {
  int count = n->list.count;
  const nbc__type *left = expr(I, n->a);
  const nbc__type **conv = alloc(I, sizeof *conv * (size_t)(2 * (count ? count : 1)));
  if (!conv) return NULL;
  bool ok = left != NULL;
  nbc__node *lnode = n->a;
  for (int i = 0; i < count; i++) {
    nbc__node *rnode = n->list.items[i];
    const nbc__type *right = expr(I, rnode);
    if (!left || !right) {
      ok = false;
      left = right;
      lnode = rnode;
      continue;
    }
    nbc__op op = n->ops[i];
    const char *why;
    if (op == NBC__OP_IS || op == NBC__OP_ISNOT || op == NBC__OP_IN || op == NBC__OP_NOTIN)
      return UNSUPPORTED(I, n, "unsupported comparison '%s'", nbc__op_text(op)), NULL;
    if (!nbc__type_binop_sig(op, left, right, &conv[2 * i], &why))
      return TYPING(I, n, "Invalid use of %s with parameters (%s, %s)", nbc__op_text(op),
                    tname(I, left), tname(I, right)),
             NULL;
    (void)lnode;
    left = right;
    lnode = rnode;
  }
  if (!ok) return NULL;
  n->info = conv;
  if (count == 1) {
    set_cast(n->a, conv[0]);
    set_cast(n->list.items[0], conv[1]);
  }
  return T(NBC__T_BOOL);
}

static const nbc__type *ifexp_expr(infer *I, nbc__node *n) {
  const nbc__type *c = expr(I, n->a), *a = expr(I, n->b), *b = expr(I, n->c);
  if (!c || !a || !b) return NULL;
  if (!truth(I, n->a, c)) return NULL;
  const nbc__type *u = nbc__type_unify(I->ctx, a, b);
  if (!u)
    return TYPING(I, n, "Cannot unify %s and %s for the conditional expression", tname(I, a),
                  tname(I, b)),
           NULL;
  set_cast(n->b, u);
  set_cast(n->c, u);
  return u;
}

static const nbc__type *tuple_expr(infer *I, nbc__node *n) {
  const nbc__type *items[64];
  if (n->list.count > 64) return UNSUPPORTED(I, n, "tuples of more than 64 items"), NULL;
  bool ok = true;
  for (int i = 0; i < n->list.count; i++) {
    items[i] = expr(I, n->list.items[i]);
    if (!items[i]) ok = false;
    else if (!nbc__type_is_number(items[i]))
      return UNSUPPORTED(I, n->list.items[i], "tuples may only hold numbers, not %s",
                         tname(I, items[i])),
             NULL;
  }
  return ok ? nbc__type_tuple(I->ctx, items, n->list.count) : NULL;
}

/* ------------------------------------------------------------------------ calls */

static nbc__call *call_new(infer *I, nbc__node *n, nbc__builtin b, const char *name, int nargs) {
  nbc__call *c = alloc(I, sizeof *c);
  if (!c) return NULL;
  c->builtin = b;
  c->name = name;
  c->nargs = nargs;
  c->argtypes = alloc(I, sizeof *c->argtypes * (size_t)(nargs ? nargs : 1));
  n->info = c;
  return c->argtypes ? c : NULL;
}

/* Positional arguments only (keywords are checked by the callers that take them). */
static int positional(const nbc__node *n) {
  int k = 0;
  while (k < n->list.count && n->list.items[k]->kind != NBC__N_KEYWORD) k++;
  return k;
}

static bool no_keywords(infer *I, nbc__node *n, const char *what) {
  if (positional(n) != n->list.count)
    return UNSUPPORTED(I, n->list.items[positional(n)], "%s() takes no keyword arguments", what);
  return true;
}

/* Types the arguments into types[]; false when any is unknown. */
static bool call_args(infer *I, nbc__node *n, const nbc__type **types, int max) {
  bool ok = true;
  for (int i = 0; i < n->list.count && i < max; i++) {
    nbc__node *a = n->list.items[i];
    types[i] = expr(I, a->kind == NBC__N_KEYWORD ? a->a : a);
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
      set_cast(n->list.items[i], ctr);
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
  if (strcmp(name, "abs") == 0) b = NBC__B_ABS;
  else if (strcmp(name, "min") == 0) b = NBC__B_MIN;
  else if (strcmp(name, "max") == 0) b = NBC__B_MAX;
  else if (strcmp(name, "int") == 0) b = NBC__B_INT;
  else if (strcmp(name, "float") == 0) b = NBC__B_FLOAT;
  else if (strcmp(name, "bool") == 0) b = NBC__B_BOOL;
  else b = NBC__B_ROUND;
  const nbc__type *conv[16];
  const char *why = NULL;
  const nbc__type *r =
      nargs <= 16 ? nbc__type_call_builtin(name, types, nargs, conv, &why) : NULL;
  if (!r) {
    if (why && strstr(why, "not supported") && nargs > 0)
      return TYPING(I, n, "%s", why), NULL;
    return arg_list_error(I, n, name, types, nargs);
  }
  nbc__call *c = call_new(I, n, b, name, nargs);
  if (!c) return NULL;
  for (int i = 0; i < nargs; i++) {
    c->argtypes[i] = conv[i];
    set_cast(n->list.items[i], conv[i]);
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
    set_cast(n->list.items[i], conv[i]);
  }
  c->ret = r;
  return r;
}

/* The dtype of a shared/local array: a type global, cuda.float32, ... */
static const nbc__type *dtype_of(infer *I, nbc__node *n, const nbc__type *t) {
  if (is_kind(t, NBC__T_DTYPE)) return t->dtype;
  TYPING(I, n, "the dtype must be a numba type such as float32, not %s", tname(I, t));
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
    const char *kw = a->kind == NBC__N_KEYWORD ? a->str : i == 0 ? "shape" : i == 1 ? "dtype" : NULL;
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
    return TYPING(I, n, "%s() missing required argument '%s'", fname, shape ? "dtype" : "shape"),
           NULL;
  const nbc__type *dt = dtype_of(I, dtype, dtype_t);
  if (!dt) return NULL;
  int64_t dims[32];
  int ndim = 0;
  if (shape->kind == NBC__N_TUPLE) {
    if (shape->list.count < 1 || shape->list.count > 32)
      return UNSUPPORTED(I, shape, "an array shape of %d dimensions", shape->list.count), NULL;
    for (int i = 0; i < shape->list.count; i++)
      if (!const_int(I, shape->list.items[i], &dims[ndim++]))
        return TYPING(I, shape->list.items[i],
                      "the shape of %s() must be constant integers", fname),
               NULL;
  } else if (!const_int(I, shape, &dims[ndim++]))
    return TYPING(I, shape, "the shape of %s() must be a constant integer or a tuple of them",
                  fname),
           NULL;
  int64_t total = 1;
  for (int i = 0; i < ndim; i++) {
    if (dims[i] < 0)
      return TYPING(I, shape, "negative dimension %lld in %s()", (long long)dims[i], fname), NULL;
    if (dims[i] > 0 && total > INT64_MAX / dims[i])
      return TYPING(I, shape, "array too large in %s()", fname), NULL;
    total *= dims[i];
  }
  nbc__call *c = call_new(I, n, shared ? NBC__B_CUDA_SHARED_ARRAY : NBC__B_CUDA_LOCAL_ARRAY,
                          fname, n->list.count);
  if (!c) return NULL;
  for (int i = 0; i < n->list.count; i++) c->argtypes[i] = types[i];
  c->shape = alloc(I, sizeof *c->shape * (size_t)ndim);
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
    return TYPING(I, n, "%s() of an array of %s is not supported", fname, tname(I, dt)), NULL;
  /* The index: an integer or a tuple of integers, one per dimension. */
  nbc__node *idx = n->list.items[1];
  const nbc__type *it = types[1];
  if (nbc__type_is_int(it)) {
    if (at->ndim != 1)
      return TYPING(I, idx, "%s() on a %dd array needs a tuple index", fname, at->ndim), NULL;
    set_cast(idx, T(NBC__T_INT64));
  } else if (is_kind(it, NBC__T_TUPLE) && it->count == at->ndim) {
    for (int i = 0; i < it->count; i++)
      if (!nbc__type_is_int(it->items[i]))
        return TYPING(I, idx, "%s() index must be integers, not %s", fname, tname(I, it)), NULL;
    if (idx->kind == NBC__N_TUPLE)
      for (int i = 0; i < idx->list.count; i++) set_cast(idx->list.items[i], T(NBC__T_INT64));
  } else
    return TYPING(I, idx, "%s() index must be an integer or a tuple of %d integers, not %s",
                  fname, at->ndim, tname(I, it)),
           NULL;
  if (!nbc__type_is_number(types[2]) || !nbc__type_can_convert(types[2], dt))
    return TYPING(I, n->list.items[2], "cannot convert %s to %s in %s()", tname(I, types[2]),
                  tname(I, dt), fname),
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
  set_cast(n->list.items[2], dt);
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
  if (nargs != 1 || !const_int(I, n->list.items[0], &nd) || nd < 1 || nd > 3)
    return TYPING(I, n, "%s() takes one constant argument, 1, 2 or 3", fname), NULL;
  nbc__call *c = call_new(I, n, strcmp(fname, "cuda.grid") == 0 ? NBC__B_CUDA_GRID
                                                                : NBC__B_CUDA_GRIDSIZE,
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

/* A Python function: find its FUNCDEF and specialise it for the argument types. */
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
      nbc__file *f = alloc(I, sizeof *f);
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
      nbc__module **ms = alloc(I, sizeof *ms * (size_t)(I->P->nmodules + 1));
      if (!ms) return NULL;
      if (I->P->nmodules) memcpy(ms, I->P->modules, sizeof *ms * (size_t)I->P->nmodules);
      ms[I->P->nmodules++] = m;
      I->P->modules = ms;
    }
    module = m;
    def = nbc__module_function(m, G->g.name);
  }
  if (!def) return TYPING(I, n, "cannot find the source of function '%s'", G->g.name), NULL;
  if (def->params.count != nargs)
    return TYPING(I, n, "%s() takes %d positional argument%s but %d %s given", G->g.name,
                  def->params.count, def->params.count == 1 ? "" : "s", nargs,
                  nargs == 1 ? "was" : "were"),
           NULL;
  for (int i = 0; i < nargs; i++)
    if (!nbc__type_is_number(types[i]) && !is_kind(types[i], NBC__T_ARRAY) &&
        !is_kind(types[i], NBC__T_TUPLE))
      return TYPING(I, n->list.items[i], "cannot pass a value of type %s to '%s'",
                    tname(I, types[i]), G->g.name),
             NULL;
  nbc__func *callee = specialise(I->P, module, def, resolver, types, nargs, NULL, false, n, I);
  if (!callee) return NULL;
  nbc__call *c = call_new(I, n, NBC__B_FUNC, G->g.name, nargs);
  if (!c) return NULL;
  c->func = callee;
  for (int i = 0; i < nargs; i++) c->argtypes[i] = types[i];
  c->ret = callee->ret;
  if (I->final) {
    if (I->ncallees == I->capcallees) {
      int cap = I->capcallees ? 2 * I->capcallees : 8;
      nbc__func **cs = alloc(I, sizeof *cs * (size_t)cap);
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

static const nbc__type *call_expr(infer *I, nbc__node *n) {
  n->info = NULL;
  const nbc__type *f = expr(I, n->a);
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
      return arg_list_error(I, n, tname(I, f), types, nargs);
    nbc__call *c = call_new(I, n, NBC__B_CAST, f->name, 1);
    if (!c) return NULL;
    c->argtypes[0] = types[0];
    c->ret = f->dtype;
    return c->ret;
  }
  if (f->kind != NBC__T_FUNCTION)
    return TYPING(I, n, "'%s' object is not callable", tname(I, f)), NULL;
  const nbc__global *G = n->a->kind == NBC__N_NAME && n->a->var < 0 ? n->a->info : NULL;
  if (G && G->g.kind == NBC_GLOBAL_FUNCTION)
    return call_python(I, n, (nbc__global *)G, types, npos == nargs ? nargs : npos);
  if (G && is_builtin_global(G)) return call_builtin(I, n, G->g.name, types, nargs);
  if (strncmp(f->name, "math.", 5) == 0) return call_math(I, n, f->name + 5, types, nargs);
  if (strncmp(f->name, "cuda.", 5) == 0) return call_cuda(I, n, f->name, types, nargs);
  return UNSUPPORTED(I, n, "unsupported call of %s", tname(I, f)), NULL;
}

static const nbc__type *expr_inner(infer *I, nbc__node *n) {
  switch (n->kind) {
  case NBC__N_INT:
    if (n->big) {
      /* numba types literals above INT64_MAX as uint64. */
      return T(NBC__T_UINT64);
    }
    return T(NBC__T_INT64);
  case NBC__N_FLOAT: return T(NBC__T_FLOAT64);
  case NBC__N_COMPLEX: return T(NBC__T_COMPLEX128);
  case NBC__N_BOOL: return T(NBC__T_BOOL);
  case NBC__N_NONE: return T(NBC__T_NONE);
  case NBC__N_NAME: return name_expr(I, n);
  case NBC__N_ATTR: return attr_expr(I, n);
  case NBC__N_SUBSCRIPT: return subscript_expr(I, n);
  case NBC__N_CALL: return call_expr(I, n);
  case NBC__N_BINOP:
    if (n->op == NBC__OP_MATMUL) return UNSUPPORTED(I, n, "the operator '@' is not supported"), NULL;
    return binop_expr(I, n);
  case NBC__N_UNARY: return unary_expr(I, n);
  case NBC__N_BOOLOP: return boolop_expr(I, n);
  case NBC__N_COMPARE: return compare_expr(I, n);
  case NBC__N_IFEXP: return ifexp_expr(I, n);
  case NBC__N_TUPLE: return tuple_expr(I, n);
  case NBC__N_STR: return UNSUPPORTED(I, n, "strings are not supported in kernels"), NULL;
  case NBC__N_LIST: return UNSUPPORTED(I, n, "lists are not supported in kernels"), NULL;
  case NBC__N_DICT: return UNSUPPORTED(I, n, "dicts are not supported in kernels"), NULL;
  case NBC__N_SLICE: return UNSUPPORTED(I, n, "array slicing is not supported"), NULL;
  case NBC__N_KEYWORD: return expr(I, n->a);
  default: {
    const char *what = n->tok && n->tok->len > 0 ? n->tok->start : "?";
    int len = n->tok ? n->tok->len : 1;
    return UNSUPPORTED(I, n, "unsupported expression: '%.*s'", len, what), NULL;
  }
  }
}

static const nbc__type *expr(infer *I, nbc__node *n) {
  if (!n) return NULL;
  n->cast = NULL;
  const nbc__type *t = expr_inner(I, n);
  n->type = t;
  return t;
}

/* ---------------------------------------------------- non-negative index analysis */

static bool nonneg_expr(infer *I, const nbc__node *n) {
  if (!n || !I->defs) return false;
  int64_t v;
  switch (n->kind) {
  case NBC__N_INT: return !n->big && n->value.i >= 0;
  case NBC__N_BOOL: return true;
  case NBC__N_NAME:
    if (n->var >= 0) return I->defs[n->var].nonneg;
    return const_int(I, n, &v) && v >= 0;
  case NBC__N_ATTR:
    /* cuda.threadIdx.x etc. are special registers (never negative); .size/.ndim too. */
    if (n->a && n->a->type && n->a->type->kind == NBC__T_MODULE) return n->type && nbc__type_is_int(n->type);
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
      return nonneg_expr(I, n->a) && nonneg_expr(I, n->b);
    if (n->op == NBC__OP_FLOORDIV || n->op == NBC__OP_MOD)
      return nonneg_expr(I, n->a) && const_int(I, n->b, &v) && v > 0;
    return false;
  default: return false;
  }
}

/* Records what is assigned to each variable (only the first walk after the fixed point
 * reads these). */
static void def_target(infer *I, const nbc__node *t, const nbc__node *value, int kind) {
  if (!t) return;
  if (t->kind == NBC__N_NAME) {
    int v = var_find(I, t->str);
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

static void collect_defs(infer *I, const nbc__list *body) {
  for (int i = 0; i < body->count; i++) {
    const nbc__node *s = body->items[i];
    switch (s->kind) {
    case NBC__N_ASSIGN:
      for (int k = 0; k < s->list.count; k++) def_target(I, s->list.items[k], s->a, 0);
      break;
    case NBC__N_AUGASSIGN:
      def_target(I, s->a, NULL, 3);
      def_target(I, s->a, NULL, 3);
      break;
    case NBC__N_FOR:
      def_target(I, s->a, s->b, 1);
      collect_defs(I, &s->body);
      break;
    case NBC__N_IF:
    case NBC__N_WHILE:
      collect_defs(I, &s->body);
      collect_defs(I, &s->orelse);
      break;
    default: break;
    }
  }
}

/* Least fixed point: a variable is non-negative when its single definition is. */
static void nonneg_analysis(infer *I) {
  for (int v = 0; v < I->fn->nvars; v++) I->defs[v].nonneg = false;
  bool changed = true;
  while (changed) {
    changed = false;
    for (int v = 0; v < I->fn->nvars; v++) {
      vardef *d = &I->defs[v];
      if (d->nonneg || d->ndefs != 1 || I->fn->vars[v].is_param) continue;
      if (!nbc__type_is_int(I->fn->vars[v].type)) continue;
      bool nn = false;
      if (d->def_kind == 0)
        nn = nonneg_expr(I, d->def);
      else if (d->def_kind == 2)
        nn = true;
      else if (d->def_kind == 1 && d->def && d->def->kind == NBC__N_CALL) {
        /* range(stop) / range(start, stop) / range(start, stop, step > 0 constant). */
        const nbc__node *r = d->def;
        int64_t step;
        if (r->list.count == 1)
          nn = true;
        else if (r->list.count == 2)
          nn = nonneg_expr(I, r->list.items[0]);
        else if (r->list.count == 3)
          nn = nonneg_expr(I, r->list.items[0]) &&
               ((const_int(I, r->list.items[2], &step) && step > 0) ||
                nonneg_expr(I, r->list.items[2]));
        /* A step that is non-negative but zero would not loop: still never negative. */
      }
      if (nn) {
        d->nonneg = true;
        changed = true;
      }
    }
  }
}

/* ------------------------------------------------------------------- statements */

static void stmts(infer *I, nbc__list *body);

/* Assigns a value of type t (node value, or NULL inside an unpacking) to target. */
static void assign_target(infer *I, nbc__node *target, nbc__node *value, const nbc__type *t) {
  switch (target->kind) {
  case NBC__N_NAME: {
    int v = var_find(I, target->str);
    target->var = v;
    target->info = NULL;
    if (!t) return;
    if (!var_assign(I, v, t, target)) return;
    target->type = I->fn->vars[v].type;
    if (I->final) {
      const nbc__type *vt = I->fn->vars[v].type;
      if (value)
        set_cast(value, vt);
      else {
        target->type = t;
        set_cast(target, vt);
      }
    }
    return;
  }
  case NBC__N_SUBSCRIPT: {
    const nbc__type *o = expr(I, target->a);
    if (!o) return;
    if (o->kind != NBC__T_ARRAY) {
      expr(I, target->b);
      TYPING(I, target, "'%s' object does not support item assignment", tname(I, o));
      return;
    }
    const nbc__type *dt = array_index(I, target, o, target->b);
    target->type = dt;
    if (!dt || !t) return;
    if (!nbc__type_is_number(t) || !nbc__type_can_convert(t, dt)) {
      TYPING(I, value ? value : target, "Cannot convert %s to %s in an array assignment",
             tname(I, t), tname(I, dt));
      return;
    }
    if (value) set_cast(value, dt);
    return;
  }
  case NBC__N_TUPLE:
  case NBC__N_LIST: {
    if (!t) {
      for (int i = 0; i < target->list.count; i++) assign_target(I, target->list.items[i], NULL, NULL);
      return;
    }
    if (t->kind != NBC__T_TUPLE || t->count != target->list.count) {
      TYPING(I, target, "cannot unpack %s into %d values", tname(I, t), target->list.count);
      return;
    }
    for (int i = 0; i < target->list.count; i++)
      assign_target(I, target->list.items[i], NULL, t->items[i]);
    return;
  }
  default:
    UNSUPPORTED(I, target, "cannot assign to this expression");
    return;
  }
}

static void augassign(infer *I, nbc__node *s) {
  nbc__node *t = s->a;
  if (t->kind != NBC__N_NAME && t->kind != NBC__N_SUBSCRIPT) {
    UNSUPPORTED(I, t, "cannot assign to this expression");
    return;
  }
  const nbc__type *a = expr(I, t);
  const nbc__type *b = expr(I, s->b);
  s->cast = NULL;
  s->type = NULL;
  if (!a || !b) return;
  const nbc__type *args[2];
  const char *why;
  const nbc__type *r = nbc__type_binop_sig(s->op, a, b, args, &why);
  if (!r) {
    TYPING(I, s, "Invalid use of %s= with parameters (%s, %s)", nbc__op_text(s->op),
           tname(I, a), tname(I, b));
    return;
  }
  set_cast(t, args[0]);
  set_cast(s->b, args[1]);
  s->type = r;
  if (t->kind == NBC__N_NAME) {
    if (!var_assign(I, t->var, r, s)) return;
    const nbc__type *vt = I->fn->vars[t->var].type;
    s->cast = nbc__type_equal(vt, r) ? NULL : vt;
  } else {
    if (!nbc__type_can_convert(r, a)) {
      TYPING(I, s, "Cannot convert %s to %s in an array assignment", tname(I, r), tname(I, a));
      return;
    }
    s->cast = nbc__type_equal(a, r) ? NULL : a;
  }
}

static bool always_returns(const nbc__list *body) {
  for (int i = 0; i < body->count; i++) {
    const nbc__node *s = body->items[i];
    if (s->kind == NBC__N_RETURN) return true;
    if (s->kind == NBC__N_IF && always_returns(&s->body) && always_returns(&s->orelse))
      return true;
    if (s->kind == NBC__N_WHILE && s->a && (s->a->kind == NBC__N_BOOL || s->a->kind == NBC__N_INT) &&
        s->a->value.i != 0) {
      /* `while True:` without a break only leaves by returning. */
      bool brk = false;
      for (int k = 0; k < s->body.count; k++)
        if (s->body.items[k]->kind == NBC__N_BREAK) brk = true;
      if (!brk) return true;
    }
  }
  return false;
}

static void ret_stmt(infer *I, nbc__node *s) {
  const nbc__type *t = s->a ? expr(I, s->a) : T(NBC__T_NONE);
  if (!t) return;
  if (s->a && !nbc__type_is_number(t) && t->kind != NBC__T_NONE && t->kind != NBC__T_TUPLE &&
      t->kind != NBC__T_ARRAY) {
    TYPING(I, s->a, "cannot return a value of type %s", tname(I, t));
    return;
  }
  const nbc__type *declared = I->fn->ret;
  if (declared) {
    if (declared->kind == NBC__T_VOID || declared->kind == NBC__T_NONE) {
      if (t->kind != NBC__T_NONE)
        TYPING(I, s->a, "cannot return %s from a function declared to return %s", tname(I, t),
               tname(I, declared));
      return;
    }
    if (!nbc__type_can_convert(t, declared)) {
      TYPING(I, s->a ? s->a : s, "cannot convert the returned %s to the declared %s",
             tname(I, t), tname(I, declared));
      return;
    }
    if (s->a && I->final) set_cast(s->a, declared);
    return;
  }
  if (t->kind != NBC__T_NONE) I->returns_value = true;
  const nbc__type *u = I->ret ? nbc__type_unify(I->ctx, I->ret, t) : t;
  if (!u) {
    TYPING(I, s->a ? s->a : s, "Cannot unify %s and %s for the return value", tname(I, I->ret),
           tname(I, t));
    return;
  }
  if (!I->ret || !nbc__type_equal(u, I->ret)) {
    I->ret = u;
    I->changed = true;
  }
}

static void stmt(infer *I, nbc__node *s) {
  switch (s->kind) {
  case NBC__N_ASSIGN: {
    const nbc__type *t = expr(I, s->a);
    for (int k = 0; k < s->list.count; k++) assign_target(I, s->list.items[k], s->a, t);
    if (t && !nbc__type_is_number(t) && t->kind != NBC__T_ARRAY && t->kind != NBC__T_TUPLE &&
        t->kind != NBC__T_NONE)
      TYPING(I, s->a, "cannot assign a value of type %s to a variable", tname(I, t));
    return;
  }
  case NBC__N_AUGASSIGN: augassign(I, s); return;
  case NBC__N_EXPR_STMT:
    if (s->a && s->a->kind == NBC__N_STR) return; /* docstring */
    expr(I, s->a);
    return;
  case NBC__N_IF:
    truth(I, s->a, expr(I, s->a));
    stmts(I, &s->body);
    stmts(I, &s->orelse);
    return;
  case NBC__N_WHILE:
    truth(I, s->a, expr(I, s->a));
    if (s->orelse.count) {
      UNSUPPORTED(I, s, "unsupported statement: 'while ... else'");
      return;
    }
    I->loop_depth++;
    stmts(I, &s->body);
    I->loop_depth--;
    return;
  case NBC__N_FOR: {
    if (s->orelse.count) {
      UNSUPPORTED(I, s, "unsupported statement: 'for ... else'");
      return;
    }
    if (!s->b || s->b->kind != NBC__N_CALL || !s->b->a || s->b->a->kind != NBC__N_NAME ||
        strcmp(s->b->a->str, "range") != 0 || var_find(I, "range") >= 0) {
      expr(I, s->b);
      UNSUPPORTED(I, s->b ? s->b : s, "for loops must iterate over range(...)");
      return;
    }
    if (s->a->kind != NBC__N_NAME) {
      UNSUPPORTED(I, s->a, "the target of a for loop must be a name");
      return;
    }
    const nbc__type *r = expr(I, s->b);
    const nbc__call *c = s->b->info;
    if (r && c && c->builtin == NBC__B_RANGE && c->nargs > 0) {
      /* The loop variable takes the counter type. */
      int v = var_find(I, s->a->str);
      s->a->var = v;
      s->a->info = NULL;
      s->a->type = c->argtypes[0];
      if (var_assign(I, v, c->argtypes[0], s->a) && I->final)
        set_cast(s->a, I->fn->vars[v].type);
    } else if (r) {
      TYPING(I, s->b, "range() needs at least one argument");
    }
    I->loop_depth++;
    stmts(I, &s->body);
    I->loop_depth--;
    return;
  }
  case NBC__N_BREAK:
  case NBC__N_CONTINUE:
    if (!I->loop_depth)
      TYPING(I, s, "'%s' outside loop", s->kind == NBC__N_BREAK ? "break" : "continue");
    return;
  case NBC__N_RETURN: ret_stmt(I, s); return;
  case NBC__N_PASS: return;
  case NBC__N_FUNCDEF: UNSUPPORTED(I, s, "unsupported statement: 'def' (nested function)"); return;
  case NBC__N_IMPORT:
  case NBC__N_IMPORT_FROM: UNSUPPORTED(I, s, "unsupported statement: 'import'"); return;
  case NBC__N_TRY: UNSUPPORTED(I, s, "unsupported statement: 'try'"); return;
  default: {
    const char *what = s->tok && s->tok->len > 0 ? s->tok->start : "?";
    int len = s->tok ? s->tok->len : 1;
    UNSUPPORTED(I, s, "unsupported statement: '%.*s'", len, what);
    return;
  }
  }
}

static void stmts(infer *I, nbc__list *body) {
  for (int i = 0; i < body->count && !(I->final && I->failed); i++) stmt(I, body->items[i]);
}

/* ------------------------------------------------------------- specialisations */

static bool same_args(const nbc__func *f, const nbc__type **args, int nargs) {
  if (f->nargs != nargs) return false;
  for (int i = 0; i < nargs; i++)
    if (!nbc__type_equal(f->argtypes[i], args[i])) return false;
  return true;
}

/* Types the function to its fixed point, then walks once more to record and report. */
static bool infer_body(infer *I) {
  nbc__func *fn = I->fn;
  const nbc__type *declared = fn->ret;
  for (int pass = 0; pass < 64; pass++) {
    I->changed = false;
    I->ret = NULL;
    I->returns_value = false;
    stmts(I, &fn->def->body);
    if (I->failed) return false; /* out of memory or a callee's error */
    if (!I->changed) break;
  }
  /* The final walk: non-negative facts first, then everything recorded. */
  I->defs = alloc(I, sizeof *I->defs * (size_t)(fn->nvars ? fn->nvars : 1));
  if (!I->defs) return false;
  collect_defs(I, &fn->def->body);
  nonneg_analysis(I);
  I->final = true;
  I->ret = NULL;
  I->returns_value = false;
  stmts(I, &fn->def->body);
  if (I->failed) return false;
  for (int v = 0; v < fn->nvars; v++)
    if (!fn->vars[v].type)
      return TYPING(I, fn->def, "cannot determine the type of '%s'", fn->vars[v].name);
  if (!declared) {
    const nbc__type *r = I->ret ? I->ret : T(NBC__T_NONE);
    if (I->returns_value && !always_returns(&fn->def->body)) {
      const nbc__type *u = nbc__type_unify(I->ctx, r, T(NBC__T_NONE));
      if (!u)
        return TYPING(I, fn->def,
                      "Cannot unify %s and none for the return value of '%s' (a path falls "
                      "off the end of the function)",
                      tname(I, r), fn->name);
    }
    fn->ret = r;
  }
  if (fn->is_kernel && fn->ret->kind != NBC__T_VOID && fn->ret->kind != NBC__T_NONE)
    return TYPING(I, fn->def, "TypeError: CUDA kernel must have void return type. (it returns %s)",
                  tname(I, fn->ret));
  if (fn->is_kernel) fn->ret = T(NBC__T_VOID);
  return true;
}

/* Sets ->cast on returned values of an inferred return type (after infer_body). */
static void cast_returns(nbc__list *body, const nbc__type *ret) {
  for (int i = 0; i < body->count; i++) {
    nbc__node *s = body->items[i];
    if (s->kind == NBC__N_RETURN && s->a) set_cast(s->a, ret);
    if (s->kind == NBC__N_IF || s->kind == NBC__N_WHILE || s->kind == NBC__N_FOR) {
      cast_returns(&s->body, ret);
      cast_returns(&s->orelse, ret);
    }
  }
}

static nbc__func *specialise(inferp *P, const nbc__module *module, nbc__node *def,
                             const nbc_resolver_t *resolver, const nbc__type **args,
                             int nargs, const nbc__type *declared, bool is_entry,
                             const nbc__node *call_site, infer *caller) {
  nbc__ctx *ctx = P->ctx;
  /* Reuse a finished specialisation; refuse recursion. */
  for (int i = 0; i < P->depth; i++)
    if (P->stack[i]->def && P->stack[i]->def->str && strcmp(P->stack[i]->def->str, def->str) == 0 &&
        P->stack[i]->module == module) {
      if (caller)
        TYPING(caller, call_site, "recursive call of '%s' is not supported", def->str);
      return NULL;
    }
  for (nbc__func *f = P->prog->funcs; f; f = f->next)
    if (f->module == module && f->name && strcmp(f->name, def->str) == 0 && !f->is_entry &&
        !is_entry && same_args(f, args, nargs))
      return f;
  if (P->depth == 64) {
    if (caller) TYPING(caller, call_site, "calls nested too deeply");
    return NULL;
  }
  nbc__func *fn = nbc__arena_alloc(ctx->arena, sizeof *fn);
  nbc__node *clone = nbc__node_clone(ctx, def);
  if (!fn || !clone) {
    nbc__diag_oom(ctx);
    if (caller) caller->failed = true;
    return NULL;
  }
  fn->name = def->str;
  fn->def = clone;
  fn->module = module;
  fn->resolver = resolver;
  fn->nargs = nargs;
  fn->argtypes = nbc__arena_alloc(ctx->arena, sizeof *fn->argtypes * (size_t)(nargs ? nargs : 1));
  if (!fn->argtypes) {
    nbc__diag_oom(ctx);
    return NULL;
  }
  memcpy(fn->argtypes, args, sizeof *args * (size_t)nargs);
  fn->ret = declared;
  fn->is_entry = is_entry;
  fn->is_kernel = is_entry && ctx->options && !ctx->options->device;
  fn->abi = is_entry && ctx->options ? ctx->options->abi : NBC_ABI_NUMBA;

  infer I;
  memset(&I, 0, sizeof I);
  I.P = P;
  I.ctx = ctx;
  I.fn = fn;
  I.file = module ? module->file : NULL;
  for (int i = 0; i < clone->params.count; i++) {
    nbc__node *p = clone->params.items[i];
    int v = var_add(&I, p->str);
    if (v < 0) return NULL;
    fn->vars[v].is_param = true;
    fn->vars[v].param_index = i;
    fn->vars[v].type = i < nargs ? args[i] : NULL;
    p->var = v;
    p->type = fn->vars[v].type;
  }
  collect_locals(&I, &clone->body);
  if (I.failed) return NULL;

  P->stack[P->depth++] = fn;
  bool ok = infer_body(&I);
  P->depth--;
  if (!ok) {
    if (caller) caller->failed = true;
    return NULL;
  }
  if (!declared) cast_returns(&clone->body, fn->ret);
  for (int i = 0; i < clone->params.count; i++) clone->params.items[i]->type = fn->vars[i].type;
  /* Keep the callees of the final walk for reachability. */
  fn->callees = I.callees;
  fn->ncallees = I.ncallees;
  /* Append to the program's list (creation order: callees before their callers). */
  nbc__func **tail = &P->prog->funcs;
  while (*tail) tail = &(*tail)->next;
  *tail = fn;
  return fn;
}

static void mark_reachable(nbc__func *f) {
  if (f->reachable) return;
  f->reachable = true;
  for (int i = 0; i < f->ncallees; i++) mark_reachable(f->callees[i]);
}

bool nbc__infer(nbc__ctx *ctx, const nbc__module *module, nbc__node *def,
                const nbc__signature *sig) {
  if (!def || def->kind != NBC__N_FUNCDEF) {
    NBC__BUG(ctx, "nbc__infer needs a FUNCDEF");
    return false;
  }
  nbc__program *prog = nbc__arena_alloc(ctx->arena, sizeof *prog);
  inferp P;
  memset(&P, 0, sizeof P);
  if (!prog) {
    nbc__diag_oom(ctx);
    return false;
  }
  P.ctx = ctx;
  P.prog = prog;
  const nbc__file *file = module ? module->file : NULL;
  if (def->params.count != sig->nargs) {
    int line = def->tok ? def->tok->line : 1, col = def->tok ? def->tok->col : 1;
    nbc__diag_error(ctx, NBC_TYPING_ERROR, def->tok ? def->tok->file : file, line, col,
                    "the signature has %d argument%s but '%s' takes %d", sig->nargs,
                    sig->nargs == 1 ? "" : "s", def->str, def->params.count);
    return false;
  }
  if (ctx->options && !ctx->options->device && sig->ret && sig->ret->kind != NBC__T_VOID) {
    int line = def->tok ? def->tok->line : 1, col = def->tok ? def->tok->col : 1;
    nbc__buf b;
    nbc__buf_init(&b, ctx->arena);
    nbc__type_print(&b, sig->ret);
    nbc__diag_error(ctx, NBC_TYPING_ERROR, def->tok ? def->tok->file : file, line, col,
                    "TypeError: CUDA kernel must have void return type. (declared %s)", b.data);
    return false;
  }
  nbc__func *entry = specialise(&P, module, def, ctx->resolver, sig->args, sig->nargs,
                                sig->ret, true, NULL, NULL);
  if (!entry) {
    if (ctx->status == NBC_OK) NBC__BUG(ctx, "inference failed without a diagnostic");
    return false;
  }
  /* Drop specialisations that only intermediate walks asked for. */
  mark_reachable(entry);
  nbc__func **pf = &prog->funcs;
  while (*pf) {
    if (!(*pf)->reachable)
      *pf = (*pf)->next;
    else
      pf = &(*pf)->next;
  }
  prog->entry = entry;
  ctx->program = prog;
  return true;
}

/* ------------------------------------------------------------------------ dump */

static void dump_expr(nbc__buf *out, const nbc__node *n, int indent);

static void dump_line(nbc__buf *out, const nbc__node *n, int indent, const char *what) {
  nbc__buf_printf(out, "%*s%d:%d %s", indent, "", n->tok ? n->tok->line : 0,
                  n->tok ? n->tok->col : 0, what);
  if (n->type) {
    nbc__buf_puts(out, " : ");
    nbc__type_print(out, n->type);
  }
  if (n->cast) {
    nbc__buf_puts(out, " -> ");
    nbc__type_print(out, n->cast);
  }
  nbc__buf_puts(out, "\n");
}

static void dump_expr(nbc__buf *out, const nbc__node *n, int indent) {
  if (!n) return;
  char what[160];
  switch (n->kind) {
  case NBC__N_NAME: snprintf(what, sizeof what, "NAME %s", n->str); break;
  case NBC__N_ATTR: snprintf(what, sizeof what, "ATTR .%s", n->str); break;
  case NBC__N_INT: snprintf(what, sizeof what, "INT %lld", (long long)n->value.i); break;
  case NBC__N_FLOAT: snprintf(what, sizeof what, "FLOAT %g", n->value.f); break;
  case NBC__N_BINOP:
  case NBC__N_UNARY:
  case NBC__N_BOOLOP:
  case NBC__N_AUGASSIGN:
    snprintf(what, sizeof what, "%s %s", nbc__node_kind_name(n->kind), nbc__op_text(n->op));
    break;
  default: snprintf(what, sizeof what, "%s", nbc__node_kind_name(n->kind)); break;
  }
  dump_line(out, n, indent, what);
  dump_expr(out, n->a, indent + 2);
  dump_expr(out, n->b, indent + 2);
  dump_expr(out, n->c, indent + 2);
  for (int i = 0; i < n->list.count; i++) dump_expr(out, n->list.items[i], indent + 2);
  for (int i = 0; i < n->body.count; i++) dump_expr(out, n->body.items[i], indent + 2);
  for (int i = 0; i < n->orelse.count; i++) dump_expr(out, n->orelse.items[i], indent + 2);
}

void nbc__infer_dump(nbc__buf *out, const nbc__program *program) {
  if (!program) return;
  for (const nbc__func *f = program->funcs; f; f = f->next) {
    nbc__buf_printf(out, "%s %s(", f->is_kernel ? "kernel" : "function", f->name);
    for (int i = 0; i < f->nargs; i++) {
      if (i) nbc__buf_puts(out, ", ");
      nbc__type_print(out, f->argtypes[i]);
    }
    nbc__buf_puts(out, ") -> ");
    nbc__type_print(out, f->ret);
    nbc__buf_puts(out, "\n");
    for (int v = 0; v < f->nvars; v++) {
      nbc__buf_printf(out, "  var %s%s: ", f->vars[v].name, f->vars[v].is_param ? " (param)" : "");
      nbc__type_print(out, f->vars[v].type);
      nbc__buf_puts(out, "\n");
    }
    for (int i = 0; i < f->def->body.count; i++) dump_expr(out, f->def->body.items[i], 2);
  }
}
