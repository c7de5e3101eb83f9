/* lib_cuda.c — the cuda namespace of the kernel language: one table of its names, and the
 * typing and lowering of its intrinsics side by side.
 *
 * A kernel reaches the kernel language through the module (`cuda.grid(1)`,
 * `cuda.atomic.add(...)`, `cuda.threadIdx.x`) or through a name bound to one of its members
 * (`from nbcuda import grid, atomic`, `add = cuda.atomic.add` at module level). Every reader
 * takes what exists from the table KERNEL_NAMES below:
 *  - infer_expr.c types `cuda.<a>` and `<namespace>.<a>` attributes from it (a namespace
 *    becomes a MODULE type "cuda.atomic", a function a FUNCTION type "cuda.atomic.add", a
 *    value its int32 register);
 *  - infer_call_cuda.c types a call by the row's call kind (NBC__KERNEL_CALL_*: atomics,
 *    cache-hinted loads and stores, arrays, grid, syncthreads...); an intrinsic's row (I)
 *    names its arity and its typing and lowering functions, defined in this file, which
 *    nbc__lib_cuda_type and nbc__lib_cuda_lower find through the same lookup;
 *  - resolve.c binds an imported or assigned member to NBC_GLOBAL_CUDA_NAME only when it is
 *    listed, so `from nbcuda import jit` stays an ordinary (unusable) global;
 *  - the Python module makes its host-side placeholders (nbcuda.grid, nbcuda.atomic.add)
 *    from nbc_kernel_names(), so the host names and what kernels accept cannot drift apart.
 * Members follow their namespace, written in full ("atomic.add"). The public entries, the
 * call kinds and the intrinsics are arrays generated from the one list, because
 * nbc_kernel_names() hands out the public entries as a plain array. Adding an intrinsic is an
 * I row and its type_ and lower_ functions here (docs/contributing.md shows one). The dtypes
 * the cuda module also exports (cuda.float32) are types, not kernel-language names, and are
 * left to the type table.
 */
#include <string.h>

#include "compiler/bf16_funcs.h"
#include "compiler/fp16_funcs.h"
#include "compiler/infer.h"
#include "compiler/libdevice_funcs.h"
#include "compiler/lower.h"

/* ================================================================= the intrinsics ====
 * Each intrinsic of the table (the I rows of KERNEL_NAMES) has a typing function, which receives the
 * call with its arity already checked against the row (and keyword arguments refused unless
 * the row takes them) and records an NBC__B_CUDA_INTRINSIC call whose arguments convert as
 * numba-cuda's cudadecl.py signature says, and a lowering function, which receives the
 * converted arguments and emits what numba-cuda's cudaimpl.py / intrinsics.py emit. */

typedef const nbc__type *type_fn(infer *I, nbc__node *n, const char *fname,
                                 const nbc__type **types, int nargs);
typedef nbc__lval lower_fn(nbc__lowerer *L, nbc__node *n, const nbc__call *call);

/* ------------------------------------------------------------ typing helpers ---- */

/* One concrete signature of numba-cuda's cudadecl templates: ret(args[0..nargs-1]). */
typedef struct icase {
  nbc__type_kind ret, args[3];
} icase;

#define IC1(r, a)                                                                              \
  {                                                                                            \
    NBC__T_##r, {                                                                              \
      NBC__T_##a, NBC__T_VOID, NBC__T_VOID                                                     \
    }                                                                                          \
  }
static const icase popc_cases[] = {IC1(INT8, INT8),     IC1(INT16, INT16),  IC1(INT32, INT32),
                                   IC1(INT64, INT64),   IC1(UINT8, UINT8),  IC1(UINT16, UINT16),
                                   IC1(UINT32, UINT32), IC1(UINT64, UINT64)};
static const icase ffs_cases[] = {IC1(UINT32, INT8),   IC1(UINT32, INT16), IC1(UINT32, INT32),
                                  IC1(UINT32, INT64),  IC1(UINT32, UINT8), IC1(UINT32, UINT16),
                                  IC1(UINT32, UINT32), IC1(UINT32, UINT64)};
static const icase brev_cases[] = {IC1(UINT32, UINT32), IC1(UINT64, UINT64)};
static const icase cbrt_cases[] = {IC1(FLOAT32, FLOAT32), IC1(FLOAT64, FLOAT64)};
/* match_any_sync / match_all_sync (mask, value): the value's case picks .b32 or .b64;
 * nanosleep(ns) takes a uint32 (numba-cuda's Cuda_match_*_sync and Cuda_nanosleep). The
 * return types (int32, Tuple(int32, bool), none) are set by the caller. */
static const icase match_cases[] = {
    {NBC__T_INT32, {NBC__T_INT32, NBC__T_INT32, NBC__T_VOID}},
    {NBC__T_INT32, {NBC__T_INT32, NBC__T_INT64, NBC__T_VOID}},
    {NBC__T_INT32, {NBC__T_INT32, NBC__T_FLOAT32, NBC__T_VOID}},
    {NBC__T_INT32, {NBC__T_INT32, NBC__T_FLOAT64, NBC__T_VOID}}};
static const icase nanosleep_cases[] = {IC1(NONE, UINT32)};
static const icase fma_cases[] = {
    {NBC__T_FLOAT32, {NBC__T_FLOAT32, NBC__T_FLOAT32, NBC__T_FLOAT32}},
    {NBC__T_FLOAT64, {NBC__T_FLOAT64, NBC__T_FLOAT64, NBC__T_FLOAT64}}};
#undef IC1

