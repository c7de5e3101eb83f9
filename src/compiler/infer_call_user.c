/* infer_call_user.c — calls of Python functions: a function of the kernel's module (or of
 * another module, or nested) is found, its arguments bound to its parameters (keywords,
 * defaults, *args), the literals it needs kept, and it is specialised for the argument types
 * (nbc__infer_specialise, which caches per types and refuses recursion); a function given
 * signatures or declared with one (declare_device) is called with the closest signature's
 * conversions, as numba's overload resolution chooses.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/infer.h"

/* A call of a function declared with its signature (numba's declare_device): the
 * arguments convert to the declared parameter types, the result is the declared type (a
 * scalar, or a CPointer as numba's cooperative-groups example returns). */
const nbc__type *nbc__infer_call_user_declared(infer *I, nbc__node *n, const nbc__global *G,
                                               const nbc__type **types, int nargs) {
  const char *name = G->g.name ? G->g.name : "?";
  if (!nbc__infer_call_no_keywords(I, n, name)) return NULL;
  for (const char *p = name; *p; p++)
    if (!(isalnum((unsigned char)*p) || *p == '_' || *p == '$' || *p == '.'))
      return UNSUPPORTED(I, n, "declared device function name '%s' is not a symbol", name),
             NULL;
  nbc__signature sig;
  if (!G->g.signature || !nbc__signature_parse(I->ctx, G->g.signature, &sig)) {
    I->failed = true;
    return NULL;
  }
  if (!sig.ret)
    return TYPING(I, n,
                  "declared device function '%s' needs a return type in its signature "
                  "'%s'",
                  name, G->g.signature),
           NULL;
  bool void_ret = sig.ret->kind == NBC__T_VOID || sig.ret->kind == NBC__T_NONE;
  if (!void_ret && !nbc__type_is_number(sig.ret) && !is_kind(sig.ret, NBC__T_POINTER))
    return UNSUPPORTED(I, n,
                       "declared device function '%s' returns %s; nbcuda declares "
                       "functions of scalars and pointers to them",
                       name, nbc__infer_tname(I, sig.ret)),
           NULL;
  if (sig.nargs != nargs)
    return TYPING(I, n, "%s() takes %d positional argument%s but %d %s given", name, sig.nargs,
                  sig.nargs == 1 ? "" : "s", nargs, nargs == 1 ? "was" : "were"),
           NULL;
  for (int i = 0; i < nargs; i++) {
    if (is_kind(sig.args[i], NBC__T_POINTER)) { /* numba's CPointer(T): the same pointer */
      if (!nbc__type_equal(types[i], sig.args[i]))
        return TYPING(I, n->list.items[i], "cannot pass a value of type %s to '%s' as %s",
                      nbc__infer_tname(I, types[i]), name, nbc__infer_tname(I, sig.args[i])),
               NULL;
      continue;
    }
    if (!nbc__type_is_number(sig.args[i]))
      return UNSUPPORTED(I, n,
                         "declared device function '%s' takes %s; nbcuda declares "
                         "functions of scalars and pointers to them",
                         name, nbc__infer_tname(I, sig.args[i])),
             NULL;
    if (!nbc__type_is_number(types[i]) || !nbc__type_can_convert(types[i], sig.args[i]))
      return TYPING(I, n->list.items[i], "cannot pass a value of type %s to '%s' as %s",
                    nbc__infer_tname(I, types[i]), name, nbc__infer_tname(I, sig.args[i])),
             NULL;
  }
  nbc__call *c = nbc__infer_call_new(I, n, NBC__B_EXTERN, name, nargs);
  if (!c) return NULL;
  for (int i = 0; i < nargs; i++)
    c->argtypes[i] = sig.args[i];
  c->ret = void_ret ? T(NBC__T_NONE) : sig.ret;
  c->c_abi = G->g.declared_c_abi != 0;
  return c->ret;
}

/* The FUNCDEF a FUNCTION global names and its module: a nested function's lifted def, else
 * the function of that name in its source (loaded once per compilation); NULL reported, as
 * is a parameter list a function cannot have (nbc__infer_check_params). */
