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
 * Subscripts and record fields are typed in infer_index.c, calls in infer_call.c.
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

#include "compiler/infer.h"

/* ------------------------------------------------------------------- diagnostics */

bool nbc__infer_error(infer *I, const nbc__node *n, nbc_status_t status, const char *fmt, ...) {
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
    while (n->kind == NBC__N_ATTR && n->a)
      n = n->a;
  }
  const nbc__file *file = n && n->tok ? n->tok->file : I->file;
  int line = n && n->tok ? n->tok->line : 1, col = n && n->tok ? n->tok->col : 1;
  nbc__diag_error(I->ctx, status, file, line, col, "%s", msg);
  return false;
}

const char *nbc__infer_tname(infer *I, const nbc__type *t) {
  return nbc__type_name(I->ctx, t);
}

void *nbc__infer_alloc(infer *I, size_t size) {
  void *p = nbc__arena_alloc(I->ctx->arena, size);
  if (!p) {
    nbc__diag_oom(I->ctx);
    I->failed = true;
  }
  return p;
}

/* -------------------------------------------------------------------- variables */

int nbc__infer_var_find(infer *I, const char *name) {
  return nbc__names_get(&I->var_index, name);
}

static int var_add(infer *I, const char *name) {
  int i = nbc__infer_var_find(I, name);
  if (i >= 0) return i;
  if (I->fn->nvars == I->capvars) {
    int cap = I->capvars ? I->capvars * 2 : 16;
    nbc__var *v = nbc__infer_alloc(I, sizeof *v * (size_t)cap);
    if (!v) return -1;
    if (I->fn->nvars) memcpy(v, I->fn->vars, sizeof *v * (size_t)I->fn->nvars);
    I->fn->vars = v;
    I->capvars = cap;
  }
  if (!nbc__names_set(&I->var_index, I->ctx->arena, name, I->fn->nvars)) {
    nbc__diag_oom(I->ctx);
    I->failed = true;
    return -1;
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
    for (int i = 0; i < t->list.count; i++)
      collect_target(I, t->list.items[i]);
}

static void collect_locals(infer *I, nbc__list *body) {
  for (int i = 0; i < body->count; i++) {
    nbc__node *s = body->items[i];
    switch (s->kind) {
    case NBC__N_ASSIGN:
      for (int k = 0; k < s->list.count; k++)
        collect_target(I, s->list.items[k]);
      break;
    case NBC__N_AUGASSIGN:
      collect_target(I, s->a);
      break;
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
    default:
      break;
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
    return TYPING(I, at, "Cannot unify %s and %s for '%s'", nbc__infer_tname(I, var->type),
                  nbc__infer_tname(I, t), var->name);
  if (!nbc__type_equal(u, var->type)) {
    var->type = u;
    I->changed = true;
  }
  return true;
}

/* Sets n->cast when the value of n must be converted to `to`. */
void nbc__infer_cast(nbc__node *n, const nbc__type *to) {
  if (!n || !to) return;
  n->cast = n->type && nbc__type_equal(n->type, to) ? NULL : to;
}

/* --------------------------------------------------------------------- globals */

/* A global array's number of dimensions as the compiler takes it: 0 for a 0-d array (it has
 * no shape to give), -1 for no shape it can use (over 32 dimensions, or the shape, or the
 * strides when asked for, missing). */
static int global_array_ndim(const nbc_global_t *g, bool strides) {
  if (g->array_ndim == 0) return 0;
  return g->array_ndim >= 1 && g->array_ndim <= 32 && g->array_shape &&
                 (!strides || g->array_strides)
             ? g->array_ndim
             : -1;
}

/* A global array's elements, shape and dtype name copied into *to (they outlive the
 * resolver's call). */
static bool copy_array(infer *I, nbc_global_t *to, const nbc_global_t *from) {
  void *data = nbc__infer_alloc(I, from->array_bytes ? from->array_bytes : 1);
  int ndim = global_array_ndim(from, false);
  int64_t *shape = nbc__infer_alloc(I, sizeof *shape * (size_t)(ndim > 0 ? ndim : 1));
  if (!data || !shape) return false;
  if (from->array_bytes && from->array_data) memcpy(data, from->array_data, from->array_bytes);
  if (ndim > 0) memcpy(shape, from->array_shape, sizeof *shape * (size_t)ndim);
  to->array_data = from->array_data ? data : NULL;
  to->array_bytes = from->array_bytes;
  to->array_shape = shape;
  to->array_ndim = ndim;
  to->array_layout = from->array_layout;
  to->name = from->name ? nbc__arena_strdup(I->ctx->arena, from->name) : NULL;
  return !from->name || to->name;
}

/* A global tuple's items copied into *to (they outlive the resolver's call): kinds, values,
 * arrays and nested tuples; a deeper nesting than 8 or a malformed count leaves the tuple
 * empty of them (OTHER items, refused when typed). */
static bool copy_tuple(infer *I, nbc_global_t *to, const nbc_global_t *from, int depth) {
  int count = from->tuple_count >= 0 && from->tuple_count <= 64 && from->tuple_items
                  ? from->tuple_count
                  : 0;
  nbc_global_t *items = nbc__infer_alloc(I, sizeof *items * (size_t)(count ? count : 1));
  if (!items) return false;
  for (int i = 0; i < count; i++) {
    const nbc_global_t *it = &from->tuple_items[i];
    memset(&items[i], 0, sizeof items[i]);
    items[i].kind = it->kind == NBC_GLOBAL_TUPLE && depth >= 8 ? NBC_GLOBAL_OTHER : it->kind;
    items[i].value = it->value;
    if (items[i].kind == NBC_GLOBAL_TUPLE && !copy_tuple(I, &items[i], it, depth + 1))
      return false;
    if (items[i].kind == NBC_GLOBAL_ARRAY && !copy_array(I, &items[i], it)) return false;
  }
  to->tuple_items = items;
  to->tuple_count = count;
  return true;
}

static nbc__global *global_new(infer *I, const nbc_global_t *g) {
  nbc__global *G = nbc__infer_alloc(I, sizeof *G);
  if (!G) return NULL;
  G->g = *g;
  nbc__arena *a = I->ctx->arena;
  if (g->name) G->g.name = nbc__arena_strdup(a, g->name);
  if (g->source) G->g.source = nbc__arena_strdup(a, g->source);
  if (g->filename) G->g.filename = nbc__arena_strdup(a, g->filename);
  if (g->signature) G->g.signature = nbc__arena_strdup(a, g->signature);
  if (g->kind == NBC_GLOBAL_ARRAY && !copy_array(I, &G->g, g)) return NULL;
  if (g->kind == NBC_GLOBAL_DEVICE_ARRAY) { /* its shape and strides, likewise */
    int ndim = global_array_ndim(g, true);
    int64_t *dims = nbc__infer_alloc(I, sizeof *dims * 2 * (size_t)(ndim > 0 ? ndim : 1));
    if (!dims) return NULL;
    if (ndim > 0) {
      memcpy(dims, g->array_shape, sizeof *dims * (size_t)ndim);
      memcpy(dims + ndim, g->array_strides, sizeof *dims * (size_t)ndim);
    }
    G->g.array_shape = dims;
    G->g.array_strides = dims + (ndim > 0 ? ndim : 0);
    G->g.array_ndim = ndim;
  }
  if (g->kind == NBC_GLOBAL_TUPLE && !copy_tuple(I, &G->g, g, 0)) return NULL;
  if (g->kind == NBC_GLOBAL_ENUM || g->kind == NBC_GLOBAL_ENUM_MEMBER) { /* values, names */
    if (!copy_tuple(I, &G->g, g, 0)) return NULL; /* values may be tuples of numbers */
    const char **names = nbc__infer_alloc(I, sizeof *names * (size_t)(G->g.tuple_count + 1));
    if (!names) return NULL;
    for (int i = 0; i < G->g.tuple_count; i++)
      if (!(names[i] = nbc__arena_strdup(a, g->enum_names && g->enum_names[i] ? g->enum_names[i]
                                                                              : "?")))
        return NULL;
    G->g.enum_names = names;
  }
  G->module = I->fn->module;
  return G;
}

static bool cmath_exists(const char *name) {
  return nbc__cmath_find(name) != NBC__CMATH_NONE;
}

/* <module>.<name> as the FUNCTION type calls dispatch on ("math.sin", "cmath.exp"), or NULL
 * reported as "unsupported <what>'<module>.<name>'" when exists() says there is none. */
static const nbc__type *module_function(infer *I, const nbc__node *n, const char *module,
                                        const char *name, bool (*exists)(const char *),
                                        const char *what) {
  if (!name || !exists(name)) {
    UNSUPPORTED(I, n, "unsupported %s'%s.%s'", what, module, name ? name : "?");
    return NULL;
  }
  char buf[128];
  snprintf(buf, sizeof buf, "%s.%s", module, name);
  return nbc__type_special(I->ctx, NBC__T_FUNCTION, buf, NULL);
}

static const char *const builtin_names[] = {
    "range", "len",   "abs",     "min",    "max", "int", "float", "bool",
    "round", "print", "complex", "divmod", "pow", "sum", "tuple", "isinstance"};

int nbc__infer_resolve(const nbc_resolver_t *resolver, const nbc__module *module,
                       const char *name, nbc_global_t *g) {
  memset(g, 0, sizeof *g);
  return resolver && resolver->resolve ? resolver->resolve(resolver->data, name, g)
                                       : nbc__module_resolve((void *)module, name, g);
}

/* What a global name means, or NULL (reported) when it has none. */
static nbc__global *global_lookup(infer *I, const nbc__node *n, const char *name) {
  nbc_global_t g;
  int rc = nbc__infer_resolve(I->fn->resolver, I->fn->module, name, &g);
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
    if (strcmp(name, "enumerate") == 0 || strcmp(name, "zip") == 0) /* desugar.c's */
      TYPING(I, n, "%s() is supported as the iterable of a for loop: %s", name,
             name[0] == 'e' ? "for i, v in enumerate(iterable[, start]) (start positional or "
                              "start=)"
                            : "for a, b in zip(iterable, ...) (no keyword arguments)");
    else
      TYPING(I, n, "NameError: name '%s' is not defined", name);
    return NULL;
  }
  return global_new(I, &g);
}

bool nbc__infer_is_builtin(const nbc__global *G) {
  return G && G->g.kind == NBC_GLOBAL_OTHER && !G->module;
}

bool nbc__infer_untyped_global(infer *I, const nbc__node *n) {
  if (n->kind != NBC__N_NAME || nbc__infer_var_find(I, n->str) >= 0) return false;
  nbc_global_t g;
  return nbc__infer_resolve(I->fn->resolver, I->fn->module, n->str, &g) == 0 &&
         g.kind == NBC_GLOBAL_OTHER;
}

static const nbc__type *cuda_name_type(infer *I, const nbc__node *n, const char *name);

/* Constant memory is 64 KiB per module; numba lets ptxas refuse more, nbcuda says it here. */
#define CONST_MEMORY_BYTES 65536

/* The Record type the resolver names by numba's printed form ("Record(x[type=float64;
 * offset=0],...;16;False)", from_dtype of a structured dtype), read by the signature parser;
 * NULL (the parser's error recorded, I->failed) when it is none. */
static const nbc__type *record_by_text(infer *I, const char *name) {
  nbc__signature sig;
  const char *text = nbc__arena_printf(I->ctx->arena, "(%s,)", name);
  if (!text || !nbc__signature_parse(I->ctx, text, &sig) || sig.nargs != 1 ||
      sig.args[0]->kind != NBC__T_RECORD) {
    I->failed = true;
    return NULL;
  }
  return sig.args[0];
}

static bool is_record_text(const char *name) {
  return name && strncmp(name, "Record(", 7) == 0;
}

/* A global array's element type from the resolver's dtype name (numba's or numpy's, or a
 * Record's text), or NULL when it is none or not a number or record. */
static const nbc__type *global_array_dtype(infer *I, const nbc_global_t *g) {
  const char *dn = g->name;
  if (is_record_text(dn)) return record_by_text(I, dn); /* an array of records */
  const nbc__type *dt = dn ? nbc__type_by_name(dn, strlen(dn)) : NULL;
  if (!dt) dt = nbc__numpy_dtype(dn);
  return dt && nbc__type_is_number(dt) ? dt : NULL;
}

/* A global array: numba's readonly array(dtype, ndim, C or F) of the frozen elements, once the
 * resolver's description is checked (a known dtype, 1..32 dimensions, the byte count of the
 * shape, within constant memory). */
static const nbc__type *const_array_type(infer *I, const nbc__node *n, const nbc_global_t *g) {
  const char *dn = g->name ? g->name : "?";
  const nbc__type *dt = global_array_dtype(I, g);
  if (!dt) {
    if (I->failed) return NULL;
    UNSUPPORTED(I, n, "global array '%s' of dtype %s is not supported in a kernel", n->str, dn);
    return NULL;
  }
  if (g->array_ndim < 0 || (g->array_bytes && !g->array_data)) {
    UNSUPPORTED(I, n, "global array '%s' has no elements or shape the compiler can use",
                n->str);
    return NULL;
  }
  uint64_t count = 1;
  for (int d = 0; d < g->array_ndim; d++) {
    int64_t e = g->array_shape[d];
    if (e < 0 || (e && count > UINT64_MAX / (uint64_t)e))
      count = UINT64_MAX;
    else
      count *= (uint64_t)e;
  }
  if (count == UINT64_MAX || count * nbc__type_size(dt) != g->array_bytes) {
    UNSUPPORTED(I, n, "global array '%s': %zu bytes do not make its shape of %s", n->str,
                g->array_bytes, dn);
    return NULL;
  }
  if (g->array_bytes > CONST_MEMORY_BYTES) {
    UNSUPPORTED(I, n, "global array '%s' has %zu bytes; constant memory holds %d", n->str,
                g->array_bytes, CONST_MEMORY_BYTES);
    return NULL;
  }
  char layout = g->array_layout == 'F' && g->array_ndim > 1 ? 'F' : 'C';
  nbc__type *t = (nbc__type *)nbc__type_array(I->ctx, dt, g->array_ndim, layout);
  if (t) t->readonly = true;
  return t;
}

/* A global device array's type, as numba-cuda types one (its _numba_type_, or the layout
 * its __cuda_array_interface__ gives): numbers only, writable unless the interface says it is
 * read-only. */
static const nbc__type *device_array_type(infer *I, const nbc__node *n, const nbc__global *G) {
  const char *dn = G->g.name ? G->g.name : "?";
  const nbc__type *dt = global_array_dtype(I, &G->g);
  if (!dt) {
    if (I->failed) return NULL;
    UNSUPPORTED(I, n, "global device array '%s' of dtype %s is not supported in a kernel",
                n->str, dn);
    return NULL;
  }
  if (G->g.array_ndim < 0) {
    UNSUPPORTED(I, n, "global device array '%s' has no shape the compiler can use", n->str);
    return NULL;
  }
  char layout = G->g.array_layout == 'F' || G->g.array_layout == 'A' ? G->g.array_layout : 'C';
  nbc__type *t = (nbc__type *)nbc__type_array(I->ctx, dt, G->g.array_ndim, layout);
  if (t) t->readonly = G->g.array_readonly != 0;
  return t;
}

static const nbc__type *global_tuple_type(infer *I, const nbc__node *n, const nbc_global_t *g);

/* An enum class global's type (NBC__T_ENUM_CLASS): its members' values must be all ints
 * (int64), all floats (float64) or all tuples of one type of numbers (Python's Planet example,
 * MERCURY = (3.303e+23, 2.4397e6)), as numba's EnumClass needs one value type. */
static const nbc__type *enum_class_type(infer *I, const nbc__node *n, const nbc_global_t *g) {
  bool ints = g->tuple_count > 0, floats = g->tuple_count > 0, tuples = g->tuple_count > 0;
  for (int i = 0; i < g->tuple_count; i++) {
    ints = ints && g->tuple_items[i].kind == NBC_GLOBAL_INT;
    floats = floats && g->tuple_items[i].kind == NBC_GLOBAL_FLOAT;
    tuples = tuples && g->tuple_items[i].kind == NBC_GLOBAL_TUPLE;
  }
  const nbc__type *vt = ints ? T(NBC__T_INT64) : floats ? T(NBC__T_FLOAT64) : NULL;
  for (int i = 0; tuples && i < g->tuple_count; i++) {
    const nbc__type *t = global_tuple_type(I, n, &g->tuple_items[i]);
    if (!t) return NULL;
    tuples = nbc__type_is_numbers_tuple(t) && (!vt || nbc__type_equal(vt, t));
    vt = t;
  }
  if (!ints && !floats && !tuples)
    return UNSUPPORTED(I, n,
                       "enum class '%s': kernels use enums whose members are all ints, "
                       "all floats or all tuples of one type of numbers",
                       g->name ? g->name : "?"),
           NULL;
  return nbc__type_enum(I->ctx, NBC__T_ENUM_CLASS, g->name ? g->name : "?", vt,
                        g->enum_int != 0);
}

/* The type of a member of enum class ct: an ENUM value; an IntEnum's (numba's IntEnumMember)
 * is used as its int value wherever a number is needed (nbc__infer_expr). */
static const nbc__type *enum_member_type(infer *I, const nbc__type *ct) {
  if (!ct) return NULL;
  return nbc__type_enum(I->ctx, NBC__T_ENUM, ct->name, ct->dtype, ct->int_enum);
}

int nbc__enum_member_index(const nbc_global_t *g, const char *name) {
  for (int i = 0; name && g->enum_names && i < g->tuple_count; i++)
    if (strcmp(g->enum_names[i], name) == 0) return i;
  return -1;
}

/* The index of the member called name in enum global g, or -1 reported. */
int nbc__infer_enum_member(infer *I, const nbc__node *n, const nbc_global_t *g,
                           const char *name) {
  int i = nbc__enum_member_index(g, name);
  if (i < 0)
    TYPING(I, n, "Unknown attribute '%s' of enum class %s", name ? name : "?",
           g->name ? g->name : "?");
  return i;
}

/* A frozen global tuple's type: int64, float64 and bool items, numpy arrays (readonly, in
 * constant memory) and tuples of them. */
static const nbc__type *global_tuple_type(infer *I, const nbc__node *n, const nbc_global_t *g) {
  const nbc__type *items[64];
  for (int i = 0; i < g->tuple_count; i++) {
    const nbc_global_t *it = &g->tuple_items[i];
    if (it->kind == NBC_GLOBAL_TUPLE) {
      if (!(items[i] = global_tuple_type(I, n, it))) return NULL;
    } else if (it->kind == NBC_GLOBAL_ARRAY) { /* frozen in constant memory, as numba does */
      if (!(items[i] = const_array_type(I, n, it))) return NULL;
    } else if (it->kind == NBC_GLOBAL_INT || it->kind == NBC_GLOBAL_FLOAT ||
               it->kind == NBC_GLOBAL_BOOL) {
      items[i] = T(it->kind == NBC_GLOBAL_INT     ? NBC__T_INT64
                   : it->kind == NBC_GLOBAL_FLOAT ? NBC__T_FLOAT64
                                                  : NBC__T_BOOL);
    } else {
      UNSUPPORTED(I, n, "global tuple '%s': item %d is not a number", n->str, i);
      return NULL;
    }
  }
  return nbc__type_tuple(I->ctx, items, g->tuple_count);
}

/* The type of a global's value. */
static const nbc__type *global_type(infer *I, const nbc__node *n, nbc__global *G) {
  switch (G->g.kind) {
  case NBC_GLOBAL_INT:
    return T(NBC__T_INT64);
  case NBC_GLOBAL_FLOAT:
    return T(NBC__T_FLOAT64);
  case NBC_GLOBAL_BOOL:
    return T(NBC__T_BOOL);
  case NBC_GLOBAL_NONE:
    return T(NBC__T_NONE);
  case NBC_GLOBAL_DATETIME: { /* its type's name: datetime64[D] */
    nbc__signature sig;
    const char *text = nbc__arena_printf(I->ctx->arena, "(%s)", G->g.name ? G->g.name : "?");
    if (text && nbc__signature_parse(I->ctx, text, &sig) && sig.nargs == 1 &&
        nbc__type_is_datetime(sig.args[0]))
      return sig.args[0];
    I->failed = true;
    return UNSUPPORTED(I, n, "global '%s': not a datetime64 or timedelta64 type: %s", n->str,
                       G->g.name ? G->g.name : "(none)"),
           NULL;
  }
  case NBC_GLOBAL_MODULE_MATH:
    return nbc__type_special(I->ctx, NBC__T_MODULE, "math", NULL);
  case NBC_GLOBAL_MODULE_CMATH:
    return nbc__type_special(I->ctx, NBC__T_MODULE, "cmath", NULL);
  case NBC_GLOBAL_CMATH_FUNCTION:
    return module_function(I, n, "cmath", G->g.name, cmath_exists, "cmath function ");
  case NBC_GLOBAL_MODULE_CUDA:
    return nbc__type_special(I->ctx, NBC__T_MODULE, "cuda", NULL);
  case NBC_GLOBAL_MODULE_NUMPY:
    return nbc__type_special(I->ctx, NBC__T_MODULE, "numpy", NULL);
  case NBC_GLOBAL_MODULE_NUMBA:
    return nbc__type_special(I->ctx, NBC__T_MODULE, "numba", NULL);
  case NBC_GLOBAL_MODULE_OPERATOR:
    return nbc__type_special(I->ctx, NBC__T_MODULE, "operator", NULL);
  case NBC_GLOBAL_OPERATOR_FUNCTION:
    return module_function(I, n, "operator", G->g.name, nbc__operator_exists,
                           "operator function ");
  case NBC_GLOBAL_NUMPY_FUNCTION: {
    const char *u = nbc__numpy_ufunc(G->g.name);
    if (!u) {
      UNSUPPORTED(I, n, "'numpy.%s' is not supported in kernels", G->g.name ? G->g.name : "?");
      return NULL;
    }
    char buf[128];
    snprintf(buf, sizeof buf, "numpy.%s", u);
    return nbc__type_special(I->ctx, NBC__T_FUNCTION, buf, NULL);
  }
  case NBC_GLOBAL_MATH_FUNCTION:
    return module_function(I, n, "math", G->g.name, nbc__math_exists, "math function ");
  case NBC_GLOBAL_TYPE: {
    const nbc__type *t = G->g.name ? nbc__type_by_name(G->g.name, strlen(G->g.name)) : NULL;
    if (!t) t = nbc__numpy_dtype(G->g.name); /* numpy's spelling: ulonglong, half... */
    if (!t && is_record_text(G->g.name)) {
      /* a Record type (from_dtype of a structured dtype): a shared/local array's dtype */
      if (!(t = record_by_text(I, G->g.name))) return NULL;
    }
    if (!t) {
      UNSUPPORTED(I, n, "unsupported type '%s'", G->g.name ? G->g.name : "?");
      return NULL;
    }
    return nbc__type_special(I->ctx, NBC__T_DTYPE, G->g.name, t);
  }
  case NBC_GLOBAL_FUNCTION:
  case NBC_GLOBAL_DECLARED:
    return nbc__type_special(I->ctx, NBC__T_FUNCTION, G->g.name ? G->g.name : n->str, NULL);
  case NBC_GLOBAL_CUDA_NAME:
    return cuda_name_type(I, n, G->g.name);
  case NBC_GLOBAL_ARRAY:
    return const_array_type(I, n, &G->g);
  case NBC_GLOBAL_DEVICE_ARRAY:
    return device_array_type(I, n, G);
  case NBC_GLOBAL_ENUM:
    return enum_class_type(I, n, &G->g);
  case NBC_GLOBAL_CFFI: /* a cffi.FFI object: only its from_buffer (attr_expr) */
    return nbc__type_special(I->ctx, NBC__T_MODULE, "cffi.FFI", NULL);
  case NBC_GLOBAL_MODULE: /* named by the path the code reaches it by: "helpers.sub" */
    return nbc__type_special(
        I->ctx, NBC__T_MODULE,
        nbc__arena_printf(I->ctx->arena, "%s%s", NBC__PY_MODULE_PREFIX, n->str), NULL);
  case NBC_GLOBAL_ENUM_MEMBER:
    if (G->g.value.i < 0 || G->g.value.i >= G->g.tuple_count)
      return UNSUPPORTED(I, n, "global '%s': no such enum member", n->str), NULL;
    return enum_member_type(I, enum_class_type(I, n, &G->g));
  case NBC_GLOBAL_TUPLE: /* numba freezes a global tuple */
    return global_tuple_type(I, n, &G->g);
  case NBC_GLOBAL_OTHER:
    if (nbc__infer_is_builtin(G))
      return nbc__type_special(I->ctx, NBC__T_FUNCTION, G->g.name, NULL);
    if (G->g.name) /* the resolver's class of the value, as numba names it */
      TYPING(I, n, "Untyped global name '%s': Cannot determine Numba type of %s", n->str,
             G->g.name);
    else
      UNSUPPORTED(I, n, "global '%s' is not supported in a kernel", n->str);
    return NULL;
  default:
    TYPING(I, n, "NameError: name '%s' is not defined", n->str);
    return NULL;
  }
}

/* ------------------------------------------------------------------ expressions */

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

static int local_bindings(nbc__list *body, const char *name, const nbc__node **pvalue) {
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
    G = global_lookup(I, n, n->str);
    if (!G) return NULL;
    n->info = G;
  }
  return global_type(I, n, G);
}

/* A module's float constant (math.pi, numpy.inf) as n's FLOAT global. */
static const nbc__type *float_attr(infer *I, nbc__node *n, double v) {
  nbc_global_t g;
  memset(&g, 0, sizeof g);
  g.kind = NBC_GLOBAL_FLOAT;
  g.value.f = v;
  g.name = n->str;
  if (!n->info) n->info = global_new(I, &g);
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
  return t ? t : module_function(I, n, "math", n->str, nbc__math_exists, "attribute ");
}

static const nbc__type *cmath_attr(infer *I, nbc__node *n) {
  const nbc__type *t = float_constant_attr(I, n);
  return t ? t : module_function(I, n, "cmath", n->str, cmath_exists, "cmath function ");
}

/* numpy.<attr>: a dtype, a constant or a ufunc (numpy.c). */
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
 * cuda_names.c's table: a namespace is a MODULE type, a function a FUNCTION type named
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
static const nbc__type *cuda_name_type(infer *I, const nbc__node *n, const char *name) {
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
  return nbc__infer_enum_member(I, n, &G->g, name) < 0 ? NULL : enum_member_type(I, ct);
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
  nbc__global *G = global_new(I, &g);
  if (!G) return NULL;
  n->kind = NBC__N_NAME;
  n->str = full;
  n->a = NULL;
  n->var = -1;
  n->info = G;
  return global_type(I, n, G);
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
      return module_function(I, n, "operator", n->str, nbc__operator_exists,
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

static bool truth(infer *I, nbc__node *n, const nbc__type *t) {
  const char *why;
  if (!t) return false;
  if (!nbc__type_truth(t, &why)) return TYPING(I, n, "%s (%s)", why, nbc__infer_tname(I, t));
  return true;
}

static const nbc__type *boolop_expr(infer *I, nbc__node *n) {
  const nbc__type *a = nbc__infer_expr(I, n->a), *b = nbc__infer_expr(I, n->b);
  if (!a || !b) return NULL;
  if (!truth(I, n->a, a)) return NULL;
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
static const nbc__type *expr_keeping_optional(infer *I, nbc__node *n) {
  I->keep_optional = true;
  const nbc__type *t = nbc__infer_expr(I, n);
  I->keep_optional = false;
  return t;
}

static const nbc__type *compare_expr(infer *I, nbc__node *n) {
  int count = n->list.count;
  /* `x is None` / `x is not None` test an Optional itself */
  bool is_test = count == 1 && (n->ops[0] == NBC__OP_IS || n->ops[0] == NBC__OP_ISNOT);
  const nbc__type *left = is_test ? expr_keeping_optional(I, n->a) : nbc__infer_expr(I, n->a);
  const nbc__type **conv =
      nbc__infer_alloc(I, sizeof *conv * (size_t)(2 * (count ? count : 1)));
  if (!conv) return NULL;
  bool ok = left != NULL;
  nbc__node *lnode = n->a;
  for (int i = 0; i < count; i++) {
    nbc__node *rnode = n->list.items[i];
    const nbc__type *right =
        is_test ? expr_keeping_optional(I, rnode) : nbc__infer_expr(I, rnode);
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
  if (!truth(I, n->a, c)) return NULL;
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
    const char *what = n->tok && n->tok->len > 0 ? n->tok->start : "?";
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
    return UNSUPPORTED(I, n, "a tuple of more than %d values in all (counting those of the "
                       "tuples in it): %d", NBC__TYPE_MAX_VALUES, nbc__type_values(t)),
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

/* ------------------------------------------------------------------- statements */

static void stmts(infer *I, nbc__list *body);

/* An element store of a t value into an element of type dt (an array's or a pointer's,
 * `where` says which): a number that converts, cast there; else numba's error. */
/* The characters of a string literal in its own type: b"..." a CharSeq of its bytes, "..." a
 * UnicodeCharSeq of its code points (the lexer keeps text as UTF-8). */
static const nbc__type *string_literal_type(infer *I, nbc__node *n) {
  const unsigned char *s = (const unsigned char *)(n->str ? n->str : "");
  int64_t count = 0;
  for (; *s; s++)
    count += n->value.i || (*s & 0xc0) != 0x80; /* bytes, or UTF-8 lead bytes */
  const nbc__type *t =
      nbc__type_charseq(I->ctx, n->value.i ? NBC__T_CHARSEQ : NBC__T_UNICHARSEQ, count);
  n->type = t;
  return t;
}

/* A string literal one assignment would store as two string types: it is lowered once. */
static void chained_literal_error(infer *I, nbc__node *literal, const nbc__type *a,
                                  const nbc__type *b) {
  TYPING(I, literal,
         "Cannot store one string literal as %s and as %s in one assignment: "
         "assign it to each target separately",
         nbc__infer_tname(I, a), nbc__infer_tname(I, b));
}

/* A string stored into an element or field of string type dt (numpy's S<n> or U<n>): a
 * literal of the same kind is written padded with zeros, or cut, to dt's length (numpy's and
 * numba's assignment); any other value must have dt's type. */
static void store_string(infer *I, nbc__node *target, nbc__node *value, const nbc__type *t,
                         const nbc__type *dt, const char *where) {
  if (value && value->kind == NBC__N_STR && t && t->kind == dt->kind) {
    if (value == I->chained_literal) {
      if (I->chained_literal_type && !nbc__type_equal(I->chained_literal_type, dt)) {
        chained_literal_error(I, value, I->chained_literal_type, dt);
        return;
      }
      I->chained_literal_type = dt;
    }
    value->type = dt; /* lowered as a constant of dt's length */
    return;
  }
  if (!nbc__type_equal(t, dt))
    TYPING(I, value ? value : target, "Cannot convert %s to %s in %s assignment%s",
           nbc__infer_tname(I, t), nbc__infer_tname(I, dt), where,
           t && t->kind != dt->kind && nbc__type_is_charseq(t)
               ? " (bytes go to S arrays, str to U arrays)"
               : "");
}

static void store_number(infer *I, nbc__node *target, nbc__node *value, const nbc__type *t,
                         const nbc__type *dt, const char *where) {
  if (!(nbc__type_is_number(t) || nbc__type_is_datetime(t) || nbc__type_is_bf16(t)) ||
      !nbc__type_can_convert(t, dt)) {
    TYPING(I, value ? value : target, "Cannot convert %s to %s in %s assignment",
           nbc__infer_tname(I, t), nbc__infer_tname(I, dt), where);
    return;
  }
  if (value) nbc__infer_cast(value, dt);
}

/* Assigns a value of type t (node value, or NULL inside an unpacking) to target. */
static void assign_target(infer *I, nbc__node *target, nbc__node *value, const nbc__type *t);

void nbc__infer_assign_target(infer *I, nbc__node *target, nbc__node *value,
                              const nbc__type *t) {
  assign_target(I, target, value, t);
}

static void assign_target(infer *I, nbc__node *target, nbc__node *value, const nbc__type *t) {
  switch (target->kind) {
  case NBC__N_NAME: {
    int v = nbc__infer_var_find(I, target->str);
    target->var = v;
    target->info = NULL;
    if (!t) return;
    if (!var_assign(I, v, t, target)) return;
    target->type = I->fn->vars[v].type;
    if (I->final) {
      const nbc__type *vt = I->fn->vars[v].type;
      if (value)
        nbc__infer_cast(value, vt);
      else {
        target->type = t;
        nbc__infer_cast(target, vt);
      }
    }
    return;
  }
  case NBC__N_ATTR:
  case NBC__N_SUBSCRIPT: {
    const nbc__type *o = nbc__infer_expr(I, target->a);
    if (!o) return;
    if (o->kind == NBC__T_RECORD) { /* rec.x = v, rec['x'] = v */
      if (o->readonly) { /* numba compiles it, and NVVM drops the store to constant memory */
        TYPING(I, target, "cannot modify a read-only array");
        return;
      }
      const nbc__type *ft = target->kind == NBC__N_ATTR
                                ? nbc__infer_record_field(I, target, o, target->str)
                                : nbc__infer_record_subscript(I, target, o);
      target->type = ft;
      if (!ft || !t) return;
      if (ft->kind == NBC__T_RECORD) { /* rec.inner = other: the record's bytes are copied */
        if (!nbc__type_equal(t, ft))
          TYPING(I, value ? value : target,
                 "Cannot convert %s to %s in a record field "
                 "assignment",
                 nbc__infer_tname(I, t), nbc__infer_tname(I, ft));
        return;
      }
      if (ft->kind == NBC__T_ARRAY) { /* rec.arr = src: numba copies the field's elements */
        if (t->kind != NBC__T_ARRAY || !nbc__type_equal(t->dtype, ft->dtype))
          TYPING(I, value ? value : target,
                 "Cannot convert %s to %s in a record field "
                 "assignment (an array field takes an array of its dtype: the field's "
                 "element count is copied from its data)",
                 nbc__infer_tname(I, t), nbc__infer_tname(I, ft));
        return;
      }
      if (nbc__type_is_charseq(ft)) {
        store_string(I, target, value, t, ft, "a record field");
        return;
      }
      if (!(nbc__type_is_number(t) || nbc__type_is_datetime(t)) ||
          !nbc__type_can_convert(t, ft)) {
        TYPING(I, value ? value : target,
               "Cannot convert %s to %s in a record field "
               "assignment",
               nbc__infer_tname(I, t), nbc__infer_tname(I, ft));
        return;
      }
      if (value) nbc__infer_cast(value, ft);
      return;
    }
    if (target->kind == NBC__N_ATTR) {
      UNSUPPORTED(I, target, "cannot assign to attribute '%s' of %s", target->str,
                  nbc__infer_tname(I, o));
      return;
    }
    if (o->kind == NBC__T_POINTER) { /* p[i] = v: the number converted to the pointee */
      const nbc__type *dt = nbc__infer_subscript(I, target);
      target->type = dt;
      if (dt && t) store_number(I, target, value, t, dt, "a pointer");
      return;
    }
    if (o->kind != NBC__T_ARRAY && o->kind != NBC__T_FLAT) {
      nbc__infer_expr(I, target->b);
      TYPING(I, target, "'%s' object does not support item assignment", nbc__infer_tname(I, o));
      return;
    }
    /* a[...] = v, or a.flat[i] = v: the i-th element in C order */
    const nbc__type *dt = o->kind == NBC__T_FLAT
                              ? nbc__infer_subscript(I, target)
                              : nbc__infer_array_index(I, target, o, target->b);
    target->type = dt;
    if (dt && o->kind == NBC__T_FLAT && o->dtype->readonly) {
      TYPING(I, target, "cannot modify a read-only array");
      return;
    }
    if (dt && dt->kind == NBC__T_ARRAY) { /* a[1:3] = number: every element of the view */
      if (!t) return;
      if (dt->readonly) {
        TYPING(I, target, "cannot modify a read-only array");
        return;
      }
      if (nbc__type_is_number(t) && nbc__type_can_convert(t, dt->dtype)) {
        if (value) nbc__infer_cast(value, dt->dtype);
        return;
      }
      /* numba-cuda cannot either: an array source needs its runtime's temporary copy */
      UNSUPPORTED(I, value ? value : target,
                  "assigning %s to an array slice is not "
                  "supported (a number is; copy the elements in a loop)",
                  nbc__infer_tname(I, t));
      return;
    }
    if (!dt || !t) return;
    if (dt->kind == NBC__T_RECORD) { /* a[i] = a[j]: the record's bytes are copied */
      if (!nbc__type_equal(t, dt))
        TYPING(I, value ? value : target, "Cannot convert %s to %s in an array assignment",
               nbc__infer_tname(I, t), nbc__infer_tname(I, dt));
      return;
    }
    if (nbc__type_is_charseq(dt)) {
      store_string(I, target, value, t, dt, "an array");
      return;
    }
    store_number(I, target, value, t, dt, "an array");
    return;
  }
  case NBC__N_TUPLE:
  case NBC__N_LIST: {
    if (!t) {
      for (int i = 0; i < target->list.count; i++)
        assign_target(I, target->list.items[i], NULL, NULL);
      return;
    }
    if (t->kind != NBC__T_TUPLE || t->count != target->list.count) {
      TYPING(I, target, "cannot unpack %s into %d values", nbc__infer_tname(I, t),
             target->list.count);
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
  if (t->kind != NBC__N_NAME && t->kind != NBC__N_SUBSCRIPT && t->kind != NBC__N_ATTR) {
    UNSUPPORTED(I, t, "cannot assign to this expression");
    return;
  }
  const nbc__type *a = nbc__infer_expr(I, t);
  const nbc__type *b = nbc__infer_expr(I, s->b);
  s->cast = NULL;
  s->type = NULL;
  if (!a || !b) return;
  const nbc__type *args[2];
  const char *why;
  const nbc__type *r = nbc__type_binop_sig(s->op, a, b, args, &why);
  if (!r) {
    TYPING(I, s, "Invalid use of %s= with parameters (%s, %s)", nbc__op_text(s->op),
           nbc__infer_tname(I, a), nbc__infer_tname(I, b));
    return;
  }
  nbc__infer_cast(t, args[0]);
  nbc__infer_cast(s->b, args[1]);
  s->type = r;
  if (t->kind == NBC__N_NAME) {
    if (!var_assign(I, t->var, r, s)) return;
    const nbc__type *vt = I->fn->vars[t->var].type;
    s->cast = nbc__type_equal(vt, r) ? NULL : vt;
  } else {
    if (t->kind == NBC__N_ATTR && (!t->a->type || t->a->type->kind != NBC__T_RECORD)) {
      UNSUPPORTED(I, t, "cannot assign to attribute '%s' of %s", t->str,
                  nbc__infer_tname(I, t->a->type));
      return;
    }
    if (!nbc__type_can_convert(r, a)) {
      TYPING(I, s, "Cannot convert %s to %s in an array assignment", nbc__infer_tname(I, r),
             nbc__infer_tname(I, a));
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
    if (s->kind == NBC__N_WHILE && s->a &&
        (s->a->kind == NBC__N_BOOL || s->a->kind == NBC__N_INT) && s->a->value.i != 0) {
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
  const nbc__type *t = s->a ? expr_keeping_optional(I, s->a) : T(NBC__T_NONE);
  if (!t) return;
  if (s->a && !nbc__type_is_number(t) && !nbc__type_is_datetime(t) && t->kind != NBC__T_NONE &&
      t->kind != NBC__T_TUPLE && t->kind != NBC__T_ARRAY && t->kind != NBC__T_VECTOR &&
      t->kind != NBC__T_RECORD && t->kind != NBC__T_OPTIONAL && t->kind != NBC__T_ENUM &&
      !nbc__type_is_bf16(t)) {
    TYPING(I, s->a, "cannot return a value of type %s", nbc__infer_tname(I, t));
    return;
  }
  const nbc__type *declared = I->fn->ret;
  if (declared) {
    if (declared->kind == NBC__T_VOID || declared->kind == NBC__T_NONE) {
      if (t->kind != NBC__T_NONE)
        TYPING(I, s->a, "cannot return %s from a function declared to return %s",
               nbc__infer_tname(I, t), nbc__infer_tname(I, declared));
      return;
    }
    /* numba's Optional(T).can_convert_to: whatever T converts to (None raising TypeError
     * when the value is converted, lower_expr.c) */
    const nbc__type *value =
        t->kind == NBC__T_OPTIONAL && declared->kind != NBC__T_OPTIONAL ? t->dtype : t;
    if (!nbc__type_can_convert(value, declared)) {
      TYPING(I, s->a ? s->a : s, "cannot convert the returned %s to the declared %s",
             nbc__infer_tname(I, t), nbc__infer_tname(I, declared));
      return;
    }
    if (s->a && I->final) nbc__infer_cast(s->a, declared);
    return;
  }
  if (t->kind != NBC__T_NONE) I->returns_value = true;
  const nbc__type *u = I->ret ? nbc__type_unify(I->ctx, I->ret, t) : t;
  if (!u) {
    TYPING(I, s->a ? s->a : s, "Cannot unify %s and %s for the return value",
           nbc__infer_tname(I, I->ret), nbc__infer_tname(I, t));
    return;
  }
  if (!I->ret || !nbc__type_equal(u, I->ret)) {
    I->ret = u;
    I->changed = true;
  }
}

/* `f = helper` (or `f = g` of such a variable): the variables named by the targets call what
 * the value names, as numba's function types are constants. False when the value is not a
 * name of a function (a module attribute `math.sin` types its calls by the type alone). */
static bool bind_function(infer *I, nbc__node *s) {
  const nbc__node *v = s->a;
  if (v->kind != NBC__N_NAME) return false;
  const nbc__global *G = v->var >= 0 ? I->fn->vars[v->var].function : v->info;
  if (!G) return false;
  for (int k = 0; k < s->list.count; k++) {
    const nbc__node *t = s->list.items[k];
    if (t->kind != NBC__N_NAME || t->var < 0) return false;
    const nbc__global *had = I->fn->vars[t->var].function;
    if (had && had != G && !(had->g.name && G->g.name && strcmp(had->g.name, G->g.name) == 0))
      return TYPING(I, s, "'%s' is bound to two functions", t->str);
    I->fn->vars[t->var].function = G;
  }
  return true;
}

static void stmt(infer *I, nbc__node *s) {
  switch (s->kind) {
  case NBC__N_ASSIGN: {
    /* a value assigned to names only may stay Optional: the variables become Optional */
    bool names = s->list.count > 0;
    for (int k = 0; k < s->list.count; k++)
      names = names && s->list.items[k]->kind == NBC__N_NAME;
    const nbc__type *t = s->a->kind == NBC__N_STR ? string_literal_type(I, s->a)
                         : names                  ? expr_keeping_optional(I, s->a)
                                                  : nbc__infer_expr(I, s->a);
    bool chained = s->a->kind == NBC__N_STR && s->list.count > 1;
    I->chained_literal = chained ? s->a : NULL;
    I->chained_literal_type = NULL;
    for (int k = 0; k < s->list.count; k++)
      assign_target(I, s->list.items[k], s->a, t);
    if (chained && I->chained_literal_type && !nbc__type_equal(I->chained_literal_type, t))
      for (int k = 0; k < s->list.count; k++) {
        nbc__node_kind kind = s->list.items[k]->kind; /* targets that take the literal's type */
        if (kind == NBC__N_NAME || kind == NBC__N_TUPLE || kind == NBC__N_LIST) {
          chained_literal_error(I, s->a, t, I->chained_literal_type);
          break;
        }
      }
    I->chained_literal = NULL;
    /* a function bound to a name; one of a module (`s = math.sqrt`) is its type alone */
    if (t && t->kind == NBC__T_FUNCTION && (s->a->kind == NBC__N_ATTR || bind_function(I, s)))
      return;
    /* (a dtype may be named: `d = a.dtype`, `d = np.float32`, then d(x), local.array(n, d)) */
    if (t && !nbc__type_is_number(t) && !nbc__type_is_datetime(t) && t->kind != NBC__T_ARRAY &&
        t->kind != NBC__T_TUPLE && !nbc__type_is_charseq(t) && t->kind != NBC__T_NONE &&
        t->kind != NBC__T_GRID_GROUP && t->kind != NBC__T_VECTOR && t->kind != NBC__T_RECORD &&
        t->kind != NBC__T_DTYPE && t->kind != NBC__T_FLAT && t->kind != NBC__T_OPTIONAL &&
        t->kind != NBC__T_POINTER && t->kind != NBC__T_ENUM && !nbc__type_is_bf16(t) &&
        !(t->kind == NBC__T_RANGE && t->dtype))
      TYPING(I, s->a, "cannot assign a value of type %s to a variable", nbc__infer_tname(I, t));
    return;
  }
  case NBC__N_AUGASSIGN:
    augassign(I, s);
    return;
  case NBC__N_EXPR_STMT:
    if (s->a && s->a->kind == NBC__N_STR) return; /* docstring */
    nbc__infer_expr(I, s->a);
    return;
  case NBC__N_IF:
    truth(I, s->a, nbc__infer_expr(I, s->a));
    stmts(I, &s->body);
    stmts(I, &s->orelse);
    return;
  case NBC__N_WHILE: /* the else block runs when the loop ends without a break */
    truth(I, s->a, nbc__infer_expr(I, s->a));
    I->loop_depth++;
    stmts(I, &s->body);
    I->loop_depth--;
    stmts(I, &s->orelse);
    return;
  case NBC__N_FOR: {
    if (s->b && s->b->kind == NBC__N_CALL && s->b->a &&
        ((s->b->a->kind == NBC__N_NAME && strcmp(s->b->a->str, "literal_unroll") == 0) ||
         (s->b->a->kind == NBC__N_ATTR && strcmp(s->b->a->str, "literal_unroll") == 0))) {
      UNSUPPORTED(I, s->b,
                  "literal_unroll() takes a tuple that is a parameter of the "
                  "function, a tuple display, a global tuple or a tuple item of an "
                  "enclosing literal_unroll, and a name as the loop variable");
      return;
    }
    if (!s->b || s->b->kind != NBC__N_CALL || !s->b->a || s->b->a->kind != NBC__N_NAME ||
        strcmp(s->b->a->str, "range") != 0 || nbc__infer_var_find(I, "range") >= 0) {
      nbc__infer_expr(I, s->b);
      UNSUPPORTED(I, s->b ? s->b : s,
                  "for loops must iterate over range(...), an array, "
                  "enumerate(...) or zip(...)");
      return;
    }
    if (s->a->kind != NBC__N_NAME) {
      UNSUPPORTED(I, s->a, "the target of a for loop must be a name");
      return;
    }
    const nbc__type *r = nbc__infer_expr(I, s->b);
    const nbc__call *c = s->b->info;
    if (r && c && c->builtin == NBC__B_RANGE && c->nargs > 0) {
      /* The loop variable takes the counter type. */
      int v = nbc__infer_var_find(I, s->a->str);
      s->a->var = v;
      s->a->info = NULL;
      s->a->type = c->argtypes[0];
      if (var_assign(I, v, c->argtypes[0], s->a) && I->final)
        nbc__infer_cast(s->a, I->fn->vars[v].type);
    } else if (r) {
      TYPING(I, s->b, "range() needs at least one argument");
    }
    I->loop_depth++;
    stmts(I, &s->body);
    I->loop_depth--;
    stmts(I, &s->orelse);
    return;
  }
  case NBC__N_BREAK:
  case NBC__N_CONTINUE:
    if (!I->loop_depth)
      TYPING(I, s, "'%s' outside loop", s->kind == NBC__N_BREAK ? "break" : "continue");
    return;
  case NBC__N_RETURN:
    ret_stmt(I, s);
    return;
  case NBC__N_PASS:
    return;
  case NBC__N_ASSERT: { /* the condition is typed; the message is never evaluated */
    const nbc__type *t = nbc__infer_expr(I, s->a);
    if (t) truth(I, s->a, t);
    return;
  }
  case NBC__N_RAISE: /* the exception is not evaluated: raising ends the thread */
    return;
  case NBC__N_FUNCDEF:
    UNSUPPORTED(I, s, "unsupported statement: 'def' (nested function)");
    return;
  case NBC__N_IMPORT:
  case NBC__N_IMPORT_FROM: /* named by their keyword: 'import' or 'from' */
    UNSUPPORTED(I, s, "unsupported statement: '%.*s'", s->tok->len, s->tok->start);
    return;
  case NBC__N_TRY:
    UNSUPPORTED(I, s, "unsupported statement: 'try'");
    return;
  default: {
    const char *what = s->tok && s->tok->len > 0 ? s->tok->start : "?";
    int len = s->tok ? s->tok->len : 1;
    UNSUPPORTED(I, s, "unsupported statement: '%.*s'", len, what);
    return;
  }
  }
}

static void stmts(infer *I, nbc__list *body) {
  for (int i = 0; i < body->count && !(I->final && I->failed); i++)
    stmt(I, body->items[i]);
}

/* ------------------------------------------------------------- specialisations */

static bool same_literal(const nbc__literal *a, const nbc__literal *b) {
  bool sa = a && a->set, sb = b && b->set;
  if (sa != sb) return false;
  if (!sa) return true;
  if (a->count != b->count) return false;
  for (int k = 0; k < (a->count ? a->count : 1); k++)
    if (a->value[k] != b->value[k]) return false;
  return true;
}

static bool same_args(const nbc__func *f, const nbc__type **args, const nbc__literal *literals,
                      int nargs) {
  if (f->nargs != nargs) return false;
  for (int i = 0; i < nargs; i++)
    if (!nbc__type_equal(f->argtypes[i], args[i]) ||
        !same_literal(f->literals ? &f->literals[i] : NULL, literals ? &literals[i] : NULL))
      return false;
  return true;
}

/* The parameter named name when it still holds its argument at the if statement s: bound
 * nowhere but in s's own branches, and not in a loop when it is bound there (the next
 * iteration would see the new binding); its variable's index, or -1. */
static int unbound_param(infer *I, nbc__list *top, nbc__node *s, const char *name,
                         bool in_loop) {
  int v = nbc__infer_var_find(I, name);
  if (v < 0 || !I->fn->vars[v].is_param || !I->fn->vars[v].type) return -1;
  const nbc__node *unused;
  int all = local_bindings(top, name, &unused);
  int inside =
      local_bindings(&s->body, name, &unused) + local_bindings(&s->orelse, name, &unused);
  return all != inside || (all && in_loop) ? -1 : v;
}

/* Whether c calls Python's builtin `name` with nargs arguments: not a parameter, a local or
 * a global of that name. */
static bool builtin_call(infer *I, nbc__list *top, const nbc__node *c, const char *name,
                         int nargs) {
  const nbc__node *unused;
  return c->kind == NBC__N_CALL && c->a && c->a->kind == NBC__N_NAME &&
         strcmp(c->a->str, name) == 0 && c->list.count == nargs &&
         local_bindings(top, name, &unused) == 0 && nbc__infer_expr(I, c->a) && c->a->var < 0 &&
         nbc__infer_is_builtin(c->a->info);
}

/* `isinstance(p, spec)`, the condition c of the if statement s, of a parameter p still of its
 * argument's type there: p is bound nowhere but in s's own branches, and when it is bound
 * there, s is not in a loop (the next iteration would see the new binding). 1 or 0 by p's
 * type; -1 when c is not that (or spec names no class: the typing reports it). */
static int param_isinstance(infer *I, nbc__list *top, nbc__node *s, const nbc__node *c,
                            bool in_loop) {
  if (c->kind != NBC__N_CALL || c->list.count != 2 || c->list.items[0]->kind != NBC__N_NAME ||
      !builtin_call(I, top, c, "isinstance", 2))
    return -1;
  int v = unbound_param(I, top, s, c->list.items[0]->str, in_loop);
  return v < 0 ? -1 : nbc__infer_isinstance(I, I->fn->vars[v].type, c->list.items[1]);
}

/* An operand numba's semantic constants make a compile-time integer before its dead branch
 * pruning: an integer literal (or its negation), `a.ndim` of an array parameter, `len(t)` of
 * a tuple parameter (the builtin len), or a parameter whose argument was a constant integer.
 * False when e is none of these. */
static bool prune_operand(infer *I, nbc__list *top, nbc__node *s, nbc__node *e, bool in_loop,
                          int64_t *pv) {
  if (e->kind == NBC__N_INT && !e->big) return *pv = e->value.i, true;
  if (e->kind == NBC__N_UNARY && e->op == NBC__OP_NEG && e->a && e->a->kind == NBC__N_INT &&
      !e->a->big)
    return *pv = -e->a->value.i, true;
  if (e->kind == NBC__N_NAME) {
    int v = unbound_param(I, top, s, e->str, in_loop);
    const nbc__literal *lit = v >= 0 ? I->fn->vars[v].literal : NULL;
    if (!lit || !lit->set || lit->count != 0 || !nbc__type_is_int(I->fn->vars[v].type))
      return false;
    return *pv = lit->value[0], true;
  }
  if (e->kind == NBC__N_ATTR && e->a && e->a->kind == NBC__N_NAME && !strcmp(e->str, "ndim")) {
    int v = unbound_param(I, top, s, e->a->str, in_loop);
    const nbc__type *t = v >= 0 ? I->fn->vars[v].type : NULL;
    if (!t || t->kind != NBC__T_ARRAY) return false;
    return *pv = t->ndim, true;
  }
  if (e->kind == NBC__N_CALL && e->list.count == 1 && e->list.items[0]->kind == NBC__N_NAME) {
    int v = unbound_param(I, top, s, e->list.items[0]->str, in_loop);
    const nbc__type *t = v >= 0 ? I->fn->vars[v].type : NULL;
    if (!t || t->kind != NBC__T_TUPLE || !builtin_call(I, top, e, "len", 1)) return false;
    return *pv = t->count, true;
  }
  return false;
}

/* `if a.ndim == 2:`, `if len(t) != 3:` and other single comparisons of prune_operand's
 * integers, and `if p is None:` / `if p is not None:` of a parameter that is None or not
 * Optional: 1 or 0 by their values; -1 when c is not one. */
static int param_const_compare(infer *I, nbc__list *top, nbc__node *s, nbc__node *c,
                               bool in_loop) {
  if (c->kind != NBC__N_COMPARE || c->list.count != 1) return -1;
  nbc__op op = c->ops[0];
  if (op == NBC__OP_IS || op == NBC__OP_ISNOT) { /* `p is None` of a parameter not Optional */
    nbc__node *p = c->a, *none = c->list.items[0];
    if (p->kind == NBC__N_NONE) p = none, none = c->a;
    int v = none->kind == NBC__N_NONE && p->kind == NBC__N_NAME
                ? unbound_param(I, top, s, p->str, in_loop)
                : -1;
    if (v < 0 || I->fn->vars[v].type->kind == NBC__T_OPTIONAL) return -1;
    return (I->fn->vars[v].type->kind == NBC__T_NONE) == (op == NBC__OP_IS);
  }
  if (op != NBC__OP_EQ && op != NBC__OP_NE && op != NBC__OP_LT && op != NBC__OP_LE &&
      op != NBC__OP_GT && op != NBC__OP_GE)
    return -1;
  int64_t l, r;
  if (!prune_operand(I, top, s, c->a, in_loop, &l) ||
      !prune_operand(I, top, s, c->list.items[0], in_loop, &r))
    return -1;
  switch (op) {
  case NBC__OP_EQ:
    return l == r;
  case NBC__OP_NE:
    return l != r;
  case NBC__OP_LT:
    return l < r;
  case NBC__OP_LE:
    return l <= r;
  case NBC__OP_GT:
    return l > r;
  default:
    return l >= r;
  }
}

/* body's statement i replaced by the statements of branch (the taken branch of a pruned if);
 * what follows a return, raise, break or continue of branch is dropped, as Python's compiler
 * drops unreachable code (`if p is None: return 0` then code using p); false when out of
 * memory. */
static bool splice(nbc__ctx *ctx, nbc__list *body, int i, const nbc__list *branch) {
  int after = body->count - i - 1;
  for (int k = 0; k < branch->count; k++) {
    nbc__node_kind kind = branch->items[k]->kind;
    if (kind == NBC__N_RETURN || kind == NBC__N_RAISE || kind == NBC__N_BREAK ||
        kind == NBC__N_CONTINUE)
      after = 0;
  }
  body->count = i + 1 + after;
  int count = body->count - 1 + branch->count;
  nbc__node **items = nbc__arena_alloc(ctx->arena, sizeof *items * (size_t)(count ? count : 1));
  if (!items) return false;
  for (int k = 0; k < i; k++) /* (loops: an empty branch has no items array to copy from) */
    items[k] = body->items[k];
  for (int k = 0; k < branch->count; k++)
    items[i + k] = branch->items[k];
  for (int k = i + 1; k < body->count; k++)
    items[k - 1 + branch->count] = body->items[k];
  body->items = items;
  body->count = count;
  return true;
}

/* `if flag:` (or `if not flag:`) of a parameter whose argument was a constant,
 * `if isinstance(p, T):` of a parameter and `if a.ndim == 2:` / `if len(t) == 3:` (numba's
 * semantic constants compared, param_const_compare): the branch not taken is dropped before
 * typing (numba's dead branch pruning; for isinstance nbcuda goes further than numba-cuda,
 * which types both branches), from this specialisation's own copy of the function, before its
 * variables are collected; a decided isinstance or comparison leaves the taken branch in the
 * if's place.
 * Returns whether such a test was decided (the if replaced by its taken branch, so
 * the function's SSA webs must be split again: a parameter rebound there no longer meets its
 * old value); false also when out of memory (I->failed). */
static bool prune_literal_ifs(infer *I, nbc__list *top, nbc__list *body, bool in_loop) {
  nbc__func *fn = I->fn;
  bool decided = false;
  for (int i = 0; i < body->count; i++) {
    nbc__node *s = body->items[i];
    const nbc__node *c = s->kind == NBC__N_IF ? s->a : NULL;
    bool negate = c && c->kind == NBC__N_UNARY && c->op == NBC__OP_NOT;
    if (negate) c = c->a;
    int known = c ? param_isinstance(I, top, s, c, in_loop) : -1;
    if (known < 0 && c) known = param_const_compare(I, top, s, (nbc__node *)c, in_loop);
    if (known >= 0) { /* numba prunes the other branch: the if is its taken branch */
      if (!splice(I->ctx, body, i, (known != 0) != negate ? &s->body : &s->orelse)) {
        nbc__diag_oom(I->ctx);
        I->failed = true;
        return false;
      }
      decided = true;
      i--; /* the spliced statements are looked at in turn */
      continue;
    }
    for (int v = 0; c && c->kind == NBC__N_NAME && v < fn->nvars; v++) {
      const nbc__literal *lit = fn->vars[v].literal;
      if (!fn->vars[v].is_param || !lit || lit->count != 0 || strcmp(fn->vars[v].name, c->str))
        continue;
      if ((lit->value[0] != 0) != negate)
        s->orelse.count = 0;
      else
        s->body.count = 0;
    }
    bool loop = in_loop || s->kind == NBC__N_FOR || s->kind == NBC__N_WHILE;
    decided |= prune_literal_ifs(I, top, &s->body, loop);
    decided |= prune_literal_ifs(I, top, &s->orelse, loop);
  }
  return decided;
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
    /* a call waits for the return type of a function further down the stack: this one is
     * typed again once that is known */
    if (I->deferred) return false;
    if (!declared && !nbc__type_equal(I->ret, fn->ret_estimate)) {
      fn->ret_estimate = I->ret; /* what a recursive call returns in the next walk */
      I->changed = true;
    }
    if (!I->changed) break;
  }
  /* The final walk: non-negative facts first, then everything recorded. */
  I->defs = nbc__infer_alloc(I, sizeof *I->defs * (size_t)(fn->nvars ? fn->nvars : 1));
  if (!I->defs) return false;
  nbc__infer_collect_defs(I, &fn->def->body);
  nbc__infer_nonneg_analysis(I);
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
                      nbc__infer_tname(I, r), fn->name);
      r = u; /* numba's Optional: the paths falling off return None */
    }
    fn->ret = r;
  }
  if (fn->is_kernel && fn->ret->kind != NBC__T_VOID && fn->ret->kind != NBC__T_NONE)
    return TYPING(I, fn->def,
                  "TypeError: CUDA kernel must have void return type. (it returns %s)",
                  nbc__infer_tname(I, fn->ret));
  if (fn->is_kernel) fn->ret = T(NBC__T_VOID);
  return true;
}

/* Sets ->cast on returned values of an inferred return type (after infer_body). */
static void cast_returns(nbc__list *body, const nbc__type *ret) {
  for (int i = 0; i < body->count; i++) {
    nbc__node *s = body->items[i];
    if (s->kind == NBC__N_RETURN && s->a) nbc__infer_cast(s->a, ret);
    if (s->kind == NBC__N_IF || s->kind == NBC__N_WHILE || s->kind == NBC__N_FOR) {
      cast_returns(&s->body, ret);
      cast_returns(&s->orelse, ret);
    }
  }
}

/* A function whose parameter list a kernel cannot have (parse.c noted the first offending
 * parameter in def->c) is refused where it is compiled or called: through the caller's
 * final walk (so errors keep their order), or directly for the entry (caller NULL). */
bool nbc__infer_check_params(nbc__ctx *ctx, infer *caller, const nbc__node *def) {
  /* Defaults are fine: a callee's fill omitted arguments, and the entry's signature gives
   * every argument (a launch fills omitted ones from __defaults__ first, as numba's
   * dispatcher does). */
  const nbc__node *note = def->c;
  if (!note) {
    /* *args gathers a call's extra arguments (call_user): the entry has no call */
    const nbc__node *last = def->params.count ? def->params.items[def->params.count - 1] : NULL;
    if (caller || !last || !last->vararg) return true;
    nbc__diag_error(ctx, NBC_UNSUPPORTED, last->tok->file, last->tok->line, last->tok->col,
                    "*args parameters are not supported in CUDA kernels (a device function "
                    "called from one may have them)");
    return false;
  }
  if (caller) return UNSUPPORTED(caller, note, "%s", note->str ? note->str : "?");
  nbc__diag_error(ctx, NBC_UNSUPPORTED, note->tok->file, note->tok->line, note->tok->col, "%s",
                  note->str ? note->str : "?");
  return false;
}

/* Where literal_unroll's global tuples are looked up: the function's resolver, else its
 * module's own bindings. */
typedef struct {
  const nbc__module *module;
  const nbc_resolver_t *resolver;
} unroll_data;

static int resolve_global(const unroll_data *u, const char *name, nbc_global_t *g) {
  return nbc__infer_resolve(u->resolver, u->module, name, g);
}

static bool global_is_numpy(void *data, const char *name) {
  nbc_global_t g;
  return resolve_global(data, name, &g) == 0 && g.kind == NBC_GLOBAL_MODULE_NUMPY;
}

static int global_tuple_len(void *data, const char *name) {
  nbc_global_t g;
  return resolve_global(data, name, &g) == 0 && g.kind == NBC_GLOBAL_TUPLE ? g.tuple_count : -1;
}

nbc__func *nbc__infer_specialise(inferp *P, const nbc__module *module, nbc__node *def,
                                 const nbc_resolver_t *resolver, const nbc__type **args,
                                 const nbc__literal *literals, int nargs,
                                 const nbc__type *declared, bool is_entry,
                                 const nbc__scope *scope, const nbc__node *call_site,
                                 infer *caller) {
  nbc__ctx *ctx = P->ctx;
  /* Recursion: a function calling itself with its own argument types gets the
   * specialisation being inferred (typed with the returns seen so far: numba's way, which
   * needs a non-recursive return path); the entry calling itself gets a Numba-ABI copy of
   * itself, which then recurses; other argument types make another specialisation (which
   * may recurse in turn). A call back into a function further down the stack with its own
   * types (mutual recursion: f calls g calls f) gets that specialisation too: g is typed
   * with what f returns so far (its estimate, else the returns of f's walk under way), and
   * once f is typed, a return type that differs from what g was given is numba's "Return
   * type of recursive function does not converge". */
  int open = 0; /* specialisations of def being inferred */
  for (int i = P->depth - 1; i >= 0 && !is_entry; i--) {
    nbc__func *f = P->stack[i];
    if (!f->def || !f->def->str || strcmp(f->def->str, def->str) != 0 || f->module != module)
      continue;
    if (!same_args(f, args, literals, nargs)) {
      /* one change of argument types (f(int32) calling f(int64)); more could go on
       * forever (f(x) calling f((x, x))) */
      if (++open < 2 || f->is_entry) continue;
      if (caller)
        TYPING(caller, call_site,
               "recursive call of '%s' changes its argument types again "
               "(%s calls it with other types than it was called with)",
               def->str, def->str);
      return NULL;
    }
    if (!f->is_entry) return f;
    if (i == P->depth - 1) break; /* the entry: a callee copy below */
  }
  for (nbc__func *f = P->prog->funcs; f; f = f->next)
    if (f->module == module && f->name && strcmp(f->name, def->str) == 0 && !f->is_entry &&
        !is_entry && same_args(f, args, literals, nargs))
      return f;
  if (P->depth == 64) {
    if (caller) TYPING(caller, call_site, "calls nested too deeply");
    return NULL;
  }
  /* After the compilation's first error nothing more is typed: the error stands, and typing
   * on (the other statements calling functions that fail again) only repeats the work. */
  if (ctx->status != NBC_OK) {
    if (caller) caller->failed = true;
    return NULL;
  }
  if (P->bodies == NBC__INFER_MAX_BODIES) {
    if (caller)
      TYPING(caller, call_site,
             "typing '%s' would type function bodies more than %d times: its calls "
             "(recursive ones that keep failing or changing types) do not settle",
             def->str, NBC__INFER_MAX_BODIES);
    return NULL;
  }
  P->bodies++;
  nbc__func *fn = nbc__arena_alloc(ctx->arena, sizeof *fn);
  nbc__node *clone = nbc__node_clone(ctx, def);
  unroll_data ud = {module, resolver};
  nbc__desugar_env env = {args, nargs, global_tuple_len, &ud, global_is_numpy};
  if (clone && !nbc__desugar_loops(ctx, clone, &env)) clone = NULL;
  if (!fn || !clone) {
    nbc__diag_oom(ctx);
    if (caller) caller->failed = true;
    return NULL;
  }
  if (!nbc__closure_lift(ctx, clone, scope, &fn->scope) || !nbc__ssa_split(ctx, clone)) {
    if (caller) caller->failed = true;
    return NULL;
  }
  fn->name = def->str;
  fn->def = clone;
  fn->module = module;
  fn->resolver = resolver;
  fn->nargs = nargs;
  fn->argtypes =
      nbc__arena_alloc(ctx->arena, sizeof *fn->argtypes * (size_t)(nargs ? nargs : 1));
  if (!fn->argtypes) {
    nbc__diag_oom(ctx);
    return NULL;
  }
  memcpy(fn->argtypes, args, sizeof *args * (size_t)nargs);
  if (literals && nargs) {
    fn->literals = nbc__arena_alloc(ctx->arena, sizeof *fn->literals * (size_t)nargs);
    if (!fn->literals) {
      nbc__diag_oom(ctx);
      return NULL;
    }
    memcpy(fn->literals, literals, sizeof *literals * (size_t)nargs);
  }
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
    if (i < nargs && is_kind(args[i], NBC__T_FUNCTION)) /* a function passed: its calls */
      fn->vars[v].function = args[i]->ref;
    const nbc__node *unused;
    if (i < nargs && fn->literals && fn->literals[i].set &&
        local_bindings(&clone->body, p->str, &unused) == 0)
      fn->vars[v].literal = &fn->literals[i];
    p->var = v;
    p->type = fn->vars[v].type;
  }
  if (prune_literal_ifs(&I, &clone->body, &clone->body, false) && !nbc__ssa_split(ctx, clone))
    I.failed = true;
  if (I.failed) return NULL;
  collect_locals(&I, &clone->body);
  if (I.failed) return NULL;

  P->stack[P->depth++] = fn;
  fn->inferring = true;
  fn->partial_ret = &I.ret;
  bool ok = infer_body(&I);
  fn->inferring = false;
  fn->partial_ret = NULL;
  P->depth--;
  if (ok && fn->handed_ret &&
      (fn->handed_mismatch || !nbc__type_equal(fn->handed_ret, fn->ret)))
    ok = TYPING(&I, clone,
                "Return type of recursive function does not converge: '%s' returns "
                "%s, and a function it calls, which calls it back, was typed with %s",
                def->str, nbc__infer_tname(&I, fn->ret), nbc__infer_tname(&I, fn->handed_ret));
  if (!ok && I.deferred && !I.failed) { /* put off: its caller learns it, no error */
    if (caller) {
      caller->deferred = true;
      caller->deferred_ret = I.ret; /* its returns typed so far, for the caller's walk */
    }
    return NULL;
  }
  if (!ok) {
    if (caller) caller->failed = true;
    return NULL;
  }
  if (!declared) cast_returns(&clone->body, fn->ret);
  for (int i = 0; i < clone->params.count; i++)
    clone->params.items[i]->type = fn->vars[i].type;
  /* Keep the callees of the final walk for reachability. */
  fn->callees = I.callees;
  fn->ncallees = I.ncallees;
  /* Append to the program's list (creation order: callees before their callers). */
  nbc__func **tail = &P->prog->funcs;
  while (*tail)
    tail = &(*tail)->next;
  *tail = fn;
  return fn;
}

/* Marks what the entry reaches, with a list of functions to visit rather than recursion:
 * calls nest at most 64 deep while they are typed, but a callee typed earlier is reused, so
 * a path through the call graph can be as long as the program (a chain of 60 functions
 * ending in a call of the previous chain's head, and so on). */
static bool mark_reachable(nbc__ctx *ctx, nbc__func *entry) {
  size_t n = 0, cap = 64;
  nbc__func **todo = nbc__arena_alloc(ctx->arena, sizeof *todo * cap);
  if (todo) {
    entry->reachable = true;
    todo[n++] = entry;
  }
  while (todo && n > 0) { /* each function is listed once, when it is first marked */
    nbc__func *f = todo[--n];
    for (int i = 0; todo && i < f->ncallees; i++) {
      if (f->callees[i]->reachable) continue;
      if (n == cap) {
        nbc__func **grown = nbc__arena_alloc(ctx->arena, sizeof *todo * cap * 2);
        if (grown) memcpy(grown, todo, sizeof *todo * cap);
        todo = grown;
        cap *= 2;
        if (!todo) break;
      }
      f->callees[i]->reachable = true;
      todo[n++] = f->callees[i];
    }
  }
  if (!todo) nbc__diag_oom(ctx);
  return todo != NULL;
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
  P.awaited = -1;
  const nbc__file *file = module ? module->file : NULL;
  if (!nbc__infer_check_params(ctx, NULL, def)) return false;
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
  nbc__func *entry = nbc__infer_specialise(&P, module, def, ctx->resolver, sig->args, NULL,
                                           sig->nargs, sig->ret, true, NULL, NULL, NULL);
  if (!entry) {
    if (ctx->status == NBC_OK) NBC__BUG(ctx, "inference failed without a diagnostic");
    return false;
  }
  /* Drop specialisations that only intermediate walks asked for. */
  if (!mark_reachable(ctx, entry)) return false;
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
  case NBC__N_NAME:
    snprintf(what, sizeof what, "NAME %s", n->str);
    break;
  case NBC__N_ATTR:
    snprintf(what, sizeof what, "ATTR .%s", n->str);
    break;
  case NBC__N_INT:
    snprintf(what, sizeof what, "INT %lld", (long long)n->value.i);
    break;
  case NBC__N_FLOAT:
    snprintf(what, sizeof what, "FLOAT %g", n->value.f);
    break;
  case NBC__N_BINOP:
  case NBC__N_UNARY:
  case NBC__N_BOOLOP:
  case NBC__N_AUGASSIGN:
    snprintf(what, sizeof what, "%s %s", nbc__node_kind_name(n->kind), nbc__op_text(n->op));
    break;
  default:
    snprintf(what, sizeof what, "%s", nbc__node_kind_name(n->kind));
    break;
  }
  dump_line(out, n, indent, what);
  dump_expr(out, n->a, indent + 2);
  dump_expr(out, n->b, indent + 2);
  dump_expr(out, n->c, indent + 2);
  for (int i = 0; i < n->list.count; i++)
    dump_expr(out, n->list.items[i], indent + 2);
  for (int i = 0; i < n->body.count; i++)
    dump_expr(out, n->body.items[i], indent + 2);
  for (int i = 0; i < n->orelse.count; i++)
    dump_expr(out, n->orelse.items[i], indent + 2);
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
      nbc__buf_printf(out, "  var %s%s: ", f->vars[v].name,
                      f->vars[v].is_param ? " (param)" : "");
      nbc__type_print(out, f->vars[v].type);
      nbc__buf_puts(out, "\n");
    }
    for (int i = 0; i < f->def->body.count; i++)
      dump_expr(out, f->def->body.items[i], 2);
  }
}
