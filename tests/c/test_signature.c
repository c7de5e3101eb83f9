/* test_signature.c — nbc__signature_parse: numba's signature syntax, aliases, array
 * layouts, and the exact text of its errors (with the column in the signature). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "test.h"

typedef struct sig_env {
  nbc__ctx ctx;
  nbc__signature sig;
} sig_env;

static bool parse(sig_env *e, const char *text) {
  memset(e, 0, sizeof *e);
  e->ctx.arena = nbc__arena_create();
  nbc__buf_init(&e->ctx.diag, e->ctx.arena);
  return nbc__signature_parse(&e->ctx, text, &e->sig);
}

/* A kernel's signature for compute capability cc_major.cc_minor. */
static bool parse_kernel(sig_env *e, const char *text, nbc_compile_options_t *o, int cc_major,
                         int cc_minor) {
  memset(e, 0, sizeof *e);
  e->ctx.arena = nbc__arena_create();
  nbc__buf_init(&e->ctx.diag, e->ctx.arena);
  nbc_compile_options_init(o);
  o->device = 0;
  o->cc_major = cc_major;
  o->cc_minor = cc_minor;
  e->ctx.options = o;
  nbc__sig_mode mode = {.kernel = true};
  return nbc__signature_parse_mode(&e->ctx, text, &mode, &e->sig);
}

/* "ret(arg, arg)" as numba prints the types, for compact assertions. */
static const char *show(sig_env *e) {
  nbc__buf b;
  nbc__buf_init(&b, e->ctx.arena);
  nbc__buf_puts(&b, e->sig.ret ? nbc__type_name(&e->ctx, e->sig.ret) : "?");
  nbc__buf_puts(&b, "(");
  for (int i = 0; i < e->sig.nargs; i++) {
    if (i) nbc__buf_puts(&b, ", ");
    nbc__type_print(&b, e->sig.args[i]);
  }
  nbc__buf_puts(&b, ")");
  return b.data;
}

#define ASSERT_SIG(text, expected)                                                             \
  do {                                                                                         \
    sig_env e_;                                                                                \
    if (!parse(&e_, text)) TEST_FAIL_("%s: %s", text, e_.ctx.diag.data);                       \
    ASSERT_STREQ(show(&e_), expected);                                                         \
    nbc__arena_destroy(e_.ctx.arena);                                                          \
  } while (0)

/* The first line of the diagnostic must be exactly `expected`. */
#define ASSERT_SIG_ERROR(text, expected)                                                       \
  do {                                                                                         \
    sig_env e_;                                                                                \
    if (parse(&e_, text)) TEST_FAIL_("%s parsed", text);                                       \
    ASSERT_EQ(e_.ctx.status, NBC_SIGNATURE_ERROR);                                             \
    char *nl_ = strchr(e_.ctx.diag.data, '\n');                                                \
    if (nl_) *nl_ = 0;                                                                         \
    ASSERT_STREQ(e_.ctx.diag.data, expected);                                                  \
    nbc__arena_destroy(e_.ctx.arena);                                                          \
  } while (0)

TEST(scalars) {
  ASSERT_SIG("float32(float32, int64)", "float32(float32, int64)");
  ASSERT_SIG("  int32 ( int32,int32 ) ", "int32(int32, int32)");
  ASSERT_SIG("(float64, int32)", "?(float64, int32)");
  ASSERT_SIG("(float32,)", "?(float32)");
  ASSERT_SIG("void()", "void()");
  /* numba's void is its none: as an argument, a None */
  ASSERT_SIG("void(void, none, int32)", "void(none, none, int32)");
  /* numba's printed array types, 0-d ones (which slices cannot spell) included */
  ASSERT_SIG("void(array(float32, 0d, C), array(int64, 2d, F))",
             "void(array(float32, 0d, C), array(int64, 2d, F))");
  ASSERT_SIG_ERROR("void(array(float32, 33d, C))",
                   "<signature>:1:23: error: invalid signature: an array has at most 32 "
                   "dimensions at column 23");
  ASSERT_SIG_ERROR("void(array(float32, 1d, X))",
                   "<signature>:1:25: error: invalid signature: expected the layout C, F or A "
                   "at column 25");
  ASSERT_SIG("()", "?()");
  ASSERT_SIG("uint32(uint32, uint32)", "uint32(uint32, uint32)");
  ASSERT_SIG("boolean(bool_, b1, bool)", "bool(bool, bool, bool)");
  ASSERT_SIG("complex128(complex64, c8, c16)", "complex128(complex64, complex64, complex128)");
  ASSERT_SIG("float16(f2)", "float16(float16)");
}

