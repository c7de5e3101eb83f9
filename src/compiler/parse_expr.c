/* parse_expr.c — the expression half of the parser (parse.c has the statements): atoms,
 * calls and subscripts, the operator precedence levels from `**` down to `lambda`,
 * starred and named expressions, and assignment targets.
 *
 * Each function is named after its rule in CPython's Grammar/python.gram (simplified) and
 * carries the rule as a comment. Binary operator levels are left-associative loops; every
 * link of a chain and every nesting counts towards the parser's depth limit (parse.c), so
 * later recursive walks of the tree stay within the stack. A lambda is a FUNCDEF (see
 * lambdef). What the kernel language lacks
 * (comprehensions, sets, starred values, f-strings, :=, await, yield) becomes an
 * OTHER_EXPR node at its first token: infer.c refuses it where a value is needed, so host
 * code in the same file still loads.
 */
#include <stdio.h>
#include <string.h>

#include "compiler/parse.h"

/* Chains libNVVM's optimiser takes superlinear time over (each `**` becomes a loop that is
 * inlined; 200 links take seconds, 1,000 minutes), bounded here with an error naming the
 * limit; no kernel needs more. */
enum { MAX_COMPARISONS = 64, MAX_POWERS = 64 };

static nbc__node *star_expression(parser *p);
static nbc__node *bitwise_or(parser *p);
static nbc__node *disjunction(parser *p);

/* Whether the token can begin an expression (to tell `x = 1,` from `x = 1, 2`). */
bool nbc__parse_starts_expression(const nbc__token *t) {
  switch (t->kind) {
  case NBC__TOK_NAME:
  case NBC__TOK_INT:
  case NBC__TOK_FLOAT:
  case NBC__TOK_IMAG:
  case NBC__TOK_STRING:
    return true;
  case NBC__TOK_OP:
    return nbc__tok_is(t, "(") || nbc__tok_is(t, "[") || nbc__tok_is(t, "{") ||
           nbc__tok_is(t, "-") || nbc__tok_is(t, "+") || nbc__tok_is(t, "~") ||
           nbc__tok_is(t, "*") || nbc__tok_is(t, "...");
  case NBC__TOK_KEYWORD:
    return nbc__tok_is(t, "not") || nbc__tok_is(t, "lambda") || nbc__tok_is(t, "await") ||
           nbc__tok_is(t, "True") || nbc__tok_is(t, "False") || nbc__tok_is(t, "None");
  default:
    return false;
  }
}

/* The leftmost token of an expression (where "cannot assign to ..." points). */
const nbc__token *nbc__parse_first_tok(const nbc__node *n) {
  for (;;) {
    switch (n->kind) {
    case NBC__N_ATTR:
    case NBC__N_SUBSCRIPT:
    case NBC__N_CALL:
    case NBC__N_BINOP:
    case NBC__N_BOOLOP:
    case NBC__N_COMPARE:
      if (!n->a) return n->tok;
      n = n->a;
      break;
    case NBC__N_IFEXP:
      n = n->b;
      break;
    default:
      return n->tok;
    }
  }
}

/* ------------------------------------------------------------------------- atoms --- */

/* comprehension: ('async'? 'for' star_targets 'in' disjunction ('if' disjunction)*)+
 * The clauses are checked and dropped: the whole comprehension is an OTHER_EXPR. */
static bool comprehension(parser *p) {
  do {
    accept(p, "async");
    if (!nbc__parse_expect(p, "for", "in comprehension")) return false;
    do {
      if (!bitwise_or(p)) return false;
    } while (accept(p, ",") && !is(p, "in"));
    if (!nbc__parse_expect(p, "in", "after comprehension target")) return false;
    if (!disjunction(p)) return false;
    while (accept(p, "if"))
      if (!disjunction(p)) return false;
  } while (is(p, "for") || is(p, "async"));
  return true;
}

static nbc__node *other_expr(parser *p, const nbc__token *tok, nbc__node *a) {
  nbc__node *n = nbc__parse_new_node(p, NBC__N_OTHER_EXPR, tok);
  if (n) n->a = a;
  return n;
}

