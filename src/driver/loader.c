/* loader.c — finds, loads and initialises libcuda once, and fills the entry-point table.
 *
 * Nothing happens at library load: the first nbcuda call that needs the driver runs
 * load_and_init() through pthread_once (so concurrent first calls are safe and cuInit runs
 * exactly once), and every later call only reads nbc__driver_ready.
 *
 * Steps (numba-cuda's driver.py, adapted to C):
 *   1. which library: NBCUDA_DRIVER=0 (or numba-cuda's NUMBA_DISABLE_CUDA) disables CUDA;
 *      NBCUDA_DRIVER=cpu, or NUMBA_ENABLE_CUDASIM=1 with NBCUDA_DRIVER unset, loads the CPU
 *      device, libnbcuda_cpudriver.so from the folder of the file nbcuda's code lives in
 *      (libnbcuda.so, the Python module or the program linking the static library);
 *      otherwise the toolkit finder (base/toolkit.c) answers: NBCUDA_DRIVER=<path> (or
 *      NUMBA_CUDA_DRIVER) loads exactly that file, else libcuda.so.1 then libcuda.so through
 *      the system loader;
 *   2. cuInit(0) through a direct dlsym (it has no versions). The toolkit's stub libcuda
 *      answers CUDA_ERROR_STUB_LIBRARY, which becomes NBC_STUB_DRIVER; CUDA_ERROR_NO_DEVICE
 *      becomes NBC_NO_DEVICE. The pid is recorded for fork detection (error.c);
 *   3. every entry point of NBC_DRIVER_API is resolved with cuGetProcAddress (the _v2 form
 *      with a symbol status when the driver has it) at NBC__CUDA_API_VERSION, with the
 *      per-thread-default-stream flag when NBCUDA_PER_THREAD_DEFAULT_STREAM=1 or
 *      NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM=1, so the driver hands out _ptds/_ptsz variants.
 *
 * Failure messages follow numba: the first caller to see a failed cuInit gets
 * "Error at driver init: CUDA_ERROR_NO_DEVICE (100)", later callers
 * "Error at driver init: \nCUDA_ERROR_NO_DEVICE (100):". A library that cannot be loaded is
 * reported with the path and the loader's reason.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/toolkit.h"
#include "driver/driver_api.h"

nbc__driver_api_t nbc__cu;
atomic_int nbc__driver_ready;

typedef CUresult (*cu_init_fn)(unsigned int flags);
typedef CUresult (*cu_get_proc_address_v2_fn)(const char *symbol, void **pfn, int version,
                                               uint64_t flags, int *symbol_status);
typedef CUresult (*cu_get_proc_address_v1_fn)(const char *symbol, void **pfn, int version,
                                               uint64_t flags);

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static nbc_status_t init_status;      /* NBC_OK or why the driver cannot be used */
static char init_description[4096];   /* the failure, without the "Error at driver init" */
static CUresult init_curesult;        /* cuInit's result when it failed, else 0 */
static char init_call[64];            /* the failing call, "" for load failures */
static int init_is_cuinit_failure;    /* 1: cuInit failed (numba's two message forms) */
static atomic_int init_failure_seen;  /* the first failure has been reported */
static long init_pid;                 /* pid at cuInit; read by error.c */
static pthread_t init_thread;
static void *driver_handle;
static char driver_path[1024];
static int per_thread_default_stream;
static atomic_int init_done; /* load_and_init has finished (driver_path is stable) */

static int env_is_one(const char *name) {
  const char *v = getenv(name);
  return v && strcmp(v, "1") == 0;
}

static void fail_load(nbc_status_t status, const char *fmt, const char *a, const char *b) {
  init_status = status;
  snprintf(init_description, sizeof init_description, fmt, a, b);
}

/* The CPU device (src/cpudevice via libnbcuda_cpudriver.so) beside nbcuda's own file. */
static int open_cpu_driver(const char *why) {
  Dl_info info;
  char path[sizeof driver_path];
  const char *slash = NULL;
  if (dladdr((void *)&nbc__driver_ready, &info) && info.dli_fname)
    slash = strrchr(info.dli_fname, '/');
  if (slash)
    snprintf(path, sizeof path, "%.*s/libnbcuda_cpudriver.so", (int)(slash - info.dli_fname),
             info.dli_fname);
  else
    snprintf(path, sizeof path, "libnbcuda_cpudriver.so");
  driver_handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!driver_handle) {
    const char *err = dlerror();
    char reason[1600];
    snprintf(reason, sizeof reason, "%s: %s", why, err ? err : path);
    fail_load(NBC_NO_DRIVER, "the CPU device cannot be loaded (%s)%s", reason, "");
    return -1;
  }
  snprintf(driver_path, sizeof driver_path, "%s", path);
  return 0;
}