static nbc__node *function_def(infer *I, nbc__node *n, nbc__global *G,
                               const nbc__module **pmodule) {
  const nbc__module *module = G->module ? G->module : I->fn->module;
  *pmodule = module;
  nbc__node *def = G->nested ? G->nested->def : NULL;
  if (def) return nbc__infer_check_params(I->ctx, I, def) ? def : NULL;
  bool same = !G->g.source || (module && module->file && module->file->text &&
                               strcmp(G->g.source, module->file->text) == 0);
  if (same && module) def = nbc__module_function_parsed(I->ctx, module, G->g.name);
  if (!def && G->g.source) {
    /* Another source: load it once per compilation. */
    nbc__module *m = NULL;
    for (int i = 0; i < I->P->nmodules; i++)
      if (strcmp(I->P->modules[i]->file->text, G->g.source) == 0) m = I->P->modules[i];
    if (!m) {
      nbc__file *f = nbc__infer_alloc(I, sizeof *f);
      if (!f) return NULL;
      f->name = G->g.filename ? G->g.filename : "<string>";
      f->text = G->g.source;
      f->size = strlen(G->g.source);
      f->first_line = G->g.first_line > 0 ? G->g.first_line : 1;
      f->col_offset = G->g.col_offset;
      m = nbc__module_load_lenient(I->ctx, f);
      if (!m) {
        I->failed = true;
        return NULL;
      }
      nbc__module **ms = nbc__infer_alloc(I, sizeof *ms * (size_t)(I->P->nmodules + 1));
      if (!ms) return NULL;
      if (I->P->nmodules) memcpy(ms, I->P->modules, sizeof *ms * (size_t)I->P->nmodules);
      ms[I->P->nmodules++] = m;
      I->P->modules = ms;
    }
    *pmodule = m;
    def = nbc__module_function_parsed(I->ctx, m, G->g.name);
    if (!def && I->ctx->status == NBC_OK &&
        nbc__module_report_unparsed(I->ctx, m, G->g.name, false))
      return I->failed = true, NULL; /* its own text does not parse */
  }
  if (!def && I->ctx->status != NBC_OK) {
    I->failed = true;
    return NULL;
  }
  if (!def) return TYPING(I, n, "cannot find the source of function '%s'", G->g.name), NULL;
  return nbc__infer_check_params(I->ctx, I, def) ? def : NULL;
}

/* Python's "f() takes 1 positional argument but 2 were given"; a nested function's captured
 * variables (closure.c passes them first) are not counted: they are not the user's. */
static void *arity_error(infer *I, nbc__node *n, const nbc__global *G, int nparams, int given) {
  int hidden = G->nested ? G->nested->ncaptured : 0;
  nparams -= hidden;
  given -= hidden;
  TYPING(I, n, "%s() takes %d positional argument%s but %d %s given", G->g.name, nparams,
         nparams == 1 ? "" : "s", given, given == 1 ? "was" : "were");
  return NULL;
}

static const nbc__type *call_function(infer *I, nbc__node *n, nbc__global *G, nbc__node *def,
                                      const nbc__module *module, const nbc__type **types,
                                      int nargs);

/* A call of a generated Python function (cmath, arraymath.c): positional arguments only. */
const nbc__type *nbc__infer_call_user_python(infer *I, nbc__node *n, nbc__global *G,
                                             const nbc__type **types, int nargs) {
  if (!nbc__infer_call_no_keywords(I, n, G->g.name)) return NULL;
  const nbc__module *module;
  nbc__node *def = function_def(I, n, G, &module);
  return def ? call_function(I, n, G, def, module, types, nargs) : NULL;
}

/* A parameter's default value as the constant the call passes: a number or bool literal
 * (negated or not), None, or a global name of the function's module bound to one; NULL
 * reported.
 * Python evaluates a default once, where the function is defined: a constant is the same
 * wherever it is copied. */
