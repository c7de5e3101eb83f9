/* fold.c — what CPython's compiler removes before numba sees the code.
 *
 * numba compiles bytecode, which CPython has already optimised: constant arithmetic is
 * folded (Python/ast_opt.c: `32 + 2` is the constant 34, `-1`, `~0`, `not 0`, `__debug__`),
 * a branch on a constant condition keeps only the branch taken (`if False:`, `while 0:`,
 * `x if True else y`, `True and x`: the flow-graph optimiser drops the jump and the dead
 * block), and statements after a return, raise, break or continue are unreachable and gone.
 * numba types only what remains, so nbcuda does the same to the AST before binding and
 * typing: a program numba compiles (`(w if True else u64) | 3`, where numba never sees the
 * uint64) compiles here too.
 *
 * Folding follows Python's semantics exactly or not at all: integers as Python integers
 * (floor division and modulo, shifts), kept when the result fits 64 bits (a value from 2**63
 * to 2**64 - 1 becomes the uint64 literal numba would type); true division and float
 * operands in double, only where each integer converts exactly; whatever would raise
 * (division by zero, a negative shift, a float overflow), or needs more bits, is left as it
 * was written, and typed as before. Complex and string constants are left alone.
 *
 * The walk recurses once per AST level, which the parser bounds (NBC__PARSE_MAX_DEPTH).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "compiler/compiler.h"

__extension__ typedef __int128 fold_i128;

/* ------------------------------------------------------------------ constants --- */

/* A constant operand: an int (bools and big uint64 literals included) or a float. */
typedef struct konst {
  enum { K_NONE, K_INT, K_FLOAT } kind;
  bool is_bool;
  fold_i128 i;
  double f;
} konst;

static konst konst_of(const nbc__node *n) {
  konst k = {K_NONE, false, 0, 0};
  if (!n) return k;
  if (n->kind == NBC__N_INT) {
    k.kind = K_INT;
    k.i = n->big ? (fold_i128)(uint64_t)n->value.i : (fold_i128)n->value.i;
  } else if (n->kind == NBC__N_BOOL) {
    k.kind = K_INT;
    k.is_bool = true;
    k.i = n->value.i != 0;
  } else if (n->kind == NBC__N_FLOAT) {
    k.kind = K_FLOAT;
    k.f = n->value.f;
  }
  return k;
}

/* The truth of a constant expression node: 1 true, 0 false, -1 not a constant. */
static int truth(const nbc__node *n) {
  switch (n ? n->kind : NBC__N_OTHER_EXPR) {
  case NBC__N_INT:
  case NBC__N_BOOL: return n->value.i != 0;
  case NBC__N_FLOAT: return n->value.f != 0.0;
  case NBC__N_NONE: return 0;
  case NBC__N_STR: return n->str && n->str[0] != '\0';
  default: return -1;
  }
}

/* n becomes the integer constant v when v fits int64 or uint64 (a uint64 literal, as `big`);
 * false (n unchanged) otherwise. */
static bool set_int(nbc__node *n, fold_i128 v) {
  if (v < INT64_MIN || v > (fold_i128)UINT64_MAX) return false;
  n->kind = NBC__N_INT;
  n->big = v > INT64_MAX;
  n->value.i = (int64_t)(uint64_t)v;
  n->a = n->b = n->c = NULL;
  return true;
}

static void set_bool(nbc__node *n, bool v) {
  n->kind = NBC__N_BOOL;
  n->value.i = v;
  n->big = false;
  n->a = n->b = n->c = NULL;
}

static bool set_float(nbc__node *n, double v) {
  n->kind = NBC__N_FLOAT;
  n->value.f = v;
  n->big = false;
  n->a = n->b = n->c = NULL;
  return true;
}

/* An integer that converts to double exactly (Python's int.__float__ rounds larger ones, and
 * this file folds only what it computes as Python does). */
static bool exact_double(fold_i128 v, double *pd) {
  if (v < -((fold_i128)1 << 53) || v > ((fold_i128)1 << 53)) return false;
  *pd = (double)(int64_t)v;
  return true;
}

