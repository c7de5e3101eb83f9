"""Reductions of arrays in kernels, as numba's arraymath.py: a.sum(), a.prod(), a.mean(),
a.var(), a.std(), a.min(), a.max(), a.argmin(), a.argmax(), a.all(), a.any() and their numpy
functions (np.sum(a), np.amin(a)...), over arrays of any rank and layout (rows, slices, local
arrays): numba's result types (sum of small integers is int64, mean is float64...), NaN
returned by min/max/argmin/argmax at the first NaN, complex numbers compared by real then
imaginary part, an empty array raising ValueError (the thread ends). CI: types and PTX; the GPU
compares results with numpy and numba-cuda, and the types with numba-cuda's (min and max with
numpy only: numba-cuda 0.30.4 cannot compile them in a kernel)."""
import inspect

import numpy as np
import pytest

import nbcuda as cuda
from test_compile import check_ptx


def r_sum(a):
    return a.sum()


def r_prod(a):
    return np.prod(a)


def r_mean(a):
    return a.mean()


def r_var(a):
    return np.var(a)


def r_std(a):
    return a.std()


def r_min(a):
    return a.min()


def r_amax(a):
    return np.amax(a)


def r_argmin(a):
    return a.argmin()


def r_argmax(a):
    return np.argmax(a)


def r_all(a):
    return np.all(a)


def r_any(a):
    return a.any()


FUNCS = [r_sum, r_prod, r_mean, r_var, r_std, r_min, r_amax, r_argmin, r_argmax, r_all, r_any]
SIGS = ["(int32[:],)", "(float32[:, :],)", "(uint8[::1],)", "(boolean[:],)",
        "(float64[:, :, ::1],)", "(int16[::1, :],)"]
EXPECTED = {  # numba's result types (arraymath.py's accumulators and numba's unification)
    "r_sum": ["int64", "float32", "uint64", "int64", "float64", "int64"],
    "r_prod": ["int64", "float32", "uint64", "int64", "float64", "int64"],
    "r_mean": ["float64"] * 6,
    "r_var": ["float64"] * 6,
    "r_std": ["float64"] * 6,
    "r_min": ["int32", "float32", "uint8", "bool", "float64", "int16"],
    "r_amax": ["int32", "float32", "uint8", "bool", "float64", "int16"],
    "r_argmin": ["int64"] * 6,
    "r_argmax": ["int64"] * 6,
    "r_all": ["bool"] * 6,
    "r_any": ["bool"] * 6,
}


@pytest.mark.parametrize("fn", FUNCS, ids=lambda f: f.__name__)
def test_result_types_are_numbas(fn):
    for sig, want in zip(SIGS, EXPECTED[fn.__name__]):
        assert str(cuda.compile_ptx(fn, sig, device=True, cc=(9, 0))[1]) == want, sig


def with_axis(a):
    return a.sum(axis=0)


def complex_argmin(a):
    return a.argmin()


def half_all(a):
    return a.all()


def of_scalar(x):
    return np.sum(x)


def test_errors_are_clear():
    with pytest.raises(cuda.CompileError, match=r"sum\(\) with arguments \(axis, dtype, out"):
        cuda.compile_ptx(with_axis, "(float32[:, :],)", device=True, cc=(9, 0))
    with pytest.raises(cuda.TypingError, match="complex numbers have no order"):
        cuda.compile_ptx(complex_argmin, "(complex64[:],)", device=True, cc=(9, 0))
    with pytest.raises(cuda.TypingError, match="truth value of a float16"):
        cuda.compile_ptx(half_all, "(float16[:],)", device=True, cc=(9, 0))
    with pytest.raises(cuda.TypingError, match=r"sum\(\) of float64 is not supported"):
        cuda.compile_ptx(of_scalar, "(float64,)", device=True, cc=(9, 0))


def reduce_rows(out, idx, flags, a, c):
    i = cuda.grid(1)
    if i < a.shape[0]:
        row = a[i]
        out[i, 0] = row.sum()
        out[i, 1] = np.prod(row[:4])
        out[i, 2] = row.mean()
        out[i, 3] = row.var()
        out[i, 4] = np.std(row)
        idx[i, 0] = row.argmin()
        idx[i, 1] = np.argmax(row)
        flags[i, 0] = np.all(row)
        flags[i, 1] = row.any()
        loc = cuda.local.array(3, np.float64)
        for k in range(3):
            loc[k] = row[k] * 2
        out[i, 5] = loc.sum() + a[8:, 1:].sum()  # a 2-D view of the array
        out[i, 6] = abs(c[i].sum()) + c[i].var()


