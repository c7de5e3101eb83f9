/* context.c — numba's runtime-style context management on top of the driver's per-thread
 * context stack (numba-cuda devices.py and driver.py; numba-cuda-behaviour.md §2.3–2.11, §6).
 *
 * Rules kept exactly:
 *   - only primary contexts: retained once per device and cached (device->primary), released
 *     and reset by nbc_device_reset / nbc_close;
 *   - nbc_current_context(-1): inside nbc_require_context the attached context, without a
 *     driver call; else the current context if it is its device's primary context (a primary
 *     context pushed by someone else is adopted), an error naming it if it is not primary
 *     ("Numba cannot operate on non-primary CUDA context <hex>"), or — with an empty stack —
 *     device 0's primary context, pushed and never popped;
 *   - nbc_current_context(n) pushes device n's primary context on every call, and refuses
 *     ("Cannot switch CUDA-context.") inside nbc_require_context when that is another context;
 *   - one process-wide recursive lock serialises activation, as numba's RLock does.
 *
 * Hot path: functions that create objects (streams, events, memory) need "the current
 * context". Repeating the whole check would cost a lock and three driver calls, so each thread
 * remembers the last CUcontext it verified; when cuCtxGetCurrent still returns it (and that
 * context was not reset since: its lifetime is unchanged), that is the answer.
 */
#include <stdlib.h>

#include "host/host.h"

static pthread_once_t lock_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t activation_lock;

static _Thread_local nbc_context_t *tls_attached; /* set inside nbc_require_context */
static _Thread_local CUcontext tls_verified_handle;
static _Thread_local nbc_context_t *tls_verified_context;
static _Thread_local unsigned tls_verified_lifetime;

static void init_lock(void) {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&activation_lock, &attr);
  pthread_mutexattr_destroy(&attr);
}

static void lock(void) {
  pthread_once(&lock_once, init_lock);
  pthread_mutex_lock(&activation_lock);
}

static void unlock(void) { pthread_mutex_unlock(&activation_lock); }

static void remember(nbc_context_t *context) {
  tls_verified_handle = atomic_load(&context->handle);
  tls_verified_context = context;
  tls_verified_lifetime = atomic_load(&context->lifetime);
}

nbc_status_t nbc__context_primary(nbc_device_t *device, nbc_context_t **pcontext) {
  nbc_context_t *context = device->primary;
  if (atomic_load(&context->handle)) {
    *pcontext = context;
    return NBC_OK;
  }
  lock();
  nbc_status_t st = NBC_OK;
  if (!atomic_load(&context->handle)) {
    if (device->cc_major < 3 || (device->cc_major == 3 && device->cc_minor < 5)) {
      st = nbc__set_error(NBC_UNSUPPORTED_CC,
                          "<CUDA device %d '%s'> has compute capability < (3, 5)", device->id,
                          device->name);
    } else {
      CUcontext handle = NULL;
      CUresult res = nbc__cu.cuDevicePrimaryCtxRetain(&handle, device->handle);
      if (res != NBC__CUDA_SUCCESS)
        st = nbc__driver_failf("cuDevicePrimaryCtxRetain", res, " (device %d)", device->id);
      else
        atomic_store(&context->handle, handle);
    }
  }
  unlock();
  if (st == NBC_OK) *pcontext = context;
  return st;
}

/* numba's _activate_context_for: retain, refuse a switch, push. */
static nbc_status_t activate(int devnum, nbc_context_t **pcontext) {
  nbc_device_t *device;
  nbc_status_t st = nbc_device_get(devnum, &device);
  if (st != NBC_OK) return st;
  lock();
  nbc_context_t *context = NULL;
  st = nbc__context_primary(device, &context);
  if (st == NBC_OK && tls_attached && tls_attached != context)
    st = nbc__set_error(NBC_CONTEXT_SWITCH, "Cannot switch CUDA-context.");
  if (st == NBC_OK) {
    CUresult res = nbc__cu.cuCtxPushCurrent(atomic_load(&context->handle));
    if (res != NBC__CUDA_SUCCESS) st = nbc__driver_fail("cuCtxPushCurrent", res);
  }
  unlock();
  if (st != NBC_OK) return st;
  remember(context);
  *pcontext = context;
  return NBC_OK;
}

