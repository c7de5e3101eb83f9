/* test_intrinsic_names.c — kernel-language names used without the module: `from nbcuda
 * import grid, atomic`, `add = cuda.atomic.add` at module level, or a caller's resolver
 * answering NBC_GLOBAL_CUDA_NAME. What the default resolver binds (resolve.c), that such
 * a kernel compiles to the same instructions as with `cuda.<name>` (ptxas-checked), that a
 * name used wrongly gets the diagnostic `cuda.<name>` gets, and the list the Python module
 * makes its host stubs from (nbc_kernel_names).
 */
#include "compiler/compiler.h"
#include "front_util.h"
#include "nvvm_util.h"
#include "ptx_check.h"
#include "test.h"

static nbc_global_t resolve(nbc__module *m, const char *name) {
  nbc_global_t g;
  memset(&g, 0, sizeof g);
  if (nbc__module_resolve(m, name, &g) != 0) g.kind = NBC_GLOBAL_UNDEFINED;
  return g;
}

#define ASSERT_CUDA_NAME(m, var, expected)                                                     \
  do {                                                                                         \
    nbc_global_t g_ = resolve(m, var);                                                         \
    ASSERT_EQ(g_.kind, NBC_GLOBAL_CUDA_NAME);                                                  \
    ASSERT_STREQ(g_.name, expected);                                                           \
  } while (0)

TEST(resolver_binds_imported_and_assigned_names) {
  nbc__module *m = fe_load("from nbcuda import grid, atomic as at, jit, float32\n"
                           "from numba.cuda import popc, threadIdx\n"
                           "from numba.cuda.stubs import match_any_sync\n"
                           "import nbcuda as cuda\n"
                           "g = cuda.grid\n"
                           "add = cuda.atomic.add\n"
                           "cas = at.cas\n"
                           "arr = cuda.shared.array\n"
                           "tx = cuda.threadIdx.x\n"
                           "nope = cuda.atomic.nope\n"
                           "dev = cuda.to_device\n"
                           "from math import sqrt\n");
  ASSERT(m);
  ASSERT_CUDA_NAME(m, "grid", "grid");
  ASSERT_CUDA_NAME(m, "at", "atomic");
  ASSERT_CUDA_NAME(m, "popc", "popc");
  ASSERT_CUDA_NAME(m, "threadIdx", "threadIdx");
  ASSERT_CUDA_NAME(m, "match_any_sync", "match_any_sync");
  ASSERT_CUDA_NAME(m, "g", "grid");
  ASSERT_CUDA_NAME(m, "add", "atomic.add");
  ASSERT_CUDA_NAME(m, "cas", "atomic.cas");
  ASSERT_CUDA_NAME(m, "arr", "shared.array");
  ASSERT_CUDA_NAME(m, "tx", "threadIdx.x");
  /* Members that are not kernel-language names stay ordinary globals. */
  ASSERT_EQ(resolve(m, "jit").kind, NBC_GLOBAL_OTHER);
  ASSERT_EQ(resolve(m, "nope").kind, NBC_GLOBAL_OTHER);
  ASSERT_EQ(resolve(m, "dev").kind, NBC_GLOBAL_OTHER);
  ASSERT_EQ(resolve(m, "float32").kind, NBC_GLOBAL_TYPE);
  ASSERT_EQ(resolve(m, "sqrt").kind, NBC_GLOBAL_MATH_FUNCTION);
  ASSERT_EQ(resolve(m, "cuda").kind, NBC_GLOBAL_MODULE_CUDA);
}

static nbc_compile_options_t kernel_options(void) {
  nbc_compile_options_t o;
  nbc_compile_options_init(&o);
  o.cc_major = 9;
  o.cc_minor = 0;
  o.device = 0;
  o.abi = NBC_ABI_NUMBA;
  return o;
}

/* Compiles kernel k of src; returns the PTX (owned by *pr) after ptxas accepted it. */
static const char *compile_kernel(const char *src, const char *sig,
                                  const nbc_resolver_t *resolver, nbc_compile_result_t **pr) {
  nbc_compile_options_t o = kernel_options();
  nbc_source_t s = {src, 0, "names.py", 1, 0};
  *pr = NULL;
  if (nbc_compile(&s, "k", sig, &o, resolver, pr) != NBC_OK)
    TEST_FAIL_("compile failed: %s", nbc_last_error());
  size_t size;
  const char *ptx = nbc_compile_result_code(*pr, &size);
  char log[8192];
  int rc = ptx_check_ptxas(ptx, size, 0, log, sizeof log);
  if (rc < 0) SKIP("ptxas not found");
  if (rc != 0) TEST_FAIL_("ptxas failed:\n%s", log);
  return ptx;
}

