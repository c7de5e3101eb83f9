/* nvrtc.c — CUDA C++ compiled with NVRTC, for kernels that link CUDA C++ files (numba's
 * jit(link=["f.cu"]) and declare_device(..., link=[...])).
 *
 * NVRTC is optional: it is dlopen'ed the first time it is needed (nbc__load_toolkit_symbols,
 * NBCUDA_NVRTC overriding the search), and its absence is NBC_NO_NVRTC with every place
 * searched. The source is compiled for the device's architecture (-arch=sm_XY, or
 * -arch=compute_XY with -dlto for LTO-IR; NUMBA_FORCE_CUDA_CC replaces it, as in numba-cuda)
 * with the toolkit's include directory (NUMBA_CUDA_INCLUDE_PATH where the toolkit's headers
 * are not beside NVRTC; and its cccl/, where CUDA 13 keeps libcu++), as numba-cuda
 * compiles link files, with -lineinfo / -G when the flags ask (numba's compile_all) and -I for
 * each directory of the extra search paths (numba's CUDA_NVRTC_EXTRA_SEARCH_PATHS, ':'
 * separated); a failure carries NVRTC's log. What NVRTC made is kept for the process
 * and given again for the same source text, name, architecture, flags and search paths (a
 * kernel loaded in
 * several contexts, kernels sharing a file, the fp16 wrappers): a changed file is compiled
 * anew; a header it includes is not looked at again.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/numba_env.h"
#include "kernel/kernel.h"

typedef struct _nvrtcProgram *nvrtc_program;
static struct {
  int (*create)(nvrtc_program *, const char *, const char *, int, const char *const *,
                const char *const *);
  int (*destroy)(nvrtc_program *);
  int (*compile)(nvrtc_program, int, const char *const *);
  int (*ptx_size)(nvrtc_program, size_t *);
  int (*ptx)(nvrtc_program, char *);
  int (*ltoir_size)(nvrtc_program, size_t *);
  int (*ltoir)(nvrtc_program, char *);
  int (*log_size)(nvrtc_program, size_t *);
  int (*log)(nvrtc_program, char *);
  const char *(*error_string)(int);
  int (*version)(int *, int *);
} rtc;

static pthread_once_t rtc_once = PTHREAD_ONCE_INIT;
static int rtc_loaded;
static char rtc_error[8192];
static char rtc_path[4200];

static void load_rtc(void) {
  static const char *const sonames[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so",
                                        NULL};
  const nbc__symbol syms[] = {
      {"nvrtcCreateProgram", (void **)&rtc.create},
      {"nvrtcDestroyProgram", (void **)&rtc.destroy},
      {"nvrtcCompileProgram", (void **)&rtc.compile},
      {"nvrtcGetPTXSize", (void **)&rtc.ptx_size},
      {"nvrtcGetPTX", (void **)&rtc.ptx},
      {"nvrtcGetLTOIRSize", (void **)&rtc.ltoir_size},
      {"nvrtcGetLTOIR", (void **)&rtc.ltoir},
      {"nvrtcGetProgramLogSize", (void **)&rtc.log_size},
      {"nvrtcGetProgramLog", (void **)&rtc.log},
      {"nvrtcGetErrorString", (void **)&rtc.error_string},
      {"nvrtcVersion", (void **)&rtc.version},
  };
  rtc_loaded = nbc__load_toolkit_symbols("NVRTC", "NBCUDA_NVRTC", sonames, syms,
                                         sizeof syms / sizeof syms[0], rtc_path,
                                         sizeof rtc_path, rtc_error, sizeof rtc_error) == 0;
}

nbc_status_t nbc__nvrtc_find(const char **ppath, int *pmajor, int *pminor) {
  pthread_once(&rtc_once, load_rtc);
  if (!rtc_loaded) return nbc__set_error(NBC_NO_NVRTC, "%s", rtc_error);
  *ppath = rtc_path;
  if (rtc.version(pmajor, pminor) != 0) *pmajor = *pminor = -1;
  return NBC_OK;
}

/* The toolkit's include directory beside the library's lib64/ (for cuda_fp16.h & co.) in
 * out, and in cccl_out its cccl/ subdirectory where the toolkit has one (CUDA 13 keeps
 * libcu++, CUB and Thrust there: <cuda/std/...>, which cooperative_groups.h and
 * <cuda/barrier> include), else "". */