/* numba's overload resolution over concrete cases (types.c's rating, for up to three
 * arguments): every argument must convert, unsafe conversions allowed; the first case with
 * the fewest (unsafe, safe, promote) conversions wins. Returns its index or -1. */
static int icase_resolve(const icase *cases, int ncases, const nbc__type **types, int nargs) {
  int best = -1, best_rate[3] = {0, 0, 0};
  if (nargs > 3) return -1; /* icase holds three arguments */
  for (int k = 0; k < nargs; k++)
    if (!nbc__type_is_number(types[k])) return -1;
  for (int i = 0; i < ncases; i++) {
    const nbc__type *formals[3] = {NULL, NULL, NULL};
    for (int k = 0; k < nargs; k++)
      formals[k] = T(cases[i].args[k]);
    int rate[3];
    if (!nbc__type_rate(types, formals, nargs, true, rate)) continue;
    if (best < 0 || nbc__type_rate_less(rate, best_rate)) {
      best = i;
      memcpy(best_rate, rate, sizeof rate);
    }
  }
  return best;
}

/* Records the call with every argument converted to argtypes[i] (NULL: kept as it is). */
static const nbc__type *intrinsic_call(infer *I, nbc__node *n, const char *fname, int nargs,
                                       const nbc__type **argtypes, const nbc__type *ret) {
  return nbc__infer_call_record(I, n, NBC__B_CUDA_INTRINSIC, fname, nargs, argtypes, ret);
}

/* Mask and lane arguments: numba truncates any integer to 32 bits. */
static bool int_arg(infer *I, nbc__node *n, const char *fname, const nbc__type *t,
                    const char *what) {
  if (nbc__type_is_int(t)) return true;
  TYPING(I, n, "%s() %s must be an integer, not %s", fname, what, nbc__infer_tname(I, t));
  return false;
}

/* The case of cases[0..ncases) the arguments resolve to, conv[] its parameter types; -1
 * reported as numba's "Invalid use" when there is none. */
static int resolve_case(infer *I, nbc__node *n, const char *fname, const nbc__type **types,
                        int nargs, const icase *cases, int ncases, const nbc__type **conv) {
  int i = icase_resolve(cases, ncases, types, nargs);
  if (i < 0) {
    nbc__infer_call_arg_list_error(I, n, fname, types, nargs);
    return -1;
  }
  for (int k = 0; k < nargs; k++)
    conv[k] = T(cases[i].args[k]);
  return i;
}

#define NCASES(cases) ((int)(sizeof cases / sizeof *cases))

/* An intrinsic typed by its cases alone: the resolved case's conversions and result. */
static const nbc__type *typed_by_cases(infer *I, nbc__node *n, const char *fname,
                                       const nbc__type **types, int nargs, const icase *cases,
                                       int ncases) {
  const nbc__type *conv[3] = {NULL, NULL, NULL};
  int i = resolve_case(I, n, fname, types, nargs, cases, ncases, conv);
  return i < 0 ? NULL : intrinsic_call(I, n, fname, nargs, conv, T(cases[i].ret));
}

#define BY_CASES(cases) typed_by_cases(I, n, fname, types, nargs, cases, NCASES(cases))

/* ---------------------------------------------------------- lowering helpers ---- */

static nbc__node *arg_node(nbc__node *n, int i) {
  nbc__node *a = n->list.items[i];
  return a->kind == NBC__N_KEYWORD ? a->a : a;
}

static nbc__lval arg(nbc__lowerer *L, nbc__node *n, int i) {
  return nbc__lower_expr(L, arg_node(n, i));
}

static nbc__lval none_value(void) {
  return (nbc__lval){T(NBC__T_NONE), "null"};
}

static void call_void(nbc__lowerer *L, const char *name, const char *argtys, const char *args) {
  nbc__lower_call_fn(L, "void", name, argtys, args);
}

static const char *shfl_i32(nbc__lowerer *L, const char *mask, int mode, const char *a,
                            const char *b, int c) {
  const char *r =
      nbc__lower_call_fn(L, "{i32, i1}", "llvm.nvvm.shfl.sync.i32", "i32, i32, i32, i32, i32",
                         nbc__arena_printf(L->arena, "i32 %s, i32 %d, i32 %s, i32 %s, i32 %d",
                                           mask, mode, a, b, c));
  const char *x = tmp(L);
  EMIT("%s = extractvalue {i32, i1} %s, 0", x, r);
  return x;
}

static const char *inline_asm_u32(nbc__lowerer *L, const char *text) {
  const char *x = tmp(L);
  EMIT("%s = call i32 asm sideeffect \"%s\", \"=r\"()", x, text);
  return x;
}

/* ------------------------------------------------------------- barriers, fences ---- */

/* syncwarp() or syncwarp(mask): numba's (none) and (none, int32) cases; mask= is accepted too
 * (numba's stub names the parameter so). */
static const nbc__type *type_syncwarp(infer *I, nbc__node *n, const char *fname,
                                      const nbc__type **types, int nargs) {
  nbc__node **args = n->list.items;
  const nbc__type *conv[3] = {T(NBC__T_INT32), NULL, NULL};
  if (nargs == 1 && args[0]->kind == NBC__N_KEYWORD && strcmp(args[0]->str, "mask") != 0)
    return TYPING(I, args[0], "%s() got an unexpected keyword argument '%s'", fname,
                  args[0]->str),
           NULL;
  if (nargs == 1 &&
      (!nbc__type_is_number(types[0]) || !nbc__type_can_convert(types[0], T(NBC__T_INT32))))
    return nbc__infer_call_arg_list_error(I, n, fname, types, nargs);
  return intrinsic_call(I, n, fname, nargs, conv, T(NBC__T_NONE));
}

