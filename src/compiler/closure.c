/* closure.c — nested functions and lambdas, lifted out of the function that defines them.
 *
 * numba inlines a closure at its calls (InlineClosureLikes); nbcuda compiles it as a device
 * function of its own, which libNVVM inlines back. The enclosing function's variables that
 * it reads (its captured variables) become its first parameters, and every call passes them:
 *
 *     def k(a):                              def k(a):
 *         def inner(x, y=2):                     pass
 *             return x + y + a[1]      =>        a[0] = inner(a, a[0])
 *         a[0] = inner(a[0])                 def k.<locals>.inner(a, x, y=2):
 *                                                return x + y + a[1]
 *
 * A call passes the variables' values at the call, which is what Python's cells give. `f =
 * lambda params: value` is the def of f. Nested functions may call each other and themselves
 * (a call of a sibling passes the sibling's captured variables, so the caller captures them
 * too) and have nested functions of their own, lifted when they are compiled. One may also
 * be passed to a device function as a value (numba's make_function_to_jit_function: it is
 * called there like a global function) when the variables it reads are constants, whose
 * values are baked into it as numba bakes them (bake_constants). A lambda anywhere but
 * `name = lambda` is refused (infer.c). Each specialisation of the enclosing
 * function lifts from its own copy of the tree; the lifted functions are named after Python's
 * __qualname__ ("k.<locals>.inner"), which no global can be called.
 */
#include <string.h>

#include "compiler.h"

/* A set of names in insertion order, with an index by name (a function may have thousands
 * of variables). Never copied by value: the copies would share the index. */
typedef struct {
  const char **items;
  int count, cap;
  nbc__names index; /* each name's position in items */
} names;

typedef struct lifter {
  nbc__ctx *ctx;
  bool failed;
} lifter;

static bool names_has(const names *s, const char *name) {
  return nbc__names_get(&s->index, name) >= 0;
}

/* Removes name (swapping the last name into its place). The index's arrays have room for the
 * updates: both names are in it already. */
static void names_remove(lifter *L, names *s, const char *name) {
  int i = nbc__names_get(&s->index, name);
  if (i < 0) return;
  s->items[i] = s->items[--s->count];
  nbc__names_set(&s->index, L->ctx->arena, s->items[i], i);
  nbc__names_set(&s->index, L->ctx->arena, name, -1);
}

/* A copy of an array of count pointers with room for twice *cap (8 at first) in the arena,
 * *cap updated; NULL after reporting out of memory. */
static void *grown(lifter *L, const void *items, int count, int *cap) {
  int n = *cap ? 2 * *cap : 8;
  void *copy = nbc__arena_alloc(L->ctx->arena, sizeof(void *) * (size_t)n);
  if (!copy) {
    nbc__diag_oom(L->ctx);
    L->failed = true;
    return NULL;
  }
  if (count) memcpy(copy, items, sizeof(void *) * (size_t)count);
  *cap = n;
  return copy;
}

static bool names_add(lifter *L, names *s, const char *name) {
  if (names_has(s, name)) return true;
  if (s->count == s->cap) {
    const char **items = grown(L, s->items, s->count, &s->cap);
    if (!items) return false;
    s->items = items;
  }
  if (!nbc__names_set(&s->index, L->ctx->arena, name, s->count)) {
    nbc__diag_oom(L->ctx);
    L->failed = true;
    return false;
  }
  s->items[s->count++] = name;
  return true;
}

static bool fail(lifter *L, const nbc__node *at, nbc_status_t code, const char *fmt,
                 const char *name) {
  if (!L->failed)
    nbc__diag_error(L->ctx, code, at->tok->file, at->tok->line, at->tok->col, fmt, name);
  L->failed = true;
  return false;
}

/* A new node of that kind at tok's position (NULL after reporting out of memory). */
static nbc__node *new_node(lifter *L, nbc__node_kind kind, const nbc__token *tok) {
  nbc__node *n = nbc__node_new(L->ctx->arena, kind, tok);
  if (!n) {
    nbc__diag_oom(L->ctx);
    L->failed = true;
  }
  return n;
}

/* `nonlocal a, b` (parse.c keeps the names of an OTHER_STMT "nonlocal"). */
static bool is_nonlocal(const nbc__node *s) {
  return s->kind == NBC__N_OTHER_STMT && s->str && strcmp(s->str, "nonlocal") == 0;
}

/* ------------------------------------------------------------- what binds a name -- */

static bool is_lambda(const nbc__node *n) {
  return n && n->kind == NBC__N_FUNCDEF && n->str && strcmp(n->str, "<lambda>") == 0;
}

/* `f = lambda ...`: one NAME target, a lambda value. */
static bool is_lambda_def(const nbc__node *s) {
  return s->kind == NBC__N_ASSIGN && s->list.count == 1 &&
         s->list.items[0]->kind == NBC__N_NAME && is_lambda(s->a);
}