static nbc__node *default_value(infer *I, nbc__node *call, const nbc__global *G,
                                const nbc__module *module, const nbc__node *param) {
  const nbc__node *d = param->a, *lit = d;
  if (lit->kind == NBC__N_UNARY && (lit->op == NBC__OP_NEG || lit->op == NBC__OP_POS))
    lit = lit->a;
  switch (lit->kind) {
  case NBC__N_INT:
  case NBC__N_FLOAT:
  case NBC__N_COMPLEX:
  case NBC__N_BOOL:
    return nbc__node_clone(I->ctx, d);
  case NBC__N_NONE: /* `def f(a, b=None)`: the callee is specialised for a None b */
    return d == lit ? nbc__node_clone(I->ctx, d) : NULL;
  case NBC__N_NAME: {
    if (d != lit) break;
    nbc_global_t g;
    int rc =
        nbc__infer_resolve(G->g.resolver ? G->g.resolver : I->fn->resolver, module, d->str, &g);
    if (rc != 0 || (g.kind != NBC_GLOBAL_INT && g.kind != NBC_GLOBAL_FLOAT &&
                    g.kind != NBC_GLOBAL_BOOL && g.kind != NBC_GLOBAL_NONE))
      break;
    nbc__node *v = nbc__node_clone(I->ctx, d);
    if (!v) return NULL;
    v->kind = g.kind == NBC_GLOBAL_INT    ? NBC__N_INT
              : g.kind == NBC_GLOBAL_BOOL ? NBC__N_BOOL
              : g.kind == NBC_GLOBAL_NONE ? NBC__N_NONE
                                          : NBC__N_FLOAT;
    v->value.i = g.value.i;
    if (g.kind == NBC_GLOBAL_FLOAT) v->value.f = g.value.f;
    v->str = NULL;
    return v;
  }
  default:
    break;
  }
  return TYPING(I, call,
                "the default value of parameter '%s' of %s() is not supported: "
                "kernels take a number, a bool, None, or a global constant of one",
                param->str, G->g.name),
         NULL;
}

/* Python's "f() missing 2 required positional arguments: 'a' and 'b'". */
static void *missing_error(infer *I, nbc__node *n, const char *fname, nbc__node *def,
                           nbc__node **bound, int first) {
  nbc__buf b;
  nbc__buf_init(&b, I->ctx->arena);
  int count = 0, total = 0;
  for (int j = first; j < def->params.count; j++)
    total += !bound[j] && !def->params.items[j]->a;
  for (int j = first; j < def->params.count; j++) {
    if (bound[j] || def->params.items[j]->a) continue;
    count++;
    nbc__buf_printf(&b, "%s'%s'",
                    count == 1       ? ""
                    : count == total ? " and "
                                     : ", ",
                    def->params.items[j]->str);
  }
  TYPING(I, n, "%s() missing %d required positional argument%s: %s", fname, total,
         total == 1 ? "" : "s", b.data ? b.data : "");
  return NULL;
}

/* A call of the user's Python function (a global one or a nested one): the arguments bound
 * to the parameters as Python binds them (positional, by keyword, then the defaults), and
 * the call's list rewritten in the parameters' order, which the lowering passes as they
 * are. The captured variables closure.c passes first to a nested function are not the
 * user's: messages leave them out, and no keyword names them. */
