/* infer_stmt.c — the types statements give their variables: assignments (to variables,
 * array elements and views, record fields, a.flat[i]; string literals to several targets),
 * augmented assignments, returns (unified into the function's return type), loops, ifs,
 * nested function definitions and the rest of a function body.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/infer.h"

/* An element store of a t value into an element of type dt (an array's or a pointer's,
 * `where` says which): a number that converts, cast there; else numba's error. */
/* The characters of a string literal in its own type: b"..." a CharSeq of its bytes, "..." a
 * UnicodeCharSeq of its code points (the lexer keeps text as UTF-8). */
static const nbc__type *string_literal_type(infer *I, nbc__node *n) {
  const unsigned char *s = (const unsigned char *)(n->str ? n->str : "");
  int64_t count = 0;
  for (; *s; s++)
    count += n->value.i || (*s & 0xc0) != 0x80; /* bytes, or UTF-8 lead bytes */
  const nbc__type *t =
      nbc__type_charseq(I->ctx, n->value.i ? NBC__T_CHARSEQ : NBC__T_UNICHARSEQ, count);
  n->type = t;
  return t;
}

/* A string literal one assignment would store as two string types: it is lowered once. */
static void chained_literal_error(infer *I, nbc__node *literal, const nbc__type *a,
                                  const nbc__type *b) {
  TYPING(I, literal,
         "Cannot store one string literal as %s and as %s in one assignment: "
         "assign it to each target separately",
         nbc__infer_tname(I, a), nbc__infer_tname(I, b));
}

/* A string stored into an element or field of string type dt (numpy's S<n> or U<n>): a
 * literal of the same kind is written padded with zeros, or cut, to dt's length (numpy's and
 * numba's assignment); any other value must have dt's type. */
static void store_string(infer *I, nbc__node *target, nbc__node *value, const nbc__type *t,
                         const nbc__type *dt, const char *where) {
  if (value && value->kind == NBC__N_STR && t && t->kind == dt->kind) {
    if (value == I->chained_literal) {
      if (I->chained_literal_type && !nbc__type_equal(I->chained_literal_type, dt)) {
        chained_literal_error(I, value, I->chained_literal_type, dt);
        return;
      }
      I->chained_literal_type = dt;
    }
    value->type = dt; /* lowered as a constant of dt's length */
    return;
  }
  if (!nbc__type_equal(t, dt))
    TYPING(I, value ? value : target, "Cannot convert %s to %s in %s assignment%s",
           nbc__infer_tname(I, t), nbc__infer_tname(I, dt), where,
           t && t->kind != dt->kind && nbc__type_is_charseq(t)
               ? " (bytes go to S arrays, str to U arrays)"
               : "");
}

static void store_number(infer *I, nbc__node *target, nbc__node *value, const nbc__type *t,
                         const nbc__type *dt, const char *where) {
  if (!(nbc__type_is_number(t) || nbc__type_is_datetime(t) || nbc__type_is_bf16(t)) ||
      !nbc__type_can_convert(t, dt)) {
    TYPING(I, value ? value : target, "Cannot convert %s to %s in %s assignment",
           nbc__infer_tname(I, t), nbc__infer_tname(I, dt), where);
    return;
  }
  if (value) nbc__infer_cast(value, dt);
}

/* Assigns a value of type t (node value, or NULL inside an unpacking) to target. */
static void assign_target(infer *I, nbc__node *target, nbc__node *value, const nbc__type *t);

void nbc__infer_assign_target(infer *I, nbc__node *target, nbc__node *value,
                              const nbc__type *t) {
  assign_target(I, target, value, t);
}

