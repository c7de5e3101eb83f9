/* ssa.c — a local variable bound to values of different types in unrelated places becomes
 * several variables, as numba's SSA form makes it.
 *
 * numba types each SSA version of a variable on its own and unifies only the versions that
 * meet (at a loop head or after an if): so a name may be reused for another type once its
 * old value is dead,
 *
 *     for v in (a2, b2):      # v: float32x2       arr = arr.reshape(6)   # 2-d, then 1-d
 *         ...                                      t = 0 ... t = B        # int, then array
 *     for v in (a3, b3):      # v: float32x3
 *
 * infer.c types a variable once for the whole function. This pass gives it numba's freedom:
 * for each name bound more than once it finds which bindings reach which reads (reaching
 * definitions over the statement tree: if/else, loops with break and continue, returns), joins
 * the bindings a read can see into one web, and renames every web but the first to `name.1`,
 * `name.2`... (numba's own spelling of versions; never a Python name). A parameter's web keeps
 * the name. An augmented assignment (`x += 1`) reads and binds, so it stays in the web of what
 * it reads. Names read where no binding reaches, and functions with statements the analysis
 * does not model (try, nested defs), are left as they are. It runs on a specialisation's own
 * copy of the tree, after closure.c lifted the nested functions (their captured variables are
 * reads at the calls) and before typing. */
#include <stdint.h>
#include <string.h>

#include "compiler.h"

#define MAX_DEFS 64 /* bindings of one name the analysis follows (a bit each) */

static void each_target(nbc__node *t, const nbc__node *st, nbc__binding_fn fn, void *data) {
  if (!t) return;
  if (t->kind == NBC__N_NAME) {
    if (t->str) fn(t, st, data);
  } else if (t->kind == NBC__N_TUPLE || t->kind == NBC__N_LIST) {
    for (int i = 0; i < t->list.count; i++) each_target(t->list.items[i], st, fn, data);
  }
}

void nbc__each_binding(nbc__list *body, nbc__binding_fn fn, void *data) {
  for (int i = 0; i < body->count; i++) {
    nbc__node *st = body->items[i];
    if (st->kind == NBC__N_ASSIGN)
      for (int k = 0; k < st->list.count; k++) each_target(st->list.items[k], st, fn, data);
    else if (st->kind == NBC__N_AUGASSIGN || st->kind == NBC__N_FOR)
      each_target(st->a, st, fn, data);
    nbc__each_binding(&st->body, fn, data);
    nbc__each_binding(&st->orelse, fn, data);
  }
}

typedef uint64_t defset;

typedef struct use {
  nbc__node *node;
  int def; /* a binding reaching it (its web's), -1 for none */
} use;

typedef struct loop_ctx {
  defset breaks, continues;
  struct loop_ctx *outer;
} loop_ctx;

enum { MAX_LOOP_NEST = 12 }; /* loops nested around a binding that the pass follows */

typedef struct web_pass {
  nbc__ctx *ctx;
  const char *name;
  nbc__node *defs[MAX_DEFS]; /* the NAME nodes binding name; defs[0] the parameter's, if any */
  int ndefs;
  int parent[MAX_DEFS]; /* union-find over defs */
  use *uses;
  int nuses, capuses;
  bool unsupported; /* a statement the analysis does not model, or too many bindings */
  loop_ctx *loop;
  int loop_depth; /* loops around the statement being walked */
} web_pass;

static int find(web_pass *w, int d) {
  while (w->parent[d] != d) d = w->parent[d] = w->parent[w->parent[d]];
  return d;
}

static void join(web_pass *w, int a, int b) {
  a = find(w, a);
  b = find(w, b);
  if (a != b) w->parent[a > b ? a : b] = a < b ? a : b; /* the earlier binding leads */
}

static int first_in(defset s) {
  for (int d = 0; d < MAX_DEFS; d++)
    if (s >> d & 1) return d;
  return -1;
}

/* A read of the name with the bindings in s reaching it: they are one web. A read no
 * binding reaches (Python's UnboundLocalError on that path; numba warns of an uninitialized
 * variable) leaves the name as it is: one variable, as before. */