/* strings: STRING+   (implicit concatenation; bytes and str do not mix) */
static nbc__node *strings(parser *p) {
  const nbc__token *first = p->tok;
  bool any_bytes = false, any_text = false, any_f = false;
  nbc__buf b;
  nbc__buf_init(&b, p->ctx->arena);
  while (is_kind(p, NBC__TOK_STRING)) {
    bool bytes = false;
    for (const char *q = nbc__tok_start(p->tok); *q != '\'' && *q != '"'; q++) {
      bytes |= *q == 'b' || *q == 'B';
      any_f |= *q == 'f' || *q == 'F';
    }
    if ((bytes && any_text) || (!bytes && any_bytes))
      return nbc__parse_syntax(p, p->tok, "cannot mix bytes and nonbytes literals");
    any_bytes |= bytes;
    any_text |= !bytes;
    nbc__buf_puts(&b, p->tok->str ? p->tok->str : "");
    advance(p);
  }
  if (b.oom) return nbc__parse_oom(p);
  if (any_f) return other_expr(p, first, NULL);
  nbc__node *n = nbc__parse_new_node(p, NBC__N_STR, first);
  if (n) {
    n->str = b.data;
    n->value.i = any_bytes; /* b"..." */
  }
  return n;
}

/* group_or_tuple: '(' ')' | '(' yield_expr ')' | '(' named_expression comprehension ')'
 *               | '(' star_named_expression ')' | '(' star_named_expression ',' [...] ')' */
static nbc__node *paren_atom(parser *p) {
  const nbc__token *open = p->tok;
  advance(p);
  vec items = {0};
  if (accept(p, ")")) return nbc__parse_new_node(p, NBC__N_TUPLE, open);
  if (is(p, "yield")) {
    const nbc__token *y = p->tok;
    advance(p);
    if (accept(p, "from") || nbc__parse_starts_expression(p->tok))
      if (!nbc__parse_star_expressions(p)) return NULL;
    if (!nbc__parse_expect(p, ")", "to close '('")) return NULL;
    return other_expr(p, y, NULL);
  }
  nbc__node *first = star_expression(p);
  if (!first) return NULL;
  if (is(p, "for") || is(p, "async")) {
    if (!comprehension(p) || !nbc__parse_expect(p, ")", "after generator expression"))
      return NULL;
    return other_expr(p, open, first);
  }
  if (!is(p, ",")) {
    if (!nbc__parse_expect(p, ")", "to close '('")) return NULL;
    return first;
  }
  if (!nbc__parse_push(p, &items, first)) return NULL;
  while (accept(p, ",") && !is(p, ")"))
    if (!nbc__parse_push(p, &items, star_expression(p))) return NULL;
  if (!nbc__parse_expect(p, ")", "in tuple")) return NULL;
  nbc__node *t = nbc__parse_new_node(p, NBC__N_TUPLE, open);
  if (t) t->list = to_list(items);
  return t;
}

/* list: '[' [star_named_expressions] ']' | '[' named_expression comprehension ']' */
static nbc__node *list_atom(parser *p) {
  const nbc__token *open = p->tok;
  advance(p);
  vec items = {0};
  if (!is(p, "]")) {
    nbc__node *first = star_expression(p);
    if (!first) return NULL;
    if (is(p, "for") || is(p, "async")) {
      if (!comprehension(p) || !nbc__parse_expect(p, "]", "after list comprehension"))
        return NULL;
      return other_expr(p, open, first);
    }
    if (!nbc__parse_push(p, &items, first)) return NULL;
    while (accept(p, ",") && !is(p, "]"))
      if (!nbc__parse_push(p, &items, star_expression(p))) return NULL;
  }
  if (!nbc__parse_expect(p, "]", "in list")) return NULL;
  nbc__node *l = nbc__parse_new_node(p, NBC__N_LIST, open);
  if (l) l->list = to_list(items);
  return l;
}

/* dict_or_set: '{' [kvpair (',' kvpair)* [',']] '}' | '{' kvpair comprehension '}'
 *            | '{' star_named_expressions '}' | '{' named_expression comprehension '}'
 * kvpair: expression ':' expression | '**' bitwise_or
 * Sets, comprehensions and ** unpacking are OTHER_EXPR. */
