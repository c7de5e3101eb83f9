/* lower_expr.c — expressions to NVVM IR: numba's conversions and arithmetic semantics,
 * comparisons, short-circuit logic, builtins, math through libdevice and calls.
 *
 * How it works. nbc__lower_expr lowers a node to a value of node->type and then applies
 * node->cast (infer.c's record of numba's implicit conversions). Arithmetic converts both
 * operands to the operation's result type first, which is what numba's implementations do
 * (int32 + int32 is an int64 add, int64 / int64 is an fdiv of two float64), and then uses
 * the exact semantics numba-cuda gives on the GPU (shared/reference/numba_semantics.md):
 *
 *   - integer // and % floor toward -inf; a zero divisor gives 0, MIN // -1 gives 0;
 *   - shifts by the width or more (or by a negative amount) give 0, or -1 for a right
 *     shift of a negative number, written as selects so LLVM never sees a poison shift;
 *   - float // and % are numba's port of CPython's float_divmod (so 1.0 // inf is nan on
 *     the GPU, as numba-cuda gives), with a zero divisor giving inf/nan;
 *   - ** of integers is exponentiation by squaring (unrolled for constant exponents, as
 *     numba's static_power_impl does); a negative exponent gives 0 unless the base is
 *     +-1, and 0 ** -n gives the type's minimum; float ** float is libdevice pow;
 *   - float to int conversion is fptosi/fptoui, which on the GPU saturates (NaN ->
 *     INT64_MIN), exactly what numba emits.
 *
 * Arrays, tuples and the CUDA intrinsics are in lower_array.c; math through libdevice,
 * builtins, calls and the dispatch over node kinds are here.
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
static bool int_literal(const char *v, long *pv) {
  if (!v || !((*v >= '0' && *v <= '9') || *v == '-')) return false;
  char *end;
  *pv = strtol(v, &end, 10);
  return *end == '\0';
}

static bool float_literal(const char *v, double *pv) {
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
  if (int_literal(v, &k))
    return nbc__lower_const_float(L, nbc__type_scalar(NBC__T_FLOAT32), half_value((uint16_t)k));
  nbc__lower_declare(L, "declare float @llvm.convert.from.fp16.f32(i16) nounwind readnone");
  const char *x = nbc__lower_tmp(L);
  nbc__lower_emit(L, "%s = call float @llvm.convert.from.fp16.f32(i16 %s)", x, v);
  return x;
}

/* float or double -> float16 bits, rounded once to nearest even. */
static const char *float_to_half(nbc__lowerer *L, const char *v, bool is_double) {
  double d;
  if (float_literal(v, &d))
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
static const char *half_instr(nbc__lowerer *L, const char *instr, const char *a, const char *b,
                              const char *c) {
  long ka, kb, kc = 0;
  if (int_literal(a, &ka) && int_literal(b, &kb) && (!c || int_literal(c, &kc))) {
    double x = half_value((uint16_t)ka), y = half_value((uint16_t)kb), r;
    if (c)
      r = x * y + half_value((uint16_t)kc);
    else
      r = instr[0] == 'a' ? x + y : instr[0] == 's' ? x - y : x * y;
    return nbc__arena_printf(L->arena, "%d", (int)(int16_t)half_bits(r));
  }
  const char *x = nbc__lower_tmp(L);
  if (c)
    nbc__lower_emit(L, "%s = call i16 asm \"%s $0, $1, $2, $3;\", \"=h,h,h,h\"(i16 %s, i16 %s, "
                    "i16 %s)", x, instr, a, b, c);
  else
    nbc__lower_emit(L, "%s = call i16 asm \"%s $0, $1, $2;\", \"=h,h,h\"(i16 %s, i16 %s)", x,
                    instr, a, b);
  return x;
}

const char *nbc__lower_half_unary(nbc__lowerer *L, const char *instr, const char *v) {
  long k;
  bool neg = strcmp(instr, "neg.f16") == 0;
  if (int_literal(v, &k)) /* both act on the sign bit alone */
    return nbc__arena_printf(L->arena, "%d",
                             (int)(int16_t)(neg ? ((uint16_t)k ^ 0x8000) : ((uint16_t)k & 0x7fff)));
  const char *x = nbc__lower_tmp(L);
  nbc__lower_emit(L, "%s = call i16 asm \"%s $0, $1;\", \"=h,h\"(i16 %s)", x, instr, v);
  return x;
}

/* A float16 comparison (setp.<cmp>.f16) as an i1. */
static const char *half_compare(nbc__lowerer *L, const char *cmp, const char *a, const char *b) {
  long ka, kb;
  if (int_literal(a, &ka) && int_literal(b, &kb)) { /* constants fold (NaN: unordered) */
    double x = half_value((uint16_t)ka), y = half_value((uint16_t)kb);
    bool r = strcmp(cmp, "eq") == 0   ? x == y
             : strcmp(cmp, "neu") == 0 ? !(x == y)
             : strcmp(cmp, "lt") == 0  ? x < y
             : strcmp(cmp, "le") == 0  ? x <= y
             : strcmp(cmp, "gt") == 0  ? x > y
                                       : x >= y;
    return r ? "true" : "false";
  }
  const char *r = nbc__lower_tmp(L), *x = nbc__lower_tmp(L);
  nbc__lower_emit(L, "%s = call i16 asm \"{ .reg .pred p; setp.%s.f16 p, $1, $2; "
                  "selp.u16 $0, 1, 0, p; }\", \"=h,h,h\"(i16 %s, i16 %s)", r, cmp, a, b);
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

static bool holds_bool(const nbc__type *t) {
  if (is_bool(t)) return true;
  if (t && t->kind == NBC__T_TUPLE)
    for (int i = 0; i < t->count; i++)
      if (holds_bool(t->items[i])) return true;
  return false;
}

/* Converts a value between its register form (booleans as i1) and its memory/ABI form
 * (booleans as i8), recursively through tuples: `return (a < b, a + b)` is an {i1, i64} value
 * but an {i8, i64} in memory and in a C-ABI return. to_memory chooses the direction. */
static const char *convert_bools(nbc__lowerer *L, const nbc__type *t, const char *v,
                                 bool to_memory) {
  if (!holds_bool(t)) return v;
  if (is_bool(t)) {
    const char *x = tmp(L);
    if (to_memory)
      EMIT("%s = zext i1 %s to i8", x, v);
    else
      EMIT("%s = icmp ne i8 %s, 0", x, v);
    return x;
  }
  const char *from = to_memory ? nbc__lower_ltype(L, t) : nbc__lower_mtype(L, t);
  const char *into = to_memory ? nbc__lower_mtype(L, t) : nbc__lower_ltype(L, t);
  const char *acc = "undef";
  for (int i = 0; i < t->count; i++) {
    const nbc__type *it = t->items[i];
    const char *item = tmp(L);
    EMIT("%s = extractvalue %s %s, %d", item, from, v, i);
    const char *conv = convert_bools(L, it, item, to_memory);
    const char *next = tmp(L);
    EMIT("%s = insertvalue %s %s, %s %s, %d", next, into, acc,
         to_memory ? nbc__lower_mtype(L, it) : nbc__lower_ltype(L, it), conv, i);
    acc = next;
  }
  return acc;
}

const char *nbc__lower_to_memory(nbc__lowerer *L, nbc__lval v) {
  return convert_bools(L, v.type, v.v, true);
}

const char *nbc__lower_from_memory(nbc__lowerer *L, const nbc__type *t, const char *v) {
  return convert_bools(L, t, v, false);
}

nbc__lval nbc__lower_load_aligned(nbc__lowerer *L, const nbc__type *t, const char *ptr,
                                  int align) {
  const char *mt = nbc__lower_mtype(L, t);
  const char *x = tmp(L);
  if (align)
    EMIT("%s = load %s, %s* %s, align %d", x, mt, mt, ptr, align);
  else
    EMIT("%s = load %s, %s* %s", x, mt, mt, ptr);
  return (nbc__lval){t, convert_bools(L, t, x, false)};
}

nbc__lval nbc__lower_load(nbc__lowerer *L, const nbc__type *t, const char *ptr) {
  return nbc__lower_load_aligned(L, t, ptr, 0);
}

void nbc__lower_store_aligned(nbc__lowerer *L, nbc__lval v, const char *ptr, int align) {
  const char *mt = nbc__lower_mtype(L, v.type);
  const char *x = nbc__lower_to_memory(L, v);
  if (align)
    EMIT("store %s %s, %s* %s, align %d", mt, x, mt, ptr, align);
  else
    EMIT("store %s %s, %s* %s", mt, x, mt, ptr);
}

void nbc__lower_store(nbc__lowerer *L, nbc__lval v, const char *ptr) {
  nbc__lower_store_aligned(L, v, ptr, 0);
}

/* Declares a function once and calls it; returns the result operand. */
const char *nbc__lower_call_fn(nbc__lowerer *L, const char *ret, const char *name,
                               const char *argtys, const char *args) {
  nbc__lower_declare(L, nbc__arena_printf(L->arena, "declare %s @%s(%s)", ret, name, argtys));
  if (strcmp(ret, "void") == 0) {
    EMIT("call void @%s(%s)", name, args);
    return NULL;
  }
  const char *x = tmp(L);
  EMIT("%s = call %s @%s(%s)", x, ret, name, args);
  return x;
}

const char *nbc__lower_call1(nbc__lowerer *L, const char *ty, const char *name,
                             const char *a) {
  return nbc__lower_call_fn(L, ty, name, ty, nbc__arena_printf(L->arena, "%s %s", ty, a));
}

const char *nbc__lower_call2(nbc__lowerer *L, const char *ty, const char *name, const char *a,
                             const char *b) {
  return nbc__lower_call_fn(L, ty, name, nbc__arena_printf(L->arena, "%s, %s", ty, ty),
                            nbc__arena_printf(L->arena, "%s %s, %s %s", ty, a, ty, b));
}

const char *nbc__lower_intrinsic_suffix(const nbc__type *t) {
  return t->kind == NBC__T_FLOAT32 ? "f32" : t->kind == NBC__T_FLOAT16 ? "f16" : "f64";
}

/* --------------------------------------------------------------- conversions -------- */

const char *nbc__lower_truth(nbc__lowerer *L, nbc__lval v) {
  if (!v.type) return "false";
  if (is_bool(v.type)) return v.v;
  const char *x = tmp(L);
  if (is_int(v.type)) {
    EMIT("%s = icmp ne %s %s, 0", x, ltype(L, v.type), v.v);
  } else if (nbc__lower_is_half(v.type)) { /* -0.0 is false too: compare the value, not the bits */
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
  const char *msg = nbc__arena_printf(L->arena, "expected %s, got None",
                                      nbc__type_name(L->ctx, from->dtype));
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
  if (nbc__type_is_bf16(from) || nbc__type_is_bf16(to)) return nbc__lower_bf16_convert(L, v, to);
  nbc__lval r = {to, NULL};
  long lit;
  bool constant = int_literal(v.v, &lit) || float_literal(v.v, &(double){0});
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
                         float_literal(f, &d)
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
    if (int_literal(v.v, &k) && (nbc__type_is_signed(from) || k >= 0)) {
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

/* --------------------------------------------------------------- integer ops -------- */

static const char *min_of(nbc__lowerer *L, const nbc__type *t) {
  int bits = nbc__type_bits(t);
  if (bits >= 64) return "-9223372036854775808";
  return nbc__arena_printf(L->arena, "%lld", -(1LL << (bits - 1)));
}

/* Python's floor division / modulo with numba's zero-divisor and overflow results. */
static const char *int_divmod(nbc__lowerer *L, const nbc__type *t, const char *a, const char *b,
                              bool want_div) {
  const char *ty = ltype(L, t);
  const char *zero = tmp(L), *safe = tmp(L), *bad = tmp(L);
  EMIT("%s = icmp eq %s %s, 0", zero, ty, b);
  if (!nbc__type_is_signed(t)) {
    EMIT("%s = select i1 %s, %s 1, %s %s", safe, zero, ty, ty, b);
    const char *r = tmp(L), *res = tmp(L);
    EMIT("%s = %s %s %s, %s", r, want_div ? "udiv" : "urem", ty, a, safe);
    EMIT("%s = select i1 %s, %s 0, %s %s", res, zero, ty, ty, r);
    (void)bad;
    return res;
  }
  const char *amin = tmp(L), *bm1 = tmp(L), *ovf = tmp(L);
  EMIT("%s = icmp eq %s %s, %s", amin, ty, a, min_of(L, t));
  EMIT("%s = icmp eq %s %s, -1", bm1, ty, b);
  EMIT("%s = and i1 %s, %s", ovf, amin, bm1);
  EMIT("%s = or i1 %s, %s", bad, zero, ovf);
  /* The divisor is replaced by 1 where the result is forced, so sdiv never traps. */
  EMIT("%s = select i1 %s, %s 1, %s %s", safe, bad, ty, ty, b);
  const char *q = tmp(L), *r = tmp(L), *rnz = tmp(L), *x = tmp(L), *sd = tmp(L), *adj = tmp(L);
  EMIT("%s = sdiv %s %s, %s", q, ty, a, safe);
  EMIT("%s = srem %s %s, %s", r, ty, a, safe);
  EMIT("%s = icmp ne %s %s, 0", rnz, ty, r);
  EMIT("%s = xor %s %s, %s", x, ty, r, safe);
  EMIT("%s = icmp slt %s %s, 0", sd, ty, x);
  EMIT("%s = and i1 %s, %s", adj, rnz, sd);
  const char *fixed = tmp(L), *res = tmp(L);
  if (want_div) {
    const char *q1 = tmp(L);
    EMIT("%s = sub %s %s, 1", q1, ty, q);
    EMIT("%s = select i1 %s, %s %s, %s %s", fixed, adj, ty, q1, ty, q);
  } else {
    const char *r1 = tmp(L);
    EMIT("%s = add %s %s, %s", r1, ty, r, safe);
    EMIT("%s = select i1 %s, %s %s, %s %s", fixed, adj, ty, r1, ty, r);
  }
  EMIT("%s = select i1 %s, %s 0, %s %s", res, bad, ty, ty, fixed);
  return res;
}

/* Shifts whose amount is out of range give what the GPU gives numba-cuda: 0, or the sign
 * for an arithmetic right shift. */
static const char *int_shift(nbc__lowerer *L, const nbc__type *t, const char *a, const char *b,
                             bool left) {
  const char *ty = ltype(L, t);
  int bits = nbc__type_bits(t);
  const char *big = tmp(L), *amt = tmp(L), *s = tmp(L), *res = tmp(L);
  EMIT("%s = icmp uge %s %s, %d", big, ty, b, bits);
  EMIT("%s = select i1 %s, %s 0, %s %s", amt, big, ty, ty, b);
  if (left) {
    EMIT("%s = shl %s %s, %s", s, ty, a, amt);
    EMIT("%s = select i1 %s, %s 0, %s %s", res, big, ty, ty, s);
  } else if (nbc__type_is_signed(t)) {
    const char *fill = tmp(L);
    EMIT("%s = ashr %s %s, %s", s, ty, a, amt);
    EMIT("%s = ashr %s %s, %d", fill, ty, a, bits - 1);
    EMIT("%s = select i1 %s, %s %s, %s %s", res, big, ty, fill, ty, s);
  } else {
    EMIT("%s = lshr %s %s, %s", s, ty, a, amt);
    EMIT("%s = select i1 %s, %s 0, %s %s", res, big, ty, ty, s);
  }
  return res;
}

const char *nbc__lower_mul(nbc__lowerer *L, const nbc__type *t, const char *a,
                           const char *b) {
  const char *x = tmp(L);
  EMIT("%s = %s %s %s, %s", x, is_float(t) ? "fmul" : "mul", ltype(L, t), a, b);
  return x;
}

static const char *libdevice_pow(nbc__lowerer *L, const nbc__type *t, const char *a,
                                 const char *b) {
  return nbc__lower_call2(L, ltype(L, t), nbc__lower_libdevice_name(L, "pow", t), a, b);
}

/* base ** exp with an integer exponent (numba's int_power_impl / static_power_impl); rt is
 * the result type, base is already converted to it. */
const char *nbc__lower_int_power(nbc__lowerer *L, const nbc__type *rt, const char *base,
                                 nbc__lval e, nbc__node *enode) {
  const char *ty = ltype(L, rt);
  const char *one = nbc__lower_const_int(L, rt, 1);
  int64_t k;
  bool neg_const = false;
  if (enode && enode->kind == NBC__N_UNARY && enode->op == NBC__OP_NEG && enode->a &&
      enode->a->kind == NBC__N_INT && !enode->a->big) {
    k = -enode->a->value.i;
    neg_const = true;
  }
  if ((enode && enode->kind == NBC__N_INT && !enode->big && (k = enode->value.i, true)) ||
      neg_const) {
    if (k <= 0x10000 && k >= -0x10000) {
      bool invert = k < 0;
      int64_t n = invert ? -k : k;
      const char *res = one, *val = base;
      while (n != 0) {
        if (n & 1) res = nbc__lower_mul(L, rt, res, val);
        n >>= 1;
        if (n) val = nbc__lower_mul(L, rt, val, val);
      }
      if (!invert) return res;
      const char *x = tmp(L);
      if (is_float(rt)) {
        EMIT("%s = fdiv %s %s, %s", x, ty, one, res);
        return x;
      }
      /* 0 -> the type's minimum; +-1 stay; anything else -> 0. */
      const char *z = tmp(L), *p1 = tmp(L), *m1 = tmp(L), *pm = tmp(L), *r1 = tmp(L);
      EMIT("%s = icmp eq %s %s, 0", z, ty, res);
      EMIT("%s = icmp eq %s %s, 1", p1, ty, res);
      EMIT("%s = icmp eq %s %s, -1", m1, ty, res);
      EMIT("%s = or i1 %s, %s", pm, p1, m1);
      EMIT("%s = select i1 %s, %s %s, %s 0", r1, pm, ty, res, ty);
      EMIT("%s = select i1 %s, %s %s, %s %s", x, z, ty, min_of(L, rt), ty, r1);
      return x;
    }
  }
  /* The general loop, with allocas for r, a and exp. */
  const nbc__type *et = e.type;
  const char *ety = ltype(L, et);
  bool esigned = nbc__type_is_signed(et);
  const char *pr = nbc__lower_alloca(L, ty), *pa = nbc__lower_alloca(L, ty),
             *pe = nbc__lower_alloca(L, ety), *pres = nbc__lower_alloca(L, ty);
  EMIT("store %s %s, %s* %s", ty, one, ty, pr);
  EMIT("store %s %s, %s* %s", ty, base, ty, pa);
  int negl = nbc__lower_label(L), posl = nbc__lower_label(L), big = nbc__lower_label(L),
      loop = nbc__lower_label(L), body = nbc__lower_label(L), done = nbc__lower_label(L),
      end = nbc__lower_label(L), loopstart = nbc__lower_label(L);
  const char *isneg = "false";
  if (esigned) {
    isneg = tmp(L);
    EMIT("%s = icmp slt %s %s, 0", isneg, ety, e.v);
  }
  nbc__lower_condbr(L, isneg, negl, posl);
  /* Negative exponent. */
  nbc__lower_block(L, negl);
  const char *ne = tmp(L);
  EMIT("%s = sub %s 0, %s", ne, ety, e.v);
  EMIT("store %s %s, %s* %s", ety, ne, ety, pe);
  if (is_int(rt)) {
    const char *z = tmp(L), *p1 = tmp(L), *m1 = tmp(L), *odd = tmp(L), *odd1 = tmp(L),
               *mv = tmp(L), *r1 = tmp(L), *r2 = tmp(L), *r3 = tmp(L);
    EMIT("%s = icmp eq %s %s, 0", z, ty, base);
    EMIT("%s = icmp eq %s %s, 1", p1, ty, base);
    EMIT("%s = icmp eq %s %s, -1", m1, ty, base);
    EMIT("%s = and %s %s, 1", odd, ety, ne);
    EMIT("%s = icmp ne %s %s, 0", odd1, ety, odd);
    EMIT("%s = select i1 %s, %s -1, %s 1", mv, odd1, ty, ty);
    EMIT("%s = select i1 %s, %s %s, %s 0", r1, m1, ty, mv, ty);
    EMIT("%s = select i1 %s, %s 1, %s %s", r2, p1, ty, ty, r1);
    EMIT("%s = select i1 %s, %s %s, %s %s", r3, z, ty, min_of(L, rt), ty, r2);
    EMIT("store %s %s, %s* %s", ty, r3, ty, pres);
    nbc__lower_br(L, end);
  } else {
    nbc__lower_br(L, loopstart);
  }
  nbc__lower_block(L, posl);
  EMIT("store %s %s, %s* %s", ety, e.v, ety, pe);
  nbc__lower_br(L, loopstart);
  nbc__lower_block(L, loopstart);
  const char *ev = tmp(L), *isbig = tmp(L);
  EMIT("%s = load %s, %s* %s", ev, ety, ety, pe);
  EMIT("%s = icmp %s %s %s, 65536", isbig, esigned ? "sgt" : "ugt", ety, ev);
  nbc__lower_condbr(L, isbig, big, loop);
  /* Past numba's cutoff: math.pow in double. */
  nbc__lower_block(L, big);
  {
    nbc__lval bv = nbc__lower_convert(L, (nbc__lval){rt, base}, T(NBC__T_FLOAT64));
    nbc__lval xv = nbc__lower_convert(L, e, T(NBC__T_FLOAT64));
    const char *p = nbc__lower_call2(L, "double", "__nv_pow", bv.v, xv.v);
    nbc__lval pv = nbc__lower_convert(L, (nbc__lval){T(NBC__T_FLOAT64), p}, rt);
    EMIT("store %s %s, %s* %s", ty, pv.v, ty, pres);
    nbc__lower_br(L, end);
  }
  nbc__lower_block(L, loop);
  const char *cur = tmp(L), *nz = tmp(L);
  EMIT("%s = load %s, %s* %s", cur, ety, ety, pe);
  EMIT("%s = icmp ne %s %s, 0", nz, ety, cur);
  nbc__lower_condbr(L, nz, body, done);
  nbc__lower_block(L, body);
  {
    const char *bit = tmp(L), *set = tmp(L), *r = tmp(L), *a = tmp(L), *ra = NULL, *rn = tmp(L),
               *sh = tmp(L), *aa = NULL;
    EMIT("%s = and %s %s, 1", bit, ety, cur);
    EMIT("%s = icmp ne %s %s, 0", set, ety, bit);
    EMIT("%s = load %s, %s* %s", r, ty, ty, pr);
    EMIT("%s = load %s, %s* %s", a, ty, ty, pa);
    ra = nbc__lower_mul(L, rt, r, a);
    EMIT("%s = select i1 %s, %s %s, %s %s", rn, set, ty, ra, ty, r);
    EMIT("store %s %s, %s* %s", ty, rn, ty, pr);
    EMIT("%s = lshr %s %s, 1", sh, ety, cur);
    EMIT("store %s %s, %s* %s", ety, sh, ety, pe);
    aa = nbc__lower_mul(L, rt, a, a);
    EMIT("store %s %s, %s* %s", ty, aa, ty, pa);
    nbc__lower_br(L, loop);
  }
  nbc__lower_block(L, done);
  const char *rv = tmp(L);
  EMIT("%s = load %s, %s* %s", rv, ty, ty, pr);
  if (is_float(rt) && esigned) {
    /* 1 / r when the exponent was negative. */
    const char *inv = tmp(L), *sel = tmp(L);
    EMIT("%s = fdiv %s %s, %s", inv, ty, one, rv);
    EMIT("%s = select i1 %s, %s %s, %s %s", sel, isneg, ty, inv, ty, rv);
    rv = sel;
  }
  EMIT("store %s %s, %s* %s", ty, rv, ty, pres);
  nbc__lower_br(L, end);
  nbc__lower_block(L, end);
  const char *out = tmp(L);
  EMIT("%s = load %s, %s* %s", out, ty, ty, pres);
  return out;
}

/* --------------------------------------------------------------- float ops ---------- */

/* numba's real_divmod (CPython's float_divmod) including the zero-divisor branch. */
static const char *float_divmod(nbc__lowerer *L, const nbc__type *t, const char *a,
                                const char *b, bool want_div) {
  const char *ty = ltype(L, t);
  const char *zero = nbc__lower_const_float(L, t, 0.0),
             *nzero = nbc__lower_const_float(L, t, -0.0),
             *one = nbc__lower_const_float(L, t, 1.0),
             *half = nbc__lower_const_float(L, t, 0.5);
  const char *pres = nbc__lower_alloca(L, ty), *pmod = nbc__lower_alloca(L, ty),
             *pdiv = nbc__lower_alloca(L, ty);
  int lz = nbc__lower_label(L), lnz = nbc__lower_label(L), lmodnz = nbc__lower_label(L),
      ladj = nbc__lower_label(L), lmodz = nbc__lower_label(L), lafter = nbc__lower_label(L),
      lend = nbc__lower_label(L);
  const char *bz = tmp(L);
  EMIT("%s = fcmp oeq %s %s, %s", bz, ty, b, zero);
  nbc__lower_condbr(L, bz, lz, lnz);
  nbc__lower_block(L, lz);
  const char *q0 = tmp(L);
  EMIT("%s = %s %s %s, %s", q0, want_div ? "fdiv" : "frem", ty, a, b);
  EMIT("store %s %s, %s* %s", ty, q0, ty, pres);
  nbc__lower_br(L, lend);

  nbc__lower_block(L, lnz);
  const char *mod = tmp(L), *diff = tmp(L), *div = tmp(L);
  EMIT("%s = frem %s %s, %s", mod, ty, a, b);
  EMIT("%s = fsub %s %s, %s", diff, ty, a, mod);
  EMIT("%s = fdiv %s %s, %s", div, ty, diff, b);
  EMIT("store %s %s, %s* %s", ty, mod, ty, pmod);
  EMIT("store %s %s, %s* %s", ty, div, ty, pdiv);
  const char *modt = tmp(L), *wneg = tmp(L), *mneg = tmp(L);
  EMIT("%s = fcmp une %s %s, %s", modt, ty, mod, zero);
  EMIT("%s = fcmp olt %s %s, %s", wneg, ty, b, zero);
  EMIT("%s = fcmp olt %s %s, %s", mneg, ty, mod, zero);
  nbc__lower_condbr(L, modt, lmodnz, lmodz);
  nbc__lower_block(L, lmodnz);
  const char *differ = tmp(L);
  EMIT("%s = icmp ne i1 %s, %s", differ, wneg, mneg);
  nbc__lower_condbr(L, differ, ladj, lafter);
  nbc__lower_block(L, ladj);
  const char *d1 = tmp(L), *m1 = tmp(L);
  EMIT("%s = fsub %s %s, %s", d1, ty, div, one);
  EMIT("%s = fadd %s %s, %s", m1, ty, mod, b);
  EMIT("store %s %s, %s* %s", ty, d1, ty, pdiv);
  EMIT("store %s %s, %s* %s", ty, m1, ty, pmod);
  nbc__lower_br(L, lafter);
  nbc__lower_block(L, lmodz);
  const char *ms = tmp(L);
  EMIT("%s = select i1 %s, %s %s, %s %s", ms, wneg, ty, nzero, ty, zero);
  EMIT("store %s %s, %s* %s", ty, ms, ty, pmod);
  nbc__lower_br(L, lafter);
  nbc__lower_block(L, lafter);
  if (!want_div) {
    const char *m = tmp(L);
    EMIT("%s = load %s, %s* %s", m, ty, ty, pmod);
    EMIT("store %s %s, %s* %s", ty, m, ty, pres);
    nbc__lower_br(L, lend);
  } else {
    int lfl = nbc__lower_label(L), lsign = nbc__lower_label(L);
    const char *d = tmp(L), *dt = tmp(L);
    EMIT("%s = load %s, %s* %s", d, ty, ty, pdiv);
    EMIT("%s = fcmp one %s %s, %s", dt, ty, d, zero);
    nbc__lower_condbr(L, dt, lfl, lsign);
    nbc__lower_block(L, lfl);
    const char *floor_fn =
        nbc__arena_printf(L->arena, "llvm.floor.%s", nbc__lower_intrinsic_suffix(t));
    const char *fl = nbc__lower_call1(L, ty, floor_fn, d);
    const char *fd = tmp(L), *fi = tmp(L), *gt = tmp(L), *sel = tmp(L);
    EMIT("%s = fsub %s %s, %s", fd, ty, d, fl);
    EMIT("%s = fadd %s %s, %s", fi, ty, fl, one);
    EMIT("%s = fcmp ogt %s %s, %s", gt, ty, fd, half);
    EMIT("%s = select i1 %s, %s %s, %s %s", sel, gt, ty, fi, ty, fl);
    EMIT("store %s %s, %s* %s", ty, sel, ty, pres);
    nbc__lower_br(L, lend);
    nbc__lower_block(L, lsign);
    const char *dd = tmp(L), *dv = tmp(L), *q = tmp(L);
    EMIT("%s = fmul %s %s, %s", dd, ty, d, d);
    EMIT("%s = fmul %s %s, %s", dv, ty, dd, a);
    EMIT("%s = fdiv %s %s, %s", q, ty, dv, b);
    EMIT("store %s %s, %s* %s", ty, q, ty, pres);
    nbc__lower_br(L, lend);
  }
  nbc__lower_block(L, lend);
  const char *res = tmp(L);
  EMIT("%s = load %s, %s* %s", res, ty, ty, pres);
  return res;
}

/* --------------------------------------------------------------- binary ops --------- */

static bool node_is_int_exponent(const nbc__lval *e) {
  return is_int(e->type) || is_bool(e->type);
}

/* debug=True kernels (numba's error_model="python"): a zero divisor of /, //, % or divmod
 * raises ZeroDivisionError with numba's message for the operation and operand kind; divmod
 * is the node of a divmod() call (numba locates a float divmod's error there), else NULL. */
void nbc__lower_check_divisor(nbc__lowerer *L, nbc__op op, const nbc__type *t, const char *b,
                              const nbc__node *divmod) {
  if (!L->raise_symbol) return;
  const char *zero = tmp(L), *message;
  if (is_float(t)) {
    EMIT("%s = fcmp oeq %s %s, %s", zero, ltype(L, t), b, nbc__lower_const_float(L, t, 0.0));
    message = op == NBC__OP_MOD || divmod ? "modulo by zero" : "division by zero";
  } else {
    EMIT("%s = icmp eq %s %s, 0", zero, ltype(L, t), b);
    message = divmod ? "integer divmod by zero"
              : op == NBC__OP_MOD ? "integer modulo by zero" : "integer division by zero";
  }
  nbc__lower_raise_if(L, zero, "ZeroDivisionError", message, is_float(t) ? divmod : NULL);
}

nbc__lval nbc__lower_binop_values(nbc__lowerer *L, nbc__node *where, nbc__op op, nbc__lval a,
                                  nbc__node *bnode, nbc__lval b, const nbc__type *rt) {
  nbc__lval r = {rt, NULL};
  if (nbc__lower_failed(L)) return (nbc__lval){rt, nbc__lower_zero(L, rt)};
  if (rt && nbc__type_is_complex(rt)) return nbc__lower_complex_binop(L, where, op, a, b, rt);
  if (nbc__type_is_datetime(a.type) || nbc__type_is_datetime(b.type))
    return nbc__lower_datetime_binop(L, where, op, a, b, rt);
  if (nbc__type_is_bf16(rt)) return nbc__lower_bf16_binop(L, where, op, a, b, rt);
  if (!rt || !(is_int(rt) || is_float(rt) || is_bool(rt))) {
    nbc__lower_error(L, where, "unsupported operand types for %s: %s and %s", nbc__op_text(op),
                     a.type ? nbc__type_name(L->ctx, a.type) : "?",
                     b.type ? nbc__type_name(L->ctx, b.type) : "?");
    return (nbc__lval){rt, "undef"};
  }
  if (nbc__lower_is_half(rt) &&
      (op == NBC__OP_ADD || op == NBC__OP_SUB || op == NBC__OP_MUL)) {
    /* numba-cuda's float16 + - *: operands become float16, one native instruction */
    a = nbc__lower_convert(L, a, rt);
    b = nbc__lower_convert(L, b, rt);
    const char *instr = op == NBC__OP_ADD ? "add.f16" : op == NBC__OP_SUB ? "sub.f16" : "mul.f16";
    return (nbc__lval){rt, half_instr(L, instr, a.v, b.v, NULL)};
  }
  if (nbc__lower_is_half(rt)) {
    /* other float16 arithmetic: operands become float16 (as numba converts them), the
     * operation runs in float32 and its result is rounded back to float16. */
    a = nbc__lower_convert(L, nbc__lower_convert(L, a, rt), T(NBC__T_FLOAT32));
    if (!(op == NBC__OP_POW && node_is_int_exponent(&b)))
      b = nbc__lower_convert(L, nbc__lower_convert(L, b, rt), T(NBC__T_FLOAT32));
    nbc__lval f = nbc__lower_binop_values(L, where, op, a, bnode, b, T(NBC__T_FLOAT32));
    return nbc__lower_convert(L, f, rt);
  }
  const char *ty = ltype(L, rt);
  a = nbc__lower_convert(L, a, rt);
  if (op == NBC__OP_POW) {
    if (node_is_int_exponent(&b)) {
      if (is_bool(b.type)) b = nbc__lower_convert(L, b, T(NBC__T_INT64));
      r.v = nbc__lower_int_power(L, rt, a.v, b, bnode);
      return r;
    }
    b = nbc__lower_convert(L, b, rt);
    if (!is_float(rt)) {
      nbc__lower_error(L, where, "unsupported operand types for **");
      return r;
    }
    r.v = libdevice_pow(L, rt, a.v, b.v);
    return r;
  }
  b = nbc__lower_convert(L, b, rt);
  if ((op == NBC__OP_DIV &&
       !(rt->kind == NBC__T_FLOAT32 && L->ctx->options->fastmath)) || /* numba's fast path */
      op == NBC__OP_FLOORDIV || op == NBC__OP_MOD)
    nbc__lower_check_divisor(L, op, rt, b.v, NULL);
  const char *x = tmp(L);
  if (is_float(rt)) {
    switch (op) {
    case NBC__OP_ADD:
      EMIT("%s = fadd %s %s, %s", x, ty, a.v, b.v);
      break;
    case NBC__OP_SUB:
      EMIT("%s = fsub %s %s, %s", x, ty, a.v, b.v);
      break;
    case NBC__OP_MUL:
      EMIT("%s = fmul %s %s, %s", x, ty, a.v, b.v);
      break;
    case NBC__OP_DIV:
      if (rt->kind == NBC__T_FLOAT32 && L->ctx->options->fastmath)
        x = nbc__lower_call2(L, "float", "__nv_fast_fdividef", a.v, b.v);
      else
        EMIT("%s = fdiv %s %s, %s", x, ty, a.v, b.v);
      break;
    case NBC__OP_FLOORDIV:
      x = float_divmod(L, rt, a.v, b.v, true);
      break;
    case NBC__OP_MOD:
      x = float_divmod(L, rt, a.v, b.v, false);
      break;
    default:
      nbc__lower_error(L, where, "unsupported operand type(s) for %s: '%s' and '%s'",
                       nbc__op_text(op), nbc__type_name(L->ctx, rt),
                       nbc__type_name(L->ctx, rt));
    }
    r.v = x;
    return r;
  }
  switch (op) {
  case NBC__OP_ADD:
    EMIT("%s = add %s %s, %s", x, ty, a.v, b.v);
    break;
  case NBC__OP_SUB:
    EMIT("%s = sub %s %s, %s", x, ty, a.v, b.v);
    break;
  case NBC__OP_MUL:
    EMIT("%s = mul %s %s, %s", x, ty, a.v, b.v);
    break;
  case NBC__OP_BITAND:
    EMIT("%s = and %s %s, %s", x, ty, a.v, b.v);
    break;
  case NBC__OP_BITOR:
    EMIT("%s = or %s %s, %s", x, ty, a.v, b.v);
    break;
  case NBC__OP_BITXOR:
    EMIT("%s = xor %s %s, %s", x, ty, a.v, b.v);
    break;
  case NBC__OP_FLOORDIV:
    x = int_divmod(L, rt, a.v, b.v, true);
    break;
  case NBC__OP_MOD:
    x = int_divmod(L, rt, a.v, b.v, false);
    break;
  case NBC__OP_LSHIFT:
    x = int_shift(L, rt, a.v, b.v, true);
    break;
  case NBC__OP_RSHIFT:
    x = int_shift(L, rt, a.v, b.v, false);
    break;
  default:
    nbc__lower_error(L, where, "unsupported operand type(s) for %s: '%s' and '%s'",
                     nbc__op_text(op), nbc__type_name(L->ctx, rt), nbc__type_name(L->ctx, rt));
  }
  r.v = x;
  return r;
}

/* The type a binary operation computes in: infer's result type, except for true division of
 * integers, whose operands are converted to the float result. */
/* True when n is a float16 product whose value is used as is (no conversion). */
static bool is_half_product(const nbc__node *n) {
  return n && n->kind == NBC__N_BINOP && n->op == NBC__OP_MUL && nbc__lower_is_half(n->type) &&
         (!n->cast || nbc__lower_is_half(n->cast));
}

/* float16 a * b + c and c + a * b (and -): numba-cuda's float16 operators are linked as LTO-IR
 * and contracted into one fma.rn.f16, a single rounding (seen on the H200: two roundings
 * differed by hundreds of ulps near cancellation): the same instruction, the subtracted
 * operand negated first (flipping its sign bit is exact). */
static bool lower_half_fma(nbc__lowerer *L, nbc__node *n, nbc__lval *pr) {
  if (!nbc__lower_is_half(n->type) || (n->op != NBC__OP_ADD && n->op != NBC__OP_SUB)) return false;
  bool left = is_half_product(n->a);
  nbc__node *prod = left ? n->a : n->b, *other = left ? n->b : n->a;
  if (!is_half_product(prod)) return false;
  const nbc__type *h = n->type;
  nbc__lval x = nbc__lower_convert(L, nbc__lower_expr(L, prod->a), h);
  nbc__lval y = nbc__lower_convert(L, nbc__lower_expr(L, prod->b), h);
  nbc__lval c = nbc__lower_convert(L, nbc__lower_expr(L, other), h);
  const char *xv = x.v, *cv = c.v;
  if (n->op == NBC__OP_SUB && left) { /* a * b - c */
    cv = tmp(L);
    EMIT("%s = xor i16 %s, -32768", cv, c.v);
  } else if (n->op == NBC__OP_SUB) { /* c - a * b = (-a) * b + c */
    xv = tmp(L);
    EMIT("%s = xor i16 %s, -32768", xv, x.v);
  }
  *pr = (nbc__lval){h, half_instr(L, "fma.rn.f16", xv, y.v, cv)};
  return true;
}

/* t + u and t * k of tuples (infer.c's tuple_binop): the items of both, or of t k times. */
static nbc__lval tuple_binop(nbc__lowerer *L, nbc__node *n, nbc__lval a, nbc__lval b) {
  nbc__lval items[64];
  int k = 0;
  bool concat = n->op == NBC__OP_ADD;
  nbc__lval t = concat || a.type->kind == NBC__T_TUPLE ? a : b;
  int reps = concat ? 1 : t.type->count ? n->type->count / t.type->count : 0;
  for (int r = 0; r < reps; r++)
    for (int i = 0; i < t.type->count && k < 64; i++)
      items[k++] = nbc__lower_tuple_at(L, t, i);
  for (int i = 0; concat && i < b.type->count && k < 64; i++)
    items[k++] = nbc__lower_tuple_at(L, b, i);
  return nbc__lower_make_tuple(L, n->type, items);
}

static nbc__lval lower_binop(nbc__lowerer *L, nbc__node *n) {
  nbc__lval fused;
  if (lower_half_fma(L, n, &fused)) return fused;
  nbc__lval a = nbc__lower_expr(L, n->a);
  nbc__lval b = nbc__lower_expr(L, n->b);
  const nbc__type *rt = n->type;
  if (rt && rt->kind == NBC__T_TUPLE) return tuple_binop(L, n, a, b);
  if (n->op == NBC__OP_DIV && rt && is_int(rt)) rt = T(NBC__T_FLOAT64);
  return nbc__lower_binop_values(L, n, n->op, a, n->b, b, rt);
}

/* The type two values are compared in: numba's arithmetic promotion of the pair. */
static const nbc__type *compare_type(nbc__lowerer *L, const nbc__type *a, const nbc__type *b) {
  if (nbc__type_equal(a, b)) return a;
  const char *why = NULL;
  const nbc__type *t = nbc__type_binop(NBC__OP_ADD, a, b, &why);
  if (t) return t;
  return nbc__type_unify(L->ctx, a, b);
}

/* Tuples compared as numba does: == and != item by item (tuples of other lengths are not
 * equal); <, <=, >, >= by the first items that differ (numba's tuple_cmp_ordered), else by the
 * lengths. `x in t`: x == one of t's items. */
static const char *compare_tuples(nbc__lowerer *L, nbc__node *where, nbc__op op, nbc__lval a,
                                  nbc__lval b) {
  bool in = op == NBC__OP_IN || op == NBC__OP_NOTIN;
  int na = in ? b.type->count : a.type->count, nb = b.type->count;
  if (in || op == NBC__OP_EQ || op == NBC__OP_NE) {
    /* in: any item equal (an `or` from false); ==: all items equal (an `and` from true) */
    const char *acc = in ? "false" : na == nb ? "true" : "false";
    for (int i = 0; na == nb && i < nb; i++) {
      nbc__lval left = in ? a : nbc__lower_tuple_at(L, a, i);
      const char *eq =
          nbc__lower_compare_values(L, where, NBC__OP_EQ, left, nbc__lower_tuple_at(L, b, i));
      const char *x = tmp(L);
      EMIT("%s = %s i1 %s, %s", x, in ? "or" : "and", acc, eq);
      acc = x;
    }
    if (op == NBC__OP_IN || op == NBC__OP_EQ) return acc;
    const char *x = tmp(L);
    EMIT("%s = xor i1 %s, true", x, acc);
    return x;
  }
  bool lengths = op == NBC__OP_LT ? na < nb : op == NBC__OP_LE ? na <= nb
                 : op == NBC__OP_GT ? na > nb : na >= nb;
  const char *res = nbc__lower_alloca(L, "i1");
  int end = nbc__lower_label(L);
  for (int i = 0; i < na && i < nb; i++) {
    nbc__lval x = nbc__lower_tuple_at(L, a, i), y = nbc__lower_tuple_at(L, b, i);
    const char *ne = nbc__lower_compare_values(L, where, NBC__OP_NE, x, y);
    int differ = nbc__lower_label(L), same = nbc__lower_label(L);
    nbc__lower_condbr(L, ne, differ, same);
    nbc__lower_block(L, differ);
    EMIT("store i1 %s, i1* %s", nbc__lower_compare_values(L, where, op, x, y), res);
    nbc__lower_br(L, end);
    nbc__lower_block(L, same);
  }
  EMIT("store i1 %s, i1* %s", lengths ? "true" : "false", res);
  nbc__lower_block(L, end);
  const char *x = tmp(L);
  EMIT("%s = load i1, i1* %s", x, res);
  return x;
}

const char *nbc__lower_compare_values(nbc__lowerer *L, nbc__node *where, nbc__op op,
                                      nbc__lval a, nbc__lval b) {
  if (a.type && b.type && (op == NBC__OP_IS || op == NBC__OP_ISNOT) &&
      ((a.type->kind == NBC__T_OPTIONAL && b.type->kind == NBC__T_NONE) ||
       (b.type->kind == NBC__T_OPTIONAL && a.type->kind == NBC__T_NONE))) {
    /* x is None for numba's Optional: its valid bit */
    nbc__lval o = a.type->kind == NBC__T_OPTIONAL ? a : b;
    const char *valid = tmp(L), *x = tmp(L);
    EMIT("%s = extractvalue %s %s, 1", valid, ltype(L, o.type), o.v);
    if (op == NBC__OP_ISNOT) return valid;
    EMIT("%s = xor i1 %s, true", x, valid);
    return x;
  }
  if ((a.type && a.type->kind == NBC__T_ENUM) || (b.type && b.type->kind == NBC__T_ENUM)) {
    /* numba's EnumMember: members of one class are equal (and the same object) when their
     * values are; anything else is neither */
    if (!nbc__type_equal(a.type, b.type))
      return op == NBC__OP_EQ || op == NBC__OP_IS ? "false" : "true";
    a.type = a.type->dtype;
    b.type = b.type->dtype;
    op = op == NBC__OP_IS ? NBC__OP_EQ : op == NBC__OP_ISNOT ? NBC__OP_NE : op;
  }
  if (op == NBC__OP_IS || op == NBC__OP_ISNOT) { /* numba's generic_is */
    if (!nbc__type_equal(a.type, b.type)) return op == NBC__OP_IS ? "false" : "true";
    op = op == NBC__OP_IS ? NBC__OP_EQ : NBC__OP_NE;
  }
  if (b.type && b.type->kind == NBC__T_TUPLE &&
      (op == NBC__OP_IN || op == NBC__OP_NOTIN || (a.type && a.type->kind == NBC__T_TUPLE)))
    return compare_tuples(L, where, op, a, b);
  if ((a.type && (a.type->kind == NBC__T_NONE || a.type->kind == NBC__T_VOID)) ||
      (b.type && (b.type->kind == NBC__T_NONE || b.type->kind == NBC__T_VOID))) {
    bool both = a.type && b.type && a.type->kind == b.type->kind;
    if (op == NBC__OP_IS || op == NBC__OP_EQ) return both ? "true" : "false";
    if (op == NBC__OP_ISNOT || op == NBC__OP_NE) return both ? "false" : "true";
  }
  if (nbc__type_is_datetime(a.type) && b.type && a.type->kind == b.type->kind &&
      op != NBC__OP_IN && op != NBC__OP_NOTIN)
    return nbc__lower_datetime_compare(L, where, op, a, b);
  if (nbc__type_is_bf16(a.type) || nbc__type_is_bf16(b.type)) { /* bf16.c's typing */
    const nbc__type *conv[2];
    if (!nbc__bf16_binop_sig(op, a.type, b.type, conv, NULL)) {
      nbc__lower_error(L, where, "unsupported comparison %s between %s and %s", nbc__op_text(op),
                       nbc__type_name(L->ctx, a.type), nbc__type_name(L->ctx, b.type));
      return "false";
    }
    if (nbc__type_is_bf16(conv[0]))
      return nbc__lower_bf16_binop(L, where, op, a, b, T(NBC__T_BOOL)).v;
    a = nbc__lower_convert(L, a, conv[0]);
    b = nbc__lower_convert(L, b, conv[1]);
  }
  const nbc__type *ct = compare_type(L, a.type, b.type);
  if (ct && nbc__type_is_complex(ct)) return nbc__lower_complex_compare(L, where, op, a, b, ct);
  if (!ct || !(is_int(ct) || is_float(ct) || is_bool(ct))) {
    nbc__lower_error(L, where, "unsupported comparison %s between %s and %s", nbc__op_text(op),
                     nbc__type_name(L->ctx, a.type), nbc__type_name(L->ctx, b.type));
    return "false";
  }
  a = nbc__lower_convert(L, a, ct);
  b = nbc__lower_convert(L, b, ct);
  if (nbc__lower_is_half(ct)) { /* numba-cuda's setp.<cmp>.f16 */
    const char *cmp = op == NBC__OP_EQ || op == NBC__OP_IS      ? "eq"
                      : op == NBC__OP_NE || op == NBC__OP_ISNOT ? "neu"
                      : op == NBC__OP_LT                        ? "lt"
                      : op == NBC__OP_LE                        ? "le"
                      : op == NBC__OP_GT                        ? "gt"
                      : op == NBC__OP_GE                        ? "ge"
                                                                : NULL;
    if (cmp) return half_compare(L, cmp, a.v, b.v);
  }
  const char *ty = ltype(L, ct), *pred = NULL;
  bool f = is_float(ct), s = is_int(ct) && nbc__type_is_signed(ct);
  switch (op) {
  case NBC__OP_EQ:
  case NBC__OP_IS:
    pred = f ? "oeq" : "eq";
    break;
  case NBC__OP_NE:
  case NBC__OP_ISNOT:
    pred = f ? "une" : "ne";
    break;
  case NBC__OP_LT:
    pred = f ? "olt" : s ? "slt" : "ult";
    break;
  case NBC__OP_LE:
    pred = f ? "ole" : s ? "sle" : "ule";
    break;
  case NBC__OP_GT:
    pred = f ? "ogt" : s ? "sgt" : "ugt";
    break;
  case NBC__OP_GE:
    pred = f ? "oge" : s ? "sge" : "uge";
    break;
  default:
    nbc__lower_error(L, where, "unsupported comparison '%s'", nbc__op_text(op));
    return "false";
  }
  const char *x = tmp(L);
  EMIT("%s = %s %s %s %s, %s", x, f ? "fcmp" : "icmp", pred, ty, a.v, b.v);
  return x;
}

/* a < b < c: each operand evaluated once, later comparisons skipped once one is false. */
static nbc__lval lower_compare(nbc__lowerer *L, nbc__node *n) {
  const nbc__type *bt = T(NBC__T_BOOL);
  /* infer.c leaves in ->info the types each comparison converts its left and right operand
   * to (a chain's middle operand may convert differently on each side). */
  const nbc__type **conv = n->info;
  if (n->list.count == 1) {
    nbc__lval a = nbc__lower_expr(L, n->a), b = nbc__lower_expr(L, n->list.items[0]);
    if (conv) {
      a = nbc__lower_convert(L, a, conv[0]);
      b = nbc__lower_convert(L, b, conv[1]);
    }
    return (nbc__lval){bt, nbc__lower_compare_values(L, n, n->ops[0], a, b)};
  }
  const char *res = nbc__lower_alloca(L, "i1");
  int end = nbc__lower_label(L);
  nbc__lval left = nbc__lower_expr(L, n->a);
  for (int i = 0; i < n->list.count; i++) {
    nbc__lval right = nbc__lower_expr(L, n->list.items[i]);
    nbc__lval l = left, r = right;
    if (conv) {
      l = nbc__lower_convert(L, l, conv[2 * i]);
      r = nbc__lower_convert(L, r, conv[2 * i + 1]);
    }
    const char *c = nbc__lower_compare_values(L, n, n->ops[i], l, r);
    EMIT("store i1 %s, i1* %s", c, res);
    if (i + 1 < n->list.count) {
      int next = nbc__lower_label(L);
      nbc__lower_condbr(L, c, next, end);
      nbc__lower_block(L, next);
    }
    left = right;
  }
  nbc__lower_block(L, end);
  const char *x = tmp(L);
  EMIT("%s = load i1, i1* %s", x, res);
  return (nbc__lval){bt, x};
}

/* `a and b` / `a or b` return one of the operands (unified to the node's type), evaluating
 * b only when needed. */
static nbc__lval lower_boolop(nbc__lowerer *L, nbc__node *n) {
  const nbc__type *rt = n->type ? n->type : T(NBC__T_BOOL);
  const char *ty = ltype(L, rt);
  const char *res = nbc__lower_alloca(L, ty);
  nbc__lval a = nbc__lower_expr(L, n->a);
  const char *c = nbc__lower_truth(L, a);
  nbc__lval ac = nbc__lower_convert(L, a, rt);
  EMIT("store %s %s, %s* %s", ty, ac.v, ty, res);
  int rhs = nbc__lower_label(L), end = nbc__lower_label(L);
  if (n->op == NBC__OP_AND)
    nbc__lower_condbr(L, c, rhs, end);
  else
    nbc__lower_condbr(L, c, end, rhs);
  nbc__lower_block(L, rhs);
  nbc__lval b = nbc__lower_convert(L, nbc__lower_expr(L, n->b), rt);
  EMIT("store %s %s, %s* %s", ty, b.v, ty, res);
  nbc__lower_block(L, end);
  const char *x = tmp(L);
  EMIT("%s = load %s, %s* %s", x, ty, ty, res);
  return (nbc__lval){rt, x};
}

static nbc__lval lower_ifexp(nbc__lowerer *L, nbc__node *n) {
  const nbc__type *rt = n->type;
  const char *ty = ltype(L, rt);
  const char *res = nbc__lower_alloca(L, ty);
  const char *c = nbc__lower_truth(L, nbc__lower_expr(L, n->a));
  int yes = nbc__lower_label(L), no = nbc__lower_label(L), end = nbc__lower_label(L);
  nbc__lower_condbr(L, c, yes, no);
  nbc__lower_block(L, yes);
  nbc__lval b = nbc__lower_convert(L, nbc__lower_expr(L, n->b), rt);
  EMIT("store %s %s, %s* %s", ty, b.v, ty, res);
  nbc__lower_br(L, end);
  nbc__lower_block(L, no);
  nbc__lval c2 = nbc__lower_convert(L, nbc__lower_expr(L, n->c), rt);
  EMIT("store %s %s, %s* %s", ty, c2.v, ty, res);
  nbc__lower_block(L, end);
  const char *x = tmp(L);
  EMIT("%s = load %s, %s* %s", x, ty, ty, res);
  return (nbc__lval){rt, x};
}

static nbc__lval lower_unary(nbc__lowerer *L, nbc__node *n) {
  nbc__lval a = nbc__lower_expr(L, n->a);
  const nbc__type *rt = n->type;
  if (n->op == NBC__OP_NOT) {
    const char *t = nbc__lower_truth(L, a), *x = tmp(L);
    EMIT("%s = xor i1 %s, true", x, t);
    return (nbc__lval){T(NBC__T_BOOL), x};
  }
  if (nbc__type_is_datetime(a.type) && (n->op == NBC__OP_NEG || n->op == NBC__OP_POS))
    return nbc__lower_datetime_unary(L, n->op, a);
  if (rt && nbc__type_is_complex(rt) && (n->op == NBC__OP_NEG || n->op == NBC__OP_POS)) {
    a = nbc__lower_convert(L, a, rt);
    return n->op == NBC__OP_POS ? a : nbc__lower_complex_neg(L, a);
  }
  if (nbc__type_is_bf16(rt)) /* cuda_bf16.hpp's unary + and - */
    return n->op == NBC__OP_POS ? a : nbc__lower_bf16_neg(L, a);
  if (!rt || !(is_int(rt) || is_float(rt) || is_bool(rt))) {
    nbc__lower_error(L, n, "bad operand type for unary %s: '%s'", nbc__op_text(n->op),
                     a.type ? nbc__type_name(L->ctx, a.type) : "?");
    return (nbc__lval){rt, "undef"};
  }
  /* numba negates and inverts integers at the operand's own width and only then widens the
   * result (int_negate_impl / int_invert_impl): ~uint16(x) is 0xffff ^ x zero-extended, and
   * -int8(-128) stays -128. Booleans and floats are converted first. */
  const nbc__type *wt = rt;
  if ((n->op == NBC__OP_NEG || n->op == NBC__OP_INVERT) && a.type && is_int(a.type))
    wt = a.type;
  else
    a = nbc__lower_convert(L, a, rt);
  if (nbc__lower_is_half(rt) && n->op == NBC__OP_NEG) /* numba-cuda's neg.f16 */
    return (nbc__lval){rt, nbc__lower_half_unary(L, "neg.f16", a.v)};
  const char *ty = ltype(L, wt), *x = tmp(L);
  switch (n->op) {
  case NBC__OP_POS:
    return a;
  case NBC__OP_NEG: {
    double d;
    if (is_float(rt) && float_literal(a.v, &d)) /* a constant stays one */
      return (nbc__lval){rt, nbc__lower_const_float(L, rt, -d)};
    long k;
    if (is_float(rt))
      EMIT("%s = fsub %s %s, %s", x, ty, nbc__lower_const_float(L, rt, -0.0), a.v);
    else if (wt == rt && nbc__type_bits(rt) == 64 && int_literal(a.v, &k) && k != LONG_MIN)
      return (nbc__lval){rt, nbc__arena_printf(L->arena, "%ld", -k)}; /* stays a constant */
    else
      EMIT("%s = sub %s 0, %s", x, ty, a.v);
    break;
  }
  case NBC__OP_INVERT:
    if (is_float(rt)) {
      nbc__lower_error(L, n, "bad operand type for unary ~: '%s'", nbc__type_name(L->ctx, rt));
      return a;
    }
    EMIT("%s = xor %s %s, %s", x, ty, a.v, is_bool(rt) ? "true" : "-1");
    break;
  default:
    nbc__lower_error(L, n, "unsupported unary operator '%s'", nbc__op_text(n->op));
  }
  return nbc__lower_convert(L, (nbc__lval){wt, x}, rt);
}

/* --------------------------------------------------------------- names, attributes -- */

/* The value of a frozen global tuple of type tt (infer's global_tuple_type). */
static nbc__lval tuple_constant(nbc__lowerer *L, const nbc__type *tt, const nbc_global_t *g) {
  if (tt->kind != NBC__T_TUPLE || tt->count != g->tuple_count) return (nbc__lval){tt, "undef"};
  nbc__lval items[64];
  for (int i = 0; i < g->tuple_count; i++) {
    const nbc_global_t *it = &g->tuple_items[i];
    const nbc__type *t = tt->items[i];
    if (it->kind == NBC_GLOBAL_TUPLE) {
      items[i] = tuple_constant(L, t, it);
      continue;
    }
    if (it->kind == NBC_GLOBAL_ARRAY) {
      items[i] = t->kind == NBC__T_ARRAY ? nbc__lower_const_array(L, t, it)
                                         : (nbc__lval){t, "undef"};
      continue;
    }
    const char *v = it->kind == NBC_GLOBAL_FLOAT  ? nbc__lower_const_float(L, t, it->value.f)
                    : it->kind == NBC_GLOBAL_BOOL ? (it->value.i ? "true" : "false")
                                                  : nbc__lower_const_int(L, t, it->value.i);
    items[i] = (nbc__lval){t, v};
  }
  return nbc__lower_make_tuple(L, tt, items);
}

/* Member index of enum global g as a value of type t (the member's int value for an IntEnum,
 * an ENUM value otherwise): the constant of its value. */
nbc__lval nbc__lower_enum_member(nbc__lowerer *L, const nbc_global_t *g, int index,
                                 const nbc__type *t) {
  if (!t || index < 0 || index >= g->tuple_count) return (nbc__lval){t, "undef"};
  const nbc_global_t *v = &g->tuple_items[index];
  const nbc__type *vt = t->kind == NBC__T_ENUM ? t->dtype : t;
  if (v->kind == NBC_GLOBAL_TUPLE) /* a tuple value: its constants */
    return (nbc__lval){t, tuple_constant(L, vt, v).v};
  const char *c = v->kind == NBC_GLOBAL_FLOAT ? nbc__lower_const_float(L, vt, v->value.f)
                                              : nbc__lower_const_int(L, vt, v->value.i);
  return (nbc__lval){t, c};
}

static nbc__lval global_value(nbc__lowerer *L, nbc__node *n, const nbc__global *g) {
  switch (g->g.kind) {
  case NBC_GLOBAL_ENUM_MEMBER: /* a member bound to a name (RED = Color.red) */
    return nbc__lower_enum_member(L, &g->g, (int)g->g.value.i, n->type);
  case NBC_GLOBAL_INT: {
    const nbc__type *t =
        n->type && (is_int(n->type) || is_float(n->type)) ? n->type : T(NBC__T_INT64);
    return nbc__lower_convert(
        L, (nbc__lval){T(NBC__T_INT64), nbc__lower_const_int(L, T(NBC__T_INT64), g->g.value.i)},
        t);
  }
  case NBC_GLOBAL_FLOAT: {
    nbc__lval v = {T(NBC__T_FLOAT64),
                   nbc__lower_const_float(L, T(NBC__T_FLOAT64), g->g.value.f)};
    return nbc__lower_convert(L, v, n->type && is_float(n->type) ? n->type : T(NBC__T_FLOAT64));
  }
  case NBC_GLOBAL_BOOL:
    return (nbc__lval){T(NBC__T_BOOL), g->g.value.i ? "true" : "false"};
  case NBC_GLOBAL_DATETIME: /* numba's frozen np.datetime64 / np.timedelta64: its count */
    return (nbc__lval){n->type, nbc__lower_const_int(L, T(NBC__T_INT64), g->g.value.i)};
  case NBC_GLOBAL_NONE: /* as the literal None */
    return (nbc__lval){T(NBC__T_NONE), "null"};
  case NBC_GLOBAL_TUPLE: /* numba's frozen global tuple: its constants */
    return n->type ? tuple_constant(L, n->type, &g->g) : (nbc__lval){n->type, "undef"};
  case NBC_GLOBAL_ARRAY: /* numba's frozen global array, in constant memory */
    if (n->type && n->type->kind == NBC__T_ARRAY) return nbc__lower_const_array(L, n->type, &g->g);
    return (nbc__lval){n->type, "undef"};
  case NBC_GLOBAL_DEVICE_ARRAY: /* numba-cuda's captured device array: its address */
    if (n->type && n->type->kind == NBC__T_ARRAY)
      return nbc__lower_device_array_global(L, n->type, &g->g);
    return (nbc__lval){n->type, "undef"};
  case NBC_GLOBAL_CUDA_NAME: /* `from nbcuda import laneid`: the register, as cuda.laneid */
    if (g->g.name && (strcmp(g->g.name, "laneid") == 0 || strcmp(g->g.name, "warpsize") == 0))
      return (nbc__lval){T(NBC__T_INT32), nbc__lower_sreg(L, g->g.name)};
    return (nbc__lval){n->type, "undef"}; /* namespaces and functions: no run-time value */
  default:
    return (nbc__lval){n->type, "undef"}; /* modules, functions, types: no run-time value */
  }
}

static nbc__lval lower_name(nbc__lowerer *L, nbc__node *n) {
  if (n->var >= 0) {
    const nbc__var *v = &L->fn->vars[n->var];
    if (!L->slots[n->var]) return (nbc__lval){v->type, "undef"};
    const char *ty = ltype(L, v->type), *x = tmp(L);
    EMIT("%s = load %s, %s* %s", x, ty, ty, L->slots[n->var]);
    return (nbc__lval){v->type, x};
  }
  if (n->info) return global_value(L, n, n->info);
  return (nbc__lval){n->type, "undef"};
}

/* Color.red / Color["red"] (the member called name of the class node cls names). */
nbc__lval nbc__lower_enum_lookup(nbc__lowerer *L, nbc__node *n, nbc__node *cls,
                                 const char *name) {
  const nbc__global *G = nbc__infer_enum_global(cls);
  int i = G ? nbc__enum_member_index(&G->g, name) : -1;
  if (i >= 0) return nbc__lower_enum_member(L, &G->g, i, n->type);
  nbc__lower_error(L, n, "no enum member '%s'", name ? name : "?");
  return (nbc__lval){n->type, "undef"};
}

static nbc__lval lower_attr(nbc__lowerer *L, nbc__node *n) {
  const nbc__type *ot = n->a->type;
  if (n->type && n->type->kind == NBC__T_DTYPE) /* a.dtype, np.float32: no run-time value */
    return (nbc__lval){n->type, "undef"};
  if (ot && ot->kind == NBC__T_ENUM_CLASS) return nbc__lower_enum_lookup(L, n, n->a, n->str);
  if (ot && ot->kind == NBC__T_ENUM) { /* m.value: the member's value itself */
    nbc__lval v = nbc__lower_expr(L, n->a);
    return (nbc__lval){ot->dtype, v.v};
  }
  if (ot && ot->kind == NBC__T_MODULE && ot->name) {
    const char *m = ot->name;
    const char *reg = strcmp(m, "cuda.threadIdx") == 0  ? "tid"
                      : strcmp(m, "cuda.blockDim") == 0 ? "ntid"
                      : strcmp(m, "cuda.blockIdx") == 0 ? "ctaid"
                      : strcmp(m, "cuda.gridDim") == 0  ? "nctaid"
                                                        : NULL;
    if (reg) {
      const char *s = n->str;
      if (!(s[0] == 'x' || s[0] == 'y' || s[0] == 'z') || s[1]) {
        nbc__lower_error(L, n, "%s has no attribute '%s'", m, s);
        return (nbc__lval){n->type, "0"};
      }
      nbc__lval v = {T(NBC__T_INT32), nbc__lower_sreg_axis(L, reg, s[0])};
      return v;
    }
    if (strcmp(m, "cuda") == 0 && strcmp(n->str, "warpsize") == 0)
      return (nbc__lval){T(NBC__T_INT32), nbc__lower_sreg(L, "warpsize")};
    if (strcmp(m, "cuda") == 0 && strcmp(n->str, "laneid") == 0)
      return (nbc__lval){T(NBC__T_INT32), nbc__lower_sreg(L, "laneid")};
  }
  if (ot && ot->kind == NBC__T_RECORD) return nbc__lower_field_load(L, n);
  if (n->info) return global_value(L, n, n->info);
  if (ot && ot->kind == NBC__T_ARRAY)
    return nbc__lower_array_attr(L, n, nbc__lower_expr(L, n->a));
  if (ot && (is_int(ot) || is_float(ot) || nbc__type_is_complex(ot)) &&
      (strcmp(n->str, "real") == 0 || strcmp(n->str, "imag") == 0)) {
    nbc__lval v = nbc__lower_expr(L, n->a);
    bool imag = n->str[0] == 'i';
    if (nbc__type_is_complex(ot)) return nbc__lower_complex_part(L, v, imag);
    return imag ? (nbc__lval){ot, nbc__lower_zero(L, ot)} : v;
  }
  if (ot && ot->kind == NBC__T_VECTOR && n->str[0] && !n->str[1] && strchr("xyzw", n->str[0])) {
    nbc__lval v = nbc__lower_expr(L, n->a);
    const char *x = tmp(L);
    EMIT("%s = extractvalue %s %s, %d", x, ltype(L, ot), v.v,
         (int)(strchr("xyzw", n->str[0]) - "xyzw"));
    return (nbc__lval){ot->dtype, x};
  }
  if (ot && ot->kind == NBC__T_MODULE) return (nbc__lval){n->type, "undef"};
  nbc__lower_error(L, n, "unsupported attribute '%s'", n->str);
  return (nbc__lval){n->type, "0"};
}

/* --------------------------------------------------------------- dispatch ----------- */

nbc__lval nbc__lower_string_constant(nbc__lowerer *L, const nbc__type *t, const char *text) {
  nbc__buf b;
  nbc__buf_init(&b, L->arena);
  const unsigned char *s = (const unsigned char *)(text ? text : "");
  bool bytes = t->kind == NBC__T_CHARSEQ;
  nbc__buf_puts(&b, "[");
  for (int64_t i = 0; i < t->size; i++) {
    uint32_t c = 0; /* past the text: zeros, as numpy pads */
    if (*s && bytes) {
      c = *s++;
    } else if (*s) { /* one UTF-8 sequence: its code point */
      int more = *s >= 0xf0 ? 3 : *s >= 0xe0 ? 2 : *s >= 0xc0 ? 1 : 0;
      c = more ? *s & (0x3f >> more) : *s;
      for (s++; more > 0 && (*s & 0xc0) == 0x80; more--) c = c << 6 | (*s++ & 0x3f);
    }
    nbc__buf_printf(&b, "%s%s %u", i ? ", " : "", bytes ? "i8" : "i32", (unsigned)c);
  }
  nbc__buf_puts(&b, "]");
  if (t->size == 0) return (nbc__lval){t, "zeroinitializer"};
  return (nbc__lval){t, b.data ? b.data : "zeroinitializer"};
}

static nbc__lval lower_raw(nbc__lowerer *L, nbc__node *n) {
  switch (n->kind) {
  case NBC__N_INT: {
    const nbc__type *t = n->type ? n->type : T(n->big ? NBC__T_UINT64 : NBC__T_INT64);
    if (is_float(t))
      return (nbc__lval){t,
                         nbc__lower_const_float(
                             L, t, n->big ? (double)(uint64_t)n->value.i : (double)n->value.i)};
    if (is_bool(t)) return (nbc__lval){t, n->value.i ? "true" : "false"};
    if (n->big)
      return (nbc__lval){t,
                         nbc__arena_printf(L->arena, "%llu", (unsigned long long)n->value.i)};
    return (nbc__lval){t, nbc__lower_const_int(L, t, n->value.i)};
  }
  case NBC__N_FLOAT: {
    const nbc__type *t = n->type && is_float(n->type) ? n->type : T(NBC__T_FLOAT64);
    return (nbc__lval){t, nbc__lower_const_float(L, t, n->value.f)};
  }
  case NBC__N_BOOL:
    return (nbc__lval){T(NBC__T_BOOL), n->value.i ? "true" : "false"};
  case NBC__N_STR: /* a string literal stored as numpy's S<n> or U<n> (infer typed it) */
    if (nbc__type_is_charseq(n->type)) return nbc__lower_string_constant(L, n->type, n->str);
    nbc__lower_error(L, n, "strings are not supported in kernels");
    return (nbc__lval){n->type, "undef"};
  case NBC__N_NONE:
    return (nbc__lval){n->type ? n->type : T(NBC__T_VOID), "null"};
  case NBC__N_NAME:
    return lower_name(L, n);
  case NBC__N_ATTR:
    return lower_attr(L, n);
  case NBC__N_SUBSCRIPT:
    if (n->alias && strcmp(n->alias, "$star") == 0 && n->c) { /* f(*t): item i of t */
      nbc__lval *t = n->c->info;
      if (n->b->value.i == 0 || !t) { /* the first item evaluates t, the others reuse it */
        t = nbc__arena_alloc(L->arena, sizeof *t);
        if (!t) return (nbc__lval){n->type, nbc__lower_zero(L, n->type)};
        *t = nbc__lower_expr(L, n->a);
        n->c->info = t;
      }
      return nbc__lower_tuple_at(L, *t, (int)n->b->value.i);
    }
    return nbc__lower_subscript(L, n);
  case NBC__N_CALL:
    return nbc__lower_call(L, n);
  case NBC__N_BINOP:
    return lower_binop(L, n);
  case NBC__N_UNARY:
    return lower_unary(L, n);
  case NBC__N_BOOLOP:
    return lower_boolop(L, n);
  case NBC__N_COMPARE:
    return lower_compare(L, n);
  case NBC__N_IFEXP:
    return lower_ifexp(L, n);
  case NBC__N_TUPLE: {
    const nbc__type *tt = n->type;
    if (!tt || tt->kind != NBC__T_TUPLE || tt->count != n->list.count) {
      nbc__lower_error(L, n, "unsupported tuple");
      return (nbc__lval){tt, "undef"};
    }
    nbc__lval *items = nbc__arena_alloc(L->arena, sizeof *items * (size_t)(tt->count + 1));
    if (!items) {
      nbc__diag_oom(L->ctx);
      return (nbc__lval){tt, "undef"};
    }
    for (int i = 0; i < tt->count; i++)
      items[i] = nbc__lower_expr(L, n->list.items[i]);
    return nbc__lower_make_tuple(L, tt, items);
  }
  case NBC__N_COMPLEX: { /* 2.5j: complex128(0, 2.5) */
    const nbc__type *ct = T(NBC__T_COMPLEX128);
    nbc__lval z = nbc__lower_complex_make(L, ct, nbc__lower_const_float(L, T(NBC__T_FLOAT64), 0.0),
                                          nbc__lower_const_float(L, T(NBC__T_FLOAT64), n->value.f));
    return nbc__lower_convert(L, z, n->type ? n->type : ct);
  }
  default:
    nbc__lower_error(L, n, "unsupported expression");
    return (nbc__lval){n->type, "undef"};
  }
}

nbc__lval nbc__lower_expr(nbc__lowerer *L, nbc__node *n) {
  if (nbc__lower_failed(L)) return (nbc__lval){n->type, nbc__lower_zero(L, n->type)};
  nbc__lower_set_loc(L, n);
  nbc__lval v = lower_raw(L, n);
  /* Values are produced in the node's type; then infer's implicit conversion applies. */
  if (n->type && v.type && !nbc__type_equal(v.type, n->type) && has_runtime(n->type))
    v = nbc__lower_convert(L, v, n->type);
  if (n->cast) v = nbc__lower_convert(L, v, n->cast);
  return v;
}
