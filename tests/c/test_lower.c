/* test_lower.c — lower.c / lower_expr.c: numba's semantics and the shape of the NVVM IR.
 *
 * Semantics are checked without a GPU by letting libNVVM's optimiser fold expressions over
 * constants: `def f(): return 7 // -2` compiles to PTX that stores the immediate -4 into
 * func_retval0, so the value our IR computes can be read back from the PTX. The expected
 * values are numba-cuda's results measured on an H200 (shared/reference/
 * numba_semantics.md). Our IR never relies on undefined behaviour (division by zero, poison
 * shifts), so folding gives exactly what the GPU computes. IR-shape tests check what the
 * lowering promises: allocas and no phi, kernel annotations and @llvm.used, no wraparound
 * for indices known non-negative, no stride multiply on the contiguous axis.
 */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>

#include "compiler/compiler.h"
#include "nvvm_util.h"
#include "test.h"

/* Compiles `src` (function f, signature sig) and returns the PTX or, with dump_ir, the IR.
 * Fails the test on a compile error. The string lives until the process ends. */
static const char *compile_text(const char *src, const char *sig, bool kernel, bool dump_ir) {
  nbc_source_t s = {src, 0, "t.py", 1, 0};
  nbc_compile_options_t o;
  nbc_compile_options_init(&o);
  o.cc_major = 9;
  if (kernel) {
    o.device = 0;
    o.abi = NBC_ABI_NUMBA;
  }
  nbc__compile_info info;
  memset(&info, 0, sizeof info);
  info.dump = dump_ir ? NBC__DUMP_IR : NBC__DUMP_NONE;
  nbc_compile_result_t *r = NULL;
  nbc_status_t st = nbc__compile_ex(&s, "f", sig, &o, NULL, &info, &r);
  if (st != NBC_OK) TEST_FAIL_("compiling:\n%s\nfailed: %s", src, nbc_last_error());
  const char *code = strdup(nbc_compile_result_code(r, NULL));
  nbc_compile_result_destroy(r);
  return code;
}

/* The immediate the PTX moves into the register stored at func_retval0+offset. */
static const char *retval_imm(const char *ptx, int offset) {
  char key[64];
  snprintf(key, sizeof key, "[func_retval0+%d], ", offset);
  const char *p = strstr(ptx, key);
  if (!p) return NULL;
  p += strlen(key);
  static char reg[64], imm[64];
  size_t n = strcspn(p, ";");
  snprintf(reg, sizeof reg, "%.*s", (int)n, p);
  if (reg[0] != '%') {
    snprintf(imm, sizeof imm, "%s", reg); /* stored directly as an immediate */
    return imm;
  }
  /* The register must be defined by "mov.xx reg, imm;" (else the value was not folded). */
  char def[96];
  snprintf(def, sizeof def, "\t%s, ", reg);
  const char *q = ptx, *last = NULL;
  while ((q = strstr(q, def))) {
    const char *line = q;
    while (line > ptx && line[-1] != '\n') line--;
    if (strncmp(line, "\tmov.", 5) == 0) last = q;
    q++;
  }
  if (!last) return NULL;
  last += strlen(def);
  n = strcspn(last, ";");
  snprintf(imm, sizeof imm, "%.*s", (int)n, last);
  if (imm[0] == '%') return NULL;
  return imm;
}

/* expr with each integer literal passed through v(), the identity: the operation is then
 * lowered as written (runtime semantics, which LLVM folds into the PTX's constant) rather
 * than folded as CPython folds constant expressions before numba sees them (fold.c). */
static const char *through_identity(const char *expr) {
  static char out[1024];
  size_t n = 0;
  for (const char *p = expr; *p && n + 8 < sizeof out;) {
    bool starts = (*p >= '0' && *p <= '9') &&
                  (p == expr || !(isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '.'));
    size_t len = starts ? strspn(p, "0123456789") : 0;
    if (starts && p[len] != '.' && p[len] != 'e' && p[len] != 'x' && n + len + 4 < sizeof out) {
      n += (size_t)snprintf(out + n, sizeof out - n, "v(%.*s)", (int)len, p);
      p += len;
    } else {
      out[n++] = *p++;
    }
  }
  out[n] = '\0';
  return out;
}

