/* lower.c — typed AST to NVVM IR text: the module, its functions, their ABIs, statements
 * and debug metadata. Expressions are in lower_expr.c (see lower.h for the shared state).
 *
 * How it works. nbc__lower walks every specialisation infer.c produced (the entry first,
 * then its callees) and writes one LLVM 7 function each:
 *
 *   - the entry compiled as a kernel:   void @mangled(flattened args), listed in
 *     !nvvm.annotations as "kernel" and in @llvm.used (without which an LTO link drops it);
 *   - the entry with the C ABI:         <ret> @name(flattened args), bool returned as i8;
 *   - everything else (Numba ABI):      i32 @mangled(<ret>* %.ret, flattened args), status 0,
 *     callees `internal` so that libNVVM inlines and drops them.
 *
 * Arguments are flattened as numba does (an array is meminfo, parent, nitems, itemsize,
 * data, shape[N], strides[N]; a tuple its items; a bool an i8), so kernels from nbcuda and
 * numba-cuda take the same parameters. At entry the pieces are reassembled into the value
 * representation and stored into the variable's alloca.
 *
 * Statements become basic blocks joined by branches; every local has an alloca in the
 * entry block and no phi is ever written (libNVVM's mem2reg does that job, and malformed
 * phis are what can hang it). `for ... in range` keeps a hidden counter so that assigning
 * to the loop variable inside the body does not change the iteration, as in Python.
 *
 * With debug or lineinfo, a DICompileUnit names the .py file, each function gets a
 * DISubprogram, and every instruction carries a !dbg location from the AST node being
 * lowered, using the real file line (file->first_line + line - 1): the PTX then has
 * `.file` / `.loc` lines pointing at the Python source.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/lower.h"

/* --------------------------------------------------------------- small helpers ------- */

const char *nbc__lower_tmp(nbc__lowerer *L) {
  return nbc__arena_printf(L->arena, "%%t%d", L->tmp++);
}

int nbc__lower_label(nbc__lowerer *L) { return L->label++; }

bool nbc__lower_failed(const nbc__lowerer *L) { return L->ctx->status != NBC_OK; }

void nbc__lower_error(nbc__lowerer *L, const nbc__node *node, const char *fmt, ...) {
  if (L->ctx->status != NBC_OK) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const nbc__token *tok = node ? node->tok : NULL;
  nbc__diag_error(L->ctx, NBC_UNSUPPORTED, tok ? tok->file : NULL, tok ? tok->line : 1,
                  tok ? tok->col : 1, "%s", msg);
}

/* The !dbg suffix for the current location ("" without debug info). */
static const char *dbg_suffix(nbc__lowerer *L) {
  if (!L->debug_info || L->loc_meta <= 0) return "";
  return nbc__arena_printf(L->arena, ", !dbg !%d", L->loc_meta);
}

void nbc__lower_set_loc(nbc__lowerer *L, const nbc__node *node) {
  if (!L->debug_info || !node || !node->tok || L->sp_meta <= 0) return;
  const nbc__file *f = node->tok->file;
  int line = nbc__token_user_line(node->tok);
  int col = node->tok->col + (f && f->col_offset > 0 ? f->col_offset : 0);
  if (line == L->loc_line && col == L->loc_col && L->loc_meta > 0) return;
  L->loc_meta = L->next_meta++;
  L->loc_line = line;
  L->loc_col = col;
  nbc__buf_printf(&L->meta, "!%d = !DILocation(line: %d, column: %d, scope: !%d)\n",
                  L->loc_meta, line, col, L->sp_meta);
}

/* Code after a terminator (a `return` in the middle of a block) goes into a fresh block that
 * nothing branches to, which keeps the text valid without tracking reachability. */
static void ensure_open_block(nbc__lowerer *L) {
  if (!L->terminated) return;
  int dead = nbc__lower_label(L);
  nbc__buf_printf(&L->body, "L%d:\n", dead);
  L->terminated = false;
}

void nbc__lower_emit(nbc__lowerer *L, const char *fmt, ...) {
  ensure_open_block(L);
  nbc__buf_puts(&L->body, "  ");
  va_list ap;
  va_start(ap, fmt);
  nbc__buf_vprintf(&L->body, fmt, ap);
  va_end(ap);
  nbc__buf_puts(&L->body, dbg_suffix(L));
  nbc__buf_puts(&L->body, "\n");
}

static void emit_terminator(nbc__lowerer *L, const char *text) {
  ensure_open_block(L);
  nbc__buf_printf(&L->body, "  %s%s\n", text, dbg_suffix(L));
  L->terminated = true;
}

void nbc__lower_br(nbc__lowerer *L, int label) {
  if (L->terminated) return; /* an unreachable fall-through needs no branch */
  emit_terminator(L, nbc__arena_printf(L->arena, "br label %%L%d", label));
}

void nbc__lower_condbr(nbc__lowerer *L, const char *cond, int yes, int no) {
  emit_terminator(L,
                  nbc__arena_printf(L->arena, "br i1 %s, label %%L%d, label %%L%d", cond, yes, no));
}

/* numba's exception in a kernel: the function returns to the kernel, which returns (the
 * exception is reported only with debug=True); PTX `exit` ends the thread the same way from
 * any call depth. Leaves the current block terminated. */
void nbc__lower_end_thread(nbc__lowerer *L) {
  nbc__lower_emit(L, "call void asm sideeffect \"exit;\", \"\"()");
  emit_terminator(L, "unreachable");
}

void nbc__lower_block(nbc__lowerer *L, int label) {
  if (!L->terminated) nbc__lower_br(L, label);
  nbc__buf_printf(&L->body, "L%d:\n", label);
  L->terminated = false;
}

const char *nbc__lower_alloca_aligned(nbc__lowerer *L, const char *type, int align,
                                      const char *name) {
  if (!name) name = nbc__lower_tmp(L);
  if (align)
    nbc__buf_printf(&L->allocas, "  %s = alloca %s, align %d%s\n", name, type, align,
                    dbg_suffix(L));
  else
    nbc__buf_printf(&L->allocas, "  %s = alloca %s%s\n", name, type, dbg_suffix(L));
  return name;
}

const char *nbc__lower_alloca(nbc__lowerer *L, const char *type) {
  return nbc__lower_alloca_aligned(L, type, 0, NULL);
}

void nbc__lower_declare(nbc__lowerer *L, const char *decl) {
  for (int i = 0; i < L->ndeclared; i++)
    if (strcmp(L->declared[i], decl) == 0) return;
  if (L->ndeclared == L->capdeclared) {
    int cap = L->capdeclared ? L->capdeclared * 2 : 32;
    const char **d = nbc__arena_alloc(L->arena, sizeof *d * (size_t)cap);
    if (!d) {
      nbc__diag_oom(L->ctx);
      return;
    }
    if (L->ndeclared) memcpy(d, L->declared, sizeof *d * (size_t)L->ndeclared);
    L->declared = d;
    L->capdeclared = cap;
  }
  L->declared[L->ndeclared++] = nbc__arena_strdup(L->arena, decl);
  nbc__buf_printf(&L->decls, "%s\n", decl);
  if (strstr(decl, "@__nv_")) L->uses_libdevice = true;
}

