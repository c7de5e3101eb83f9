"""What CPython folds before numba sees it (src/compiler/fold.c): constant arithmetic in
shapes and expressions, branches on constant conditions, code after a jump. Both compilers
must give the same results."""
import numpy as np
try:
    import nbcuda as cuda
except ImportError:
    from numba import cuda


def arith(a, b):
    return a * (32 + 2) + (7 % -3) + (-(2 ** 3) // 3) + b // (1 << 4) + (2 ** 62 >> 60)


def floats(a):
    return a * (1.0 / 3) + 7.5 // 2 + (-7.5) % 2 + 2 ** -2 + 2.0 ** 0.5


def branch(w, u):
    return (w if True else u) | 3


def dead(a, b):
    if False:
        return a * b
    elif 0:
        return a - b
    while 0:
        a = b
    if True:
        return a + (b if not False else 0)
    return b


def shapes(out, x):
    s = cuda.shared.array(32 + 2, dtype=np.float32)
    t = cuda.local.array((2 * 2, 2 + 1), dtype=np.float32)
    i = cuda.grid(1)
    if i < x.shape[0]:
        t[3, 2] = x[i]
        s[cuda.threadIdx.x % (30 + 4)] = t[3, 2] * 2
        out[i] = s[cuda.threadIdx.x % 34] + s.shape[0] + t.shape[0] * 10 + (t.shape[1] if True else 0)


CASES = [
    ("arith", "int64(int64, int64)", "device", {"args": [("int64", "ints"), ("int64", "ints")]}),
    ("floats", "float64(float64)", "device", {"args": [("float64", "normal")]}),
    ("branch", "int64(int64, uint64)", "device", {"args": [("int64", "ints"), ("uint64", "ints")]}),
    ("dead", "int64(int64, int64)", "device", {"args": [("int64", "ints"), ("int64", "ints")]}),
    ("shapes", "void(float32[:], float32[:])", "kernel",
     {"arrays": [("out", "float32", (10007,)), ("in", "float32", (10007,), "normal")],
      "launch": ((10007 + 127) // 128, 128)}),
]
