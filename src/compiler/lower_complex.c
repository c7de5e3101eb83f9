/* lower_complex.c — complex numbers to NVVM IR, as numba-cuda lowers them (numba's
 * cpython/numbers.py and the complex data model).
 *
 * complex64 is {float, float} and complex128 {double, double} (real, imaginary), in
 * registers, memory and arrays alike; a parameter is its two parts (numba flattens them).
 * Conversions give a number a zero imaginary part and convert both parts between widths;
 * truth is "either part != 0". + - * follow numba's formulas operation for operation
 * (real = ar*br - ai*bi, imag = ar*bi + ai*br), so NVVM contracts them the same way; ** is
 * numba-cuda's cpow_internal (mathimpl.py, CPython's _Py_c_pow through libdevice); / is
 * numba's complex_div, CPython's _Py_c_quot (scale by the larger part of the divisor, NaN
 * when that part is 0), and a zero divisor, numba's ZeroDivisionError, ends the thread (a
 * raise in a numba kernel returns from it; PTX `exit` does the same from any depth). ==
 * and != compare both parts; abs is hypot (libdevice); .real, .imag and .conjugate() are the
 * parts and (re, -im).
 */
#include <string.h>

#include "compiler/lower.h"

nbc__lval nbc__lower_complex_part(nbc__lowerer *L, nbc__lval z, int imag) {
  const char *x = tmp(L);
  EMIT("%s = extractvalue %s %s, %d", x, ltype(L, z.type), z.v, imag);
  return (nbc__lval){nbc__type_complex_part(z.type), x};
}

nbc__lval nbc__lower_complex_make(nbc__lowerer *L, const nbc__type *ct, const char *re,
                                  const char *im) {
  const char *ty = ltype(L, ct), *pt = ltype(L, nbc__type_complex_part(ct)), *a = tmp(L),
             *b = tmp(L);
  EMIT("%s = insertvalue %s undef, %s %s, 0", a, ty, pt, re);
  EMIT("%s = insertvalue %s %s, %s %s, 1", b, ty, a, pt, im);
  return (nbc__lval){ct, b};
}

const char *nbc__lower_complex_truth(nbc__lowerer *L, nbc__lval z) {
  nbc__lval re = nbc__lower_complex_part(L, z, 0), im = nbc__lower_complex_part(L, z, 1);
  const char *zero = nbc__lower_const_float(L, re.type, 0.0), *pt = ltype(L, re.type);
  const char *a = tmp(L), *b = tmp(L), *x = tmp(L);
  EMIT("%s = fcmp une %s %s, %s", a, pt, re.v, zero);
  EMIT("%s = fcmp une %s %s, %s", b, pt, im.v, zero);
  EMIT("%s = or i1 %s, %s", x, a, b);
  return x;
}

nbc__lval nbc__lower_complex_convert(nbc__lowerer *L, nbc__lval v, const nbc__type *to) {
  const nbc__type *from = v.type;
  if (nbc__type_is_complex(from) && nbc__type_is_complex(to)) {
    const nbc__type *pt = nbc__type_complex_part(to);
    nbc__lval re = nbc__lower_convert(L, nbc__lower_complex_part(L, v, 0), pt);
    nbc__lval im = nbc__lower_convert(L, nbc__lower_complex_part(L, v, 1), pt);
    return nbc__lower_complex_make(L, to, re.v, im.v);
  }
  if (nbc__type_is_complex(to)) { /* a number: its value and a zero imaginary part */
    const nbc__type *pt = nbc__type_complex_part(to);
    nbc__lval re = nbc__lower_convert(L, v, pt);
    return nbc__lower_complex_make(L, to, re.v, nbc__lower_const_float(L, pt, 0.0));
  }
  if (to->kind == NBC__T_BOOL) return (nbc__lval){to, nbc__lower_complex_truth(L, v)};
  nbc__lower_error(L, NULL, "cannot convert %s to %s", nbc__type_name(L->ctx, from),
                   nbc__type_name(L->ctx, to));
  return (nbc__lval){to, nbc__lower_zero(L, to)};
}

static const char *fop(nbc__lowerer *L, const char *op, const char *ty, const char *a,
                       const char *b) {
  const char *x = tmp(L);
  EMIT("%s = %s %s %s, %s", x, op, ty, a, b);
  return x;
}

static const char *fcmp(nbc__lowerer *L, const char *pred, const char *ty, const char *a,
                        const char *b) {
  const char *x = tmp(L);
  EMIT("%s = fcmp %s %s %s, %s", x, pred, ty, a, b);
  return x;
}

static const char *fselect(nbc__lowerer *L, const char *c, const char *ty, const char *a,
                           const char *b) {
  const char *x = tmp(L);
  EMIT("%s = select i1 %s, %s %s, %s %s", x, c, ty, a, ty, b);
  return x;
}