/* --------------------------------------------------------------- types -------------- */

static const char *scalar_ltype(const nbc__type *t) {
  switch (t->kind) {
  case NBC__T_BOOL: return "i1";
  case NBC__T_INT8: case NBC__T_UINT8: return "i8";
  case NBC__T_INT16: case NBC__T_UINT16: return "i16";
  case NBC__T_INT32: case NBC__T_UINT32: return "i32";
  case NBC__T_INT64: case NBC__T_UINT64: return "i64";
  /* libNVVM 13 silently drops computations on LLVM's half type, so float16 lives in an i16
   * (its IEEE bits) everywhere, and lower_expr.c computes in float32 (see there). */
  case NBC__T_FLOAT16: return "i16";
  case NBC__T_BFLOAT16: return "i16"; /* its bits, as numba-cuda's model */
  case NBC__T_FLOAT32: return "float";
  case NBC__T_FLOAT64: return "double";
  case NBC__T_COMPLEX64: return "{float, float}";
  case NBC__T_COMPLEX128: return "{double, double}";
  case NBC__T_GRID_GROUP: return "i64";
  default: return NULL;
  }
}

const char *nbc__lower_mtype(nbc__lowerer *L, const nbc__type *t) {
  if (!t || t->kind == NBC__T_VOID || t->kind == NBC__T_NONE) return "i8*";
  if (t->kind == NBC__T_BOOL) return "i8";
  /* a record in memory (an array's element) is its bytes; its value is a pointer to them */
  if (t->kind == NBC__T_RECORD) return nbc__arena_printf(L->arena, "[%lld x i8]",
                                                         (long long)t->size);
  if (t->kind == NBC__T_TUPLE) {
    nbc__buf b;
    nbc__buf_init(&b, L->arena);
    nbc__buf_puts(&b, "{");
    for (int i = 0; i < t->count; i++)
      nbc__buf_printf(&b, "%s%s", i ? ", " : "", nbc__lower_mtype(L, t->items[i]));
    nbc__buf_puts(&b, "}");
    return b.data;
  }
  return nbc__lower_ltype(L, t);
}

const char *nbc__lower_ret_type(nbc__lowerer *L, const nbc__type *t) {
  return t && t->kind == NBC__T_RECORD ? "i8*" : nbc__lower_mtype(L, t);
}

const char *nbc__lower_ltype(nbc__lowerer *L, const nbc__type *t) {
  if (!t || t->kind == NBC__T_VOID || t->kind == NBC__T_NONE) return "i8*";
  const char *s = scalar_ltype(t);
  if (s) return s;
  if (t->kind == NBC__T_RECORD) return "i8*";
  if (t->kind == NBC__T_VECTOR) { /* numba's StructModel: a literal struct of the members */
    const char *e = scalar_ltype(t->dtype);
    nbc__buf b;
    nbc__buf_init(&b, L->arena);
    nbc__buf_puts(&b, "{");
    for (int i = 0; i < t->count; i++) nbc__buf_printf(&b, "%s%s", i ? ", " : "", e);
    nbc__buf_puts(&b, "}");
    return b.data;
  }
  if (t->kind == NBC__T_ARRAY) {
    return nbc__arena_printf(L->arena, "{i8*, i8*, i64, i64, %s*, [%d x i64], [%d x i64]}",
                             nbc__lower_mtype(L, t->dtype), t->ndim, t->ndim);
  }
  if (t->kind == NBC__T_TUPLE) {
    nbc__buf b;
    nbc__buf_init(&b, L->arena);
    nbc__buf_puts(&b, "{");
    for (int i = 0; i < t->count; i++)
      nbc__buf_printf(&b, "%s%s", i ? ", " : "", nbc__lower_ltype(L, t->items[i]));
    nbc__buf_puts(&b, "}");
    return b.data;
  }
  if (t->kind == NBC__T_FLAT) return nbc__lower_ltype(L, t->dtype); /* the array itself */
  if (nbc__type_is_datetime(t)) return "i64"; /* numba's NPDatetimeModel */
  if (nbc__type_is_charseq(t)) /* numba's CharSeq models: the characters themselves */
    return nbc__arena_printf(L->arena, "[%lld x %s]", (long long)t->size,
                             t->kind == NBC__T_CHARSEQ ? "i8" : "i32");
  if (t->kind == NBC__T_ENUM) return nbc__lower_ltype(L, t->dtype); /* the member's value */
  if (t->kind == NBC__T_OPTIONAL) /* numba's OptionalModel: the data, then a valid bit */
    return nbc__arena_printf(L->arena, "{%s, i1}", nbc__lower_ltype(L, t->dtype));
  if (t->kind == NBC__T_POINTER) /* numba's PointerModel: a pointer to the element's bytes */
    return nbc__arena_printf(L->arena, "%s*", nbc__lower_mtype(L, t->dtype));
  if (t->kind == NBC__T_RANGE && t->dtype) { /* numba's RangeModel: start, stop, step */
    const char *c = scalar_ltype(t->dtype);
    return nbc__arena_printf(L->arena, "{%s, %s, %s}", c, c, c);
  }
  /* Modules, functions, dtypes and a range only looped over have no run-time value; an i8
   * placeholder keeps the text valid if one is ever stored (infer gives them no slot). */
  return "i8";
}

bool nbc__lower_has_value(const nbc__type *t) {
  if (!t) return false;
  switch (t->kind) {
  case NBC__T_RANGE:
    return t->dtype != NULL; /* a range value: range(...) not only looped over */
  case NBC__T_MODULE: case NBC__T_FUNCTION: case NBC__T_DTYPE:
  case NBC__T_VOID: case NBC__T_NONE: case NBC__T_ENUM_CLASS:
    return false;
  default:
    return true;
  }
}

/* --------------------------------------------------------------- names -------------- */

/* numba's escape_string: bytes outside [A-Za-z0-9_] become _xx. */
static void escape_into(nbc__buf *b, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
        *p == '_')
      nbc__buf_append(b, (const char *)p, 1);
    else
      nbc__buf_printf(b, "_%02x", *p);
  }
}

/* An Itanium identifier: <len><escaped text>, '_' prefixed when it starts with a digit. */
static void mangle_ident(nbc__lowerer *L, nbc__buf *b, const char *s) {
  nbc__buf e;
  nbc__buf_init(&e, L->arena);
  if (*s >= '0' && *s <= '9') nbc__buf_puts(&e, "_");
  escape_into(&e, s);
  nbc__buf_printf(b, "%zu%s", e.len, e.data ? e.data : "");
}

