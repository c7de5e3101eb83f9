/* infer.h — private header of the typing phase: the state of one inference and, a section
 * per file, what each infer*.c file offers the others (infer.c: variables, the fixed point,
 * specialisations; infer_global.c, infer_expr.c, infer_stmt.c, infer_index.c,
 * infer_operator.c; infer_call.c and infer_call_<kind>.c: calls; lib_*.c: the kernel
 * language's library). Nothing outside typing includes it.
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
  /* infer.c's dead branch pruning: how many times the name bind_name is bound in bind_top,
   * while no branch has been pruned since it was counted (an elif chain asks it per link) */
  const nbc__list *bind_top;
  const char *bind_name;
  int bind_count;
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

/* T(k): the scalar type of kind k (defined once for a file that includes infer.h and
 * lower.h, as lib_*.c do). */
#ifndef NBCUDA_TYPE_SHORTHAND
#define NBCUDA_TYPE_SHORTHAND
static inline const nbc__type *T(nbc__type_kind k) {
  return nbc__type_scalar(k);
}
#endif

static inline bool is_kind(const nbc__type *t, nbc__type_kind k) {
  return t && t->kind == k;
}

/* Reports an error at n's position, only in the final walk (earlier walks may see
 * operands whose types are not known yet); always returns false. */