static void assign_target(infer *I, nbc__node *target, nbc__node *value, const nbc__type *t) {
  switch (target->kind) {
  case NBC__N_NAME: {
    int v = nbc__infer_var_find(I, target->str);
    target->var = v;
    target->info = NULL;
    if (!t) return;
    if (!nbc__infer_var_assign(I, v, t, target)) return;
    target->type = I->fn->vars[v].type;
    if (I->final) {
      const nbc__type *vt = I->fn->vars[v].type;
      if (value)
        nbc__infer_cast(value, vt);
      else {
        target->type = t;
        nbc__infer_cast(target, vt);
      }
    }
    return;
  }
  case NBC__N_ATTR:
  case NBC__N_SUBSCRIPT: {
    const nbc__type *o = nbc__infer_expr(I, target->a);
    if (!o) return;
    if (o->kind == NBC__T_RECORD) { /* rec.x = v, rec['x'] = v */
      if (o->readonly) { /* numba compiles it, and NVVM drops the store to constant memory */
        TYPING(I, target, "cannot modify a read-only array");
        return;
      }
      const nbc__type *ft = target->kind == NBC__N_ATTR
                                ? nbc__infer_record_field(I, target, o, target->str)
                                : nbc__infer_record_subscript(I, target, o);
      target->type = ft;
      if (!ft || !t) return;
      if (ft->kind == NBC__T_RECORD) { /* rec.inner = other: the record's bytes are copied */
        if (!nbc__type_equal(t, ft))
          TYPING(I, value ? value : target,
                 "Cannot convert %s to %s in a record field "
                 "assignment",
                 nbc__infer_tname(I, t), nbc__infer_tname(I, ft));
        return;
      }
      if (ft->kind == NBC__T_ARRAY) { /* rec.arr = src: numba copies the field's elements */
        if (t->kind != NBC__T_ARRAY || !nbc__type_equal(t->dtype, ft->dtype))
          TYPING(I, value ? value : target,
                 "Cannot convert %s to %s in a record field "
                 "assignment (an array field takes an array of its dtype: the field's "
                 "element count is copied from its data)",
                 nbc__infer_tname(I, t), nbc__infer_tname(I, ft));
        return;
      }
      if (nbc__type_is_charseq(ft)) {
        store_string(I, target, value, t, ft, "a record field");
        return;
      }
      if (!(nbc__type_is_number(t) || nbc__type_is_datetime(t)) ||
          !nbc__type_can_convert(t, ft)) {
        TYPING(I, value ? value : target,
               "Cannot convert %s to %s in a record field "
               "assignment",
               nbc__infer_tname(I, t), nbc__infer_tname(I, ft));
        return;
      }
      if (value) nbc__infer_cast(value, ft);
      return;
    }
    if (target->kind == NBC__N_ATTR) {
      UNSUPPORTED(I, target, "cannot assign to attribute '%s' of %s", target->str,
                  nbc__infer_tname(I, o));
      return;
    }
    if (o->kind == NBC__T_POINTER) { /* p[i] = v: the number converted to the pointee */
      const nbc__type *dt = nbc__infer_subscript(I, target);
      target->type = dt;
      if (dt && t) store_number(I, target, value, t, dt, "a pointer");
      return;
    }
    if (o->kind != NBC__T_ARRAY && o->kind != NBC__T_FLAT) {
      nbc__infer_expr(I, target->b);
      TYPING(I, target, "'%s' object does not support item assignment", nbc__infer_tname(I, o));
      return;
    }
    /* a[...] = v, or a.flat[i] = v: the i-th element in C order */
    const nbc__type *dt = o->kind == NBC__T_FLAT
                              ? nbc__infer_subscript(I, target)
                              : nbc__infer_array_index(I, target, o, target->b);
    target->type = dt;
    if (dt && o->kind == NBC__T_FLAT && o->dtype->readonly) {
      TYPING(I, target, "cannot modify a read-only array");
      return;
    }
    if (dt && dt->kind == NBC__T_ARRAY) { /* a[1:3] = number: every element of the view */
      if (!t) return;
      if (dt->readonly) {
        TYPING(I, target, "cannot modify a read-only array");
        return;
      }
      if (nbc__type_is_number(t) && nbc__type_can_convert(t, dt->dtype)) {
        if (value) nbc__infer_cast(value, dt->dtype);
        return;
      }
      /* numba-cuda cannot either: an array source needs its runtime's temporary copy */
      UNSUPPORTED(I, value ? value : target,
                  "assigning %s to an array slice is not "
                  "supported (a number is; copy the elements in a loop)",
                  nbc__infer_tname(I, t));
      return;
    }
    if (!dt || !t) return;
    if (dt->kind == NBC__T_RECORD) { /* a[i] = a[j]: the record's bytes are copied */
      if (!nbc__type_equal(t, dt))
        TYPING(I, value ? value : target, "Cannot convert %s to %s in an array assignment",
               nbc__infer_tname(I, t), nbc__infer_tname(I, dt));
      return;
    }
    if (nbc__type_is_charseq(dt)) {
      store_string(I, target, value, t, dt, "an array");
      return;
    }
    store_number(I, target, value, t, dt, "an array");
    return;
  }
  case NBC__N_TUPLE:
  case NBC__N_LIST: {
    if (!t) {
      for (int i = 0; i < target->list.count; i++)
        assign_target(I, target->list.items[i], NULL, NULL);
      return;
    }
    if (t->kind != NBC__T_TUPLE || t->count != target->list.count) {
      TYPING(I, target, "cannot unpack %s into %d values", nbc__infer_tname(I, t),
             target->list.count);
      return;
    }
    for (int i = 0; i < target->list.count; i++)
      assign_target(I, target->list.items[i], NULL, t->items[i]);
    return;
  }
  default:
    UNSUPPORTED(I, target, "cannot assign to this expression");
    return;
  }
}

