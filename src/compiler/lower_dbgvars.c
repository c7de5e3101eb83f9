/* lower_dbgvars.c — a debug build's variables (options->debug): each parameter and local gets
 * a DILocalVariable (a parameter with its position, `arg: n`) and an llvm.dbg.declare on its
 * stack slot, so that cuda-gdb shows them by name in the Python function (`info locals`,
 * `print z`, `print a.shape`), as numba-cuda's debug kernels do. The slot is stable for the
 * whole function (the alloca every variable has, lower.c), which ptxas keeps at -O0 (numba's
 * reason too for describing parameters with dbg.declare).
 *
 * The types described are numba's, laid out as the slot's LLVM type (nbc__lower_ltype):
 * - numbers as DIBasicType (numba's names; bool DW_ATE_boolean of 8 bits, an IntEnum member
 *   as its int, dates and time deltas as their int64, a grid group as numba's GridGroup
 *   handle);
 * - complex numbers as a structure of `real` and `imag`;
 * - arrays as numba's array structure: `meminfo`, `parent` (byte pointers), `nitems`,
 *   `itemsize`, `data` (a pointer to the element), `shape` and `strides` (arrays of ndim
 *   int64);
 * - tuples as a structure of members f0, f1, ... at the offsets of the LLVM structure's
 *   natural layout (numba-cuda's own tuple descriptions add the members' sizes without their
 *   alignment; these match the memory), an Optional as numba's {data, valid};
 * - a record (its value is a pointer to its bytes) as a pointer to a structure of its fields
 *   at their offsets: array fields as arrays of their extents, strings as arrays of their
 *   characters (uint8 for S<n>, uint32 for U<n>), nested records as structures, a field of
 *   any other type as its bytes.
 * A name bound again with another type is a separate variable (ssa.c) with its own slot: each
 * is described under its version's name, `foo`, `foo.1`, `foo.2`... (numba describes one
 * variable of a union type instead). Strings are arrays of their characters, CUDA vector
 * types (float32x4...) structures of x, y, z, w. Variables of other types (ranges, functions,
 * pointers...) are not described; nor are the compiler's own hidden ones (`$...`).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "compiler/lower.h"

/* A type described: its metadata node and the size and alignment in bits of its LLVM value
 * type; meta 0 for a type not described. */
typedef struct {
  int meta;
  long long bits, align;
} described;

struct nbc__di_type { /* the lowerer's list of composite types already described */
  const nbc__type *type;
  bool bytes; /* a record's bytes (the structure), not its value (a pointer to them) */
  described d;
  struct nbc__di_type *next;
};

/* The basic type t is described as — a number (an IntEnum member as its int), a grid group
 * (numba's GridGroup handle) or a date or time delta (its int64) — with numba's DWARF encoding
 * and size in bits; NULL for other types. */
static const nbc__type *basic_type(const nbc__type *t, const char **pencoding, int *pbits) {
  if (nbc__type_is_int_enum(t)) t = t->dtype;
  *pbits = nbc__type_bits(t);
  if (t->kind == NBC__T_BOOL) {
    *pencoding = "DW_ATE_boolean";
    *pbits = 8;
  } else if (nbc__type_is_int(t)) {
    *pencoding = nbc__type_is_signed(t) ? "DW_ATE_signed" : "DW_ATE_unsigned";
  } else if (t->kind == NBC__T_FLOAT16 || t->kind == NBC__T_FLOAT32 ||
             t->kind == NBC__T_FLOAT64) {
    *pencoding = "DW_ATE_float";
  } else if (t->kind == NBC__T_GRID_GROUP) { /* numba's GridGroup: its 64-bit handle */
    *pencoding = "DW_ATE_unsigned";
    *pbits = 64;
  } else if (nbc__type_is_datetime(t)) { /* numba's NPDatetime/NPTimedelta models: an int64 */
    *pencoding = "DW_ATE_signed";
    *pbits = 64;
  } else {
    return NULL;
  }
  return t;
}

static int new_meta(nbc__lowerer *L) { return L->next_meta++; }

/* text as the inside of an LLVM string: '"', '\\' and bytes outside printable ASCII as \XX
 * (a record's field names are any str numpy accepts). */
static const char *ir_text(nbc__lowerer *L, const char *text) {
  nbc__buf b;
  nbc__buf_init(&b, L->arena);
  for (const unsigned char *p = (const unsigned char *)text; *p; p++)
    if (*p == '"' || *p == '\\' || *p < 0x20 || *p > 0x7e)
      nbc__buf_printf(&b, "\\%02X", *p);
    else
      nbc__buf_append(&b, (const char *)p, 1);
  return b.data ? b.data : "";
}

