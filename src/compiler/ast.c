/* ast.c — what can be done to an AST besides building it: naming kinds and operators,
 * deep copies (each specialisation of a function types its own copy), finding a call's
 * argument for a parameter (positional or keyword), and the readable
 * S-expression printed by `--dump=ast` and pinned by the parser's tests.
 *
 * The dump puts every statement on its own line, indented by nesting, and every
 * expression inline in prefix form:
 *
 *   (module
 *     (import math)
 *     (def add (params a b)
 *       (return (+ a b))))
 *
 * Expressions: names bare, numbers as Python writes them (a float always with '.' or an
 * exponent), strings double-quoted, (. obj attr), ([] obj index), (: lo hi step) with _ for
 * a missing part, (call f args... (kw name value)...), (OP a b) for binary and boolean
 * operators, (OP a) for unary ones, (compare a < b <= c), (ifexp cond then else),
 * (tuple ...), (list ...), (dict k v ...), and (other 'tok') for syntax outside the kernel
 * language. Statements: (= targets... value), (+= target value), (expr e),
 * (if cond body... (else body...)), (while ...), (for target iter body... (else ...)),
 * (return [e]), (break), (continue), (pass), (def name (params ...) [(decorators ...)]
 * body...), (import mod (mod as alias)), (from mod import name (name as alias)),
 * (try body... (handlers body...)), (other 'kw' [name] body...).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"

const char *nbc__node_kind_name(nbc__node_kind kind) {
  switch (kind) {
#define NBC__NODE_NAME_(k)                                                                     \
  case NBC__N_##k:                                                                             \
    return #k;
    NBC__NODE_KINDS(NBC__NODE_NAME_)
#undef NBC__NODE_NAME_
  }
  return "?";
}

const char *nbc__op_text(nbc__op op) {
  switch (op) {
#define NBC__OP_TEXT_(name, text)                                                              \
  case NBC__OP_##name:                                                                         \
    return text;
    NBC__OPS(NBC__OP_TEXT_)
#undef NBC__OP_TEXT_
  }
  return "?";
}

/* ---------------------------------------------------------------------- cloning --- */

static bool clone_list(nbc__ctx *ctx, nbc__list *dst, const nbc__list *src) {
  if (src->count == 0) {
    dst->items = NULL;
    return true;
  }
  nbc__node **items = nbc__arena_alloc(ctx->arena, sizeof *items * (size_t)src->count);
  if (!items) return false;
  for (int i = 0; i < src->count; i++) {
    items[i] = nbc__node_clone(ctx, src->items[i]);
    if (src->items[i] && !items[i]) return false;
  }
  dst->items = items;
  return true;
}

static bool clone_child(nbc__ctx *ctx, nbc__node **dst, const nbc__node *src) {
  if (!src) return true;
  *dst = nbc__node_clone(ctx, src);
  return *dst != NULL;
}

nbc__node *nbc__node_new(nbc__arena *arena, nbc__node_kind kind, const nbc__token *tok) {
  nbc__node *n = nbc__arena_alloc(arena, sizeof *n);
  if (n) {
    n->kind = kind;
    n->tok = tok;
    n->var = -1;
  }
  return n;
}

nbc__node *nbc__node_clone(nbc__ctx *ctx, const nbc__node *node) {
  if (!node) return NULL;
  nbc__node *n = nbc__arena_alloc(ctx->arena, sizeof *n);
  if (!n) goto fail;
  *n = *node;
  if (node->ops && node->list.count > 0) {
    n->ops = nbc__arena_alloc(ctx->arena, sizeof *n->ops * (size_t)node->list.count);
    if (!n->ops) goto fail;
    memcpy(n->ops, node->ops, sizeof *n->ops * (size_t)node->list.count);
  }
  if (!clone_child(ctx, &n->a, node->a) || !clone_child(ctx, &n->b, node->b) ||
      !clone_child(ctx, &n->c, node->c) || !clone_list(ctx, &n->list, &node->list) ||
      !clone_list(ctx, &n->body, &node->body) || !clone_list(ctx, &n->orelse, &node->orelse) ||
      !clone_list(ctx, &n->params, &node->params) ||
      !clone_list(ctx, &n->decorators, &node->decorators))
    goto fail;
  return n;
fail:
  nbc__diag_oom(ctx);
  return NULL;
}

bool nbc__index_is_newaxis(const nbc__node *item) {
  return item->kind != NBC__N_SLICE && item->kind != NBC__N_ELLIPSIS && item->type &&
         item->type->kind == NBC__T_NONE;
}

