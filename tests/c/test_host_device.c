/* test_host_device.c — devices: the list, names, UUIDs, compute capability, attributes by
 * number and by name, reset, select_device / get_current_device / gpus.current, the scoped
 * `with gpus[i]:` pair, and detect()'s exact report.
 *
 * Runs against the test driver (CI) and the real driver (GPU machine). Tests that configure
 * the fixture (device counts, compute capabilities, attributes, fault injection) say
 * REQUIRE_TESTDRIVER(); tests of two devices say REQUIRE_DEVICES(2); the others compare with
 * what the driver reports and, with the fixture present, also with the fixture's values and
 * its context stack depth and reference counts.
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

/* The number of devices; at least one (else the test skips, see REQUIRE_DEVICES). */
static int device_count(void) {
  REQUIRE_DEVICES(1);
  int n = 0;
  ASSERT_OK(nbc_device_count(&n));
  if (tdrv_present()) ASSERT_EQ(n, 2);
  return n;
}

TEST(count_and_get) {
  int n = device_count();
  nbc_device_t *list[64];
  int listed = 0;
  ASSERT_OK(nbc_list_devices(list, 64, &listed));
  ASSERT_EQ(listed, n);
  for (int i = 0; i < n; i++) {
    nbc_device_t *d, *again;
    ASSERT_OK(nbc_device_get(i, &d));
    ASSERT_OK(nbc_device_get(i, &again));
    ASSERT(d == again); /* one object per ordinal */
    ASSERT(i >= 64 || list[i] == d);
    ASSERT_EQ(nbc_device_id(d), i);
    ASSERT(nbc_device_name(d)[0] != '\0');
    for (int j = 0; j < i; j++) {
      nbc_device_t *other;
      ASSERT_OK(nbc_device_get(j, &other));
      ASSERT(other != d);
    }
  }
  if (tdrv_present()) {
    nbc_device_t *d0, *d1;
    ASSERT_OK(nbc_device_get(0, &d0));
    ASSERT_OK(nbc_device_get(1, &d1));
    ASSERT_STREQ(nbc_device_name(d0), "nbcuda test device 0");
    ASSERT_STREQ(nbc_device_name(d1), "nbcuda test device 1");
  }
  nbc_device_t *bad = (nbc_device_t *)1;
  ASSERT_STATUS(nbc_device_get(n, &bad), NBC_INVALID_DEVICE);
  ASSERT(bad == NULL);
  char expected[128];
  snprintf(expected, sizeof expected, "device ordinal %d is out of range (%d device%s)", n, n,
           n == 1 ? "" : "s");
  ASSERT_CONTAINS(nbc_last_error(), expected);
  ASSERT_STATUS(nbc_device_get(-1, &bad), NBC_INVALID_DEVICE);
  ASSERT_STATUS(nbc_device_get(0, NULL), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_device_count(NULL), NBC_INVALID_ARGUMENT);
}

TEST(device_count_from_env) {
  REQUIRE_TESTDRIVER();
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
  int n = device_count();
  for (int i = 0; i < n; i++) {
    nbc_device_t *d;
    ASSERT_OK(nbc_device_get(i, &d));
    const char *u = nbc_device_uuid(d);
    /* ^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$ */
    ASSERT_EQ(strlen(u), 40);
    ASSERT(strncmp(u, "GPU-", 4) == 0);
    ASSERT(is_hex(u + 4, 8) && u[12] == '-' && is_hex(u + 13, 4) && u[17] == '-');
    ASSERT(is_hex(u + 18, 4) && u[22] == '-' && is_hex(u + 23, 4) && u[27] == '-');
    ASSERT(is_hex(u + 28, 12));
    for (int j = 0; j < i; j++) {
      nbc_device_t *other;
      ASSERT_OK(nbc_device_get(j, &other));
      ASSERT(strcmp(u, nbc_device_uuid(other)) != 0);
    }
  }
}

/* The compute capability read at enumeration agrees with the attributes, and float16
 * support follows it (cc >= 5.3), on whatever devices the driver has. */
TEST(compute_capability_matches_attributes) {
  int n = device_count();
  for (int i = 0; i < n; i++) {
    nbc_device_t *d;
    ASSERT_OK(nbc_device_get(i, &d));
    int major = -1, minor = -1, amajor = -2, aminor = -2;
    nbc_device_compute_capability(d, &major, &minor);
    ASSERT_OK(nbc_device_attribute(d, CC_MAJOR, &amajor));
    ASSERT_OK(nbc_device_attribute_by_name(d, "COMPUTE_CAPABILITY_MINOR", &aminor));
    ASSERT_EQ(major, amajor);
    ASSERT_EQ(minor, aminor);
    ASSERT(major >= 1 && minor >= 0);
    ASSERT_EQ(nbc_device_supports_float16(d), major > 5 || (major == 5 && minor >= 3));
    if (tdrv_present()) ASSERT(major == 9 && minor == 0);
  }
  int major = 7, minor = 7;
  nbc_device_compute_capability(NULL, &major, &minor);
  ASSERT_EQ(major, 0);
  ASSERT_EQ(nbc_device_supports_float16(NULL), 0);
}

