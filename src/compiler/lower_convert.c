/* lower_convert.c — numba's conversions between kernel-language values in NVVM IR: constants
 * of each type, the truth of a value, and nbc__lower_convert (integer widening and narrowing,
 * int <-> float, float <-> float16, complex, Optional, tuples item by item), with the float16
 * helpers the arithmetic and comparisons share (a float16 is an i16 of its IEEE bits).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/lower.h"

/* ------------------------------------------------------------- float16 ----------------
 *
 * libNVVM 13 silently drops every computation on LLVM's `half` type (even fpext/fptrunc and
 * `ret half`), so a float16 is an i16 holding its IEEE bits everywhere (registers, memory,
 * parameters, returns). Converting to and from it goes through float32 or float64 with
 * @llvm.convert.{from,to}.fp16 (cvt.f32.f16 / cvt.rn.f16.f32 in PTX); float64 sources use
 * the .f64 form so a double is rounded to float16 once. + - * of two float16s, a * b + c and
 * comparisons are the native instructions numba-cuda's float16 operators compile to
 * (add.f16, sub.f16, mul.f16, fma.rn.f16, setp.<cmp>.f16), as inline PTX on the i16 bits;
 * other arithmetic whose result is float16 (/, **, mixed operands converted first...) computes
 * in float32 and rounds back after each operation: float32 carries more than 2 * 11 + 2 bits,
 * so the double rounding is innocuous and gives exactly the IEEE float16 results. */

/* The IEEE binary16 bits of a double, rounded once to nearest even. */
static uint16_t half_bits(double v) {
  uint64_t x;
  memcpy(&x, &v, 8);
  uint16_t sign = (uint16_t)((x >> 48) & 0x8000u);
  int e = (int)((x >> 52) & 0x7ff);
  uint64_t m = x & ((1ull << 52) - 1);
  if (e == 0x7ff) return (uint16_t)(sign | 0x7c00u | (m ? 0x200u : 0));
  if (e == 0) return sign; /* double subnormals are far below float16's smallest value */
  int exp = e - 1023;
  if (exp > 15) return (uint16_t)(sign | 0x7c00u);
  uint64_t sig = m | (1ull << 52);
  /* Bits dropped: 42 for a normal result (11 kept), more for a subnormal one. */
  int shift = exp >= -14 ? 42 : 28 - exp;
  if (shift > 54) return sign; /* below half the smallest subnormal */
  uint64_t q = sig >> shift, rem = sig & ((1ull << shift) - 1), mid = 1ull << (shift - 1);
  if (rem > mid || (rem == mid && (q & 1))) q++;
  /* A carry out of the mantissa moves to the next exponent (or infinity) by itself. */
  uint32_t bits = exp >= -14 ? ((uint32_t)(exp + 15) << 10) + (uint32_t)q - 1024u : (uint32_t)q;
  return (uint16_t)(sign | bits);
}

/* The value of float16 bits (exact in a float). */
static double half_value(uint16_t h) {
  int e = (h >> 10) & 0x1f;
  double m = h & 0x3ff;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
  return (h & 0x8000u) ? -v : v;
}

/* Operand text that is an integer literal / a hex float literal (constants fold here, so
 * that float16 constants never depend on libNVVM folding the conversion intrinsics). */
bool nbc__lower_convert_int_literal(const char *v, long *pv) {
  if (!v || !((*v >= '0' && *v <= '9') || *v == '-')) return false;
  char *end;
  *pv = strtol(v, &end, 10);
  return *end == '\0';
}

bool nbc__lower_convert_float_literal(const char *v, double *pv) {
  if (!v || strncmp(v, "0x", 2) != 0 || strlen(v) != 18) return false;
  char *end;
  uint64_t bits = strtoull(v + 2, &end, 16);
  if (*end) return false;
  memcpy(pv, &bits, 8);
  return true;
}