nbc__node *nbc__call_arg(const nbc__node *call, int pos, const char *name) {
  for (int i = 0; i < call->list.count; i++) {
    nbc__node *a = call->list.items[i];
    if (a->kind != NBC__N_KEYWORD && i == pos) return a;
    if (a->kind == NBC__N_KEYWORD && strcmp(a->str, name) == 0) return a->a;
  }
  return NULL;
}

bool nbc__node_any(const nbc__node *n, bool (*pred)(const nbc__node *, const void *),
                   const void *arg) {
  if (!n) return false;
  if (pred(n, arg)) return true;
  if (nbc__node_any(n->a, pred, arg) || nbc__node_any(n->b, pred, arg) ||
      nbc__node_any(n->c, pred, arg))
    return true;
  const nbc__list *lists[] = {&n->list, &n->body, &n->orelse};
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < lists[k]->count; i++)
      if (nbc__node_any(lists[k]->items[i], pred, arg)) return true;
  return false;
}

/* ---------------------------------------------------------------------- dumping --- */

/* Python's repr of a float: the shortest %g that reads back the same, with ".0" added
 * when it would otherwise look like an integer. */
static void dump_float(nbc__buf *out, double v) {
  if (isnan(v)) {
    nbc__buf_puts(out, "nan");
    return;
  }
  if (isinf(v)) {
    nbc__buf_puts(out, v < 0 ? "-inf" : "inf");
    return;
  }
  char s[40];
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(s, sizeof s, "%.*g", prec, v);
    if (strtod(s, NULL) == v) break;
  }
  nbc__buf_puts(out, s);
  if (!strpbrk(s, ".en")) nbc__buf_puts(out, ".0");
}

static void dump_string(nbc__buf *out, const char *s) {
  nbc__buf_puts(out, "\"");
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      nbc__buf_printf(out, "\\%c", c);
    else if (c == '\n')
      nbc__buf_puts(out, "\\n");
    else if (c == '\t')
      nbc__buf_puts(out, "\\t");
    else if (c < 0x20 || c == 0x7F)
      nbc__buf_printf(out, "\\x%02x", c);
    else
      nbc__buf_append(out, (const char *)s, 1);
  }
  nbc__buf_puts(out, "\"");
}

static void dump_expr(nbc__buf *out, const nbc__node *n);

static void dump_list_inline(nbc__buf *out, const nbc__list *l) {
  for (int i = 0; i < l->count; i++) {
    nbc__buf_puts(out, " ");
    dump_expr(out, l->items[i]);
  }
}

/* A def's or a lambda's parameters: "(params a (= b 2) *rest)". */
static void dump_params(nbc__buf *out, const nbc__list *l) {
  nbc__buf_puts(out, "(params");
  for (int i = 0; i < l->count; i++) {
    const nbc__node *p = l->items[i];
    nbc__buf_printf(out, p->a ? " (= %s%s " : " %s%s", p->vararg ? "*" : "",
                    p->str ? p->str : "?");
    if (p->a) {
      dump_expr(out, p->a);
      nbc__buf_puts(out, ")");
    }
  }
  nbc__buf_puts(out, ")");
}

static void dump_opt(nbc__buf *out, const nbc__node *n) {
  if (n)
    dump_expr(out, n);
  else
    nbc__buf_puts(out, "_");
}

