# npyfuncs.py — numba's npyfuncs for the numpy ufuncs it computes on a complex number with
# formulas of its own (NumPy's funcs.inc.src as numba translates them; the others go to
# cmath), in the kernel language. A template (src/compiler/lib_numpy.c fills it for the
# precision of the call and compiles _np_<ufunc>): F and C, between at-signs, stand for the
# float and complex types of the precision (float32 parts and constants for complex64, as
# numba's ty.underlying_float).
import math
import cmath
import numpy as np


def _np_sinh(z):
    xr = z.real
    xi = z.imag
    return @C@(complex(math.cos(xi) * math.sinh(xr),
                      math.sin(xi) * math.cosh(xr)))


def _np_cosh(z):
    xr = z.real
    xi = z.imag
    return @C@(complex(math.cos(xi) * math.cosh(xr),
                      math.sin(xi) * math.sinh(xr)))


def _np_tanh(z):
    xr = z.real
    xi = z.imag
    si = math.sin(xi)
    ci = math.cos(xi)
    shr = math.sinh(xr)
    chr_ = math.cosh(xr)
    rs = ci * shr
    is_ = si * chr_
    rc = ci * chr_
    ic = si * shr
    d = rc * rc + ic * ic
    inv_d = @F@(1.0) / d
    numr = rs * rc + is_ * ic
    numi = is_ * rc - rs * ic
    return @C@(complex(numr * inv_d, numi * inv_d))


def _np_arccosh(z):
    one = @C@(1.0)
    return cmath.log(z + cmath.sqrt(z + one) * cmath.sqrt(z - one))


def _np_exp2(z):
    loge2 = @F@(0.693147180559945309417232121458176568)
    return cmath.exp(@C@(complex(loge2 * z.real, loge2 * z.imag)))


def _np_log2(z):
    t = cmath.log(z)
    log2e = @F@(1.442695040888963407359924681001892137)
    return @C@(complex(log2e * t.real, log2e * t.imag))


def _np_log10(z):
    t = cmath.log(z)
    log10e = @F@(0.434294481903251827651128918916605082)
    return @C@(complex(log10e * t.real, log10e * t.imag))


def _np_expm1(z):
    a = math.exp(z.real)
    return @C@(complex(a * math.cos(z.imag) + @F@(-1.0), a * math.sin(z.imag)))


def _np_log1p(z):
    rp1 = z.real + @F@(1.0)
    l = math.hypot(rp1, z.imag)
    return @C@(complex(math.log(l), math.atan2(z.imag, rp1)))