static void target_names(lifter *L, const nbc__node *t, names *out) {
  if (!t) return;
  if (t->kind == NBC__N_NAME) {
    names_add(L, out, t->str);
  } else if (t->kind == NBC__N_TUPLE || t->kind == NBC__N_LIST) {
    for (int i = 0; i < t->list.count; i++)
      target_names(L, t->list.items[i], out);
  }
}

/* The variables a body assigns (not those of the functions nested in it), and its nested
 * functions' names in *nested (NULL: counted as variables). */
static void bound_names(lifter *L, const nbc__list *body, names *vars, names *nested) {
  for (int i = 0; i < body->count; i++) {
    const nbc__node *s = body->items[i];
    switch (s->kind) {
    case NBC__N_ASSIGN:
      if (is_lambda_def(s) && nested) {
        names_add(L, nested, s->list.items[0]->str);
        break;
      }
      for (int k = 0; k < s->list.count; k++)
        target_names(L, s->list.items[k], vars);
      break;
    case NBC__N_AUGASSIGN:
      target_names(L, s->a, vars);
      break;
    case NBC__N_FUNCDEF:
      names_add(L, nested ? nested : vars, s->str);
      break;
    case NBC__N_FOR:
      target_names(L, s->a, vars);
      /* fall through */
    case NBC__N_IF:
    case NBC__N_WHILE:
    case NBC__N_TRY:
      bound_names(L, &s->body, vars, nested);
      bound_names(L, &s->orelse, vars, nested);
      break;
    default:
      break;
    }
  }
}

/* The names a body's `nonlocal` statements declare (not those of functions nested in it). */
static void nonlocal_names(lifter *L, const nbc__list *body, names *out) {
  for (int i = 0; i < body->count; i++) {
    const nbc__node *s = body->items[i];
    if (is_nonlocal(s)) {
      for (int k = 0; k < s->list.count; k++)
        names_add(L, out, s->list.items[k]->str);
    } else if (s->kind == NBC__N_IF || s->kind == NBC__N_WHILE || s->kind == NBC__N_FOR ||
               s->kind == NBC__N_TRY) {
      nonlocal_names(L, &s->body, out);
      nonlocal_names(L, &s->orelse, out);
    }
  }
}

/* The names a nested function binds itself: its parameters, variables and nested ones; a
 * variable it declares nonlocal is its enclosing function's. */
static void own_names(lifter *L, const nbc__node *def, names *out) {
  for (int i = 0; i < def->params.count; i++)
    names_add(L, out, def->params.items[i]->str);
  bound_names(L, &def->body, out, NULL);
  names nonlocal = {0};
  nonlocal_names(L, &def->body, &nonlocal);
  for (int i = 0; i < nonlocal.count; i++)
    names_remove(L, out, nonlocal.items[i]);
}

/* ------------------------------------------------------------- the nested functions -- */

typedef struct {
  const char *name;
  nbc__node *def; /* the FUNCDEF (a lambda's too), lifted in place */
  names captured; /* the enclosing function's variables it reads */
  names calls;    /* the siblings it names */
  /* the enclosing function's variables it assigns (declared nonlocal, or assigned by a
   * sibling it calls): it returns their values after its own, and its calls assign them */
  names writes;
  bool returns_value;      /* a `return <value>` of its own */
  const nbc__node *passed; /* its first use as a value (an argument), or NULL */
} lifted;

typedef struct {
  lifter *L;
  const nbc__node *outer; /* the function lifted from */
  names vars;             /* its variables (parameters included) */
  lifted *items;
  int count;
  /* the calls of functions with writes rewritten as assignments (the only calls of them
   * allowed) */
  const nbc__node **assigned_calls;
  int nassigned, assigned_cap;
} family;

static lifted *family_find(family *F, const char *name) {
  for (int i = 0; i < F->count; i++)
    if (strcmp(F->items[i].name, name) == 0) return &F->items[i];
  return NULL;
}

static void definitions(const nbc__list *body, const char *name, int *pcount,
                        const nbc__node **pvalue);

/* How many times the enclosing function binds variable v (a parameter, assignments); *pvalue
 * as definitions() gives it. */
static int outer_definitions(const family *F, const char *v, const nbc__node **pvalue) {
  int count = 0;
  *pvalue = NULL;
  for (int k = 0; k < F->outer->params.count; k++)
    count += strcmp(F->outer->params.items[k]->str, v) == 0;
  definitions(&F->outer->body, v, &count, pvalue);
  return count;
}

/* Adds the names n (a nested function's body, defs inside included) mentions to out. */
static void mentioned_names(lifter *L, const nbc__node *n, names *out) {
  if (!n) return;
  if (n->kind == NBC__N_NAME && n->str) names_add(L, out, n->str);
  mentioned_names(L, n->a, out);
  mentioned_names(L, n->b, out);
  mentioned_names(L, n->c, out);
  const nbc__list *lists[] = {&n->list, &n->body, &n->orelse};
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < lists[k]->count; i++)
      mentioned_names(L, lists[k]->items[i], out);
}