static void mangle_type(nbc__lowerer *L, nbc__buf *b, const nbc__type *t) {
  switch (t->kind) {
  case NBC__T_BOOL: nbc__buf_puts(b, "b"); return;
  case NBC__T_INT8: nbc__buf_puts(b, "a"); return;
  case NBC__T_UINT8: nbc__buf_puts(b, "h"); return;
  case NBC__T_INT16: nbc__buf_puts(b, "s"); return;
  case NBC__T_UINT16: nbc__buf_puts(b, "t"); return;
  case NBC__T_INT32: nbc__buf_puts(b, "i"); return;
  case NBC__T_UINT32: nbc__buf_puts(b, "j"); return;
  case NBC__T_INT64: nbc__buf_puts(b, "x"); return;
  case NBC__T_UINT64: nbc__buf_puts(b, "y"); return;
  case NBC__T_FLOAT16: nbc__buf_puts(b, "Dh"); return;
  case NBC__T_BFLOAT16: nbc__buf_puts(b, "DF16b"); return;
  case NBC__T_FLOAT32: nbc__buf_puts(b, "f"); return;
  case NBC__T_FLOAT64: nbc__buf_puts(b, "d"); return;
  case NBC__T_ARRAY:
    nbc__buf_puts(b, "5ArrayI");
    mangle_type(L, b, t->dtype);
    nbc__buf_printf(b, "Li%dE1%c%s7alignedE", t->ndim, t->layout,
                    t->readonly ? "8readonly" : "7mutable");
    return;
  case NBC__T_TUPLE:
    nbc__buf_puts(b, "5TupleI");
    for (int i = 0; i < t->count; i++) mangle_type(L, b, t->items[i]);
    nbc__buf_puts(b, "E");
    return;
  case NBC__T_GRID_GROUP:
    nbc__buf_puts(b, "9GridGroup");
    return;
  case NBC__T_FLAT:
    nbc__buf_puts(b, "8FlatIterI");
    mangle_type(L, b, t->dtype);
    nbc__buf_puts(b, "E");
    return;
  case NBC__T_VECTOR:
    mangle_ident(L, b, t->name);
    return;
  case NBC__T_CHARSEQ:
  case NBC__T_UNICHARSEQ:
  case NBC__T_DATETIME: /* numba mangles these by their names: datetime64[D] */
  case NBC__T_TIMEDELTA:
  case NBC__T_ENUM:    /* numba mangles an EnumMember by its name, as a CPointer */
  case NBC__T_POINTER: { /* numba mangles a CPointer by its name: "uint8*" is 8uint8_2a */
    nbc__buf name;
    nbc__buf_init(&name, L->arena);
    nbc__type_print(&name, t);
    mangle_ident(L, b, name.data ? name.data : "");
    return;
  }
  case NBC__T_RECORD: /* numba's Record<id>: here the layout itself, unique per record */
    nbc__buf_puts(b, "6RecordI");
    for (int i = 0; i < t->count; i++) {
      mangle_ident(L, b, t->field_names[i]);
      mangle_type(L, b, t->items[i]);
      for (int d = 0; t->items[i]->kind == NBC__T_ARRAY && d < t->items[i]->ndim; d++)
        nbc__buf_printf(b, "Li%lldE", (long long)t->field_shapes[i][d]);
      nbc__buf_printf(b, "Li%lldE", (long long)t->field_offsets[i]);
    }
    nbc__buf_printf(b, "Li%lldELb%dEE", (long long)t->size, t->aligned ? 1 : 0);
    return;
  default:
    nbc__buf_puts(b, "v");
    return;
  }
}

/* The Python module's name for mangling: the file's base name without ".py". */
static const char *module_name(nbc__lowerer *L, const nbc__func *fn) {
  const char *path = fn->module && fn->module->file && fn->module->file->name
                         ? fn->module->file->name
                         : "__main__";
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  size_t len = strlen(base);
  if (len > 3 && strcmp(base + len - 3, ".py") == 0) len -= 3;
  if (len == 0 || base[0] == '<') return "__main__";
  return nbc__arena_strndup(L->arena, base, len);
}

static int func_index(const nbc__lowerer *L, const nbc__func *fn) {
  int i = 1;
  for (const nbc__func *f = L->program->funcs; f; f = f->next, i++)
    if (f == fn) return i;
  return i;
}

/* numba's Itanium-style name: _ZN<module><name>B<len>v<uid>E<args>. The uid is the
 * specialisation's index in the program, so names are stable across runs and unique per
 * (function, argument types). */
static const char *mangle(nbc__lowerer *L, nbc__func *fn, const char *prefix) {
  nbc__buf b;
  nbc__buf_init(&b, L->arena);
  nbc__buf_printf(&b, "_ZN%s", prefix);
  mangle_ident(L, &b, module_name(L, fn));
  mangle_ident(L, &b, fn->name ? fn->name : "f");
  char uid[32];
  snprintf(uid, sizeof uid, "v%d", func_index(L, fn));
  nbc__buf_printf(&b, "B%zu%sE", strlen(uid), uid);
  if (fn->nargs == 0) nbc__buf_puts(&b, "v");
  for (int i = 0; i < fn->nargs; i++) mangle_type(L, &b, fn->argtypes[i]);
  return b.data;
}

static bool uses_c_abi(const nbc__func *fn) {
  return fn->is_entry && !fn->is_kernel && fn->abi == NBC_ABI_C;
}

const char *nbc__lower_symbol(nbc__lowerer *L, nbc__func *fn) {
  if (fn->symbol) return fn->symbol;
  if (uses_c_abi(fn)) {
    const char *abi_name = L->ctx->options ? L->ctx->options->abi_name : NULL;
    if (abi_name && *abi_name) {
      fn->symbol = nbc__arena_strdup(L->arena, abi_name);
    } else {
      nbc__buf b;
      nbc__buf_init(&b, L->arena);
      escape_into(&b, fn->name ? fn->name : "f");
      fn->symbol = b.data;
    }
  } else {
    fn->symbol = mangle(L, fn, "");
  }
  return fn->symbol;
}

/* Symbols are quoted when they hold characters LLVM does not take bare (abi_name is
 * verbatim). */
static const char *global_ref(nbc__lowerer *L, const char *sym) {
  for (const char *p = sym; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          *p == '_' || *p == '.' || *p == '$'))
      return nbc__arena_printf(L->arena, "@\"%s\"", sym);
  return nbc__arena_printf(L->arena, "@%s", sym);
}

/* --------------------------------------------------------------- flattening --------- */

/* Aggregates of scalar members passed as one parameter per member: a complex number (its two
 * parts) and a vector type (its x, y, z, w). */
static bool scalar_members(const nbc__type *t, int *pcount, const nbc__type **pmember) {
  if (t->kind == NBC__T_VECTOR) {
    *pcount = t->count;
    *pmember = t->dtype;
    return true;
  }
  if (nbc__type_is_complex(t)) {
    *pcount = 2;
    *pmember = nbc__type_complex_part(t);
    return true;
  }
  return false;
}

