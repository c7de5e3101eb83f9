/* link.c — linking device code with nvJitLink: several images (PTX, cubin, fatbin, LTO-IR,
 * relocatable objects, static libraries, CUDA C++ compiled by NVRTC first) for one
 * architecture, with libcudadevrt.a (grid synchronisation) and numba.cuda.fp16's wrappers
 * (compiled by NVRTC, nvrtc.c) when the load options ask; the kinds link files get by their
 * extension (nbc_image_kind_of_extension, numba-cuda's linker's table); the public functions
 * that link (nbc_module_link*, nbc_link_cubin/ptx, and nbc_module_load_data* for an image the
 * driver cannot load alone). The host layer loads only
 * ready images (host/module.c: nbc__module_load_image); everything that makes an image is here.
 *
 * nvJitLink is optional and loaded lazily with dlopen the first time a link is needed
 * (base/toolkit.c's search: NBCUDA_NVJITLINK, the toolkit roots, the loader path). A link
 * targets -arch=sm_XY of the current context's device, adds -lto when any input is LTO-IR,
 * checks every nvJitLinkAddData, and on failure puts nvJitLink's error log in the message.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/toolkit.h"
#include "kernel/kernel.h"

/* --- nvJitLink ------------------------------------------------------------------------ */
typedef struct nvjitlink_st *nvjitlink_handle;
enum { NVJITLINK_INPUT_CUBIN = 1, NVJITLINK_INPUT_PTX = 2, NVJITLINK_INPUT_LTOIR = 3,
       NVJITLINK_INPUT_FATBIN = 4, NVJITLINK_INPUT_OBJECT = 5, NVJITLINK_INPUT_LIBRARY = 6 };

static struct {
  int (*create)(nvjitlink_handle *h, uint32_t n, const char **options);
  int (*destroy)(nvjitlink_handle *h);
  int (*add_data)(nvjitlink_handle h, int type, const void *data, size_t size,
                  const char *name);
  int (*add_file)(nvjitlink_handle h, int type, const char *path);
  int (*complete)(nvjitlink_handle h);
  int (*cubin_size)(nvjitlink_handle h, size_t *size);
  int (*cubin)(nvjitlink_handle h, void *cubin);
  int (*log_size)(nvjitlink_handle h, size_t *size);
  int (*log)(nvjitlink_handle h, char *log);
  int (*ptx_size)(nvjitlink_handle h, size_t *size);
  int (*ptx)(nvjitlink_handle h, char *ptx);
} jit;

static pthread_once_t jit_once = PTHREAD_ONCE_INIT;
static int jit_loaded;
static char jit_error[8192];
static char jit_path[4200];
/* nvJitLinkVersion, which nvJitLink has since 12.3: looked up apart from the entry points a
 * link needs, so that an older nvJitLink still links. */
static int (*jit_version)(unsigned *major, unsigned *minor);

