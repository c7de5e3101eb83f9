/* cuda_names.c — the kernel language's names in the cuda module, in one table.
 *
 * A kernel reaches the kernel language through the module (`cuda.grid(1)`,
 * `cuda.atomic.add(...)`, `cuda.threadIdx.x`) or through a name bound to one of its members
 * (`from nbcuda import grid, atomic`, `add = cuda.atomic.add` at module level). Three
 * readers need the same list of what exists:
 *  - infer_expr.c types `cuda.<a>` and `<namespace>.<a>` attributes from it (a namespace becomes
 *    a MODULE type "cuda.atomic", a function a FUNCTION type "cuda.atomic.add", a value its
 *    int32 register);
 *  - resolve.c binds an imported or assigned member to NBC_GLOBAL_CUDA_NAME only when it is
 *    listed, so `from nbcuda import jit` stays an ordinary (unusable) global;
 *  - the Python module makes its host-side placeholders (nbcuda.grid, nbcuda.atomic.add)
 *    from nbc_kernel_names(), so the host names and what kernels accept cannot drift apart.
 * Members follow their namespace, written in full ("atomic.add"). Each row also says how
 * infer_call.c types a call of the name (NBC__KERNEL_CALL_*: the intrinsic path, atomics,
 * cache-hinted loads and stores, arrays, grid, syncthreads), so a new name is added in this
 * one place; the public entries and the call kinds are two arrays generated from the one
 * list, because nbc_kernel_names() hands out the public entries as a plain array. The
 * dtypes the cuda module also exports (cuda.float32) are types, not kernel-language names,
 * and are left to the type table.
 */
#include <string.h>

#include "compiler/compiler.h"
#include "compiler/bf16_funcs.h"
#include "compiler/fp16_funcs.h"
#include "compiler/libdevice_funcs.h"