void nbc__lower_flatten(nbc__lowerer *L, nbc__buf *out, const nbc__type *t, nbc__lval value,
                        bool *pfirst) {
  if (t->kind == NBC__T_ENUM) /* numba's EnumModel proxies its value's model */
    t = t->dtype;
  const char *sep = *pfirst ? "" : ", ";
  int count;
  const nbc__type *member;
  if (t->kind == NBC__T_ARRAY) {
    const char *aty = nbc__lower_ltype(L, t);
    const char *ety = nbc__lower_mtype(L, t->dtype);
    static const char *const fields[] = {"i8*", "i8*", "i64", "i64"};
    for (int k = 0; k < 4; k++) {
      const char *x = nbc__lower_tmp(L);
      nbc__lower_emit(L, "%s = extractvalue %s %s, %d", x, aty, value.v, k);
      nbc__buf_printf(out, "%s%s %s", sep, fields[k], x);
      sep = ", ";
    }
    const char *d = nbc__lower_tmp(L);
    nbc__lower_emit(L, "%s = extractvalue %s %s, 4", d, aty, value.v);
    nbc__buf_printf(out, "%s%s* %s", sep, ety, d);
    for (int f = 5; f <= 6; f++)
      for (int k = 0; k < t->ndim; k++) {
        const char *x = nbc__lower_tmp(L);
        nbc__lower_emit(L, "%s = extractvalue %s %s, %d, %d", x, aty, value.v, f, k);
        nbc__buf_printf(out, ", i64 %s", x);
      }
  } else if (t->kind == NBC__T_TUPLE) {
    const char *tty = nbc__lower_ltype(L, t);
    for (int i = 0; i < t->count; i++) {
      const char *x = nbc__lower_tmp(L);
      nbc__lower_emit(L, "%s = extractvalue %s %s, %d", x, tty, value.v, i);
      nbc__lval item = {t->items[i], x};
      nbc__lower_flatten(L, out, t->items[i], item, pfirst);
    }
    return;
  } else if (scalar_members(t, &count, &member)) {
    /* one parameter per member, as the definition (and numba's data model) takes it */
    const char *aty = nbc__lower_ltype(L, t), *mty = nbc__lower_ltype(L, member);
    for (int k = 0; k < count; k++) {
      const char *x = nbc__lower_tmp(L);
      nbc__lower_emit(L, "%s = extractvalue %s %s, %d", x, aty, value.v, k);
      nbc__buf_printf(out, "%s%s %s", sep, mty, x);
      sep = ", ";
    }
  } else if (t->kind == NBC__T_BOOL) {
    const char *x = nbc__lower_tmp(L);
    nbc__lower_emit(L, "%s = zext i1 %s to i8", x, value.v);
    nbc__buf_printf(out, "%si8 %s", sep, x);
  } else if (nbc__lower_has_value(t)) {
    nbc__buf_printf(out, "%s%s %s", sep, nbc__lower_ltype(L, t), value.v);
  } else {
    return; /* no run-time value: no parameter, as numba drops omitted arguments */
  }
  *pfirst = false;
}

/* Declares the flattened parameters of one argument (names %arg<i>_<k>) into params and
 * their types into types, and returns the rebuilt value (instructions go to the body). */
static nbc__lval unflatten_param(nbc__lowerer *L, const nbc__type *t, int index, int *pk,
                                 nbc__buf *params, nbc__buf *types) {
  if (t->kind == NBC__T_ENUM) { /* a member is its value (numba's EnumModel) */
    nbc__lval m = unflatten_param(L, t->dtype, index, pk, params, types);
    return (nbc__lval){t, m.v};
  }
  nbc__lval v = {t, "undef"};
  int count;
  const nbc__type *member;
#define PARAM_(ty)                                                                         \
  (nbc__buf_printf(params, "%s%s %%arg%d_%d", params->len ? ", " : "", ty, index, *pk),     \
   nbc__buf_printf(types, "%s%s", types->len ? ", " : "", ty),                              \
   nbc__arena_printf(L->arena, "%%arg%d_%d", index, (*pk)++))
  if (t->kind == NBC__T_ARRAY) {
    const char *aty = nbc__lower_ltype(L, t);
    const char *ety = nbc__lower_mtype(L, t->dtype);
    const char *cur = "undef";
    static const char *const fields[] = {"i8*", "i8*", "i64", "i64"};
    for (int k = 0; k < 5; k++) {
      const char *ty = k < 4 ? fields[k] : nbc__arena_printf(L->arena, "%s*", ety);
      const char *p = PARAM_(ty);
      const char *x = nbc__lower_tmp(L);
      nbc__lower_emit(L, "%s = insertvalue %s %s, %s %s, %d", x, aty, cur, ty, p, k);
      cur = x;
    }
    for (int f = 5; f <= 6; f++)
      for (int k = 0; k < t->ndim; k++) {
        const char *p = PARAM_("i64");
        const char *x = nbc__lower_tmp(L);
        nbc__lower_emit(L, "%s = insertvalue %s %s, i64 %s, %d, %d", x, aty, cur, p, f, k);
        cur = x;
      }
    v.v = cur;
  } else if (t->kind == NBC__T_TUPLE) {
    const char *tty = nbc__lower_ltype(L, t);
    const char *cur = "undef";
    for (int i = 0; i < t->count; i++) {
      nbc__lval item = unflatten_param(L, t->items[i], index, pk, params, types);
      const char *x = nbc__lower_tmp(L);
      nbc__lower_emit(L, "%s = insertvalue %s %s, %s %s, %d", x, tty, cur,
                      nbc__lower_ltype(L, t->items[i]), item.v, i);
      cur = x;
    }
    v.v = cur;
  } else if (scalar_members(t, &count, &member)) { /* complex: numba passes the two parts */
    const char *aty = nbc__lower_ltype(L, t), *mty = nbc__lower_ltype(L, member);
    const char *cur = "undef";
    for (int k = 0; k < count; k++) {
      const char *p = PARAM_(mty);
      const char *x = nbc__lower_tmp(L);
      nbc__lower_emit(L, "%s = insertvalue %s %s, %s %s, %d", x, aty, cur, mty, p, k);
      cur = x;
    }
    v.v = cur;
  } else if (t->kind == NBC__T_BOOL) {
    const char *p = PARAM_("i8");
    const char *x = nbc__lower_tmp(L);
    nbc__lower_emit(L, "%s = icmp ne i8 %s, 0", x, p);
    v.v = x;
  } else if (nbc__lower_has_value(t)) {
    v.v = PARAM_(nbc__lower_ltype(L, t));
  }
#undef PARAM_
  return v;
}

/* --------------------------------------------------------------- statements --------- */

static void lower_block(nbc__lowerer *L, const nbc__list *body);

static void store_var(nbc__lowerer *L, int var, nbc__lval v) {
  const nbc__var *x = &L->fn->vars[var];
  if (!L->slots[var]) return; /* a module, function or dtype bound to a name */
  v = nbc__lower_convert(L, v, x->type);
  const char *ty = nbc__lower_ltype(L, x->type);
  nbc__lower_emit(L, "store %s %s, %s* %s", ty, v.v, ty, L->slots[var]);
}

