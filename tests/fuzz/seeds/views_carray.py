import numpy as np
from numba import cuda
from numba import carray, farray


def k(p, raw, z, out, n):
    a = carray(p, (n, 2))
    b = farray(p, n)
    v = raw[1:9].view(np.int32)
    w = z.real
    x = z.imag
    x[0] = w[0] + a[0, 1] + b[0] + v[0]
    out[0] = raw.view(np.uint16)[3] + z.view(np.float32)[1]


def star(out, t):
    out[0] = max(*t)
    out[1] = complex(*(1.0, 2.0)).imag