const nbc__type *nbc__infer_call_user(infer *I, nbc__node *n, nbc__global *G,
                                      const nbc__type **types, int nargs) {
  const nbc__module *module;
  nbc__node *def = function_def(I, n, G, &module);
  if (!def) return NULL;
  int np = def->params.count, npos = nbc__infer_call_positional(n);
  int hidden = G->nested ? G->nested->ncaptured : 0;
  /* *args: the positional arguments past the others, as one tuple ("$varargs", made once:
   * the next pass finds the call's list already bound) */
  bool vararg = np && def->params.items[np - 1]->vararg;
  int fixed = np - vararg;
  if (npos == nargs && nargs == np &&
      (!vararg ||
       (n->list.items[np - 1]->alias && strcmp(n->list.items[np - 1]->alias, "$varargs") == 0)))
    return call_function(I, n, G, def, module, types, nargs);
  if (npos > np && !vararg) return arity_error(I, n, G, np, npos);
  nbc__node **bound = nbc__infer_alloc(I, sizeof *bound * (size_t)(np ? np : 1));
  const nbc__type **btypes = nbc__infer_alloc(I, sizeof *btypes * (size_t)(np ? np : 1));
  if (!bound || !btypes) return NULL;
  for (int i = 0; i < npos && i < fixed; i++) {
    bound[i] = n->list.items[i];
    btypes[i] = types[i];
  }
  if (vararg) {
    int extra = npos > fixed ? npos - fixed : 0;
    nbc__node *t = nbc__infer_alloc(I, sizeof *t);
    nbc__node **items = nbc__infer_alloc(I, sizeof *items * (size_t)(extra ? extra : 1));
    if (!t || !items) return NULL;
    for (int i = 0; i < extra; i++)
      items[i] = n->list.items[fixed + i];
    *t = (nbc__node){.kind = NBC__N_TUPLE,
                     .tok = n->tok,
                     .var = -1,
                     .alias = "$varargs",
                     .list = {items, extra}};
    t->type = nbc__type_tuple(I->ctx, types + fixed, extra);
    if (!t->type) return NULL;
    bound[np - 1] = t;
    btypes[np - 1] = t->type;
  }
  for (int k = npos; k < nargs; k++) {
    nbc__node *kw = n->list.items[k];
    int j = hidden;
    while (j < fixed && strcmp(def->params.items[j]->str, kw->str) != 0)
      j++;
    if (j == fixed)
      return TYPING(I, kw, "%s() got an unexpected keyword argument '%s'", G->g.name, kw->str),
             NULL;
    if (bound[j])
      return TYPING(I, kw, "%s() got multiple values for argument '%s'", G->g.name, kw->str),
             NULL;
    bound[j] = kw->a;
    btypes[j] = types[k];
  }
  for (int j = hidden; j < fixed; j++)
    if (!bound[j] && !def->params.items[j]->a)
      return missing_error(I, n, G->g.name, def, bound, hidden);
  for (int j = hidden; j < fixed; j++) {
    if (bound[j]) continue;
    bound[j] = default_value(I, n, G, module, def->params.items[j]);
    btypes[j] = bound[j] ? nbc__infer_expr(I, bound[j]) : NULL;
    if (!btypes[j]) return NULL;
  }
  n->list.items = bound;
  n->list.count = np;
  return call_function(I, n, G, def, module, btypes, np);
}

/* Whether e is the name `name`, or a tuple holding it. */
static bool names(const nbc__node *e, const char *name) {
  if (!e) return false;
  if (e->kind == NBC__N_NAME) return e->str && strcmp(e->str, name) == 0;
  if (e->kind == NBC__N_TUPLE)
    for (int i = 0; i < e->list.count; i++)
      if (names(e->list.items[i], name)) return true;
  return false;
}

/* Whether node n uses `name` (a char *) where numba needs a literal: the shape of a shared or
 * local array (`cuda.shared.array(n, ...)`, `(n, 4)`), or an `if` that numba prunes when it
 * is a literal (`if flag:`, `if not flag:`). */
static bool needs_literal_here(const nbc__node *n, const void *pname) {
  const char *name = pname;
  if (n->kind == NBC__N_IF) {
    const nbc__node *c = n->a;
    if (c && c->kind == NBC__N_UNARY && c->op == NBC__OP_NOT) c = c->a;
    if (c && c->kind == NBC__N_NAME && c->str && strcmp(c->str, name) == 0) return true;
  }
  return n->kind == NBC__N_CALL && n->a && n->a->kind == NBC__N_ATTR && n->a->str &&
         strcmp(n->a->str, "array") == 0 && n->a->a &&
         (n->a->a->kind == NBC__N_ATTR || n->a->a->kind == NBC__N_NAME) && n->a->a->str &&
         (strcmp(n->a->a->str, "shared") == 0 || strcmp(n->a->a->str, "local") == 0) &&
         names(nbc__call_arg(n, 0, "shape"), name);
}

/* The same anywhere in the subtree n. */
static bool needs_literal(const nbc__node *n, const char *name) {
  return nbc__node_any(n, needs_literal_here, name);
}

/* The constants among a call's arguments that def needs as constants (needs_literal), as
 * numba types a constant argument as a literal and specialises the callee for it: integers,
 * bools and tuples of integers. NULL when there are none. */
