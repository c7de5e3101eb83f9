"""literal_unroll in kernels, as numba-cuda's cuda.literal_unroll: `for v in
literal_unroll(t)` over a tuple whose items have different types runs the body once per item,
each typed alone (v is an int64 in one copy, a float64 or a bool in another), with break and
continue working on the loop. The tuple is a parameter of the function, a tuple display or a
global tuple, or, nested, a tuple item of the enclosing loop's tuple. CI checks types, PTX and
the error for another tuple; the GPU compares results with Python (numba-cuda 0.30.4 refuses
these loops: see the GPU test)."""
import numpy as np
import pytest

import nbcuda as cuda
from conftest import load_kernel_module
from test_compile import check_ptx

KERNELS = '''
MIXED = (1, 2.5, True)


@cuda.jit(device=True)
def weighted(t, x):
    s = 0.0
    for v in cuda.literal_unroll(t):
        s += v * x
    return s


def through_parameter(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = weighted((x[i], 2, False), 0.5)


def unrolled(out, x):
    i = cuda.grid(1)
    if i < x.size:
        s = 0.0
        for w in cuda.literal_unroll(MIXED):
            if w == 2.5:
                continue
            s += w * x[i]
        for u in cuda.literal_unroll((x[i], 3, 0.25)):
            s += u
            if u == 3:
                break
        out[i] = s


def nested(out, x, t):
    # literal_unroll over an item that is itself a tuple (of the parameter t and of a
    # display); each copy of the outer body has its own inner loops
    i = cuda.grid(1)
    if i < x.size:
        s = 0.0
        for u in cuda.literal_unroll(t):
            for v in cuda.literal_unroll(u):
                s += v * x[i]
            s += len(u)
        for p in cuda.literal_unroll(((1, 0.5), (True, 2))):
            for q in cuda.literal_unroll(p):
                s -= q
        out[i] = s
'''

NESTED_SIG = ("void(float64[::1], float64[::1], "
              "Tuple((UniTuple(int32, 2), Tuple((float32, int64)))))")


def kernels(cuda_module, directory):
    return load_kernel_module(directory, "unroll_kernels", KERNELS, cuda_module)


def test_literal_unroll_types_each_item(tmp_path):
    mod = kernels(cuda, tmp_path)
    ptx, _ = cuda.compile_ptx(mod.unrolled, "void(float64[::1], float64[::1])", cc=(9, 0))
    check_ptx(ptx, tmp_path)
    sig = "(Tuple(int64, float64, bool), float64)"
    assert str(cuda.compile(mod.weighted.py_func, sig)[1]) == "float64"
    assert cuda.literal_unroll((1, 2.5)) == (1, 2.5)  # the host's: the container itself
    src = ("def f(x):\n    t = (1, 2.5)\n    s = 0.0\n    for v in cuda.literal_unroll(t):\n"
           "        s += v\n    return s\n")
    m = load_kernel_module(tmp_path, "unroll_bad", src, cuda)
    with pytest.raises(cuda.CompileError, match="literal_unroll\\(\\) takes a tuple that is a "
                       "parameter of the function, a tuple display, a global tuple"):
        cuda.compile(m.f, "(float64,)")


def test_literal_unroll_nested(tmp_path):
    mod = kernels(cuda, tmp_path)
    ptx, _ = cuda.compile_ptx(mod.nested, NESTED_SIG, cc=(9, 0))
    check_ptx(ptx, tmp_path)
    src = ("def f(t):\n    s = 0.0\n    for u in cuda.literal_unroll(t):\n        u = (1, 2)\n"
           "        for v in cuda.literal_unroll(u):\n            s += v\n    return s\n")
    m = load_kernel_module(tmp_path, "unroll_reassigned", src, cuda)
    with pytest.raises(cuda.CompileError, match="literal_unroll\\(\\) takes a tuple"):
        cuda.compile(m.f, "(Tuple(UniTuple(int64, 2), UniTuple(int64, 2)),)")


def results(cuda_module, directory):
    mod = kernels(cuda_module, directory)
    x = np.linspace(-2.0, 3.0, 40)
    out = {"out": np.zeros(40), "param": np.zeros(40)}
    cuda_module.jit(mod.unrolled)[2, 32](out["out"], x)
    cuda_module.jit(mod.through_parameter)[2, 32](out["param"], x)
    out["nested"] = np.zeros(40)
    cuda_module.jit(mod.nested)[2, 32](out["nested"], x, ((np.int32(3), np.int32(-4)),
                                                         (np.float32(0.25), 7)))
    return out


@pytest.mark.gpu
def test_literal_unroll_matches_python(gpu, tmp_path):
    mine = results(cuda, tmp_path)
    x = np.linspace(-2.0, 3.0, 40)
    np.testing.assert_allclose(mine["param"], x * 0.5 + 1.0 + 0.0, rtol=1e-15)
    # x == 3 (the last element) breaks out of the last loop before its 3 is added
    expect = (1 * x + True * x) + x + np.where(x == 3, 0, 3)
    np.testing.assert_allclose(mine["out"], expect, rtol=1e-15)
    np.testing.assert_allclose(mine["nested"], x * (3 - 4 + 0.25 + 7) + 4
                               - (1 + 0.5 + 1 + 2), rtol=1e-15)
    # numba-cuda 0.30.4 refuses every one of these loops ("Invalid use of getiter with
    # parameters (Tuple(int64, float64, bool))", on the H200), so Python is the reference.