#define KERNEL_NAMES(X)                                                                        \
  /* thread and grid geometry */                                                               \
  X("grid", FUNCTION, GRID)                                                                    \
  X("gridsize", FUNCTION, GRID)                                                                \
  X("threadIdx", NAMESPACE, NONE)                                                              \
  X("threadIdx.x", VALUE, NONE)                                                                \
  X("threadIdx.y", VALUE, NONE)                                                                \
  X("threadIdx.z", VALUE, NONE)                                                                \
  X("blockIdx", NAMESPACE, NONE)                                                               \
  X("blockIdx.x", VALUE, NONE)                                                                 \
  X("blockIdx.y", VALUE, NONE)                                                                 \
  X("blockIdx.z", VALUE, NONE)                                                                 \
  X("blockDim", NAMESPACE, NONE)                                                               \
  X("blockDim.x", VALUE, NONE)                                                                 \
  X("blockDim.y", VALUE, NONE)                                                                 \
  X("blockDim.z", VALUE, NONE)                                                                 \
  X("gridDim", NAMESPACE, NONE)                                                                \
  X("gridDim.x", VALUE, NONE)                                                                  \
  X("gridDim.y", VALUE, NONE)                                                                  \
  X("gridDim.z", VALUE, NONE)                                                                  \
  X("laneid", VALUE, NONE)                                                                     \
  X("warpsize", VALUE, NONE)                                                                   \
  /* barriers and fences */                                                                    \
  X("syncthreads", FUNCTION, SYNCTHREADS)                                                      \
  X("syncthreads_count", FUNCTION, INTRINSIC)                                                  \
  X("syncthreads_and", FUNCTION, INTRINSIC)                                                    \
  X("syncthreads_or", FUNCTION, INTRINSIC)                                                     \
  X("syncwarp", FUNCTION, INTRINSIC)                                                           \
  X("threadfence", FUNCTION, INTRINSIC)                                                        \
  X("threadfence_block", FUNCTION, INTRINSIC)                                                  \
  X("threadfence_system", FUNCTION, INTRINSIC)                                                 \
  /* warp shuffles, votes and matches */                                                       \
  X("shfl_sync", FUNCTION, INTRINSIC)                                                          \
  X("shfl_up_sync", FUNCTION, INTRINSIC)                                                       \
  X("shfl_down_sync", FUNCTION, INTRINSIC)                                                     \
  X("shfl_xor_sync", FUNCTION, INTRINSIC)                                                      \
  X("ballot_sync", FUNCTION, INTRINSIC)                                                        \
  X("all_sync", FUNCTION, INTRINSIC)                                                           \
  X("any_sync", FUNCTION, INTRINSIC)                                                           \
  X("eq_sync", FUNCTION, INTRINSIC)                                                            \
  X("match_any_sync", FUNCTION, INTRINSIC)                                                     \
  X("match_all_sync", FUNCTION, INTRINSIC)                                                     \
  X("activemask", FUNCTION, INTRINSIC)                                                         \
  X("lanemask_lt", FUNCTION, INTRINSIC)                                                        \
  /* bit and arithmetic instructions, timers */                                                \
  X("popc", FUNCTION, INTRINSIC)                                                               \
  X("brev", FUNCTION, INTRINSIC)                                                               \
  X("clz", FUNCTION, INTRINSIC)                                                                \
  X("ffs", FUNCTION, INTRINSIC)                                                                \
  X("fma", FUNCTION, INTRINSIC)                                                                \
  X("cbrt", FUNCTION, INTRINSIC)                                                               \
  X("selp", FUNCTION, INTRINSIC)                                                               \
  X("nanosleep", FUNCTION, INTRINSIC)                                                          \
  /* memory */                                                                                 \
  X("shared", NAMESPACE, NONE)                                                                 \
  X("shared.array", FUNCTION, ARRAY)                                                           \
  X("local", NAMESPACE, NONE)                                                                  \
  X("local.array", FUNCTION, ARRAY)                                                            \
  X("const", NAMESPACE, NONE)                                                                  \
  X("const.array_like", FUNCTION, CONST_ARRAY)                                                 \
  /* numba's carray / farray: an array over the memory a CPointer argument points to */          \
  X("carray", FUNCTION, CARRAY)                                                                \
  X("farray", FUNCTION, CARRAY)                                                                \
  X("atomic", NAMESPACE, NONE)                                                                 \
  X("atomic.add", FUNCTION, ATOMIC)                                                            \
  X("atomic.sub", FUNCTION, ATOMIC)                                                            \
  X("atomic.max", FUNCTION, ATOMIC)                                                            \
  X("atomic.min", FUNCTION, ATOMIC)                                                            \
  X("atomic.nanmax", FUNCTION, ATOMIC)                                                         \
  X("atomic.nanmin", FUNCTION, ATOMIC)                                                         \
  X("atomic.and_", FUNCTION, ATOMIC)                                                           \
  X("atomic.or_", FUNCTION, ATOMIC)                                                            \
  X("atomic.xor", FUNCTION, ATOMIC)                                                            \
  X("atomic.exch", FUNCTION, ATOMIC)                                                           \
  X("atomic.inc", FUNCTION, ATOMIC)                                                            \
  X("atomic.dec", FUNCTION, ATOMIC)                                                            \
  X("atomic.cas", FUNCTION, ATOMIC)                                                            \
  X("atomic.compare_and_swap", FUNCTION, ATOMIC)                                              \
  /* loads and stores with a cache operator (numba's cache_hints.py) */                       \
  X("ldca", FUNCTION, CACHE_HINT)                                                              \
  X("ldcg", FUNCTION, CACHE_HINT)                                                              \
  X("ldcs", FUNCTION, CACHE_HINT)                                                              \
  X("ldlu", FUNCTION, CACHE_HINT)                                                              \
  X("ldcv", FUNCTION, CACHE_HINT)                                                              \
  X("stcg", FUNCTION, CACHE_HINT)                                                              \
  X("stcs", FUNCTION, CACHE_HINT)                                                              \
  X("stwb", FUNCTION, CACHE_HINT)                                                              \
  X("stwt", FUNCTION, CACHE_HINT)                                                              \
  /* cooperative groups: the grid of a cooperative launch (its .sync() in infer_call.c) */     \
  X("cg", NAMESPACE, NONE)                                                                     \
  X("cg.this_grid", FUNCTION, THIS_GRID)                                                       \
  /* CUDA vector types (numba's vector_types.py): <type>x<n> and the C aliases (float4) */ \
  X("int8x1", FUNCTION, VECTOR) \
  X("int8x2", FUNCTION, VECTOR) \
  X("int8x3", FUNCTION, VECTOR) \
  X("int8x4", FUNCTION, VECTOR) \
  X("int16x1", FUNCTION, VECTOR) \
  X("int16x2", FUNCTION, VECTOR) \
  X("int16x3", FUNCTION, VECTOR) \
  X("int16x4", FUNCTION, VECTOR) \
  X("int32x1", FUNCTION, VECTOR) \
  X("int32x2", FUNCTION, VECTOR) \
  X("int32x3", FUNCTION, VECTOR) \
  X("int32x4", FUNCTION, VECTOR) \
  X("int64x1", FUNCTION, VECTOR) \
  X("int64x2", FUNCTION, VECTOR) \
  X("int64x3", FUNCTION, VECTOR) \
  X("int64x4", FUNCTION, VECTOR) \
  X("uint8x1", FUNCTION, VECTOR) \
  X("uint8x2", FUNCTION, VECTOR) \
  X("uint8x3", FUNCTION, VECTOR) \
  X("uint8x4", FUNCTION, VECTOR) \
  X("uint16x1", FUNCTION, VECTOR) \
  X("uint16x2", FUNCTION, VECTOR) \
  X("uint16x3", FUNCTION, VECTOR) \
  X("uint16x4", FUNCTION, VECTOR) \
  X("uint32x1", FUNCTION, VECTOR) \
  X("uint32x2", FUNCTION, VECTOR) \
  X("uint32x3", FUNCTION, VECTOR) \
  X("uint32x4", FUNCTION, VECTOR) \
  X("uint64x1", FUNCTION, VECTOR) \
  X("uint64x2", FUNCTION, VECTOR) \
  X("uint64x3", FUNCTION, VECTOR) \
  X("uint64x4", FUNCTION, VECTOR) \
  X("float32x1", FUNCTION, VECTOR) \
  X("float32x2", FUNCTION, VECTOR) \
  X("float32x3", FUNCTION, VECTOR) \
  X("float32x4", FUNCTION, VECTOR) \
  X("float64x1", FUNCTION, VECTOR) \
  X("float64x2", FUNCTION, VECTOR) \
  X("float64x3", FUNCTION, VECTOR) \
  X("float64x4", FUNCTION, VECTOR) \
  X("char1", FUNCTION, VECTOR) \
  X("char2", FUNCTION, VECTOR) \
  X("char3", FUNCTION, VECTOR) \
  X("char4", FUNCTION, VECTOR) \
  X("short1", FUNCTION, VECTOR) \
  X("short2", FUNCTION, VECTOR) \
  X("short3", FUNCTION, VECTOR) \
  X("short4", FUNCTION, VECTOR) \
  X("int1", FUNCTION, VECTOR) \
  X("int2", FUNCTION, VECTOR) \
  X("int3", FUNCTION, VECTOR) \
  X("int4", FUNCTION, VECTOR) \
  X("long1", FUNCTION, VECTOR) \
  X("long2", FUNCTION, VECTOR) \
  X("long3", FUNCTION, VECTOR) \
  X("long4", FUNCTION, VECTOR) \
  X("longlong1", FUNCTION, VECTOR) \
  X("longlong2", FUNCTION, VECTOR) \
  X("longlong3", FUNCTION, VECTOR) \
  X("longlong4", FUNCTION, VECTOR) \
  X("uchar1", FUNCTION, VECTOR) \
  X("uchar2", FUNCTION, VECTOR) \
  X("uchar3", FUNCTION, VECTOR) \
  X("uchar4", FUNCTION, VECTOR) \
  X("ushort1", FUNCTION, VECTOR) \
  X("ushort2", FUNCTION, VECTOR) \
  X("ushort3", FUNCTION, VECTOR) \
  X("ushort4", FUNCTION, VECTOR) \
  X("uint1", FUNCTION, VECTOR) \
  X("uint2", FUNCTION, VECTOR) \
  X("uint3", FUNCTION, VECTOR) \
  X("uint4", FUNCTION, VECTOR) \
  X("ulong1", FUNCTION, VECTOR) \
  X("ulong2", FUNCTION, VECTOR) \
  X("ulong3", FUNCTION, VECTOR) \
  X("ulong4", FUNCTION, VECTOR) \
  X("ulonglong1", FUNCTION, VECTOR) \
  X("ulonglong2", FUNCTION, VECTOR) \
  X("ulonglong3", FUNCTION, VECTOR) \
  X("ulonglong4", FUNCTION, VECTOR) \
  X("float1", FUNCTION, VECTOR) \
  X("float2", FUNCTION, VECTOR) \
  X("float3", FUNCTION, VECTOR) \
  X("float4", FUNCTION, VECTOR) \
  X("double1", FUNCTION, VECTOR) \
  X("double2", FUNCTION, VECTOR) \
  X("double3", FUNCTION, VECTOR) \
  X("double4", FUNCTION, VECTOR)

