/* transpose.c — nbc_transpose2d: a 2-D array's transpose written C-contiguous into new
 * memory, on the device (numba's DeviceNDArray.transpose()/.T run a transpose kernel too).
 *
 * The kernel is PTX written here, loaded into a context the first time that context
 * transposes (the driver JIT-compiles it for the device) and kept with the context; a
 * context reset unloads it and the next transpose loads it again. One thread moves one
 * element: thread (x, y) of the grid reads src[i, j] at src + i*s0 + j*s1 and writes it to
 * dst[j, i] at dst + (j*rows + i)*itemsize, i along x so that a warp writes consecutive
 * addresses; j loops over the grid's y extent (grids are at most 65535 high).
 *
 * An element moves as itemsize/w words of w bytes, w the widest of 8, 4, 2, 1 bytes that
 * divides the item size, both base addresses and both strides: views such as
 * d[1:].view(np.int64) over int32 memory are only 4-byte aligned, and a wider access would
 * fault. One kernel entry per word width.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host/host.h"

#define TRANSPOSE_ENTRY(W, REG, MEM)                                                         \
  ".visible .entry nbc_transpose_w" #W "(.param .u64 p_dst, .param .u64 p_src,\n"         \
  "    .param .u64 p_rows, .param .u64 p_cols, .param .u64 p_s0, .param .u64 p_s1,\n"     \
  "    .param .u64 p_itemsize)\n"                                                          \
  "{\n"                                                                                    \
  "  .reg .pred %p<4>;\n"                                                                  \
  "  .reg .b32 %r<8>;\n"                                                                   \
  "  .reg .b64 %rd<20>;\n"                                                                 \
  "  .reg ." REG " %v;\n"                                                                 \
  "  ld.param.u64 %rd1, [p_dst];\n"                                                        \
  "  ld.param.u64 %rd2, [p_src];\n"                                                        \
  "  ld.param.u64 %rd3, [p_rows];\n"                                                       \
  "  ld.param.u64 %rd4, [p_cols];\n"                                                       \
  "  ld.param.u64 %rd5, [p_s0];\n"                                                         \
  "  ld.param.u64 %rd6, [p_s1];\n"                                                         \
  "  ld.param.u64 %rd16, [p_itemsize];\n"                                                  \
  "  cvta.to.global.u64 %rd1, %rd1;\n"                                                     \
  "  cvta.to.global.u64 %rd2, %rd2;\n"                                                     \
  "  mov.u32 %r1, %ctaid.x;\n"                                                             \
  "  mov.u32 %r2, %ntid.x;\n"                                                              \
  "  mov.u32 %r3, %tid.x;\n"                                                               \
  "  cvt.u64.u32 %rd8, %r3;\n"                                                             \
  "  mad.wide.u32 %rd7, %r1, %r2, %rd8;\n" /* i */                                         \
  "  setp.ge.u64 %p1, %rd7, %rd3;\n"                                                       \
  "  @%p1 bra DONE;\n"                                                                     \
  "  mov.u32 %r4, %ctaid.y;\n"                                                             \
  "  mov.u32 %r5, %ntid.y;\n"                                                              \
  "  mov.u32 %r6, %tid.y;\n"                                                               \
  "  mov.u32 %r7, %nctaid.y;\n"                                                            \
  "  cvt.u64.u32 %rd9, %r6;\n"                                                             \
  "  mad.wide.u32 %rd10, %r4, %r5, %rd9;\n" /* j */                                        \
  "  mul.wide.u32 %rd11, %r7, %r5;\n"       /* j's step */                                 \
  "  mad.lo.u64 %rd12, %rd7, %rd5, %rd2;\n" /* the source row i */                         \
  "ROW:\n"                                                                                 \
  "  setp.ge.u64 %p2, %rd10, %rd4;\n"                                                      \
  "  @%p2 bra DONE;\n"                                                                     \
  "  mad.lo.u64 %rd13, %rd10, %rd6, %rd12;\n" /* &src[i, j] */                             \
  "  mad.lo.u64 %rd14, %rd10, %rd3, %rd7;\n"                                               \
  "  mad.lo.u64 %rd15, %rd14, %rd16, %rd1;\n" /* &dst[j, i] */                             \
  "  mov.u64 %rd17, 0;\n"                                                                  \
  "WORD:\n"                                                                                \
  "  add.u64 %rd18, %rd13, %rd17;\n"                                                       \
  "  add.u64 %rd19, %rd15, %rd17;\n"                                                       \
  "  ld.global." MEM " %v, [%rd18];\n"                                                    \
  "  st.global." MEM " [%rd19], %v;\n"                                                    \
  "  add.u64 %rd17, %rd17, " #W ";\n"                                                      \
  "  setp.lt.u64 %p3, %rd17, %rd16;\n"                                                     \
  "  @%p3 bra WORD;\n"                                                                     \
  "  add.u64 %rd10, %rd10, %rd11;\n"                                                       \
  "  bra.uni ROW;\n"                                                                       \
  "DONE:\n"                                                                                \
  "  ret;\n"                                                                               \
  "}\n"

