"""math.frexp and math.modf in kernels, as numba-cuda lowers them (libdevice's frexp/modf,
the second result through a pointer), with numba's result types (asked of numba-cuda 0.30
for each row). On the GPU the results are compared with numpy and numba-cuda."""
import inspect
import math

import numpy as np
import pytest

import nbcuda as cuda

from test_compile import check_ptx


def frexp_of(a):
    return math.frexp(a)


def modf_of(a):
    return math.modf(a)


@pytest.mark.parametrize("fn, sig, numba_says", [
    (frexp_of, "(float32,)", "Tuple(float32, int32)"),
    (frexp_of, "(float64,)", "Tuple(float64, int32)"),
    (frexp_of, "(int64,)", "Tuple(float64, int32)"),
    (frexp_of, "(float16,)", "Tuple(float32, int32)"),
    (modf_of, "(float32,)", "UniTuple(float32 x 2)"),
    (modf_of, "(float64,)", "UniTuple(float64 x 2)"),
    (modf_of, "(int64,)", "UniTuple(float64 x 2)"),
    (modf_of, "(float16,)", "UniTuple(float64 x 2)"),
])
def test_types_are_numbas(fn, sig, numba_says):
    assert str(cuda.compile_ptx(fn, sig, device=True, cc=(9, 0))[1]) == numba_says


def split(mant, expo, frac, whole, x):
    i = cuda.grid(1)
    if i < x.size:
        m, e = math.frexp(x[i])
        mant[i] = m
        expo[i] = e
        f, w = math.modf(x[i])
        frac[i] = f
        whole[i] = w


SIG = "void(float64[::1], int32[::1], float64[::1], float64[::1], float64[::1])"


def test_kernel_compiles_and_ptxas_accepts(tmp_path):
    ptx, _ = cuda.compile_ptx(split, SIG, cc=(9, 0))
    check_ptx(ptx, tmp_path)


@pytest.mark.gpu
def test_results_are_numpys_and_numbas(gpu, tmp_path, monkeypatch):
    x = np.array([0.0, -0.0, 1.0, -2.5, 3.75, 1e-310, 6.02e23, -7.125, 0.5])
    n = x.size

    def run(cuda_mod, kernel):
        out = (np.zeros(n), np.zeros(n, np.int32), np.zeros(n), np.zeros(n))
        cuda_mod.jit(SIG)(kernel).forall(n)(*out, x)
        return out

    mant, expo, frac, whole = run(cuda, split)
    m, e = np.frexp(x)
    f, w = np.modf(x)
    np.testing.assert_array_equal(mant, m)
    np.testing.assert_array_equal(expo, e)
    np.testing.assert_array_equal(frac, f)
    np.testing.assert_array_equal(whole, w)

    ncuda = pytest.importorskip("numba.cuda")
    (tmp_path / "numba_math_kernels.py").write_text(
        "import math\nfrom numba import cuda\n\n" + inspect.getsource(split))
    monkeypatch.syspath_prepend(str(tmp_path))
    import numba_math_kernels as t
    for mine, theirs in zip((mant, expo, frac, whole), run(ncuda, t.split)):
        np.testing.assert_array_equal(mine, theirs)


def float_of_strings(out):
    out[0] = float("nan")
    out[1] = float(" -inf ")
    out[2] = float("1.5e3")


def float_of_bad_string(out):
    out[0] = float("1.5x")


def test_float_of_a_string_literal_is_its_constant(tmp_path):
    """numba folds float("nan") (and any literal Python's float() reads) into the constant."""
    ptx, _ = cuda.compile_ptx(float_of_strings, "void(float64[::1])", cc=(9, 0))
    for bits in (0x7FF8000000000000, -0x10000000000000, 0x4097700000000000):  # nan, -inf, 1500
        assert str(bits) in ptx
    with pytest.raises(cuda.TypingError, match="could not convert string to float: '1.5x'"):
        cuda.compile_ptx(float_of_bad_string, "void(float64[::1])", cc=(9, 0))
