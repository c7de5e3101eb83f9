# cmath.py — the cmath module of the kernel language: numba-cuda's own implementations
# (numba/cuda/cpython/cmathimpl.py), in the kernel language, compiled by nbcuda like any other
# Python function (a library kernel, embedded at build time; src/compiler/lib_cmath.c types
# the calls as numba's templates do and calls the functions below).
#
# numba compiles its lowered functions (exp, log, sqrt, cos, ...) for the template's signature,
# (complex64,) -> complex64 or (complex128,) -> complex128, and converts what the body returns to
# that type: the _<name>__c64 / _<name>__c128 wrappers do the conversion here. Its overloads
# (log10, cosh, sinh, tanh, acosh, phase, polar, rect) return what their body types to: they are
# called directly. Constants numba freezes as float32 (numpy float32 scalars, NEP 50) are
# float32(...) here; the others are float64, as numba's Python floats are.
import cmath
import math

from numba import complex64, complex128, float32

NAN = math.nan
INF = math.inf


def _isnan_impl(z):
    return math.isnan(z.real) or math.isnan(z.imag)


def _isinf_impl(z):
    return math.isinf(z.real) or math.isinf(z.imag)


def _isfinite_impl(z):
    return math.isfinite(z.real) and math.isfinite(z.imag)


def _rect_impl(r, phi):
    if not math.isfinite(phi):
        if not r:
            # cmath.rect(0, phi={inf, nan}) = 0
            return abs(r)
        if math.isinf(r):
            # cmath.rect(inf, phi={inf, nan}) = inf + j phi
            return complex(r, phi)
    real = math.cos(phi)
    imag = math.sin(phi)
    if real == 0.0 and math.isinf(r):
        # 0 * inf would return NaN, we want to keep 0 but xor the sign
        real /= r
    else:
        real *= r
    if imag == 0.0 and math.isinf(r):
        # ditto
        imag /= r
    else:
        imag *= r
    return complex(real, imag)


def _exp_impl(x, y, x_is_finite, y_is_finite):
    if x_is_finite:
        if y_is_finite:
            c = math.cos(y)
            s = math.sin(y)
            r = math.exp(x)
            return complex(r * c, r * s)
        else:
            return complex(NAN, NAN)
    elif math.isnan(x):
        if y:
            return complex(x, x)  # nan + j nan
        else:
            return complex(x, y)  # nan + 0j
    elif x > 0.0:
        # x == +inf
        if y_is_finite:
            real = math.cos(y)
            imag = math.sin(y)
            # Avoid NaNs if math.cos(y) or math.sin(y) == 0
            # (e.g. cmath.exp(inf + 0j) == inf + 0j)
            if real != 0:
                real *= x
            if imag != 0:
                imag *= x
            return complex(real, imag)
        else:
            return complex(x, NAN)
    else:
        # x == -inf
        if y_is_finite:
            r = math.exp(x)
            c = math.cos(y)
            s = math.sin(y)
            return complex(r * c, r * s)
        else:
            r = 0
            return complex(r, r)


def _log_impl(x, y, x_is_finite, y_is_finite):
    a = math.log(math.hypot(x, y))
    b = math.atan2(y, x)
    return complex(a, b)


def _log10_impl(z):
    LN_10 = 2.302585092994045684
    z = cmath.log(z)
    # This formula gives better results on +/-inf than cmath.log(z, 10)
    return complex(z.real / LN_10, z.imag / LN_10)


def _phase_impl(x):
    return math.atan2(x.imag, x.real)


def _polar_impl(x):
    r, i = x.real, x.imag
    return math.hypot(r, i), math.atan2(i, r)


def _sqrt_impl(z, THRES):
    # This is NumPy's algorithm, see npy_csqrt() in npy_math_complex.c.src
    a = z.real
    b = z.imag
    if a == 0.0 and b == 0.0:
        return complex(abs(b), b)
    if math.isinf(b):
        return complex(abs(b), b)
    if math.isnan(a):
        return complex(a, a)
    if math.isinf(a):
        if a < 0.0:
            return complex(abs(b - b), math.copysign(a, b))
        else:
            return complex(a, math.copysign(b - b, b))
    # Scale to avoid overflow
    if abs(a) >= THRES or abs(b) >= THRES:
        a *= 0.25
        b *= 0.25
        scale = True
    else:
        scale = False
    # Algorithm 312, CACM vol 10, Oct 1967
    if a >= 0:
        t = math.sqrt((a + math.hypot(a, b)) * 0.5)
        real = t
        imag = b / (2 * t)
    else:
        t = math.sqrt((-a + math.hypot(a, b)) * 0.5)
        real = abs(b) / (2 * t)
        imag = math.copysign(t, b)
    # Rescale
    if scale:
        return complex(real * 2, imag)
    else:
        return complex(real, imag)