/* numba.cuda.libdevice: a namespace of libdevice's functions (libdevice_funcs.h, generated
 * from numba-cuda's list), listed after the names above. */
#define LD_PUBLIC_ENTRY_(name, ret, nargs, codes) {"libdevice." #name, NBC_KERNEL_FUNCTION},
#define LD_CALL_ENTRY_(name, ret, nargs, codes) NBC__KERNEL_CALL_LIBDEVICE,

/* numba.cuda.fp16: cuda_fp16.h's scalar functions (fp16_funcs.h, generated from numba-cuda's
 * bindings; fp16.c), after libdevice's. */
#define FP16_PUBLIC_ENTRY_(name, cname, ret, codes) {"fp16." #name, NBC_KERNEL_FUNCTION},
#define FP16_CALL_ENTRY_(name, cname, ret, codes) NBC__KERNEL_CALL_FP16,

/* numba.cuda.bf16: cuda_bf16.h's scalar functions (bf16_funcs.h; fp16.c), after fp16's: each
 * by its exported name, then by cuda_bf16.h's where that differs (numba-cuda's objects carry
 * it). Its type, bf16.bfloat16, is a dtype (infer_expr.c's cuda_attr). */
#define BF16_PUBLIC_ENTRY_(name, cname, ret, codes) {"bf16." #name, NBC_KERNEL_FUNCTION},
#define BF16_CNAME_ENTRY_(cname) {"bf16." #cname, NBC_KERNEL_FUNCTION},
#define BF16_CALL_ENTRY_(name, cname, ret, codes) NBC__KERNEL_CALL_BF16,
#define BF16_CNAME_CALL_ENTRY_(cname) NBC__KERNEL_CALL_BF16,

