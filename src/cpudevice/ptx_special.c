/* ptx_special.c — picks the specialised form of the commonest instructions.
 *
 * The interpreter's general cases look at an instruction's types, rounding mode and flags
 * on every execution. For the forms that dominate what libNVVM emits (64-bit address
 * arithmetic, 32-bit index arithmetic, integer compares, parameter loads, f32/f64 add, mul
 * and fma rounded to nearest) the decoder replaces the operation by one that needs none of
 * that: same operands, same result, fewer branches.
 */
#include "cpudevice/ptx.h"

static int bits_of(int t) {
  switch (t) {
  case NBC__T_U32:
  case NBC__T_S32:
    return 32;
  case NBC__T_U64:
  case NBC__T_S64:
    return 64;
  default:
    return 0;
  }
}

static int integer_form(const nbc__ptx_insn *in, int op64, int op32) {
  int b = bits_of(in->type);
  return b == 64 ? op64 : b == 32 ? op32 : -1;
}

void nbc__ptx_specialise(nbc__ptx_insn *in) {
  int op = -1;
  uint16_t mods = in->flags & (uint16_t) ~(NBC__F_NEG_GUARD | NBC__F_VISIBLE);
  int plain_float = in->rnd <= NBC__R_RN && mods == 0;
  switch (in->op) {
  case NBC__OP_MOV:
    if (in->sub == 0) op = integer_form(in, NBC__OP_MOV64, NBC__OP_MOV32);
    if (in->type == NBC__T_F64) op = NBC__OP_MOV64;
    if (in->type == NBC__T_F32) op = NBC__OP_MOV32;
    break;
  case NBC__OP_ADD:
    if (in->type == NBC__T_F64 && plain_float) op = NBC__OP_ADD_F64;
    else if (in->type == NBC__T_F32 && plain_float) op = NBC__OP_ADD_F32;
    else if (!mods) op = integer_form(in, NBC__OP_ADD64, NBC__OP_ADD32);
    break;
  case NBC__OP_SUB:
    if (!mods) op = integer_form(in, NBC__OP_SUB64, NBC__OP_SUB32);
    break;
  case NBC__OP_MUL:
    if (in->type == NBC__T_F64 && plain_float) op = NBC__OP_MUL_F64;
    else if (in->type == NBC__T_F32 && plain_float) op = NBC__OP_MUL_F32;
    else if (!mods) op = integer_form(in, NBC__OP_MUL64, NBC__OP_MUL32);
    else if (mods == NBC__F_WIDE && in->type == NBC__T_S32) op = NBC__OP_MULWIDE_S32;
    else if (mods == NBC__F_WIDE && in->type == NBC__T_U32) op = NBC__OP_MULWIDE_U32;
    break;
  case NBC__OP_MAD:
  case NBC__OP_FMA:
    if (in->type == NBC__T_F64 && plain_float) op = NBC__OP_FMA_F64;
    else if (in->type == NBC__T_F32 && plain_float) op = NBC__OP_FMA_F32;
    else if (in->op == NBC__OP_MAD && !mods) op = integer_form(in, NBC__OP_MAD64, NBC__OP_MAD32);
    break;
  case NBC__OP_SHL:
    op = integer_form(in, NBC__OP_SHL64, NBC__OP_SHL32);
    break;
  case NBC__OP_AND:
    op = integer_form(in, NBC__OP_AND64, NBC__OP_AND32);
    break;
  case NBC__OP_OR:
    op = integer_form(in, NBC__OP_OR64, NBC__OP_OR32);
    break;
  case NBC__OP_XOR:
    op = integer_form(in, NBC__OP_XOR64, NBC__OP_XOR32);
    break;
  case NBC__OP_CVT:
    if (in->type == NBC__T_S64 && in->type2 == NBC__T_S32 && !mods) op = NBC__OP_CVT_S64_S32;
    if (!mods && bits_of(in->type) == 32 && bits_of(in->type2) == 64) op = NBC__OP_MOV32;
    if (!mods && in->type == NBC__T_U64 && in->type2 == NBC__T_U32) op = NBC__OP_MOV32;
    break;
  case NBC__OP_CVTA:
    if (in->space == NBC__S_GLOBAL && in->type == NBC__T_U64) op = NBC__OP_MOV64;
    break;
  case NBC__OP_SETP:
    if (in->sub2 || in->d[1] != NBC__NOREG) break;
    if (in->sub < NBC__C_EQ || in->sub > NBC__C_HS) break;
    if (in->type == NBC__T_S64) op = NBC__OP_SETP_S64;
    if (in->type == NBC__T_S32) op = NBC__OP_SETP_S32;
    if (in->type == NBC__T_U64 || in->type == NBC__T_U32) {
      /* unsigned lt le gt ge are the lo ls hi hs comparisons */
      static const uint8_t as_unsigned[] = {[NBC__C_LT] = NBC__C_LO, [NBC__C_LE] = NBC__C_LS,
                                            [NBC__C_GT] = NBC__C_HI, [NBC__C_GE] = NBC__C_HS};
      if (in->sub >= NBC__C_LT && in->sub <= NBC__C_GE) in->sub = as_unsigned[in->sub];
      op = in->type == NBC__T_U64 ? NBC__OP_SETP_U64 : NBC__OP_SETP_U32;
    }
    break;
  case NBC__OP_SELP:
    if (!(in->flags & NBC__F_NEG_B) && (bits_of(in->type) == 64 || in->type == NBC__T_F64))
      op = NBC__OP_SELP64;
    break;
  case NBC__OP_LD:
    if (in->space == NBC__S_PARAM && in->vec == 1 && !(in->flags & NBC__F_LOCALSYM) &&
        in->addr_reg == NBC__NOREG) {
      if (in->type == NBC__T_U64 || in->type == NBC__T_S64 || in->type == NBC__T_F64)
        op = NBC__OP_LD_PARAM64;
      if (in->type == NBC__T_U32 || in->type == NBC__T_F32) op = NBC__OP_LD_PARAM32;
    }
    break;
  default:
    break;
  }
  if (op >= 0) in->op = (uint8_t)op;
}
