"""numpy's comparison and logical ufuncs of complex numbers in kernels, as numba computes them:
np.greater/greater_equal/less/less_equal order complex numbers by their real parts, then
their imaginary parts (NumPy's CGT... macros, numba's np_complex_gt_impl: different real parts
with a NaN imaginary part compare false), np.equal/not_equal compare both parts,
np.logical_and/or/xor/not take a complex number's truth (either part non-zero),
np.maximum/minimum (a NaN wins) and np.fmax/fmin (a number wins) pick by that order, a complex
number being NaN when either part is (numba's np_complex_maximum_impl...). The loop is
numpy's FF->? when every argument casts safely to complex64, else DD->?; on arrays with an
output array too (numba-cuda's test_ufuncs). CI: ptxas and the loops' precision; the GPU
compares with numpy and numba-cuda."""
import numpy as np
import pytest

import nbcuda as cuda
from conftest import assert_same_as_numba_cuda, load_kernel_module
from test_compile import compile_checked

SOURCE = '''
import numpy as np


def scalars(out, a, b):
    i = cuda.grid(1)
    if i < a.size:
        out[0, i] = np.greater(a[i], b[i])
        out[1, i] = np.greater_equal(a[i], b[i])
        out[2, i] = np.less(a[i], b[i])
        out[3, i] = np.less_equal(a[i], b[i])
        out[4, i] = np.equal(a[i], b[i])
        out[5, i] = np.not_equal(a[i], b[i])
        out[6, i] = np.logical_and(a[i], b[i])
        out[7, i] = np.logical_or(a[i], b[i])
        out[8, i] = np.logical_xor(a[i], b[i])
        out[9, i] = np.logical_not(a[i])


def arrays(a, b, out):
    np.less_equal(a, b, out)


def extremes(out, a, b):
    i = cuda.grid(1)
    if i < a.size:
        out[0, i] = np.maximum(a[i], b[i])
        out[1, i] = np.minimum(a[i], b[i])
        out[2, i] = np.fmax(a[i], b[i])
        out[3, i] = np.fmin(a[i], b[i])
'''

SIGS = ["void(boolean[:, ::1], complex64[::1], complex64[::1])",
        "void(boolean[:, ::1], complex128[::1], complex128[::1])",
        "void(boolean[:, ::1], complex64[::1], float64[::1])"]
NAN = float("nan")


@pytest.fixture
def m(tmp_path):
    return load_kernel_module(tmp_path, "complex_ufuncs", SOURCE, cuda)


def test_extremes_compile(m, tmp_path):
    for ct in ("complex64", "complex128"):
        ptx = compile_checked(m.extremes, f"void({ct}[:, ::1], {ct}[::1], {ct}[::1])", tmp_path)
        assert ("f64" in ptx) == (ct == "complex128")


@pytest.mark.parametrize("sig", SIGS)
def test_compiles_in_numpys_loop(m, sig, tmp_path):
    ptx = compile_checked(m.scalars, sig, tmp_path)
    # complex64 with complex64 compares in float32; with float64, numpy's DD->? loop
    assert ("setp" in ptx) and (("f64" in ptx) == ("float64" in sig or "complex128" in sig))


A = [1 + 2j, 1 + 3j, 2 + 0j, 1 + 2j, 0j, 3j, complex(1, NAN), complex(NAN, 0), -1 - 1j, 2 + 1j]
B = [1 + 2j, 1 + 2j, 1 + 5j, 0.5 + 9j, 0j, 0j, 2 + 0j, 1 + 0j, -1 + 0j, 2 + 1.5j]


def arg(values, dt):
    """values as an array of dt (their real parts for a real dt)."""
    v = np.array(values, np.complex128)
    return (v if np.dtype(dt).kind == "c" else v.real).astype(dt)


def operands(sig):
    adt, bdt = (t.split("[")[0] for t in sig[:-1].split(", ")[-2:])
    return arg(A, adt), arg(B, bdt)


def expected(a, b):
    funcs = [np.greater, np.greater_equal, np.less, np.less_equal, np.equal, np.not_equal,
             np.logical_and, np.logical_or, np.logical_xor]
    with np.errstate(invalid="ignore"):
        rows = [f(a, b) for f in funcs] + [np.logical_not(a)]
    return np.array(rows)


def run_all(lib, m):
    out = {}
    for sig in SIGS:
        a, b = operands(sig)
        got = np.zeros((10, a.size), bool)
        lib.jit(sig)(m.scalars)[1, 32](got, a, b)
        out[sig] = got
    a, b = arg(A, np.complex128), arg(B, np.complex128)
    got = np.zeros(a.size, bool)
    lib.jit("void(complex128[::1], complex128[::1], boolean[::1])")(m.arrays)[1, 32](a, b, got)
    out["arrays"] = got
    for ct in ("complex64", "complex128"):
        a, b = arg(A, ct), arg(B, ct)
        got = np.zeros((4, a.size), ct)
        lib.jit(f"void({ct}[:, ::1], {ct}[::1], {ct}[::1])")(m.extremes)[1, 32](got, a, b)
        out["extremes_" + ct] = got
    return out


def test_launches_on_the_test_driver(m, tdrv):
    run_all(cuda, m)


@pytest.mark.gpu
def test_matches_numpy_and_numba_cuda(gpu, tmp_path, m):
    mine = run_all(cuda, m)
    for sig in SIGS:
        np.testing.assert_array_equal(mine[sig], expected(*operands(sig)), err_msg=sig)
    a, b = arg(A, np.complex128), arg(B, np.complex128)
    np.testing.assert_array_equal(mine["arrays"], np.less_equal(a, b))
    for ct in ("complex64", "complex128"):
        a, b = arg(A, ct), arg(B, ct)
        with np.errstate(invalid="ignore"):
            want = [f(a, b) for f in (np.maximum, np.minimum, np.fmax, np.fmin)]
        np.testing.assert_array_equal(mine["extremes_" + ct], want, err_msg=ct)
    assert_same_as_numba_cuda(run_all, SOURCE, tmp_path, "complex_ufuncs_numba", mine)
