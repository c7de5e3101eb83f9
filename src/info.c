/* info.c — what nbcuda found: where each CUDA library is and its version, or why it is
 * missing (nbc_library_find); whether CUDA is usable (nbc_is_available, numba's
 * is_available()) and detect()'s facts as JSON (nbc_detect_json); the environment variables
 * nbcuda reads (nbc_env_names); and the
 * report built from them that `nbcuda info` prints and nbcuda.info() returns (nbc_info_print,
 * numba's `numba -s`).
 *
 * This file sits at the top of the library, above both the host layer and the compiler, so
 * that one report can name every library. Every library and tool is found by the one finder
 * (base/toolkit.c); each is loaded by the layer that uses it (driver/loader.c: libcuda;
 * compiler/nvvm.c: libNVVM, libdevice; host/module.c: nvJitLink, libcudadevrt.a;
 * host/nvrtc.c: NVRTC; host/runtime.c: libcudart), and is asked here in the order of
 * NBC_LIBRARY_MAP. Asking loads the library as its first use would, once per process, so the
 * report shows exactly what a compile or a link would get. The toolkit's programs (nvdisasm)
 * are found here too (nbc_toolkit_find_program).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/toolkit.h"
#include "compiler/compiler.h"
#include "host/host.h"
#include "kernel/kernel.h"

const char *nbc_library_name(nbc_library_t library) {
  static const char *const names[] = {
#define NBC_LIBRARY_NAME_(name, text) text,
      NBC_LIBRARY_MAP(NBC_LIBRARY_NAME_)
#undef NBC_LIBRARY_NAME_
  };
  return (unsigned)library < NBC_LIBRARY_COUNT_ ? names[library] : NULL;
}

/* Every environment variable nbcuda's C code (the Python module's included) reads by name,
 * sorted. tests/c/test_info.c checks the list against the sources. */
static const char *const env_names[] = {
    "CUDA_HOME",
    "CUDA_PATH",
    "NBCUDA_CACHE_DIR",
    "NBCUDA_COMPILE_TIME_LIMIT",
    "NBCUDA_CUDADEVRT",
    "NBCUDA_CUDART",
    "NBCUDA_DEFAULT_PTX_CC",
    "NBCUDA_DRIVER",
    "NBCUDA_LIBDEVICE",
    "NBCUDA_MAX_SOURCE_SIZE",
    "NBCUDA_MEMORY_MANAGER",
    "NBCUDA_NUMPY_CAPI",
    "NBCUDA_NVJITLINK",
    "NBCUDA_NVRTC",
    "NBCUDA_NVVM",
    "NBCUDA_PER_THREAD_DEFAULT_STREAM",
    "NBCUDA_PIP_SITE",
    "NBCUDA_REUSE",
    "NBCUDA_REUSE_BYTES",
    "NUMBA_ALWAYS_WARN_UNINIT_VAR",
    "NUMBA_CACHE_DIR",
    "NUMBA_CUDA_ARRAY_INTERFACE_SYNC",
    "NUMBA_CUDA_DEBUGINFO",
    "NUMBA_CUDA_DEFAULT_PTX_CC",
    "NUMBA_CUDA_DRIVER",
    "NUMBA_CUDA_INCLUDE_PATH",
    "NUMBA_CUDA_LOG_API_ARGS",
    "NUMBA_CUDA_LOG_LEVEL",
    "NUMBA_CUDA_LOG_SIZE",
    "NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS",
    "NUMBA_CUDA_MEMORY_MANAGER",
    "NUMBA_CUDA_NVRTC_EXTRA_SEARCH_PATHS",
    "NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM",
    "NUMBA_CUDA_VERBOSE_JIT_LOG",
    "NUMBA_CUDA_WARN_ON_IMPLICIT_COPY",
    "NUMBA_DEBUG",
    "NUMBA_DISABLE_CUDA",
    "NUMBA_DISABLE_PERFORMANCE_WARNINGS",
    "NUMBA_DUMP_ASSEMBLY",
    "NUMBA_DUMP_LLVM",
    "NUMBA_ENABLE_CUDASIM",
    "NUMBA_FORCE_CUDA_CC",
    "NUMBA_OPT",
    NULL,
};