static bool as_double(const konst *k, double *pd) {
  if (k->kind == K_FLOAT) return *pd = k->f, true;
  return exact_double(k->i, pd);
}

/* Python's int ** int for a non-negative exponent, or false beyond 2**64 in magnitude. */
static bool int_pow(fold_i128 base, fold_i128 exp, fold_i128 *pr) {
  const fold_i128 limit = (fold_i128)UINT64_MAX;
  fold_i128 r = 1;
  for (fold_i128 e = exp; e > 0; e--) {
    if (base == 0 || r == 0) return *pr = 0, true;
    if (base == 1) break;
    if (base == -1) {
      r = (exp % 2) ? -r : r;
      break;
    }
    r *= base;
    if (r > limit || r < -limit) return false;
  }
  *pr = r;
  return true;
}

/* Python's float divmod (Objects/floatobject.c, float_divmod); w != 0. */
static void float_divmod(double v, double w, double *pfloordiv, double *pmod) {
  double mod = fmod(v, w), div = (v - mod) / w, floordiv;
  if (mod) {
    if ((w < 0) != (mod < 0)) {
      mod += w;
      div -= 1.0;
    }
  } else {
    mod = copysign(0.0, w);
  }
  if (div) {
    floordiv = floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
  } else {
    floordiv = copysign(0.0, v / w);
  }
  *pfloordiv = floordiv;
  *pmod = mod;
}

/* a op b on two integers into n, as Python computes it; false to leave n as written. */
static bool fold_int_binop(nbc__node *n, const konst *a, const konst *b) {
  fold_i128 x = a->i, y = b->i, r;
  double dx, dy;
  switch (n->op) {
  case NBC__OP_ADD: return set_int(n, x + y);
  case NBC__OP_SUB: return set_int(n, x - y);
  case NBC__OP_MUL: return set_int(n, x * y); /* |x|, |y| < 2**64: no 128-bit overflow */
  case NBC__OP_FLOORDIV:
  case NBC__OP_MOD:
    if (y == 0) return false;
    r = x % y;
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    return set_int(n, n->op == NBC__OP_MOD ? r : (x - r) / y);
  case NBC__OP_DIV:
    if (y == 0 || !exact_double(x, &dx) || !exact_double(y, &dy)) return false;
    return set_float(n, dx / dy);
  case NBC__OP_POW:
    if (y < 0) { /* a float, as Python's int.__pow__ with a negative exponent */
      if (x == 0 || !exact_double(x, &dx) || !exact_double(y, &dy)) return false;
      double p = pow(dx, dy);
      return isfinite(p) && set_float(n, p);
    }
    return int_pow(x, y, &r) && set_int(n, r);
  case NBC__OP_LSHIFT:
    if (y < 0 || y > 64) return false;
    if (x == 0) return set_int(n, 0);
    r = x * ((fold_i128)1 << (int)y); /* |x| < 2**64, y <= 64: fits 128 bits */
    return set_int(n, r);
  case NBC__OP_RSHIFT:
    if (y < 0) return false;
    if (y >= 100) return set_int(n, x < 0 ? -1 : 0);
    return set_int(n, x >= 0 ? x >> (int)y : ~(~x >> (int)y));
  case NBC__OP_BITAND:
  case NBC__OP_BITOR:
  case NBC__OP_BITXOR:
    r = n->op == NBC__OP_BITAND ? (x & y) : n->op == NBC__OP_BITOR ? (x | y) : (x ^ y);
    if (a->is_bool && b->is_bool) return set_bool(n, r != 0), true; /* bool & bool is bool */
    return set_int(n, r);
  default: return false;
  }
}