static nbc__literal *call_literals(infer *I, nbc__node *n, const nbc__node *def, int nargs) {
  nbc__literal *lits = NULL;
  for (int i = 0; i < nargs && i < def->params.count; i++) {
    const nbc__node *a = n->list.items[i];
    const char *pname = def->params.items[i]->str;
    bool any = false;
    for (int k = 0; !any && k < def->body.count; k++)
      any = needs_literal(def->body.items[k], pname);
    if (!any) continue;
    nbc__literal lit = {0};
    if (a->kind == NBC__N_BOOL) {
      lit.set = true;
      lit.value[0] = a->value.i != 0;
    } else if (a->kind == NBC__N_TUPLE && a->list.count >= 1 && a->list.count <= 8) {
      lit.set = true;
      lit.count = a->list.count;
      for (int k = 0; lit.set && k < a->list.count; k++)
        lit.set = nbc__infer_const_int(I, a->list.items[k], &lit.value[k]);
    } else {
      lit.set = nbc__infer_const_int(I, a, &lit.value[0]);
    }
    if (!lit.set) continue;
    if (!lits) {
      if (!(lits = nbc__infer_alloc(I, sizeof *lits * (size_t)nargs))) return NULL;
      memset(lits, 0, sizeof *lits * (size_t)nargs);
    }
    lits[i] = lit;
  }
  return lits;
}

/* A function passed to a device function, as numba passes its function types (compile-time
 * values: the callee is specialised for each function it is given and calls it): a global
 * Python or declared function (the type then refers to its global), or a function named by
 * its path (cuda.atomic.add, math.sin, numpy.sqrt, operator.add). NULL after reporting any
 * other (a nested function, a builtin). */
static const nbc__type *function_argument(infer *I, nbc__node *a, const nbc__type *t,
                                          const char *callee) {
  const nbc__global *F = NULL;
  if (a->kind == NBC__N_NAME) F = a->var < 0 ? a->info : I->fn->vars[a->var].function;
  /* a nested function that captures nothing (closure.c) is called like a global one */
  if (F && (F->g.kind == NBC_GLOBAL_FUNCTION || F->g.kind == NBC_GLOBAL_DECLARED) &&
      (!F->nested || !F->nested->ncaptured)) {
    if (t->ref == F) return t;
    nbc__type *r = nbc__infer_alloc(I, sizeof *r);
    if (!r) return NULL;
    *r = *t;
    r->ref = F;
    return r;
  }
  static const char *const paths[] = {"cuda.", "math.", "cmath.", "numpy.", "operator."};
  for (size_t k = 0; !F && t->name && k < sizeof paths / sizeof *paths; k++)
    if (strncmp(t->name, paths[k], strlen(paths[k])) == 0) return t;
  return TYPING(I, a,
                "cannot pass %s to '%s': a device function may be given global "
                "Python and device functions, and cuda, math, numpy and operator "
                "functions",
                nbc__infer_tname(I, t), callee),
         NULL;
}

/* What passing a t where sig_t is declared costs, as numba's overload resolution ranks it:
 * 0 the same type, 1 a safe conversion (widening, an integer to a float that holds it, a
 * real to a complex), 2 any other conversion of numbers; -1 none (anything but numbers
 * must be of that very type). */
static int conversion_rank(const nbc__type *sig_t, const nbc__type *t) {
  if (nbc__type_equal(sig_t, t)) return 0;
  if (!nbc__type_is_number(sig_t) || !nbc__type_is_number(t) ||
      !nbc__type_can_convert(t, sig_t))
    return -1;
  size_t from = nbc__type_size(t), to = nbc__type_size(sig_t);
  if (t->kind == NBC__T_BOOL || nbc__type_is_complex(sig_t)) return 1;
  if (nbc__type_is_int(t) && nbc__type_is_int(sig_t))
    return to > from || (to == from && nbc__type_is_signed(t) == nbc__type_is_signed(sig_t))
               ? (nbc__type_is_signed(t) && !nbc__type_is_signed(sig_t) ? 2 : 1)
               : 2;
  if (nbc__type_is_int(t) && nbc__type_is_float(sig_t))
    return to == 8 || (to == 4 && from <= 2) ? 1 : 2;
  if (nbc__type_is_float(t) && nbc__type_is_float(sig_t)) return to > from ? 1 : 2;
  return 2;
}

