/* test_host_ipc.c — CUDA IPC: exporting device memory (nbc_ipc_get_handle: the allocation's
 * base and the pointer's offset, the range, the device identity), opening it
 * (nbc_ipc_open) and closing it (nbc_ipc_close), with their errors.
 *
 * The real driver refuses to open a handle in the process that made it, and the test
 * driver does the same unless NBCUDA_TESTDRIVER_IPC_SAME_PROCESS=1: the tests that open and
 * read through a mapping set that knob and need the fixture. The refusal itself is checked
 * on any driver. On a GPU machine (no fixture) `cross_process` forks a child before CUDA is
 * initialised, sends it the handle through a pipe, and the child doubles the shared values
 * through its own mapping: the real IPC path end to end.
 */
#include <stdlib.h>
#include <sys/wait.h>

#include "nbcuda.h"
#include "test.h"
#include "testdriver.h"

#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_INVALID_CONTEXT 201
#define CUDA_ERROR_MAP_FAILED 205
#define CU_DEVICE_ATTRIBUTE_PCI_BUS_ID 33

static void allow_same_process(void) {
  setenv("NBCUDA_TESTDRIVER_IPC_SAME_PROCESS", "1", 1);
}

static void expect_mappings(int n) {
  if (!tdrv_present()) return;
  int (*live)(void) = (int (*)(void))(uintptr_t)tdrv_sym("tdrv_live_ipc_mappings");
  ASSERT(live != NULL);
  ASSERT_EQ(live(), n);
}

/* Device memory of n int32 holding 0, 1, 2, ... */
static nbc_devptr_t iota(int n) {
  int32_t *host = malloc(sizeof(int32_t) * (size_t)n);
  ASSERT(host != NULL);
  for (int i = 0; i < n; i++)
    host[i] = i;
  nbc_devptr_t d;
  ASSERT_OK(nbc_mem_alloc(sizeof(int32_t) * (size_t)n, &d));
  ASSERT_OK(nbc_memcpy_htod(d, host, sizeof(int32_t) * (size_t)n));
  free(host);
  return d;
}

TEST(handle_fields) {
  REQUIRE_DRIVER();
  nbc_devptr_t d = iota(256); /* 1024 bytes */
  nbc_ipc_handle_t h;
  ASSERT_OK(nbc_ipc_get_handle(NULL, d + 256, 0, &h));
  ASSERT_EQ(h.offset, 256);
  ASSERT_EQ(h.size, 768);
  ASSERT_EQ(h.pid, getpid());
  nbc_device_t *dev;
  ASSERT_OK(nbc_device_get(0, &dev));
  ASSERT_STREQ(h.uuid, nbc_device_uuid(dev));
  int bus;
  ASSERT_OK(nbc_device_attribute(dev, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, &bus));
  ASSERT_EQ(h.pci_bus_id, bus);
  ASSERT(h.pci_domain_id >= 0 && h.pci_device_id >= 0);
  /* The whole allocation and a part of it name the same exported allocation. */
  nbc_ipc_handle_t whole;
  ASSERT_OK(nbc_ipc_get_handle(NULL, d, 128, &whole));
  ASSERT_EQ(whole.offset, 0);
  ASSERT_EQ(whole.size, 128);
  ASSERT(memcmp(whole.bytes, h.bytes, NBC_IPC_HANDLE_SIZE) == 0);
  ASSERT_OK(nbc_mem_free(d));
}

TEST(handle_errors) {
  REQUIRE_DRIVER();
  nbc_devptr_t d = iota(256);
  nbc_ipc_handle_t h;
  ASSERT_STATUS(nbc_ipc_get_handle(NULL, d + 1000, 100, &h), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "cannot export 100 bytes at");
  ASSERT_CONTAINS(nbc_last_error(), "has only 24 bytes from there");
  ASSERT_STATUS(nbc_ipc_get_handle(NULL, 0, 0, &h), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "an empty array has no memory to share");
  ASSERT_STATUS(nbc_ipc_get_handle(NULL, d, 0, NULL), NBC_INVALID_ARGUMENT);
  /* An address that is no device memory: the driver's answer, named. */
  ASSERT(nbc_ipc_get_handle(NULL, (nbc_devptr_t)0x1000, 0, &h) != NBC_OK);
  ASSERT_CONTAINS(nbc_last_error(), "cuMemGetAddressRange: ");
  ASSERT_CONTAINS(nbc_last_error(), "is not device memory of the current context");
  ASSERT_OK(nbc_mem_free(d));
}

