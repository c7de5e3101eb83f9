/* test_cpudevice.c — the CPU device's PTX decoder and interpreter (src/cpudevice), driven
 * directly: hand-written PTX kernels run over host buffers and their results are compared
 * with the same computation in C; decode errors and faults name the instruction, the PTX
 * line, the block and the thread. (Kernels compiled by nbcuda run through the driver in
 * tests/python/test_cpu_device.py.)
 */
#include <math.h>

#include "cpudevice/ptx.h"
#include "nbcuda.h"
#include "test.h"

/* Device memory for a test: host buffers at their own addresses. */
typedef struct {
  unsigned char *base[4];
  size_t len[4];
  int n;
} buffers;

static unsigned char *resolve(void *user, uint64_t addr, size_t bytes, uint64_t *base,
                              size_t *len) {
  buffers *b = user;
  for (int i = 0; i < b->n; i++) {
    uint64_t lo = (uint64_t)(uintptr_t)b->base[i];
    if (addr >= lo && addr - lo <= b->len[i] && bytes <= b->len[i] - (addr - lo)) {
      *base = lo;
      *len = b->len[i];
      return b->base[i] + (addr - lo);
    }
  }
  return NULL;
}

static nbc__ptx_module *load_ok(const char *ptx) {
  nbc__ptx_module *m = NULL;
  char msg[512] = "";
  if (!nbc__ptx_load(ptx, &m, msg, sizeof msg)) TEST_FAIL_("load failed: %s", msg);
  return m;
}

/* Runs entry 0 of m over grid x block (1-D) with the given parameter bytes. */
static int run(nbc__ptx_module *m, const char *entry, unsigned grid, unsigned block,
               const void *params, size_t psize, buffers *b, char *msg, size_t msize) {
  nbc__ptx_launch L = {.grid = {grid, 1, 1},
                       .block = {block, 1, 1},
                       .params = params,
                       .param_size = psize,
                       .resolve = resolve,
                       .user = b};
  int e = nbc__ptx_find_entry(m, entry);
  if (e < 0) TEST_FAIL_("no entry %s", entry);
  return nbc__ptx_run(m, e, &L, msg, msize);
}

#define HEADER ".version 8.0\n.target sm_90\n.address_size 64\n"

/* out[i] = a * x[i] + y[i] in f32 with fma, for i < n (guarded). */
static const char saxpy_ptx[] = HEADER
    ".visible .entry saxpy(.param .u64 out, .param .u64 x, .param .u64 y,\n"
    "                      .param .f32 a, .param .u32 n)\n"
    "{\n"
    "  .reg .pred %p<2>; .reg .f32 %f<5>; .reg .b32 %r<6>; .reg .b64 %rd<8>;\n"
    "  ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [x]; ld.param.u64 %rd3, [y];\n"
    "  ld.param.f32 %f1, [a]; ld.param.u32 %r1, [n];\n"
    "  mov.u32 %r2, %tid.x; mov.u32 %r3, %ntid.x; mov.u32 %r4, %ctaid.x;\n"
    "  mad.lo.s32 %r5, %r4, %r3, %r2;\n"
    "  setp.ge.u32 %p1, %r5, %r1;\n"
    "  @%p1 bra $L_done;\n"
    "  mul.wide.u32 %rd4, %r5, 4;\n"
    "  add.s64 %rd5, %rd2, %rd4; ld.global.f32 %f2, [%rd5];\n"
    "  add.s64 %rd6, %rd3, %rd4; ld.global.f32 %f3, [%rd6];\n"
    "  fma.rn.f32 %f4, %f1, %f2, %f3;\n"
    "  add.s64 %rd7, %rd1, %rd4; st.global.f32 [%rd7], %f4;\n"
    "$L_done:\n"
    "  ret;\n"
    "}\n";

