/* test_float16.c — float16 lowering: libNVVM 13 silently drops computations on LLVM's
 * `half` type, so nbcuda carries float16 as i16 bits and computes in float32 (lower_expr.c).
 * These tests make sure the computation really reaches the PTX and gives IEEE float16
 * results:
 *
 *   - values: expressions over constants are folded by libNVVM; the float16 bits stored into
 *     func_retval0 are compared with bits computed here by a brute-force nearest-float16
 *     search (ties to even) over every finite float16, independent of the compiler's own
 *     rounding function;
 *   - shape: a device function's PTX converts its float16 operands with cvt.f32.f16, does the
 *     arithmetic (add.f32, ...), rounds with cvt.rn.f16.f32 and stores the result; the IR
 *     never mentions `half`;
 *   - kernels in the style of tests/corpus over float16 arrays go through ptxas;
 *   - cuda.atomic on float16 arrays (which numba-cuda does not type) is refused clearly.
 */
#include <inttypes.h>
#include <math.h>

#include "compiler/compiler.h"
#include "nvvm_util.h"
#include "ptx_check.h"
#include "test.h"

/* Compiles src's f for sig; kernel picks a kernel, numba_abi the Numba ABI for a device
 * function. Returns the PTX (or IR with dump_ir), or NULL with *perr set on a compile error. */
static const char *compile_ex(const char *src, const char *sig, bool kernel, bool numba_abi,
                              bool dump_ir, const char **perr) {
  nbc_source_t s = {src, 0, "h.py", 1, 0};
  nbc_compile_options_t o;
  nbc_compile_options_init(&o);
  o.cc_major = 9;
  if (kernel) o.device = 0;
  if (kernel || numba_abi) o.abi = NBC_ABI_NUMBA;
  nbc__compile_info info;
  memset(&info, 0, sizeof info);
  info.dump = dump_ir ? NBC__DUMP_IR : NBC__DUMP_NONE;
  nbc_compile_result_t *r = NULL;
  nbc_status_t st = nbc__compile_ex(&s, "f", sig, &o, NULL, &info, &r);
  if (st != NBC_OK) {
    if (perr) *perr = strdup(nbc_last_error());
    return NULL;
  }
  const char *code = strdup(nbc_compile_result_code(r, NULL));
  nbc_compile_result_destroy(r);
  return code;
}

static const char *compile_text(const char *src, const char *sig, bool kernel, bool dump_ir) {
  const char *err = NULL;
  const char *code = compile_ex(src, sig, kernel, false, dump_ir, &err);
  if (!code) TEST_FAIL_("compiling:\n%s\nfailed: %s", src, err);
  return code;
}

/* ----------------------------------------------------------- reference float16 ------- */

static double half_to_double(uint16_t h) {
  int e = (h >> 10) & 0x1f;
  double m = h & 0x3ff;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
  return (h & 0x8000u) ? -v : v;
}

/* IEEE round to nearest even, by search: the closest finite float16 (ties: even mantissa);
 * beyond 65504 + half an ulp (65520) the result is infinity. */
static uint16_t ref_half(double v) {
  if (isnan(v)) return 0x7e00;
  uint16_t sign = signbit(v) ? 0x8000u : 0;
  double a = fabs(v);
  if (a >= 65520.0) return sign | 0x7c00u;
  uint16_t best = 0;
  double bestd = INFINITY;
  for (uint32_t h = 0; h < 0x7c00u; h++) {
    double d = fabs(half_to_double((uint16_t)h) - a);
    if (d < bestd || (d == bestd && (h & 1u) == 0)) {
      best = (uint16_t)h;
      bestd = d;
    }
  }
  return sign | best;
}

/* The float16 bits an expression (of type float16) folds to. A C-ABI float16 return is an
 * i16 the PTX widens to .b32: "mov.u32 %r1, 13516; st.param.b32 [func_retval0+0], %r1". */