static void assign_to(nbc__lowerer *L, nbc__node *target, nbc__lval v) {
  if (nbc__lower_failed(L)) return;
  switch (target->kind) {
  case NBC__N_NAME:
    if (target->var < 0) {
      nbc__lower_error(L, target, "cannot assign to global name '%s'", target->str);
      return;
    }
    store_var(L, target->var, v);
    return;
  case NBC__N_SUBSCRIPT:
    nbc__lower_store_subscript(L, target, v);
    return;
  case NBC__N_ATTR:
    if (!nbc__lower_is_field(target)) break;
    nbc__lower_field_store(L, target, v);
    return;
  case NBC__N_TUPLE:
  case NBC__N_LIST: {
    if (!v.type || v.type->kind != NBC__T_TUPLE || v.type->count != target->list.count) {
      nbc__lower_error(L, target, "cannot unpack %s into %d targets",
                       v.type ? nbc__type_name(L->ctx, v.type) : "a value", target->list.count);
      return;
    }
    /* Extract every item before assigning any (a, b = b, a). */
    const char *tty = nbc__lower_ltype(L, v.type);
    nbc__lval *items = nbc__arena_alloc(L->arena, sizeof *items * (size_t)v.type->count);
    if (!items) {
      nbc__diag_oom(L->ctx);
      return;
    }
    for (int i = 0; i < v.type->count; i++) {
      items[i].type = v.type->items[i];
      items[i].v = nbc__lower_tmp(L);
      nbc__lower_emit(L, "%s = extractvalue %s %s, %d", items[i].v, tty, v.v, i);
    }
    for (int i = 0; i < v.type->count; i++) assign_to(L, target->list.items[i], items[i]);
    return;
  }
  default:
    break;
  }
  nbc__lower_error(L, target, "cannot assign to this expression");
}

static void lower_assign(nbc__lowerer *L, nbc__node *s) {
  nbc__lval v = nbc__lower_expr(L, s->a);
  for (int i = 0; i < s->list.count && !nbc__lower_failed(L); i++)
    assign_to(L, s->list.items[i], v);
}

/* x op= v: the target is read once (its index evaluated once), combined with numba's
 * semantics for op, converted back to the target's type and stored. */
static void lower_augassign(nbc__lowerer *L, nbc__node *s) {
  nbc__node *t = s->a;
  if (t->kind == NBC__N_NAME && t->var >= 0) {
    const nbc__var *x = &L->fn->vars[t->var];
    const char *ty = nbc__lower_ltype(L, x->type);
    nbc__lval cur = {x->type, nbc__lower_tmp(L)};
    nbc__lower_emit(L, "%s = load %s, %s* %s", cur.v, ty, ty, L->slots[t->var]);
    nbc__lval rhs = nbc__lower_expr(L, s->b);
    const nbc__type *rtype = s->type;
    if (!rtype) {
      const char *why = NULL;
      rtype = nbc__type_binop(s->op, x->type, rhs.type, &why);
    }
    if (!rtype) {
      nbc__lower_error(L, s, "unsupported operand types for %s=", nbc__op_text(s->op));
      return;
    }
    nbc__lval r = nbc__lower_binop_values(L, s, s->op, cur, s->b, rhs, rtype);
    store_var(L, t->var, r);
  } else if (nbc__lower_is_field(t)) {
    nbc__lower_field_augassign(L, s);
  } else if (t->kind == NBC__N_SUBSCRIPT) {
    nbc__lval arr;
    const char *ptr = nbc__lower_element_ptr(L, t, &arr);
    if (!ptr) return;
    const nbc__type *et = arr.type->dtype;
    nbc__lval cur = nbc__lower_load(L, et, ptr);
    nbc__lval rhs = nbc__lower_expr(L, s->b);
    const nbc__type *rtype = s->type;
    if (!rtype) {
      const char *why = NULL;
      rtype = nbc__type_binop(s->op, et, rhs.type, &why);
    }
    if (!rtype) {
      nbc__lower_error(L, s, "unsupported operand types for %s=", nbc__op_text(s->op));
      return;
    }
    nbc__lval r = nbc__lower_binop_values(L, s, s->op, cur, s->b, rhs, rtype);
    nbc__lower_store(L, nbc__lower_convert(L, r, et), ptr);
  } else {
    nbc__lower_error(L, s, "unsupported target of augmented assignment");
  }
}

static void lower_if(nbc__lowerer *L, nbc__node *s) {
  nbc__lval c = nbc__lower_expr(L, s->a);
  const char *cond = nbc__lower_truth(L, c);
  int then = nbc__lower_label(L), other = nbc__lower_label(L), end = nbc__lower_label(L);
  nbc__lower_condbr(L, cond, then, s->orelse.count ? other : end);
  nbc__lower_block(L, then);
  lower_block(L, &s->body);
  nbc__lower_br(L, end);
  if (s->orelse.count) {
    nbc__lower_block(L, other);
    lower_block(L, &s->orelse);
    nbc__lower_br(L, end);
  }
  nbc__lower_block(L, end);
}

static bool push_loop(nbc__lowerer *L, nbc__node *s, int brk, int cont) {
  if (L->loop_depth >= NBC__LOWER_MAX_LOOPS) {
    nbc__lower_error(L, s, "loops nested more than %d deep", NBC__LOWER_MAX_LOOPS);
    return false;
  }
  L->loop_break[L->loop_depth] = brk;
  L->loop_continue[L->loop_depth] = cont;
  L->loop_depth++;
  return true;
}

/* A loop's else block, reached when its test fails (not by break, which jumps to end);
 * break and continue in it belong to the enclosing loop. */
static void loop_else(nbc__lowerer *L, nbc__node *s, int other, int end) {
  if (!s->orelse.count) return;
  nbc__lower_block(L, other);
  lower_block(L, &s->orelse);
  nbc__lower_br(L, end);
}

static void lower_while(nbc__lowerer *L, nbc__node *s) {
  int test = nbc__lower_label(L), body = nbc__lower_label(L), end = nbc__lower_label(L);
  int other = s->orelse.count ? nbc__lower_label(L) : end;
  nbc__lower_block(L, test);
  nbc__lower_set_loc(L, s);
  const char *cond = nbc__lower_truth(L, nbc__lower_expr(L, s->a));
  nbc__lower_condbr(L, cond, body, other);
  nbc__lower_block(L, body);
  if (!push_loop(L, s, end, test)) return;
  lower_block(L, &s->body);
  L->loop_depth--;
  nbc__lower_br(L, test);
  loop_else(L, s, other, end);
  nbc__lower_block(L, end);
}