/* float16 bits (i16) -> float, exactly. */
static const char *half_to_float(nbc__lowerer *L, const char *v) {
  long k;
  if (nbc__lower_convert_int_literal(v, &k))
    return nbc__lower_const_float(L, nbc__type_scalar(NBC__T_FLOAT32), half_value((uint16_t)k));
  nbc__lower_declare(L, "declare float @llvm.convert.from.fp16.f32(i16) nounwind readnone");
  const char *x = nbc__lower_tmp(L);
  nbc__lower_emit(L, "%s = call float @llvm.convert.from.fp16.f32(i16 %s)", x, v);
  return x;
}

/* float or double -> float16 bits, rounded once to nearest even. */
static const char *float_to_half(nbc__lowerer *L, const char *v, bool is_double) {
  double d;
  if (nbc__lower_convert_float_literal(v, &d))
    return nbc__arena_printf(L->arena, "%d", (int)(int16_t)half_bits(d));
  const char *ty = is_double ? "double" : "float";
  const char *name = is_double ? "llvm.convert.to.fp16.f64" : "llvm.convert.to.fp16.f32";
  nbc__lower_declare(
      L, nbc__arena_printf(L->arena, "declare i16 @%s(%s) nounwind readnone", name, ty));
  const char *x = nbc__lower_tmp(L);
  nbc__lower_emit(L, "%s = call i16 @%s(%s %s)", x, name, ty, v);
  return x;
}

/* One native float16 instruction on float16 bits (i16 values): `instr $0, $1, $2[, $3];`.
 * Constants fold here (the asm is opaque to LLVM): the exact result in double (a product or
 * sum of float16s, or a * b + c, is exact there), rounded once, is the instruction's. */
const char *nbc__lower_convert_half_instr(nbc__lowerer *L, const char *instr, const char *a,
                                          const char *b, const char *c) {
  long ka, kb, kc = 0;
  if (nbc__lower_convert_int_literal(a, &ka) && nbc__lower_convert_int_literal(b, &kb) &&
      (!c || nbc__lower_convert_int_literal(c, &kc))) {
    double x = half_value((uint16_t)ka), y = half_value((uint16_t)kb), r;
    if (c)
      r = x * y + half_value((uint16_t)kc);
    else
      r = instr[0] == 'a' ? x + y : instr[0] == 's' ? x - y : x * y;
    return nbc__arena_printf(L->arena, "%d", (int)(int16_t)half_bits(r));
  }
  const char *x = nbc__lower_tmp(L);
  if (c)
    nbc__lower_emit(L,
                    "%s = call i16 asm \"%s $0, $1, $2, $3;\", \"=h,h,h,h\"(i16 %s, i16 %s, "
                    "i16 %s)",
                    x, instr, a, b, c);
  else
    nbc__lower_emit(L, "%s = call i16 asm \"%s $0, $1, $2;\", \"=h,h,h\"(i16 %s, i16 %s)", x,
                    instr, a, b);
  return x;
}

const char *nbc__lower_half_unary(nbc__lowerer *L, const char *instr, const char *v) {
  long k;
  bool neg = strcmp(instr, "neg.f16") == 0;
  if (nbc__lower_convert_int_literal(v, &k)) /* both act on the sign bit alone */
    return nbc__arena_printf(
        L->arena, "%d", (int)(int16_t)(neg ? ((uint16_t)k ^ 0x8000) : ((uint16_t)k & 0x7fff)));
  const char *x = nbc__lower_tmp(L);
  nbc__lower_emit(L, "%s = call i16 asm \"%s $0, $1;\", \"=h,h\"(i16 %s)", x, instr, v);
  return x;
}

