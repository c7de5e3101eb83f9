/* occupancy.c — what a loaded kernel uses and how many of its blocks fit on the device:
 * cuFuncGetAttribute (registers, static shared, constant and local memory, the largest block)
 * and cuOccupancyMaxActiveBlocksPerMultiprocessor, behind numba's _Kernel.regs_per_thread,
 * shared_mem_per_block, ... and max_cooperative_grid_blocks; cuFuncSetAttribute for the two
 * attributes a kernel may change (its dynamic shared memory limit, its shared memory
 * carveout: numba's jit(shared_memory_carveout=...)).
 *
 * Both are thin: nbcuda's attribute enum is mapped to the driver's numbers explicitly (so the
 * public header needs no cuda.h and its order is its own), and the calls run with the
 * function's own context current, pushed for the moment when another one is, so the answer is
 * about the device the code was loaded on whichever context the caller has. A function whose
 * module a context reset unloaded is refused the way nbc_launch refuses it: its CUfunction
 * died with the context, and the real driver may crash on it.
 */
#include "host/host.h"

/* CU_FUNC_ATTRIBUTE_* of cuda.h, indexed by nbc_function_attr_t. */
static const int driver_attr[] = {
    [NBC_FUNCTION_ATTR_MAX_THREADS_PER_BLOCK] = 0,
    [NBC_FUNCTION_ATTR_SHARED_SIZE_BYTES] = 1,
    [NBC_FUNCTION_ATTR_CONST_SIZE_BYTES] = 2,
    [NBC_FUNCTION_ATTR_LOCAL_SIZE_BYTES] = 3,
    [NBC_FUNCTION_ATTR_NUM_REGS] = 4,
    [NBC_FUNCTION_ATTR_PTX_VERSION] = 5,
    [NBC_FUNCTION_ATTR_BINARY_VERSION] = 6,
    [NBC_FUNCTION_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES] = 8,
    [NBC_FUNCTION_ATTR_PREFERRED_SHARED_MEMORY_CARVEOUT] = 9,
};
#define NATTRS ((int)(sizeof driver_attr / sizeof driver_attr[0]))

/* NULL arguments and a function whose module is gone; NBC_OK when the call may go ahead. */
static nbc_status_t check(const char *api, const char *call, const nbc_function_t *function,
                          const void *out) {
  if (!function || !out)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "%s: NULL function or output", api);
  if (!function->module->handle)
    return nbc__driver_failf(call, NBC__CUDA_ERROR_CONTEXT_IS_DESTROYED,
                             " (kernel '%s': its module was unloaded by a context reset)",
                             function->name);
  return NBC_OK;
}

nbc_status_t nbc_function_attribute(nbc_function_t *function, nbc_function_attr_t attr,
                                    int *pvalue) {
  nbc_status_t st = check("nbc_function_attribute", "cuFuncGetAttribute", function, pvalue);
  if (st != NBC_OK) return st;
  if ((int)attr < 0 || (int)attr >= NATTRS)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_function_attribute: unknown attribute %d",
                          (int)attr);
  int pushed;
  st = nbc__context_enter(function->module->context, &pushed);
  if (st != NBC_OK) return st;
  CUresult res = nbc__cu.cuFuncGetAttribute(pvalue, driver_attr[attr], function->handle);
  nbc__context_leave(pushed);
  if (res != NBC__CUDA_SUCCESS)
    return nbc__driver_failf("cuFuncGetAttribute", res, " (kernel '%s', attribute %d)",
                             function->name, driver_attr[attr]);
  return NBC_OK;
}

nbc_status_t nbc_function_set_attribute(nbc_function_t *function, nbc_function_attr_t attr,
                                        int value) {
  int unused = 0;
  nbc_status_t st = check("nbc_function_set_attribute", "cuFuncSetAttribute", function, &unused);
  if (st != NBC_OK) return st;
  if (attr != NBC_FUNCTION_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES &&
      attr != NBC_FUNCTION_ATTR_PREFERRED_SHARED_MEMORY_CARVEOUT)
    return nbc__set_error(NBC_INVALID_ARGUMENT,
                          "nbc_function_set_attribute: attribute %d cannot be set (only the "
                          "dynamic shared memory limit and the shared memory carveout can)",
                          (int)attr);
  int pushed;
  st = nbc__context_enter(function->module->context, &pushed);
  if (st != NBC_OK) return st;
  CUresult res = nbc__cu.cuFuncSetAttribute(function->handle, driver_attr[attr], value);
  nbc__context_leave(pushed);
  if (res != NBC__CUDA_SUCCESS)
    return nbc__driver_failf("cuFuncSetAttribute", res, " (kernel '%s', attribute %d, value %d)",
                             function->name, driver_attr[attr], value);
  return NBC_OK;
}

nbc_status_t nbc_occupancy_max_active_blocks(nbc_function_t *function, int block_size,
                                             size_t dynamic_smem, int *pblocks) {
  nbc_status_t st = check("nbc_occupancy_max_active_blocks",
                          "cuOccupancyMaxActiveBlocksPerMultiprocessor", function, pblocks);
  if (st != NBC_OK) return st;
  if (block_size <= 0)
    return nbc__set_error(NBC_INVALID_ARGUMENT,
                          "nbc_occupancy_max_active_blocks: the block size must be positive, "
                          "got %d",
                          block_size);
  int pushed;
  st = nbc__context_enter(function->module->context, &pushed);
  if (st != NBC_OK) return st;
  CUresult res = nbc__cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(pblocks, function->handle,
                                                                     block_size, dynamic_smem);
  nbc__context_leave(pushed);
  if (res != NBC__CUDA_SUCCESS)
    return nbc__driver_failf("cuOccupancyMaxActiveBlocksPerMultiprocessor", res,
                             " (kernel '%s', %d threads per block, %zu bytes of dynamic "
                             "shared memory)",
                             function->name, block_size, dynamic_smem);
  return NBC_OK;
}

nbc_status_t nbc_occupancy_max_cooperative_blocks(nbc_function_t *function, int block_size,
                                                  size_t dynamic_smem, int *pblocks) {
  int per_sm = 0, sms = 0;
  nbc_status_t st =
      nbc_occupancy_max_active_blocks(function, block_size, dynamic_smem, &per_sm);
  if (st != NBC_OK) return st;
  st = nbc_device_attribute(function->module->context->device,
                            NBC__CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &sms);
  if (st != NBC_OK) return st;
  *pblocks = per_sm * sms;
  return NBC_OK;
}