/* @llvm.nvvm.bar.warp.sync(mask), all lanes (-1) without one. */
static nbc__lval lower_syncwarp(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  (void)call;
  const char *mask = n->list.count ? arg(L, n, 0).v : "-1";
  call_void(L, "llvm.nvvm.bar.warp.sync", "i32", nbc__arena_printf(L->arena, "i32 %s", mask));
  return none_value();
}

/* syncthreads_count / _and / _or(predicate): numba-cuda takes an integer predicate (not a
 * boolean), truncated to int32, and returns an int32. */
static const nbc__type *type_barrier(infer *I, nbc__node *n, const char *fname,
                                     const nbc__type **types, int nargs) {
  const nbc__type *conv[3] = {T(NBC__T_INT32), NULL, NULL};
  if (!nbc__type_is_int(types[0]))
    return nbc__infer_call_arg_list_error(I, n, fname, types, nargs);
  return intrinsic_call(I, n, fname, 1, conv, T(NBC__T_INT32));
}

/* @llvm.nvvm.barrier0.{popc,and,or}(predicate). */
static nbc__lval lower_barrier(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  const char *name = call->name + 5;
  const char *kind = strcmp(name, "syncthreads_count") == 0 ? "popc" : name + 12;
  nbc__lval p = arg(L, n, 0);
  return (nbc__lval){
      T(NBC__T_INT32),
      nbc__lower_call_fn(L, "i32", nbc__arena_printf(L->arena, "llvm.nvvm.barrier0.%s", kind),
                         "i32", nbc__arena_printf(L->arena, "i32 %s", p.v))};
}

/* threadfence, threadfence_block, threadfence_system: no arguments, none. */
static const nbc__type *type_fence(infer *I, nbc__node *n, const char *fname,
                                   const nbc__type **types, int nargs) {
  (void)types, (void)nargs;
  const nbc__type *conv[3] = {NULL, NULL, NULL};
  return intrinsic_call(I, n, fname, 0, conv, T(NBC__T_NONE));
}

/* @llvm.nvvm.membar.{gl,cta,sys}. */
static nbc__lval lower_fence(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  (void)n;
  const char *name = call->name + 5;
  const char *scope = strcmp(name, "threadfence_block") == 0    ? "cta"
                      : strcmp(name, "threadfence_system") == 0 ? "sys"
                                                                : "gl";
  call_void(L, nbc__arena_printf(L->arena, "llvm.nvvm.membar.%s", scope), "", "");
  return none_value();
}

/* ------------------------------------------------ warp shuffles, votes, matches ---- */

/* shfl_sync(mask, value, src_lane) and shfl_up/down/xor_sync: a 32- or 64-bit int or float
 * value, shuffled as it is; mask and lane truncated to int32. */
static const nbc__type *type_shfl(infer *I, nbc__node *n, const char *fname,
                                  const nbc__type **types, int nargs) {
  (void)nargs;
  const char *name = fname + 5;
  nbc__node **args = n->list.items;
  const nbc__type *conv[3] = {NULL, NULL, NULL};
  nbc__type_kind k = types[1]->kind;
  if (k != NBC__T_INT32 && k != NBC__T_INT64 && k != NBC__T_FLOAT32 && k != NBC__T_FLOAT64)
    return TYPING(I, args[1], "%s only supports 32- and 64-bit ints and floats, not %s", fname,
                  nbc__infer_tname(I, types[1])),
           NULL;
  if (!int_arg(I, args[0], fname, types[0], "mask") ||
      !int_arg(I, args[2], fname, types[2],
               strcmp(name, "shfl_sync") == 0       ? "src_lane"
               : strcmp(name, "shfl_xor_sync") == 0 ? "lane_mask"
                                                    : "delta"))
    return NULL;
  conv[0] = conv[2] = T(NBC__T_INT32);
  return intrinsic_call(I, n, fname, 3, conv, types[1]);
}

/* @llvm.nvvm.shfl.sync.i32(mask, mode, value, b, c): floats bitcast, 64-bit values shuffled
 * as two halves. */
static nbc__lval lower_shfl(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  const char *name = call->name + 5;
  int mode = strcmp(name, "shfl_sync") == 0        ? 0
             : strcmp(name, "shfl_up_sync") == 0   ? 1
             : strcmp(name, "shfl_down_sync") == 0 ? 2
                                                   : 3;
  int c = mode == 1 ? 0 : 0x1f;
  nbc__lval mask = arg(L, n, 0), v = arg(L, n, 1), b = arg(L, n, 2);
  const nbc__type *t = v.type;
  const char *ty = ltype(L, t);
  int bits = nbc__type_bits(t);
  const char *iv = v.v;
  if (is_float(t)) {
    iv = tmp(L);
    EMIT("%s = bitcast %s %s to i%d", iv, ty, v.v, bits);
  }
  const char *d;
  if (bits == 32) {
    d = shfl_i32(L, mask.v, mode, iv, b.v, c);
  } else {
    const char *lo = tmp(L), *sh = tmp(L), *hi = tmp(L);
    EMIT("%s = trunc i64 %s to i32", lo, iv);
    EMIT("%s = lshr i64 %s, 32", sh, iv);
    EMIT("%s = trunc i64 %s to i32", hi, sh);
    const char *rlo = shfl_i32(L, mask.v, mode, lo, b.v, c);
    const char *rhi = shfl_i32(L, mask.v, mode, hi, b.v, c);
    const char *zlo = tmp(L), *zhi = tmp(L), *shl = tmp(L);
    d = tmp(L);
    EMIT("%s = zext i32 %s to i64", zlo, rlo);
    EMIT("%s = zext i32 %s to i64", zhi, rhi);
    EMIT("%s = shl i64 %s, 32", shl, zhi);
    EMIT("%s = or i64 %s, %s", d, shl, zlo);
  }
  if (is_float(t)) {
    const char *f = tmp(L);
    EMIT("%s = bitcast i%d %s to %s", f, bits, d, ty);
    d = f;
  }
  return (nbc__lval){t, d};
}

