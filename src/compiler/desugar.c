/* desugar.c — for loops over arrays, enumerate() and zip(), rewritten into range loops
 * before a specialisation is typed (numba iterates the same objects the same way).
 *
 *   for T in E:                      $it0 = E
 *       body                         for $k0 in range(len($it0)):
 *                                        T = $it0[$k0]
 *                                        body
 *
 *   for i, v in enumerate(E, S):     $it0 = E; $start0 = S
 *                                    ... T = ($k0 + $start0, $it0[$k0])
 *
 *   for a, b in zip(E1, E2):         $it0 = E1; $it1 = E2
 *                                    for $k0 in range(min(len($it0), len($it1))):
 *                                        T = ($it0[$k0], $it1[$k0])
 *
 *   for i, (a, b) in enumerate(zip(E1, E2)) becomes, tuples holding only numbers,
 *   i, a, b = ($k0, $it0[$k0], $it1[$k0]).
 *
 * Each iterable is evaluated once, before the loop, as in Python. An array yields its
 * elements, or for more than one dimension its rows (views, lower_array.c); `len` is its
 * first extent. The hidden names begin with '$', which no Python name can. Diagnostics about
 * the rewritten parts point at the iterable. A `for` over `range(...)` is left alone.
 */
#include <string.h>

#include "compiler/compiler.h"

typedef struct {
  nbc__ctx *ctx;
  int next; /* numbering of the hidden names */
  bool oom;
} rewriter;

static nbc__node *new_node(rewriter *R, nbc__node_kind kind, const nbc__token *tok) {
  nbc__node *n = nbc__arena_alloc(R->ctx->arena, sizeof *n);
  if (!n) {
    R->oom = true;
    return NULL;
  }
  memset(n, 0, sizeof *n);
  n->kind = kind;
  n->tok = tok;
  n->var = -1;
  return n;
}

static nbc__node *name(rewriter *R, const char *s, const nbc__token *tok) {
  nbc__node *n = new_node(R, NBC__N_NAME, tok);
  if (n) n->str = s;
  return n;
}

static bool set_list(rewriter *R, nbc__list *l, nbc__node **items, int count) {
  l->items = nbc__arena_alloc(R->ctx->arena, sizeof *items * (size_t)(count ? count : 1));
  if (!l->items) return !(R->oom = true);
  memcpy(l->items, items, sizeof *items * (size_t)count);
  l->count = count;
  return true;
}

static nbc__node *call(rewriter *R, const char *fname, nbc__node **args, int nargs,
                       const nbc__token *tok) {
  nbc__node *n = new_node(R, NBC__N_CALL, tok);
  if (!n || !(n->a = name(R, fname, tok)) || !set_list(R, &n->list, args, nargs)) return NULL;
  return n;
}

static nbc__node *assign(rewriter *R, nbc__node *target, nbc__node *value,
                         const nbc__token *tok) {
  nbc__node *n = new_node(R, NBC__N_ASSIGN, tok);
  if (!n || !set_list(R, &n->list, &target, 1)) return NULL;
  n->a = value;
  return n;
}

static const char *hidden(rewriter *R, const char *what, int k) {
  return nbc__arena_printf(R->ctx->arena, "$%s%d", what, k);
}

static bool is_call_of(const nbc__node *n, const char *fname) {
  return n && n->kind == NBC__N_CALL && n->a && n->a->kind == NBC__N_NAME &&
         strcmp(n->a->str, fname) == 0;
}

/* Whether statement s is a `for` this file rewrites: one not over range(...), which infer.c
 * and lower.c take as it is. */
static bool rewritten(const nbc__node *s) {
  return s && s->kind == NBC__N_FOR && s->b && !is_call_of(s->b, "range");
}