const char *const *nbc_env_names(void) { return env_names; }

/* ---------------------------------------------------------------- the libraries ------- */

static nbc_status_t find_driver(const char **ppath, int *pmajor, int *pminor) {
  int v = 0;
  nbc_status_t st = nbc_driver_version(&v);
  if (st == NBC_OK) {
    *pmajor = v / 1000;
    *pminor = (v % 1000) / 10;
  }
  *ppath = nbc_driver_path(); /* also the file that loaded but failed cuInit (a stub) */
  return st;
}

static nbc_status_t find_nvvm(const char **ppath, int *pmajor, int *pminor) {
  nbc_status_t st = nbc__nvvm_load();
  if (st != NBC_OK) return nbc__set_error(st, "%s", nbc__nvvm_load_error());
  *ppath = nbc__nvvm_path();
  if (nbc__nvvm_version(pmajor, pminor) != NBC_OK) *pmajor = *pminor = -1;
  return NBC_OK;
}

static nbc_status_t find_libdevice(const char **ppath) {
  const char *data, *why;
  size_t size;
  nbc_status_t st = nbc__libdevice_get(&data, &size, &why);
  if (st != NBC_OK) return nbc__set_error(st, "%s", why);
  *ppath = nbc__libdevice_path();
  return NBC_OK;
}

nbc_status_t nbc_library_find(nbc_library_t library, const char **ppath, int *pmajor,
                              int *pminor) {
  /* Per thread: the libcudadevrt.a search writes here, and every answer is copied here so
   * that one lifetime rule covers all. */
  static _Thread_local char found[4200];
  const char *path = NULL;
  int major = -1, minor = -1;
  nbc_status_t st;
  switch (library) {
  case NBC_LIBRARY_DRIVER: st = find_driver(&path, &major, &minor); break;
  case NBC_LIBRARY_NVVM: st = find_nvvm(&path, &major, &minor); break;
  case NBC_LIBRARY_LIBDEVICE: st = find_libdevice(&path); break;
  case NBC_LIBRARY_NVJITLINK: st = nbc__jitlink_find(&path, &major, &minor); break;
  case NBC_LIBRARY_NVRTC: st = nbc__nvrtc_find(&path, &major, &minor); break;
  case NBC_LIBRARY_CUDART: st = nbc__cudart_find(&path, &major, &minor); break;
  case NBC_LIBRARY_CUDADEVRT:
    st = nbc__cudadevrt_find(found, sizeof found);
    path = st == NBC_OK ? found : NULL;
    break;
  default:
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_library_find: %d is no nbc_library_t",
                          (int)library);
  }
  if (st != NBC_OK) major = minor = -1;
  if (path && path != found) snprintf(found, sizeof found, "%s", path);
  if (ppath) *ppath = path ? found : NULL;
  if (pmajor) *pmajor = major;
  if (pminor) *pminor = minor;
  return st;
}

nbc_status_t nbc_toolkit_find_program(const char *name, const char *const *sites,
                                      const char **ppath) {
  static _Thread_local char found[4096];
  if (ppath) *ppath = NULL;
  if (!name || strcmp(name, "nvdisasm") != 0)
    return nbc__set_error(NBC_INVALID_ARGUMENT,
                          "nbc_toolkit_find_program: nbcuda looks for nvdisasm, not %s",
                          name ? name : "NULL");
  nbc__toolkit_search *s = calloc(1, sizeof *s);
  if (!s) return nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  s->sites = sites;
  nbc_status_t st = NBC_OK;
  if (nbc__toolkit_find(NBC__TOOLKIT_NVDISASM, s) == 0) {
    snprintf(found, sizeof found, "%s", s->path);
    if (ppath) *ppath = found;
  } else {
    char tried[6000];
    st = nbc__set_error(NBC_NO_PROGRAM, "%s cannot be found (searched %s)", name,
                        nbc__toolkit_tried(s, NBC__TOOLKIT_INLINE, tried, sizeof tried));
  }
  free(s);
  return st;
}

