"""range() with float bounds truncates them to the integer type numba picks (int32 when
every argument is a float or an int32, int64 with an int64): both compilers must agree."""
try:
    import nbcuda as cuda
except ImportError:
    from numba import cuda


def upto_float(x):
    s = 0
    for i in range(x):
        s += i
    return s


def from_one(k):
    n = float(k % 1000)
    s = 0
    for i in range(1, n + 1):
        s += i
    return s


def stepped(a, b, c):
    s = 0
    for i in range(a % 100, b, c % 7 + 1):
        s += i
    return s


CASES = [
    ("upto_float", "int64(float64)", "device", {"args": [("float64", "uniform_0_1e6")]}),
    ("from_one", "int64(int64)", "device", {"args": [("int64", "ints")]}),
    ("stepped", "int64(int64, float64, int64)", "device",
     {"args": [("int64", "ints"), ("float64", "uniform_0_1e6"), ("int64", "ints")]}),
]