static uint16_t half_of(const char *expr) {
  char src[1024];
  snprintf(src, sizeof src,
           "from numba import float16, int64, float32\n"
           "def f():\n    return %s\n",
           expr);
  const char *ptx = compile_text(src, "float16()", false, false);
  const char *p = strstr(ptx, "[func_retval0+0], ");
  if (!p) TEST_FAIL_("%s: no result store in\n%s", expr, ptx);
  p += strlen("[func_retval0+0], ");
  char reg[32];
  snprintf(reg, sizeof reg, "%.*s", (int)strcspn(p, ";"), p);
  if (reg[0] != '%') return (uint16_t)strtol(reg, NULL, 0);
  char def[64];
  snprintf(def, sizeof def, "\t%s, ", reg);
  const char *q = strstr(ptx, def);
  if (!q) TEST_FAIL_("%s: %s is not defined in\n%s", expr, reg, ptx);
  const char *line = q;
  while (line > ptx && line[-1] != '\n')
    line--;
  if (strncmp(line, "\tmov.", 5) != 0)
    TEST_FAIL_("%s: not folded to a constant:\n%s", expr, ptx);
  q += strlen(def);
  if (*q == '%') TEST_FAIL_("%s: not folded to a constant:\n%s", expr, ptx);
  return (uint16_t)strtol(q, NULL, 0);
}

#define EXPECT_HALF(expr, want)                                                                \
  do {                                                                                         \
    uint16_t got_ = half_of(expr), want_ = (uint16_t)(want);                                   \
    if (got_ != want_) TEST_FAIL_("%s gave 0x%04x, expected 0x%04x", expr, got_, want_);       \
  } while (0)

/* float16 a op float16 b, both literals: round(round(a) op round(b)). */
static void check_binop(double a, char op, double b) {
  double x = half_to_double(ref_half(a)), y = half_to_double(ref_half(b));
  double exact = op == '+' ? x + y : op == '-' ? x - y : op == '*' ? x * y : x / y;
  char expr[256];
  snprintf(expr, sizeof expr, "float16(%.17g) %c float16(%.17g)", a, op, b);
  EXPECT_HALF(expr, ref_half(exact));
}

TEST(reference_rounding) {
  /* The reference itself against known bits. */
  ASSERT_EQ(ref_half(1.0), 0x3c00);
  ASSERT_EQ(ref_half(0.1), 0x2e66);
  ASSERT_EQ(ref_half(65504.0), 0x7bff);
  ASSERT_EQ(ref_half(65519.0), 0x7bff);
  ASSERT_EQ(ref_half(65520.0), 0x7c00);
  ASSERT_EQ(ref_half(ldexp(1, -24)), 0x0001);
  ASSERT_EQ(ref_half(ldexp(1, -25)), 0x0000); /* tie to even: 0 */
  ASSERT_EQ(ref_half(ldexp(3, -25)), 0x0002); /* tie to even: 2 */
  ASSERT_EQ(ref_half(-2.0), 0xc000);
}

TEST(constants_round_to_nearest_even) {
  require_nvvm();
  static const double values[] = {0.1,
                                  0.2,
                                  1.0 / 3,
                                  65504.0,
                                  65519.0,
                                  65520.0,
                                  1e10,
                                  -1e-10,
                                  6.1e-5,
                                  5.960464477539063e-08,
                                  2.9802322387695312e-08,
                                  8.940696716308594e-08,
                                  -2.5,
                                  1024.5,
                                  2049.0,
                                  2051.0};
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
    char expr[64];
    snprintf(expr, sizeof expr, "float16(%.17g)", values[i]);
    EXPECT_HALF(expr, ref_half(values[i]));
  }
  EXPECT_HALF("float16(-0.0)", 0x8000);
  /* One rounding from float64: through float32 this would tie and round to 1.0. */
  double v = 1.0 + ldexp(1, -11) + ldexp(1, -40);
  char expr[64];
  snprintf(expr, sizeof expr, "float16(%.17g)", v);
  EXPECT_HALF(expr, 0x3c01);
  /* From integers (int64 through float64) and booleans. */
  EXPECT_HALF("float16(65519)", 0x7bff);
  EXPECT_HALF("float16(70000)", 0x7c00);
  EXPECT_HALF("float16(-2049)", ref_half(-2049.0));
  EXPECT_HALF("float16(True)", 0x3c00);
  EXPECT_HALF("float16(float32(0.1))", ref_half((double)0.1f));
}

