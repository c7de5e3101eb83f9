/* lower_bf16.c — bfloat16 values in LLVM IR: the calls of cuda_bf16.h's wrappers (fp16.c's
 * shim, nbc_bf16_<function>) that numba-cuda's operators and conversions are, and the two
 * conversions that need none: to float32 a bfloat16's bits are the float's upper half, exact
 * (__bfloat162float), and from there float64 or float16 as any float32 (see bf16.c).
 */
#include "compiler/lower.h"

/* A call of wrapper nbc_bf16_<function> (nbc__lower_extern_call); the arguments already of
 * the wrapper's parameter types. */
static nbc__lval wrapper_call(nbc__lowerer *L, const char *function, const nbc__type *rt,
                              const nbc__lval *args, int nargs) {
  const nbc__type *argtypes[2];
  for (int i = 0; i < nargs && i < 2; i++) argtypes[i] = args[i].type;
  return nbc__lower_extern_call(L, nbc__arena_printf(L->arena, "nbc_bf16_%s", function), rt,
                                argtypes, args, nargs);
}

/* A bfloat16's value as float32, exactly. */
static nbc__lval to_float32(nbc__lowerer *L, nbc__lval v) {
  const char *w = tmp(L), *s = tmp(L), *f = tmp(L);
  EMIT("%s = zext i16 %s to i32", w, v.v);
  EMIT("%s = shl i32 %s, 16", s, w);
  EMIT("%s = bitcast i32 %s to float", f, s);
  return (nbc__lval){T(NBC__T_FLOAT32), f};
}

nbc__lval nbc__lower_bf16_convert(nbc__lowerer *L, nbc__lval v, const nbc__type *to) {
  const nbc__type *from = v.type;
  const char *function = nbc__bf16_conversion_function(from, to);
  if (nbc__type_is_bf16(to)) {
    if (!function) /* float16: through float32, exactly */
      return nbc__lower_bf16_convert(L, nbc__lower_convert(L, v, T(NBC__T_FLOAT32)), to);
    const nbc__type *param = nbc__type_bits(from) <= 8 ? T(NBC__T_INT16) : from;
    nbc__lval arg = nbc__lower_convert(L, v, param); /* bool, int8, uint8: exactly */
    return wrapper_call(L, function, to, &arg, 1);
  }
  if (function) return wrapper_call(L, function, to, &v, 1); /* an integer, toward zero */
  return nbc__lower_convert(L, to_float32(L, v), to);
}

nbc__lval nbc__lower_bf16_binop(nbc__lowerer *L, nbc__node *where, nbc__op op, nbc__lval a,
                                nbc__lval b, const nbc__type *rt) {
  const char *function = nbc__bf16_operator_function(op, false);
  if (!function) {
    nbc__lower_error(L, where, "unsupported operand types for %s: bfloat16", nbc__op_text(op));
    return (nbc__lval){rt, nbc__lower_zero(L, rt)};
  }
  const nbc__type *bf = nbc__type_bfloat16();
  nbc__lval args[2] = {nbc__lower_convert(L, a, bf), nbc__lower_convert(L, b, bf)};
  nbc__lval r = wrapper_call(L, function, nbc__type_is_bf16(rt) ? bf : T(NBC__T_BOOL), args, 2);
  return nbc__lower_convert(L, r, rt);
}

nbc__lval nbc__lower_bf16_neg(nbc__lowerer *L, nbc__lval a) {
  return wrapper_call(L, nbc__bf16_operator_function(NBC__OP_NEG, true), a.type, &a, 1);
}