/* |x| through libdevice, as numba's abs of a float. */
static const char *fabs_of(nbc__lowerer *L, const nbc__type *pt, const char *x) {
  bool f32 = pt->kind == NBC__T_FLOAT32;
  const char *ty = ltype(L, pt);
  return nbc__lower_call_fn(L, ty, f32 ? "__nv_fabsf" : "__nv_fabs", ty,
                            nbc__arena_printf(L->arena, "%s %s", ty, x));
}

/* numba's complex_div (CPython's _Py_c_quot); a zero divisor ends the thread. */
static nbc__lval complex_div(nbc__lowerer *L, const nbc__type *ct, nbc__lval a, nbc__lval b) {
  const nbc__type *pt = nbc__type_complex_part(ct);
  const char *ty = ltype(L, pt), *zero = nbc__lower_const_float(L, pt, 0.0);
  const char *ar = nbc__lower_complex_part(L, a, 0).v, *ai = nbc__lower_complex_part(L, a, 1).v;
  const char *br = nbc__lower_complex_part(L, b, 0).v, *bi = nbc__lower_complex_part(L, b, 1).v;
  /* if not breal and not bimag: raise ZeroDivisionError */
  const char *rz = fcmp(L, "oeq", ty, br, zero), *iz = fcmp(L, "oeq", ty, bi, zero);
  const char *both = tmp(L);
  EMIT("%s = and i1 %s, %s", both, rz, iz);
  int raise = nbc__lower_label(L), go = nbc__lower_label(L);
  nbc__lower_condbr(L, both, raise, go);
  nbc__lower_block(L, raise);
  nbc__lower_end_thread(L);
  nbc__lower_block(L, go);
  const char *nan = nbc__lower_const_float(L, pt, __builtin_nan(""));
  /* abs(breal) >= abs(bimag): divide through by breal */
  const char *big = fcmp(L, "oge", ty, fabs_of(L, pt, br), fabs_of(L, pt, bi));
  const char *r1 = fop(L, "fdiv", ty, bi, br);
  const char *d1 = fop(L, "fadd", ty, br, fop(L, "fmul", ty, bi, r1));
  const char *re1 = fop(L, "fdiv", ty, fop(L, "fadd", ty, ar, fop(L, "fmul", ty, ai, r1)), d1);
  const char *im1 = fop(L, "fdiv", ty, fop(L, "fsub", ty, ai, fop(L, "fmul", ty, ar, r1)), d1);
  /* else: divide through by bimag */
  const char *r2 = fop(L, "fdiv", ty, br, bi);
  const char *d2 = fop(L, "fadd", ty, fop(L, "fmul", ty, br, r2), bi);
  const char *re2 = fop(L, "fdiv", ty, fop(L, "fadd", ty, fop(L, "fmul", ty, ar, r2), ai), d2);
  const char *im2 = fop(L, "fdiv", ty, fop(L, "fsub", ty, fop(L, "fmul", ty, ai, r2), ar), d2);
  /* "if not breal" / "if not bimag" inside each branch: NaN parts */
  re1 = fselect(L, rz, ty, nan, re1);
  im1 = fselect(L, rz, ty, nan, im1);
  re2 = fselect(L, iz, ty, nan, re2);
  im2 = fselect(L, iz, ty, nan, im2);
  return nbc__lower_complex_make(L, ct, fselect(L, big, ty, re1, re2),
                                 fselect(L, big, ty, im1, im2));
}

/* math.<base> of a float of type pt through libdevice, as numba-cuda's mathimpl. */
static const char *math_of(nbc__lowerer *L, const nbc__type *pt, const char *base, int nargs,
                           const char *x, const char *y) {
  const char *fn = nbc__lower_libdevice_name(L, base, pt), *ty = ltype(L, pt);
  return nargs == 1 ? nbc__lower_call1(L, ty, fn, x) : nbc__lower_call2(L, ty, fn, x, y);
}

/* (xr + xi j) * (yr + yi j) by numba's complex_mul_impl formula: its real and imaginary
 * parts through *re and *im. */
static void mul_parts(nbc__lowerer *L, const char *ty, const char *xr, const char *xi,
                      const char *yr, const char *yi, const char **re, const char **im) {
  *re = fop(L, "fsub", ty, fop(L, "fmul", ty, xr, yr), fop(L, "fmul", ty, xi, yi));
  *im = fop(L, "fadd", ty, fop(L, "fmul", ty, xr, yi), fop(L, "fmul", ty, xi, yr));
}

