/* gpu_kernels.h — hand-written PTX kernels shared by test_gpu.c and test_multigpu.c, and the
 * helpers that load and launch them.
 *
 *   add_one(u32 *p, u64 n)          p[i] += 1 for every i < n (one thread per element);
 *   spin(u64 ns, u32 *flag, u32 v)  one thread busy-waits `ns` nanoseconds on %globaltimer,
 *                                   then stores v to *flag unless flag is 0.
 *
 * spin gives a kernel of known duration without depending on clock rates: events can time
 * it, a stream is NOT_READY while it runs, and a callback queued after it must see its
 * store. The PTX targets sm_75 (the oldest architecture nbcuda compiles for), so the driver
 * JIT-compiles it for the device at hand; tests/c/test_gpu.c checks it with ptxas as well.
 *
 * On the test driver a launch runs no code (it records the launch and, when told, waits a set
 * time): gpu_kernels_execute() says whether results can be checked.
 */
#ifndef NBCUDA_GPU_KERNELS_H
#define NBCUDA_GPU_KERNELS_H

#include <string.h>

#include "nbcuda.h"
#include "test.h"
#include "testdriver.h"

static const char gpu_kernels_ptx[] = ".version 8.0\n"
                                      ".target sm_75\n"
                                      ".address_size 64\n"
                                      "\n"
                                      ".visible .entry add_one(\n"
                                      "  .param .u64 add_one_p,\n"
                                      "  .param .u64 add_one_n\n"
                                      ")\n"
                                      "{\n"
                                      "  .reg .pred %p<2>;\n"
                                      "  .reg .b32 %r<6>;\n"
                                      "  .reg .b64 %rd<8>;\n"
                                      "  ld.param.u64 %rd1, [add_one_p];\n"
                                      "  ld.param.u64 %rd2, [add_one_n];\n"
                                      "  mov.u32 %r1, %ctaid.x;\n"
                                      "  mov.u32 %r2, %ntid.x;\n"
                                      "  mov.u32 %r3, %tid.x;\n"
                                      "  mad.lo.u32 %r4, %r1, %r2, %r3;\n"
                                      "  cvt.u64.u32 %rd3, %r4;\n"
                                      "  setp.ge.u64 %p1, %rd3, %rd2;\n"
                                      "  @%p1 bra ADD_ONE_DONE;\n"
                                      "  cvta.to.global.u64 %rd4, %rd1;\n"
                                      "  shl.b64 %rd5, %rd3, 2;\n"
                                      "  add.s64 %rd6, %rd4, %rd5;\n"
                                      "  ld.global.u32 %r5, [%rd6];\n"
                                      "  add.u32 %r5, %r5, 1;\n"
                                      "  st.global.u32 [%rd6], %r5;\n"
                                      "ADD_ONE_DONE:\n"
                                      "  ret;\n"
                                      "}\n"
                                      "\n"
                                      ".visible .entry spin(\n"
                                      "  .param .u64 spin_ns,\n"
                                      "  .param .u64 spin_flag,\n"
                                      "  .param .u32 spin_value\n"
                                      ")\n"
                                      "{\n"
                                      "  .reg .pred %p<3>;\n"
                                      "  .reg .b32 %r<2>;\n"
                                      "  .reg .b64 %rd<8>;\n"
                                      "  ld.param.u64 %rd1, [spin_ns];\n"
                                      "  ld.param.u64 %rd2, [spin_flag];\n"
                                      "  ld.param.u32 %r1, [spin_value];\n"
                                      "  mov.u64 %rd3, %globaltimer;\n"
                                      "SPIN_LOOP:\n"
                                      "  mov.u64 %rd4, %globaltimer;\n"
                                      "  sub.u64 %rd5, %rd4, %rd3;\n"
                                      "  setp.lt.u64 %p1, %rd5, %rd1;\n"
                                      "  @%p1 bra SPIN_LOOP;\n"
                                      "  setp.eq.u64 %p2, %rd2, 0;\n"
                                      "  @%p2 bra SPIN_DONE;\n"
                                      "  cvta.to.global.u64 %rd6, %rd2;\n"
                                      "  st.global.u32 [%rd6], %r1;\n"
                                      "SPIN_DONE:\n"
                                      "  ret;\n"
                                      "}\n";

typedef struct gpu_kernels {
  nbc_module_t *module;
  nbc_function_t *add_one;
  nbc_function_t *spin;
} gpu_kernels;

/* Loads the kernels into the current context (one is created if none). */
static inline void gpu_kernels_load(gpu_kernels *k) {
  ASSERT_OK(nbc_module_load_data(gpu_kernels_ptx, strlen(gpu_kernels_ptx), NBC_IMAGE_PTX,
                                 &k->module));
  ASSERT_OK(nbc_module_get_function(k->module, "add_one", &k->add_one));
  ASSERT_OK(nbc_module_get_function(k->module, "spin", &k->spin));
}

static inline void gpu_kernels_unload(gpu_kernels *k) {
  nbc_module_destroy(k->module);
  memset(k, 0, sizeof *k);
}

/* add_one over n elements at p, 256 threads a block. */
static inline nbc_status_t gpu_add_one(const gpu_kernels *k, nbc_stream_t *stream,
                                       nbc_devptr_t p, uint64_t n) {
  unsigned grid[3] = {(unsigned)((n + 255) / 256), 1, 1}, block[3] = {256, 1, 1};
  if (grid[0] == 0) grid[0] = 1;
  void *args[] = {&p, &n};
  return nbc_launch(k->add_one, grid, block, 0, stream, args);
}

/* spin for ms milliseconds, then *flag = value (flag 0: no store). */
static inline nbc_status_t gpu_spin(const gpu_kernels *k, nbc_stream_t *stream, unsigned ms,
                                    nbc_devptr_t flag, uint32_t value) {
  unsigned one[3] = {1, 1, 1};
  uint64_t ns = (uint64_t)ms * 1000000u;
  void *args[] = {&ns, &flag, &value};
  return nbc_launch(k->spin, one, one, 0, stream, args);
}

/* 1 when launched kernels really run: the driver is neither the fixture as NBCUDA_TESTDRIVER
 * nor the fixture loaded as if it were libcuda. Loads the driver. */
static inline int gpu_kernels_execute(void) {
  if (tdrv_present()) return 0;
  int n = 0;
  if (nbc_device_count(&n) != NBC_OK || n < 1) return 0;
  return !tdrv_is_fixture(nbc_driver_path());
}

#endif /* NBCUDA_GPU_KERNELS_H */
