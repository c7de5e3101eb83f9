/* parse.c — the parser: tokens to an AST, by recursive descent over Python 3's grammar.
 *
 * Each parse function is named after the grammar rule it recognises and carries the rule
 * as a comment (the rules are simplified from CPython's Grammar/python.gram). Every node
 * keeps a token for diagnostics: statements keep their first token, binary operators and
 * comparisons their operator, attributes the attribute's name, calls the callee's token,
 * subscripts their '['.
 *
 * Whole files must load — the CLI compiles one function of an ordinary module, with its
 * imports, constants, CASES tables and host code — so at module level everything Python
 * accepts parses, and what the kernel language cannot use becomes OTHER_STMT/OTHER_EXPR.
 * Inside a function body the parser is strict about statements: `with`, `class`, `del`,
 * `assert`, `raise`, `global`, `import`, `yield`… are reported here, at their keyword.
 * Expressions the kernel language lacks (lambda, comprehensions, sets, starred values,
 * f-strings, :=) still become OTHER_EXPR, LIST or DICT nodes and infer.c refuses them where
 * they are used, since only typing knows whether a value is actually needed. Bodies of
 * classes and `with` blocks at module level are host code, parsed leniently.
 *
 * Depth is bounded: the tokenizer allows 200 nested brackets and 100 indentation levels,
 * and here every nesting of expressions and every link of an operator or postfix chain
 * counts towards MAX_DEPTH, so no later recursive walk of the tree can exhaust the stack.
 */
#include <stdio.h>
#include <string.h>

#include "compiler/compiler.h"

enum { MAX_DEPTH = 1000 };

typedef struct parser {
  nbc__ctx *ctx;
  const nbc__token *tok;
  const nbc__token *first; /* the first token of the file */
  int depth;               /* nesting of the tree being built (see the file comment) */
  int in_func;             /* > 0 inside a function body */
  int in_loop;             /* > 0 inside a loop of the current function */
  int lenient;             /* > 0 inside host code (class or with bodies at module level) */
} parser;

/* A list being built; becomes an nbc__list. */
typedef struct vec {
  nbc__node **items;
  int count, cap;
} vec;

static nbc__node *expression(parser *p);
static nbc__node *star_expressions(parser *p);
static nbc__node *named_expression(parser *p);
static nbc__node *star_expression(parser *p);
static nbc__node *bitwise_or(parser *p);
static nbc__node *disjunction(parser *p);
static bool statement(parser *p, vec *out);
static bool block(parser *p, vec *out, const char *what, const nbc__token *kw);

/* -------------------------------------------------------------------------- helpers --- */

static bool failed(const parser *p) {
  return p->ctx->status != NBC_OK;
}

static void advance(parser *p) {
  if (p->tok->kind != NBC__TOK_EOF) p->tok++;
}

/* The quick rejections are inline: every grammar level asks about several operators for
 * every token. */
static inline bool is(const parser *p, const char *s) {
  const nbc__token *t = p->tok;
  return (t->kind == NBC__TOK_OP || t->kind == NBC__TOK_KEYWORD) && t->start[0] == s[0] &&
         nbc__tok_is(t, s);
}

static bool is_kind(const parser *p, nbc__tok_kind kind) {
  return p->tok->kind == kind;
}

static bool accept(parser *p, const char *s) {
  if (!is(p, s)) return false;
  advance(p);
  return true;
}

/* How a token is named in "found ..." messages. */
static const char *describe(parser *p, const nbc__token *t) {
  switch (t->kind) {
  case NBC__TOK_EOF:
    return "end of file";
  case NBC__TOK_NEWLINE:
    return "NEWLINE";
  case NBC__TOK_INDENT:
    return "indent";
  case NBC__TOK_DEDENT:
    return "end of block";
  case NBC__TOK_STRING:
    if (t->len > 24) return "string literal";
    break;
  default:
    break;
  }
  const char *s =
      nbc__arena_printf(p->ctx->arena, "'%.*s'", t->len > 24 ? 24 : t->len, t->start);
  return s ? s : "token";
}

/* The line of a token as the user's file numbers it (for "on line N" in messages). */
static int user_line(const nbc__token *t) {
  return t->line + (t->file && t->file->first_line > 0 ? t->file->first_line - 1 : 0);
}

static void *error_status(parser *p, nbc_status_t status, const nbc__token *t, const char *fmt,
                          va_list ap) {
  if (failed(p)) return NULL;
  char msg[512];
  vsnprintf(msg, sizeof msg, fmt, ap);
  int line = t->line, col = t->col;
  if (t->file && t->start == t->file->text + t->file->size && t->len == 0) {
    /* Nothing to show at the end of the file: point just after the last real token. */
    const nbc__token *q = t;
    while (q->line > 1 && q > p->first && q->kind != NBC__TOK_NAME && q->kind != NBC__TOK_OP &&
           q->kind != NBC__TOK_KEYWORD && q->kind != NBC__TOK_INT &&
           q->kind != NBC__TOK_FLOAT && q->kind != NBC__TOK_IMAG && q->kind != NBC__TOK_STRING)
      q--;
    if (q != t) {
      line = q->line;
      col = q->col + (q->kind == NBC__TOK_STRING ? 0 : q->len);
    }
  }
  nbc__diag_error(p->ctx, status, t->file, line, col, "%s", msg);
  return NULL;
}

/* A syntax error at token t; returns NULL so callers can `return syntax(...)`. */
static void *syntax(parser *p, const nbc__token *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  error_status(p, NBC_SYNTAX_ERROR, t, fmt, ap);
  va_end(ap);
  return NULL;
}

/* Valid Python the kernel language does not support. */
static void *unsupported(parser *p, const nbc__token *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  error_status(p, NBC_UNSUPPORTED, t, fmt, ap);
  va_end(ap);
  return NULL;
}

static void *oom(parser *p) {
  nbc__diag_oom(p->ctx);
  return NULL;
}

static bool expect(parser *p, const char *s, const char *context) {
  if (accept(p, s)) return true;
  syntax(p, p->tok, "expected '%s' %s, found %s", s, context, describe(p, p->tok));
  return false;
}

static bool enter(parser *p) {
  if (++p->depth > MAX_DEPTH) {
    syntax(p, p->tok, "too many nested expressions or statements (more than %d)", MAX_DEPTH);
    return false;
  }
  return true;
}

static nbc__node *new_node(parser *p, nbc__node_kind kind, const nbc__token *tok) {
  nbc__node *n = nbc__arena_alloc(p->ctx->arena, sizeof *n);
  if (!n) return oom(p);
  n->kind = kind;
  n->tok = tok;
  n->var = -1;
  return n;
}