TEST(get_handle_driver_failure) {
  REQUIRE_TESTDRIVER();
  nbc_devptr_t d = iota(16);
  nbc_ipc_handle_t h;
  tdrv()->fail("cuIpcGetMemHandle", 1, 999);
  ASSERT_STATUS(nbc_ipc_get_handle(NULL, d, 0, &h), NBC_DRIVER_ERROR);
  ASSERT_CONTAINS(nbc_last_error(),
                  "cuIpcGetMemHandle: CUDA_ERROR_UNKNOWN (999) (allocation at");
  ASSERT_EQ(nbc_last_driver_error(), 999);
  ASSERT_OK(nbc_mem_free(d));
}

/* What the real driver does: the exporting process cannot open its own handle. */
TEST(same_process_open_refused) {
  REQUIRE_DRIVER();
  unsetenv("NBCUDA_TESTDRIVER_IPC_SAME_PROCESS");
  nbc_devptr_t d = iota(16);
  nbc_ipc_handle_t h;
  ASSERT_OK(nbc_ipc_get_handle(NULL, d, 0, &h));
  nbc_devptr_t p = 123;
  ASSERT(nbc_ipc_open(&h, NULL, &p) != NBC_OK);
  ASSERT_EQ(p, 0);
  ASSERT_EQ(nbc_last_driver_error(), CUDA_ERROR_INVALID_CONTEXT);
  ASSERT_CONTAINS(nbc_last_error(), "cuIpcOpenMemHandle: CUDA_ERROR_INVALID_CONTEXT (201)");
  ASSERT_CONTAINS(nbc_last_error(), "the handle was made by this process");
  expect_mappings(0);
  ASSERT_OK(nbc_mem_free(d));
}

TEST(open_read_write_close) {
  REQUIRE_TESTDRIVER();
  allow_same_process();
  nbc_devptr_t d = iota(256);
  nbc_ipc_handle_t h;
  ASSERT_OK(nbc_ipc_get_handle(NULL, d + 64 * sizeof(int32_t), 16 * sizeof(int32_t), &h));
  nbc_devptr_t p;
  ASSERT_OK(nbc_ipc_open(&h, NULL, &p));
  ASSERT(p != 0 && p != d + 64 * sizeof(int32_t)); /* a mapping of its own */
  expect_mappings(1);
  int32_t got[16];
  ASSERT_OK(nbc_memcpy_dtoh(got, p, sizeof got));
  for (int i = 0; i < 16; i++)
    ASSERT_EQ(got[i], 64 + i);
  /* Writes through the mapping land in the exported allocation. */
  for (int i = 0; i < 16; i++)
    got[i] *= 2;
  ASSERT_OK(nbc_memcpy_htod(p, got, sizeof got));
  int32_t back[16];
  ASSERT_OK(nbc_memcpy_dtoh(back, d + 64 * sizeof(int32_t), sizeof back));
  for (int i = 0; i < 16; i++)
    ASSERT_EQ(back[i], 2 * (64 + i));
  /* A second open maps once, and needs its own close. */
  nbc_devptr_t again;
  ASSERT_OK(nbc_ipc_open(&h, NULL, &again));
  ASSERT_EQ(again, p);
  expect_mappings(1);
  ASSERT_OK(nbc_ipc_close(p));
  expect_mappings(1);
  ASSERT_OK(nbc_ipc_close(again));
  expect_mappings(0);
  ASSERT_STATUS(nbc_ipc_close(p), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "is not an open IPC mapping");
  /* The mapping is gone: copies through it fail instead of reaching the memory. */
  ASSERT(nbc_memcpy_dtoh(got, p, sizeof got) != NBC_OK);
  ASSERT_EQ(nbc_last_driver_error(), CUDA_ERROR_INVALID_VALUE);
  ASSERT_OK(nbc_mem_free(d));
}

TEST(open_from_bytes) {
  REQUIRE_TESTDRIVER();
  allow_same_process();
  nbc_devptr_t d = iota(64);
  nbc_ipc_handle_t h, raw;
  ASSERT_OK(nbc_ipc_get_handle(NULL, d, 0, &h));
  nbc_ipc_handle_from_bytes(h.bytes, 8 * sizeof(int32_t), 4 * sizeof(int32_t), &raw);
  ASSERT_EQ(raw.pci_bus_id, -1);
  ASSERT_STREQ(raw.uuid, "");
  nbc_devptr_t p;
  ASSERT_OK(nbc_ipc_open(&raw, NULL, &p));
  int32_t got[4];
  ASSERT_OK(nbc_memcpy_dtoh(got, p, sizeof got));
  ASSERT_EQ(got[0], 8);
  ASSERT_EQ(got[3], 11);
  ASSERT_OK(nbc_ipc_close(p));
  /* A range past the allocation is refused, and nothing stays mapped. */
  nbc_ipc_handle_from_bytes(h.bytes, 60 * sizeof(int32_t), 8 * sizeof(int32_t), &raw);
  ASSERT_STATUS(nbc_ipc_open(&raw, NULL, &p), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "runs past the exported allocation (256 bytes)");
  expect_mappings(0);
  /* Bytes that are no handle: the driver's answer. */
  unsigned char junk[NBC_IPC_HANDLE_SIZE] = {1, 2, 3};
  nbc_ipc_handle_from_bytes(junk, 0, 16, &raw);
  ASSERT_STATUS(nbc_ipc_open(&raw, NULL, &p), NBC_DRIVER_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "cuIpcOpenMemHandle: CUDA_ERROR_INVALID_VALUE (1)");
  ASSERT_OK(nbc_mem_free(d));
  /* The exporter freed the memory: the handle is dead. */
  ASSERT_STATUS(nbc_ipc_open(&h, NULL, &p), NBC_DRIVER_ERROR);
  ASSERT_EQ(nbc_last_driver_error(), CUDA_ERROR_MAP_FAILED);
}