static void augassign(infer *I, nbc__node *s) {
  nbc__node *t = s->a;
  if (t->kind != NBC__N_NAME && t->kind != NBC__N_SUBSCRIPT && t->kind != NBC__N_ATTR) {
    UNSUPPORTED(I, t, "cannot assign to this expression");
    return;
  }
  const nbc__type *a = nbc__infer_expr(I, t);
  const nbc__type *b = nbc__infer_expr(I, s->b);
  s->cast = NULL;
  s->type = NULL;
  if (!a || !b) return;
  const nbc__type *args[2];
  const char *why;
  const nbc__type *r = nbc__type_binop_sig(s->op, a, b, args, &why);
  if (!r) {
    TYPING(I, s, "Invalid use of %s= with parameters (%s, %s)", nbc__op_text(s->op),
           nbc__infer_tname(I, a), nbc__infer_tname(I, b));
    return;
  }
  nbc__infer_cast(t, args[0]);
  nbc__infer_cast(s->b, args[1]);
  s->type = r;
  if (t->kind == NBC__N_NAME) {
    if (!nbc__infer_var_assign(I, t->var, r, s)) return;
    const nbc__type *vt = I->fn->vars[t->var].type;
    s->cast = nbc__type_equal(vt, r) ? NULL : vt;
  } else {
    if (t->kind == NBC__N_ATTR && (!t->a->type || t->a->type->kind != NBC__T_RECORD)) {
      UNSUPPORTED(I, t, "cannot assign to attribute '%s' of %s", t->str,
                  nbc__infer_tname(I, t->a->type));
      return;
    }
    if (!nbc__type_can_convert(r, a)) {
      TYPING(I, s, "Cannot convert %s to %s in an array assignment", nbc__infer_tname(I, r),
             nbc__infer_tname(I, a));
      return;
    }
    s->cast = nbc__type_equal(a, r) ? NULL : a;
  }
}

bool nbc__infer_stmt_always_returns(const nbc__list *body) {
  for (int i = 0; i < body->count; i++) {
    const nbc__node *s = body->items[i];
    if (s->kind == NBC__N_RETURN) return true;
    if (s->kind == NBC__N_IF && nbc__infer_stmt_always_returns(&s->body) &&
        nbc__infer_stmt_always_returns(&s->orelse))
      return true;
    if (s->kind == NBC__N_WHILE && s->a &&
        (s->a->kind == NBC__N_BOOL || s->a->kind == NBC__N_INT) && s->a->value.i != 0) {
      /* `while True:` without a break only leaves by returning. */
      bool brk = false;
      for (int k = 0; k < s->body.count; k++)
        if (s->body.items[k]->kind == NBC__N_BREAK) brk = true;
      if (!brk) return true;
    }
  }
  return false;
}

static void ret_stmt(infer *I, nbc__node *s) {
  const nbc__type *t = s->a ? nbc__infer_expr_keeping_optional(I, s->a) : T(NBC__T_NONE);
  if (!t) return;
  if (s->a && !nbc__type_is_number(t) && !nbc__type_is_datetime(t) && t->kind != NBC__T_NONE &&
      t->kind != NBC__T_TUPLE && t->kind != NBC__T_ARRAY && t->kind != NBC__T_VECTOR &&
      t->kind != NBC__T_RECORD && t->kind != NBC__T_OPTIONAL && t->kind != NBC__T_ENUM &&
      !nbc__type_is_bf16(t)) {
    TYPING(I, s->a, "cannot return a value of type %s", nbc__infer_tname(I, t));
    return;
  }
  const nbc__type *declared = I->fn->ret;
  if (declared) {
    if (declared->kind == NBC__T_VOID || declared->kind == NBC__T_NONE) {
      if (t->kind != NBC__T_NONE)
        TYPING(I, s->a, "cannot return %s from a function declared to return %s",
               nbc__infer_tname(I, t), nbc__infer_tname(I, declared));
      return;
    }
    /* numba's Optional(T).can_convert_to: whatever T converts to (None raising TypeError
     * when the value is converted, lower_expr.c) */
    const nbc__type *value =
        t->kind == NBC__T_OPTIONAL && declared->kind != NBC__T_OPTIONAL ? t->dtype : t;
    if (!nbc__type_can_convert(value, declared)) {
      TYPING(I, s->a ? s->a : s, "cannot convert the returned %s to the declared %s",
             nbc__infer_tname(I, t), nbc__infer_tname(I, declared));
      return;
    }
    if (s->a && I->final) nbc__infer_cast(s->a, declared);
    return;
  }
  if (t->kind != NBC__T_NONE) I->returns_value = true;
  const nbc__type *u = I->ret ? nbc__type_unify(I->ctx, I->ret, t) : t;
  if (!u) {
    TYPING(I, s->a ? s->a : s, "Cannot unify %s and %s for the return value",
           nbc__infer_tname(I, I->ret), nbc__infer_tname(I, t));
    return;
  }
  if (!I->ret || !nbc__type_equal(u, I->ret)) {
    I->ret = u;
    I->changed = true;
  }
}

