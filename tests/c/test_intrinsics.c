/* test_intrinsics.c — numba-cuda's warp, vote, match, barrier, fence, bit, math and timer
 * intrinsics, the atomics beyond add/sub/max/min and the cache-hinted loads and stores
 * (ldcg, stwt, ...): the return types numba-cuda gives (checked against numba-cuda's
 * compile_ptx when they were written), the PTX instructions they become, errors with their
 * text for arguments numba refuses, and every case of tests/gpu/cases/warp_intrinsics.py
 * through ptxas -arch=sm_90.
 */
#include <glob.h>

#include "compiler/compiler.h"
#include "front_util.h"
#include "nvvm_util.h"
#include "ptx_check.h"
#include "test.h"

static nbc_compile_options_t options(bool device) {
  nbc_compile_options_t o;
  nbc_compile_options_init(&o);
  o.cc_major = 9;
  o.cc_minor = 0;
  o.device = device;
  if (!device) o.abi = NBC_ABI_NUMBA;
  return o;
}

/* Compiles `def f(<params>):\n    <body>` and checks the return type, that ptxas accepts
 * the PTX and that it contains `insn` (when not NULL). */
static void check(const char *params, const char *body, const char *sig, const char *restype,
                  const char *insn) {
  char src[2048];
  snprintf(src, sizeof src, "from numba import cuda\ndef f(%s):\n    %s\n", params, body);
  nbc_compile_options_t o = options(true);
  nbc_source_t s = {src, 0, "intr.py", 1, 0};
  nbc_compile_result_t *r = NULL;
  if (nbc_compile(&s, "f", sig, &o, NULL, &r) != NBC_OK)
    TEST_FAIL_("%s %s: %s", body, sig, nbc_last_error());
  const char *rt = nbc_compile_result_return_type(r);
  if (strcmp(rt, restype) != 0)
    TEST_FAIL_("%s %s: return type %s, numba-cuda gives %s", body, sig, rt, restype);
  size_t size;
  const char *ptx = nbc_compile_result_code(r, &size);
  char log[8192];
  int rc = ptx_check_ptxas(ptx, size, 1, log, sizeof log);
  if (rc < 0) SKIP("ptxas not found");
  if (rc != 0) TEST_FAIL_("%s %s: ptxas failed:\n%s", body, sig, log);
  if (insn && !strstr(ptx, insn)) TEST_FAIL_("%s %s: no %s in\n%s", body, sig, insn, ptx);
  nbc_compile_result_destroy(r);
}

/* The compile fails and the message contains `text`. */
static void refused(const char *params, const char *body, const char *sig, const char *text) {
  char src[2048];
  snprintf(src, sizeof src, "from numba import cuda\ndef f(%s):\n    %s\n", params, body);
  nbc_compile_options_t o = options(true);
  nbc_source_t s = {src, 0, "intr.py", 1, 0};
  nbc_compile_result_t *r = NULL;
  if (nbc_compile(&s, "f", sig, &o, NULL, &r) == NBC_OK)
    TEST_FAIL_("%s %s compiled; numba-cuda refuses it", body, sig);
  if (!strstr(nbc_last_error(), text))
    TEST_FAIL_("%s %s: expected '%s' in: %s", body, sig, text, nbc_last_error());
}