static const char *const bare_kernel =
    "from nbcuda import grid, atomic, threadIdx, shfl_down_sync, popc, laneid, shared\n"
    "from nbcuda import match_all_sync, nanosleep\n"
    "import nbcuda as cuda\n"
    "add = cuda.atomic.add\n"
    "xor = atomic.xor\n"
    "def k(out, x):\n"
    "    i = grid(1)\n"
    "    buf = shared.array(32, cuda.int64)\n"
    "    buf[threadIdx.x % 32] = x[i]\n"
    "    v = shfl_down_sync(0xFFFFFFFF, x[i], 1)\n"
    "    m, p = match_all_sync(0xFFFFFFFF, v)\n"
    "    nanosleep(10)\n"
    "    atomic.max(out, 0, v)\n"
    "    add(out, 1, popc(i) + laneid + m + p)\n"
    "    xor(out, 2, buf[0])\n"
    "    out[i] = x[i]\n";

static const char *const module_kernel =
    "import nbcuda as cuda\n"
    "def k(out, x):\n"
    "    i = cuda.grid(1)\n"
    "    buf = cuda.shared.array(32, cuda.int64)\n"
    "    buf[cuda.threadIdx.x % 32] = x[i]\n"
    "    v = cuda.shfl_down_sync(0xFFFFFFFF, x[i], 1)\n"
    "    m, p = cuda.match_all_sync(0xFFFFFFFF, v)\n"
    "    cuda.nanosleep(10)\n"
    "    cuda.atomic.max(out, 0, v)\n"
    "    cuda.atomic.add(out, 1, cuda.popc(i) + cuda.laneid + m + p)\n"
    "    cuda.atomic.xor(out, 2, buf[0])\n"
    "    out[i] = x[i]\n";

/* The PTX body of the kernel (from its entry on): the same for both spellings. */
static const char *body(const char *ptx) {
  const char *e = strstr(ptx, ".entry");
  return e ? e : ptx;
}

TEST(bare_names_compile_as_the_module_members) {
  require_nvvm();
  const char *sig = "void(int64[::1], int64[::1])";
  nbc_compile_result_t *a, *b;
  const char *bare = compile_kernel(bare_kernel, sig, NULL, &a);
  const char *mod = compile_kernel(module_kernel, sig, NULL, &b);
  static const char *const insns[] = {"shfl.sync.down.b32",
                                      "match.all.sync.b64",
                                      "nanosleep.u32",
                                      "atom.global.max.s64",
                                      "atom.global.add.u64",
                                      "atom.global.xor.b64",
                                      "popc.b64",
                                      "%laneid",
                                      "%tid.x"};
  for (size_t i = 0; i < sizeof insns / sizeof insns[0]; i++) {
    if (!strstr(bare, insns[i]))
      TEST_FAIL_("no %s in the bare-name kernel:\n%s", insns[i], bare);
    if (!strstr(mod, insns[i])) TEST_FAIL_("no %s in the cuda.<name> kernel", insns[i]);
  }
  ASSERT_STREQ(body(bare), body(mod));
  nbc_compile_result_destroy(a);
  nbc_compile_result_destroy(b);
}

/* A caller's resolver (as the Python module's is) answering CUDA_NAME for stubs. */
static int stub_resolver(void *data, const char *name, nbc_global_t *g) {
  (void)data;
  memset(g, 0, sizeof *g);
  static const char *const stubs[][2] = {
      {"grid", "grid"},     {"ballot", "ballot_sync"}, {"popc", "popc"}, {"add", "atomic.add"},
      {"tid", "threadIdx"}, {"tx", "threadIdx.x"},     {"cnst", "const"},
      {"groups", "cg"}};
  for (size_t i = 0; i < sizeof stubs / sizeof stubs[0]; i++)
    if (strcmp(name, stubs[i][0]) == 0) {
      g->kind = NBC_GLOBAL_CUDA_NAME;
      g->name = stubs[i][1];
      return 0;
    }
  return 1;
}