/* The slow path of nbc__context_ensure: current is cuCtxGetCurrent's answer. */
static nbc_status_t resolve_current(CUcontext current, nbc_context_t **pcontext) {
  if (!current) return activate(0, pcontext);
  lock();
  nbc_status_t st = NBC_OK;
  nbc_context_t *context = NULL;
  CUdevice handle;
  CUresult res = nbc__cu.cuCtxGetDevice(&handle);
  if (res != NBC__CUDA_SUCCESS) {
    st = nbc__driver_fail("cuCtxGetDevice", res);
  } else {
    nbc_device_t *device = nbc__device_from_handle(handle);
    if (!device)
      st = nbc__set_error(NBC_INVALID_DEVICE, "the current context's device %d is not listed",
                          handle);
    else
      st = nbc__context_primary(device, &context);
  }
  if (st == NBC_OK && atomic_load(&context->handle) != current)
    st = nbc__set_error(NBC_NON_PRIMARY_CONTEXT,
                        "Numba cannot operate on non-primary CUDA context %lx",
                        (unsigned long)(uintptr_t)current);
  unlock();
  if (st != NBC_OK) return st;
  remember(context);
  *pcontext = context;
  return NBC_OK;
}

nbc_status_t nbc__context_ensure(nbc_context_t **pcontext) {
  NBC__ENSURE_DRIVER();
  if (tls_attached) {
    *pcontext = tls_attached;
    return NBC_OK;
  }
  CUcontext current = NULL;
  CUresult res = nbc__cu.cuCtxGetCurrent(&current);
  if (__builtin_expect(res != NBC__CUDA_SUCCESS, 0))
    return nbc__driver_fail("cuCtxGetCurrent", res);
  if (__builtin_expect(current != NULL && current == tls_verified_handle &&
                           !nbc__outlived(tls_verified_context, tls_verified_lifetime),
                       1)) {
    *pcontext = tls_verified_context;
    return NBC_OK;
  }
  return resolve_current(current, pcontext);
}

int nbc__context_retry(CUresult result) {
  if (result != NBC__CUDA_ERROR_INVALID_CONTEXT) return 0;
  CUcontext current = NULL;
  if (nbc__cu.cuCtxGetCurrent(&current) != NBC__CUDA_SUCCESS || current) return 0;
  nbc_context_t *context;
  return nbc__context_ensure(&context) == NBC_OK;
}

nbc_status_t nbc_current_context(int devnum, nbc_context_t **pcontext) {
  if (!pcontext)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_current_context: pcontext is NULL");
  *pcontext = NULL;
  if (devnum < -1)
    return nbc__set_error(NBC_INVALID_DEVICE, "device ordinal %d is out of range", devnum);
  if (devnum == -1) return nbc__context_ensure(pcontext);
  NBC__ENSURE_DRIVER();
  return activate(devnum, pcontext);
}

nbc_device_t *nbc_context_device(const nbc_context_t *context) {
  return context ? context->device : NULL;
}

void *nbc_context_handle(const nbc_context_t *context) {
  return context ? (void *)atomic_load(&((nbc_context_t *)context)->handle) : NULL;
}

nbc_status_t nbc__context_enter(nbc_context_t *context, int *ppushed) {
  *ppushed = 0;
  NBC__ENSURE_DRIVER();
  nbc_context_t *retained;
  nbc_status_t st = nbc__context_primary(context->device, &retained);
  if (st != NBC_OK) return st;
  CUcontext handle = atomic_load(&context->handle), current = NULL;
  NBC__CHECK("cuCtxGetCurrent", nbc__cu.cuCtxGetCurrent(&current));
  if (current == handle) return NBC_OK;
  NBC__CHECK("cuCtxPushCurrent", nbc__cu.cuCtxPushCurrent(handle));
  *ppushed = 1;
  return NBC_OK;
}

void nbc__context_leave(int pushed) {
  CUcontext popped;
  if (pushed) nbc__cu.cuCtxPopCurrent(&popped);
}

nbc_status_t nbc_context_get_memory_info(nbc_context_t *context, size_t *pfree,
                                         size_t *ptotal) {
  if (!pfree || !ptotal)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_context_get_memory_info: NULL output");
  if (!context) {
    nbc_status_t st = nbc__context_ensure(&context);
    if (st != NBC_OK) return st;
  }
  int pushed;
  nbc_status_t st = nbc__context_enter(context, &pushed);
  if (st != NBC_OK) return st;
  nbc__memory_release_kept(context); /* counted free, as if freed at once */
  CUresult res = nbc__cu.cuMemGetInfo(pfree, ptotal);
  nbc__context_leave(pushed);
  if (res != NBC__CUDA_SUCCESS) return nbc__driver_fail("cuMemGetInfo", res);
  return NBC_OK;
}

