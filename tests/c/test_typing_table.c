/* test_typing_table.c — checks nbcuda's typing against every row of numba-cuda's own
 * answers (tests/data/numba_typing.tsv, copied from shared/reference).
 *
 * Each row is (op, A, B, result): B is "-" for one-operand rows; result is a numba type
 * name or ERROR:<kind> when numba-cuda refuses (TypingError, NotImplementedError) or fails
 * later in libNVVM (nvvmError). Each op maps to the function infer.c uses for the same
 * construct:
 *   binary operators           nbc__type_binop          (a OP b)
 *   neg pos invert not         nbc__type_unop
 *   abs int float bool round   nbc__type_call_builtin   (builtin(a))
 *   min max                    nbc__type_call_builtin   (min(a, b))
 *   sqrt sin ... isnan         nbc__type_math           (math.f(a))
 *   atan2 hypot copysign fmod  nbc__type_math           (math.f(a, a))
 *   ldexp                      nbc__type_math           (math.ldexp(a, 2))
 *   pow2                       nbc__type_math           (math.pow(a, a))
 *   booland boolor             truth(a), unify(a, b)    (a and b, a or b)
 *   ifexp                      truth(a), unify(a, int64) (a if a else 1)
 *   iadd_lit mul_lit div_lit   binop with int64         (a + 1, a * 2, a / 2)
 *   fadd_lit                   binop with float64       (a + 1.0)
 *   pow_lit pow_neg            binop with int64         (a ** 2, a ** -1)
 * Literals are typed int64 / float64, as numba does when it resolves without literals.
 * Every error row must be an error here too (we fail at typing where numba fails later).
 * The test prints how many rows it checked and lists every mismatch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "test.h"

typedef struct row_ctx {
  nbc__ctx ctx;
  int checked, mismatches;
} row_ctx;

static const nbc__type *type_of(const char *name) {
  if (strcmp(name, "-") == 0) return NULL;
  return nbc__type_by_name(name, strlen(name));
}

static bool op_by_name(const char *name, nbc__op *pop) {
  static const struct {
    const char *name;
    nbc__op op;
  } ops[] = {{"add", NBC__OP_ADD},
             {"sub", NBC__OP_SUB},
             {"mul", NBC__OP_MUL},
             {"truediv", NBC__OP_DIV},
             {"floordiv", NBC__OP_FLOORDIV},
             {"mod", NBC__OP_MOD},
             {"pow", NBC__OP_POW},
             {"and", NBC__OP_BITAND},
             {"or", NBC__OP_BITOR},
             {"xor", NBC__OP_BITXOR},
             {"lshift", NBC__OP_LSHIFT},
             {"rshift", NBC__OP_RSHIFT},
             {"lt", NBC__OP_LT},
             {"le", NBC__OP_LE},
             {"gt", NBC__OP_GT},
             {"ge", NBC__OP_GE},
             {"eq", NBC__OP_EQ},
             {"ne", NBC__OP_NE},
             {"neg", NBC__OP_NEG},
             {"pos", NBC__OP_POS},
             {"invert", NBC__OP_INVERT},
             {"not", NBC__OP_NOT}};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp(ops[i].name, name) == 0) {
      *pop = ops[i].op;
      return true;
    }
  return false;
}

/* The type nbcuda gives the row's expression, or NULL for an error. *pknown is false for
 * an op this test does not know (a failure of the test itself). */
