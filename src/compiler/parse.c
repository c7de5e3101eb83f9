/* parse.c — the parser: tokens to an AST, by recursive descent over Python 3's grammar.
 *
 * This file holds the parser's state and helpers, the statements and the module;
 * parse_expr.c the expressions and assignment targets (parse.h is their shared header).
 * Each parse function is named after the grammar rule it recognises and carries the rule
 * as a comment (the rules are simplified from CPython's Grammar/python.gram). Every node
 * keeps a token for diagnostics: statements keep their first token, binary operators and
 * comparisons their operator, attributes the attribute's name, calls the callee's token,
 * subscripts their '['.
 *
 * Whole files must load — the CLI compiles one function of an ordinary module, with its
 * imports, constants, CASES tables and host code (`def main(): with cuda.gpus[0]: ...`,
 * `def run(n=10):`) — so everything Python accepts parses, in function bodies too, and
 * what the kernel language cannot use is kept for infer.c to refuse if, and only if, a
 * compiled function reaches it: statements become OTHER_STMT at their keyword (or stay
 * IMPORT / TRY nodes), expressions OTHER_EXPR, LIST or DICT nodes, and the first parameter
 * a kernel cannot have (a default, *args, **kwargs, keyword-only) is noted on the FUNCDEF.
 * Only real syntax errors (and `return` outside a function, `break` outside a loop) are
 * reported here.
 *
 * Depth is bounded: the tokenizer allows 200 nested brackets and 100 indentation levels,
 * and here every nesting of expressions and every link of an operator or postfix chain
 * counts towards MAX_DEPTH, so no later recursive walk of the tree can exhaust the stack.
 */
#include <stdio.h>
#include <string.h>

#include "compiler/parse.h"

enum { MAX_DEPTH = 10000 };

static bool statement(parser *p, vec *out);
static bool block(parser *p, vec *out, const char *what, const nbc__token *kw);

/* -------------------------------------------------------------------------- helpers --- */

/* How a token is named in "found ..." messages. */
const char *nbc__parse_describe(parser *p, const nbc__token *t) {
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
      nbc__arena_printf(p->ctx->arena, "'%.*s'", t->len > 24 ? 24 : t->len, nbc__tok_start(t));
  return s ? s : "token";
}

