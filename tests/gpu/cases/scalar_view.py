"""x.view(dtype) of a scalar (numba's scalar_view): the same bits as another integer or float
type of the same size, as numerical emulation code uses it. Both compilers must agree."""
import numpy as np
try:
    import nbcuda as cuda
except ImportError:
    from numba import cuda


def bits64(x):
    return x.view(np.int64)


def from_bits(i):
    return (i & 0x7FEFFFFFFFFFFFFF).view(np.float64)


def exponent32(x):
    return (x.view(np.uint32) >> 23) & 0xFF


def round_trip32(x):
    return x.view(np.int32).view(np.float32) * 2


CASES = [
    ("bits64", "int64(float64)", "device", {"args": [("float64", "normal")]}),
    ("from_bits", "float64(int64)", "device", {"args": [("int64", "ints")]}),
    ("exponent32", "uint32(float32)", "device", {"args": [("float32", "normal")]}),
    ("round_trip32", "float32(float32)", "device", {"args": [("float32", "normal")]}),
]