static void include_options(char *out, char *cccl_out, size_t size) {
  char dir[4200];
  snprintf(dir, sizeof dir, "%s", rtc_path);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  snprintf(out, size, "-I%s/include", slash ? dir : "/usr/local/cuda");
  /* numba-cuda's CUDA_INCLUDE_PATH: where the toolkit's headers are when they are not found
   * beside the library (an NVRTC from a wheel, say). */
  const char *configured = getenv("NUMBA_CUDA_INCLUDE_PATH");
  char probe[4300];
  snprintf(probe, sizeof probe, "%s/cuda_device_runtime_api.h", out + 2);
  if (configured && *configured && access(probe, F_OK) != 0)
    snprintf(out, size, "-I%s", configured);
  snprintf(cccl_out, size, "%s/cccl", out);
  if (access(cccl_out + 2, F_OK) != 0) cccl_out[0] = '\0';
}

static nbc_status_t fail(nvrtc_program *prog, const char *call, int r, const char *name) {
  char *log = NULL;
  size_t n = 0;
  if (*prog && rtc.log_size(*prog, &n) == 0 && n > 1 && (log = malloc(n)) &&
      rtc.log(*prog, log) != 0) {
    free(log);
    log = NULL;
  }
  nbc_status_t st = nbc__set_error(NBC_NVRTC_ERROR, "%s of %s failed (%s)%s%s", call, name,
                                   rtc.error_string ? rtc.error_string(r) : "NVRTC error",
                                   log ? ":\n" : "", log ? log : "");
  free(log);
  if (*prog) rtc.destroy(prog);
  return st;
}

/* The options: -arch, the toolkit's include directories, -rdc=true, the flags' own and one -I
 * per directory of search_paths; malloc'd (free() it and its strings' block *pblock), or
 * NULL when out of memory. */
static const char **options_for(int cc_major, int cc_minor, unsigned flags,
                                const char *search_paths, int *pcount, char **pblock) {
  int dirs = 0;
  size_t bytes = 48 + 2 * 4300;
  for (const char *p = search_paths; p && *p; p++)
    dirs += *p == ':';
  if (search_paths && *search_paths) bytes += strlen(search_paths) + 3 * ((size_t)dirs + 1) + 1;
  const char **options = malloc(sizeof *options * (size_t)(7 + dirs + 1));
  char *block = malloc(bytes);
  if (!options || !block) {
    free(options);
    free(block);
    return NULL;
  }
  int lto = (flags & NBC_NVRTC_LTO) != 0, n = 0;
  char *arch = block, *include = block + 48, *cccl = include + 4300, *next = cccl + 4300;
  snprintf(arch, 48, "-arch=%s_%d%d", lto ? "compute" : "sm", cc_major, cc_minor);
  include_options(include, cccl, 4300);
  options[n++] = arch;
  options[n++] = include;
  if (*cccl) options[n++] = cccl;
  options[n++] = "-rdc=true";
  if (lto) options[n++] = "-dlto";
  if (flags & NBC_NVRTC_LINEINFO) options[n++] = "-lineinfo";
  if (flags & NBC_NVRTC_DEBUG) options[n++] = "-G";
  for (const char *p = search_paths; p && *p;) {
    size_t len = strcspn(p, ":");
    if (len) { /* an empty entry (a doubled ':') names no directory */
      options[n++] = next;
      next += sprintf(next, "-I%.*s", (int)len, p) + 1;
    }
    p += len + (p[len] == ':');
  }
  *pcount = n;
  *pblock = block;
  return options;
}

