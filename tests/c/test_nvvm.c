/* test_nvvm.c — libNVVM loading, option mapping and IR compilation (nvvm.c), with
 * hand-written NVVM IR so that these tests do not depend on the rest of the compiler.
 * Everything produced is checked by NVIDIA's own ptxas / nvJitLink (ptx_check.h).
 */
#include <pthread.h>
#include <sys/stat.h>

#include "compiler/compiler.h"
#include "nvvm_util.h"
#include "ptx_check.h"
#include "test.h"

#define HEADER                                                                             \
  "target datalayout = \"e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-"       \
  "i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64\"\n" \
  "target triple = \"nvptx64-nvidia-cuda\"\n"
#define VERSION "!nvvmir.version = !{!100}\n!100 = !{i32 2, i32 0}\n"

static const char device_ir[] = HEADER
    "define float @divide(float %a, float %b) {\n"
    "  %q = fdiv float %a, %b\n"
    "  ret float %q\n"
    "}\n" VERSION;

static const char kernel_ir[] = HEADER
    "define void @scale(float* %x, float %a) {\n"
    "  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n"
    "  %i = sext i32 %tid to i64\n"
    "  %p = getelementptr float, float* %x, i64 %i\n"
    "  %v = load float, float* %p, align 4\n"
    "  %r = fmul float %v, %a\n"
    "  store float %r, float* %p, align 4\n"
    "  ret void\n"
    "}\n"
    "declare i32 @llvm.nvvm.read.ptx.sreg.tid.x() nounwind readnone\n"
    "@llvm.used = appending global [1 x i8*] [i8* bitcast (void (float*, float)* @scale to "
    "i8*)], section \"llvm.metadata\"\n"
    "!nvvm.annotations = !{!0}\n"
    "!0 = !{void (float*, float)* @scale, !\"kernel\", i32 1}\n" VERSION;

static const char math_ir[] = HEADER
    "define float @wave(float %x) {\n"
    "  %s = call float @__nv_sinf(float %x)\n"
    "  ret float %s\n"
    "}\n"
    "declare float @__nv_sinf(float)\n" VERSION;

/* A phi with an entry for a block that is not a predecessor: the kind of IR that can hang
 * libNVVM's optimiser, which the verifier must catch first. */
static const char bad_ir[] = HEADER
    "define i32 @bad(i32 %a) {\n"
    "entry:\n"
    "  br label %next\n"
    "next:\n"
    "  %x = phi i32 [ %a, %entry ], [ 0, %other ]\n"
    "  ret i32 %x\n"
    "other:\n"
    "  ret i32 1\n"
    "}\n" VERSION;

typedef struct compiled {
  bool ok;
  nbc_status_t status;
  char diag[4096];
  nbc__nvvm_output out;
} compiled;

static compiled compile_ir(const char *ir, const nbc_compile_options_t *o, bool libdevice) {
  compiled c;
  memset(&c, 0, sizeof c);
  nbc__ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.arena = nbc__arena_create();
  nbc__buf_init(&ctx.diag, ctx.arena);
  ctx.options = o;
  c.ok = nbc__nvvm_compile(&ctx, ir, strlen(ir), libdevice, &c.out);
  c.status = ctx.status;
  if (ctx.diag.data) snprintf(c.diag, sizeof c.diag, "%.*s", (int)ctx.diag.len, ctx.diag.data);
  nbc__arena_destroy(ctx.arena);
  return c;
}

static nbc_compile_options_t opts(void) {
  nbc_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.device = 1;
  o.opt = 1;
  o.cc_major = 9;
  o.cc_minor = 0;
  return o;
}

static void expect_ptxas(const char *ptx, size_t size, int relocatable) {
  char log[8192];
  int rc = ptx_check_ptxas(ptx, size, relocatable, log, sizeof log);
  if (rc < 0) SKIP("ptxas not found");
  if (rc != 0) TEST_FAIL_("ptxas rejected the PTX:\n%s\n%s", log, ptx);
}

TEST(loads_and_reports_version) {
  require_nvvm();
  int major = 0, minor = 0;
  ASSERT_OK(nbc__nvvm_version(&major, &minor));
  ASSERT(major >= 2);
  ASSERT(nbc__nvvm_path() != NULL);
  ASSERT_STREQ(nbc__nvvm_load_error(), "");
}