/* Each entry is a literal of its own (ISO C caps one literal at 4095 characters); the module
 * text is their concatenation, made once. */
static const char ptx_header[] = ".version 6.0\n.target sm_50\n.address_size 64\n\n";
static const char *const ptx_entries[] = {
    TRANSPOSE_ENTRY(1, "u16", "u8"), TRANSPOSE_ENTRY(2, "u16", "u16"),
    TRANSPOSE_ENTRY(4, "u32", "u32"), TRANSPOSE_ENTRY(8, "u64", "u64")};
static char *transpose_ptx;
static pthread_once_t ptx_once = PTHREAD_ONCE_INIT;

static void make_ptx(void) {
  size_t n = sizeof ptx_header;
  for (size_t k = 0; k < sizeof ptx_entries / sizeof *ptx_entries; k++)
    n += strlen(ptx_entries[k]);
  char *text = malloc(n);
  if (!text) return;
  strcpy(text, ptx_header);
  for (size_t k = 0; k < sizeof ptx_entries / sizeof *ptx_entries; k++)
    strcat(text, ptx_entries[k]);
  transpose_ptx = text;
}

const char *nbc__transpose_ptx(void) {
  pthread_once(&ptx_once, make_ptx);
  return transpose_ptx;
}

/* The widest word (8, 4, 2 or 1 bytes) dividing every value. */
static unsigned word_width(const uint64_t *values, int n) {
  uint64_t all = 0;
  for (int k = 0; k < n; k++) all |= values[k];
  return all % 8 == 0 ? 8 : all % 4 == 0 ? 4 : all % 2 == 0 ? 2 : 1;
}

/* The context's transpose function for word width w, loading the module when the context
 * has none (first use, or unloaded by a reset since). Under the context's lock. */
static nbc_status_t transpose_function(nbc_context_t *context, unsigned w,
                                       nbc_function_t **pfn) {
  static const char *const names[] = {"nbc_transpose_w1", "nbc_transpose_w2",
                                      "nbc_transpose_w4", "nbc_transpose_w8"};
  unsigned slot = w == 1 ? 0 : w == 2 ? 1 : w == 4 ? 2 : 3;
  nbc_status_t st = NBC_OK;
  pthread_mutex_lock(&context->transpose_lock);
  nbc_module_t *m = context->transpose_module;
  if (m && !m->handle) { /* a reset unloaded it */
    nbc_module_destroy(m);
    m = context->transpose_module = NULL;
    for (int k = 0; k < 4; k++) context->transpose_fn[k] = NULL;
  }
  const char *ptx = m ? NULL : nbc__transpose_ptx();
  if (!m && !ptx) st = nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  if (!m && ptx) {
    st = nbc__module_load_image(ptx, strlen(ptx) + 1, NBC_IMAGE_PTX, 0, &m);
    if (st == NBC_OK) context->transpose_module = m;
  }
  if (st == NBC_OK && !context->transpose_fn[slot])
    st = nbc_module_get_function(m, names[slot], &context->transpose_fn[slot]);
  *pfn = context->transpose_fn[slot];
  pthread_mutex_unlock(&context->transpose_lock);
  return st;
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
  nbc_status_t st = nbc__context_ensure(&context);
  if (st != NBC_OK) return st;
  uint64_t parts[5] = {dst, src, (uint64_t)src_stride0, (uint64_t)src_stride1, itemsize};
  unsigned w = word_width(parts, 5);
  nbc_function_t *fn;
  if ((st = transpose_function(context, w, &fn)) != NBC_OK) return st;
  uint64_t s0 = (uint64_t)src_stride0, s1 = (uint64_t)src_stride1, size = itemsize;
  void *args[] = {&dst, &src, &rows, &cols, &s0, &s1, &size};
  unsigned block[3] = {128, 4, 1};
  uint64_t gx = (rows + block[0] - 1) / block[0], gy = (cols + block[1] - 1) / block[1];
  if (gx > 0x7fffffffu)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_transpose2d: %llu rows are too many",
                          (unsigned long long)rows);
  unsigned grid[3] = {(unsigned)gx, gy > 65535 ? 65535u : (unsigned)gy, 1};
  return nbc_launch(fn, grid, block, 0, stream, args);
}