/* Whether n is a call passing `name` (a char *) as an argument: a function used as a value. */
static bool passes_as_argument(const nbc__node *n, const void *name) {
  if (n->kind != NBC__N_CALL) return false;
  for (int i = 0; i < n->list.count; i++) {
    const nbc__node *a = n->list.items[i];
    if (a->kind == NBC__N_KEYWORD) a = a->a;
    if (a && a->kind == NBC__N_NAME && a->str && strcmp(a->str, name) == 0) return true;
  }
  return false;
}

/* A nested function defined twice, in two branches, and passed as a value usually reads a
 * variable each branch defines: numba reports that variable (it cannot capture one with
 * several definitions for a function that escapes), so the message is numba's then. The
 * variable, or NULL. */
static const char *captured_redefined(family *F, const nbc__node *def, const char *name) {
  bool passed = false;
  for (int k = 0; k < F->outer->body.count && !passed; k++)
    passed = nbc__node_any(F->outer->body.items[k], passes_as_argument, name);
  if (!passed) return NULL;
  names own = {0}, read = {0};
  own_names(F->L, def, &own);
  for (int k = 0; k < def->body.count; k++)
    mentioned_names(F->L, def->body.items[k], &read);
  for (int i = 0; i < read.count; i++) {
    const char *v = read.items[i];
    if (names_has(&own, v)) continue;
    const nbc__node *value;
    if (outer_definitions(F, v, &value) > 1) return v;
  }
  return NULL;
}

/* Collects the nested defs and `f = lambda` of a body into F (first pass: counting when
 * F->items is NULL) and replaces their statements with `pass`. */
static void collect(family *F, nbc__list *body, bool count_only) {
  for (int i = 0; i < body->count; i++) {
    nbc__node *s = body->items[i];
    nbc__node *def = NULL;
    const char *name = NULL;
    if (s->kind == NBC__N_FUNCDEF) {
      def = s;
      name = s->str;
    } else if (is_lambda_def(s)) {
      def = s->a;
      name = s->list.items[0]->str;
    } else if (s->kind == NBC__N_IF || s->kind == NBC__N_WHILE || s->kind == NBC__N_FOR ||
               s->kind == NBC__N_TRY) {
      collect(F, &s->body, count_only);
      collect(F, &s->orelse, count_only);
    }
    if (!def) continue;
    if (count_only) {
      F->count++;
      continue;
    }
    if (family_find(F, name)) {
      const char *v = captured_redefined(F, def, name);
      if (v) {
        fail(F->L, s, NBC_TYPING_ERROR,
             "Cannot capture a constant value for variable '%s' as there are multiple "
             "definitions present.",
             v);
        return;
      }
      fail(F->L, s, NBC_UNSUPPORTED,
           "nested function '%s' is defined more than once (a name can be bound to one "
           "function only)",
           name);
      return;
    }
    if (def->decorators.count) {
      fail(F->L, s, NBC_UNSUPPORTED,
           "nested function '%s' cannot be decorated: it is compiled with the function "
           "that defines it",
           name);
      return;
    }
    /* the statement becomes a `pass` at its position */
    nbc__node *pass = new_node(F->L, NBC__N_PASS, s->tok);
    if (!pass) return;
    body->items[i] = pass;
    lifted *d = &F->items[F->count++];
    memset(d, 0, sizeof *d);
    d->name = name;
    d->def = def;
  }
}

/* ------------------------------------------------------------------ nonlocal writes -- */
/* A nested function that assigns its enclosing function's variables (nonlocal) cannot share
 * them: lifted, it gets their values as captured parameters and gives them back. Its returns
 * become `return (value, w1, ..., wk)` (`return (w1, ..., wk)` when it returns no value),
 * and each call, which must be a statement or an assignment's whole value, assigns them:
 *
 *     x = 1000                                  x = 1000
 *     def closure(t):                           (x,) = closure(x, n)
 *         nonlocal x              =>            def k.<locals>.closure(x, t):
 *         x = t                                     x = t
 *     closure(n)                                    return (x,)
 */

/* Whether the body's own statements (not nested functions') return a value. */
static bool returns_value(const nbc__list *body) {
  for (int i = 0; i < body->count; i++) {
    const nbc__node *s = body->items[i];
    if (s->kind == NBC__N_RETURN && s->a) return true;
    if ((s->kind == NBC__N_IF || s->kind == NBC__N_WHILE || s->kind == NBC__N_FOR ||
         s->kind == NBC__N_TRY) &&
        (returns_value(&s->body) || returns_value(&s->orelse)))
      return true;
  }
  return false;
}

/* Whether control cannot leave the body at its end: it ends in a return or raise, or an
 * if/else whose branches both cannot. */