/* Step 1: dlopen. Returns 0 on success. */
static int open_driver(void) {
  const char *env = getenv("NBCUDA_DRIVER");
  if (env && strcmp(env, "cpu") == 0) return open_cpu_driver("NBCUDA_DRIVER=cpu");
  const char *sim = getenv("NUMBA_ENABLE_CUDASIM");
  if (!env && sim && *sim && strtol(sim, NULL, 10) != 0)
    return open_cpu_driver("NUMBA_ENABLE_CUDASIM");
  if (env && strcmp(env, "0") == 0) {
    fail_load(NBC_DRIVER_DISABLED,
              "CUDA is disabled due to setting NBCUDA_DRIVER=0 in the environment%s%s", "", "");
    return -1;
  }
  /* numba-cuda's switches, under nbcuda's own: NUMBA_DISABLE_CUDA (an integer, on when not
   * 0) and NUMBA_CUDA_DRIVER (the driver library's path). */
  const char *disable = getenv("NUMBA_DISABLE_CUDA");
  if (disable && *disable && strtol(disable, NULL, 10) != 0) {
    fail_load(NBC_DRIVER_DISABLED,
              "CUDA is disabled due to setting NUMBA_DISABLE_CUDA=%s in the environment%s",
              disable, "");
    return -1;
  }
  nbc__toolkit_search *s = calloc(1, sizeof *s);
  if (!s) {
    fail_load(NBC_NO_DRIVER, "CUDA driver library cannot be searched for: out of host memory%s%s",
              "", "");
    return -1;
  }
  int rc = nbc__toolkit_find(NBC__TOOLKIT_LIBCUDA, s);
  if (rc == 0) {
    driver_handle = s->handle;
    snprintf(driver_path, sizeof driver_path, "%.1023s", s->path);
  } else if (s->env_name && strcmp(s->why, "") == 0) {
    fail_load(NBC_NO_DRIVER, "CUDA driver library cannot be found: %s is not a file (from %s)",
              s->env_value, s->env_name);
  } else if (s->env_name) {
    fail_load(NBC_NO_DRIVER,
              "Possible CUDA driver library found but an error occurred during load: %s: %s",
              s->env_value, s->why);
  } else {
    char tried[2048];
    fail_load(NBC_NO_DRIVER,
              "CUDA driver library cannot be found (tried %s). Ensure that a compatible NVIDIA "
              "driver is installed and available on your system path%s",
              nbc__toolkit_tried(s, NBC__TOOLKIT_INLINE, tried, sizeof tried), "");
  }
  free(s);
  return rc;
}

/* The real file the loader picked, for nbc_driver_path(). */
static void record_real_path(void *symbol) {
  Dl_info info;
  if (symbol && dladdr(symbol, &info) && info.dli_fname && info.dli_fname[0] == '/')
    snprintf(driver_path, sizeof driver_path, "%s", info.dli_fname);
}

/* Step 2: cuInit. Returns 0 on success. */
static int init_driver(void) {
  cu_init_fn cu_init = (cu_init_fn)(uintptr_t)dlsym(driver_handle, "cuInit");
  if (!cu_init) {
    fail_load(NBC_NO_DRIVER, "%s is not a CUDA driver library: it has no cuInit%s", driver_path,
              "");
    return -1;
  }
  record_real_path((void *)(uintptr_t)cu_init);
  CUresult res = cu_init(0);
  if (res == NBC__CUDA_SUCCESS) {
    init_pid = (long)getpid();
    init_thread = pthread_self();
    return 0;
  }
  const char *name = nbc_cuda_error_name(res);
  char what[128];
  if (name)
    snprintf(what, sizeof what, "%s (%d)", name, res);
  else
    snprintf(what, sizeof what, "CUresult %d", res);
  init_curesult = res;
  init_is_cuinit_failure = 1;
  snprintf(init_call, sizeof init_call, "cuInit");
  if (res == NBC__CUDA_ERROR_STUB_LIBRARY) {
    init_status = NBC_STUB_DRIVER;
    snprintf(init_description, sizeof init_description,
             "%s: %s is the CUDA toolkit's stub library, not an NVIDIA driver; install the "
             "NVIDIA driver (libcuda.so.1) or point NBCUDA_DRIVER at it",
             what, driver_path);
  } else {
    init_status = res == NBC__CUDA_ERROR_NO_DEVICE ? NBC_NO_DEVICE : NBC_INIT_FAILED;
    snprintf(init_description, sizeof init_description, "%s", what);
  }
  return -1;
}