nbc_status_t nbc_context_push(nbc_context_t *context) {
  if (!context) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_context_push: context is NULL");
  NBC__ENSURE_DRIVER();
  nbc_context_t *retained;
  nbc_status_t st = nbc__context_primary(context->device, &retained);
  if (st != NBC_OK) return st;
  NBC__CHECK("cuCtxPushCurrent", nbc__cu.cuCtxPushCurrent(atomic_load(&context->handle)));
  return NBC_OK;
}

nbc_status_t nbc_context_pop(nbc_context_t *context) {
  if (!context) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_context_pop: context is NULL");
  NBC__ENSURE_DRIVER();
  CUcontext current = NULL;
  NBC__CHECK("cuCtxGetCurrent", nbc__cu.cuCtxGetCurrent(&current));
  if (!current)
    return nbc__set_error(NBC_NO_CONTEXT,
                          "cannot pop the context of device %d: this thread's CUDA context "
                          "stack is empty",
                          context->device->id);
  CUcontext popped = NULL;
  CUresult res = nbc__cu.cuCtxPopCurrent(&popped);
  if (res != NBC__CUDA_SUCCESS) {
    nbc_status_t st = nbc__driver_fail("cuCtxPopCurrent", res);
    return res == NBC__CUDA_ERROR_INVALID_CONTEXT ? NBC_NO_CONTEXT : st;
  }
  CUcontext expected = atomic_load(&context->handle);
  if (popped != expected)
    return nbc__set_error(NBC_CONTEXT_MISMATCH,
                          "popped CUDA context %lx is not the primary context %lx of device "
                          "%d (it stays popped)",
                          (unsigned long)(uintptr_t)popped, (unsigned long)(uintptr_t)expected,
                          context->device->id);
  return NBC_OK;
}

nbc_status_t nbc_context_reset(nbc_context_t *context) {
  if (!context)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_context_reset: context is NULL");
  NBC__ENSURE_DRIVER();
  if (!atomic_load(&context->handle)) return NBC_OK; /* nothing was ever made in it */
  int pushed;
  nbc_status_t st = nbc__context_enter(context, &pushed);
  if (st != NBC_OK) return st;
  nbc__module_release_context(context);
  nbc__memory_release_context(context);
  nbc__stream_release_idle(context);
  nbc__event_release_idle(context);
  nbc__context_leave(pushed);
  return NBC_OK;
}

nbc_status_t nbc_context_synchronize(nbc_context_t *context) {
  if (!context)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_context_synchronize: context is NULL");
  int pushed;
  nbc_status_t st = nbc__context_enter(context, &pushed);
  if (st != NBC_OK) return st;
  CUresult res = nbc__context_sync(context);
  nbc__context_leave(pushed);
  if (res != NBC__CUDA_SUCCESS) return nbc__driver_fail("cuCtxSynchronize", res);
  return NBC_OK;
}

CUresult nbc__context_sync(nbc_context_t *context) {
  /* the blocks kept so far were freed before this synchronization began (reuse.c) */
  unsigned kept = atomic_load_explicit(&context->kept_frees, memory_order_acquire);
  CUresult res = nbc__cu.cuCtxSynchronize();
  /* a plain store: a racing older value only costs a later reuse one more synchronization */
  if (res == NBC__CUDA_SUCCESS &&
      (int)(kept - atomic_load_explicit(&context->synced_frees, memory_order_relaxed)) > 0)
    atomic_store_explicit(&context->synced_frees, kept, memory_order_release);
  return res;
}

nbc_status_t nbc_synchronize(void) {
  nbc_context_t *context;
  nbc_status_t st = nbc__context_ensure(&context);
  if (st != NBC_OK) return st;
  NBC__CHECK("cuCtxSynchronize", nbc__context_sync(context));
  return NBC_OK;
}

nbc_status_t nbc__outlived_fail(const char *call, const char *what) {
  return nbc__driver_failf(call, NBC__CUDA_ERROR_CONTEXT_IS_DESTROYED,
                           " (the %s was made in a context that was reset since)", what);
}

unsigned nbc_context_lifetime(const nbc_context_t *context) {
  return context ? atomic_load_explicit(&context->lifetime, memory_order_relaxed) : 0;
}

nbc_status_t nbc_context_check_lifetime(const nbc_context_t *context, unsigned lifetime,
                                        const char *call, const char *what) {
  if (!nbc__outlived(context, lifetime)) return NBC_OK;
  return nbc__outlived_fail(call ? call : "nbc_context_check_lifetime", what ? what : "object");
}

/* Context.reset (nbcuda's modules and memory in it are released), then the retain of the
 * primary context is released and the context counted as gone (a new lifetime). Called
 * locked. */