/* The constant an expression folds to; prelude (module-level lines) may import names. */
static int64_t int_of_with(const char *prelude, const char *expr) {
  char src[2048];
  snprintf(src, sizeof src, "%sdef v(x):\n    return x\n\ndef f():\n    return %s\n", prelude,
           through_identity(expr));
  const char *ptx = compile_text(src, "()", false, false);
  const char *imm = retval_imm(ptx, 0);
  if (!imm) TEST_FAIL_("%s: no constant result in\n%s", expr, ptx);
  return strtoll(imm, NULL, 0);
}

static int64_t int_of(const char *expr) {
  return int_of_with("", expr);
}

static double float_of(const char *expr) {
  char src[512];
  snprintf(src, sizeof src, "def f():\n    return %s\n", expr);
  const char *ptx = compile_text(src, "()", false, false);
  const char *imm = retval_imm(ptx, 0);
  if (!imm || strncmp(imm, "0d", 2) != 0) TEST_FAIL_("%s: no double constant in\n%s", expr, ptx);
  uint64_t bits = strtoull(imm + 2, NULL, 16);
  double d;
  memcpy(&d, &bits, 8);
  return d;
}

#define EXPECT_INT(expr, want)                                                             \
  do {                                                                                     \
    int64_t got_ = int_of(expr);                                                           \
    if (got_ != (int64_t)(want))                                                           \
      TEST_FAIL_("%s gave %" PRId64 ", expected %" PRId64, expr, got_, (int64_t)(want));  \
  } while (0)

#define EXPECT_FLOAT(expr, want)                                                           \
  do {                                                                                     \
    double got_ = float_of(expr), want_ = (want);                                          \
    if (!(got_ == want_ && signbit(got_) == signbit(want_)) && !(isnan(got_) && isnan(want_))) \
      TEST_FAIL_("%s gave %.17g, expected %.17g", expr, got_, want_);                     \
  } while (0)

#define MIN64 "(-9223372036854775807 - 1)"

TEST(int_floordiv_and_mod) {
  require_nvvm();
  EXPECT_INT("7 // 0", 0);
  EXPECT_INT("-7 // 0", 0);
  EXPECT_INT("7 // -2", -4);
  EXPECT_INT("-7 // 2", -4);
  EXPECT_INT("0 // 0", 0);
  EXPECT_INT("5 // 3", 1);
  EXPECT_INT(MIN64 " // -1", 0);
  EXPECT_INT("3 // -1", -3);
  EXPECT_INT("7 % 0", 0);
  EXPECT_INT("7 % -2", -1);
  EXPECT_INT("-7 % 2", 1);
  EXPECT_INT("5 % 3", 2);
  EXPECT_INT(MIN64 " % -1", 0);
  EXPECT_INT("3 % -1", 0);
}

TEST(int_shifts) {
  require_nvvm();
  EXPECT_INT("1 << 0", 1);
  EXPECT_INT("1 << 63", INT64_MIN);
  EXPECT_INT("1 << 64", 0);
  EXPECT_INT("-8 << 1", -16);
  EXPECT_INT("-8 << 65", 0);
  EXPECT_INT("1 << 100", 0);
  EXPECT_INT("1 << -1", 0);
  EXPECT_INT("1 >> 0", 1);
  EXPECT_INT("-8 >> 1", -4);
  EXPECT_INT("-8 >> 65", -1);
  EXPECT_INT("1 >> -1", 0);
  EXPECT_INT("1 >> 3", 0);
}

TEST(int_power) {
  require_nvvm();
  EXPECT_INT("2 ** 3", 8);
  EXPECT_INT("2 ** -1", 0);
  EXPECT_INT("(-2) ** 3", -8);
  EXPECT_INT("0 ** 0", 1);
  EXPECT_INT("1 ** -5", 1);
  EXPECT_INT("(-1) ** -3", -1);
  EXPECT_INT("(-1) ** -4", 1);
  EXPECT_INT("0 ** -2", INT64_MIN);
  EXPECT_INT("3 ** 40", (int64_t)(uint64_t)12157665459056928801ull);
}