static described describe_basic(nbc__lowerer *L, const nbc__type *t) {
  const char *encoding;
  int bits;
  const nbc__type *shown = basic_type(t, &encoding, &bits);
  if (!shown) return (described){0, 0, 0};
  int unit_meta = 0; /* dates: one per unit, which the kind does not tell */
  int *meta = nbc__type_is_datetime(shown) ? &unit_meta : &L->basic_type_meta[shown->kind];
  if (!*meta) {
    *meta = new_meta(L);
    nbc__buf_printf(&L->meta, "!%d = !DIBasicType(name: \"%s\", size: %d, encoding: %s)\n",
                    *meta, nbc__type_name(L->ctx, shown), bits, encoding);
  }
  return (described){*meta, bits, bits};
}

/* numba's "i8": the bytes a pointer points at when their type is not described. */
static int byte_type(nbc__lowerer *L) {
  if (!L->byte_type_meta) {
    L->byte_type_meta = new_meta(L);
    nbc__buf_printf(&L->meta,
                    "!%d = !DIBasicType(name: \"i8\", size: 8, encoding: DW_ATE_unsigned)\n",
                    L->byte_type_meta);
  }
  return L->byte_type_meta;
}

static int pointer_to(nbc__lowerer *L, int base) {
  int m = new_meta(L);
  nbc__buf_printf(&L->meta, "!%d = !DIDerivedType(tag: DW_TAG_pointer_type, baseType: !%d, "
                  "size: 64)\n", m, base);
  return m;
}

static int member(nbc__lowerer *L, const char *name, int base, long long bits,
                  long long offset) {
  int m = new_meta(L);
  nbc__buf_printf(&L->meta, "!%d = !DIDerivedType(tag: DW_TAG_member, name: \"%s\", "
                  "baseType: !%d, size: %lld, offset: %lld)\n", m, ir_text(L, name), base, bits,
                  offset);
  return m;
}

/* A structure type of the members (their metadata), named as numba names the type. */
static int structure(nbc__lowerer *L, const nbc__type *t, const int *members, int n,
                     long long bits) {
  nbc__buf list;
  nbc__buf_init(&list, L->arena);
  for (int i = 0; i < n; i++) nbc__buf_printf(&list, "%s!%d", i ? ", " : "", members[i]);
  int elements = new_meta(L), m = new_meta(L);
  nbc__buf_printf(&L->meta, "!%d = !{%s}\n", elements, list.data ? list.data : "");
  nbc__buf_printf(&L->meta, "!%d = distinct !DICompositeType(tag: DW_TAG_structure_type, "
                  "name: \"%s\", size: %lld, elements: !%d)\n", m,
                  ir_text(L, nbc__type_name(L->ctx, t)), bits, elements);
  return m;
}

static described describe(nbc__lowerer *L, const nbc__type *t);
static described record_bytes(nbc__lowerer *L, const nbc__type *t);
static int array_of(nbc__lowerer *L, const char *name, int element, long long bits,
                    const int64_t *extents, int ndim);

/* A value of type t as memory holds it (an array's element, a record's field): a record as
 * its bytes, anything else as its value. */
static described in_memory(nbc__lowerer *L, const nbc__type *t) {
  return t && t->kind == NBC__T_RECORD ? record_bytes(L, t) : describe(L, t);
}

static described describe_complex(nbc__lowerer *L, const nbc__type *t) {
  described p = describe_basic(L, nbc__type_complex_part(t));
  int members[2] = {member(L, "real", p.meta, p.bits, 0),
                    member(L, "imag", p.meta, p.bits, p.bits)};
  return (described){structure(L, t, members, 2, 2 * p.bits), 2 * p.bits, p.align};
}

/* numba's array structure {i8*, i8*, i64, i64, T*, [n x i64], [n x i64]}. */
static described describe_array(nbc__lowerer *L, const nbc__type *t) {
  described int64 = describe_basic(L, nbc__type_scalar(NBC__T_INT64));
  described element = in_memory(L, t->dtype);
  int byte_pointer = pointer_to(L, byte_type(L));
  int data = pointer_to(L, element.meta ? element.meta : byte_type(L));
  long long dims = 64LL * t->ndim;
  int64_t ndim = t->ndim;
  int extents = array_of(L, nbc__arena_printf(L->arena, "UniTuple(int64 x %d)", t->ndim),
                         int64.meta, dims, &ndim, 1);
  int members[7] = {member(L, "meminfo", byte_pointer, 64, 0),
                    member(L, "parent", byte_pointer, 64, 64),
                    member(L, "nitems", int64.meta, 64, 128),
                    member(L, "itemsize", int64.meta, 64, 192),
                    member(L, "data", data, 64, 256),
                    member(L, "shape", extents, dims, 320),
                    member(L, "strides", extents, dims, 320 + dims)};
  long long bits = 320 + 2 * dims;
  return (described){structure(L, t, members, 7, bits), bits, 64};
}

