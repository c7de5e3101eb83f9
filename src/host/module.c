/* module.c — loading ready code into the current context: PTX, cubin and fatbin through
 * cuModuleLoadDataEx (PTX JIT errors reported with the driver's error log), and kernel
 * lookup. Making code (linking with nvJitLink, compiling CUDA C++ with NVRTC) is the kernel
 * layer's (src/kernel/link.c), which hands its linked cubin to nbc__module_load_image.
 *
 * Each module is listed in its context so that nbc_context_reset (and a device reset) can
 * unload it; the nbc_module_t then stays a valid, empty wrapper until nbc_module_destroy.
 * Functions are looked up once per call to nbc_module_get_function and owned by the module.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/host.h"

nbc_image_kind_t nbc__image_recognise(const void *data, size_t size, nbc_image_kind_t kind) {
  if (kind != NBC_IMAGE_AUTO) return kind;
  const unsigned char *b = data;
  if (size >= 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F')
    return NBC_IMAGE_CUBIN;
  if (size >= 4 && b[0] == 0xED && b[1] == 0x43 && b[2] == 0x4E && b[3] == 0x7F)
    return NBC_IMAGE_LTOIR;
  if (size >= 4 && b[0] == 0x50 && b[1] == 0xED && b[2] == 0x55 && b[3] == 0xBA)
    return NBC_IMAGE_FATBIN;
  return NBC_IMAGE_PTX;
}

const char *nbc__image_kind_name(nbc_image_kind_t kind) {
  switch (kind) {
  case NBC_IMAGE_PTX: return "PTX";
  case NBC_IMAGE_CUBIN: return "cubin";
  case NBC_IMAGE_FATBIN: return "fatbin";
  case NBC_IMAGE_LTOIR: return "LTO-IR";
  case NBC_IMAGE_OBJECT: return "object";
  case NBC_IMAGE_LIBRARY: return "library";
  default: return "image";
  }
}

/* --- loading -------------------------------------------------------------------------- */
static void list_add(nbc_context_t *context, nbc_module_t *m) {
  pthread_mutex_lock(&context->lock);
  m->prev = NULL;
  m->next = context->modules;
  if (context->modules) context->modules->prev = m;
  context->modules = m;
  pthread_mutex_unlock(&context->lock);
}

/* Loads a driver-loadable image (NUL-terminated when PTX) into the current context. */
static nbc_status_t load(const void *image, nbc_image_kind_t kind, nbc_context_t *context,
                         unsigned max_registers, nbc_module_t **pmodule) {
  nbc_module_t *m = calloc(1, sizeof *m);
  if (!m) return nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  char log[4096] = "";
  CUjit_option options[3] = {NBC__CU_JIT_ERROR_LOG_BUFFER,
                             NBC__CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, NBC__CU_JIT_MAX_REGISTERS};
  void *values[3] = {log, (void *)(uintptr_t)(sizeof log - 1),
                     (void *)(uintptr_t)max_registers};
  /* the register cap applies when the driver compiles PTX (a cubin is compiled already) */
  unsigned n = max_registers && kind == NBC_IMAGE_PTX ? 3 : 2;
  CUresult res = nbc__cu.cuModuleLoadDataEx(&m->handle, image, n, options, values);
  if (res != NBC__CUDA_SUCCESS) {
    free(m);
    log[sizeof log - 1] = '\0';
    return nbc__driver_failf("cuModuleLoadDataEx", res, " (loading %s)%s%s", nbc__image_kind_name(kind),
                             log[0] ? ":\n" : "", log);
  }
  m->context = context;
  list_add(context, m);
  *pmodule = m;
  return NBC_OK;
}


nbc_status_t nbc__module_load_image(const void *image, size_t size, nbc_image_kind_t kind,
                                    unsigned max_registers, nbc_module_t **pmodule) {
  nbc_context_t *context;
  nbc_status_t st = nbc__context_ensure(&context);
  if (st != NBC_OK) return st;
  if (kind != NBC_IMAGE_PTX || ((const char *)image)[size - 1] == '\0')
    return load(image, kind, context, max_registers, pmodule);
  /* The driver reads PTX up to a NUL; the caller's text need not have one. */
  char *text = malloc(size + 1);
  if (!text) return nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  memcpy(text, image, size);
  text[size] = '\0';
  st = load(text, kind, context, max_registers, pmodule);
  free(text);
  return st;
}

static void free_functions(nbc_module_t *m) {
  while (m->functions) {
    nbc_function_t *next = m->functions->next;
    free(m->functions);
    m->functions = next;
  }
}

void nbc__module_release_context(nbc_context_t *context) {
  pthread_mutex_lock(&context->lock);
  for (nbc_module_t *m = context->modules; m; m = m->next) {
    if (m->handle) nbc__cu.cuModuleUnload(m->handle);
    m->handle = NULL;
  }
  pthread_mutex_unlock(&context->lock);
}

void nbc_module_destroy(nbc_module_t *module) {
  if (!module) return;
  nbc_context_t *context = module->context;
  pthread_mutex_lock(&context->lock);
  if (module->prev)
    module->prev->next = module->next;
  else
    context->modules = module->next;
  if (module->next) module->next->prev = module->prev;
  CUmodule handle = module->handle;
  pthread_mutex_unlock(&context->lock);
  if (handle) nbc__cu.cuModuleUnload(handle);
  free_functions(module);
  free(module);
}

nbc_status_t nbc_module_get_global(nbc_module_t *module, const char *name, nbc_devptr_t *pptr,
                                   size_t *psize) {
  if (!module || !name)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_module_get_global: NULL argument");
  if (!module->handle)
    return nbc__set_error(NBC_INVALID_ARGUMENT,
                          "nbc_module_get_global: the module was unloaded by a context reset");
  CUdeviceptr ptr = 0;
  size_t size = 0;
  CUresult res = nbc__cu.cuModuleGetGlobal(&ptr, &size, module->handle, name);
  if (res != NBC__CUDA_SUCCESS)
    return nbc__driver_failf("cuModuleGetGlobal", res, " (variable '%s')", name);
  if (pptr) *pptr = ptr;
  if (psize) *psize = size;
  return NBC_OK;
}

nbc_status_t nbc_module_get_function(nbc_module_t *module, const char *name,
                                     nbc_function_t **pfunction) {
  if (!module || !name || !pfunction)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_module_get_function: NULL argument");
  *pfunction = NULL;
  if (!module->handle)
    return nbc__set_error(NBC_INVALID_ARGUMENT,
                          "nbc_module_get_function: the module was unloaded by a context reset");
  size_t len = strlen(name);
  nbc_function_t *f = malloc(sizeof *f + len + 1);
  if (!f) return nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  CUresult res = nbc__cu.cuModuleGetFunction(&f->handle, module->handle, name);
  if (res != NBC__CUDA_SUCCESS) {
    free(f);
    return nbc__driver_failf("cuModuleGetFunction", res, " (kernel '%s')", name);
  }
  memcpy(f->name, name, len + 1);
  f->module = module;
  pthread_mutex_lock(&module->context->lock);
  f->next = module->functions;
  module->functions = f;
  pthread_mutex_unlock(&module->context->lock);
  *pfunction = f;
  return NBC_OK;
}