static nbc_status_t compile_uncached(const char *source, const char *name, int cc_major,
                                     int cc_minor, unsigned flags, const char *search_paths,
                                     char **pcode, size_t *psize) {
  nbc__nvrtc_compiles++;
  pthread_once(&rtc_once, load_rtc);
  if (!rtc_loaded) return nbc__set_error(NBC_NO_NVRTC, "%s", rtc_error);
  int lto = (flags & NBC_NVRTC_LTO) != 0, noptions = 0;
  char *block = NULL;
  const char **options = options_for(cc_major, cc_minor, flags, search_paths, &noptions, &block);
  if (!options) return nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  nvrtc_program prog = NULL;
  int r = rtc.create(&prog, source, name, 0, NULL, NULL);
  if (r == 0) r = rtc.compile(prog, noptions, options);
  free(options);
  free(block);
  if (r != 0) return fail(&prog, prog ? "nvrtcCompileProgram" : "nvrtcCreateProgram", r, name);
  size_t size = 0;
  r = lto ? rtc.ltoir_size(prog, &size) : rtc.ptx_size(prog, &size);
  if (r != 0) return fail(&prog, lto ? "nvrtcGetLTOIRSize" : "nvrtcGetPTXSize", r, name);
  char *code = malloc(size ? size : 1);
  if (!code) {
    rtc.destroy(&prog);
    return nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  }
  r = lto ? rtc.ltoir(prog, code) : rtc.ptx(prog, code);
  if (r != 0) {
    free(code);
    return fail(&prog, lto ? "nvrtcGetLTOIR" : "nvrtcGetPTX", r, name);
  }
  rtc.destroy(&prog);
  if (!lto && size && code[size - 1] == '\0') size--; /* PTX text without its NUL */
  *pcode = code;
  *psize = size;
  return NBC_OK;
}

/* What NVRTC made, kept for the process: a kernel loaded in several contexts, kernels sharing
 * a link file and the fp16 wrappers compile once per (source, name, architecture, kind). */
struct compiled {
  char *source, *name, *search_paths;
  int cc_major, cc_minor;
  unsigned flags;
  char *code;
  size_t size;
  struct compiled *next;
};
static struct compiled *cache;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
unsigned long nbc__nvrtc_compiles;

static char *copy_of(const char *data, size_t size) {
  char *c = malloc(size + 1);
  if (c) {
    memcpy(c, data, size);
    c[size] = '\0';
  }
  return c;
}

nbc_status_t nbc_nvrtc_compile(const char *source, const char *name, int cc_major, int cc_minor,
                               unsigned flags, char **pcode, size_t *psize) {
  return nbc_nvrtc_compile_searching(source, name, cc_major, cc_minor, flags, NULL, pcode, psize);
}

nbc_status_t nbc_nvrtc_compile_searching(const char *source, const char *name, int cc_major,
                                         int cc_minor, unsigned flags, const char *search_paths,
                                         char **pcode, size_t *psize) {
  if (!search_paths) search_paths = "";
  if (!source || !pcode || !psize)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_nvrtc_compile: NULL argument");
  *pcode = NULL;
  *psize = 0;
  if (!name) name = "<source>";
  if (flags & ~(NBC_NVRTC_LTO | NBC_NVRTC_LINEINFO | NBC_NVRTC_DEBUG))
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_nvrtc_compile: unknown flags 0x%x", flags);
  char why[256];
  if (nbc__numba_forced_cc(&cc_major, &cc_minor, why, sizeof why) < 0)
    return nbc__set_error(NBC_UNSUPPORTED_CC, "%s", why);
  pthread_mutex_lock(&cache_lock);
  for (struct compiled *c = cache; c; c = c->next)
    if (c->cc_major == cc_major && c->cc_minor == cc_minor && c->flags == flags &&
        strcmp(c->name, name) == 0 && strcmp(c->search_paths, search_paths) == 0 &&
        strcmp(c->source, source) == 0) {
      char *code = copy_of(c->code, c->size);
      size_t size = c->size;
      pthread_mutex_unlock(&cache_lock);
      if (!code) return nbc__set_error(NBC_NO_MEMORY, "out of host memory");
      *pcode = code;
      *psize = size;
      return NBC_OK;
    }
  pthread_mutex_unlock(&cache_lock);
  nbc_status_t st =
      compile_uncached(source, name, cc_major, cc_minor, flags, search_paths, pcode, psize);
  if (st != NBC_OK) return st;
  struct compiled *c = calloc(1, sizeof *c);
  if (c) {
    c->source = copy_of(source, strlen(source));
    c->name = copy_of(name, strlen(name));
    c->search_paths = copy_of(search_paths, strlen(search_paths));
    c->code = copy_of(*pcode, *psize);
  }
  if (!c || !c->source || !c->name || !c->search_paths || !c->code) { /* not kept */
    if (c) {
      free(c->source);
      free(c->name);
      free(c->search_paths);
      free(c->code);
      free(c);
    }
    return NBC_OK;
  }
  c->cc_major = cc_major;
  c->cc_minor = cc_minor;
  c->flags = flags;
  c->size = *psize;
  pthread_mutex_lock(&cache_lock);
  c->next = cache;
  cache = c;
  pthread_mutex_unlock(&cache_lock);
  return NBC_OK;
}
