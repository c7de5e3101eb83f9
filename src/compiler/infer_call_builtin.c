/* infer_call_builtin.c — calls of Python's builtins as numba types them in kernels: range,
 * len, abs, min, max, sum, int, float (float("nan") folded), bool, round, complex, divmod,
 * pow, isinstance (a constant of compile time), and sum/min/max of an iterable through
 * arraymath.c's generated functions.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/infer.h"

/* complex(re[, im]) as numba types it: integers and float32/float64 parts (one complex
 * argument alone is made complex128); complex64 only when every part is float32. */
static const nbc__type *call_complex(infer *I, nbc__node *n, const nbc__type **types,
                                     int nargs) {
  bool ok = nargs == 1 || nargs == 2, all_f32 = true;
  for (int i = 0; ok && i < nargs; i++) {
    const nbc__type *t = types[i];
    bool part =
        nbc__type_is_int(t) || (t && (t->kind == NBC__T_FLOAT32 || t->kind == NBC__T_FLOAT64));
    ok = part || (nargs == 1 && nbc__type_is_complex(t));
    if (!t || t->kind != NBC__T_FLOAT32) all_f32 = false;
  }
  if (!ok) return nbc__infer_call_arg_list_error(I, n, "complex", types, nargs);
  nbc__call *c = nbc__infer_call_new(I, n, NBC__B_COMPLEX, "complex", nargs);
  if (!c) return NULL;
  for (int i = 0; i < nargs; i++)
    c->argtypes[i] = types[i];
  c->ret = T(all_f32 ? NBC__T_COMPLEX64 : NBC__T_COMPLEX128);
  return c->ret;
}

static const nbc__type *call_iterable(infer *I, nbc__node *n, const char *name,
                                      const nbc__type **types, int nargs);

const nbc__type *nbc__infer_call_builtin(infer *I, nbc__node *n, const char *name,
                                         const nbc__type **types, int nargs) {
  nbc__builtin b;
  if (!nbc__infer_call_no_keywords(I, n, name)) return NULL;
  bool via_float32 = strcmp(name, "abs") == 0 || strcmp(name, "round") == 0 ||
                     strcmp(name, "bool") == 0; /* numba-cuda: of a bfloat16's float32 */
  for (int i = 0; via_float32 && i < nargs; i++)
    if (nbc__type_is_bf16(types[i])) types[i] = T(NBC__T_FLOAT32);
  if (strcmp(name, "sum") == 0 ||
      ((strcmp(name, "min") == 0 || strcmp(name, "max") == 0) && nargs == 1 &&
       (is_kind(types[0], NBC__T_ARRAY) || is_kind(types[0], NBC__T_TUPLE))))
    return call_iterable(I, n, name, types, nargs);
  if (strcmp(name, "range") == 0) {
    const char *why;
    const nbc__type *ctr = nbc__type_range(types, nargs, &why);
    if (!ctr) return nbc__infer_call_arg_list_error(I, n, "range", types, nargs);
    const nbc__type *state = nbc__type_special(I->ctx, NBC__T_RANGE, NULL, ctr);
    return state ? nbc__infer_call_record_each(I, n, NBC__B_RANGE, "range", nargs, ctr, state)
                 : NULL; /* range_state_<ctr> */
  }
  if (strcmp(name, "len") == 0) {
    if (nargs != 1 || !(is_kind(types[0], NBC__T_ARRAY) || is_kind(types[0], NBC__T_TUPLE) ||
                        is_kind(types[0], NBC__T_RANGE) || is_kind(types[0], NBC__T_FLAT))) {
      if (n->alias && strcmp(n->alias, "$iter") == 0 && nargs == 1) /* desugar.c's loop */
        return TYPING(I, n, "'%s' object is not iterable", nbc__infer_tname(I, types[0])), NULL;
      return nbc__infer_call_arg_list_error(I, n, "len", types, nargs);
    }
    nbc__call *c = nbc__infer_call_new(I, n, NBC__B_LEN, "len", 1);
    if (!c) return NULL;
    c->argtypes[0] = types[0];
    /* numba: intp (a.flat's: the size), but a range's length is its counter type
     * (range_state_int32: int32) */
    c->ret = is_kind(types[0], NBC__T_RANGE) ? types[0]->dtype : T(NBC__T_INT64);
    return c->ret;
  }
  if (strcmp(name, "pow") == 0) { /* numba's pow(a, b) is a ** b: the node becomes that */
    if (nargs != 2 || n->list.items[0]->kind == NBC__N_KEYWORD ||
        n->list.items[1]->kind == NBC__N_KEYWORD)
      return UNSUPPORTED(I, n,
                         "pow() takes two positional arguments in a kernel (a modulus "
                         "is not supported)"),
             NULL;
    nbc__node *base = n->list.items[0], *exponent = n->list.items[1];
    n->kind = NBC__N_BINOP;
    n->op = NBC__OP_POW;
    n->a = base;
    n->b = exponent;
    n->list.count = 0;
    n->info = NULL;
    return nbc__infer_expr(I, n);
  }
  if (strcmp(name, "tuple") == 0) { /* tuple(t) of a tuple is t itself: the node becomes it */
    if (nargs != 1 || n->list.items[0]->kind == NBC__N_KEYWORD ||
        !is_kind(types[0], NBC__T_TUPLE))
      return UNSUPPORTED(I, n, "tuple() in a kernel takes one tuple (it is that tuple)"), NULL;
    *n = *n->list.items[0];
    return nbc__infer_expr(I, n);
  }
  if (strcmp(name, "complex") == 0) return call_complex(I, n, types, nargs);
  if (strcmp(name, "divmod") == 0) { /* (a // b, a % b), each typed as that operator */
    const nbc__type *conv[2], *items[2];
    const char *reason;
    items[0] = nargs == 2
                   ? nbc__type_binop_sig(NBC__OP_FLOORDIV, types[0], types[1], conv, &reason)
                   : NULL;
    items[1] =
        items[0] ? nbc__type_binop_sig(NBC__OP_MOD, types[0], types[1], conv, &reason) : NULL;
    if (!items[0] || !items[1])
      return nbc__infer_call_arg_list_error(I, n, "divmod", types, nargs);
    nbc__call *c = nbc__infer_call_new(I, n, NBC__B_DIVMOD, "divmod", 2);
    if (!c) return NULL;
    c->argtypes[0] = types[0];
    c->argtypes[1] = types[1];
    c->ret = nbc__type_tuple(I->ctx, items, 2);
    return c->ret;
  }
  if (strcmp(name, "abs") == 0)
    b = NBC__B_ABS;
  else if (strcmp(name, "min") == 0)
    b = NBC__B_MIN;
  else if (strcmp(name, "max") == 0)
    b = NBC__B_MAX;
  else if (strcmp(name, "int") == 0)
    b = NBC__B_INT;
  else if (strcmp(name, "float") == 0)
    b = NBC__B_FLOAT;
  else if (strcmp(name, "bool") == 0)
    b = NBC__B_BOOL;
  else
    b = NBC__B_ROUND;
  const nbc__type *conv[16];
  nbc__type_why why = {NBC__TYPE_NO_MATCH, NULL};
  const nbc__type *r =
      nargs <= 16 ? nbc__type_call_builtin(name, types, nargs, conv, &why) : NULL;
  if (!r && why.kind == NBC__TYPE_REFUSED) return TYPING(I, n, "%s", why.text), NULL;
  if (!r) return nbc__infer_call_arg_list_error(I, n, name, types, nargs);
  return nbc__infer_call_record(I, n, b, name, nargs, conv, r);
}

