# arraymath_nanextreme.py — np.nanmin / np.nanmax (numba's nan_min_max_factory): the first
# element, then each later one that is not NaN and not beyond it (numba's `if not
# comparison_op(return_val, v)`); a NaN first element is replaced by the first number after
# it; complex numbers compare by real, then imaginary part. A template (src/compiler/
# arraymath.c fills it): SIGN < or >; lines that start with FLOAT, COMPLEX or REAL as in
# arraymath_extreme.py, NAN_IN and NAN_IN4 the indentation under the NaN test and 4 more.
import math
from numba import boolean, float64, int64@IMPORTS@


def _@NAME@(a):
    if a.size == 0:
        raise ValueError("zero-size array to reduction operation not possible")
    r = a[@FIRST@]
@LOOPS@@IN@v = a[@IDX@]
@COMPLEX@@IN@if math.isnan(r.real) and not math.isnan(v.real):
@COMPLEX@@IN4@r = v
@COMPLEX@@IN@elif v.real @SIGN@ r.real:
@COMPLEX@@IN4@r = v
@COMPLEX@@IN@elif v.real == r.real and v.imag @SIGN@ r.imag:
@COMPLEX@@IN4@r = v
@FLOAT@@IN@if not math.isnan(v):
@REAL@@NAN_IN@if not r @SIGN@ v:
@REAL@@NAN_IN4@r = v
    return r
