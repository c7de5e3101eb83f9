/* types.c — nbcuda's types and numba's typing rules for them.
 *
 * Scalars are static singletons indexed by kind; arrays and tuples are allocated in the
 * compilation's arena (a few static tuples serve math.frexp/modf so that the typing
 * functions need no arena and stay thread-safe).
 *
 * The typing of operators and builtins does what numba does rather than imitating its
 * results: numba types `a + b` by overload resolution over a list of concrete signatures
 * ("cases") per operator, rating each case by the conversions the arguments need
 * (exact < promote < safe < unsafe, from the cast graph of numba/core/typeconv/rules.py)
 * and taking the first case with the fewest unsafe, then safe, then promoting
 * conversions. Reproducing the cast graph and the case lists gives numba's answers for
 * every pair of types, including its surprises (`bool ** int32` is float32 because the
 * case (float32, int32) needs one safe conversion and (int64, int64) one safe plus one
 * promotion). The chosen case also says which type each operand is converted to, which
 * infer.c records as casts for lower.c. tests/c/test_typing_table.c checks every row of
 * numba-cuda's own answers (tests/data/numba_typing.tsv) against these functions.
 *
 * Unification (a variable assigned values of two types, both arms of `a and b`) follows
 * numba's unify_pairs: numbers unify by NumPy's promote_types, booleans convert safely
 * to any number, arrays of the same dtype and rank unify to layout A, tuples element-wise.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"

/* ------------------------------------------------------------------ scalar singletons */

#define T_(k) ((nbc__type_kind)NBC__T_##k)

static const nbc__type scalar_types[NBC__T_KIND_COUNT_] = {
    [NBC__T_VOID] = {.kind = NBC__T_VOID},
#define NBC__T_INIT_(name, text, size) [NBC__T_##name] = {.kind = NBC__T_##name},
    NBC__SCALAR_TYPES(NBC__T_INIT_)
#undef NBC__T_INIT_
        [NBC__T_NONE] = {.kind = NBC__T_NONE},
    [NBC__T_RANGE] = {.kind = NBC__T_RANGE},
    [NBC__T_GRID_GROUP] = {.kind = NBC__T_GRID_GROUP},
};

static const char *const scalar_names[] = {
#define NBC__T_NAME_(name, text, size) text,
    NBC__SCALAR_TYPES(NBC__T_NAME_)
#undef NBC__T_NAME_
};
static const size_t scalar_sizes[] = {
#define NBC__T_SIZE_(name, text, size) size,
    NBC__SCALAR_TYPES(NBC__T_SIZE_)
#undef NBC__T_SIZE_
};

static bool is_scalar_kind(nbc__type_kind k) {
  return k >= NBC__T_BOOL && k <= NBC__T_COMPLEX128;
}

const nbc__type *nbc__type_scalar(nbc__type_kind kind) {
  if (kind == NBC__T_VOID || kind == NBC__T_NONE || kind == NBC__T_RANGE ||
      kind == NBC__T_GRID_GROUP || is_scalar_kind(kind))
    return &scalar_types[kind];
  return NULL;
}

#define S_(k) (&scalar_types[NBC__T_##k])

/* Static tuples returned by math.frexp and math.modf. */
static const nbc__type *const frexp32_items[] = {S_(FLOAT32), S_(INT32)};
static const nbc__type *const frexp64_items[] = {S_(FLOAT64), S_(INT32)};
static const nbc__type *const modf32_items[] = {S_(FLOAT32), S_(FLOAT32)};
static const nbc__type *const modf64_items[] = {S_(FLOAT64), S_(FLOAT64)};
static const nbc__type frexp32_type = {
    .kind = NBC__T_TUPLE, .count = 2, .items = (const nbc__type **)frexp32_items};
static const nbc__type frexp64_type = {
    .kind = NBC__T_TUPLE, .count = 2, .items = (const nbc__type **)frexp64_items};
static const nbc__type modf32_type = {
    .kind = NBC__T_TUPLE, .count = 2, .items = (const nbc__type **)modf32_items};
static const nbc__type modf64_type = {
    .kind = NBC__T_TUPLE, .count = 2, .items = (const nbc__type **)modf64_items};

/* The nesting of a type holding items: one more than its deepest item's. */
static int nest_over(const nbc__type *const *items, int count) {
  int nest = 0;
  for (int i = 0; i < count; i++)
    if (items[i] && items[i]->nest > nest) nest = items[i]->nest;
  return nest + 1;
}

/* The values a tuple or record of these items expands to, saturating at INT_MAX / 2. */
static int values_over(const nbc__type *const *items, int count) {
  int64_t values = 0;
  for (int i = 0; i < count && values < INT_MAX / 2; i++)
    values += nbc__type_values(items[i]);
  return values < INT_MAX / 2 ? (int)values : INT_MAX / 2;
}

const nbc__type *nbc__type_array(nbc__ctx *ctx, const nbc__type *dtype, int ndim, char layout) {
  nbc__type *t = nbc__arena_alloc(ctx->arena, sizeof *t);
  if (!t) return NULL;
  t->kind = NBC__T_ARRAY;
  t->dtype = dtype;
  t->ndim = ndim;
  t->layout = layout;
  t->nest = nest_over(&dtype, 1);
  return t;
}

const char *nbc__py_module_path(const nbc__type *t) {
  size_t n = sizeof NBC__PY_MODULE_PREFIX - 1;
  bool py = t && t->kind == NBC__T_MODULE && t->name &&
            strncmp(t->name, NBC__PY_MODULE_PREFIX, n) == 0;
  return py ? t->name + n : NULL;
}

const nbc__type *nbc__type_readonly(nbc__ctx *ctx, const nbc__type *t) {
  if (!t || t->readonly || (t->kind != NBC__T_ARRAY && t->kind != NBC__T_RECORD)) return t;
  nbc__type *r = nbc__arena_alloc(ctx->arena, sizeof *r);
  if (!r) return NULL;
  *r = *t;
  r->readonly = true;
  return r;
}

const nbc__type *nbc__type_tuple(nbc__ctx *ctx, const nbc__type **items, int count) {
  nbc__type *t = nbc__arena_alloc(ctx->arena, sizeof *t);
  const nbc__type **copy =
      nbc__arena_alloc(ctx->arena, sizeof *copy * (size_t)(count ? count : 1));
  if (!t || !copy) return NULL;
  memcpy(copy, items, sizeof *copy * (size_t)count);
  t->kind = NBC__T_TUPLE;
  t->items = copy;
  t->count = count;
  t->nest = nest_over(copy, count);
  t->values = values_over(copy, count);
  return t;
}

const nbc__type *nbc__type_enum(nbc__ctx *ctx, nbc__type_kind kind, const char *name,
                                const nbc__type *dtype, bool int_enum) {
  nbc__type *t = nbc__arena_alloc(ctx->arena, sizeof *t);
  if (!t || !dtype || !name) return NULL;
  t->kind = kind;
  t->name = nbc__arena_strdup(ctx->arena, name);
  t->dtype = dtype;
  t->int_enum = int_enum;
  return t->name ? t : NULL;
}

const nbc__type *nbc__type_optional(nbc__ctx *ctx, const nbc__type *dtype) {
  if (!ctx || !dtype) return NULL;
  if (dtype->kind == NBC__T_OPTIONAL) return dtype;
  nbc__type *t = nbc__arena_alloc(ctx->arena, sizeof *t);
  if (!t) return NULL;
  t->kind = NBC__T_OPTIONAL;
  t->dtype = dtype;
  t->nest = nest_over(&dtype, 1);
  return t;
}

