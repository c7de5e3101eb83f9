/* test_numpy.c — numpy in kernels (lib_numpy.c and its callers): what `import numpy as np` and
 * `from numpy import ...` bind, numba-cuda's typing of every supported ufunc on every
 * scalar type (tests/data/numpy_typing.tsv, written by tools/gen_numpy_typing.py from
 * numba-cuda's own typing context), the types inference gives np.float32(x), np.pi,
 * np.sqrt(...), the refusals, and kernels using them compiled to PTX that ptxas accepts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "front_util.h"
#include "nvvm_util.h"
#include "ptx_check.h"
#include "test.h"

static nbc_global_t resolved(nbc__module *m, const char *name) {
  nbc_global_t g;
  if (nbc__module_resolve(m, name, &g) != 0) g.kind = NBC_GLOBAL_UNDEFINED;
  return g;
}

TEST(imports_bind_numpy_names) {
  nbc__module *m =
      fe_load("import numpy as np\n"
              "import numpy\n"
              "from numpy import float32, byte, bool_, sqrt, abs as nabs, pi, sum\n"
              "TWO_PI = 2 * np.pi\n"
              "HALF = numpy.e / 2\n");
  ASSERT(m);
  ASSERT_EQ(resolved(m, "np").kind, NBC_GLOBAL_MODULE_NUMPY);
  ASSERT_EQ(resolved(m, "numpy").kind, NBC_GLOBAL_MODULE_NUMPY);
  nbc_global_t g = resolved(m, "float32");
  ASSERT_EQ(g.kind, NBC_GLOBAL_TYPE);
  ASSERT_STREQ(g.name, "float32");
  g = resolved(m, "byte"); /* numpy's byte is int8 (numba's is uint8) */
  ASSERT_EQ(g.kind, NBC_GLOBAL_TYPE);
  ASSERT_STREQ(g.name, "int8");
  ASSERT_STREQ(resolved(m, "bool_").name, "bool");
  g = resolved(m, "sqrt");
  ASSERT_EQ(g.kind, NBC_GLOBAL_NUMPY_FUNCTION);
  ASSERT_STREQ(g.name, "sqrt");
  g = resolved(m, "nabs");
  ASSERT_EQ(g.kind, NBC_GLOBAL_NUMPY_FUNCTION);
  ASSERT_STREQ(g.name, "absolute");
  g = resolved(m, "pi");
  ASSERT_EQ(g.kind, NBC_GLOBAL_FLOAT);
  ASSERT(g.value.f == 3.141592653589793);
  ASSERT_EQ(resolved(m, "sum").kind, NBC_GLOBAL_OTHER);
  g = resolved(m, "TWO_PI");
  ASSERT_EQ(g.kind, NBC_GLOBAL_FLOAT);
  ASSERT(g.value.f == 2 * 3.141592653589793);
  ASSERT(resolved(m, "HALF").value.f == 2.718281828459045 / 2);
}

static const nbc__type *type_of(const char *name) {
  return nbc__type_by_name(name, strlen(name));
}

