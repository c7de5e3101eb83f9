/* test_host_debug_exception.c — nbc_module_get_global and the host's half of debug=True
 * kernel exceptions (nbc_debug_exception_clear / _read).
 *
 * A hand-written PTX kernel `k(n)` has the variables a debug kernel has (k__errcode__,
 * k__tid{x,y,z}__, k__ctaid{x,y,z}__); its thread whose threadIdx.x is n stores code 3 and its
 * position there, as a raise site would. On the GPU machine the kernel runs; on CI the test
 * driver does not run kernels, and tdrv_raise_in_next_kernel makes its next "run" write the
 * same values.
 */
#include <stdint.h>
#include <string.h>

#include "nbcuda.h"
#include "test.h"
#include "testdriver.h"

static const char ptx[] =
    ".version 8.0\n"
    ".target sm_75\n"
    ".address_size 64\n"
    ".visible .global .align 4 .u32 k__errcode__;\n"
    ".visible .global .align 4 .u32 k__tidx__;\n"
    ".visible .global .align 4 .u32 k__tidy__;\n"
    ".visible .global .align 4 .u32 k__tidz__;\n"
    ".visible .global .align 4 .u32 k__ctaidx__;\n"
    ".visible .global .align 4 .u32 k__ctaidy__;\n"
    ".visible .global .align 4 .u32 k__ctaidz__;\n"
    ".visible .entry k(.param .u32 k_param_0)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<4>;\n"
    "  ld.param.u32 %r1, [k_param_0];\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  setp.ne.u32 %p1, %r2, %r1;\n"
    "  @%p1 bra DONE;\n"
    "  mov.u32 %r3, 3;\n"
    "  st.global.u32 [k__errcode__], %r3;\n"
    "  st.global.u32 [k__tidx__], %r2;\n"
    "  mov.u32 %r3, %ctaid.x;\n"
    "  st.global.u32 [k__ctaidx__], %r3;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n"
    ".visible .entry plain()\n"
    "{\n"
    "  ret;\n"
    "}\n";

/* Launches k(raiser) as 2 blocks of 32 threads on stream (the test driver, when present,
 * writes what thread `raiser` of block 1 would: block 1 runs last on the GPU too, but both
 * blocks' thread `raiser` store, so either block may be the one read). */
static void launch_k(nbc_function_t *k, nbc_stream_t *stream, unsigned raiser) {
  if (raiser < 32 && tdrv_present()) {
    void (*raise_next)(int, const int *, const int *) =
        (void (*)(int, const int *, const int *))(uintptr_t)tdrv_sym("tdrv_raise_in_next_kernel");
    ASSERT(raise_next != NULL);
    const int tid[3] = {(int)raiser, 0, 0}, ctaid[3] = {1, 0, 0};
    raise_next(3, tid, ctaid);
  }
  const unsigned grid[3] = {2, 1, 1}, block[3] = {32, 1, 1};
  void *args[1] = {&raiser};
  ASSERT_OK(nbc_launch(k, grid, block, 0, stream, args));
}

/* The module loaded and its function `name`. */
static nbc_module_t *load(const char *name, nbc_function_t **pfunction) {
  nbc_module_t *m = NULL;
  ASSERT_OK(nbc_module_load_data(ptx, sizeof ptx - 1, NBC_IMAGE_PTX, &m));
  ASSERT_OK(nbc_module_get_function(m, name, pfunction));
  return m;
}

TEST(globals_of_a_module) {
  nbc_module_t *m = NULL;
  ASSERT_OK(nbc_module_load_data(ptx, sizeof ptx - 1, NBC_IMAGE_PTX, &m));
  nbc_devptr_t p = 0, q = 0;
  size_t size = 0;
  ASSERT_OK(nbc_module_get_global(m, "k__errcode__", &p, &size));
  ASSERT(p != 0 && size == 4);
  ASSERT_OK(nbc_module_get_global(m, "k__tidx__", &q, NULL));
  ASSERT(q != 0 && q != p);
  /* the variable is device memory: copies reach it */
  unsigned v = 0xabcd1234u, back = 0;
  ASSERT_OK(nbc_memcpy_htod(p, &v, 4));
  ASSERT_OK(nbc_memcpy_dtoh(&back, p, 4));
  ASSERT_EQ(back, 0xabcd1234u);
  nbc_status_t st = nbc_module_get_global(m, "no_such_variable", &p, &size);
  ASSERT(st != NBC_OK);
  ASSERT_CONTAINS(nbc_last_error(), "cuModuleGetGlobal");
  ASSERT_CONTAINS(nbc_last_error(), "no_such_variable");
  ASSERT_STATUS(nbc_module_get_global(NULL, "k__errcode__", &p, &size), NBC_INVALID_ARGUMENT);
  nbc_module_destroy(m);
}

TEST(first_raise_of_a_launch) {
  nbc_function_t *k = NULL;
  nbc_module_t *m = load("k", &k);
  nbc_stream_t *s = NULL;
  ASSERT_OK(nbc_stream_create(&s));
  int code = -1, tid[3], ctaid[3];

  ASSERT_OK(nbc_debug_exception_clear(k, s));
  launch_k(k, s, 99); /* no thread raises */
  ASSERT_OK(nbc_debug_exception_read(k, s, &code, tid, ctaid));
  ASSERT_EQ(code, 0);

  ASSERT_OK(nbc_debug_exception_clear(k, s));
  launch_k(k, s, 5);
  ASSERT_OK(nbc_debug_exception_read(k, s, &code, tid, ctaid));
  ASSERT_EQ(code, 3);
  /* numba's order: z, y, x */
  ASSERT(tid[0] == 0 && tid[1] == 0 && tid[2] == 5);
  ASSERT(ctaid[0] == 0 && ctaid[1] == 0 && (ctaid[2] == 0 || ctaid[2] == 1));

  /* cleared before the next launch: what the last one left does not count again */
  ASSERT_OK(nbc_debug_exception_clear(k, s));
  launch_k(k, s, 99);
  ASSERT_OK(nbc_debug_exception_read(k, s, &code, tid, ctaid));
  ASSERT_EQ(code, 0);
  ASSERT(tid[2] == 0 && ctaid[2] == 0);

  /* the default stream too */
  ASSERT_OK(nbc_debug_exception_clear(k, NULL));
  launch_k(k, NULL, 7);
  ASSERT_OK(nbc_debug_exception_read(k, NULL, &code, tid, ctaid));
  ASSERT(code == 3 && tid[2] == 7);

  nbc_stream_destroy(s);
  nbc_module_destroy(m);
}

TEST(a_kernel_without_debug_variables) {
  nbc_function_t *plain = NULL;
  nbc_module_t *m = load("plain", &plain);
  ASSERT(nbc_debug_exception_clear(plain, NULL) != NBC_OK);
  ASSERT_CONTAINS(nbc_last_error(), "plain__errcode__");
  int code = -1, tid[3], ctaid[3];
  ASSERT(nbc_debug_exception_read(plain, NULL, &code, tid, ctaid) != NBC_OK);
  ASSERT_EQ(code, 0);
  ASSERT_STATUS(nbc_debug_exception_read(NULL, NULL, &code, tid, ctaid), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_debug_exception_clear(NULL, NULL), NBC_INVALID_ARGUMENT);
  nbc_module_destroy(m);
}

TEST_LIST(X(globals_of_a_module) X(first_raise_of_a_launch) X(a_kernel_without_debug_variables))
TEST_MAIN()
