/* test_compile.c — the public nbc_compile API end to end, proven with NVIDIA's own tools.
 *
 * Every case of the corpus (the .py files of tests/corpus, read from each file's CASES list)
 * is compiled as numba would compile it — device functions with the C ABI and with the Numba ABI,
 * kernels with the Numba ABI — and the PTX must pass `ptxas -arch=sm_90` (device functions
 * with -c) while the LTO-IR must link with nvJitLink (-arch=sm_90 -lto), a kernel's entry
 * surviving the link. Then the options' visible effects in the PTX (fastmath, lineinfo,
 * abi_name, kernels vs device functions), the return type, the symbol, errors and
 * concurrent compiles.
 */
#include <glob.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler/compiler.h"
#include "host/host.h"
#include "kernel/kernel.h"
#include "front_util.h"
#include "nvvm_util.h"
#include "ptx_check.h"
#include "test.h"

typedef struct corpus_case {
  char file[512];
  char name[128], sig[256], kind[16];
} corpus_case;

/* Reads `    ("name", "signature", "kind", {...}),` lines of the CASES lists. */
static int load_cases(corpus_case *cases, int max) {
  glob_t g;
  int n = 0;
  if (glob(NBCUDA_SOURCE_DIR "/tests/corpus/*.py", 0, NULL, &g) != 0) return 0;
  for (size_t i = 0; i < g.gl_pathc; i++) {
    char *text = fe_read_file(g.gl_pathv[i], NULL);
    for (char *line = text; line && *line && n < max;) {
      char *end = strchr(line, '\n');
      if (end) *end = '\0';
      char *p = line;
      while (*p == ' ') p++;
      corpus_case c;
      snprintf(c.file, sizeof c.file, "%s", g.gl_pathv[i]);
      if (sscanf(p, "(\"%127[^\"]\", \"%255[^\"]\", \"%15[^\"]\"", c.name, c.sig, c.kind) == 3)
        cases[n++] = c;
      line = end ? end + 1 : NULL;
    }
    free(text);
  }
  globfree(&g);
  return n;
}

static nbc_compile_options_t options(void) {
  nbc_compile_options_t o;
  nbc_compile_options_init(&o);
  o.cc_major = 9;
  o.cc_minor = 0;
  return o;
}

/* options() for a kernel (Numba ABI). */
static nbc_compile_options_t kernel_options(void) {
  nbc_compile_options_t o = options();
  o.device = 0;
  o.abi = NBC_ABI_NUMBA;
  return o;
}

/* name of the source compiled for sig, returning ret, its PTX accepted by ptxas. */
static nbc_compile_result_t *compiled_and_assembled(const nbc_source_t *s, const char *name,
                                                    const char *sig,
                                                    const nbc_compile_options_t *o,
                                                    const char *ret) {
  nbc_compile_result_t *r = NULL;
  ASSERT_OK(nbc_compile(s, name, sig, o, NULL, &r));
  ASSERT_STREQ(nbc_compile_result_return_type(r), ret);
  size_t size = 0;
  const char *ptx = nbc_compile_result_code(r, &size);
  char log[4096];
  int rc = ptx_check_ptxas(ptx, size, 1, log, sizeof log);
  if (rc > 0) TEST_FAIL_("ptxas rejected %s:\n%s", name, log);
  return r;
}

static nbc_status_t compile_file(const char *path, const char *name, const char *sig,
                                 const nbc_compile_options_t *o, nbc_compile_result_t **pr) {
  char *text = fe_read_file(path, NULL);
  if (!text) TEST_FAIL_("cannot read %s", path);
  nbc_source_t s = {text, 0, path, 1, 0};
  nbc_status_t st = nbc_compile(&s, name, sig, o, NULL, pr);
  free(text);
  return st;
}

/* The entry's parameters are numba's flattening of the signature (the same parameter
 * list numba-cuda's compile_ptx gives): 5 + 2 * ndim .u64 for an array, one for a scalar
 * in its own type. */
static void check_kernel_params(const corpus_case *c, const char *ptx) {
  nbc_signature_t *sig = NULL;
  ASSERT_OK(nbc_signature_parse(c->sig, &sig));
  char want[4096] = "";
  for (int i = 0; i < nbc_signature_nargs(sig); i++) {
    const nbc_param_info_t *p = nbc_signature_param(sig, i);
    if (p->kind == NBC_PARAM_ARRAY) {
      for (int k = 0; k < 5 + 2 * p->ndim; k++) strcat(want, ".u64 ");
    } else if (p->dtype_kind == 'f') {
      strcat(want, p->itemsize == 4 ? ".f32 " : ".f64 ");
    } else {
      char t[16];
      snprintf(t, sizeof t, ".%c%d ", p->dtype_kind == 'u' || p->dtype_kind == 'b' ? 'u' : 's',
               p->itemsize * 8);
      strcat(want, t);
    }
  }
  nbc_signature_destroy(sig);
  char got[4096] = "";
  const char *entry = strstr(ptx, ".entry ");
  const char *end = entry ? strstr(entry, ")") : NULL;
  for (const char *p = entry; p && p < end && (p = strstr(p, ".param ")) && p < end; p += 7) {
    char t[16];
    sscanf(p + 7, "%15s", t);
    strcat(got, t);
    strcat(got, " ");
  }
  if (strcmp(got, want) != 0)
    TEST_FAIL_("%s %s: kernel parameters\n  %s\nexpected numba's\n  %s", c->name, c->sig, got,
               want);
}

static void check_case(const corpus_case *c, nbc_abi_t abi, nbc_output_t output) {
  nbc_compile_options_t o = options();
  bool kernel = strcmp(c->kind, "kernel") == 0;
  o.device = !kernel;
  o.abi = kernel ? NBC_ABI_NUMBA : abi;
  o.output = output;
  nbc_compile_result_t *r = NULL;
  if (compile_file(c->file, c->name, c->sig, &o, &r) != NBC_OK)
    TEST_FAIL_("%s %s: %s", c->name, c->sig, nbc_last_error());
  size_t size;
  const char *code = nbc_compile_result_code(r, &size);
  char log[16384];
  if (output == NBC_OUTPUT_PTX) {
    int rc = ptx_check_ptxas(code, size, !kernel, log, sizeof log);
    if (rc < 0) SKIP("ptxas not found");
    if (rc != 0) TEST_FAIL_("%s %s: ptxas failed:\n%s", c->name, c->sig, log);
    if (kernel) {
      ASSERT_CONTAINS(code, ".visible .entry ");
      ASSERT(!strstr(code, "func_retval"));
      check_kernel_params(c, code);
    } else {
      ASSERT_CONTAINS(code, ".visible .func ");
      ASSERT_CONTAINS(code, "func_retval0");
      if (abi == NBC_ABI_NUMBA) ASSERT_CONTAINS(code, "NumbaEnv");
    }
  } else {
    const unsigned char *b = (const unsigned char *)code;
    ASSERT(size > 4 && b[0] == 0xED && b[1] == 0x43 && b[2] == 0x4E && b[3] == 0x7F);
    char *linked = NULL;
    int rc = ptx_check_jitlink(code, size, &linked, log, sizeof log);
    if (rc < 0) SKIP("nvJitLink not found");
    if (rc != 0) TEST_FAIL_("%s %s: nvJitLink failed:\n%s", c->name, c->sig, log);
    if (kernel) {
      char entry[512];
      snprintf(entry, sizeof entry, ".entry %s", nbc_compile_result_symbol(r));
      ASSERT_CONTAINS(linked, entry);
    }
    free(linked);
  }
  nbc_compile_result_destroy(r);
}

static void check_corpus(nbc_abi_t abi, nbc_output_t output) {
  require_nvvm();
  static corpus_case cases[256];
  int n = load_cases(cases, 256);
  if (n < 30) TEST_FAIL_("only %d corpus cases found under tests/corpus", n);
  for (int i = 0; i < n; i++) check_case(&cases[i], abi, output);
}

TEST(corpus_ptx_c_abi) { check_corpus(NBC_ABI_C, NBC_OUTPUT_PTX); }
TEST(corpus_ptx_numba_abi) { check_corpus(NBC_ABI_NUMBA, NBC_OUTPUT_PTX); }
TEST(corpus_ltoir_links) { check_corpus(NBC_ABI_C, NBC_OUTPUT_LTOIR); }

static const char *compile_src(const char *src, const char *name, const char *sig,
                               const nbc_compile_options_t *o, const char *filename,
                               int first_line) {
  nbc_source_t s = {src, 0, filename, first_line, 0};
  nbc_compile_result_t *r = NULL;
  if (nbc_compile(&s, name, sig, o, NULL, &r) != NBC_OK)
    TEST_FAIL_("compile failed: %s", nbc_last_error());
  const char *code = strdup(nbc_compile_result_code(r, NULL));
  nbc_compile_result_destroy(r);
  return code;
}

static const char div_src[] = "import math\n"
                              "def f(a, b):\n"
                              "    return math.sqrt(a / b) + a * b + 1.0\n";

TEST(fastmath_effects) {
  require_nvvm();
  nbc_compile_options_t o = options();
  const char *plain = compile_src(div_src, "f", "float32(float32, float32)", &o, "k.py", 1);
  ASSERT_CONTAINS(plain, "div.rn.f32");
  ASSERT_CONTAINS(plain, "sqrt.rn.f32");
  ASSERT(!strstr(plain, ".ftz"));
  o.fastmath = 1;
  const char *fast = compile_src(div_src, "f", "float32(float32, float32)", &o, "k.py", 1);
  ASSERT_CONTAINS(fast, "div.approx.ftz.f32");
  ASSERT_CONTAINS(fast, "sqrt.approx.ftz.f32");
  ASSERT(!strstr(fast, "div.rn.f32"));
}

/* The NVVM IR nbc_compile would hand to libNVVM. */
static const char *ir_of(const char *src, const char *name, const char *sig,
                         const nbc_compile_options_t *o) {
  nbc_source_t s = {src, 0, "k.py", 1, 0};
  nbc__compile_info info;
  memset(&info, 0, sizeof info);
  info.dump = NBC__DUMP_IR;
  nbc_compile_result_t *r = NULL;
  if (nbc__compile_ex(&s, name, sig, o, NULL, &info, &r) != NBC_OK)
    TEST_FAIL_("compile failed: %s", nbc_last_error());
  const char *code = strdup(nbc_compile_result_code(r, NULL));
  nbc_compile_result_destroy(r);
  return code;
}

static const char kernel_src[] = "def k(a):\n    a[0] = 1.0\n";

/* The result lists the function's variables as typed, parameters first (numba's typemap);
 * a result made from cached code has none. */
