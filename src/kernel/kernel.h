/* kernel.h — the kernel layer's private header, one section per file (cache.c, the disk
 * cache, needs nothing private and has none): link.c (nvJitLink,
 * libcudadevrt.a, the linking entry points), nvrtc.c (CUDA C++ compiled with NVRTC),
 * kernel.c (nbc_kernel_t: a compiled kernel, its loaded module per context) and args.c (a
 * launch's typed arguments packed into numba's flattened parameter layout).
 *
 * The kernel layer sits above the host layer (loading ready images, launching) and the
 * compiler (Python source to PTX or LTO-IR): it includes both, and neither includes it.
 */
#ifndef NBC_KERNEL_H
#define NBC_KERNEL_H

#include "host/host.h"

/* link.c ------------------------------------------------------------------------------ */
/* Where nvJitLink was found, loading it if that has not happened yet: NBC_OK with *ppath
 * (lives for the process) and its version (-1, -1 when it cannot tell), else NBC_NO_JITLINK
 * with the places searched in nbc_last_error(). For nbc_library_find. */
nbc_status_t nbc__jitlink_find(const char **ppath, int *pmajor, int *pminor);
/* The toolkit's libcudadevrt.a into buf (NBCUDA_CUDADEVRT, else lib64/ of each toolkit
 * root); NBC_LINK_ERROR naming where it looked when there is none. */
nbc_status_t nbc__cudadevrt_find(char *buf, size_t size);

/* nvrtc.c ----------------------------------------------------------------------------- */
/* Where NVRTC was found, as nbc__jitlink_find (NBC_NO_NVRTC when it is not). */
nbc_status_t nbc__nvrtc_find(const char **ppath, int *pmajor, int *pminor);
/* How many times NVRTC itself compiled (nbc_nvrtc_compile answers repeats from its cache);
 * for tests. */
extern unsigned long nbc__nvrtc_compiles;

/* kernel.c --------------------------------------------------------------------------- */
/* Where the kernel's code is loaded: one entry per context it ran in, during the context's
 * lifetime `lifetime` (an entry of a context reset since is stale: its module is an empty
 * wrapper, destroyed at the next load or with the kernel). */
typedef struct nbc__kernel_loaded {
  nbc_context_t *context;
  unsigned lifetime;
  nbc_module_t *module;
  nbc_function_t *function;
} nbc__kernel_loaded;

struct nbc_kernel {
  nbc_compile_result_t *result;
  nbc_signature_t *sig;
  char *name; /* the kernel's Python name (or the result's symbol), for messages */
  nbc_module_load_options_t load; /* the caller's options, or'ed with what the code needs */
  int set_carveout, carveout;
  nbc_image_t *links; /* copies of the images linked at each load: nlinks of them */
  int nlinks;
  nbc_kernel_load_fn load_fn;
  void *load_data;
  nbc__kernel_loaded *loaded; /* nloaded of capacity; searched at each launch */
  int nloaded, capacity;
  unsigned long loads;
};

#endif /* NBC_KERNEL_H */