TEST(aliases) {
  ASSERT_SIG("f4(f8, i1, i2, i4, i8)", "float32(float64, int8, int16, int32, int64)");
  ASSERT_SIG("u1(u2, u4, u8)", "uint8(uint16, uint32, uint64)");
  ASSERT_SIG("intp(uintp, int_, double, float_)", "int64(uint64, int64, float64, float32)");
  ASSERT_SIG("intc(uintc, short, ushort, long_, ulong, longlong, ulonglong, byte, char, uint)",
             "int32(uint32, int16, uint16, int64, uint64, int64, uint64, uint8, int8, uint64)");
}

TEST(arrays) {
  ASSERT_SIG("void(float32[:], float32[:, ::1])",
             "void(array(float32, 1d, A), array(float32, 2d, C))");
  ASSERT_SIG("void(float32[::1])", "void(array(float32, 1d, C))");
  ASSERT_SIG("void(float64[::1, :])", "void(array(float64, 2d, F))");
  ASSERT_SIG("void(float32[:, :])", "void(array(float32, 2d, A))");
  ASSERT_SIG("void(int8[:,:,:,::1])", "void(array(int8, 4d, C))");
  ASSERT_SIG("void(f8[::1,:,:])", "void(array(float64, 3d, F))");
  ASSERT_SIG("int32[:](int32[: , : : 1])", "array(int32, 1d, A)(array(int32, 2d, C))");
}

/* Every spelling numba's repr() and str() give an array or a record (numba 0.68's output). */
TEST(numba_spellings) {
  ASSERT_SIG("void(Array(float32, 0, 'C', False, aligned=True))", "void(array(float32, 0d, C))");
  ASSERT_SIG("void(Array(int8, 3, \"F\"))", "void(array(int8, 3d, F))");
  ASSERT_SIG("void(Array(float64, 2, 'A', True, aligned=True))",
             "void(readonly array(float64, 2d, A))");
  ASSERT_SIG("void(readonly array(float32, 1d, C))", "void(readonly array(float32, 1d, C))");
  const char *packed = "Record(a[type=int32;offset=0],b[type=float64;offset=4];12;False)";
  char text[512], want[512];
  snprintf(text, sizeof text, "void(unaligned readonly array(%s, 1d, C))", packed);
  snprintf(want, sizeof want, "void(unaligned readonly array(%s, 1d, C))", packed);
  ASSERT_SIG(text, want);
  ASSERT_SIG("void(Array(Record([('a', {'type': int32, 'offset': 0, 'alignment': None, "
             "'title': None, }), ('b', {'type': float64, 'offset': 4, 'alignment': None, "
             "'title': None, })], 12, False), 1, 'C', False, aligned=False))",
             "void(unaligned array(Record(a[type=int32;offset=0],b[type=float64;offset=4];12;"
             "False), 1d, C))");
  ASSERT_SIG("void(Record([('a', {'type': NestedArray(int32, (3,)), 'offset': 0, "
             "'alignment': None, 'title': None, }), ('r', {'type': Record([('x', {'type': "
             "int8, 'offset': 0, 'alignment': None, 'title': None, }), ('y', {'type': float32, "
             "'offset': 4, 'alignment': 4, 'title': None, })], 8, True), 'offset': 12, "
             "'alignment': None, 'title': None, })], 20, True))",
             "void(Record(a[type=nestedarray(int32, (3,));offset=0],r[type=Record(x[type=int8;"
             "offset=0],y[type=float32;offset=4];8;True);offset=12];20;True))");
  ASSERT_SIG("void(Record(a[type=int32;offset=0;alignment=4],b[type=float64;offset=8;"
             "alignment=8];16;True))",
             "void(Record(a[type=int32;offset=0],b[type=float64;offset=8];16;True))");
  ASSERT_SIG("void(Record(T[type=int32;offset=0;title=T],a[type=int32;offset=0;title=T];4;"
             "False))", "void(Record(T[type=int32;offset=0],a[type=int32;offset=0];4;False))");
  ASSERT_SIG_ERROR("void(Array(float32, 1, 'C', False, aligned=False))",
                   "<signature>:1:6: error: invalid signature: an unaligned array of other "
                   "than a packed record (nbcuda reads array elements at their natural "
                   "alignment) at column 6");
  ASSERT_SIG_ERROR("void(unaligned array(float32, 1d, C))",
                   "<signature>:1:6: error: invalid signature: an unaligned array of other "
                   "than a packed record (nbcuda reads array elements at their natural "
                   "alignment) at column 6");
  ASSERT_SIG_ERROR("void(Array(float32, 1, C))", "<signature>:1:24: error: invalid signature: "
                   "expected the layout 'C', 'F' or 'A' at column 24");
  ASSERT_SIG_ERROR("void(Array(float32, 1, 'C', maybe))", "<signature>:1:29: error: invalid "
                   "signature: expected True or False (read-only) at column 29");
  ASSERT_SIG_ERROR("void(Array(float32, 1, 'C', False, True))", "<signature>:1:36: error: "
                   "invalid signature: expected 'aligned=' but found 'True' at column 36");
  ASSERT_SIG_ERROR("void(readonly float32)", "<signature>:1:15: error: invalid signature: "
                   "expected array(...) after readonly / unaligned at column 15");
}

