/* test_host_device.c — devices: the list, names, UUIDs, compute capability, attributes by
 * number and by name, reset, select_device / get_current_device / gpus.current, the scoped
 * `with gpus[i]:` pair, and detect()'s exact report. Runs against the test driver.
 */
#include <ctype.h>

#include "nbcuda.h"
#include "test.h"
#include "testdriver.h"

enum {
  MAX_THREADS_PER_BLOCK = 1,
  KERNEL_EXEC_TIMEOUT = 17,
  PCI_BUS_ID = 33,
  PCI_DEVICE_ID = 34,
  CC_MAJOR = 75,
  CC_MINOR = 76,
  RATIO = 87
};

TEST(count_and_get) {
  int n = 0;
  ASSERT_OK(nbc_device_count(&n));
  ASSERT_EQ(n, 2);
  nbc_device_t *d0, *d1, *again;
  ASSERT_OK(nbc_device_get(0, &d0));
  ASSERT_OK(nbc_device_get(1, &d1));
  ASSERT_OK(nbc_device_get(0, &again));
  ASSERT(d0 == again); /* one object per ordinal */
  ASSERT(d0 != d1);
  ASSERT_EQ(nbc_device_id(d0), 0);
  ASSERT_EQ(nbc_device_id(d1), 1);
  ASSERT_STREQ(nbc_device_name(d0), "nbcuda test device 0");
  ASSERT_STREQ(nbc_device_name(d1), "nbcuda test device 1");
  nbc_device_t *bad = (nbc_device_t *)1;
  ASSERT_STATUS(nbc_device_get(2, &bad), NBC_INVALID_DEVICE);
  ASSERT(bad == NULL);
  ASSERT_CONTAINS(nbc_last_error(), "device ordinal 2 is out of range (2 devices)");
  ASSERT_STATUS(nbc_device_get(-1, &bad), NBC_INVALID_DEVICE);
  ASSERT_STATUS(nbc_device_get(0, NULL), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_device_count(NULL), NBC_INVALID_ARGUMENT);
}

TEST(device_count_from_env) {
  setenv("NBCUDA_TESTDRIVER_DEVICES", "5", 1);
  int n = 0;
  ASSERT_OK(nbc_device_count(&n));
  ASSERT_EQ(n, 5);
  nbc_device_t *list[8];
  int count = 0;
  ASSERT_OK(nbc_list_devices(list, 3, &count));
  ASSERT_EQ(count, 5); /* the total, even when capacity is smaller */
  ASSERT_EQ(nbc_device_id(list[2]), 2);
  ASSERT_STATUS(nbc_list_devices(NULL, 3, &count), NBC_INVALID_ARGUMENT);
  ASSERT_OK(nbc_list_devices(NULL, 0, &count));
}

static int is_hex(const char *s, int n) {
  for (int i = 0; i < n; i++)
    if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i])) return 0;
  return 1;
}

TEST(uuid_format) {
  nbc_device_t *d0, *d1;
  ASSERT_OK(nbc_device_get(0, &d0));
  ASSERT_OK(nbc_device_get(1, &d1));
  const char *u = nbc_device_uuid(d0);
  /* ^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$ */
  ASSERT_EQ(strlen(u), 40);
  ASSERT(strncmp(u, "GPU-", 4) == 0);
  ASSERT(is_hex(u + 4, 8) && u[12] == '-' && is_hex(u + 13, 4) && u[17] == '-');
  ASSERT(is_hex(u + 18, 4) && u[22] == '-' && is_hex(u + 23, 4) && u[27] == '-');
  ASSERT(is_hex(u + 28, 12));
  ASSERT(strcmp(u, nbc_device_uuid(d1)) != 0);
}