#define PUBLIC_ENTRY_(name, kind, call) {name, NBC_KERNEL_##kind},
static const nbc_kernel_name_t names[] = {KERNEL_NAMES(PUBLIC_ENTRY_){"libdevice",
                                                                      NBC_KERNEL_NAMESPACE},
                                          LIBDEVICE_FUNCS(LD_PUBLIC_ENTRY_){
                                              "fp16", NBC_KERNEL_NAMESPACE},
                                          FP16_FUNCS(FP16_PUBLIC_ENTRY_){
                                              "bf16", NBC_KERNEL_NAMESPACE},
                                          BF16_FUNCS(BF16_PUBLIC_ENTRY_)
                                              BF16_CNAMES(BF16_CNAME_ENTRY_)};
#undef PUBLIC_ENTRY_

/* calls[i] is how infer_call.c types a call of names[i]. */
#define CALL_ENTRY_(name, kind, call) NBC__KERNEL_CALL_##call,
static const nbc__kernel_call calls[] = {KERNEL_NAMES(CALL_ENTRY_) NBC__KERNEL_CALL_NONE,
                                         LIBDEVICE_FUNCS(LD_CALL_ENTRY_) NBC__KERNEL_CALL_NONE,
                                         FP16_FUNCS(FP16_CALL_ENTRY_) NBC__KERNEL_CALL_NONE,
                                         BF16_FUNCS(BF16_CALL_ENTRY_)
                                             BF16_CNAMES(BF16_CNAME_CALL_ENTRY_)};
