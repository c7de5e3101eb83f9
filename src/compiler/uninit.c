/* uninit.c — numba's warning of a variable read where some path from the function's start
 * binds it nowhere (numba's SSA reconstruction meets the function's entry without a
 * definition: "Detected uninitialized variable c"), given when the compile options ask for it
 * (nbc_compile_options_t.warn_uninit, numba's ALWAYS_WARN_UNINIT_VAR).
 *
 * It is definite assignment over the statement tree: the set of the function's local names
 * (those it binds; parameters start bound) bound on every path so far, intersected where
 * paths meet (after an if, after a loop with its breaks), everything counted bound after a
 * return, raise, break or continue (no path goes on from there). A loop's body is walked with
 * the set it is entered with, which is also the set it leaves with when its test ends it
 * (`while True` leaves only by its breaks). A read of a local name outside the set gives one
 * warning per name, at its first such read. Functions with statements this does not model
 * (try, nested functions, global/nonlocal) give none. It runs on a specialisation's copy of
 * the tree after closure.c, before ssa.c renames versions; each warning's line is recorded
 * once per compilation (nbc_compile_result_warnings). */
#include <string.h>

#include "compiler.h"

enum { MAX_LOCALS = 256 }; /* local names followed; a function with more gives no warnings */

typedef struct state {
  bool bound[MAX_LOCALS];
  bool dead; /* no path reaches here */
} state;

typedef struct loop_exits {
  state breaks; /* the meet of the states at the loop's breaks (dead: none yet) */
  struct loop_exits *outer;
} loop_exits;

typedef struct walker {
  nbc__ctx *ctx;
  const char *names[MAX_LOCALS];
  int nnames;
  bool warned[MAX_LOCALS];
  bool unsupported;
  loop_exits *loop;
} walker;

static int local_index(const walker *w, const char *name) {
  for (int i = 0; name && i < w->nnames; i++)
    if (strcmp(w->names[i], name) == 0) return i;
  return -1;
}

static void collect_local(nbc__node *t, const nbc__node *st, void *data) {
  (void)st;
  walker *w = data;
  if (local_index(w, t->str) >= 0) return;
  if (w->nnames == MAX_LOCALS) {
    w->unsupported = true;
    return;
  }
  w->names[w->nnames++] = t->str;
}

/* a := the meet of a and b: bound where both are (a dead state is no constraint). */
static void meet(state *a, const state *b) {
  if (b->dead) return;
  if (a->dead) {
    *a = *b;
    return;
  }
  for (int i = 0; i < MAX_LOCALS; i++)
    a->bound[i] = a->bound[i] && b->bound[i];
}

/* "file:line:col: Detected uninitialized variable name", once per compilation. */
static void warn(walker *w, const nbc__node *n) {
  const nbc__token *t = n->tok;
  const nbc__file *f = t ? t->file : NULL;
  int line = t ? t->line + (f && f->first_line > 0 ? f->first_line - 1 : 0) : 0;
  int col = t ? t->col + (f && f->col_offset > 0 ? f->col_offset : 0) : 0;
  const char *text = nbc__arena_printf(w->ctx->arena, "%s:%d:%d: Detected uninitialized "
                                       "variable %s\n",
                                       f && f->name ? f->name : "<string>", line, col, n->str);
  nbc__buf *b = &w->ctx->warnings;
  if (!text) return;
  if (!b->arena) nbc__buf_init(b, w->ctx->arena);
  if (!b->data || !strstr(b->data, text)) nbc__buf_puts(b, text);
}

static void reads(walker *w, const nbc__node *e, const state *s) {
  if (!e || w->unsupported) return;
  if (e->kind == NBC__N_FUNCDEF) { /* a lambda left in place: its own scope */
    w->unsupported = true;
    return;
  }
  if (e->kind == NBC__N_NAME) {
    int i = local_index(w, e->str);
    if (i >= 0 && !s->dead && !s->bound[i] && !w->warned[i]) {
      w->warned[i] = true;
      warn(w, e);
    }
    return;
  }
  reads(w, e->a, s);
  reads(w, e->b, s);
  reads(w, e->c, s);
  for (int k = 0; k < e->list.count; k++)
    reads(w, e->list.items[k], s);
}