static nbc_status_t release_primary(nbc_device_t *device) {
  nbc_context_t *context = device->primary;
  if (!atomic_load(&context->handle)) return NBC_OK;
  nbc_status_t st = nbc_context_reset(context);
  CUresult res = nbc__cu.cuDevicePrimaryCtxRelease(device->handle);
  if (res != NBC__CUDA_SUCCESS && st == NBC_OK)
    st = nbc__driver_failf("cuDevicePrimaryCtxRelease", res, " (device %d)", device->id);
  atomic_store(&context->handle, NULL);
  /* Its streams, events, memory and this thread's verified-context cache go with it. */
  atomic_fetch_add(&context->lifetime, 1);
  return st;
}

nbc_status_t nbc__context_hold(nbc_device_t *device) {
  lock();
  nbc_status_t st = NBC_OK;
  if (device->managed_holds == 0) {
    CUcontext handle = NULL;
    CUresult res = nbc__cu.cuDevicePrimaryCtxRetain(&handle, device->handle);
    if (res != NBC__CUDA_SUCCESS)
      st = nbc__driver_failf("cuDevicePrimaryCtxRetain", res, " (device %d)", device->id);
    else
      device->held = handle;
  }
  if (st == NBC_OK) device->managed_holds++;
  unlock();
  return st;
}

void nbc__context_unhold(nbc_device_t *device) {
  lock();
  if (device->managed_holds > 0 && --device->managed_holds == 0) {
    (void)nbc__cu.cuDevicePrimaryCtxRelease(device->handle);
    device->held = NULL;
  }
  unlock();
}

CUcontext nbc__context_held(nbc_device_t *device) {
  lock();
  CUcontext held = device->held;
  unlock();
  return held;
}

/* numba's Device.reset: Context.reset, release, and cuDevicePrimaryCtxReset unless managed
 * memory that must outlive the reset holds the primary context (it is then the memory's until
 * the last of it is freed). */
nbc_status_t nbc_device_reset(nbc_device_t *device) {
  if (!device) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_device_reset: device is NULL");
  NBC__ENSURE_DRIVER();
  lock();
  nbc_status_t st = release_primary(device);
  CUresult res = device->managed_holds ? NBC__CUDA_SUCCESS
                                       : nbc__cu.cuDevicePrimaryCtxReset(device->handle);
  if (res != NBC__CUDA_SUCCESS && st == NBC_OK)
    st = nbc__driver_failf("cuDevicePrimaryCtxReset", res, " (device %d)", device->id);
  unlock();
  return st;
}

nbc_status_t nbc_device_release_primary_context(nbc_device_t *device) {
  if (!device)
    return nbc__set_error(NBC_INVALID_ARGUMENT,
                          "nbc_device_release_primary_context: device is NULL");
  NBC__ENSURE_DRIVER();
  lock();
  CUcontext handle = atomic_load(&device->primary->handle), current = NULL;
  nbc_status_t st = release_primary(device);
  /* Released to nothing, the context is reset by the driver: when it is this thread's
   * current context (and no nbc_require_context scope holds it), it is popped, so the next
   * use retains and pushes it anew instead of finding a dead context current. */
  if (handle && tls_attached != device->primary &&
      nbc__cu.cuCtxGetCurrent(&current) == NBC__CUDA_SUCCESS && current == handle) {
    CUcontext popped;
    nbc__cu.cuCtxPopCurrent(&popped);
  }
  unlock();
  return st;
}

nbc_status_t nbc_close(void) {
  NBC__ENSURE_DRIVER();
  for (;;) {
    CUcontext current = NULL, popped = NULL;
    NBC__CHECK("cuCtxGetCurrent", nbc__cu.cuCtxGetCurrent(&current));
    if (!current) break;
    NBC__CHECK("cuCtxPopCurrent", nbc__cu.cuCtxPopCurrent(&popped));
  }
  if (!nbc__driver_is_init_thread()) return NBC_OK;
  nbc_device_t *list;
  int count;
  nbc_status_t st = nbc__devices(&list, &count);
  if (st != NBC_OK) return st;
  for (int i = 0; i < count; i++) {
    nbc_status_t one = nbc_device_reset(&list[i]);
    if (one != NBC_OK && st == NBC_OK) st = one;
  }
  return st;
}

nbc_status_t nbc_require_context(nbc_context_fn fn, void *arg) {
  if (!fn) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_require_context: fn is NULL");
  nbc_context_t *saved = tls_attached, *context;
  nbc_status_t st = nbc_current_context(-1, &context);
  if (st != NBC_OK) return st;
  tls_attached = context;
  st = fn(arg);
  tls_attached = saved;
  return st;
}