TEST(saxpy_matches_c) {
  enum { N = 1000 };
  float *x = malloc(N * 4), *y = malloc(N * 4), *out = malloc(N * 4);
  for (int i = 0; i < N; i++) {
    x[i] = (float)i * 0.37f - 11.0f;
    y[i] = (float)(i % 17) * 1.5f;
    out[i] = -1;
  }
  buffers b = {{(void *)x, (void *)y, (void *)out}, {N * 4, N * 4, N * 4}, 3};
  struct {
    uint64_t out, x, y;
    float a;
    uint32_t n;
  } p = {(uintptr_t)out, (uintptr_t)x, (uintptr_t)y, 2.5f, N};
  nbc__ptx_module *m = load_ok(saxpy_ptx);
  char msg[512];
  ASSERT(run(m, "saxpy", (N + 127) / 128, 128, &p, sizeof p, &b, msg, sizeof msg));
  for (int i = 0; i < N; i++)
    ASSERT(out[i] == fmaf(2.5f, x[i], y[i]));
  nbc__ptx_free(m);
  free(x), free(y), free(out);
}

/* A block-wide tree sum in shared memory with bar.sync; thread 0 writes the block's sum. */
static const char block_sum_ptx[] = HEADER
    ".shared .align 4 .b8 buf[1024];\n"
    ".visible .entry block_sum(.param .u64 in, .param .u64 out)\n"
    "{\n"
    "  .reg .pred %p<3>; .reg .b32 %r<12>; .reg .b64 %rd<8>;\n"
    "  ld.param.u64 %rd1, [in]; ld.param.u64 %rd2, [out];\n"
    "  mov.u32 %r1, %tid.x; mov.u32 %r2, %ntid.x; mov.u32 %r3, %ctaid.x;\n"
    "  mad.lo.s32 %r4, %r3, %r2, %r1;\n"
    "  mul.wide.u32 %rd3, %r4, 4; add.s64 %rd4, %rd1, %rd3; ld.global.u32 %r5, [%rd4];\n"
    "  mov.u32 %r6, buf; shl.b32 %r7, %r1, 2; add.s32 %r8, %r6, %r7;\n"
    "  st.shared.u32 [%r8], %r5;\n"
    "  bar.sync 0;\n"
    "  shr.u32 %r9, %r2, 1;\n"
    "$L_loop:\n"
    "  setp.eq.u32 %p1, %r9, 0; @%p1 bra $L_end;\n"
    "  setp.lt.u32 %p2, %r1, %r9; @!%p2 bra $L_skip;\n"
    "  shl.b32 %r10, %r9, 2; add.s32 %r10, %r8, %r10; ld.shared.u32 %r10, [%r10];\n"
    "  ld.shared.u32 %r11, [%r8]; add.s32 %r11, %r11, %r10; st.shared.u32 [%r8], %r11;\n"
    "$L_skip:\n"
    "  bar.sync 0;\n"
    "  shr.u32 %r9, %r9, 1; bra.uni $L_loop;\n"
    "$L_end:\n"
    "  setp.ne.u32 %p1, %r1, 0; @%p1 bra $L_ret;\n"
    "  ld.shared.u32 %r11, [buf];\n"
    "  mul.wide.u32 %rd5, %r3, 4; add.s64 %rd6, %rd2, %rd5; st.global.u32 [%rd6], %r11;\n"
    "$L_ret:\n"
    "  ret;\n"
    "}\n";

TEST(barrier_orders_shared_memory) {
  enum { BLOCK = 256, GRID = 3 };
  uint32_t *in = malloc(BLOCK * GRID * 4), *out = calloc(GRID, 4);
  for (int i = 0; i < BLOCK * GRID; i++)
    in[i] = (uint32_t)(i * 7 + 3);
  buffers b = {{(void *)in, (void *)out}, {BLOCK * GRID * 4, GRID * 4}, 2};
  uint64_t p[2] = {(uintptr_t)in, (uintptr_t)out};
  nbc__ptx_module *m = load_ok(block_sum_ptx);
  char msg[512];
  ASSERT(run(m, "block_sum", GRID, BLOCK, p, sizeof p, &b, msg, sizeof msg));
  for (int g = 0; g < GRID; g++) {
    uint32_t want = 0;
    for (int i = 0; i < BLOCK; i++)
      want += in[g * BLOCK + i];
    ASSERT_EQ(out[g], want);
  }
  nbc__ptx_free(m);
  free(in), free(out);
}