/* a op b with a float operand into n, as Python computes it; false to leave n as written. */
static bool fold_float_binop(nbc__node *n, const konst *a, const konst *b) {
  double x, y, q, m;
  if (!as_double(a, &x) || !as_double(b, &y)) return false;
  switch (n->op) {
  case NBC__OP_ADD: return set_float(n, x + y);
  case NBC__OP_SUB: return set_float(n, x - y);
  case NBC__OP_MUL: return set_float(n, x * y);
  case NBC__OP_DIV: return y != 0.0 && set_float(n, x / y);
  case NBC__OP_FLOORDIV:
  case NBC__OP_MOD:
    if (y == 0.0) return false;
    float_divmod(x, y, &q, &m);
    return set_float(n, n->op == NBC__OP_MOD ? m : q);
  case NBC__OP_POW: {
    /* Python raises for 0.0 ** negative, gives a complex for negative ** fraction and
     * raises on overflow: those stay as written */
    if (!isfinite(x) || !isfinite(y) || (x == 0.0 && y < 0) || (x < 0 && y != floor(y)))
      return false;
    double p = pow(x, y);
    return isfinite(p) && set_float(n, p);
  }
  default: return false; /* shifts and bitwise operators raise TypeError on floats */
  }
}

/* A folded operation is placed where its expression starts (its left operand), as any
 * other constant is. */
static void fold_binop(nbc__node *n) {
  konst a = konst_of(n->a), b = konst_of(n->b);
  if (a.kind == K_NONE || b.kind == K_NONE) return;
  const nbc__token *start = n->a->tok;
  bool folded = a.kind == K_INT && b.kind == K_INT ? fold_int_binop(n, &a, &b)
                                                   : fold_float_binop(n, &a, &b);
  if (folded) n->tok = start;
}

static void fold_unary(nbc__node *n) {
  if (n->op == NBC__OP_NOT) {
    int t = truth(n->a);
    if (t >= 0) set_bool(n, !t);
    return;
  }
  konst a = konst_of(n->a);
  if (a.kind == K_INT) {
    if (n->op == NBC__OP_NEG) set_int(n, -a.i);
    else if (n->op == NBC__OP_POS) set_int(n, a.i);
    else if (n->op == NBC__OP_INVERT) set_int(n, ~a.i);
  } else if (a.kind == K_FLOAT) {
    if (n->op == NBC__OP_NEG) set_float(n, -a.f);
    else if (n->op == NBC__OP_POS) set_float(n, a.f);
  }
}

/* ---------------------------------------------------------------------- the walk --- */

typedef struct folder {
  nbc__ctx *ctx;
} folder;

static void fold_expr(folder *F, nbc__node *n);
static bool fold_body(folder *F, nbc__list *body, const nbc__token *at);

/* Replaces n by a copy of what it evaluates to (*with), keeping n's position. */
static void become(nbc__node *n, const nbc__node *with) {
  const nbc__token *tok = n->tok;
  *n = *with;
  n->tok = tok;
}

static void fold_list(folder *F, nbc__list *list) {
  for (int i = 0; i < list->count; i++) fold_expr(F, list->items[i]);
}

static void fold_expr(folder *F, nbc__node *n) {
  if (!n) return;
  switch (n->kind) {
  case NBC__N_NAME:
    if (n->str && strcmp(n->str, "__debug__") == 0) set_bool(n, true);
    return;
  case NBC__N_BINOP:
    fold_expr(F, n->a);
    fold_expr(F, n->b);
    fold_binop(n);
    return;
  case NBC__N_UNARY:
    fold_expr(F, n->a);
    fold_unary(n);
    return;
  case NBC__N_BOOLOP: { /* `c and x` is x when c is true, c when false; `or` the reverse */
    fold_expr(F, n->a);
    fold_expr(F, n->b);
    int t = truth(n->a);
    if (t < 0) return;
    bool keep_left = n->op == NBC__OP_AND ? !t : t;
    become(n, keep_left ? n->a : n->b);
    return;
  }
  case NBC__N_IFEXP: { /* b if a else c */
    fold_expr(F, n->a);
    fold_expr(F, n->b);
    fold_expr(F, n->c);
    int t = truth(n->a);
    if (t >= 0) become(n, t ? n->b : n->c);
    return;
  }
  case NBC__N_FUNCDEF:
    for (int i = 0; i < n->params.count; i++) fold_expr(F, n->params.items[i]->a);
    fold_list(F, &n->decorators);
    fold_body(F, &n->body, n->tok);
    return;
  default:
    fold_expr(F, n->a);
    fold_expr(F, n->b);
    fold_expr(F, n->c);
    fold_list(F, &n->list);
    return;
  }
}

