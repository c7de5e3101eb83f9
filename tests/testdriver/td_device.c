/* td_device.c — the test driver's devices: count, names, UUIDs, PCI locations, memory
 * sizes and every CU_DEVICE_ATTRIBUTE_*, plus the profiler start/stop switch.
 *
 * How it works: td__devices_configure() runs once (at the first cuInit, or earlier when a
 * test overrides an attribute), reads NBCUDA_TESTDRIVER_DEVICES / _CC / _MEM and fills
 * each device's attribute array from td__attribute_defaults (a real H200's values,
 * generated into td_tables.c), then makes the per-device ones distinct: compute
 * capability from the env, PCI bus id = ordinal + 1. Names are "nbcuda test device N"
 * ("nbcuda CPU device N", one device by default, in libnbcuda_cpudriver.so)
 * and UUIDs are a fixed 12-byte prefix followed by the ordinal, stable across runs.
 * tdrv_set_attribute edits the same arrays, so a test can give a device any attribute.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "td.h"

td_device td__devices[TD_MAX_DEVICES];
int td__device_count;
int td__profiler_on;
static int configured;

_Static_assert(sizeof(((td_device *)0)->attrs) / sizeof(int) >= 148,
               "attrs[] must hold every CU_DEVICE_ATTRIBUTE_*");

/* Parses "9.0" or "9.0,5.0,3.0" into major/minor per device (the last entry repeats).
 * Malformed input is reported and falls back to 9.0, so a typo is visible. */
static void parse_cc(const char *env, int count) {
  int major = 9, minor = 0;
  const char *p = env;
  for (int d = 0; d < count; d++) {
    if (p && *p) {
      int ma, mi, used = 0;
      if (sscanf(p, "%d.%d%n", &ma, &mi, &used) == 2 && ma > 0 && ma < 100 && mi >= 0 &&
          mi < 10 && (p[used] == ',' || p[used] == '\0')) {
        major = ma;
        minor = mi;
        p += used;
        if (*p == ',') p++;
      } else {
        fprintf(stderr,
                "nbcuda testdriver: bad NBCUDA_TESTDRIVER_CC '%s' (expected "
                "\"9.0\" or \"9.0,5.0\")\n",
                env);
        p = NULL;
      }
    }
    td__devices[d].attrs[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR] = major;
    td__devices[d].attrs[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR] = minor;
  }
}

void td__devices_configure(void) {
  if (configured) return;
  configured = 1;
#ifdef TD_CPU_DRIVER
  int count = 1; /* the CPU device: one device unless NBCUDA_TESTDRIVER_DEVICES says more */
#else
  int count = 2;
#endif
  const char *env = getenv("NBCUDA_TESTDRIVER_DEVICES");
  if (env && *env) {
    long long n = td__parse_size(env);
    if (n < 0 || n > TD_MAX_DEVICES) {
      fprintf(stderr, "nbcuda testdriver: bad NBCUDA_TESTDRIVER_DEVICES '%s' (0..%d)\n", env,
              TD_MAX_DEVICES);
    } else {
      count = (int)n;
    }
  }
#ifdef TD_CPU_DRIVER
  /* the CPU device lends the machine's memory */
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  size_t mem = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : (size_t)1 << 30;
#else
  size_t mem = (size_t)1 << 30;
#endif
  env = getenv("NBCUDA_TESTDRIVER_MEM");
  if (env && *env) {
    long long m = td__parse_size(env);
    if (m <= 0)
      fprintf(stderr, "nbcuda testdriver: bad NBCUDA_TESTDRIVER_MEM '%s'\n", env);
    else
      mem = (size_t)m;
  }
  td__device_count = count;
  /* Every slot is filled, not only the first `count`, so tdrv_set_attribute and the
   * introspection functions never read garbage for an out-of-range ordinal. */
  for (int d = 0; d < TD_MAX_DEVICES; d++) {
    td_device *dev = &td__devices[d];
    for (int a = 0; a < td__attribute_max; a++)
      dev->attrs[a] = td__attribute_defaults[a];
    dev->attrs[CU_DEVICE_ATTRIBUTE_PCI_BUS_ID] = d + 1;
    dev->attrs[CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID] = 0;
    dev->attrs[CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID] = 0;
    dev->attrs[CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID] = d;
    dev->total_mem = mem;
    dev->primary.device = d;
    dev->primary.primary = 1;
  }
  parse_cc(getenv("NBCUDA_TESTDRIVER_CC"), TD_MAX_DEVICES);
}

int td__device_valid(CUdevice dev) {
  return dev >= 0 && dev < td__device_count;
}