const nbc__type *nbc__type_pointer(nbc__ctx *ctx, const nbc__type *dtype) {
  nbc__type *t = nbc__arena_alloc(ctx->arena, sizeof *t);
  if (!t || !dtype) return NULL;
  t->kind = NBC__T_POINTER;
  t->dtype = dtype;
  t->nest = nest_over(&dtype, 1);
  return t;
}

const nbc__type *nbc__type_vector(nbc__ctx *ctx, const nbc__type *dtype, int count) {
  nbc__type *t = nbc__arena_alloc(ctx->arena, sizeof *t);
  if (!t || !dtype || count < 1 || count > 4) return NULL;
  t->kind = NBC__T_VECTOR;
  t->dtype = dtype;
  t->count = count;
  t->name = nbc__arena_printf(ctx->arena, "%sx%d", nbc__type_name(ctx, dtype), count);
  return t->name ? t : NULL;
}

const nbc__type *nbc__type_record(nbc__ctx *ctx, const char *const *names,
                                  const nbc__type *const *types, const int64_t *offsets,
                                  const int64_t *const *shapes, int count, int64_t size,
                                  bool aligned) {
  nbc__type *t = nbc__arena_alloc(ctx->arena, sizeof *t);
  size_t n = (size_t)(count ? count : 1);
  const char **nm = nbc__arena_alloc(ctx->arena, sizeof *nm * n);
  const nbc__type **ty = nbc__arena_alloc(ctx->arena, sizeof *ty * n);
  int64_t *off = nbc__arena_alloc(ctx->arena, sizeof *off * n);
  const int64_t **shp = nbc__arena_alloc(ctx->arena, sizeof *shp * n);
  if (!t || !nm || !ty || !off || !shp) return NULL;
  for (int i = 0; i < count; i++) {
    if (!(nm[i] = nbc__arena_strdup(ctx->arena, names[i]))) return NULL;
    ty[i] = types[i];
    off[i] = offsets[i];
    shp[i] = NULL;
    if (shapes && shapes[i] && types[i]->kind == NBC__T_ARRAY) {
      int64_t *copy = nbc__arena_alloc(ctx->arena, sizeof *copy * (size_t)types[i]->ndim);
      if (!copy) return NULL;
      memcpy(copy, shapes[i], sizeof *copy * (size_t)types[i]->ndim);
      shp[i] = copy;
    }
  }
  t->kind = NBC__T_RECORD;
  t->count = count;
  t->field_names = nm;
  t->items = ty;
  t->field_offsets = off;
  t->field_shapes = shp;
  t->size = size;
  t->aligned = aligned;
  t->nest = nest_over(ty, count);
  t->values = values_over(ty, count);
  return t;
}

int nbc__type_record_field(const nbc__type *record, const char *name, size_t len) {
  for (int i = 0; record && record->kind == NBC__T_RECORD && i < record->count; i++)
    if (strlen(record->field_names[i]) == len && memcmp(record->field_names[i], name, len) == 0)
      return i;
  return -1;
}

int64_t nbc__type_record_field_size(const nbc__type *record, int i) {
  const nbc__type *f = record->items[i];
  if (f->kind != NBC__T_ARRAY) return (int64_t)nbc__type_size(f);
  int64_t n = (int64_t)nbc__type_size(f->dtype);
  for (int d = 0; d < f->ndim; d++) n *= record->field_shapes[i][d];
  return n;
}

/* The largest power of two that divides x, at most cap. */
static int pow2_dividing(int64_t x, int cap) {
  int align = 1;
  while (align < cap && !(x & align)) align *= 2;
  return align;
}

int nbc__type_natural_align(const nbc__type *e) {
  if (e->kind == NBC__T_RECORD) return nbc__type_record_align(e);
  if (e->kind == NBC__T_CHARSEQ) return 1;
  if (e->kind == NBC__T_UNICHARSEQ) return 4;
  return (int)nbc__type_size(e) / (nbc__type_is_complex(e) ? 2 : 1);
}

int nbc__type_record_align(const nbc__type *record) {
  int align = 1;
  for (int i = 0; i < record->count; i++) {
    int a = nbc__type_record_field_align(record, i);
    if (a > align) align = a;
  }
  return align;
}

/* A record's natural alignment divides its size (each field's alignment does), so an array
 * field's element stride and its elements' natural alignment bound the same powers of two. */
int nbc__type_record_field_align(const nbc__type *record, int i) {
  const nbc__type *f = record->items[i];
  bool array = f->kind == NBC__T_ARRAY;
  int natural = nbc__type_natural_align(array ? f->dtype : f);
  return pow2_dividing(record->field_offsets[i] | record->size | (array ? natural : 0), natural);
}

const nbc__type *nbc__type_charseq(nbc__ctx *ctx, nbc__type_kind kind, int64_t count) {
  nbc__type *t = nbc__arena_alloc(ctx->arena, sizeof *t);
  if (!t) return NULL;
  memset(t, 0, sizeof *t);
  t->kind = kind;
  t->size = count;
  return t;
}

bool nbc__type_is_charseq(const nbc__type *t) {
  return t && (t->kind == NBC__T_CHARSEQ || t->kind == NBC__T_UNICHARSEQ);
}

const nbc__type *nbc__type_special(nbc__ctx *ctx, nbc__type_kind kind, const char *name,
                                   const nbc__type *dtype) {
  nbc__type *t = nbc__arena_alloc(ctx->arena, sizeof *t);
  if (!t) return NULL;
  t->kind = kind;
  t->name = name ? nbc__arena_strdup(ctx->arena, name) : NULL;
  t->dtype = dtype;
  return t;
}

bool nbc__type_equal(const nbc__type *a, const nbc__type *b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind) return false;
  switch (a->kind) {
  case NBC__T_ARRAY:
    return a->ndim == b->ndim && a->layout == b->layout && a->readonly == b->readonly &&
           nbc__type_equal(a->dtype, b->dtype);
  case NBC__T_TUPLE:
    if (a->count != b->count || !a->field_names != !b->field_names) return false;
    if (a->field_names && (strcmp(a->name, b->name) != 0)) return false; /* NamedTuple */
    for (int i = 0; i < a->count; i++)
      if (!nbc__type_equal(a->items[i], b->items[i]) ||
          (a->field_names && strcmp(a->field_names[i], b->field_names[i]) != 0))
        return false;
    return true;
  case NBC__T_MODULE:
  case NBC__T_FUNCTION:
    return a->name && b->name && strcmp(a->name, b->name) == 0 && a->ref == b->ref;
  case NBC__T_DTYPE: /* a NumberClass (np.float32) and a DType (a.dtype) differ */
    return nbc__type_equal(a->dtype, b->dtype) &&
           (a->name && strcmp(a->name, "dtype") == 0) == (b->name && strcmp(b->name, "dtype") == 0);
  case NBC__T_FLAT:
  case NBC__T_POINTER:
  case NBC__T_OPTIONAL:
    return nbc__type_equal(a->dtype, b->dtype);
  case NBC__T_ENUM:
  case NBC__T_ENUM_CLASS: /* one class: its qualified name */
    return strcmp(a->name, b->name) == 0 && nbc__type_equal(a->dtype, b->dtype) &&
           a->int_enum == b->int_enum;
  case NBC__T_RANGE: /* range_state_<counter>: the counter type, int64 when not given */
    return nbc__type_equal(a->dtype ? a->dtype : S_(INT64), b->dtype ? b->dtype : S_(INT64));
  case NBC__T_VECTOR:
    return a->count == b->count && nbc__type_equal(a->dtype, b->dtype);
  case NBC__T_DATETIME:
  case NBC__T_TIMEDELTA: /* interned, but compare the unit anyway */
    return a->count == b->count;
  case NBC__T_CHARSEQ:
  case NBC__T_UNICHARSEQ:
    return a->size == b->size;
  case NBC__T_RECORD:
    if (a->count != b->count || a->size != b->size || a->aligned != b->aligned) return false;
    for (int i = 0; i < a->count; i++)
      if (strcmp(a->field_names[i], b->field_names[i]) != 0 ||
          a->field_offsets[i] != b->field_offsets[i] ||
          !nbc__type_equal(a->items[i], b->items[i]) ||
          (a->items[i]->kind == NBC__T_ARRAY &&
           memcmp(a->field_shapes[i], b->field_shapes[i],
                  sizeof(int64_t) * (size_t)a->items[i]->ndim) != 0))
        return false;
    return true;
  default:
    return true; /* scalars, none, void, range: the kind says all */
  }
}