TEST(warp_shuffles) {
  require_nvvm();
  check("m, v, l", "return cuda.shfl_sync(m, v, l)", "(uint32, int32, int32)", "int32",
        "shfl.sync.idx.b32");
  check("m, v, l", "return cuda.shfl_sync(m, v, l)", "(int64, int64, int64)", "int64",
        "shfl.sync.idx.b32");
  check("m, v, l", "return cuda.shfl_up_sync(m, v, l)", "(uint32, float32, int32)", "float32",
        "shfl.sync.up.b32");
  check("m, v, l", "return cuda.shfl_down_sync(m, v, l)", "(uint32, float64, int32)", "float64",
        "shfl.sync.down.b32");
  check("m, v, l", "return cuda.shfl_xor_sync(m, v, l)", "(uint32, float32, int32)", "float32",
        "shfl.sync.bfly.b32");
  refused("m, v, l", "return cuda.shfl_sync(m, v, l)", "(uint32, uint32, int32)",
          "error: cuda.shfl_sync only supports 32- and 64-bit ints and floats, not uint32");
  refused("m, v, l", "return cuda.shfl_sync(m, v, l)", "(uint32, bool, int32)",
          "only supports 32- and 64-bit ints and floats, not bool");
  refused("m, v, l", "return cuda.shfl_sync(m, v, l)", "(float64, int32, int32)",
          "error: cuda.shfl_sync() mask must be an integer, not float64");
  refused("m, v, l", "return cuda.shfl_down_sync(m, v, l)", "(int64, int32, float32)",
          "error: cuda.shfl_down_sync() delta must be an integer, not float32");
  refused("m, v", "return cuda.shfl_sync(m, v)", "(int64, int32)",
          "error: Invalid use of cuda.shfl_sync with parameters (int64, int32)");
}

TEST(warp_votes_and_masks) {
  require_nvvm();
  check("m, p", "return cuda.ballot_sync(m, p)", "(uint32, bool)", "int32",
        "vote.sync.ballot.b32");
  check("m, p", "return cuda.ballot_sync(m, p)", "(int64, int64)", "int32",
        "vote.sync.ballot.b32");
  check("m, p", "return cuda.all_sync(m, p)", "(uint32, bool)", "bool", "vote.sync.all.pred");
  check("m, p", "return cuda.any_sync(m, p)", "(int64, int32)", "bool", "vote.sync.any.pred");
  check("m, p", "return cuda.eq_sync(m, p)", "(uint32, bool)", "bool", "vote.sync.uni.pred");
  check("", "return cuda.activemask()", "()", "uint32", "activemask.b32");
  check("", "return cuda.lanemask_lt()", "()", "uint32", "%lanemask_lt");
  check("", "return cuda.laneid", "()", "int32", "%laneid");
  check("", "return cuda.warpsize", "()", "int32", "WARP_SZ");
  check("", "cuda.syncwarp()", "()", "none", "bar.warp.sync");
  check("m", "cuda.syncwarp(m)", "(int64,)", "none", "bar.warp.sync");
  check("m", "cuda.syncwarp(mask=m)", "(uint32,)", "none", "bar.warp.sync");
  refused("m, p", "return cuda.ballot_sync(m, p)", "(int64, float64)",
          "error: Predicate must be an integer or boolean. Got float64");
  refused("m, p", "return cuda.all_sync(m, p)", "(float32, bool)",
          "error: Mask type must be an integer. Got float32");
  refused("m", "return cuda.activemask(m)", "(int64,)",
          "error: Invalid use of cuda.activemask with parameters (int64)");
  refused("m", "cuda.syncwarp(lanes=m)", "(int64,)",
          "error: cuda.syncwarp() got an unexpected keyword argument 'lanes'");
}

TEST(barriers_and_fences) {
  require_nvvm();
  check("", "cuda.threadfence()", "()", "none", "membar.gl");
  check("", "cuda.threadfence_block()", "()", "none", "membar.cta");
  check("", "cuda.threadfence_system()", "()", "none", "membar.sys");
  check("p", "return cuda.syncthreads_count(p)", "(int32,)", "int32", "bar.red.popc.u32");
  check("p", "return cuda.syncthreads_and(p)", "(int64,)", "int32", "bar.red.and.pred");
  check("p", "return cuda.syncthreads_or(p)", "(uint8,)", "int32", "bar.red.or.pred");
  refused("p", "return cuda.syncthreads_count(p)", "(bool,)",
          "error: Invalid use of cuda.syncthreads_count with parameters (bool)");
}