CUresult CUDAAPI cuDeviceGetCount(int *count) {
  TD_ENTER("cuDeviceGetCount", "cuDeviceGetCount");
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&td__lock);
  *count = td__device_count;
  pthread_mutex_unlock(&td__lock);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal) {
  TD_ENTER("cuDeviceGet", "cuDeviceGet");
  if (!device) return CUDA_ERROR_INVALID_VALUE;
  if (!td__device_valid(ordinal)) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev) {
  TD_ENTER("cuDeviceGetName", "cuDeviceGetName");
  if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (!td__device_valid(dev)) return CUDA_ERROR_INVALID_DEVICE;
  /* Truncates like the real driver (len 5 gives "nbcu"). */
#ifdef TD_CPU_DRIVER
  snprintf(name, (size_t)len, "nbcuda CPU device %d", dev);
#else
  snprintf(name, (size_t)len, "nbcuda test device %d", dev);
#endif
  return CUDA_SUCCESS;
}

static CUresult get_uuid(CUuuid *uuid, CUdevice dev) {
  if (!uuid) return CUDA_ERROR_INVALID_VALUE;
  if (!td__device_valid(dev)) return CUDA_ERROR_INVALID_DEVICE;
  static const unsigned char prefix[12] = {0x6e, 0x62, 0x63, 0x75, 0x64, 0x61,
                                           0x2d, 0x74, 0x64, 0x72, 0x76, 0x2d};
  memcpy(uuid->bytes, prefix, sizeof prefix);
  uuid->bytes[12] = 0;
  uuid->bytes[13] = 0;
  uuid->bytes[14] = (char)(0xa0 + dev / 16);
  uuid->bytes[15] = (char)(dev % 16);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev) {
  TD_ENTER("cuDeviceGetUuid", "cuDeviceGetUuid");
  return get_uuid(uuid, dev);
}

CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev) {
  TD_ENTER("cuDeviceGetUuid", "cuDeviceGetUuid_v2");
  return get_uuid(uuid, dev);
}

CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev) {
  TD_ENTER("cuDeviceGetAttribute", "cuDeviceGetAttribute");
  if (!pi) return CUDA_ERROR_INVALID_VALUE;
  if (!td__device_valid(dev)) return CUDA_ERROR_INVALID_DEVICE;
  if ((int)attrib <= 0 || (int)attrib >= td__attribute_max) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&td__lock);
  *pi = td__devices[dev].attrs[attrib];
  pthread_mutex_unlock(&td__lock);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev) {
  TD_ENTER("cuDeviceTotalMem", "cuDeviceTotalMem_v2");
  if (!bytes) return CUDA_ERROR_INVALID_VALUE;
  if (!td__device_valid(dev)) return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&td__lock);
  *bytes = td__devices[dev].total_mem;
  pthread_mutex_unlock(&td__lock);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev) {
  TD_ENTER("cuDeviceGetPCIBusId", "cuDeviceGetPCIBusId");
  if (!pciBusId || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (!td__device_valid(dev)) return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&td__lock);
  const int *a = td__devices[dev].attrs;
  /* The real format, e.g. "0000:00:06.0": domain:bus:device.function. */
  snprintf(pciBusId, (size_t)len, "%04x:%02x:%02x.0", a[CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID],
           a[CU_DEVICE_ATTRIBUTE_PCI_BUS_ID], a[CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID]);
  pthread_mutex_unlock(&td__lock);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev) {
  TD_ENTER("cuDeviceCanAccessPeer", "cuDeviceCanAccessPeer");
  if (!canAccessPeer) return CUDA_ERROR_INVALID_VALUE;
  if (!td__device_valid(dev) || !td__device_valid(peerDev)) return CUDA_ERROR_INVALID_DEVICE;
  /* A device is not its own peer (the real driver answers 0 for dev == peerDev); with
   * NBCUDA_TESTDRIVER_NO_PEER_ACCESS=1 (read at each call) no device is another's, as on
   * machines without P2P. */
  const char *none = getenv("NBCUDA_TESTDRIVER_NO_PEER_ACCESS");
  *canAccessPeer = dev != peerDev && !(none && none[0] == '1');
  return CUDA_SUCCESS;
}

/* ---- profiler ------------------------------------------------------------------------- */

/* Both need a current context, as in the real driver (CUDA_ERROR_INVALID_CONTEXT without
 * one); stopping a stopped profiler is not an error. */
static CUresult profiler_set(int on) {
  pthread_mutex_lock(&td__lock);
  struct CUctx_st *ctx;
  CUresult r = td__current(&ctx);
  if (r == CUDA_SUCCESS) td__profiler_on = on;
  pthread_mutex_unlock(&td__lock);
  return r;
}

CUresult CUDAAPI cuProfilerStart(void) {
  TD_ENTER("cuProfilerStart", "cuProfilerStart");
  return profiler_set(1);
}

CUresult CUDAAPI cuProfilerStop(void) {
  TD_ENTER("cuProfilerStop", "cuProfilerStop");
  return profiler_set(0);
}
