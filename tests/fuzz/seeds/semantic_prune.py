import numpy as np
from numba import cuda

ALIGN = None


@cuda.jit(device=True)
def last(a, b=None):
    if a.ndim == 2:
        return a[0, a.shape[1] - 1]
    elif a.ndim != 1:
        return a[0, 0, 0]
    if b is None:
        return a[a.shape[0] - 1]
    return a[0] + b


@cuda.jit(device=True)
def third(t):
    if len(t) >= 3:
        return t[2]
    return t[0]


def kernel(out, v, m, x=None, y=1000):
    loc = cuda.local.array(4, np.float64, alignment=ALIGN)
    loc[0] = last(v) + last(m) + last(v, 2.0) + third((1.0, 2.0, 3.0)) + third((4.0, 5.0))
    if x is None:
        out[0] = loc[0]
    else:
        out[0] = x
    if y == 1000:
        out[1] = np.greater(1 + 2j, 1 + 1j) + np.maximum(1j, 2.0).real
    out[2] = v.ctypes.data + (x == None) + cuda.ldcg(v, 0)
