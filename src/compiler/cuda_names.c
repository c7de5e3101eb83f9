/* cuda_names.c — the kernel language's names in the cuda module, in one table.
 *
 * A kernel reaches the kernel language through the module (`cuda.grid(1)`,
 * `cuda.atomic.add(...)`, `cuda.threadIdx.x`) or through a name bound to one of its members
 * (`from nbcuda import grid, atomic`, `add = cuda.atomic.add` at module level). Three
 * readers need the same list of what exists:
 *  - infer.c types `cuda.<a>` and `<namespace>.<a>` attributes from it (a namespace becomes
 *    a MODULE type "cuda.atomic", a function a FUNCTION type "cuda.atomic.add", a value its
 *    int32 register);
 *  - resolve.c binds an imported or assigned member to NBC_GLOBAL_CUDA_NAME only when it is
 *    listed, so `from nbcuda import jit` stays an ordinary (unusable) global;
 *  - the Python module makes its host-side placeholders (nbcuda.grid, nbcuda.atomic.add)
 *    from nbc_kernel_names(), so the host names and what kernels accept cannot drift apart.
 * Members follow their namespace, written in full ("atomic.add"). The dtypes the cuda
 * module also exports (cuda.float32) are types, not kernel-language names, and are left to
 * the type table.
 */
#include <string.h>

#include "compiler/compiler.h"

#define F NBC_KERNEL_FUNCTION
#define N NBC_KERNEL_NAMESPACE
#define V NBC_KERNEL_VALUE

static const nbc_kernel_name_t names[] = {
    /* thread and grid geometry */
    {"grid", F},
    {"gridsize", F},
    {"threadIdx", N},
    {"threadIdx.x", V},
    {"threadIdx.y", V},
    {"threadIdx.z", V},
    {"blockIdx", N},
    {"blockIdx.x", V},
    {"blockIdx.y", V},
    {"blockIdx.z", V},
    {"blockDim", N},
    {"blockDim.x", V},
    {"blockDim.y", V},
    {"blockDim.z", V},
    {"gridDim", N},
    {"gridDim.x", V},
    {"gridDim.y", V},
    {"gridDim.z", V},
    {"laneid", V},
    {"warpsize", V},
    /* barriers and fences */
    {"syncthreads", F},
    {"syncthreads_count", F},
    {"syncthreads_and", F},
    {"syncthreads_or", F},
    {"syncwarp", F},
    {"threadfence", F},
    {"threadfence_block", F},
    {"threadfence_system", F},
    /* warp shuffles, votes and matches */
    {"shfl_sync", F},
    {"shfl_up_sync", F},
    {"shfl_down_sync", F},
    {"shfl_xor_sync", F},
    {"ballot_sync", F},
    {"all_sync", F},
    {"any_sync", F},
    {"eq_sync", F},
    {"match_any_sync", F},
    {"match_all_sync", F},
    {"activemask", F},
    {"lanemask_lt", F},
    /* bit and arithmetic instructions, timers */
    {"popc", F},
    {"brev", F},
    {"clz", F},
    {"ffs", F},
    {"fma", F},
    {"cbrt", F},
    {"selp", F},
    {"nanosleep", F},
    /* memory */
    {"shared", N},
    {"shared.array", F},
    {"local", N},
    {"local.array", F},
    {"atomic", N},
    {"atomic.add", F},
    {"atomic.sub", F},
    {"atomic.max", F},
    {"atomic.min", F},
    {"atomic.nanmax", F},
    {"atomic.nanmin", F},
    {"atomic.and_", F},
    {"atomic.or_", F},
    {"atomic.xor", F},
    {"atomic.exch", F},
    {"atomic.inc", F},
    {"atomic.dec", F},
    {"atomic.cas", F},
    {"atomic.compare_and_swap", F},
};

#undef F
#undef N
#undef V

const nbc_kernel_name_t *nbc_kernel_names(size_t *pcount) {
  if (pcount) *pcount = sizeof names / sizeof names[0];
  return names;
}

const nbc_kernel_name_t *nbc__cuda_name_find(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(names[i].name, name) == 0) return &names[i];
  return NULL;
}

const nbc_kernel_name_t *nbc__cuda_member_find(const char *namespace_, const char *member) {
  if (!namespace_ || !member) return NULL;
  size_t len = strlen(namespace_);
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strncmp(names[i].name, namespace_, len) == 0 && names[i].name[len] == '.' &&
        strcmp(names[i].name + len + 1, member) == 0)
      return &names[i];
  return NULL;
}
