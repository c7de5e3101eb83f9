# arraymath_nansum.py — np.nansum / np.nanprod (numba's np_nansum, np_nanprod): the sum or
# product of the elements that are not NaN, accumulated in int64 for integers and booleans,
# else in the dtype. A template (src/compiler/arraymath.c fills it): INIT and OP as in
# arraymath_sum.py; lines that start with FLOAT or COMPLEX test the element for NaN (numba's
# get_isnan: other elements never are), NAN_IN the indentation under that test.
import math
from numba import boolean, float64, int64@IMPORTS@


def _@NAME@(a):
    c = @INIT@
@LOOPS@@IN@v = a[@IDX@]
@COMPLEX@@IN@if not (math.isnan(v.real) or math.isnan(v.imag)):
@FLOAT@@IN@if not math.isnan(v):
@NAN_IN@c @OP@= v
    return c