/* float("nan"), float("-inf"), float("1.5"): the number Python's float() makes of the literal,
 * the call becoming that constant (numba types float() of a string literal and folds it). */
const nbc__type *nbc__infer_call_builtin_float_of_string(infer *I, nbc__node *n) {
  const char *text = n->list.items[0]->str ? n->list.items[0]->str : "";
  while (*text == ' ' || *text == '\t' || *text == '\n')
    text++;
  char *end = NULL;
  double v = strtod(text, &end);
  while (end && (*end == ' ' || *end == '\t' || *end == '\n'))
    end++;
  bool hex = strchr(text, 'x') || strchr(text, 'X'); /* strtod reads hex, Python does not */
  if (!end || end == text || *end || hex)
    return TYPING(I, n, "could not convert string to float: '%s'", text), NULL;
  n->kind = NBC__N_FLOAT;
  n->value.f = v;
  n->list.count = 0;
  return nbc__infer_expr(I, n);
}

/* sum(it[, start]), min(it) and max(it) of a 1-d array or a tuple: a call of arraymath.c's
 * function, as numba's builtins.py overloads them; sum's default start, 0, becomes the call's
 * second argument. */
static const nbc__type *call_iterable(infer *I, nbc__node *n, const char *name,
                                      const nbc__type **types, int nargs) {
  bool sum = strcmp(name, "sum") == 0;
  if (nargs < 1 || nargs > (sum ? 2 : 1))
    return TYPING(I, n, "%s() takes %s", name,
                  sum ? "an iterable and an optional start" : "one iterable or several values"),
           NULL;
  const nbc__type *it = types[0];
  bool tuple = it->kind == NBC__T_TUPLE, array = it->kind == NBC__T_ARRAY;
  bool range = sum && it->kind == NBC__T_RANGE && it->dtype; /* sum(range(...)) */
  if (!(tuple && it->count > 0) && !(array && it->ndim == 1) && !range)
    return TYPING(I, n,
                  "%s() of %s is not supported in kernels (1-d arrays and non-empty "
                  "tuples are: a 2-d array iterates its rows)",
                  name, nbc__infer_tname(I, it)),
           NULL;
  const nbc__type *items = array || range ? it->dtype : it->items[0];
  for (int k = 0; tuple && k < it->count; k++)
    if (!nbc__type_is_number(it->items[k])) items = it->items[k];
  bool dates = !sum && nbc__type_is_datetime(items); /* of one type, as numba unifies them */
  for (int k = 0; dates && tuple && k < it->count; k++)
    dates = nbc__type_equal(it->items[k], items);
  if (!dates && (!nbc__type_is_number(items) || (!sum && nbc__type_is_complex(items))))
    return TYPING(I, n, "%s() of %s: %s", name, nbc__infer_tname(I, it),
                  sum ? "its items are not numbers" : "its items have no order"),
           NULL;
  const char *fn = sum ? "_sum" : strcmp(name, "min") == 0 ? "_min" : "_max";
  nbc__global *G = nbc__infer_call_method_generated_function(
      I, fn, nbc__builtin_reduction_source(I->ctx, name, it));
  if (!G) return NULL;
  if (sum && nargs == 1) { /* numba's default start: the int64 0 */
    nbc__node *zero = nbc__infer_alloc(I, sizeof *zero);
    nbc__node **list = nbc__infer_alloc(I, sizeof *list * 2);
    if (!zero || !list) return NULL;
    *zero = (nbc__node){.kind = NBC__N_INT, .tok = n->tok, .var = -1};
    list[0] = n->list.items[0];
    list[1] = zero;
    n->list.items = list;
    n->list.count = 2;
    if (!nbc__infer_expr(I, zero)) return NULL;
  }
  const nbc__type *argv[2] = {it, sum ? (nargs == 2 ? types[1] : T(NBC__T_INT64)) : NULL};
  if (sum && !nbc__type_is_number(argv[1]))
    return TYPING(I, n, "sum() start must be a number, not %s", nbc__infer_tname(I, argv[1])),
           NULL;
  return nbc__infer_call_user_python(I, n, G, argv, sum ? 2 : 1);
}