static void read(web_pass *w, nbc__node *n, defset s) {
  if (!s) {
    w->unsupported = true;
    return;
  }
  int first = first_in(s);
  for (int d = first + 1; first >= 0 && d < w->ndefs; d++)
    if (s >> d & 1) join(w, first, d);
  if (w->nuses == w->capuses) {
    int cap = w->capuses ? 2 * w->capuses : 32;
    use *u = nbc__arena_alloc(w->ctx->arena, sizeof *u * (size_t)cap);
    if (!u) {
      w->unsupported = true;
      return;
    }
    if (w->nuses) memcpy(u, w->uses, sizeof *u * (size_t)w->nuses);
    w->uses = u;
    w->capuses = cap;
  }
  w->uses[w->nuses++] = (use){n, first};
}

/* The reads of the name in an expression. */
static void reads(web_pass *w, nbc__node *e, defset s) {
  if (!e) return;
  if (e->kind == NBC__N_NAME) {
    if (e->str && strcmp(e->str, w->name) == 0) read(w, e, s);
    return;
  }
  if (e->kind == NBC__N_FUNCDEF) { /* a lambda left in place: not modelled */
    w->unsupported = true;
    return;
  }
  reads(w, e->a, s);
  reads(w, e->b, s);
  reads(w, e->c, s);
  for (int i = 0; i < e->list.count; i++) reads(w, e->list.items[i], s);
}

/* The index of binding n (a NAME node the walk meets as a target). */
static int def_index(web_pass *w, const nbc__node *n) {
  for (int d = 0; d < w->ndefs; d++)
    if (w->defs[d] == n) return d;
  return -1;
}

/* An assignment target: reads in subscripts and attributes, then the bindings of the name
 * (each replacing what reaches after it). */
static void bind(web_pass *w, nbc__node *t, defset *s) {
  if (!t) return;
  if (t->kind == NBC__N_NAME) {
    if (!t->str || strcmp(t->str, w->name) != 0) return;
    int d = def_index(w, t);
    if (d < 0) {
      w->unsupported = true;
      return;
    }
    *s = (defset)1 << d;
    return;
  }
  if (t->kind == NBC__N_TUPLE || t->kind == NBC__N_LIST) {
    for (int i = 0; i < t->list.count; i++) bind(w, t->list.items[i], s);
    return;
  }
  reads(w, t, *s); /* a[i] = v, o.f = v: reads of a, i, o */
}

static void walk(web_pass *w, nbc__list *body, defset *s);

static void walk_stmt(web_pass *w, nbc__node *st, defset *s) {
  switch (st->kind) {
  case NBC__N_ASSIGN:
    reads(w, st->a, *s);
    for (int k = 0; k < st->list.count; k++) bind(w, st->list.items[k], s);
    return;
  case NBC__N_AUGASSIGN:
    reads(w, st->b, *s);
    if (st->a && st->a->kind == NBC__N_NAME && st->a->str && strcmp(st->a->str, w->name) == 0) {
      int d = def_index(w, st->a);
      if (d < 0) {
        w->unsupported = true;
        return;
      }
      if (!*s) { /* x += 1 with no x bound on this path */
        w->unsupported = true;
        return;
      }
      read(w, st->a, *s | (defset)1 << d); /* x += 1 stays with the x it reads */
      *s = (defset)1 << d;
    } else {
      reads(w, st->a, *s);
    }
    return;
  case NBC__N_EXPR_STMT:
  case NBC__N_ASSERT:
    reads(w, st->a, *s);
    reads(w, st->b, *s);
    return;
  case NBC__N_RETURN:
  case NBC__N_RAISE:
    reads(w, st->a, *s);
    reads(w, st->b, *s);
    *s = 0;
    return;
  case NBC__N_PASS:
    return;
  case NBC__N_BREAK:
  case NBC__N_CONTINUE:
    if (!w->loop) {
      w->unsupported = true;
      return;
    }
    if (st->kind == NBC__N_BREAK)
      w->loop->breaks |= *s;
    else
      w->loop->continues |= *s;
    *s = 0;
    return;
  case NBC__N_IF: {
    reads(w, st->a, *s);
    defset then = *s, other = *s;
    walk(w, &st->body, &then);
    walk(w, &st->orelse, &other);
    *s = then | other;
    return;
  }
  case NBC__N_WHILE:
  case NBC__N_FOR: {
    /* Each loop is walked until its bindings settle (at least twice), inside each walk of
     * the loops around it: time 2^depth. Deeper nests are left unsplit (the name keeps one
     * variable), which real kernels never reach. */
    if (w->loop_depth == MAX_LOOP_NEST) {
      w->unsupported = true;
      return;
    }
    bool is_for = st->kind == NBC__N_FOR;
    if (is_for) reads(w, st->b, *s); /* the iterable, once */
    defset head = *s;
    loop_ctx ctx = {0, 0, w->loop};
    w->loop = &ctx;
    w->loop_depth++;
    for (int round = 0; round < MAX_DEFS + 2 && !w->unsupported; round++) {
      defset body = head;
      if (is_for)
        bind(w, st->a, &body);
      else
        reads(w, st->a, body);
      walk(w, &st->body, &body);
      defset next = head | body | ctx.continues;
      if (next == head) break;
      head = next;
    }
    w->loop = ctx.outer;
    w->loop_depth--;
    if (!is_for) reads(w, st->a, head); /* the test that ends the loop */
    defset done = head;                 /* the loop's else runs when it ends by itself */
    walk(w, &st->orelse, &done);
    *s = done | ctx.breaks;
    return;
  }
  default: /* try, nested functions, imports, anything else: not modelled */
    w->unsupported = true;
    return;
  }
}

