/* lower_raise.c — `raise` and a failed `assert` in kernels, as numba-cuda lowers them.
 *
 * Without debug the thread ends (PTX `exit`, from any call depth) and nothing is reported, as
 * numba's kernel returns and drops the status. In a kernel compiled with debug=True, numba's
 * kernel_fixup gives the kernel i32 globals `<symbol>__errcode__`, `__tid{x,y,z}__` and
 * `__ctaid{x,y,z}__`: the first thread to raise in a launch swaps its exception's code into
 * __errcode__ (an atomic compare-and-swap from 0) and, having won, stores its threadIdx and
 * blockIdx; the host reads them after the launch and raises the exception numba would, its
 * message prefixed with the raise site and the thread. nbcuda does the same at the raise site
 * itself (device functions live in the kernel's module, so they reach its globals) and then
 * ends the thread.
 *
 * Each raise site is one code (1, 2, ... in lowering order) described by an nbc_raise_site_t:
 * the class as written (`raise ValueError("no")`, `raise errors.Bad`, AssertionError for a
 * failed assert, NULL for a bare `raise`), its constant arguments as a Python tuple literal
 * (str, int, float, bool, None, negated numbers; a class raised without a call has NULL), the
 * function, file and line. numba (debug or not) refuses exception arguments that are not
 * constants; nbcuda ignores the exception without debug and refuses such arguments with it.
 *
 * Operations raise too (nbc__lower_raise_if): a run-time index outside a tuple is an
 * IndexError in every kernel, and in debug kernels, as numba's error_model="python" makes
 * them, a zero divisor of / // % divmod is a ZeroDivisionError. Their sites have no location
 * (numba reports only the thread for these) except for divmod of floats, whose numba
 * implementation is given the call's.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compiler/lower.h"

static const char *const raise_globals[7] = NBC_DEBUG_EXCEPTION_VARIABLES;

/* @"<symbol>__<what>__" */
static const char *raise_global(nbc__lowerer *L, const char *what) {
  return nbc__arena_printf(L->arena, "@\"%s__%s__\"", L->raise_symbol, what);
}

void nbc__lower_raise_begin(nbc__lowerer *L) {
  const nbc__func *entry = L->program->entry;
  if (L->ctx->options->debug && entry->is_kernel && entry->symbol && L->ctx->program)
    L->raise_symbol = entry->symbol;
}

void nbc__lower_raise_globals(nbc__lowerer *L) {
  if (!L->raise_symbol || !L->ctx->program->nraises) return;
  for (int i = 0; i < 7; i++) {
    /* visible, so that the host finds them (cuModuleGetGlobal); kept by an LTO link */
    const char *g = raise_global(L, raise_globals[i]);
    nbc__buf_printf(&L->globals, "%s = addrspace(1) global i32 0, align 4\n", g);
    nbc__buf_printf(&L->used, "%si8* addrspacecast (i8 addrspace(1)* bitcast (i32 addrspace(1)* "
                    "%s to i8 addrspace(1)*) to i8*)", L->nused++ ? ", " : "", g);
  }
}

/* Appends the Python literal of a constant argument; false when it is not one. */
static bool literal(nbc__buf *out, const nbc__node *n) {
  switch (n->kind) {
  case NBC__N_STR:
    nbc__buf_puts(out, "'");
    for (const unsigned char *c = (const unsigned char *)n->str; *c; c++) {
      if (*c == '\\' || *c == '\'')
        nbc__buf_printf(out, "\\%c", *c);
      else if (*c == '\n')
        nbc__buf_puts(out, "\\n");
      else if (*c == '\t')
        nbc__buf_puts(out, "\\t");
      else if (*c == '\r')
        nbc__buf_puts(out, "\\r");
      else if (*c < 0x20 || *c == 0x7f)
        nbc__buf_printf(out, "\\x%02x", *c);
      else
        nbc__buf_printf(out, "%c", *c);
    }
    nbc__buf_puts(out, "'");
    return true;
  case NBC__N_INT:
    if (n->big)
      nbc__buf_printf(out, "%llu", (unsigned long long)n->value.i);
    else
      nbc__buf_printf(out, "%lld", (long long)n->value.i);
    return true;
  case NBC__N_FLOAT: {
    if (!isfinite(n->value.f)) return false; /* 1e999: no literal_eval-able spelling */
    char text[40];
    snprintf(text, sizeof text, "%.17g", n->value.f);
    nbc__buf_printf(out, "%s%s", text, strpbrk(text, ".e") ? "" : ".0");
    return true;
  }
  case NBC__N_BOOL: nbc__buf_puts(out, n->value.i ? "True" : "False"); return true;
  case NBC__N_NONE: nbc__buf_puts(out, "None"); return true;
  case NBC__N_UNARY:
    if ((n->op == NBC__OP_NEG || n->op == NBC__OP_POS) &&
        (n->a->kind == NBC__N_INT || n->a->kind == NBC__N_FLOAT)) {
      nbc__buf_puts(out, n->op == NBC__OP_NEG ? "-" : "+");
      return literal(out, n->a);
    }
    return false;
  default: return false;
  }
}

/* The dotted name of a class expression (NAME, NAME.attr...), or NULL. */
static const char *dotted(nbc__lowerer *L, const nbc__node *n) {
  if (n->kind == NBC__N_NAME) return n->str;
  if (n->kind != NBC__N_ATTR) return NULL;
  const char *base = dotted(L, n->a);
  return base ? nbc__arena_printf(L->arena, "%s.%s", base, n->str) : NULL;
}