static const nbc__type *type_row(nbc__ctx *ctx, const char *op, const nbc__type *a,
                                 const nbc__type *b, bool *pknown) {
  const nbc__type *i64 = nbc__type_scalar(NBC__T_INT64);
  const nbc__type *f64 = nbc__type_scalar(NBC__T_FLOAT64);
  const char *why;
  nbc__type_why bwhy;
  nbc__op bop;
  *pknown = true;
  if (b) {
    const nbc__type *args[2] = {a, b};
    if (strcmp(op, "min") == 0 || strcmp(op, "max") == 0)
      return nbc__type_call_builtin(op, args, 2, NULL, &bwhy);
    if (strcmp(op, "booland") == 0 || strcmp(op, "boolor") == 0)
      return nbc__type_truth(a, &why) ? nbc__type_unify(ctx, a, b) : NULL;
    if (op_by_name(op, &bop)) return nbc__type_binop(bop, a, b, &why);
    *pknown = false;
    return NULL;
  }
  if (strcmp(op, "abs") == 0 || strcmp(op, "int") == 0 || strcmp(op, "float") == 0 ||
      strcmp(op, "bool") == 0 || strcmp(op, "round") == 0)
    return nbc__type_call_builtin(op, &a, 1, NULL, &bwhy);
  if (strcmp(op, "iadd_lit") == 0) return nbc__type_binop(NBC__OP_ADD, a, i64, &why);
  if (strcmp(op, "fadd_lit") == 0) return nbc__type_binop(NBC__OP_ADD, a, f64, &why);
  if (strcmp(op, "mul_lit") == 0) return nbc__type_binop(NBC__OP_MUL, a, i64, &why);
  if (strcmp(op, "div_lit") == 0) return nbc__type_binop(NBC__OP_DIV, a, i64, &why);
  if (strcmp(op, "pow_lit") == 0 || strcmp(op, "pow_neg") == 0)
    return nbc__type_binop(NBC__OP_POW, a, i64, &why);
  if (strcmp(op, "ifexp") == 0)
    return nbc__type_truth(a, &why) ? nbc__type_unify(ctx, a, i64) : NULL;
  if (strcmp(op, "ldexp") == 0) {
    const nbc__type *args[2] = {a, i64};
    return nbc__type_math("ldexp", args, 2, NULL, &why);
  }
  if (strcmp(op, "pow2") == 0) {
    const nbc__type *args[2] = {a, a};
    return nbc__type_math("pow", args, 2, NULL, &why);
  }
  if (strcmp(op, "atan2") == 0 || strcmp(op, "hypot") == 0 || strcmp(op, "copysign") == 0 ||
      strcmp(op, "fmod") == 0) {
    const nbc__type *args[2] = {a, a};
    return nbc__type_math(op, args, 2, NULL, &why);
  }
  if (nbc__math_exists(op)) return nbc__type_math(op, &a, 1, NULL, &why);
  if (op_by_name(op, &bop)) return nbc__type_unop(bop, a, &why);
  *pknown = false;
  return NULL;
}

TEST(every_row) {
  const char *path = NBCUDA_SOURCE_DIR "/tests/data/numba_typing.tsv";
  FILE *f = fopen(path, "r");
  if (!f) TEST_FAIL_("cannot open %s", path);
  row_ctx rc = {0};
  rc.ctx.arena = nbc__arena_create();
  ASSERT(rc.ctx.arena);
  nbc__buf_init(&rc.ctx.diag, rc.ctx.arena);
  char line[256];
  int lineno = 0;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    line[strcspn(line, "\r\n")] = 0;
    if (lineno == 1 || !*line) continue; /* header */
    char *op = strtok(line, "\t"), *an = strtok(NULL, "\t"), *bn = strtok(NULL, "\t"),
         *want = strtok(NULL, "\t");
    if (!op || !an || !bn || !want) TEST_FAIL_("%s:%d: malformed row", path, lineno);
    const nbc__type *a = type_of(an), *b = type_of(bn);
    if (!a || (strcmp(bn, "-") != 0 && !b)) TEST_FAIL_("%s:%d: unknown type", path, lineno);
    bool known;
    const nbc__type *got = type_row(&rc.ctx, op, a, b, &known);
    if (!known) TEST_FAIL_("%s:%d: unknown op %s", path, lineno, op);
    const char *gotname = got ? nbc__type_name(&rc.ctx, got) : "ERROR";
    bool want_error = strncmp(want, "ERROR:", 6) == 0;
    bool ok = want_error ? got == NULL : (got && strcmp(gotname, want) == 0);
    rc.checked++;
    if (!ok) {
      rc.mismatches++;
      printf("MISMATCH %s:%d: %s(%s%s%s) = %s, numba-cuda: %s\n", path, lineno, op, an,
             b ? ", " : "", b ? bn : "", gotname, want);
    }
  }
  fclose(f);
  printf("typing table: %d rows checked, %d mismatches\n", rc.checked, rc.mismatches);
  fflush(stdout);
  nbc__arena_destroy(rc.ctx.arena);
  ASSERT(rc.checked >= 4700);
  ASSERT_EQ(rc.mismatches, 0);
}