/* Whether a value of type t is an instance of the class spec names, as numba's isinstance
 * answers at compile time: int, float, complex and bool are numba's types of Python's
 * values, int64, float64, complex128 and boolean, matched exactly (an int32 is not an int
 * there, a float32 not a float); tuple matches any tuple; a numba or numpy type
 * (numba.float32, np.int64) matches that type, a tuple display any of its items (numba-cuda
 * 0.30.4's answers). 1 or 0; -1 reported when spec is none of these. */
int nbc__infer_isinstance(infer *I, const nbc__type *t, nbc__node *spec) {
  if (spec->kind == NBC__N_TUPLE) {
    int any = 0;
    for (int i = 0; i < spec->list.count; i++) {
      int r = nbc__infer_isinstance(I, t, spec->list.items[i]);
      if (r < 0) return -1;
      any |= r;
    }
    spec->type = T(NBC__T_NONE); /* no value of its own */
    return any;
  }
  const nbc__type *c = nbc__infer_expr(I, spec);
  if (!c) return -1;
  const nbc__global *G = spec->kind == NBC__N_NAME && spec->var < 0 ? spec->info : NULL;
  if (c->kind == NBC__T_DTYPE && c->dtype) return nbc__type_equal(t, c->dtype);
  if (G && nbc__infer_is_builtin(G)) {
    const char *k = G->g.name;
    if (strcmp(k, "int") == 0) return is_kind(t, NBC__T_INT64);
    if (strcmp(k, "float") == 0) return is_kind(t, NBC__T_FLOAT64);
    if (strcmp(k, "complex") == 0) return is_kind(t, NBC__T_COMPLEX128);
    if (strcmp(k, "bool") == 0) return is_kind(t, NBC__T_BOOL);
    if (strcmp(k, "tuple") == 0) return is_kind(t, NBC__T_TUPLE);
  }
  TYPING(I, spec,
         "isinstance() takes int, float, complex, bool, tuple, a numba or numpy "
         "scalar type, or a tuple of those, not %s",
         nbc__infer_tname(I, c));
  return -1;
}

/* isinstance(x, spec): a constant of compile time (numba's), the node made that boolean. */
const nbc__type *nbc__infer_call_builtin_isinstance(infer *I, nbc__node *n) {
  if (!nbc__infer_call_no_keywords(I, n, "isinstance")) return NULL;
  if (n->list.count != 2)
    return TYPING(I, n, "isinstance() takes 2 arguments (%d given)", n->list.count), NULL;
  const nbc__type *t = nbc__infer_expr(I, n->list.items[0]);
  if (!t) return NULL;
  int r = nbc__infer_isinstance(I, t, n->list.items[1]);
  if (r < 0) return NULL;
  if (I->final) { /* the value is known: the node is that constant from now on */
    n->kind = NBC__N_BOOL;
    n->value.i = r;
    n->list.count = 0;
  }
  return T(NBC__T_BOOL);
}