static nbc__node *new_binary(parser *p, nbc__node_kind kind, const nbc__token *tok, nbc__op op,
                             nbc__node *a, nbc__node *b) {
  nbc__node *n = new_node(p, kind, tok);
  if (!n) return NULL;
  n->op = op;
  n->a = a;
  n->b = b;
  return n;
}

static bool push(parser *p, vec *v, nbc__node *n) {
  if (!n) return false;
  if (v->count == v->cap) {
    int cap = v->cap ? v->cap * 2 : 4;
    nbc__node **items = nbc__arena_alloc(p->ctx->arena, sizeof *items * (size_t)cap);
    if (!items) return oom(p), false;
    if (v->count) memcpy(items, v->items, sizeof *items * (size_t)v->count);
    v->items = items;
    v->cap = cap;
  }
  v->items[v->count++] = n;
  return true;
}

static nbc__list to_list(vec v) {
  nbc__list l = {v.items, v.count};
  return l;
}

static const char *tok_text(parser *p, const nbc__token *t) {
  const char *s = nbc__arena_strndup(p->ctx->arena, t->start, (size_t)t->len);
  if (!s) oom(p);
  return s;
}

/* Whether the token can begin an expression (to tell `x = 1,` from `x = 1, 2`). */
static bool starts_expression(const nbc__token *t) {
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
static const nbc__token *first_tok(const nbc__node *n) {
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
    if (!expect(p, "for", "in comprehension")) return false;
    do {
      if (!bitwise_or(p)) return false;
    } while (accept(p, ",") && !is(p, "in"));
    if (!expect(p, "in", "after comprehension target")) return false;
    if (!disjunction(p)) return false;
    while (accept(p, "if"))
      if (!disjunction(p)) return false;
  } while (is(p, "for") || is(p, "async"));
  return true;
}

static nbc__node *other_expr(parser *p, const nbc__token *tok, nbc__node *a) {
  nbc__node *n = new_node(p, NBC__N_OTHER_EXPR, tok);
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
    for (const char *q = p->tok->start; *q != '\'' && *q != '"'; q++) {
      bytes |= *q == 'b' || *q == 'B';
      any_f |= *q == 'f' || *q == 'F';
    }
    if ((bytes && any_text) || (!bytes && any_bytes))
      return syntax(p, p->tok, "cannot mix bytes and nonbytes literals");
    any_bytes |= bytes;
    any_text |= !bytes;
    nbc__buf_puts(&b, p->tok->str ? p->tok->str : "");
    advance(p);
  }
  if (b.oom) return oom(p);
  if (any_f) return other_expr(p, first, NULL);
  nbc__node *n = new_node(p, NBC__N_STR, first);
  if (n) n->str = b.data;
  return n;
}

/* group_or_tuple: '(' ')' | '(' yield_expr ')' | '(' named_expression comprehension ')'
 *               | '(' star_named_expression ')' | '(' star_named_expression ',' [...] ')' */
static nbc__node *paren_atom(parser *p) {
  const nbc__token *open = p->tok;
  advance(p);
  vec items = {0};
  if (accept(p, ")")) return new_node(p, NBC__N_TUPLE, open);
  if (is(p, "yield")) {
    const nbc__token *y = p->tok;
    advance(p);
    if (accept(p, "from") || starts_expression(p->tok))
      if (!star_expressions(p)) return NULL;
    if (!expect(p, ")", "to close '('")) return NULL;
    return other_expr(p, y, NULL);
  }
  nbc__node *first = star_expression(p);
  if (!first) return NULL;
  if (is(p, "for") || is(p, "async")) {
    if (!comprehension(p) || !expect(p, ")", "after generator expression")) return NULL;
    return other_expr(p, open, first);
  }
  if (!is(p, ",")) {
    if (!expect(p, ")", "to close '('")) return NULL;
    return first;
  }
  if (!push(p, &items, first)) return NULL;
  while (accept(p, ",") && !is(p, ")"))
    if (!push(p, &items, star_expression(p))) return NULL;
  if (!expect(p, ")", "in tuple")) return NULL;
  nbc__node *t = new_node(p, NBC__N_TUPLE, open);
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
      if (!comprehension(p) || !expect(p, "]", "after list comprehension")) return NULL;
      return other_expr(p, open, first);
    }
    if (!push(p, &items, first)) return NULL;
    while (accept(p, ",") && !is(p, "]"))
      if (!push(p, &items, star_expression(p))) return NULL;
  }
  if (!expect(p, "]", "in list")) return NULL;
  nbc__node *l = new_node(p, NBC__N_LIST, open);
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
  if (accept(p, "}")) return new_node(p, NBC__N_DICT, open);
  bool other = false, is_dict = true;
  nbc__node *first = NULL;
  if (accept(p, "**")) {
    other = true;
    if (!bitwise_or(p)) return NULL;
  } else {
    first = named_expression(p);
    if (!first) return NULL;
    if (accept(p, ":")) {
      nbc__node *v = expression(p);
      if (!v) return NULL;
      if (!push(p, &items, first) || !push(p, &items, v)) return NULL;
    } else {
      is_dict = false;
      other = true;
    }
    if (is(p, "for") || is(p, "async")) {
      if (!comprehension(p) || !expect(p, "}", "after comprehension")) return NULL;
      return other_expr(p, open, NULL);
    }
  }
  while (accept(p, ",") && !is(p, "}")) {
    if (is_dict && accept(p, "**")) {
      other = true;
      if (!bitwise_or(p)) return NULL;
      continue;
    }
    nbc__node *k = named_expression(p);
    if (!k) return NULL;
    if (is_dict) {
      if (!expect(p, ":", "after dictionary key")) return NULL;
      nbc__node *v = expression(p);
      if (!push(p, &items, k) || !push(p, &items, v)) return NULL;
    }
  }
  if (!expect(p, "}", is_dict ? "in dictionary" : "in set")) return NULL;
  if (other) return other_expr(p, open, NULL);
  nbc__node *d = new_node(p, NBC__N_DICT, open);
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
    n = new_node(p, NBC__N_NAME, t);
    if (n && !(n->str = tok_text(p, t))) return NULL;
    return n;
  case NBC__TOK_INT:
    if (t->huge) {
      if (p->in_func && !p->lenient)
        return unsupported(p, t, "integer literal too large for 64 bits");
      advance(p);
      return other_expr(p, t, NULL);
    }
    advance(p);
    n = new_node(p, NBC__N_INT, t);
    if (n) {
      n->value.i = t->value.i;
      n->big = t->big;
    }
    return n;
  case NBC__TOK_FLOAT:
  case NBC__TOK_IMAG:
    advance(p);
    n = new_node(p, t->kind == NBC__TOK_FLOAT ? NBC__N_FLOAT : NBC__N_COMPLEX, t);
    if (n) n->value.f = t->value.f;
    return n;
  case NBC__TOK_STRING:
    return strings(p);
  default:
    break;
  }
  if (is(p, "True") || is(p, "False")) {
    advance(p);
    n = new_node(p, NBC__N_BOOL, t);
    if (n) n->value.i = nbc__tok_is(t, "True");
    return n;
  }
  if (accept(p, "None")) return new_node(p, NBC__N_NONE, t);
  if (is(p, "(")) return paren_atom(p);
  if (is(p, "[")) return list_atom(p);
  if (is(p, "{")) return dict_atom(p);
  if (accept(p, "...")) return other_expr(p, t, NULL);
  if (t->kind == NBC__TOK_INDENT) return syntax(p, t, "unexpected indent");
  return syntax(p, t, "expected an expression, found %s", describe(p, t));
}