bool nbc__type_is_numbers_tuple(const nbc__type *t) {
  if (!t || t->kind != NBC__T_TUPLE) return false;
  for (int i = 0; i < t->count; i++)
    if (!nbc__type_is_number(t->items[i]) && !nbc__type_is_numbers_tuple(t->items[i]))
      return false;
  return true;
}

bool nbc__type_is_int(const nbc__type *t) {
  return t && t->kind >= NBC__T_INT8 && t->kind <= NBC__T_UINT64;
}
bool nbc__type_is_signed(const nbc__type *t) {
  return t && t->kind >= NBC__T_INT8 && t->kind <= NBC__T_INT64;
}
bool nbc__type_is_float(const nbc__type *t) {
  return t && t->kind >= NBC__T_FLOAT16 && t->kind <= NBC__T_FLOAT64;
}
bool nbc__type_is_complex(const nbc__type *t) {
  return t && (t->kind == NBC__T_COMPLEX64 || t->kind == NBC__T_COMPLEX128);
}
const nbc__type *nbc__type_complex_part(const nbc__type *t) {
  return nbc__type_scalar(t->kind == NBC__T_COMPLEX64 ? NBC__T_FLOAT32 : NBC__T_FLOAT64);
}
bool nbc__type_is_int_enum(const nbc__type *t) {
  return t && t->kind == NBC__T_ENUM && t->int_enum;
}

bool nbc__type_is_number(const nbc__type *t) {
  return t && is_scalar_kind(t->kind);
}

size_t nbc__type_size(const nbc__type *t) {
  if (t && t->kind == NBC__T_RECORD) return (size_t)t->size;
  if (t && t->kind == NBC__T_BFLOAT16) return 2;
  if (nbc__type_is_datetime(t)) return 8;
  if (t && t->kind == NBC__T_CHARSEQ) return (size_t)t->size;
  if (t && t->kind == NBC__T_UNICHARSEQ) return 4 * (size_t)t->size;
  return t && is_scalar_kind(t->kind) ? scalar_sizes[t->kind - NBC__T_BOOL] : 0;
}
int nbc__type_bits(const nbc__type *t) {
  if (!t) return 0;
  if (t->kind == NBC__T_BOOL) return 1;
  return (int)nbc__type_size(t) * 8;
}

/* ------------------------------------------------------------------------- printing */

void nbc__type_print(nbc__buf *out, const nbc__type *t) {
  if (!t) {
    nbc__buf_puts(out, "undefined");
    return;
  }
  switch (t->kind) {
  case NBC__T_VOID:
    nbc__buf_puts(out, "void");
    return;
  case NBC__T_NONE:
    nbc__buf_puts(out, "none");
    return;
  case NBC__T_BOOL:
    nbc__buf_puts(out, "bool");
    return; /* numba prints types.boolean so */
  case NBC__T_RECORD: /* numba's spelling, which the signature parser reads back */
    nbc__buf_puts(out, "Record(");
    for (int i = 0; i < t->count; i++) {
      nbc__buf_printf(out, "%s%s[type=", i ? "," : "", t->field_names[i]);
      const nbc__type *f = t->items[i];
      if (f->kind == NBC__T_ARRAY) { /* numba's NestedArray: nestedarray(float32, (3, 2)) */
        nbc__buf_puts(out, "nestedarray(");
        nbc__type_print(out, f->dtype);
        nbc__buf_puts(out, ", (");
        for (int d = 0; d < f->ndim; d++)
          nbc__buf_printf(out, "%s%lld", d ? ", " : "", (long long)t->field_shapes[i][d]);
        nbc__buf_puts(out, f->ndim == 1 ? ",))" : "))");
      } else {
        nbc__type_print(out, f);
      }
      nbc__buf_printf(out, ";offset=%lld]", (long long)t->field_offsets[i]);
    }
    nbc__buf_printf(out, ";%lld;%s)", (long long)t->size, t->aligned ? "True" : "False");
    return;
  case NBC__T_ARRAY:
    if (t->dtype && t->dtype->kind == NBC__T_RECORD && !t->dtype->aligned)
      nbc__buf_puts(out, "unaligned "); /* numba's Array of a packed record */
    nbc__buf_printf(out, "%sarray(", t->readonly ? "readonly " : "");
    nbc__type_print(out, t->dtype);
    nbc__buf_printf(out, ", %dd, %c)", t->ndim, t->layout);
    return;
  case NBC__T_TUPLE: {
    if (t->field_names) { /* nbcuda's spelling of numba's NamedTuple: class, then fields */
      nbc__buf_printf(out, "NamedTuple(%s", t->name);
      for (int i = 0; i < t->count; i++) {
        nbc__buf_printf(out, ", %s: ", t->field_names[i]);
        nbc__type_print(out, t->items[i]);
      }
      nbc__buf_puts(out, ")");
      return;
    }
    bool uni = t->count > 0;
    for (int i = 1; i < t->count; i++)
      if (!nbc__type_equal(t->items[i], t->items[0])) uni = false;
    if (uni) {
      nbc__buf_puts(out, "UniTuple(");
      nbc__type_print(out, t->items[0]);
      nbc__buf_printf(out, " x %d)", t->count);
      return;
    }
    nbc__buf_puts(out, "Tuple(");
    for (int i = 0; i < t->count; i++) {
      if (i) nbc__buf_puts(out, ", ");
      nbc__type_print(out, t->items[i]);
    }
    nbc__buf_puts(out, ")");
    return;
  }
  case NBC__T_FLAT: /* numba's NumpyFlatType name */
    nbc__buf_puts(out, "array.flat(");
    nbc__type_print(out, t->dtype);
    nbc__buf_puts(out, ")");
    return;
  case NBC__T_RANGE:
    nbc__buf_puts(out, "range_state_");
    nbc__type_print(out, t->dtype ? t->dtype : S_(INT64));
    return;
  case NBC__T_GRID_GROUP:
    nbc__buf_puts(out, "GridGroup");
    return;
  case NBC__T_OPTIONAL: /* numba's name */
    nbc__buf_puts(out, "OptionalType(");
    nbc__type_print(out, t->dtype);
    nbc__buf_puts(out, ")");
    return;
  case NBC__T_ENUM: /* numba's EnumMember / IntEnumMember name; the signature parser reads it
                       back */
  case NBC__T_ENUM_CLASS:
    if (t->kind == NBC__T_ENUM_CLASS)
      nbc__buf_puts(out, t->int_enum ? "IntEnumClass<" : "EnumClass<");
    else
      nbc__buf_puts(out, t->int_enum ? "IntEnum<" : "Enum<");
    nbc__type_print(out, t->dtype);
    nbc__buf_printf(out, ">(%s)", t->name);
    return;
  case NBC__T_POINTER: /* numba's CPointer name; the signature parser reads it back */
    nbc__type_print(out, t->dtype);
    nbc__buf_puts(out, "*");
    return;
  case NBC__T_VECTOR:
    nbc__buf_puts(out, t->name ? t->name : "vector");
    return;
  case NBC__T_BFLOAT16: /* numba-cuda's name; the signature parser reads it back */
    nbc__buf_puts(out, "__nv_bfloat16");
    return;
  case NBC__T_CHARSEQ: /* numba's names; the signature parser reads them back */
  case NBC__T_UNICHARSEQ:
    nbc__buf_printf(out, "[%s x %lld]", t->kind == NBC__T_CHARSEQ ? "char" : "unichr",
                    (long long)t->size);
    return;
  case NBC__T_DATETIME: /* numba's names; the signature parser reads them back */
  case NBC__T_TIMEDELTA:
    nbc__buf_printf(out, "%s[%s]", t->kind == NBC__T_DATETIME ? "datetime64" : "timedelta64",
                    t->name);
    return;
  case NBC__T_MODULE:
    if (nbc__py_module_path(t)) /* numba's Module(<module 'hm'>) */
      nbc__buf_printf(out, "Module(<module '%s'>)", nbc__py_module_path(t));
    else
      nbc__buf_printf(out, "Module(%s)", t->name ? t->name : "?");
    return;
  case NBC__T_FUNCTION:
    nbc__buf_printf(out, "Function(%s)", t->name ? t->name : "?");
    return;
  case NBC__T_DTYPE: /* numba's NumberClass, or the DType of a.dtype */
    nbc__buf_puts(out, t->name && strcmp(t->name, "dtype") == 0 ? "dtype(" : "class(");
    nbc__type_print(out, t->dtype);
    nbc__buf_puts(out, ")");
    return;
  default:
    if (is_scalar_kind(t->kind)) {
      nbc__buf_puts(out, scalar_names[t->kind - NBC__T_BOOL]);
      return;
    }
    nbc__buf_puts(out, "?");
  }
}

