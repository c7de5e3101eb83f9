/* test_host_occupancy.c — nbc_function_attribute and the occupancy queries behind numba's
 * _Kernel.regs_per_thread, shared_mem_per_block, const_mem_size, local_mem_per_thread,
 * max_threads_per_block and max_cooperative_grid_blocks.
 *
 * One PTX module holds kernels with known resources: 1 KB of module-scope static shared
 * memory, 256 bytes of constant memory, a 64-byte local depot, a `.maxntid 128` bound. On CI
 * the test driver answers from the PTX text (its model is in td_module.c's header), so the
 * values are exact; on the GPU machine the same tests check what must hold on any device:
 * the static shared bytes exactly, registers > 0, at most 1024 threads, the bound's 128, at
 * least one resident block of a small block, cooperative blocks = per-SM blocks x SMs.
 */
#include <string.h>

#include "nbcuda.h"
#include "test.h"
#include "testdriver.h"

static const char ptx[] =
    ".version 7.0\n"
    ".target sm_52\n"
    ".address_size 64\n"
    ".shared .align 4 .b8 tile[1024];\n"
    ".const .align 4 .b8 table[256];\n"
    "\n"
    ".visible .entry uses_shared(.param .u64 out)\n"
    "{\n"
    "  .reg .b32 %r<4>;\n"
    "  .reg .b64 %rd<3>;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  cvta.to.global.u64 %rd2, %rd1;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  st.shared.u32 [tile+4], %r1;\n"
    "  bar.sync 0;\n"
    "  ld.shared.u32 %r2, [tile+4];\n"
    "  ld.const.u32 %r3, [table+8];\n"
    "  add.s32 %r2, %r2, %r3;\n"
    "  st.global.u32 [%rd2], %r2;\n"
    "  ret;\n"
    "}\n"
    "\n"
    ".visible .entry bounded(.param .u64 out) .maxntid 128, 1, 1\n"
    "{\n"
    "  .local .align 4 .b8 depot[64];\n"
    "  .reg .b32 %r<3>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  st.local.u32 [depot], %r1;\n"
    "  ld.local.u32 %r2, [depot];\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  cvta.to.global.u64 %rd2, %rd1;\n"
    "  st.global.u32 [%rd2], %r2;\n"
    "  ret;\n"
    "}\n";

static nbc_module_t *load(nbc_function_t **shared_fn, nbc_function_t **bounded_fn) {
  nbc_module_t *m = NULL;
  ASSERT_OK(nbc_module_load_data(ptx, sizeof ptx - 1, NBC_IMAGE_PTX, &m));
  ASSERT_OK(nbc_module_get_function(m, "uses_shared", shared_fn));
  ASSERT_OK(nbc_module_get_function(m, "bounded", bounded_fn));
  return m;
}

static int attr(nbc_function_t *f, nbc_function_attr_t a) {
  int v = -12345;
  ASSERT_OK(nbc_function_attribute(f, a, &v));
  ASSERT(v != -12345);
  return v;
}

TEST(attributes) {
  REQUIRE_DRIVER();
  nbc_function_t *s, *b;
  nbc_module_t *m = load(&s, &b);
  /* Static shared memory is what the PTX declares, on any device. */
  ASSERT_EQ(attr(s, NBC_FUNCTION_ATTR_SHARED_SIZE_BYTES), 1024);
  ASSERT_EQ(attr(b, NBC_FUNCTION_ATTR_SHARED_SIZE_BYTES), 0);
  ASSERT_EQ(attr(b, NBC_FUNCTION_ATTR_MAX_THREADS_PER_BLOCK), 128);
  int max_threads = attr(s, NBC_FUNCTION_ATTR_MAX_THREADS_PER_BLOCK);
  ASSERT(max_threads > 0 && max_threads <= 1024);
  ASSERT(attr(s, NBC_FUNCTION_ATTR_NUM_REGS) > 0);
  ASSERT(attr(b, NBC_FUNCTION_ATTR_LOCAL_SIZE_BYTES) >= 0);
  ASSERT(attr(s, NBC_FUNCTION_ATTR_PTX_VERSION) >= 52);
  ASSERT(attr(s, NBC_FUNCTION_ATTR_BINARY_VERSION) >= 52);
  ASSERT(attr(s, NBC_FUNCTION_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES) > 0);
  if (tdrv_present()) { /* the fixture's model (td_module.c) */
    ASSERT_EQ(max_threads, 1024);
    ASSERT_EQ(attr(s, NBC_FUNCTION_ATTR_NUM_REGS), 32);
    ASSERT_EQ(attr(s, NBC_FUNCTION_ATTR_CONST_SIZE_BYTES), 256);
    ASSERT_EQ(attr(b, NBC_FUNCTION_ATTR_CONST_SIZE_BYTES), 0);
    ASSERT_EQ(attr(b, NBC_FUNCTION_ATTR_LOCAL_SIZE_BYTES), 64);
    ASSERT_EQ(attr(s, NBC_FUNCTION_ATTR_LOCAL_SIZE_BYTES), 0);
    ASSERT_EQ(attr(s, NBC_FUNCTION_ATTR_PTX_VERSION), 52);
    ASSERT_EQ(attr(s, NBC_FUNCTION_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES), 49152);
    ASSERT_EQ(tdrv()->calls("cuFuncGetAttribute") > 0, 1);
  }
  nbc_module_destroy(m);
}