/* A device function jitted with signatures (`jit("int32(int32, int32)", device=True)`):
 * numba compiles those only and converts a call's arguments to the one chosen — the one
 * whose conversions rank lowest (conversion_rank summed; the first of equals). The
 * arguments' types become the declared ones (casts recorded) and *pret the declared return
 * type. */
static bool declared_signature(infer *I, nbc__node *n, const nbc__global *G,
                               const nbc__type **types, int nargs, const nbc__type **pret) {
  const char *text = G->g.signature;
  nbc__signature chosen = {0};
  int best = -1;
  while (*text && best != 0) {
    const char *end = strchr(text, ';');
    size_t len = end ? (size_t)(end - text) : strlen(text);
    char *one = nbc__infer_alloc(I, len + 1);
    if (!one) return false;
    memcpy(one, text, len);
    one[len] = 0;
    text += len + (end ? 1 : 0);
    nbc__signature sig;
    if (!nbc__signature_parse(I->ctx, one, &sig)) {
      I->failed = true;
      return false;
    }
    if (sig.nargs != nargs) continue;
    int rank = 0;
    for (int i = 0; i < nargs && rank >= 0; i++) {
      int r = conversion_rank(sig.args[i], types[i]);
      rank = r < 0 ? -1 : rank + r;
    }
    if (rank >= 0 && (best < 0 || rank < best)) {
      chosen = sig;
      best = rank;
    }
  }
  if (best < 0) {
    nbc__buf b;
    nbc__buf_init(&b, I->ctx->arena);
    for (int i = 0; i < nargs; i++) {
      if (i) nbc__buf_puts(&b, ", ");
      nbc__type_print(&b, types[i]);
    }
    return TYPING(I, n,
                  "Invalid use of type(CUDADispatcher(<function %s>)) with parameters "
                  "(%s): no matching definition; %s() was jitted for '%s'",
                  G->g.name, b.data ? b.data : "", G->g.name, G->g.signature);
  }
  for (int i = 0; i < nargs; i++) {
    if (!nbc__type_equal(chosen.args[i], types[i]))
      nbc__infer_cast(n->list.items[i], chosen.args[i]);
    types[i] = chosen.args[i];
  }
  *pret = chosen.ret; /* "(args)": the return type is inferred, as numba does */
  return true;
}