/* `f = helper` (or `f = g` of such a variable): the variables named by the targets call what
 * the value names, as numba's function types are constants. False when the value is not a
 * name of a function (a module attribute `math.sin` types its calls by the type alone). */
static bool bind_function(infer *I, nbc__node *s) {
  const nbc__node *v = s->a;
  if (v->kind != NBC__N_NAME) return false;
  const nbc__global *G = v->var >= 0 ? I->fn->vars[v->var].function : v->info;
  if (!G) return false;
  for (int k = 0; k < s->list.count; k++) {
    const nbc__node *t = s->list.items[k];
    if (t->kind != NBC__N_NAME || t->var < 0) return false;
    const nbc__global *had = I->fn->vars[t->var].function;
    if (had && had != G && !(had->g.name && G->g.name && strcmp(had->g.name, G->g.name) == 0))
      return TYPING(I, s, "'%s' is bound to two functions", t->str);
    I->fn->vars[t->var].function = G;
  }
  return true;
}

static void stmt(infer *I, nbc__node *s) {
  switch (s->kind) {
  case NBC__N_ASSIGN: {
    /* a value assigned to names only may stay Optional: the variables become Optional */
    bool names = s->list.count > 0;
    for (int k = 0; k < s->list.count; k++)
      names = names && s->list.items[k]->kind == NBC__N_NAME;
    const nbc__type *t = s->a->kind == NBC__N_STR ? string_literal_type(I, s->a)
                         : names                  ? nbc__infer_expr_keeping_optional(I, s->a)
                                                  : nbc__infer_expr(I, s->a);
    bool chained = s->a->kind == NBC__N_STR && s->list.count > 1;
    I->chained_literal = chained ? s->a : NULL;
    I->chained_literal_type = NULL;
    for (int k = 0; k < s->list.count; k++)
      assign_target(I, s->list.items[k], s->a, t);
    if (chained && I->chained_literal_type && !nbc__type_equal(I->chained_literal_type, t))
      for (int k = 0; k < s->list.count; k++) {
        nbc__node_kind kind = s->list.items[k]->kind; /* targets that take the literal's type */
        if (kind == NBC__N_NAME || kind == NBC__N_TUPLE || kind == NBC__N_LIST) {
          chained_literal_error(I, s->a, t, I->chained_literal_type);
          break;
        }
      }
    I->chained_literal = NULL;
    /* a function bound to a name; one of a module (`s = math.sqrt`) is its type alone */
    if (t && t->kind == NBC__T_FUNCTION && (s->a->kind == NBC__N_ATTR || bind_function(I, s)))
      return;
    /* (a dtype may be named: `d = a.dtype`, `d = np.float32`, then d(x), local.array(n, d)) */
    if (t && !nbc__type_is_number(t) && !nbc__type_is_datetime(t) && t->kind != NBC__T_ARRAY &&
        t->kind != NBC__T_TUPLE && !nbc__type_is_charseq(t) && t->kind != NBC__T_NONE &&
        t->kind != NBC__T_GRID_GROUP && t->kind != NBC__T_VECTOR && t->kind != NBC__T_RECORD &&
        t->kind != NBC__T_DTYPE && t->kind != NBC__T_FLAT && t->kind != NBC__T_OPTIONAL &&
        t->kind != NBC__T_POINTER && t->kind != NBC__T_ENUM && !nbc__type_is_bf16(t) &&
        !(t->kind == NBC__T_RANGE && t->dtype))
      TYPING(I, s->a, "cannot assign a value of type %s to a variable", nbc__infer_tname(I, t));
    return;
  }
  case NBC__N_AUGASSIGN:
    augassign(I, s);
    return;
  case NBC__N_EXPR_STMT:
    if (s->a && s->a->kind == NBC__N_STR) return; /* docstring */
    nbc__infer_expr(I, s->a);
    return;
  case NBC__N_IF:
    nbc__infer_expr_truth(I, s->a, nbc__infer_expr(I, s->a));
    nbc__infer_stmts(I, &s->body);
    nbc__infer_stmts(I, &s->orelse);
    return;
  case NBC__N_WHILE: /* the else block runs when the loop ends without a break */
    nbc__infer_expr_truth(I, s->a, nbc__infer_expr(I, s->a));
    I->loop_depth++;
    nbc__infer_stmts(I, &s->body);
    I->loop_depth--;
    nbc__infer_stmts(I, &s->orelse);
    return;
  case NBC__N_FOR: {
    if (s->b && s->b->kind == NBC__N_CALL && s->b->a &&
        ((s->b->a->kind == NBC__N_NAME && strcmp(s->b->a->str, "literal_unroll") == 0) ||
         (s->b->a->kind == NBC__N_ATTR && strcmp(s->b->a->str, "literal_unroll") == 0))) {
      UNSUPPORTED(I, s->b,
                  "literal_unroll() takes a tuple that is a parameter of the "
                  "function, a tuple display, a global tuple or a tuple item of an "
                  "enclosing literal_unroll, and a name as the loop variable");
      return;
    }
    if (!s->b || s->b->kind != NBC__N_CALL || !s->b->a || s->b->a->kind != NBC__N_NAME ||
        strcmp(s->b->a->str, "range") != 0 || nbc__infer_var_find(I, "range") >= 0) {
      nbc__infer_expr(I, s->b);
      UNSUPPORTED(I, s->b ? s->b : s,
                  "for loops must iterate over range(...), an array, "
                  "enumerate(...) or zip(...)");
      return;
    }
    if (s->a->kind != NBC__N_NAME) {
      UNSUPPORTED(I, s->a, "the target of a for loop must be a name");
      return;
    }
    const nbc__type *r = nbc__infer_expr(I, s->b);
    const nbc__call *c = s->b->info;
    if (r && c && c->builtin == NBC__B_RANGE && c->nargs > 0) {
      /* The loop variable takes the counter type. */
      int v = nbc__infer_var_find(I, s->a->str);
      s->a->var = v;
      s->a->info = NULL;
      s->a->type = c->argtypes[0];
      if (nbc__infer_var_assign(I, v, c->argtypes[0], s->a) && I->final)
        nbc__infer_cast(s->a, I->fn->vars[v].type);
    } else if (r) {
      TYPING(I, s->b, "range() needs at least one argument");
    }
    I->loop_depth++;
    nbc__infer_stmts(I, &s->body);
    I->loop_depth--;
    nbc__infer_stmts(I, &s->orelse);
    return;
  }
  case NBC__N_BREAK:
  case NBC__N_CONTINUE:
    if (!I->loop_depth)
      TYPING(I, s, "'%s' outside loop", s->kind == NBC__N_BREAK ? "break" : "continue");
    return;
  case NBC__N_RETURN:
    ret_stmt(I, s);
    return;
  case NBC__N_PASS:
    return;
  case NBC__N_ASSERT: { /* the condition is typed; the message is never evaluated */
    const nbc__type *t = nbc__infer_expr(I, s->a);
    if (t) nbc__infer_expr_truth(I, s->a, t);
    return;
  }
  case NBC__N_RAISE: /* the exception is not evaluated: raising ends the thread */
    return;
  case NBC__N_FUNCDEF:
    UNSUPPORTED(I, s, "unsupported statement: 'def' (nested function)");
    return;
  case NBC__N_IMPORT:
  case NBC__N_IMPORT_FROM: /* named by their keyword: 'import' or 'from' */
    UNSUPPORTED(I, s, "unsupported statement: '%.*s'", s->tok->len, nbc__tok_start(s->tok));
    return;
  case NBC__N_TRY:
    UNSUPPORTED(I, s, "unsupported statement: 'try'");
    return;
  default: {
    const char *what = s->tok && s->tok->len > 0 ? nbc__tok_start(s->tok) : "?";
    int len = s->tok ? s->tok->len : 1;
    UNSUPPORTED(I, s, "unsupported statement: '%.*s'", len, what);
    return;
  }
  }
}

void nbc__infer_stmts(infer *I, nbc__list *body) {
  for (int i = 0; i < body->count && !(I->final && I->failed); i++)
    stmt(I, body->items[i]);
}