/* nbc_module_load_data_ex's max_registers reaches the driver (CU_JIT_MAX_REGISTERS): the
 * function reports at most that many registers; the test driver reports exactly the cap. */
TEST(max_registers_caps_registers) {
  REQUIRE_DRIVER();
  nbc_module_load_options_t opts = {.max_registers = 16};
  nbc_module_t *m = NULL;
  nbc_function_t *f = NULL;
  ASSERT_OK(nbc_module_load_data_ex(ptx, sizeof ptx - 1, NBC_IMAGE_AUTO, &opts, &m));
  ASSERT_OK(nbc_module_get_function(m, "uses_shared", &f));
  int regs = attr(f, NBC_FUNCTION_ATTR_NUM_REGS);
  ASSERT(regs > 0 && regs <= 16);
  if (tdrv_present()) ASSERT_EQ(regs, 16);
  nbc_module_destroy(m);
  ASSERT_OK(nbc_module_load_data_ex(ptx, sizeof ptx - 1, NBC_IMAGE_PTX, NULL, &m));
  ASSERT_OK(nbc_module_get_function(m, "uses_shared", &f));
  if (tdrv_present()) ASSERT_EQ(attr(f, NBC_FUNCTION_ATTR_NUM_REGS), 32); /* no cap */
  nbc_module_destroy(m);
}

TEST(occupancy) {
  REQUIRE_DRIVER();
  nbc_function_t *s, *b;
  nbc_module_t *m = load(&s, &b);
  int per_sm = -1, coop = -1, sms = 0;
  ASSERT_OK(nbc_occupancy_max_active_blocks(s, 32, 0, &per_sm));
  ASSERT(per_sm >= 1);
  ASSERT_OK(nbc_occupancy_max_cooperative_blocks(s, 32, 0, &coop));
  nbc_device_t *dev;
  ASSERT_OK(nbc_device_get(0, &dev));
  ASSERT_OK(nbc_device_attribute_by_name(dev, "MULTIPROCESSOR_COUNT", &sms));
  ASSERT_EQ(coop, per_sm * sms);
  /* More dynamic shared memory never fits more blocks; a full block fits no more than a
   * small one. */
  int with_smem = -1, big = -1;
  ASSERT_OK(nbc_occupancy_max_active_blocks(s, 32, 16384, &with_smem));
  ASSERT(with_smem >= 1 && with_smem <= per_sm);
  ASSERT_OK(nbc_occupancy_max_active_blocks(s, 1024, 0, &big));
  ASSERT(big >= 1 && big <= per_sm);
  if (tdrv_present()) {
    /* 2048 threads, 32 blocks, 65536 registers at 32 a thread, 233472 bytes of shared
     * memory at (1024 static + 1024 reserved + dynamic) a block. */
    ASSERT_EQ(per_sm, 32);
    ASSERT_EQ(big, 2);
    ASSERT_EQ(with_smem, 233472 / (1024 + 1024 + 16384));
    int k = -1;
    ASSERT_OK(nbc_occupancy_max_active_blocks(s, 128, 0, &k));
    ASSERT_EQ(k, 16);
    ASSERT_OK(nbc_occupancy_max_active_blocks(b, 256, 0, &k)); /* above its .maxntid */
    ASSERT_EQ(k, 0);
    ASSERT_OK(nbc_occupancy_max_active_blocks(s, 32, 49153, &k)); /* above the limit */
    ASSERT_EQ(k, 0);
  }
  nbc_module_destroy(m);
}