static bool is_jump(const nbc__node *s) {
  return s->kind == NBC__N_RETURN || s->kind == NBC__N_RAISE || s->kind == NBC__N_BREAK ||
         s->kind == NBC__N_CONTINUE;
}

/* Appends s, or the statements that replace it, to out (arena memory, room for cap);
 * *pdone when a jump ends the block. */
static bool append_stmt(folder *F, nbc__node *s, nbc__list *out, int *pcap, bool *pdone) {
  if (*pdone) return true;
  if (out->count == *pcap) {
    int cap = *pcap ? 2 * *pcap : 8;
    nbc__node **items = nbc__arena_alloc(F->ctx->arena, sizeof *items * (size_t)cap);
    if (!items) return nbc__diag_oom(F->ctx), false;
    if (out->count) memcpy(items, out->items, sizeof *items * (size_t)out->count);
    out->items = items;
    *pcap = cap;
  }
  out->items[out->count++] = s;
  *pdone = is_jump(s);
  return true;
}

/* Folds a block: constant `if` / `while` tests keep the branch taken, and nothing follows
 * a jump. A block left empty holds `pass` (at: its owner's position). */
static bool fold_body(folder *F, nbc__list *body, const nbc__token *at) {
  nbc__list out = {NULL, 0};
  int cap = 0;
  bool done = false;
  for (int i = 0; i < body->count && !done; i++) {
    nbc__node *s = body->items[i];
    const nbc__list *taken = NULL;
    switch (s->kind) {
    case NBC__N_IF:
    case NBC__N_WHILE: {
      fold_expr(F, s->a);
      if (!fold_body(F, &s->body, s->tok) || !fold_body(F, &s->orelse, s->tok)) return false;
      int t = truth(s->a);
      /* `if c:` keeps one branch; `while c:` with c false runs only its else */
      if (s->kind == NBC__N_IF && t >= 0) taken = t ? &s->body : &s->orelse;
      else if (s->kind == NBC__N_WHILE && t == 0) taken = &s->orelse;
      /* a pass the fold put in an empty else is nothing */
      if (taken && taken->count == 1 && taken->items[0]->kind == NBC__N_PASS &&
          taken->items[0]->tok == s->tok)
        continue;
      break;
    }
    case NBC__N_FOR:
      fold_expr(F, s->a);
      fold_expr(F, s->b);
      if (!fold_body(F, &s->body, s->tok) || !fold_body(F, &s->orelse, s->tok)) return false;
      break;
    case NBC__N_TRY:
      if (!fold_body(F, &s->body, s->tok) || !fold_body(F, &s->orelse, s->tok)) return false;
      break;
    default:
      fold_expr(F, s);
      break;
    }
    if (taken) {
      for (int j = 0; j < taken->count; j++)
        if (!append_stmt(F, taken->items[j], &out, &cap, &done)) return false;
    } else if (!append_stmt(F, s, &out, &cap, &done)) {
      return false;
    }
  }
  if (body->count > 0 && out.count == 0) { /* every statement folded away */
    nbc__node *pass = nbc__node_new(F->ctx->arena, NBC__N_PASS, at);
    if (!pass) return nbc__diag_oom(F->ctx), false;
    bool unused = false;
    if (!append_stmt(F, pass, &out, &cap, &unused)) return false;
  }
  *body = out;
  return true;
}

bool nbc__fold_module(nbc__ctx *ctx, nbc__node *module) {
  folder F = {ctx};
  return fold_body(&F, &module->body, module->tok);
}

bool nbc__fold_function(nbc__ctx *ctx, nbc__node *def) {
  folder F = {ctx};
  return fold_body(&F, &def->body, def->tok);
}