const char *nbc__type_name(nbc__ctx *ctx, const nbc__type *t) {
  nbc__buf b;
  nbc__buf_init(&b, ctx->arena);
  nbc__type_print(&b, t);
  return b.data ? b.data : "";
}

/* Scalar names and numba's aliases (numba.types / numba.*). float_ is float32, as older
 * numba defined it (numba 0.68 dropped the name; SPEC.md keeps it). */
static const struct {
  const char *name;
  nbc__type_kind kind;
} type_aliases[] = {
    {"boolean", T_(BOOL)},
    {"bool_", T_(BOOL)},
    {"bool", T_(BOOL)},
    {"b1", T_(BOOL)},
    {"int8", T_(INT8)},
    {"i1", T_(INT8)},
    {"char", T_(INT8)},
    {"int16", T_(INT16)},
    {"i2", T_(INT16)},
    {"short", T_(INT16)},
    {"int32", T_(INT32)},
    {"i4", T_(INT32)},
    {"intc", T_(INT32)},
    {"int64", T_(INT64)},
    {"i8", T_(INT64)},
    {"intp", T_(INT64)},
    {"int_", T_(INT64)},
    {"long_", T_(INT64)},
    {"longlong", T_(INT64)},
    {"uint8", T_(UINT8)},
    {"u1", T_(UINT8)},
    {"byte", T_(UINT8)},
    {"uint16", T_(UINT16)},
    {"u2", T_(UINT16)},
    {"ushort", T_(UINT16)},
    {"uint32", T_(UINT32)},
    {"u4", T_(UINT32)},
    {"uintc", T_(UINT32)},
    {"uint64", T_(UINT64)},
    {"u8", T_(UINT64)},
    {"uintp", T_(UINT64)},
    {"uint", T_(UINT64)},
    {"ulong", T_(UINT64)},
    {"ulonglong", T_(UINT64)},
    {"float16", T_(FLOAT16)},
    {"f2", T_(FLOAT16)},
    {"float32", T_(FLOAT32)},
    {"f4", T_(FLOAT32)},
    {"float_", T_(FLOAT32)},
    {"float64", T_(FLOAT64)},
    {"f8", T_(FLOAT64)},
    {"double", T_(FLOAT64)},
    {"complex64", T_(COMPLEX64)},
    {"c8", T_(COMPLEX64)},
    {"complex128", T_(COMPLEX128)},
    {"c16", T_(COMPLEX128)},
};

const nbc__type *nbc__type_by_name(const char *name, size_t len) {
  if ((len == 8 && memcmp(name, "bfloat16", 8) == 0) ||
      (len == 13 && memcmp(name, "__nv_bfloat16", 13) == 0))
    return nbc__type_bfloat16();
  for (size_t i = 0; i < sizeof type_aliases / sizeof type_aliases[0]; i++)
    if (strlen(type_aliases[i].name) == len && memcmp(type_aliases[i].name, name, len) == 0)
      return &scalar_types[type_aliases[i].kind];
  return NULL;
}

/* ----------------------------------------------------------------- the cast graph */

/* Rows: from; columns: to; over the 14 scalar kinds (BOOL..COMPLEX128). Filled once from
 * numba's rules by a minimax closure (the conversion along a path is its worst step). */
#define NSCALAR (NBC__T_COMPLEX128 - NBC__T_BOOL + 1)
static unsigned char conv_table[NSCALAR][NSCALAR];

static void conv_edge(nbc__type_kind a, nbc__type_kind b, int fwd, int back) {
  unsigned char *f = &conv_table[a - NBC__T_BOOL][b - NBC__T_BOOL];
  unsigned char *r = &conv_table[b - NBC__T_BOOL][a - NBC__T_BOOL];
  if (fwd && fwd < *f) *f = (unsigned char)fwd;
  if (back && back < *r) *r = (unsigned char)back;
}

static void conv_build(void) {
  enum { P = NBC__CONV_PROMOTE, S = NBC__CONV_SAFE, U = NBC__CONV_UNSAFE };
  for (int i = 0; i < NSCALAR; i++)
    for (int j = 0; j < NSCALAR; j++)
      conv_table[i][j] = i == j ? NBC__CONV_EXACT : NBC__CONV_NONE;
  /* numba/core/typeconv/rules.py, as installed by numba 0.68 (int64 and uint64 convert
   * to float64 *safely* there, float16 sits between int8 and float32). */
  conv_edge(T_(BOOL), T_(INT8), S, U);
  conv_edge(T_(BOOL), T_(UINT8), S, U);
  conv_edge(T_(INT8), T_(INT16), P, U);
  conv_edge(T_(UINT8), T_(UINT16), P, U);
  conv_edge(T_(INT16), T_(INT32), P, U);
  conv_edge(T_(UINT16), T_(UINT32), P, U);
  conv_edge(T_(INT32), T_(INT64), P, U);
  conv_edge(T_(UINT32), T_(UINT64), P, U);
  conv_edge(T_(UINT8), T_(INT16), S, U);
  conv_edge(T_(UINT16), T_(INT32), S, U);
  conv_edge(T_(UINT32), T_(INT64), S, U);
  conv_edge(T_(INT8), T_(FLOAT16), S, U);
  conv_edge(T_(INT16), T_(FLOAT32), S, U);
  conv_edge(T_(INT32), T_(FLOAT64), S, U);
  conv_edge(T_(INT64), T_(FLOAT64), S, U);
  conv_edge(T_(UINT64), T_(FLOAT64), S, U);
  conv_edge(T_(FLOAT16), T_(FLOAT32), P, U);
  conv_edge(T_(FLOAT32), T_(FLOAT64), P, U);
  conv_edge(T_(FLOAT32), T_(COMPLEX64), S, 0);
  conv_edge(T_(FLOAT64), T_(COMPLEX128), S, 0);
  conv_edge(T_(COMPLEX64), T_(COMPLEX128), P, U);
  for (int k = 0; k < NSCALAR; k++)
    for (int i = 0; i < NSCALAR; i++)
      for (int j = 0; j < NSCALAR; j++) {
        int v = conv_table[i][k] > conv_table[k][j] ? conv_table[i][k] : conv_table[k][j];
        if (v < conv_table[i][j]) conv_table[i][j] = (unsigned char)v;
      }
}