TEST(bit_and_math_intrinsics) {
  require_nvvm();
  check("x", "return cuda.popc(x)", "(int8,)", "int8", "popc.b32");
  check("x", "return cuda.popc(x)", "(uint64,)", "uint64", "popc.b64");
  check("x", "return cuda.popc(x)", "(bool,)", "int8", "popc.b32");
  check("x", "return cuda.brev(x)", "(int32,)", "uint32", "brev.b32");
  check("x", "return cuda.brev(x)", "(int64,)", "uint32", "brev.b32"); /* numba's choice */
  check("x", "return cuda.brev(x)", "(uint64,)", "uint64", "brev.b64");
  check("x", "return cuda.clz(x)", "(int32,)", "int32", "clz.b32");
  check("x", "return cuda.clz(x)", "(int64,)", "int64", "clz.b64");
  check("x", "return cuda.ffs(x)", "(int32,)", "uint32", NULL);
  check("x", "return cuda.ffs(x)", "(uint64,)", "uint32", NULL);
  check("a, b, c", "return cuda.fma(a, b, c)", "(float32, float32, float32)", "float32",
        "fma.rn.f32");
  check("a, b, c", "return cuda.fma(a, b, c)", "(float32, float64, float32)", "float64",
        "fma.rn.f64");
  check("a, b, c", "return cuda.fma(a, b, c)", "(int64, int64, int64)", "float64",
        "fma.rn.f64");
  check("x", "return cuda.cbrt(x)", "(float32,)", "float32", NULL);
  check("x", "return cuda.cbrt(x)", "(int64,)", "float64", NULL);
  check("p, a, b", "return cuda.selp(p, a, b)", "(bool, int64, int64)", "int64", "selp.b64");
  check("p, a, b", "return cuda.selp(p, a, b)", "(bool, float32, float32)", "float32",
        "selp.f32");
  refused("x", "return cuda.ffs(x)", "(int16,)",
          "error: cuda.ffs() of int16 is not supported (numba-cuda has no int16 lowering)");
  refused("p, a, b", "return cuda.selp(p, a, b)", "(bool, int32, int64)",
          "error: Invalid use of cuda.selp with parameters (bool, int32, int64)");
  refused("p, a, b", "return cuda.selp(p, a, b)", "(int64, float64, float64)",
          "error: cuda.selp() predicate must be a boolean, not int64");
  refused("a, b", "return cuda.fma(a, b)", "(float64, float64)",
          "error: Invalid use of cuda.fma with parameters (float64, float64)");
  refused("a", "return cuda.popc(a)", "(float64[:],)",
          "error: Invalid use of cuda.popc with parameters (array(float64, 1d, A))");
}