TEST(unknown_source_device) {
  REQUIRE_DRIVER();
  nbc_devptr_t d = iota(16);
  nbc_ipc_handle_t h;
  ASSERT_OK(nbc_ipc_get_handle(NULL, d, 0, &h));
  snprintf(h.uuid, sizeof h.uuid, "GPU-00000000-0000-0000-0000-000000000000");
  nbc_devptr_t p;
  ASSERT_STATUS(nbc_ipc_open(&h, NULL, &p), NBC_INVALID_DEVICE);
  ASSERT_CONTAINS(nbc_last_error(),
                  "No device of GPU-00000000-0000-0000-0000-000000000000 (PCI");
  ASSERT_CONTAINS(nbc_last_error(), "Target device may not be visible in this process.");
  /* Without a UUID the PCI location decides. */
  h.uuid[0] = 0;
  h.pci_bus_id = 4000;
  ASSERT_STATUS(nbc_ipc_open(&h, NULL, &p), NBC_INVALID_DEVICE);
  ASSERT_CONTAINS(nbc_last_error(), "No device of (PCI domain");
  ASSERT_OK(nbc_mem_free(d));
}

/* Memory of device 0 opened in device 1's context: peer access is enabled lazily. */
TEST(open_on_peer_device) {
  REQUIRE_TESTDRIVER();
  REQUIRE_DEVICES(2);
  allow_same_process();
  nbc_devptr_t d = iota(32);
  nbc_ipc_handle_t h;
  ASSERT_OK(nbc_ipc_get_handle(NULL, d, 0, &h));
  nbc_device_t *dev1;
  nbc_context_t *ctx1;
  ASSERT_OK(nbc_device_get(1, &dev1));
  ASSERT_OK(nbc_device_primary_context(dev1, &ctx1));
  nbc_devptr_t p;
  ASSERT_OK(nbc_ipc_open(&h, ctx1, &p));
  ASSERT_OK(nbc_ipc_close(p));
  /* a failing peer query is reported */
  tdrv()->fail("cuDeviceCanAccessPeer", 1, 999);
  ASSERT_STATUS(nbc_ipc_open(&h, ctx1, &p), NBC_DRIVER_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "cuDeviceCanAccessPeer: CUDA_ERROR_UNKNOWN (999)");
  expect_mappings(0);
  ASSERT_OK(nbc_mem_free(d));
}

/* Devices that are not peers (the fixture's NBCUDA_TESTDRIVER_NO_PEER_ACCESS): the map is
 * refused, and nbc_ipc_open_staged copies the memory into the opening context instead
 * (mapped in the exporting device's context only while copying). */