/* Built on first use; racing threads compute identical bytes, so a plain flag suffices
 * only with a once: use pthread_once to stay clean under ThreadSanitizer. */
#include <pthread.h>
static pthread_once_t conv_once = PTHREAD_ONCE_INIT;

int nbc__type_conversion(const nbc__type *from, const nbc__type *to) {
  if (!from || !to) return NBC__CONV_NONE;
  if (is_scalar_kind(from->kind) && is_scalar_kind(to->kind)) {
    pthread_once(&conv_once, conv_build);
    return conv_table[from->kind - NBC__T_BOOL][to->kind - NBC__T_BOOL];
  }
  if (nbc__type_equal(from, to)) return NBC__CONV_EXACT;
  if (nbc__type_is_int_enum(from)) /* numba's IntEnumMember: as its value */
    return nbc__type_conversion(from->dtype, to);
  if (nbc__type_is_bf16(from) || nbc__type_is_bf16(to)) { /* numba-cuda's Bfloat16 rules */
    const nbc__type *o = nbc__type_is_bf16(from) ? to : from;
    bool out = nbc__type_is_bf16(from);
    if (o->kind == NBC__T_FLOAT32 || o->kind == NBC__T_FLOAT64)
      return out ? NBC__CONV_SAFE : NBC__CONV_UNSAFE;
    if (o->kind == NBC__T_INT8 || o->kind == NBC__T_UINT8)
      return out ? NBC__CONV_UNSAFE : NBC__CONV_SAFE;
    if (nbc__type_is_int(o) || o->kind == NBC__T_FLOAT16 || o->kind == NBC__T_BOOL)
      return NBC__CONV_UNSAFE;
    return NBC__CONV_NONE;
  }
  if (from->kind == NBC__T_ARRAY && to->kind == NBC__T_ARRAY) {
    /* numba: an array converts to another layout only towards A (and to readonly). */
    if (from->ndim != to->ndim || !nbc__type_equal(from->dtype, to->dtype))
      return NBC__CONV_NONE;
    if (from->readonly && !to->readonly) return NBC__CONV_NONE;
    if (from->layout != to->layout && to->layout != 'A') return NBC__CONV_NONE;
    return NBC__CONV_SAFE;
  }
  if (from->kind == NBC__T_TUPLE && to->kind == NBC__T_TUPLE) {
    if (from->count != to->count) return NBC__CONV_NONE;
    int worst = NBC__CONV_EXACT;
    for (int i = 0; i < from->count; i++) {
      int c = nbc__type_conversion(from->items[i], to->items[i]);
      if (c > worst) worst = c;
    }
    return worst;
  }
  return NBC__CONV_NONE;
}

bool nbc__type_can_convert(const nbc__type *from, const nbc__type *to) {
  return nbc__type_conversion(from, to) != NBC__CONV_NONE;
}

/* ------------------------------------------------------------ overload resolution */

typedef nbc__type_case tcase;

#define C1(r, x)                                                                               \
  { T_(r), T_(x), NBC__T_VOID }
#define C2(r, x, y)                                                                            \
  { T_(r), T_(x), T_(y) }

/* integer_binop_cases: (int64|uint64)^2, uint64 only when both are unsigned. */
#define INT_BINOP_CASES                                                                        \
  C2(INT64, INT64, INT64), C2(INT64, INT64, UINT64), C2(INT64, UINT64, INT64),                 \
      C2(UINT64, UINT64, UINT64)

static const tcase binop_cases[] = {
    INT_BINOP_CASES, C2(FLOAT32, FLOAT32, FLOAT32), C2(FLOAT64, FLOAT64, FLOAT64),
    C2(COMPLEX64, COMPLEX64, COMPLEX64), C2(COMPLEX128, COMPLEX128, COMPLEX128)};
static const tcase truediv_cases[] = {
    C2(FLOAT64, INT64, INT64),           C2(FLOAT64, INT64, UINT64),
    C2(FLOAT64, UINT64, INT64),          C2(FLOAT64, UINT64, UINT64),
    C2(FLOAT32, FLOAT32, FLOAT32),       C2(FLOAT64, FLOAT64, FLOAT64),
    C2(COMPLEX64, COMPLEX64, COMPLEX64), C2(COMPLEX128, COMPLEX128, COMPLEX128)};
static const tcase floordiv_cases[] = {INT_BINOP_CASES, C2(FLOAT32, FLOAT32, FLOAT32),
                                       C2(FLOAT64, FLOAT64, FLOAT64)};
static const tcase pow_cases[] = {INT_BINOP_CASES,
                                  C2(FLOAT32, FLOAT32, INT32),
                                  C2(FLOAT32, FLOAT32, INT64),
                                  C2(FLOAT32, FLOAT32, UINT64),
                                  C2(FLOAT64, FLOAT64, INT32),
                                  C2(FLOAT64, FLOAT64, INT64),
                                  C2(FLOAT64, FLOAT64, UINT64),
                                  C2(FLOAT32, FLOAT32, FLOAT32),
                                  C2(FLOAT64, FLOAT64, FLOAT64),
                                  C2(COMPLEX64, COMPLEX64, COMPLEX64),
                                  C2(COMPLEX128, COMPLEX128, COMPLEX128)};
static const tcase shift_cases[] = {
    C2(INT64, INT8, UINT64),    C2(INT64, INT8, INT64),     C2(INT64, INT16, UINT64),
    C2(INT64, INT16, INT64),    C2(INT64, INT32, UINT64),   C2(INT64, INT32, INT64),
    C2(INT64, INT64, UINT64),   C2(INT64, INT64, INT64),    C2(UINT64, UINT8, UINT64),
    C2(UINT64, UINT8, INT64),   C2(UINT64, UINT16, UINT64), C2(UINT64, UINT16, INT64),
    C2(UINT64, UINT32, UINT64), C2(UINT64, UINT32, INT64),  C2(UINT64, UINT64, UINT64),
    C2(UINT64, UINT64, INT64)};
static const tcase bitwise_cases[] = {C2(BOOL, BOOL, BOOL), INT_BINOP_CASES};
#define CMP_CASES                                                                              \
  C2(BOOL, BOOL, BOOL), C2(BOOL, INT8, INT8), C2(BOOL, INT16, INT16), C2(BOOL, INT32, INT32),  \
      C2(BOOL, INT64, INT64), C2(BOOL, UINT8, UINT8), C2(BOOL, UINT16, UINT16),                \
      C2(BOOL, UINT32, UINT32), C2(BOOL, UINT64, UINT64), C2(BOOL, FLOAT32, FLOAT32),          \
      C2(BOOL, FLOAT64, FLOAT64)
static const tcase ordered_cmp_cases[] = {CMP_CASES};
static const tcase unordered_cmp_cases[] = {CMP_CASES, C2(BOOL, COMPLEX64, COMPLEX64),
                                            C2(BOOL, COMPLEX128, COMPLEX128)};
static const tcase unary_cases[] = {
    C1(UINT64, UINT8),    C1(UINT64, UINT16),       C1(UINT64, UINT32),
    C1(UINT64, UINT64),   C1(INT64, INT8),          C1(INT64, INT16),
    C1(INT64, INT32),     C1(INT64, INT64),         C1(FLOAT32, FLOAT32),
    C1(FLOAT64, FLOAT64), C1(COMPLEX64, COMPLEX64), C1(COMPLEX128, COMPLEX128),
    C1(INT64, BOOL)};