def _cos_impl(z):
    return cmath.cosh(complex(-z.imag, z.real))


def _cosh_impl(z):
    x = z.real
    y = z.imag
    if math.isinf(x):
        if math.isnan(y):
            # x = +inf, y = NaN => cmath.cosh(x + y j) = inf + Nan * j
            real = abs(x)
            imag = y
        elif y == 0.0:
            # x = +inf, y = 0 => cmath.cosh(x + y j) = inf + 0j
            real = abs(x)
            imag = y
        else:
            real = math.copysign(x, math.cos(y))
            imag = math.copysign(x, math.sin(y))
        if x < 0.0:
            # x = -inf => negate imaginary part of result
            imag = -imag
        return complex(real, imag)
    return complex(math.cos(y) * math.cosh(x), math.sin(y) * math.sinh(x))


def _sin_impl(z):
    r = cmath.sinh(complex(-z.imag, z.real))
    return complex(r.imag, -r.real)


def _sinh_impl(z):
    x = z.real
    y = z.imag
    if math.isinf(x):
        if math.isnan(y):
            # x = +/-inf, y = NaN => cmath.sinh(x + y j) = x + NaN * j
            real = x
            imag = y
        else:
            real = math.cos(y)
            imag = math.sin(y)
            if real != 0.0:
                real *= x
            if imag != 0.0:
                imag *= abs(x)
        return complex(real, imag)
    return complex(math.cos(y) * math.sinh(x), math.sin(y) * math.cosh(x))


def _tan_impl(z):
    r = cmath.tanh(complex(-z.imag, z.real))
    return complex(r.imag, -r.real)


def _tanh_impl(z):
    x = z.real
    y = z.imag
    if math.isinf(x):
        real = math.copysign(1.0, x)
        if math.isinf(y):
            imag = 0.0
        else:
            imag = math.copysign(0.0, math.sin(2.0 * y))
        return complex(real, imag)
    # This is CPython's algorithm (see c_tanh() in cmathmodule.c).
    tx = math.tanh(x)
    ty = math.tan(y)
    cx = 1.0 / math.cosh(x)
    txty = tx * ty
    denom = 1.0 + txty * txty
    return complex(tx * (1.0 + ty * ty) / denom, ((ty / denom) * cx) * cx)


def _acos_impl(z):
    LN_4 = 1.3862943611198906
    THRES = float32(8.5070586659632215e37)
    # CPython's algorithm (see c_acos() in cmathmodule.c)
    if abs(z.real) > THRES or abs(z.imag) > THRES:
        # Avoid unnecessary overflow for large arguments
        # (also handles infinities gracefully)
        real = math.atan2(abs(z.imag), z.real)
        imag = math.copysign(
            math.log(math.hypot(z.real * 0.5, z.imag * 0.5)) + LN_4, -z.imag
        )
        return complex(real, imag)
    else:
        s1 = cmath.sqrt(complex(1.0 - z.real, -z.imag))
        s2 = cmath.sqrt(complex(1.0 + z.real, z.imag))
        real = 2.0 * math.atan2(s1.real, s2.real)
        imag = math.asinh(s2.real * s1.imag - s2.imag * s1.real)
        return complex(real, imag)


def _acosh_impl(z):
    LN_4 = 1.3862943611198906
    THRES = float32(8.5070586659632215e37)
    # CPython's algorithm (see c_acosh() in cmathmodule.c)
    if abs(z.real) > THRES or abs(z.imag) > THRES:
        real = math.log(math.hypot(z.real * 0.5, z.imag * 0.5)) + LN_4
        imag = math.atan2(z.imag, z.real)
        return complex(real, imag)
    else:
        s1 = cmath.sqrt(complex(z.real - 1.0, z.imag))
        s2 = cmath.sqrt(complex(z.real + 1.0, z.imag))
        real = math.asinh(s1.real * s2.real + s1.imag * s2.imag)
        imag = 2.0 * math.atan2(s1.imag, s2.real)
        return complex(real, imag)


def _asinh_impl(z):
    LN_4 = 1.3862943611198906
    THRES = float32(8.5070586659632215e37)
    # CPython's algorithm (see c_asinh() in cmathmodule.c)
    if abs(z.real) > THRES or abs(z.imag) > THRES:
        real = math.copysign(
            math.log(math.hypot(z.real * 0.5, z.imag * 0.5)) + LN_4, z.real
        )
        imag = math.atan2(z.imag, abs(z.real))
        return complex(real, imag)
    else:
        s1 = cmath.sqrt(complex(1.0 + z.imag, -z.real))
        s2 = cmath.sqrt(complex(1.0 - z.imag, z.real))
        real = math.asinh(s1.real * s2.imag - s2.real * s1.imag)
        imag = math.atan2(z.imag, s1.real * s2.real - s1.imag * s2.imag)
        return complex(real, imag)


