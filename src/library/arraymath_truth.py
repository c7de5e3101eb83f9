# arraymath_truth.py — a.all() / a.any(): the truth of every / some element. A template
# (src/compiler/arraymath.c fills it): NOT "not " for all, STOP what an element that decides
# returns (all: False, any: True) and END the other; LOOPS, IN, IN4 and IDX as in
# arraymath_sum.py.
import math
from numba import boolean, float64, int64@IMPORTS@


def _@NAME@(a):
@LOOPS@@IN@if @NOT@a[@IDX@]:
@IN4@return @STOP@
    return @END@
