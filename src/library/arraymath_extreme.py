# arraymath_extreme.py — min, max, amin, amax, argmin, argmax of an array (numba's
# arraymath.py): the first element, then each later one that compares beyond it; a NaN is
# returned at once (floats; argmin/argmax: its position), complex numbers compare by real,
# then imaginary part; an empty array raises numba's ValueError. A template (src/compiler/
# arraymath.c fills it): SIGN < or >, EXTREME minimum or maximum, SHORT min or max, RESULT
# and POSITION the names returned (m and v, or k and n for argmin/argmax); a line that starts
# with FLOAT, COMPLEX, REAL, ARG or VALUE is the element type's or the reduction's only (the
# others make it a comment). LOOPS, IN, IN4 (IN plus 4), IDX and FIRST (the first element's
# index) as in arraymath_sum.py.
import math
from numba import boolean, float64, int64@IMPORTS@


def _@NAME@(a):
    if a.size == 0:
@VALUE@        raise ValueError("zero-size array to reduction operation @EXTREME@ which has no identity")
@ARG@        raise ValueError("attempt to get arg@SHORT@ of an empty sequence")
    m = a[@FIRST@]
@ARG@    k = 0
@FLOAT@    if math.isnan(m):
@FLOAT@        return @RESULT@
@ARG@    n = 0
@LOOPS@@IN@v = a[@IDX@]
@FLOAT@@IN@if math.isnan(v):
@FLOAT@@IN4@return @POSITION@
@COMPLEX@@IN@if v.real @SIGN@ m.real or (v.real == m.real and v.imag @SIGN@ m.imag):
@REAL@@IN@if v @SIGN@ m:
@IN4@m = v
@ARG@@IN4@k = n
@ARG@@IN@n += 1
    return @RESULT@
