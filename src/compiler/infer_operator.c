/* infer_operator.c — the operator module in kernels (`operator.add(a, b)`, `from operator
 * import mul`), as numba types and lowers it: each function is its operator, so the call node
 * becomes that operator's node and is typed as one (numba's result types, errors and
 * lowering, with nothing of its own here).
 *
 *   add sub mul truediv floordiv mod pow lshift rshift and_ or_ xor   a <op> b
 *   iadd isub ... ixor (the in-place forms: on numbers, the same value)  a <op> b
 *   neg pos invert not_                                                <op> a
 *   truth(a), a bool (numba types no other)                            a
 *   eq ne lt le gt ge is_ is_not                                       a <op> b
 *   contains(a, b)                                                     b in a
 *   getitem(a, b)                                                      a[b]
 *   setitem(a, b, v)                          a[b] = v (infer_call.c: a store, the call None)
 */
#include <string.h>

#include "compiler/infer.h"

typedef enum { BINARY, UNARY, COMPARE, CONTAINS, GETITEM, TRUTH, SETITEM } form;

static const struct {
  const char *name;
  form form;
  nbc__op op;
} functions[] = {
    {"add", BINARY, NBC__OP_ADD},
    {"sub", BINARY, NBC__OP_SUB},
    {"mul", BINARY, NBC__OP_MUL},
    {"truediv", BINARY, NBC__OP_DIV},
    {"floordiv", BINARY, NBC__OP_FLOORDIV},
    {"mod", BINARY, NBC__OP_MOD},
    {"pow", BINARY, NBC__OP_POW},
    {"lshift", BINARY, NBC__OP_LSHIFT},
    {"rshift", BINARY, NBC__OP_RSHIFT},
    {"and_", BINARY, NBC__OP_BITAND},
    {"or_", BINARY, NBC__OP_BITOR},
    {"xor", BINARY, NBC__OP_BITXOR},
    {"iadd", BINARY, NBC__OP_ADD},
    {"isub", BINARY, NBC__OP_SUB},
    {"imul", BINARY, NBC__OP_MUL},
    {"itruediv", BINARY, NBC__OP_DIV},
    {"ifloordiv", BINARY, NBC__OP_FLOORDIV},
    {"imod", BINARY, NBC__OP_MOD},
    {"ipow", BINARY, NBC__OP_POW},
    {"ilshift", BINARY, NBC__OP_LSHIFT},
    {"irshift", BINARY, NBC__OP_RSHIFT},
    {"iand", BINARY, NBC__OP_BITAND},
    {"ior", BINARY, NBC__OP_BITOR},
    {"ixor", BINARY, NBC__OP_BITXOR},
    {"neg", UNARY, NBC__OP_NEG},
    {"pos", UNARY, NBC__OP_POS},
    {"invert", UNARY, NBC__OP_INVERT},
    {"not_", UNARY, NBC__OP_NOT},
    {"truth", TRUTH, NBC__OP_NOT},
    {"eq", COMPARE, NBC__OP_EQ},
    {"ne", COMPARE, NBC__OP_NE},
    {"lt", COMPARE, NBC__OP_LT},
    {"le", COMPARE, NBC__OP_LE},
    {"gt", COMPARE, NBC__OP_GT},
    {"ge", COMPARE, NBC__OP_GE},
    {"is_", COMPARE, NBC__OP_IS},
    {"is_not", COMPARE, NBC__OP_ISNOT},
    {"contains", CONTAINS, NBC__OP_IN},
    {"getitem", GETITEM, NBC__OP_ADD},
    {"setitem", SETITEM, NBC__OP_ADD},
};

static int find(const char *name) {
  for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++)
    if (strcmp(functions[i].name, name) == 0) return (int)i;
  return -1;
}

bool nbc__operator_exists(const char *name) {
  return name && find(name) >= 0;
}

/* A COMPARE node a <op> b in place of n. */
static bool make_compare(infer *I, nbc__node *n, nbc__op op, nbc__node *a, nbc__node *b) {
  nbc__op *ops = nbc__arena_alloc(I->ctx->arena, sizeof *ops);
  nbc__node **items = nbc__arena_alloc(I->ctx->arena, sizeof *items);
  if (!ops || !items) {
    nbc__diag_oom(I->ctx);
    I->failed = true;
    return false;
  }
  *ops = op;
  items[0] = b;
  n->kind = NBC__N_COMPARE;
  n->op = op;
  n->ops = ops;
  n->a = a;
  n->list.items = items;
  n->list.count = 1;
  return true;
}

/* n becomes the node kind (op) of operands a and b (b NULL for one operand). */
static void become(nbc__node *n, nbc__node_kind kind, nbc__op op, nbc__node *a, nbc__node *b) {
  n->kind = kind;
  n->op = op;
  n->a = a;
  n->b = b;
  n->list.count = 0;
}

const nbc__type *nbc__infer_operator_call(infer *I, nbc__node *n, const char *name) {
  int k = find(name);
  if (k < 0)
    return UNSUPPORTED(I, n, "unsupported operator function 'operator.%s'", name), NULL;
  int want = functions[k].form == UNARY || functions[k].form == TRUTH ? 1 : 2;
  for (int i = 0; i < n->list.count; i++)
    if (n->list.items[i]->kind == NBC__N_KEYWORD)
      return TYPING(I, n, "operator.%s() takes no keyword arguments", name), NULL;
  if (n->list.count != want)
    return TYPING(I, n, "operator.%s() takes exactly %d argument%s (%d given)", name, want,
                  want == 1 ? "" : "s", n->list.count),
           NULL;
  nbc__node *a = n->list.items[0], *b = want == 2 ? n->list.items[1] : NULL;
  nbc__op op = functions[k].op;
  n->info = NULL;
  switch (functions[k].form) {
  case BINARY:
    become(n, NBC__N_BINOP, op, a, b);
    break;
  case UNARY:
    become(n, NBC__N_UNARY, op, a, NULL);
    break;
  case TRUTH: { /* numba's truth takes a bool, which it returns */
    const nbc__type *t = nbc__infer_expr(I, a);
    if (!t) return NULL;
    if (t->kind != NBC__T_BOOL)
      return TYPING(I, n,
                    "operator.truth() takes a bool in a kernel, not %s (numba's "
                    "typing: bool(x) converts other values)",
                    nbc__infer_tname(I, t)),
             NULL;
    *n = *a; /* the value itself */
    return t;
  }
  case COMPARE:
    if (!make_compare(I, n, op, a, b)) return NULL;
    break;
  case CONTAINS: /* contains(a, b) is `b in a` */
    if (!make_compare(I, n, op, b, a)) return NULL;
    break;
  case GETITEM:
    become(n, NBC__N_SUBSCRIPT, op, a, b);
    break;
  case SETITEM: /* typed by infer_call.c's call_setitem before this is reached */
    return UNSUPPORTED(I, n, "operator.setitem is a statement here"), NULL;
  }
  return nbc__infer_expr(I, n);
}