static bool ends_in_return(const nbc__list *body) {
  if (!body->count) return false;
  const nbc__node *last = body->items[body->count - 1];
  if (last->kind == NBC__N_RETURN || last->kind == NBC__N_RAISE) return true;
  return last->kind == NBC__N_IF && last->orelse.count && ends_in_return(&last->body) &&
         ends_in_return(&last->orelse);
}

/* (first, w1, ..., wk): a TUPLE of first (unless NULL) and NAMEs of the writes. */
static nbc__node *writes_tuple(lifter *L, const lifted *d, nbc__node *first,
                               const nbc__token *tok) {
  nbc__node *t = new_node(L, NBC__N_TUPLE, tok);
  int n = d->writes.count + (first != NULL);
  nbc__node **items = t ? nbc__arena_alloc(L->ctx->arena, sizeof *items * (size_t)n) : NULL;
  if (!items) {
    if (t) nbc__diag_oom(L->ctx);
    L->failed = true;
    return NULL;
  }
  int k = 0;
  if (first) items[k++] = first;
  for (int i = 0; i < d->writes.count; i++) {
    nbc__node *name = new_node(L, NBC__N_NAME, tok);
    if (!name) return NULL;
    name->str = d->writes.items[i];
    items[k++] = name;
  }
  t->list.items = items;
  t->list.count = n;
  return t;
}

/* The function's own returns give the writes back; `nonlocal` statements become `pass`. */
static void rewrite_returns(lifter *L, const lifted *d, nbc__list *body) {
  for (int i = 0; i < body->count && !L->failed; i++) {
    nbc__node *s = body->items[i];
    if (is_nonlocal(s)) {
      s->kind = NBC__N_PASS;
      s->list.count = 0;
    } else if (s->kind == NBC__N_RETURN) {
      nbc__node *first = NULL;
      if (d->returns_value) first = s->a ? s->a : new_node(L, NBC__N_NONE, s->tok);
      if (!L->failed) s->a = writes_tuple(L, d, first, s->tok);
    } else if (s->kind == NBC__N_IF || s->kind == NBC__N_WHILE || s->kind == NBC__N_FOR ||
               s->kind == NBC__N_TRY) {
      rewrite_returns(L, d, &s->body);
      rewrite_returns(L, d, &s->orelse);
    }
  }
}

/* The returns of d, and one more at its end when control can get there. */
static void give_back_writes(lifter *L, lifted *d) {
  nbc__list *body = &d->def->body;
  rewrite_returns(L, d, body);
  if (L->failed || ends_in_return(body)) return;
  nbc__node *ret = new_node(L, NBC__N_RETURN, d->def->tok);
  nbc__node **items =
      ret ? nbc__arena_alloc(L->ctx->arena, sizeof *items * (size_t)(body->count + 1)) : NULL;
  if (!items) {
    if (ret) nbc__diag_oom(L->ctx);
    L->failed = true;
    return;
  }
  ret->a = writes_tuple(L, d, d->returns_value ? new_node(L, NBC__N_NONE, ret->tok) : NULL,
                        ret->tok);
  if (body->count) memcpy(items, body->items, sizeof *items * (size_t)body->count);
  items[body->count] = ret;
  body->items = items;
  body->count++;
}

/* The nested function with writes that call n calls (by its name), or NULL. */
static lifted *writing_callee(family *F, const nbc__node *n) {
  if (!n || n->kind != NBC__N_CALL || !n->a || n->a->kind != NBC__N_NAME) return NULL;
  lifted *d = family_find(F, n->a->str);
  return d && d->writes.count ? d : NULL;
}

static bool remember_call(family *F, const nbc__node *call) {
  if (F->nassigned == F->assigned_cap) {
    const nbc__node **items = grown(F->L, F->assigned_calls, F->nassigned, &F->assigned_cap);
    if (!items) return false;
    F->assigned_calls = items;
  }
  F->assigned_calls[F->nassigned++] = call;
  return true;
}

static bool call_assigned(const family *F, const nbc__node *call) {
  for (int i = 0; i < F->nassigned; i++)
    if (F->assigned_calls[i] == call) return true;
  return false;
}

/* Calls of functions with writes, as statements or assignments' values, become assignments
 * of what they give back (in this body's own statements; a nested function's are rewritten
 * when it is). */