TEST(bad_arguments) {
  REQUIRE_DRIVER();
  nbc_function_t *s, *b;
  nbc_module_t *m = load(&s, &b);
  int v;
  ASSERT_STATUS(nbc_function_attribute(NULL, NBC_FUNCTION_ATTR_NUM_REGS, &v),
                NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "NULL function");
  ASSERT_STATUS(nbc_function_attribute(s, NBC_FUNCTION_ATTR_NUM_REGS, NULL),
                NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_function_attribute(s, (nbc_function_attr_t)99, &v), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "unknown attribute 99");
  ASSERT_STATUS(nbc_function_attribute(s, (nbc_function_attr_t)-1, &v), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_occupancy_max_active_blocks(NULL, 32, 0, &v), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_occupancy_max_active_blocks(s, 32, 0, NULL), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_occupancy_max_active_blocks(s, 0, 0, &v), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "block size must be positive, got 0");
  ASSERT_STATUS(nbc_occupancy_max_cooperative_blocks(s, -5, 0, &v), NBC_INVALID_ARGUMENT);
  nbc_module_destroy(m);
}

/* After a reset the module is gone with its context: the queries refuse the function with
 * the launch's message instead of passing a dead CUfunction to the driver. */
TEST(refused_after_reset) {
  REQUIRE_DRIVER();
  nbc_function_t *s, *b;
  nbc_module_t *m = load(&s, &b);
  ASSERT_OK(nbc_close());
  int v, calls = tdrv_present() ? tdrv()->calls("cuFuncGetAttribute") : 0;
  nbc_status_t st = nbc_function_attribute(s, NBC_FUNCTION_ATTR_NUM_REGS, &v);
  ASSERT(st != NBC_OK);
  ASSERT_CONTAINS(nbc_last_error(), "cuFuncGetAttribute");
  ASSERT_CONTAINS(nbc_last_error(), "CUDA_ERROR_CONTEXT_IS_DESTROYED");
  ASSERT_CONTAINS(nbc_last_error(), "kernel 'uses_shared': its module was unloaded");
  st = nbc_occupancy_max_active_blocks(b, 32, 0, &v);
  ASSERT(st != NBC_OK);
  ASSERT_CONTAINS(nbc_last_error(), "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  ASSERT_CONTAINS(nbc_last_error(), "kernel 'bounded'");
  if (tdrv_present()) ASSERT_EQ(tdrv()->calls("cuFuncGetAttribute"), calls);
  nbc_module_destroy(m);
}

/* The answer is about the function's own device whichever context is current. */
TEST(other_device_current) {
  REQUIRE_DEVICES(2);
  nbc_function_t *s, *b;
  nbc_module_t *m = load(&s, &b);
  nbc_device_t *dev1;
  nbc_context_t *ctx1;
  ASSERT_OK(nbc_device_get(1, &dev1));
  ASSERT_OK(nbc_device_primary_context(dev1, &ctx1));
  ASSERT_OK(nbc_context_push(ctx1));
  ASSERT_EQ(attr(s, NBC_FUNCTION_ATTR_SHARED_SIZE_BYTES), 1024);
  int v = -1;
  ASSERT_OK(nbc_occupancy_max_active_blocks(s, 64, 0, &v));
  ASSERT(v >= 1);
  ASSERT_OK(nbc_context_pop(ctx1));
  nbc_module_destroy(m);
}

static int optin_shared(void) {
  nbc_device_t *dev;
  int optin = 0;
  ASSERT_OK(nbc_device_get(0, &dev));
  ASSERT_OK(nbc_device_attribute_by_name(dev, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", &optin));
  ASSERT(optin >= 49152);
  return optin;
}

/* The carveout and the dynamic shared memory limit can be set, within the driver's bounds;
 * the other attributes cannot. */
TEST(set_attribute) {
  REQUIRE_DRIVER();
  nbc_function_t *s, *b;
  nbc_module_t *m = load(&s, &b);
  ASSERT_OK(nbc_function_set_attribute(s, NBC_FUNCTION_ATTR_PREFERRED_SHARED_MEMORY_CARVEOUT, 50));
  ASSERT_EQ(attr(s, NBC_FUNCTION_ATTR_PREFERRED_SHARED_MEMORY_CARVEOUT), 50);
  ASSERT_OK(nbc_function_set_attribute(s, NBC_FUNCTION_ATTR_PREFERRED_SHARED_MEMORY_CARVEOUT, -1));
  ASSERT_STATUS(
      nbc_function_set_attribute(s, NBC_FUNCTION_ATTR_PREFERRED_SHARED_MEMORY_CARVEOUT, 101),
      NBC_DRIVER_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "cuFuncSetAttribute");
  ASSERT_CONTAINS(nbc_last_error(), "CUDA_ERROR_INVALID_VALUE");
  ASSERT_CONTAINS(nbc_last_error(), "kernel 'uses_shared', attribute 9, value 101");
  int most = optin_shared() - 1024; /* less its static shared memory */
  ASSERT_OK(
      nbc_function_set_attribute(s, NBC_FUNCTION_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES, most));
  ASSERT_EQ(attr(s, NBC_FUNCTION_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES), most);
  ASSERT_STATUS(
      nbc_function_set_attribute(s, NBC_FUNCTION_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES, most + 1),
      NBC_DRIVER_ERROR);
  ASSERT_STATUS(nbc_function_set_attribute(s, NBC_FUNCTION_ATTR_NUM_REGS, 8),
                NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "attribute 4 cannot be set");
  ASSERT_STATUS(nbc_function_set_attribute(NULL, NBC_FUNCTION_ATTR_NUM_REGS, 8),
                NBC_INVALID_ARGUMENT);
  nbc_module_destroy(m);
}

/* A launch asking more dynamic shared memory than the default 48 KiB raises the kernel's
 * limit and runs; more than the device lets a block have fails, saying the true limit (the
 * opt-in maximum less the kernel's static shared memory) and what to ask for. */
TEST(launch_raises_dynamic_shared_limit) {
  REQUIRE_DRIVER();
  nbc_function_t *s, *b;
  nbc_module_t *m = load(&s, &b);
  nbc_devptr_t out = 0;
  ASSERT_OK(nbc_mem_alloc(16, &out));
  void *args[] = {&out};
  unsigned grid[3] = {1, 1, 1}, block[3] = {32, 1, 1};
  int most = optin_shared() - 1024;
  ASSERT_OK(nbc_launch(s, grid, block, 100000, NULL, args));
  ASSERT_EQ(attr(s, NBC_FUNCTION_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES), 100000);
  ASSERT_OK(nbc_launch_packed(s, grid, block, (unsigned)most, NULL, &out, sizeof out));
  ASSERT_EQ(attr(s, NBC_FUNCTION_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES), most);
  ASSERT_OK(nbc_synchronize());
  ASSERT_STATUS(nbc_launch(s, grid, block, (unsigned)most + 1, NULL, args), NBC_DRIVER_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "cuLaunchKernel");
  ASSERT_CONTAINS(nbc_last_error(), "kernel 'uses_shared'");
  char want[320];
  snprintf(want, sizeof want,
           "more than the %d bytes of dynamic shared memory a block of this kernel may have on "
           "this device (its opt-in maximum of %d bytes per block less the kernel's 1024 bytes "
           "of static shared memory): ask for at most %d",
           most, optin_shared(), most);
  ASSERT_CONTAINS(nbc_last_error(), want);
  /* the test driver models an H100/H200: 227 KiB a block may opt in to, not the 48 KiB a
   * kernel gets until its limit is raised */
  if (tdrv_present()) ASSERT_CONTAINS(nbc_last_error(), "more than the 231424 bytes");
  /* the same from a kernel whose limit was never raised (48 KiB less its static memory) */
  nbc_function_t *fresh, *unused;
  nbc_module_t *m2 = load(&fresh, &unused);
  ASSERT_STATUS(nbc_launch(fresh, grid, block, (unsigned)most + 1, NULL, args), NBC_DRIVER_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), want);
  nbc_module_destroy(m2);
  ASSERT_OK(nbc_mem_free(out));
  nbc_module_destroy(m);
}

TEST_LIST(X(attributes) X(max_registers_caps_registers) X(occupancy) X(bad_arguments)
              X(refused_after_reset) X(other_device_current) X(set_attribute)
                  X(launch_raises_dynamic_shared_limit))
TEST_MAIN()
