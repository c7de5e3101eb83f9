/* ptx_check.h — helpers for compiler tests: run the CUDA toolkit's own tools on what nbcuda
 * produced, so that "it compiles" means "NVIDIA's assembler and linker accept it".
 *
 * ptx_check_ptxas writes the PTX to a temporary file and runs `ptxas -arch=sm_90` on it
 * (with -c for device functions, which have no entry and may call externs), capturing its
 * output. ptx_check_jitlink dlopens nvJitLink and links LTO-IR with -arch=sm_90 -lto,
 * asking for the linked PTX too so tests can check that a kernel survived the link (it is
 * silently dropped when it is missing from @llvm.used). Both return 0 on success, -1 when
 * the tool is not available (tests then SKIP), and 1 on a failure with the tool's log.
 */
#ifndef NBCUDA_PTX_CHECK_H
#define NBCUDA_PTX_CHECK_H

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline const char *ptx_check_ptxas_path(void) {
  static char path[1024];
  const char *home = getenv("CUDA_HOME");
  if (home && *home) {
    snprintf(path, sizeof path, "%s/bin/ptxas", home);
    if (access(path, X_OK) == 0) return path;
  }
  snprintf(path, sizeof path, "/usr/local/cuda/bin/ptxas");
  if (access(path, X_OK) == 0) return path;
  return NULL;
}

/* Runs ptxas on the PTX; log receives its output (NUL-terminated). */
static inline int ptx_check_ptxas(const char *ptx, size_t size, int relocatable, char *log,
                                  size_t logsize) {
  log[0] = '\0';
  const char *ptxas = ptx_check_ptxas_path();
  if (!ptxas) return -1;
  char name[] = "/tmp/nbcuda_ptx_XXXXXX";
  int fd = mkstemp(name);
  if (fd < 0) return -1;
  FILE *f = fdopen(fd, "w");
  fwrite(ptx, 1, size, f);
  fclose(f);
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s -arch=sm_90 %s %s -o /dev/null 2>&1", ptxas,
           relocatable ? "-c" : "", name);
  FILE *p = popen(cmd, "r");
  size_t len = 0;
  if (p) {
    len = fread(log, 1, logsize - 1, p);
    log[len] = '\0';
  }
  int rc = p ? pclose(p) : -1;
  unlink(name);
  return rc == 0 ? 0 : 1;
}

typedef int (*ptx_check_jl_create_fn)(void **, uint32_t, const char **);
typedef int (*ptx_check_jl_destroy_fn)(void **);
typedef int (*ptx_check_jl_add_fn)(void *, int, const void *, size_t, const char *);
typedef int (*ptx_check_jl_complete_fn)(void *);
typedef int (*ptx_check_jl_size_fn)(void *, size_t *);
typedef int (*ptx_check_jl_get_fn)(void *, char *);

/* Links LTO-IR for sm_90. On success *pptx (may be NULL) receives the linked PTX
 * (malloc'd). */
static inline int ptx_check_jitlink(const void *ltoir, size_t size, char **pptx, char *log,
                                    size_t logsize) {
  log[0] = '\0';
  if (pptx) *pptx = NULL;
  const char *candidates[] = {"/usr/local/cuda/lib64/libnvJitLink.so",
                              "libnvJitLink.so.13", "libnvJitLink.so"};
  void *h = NULL;
  char path[1024];
  const char *home = getenv("CUDA_HOME");
  if (home && *home) {
    snprintf(path, sizeof path, "%s/lib64/libnvJitLink.so", home);
    h = dlopen(path, RTLD_NOW);
  }
  for (int i = 0; !h && i < 3; i++) h = dlopen(candidates[i], RTLD_NOW);
  if (!h) return -1;
  ptx_check_jl_create_fn create;
  *(void **)&create = dlsym(h, "nvJitLinkCreate");
  ptx_check_jl_destroy_fn destroy;
  *(void **)&destroy = dlsym(h, "nvJitLinkDestroy");
  ptx_check_jl_add_fn add;
  *(void **)&add = dlsym(h, "nvJitLinkAddData");
  ptx_check_jl_complete_fn complete;
  *(void **)&complete = dlsym(h, "nvJitLinkComplete");
  ptx_check_jl_size_fn errsize;
  *(void **)&errsize = dlsym(h, "nvJitLinkGetErrorLogSize");
  ptx_check_jl_get_fn errlog;
  *(void **)&errlog = dlsym(h, "nvJitLinkGetErrorLog");
  ptx_check_jl_size_fn ptxsize;
  *(void **)&ptxsize = dlsym(h, "nvJitLinkGetLinkedPtxSize");
  ptx_check_jl_get_fn ptxget;
  *(void **)&ptxget = dlsym(h, "nvJitLinkGetLinkedPtx");
  if (!create || !destroy || !add || !complete || !errsize || !errlog || !ptxsize || !ptxget)
    return -1;
  const char *opts[] = {"-arch=sm_90", "-lto", "-ptx"};
  void *link = NULL;
  if (create(&link, 3, opts) != 0) {
    snprintf(log, logsize, "nvJitLinkCreate failed");
    return 1;
  }
  int rc = 0;
  /* 3 is NVJITLINK_INPUT_LTOIR. */
  if (add(link, 3, ltoir, size, "nbcuda.ltoir") != 0 || complete(link) != 0) {
    size_t n = 0;
    if (errsize(link, &n) == 0 && n > 0 && n < logsize) errlog(link, log);
    rc = 1;
  } else if (pptx) {
    size_t n = 0;
    if (ptxsize(link, &n) == 0 && n > 0) {
      *pptx = malloc(n + 1);
      ptxget(link, *pptx);
      (*pptx)[n] = '\0';
    }
  }
  destroy(&link);
  return rc;
}

#endif /* NBCUDA_PTX_CHECK_H */