TEST(a_callers_resolver_can_answer_cuda_names) {
  require_nvvm();
  nbc_resolver_t r = {stub_resolver, NULL};
  nbc_compile_result_t *res;
  const char *ptx = compile_kernel("def k(out):\n"
                                   "    i = grid(1)\n"
                                   "    b = ballot(0xFFFFFFFF, i > 3)\n"
                                   "    add(out, 0, popc(b) + tid.y)\n",
                                   "void(int32[::1])", &r, &res);
  ASSERT_CONTAINS(ptx, "vote.sync.ballot.b32");
  ASSERT_CONTAINS(ptx, "popc.b32");
  ASSERT_CONTAINS(ptx, "atom.global.add.u32");
  ASSERT_CONTAINS(ptx, "%tid.y");
  nbc_compile_result_destroy(res);
}

/* The diagnostic of src's kernel without its "file:line:col: " prefix and source lines. */
static const char *error_of(const char *src, const nbc_resolver_t *resolver) {
  nbc_compile_options_t o = kernel_options();
  nbc_source_t s = {src, 0, "names.py", 1, 0};
  nbc_compile_result_t *r = NULL;
  if (nbc_compile(&s, "k", "void(int64[::1])", &o, resolver, &r) == NBC_OK) {
    nbc_compile_result_destroy(r);
    return NULL;
  }
  static char buf[2][512];
  static int which;
  const char *e = strstr(nbc_last_error(), "error: ");
  char *out = buf[which++ & 1];
  snprintf(out, sizeof buf[0], "%s", e ? e : nbc_last_error());
  char *nl = strchr(out, '\n');
  if (nl) *nl = '\0';
  return out;
}

TEST(names_used_wrongly_get_the_module_members_diagnostics) {
  require_nvvm();
  static const char *const pairs[][2] = {
      {"from nbcuda import popc\ndef k(out):\n    out[0] = popc(out)\n",
       "import nbcuda as cuda\ndef k(out):\n    out[0] = cuda.popc(out)\n"},
      {"from nbcuda import atomic\ndef k(out):\n    atomic.nope(out, 0, 1)\n",
       "import nbcuda as cuda\ndef k(out):\n    cuda.atomic.nope(out, 0, 1)\n"},
      {"from nbcuda import grid\ndef k(out):\n    out[0] = grid(out[0])\n",
       "import nbcuda as cuda\ndef k(out):\n    out[0] = cuda.grid(out[0])\n"},
      {"from nbcuda import match_any_sync as m\ndef k(out):\n    out[0] = m(1)\n",
       "import nbcuda as cuda\ndef k(out):\n    out[0] = cuda.match_any_sync(1)\n"},
      {"from nbcuda import threadIdx\ndef k(out):\n    out[0] = threadIdx.w\n",
       "import nbcuda as cuda\ndef k(out):\n    out[0] = cuda.threadIdx.w\n"},
      {"from nbcuda import nanosleep\ndef k(out):\n    nanosleep(out)\n",
       "import nbcuda as cuda\ndef k(out):\n    cuda.nanosleep(out)\n"},
  };
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
    const char *bare = error_of(pairs[i][0], NULL), *mod = error_of(pairs[i][1], NULL);
    if (!bare || !mod) TEST_FAIL_("case %zu compiled", i);
    ASSERT_STREQ(bare, mod);
  }
  /* A register read at module level is refused with a clear message; so is a name the
   * compiler does not have, as cuda.<name> is. */
  ASSERT_STREQ(error_of("import nbcuda as cuda\ntx = cuda.threadIdx.x\n"
                        "def k(out):\n    out[0] = tx\n",
                        NULL),
               "error: global 'tx' is cuda.threadIdx.x read outside a kernel, which is not "
               "supported: read cuda.threadIdx.x inside the kernel");
  nbc_resolver_t r = {stub_resolver, NULL};
  /* cuda.cg bound without the module is cuda.cg: a GridGroup is no array element */
  ASSERT_STREQ(error_of("def k(out):\n    out[0] = groups.this_grid()\n", &r),
               "error: Cannot convert GridGroup to int64 in an array assignment");
  ASSERT_STREQ(
      error_of("import nbcuda as cuda\ndef k(out):\n    out[0] = cuda.cg.this_grid()\n", NULL),
      "error: Cannot convert GridGroup to int64 in an array assignment");
  /* cuda.const bound without the module is cuda.const: array_like wants a global array */
  ASSERT_STREQ(error_of("def k(out):\n    out[0] = cnst.array_like(out)[0]\n", &r),
               error_of("import nbcuda as cuda\n"
                        "def k(out):\n    out[0] = cuda.const.array_like(out)[0]\n",
                        NULL));
}