TEST(arithmetic_rounds_after_each_operation) {
  require_nvvm();
  static const double pairs[][2] = {{0.1, 0.2},    {1.0, 3.0},    {65504.0, 16.0}, {1e-7, 3e-7},
                                    {-2.5, 0.1},   {1000.0, 0.3}, {0.333, 0.777},  {60000, 2},
                                    {6.1e-5, 0.5}, {2049.0, 1.0}};
  static const char ops[] = {'+', '-', '*', '/'};
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
    for (size_t k = 0; k < 4; k++)
      check_binop(pairs[i][0], ops[k], pairs[i][1]);
  EXPECT_HALF("float16(0.1) + float16(0.2)", 0x34cc);
  /* Rounded after each operation: (a + b) + c differs from a + (b + c) here. */
  double a = half_to_double(ref_half(2048.0)), b = 1.0;
  uint16_t ab = ref_half(a + b), abb = ref_half(half_to_double(ab) + b);
  EXPECT_HALF("(float16(2048) + float16(1)) + float16(1)", abb);
  EXPECT_HALF("float16(2048) + (float16(1) + float16(1))", ref_half(2050.0));
  /* float16 with int8/bool stays float16. */
  EXPECT_HALF("float16(0.1) * True", ref_half(0.1));
  EXPECT_HALF("-float16(0.0)", 0x8000);
  EXPECT_HALF("-float16(1.5)", 0xbe00);
  EXPECT_HALF("abs(float16(-0.1))", ref_half(0.1));
  EXPECT_HALF("min(float16(0.1), float16(-3.0))", ref_half(-3.0));
  EXPECT_HALF("max(float16(0.1), float16(-3.0))", ref_half(0.1));
}

/* A small int64/bool result of a float16 expression, folded. */
static int64_t int_of(const char *expr, const char *rtype) {
  char src[512], sig[64];
  snprintf(src, sizeof src, "from numba import float16\ndef f():\n    return %s\n", expr);
  snprintf(sig, sizeof sig, "%s()", rtype);
  const char *ptx = compile_text(src, sig, false, false);
  const char *p = strstr(ptx, "[func_retval0+0], ");
  if (!p) TEST_FAIL_("%s: no result store in\n%s", expr, ptx);
  p += strlen("[func_retval0+0], ");
  char reg[32];
  snprintf(reg, sizeof reg, "%.*s", (int)strcspn(p, ";"), p);
  if (reg[0] != '%') return strtoll(reg, NULL, 0);
  char def[64];
  snprintf(def, sizeof def, "\t%s, ", reg);
  const char *q = strstr(ptx, def);
  if (!q) TEST_FAIL_("%s: %s not defined in\n%s", expr, reg, ptx);
  q += strlen(def);
  if (*q == '%') TEST_FAIL_("%s: not folded:\n%s", expr, ptx);
  return strtoll(q, NULL, 0);
}

