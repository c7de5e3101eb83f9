/* infer.h — private header shared by infer.c (variables, expressions, statements, the
 * fixed point, specialisations), infer_index.c (subscripts, record fields, the non-negative
 * index analysis) and infer_call.c (calls: builtins, math, cuda, Python functions). Nothing
 * else includes it.
 */
#ifndef NBCUDA_INFER_H
#define NBCUDA_INFER_H

#include "compiler/compiler.h"

/* The state of one program's inference. */
typedef struct inferp {
  nbc__ctx *ctx;
  nbc__program *prog;
  nbc__func *stack[64]; /* specialisations being inferred, for recursion */
  int depth;
  nbc__module **modules; /* modules loaded for callees from other sources */
  int nmodules;
  /* Mutual recursion: the stack index of the deepest function being inferred whose return
   * type a function it calls (which calls it back) needed before any was known, -1 for
   * none. The specialisations above it are abandoned (deferred) and typed again in its next
   * walk, which takes what they returned so far. */
  int awaited;
  /* Function bodies typed so far in this compilation (each specialisation, each time it is
   * typed again), bounded by NBC__INFER_MAX_BODIES: a failed or deferred specialisation is
   * typed anew at its next call, which mutual recursion can turn into exponential work. */
  int bodies;
} inferp;

enum { NBC__INFER_MAX_BODIES = 4096 };

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
  nbc__names var_index;   /* each variable's index in fn->vars, by name */
  struct bindings *binds; /* infer.c: each variable's bindings, built at the first need */
  int nbinds;
  bool changed;
  bool final; /* the last walk: record everything, report errors */
  bool failed;
  /* A call needed the return type of a function further down the stack (inferp.awaited)
   * before it was known: this specialisation is abandoned without an error after its walk
   * and typed again later. */
  bool deferred;
  const struct nbc__type *deferred_ret; /* what the abandoned callee returned so far */
  int loop_depth;
  const nbc__type *ret; /* unification of the returned values (inferred return) */
  bool returns_value;
  /* The expression being typed may stay numba's Optional (an assigned or returned value, an
   * operand of `is`); anywhere else nbc__infer_expr converts an Optional to its type. */
  bool keep_optional;
  /* A string literal assigned to several targets (`a[0] = r.name = "ab"`) and the string
   * type its first string target stores it as: it is lowered once, so every target must
   * take it at that length. */
  const nbc__node *chained_literal;
  const nbc__type *chained_literal_type;
  vardef *defs;
  nbc__func **callees;
  int ncallees, capcallees;
} infer;

static inline const nbc__type *T(nbc__type_kind k) {
  return nbc__type_scalar(k);
}

static inline bool is_kind(const nbc__type *t, nbc__type_kind k) {
  return t && t->kind == k;
}

/* Reports an error at n's position, only in the final walk (earlier walks may see
 * operands whose types are not known yet); always returns false. */