/* ballot_sync / all_sync / any_sync / eq_sync(mask, predicate): an integer mask (truncated
 * to int32), an integer or boolean predicate; ballot returns the int32 ballot, the others a
 * boolean. */
static const nbc__type *type_vote(infer *I, nbc__node *n, const char *fname,
                                  const nbc__type **types, int nargs) {
  (void)nargs;
  nbc__node **args = n->list.items;
  const nbc__type *conv[3] = {T(NBC__T_INT32), NULL, NULL};
  if (!nbc__type_is_int(types[0]))
    return TYPING(I, args[0], "Mask type must be an integer. Got %s",
                  nbc__infer_tname(I, types[0])),
           NULL;
  if (!nbc__type_is_int(types[1]) && !is_kind(types[1], NBC__T_BOOL))
    return TYPING(I, args[1], "Predicate must be an integer or boolean. Got %s",
                  nbc__infer_tname(I, types[1])),
           NULL;
  return intrinsic_call(I, n, fname, 2, conv,
                        T(strcmp(fname + 5, "ballot_sync") == 0 ? NBC__T_INT32 : NBC__T_BOOL));
}

/* @llvm.nvvm.vote.sync(mask, mode, predicate != 0): ballot's int32 or the others' i1. */
static nbc__lval lower_vote(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  const char *name = call->name + 5;
  int mode = strcmp(name, "all_sync") == 0   ? 0
             : strcmp(name, "any_sync") == 0 ? 1
             : strcmp(name, "eq_sync") == 0  ? 2
                                             : 3;
  nbc__lval mask = arg(L, n, 0), p = arg(L, n, 1);
  const char *pred = p.v;
  if (!is_bool(p.type)) {
    pred = tmp(L);
    EMIT("%s = icmp ne %s %s, 0", pred, ltype(L, p.type), p.v);
  }
  const char *r = nbc__lower_call_fn(
      L, "{i32, i1}", "llvm.nvvm.vote.sync", "i32, i32, i1",
      nbc__arena_printf(L->arena, "i32 %s, i32 %d, i1 %s", mask.v, mode, pred));
  const char *x = tmp(L);
  if (mode == 3) {
    EMIT("%s = extractvalue {i32, i1} %s, 0", x, r);
    return (nbc__lval){T(NBC__T_INT32), x};
  }
  EMIT("%s = extractvalue {i32, i1} %s, 1", x, r);
  return (nbc__lval){T(NBC__T_BOOL), x};
}

/* match_any_sync / match_all_sync(mask, value): the value's case picks .b32 or .b64;
 * match_any returns the int32 mask, match_all the (mask, pred) tuple. */
static const nbc__type *type_match(infer *I, nbc__node *n, const char *fname,
                                   const nbc__type **types, int nargs) {
  (void)nargs;
  const nbc__type *conv[3] = {NULL, NULL, NULL};
  int i = icase_resolve(match_cases, 4, types, 2);
  if (i < 0) return nbc__infer_call_arg_list_error(I, n, fname, types, nargs);
  conv[0] = T(match_cases[i].args[0]);
  conv[1] = T(match_cases[i].args[1]);
  const nbc__type *ret = T(NBC__T_INT32);
  if (strcmp(fname + 5, "match_all_sync") == 0) {
    const nbc__type *items[2] = {T(NBC__T_INT32), T(NBC__T_BOOL)}; /* (mask, pred) */
    ret = nbc__type_tuple(I->ctx, items, 2);
  }
  return intrinsic_call(I, n, fname, 2, conv, ret);
}

/* match_any_sync / match_all_sync: @llvm.nvvm.match.{any,all}.sync.i{32,64}(mask, value)
 * with float values bitcast; match.all's {i32, i1} is the (mask, pred) tuple. */
static nbc__lval lower_match(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  bool all = strcmp(call->name + 5, "match_all_sync") == 0;
  nbc__lval mask = arg(L, n, 0), v = arg(L, n, 1);
  int bits = nbc__type_bits(v.type);
  const char *iv = v.v;
  if (is_float(v.type)) {
    iv = tmp(L);
    EMIT("%s = bitcast %s %s to i%d", iv, ltype(L, v.type), v.v, bits);
  }
  const char *fn =
      nbc__arena_printf(L->arena, "llvm.nvvm.match.%s.sync.i%d", all ? "all" : "any", bits);
  const char *r = nbc__lower_call_fn(
      L, all ? "{i32, i1}" : "i32", fn, nbc__arena_printf(L->arena, "i32, i%d", bits),
      nbc__arena_printf(L->arena, "i32 %s, i%d %s", mask.v, bits, iv));
  if (!all) return (nbc__lval){T(NBC__T_INT32), r};
  const char *m = tmp(L), *p = tmp(L);
  EMIT("%s = extractvalue {i32, i1} %s, 0", m, r);
  EMIT("%s = extractvalue {i32, i1} %s, 1", p, r);
  nbc__lval items[2] = {{T(NBC__T_INT32), m}, {T(NBC__T_BOOL), p}};
  return nbc__lower_make_tuple(L, call->ret, items);
}