/* The list the Python module makes its stubs from: every name is found again, namespaces
 * come before their members, and the compiler types each as its kind says. */
TEST(kernel_name_list) {
  size_t count = 0;
  const nbc_kernel_name_t *names = nbc_kernel_names(&count);
  ASSERT(names && count > 50);
  bool match = false, sleep = false;
  for (size_t i = 0; i < count; i++) {
    ASSERT(nbc__cuda_name_find(names[i].name) == &names[i]);
    const char *dot = strchr(names[i].name, '.');
    if (dot) {
      char ns[64];
      snprintf(ns, sizeof ns, "%.*s", (int)(dot - names[i].name), names[i].name);
      const nbc_kernel_name_t *parent = nbc__cuda_name_find(ns);
      ASSERT(parent && parent < &names[i] && parent->kind == NBC_KERNEL_NAMESPACE);
      ASSERT(nbc__cuda_member_find(ns, dot + 1) == &names[i]);
    }
    match = match || strcmp(names[i].name, "match_all_sync") == 0;
    sleep = sleep || strcmp(names[i].name, "nanosleep") == 0;
  }
  ASSERT(match && sleep);
  ASSERT(nbc__cuda_name_find("to_device") == NULL);
  ASSERT(nbc__cuda_member_find("atomic", "array") == NULL);
}

/* Each row of the table also says how a call of the name is typed: every function has a
 * typing path, namespaces and values none, so infer_call.c needs no list of its own. */
TEST(kernel_names_say_how_calls_are_typed) {
  size_t count = 0;
  const nbc_kernel_name_t *names = nbc_kernel_names(&count);
  for (size_t i = 0; i < count; i++) {
    bool callable = nbc__cuda_name_call(&names[i]) != NBC__KERNEL_CALL_NONE;
    if (callable != (names[i].kind == NBC_KERNEL_FUNCTION))
      TEST_FAIL_("%s: call kind %d for name kind %d", names[i].name,
                 (int)nbc__cuda_name_call(&names[i]), (int)names[i].kind);
  }
  static const struct {
    const char *name;
    nbc__kernel_call call;
  } cases[] = {{"grid", NBC__KERNEL_CALL_GRID},
               {"gridsize", NBC__KERNEL_CALL_GRID},
               {"syncthreads", NBC__KERNEL_CALL_SYNCTHREADS},
               {"syncthreads_or", NBC__KERNEL_CALL_INTRINSIC},
               {"shfl_sync", NBC__KERNEL_CALL_INTRINSIC},
               {"popc", NBC__KERNEL_CALL_INTRINSIC},
               {"nanosleep", NBC__KERNEL_CALL_INTRINSIC},
               {"shared.array", NBC__KERNEL_CALL_ARRAY},
               {"local.array", NBC__KERNEL_CALL_ARRAY},
               {"atomic.compare_and_swap", NBC__KERNEL_CALL_ATOMIC},
               {"atomic", NBC__KERNEL_CALL_NONE},
               {"laneid", NBC__KERNEL_CALL_NONE}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    ASSERT_EQ(nbc__cuda_name_call(nbc__cuda_name_find(cases[i].name)), cases[i].call);
  ASSERT_EQ(nbc__cuda_name_call(NULL), NBC__KERNEL_CALL_NONE);
}

TEST_LIST(X(resolver_binds_imported_and_assigned_names)
              X(bare_names_compile_as_the_module_members)
                  X(a_callers_resolver_can_answer_cuda_names)
                      X(names_used_wrongly_get_the_module_members_diagnostics)
                          X(kernel_name_list) X(kernel_names_say_how_calls_are_typed))
TEST_MAIN()