TEST(device_function_to_ptx) {
  require_nvvm();
  nbc_compile_options_t o = opts();
  compiled c = compile_ir(device_ir, &o, false);
  if (!c.ok) TEST_FAIL_("%s", c.diag);
  ASSERT_EQ(strlen(c.out.code), c.out.size);
  ASSERT_CONTAINS(c.out.code, "(.param .b32 func_retval0) divide(");
  ASSERT_CONTAINS(c.out.code, ".target sm_90");
  ASSERT_CONTAINS(c.out.code, "div.rn.f32");
  expect_ptxas(c.out.code, c.out.size, 1);
  nbc__nvvm_output_free(&c.out);
}

TEST(kernel_to_ptx) {
  require_nvvm();
  nbc_compile_options_t o = opts();
  o.device = 0;
  compiled c = compile_ir(kernel_ir, &o, false);
  if (!c.ok) TEST_FAIL_("%s", c.diag);
  ASSERT_CONTAINS(c.out.code, ".visible .entry scale(");
  ASSERT(!strstr(c.out.code, "func_retval"));
  expect_ptxas(c.out.code, c.out.size, 0);
  nbc__nvvm_output_free(&c.out);
}

TEST(fastmath_options) {
  require_nvvm();
  nbc_compile_options_t o = opts();
  o.fastmath = 1;
  compiled c = compile_ir(device_ir, &o, false);
  if (!c.ok) TEST_FAIL_("%s", c.diag);
  ASSERT_CONTAINS(c.out.code, ".ftz.f32");
  ASSERT(!strstr(c.out.code, "div.rn.f32"));
  nbc__nvvm_output_free(&c.out);

  char buf[16][32];
  const char *argv[16];
  int n = nbc__nvvm_options(&o, "compute_90", buf, argv);
  ASSERT_EQ(n, 6);
  ASSERT_STREQ(argv[0], "-opt=3");
  ASSERT_STREQ(argv[1], "-arch=compute_90");
  ASSERT_STREQ(argv[2], "-ftz=1");
  ASSERT_STREQ(argv[3], "-fma=1");
  ASSERT_STREQ(argv[4], "-prec-div=0");
  ASSERT_STREQ(argv[5], "-prec-sqrt=0");
  o = opts();
  o.opt = 0;
  o.debug = 1;
  o.output = NBC_OUTPUT_LTOIR;
  n = nbc__nvvm_options(&o, "compute_75", buf, argv);
  ASSERT_EQ(n, 4);
  ASSERT_STREQ(argv[0], "-opt=0");
  ASSERT_STREQ(argv[1], "-g");
  ASSERT_STREQ(argv[2], "-gen-lto");
  ASSERT_STREQ(argv[3], "-arch=compute_75");
}

TEST(opt0_changes_code) {
  require_nvvm();
  nbc_compile_options_t o = opts();
  o.device = 0;
  o.opt = 0;
  compiled c = compile_ir(kernel_ir, &o, false);
  if (!c.ok) TEST_FAIL_("%s", c.diag);
  /* Without optimisation the generic pointer is not turned into a global one. */
  ASSERT(!strstr(c.out.code, "ld.global"));
  expect_ptxas(c.out.code, c.out.size, 0);
  nbc__nvvm_output_free(&c.out);
}

static void expect_arch(int major, int minor, const char *want) {
  char arch[128];
  nbc_status_t st = nbc__nvvm_arch(major, minor, 0, arch, sizeof arch);
  if (st != NBC_OK) TEST_FAIL_("cc %d.%d: %s", major, minor, arch);
  if (strcmp(arch, want) != 0) TEST_FAIL_("cc %d.%d gave %s, expected %s", major, minor, arch, want);
}