/* numba's is_available(): the driver initialises and libNVVM loads (found and loaded by the
 * compiler's own loader, nvvm.c), so "available" means exactly "compile() can load libNVVM". */
int nbc_is_available(void) {
  if (nbc__driver_ensure() != NBC_OK) return 0;
  nbc_status_t st = nbc__nvvm_load();
  if (st != NBC_OK) {
    nbc__set_error(st, "%s", nbc__nvvm_load_error());
    return 0;
  }
  return 1;
}

/* ---------------------------------------------------------------- the report ---------- */

static const char *runtime_source_name(nbc_runtime_source_t source) {
  return source == NBC_RUNTIME_CUDART ? "libcudart"
         : source == NBC_RUNTIME_NVRTC ? "NVRTC"
                                       : "libNVVM";
}

/* A message of several lines (libNVVM's list of places searched), its later lines indented
 * under the first one's text. */
static void print_indented(FILE *out, const char *text, int indent) {
  for (const char *p = text; *p; p++) {
    fputc(*p, out);
    if (*p == '\n' && p[1]) fprintf(out, "%*s", indent, "");
  }
}

/* "error": <nbc_last_error()>, "status": "NBC_..." */
static void json_failure(FILE *out, nbc_status_t st) {
  fputs("\"error\": ", out);
  nbc__json_string(out, nbc_last_error());
  fputs(", \"status\": ", out);
  nbc__json_string(out, nbc_status_name(st));
}

static void json_version(FILE *out, int major, int minor) {
  if (major < 0)
    fputs("null", out);
  else
    fprintf(out, "[%d, %d]", major, minor);
}

/* One device as JSON, after sep: {"id": 0, "name": N, "uuid": U, "compute_capability": [M, m],
 * "supported": true}. */
static void json_device(FILE *out, const char *sep, nbc_device_t *d, int major, int minor,
                        int supported) {
  fprintf(out, "%s{\"id\": %d, \"name\": ", sep, nbc_device_id(d));
  nbc__json_string(out, nbc_device_name(d));
  fputs(", \"uuid\": ", out);
  nbc__json_string(out, nbc_device_uuid(d));
  fprintf(out, ", \"compute_capability\": [%d, %d], \"supported\": %s}", major, minor,
          supported ? "true" : "false");
}

nbc_status_t nbc_detect_json(FILE *out, int *pany_supported) {
  if (pany_supported) *pany_supported = 0;
  if (!out) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_detect_json: out is NULL");
  int count = 0;
  nbc_status_t st = nbc_device_count(&count);
  if (st != NBC_OK) {
    fputc('{', out);
    json_failure(out, st);
    fputs("}\n", out);
    return st;
  }
  int version = 0, supported = 0;
  nbc_driver_version(&version);
  fputs("{\"driver\": ", out);
  nbc__json_string(out, nbc_driver_path());
  fprintf(out, ", \"driver_version\": [%d, %d], \"devices\": [", version / 1000,
          (version % 1000) / 10);
  for (int i = 0; i < count; i++) {
    nbc_device_t *d;
    if ((st = nbc_device_get(i, &d)) != NBC_OK) return st;
    int major, minor;
    nbc_device_compute_capability(d, &major, &minor);
    int ok = major > 3 || (major == 3 && minor >= 5);
    supported += ok;
    json_device(out, i ? ", " : "", d, major, minor, ok);
  }
  fprintf(out, "], \"supported\": %d}\n", supported);
  fflush(out);
  if (pany_supported) *pany_supported = supported > 0;
  return NBC_OK;
}