TEST(tuples) {
  ASSERT_SIG("UniTuple(int64, 2)(int64)", "UniTuple(int64 x 2)(int64)");
  ASSERT_SIG("(Tuple(float64, int32),)", "?(Tuple(float64, int32))");
}

/* numba's NPDatetime / NPTimedelta, in its constructor's spelling and as it prints them */
TEST(dates) {
  ASSERT_SIG("void(NPDatetime('D'), NPTimedelta(\"ms\"), NPDatetime(''))",
             "void(datetime64[D], timedelta64[ms], datetime64[])");
  ASSERT_SIG("timedelta64[s](datetime64[Y][:], NPTimedelta('W')[::1])",
             "timedelta64[s](array(datetime64[Y], 1d, A), array(timedelta64[W], 1d, C))");
  ASSERT_SIG("void(array(datetime64[ns], 2d, F), UniTuple(timedelta64[h], 2))",
             "void(array(datetime64[ns], 2d, F), UniTuple(timedelta64[h] x 2))");
  ASSERT_SIG_ERROR("void(NPDatetime('Q'))",
                   "<signature>:1:18: error: invalid signature: unknown datetime unit (Y M W D "
                   "h m s ms us ns ps fs as, or none) at column 18");
  ASSERT_SIG_ERROR("void(NPDatetime(D))",
                   "<signature>:1:17: error: invalid signature: expected a quoted unit, as "
                   "NPDatetime('D') at column 17");
  ASSERT_SIG_ERROR("void(datetime64[:])", /* the unit first: datetime64[D][:] */
                   "<signature>:1:17: error: invalid signature: expected ']' but found ':' at "
                   "column 17");
}

/* numba's CharSeq / UnicodeCharSeq, as it prints them */
TEST(strings) {
  ASSERT_SIG("void([char x 5][::1], array([unichr x 12], 2d, C))",
             "void(array([char x 5], 1d, C), array([unichr x 12], 2d, C))");
  ASSERT_SIG("void(Record(x[type=int32;offset=0],y[type=[unichr x 3];offset=4];16;False)[:])",
             "void(unaligned array(Record(x[type=int32;offset=0],y[type=[unichr x 3];offset=4];16;"
             "False), 1d, A))");
  ASSERT_SIG_ERROR("void([str x 5])",
                   "<signature>:1:7: error: invalid signature: expected [char x N] or [unichr "
                   "x N] at column 7");
  ASSERT_SIG_ERROR("void([char x 0])",
                   "<signature>:1:15: error: invalid signature: a string length from 1 to "
                   "2**24 at column 15");
}

TEST(errors) {
  ASSERT_SIG_ERROR(
      "float32(floot32)",
      "<signature>:1:9: error: invalid signature: unknown type 'floot32' at column 9");
  ASSERT_SIG_ERROR(
      "float32(float32",
      "<signature>:1:16: error: invalid signature: expected ',' or ')' but found end "
      "of signature at column 16");
  ASSERT_SIG_ERROR("float32(float32[:, ::2])",
                   "<signature>:1:22: error: invalid signature: expected '1' after '::' but "
                   "found '2' at column 22");
  ASSERT_SIG_ERROR("void(float32[:, ::1, :])",
                   "<signature>:1:17: error: invalid signature: '::1' must be the first or the "
                   "last dimension at column 17");
  ASSERT_SIG_ERROR("",
                   "<signature>:1:1: error: invalid signature: empty signature at column 1");
  ASSERT_SIG_ERROR("float64[::1, :]",
                   "<signature>:1:1: error: invalid signature: expected 'ret(args...)' or "
                   "'(args...)', found a single type at column 1");
  ASSERT_SIG_ERROR("void(int32) x",
                   "<signature>:1:13: error: invalid signature: unexpected 'x' after the "
                   "signature at column 13");
  ASSERT_SIG_ERROR("void(3)",
                   "<signature>:1:6: error: invalid signature: expected a type name but found "
                   "'3' at column 6");
  ASSERT_SIG_ERROR("void(int32 int32)",
                   "<signature>:1:12: error: invalid signature: expected ',' or ')' but found "
                   "'int32' at column 12");
  ASSERT_SIG_ERROR("void(float32[])",
                   "<signature>:1:14: error: invalid signature: expected ':' or '::1' in array "
                   "dimensions but found ']' at column 14");
}

