/* ptx_float.c — PTX's floating-point semantics on the host's IEEE arithmetic.
 *
 * The host's float and double operations round to nearest-even exactly as PTX's .rn
 * instructions do; the other rounding modes (.rz .rm .rp) switch the host's rounding mode
 * around the one operation. .ftz flushes subnormal inputs and results of f32 operations to
 * sign-preserving zero; .sat clamps to [0, 1] with NaN to 0. fp16 and bf16 values are
 * converted with round-to-nearest-even by hand, from double so that one rounding happens.
 * .approx instructions are computed with the C library's correctly or nearly correctly
 * rounded functions, inside PTX's documented error bounds for them.
 */
#include <fenv.h>
#include <math.h>
#include <string.h>

#include "cpudevice/ptx_float.h"

float nbc__ptx_ftz32(float f) {
  return fpclassify(f) == FP_SUBNORMAL ? copysignf(0.0f, f) : f;
}

static int host_mode(int rnd) {
  switch (rnd) {
  case NBC__R_RZ:
  case NBC__R_RZI:
    return FE_TOWARDZERO;
  case NBC__R_RM:
  case NBC__R_RMI:
    return FE_DOWNWARD;
  case NBC__R_RP:
  case NBC__R_RPI:
    return FE_UPWARD;
  default:
    return FE_TONEAREST;
  }
}

static double sat(double v) {
  if (isnan(v) || v < 0) return 0;
  return v > 1 ? 1 : v;
}

/* One arithmetic operation in T; the host's rounding mode changes only around it, and
 * volatile keeps the compiler from moving the operation across that change. */
#define NBC__ARITH_OP(name, T, fma_fn, sqrt_fn)                                                \
  static T name(int op, T a, T b, T c) {                                                     \
    volatile T va = a, vb = b, vc = c;                                                       \
    switch (op) {                                                                            \
    case NBC__OP_ADD:                                                                        \
      return va + vb;                                                                        \
    case NBC__OP_SUB:                                                                        \
      return va - vb;                                                                        \
    case NBC__OP_MUL:                                                                        \
      return va * vb;                                                                        \
    case NBC__OP_MAD:                                                                        \
    case NBC__OP_FMA:                                                                        \
      return fma_fn(va, vb, vc);                                                             \
    case NBC__OP_DIV:                                                                        \
      return va / vb;                                                                        \
    case NBC__OP_SQRT:                                                                       \
      return sqrt_fn(va);                                                                    \
    case NBC__OP_RCP:                                                                        \
      return (T)1 / va;                                                                      \
    default:                                                                                 \
      return NAN;                                                                            \
    }                                                                                        \
  }
NBC__ARITH_OP(f32_op, float, fmaf, sqrtf)
NBC__ARITH_OP(f64_op, double, fma, sqrt)

float nbc__ptx_f32_arith(int op, int rnd, int flags, float a, float b, float c) {
  if (flags & NBC__F_FTZ) {
    a = nbc__ptx_ftz32(a);
    b = nbc__ptx_ftz32(b);
    c = nbc__ptx_ftz32(c);
  }
  float r;
  if ((flags & NBC__F_APPROX) && op != NBC__OP_DIV && op != NBC__OP_RCP && op != NBC__OP_SQRT) {
    r = f32_op(op, a, b, c);
  } else if (host_mode(rnd) != FE_TONEAREST) {
    fesetround(host_mode(rnd));
    r = f32_op(op, a, b, c);
    fesetround(FE_TONEAREST);
  } else {
    r = f32_op(op, a, b, c);
  }
  if (flags & NBC__F_FTZ) r = nbc__ptx_ftz32(r);
  if (flags & NBC__F_SAT) r = (float)sat(r);
  return r;
}

double nbc__ptx_f64_arith(int op, int rnd, double a, double b, double c) {
  double r;
  if (host_mode(rnd) != FE_TONEAREST) {
    fesetround(host_mode(rnd));
    r = f64_op(op, a, b, c);
    fesetround(FE_TONEAREST);
  } else {
    r = f64_op(op, a, b, c);
  }
  return r;
}