TEST(result_variables) {
  require_nvvm();
  nbc_compile_options_t o = options();
  o.device = 0;
  o.abi = NBC_ABI_NUMBA;
  static const char src[] = "from numba import cuda, int32\n"
                            "def k(a, n):\n"
                            "    i = 3\n"
                            "    x = a[i] * 2.0\n"
                            "    l = cuda.local.array(4, int32)\n"
                            "    l[0] = n\n"
                            "    a[0] = x + l[0]\n";
  nbc_source_t s = {src, 0, "k.py", 1, 0};
  nbc_compile_result_t *r = NULL;
  ASSERT_OK(nbc_compile(&s, "k", "void(float32[::1], int32)", &o, NULL, &r));
  const char *want[][2] = {{"a", "array(float32, 1d, C)"}, {"n", "int32"}, {"i", "int64"},
                           {"x", "float64"}, {"l", "array(int32, 1d, C)"}};
  ASSERT_EQ(nbc_compile_result_variable_count(r), 5);
  for (int i = 0; i < 5; i++) {
    const char *type = NULL;
    ASSERT_STREQ(nbc_compile_result_variable(r, i, &type), want[i][0]);
    ASSERT_STREQ(type, want[i][1]);
  }
  ASSERT(nbc_compile_result_variable(r, 5, NULL) == NULL);
  ASSERT(nbc_compile_result_variable(r, -1, NULL) == NULL);
  nbc_compile_result_destroy(r);
  o.output = NBC_OUTPUT_NVVM_IR; /* stopping before libNVVM: typed all the same */
  ASSERT_OK(nbc_compile(&s, "k", "void(float32[::1], int32)", &o, NULL, &r));
  ASSERT_EQ(nbc_compile_result_variable_count(r), 5);
  ASSERT_STREQ(nbc_compile_result_variable(r, 4, NULL), "l");
  nbc_compile_result_t *cached = NULL;
  ASSERT_OK(nbc_compile_result_create("x", 1, "k", "none", &cached));
  ASSERT_EQ(nbc_compile_result_variable_count(cached), 0);
  nbc_compile_result_destroy(cached);
  nbc_compile_result_destroy(r);
  ASSERT_EQ(nbc_compile_result_variable_count(NULL), 0);
}

/* numba's launch_bounds: maxntidx, minctasm, cluster_max_blocks annotations, which libNVVM
 * turns into .maxntid, .minnctapersm and .maxclusterrank (as numba-cuda 0.30's PTX has). */
TEST(launch_bounds) {
  require_nvvm();
  nbc_compile_options_t o = kernel_options();
  const char *plain = compile_src(kernel_src, "k", "void(float32[:])", &o, "k.py", 1);
  ASSERT(!strstr(plain, ".maxntid"));
  o.nlaunch_bounds = 1;
  o.launch_bounds[0] = 256;
  const char *one = compile_src(kernel_src, "k", "void(float32[:])", &o, "k.py", 1);
  ASSERT_CONTAINS(one, ".maxntid 256, 1, 1");
  ASSERT(!strstr(one, ".minnctapersm"));
  o.nlaunch_bounds = 3;
  o.launch_bounds[0] = 128;
  o.launch_bounds[1] = 2;
  o.launch_bounds[2] = 4;
  const char *three = compile_src(kernel_src, "k", "void(float32[:])", &o, "k.py", 1);
  ASSERT_CONTAINS(three, ".maxntid 128, 1, 1");
  ASSERT_CONTAINS(three, ".minnctapersm 2");
  ASSERT_CONTAINS(three, ".maxclusterrank 4");
  const char *ir = ir_of(kernel_src, "k", "void(float32[:])", &o);
  ASSERT_CONTAINS(ir, "!\"maxntidx\", i32 128}");
  ASSERT_CONTAINS(ir, "!\"minctasm\", i32 2}");
  ASSERT_CONTAINS(ir, "!\"cluster_max_blocks\", i32 4}");
  o.nlaunch_bounds = 4;
  nbc_compile_result_t *r = NULL;
  nbc_source_t s = {kernel_src, 0, "k.py", 1, 0};
  ASSERT_STATUS(nbc_compile(&s, "k", "void(float32[:])", &o, NULL, &r), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "Got 4 launch bounds. A maximum of three are supported");
  /* A device function has no launch bounds: ignored, as numba does. */
  nbc_compile_options_t d = options();
  d.nlaunch_bounds = 1;
  d.launch_bounds[0] = 64;
  ASSERT(!strstr(compile_src("def f(x):\n    return x\n", "f", "int32(int32)", &d, "k.py", 1),
                 ".maxntid"));
}

/* numba's forceinline: alwaysinline on the device function, LTO-IR only, never a kernel. */
TEST(forceinline) {
  require_nvvm();
  static const char src[] = "def add(a, b):\n    return a + b\n";
  nbc_compile_options_t o = options();
  o.forceinline = 1;
  o.output = NBC_OUTPUT_LTOIR;
  ASSERT_CONTAINS(ir_of(src, "add", "float32(float32, float32)", &o),
                  "define float @add(float %arg0_0, float %arg1_0) alwaysinline {");
  o.abi = NBC_ABI_NUMBA;
  ASSERT_CONTAINS(ir_of(src, "add", "float32(float32, float32)", &o), ") alwaysinline {");
  nbc_compile_result_t *r = NULL;
  nbc_source_t s = {src, 0, "k.py", 1, 0};
  ASSERT_OK(nbc_compile(&s, "add", "float32(float32, float32)", &o, NULL, &r));
  size_t size = 0;
  ASSERT(nbc_compile_result_code(r, &size) != NULL && size > 0);
  nbc_compile_result_destroy(r);
  o.output = NBC_OUTPUT_PTX;
  ASSERT_STATUS(nbc_compile(&s, "add", "float32(float32, float32)", &o, NULL, &r),
                NBC_INVALID_ARGUMENT);
  ASSERT_STREQ(nbc_last_error(), "Can only designate forced inlining in LTO-IR");
  o.output = NBC_OUTPUT_LTOIR;
  o.device = 0;
  s.text = kernel_src;
  ASSERT_STATUS(nbc_compile(&s, "k", "void(float32[:])", &o, NULL, &r), NBC_INVALID_ARGUMENT);
  ASSERT_STREQ(nbc_last_error(), "Cannot force-inline kernels");
  /* Without it, no alwaysinline. */
  nbc_compile_options_t p = options();
  ASSERT(!strstr(ir_of(src, "add", "float32(float32, float32)", &p), "alwaysinline"));
}

/* A resolver whose `helper` is a function of the same source marked forceinline, as the
 * Python module resolves jit(device=True, forceinline=True). */
static const char inline_src[] = "def helper(x):\n    return x * 2\n"
                                 "def k(r, x):\n    r[0] = helper(x[0])\n";

static int resolve_inline(void *data, const char *name, nbc_global_t *g) {
  if (strcmp(name, "helper") != 0) return 1;
  memset(g, 0, sizeof *g);
  g->kind = NBC_GLOBAL_FUNCTION;
  g->name = "helper";
  g->source = inline_src;
  g->filename = "k.py";
  g->first_line = 1;
  g->forceinline = *(int *)data;
  return 0;
}

TEST(forceinline_callee) {
  require_nvvm();
  nbc_compile_options_t o = kernel_options();
  o.opt = 0; /* libNVVM inlines nothing by itself at -opt=0 */
  for (int marked = 0; marked <= 1; marked++) {
    nbc_resolver_t res = {resolve_inline, &marked};
    nbc_source_t s = {inline_src, 0, "k.py", 1, 0};
    nbc__compile_info info;
    memset(&info, 0, sizeof info);
    info.dump = NBC__DUMP_IR;
    nbc_compile_result_t *r = NULL;
    ASSERT_OK(nbc__compile_ex(&s, "k", "void(float32[:], float32[:])", &o, &res, &info, &r));
    const char *ir = nbc_compile_result_code(r, NULL);
    ASSERT_EQ(strstr(ir, ") alwaysinline {") != NULL, marked);
    nbc_compile_result_destroy(r);
    ASSERT_OK(nbc_compile(&s, "k", "void(float32[:], float32[:])", &o, &res, &r));
    ASSERT_EQ(strstr(nbc_compile_result_code(r, NULL), "call.uni") == NULL, marked);
    nbc_compile_result_destroy(r);
  }
}

/* A resolver answering `mul` as a declared device function (NBC_GLOBAL_DECLARED), as the
 * Python module answers declare_device("mul_f32_f32", "float32(float32, float32)"). */
/* mul: mul_f32_f32, declared with the Numba ABI, or with the C ABI when data is non-NULL. */
static int resolve_declared(void *data, const char *name, nbc_global_t *g) {
  if (strcmp(name, "mul") != 0) return 1;
  memset(g, 0, sizeof *g);
  g->kind = NBC_GLOBAL_DECLARED;
  g->name = "mul_f32_f32";
  g->signature = "float32(float32, float32)";
  g->declared_c_abi = data != NULL;
  return 0;
}

/* Calls use the Numba ABI (status back, result through a pointer), the arguments converted
 * to the declared types; the PTX is relocatable code ptxas takes with -c; the function
 * itself comes from CUDA C++ compiled by NVRTC, which links with it. */
