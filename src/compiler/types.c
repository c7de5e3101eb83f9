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

/* The alignment an element of type e needs: a scalar's natural one (a complex number's part),
 * a record's nbc__type_record_align. */
static int natural_align(const nbc__type *e) {
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
  int natural = natural_align(array ? f->dtype : f);
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

/* One concrete signature of a template: ret(a[, b]). */
typedef struct tcase {
  unsigned char ret, a, b; /* type kinds; b == VOID for one argument */
} tcase;

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
/* numba-cuda's math templates (numba/cuda/typing cudamath). */
static const tcase math_unary_fp16_cases[] = {C1(FLOAT64, INT64), C1(FLOAT64, UINT64),
                                              C1(FLOAT32, FLOAT32), C1(FLOAT64, FLOAT64),
                                              C1(FLOAT16, FLOAT16)};
static const tcase math_unary_cases[] = {C1(FLOAT64, INT64), C1(FLOAT64, UINT64),
                                         C1(FLOAT32, FLOAT32), C1(FLOAT64, FLOAT64)};
static const tcase math_pred_cases[] = {C1(BOOL, INT64), C1(BOOL, UINT64), C1(BOOL, FLOAT32),
                                        C1(BOOL, FLOAT64)};
static const tcase math_binary_int_cases[] = {
    C2(FLOAT64, INT64, INT64), C2(FLOAT64, UINT64, UINT64), C2(FLOAT32, FLOAT32, FLOAT32),
    C2(FLOAT64, FLOAT64, FLOAT64)};
static const tcase math_binary_cases[] = {C2(FLOAT32, FLOAT32, FLOAT32),
                                          C2(FLOAT64, FLOAT64, FLOAT64)};
static const tcase math_pow_cases[] = {
    C2(FLOAT32, FLOAT32, FLOAT32), C2(FLOAT64, FLOAT64, FLOAT64), C2(FLOAT32, FLOAT32, INT32),
    C2(FLOAT64, FLOAT64, INT32)};
static const tcase math_ldexp_cases[] = {C2(FLOAT32, FLOAT32, INT32),
                                         C2(FLOAT64, FLOAT64, INT32)};
/* frexp and modf: ret holds the argument kind; the tuple is built by the caller. */
static const tcase math_frexp_cases[] = {C1(FLOAT32, FLOAT32), C1(FLOAT64, FLOAT64)};
static const tcase math_modf_cases[] = {C1(FLOAT64, FLOAT64), C1(FLOAT32, FLOAT32)};

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

static const nbc__type *resolve_sig(const tcase *cases, int ncases,
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
      r = resolve_sig(truediv_cases, NCASES(truediv_cases), args, 2, true, pargs);
    else
      r = resolve_sig(binop_cases, NCASES(binop_cases), args, 2, true, pargs);
    break;
  case NBC__OP_FLOORDIV:
  case NBC__OP_MOD:
    r = resolve_sig(floordiv_cases, NCASES(floordiv_cases), args, 2, true, pargs);
    break;
  case NBC__OP_POW:
    r = resolve_sig(pow_cases, NCASES(pow_cases), args, 2, true, pargs);
    break;
  case NBC__OP_LSHIFT:
  case NBC__OP_RSHIFT:
    r = resolve_sig(shift_cases, NCASES(shift_cases), args, 2, false, pargs);
    break;
  case NBC__OP_BITAND:
  case NBC__OP_BITOR:
  case NBC__OP_BITXOR:
    r = resolve_sig(bitwise_cases, NCASES(bitwise_cases), args, 2, false, pargs);
    break;
  case NBC__OP_LT:
  case NBC__OP_LE:
  case NBC__OP_GT:
  case NBC__OP_GE:
    if (fp16_binop(a, b)) {
      pargs[0] = pargs[1] = S_(FLOAT16);
      return S_(BOOL);
    }
    r = resolve_sig(ordered_cmp_cases, NCASES(ordered_cmp_cases), args, 2, true, pargs);
    break;
  case NBC__OP_EQ:
  case NBC__OP_NE:
    if (fp16_binop(a, b)) {
      pargs[0] = pargs[1] = S_(FLOAT16);
      return S_(BOOL);
    }
    r = resolve_sig(unordered_cmp_cases, NCASES(unordered_cmp_cases), args, 2, true, pargs);
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
    r = resolve_sig(unary_cases, NCASES(unary_cases), &a, 1, true, parg);
    break;
  case NBC__OP_INVERT:
    r = resolve_sig(invert_cases, NCASES(invert_cases), &a, 1, false, parg);
    break;
  case NBC__OP_NOT:
    r = resolve_sig(not_cases, NCASES(not_cases), &a, 1, true, parg);
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

bool nbc__type_truth(const nbc__type *t, const char **pwhy) {
  if (pwhy) *pwhy = NULL;
  if (t && t->kind == NBC__T_FLOAT16) {
    /* numba-cuda types it but libNVVM rejects the IR it emits; refuse it up front. */
    if (pwhy) *pwhy = "the truth value of a float16 is not supported";
    return false;
  }
  if (t && (nbc__type_is_number(t) || t->kind == NBC__T_NONE || nbc__type_is_bf16(t)))
    return true;
  if (pwhy) *pwhy = "no truth value";
  return false;
}

/* ----------------------------------------------------------------------- builtins */

const nbc__type *nbc__type_call_builtin(const char *name, const nbc__type *const *args,
                                        int nargs, const nbc__type **pargs, const char **pwhy) {
  const nbc__type *argbuf[64];
  if (!pargs) pargs = argbuf;
  if (pwhy) *pwhy = NULL;
  if (nargs < 0 || nargs > 64) goto fail;
  if (nargs == 1 && nbc__type_is_datetime(args[0])) { /* numba's npdatetime templates */
    pargs[0] = args[0];
    bool td = args[0]->kind == NBC__T_TIMEDELTA;
    if (strcmp(name, "abs") == 0 && td) return args[0];
    if (strcmp(name, "int") == 0 && (td || args[0]->count == 10)) return S_(INT64);
    if (strcmp(name, "int") == 0) {
      if (pwhy) /* numba: "Only datetime64[ns] can be converted" */
        *pwhy = "int() of a datetime64 is not supported but for datetime64[ns] (only its "
                "count of nanoseconds converts)";
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
    const nbc__type *r = resolve_sig(abs_cases, NCASES(abs_cases), args, 1, true, pargs);
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
    if (pwhy) *pwhy = "int() does not support complex";
    return NULL;
  } else if (strcmp(name, "float") == 0 && nargs == 1) {
    if (args[0]->kind == NBC__T_BOOL) {
      if (pwhy) *pwhy = "float() only support for numbers";
      return NULL;
    }
    if (nbc__type_is_complex(args[0])) {
      if (pwhy) *pwhy = "float() does not support complex";
      return NULL;
    }
    pargs[0] = args[0];
    return nbc__type_is_int(args[0]) ? S_(FLOAT64) : args[0];
  } else if (strcmp(name, "bool") == 0 && nargs == 1) {
    if (!nbc__type_truth(args[0], pwhy)) return NULL;
    pargs[0] = args[0];
    return S_(BOOL);
  } else if (strcmp(name, "round") == 0 && (nargs == 1 || nargs == 2)) {
    const nbc__type *r =
        resolve_sig(round_cases, NCASES(round_cases), args, nargs, true, pargs);
    if (r) return r;
  } else if ((strcmp(name, "min") == 0 || strcmp(name, "max") == 0) && nargs >= 1) {
    if (nargs == 1) goto fail; /* min(iterable) of a scalar */
    const nbc__type *r = args[0];
    bool allbool = true;
    for (int i = 0; i < nargs; i++) {
      if (args[i]->kind != NBC__T_BOOL) allbool = false;
      if (nbc__type_is_complex(args[i])) {
        if (pwhy) *pwhy = "min()/max() of complex numbers is not supported";
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
  if (pwhy && !*pwhy) *pwhy = "no matching definition for the argument types";
  return NULL;
}

/* Which template each math function has in numba-cuda (cudamath.py). */
static const struct {
  const char *name;
  const tcase *cases;
  int ncases;
} math_funcs[] = {
#define MU16(n)                                                                                \
  { n, math_unary_fp16_cases, NCASES(math_unary_fp16_cases) }
#define MU(n)                                                                                  \
  { n, math_unary_cases, NCASES(math_unary_cases) }
    MU16("ceil"),
    MU16("cos"),
    MU16("exp"),
    MU16("floor"),
    MU16("log"),
    MU16("log10"),
    MU16("sin"),
    MU16("sqrt"),
    MU16("trunc"),
    MU16("exp2"),
    MU16("fabs"),
    MU16("log2"),
    MU("acos"),
    MU("acosh"),
    MU("asin"),
    MU("asinh"),
    MU("atan"),
    MU("atanh"),
    MU("cosh"),
    MU("degrees"),
    MU("erf"),
    MU("erfc"),
    MU("expm1"),
    MU("gamma"),
    MU("lgamma"),
    MU("log1p"),
    MU("radians"),
    MU("sinh"),
    MU("tan"),
    MU("tanh"),
    {"isnan", math_pred_cases, NCASES(math_pred_cases)},
    {"isinf", math_pred_cases, NCASES(math_pred_cases)},
    {"isfinite", math_pred_cases, NCASES(math_pred_cases)},
    {"atan2", math_binary_int_cases, NCASES(math_binary_int_cases)},
    {"hypot", math_binary_int_cases, NCASES(math_binary_int_cases)},
    {"copysign", math_binary_cases, NCASES(math_binary_cases)},
    {"fmod", math_binary_cases, NCASES(math_binary_cases)},
    {"nextafter", math_binary_cases, NCASES(math_binary_cases)},
    {"remainder", math_binary_cases, NCASES(math_binary_cases)},
    {"pow", math_pow_cases, NCASES(math_pow_cases)},
    {"ldexp", math_ldexp_cases, NCASES(math_ldexp_cases)},
    {"frexp", math_frexp_cases, NCASES(math_frexp_cases)},
    {"modf", math_modf_cases, NCASES(math_modf_cases)},
#undef MU16
#undef MU
};

bool nbc__math_exists(const char *name) {
  for (size_t i = 0; i < sizeof math_funcs / sizeof math_funcs[0]; i++)
    if (strcmp(math_funcs[i].name, name) == 0) return true;
  return false;
}

const nbc__type *nbc__type_math(const char *name, const nbc__type *const *args, int nargs,
                                const nbc__type **pargs, const char **pwhy) {
  const nbc__type *argbuf[2];
  if (!pargs) pargs = argbuf;
  if (pwhy) *pwhy = NULL;
  for (size_t i = 0; i < sizeof math_funcs / sizeof math_funcs[0]; i++) {
    if (strcmp(math_funcs[i].name, name) != 0) continue;
    int want = math_funcs[i].cases[0].b == NBC__T_VOID ? 1 : 2;
    if (nargs != want) {
      if (pwhy)
        *pwhy = want == 1 ? "takes exactly one argument" : "takes exactly two arguments";
      return NULL;
    }
    if (nargs > 2) return NULL;
    const nbc__type *r =
        resolve_sig(math_funcs[i].cases, math_funcs[i].ncases, args, nargs, true, pargs);
    if (!r) {
      if (pwhy) *pwhy = "no matching definition for the argument types";
      return NULL;
    }
    if (strcmp(name, "frexp") == 0)
      return r->kind == NBC__T_FLOAT32 ? &frexp32_type : &frexp64_type;
    if (strcmp(name, "modf") == 0)
      return r->kind == NBC__T_FLOAT32 ? &modf32_type : &modf64_type;
    return r;
  }
  if (pwhy) *pwhy = "unknown math function";
  return NULL;
}

/* ----------------------------------------------------------------------- signatures */

/* A recursive-descent parser over the signature text:
 *   signature := [type] '(' [type {',' type} [',']] ')' | type
 *   type      := (NAME | record) ['[' dim {',' dim} ']']
 *              | ('UniTuple' '(' type (',' | 'x') INT ')')
 *              | ('Tuple' '(' [type {',' type}] ')') | ('Tuple' '((' [type {',' type}] '))')
 *              | ('CPointer' '(' NAME ')') | NAME '*'      (numba's CPointer of a number)
 *              | 'Enum<' NAME '>(' qualified class name ')'  (numba's EnumMember)
 *              | 'IntEnum<' NAME '>(' qualified class name ')'  (numba's IntEnumMember)
 *   record    := numba's printed Record(...) (sig_record)
 *   dim       := ':' | '::1'
 * Layout: '::1' last is C (also for one dimension), '::1' first is F, none is A. */
typedef struct sigp {
  nbc__ctx *ctx;
  const char *text;
  const char *p;
  nbc__file file;
  int depth; /* tuples being parsed, one in another */
} sigp;

static void sig_skip(sigp *s) {
  while (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r')
    s->p++;
}

static bool sig_error(sigp *s, const char *fmt, const char *arg) {
  int col = (int)(s->p - s->text) + 1;
  char msg[256];
  snprintf(msg, sizeof msg, fmt, arg);
  nbc__diag_error(s->ctx, NBC_SIGNATURE_ERROR, &s->file, 1, col,
                  "invalid signature: %s at column %d", msg, col);
  return false;
}

/* What is at the cursor, for messages. */
static const char *sig_found(sigp *s, char *buf, size_t size) {
  if (!*s->p) return "end of signature";
  const char *e = s->p;
  if ((*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z') || *e == '_') {
    while ((*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z') || *e == '_' ||
           (*e >= '0' && *e <= '9'))
      e++;
  } else {
    e++;
  }
  snprintf(buf, size, "'%.*s'", (int)(e - s->p), s->p);
  return buf;
}

static bool sig_expect(sigp *s, char c) {
  sig_skip(s);
  if (*s->p == c) {
    s->p++;
    return true;
  }
  char want[64], found[64];
  snprintf(want, sizeof want, "expected '%c' but found %%s", c);
  return sig_error(s, want, sig_found(s, found, sizeof found));
}

static const nbc__type *sig_type(sigp *s);

static bool sig_name(sigp *s, const char **pstart, size_t *plen) {
  sig_skip(s);
  const char *b = s->p;
  if (!((*b >= 'a' && *b <= 'z') || (*b >= 'A' && *b <= 'Z') || *b == '_')) {
    char found[64];
    return sig_error(s, "expected a type name but found %s", sig_found(s, found, sizeof found));
  }
  while ((*s->p >= 'a' && *s->p <= 'z') || (*s->p >= 'A' && *s->p <= 'Z') || *s->p == '_' ||
         (*s->p >= '0' && *s->p <= '9'))
    s->p++;
  *pstart = b;
  *plen = (size_t)(s->p - b);
  return true;
}

/* '[' dim {',' dim} ']' after a scalar type. */
static const nbc__type *sig_array(sigp *s, const nbc__type *dtype) {
  int ndim = 0, unit_at = -1;
  const char *unit_pos = NULL;
  s->p++; /* '[' */
  for (;;) {
    sig_skip(s);
    if (*s->p != ':') {
      char found[64];
      sig_error(s, "expected ':' or '::1' in array dimensions but found %s",
                sig_found(s, found, sizeof found));
      return NULL;
    }
    const char *dim_pos = s->p;
    s->p++;
    sig_skip(s);
    if (*s->p == ':') {
      unit_pos = dim_pos;
      s->p++;
      sig_skip(s);
      if (*s->p != '1') {
        char found[64];
        sig_error(s, "expected '1' after '::' but found %s", sig_found(s, found, sizeof found));
        return NULL;
      }
      s->p++;
      if (unit_at >= 0) {
        sig_error(s, "%s", "more than one '::1' dimension");
        return NULL;
      }
      unit_at = ndim;
    }
    if (++ndim > 32) {
      sig_error(s, "%s", "arrays have at most 32 dimensions");
      return NULL;
    }
    sig_skip(s);
    if (*s->p == ',') {
      s->p++;
      continue;
    }
    if (*s->p == ']') {
      s->p++;
      break;
    }
    char found[64];
    sig_error(s, "expected ',' or ']' but found %s", sig_found(s, found, sizeof found));
    return NULL;
  }
  char layout = 'A';
  if (unit_at == ndim - 1)
    layout = 'C';
  else if (unit_at == 0)
    layout = 'F';
  else if (unit_at > 0) {
    s->p = unit_pos;
    sig_error(s, "%s", "'::1' must be the first or the last dimension");
    return NULL;
  }
  const nbc__type *t = nbc__type_array(s->ctx, dtype, ndim, layout);
  if (!t) nbc__diag_oom(s->ctx);
  return t;
}

static const nbc__type *sig_tuple_items(sigp *s, bool uni);

/* A tuple type, nested at most 32 deep (the parser recurses once per level). */
static const nbc__type *sig_tuple(sigp *s, bool uni) {
  if (s->depth == 32) return sig_error(s, "%s", "tuples nested more than 32 deep"), NULL;
  s->depth++;
  const nbc__type *t = sig_tuple_items(s, uni);
  s->depth--;
  return t;
}

/* Whether a signature's tuple may hold these items (scalars, arrays, tuples); reported. */
static bool sig_tuple_items_ok(sigp *s, const nbc__type *const *items, int count) {
  for (int i = 0; i < count; i++)
    if (!is_scalar_kind(items[i]->kind) && !nbc__type_is_datetime(items[i]) &&
        items[i]->kind != NBC__T_TUPLE && items[i]->kind != NBC__T_ARRAY)
      return sig_error(s, "%s", "tuples may only hold scalars, arrays and tuples of them");
  return true;
}

static const nbc__type *sig_tuple_items(sigp *s, bool uni) {
  const nbc__type *items[64];
  int count = 0;
  if (!sig_expect(s, '(')) return NULL;
  if (uni) {
    const nbc__type *item = sig_type(s);
    if (!item) return NULL;
    sig_skip(s);
    if (*s->p == 'x') /* numba's printed form, UniTuple(float64 x 2) */
      s->p++;
    else if (!sig_expect(s, ','))
      return NULL;
    sig_skip(s);
    char *end;
    long n = strtol(s->p, &end, 10);
    if (end == s->p || n < 0 || n > 64) {
      sig_error(s, "%s", "expected a tuple length from 0 to 64");
      return NULL;
    }
    s->p = end;
    for (long i = 0; i < n; i++)
      items[count++] = item;
  } else {
    sig_skip(s);
    /* numba's own spelling, Tuple((int32, float64)): the items in a second pair of
     * parentheses */
    bool inner = *s->p == '(';
    if (inner) {
      s->p++;
      sig_skip(s);
    }
    while (*s->p != ')') {
      if (count == 64) {
        sig_error(s, "%s", "too many tuple items");
        return NULL;
      }
      if (!(items[count++] = sig_type(s))) return NULL;
      sig_skip(s);
      if (*s->p == ',') {
        s->p++;
        sig_skip(s);
      } else
        break;
    }
    if (inner && !sig_expect(s, ')')) return NULL;
  }
  if (!sig_expect(s, ')') || !sig_tuple_items_ok(s, items, count)) return NULL;
  const nbc__type *t = nbc__type_tuple(s->ctx, items, count);
  if (!t) nbc__diag_oom(s->ctx);
  return t;
}

/* Expects the literal text word (after optional blanks). */
static bool sig_word(sigp *s, const char *word) {
  sig_skip(s);
  size_t n = strlen(word);
  if (strncmp(s->p, word, n) == 0) {
    s->p += n;
    return true;
  }
  char want[96], found[64];
  snprintf(want, sizeof want, "expected '%s' but found %%s", word);
  return sig_error(s, want, sig_found(s, found, sizeof found));
}

static bool sig_int(sigp *s, int64_t *pv, const char *what) {
  sig_skip(s);
  char *end;
  long long v = strtoll(s->p, &end, 10);
  if (end == s->p || v < 0 || v > ((int64_t)1 << 40)) return sig_error(s, "expected %s", what);
  s->p = end;
  *pv = v;
  return true;
}

/* '(' and the element type of an array spelled by name (a scalar or a record), or NULL
 * reported (what: the message for another type, at its start). */
static const nbc__type *sig_element(sigp *s, const char *what) {
  if (!sig_expect(s, '(')) return NULL;
  const char *at = (sig_skip(s), s->p);
  const nbc__type *e = sig_type(s);
  if (e && !is_scalar_kind(e->kind) && e->kind != NBC__T_RECORD && !nbc__type_is_datetime(e) &&
      !nbc__type_is_charseq(e)) {
    s->p = at;
    return sig_error(s, "%s", what), NULL;
  }
  return e;
}

/* numba's nestedarray(scalar, (d0, d1, ...)) after its name: a C array type, its extents in
 * *pshape (arena memory). */
static const nbc__type *sig_nested_array(sigp *s, const int64_t **pshape) {
  int64_t dims[32];
  int ndim = 0;
  const nbc__type *e = sig_element(s, "a nested array holds scalars or records");
  if (!e || !sig_expect(s, ',') || !sig_expect(s, '(')) return NULL;
  for (;;) {
    sig_skip(s);
    if (*s->p == ')' && ndim > 0) break;
    if (ndim == 32) return sig_error(s, "%s", "a nested array has at most 32 dimensions"), NULL;
    if (!sig_int(s, &dims[ndim], "an extent")) return NULL;
    if (dims[ndim++] == 0) return sig_error(s, "%s", "a nested array extent of 0"), NULL;
    sig_skip(s);
    if (*s->p == ',') s->p++;
    else if (*s->p != ')') return sig_error(s, "%s", "expected ',' or ')' in the extents"), NULL;
  }
  s->p++; /* ')' */
  if (!sig_expect(s, ')')) return NULL;
  int64_t *shape = nbc__arena_alloc(s->ctx->arena, sizeof *shape * (size_t)ndim);
  const nbc__type *t = shape ? nbc__type_array(s->ctx, e, ndim, 'C') : NULL;
  if (!t) return nbc__diag_oom(s->ctx), NULL;
  memcpy(shape, dims, sizeof *shape * (size_t)ndim);
  *pshape = shape;
  return t;
}

/* numba's printed Record (a numpy structured dtype), after the word Record:
 *   '(' name '[type=' field ';offset=' INT ']' {',' ...} ';' size ';' ('True'|'False') ')'
 *   field := scalar | 'nestedarray(' scalar ', (' INT {',' INT} [','] '))'
 * Fields must lie inside the record, array fields aligned for their elements. */
static const nbc__type *sig_record(sigp *s) {
  enum { MAX_FIELDS = 256 };
  const char *names[MAX_FIELDS];
  const nbc__type *types[MAX_FIELDS];
  const int64_t *shapes[MAX_FIELDS];
  int64_t offsets[MAX_FIELDS], size = 0;
  int count = 0;
  if (!sig_expect(s, '(')) return NULL;
  sig_skip(s);
  while (*s->p != ';') {
    if (count == MAX_FIELDS) return sig_error(s, "%s", "too many record fields"), NULL;
    const char *name;
    size_t len;
    if (!sig_name(s, &name, &len)) return NULL;
    names[count] = nbc__arena_printf(s->ctx->arena, "%.*s", (int)len, name);
    if (!sig_word(s, "[type=")) return NULL;
    const char *at = (sig_skip(s), s->p);
    shapes[count] = NULL;
    if (strncmp(s->p, "nestedarray", 11) == 0) {
      s->p += 11;
      if (!(types[count] = sig_nested_array(s, &shapes[count]))) return NULL;
    } else if (!(types[count] = sig_type(s))) {
      return NULL;
    }
    if (!is_scalar_kind(types[count]->kind) && types[count]->kind != NBC__T_RECORD &&
        !nbc__type_is_datetime(types[count]) && !nbc__type_is_charseq(types[count]) &&
        !shapes[count]) {
      s->p = at;
      return sig_error(s, "%s", "record fields must be scalars, records or "
                                "nestedarray(scalar, (extents))"), NULL;
    }
    if (!sig_word(s, ";offset=") || !sig_int(s, &offsets[count], "a field offset") ||
        !sig_expect(s, ']'))
      return NULL;
    count++;
    sig_skip(s);
    if (*s->p == ',') s->p++;
    else if (*s->p != ';') {
      char found[64];
      return sig_error(s, "expected ',' or ';' but found %s",
                       sig_found(s, found, sizeof found)), NULL;
    }
    sig_skip(s);
  }
  s->p++; /* ';' */
  if (!sig_int(s, &size, "the record size") || !sig_expect(s, ';')) return NULL;
  sig_skip(s);
  bool aligned = strncmp(s->p, "True", 4) == 0;
  if (!aligned && strncmp(s->p, "False", 5) != 0)
    return sig_error(s, "%s", "expected True or False (aligned)"), NULL;
  s->p += aligned ? 4 : 5;
  if (!sig_expect(s, ')')) return NULL;
  const nbc__type *t =
      nbc__type_record(s->ctx, names, types, offsets, shapes, count, size, aligned);
  if (!t) return nbc__diag_oom(s->ctx), NULL;
  for (int i = 0; i < count; i++) {
    if (offsets[i] + nbc__type_record_field_size(t, i) > size)
      return sig_error(s, "field '%s' lies outside the record", names[i]), NULL;
    for (int j = 0; j < i; j++)
      if (strcmp(names[i], names[j]) == 0)
        return sig_error(s, "field '%s' appears twice", names[i]), NULL;
    /* a record or an array field must start where its (elements') fields are aligned; a
     * scalar field may not be (it is read with the alignment its offset allows) */
    bool array = types[i]->kind == NBC__T_ARRAY;
    if (!array && types[i]->kind != NBC__T_RECORD) continue;
    int need = natural_align(array ? types[i]->dtype : types[i]);
    if (nbc__type_record_field_align(t, i) >= need) continue;
    if (array)
      return sig_error(s, "the array field '%s' is not aligned for its elements (a packed "
                       "record's arrays must start at a multiple of their alignment)",
                       names[i]), NULL;
    const char *why = nbc__arena_printf(
        s->ctx->arena, "'%s' (its fields need %d-byte alignment; offset %lld in a record "
        "of %lld bytes)", names[i], need, (long long)offsets[i], (long long)size);
    return sig_error(s, "the record field %s is not aligned for its own fields",
                     why ? why : names[i]), NULL;
  }
  return t;
}

static const nbc__type *sig_type(sigp *s);

/* A number type (of a CPointer, an Enum), or NULL reported as `what` at its start. */
static const nbc__type *sig_number(sigp *s, const char *what) {
  const char *at = (sig_skip(s), s->p);
  const nbc__type *t = sig_type(s);
  if (t && !nbc__type_is_number(t)) {
    s->p = at;
    return sig_error(s, "%s", what), NULL;
  }
  return t;
}

/* CPointer(number), after its name. */
static const nbc__type *sig_pointer(sigp *s) {
  sig_skip(s);
  if (*s->p != '(') return sig_error(s, "%s", "expected '(' after CPointer"), NULL;
  s->p++;
  const nbc__type *t = sig_number(s, "CPointer of other than a number");
  if (!t) return NULL;
  sig_skip(s);
  if (*s->p != ')') return sig_error(s, "%s", "expected ')' after CPointer's type"), NULL;
  s->p++;
  return nbc__type_pointer(s->ctx, t);
}

/* Enum<dtype>(class), IntEnum<dtype>(class) (int_enum): after the name; the class's qualified
 * name runs to the ')' (it may hold dots and "<locals>"). */
static const nbc__type *sig_enum(sigp *s, bool int_enum) {
  s->p++; /* '<' */
  const char *at = (sig_skip(s), s->p);
  const nbc__type *t = sig_type(s);
  if (t && !nbc__type_is_number(t) && !nbc__type_is_numbers_tuple(t)) {
    s->p = at;
    return sig_error(s, "%s", "an Enum of other than numbers or tuples of them"), NULL;
  }
  if (t && int_enum && !nbc__type_is_int(t)) {
    s->p = at;
    return sig_error(s, "%s", "an IntEnum of other than integers"), NULL;
  }
  if (!t) return NULL;
  sig_skip(s);
  if (s->p[0] != '>' || s->p[1] != '(')
    return sig_error(s, "%s", "expected '>(' after Enum's value type"), NULL;
  s->p += 2;
  const char *start = s->p;
  while (*s->p && *s->p != ')' && *s->p != ',' && *s->p != ' ')
    s->p++;
  if (*s->p != ')' || s->p == start)
    return sig_error(s, "%s", "expected the enum class's name and ')'"), NULL;
  const char *name = nbc__arena_printf(s->ctx->arena, "%.*s", (int)(s->p - start), start);
  s->p++;
  return name ? nbc__type_enum(s->ctx, NBC__T_ENUM, name, t, int_enum) : NULL;
}

/* NamedTuple(Point, x: int64, y: float64): numba's NamedTuple/NamedUniTuple of the class
 * Point, its fields' names and types (numba prints it "Point(int64, float64)", without the
 * names a kernel reads the fields by). */
static const nbc__type *sig_named_tuple(sigp *s) {
  const nbc__type *items[64];
  const char *names[64];
  int count = 0;
  const char *cls;
  size_t cls_len;
  if (!sig_expect(s, '(') || (sig_skip(s), !sig_name(s, &cls, &cls_len))) return NULL;
  sig_skip(s);
  while (*s->p == ',') {
    s->p++;
    sig_skip(s);
    const char *f;
    size_t flen;
    if (count == 64) return sig_error(s, "%s", "too many tuple items"), NULL;
    if (!sig_name(s, &f, &flen) || !sig_expect(s, ':')) return NULL;
    names[count] = nbc__arena_printf(s->ctx->arena, "%.*s", (int)flen, f);
    if (!names[count] || !(items[count] = sig_type(s))) return NULL;
    count++;
    sig_skip(s);
  }
  if (!sig_expect(s, ')') || !sig_tuple_items_ok(s, items, count)) return NULL;
  nbc__type *t = (nbc__type *)nbc__type_tuple(s->ctx, items, count);
  const char **copy = nbc__arena_alloc(s->ctx->arena, sizeof *copy * (size_t)(count + 1));
  if (!t || !copy) return nbc__diag_oom(s->ctx), NULL;
  memcpy(copy, names, sizeof *copy * (size_t)count);
  t->field_names = copy;
  t->name = nbc__arena_printf(s->ctx->arena, "%.*s", (int)cls_len, cls);
  return t->name ? t : NULL;
}

/* A datetime64 or timedelta64 after its name: numba's NPDatetime('D') / NPTimedelta('D')
 * (quote either way; '' the generic unit) when quoted, else its printed datetime64[D]. */
static const nbc__type *sig_datetime(sigp *s, nbc__type_kind kind, bool quoted) {
  char open = quoted ? '(' : '[', close = quoted ? ')' : ']';
  if (!sig_expect(s, open)) return NULL;
  sig_skip(s);
  char quote = quoted ? *s->p : 0;
  if (quoted && quote != '\'' && quote != '"')
    return sig_error(s, "%s", "expected a quoted unit, as NPDatetime('D')"), NULL;
  if (quoted) s->p++;
  const char *start = s->p;
  while ((*s->p >= 'a' && *s->p <= 'z') || (*s->p >= 'A' && *s->p <= 'Z')) s->p++;
  int unit = nbc__datetime_unit(start, (size_t)(s->p - start));
  if (unit < 0) {
    s->p = start;
    return sig_error(s, "%s", "unknown datetime unit (Y M W D h m s ms us ns ps fs as, or "
                              "none)"), NULL;
  }
  if (quoted && *s->p++ != quote) return sig_error(s, "%s", "expected the unit's closing quote"),
                                         NULL;
  if (!sig_expect(s, close)) return NULL;
  const nbc__type *t = nbc__type_datetime(kind, unit);
  sig_skip(s);
  return *s->p == '[' ? sig_array(s, t) : t;
}

/* numba's printed array type after its name: array(dtype, <ndim>d, <layout>), the spelling
 * of every rank, 0-d arrays included (which the slice spelling cannot write). */
static const nbc__type *sig_printed_array(sigp *s) {
  const nbc__type *e = sig_element(s, "an array holds scalars or records");
  if (!e) return NULL;
  int64_t ndim = 0;
  if (!sig_expect(s, ',') || !sig_int(s, &ndim, "the number of dimensions")) return NULL;
  if (ndim > 32) return sig_error(s, "%s", "an array has at most 32 dimensions"), NULL;
  if (*s->p != 'd') return sig_error(s, "%s", "expected 'd' after the number of dimensions"),
                    NULL;
  s->p++;
  if (!sig_expect(s, ',')) return NULL;
  sig_skip(s);
  char layout = *s->p;
  if (layout != 'C' && layout != 'F' && layout != 'A')
    return sig_error(s, "%s", "expected the layout C, F or A"), NULL;
  s->p++;
  if (!sig_expect(s, ')')) return NULL;
  /* numba: the layout of an array of at most one dimension prints as it was made */
  return nbc__type_array(s->ctx, e, (int)ndim, layout);
}

/* numba's printed CharSeq / UnicodeCharSeq, [char x 12] / [unichr x 12], at its '['; then an
 * array of them when '[' follows. */
static const nbc__type *sig_charseq(sigp *s) {
  s->p++; /* '[' */
  sig_skip(s);
  nbc__type_kind kind = strncmp(s->p, "char", 4) == 0     ? NBC__T_CHARSEQ
                        : strncmp(s->p, "unichr", 6) == 0 ? NBC__T_UNICHARSEQ
                                                          : NBC__T_VOID;
  if (kind == NBC__T_VOID)
    return sig_error(s, "%s", "expected [char x N] or [unichr x N]"), NULL;
  s->p += kind == NBC__T_CHARSEQ ? 4 : 6;
  sig_skip(s);
  int64_t n = 0;
  if (*s->p != 'x') return sig_error(s, "%s", "expected 'x' and a length"), NULL;
  s->p++;
  if (!sig_int(s, &n, "a length")) return NULL;
  if (n < 1 || n > (1 << 24)) return sig_error(s, "%s", "a string length from 1 to 2**24"), NULL;
  if (!sig_expect(s, ']')) return NULL;
  const nbc__type *t = nbc__type_charseq(s->ctx, kind, n);
  if (!t) return nbc__diag_oom(s->ctx), NULL;
  sig_skip(s);
  return *s->p == '[' ? sig_array(s, t) : t;
}

static const nbc__type *sig_type(sigp *s) {
  const char *name;
  size_t len;
  const char *at = (sig_skip(s), s->p);
  if (*s->p == '[') return sig_charseq(s);
  if (!sig_name(s, &name, &len)) return NULL;
  if (len == 5 && memcmp(name, "array", 5) == 0 && (sig_skip(s), *s->p == '('))
    return sig_printed_array(s);
  if (len == 8 && memcmp(name, "UniTuple", 8) == 0) return sig_tuple(s, true);
  if (len == 5 && memcmp(name, "Tuple", 5) == 0) return sig_tuple(s, false);
  if (len == 10 && memcmp(name, "NamedTuple", 10) == 0) return sig_named_tuple(s);
  if (len == 8 && memcmp(name, "CPointer", 8) == 0) return sig_pointer(s);
  if ((len == 10 && memcmp(name, "NPDatetime", 10) == 0) ||
      (len == 10 && memcmp(name, "datetime64", 10) == 0))
    return sig_datetime(s, NBC__T_DATETIME, name[0] == 'N');
  if ((len == 11 && memcmp(name, "NPTimedelta", 11) == 0) ||
      (len == 11 && memcmp(name, "timedelta64", 11) == 0))
    return sig_datetime(s, NBC__T_TIMEDELTA, name[0] == 'N');
  if (len == 4 && memcmp(name, "Enum", 4) == 0 && *s->p == '<') return sig_enum(s, false);
  if (len == 7 && memcmp(name, "IntEnum", 7) == 0 && *s->p == '<') return sig_enum(s, true);
  if (len == 6 && memcmp(name, "Record", 6) == 0) {
    const nbc__type *r = sig_record(s);
    sig_skip(s);
    return r && *s->p == '[' ? sig_array(s, r) : r;
  }
  const nbc__type *t = nbc__type_by_name(name, len);
  if (!t && len == 4 && memcmp(name, "void", 4) == 0) t = S_(VOID);
  if (!t && len == 4 && memcmp(name, "none", 4) == 0) t = S_(VOID);
  if (!t) {
    s->p = at;
    char buf[96];
    snprintf(buf, sizeof buf, "%.*s", (int)(len > 80 ? 80 : len), name);
    sig_error(s, "unknown type '%s'", buf);
    return NULL;
  }
  sig_skip(s);
  if (*s->p == '*') { /* numba's printed CPointer: float32* */
    if (!nbc__type_is_number(t))
      return sig_error(s, "%s", "a pointer to other than a number"), NULL;
    s->p++;
    return nbc__type_pointer(s->ctx, t);
  }
  if (*s->p == '[') {
    if (t->kind == NBC__T_VOID) {
      sig_error(s, "%s", "an array of void");
      return NULL;
    }
    return sig_array(s, t);
  }
  return t;
}

bool nbc__signature_parse(nbc__ctx *ctx, const char *text, nbc__signature *psig) {
  sigp s = {.ctx = ctx, .text = text ? text : "", .p = text ? text : ""};
  s.file.name = "<signature>";
  s.file.text = s.text;
  s.file.size = strlen(s.text);
  s.file.first_line = 1;
  memset(psig, 0, sizeof *psig);
  sig_skip(&s);
  const nbc__type *ret = NULL;
  if (*s.p != '(') {
    if (!*s.p) return sig_error(&s, "%s", "empty signature");
    if (!(ret = sig_type(&s))) return false;
    sig_skip(&s);
    if (!*s.p) {
      /* A lone type names one argument with no declared return type? numba refuses
       * that ("evaluates to ... instead of tuple or Signature"); so do we. */
      s.p = s.text;
      return sig_error(&s, "%s", "expected 'ret(args...)' or '(args...)', found a single type");
    }
    if (*s.p != '(') {
      char found[64];
      return sig_error(&s, "expected '(' but found %s", sig_found(&s, found, sizeof found));
    }
  }
  s.p++; /* '(' */
  const nbc__type *args[256];
  int nargs = 0;
  sig_skip(&s);
  while (*s.p != ')') {
    if (nargs == 256) return sig_error(&s, "%s", "too many arguments");
    const nbc__type *t = sig_type(&s);
    if (!t) return false;
    if (t->kind == NBC__T_VOID) /* numba's void is its none: a None argument */
      t = nbc__type_scalar(NBC__T_NONE);
    args[nargs++] = t;
    sig_skip(&s);
    if (*s.p == ',') {
      s.p++;
      sig_skip(&s);
    } else if (*s.p != ')') {
      char found[64];
      return sig_error(&s, "expected ',' or ')' but found %s",
                       sig_found(&s, found, sizeof found));
    }
  }
  s.p++;
  sig_skip(&s);
  if (*s.p) {
    char found[64];
    return sig_error(&s, "unexpected %s after the signature",
                     sig_found(&s, found, sizeof found));
  }
  psig->ret = ret;
  psig->nargs = nargs;
  psig->args = nbc__arena_alloc(ctx->arena, sizeof *psig->args * (size_t)(nargs ? nargs : 1));
  if (!psig->args) {
    nbc__diag_oom(ctx);
    return false;
  }
  memcpy(psig->args, args, sizeof *args * (size_t)nargs);
  return true;
}

/* range(): numba's Range template; the counter type is the chosen case's argument type
 * (range(int32) counts in int32, range(uint64) in uint64, literals in int64). */
static const tcase range_cases[] = {C1(RANGE, INT32),  C2(RANGE, INT32, INT32),
                                    C1(RANGE, INT64),  C2(RANGE, INT64, INT64),
                                    C1(RANGE, UINT64), C2(RANGE, UINT64, UINT64)};

const nbc__type *nbc__type_range(const nbc__type *const *args, int nargs, const char **pwhy) {
  if (pwhy) *pwhy = NULL;
  for (int i = 0; i < nargs; i++)
    if (!nbc__type_is_int(args[i]) && !(args[i] && args[i]->kind == NBC__T_BOOL)) {
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