TEST(compute_capability_and_fp16) {
  REQUIRE_TESTDRIVER();
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

/* What any driver answers: attributes by number and by name agree, unknown names are
 * refused before the driver is asked. */
TEST(attributes_by_number_and_name) {
  device_count();
  nbc_device_t *d;
  ASSERT_OK(nbc_device_get(0, &d));
  int by_number = 0, by_name = 0;
  ASSERT_OK(nbc_device_attribute(d, MAX_THREADS_PER_BLOCK, &by_number));
  ASSERT_OK(nbc_device_attribute_by_name(d, "MAX_THREADS_PER_BLOCK", &by_name));
  ASSERT_EQ(by_number, by_name);
  ASSERT(by_number >= 64 && by_number <= 4096);
  ASSERT_OK(nbc_device_attribute_by_name(d, "WARP_SIZE", &by_name));
  ASSERT_EQ(by_name, 32);
  ASSERT_STATUS(nbc_device_attribute_by_name(d, "NO_SUCH_THING", &by_name),
                NBC_INVALID_ARGUMENT);
  ASSERT_STREQ(nbc_last_error(), "unknown device attribute 'NO_SUCH_THING'");
  ASSERT_STATUS(nbc_device_attribute(NULL, 1, &by_name), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_device_attribute(d, 1, NULL), NBC_INVALID_ARGUMENT);
}

TEST(attributes) {
  REQUIRE_TESTDRIVER();
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
  REQUIRE_TESTDRIVER();
  tdrv()->fail("cuDeviceGetName", 1, 999);
  int n;
  ASSERT_STATUS(nbc_device_count(&n), NBC_DRIVER_ERROR);
  ASSERT_STREQ(nbc_last_error(), "cuDeviceGetName: CUDA_ERROR_UNKNOWN (999)");
  ASSERT_OK(nbc_device_count(&n)); /* retried on the next call */
  ASSERT_EQ(n, 2);
}

/* The fixture's context stack depth of this thread, checked only when the fixture is there. */
static void expect_depth(int depth) {
  if (tdrv_present()) ASSERT_EQ(tdrv()->stack_depth(), depth);
}

/* The device whose context is current on this thread (NULL: none). */
static nbc_device_t *current(void) {
  nbc_device_t *cur = (nbc_device_t *)1;
  ASSERT_OK(nbc_device_current(&cur));
  return cur;
}

TEST(select_device_pushes) {
  /* The last device: device 1 on the fixture, device 0 on a one-GPU machine. */
  int last = device_count() - 1;
  nbc_device_t *d;
  ASSERT_OK(nbc_select_device(last, &d));
  ASSERT_EQ(nbc_device_id(d), last);
  expect_depth(1);
  ASSERT_OK(nbc_select_device(last, &d));
  expect_depth(2); /* numba pushes on every call */
  nbc_device_t *cur;
  ASSERT_OK(nbc_get_current_device(&cur));
  ASSERT(cur == d);
  ASSERT_STATUS(nbc_select_device(last + 7, &d), NBC_INVALID_DEVICE);
  expect_depth(2);
  ASSERT(current() == d);
  /* Two pushes: one pop leaves the device current, the second empties the stack. */
  ASSERT_OK(nbc_device_exit(d));
  ASSERT(current() == d);
  ASSERT_OK(nbc_select_device(last, &d));
  ASSERT_OK(nbc_close());
  expect_depth(0);
  ASSERT(current() == NULL);
}

TEST(get_current_device_creates_device0_context) {
  device_count();
  expect_depth(0);
  nbc_device_t *cur = NULL;
  ASSERT_OK(nbc_device_current(&cur));
  ASSERT(cur == NULL); /* gpus.current creates nothing */
  expect_depth(0);
  ASSERT_OK(nbc_get_current_device(&cur));
  ASSERT_EQ(nbc_device_id(cur), 0);
  expect_depth(1);
  if (tdrv_present()) ASSERT_EQ(tdrv()->primary_refcount(0), 1);
  nbc_device_t *again;
  ASSERT_OK(nbc_device_current(&again));
  ASSERT(again == cur);
  ASSERT_STATUS(nbc_get_current_device(NULL), NBC_INVALID_ARGUMENT);
  /* The context pushed lazily is the one left: popping it empties the stack. */
  ASSERT_OK(nbc_device_exit(cur));
  ASSERT(current() == NULL);
}

TEST(enter_exit_push_and_pop_once) {
  REQUIRE_DEVICES(2);
  nbc_device_t *d0, *d1, *cur;
  ASSERT_OK(nbc_device_get(0, &d0));
  ASSERT_OK(nbc_device_get(1, &d1));
  ASSERT_OK(nbc_select_device(0, &cur));
  expect_depth(1);
  ASSERT_OK(nbc_device_enter(d1));
  expect_depth(2);
  ASSERT_OK(nbc_device_current(&cur));
  ASSERT(cur == d1);
  ASSERT_OK(nbc_device_enter(d0)); /* nested, outside require_context: allowed */
  ASSERT(current() == d0);
  ASSERT_OK(nbc_device_exit(d0));
  ASSERT(current() == d1);
  ASSERT_OK(nbc_device_exit(d1));
  expect_depth(1); /* the previous context is restored */
  ASSERT_OK(nbc_device_current(&cur));
  ASSERT(cur == d0);
  /* Leaving the wrong device pops anyway and says so. */
  ASSERT_OK(nbc_device_enter(d1));
  ASSERT_STATUS(nbc_device_exit(d0), NBC_CONTEXT_MISMATCH);
  ASSERT_CONTAINS(nbc_last_error(), "is not the primary context");
  expect_depth(1);
  ASSERT(current() == d0);
  ASSERT_OK(nbc_device_exit(d0));
  ASSERT(current() == NULL);
  ASSERT_STATUS(nbc_device_exit(d0), NBC_NO_CONTEXT);
  ASSERT_STATUS(nbc_device_enter(NULL), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_device_exit(NULL), NBC_INVALID_ARGUMENT);
}

static int entered_ok;
static nbc_status_t enter_other_inside(void *arg) {
  nbc_device_t *d1 = arg;
  nbc_status_t st = nbc_device_enter(d1);
  entered_ok =
      st == NBC_CONTEXT_SWITCH && strcmp(nbc_last_error(), "Cannot switch CUDA-context.") == 0;
  nbc_device_t *d0;
  nbc_device_get(0, &d0);
  /* Entering the attached device's own context is not a switch. */
  if (nbc_device_enter(d0) != NBC_OK || nbc_device_exit(d0) != NBC_OK) entered_ok = 0;
  return NBC_OK;
}

TEST(enter_refuses_switch_inside_require_context) {
  REQUIRE_DEVICES(2);
  nbc_device_t *d1;
  ASSERT_OK(nbc_device_get(1, &d1));
  ASSERT_OK(nbc_require_context(enter_other_inside, d1));
  ASSERT_EQ(entered_ok, 1);
}

TEST(reset) {
  REQUIRE_TESTDRIVER();
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
  ASSERT_CONTAINS(nbc_last_error(),
                  "cuDevicePrimaryCtxReset: CUDA_ERROR_UNKNOWN (999) (device 0)");
  ASSERT_STATUS(nbc_device_reset(NULL), NBC_INVALID_ARGUMENT);
}

static void *close_in_thread(void *arg) {
  int dev = (int)(intptr_t)arg;
  nbc_device_t *d, *cur = (nbc_device_t *)1;
  if (nbc_select_device(dev, &d) != NBC_OK) return (void *)0;
  if (nbc_close() != NBC_OK) return (void *)0;
  if (nbc_device_current(&cur) != NBC_OK || cur != NULL) return (void *)0;
  return (void *)(intptr_t)(!tdrv_present() || tdrv()->stack_depth() == 0);
}

TEST(close_in_worker_thread_only_pops) {
  int last = device_count() - 1;
  nbc_device_t *d;
  ASSERT_OK(nbc_select_device(0, &d)); /* this thread initialises the driver */
  /* Memory allocated here must survive: a reset by the workers' close would free it. */
  nbc_devptr_t p;
  int in = 1234, out = 0;
  ASSERT_OK(nbc_mem_alloc(sizeof in, &p));
  ASSERT_OK(nbc_memcpy_htod(p, &in, sizeof in));
  for (int round = 0; round < 2; round++) {
    pthread_t t;
    void *ok;
    pthread_create(&t, NULL, close_in_thread, (void *)(intptr_t)last);
    pthread_join(t, &ok);
    ASSERT(ok);
  }
  if (tdrv_present()) {
    ASSERT_EQ(tdrv()->primary_reset_count(0), 0);
    ASSERT_EQ(tdrv()->primary_reset_count(1), 0);
  }
  expect_depth(1);
  ASSERT(current() == d);
  ASSERT_OK(nbc_memcpy_dtoh(&out, p, sizeof out));
  ASSERT_EQ(out, 1234);
  ASSERT_OK(nbc_mem_free(p));
}

TEST(unsupported_cc_context_refused) {
  REQUIRE_TESTDRIVER();
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
  REQUIRE_TESTDRIVER();
  setenv("NBCUDA_TESTDRIVER_CC", "9.0,3.7,3.0", 1);
  setenv("NBCUDA_TESTDRIVER_DEVICES", "3", 1);
  for (int i = 0; i < 3; i++) {
    tdrv()->set_attribute(i, PCI_BUS_ID, 0x1b + i);
    tdrv()->set_attribute(i, PCI_DEVICE_ID, i);
    tdrv()->set_attribute(i, KERNEL_EXEC_TIMEOUT, i == 1);
    tdrv()->set_attribute(i, RATIO, 2 + 30 * i);
  }
  nbc_device_t *d[3];
  for (int i = 0; i < 3; i++)
    ASSERT_OK(nbc_device_get(i, &d[i]));
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

/* The report of whatever devices the driver has: one block per device with its name, compute
 * capability and UUID, and the summary; no context is created. */
TEST(detect_report_matches_devices) {
  int n = device_count();
  FILE *out = tmpfile();
  int any = -1, supported = 0;
  ASSERT_OK(nbc_detect(out, &any));
  const char *text = read_all(out);
  char line[512];
  snprintf(line, sizeof line, "Found %d CUDA devices\n", n);
  ASSERT(strncmp(text, line, strlen(line)) == 0);
  for (int i = 0; i < n; i++) {
    nbc_device_t *d;
    int major, minor;
    ASSERT_OK(nbc_device_get(i, &d));
    nbc_device_compute_capability(d, &major, &minor);
    supported += major > 3 || (major == 3 && minor >= 5);
    snprintf(line, sizeof line, "\nid %d    %20s ", i, nbc_device_name(d));
    ASSERT_CONTAINS(text, line);
    snprintf(line, sizeof line, "%40s: %d.%d\n", "Compute Capability", major, minor);
    ASSERT_CONTAINS(text, line);
    snprintf(line, sizeof line, "%40s: %s\n", "UUID", nbc_device_uuid(d));
    ASSERT_CONTAINS(text, line);
  }
  snprintf(line, sizeof line, "Summary:\n\t%d/%d devices are supported\n", supported, n);
  ASSERT_CONTAINS(text, line);
  ASSERT_EQ(any, supported > 0);
  fclose(out);
  ASSERT(current() == NULL); /* no context was created */
  expect_depth(0);
  ASSERT_STATUS(nbc_detect(NULL, &any), NBC_INVALID_ARGUMENT);
}

TEST(detect_none_supported) {
  REQUIRE_TESTDRIVER();
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
  REQUIRE_TESTDRIVER();
  FILE *out = tmpfile();
  int n;
  ASSERT_OK(nbc_device_count(&n));
  tdrv()->fail("cuDeviceGetAttribute", 1, 999);
  ASSERT_STATUS(nbc_detect(out, NULL), NBC_DRIVER_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "cuDeviceGetAttribute");
  fclose(out);
}

TEST(is_available) {
  /* The driver initialises and libNVVM is in the toolkit here. */
  REQUIRE_DRIVER();
  ASSERT_EQ(nbc_is_available(), 1);
}

TEST(is_available_without_nvvm) {
  /* libNVVM is looked for once per process, so the variable is set first. */
  setenv("NBCUDA_NVVM", "/nonexistent/libnvvm.so", 1);
  REQUIRE_DRIVER(); /* without a driver the reason given would be the driver's */
  ASSERT_EQ(nbc_is_available(), 0);
  ASSERT_CONTAINS(nbc_last_error(), "/nonexistent/libnvvm.so");
}

TEST_LIST(X(count_and_get) X(device_count_from_env) X(uuid_format)
              X(compute_capability_matches_attributes) X(compute_capability_and_fp16)
                  X(attributes_by_number_and_name) X(attributes) X(attribute_lookup)
                      X(enumeration_failure) X(select_device_pushes)
                          X(get_current_device_creates_device0_context)
                              X(enter_exit_push_and_pop_once)
                                  X(enter_refuses_switch_inside_require_context) X(reset)
                                      X(close_in_worker_thread_only_pops)
                                          X(unsupported_cc_context_refused)
                                              X(detect_exact_output)
                                                  X(detect_report_matches_devices)
                                                      X(detect_none_supported)
                                                          X(detect_attribute_failure)
                                                              X(is_available)
                                                                  X(is_available_without_nvvm))
TEST_MAIN()