/* A float16 comparison (setp.<cmp>.f16) as an i1. */
const char *nbc__lower_convert_half_compare(nbc__lowerer *L, const char *cmp, const char *a,
                                            const char *b) {
  long ka, kb;
  if (nbc__lower_convert_int_literal(a, &ka) &&
      nbc__lower_convert_int_literal(b, &kb)) { /* constants fold (NaN: unordered) */
    double x = half_value((uint16_t)ka), y = half_value((uint16_t)kb);
    bool r = strcmp(cmp, "eq") == 0    ? x == y
             : strcmp(cmp, "neu") == 0 ? !(x == y)
             : strcmp(cmp, "lt") == 0  ? x < y
             : strcmp(cmp, "le") == 0  ? x <= y
             : strcmp(cmp, "gt") == 0  ? x > y
                                       : x >= y;
    return r ? "true" : "false";
  }
  const char *r = nbc__lower_tmp(L), *x = nbc__lower_tmp(L);
  nbc__lower_emit(L,
                  "%s = call i16 asm \"{ .reg .pred p; setp.%s.f16 p, $1, $2; "
                  "selp.u16 $0, 1, 0, p; }\", \"=h,h,h\"(i16 %s, i16 %s)",
                  r, cmp, a, b);
  nbc__lower_emit(L, "%s = icmp ne i16 %s, 0", x, r);
  return x;
}

const char *nbc__lower_const_int(nbc__lowerer *L, const nbc__type *t, int64_t v) {
  if (is_bool(t)) return v ? "true" : "false";
  if (is_float(t)) return nbc__lower_const_float(L, t, (double)v);
  return nbc__arena_printf(L->arena, "%lld", (long long)v);
}

const char *nbc__lower_const_float(nbc__lowerer *L, const nbc__type *t, double v) {
  /* LLVM wants float constants written as the double that holds the value exactly. */
  if (t->kind == NBC__T_FLOAT32) v = (double)(float)v;
  if (t->kind == NBC__T_FLOAT16) /* an i16 holding the IEEE bits, written signed */
    return nbc__arena_printf(L->arena, "%d", (int)(int16_t)half_bits(v));
  uint64_t bits;
  memcpy(&bits, &v, 8);
  return nbc__arena_printf(L->arena, "0x%016llX", (unsigned long long)bits);
}

const char *nbc__lower_zero(nbc__lowerer *L, const nbc__type *t) {
  if (!t) return "null";
  if (t->kind == NBC__T_ENUM) t = t->dtype; /* a member is its value */
  if (t->kind == NBC__T_ARRAY || t->kind == NBC__T_TUPLE || t->kind == NBC__T_VECTOR ||
      t->kind == NBC__T_OPTIONAL || nbc__type_is_complex(t) || nbc__type_is_charseq(t))
    return "zeroinitializer";
  if (is_bool(t)) return "false";
  if (is_float(t)) return nbc__lower_const_float(L, t, 0.0);
  if (is_int(t) || nbc__type_is_datetime(t) || nbc__type_is_bf16(t)) return "0";
  return "null";
}

/* --------------------------------------------------------------- conversions -------- */

const char *nbc__lower_truth(nbc__lowerer *L, nbc__lval v) {
  if (!v.type) return "false";
  if (is_bool(v.type)) return v.v;
  const char *x = tmp(L);
  if (is_int(v.type)) {
    EMIT("%s = icmp ne %s %s, 0", x, ltype(L, v.type), v.v);
  } else if (nbc__lower_is_half(
                 v.type)) { /* -0.0 is false too: compare the value, not the bits */
    EMIT("%s = fcmp une float %s, 0.0", x, half_to_float(L, v.v));
  } else if (nbc__type_is_bf16(v.type)) { /* its float32 value, exactly */
    EMIT("%s = fcmp une float %s, 0.0", x, nbc__lower_convert(L, v, T(NBC__T_FLOAT32)).v);
  } else if (is_float(v.type)) {
    EMIT("%s = fcmp une %s %s, %s", x, ltype(L, v.type), v.v,
         nbc__lower_const_float(L, v.type, 0.0));
  } else if (v.type->kind == NBC__T_NONE || v.type->kind == NBC__T_VOID) {
    return "false";
  } else if (v.type->kind == NBC__T_TUPLE) {
    return v.type->count ? "true" : "false";
  } else if (nbc__type_is_complex(v.type)) {
    return nbc__lower_complex_truth(L, v);
  } else {
    return "true";
  }
  return x;
}