def extremes(out, a, c):
    # numba-cuda 0.30.4 cannot compile min/max in a kernel (its npy_min takes the first
    # element with next(np.nditer(a)).take(0): "Only accept returning of array passed into
    # the function as argument"), so these are compared with numpy only
    i = cuda.grid(1)
    if i < a.shape[0]:
        row = a[i]
        out[i, 0] = row.min()
        out[i, 1] = np.amax(row)
        out[i, 2] = a[8:, 1:].max()
        cz = c[i]
        out[i, 3] = cz.min().real + cz.max().imag
        out[i, 4] = row[:i % 3].min()  # an empty slice in one thread of three: it ends here


SIG = "void(float64[:, ::1], int64[:, ::1], boolean[:, ::1], float64[:, ::1], complex128[:, ::1])"
SIG_EXTREMES = "void(float64[:, ::1], float64[:, ::1], complex128[:, ::1])"


def test_kernels_compile_and_ptxas_accepts(tmp_path):
    for kernel, sig in ((reduce_rows, SIG), (extremes, SIG_EXTREMES)):
        ptx, _ = cuda.compile_ptx(kernel, sig, cc=(9, 0))
        check_ptx(ptx, tmp_path)


def inputs():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((48, 7))
    a[3, 2] = np.nan        # min/max/argmin/argmax: the first NaN
    a[4, :] = 0             # all() False, any() False
    a[5, 4] = -np.inf
    c = rng.standard_normal((48, 5)) + 1j * rng.standard_normal((48, 5))
    c[6, :] = c[6, 0].real + 1j * np.arange(5)  # equal real parts: the imaginary decides
    return a, c


def run(cuda_mod, kernel, a, c):
    n = a.shape[0]
    out = np.full((n, 7), 99.0)
    idx = np.full((n, 2), -1, np.int64)
    flags = np.zeros((n, 2), np.bool_)
    cuda_mod.jit(SIG)(kernel)[2, 32](out, idx, flags, a, c)
    return out, idx, flags


@pytest.mark.gpu
def test_results_match_numpy_and_numba_cuda(gpu, tmp_path, monkeypatch):
    a, c = inputs()
    out, idx, flags = run(cuda, reduce_rows, a, c)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(out[:, 0], a.sum(axis=1), rtol=1e-13)
        np.testing.assert_allclose(out[:, 1], a[:, :4].prod(axis=1), rtol=1e-13)
        np.testing.assert_allclose(out[:, 2], a.mean(axis=1), rtol=1e-13)
        np.testing.assert_allclose(out[:, 3], a.var(axis=1), rtol=1e-12)
        np.testing.assert_allclose(out[:, 4], a.std(axis=1), rtol=1e-12)
        np.testing.assert_array_equal(idx[:, 0], a.argmin(axis=1))
        np.testing.assert_array_equal(idx[:, 1], a.argmax(axis=1))
        np.testing.assert_array_equal(flags[:, 0], a.all(axis=1))
        np.testing.assert_array_equal(flags[:, 1], a.any(axis=1))
        np.testing.assert_allclose(out[:, 5], (a[:, :3] * 2).sum(axis=1) + a[8:, 1:].sum(),
                                   rtol=1e-13)
        np.testing.assert_allclose(out[:, 6], np.abs(c.sum(axis=1)) + c.var(axis=1),
                                   rtol=1e-13)

    ncuda = pytest.importorskip("numba.cuda")
    (tmp_path / "numba_reduction_kernels.py").write_text(
        "import numpy as np\nfrom numba import cuda\n\n" + inspect.getsource(reduce_rows))
    monkeypatch.syspath_prepend(str(tmp_path))
    import numba_reduction_kernels as t
    theirs = run(ncuda, t.reduce_rows, a, c)
    for mine, other in zip((out, idx, flags), theirs):
        np.testing.assert_array_equal(mine, other)


@pytest.mark.gpu
def test_min_max_match_numpy(gpu):
    a, c = inputs()
    n = a.shape[0]
    out = np.full((n, 5), 99.0)
    cuda.jit(SIG_EXTREMES)(extremes)[2, 32](out, a, c)
    np.testing.assert_array_equal(out[:, 0], a.min(axis=1))  # NaN in row 3, -inf in row 5
    np.testing.assert_array_equal(out[:, 1], a.max(axis=1))
    np.testing.assert_array_equal(out[:, 2], a[8:, 1:].max())
    cmin = np.array([min(r, key=lambda z: (z.real, z.imag)) for r in c])
    cmax = np.array([max(r, key=lambda z: (z.real, z.imag)) for r in c])
    np.testing.assert_array_equal(out[:, 3], cmin.real + cmax.imag)
    k = np.arange(n) % 3
    np.testing.assert_array_equal(out[:, 4], [a[i, :k[i]].min() if k[i] else 99.0
                                              for i in range(n)])