/* Whether the node is an integer constant (possibly negated); *pv receives it. */
static bool const_int(const nbc__node *n, int64_t *pv) {
  if (!n) return false;
  if (n->kind == NBC__N_INT && !n->big) {
    *pv = n->value.i;
    return true;
  }
  if (n->kind == NBC__N_UNARY && n->op == NBC__OP_NEG && n->a && n->a->kind == NBC__N_INT &&
      !n->a->big) {
    *pv = -n->a->value.i;
    return true;
  }
  return false;
}

/* for v in range(start, stop, step): a hidden counter walks the range; the loop variable is
 * assigned from it at the top of each iteration. The step's sign picks the test; a step
 * that is not a constant is tested at run time (a zero step runs no iteration). */
static void lower_for(nbc__lowerer *L, nbc__node *s) {
  nbc__node *call = s->b;
  const nbc__call *info = call && call->kind == NBC__N_CALL ? call->info : NULL;
  if (!info || info->builtin != NBC__B_RANGE) {
    nbc__lower_error(L, s->b ? s->b : s, "only 'for ... in range(...)' loops are supported");
    return;
  }
  if (call->list.count < 1 || call->list.count > 3) {
    nbc__lower_error(L, call, "range expected 1 to 3 arguments, got %d", call->list.count);
    return;
  }
  /* The counter's type: infer's range type (int32, int64 or uint64). */
  const nbc__type *ct = info->nargs > 0 && info->argtypes ? info->argtypes[0] : NULL;
  if (!ct && s->a->kind == NBC__N_NAME && s->a->var >= 0) ct = L->fn->vars[s->a->var].type;
  if (!ct || !nbc__type_is_int(ct)) ct = nbc__type_scalar(NBC__T_INT64);
  const char *ty = nbc__lower_ltype(L, ct);
  nbc__lval start = {ct, "0"}, stop, step = {ct, "1"};
  int64_t step_const = 1;
  bool step_known = true;
  if (call->list.count == 1) {
    stop = nbc__lower_convert(L, nbc__lower_expr(L, call->list.items[0]), ct);
  } else {
    start = nbc__lower_convert(L, nbc__lower_expr(L, call->list.items[0]), ct);
    stop = nbc__lower_convert(L, nbc__lower_expr(L, call->list.items[1]), ct);
    if (call->list.count == 3) {
      step = nbc__lower_convert(L, nbc__lower_expr(L, call->list.items[2]), ct);
      step_known = const_int(call->list.items[2], &step_const);
    }
  }
  if (nbc__lower_failed(L)) return;
  if (step_known && step_const == 0) {
    nbc__lower_error(L, call->list.items[2], "range() arg 3 must not be zero");
    return;
  }
  bool is_signed = nbc__type_is_signed(ct);
  const char *counter = nbc__lower_alloca(L, ty);
  nbc__lower_emit(L, "store %s %s, %s* %s", ty, start.v, ty, counter);
  int test = nbc__lower_label(L), body = nbc__lower_label(L), next = nbc__lower_label(L),
      end = nbc__lower_label(L);
  int other = s->orelse.count ? nbc__lower_label(L) : end;
  nbc__lower_block(L, test);
  const char *i = nbc__lower_tmp(L);
  nbc__lower_emit(L, "%s = load %s, %s* %s", i, ty, ty, counter);
  const char *cond = nbc__lower_tmp(L);
  if (step_known) {
    nbc__lower_emit(L, "%s = icmp %s %s %s, %s", cond,
                    step_const > 0 ? (is_signed ? "slt" : "ult") : (is_signed ? "sgt" : "ugt"),
                    ty, i, stop.v);
  } else {
    const char *up = nbc__lower_tmp(L), *down = nbc__lower_tmp(L), *pos = nbc__lower_tmp(L),
               *neg = nbc__lower_tmp(L), *a = nbc__lower_tmp(L), *b = nbc__lower_tmp(L);
    nbc__lower_emit(L, "%s = icmp %s %s %s, %s", up, is_signed ? "slt" : "ult", ty, i, stop.v);
    nbc__lower_emit(L, "%s = icmp %s %s %s, %s", down, is_signed ? "sgt" : "ugt", ty, i,
                    stop.v);
    /* An unsigned step is never negative. */
    nbc__lower_emit(L, "%s = icmp %s %s %s, 0", pos, is_signed ? "sgt" : "ne", ty, step.v);
    nbc__lower_emit(L, "%s = icmp slt %s %s, 0", neg, ty, is_signed ? step.v : "0");
    nbc__lower_emit(L, "%s = and i1 %s, %s", a, pos, up);
    nbc__lower_emit(L, "%s = and i1 %s, %s", b, neg, down);
    nbc__lower_emit(L, "%s = or i1 %s, %s", cond, a, b);
  }
  nbc__lower_condbr(L, cond, body, other);
  nbc__lower_block(L, body);
  nbc__lval iv = {ct, i};
  assign_to(L, s->a, iv);
  if (!push_loop(L, s, end, next)) return;
  lower_block(L, &s->body);
  L->loop_depth--;
  nbc__lower_block(L, next);
  const char *n = nbc__lower_tmp(L);
  nbc__lower_emit(L, "%s = add %s %s, %s", n, ty, i, step.v);
  nbc__lower_emit(L, "store %s %s, %s* %s", ty, n, ty, counter);
  nbc__lower_br(L, test);
  loop_else(L, s, other, end);
  nbc__lower_block(L, end);
}

static void emit_return(nbc__lowerer *L, nbc__lval v) {
  nbc__func *fn = L->fn;
  if (fn->is_kernel) {
    emit_terminator(L, "ret void");
    return;
  }
  const nbc__type *rt = fn->ret;
  bool none = !nbc__lower_has_value(rt);
  if (uses_c_abi(fn)) {
    if (none) {
      emit_terminator(L, "ret i8* null");
      return;
    }
    v = nbc__lower_convert(L, v, rt);
    const char *x = nbc__lower_to_memory(L, v);
    emit_terminator(L, nbc__arena_printf(L->arena, "ret %s %s", nbc__lower_ret_type(L, rt), x));
    return;
  }
  if (!none) {
    v = nbc__lower_convert(L, v, rt);
    if (rt->kind == NBC__T_RECORD) /* the record's address, as numba returns one */
      nbc__lower_emit(L, "store i8* %s, i8** %s", v.v, L->ret_slot);
    else
      nbc__lower_store(L, v, L->ret_slot);
  }
  emit_terminator(L, "ret i32 0");
}

static void lower_return(nbc__lowerer *L, nbc__node *s) {
  nbc__lval v = {nbc__type_scalar(NBC__T_VOID), "null"};
  if (s->a) v = nbc__lower_expr(L, s->a);
  if (nbc__lower_failed(L)) return;
  if (L->fn->is_kernel && s->a && nbc__lower_has_value(v.type)) {
    const nbc__token *at = s->tok;
    nbc__diag_error_kind(L->ctx, NBC_UNSUPPORTED, NBC_ERROR_KIND_KERNEL_RETURN,
                         at ? at->file : NULL, at ? at->line : 1, at ? at->col : 1, "%s",
                         NBC__KERNEL_RETURN_RULE);
    return;
  }
  if (!nbc__lower_has_value(v.type) && nbc__lower_has_value(L->fn->ret))
    v.v = nbc__lower_zero(L, L->fn->ret);
  emit_return(L, v);
}