TEST(every_row_of_numba_cuda_typing) {
  const char *path = NBCUDA_SOURCE_DIR "/tests/data/numpy_typing.tsv";
  FILE *f = fopen(path, "r");
  if (!f) TEST_FAIL_("cannot open %s", path);
  nbc__ctx *ctx = fe_new_ctx();
  char line[256];
  int lineno = 0, checked = 0, mismatches = 0, refused = 0;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    line[strcspn(line, "\r\n")] = 0;
    if (lineno == 1 || !*line) continue;
    char *u = strtok(line, "\t"), *an = strtok(NULL, "\t"), *bn = strtok(NULL, "\t"),
         *want = strtok(NULL, "\t");
    if (!u || !an || !bn || !want) TEST_FAIL_("%s:%d: malformed row", path, lineno);
    const nbc__type *args[2] = {type_of(an), strcmp(bn, "-") ? type_of(bn) : NULL};
    int nargs = args[1] ? 2 : 1;
    if (!args[0] || (nargs == 2 && !args[1])) TEST_FAIL_("%s:%d: unknown type", path, lineno);
    const nbc__type *loop = NULL;
    const char *why = NULL;
    const nbc__type *got = nbc__type_numpy(u, args, nargs, &loop, &why);
    checked++;
    /* numba-cuda cannot lower np.power on integers; nbcuda refuses it when typing. */
    bool refuse = strcmp(u, "power") == 0 && type_of(want) && nbc__type_is_int(type_of(want));
    if (refuse) {
      refused++;
      if (got || !why) {
        mismatches++;
        printf("MISMATCH %s:%d: numpy.%s(%s, %s) should be refused\n", path, lineno, u, an, bn);
      }
      continue;
    }
    const char *gotname = got ? nbc__type_name(ctx, got) : "-";
    if (strcmp(gotname, want) != 0) {
      mismatches++;
      printf("MISMATCH %s:%d: numpy.%s(%s%s%s) = %s, numba-cuda: %s\n", path, lineno, u, an,
             nargs == 2 ? ", " : "", nargs == 2 ? bn : "", gotname, want);
    }
  }
  fclose(f);
  printf("numpy typing table: %d rows checked (%d refused), %d mismatches\n", checked, refused,
         mismatches);
  ASSERT(checked >= 1300);
  ASSERT_EQ(mismatches, 0);
}

typedef struct run {
  nbc__ctx ctx;
  nbc_compile_options_t opts;
  bool ok;
} run;

static run *infer_src(const char *src, const char *fname, const char *sigtext) {
  run *r = calloc(1, sizeof *r);
  r->ctx.arena = nbc__arena_create();
  nbc__buf_init(&r->ctx.diag, r->ctx.arena);
  nbc_compile_options_init(&r->opts);
  r->ctx.options = &r->opts;
  nbc__module *m = nbc__module_load(&r->ctx, fe_file(&r->ctx, "k.py", src));
  if (!m) TEST_FAIL_("module did not load: %s", r->ctx.diag.data);
  nbc__node *def = nbc__module_function(m, fname);
  if (!def) TEST_FAIL_("no function %s", fname);
  nbc__signature sig;
  if (!nbc__signature_parse(&r->ctx, sigtext, &sig)) TEST_FAIL_("bad sig %s", sigtext);
  r->ok = nbc__infer(&r->ctx, m, def, &sig);
  return r;
}

/* The inferred return type of `def f(a, b): return <expr>` for the signature. */
static const char *type_of_expr(const char *expr, const char *sig) {
  char src[512];
  snprintf(src, sizeof src,
           "import numpy as np\nfrom numpy import float32, sqrt as s\n"
           "def f(a, b):\n    return %s\n",
           expr);
  run *r = infer_src(src, "f", sig);
  if (!r->ok) return r->ctx.diag.data;
  return nbc__type_name(&r->ctx, r->ctx.program->entry->ret);
}