/* --------------------------------------------------------------------- primaries --- */

/* arguments: (arg (',' arg)* [','])? ')'
 * arg: '*' expression | '**' expression | NAME '=' expression | named_expression
 *    | named_expression comprehension   (only argument: a generator expression)
 * Positional arguments come first in the CALL's list, then the KEYWORD nodes; *args and
 * **kwargs become OTHER_EXPR. */
static bool arguments(parser *p, nbc__node *call) {
  vec pos = {0}, kws = {0};
  while (!is(p, ")")) {
    const nbc__token *t = p->tok;
    if (accept(p, "*") || accept(p, "**")) {
      nbc__node *e = expression(p);
      if (!e) return false;
      if (!push(p, nbc__tok_is(t, "*") ? &pos : &kws, other_expr(p, t, e))) return false;
    } else if (t->kind == NBC__TOK_NAME && nbc__tok_is(t + 1, "=")) {
      advance(p);
      advance(p);
      nbc__node *kw = new_node(p, NBC__N_KEYWORD, t);
      if (!kw || !(kw->str = tok_text(p, t)) || !(kw->a = expression(p))) return false;
      for (int i = 0; i < kws.count; i++)
        if (kws.items[i]->kind == NBC__N_KEYWORD && strcmp(kws.items[i]->str, kw->str) == 0)
          return syntax(p, t, "keyword argument repeated: %s", kw->str), false;
      if (!push(p, &kws, kw)) return false;
    } else {
      nbc__node *e = named_expression(p);
      if (!e) return false;
      if (is(p, "for") || is(p, "async")) {
        if (!comprehension(p)) return false;
        e = other_expr(p, t, e);
      }
      if (kws.count > 0) {
        bool unpack = kws.items[kws.count - 1]->kind == NBC__N_OTHER_EXPR;
        return syntax(p, first_tok(e),
                      unpack ? "positional argument follows keyword argument unpacking"
                             : "positional argument follows keyword argument"),
               false;
      }
      if (!push(p, &pos, e)) return false;
    }
    if (!accept(p, ",")) break;
  }
  if (!is(p, ")")) {
    syntax(p, p->tok, "expected ',' or ')' in call arguments, found %s", describe(p, p->tok));
    return false;
  }
  advance(p);
  for (int i = 0; i < kws.count; i++)
    if (!push(p, &pos, kws.items[i])) return false;
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
    if (!(a = named_expression(p)) || !is(p, ":")) return a;
  }
  nbc__node *s = new_node(p, NBC__N_SLICE, p->tok);
  if (!s) return NULL;
  advance(p);
  s->a = a;
  if (!is(p, ":") && !is(p, ",") && !is(p, "]") && !(s->b = expression(p))) return NULL;
  if (accept(p, ":") && !is(p, ",") && !is(p, "]") && !(s->c = expression(p))) return NULL;
  return s;
}

/* slices: slice | slice (',' slice)* [','] */
static nbc__node *slices(parser *p) {
  const nbc__token *t = p->tok;
  nbc__node *first = slice(p);
  if (!first || !is(p, ",")) return first;
  vec items = {0};
  if (!push(p, &items, first)) return NULL;
  while (accept(p, ",") && !is(p, "]"))
    if (!push(p, &items, slice(p))) return NULL;
  nbc__node *tup = new_node(p, NBC__N_TUPLE, t);
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
        n = syntax(p, p->tok, "expected an attribute name after '.', found %s",
                   describe(p, p->tok));
        break;
      }
      m = new_node(p, NBC__N_ATTR, p->tok);
      if (m && !(m->str = tok_text(p, p->tok))) m = NULL;
      advance(p);
    } else if (accept(p, "(")) {
      m = new_node(p, NBC__N_CALL, n->tok);
      if (m) m->a = n;
      if (m && !arguments(p, m)) m = NULL;
    } else if (accept(p, "[")) {
      m = new_node(p, NBC__N_SUBSCRIPT, t);
      if (m && !(m->b = slices(p))) m = NULL;
      if (m && !expect(p, "]", "to close the subscript")) m = NULL;
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
    if (!enter(p)) {
      n = NULL;
      break;
    }
  }
  p->depth -= links;
  return n;
}

/* power: ['await'] primary ['**' factor] */
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
  nbc__node *exp = factor(p);
  return exp ? new_binary(p, NBC__N_BINOP, t, NBC__OP_POW, base, exp) : NULL;
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
  if (!enter(p)) return NULL;
  nbc__node *a = factor(p);
  p->depth--;
  return a ? new_binary(p, NBC__N_UNARY, t, op, a, NULL) : NULL;
}

/* ------------------------------------------------------------- binary operators --- */

typedef struct binop_entry {
  const char *text;
  nbc__op op;
} binop_entry;

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
    if (!enter(p)) {
      n = NULL;
      break;
    }
    links++;
    nbc__node *b = operand(p);
    n = b ? new_binary(p, NBC__N_BINOP, t, e->op, n, b) : NULL;
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
  nbc__node *n = new_node(p, NBC__N_COMPARE, t);
  if (!n) return NULL;
  n->a = a;
  vec rhs = {0};
  nbc__op *ops = NULL;
  int cap = 0;
  do {
    if (rhs.count == cap) {
      cap = cap ? cap * 2 : 2;
      nbc__op *grown = nbc__arena_alloc(p->ctx->arena, sizeof *grown * (size_t)cap);
      if (!grown) return oom(p);
      if (rhs.count) memcpy(grown, ops, sizeof *grown * (size_t)rhs.count);
      ops = grown;
    }
    ops[rhs.count] = op;
    if (!push(p, &rhs, bitwise_or(p))) return NULL;
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
  if (!enter(p)) return NULL;
  nbc__node *a = inversion(p);
  p->depth--;
  return a ? new_binary(p, NBC__N_UNARY, t, NBC__OP_NOT, a, NULL) : NULL;
}