static nbc__node *dict_atom(parser *p) {
  const nbc__token *open = p->tok;
  advance(p);
  vec items = {0};
  if (accept(p, "}")) return nbc__parse_new_node(p, NBC__N_DICT, open);
  bool other = false, is_dict = true;
  nbc__node *first = NULL;
  if (accept(p, "**")) {
    other = true;
    if (!bitwise_or(p)) return NULL;
  } else {
    first = nbc__parse_named_expression(p);
    if (!first) return NULL;
    if (accept(p, ":")) {
      nbc__node *v = nbc__parse_expression(p);
      if (!v) return NULL;
      if (!nbc__parse_push(p, &items, first) || !nbc__parse_push(p, &items, v)) return NULL;
    } else {
      is_dict = false;
      other = true;
    }
    if (is(p, "for") || is(p, "async")) {
      if (!comprehension(p) || !nbc__parse_expect(p, "}", "after comprehension")) return NULL;
      return other_expr(p, open, NULL);
    }
  }
  while (accept(p, ",") && !is(p, "}")) {
    if (is_dict && accept(p, "**")) {
      other = true;
      if (!bitwise_or(p)) return NULL;
      continue;
    }
    nbc__node *k = nbc__parse_named_expression(p);
    if (!k) return NULL;
    if (is_dict) {
      if (!nbc__parse_expect(p, ":", "after dictionary key")) return NULL;
      nbc__node *v = nbc__parse_expression(p);
      if (!nbc__parse_push(p, &items, k) || !nbc__parse_push(p, &items, v)) return NULL;
    }
  }
  if (!nbc__parse_expect(p, "}", is_dict ? "in dictionary" : "in set")) return NULL;
  if (other) return other_expr(p, open, NULL);
  nbc__node *d = nbc__parse_new_node(p, NBC__N_DICT, open);
  if (d) d->list = to_list(items);
  return d;
}

/* atom: NAME | 'True' | 'False' | 'None' | strings | NUMBER | group_or_tuple | list
 *     | dict_or_set | '...' */
static nbc__node *atom(parser *p) {
  const nbc__token *t = p->tok;
  nbc__node *n;
  switch (t->kind) {
  case NBC__TOK_NAME:
    advance(p);
    n = nbc__parse_new_node(p, NBC__N_NAME, t);
    if (n && !(n->str = nbc__parse_tok_text(p, t))) return NULL;
    return n;
  case NBC__TOK_INT:
    if (t->huge) { /* host code may hold any integer; a kernel cannot */
      advance(p);
      n = other_expr(p, t, NULL);
      if (n) n->str = "integer literal too large for 64 bits";
      return n;
    }
    advance(p);
    n = nbc__parse_new_node(p, NBC__N_INT, t);
    if (n) {
      n->value.i = t->value.i;
      n->big = t->big;
    }
    return n;
  case NBC__TOK_FLOAT:
  case NBC__TOK_IMAG:
    advance(p);
    n = nbc__parse_new_node(p, t->kind == NBC__TOK_FLOAT ? NBC__N_FLOAT : NBC__N_COMPLEX, t);
    if (n) n->value.f = t->value.f;
    return n;
  case NBC__TOK_STRING:
    return strings(p);
  default:
    break;
  }
  if (is(p, "True") || is(p, "False")) {
    advance(p);
    n = nbc__parse_new_node(p, NBC__N_BOOL, t);
    if (n) n->value.i = nbc__tok_is(t, "True");
    return n;
  }
  if (accept(p, "None")) return nbc__parse_new_node(p, NBC__N_NONE, t);
  if (is(p, "(")) return paren_atom(p);
  if (is(p, "[")) return list_atom(p);
  if (is(p, "{")) return dict_atom(p);
  if (accept(p, "...")) return nbc__parse_new_node(p, NBC__N_ELLIPSIS, t);
  if (t->kind == NBC__TOK_INDENT) return nbc__parse_syntax(p, t, "unexpected indent");
  return nbc__parse_syntax(p, t, "expected an expression, found %s", nbc__parse_describe(p, t));
}

/* --------------------------------------------------------------------- primaries --- */

/* arguments: (arg (',' arg)* [','])? ')'
 * arg: '*' expression | '**' expression | NAME '=' expression | named_expression
 *    | named_expression comprehension   (only argument: a generator expression)
 * Positional arguments come first in the CALL's list, then the KEYWORD nodes; *args and
 * **kwargs become OTHER_EXPR. */