TEST(compute_capability_and_fp16) {
  setenv("NBCUDA_TESTDRIVER_CC", "9.0,5.2", 1);
  nbc_device_t *d0, *d1;
  ASSERT_OK(nbc_device_get(0, &d0));
  ASSERT_OK(nbc_device_get(1, &d1));
  int major, minor;
  nbc_device_compute_capability(d0, &major, &minor);
  ASSERT_EQ(major, 9);
  ASSERT_EQ(minor, 0);
  nbc_device_compute_capability(d1, &major, &minor);
  ASSERT_EQ(major, 5);
  ASSERT_EQ(minor, 2);
  ASSERT_EQ(nbc_device_supports_float16(d0), 1);
  ASSERT_EQ(nbc_device_supports_float16(d1), 0); /* 5.2 < 5.3 */
  ASSERT_EQ(nbc_device_supports_float16(NULL), 0);
}

TEST(attributes) {
  nbc_device_t *d;
  ASSERT_OK(nbc_device_get(0, &d));
  int v = 0;
  ASSERT_OK(nbc_device_attribute(d, MAX_THREADS_PER_BLOCK, &v));
  ASSERT_EQ(v, 1024);
  ASSERT_OK(nbc_device_attribute(d, CC_MAJOR, &v));
  ASSERT_EQ(v, 9);
  tdrv()->set_attribute(0, MAX_THREADS_PER_BLOCK, 512);
  ASSERT_OK(nbc_device_attribute_by_name(d, "MAX_THREADS_PER_BLOCK", &v));
  ASSERT_EQ(v, 512);
  ASSERT_STATUS(nbc_device_attribute_by_name(d, "NO_SUCH_THING", &v), NBC_INVALID_ARGUMENT);
  ASSERT_STREQ(nbc_last_error(), "unknown device attribute 'NO_SUCH_THING'");
  ASSERT_STATUS(nbc_device_attribute(d, 100000, &v), NBC_DRIVER_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "cuDeviceGetAttribute: CUDA_ERROR_INVALID_VALUE (1)");
  ASSERT_CONTAINS(nbc_last_error(), "attribute 100000 of device 0");
  ASSERT_STATUS(nbc_device_attribute(NULL, 1, &v), NBC_INVALID_ARGUMENT);
  tdrv()->fail("cuDeviceGetAttribute", 1, 999);
  ASSERT_STATUS(nbc_device_attribute(d, MAX_THREADS_PER_BLOCK, &v), NBC_DRIVER_ERROR);
}

TEST(attribute_lookup) {
  ASSERT_EQ(nbc_device_attribute_lookup("MAX_THREADS_PER_BLOCK"), 1);
  ASSERT_EQ(nbc_device_attribute_lookup("COMPUTE_CAPABILITY_MAJOR"), 75);
  ASSERT_EQ(nbc_device_attribute_lookup("MULTIPROCESSOR_COUNT"), 16);
  ASSERT_EQ(nbc_device_attribute_lookup("SHARED_MEMORY_PER_BLOCK"), 8); /* an alias */
  ASSERT_EQ(nbc_device_attribute_lookup("PCI_BUS_ID"), 33);
  ASSERT_EQ(nbc_device_attribute_lookup("max_threads_per_block"), -1);
  ASSERT_EQ(nbc_device_attribute_lookup("CU_DEVICE_ATTRIBUTE_WARP_SIZE"), -1);
  ASSERT_EQ(nbc_device_attribute_lookup(""), -1);
  ASSERT_EQ(nbc_device_attribute_lookup(NULL), -1);
}

TEST(enumeration_failure) {
  tdrv()->fail("cuDeviceGetName", 1, 999);
  int n;
  ASSERT_STATUS(nbc_device_count(&n), NBC_DRIVER_ERROR);
  ASSERT_STREQ(nbc_last_error(), "cuDeviceGetName: CUDA_ERROR_UNKNOWN (999)");
  ASSERT_OK(nbc_device_count(&n)); /* retried on the next call */
  ASSERT_EQ(n, 2);
}