TEST(arch_mapping) {
  expect_arch(7, 5, "compute_75");
  expect_arch(8, 0, "compute_80");
  expect_arch(8, 5, "compute_80");
  expect_arch(8, 6, "compute_86");
  expect_arch(8, 9, "compute_89");
  expect_arch(9, 0, "compute_90");
  expect_arch(9, 9, "compute_90");
  expect_arch(10, 1, "compute_100");
  expect_arch(10, 3, "compute_103");
  expect_arch(12, 0, "compute_120");
  expect_arch(12, 1, "compute_121");
  expect_arch(13, 0, "compute_121");
  char arch[128];
  ASSERT_STATUS(nbc__nvvm_arch(5, 0, 0, arch, sizeof arch), NBC_UNSUPPORTED_CC);
  ASSERT_STREQ(arch, "GPU compute capability 5.0 is not supported (requires >=7.5)");
  ASSERT_STATUS(nbc__nvvm_arch(7, 2, 0, arch, sizeof arch), NBC_UNSUPPORTED_CC);
  ASSERT_STREQ(arch, "GPU compute capability 7.2 is not supported (requires >=7.5)");
  /* Arch- and family-specific targets: only the cc asked for (numba-cuda's get_arch_option). */
  ASSERT_OK(nbc__nvvm_arch(9, 0, 'a', arch, sizeof arch));
  ASSERT_STREQ(arch, "compute_90a");
  ASSERT_OK(nbc__nvvm_arch(10, 0, 'f', arch, sizeof arch));
  ASSERT_STREQ(arch, "compute_100f");
  ASSERT_STATUS(nbc__nvvm_arch(9, 2, 'a', arch, sizeof arch), NBC_UNSUPPORTED_CC);
  ASSERT_STREQ(arch, "Can't use arch-specific compute_92a with closest found compute "
                     "capability compute_90");
  ASSERT_STATUS(nbc__nvvm_arch(9, 0, 'x', arch, sizeof arch), NBC_UNSUPPORTED_CC);
  ASSERT_CONTAINS(arch, "expected 'a' or 'f'");
}

/* The public nbc_default_ptx_cc says the same as the arch of a compile with cc 0.0. */
static void expect_default_cc(int major, int minor) {
  int got_major = -1, got_minor = -1;
  nbc_default_ptx_cc(&got_major, &got_minor);
  ASSERT(got_major == major && got_minor == minor);
}

TEST(default_cc_from_environment) {
  unsetenv("NBCUDA_DEFAULT_PTX_CC");
  unsetenv("NUMBA_CUDA_DEFAULT_PTX_CC");
  expect_arch(0, 0, "compute_75");
  expect_default_cc(7, 5);
  setenv("NUMBA_CUDA_DEFAULT_PTX_CC", "9.0", 1);
  expect_arch(0, 0, "compute_90");
  expect_default_cc(9, 0);
  setenv("NBCUDA_DEFAULT_PTX_CC", "8.6x", 1); /* numba's prefix match; ours wins */
  expect_arch(0, 0, "compute_86");
  expect_default_cc(8, 6);
  setenv("NBCUDA_DEFAULT_PTX_CC", "junk", 1); /* ignored: falls to NUMBA_... */
  expect_arch(0, 0, "compute_90");
  setenv("NBCUDA_DEFAULT_PTX_CC", "5.0", 1); /* raised to the minimum, as numba does */
  expect_arch(0, 0, "compute_75");
}

/* The static list of architectures must be exactly what this libNVVM accepts. */
TEST(supported_archs_match_libnvvm) {
  require_nvvm();
  const int *list;
  int count;
  nbc__nvvm_supported_ccs(&list, &count);
  for (int i = 0; i < count; i++) {
    nbc_compile_options_t o = opts();
    o.cc_major = list[i] / 10;
    o.cc_minor = list[i] % 10;
    compiled c = compile_ir(device_ir, &o, false);
    if (!c.ok) TEST_FAIL_("compute_%d refused: %s", list[i], c.diag);
    char target[32];
    snprintf(target, sizeof target, ".target sm_%d", list[i]);
    ASSERT_CONTAINS(c.out.code, target);
    nbc__nvvm_output_free(&c.out);
  }
}