static const tcase invert_cases[] = {C1(BOOL, BOOL),     C1(UINT64, UINT8),  C1(UINT64, UINT16),
                                     C1(UINT64, UINT32), C1(UINT64, UINT64), C1(INT64, INT8),
                                     C1(INT64, INT16),   C1(INT64, INT32),   C1(INT64, INT64)};
static const tcase not_cases[] = {C1(BOOL, BOOL),      C1(BOOL, INT8),    C1(BOOL, INT16),
                                  C1(BOOL, INT32),     C1(BOOL, INT64),   C1(BOOL, UINT8),
                                  C1(BOOL, UINT16),    C1(BOOL, UINT32),  C1(BOOL, UINT64),
                                  C1(BOOL, FLOAT32),   C1(BOOL, FLOAT64), C1(BOOL, COMPLEX64),
                                  C1(BOOL, COMPLEX128)};
static const tcase abs_cases[] = {
    C1(INT8, INT8),       C1(INT16, INT16),       C1(INT32, INT32),
    C1(INT64, INT64),     C1(UINT8, UINT8),       C1(UINT16, UINT16),
    C1(UINT32, UINT32),   C1(UINT64, UINT64),     C1(FLOAT32, FLOAT32),
    C1(FLOAT64, FLOAT64), C1(FLOAT32, COMPLEX64), C1(FLOAT64, COMPLEX128)};
static const tcase round_cases[] = {C1(INT64, FLOAT32), C1(INT64, FLOAT64),
                                    C2(FLOAT32, FLOAT32, INT64), C2(FLOAT64, FLOAT64, INT64)};
#define NCASES(a) ((int)(sizeof(a) / sizeof((a)[0])))

bool nbc__type_rate_less(const int rate[3], const int best[3]) {
  for (int k = 0; k < 3; k++)
    if (rate[k] != best[k]) return rate[k] < best[k];
  return false;
}

bool nbc__type_rate(const nbc__type *const *args, const nbc__type *const *formals, int n,
                    bool unsafe_casting, int rate[3]) {
  rate[0] = rate[1] = rate[2] = 0;
  for (int k = 0; k < n; k++) {
    int conv = nbc__type_conversion(args[k], formals[k]);
    if (conv == NBC__CONV_NONE || (!unsafe_casting && conv >= NBC__CONV_UNSAFE)) return false;
    if (conv == NBC__CONV_UNSAFE)
      rate[0]++;
    else if (conv == NBC__CONV_SAFE)
      rate[1]++;
    else if (conv == NBC__CONV_PROMOTE)
      rate[2]++;
  }
  return true;
}

/* numba's BaseContext._resolve_overload: rate every case by (unsafe, safe, promote)
 * counts, keep the first best (the sort is stable). Returns the index or -1. */
static int resolve(const tcase *cases, int ncases, const nbc__type *const *args, int nargs,
                   bool unsafe_casting) {
  int best = -1;
  int best_rate[3] = {0, 0, 0};
  for (int i = 0; i < ncases; i++) {
    int want = cases[i].b == NBC__T_VOID ? 1 : 2;
    if (want != nargs) continue;
    const nbc__type *formals[2] = {&scalar_types[cases[i].a], &scalar_types[cases[i].b]};
    int rate[3];
    if (!nbc__type_rate(args, formals, nargs, unsafe_casting, rate)) continue;
    if (best < 0 || nbc__type_rate_less(rate, best_rate)) {
      best = i;
      memcpy(best_rate, rate, sizeof rate);
    }
  }
  return best;
}

const nbc__type *nbc__type_resolve_cases(const nbc__type_case *cases, int ncases,
                                         const nbc__type *const *args, int nargs,
                                         bool unsafe_casting, const nbc__type **pargs) {
  for (int k = 0; k < nargs; k++)
    if (!nbc__type_is_number(args[k])) return NULL;
  int i = resolve(cases, ncases, args, nargs, unsafe_casting);
  if (i < 0) return NULL;
  if (pargs) {
    pargs[0] = &scalar_types[cases[i].a];
    if (nargs > 1) pargs[1] = &scalar_types[cases[i].b];
  }
  return &scalar_types[cases[i].ret];
}

/* numba-cuda's float16 operator templates come before numba's own: when one operand is
 * float16 and the other converts to float16 exactly, by promotion or safely (boolean,
 * int8), the operation is done in float16. */
static bool fp16_binop(const nbc__type *a, const nbc__type *b) {
  if (!a || !b) return false;
  const nbc__type *other;
  if (a->kind == NBC__T_FLOAT16)
    other = b;
  else if (b->kind == NBC__T_FLOAT16)
    other = a;
  else
    return false;
  return nbc__type_conversion(other, S_(FLOAT16)) <= NBC__CONV_SAFE;
}

const nbc__type *nbc__type_binop_sig(nbc__op op, const nbc__type *a, const nbc__type *b,
                                     const nbc__type **pargs, const char **pwhy) {
  const nbc__type *args[2] = {a, b};
  const nbc__type *argbuf[2];
  if (!pargs) pargs = argbuf;
  const nbc__type *r = NULL;
  if (pwhy) *pwhy = NULL;
  if (a && b && (nbc__type_is_datetime(a) || nbc__type_is_datetime(b)))
    return nbc__datetime_binop_sig(op, a, b, pargs, pwhy);
  if (nbc__type_is_bf16(a) || nbc__type_is_bf16(b))
    return nbc__bf16_binop_sig(op, a, b, pargs, pwhy);
  if (!nbc__type_is_number(a) || !nbc__type_is_number(b)) goto fail;
  switch (op) {
  case NBC__OP_ADD:
  case NBC__OP_SUB:
  case NBC__OP_MUL:
  case NBC__OP_DIV:
    if (fp16_binop(a, b)) {
      pargs[0] = pargs[1] = S_(FLOAT16);
      return S_(FLOAT16);
    }
    if (op == NBC__OP_DIV)
      r = nbc__type_resolve_cases(truediv_cases, NCASES(truediv_cases), args, 2, true, pargs);
    else
      r = nbc__type_resolve_cases(binop_cases, NCASES(binop_cases), args, 2, true, pargs);
    break;
  case NBC__OP_FLOORDIV:
  case NBC__OP_MOD:
    r = nbc__type_resolve_cases(floordiv_cases, NCASES(floordiv_cases), args, 2, true, pargs);
    break;
  case NBC__OP_POW:
    r = nbc__type_resolve_cases(pow_cases, NCASES(pow_cases), args, 2, true, pargs);
    break;
  case NBC__OP_LSHIFT:
  case NBC__OP_RSHIFT:
    r = nbc__type_resolve_cases(shift_cases, NCASES(shift_cases), args, 2, false, pargs);
    break;
  case NBC__OP_BITAND:
  case NBC__OP_BITOR:
  case NBC__OP_BITXOR:
    r = nbc__type_resolve_cases(bitwise_cases, NCASES(bitwise_cases), args, 2, false, pargs);
    break;
  case NBC__OP_LT:
  case NBC__OP_LE:
  case NBC__OP_GT:
  case NBC__OP_GE:
    if (fp16_binop(a, b)) {
      pargs[0] = pargs[1] = S_(FLOAT16);
      return S_(BOOL);
    }
    r = nbc__type_resolve_cases(ordered_cmp_cases, NCASES(ordered_cmp_cases), args, 2, true,
                                pargs);
    break;
  case NBC__OP_EQ:
  case NBC__OP_NE:
    if (fp16_binop(a, b)) {
      pargs[0] = pargs[1] = S_(FLOAT16);
      return S_(BOOL);
    }
    r = nbc__type_resolve_cases(unordered_cmp_cases, NCASES(unordered_cmp_cases), args, 2, true,
                                pargs);
    break;
  default:
    break;
  }
  if (r) return r;
fail:
  if (pwhy) *pwhy = "unsupported operand types";
  return NULL;
}