TEST(select_device_pushes) {
  nbc_device_t *d;
  ASSERT_OK(nbc_select_device(1, &d));
  ASSERT_EQ(nbc_device_id(d), 1);
  ASSERT_EQ(tdrv()->stack_depth(), 1);
  ASSERT_OK(nbc_select_device(1, &d));
  ASSERT_EQ(tdrv()->stack_depth(), 2); /* numba pushes on every call */
  nbc_device_t *cur;
  ASSERT_OK(nbc_get_current_device(&cur));
  ASSERT(cur == d);
  ASSERT_STATUS(nbc_select_device(7, &d), NBC_INVALID_DEVICE);
  ASSERT_EQ(tdrv()->stack_depth(), 2);
  ASSERT_OK(nbc_close());
  ASSERT_EQ(tdrv()->stack_depth(), 0);
}

TEST(get_current_device_creates_device0_context) {
  ASSERT_EQ(tdrv()->stack_depth(), 0);
  nbc_device_t *cur = NULL;
  ASSERT_OK(nbc_device_current(&cur));
  ASSERT(cur == NULL); /* gpus.current creates nothing */
  ASSERT_EQ(tdrv()->stack_depth(), 0);
  ASSERT_OK(nbc_get_current_device(&cur));
  ASSERT_EQ(nbc_device_id(cur), 0);
  ASSERT_EQ(tdrv()->stack_depth(), 1);
  ASSERT_EQ(tdrv()->primary_refcount(0), 1);
  nbc_device_t *again;
  ASSERT_OK(nbc_device_current(&again));
  ASSERT(again == cur);
  ASSERT_STATUS(nbc_get_current_device(NULL), NBC_INVALID_ARGUMENT);
}

TEST(enter_exit_push_and_pop_once) {
  nbc_device_t *d0, *d1, *cur;
  ASSERT_OK(nbc_device_get(0, &d0));
  ASSERT_OK(nbc_device_get(1, &d1));
  ASSERT_OK(nbc_select_device(0, &cur));
  ASSERT_EQ(tdrv()->stack_depth(), 1);
  ASSERT_OK(nbc_device_enter(d1));
  ASSERT_EQ(tdrv()->stack_depth(), 2);
  ASSERT_OK(nbc_device_current(&cur));
  ASSERT(cur == d1);
  ASSERT_OK(nbc_device_enter(d0)); /* nested, outside require_context: allowed */
  ASSERT_OK(nbc_device_exit(d0));
  ASSERT_OK(nbc_device_exit(d1));
  ASSERT_EQ(tdrv()->stack_depth(), 1); /* the previous context is restored */
  ASSERT_OK(nbc_device_current(&cur));
  ASSERT(cur == d0);
  /* Leaving the wrong device pops anyway and says so. */
  ASSERT_OK(nbc_device_enter(d1));
  ASSERT_STATUS(nbc_device_exit(d0), NBC_CONTEXT_MISMATCH);
  ASSERT_CONTAINS(nbc_last_error(), "is not the primary context");
  ASSERT_EQ(tdrv()->stack_depth(), 1);
  ASSERT_OK(nbc_device_exit(d0));
  ASSERT_STATUS(nbc_device_exit(d0), NBC_NO_CONTEXT);
  ASSERT_STATUS(nbc_device_enter(NULL), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_device_exit(NULL), NBC_INVALID_ARGUMENT);
}

static int entered_ok;
static nbc_status_t enter_other_inside(void *arg) {
  nbc_device_t *d1 = arg;
  nbc_status_t st = nbc_device_enter(d1);
  entered_ok = st == NBC_CONTEXT_SWITCH && strcmp(nbc_last_error(), "Cannot switch CUDA-context.") == 0;
  nbc_device_t *d0;
  nbc_device_get(0, &d0);
  /* Entering the attached device's own context is not a switch. */
  if (nbc_device_enter(d0) != NBC_OK || nbc_device_exit(d0) != NBC_OK) entered_ok = 0;
  return NBC_OK;
}

TEST(enter_refuses_switch_inside_require_context) {
  nbc_device_t *d1;
  ASSERT_OK(nbc_device_get(1, &d1));
  ASSERT_OK(nbc_require_context(enter_other_inside, d1));
  ASSERT_EQ(entered_ok, 1);
}

