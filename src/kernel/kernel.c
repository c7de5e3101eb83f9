/* kernel.c — nbc_kernel_t: a Python kernel compiled with the Numba ABI, loaded once per
 * context, launched (numba-cuda's dispatcher keeps one loaded function per device above the
 * driver the same way: codegen.py's get_cufunc).
 *
 * The kernel keeps a table of the contexts its code was loaded in (context, lifetime,
 * module, function). A launch asks for the current context and its lifetime and finds its
 * entry: no lock, no allocation. A context with no entry, or one reset since (its lifetime
 * moved on), loads the code again: linked with the kernel's link images, libcudadevrt.a and
 * the fp16 wrappers where needed (link.c), or made by the caller's load function; the
 * carveout is set on the function; stale entries are dropped then. Destroying the kernel
 * unloads every module it loaded. A kernel is used by one thread at a time.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/kernel.h"

static char *copy_string(const char *s) {
  size_t n = strlen(s) + 1;
  char *c = malloc(n);
  if (c) memcpy(c, s, n);
  return c;
}

/* The options' link images, copied into k (data and all). */
static nbc_status_t copy_links(nbc_kernel_t *k, const nbc_image_t *links, int nlinks) {
  if (nlinks <= 0) return NBC_OK;
  if (!links)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_kernel_create: links is NULL");
  k->links = calloc((size_t)nlinks, sizeof *k->links);
  if (!k->links) return nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  for (int i = 0; i < nlinks; i++) {
    if (!links[i].data || !links[i].size)
      return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_kernel_create: link image %d is empty",
                            i);
    void *data = malloc(links[i].size);
    if (!data) return nbc__set_error(NBC_NO_MEMORY, "out of host memory");
    memcpy(data, links[i].data, links[i].size);
    k->links[i] = (nbc_image_t){data, links[i].size, links[i].kind, NULL};
    k->nlinks = i + 1; /* freed with the kernel from here on */
    if (links[i].name && !(k->links[i].name = copy_string(links[i].name)))
      return nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  }
  return NBC_OK;
}

nbc_status_t nbc_kernel_create_from_result(nbc_compile_result_t *result, const char *signature,
                                           const nbc_kernel_options_t *options,
                                           nbc_kernel_t **pkernel) {
  if (pkernel) *pkernel = NULL;
  if (!result || !signature || !pkernel)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_kernel_create_from_result: NULL argument");
  nbc_kernel_t *k = calloc(1, sizeof *k);
  if (!k) return nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  nbc_status_t st = nbc_signature_parse_args(signature, NULL, 0, 1, &k->sig);
  const char *ret = st == NBC_OK ? nbc_signature_return_type(k->sig) : NULL;
  if (st == NBC_OK && ret && strcmp(ret, "none") != 0 && strcmp(ret, "void") != 0)
    st = nbc__set_error(NBC_INVALID_ARGUMENT, "a kernel returns void, not %s (signature %s)",
                        ret, signature);
  if (st == NBC_OK && !(k->name = copy_string(nbc_compile_result_symbol(result))))
    st = nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  if (st == NBC_OK && options) {
    k->load = options->module;
    k->set_carveout = options->set_carveout;
    k->carveout = options->carveout;
    k->load_fn = options->load;
    k->load_data = options->load_data;
    k->load.nvrtc_search_paths = NULL;
    st = copy_links(k, options->links, options->nlinks);
    const char *paths = options->module.nvrtc_search_paths;
    if (st == NBC_OK && paths && !(k->load.nvrtc_search_paths = copy_string(paths)))
      st = nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  }
  if (st != NBC_OK) {
    nbc_kernel_destroy(k); /* without the result, which stays the caller's */
    return st;
  }
  k->result = result;
  k->load.cudadevrt |= nbc_compile_result_cooperative(result);
  k->load.fp16 |= nbc_compile_result_uses_fp16(result);
  *pkernel = k;
  return NBC_OK;
}

nbc_status_t nbc_kernel_create(const nbc_source_t *source, const char *name,
                               const char *signature, const nbc_compile_options_t *compile,
                               const nbc_resolver_t *resolver,
                               const nbc_kernel_options_t *options, nbc_kernel_t **pkernel) {
  if (pkernel) *pkernel = NULL;
  if (!source || !name || !signature || !pkernel)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_kernel_create: NULL argument");
  nbc_compile_options_t opts;
  if (compile)
    opts = *compile;
  else
    nbc_compile_options_init(&opts);
  opts.device = 0;
  opts.abi = NBC_ABI_NUMBA;
  nbc_compile_result_t *result = NULL;
  nbc_status_t st = nbc_compile(source, name, signature, &opts, resolver, &result);
  if (st != NBC_OK) return st;
  st = nbc_kernel_create_from_result(result, signature, options, pkernel);
  if (st != NBC_OK) nbc_compile_result_destroy(result);
  if (st == NBC_OK) { /* messages name the Python function, not its mangled symbol */
    char *copy = copy_string(name);
    if (copy) {
      free((*pkernel)->name);
      (*pkernel)->name = copy;
    }
  }
  return st;
}

void nbc_kernel_destroy(nbc_kernel_t *kernel) {
  if (!kernel) return;
  /* a module of a context reset since is an empty wrapper: destroying it only frees it */
  for (int i = 0; i < kernel->nloaded; i++) nbc_module_destroy(kernel->loaded[i].module);
  free(kernel->loaded);
  for (int i = 0; i < kernel->nlinks; i++) {
    free((void *)kernel->links[i].data);
    free((void *)kernel->links[i].name);
  }
  free((void *)kernel->load.nvrtc_search_paths);
  free(kernel->links);
  free(kernel->name);
  nbc_signature_destroy(kernel->sig);
  nbc_compile_result_destroy(kernel->result);
  free(kernel);
}