static void lower_stmt(nbc__lowerer *L, nbc__node *s) {
  nbc__lower_set_loc(L, s);
  switch (s->kind) {
  case NBC__N_ASSIGN: lower_assign(L, s); break;
  case NBC__N_AUGASSIGN: lower_augassign(L, s); break;
  case NBC__N_EXPR_STMT:
    /* A bare string (a docstring) or constant has no effect. */
    if (s->a->kind != NBC__N_STR) nbc__lower_expr(L, s->a);
    break;
  case NBC__N_IF: lower_if(L, s); break;
  case NBC__N_WHILE: lower_while(L, s); break;
  case NBC__N_FOR: lower_for(L, s); break;
  case NBC__N_BREAK:
  case NBC__N_CONTINUE:
    if (L->loop_depth == 0) {
      nbc__lower_error(L, s, "'%s' outside loop", s->kind == NBC__N_BREAK ? "break" : "continue");
      break;
    }
    nbc__lower_br(L, s->kind == NBC__N_BREAK ? L->loop_break[L->loop_depth - 1]
                                             : L->loop_continue[L->loop_depth - 1]);
    break;
  case NBC__N_RETURN: lower_return(L, s); break;
  case NBC__N_PASS: break;
  case NBC__N_RAISE: nbc__lower_raise(L, s); break;
  case NBC__N_ASSERT: { /* a failed assert raises AssertionError: the thread ends */
    const char *ok = nbc__lower_truth(L, nbc__lower_expr(L, s->a));
    int fail = nbc__lower_label(L), go = nbc__lower_label(L);
    nbc__lower_condbr(L, ok, go, fail);
    nbc__lower_block(L, fail);
    nbc__lower_raise(L, s);
    nbc__lower_block(L, go);
    break;
  }
  case NBC__N_IMPORT:
  case NBC__N_IMPORT_FROM:
    nbc__lower_error(L, s, "import inside a function is not supported");
    break;
  case NBC__N_FUNCDEF:
    nbc__lower_error(L, s, "nested functions are not supported");
    break;
  case NBC__N_TRY:
    nbc__lower_error(L, s, "'try' is not supported");
    break;
  default:
    nbc__lower_error(L, s, "unsupported statement");
  }
}

static void lower_block(nbc__lowerer *L, const nbc__list *body) {
  for (int i = 0; i < body->count && !nbc__lower_failed(L); i++) lower_stmt(L, body->items[i]);
}

/* --------------------------------------------------------------- functions ---------- */

static int def_line(const nbc__func *fn) {
  const nbc__token *tok = fn->def ? fn->def->tok : NULL;
  return tok ? nbc__token_user_line(tok) : 1;
}

static void lower_function(nbc__lowerer *L, nbc__func *fn, nbc__buf *out) {
  L->fn = fn;
  nbc__buf_init(&L->allocas, L->arena);
  nbc__buf_init(&L->body, L->arena);
  L->tmp = 0;
  L->lmem_count = 0;
  L->label = 0;
  L->terminated = false;
  L->loop_depth = 0;
  L->loc_meta = L->loc_line = L->loc_col = 0;
  L->sp_meta = 0;
  L->slots = nbc__arena_alloc(L->arena, sizeof *L->slots * (size_t)(fn->nvars + 1));
  if (!L->slots) {
    nbc__diag_oom(L->ctx);
    return;
  }
  const char *sym = nbc__lower_symbol(L, fn);
  if (L->debug_info) {
    L->sp_meta = L->next_meta++;
    int line = def_line(fn);
    nbc__buf_printf(&L->meta,
                    "!%d = distinct !DISubprogram(name: \"%s\", linkageName: \"%s\", scope: !%d, "
                    "file: !%d, line: %d, type: !%d, isLocal: %s, isDefinition: true, "
                    "scopeLine: %d, isOptimized: %s, unit: !%d)\n",
                    L->sp_meta, fn->name ? fn->name : sym, sym, L->file_meta, L->file_meta,
                    line, L->subroutine_meta, fn->is_entry ? "false" : "true", line,
                    L->ctx->options->opt ? "true" : "false", L->cu_meta);
    nbc__lower_set_loc(L, fn->def);
  }

  /* Parameters: the return slot for the Numba ABI, then each argument flattened. */
  nbc__buf params, types;
  nbc__buf_init(&params, L->arena);
  nbc__buf_init(&types, L->arena);
  bool c_abi = uses_c_abi(fn);
  const char *ret_type;
  if (fn->is_kernel) {
    ret_type = "void";
  } else if (c_abi) {
    ret_type = nbc__lower_ret_type(L, fn->ret);
  } else {
    ret_type = "i32";
    const char *slot_ty = nbc__arena_printf(L->arena, "%s*", nbc__lower_ret_type(L, fn->ret));
    nbc__buf_printf(&params, "%s noalias %%.ret", slot_ty);
    nbc__buf_printf(&types, "%s", slot_ty);
    L->ret_slot = "%.ret";
  }
  /* Variables: one alloca each; parameters are stored into theirs. */
  for (int i = 0; i < fn->nvars; i++)
    if (nbc__lower_has_value(fn->vars[i].type))
      L->slots[i] = nbc__lower_alloca(L, nbc__lower_ltype(L, fn->vars[i].type));
  for (int a = 0; a < fn->nargs; a++) {
    int k = 0;
    nbc__lval v = unflatten_param(L, fn->argtypes[a], a, &k, &params, &types);
    for (int i = 0; i < fn->nvars; i++)
      if (fn->vars[i].is_param && fn->vars[i].param_index == a && L->slots[i] &&
          nbc__lower_has_value(fn->argtypes[a])) {
        const char *ty = nbc__lower_ltype(L, fn->vars[i].type);
        nbc__lval cv = nbc__lower_convert(L, v, fn->vars[i].type);
        nbc__lower_emit(L, "store %s %s, %s* %s", ty, cv.v, ty, L->slots[i]);
      }
  }
  nbc__lower_debug_variables(L, fn, def_line(fn));

  lower_block(L, &fn->def->body);
  if (nbc__lower_failed(L)) return;
  if (!L->terminated) {
    /* Falling off the end returns None (infer has made the return type accept it). */
    nbc__lval none = {nbc__type_scalar(NBC__T_VOID), "null"};
    if (nbc__lower_has_value(fn->ret)) none = (nbc__lval){fn->ret, nbc__lower_zero(L, fn->ret)};
    emit_return(L, none);
  }

  const char *linkage = fn->is_entry ? "" : "internal ";
  const nbc_compile_options_t *o = L->ctx->options;
  nbc__buf_printf(out, "define %s%s %s(%s)%s%s {\nentry:\n", linkage, ret_type,
                  global_ref(L, sym), params.data ? params.data : "",
                  (fn->is_entry && o->forceinline && !fn->is_kernel) || fn->forceinline
                      ? " alwaysinline"
                      : "",
                  L->debug_info ? nbc__arena_printf(L->arena, " !dbg !%d", L->sp_meta) : "");
  nbc__buf_append(out, L->allocas.data ? L->allocas.data : "", L->allocas.len);
  nbc__buf_append(out, L->body.data ? L->body.data : "", L->body.len);
  nbc__buf_puts(out, "}\n\n");

  if (fn->is_kernel) {
    const char *fty = nbc__arena_printf(L->arena, "void (%s)*", types.data ? types.data : "");
    nbc__buf_printf(&L->used, "%si8* bitcast (%s %s to i8*)", L->nused++ ? ", " : "", fty,
                    global_ref(L, sym));
    int m = L->next_meta++;
    nbc__buf_printf(&L->annotations, "%s!%d", L->nannotations++ ? ", " : "", m);
    nbc__buf_printf(&L->meta, "!%d = !{%s %s, !\"kernel\", i32 1}\n", m, fty, global_ref(L, sym));
    /* numba's set_launch_bounds: only maxntidx (the limit is on the block's total size). */
    static const char *const bound_names[3] = {"maxntidx", "minctasm", "cluster_max_blocks"};
    for (int b = 0; b < o->nlaunch_bounds && b < 3; b++) {
      m = L->next_meta++;
      nbc__buf_printf(&L->annotations, ", !%d", m);
      L->nannotations++;
      nbc__buf_printf(&L->meta, "!%d = !{%s %s, !\"%s\", i32 %u}\n", m, fty, global_ref(L, sym),
                      bound_names[b], o->launch_bounds[b]);
    }
  }
  if (fn->is_entry && !c_abi) {
    /* numba's environment global: a null pointer, visible, named after the function. */
    const char *env = mangle(L, fn, "08NumbaEnv");
    nbc__buf_printf(&L->globals, "%s = global i8* null, align 8\n", global_ref(L, env));
  }
}