TEST(more_atomics) {
  require_nvvm();
  check("a, v", "return cuda.atomic.exch(a, 0, v)", "(int32[::1], int32)", "int32",
        "atom.exch.b32");
  check("a, v", "return cuda.atomic.and_(a, 0, v)", "(uint64[::1], int64)", "uint64",
        "atom.and.b64");
  check("a, v", "return cuda.atomic.or_(a, 0, v)", "(int32[::1], int64)", "int32",
        "atom.or.b32");
  check("a, v", "return cuda.atomic.xor(a, (0, 1), v)", "(int64[:, ::1], int64)", "int64",
        "atom.xor.b64");
  check("a, v", "return cuda.atomic.inc(a, 0, v)", "(uint32[::1], uint32)", "uint32",
        "atom.inc.u32");
  check("a, v", "return cuda.atomic.dec(a, 0, v)", "(uint32[::1], int64)", "uint32",
        "atom.dec.u32");
  check("a, v", "return cuda.atomic.inc(a, 0, v)", "(uint64[::1], uint64)", "uint64",
        "atom.cas.b64");
  check("a, v", "return cuda.atomic.dec(a, 0, v)", "(uint64[::1], uint64)", "uint64",
        "atom.cas.b64");
  check("a, o, v", "return cuda.atomic.cas(a, 0, o, v)", "(int32[::1], int32, int32)", "int32",
        "atom.cas.b32");
  check("a, o, v", "return cuda.atomic.cas(a, (1, 1), o, v)", "(uint64[:, :], int64, int64)",
        "uint64", "atom.cas.b64");
  check("a, o, v", "return cuda.atomic.compare_and_swap(a, o, v)", "(int64[::1], int64, int64)",
        "int64", "atom.cas.b64");
  check("a, v", "return cuda.atomic.nanmax(a, 0, v)", "(float64[::1], float64)", "float64",
        "atom.cas.b64");
  check("a, v", "return cuda.atomic.nanmin(a, 0, v)", "(float32[::1], float32)", "float32",
        "atom.cas.b32");
  check("a, v", "return cuda.atomic.nanmax(a, 0, v)", "(int32[::1], int32)", "int32",
        "atom.max.s32");
  check("a, v", "return cuda.atomic.nanmin(a, 0, v)", "(uint64[::1], uint64)", "uint64",
        "atom.min.u64");
  refused("a, v", "return cuda.atomic.exch(a, 0, v)", "(float32[::1], float32)",
          "error: cuda.atomic.exch() of an array of float32 is not supported");
  refused("a, v", "return cuda.atomic.inc(a, 0, v)", "(int32[::1], int32)",
          "error: cuda.atomic.inc() of an array of int32 is not supported");
  refused("a, o, v", "return cuda.atomic.cas(a, 0, o, v)", "(float64[::1], float64, float64)",
          "error: cuda.atomic.cas() of an array of float64 is not supported");
  refused("a, v", "return cuda.atomic.cas(a, 0, v)", "(int32[::1], int32)",
          "error: Invalid use of cuda.atomic.cas with parameters (array(int32, 1d, C), int64, "
          "int32)");
  refused("a, o, v", "return cuda.atomic.compare_and_swap(a, o, v)",
          "(int32[:, ::1], int32, int32)",
          "error: Invalid use of cuda.atomic.compare_and_swap");
  refused("a, v", "return cuda.atomic.and_(a, 0, v)", "(int16[::1], int16)",
          "error: cuda.atomic.and_() of an array of int16 is not supported");
  refused("a, v", "return cuda.atomic.add(a, 0, v)", "(int64[::1], complex128)",
          "error: cannot convert complex128 to int64 in cuda.atomic.add()");
}

TEST(match_and_nanosleep) {
  require_nvvm();
  /* numba's four cases pick the width: uint32 and uint64 values go to int64/float64. */
  check("m, v", "return cuda.match_any_sync(m, v)", "(uint32, int32)", "int32",
        "match.any.sync.b32");
  check("m, v", "return cuda.match_any_sync(m, v)", "(int32, int64)", "int32",
        "match.any.sync.b64");
  check("m, v", "return cuda.match_any_sync(m, v)", "(uint32, float32)", "int32",
        "match.any.sync.b32");
  check("m, v", "return cuda.match_any_sync(m, v)", "(int64, uint32)", "int32",
        "match.any.sync.b64");
  check("m, v", "return cuda.match_any_sync(m, v)", "(uint32, uint64)", "int32",
        "cvt.rn.f64.u64");
  check("m, v", "return cuda.match_any_sync(m, v)", "(uint32, float16)", "int32",
        "cvt.f32.f16");
  check("m, v", "return cuda.match_any_sync(m, v)", "(float64, bool)", "int32",
        "match.any.sync.b32");
  check("m, v", "return cuda.match_all_sync(m, v)", "(uint32, int32)", "Tuple(int32, bool)",
        "match.all.sync.b32");
  check("m, v", "return cuda.match_all_sync(m, v)", "(uint32, float64)", "Tuple(int32, bool)",
        "match.all.sync.b64");
  check("m, v", "mask, pred = cuda.match_all_sync(m, v)\n    return mask if pred else -1",
        "(uint32, int64)", "int64", "match.all.sync.b64");
  check("n", "cuda.nanosleep(n)", "(uint32,)", "none", "nanosleep.u32");
  check("n", "cuda.nanosleep(n)", "(int64,)", "none", "nanosleep.u32");
  check("n", "cuda.nanosleep(n)", "(float64,)", "none", "nanosleep.u32");
  refused("m, v", "return cuda.match_any_sync(m, v)", "(uint32, complex64)",
          "error: Invalid use of cuda.match_any_sync with parameters (uint32, complex64)");
  refused("m", "return cuda.match_all_sync(m)", "(uint32,)",
          "error: Invalid use of cuda.match_all_sync with parameters (uint32)");
  refused("m, a", "return cuda.match_any_sync(m, a)", "(uint32, int32[:])",
          "error: Invalid use of cuda.match_any_sync with parameters (uint32, array(int32, 1d, "
          "A))");
  refused("", "cuda.nanosleep()", "()",
          "error: Invalid use of cuda.nanosleep with parameters ()");
}

