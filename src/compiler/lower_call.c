/* lower_call.c — calls to NVVM IR, split from lower_expr.c: the builtins (min/max, abs,
 * round with ndigits, ...), libdevice's names (__nv_sin for float64, __nv_sinf for float32,
 * the fast variants under fastmath; the math module is lib_math.c's), calls of
 * other Python functions of the program with the Numba ABI (i32 status, the result through
 * a slot), of declared external device functions with the C ABI, and the dispatch of every
 * other call to the files that lower it (lower_array.c for CUDA intrinsics, lower_record.c,
 * lib_numpy.c, lower_print.c, lower_raise.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/lower.h"

static nbc__lval round_ndigits(nbc__lowerer *L, nbc__lval v, nbc__lval nd, const nbc__type *rt);

/* --------------------------------------------------------------- math --------------- */

static bool in_list(const char *name, const char *const *list) {
  for (int i = 0; list[i]; i++)
    if (strcmp(name, list[i]) == 0) return true;
  return false;
}

const char *nbc__lower_libdevice_name(nbc__lowerer *L, const char *base, const nbc__type *ft) {
  static const char *const fast[] = {"cos", "sin", "tan", "exp", "log2", "log10", "log", "pow",
                                     NULL};
  bool f32 = ft->kind == NBC__T_FLOAT32;
  if (f32 && L->ctx->options->fastmath && in_list(base, fast))
    return nbc__arena_printf(L->arena, "__nv_fast_%sf", base);
  return nbc__arena_printf(L->arena, "__nv_%s%s", base, f32 ? "f" : "");
}

/* --------------------------------------------------------------- calls -------------- */

/* min/max as numba's do_minmax: a running select that keeps the earlier value on ties and
 * NaN or NaT comparisons (max: v > acc ? v : acc). Two float32/float64 arguments are numba-cuda's
 * own lowering instead (cudaimpl's ptx_max_f4/f8...): libdevice's fmax/fmin, which return the
 * other argument when one is NaN, in float32 when both are, else in float64. */
static nbc__lval minmax(nbc__lowerer *L, nbc__node *n, bool is_max) {
  const nbc__type *rt = n->type;
  nbc__lval vals[64];
  int count = 0;
  if (n->list.count == 1) {
    nbc__lval t = nbc__lower_expr(L, n->list.items[0]);
    if (!t.type || t.type->kind != NBC__T_TUPLE || t.type->count == 0 || t.type->count > 64) {
      nbc__lower_error(L, n, "%s() expects at least two arguments or one tuple",
                       is_max ? "max" : "min");
      return (nbc__lval){rt, "0"};
    }
    for (int i = 0; i < t.type->count; i++) vals[count++] = nbc__lower_tuple_at(L, t, i);
  } else {
    for (int i = 0; i < n->list.count && i < 64; i++)
      vals[count++] = nbc__lower_expr(L, n->list.items[i]);
  }
  if (!rt || !(is_int(rt) || is_float(rt) || is_bool(rt) || nbc__type_is_datetime(rt))) {
    nbc__lower_error(L, n, "%s() of these types is not supported", is_max ? "max" : "min");
    return (nbc__lval){rt, "0"};
  }
  bool floats = n->list.count == 2;
  for (int i = 0; floats && i < 2; i++)
    floats = vals[i].type && (vals[i].type->kind == NBC__T_FLOAT32 ||
                              vals[i].type->kind == NBC__T_FLOAT64);
  if (floats && (rt->kind == NBC__T_FLOAT32 || rt->kind == NBC__T_FLOAT64)) {
    bool f32 = rt->kind == NBC__T_FLOAT32;
    const char *a = nbc__lower_convert(L, vals[0], rt).v;
    const char *b = nbc__lower_convert(L, vals[1], rt).v;
    const char *fn = is_max ? (f32 ? "__nv_fmaxf" : "__nv_fmax")
                            : (f32 ? "__nv_fminf" : "__nv_fmin");
    return (nbc__lval){rt, nbc__lower_call2(L, ltype(L, rt), fn, a, b)};
  }
  nbc__lval acc = nbc__lower_convert(L, vals[0], rt);
  for (int i = 1; i < count; i++) {
    nbc__lval v = nbc__lower_convert(L, vals[i], rt);
    const char *c = nbc__lower_compare_values(L, n, is_max ? NBC__OP_GT : NBC__OP_LT, v, acc);
    const char *x = tmp(L);
    EMIT("%s = select i1 %s, %s %s, %s %s", x, c, ltype(L, rt), v.v, ltype(L, rt), acc.v);
    acc.v = x;
  }
  return acc;
}

