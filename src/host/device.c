/* device.c — the device list (numba's gpus / Driver.get_device) and per-device queries.
 *
 * The list is built once, on the first call that needs it (after cuInit), and never changes:
 * one nbc_device_t per ordinal with its name, UUID and compute capability read up front, so
 * the accessors nbc_device_name/uuid/compute_capability are plain field reads that cannot
 * fail. Each device also owns the record of its primary context (context.c retains the
 * CUcontext lazily). Other attributes are read from the driver on each call; names map to
 * CU_DEVICE_ATTRIBUTE_* numbers through the generated table device_attributes.h.
 *
 * Device selection (select_device, get_current_device, gpus.current, `with gpus[i]:`) lives
 * here as thin layers over context.c's activation rules.
 */
#include <stdlib.h>
#include <string.h>

#include "host/device_attributes.h"
#include "host/host.h"

static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int devices_ready;
static nbc_device_t *devices;
static int device_count;

static nbc_status_t read_device(nbc_device_t *d, int ordinal) {
  d->id = ordinal;
  NBC__CHECK("cuDeviceGet", nbc__cu.cuDeviceGet(&d->handle, ordinal));
  NBC__CHECK("cuDeviceGetName", nbc__cu.cuDeviceGetName(d->name, (int)sizeof d->name - 1,
                                                        d->handle));
  CUuuid u;
  NBC__CHECK("cuDeviceGetUuid", nbc__cu.cuDeviceGetUuid(&u, d->handle));
  const unsigned char *b = (const unsigned char *)u.bytes;
  snprintf(d->uuid, sizeof d->uuid,
           "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
           b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
           b[14], b[15]);
  NBC__CHECK("cuDeviceGetAttribute",
             nbc__cu.cuDeviceGetAttribute(
                 &d->cc_major, NBC__CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->handle));
  NBC__CHECK("cuDeviceGetAttribute",
             nbc__cu.cuDeviceGetAttribute(
                 &d->cc_minor, NBC__CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->handle));
  return NBC_OK;
}

static void free_list(nbc_device_t *list, int count) {
  for (int i = 0; i < count; i++)
    if (list[i].primary) {
      pthread_mutex_destroy(&list[i].primary->lock);
      free(list[i].primary);
    }
  free(list);
}

static nbc_status_t build_list(void) {
  int count = 0;
  NBC__CHECK("cuDeviceGetCount", nbc__cu.cuDeviceGetCount(&count));
  if (count < 0) count = 0;
  nbc_device_t *list = calloc(count ? (size_t)count : 1, sizeof *list);
  if (!list) return nbc__set_error(NBC_NO_MEMORY, "out of host memory listing devices");
  for (int i = 0; i < count; i++) {
    list[i].primary = calloc(1, sizeof *list[i].primary);
    if (!list[i].primary) {
      free_list(list, i);
      return nbc__set_error(NBC_NO_MEMORY, "out of host memory listing devices");
    }
    list[i].primary->device = &list[i];
    pthread_mutex_init(&list[i].primary->lock, NULL);
    nbc_status_t st = read_device(&list[i], i);
    if (st != NBC_OK) {
      free_list(list, i + 1);
      return st;
    }
  }
  devices = list;
  device_count = count;
  return NBC_OK;
}

nbc_status_t nbc__devices(nbc_device_t **pdevices, int *pcount) {
  NBC__ENSURE_DRIVER();
  if (!atomic_load_explicit(&devices_ready, memory_order_acquire)) {
    pthread_mutex_lock(&devices_lock);
    nbc_status_t st = NBC_OK;
    if (!atomic_load_explicit(&devices_ready, memory_order_relaxed)) {
      st = build_list();
      if (st == NBC_OK) atomic_store_explicit(&devices_ready, 1, memory_order_release);
    }
    pthread_mutex_unlock(&devices_lock);
    if (st != NBC_OK) return st;
  }
  if (pdevices) *pdevices = devices;
  if (pcount) *pcount = device_count;
  return NBC_OK;
}

nbc_device_t *nbc__device_from_handle(CUdevice handle) {
  nbc_device_t *list;
  int count;
  if (nbc__devices(&list, &count) != NBC_OK) return NULL;
  for (int i = 0; i < count; i++)
    if (list[i].handle == handle) return &list[i];
  return NULL;
}

nbc_status_t nbc_device_count(int *pcount) {
  if (!pcount) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_device_count: pcount is NULL");
  return nbc__devices(NULL, pcount);
}

nbc_status_t nbc_device_primary_context(nbc_device_t *device, nbc_context_t **pcontext) {
  if (!pcontext)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_device_primary_context: pcontext is NULL");
  *pcontext = NULL;
  if (!device)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_device_primary_context: device is NULL");
  NBC__ENSURE_DRIVER();
  return nbc__context_primary(device, pcontext);
}