/* Step 3: the table. Returns 0 on success. */
static int resolve_entry_points(void) {
  cu_get_proc_address_v2_fn gpa2 =
      (cu_get_proc_address_v2_fn)(uintptr_t)dlsym(driver_handle, "cuGetProcAddress_v2");
  cu_get_proc_address_v1_fn gpa1 =
      (cu_get_proc_address_v1_fn)(uintptr_t)dlsym(driver_handle, "cuGetProcAddress");
  if (!gpa2 && !gpa1) {
    fail_load(NBC_INIT_FAILED,
              "%s has no cuGetProcAddress: the CUDA driver is too old (nbcuda needs a CUDA "
              "12 or newer driver)%s",
              driver_path, "");
    return -1;
  }
  per_thread_default_stream = env_is_one("NBCUDA_PER_THREAD_DEFAULT_STREAM") ||
                              env_is_one("NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM");
  uint64_t flags = per_thread_default_stream
                       ? NBC__CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
                       : NBC__CU_GET_PROC_ADDRESS_DEFAULT;
  struct entry {
    const char *name;
    void **slot;
  };
  static const struct entry entries[] = {
#define NBC__ENTRY_(name, params) {#name, (void **)&nbc__cu.name},
      NBC_DRIVER_API(NBC__ENTRY_)
#undef NBC__ENTRY_
  };
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
    void *fn = NULL;
    int symbol_status = 0;
    CUresult res = gpa2 ? gpa2(entries[i].name, &fn, NBC__CUDA_API_VERSION, flags, &symbol_status)
                        : gpa1(entries[i].name, &fn, NBC__CUDA_API_VERSION, flags);
    if (res != NBC__CUDA_SUCCESS || !fn) {
      const char *name = nbc_cuda_error_name(res);
      char why[160];
      snprintf(why, sizeof why, "%s (%d), symbol status %d", name ? name : "CUresult", res,
               symbol_status);
      init_status = NBC_INIT_FAILED;
      init_curesult = res;
      snprintf(init_call, sizeof init_call, "cuGetProcAddress");
      snprintf(init_description, sizeof init_description,
               "cuGetProcAddress(\"%s\", %d): %s: the CUDA driver %s lacks an entry point "
               "nbcuda needs",
               entries[i].name, NBC__CUDA_API_VERSION, why, driver_path);
      return -1;
    }
    *entries[i].slot = fn;
  }
  return 0;
}

static void load_and_init(void) {
  /* A library that loaded stays loaded even when initialisation fails: the process may
   * already hold pointers into it. */
  if (open_driver() == 0 && init_driver() == 0 && resolve_entry_points() == 0) {
    init_status = NBC_OK;
    atomic_store_explicit(&nbc__driver_ready, 1, memory_order_release);
  }
  atomic_store_explicit(&init_done, 1, memory_order_release);
}

nbc_status_t nbc__driver_init(void) {
  pthread_once(&init_once, load_and_init);
  if (init_status == NBC_OK) return NBC_OK;
  char message[4200];
  int first = atomic_exchange(&init_failure_seen, 1) == 0;
  if (!init_is_cuinit_failure)
    snprintf(message, sizeof message, "%s", init_description);
  else if (first)
    snprintf(message, sizeof message, "Error at driver init: %s", init_description);
  else
    snprintf(message, sizeof message, "Error at driver init: \n%s:", init_description);
  return nbc__set_driver_error(init_status, init_call, init_curesult, message);
}

long nbc__driver_init_pid(void) { return init_pid; }

int nbc__driver_is_init_thread(void) {
  return atomic_load(&nbc__driver_ready) && pthread_equal(init_thread, pthread_self());
}

const char *nbc_driver_path(void) {
  if (!atomic_load_explicit(&init_done, memory_order_acquire)) return NULL;
  return driver_path[0] ? driver_path : NULL;
}

int nbc_driver_per_thread_default_stream(void) {
  nbc__driver_init();
  return per_thread_default_stream;
}

const char *nbc_driver_init_error(void) {
  pthread_once(&init_once, load_and_init);
  if (init_status == NBC_OK) return NULL;
  return init_description;
}

nbc_status_t nbc_driver_version(int *pversion) {
  if (!pversion) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_driver_version: pversion is NULL");
  NBC__ENSURE_DRIVER();
  NBC__CHECK("cuDriverGetVersion", nbc__cu.cuDriverGetVersion(pversion));
  return NBC_OK;
}