TEST(inference_of_numpy_expressions) {
  ASSERT_STREQ(type_of_expr("np.float32(a)", "(int64, int64)"), "float32");
  ASSERT_STREQ(type_of_expr("float32(a)", "(int64, int64)"), "float32");
  ASSERT_STREQ(type_of_expr("np.int16(a) + np.uint8(b)", "(float64, int64)"), "int64");
  ASSERT_STREQ(type_of_expr("np.bool_(a)", "(float64, int64)"), "bool");
  ASSERT_STREQ(type_of_expr("np.double(a)", "(int32, int64)"), "float64");
  ASSERT_STREQ(type_of_expr("np.pi + np.e + np.euler_gamma", "(int64, int64)"), "float64");
  /* on complex numbers numba computes these with its cmath implementations, cmath's types */
  ASSERT_STREQ(type_of_expr("np.exp(a)", "(complex128, int64)"), "complex128");
  ASSERT_STREQ(type_of_expr("np.sqrt(a)", "(complex64, int64)"), "complex64");
  ASSERT_STREQ(type_of_expr("np.isnan(a)", "(complex64, int64)"), "bool");
  ASSERT_STREQ(type_of_expr("np.tan(a)", "(complex128, int64)"), "complex128");
  ASSERT_STREQ(type_of_expr("np.tanh(a)", "(complex64, int64)"), "complex64");
  ASSERT_STREQ(type_of_expr("np.log1p(a)", "(complex128, int64)"), "complex128");
  ASSERT_STREQ(type_of_expr("np.inf if a else np.nan", "(int64, int64)"), "float64");
  ASSERT_STREQ(type_of_expr("np.sqrt(a)", "(int64, int64)"), "float64");
  ASSERT_STREQ(type_of_expr("np.sqrt(a)", "(float32, int64)"), "float32");
  ASSERT_STREQ(type_of_expr("s(a)", "(int16, int64)"), "float32");
  ASSERT_STREQ(type_of_expr("np.abs(a)", "(int8, int64)"), "int8");
  ASSERT_STREQ(type_of_expr("np.minimum(a, b)", "(int32, int64)"), "int64");
  ASSERT_STREQ(type_of_expr("np.maximum(a, b)", "(int64, float32)"), "float32");
  ASSERT_STREQ(type_of_expr("np.floor(a)", "(int32, int64)"), "int32");
  ASSERT_STREQ(type_of_expr("np.floor(a)", "(float32, int64)"), "float32");
  ASSERT_STREQ(type_of_expr("np.isnan(a)", "(float64, int64)"), "bool");
  ASSERT_STREQ(type_of_expr("np.arctan2(a, b)", "(float32, int8)"), "float32");
  /* A dtype as a shared array's dtype. */
  run *r = infer_src("import numpy as np\nfrom numba import cuda\n"
                     "def k(x):\n"
                     "    sm = cuda.shared.array((16, 4), dtype=np.float32)\n"
                     "    loc = cuda.local.array(8, np.int64)\n"
                     "    sm[0, 0] = x[0]\n"
                     "    loc[0] = 1\n",
                     "k", "void(float32[:])");
  if (!r->ok) TEST_FAIL_("%s", r->ctx.diag.data);
  const nbc__func *k = r->ctx.program->entry;
  ASSERT_STREQ(nbc__type_name(&r->ctx, k->vars[1].type), "array(float32, 2d, C)");
  ASSERT_STREQ(nbc__type_name(&r->ctx, k->vars[2].type), "array(int64, 1d, C)");
}

TEST(what_kernels_cannot_use_is_refused_clearly) {
  ASSERT_STREQ(type_of_expr("np.cumsum(a)", "(int64, int64)"),
               "k.py:4:15: error: 'numpy.cumsum' is not supported in kernels\n"
               "    return np.cumsum(a)\n"
               "              ^");
  ASSERT_STREQ(type_of_expr("np.sum(a)", "(int64, int64)"),
               "k.py:4:12: error: sum() of int64 is not supported in kernels (arrays are)\n"
               "    return np.sum(a)\n"
               "           ^");
  ASSERT_CONTAINS(type_of_expr("np.sqrt(a)", "(float16, int64)"),
                  "k.py:4:12: error: numpy.sqrt: float16 arguments are not supported");
  ASSERT_CONTAINS(type_of_expr("np.floor(a)", "(complex128, int64)"),
                  "numpy.floor: complex arguments are not supported");
  ASSERT_CONTAINS(type_of_expr("np.power(a, b)", "(int64, int64)"),
                  "numpy.power: integer loops are not supported");
  /* a second argument is the output (numba's message when it is no array) */
  ASSERT_CONTAINS(type_of_expr("np.sqrt(a, b)", "(int64, int64)"),
                  "error: ufunc 'sqrt' called with an explicit output that is not an array");
  ASSERT_CONTAINS(type_of_expr("np.sqrt(a, b, a)", "(int64, int64)"),
                  "error: Invalid use of numpy.sqrt with parameters (int64, int64, int64)");
  ASSERT_CONTAINS(type_of_expr("np.minimum(a, b=1)", "(int64, int64)"),
                  "error: numpy.minimum() takes no keyword arguments");
  ASSERT_CONTAINS(type_of_expr("np.float32", "(int64, int64)"), "cannot return a value");
}