/* A call with the Numba ABI, `i32 @symbol(RT* ret, flattened args...)`: the result through a
 * slot, the values vals converted to argtypes (those without a run-time value not passed). */
static nbc__lval numba_abi_call_values(nbc__lowerer *L, const char *symbol, const nbc__type *rt,
                                       const nbc__type *const *argtypes, const nbc__lval *vals,
                                       int nargs) {
  const char *rmt = nbc__lower_ret_type(L, rt);
  const char *slot = nbc__lower_alloca(L, rmt);
  EMIT("store %s %s, %s* %s", rmt, strcmp(rmt, "i8") == 0 ? "0" : nbc__lower_zero(L, rt), rmt,
       slot);
  nbc__buf args;
  nbc__buf_init(&args, L->arena);
  nbc__buf_printf(&args, "%s* %s", rmt, slot);
  bool first = false;
  for (int i = 0; i < nargs; i++) {
    if (!nbc__lower_has_value(argtypes[i])) continue; /* compile-time values: none passed */
    nbc__lower_flatten(L, &args, argtypes[i], nbc__lower_convert(L, vals[i], argtypes[i]),
                       &first);
  }
  const char *st = tmp(L);
  EMIT("%s = call i32 @%s(%s)", st, symbol, args.data);
  if (!rt || rt->kind == NBC__T_VOID || rt->kind == NBC__T_NONE)
    return (nbc__lval){T(NBC__T_VOID), "null"};
  if (rt->kind == NBC__T_RECORD) {
    const char *x = tmp(L);
    EMIT("%s = load i8*, i8** %s", x, slot);
    return (nbc__lval){rt, x};
  }
  return nbc__lower_load(L, rt, slot);
}

/* The same with call n's arguments lowered. */
static nbc__lval numba_abi_call(nbc__lowerer *L, nbc__node *n, const char *symbol,
                                const nbc__type *rt, const nbc__type *const *argtypes) {
  int nargs = n->list.count;
  nbc__lval *vals = nbc__arena_alloc(L->arena, sizeof *vals * (size_t)(nargs ? nargs : 1));
  if (!vals) return (nbc__lval){rt, nbc__lower_zero(L, rt)};
  for (int i = 0; i < nargs; i++)
    vals[i] = nbc__lower_has_value(argtypes[i]) ? nbc__lower_expr(L, n->list.items[i])
                                                : (nbc__lval){argtypes[i], "undef"};
  return numba_abi_call_values(L, symbol, rt, argtypes, vals, nargs);
}

static nbc__lval call_python(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  nbc__func *callee = call->func;
  if (!callee) {
    NBC__BUG(L->ctx, "call without a callee");
    return (nbc__lval){n->type, "0"};
  }
  if (n->list.count != callee->nargs) {
    nbc__lower_error(L, n, "%s() takes %d arguments but %d were given", callee->name,
                     callee->nargs, n->list.count);
    return (nbc__lval){n->type, "0"};
  }
  return numba_abi_call(L, n, nbc__lower_symbol(L, callee), call->ret, callee->argtypes);
}

/* A declared device function with the C ABI (declare_device(abi="c")): declared once as
 * `RT @name(params...)` (void for a void signature), the arguments converted to the declared
 * types (booleans as C's one-byte bool). */
