"""float16 on the GPU: nbcuda carries float16 as its 16 bits and computes in float32,
rounding after each operation, which must agree with numba-cuda's native f16 code (and,
before the fix, showed up as missing results: libNVVM 13 drops computations on `half`)."""
import math
from numba.types import float16
try:
    import nbcuda as cuda
except ImportError:
    from numba import cuda


def add16(a, b):
    return a + b


def mixed(a, b):
    # float16 meets float32: numba types the arithmetic as float32
    return a * b + a


def div_sub(a, b):
    return a / b - a


def cmp3(a, b):
    if a < b:
        return -1
    elif a > b:
        return 1
    elif a == b:
        return 0
    return 2


def spread(a, b):
    return max(a, b) - min(a, b)


def from64(x):
    return float16(x * 3.0)


def to_int(x):
    return int(x * float16(100))


def root(x):
    return math.sqrt(abs(x)) + -x


def fma16(out, x, y):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] * y[i] + x[i]


def scale_2d(out, x, s):
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        v = x[i, j]
        out[i, j] = v * s[j] if v > 0 else -v


CASES = [
    ("add16", "float16(float16, float16)", "device", {"args": [("float16", "normal"), ("float16", "normal")]}),
    ("mixed", "float32(float16, float32)", "device", {"args": [("float16", "normal"), ("float32", "normal")]}),
    ("div_sub", "float16(float16, float16)", "device", {"args": [("float16", "normal"), ("float16", "ints_nonzero")]}),
    ("cmp3", "int64(float16, float16)", "device", {"args": [("float16", "small_ints"), ("float16", "small_ints")]}),
    ("spread", "float16(float16, float16)", "device", {"args": [("float16", "normal"), ("float16", "normal")]}),
    ("from64", "float16(float64)", "device", {"args": [("float64", "normal")]}),
    ("to_int", "int64(float16)", "device", {"args": [("float16", "normal")]}),
    ("root", "float16(float16)", "device", {"args": [("float16", "normal")]}),
    ("fma16", "void(float16[:], float16[:], float16[:])", "kernel",
     {"arrays": [("out", "float16", (100003,)), ("in", "float16", (100003,), "normal"), ("in", "float16", (100003,), "normal")],
      "launch": ((100003 + 255) // 256, 256)}),
    ("scale_2d", "void(float16[:, :], float16[:, :], float16[:])", "kernel",
     {"arrays": [("out", "float16", (130, 70)), ("in", "float16", (130, 70), "normal"), ("in", "float16", (70,), "uniform")],
      "launch": ((9, 5), (16, 16))}),
]
