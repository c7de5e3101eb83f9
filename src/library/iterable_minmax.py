# iterable_minmax.py — the builtins min(it) / max(it) of numba's cpython/builtins.py: the first
# element, replaced by each later one that compares SIGN (< or >) it; an empty array raises
# StopIteration (next() of an exhausted iterator). A template (src/compiler/arraymath.c fills
# it): a line that starts with TUPLE or ARRAY is the iterable's only (the other makes it a
# comment).
from numba import literal_unroll


def _@NAME@(a):
@TUPLE@    m = a[0]
@TUPLE@    for v in literal_unroll(a):
@TUPLE@        if v @SIGN@ m:
@TUPLE@            m = v
@TUPLE@    return m
@ARRAY@    if a.shape[0] == 0:
@ARRAY@        raise StopIteration()
@ARRAY@    m = a[0]
@ARRAY@    for i in range(1, a.shape[0]):
@ARRAY@        v = a[i]
@ARRAY@        if v @SIGN@ m:
@ARRAY@            m = v
@ARRAY@    return m