bool nbc__parse_arguments(parser *p, nbc__node *call) {
  vec pos = {0}, kws = {0};
  while (!is(p, ")")) {
    const nbc__token *t = p->tok;
    if (accept(p, "*") || accept(p, "**")) {
      nbc__node *e = nbc__parse_expression(p);
      if (!e) return false;
      if (!nbc__parse_push(p, nbc__tok_is(t, "*") ? &pos : &kws, other_expr(p, t, e)))
        return false;
    } else if (t->kind == NBC__TOK_NAME && nbc__tok_is(t + 1, "=")) {
      advance(p);
      advance(p);
      nbc__node *kw = nbc__parse_new_node(p, NBC__N_KEYWORD, t);
      if (!kw || !(kw->str = nbc__parse_tok_text(p, t)) || !(kw->a = nbc__parse_expression(p)))
        return false;
      for (int i = 0; i < kws.count; i++)
        if (kws.items[i]->kind == NBC__N_KEYWORD && strcmp(kws.items[i]->str, kw->str) == 0)
          return nbc__parse_syntax(p, t, "keyword argument repeated: %s", kw->str), false;
      if (!nbc__parse_push(p, &kws, kw)) return false;
    } else {
      nbc__node *e = nbc__parse_named_expression(p);
      if (!e) return false;
      if (is(p, "for") || is(p, "async")) {
        if (!comprehension(p)) return false;
        e = other_expr(p, t, e);
      }
      if (kws.count > 0) {
        bool unpack = kws.items[kws.count - 1]->kind == NBC__N_OTHER_EXPR;
        return nbc__parse_syntax(p, nbc__parse_first_tok(e),
                                 unpack
                                     ? "positional argument follows keyword argument unpacking"
                                     : "positional argument follows keyword argument"),
               false;
      }
      if (!nbc__parse_push(p, &pos, e)) return false;
    }
    if (!accept(p, ",")) break;
  }
  if (!is(p, ")")) {
    nbc__parse_syntax(p, p->tok, "expected ',' or ')' in call arguments, found %s",
                      nbc__parse_describe(p, p->tok));
    return false;
  }
  advance(p);
  for (int i = 0; i < kws.count; i++)
    if (!nbc__parse_push(p, &pos, kws.items[i])) return false;
  call->list = to_list(pos);
  return true;
}

/* slice: [expression] ':' [expression] [':' [expression]] | named_expression */
static nbc__node *slice(parser *p) {
  nbc__node *a = NULL;
  if (!is(p, ":")) {
    if (is(p, "*")) {
      const nbc__token *star = p->tok;
      advance(p);
      nbc__node *e = bitwise_or(p);
      return e ? other_expr(p, star, e) : NULL;
    }
    if (!(a = nbc__parse_named_expression(p)) || !is(p, ":")) return a;
  }
  nbc__node *s = nbc__parse_new_node(p, NBC__N_SLICE, p->tok);
  if (!s) return NULL;
  advance(p);
  s->a = a;
  if (!is(p, ":") && !is(p, ",") && !is(p, "]") && !(s->b = nbc__parse_expression(p)))
    return NULL;
  if (accept(p, ":") && !is(p, ",") && !is(p, "]") && !(s->c = nbc__parse_expression(p)))
    return NULL;
  return s;
}

/* slices: slice | slice (',' slice)* [','] */
static nbc__node *slices(parser *p) {
  const nbc__token *t = p->tok;
  nbc__node *first = slice(p);
  if (!first || !is(p, ",")) return first;
  vec items = {0};
  if (!nbc__parse_push(p, &items, first)) return NULL;
  while (accept(p, ",") && !is(p, "]"))
    if (!nbc__parse_push(p, &items, slice(p))) return NULL;
  nbc__node *tup = nbc__parse_new_node(p, NBC__N_TUPLE, t);
  if (tup) tup->list = to_list(items);
  return tup;
}