bool nbc__infer_error(infer *I, const nbc__node *n, nbc_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define TYPING(I, n, ...) nbc__infer_error((I), (n), NBC_TYPING_ERROR, __VA_ARGS__)
/* A typing error of a kind (numba's ValueError, TypeError, the kernel-return rule): the
 * message says the class, the kind tells the caller (nbc_last_error_kind). */
bool nbc__infer_error_kind(infer *I, const nbc__node *n, nbc_error_kind_t kind, const char *fmt,
                           ...) __attribute__((format(printf, 4, 5)));
#define VALUE_ERROR(I, n, ...) nbc__infer_error_kind((I), (n), NBC_ERROR_KIND_VALUE, __VA_ARGS__)
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

/* ---------------------------- infer.c: variables, the fixed point, specialisations */
/* Unifies t into variable v; reports a failure in the final walk. */
bool nbc__infer_var_assign(infer *I, int v, const nbc__type *t, const nbc__node *at);

/* --------------------------------------- infer_global.c: the types of global names */
/* What a global name means, or NULL (reported) when it has none. */
nbc__global *nbc__infer_global_lookup(infer *I, const nbc__node *n, const char *name);
/* a.copy() (call n) of array type at: a local array, for a constant global array only. */
const nbc__type *nbc__infer_global_array_copy(infer *I, nbc__node *n, const nbc__type *at);
/* The type of a global's value. */
const nbc__type *nbc__infer_global_type(infer *I, const nbc__node *n, nbc__global *G);
/* A copy of the resolver's answer g in the compilation's arena (NULL: out of memory). */
nbc__global *nbc__infer_global_new(infer *I, const nbc_global_t *g);
/* <module>.<name> as the FUNCTION type calls dispatch on ("math.sin", "cmath.exp"), or NULL
 * reported as "unsupported <what>'<module>.<name>'" when exists() says there is none. */
const nbc__type *nbc__infer_global_module_function(infer *I, const nbc__node *n,
                                                   const char *module, const char *name,
                                                   bool (*exists)(const char *),
                                                   const char *what);
/* Whether cmath.<name> is one of numba-cuda's cmath functions. */
bool nbc__infer_global_cmath_exists(const char *name);
/* The type of a member of enum class ct: an ENUM value; an IntEnum's (numba's IntEnumMember)
 * is used as its int value wherever a number is needed (nbc__infer_expr). */
const nbc__type *nbc__infer_global_enum_member_type(infer *I, const nbc__type *ct);
/* Enums: the index of member name in an enum global (-1 reported); the type of
 * cls.name / cls["name"] for enum class type ct (cls the class's node). */
int nbc__infer_enum_member(infer *I, const nbc__node *n, const nbc_global_t *g,
                           const char *name);
const nbc__type *nbc__infer_enum_lookup(infer *I, nbc__node *n, const nbc__node *cls,
                                        const nbc__type *ct, const char *name);

/* ------------------------------------------------------- infer_expr.c: expressions */
/* An expression that may stay Optional or an IntEnum member (see keep_optional). */
const nbc__type *nbc__infer_expr_keeping_optional(infer *I, nbc__node *n);
/* The truth test of n (of type t) in a condition; false (reported) when t has none. */
bool nbc__infer_expr_truth(infer *I, nbc__node *n, const nbc__type *t);
/* How many times body binds local `name` (a rebinding counts twice); *pvalue, the value of
 * its last plain assignment. */
int nbc__infer_expr_local_bindings(nbc__list *body, const char *name, const nbc__node **pvalue);
/* A kernel-language name bound without the module (`from nbcuda import grid, atomic`,
 * `add = cuda.atomic.add` at module level): typed as cuda.<name> is, with the same errors.
 * A member value (`tx = cuda.threadIdx.x` at module level) is refused, as in numba-cuda:
 * the register can only be read inside the kernel. */
const nbc__type *nbc__infer_expr_cuda_name_type(infer *I, const nbc__node *n, const char *name);

/* -------------------------------------------------------- infer_stmt.c: statements */
/* Types the statements of body in order (stopping at the final walk's first error). */
void nbc__infer_stmts(infer *I, nbc__list *body);
/* Whether every path through body ends in a return. */
bool nbc__infer_stmt_always_returns(const nbc__list *body);

/* ------------ infer_call.c: calls: the dispatch and what every kind of call shares */
/* ------------------------------------------------------------------------ calls */
nbc__call *nbc__infer_call_new(infer *I, nbc__node *n, nbc__builtin b, const char *name,
                               int nargs);
/* Records call n of b (name) returning ret, argument i converted to argtypes[i] (NULL: kept
 * as it is; a keyword's value converts); ret, or NULL out of memory. _each: every argument
 * converted to one type. */
const nbc__type *nbc__infer_call_record(infer *I, nbc__node *n, nbc__builtin b, const char *name,
                                        int nargs, const nbc__type *const *argtypes,
                                        const nbc__type *ret);
const nbc__type *nbc__infer_call_record_each(infer *I, nbc__node *n, nbc__builtin b,
                                             const char *name, int nargs,
                                             const nbc__type *each, const nbc__type *ret);
/* Positional arguments only (keywords are checked by the callers that take them). */
int nbc__infer_call_positional(const nbc__node *n);
/* False (reported) when a call of `what` passes a keyword argument. */
bool nbc__infer_call_no_keywords(infer *I, nbc__node *n, const char *what);
/* Types the arguments into types[]; false when any is unknown. */
bool nbc__infer_call_args(infer *I, nbc__node *n, const nbc__type **types, int max);
/* numba's "No implementation of function" error for `what` called with types[0..count). */
const nbc__type *nbc__infer_call_arg_list_error(infer *I, nbc__node *n, const char *what,
                                                const nbc__type **types, int count);
/* Generated sources (the embedded cmath, arraymath.c's functions) resolve their own names
 * (their imports and constants): a resolver without a function makes global lookups use the
 * module's bindings. */
extern const nbc_resolver_t nbc__infer_call_own_names;

/* ----------------------------------------- infer_call_builtin.c: Python's builtins */
/* A call of Python builtin `name` (range, len, abs, min, max, ...). */
const nbc__type *nbc__infer_call_builtin(infer *I, nbc__node *n, const char *name,
                                         const nbc__type **types, int nargs);
/* isinstance(x, spec): a constant of compile time (numba's), the node made that boolean. */
const nbc__type *nbc__infer_call_builtin_isinstance(infer *I, nbc__node *n);
/* float("nan"), float("-inf"), float("1.5"): the number Python's float() makes of the literal,
 * the call becoming that constant (numba types float() of a string literal and folds it). */
const nbc__type *nbc__infer_call_builtin_float_of_string(infer *I, nbc__node *n);

/* ---------------------------------------------------- lib_math.c: the math namespace */
/* math.<name>(...): libdevice's function for the argument types, or cuda_fp16.h's /
 * cuda_bf16.h's for a float16 / bfloat16 argument, from the function's table row. */
const nbc__type *nbc__lib_math_call(infer *I, nbc__node *n, const char *name,
                                    const nbc__type **types, int nargs);

/* -------------------------------------------------- lib_cmath.c: the cmath namespace */
/* cmath.<name>(...): numba-cuda's cmath. Its lowered functions have templates of complex64
 * and complex128: the argument (a number) converts to complex64 when it is complex64 or no
 * wider than float32, else to complex128, and the call goes to the embedded source's
 * _<name>__c64 / _<name>__c128, which return that type (isnan/isinf/isfinite: bool; log takes
 * an optional base of the same type). Its overloads (log10, cosh, sinh, tanh, acosh, phase,
 * polar) take a complex number as it is, rect two floats, and return what their bodies do. */
const nbc__type *nbc__cmath_call(infer *I, nbc__node *n, const char *name,
                                 const nbc__type **types, int nargs);

/* -------------------------------------------------- lib_numpy.c: the numpy namespace */
/* numpy.<ufunc>(...) on scalars or over arrays with an output array. */
const nbc__type *nbc__numpy_call(infer *I, nbc__node *n, const char *name,
                                 const nbc__type **types, int nargs);
/* numpy.dtype(x) as numba types it: x a string naming a type kernels have ("float32", "f4",
 * "<i8", "M8[D]") or a type (np.float32), giving that type as a value (a dtype argument of
 * cuda.local.array, a.view, a.astype...); it has no run-time value. */
const nbc__type *nbc__numpy_call_dtype(infer *I, nbc__node *n);

/* ---------------------------------------------- infer_call_cuda.c: the cuda module */
/* cuda.<name>(...): lib_cuda.c's table says which typing path the name takes. */
const nbc__type *nbc__infer_call_cuda(infer *I, nbc__node *n, const char *fname,
                                      const nbc__type **types, int nargs);
/* cuda.shared.array / cuda.local.array(shape, dtype, alignment=None): the arguments are
 * typed here, not as values (a string dtype, a list shape). */
const nbc__type *nbc__infer_call_cuda_array(infer *I, nbc__node *n, const char *fname);
/* The dtype of a shared/local array: a type global, cuda.float32, ... */
const nbc__type *nbc__infer_call_cuda_dtype_of(infer *I, nbc__node *n, const nbc__type *t);

/* ------------------------------- infer_call_method.c: array methods and reductions */
/* numba's resolve_reshape: a contiguous (C or F) array takes integers or one tuple of them,
 * and gives a view of as many dimensions in its own layout. */
const nbc__type *nbc__infer_call_method_reshape(infer *I, nbc__node *n, const nbc__type *at,
                                                const nbc__type **types, int nargs);
/* a.view(dtype) as numba types it (resolve_view): the same array with another number dtype,
 * its ndim and layout kept; whether the sizes fit is numba's run-time check (ValueError
 * "new type not compatible with array"). */
const nbc__type *nbc__infer_call_method_view(infer *I, nbc__node *n, const nbc__type *at);
/* x.view(dtype) of an integer or float scalar: its bits as another type of the same size. */
const nbc__type *nbc__infer_call_method_scalar_view(infer *I, nbc__node *n,
                                                    const nbc__type *xt);
/* operator.setitem(a, i, v): numba's `a[i] = v`, typed as that assignment is. The first walk
 * makes the call's list the target a[i] (marked "$setitem") and v, which the later walks find
 * as they are; the call is None. */
const nbc__type *nbc__infer_call_method_setitem(infer *I, nbc__node *n);
/* a.transpose(axes) as numba types it (resolve_transpose): the axes given as integers or as
 * one tuple of them, one per dimension, each once (negative from the end); the view is
 * a.T's with layout A (a 1-d array's transpose(0) is the array). The axes must be constants
 * here (numba checks them at run time, raising ValueError). */
const nbc__type *nbc__infer_call_method_transpose(infer *I, nbc__node *n, const nbc__type *at);
/* a.fill(v): numba's `a[:] = v` (arrayobj.py's arr_fill). The first walk makes the call's
 * list the view a[:] and v, which the later walks find as they are. */
const nbc__type *nbc__infer_call_method_fill(infer *I, nbc__node *n, const nbc__type *at);
/* a.sum(), np.sum(a) and the other reductions of arrays: a call of arraymath.c's function for
 * the array's type, the array its one argument (the call node's list becomes that). */
const nbc__type *nbc__infer_call_method_reduction(infer *I, nbc__node *n, const char *name,
                                                  nbc__node *array, int extra_args);
/* The function `name` of arraymath.c's generated source src (NULL: out of memory), as a
 * global the call_python of a call resolves (the source's own imports name its globals). */
nbc__global *nbc__infer_call_method_generated_function(infer *I, const char *name,
                                                       const char *src);

/* --------------------------------------------- infer_call_user.c: Python functions */
/* A call of the user's Python function (a global one or a nested one): the arguments bound
 * to the parameters as Python binds them (positional, by keyword, then the defaults), and
 * the call's list rewritten in the parameters' order, which the lowering passes as they
 * are. The captured variables closure.c passes first to a nested function are not the
 * user's: messages leave them out, and no keyword names them. */
const nbc__type *nbc__infer_call_user(infer *I, nbc__node *n, nbc__global *G,
                                      const nbc__type **types, int nargs);
/* A call of a function declared with its signature (numba's declare_device): the
 * arguments convert to the declared parameter types, the result is the declared type (a
 * scalar, or a CPointer as numba's cooperative-groups example returns). */
const nbc__type *nbc__infer_call_user_declared(infer *I, nbc__node *n, const nbc__global *G,
                                               const nbc__type **types, int nargs);
/* A call of a generated Python function (cmath, arraymath.c): positional arguments only. */
const nbc__type *nbc__infer_call_user_python(infer *I, nbc__node *n, nbc__global *G,
                                             const nbc__type **types, int nargs);

/* ---------------------------------------------- lib_cuda.c: the cuda namespace's intrinsics */
/* A call of cuda.<name> whose table row is an intrinsic (NBC__KERNEL_CALL_INTRINSIC): its
 * arity and keywords checked against the row, then typed by the row's function. */
const nbc__type *nbc__lib_cuda_type(infer *I, nbc__node *n, const char *fname,
                                    const nbc__type **types, int nargs);

#endif /* NBCUDA_INFER_H */
