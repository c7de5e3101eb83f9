"""`for ... else` and `while ... else` in kernels, as Python (and numba) run them: the else
block runs when the loop ends because its test failed, not when a break left it; break and
continue inside the else block belong to the enclosing loop. CI checks types and PTX; the GPU
compares results with Python and with numba-cuda."""
import numpy as np
import pytest

import nbcuda as cuda
from conftest import load_kernel_module, numba_side
from test_compile import check_ptx

KERNELS = '''
@cuda.jit(device=True)
def find(a, v):
    for i in range(a.shape[0]):
        if a[i] == v:
            break
    else:
        return -1
    return i


@cuda.jit(device=True)
def first_neg(a):
    i = 0
    while i < a.shape[0]:
        if a[i] < 0:
            break
        i += 1
    else:
        i = -7
    return i


@cuda.jit(device=True)
def nested(a):
    n = 0
    for x in a:
        for j in range(3):
            if j == x:
                break
        else:
            n += 1
            continue
        n += 100
    return n


def loops(out, rows, v):
    k = cuda.grid(1)
    if k < rows.shape[0]:
        r = rows[k]
        out[k, 0] = find(r, v[k])
        out[k, 1] = first_neg(r)
        out[k, 2] = nested(r)
'''


def kernels(cuda_module, directory):
    return load_kernel_module(directory, "loop_else_kernels", KERNELS, cuda_module)


def test_loop_else_compiles(tmp_path):
    mod = kernels(cuda, tmp_path)
    ptx, _ = cuda.compile_ptx(mod.loops, "void(int64[:, ::1], int64[:, ::1], int64[::1])",
                              cc=(9, 0))
    check_ptx(ptx, tmp_path)
    assert str(cuda.compile(mod.find.py_func, "(int64[::1], int64)")[1]) == "int64"


def inputs():
    rng = np.random.default_rng(7)
    rows = rng.integers(-3, 6, size=(64, 5)).astype(np.int64)
    rows[::3] = np.abs(rows[::3])  # some rows without a negative number
    v = rng.integers(0, 6, size=64).astype(np.int64)
    return rows, v


def results(cuda_module, directory):
    mod = kernels(cuda_module, directory)
    rows, v = inputs()
    out = np.zeros((64, 3), np.int64)
    cuda_module.jit(mod.loops)[2, 32](out, rows, v)
    return {"out": out}


@pytest.mark.gpu
def test_loop_else_matches_python_and_numba_cuda(gpu, tmp_path):
    mine = results(cuda, tmp_path)["out"]
    mod = kernels(cuda, tmp_path)
    rows, v = inputs()
    expect = np.array([[mod.find.py_func(r, x), mod.first_neg.py_func(r),
                        mod.nested.py_func(r)] for r, x in zip(rows, v)])
    np.testing.assert_array_equal(mine, expect)
    theirs = numba_side("test_kernel_loop_else",
                        f"t.results(cuda, pathlib.Path({str(tmp_path)!r}))",
                        tmp_path / "numba.npz")
    np.testing.assert_array_equal(mine, theirs["out"])