TEST(declared_device_function) {
  require_nvvm();
  static const char src[] = "def k(r, x, i):\n    r[0] = mul(x[0], i) + 1\n";
  nbc_compile_options_t o = kernel_options();
  nbc_resolver_t res = {resolve_declared, NULL};
  nbc_source_t s = {src, 0, "k.py", 1, 0};
  nbc_compile_result_t *r = NULL;
  ASSERT_OK(nbc_compile(&s, "k", "void(float32[:], float32[:], int32)", &o, &res, &r));
  size_t size = 0;
  const char *ptx = nbc_compile_result_code(r, &size);
  ASSERT(strstr(ptx, ".extern .func  (.param .b32 func_retval0) mul_f32_f32") != NULL);
  ASSERT(strstr(ptx, "cvt.rn.f32.s32") != NULL); /* the int32 argument becomes a float32 */
  char log[4096];
  int rc = ptx_check_ptxas(ptx, size, 1, log, sizeof log);
  if (rc > 0) TEST_FAIL_("ptxas -c failed:\n%s", log);
  nbc_compile_result_destroy(r);
  /* the C ABI (numba's abi="c"): `float mul_f32_f32(float, float)`, the value returned */
  nbc_resolver_t cres = {resolve_declared, &o};
  ASSERT_OK(nbc_compile(&s, "k", "void(float32[:], float32[:], int32)", &o, &cres, &r));
  ptx = nbc_compile_result_code(r, &size);
  ASSERT(strstr(ptx, ".extern .func  (.param .b32 func_retval0) mul_f32_f32") != NULL);
  ASSERT(strstr(ptx, "mul_f32_f32_param_2") == NULL); /* two parameters, no result slot */
  rc = ptx_check_ptxas(ptx, size, 1, log, sizeof log);
  if (rc > 0) TEST_FAIL_("ptxas -c failed:\n%s", log);
  nbc_compile_result_destroy(r);
  static const char *const bad[] = {"def k(r, x):\n    r[0] = mul(x[0])\n",
                                    "def k(r, x):\n    r[0] = mul(x, x[0])\n"};
  for (int i = 0; i < 2; i++) {
    nbc_source_t b = {bad[i], 0, "k.py", 1, 0};
    ASSERT_STATUS(nbc_compile(&b, "k", "void(float32[:], float32[:])", &o, &res, &r),
                  NBC_TYPING_ERROR);
  }
  char *code = NULL;
  size_t n = 0;
  nbc_status_t st = nbc_nvrtc_compile("extern \"C\" __device__ int mul_f32_f32(float *r, "
                                      "float a, float b) { *r = a * b; return 0; }\n",
                                      "mul.cu", 9, 0, 0, &code, &n);
  if (st == NBC_NO_NVRTC) SKIP("no NVRTC");
  ASSERT_OK(st);
  ASSERT(n > 0 && strstr(code, ".visible .func") && strstr(code, "mul_f32_f32"));
  /* the same source again comes from the process's cache, a copy the caller frees; another
   * architecture or a changed text is compiled */
  unsigned long compiles = nbc__nvrtc_compiles;
  char *again = NULL;
  size_t n2 = 0;
  ASSERT_OK(nbc_nvrtc_compile("extern \"C\" __device__ int mul_f32_f32(float *r, "
                              "float a, float b) { *r = a * b; return 0; }\n",
                              "mul.cu", 9, 0, 0, &again, &n2));
  ASSERT(nbc__nvrtc_compiles == compiles && again != code && n2 == n &&
         memcmp(again, code, n) == 0);
  free(again);
  ASSERT_OK(nbc_nvrtc_compile("extern \"C\" __device__ int mul_f32_f32(float *r, "
                              "float a, float b) { *r = a * b; return 0; }\n",
                              "mul.cu", 8, 0, 0, &again, &n2));
  ASSERT(nbc__nvrtc_compiles == compiles + 1);
  free(again);
  free(code);
  ASSERT_STATUS(nbc_nvrtc_compile("int broken(", "bad.cu", 9, 0, 0, &code, &n),
                NBC_NVRTC_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "nvrtcCompileProgram of bad.cu failed");
  ASSERT_STATUS(nbc_nvrtc_compile("int broken(", "bad.cu", 9, 0, 0, &code, &n),
                NBC_NVRTC_ERROR); /* failures are not kept: the same error again */
  /* line and debug information on request (numba's compile_all(lineinfo=, debug=)), each a
   * compile of its own; LTO-IR with NBC_NVRTC_LTO; unknown flags refused */
  static const char twice_src[] = "extern \"C\" __device__ int twice(int *r, int a) {\n"
                                  "  *r = 2 * a;\n  return 0;\n}\n";
  ASSERT_OK(nbc_nvrtc_compile(twice_src, "twice.cu", 9, 0, 0, &code, &n));
  ASSERT(strstr(code, ".loc") == NULL);
  free(code);
  ASSERT_OK(nbc_nvrtc_compile(twice_src, "twice.cu", 9, 0, NBC_NVRTC_LINEINFO, &code, &n));
  ASSERT_CONTAINS(code, ".loc");
  ASSERT_CONTAINS(code, "twice.cu");
  free(code);
  ASSERT_OK(nbc_nvrtc_compile(twice_src, "twice.cu", 9, 0, NBC_NVRTC_DEBUG, &code, &n));
  ASSERT_CONTAINS(code, ".debug_info");
  free(code);
  ASSERT_OK(nbc_nvrtc_compile(twice_src, "twice.cu", 9, 0, NBC_NVRTC_LTO | NBC_NVRTC_LINEINFO,
                              &code, &n));
  ASSERT(n > 4 && memcmp(code, "\xed\x43\x4e\x7f", 4) == 0);
  free(code);
  ASSERT_STATUS(nbc_nvrtc_compile(twice_src, "twice.cu", 9, 0, 0x80, &code, &n),
                NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "unknown flags 0x80");
  /* headers found through the extra search paths (numba's CUDA_NVRTC_EXTRA_SEARCH_PATHS, ':'
   * separated, empty entries skipped), which are part of what the cache tells apart */
  char dir[] = "/tmp/nbcuda_inc_XXXXXX";
  ASSERT(mkdtemp(dir));
  char header[64];
  snprintf(header, sizeof header, "%s/three.cuh", dir);
  FILE *f = fopen(header, "w");
  ASSERT(f && fputs("#define THREE 3\n", f) >= 0 && fclose(f) == 0);
  static const char uses[] = "#include <three.cuh>\nextern \"C\" __device__ int thrice(int *r, "
                             "int a) { *r = THREE * a; return 0; }\n";
  ASSERT_STATUS(nbc_nvrtc_compile(uses, "thrice.cu", 9, 0, 0, &code, &n), NBC_NVRTC_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "cannot open source file");
  char paths[128];
  snprintf(paths, sizeof paths, "/nonexistent::%s", dir);
  ASSERT_OK(nbc_nvrtc_compile_searching(uses, "thrice.cu", 9, 0, 0, paths, &code, &n));
  ASSERT_CONTAINS(code, "thrice");
  free(code);
  ASSERT_STATUS(nbc_nvrtc_compile_searching(uses, "thrice.cu", 9, 0, 0, "", &code, &n),
                NBC_NVRTC_ERROR);
  remove(header);
  rmdir(dir);
}

static void write_text(const char *dir, const char *name, const char *text) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  ASSERT(f && fputs(text, f) >= 0 && fclose(f) == 0);
}

/* Without a resolver, the modules of the program are files next to the source (as Python 3
 * finds absolute imports; a package's modules import from the program's root): `import
 * helpers [as h]`, `from helpers import f, C`, `import pkg.ops`, `from pkg import C`, each read
 * when first used; a missing attribute is Python's AttributeError, a source that is not a
 * file ("<string>") imports nothing. */
TEST(program_modules_are_files_next_to_the_source) {
  require_nvvm();
  char dir[] = "/tmp/nbcuda_mods_XXXXXX";
  ASSERT(mkdtemp(dir));
  char sub[64];
  snprintf(sub, sizeof sub, "%s/pkg", dir);
  ASSERT(mkdir(sub, 0700) == 0);
  write_text(dir, "helpers.py", "import math\nSCALE = 2.5\nTABLE = (1, 2, 3)\n"
                                "def scaled(x):\n    return x * SCALE + math.sqrt(x)\n"
                                "def twice(x):\n    return 2 * x\n");
  write_text(dir, "pkg/__init__.py", "OFFSET = 10\n");
  write_text(dir, "pkg/ops.py", "from helpers import twice\n"
                                "def add_offset(x):\n    return twice(x) + 1\n");
  static const char src[] = "import helpers\nimport helpers as h\n"
                            "from helpers import scaled as sc, SCALE\nimport pkg.ops\n"
                            "from pkg import OFFSET\n"
                            "def k(out, x):\n"
                            "    out[0] = helpers.scaled(x[0]) + h.twice(x[0]) + sc(x[0]) * SCALE\n"
                            "    out[1] = helpers.TABLE[1] + pkg.ops.add_offset(x[0]) + OFFSET\n"
                            "def bad(out):\n    out[0] = helpers.nothere(1)\n";
  char path[128];
  snprintf(path, sizeof path, "%s/kern.py", dir);
  nbc_source_t s = {src, 0, path, 1, 0};
  nbc_compile_options_t o = kernel_options();
  nbc_compile_result_t *r =
      compiled_and_assembled(&s, "k", "void(float64[:], float64[:])", &o, "void");
  const char *ptx = nbc_compile_result_code(r, NULL);
  ASSERT_CONTAINS(ptx, "sqrt.rn.f64"); /* helpers' math, its own import */
  nbc_compile_result_destroy(r);
  ASSERT_STATUS(nbc_compile(&s, "bad", "void(float64[:])", &o, NULL, &r), NBC_TYPING_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "AttributeError: module 'helpers' has no attribute "
                                    "'nothere'");
  nbc_source_t nofile = {src, 0, "<string>", 1, 0};
  ASSERT(nbc_compile(&nofile, "k", "void(float64[:], float64[:])", &o, NULL, &r) != NBC_OK);
  static const char *files[] = {"helpers.py", "pkg/__init__.py", "pkg/ops.py"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    remove(path);
  }
  rmdir(sub);
  rmdir(dir);
}

/* A resolver answering LUT as a global array (NBC_GLOBAL_ARRAY), as the Python module
 * answers a numpy array: float32 [1.5, 2.5, 3.5] unless the test changes the description. */
typedef struct {
  const char *dtype;
  size_t bytes;
  int ndim;
} lut_desc;

static int resolve_lut(void *data, const char *name, nbc_global_t *g) {
  static const float lut[3] = {1.5f, 2.5f, 3.5f};
  static const int64_t shape[1] = {3};
  const lut_desc *d = data;
  if (strcmp(name, "LUT") != 0) return 1;
  memset(g, 0, sizeof *g);
  g->kind = NBC_GLOBAL_ARRAY;
  g->name = d->dtype;
  g->array_data = lut;
  g->array_bytes = d->bytes;
  g->array_ndim = d->ndim;
  g->array_shape = shape;
  return 0;
}

/* numba freezes a global array into constant memory: the bytes in `.const _cudapy_cmem`,
 * read with ld.const, the array read-only; descriptions that do not add up are refused. */