/* "void(" + open * depth + inner + close * depth + ")", built at run time (malloc'd). */
static char *nested(const char *open, const char *inner, const char *close, int depth) {
  size_t no = strlen(open), nc = strlen(close), ni = strlen(inner);
  char *text = malloc(8 + (no + nc) * (size_t)depth + ni);
  if (!text) return NULL;
  char *p = text;
  p += sprintf(p, "void(");
  for (int i = 0; i < depth; i++, p += no) memcpy(p, open, no);
  p += sprintf(p, "%s", inner);
  for (int i = 0; i < depth; i++, p += nc) memcpy(p, close, nc);
  sprintf(p, ")");
  return text;
}

/* Every construct that holds a type counts towards one nesting bound (a type inside at most
 * 32 others), 100,000 levels deep refused at the 33rd without exhausting the stack. */
TEST(nesting_is_bounded) {
  static const char *const forms[][3] = {
      {"CPointer(", "int32", ")"},
      {"NamedTuple(P, x: ", "int32", ")"},
      {"Record(a[type=", "int32", ";offset=0];8;False)"},
      {"array(", "int32", ", 1d, C)"},
      {"UniTuple(", "int32", ", 2)"},
      {"Tuple(", "int32", ")"},
      {"Tuple((", "int32", "))"},
      {"Enum<", "int64", ">(m.E)"},
  };
  for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
    char *text = nested(forms[f][0], forms[f][1], forms[f][2], 100000);
    ASSERT(text != NULL);
    int col = 5 + 33 * (int)strlen(forms[f][0]) + 1; /* the 33rd nested type */
    char want[160];
    snprintf(want, sizeof want,
             "<signature>:1:%d: error: invalid signature: types nested more than 32 deep at "
             "column %d", col, col);
    ASSERT_SIG_ERROR(text, want);
    free(text);
  }
  /* 32 tuples deep are taken, 33 are not */
  char *ok = nested("Tuple(", "int8", ")", 32), *over = nested("Tuple(", "int8", ")", 33);
  ASSERT(ok && over);
  sig_env e;
  if (!parse(&e, ok)) TEST_FAIL_("32 deep: %s", e.ctx.diag.data);
  nbc__arena_destroy(e.ctx.arena);
  ASSERT(!parse(&e, over));
  ASSERT_CONTAINS(e.ctx.diag.data, "types nested more than 32 deep at column 204");
  nbc__arena_destroy(e.ctx.arena);
  free(ok);
  free(over);
}

/* A UniTuple repeats its item without more text: 81 bytes describe 16 million int32. A
 * signature's types expand to at most 32,768 parts, counted without expanding them. */
TEST(parts_are_bounded) {
  ASSERT_SIG_ERROR("void(UniTuple(UniTuple(UniTuple(UniTuple(int32, 64), 64), 64), 64))",
                   "<signature>:1:6: error: invalid signature: argument 1 expands to "
                   "17043521 parts (scalars, arrays and tuples, each tuple item counted), more "
                   "than the 32768 a signature's types may hold in all at column 6");
  /* empty tuples take no bytes but are parts all the same */
  ASSERT_SIG_ERROR("void(int8, UniTuple(UniTuple(UniTuple(UniTuple(Tuple(), 64), 64), 64), 64))",
                   "<signature>:1:12: error: invalid signature: argument 2 expands to "
                   "17043521 parts (scalars, arrays and tuples, each tuple item counted), more "
                   "than the 32768 a signature's types may hold in all at column 12");
  ASSERT_SIG_ERROR("UniTuple(UniTuple(UniTuple(float64, 64), 64), 64)()",
                   "<signature>:1:1: error: invalid signature: the return type expands to "
                   "266305 parts (scalars, arrays and tuples, each tuple item counted), more "
                   "than the 32768 a signature's types may hold in all at column 1");
  /* 1 + 8 * (1 + 64 * 63) parts fit, 1 + 8 * (1 + 64 * 64) do not */
  ASSERT_SIG("void(UniTuple(UniTuple(UniTuple(int8, 62), 64), 8))",
             "void(UniTuple(UniTuple(UniTuple(int8 x 62) x 64) x 8))");
  ASSERT_SIG_ERROR("void(UniTuple(UniTuple(UniTuple(int8, 63), 64), 8))",
                   "<signature>:1:6: error: invalid signature: argument 1 expands to "
                   "32777 parts (scalars, arrays and tuples, each tuple item counted), more "
                   "than the 32768 a signature's types may hold in all at column 6");
}