static void print_libraries(FILE *out, int json) {
  fputs(json ? "\"libraries\": {" : "libraries:\n", out);
  for (int i = 0; i < NBC_LIBRARY_COUNT_; i++) {
    const char *path = NULL;
    int major = -1, minor = -1;
    nbc_status_t st = nbc_library_find((nbc_library_t)i, &path, &major, &minor);
    const char *name = nbc_library_name((nbc_library_t)i);
    if (json) {
      fprintf(out, "%s", i ? ", " : "");
      nbc__json_string(out, name);
      fputs(": {\"path\": ", out);
      if (path)
        nbc__json_string(out, path);
      else
        fputs("null", out);
      if (st == NBC_OK) {
        fputs(", \"version\": ", out);
        json_version(out, major, minor);
      } else {
        fputs(", ", out);
        json_failure(out, st);
      }
      fputc('}', out);
    } else if (st == NBC_OK) {
      char version[32] = "-";
      if (major >= 0) snprintf(version, sizeof version, "%d.%d", major, minor);
      fprintf(out, "  %-13s %-6s %s\n", name, version, path);
    } else {
      fprintf(out, "  %-13s unavailable", name);
      if (path) fprintf(out, " (%s)", path);
      fputs(": ", out);
      print_indented(out, nbc_last_error(), 4);
      fputc('\n', out);
    }
  }
  fputs(json ? "}, " : "\n", out);
}

static void print_runtime(FILE *out, int json) {
  int major = 0, minor = 0;
  nbc_runtime_source_t source = NBC_RUNTIME_CUDART;
  nbc_status_t st = nbc_runtime_get_version(&major, &minor, &source);
  if (!json) {
    if (st == NBC_OK)
      fprintf(out, "CUDA runtime: %d.%d (from %s)\n\n", major, minor,
              runtime_source_name(source));
    else
      fprintf(out, "CUDA runtime: unavailable: %s\n\n", nbc_last_error());
    return;
  }
  fputs("\"runtime\": {", out);
  if (st == NBC_OK) {
    fprintf(out, "\"version\": [%d, %d], \"source\": ", major, minor);
    nbc__json_string(out, runtime_source_name(source));
  } else {
    json_failure(out, st);
  }
  fputs("}, ", out);
}

/* The devices, as detect lists them; none when the driver is unusable (libcuda's entry says
 * why). */
static void print_devices(FILE *out, int json) {
  int count = 0;
  if (nbc_device_count(&count) != NBC_OK) {
    fputs(json ? "\"devices\": [], " : "devices: none (libcuda is unavailable)\n\n", out);
    return;
  }
  if (json)
    fputs("\"devices\": [", out);
  else
    fprintf(out, "devices: %d\n", count);
  int listed = 0;
  for (int i = 0; i < count; i++) {
    nbc_device_t *d;
    int major = 0, minor = 0;
    if (nbc_device_get(i, &d) != NBC_OK) continue;
    nbc_device_compute_capability(d, &major, &minor);
    int supported = major > 3 || (major == 3 && minor >= 5);
    if (json) {
      json_device(out, listed ? ", " : "", d, major, minor, supported);
    } else {
      fprintf(out, "  %d  %s  compute capability %d.%d  %s%s\n", nbc_device_id(d),
              nbc_device_name(d), major, minor, nbc_device_uuid(d),
              supported ? "" : "  [NOT SUPPORTED: CC < 3.5]");
    }
    listed++;
  }
  fputs(json ? "], " : "\n", out);
}

static void print_environment(FILE *out, int json) {
  fputs(json ? "\"environment\": {" : "environment (the variables nbcuda reads that are set):\n",
        out);
  int set = 0;
  for (const char *const *name = env_names; *name; name++) {
    const char *value = getenv(*name);
    if (!value) continue;
    if (json) {
      fputs(set ? ", " : "", out);
      nbc__json_string(out, *name);
      fputs(": ", out);
      nbc__json_string(out, value);
    } else {
      fprintf(out, "  %s=%s\n", *name, value);
    }
    set++;
  }
  if (json)
    fputc('}', out);
  else if (!set)
    fputs("  (none)\n", out);
}

nbc_status_t nbc_info_print(FILE *out, int json) {
  if (!out) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_info_print: out is NULL");
  if (json)
    fprintf(out, "{\"nbcuda\": \"%s\", ", nbc_version_string());
  else
    fprintf(out, "nbcuda %s\n\n", nbc_version_string());
  print_libraries(out, json);
  print_runtime(out, json);
  print_devices(out, json);
  print_environment(out, json);
  if (json) fputs("}\n", out);
  if (fflush(out) != 0 || ferror(out))
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_info_print: the report cannot be written");
  return NBC_OK;
}
