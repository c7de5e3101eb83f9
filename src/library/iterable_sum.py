# iterable_sum.py — the builtin sum(it, start) of numba's cpython/builtins.py: `acc = start;
# for x in it: acc = acc + x`, a tuple's items unrolled. A template (src/compiler/arraymath.c
# fills it): a line that starts with TUPLE, RANGE or ARRAY is the iterable's only (the others
# make it a comment).
from numba import literal_unroll


def _sum(a, start):
    acc = start
@TUPLE@    for x in literal_unroll(a):
@TUPLE@        acc = acc + x
@RANGE@    for x in a:
@RANGE@        acc = acc + x
@ARRAY@    for i in range(a.shape[0]):
@ARRAY@        acc = acc + a[i]
    return acc