/* numba's cache-hinted loads and stores (cache_hints.py): ld<op> returns the dtype, st<op>
 * None; each is its ld.global.<op> / st.global.<op> of the element's width. */
TEST(cache_hints) {
  require_nvvm();
  check("a, i", "return cuda.ldca(a, i)", "(int32[::1], int64)", "int32", "ld.global.ca.b32");
  check("a, i", "return cuda.ldcg(a, i)", "(uint8[:], int32)", "uint8", "ld.global.cg.b8");
  check("a, i", "return cuda.ldcs(a, i)", "(float16[::1], uint64)", "float16",
        "ld.global.cs.b16");
  check("a, i, j", "return cuda.ldlu(a, (i, j))", "(float64[:, ::1], int64, int64)", "float64",
        "ld.global.lu.b64");
  check("a", "return cuda.ldcv(a, (-1, -2))", "(float32[::1, :],)", "float32",
        "ld.global.cv.b32");
  check("a", "return cuda.ldcg(a, cuda.grid(2))", "(int16[:, :],)", "int16",
        "ld.global.cg.b16");
  check("a, i, v", "cuda.stcg(a, i, v)", "(int8[::1], int64, float64)", "none",
        "st.global.cg.b8");
  check("a, i, v", "return cuda.stcs(a, i, v)", "(uint16[:], int64, bool)", "none",
        "st.global.cs.b16");
  check("a, v", "cuda.stwb(a, -1, v)", "(float32[::1], int64)", "none", "st.global.wb.b32");
  check("a, v", "t = (1, -1)\n    cuda.stwt(a, t, v)", "(uint64[:, :], float32)", "none",
        "st.global.wt.b64");
  check("a, v", "cuda.stwt(value=v, i=0, array=a)", "(float64[::1], float16)", "none",
        "st.global.wt.b64");
  check("a", "return cuda.ldcg(a, i=0)", "(int64[::1],)", "int64", "ld.global.cg.b64");
  check("a, b", "cuda.stcs(b, 0, cuda.ldcs(a, 0))", "(float16[::1], float16[::1])", "none",
        "st.global.cs.b16");
}

/* A kernel with the nine functions over every dtype they take, 1-d and 2-d, with negative
 * and tuple indices: ptxas accepts it and it has each instruction of the element's width. */
TEST(cache_hints_every_dtype_in_a_kernel) {
  require_nvvm();
  static const struct {
    const char *name;
    int bits;
  } dtypes[] = {{"int8", 8},     {"int16", 16},   {"int32", 32},  {"int64", 64},
                {"uint8", 8},    {"uint16", 16},  {"uint32", 32}, {"uint64", 64},
                {"float16", 16}, {"float32", 32}, {"float64", 64}};
  static const char *const ops[] = {"ld.global.ca", "ld.global.cg", "ld.global.cs",
                                    "ld.global.lu", "ld.global.cv", "st.global.cg",
                                    "st.global.cs", "st.global.wb", "st.global.wt"};
  const char *src = "from numba import cuda\n"
                    "def k(a, b, c):\n"
                    "    i = cuda.grid(1)\n"
                    "    if i < a.size:\n"
                    "        cuda.stcg(b, i, cuda.ldca(a, i))\n"
                    "        cuda.stcs(b, -1 - i, cuda.ldcg(a, -1))\n"
                    "        cuda.stwb(c, (i, -1), cuda.ldcs(a, i))\n"
                    "        cuda.stwt(c, (0, i), cuda.ldcv(c, (-1, i)))\n"
                    "        x, y = cuda.grid(2)\n"
                    "        cuda.stwt(c, cuda.grid(2), cuda.ldlu(c, (y, x)))\n";
  nbc_compile_options_t o = options(false);
  nbc_source_t s = {src, 0, "hints.py", 1, 0};
  for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++) {
    char sig[128], insn[64];
    const char *t = dtypes[d].name;
    snprintf(sig, sizeof sig, "void(%s[:], %s[::1], %s[:, :])", t, t, t);
    nbc_compile_result_t *r = NULL;
    if (nbc_compile(&s, "k", sig, &o, NULL, &r) != NBC_OK)
      TEST_FAIL_("%s: %s", sig, nbc_last_error());
    size_t size;
    const char *ptx = nbc_compile_result_code(r, &size);
    char log[8192];
    int rc = ptx_check_ptxas(ptx, size, 0, log, sizeof log);
    if (rc < 0) SKIP("ptxas not found");
    if (rc != 0) TEST_FAIL_("%s: ptxas failed:\n%s", sig, log);
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
      snprintf(insn, sizeof insn, "%s.b%d ", ops[k], dtypes[d].bits);
      if (!strstr(ptx, insn)) TEST_FAIL_("%s: no %s in\n%s", sig, insn, ptx);
    }
    nbc_compile_result_destroy(r);
  }
}