static void *error_status(parser *p, nbc_status_t status, const nbc__token *t, const char *fmt,
                          va_list ap) {
  if (failed(p)) return NULL;
  char msg[512];
  vsnprintf(msg, sizeof msg, fmt, ap);
  int line = t->line, col = t->col;
  if (t->file && t->offset == t->file->size && t->len == 0) {
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

/* A syntax error at token t; returns NULL so callers can `return nbc__parse_syntax(...)`. */
void *nbc__parse_syntax(parser *p, const nbc__token *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  error_status(p, NBC_SYNTAX_ERROR, t, fmt, ap);
  va_end(ap);
  return NULL;
}

void *nbc__parse_oom(parser *p) {
  nbc__diag_oom(p->ctx);
  return NULL;
}

bool nbc__parse_expect(parser *p, const char *s, const char *context) {
  if (accept(p, s)) return true;
  nbc__parse_syntax(p, p->tok, "expected '%s' %s, found %s", s, context,
                    nbc__parse_describe(p, p->tok));
  return false;
}

bool nbc__parse_enter(parser *p) {
  if (++p->depth > MAX_DEPTH) {
    nbc__parse_syntax(p, p->tok, "too many nested expressions or statements (more than %d)",
                      MAX_DEPTH);
    return false;
  }
  return true;
}

nbc__node *nbc__parse_new_node(parser *p, nbc__node_kind kind, const nbc__token *tok) {
  nbc__node *n = nbc__arena_alloc(p->ctx->arena, sizeof *n);
  if (!n) return nbc__parse_oom(p);
  n->kind = kind;
  n->tok = tok;
  n->var = -1;
  return n;
}

nbc__node *nbc__parse_new_binary(parser *p, nbc__node_kind kind, const nbc__token *tok,
                                 nbc__op op, nbc__node *a, nbc__node *b) {
  nbc__node *n = nbc__parse_new_node(p, kind, tok);
  if (!n) return NULL;
  n->op = op;
  n->a = a;
  n->b = b;
  return n;
}

bool nbc__parse_push(parser *p, vec *v, nbc__node *n) {
  if (!n) return false;
  if (v->count == v->cap) {
    int cap = v->cap ? v->cap * 2 : 4;
    nbc__node **items = nbc__arena_alloc(p->ctx->arena, sizeof *items * (size_t)cap);
    if (!items) return nbc__parse_oom(p), false;
    if (v->count) memcpy(items, v->items, sizeof *items * (size_t)v->count);
    v->items = items;
    v->cap = cap;
  }
  v->items[v->count++] = n;
  return true;
}

const char *nbc__parse_tok_text(parser *p, const nbc__token *t) {
  const char *s = nbc__arena_strndup(p->ctx->arena, nbc__tok_start(t), (size_t)t->len);
  if (!s) nbc__parse_oom(p);
  return s;
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
  return is(p, "yield") ? nbc__parse_yield_expr(p) : nbc__parse_star_expressions(p);
}

/* assignment: star_expressions ('=' (yield_expr | star_expressions))+
 *           | single_target augassign (yield_expr | star_expressions)
 *           | single_target ':' expression ['=' (yield_expr | star_expressions)]
 * expression_stmt: star_expressions */
static nbc__node *expression_stmt(parser *p) {
  const nbc__token *start = p->tok;
  nbc__node *first = is(p, "yield") ? nbc__parse_yield_expr(p) : nbc__parse_star_expressions(p);
  if (!first) return NULL;
  if (is(p, ":")) { /* annotated assignment: the annotation is checked and dropped */
    if (first->kind != NBC__N_NAME && first->kind != NBC__N_ATTR &&
        first->kind != NBC__N_SUBSCRIPT)
      return nbc__parse_syntax(
          p, nbc__parse_first_tok(first), "only single target (not %s) can be annotated",
          first->kind == NBC__N_TUPLE ? "tuple" : nbc__parse_expr_description(first));
    advance(p);
    if (!nbc__parse_expression(p)) return NULL;
    if (!accept(p, "=")) return nbc__parse_new_node(p, NBC__N_PASS, start);
    nbc__node *n = nbc__parse_new_node(p, NBC__N_ASSIGN, start);
    vec targets = {0};
    if (!n || !nbc__parse_push(p, &targets, first) || !(n->a = assignment_value(p)))
      return NULL;
    n->list = to_list(targets);
    return n;
  }
  for (const binop_entry *e = aug_ops; e->text; e++) {
    if (!is(p, e->text)) continue;
    if (!nbc__parse_check_target(p, first, true)) return NULL;
    advance(p);
    nbc__node *n = nbc__parse_new_node(p, NBC__N_AUGASSIGN, start);
    if (!n || !(n->b = assignment_value(p))) return NULL;
    n->a = first;
    n->op = e->op;
    return n;
  }
  if (!is(p, "=")) {
    nbc__node *n = nbc__parse_new_node(p, NBC__N_EXPR_STMT, start);
    if (n) n->a = first;
    return n;
  }
  vec targets = {0};
  nbc__node *value = first;
  while (accept(p, "=")) {
    if (!nbc__parse_check_target(p, value, false) || !nbc__parse_push(p, &targets, value))
      return NULL;
    if (!(value = assignment_value(p))) return NULL;
  }
  nbc__node *n = nbc__parse_new_node(p, NBC__N_ASSIGN, start);
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
      return nbc__parse_syntax(p, p->tok, "expected a module name %s, found %s", context,
                               nbc__parse_describe(p, p->tok));
    nbc__buf_append(&b, nbc__tok_start(p->tok), (size_t)p->tok->len);
    advance(p);
    if (!is(p, ".")) break;
    advance(p);
    nbc__buf_puts(&b, ".");
  }
  return b.oom ? nbc__parse_oom(p) : b.data;
}

/* An imported name with its optional alias: (dotted_name | NAME) ['as' NAME] */
static nbc__node *import_alias(parser *p, bool dotted) {
  const nbc__token *t = p->tok;
  nbc__node *n = nbc__parse_new_node(p, NBC__N_NAME, t);
  if (!n) return NULL;
  if (dotted) {
    if (!(n->str = dotted_name(p, "after 'import'"))) return NULL;
  } else {
    if (!is_kind(p, NBC__TOK_NAME))
      return nbc__parse_syntax(p, t, "expected a name to import, found %s",
                               nbc__parse_describe(p, t));
    if (!(n->str = nbc__parse_tok_text(p, t))) return NULL;
    advance(p);
  }
  if (accept(p, "as")) {
    if (!is_kind(p, NBC__TOK_NAME))
      return nbc__parse_syntax(p, p->tok, "expected a name after 'as', found %s",
                               nbc__parse_describe(p, p->tok));
    if (!(n->alias = nbc__parse_tok_text(p, p->tok))) return NULL;
    advance(p);
  }
  return n;
}

/* import_name: 'import' dotted_as_names
 * dotted_as_names: dotted_name ['as' NAME] (',' dotted_name ['as' NAME])* */
static nbc__node *import_name(parser *p) {
  nbc__node *n = nbc__parse_new_node(p, NBC__N_IMPORT, p->tok);
  if (!n) return NULL;
  advance(p);
  vec names = {0};
  do {
    if (!nbc__parse_push(p, &names, import_alias(p, true))) return NULL;
  } while (accept(p, ","));
  n->list = to_list(names);
  n->str = names.items[0]->str;
  return n;
}

/* import_from: 'from' ('.' | '...')* dotted_name 'import' import_from_targets
 *            | 'from' ('.' | '...')+ 'import' import_from_targets
 * import_from_targets: '(' names [','] ')' | names | '*' */
static nbc__node *import_from(parser *p) {
  nbc__node *n = nbc__parse_new_node(p, NBC__N_IMPORT_FROM, p->tok);
  if (!n) return NULL;
  advance(p);
  nbc__buf b;
  nbc__buf_init(&b, p->ctx->arena);
  while (is(p, ".") || is(p, "...")) {
    nbc__buf_append(&b, nbc__tok_start(p->tok), (size_t)p->tok->len);
    advance(p);
  }
  if (!is(p, "import") || b.len == 0) {
    const char *mod = dotted_name(p, "after 'from'");
    if (!mod) return NULL;
    nbc__buf_puts(&b, mod);
  }
  if (b.oom) return nbc__parse_oom(p);
  n->str = b.data;
  if (!nbc__parse_expect(p, "import", "after the module name")) return NULL;
  vec names = {0};
  if (is(p, "*")) {
    nbc__node *star = nbc__parse_new_node(p, NBC__N_NAME, p->tok);
    if (!star || !(star->str = nbc__parse_tok_text(p, p->tok)) ||
        !nbc__parse_push(p, &names, star))
      return NULL;
    advance(p);
  } else {
    bool paren = accept(p, "(");
    do {
      if (paren && is(p, ")")) break;
      if (!nbc__parse_push(p, &names, import_alias(p, false))) return NULL;
    } while (accept(p, ","));
    if (paren && !nbc__parse_expect(p, ")", "to close the import list")) return NULL;
    if (names.count == 0)
      return nbc__parse_syntax(p, p->tok, "expected a name to import, found ')'");
  }
  n->list = to_list(names);
  return n;
}

/* A statement the kernel language has no use for (global, nonlocal, del):
 * an OTHER_STMT at its keyword, which infer.c reports if a compiled function reaches it.
 * `nonlocal a, b` keeps its names: str "nonlocal", list the NAME nodes (closure.c lifts a
 * nested function that assigns its enclosing function's variables and drops the statement).
 * The rest of the statement is skipped (brackets are balanced by the tokenizer, so the
 * next NEWLINE at this level ends it). */
static nbc__node *other_simple_stmt(parser *p) {
  const nbc__token *t = p->tok;
  nbc__node *n = nbc__parse_new_node(p, NBC__N_OTHER_STMT, t);
  if (!n) return NULL;
  bool nonlocal = is(p, "nonlocal");
  advance(p);
  if (nonlocal) {
    vec names = {0};
    do {
      if (!is_kind(p, NBC__TOK_NAME)) break;
      nbc__node *name = nbc__parse_new_node(p, NBC__N_NAME, p->tok);
      if (!name || !(name->str = nbc__parse_tok_text(p, p->tok)) ||
          !nbc__parse_push(p, &names, name))
        return NULL;
      advance(p);
    } while (accept(p, ","));
    n->str = "nonlocal";
    n->list = to_list(names);
  }
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
 *            | nonlocal_stmt | del_stmt | assert_stmt | raise_stmt | yield_stmt
 * (assert and raise become ASSERT and RAISE nodes; global, nonlocal and del OTHER_STMT) */
static nbc__node *simple_stmt(parser *p) {
  const nbc__token *t = p->tok;
  if (accept(p, "pass")) return nbc__parse_new_node(p, NBC__N_PASS, t);
  if (is(p, "break") || is(p, "continue")) {
    if (!p->in_loop)
      return nbc__parse_syntax(p, t, "'%.*s' outside loop", t->len, nbc__tok_start(t));
    advance(p);
    return nbc__parse_new_node(p, nbc__tok_is(t, "break") ? NBC__N_BREAK : NBC__N_CONTINUE, t);
  }
  if (is(p, "return")) {
    if (!p->in_func) return nbc__parse_syntax(p, t, "'return' outside function");
    advance(p);
    nbc__node *n = nbc__parse_new_node(p, NBC__N_RETURN, t);
    if (n && nbc__parse_starts_expression(p->tok) && !(n->a = nbc__parse_star_expressions(p)))
      return NULL;
    return n;
  }
  /* An import inside a function stays an IMPORT node; infer.c refuses it there. */
  if (is(p, "import")) return import_name(p);
  if (is(p, "from")) return import_from(p);
  if (is(p, "assert")) { /* assert_stmt: 'assert' expression [',' expression] */
    advance(p);
    nbc__node *n = nbc__parse_new_node(p, NBC__N_ASSERT, t);
    if (!n || !(n->a = nbc__parse_expression(p))) return NULL;
    if (accept(p, ",") && !(n->b = nbc__parse_expression(p))) return NULL;
    return n;
  }
  if (is(p, "raise")) { /* raise_stmt: 'raise' [expression ['from' expression]] */
    advance(p);
    nbc__node *n = nbc__parse_new_node(p, NBC__N_RAISE, t);
    if (!n) return NULL;
    if (nbc__parse_starts_expression(p->tok)) {
      if (!(n->a = nbc__parse_expression(p))) return NULL;
      if (accept(p, "from") && !(n->b = nbc__parse_expression(p))) return NULL;
    }
    return n;
  }
  if (is(p, "global") || is(p, "nonlocal") || is(p, "del")) return other_simple_stmt(p);
  if (is(p, "yield") && p->in_func) {
    /* A generator's `yield` statement: checked as an expression, kept as an OTHER_STMT so
     * that compiling the function names the statement. */
    nbc__node *n = expression_stmt(p);
    if (n) n->kind = NBC__N_OTHER_STMT;
    return n;
  }
  if (t->kind == NBC__TOK_KEYWORD && !nbc__parse_starts_expression(t) && !is(p, "yield"))
    return nbc__parse_syntax(p, t, "invalid syntax: unexpected %s", nbc__parse_describe(p, t));
  if (t->kind == NBC__TOK_OP && !nbc__parse_starts_expression(t))
    return nbc__parse_syntax(p, t, "invalid syntax: unexpected %s", nbc__parse_describe(p, t));
  if (t->kind == NBC__TOK_INDENT) return nbc__parse_syntax(p, t, "unexpected indent");
  return expression_stmt(p);
}

/* simple_stmts: simple_stmt (';' simple_stmt)* [';'] NEWLINE */
static bool simple_stmts(parser *p, vec *out) {
  for (;;) {
    if (!nbc__parse_push(p, out, simple_stmt(p))) return false;
    if (!accept(p, ";") || is_kind(p, NBC__TOK_NEWLINE)) break;
  }
  if (is_kind(p, NBC__TOK_NEWLINE)) {
    advance(p);
    return true;
  }
  if (is(p, "=") || is(p, ":"))
    nbc__parse_syntax(p, p->tok, "invalid syntax: unexpected %s",
                      nbc__parse_describe(p, p->tok));
  else
    nbc__parse_syntax(p, p->tok, "expected NEWLINE after the statement, found %s",
                      nbc__parse_describe(p, p->tok));
  return false;
}

/* ----------------------------------------------------------- compound statements --- */

/* block: NEWLINE INDENT statement+ DEDENT | simple_stmts
 * `what` names the statement for "expected an indented block after ...". */
static bool block(parser *p, vec *out, const char *what, const nbc__token *kw) {
  if (!is_kind(p, NBC__TOK_NEWLINE)) {
    if (is_kind(p, NBC__TOK_EOF))
      return nbc__parse_syntax(p, p->tok, "expected an indented block after %s on line %d",
                               what, nbc__token_user_line(kw)),
             false;
    return simple_stmts(p, out);
  }
  advance(p);
  if (!is_kind(p, NBC__TOK_INDENT))
    return nbc__parse_syntax(p, p->tok, "expected an indented block after %s on line %d", what,
                             nbc__token_user_line(kw)),
           false;
  advance(p);
  if (!nbc__parse_enter(p)) return false;
  while (!is_kind(p, NBC__TOK_DEDENT) && !is_kind(p, NBC__TOK_EOF))
    if (!statement(p, out)) return false;
  p->depth--;
  if (is_kind(p, NBC__TOK_DEDENT)) advance(p);
  return true;
}

/* A top-level function's body, parsed to find its syntax errors into an arena of its own,
 * then dropped: the module keeps where it starts, and nbc__parse_body parses it again when
 * the function is compiled. Most functions of a file never are (one kernel and what it
 * calls), and their trees are most of the memory loading a file takes (184 bytes a node,
 * some twenty nodes for a four-line function). The errors and the tree are the same either
 * way: the same tokens go through the same rules from the same state. */
static bool checked_block(parser *p, const nbc__token *kw) {
  nbc__ctx *ctx = p->ctx, scratch = *ctx;
  if (!ctx->diag.data) nbc__buf_init(&ctx->diag, ctx->arena);
  scratch.diag = ctx->diag; /* errors are kept in the module's arena, not the scratch one */
  scratch.arena = nbc__arena_create();
  if (!scratch.arena) return nbc__parse_oom(p), false;
  p->ctx = &scratch;
  vec body = {0};
  bool ok = block(p, &body, "function definition", kw);
  p->ctx = ctx;
  nbc__arena_destroy(scratch.arena);
  scratch.arena = ctx->arena;
  *ctx = scratch;
  return ok;
}

/* The ':' that opens a block. */
static bool colon(parser *p, const char *after) {
  if (accept(p, ":")) return true;
  nbc__parse_syntax(p, p->tok, "expected ':' after %s, found %s", after,
                    nbc__parse_describe(p, p->tok));
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
  nbc__node *n = nbc__parse_new_node(p, NBC__N_IF, kw);
  if (!n) return NULL;
  advance(p);
  if (!(n->a = nbc__parse_named_expression(p))) return NULL;
  if (!colon(p, elif ? "'elif' condition" : "'if' condition")) return NULL;
  vec body = {0}, orelse = {0};
  if (!block(p, &body, elif ? "'elif' statement" : "'if' statement", kw)) return NULL;
  n->body = to_list(body);
  if (is(p, "elif")) {
    if (!nbc__parse_enter(p)) return NULL;
    bool ok = nbc__parse_push(p, &orelse, if_stmt(p));
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
  nbc__node *n = nbc__parse_new_node(p, NBC__N_WHILE, kw);
  if (!n) return NULL;
  advance(p);
  if (!(n->a = nbc__parse_named_expression(p)) || !colon(p, "'while' condition")) return NULL;
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
  nbc__node *n = nbc__parse_new_node(p, NBC__N_FOR, kw);
  if (!n) return NULL;
  advance(p);
  if (!(n->a = nbc__parse_star_targets(p)) || !nbc__parse_check_target(p, n->a, false))
    return NULL;
  if (!nbc__parse_expect(p, "in", "after the 'for' target")) return NULL;
  if (!(n->b = nbc__parse_star_expressions(p)) || !colon(p, "'for' clause")) return NULL;
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
  nbc__node *n = nbc__parse_new_node(p, NBC__N_TRY, kw);
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
      if (!nbc__parse_expression(p)) return NULL;
      if (accept(p, "as")) {
        if (!is_kind(p, NBC__TOK_NAME))
          return nbc__parse_syntax(p, p->tok, "expected a name after 'as', found %s",
                                   nbc__parse_describe(p, p->tok));
        advance(p);
      } else if (is(p, ",")) {
        return nbc__parse_syntax(p, p->tok, "multiple exception types must be parenthesized");
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
    return nbc__parse_syntax(p, p->tok, "expected 'except' or 'finally' block, found %s",
                             nbc__parse_describe(p, p->tok));
  }
  n->body = to_list(body);
  n->orelse = to_list(orelse);
  return n;
}

/* The first parameter a kernel cannot have, as an OTHER_EXPR at its token whose str says
 * why (see compiler.h: FUNCDEF's c). Host functions have such parameters all the time, so
 * this is no error here: infer.c reports it when the function is compiled or called. */
static bool param_note(parser *p, nbc__node **pnote, const nbc__token *t, const char *why) {
  if (*pnote) return true;
  nbc__node *n = nbc__parse_new_node(p, NBC__N_OTHER_EXPR, t);
  if (!n) return false;
  n->str = why;
  *pnote = n;
  return true;
}

/* params: param (',' param)* [',']
 * param: NAME [':' expression] ['=' expression] | '*' [NAME [':' expression]]
 *      | '**' NAME [':' expression] | '/'
 * up to closer (")" of a def, ":" of a lambda, whose parameters have no annotations). Only
 * plain names are parameters of a kernel ('/' is accepted: every parameter is positional
 * anyway); a parameter's default value is its NAME node's a. The first '*' or '**' is noted
 * in *pnote, the first default in *pdefault (see compiler.h: FUNCDEF's c and b). */
bool nbc__parse_params(parser *p, vec *out, nbc__node **pnote, nbc__node **pdefault,
                       const char *closer) {
  bool annotations = strcmp(closer, ")") == 0, starred = false;
  while (!is(p, closer)) {
    const nbc__token *t = p->tok;
    if (accept(p, "/")) {
      /* Positional-only marker. */
    } else if (is(p, "*") && p->tok[1].kind == NBC__TOK_NAME && !starred) {
      /* *args: a parameter of its own (a device function's extra positional arguments);
       * any parameter after it is keyword-only, noted below */
      advance(p);
      nbc__node *n = nbc__parse_new_node(p, NBC__N_NAME, t); /* at the '*' */
      if (!n || !(n->str = nbc__parse_tok_text(p, p->tok))) return false;
      n->vararg = true;
      starred = true;
      advance(p);
      if (annotations && accept(p, ":") && !nbc__parse_expression(p)) return false;
      if (!nbc__parse_push(p, out, n)) return false;
    } else if (is(p, "*") || is(p, "**")) {
      bool twice = is(p, "**");
      advance(p);
      const char *why = twice ? "**kwargs parameters are not supported in CUDA kernels"
                              : "keyword-only parameters are not supported in CUDA kernels";
      if (!param_note(p, pnote, t, why)) return false;
      starred = true;
      if (is_kind(p, NBC__TOK_NAME)) advance(p);
      if (annotations && accept(p, ":") && !nbc__parse_expression(p)) return false;
    } else if (is_kind(p, NBC__TOK_NAME)) {
      if (starred && !param_note(p, pnote, t, "keyword-only parameters are not supported in "
                                                  "CUDA kernels"))
        return false;
      nbc__node *n = nbc__parse_new_node(p, NBC__N_NAME, t);
      if (!n || !(n->str = nbc__parse_tok_text(p, t))) return false;
      for (int i = 0; i < out->count; i++)
        if (strcmp(out->items[i]->str, n->str) == 0)
          return nbc__parse_syntax(p, t, "duplicate argument '%s' in function definition",
                                   n->str),
                 false;
      advance(p);
      if (annotations && accept(p, ":") && !nbc__parse_expression(p)) return false;
      if (is(p, "=")) {
        if (!param_note(p, pdefault, p->tok,
                        "default argument values are not supported in CUDA kernels"))
          return false;
        advance(p);
        if (!(n->a = nbc__parse_expression(p))) return false;
      }
      if (!nbc__parse_push(p, out, n)) return false;
    } else {
      return nbc__parse_syntax(p, t, "expected a parameter name, found %s",
                               nbc__parse_describe(p, t)),
             false;
    }
    if (!accept(p, ",")) break;
  }
  if (!is(p, closer))
    return nbc__parse_syntax(p, p->tok, "expected ',' or '%s' in the parameter list, found %s",
                             closer, nbc__parse_describe(p, p->tok)),
           false;
  advance(p);
  return true;
}

/* function_def: decorators? 'def' NAME '(' [params] ')' ['->' expression] ':' block */
static nbc__node *function_def(parser *p, vec decorators) {
  const nbc__token *kw = p->tok;
  nbc__node *n = nbc__parse_new_node(p, NBC__N_FUNCDEF, kw);
  if (!n) return NULL;
  advance(p);
  if (!is_kind(p, NBC__TOK_NAME))
    return nbc__parse_syntax(p, p->tok, "expected a function name after 'def', found %s",
                             nbc__parse_describe(p, p->tok));
  if (!(n->str = nbc__parse_tok_text(p, p->tok))) return NULL;
  advance(p);
  if (!nbc__parse_expect(p, "(", "after the function name")) return NULL;
  vec ps = {0}, body = {0};
  if (!nbc__parse_params(p, &ps, &n->c, &n->b, ")")) return NULL;
  if (accept(p, "->") && !nbc__parse_expression(p)) return NULL;
  if (!colon(p, "the function signature")) return NULL;
  int saved_loop = p->in_loop;
  bool defer = p->defer && !p->in_func;
  if (defer) {
    n->body_deferred = true;
    n->info = (void *)p->tok;
    n->value.i = p->depth;
  }
  p->in_func++;
  p->in_loop = 0;
  bool ok = defer ? checked_block(p, kw) : block(p, &body, "function definition", kw);
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
  nbc__node *n = nbc__parse_new_node(p, NBC__N_OTHER_STMT, kw);
  if (!n) return NULL;
  advance(p);
  if (!is_kind(p, NBC__TOK_NAME))
    return nbc__parse_syntax(p, p->tok, "expected a class name after 'class', found %s",
                             nbc__parse_describe(p, p->tok));
  if (!(n->str = nbc__parse_tok_text(p, p->tok))) return NULL;
  advance(p);
  if (accept(p, "(")) {
    nbc__node scratch = {0};
    if (!nbc__parse_arguments(p, &scratch)) return NULL;
  }
  vec body = {0};
  if (!colon(p, "the class name")) return NULL;
  bool ok = block(p, &body, "class definition", kw);
  if (!ok) return NULL;
  n->body = to_list(body);
  return n;
}

/* with_stmt: 'with' with_item (',' with_item)* ':' block
 * with_item: expression ['as' star_target]     (host code) */
static nbc__node *with_stmt(parser *p) {
  const nbc__token *kw = p->tok;
  nbc__node *n = nbc__parse_new_node(p, NBC__N_OTHER_STMT, kw);
  if (!n) return NULL;
  advance(p);
  do {
    if (!nbc__parse_expression(p)) return NULL;
    if (accept(p, "as") && !nbc__parse_star_targets(p)) return NULL;
  } while (accept(p, ","));
  vec body = {0};
  if (!colon(p, "'with' items")) return NULL;
  bool ok = block(p, &body, "'with' statement", kw);
  if (!ok) return NULL;
  n->body = to_list(body);
  return n;
}

/* decorated: ('@' named_expression NEWLINE)+ (function_def | class_def) */
static nbc__node *decorated(parser *p) {
  vec decorators = {0};
  while (accept(p, "@")) {
    if (!nbc__parse_push(p, &decorators, nbc__parse_named_expression(p))) return NULL;
    if (!is_kind(p, NBC__TOK_NEWLINE))
      return nbc__parse_syntax(p, p->tok, "expected NEWLINE after the decorator, found %s",
                               nbc__parse_describe(p, p->tok));
    advance(p);
  }
  if (is(p, "def")) return function_def(p, decorators);
  if (is(p, "class")) return class_def(p);
  if (is(p, "async") && nbc__tok_is(p->tok + 1, "def")) {
    const nbc__token *t = p->tok;
    advance(p);
    nbc__node *f = function_def(p, decorators);
    if (f) {
      f->kind = NBC__N_OTHER_STMT;
      if (p->in_func) f->tok = t; /* so that compiling the function names the 'async' */
    }
    return f;
  }
  return nbc__parse_syntax(p, p->tok, "expected 'def' or 'class' after the decorator, found %s",
                           nbc__parse_describe(p, p->tok));
}

/* Whether the logical line at the cursor is a match statement: `match` (a soft keyword) first
 * and ':' last, which no simple statement is. */
static bool is_match_stmt(parser *p) {
  const nbc__token *m = p->tok;
  if (m->kind != NBC__TOK_NAME || m->len != 5 || memcmp(nbc__tok_start(m), "match", 5) != 0)
    return false;
  const nbc__token *t = p->tok + 1, *last = NULL;
  for (int depth = 0; t->kind != NBC__TOK_EOF; t++) {
    if (depth == 0 && t->kind == NBC__TOK_NEWLINE) break;
    if (nbc__tok_is(t, "(") || nbc__tok_is(t, "[") || nbc__tok_is(t, "{")) depth++;
    if (nbc__tok_is(t, ")") || nbc__tok_is(t, "]") || nbc__tok_is(t, "}")) depth--;
    last = t;
  }
  return last && last != p->tok + 1 && nbc__tok_is(last, ":");
}

/* match_stmt: "match" subject_expr ':' NEWLINE INDENT case_block+ DEDENT     (host code)
 * Kept whole as an OTHER_STMT at 'match', which infer.c reports if a compiled function
 * reaches it; its cases are skipped to the matching DEDENT. */
static nbc__node *match_stmt(parser *p) {
  nbc__node *n = nbc__parse_new_node(p, NBC__N_OTHER_STMT, p->tok);
  if (!n) return NULL;
  while (!is_kind(p, NBC__TOK_NEWLINE) && !is_kind(p, NBC__TOK_EOF)) advance(p);
  advance(p);
  if (!is_kind(p, NBC__TOK_INDENT))
    return nbc__parse_syntax(p, p->tok, "expected an indented block of cases after 'match', "
                             "found %s", nbc__parse_describe(p, p->tok));
  for (int depth = 0; !is_kind(p, NBC__TOK_EOF); advance(p)) {
    if (is_kind(p, NBC__TOK_INDENT)) depth++;
    if (is_kind(p, NBC__TOK_DEDENT) && --depth == 0) {
      advance(p);
      break;
    }
  }
  return n;
}

/* statement: compound_stmt | simple_stmts
 * compound_stmt: function_def | if_stmt | class_def | with_stmt | for_stmt | try_stmt
 *              | while_stmt | decorated | 'async' (function_def | with_stmt | for_stmt)
 *              | match_stmt */
static bool statement(parser *p, vec *out) {
  const nbc__token *t = p->tok;
  if (t->kind == NBC__TOK_INDENT) return nbc__parse_syntax(p, t, "unexpected indent"), false;
  if (t->kind == NBC__TOK_KEYWORD) {
    if (is(p, "def")) return nbc__parse_push(p, out, function_def(p, (vec){0}));
    if (is(p, "if")) return nbc__parse_push(p, out, if_stmt(p));
    if (is(p, "while")) return nbc__parse_push(p, out, while_stmt(p));
    if (is(p, "for")) return nbc__parse_push(p, out, for_stmt(p));
    if (is(p, "try")) return nbc__parse_push(p, out, try_stmt(p));
    if (is(p, "with")) return nbc__parse_push(p, out, with_stmt(p));
    if (is(p, "class")) return nbc__parse_push(p, out, class_def(p));
    if (is(p, "async")) {
      advance(p);
      nbc__node *n =
          is(p, "def")    ? function_def(p, (vec){0})
          : is(p, "with") ? with_stmt(p)
          : is(p, "for")
              ? for_stmt(p)
              : nbc__parse_syntax(p, p->tok,
                                  "expected 'def', 'with' or 'for' after 'async', found %s",
                                  nbc__parse_describe(p, p->tok));
      if (n) {
        n->kind = NBC__N_OTHER_STMT;
        if (p->in_func) n->tok = t; /* so that compiling the function names the 'async' */
      }
      return nbc__parse_push(p, out, n);
    }
    if (is(p, "else") || is(p, "elif") || is(p, "except") || is(p, "finally"))
      return nbc__parse_syntax(p, t, "invalid syntax: unexpected %s",
                               nbc__parse_describe(p, t)),
             false;
  }
  if (is(p, "@")) return nbc__parse_push(p, out, decorated(p));
  if (is_match_stmt(p)) return nbc__parse_push(p, out, match_stmt(p));
  return simple_stmts(p, out);
}

/* module: statement* ENDMARKER
 * With defer, the bodies of functions defined outside any function are checked and left
 * unparsed (checked_block); nbc__parse_body parses one. */
static nbc__node *module(nbc__ctx *ctx, const nbc__token *tokens, int count, bool defer) {
  if (!tokens || count < 1 || tokens[count - 1].kind != NBC__TOK_EOF) {
    NBC__BUG(ctx, "token array without an EOF token");
    return NULL;
  }
  parser ps = {0}, *p = &ps;
  p->ctx = ctx;
  p->tok = tokens;
  p->first = tokens;
  p->defer = defer;
  nbc__node *module = nbc__parse_new_node(p, NBC__N_MODULE, tokens);
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

nbc__node *nbc__parse_module(nbc__ctx *ctx, const nbc__token *tokens, int count) {
  return module(ctx, tokens, count, false);
}

nbc__node *nbc__parse_module_deferred(nbc__ctx *ctx, const nbc__token *tokens, int count) {
  return module(ctx, tokens, count, true);
}

bool nbc__parse_body(nbc__ctx *ctx, nbc__node *def) {
  if (!def->body_deferred) return true;
  parser ps = {0}, *p = &ps;
  p->ctx = ctx;
  p->tok = def->info;
  p->first = def->info;
  p->depth = (int)def->value.i;
  p->in_func = 1;
  vec body = {0};
  if (!block(p, &body, "function definition", def->tok)) {
    if (!failed(p)) NBC__BUG(ctx, "parser failed without a diagnostic");
    return false;
  }
  def->body = to_list(body);
  def->body_deferred = false;
  def->info = NULL;
  def->value.i = 0;
  return true;
}
