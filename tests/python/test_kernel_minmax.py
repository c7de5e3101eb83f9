"""Builtin max/min of two floats, as numba-cuda lowers them (its test_minmax.py): libdevice's
fmax/fmin (`max.f64` / `min.f32` in the PTX), float32 when both are float32, else float64,
so a NaN argument gives the other one (numpy's fmax/fmin). Three or more arguments, tuples
and integers keep numba's do_minmax (a running compare and select). CI checks the PTX; the
GPU compares with numpy and numba-cuda, NaNs included."""
import numpy as np
import pytest

import nbcuda as cuda
from conftest import load_kernel_module
from test_compile import compile_checked

SOURCE = '''
from numba import float64


def builtin_max(A, B, C):
    i = cuda.grid(1)
    if i >= len(C):
        return
    C[i] = float64(max(A[i], B[i]))


def builtin_min(A, B, C):
    i = cuda.grid(1)
    if i >= len(C):
        return
    C[i] = float64(min(A[i], B[i]))


def three(A, B, C):
    i = cuda.grid(1)
    if i < len(C):
        C[i] = max(A[i], B[i], 0.25)
'''

CASES = [("builtin_max", "max", np.fmax), ("builtin_min", "min", np.fmin)]
DTYPES = [(np.float64, np.float64), (np.float32, np.float64), (np.float64, np.float32),
          (np.float32, np.float32)]


def sig(left, right):
    name = {np.float32: "float32", np.float64: "float64"}
    return f"void({name[left]}[::1], {name[right]}[::1], float64[::1])"


@pytest.fixture
def m(tmp_path):
    return load_kernel_module(tmp_path, "minmax", SOURCE, cuda)


@pytest.mark.parametrize("name, op, _", CASES)
@pytest.mark.parametrize("left, right", DTYPES)
def test_two_floats_use_libdevice_fmax_fmin(m, name, op, _, left, right, tmp_path):
    ptx = compile_checked(getattr(m, name), sig(left, right), tmp_path)
    width = "f32" if left == right == np.float32 else "f64"
    assert f"{op}.{width}" in ptx


def test_three_arguments_keep_the_running_select(m):
    ptx, _ = cuda.compile_ptx(m.three, "void(float64[::1], float64[::1], float64[::1])",
                              cc=(9, 0))
    assert "max.f64" not in ptx and "selp.f64" in ptx


def values(dtype):
    return np.array([0.5, 1.5, np.nan, -np.inf, 2.0, np.nan, -0.0], dtype)


def run_all(lib, m):
    out = {}
    b = np.array([2.0, np.nan, 1.0, 3.0, -np.inf, np.nan, 0.0])
    for name, _, _ in CASES:
        for left, right in DTYPES:
            k = lib.jit(sig(left, right))(getattr(m, name))
            c = np.zeros(7)
            k[1, 7](values(left), b.astype(right), c)
            out[f"{name}_{left.__name__}_{right.__name__}"] = c
    c = np.zeros(7)
    lib.jit(m.three)[1, 7](values(np.float64), b, c)
    out["three"] = c
    return out, b


@pytest.mark.gpu
def test_matches_numpy_and_numba_cuda(gpu, tmp_path, m):
    mine, b = run_all(cuda, m)
    for name, _, npop in CASES:
        for left, right in DTYPES:
            want = npop(values(left).astype(np.float64), b.astype(right).astype(np.float64))
            np.testing.assert_array_equal(mine[f"{name}_{left.__name__}_{right.__name__}"],
                                          want)
    ncuda = pytest.importorskip("numba.cuda")
    theirs, _ = run_all(ncuda, load_kernel_module(tmp_path, "minmax_numba", SOURCE, ncuda))
    for key in mine:
        np.testing.assert_array_equal(mine[key], theirs[key], err_msg=key)