TEST(invalid_ir_is_caught_by_verify) {
  require_nvvm();
  nbc_compile_options_t o = opts();
  compiled c = compile_ir(bad_ir, &o, false);
  ASSERT(!c.ok);
  ASSERT_EQ(c.status, NBC_NVVM_ERROR);
  ASSERT_CONTAINS(c.diag, "libNVVM failed to verify");
  ASSERT_CONTAINS(c.diag, "PHINode");
  compiled d = compile_ir("this is not IR", &o, false);
  ASSERT(!d.ok);
  ASSERT_CONTAINS(d.diag, "libNVVM failed to verify");
}

TEST(libdevice_linked_lazily) {
  require_nvvm();
  nbc_compile_options_t o = opts();
  compiled c = compile_ir(math_ir, &o, true);
  if (!c.ok) TEST_FAIL_("%s", c.diag);
  ASSERT(!strstr(c.out.code, ".extern .func"));
  expect_ptxas(c.out.code, c.out.size, 1);
  nbc__nvvm_output_free(&c.out);
  /* Without libdevice, the call stays an unresolved extern. */
  compiled d = compile_ir(math_ir, &o, false);
  ASSERT(d.ok);
  ASSERT_CONTAINS(d.out.code, ".extern .func");
  nbc__nvvm_output_free(&d.out);
}

TEST(ltoir_magic_and_link) {
  require_nvvm();
  nbc_compile_options_t o = opts();
  o.device = 0;
  o.output = NBC_OUTPUT_LTOIR;
  compiled c = compile_ir(kernel_ir, &o, false);
  if (!c.ok) TEST_FAIL_("%s", c.diag);
  ASSERT(c.out.size > 4);
  const unsigned char *b = (const unsigned char *)c.out.code;
  ASSERT(b[0] == 0xED && b[1] == 0x43 && b[2] == 0x4E && b[3] == 0x7F);
  char log[8192], *ptx = NULL;
  int rc = ptx_check_jitlink(c.out.code, c.out.size, &ptx, log, sizeof log);
  if (rc < 0) SKIP("nvJitLink not found");
  if (rc != 0) TEST_FAIL_("nvJitLink: %s", log);
  ASSERT_CONTAINS(ptx, ".entry scale");
  free(ptx);
  nbc__nvvm_output_free(&c.out);
}

TEST(unsupported_cc_is_an_error) {
  require_nvvm();
  nbc_compile_options_t o = opts();
  o.cc_major = 6;
  o.cc_minor = 1;
  compiled c = compile_ir(device_ir, &o, false);
  ASSERT(!c.ok);
  ASSERT_EQ(c.status, NBC_UNSUPPORTED_CC);
  ASSERT_STREQ(c.diag, "GPU compute capability 6.1 is not supported (requires >=7.5)");
}

TEST(missing_nvvm_explicit_path) {
  setenv("NBCUDA_NVVM", "/nonexistent/libnvvm.so", 1);
  ASSERT_STATUS(nbc__nvvm_load(), NBC_NO_NVVM);
  ASSERT_CONTAINS(nbc__nvvm_load_error(), "libNVVM cannot be found or loaded; searched:");
  ASSERT_CONTAINS(nbc__nvvm_load_error(), "/nonexistent/libnvvm.so (NBCUDA_NVVM: no such file)");
  nbc_compile_options_t o = opts();
  compiled c = compile_ir(device_ir, &o, false);
  ASSERT(!c.ok);
  ASSERT_EQ(c.status, NBC_NO_NVVM);
  ASSERT_CONTAINS(c.diag, "NBCUDA_NVVM");
}

static const char *fake_env(const char *name) {
  if (strcmp(name, "CUDA_HOME") == 0) return "/nonexistent/cudahome";
  if (strcmp(name, "CUDA_PATH") == 0) return "/nonexistent/cudapath";
  if (strcmp(name, "NBCUDA_PIP_SITE") == 0) return "/nonexistent/site1:/nonexistent/site2";
  if (strcmp(name, "HOME") == 0) return "/nonexistent/home";
  return NULL;
}

static bool never_open(void *data, const char *path) {
  (void)data;
  (void)path;
  return false;
}

static bool open_any(void *data, const char *path) {
  (void)data;
  (void)path;
  return true;
}