/* A structure of the items (a tuple's f0, f1..., an Optional's data and valid) at the offsets
 * of the LLVM structure's natural layout; meta 0 when an item is not described. */
static described describe_items(nbc__lowerer *L, const nbc__type *t, const nbc__type **items,
                                const char *const *names, int count) {
  int *members = nbc__arena_alloc(L->arena, sizeof *members * (size_t)(count ? count : 1));
  if (!members) return (described){0, 0, 0};
  long long offset = 0, align = 8;
  for (int i = 0; i < count; i++) {
    described item = describe(L, items[i]);
    if (!item.meta) return (described){0, 0, 0};
    offset = (offset + item.align - 1) / item.align * item.align;
    char name[24];
    if (!names) snprintf(name, sizeof name, "f%d", i);
    members[i] = member(L, names ? names[i] : name, item.meta, item.bits, offset);
    offset += item.bits;
    if (item.align > align) align = item.align;
  }
  long long bits = (offset + align - 1) / align * align;
  return (described){structure(L, t, members, count, bits), bits, align};
}

/* An array type of the element over the extents (numba's shape order: the last varies
 * fastest). */
static int array_of(nbc__lowerer *L, const char *name, int element, long long bits,
                    const int64_t *extents, int ndim) {
  nbc__buf list;
  nbc__buf_init(&list, L->arena);
  for (int d = 0; d < ndim; d++) {
    int range = new_meta(L);
    nbc__buf_printf(&L->meta, "!%d = !DISubrange(count: %lld)\n", range,
                    (long long)extents[d]);
    nbc__buf_printf(&list, "%s!%d", d ? ", " : "", range);
  }
  int ranges = new_meta(L), m = new_meta(L);
  nbc__buf_printf(&L->meta, "!%d = !{%s}\n", ranges, list.data ? list.data : "");
  nbc__buf_printf(&L->meta, "!%d = !DICompositeType(tag: DW_TAG_array_type, name: \"%s\", "
                  "baseType: !%d, size: %lld, elements: !%d)\n", m, ir_text(L, name), element,
                  bits, ranges);
  return m;
}

/* A string (numpy's S<n> or U<n>, numba's [char x n] / [unichr x n]) as the array of its n
 * characters: uint8 bytes or uint32 code points. */
static described string_chars(nbc__lowerer *L, const nbc__type *t) {
  int char_bits = t->kind == NBC__T_CHARSEQ ? 8 : 32;
  described c = describe_basic(L, nbc__type_scalar(char_bits == 8 ? NBC__T_UINT8
                                                                  : NBC__T_UINT32));
  int64_t n = t->size;
  long long bits = char_bits * (long long)n;
  return (described){array_of(L, nbc__type_name(L->ctx, t), c.meta, bits, &n, 1), bits,
                     char_bits};
}

/* A record's bytes as a structure of its fields at their offsets: numbers, complex numbers
 * and nested records as themselves, array fields as arrays of their extents, strings as
 * arrays of characters, anything else as the field's bytes. */
static described describe_record(nbc__lowerer *L, const nbc__type *t) {
  int *members = nbc__arena_alloc(L->arena, sizeof *members * (size_t)(t->count ? t->count : 1));
  if (!members) return (described){0, 0, 0};
  for (int i = 0; i < t->count; i++) {
    const nbc__type *f = t->items[i];
    long long bits = 8LL * nbc__type_record_field_size(t, i);
    int type = 0;
    if (f->kind == NBC__T_ARRAY && t->field_shapes[i]) {
      described e = in_memory(L, f->dtype);
      if (e.meta)
        type = array_of(L, nbc__type_name(L->ctx, f), e.meta, bits, t->field_shapes[i],
                        f->ndim);
    } else if (nbc__type_is_charseq(f)) {
      type = string_chars(L, f).meta;
    } else if (f->kind != NBC__T_ARRAY) {
      type = in_memory(L, f).meta;
    }
    if (!type) { /* the field's bytes */
      int64_t n = bits / 8;
      type = array_of(L, "bytes", byte_type(L), bits, &n, 1);
    }
    members[i] = member(L, t->field_names[i], type, bits, 8LL * t->field_offsets[i]);
  }
  long long bits = 8LL * t->size;
  return (described){structure(L, t, members, t->count, bits), bits, 8};
}

