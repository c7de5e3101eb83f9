/* parse.h — private header shared by the parser's two files: parse.c (the parser's state
 * and helpers, statements, the module) and parse_expr.c (expressions and assignment
 * targets). Nothing else includes it; the rest of the compiler sees only
 * nbc__parse_module (compiler.h).
 *
 * The helpers every grammar rule calls for every token (is, accept, advance) are inline
 * here; the rest are ordinary functions named nbc__parse_<what>.
 */
#ifndef NBCUDA_PARSE_H
#define NBCUDA_PARSE_H

#include "compiler/compiler.h"

typedef struct parser {
  nbc__ctx *ctx;
  const nbc__token *tok;
  const nbc__token *first; /* the first token of the file */
  int depth;               /* nesting of the tree being built (see parse.c) */
  int powers;              /* `**` links of the chain being parsed (parse_expr.c) */
  int in_func;             /* > 0 inside a function body */
  int in_loop;             /* > 0 inside a loop of the current function */
  bool defer;              /* leave top-level function bodies unparsed (see parse.c) */
} parser;

/* A list being built; becomes an nbc__list. */
typedef struct vec {
  nbc__node **items;
  int count, cap;
} vec;

/* An operator spelled text, for the tables of binary and augmented operators. */
typedef struct binop_entry {
  const char *text;
  nbc__op op;
} binop_entry;

/* ---------------------------------------------------- inline helpers (every token) --- */

static inline bool failed(const parser *p) {
  return p->ctx->status != NBC_OK;
}

static inline void advance(parser *p) {
  if (p->tok->kind != NBC__TOK_EOF) p->tok++;
}

/* The quick rejections are inline: every grammar level asks about several operators for
 * every token. */
static inline bool is(const parser *p, const char *s) {
  const nbc__token *t = p->tok;
  return (t->kind == NBC__TOK_OP || t->kind == NBC__TOK_KEYWORD) &&
         nbc__tok_start(t)[0] == s[0] && nbc__tok_is(t, s);
}

static inline bool is_kind(const parser *p, nbc__tok_kind kind) {
  return p->tok->kind == kind;
}

static inline bool accept(parser *p, const char *s) {
  if (!is(p, s)) return false;
  advance(p);
  return true;
}

static inline nbc__list to_list(vec v) {
  nbc__list l = {v.items, v.count};
  return l;
}

/* ----------------------------------------------------------- parse.c: the helpers --- */

/* How a token is named in "found ..." messages. */
const char *nbc__parse_describe(parser *p, const nbc__token *t);
/* A syntax error at token t; returns NULL so callers can `return nbc__parse_syntax(...)`. */
void *nbc__parse_syntax(parser *p, const nbc__token *t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void *nbc__parse_oom(parser *p);
/* Accepts the operator or keyword s, else reports "expected 's' <context>, found ...". */
bool nbc__parse_expect(parser *p, const char *s, const char *context);
/* One more level of nesting; false (reported) past the limit. Callers decrement depth. */
bool nbc__parse_enter(parser *p);
nbc__node *nbc__parse_new_node(parser *p, nbc__node_kind kind, const nbc__token *tok);
nbc__node *nbc__parse_new_binary(parser *p, nbc__node_kind kind, const nbc__token *tok,
                                 nbc__op op, nbc__node *a, nbc__node *b);
/* Appends n (false when n is NULL, i.e. its parse failed, or out of memory). */
bool nbc__parse_push(parser *p, vec *v, nbc__node *n);
/* The token's text, copied into the arena. */
const char *nbc__parse_tok_text(parser *p, const nbc__token *t);

/* ---------------------------------------------------- parse_expr.c: expressions --- */

/* Whether the token can begin an expression (to tell `x = 1,` from `x = 1, 2`). */
bool nbc__parse_starts_expression(const nbc__token *t);
/* The leftmost token of an expression (where "cannot assign to ..." points). */
const nbc__token *nbc__parse_first_tok(const nbc__node *n);
/* expression: disjunction 'if' disjunction 'else' expression | disjunction | lambdef */
nbc__node *nbc__parse_expression(parser *p);
/* named_expression: NAME ':=' expression | expression */
nbc__node *nbc__parse_named_expression(parser *p);
/* star_expressions: star_expression (',' star_expression)* [','] */
nbc__node *nbc__parse_star_expressions(parser *p);
/* yield_expr: 'yield' 'from' expression | 'yield' [star_expressions] */
nbc__node *nbc__parse_yield_expr(parser *p);
/* arguments: (arg (',' arg)* [','])? ')'   (after the '('; fills call->list) */
bool nbc__parse_arguments(parser *p, nbc__node *call);
/* A def's or a lambda's parameters up to closer (")" or ":"), which it consumes; parse.c. */
bool nbc__parse_params(parser *p, vec *out, nbc__node **pnote, nbc__node **pdefault,
                       const char *closer);
/* star_targets: target (',' target)* [','] */
nbc__node *nbc__parse_star_targets(parser *p);
/* Checks that n can be assigned to (augmented: as the target of `op=`). */
bool nbc__parse_check_target(parser *p, const nbc__node *n, bool augmented);
/* How an expression is named in "cannot assign to ..." messages. */
const char *nbc__parse_expr_description(const nbc__node *n);

#endif /* NBCUDA_PARSE_H */