TEST(missing_nvvm_names_every_place) {
  char path[4096], msg[8192];
  ASSERT_EQ(nbc__nvvm_locate(fake_env, "/nonexistent/root", false, never_open, NULL, path,
                             sizeof path, msg, sizeof msg),
            1);
  const char *places[] = {
      "/nonexistent/cudahome/nvvm/lib64/libnvvm.so* (CUDA_HOME)",
      "/nonexistent/cudahome/lib64/libnvvm.so* (CUDA_HOME)",
      "/nonexistent/cudapath/nvvm/lib64/libnvvm.so* (CUDA_PATH)",
      "/nonexistent/root/usr/local/cuda/nvvm/lib64/libnvvm.so* (default toolkit)",
      "/nonexistent/root/usr/local/cuda/lib64/libnvvm.so* (default toolkit)",
      "/nonexistent/site1/nvidia/cu13/nvvm/lib64/libnvvm.so* (pip wheel)",
      "/nonexistent/site2/nvidia/cuda_nvcc/nvvm/lib64/libnvvm.so* (pip wheel)",
      "/nonexistent/root/usr/local/lib/python3*/site-packages/nvidia/cu13/nvvm/lib64",
      "/nonexistent/home/.local/lib/python3*/site-packages/nvidia/cu13/lib/libnvvm.so*",
  };
  for (size_t i = 0; i < sizeof places / sizeof places[0]; i++) ASSERT_CONTAINS(msg, places[i]);
  /* With the loader allowed, the bare names are listed too. */
  ASSERT_EQ(nbc__nvvm_locate(fake_env, "/nonexistent/root", true, never_open, NULL, path,
                             sizeof path, msg, sizeof msg),
            1);
  ASSERT_CONTAINS(msg, "libnvvm.so.4 (dynamic loader path)");
}

/* The search order: CUDA_HOME before the default toolkit. A fake toolkit in /tmp holds an
 * (empty) libnvvm.so; the opener accepts any existing file, so the first found wins. */
TEST(search_order_prefers_cuda_home) {
  char dir[] = "/tmp/nbcuda_fake_XXXXXX";
  ASSERT(mkdtemp(dir));
  char sub[256], file[300];
  snprintf(sub, sizeof sub, "%s/nvvm", dir);
  mkdir(sub, 0755);
  snprintf(sub, sizeof sub, "%s/nvvm/lib64", dir);
  mkdir(sub, 0755);
  snprintf(file, sizeof file, "%s/libnvvm.so.4", sub);
  FILE *f = fopen(file, "w");
  fclose(f);
  setenv("CUDA_HOME", dir, 1);
  unsetenv("NBCUDA_NVVM");
  char path[4096], msg[8192];
  ASSERT_EQ(nbc__nvvm_locate((nbc__getenv_fn)getenv, "", false, open_any, NULL, path,
                             sizeof path, msg, sizeof msg),
            0);
  ASSERT_STREQ(path, file);
  unlink(file);
  rmdir(sub);
  snprintf(sub, sizeof sub, "%s/nvvm", dir);
  rmdir(sub);
  rmdir(dir);
}

static void *compile_thread(void *arg) {
  (void)arg;
  nbc_compile_options_t o = opts();
  for (int i = 0; i < 5; i++) {
    compiled c = compile_ir(i % 2 ? math_ir : device_ir, &o, i % 2 == 1);
    if (!c.ok) return (void *)1;
    nbc__nvvm_output_free(&c.out);
  }
  return NULL;
}

TEST(concurrent_compiles) {
  require_nvvm();
  pthread_t t[4];
  for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, compile_thread, NULL);
  for (int i = 0; i < 4; i++) {
    void *r;
    pthread_join(t[i], &r);
    ASSERT(r == NULL);
  }
}

TEST_LIST(X(loads_and_reports_version) X(device_function_to_ptx) X(kernel_to_ptx)
              X(fastmath_options) X(opt0_changes_code) X(arch_mapping)
                  X(default_cc_from_environment) X(supported_archs_match_libnvvm)
                      X(invalid_ir_is_caught_by_verify) X(libdevice_linked_lazily)
                          X(ltoir_magic_and_link) X(unsupported_cc_is_an_error)
                              X(missing_nvvm_explicit_path) X(missing_nvvm_names_every_place)
                                  X(search_order_prefers_cuda_home) X(concurrent_compiles))
TEST_MAIN()