static described *cached(nbc__lowerer *L, const nbc__type *t, bool bytes) {
  for (struct nbc__di_type *e = L->di_types; e; e = e->next)
    if (e->type == t && e->bytes == bytes) return &e->d;
  return NULL;
}

static described cache(nbc__lowerer *L, const nbc__type *t, bool bytes, described d) {
  struct nbc__di_type *e = nbc__arena_alloc(L->arena, sizeof *e);
  if (e) {
    *e = (struct nbc__di_type){t, bytes, d, L->di_types};
    L->di_types = e;
  }
  return d;
}

/* A record's bytes: the structure of its fields (each record type once per module). */
static described record_bytes(nbc__lowerer *L, const nbc__type *t) {
  described *d = cached(L, t, true);
  return d ? *d : cache(L, t, true, describe_record(L, t));
}

/* The value of type t described (each composite once per module); meta 0 when it is not: a
 * record's value is a pointer to its bytes. */
static described describe(nbc__lowerer *L, const nbc__type *t) {
  if (!t) return (described){0, 0, 0};
  described basic = describe_basic(L, t);
  if (basic.meta) return basic;
  described *d = cached(L, t, false);
  if (d) return *d;
  described v = {0, 0, 0};
  if (t->kind == NBC__T_ARRAY) {
    v = describe_array(L, t);
  } else if (t->kind == NBC__T_TUPLE) {
    v = describe_items(L, t, t->items, NULL, t->count);
  } else if (t->kind == NBC__T_OPTIONAL) { /* numba's OptionalModel {data, valid} */
    const nbc__type *items[2] = {t->dtype, nbc__type_scalar(NBC__T_BOOL)};
    const char *names[2] = {"data", "valid"};
    v = describe_items(L, t, items, names, 2);
  } else if (t->kind == NBC__T_VECTOR) { /* numba's float32x4...: members x, y, z, w */
    const nbc__type *items[4] = {t->dtype, t->dtype, t->dtype, t->dtype};
    const char *names[4] = {"x", "y", "z", "w"};
    if (t->count >= 1 && t->count <= 4) v = describe_items(L, t, items, names, t->count);
  } else if (nbc__type_is_charseq(t)) { /* its characters, as a string field's */
    v = string_chars(L, t);
  } else if (t->kind == NBC__T_RECORD) {
    described bytes = record_bytes(L, t);
    if (bytes.meta) v = (described){pointer_to(L, bytes.meta), 64, 64};
  } else if (nbc__type_is_complex(t)) {
    v = describe_complex(L, t);
  }
  return cache(L, t, false, v);
}

/* A Python variable's name, or one of its versions (ssa.c's `name.1`, `name.2`... for a name
 * bound again with another type or in a separate web); the compiler's own start with '$'. */
static bool user_name(const char *name) {
  if (!name || !(isalpha((unsigned char)name[0]) || name[0] == '_')) return false;
  const char *p = name;
  while (isalnum((unsigned char)*p) || *p == '_') p++;
  if (*p == '.' && isdigit((unsigned char)p[1]))
    for (p++; isdigit((unsigned char)*p);) p++;
  return *p == '\0';
}

void nbc__lower_debug_variables(nbc__lowerer *L, const nbc__func *fn, int line) {
  if (!L->ctx->options->debug || L->sp_meta <= 0) return;
  int loc = 0;
  for (int i = 0; i < fn->nvars; i++) {
    const nbc__var *v = &fn->vars[i];
    if (!L->slots[i] || !v->type || !user_name(v->name)) continue;
    described type = describe(L, v->type);
    if (!type.meta) continue;
    if (!loc) { /* where the declarations are: the def line */
      loc = L->next_meta++;
      nbc__buf_printf(&L->meta, "!%d = !DILocation(line: %d, column: 1, scope: !%d)\n", loc,
                      line, L->sp_meta);
      nbc__lower_declare(L, "declare void @llvm.dbg.declare(metadata, metadata, metadata)");
    }
    int var_meta = L->next_meta++;
    nbc__buf_printf(&L->meta, "!%d = !DILocalVariable(name: \"%s\", ", var_meta, v->name);
    if (v->is_param) nbc__buf_printf(&L->meta, "arg: %d, ", v->param_index + 1);
    nbc__buf_printf(&L->meta, "scope: !%d, file: !%d, line: %d, type: !%d)\n", L->sp_meta,
                    L->file_meta, line, type.meta);
    nbc__buf_printf(&L->allocas,
                    "  call void @llvm.dbg.declare(metadata %s* %s, metadata !%d, metadata "
                    "!DIExpression()), !dbg !%d\n",
                    nbc__lower_ltype(L, v->type), L->slots[i], var_meta, loc);
  }
}
