/* status.c — names and descriptions of nbcuda's status codes and of CUDA's CUresult codes,
 * and the library's own version.
 *
 * Both tables come from one list each: NBC_STATUS_MAP in nbcuda.h generates the status enum,
 * its names and its strings; cuda_errors.h (generated from cuda.h by
 * tools/gen_cuda_errors.py) lists every CUresult. nbcuda carries its own CUresult names so
 * that messages name the error even when the loaded libcuda is the toolkit's stub or a driver
 * older than the error code, and so that no driver call is made while formatting a failure.
 */
#include <stddef.h>

#include "driver/cuda_errors.h"
#include "driver/driver_api.h"

static const char *const status_names[] = {
#define NBC_STATUS_NAME_(name, text) "NBC_" #name,
    NBC_STATUS_MAP(NBC_STATUS_NAME_)
#undef NBC_STATUS_NAME_
};

static const char *const status_strings[] = {
#define NBC_STATUS_STRING_(name, text) text,
    NBC_STATUS_MAP(NBC_STATUS_STRING_)
#undef NBC_STATUS_STRING_
};

const char *nbc_status_name(nbc_status_t status) {
  if ((int)status < 0 || (int)status >= (int)NBC_STATUS_COUNT_) return "NBC_UNKNOWN";
  return status_names[status];
}

const char *nbc_status_string(nbc_status_t status) {
  if ((int)status < 0 || (int)status >= (int)NBC_STATUS_COUNT_) return "unknown status";
  return status_strings[status];
}

/* Binary search in the value-sorted table; CUresult values are sparse (0..999). */
const char *nbc_cuda_error_name(int curesult) {
  size_t lo = 0, hi = sizeof nbc_cuda_error_entries / sizeof nbc_cuda_error_entries[0];
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int value = nbc_cuda_error_entries[mid].value;
    if (value == curesult) return nbc_cuda_error_entries[mid].name;
    if (value < curesult)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

/* The statuses a caller can act on get their own code; every other driver error is
 * NBC_DRIVER_ERROR with the CUresult kept in the last error. */
nbc_status_t nbc__status_from_curesult(CUresult result) {
  switch (result) {
  case NBC__CUDA_SUCCESS:
    return NBC_OK;
  case NBC__CUDA_ERROR_OUT_OF_MEMORY:
    return NBC_OUT_OF_MEMORY;
  case NBC__CUDA_ERROR_STUB_LIBRARY:
    return NBC_STUB_DRIVER;
  case NBC__CUDA_ERROR_NO_DEVICE:
    return NBC_NO_DEVICE;
  case NBC__CUDA_ERROR_INVALID_DEVICE:
    return NBC_INVALID_DEVICE;
  case NBC__CUDA_ERROR_NOT_READY:
    return NBC_NOT_READY;
  default:
    return NBC_DRIVER_ERROR;
  }
}

int nbc_version(void) { return NBC_VERSION; }

const char *nbc_version_string(void) { return NBC_VERSION_STRING; }