#define ASSERT_KERNEL_ERROR(text, major, minor, expected)                                      \
  do {                                                                                         \
    sig_env e_;                                                                                \
    nbc_compile_options_t o_;                                                                  \
    if (parse_kernel(&e_, text, &o_, major, minor)) TEST_FAIL_("%s parsed", text);            \
    char *nl_ = strchr(e_.ctx.diag.data, '\n');                                                \
    if (nl_) *nl_ = 0;                                                                         \
    ASSERT_STREQ(e_.ctx.diag.data, expected);                                                  \
    nbc__arena_destroy(e_.ctx.arena);                                                          \
  } while (0)

/* A kernel's flattened parameters fit the driver's limit: 32,764 bytes from compute
 * capability 7.0 (CUDA 12.1+), 4,096 below; refused while parsing, before any IR. */
TEST(kernel_parameters_are_bounded) {
  ASSERT_KERNEL_ERROR("void(UniTuple(UniTuple(UniTuple(UniTuple(int32, 64), 64), 64), 64))", 7,
                      5,
                      "<signature>:1:6: error: invalid signature: the kernel's parameters take "
                      "at least 67108864 bytes, more than the 32764 bytes a kernel's parameters "
                      "may take on compute capability 7.5 (argument 1 crosses the limit) at "
                      "column 6");
  /* 8 bytes, then an array of 5 + 2 words, then 40000 characters */
  ASSERT_KERNEL_ERROR("void(int64, float32[:, ::1], [char x 40000])", 9, 0,
                      "<signature>:1:30: error: invalid signature: the kernel's parameters take "
                      "40080 bytes, more than the 32764 bytes a kernel's parameters may take on "
                      "compute capability 9.0 (argument 3 crosses the limit) at column 30");
  ASSERT_KERNEL_ERROR("void(UniTuple(UniTuple(int64, 8), 32), UniTuple(UniTuple(int64, 8), 32), float64[:])", 5,
                      2,
                      "<signature>:1:74: error: invalid signature: the kernel's parameters take "
                      "4152 bytes, more than the 4096 bytes a kernel's parameters may take on "
                      "compute capability 5.2 (argument 3 crosses the limit) at column 74");
  /* exactly the limit (padding counted: int8 then int32 take 8 bytes) */
  sig_env e;
  nbc_compile_options_t o;
  if (!parse_kernel(&e, "void(int8, int32, [char x 32756])", &o, 7, 5))
    TEST_FAIL_("%s", e.ctx.diag.data);
  nbc__arena_destroy(e.ctx.arena);
  ASSERT_KERNEL_ERROR("void(int8, int32, [char x 32757])", 7, 5,
                      "<signature>:1:19: error: invalid signature: the kernel's parameters take "
                      "32765 bytes, more than the 32764 bytes a kernel's parameters may take on "
                      "compute capability 7.5 (argument 3 crosses the limit) at column 19");
  /* a device function's signature has no such limit */
  ASSERT_SIG("void([char x 40000])", "void([char x 40000])");
}

TEST(no_crash_on_garbage) {
  static const char *inputs[] = {"(((",
                                 ")",
                                 "[:]",
                                 "int32[",
                                 "int32(int32[:,",
                                 "UniTuple(",
                                 "UniTuple(int32, -1)()",
                                 "Tuple(int32[:]))(",
                                 "\x01\xff",
                                 ",",
                                 "void(,)"};
  for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
    sig_env e;
    ASSERT(!parse(&e, inputs[i]));
    ASSERT_EQ(e.ctx.status, NBC_SIGNATURE_ERROR);
    ASSERT_CONTAINS(e.ctx.diag.data, "invalid signature: ");
    nbc__arena_destroy(e.ctx.arena);
  }
}

TEST_LIST(X(scalars) X(aliases) X(arrays) X(numba_spellings) X(tuples) X(dates) X(strings) X(errors)
              X(nesting_is_bounded) X(parts_are_bounded) X(kernel_parameters_are_bounded)
              X(no_crash_on_garbage))
TEST_MAIN()
