/* detect.c — numba's detect() report.
 *
 * nbc_detect prints exactly what numba-cuda HEAD's cuda.detect() prints (str device names and
 * the FP16/BF16/FP8 lines; numba-cuda-behaviour.md §2.2):
 *
 *   Found 2 CUDA devices
 *   id 0    <name right-aligned in 20>                              [SUPPORTED]
 *                         Compute Capability: 9.0
 *   ...
 *   Summary:
 *   \t2/2 devices are supported
 *
 * It reads device attributes only: no context is created, so it is safe to call anywhere.
 * numba's is_available() needs libNVVM as well, so it sits above the host layer (src/info.c).
 */
#include <stdio.h>

#include "host/host.h"

enum {
  ATTR_KERNEL_EXEC_TIMEOUT = 17,
  ATTR_PCI_BUS_ID = 33,
  ATTR_PCI_DEVICE_ID = 34,
  ATTR_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO = 87
};

static nbc_status_t print_device(FILE *out, nbc_device_t *d, int *psupported) {
  int timeout, bus, pci_device, ratio;
  nbc_status_t st;
  if ((st = nbc_device_attribute(d, ATTR_KERNEL_EXEC_TIMEOUT, &timeout)) != NBC_OK ||
      (st = nbc_device_attribute(d, ATTR_PCI_DEVICE_ID, &pci_device)) != NBC_OK ||
      (st = nbc_device_attribute(d, ATTR_PCI_BUS_ID, &bus)) != NBC_OK ||
      (st = nbc_device_attribute(d, ATTR_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO, &ratio)) !=
          NBC_OK)
    return st;
  int major = d->cc_major, minor = d->cc_minor;
  const char *support;
  *psupported = 1;
  if (major < 3 || (major == 3 && minor < 5)) {
    support = "[NOT SUPPORTED: CC < 3.5]";
    *psupported = 0;
  } else if (major < 5) {
    support = "[SUPPORTED (DEPRECATED)]";
  } else {
    support = "[SUPPORTED]";
  }
  char cc[32];
  snprintf(cc, sizeof cc, "%d.%d", major, minor);
  int fp16 = major > 5 || (major == 5 && minor >= 3);
  int bf16 = major >= 8;
  int fp8 = major > 8 || (major == 8 && minor >= 9);
  fprintf(out, "id %d    %20s %40s\n", d->id, d->name, support);
  fprintf(out, "%40s: %s\n", "Compute Capability", cc);
  fprintf(out, "%40s: %d\n", "PCI Device ID", pci_device);
  fprintf(out, "%40s: %d\n", "PCI Bus ID", bus);
  fprintf(out, "%40s: %s\n", "UUID", d->uuid);
  fprintf(out, "%40s: %s\n", "Watchdog", timeout ? "Enabled" : "Disabled");
  fprintf(out, "%40s: %d\n", "FP32/FP64 Performance Ratio", ratio);
  fprintf(out, "%40s: %s\n", "FP16 Support", fp16 ? "Yes" : "No");
  fprintf(out, "%40s: %s\n", "BF16 Support", bf16 ? "Yes" : "No");
  fprintf(out, "%40s: %s\n", "FP8 Support", fp8 ? "Yes" : "No");
  return NBC_OK;
}

nbc_status_t nbc_detect(FILE *out, int *pany_supported) {
  if (pany_supported) *pany_supported = 0;
  if (!out) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_detect: out is NULL");
  nbc_device_t *list;
  int count;
  nbc_status_t st = nbc__devices(&list, &count);
  if (st != NBC_OK) return st;
  fprintf(out, "Found %d CUDA devices\n", count);
  int supported = 0;
  for (int i = 0; i < count; i++) {
    int ok = 0;
    st = print_device(out, &list[i], &ok);
    if (st != NBC_OK) return st;
    supported += ok;
  }
  fprintf(out, "Summary:\n\t%d/%d devices are supported\n", supported, count);
  fflush(out);
  if (pany_supported) *pany_supported = supported > 0;
  return NBC_OK;
}
