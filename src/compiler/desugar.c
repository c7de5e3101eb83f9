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
 *   i, a, b = ($k0, $it0[$k0], $it1[$k0]); an enumerate() among zip's iterables gives its
 *   pair: for (i, a), b in zip(enumerate(E1), E2) assigns (($k0, $it0[$k0]), $it1[$k0]).
 *
 *   for v in literal_unroll(t):      $it0 = t            (numba's loop over a tuple whose
 *       body                         for $k0 in range(n):      items have different types)
 *                                        if $k0 == 0:
 *                                            v$0_0 = $it0[0]
 *                                            body, v renamed v$0_0
 *                                        elif $k0 == 1: ...
 *   with n the items of t (a parameter's tuple type, a tuple display or a global tuple, or
 *   the variable of an enclosing literal_unroll's copy whose item is such a tuple): each
 *   item gets its own copy of the body and its own variable, so each is typed alone, while
 *   break and continue keep working on the one loop.
 *
 *   for T in np.ndindex(S):          $shape0 = S         (a tuple display of the arguments
 *       body                         $i0_0 = 0 ...        when they are integers)
 *                                    for $k0 in range(max($shape0[0], 0) * ...):
 *                                        T = ($i0_0, ..., $i0_<d-1>)
 *                                        $i0_<d-1> += 1, carried into the index before it
 *                                            when it reaches its extent (numpy's order)
 *                                        body
 *   with d, the number of dimensions, known here: integers given as arguments, a tuple
 *   display, a parameter's tuple, or a parameter array's .shape. One loop, so that break,
 *   continue and else keep their meaning; the carry is done before the body runs.
 *
 * Each iterable is evaluated once, before the loop, as in Python. An array yields its
 * elements, or for more than one dimension its rows (views, lower_array.c); `len` is its
 * first extent. The hidden names begin with '$', which no Python name can. Diagnostics about
 * the rewritten parts point at the iterable. A `for` over `range(...)` is left alone.
 */
#include <string.h>

#include "compiler/compiler.h"

/* A variable literal_unroll made for one item of its tuple, when that item is a tuple of
 * known length (so `for w in literal_unroll(v)` inside the copy can be unrolled too). */
typedef struct known_tuple {
  const char *name;
  int count;
  const nbc__type *type;    /* its tuple type when it came from a parameter, else NULL */
  const nbc__node *display; /* its tuple display when it came from one, else NULL */
  struct known_tuple *next;
} known_tuple;

typedef struct {
  nbc__ctx *ctx;
  int next; /* numbering of the hidden names */
  bool oom;
  const nbc__node *def;
  const nbc__desugar_env *env;
  known_tuple *known;
} rewriter;

static nbc__node *new_node(rewriter *R, nbc__node_kind kind, const nbc__token *tok) {
  nbc__node *n = nbc__node_new(R->ctx->arena, kind, tok);
  if (!n) R->oom = true;
  return n;
}

static nbc__node *name(rewriter *R, const char *s, const nbc__token *tok) {
  nbc__node *n = new_node(R, NBC__N_NAME, tok);
  if (n) n->str = s;
  return n;
}

static nbc__node *int_node(rewriter *R, int64_t v, const nbc__token *tok) {
  nbc__node *n = new_node(R, NBC__N_INT, tok);
  if (n) n->value.i = v;
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

/* literal_unroll(t), or cuda.literal_unroll(t) / numba.literal_unroll(t), with one
 * argument. */
static bool is_literal_unroll(const nbc__node *n) {
  if (!n || n->kind != NBC__N_CALL || n->list.count != 1 || !n->a) return false;
  const nbc__node *f = n->a;
  if (f->kind == NBC__N_NAME) return strcmp(f->str, "literal_unroll") == 0;
  return f->kind == NBC__N_ATTR && f->a && f->a->kind == NBC__N_NAME &&
         strcmp(f->str, "literal_unroll") == 0;
}

static const known_tuple *known_of(const rewriter *R, const char *name) {
  for (const known_tuple *k = R->known; k; k = k->next)
    if (strcmp(k->name, name) == 0) return k;
  return NULL;
}

/* The position of the function's parameter `name`, or -1. */
static int param_index(const rewriter *R, const char *name) {
  for (int i = 0; i < R->def->params.count; i++)
    if (strcmp(R->def->params.items[i]->str, name) == 0) return i;
  return -1;
}

/* The type of parameter `name` (the specialisation's argument type), or NULL. */
static const nbc__type *param_type(const rewriter *R, const char *name) {
  int i = param_index(R, name);
  return i >= 0 && R->env && i < R->env->nargs ? R->env->args[i] : NULL;
}

/* The tuple type of parameter `name`, or NULL. */
static const nbc__type *param_tuple(const rewriter *R, const char *name) {
  const nbc__type *a = param_type(R, name);
  return a && a->kind == NBC__T_TUPLE ? a : NULL;
}

/* The items of literal_unroll's tuple t, or -1 when unknown before typing. */
static int tuple_items(const rewriter *R, const nbc__node *t) {
  if (t->kind == NBC__N_TUPLE) return t->list.count;
  if (t->kind != NBC__N_NAME) return -1;
  const known_tuple *k = known_of(R, t->str);
  if (k) return k->count;
  if (param_index(R, t->str) >= 0) { /* a parameter hides a global of the same name */
    const nbc__type *a = param_tuple(R, t->str);
    return a ? a->count : -1;
  }
  return R->env && R->env->tuple_len ? R->env->tuple_len(R->env->data, t->str) : -1;
}

/* Whether subtree n stores to variable `var` (an assignment target, an op= or a for target). */
static bool stores_to(const nbc__node *n, const char *var);

static bool target_is(const nbc__node *t, const char *var) {
  if (!t) return false;
  if (t->kind == NBC__N_NAME) return strcmp(t->str, var) == 0;
  if (t->kind != NBC__N_TUPLE && t->kind != NBC__N_LIST) return false;
  for (int i = 0; i < t->list.count; i++)
    if (target_is(t->list.items[i], var)) return true;
  return false;
}

static bool stores_to(const nbc__node *n, const char *var) {
  if (!n || n->kind == NBC__N_FUNCDEF) return false;
  if (n->kind == NBC__N_ASSIGN)
    for (int i = 0; i < n->list.count; i++)
      if (target_is(n->list.items[i], var)) return true;
  if ((n->kind == NBC__N_AUGASSIGN || n->kind == NBC__N_FOR) && target_is(n->a, var))
    return true;
  for (int i = 0; i < n->body.count; i++)
    if (stores_to(n->body.items[i], var)) return true;
  for (int i = 0; i < n->orelse.count; i++)
    if (stores_to(n->orelse.items[i], var)) return true;
  return false;
}

/* Remembers that v, the copy's variable for item i of t, holds a tuple of known length,
 * when it does and the copy's body never assigns v. */
static void remember_item(rewriter *R, const nbc__node *t, int i, const char *v,
                          nbc__node *const *body, int count) {
  const nbc__type *type = NULL;
  const nbc__node *display = NULL;
  int items = -1;
  if (t->kind == NBC__N_TUPLE) {
    display = t->list.items[i];
    if (display->kind == NBC__N_TUPLE) items = display->list.count;
  } else if (t->kind == NBC__N_NAME) {
    const known_tuple *k = known_of(R, t->str);
    const nbc__type *outer = k ? k->type : param_tuple(R, t->str);
    if (k && k->display && k->display->list.items[i]->kind == NBC__N_TUPLE) {
      display = k->display->list.items[i];
      items = display->list.count;
    } else if (outer && outer->items[i]->kind == NBC__T_TUPLE) {
      type = outer->items[i];
      items = type->count;
    }
  }
  if (items < 0) return;
  for (int j = 0; j < count; j++)
    if (stores_to(body[j], v)) return;
  known_tuple *k = nbc__arena_alloc(R->ctx->arena, sizeof *k);
  if (!k) {
    R->oom = true;
    return;
  }
  *k = (known_tuple){v, items, type, display && display->kind == NBC__N_TUPLE ? display : NULL,
                     R->known};
  R->known = k;
}

/* Renames variable `from` to `to` in a cloned subtree (assignments and uses alike). */
static void rename_var(nbc__node *n, const char *from, const char *to) {
  if (!n) return;
  if (n->kind == NBC__N_NAME && n->str && strcmp(n->str, from) == 0) n->str = to;
  if (n->kind == NBC__N_FUNCDEF) return; /* its own names */
  rename_var(n->a, from, to);
  rename_var(n->b, from, to);
  rename_var(n->c, from, to);
  for (int i = 0; i < n->list.count; i++) rename_var(n->list.items[i], from, to);
  for (int i = 0; i < n->body.count; i++) rename_var(n->body.items[i], from, to);
  for (int i = 0; i < n->orelse.count; i++) rename_var(n->orelse.items[i], from, to);
}

/* The statements replacing `for v in literal_unroll(t)` (see the top of the file); 0 when
 * t's length is not known here (infer.c then refuses the loop). */
static int rewrite_unroll(rewriter *R, nbc__node *s, nbc__node **out) {
  nbc__node *t = s->b->list.items[0];
  int count = tuple_items(R, t);
  if (count < 0 || count > 64 || !s->a || s->a->kind != NBC__N_NAME) return 0;
  const nbc__token *tok = s->b->tok;
  int id = R->next++;
  const char *it = hidden(R, "it", id * 32), *k = hidden(R, "k", id);
  out[0] = assign(R, name(R, it, tok), t, tok);
  nbc__node *chain = NULL; /* built from the last item back */
  for (int i = count - 1; i >= 0; i--) {
    const char *v = nbc__arena_printf(R->ctx->arena, "%s$%d_%d", s->a->str, id, i);
    nbc__node *index = int_node(R, i, tok), *item = new_node(R, NBC__N_SUBSCRIPT, tok);
    nbc__node *test = new_node(R, NBC__N_COMPARE, tok), *at = int_node(R, i, tok);
    nbc__node *branch = new_node(R, NBC__N_IF, tok);
    nbc__op *eq = nbc__arena_alloc(R->ctx->arena, sizeof *eq);
    nbc__node **body =
        nbc__arena_alloc(R->ctx->arena, sizeof *body * (size_t)(s->body.count + 1));
    if (!index || !item || !test || !at || !branch || !eq || !body || !v) return -1;
    item->a = name(R, it, tok);
    item->b = index;
    *eq = NBC__OP_EQ;
    test->a = name(R, k, tok);
    test->op = NBC__OP_EQ;
    test->ops = eq;
    if (!set_list(R, &test->list, &at, 1)) return -1;
    body[0] = assign(R, name(R, v, s->a->tok), item, tok);
    for (int j = 0; j < s->body.count; j++) {
      body[j + 1] = nbc__node_clone(R->ctx, s->body.items[j]);
      if (!body[j + 1]) return -1;
      rename_var(body[j + 1], s->a->str, v);
    }
    remember_item(R, t, i, v, body + 1, s->body.count);
    branch->a = test;
    if (!set_list(R, &branch->body, body, s->body.count + 1)) return -1;
    if (chain && !set_list(R, &branch->orelse, &chain, 1)) return -1;
    chain = branch;
  }
  nbc__node *n = int_node(R, count, tok), *loop = new_node(R, NBC__N_FOR, s->tok);
  if (R->oom || !n || !loop) return -1;
  loop->a = name(R, k, tok);
  loop->b = call(R, "range", &n, 1, tok);
  loop->orelse = s->orelse;
  if (chain && !set_list(R, &loop->body, &chain, 1)) return -1;
  if (!chain) { /* an empty tuple: the loop runs no iteration */
    nbc__node *pass = new_node(R, NBC__N_PASS, tok);
    if (!pass || !set_list(R, &loop->body, &pass, 1)) return -1;
  }
  out[1] = loop;
  return R->oom ? -1 : 2;
}

/* np.ndindex(...) (numpy's `np` or any name of numpy) when numpy is known to the env. */
static bool is_ndindex(const rewriter *R, const nbc__node *n) {
  if (!n || n->kind != NBC__N_CALL || !n->a || n->a->kind != NBC__N_ATTR ||
      strcmp(n->a->str, "ndindex") != 0 || !n->a->a || n->a->a->kind != NBC__N_NAME)
    return false;
  const char *mod = n->a->a->str;
  return param_index(R, mod) < 0 && R->env && R->env->is_numpy &&
         R->env->is_numpy(R->env->data, mod);
}

/* How many dimensions np.ndindex's arguments give, or -1 when that is not known before
 * typing: integers (each a dimension), or one tuple display, parameter tuple or parameter
 * array's .shape. */
static int ndindex_dims(const rewriter *R, const nbc__node *call, bool *pone_tuple) {
  int n = call->list.count;
  *pone_tuple = false;
  for (int i = 0; i < n; i++)
    if (call->list.items[i]->kind == NBC__N_KEYWORD) return -1;
  if (n != 1) return n >= 1 && n <= 32 ? n : -1;
  const nbc__node *a = call->list.items[0];
  *pone_tuple = true;
  if (a->kind == NBC__N_TUPLE) return a->list.count >= 1 ? a->list.count : -1;
  if (a->kind == NBC__N_NAME) {
    const nbc__type *t = param_type(R, a->str);
    if (t && t->kind == NBC__T_TUPLE) return t->count >= 1 ? t->count : -1;
    *pone_tuple = false;
    return t && nbc__type_is_int(t) ? 1 : -1;
  }
  if (a->kind == NBC__N_ATTR && strcmp(a->str, "shape") == 0 && a->a &&
      a->a->kind == NBC__N_NAME) {
    const nbc__type *t = param_type(R, a->a->str);
    return t && t->kind == NBC__T_ARRAY ? t->ndim : -1;
  }
  *pone_tuple = false;
  return a->kind == NBC__N_INT || a->kind == NBC__N_BINOP ? 1 : -1;
}

static nbc__node *shape_item(rewriter *R, const char *shape, int j, const nbc__token *tok) {
  nbc__node *sub = new_node(R, NBC__N_SUBSCRIPT, tok);
  if (sub) {
    sub->a = name(R, shape, tok);
    sub->b = int_node(R, j, tok);
  }
  return sub;
}

/* The odometer's step into out (one or two statements): `$i_j += 1`, then, for j > 0, when
 * $i_j reaches its extent it goes back to 0 and the step is carried into $i_(j-1). */
static int odometer(rewriter *R, const char *shape, const char *const *idx, int j,
                    const nbc__token *tok, nbc__node **out) {
  nbc__node *inc = new_node(R, NBC__N_AUGASSIGN, tok);
  if (!inc) return 0;
  inc->op = NBC__OP_ADD;
  inc->a = name(R, idx[j], tok);
  inc->b = int_node(R, 1, tok);
  out[0] = inc;
  if (j == 0) return 1;
  nbc__node *at_end = new_node(R, NBC__N_COMPARE, tok), *carry = new_node(R, NBC__N_IF, tok);
  nbc__op *ops = nbc__arena_alloc(R->ctx->arena, sizeof *ops);
  if (!at_end || !carry || !ops) {
    R->oom = true;
    return 0;
  }
  ops[0] = NBC__OP_EQ;
  at_end->a = name(R, idx[j], tok);
  at_end->ops = ops;
  nbc__node *extent = shape_item(R, shape, j, tok);
  set_list(R, &at_end->list, &extent, 1);
  carry->a = at_end;
  nbc__node *body[3] = {assign(R, name(R, idx[j], tok), int_node(R, 0, tok), tok)};
  int n = 1 + odometer(R, shape, idx, j - 1, tok, body + 1);
  set_list(R, &carry->body, body, n);
  out[1] = carry;
  return 2;
}

/* `for T in np.ndindex(...)`, see the top of the file; 0 when left for infer.c to refuse. */
static int rewrite_ndindex(rewriter *R, nbc__node *s, nbc__node **out) {
  nbc__node *it = s->b;
  const nbc__token *tok = it->tok;
  bool one_tuple;
  int d = ndindex_dims(R, it, &one_tuple);
  if (d < 1) return 0;
  int id = R->next++, n = 0;
  const char *shape = hidden(R, "shape", id), *k = hidden(R, "k", id);
  nbc__node *value = it->list.items[0];
  if (!one_tuple && (value = new_node(R, NBC__N_TUPLE, tok)))
    set_list(R, &value->list, it->list.items, d);
  out[n++] = assign(R, name(R, shape, tok), value, tok);
  const char **idx = nbc__arena_alloc(R->ctx->arena, sizeof *idx * (size_t)d);
  nbc__node **items = nbc__arena_alloc(R->ctx->arena, sizeof *items * (size_t)d);
  if (!idx || !items) return -1;
  nbc__node *count = NULL;
  for (int j = 0; j < d; j++) {
    idx[j] = nbc__arena_printf(R->ctx->arena, "$i%d_%d", id, j);
    out[n++] = assign(R, name(R, idx[j], tok), int_node(R, 0, tok), tok);
    items[j] = name(R, idx[j], tok);
    nbc__node *bounds[2] = {shape_item(R, shape, j, tok), int_node(R, 0, tok)};
    nbc__node *extent = call(R, "max", bounds, 2, tok);
    if (!count) {
      count = extent;
    } else if ((value = new_node(R, NBC__N_BINOP, tok))) {
      value->op = NBC__OP_MUL;
      value->a = count;
      value->b = extent;
      count = value;
    }
  }
  nbc__node *item = new_node(R, NBC__N_TUPLE, tok);
  nbc__node *loop = new_node(R, NBC__N_FOR, s->tok);
  nbc__node **body =
      nbc__arena_alloc(R->ctx->arena, sizeof *body * (size_t)(s->body.count + 3));
  if (R->oom || !item || !loop || !body || !set_list(R, &item->list, items, d)) return -1;
  loop->a = name(R, k, tok);
  loop->b = call(R, "range", &count, 1, tok);
  loop->orelse = s->orelse;
  body[0] = assign(R, s->a, item, tok);
  int m = 1 + odometer(R, shape, idx, d - 1, tok, body + 1);
  memcpy(body + m, s->body.items, sizeof *body * (size_t)s->body.count);
  if (!set_list(R, &loop->body, body, s->body.count + m) || R->oom) return -1;
  out[n++] = loop;
  return n;
}

/* enumerate()'s count: the hidden step counter k, plus the start variable when there is one. */
static nbc__node *enumerate_count(rewriter *R, const char *k, nbc__node *start_name,
                                  const nbc__token *tok) {
  nbc__node *count = name(R, k, tok);
  if (!start_name) return count;
  nbc__node *sum = new_node(R, NBC__N_BINOP, tok);
  if (sum) {
    sum->op = NBC__OP_ADD;
    sum->a = count;
    sum->b = start_name;
  }
  return sum;
}

/* The statements replacing `for` s: the hidden assignments, then the range loop. */
static int rewrite_for(rewriter *R, nbc__node *s, nbc__node **out) {
  if (is_literal_unroll(s->b)) return rewrite_unroll(R, s, out);
  if (is_ndindex(R, s->b)) return rewrite_ndindex(R, s, out);
  nbc__node *it = s->b;
  const nbc__token *tok = it->tok;
  int id = R->next++;
  bool enumerate = is_call_of(it, "enumerate"), zip = is_call_of(it, "zip");
  nbc__node *sources[32], *start = NULL;
  int nsrc = 0;
  if (enumerate || zip) {
    for (int i = 0; i < it->list.count; i++) {
      nbc__node *a = it->list.items[i];
      if (enumerate && ((i == 1 && a->kind != NBC__N_KEYWORD) ||
                        (a->kind == NBC__N_KEYWORD && strcmp(a->str, "start") == 0))) {
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
  /* zip(enumerate(E1), E2): an enumerated source's item is (count, E1[k]) */
  nbc__node *counted_start[32];
  bool counted[32] = {false};
  for (int i = 0; zip && i < nsrc; i++) {
    nbc__node *e = sources[i];
    if (!is_call_of(e, "enumerate") || e->list.count < 1 || e->list.count > 2) continue;
    nbc__node *start_arg = e->list.count == 2 ? e->list.items[1] : NULL;
    if (e->list.items[0]->kind == NBC__N_KEYWORD ||
        (start_arg && start_arg->kind == NBC__N_KEYWORD && strcmp(start_arg->str, "start") != 0))
      return 0; /* left for infer to refuse */
    counted[i] = true;
    counted_start[i] = start_arg && start_arg->kind == NBC__N_KEYWORD ? start_arg->a : start_arg;
    sources[i] = e->list.items[0];
  }
  int n = 0;
  nbc__node *names[32];
  for (int i = 0; i < nsrc; i++) {
    const char *h = hidden(R, "it", id * 32 + i);
    names[i] = name(R, h, tok);
    out[n++] = assign(R, name(R, h, tok), sources[i], tok);
  }
  nbc__node *counted_start_name[32];
  for (int i = 0; i < nsrc; i++) {
    counted_start_name[i] = NULL;
    if (!counted[i] || !counted_start[i]) continue;
    const char *h = hidden(R, "start", id * 32 + 1 + i);
    counted_start_name[i] = name(R, h, tok);
    out[n++] = assign(R, name(R, h, tok), counted_start[i], tok);
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
  if (enumerate) items[nitems++] = enumerate_count(R, k, start_name, tok);
  nbc__node *subs[32];
  for (int i = 0; i < nsrc; i++) {
    nbc__node *sub = new_node(R, NBC__N_SUBSCRIPT, tok);
    if (sub) {
      sub->a = name(R, names[i]->str, tok);
      sub->b = name(R, k, tok);
    }
    subs[i] = sub;
    if (counted[i]) { /* (k [+ start], E[k]) */
      nbc__node *pair[2] = {enumerate_count(R, k, counted_start_name[i], tok), sub};
      nbc__node *t = new_node(R, NBC__N_TUPLE, tok);
      if (t) set_list(R, &t->list, pair, 2);
      subs[i] = t;
    }
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

/* Rewrites the `for` loops of a statement list (nested ones too) in place. The loops inside
 * a literal_unroll loop are rewritten after it, in each copy of its body: each copy then has
 * hidden variables of its own (one copy's may hold another type), and a literal_unroll over
 * an item that is itself a tuple knows its length (remember_item). */
static bool rewrite_list(rewriter *R, nbc__list *l) {
  int extra = 0;
  for (int i = 0; i < l->count; i++) {
    nbc__node *s = l->items[i];
    if (!s) continue;
    if (s->kind == NBC__N_FUNCDEF) continue; /* a nested def: when it is compiled */
    bool unroll = rewritten(s) && is_literal_unroll(s->b);
    if (!unroll && !rewrite_children(R, s)) return false;
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
    if (rewritten(s) && is_literal_unroll(s->b) &&
        !rewrite_children(R, made ? items[n + made - 1] : s))
      return false;
    if (made == 0) items[n++] = s;
    n += made;
  }
  l->items = items;
  l->count = n;
  return true;
}

bool nbc__desugar_loops(nbc__ctx *ctx, nbc__node *def, const nbc__desugar_env *env) {
  rewriter R = {ctx, 0, false, def, env, NULL};
  if (!rewrite_list(&R, &def->body) || R.oom) {
    nbc__diag_oom(ctx);
    return false;
  }
  return true;
}
