/* debug_exception.c — the host's half of numba's debug=True kernel exceptions.
 *
 * A kernel compiled with debug (lower_raise.c) has i32 variables <name>__errcode__,
 * __tid{x,y,z}__ and __ctaid{x,y,z}__: the first thread that raises swaps its raise site's
 * code into __errcode__ and writes its position. As numba's _Kernel.launch does, the host
 * zeroes __errcode__ before each launch (queued on the launch's stream) and reads it back
 * after (on the same stream, then waits for it), and the position only when it is not 0.
 */
#include <stdio.h>

#include "host/host.h"

static const char *const debug_variables[7] = NBC_DEBUG_EXCEPTION_VARIABLES;

static nbc_status_t variable(nbc_function_t *function, const char *what, nbc_devptr_t *pptr) {
  char name[1024];
  int n = snprintf(name, sizeof name, "%s__%s__", function->name, what);
  if (n < 0 || (size_t)n >= sizeof name)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "kernel name too long for its debug variables");
  size_t size = 0;
  nbc_status_t st = nbc_module_get_global(function->module, name, pptr, &size);
  if (st == NBC_OK && size != sizeof(int))
    return nbc__set_error(NBC_INVALID_ARGUMENT, "%s is %zu bytes, not an i32", name, size);
  return st;
}

nbc_status_t nbc_debug_exception_clear(nbc_function_t *function, nbc_stream_t *stream) {
  if (!function)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_debug_exception_clear: NULL function");
  nbc_devptr_t code = 0;
  nbc_status_t st = variable(function, debug_variables[0], &code);
  return st == NBC_OK ? nbc_memset_d8_async(code, 0, sizeof(int), stream) : st;
}

nbc_status_t nbc_debug_exception_read(nbc_function_t *function, nbc_stream_t *stream,
                                      int *pcode, int tid_zyx[3], int ctaid_zyx[3]) {
  if (!function || !pcode || !tid_zyx || !ctaid_zyx)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_debug_exception_read: NULL argument");
  int *out[6] = {&tid_zyx[0], &tid_zyx[1], &tid_zyx[2],
                 &ctaid_zyx[0], &ctaid_zyx[1], &ctaid_zyx[2]};
  *pcode = 0;
  for (int i = 0; i < 6; i++)
    *out[i] = 0;
  nbc_devptr_t code = 0;
  nbc_status_t st = variable(function, debug_variables[0], &code);
  if (st == NBC_OK) st = nbc_memcpy_dtoh_async(pcode, code, sizeof(int), stream);
  if (st == NBC_OK) st = nbc_stream_synchronize(stream);
  for (int i = 0; st == NBC_OK && *pcode && i < 6; i++) {
    nbc_devptr_t at = 0;
    st = variable(function, debug_variables[i + 1], &at);
    if (st == NBC_OK) st = nbc_memcpy_dtoh_async(out[i], at, sizeof(int), stream);
  }
  if (st == NBC_OK && *pcode) st = nbc_stream_synchronize(stream);
  return st;
}