/* The call of def (G's function) with the arguments' types, specialised. */
static const nbc__type *call_function(infer *I, nbc__node *n, nbc__global *G, nbc__node *def,
                                      const nbc__module *module, const nbc__type **types,
                                      int nargs) {
  const nbc_resolver_t *resolver = G->g.resolver ? G->g.resolver : I->fn->resolver;
  if (def->params.count != nargs) return arity_error(I, n, G, def->params.count, nargs);
  const nbc__type *declared = NULL;
  if (G->g.signature && !declared_signature(I, n, G, types, nargs, &declared)) return NULL;
  /* an IntEnum member passed positionally stays one (numba's IntEnumMember parameter: `is`
   * and `.value` in the callee), where call_args used it as its int */
  for (int i = 0; !G->g.signature && nbc__infer_call_positional(n) == nargs && i < nargs; i++) {
    nbc__node *a = n->list.items[i];
    if (nbc__type_is_int_enum(a->type) && a->cast == types[i]) {
      a->cast = NULL;
      types[i] = a->type;
    }
  }
  for (int i = 0; i < nargs; i++)
    if (is_kind(types[i], NBC__T_FUNCTION) &&
        !(types[i] = function_argument(I, n->list.items[i], types[i], G->g.name)))
      return NULL;
  for (int i = 0; i < nargs; i++)
    if (!nbc__type_is_number(types[i]) && !nbc__type_is_datetime(types[i]) &&
        !is_kind(types[i], NBC__T_DTYPE) && !nbc__type_is_bf16(types[i]) &&
        !is_kind(types[i], NBC__T_FUNCTION) && !is_kind(types[i], NBC__T_ARRAY) &&
        !is_kind(types[i], NBC__T_TUPLE) && !is_kind(types[i], NBC__T_VECTOR) &&
        !is_kind(types[i], NBC__T_GRID_GROUP) && !is_kind(types[i], NBC__T_RECORD) &&
        !is_kind(types[i], NBC__T_POINTER) && !is_kind(types[i], NBC__T_ENUM) &&
        !is_kind(types[i], NBC__T_NONE) &&
        !(is_kind(types[i], NBC__T_RANGE) && types[i]->dtype))
      return TYPING(I, n->list.items[i], "cannot pass a value of type %s to '%s'",
                    nbc__infer_tname(I, types[i]), G->g.name),
             NULL;
  nbc__literal *literals = call_literals(I, n, def, nargs);
  bool failed_before = I->ctx->status != NBC_OK; /* then the callee is not typed at all */
  nbc__func *callee = nbc__infer_specialise(I->P, module, def, resolver, types, literals, nargs,
                                            declared, false, G->scope, n, I);
  if (!callee && I->deferred) {
    /* the callee (or one it calls) waits for the return type of a function further down
     * the stack (the awaited one): this walk takes what the callee returned so far, and the
     * callee is typed again in the next. The awaited function itself goes on (its
     * deferral is settled); one above it is abandoned after this walk. The awaited
     * function's last walk needs the callee typed. */
    if (I->P->depth - 1 <= I->P->awaited) {
      I->P->awaited = -1;
      I->deferred = false;
      if (I->final)
        return TYPING(I, n,
                      "cannot type infer runaway recursion: the return type of the "
                      "recursive function '%s' needs a return that does not recurse",
                      I->fn->name),
               NULL;
    }
    return I->final ? NULL : I->deferred_ret;
  }
  if (!callee) {
    if (failed_before) return NULL; /* the error is another call's: no "During" for this one */
    const nbc__token *tok = n->tok;
    const nbc__file *f = tok ? tok->file : NULL;
    nbc__diag_during(I->ctx, "resolving callee type: type(CUDADispatcher(<function %s>))",
                     def->str ? def->str : G->g.name);
    nbc__diag_during(I->ctx, "typing of call at %s (%d)", f && f->name ? f->name : "<string>",
                     nbc__token_user_line(tok));
    return NULL;
  }
  const nbc__type *ret = callee->ret;
  if (callee->inferring && !ret) { /* a recursive call: the returns typed so far */
    ret = callee->ret_estimate;
    /* mutual recursion: the callee's walk under way may have seen a return already */
    if (!ret && callee != I->fn && callee->partial_ret) ret = *callee->partial_ret;
    if (!ret && callee != I->fn) { /* not known yet: typed again in the callee's next walk */
      int at = I->P->depth - 1;
      while (at > 0 && I->P->stack[at] != callee)
        at--;
      if (I->P->awaited < 0 || at < I->P->awaited) I->P->awaited = at;
      I->deferred = true;
      return NULL;
    }
    if (!ret)
      return TYPING(I, n,
                    "cannot type infer runaway recursion: the return type of the "
                    "recursive function '%s' needs a return that does not recurse",
                    G->g.name),
             NULL;
    if (callee != I->fn && I->final) { /* what this function's code is typed with */
      if (callee->handed_ret && !nbc__type_equal(callee->handed_ret, ret))
        callee->handed_mismatch = true;
      callee->handed_ret = ret;
    }
  }
  if (G->g.forceinline) callee->forceinline = true;
  nbc__call *c = nbc__infer_call_new(I, n, NBC__B_FUNC, G->g.name, nargs);
  if (!c) return NULL;
  c->func = callee;
  for (int i = 0; i < nargs; i++)
    c->argtypes[i] = types[i];
  c->ret = ret;
  if (I->final) {
    if (I->ncallees == I->capcallees) {
      int cap = I->capcallees ? 2 * I->capcallees : 8;
      nbc__func **cs = nbc__infer_alloc(I, sizeof *cs * (size_t)cap);
      if (!cs) return NULL;
      if (I->ncallees) memcpy(cs, I->callees, sizeof *cs * (size_t)I->ncallees);
      I->callees = cs;
      I->capcallees = cap;
    }
    I->callees[I->ncallees++] = callee;
  }
  if (is_kind(ret, NBC__T_VOID)) return T(NBC__T_NONE);
  return ret;
}