/* The run-time exponent path (a loop, not the unrolled constant form). */
TEST(int_power_loop) {
  require_nvvm();
  const char *src = "def f(a, b):\n    return a ** b\n";
  const char *ir = compile_text(src, "(int64, int64)", false, true);
  ASSERT(!strstr(ir, " phi "));
  compile_text(src, "(int64, int64)", false, false);
  compile_text(src, "(float64, int64)", false, false);
  compile_text(src, "(float32, float32)", false, false);
}

TEST(float_floordiv_and_mod) {
  require_nvvm();
  EXPECT_FLOAT("7.0 // -2.0", -4.0);
  EXPECT_FLOAT("-7.0 // 2.0", -4.0);
  EXPECT_FLOAT("5.5 // 3.0", 1.0);
  EXPECT_FLOAT("-0.0 // 1.0", -0.0);
  EXPECT_FLOAT("7.0 % -2.0", -1.0);
  EXPECT_FLOAT("-7.0 % 2.0", 1.0);
  EXPECT_FLOAT("5.5 % 3.0", 2.5);
  EXPECT_FLOAT("-0.0 % 1.0", 0.0);
  EXPECT_FLOAT("7.0 / -2.0", -3.5);
  EXPECT_FLOAT("7 / 2", 3.5);
  /* A zero divisor is not folded (the GPU gives inf/nan): the division stays in the code,
   * guarded by the divisor test rather than trapping. */
  const char *ptx = compile_text("def f(a, b):\n    return a // b + a % b\n", "(float64, float64)",
                                 false, false);
  ASSERT_CONTAINS(ptx, "div.rn.f64");
  ASSERT_CONTAINS(ptx, "setp.eq.f64");
  const char *pir = compile_text("def f(a, b):\n    return a ** b\n", "(float64, float64)", false, true);
  ASSERT_CONTAINS(pir, "@__nv_pow(double");
}

TEST(conversions_and_builtins) {
  require_nvvm();
  EXPECT_INT("int(1.9)", 1);
  EXPECT_INT("int(-1.9)", -1);
  /* round() is half-to-even through libdevice rint (cvt.rni), which the optimiser does not
   * fold. */
  const char *rptx = compile_text("def f(x):\n    return round(x)\n", "(float64,)", false, false);
  ASSERT_CONTAINS(rptx, "cvt.rni.f64.f64");
  ASSERT_CONTAINS(rptx, "cvt.rzi.s64.f64");
  EXPECT_INT("abs(-5)", 5);
  EXPECT_INT("min(3, 1, 2)", 1);
  EXPECT_INT("max(3, 1, 2)", 3);
  EXPECT_INT("int(True) + 1", 2);
  EXPECT_FLOAT("float(3)", 3.0);
  EXPECT_FLOAT("abs(-2.5)", 2.5);
  EXPECT_INT("1 if 2 > 3 else 7", 7);
  EXPECT_INT("2 < 3 < 4", 1);
  EXPECT_INT("2 < 3 > 4", 0);
}

TEST(wrapping_arithmetic) {
  require_nvvm();
  EXPECT_INT("9223372036854775807 + 1", INT64_MIN);
  EXPECT_INT(MIN64 " - 1", INT64_MAX);
  EXPECT_INT("-(" MIN64 ")", INT64_MIN);
  EXPECT_INT("~5", -6);
  EXPECT_INT("(5 & 3) | (8 ^ 1)", 9 | 1);
}

/* numba negates and inverts integers at the operand's width, then widens (found on the H200:
 * the corpus case bits(uint16, uint16) differed from numba-cuda). */
