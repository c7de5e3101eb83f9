/* lower_cuda.c — lowering of numba-cuda's warp, vote, fence, bit and math intrinsics
 * (infer_call.c types them as NBC__B_CUDA_INTRINSIC with the argument conversions already
 * applied by nbc__lower_expr). Each follows numba-cuda's cudaimpl.py / intrinsics.py:
 *  - shfl_*_sync: {i32, i1} @llvm.nvvm.shfl.sync.i32(mask, mode, value, b, c), floats
 *    bitcast, 64-bit values shuffled as two halves;
 *  - ballot/all/any/eq_sync: {i32, i1} @llvm.nvvm.vote.sync(mask, mode, predicate != 0);
 *  - syncwarp: @llvm.nvvm.bar.warp.sync; fences: @llvm.nvvm.membar.{cta,gl,sys};
 *    syncthreads_count/and/or: @llvm.nvvm.barrier0.{popc,and,or};
 *  - match_any_sync / match_all_sync: @llvm.nvvm.match.{any,all}.sync.i32/i64, floats
 *    bitcast; match_all's {i32, i1} becomes the (mask, pred) tuple;
 *  - activemask / lanemask_lt / nanosleep: the PTX instruction / special register as inline
 *    asm;
 *  - popc: llvm.ctpop, clz: llvm.ctlz (zero defined), brev: __nv_brev(ll), ffs:
 *    __nv_ffs(ll), fma: llvm.fma, cbrt: __nv_cbrt(f), selp: select.
 */
#include <string.h>

#include "compiler/lower.h"

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

static nbc__lval lower_shfl(nbc__lowerer *L, nbc__node *n, const char *name) {
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

static nbc__lval lower_vote(nbc__lowerer *L, nbc__node *n, const char *name) {
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

/* match_any_sync / match_all_sync: @llvm.nvvm.match.{any,all}.sync.i{32,64}(mask, value)
 * with float values bitcast; match.all's {i32, i1} is the (mask, pred) tuple. */
static nbc__lval lower_match(nbc__lowerer *L, nbc__node *n, const nbc__call *call, bool all) {
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

static const char *inline_asm_u32(nbc__lowerer *L, const char *text) {
  const char *x = tmp(L);
  EMIT("%s = call i32 asm sideeffect \"%s\", \"=r\"()", x, text);
  return x;
}

nbc__lval nbc__lower_cuda_intrinsic(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  const char *name = call->name + 5; /* "cuda." */
  if (strncmp(name, "shfl_", 5) == 0) return lower_shfl(L, n, name);
  if (strcmp(name, "ballot_sync") == 0 || strcmp(name, "all_sync") == 0 ||
      strcmp(name, "any_sync") == 0 || strcmp(name, "eq_sync") == 0)
    return lower_vote(L, n, name);
  if (strcmp(name, "syncwarp") == 0) {
    const char *mask = n->list.count ? arg(L, n, 0).v : "-1";
    call_void(L, "llvm.nvvm.bar.warp.sync", "i32", nbc__arena_printf(L->arena, "i32 %s", mask));
    return none_value();
  }
  if (strncmp(name, "threadfence", 11) == 0) {
    const char *scope = strcmp(name, "threadfence_block") == 0    ? "cta"
                        : strcmp(name, "threadfence_system") == 0 ? "sys"
                                                                  : "gl";
    call_void(L, nbc__arena_printf(L->arena, "llvm.nvvm.membar.%s", scope), "", "");
    return none_value();
  }
  if (strncmp(name, "syncthreads_", 12) == 0) {
    const char *kind = strcmp(name, "syncthreads_count") == 0 ? "popc" : name + 12;
    nbc__lval p = arg(L, n, 0);
    return (nbc__lval){
        T(NBC__T_INT32),
        nbc__lower_call_fn(L, "i32", nbc__arena_printf(L->arena, "llvm.nvvm.barrier0.%s", kind),
                           "i32", nbc__arena_printf(L->arena, "i32 %s", p.v))};
  }
  if (strcmp(name, "match_any_sync") == 0 || strcmp(name, "match_all_sync") == 0)
    return lower_match(L, n, call, strcmp(name, "match_all_sync") == 0);
  if (strcmp(name, "nanosleep") == 0) {
    EMIT("call void asm sideeffect \"nanosleep.u32 $0;\", \"r\"(i32 %s)", arg(L, n, 0).v);
    return none_value();
  }
  if (strcmp(name, "activemask") == 0)
    return (nbc__lval){T(NBC__T_UINT32), inline_asm_u32(L, "activemask.b32 $0;")};
  if (strcmp(name, "lanemask_lt") == 0)
    return (nbc__lval){T(NBC__T_UINT32), inline_asm_u32(L, "mov.u32 $0, %lanemask_lt;")};
  if (strcmp(name, "popc") == 0 || strcmp(name, "clz") == 0) {
    nbc__lval v = arg(L, n, 0);
    const char *ty = ltype(L, v.type);
    bool popc = name[0] == 'p';
    const char *fn = nbc__arena_printf(L->arena, "llvm.%s.%s", popc ? "ctpop" : "ctlz", ty);
    const char *r =
        popc ? nbc__lower_call_fn(L, ty, fn, ty, nbc__arena_printf(L->arena, "%s %s", ty, v.v))
             : nbc__lower_call_fn(L, ty, fn, nbc__arena_printf(L->arena, "%s, i1", ty),
                                  nbc__arena_printf(L->arena, "%s %s, i1 false", ty, v.v));
    return (nbc__lval){v.type, r};
  }
  if (strcmp(name, "brev") == 0 || strcmp(name, "ffs") == 0) {
    nbc__lval v = arg(L, n, 0);
    const char *ty = ltype(L, v.type);
    bool wide = nbc__type_bits(v.type) == 64;
    bool brev = name[0] == 'b';
    const char *fn =
        brev ? (wide ? "__nv_brevll" : "__nv_brev") : (wide ? "__nv_ffsll" : "__nv_ffs");
    const char *rty = brev ? ty : "i32";
    return (nbc__lval){
        brev ? v.type : T(NBC__T_UINT32),
        nbc__lower_call_fn(L, rty, fn, ty, nbc__arena_printf(L->arena, "%s %s", ty, v.v))};
  }
  if (strcmp(name, "cbrt") == 0) {
    nbc__lval v = arg(L, n, 0);
    const char *ty = ltype(L, v.type);
    const char *fn = v.type->kind == NBC__T_FLOAT32 ? "__nv_cbrtf" : "__nv_cbrt";
    return (nbc__lval){
        v.type,
        nbc__lower_call_fn(L, ty, fn, ty, nbc__arena_printf(L->arena, "%s %s", ty, v.v))};
  }
  if (strcmp(name, "fma") == 0) {
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
  if (strcmp(name, "selp") == 0) {
    nbc__lval p = arg(L, n, 0), a = arg(L, n, 1), b = arg(L, n, 2);
    const char *ty = ltype(L, a.type), *x = tmp(L);
    EMIT("%s = select i1 %s, %s %s, %s %s", x, p.v, ty, a.v, ty, b.v);
    return (nbc__lval){a.type, x};
  }
  nbc__lower_error(L, n, "unsupported call of %s", call->name);
  return (nbc__lval){call->ret, nbc__lower_zero(L, call->ret)};
}
