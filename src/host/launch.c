/* launch.c — kernel launches: cuLaunchKernel with an array of parameter pointers, or with the
 * parameters packed in one buffer (CU_LAUNCH_PARAM_BUFFER_POINTER / _SIZE).
 *
 * A launch is the hottest host call after queries, so it is one driver call: the function's
 * module fixes the context, the driver validates dimensions and parameters, and nbcuda only
 * formats a message (with the launch configuration and the kernel name) when it fails. A
 * launch refused for asking more dynamic shared memory than the kernel's limit (48 KiB until
 * raised) raises the limit (cuFuncSetAttribute) and is tried once more, so a kernel may use
 * all the shared memory the device lets a block opt in to without asking for it first.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "host/host.h"

void *nbc_function_handle(const nbc_function_t *function) {
  return function ? (void *)function->handle : NULL;
}

/* A launch the driver refused for asking more dynamic shared memory than the function's
 * limit (48 KiB less its static shared memory until raised): 1 when the limit was raised to
 * `shared` (the launch is tried again), 0 when it already allowed that much or the device
 * allows no more (the launch fails as it did). */
static __attribute__((cold, noinline)) int raised_shared_limit(nbc_function_t *f,
                                                                 unsigned shared, CUresult res) {
  int limit = 0;
  if (res != NBC__CUDA_ERROR_INVALID_VALUE || shared == 0 || shared > INT_MAX) return 0;
  if (nbc_function_attribute(f, NBC_FUNCTION_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES, &limit) !=
          NBC_OK ||
      (unsigned)limit >= shared)
    return 0;
  return nbc_function_set_attribute(f, NBC_FUNCTION_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                    (int)shared) == NBC_OK;
}

/* The most dynamic shared memory a block of f may have on its device: the device's opt-in
 * shared memory per block (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 227 KiB on
 * an H100/H200) less f's static shared memory; *poptin and *pstatic say the two parts. -1 when
 * the driver cannot say. The function's own limit (48 KiB until raised) is no bound here:
 * raised_shared_limit raises it as far as this. */
static int dynamic_shared_most(nbc_function_t *f, int *poptin, int *pstatic) {
  if (nbc_function_attribute(f, NBC_FUNCTION_ATTR_SHARED_SIZE_BYTES, pstatic) != NBC_OK ||
      nbc_device_attribute(f->module->context->device,
                           NBC__CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                           poptin) != NBC_OK)
    return -1;
  return *poptin - *pstatic;
}

static __attribute__((cold, noinline)) nbc_status_t launch_failed(
    nbc_function_t *f, const char *call, const char *what, const unsigned grid[3],
    const unsigned block[3], unsigned shared, CUresult res) {
  int optin = 0, fixed = 0, most = shared ? dynamic_shared_most(f, &optin, &fixed) : -1;
  char beyond[320] = "";
  if (most >= 0 && shared > (unsigned)most)
    snprintf(beyond, sizeof beyond,
             "; more than the %d bytes of dynamic shared memory a block of this kernel may "
             "have on this device (its opt-in maximum of %d bytes per block less the kernel's "
             "%d bytes of static shared memory): ask for at most %d",
             most, optin, fixed, most);
  return nbc__driver_failf(call, res,
                           " (%skernel '%s', grid (%u, %u, %u), block (%u, %u, %u), %u bytes of "
                           "shared memory%s)",
                           what, f->name, grid[0], grid[1], grid[2], block[0], block[1],
                           block[2], shared, beyond);
}

/* A function whose module a context reset unloaded, or a stream that reset destroyed. */
static int gone(const nbc_function_t *f, const nbc_stream_t *stream) {
  return !f->module->handle || NBC__STREAM_GONE(stream);
}

static __attribute__((cold, noinline)) nbc_status_t launch_refused(const nbc_function_t *f,
                                                                    const nbc_stream_t *stream) {
  if (NBC__STREAM_GONE(stream)) return nbc__outlived_fail("cuLaunchKernel", "stream");
  return nbc__driver_failf("cuLaunchKernel", NBC__CUDA_ERROR_CONTEXT_IS_DESTROYED,
                           " (kernel '%s': its module was unloaded by a context reset)",
                           f->name);
}

/* cuLaunchKernel with the parameters as pointers (args) or packed (extra); once more after
 * raising the kernel's dynamic shared memory limit when that refused it. */