/* One of complex_pow's results, re + im j: stored in slot, then on to block done. */
static void pow_result(nbc__lowerer *L, const nbc__type *ct, const char *slot, const char *re,
                       const char *im, int done) {
  nbc__lval r = nbc__lower_complex_make(L, ct, re, im);
  EMIT("store %s %s, %s* %s", ltype(L, ct), r.v, ltype(L, ct), slot);
  nbc__lower_br(L, done);
}

/* a ** b as numba-cuda's cpow_internal, statement for statement:
 *   if b.real == 0 and b.imag == 0: return 1 + 0j
 *   elif a.real == 0 and b.real == 0: return 0 + 0j
 *   vabs = hypot(a.real, a.imag); len = pow(vabs, b.real)
 *   at = atan2(a.imag, a.real); phase = at * b.real
 *   if b.imag != 0: len /= exp(at * b.imag); phase += b.imag * log(vabs)
 *   return len * (complex(cos(phase)) + complex(sin(phase) * 1j))
 * the numbers made complex (imaginary part 0) and multiplied by complex_mul's formula, as
 * numba types them. (CPython's a == 0 case tests a.imag, numba-cuda's b.real; this follows
 * numba-cuda.) */
static nbc__lval complex_pow(nbc__lowerer *L, const nbc__type *ct, nbc__lval a, nbc__lval b) {
  const nbc__type *pt = nbc__type_complex_part(ct);
  const char *ty = ltype(L, pt), *zero = nbc__lower_const_float(L, pt, 0.0);
  const char *one = nbc__lower_const_float(L, pt, 1.0);
  const char *ar = nbc__lower_complex_part(L, a, 0).v, *ai = nbc__lower_complex_part(L, a, 1).v;
  const char *br = nbc__lower_complex_part(L, b, 0).v, *bi = nbc__lower_complex_part(L, b, 1).v;
  const char *slot = nbc__lower_alloca(L, ltype(L, ct));
  int special = nbc__lower_label(L), zero_base = nbc__lower_label(L),
      general = nbc__lower_label(L), test2 = nbc__lower_label(L), done = nbc__lower_label(L);
  const char *br0 = fcmp(L, "oeq", ty, br, zero), *bi0 = fcmp(L, "oeq", ty, bi, zero);
  const char *b0 = tmp(L);
  EMIT("%s = and i1 %s, %s", b0, br0, bi0);
  nbc__lower_condbr(L, b0, special, test2);
  nbc__lower_block(L, special); /* complex(1.0) + complex(0.0j) */
  pow_result(L, ct, slot, fop(L, "fadd", ty, one, zero), fop(L, "fadd", ty, zero, zero), done);
  nbc__lower_block(L, test2);
  const char *ar0 = fcmp(L, "oeq", ty, ar, zero), *a0 = tmp(L);
  EMIT("%s = and i1 %s, %s", a0, ar0, br0);
  nbc__lower_condbr(L, a0, zero_base, general);
  nbc__lower_block(L, zero_base); /* complex(0.0) + complex(0.0j) */
  pow_result(L, ct, slot, fop(L, "fadd", ty, zero, zero), fop(L, "fadd", ty, zero, zero), done);
  nbc__lower_block(L, general);
  const char *vabs = math_of(L, pt, "hypot", 2, ar, ai);
  const char *len = math_of(L, pt, "pow", 2, vabs, br);
  const char *at = math_of(L, pt, "atan2", 2, ai, ar);
  const char *phase = fop(L, "fmul", ty, at, br);
  const char *bim = fcmp(L, "une", ty, bi, zero);
  const char *len2 = fop(L, "fdiv", ty, len, math_of(L, pt, "exp", 1,
                                                     fop(L, "fmul", ty, at, bi), NULL));
  const char *phase2 = fop(L, "fadd", ty, phase,
                           fop(L, "fmul", ty, bi, math_of(L, pt, "log", 1, vabs, NULL)));
  len = fselect(L, bim, ty, len2, len);
  phase = fselect(L, bim, ty, phase2, phase);
  const char *c = math_of(L, pt, "cos", 1, phase, NULL), *s = math_of(L, pt, "sin", 1, phase, NULL);
  const char *jr, *ji, *ur, *ui, *rr, *ri;
  mul_parts(L, ty, s, zero, zero, one, &jr, &ji); /* sin(phase) * 1j */
  ur = fop(L, "fadd", ty, c, jr);                 /* complex(cos(phase)) + ... */
  ui = fop(L, "fadd", ty, zero, ji);
  mul_parts(L, ty, len, zero, ur, ui, &rr, &ri);  /* len * (...) */
  pow_result(L, ct, slot, rr, ri, done);
  nbc__lower_block(L, done);
  const char *x = tmp(L);
  EMIT("%s = load %s, %s* %s", x, ltype(L, ct), ltype(L, ct), slot);
  return (nbc__lval){ct, x};
}