static void dump_expr(nbc__buf *out, const nbc__node *n) {
  if (!n) {
    nbc__buf_puts(out, "<null>");
    return;
  }
  switch (n->kind) {
  case NBC__N_INT:
    if (n->big)
      nbc__buf_printf(out, "%llu", (unsigned long long)(uint64_t)n->value.i);
    else
      nbc__buf_printf(out, "%lld", (long long)n->value.i);
    return;
  case NBC__N_FLOAT:
    dump_float(out, n->value.f);
    return;
  case NBC__N_COMPLEX:
    dump_float(out, n->value.f);
    nbc__buf_puts(out, "j");
    return;
  case NBC__N_BOOL:
    nbc__buf_puts(out, n->value.i ? "True" : "False");
    return;
  case NBC__N_NONE:
    nbc__buf_puts(out, "None");
    return;
  case NBC__N_STR:
    dump_string(out, n->str);
    return;
  case NBC__N_NAME:
    nbc__buf_puts(out, n->str ? n->str : "?");
    return;
  case NBC__N_ATTR:
    nbc__buf_puts(out, "(. ");
    dump_expr(out, n->a);
    nbc__buf_printf(out, " %s)", n->str ? n->str : "?");
    return;
  case NBC__N_SUBSCRIPT:
    nbc__buf_puts(out, "([] ");
    dump_expr(out, n->a);
    nbc__buf_puts(out, " ");
    dump_expr(out, n->b);
    nbc__buf_puts(out, ")");
    return;
  case NBC__N_SLICE:
    nbc__buf_puts(out, "(: ");
    dump_opt(out, n->a);
    nbc__buf_puts(out, " ");
    dump_opt(out, n->b);
    nbc__buf_puts(out, " ");
    dump_opt(out, n->c);
    nbc__buf_puts(out, ")");
    return;
  case NBC__N_CALL:
    nbc__buf_puts(out, "(call ");
    dump_expr(out, n->a);
    dump_list_inline(out, &n->list);
    nbc__buf_puts(out, ")");
    return;
  case NBC__N_KEYWORD:
    nbc__buf_printf(out, "(kw %s ", n->str ? n->str : "?");
    dump_expr(out, n->a);
    nbc__buf_puts(out, ")");
    return;
  case NBC__N_BINOP:
  case NBC__N_BOOLOP:
    nbc__buf_printf(out, "(%s ", nbc__op_text(n->op));
    dump_expr(out, n->a);
    nbc__buf_puts(out, " ");
    dump_expr(out, n->b);
    nbc__buf_puts(out, ")");
    return;
  case NBC__N_UNARY:
    nbc__buf_printf(out, "(%s ", nbc__op_text(n->op));
    dump_expr(out, n->a);
    nbc__buf_puts(out, ")");
    return;
  case NBC__N_COMPARE:
    nbc__buf_puts(out, "(compare ");
    dump_expr(out, n->a);
    for (int i = 0; i < n->list.count; i++) {
      nbc__buf_printf(out, " %s ", n->ops ? nbc__op_text(n->ops[i]) : "?");
      dump_expr(out, n->list.items[i]);
    }
    nbc__buf_puts(out, ")");
    return;
  case NBC__N_IFEXP:
    nbc__buf_puts(out, "(ifexp ");
    dump_expr(out, n->a);
    nbc__buf_puts(out, " ");
    dump_expr(out, n->b);
    nbc__buf_puts(out, " ");
    dump_expr(out, n->c);
    nbc__buf_puts(out, ")");
    return;
  case NBC__N_TUPLE:
  case NBC__N_LIST:
  case NBC__N_DICT:
    nbc__buf_puts(out, n->kind == NBC__N_TUPLE  ? "(tuple"
                       : n->kind == NBC__N_LIST ? "(list"
                                                : "(dict");
    dump_list_inline(out, &n->list);
    nbc__buf_puts(out, ")");
    return;
  case NBC__N_OTHER_EXPR:
    nbc__buf_printf(out, "(other '%.*s')", n->tok ? n->tok->len : 1,
                    n->tok ? nbc__tok_start(n->tok) : "?");
    return;
  case NBC__N_ELLIPSIS:
    nbc__buf_puts(out, "...");
    return;
  case NBC__N_FUNCDEF: /* a lambda: its body is one return */
    nbc__buf_puts(out, "(lambda ");
    dump_params(out, &n->params);
    nbc__buf_puts(out, " ");
    dump_opt(out, n->body.count == 1 ? n->body.items[0]->a : NULL);
    nbc__buf_puts(out, ")");
    return;
  default:
    nbc__buf_printf(out, "<%s>", nbc__node_kind_name(n->kind));
    return;
  }
}

static void dump_stmt(nbc__buf *out, const nbc__node *n, int indent);

static void dump_body(nbc__buf *out, const nbc__list *body, int indent) {
  for (int i = 0; i < body->count; i++) {
    nbc__buf_puts(out, "\n");
    dump_stmt(out, body->items[i], indent);
  }
}

static void dump_orelse(nbc__buf *out, const char *label, const nbc__list *l, int indent) {
  if (l->count == 0) return;
  nbc__buf_printf(out, "\n%*s(%s", indent, "", label);
  dump_body(out, l, indent + 2);
  nbc__buf_puts(out, ")");
}

static void dump_names(nbc__buf *out, const nbc__list *l) {
  for (int i = 0; i < l->count; i++) {
    const nbc__node *name = l->items[i];
    if (name->alias)
      nbc__buf_printf(out, " (%s as %s)", name->str, name->alias);
    else
      nbc__buf_printf(out, " %s", name->str);
  }
}

