/* infer_dump.c — `nbcuda compile --dump=types`: every function of a typed program with its
 * signature, its variables' types and each statement's expressions with their types and
 * conversions, one per line, indented by nesting.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/infer.h"

static void dump_expr(nbc__buf *out, const nbc__node *n, int indent);

static void dump_line(nbc__buf *out, const nbc__node *n, int indent, const char *what) {
  nbc__buf_printf(out, "%*s%d:%d %s", indent, "", n->tok ? n->tok->line : 0,
                  n->tok ? n->tok->col : 0, what);
  if (n->type) {
    nbc__buf_puts(out, " : ");
    nbc__type_print(out, n->type);
  }
  if (n->cast) {
    nbc__buf_puts(out, " -> ");
    nbc__type_print(out, n->cast);
  }
  nbc__buf_puts(out, "\n");
}

static void dump_expr(nbc__buf *out, const nbc__node *n, int indent) {
  if (!n) return;
  char what[160];
  switch (n->kind) {
  case NBC__N_NAME:
    snprintf(what, sizeof what, "NAME %s", n->str);
    break;
  case NBC__N_ATTR:
    snprintf(what, sizeof what, "ATTR .%s", n->str);
    break;
  case NBC__N_INT:
    snprintf(what, sizeof what, "INT %lld", (long long)n->value.i);
    break;
  case NBC__N_FLOAT:
    snprintf(what, sizeof what, "FLOAT %g", n->value.f);
    break;
  case NBC__N_BINOP:
  case NBC__N_UNARY:
  case NBC__N_BOOLOP:
  case NBC__N_AUGASSIGN:
    snprintf(what, sizeof what, "%s %s", nbc__node_kind_name(n->kind), nbc__op_text(n->op));
    break;
  default:
    snprintf(what, sizeof what, "%s", nbc__node_kind_name(n->kind));
    break;
  }
  dump_line(out, n, indent, what);
  dump_expr(out, n->a, indent + 2);
  dump_expr(out, n->b, indent + 2);
  dump_expr(out, n->c, indent + 2);
  for (int i = 0; i < n->list.count; i++)
    dump_expr(out, n->list.items[i], indent + 2);
  for (int i = 0; i < n->body.count; i++)
    dump_expr(out, n->body.items[i], indent + 2);
  for (int i = 0; i < n->orelse.count; i++)
    dump_expr(out, n->orelse.items[i], indent + 2);
}

void nbc__infer_dump(nbc__buf *out, const nbc__program *program) {
  if (!program) return;
  for (const nbc__func *f = program->funcs; f; f = f->next) {
    nbc__buf_printf(out, "%s %s(", f->is_kernel ? "kernel" : "function", f->name);
    for (int i = 0; i < f->nargs; i++) {
      if (i) nbc__buf_puts(out, ", ");
      nbc__type_print(out, f->argtypes[i]);
    }
    nbc__buf_puts(out, ") -> ");
    nbc__type_print(out, f->ret);
    nbc__buf_puts(out, "\n");
    for (int v = 0; v < f->nvars; v++) {
      nbc__buf_printf(out, "  var %s%s: ", f->vars[v].name,
                      f->vars[v].is_param ? " (param)" : "");
      nbc__type_print(out, f->vars[v].type);
      nbc__buf_puts(out, "\n");
    }
    for (int i = 0; i < f->def->body.count; i++)
      dump_expr(out, f->def->body.items[i], 2);
  }
}