/* --------------------------------------------------------------- the module --------- */

static void debug_header(nbc__lowerer *L, const nbc__func *entry) {
  const nbc__file *f = entry->module ? entry->module->file : NULL;
  const char *path = f && f->name ? f->name : "<string>";
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  const char *dir = slash ? nbc__arena_strndup(L->arena, path, (size_t)(slash - path)) : ".";
  if (slash == path) dir = "/";
  L->file_meta = L->next_meta++;
  L->cu_meta = L->next_meta++;
  L->subroutine_meta = L->next_meta++;
  int flags = L->next_meta++, dwarf = L->next_meta++;
  bool full = L->ctx->options->debug;
  nbc__buf_printf(&L->meta, "!llvm.dbg.cu = !{!%d}\n", L->cu_meta);
  nbc__buf_printf(&L->meta, "!llvm.module.flags = !{!%d, !%d}\n", flags, dwarf);
  nbc__buf_printf(&L->meta, "!%d = !DIFile(filename: \"%s\", directory: \"%s\")\n", L->file_meta,
                  base, dir);
  nbc__buf_printf(&L->meta,
                  "!%d = distinct !DICompileUnit(language: DW_LANG_Python, file: !%d, "
                  "producer: \"nbcuda %s\", isOptimized: %s, runtimeVersion: 0, "
                  "emissionKind: %s)\n",
                  L->cu_meta, L->file_meta, NBC_VERSION_STRING,
                  L->ctx->options->opt ? "true" : "false",
                  full ? "FullDebug" : "DebugDirectivesOnly");
  nbc__buf_printf(&L->meta, "!%d = !DISubroutineType(types: !{})\n", L->subroutine_meta);
  nbc__buf_printf(&L->meta, "!%d = !{i32 2, !\"Debug Info Version\", i32 3}\n", flags);
  nbc__buf_printf(&L->meta, "!%d = !{i32 2, !\"Dwarf Version\", i32 4}\n", dwarf);
}

bool nbc__lower(nbc__ctx *ctx, const nbc__program *program, nbc__buf *out) {
  if (!program || !program->entry) {
    NBC__BUG(ctx, "nbc__lower called without a program");
    return false;
  }
  nbc__lowerer L;
  memset(&L, 0, sizeof L);
  L.ctx = ctx;
  L.program = program;
  L.arena = ctx->arena;
  nbc__buf_init(&L.globals, L.arena);
  nbc__buf_init(&L.decls, L.arena);
  nbc__buf_init(&L.meta, L.arena);
  nbc__buf_init(&L.used, L.arena);
  nbc__buf_init(&L.annotations, L.arena);
  L.debug_info = ctx->options->debug || ctx->options->lineinfo;
  if (L.debug_info) debug_header(&L, program->entry);

  nbc__buf funcs;
  nbc__buf_init(&funcs, L.arena);
  for (nbc__func *fn = program->funcs; fn && !nbc__lower_failed(&L); fn = fn->next)
    nbc__lower_symbol(&L, fn);
  nbc__lower_raise_begin(&L);
  for (nbc__func *fn = program->funcs; fn && !nbc__lower_failed(&L); fn = fn->next)
    lower_function(&L, fn, &funcs);
  nbc__lower_raise_globals(&L);
  if (nbc__lower_failed(&L)) return false;

  nbc__buf_puts(out,
                "target datalayout = \"e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-"
                "i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-"
                "v128:128:128-n16:32:64\"\n"
                "target triple = \"nvptx64-nvidia-cuda\"\n\n");
  if (L.globals.len) {
    nbc__buf_append(out, L.globals.data, L.globals.len);
    nbc__buf_puts(out, "\n");
  }
  nbc__buf_append(out, funcs.data ? funcs.data : "", funcs.len);
  if (L.decls.len) {
    nbc__buf_append(out, L.decls.data, L.decls.len);
    nbc__buf_puts(out, "\n");
  }
  if (L.nused)
    nbc__buf_printf(out,
                    "@llvm.used = appending global [%d x i8*] [%s], section \"llvm.metadata\"\n\n",
                    L.nused, L.used.data);
  if (L.nannotations) nbc__buf_printf(out, "!nvvm.annotations = !{%s}\n", L.annotations.data);
  int version = L.next_meta++;
  nbc__buf_printf(out, "!nvvmir.version = !{!%d}\n", version);
  nbc__buf_printf(out, "!%d = !{i32 2, i32 0%s}\n", version,
                  L.debug_info ? ", i32 3, i32 2" : "");
  if (L.meta.len) nbc__buf_append(out, L.meta.data, L.meta.len);
  if (ctx->program == program) ctx->program->uses_libdevice = L.uses_libdevice;
  if (out->oom || L.meta.oom || funcs.oom) {
    nbc__diag_oom(ctx);
    return false;
  }
  return true;
}