static inline __attribute__((always_inline)) nbc_status_t launch_kernel(
    nbc_function_t *function, const unsigned grid[3], const unsigned block[3],
    unsigned shared_bytes, nbc_stream_t *stream, void **args, void **extra) {
  CUresult res;
  nbc__count_launch(function->module->context);
  for (int again = 0;; again = 1) {
    res = nbc__cu.cuLaunchKernel(function->handle, grid[0], grid[1], grid[2], block[0],
                                 block[1], block[2], shared_bytes,
                                 stream ? stream->handle : NULL, args, extra);
    if (__builtin_expect(res == NBC__CUDA_SUCCESS, 1)) return NBC_OK;
    if (again || !raised_shared_limit(function, shared_bytes, res)) break;
  }
  return launch_failed(function, "cuLaunchKernel", "", grid, block, shared_bytes, res);
}

nbc_status_t nbc_launch(nbc_function_t *function, const unsigned grid[3],
                        const unsigned block[3], unsigned shared_bytes, nbc_stream_t *stream,
                        void **args) {
  if (__builtin_expect(!function || !grid || !block, 0))
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_launch: NULL function or dimensions");
  if (__builtin_expect(gone(function, stream), 0)) return launch_refused(function, stream);
  return launch_kernel(function, grid, block, shared_bytes, stream, args, NULL);
}

/* A cooperative launch (grid synchronisation): cuLaunchKernelEx with the cooperative
 * attribute, the parameters packed as for nbc_launch_packed. */
static nbc_status_t launch_cooperative(nbc_function_t *function, const unsigned grid[3],
                                       const unsigned block[3], unsigned shared_bytes,
                                       nbc_stream_t *stream, void **extra) {
  CUlaunchAttribute attr;
  memset(&attr, 0, sizeof attr);
  attr.id = NBC__CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
  attr.value.cooperative = 1;
  CUlaunchConfig config = {grid[0],      grid[1],
                           grid[2],      block[0],
                           block[1],     block[2],
                           shared_bytes, stream ? stream->handle : NULL,
                           &attr,        1};
  nbc__count_launch(function->module->context);
  CUresult res = nbc__cu.cuLaunchKernelEx(&config, function->handle, NULL, extra);
  if (res != NBC__CUDA_SUCCESS && raised_shared_limit(function, shared_bytes, res))
    res = nbc__cu.cuLaunchKernelEx(&config, function->handle, NULL, extra);
  if (res == NBC__CUDA_SUCCESS) return NBC_OK;
  return launch_failed(function, "cuLaunchKernelEx", "cooperative launch of ", grid, block,
                       shared_bytes, res);
}

nbc_status_t nbc_launch_packed_ex(nbc_function_t *function, const unsigned grid[3],
                                  const unsigned block[3], unsigned shared_bytes,
                                  nbc_stream_t *stream, const void *params, size_t params_size,
                                  unsigned flags) {
  if (__builtin_expect(flags == 0, 1))
    return nbc_launch_packed(function, grid, block, shared_bytes, stream, params, params_size);
  if (flags & ~(unsigned)NBC_LAUNCH_COOPERATIVE)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_launch_packed_ex: unknown flags 0x%x",
                          flags);
  if (!function || !grid || !block)
    return nbc__set_error(NBC_INVALID_ARGUMENT,
                          "nbc_launch_packed_ex: NULL function or dimensions");
  if (params_size && !params)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_launch_packed_ex: params is NULL");
  size_t size = params_size;
  void *extra[] = {NBC__CU_LAUNCH_PARAM_BUFFER_POINTER, (void *)params,
                   NBC__CU_LAUNCH_PARAM_BUFFER_SIZE, &size, NBC__CU_LAUNCH_PARAM_END};
  if (gone(function, stream)) return launch_refused(function, stream);
  return launch_cooperative(function, grid, block, shared_bytes, stream,
                            params_size ? extra : NULL);
}

nbc_status_t nbc_launch_packed(nbc_function_t *function, const unsigned grid[3],
                               const unsigned block[3], unsigned shared_bytes,
                               nbc_stream_t *stream, const void *params, size_t params_size) {
  if (__builtin_expect(!function || !grid || !block, 0))
    return nbc__set_error(NBC_INVALID_ARGUMENT,
                          "nbc_launch_packed: NULL function or dimensions");
  if (params_size && !params)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_launch_packed: params is NULL");
  size_t size = params_size;
  void *extra[] = {NBC__CU_LAUNCH_PARAM_BUFFER_POINTER, (void *)params,
                   NBC__CU_LAUNCH_PARAM_BUFFER_SIZE, &size, NBC__CU_LAUNCH_PARAM_END};
  if (__builtin_expect(gone(function, stream), 0)) return launch_refused(function, stream);
  return launch_kernel(function, grid, block, shared_bytes, stream, NULL,
                       params_size ? extra : NULL);
}