/* activemask() and lanemask_lt(): a uint32 read as inline asm. */
static const nbc__type *type_mask(infer *I, nbc__node *n, const char *fname,
                                  const nbc__type **types, int nargs) {
  (void)types, (void)nargs;
  const nbc__type *conv[3] = {NULL, NULL, NULL};
  return intrinsic_call(I, n, fname, 0, conv, T(NBC__T_UINT32));
}

static nbc__lval lower_activemask(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  (void)n, (void)call;
  return (nbc__lval){T(NBC__T_UINT32), inline_asm_u32(L, "activemask.b32 $0;")};
}

static nbc__lval lower_lanemask_lt(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  (void)n, (void)call;
  return (nbc__lval){T(NBC__T_UINT32), inline_asm_u32(L, "mov.u32 $0, %lanemask_lt;")};
}

/* ------------------------------------------------- bit and arithmetic instructions ---- */

/* popc(x) and clz(x) of any integer, of x's own type. */
static const nbc__type *type_popc(infer *I, nbc__node *n, const char *fname,
                                  const nbc__type **types, int nargs) {
  return BY_CASES(popc_cases);
}

/* llvm.ctpop (popc) or llvm.ctlz with a defined result for zero (clz). */
static nbc__lval count_bits(nbc__lowerer *L, nbc__node *n, bool popc) {
  nbc__lval v = arg(L, n, 0);
  const char *ty = ltype(L, v.type);
  const char *fn = nbc__arena_printf(L->arena, "llvm.%s.%s", popc ? "ctpop" : "ctlz", ty);
  const char *r =
      popc ? nbc__lower_call_fn(L, ty, fn, ty, nbc__arena_printf(L->arena, "%s %s", ty, v.v))
           : nbc__lower_call_fn(L, ty, fn, nbc__arena_printf(L->arena, "%s, i1", ty),
                                nbc__arena_printf(L->arena, "%s %s, i1 false", ty, v.v));
  return (nbc__lval){v.type, r};
}

static nbc__lval lower_popc(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  (void)call;
  return count_bits(L, n, true);
}

static nbc__lval lower_clz(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  (void)call;
  return count_bits(L, n, false);
}

/* brev(x): a uint32 or uint64, reversed. */
static const nbc__type *type_brev(infer *I, nbc__node *n, const char *fname,
                                  const nbc__type **types, int nargs) {
  return BY_CASES(brev_cases);
}

/* libdevice's 32- or 64-bit form of brev (x's type) or ffs (a uint32). */
static nbc__lval libdevice_bits(nbc__lowerer *L, nbc__node *n, bool brev) {
  nbc__lval v = arg(L, n, 0);
  const char *ty = ltype(L, v.type);
  bool wide = nbc__type_bits(v.type) == 64;
  const char *fn =
      brev ? (wide ? "__nv_brevll" : "__nv_brev") : (wide ? "__nv_ffsll" : "__nv_ffs");
  const char *rty = brev ? ty : "i32";
  return (nbc__lval){
      brev ? v.type : T(NBC__T_UINT32),
      nbc__lower_call_fn(L, rty, fn, ty, nbc__arena_printf(L->arena, "%s %s", ty, v.v))};
}

static nbc__lval lower_brev(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  (void)call;
  return libdevice_bits(L, n, true);
}

/* ffs(x) of an integer: a uint32; numba-cuda lowers it only for 32- and 64-bit integers. */
static const nbc__type *type_ffs(infer *I, nbc__node *n, const char *fname,
                                 const nbc__type **types, int nargs) {
  const nbc__type *conv[3] = {NULL, NULL, NULL};
  int i = resolve_case(I, n, fname, types, nargs, ffs_cases, NCASES(ffs_cases), conv);
  if (i < 0) return NULL;
  if (nbc__type_bits(conv[0]) < 32)
    return TYPING(I, n, "%s() of %s is not supported (numba-cuda has no %s lowering)", fname,
                  nbc__infer_tname(I, conv[0]), nbc__infer_tname(I, conv[0])),
           NULL;
  return intrinsic_call(I, n, fname, nargs, conv, T(ffs_cases[i].ret));
}

static nbc__lval lower_ffs(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  (void)call;
  return libdevice_bits(L, n, false);
}

/* cbrt(x): float32 or float64. */
static const nbc__type *type_cbrt(infer *I, nbc__node *n, const char *fname,
                                  const nbc__type **types, int nargs) {
  return BY_CASES(cbrt_cases);
}

/* libdevice's __nv_cbrtf / __nv_cbrt. */
static nbc__lval lower_cbrt(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  (void)call;
  nbc__lval v = arg(L, n, 0);
  const char *ty = ltype(L, v.type);
  const char *fn = v.type->kind == NBC__T_FLOAT32 ? "__nv_cbrtf" : "__nv_cbrt";
  return (nbc__lval){
      v.type, nbc__lower_call_fn(L, ty, fn, ty, nbc__arena_printf(L->arena, "%s %s", ty, v.v))};
}

/* fma(a, b, c): three float32s or three float64s. */
static const nbc__type *type_fma(infer *I, nbc__node *n, const char *fname,
                                 const nbc__type **types, int nargs) {
  return BY_CASES(fma_cases);
}

/* llvm.fma.f32 / llvm.fma.f64. */
static nbc__lval lower_fma(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  (void)call;
  nbc__lval a = arg(L, n, 0), b = arg(L, n, 1), c = arg(L, n, 2);
  const char *ty = ltype(L, a.type);
  const char *fn = nbc__arena_printf(L->arena, "llvm.fma.%s",
                                     a.type->kind == NBC__T_FLOAT32 ? "f32" : "f64");
  return (nbc__lval){a.type,
                     nbc__lower_call_fn(L, ty, fn,
                                        nbc__arena_printf(L->arena, "%s, %s, %s", ty, ty, ty),
                                        nbc__arena_printf(L->arena, "%s %s, %s %s, %s %s", ty,
                                                          a.v, ty, b.v, ty, c.v))};
}