#undef CALL_ENTRY_

typedef struct {
  const char *name;
  nbc__type_kind ret;
  const char *codes;
} libdevice_func;

#define LD_KIND_F32 NBC__T_FLOAT32
#define LD_KIND_F64 NBC__T_FLOAT64
#define LD_KIND_I16 NBC__T_INT16
#define LD_KIND_I32 NBC__T_INT32
#define LD_KIND_I64 NBC__T_INT64
#define LD_KIND_VOID NBC__T_NONE
#define LD_FUNC_ENTRY_(name, ret, nargs, codes) {#name, LD_KIND_##ret, codes},
static const libdevice_func libdevice_funcs[] = {LIBDEVICE_FUNCS(LD_FUNC_ENTRY_)};
#undef LD_FUNC_ENTRY_

bool nbc__libdevice_find(const char *name, const nbc__type **pret, const char **pcodes) {
  for (size_t i = 0; name && i < sizeof libdevice_funcs / sizeof libdevice_funcs[0]; i++)
    if (strcmp(libdevice_funcs[i].name, name) == 0) {
      *pret = nbc__type_scalar(libdevice_funcs[i].ret);
      *pcodes = libdevice_funcs[i].codes;
      return true;
    }
  return false;
}

const nbc__type *nbc__libdevice_type(char letter) {
  switch (letter) {
  case 'f': return nbc__type_scalar(NBC__T_FLOAT32);
  case 'd': return nbc__type_scalar(NBC__T_FLOAT64);
  case 'h': return nbc__type_scalar(NBC__T_INT16);
  case 'i': return nbc__type_scalar(NBC__T_INT32);
  default: return nbc__type_scalar(NBC__T_INT64);
  }
}

bool nbc__vector_type_find(const char *name, const char **pbase, int *pcount) {
  static const char *const bases[] = {"int8",   "int16",  "int32",  "int64",   "uint8",
                                      "uint16", "uint32", "uint64", "float32", "float64"};
  /* numba's C aliases (numpy's C type sizes on x86-64 Linux) */
  static const char *const aliases[][2] = {
      {"char", "int8"},      {"short", "int16"},  {"int", "int32"},     {"long", "int64"},
      {"longlong", "int64"}, {"uchar", "uint8"},  {"ushort", "uint16"}, {"uint", "uint32"},
      {"ulong", "uint64"},   {"ulonglong", "uint64"}, {"float", "float32"}, {"double", "float64"},
  };
  size_t len = name ? strlen(name) : 0;
  if (len < 2 || name[len - 1] < '1' || name[len - 1] > '4') return false;
  int count = name[len - 1] - '0';
  for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++)
    if (strlen(bases[i]) == len - 2 && strncmp(name, bases[i], len - 2) == 0 &&
        name[len - 2] == 'x') {
      *pbase = bases[i];
      *pcount = count;
      return true;
    }
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (strlen(aliases[i][0]) == len - 1 && strncmp(name, aliases[i][0], len - 1) == 0) {
      *pbase = aliases[i][1];
      *pcount = count;
      return true;
    }
  return false;
}

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

nbc__kernel_call nbc__cuda_name_call(const nbc_kernel_name_t *entry) {
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (entry == &names[i]) return calls[i];
  return NBC__KERNEL_CALL_NONE;
}