/* A warp sum with shfl.sync.bfly; every lane writes the total; a call with .param adds 1. */
static const char warp_sum_ptx[] = HEADER
    ".func (.param .b32 ret) plus_one(.param .b32 v)\n"
    "{\n"
    "  .reg .b32 %r<3>;\n"
    "  ld.param.b32 %r1, [v]; add.s32 %r2, %r1, 1; st.param.b32 [ret], %r2; ret;\n"
    "}\n"
    ".visible .entry warp_sum(.param .u64 out)\n"
    "{\n"
    "  .reg .b32 %r<8>; .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [out]; mov.u32 %r1, %tid.x; mul.lo.s32 %r2, %r1, %r1;\n"
    "  shfl.sync.bfly.b32 %r3, %r2, 16, 31, -1; add.s32 %r2, %r2, %r3;\n"
    "  shfl.sync.bfly.b32 %r3, %r2, 8, 31, -1; add.s32 %r2, %r2, %r3;\n"
    "  shfl.sync.bfly.b32 %r3, %r2, 4, 31, -1; add.s32 %r2, %r2, %r3;\n"
    "  shfl.sync.bfly.b32 %r3, %r2, 2, 31, -1; add.s32 %r2, %r2, %r3;\n"
    "  shfl.sync.bfly.b32 %r3, %r2, 1, 31, -1; add.s32 %r2, %r2, %r3;\n"
    "  { .param .b32 a0; .param .b32 r0; st.param.b32 [a0], %r2;\n"
    "    call.uni (r0), plus_one, (a0); ld.param.b32 %r4, [r0]; }\n"
    "  mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], %r4;\n"
    "  ret;\n"
    "}\n";

TEST(warp_shuffle_and_call) {
  uint32_t out[64];
  buffers b = {{(void *)out}, {sizeof out}, 1};
  uint64_t p = (uintptr_t)out;
  nbc__ptx_module *m = load_ok(warp_sum_ptx);
  char msg[512];
  ASSERT(run(m, "warp_sum", 1, 64, &p, sizeof p, &b, msg, sizeof msg));
  for (int w = 0; w < 2; w++) {
    uint32_t want = 1;
    for (int i = 0; i < 32; i++)
      want += (uint32_t)((w * 32 + i) * (w * 32 + i));
    for (int i = 0; i < 32; i++)
      ASSERT_EQ(out[w * 32 + i], want);
  }
  nbc__ptx_free(m);
}

TEST(unsupported_instruction_is_a_load_error) {
  static const char ptx[] = HEADER
      ".visible .entry k(.param .u64 out)\n"
      "{\n"
      "  .reg .b32 %r<3>;\n"
      "  mov.u32 %r1, 1;\n"
      "  tex.1d.v4.s32.s32 {%r1, %r1, %r1, %r1}, [tex, {%r2}];\n"
      "  ret;\n"
      "}\n";
  nbc__ptx_module *m = NULL;
  char msg[512] = "";
  ASSERT(!nbc__ptx_load(ptx, &m, msg, sizeof msg));
  ASSERT_STREQ(msg, "ptx line 8: unsupported instruction 'tex.1d.v4.s32.s32'");
}

TEST(out_of_bounds_access_names_thread_and_line) {
  float x[10], y[10], out[10];
  buffers b = {{(void *)x, (void *)y, (void *)out}, {sizeof x, sizeof y, sizeof out}, 3};
  for (int i = 0; i < 10; i++)
    x[i] = y[i] = 1;
  struct {
    uint64_t out, x, y;
    float a;
    uint32_t n;
  } p = {(uintptr_t)out, (uintptr_t)x, (uintptr_t)y, 1.0f, 12}; /* n past the arrays */
  nbc__ptx_module *m = load_ok(saxpy_ptx);
  char msg[512] = "";
  ASSERT(!run(m, "saxpy", 1, 32, &p, sizeof p, &b, msg, sizeof msg));
  ASSERT_CONTAINS(msg, "kernel 'saxpy' block (0,0,0) thread (10,0,0): invalid global memory "
                       "access at address 0x");
  ASSERT_CONTAINS(msg, "(ptx line 15)");
  nbc__ptx_free(m);
}