TEST(unary_ops_at_operand_width) {
  require_nvvm();
  const char *imports = "from numba import uint16, uint8, int8, int16\n";
  ASSERT_EQ(int_of_with(imports, "~uint16(5)"), 65530);
  ASSERT_EQ(int_of_with(imports, "~uint8(0)"), 255);
  ASSERT_EQ(int_of_with(imports, "-int8(-128)"), -128);
  ASSERT_EQ(int_of_with(imports, "-uint8(1)"), 255);
  ASSERT_EQ(int_of_with(imports, "~int16(-1)"), 0);
  ASSERT_EQ(int_of_with(imports, "-int16(5)"), -5);
}

TEST(ir_uses_allocas_not_phis) {
  require_nvvm();
  const char *ir = compile_text("def f(n):\n"
                                "    s = 0\n"
                                "    i = 0\n"
                                "    while i < n and s >= 0:\n"
                                "        if i % 3 == 0:\n"
                                "            s += i\n"
                                "        elif i > 100:\n"
                                "            break\n"
                                "        i += 1\n"
                                "    return s if s > 0 else -s\n",
                                "(int64,)", false, true);
  ASSERT_CONTAINS(ir, "alloca");
  ASSERT(!strstr(ir, " phi "));
  ASSERT_CONTAINS(ir, "!nvvmir.version");
  ASSERT_CONTAINS(ir, "target triple = \"nvptx64-nvidia-cuda\"");
}

TEST(kernel_ir_annotations) {
  require_nvvm();
  const char *ir = compile_text("def f(x):\n    x[0] = 1.0\n", "void(float32[:])", true, true);
  ASSERT_CONTAINS(ir, "define void @");
  ASSERT_CONTAINS(ir, "!nvvm.annotations");
  ASSERT_CONTAINS(ir, "!\"kernel\", i32 1}");
  ASSERT_CONTAINS(ir, "@llvm.used = appending global [1 x i8*]");
  /* numba's flattening: meminfo, parent, nitems, itemsize, data, shape, strides. */
  ASSERT_CONTAINS(ir, "(i8* %arg0_0, i8* %arg0_1, i64 %arg0_2, i64 %arg0_3, float* %arg0_4, "
                      "i64 %arg0_5, i64 %arg0_6)");
}

/* cuda.grid(1) is non-negative: no wraparound select; a C array's last axis uses a typed
 * getelementptr with no stride multiply. A possibly negative index keeps the wraparound. */
TEST(indexing_fast_paths) {
  require_nvvm();
  const char *ir = compile_text("import numba.cuda as cuda\n"
                                "def f(x):\n"
                                "    i = cuda.grid(1)\n"
                                "    if i < x.size:\n"
                                "        x[i] = 2.0\n",
                                "void(float32[::1])", true, true);
  ASSERT(!strstr(ir, " = select i1 "));
  for (const char *l = strstr(ir, "extractvalue"); l; l = strstr(l + 1, "extractvalue")) {
    size_t n = strcspn(l, "\n");
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)n, l);
    if (strstr(line, ", 6, 0")) TEST_FAIL_("stride read: %s", line);
  }
  ASSERT_CONTAINS(ir, "getelementptr float, float*");
  const char *ir2 = compile_text("def f(x, j):\n    x[j] = 2.0\n", "void(float32[:], int64)",
                                 true, true);
  ASSERT_CONTAINS(ir2, " = select i1 ");
  const char *ir3 = compile_text("def f(x, i, j):\n    x[i, j] = 2.0\n",
                                 "void(float32[:, ::1], int64, int64)", true, true);
  /* One stride multiply (axis 0), none for the contiguous axis 1. */
  const char *m = strstr(ir3, " = mul i64 ");
  ASSERT(m != NULL);
  ASSERT(strstr(m + 1, " = mul i64 ") == NULL);
}