/* The IR: the asm operand is the integer its constraint names (8-bit elements in an i32),
 * floats bitcast; an index that may be negative wraps around, one known non-negative
 * (cuda.grid, a constant) does not. */
TEST(cache_hints_ir) {
  nbc_compile_options_t o = options(true);
  o.output = NBC_OUTPUT_NVVM_IR;
  const char *src = "from numba import cuda\n"
                    "def ld8(a, i):\n    return cuda.ldcg(a, i)\n"
                    "def st32(a, v):\n    cuda.stwt(a, cuda.grid(1), v)\n"
                    "def ld64(a):\n    return cuda.ldcv(a, (0, 1))\n";
  nbc_source_t s = {src, 0, "ir.py", 1, 0};
  nbc_compile_result_t *r = NULL;
  ASSERT_OK(nbc_compile(&s, "ld8", "(int8[::1], int64)", &o, NULL, &r));
  const char *ir = nbc_compile_result_code(r, NULL);
  ASSERT_CONTAINS(ir, "call i32 asm \"ld.global.cg.b8 $0, [$1];\", \"=r,l\"(i8* ");
  ASSERT_CONTAINS(ir, "trunc i32 ");
  ASSERT_CONTAINS(ir, "icmp slt i64 ");
  nbc_compile_result_destroy(r);
  ASSERT_OK(nbc_compile(&s, "st32", "(float32[::1], float64)", &o, NULL, &r));
  ir = nbc_compile_result_code(r, NULL);
  ASSERT_CONTAINS(ir, "bitcast float ");
  ASSERT_CONTAINS(ir,
                  "call void asm \"st.global.wt.b32 [$0], $1;\", \"l,r,~{memory}\"(float* ");
  ASSERT(!strstr(ir, "icmp slt"));
  nbc_compile_result_destroy(r);
  ASSERT_OK(nbc_compile(&s, "ld64", "(float64[:, :],)", &o, NULL, &r));
  ir = nbc_compile_result_code(r, NULL);
  ASSERT_CONTAINS(ir, "call i64 asm \"ld.global.cv.b64 $0, [$1];\", \"=l,l\"(double* ");
  ASSERT_CONTAINS(ir, "bitcast i64 ");
  ASSERT(!strstr(ir, "icmp slt"));
  nbc_compile_result_destroy(r);
}

/* What numba-cuda refuses, with its messages (its _validate_arguments and _validate_bitwidth;
 * a value it cannot cast fails numba's lowering and is a typing error here). */