static void rewrite_calls(family *F, nbc__list *body) {
  lifter *L = F->L;
  for (int i = 0; i < body->count && !L->failed; i++) {
    nbc__node *s = body->items[i];
    lifted *d = NULL;
    if (s->kind == NBC__N_EXPR_STMT && (d = writing_callee(F, s->a))) {
      /* the value it returns, if any, goes to a variable nothing reads */
      nbc__node *sink = NULL;
      if (d->returns_value && (sink = new_node(L, NBC__N_NAME, s->tok)))
        sink->str = "__nonlocal_result";
      nbc__node *target = L->failed ? NULL : writes_tuple(L, d, sink, s->tok);
      nbc__node **targets = target ? nbc__arena_alloc(L->ctx->arena, sizeof *targets) : NULL;
      if (!targets) {
        if (target) nbc__diag_oom(L->ctx);
        L->failed = true;
        return;
      }
      targets[0] = target;
      nbc__node *call = s->a;
      s->kind = NBC__N_ASSIGN;
      s->list.items = targets;
      s->list.count = 1;
      s->a = call;
      remember_call(F, call);
    } else if (s->kind == NBC__N_ASSIGN && (d = writing_callee(F, s->a))) {
      if (s->list.count != 1 || !d->returns_value) {
        fail(L, s, NBC_UNSUPPORTED,
             d->returns_value
                 ? "a call of nested function '%s', which assigns variables of the function "
                   "that defines it (nonlocal), can be assigned to one target only"
                 : "nested function '%s' returns no value: its call cannot be assigned",
             d->name);
        return;
      }
      nbc__node *target = writes_tuple(L, d, s->list.items[0], s->tok);
      if (!target) return;
      s->list.items[0] = target;
      remember_call(F, s->a);
    } else if (s->kind == NBC__N_IF || s->kind == NBC__N_WHILE || s->kind == NBC__N_FOR ||
               s->kind == NBC__N_TRY) {
      rewrite_calls(F, &s->body);
      rewrite_calls(F, &s->orelse);
    }
  }
}

/* d's nonlocal declarations: each a variable of the enclosing function, which d then assigns
 * and captures. */
static void declared_writes(family *F, lifted *d) {
  names declared = {0};
  nonlocal_names(F->L, &d->def->body, &declared);
  for (int i = 0; i < declared.count && !F->L->failed; i++) {
    const char *v = declared.items[i];
    if (!names_has(&F->vars, v)) {
      fail(F->L, d->def, NBC_UNSUPPORTED,
           "nonlocal '%s' is not a variable of the function that defines the nested function "
           "(nbcuda lifts nested functions one level at a time)",
           v);
      return;
    }
    names_add(F->L, &d->writes, v);
    names_add(F->L, &d->captured, v);
  }
  d->returns_value = returns_value(&d->def->body);
}

/* ----------------------------------------------------------------------- the walk -- */

/* One scope of the walk: the function whose body it is and the names it binds itself. The
 * outermost is the function lifted from (names: its variables and nested functions). */
typedef struct scope {
  const struct scope *up;
  names bound;
} scope;

/* Whether name is bound by a scope nested in the outermost one (so it is not the outer
 * function's): the walk's scopes below the outermost. */
static bool bound_inside(const scope *sc, const char *name) {
  for (; sc && sc->up; sc = sc->up)
    if (names_has(&sc->bound, name)) return true;
  return false;
}

typedef struct {
  family *F;
  lifted *in; /* the nested function being walked (NULL: the outer function's own body) */
  bool rewrite;
} walker;

static void walk(walker *W, nbc__node *n, const scope *sc);

static void walk_list(walker *W, nbc__list *l, const scope *sc) {
  for (int i = 0; i < l->count && !W->F->L->failed; i++)
    walk(W, l->items[i], sc);
}

/* A NAME the walk reads: a captured variable, a sibling called, or an error for a nested
 * function used as a value. */
static void name_use(walker *W, nbc__node *n, const scope *sc, bool callee) {
  if (bound_inside(sc, n->str)) return;
  lifted *target = family_find(W->F, n->str);
  if (target) {
    if (!callee) { /* checked once its captures are known (nbc__closure_lift) */
      if (!target->passed) target->passed = n;
      return;
    }
    if (W->in) names_add(W->F->L, &W->in->calls, n->str);
    return;
  }
  if (W->in && names_has(&W->F->vars, n->str)) names_add(W->F->L, &W->in->captured, n->str);
}

/* A call of a nested function: its captured variables go first. */
static void pass_captured(walker *W, nbc__node *call, const lifted *target) {
  int k = target->captured.count;
  if (!k) return;
  nbc__node **items =
      nbc__arena_alloc(W->F->L->ctx->arena, sizeof *items * (size_t)(call->list.count + k));
  if (!items) {
    nbc__diag_oom(W->F->L->ctx);
    W->F->L->failed = true;
    return;
  }
  for (int i = 0; i < k; i++) {
    nbc__node *arg = new_node(W->F->L, NBC__N_NAME, call->tok);
    if (!arg) return;
    arg->str = target->captured.items[i];
    items[i] = arg;
  }
  if (call->list.count) memcpy(items + k, call->list.items, sizeof *items * call->list.count);
  call->list.items = items;
  call->list.count += k;
}