/* selp(predicate, a, b): a and b of the same 16-, 32- or 64-bit integer or float type; numba
 * types any predicate but only a boolean lowers (select needs an i1). */
static const nbc__type *type_selp(infer *I, nbc__node *n, const char *fname,
                                  const nbc__type **types, int nargs) {
  nbc__node **args = n->list.items;
  const nbc__type *conv[3] = {NULL, NULL, NULL};
  nbc__type_kind k = types[1]->kind;
  bool ok =
      nbc__type_equal(types[1], types[2]) &&
      (k == NBC__T_FLOAT64 || k == NBC__T_FLOAT32 || k == NBC__T_INT16 || k == NBC__T_UINT16 ||
       k == NBC__T_INT32 || k == NBC__T_UINT32 || k == NBC__T_INT64 || k == NBC__T_UINT64);
  if (!ok) return nbc__infer_call_arg_list_error(I, n, fname, types, nargs);
  if (!is_kind(types[0], NBC__T_BOOL))
    return TYPING(I, args[0], "%s() predicate must be a boolean, not %s", fname,
                  nbc__infer_tname(I, types[0])),
           NULL;
  return intrinsic_call(I, n, fname, 3, conv, types[1]);
}

static nbc__lval lower_selp(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  (void)call;
  nbc__lval p = arg(L, n, 0), a = arg(L, n, 1), b = arg(L, n, 2);
  const char *ty = ltype(L, a.type), *x = tmp(L);
  EMIT("%s = select i1 %s, %s %s, %s %s", x, p.v, ty, a.v, ty, b.v);
  return (nbc__lval){a.type, x};
}

/* nanosleep(ns): a uint32, none. */
static const nbc__type *type_nanosleep(infer *I, nbc__node *n, const char *fname,
                                       const nbc__type **types, int nargs) {
  return BY_CASES(nanosleep_cases);
}

static nbc__lval lower_nanosleep(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  (void)call;
  EMIT("call void asm sideeffect \"nanosleep.u32 $0;\", \"r\"(i32 %s)", arg(L, n, 0).v);
  return none_value();
}

/* The cuda module's names, in the order nbc_kernel_names() gives them:
 *   X(name, kind, call)  a namespace, a value or a function typed by infer_call_cuda.c's
 *                        path for `call`;
 *   I(name, min_args, max_args, keywords, type_fn, lower_fn)  an intrinsic: called with
 *                        min_args..max_args arguments, keyword arguments refused unless
 *                        `keywords` (type_fn then checks them), typed by type_fn and lowered
 *                        by lower_fn of this file. */