TEST(global_array_is_constant_memory) {
  require_nvvm();
  nbc_compile_options_t o = kernel_options();
  static const char src[] = "def k(r, i):\n    r[0] = LUT[i] + LUT.size\n"
                            "def w(r, i):\n    LUT[i] = r[0]\n";
  nbc_source_t s = {src, 0, "k.py", 1, 0};
  lut_desc ok = {"float32", 12, 1};
  nbc_resolver_t res = {resolve_lut, &ok};
  nbc_compile_result_t *r = NULL;
  ASSERT_OK(nbc_compile(&s, "k", "void(float32[::1], int64)", &o, &res, &r));
  size_t size = 0;
  const char *ptx = nbc_compile_result_code(r, &size);
  ASSERT(strstr(ptx, ".const .align 4 .b8 _cudapy_cmem[12] = {0, 0, 192, 63, 0, 0, 32, 64, "
                     "0, 0, 96, 64};"));
  ASSERT(strstr(ptx, "ld.const.f32"));
  char log[4096];
  int rc = ptx_check_ptxas(ptx, size, 0, log, sizeof log);
  if (rc != 0) TEST_FAIL_("ptxas refused the PTX: %s", log);
  nbc_compile_result_destroy(r);
  ASSERT(nbc_compile(&s, "w", "void(float32[::1], int64)", &o, &res, &r) != NBC_OK);
  ASSERT(strstr(nbc_last_error(), "cannot modify a read-only array"));
  static const struct {
    lut_desc desc;
    const char *message;
  } bad[] = {{{"float64", 12, 1}, "12 bytes do not make its shape of float64"},
             {{"float32", 8, 1}, "8 bytes do not make its shape of float32"},
             {{"object", 12, 1}, "of dtype object is not supported"},
             {{"float32", 12, 0}, "12 bytes do not make its shape of float32"}, /* 0-d */
             {{"float32", 12, 33}, "has no elements or shape"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    nbc_resolver_t b = {resolve_lut, (void *)&bad[i].desc};
    nbc_status_t st = nbc_compile(&s, "k", "void(float32[::1], int64)", &o, &b, &r);
    ASSERT(st != NBC_OK);
    if (!strstr(nbc_last_error(), bad[i].message))
      TEST_FAIL_("case %zu: %s", i, nbc_last_error());
  }
}

/* A resolver with a Python module: `helpers` is NBC_GLOBAL_MODULE, and the compiler asks for
 * its attributes as "helpers.K" (an int), "helpers.sub" (a module in it) and "helpers.sub.F"
 * (a float); anything else is unknown. */
static int resolve_module(void *data, const char *name, nbc_global_t *g) {
  int *asked = data;
  memset(g, 0, sizeof *g);
  if (strcmp(name, "helpers") == 0 || strcmp(name, "helpers.sub") == 0) {
    g->kind = NBC_GLOBAL_MODULE;
    g->name = name;
  } else if (strcmp(name, "helpers.K") == 0) {
    g->kind = NBC_GLOBAL_INT;
    g->value.i = 40;
  } else if (strcmp(name, "helpers.sub.F") == 0) {
    g->kind = NBC_GLOBAL_FLOAT;
    g->value.f = 2.5;
  } else {
    return 1;
  }
  (*asked)++;
  return 0;
}

/* `mod.attr` of an NBC_GLOBAL_MODULE is the global "mod.attr", nested modules included; an
 * attribute the resolver does not know is Python's AttributeError. */
TEST(module_attributes_are_dotted_globals) {
  require_nvvm();
  nbc_compile_options_t o = kernel_options();
  static const char src[] = "def k(r):\n    r[0] = helpers.K + helpers.sub.F\n"
                            "def bad(r):\n    r[0] = helpers.sub.G\n";
  nbc_source_t s = {src, 0, "k.py", 1, 0};
  int asked = 0;
  nbc_resolver_t res = {resolve_module, &asked};
  nbc_compile_result_t *r = NULL;
  ASSERT_OK(nbc_compile(&s, "k", "void(float64[::1])", &o, &res, &r));
  ASSERT(asked >= 4);
  size_t size = 0;
  const char *ptx = nbc_compile_result_code(r, &size);
  if (!strstr(ptx, "4631178160564600832") && !strstr(ptx, "0d4045400000000000"))
    TEST_FAIL_("42.5 is not stored: %s", ptx); /* folded, stored as bits or a double */
  nbc_compile_result_destroy(r);
  ASSERT(nbc_compile(&s, "bad", "void(float64[::1])", &o, &res, &r) != NBC_OK);
  ASSERT_STREQ(nbc_last_error(), "k.py:4:24: error: AttributeError: module 'helpers.sub' has "
                                 "no attribute 'G'\n    r[0] = helpers.sub.G\n"
                                 "                       ^");
}

/* nbc_compile_result_create: a result from code compiled earlier (jit(cache=True)'s copy),
 * everything copied, the log empty; missing parts are refused. */
TEST(result_from_cached_code) {
  char code[] = "// ptx\n.version 8.0\n";
  nbc_compile_result_t *r = NULL;
  ASSERT_OK(nbc_compile_result_create(code, sizeof code - 1, "_Z1kv", "none", &r));
  code[0] = 'X'; /* copied: the caller's buffer may change */
  size_t size = 0;
  ASSERT_STREQ(nbc_compile_result_code(r, &size), "// ptx\n.version 8.0\n");
  ASSERT_EQ(size, sizeof code - 1);
  ASSERT_STREQ(nbc_compile_result_symbol(r), "_Z1kv");
  ASSERT_STREQ(nbc_compile_result_return_type(r), "none");
  ASSERT_STREQ(nbc_compile_result_log(r), "");
  nbc_compile_result_destroy(r);
  ASSERT_STATUS(nbc_compile_result_create(NULL, 4, "k", "none", &r), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_compile_result_create(code, 4, NULL, "none", &r), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_compile_result_create(code, 4, "k", "none", NULL), NBC_INVALID_ARGUMENT);
}

/* The same through the file's own resolver (the CLI, nbc_compile without a resolver): a
 * helper decorated jit(device=True, forceinline=True) in the file is emitted alwaysinline,
 * so at -opt=0 no call remains; without the keyword the call stays. */
TEST(forceinline_decorator_in_file) {
  require_nvvm();
  nbc_compile_options_t o = kernel_options();
  o.opt = 0;
  static const struct {
    const char *decorator;
    int inlined;
  } cases[] = {{"@cuda.jit(device=True)", 0},
               {"@cuda.jit(device=True, forceinline=True)", 1},
               {"@jit(device=True, forceinline=True)", 1},
               {"@cuda.jit(device=True, inline='always')", 1}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char src[512];
    snprintf(src, sizeof src,
             "from numba import cuda, jit\n"
             "%s\n"
             "def helper(x):\n    return x * 2\n"
             "@cuda.jit\n"
             "def k(r, x):\n    r[0] = helper(x[0])\n",
             cases[i].decorator);
    nbc_source_t s = {src, 0, "k.py", 1, 0};
    nbc__compile_info info;
    memset(&info, 0, sizeof info);
    info.dump = NBC__DUMP_IR;
    nbc_compile_result_t *r = NULL;
    ASSERT_OK(nbc__compile_ex(&s, "k", "void(float32[:], float32[:])", &o, NULL, &info, &r));
    const char *ir = nbc_compile_result_code(r, NULL);
    if ((strstr(ir, ") alwaysinline {") != NULL) != cases[i].inlined)
      TEST_FAIL_("%s: alwaysinline %s in the IR", cases[i].decorator,
                 cases[i].inlined ? "missing" : "unexpected");
    nbc_compile_result_destroy(r);
    ASSERT_OK(nbc_compile(&s, "k", "void(float32[:], float32[:])", &o, NULL, &r));
    const char *ptx = nbc_compile_result_code(r, NULL);
    if ((strstr(ptx, "call.uni") == NULL) != cases[i].inlined)
      TEST_FAIL_("%s: the PTX %s a call", cases[i].decorator,
                 cases[i].inlined ? "still has" : "has no");
    nbc_compile_result_destroy(r);
  }
}

TEST(lineinfo_effects) {
  require_nvvm();
  nbc_compile_options_t o = options();
  const char *plain = compile_src(div_src, "f", "float32(float32, float32)", &o, "/src/k.py", 1);
  ASSERT(!strstr(plain, ".loc"));
  o.lineinfo = 1;
  /* The function starts at line 41 of the real file: .loc lines name real lines. */
  const char *li = compile_src(div_src, "f", "float32(float32, float32)", &o, "/src/k.py", 40);
  ASSERT_CONTAINS(li, ".file\t1 \"/src/k.py\"");
  ASSERT_CONTAINS(li, ".loc\t1 42 ");
  o.lineinfo = 0;
  o.debug = 1;
  const char *dbg = compile_src(div_src, "f", "float32(float32, float32)", &o, "/src/k.py", 1);
  ASSERT_CONTAINS(dbg, ".loc\t1 3 ");
  ASSERT_CONTAINS(dbg, ".target sm_90, debug");
}

TEST(abi_name_and_symbols) {
  require_nvvm();
  const char *src = "def add(a, b):\n    return a + b\n";
  nbc_compile_options_t o = options();
  o.abi_name = "my_add";
  nbc_source_t s = {src, 0, "m.py", 1, 0};
  nbc_compile_result_t *r = NULL;
  ASSERT_OK(nbc_compile(&s, "add", "float64(float64, float64)", &o, NULL, &r));
  const char *ptx = nbc_compile_result_code(r, NULL);
  ASSERT_CONTAINS(ptx, ".visible .func  (.param .b64 func_retval0) my_add(");
  ASSERT_STREQ(nbc_compile_result_symbol(r), "my_add");
  ASSERT_STREQ(nbc_compile_result_return_type(r), "float64");
  nbc_compile_result_destroy(r);
  o.abi_name = NULL;
  ASSERT_OK(nbc_compile(&s, "add", "(int32, int32)", &o, NULL, &r));
  ASSERT_STREQ(nbc_compile_result_symbol(r), "add");
  ASSERT_STREQ(nbc_compile_result_return_type(r), "int64");
  nbc_compile_result_destroy(r);
  o.abi = NBC_ABI_NUMBA;
  ASSERT_OK(nbc_compile(&s, "add", "(int32, int32)", &o, NULL, &r));
  ASSERT(strncmp(nbc_compile_result_symbol(r), "_ZN", 3) == 0);
  ASSERT_CONTAINS(nbc_compile_result_code(r, NULL), "NumbaEnv");
  nbc_compile_result_destroy(r);
}

/* abi_name is written into the IR as it is: only a C ABI name passes (a quote and a newline
 * would close the function and add others of the caller's choosing), refused before any
 * compile, whoever calls (the CLI's --abi-name, Python's abi_info). */
TEST(abi_name_must_be_an_identifier) {
  const char *src = "def add(a, b):\n    return a + b\n";
  nbc_compile_options_t o = options();
  o.output = NBC_OUTPUT_NVVM_IR;
  nbc_source_t s = {src, 0, "m.py", 1, 0};
  nbc_compile_result_t *r = NULL;
  static const char *const bad[][2] = {
      {"x\"() {\n  ret void\n}\ndefine void @evil", "'x\"() {\\x0a  ret void\\x0a}\\x0adefine "
                                                  "void @evil'"},
      {"1st", "'1st'"}, {"a-b", "'a-b'"}, {"a.b", "'a.b'"}, {"caf\xc3\xa9", "'caf\\xc3\\xa9'"},
      {"a b", "'a b'"}, {"it's", "'it\\'s'"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    o.abi_name = bad[i][0];
    ASSERT_STATUS(nbc_compile(&s, "add", "float64(float64, float64)", &o, NULL, &r),
                  NBC_INVALID_ARGUMENT);
    ASSERT(r == NULL);
    char want[256];
    snprintf(want, sizeof want, "invalid abi_name %s: a C ABI name is a letter or '_' followed "
             "by letters, digits, '_' or '$'", bad[i][1]);
    ASSERT_STREQ(nbc_last_error(), want);
  }
  static const char *const good[] = {"my_add", "_f", "f$2", "A1"};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    o.abi_name = good[i];
    ASSERT_OK(nbc_compile(&s, "add", "float64(float64, float64)", &o, NULL, &r));
    ASSERT_STREQ(nbc_compile_result_symbol(r), good[i]);
    nbc_compile_result_destroy(r);
  }
}

/* A name bound to something other than a plain def says what it is, at its statement. */
TEST(non_function_names_say_what_they_are) {
  static const char *const cases[][2] = {
      {"async def f(x):\n    pass\n",
       "m.py:1:1: error: 'f' is an async function; only functions defined with a plain def can "
       "be compiled\nasync def f(x):\n^"},
      {"import math\nf = lambda x: x\n",
       "m.py:2:1: error: 'f' is a lambda; only functions defined with a plain def can be "
       "compiled\nf = lambda x: x\n^"},
      {"class f:\n    pass\n",
       "m.py:1:1: error: 'f' is a class; only functions defined with a plain def can be "
       "compiled\nclass f:\n^"},
      {"f = 3\n",
       "m.py:1:1: error: 'f' is a variable; only functions defined with a plain def can be "
       "compiled\nf = 3\n^"},
      {"def f(x):\n    pass\n\nasync def f(x):\n    pass\n",
       "m.py:4:1: error: 'f' is an async function; only functions defined with a plain def can "
       "be compiled\nasync def f(x):\n^"}};
  nbc_compile_options_t o = options();
  o.output = NBC_OUTPUT_NVVM_IR;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    nbc_source_t s = {cases[i][0], 0, "m.py", 1, 0};
    nbc_compile_result_t *r = NULL;
    ASSERT_STATUS(nbc_compile(&s, "f", "(int64,)", &o, NULL, &r), NBC_INVALID_ARGUMENT);
    ASSERT_STREQ(nbc_last_error(), cases[i][1]);
  }
  /* a def after the others is the function, and stays one when wrapped */
  nbc_source_t s = {"class f:\n    pass\n\ndef f(x):\n    return x\n\nf = g(f)\n", 0, "m.py",
                    1, 0};
  nbc_compile_result_t *r = NULL;
  ASSERT_OK(nbc_compile(&s, "f", "(int64,)", &o, NULL, &r));
  nbc_compile_result_destroy(r);
}