TEST(conversions_comparisons_and_truth) {
  require_nvvm();
  /* numba-cuda converts float16 to integers with cvt.rni: to the nearest, ties to even. */
  ASSERT_EQ(int_of("int(float16(3.7))", "int64"), 4);
  ASSERT_EQ(int_of("int(float16(2.5))", "int64"), 2);
  ASSERT_EQ(int_of("int(float16(3.5))", "int64"), 4);
  ASSERT_EQ(int_of("int(float16(2049.0))", "int64"), 2048); /* 2049 rounds to 2048 */
  ASSERT_EQ(int_of("float16(0.1) < float16(0.2)", "boolean"), 1);
  ASSERT_EQ(int_of("float16(0.1) == 0.1", "boolean"), 0); /* compared as float64 */
  ASSERT_EQ(int_of("float16(0.5) == 0.5", "boolean"), 1);
  ASSERT_EQ(int_of("float16(2049.0) == float16(2048.0)", "boolean"), 1);
  ASSERT_EQ(int_of("not float16(-0.0)", "boolean"), 1);
  ASSERT_EQ(int_of("not float16(1e-7)", "boolean"), 0);
}

/* ----------------------------------------------------------- PTX shape --------------- */

/* The first `needle` at or after `from` (NULL when from is NULL or there is none). */
static const char *after(const char *from, const char *needle) {
  return from ? strstr(from, needle) : NULL;
}

/* a * b + c on float16 is rounded once, numba-cuda's contracted fma.rn.f16 (H200); a * b - c
 * and c - a * b negate an operand's sign bit first. */
TEST(multiply_add_rounds_once) {
  require_nvvm();
  const char *ptx = compile_text("def f(a, b, c):\n    return a * b + c\n",
                                 "float16(float16, float16, float16)", false, false);
  ASSERT_CONTAINS(ptx, "fma.rn.f16");
  if (strstr(ptx, "mul.f16") || strstr(ptx, "cvt.rn.f16"))
    TEST_FAIL_("the product is rounded separately in\n%s", ptx);
  ptx = compile_text("def f(a, b, c):\n    return c - a * b\n",
                     "float16(float16, float16, float16)", false, false);
  ASSERT_CONTAINS(ptx, "xor.b16");
  ASSERT_CONTAINS(ptx, "fma.rn.f16");
}

/* + - * of float16 and comparisons are numba-cuda's native instructions (add.f16, setp.lt.f16:
 * inline PTX on the bits, as libNVVM does not compute on LLVM's half); / and mixed operands
 * compute in float32. */
