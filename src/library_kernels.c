/* library_kernels.c — library kernels that C calls run: nbc_transpose2d, a 2-D array's
 * transpose written C-contiguous into new memory on the device (numba's
 * DeviceNDArray.transpose()/.T run a transpose kernel too).
 *
 * The kernel is src/library/transpose.py (numba-cuda's shared-memory tiles), compiled by
 * nbcuda's compiler like any user kernel, through the public API only: each word width's
 * kernel is compiled to PTX the first time a transpose needs it (once per process), loaded
 * into a context the first time that context needs it and kept for that context's lifetime;
 * after a reset (nbc_context_lifetime changes) the next transpose loads it again. This file
 * sits above both the host layer and the compiler, so that the host never compiles.
 *
 * An element moves as itemsize/w words of w bytes, w the widest of 8, 4, 2, 1 bytes that
 * divides the item size, both base addresses and both strides: views such as
 * d[1:].view(np.int64) over int32 memory are only 4-byte aligned, and a wider access would
 * fault. The kernel sees the source as a (rows, cols, words) array of w-byte words with the
 * source's strides, and the destination as a C-contiguous (cols, rows, words) array.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "host/host.h" /* nbc__set_error */

enum { NWIDTHS = 4, TILE = 32 /* transpose.py's TILE: the block is TILE x TILE threads */ };

static const char *const kernel_names[NWIDTHS] = {"transpose_w1", "transpose_w2",
                                                  "transpose_w4", "transpose_w8"};
static const char *const signatures[NWIDTHS] = {
    "void(uint8[:, :, :], uint8[:, :, ::1])", "void(uint16[:, :, :], uint16[:, :, ::1])",
    "void(uint32[:, :, :], uint32[:, :, ::1])", "void(uint64[:, :, :], uint64[:, :, ::1])"};

/* One context's loaded kernels, for the lifetime recorded. */
typedef struct loaded {
  struct loaded *next;
  nbc_context_t *context;
  unsigned lifetime;
  nbc_module_t *module[NWIDTHS];
  nbc_function_t *function[NWIDTHS];
} loaded;

/* Everything under lock: each width's compiled code and parsed signature (made once per
 * process) and the list of contexts that loaded kernels. Contexts are primary contexts, which
 * live as long as the process, so the list holds one entry per device at most. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static nbc_compile_result_t *compiled[NWIDTHS];
static nbc_signature_t *parsed[NWIDTHS];
static loaded *contexts;

/* Compiles width slot's kernel of transpose.py, unless done. Under lock. */
static nbc_status_t compile_width(int slot) {
  if (compiled[slot]) return NBC_OK;
  size_t size;
  const char *text = nbc_library_kernel_source("transpose", &size);
  if (!text) return nbc__set_error(NBC_INTERNAL, "nbc_transpose2d: transpose.py is not embedded");
  nbc_source_t source = {text, size, "<nbcuda library transpose.py>", 1, 0};
  nbc_compile_options_t options;
  nbc_compile_options_init(&options);
  options.device = 0;
  options.abi = NBC_ABI_NUMBA;
  options.max_source_size = size; /* the user's NBCUDA_MAX_SOURCE_SIZE is for their code */
  nbc_status_t st = parsed[slot] ? NBC_OK : nbc_signature_parse(signatures[slot], &parsed[slot]);
  if (st == NBC_OK)
    st = nbc_compile(&source, kernel_names[slot], signatures[slot], &options, NULL,
                     &compiled[slot]);
  return st;
}

/* The context's entry, made empty on first use and emptied when the context was reset since
 * its kernels were loaded (a reset unloaded them). Under lock. */
static loaded *entry_of(nbc_context_t *context) {
  loaded *e = contexts;
  while (e && e->context != context) e = e->next;
  if (!e) {
    if (!(e = calloc(1, sizeof *e))) return NULL;
    e->context = context;
    e->lifetime = nbc_context_lifetime(context);
    e->next = contexts;
    contexts = e;
  }
  if (e->lifetime != nbc_context_lifetime(context)) {
    for (int k = 0; k < NWIDTHS; k++) {
      nbc_module_destroy(e->module[k]);
      e->module[k] = NULL;
      e->function[k] = NULL;
    }
    e->lifetime = nbc_context_lifetime(context);
  }
  return e;
}