nbc__lval nbc__lower_complex_binop(nbc__lowerer *L, nbc__node *where, nbc__op op, nbc__lval a,
                                   nbc__lval b, const nbc__type *ct) {
  a = nbc__lower_convert(L, a, ct);
  b = nbc__lower_convert(L, b, ct);
  const nbc__type *pt = nbc__type_complex_part(ct);
  const char *ty = ltype(L, pt);
  const char *ar = nbc__lower_complex_part(L, a, 0).v, *ai = nbc__lower_complex_part(L, a, 1).v;
  const char *br = nbc__lower_complex_part(L, b, 0).v, *bi = nbc__lower_complex_part(L, b, 1).v;
  switch (op) {
  case NBC__OP_ADD:
    return nbc__lower_complex_make(L, ct, fop(L, "fadd", ty, ar, br),
                                   fop(L, "fadd", ty, ai, bi));
  case NBC__OP_SUB:
    return nbc__lower_complex_make(L, ct, fop(L, "fsub", ty, ar, br),
                                   fop(L, "fsub", ty, ai, bi));
  case NBC__OP_MUL: {
    const char *re = fop(L, "fsub", ty, fop(L, "fmul", ty, ar, br), fop(L, "fmul", ty, ai, bi));
    const char *im = fop(L, "fadd", ty, fop(L, "fmul", ty, ar, bi), fop(L, "fmul", ty, ai, br));
    return nbc__lower_complex_make(L, ct, re, im);
  }
  case NBC__OP_DIV:
    return complex_div(L, ct, a, b);
  case NBC__OP_POW:
    return complex_pow(L, ct, a, b);
  default:
    nbc__lower_error(L, where, "%s of complex numbers is not supported yet", nbc__op_text(op));
    return (nbc__lval){ct, "zeroinitializer"};
  }
}

const char *nbc__lower_complex_compare(nbc__lowerer *L, nbc__node *where, nbc__op op,
                                       nbc__lval a, nbc__lval b, const nbc__type *ct) {
  if (op != NBC__OP_EQ && op != NBC__OP_NE) {
    nbc__lower_error(L, where, "complex numbers have no order ('%s')", nbc__op_text(op));
    return "false";
  }
  a = nbc__lower_convert(L, a, ct);
  b = nbc__lower_convert(L, b, ct);
  const char *ty = ltype(L, nbc__type_complex_part(ct));
  bool eq = op == NBC__OP_EQ;
  const char *re = fcmp(L, eq ? "oeq" : "une", ty, nbc__lower_complex_part(L, a, 0).v,
                        nbc__lower_complex_part(L, b, 0).v);
  const char *im = fcmp(L, eq ? "oeq" : "une", ty, nbc__lower_complex_part(L, a, 1).v,
                        nbc__lower_complex_part(L, b, 1).v);
  const char *x = tmp(L);
  EMIT("%s = %s i1 %s, %s", x, eq ? "and" : "or", re, im);
  return x;
}

nbc__lval nbc__lower_complex_neg(nbc__lowerer *L, nbc__lval z) {
  const nbc__type *pt = nbc__type_complex_part(z.type);
  const char *ty = ltype(L, pt), *mz = nbc__lower_const_float(L, pt, -0.0);
  return nbc__lower_complex_make(L, z.type,
                                 fop(L, "fsub", ty, mz, nbc__lower_complex_part(L, z, 0).v),
                                 fop(L, "fsub", ty, mz, nbc__lower_complex_part(L, z, 1).v));
}

nbc__lval nbc__lower_complex_conjugate(nbc__lowerer *L, nbc__lval z) {
  const nbc__type *pt = nbc__type_complex_part(z.type);
  const char *ty = ltype(L, pt), *mz = nbc__lower_const_float(L, pt, -0.0);
  return nbc__lower_complex_make(L, z.type, nbc__lower_complex_part(L, z, 0).v,
                                 fop(L, "fsub", ty, mz, nbc__lower_complex_part(L, z, 1).v));
}

nbc__lval nbc__lower_complex_abs(nbc__lowerer *L, nbc__lval z) {
  const nbc__type *pt = nbc__type_complex_part(z.type);
  const char *ty = ltype(L, pt);
  const char *re = nbc__lower_complex_part(L, z, 0).v, *im = nbc__lower_complex_part(L, z, 1).v;
  const char *r =
      nbc__lower_call_fn(L, ty, pt->kind == NBC__T_FLOAT32 ? "__nv_hypotf" : "__nv_hypot",
                         nbc__arena_printf(L->arena, "%s, %s", ty, ty),
                         nbc__arena_printf(L->arena, "%s %s, %s %s", ty, re, ty, im));
  return (nbc__lval){pt, r};
}