TEST(device_function_uses_native_float16_instructions) {
  require_nvvm();
  const char *src = "def f(a, b):\n    return a + b\n";
  const char *ptx = compile_text(src, "float16(float16, float16)", false, false);
  const char *add = strstr(ptx, "add.f16");
  const char *st = after(add, "st.param");
  if (!add || !st) TEST_FAIL_("the addition is missing from\n%s", ptx);
  ASSERT(!strstr(ptx, "cvt.f32.f16"));
  ASSERT_CONTAINS(st, "[func_retval0+0]");
  const char *ir = compile_text(src, "float16(float16, float16)", false, true);
  if (strstr(ir, "half")) TEST_FAIL_("the IR uses half:\n%s", ir);
  ASSERT_CONTAINS(ir, "define i16 @f(i16 %arg0_0, i16 %arg1_0)");

  /* Mixed float16/float32 gives float32, float16 * int64 gives float64 (numba's typing). */
  ptx = compile_text("def f(a, b):\n    return a * b\n", "float32(float16, float32)", false,
                     false);
  ASSERT_CONTAINS(ptx, "cvt.f32.f16");
  ASSERT_CONTAINS(ptx, "mul.f32");
  ASSERT_CONTAINS(ptx, "st.param.f32");
  ptx = compile_text("def f(a, b):\n    return a / b\n", "float16(float16, float16)", false,
                     false);
  ASSERT_CONTAINS(ptx, "div.rn.f32");
  ASSERT_CONTAINS(ptx, "cvt.rn.f16.f32");
  ptx = compile_text("from numba import float16\ndef f(a):\n    return float16(a)\n",
                     "float16(float64)", false, false);
  ASSERT_CONTAINS(ptx, "cvt.rn.f16.f64");
  ptx = compile_text("def f(a):\n    return int(a)\n", "int64(float16)", false, false);
  ASSERT_CONTAINS(ptx, "cvt.rni.s64.f16"); /* numba-cuda's: to the nearest, ties to even */
  ptx = compile_text("def f(a):\n    return float(a)\n", "float64(float16)", false, false);
  ASSERT_CONTAINS(ptx, "cvt.f64.f16");
  ptx = compile_text("from numba import float16\ndef f(a):\n    return float16(a)\n",
                     "float16(uint8)", false, false);
  ASSERT_CONTAINS(ptx, "cvt.rn.f16.u8");
  ptx = compile_text("def f(a):\n    return round(a)\n", "int64(float16)", false, false);
  ASSERT_CONTAINS(ptx, "cvt.f32.f16");
  ASSERT_CONTAINS(ptx, "cvt.rni.");
  /* math.<f> of a float16 is numba-cuda's fp16 overload: cuda_fp16.h's hsqrt (fp16.c's
   * wrapper), not a float32 sqrt; float32 keeps libdevice's. */
  ptx = compile_text("import math\ndef f(a):\n    return math.sqrt(a)\n", "float16(float16)",
                     false, false);
  ASSERT_CONTAINS(ptx, "nbc_fp16_hsqrt");
  ASSERT(!strstr(ptx, "sqrt.rn.f32"));
  ptx = compile_text("import math\ndef f(a):\n    return math.floor(a)\n", "float16(float16)",
                     false, false);
  ASSERT_CONTAINS(ptx, "nbc_fp16_hfloor");
  ptx = compile_text("import math\ndef f(a):\n    return math.sqrt(a)\n", "float32(float32)",
                     false, false);
  ASSERT_CONTAINS(ptx, "sqrt.rn.f32");
  ptx = compile_text("def f(a, b):\n    return a < b\n", "boolean(float16, float16)", false,
                     false);
  ASSERT_CONTAINS(ptx, "setp.lt.f16");
  ptx = compile_text("def f(a, b):\n    return a != b\n", "boolean(float16, float16)", false,
                     false);
  ASSERT_CONTAINS(ptx, "setp.neu.f16");
  ptx = compile_text("def f(a):\n    return -abs(a)\n", "float16(float16)", false, false);
  ASSERT_CONTAINS(ptx, "abs.f16");
  ASSERT_CONTAINS(ptx, "neg.f16");
}

TEST(numba_abi_and_tuples) {
  require_nvvm();
  const char *err = NULL;
  const char *src = "def g(a, b):\n    return (a + b, a - b)\n"
                    "def f(a, b):\n    x, y = g(a, b)\n    return x * y\n";
  const char *ptx = compile_ex(src, "float16(float16, float16)", false, true, false, &err);
  if (!ptx) TEST_FAIL_("%s", err);
  ASSERT_CONTAINS(ptx, "add.f16");
  ASSERT_CONTAINS(ptx, "sub.f16");
  ASSERT_CONTAINS(ptx, "mul.f16");
  char log[8192];
  int rc = ptx_check_ptxas(ptx, strlen(ptx), 1, log, sizeof log);
  if (rc < 0) SKIP("ptxas not found");
  if (rc) TEST_FAIL_("ptxas:\n%s\n%s", log, ptx);
}

