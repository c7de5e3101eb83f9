"""Writes tests/data/numpy_typing.tsv: numba-cuda's typing of the numpy ufuncs nbcuda supports
in kernels, on every scalar type nbcuda accepts there, as numba's CUDA typing context
resolves them (numba-cuda 0.30.4; its cuda.compile fails to *lower* several of these over
arrays, such as np.sqrt, which nbcuda does lower). tests/c/test_numpy.c checks nbcuda against every row.

Run: python3 tools/gen_numpy_typing.py > tests/data/numpy_typing.tsv
"""
import os
import sys

os.environ.setdefault("CUDA_HOME", "/usr/local/cuda")
import numpy

# numba 0.68 still refers to names numpy 2.4 removed.
for old, new in (("row_stack", "vstack"), ("in1d", "isin"), ("trapz", "trapezoid")):
    if not hasattr(numpy, old):
        setattr(numpy, old, getattr(numpy, new))

from numba import types
from numba.cuda.descriptor import cuda_target

UNARY = ["sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
         "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
         "fabs", "deg2rad", "radians", "rad2deg", "degrees", "floor", "ceil", "trunc",
         "absolute", "isnan", "isinf", "isfinite", "logical_not", "invert", "conjugate"]
BINARY = ["minimum", "maximum", "fmin", "fmax", "arctan2", "hypot", "copysign", "power",
          "greater", "greater_equal", "less", "less_equal", "equal", "not_equal",
          "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
          "bitwise_xor", "left_shift", "right_shift"]
SCALARS = [types.boolean, types.int8, types.int16, types.int32, types.int64, types.uint8,
           types.uint16, types.uint32, types.uint64, types.float32, types.float64]


def main():
    ctx = cuda_target.typing_context
    ctx.refresh()
    print("ufunc\tA\tB\tresult")
    for name in UNARY + BINARY:
        fnty = ctx.resolve_value_type(getattr(numpy, name))
        combos = [(a,) for a in SCALARS] if name in UNARY else \
                 [(a, b) for a in SCALARS for b in SCALARS]
        for args in combos:
            try:
                sig = ctx.resolve_function_type(fnty, args, {})
                res = str(sig.return_type) if sig else "-"
            except Exception:
                res = "-"
            print(f"{name}\t{args[0]}\t{args[1] if len(args) > 1 else '-'}\t{res}")


if __name__ == "__main__":
    sys.exit(main())