static nbc__lval call_extern_c(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  bool none = !call->ret || call->ret->kind == NBC__T_NONE || call->ret->kind == NBC__T_VOID;
  const char *rt = none ? "void" : nbc__lower_mtype(L, call->ret);
  nbc__buf decl, args;
  nbc__buf_init(&decl, L->arena);
  nbc__buf_init(&args, L->arena);
  nbc__buf_printf(&decl, "declare %s @%s(", rt, call->name);
  for (int i = 0; i < call->nargs && i < n->list.count; i++) {
    const char *mt = nbc__lower_mtype(L, call->argtypes[i]);
    nbc__lval v = nbc__lower_convert(L, nbc__lower_expr(L, n->list.items[i]), call->argtypes[i]);
    const char *x = nbc__lower_to_memory(L, v);
    nbc__buf_printf(&decl, "%s%s", i ? ", " : "", mt);
    nbc__buf_printf(&args, "%s%s %s", i ? ", " : "", mt, x);
  }
  nbc__buf_puts(&decl, ")");
  nbc__lower_declare(L, decl.data);
  if (none) {
    EMIT("call void @%s(%s)", call->name, args.data);
    return (nbc__lval){T(NBC__T_VOID), "null"};
  }
  const char *r = tmp(L);
  EMIT("%s = call %s @%s(%s)", r, rt, call->name, args.data);
  return (nbc__lval){call->ret, nbc__lower_from_memory(L, call->ret, r)};
}

nbc__lval nbc__lower_extern_call(nbc__lowerer *L, const char *symbol, const nbc__type *rt,
                                 const nbc__type *const *argtypes, const nbc__lval *vals,
                                 int nargs) {
  nbc__buf decl;
  nbc__buf_init(&decl, L->arena);
  nbc__buf_printf(&decl, "declare i32 @%s(%s*", symbol, nbc__lower_mtype(L, rt));
  for (int i = 0; i < nargs; i++)
    nbc__buf_printf(&decl, ", %s", nbc__lower_mtype(L, argtypes[i]));
  nbc__buf_puts(&decl, ")");
  nbc__lower_declare(L, decl.data);
  return numba_abi_call_values(L, symbol, rt, argtypes, vals, nargs);
}

/* A declared device function (declare_device, the fp16/bf16 wrappers), with the Numba ABI. */
static nbc__lval call_extern(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  if (call->c_abi) return call_extern_c(L, n, call);
  nbc__lval *vals = nbc__arena_alloc(L->arena, sizeof *vals * (size_t)(call->nargs + 1));
  if (!vals) return (nbc__lval){call->ret, nbc__lower_zero(L, call->ret)};
  for (int i = 0; i < call->nargs && i < n->list.count; i++)
    vals[i] = nbc__lower_expr(L, n->list.items[i]);
  return nbc__lower_extern_call(L, call->name, call->ret, call->argtypes, vals,
                                call->nargs < n->list.count ? call->nargs : n->list.count);
}

/* numba.cuda.libdevice.<f>: libdevice's __nv_<f> with numba-cuda's prototype; results
 * stored through pointers come back in a tuple after the function's own (numba's
 * libdevice_implement_multiple_returns). */
static nbc__lval call_libdevice(nbc__lowerer *L, nbc__node *n, const nbc__call *call) {
  const nbc__type *ret;
  const char *codes;
  if (!nbc__libdevice_find(call->name + 5, &ret, &codes)) {
    nbc__lower_error(L, n, "unknown libdevice function %s", call->name);
    return (nbc__lval){call->ret, "0"};
  }
  nbc__buf tys, args;
  nbc__buf_init(&tys, L->arena);
  nbc__buf_init(&args, L->arena);
  nbc__lval items[9];
  const char *slots[9];
  int nitems = 0, nslots = 0, v = 0;
  bool has_ret = ret->kind != NBC__T_NONE;
  if (has_ret) nitems++; /* items[0]: the function's result, set after the call */
  for (const char *c = codes; c[0] && c[1] && nslots < 8; c += 2) {
    const nbc__type *t = nbc__libdevice_type(c[0]);
    const char *lt = ltype(L, t), *sep = tys.len ? ", " : "";
    if (c[1] == 'p') {
      const char *slot = nbc__lower_alloca(L, lt);
      nbc__buf_printf(&tys, "%s%s*", sep, lt);
      nbc__buf_printf(&args, "%s%s* %s", sep, lt, slot);
      slots[nslots++] = slot;
      items[nitems++] = (nbc__lval){t, NULL};
    } else {
      nbc__lval a = nbc__lower_convert(L, nbc__lower_expr(L, n->list.items[v]),
                                       call->argtypes[v]);
      v++;
      nbc__buf_printf(&tys, "%s%s", sep, lt);
      nbc__buf_printf(&args, "%s%s %s", sep, lt, a.v);
    }
  }
  const char *r = nbc__lower_call_fn(L, has_ret ? ltype(L, ret) : "void", call->name,
                                     tys.data ? tys.data : "", args.data ? args.data : "");
  if (!nslots) return has_ret ? (nbc__lval){ret, r} : (nbc__lval){T(NBC__T_VOID), "null"};
  if (has_ret) items[0] = (nbc__lval){ret, r};
  for (int i = 0, k = has_ret; i < nslots; i++, k++)
    items[k] = nbc__lower_load(L, items[k].type, slots[i]);
  return nbc__lower_make_tuple(L, call->ret, items);
}