/* Kernels over float16 arrays, the way users write them. */
static const struct {
  const char *src, *sig;
} kernels[] = {
    {"from numba import cuda\n"
     "def f(x, y, out):\n"
     "    i = cuda.grid(1)\n"
     "    if i < out.size:\n"
     "        out[i] = x[i] + y[i]\n",
     "void(float16[:], float16[:], float16[:])"},
    {"from numba import cuda, float16\n"
     "def f(a, x, y, out):\n"
     "    i = cuda.grid(1)\n"
     "    if i < out.size:\n"
     "        out[i] = float16(a) * x[i] + y[i]\n",
     "void(float32, float16[:], float32[:], float32[:])"},
    {"from numba import cuda\n"
     "def f(x, out):\n"
     "    i, j = cuda.grid(2)\n"
     "    if i < x.shape[0] and j < x.shape[1]:\n"
     "        v = x[i, j]\n"
     "        out[i, j] = max(v, -v) if v < 0 else min(v, v * v)\n",
     "void(float16[:, :], float16[:, :])"},
    {"from numba import cuda, float16, float32\n"
     "def f(x, out):\n"
     "    s = cuda.shared.array(128, float16)\n"
     "    t = cuda.threadIdx.x\n"
     "    i = cuda.grid(1)\n"
     "    s[t] = x[i] if i < x.size else float16(0)\n"
     "    cuda.syncthreads()\n"
     "    acc = float32(0)\n"
     "    for k in range(128):\n"
     "        acc += s[k]\n"
     "    if i < out.size:\n"
     "        out[i] = acc\n",
     "void(float16[:], float16[:])"},
    {"from numba import cuda\n"
     "import math\n"
     "def f(x, out, n):\n"
     "    i = cuda.grid(1)\n"
     "    if i < x.size:\n"
     "        v = x[i]\n"
     "        v -= v / 3\n"
     "        n[i] = int(v)\n"
     "        out[i] = math.sqrt(abs(v)) + math.floor(v)\n",
     "void(float16[:], float16[:], int32[:])"},
};

TEST(kernels_through_ptxas) {
  require_nvvm();
  for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
    const char *ptx = compile_text(kernels[i].src, kernels[i].sig, true, false);
    const char *ir = compile_text(kernels[i].src, kernels[i].sig, true, true);
    if (strstr(ir, "half")) TEST_FAIL_("the IR of kernel %zu uses half:\n%s", i, ir);
    if (!(strstr(ptx, "cvt.f32.f16") || strstr(ptx, ".f16 ")) || !strstr(ptx, "st.global"))
      TEST_FAIL_("kernel %zu lost its float16 computation:\n%s", i, ptx);
    char log[8192];
    int rc = ptx_check_ptxas(ptx, strlen(ptx), 0, log, sizeof log);
    if (rc < 0) SKIP("ptxas not found");
    if (rc) TEST_FAIL_("ptxas on kernel %zu:\n%s\n%s", i, log, ptx);
  }
  /* x[0] * 3 stores the computed value, not an undefined register. */
  const char *ptx = compile_text("def f(x, out):\n    out[0] = x[0] * 3\n",
                                 "void(float16[:], float16[:])", true, false);
  const char *ld = strstr(ptx, "ld.global.");
  const char *mul = after(ld, "mul.f64");
  const char *rn = after(mul, "cvt.rn.f16.f64");
  const char *st = after(rn, "st.global.b16");
  if (!ld || !mul || !rn || !st) TEST_FAIL_("x[0] * 3 is not computed:\n%s", ptx);
}

TEST(atomics_on_float16_are_refused) {
  require_nvvm();
  const char *err = NULL;
  const char *ptx = compile_ex("from numba import cuda, float16\n"
                               "def f(a):\n    cuda.atomic.add(a, 0, float16(1))\n",
                               "void(float16[:])", true, false, false, &err);
  if (ptx) TEST_FAIL_("atomic.add on float16 compiled:\n%s", ptx);
  ASSERT_CONTAINS(err, "cuda.atomic.add() of an array of float16 is not supported");
}

TEST_LIST(X(multiply_add_rounds_once) X(reference_rounding) X(constants_round_to_nearest_even)
              X(arithmetic_rounds_after_each_operation) X(conversions_comparisons_and_truth)
                  X(device_function_uses_native_float16_instructions) X(numba_abi_and_tuples)
                      X(kernels_through_ptxas) X(atomics_on_float16_are_refused))
TEST_MAIN()
