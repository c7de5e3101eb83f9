/* lower_dbgvars.c — a debug build's variables (options->debug): each parameter and local of
 * a number type gets a DILocalVariable (a parameter with its position, `arg: n`) and an
 * llvm.dbg.declare on its stack slot, so that cuda-gdb shows them by name in the Python
 * function (`info locals`, `print z`), as numba-cuda's debug kernels do. The slot is stable
 * for the whole function (the alloca every variable has, lower.c), which ptxas keeps at
 * -O0 (numba's reason too for describing parameters with dbg.declare).
 *
 * Variables of other types (arrays, tuples, records, Optional) are not described; nor are
 * the compiler's own hidden ones (names that are not Python identifiers).
 */
#include <ctype.h>
#include <string.h>

#include "compiler/lower.h"

/* The number type a variable of type t is described as (an IntEnum member as its int), with
 * numba's DWARF encoding and size in bits; NULL for other types. */
static const nbc__type *basic_type(const nbc__type *t, const char **pencoding, int *pbits) {
  if (nbc__type_is_int_enum(t)) t = t->dtype;
  if (t->kind == NBC__T_BOOL)
    *pencoding = "DW_ATE_boolean";
  else if (nbc__type_is_int(t))
    *pencoding = nbc__type_is_signed(t) ? "DW_ATE_signed" : "DW_ATE_unsigned";
  else if (t->kind == NBC__T_FLOAT16 || t->kind == NBC__T_FLOAT32 || t->kind == NBC__T_FLOAT64)
    *pencoding = "DW_ATE_float";
  else
    return NULL;
  *pbits = t->kind == NBC__T_BOOL ? 8 : nbc__type_bits(t);
  return t;
}

static bool identifier(const char *name) {
  if (!name || !(isalpha((unsigned char)name[0]) || name[0] == '_')) return false;
  for (const char *p = name; *p; p++)
    if (!isalnum((unsigned char)*p) && *p != '_') return false;
  return true;
}

void nbc__lower_debug_variables(nbc__lowerer *L, const nbc__func *fn, int line) {
  if (!L->ctx->options->debug || L->sp_meta <= 0) return;
  int loc = 0;
  for (int i = 0; i < fn->nvars; i++) {
    const nbc__var *v = &fn->vars[i];
    const char *encoding;
    int bits;
    const nbc__type *shown = L->slots[i] && v->type && identifier(v->name)
                                 ? basic_type(v->type, &encoding, &bits)
                                 : NULL;
    if (!shown) continue;
    if (!loc) { /* where the declarations are: the def line */
      loc = L->next_meta++;
      nbc__buf_printf(&L->meta, "!%d = !DILocation(line: %d, column: 1, scope: !%d)\n", loc,
                      line, L->sp_meta);
      nbc__lower_declare(L, "declare void @llvm.dbg.declare(metadata, metadata, metadata)");
    }
    int *type_meta = &L->basic_type_meta[shown->kind];
    if (!*type_meta) {
      *type_meta = L->next_meta++;
      nbc__buf_printf(&L->meta, "!%d = !DIBasicType(name: \"%s\", size: %d, encoding: %s)\n",
                      *type_meta, nbc__type_name(L->ctx, shown), bits, encoding);
    }
    int var_meta = L->next_meta++;
    nbc__buf_printf(&L->meta, "!%d = !DILocalVariable(name: \"%s\", ", var_meta, v->name);
    if (v->is_param) nbc__buf_printf(&L->meta, "arg: %d, ", v->param_index + 1);
    nbc__buf_printf(&L->meta, "scope: !%d, file: !%d, line: %d, type: !%d)\n", L->sp_meta,
                    L->file_meta, line, *type_meta);
    nbc__buf_printf(&L->allocas,
                    "  call void @llvm.dbg.declare(metadata %s* %s, metadata !%d, metadata "
                    "!DIExpression()), !dbg !%d\n",
                    nbc__lower_ltype(L, v->type), L->slots[i], var_meta, loc);
  }
}