double nbc__ptx_round_integral(int rnd, double v) {
  switch (rnd) {
  case NBC__R_RZI:
    return trunc(v);
  case NBC__R_RMI:
    return floor(v);
  case NBC__R_RPI:
    return ceil(v);
  default:
    return nearbyint(v); /* round to nearest even under the default mode */
  }
}

/* The value of double v rounded to a float format with mbits mantissa bits, exponent
 * bias `bias` and emax, as bits (round to nearest even; overflow to infinity). */
static uint32_t to_small(double v, int mbits, int ebits) {
  uint64_t d;
  memcpy(&d, &v, 8);
  uint32_t sign = (uint32_t)(d >> 63) << (mbits + ebits);
  int bias = (1 << (ebits - 1)) - 1;
  uint32_t inf = ((1u << ebits) - 1) << mbits;
  if (isnan(v)) return sign | inf | (1u << (mbits - 1));
  double a = fabs(v);
  if (isinf(a)) return sign | inf;
  if (a == 0) return sign;
  int e;
  frexp(a, &e); /* a = m * 2^e, m in [0.5, 1) */
  int exp = e - 1;  /* a = 1.f * 2^exp */
  if (exp < 1 - bias) exp = 1 - bias; /* subnormal: fixed scale */
  /* the integer significand at this scale, rounded to nearest even */
  double scaled = ldexp(a, mbits - exp);
  double q = nearbyint(scaled);
  uint64_t sig = (uint64_t)q;
  if (sig >= (2ull << mbits)) { /* rounding carried into the next binade */
    sig >>= 1;
    exp++;
  }
  if (exp > bias) return sign | inf;
  if (sig < (1ull << mbits)) return sign | (uint32_t)sig; /* subnormal (or rounded up to min normal below) */
  return sign | ((uint32_t)(exp + bias) << mbits) | ((uint32_t)sig & ((1u << mbits) - 1));
}

static double from_small(uint32_t h, int mbits, int ebits) {
  int bias = (1 << (ebits - 1)) - 1;
  uint32_t sign = h >> (mbits + ebits) & 1, exp = h >> mbits & ((1u << ebits) - 1),
           man = h & ((1u << mbits) - 1);
  double v;
  if (exp == (1u << ebits) - 1)
    v = man ? NAN : INFINITY;
  else if (exp == 0)
    v = ldexp((double)man, 1 - bias - mbits);
  else
    v = ldexp((double)(man | (1u << mbits)), (int)exp - bias - mbits);
  return sign ? -v : v;
}

uint16_t nbc__ptx_f16_from(double v) {
  return (uint16_t)to_small(v, 10, 5);
}

double nbc__ptx_f16_to(uint16_t h) {
  return from_small(h, 10, 5);
}

uint16_t nbc__ptx_bf16_from(double v) {
  return (uint16_t)to_small(v, 7, 8);
}

double nbc__ptx_bf16_to(uint16_t h) {
  return from_small(h, 7, 8);
}

double nbc__ptx_approx(int op, double a) {
  switch (op) {
  case NBC__OP_EX2:
    return exp2(a);
  case NBC__OP_LG2:
    return log2(a);
  case NBC__OP_SIN:
    return sin(a);
  case NBC__OP_COS:
    return cos(a);
  case NBC__OP_TANH:
    return tanh(a);
  case NBC__OP_RSQRT:
    return 1.0 / sqrt(a);
  case NBC__OP_RCP:
    return 1.0 / a;
  case NBC__OP_SQRT:
    return sqrt(a);
  default:
    return NAN;
  }
}

float nbc__ptx_to_f32(int rnd, double v) {
  volatile double vv = v;
  fesetround(host_mode(rnd));
  volatile float r = (float)vv;
  fesetround(FE_TONEAREST);
  return r;
}