/* The current context's kernel for width slot, compiled and loaded when needed. */
static nbc_status_t transpose_function(nbc_context_t *context, int slot, nbc_function_t **pfn) {
  pthread_mutex_lock(&lock);
  nbc_status_t st = compile_width(slot);
  loaded *e = st == NBC_OK ? entry_of(context) : NULL;
  if (st == NBC_OK && !e) st = nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  if (st == NBC_OK && !e->function[slot]) {
    size_t size;
    const char *code = nbc_compile_result_code(compiled[slot], &size);
    st = nbc_module_load_data(code, size, NBC_IMAGE_PTX, &e->module[slot]);
    if (st == NBC_OK)
      st = nbc_module_get_function(e->module[slot], nbc_compile_result_symbol(compiled[slot]),
                                   &e->function[slot]);
    if (st != NBC_OK) {
      nbc_module_destroy(e->module[slot]);
      e->module[slot] = NULL;
    }
  }
  *pfn = st == NBC_OK ? e->function[slot] : NULL;
  pthread_mutex_unlock(&lock);
  return st;
}

/* The slot of the widest word (8, 4, 2 or 1 bytes) dividing every value. */
static int word_slot(const uint64_t *values, int n) {
  uint64_t all = 0;
  for (int k = 0; k < n; k++) all |= values[k];
  return all % 8 == 0 ? 3 : all % 4 == 0 ? 2 : all % 2 == 0 ? 1 : 0;
}

nbc_status_t nbc_transpose2d(nbc_devptr_t dst, nbc_devptr_t src, uint64_t rows, uint64_t cols,
                             int64_t src_stride0, int64_t src_stride1, size_t itemsize,
                             nbc_stream_t *stream) {
  if (itemsize == 0 || src_stride0 < 0 || src_stride1 < 0)
    return nbc__set_error(NBC_INVALID_ARGUMENT,
                          "nbc_transpose2d: zero item size or negative stride");
  if (rows == 0 || cols == 0) return NBC_OK; /* empty arrays may have no memory at all */
  if (!dst || !src) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_transpose2d: NULL memory");
  nbc_context_t *context;
  nbc_status_t st = nbc_current_context(-1, &context);
  if (st != NBC_OK) return st;
  uint64_t parts[5] = {dst, src, (uint64_t)src_stride0, (uint64_t)src_stride1, itemsize};
  int slot = word_slot(parts, 5);
  int64_t w = (int64_t)1 << slot, words = (int64_t)itemsize / w;
  nbc_function_t *fn;
  if ((st = transpose_function(context, slot, &fn)) != NBC_OK) return st;
  int64_t in_shape[3] = {(int64_t)rows, (int64_t)cols, words};
  int64_t in_strides[3] = {src_stride0, src_stride1, w};
  int64_t out_shape[3] = {(int64_t)cols, (int64_t)rows, words};
  _Alignas(8) unsigned char params[256];
  const nbc_signature_t *sig = parsed[slot]; /* set before any function was handed out */
  size_t size = nbc_signature_params_size(sig);
  if (size > sizeof params)
    return nbc__set_error(NBC_INTERNAL, "nbc_transpose2d: %zu bytes of parameters", size);
  if ((st = nbc_signature_pack_array(sig, 0, params, src, 'u', (int)w, 3, in_shape,
                                     in_strides)) != NBC_OK ||
      (st = nbc_signature_pack_array(sig, 1, params, dst, 'u', (int)w, 3, out_shape, NULL)) !=
          NBC_OK)
    return st;
  /* x steps over the tiles of columns, y over those of rows (grids are at most 65535 high);
   * the kernel loops over the tiles the grid does not cover */
  uint64_t gx = (cols + TILE - 1) / TILE, gy = (rows + TILE - 1) / TILE;
  unsigned grid[3] = {gx > 0x7fffffffu ? 0x7fffffffu : (unsigned)gx,
                      gy > 65535 ? 65535u : (unsigned)gy, 1};
  unsigned block[3] = {TILE, TILE, 1};
  return nbc_launch_packed(fn, grid, block, 0, stream, params, size);
}