/* Conversions to and from numba's Optional: None is (undef, false), a value (v, true); an
 * Optional used as a value raises numba's TypeError when it is None. */
static nbc__lval optional_convert(nbc__lowerer *L, nbc__lval v, const nbc__type *to) {
  const nbc__type *from = v.type;
  if (to->kind == NBC__T_OPTIONAL) {
    const char *ty = ltype(L, to), *x = tmp(L);
    if (from->kind == NBC__T_NONE || from->kind == NBC__T_VOID) {
      EMIT("%s = insertvalue %s undef, i1 false, 1", x, ty);
      return (nbc__lval){to, x};
    }
    const char *valid = "true";
    nbc__lval data = v;
    if (from->kind == NBC__T_OPTIONAL) {
      const char *d = tmp(L), *b = tmp(L), *fty = ltype(L, from);
      EMIT("%s = extractvalue %s %s, 0", d, fty, v.v);
      EMIT("%s = extractvalue %s %s, 1", b, fty, v.v);
      data = (nbc__lval){from->dtype, d};
      valid = b;
    }
    data = nbc__lower_convert(L, data, to->dtype);
    const char *y = tmp(L);
    EMIT("%s = insertvalue %s undef, %s %s, 0", x, ty, ltype(L, to->dtype), data.v);
    EMIT("%s = insertvalue %s %s, i1 %s, 1", y, ty, x, valid);
    return (nbc__lval){to, y};
  }
  const char *fty = ltype(L, from), *valid = tmp(L), *none = tmp(L), *d = tmp(L);
  EMIT("%s = extractvalue %s %s, 1", valid, fty, v.v);
  EMIT("%s = xor i1 %s, true", none, valid);
  const char *msg =
      nbc__arena_printf(L->arena, "expected %s, got None", nbc__type_name(L->ctx, from->dtype));
  nbc__lower_raise_if(L, none, "TypeError", msg, NULL);
  EMIT("%s = extractvalue %s %s, 0", d, fty, v.v);
  return nbc__lower_convert(L, (nbc__lval){from->dtype, d}, to);
}

/* numba-cuda's float16 conversions, one cvt each as inline PTX: float16 -> integer rounds to
 * the nearest (ties to even; NaN gives 0, out of range saturates), integer -> float16 rounds
 * to nearest, float16 -> float64 is exact. 8-bit integers travel in 16-bit registers. */
static nbc__lval half_cvt(nbc__lowerer *L, nbc__lval v, const nbc__type *to) {
  const nbc__type *from = v.type;
  bool out_half = nbc__lower_is_half(to);
  const nbc__type *it = out_half ? from : to; /* the integer side, if any */
  int bits = is_int(it) ? nbc__type_bits(it) : 64;
  char sign = is_int(it) && nbc__type_is_signed(it) ? 's' : 'u';
  const char *reg = bits <= 16 ? "h" : bits == 32 ? "r" : "l";
  const char *rty = bits <= 16 ? "i16" : bits == 32 ? "i32" : "i64";
  const char *x = tmp(L);
  if (out_half) { /* integer -> float16 */
    const char *src = v.v;
    if (bits == 8) {
      src = tmp(L);
      EMIT("%s = %s i8 %s to i16", src, sign == 's' ? "sext" : "zext", v.v);
    }
    EMIT("%s = call i16 asm \"cvt.rn.f16.%c%d $0, $1;\", \"=h,%s\"(%s %s)", x, sign, bits, reg,
         rty, src);
    return (nbc__lval){to, x};
  }
  if (to->kind == NBC__T_FLOAT64) { /* float16 -> float64 */
    EMIT("%s = call double asm \"cvt.f64.f16 $0, $1;\", \"=d,h\"(i16 %s)", x, v.v);
    return (nbc__lval){to, x};
  }
  EMIT("%s = call %s asm \"cvt.rni.%c%d.f16 $0, $1;\", \"=%s,h\"(i16 %s)", x, rty, sign, bits,
       reg, v.v); /* float16 -> integer */
  if (bits == 8) {
    const char *t = tmp(L);
    EMIT("%s = trunc i16 %s to i8", t, x);
    x = t;
  }
  return (nbc__lval){to, x};
}