/* A NAME in n that is a variable of the walk's functions, or NULL. */
static const nbc__node *reads_variable(const walker *W, const nbc__node *n, const scope *sc) {
  if (!n) return NULL;
  if (n->kind == NBC__N_NAME)
    return bound_inside(sc, n->str) || names_has(&W->F->vars, n->str) ? n : NULL;
  const nbc__node *v = reads_variable(W, n->a, sc);
  if (!v) v = reads_variable(W, n->b, sc);
  for (int i = 0; !v && i < n->list.count; i++)
    v = reads_variable(W, n->list.items[i], sc);
  return v;
}

static void walk_def(walker *W, nbc__node *def, const scope *sc) {
  /* Python evaluates defaults where the function is defined, once: a variable's value then
   * is not what a call could pass, so defaults are constants (infer_call.c copies them). */
  for (int i = 0; i < def->params.count && !W->rewrite; i++) {
    const nbc__node *v = reads_variable(W, def->params.items[i]->a, sc);
    if (v) {
      fail(W->F->L, v, NBC_UNSUPPORTED,
           "the default value of a nested function's parameter reads the variable '%s': "
           "defaults are constants (numbers, bools, global constants)",
           v->str);
      return;
    }
  }
  /* a function nested in a nested one whose nonlocal names a variable of the function
   * lifted from: the function between would get a copy of it (its parameter) */
  if (sc->up && !W->rewrite) {
    names declared = {0};
    nonlocal_names(W->F->L, &def->body, &declared);
    for (int i = 0; i < declared.count; i++)
      if (!bound_inside(sc, declared.items[i]) && names_has(&W->F->vars, declared.items[i])) {
        fail(W->F->L, def, NBC_UNSUPPORTED,
             "nonlocal '%s' names a variable two functions out: nbcuda supports nonlocal for "
             "the variables of the function that defines the nested function",
             declared.items[i]);
        return;
      }
  }
  scope inner = {sc, {0}};
  own_names(W->F->L, def, &inner.bound);
  walk_list(W, &def->body, &inner);
}

static void walk(walker *W, nbc__node *n, const scope *sc) {
  if (!n || W->F->L->failed) return;
  switch (n->kind) {
  case NBC__N_NAME:
    if (!W->rewrite) name_use(W, n, sc, false);
    return;
  case NBC__N_CALL:
    if (n->a && n->a->kind == NBC__N_NAME) {
      if (!W->rewrite) {
        name_use(W, n->a, sc, true);
      } else if (!bound_inside(sc, n->a->str)) {
        const lifted *target = family_find(W->F, n->a->str);
        if (target && target->writes.count && !call_assigned(W->F, n)) {
          fail(W->F->L, n, NBC_UNSUPPORTED,
               "nested function '%s' assigns variables of the function that defines it "
               "(nonlocal): a call of it must be a statement of its own or the whole value of "
               "an assignment",
               target->name);
          return;
        }
        if (target) pass_captured(W, n, target);
      }
    } else {
      walk(W, n->a, sc);
    }
    walk_list(W, &n->list, sc);
    return;
  case NBC__N_KEYWORD:
    walk(W, n->a, sc);
    return;
  case NBC__N_FUNCDEF: /* a nested function's own nested one, or a stray lambda (infer.c) */
    walk_def(W, n, sc);
    return;
  default:
    walk(W, n->a, sc);
    walk(W, n->b, sc);
    walk(W, n->c, sc);
    walk_list(W, &n->list, sc);
    walk_list(W, &n->body, sc);
    walk_list(W, &n->orelse, sc);
    return;
  }
}

/* ------------------------------------------- nested functions used as values -- */

/* Whether e is a literal numba can bake in (a number, bool or None, negated or not). */
static bool is_literal(const nbc__node *e) {
  if (e && e->kind == NBC__N_UNARY && (e->op == NBC__OP_NEG || e->op == NBC__OP_POS)) e = e->a;
  return e && ((e->kind == NBC__N_INT && !e->big) || e->kind == NBC__N_FLOAT ||
               e->kind == NBC__N_COMPLEX || e->kind == NBC__N_BOOL || e->kind == NBC__N_NONE);
}

static bool target_has(const nbc__node *t, const char *name) {
  if (!t) return false;
  if (t->kind == NBC__N_NAME) return strcmp(t->str, name) == 0;
  if (t->kind == NBC__N_TUPLE || t->kind == NBC__N_LIST)
    for (int i = 0; i < t->list.count; i++)
      if (target_has(t->list.items[i], name)) return true;
  return false;
}

/* Counts the definitions of variable `name` in a body (not in nested functions); *pvalue
 * is the value of the last one that is a plain `name = value`, else NULL. */
