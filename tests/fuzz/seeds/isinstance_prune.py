import numpy as np
from numba import cuda, float32, int64


@cuda.jit(device=True)
def first(b):
    if isinstance(b, tuple):
        b = b[0]
    elif not isinstance(b, (int, float32)):
        b = -b
    return b


def kernel(out, x, t):
    out[0] = first(t) + first(x) + isinstance(x, np.float32)
    if isinstance(x, int64):
        out[1] = 1
    for i in range(3):
        if isinstance(t, tuple):
            out[i] = len(t)
    out[2] = 1 if isinstance(x, complex) else isinstance(x, bool)
