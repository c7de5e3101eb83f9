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
 * too) and have nested functions of their own, lifted when they are compiled. As in numba, a
 * nested function can only be called: passing it, storing it or returning it is refused, and
 * so is a lambda anywhere but `name = lambda` (infer.c). Each specialisation of the enclosing
 * function lifts from its own copy of the tree; the lifted functions are named after Python's
 * __qualname__ ("k.<locals>.inner"), which no global can be called.
 */
#include <string.h>

#include "compiler.h"

/* A set of names (linear: functions have few). */
typedef struct {
  const char **items;
  int count, cap;
} names;

typedef struct lifter {
  nbc__ctx *ctx;
  bool failed;
} lifter;

static bool names_has(const names *s, const char *name) {
  for (int i = 0; i < s->count; i++)
    if (strcmp(s->items[i], name) == 0) return true;
  return false;
}

static bool names_add(lifter *L, names *s, const char *name) {
  if (names_has(s, name)) return true;
  if (s->count == s->cap) {
    int cap = s->cap ? 2 * s->cap : 8;
    const char **items = nbc__arena_alloc(L->ctx->arena, sizeof *items * (size_t)cap);
    if (!items) {
      nbc__diag_oom(L->ctx);
      L->failed = true;
      return false;
    }
    if (s->count) memcpy(items, s->items, sizeof *items * (size_t)s->count);
    s->items = items;
    s->cap = cap;
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

/* The names a nested function binds itself: its parameters, variables and nested ones. */
static void own_names(lifter *L, const nbc__node *def, names *out) {
  for (int i = 0; i < def->params.count; i++)
    names_add(L, out, def->params.items[i]->str);
  bound_names(L, &def->body, out, NULL);
}

/* ------------------------------------------------------------- the nested functions -- */

typedef struct {
  const char *name;
  nbc__node *def; /* the FUNCDEF (a lambda's too), lifted in place */
  names captured; /* the enclosing function's variables it reads */
  names calls;    /* the siblings it names */
} lifted;

typedef struct {
  lifter *L;
  const nbc__node *outer; /* the function lifted from */
  names vars;             /* its variables (parameters included) */
  lifted *items;
  int count;
} family;

static lifted *family_find(family *F, const char *name) {
  for (int i = 0; i < F->count; i++)
    if (strcmp(F->items[i].name, name) == 0) return &F->items[i];
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
    nbc__node *pass = nbc__arena_alloc(F->L->ctx->arena, sizeof *pass);
    if (!pass) {
      nbc__diag_oom(F->L->ctx);
      F->L->failed = true;
      return;
    }
    memset(pass, 0, sizeof *pass);
    pass->kind = NBC__N_PASS;
    pass->tok = s->tok;
    pass->var = -1;
    body->items[i] = pass;
    lifted *d = &F->items[F->count++];
    memset(d, 0, sizeof *d);
    d->name = name;
    d->def = def;
  }
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
    if (!callee) {
      fail(W->F->L, n, NBC_UNSUPPORTED,
           "nested function '%s' can only be called (numba inlines it at its calls)", n->str);
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
    nbc__node *arg = nbc__arena_alloc(W->F->L->ctx->arena, sizeof *arg);
    if (!arg) {
      nbc__diag_oom(W->F->L->ctx);
      W->F->L->failed = true;
      return;
    }
    memset(arg, 0, sizeof *arg);
    arg->kind = NBC__N_NAME;
    arg->tok = call->tok;
    arg->str = target->captured.items[i];
    arg->var = -1;
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
    nbc__node *p = nbc__arena_alloc(ctx->arena, sizeof *p);
    if (!p) {
      nbc__diag_oom(ctx);
      return false;
    }
    memset(p, 0, sizeof *p);
    p->kind = NBC__N_NAME;
    p->tok = d->def->tok;
    p->str = d->captured.items[i];
    p->var = -1;
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
  family F = {&L, def, {0}, NULL, 0};
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