bool nbc__infer_error(infer *I, const nbc__node *n, nbc_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define TYPING(I, n, ...) nbc__infer_error((I), (n), NBC_TYPING_ERROR, __VA_ARGS__)
#define UNSUPPORTED(I, n, ...) nbc__infer_error((I), (n), NBC_UNSUPPORTED, __VA_ARGS__)
const char *nbc__infer_tname(infer *I, const nbc__type *t);
/* Arena allocation that reports running out of memory. */
void *nbc__infer_alloc(infer *I, size_t size);
/* Sets n->cast when the value of n must be converted to `to`. */
void nbc__infer_cast(nbc__node *n, const nbc__type *to);
/* Types an expression (records n->type). */
const nbc__type *nbc__infer_expr(infer *I, nbc__node *n);
/* A compile-time integer: a literal, its negation or a global integer constant. */
bool nbc__infer_const_int(infer *I, const nbc__node *n, int64_t *pv);
bool nbc__infer_is_builtin(const nbc__global *G);
/* Whether n names a global (or closure variable) the kernel language has no type for (a
 * str, a list...), looked up without reporting it: a caller that wants a constant says what
 * it wanted instead. */
bool nbc__infer_untyped_global(infer *I, const nbc__node *n);
/* Whether the integer expression n is known never to be negative (the final walk's
 * analysis; false before it), so an index by it needs no wraparound. */
bool nbc__infer_nonneg(infer *I, const nbc__node *n);
/* The index of local variable name, or -1. */
int nbc__infer_var_find(infer *I, const char *name);
/* infer_index.c: subscripts, record fields and the non-negative index analysis. */
/* Records each variable's assignments in I->defs (the analysis's input). */
void nbc__infer_collect_defs(infer *I, const nbc__list *body);
/* The least fixed point of the variables known never to be negative. */
void nbc__infer_nonneg_analysis(infer *I);
/* a[...] of array type at with index node b: the dtype, or a view's array type. */
const nbc__type *nbc__infer_array_index(infer *I, nbc__node *n, const nbc__type *at,
                                        nbc__node *b);
/* Any subscript expression n (arrays, tuples, records). */
const nbc__type *nbc__infer_subscript(infer *I, nbc__node *n);
/* The type of field `name` of record type r, reported at n when it has none. */
const nbc__type *nbc__infer_record_field(infer *I, nbc__node *n, const nbc__type *r,
                                         const char *name);
/* rec['name'] (n a SUBSCRIPT of record type r): the field's type. */
const nbc__type *nbc__infer_record_subscript(infer *I, nbc__node *n, const nbc__type *r);
/* infer_call.c: whether type t is an instance of the class spec names (isinstance's second
 * argument): 1 or 0, -1 reported when spec names no class numba's isinstance takes. */
int nbc__infer_isinstance(infer *I, const nbc__type *t, nbc__node *spec);
/* False (reported) when def's parameter list has what a function cannot (parse.c's note in
 * def->c; for the entry, when caller is NULL, also a default, def->b): through caller's
 * final walk, or directly. */
bool nbc__infer_check_params(nbc__ctx *ctx, infer *caller, const nbc__node *def);
/* The specialisation of def for args (cached per types and literals, which may be NULL;
 * recursion refused at call_site);
 * scope: the nested functions of the functions enclosing def when it is a nested one. */
nbc__func *nbc__infer_specialise(inferp *P, const nbc__module *module, nbc__node *def,
                                 const nbc_resolver_t *resolver, const nbc__type **args,
                                 const nbc__literal *literals, int nargs,
                                 const nbc__type *declared, bool is_entry,
                                 const nbc__scope *scope, const nbc__node *call_site,
                                 infer *caller);

/* What global `name` means through resolver (the Python side's), else through the module's own
 * bindings: 0 with *g filled (kind UNDEFINED when unknown), or the resolver's failure. */
int nbc__infer_resolve(const nbc_resolver_t *resolver, const nbc__module *module,
                       const char *name, nbc_global_t *g);
/* Types an assignment of value (of type t) to target as `target = value` is typed (a
 * variable, an array element or view, a record field, a.flat[i]); errors reported. */
void nbc__infer_assign_target(infer *I, nbc__node *target, nbc__node *value,
                              const nbc__type *t);
/* infer_call.c: types a CALL node and records its nbc__call in ->info. */
const nbc__type *nbc__infer_call(infer *I, nbc__node *n);
/* infer_operator.c: a call of operator.<name> becomes its operator's node, typed as one. */
const nbc__type *nbc__infer_operator_call(infer *I, nbc__node *n, const char *name);
bool nbc__operator_exists(const char *name);

/* Enums (infer.c): the index of member name in an enum global (-1 reported); the type of
 * cls.name / cls["name"] for enum class type ct (cls the class's node). */
int nbc__infer_enum_member(infer *I, const nbc__node *n, const nbc_global_t *g,
                           const char *name);
const nbc__type *nbc__infer_enum_lookup(infer *I, nbc__node *n, const nbc__node *cls,
                                        const nbc__type *ct, const char *name);

#endif /* NBCUDA_INFER_H */