/* The source is refused beyond max_source_size (or $NBCUDA_MAX_SOURCE_SIZE), before it is
 * copied or lexed. */
TEST(source_size_is_capped) {
  nbc_compile_options_t o = options();
  o.output = NBC_OUTPUT_NVVM_IR;
  o.max_source_size = 16;
  nbc_source_t s = {"def f(x):\n    return x\n", 0, "m.py", 1, 0};
  nbc_compile_result_t *r = NULL;
  ASSERT_STATUS(nbc_compile(&s, "f", "(int64,)", &o, NULL, &r), NBC_INVALID_ARGUMENT);
  ASSERT_STREQ(nbc_last_error(), "m.py: the source is 23 bytes, more than the limit of 16 "
                                 "(raise it with max_source_size, NBCUDA_MAX_SOURCE_SIZE or "
                                 "--max-source-size)");
  o.max_source_size = 0;
  setenv("NBCUDA_MAX_SOURCE_SIZE", "20", 1);
  ASSERT_EQ(nbc_compile_max_source_size(&o), (size_t)20);
  ASSERT_STATUS(nbc_compile(&s, "f", "(int64,)", &o, NULL, &r), NBC_INVALID_ARGUMENT);
  unsetenv("NBCUDA_MAX_SOURCE_SIZE");
  ASSERT_EQ(nbc_compile_max_source_size(NULL), NBC_DEFAULT_MAX_SOURCE_SIZE);
  o.max_source_size = 23;
  ASSERT_OK(nbc_compile(&s, "f", "(int64,)", &o, NULL, &r));
  nbc_compile_result_destroy(r);
}

/* NBC_OUTPUT_NVVM_IR: the IR libNVVM would be given, with the symbol and return type of a
 * compiled result; libNVVM is not needed for it, and the same IR compiled gives the PTX. */
TEST(nvvm_ir_output) {
  const char *src = "def add(a, b):\n    return a + b\n";
  nbc_compile_options_t o = options();
  o.output = NBC_OUTPUT_NVVM_IR;
  nbc_source_t s = {src, 0, "m.py", 1, 0};
  nbc_compile_result_t *r = NULL;
  ASSERT_OK(nbc_compile(&s, "add", "float64(float64, float64)", &o, NULL, &r));
  size_t size = 0;
  const char *ir = nbc_compile_result_code(r, &size);
  ASSERT(size == strlen(ir));
  ASSERT_CONTAINS(ir, "target triple = \"nvptx64-nvidia-cuda\"");
  ASSERT_CONTAINS(ir, "define");
  ASSERT_CONTAINS(ir, "fadd double");
  ASSERT_CONTAINS(ir, "!nvvmir.version");
  ASSERT_STREQ(nbc_compile_result_symbol(r), "add");
  ASSERT_STREQ(nbc_compile_result_return_type(r), "float64");
  ASSERT(!nbc_compile_result_cooperative(r));
  nbc_compile_result_destroy(r);
  o.output = (nbc_output_t)3;
  ASSERT_STATUS(nbc_compile(&s, "add", "float64(float64, float64)", &o, NULL, &r),
                NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "Unsupported output type: 3");
}

/* Grid synchronisation: the result says it needs cudadevrt and a cooperative launch, also
 * when it is made again from the code (a cache's copy). */
/* keep_ir: the result of a compile to PTX also holds the IR libNVVM compiled (numba's
 * DUMP_LLVM), the same text an NBC_OUTPUT_NVVM_IR compile gives; without it, none. */
TEST(kept_ir_is_the_compiled_ir) {
  require_nvvm();
  const char *src = "def add(a, b):\n    return a + b\n";
  nbc_compile_options_t o = options();
  nbc_source_t s = {src, 0, "m.py", 1, 0};
  nbc_compile_result_t *plain = NULL, *kept = NULL, *ir_only = NULL;
  ASSERT_OK(nbc_compile(&s, "add", "float64(float64, float64)", &o, NULL, &plain));
  size_t size = 1;
  ASSERT(nbc_compile_result_ir(plain, &size) == NULL && size == 0);
  o.keep_ir = 1;
  ASSERT_OK(nbc_compile(&s, "add", "float64(float64, float64)", &o, NULL, &kept));
  ASSERT_CONTAINS(nbc_compile_result_code(kept, NULL), ".visible .func");
  ASSERT_STREQ(nbc_compile_result_code(kept, NULL), nbc_compile_result_code(plain, NULL));
  o.keep_ir = 0;
  o.output = NBC_OUTPUT_NVVM_IR;
  ASSERT_OK(nbc_compile(&s, "add", "float64(float64, float64)", &o, NULL, &ir_only));
  const char *ir = nbc_compile_result_ir(kept, &size);
  ASSERT(ir && size == strlen(ir));
  ASSERT_STREQ(ir, nbc_compile_result_code(ir_only, NULL));
  ASSERT(nbc_compile_result_ir(NULL, &size) == NULL && size == 0);
  nbc_compile_result_destroy(plain);
  nbc_compile_result_destroy(kept);
  nbc_compile_result_destroy(ir_only);
}

TEST(grid_sync_result_is_cooperative) {
  require_nvvm();
  nbc_compile_options_t o = kernel_options();
  const char *grid_src = "from numba import cuda\n"
                         "def k(a):\n    g = cuda.cg.this_grid()\n    a[0] = g.sync()\n";
  nbc_source_t gs = {grid_src, 0, "g.py", 1, 0};
  nbc_compile_result_t *r = NULL;
  ASSERT_OK(nbc_compile(&gs, "k", "void(int32[::1])", &o, NULL, &r));
  ASSERT(nbc_compile_result_cooperative(r));
  size_t psize = 0;
  const char *code = nbc_compile_result_code(r, &psize);
  ASSERT_CONTAINS(code, "cudaCGSynchronize");
  nbc_compile_result_t *copy = NULL;
  ASSERT_OK(nbc_compile_result_create(code, psize, nbc_compile_result_symbol(r), "none", &copy));
  ASSERT(nbc_compile_result_cooperative(copy));
  nbc_compile_result_destroy(copy);
  nbc_compile_result_destroy(r);
  ASSERT(!nbc_compile_result_cooperative(NULL));
  const char *plain = "def k(a):\n    a[0] = 1\n";
  nbc_source_t ps = {plain, 0, "p.py", 1, 0};
  ASSERT_OK(nbc_compile(&ps, "k", "void(int32[::1])", &o, NULL, &r));
  ASSERT(!nbc_compile_result_cooperative(r));
  nbc_compile_result_destroy(r);
}

/* numba.cuda.fp16: calls of the Numba-ABI wrappers, which the shim defines once each and
 * NVRTC compiles (when the toolkit has NVRTC). */
TEST(fp16_functions_use_the_shim) {
  require_nvvm();
  nbc_compile_options_t o = options();
  const char *src = "from numba import cuda\n"
                    "def f(a, b):\n    return cuda.fp16.hfma(a, b, cuda.fp16.hsqrt(a))\n";
  nbc_source_t s = {src, 0, "h.py", 1, 0};
  nbc_compile_result_t *r = NULL;
  ASSERT_OK(nbc_compile(&s, "f", "float16(float16, float16)", &o, NULL, &r));
  ASSERT(nbc_compile_result_uses_fp16(r));
  ASSERT(!nbc_compile_result_cooperative(r));
  ASSERT_CONTAINS(nbc_compile_result_code(r, NULL), "nbc_fp16___hfma");
  ASSERT_CONTAINS(nbc_compile_result_code(r, NULL), "nbc_fp16_hsqrt");
  nbc_compile_result_destroy(r);
  const char *shim = nbc_fp16_shim_source();
  ASSERT(shim != NULL);
  ASSERT(shim == nbc_fp16_shim_source()); /* made once */
  ASSERT_CONTAINS(shim, "#include <cuda_fp16.h>");
  ASSERT_CONTAINS(shim, "extern \"C\" __device__ int nbc_fp16___hadd(unsigned short *ret, "
                        "unsigned short a0, unsigned short a1) {");
  const char *first = strstr(shim, "nbc_fp16___hadd(");
  ASSERT(first && !strstr(first + 1, "nbc_fp16___hadd(")); /* hadd and __hadd: one wrapper */
  ASSERT_CONTAINS(shim, "*ret = (unsigned char)(__heq(__ushort_as_half(a0), "
                        "__ushort_as_half(a1)));");
  struct stat st;
  if (stat("/usr/local/cuda/lib64/libnvrtc.so.13", &st) != 0) return;
  char *code = NULL;
  size_t size = 0;
  ASSERT_OK(nbc_nvrtc_compile(shim, "nbcuda_fp16.cu", 9, 0, 0, &code, &size));
  ASSERT_CONTAINS(code, ".visible .func  (.param .b32 func_retval0) nbc_fp16___hadd(");
  free(code);
}