/* Records the site; its code, or 0 after an error. */
static int record(nbc__lowerer *L, const nbc__node *stmt, const char *exception,
                  const char *args) {
  nbc__program *p = L->ctx->program;
  if (p->nraises == p->capraises) {
    int cap = p->capraises ? 2 * p->capraises : 8;
    nbc_raise_site_t *grown = nbc__arena_alloc(L->arena, sizeof *grown * (size_t)cap);
    if (!grown) {
      nbc__diag_oom(L->ctx);
      return 0;
    }
    if (p->nraises) memcpy(grown, p->raises, sizeof *grown * (size_t)p->nraises);
    p->raises = grown;
    p->capraises = cap;
  }
  nbc_raise_site_t *r = &p->raises[p->nraises++];
  memset(r, 0, sizeof *r);
  r->code = p->nraises;
  r->exception = exception;
  r->args = args;
  if (stmt) { /* numba's errors of operations (a zero divisor) mostly carry no location */
    const nbc__file *f = stmt->tok ? stmt->tok->file : NULL;
    r->function = L->fn->name ? L->fn->name : L->fn->symbol;
    r->filename = f && f->name ? f->name : "<string>";
    r->line = nbc__token_user_line(stmt->tok);
  }
  return r->code;
}

/* The site's class and arguments from the statement; false after an error. */
static bool describe(nbc__lowerer *L, const nbc__node *stmt, const char **pexception,
                     const char **pargs) {
  *pexception = *pargs = NULL;
  const nbc__node *exc = stmt->kind == NBC__N_ASSERT ? stmt->b : stmt->a;
  nbc__buf args;
  nbc__buf_init(&args, L->arena);
  if (stmt->kind == NBC__N_ASSERT) {
    *pexception = "AssertionError";
    nbc__buf_puts(&args, "(");
    if (exc && !literal(&args, exc)) {
      nbc__lower_error(L, exc, "debug=True: the message of an assert in a kernel must be a "
                               "constant (numba reports it from the host)");
      return false;
    }
    nbc__buf_puts(&args, exc ? ",)" : ")");
    *pargs = args.data;
    return true;
  }
  if (!exc) return true; /* a bare raise */
  const nbc__node *cls = exc->kind == NBC__N_CALL ? exc->a : exc;
  *pexception = dotted(L, cls);
  if (!*pexception) {
    nbc__lower_error(L, exc, "debug=True: a kernel can raise an exception class or a call of "
                             "one with constant arguments");
    return false;
  }
  if (exc->kind != NBC__N_CALL) return true;
  nbc__buf_puts(&args, "(");
  for (int i = 0; i < exc->list.count; i++) {
    const nbc__node *a = exc->list.items[i];
    if (a->kind == NBC__N_KEYWORD || !literal(&args, a)) {
      nbc__lower_error(L, a, "debug=True: the arguments of an exception raised in a kernel "
                             "must be constants (numba reports it from the host)");
      return false;
    }
    nbc__buf_puts(&args, exc->list.count == 1 ? ",)" : i + 1 < exc->list.count ? ", " : ")");
  }
  if (!exc->list.count) nbc__buf_puts(&args, ")");
  if (args.oom) {
    nbc__diag_oom(L->ctx);
    return false;
  }
  *pargs = args.data;
  return true;
}

/* The first thread to get here in a launch records code and its position; the thread ends. */
static void report(nbc__lowerer *L, int code) {
  if (!code) {
    nbc__lower_end_thread(L);
    return;
  }
  const char *pair = nbc__lower_tmp(L), *won = nbc__lower_tmp(L);
  nbc__lower_emit(L, "%s = cmpxchg volatile i32 addrspace(1)* %s, i32 0, i32 %d monotonic "
                  "monotonic", pair, raise_global(L, "errcode"), code);
  nbc__lower_emit(L, "%s = extractvalue { i32, i1 } %s, 1", won, pair);
  int first = nbc__lower_label(L), end = nbc__lower_label(L);
  nbc__lower_condbr(L, won, first, end);
  nbc__lower_block(L, first);
  for (int i = 1; i < 7; i++) { /* tidz, tidy, tidx, ctaidz, ... */
    const char *what = raise_globals[i];
    const char *reg = nbc__arena_strndup(L->arena, what, strlen(what) - 1);
    const char *v = nbc__lower_sreg_axis(L, reg, what[strlen(what) - 1]);
    nbc__lower_emit(L, "store volatile i32 %s, i32 addrspace(1)* %s", v, raise_global(L, what));
  }
  nbc__lower_block(L, end);
  nbc__lower_end_thread(L);
}

void nbc__lower_raise(nbc__lowerer *L, const nbc__node *stmt) {
  if (!L->raise_symbol) {
    nbc__lower_end_thread(L);
    return;
  }
  const char *exception, *args;
  report(L, describe(L, stmt, &exception, &args) ? record(L, stmt, exception, args) : 0);
}

void nbc__lower_raise_if(nbc__lowerer *L, const char *cond, const char *exception,
                         const char *message, const nbc__node *where) {
  int raise = nbc__lower_label(L), go_on = nbc__lower_label(L);
  nbc__lower_condbr(L, cond, raise, go_on);
  nbc__lower_block(L, raise);
  report(L, L->raise_symbol ? record(L, where, exception,
                                     nbc__arena_printf(L->arena, "('%s',)", message))
                            : 0);
  nbc__lower_block(L, go_on);
}