/* An assignment target: the names it binds, the reads in its subscripts and attributes. */
static void bind(walker *w, const nbc__node *t, state *s) {
  if (!t) return;
  if (t->kind == NBC__N_NAME) {
    int i = local_index(w, t->str);
    if (i >= 0) s->bound[i] = true;
  } else if (t->kind == NBC__N_TUPLE || t->kind == NBC__N_LIST) {
    for (int k = 0; k < t->list.count; k++)
      bind(w, t->list.items[k], s);
  } else {
    reads(w, t, s);
  }
}

static bool is_constant_true(const nbc__node *e) {
  return e && ((e->kind == NBC__N_BOOL || e->kind == NBC__N_INT) && e->value.i != 0);
}

static void walk(walker *w, const nbc__list *body, state *s);

static void walk_loop(walker *w, const nbc__node *st, state *s) {
  bool is_for = st->kind == NBC__N_FOR;
  if (is_for) reads(w, st->b, s);
  else reads(w, st->a, s);
  loop_exits exits;
  exits.breaks.dead = true;
  exits.outer = w->loop;
  w->loop = &exits;
  state body = *s;
  if (is_for) bind(w, st->a, &body);
  walk(w, &st->body, &body);
  w->loop = exits.outer;
  state done = *s; /* the test ends the loop: what its entry bound */
  if (!is_for && is_constant_true(st->a)) done.dead = true;
  walk(w, &st->orelse, &done);
  meet(&done, &exits.breaks);
  *s = done;
}

static void walk_stmt(walker *w, const nbc__node *st, state *s) {
  switch (st->kind) {
  case NBC__N_ASSIGN:
    reads(w, st->a, s);
    for (int k = 0; k < st->list.count; k++)
      bind(w, st->list.items[k], s);
    return;
  case NBC__N_AUGASSIGN: /* x += v reads x, then binds it */
    reads(w, st->b, s);
    reads(w, st->a, s);
    bind(w, st->a, s);
    return;
  case NBC__N_EXPR_STMT:
  case NBC__N_ASSERT:
    reads(w, st->a, s);
    reads(w, st->b, s);
    return;
  case NBC__N_RETURN:
  case NBC__N_RAISE:
    reads(w, st->a, s);
    reads(w, st->b, s);
    s->dead = true;
    return;
  case NBC__N_BREAK:
    if (w->loop) meet(&w->loop->breaks, s);
    s->dead = true;
    return;
  case NBC__N_CONTINUE:
    s->dead = true;
    return;
  case NBC__N_PASS:
  case NBC__N_IMPORT:
  case NBC__N_IMPORT_FROM:
    return;
  case NBC__N_IF: {
    reads(w, st->a, s);
    state then = *s, other = *s;
    walk(w, &st->body, &then);
    walk(w, &st->orelse, &other);
    meet(&then, &other);
    *s = then;
    return;
  }
  case NBC__N_WHILE:
  case NBC__N_FOR:
    walk_loop(w, st, s);
    return;
  default: /* try, nested functions, global/nonlocal, anything else: not modelled */
    w->unsupported = true;
    return;
  }
}

static void walk(walker *w, const nbc__list *body, state *s) {
  for (int i = 0; i < body->count && !w->unsupported; i++)
    walk_stmt(w, body->items[i], s);
}

bool nbc__uninit_check(nbc__ctx *ctx, nbc__node *def) {
  if (!ctx->options || !ctx->options->warn_uninit || !def) return true;
  walker *w = nbc__arena_alloc(ctx->arena, sizeof *w);
  state *s = w ? nbc__arena_alloc(ctx->arena, sizeof *s) : NULL;
  if (!w || !s) {
    nbc__diag_oom(ctx);
    return false;
  }
  memset(w, 0, sizeof *w);
  memset(s, 0, sizeof *s);
  w->ctx = ctx;
  nbc__each_binding(&def->body, collect_local, w);
  for (int i = 0; i < def->params.count && !w->unsupported; i++) {
    collect_local(def->params.items[i], NULL, w);
    int k = local_index(w, def->params.items[i]->str);
    if (k >= 0) s->bound[k] = true;
  }
  if (!w->unsupported) walk(w, &def->body, s);
  return true;
}