/* cmath through the embedded port of numba's cmathimpl.py (source-level imports: the CLI path),
 * and complex arguments of device functions (two parameters each, as definitions take them). */
TEST(cmath_and_complex_arguments) {
  require_nvvm();
  nbc_compile_options_t o = options();
  static const struct {
    const char *src, *sig, *ret;
  } cases[] = {
      {"import cmath\ndef f(z):\n    return cmath.sqrt(z)\n", "(complex64,)", "complex64"},
      {"import cmath\ndef f(z):\n    return cmath.exp(z)\n", "(float64,)", "complex128"},
      {"from cmath import polar\ndef f(z):\n    return polar(z)\n", "(complex128,)",
       "UniTuple(float64 x 2)"},
      {"import cmath\ndef f(z):\n    return cmath.isnan(z)\n", "(complex64,)", "bool"},
      {"def g(z):\n    return z * 2\ndef f(z):\n    return g(z)\n", "(complex64,)",
       "complex128"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    nbc_source_t s = {cases[i].src, 0, "c.py", 1, 0};
    nbc_compile_result_t *r = NULL;
    ASSERT_OK(nbc_compile(&s, "f", cases[i].sig, &o, NULL, &r));
    ASSERT_STREQ(nbc_compile_result_return_type(r), cases[i].ret);
    size_t size = 0;
    const char *ptx = nbc_compile_result_code(r, &size);
    char log[4096];
    int rc = ptx_check_ptxas(ptx, size, 1, log, sizeof log);
    if (rc > 0) TEST_FAIL_("ptxas rejected case %zu:\n%s", i, log);
    nbc_compile_result_destroy(r);
  }
  nbc_source_t bad = {"import cmath\ndef f(z):\n    return cmath.cosh(z)\n", 0, "b.py", 1, 0};
  nbc_compile_result_t *r = NULL;
  ASSERT_STATUS(nbc_compile(&bad, "f", "(float64,)", &o, NULL, &r), NBC_TYPING_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "cmath.cosh");
}

/* The operator module through source-level imports (the CLI path): each function is its
 * operator, typed as numba types the operator. */
TEST(operator_module) {
  require_nvvm();
  nbc_compile_options_t o = options();
  static const struct {
    const char *src, *sig, *ret;
  } cases[] = {
      {"import operator\ndef f(a, b):\n    return operator.add(a, b)\n", "(int32, float32)",
       "float64"},
      {"import operator as op\ndef f(a, b):\n    return op.truediv(a, b)\n", "(int32, int32)",
       "float64"},
      {"from operator import lt, not_\ndef f(a, b):\n    return not_(lt(a, b))\n",
       "(int64, float64)", "bool"},
      {"from operator import getitem, neg\ndef f(a, i):\n    return neg(getitem(a, i))\n",
       "(float32[::1], int64)", "float32"},
      {"from operator import truth\ndef f(a):\n    return truth(a)\n", "(boolean,)", "bool"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    nbc_source_t s = {cases[i].src, 0, "o.py", 1, 0};
    nbc_compile_result_t *r = NULL;
    ASSERT_OK(nbc_compile(&s, "f", cases[i].sig, &o, NULL, &r));
    ASSERT_STREQ(nbc_compile_result_return_type(r), cases[i].ret);
    nbc_compile_result_destroy(r);
  }
  /* operator.setitem(a, i, v) is the store a[i] = v; the call is None */
  nbc_source_t set = {"import operator\ndef f(a):\n    return operator.setitem(a, 0, 1)\n", 0,
                      "b.py", 1, 0};
  nbc_compile_result_t *r = NULL;
  ASSERT_OK(nbc_compile(&set, "f", "(float64[::1],)", &o, NULL, &r));
  ASSERT_STREQ(nbc_compile_result_return_type(r), "none");
  nbc_compile_result_destroy(r);
  nbc_source_t bad = {"import operator\ndef f(a):\n    return operator.delitem(a, 0)\n", 0,
                      "b.py", 1, 0};
  ASSERT_STATUS(nbc_compile(&bad, "f", "(float64[::1],)", &o, NULL, &r), NBC_UNSUPPORTED);
  ASSERT_CONTAINS(nbc_last_error(), "operator.delitem");
}

/* Nested functions and lambdas are lifted out of the function that defines them (closure.c):
 * device functions named after Python's __qualname__, the captured variables their first
 * parameters; keywords and defaults bind as in Python. */
TEST(nested_functions_and_defaults) {
  require_nvvm();
  nbc_compile_options_t o = options();
  o.abi = NBC_ABI_NUMBA;
  static const char src[] = "def helper(x, y=2, z=-1.5):\n"
                            "    return x * y + z\n"
                            "def f(a, b):\n"
                            "    n = 3\n"
                            "    def inner(v, w=1):\n"
                            "        return v + w + n + helper(b, z=0.5)\n"
                            "    sq = lambda v: v * v\n"
                            "    n = 4\n"
                            "    return inner(a, w=2) + sq(b)\n";
  const char *ir = ir_of(src, "f", "float64(float64, int32)", &o);
  ASSERT_CONTAINS(ir, "f_2e_3clocals_3e_2einner");
  ASSERT_CONTAINS(ir, "f_2e_3clocals_3e_2esq");
  free((void *)ir);
  const char *ptx = compile_src(src, "f", "float64(float64, int32)", &o, "n.py", 1);
  char log[8192];
  int rc = ptx_check_ptxas(ptx, strlen(ptx), 0, log, sizeof log);
  free((void *)ptx);
  if (rc > 0) TEST_FAIL_("ptxas: %s", log);
  static const struct {
    const char *src, *error;
  } bad[] = {
      {"def f(a):\n    def g(v):\n        return v + a\n    h = g\n    return h(a)\n",
       "n.py:4:9: error: Cannot capture the non-constant value associated with variable 'a' "
       "in a function that may escape."},
      {"def f(a):\n    return (lambda v: v)(a)\n",
       "n.py:2:13: error: a lambda can only be assigned to a name and called"},
      {"def g(a, b):\n    return a\ndef f(a):\n    return g(a, a, b=1)\n",
       "n.py:4:20: error: g() got multiple values for argument 'b'"},
      {"def g(a, b):\n    return a\ndef f(a):\n    return g(b=a)\n",
       "n.py:4:12: error: g() missing 1 required positional argument: 'a'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    nbc_source_t s = {bad[i].src, 0, "n.py", 1, 0};
    nbc_compile_result_t *r = NULL;
    ASSERT(nbc_compile(&s, "f", "(float64,)", &o, NULL, &r) != NBC_OK);
    ASSERT_CONTAINS(nbc_last_error(), bad[i].error);
  }
}

/* CUDA vector types: constructors from numbers and smaller vectors, members, device function
 * arguments and results (one parameter per member); the PTX assembles. */
TEST(vector_types) {
  require_nvvm();
  nbc_compile_options_t o = options();
  const char *src = "from numba import cuda\n"
                    "def use(v):\n    return v.x + v.y * v.z - v.w\n"
                    "def mk(a, b):\n    return cuda.float32x4(a, b, 3, 4.5)\n"
                    "def f(a, b):\n"
                    "    q = cuda.float4(cuda.float32x2(a, b), cuda.float32x2(b, a))\n"
                    "    return use(q) + cuda.int3(1, 2, 3).z + mk(a, b).w\n";
  nbc_source_t s = {src, 0, "v.py", 1, 0};
  nbc_compile_result_t *r = NULL;
  ASSERT_OK(nbc_compile(&s, "mk", "(float32, float32)", &o, NULL, &r));
  ASSERT_STREQ(nbc_compile_result_return_type(r), "float32x4");
  nbc_compile_result_destroy(r);
  nbc_compile_result_destroy(compiled_and_assembled(&s, "f", "(float32, float32)", &o,
                                                    "float64"));
  nbc_source_t bad = {"from numba import cuda\ndef f(a):\n    return cuda.float2(a)\n", 0,
                      "b.py", 1, 0};
  ASSERT_STATUS(nbc_compile(&bad, "f", "(float32,)", &o, NULL, &r), NBC_TYPING_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "float2");
}

TEST(bool_return_c_abi) {
  require_nvvm();
  nbc_compile_options_t o = options();
  const char *ptx = compile_src("def lt(a, b):\n    return a < b\n", "lt", "(float64, float64)",
                                &o, "b.py", 1);
  /* A boolean is returned as an i8, widened to .b32 in PTX. */
  ASSERT_CONTAINS(ptx, "(.param .b32 func_retval0) lt(");
}

/* Booleans inside returned tuples are i8 in memory and in the C ABI, i1 in registers: the
 * value must be converted on return, store and load (libNVVM refused the IR before). */
TEST(bool_in_returned_tuple) {
  require_nvvm();
  static const char src[] = "def pair(a, b):\n"
                            "    return (a < b, a + b)\n"
                            "def user(a, b):\n"
                            "    t = pair(a, b)\n"
                            "    return t[1] if t[0] else -t[1]\n";
  nbc_compile_options_t o = options();
  for (int abi = 0; abi < 2; abi++) {
    o.abi = abi ? NBC_ABI_NUMBA : NBC_ABI_C;
    const char *names[] = {"pair", "user"};
    for (int k = 0; k < 2; k++) {
      const char *ptx = compile_src(src, names[k], "(int64, int64)", &o, "t.py", 1);
      char log[4096];
      int rc = ptx_check_ptxas(ptx, strlen(ptx), 1, log, sizeof log);
      if (rc != 0) TEST_FAIL_("ptxas rejected %s (abi %d):\n%s", names[k], abi, log);
    }
  }
}

TEST(kernel_and_device_calls) {
  require_nvvm();
  const char *src = "import math\n"
                    "from numba import cuda\n"
                    "@cuda.jit(device=True)\n"
                    "def sq(v):\n"
                    "    return v * v\n"
                    "def k(out, x):\n"
                    "    i = cuda.grid(1)\n"
                    "    if i < x.size:\n"
                    "        out[i] = sq(x[i]) + sq(i)\n";
  nbc_compile_options_t o = kernel_options();
  const char *ptx = compile_src(src, "k", "void(float64[:], float64[:])", &o, "c.py", 1);
  ASSERT_CONTAINS(ptx, ".visible .entry _ZN");
  ASSERT(!strstr(ptx, "func_retval"));
  char log[8192];
  int rc = ptx_check_ptxas(ptx, strlen(ptx), 0, log, sizeof log);
  if (rc > 0) TEST_FAIL_("ptxas: %s", log);
}

TEST(errors_are_reported) {
  require_nvvm();
  nbc_compile_options_t o = options();
  nbc_compile_result_t *r = (nbc_compile_result_t *)1;
  nbc_source_t bad = {"def f(a):\n    return a +\n", 0, "bad.py", 10, 0};
  nbc_status_t st = nbc_compile(&bad, "f", "(int64,)", &o, NULL, &r);
  ASSERT(st != NBC_OK);
  ASSERT(r == NULL);
  ASSERT_CONTAINS(nbc_last_error(), "bad.py:11:");
  ASSERT_CONTAINS(nbc_last_error(), "error: ");

  nbc_source_t ok = {"def f(a):\n    return a\n", 0, "ok.py", 1, 0};
  ASSERT_STATUS(nbc_compile(&ok, "g", "(int64,)", &o, NULL, &r), NBC_INVALID_ARGUMENT);
  ASSERT_STREQ(nbc_last_error(), "ok.py: error: no function named 'g'");

  o.device = 0; /* the C ABI is for device functions only */
  ASSERT_STATUS(nbc_compile(&ok, "f", "(int64,)", &o, NULL, &r), NBC_INVALID_ARGUMENT);
  ASSERT_STREQ(nbc_last_error(), "The C ABI is not supported for kernels");
  o.abi = NBC_ABI_NUMBA;
  st = nbc_compile(&ok, "f", "(int64,)", &o, NULL, &r);
  ASSERT(st != NBC_OK);
  ASSERT_CONTAINS(nbc_last_error(), "CUDA kernel must have void return type.");
  ASSERT_EQ(nbc_last_error_kind(), NBC_ERROR_KIND_KERNEL_RETURN);

  o = options();
  o.cc_major = 5;
  o.cc_minor = 0;
  ASSERT_STATUS(nbc_compile(&ok, "f", "(int64,)", &o, NULL, &r), NBC_UNSUPPORTED_CC);
  ASSERT_STREQ(nbc_last_error(), "GPU compute capability 5.0 is not supported (requires >=7.5)");
  ASSERT_STATUS(nbc_compile(NULL, "f", "(int64,)", &o, NULL, &r), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_compile(&ok, "f", NULL, &o, NULL, &r), NBC_INVALID_ARGUMENT);
}

/* A failure carries its kind beside its status (what numba raises it as), handed from the
 * compile's own thread to the caller's; the next failure resets it. */
TEST(error_kinds) {
  ASSERT_STREQ(nbc_error_kind_name(NBC_ERROR_KIND_VALUE), "NBC_ERROR_KIND_VALUE");
  ASSERT_STREQ(nbc_error_kind_name((nbc_error_kind_t)99), "NBC_ERROR_KIND_UNKNOWN");
  nbc_compile_options_t o = options();
  o.output = NBC_OUTPUT_NVVM_IR;
  o.device = 0;
  o.abi = NBC_ABI_NUMBA;
  nbc_compile_result_t *r = NULL;
  nbc_source_t zero = {"from numba import cuda, int32\n"
                       "def k(a):\n    x = cuda.local.array(0, int32)\n    a[0] = x[0]\n",
                       0, "zero.py", 1, 0};
  ASSERT_STATUS(nbc_compile(&zero, "k", "void(int32[:])", &o, NULL, &r), NBC_TYPING_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "error: ValueError: array length <= 0");
  ASSERT_EQ(nbc_last_error_kind(), NBC_ERROR_KIND_VALUE);
  nbc_source_t value = {"def k(a):\n    return a\n", 0, "value.py", 1, 0};
  ASSERT_STATUS(nbc_compile(&value, "k", "(int32,)", &o, NULL, &r), NBC_TYPING_ERROR);
  ASSERT_EQ(nbc_last_error_kind(), NBC_ERROR_KIND_KERNEL_RETURN);
  ASSERT_STATUS(nbc_compile(&value, "nope", "(int32,)", &o, NULL, &r), NBC_INVALID_ARGUMENT);
  ASSERT_EQ(nbc_last_error_kind(), NBC_ERROR_KIND_NONE);
  /* the rule itself, which the Python module asks before and after compiling a kernel */
  ASSERT_OK(nbc_kernel_check_return_type("void"));
  ASSERT_OK(nbc_kernel_check_return_type("none"));
  ASSERT_OK(nbc_kernel_check_return_type(NULL));
  ASSERT_STATUS(nbc_kernel_check_return_type("float32"), NBC_TYPING_ERROR);
  ASSERT_STREQ(nbc_last_error(), "CUDA kernel must have void return type.");
  ASSERT_EQ(nbc_last_error_kind(), NBC_ERROR_KIND_KERNEL_RETURN);
}

TEST(default_options_and_cc) {
  require_nvvm();
  nbc_compile_options_t o;
  nbc_compile_options_init(&o);
  ASSERT_EQ(o.device, 1);
  ASSERT_EQ(o.opt, 1);
  ASSERT_EQ(o.abi, NBC_ABI_C);
  ASSERT_EQ(o.output, NBC_OUTPUT_PTX);
  ASSERT_EQ(o.cc_major, 0);
  unsetenv("NBCUDA_DEFAULT_PTX_CC");
  unsetenv("NUMBA_CUDA_DEFAULT_PTX_CC");
  nbc_source_t s = {"def f(a):\n    return a\n", 0, NULL, 0, 0};
  nbc_compile_result_t *r = NULL;
  ASSERT_OK(nbc_compile(&s, "f", "(float32,)", NULL, NULL, &r));
  ASSERT_CONTAINS(nbc_compile_result_code(r, NULL), ".target sm_75");
  nbc_compile_result_destroy(r);
  setenv("NBCUDA_DEFAULT_PTX_CC", "8.6", 1);
  ASSERT_OK(nbc_compile(&s, "f", "(float32,)", NULL, NULL, &r));
  ASSERT_CONTAINS(nbc_compile_result_code(r, NULL), ".target sm_86");
  nbc_compile_result_destroy(r);
}

/* The first line of the diagnostic of compiling name from tests/data/host_app.py. */
static const char *host_app_error(const char *name, const char *sig, int device) {
  nbc_compile_options_t o = options();
  o.device = device;
  o.abi = device ? NBC_ABI_C : NBC_ABI_NUMBA;
  nbc_compile_result_t *r = NULL;
  if (compile_file(NBCUDA_SOURCE_DIR "/tests/data/host_app.py", name, sig, &o, &r) == NBC_OK) {
    nbc_compile_result_destroy(r);
    return "(compiled)";
  }
  char *msg = strdup(nbc_last_error());
  char *nl = strchr(msg, '\n');
  if (nl) *nl = '\0';
  const char *base = strstr(msg, "host_app.py:");
  return base ? base : msg;
}

TEST(host_code_does_not_stop_a_file) {
  /* A real script's kernels compile although its host functions use with, try, import,
   * global, defaults, *args, **kwargs, keyword-only parameters, lambdas, comprehensions,
   * classes, f-strings, decorators with arguments, generators, async and huge integers. */
  require_nvvm();
  nbc_compile_options_t o = kernel_options();
  nbc_compile_result_t *r = NULL;
  ASSERT_OK(compile_file(NBCUDA_SOURCE_DIR "/tests/data/host_app.py", "saxpy",
                         "void(float32[:], float32, float32[:], float32[:])", &o, &r));
  const char *ptx = nbc_compile_result_code(r, NULL);
  char log[8192];
  int rc = ptx_check_ptxas(ptx, strlen(ptx), 0, log, sizeof log);
  if (rc > 0) TEST_FAIL_("ptxas: %s", log);
  nbc_compile_result_destroy(r);
  ASSERT_STREQ(host_app_error("cached", "(int64,)", 1), "(compiled)");
  /* A device function's default may be a global constant (scaled's factor=SCALE). */
  ASSERT_STREQ(host_app_error("kernel_calling_host", "void(float32[:], float32[:])", 0),
               "(compiled)");
  /* Compiling (or calling) a host function reports its first unsupported construct. */
  ASSERT_STREQ(host_app_error("run", "(int64,)", 1),
               "host_app.py:51:21: error: **kwargs parameters are not supported in CUDA kernels");
  ASSERT_STREQ(host_app_error("main", "()", 1),
               "host_app.py:60:5: error: unsupported statement: 'global'");
  ASSERT_STREQ(host_app_error("numbers", "()", 1),
               "host_app.py:82:5: error: unsupported statement: 'yield'");
  ASSERT_STREQ(host_app_error("big", "()", 1),
               "host_app.py:92:12: error: integer literal too large for 64 bits");
  ASSERT_STREQ(host_app_error("fetch", "()", 1),
               "host_app.py:86:1: error: 'fetch' is an async function; only functions defined "
               "with a plain def can be compiled");
}

static void *compile_thread(void *arg) {
  const char *sig = arg;
  for (int i = 0; i < 4; i++) {
    nbc_source_t s = {"import math\ndef f(a):\n    return math.sin(a) * 2\n", 0, "t.py", 1, 0};
    nbc_compile_options_t o = options();
    nbc_compile_result_t *r = NULL;
    if (nbc_compile(&s, "f", sig, &o, NULL, &r) != NBC_OK) return (void *)1;
    if (!strstr(nbc_compile_result_code(r, NULL), "func_retval0")) return (void *)1;
    nbc_compile_result_destroy(r);
  }
  return NULL;
}

TEST(concurrent_compiles) {
  require_nvvm();
  pthread_t t[4];
  const char *sigs[] = {"(float32,)", "(float64,)", "(int32,)", "(float32,)"};
  for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, compile_thread, (void *)sigs[i]);
  for (int i = 0; i < 4; i++) {
    void *rv;
    pthread_join(t[i], &rv);
    ASSERT(rv == NULL);
  }
}

/* debug=True kernels: each raise and assert is a raise site (class, constant arguments as a
 * Python tuple literal, function, file, line) and the kernel has numba's __errcode__, __tid*__
 * and __ctaid*__ variables, set by an atomic compare-and-swap; without debug, or in a device
 * function compiled alone, nothing is recorded. Exception arguments must be constants. */
TEST(debug_kernel_raise_sites) {
  require_nvvm();
  static const char src[] =
      "import errors\n"
      "from numba import cuda\n"
      "def check(x):\n"
      "    if x < 0:\n"
      "        raise ValueError('no\\n \\'quoted\\'', -3, 2.5, True, None)\n"
      "    return x\n"
      "def k(out, x):\n"
      "    i = cuda.grid(1)\n"
      "    assert x[i] != 5, 'five'\n"
      "    assert x[i] != 6\n"
      "    if x[i] == 7:\n"
      "        raise errors.Bad\n"
      "    if x[i] == 8:\n"
      "        raise KeyError()\n"
      "    if x[i] == 9:\n"
      "        raise\n"
      "    out[i] = check(x[i])\n";
  nbc_compile_options_t o = kernel_options();
  o.debug = 1;
  o.opt = 0;
  nbc_source_t s = {src, 0, "dbg.py", 10, 0};
  nbc_compile_result_t *r = NULL;
  ASSERT_OK(nbc_compile(&s, "k", "void(float32[:], float32[:])", &o, NULL, &r));
  static const struct {
    const char *exception, *args, *function;
    int line;
  } want[] = {
      {"ValueError", "('no\\n \\'quoted\\'', -3, 2.5, True, None)", "check", 14},
      {"AssertionError", "('five',)", "k", 18},
      {"AssertionError", "()", "k", 19},
      {"errors.Bad", NULL, "k", 21},
      {"KeyError", "()", "k", 23},
      {NULL, NULL, "k", 25},
  };
  ASSERT_EQ(nbc_compile_result_raise_count(r), 6);
  for (int i = 0; i < 6; i++) {
    const nbc_raise_site_t *site = nbc_compile_result_raise_site(r, i);
    ASSERT(site != NULL && site->code == i + 1 && site->line == want[i].line);
    ASSERT((site->exception == NULL) == (want[i].exception == NULL));
    if (want[i].exception) ASSERT_STREQ(site->exception, want[i].exception);
    ASSERT((site->args == NULL) == (want[i].args == NULL));
    if (want[i].args) ASSERT_STREQ(site->args, want[i].args);
    ASSERT_STREQ(site->function, want[i].function);
    ASSERT_STREQ(site->filename, "dbg.py");
  }
  ASSERT(nbc_compile_result_raise_site(r, 6) == NULL);
  ASSERT(nbc_compile_result_raise_site(r, -1) == NULL);
  size_t size = 0;
  const char *ptx = nbc_compile_result_code(r, &size);
  char name[512];
  snprintf(name, sizeof name, ".visible .global .align 4 .u32 %s__errcode__;",
           nbc_compile_result_symbol(r));
  ASSERT_CONTAINS(ptx, name);
  snprintf(name, sizeof name, "%s__ctaidz__;", nbc_compile_result_symbol(r));
  ASSERT_CONTAINS(ptx, name);
  ASSERT_CONTAINS(ptx, "atom.global.cas.b32");
  char log[4096];
  int rc = ptx_check_ptxas(ptx, size, 1, log, sizeof log);
  if (rc > 0) TEST_FAIL_("ptxas rejected the debug kernel:\n%s", log);
  nbc_compile_result_destroy(r);

  /* without debug: the thread ends, nothing recorded, no variables */
  o.debug = 0;
  ASSERT_OK(nbc_compile(&s, "k", "void(float32[:], float32[:])", &o, NULL, &r));
  ASSERT_EQ(nbc_compile_result_raise_count(r), 0);
  ASSERT(strstr(nbc_compile_result_code(r, NULL), "__errcode__") == NULL);
  nbc_compile_result_destroy(r);
  /* a device function compiled alone has no kernel to report through */
  o.debug = 1;
  o.device = 1;
  ASSERT_OK(nbc_compile(&s, "check", "float32(float32)", &o, NULL, &r));
  ASSERT_EQ(nbc_compile_result_raise_count(r), 0);
  nbc_compile_result_destroy(r);

  /* a zero divisor (numba's error_model="python"): a site without location */
  o.device = 0;
  nbc_source_t dv = {"def k(out, x):\n    out[0] = x[0] // x[1] + x[0] % x[1]\n", 0, "d.py", 1,
                     0};
  ASSERT_OK(nbc_compile(&dv, "k", "void(int32[:], int32[:])", &o, NULL, &r));
  ASSERT_EQ(nbc_compile_result_raise_count(r), 2);
  const nbc_raise_site_t *z = nbc_compile_result_raise_site(r, 0);
  ASSERT_STREQ(z->exception, "ZeroDivisionError");
  ASSERT_STREQ(z->args, "('integer division by zero',)");
  ASSERT(z->function == NULL && z->filename == NULL && z->line == 0);
  ASSERT_STREQ(nbc_compile_result_raise_site(r, 1)->args, "('integer modulo by zero',)");
  nbc_compile_result_destroy(r);

  static const char *const bad[][2] = {
      {"def k(x):\n    raise ValueError(x[0])\n", "must be constants"},
      {"def k(x):\n    assert x[0], x[1]\n", "must be a constant"},
      {"def k(x):\n    raise ValueError(msg='no')\n", "must be constants"},
      {"def k(x):\n    raise (ValueError if x[0] else KeyError)\n", "exception class or a call"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    nbc_source_t b = {bad[i][0], 0, "bad.py", 1, 0};
    ASSERT(nbc_compile(&b, "k", "void(float32[:])", &o, NULL, &r) != NBC_OK);
    ASSERT_CONTAINS(nbc_last_error(), bad[i][1]);
    ASSERT_CONTAINS(nbc_last_error(), "debug=True");
  }
}

/* Global tuples of numbers are constants (the file's own resolver here, the Python module's
 * on the Python side); a homogeneous tuple takes a run-time index, and one outside raises
 * IndexError (a location-less raise site in a debug kernel). */
TEST(tuples_global_and_indexed) {
  require_nvvm();
  static const char src[] = "W = (0.25, 0.5, 0.25)\n"
                            "M = (2, 1.5, True)\n"
                            "P = ((1.0, 2.0), (3.0, 4.0))\n"
                            "def h(i):\n"
                            "    (a, b), c = (P[i], P[1][0])\n"
                            "    return a + b + c\n"
                            "def f(i):\n"
                            "    s = 0.0\n"
                            "    for w in W:\n"
                            "        s += w\n"
                            "    return s + W[i] + M[1]\n"
                            "def g(i):\n"
                            "    return M[i]\n";
  nbc_compile_options_t o = options();
  nbc_source_t s = {src, 0, "t.py", 1, 0};
  nbc_compile_result_t *r = NULL;
  nbc_compile_result_destroy(compiled_and_assembled(&s, "h", "(int64,)", &o, "float64"));
  r = compiled_and_assembled(&s, "f", "(int64,)", &o, "float64");
  ASSERT_CONTAINS(nbc_compile_result_code(r, NULL), "exit;"); /* outside W: the thread ends */
  nbc_compile_result_destroy(r);
  ASSERT_STATUS(nbc_compile(&s, "g", "(int64,)", &o, NULL, &r), NBC_TYPING_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "a tuple of mixed types needs a constant index");
  /* comparisons and membership */
  nbc_source_t c = {"def c(x):\n    return (x, 1) <= (x, 2, 3) and x in (1.0, 2.5) and "
                    "((x, 1), 2) != ((1, x), 2)\n", 0, "c.py", 1, 0};
  nbc_compile_result_destroy(compiled_and_assembled(&c, "c", "(float64,)", &o, "bool"));
  /* concatenation, repetition, constant slices, pow(), an array indexed by a tuple variable */
  nbc_source_t ops = {"def t(x):\n    return ((x, 1) + (2.5,) * 2)[::-1][1:]\n"
                      "def p(a, i):\n    idx = (i, 0)\n    return pow(a[idx], 2)\n", 0, "o.py",
                      1, 0};
  nbc_compile_result_destroy(
      compiled_and_assembled(&ops, "t", "(float64,)", &o, "Tuple(float64, int64, float64)"));
  nbc_compile_result_destroy(
      compiled_and_assembled(&ops, "p", "(float32[:, :], int64)", &o, "float32"));

  o.device = 0;
  o.abi = NBC_ABI_NUMBA;
  o.debug = 1;
  o.opt = 0;
  nbc_source_t k = {"W = (0.25, 0.5)\ndef k(out, i):\n    out[0] = W[i[0]]\n", 0, "k.py", 1, 0};
  ASSERT_OK(nbc_compile(&k, "k", "void(float64[:], int64[:])", &o, NULL, &r));
  ASSERT_EQ(nbc_compile_result_raise_count(r), 1);
  const nbc_raise_site_t *site = nbc_compile_result_raise_site(r, 0);
  ASSERT_STREQ(site->exception, "IndexError");
  ASSERT_STREQ(site->args, "('tuple index out of range',)");
  ASSERT(site->function == NULL);
  nbc_compile_result_destroy(r);
}

/* warn_uninit (numba's ALWAYS_WARN_UNINIT_VAR): a variable read where some path binds it
 * nowhere is a warning of the result, once per variable; none without the option, none for a
 * variable every path binds. */
TEST(uninitialized_variable_warnings) {
  require_nvvm();
  static const char src[] = "def f(r, n):\n"
                            "    if n:\n"
                            "        c = 1\n"
                            "    else:\n"
                            "        d = 2\n"
                            "        d += 1\n"
                            "    r[0] = c\n"
                            "    r[1] = c + d\n";
  nbc_compile_options_t o = options();
  o.device = 0;
  o.abi = NBC_ABI_NUMBA;
  nbc_source_t s = {src, 0, "u.py", 1, 0};
  nbc_compile_result_t *r = NULL;
  ASSERT_OK(nbc_compile(&s, "f", "void(int64[::1], int64)", &o, NULL, &r));
  ASSERT_STREQ(nbc_compile_result_warnings(r), "");
  nbc_compile_result_destroy(r);
  o.warn_uninit = 1;
  ASSERT_OK(nbc_compile(&s, "f", "void(int64[::1], int64)", &o, NULL, &r));
  ASSERT_STREQ(nbc_compile_result_warnings(r),
               "u.py:7:12: Detected uninitialized variable c\n"
               "u.py:8:16: Detected uninitialized variable d\n");
  nbc_compile_result_destroy(r);
}

TEST_LIST(X(uninitialized_variable_warnings) X(launch_bounds) X(result_variables) X(program_modules_are_files_next_to_the_source)
          X(forceinline) X(forceinline_callee)
          X(global_array_is_constant_memory) X(module_attributes_are_dotted_globals)
          X(result_from_cached_code) X(forceinline_decorator_in_file) X(corpus_ptx_c_abi)
          X(corpus_ptx_numba_abi) X(corpus_ltoir_links) X(fastmath_effects) X(lineinfo_effects)
          X(abi_name_and_symbols) X(abi_name_must_be_an_identifier) X(non_function_names_say_what_they_are)
          X(source_size_is_capped) X(bool_return_c_abi) X(bool_in_returned_tuple)
          X(kernel_and_device_calls) X(errors_are_reported) X(error_kinds) X(default_options_and_cc)
          X(host_code_does_not_stop_a_file) X(concurrent_compiles) X(declared_device_function)
          X(nvvm_ir_output) X(kept_ir_is_the_compiled_ir) X(grid_sync_result_is_cooperative) X(fp16_functions_use_the_shim)
          X(cmath_and_complex_arguments) X(operator_module) X(nested_functions_and_defaults)
          X(vector_types) X(debug_kernel_raise_sites) X(tuples_global_and_indexed))
TEST_MAIN()
