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
 * infer.c holds the variables, the fixed point and the specialisations; the phase's other
 * concerns have a file each: global names (infer_global.c), expressions (infer_expr.c),
 * statements (infer_stmt.c), subscripts and record fields (infer_index.c), operator.<f>
 * (infer_operator.c), calls (infer_call.c and its infer_call_<kind>.c files, lib_cuda.c for
 * the cuda intrinsics) and the --dump=types printer (infer_dump.c).
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

/* kind -1: none given (the message's words may still name numba's class: diag.c). */
static bool infer_error_v(infer *I, const nbc__node *n, nbc_status_t status, int kind,
                          const char *fmt, va_list ap) {
  if (!I->final || I->failed) {
    I->failed = I->failed || I->final;
    return false;
  }
  I->failed = true;
  char msg[1024];
  vsnprintf(msg, sizeof msg, fmt, ap);
  /* A call is shown at the start of its callee (`cuda.grid(4)` at `cuda`); other nodes at
   * their own token (a binary operator at the operator). */
  while (n && n->kind == NBC__N_CALL && n->a) {
    n = n->a;
    while (n->kind == NBC__N_ATTR && n->a)
      n = n->a;
  }
  const nbc__file *file = n && n->tok ? n->tok->file : I->file;
  int line = n && n->tok ? n->tok->line : 1, col = n && n->tok ? n->tok->col : 1;
  if (kind < 0) nbc__diag_error(I->ctx, status, file, line, col, "%s", msg);
  else nbc__diag_error_kind(I->ctx, status, (nbc_error_kind_t)kind, file, line, col, "%s", msg);
  return false;
}

bool nbc__infer_error(infer *I, const nbc__node *n, nbc_status_t status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  bool r = infer_error_v(I, n, status, -1, fmt, ap);
  va_end(ap);
  return r;
}

bool nbc__infer_error_kind(infer *I, const nbc__node *n, nbc_error_kind_t kind, const char *fmt,
                           ...) {
  va_list ap;
  va_start(ap, fmt);
  bool r = infer_error_v(I, n, NBC_TYPING_ERROR, (int)kind, fmt, ap);
  va_end(ap);
  return r;
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
bool nbc__infer_var_assign(infer *I, int v, const nbc__type *t, const nbc__node *at) {
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
  int all = I->bind_top == top && strcmp(I->bind_name, name) == 0
                ? I->bind_count
                : nbc__infer_expr_local_bindings(top, name, &unused);
  I->bind_top = top;
  I->bind_name = name;
  I->bind_count = all;
  if (all == 0) return v; /* bound nowhere: not in s's branches either */
  int inside = nbc__infer_expr_local_bindings(&s->body, name, &unused) +
               nbc__infer_expr_local_bindings(&s->orelse, name, &unused);
  return all != inside || in_loop ? -1 : v;
}

/* Whether c calls Python's builtin `name` with nargs arguments: not a parameter, a local or
 * a global of that name. */
static bool builtin_call(infer *I, nbc__list *top, const nbc__node *c, const char *name,
                         int nargs) {
  const nbc__node *unused;
  return c->kind == NBC__N_CALL && c->a && c->a->kind == NBC__N_NAME &&
         strcmp(c->a->str, name) == 0 && c->list.count == nargs &&
         nbc__infer_expr_local_bindings(top, name, &unused) == 0 && nbc__infer_expr(I, c->a) &&
         c->a->var < 0 && nbc__infer_is_builtin(c->a->info);
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
      I->bind_top = NULL; /* the bindings counted may have gone with the other branch */
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
      I->bind_top = NULL;
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
    nbc__infer_stmts(I, &fn->def->body);
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
  nbc__infer_stmts(I, &fn->def->body);
  if (I->failed) return false;
  for (int v = 0; v < fn->nvars; v++)
    if (!fn->vars[v].type)
      return TYPING(I, fn->def, "cannot determine the type of '%s'", fn->vars[v].name);
  if (!declared) {
    const nbc__type *r = I->ret ? I->ret : T(NBC__T_NONE);
    if (I->returns_value && !nbc__infer_stmt_always_returns(&fn->def->body)) {
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
    return nbc__infer_error_kind(I, fn->def, NBC_ERROR_KIND_KERNEL_RETURN,
                                 "TypeError: " NBC__KERNEL_RETURN_RULE " (it returns %s)",
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
  /* Each nested callee is typed on the stack of its caller's walk: 64 of them, or fewer when
   * their expressions are deep enough to fill half the compile's stack (stack.c). */
  if (P->depth == 64 || (P->depth > 0 && nbc__stack_half_used())) {
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
  if (!nbc__closure_lift(ctx, clone, scope, &fn->scope) || !nbc__uninit_check(ctx, clone) ||
      !nbc__ssa_split(ctx, clone)) {
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
        nbc__infer_expr_local_bindings(&clone->body, p->str, &unused) == 0)
      fn->vars[v].literal = &fn->literals[i];
    p->var = v;
    p->type = fn->vars[v].type;
  }
  bool pruned = prune_literal_ifs(&I, &clone->body, &clone->body, false);
  I.bind_top = NULL; /* the pruning's count of bindings is its own (ssa.c renames next) */
  if (pruned && !nbc__ssa_split(ctx, clone))
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
    nbc__diag_error_kind(ctx, NBC_TYPING_ERROR, NBC_ERROR_KIND_KERNEL_RETURN,
                         def->tok ? def->tok->file : file, line, col,
                         "TypeError: " NBC__KERNEL_RETURN_RULE " (declared %s)", b.data);
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