nbc_status_t nbc_device_get(int ordinal, nbc_device_t **pdevice) {
  if (!pdevice) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_device_get: pdevice is NULL");
  *pdevice = NULL;
  nbc_device_t *list;
  int count;
  nbc_status_t st = nbc__devices(&list, &count);
  if (st != NBC_OK) return st;
  if (ordinal < 0 || ordinal >= count)
    return nbc__set_error(NBC_INVALID_DEVICE, "device ordinal %d is out of range (%d device%s)",
                          ordinal, count, count == 1 ? "" : "s");
  *pdevice = &list[ordinal];
  return NBC_OK;
}

nbc_status_t nbc_list_devices(nbc_device_t **devices_out, int capacity, int *pcount) {
  if (!pcount || (capacity > 0 && !devices_out))
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_list_devices: NULL output");
  nbc_device_t *list;
  int count;
  nbc_status_t st = nbc__devices(&list, &count);
  if (st != NBC_OK) return st;
  for (int i = 0; i < count && i < capacity; i++) devices_out[i] = &list[i];
  *pcount = count;
  return NBC_OK;
}

int nbc_device_id(const nbc_device_t *device) { return device ? device->id : -1; }

const char *nbc_device_name(const nbc_device_t *device) { return device ? device->name : ""; }

const char *nbc_device_uuid(const nbc_device_t *device) { return device ? device->uuid : ""; }

void nbc_device_compute_capability(const nbc_device_t *device, int *pmajor, int *pminor) {
  if (pmajor) *pmajor = device ? device->cc_major : 0;
  if (pminor) *pminor = device ? device->cc_minor : 0;
}

int nbc_device_supports_float16(const nbc_device_t *device) {
  return device && (device->cc_major > 5 || (device->cc_major == 5 && device->cc_minor >= 3));
}

nbc_status_t nbc_device_attribute(const nbc_device_t *device, int attribute, int *pvalue) {
  if (!device || !pvalue)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_device_attribute: NULL argument");
  NBC__ENSURE_DRIVER();
  CUresult res = nbc__cu.cuDeviceGetAttribute(pvalue, attribute, device->handle);
  if (res != NBC__CUDA_SUCCESS)
    return nbc__driver_failf("cuDeviceGetAttribute", res, " (attribute %d of device %d)",
                             attribute, device->id);
  return NBC_OK;
}

int nbc_device_attribute_lookup(const char *name) {
  if (!name) return -1;
  size_t lo = 0, hi = sizeof nbc_device_attribute_names / sizeof nbc_device_attribute_names[0];
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(name, nbc_device_attribute_names[mid].name);
    if (c == 0) return nbc_device_attribute_names[mid].value;
    if (c > 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return -1;
}

nbc_status_t nbc_device_attribute_by_name(const nbc_device_t *device, const char *name,
                                          int *pvalue) {
  int attribute = nbc_device_attribute_lookup(name);
  if (attribute < 0)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "unknown device attribute '%s'",
                          name ? name : "(null)");
  return nbc_device_attribute(device, attribute, pvalue);
}

nbc_status_t nbc_select_device(int ordinal, nbc_device_t **pdevice) {
  nbc_context_t *context;
  nbc_status_t st = nbc_current_context(ordinal, &context);
  if (st != NBC_OK) return st;
  if (pdevice) *pdevice = context->device;
  return NBC_OK;
}

nbc_status_t nbc_get_current_device(nbc_device_t **pdevice) {
  if (!pdevice)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_get_current_device: pdevice is NULL");
  nbc_context_t *context;
  nbc_status_t st = nbc_current_context(-1, &context);
  if (st != NBC_OK) return st;
  *pdevice = context->device;
  return NBC_OK;
}

/* gpus.current: reads the stack, creates nothing, does not check that it is primary. */
nbc_status_t nbc_device_current(nbc_device_t **pdevice) {
  if (!pdevice)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_device_current: pdevice is NULL");
  *pdevice = NULL;
  NBC__ENSURE_DRIVER();
  CUcontext current = NULL;
  NBC__CHECK("cuCtxGetCurrent", nbc__cu.cuCtxGetCurrent(&current));
  if (!current) return NBC_OK;
  CUdevice handle;
  NBC__CHECK("cuCtxGetDevice", nbc__cu.cuCtxGetDevice(&handle));
  *pdevice = nbc__device_from_handle(handle);
  if (!*pdevice)
    return nbc__set_error(NBC_INVALID_DEVICE, "the current context's device %d is not listed",
                          handle);
  return NBC_OK;
}

nbc_status_t nbc_device_enter(nbc_device_t *device) {
  if (!device) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_device_enter: device is NULL");
  nbc_context_t *context;
  return nbc_current_context(device->id, &context);
}

nbc_status_t nbc_device_exit(nbc_device_t *device) {
  if (!device) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_device_exit: device is NULL");
  return nbc_context_pop(device->primary);
}
