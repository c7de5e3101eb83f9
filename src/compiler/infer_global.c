/* infer_global.c — the types of global names: what the resolver (or the module's own
 * bindings, then the builtins) says a name is (a constant, an array frozen into constant
 * memory, a device array, a tuple, an enum class, a record type, a function, a module)
 * becomes a kernel-language type, copied into the compilation's arena.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/infer.h"

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
    items[i].imag = it->imag;
    if (it->kind == NBC_GLOBAL_COMPLEX && it->name && strcmp(it->name, "complex64") == 0)
      items[i].name = "complex64"; /* a static copy of the only name complex64 needs */
    if (items[i].kind == NBC_GLOBAL_TUPLE && !copy_tuple(I, &items[i], it, depth + 1))
      return false;
    if (items[i].kind == NBC_GLOBAL_ARRAY && !copy_array(I, &items[i], it)) return false;
  }
  to->tuple_items = items;
  to->tuple_count = count;
  return true;
}

nbc__global *nbc__infer_global_new(infer *I, const nbc_global_t *g) {
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

bool nbc__infer_global_cmath_exists(const char *name) {
  return nbc__cmath_find(name) != NBC__CMATH_NONE;
}

/* <module>.<name> as the FUNCTION type calls dispatch on ("math.sin", "cmath.exp"), or NULL
 * reported as "unsupported <what>'<module>.<name>'" when exists() says there is none. */
const nbc__type *nbc__infer_global_module_function(infer *I, const nbc__node *n,
                                                   const char *module, const char *name,
                                                   bool (*exists)(const char *),
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
nbc__global *nbc__infer_global_lookup(infer *I, const nbc__node *n, const char *name) {
  nbc_global_t g;
  if (!(I->fn->resolver && I->fn->resolver->resolve) &&
      nbc__module_report_unparsed(I->ctx, I->fn->module, name, true)) {
    I->failed = true; /* a name a statement that does not parse defines: its syntax error */
    return NULL;
  }
  int rc = nbc__infer_resolve(I->fn->resolver, I->fn->module, name, &g);
  if (rc != 0 || g.kind == NBC_GLOBAL_UNDEFINED) {
    memset(&g, 0, sizeof g);
    for (size_t i = 0; i < sizeof builtin_names / sizeof builtin_names[0]; i++)
      if (strcmp(builtin_names[i], name) == 0) {
        g.kind = NBC_GLOBAL_OTHER;
        g.name = name;
        nbc__global *G = nbc__infer_global_new(I, &g);
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
  return nbc__infer_global_new(I, &g);
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
const nbc__type *nbc__infer_global_enum_member_type(infer *I, const nbc__type *ct) {
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

/* a.copy() of a constant global array, as numba's array.copy() (which numba-cuda allocates
 * with NRT): the shape is known when compiling, so the copy is a local array of that shape,
 * C-contiguous and writable, filled element by element by a generated device function that is
 * inlined (so its local array lives in the caller's frame). Any other array's copy needs
 * memory allocated at run time, which kernels lack: refused. The call's list becomes the
 * array, which later walks find as it is. */
const nbc__type *nbc__infer_global_array_copy(infer *I, nbc__node *n, const nbc__type *at) {
  nbc__node *array = n->a->a;
  bool rewritten = n->list.count == 1 && n->list.items[0] == array;
  if (!rewritten && n->list.count)
    return TYPING(I, n, "copy() takes no arguments"), NULL;
  const nbc__global *G = array->kind == NBC__N_NAME && array->var < 0 ? array->info : NULL;
  if (!G || G->g.kind != NBC_GLOBAL_ARRAY || at->ndim < 1 || at->ndim > 32 ||
      !(nbc__type_is_number(at->dtype) || at->dtype->kind == NBC__T_BOOL))
    return UNSUPPORTED(I, n,
                       "copy() of %s needs memory allocated at run time (numba-cuda: NRT), "
                       "which kernels do not have; the copy of a global numpy array of "
                       "numbers (a constant) is a local array",
                       nbc__infer_tname(I, at)),
           NULL;
  nbc__buf b, idx;
  nbc__buf_init(&b, I->ctx->arena);
  nbc__buf_init(&idx, I->ctx->arena);
  nbc__buf_puts(&b, "from numba import cuda\n\n\ndef _copy(a):\n    out = cuda.local.array((");
  for (int k = 0; k < at->ndim; k++)
    nbc__buf_printf(&b, "%lld, ", (long long)G->g.array_shape[k]);
  nbc__buf_printf(&b, "), \"%s\")\n", at->dtype->kind == NBC__T_BOOL
                                            ? "bool_"
                                            : nbc__type_name(I->ctx, at->dtype));
  for (int k = 0; k < at->ndim; k++) {
    nbc__buf_printf(&b, "%*sfor i%d in range(%lld):\n", 4 * (k + 1), "", k,
                    (long long)G->g.array_shape[k]);
    nbc__buf_printf(&idx, "%si%d", k ? ", " : "", k);
  }
  nbc__buf_printf(&b, "%*sout[%s] = a[%s]\n    return out\n", 4 * (at->ndim + 1), "",
                  idx.data, idx.data);
  nbc__node **items = nbc__infer_alloc(I, sizeof *items);
  nbc__global *F = b.oom || idx.oom ? NULL
                                    : nbc__infer_call_method_generated_function(I, "_copy",
                                                                                b.data);
  if (!items || !F) return NULL;
  F->g.forceinline = 1; /* the local array must outlive the call: it is the caller's */
  items[0] = array;
  n->list.items = items;
  n->list.count = 1;
  const nbc__type *argv[1] = {at};
  return nbc__infer_call_user_python(I, n, F, argv, 1);
}

/* A complex constant's type: complex64 for a numpy.complex64, complex128 for Python's complex
 * and numpy.complex128, as numba's typeof gives them. */
static const nbc__type *complex_global_type(const nbc_global_t *g) {
  return T(g->name && strcmp(g->name, "complex64") == 0 ? NBC__T_COMPLEX64 : NBC__T_COMPLEX128);
}

/* A frozen global tuple's type: int64, float64, complex and bool items, numpy arrays (readonly, in
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
    } else if (it->kind == NBC_GLOBAL_COMPLEX) {
      items[i] = complex_global_type(it);
    } else {
      UNSUPPORTED(I, n, "global tuple '%s': item %d is not a number", n->str, i);
      return NULL;
    }
  }
  return nbc__type_tuple(I->ctx, items, g->tuple_count);
}

/* The type of a global's value. */
const nbc__type *nbc__infer_global_type(infer *I, const nbc__node *n, nbc__global *G) {
  switch (G->g.kind) {
  case NBC_GLOBAL_INT:
    return T(NBC__T_INT64);
  case NBC_GLOBAL_FLOAT:
    return T(NBC__T_FLOAT64);
  case NBC_GLOBAL_BOOL:
    return T(NBC__T_BOOL);
  case NBC_GLOBAL_COMPLEX: /* numba freezes a global complex as a constant of its type */
    return complex_global_type(&G->g);
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
    return nbc__infer_global_module_function(I, n, "cmath", G->g.name,
                                             nbc__infer_global_cmath_exists, "cmath function ");
  case NBC_GLOBAL_MODULE_CUDA:
    return nbc__type_special(I->ctx, NBC__T_MODULE, "cuda", NULL);
  case NBC_GLOBAL_MODULE_NUMPY:
    return nbc__type_special(I->ctx, NBC__T_MODULE, "numpy", NULL);
  case NBC_GLOBAL_MODULE_NUMBA:
    return nbc__type_special(I->ctx, NBC__T_MODULE, "numba", NULL);
  case NBC_GLOBAL_MODULE_OPERATOR:
    return nbc__type_special(I->ctx, NBC__T_MODULE, "operator", NULL);
  case NBC_GLOBAL_OPERATOR_FUNCTION:
    return nbc__infer_global_module_function(I, n, "operator", G->g.name, nbc__operator_exists,
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
    return nbc__infer_global_module_function(I, n, "math", G->g.name, nbc__math_exists,
                                             "math function ");
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
    return nbc__infer_expr_cuda_name_type(I, n, G->g.name);
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
    return nbc__infer_global_enum_member_type(I, enum_class_type(I, n, &G->g));
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