static void dump_stmt(nbc__buf *out, const nbc__node *n, int indent) {
  nbc__buf_printf(out, "%*s", indent, "");
  if (!n) {
    nbc__buf_puts(out, "<null>");
    return;
  }
  switch (n->kind) {
  case NBC__N_ASSIGN:
    nbc__buf_puts(out, "(=");
    dump_list_inline(out, &n->list);
    nbc__buf_puts(out, " ");
    dump_expr(out, n->a);
    nbc__buf_puts(out, ")");
    return;
  case NBC__N_AUGASSIGN:
    nbc__buf_printf(out, "(%s= ", nbc__op_text(n->op));
    dump_expr(out, n->a);
    nbc__buf_puts(out, " ");
    dump_expr(out, n->b);
    nbc__buf_puts(out, ")");
    return;
  case NBC__N_EXPR_STMT:
    nbc__buf_puts(out, "(expr ");
    dump_expr(out, n->a);
    nbc__buf_puts(out, ")");
    return;
  case NBC__N_IF:
  case NBC__N_WHILE:
    nbc__buf_puts(out, n->kind == NBC__N_IF ? "(if " : "(while ");
    dump_expr(out, n->a);
    dump_body(out, &n->body, indent + 2);
    dump_orelse(out, "else", &n->orelse, indent + 2);
    nbc__buf_puts(out, ")");
    return;
  case NBC__N_FOR:
    nbc__buf_puts(out, "(for ");
    dump_expr(out, n->a);
    nbc__buf_puts(out, " ");
    dump_expr(out, n->b);
    dump_body(out, &n->body, indent + 2);
    dump_orelse(out, "else", &n->orelse, indent + 2);
    nbc__buf_puts(out, ")");
    return;
  case NBC__N_BREAK:
    nbc__buf_puts(out, "(break)");
    return;
  case NBC__N_CONTINUE:
    nbc__buf_puts(out, "(continue)");
    return;
  case NBC__N_PASS:
    nbc__buf_puts(out, "(pass)");
    return;
  case NBC__N_ASSERT:
  case NBC__N_RAISE:
    nbc__buf_puts(out, n->kind == NBC__N_ASSERT ? "(assert" : "(raise");
    if (n->a) {
      nbc__buf_puts(out, " ");
      dump_expr(out, n->a);
    }
    if (n->b) {
      nbc__buf_puts(out, " ");
      dump_expr(out, n->b);
    }
    nbc__buf_puts(out, ")");
    return;
  case NBC__N_RETURN:
    nbc__buf_puts(out, "(return");
    if (n->a) {
      nbc__buf_puts(out, " ");
      dump_expr(out, n->a);
    }
    nbc__buf_puts(out, ")");
    return;
  case NBC__N_FUNCDEF:
    nbc__buf_printf(out, "(def %s ", n->str ? n->str : "?");
    dump_params(out, &n->params);
    if (n->decorators.count) {
      nbc__buf_puts(out, " (decorators");
      dump_list_inline(out, &n->decorators);
      nbc__buf_puts(out, ")");
    }
    dump_body(out, &n->body, indent + 2);
    nbc__buf_puts(out, ")");
    return;
  case NBC__N_IMPORT:
    nbc__buf_puts(out, "(import");
    dump_names(out, &n->list);
    nbc__buf_puts(out, ")");
    return;
  case NBC__N_IMPORT_FROM:
    nbc__buf_printf(out, "(from %s import", n->str ? n->str : "?");
    dump_names(out, &n->list);
    nbc__buf_puts(out, ")");
    return;
  case NBC__N_TRY:
    nbc__buf_puts(out, "(try");
    dump_body(out, &n->body, indent + 2);
    dump_orelse(out, "handlers", &n->orelse, indent + 2);
    nbc__buf_puts(out, ")");
    return;
  case NBC__N_OTHER_STMT:
    nbc__buf_printf(out, "(other '%.*s'", n->tok ? n->tok->len : 1,
                    n->tok ? nbc__tok_start(n->tok) : "?");
    if (n->str) nbc__buf_printf(out, " %s", n->str);
    dump_body(out, &n->body, indent + 2);
    nbc__buf_puts(out, ")");
    return;
  case NBC__N_MODULE:
    nbc__buf_puts(out, "(module");
    dump_body(out, &n->body, indent + 2);
    nbc__buf_puts(out, ")");
    return;
  default:
    dump_expr(out, n);
    return;
  }
}

void nbc__node_dump(nbc__buf *out, const nbc__node *node, int indent) {
  if (node && node->kind >= NBC__N_ASSIGN)
    dump_stmt(out, node, indent);
  else {
    nbc__buf_printf(out, "%*s", indent, "");
    dump_expr(out, node);
  }
}