TEST(reset) {
  nbc_device_t *d;
  ASSERT_OK(nbc_select_device(0, &d));
  nbc_devptr_t p;
  ASSERT_OK(nbc_mem_alloc(64, &p));
  ASSERT_EQ(tdrv()->live_allocations(), 1);
  ASSERT_OK(nbc_close()); /* pops, then resets every device on this (the init) thread */
  ASSERT_EQ(tdrv()->primary_refcount(0), 0);
  ASSERT_EQ(tdrv()->primary_reset_count(0), 1);
  ASSERT_EQ(tdrv()->primary_reset_count(1), 1);
  ASSERT_EQ(tdrv()->live_allocations(), 0);
  /* Devices survive: the next use retains the primary context again. */
  ASSERT_OK(nbc_select_device(0, &d));
  ASSERT_EQ(tdrv()->primary_refcount(0), 1);
  ASSERT_OK(nbc_device_reset(d));
  ASSERT_EQ(tdrv()->primary_refcount(0), 0);
  ASSERT_EQ(tdrv()->primary_reset_count(0), 2);
  tdrv()->fail("cuDevicePrimaryCtxReset", 1, 999);
  ASSERT_STATUS(nbc_device_reset(d), NBC_DRIVER_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "cuDevicePrimaryCtxReset: CUDA_ERROR_UNKNOWN (999) (device 0)");
  ASSERT_STATUS(nbc_device_reset(NULL), NBC_INVALID_ARGUMENT);
}

static void *close_in_thread(void *arg) {
  (void)arg;
  nbc_device_t *d;
  if (nbc_select_device(1, &d) != NBC_OK) return (void *)0;
  if (nbc_close() != NBC_OK) return (void *)0;
  return (void *)(intptr_t)(tdrv()->stack_depth() == 0);
}

TEST(close_in_worker_thread_only_pops) {
  nbc_device_t *d;
  ASSERT_OK(nbc_select_device(0, &d)); /* this thread initialises the driver */
  for (int round = 0; round < 2; round++) {
    pthread_t t;
    void *ok;
    pthread_create(&t, NULL, close_in_thread, NULL);
    pthread_join(t, &ok);
    ASSERT(ok);
  }
  ASSERT_EQ(tdrv()->primary_reset_count(0), 0);
  ASSERT_EQ(tdrv()->primary_reset_count(1), 0);
  ASSERT_EQ(tdrv()->stack_depth(), 1);
}

TEST(unsupported_cc_context_refused) {
  setenv("NBCUDA_TESTDRIVER_CC", "9.0,3.0", 1);
  nbc_device_t *d;
  ASSERT_STATUS(nbc_select_device(1, &d), NBC_UNSUPPORTED_CC);
  ASSERT_STREQ(nbc_last_error(),
               "<CUDA device 1 'nbcuda test device 1'> has compute capability < (3, 5)");
}

static char *read_all(FILE *f) {
  static char buf[8192];
  rewind(f);
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  return buf;
}