/* Spot checks that pin the surprising rows, independent of the file. */
TEST(surprises) {
  const nbc__type *b = nbc__type_scalar(NBC__T_BOOL), *i32 = nbc__type_scalar(NBC__T_INT32),
                  *f32 = nbc__type_scalar(NBC__T_FLOAT32),
                  *u64 = nbc__type_scalar(NBC__T_UINT64), *i64 = nbc__type_scalar(NBC__T_INT64),
                  *i8 = nbc__type_scalar(NBC__T_INT8);
  const char *why;
  const nbc__type *args[2];
  /* bool ** int32: the case (float32, int32) needs only one safe conversion. */
  ASSERT_EQ(nbc__type_binop(NBC__OP_POW, b, i32, &why)->kind, NBC__T_FLOAT32);
  ASSERT_EQ(nbc__type_binop(NBC__OP_ADD, i32, f32, &why)->kind, NBC__T_FLOAT64);
  ASSERT_EQ(nbc__type_binop(NBC__OP_ADD, i8, f32, &why)->kind, NBC__T_FLOAT32);
  ASSERT_EQ(nbc__type_binop(NBC__OP_ADD, u64, i64, &why)->kind, NBC__T_INT64);
  ASSERT(nbc__type_binop(NBC__OP_LSHIFT, f32, i64, &why) == NULL);
  ASSERT_STREQ(why, "unsupported operand types");
  /* The chosen signature converts int32 operands of + to int64. */
  ASSERT_EQ(nbc__type_binop_sig(NBC__OP_ADD, i32, i32, args, &why)->kind, NBC__T_INT64);
  ASSERT_EQ(args[0]->kind, NBC__T_INT64);
  ASSERT_EQ(args[1]->kind, NBC__T_INT64);
  /* int64 < uint64 compares as float64: both convert to it safely, while either integer
   * case needs an unsafe conversion (numba-cuda resolves it so too). */
  ASSERT_EQ(nbc__type_binop_sig(NBC__OP_LT, i64, u64, args, &why)->kind, NBC__T_BOOL);
  ASSERT_EQ(args[0]->kind, NBC__T_FLOAT64);
  ASSERT_EQ(args[1]->kind, NBC__T_FLOAT64);
  /* unify: numpy's promotion, booleans to the other side. */
  ASSERT_EQ(nbc__type_unify(NULL, i64, u64)->kind, NBC__T_FLOAT64);
  ASSERT_EQ(nbc__type_unify(NULL, b, i8)->kind, NBC__T_INT8);
  ASSERT_EQ(nbc__type_unify(NULL, i32, i64)->kind, NBC__T_INT64);
  ASSERT_EQ(nbc__type_unify(NULL, i64, nbc__type_scalar(NBC__T_FLOAT64))->kind, NBC__T_FLOAT64);
  args[0] = f32;
  nbc__type_why bwhy;
  ASSERT_EQ(nbc__type_call_builtin("round", args, 1, NULL, &bwhy)->kind, NBC__T_INT64);
  /* a failure's kind: no matching definition, or refused with a reason of its own */
  args[0] = nbc__type_scalar(NBC__T_COMPLEX128);
  ASSERT(nbc__type_call_builtin("int", args, 1, NULL, &bwhy) == NULL);
  ASSERT_EQ(bwhy.kind, NBC__TYPE_NO_MATCH);
  args[1] = f32;
  ASSERT(nbc__type_call_builtin("max", args, 2, NULL, &bwhy) == NULL);
  ASSERT_EQ(bwhy.kind, NBC__TYPE_REFUSED);
  ASSERT_STREQ(bwhy.text, "min()/max() of complex numbers is not supported");
  args[0] = nbc__type_scalar(NBC__T_FLOAT16);
  ASSERT(nbc__type_call_builtin("bool", args, 1, NULL, &bwhy) == NULL);
  ASSERT_EQ(bwhy.kind, NBC__TYPE_REFUSED);
  args[0] = f32;
  ASSERT(nbc__type_math("nosuch", args, 1, NULL, &why) == NULL);
  ASSERT_STREQ(why, "unknown math function");
  ASSERT(nbc__type_math("sin", args, 2, NULL, &why) == NULL);
  ASSERT_STREQ(why, "takes exactly one argument");
}