/* Through the host layer on the test driver with execution on: the load fails and the
 * decoder's message is in nbc_last_error(). */
TEST(load_error_reaches_the_caller_through_the_driver) {
  if (!getenv("NBCUDA_TESTDRIVER")) SKIP("needs the test driver");
  setenv("NBCUDA_TESTDRIVER_EXECUTE", "1", 1);
  static const char ptx[] = HEADER
      ".visible .entry k()\n"
      "{\n"
      "  .reg .b32 %r<2>;\n"
      "  suld.b.1d.b32.trap {%r1}, [s, {%r1}];\n"
      "  ret;\n"
      "}\n";
  nbc_module_t *m = NULL;
  ASSERT(nbc_module_load_data(ptx, sizeof ptx, NBC_IMAGE_PTX, &m) != NBC_OK);
  ASSERT_CONTAINS(nbc_last_error(), "CUDA_ERROR_INVALID_PTX");
  ASSERT_CONTAINS(nbc_last_error(),
                  "nbcuda CPU device: ptx line 7: unsupported instruction 'suld.b.1d.b32.trap'");
}

/* cvt to f16 rounds to nearest even (from f32 and f64) and back exactly. */
TEST(half_conversions_round_to_nearest_even) {
  static const char ptx[] = HEADER
      ".visible .entry h(.param .u64 in, .param .u64 out)\n"
      "{\n"
      "  .reg .b16 %rs<2>; .reg .f32 %f<3>; .reg .b32 %r<2>; .reg .b64 %rd<8>;\n"
      "  ld.param.u64 %rd1, [in]; ld.param.u64 %rd2, [out]; mov.u32 %r1, %tid.x;\n"
      "  mul.wide.u32 %rd3, %r1, 4; add.s64 %rd4, %rd1, %rd3; ld.global.f32 %f1, [%rd4];\n"
      "  cvt.rn.f16.f32 %rs1, %f1; cvt.f32.f16 %f2, %rs1;\n"
      "  add.s64 %rd5, %rd2, %rd3; st.global.f32 [%rd5], %f2;\n"
      "  ret;\n"
      "}\n";
  /* 1 + 2^-11 is halfway between 1 and the next half (1 + 2^-10): ties to even (1);
   * 1 + 3 * 2^-11 ties up to 1 + 2^-9; 65520 rounds to infinity; 2^-25 is half the
   * smallest subnormal: ties to even (0); 3 * 2^-25 rounds to 2 * 2^-24. */
  float in[6] = {1.0f + ldexpf(1, -11), 1.0f + 3 * ldexpf(1, -11), 65520.0f, ldexpf(1, -25),
                 3 * ldexpf(1, -25), -2.5f};
  float want[6] = {1.0f, 1.0f + ldexpf(1, -9), INFINITY, 0.0f, ldexpf(1, -23), -2.5f};
  float out[6];
  buffers b = {{(void *)in, (void *)out}, {sizeof in, sizeof out}, 2};
  uint64_t p[2] = {(uintptr_t)in, (uintptr_t)out};
  nbc__ptx_module *m = load_ok(ptx);
  char msg[512];
  ASSERT(run(m, "h", 1, 6, p, sizeof p, &b, msg, sizeof msg));
  for (int i = 0; i < 6; i++)
    ASSERT(out[i] == want[i]);
  nbc__ptx_free(m);
}

TEST_LIST(X(saxpy_matches_c) X(barrier_orders_shared_memory) X(warp_shuffle_and_call)
              X(unsupported_instruction_is_a_load_error)
                  X(out_of_bounds_access_names_thread_and_line)
                      X(half_conversions_round_to_nearest_even)
                          X(load_error_reaches_the_caller_through_the_driver))
TEST_MAIN()