/* primary: atom ('.' NAME | '(' arguments | '[' slices ']')* */
static nbc__node *primary(parser *p) {
  nbc__node *n = atom(p);
  int links = 0;
  while (n) {
    const nbc__token *t = p->tok;
    nbc__node *m;
    if (accept(p, ".")) {
      if (!is_kind(p, NBC__TOK_NAME)) {
        n = nbc__parse_syntax(p, p->tok, "expected an attribute name after '.', found %s",
                              nbc__parse_describe(p, p->tok));
        break;
      }
      m = nbc__parse_new_node(p, NBC__N_ATTR, p->tok);
      if (m && !(m->str = nbc__parse_tok_text(p, p->tok))) m = NULL;
      advance(p);
    } else if (accept(p, "(")) {
      m = nbc__parse_new_node(p, NBC__N_CALL, n->tok);
      if (m) m->a = n;
      if (m && !nbc__parse_arguments(p, m)) m = NULL;
    } else if (accept(p, "[")) {
      m = nbc__parse_new_node(p, NBC__N_SUBSCRIPT, t);
      if (m && !(m->b = slices(p))) m = NULL;
      if (m && !nbc__parse_expect(p, "]", "to close the subscript")) m = NULL;
    } else {
      break;
    }
    if (!m) {
      n = NULL;
      break;
    }
    m->a = n;
    n = m;
    links++;
    if (!nbc__parse_enter(p)) {
      n = NULL;
      break;
    }
  }
  p->depth -= links;
  return n;
}

/* power: ['await'] primary ['**' factor]
 * The `**` links being parsed, one in another's exponent, are counted in p->powers: more
 * than MAX_POWERS is an error. */
static nbc__node *factor(parser *p);
static nbc__node *power(parser *p) {
  if (is(p, "await")) {
    const nbc__token *t = p->tok;
    advance(p);
    nbc__node *e = primary(p);
    return e ? other_expr(p, t, e) : NULL;
  }
  nbc__node *base = primary(p);
  if (!base || !is(p, "**")) return base;
  const nbc__token *t = p->tok;
  advance(p);
  if (++p->powers > MAX_POWERS)
    return nbc__parse_syntax(p, t, "too many '**' in one expression (more than %d)",
                             MAX_POWERS);
  /* `a ** b ** c` recurses through factor: each link is one more level of nesting. */
  if (!nbc__parse_enter(p)) return NULL;
  nbc__node *exp = factor(p);
  p->depth--;
  p->powers--;
  return exp ? nbc__parse_new_binary(p, NBC__N_BINOP, t, NBC__OP_POW, base, exp) : NULL;
}

/* factor: ('+' | '-' | '~') factor | power */
static nbc__node *factor(parser *p) {
  const nbc__token *t = p->tok;
  nbc__op op;
  if (is(p, "-"))
    op = NBC__OP_NEG;
  else if (is(p, "+"))
    op = NBC__OP_POS;
  else if (is(p, "~"))
    op = NBC__OP_INVERT;
  else
    return power(p);
  advance(p);
  if (!nbc__parse_enter(p)) return NULL;
  nbc__node *a = factor(p);
  p->depth--;
  return a ? nbc__parse_new_binary(p, NBC__N_UNARY, t, op, a, NULL) : NULL;
}

/* ------------------------------------------------------------- binary operators --- */

static const binop_entry term_ops[] = {{"*", NBC__OP_MUL},       {"/", NBC__OP_DIV},
                                       {"//", NBC__OP_FLOORDIV}, {"%", NBC__OP_MOD},
                                       {"@", NBC__OP_MATMUL},    {NULL, NBC__OP_ADD}};
static const binop_entry sum_ops[] = {
    {"+", NBC__OP_ADD}, {"-", NBC__OP_SUB}, {NULL, NBC__OP_ADD}};
static const binop_entry shift_ops[] = {
    {"<<", NBC__OP_LSHIFT}, {">>", NBC__OP_RSHIFT}, {NULL, NBC__OP_ADD}};
static const binop_entry and_ops[] = {{"&", NBC__OP_BITAND}, {NULL, NBC__OP_ADD}};
static const binop_entry xor_ops[] = {{"^", NBC__OP_BITXOR}, {NULL, NBC__OP_ADD}};
static const binop_entry or_ops[] = {{"|", NBC__OP_BITOR}, {NULL, NBC__OP_ADD}};

/* A left-associative level: operand (op operand)*. Each link deepens the tree. */
static nbc__node *binary_level(parser *p, const binop_entry *ops,
                               nbc__node *(*operand)(parser *)) {
  nbc__node *n = operand(p);
  int links = 0;
  while (n) {
    const binop_entry *e = ops;
    while (e->text && !is(p, e->text))
      e++;
    if (!e->text) break;
    const nbc__token *t = p->tok;
    advance(p);
    if (!nbc__parse_enter(p)) {
      n = NULL;
      break;
    }
    links++;
    nbc__node *b = operand(p);
    n = b ? nbc__parse_new_binary(p, NBC__N_BINOP, t, e->op, n, b) : NULL;
  }
  p->depth -= links;
  return n;
}