TEST(conversions) {
  const nbc__type *t[4] = {nbc__type_scalar(NBC__T_BOOL), nbc__type_scalar(NBC__T_INT16),
                           nbc__type_scalar(NBC__T_FLOAT32),
                           nbc__type_scalar(NBC__T_COMPLEX64)};
  ASSERT_EQ(nbc__type_conversion(t[0], t[1]), NBC__CONV_SAFE);
  ASSERT_EQ(nbc__type_conversion(t[1], t[2]), NBC__CONV_SAFE);
  ASSERT_EQ(nbc__type_conversion(t[2], t[1]), NBC__CONV_UNSAFE);
  ASSERT_EQ(nbc__type_conversion(t[3], t[2]), NBC__CONV_NONE);
  ASSERT_EQ(nbc__type_conversion(nbc__type_scalar(NBC__T_INT8), t[1]), NBC__CONV_PROMOTE);
  ASSERT_EQ(
      nbc__type_conversion(nbc__type_scalar(NBC__T_INT64), nbc__type_scalar(NBC__T_FLOAT64)),
      NBC__CONV_SAFE);
  ASSERT(!nbc__type_can_convert(t[3], t[0]));
}

TEST(printing) {
  nbc__ctx ctx = {0};
  ctx.arena = nbc__arena_create();
  const nbc__type *f32 = nbc__type_scalar(NBC__T_FLOAT32);
  const nbc__type *i64 = nbc__type_scalar(NBC__T_INT64);
  ASSERT_STREQ(nbc__type_name(&ctx, nbc__type_array(&ctx, f32, 1, 'C')),
               "array(float32, 1d, C)");
  ASSERT_STREQ(nbc__type_name(&ctx, nbc__type_array(&ctx, f32, 3, 'A')),
               "array(float32, 3d, A)");
  const nbc__type *items[2] = {i64, i64};
  ASSERT_STREQ(nbc__type_name(&ctx, nbc__type_tuple(&ctx, items, 2)), "UniTuple(int64 x 2)");
  items[0] = nbc__type_scalar(NBC__T_FLOAT64);
  items[1] = nbc__type_scalar(NBC__T_INT32);
  ASSERT_STREQ(nbc__type_name(&ctx, nbc__type_tuple(&ctx, items, 2)), "Tuple(float64, int32)");
  ASSERT_STREQ(nbc__type_name(&ctx, nbc__type_scalar(NBC__T_BOOL)), "bool");
  ASSERT_STREQ(nbc__type_name(&ctx, nbc__type_scalar(NBC__T_VOID)), "void");
  ASSERT_STREQ(nbc__type_name(&ctx, nbc__type_scalar(NBC__T_NONE)), "none");
  /* Arrays of one layout unify with another to layout A. */
  const nbc__type *u = nbc__type_unify(&ctx, nbc__type_array(&ctx, f32, 2, 'C'),
                                       nbc__type_array(&ctx, f32, 2, 'F'));
  ASSERT_STREQ(nbc__type_name(&ctx, u), "array(float32, 2d, A)");
  ASSERT(nbc__type_unify(&ctx, nbc__type_array(&ctx, f32, 2, 'C'), i64) == NULL);
  nbc__arena_destroy(ctx.arena);
}

TEST_LIST(X(every_row) X(surprises) X(conversions) X(printing))
TEST_MAIN()