const nbc_compile_result_t *nbc_kernel_result(const nbc_kernel_t *kernel) {
  return kernel ? kernel->result : NULL;
}

const nbc_signature_t *nbc_kernel_signature(const nbc_kernel_t *kernel) {
  return kernel ? kernel->sig : NULL;
}

unsigned long nbc_kernel_load_count(const nbc_kernel_t *kernel) {
  return kernel ? kernel->loads : 0;
}

/* The module of k's code in the current context: the caller's load function's, or the code
 * loaded (linked first when there are link images or libraries to link). */
static nbc_status_t make_module(nbc_kernel_t *k, nbc_module_t **pmodule) {
  if (k->load_fn) return k->load_fn(k->load_data, k, pmodule);
  size_t size = 0;
  const char *code = nbc_compile_result_code(k->result, &size);
  if (!k->nlinks) return nbc_module_load_data_ex(code, size, NBC_IMAGE_AUTO, &k->load, pmodule);
  nbc_image_t *images = malloc(sizeof *images * (size_t)(k->nlinks + 1));
  if (!images) return nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  images[0] = (nbc_image_t){code, size, NBC_IMAGE_AUTO, NULL};
  memcpy(images + 1, k->links, sizeof *images * (size_t)k->nlinks);
  nbc_status_t st = nbc_module_link_ex(images, k->nlinks + 1, &k->load, pmodule);
  free(images);
  return st;
}

/* Drops the entries of contexts reset since, destroying their (empty) modules. */
static void drop_stale(nbc_kernel_t *k) {
  int kept = 0;
  for (int i = 0; i < k->nloaded; i++) {
    if (nbc_context_lifetime(k->loaded[i].context) == k->loaded[i].lifetime)
      k->loaded[kept++] = k->loaded[i];
    else
      nbc_module_destroy(k->loaded[i].module);
  }
  k->nloaded = kept;
}

/* Room for one more entry in k's table; NBC_NO_MEMORY when there is none. */
static nbc_status_t make_room(nbc_kernel_t *k) {
  if (k->nloaded < k->capacity) return NBC_OK;
  int capacity = k->capacity ? 2 * k->capacity : 4;
  nbc__kernel_loaded *grown = realloc(k->loaded, sizeof *grown * (size_t)capacity);
  if (!grown) return nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  k->loaded = grown;
  k->capacity = capacity;
  return NBC_OK;
}

/* Loads k's code into context (current, of that lifetime) and adds its entry. The table is
 * changed only once the module is made: a load function may let another thread use the
 * kernel meanwhile (the Python binding's releases the GIL while it links). */
static nbc_status_t load_here(nbc_kernel_t *k, nbc_context_t *context, unsigned lifetime,
                              nbc_function_t **pfunction) {
  nbc_module_t *module = NULL;
  nbc_function_t *fn = NULL;
  nbc_status_t st = make_module(k, &module);
  if (st == NBC_OK)
    st = nbc_module_get_function(module, nbc_compile_result_symbol(k->result), &fn);
  if (st == NBC_OK && k->set_carveout)
    st = nbc_function_set_attribute(fn, NBC_FUNCTION_ATTR_PREFERRED_SHARED_MEMORY_CARVEOUT,
                                    k->carveout);
  if (st == NBC_OK) {
    drop_stale(k);
    st = make_room(k);
  }
  if (st != NBC_OK) {
    nbc_module_destroy(module);
    return st;
  }
  k->loaded[k->nloaded++] = (nbc__kernel_loaded){context, lifetime, module, fn};
  k->loads++;
  *pfunction = fn;
  return NBC_OK;
}

nbc_status_t nbc_kernel_function(nbc_kernel_t *kernel, nbc_function_t **pfunction) {
  if (!kernel || !pfunction)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_kernel_function: NULL argument");
  nbc_context_t *context = NULL;
  nbc_status_t st = nbc_current_context(-1, &context);
  if (st != NBC_OK) return st;
  unsigned lifetime = nbc_context_lifetime(context);
  for (int i = 0; i < kernel->nloaded; i++)
    if (kernel->loaded[i].context == context && kernel->loaded[i].lifetime == lifetime) {
      *pfunction = kernel->loaded[i].function;
      return NBC_OK;
    }
  return load_here(kernel, context, lifetime, pfunction);
}

nbc_status_t nbc_kernel_launch(nbc_kernel_t *kernel, const unsigned grid[3],
                               const unsigned block[3], unsigned shared_bytes,
                               nbc_stream_t *stream, const nbc_arg_t *args, int nargs) {
  if (!kernel || !grid || !block)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_kernel_launch: NULL argument");
  size_t size = nbc_signature_params_size(kernel->sig);
  _Alignas(16) char stackbuf[1024];
  char *params = size <= sizeof stackbuf ? stackbuf : malloc(size);
  if (!params) return nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  nbc_function_t *fn = NULL;
  nbc_status_t st = nbc_kernel_pack(kernel, args, nargs, params);
  if (st == NBC_OK) st = nbc_kernel_function(kernel, &fn);
  if (st == NBC_OK)
    st = nbc_launch_packed_ex(fn, grid, block, shared_bytes, stream, params, size,
                              kernel->load.cudadevrt ? NBC_LAUNCH_COOPERATIVE : 0);
  if (params != stackbuf) free(params);
  return st;
}