nbc__lval nbc__lower_call(nbc__lowerer *L, nbc__node *n) {
  if (n->type && n->type->kind == NBC__T_DTYPE) /* np.dtype("f4"): no run-time value */
    return (nbc__lval){n->type, "undef"};
  const nbc__call *call = n->info;
  if (!call) {
    nbc__lower_error(L, n, "unsupported call");
    return (nbc__lval){n->type, "0"};
  }
  const nbc__type *rt = call->ret ? call->ret : n->type;
  int na = n->list.count;
  switch (call->builtin) {
  case NBC__B_FUNC:
    return call_python(L, n, call);
  case NBC__B_EXTERN:
    return call_extern(L, n, call);
  case NBC__B_LIBDEVICE:
    return call_libdevice(L, n, call);
  case NBC__B_RANGE:
    return nbc__lower_range_value(L, n, call);
  case NBC__B_LEN: {
    nbc__lval v = na == 1 ? nbc__lower_expr(L, n->list.items[0]) : (nbc__lval){NULL, NULL};
    if (v.type && v.type->kind == NBC__T_ARRAY) return nbc__lower_array_field(L, v, 5, 0);
    if (v.type && v.type->kind == NBC__T_RANGE && v.type->dtype)
      return nbc__lower_range_len(L, v);
    if (v.type && v.type->kind == NBC__T_FLAT) /* the array's size */
      return nbc__lower_array_field(L, (nbc__lval){v.type->dtype, v.v}, 2, -1);
    if (v.type && v.type->kind == NBC__T_TUPLE)
      return (nbc__lval){T(NBC__T_INT64), nbc__arena_printf(L->arena, "%d", v.type->count)};
    nbc__lower_error(L, n, "len() of this value is not supported");
    return (nbc__lval){rt, "0"};
  }
  case NBC__B_ABS: {
    nbc__lval arg0 = nbc__lower_expr(L, n->list.items[0]);
    if (nbc__type_is_datetime(arg0.type)) return nbc__lower_datetime_abs(L, arg0);
    if (arg0.type && nbc__type_is_complex(arg0.type)) /* numba: math.hypot(re, im) */
      return nbc__lower_convert(L, nbc__lower_complex_abs(L, arg0), rt);
    nbc__lval v = nbc__lower_convert(L, arg0, rt);
    const char *ty = ltype(L, rt);
    if (nbc__lower_is_half(rt)) /* numba-cuda's abs.f16 */
      return (nbc__lval){rt, nbc__lower_half_unary(L, "abs.f16", v.v)};
    if (is_float(rt)) /* libNVVM has no llvm.fabs */
      return (nbc__lval){rt, nbc__lower_call1(L, ty, rt->kind == NBC__T_FLOAT32 ? "__nv_fabsf"
                                                                                 : "__nv_fabs",
                                               v.v)};
    if (is_int(rt) && nbc__type_is_signed(rt)) {
      const char *neg = tmp(L), *m = tmp(L), *x = tmp(L);
      EMIT("%s = icmp slt %s %s, 0", neg, ty, v.v);
      EMIT("%s = sub %s 0, %s", m, ty, v.v);
      EMIT("%s = select i1 %s, %s %s, %s %s", x, neg, ty, m, ty, v.v);
      return (nbc__lval){rt, x};
    }
    return v;
  }
  case NBC__B_MIN:
    return minmax(L, n, false);
  case NBC__B_MAX:
    return minmax(L, n, true);
  case NBC__B_INT:
  case NBC__B_FLOAT:
  case NBC__B_CAST: {
    if (na == 0) return (nbc__lval){rt, nbc__lower_zero(L, rt)};
    return nbc__lower_convert(L, nbc__lower_expr(L, n->list.items[0]), rt);
  }
  case NBC__B_BOOL:
    if (na == 0) return (nbc__lval){T(NBC__T_BOOL), "false"};
    return (nbc__lval){T(NBC__T_BOOL),
                       nbc__lower_truth(L, nbc__lower_expr(L, n->list.items[0]))};
  case NBC__B_ROUND: {
    nbc__lval v = nbc__lower_expr(L, n->list.items[0]);
    if (na == 2)
      return round_ndigits(L, v, nbc__lower_expr(L, n->list.items[1]), rt);
    if (is_float(v.type)) {
      /* Half to even, like Python: rint rounds ties to even (libNVVM has no llvm.rint). */
      const nbc__type *ft = v.type->kind == NBC__T_FLOAT32 ? v.type : T(NBC__T_FLOAT64);
      v = nbc__lower_convert(L, v, ft);
      const char *rint = ft->kind == NBC__T_FLOAT32 ? "__nv_rintf" : "__nv_rint";
      const char *r = nbc__lower_call1(L, ltype(L, ft), rint, v.v);
      return nbc__lower_convert(L, (nbc__lval){v.type, r}, rt);
    }
    return nbc__lower_convert(L, v, rt);
  }
  case NBC__B_MATH:
    return nbc__lower_convert(L, nbc__lib_math_lower(L, n, call), rt);
  case NBC__B_NUMPY:
    return nbc__numpy_lower(L, n, call);
  case NBC__B_CUDA_GRID:
    return nbc__lower_grid(L, n, false);
  case NBC__B_CUDA_GRIDSIZE:
    return nbc__lower_grid(L, n, true);
  case NBC__B_CUDA_SYNCTHREADS:
    nbc__lower_call_fn(L, "void", "llvm.nvvm.barrier0", "", "");
    return (nbc__lval){T(NBC__T_VOID), "null"};
  case NBC__B_CUDA_SHARED_ARRAY:
    return nbc__lower_local_or_shared_array(L, n, call, true);
  case NBC__B_CUDA_LOCAL_ARRAY:
    return nbc__lower_local_or_shared_array(L, n, call, false);
  case NBC__B_CUDA_CONST_ARRAY: /* the global array's own constant memory */
    return nbc__lower_expr(L, n->list.items[0]);
  case NBC__B_ATOMIC_ADD:
  case NBC__B_ATOMIC_SUB:
  case NBC__B_ATOMIC_MAX:
  case NBC__B_ATOMIC_MIN:
  case NBC__B_ATOMIC_NANMAX:
  case NBC__B_ATOMIC_NANMIN:
  case NBC__B_ATOMIC_AND:
  case NBC__B_ATOMIC_OR:
  case NBC__B_ATOMIC_XOR:
  case NBC__B_ATOMIC_EXCH:
  case NBC__B_ATOMIC_INC:
  case NBC__B_ATOMIC_DEC:
  case NBC__B_ATOMIC_CAS:
    return nbc__lower_atomic(L, n, call->builtin);
  case NBC__B_CUDA_INTRINSIC:
    return nbc__lib_cuda_lower(L, n, call);
  case NBC__B_CACHE_HINT:
    return nbc__lower_cache_hint(L, n, call);
  case NBC__B_RESHAPE:
    return nbc__lower_reshape(L, n, call);
  case NBC__B_TRANSPOSE:
    return nbc__lower_transpose(L, n, call);
  case NBC__B_VIEW:
    return nbc__lower_view(L, n, call);
  case NBC__B_CARRAY:
    return nbc__lower_carray(L, n, call);
  case NBC__B_STORE:
    if (na == 2)
      nbc__lower_store_subscript(L, n->list.items[0], nbc__lower_expr(L, n->list.items[1]));
    return (nbc__lval){rt, "undef"};
  case NBC__B_PRINT:
    return nbc__lower_print(L, n, call);
  case NBC__B_COMPLEX: {
    nbc__lval re = nbc__lower_expr(L, n->list.items[0]);
    if (nbc__type_is_complex(re.type)) return nbc__lower_convert(L, re, rt);
    const nbc__type *pt = nbc__type_complex_part(rt);
    const char *im = na > 1 ? nbc__lower_convert(L, nbc__lower_expr(L, n->list.items[1]), pt).v
                            : nbc__lower_const_float(L, pt, 0.0);
    return nbc__lower_complex_make(L, rt, nbc__lower_convert(L, re, pt).v, im);
  }
  case NBC__B_DIVMOD: { /* numba's divmod: the // and % of the same operands */
    nbc__lval a = nbc__lower_expr(L, n->list.items[0]), b = nbc__lower_expr(L, n->list.items[1]);
    if (!nbc__type_is_complex(rt->items[0]))
      nbc__lower_check_divisor(L, NBC__OP_FLOORDIV, rt->items[0],
                    nbc__lower_convert(L, b, rt->items[0]).v, n);
    nbc__lval items[2] = {
        nbc__lower_binop_values(L, n, NBC__OP_FLOORDIV, a, n->list.items[1], b,
                                rt->items[0]),
        nbc__lower_binop_values(L, n, NBC__OP_MOD, a, n->list.items[1], b, rt->items[1])};
    return nbc__lower_make_tuple(L, rt, items);
  }
  case NBC__B_FROM_BUFFER: /* the array's data pointer, the CPointer's own LLVM type */
    return (nbc__lval){rt, nbc__lower_array_field(L, nbc__lower_expr(L, n->list.items[0]), 4,
                                                  -1).v};
  case NBC__B_CONJUGATE: {
    nbc__lval v = nbc__lower_expr(L, n->a->a);
    return nbc__type_is_complex(v.type) ? nbc__lower_complex_conjugate(L, v) : v;
  }
  case NBC__B_VECTOR: { /* numba's vector_types.py lowering: the elements in order */
    const char *vty = ltype(L, rt), *ety = ltype(L, rt->dtype), *cur = "undef";
    int k = 0;
    for (int i = 0; i < na && k < rt->count; i++) {
      nbc__lval a = nbc__lower_expr(L, n->list.items[i]);
      int m = a.type && a.type->kind == NBC__T_VECTOR ? a.type->count : 1;
      for (int j = 0; j < m && k < rt->count; j++, k++) {
        const char *e;
        if (m > 1 || (a.type && a.type->kind == NBC__T_VECTOR)) {
          e = tmp(L);
          EMIT("%s = extractvalue %s %s, %d", e, ltype(L, a.type), a.v, j);
        } else {
          e = nbc__lower_convert(L, a, rt->dtype).v;
        }
        const char *x = tmp(L);
        EMIT("%s = insertvalue %s %s, %s %s, %d", x, vty, cur, ety, e, k);
        cur = x;
      }
    }
    return (nbc__lval){rt, cur};
  }
  case NBC__B_CG_THIS_GRID: /* numba's cg.py: the grid's handle from cudadevrt */
    return (nbc__lval){rt, nbc__lower_call_fn(L, "i64", "cudaCGGetIntrinsicHandle", "i32",
                                              "i32 1")};
  case NBC__B_CG_SYNC: {
    nbc__lval g = nbc__lower_expr(L, n->a->a);
    return (nbc__lval){rt, nbc__lower_call_fn(L, "i32", "cudaCGSynchronize", "i64, i32",
                                              nbc__arena_printf(L->arena, "i64 %s, i32 0",
                                                                g.v))};
  }
  }
  nbc__lower_error(L, n, "unsupported call");
  return (nbc__lval){rt, "0"};
}