/* term: factor (('*' | '/' | '//' | '%' | '@') factor)* */
static nbc__node *term(parser *p) {
  return binary_level(p, term_ops, factor);
}
/* sum: term (('+' | '-') term)* */
static nbc__node *sum(parser *p) {
  return binary_level(p, sum_ops, term);
}
/* shift_expr: sum (('<<' | '>>') sum)* */
static nbc__node *shift_expr(parser *p) {
  return binary_level(p, shift_ops, sum);
}
/* bitwise_and: shift_expr ('&' shift_expr)* */
static nbc__node *bitwise_and(parser *p) {
  return binary_level(p, and_ops, shift_expr);
}
/* bitwise_xor: bitwise_and ('^' bitwise_and)* */
static nbc__node *bitwise_xor(parser *p) {
  return binary_level(p, xor_ops, bitwise_and);
}
/* bitwise_or: bitwise_xor ('|' bitwise_xor)* */
static nbc__node *bitwise_or(parser *p) {
  return binary_level(p, or_ops, bitwise_xor);
}

/* A comparison operator at the current token (two tokens for 'not in' and 'is not'). */
static bool compare_op(parser *p, nbc__op *pop) {
  static const binop_entry ops[] = {{"==", NBC__OP_EQ}, {"!=", NBC__OP_NE}, {"<=", NBC__OP_LE},
                                    {">=", NBC__OP_GE}, {"<", NBC__OP_LT},  {">", NBC__OP_GT},
                                    {"in", NBC__OP_IN}, {NULL, NBC__OP_EQ}};
  if (is(p, "not") && nbc__tok_is(p->tok + 1, "in")) {
    advance(p);
    advance(p);
    *pop = NBC__OP_NOTIN;
    return true;
  }
  if (accept(p, "is")) {
    *pop = accept(p, "not") ? NBC__OP_ISNOT : NBC__OP_IS;
    return true;
  }
  for (const binop_entry *e = ops; e->text; e++)
    if (accept(p, e->text)) {
      *pop = e->op;
      return true;
    }
  return false;
}

/* comparison: bitwise_or (compare_op bitwise_or)* */
static nbc__node *comparison(parser *p) {
  nbc__node *a = bitwise_or(p);
  if (!a) return NULL;
  const nbc__token *t = p->tok;
  nbc__op op;
  if (!compare_op(p, &op)) return a;
  nbc__node *n = nbc__parse_new_node(p, NBC__N_COMPARE, t);
  if (!n) return NULL;
  n->a = a;
  vec rhs = {0};
  nbc__op *ops = NULL;
  int cap = 0;
  do {
    if (rhs.count == cap) {
      cap = cap ? cap * 2 : 2;
      nbc__op *grown = nbc__arena_alloc(p->ctx->arena, sizeof *grown * (size_t)cap);
      if (!grown) return nbc__parse_oom(p);
      if (rhs.count) memcpy(grown, ops, sizeof *grown * (size_t)rhs.count);
      ops = grown;
    }
    if (rhs.count == MAX_COMPARISONS)
      return nbc__parse_syntax(p, p->tok - 1, "too many chained comparisons (more than %d)",
                               MAX_COMPARISONS);
    ops[rhs.count] = op;
    if (!nbc__parse_push(p, &rhs, bitwise_or(p))) return NULL;
  } while (compare_op(p, &op));
  n->ops = ops;
  n->op = ops[0];
  n->list = to_list(rhs);
  return n;
}

/* inversion: 'not' inversion | comparison */
static nbc__node *inversion(parser *p) {
  if (!is(p, "not")) return comparison(p);
  const nbc__token *t = p->tok;
  advance(p);
  if (!nbc__parse_enter(p)) return NULL;
  nbc__node *a = inversion(p);
  p->depth--;
  return a ? nbc__parse_new_binary(p, NBC__N_UNARY, t, NBC__OP_NOT, a, NULL) : NULL;
}

/* A boolean level: operand (kw operand)*, left-associative BOOLOPs. */
static nbc__node *bool_level(parser *p, const char *kw, nbc__op op,
                             nbc__node *(*operand)(parser *)) {
  nbc__node *n = operand(p);
  int links = 0;
  while (n && is(p, kw)) {
    const nbc__token *t = p->tok;
    advance(p);
    if (!nbc__parse_enter(p)) {
      n = NULL;
      break;
    }
    links++;
    nbc__node *b = operand(p);
    n = b ? nbc__parse_new_binary(p, NBC__N_BOOLOP, t, op, n, b) : NULL;
  }
  p->depth -= links;
  return n;
}