static const char kernel_src[] =
    "import numpy as np\n"
    "from numba import cuda\n"
    "from numpy import float32, sqrt\n"
    "@cuda.jit\n"
    "def k(out, x, n):\n"
    "    sm = cuda.shared.array(256, dtype=np.float32)\n"
    "    i = cuda.grid(1)\n"
    "    if i < x.size:\n"
    "        v = x[i]\n"
    "        sm[cuda.threadIdx.x] = np.float32(v) * np.float32(2)\n"
    "        cuda.syncthreads()\n"
    "        w = np.sqrt(v) + np.exp(np.int16(n)) + sqrt(n) + np.abs(v) + np.floor(n)\n"
    "        w += np.minimum(v, sm[0]) + np.fmax(v, np.nan) + np.arctan2(v, n) + np.pi\n"
    "        if np.isnan(w) or np.isinf(w) or not np.isfinite(v):\n"
    "            w = np.inf\n"
    "        out[i] = float32(w) + np.maximum(n, 3) + np.power(v, 2.0)\n";

static const char *compile_kernel(const char *dump_ir) {
  nbc_source_t s = {kernel_src, 0, "np_kernel.py", 1, 0};
  nbc_compile_options_t o;
  nbc_compile_options_init(&o);
  o.device = 0;
  o.abi = NBC_ABI_NUMBA;
  o.cc_major = 9;
  o.cc_minor = 0;
  nbc__compile_info info = {0};
  info.dump = dump_ir ? NBC__DUMP_IR : NBC__DUMP_NONE;
  nbc_compile_result_t *r = NULL;
  if (nbc__compile_ex(&s, "k", "void(float32[:], float32[:], int64)", &o, NULL, &info, &r) !=
      NBC_OK)
    TEST_FAIL_("compile failed: %s", nbc_last_error());
  char *code = strdup(nbc_compile_result_code(r, NULL));
  nbc_compile_result_destroy(r);
  return code;
}

TEST(kernels_using_numpy_compile_to_ptx) {
  require_nvvm();
  const char *ir = compile_kernel("ir");
  /* np.sqrt(float32) in single precision, np.exp(int16) on float32 too, np.sqrt(int64) in
   * double; np.minimum/np.fmax with numpy's NaN handling; np.maximum(int64, 3) on int64. */
  ASSERT_CONTAINS(ir, "@__nv_sqrtf(");
  ASSERT_CONTAINS(ir, "@__nv_expf(");
  ASSERT_CONTAINS(ir, "@__nv_sqrt(");
  ASSERT_CONTAINS(ir, "@__nv_atan2f(");
  ASSERT_CONTAINS(ir, "fcmp uno float");
  ASSERT_CONTAINS(ir, "fcmp ole float");
  ASSERT_CONTAINS(ir, "fcmp oge double"); /* np.fmax(float32, float64) is float64 */
  ASSERT_CONTAINS(ir, "addrspace(3)");
  const char *ptx = compile_kernel(NULL);
  ASSERT_CONTAINS(ptx, ".visible .entry");
  ASSERT_CONTAINS(ptx, "sqrt.rn.f32");
  ASSERT_CONTAINS(ptx, "sqrt.rn.f64");
  ASSERT_CONTAINS(ptx, ".shared");
  char log[8192];
  int rc = ptx_check_ptxas(ptx, strlen(ptx), 0, log, sizeof log);
  if (rc < 0) SKIP("ptxas not found");
  if (rc > 0) TEST_FAIL_("ptxas: %s", log);
}

TEST_LIST(X(imports_bind_numpy_names) X(every_row_of_numba_cuda_typing)
              X(inference_of_numpy_expressions) X(what_kernels_cannot_use_is_refused_clearly)
                  X(kernels_using_numpy_compile_to_ptx))
TEST_MAIN()