static void walk(web_pass *w, nbc__list *body, defset *s) {
  for (int i = 0; i < body->count && !w->unsupported; i++) walk_stmt(w, body->items[i], s);
}

/* A binding of the name (a NAME node), in source order, into the web pass's defs. */
static void collect_def(nbc__node *t, const nbc__node *st, void *data) {
  (void)st;
  web_pass *w = data;
  if (strcmp(t->str, w->name) != 0) return;
  if (w->ndefs == MAX_DEFS) {
    w->unsupported = true;
    return;
  }
  w->defs[w->ndefs] = t;
  w->parent[w->ndefs] = w->ndefs;
  w->ndefs++;
}

/* Splits the webs of one name; false when out of memory. */
static bool split_name(nbc__ctx *ctx, nbc__node *def, const char *name, nbc__node *param) {
  web_pass w;
  memset(&w, 0, sizeof w);
  w.ctx = ctx;
  w.name = name;
  if (param) {
    w.defs[0] = param;
    w.parent[0] = 0;
    w.ndefs = 1;
  }
  nbc__each_binding(&def->body, collect_def, &w);
  if (w.unsupported || w.ndefs < 2) return true;
  defset s = param ? 1 : 0;
  walk(&w, &def->body, &s);
  if (w.unsupported) return true;
  /* web -> its name: the first web (the parameter's, else the first binding's) keeps it */
  const char *names[MAX_DEFS] = {0};
  int version = 0;
  for (int d = 0; d < w.ndefs; d++) {
    int r = find(&w, d);
    if (names[r]) continue;
    names[r] = version == 0 ? name : nbc__arena_printf(ctx->arena, "%s.%d", name, version);
    if (!names[r]) return false;
    version++;
  }
  if (version < 2) return true;
  for (int d = 0; d < w.ndefs; d++)
    if (w.defs[d] != param) w.defs[d]->str = names[find(&w, d)];
  for (int i = 0; i < w.nuses; i++)
    if (w.uses[i].def >= 0) w.uses[i].node->str = names[find(&w, w.uses[i].def)];
  return true;
}

/* The names bound more than once (a parameter counts as bound once). */
typedef struct {
  const char *seen[256], *twice[256];
  int nseen, ntwice;
} rebound;

static void note_binding(nbc__node *t, const nbc__node *st, void *data) {
  (void)st;
  rebound *r = data;
  int cap = (int)(sizeof r->seen / sizeof r->seen[0]);
  for (int i = 0; i < r->nseen; i++) {
    if (strcmp(r->seen[i], t->str) != 0) continue;
    for (int j = 0; j < r->ntwice; j++)
      if (strcmp(r->twice[j], t->str) == 0) return;
    if (r->ntwice < cap) r->twice[r->ntwice++] = t->str;
    return;
  }
  if (r->nseen < cap) r->seen[r->nseen++] = t->str;
}

bool nbc__ssa_split(nbc__ctx *ctx, nbc__node *def) {
  rebound r;
  r.nseen = r.ntwice = 0;
  for (int i = 0; i < def->params.count; i++) note_binding(def->params.items[i], NULL, &r);
  nbc__each_binding(&def->body, note_binding, &r);
  for (int k = 0; k < r.ntwice; k++) {
    nbc__node *param = NULL;
    for (int i = 0; i < def->params.count; i++)
      if (strcmp(def->params.items[i]->str, r.twice[k]) == 0) param = def->params.items[i];
    if (!split_name(ctx, def, r.twice[k], param)) {
      nbc__diag_oom(ctx);
      return false;
    }
  }
  return true;
}