#define KERNEL_NAMES(X, I)                                                                     \
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
  I("syncthreads_count", 1, 1, false, type_barrier, lower_barrier)                             \
  I("syncthreads_and", 1, 1, false, type_barrier, lower_barrier)                               \
  I("syncthreads_or", 1, 1, false, type_barrier, lower_barrier)                                \
  I("syncwarp", 0, 1, true, type_syncwarp, lower_syncwarp)                                     \
  I("threadfence", 0, 0, false, type_fence, lower_fence)                                       \
  I("threadfence_block", 0, 0, false, type_fence, lower_fence)                                 \
  I("threadfence_system", 0, 0, false, type_fence, lower_fence)                                \
  /* warp shuffles, votes and matches */                                                       \
  I("shfl_sync", 3, 3, false, type_shfl, lower_shfl)                                           \
  I("shfl_up_sync", 3, 3, false, type_shfl, lower_shfl)                                        \
  I("shfl_down_sync", 3, 3, false, type_shfl, lower_shfl)                                      \
  I("shfl_xor_sync", 3, 3, false, type_shfl, lower_shfl)                                       \
  I("ballot_sync", 2, 2, false, type_vote, lower_vote)                                         \
  I("all_sync", 2, 2, false, type_vote, lower_vote)                                            \
  I("any_sync", 2, 2, false, type_vote, lower_vote)                                            \
  I("eq_sync", 2, 2, false, type_vote, lower_vote)                                             \
  I("match_any_sync", 2, 2, false, type_match, lower_match)                                    \
  I("match_all_sync", 2, 2, false, type_match, lower_match)                                    \
  I("activemask", 0, 0, false, type_mask, lower_activemask)                                    \
  I("lanemask_lt", 0, 0, false, type_mask, lower_lanemask_lt)                                  \
  /* bit and arithmetic instructions, timers */                                                \
  I("popc", 1, 1, false, type_popc, lower_popc)                                                \
  I("brev", 1, 1, false, type_brev, lower_brev)                                                \
  I("clz", 1, 1, false, type_popc, lower_clz)                                                  \
  I("ffs", 1, 1, false, type_ffs, lower_ffs)                                                   \
  I("fma", 3, 3, false, type_fma, lower_fma)                                                   \
  I("cbrt", 1, 1, false, type_cbrt, lower_cbrt)                                                \
  I("selp", 3, 3, false, type_selp, lower_selp)                                                \
  I("nanosleep", 1, 1, false, type_nanosleep, lower_nanosleep)                                 \
  /* memory */                                                                                 \
  X("shared", NAMESPACE, NONE)                                                                 \
  X("shared.array", FUNCTION, ARRAY)                                                           \
  X("local", NAMESPACE, NONE)                                                                  \
  X("local.array", FUNCTION, ARRAY)                                                            \
  X("const", NAMESPACE, NONE)                                                                  \
  X("const.array_like", FUNCTION, CONST_ARRAY)                                                 \
  /* numba's carray / farray: an array over the memory a CPointer argument points to */        \
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
  X("atomic.compare_and_swap", FUNCTION, ATOMIC)                                               \
  /* loads and stores with a cache operator (numba's cache_hints.py) */                        \
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
  /* CUDA vector types (numba's vector_types.py): <type>x<n> and the C aliases (float4) */     \
  X("int8x1", FUNCTION, VECTOR)                                                                \
  X("int8x2", FUNCTION, VECTOR)                                                                \
  X("int8x3", FUNCTION, VECTOR)                                                                \
  X("int8x4", FUNCTION, VECTOR)                                                                \
  X("int16x1", FUNCTION, VECTOR)                                                               \
  X("int16x2", FUNCTION, VECTOR)                                                               \
  X("int16x3", FUNCTION, VECTOR)                                                               \
  X("int16x4", FUNCTION, VECTOR)                                                               \
  X("int32x1", FUNCTION, VECTOR)                                                               \
  X("int32x2", FUNCTION, VECTOR)                                                               \
  X("int32x3", FUNCTION, VECTOR)                                                               \
  X("int32x4", FUNCTION, VECTOR)                                                               \
  X("int64x1", FUNCTION, VECTOR)                                                               \
  X("int64x2", FUNCTION, VECTOR)                                                               \
  X("int64x3", FUNCTION, VECTOR)                                                               \
  X("int64x4", FUNCTION, VECTOR)                                                               \
  X("uint8x1", FUNCTION, VECTOR)                                                               \
  X("uint8x2", FUNCTION, VECTOR)                                                               \
  X("uint8x3", FUNCTION, VECTOR)                                                               \
  X("uint8x4", FUNCTION, VECTOR)                                                               \
  X("uint16x1", FUNCTION, VECTOR)                                                              \
  X("uint16x2", FUNCTION, VECTOR)                                                              \
  X("uint16x3", FUNCTION, VECTOR)                                                              \
  X("uint16x4", FUNCTION, VECTOR)                                                              \
  X("uint32x1", FUNCTION, VECTOR)                                                              \
  X("uint32x2", FUNCTION, VECTOR)                                                              \
  X("uint32x3", FUNCTION, VECTOR)                                                              \
  X("uint32x4", FUNCTION, VECTOR)                                                              \
  X("uint64x1", FUNCTION, VECTOR)                                                              \
  X("uint64x2", FUNCTION, VECTOR)                                                              \
  X("uint64x3", FUNCTION, VECTOR)                                                              \
  X("uint64x4", FUNCTION, VECTOR)                                                              \
  X("float32x1", FUNCTION, VECTOR)                                                             \
  X("float32x2", FUNCTION, VECTOR)                                                             \
  X("float32x3", FUNCTION, VECTOR)                                                             \
  X("float32x4", FUNCTION, VECTOR)                                                             \
  X("float64x1", FUNCTION, VECTOR)                                                             \
  X("float64x2", FUNCTION, VECTOR)                                                             \
  X("float64x3", FUNCTION, VECTOR)                                                             \
  X("float64x4", FUNCTION, VECTOR)                                                             \
  X("char1", FUNCTION, VECTOR)                                                                 \
  X("char2", FUNCTION, VECTOR)                                                                 \
  X("char3", FUNCTION, VECTOR)                                                                 \
  X("char4", FUNCTION, VECTOR)                                                                 \
  X("short1", FUNCTION, VECTOR)                                                                \
  X("short2", FUNCTION, VECTOR)                                                                \
  X("short3", FUNCTION, VECTOR)                                                                \
  X("short4", FUNCTION, VECTOR)                                                                \
  X("int1", FUNCTION, VECTOR)                                                                  \
  X("int2", FUNCTION, VECTOR)                                                                  \
  X("int3", FUNCTION, VECTOR)                                                                  \
  X("int4", FUNCTION, VECTOR)                                                                  \
  X("long1", FUNCTION, VECTOR)                                                                 \
  X("long2", FUNCTION, VECTOR)                                                                 \
  X("long3", FUNCTION, VECTOR)                                                                 \
  X("long4", FUNCTION, VECTOR)                                                                 \
  X("longlong1", FUNCTION, VECTOR)                                                             \
  X("longlong2", FUNCTION, VECTOR)                                                             \
  X("longlong3", FUNCTION, VECTOR)                                                             \
  X("longlong4", FUNCTION, VECTOR)                                                             \
  X("uchar1", FUNCTION, VECTOR)                                                                \
  X("uchar2", FUNCTION, VECTOR)                                                                \
  X("uchar3", FUNCTION, VECTOR)                                                                \
  X("uchar4", FUNCTION, VECTOR)                                                                \
  X("ushort1", FUNCTION, VECTOR)                                                               \
  X("ushort2", FUNCTION, VECTOR)                                                               \
  X("ushort3", FUNCTION, VECTOR)                                                               \
  X("ushort4", FUNCTION, VECTOR)                                                               \
  X("uint1", FUNCTION, VECTOR)                                                                 \
  X("uint2", FUNCTION, VECTOR)                                                                 \
  X("uint3", FUNCTION, VECTOR)                                                                 \
  X("uint4", FUNCTION, VECTOR)                                                                 \
  X("ulong1", FUNCTION, VECTOR)                                                                \
  X("ulong2", FUNCTION, VECTOR)                                                                \
  X("ulong3", FUNCTION, VECTOR)                                                                \
  X("ulong4", FUNCTION, VECTOR)                                                                \
  X("ulonglong1", FUNCTION, VECTOR)                                                            \
  X("ulonglong2", FUNCTION, VECTOR)                                                            \
  X("ulonglong3", FUNCTION, VECTOR)                                                            \
  X("ulonglong4", FUNCTION, VECTOR)                                                            \
  X("float1", FUNCTION, VECTOR)                                                                \
  X("float2", FUNCTION, VECTOR)                                                                \
  X("float3", FUNCTION, VECTOR)                                                                \
  X("float4", FUNCTION, VECTOR)                                                                \
  X("double1", FUNCTION, VECTOR)                                                               \
  X("double2", FUNCTION, VECTOR)                                                               \
  X("double3", FUNCTION, VECTOR)                                                               \
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
#define INTRINSIC_PUBLIC_ENTRY_(name, min, max, kw, type, lower) {name, NBC_KERNEL_FUNCTION},
static const nbc_kernel_name_t names[] = {
    KERNEL_NAMES(PUBLIC_ENTRY_, INTRINSIC_PUBLIC_ENTRY_){"libdevice", NBC_KERNEL_NAMESPACE},
    LIBDEVICE_FUNCS(LD_PUBLIC_ENTRY_){"fp16", NBC_KERNEL_NAMESPACE},
    FP16_FUNCS(FP16_PUBLIC_ENTRY_){"bf16", NBC_KERNEL_NAMESPACE},
    BF16_FUNCS(BF16_PUBLIC_ENTRY_) BF16_CNAMES(BF16_CNAME_ENTRY_)};