def _asin_impl(z):
    r = cmath.asinh(complex(-z.imag, z.real))
    return complex(r.imag, -r.real)


def _atan_impl(z):
    r = cmath.atanh(complex(-z.imag, z.real))
    if math.isinf(z.real) and math.isnan(z.imag):
        return complex(r.imag, r.real)
    else:
        return complex(r.imag, -r.real)


def _atanh_impl(z):
    THRES_LARGE = 9.223371761976865e18
    THRES_SMALL = 1.0842021724855044e-19
    PI_12 = 1.5707963267948966
    # CPython's algorithm (see c_atanh() in cmathmodule.c)
    if z.real < 0.0:
        # Reduce to case where z.real >= 0., using atanh(z) = -atanh(-z).
        negate = True
        z = -z
    else:
        negate = False
    ay = abs(z.imag)
    if math.isnan(z.real) or z.real > THRES_LARGE or ay > THRES_LARGE:
        if math.isinf(z.imag):
            real = math.copysign(0.0, z.real)
        elif math.isinf(z.real):
            real = 0.0
        else:
            h = math.hypot(z.real * 0.5, z.imag * 0.5)
            real = z.real / 4.0 / h / h
        imag = -math.copysign(PI_12, -z.imag)
    elif z.real == 1.0 and ay < THRES_SMALL:
        # C99 standard says:  atanh(1+/-0.) should be inf +/- 0j
        if ay == 0.0:
            real = INF
            imag = z.imag
        else:
            real = -math.log(math.sqrt(ay) / math.sqrt(math.hypot(ay, 2.0)))
            imag = math.copysign(math.atan2(2.0, -ay) / 2, z.imag)
    else:
        sqay = ay * ay
        zr1 = 1 - z.real
        real = math.log1p(4.0 * z.real / (zr1 * zr1 + sqay)) * 0.25
        imag = -math.atan2(-2.0 * z.imag, zr1 * (1 + z.real) - sqay) * 0.5
    if math.isnan(z.imag):
        imag = NAN
    if negate:
        return complex(-real, -imag)
    else:
        return complex(real, imag)


# The lowered functions at the template's type.
def _exp__c64(z):
    return complex64(_exp_impl(z.real, z.imag, math.isfinite(z.real), math.isfinite(z.imag)))


def _exp__c128(z):
    return complex128(_exp_impl(z.real, z.imag, math.isfinite(z.real), math.isfinite(z.imag)))


def _log__c64(z):
    return complex64(_log_impl(z.real, z.imag, math.isfinite(z.real), math.isfinite(z.imag)))


def _log__c128(z):
    return complex128(_log_impl(z.real, z.imag, math.isfinite(z.real), math.isfinite(z.imag)))


def _log_base__c64(z, base):
    return complex64(cmath.log(z) / cmath.log(base))


def _log_base__c128(z, base):
    return complex128(cmath.log(z) / cmath.log(base))


def _sqrt__c64(z):
    return complex64(_sqrt_impl(z, float32(1.4094955303793193e38)))


def _sqrt__c128(z):
    return complex128(_sqrt_impl(z, 7.446288774449766e307))


def _cos__c64(z):
    return complex64(_cos_impl(z))


def _cos__c128(z):
    return complex128(_cos_impl(z))


def _sin__c64(z):
    return complex64(_sin_impl(z))


def _sin__c128(z):
    return complex128(_sin_impl(z))


def _tan__c64(z):
    return complex64(_tan_impl(z))


def _tan__c128(z):
    return complex128(_tan_impl(z))


def _acos__c64(z):
    return complex64(_acos_impl(z))


def _acos__c128(z):
    return complex128(_acos_impl(z))


def _asin__c64(z):
    return complex64(_asin_impl(z))


def _asin__c128(z):
    return complex128(_asin_impl(z))


def _atan__c64(z):
    return complex64(_atan_impl(z))


def _atan__c128(z):
    return complex128(_atan_impl(z))


def _asinh__c64(z):
    return complex64(_asinh_impl(z))


def _asinh__c128(z):
    return complex128(_asinh_impl(z))


def _atanh__c64(z):
    return complex64(_atanh_impl(z))


def _atanh__c128(z):
    return complex128(_atanh_impl(z))
