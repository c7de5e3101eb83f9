/* runtime.c — the CUDA runtime version (numba's cuda.runtime).
 *
 * nbc_runtime_get_version answers from the first library that can:
 *   1. libcudart's cudaRuntimeGetVersion (the CUDA runtime proper, like historic numba);
 *   2. NVRTC's nvrtcVersion (what numba-cuda HEAD reports as the runtime version);
 * each found by the toolkit finder (base/toolkit.c: NBCUDA_CUDART / NBCUDA_NVRTC, CUDA_HOME,
 * CUDA_PATH, /usr/local/cuda, the loader path, the wheels; sonames .so.13, .so.12, .so). The
 * answer and which library gave it are computed once and cached. Neither call initialises the
 * driver. libcudart is unloaded again after the call; NVRTC stays loaded (it leaks when
 * unloaded). If nothing answers: NBC_NO_RUNTIME listing every place searched.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/host.h"

typedef int (*cudart_version_fn)(int *version);
typedef int (*nvrtc_version_fn)(int *major, int *minor);

static pthread_once_t version_once = PTHREAD_ONCE_INIT;
static int version_major, version_minor;
static nbc_runtime_source_t version_source;
static int version_found;
static char version_error[8192];
/* What the search for libcudart found (runs within find_version, whichever library answers). */
static char cudart_path[4200];
static int cudart_major = -1, cudart_minor = -1;
static char cudart_error[8192];

/* Opens the library through the toolkit finder: the handle, or NULL with every place tried
 * in searched ("; "-separated). */
static void *open_library(nbc__toolkit_item item, char *path, size_t path_size, char *searched,
                          size_t size) {
  nbc__toolkit_search *s = calloc(1, sizeof *s);
  if (!s) {
    snprintf(searched, size, "(out of host memory)");
    return NULL;
  }
  void *lib = NULL;
  if (nbc__toolkit_find(item, s) == 0) {
    lib = s->handle;
    snprintf(path, path_size, "%s", s->path);
  } else {
    nbc__toolkit_tried(s, NBC__TOOLKIT_INLINE, searched, size);
  }
  free(s);
  return lib;
}

static int from_cudart(char *searched, size_t size) {
  searched[0] = '\0';
  void *lib = open_library(NBC__TOOLKIT_CUDART, cudart_path, sizeof cudart_path, searched, size);
  if (!lib) {
    snprintf(cudart_error, sizeof cudart_error, "libcudart cannot be found or loaded "
             "(searched %s)", searched);
    return 0;
  }
  cudart_version_fn fn = (cudart_version_fn)(uintptr_t)dlsym(lib, "cudaRuntimeGetVersion");
  int v = 0, ok = fn && fn(&v) == 0 && v > 0;
  if (!ok)
    snprintf(cudart_error, sizeof cudart_error, "%s: cudaRuntimeGetVersion %s", cudart_path,
             fn ? "failed" : "is missing");
  if (ok) {
    cudart_major = v / 1000;
    cudart_minor = (v % 1000) / 10;
    version_major = v / 1000;
    version_minor = (v % 1000) / 10;
    version_source = NBC_RUNTIME_CUDART;
  }
  dlclose(lib);
  return ok;
}

static int from_nvrtc(char *searched, size_t size) {
  char path[4200];
  searched[0] = '\0';
  void *lib = open_library(NBC__TOOLKIT_NVRTC, path, sizeof path, searched, size);
  if (!lib) return 0;
  nvrtc_version_fn fn = (nvrtc_version_fn)(uintptr_t)dlsym(lib, "nvrtcVersion");
  int major = 0, minor = 0, ok = fn && fn(&major, &minor) == 0 && major > 0;
  if (ok) {
    version_major = major;
    version_minor = minor;
    version_source = NBC_RUNTIME_NVRTC;
  }
  /* Not dlclose'd: NVRTC allocates at load and loses the memory when unloaded. */
  return ok;
}

static void find_version(void) {
  char cudart[4000], nvrtc[4000];
  if (from_cudart(cudart, sizeof cudart) || from_nvrtc(nvrtc, sizeof nvrtc)) {
    version_found = 1;
    return;
  }
  snprintf(version_error, sizeof version_error,
           "no CUDA runtime version: libcudart not found or unusable (searched %s) and NVRTC "
           "not found or unusable (searched %s)",
           cudart, nvrtc);
}

nbc_status_t nbc_runtime_get_version(int *pmajor, int *pminor, nbc_runtime_source_t *psource) {
  if (!pmajor || !pminor)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_runtime_get_version: NULL output");
  pthread_once(&version_once, find_version);
  if (!version_found) return nbc__set_error(NBC_NO_RUNTIME, "%s", version_error);
  *pmajor = version_major;
  *pminor = version_minor;
  if (psource) *psource = version_source;
  return NBC_OK;
}

nbc_status_t nbc__cudart_find(const char **ppath, int *pmajor, int *pminor) {
  pthread_once(&version_once, find_version);
  if (cudart_major < 0) return nbc__set_error(NBC_NO_RUNTIME, "%s", cudart_error);
  *ppath = cudart_path;
  *pmajor = cudart_major;
  *pminor = cudart_minor;
  return NBC_OK;
}

static const int supported_versions[][2] = {
    {12, 0}, {12, 1}, {12, 2}, {12, 3}, {12, 4}, {12, 5}, {12, 6}, {12, 8},
    {12, 9}, {13, 0}, {13, 1}, {13, 2},
};

void nbc_runtime_supported_versions(const int (**pversions)[2], int *pcount) {
  if (pversions) *pversions = supported_versions;
  if (pcount) *pcount = (int)(sizeof supported_versions / sizeof supported_versions[0]);
}

/* numba-cuda HEAD: get_version()[0] in (12, 13). */
nbc_status_t nbc_runtime_is_supported_version(int *psupported) {
  if (!psupported)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_runtime_is_supported_version: NULL");
  int major = 0, minor = 0;
  nbc_status_t st = nbc_runtime_get_version(&major, &minor, NULL);
  if (st != NBC_OK) return st;
  *psupported = major == 12 || major == 13;
  return NBC_OK;
}