TEST(detect_exact_output) {
  setenv("NBCUDA_TESTDRIVER_CC", "9.0,3.7,3.0", 1);
  setenv("NBCUDA_TESTDRIVER_DEVICES", "3", 1);
  for (int i = 0; i < 3; i++) {
    tdrv()->set_attribute(i, PCI_BUS_ID, 0x1b + i);
    tdrv()->set_attribute(i, PCI_DEVICE_ID, i);
    tdrv()->set_attribute(i, KERNEL_EXEC_TIMEOUT, i == 1);
    tdrv()->set_attribute(i, RATIO, 2 + 30 * i);
  }
  nbc_device_t *d[3];
  for (int i = 0; i < 3; i++) ASSERT_OK(nbc_device_get(i, &d[i]));
  FILE *out = tmpfile();
  int any = 0;
  ASSERT_OK(nbc_detect(out, &any));
  ASSERT_EQ(any, 1);
  char expected[8192];
  snprintf(expected, sizeof expected,
           "Found 3 CUDA devices\n"
           "id 0    nbcuda test device 0                              [SUPPORTED]\n"
           "                      Compute Capability: 9.0\n"
           "                           PCI Device ID: 0\n"
           "                              PCI Bus ID: 27\n"
           "                                    UUID: %s\n"
           "                                Watchdog: Disabled\n"
           "             FP32/FP64 Performance Ratio: 2\n"
           "                            FP16 Support: Yes\n"
           "                            BF16 Support: Yes\n"
           "                             FP8 Support: Yes\n"
           "id 1    nbcuda test device 1                 [SUPPORTED (DEPRECATED)]\n"
           "                      Compute Capability: 3.7\n"
           "                           PCI Device ID: 1\n"
           "                              PCI Bus ID: 28\n"
           "                                    UUID: %s\n"
           "                                Watchdog: Enabled\n"
           "             FP32/FP64 Performance Ratio: 32\n"
           "                            FP16 Support: No\n"
           "                            BF16 Support: No\n"
           "                             FP8 Support: No\n"
           "id 2    nbcuda test device 2                [NOT SUPPORTED: CC < 3.5]\n"
           "                      Compute Capability: 3.0\n"
           "                           PCI Device ID: 2\n"
           "                              PCI Bus ID: 29\n"
           "                                    UUID: %s\n"
           "                                Watchdog: Disabled\n"
           "             FP32/FP64 Performance Ratio: 62\n"
           "                            FP16 Support: No\n"
           "                            BF16 Support: No\n"
           "                             FP8 Support: No\n"
           "Summary:\n"
           "\t2/3 devices are supported\n",
           nbc_device_uuid(d[0]), nbc_device_uuid(d[1]), nbc_device_uuid(d[2]));
  ASSERT_STREQ(read_all(out), expected);
  fclose(out);
  ASSERT_EQ(tdrv()->stack_depth(), 0); /* no context was created */
  ASSERT_EQ(tdrv()->primary_refcount(0), 0);
}

TEST(detect_none_supported) {
  setenv("NBCUDA_TESTDRIVER_CC", "3.0", 1);
  setenv("NBCUDA_TESTDRIVER_DEVICES", "1", 1);
  FILE *out = tmpfile();
  int any = 1;
  ASSERT_OK(nbc_detect(out, &any));
  ASSERT_EQ(any, 0);
  ASSERT_CONTAINS(read_all(out), "Summary:\n\t0/1 devices are supported\n");
  fclose(out);
  ASSERT_STATUS(nbc_detect(NULL, &any), NBC_INVALID_ARGUMENT);
}

TEST(detect_attribute_failure) {
  FILE *out = tmpfile();
  int n;
  ASSERT_OK(nbc_device_count(&n));
  tdrv()->fail("cuDeviceGetAttribute", 1, 999);
  ASSERT_STATUS(nbc_detect(out, NULL), NBC_DRIVER_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "cuDeviceGetAttribute");
  fclose(out);
}

TEST(is_available) {
  /* The test driver initialises and libNVVM is in the toolkit here. */
  ASSERT_EQ(nbc_is_available(), 1);
}

TEST(is_available_without_nvvm) {
  /* libNVVM is looked for once per process, so the variable is set first. */
  setenv("NBCUDA_NVVM", "/nonexistent/libnvvm.so", 1);
  ASSERT_EQ(nbc_is_available(), 0);
  ASSERT_CONTAINS(nbc_last_error(), "/nonexistent/libnvvm.so");
}

TEST_LIST(X(count_and_get) X(device_count_from_env) X(uuid_format) X(compute_capability_and_fp16)
              X(attributes) X(attribute_lookup) X(enumeration_failure) X(select_device_pushes)
                  X(get_current_device_creates_device0_context) X(enter_exit_push_and_pop_once)
                      X(enter_refuses_switch_inside_require_context) X(reset)
                          X(close_in_worker_thread_only_pops) X(unsupported_cc_context_refused)
                              X(detect_exact_output) X(detect_none_supported)
                                  X(detect_attribute_failure) X(is_available)
                                      X(is_available_without_nvvm))
TEST_MAIN()