const nbc__type *nbc__type_binop(nbc__op op, const nbc__type *a, const nbc__type *b,
                                 const char **pwhy) {
  return nbc__type_binop_sig(op, a, b, NULL, pwhy);
}

const nbc__type *nbc__type_unop_sig(nbc__op op, const nbc__type *a, const nbc__type **parg,
                                    const char **pwhy) {
  const nbc__type *argbuf[1];
  if (!parg) parg = argbuf;
  const nbc__type *r = NULL;
  if (pwhy) *pwhy = NULL;
  if (nbc__type_is_datetime(a)) return nbc__datetime_unop_sig(op, a, parg, pwhy);
  if (nbc__type_is_bf16(a)) { /* cuda_bf16.hpp's unary - and +; the rest via float32 */
    if (op == NBC__OP_NEG || op == NBC__OP_POS) return *parg = a;
    a = S_(FLOAT32);
  }
  if (!nbc__type_is_number(a)) goto fail;
  switch (op) {
  case NBC__OP_NEG:
  case NBC__OP_POS:
    if (a->kind == NBC__T_FLOAT16) { /* numba-cuda's fp16 unary templates */
      parg[0] = a;
      return a;
    }
    r = nbc__type_resolve_cases(unary_cases, NCASES(unary_cases), &a, 1, true, parg);
    break;
  case NBC__OP_INVERT:
    r = nbc__type_resolve_cases(invert_cases, NCASES(invert_cases), &a, 1, false, parg);
    break;
  case NBC__OP_NOT:
    r = nbc__type_resolve_cases(not_cases, NCASES(not_cases), &a, 1, true, parg);
    break;
  default:
    break;
  }
  if (r) return r;
fail:
  if (pwhy) *pwhy = "unsupported operand type";
  return NULL;
}

const nbc__type *nbc__type_unop(nbc__op op, const nbc__type *a, const char **pwhy) {
  return nbc__type_unop_sig(op, a, NULL, pwhy);
}

/* NumPy's promote_types over numba's number kinds (numba's Number.unify). */
static const nbc__type *numpy_promote(const nbc__type *a, const nbc__type *b) {
  if (a->kind == b->kind) return a;
  bool ca = nbc__type_is_complex(a), cb = nbc__type_is_complex(b);
  bool fa = nbc__type_is_float(a), fb = nbc__type_is_float(b);
  if (ca || cb || fa || fb) {
    /* The float width needed to hold each operand exactly, then the wider. */
    int wa, wb;
    const nbc__type *ts[2] = {a, b};
    int w[2];
    for (int i = 0; i < 2; i++) {
      const nbc__type *t = ts[i];
      if (nbc__type_is_complex(t))
        w[i] = (int)nbc__type_size(t) * 4; /* complex64 -> 32-bit parts */
      else if (nbc__type_is_float(t))
        w[i] = (int)nbc__type_size(t) * 8;
      else {
        size_t s = nbc__type_size(t); /* int8/uint8 -> 16, 16-bit -> 32, wider -> 64 */
        w[i] = s == 1 ? 16 : s == 2 ? 32 : 64;
      }
    }
    wa = w[0];
    wb = w[1];
    int width = wa > wb ? wa : wb;
    if (ca || cb) return width <= 32 ? S_(COMPLEX64) : S_(COMPLEX128);
    return width == 16 ? S_(FLOAT16) : width == 32 ? S_(FLOAT32) : S_(FLOAT64);
  }
  /* Two integers. */
  bool sa = nbc__type_is_signed(a), sb = nbc__type_is_signed(b);
  size_t za = nbc__type_size(a), zb = nbc__type_size(b);
  if (sa == sb) return za >= zb ? a : b;
  size_t zs = sa ? za : zb, zu = sa ? zb : za;
  if (zs > zu) return sa ? a : b;
  switch (zu) {
  case 1:
    return S_(INT16);
  case 2:
    return S_(INT32);
  case 4:
    return S_(INT64);
  default:
    return S_(FLOAT64);
  }
}

const nbc__type *nbc__type_unify(nbc__ctx *ctx, const nbc__type *a, const nbc__type *b) {
  if (!a) return b;
  if (!b) return a;
  if (nbc__type_equal(a, b)) return a;
  /* numba's IntEnumMember unifies with anything else as its integer value */
  if (nbc__type_is_int_enum(a)) return nbc__type_unify(ctx, a->dtype, b);
  if (nbc__type_is_int_enum(b)) return nbc__type_unify(ctx, a, b->dtype);
  /* numba's Optional: a number and None, or an Optional and either */
  if (a->kind == NBC__T_OPTIONAL || b->kind == NBC__T_OPTIONAL ||
      a->kind == NBC__T_NONE || b->kind == NBC__T_NONE) {
    const nbc__type *x = a->kind == NBC__T_OPTIONAL ? a->dtype : a;
    const nbc__type *y = b->kind == NBC__T_OPTIONAL ? b->dtype : b;
    const nbc__type *u = x->kind == NBC__T_NONE ? y
                         : y->kind == NBC__T_NONE ? x
                                                  : nbc__type_unify(ctx, x, y);
    return u && nbc__type_is_number(u) ? nbc__type_optional(ctx, u) : NULL;
  }
  if (nbc__type_is_bf16(a) || nbc__type_is_bf16(b)) { /* numba-cuda's Bfloat16.unify */
    const nbc__type *o = nbc__type_is_bf16(a) ? b : a;
    if (o->kind == NBC__T_INT8 || o->kind == NBC__T_UINT8) return nbc__type_bfloat16();
    if (!nbc__type_is_number(o) || nbc__type_is_complex(o)) return NULL;
    return nbc__type_unify(ctx, S_(FLOAT32), o);
  }
  bool na = nbc__type_is_number(a) && a->kind != NBC__T_BOOL;
  bool nb = nbc__type_is_number(b) && b->kind != NBC__T_BOOL;
  if (na && nb) return numpy_promote(a, b);
  if (a->kind == NBC__T_BOOL && nb) return b; /* boolean converts safely to any number */
  if (b->kind == NBC__T_BOOL && na) return a;
  if (a->kind == NBC__T_ARRAY && b->kind == NBC__T_ARRAY) {
    if (a->ndim != b->ndim || !nbc__type_equal(a->dtype, b->dtype) || !ctx) return NULL;
    nbc__type *t = (nbc__type *)nbc__type_array(ctx, a->dtype, a->ndim,
                                                a->layout == b->layout ? a->layout : 'A');
    if (t) t->readonly = a->readonly || b->readonly;
    return t;
  }
  if (a->kind == NBC__T_TUPLE && b->kind == NBC__T_TUPLE && a->count == b->count && ctx) {
    const nbc__type **items = nbc__arena_alloc(ctx->arena, sizeof *items * (size_t)a->count);
    if (!items) return NULL;
    for (int i = 0; i < a->count; i++)
      if (!(items[i] = nbc__type_unify(ctx, a->items[i], b->items[i]))) return NULL;
    return nbc__type_tuple(ctx, items, a->count);
  }
  return NULL;
}

/* Sets *pwhy (when not NULL) to what a typing function found: kind and text. */
static void set_why(nbc__type_why *pwhy, nbc__type_fail kind, const char *text) {
  if (pwhy) *pwhy = (nbc__type_why){kind, text};
}