static void definitions(const nbc__list *body, const char *name, int *pcount,
                        const nbc__node **pvalue) {
  for (int i = 0; i < body->count; i++) {
    const nbc__node *s = body->items[i];
    switch (s->kind) {
    case NBC__N_ASSIGN:
      for (int k = 0; k < s->list.count; k++)
        if (target_has(s->list.items[k], name)) {
          (*pcount)++;
          bool plain = s->list.count == 1 && s->list.items[k]->kind == NBC__N_NAME;
          *pvalue = plain ? s->a : NULL;
        }
      break;
    case NBC__N_AUGASSIGN:
      if (target_has(s->a, name)) {
        (*pcount)++;
        *pvalue = NULL;
      }
      break;
    case NBC__N_FOR:
      if (target_has(s->a, name)) {
        (*pcount)++;
        *pvalue = NULL;
      }
      /* fall through */
    case NBC__N_IF:
    case NBC__N_WHILE:
    case NBC__N_TRY:
      definitions(&s->body, name, pcount, pvalue);
      definitions(&s->orelse, name, pcount, pvalue);
      break;
    default:
      break;
    }
  }
}

/* Whether n is a function definition (def or lambda). */
static bool is_function_definition(const nbc__node *n, const void *unused) {
  (void)unused;
  return n->kind == NBC__N_FUNCDEF;
}

/* Every read of variable `name` in n made a copy of the literal value. */
static bool substitute(lifter *L, nbc__node *n, const char *name, const nbc__node *value) {
  if (!n) return true;
  if (n->kind == NBC__N_NAME && strcmp(n->str, name) == 0) {
    nbc__node *copy = nbc__node_clone(L->ctx, value);
    if (!copy) {
      nbc__diag_oom(L->ctx);
      return false;
    }
    const nbc__token *tok = n->tok;
    *n = *copy;
    n->tok = tok;
    return true;
  }
  if (!substitute(L, n->a, name, value) || !substitute(L, n->b, name, value) ||
      !substitute(L, n->c, name, value))
    return false;
  nbc__list *lists[] = {&n->list, &n->body, &n->orelse};
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < lists[k]->count; i++)
      if (!substitute(L, lists[k]->items[i], name, value)) return false;
  return true;
}

/* A nested function used as a value (given to a device function, numba's
 * make_function_to_jit_function) is called where the enclosing function's variables are
 * not: as numba does, the variables it reads must be constants, each defined once by a
 * literal (`y = 10`), and their values are baked into it; any other is refused with numba's
 * message. It may assign none, and a function it calls may not read those constants. */
static bool bake_constants(family *F, lifted *d) {
  lifter *L = F->L;
  if (d->writes.count)
    return fail(L, d->passed, NBC_UNSUPPORTED,
                "nested function '%s' assigns variables of the function that defines it "
                "(nonlocal): it can only be called, not used as a value",
                d->name);
  for (int i = 0; i < d->captured.count; i++) {
    const char *v = d->captured.items[i];
    const nbc__node *value;
    int count = outer_definitions(F, v, &value);
    for (int k = 0; k < F->count; k++) /* a sibling's nonlocal assignment */
      count += names_has(&F->items[k].writes, v);
    if (count > 1)
      return fail(L, d->passed, NBC_TYPING_ERROR,
                  "Cannot capture a constant value for variable '%s' as there are multiple "
                  "definitions present.",
                  v);
    bool callee_reads = false;
    for (int c = 0; c < d->calls.count && !callee_reads; c++) {
      const lifted *e = family_find(F, d->calls.items[c]);
      callee_reads = e && names_has(&e->captured, v);
    }
    bool nests = false;
    for (int k = 0; k < d->def->body.count && !nests; k++)
      nests = nbc__node_any(d->def->body.items[k], is_function_definition, NULL);
    if (count != 1 || !is_literal(value) || callee_reads || nests)
      return fail(L, d->passed, NBC_TYPING_ERROR,
                  "Cannot capture the non-constant value associated with variable '%s' in a "
                  "function that may escape.",
                  v);
    for (int k = 0; k < d->def->body.count; k++)
      if (!substitute(L, d->def->body.items[k], v, value)) return L->failed = true, false;
  }
  d->captured.count = 0;
  return true;
}

/* --------------------------------------------------------------------- the lifting -- */

/* Captured variables flow from callee to caller among siblings until nothing changes. */
static void propagate(family *F) {
  bool changed = true;
  while (changed && !F->L->failed) {
    changed = false;
    for (int i = 0; i < F->count; i++) {
      lifted *d = &F->items[i];
      names mine = {0};
      own_names(F->L, d->def, &mine);
      for (int c = 0; c < d->calls.count; c++) {
        const lifted *e = family_find(F, d->calls.items[c]);
        for (int k = 0; e && k < e->captured.count; k++) {
          const char *v = e->captured.items[k];
          if (names_has(&d->captured, v) || names_has(&mine, v)) continue;
          names_add(F->L, &d->captured, v);
          changed = true;
        }
        for (int k = 0; e && k < e->writes.count; k++) {
          const char *v = e->writes.items[k];
          if (names_has(&d->writes, v) || names_has(&mine, v)) continue;
          names_add(F->L, &d->writes, v);
          changed = true;
        }
      }
    }
  }
}