@pytest.mark.gpu
def test_result_types_match_numba_cuda(gpu):
    ncuda = pytest.importorskip("numba.cuda")
    for fn in FUNCS:
        if fn in (r_min, r_amax):  # numba-cuda 0.30.4 cannot compile these (see extremes)
            continue
        for sig in SIGS:
            mine = str(cuda.compile_ptx(fn, sig, device=True, cc=(9, 0))[1])
            theirs = str(ncuda.compile_ptx(fn, sig, device=True, cc=(9, 0))[1])
            assert mine == theirs, (fn.__name__, sig)


def b_sum(a):
    return sum(a)


def b_sum_start(a):
    return sum(a, 1.5)


def b_max(a):
    return max(a)


def b_min(a):
    return min(a)


def b_tuple(x):
    return sum((x, 2, 3.5)) + max((x, 2.0, 1)) + min((x, 7))


@pytest.mark.parametrize("fn, sig, numba_says", [
    (b_sum, "(float32[::1],)", "float64"), (b_sum, "(int32[:],)", "int64"),
    (b_sum, "(uint64[:],)", "int64"), (b_sum_start, "(int8[:],)", "float64"),
    (b_max, "(float32[:],)", "float32"), (b_min, "(uint16[::1],)", "uint16"),
    (b_tuple, "(int32,)", "float64"),
])
def test_builtin_sum_min_max_types(fn, sig, numba_says):
    # numba's builtins.py: acc = start (int64 0) + each item; min/max keep the item type
    assert str(cuda.compile_ptx(fn, sig, device=True, cc=(9, 0))[1]) == numba_says


def test_builtin_sum_min_max_refuse_rows_and_complex_order():
    with pytest.raises(cuda.TypingError, match=r"sum\(\) of array\(float32, 2d, A\) is not "
                       "supported in kernels"):
        cuda.compile_ptx(b_sum, "(float32[:, :],)", device=True, cc=(9, 0))
    with pytest.raises(cuda.TypingError, match="its items have no order"):
        cuda.compile_ptx(b_max, "(complex64[:],)", device=True, cc=(9, 0))


def builtins_kernel(out, a, x):
    i = cuda.grid(1)
    if i < a.shape[0]:
        row = a[i]
        out[i, 0] = sum(row)
        out[i, 1] = sum(row, 0.5) + max(row) - min(row)
        out[i, 2] = sum((x[i], 2, 3.5)) + max((x[i], 2.0, 1)) + min((x[i], 7))
        out[i, 3] = max(row[:i % 2])  # an empty row in one thread of two: StopIteration


BUILTINS_SIG = "void(float64[:, ::1], float64[:, ::1], int32[::1])"


def test_builtins_kernel_compiles(tmp_path):
    ptx, _ = cuda.compile_ptx(builtins_kernel, BUILTINS_SIG, cc=(9, 0))
    check_ptx(ptx, tmp_path)


@pytest.mark.gpu
def test_builtins_match_python_and_numba_cuda(gpu, tmp_path, monkeypatch):
    a, _ = inputs()
    x = np.arange(a.shape[0], dtype=np.int32) - 20

    def run(cuda_mod, kernel):
        out = np.full((a.shape[0], 4), 99.0)
        cuda_mod.jit(BUILTINS_SIG)(kernel)[2, 32](out, a, x)
        return out

    def plain_sum(items, start=0):  # numba's loop (Python 3.12's sum() of floats compensates)
        acc = start
        for v in items:
            acc = acc + v
        return acc

    out = run(cuda, builtins_kernel)
    for i, row in enumerate(a):
        assert out[i, 0] == plain_sum(row.tolist()) or (np.isnan(out[i, 0]) and
                                                        np.isnan(row).any())
        want = plain_sum(row.tolist(), 0.5) + max(row.tolist()) - min(row.tolist())
        assert out[i, 1] == want or (np.isnan(out[i, 1]) and np.isnan(want))
        xi = int(x[i])
        assert out[i, 2] == sum((xi, 2, 3.5)) + max((xi, 2.0, 1)) + min((xi, 7))
        assert out[i, 3] == (99.0 if i % 2 == 0 else max(row[:1].tolist()))
    ncuda = pytest.importorskip("numba.cuda")
    (tmp_path / "numba_builtin_kernels.py").write_text(
        "from numba import cuda\n\n" + inspect.getsource(builtins_kernel))
    monkeypatch.syspath_prepend(str(tmp_path))
    import numba_builtin_kernels as t
    np.testing.assert_array_equal(out, run(ncuda, t.builtins_kernel))