/* The truth value's typing, with the kind of its failure. */
static bool truth(const nbc__type *t, nbc__type_why *pwhy) {
  set_why(pwhy, NBC__TYPE_NO_MATCH, NULL);
  if (t && t->kind == NBC__T_FLOAT16) {
    /* numba-cuda types it but libNVVM rejects the IR it emits; refuse it up front. */
    set_why(pwhy, NBC__TYPE_REFUSED, "the truth value of a float16 is not supported");
    return false;
  }
  if (t && (nbc__type_is_number(t) || t->kind == NBC__T_NONE || nbc__type_is_bf16(t)))
    return true;
  set_why(pwhy, NBC__TYPE_NO_MATCH, "no truth value");
  return false;
}

bool nbc__type_truth(const nbc__type *t, const char **pwhy) {
  nbc__type_why w;
  bool ok = truth(t, &w);
  if (pwhy) *pwhy = w.text;
  return ok;
}

/* ----------------------------------------------------------------------- builtins */

const nbc__type *nbc__type_call_builtin(const char *name, const nbc__type *const *args,
                                        int nargs, const nbc__type **pargs, nbc__type_why *pwhy) {
  const nbc__type *argbuf[64];
  if (!pargs) pargs = argbuf;
  set_why(pwhy, NBC__TYPE_NO_MATCH, NULL);
  if (nargs < 0 || nargs > 64) goto fail;
  if (nargs == 1 && nbc__type_is_datetime(args[0])) { /* numba's npdatetime templates */
    pargs[0] = args[0];
    bool td = args[0]->kind == NBC__T_TIMEDELTA;
    if (strcmp(name, "abs") == 0 && td) return args[0];
    if (strcmp(name, "int") == 0 && (td || args[0]->count == 10)) return S_(INT64);
    if (strcmp(name, "int") == 0) {
      set_why(pwhy, NBC__TYPE_REFUSED, /* numba: "Only datetime64[ns] can be converted" */
          "int() of a datetime64 is not supported but for datetime64[ns] (only its count of "
          "nanoseconds converts)");
      return NULL;
    }
    goto fail;
  }
  if (nargs >= 2 && nbc__type_is_datetime(args[0]) &&
      (strcmp(name, "min") == 0 || strcmp(name, "max") == 0)) {
    for (int i = 0; i < nargs; i++) /* numba: dates or timedeltas of one unit, none mixed */
      if (!nbc__type_equal(args[i], args[0])) goto fail;
    for (int i = 0; i < nargs; i++)
      pargs[i] = args[0];
    return args[0];
  }
  for (int i = 0; i < nargs; i++)
    if (!nbc__type_is_number(args[i])) goto fail;
  if (strcmp(name, "abs") == 0 && nargs == 1) {
    if (args[0]->kind == NBC__T_FLOAT16) {
      pargs[0] = args[0];
      return args[0];
    }
    const nbc__type *r =
        nbc__type_resolve_cases(abs_cases, NCASES(abs_cases), args, 1, true, pargs);
    if (r) return r;
  } else if (strcmp(name, "int") == 0 && nargs == 1) {
    if (nbc__type_is_int(args[0])) {
      pargs[0] = args[0];
      return args[0];
    }
    if (nbc__type_is_float(args[0]) || args[0]->kind == NBC__T_BOOL) {
      pargs[0] = args[0];
      return S_(INT64);
    }
    set_why(pwhy, NBC__TYPE_NO_MATCH, "int() does not support complex");
    return NULL;
  } else if (strcmp(name, "float") == 0 && nargs == 1) {
    if (args[0]->kind == NBC__T_BOOL) {
      set_why(pwhy, NBC__TYPE_NO_MATCH, "float() only support for numbers");
      return NULL;
    }
    if (nbc__type_is_complex(args[0])) {
      set_why(pwhy, NBC__TYPE_NO_MATCH, "float() does not support complex");
      return NULL;
    }
    pargs[0] = args[0];
    return nbc__type_is_int(args[0]) ? S_(FLOAT64) : args[0];
  } else if (strcmp(name, "bool") == 0 && nargs == 1) {
    if (!truth(args[0], pwhy)) return NULL;
    pargs[0] = args[0];
    return S_(BOOL);
  } else if (strcmp(name, "round") == 0 && (nargs == 1 || nargs == 2)) {
    const nbc__type *r =
        nbc__type_resolve_cases(round_cases, NCASES(round_cases), args, nargs, true, pargs);
    if (r) return r;
  } else if ((strcmp(name, "min") == 0 || strcmp(name, "max") == 0) && nargs >= 1) {
    if (nargs == 1) goto fail; /* min(iterable) of a scalar */
    const nbc__type *r = args[0];
    bool allbool = true;
    for (int i = 0; i < nargs; i++) {
      if (args[i]->kind != NBC__T_BOOL) allbool = false;
      if (nbc__type_is_complex(args[i])) {
        set_why(pwhy, NBC__TYPE_REFUSED, "min()/max() of complex numbers is not supported");
        return NULL;
      }
    }
    if (!allbool) {
      for (int i = 0; i < nargs; i++)
        if (args[i]->kind == NBC__T_BOOL) goto fail; /* numba: booleans are not Numbers */
      for (int i = 1; i < nargs; i++)
        r = numpy_promote(r, args[i]);
    }
    for (int i = 0; i < nargs; i++)
      pargs[i] = r;
    return r;
  }
fail:
  if (pwhy && !pwhy->text) pwhy->text = "no matching definition for the argument types";
  return NULL;
}

const nbc__type *nbc__type_frexp_result(const nbc__type *mantissa) {
  return mantissa->kind == NBC__T_FLOAT32 ? &frexp32_type : &frexp64_type;
}

const nbc__type *nbc__type_modf_result(const nbc__type *part) {
  return part->kind == NBC__T_FLOAT32 ? &modf32_type : &modf64_type;
}

/* range(): numba's Range template; the counter type is the chosen case's argument type
 * (range(int32) counts in int32, range(uint64) in uint64, literals in int64). */
static const tcase range_cases[] = {C1(RANGE, INT32),  C2(RANGE, INT32, INT32),
                                    C1(RANGE, INT64),  C2(RANGE, INT64, INT64),
                                    C1(RANGE, UINT64), C2(RANGE, UINT64, UINT64)};

const nbc__type *nbc__type_range(const nbc__type *const *args, int nargs, const char **pwhy) {
  if (pwhy) *pwhy = NULL;
  /* numba: a float converts (unsafely, truncating) to the case's integer type, so
   * range(1, n + 1) of a float n picks the case the other arguments rate best */
  for (int i = 0; i < nargs; i++)
    if (!nbc__type_is_int(args[i]) && !nbc__type_is_float(args[i]) &&
        !(args[i] && args[i]->kind == NBC__T_BOOL)) {
      if (pwhy) *pwhy = "range() arguments must be integers";
      return NULL;
    }
  if (nargs < 1 || nargs > 3) {
    if (pwhy) *pwhy = "range() takes 1 to 3 arguments";
    return NULL;
  }
  /* Three arguments rate like two: the template lists (T, T, T) next to (T, T); every
   * argument converts to the case's T. */
  int best = -1, best_rate[3] = {0, 0, 0};
  for (int i = 0; i < NCASES(range_cases); i++) {
    int want = range_cases[i].b == NBC__T_VOID ? 1 : 2;
    if (want != (nargs == 1 ? 1 : 2)) continue;
    const nbc__type *t = &scalar_types[range_cases[i].a];
    const nbc__type *formals[3] = {t, t, t};
    int rate[3];
    if (nbc__type_rate(args, formals, nargs, true, rate) &&
        (best < 0 || nbc__type_rate_less(rate, best_rate))) {
      best = i;
      memcpy(best_rate, rate, sizeof rate);
    }
  }
  if (best < 0) {
    if (pwhy) *pwhy = "range() arguments must be integers";
    return NULL;
  }
  return &scalar_types[range_cases[best].a];
}