TEST(staged_open_without_peer_access) {
  REQUIRE_TESTDRIVER();
  REQUIRE_DEVICES(2);
  allow_same_process();
  nbc_devptr_t d = iota(32);
  nbc_ipc_handle_t h;
  ASSERT_OK(nbc_ipc_get_handle(NULL, d + 8 * sizeof(int32_t), 16 * sizeof(int32_t), &h));
  nbc_device_t *dev1;
  nbc_context_t *ctx1;
  ASSERT_OK(nbc_device_get(1, &dev1));
  ASSERT_OK(nbc_device_primary_context(dev1, &ctx1));
  setenv("NBCUDA_TESTDRIVER_NO_PEER_ACCESS", "1", 1);
  int peer = -1;
  ASSERT_OK(nbc_ipc_source_is_peer(&h, ctx1, &peer));
  ASSERT_EQ(peer, 0);
  nbc_devptr_t p = 0;
  ASSERT_STATUS(nbc_ipc_open(&h, ctx1, &p), NBC_INVALID_DEVICE);
  ASSERT_CONTAINS(nbc_last_error(), "has no peer access to it (nbc_ipc_open_staged copies it)");
  nbc_devptr_t copy = 0;
  ASSERT_OK(nbc_ipc_open_staged(&h, ctx1, &copy));
  unsetenv("NBCUDA_TESTDRIVER_NO_PEER_ACCESS");
  expect_mappings(0);
  int32_t got[16];
  ASSERT_OK(nbc_memcpy_dtoh(got, copy, sizeof got));
  for (int i = 0; i < 16; i++)
    ASSERT_EQ(got[i], 8 + i);
  ASSERT_OK(nbc_ipc_source_is_peer(&h, ctx1, &peer));
  ASSERT_EQ(peer, 1);
  /* a handle from raw bytes names no exporting device: mapped anywhere, never staged */
  nbc_ipc_handle_t raw;
  nbc_ipc_handle_from_bytes(h.bytes, h.offset, h.size, &raw);
  ASSERT_OK(nbc_ipc_source_is_peer(&raw, ctx1, &peer));
  ASSERT_EQ(peer, 1);
  ASSERT_STATUS(nbc_ipc_open_staged(&raw, ctx1, &copy), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "doesn't have source info");
  ASSERT_OK(nbc_mem_free(copy));
  ASSERT_OK(nbc_mem_free(d));
}

/* A reset of the opening context unmaps everything; closing afterwards only forgets. */
TEST(reset_unmaps) {
  REQUIRE_TESTDRIVER();
  REQUIRE_DEVICES(2);
  allow_same_process();
  nbc_device_t *dev1;
  nbc_context_t *ctx1;
  ASSERT_OK(nbc_device_get(1, &dev1));
  ASSERT_OK(nbc_device_primary_context(dev1, &ctx1));
  nbc_devptr_t d = iota(32);
  nbc_ipc_handle_t h;
  ASSERT_OK(nbc_ipc_get_handle(NULL, d, 0, &h));
  nbc_devptr_t p;
  ASSERT_OK(nbc_ipc_open(&h, ctx1, &p));
  expect_mappings(1);
  ASSERT_OK(nbc_device_reset(dev1));
  expect_mappings(0);
  ASSERT_OK(nbc_ipc_close(p));
  ASSERT_STATUS(nbc_ipc_close(p), NBC_INVALID_ARGUMENT);
  ASSERT_OK(nbc_mem_free(d));
}

/* The real thing: a child process (forked before CUDA is initialised, as CUDA requires)
 * opens the parent's handle and doubles the values; the parent sees them doubled. */
TEST(cross_process) {
  if (tdrv_present()) SKIP("the test driver's memory is not shared between processes");
  int to_child[2], to_parent[2];
  ASSERT(pipe(to_child) == 0 && pipe(to_parent) == 0);
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    nbc_ipc_handle_t h;
    char status = 1;
    if (read(to_child[0], &h, sizeof h) == (ssize_t)sizeof h) {
      nbc_devptr_t p;
      int32_t v[64];
      if (nbc_ipc_open(&h, NULL, &p) == NBC_OK) {
        if (nbc_memcpy_dtoh(v, p, sizeof v) == NBC_OK) {
          for (int i = 0; i < 64; i++)
            v[i] *= 2;
          if (nbc_memcpy_htod(p, v, sizeof v) == NBC_OK && nbc_ipc_close(p) == NBC_OK)
            status = 0;
        }
      }
      if (status) fprintf(stderr, "child: %s\n", nbc_last_error());
    }
    if (write(to_parent[1], &status, 1) != 1) _exit(2);
    _exit(status);
  }
  REQUIRE_DRIVER();
  nbc_devptr_t d = iota(128);
  nbc_ipc_handle_t h;
  ASSERT_OK(nbc_ipc_get_handle(NULL, d + 64 * sizeof(int32_t), 64 * sizeof(int32_t), &h));
  ASSERT(write(to_child[1], &h, sizeof h) == (ssize_t)sizeof h);
  char status = 1;
  ASSERT(read(to_parent[0], &status, 1) == 1);
  int wstatus;
  ASSERT(waitpid(pid, &wstatus, 0) == pid);
  ASSERT_EQ(status, 0);
  int32_t v[128];
  ASSERT_OK(nbc_memcpy_dtoh(v, d, sizeof v));
  for (int i = 0; i < 128; i++)
    ASSERT_EQ(v[i], i < 64 ? i : 2 * i);
  ASSERT_OK(nbc_mem_free(d));
}

TEST_LIST(X(handle_fields) X(handle_errors) X(get_handle_driver_failure)
              X(same_process_open_refused) X(open_read_write_close) X(open_from_bytes)
                  X(unknown_source_device) X(open_on_peer_device)
                      X(staged_open_without_peer_access) X(reset_unmaps) X(cross_process))

TEST_MAIN()