static void load_jit(void) {
  const nbc__symbol syms[] = {
      {"nvJitLinkCreate", (void **)&jit.create},
      {"nvJitLinkDestroy", (void **)&jit.destroy},
      {"nvJitLinkAddData", (void **)&jit.add_data},
      {"nvJitLinkAddFile", (void **)&jit.add_file},
      {"nvJitLinkComplete", (void **)&jit.complete},
      {"nvJitLinkGetLinkedCubinSize", (void **)&jit.cubin_size},
      {"nvJitLinkGetLinkedCubin", (void **)&jit.cubin},
      {"nvJitLinkGetErrorLogSize", (void **)&jit.log_size},
      {"nvJitLinkGetErrorLog", (void **)&jit.log},
      {"nvJitLinkGetLinkedPtxSize", (void **)&jit.ptx_size},
      {"nvJitLinkGetLinkedPtx", (void **)&jit.ptx},
  };
  jit_loaded = nbc__toolkit_load(NBC__TOOLKIT_NVJITLINK, syms, sizeof syms / sizeof syms[0],
                                 jit_path, sizeof jit_path, jit_error, sizeof jit_error) == 0;
  if (jit_loaded) {
    void *lib = dlopen(jit_path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (lib) {
      *(void **)&jit_version = dlsym(lib, "nvJitLinkVersion");
      dlclose(lib); /* drops only the reference RTLD_NOLOAD took */
    }
  }
}

nbc_status_t nbc__jitlink_find(const char **ppath, int *pmajor, int *pminor) {
  pthread_once(&jit_once, load_jit);
  if (!jit_loaded) return nbc__set_error(NBC_NO_JITLINK, "%s", jit_error);
  unsigned major = 0, minor = 0;
  int known = jit_version && jit_version(&major, &minor) == 0;
  *ppath = jit_path;
  *pmajor = known ? (int)major : -1;
  *pminor = known ? (int)minor : -1;
  return NBC_OK;
}

/* Formats nvJitLink's failure with its error log; destroys the handle. */
static nbc_status_t jit_fail(nvjitlink_handle *h, const char *call, int result,
                             const char *what) {
  char *log = NULL;
  size_t size = 0;
  if (*h && jit.log_size(*h, &size) == 0 && size > 1 && (log = malloc(size + 1)) &&
      jit.log(*h, log) == 0)
    log[size] = '\0';
  else if (log)
    log[0] = '\0';
  nbc_status_t st = nbc__set_error(NBC_LINK_ERROR, "%s failed (nvJitLinkResult %d)%s%s%s%s",
                                   call, result, what ? " for " : "", what ? what : "",
                                   log && *log ? ":\n" : "", log ? log : "");
  free(log);
  if (*h) jit.destroy(h);
  return st;
}

/* The toolkit's libcudadevrt.a (grid synchronisation's cudaCG* functions) in buf, found by
 * base/toolkit.c; NBC_LINK_ERROR naming every place it looked when there is none. */
nbc_status_t nbc__cudadevrt_find(char *buf, size_t size) {
  nbc__toolkit_search *s = calloc(1, sizeof *s);
  if (!s) return nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  nbc_status_t st = NBC_OK;
  if (nbc__toolkit_find(NBC__TOOLKIT_CUDADEVRT, s) == 0) {
    snprintf(buf, size, "%s", s->path);
  } else {
    char tried[6000];
    st = nbc__set_error(NBC_LINK_ERROR, "libcudadevrt.a cannot be found (grid synchronisation "
                        "needs it; NBCUDA_CUDADEVRT may name the file); searched %s",
                        nbc__toolkit_tried(s, NBC__TOOLKIT_INLINE, tried, sizeof tried));
  }
  free(s);
  return st;
}

/* The strings nvJitLink is given with its inputs: it keeps the pointers (the names appear in
 * its messages at nvJitLinkComplete), so they live until the link is destroyed. */
typedef struct {
  char (*names)[32]; /* one per image */
  char **cuda;       /* one per image: NVRTC's output for an NBC_IMAGE_CUDA one, else NULL */
  char path[4096];   /* libcudadevrt.a */
  char *shim;        /* numba.cuda.fp16's wrappers, compiled (nbc_nvrtc_compile keeps a copy
                        for the process, so this costs NVRTC once per architecture) */
} link_strings;

static nbc_status_t jit_link_with(const nbc_image_t *images, int count, int cc_major,
                                  int cc_minor, const nbc_module_load_options_t *load,
                                  link_strings *strings, bool ptx, void **pout, size_t *psize);

/* Links images (and libcudadevrt.a, the fp16 shim when the options ask) for
 * sm_<cc_major><cc_minor> into a cubin (malloc'd), or with ptx into PTX text (malloc'd,
 * NUL-terminated; size without the NUL): what link-time optimisation of LTO-IR made. */
/* images with each NBC_IMAGE_CUDA one compiled by NVRTC for sm_<cc_major><cc_minor> (to
 * LTO-IR when the first image is LTO-IR, as numba compiles a kernel's .cu files in the
 * kernel's own form), into out; the compiled code is kept in strings->cuda. */
static nbc_status_t compile_cuda(const nbc_image_t *images, int count, int cc_major,
                                 int cc_minor, const nbc_module_load_options_t *load,
                                 link_strings *strings, nbc_image_t *out) {
  bool lto = nbc__image_recognise(images[0].data, images[0].size, images[0].kind) ==
             NBC_IMAGE_LTOIR;
  for (int i = 0; i < count; i++) {
    out[i] = images[i];
    if (images[i].kind != NBC_IMAGE_CUDA) continue;
    char *text = malloc(images[i].size + 1); /* NVRTC reads a NUL-terminated string */
    if (!text) return nbc__set_error(NBC_NO_MEMORY, "out of host memory");
    memcpy(text, images[i].data, images[i].size);
    text[images[i].size] = 0;
    char *name = strings->names[i];
    snprintf(name, sizeof strings->names[i], "image%d.cu", i);
    size_t size = 0;
    nbc_status_t st = nbc_nvrtc_compile_searching(
        text, images[i].name ? images[i].name : name, cc_major, cc_minor,
        lto ? NBC_NVRTC_LTO : 0, load ? load->nvrtc_search_paths : NULL, &strings->cuda[i],
        &size);
    free(text);
    if (st != NBC_OK) return st;
    out[i] = (nbc_image_t){strings->cuda[i], size, lto ? NBC_IMAGE_LTOIR : NBC_IMAGE_PTX,
                           images[i].name};
  }
  return NBC_OK;
}

static nbc_status_t jit_link(const nbc_image_t *images, int count, int cc_major, int cc_minor,
                             const nbc_module_load_options_t *load, bool ptx, void **pout,
                             size_t *psize) {
  size_t n = (size_t)(count > 0 ? count : 1);
  link_strings *strings = calloc(1, sizeof *strings);
  nbc_image_t *compiled = calloc(n, sizeof *compiled);
  if (strings) {
    strings->names = calloc(n, sizeof *strings->names);
    strings->cuda = calloc(n, sizeof *strings->cuda);
  }
  nbc_status_t st = strings && strings->names && strings->cuda && compiled
                        ? compile_cuda(images, count, cc_major, cc_minor, load, strings,
                                       compiled)
                        : nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  if (st == NBC_OK)
    st = jit_link_with(compiled, count, cc_major, cc_minor, load, strings, ptx, pout, psize);
  for (int i = 0; strings && strings->cuda && i < count; i++) free(strings->cuda[i]);
  if (strings) {
    free(strings->shim);
    free(strings->names);
    free(strings->cuda);
  }
  free(strings);
  free(compiled);
  return st;
}

/* The PTX a completed -ptx link made (malloc'd, NUL-terminated); destroys the handle. */
static nbc_status_t linked_ptx(nvjitlink_handle *h, void **pout, size_t *psize) {
  size_t size = 0;
  int r = jit.ptx_size(*h, &size);
  if (r != 0) return jit_fail(h, "nvJitLinkGetLinkedPtxSize", r, NULL);
  char *text = malloc(size + 1);
  if (!text) {
    jit.destroy(h);
    return nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  }
  r = jit.ptx(*h, text);
  if (r != 0) {
    free(text);
    return jit_fail(h, "nvJitLinkGetLinkedPtx", r, NULL);
  }
  jit.destroy(h);
  text[size] = '\0';
  *pout = text;
  *psize = strlen(text);
  return NBC_OK;
}

static nbc_status_t jit_link_with(const nbc_image_t *images, int count, int cc_major,
                                  int cc_minor, const nbc_module_load_options_t *load,
                                  link_strings *strings, bool ptx, void **pout, size_t *psize) {
  unsigned max_registers = load ? load->max_registers : 0;
  int cudadevrt = load && load->cudadevrt, fp16 = load && load->fp16;
  pthread_once(&jit_once, load_jit);
  if (!jit_loaded) return nbc__set_error(NBC_NO_JITLINK, "%s", jit_error);
  char arch[32], maxreg[40];
  snprintf(arch, sizeof arch, "-arch=sm_%d%d", cc_major, cc_minor);
  snprintf(maxreg, sizeof maxreg, "-maxrregcount=%u", max_registers);
  const char *options[4] = {arch, NULL, NULL, NULL};
  uint32_t n_options = 1;
  int lto = 0;
  for (int i = 0; i < count; i++)
    if (nbc__image_recognise(images[i].data, images[i].size, images[i].kind) == NBC_IMAGE_LTOIR) {
      options[n_options++] = "-lto";
      lto = 1;
      break;
    }
  /* bfloat16's wrappers exist from compute capability 8.0 (fp16.c): below it a kernel using
   * them is refused by name rather than by nvJitLink's undefined reference */
  for (int i = 0; fp16 && cc_major < 8 && i < count; i++)
    if (images[i].data && memmem(images[i].data, images[i].size, "nbc_bf16_", 9))
      return nbc__set_error(NBC_LINK_ERROR,
                            "bfloat16 (numba.cuda.bf16) needs compute capability 8.0 or "
                            "above, as numba-cuda's: cannot link for sm_%d%d",
                            cc_major, cc_minor);
  size_t shim_size = 0;
  if (fp16) { /* compiled before the link starts: NVRTC's failure is its own error */
    const char *source = nbc_fp16_shim_source();
    if (!source) return nbc__set_error(NBC_NO_MEMORY, "out of host memory (fp16 wrappers)");
    nbc_status_t st = nbc_nvrtc_compile(source, "nbcuda_fp16.cu", cc_major, cc_minor,
                                        lto ? NBC_NVRTC_LTO : 0,
                                        &strings->shim, &shim_size);
    if (st != NBC_OK) return st;
  }
  if (max_registers) options[n_options++] = maxreg; /* numba's max_registers */
  if (ptx) options[n_options++] = "-ptx";
  nvjitlink_handle h = NULL;
  int r = jit.create(&h, n_options, options);
  if (r != 0) return jit_fail(&h, "nvJitLinkCreate", r, arch);
  for (int i = 0; i < count; i++) {
    nbc_image_kind_t kind = nbc__image_recognise(images[i].data, images[i].size, images[i].kind);
    int type = kind == NBC_IMAGE_CUBIN     ? NVJITLINK_INPUT_CUBIN
               : kind == NBC_IMAGE_LTOIR   ? NVJITLINK_INPUT_LTOIR
               : kind == NBC_IMAGE_FATBIN  ? NVJITLINK_INPUT_FATBIN
               : kind == NBC_IMAGE_OBJECT  ? NVJITLINK_INPUT_OBJECT
               : kind == NBC_IMAGE_LIBRARY ? NVJITLINK_INPUT_LIBRARY
                                           : NVJITLINK_INPUT_PTX;
    char *name = strings->names[i];
    snprintf(name, sizeof strings->names[i], "image%d.%s", i, nbc__image_kind_name(kind));
    r = jit.add_data(h, type, images[i].data, images[i].size, name);
    if (r != 0) return jit_fail(&h, "nvJitLinkAddData", r, name);
  }
  if (fp16) {
    r = jit.add_data(h, lto ? NVJITLINK_INPUT_LTOIR : NVJITLINK_INPUT_PTX, strings->shim,
                     shim_size, "nbcuda_fp16");
    if (r != 0) return jit_fail(&h, "nvJitLinkAddData", r, "nbcuda_fp16");
  }
  if (cudadevrt) {
    char *path = strings->path;
    nbc_status_t st = nbc__cudadevrt_find(path, sizeof strings->path);
    if (st != NBC_OK) {
      jit.destroy(&h);
      return st;
    }
    r = jit.add_file(h, NVJITLINK_INPUT_LIBRARY, path);
    if (r != 0) return jit_fail(&h, "nvJitLinkAddFile", r, path);
  }
  r = jit.complete(h);
  if (r != 0) return jit_fail(&h, "nvJitLinkComplete", r, arch);
  if (ptx) return linked_ptx(&h, pout, psize);
  size_t size = 0;
  r = jit.cubin_size(h, &size);
  if (r != 0) return jit_fail(&h, "nvJitLinkGetLinkedCubinSize", r, NULL);
  void *cubin = malloc(size ? size : 1);
  if (!cubin) {
    jit.destroy(&h);
    return nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  }
  r = jit.cubin(h, cubin);
  if (r != 0) {
    free(cubin);
    return jit_fail(&h, "nvJitLinkGetLinkedCubin", r, NULL);
  }
  jit.destroy(&h);
  *pout = cubin;
  *psize = size;
  return NBC_OK;
}

static nbc_status_t check_images(const nbc_image_t *images, int count, const char *fn) {
  if (!images || count <= 0) return nbc__set_error(NBC_INVALID_ARGUMENT, "%s: no images", fn);
  for (int i = 0; i < count; i++)
    if (!images[i].data || images[i].size == 0)
      return nbc__set_error(NBC_INVALID_ARGUMENT, "%s: image %d is empty", fn, i);
  return NBC_OK;
}

static nbc_status_t link_images(const nbc_image_t *images, int count,
                                const nbc_module_load_options_t *options,
                                nbc_module_t **pmodule) {
  if (!pmodule) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_module_link: pmodule is NULL");
  *pmodule = NULL;
  nbc_status_t st = check_images(images, count, "nbc_module_link");
  if (st != NBC_OK) return st;
  nbc_context_t *context;
  st = nbc__context_ensure(&context);
  if (st != NBC_OK) return st;
  void *cubin = NULL;
  size_t size = 0;
  st = jit_link(images, count, context->device->cc_major, context->device->cc_minor, options,
                false, &cubin, &size);
  if (st != NBC_OK) return st;
  st = nbc__module_load_image(cubin, size, NBC_IMAGE_CUBIN, 0, pmodule);
  free(cubin);
  return st;
}

nbc_status_t nbc_module_link(const nbc_image_t *images, int count, nbc_module_t **pmodule) {
  return link_images(images, count, NULL, pmodule);
}

nbc_status_t nbc_module_link_ex(const nbc_image_t *images, int count,
                                const nbc_module_load_options_t *options,
                                nbc_module_t **pmodule) {
  return link_images(images, count, options, pmodule);
}

/* nbc_link_cubin and nbc_link_ptx (fn: the name for messages). */
static nbc_status_t link_for(const nbc_image_t *images, int count, int cc_major, int cc_minor,
                             const nbc_module_load_options_t *options, bool ptx, void **pout,
                             size_t *psize, const char *fn) {
  if (!pout || !psize) return nbc__set_error(NBC_INVALID_ARGUMENT, "%s: NULL output", fn);
  *pout = NULL;
  *psize = 0;
  nbc_status_t st = check_images(images, count, fn);
  if (st != NBC_OK) return st;
  if (cc_major == 0 && cc_minor == 0) {
    nbc_context_t *context;
    st = nbc__context_ensure(&context);
    if (st != NBC_OK) return st;
    cc_major = context->device->cc_major;
    cc_minor = context->device->cc_minor;
  } else if (cc_major < 1 || cc_minor < 0 || cc_minor > 9) {
    return nbc__set_error(NBC_INVALID_ARGUMENT, "%s: invalid compute capability %d.%d", fn,
                          cc_major, cc_minor);
  }
  return jit_link(images, count, cc_major, cc_minor, options, ptx, pout, psize);
}

nbc_status_t nbc_link_cubin(const nbc_image_t *images, int count, int cc_major, int cc_minor,
                            const nbc_module_load_options_t *options, void **pcubin,
                            size_t *psize) {
  return link_for(images, count, cc_major, cc_minor, options, false, pcubin, psize,
                  "nbc_link_cubin");
}

nbc_status_t nbc_link_ptx(const nbc_image_t *images, int count, int cc_major, int cc_minor,
                          const nbc_module_load_options_t *options, char **pptx,
                          size_t *psize) {
  void *out = NULL;
  nbc_status_t st = link_for(images, count, cc_major, cc_minor, options, true, &out, psize,
                             "nbc_link_ptx");
  if (pptx) *pptx = out;
  return st;
}

void nbc_cubin_free(void *cubin) { free(cubin); }

nbc_status_t nbc_module_load_data(const void *image, size_t size, nbc_image_kind_t kind,
                                  nbc_module_t **pmodule) {
  return nbc_module_load_data_ex(image, size, kind, NULL, pmodule);
}

nbc_status_t nbc_module_load_data_ex(const void *image, size_t size, nbc_image_kind_t kind,
                                     const nbc_module_load_options_t *options,
                                     nbc_module_t **pmodule) {
  unsigned max_registers = options ? options->max_registers : 0;
  if (!pmodule || !image || size == 0)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_module_load_data: empty image");
  *pmodule = NULL;
  if ((int)kind < NBC_IMAGE_AUTO || (int)kind > NBC_IMAGE_CUDA)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_module_load_data: unknown image kind %d",
                          (int)kind);
  kind = nbc__image_recognise(image, size, kind);
  if (kind == NBC_IMAGE_LTOIR || kind == NBC_IMAGE_OBJECT || kind == NBC_IMAGE_LIBRARY ||
      kind == NBC_IMAGE_CUDA || (options && (options->cudadevrt || options->fp16))) {
    nbc_image_t one = {image, size, kind, NULL};
    return link_images(&one, 1, options, pmodule);
  }
  return nbc__module_load_image(image, size, kind, max_registers, pmodule);
}

nbc_status_t nbc_image_kind_of_extension(const char *ext, nbc_image_kind_t *pkind) {
  static const struct {
    const char *ext;
    nbc_image_kind_t kind;
  } kinds[] = {{"ptx", NBC_IMAGE_PTX},       {"cubin", NBC_IMAGE_CUBIN},
               {"fatbin", NBC_IMAGE_FATBIN}, {"ltoir", NBC_IMAGE_LTOIR},
               {"o", NBC_IMAGE_OBJECT},      {"a", NBC_IMAGE_LIBRARY},
               {"cu", NBC_IMAGE_CUDA}};
  for (size_t i = 0; ext && i < sizeof kinds / sizeof kinds[0]; i++)
    if (strcmp(ext, kinds[i].ext) == 0) {
      if (pkind) *pkind = kinds[i].kind;
      return NBC_OK;
    }
  if (pkind) *pkind = NBC_IMAGE_AUTO;
  return ext ? nbc__set_error(NBC_LINK_ERROR, "Don't know how to link file with extension .%s",
                              ext)
             : nbc__set_error(NBC_LINK_ERROR,
                              "Don't know how to link file with extension (none)");
}