/* The lifted FUNCDEF: qualified name, captured variables first among its parameters. */
static bool make_lifted(family *F, lifted *d) {
  nbc__ctx *ctx = F->L->ctx;
  const char *qual = nbc__arena_printf(ctx->arena, "%s.<locals>.%s", F->outer->str, d->name);
  int k = d->captured.count, n = d->def->params.count;
  nbc__node **params = nbc__arena_alloc(ctx->arena, sizeof *params * (size_t)(k + n + 1));
  if (!qual || !params) {
    nbc__diag_oom(ctx);
    return false;
  }
  for (int i = 0; i < k; i++) {
    nbc__node *p = new_node(F->L, NBC__N_NAME, d->def->tok);
    if (!p) return false;
    p->str = d->captured.items[i];
    params[i] = p;
  }
  if (n) memcpy(params + k, d->def->params.items, sizeof *params * (size_t)n);
  d->def->params.items = params;
  d->def->params.count = k + n;
  d->def->str = qual;
  return true;
}

bool nbc__closure_lift(nbc__ctx *ctx, nbc__node *def, const nbc__scope *parent,
                       const nbc__scope **pscope) {
  *pscope = parent;
  lifter L = {ctx, false};
  family F = {&L, def, {0}, NULL, 0, NULL, 0, 0};
  collect(&F, &def->body, true);
  if (!F.count) return true;
  F.items = nbc__arena_alloc(ctx->arena, sizeof *F.items * (size_t)F.count);
  nbc__scope *s = nbc__arena_alloc(ctx->arena, sizeof *s);
  nbc__nested *out = nbc__arena_alloc(ctx->arena, sizeof *out * (size_t)F.count);
  if (!F.items || !s || !out) {
    nbc__diag_oom(ctx);
    return false;
  }
  F.count = 0;
  collect(&F, &def->body, false);
  if (L.failed) return false;
  for (int i = 0; i < def->params.count; i++)
    names_add(&L, &F.vars, def->params.items[i]->str);
  bound_names(&L, &def->body, &F.vars, NULL); /* the nested ones are `pass` now */
  for (int i = 0; i < F.count; i++)
    if (names_has(&F.vars, F.items[i].name))
      return fail(&L, F.items[i].def, NBC_UNSUPPORTED,
                  "'%s' names both a nested function and a variable (a name can be bound to "
                  "one function only)",
                  F.items[i].name);
  for (int i = 0; i < F.count && !L.failed; i++)
    declared_writes(&F, &F.items[i]);
  if (L.failed) return false;
  /* Read: what each nested function captures and which siblings it calls; the outer body
   * is walked for its misuses of nested functions and stray lambdas. */
  scope top = {NULL, {0}};
  walker W = {&F, NULL, false};
  walk_list(&W, &def->body, &top);
  for (int i = 0; i < F.count && !L.failed; i++) {
    W.in = &F.items[i];
    walk_def(&W, F.items[i].def, &top);
  }
  propagate(&F);
  for (int i = 0; i < F.count && !L.failed; i++)
    if (F.items[i].passed && (F.items[i].captured.count || F.items[i].writes.count))
      bake_constants(&F, &F.items[i]);
  if (L.failed) return false;
  /* nonlocal: returns give the writes back, calls assign them (before the walk below
   * checks that no other call of such a function is left) */
  for (int i = 0; i < F.count && !L.failed; i++)
    if (F.items[i].writes.count) give_back_writes(&L, &F.items[i]);
  rewrite_calls(&F, &def->body);
  for (int i = 0; i < F.count && !L.failed; i++)
    rewrite_calls(&F, &F.items[i].def->body);
  if (L.failed) return false;
  /* Write: every call of a nested function passes its captured variables first. */
  W.rewrite = true;
  W.in = NULL;
  walk_list(&W, &def->body, &top);
  for (int i = 0; i < F.count && !L.failed; i++) {
    W.in = &F.items[i];
    walk_def(&W, F.items[i].def, &top);
  }
  if (L.failed) return false;
  for (int i = 0; i < F.count; i++) {
    if (!make_lifted(&F, &F.items[i])) return false;
    out[i].name = F.items[i].name;
    out[i].def = F.items[i].def;
    out[i].ncaptured = F.items[i].captured.count;
  }
  s->items = out;
  s->count = F.count;
  s->parent = parent;
  *pscope = s;
  return true;
}

const nbc__nested *nbc__scope_find(const nbc__scope *s, const char *name,
                                   const nbc__scope **pfound) {
  for (; s; s = s->parent)
    for (int i = 0; i < s->count; i++)
      if (strcmp(s->items[i].name, name) == 0) {
        if (pfound) *pfound = s;
        return &s->items[i];
      }
  return NULL;
}