/* The statements replacing `for` s: the hidden assignments, then the range loop. */
static int rewrite_for(rewriter *R, nbc__node *s, nbc__node **out) {
  nbc__node *it = s->b;
  const nbc__token *tok = it->tok;
  int id = R->next++;
  bool enumerate = is_call_of(it, "enumerate"), zip = is_call_of(it, "zip");
  nbc__node *sources[32], *start = NULL;
  int nsrc = 0;
  if (enumerate || zip) {
    for (int i = 0; i < it->list.count; i++) {
      nbc__node *a = it->list.items[i];
      if (enumerate &&
          (i == 1 || (a->kind == NBC__N_KEYWORD && strcmp(a->str, "start") == 0))) {
        start = a->kind == NBC__N_KEYWORD ? a->a : a;
        continue;
      }
      if (nsrc == 32 || a->kind == NBC__N_KEYWORD) return 0; /* left for infer to refuse */
      sources[nsrc++] = a;
    }
    if (nsrc == 0 || (enumerate && nsrc != 1)) return 0;
  } else {
    sources[nsrc++] = it;
  }
  /* enumerate(zip(...)): the zipped iterables, each item a tuple */
  bool inner_zip = enumerate && is_call_of(sources[0], "zip");
  if (inner_zip) {
    nbc__node *z = sources[0];
    nsrc = 0;
    for (int i = 0; i < z->list.count; i++) {
      if (nsrc == 32 || z->list.items[i]->kind == NBC__N_KEYWORD) return 0;
      sources[nsrc++] = z->list.items[i];
    }
    if (nsrc == 0) return 0;
  }
  int n = 0;
  nbc__node *names[32];
  for (int i = 0; i < nsrc; i++) {
    const char *h = hidden(R, "it", id * 32 + i);
    names[i] = name(R, h, tok);
    out[n++] = assign(R, name(R, h, tok), sources[i], tok);
  }
  nbc__node *start_name = NULL;
  if (start) {
    const char *h = hidden(R, "start", id);
    start_name = name(R, h, tok);
    out[n++] = assign(R, name(R, h, tok), start, tok);
  }
  /* the number of steps: len of the (shortest) iterable */
  nbc__node *lens[32];
  for (int i = 0; i < nsrc; i++)
    if ((lens[i] = call(R, "len", &names[i], 1, tok))) lens[i]->alias = "$iter"; /* see infer */
  nbc__node *length = nsrc == 1 ? lens[0] : call(R, "min", lens, nsrc, tok);
  const char *k = hidden(R, "k", id);
  nbc__node *items[33];
  int nitems = 0;
  if (enumerate) {
    nbc__node *count = name(R, k, tok);
    if (start_name) {
      nbc__node *sum = new_node(R, NBC__N_BINOP, tok);
      if (sum) {
        sum->op = NBC__OP_ADD;
        sum->a = count;
        sum->b = start_name;
      }
      count = sum;
    }
    items[nitems++] = count;
  }
  nbc__node *subs[32];
  for (int i = 0; i < nsrc; i++) {
    nbc__node *sub = new_node(R, NBC__N_SUBSCRIPT, tok);
    if (sub) {
      sub->a = name(R, names[i]->str, tok);
      sub->b = name(R, k, tok);
    }
    subs[i] = sub;
  }
  /* enumerate(zip(...)) into `i, (a, b)`: tuples hold only numbers, so the item is made flat,
   * (count, a, b), and so is the target, `i, a, b` */
  nbc__node *target = s->a;
  const nbc__node *inner = target && target->kind == NBC__N_TUPLE && target->list.count == 2
                               ? target->list.items[1]
                               : NULL;
  if (inner_zip && inner && inner->kind == NBC__N_TUPLE && inner->list.count == nsrc) {
    nbc__node *flat[33];
    flat[0] = target->list.items[0];
    memcpy(flat + 1, inner->list.items, sizeof *flat * (size_t)nsrc);
    nbc__node *t = new_node(R, NBC__N_TUPLE, target->tok);
    if (t) set_list(R, &t->list, flat, nsrc + 1);
    target = t;
  } else if (inner_zip) {
    nbc__node *t = new_node(R, NBC__N_TUPLE, tok); /* left for infer.c to refuse */
    if (t) set_list(R, &t->list, subs, nsrc);
    items[nitems++] = t;
    nsrc = 0;
  }
  for (int i = 0; i < nsrc; i++)
    items[nitems++] = subs[i];
  nbc__node *item = items[0];
  if (nitems > 1 && (item = new_node(R, NBC__N_TUPLE, tok)))
    set_list(R, &item->list, items, nitems);
  nbc__node *loop = new_node(R, NBC__N_FOR, s->tok);
  if (R->oom || !loop) return -1;
  loop->a = name(R, k, tok);
  loop->b = call(R, "range", &length, 1, tok);
  loop->orelse = s->orelse;
  nbc__node **body =
      nbc__arena_alloc(R->ctx->arena, sizeof *body * (size_t)(s->body.count + 1));
  if (!body) return -1;
  body[0] = assign(R, target, item, tok);
  memcpy(body + 1, s->body.items, sizeof *body * (size_t)s->body.count);
  if (!set_list(R, &loop->body, body, s->body.count + 1) || R->oom) return -1;
  out[n++] = loop;
  return n;
}

static bool rewrite_list(rewriter *R, nbc__list *l);

static bool rewrite_children(rewriter *R, nbc__node *s) {
  return rewrite_list(R, &s->body) && rewrite_list(R, &s->orelse);
}

/* Rewrites the `for` loops of a statement list (nested ones too) in place. */
static bool rewrite_list(rewriter *R, nbc__list *l) {
  int extra = 0;
  for (int i = 0; i < l->count; i++) {
    nbc__node *s = l->items[i];
    if (!s) continue;
    if (s->kind == NBC__N_FUNCDEF) continue; /* a nested def is refused by infer.c */
    if (!rewrite_children(R, s)) return false;
    if (rewritten(s)) extra += 34; /* up to 32 iterables, a start and the loop, for one */
  }
  if (!extra) return true;
  nbc__node **items =
      nbc__arena_alloc(R->ctx->arena, sizeof *items * (size_t)(l->count + extra));
  if (!items) return !(R->oom = true);
  int n = 0;
  for (int i = 0; i < l->count; i++) {
    nbc__node *s = l->items[i];
    int made = rewritten(s) ? rewrite_for(R, s, items + n) : 0;
    if (made < 0) return false;
    if (made == 0) items[n++] = s;
    n += made;
  }
  l->items = items;
  l->count = n;
  return true;
}

bool nbc__desugar_loops(nbc__ctx *ctx, nbc__node *def) {
  rewriter R = {ctx, 0, false};
  if (!rewrite_list(&R, &def->body) || R.oom) {
    nbc__diag_oom(ctx);
    return false;
  }
  return true;
}