/* A boolean level: operand (kw operand)*, left-associative BOOLOPs. */
static nbc__node *bool_level(parser *p, const char *kw, nbc__op op,
                             nbc__node *(*operand)(parser *)) {
  nbc__node *n = operand(p);
  int links = 0;
  while (n && is(p, kw)) {
    const nbc__token *t = p->tok;
    advance(p);
    if (!enter(p)) {
      n = NULL;
      break;
    }
    links++;
    nbc__node *b = operand(p);
    n = b ? new_binary(p, NBC__N_BOOLOP, t, op, n, b) : NULL;
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

/* lambdef: 'lambda' [lambda_params] ':' expression   (an OTHER_EXPR) */
static nbc__node *lambdef(parser *p) {
  const nbc__token *t = p->tok;
  advance(p);
  while (!is(p, ":")) {
    if (accept(p, "*") || accept(p, "**") || accept(p, "/")) {
      if (is_kind(p, NBC__TOK_NAME)) advance(p);
    } else if (is_kind(p, NBC__TOK_NAME)) {
      advance(p);
      if (accept(p, "=") && !expression(p)) return NULL;
    } else {
      return syntax(p, p->tok, "expected a parameter name or ':' in lambda, found %s",
                    describe(p, p->tok));
    }
    if (!accept(p, ",")) break;
  }
  if (!expect(p, ":", "after lambda parameters")) return NULL;
  nbc__node *body = expression(p);
  return body ? other_expr(p, t, body) : NULL;
}

/* Whether t ends an expression for sure (what may follow a lone operand). */
static bool closes_expression(const nbc__token *t) {
  if (t->kind == NBC__TOK_NEWLINE) return true;
  if (t->kind != NBC__TOK_OP || t->len != 1) return false;
  char c = t->start[0];
  return c == ',' || c == ')' || c == ']' || c == '}' || c == ':' || c == '=' || c == ';';
}

/* expression: disjunction 'if' disjunction 'else' expression | disjunction | lambdef */
static nbc__node *expression(parser *p) {
  /* A lone name or number (an argument, an index, a target) skips the dozen levels of
   * operator rules: a quarter of the parser's time on typical kernels. */
  nbc__tok_kind k = p->tok->kind;
  if ((k == NBC__TOK_NAME || k == NBC__TOK_INT || k == NBC__TOK_FLOAT || k == NBC__TOK_IMAG) &&
      closes_expression(p->tok + 1))
    return atom(p);
  if (!enter(p)) return NULL;
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
      if (cond && expect(p, "else", "after the condition of an 'if' expression"))
        orelse = expression(p);
      nbc__node *ifexp = orelse ? new_node(p, NBC__N_IFEXP, t) : NULL;
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
static nbc__node *named_expression(parser *p) {
  if (is_kind(p, NBC__TOK_NAME) && nbc__tok_is(p->tok + 1, ":=")) {
    const nbc__token *t = p->tok + 1;
    advance(p);
    advance(p);
    nbc__node *e = expression(p);
    return e ? other_expr(p, t, e) : NULL;
  }
  return expression(p);
}

/* star_expression: '*' bitwise_or | named_expression   (starred values are OTHER_EXPR) */
static nbc__node *star_expression(parser *p) {
  if (is(p, "*")) {
    const nbc__token *t = p->tok;
    advance(p);
    nbc__node *e = bitwise_or(p);
    return e ? other_expr(p, t, e) : NULL;
  }
  return named_expression(p);
}

/* star_expressions: star_expression (',' star_expression)* [',']   (a TUPLE if any ',') */
static nbc__node *star_expressions(parser *p) {
  const nbc__token *t = p->tok;
  nbc__node *first = star_expression(p);
  if (!first || !is(p, ",")) return first;
  vec items = {0};
  if (!push(p, &items, first)) return NULL;
  while (accept(p, ",") && starts_expression(p->tok))
    if (!push(p, &items, star_expression(p))) return NULL;
  nbc__node *tup = new_node(p, NBC__N_TUPLE, t);
  if (tup) tup->list = to_list(items);
  return tup;
}

/* yield_expr: 'yield' 'from' expression | 'yield' [star_expressions]   (an OTHER_EXPR) */
static nbc__node *yield_expr(parser *p) {
  const nbc__token *t = p->tok;
  advance(p);
  nbc__node *e = NULL;
  if (accept(p, "from") || starts_expression(p->tok))
    if (!(e = star_expressions(p))) return NULL;
  return other_expr(p, t, e);
}

/* ---------------------------------------------------------------------- targets --- */

static const char *expr_description(const nbc__node *n) {
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
static bool check_target(parser *p, const nbc__node *n, bool augmented) {
  switch (n->kind) {
  case NBC__N_NAME:
  case NBC__N_ATTR:
  case NBC__N_SUBSCRIPT:
    return true;
  case NBC__N_TUPLE:
  case NBC__N_LIST:
    if (augmented) {
      syntax(p, first_tok(n), "'%s' is an illegal expression for augmented assignment",
             n->kind == NBC__N_TUPLE ? "tuple" : "list");
      return false;
    }
    for (int i = 0; i < n->list.count; i++) {
      const nbc__node *item = n->list.items[i];
      if (item->kind == NBC__N_OTHER_EXPR && nbc__tok_is(item->tok, "*") && item->a) {
        if (!check_target(p, item->a, false)) return false;
      } else if (!check_target(p, item, false)) {
        return false;
      }
    }
    return true;
  default:
    if (augmented)
      syntax(p, first_tok(n), "'%s' is an illegal expression for augmented assignment",
             expr_description(n));
    else
      syntax(p, first_tok(n), "cannot assign to %s", expr_description(n));
    return false;
  }
}

/* star_targets: target (',' target)* [',']   with target at the bitwise_or level, so that
 * the 'in' of a for statement is not taken for a comparison. */
static nbc__node *star_targets(parser *p) {
  const nbc__token *t = p->tok;
  nbc__node *first = is(p, "*") ? star_expression(p) : bitwise_or(p);
  if (!first || !is(p, ",")) return first;
  vec items = {0};
  if (!push(p, &items, first)) return NULL;
  while (accept(p, ",") && !is(p, "in") && !is(p, "="))
    if (!push(p, &items, is(p, "*") ? star_expression(p) : bitwise_or(p))) return NULL;
  nbc__node *tup = new_node(p, NBC__N_TUPLE, t);
  if (tup) tup->list = to_list(items);
  return tup;
}

/* ------------------------------------------------------------- simple statements --- */

static const binop_entry aug_ops[] = {
    {"+=", NBC__OP_ADD},    {"-=", NBC__OP_SUB},       {"*=", NBC__OP_MUL},
    {"/=", NBC__OP_DIV},    {"//=", NBC__OP_FLOORDIV}, {"%=", NBC__OP_MOD},
    {"**=", NBC__OP_POW},   {"<<=", NBC__OP_LSHIFT},   {">>=", NBC__OP_RSHIFT},
    {"&=", NBC__OP_BITAND}, {"|=", NBC__OP_BITOR},     {"^=", NBC__OP_BITXOR},
    {"@=", NBC__OP_MATMUL}, {NULL, NBC__OP_ADD}};

/* The right-hand side of an assignment: yield_expr | star_expressions */
static nbc__node *assignment_value(parser *p) {
  return is(p, "yield") ? yield_expr(p) : star_expressions(p);
}

/* assignment: star_expressions ('=' (yield_expr | star_expressions))+
 *           | single_target augassign (yield_expr | star_expressions)
 *           | single_target ':' expression ['=' (yield_expr | star_expressions)]
 * expression_stmt: star_expressions */
static nbc__node *expression_stmt(parser *p) {
  const nbc__token *start = p->tok;
  nbc__node *first = is(p, "yield") ? yield_expr(p) : star_expressions(p);
  if (!first) return NULL;
  if (is(p, ":")) { /* annotated assignment: the annotation is checked and dropped */
    if (first->kind != NBC__N_NAME && first->kind != NBC__N_ATTR &&
        first->kind != NBC__N_SUBSCRIPT)
      return syntax(p, first_tok(first), "only single target (not %s) can be annotated",
                    first->kind == NBC__N_TUPLE ? "tuple" : expr_description(first));
    advance(p);
    if (!expression(p)) return NULL;
    if (!accept(p, "=")) return new_node(p, NBC__N_PASS, start);
    nbc__node *n = new_node(p, NBC__N_ASSIGN, start);
    vec targets = {0};
    if (!n || !push(p, &targets, first) || !(n->a = assignment_value(p))) return NULL;
    n->list = to_list(targets);
    return n;
  }
  for (const binop_entry *e = aug_ops; e->text; e++) {
    if (!is(p, e->text)) continue;
    if (!check_target(p, first, true)) return NULL;
    advance(p);
    nbc__node *n = new_node(p, NBC__N_AUGASSIGN, start);
    if (!n || !(n->b = assignment_value(p))) return NULL;
    n->a = first;
    n->op = e->op;
    return n;
  }
  if (!is(p, "=")) {
    nbc__node *n = new_node(p, NBC__N_EXPR_STMT, start);
    if (n) n->a = first;
    return n;
  }
  vec targets = {0};
  nbc__node *value = first;
  while (accept(p, "=")) {
    if (!check_target(p, value, false) || !push(p, &targets, value)) return NULL;
    if (!(value = assignment_value(p))) return NULL;
  }
  nbc__node *n = new_node(p, NBC__N_ASSIGN, start);
  if (!n) return NULL;
  n->list = to_list(targets);
  n->a = value;
  return n;
}

/* dotted_name: NAME ('.' NAME)* */
static const char *dotted_name(parser *p, const char *context) {
  nbc__buf b;
  nbc__buf_init(&b, p->ctx->arena);
  for (;;) {
    if (!is_kind(p, NBC__TOK_NAME))
      return syntax(p, p->tok, "expected a module name %s, found %s", context,
                    describe(p, p->tok));
    nbc__buf_append(&b, p->tok->start, (size_t)p->tok->len);
    advance(p);
    if (!is(p, ".")) break;
    advance(p);
    nbc__buf_puts(&b, ".");
  }
  return b.oom ? oom(p) : b.data;
}

/* An imported name with its optional alias: (dotted_name | NAME) ['as' NAME] */
static nbc__node *import_alias(parser *p, bool dotted) {
  const nbc__token *t = p->tok;
  nbc__node *n = new_node(p, NBC__N_NAME, t);
  if (!n) return NULL;
  if (dotted) {
    if (!(n->str = dotted_name(p, "after 'import'"))) return NULL;
  } else {
    if (!is_kind(p, NBC__TOK_NAME))
      return syntax(p, t, "expected a name to import, found %s", describe(p, t));
    if (!(n->str = tok_text(p, t))) return NULL;
    advance(p);
  }
  if (accept(p, "as")) {
    if (!is_kind(p, NBC__TOK_NAME))
      return syntax(p, p->tok, "expected a name after 'as', found %s", describe(p, p->tok));
    if (!(n->alias = tok_text(p, p->tok))) return NULL;
    advance(p);
  }
  return n;
}

/* import_name: 'import' dotted_as_names
 * dotted_as_names: dotted_name ['as' NAME] (',' dotted_name ['as' NAME])* */
static nbc__node *import_name(parser *p) {
  nbc__node *n = new_node(p, NBC__N_IMPORT, p->tok);
  if (!n) return NULL;
  advance(p);
  vec names = {0};
  do {
    if (!push(p, &names, import_alias(p, true))) return NULL;
  } while (accept(p, ","));
  n->list = to_list(names);
  n->str = names.items[0]->str;
  return n;
}

/* import_from: 'from' ('.' | '...')* dotted_name 'import' import_from_targets
 *            | 'from' ('.' | '...')+ 'import' import_from_targets
 * import_from_targets: '(' names [','] ')' | names | '*' */
static nbc__node *import_from(parser *p) {
  nbc__node *n = new_node(p, NBC__N_IMPORT_FROM, p->tok);
  if (!n) return NULL;
  advance(p);
  nbc__buf b;
  nbc__buf_init(&b, p->ctx->arena);
  while (is(p, ".") || is(p, "...")) {
    nbc__buf_append(&b, p->tok->start, (size_t)p->tok->len);
    advance(p);
  }
  if (!is(p, "import") || b.len == 0) {
    const char *mod = dotted_name(p, "after 'from'");
    if (!mod) return NULL;
    nbc__buf_puts(&b, mod);
  }
  if (b.oom) return oom(p);
  n->str = b.data;
  if (!expect(p, "import", "after the module name")) return NULL;
  vec names = {0};
  if (is(p, "*")) {
    nbc__node *star = new_node(p, NBC__N_NAME, p->tok);
    if (!star || !(star->str = tok_text(p, p->tok)) || !push(p, &names, star)) return NULL;
    advance(p);
  } else {
    bool paren = accept(p, "(");
    do {
      if (paren && is(p, ")")) break;
      if (!push(p, &names, import_alias(p, false))) return NULL;
    } while (accept(p, ","));
    if (paren && !expect(p, ")", "to close the import list")) return NULL;
    if (names.count == 0) return syntax(p, p->tok, "expected a name to import, found ')'");
  }
  n->list = to_list(names);
  return n;
}

/* A statement the kernel language has no use for: OTHER_STMT at module level and in host
 * code, an error in a function body. The rest of the statement is skipped (brackets are
 * balanced by the tokenizer, so the next NEWLINE at this level ends it). */
static nbc__node *other_simple_stmt(parser *p) {
  const nbc__token *t = p->tok;
  if (p->in_func && !p->lenient)
    return unsupported(p, t, "unsupported statement: '%.*s'", t->len, t->start);
  nbc__node *n = new_node(p, NBC__N_OTHER_STMT, t);
  if (!n) return NULL;
  advance(p);
  int depth = 0;
  while (!is_kind(p, NBC__TOK_EOF)) {
    if (depth == 0 && (is_kind(p, NBC__TOK_NEWLINE) || is(p, ";"))) break;
    if (is(p, "(") || is(p, "[") || is(p, "{")) depth++;
    if (is(p, ")") || is(p, "]") || is(p, "}")) depth--;
    advance(p);
  }
  return n;
}

/* simple_stmt: assignment | star_expressions | 'return' [star_expressions] | 'pass'
 *            | 'break' | 'continue' | import_name | import_from | global_stmt
 *            | nonlocal_stmt | del_stmt | assert_stmt | raise_stmt | yield_stmt */
static nbc__node *simple_stmt(parser *p) {
  const nbc__token *t = p->tok;
  if (accept(p, "pass")) return new_node(p, NBC__N_PASS, t);
  if (is(p, "break") || is(p, "continue")) {
    if (!p->in_loop) return syntax(p, t, "'%.*s' outside loop", t->len, t->start);
    advance(p);
    return new_node(p, nbc__tok_is(t, "break") ? NBC__N_BREAK : NBC__N_CONTINUE, t);
  }
  if (is(p, "return")) {
    if (!p->in_func) return syntax(p, t, "'return' outside function");
    advance(p);
    nbc__node *n = new_node(p, NBC__N_RETURN, t);
    if (n && starts_expression(p->tok) && !(n->a = star_expressions(p))) return NULL;
    return n;
  }
  if (is(p, "import") || is(p, "from")) {
    if (p->in_func && !p->lenient)
      return unsupported(p, t, "unsupported statement: '%.*s'", t->len, t->start);
    return is(p, "import") ? import_name(p) : import_from(p);
  }
  if (is(p, "global") || is(p, "nonlocal") || is(p, "del") || is(p, "assert") || is(p, "raise"))
    return other_simple_stmt(p);
  if (is(p, "yield") && p->in_func && !p->lenient)
    return unsupported(p, t, "unsupported statement: 'yield'");
  if (t->kind == NBC__TOK_KEYWORD && !starts_expression(t) && !is(p, "yield"))
    return syntax(p, t, "invalid syntax: unexpected %s", describe(p, t));
  if (t->kind == NBC__TOK_OP && !starts_expression(t))
    return syntax(p, t, "invalid syntax: unexpected %s", describe(p, t));
  if (t->kind == NBC__TOK_INDENT) return syntax(p, t, "unexpected indent");
  return expression_stmt(p);
}

/* simple_stmts: simple_stmt (';' simple_stmt)* [';'] NEWLINE */
static bool simple_stmts(parser *p, vec *out) {
  for (;;) {
    if (!push(p, out, simple_stmt(p))) return false;
    if (!accept(p, ";") || is_kind(p, NBC__TOK_NEWLINE)) break;
  }
  if (is_kind(p, NBC__TOK_NEWLINE)) {
    advance(p);
    return true;
  }
  if (is(p, "=") || is(p, ":"))
    syntax(p, p->tok, "invalid syntax: unexpected %s", describe(p, p->tok));
  else
    syntax(p, p->tok, "expected NEWLINE after the statement, found %s", describe(p, p->tok));
  return false;
}

/* ----------------------------------------------------------- compound statements --- */

/* block: NEWLINE INDENT statement+ DEDENT | simple_stmts
 * `what` names the statement for "expected an indented block after ...". */
static bool block(parser *p, vec *out, const char *what, const nbc__token *kw) {
  if (!is_kind(p, NBC__TOK_NEWLINE)) {
    if (is_kind(p, NBC__TOK_EOF))
      return syntax(p, p->tok, "expected an indented block after %s on line %d", what,
                    user_line(kw)),
             false;
    return simple_stmts(p, out);
  }
  advance(p);
  if (!is_kind(p, NBC__TOK_INDENT))
    return syntax(p, p->tok, "expected an indented block after %s on line %d", what,
                  user_line(kw)),
           false;
  advance(p);
  if (!enter(p)) return false;
  while (!is_kind(p, NBC__TOK_DEDENT) && !is_kind(p, NBC__TOK_EOF))
    if (!statement(p, out)) return false;
  p->depth--;
  if (is_kind(p, NBC__TOK_DEDENT)) advance(p);
  return true;
}

/* The ':' that opens a block. */
static bool colon(parser *p, const char *after) {
  if (accept(p, ":")) return true;
  syntax(p, p->tok, "expected ':' after %s, found %s", after, describe(p, p->tok));
  return false;
}

/* else_block: 'else' ':' block */
static bool else_block(parser *p, vec *out) {
  const nbc__token *kw = p->tok;
  advance(p);
  return colon(p, "'else'") && block(p, out, "'else' statement", kw);
}

/* if_stmt: 'if' named_expression ':' block elif_stmt | 'if' named_expression ':' block
 *          [else_block]
 * elif_stmt: 'elif' named_expression ':' block (elif_stmt | [else_block]) */
static nbc__node *if_stmt(parser *p) {
  const nbc__token *kw = p->tok;
  bool elif = nbc__tok_is(kw, "elif");
  nbc__node *n = new_node(p, NBC__N_IF, kw);
  if (!n) return NULL;
  advance(p);
  if (!(n->a = named_expression(p))) return NULL;
  if (!colon(p, elif ? "'elif' condition" : "'if' condition")) return NULL;
  vec body = {0}, orelse = {0};
  if (!block(p, &body, elif ? "'elif' statement" : "'if' statement", kw)) return NULL;
  n->body = to_list(body);
  if (is(p, "elif")) {
    if (!enter(p)) return NULL;
    bool ok = push(p, &orelse, if_stmt(p));
    p->depth--;
    if (!ok) return NULL;
  } else if (is(p, "else")) {
    if (!else_block(p, &orelse)) return NULL;
  }
  n->orelse = to_list(orelse);
  return n;
}

/* while_stmt: 'while' named_expression ':' block [else_block] */
static nbc__node *while_stmt(parser *p) {
  const nbc__token *kw = p->tok;
  nbc__node *n = new_node(p, NBC__N_WHILE, kw);
  if (!n) return NULL;
  advance(p);
  if (!(n->a = named_expression(p)) || !colon(p, "'while' condition")) return NULL;
  vec body = {0}, orelse = {0};
  p->in_loop++;
  bool ok = block(p, &body, "'while' statement", kw);
  p->in_loop--;
  if (!ok || (is(p, "else") && !else_block(p, &orelse))) return NULL;
  n->body = to_list(body);
  n->orelse = to_list(orelse);
  return n;
}

/* for_stmt: 'for' star_targets 'in' star_expressions ':' block [else_block] */
static nbc__node *for_stmt(parser *p) {
  const nbc__token *kw = p->tok;
  nbc__node *n = new_node(p, NBC__N_FOR, kw);
  if (!n) return NULL;
  advance(p);
  if (!(n->a = star_targets(p)) || !check_target(p, n->a, false)) return NULL;
  if (!expect(p, "in", "after the 'for' target")) return NULL;
  if (!(n->b = star_expressions(p)) || !colon(p, "'for' clause")) return NULL;
  vec body = {0}, orelse = {0};
  p->in_loop++;
  bool ok = block(p, &body, "'for' statement", kw);
  p->in_loop--;
  if (!ok || (is(p, "else") && !else_block(p, &orelse))) return NULL;
  n->body = to_list(body);
  n->orelse = to_list(orelse);
  return n;
}

/* try_stmt: 'try' ':' block finally_block | 'try' ':' block except_block+ [else_block]
 *           [finally_block]
 * except_block: 'except' ['*'] [expression ['as' NAME]] ':' block
 * finally_block: 'finally' ':' block
 * The handlers', else and finally bodies are concatenated into orelse. */
static nbc__node *try_stmt(parser *p) {
  const nbc__token *kw = p->tok;
  nbc__node *n = new_node(p, NBC__N_TRY, kw);
  if (!n) return NULL;
  advance(p);
  vec body = {0}, orelse = {0};
  if (!colon(p, "'try'") || !block(p, &body, "'try' statement", kw)) return NULL;
  bool handlers = false;
  while (is(p, "except")) {
    const nbc__token *ex = p->tok;
    advance(p);
    accept(p, "*");
    if (!is(p, ":")) {
      if (!expression(p)) return NULL;
      if (accept(p, "as")) {
        if (!is_kind(p, NBC__TOK_NAME))
          return syntax(p, p->tok, "expected a name after 'as', found %s", describe(p, p->tok));
        advance(p);
      } else if (is(p, ",")) {
        return syntax(p, p->tok, "multiple exception types must be parenthesized");
      }
    }
    if (!colon(p, "'except' clause") || !block(p, &orelse, "'except' statement", ex))
      return NULL;
    handlers = true;
  }
  if (handlers && is(p, "else") && !else_block(p, &orelse)) return NULL;
  if (is(p, "finally")) {
    const nbc__token *fin = p->tok;
    advance(p);
    if (!colon(p, "'finally'") || !block(p, &orelse, "'finally' statement", fin)) return NULL;
  } else if (!handlers) {
    return syntax(p, p->tok, "expected 'except' or 'finally' block, found %s",
                  describe(p, p->tok));
  }
  n->body = to_list(body);
  n->orelse = to_list(orelse);
  return n;
}

/* params: param (',' param)* [',']
 * param: NAME [':' expression]     (defaults, '*', '**' are refused; '/' is accepted) */
static bool params(parser *p, vec *out) {
  while (!is(p, ")")) {
    const nbc__token *t = p->tok;
    bool strict = !p->lenient;
    if (accept(p, "/")) {
      /* Positional-only marker: every parameter of a kernel is positional anyway. */
    } else if (is(p, "*") || is(p, "**")) {
      bool twice = is(p, "**");
      advance(p);
      if (strict) {
        if (twice)
          return unsupported(p, t, "**kwargs parameters are not supported in CUDA kernels"),
                 false;
        if (is(p, ",") || is(p, ")"))
          return unsupported(p, t, "keyword-only parameters are not supported in CUDA kernels"),
                 false;
        return unsupported(p, t, "*args parameters are not supported in CUDA kernels"), false;
      }
      if (is_kind(p, NBC__TOK_NAME)) advance(p);
      if (accept(p, ":") && !expression(p)) return false;
    } else if (is_kind(p, NBC__TOK_NAME)) {
      nbc__node *n = new_node(p, NBC__N_NAME, t);
      if (!n || !(n->str = tok_text(p, t))) return false;
      for (int i = 0; i < out->count; i++)
        if (strcmp(out->items[i]->str, n->str) == 0)
          return syntax(p, t, "duplicate argument '%s' in function definition", n->str), false;
      advance(p);
      if (accept(p, ":") && !expression(p)) return false;
      if (is(p, "=")) {
        if (strict)
          return unsupported(p, p->tok,
                             "default argument values are not supported in CUDA kernels"),
                 false;
        advance(p);
        if (!expression(p)) return false;
      }
      if (!push(p, out, n)) return false;
    } else {
      return syntax(p, t, "expected a parameter name, found %s", describe(p, t)), false;
    }
    if (!accept(p, ",")) break;
  }
  if (!is(p, ")"))
    return syntax(p, p->tok, "expected ',' or ')' in the parameter list, found %s",
                  describe(p, p->tok)),
           false;
  advance(p);
  return true;
}

/* function_def: decorators? 'def' NAME '(' [params] ')' ['->' expression] ':' block */
static nbc__node *function_def(parser *p, vec decorators) {
  const nbc__token *kw = p->tok;
  nbc__node *n = new_node(p, NBC__N_FUNCDEF, kw);
  if (!n) return NULL;
  advance(p);
  if (!is_kind(p, NBC__TOK_NAME))
    return syntax(p, p->tok, "expected a function name after 'def', found %s",
                  describe(p, p->tok));
  if (!(n->str = tok_text(p, p->tok))) return NULL;
  advance(p);
  if (!expect(p, "(", "after the function name")) return NULL;
  vec ps = {0}, body = {0};
  if (!params(p, &ps)) return NULL;
  if (accept(p, "->") && !expression(p)) return NULL;
  if (!colon(p, "the function signature")) return NULL;
  int saved_loop = p->in_loop;
  p->in_func++;
  p->in_loop = 0;
  bool ok = block(p, &body, "function definition", kw);
  p->in_func--;
  p->in_loop = saved_loop;
  if (!ok) return NULL;
  n->params = to_list(ps);
  n->body = to_list(body);
  n->decorators = to_list(decorators);
  return n;
}

/* class_def: decorators? 'class' NAME ['(' [arguments] ')'] ':' block   (host code) */
static nbc__node *class_def(parser *p) {
  const nbc__token *kw = p->tok;
  if (p->in_func && !p->lenient) return unsupported(p, kw, "unsupported statement: 'class'");
  nbc__node *n = new_node(p, NBC__N_OTHER_STMT, kw);
  if (!n) return NULL;
  advance(p);
  if (!is_kind(p, NBC__TOK_NAME))
    return syntax(p, p->tok, "expected a class name after 'class', found %s",
                  describe(p, p->tok));
  if (!(n->str = tok_text(p, p->tok))) return NULL;
  advance(p);
  if (accept(p, "(")) {
    nbc__node scratch = {0};
    if (!arguments(p, &scratch)) return NULL;
  }
  vec body = {0};
  if (!colon(p, "the class name")) return NULL;
  p->lenient++;
  bool ok = block(p, &body, "class definition", kw);
  p->lenient--;
  if (!ok) return NULL;
  n->body = to_list(body);
  return n;
}

/* with_stmt: 'with' with_item (',' with_item)* ':' block
 * with_item: expression ['as' star_target]     (host code) */
static nbc__node *with_stmt(parser *p) {
  const nbc__token *kw = p->tok;
  if (p->in_func && !p->lenient) return unsupported(p, kw, "unsupported statement: 'with'");
  nbc__node *n = new_node(p, NBC__N_OTHER_STMT, kw);
  if (!n) return NULL;
  advance(p);
  do {
    if (!expression(p)) return NULL;
    if (accept(p, "as") && !star_targets(p)) return NULL;
  } while (accept(p, ","));
  vec body = {0};
  if (!colon(p, "'with' items")) return NULL;
  p->lenient++;
  bool ok = block(p, &body, "'with' statement", kw);
  p->lenient--;
  if (!ok) return NULL;
  n->body = to_list(body);
  return n;
}

/* decorated: ('@' named_expression NEWLINE)+ (function_def | class_def) */
static nbc__node *decorated(parser *p) {
  vec decorators = {0};
  while (accept(p, "@")) {
    if (!push(p, &decorators, named_expression(p))) return NULL;
    if (!is_kind(p, NBC__TOK_NEWLINE))
      return syntax(p, p->tok, "expected NEWLINE after the decorator, found %s",
                    describe(p, p->tok));
    advance(p);
  }
  if (is(p, "def")) return function_def(p, decorators);
  if (is(p, "class")) return class_def(p);
  if (is(p, "async") && nbc__tok_is(p->tok + 1, "def")) {
    if (p->in_func && !p->lenient)
      return unsupported(p, p->tok, "unsupported statement: 'async'");
    advance(p);
    nbc__node *f = function_def(p, decorators);
    if (f) f->kind = NBC__N_OTHER_STMT;
    return f;
  }
  return syntax(p, p->tok, "expected 'def' or 'class' after the decorator, found %s",
                describe(p, p->tok));
}

/* statement: compound_stmt | simple_stmts
 * compound_stmt: function_def | if_stmt | class_def | with_stmt | for_stmt | try_stmt
 *              | while_stmt | decorated | 'async' (function_def | with_stmt | for_stmt) */
static bool statement(parser *p, vec *out) {
  const nbc__token *t = p->tok;
  if (t->kind == NBC__TOK_INDENT) return syntax(p, t, "unexpected indent"), false;
  if (t->kind == NBC__TOK_KEYWORD) {
    if (is(p, "def")) return push(p, out, function_def(p, (vec){0}));
    if (is(p, "if")) return push(p, out, if_stmt(p));
    if (is(p, "while")) return push(p, out, while_stmt(p));
    if (is(p, "for")) return push(p, out, for_stmt(p));
    if (is(p, "try")) {
      if (p->in_func && !p->lenient)
        return unsupported(p, t, "unsupported statement: 'try'"), false;
      return push(p, out, try_stmt(p));
    }
    if (is(p, "with")) return push(p, out, with_stmt(p));
    if (is(p, "class")) return push(p, out, class_def(p));
    if (is(p, "async")) {
      if (p->in_func && !p->lenient)
        return unsupported(p, t, "unsupported statement: 'async'"), false;
      advance(p);
      nbc__node *n =
          is(p, "def")    ? function_def(p, (vec){0})
          : is(p, "with") ? with_stmt(p)
          : is(p, "for")
              ? for_stmt(p)
              : syntax(p, p->tok, "expected 'def', 'with' or 'for' after 'async', found %s",
                       describe(p, p->tok));
      if (n) n->kind = NBC__N_OTHER_STMT;
      return push(p, out, n);
    }
    if (is(p, "else") || is(p, "elif") || is(p, "except") || is(p, "finally"))
      return syntax(p, t, "invalid syntax: unexpected %s", describe(p, t)), false;
  }
  if (is(p, "@")) return push(p, out, decorated(p));
  return simple_stmts(p, out);
}

/* module: statement* ENDMARKER */
nbc__node *nbc__parse_module(nbc__ctx *ctx, const nbc__token *tokens, int count) {
  if (!tokens || count < 1 || tokens[count - 1].kind != NBC__TOK_EOF) {
    NBC__BUG(ctx, "token array without an EOF token");
    return NULL;
  }
  parser ps = {0}, *p = &ps;
  p->ctx = ctx;
  p->tok = tokens;
  p->first = tokens;
  nbc__node *module = new_node(p, NBC__N_MODULE, tokens);
  if (!module) return NULL;
  vec body = {0};
  while (!is_kind(p, NBC__TOK_EOF)) {
    if (is_kind(p, NBC__TOK_NEWLINE) || is_kind(p, NBC__TOK_DEDENT)) {
      advance(p); /* cannot come from the tokenizer here; tolerated for hand-made input */
      continue;
    }
    if (!statement(p, &body)) {
      if (!failed(p)) NBC__BUG(ctx, "parser failed without a diagnostic");
      return NULL;
    }
  }
  module->body = to_list(body);
  return module;
}