/* conjunction: inversion ('and' inversion)* */
static nbc__node *conjunction(parser *p) {
  return bool_level(p, "and", NBC__OP_AND, inversion);
}
/* disjunction: conjunction ('or' conjunction)* */
static nbc__node *disjunction(parser *p) {
  return bool_level(p, "or", NBC__OP_OR, conjunction);
}

/* lambdef: 'lambda' [lambda_params] ':' expression
 * A FUNCDEF named "<lambda>" whose body returns the expression: closure.c makes `f = lambda`
 * a nested function; anywhere else infer.c refuses it. */
static nbc__node *lambdef(parser *p) {
  const nbc__token *t = p->tok;
  nbc__node *n = nbc__parse_new_node(p, NBC__N_FUNCDEF, t);
  if (!n) return NULL;
  n->str = "<lambda>";
  advance(p);
  vec ps = {0}, body = {0};
  if (!nbc__parse_params(p, &ps, &n->c, &n->b, ":")) return NULL;
  const nbc__token *at = p->tok;
  nbc__node *value = nbc__parse_expression(p);
  nbc__node *ret = value ? nbc__parse_new_node(p, NBC__N_RETURN, at) : NULL;
  if (!ret) return NULL;
  ret->a = value;
  if (!nbc__parse_push(p, &body, ret)) return NULL;
  n->params = to_list(ps);
  n->body = to_list(body);
  return n;
}

/* Whether t ends an expression for sure (what may follow a lone operand). */
static bool closes_expression(const nbc__token *t) {
  if (t->kind == NBC__TOK_NEWLINE) return true;
  if (t->kind != NBC__TOK_OP || t->len != 1) return false;
  char c = nbc__tok_start(t)[0];
  return c == ',' || c == ')' || c == ']' || c == '}' || c == ':' || c == '=' || c == ';';
}

/* expression: disjunction 'if' disjunction 'else' expression | disjunction | lambdef */
nbc__node *nbc__parse_expression(parser *p) {
  /* A lone name or number (an argument, an index, a target) skips the dozen levels of
   * operator rules: a quarter of the parser's time on typical kernels. */
  nbc__tok_kind k = p->tok->kind;
  if ((k == NBC__TOK_NAME || k == NBC__TOK_INT || k == NBC__TOK_FLOAT || k == NBC__TOK_IMAG) &&
      closes_expression(p->tok + 1))
    return atom(p);
  if (!nbc__parse_enter(p)) return NULL;
  nbc__node *n;
  if (is(p, "lambda")) {
    n = lambdef(p);
  } else {
    n = disjunction(p);
    if (n && is(p, "if")) {
      const nbc__token *t = p->tok;
      advance(p);
      nbc__node *cond = disjunction(p);
      nbc__node *orelse = NULL;
      if (cond && nbc__parse_expect(p, "else", "after the condition of an 'if' expression"))
        orelse = nbc__parse_expression(p);
      nbc__node *ifexp = orelse ? nbc__parse_new_node(p, NBC__N_IFEXP, t) : NULL;
      if (ifexp) {
        ifexp->a = cond;
        ifexp->b = n;
        ifexp->c = orelse;
      }
      n = ifexp;
    }
  }
  p->depth--;
  return n;
}

/* named_expression: NAME ':=' expression | expression   (':=' is an OTHER_EXPR) */
nbc__node *nbc__parse_named_expression(parser *p) {
  if (is_kind(p, NBC__TOK_NAME) && nbc__tok_is(p->tok + 1, ":=")) {
    const nbc__token *t = p->tok + 1;
    advance(p);
    advance(p);
    nbc__node *e = nbc__parse_expression(p);
    return e ? other_expr(p, t, e) : NULL;
  }
  return nbc__parse_expression(p);
}

/* star_expression: '*' bitwise_or | named_expression   (starred values are OTHER_EXPR) */
static nbc__node *star_expression(parser *p) {
  if (is(p, "*")) {
    const nbc__token *t = p->tok;
    advance(p);
    nbc__node *e = bitwise_or(p);
    return e ? other_expr(p, t, e) : NULL;
  }
  return nbc__parse_named_expression(p);
}