TEST(shared_and_local_arrays) {
  require_nvvm();
  const char *ir = compile_text("import numba.cuda as cuda\n"
                                "from numba import float32\n"
                                "def f(x):\n"
                                "    s = cuda.shared.array((4, 8), dtype=float32)\n"
                                "    l = cuda.local.array(3, float32)\n"
                                "    l[0] = x[0]\n"
                                "    s[1, 2] = l[0]\n"
                                "    cuda.syncthreads()\n"
                                "    x[1] = s[1, 2]\n",
                                "void(float32[:])", true, true);
  ASSERT_CONTAINS(ir, "internal addrspace(3) global [32 x float] undef");
  ASSERT_CONTAINS(ir, "alloca [3 x float]");
  ASSERT_CONTAINS(ir, "call void @llvm.nvvm.barrier0()");
  const char *ptx = compile_text("import numba.cuda as cuda\n"
                                 "from numba import float32\n"
                                 "def f(x):\n"
                                 "    s = cuda.shared.array(64, dtype=float32)\n"
                                 "    s[cuda.threadIdx.x] = x[0]\n"
                                 "    cuda.syncthreads()\n"
                                 "    x[1] = s[0]\n",
                                 "void(float32[:])", true, false);
  ASSERT_CONTAINS(ptx, ".shared .align 16 .b8");
  ASSERT_CONTAINS(ptx, "bar.sync");
  ASSERT_CONTAINS(ptx, "st.shared.f32");
}

TEST(atomics) {
  require_nvvm();
  const char *src = "import numba.cuda as cuda\n"
                    "def f(a, v):\n"
                    "    cuda.atomic.add(a, 0, v)\n"
                    "    cuda.atomic.sub(a, 1, v)\n"
                    "    cuda.atomic.max(a, 2, v)\n"
                    "    cuda.atomic.min(a, 3, v)\n";
  const char *ptx = compile_text(src, "void(int64[:], int64)", true, false);
  ASSERT_CONTAINS(ptx, "atom.global.add.u64");
  ASSERT_CONTAINS(ptx, "atom.global.max.s64");
  ASSERT_CONTAINS(ptx, "atom.global.min.s64");
  const char *uptx = compile_text(src, "void(uint32[:], uint32)", true, false);
  ASSERT_CONTAINS(uptx, "atom.global.max.u32");
  const char *fptx = compile_text(src, "void(float32[:], float32)", true, false);
  ASSERT_CONTAINS(fptx, "atom.global.add.f32");
  ASSERT_CONTAINS(fptx, "atom.global.cas.b32");
  const char *dptx = compile_text(src, "void(float64[:], float64)", true, false);
  ASSERT_CONTAINS(dptx, "atom.global.add.f64");
  ASSERT_CONTAINS(dptx, "atom.global.cas.b64");
}

TEST(math_through_libdevice) {
  require_nvvm();
  const char *ir = compile_text("import math\ndef f(x):\n    return math.sin(x) + math.exp(x)\n",
                                "(float32,)", false, true);
  ASSERT_CONTAINS(ir, "declare float @__nv_sinf(float)");
  ASSERT_CONTAINS(ir, "declare float @__nv_expf(float)");
  const char *ir64 = compile_text("import math\ndef f(x):\n    return math.sin(x)\n",
                                  "(float64,)", false, true);
  ASSERT_CONTAINS(ir64, "@__nv_sin(double");
  const char *ptx = compile_text("import math\ndef f(x):\n    return math.atan2(x, 1.0)\n",
                                 "(float64,)", false, false);
  ASSERT(!strstr(ptx, ".extern"));
}

TEST(tuples_and_unpacking) {
  require_nvvm();
  EXPECT_INT("(3, 4)[1]", 4);
  EXPECT_INT("(3, 4)[-2]", 3);
  const char *ptx = compile_text("def f(a, b):\n    a, b = b, a\n    return a - b\n",
                                 "(int64, int64)", false, false);
  ASSERT_CONTAINS(ptx, "sub.s64");
}

TEST_LIST(X(int_floordiv_and_mod) X(int_shifts) X(int_power) X(int_power_loop)
              X(float_floordiv_and_mod) X(conversions_and_builtins) X(wrapping_arithmetic) X(unary_ops_at_operand_width)
                  X(ir_uses_allocas_not_phis) X(kernel_ir_annotations) X(indexing_fast_paths)
                      X(shared_and_local_arrays) X(atomics) X(math_through_libdevice)
                          X(tuples_and_unpacking))
TEST_MAIN()
