# arraymath_nanmean.py — np.nanmean, np.nanvar, np.nanstd (numba's np_nanmean...): numba's
# c = 0.0, count = 0 and np.divide(c, count) over the elements that are not NaN, NaN (NaN +
# NaNj for complex numbers) when there is none. A complex c is divided as numpy's complex
# division divides by count + 0j: each part plus the other times 0, times the reciprocal of
# count. A template (src/compiler/arraymath.c fills it): ZERO 0.0 or 0j; lines that start
# with FLOAT, COMPLEX or REAL as in arraymath_nansum.py and arraymath_extreme.py.
import math
from numba import boolean, float64, int64@IMPORTS@


def _nanmean(a):
    c = @ZERO@
    n = 0
@LOOPS@@IN@v = a[@IDX@]
@COMPLEX@@IN@if not (math.isnan(v.real) or math.isnan(v.imag)):
@FLOAT@@IN@if not math.isnan(v):
@NAN_IN@c += v
@NAN_IN@n += 1
@COMPLEX@    if n == 0:
@COMPLEX@        return complex(math.nan, math.nan)
@COMPLEX@    scl = 1.0 / n
@COMPLEX@    return complex((c.real + c.imag * 0.0) * scl, (c.imag - c.real * 0.0) * scl)
@REAL@    if n == 0:
@REAL@        return math.nan
@REAL@    return c / n


def _nanvar(a):
    m = _nanmean(a)
    ssd = 0.0
    n = 0
@LOOPS@@IN@v = a[@IDX@]
@COMPLEX@@IN@if not (math.isnan(v.real) or math.isnan(v.imag)):
@FLOAT@@IN@if not math.isnan(v):
@NAN_IN@val = v - m
@NAN_IN@ssd += (val * val.conjugate()).real
@NAN_IN@n += 1
    if n == 0:
        return math.nan
    return ssd / n


def _nanstd(a):
    return _nanvar(a) ** 0.5
