/* bf16.c — numba-cuda's bfloat16 in kernels: the type, numba.cuda.bf16's functions
 * (cuda_bf16.h's, as numba-cuda binds them), its operators and conversions (its math
 * overloads are columns of lib_math.c's table).
 *
 * numba-cuda calls cuda_bf16.h's functions and C++ operators through wrappers compiled with
 * NVRTC and linked with the kernel; nbcuda does the same with fp16.c's shim: bf16_funcs.h
 * (generated from numba-cuda by tools/gen_bf16.py) lists each exported name with the function
 * it calls and its signature, and fp16.c's shim has a Numba-ABI wrapper for each,
 * nbc_bf16_<function>, a bfloat16 travelling as its 16 bits:
 *
 *   extern "C" __device__ int nbc_bf16___hadd(unsigned short *ret, unsigned short a0,
 *                                             unsigned short a1) {
 *     *ret = __bfloat16_as_ushort(__hadd(__ushort_as_bfloat16(a0), __ushort_as_bfloat16(a1)));
 *     return 0;
 *   }
 *
 * Operators are cuda_bf16.hpp's: + - * / are __hadd __hsub __hmul __hdiv, == __heq, != __hneu,
 * < __hlt..., unary - __hneg. numba-cuda types an operator of bfloat16 and another number by
 * its conversion rules (Bfloat16.can_convert_to/from): with bfloat16, int8 or uint8 (which
 * converts safely to bfloat16) + - * / and comparisons are bfloat16's; anything else goes
 * through float32 (exactly bfloat16's value: its bits above 16 zero bits), under numba's
 * usual rules from there (bfloat16 + int64 is float64). Conversions to bfloat16 are
 * cuda_bf16.h's constructors (__float2bfloat16, __int2bfloat16_rn...), to integers its
 * conversion operators (toward zero, __bfloat162int_rz...).
 */
#include <string.h>

#include "compiler/compiler.h"

static const nbc__type bfloat16_type = {.kind = NBC__T_BFLOAT16, .name = "bfloat16"};

const nbc__type *nbc__type_bfloat16(void) { return &bfloat16_type; }

bool nbc__type_is_bf16(const nbc__type *t) { return t && t->kind == NBC__T_BFLOAT16; }

/* Whether t is bfloat16 or converts to it safely (int8, uint8: numba-cuda's rule). */
static bool bf16_operand(const nbc__type *t) {
  return nbc__type_is_bf16(t) || (t && (t->kind == NBC__T_INT8 || t->kind == NBC__T_UINT8));
}

const nbc__type *nbc__bf16_binop_sig(nbc__op op, const nbc__type *a, const nbc__type *b,
                                     const nbc__type **pargs, const char **pwhy) {
  const nbc__type *f32 = nbc__type_scalar(NBC__T_FLOAT32);
  if (bf16_operand(a) && bf16_operand(b) && nbc__bf16_operator_function(op, false)) {
    pargs[0] = pargs[1] = &bfloat16_type;
    bool compare = op == NBC__OP_EQ || op == NBC__OP_NE || op == NBC__OP_LT ||
                   op == NBC__OP_LE || op == NBC__OP_GT || op == NBC__OP_GE;
    return compare ? nbc__type_scalar(NBC__T_BOOL) : &bfloat16_type;
  }
  const nbc__type *fa = nbc__type_is_bf16(a) ? f32 : a, *fb = nbc__type_is_bf16(b) ? f32 : b;
  if (!nbc__type_is_number(fa) || !nbc__type_is_number(fb) || nbc__type_is_complex(fa) ||
      nbc__type_is_complex(fb)) {
    if (pwhy) *pwhy = "unsupported operand types";
    return NULL;
  }
  return nbc__type_binop_sig(op, fa, fb, pargs, pwhy);
}

const char *nbc__bf16_operator_function(nbc__op op, bool unary) {
  if (unary) return op == NBC__OP_NEG ? "__hneg" : NULL;
  switch (op) {
  case NBC__OP_ADD: return "__hadd";
  case NBC__OP_SUB: return "__hsub";
  case NBC__OP_MUL: return "__hmul";
  case NBC__OP_DIV: return "__hdiv";
  case NBC__OP_EQ: return "__heq";
  case NBC__OP_NE: return "__hneu"; /* cuda_bf16.hpp's operator!=: NaN != x */
  case NBC__OP_LT: return "__hlt";
  case NBC__OP_LE: return "__hle";
  case NBC__OP_GT: return "__hgt";
  case NBC__OP_GE: return "__hge";
  default: return NULL;
  }
}

const char *nbc__bf16_conversion_function(const nbc__type *from, const nbc__type *to) {
  if (nbc__type_is_bf16(to) && from) {
    switch (from->kind) {
    case NBC__T_FLOAT32: return "__float2bfloat16";
    case NBC__T_FLOAT64: return "__double2bfloat16";
    case NBC__T_BOOL: case NBC__T_INT8: case NBC__T_UINT8: /* exact: through int16 */
    case NBC__T_INT16: return "__short2bfloat16_rn";
    case NBC__T_UINT16: return "__ushort2bfloat16_rn";
    case NBC__T_INT32: return "__int2bfloat16_rn";
    case NBC__T_UINT32: return "__uint2bfloat16_rn";
    case NBC__T_INT64: return "__ll2bfloat16_rn";
    case NBC__T_UINT64: return "__ull2bfloat16_rn";
    default: return NULL; /* float16: through float32, exactly */
    }
  }
  if (nbc__type_is_bf16(from) && to) {
    switch (to->kind) {
    case NBC__T_INT8: return "__bfloat162char_rz";
    case NBC__T_UINT8: return "__bfloat162uchar_rz";
    case NBC__T_INT16: return "__bfloat162short_rz";
    case NBC__T_UINT16: return "__bfloat162ushort_rz";
    case NBC__T_INT32: return "__bfloat162int_rz";
    case NBC__T_UINT32: return "__bfloat162uint_rz";
    case NBC__T_INT64: return "__bfloat162ll_rz";
    case NBC__T_UINT64: return "__bfloat162ull_rz";
    default: return NULL;
    }
  }
  return NULL;
}