/* numba-cuda's round(x, ndigits) (cudaimpl.py's round_to_impl, CPython's fallback
 * double_round): in float64, x scaled by 10**ndigits (10**(ndigits-22) then 1e22 above 22
 * digits; divided by 10**-ndigits below 0), rounded with llrint, a halfway case to even, and
 * scaled back; x itself when it is inf or nan or its scaled value overflows. Both paths are
 * computed and selected. */
static nbc__lval round_ndigits(nbc__lowerer *L, nbc__lval v, nbc__lval nd, const nbc__type *rt) {
  const char *x = nbc__lower_convert(L, v, T(NBC__T_FLOAT64)).v;
  const char *k = nbc__lower_convert(L, nd, T(NBC__T_INT64)).v;
  const char *neg = tmp(L), *big = tmp(L), *k22 = tmp(L), *mk = tmp(L), *e0 = tmp(L),
             *e = tmp(L), *pow2 = tmp(L);
  EMIT("%s = icmp slt i64 %s, 0", neg, k);
  EMIT("%s = icmp sgt i64 %s, 22", big, k);
  EMIT("%s = sub i64 %s, 22", k22, k);
  EMIT("%s = sub i64 0, %s", mk, k);
  EMIT("%s = select i1 %s, i64 %s, i64 %s", e0, big, k22, k);
  EMIT("%s = select i1 %s, i64 %s, i64 %s", e, neg, mk, e0);
  /* numba's 10.0 ** n with an integer n: repeated squaring, exact up to 1e22 */
  const char *pow1 = nbc__lower_int_power(L, T(NBC__T_FLOAT64), "1.000000e+01",
                               (nbc__lval){T(NBC__T_INT64), e}, NULL);
  EMIT("%s = select i1 %s, double 1.000000e+22, double 1.000000e+00", pow2, big);
  const char *yp0 = tmp(L), *yp = tmp(L), *yn = tmp(L), *y = tmp(L);
  EMIT("%s = fmul double %s, %s", yp0, x, pow1);
  EMIT("%s = fmul double %s, %s", yp, yp0, pow2);
  EMIT("%s = fdiv double %s, %s", yn, x, pow1);
  EMIT("%s = select i1 %s, double %s, double %s", y, neg, yn, yp);
  /* numba's round(y) of a float64 is __nv_llrint */
  const char *z0 = tmp(L), *d = tmp(L), *half = tmp(L), *y2 = tmp(L), *z2 = tmp(L), *z1 = tmp(L),
             *z = tmp(L);
  EMIT("%s = sitofp i64 %s to double", z0,
       nbc__lower_call_fn(L, "i64", "__nv_llrint", "double", nbc__arena_printf(L->arena,
                                                                                 "double %s", y)));
  EMIT("%s = fsub double %s, %s", d, y, z0);
  EMIT("%s = fcmp oeq double %s, 5.000000e-01", half,
       nbc__lower_call1(L, "double", "__nv_fabs", d));
  EMIT("%s = fdiv double %s, 2.000000e+00", y2, y);
  EMIT("%s = sitofp i64 %s to double", z2,
       nbc__lower_call_fn(L, "i64", "__nv_llrint", "double", nbc__arena_printf(L->arena,
                                                                                 "double %s", y2)));
  EMIT("%s = fmul double 2.000000e+00, %s", z1, z2);
  EMIT("%s = select i1 %s, double %s, double %s", z, half, z1, z0);
  const char *rp0 = tmp(L), *rp = tmp(L), *rn = tmp(L), *r = tmp(L);
  EMIT("%s = fdiv double %s, %s", rp0, z, pow2);
  EMIT("%s = fdiv double %s, %s", rp, rp0, pow1);
  EMIT("%s = fmul double %s, %s", rn, z, pow1);
  EMIT("%s = select i1 %s, double %s, double %s", r, neg, rn, rp);
  /* x itself: inf or nan, or (ndigits >= 0) a scaled value that overflowed */
  const char *ax = nbc__lower_call1(L, "double", "__nv_fabs", x);
  const char *ay = nbc__lower_call1(L, "double", "__nv_fabs", y);
  const char *xinf = tmp(L), *xnan = tmp(L), *yinf = tmp(L), *pos = tmp(L), *yover = tmp(L),
             *s1 = tmp(L), *keep = tmp(L), *res = tmp(L);
  EMIT("%s = fcmp oeq double %s, 0x7FF0000000000000", xinf, ax);
  EMIT("%s = fcmp uno double %s, %s", xnan, x, x);
  EMIT("%s = fcmp oeq double %s, 0x7FF0000000000000", yinf, ay);
  EMIT("%s = xor i1 %s, true", pos, neg);
  EMIT("%s = and i1 %s, %s", yover, pos, yinf);
  EMIT("%s = or i1 %s, %s", s1, xinf, xnan);
  EMIT("%s = or i1 %s, %s", keep, s1, yover);
  EMIT("%s = select i1 %s, double %s, double %s", res, keep, x, r);
  return nbc__lower_convert(L, (nbc__lval){T(NBC__T_FLOAT64), res}, rt);
}
