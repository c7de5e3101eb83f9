# arraymath_mean.py — a.mean(), a.var(), a.std() as numba's arraymath.py computes them: the
# mean in ACC (float64 for integers and booleans, else the dtype), the variance in two passes
# (the mean, then the squared differences), std = var ** 0.5. A template (src/compiler/
# arraymath.c fills it for the array's type; LOOPS, IN and IDX as in arraymath_sum.py).
import math
from numba import boolean, float64, int64@IMPORTS@


def _mean(a):
    c = @ACC@(0)
@LOOPS@@IN@c += a[@IDX@]
    return c / a.size


def _var(a):
    m = _mean(a)
    ssd = 0
@LOOPS@@IN@val = a[@IDX@] - m
@IN@ssd += (val * val.conjugate()).real
    return ssd / a.size


def _std(a):
    return _var(a) ** 0.5