#undef PUBLIC_ENTRY_
#undef INTRINSIC_PUBLIC_ENTRY_

/* calls[i] is how infer_call.c types a call of names[i]. */
#define CALL_ENTRY_(name, kind, call) NBC__KERNEL_CALL_##call,
#define INTRINSIC_CALL_ENTRY_(name, min, max, kw, type, lower) NBC__KERNEL_CALL_INTRINSIC,
static const nbc__kernel_call calls[] = {
    KERNEL_NAMES(CALL_ENTRY_, INTRINSIC_CALL_ENTRY_) NBC__KERNEL_CALL_NONE,
    LIBDEVICE_FUNCS(LD_CALL_ENTRY_) NBC__KERNEL_CALL_NONE,
    FP16_FUNCS(FP16_CALL_ENTRY_) NBC__KERNEL_CALL_NONE,
    BF16_FUNCS(BF16_CALL_ENTRY_) BF16_CNAMES(BF16_CNAME_CALL_ENTRY_)};
#undef CALL_ENTRY_
#undef INTRINSIC_CALL_ENTRY_

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
  case 'f':
    return nbc__type_scalar(NBC__T_FLOAT32);
  case 'd':
    return nbc__type_scalar(NBC__T_FLOAT64);
  case 'h':
    return nbc__type_scalar(NBC__T_INT16);
  case 'i':
    return nbc__type_scalar(NBC__T_INT32);
  default:
    return nbc__type_scalar(NBC__T_INT64);
  }
}

bool nbc__vector_type_find(const char *name, const char **pbase, int *pcount) {
  static const char *const bases[] = {"int8",   "int16",  "int32",  "int64",   "uint8",
                                      "uint16", "uint32", "uint64", "float32", "float64"};
  /* numba's C aliases (numpy's C type sizes on x86-64 Linux) */
  static const char *const aliases[][2] = {
      {"char", "int8"},        {"short", "int16"},    {"int", "int32"},
      {"long", "int64"},       {"longlong", "int64"}, {"uchar", "uint8"},
      {"ushort", "uint16"},    {"uint", "uint32"},    {"ulong", "uint64"},
      {"ulonglong", "uint64"}, {"float", "float32"},  {"double", "float64"},
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

/* The intrinsics, from their I rows. */
typedef struct {
  const char *name;
  int min_args, max_args;
  bool keywords;
  type_fn *type;
  lower_fn *lower;
} intrinsic;

#define NO_INTRINSIC_(name, kind, call)
#define INTRINSIC_ENTRY_(name, min, max, kw, type, lower) {name, min, max, kw, type, lower},
static const intrinsic intrinsics[] = {KERNEL_NAMES(NO_INTRINSIC_, INTRINSIC_ENTRY_)};
#undef NO_INTRINSIC_
#undef INTRINSIC_ENTRY_

/* The intrinsic cuda.<name>, or NULL. */
static const intrinsic *intrinsic_find(const char *name) {
  for (size_t i = 0; i < sizeof intrinsics / sizeof intrinsics[0]; i++)
    if (strcmp(intrinsics[i].name, name) == 0) return &intrinsics[i];
  return NULL;
}

const nbc__type *nbc__lib_cuda_type(infer *I, nbc__node *n, const char *fname,
                                    const nbc__type **types, int nargs) {
  const intrinsic *f = intrinsic_find(fname + 5);
  if (!f) return UNSUPPORTED(I, n, "unsupported call of %s", fname), NULL;
  if (!f->keywords && !nbc__infer_call_no_keywords(I, n, fname)) return NULL;
  if (nargs < f->min_args || nargs > f->max_args)
    return nbc__infer_call_arg_list_error(I, n, fname, types, nargs);
  return f->type(I, n, fname, types, nargs);
}

nbc__lval nbc__lib_cuda_lower(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  const intrinsic *f = intrinsic_find(call->name + 5); /* "cuda." */
  if (f) return f->lower(L, n, call);
  nbc__lower_error(L, n, "unsupported call of %s", call->name);
  return (nbc__lval){call->ret, nbc__lower_zero(L, call->ret)};
}