nbc__lval nbc__lower_convert(nbc__lowerer *L, nbc__lval v, const nbc__type *to) {
  const nbc__type *from = v.type;
  if (!to || !from || nbc__type_equal(from, to)) return v;
  if (nbc__lower_failed(L)) return (nbc__lval){to, nbc__lower_zero(L, to)};
  if (from->kind == NBC__T_OPTIONAL || to->kind == NBC__T_OPTIONAL)
    return optional_convert(L, v, to);
  if (nbc__type_is_int_enum(from)) /* an IntEnum member is its int value */
    return nbc__lower_convert(L, (nbc__lval){from->dtype, v.v}, to);
  if (nbc__type_is_datetime(from) && to->kind == NBC__T_INT64) /* int(td): the count itself */
    return (nbc__lval){to, v.v};
  if (nbc__type_is_complex(from) || nbc__type_is_complex(to))
    return nbc__lower_complex_convert(L, v, to);
  if (nbc__type_is_bf16(from) || nbc__type_is_bf16(to))
    return nbc__lower_bf16_convert(L, v, to);
  nbc__lval r = {to, NULL};
  long lit;
  bool constant = nbc__lower_convert_int_literal(v.v, &lit) ||
                  nbc__lower_convert_float_literal(v.v, &(double){0});
  if (!constant && ((nbc__lower_is_half(from) && (is_int(to) || to->kind == NBC__T_FLOAT64)) ||
                    (nbc__lower_is_half(to) && is_int(from))))
    return half_cvt(L, v, to);
  if (nbc__lower_is_half(from) && is_int(to)) {
    /* numba-cuda casts float16 to integers with cvt.rni: rounded to the nearest integer
     * (ties to even), NaN gives 0, out-of-range values saturate (seen on the H200:
     * int(x * float16(100)) differed from numba-cuda when truncated). */
    const char *f = half_to_float(L, v.v);
    double d;
    nbc__lval rounded = {T(NBC__T_FLOAT32),
                         nbc__lower_convert_float_literal(f, &d)
                             ? nbc__lower_const_float(L, T(NBC__T_FLOAT32), rint(d))
                             : nbc__lower_call1(L, "float", "__nv_rintf", f)};
    nbc__lval i = nbc__lower_convert(L, rounded, to);
    const char *nan = tmp(L), *x = tmp(L), *ty = ltype(L, to);
    EMIT("%s = fcmp uno float %s, %s", nan, f, f);
    EMIT("%s = select i1 %s, %s 0, %s %s", x, nan, ty, ty, i.v);
    return (nbc__lval){to, x};
  }
  if (nbc__lower_is_half(from) && (is_bool(to) || is_float(to))) {
    /* Through float32, which holds every float16 exactly: ints saturate as numba's fptosi
     * of a half does, bool is != 0.0. */
    nbc__lval f = {T(NBC__T_FLOAT32), half_to_float(L, v.v)};
    return nbc__lower_convert(L, f, to);
  }
  if (nbc__lower_is_half(to) && (is_int(from) || is_bool(from) || is_float(from))) {
    /* Small integers and bool are exact in float32; wider ones go through float64, whose
     * rounding cannot change the float16 result (they overflow float16 long before). */
    const nbc__type *via = from->kind == NBC__T_FLOAT32 ? T(NBC__T_FLOAT32)
                           : (is_bool(from) || (is_int(from) && nbc__type_bits(from) <= 16))
                               ? T(NBC__T_FLOAT32)
                               : T(NBC__T_FLOAT64);
    long k;
    if (is_bool(from) && (strcmp(v.v, "true") == 0 || strcmp(v.v, "false") == 0)) {
      r.v = float_to_half(L, nbc__lower_const_float(L, T(NBC__T_FLOAT64), v.v[0] == 't'), true);
      return r; /* a constant stays one: the float16 instructions' asm folds constants only */
    }
    if (nbc__lower_convert_int_literal(v.v, &k) && (nbc__type_is_signed(from) || k >= 0)) {
      r.v = float_to_half(L, nbc__lower_const_float(L, T(NBC__T_FLOAT64), (double)k), true);
      return r; /* (float16 holds at most 65504: the double rounding cannot matter) */
    }
    nbc__lval f = nbc__lower_convert(L, v, via);
    r.v = float_to_half(L, f.v, via->kind == NBC__T_FLOAT64);
    return r;
  }
  if (is_bool(to) && (is_int(from) || is_float(from))) {
    r.v = nbc__lower_truth(L, v);
    return r;
  }
  const char *ft = ltype(L, from), *tt = ltype(L, to);
  const char *x = tmp(L);
  if ((is_int(from) || is_bool(from)) && is_int(to)) {
    int fb = nbc__type_bits(from), tb = nbc__type_bits(to);
    if (fb == tb) return (nbc__lval){to, v.v};
    if (fb > tb)
      EMIT("%s = trunc %s %s to %s", x, ft, v.v, tt);
    else if (is_bool(from) || !nbc__type_is_signed(from))
      EMIT("%s = zext %s %s to %s", x, ft, v.v, tt);
    else
      EMIT("%s = sext %s %s to %s", x, ft, v.v, tt);
  } else if ((is_int(from) || is_bool(from)) && is_float(to)) {
    bool sgn = is_int(from) && nbc__type_is_signed(from);
    EMIT("%s = %s %s %s to %s", x, sgn ? "sitofp" : "uitofp", ft, v.v, tt);
  } else if (is_float(from) && is_int(to)) {
    EMIT("%s = %s %s %s to %s", x, nbc__type_is_signed(to) ? "fptosi" : "fptoui", ft, v.v, tt);
  } else if (is_float(from) && is_float(to)) {
    EMIT("%s = %s %s %s to %s", x,
         nbc__type_bits(from) < nbc__type_bits(to) ? "fpext" : "fptrunc", ft, v.v, tt);
  } else if (from->kind == NBC__T_TUPLE && to->kind == NBC__T_TUPLE &&
             from->count == to->count) {
    const char *cur = "undef";
    for (int i = 0; i < to->count; i++) {
      nbc__lval item = {from->items[i], tmp(L)};
      EMIT("%s = extractvalue %s %s, %d", item.v, ft, v.v, i);
      item = nbc__lower_convert(L, item, to->items[i]);
      const char *n = tmp(L);
      EMIT("%s = insertvalue %s %s, %s %s, %d", n, tt, cur, ltype(L, to->items[i]), item.v, i);
      cur = n;
    }
    return (nbc__lval){to, cur};
  } else if (from->kind == NBC__T_ARRAY && to->kind == NBC__T_ARRAY &&
             nbc__type_equal(from->dtype, to->dtype) && from->ndim == to->ndim) {
    return (nbc__lval){to, v.v}; /* a layout or readonly change: same representation */
  } else if ((from->kind == NBC__T_NONE || from->kind == NBC__T_VOID) && !is_int(to) &&
             !is_float(to)) {
    return (nbc__lval){to, nbc__lower_zero(L, to)};
  } else {
    NBC__BUG(L->ctx, "cannot convert %s to %s", nbc__type_name(L->ctx, from),
             nbc__type_name(L->ctx, to));
    return (nbc__lval){to, nbc__lower_zero(L, to)};
  }
  r.v = x;
  return r;
}