TEST(cache_hints_refused) {
  require_nvvm();
  refused("a", "return cuda.ldcg(a, 0)", "(complex64[::1],)",
          "error: ldcg requires array of integer or float type, got complex64");
  refused("a", "cuda.stwt(a, 0, True)", "(bool[::1],)",
          "error: stwt requires array of integer or float type, got bool");
  refused("a", "return cuda.ldca(a, 0)", "(int32[:, :],)",
          "error: Expected 2 indices, got a scalar");
  refused("a", "return cuda.ldcs(a, (0, 1, 2))", "(int32[:, :],)",
          "error: Expected 2 indices, got 3");
  refused("a", "cuda.stcs(a, cuda.grid(3), 1)", "(float32[:, :],)",
          "error: Expected 2 indices, got 3");
  refused("a", "return cuda.ldlu(a, 1.5)", "(int32[:],)",
          "error: float64 is not a valid index");
  refused("a", "return cuda.ldcv(a, True)", "(int32[:],)", "error: bool is not a valid index");
  refused("a", "return cuda.ldcg(a, (cuda.threadIdx.x, 1))", "(int32[:, :],)",
          "error: Tuple(int32, int64) is not a valid index");
  refused("a", "return cuda.ldcg(a, (1.0, 2.0))", "(int32[:, :],)",
          "error: UniTuple(float64 x 2) is not a valid index");
  refused("a", "return cuda.ldcg(a, ())", "(int32[:],)", "error: Tuple() is not a valid index");
  refused("x", "return cuda.ldcg(x, 0)", "(float32,)",
          "error: ldcg operates on arrays or pointers. Got type float32");
  refused("a", "cuda.stcg(a, 0, 1 + 2j)", "(int32[:],)",
          "error: cannot convert complex128 to int32 in stcg()");
  refused("a, b", "cuda.stwb(a, 0, b)", "(float32[:], float32[:])",
          "error: cannot convert array(float32, 1d, A) to float32 in stwb()");
  refused("a", "return cuda.ldcg(a)", "(int32[:],)",
          "error: ldcg() missing required argument: 'i'");
  refused("a", "cuda.stcg(a, 0, 1, 2)", "(int32[:],)",
          "error: stcg() takes 3 positional arguments but 4 were given");
  refused("a", "return cuda.ldcg(a, 0, j=1)", "(int32[:],)",
          "error: ldcg() got an unexpected keyword argument 'j'");
  refused("a", "return cuda.ldcg(a, 0, i=1)", "(int32[:],)",
          "error: ldcg() got multiple values for argument 'i'");
}

/* Every case of the GPU comparison file compiles and passes ptxas here. */
TEST(gpu_cases_compile) {
  require_nvvm();
  const char *path = NBCUDA_SOURCE_DIR "/tests/gpu/cases/warp_intrinsics.py";
  char *text = fe_read_file(path, NULL);
  ASSERT(text);
  int n = 0;
  for (char *line = text; line && *line;) {
    char *end = strchr(line, '\n');
    char name[128], sig[256], kind[16];
    char *p = line;
    while (*p == ' ')
      p++;
    if (sscanf(p, "(\"%127[^\"]\", \"%255[^\"]\", \"%15[^\"]\"", name, sig, kind) == 3) {
      bool device = strcmp(kind, "device") == 0;
      nbc_compile_options_t o = options(device);
      nbc_source_t s = {text, 0, path, 1, 0};
      nbc_compile_result_t *r = NULL;
      if (nbc_compile(&s, name, sig, &o, NULL, &r) != NBC_OK)
        TEST_FAIL_("%s %s: %s", name, sig, nbc_last_error());
      size_t size;
      const char *ptx = nbc_compile_result_code(r, &size);
      char log[8192];
      int rc = ptx_check_ptxas(ptx, size, device, log, sizeof log);
      if (rc < 0) SKIP("ptxas not found");
      if (rc != 0) TEST_FAIL_("%s: ptxas failed:\n%s", name, log);
      nbc_compile_result_destroy(r);
      n++;
    }
    line = end ? end + 1 : NULL;
  }
  free(text);
  ASSERT(n >= 10);
}

TEST_LIST(X(warp_shuffles) X(warp_votes_and_masks) X(barriers_and_fences)
              X(bit_and_math_intrinsics) X(more_atomics) X(match_and_nanosleep)
                  X(gpu_cases_compile) X(cache_hints) X(cache_hints_every_dtype_in_a_kernel)
                      X(cache_hints_ir) X(cache_hints_refused))
TEST_MAIN()