/* star_expressions: star_expression (',' star_expression)* [',']   (a TUPLE if any ',') */
nbc__node *nbc__parse_star_expressions(parser *p) {
  const nbc__token *t = p->tok;
  nbc__node *first = star_expression(p);
  if (!first || !is(p, ",")) return first;
  vec items = {0};
  if (!nbc__parse_push(p, &items, first)) return NULL;
  while (accept(p, ",") && nbc__parse_starts_expression(p->tok))
    if (!nbc__parse_push(p, &items, star_expression(p))) return NULL;
  nbc__node *tup = nbc__parse_new_node(p, NBC__N_TUPLE, t);
  if (tup) tup->list = to_list(items);
  return tup;
}

/* yield_expr: 'yield' 'from' expression | 'yield' [star_expressions]   (an OTHER_EXPR) */
nbc__node *nbc__parse_yield_expr(parser *p) {
  const nbc__token *t = p->tok;
  advance(p);
  nbc__node *e = NULL;
  if (accept(p, "from") || nbc__parse_starts_expression(p->tok))
    if (!(e = nbc__parse_star_expressions(p))) return NULL;
  return other_expr(p, t, e);
}

/* ---------------------------------------------------------------------- targets --- */

const char *nbc__parse_expr_description(const nbc__node *n) {
  switch (n->kind) {
  case NBC__N_CALL:
    return "function call";
  case NBC__N_INT:
  case NBC__N_FLOAT:
  case NBC__N_COMPLEX:
  case NBC__N_STR:
    return "literal";
  case NBC__N_BOOL:
    return n->value.i ? "True" : "False";
  case NBC__N_NONE:
    return "None";
  case NBC__N_COMPARE:
    return "comparison";
  case NBC__N_IFEXP:
    return "conditional expression";
  case NBC__N_DICT:
    return "dict literal";
  case NBC__N_OTHER_EXPR:
    if (nbc__tok_is(n->tok, "*")) return "starred expression";
    return "expression";
  default:
    return "expression";
  }
}

/* Checks that n can be assigned to: NAME, ATTR, SUBSCRIPT, or a TUPLE/LIST of those. */
bool nbc__parse_check_target(parser *p, const nbc__node *n, bool augmented) {
  switch (n->kind) {
  case NBC__N_NAME:
  case NBC__N_ATTR:
  case NBC__N_SUBSCRIPT:
    return true;
  case NBC__N_TUPLE:
  case NBC__N_LIST:
    if (augmented) {
      nbc__parse_syntax(p, nbc__parse_first_tok(n),
                        "'%s' is an illegal expression for augmented assignment",
                        n->kind == NBC__N_TUPLE ? "tuple" : "list");
      return false;
    }
    for (int i = 0; i < n->list.count; i++) {
      const nbc__node *item = n->list.items[i];
      if (item->kind == NBC__N_OTHER_EXPR && nbc__tok_is(item->tok, "*") && item->a) {
        if (!nbc__parse_check_target(p, item->a, false)) return false;
      } else if (!nbc__parse_check_target(p, item, false)) {
        return false;
      }
    }
    return true;
  default:
    if (augmented)
      nbc__parse_syntax(p, nbc__parse_first_tok(n),
                        "'%s' is an illegal expression for augmented assignment",
                        nbc__parse_expr_description(n));
    else
      nbc__parse_syntax(p, nbc__parse_first_tok(n), "cannot assign to %s",
                        nbc__parse_expr_description(n));
    return false;
  }
}

/* star_targets: target (',' target)* [',']   with target at the bitwise_or level, so that
 * the 'in' of a for statement is not taken for a comparison. */
nbc__node *nbc__parse_star_targets(parser *p) {
  const nbc__token *t = p->tok;
  nbc__node *first = is(p, "*") ? star_expression(p) : bitwise_or(p);
  if (!first || !is(p, ",")) return first;
  vec items = {0};
  if (!nbc__parse_push(p, &items, first)) return NULL;
  while (accept(p, ",") && !is(p, "in") && !is(p, "="))
    if (!nbc__parse_push(p, &items, is(p, "*") ? star_expression(p) : bitwise_or(p)))
      return NULL;
  nbc__node *tup = nbc__parse_new_node(p, NBC__N_TUPLE, t);
  if (tup) tup->list = to_list(items);
  return tup;
}
