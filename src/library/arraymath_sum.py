# arraymath_sum.py — a.sum() / a.prod() (numba's arraymath.py array_sum / array_prod), over
# every element in C order. A template (src/compiler/arraymath.c fills it for the reduction
# and the array's type): NAME the reduction, INIT the accumulator's first value (sum: the
# dtype's numba _expand_integer type, 0; prod: the dtype, 1), OP + or *; LOOPS the loops over
# a's axes, IN the indentation inside them and IDX the element's index (see arraymath.c).
import math
from numba import boolean, float64, int64@IMPORTS@


def _@NAME@(a):
    c = @INIT@
@LOOPS@@IN@c @OP@= a[@IDX@]
    return c
