# arraymath_count.py — np.count_nonzero(a): the number of elements != 0, an int64. A template
# (src/compiler/arraymath.c fills it; LOOPS, IN, IN4 and IDX as in arraymath_sum.py).
import math
from numba import boolean, float64, int64@IMPORTS@


def _count_nonzero(a):
    c = 0
@LOOPS@@IN@if a[@IDX@] != 0:
@IN4@c += 1
    return c
