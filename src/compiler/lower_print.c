/* lower_print.c — print(...) in a kernel, as numba-cuda's printimpl.py lowers it: one call
 * of CUDA's vprintf(format, args) per print.
 *
 * Each item gives a format and its values (print_item): a signed integer "%lld" (as i64),
 * an unsigned one "%llu", a float "%f" (as double), a boolean "%s" ("True" or "False"), a
 * string literal "%s", a tuple "(a, b)" ("(a,)" for one item) of its items' formats. The
 * formats are joined by spaces and end with "\n"; the values go in one struct on the stack
 * whose address is vprintf's second argument. More than 32 items: numba warns and prints
 * the format itself (every '%' doubled), so does this. Strings are NUL-terminated constants
 * in the constant address space (numba's insert_string_const_addrspace), one per distinct
 * text in the module, read through a generic pointer.
 */
#include <string.h>

#include "compiler/lower.h"

/* The generic i8* constant expression addressing text's NUL-terminated copy in constant
 * memory (@__conststring__<i>, made once per text). */
static const char *string_constant(nbc__lowerer *L, const char *text) {
  size_t len = strlen(text) + 1;
  int i = 0;
  while (i < L->nstrings && strcmp(L->strings[i], text) != 0)
    i++;
  if (i == L->nstrings) {
    if (L->nstrings == L->capstrings) {
      int cap = L->capstrings ? 2 * L->capstrings : 8;
      const char **s = nbc__arena_alloc(L->arena, sizeof *s * (size_t)cap);
      if (!s) {
        nbc__diag_oom(L->ctx);
        return "null";
      }
      if (L->nstrings) memcpy(s, L->strings, sizeof *s * (size_t)L->nstrings);
      L->strings = s;
      L->capstrings = cap;
    }
    L->strings[L->nstrings++] = text;
    nbc__buf_printf(&L->globals,
                    "@__conststring__%d = internal addrspace(4) constant [%zu x i8] c\"", i,
                    len);
    for (const unsigned char *c = (const unsigned char *)text;; c++) {
      if (*c >= 0x20 && *c < 0x7f && *c != '"' && *c != '\\')
        nbc__buf_printf(&L->globals, "%c", *c);
      else
        nbc__buf_printf(&L->globals, "\\%02X", *c);
      if (!*c) break;
    }
    nbc__buf_puts(&L->globals, "\", align 1\n");
  }
  return nbc__arena_printf(L->arena,
                           "addrspacecast (i8 addrspace(4)* getelementptr ([%zu x i8], [%zu x "
                           "i8] addrspace(4)* @__conststring__%d, i64 0, i64 0) to i8*)",
                           len, len, i);
}

typedef struct {
  nbc__buf format;
  nbc__buf types;      /* the argument struct's field types, comma-separated */
  const char **fields; /* type and operand of each field: fields[2k], fields[2k + 1] */
  int nvalues, cap;
} print_args;

static void add_value(nbc__lowerer *L, print_args *a, const char *ty, const char *v) {
  if (a->nvalues == a->cap) {
    int cap = a->cap ? 2 * a->cap : 16;
    const char **fs = nbc__arena_alloc(L->arena, sizeof *fs * 2 * (size_t)cap);
    if (!fs) {
      nbc__diag_oom(L->ctx);
      return;
    }
    if (a->nvalues) memcpy(fs, a->fields, sizeof *fs * 2 * (size_t)a->nvalues);
    a->fields = fs;
    a->cap = cap;
  }
  nbc__buf_printf(&a->types, "%s%s", a->nvalues ? ", " : "", ty);
  a->fields[2 * a->nvalues] = ty;
  a->fields[2 * a->nvalues + 1] = v;
  a->nvalues++;
}

/* numba's print_item for one value of type t. */
static void print_item(nbc__lowerer *L, print_args *a, nbc__lval v) {
  const nbc__type *t = v.type;
  if (t->kind == NBC__T_TUPLE) {
    nbc__buf_puts(&a->format, "(");
    for (int i = 0; i < t->count; i++) {
      if (i) nbc__buf_puts(&a->format, ", ");
      const char *x = tmp(L);
      EMIT("%s = extractvalue %s %s, %d", x, ltype(L, t), v.v, i);
      print_item(L, a, (nbc__lval){t->items[i], x});
    }
    nbc__buf_puts(&a->format, t->count == 1 ? ",)" : ")");
  } else if (t->kind == NBC__T_BOOL) {
    const char *x = tmp(L);
    EMIT("%s = select i1 %s, i8* %s, i8* %s", x, v.v, string_constant(L, "True"),
         string_constant(L, "False"));
    nbc__buf_puts(&a->format, "%s");
    add_value(L, a, "i8*", x);
  } else if (nbc__type_is_float(t)) {
    nbc__buf_puts(&a->format, "%f");
    add_value(L, a, "double", nbc__lower_convert(L, v, T(NBC__T_FLOAT64)).v);
  } else {
    bool sgn = nbc__type_is_signed(t);
    nbc__buf_puts(&a->format, sgn ? "%lld" : "%llu");
    add_value(L, a, "i64", nbc__lower_convert(L, v, T(sgn ? NBC__T_INT64 : NBC__T_UINT64)).v);
  }
}

nbc__lval nbc__lower_print(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  print_args a;
  memset(&a, 0, sizeof a);
  nbc__buf_init(&a.format, L->arena);
  nbc__buf_init(&a.types, L->arena);
  int nargs = n->list.count;
  for (int i = 0; i < nargs; i++) {
    nbc__node *arg = n->list.items[i];
    if (i) nbc__buf_puts(&a.format, " ");
    if (!call->argtypes[i]) { /* a string literal */
      nbc__buf_puts(&a.format, "%s");
      add_value(L, &a, "i8*", string_constant(L, arg->str ? arg->str : ""));
      continue;
    }
    print_item(L, &a, nbc__lower_expr(L, arg));
  }
  nbc__buf_puts(&a.format, "\n");
  const char *format = a.format.data ? a.format.data : "\n";
  if (nargs > 32) { /* numba prints the raw format instead, its '%' escaped */
    nbc__buf esc;
    nbc__buf_init(&esc, L->arena);
    for (const char *c = format; *c; c++)
      nbc__buf_puts(&esc, *c == '%' ? "%%" : (char[]){*c, 0});
    format = esc.data;
  }
  const char *args_ptr = "null";
  if (a.nvalues) {
    const char *sty = nbc__arena_printf(L->arena, "{%s}", a.types.data);
    const char *slot = nbc__lower_alloca(L, sty);
    for (int k = 0; k < a.nvalues; k++) {
      const char *ty = a.fields[2 * k], *p = tmp(L);
      EMIT("%s = getelementptr %s, %s* %s, i32 0, i32 %d", p, sty, sty, slot, k);
      EMIT("store %s %s, %s* %s", ty, a.fields[2 * k + 1], ty, p);
    }
    const char *raw = tmp(L);
    EMIT("%s = bitcast %s* %s to i8*", raw, sty, slot);
    args_ptr = raw;
  }
  nbc__lower_call_fn(
      L, "i32", "vprintf", "i8*, i8*",
      nbc__arena_printf(L->arena, "i8* %s, i8* %s", string_constant(L, format), args_ptr));
  return (nbc__lval){T(NBC__T_NONE), "null"};
}
