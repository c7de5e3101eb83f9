"""numpy's NaN-skipping reductions and count_nonzero in kernels, as numba's arraymath.py has
them (np.nansum, np.nanprod, np.nanmean, np.nanvar, np.nanstd, np.nanmin, np.nanmax,
np.count_nonzero of a whole array of any rank and layout): numba's result types (nansum and
nanprod accumulate integers in int64, nanmean in float64 or complex128), NaN from
nanmean/nanvar/nanstd when no element counts (numba's np.divide by a count of 0), nanmin and
nanmax of an empty array raising ValueError; they are numpy functions only (`a.nansum()` is
not an array method). CI: types and PTX; the GPU compares results with numpy and numba-cuda
(nanmin and nanmax with numpy only: numba-cuda 0.30.4 cannot compile them in a kernel).
"""
import numpy as np
import pytest

import nbcuda as cuda
from conftest import load_kernel_module
from test_compile import check_ptx


def r_nansum(a):
    return np.nansum(a)


def r_nanprod(a):
    return np.nanprod(a)


def r_nanmean(a):
    return np.nanmean(a)


def r_nanvar(a):
    return np.nanvar(a)


def r_nanstd(a):
    return np.nanstd(a)


def r_nanmin(a):
    return np.nanmin(a)


def r_nanmax(a):
    return np.nanmax(a)


def r_count_nonzero(a):
    return np.count_nonzero(a)


FUNCS = [r_nansum, r_nanprod, r_nanmean, r_nanvar, r_nanstd, r_nanmin, r_nanmax,
         r_count_nonzero]
SIGS = ["(int32[:],)", "(float32[:, :],)", "(uint8[::1],)", "(boolean[:],)",
        "(float64[:, :, ::1],)", "(complex64[:],)", "(int16[::1, :],)"]
EXPECTED = {  # numba's: retty intp for integers (bool: c += v unifies to int64), ...
    "r_nansum": ["int64", "float32", "int64", "int64", "float64", "complex64", "int64"],
    "r_nanprod": ["int64", "float32", "int64", "int64", "float64", "complex64", "int64"],
    "r_nanmean": ["float64"] * 5 + ["complex128", "float64"],  # c = 0.0; c += v
    "r_nanvar": ["float64"] * 7,
    "r_nanstd": ["float64"] * 7,
    "r_nanmin": ["int32", "float32", "uint8", "bool", "float64", "complex64", "int16"],
    "r_nanmax": ["int32", "float32", "uint8", "bool", "float64", "complex64", "int16"],
    "r_count_nonzero": ["int64"] * 7,
}


@pytest.mark.parametrize("fn", FUNCS, ids=lambda f: f.__name__)
def test_result_types_are_numbas(fn):
    for sig, want in zip(SIGS, EXPECTED[fn.__name__]):
        assert str(cuda.compile_ptx(fn, sig, device=True, cc=(9, 0))[1]) == want, sig


def nansum_method(a):
    return a.nansum()


def test_they_are_numpy_functions_only():
    with pytest.raises(cuda.TypingError, match="nansum"):
        cuda.compile_ptx(nansum_method, "(float64[:],)", device=True, cc=(9, 0))


KERNEL_SOURCE = '''
import numpy as np


def reduce_rows(out, counts, a, c, k):
    i = cuda.grid(1)
    if i < a.shape[0]:
        row = a[i]
        out[i, 0] = np.nansum(row)
        out[i, 1] = np.nanprod(row[:4])
        out[i, 2] = np.nanmean(row)
        out[i, 3] = np.nanvar(row)
        out[i, 4] = np.nanstd(row)
        z = np.nanmean(c[i])
        out[i, 5] = z.real + np.nanvar(c[i])
        counts[i, 0] = np.count_nonzero(row)
        counts[i, 1] = np.nansum(k[i])
        counts[i, 2] = np.count_nonzero(k[i])


def extremes(out, ints, a, c, k):
    # numba-cuda 0.30.4 cannot compile nanmin/nanmax in a kernel (its next(it).take(0) of a
    # 0-d array fails to lower): nbcuda's are compared with numpy only
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i, 0] = np.nanmin(a[i])
        out[i, 1] = np.nanmax(a[i])
        m = np.nanmin(c[i])
        x = np.nanmax(c[i])
        out[i, 2] = m.real + x.imag
        ints[i, 0] = np.nanmin(k[i])
        ints[i, 1] = np.nanmax(k[i])
'''
SIG = "void(float64[:, ::1], int64[:, ::1], float64[:, ::1], complex128[:, ::1], int32[:, ::1])"


def inputs():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((40, 6))
    a[1, 0] = np.nan                  # a NaN first: nanmin/nanmax take the next number
    a[2, 3] = np.nan
    a[3, :] = np.nan                  # nothing counts: NaN mean/var/std, NaN min/max
    a[4, :] = 0                       # count_nonzero 0
    a[5, [1, 4]] = np.nan
    a[6, 2] = np.inf
    c = rng.standard_normal((40, 5)) + 1j * rng.standard_normal((40, 5))
    c[7, 1] = complex(np.nan, 1.0)
    c[8, :] = c[8, 0].real + 1j * np.arange(5)  # equal real parts: the imaginary decides
    k = rng.integers(-3, 4, (40, 5)).astype(np.int32)
    return a, c, k


def run(lib, tmp_path):
    m = load_kernel_module(tmp_path, f"nan_reductions_{lib.__name__.replace('.', '_')}",
                           KERNEL_SOURCE, lib)
    a, c, k = inputs()
    out = np.full((a.shape[0], 6), 99.0)
    counts = np.full((a.shape[0], 3), -1, np.int64)
    lib.jit(SIG)(m.reduce_rows)[2, 32](out, counts, a, c, k)
    return out, counts


def test_kernel_compiles_and_ptxas_accepts(tmp_path):
    m = load_kernel_module(tmp_path, "nan_reductions_ptx", KERNEL_SOURCE, cuda)
    ptx, _ = cuda.compile_ptx(m.reduce_rows, SIG, cc=(9, 0))
    check_ptx(ptx, tmp_path)


def numpy_nan_extreme(row, pick):
    """numba's nanmin/nanmax of complex numbers: by real part, then imaginary, NaN skipped."""
    kept = [z for z in row if not np.isnan(z.real)]
    return pick(kept, key=lambda z: (z.real, z.imag)) if kept else row[0]


@pytest.mark.gpu
def test_results_match_numpy_and_numba_cuda(gpu, tmp_path):
    a, c, k = inputs()
    out, counts = run(cuda, tmp_path)
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        np.testing.assert_allclose(out[:, 0], np.nansum(a, axis=1), rtol=1e-13)
        np.testing.assert_allclose(out[:, 1], np.nanprod(a[:, :4], axis=1), rtol=1e-13)
        np.testing.assert_allclose(out[:, 2], np.nanmean(a, axis=1), rtol=1e-13)
        np.testing.assert_allclose(out[:, 3], np.nanvar(a, axis=1), rtol=1e-12)
        np.testing.assert_allclose(out[:, 4], np.nanstd(a, axis=1), rtol=1e-12)
        np.testing.assert_allclose(out[:, 5], np.nanmean(c, axis=1).real + np.nanvar(c, axis=1),
                                   rtol=1e-12)
    np.testing.assert_array_equal(counts[:, 0], np.count_nonzero(a, axis=1))
    np.testing.assert_array_equal(counts[:, 1], k.sum(axis=1))
    np.testing.assert_array_equal(counts[:, 2], np.count_nonzero(k, axis=1))
    assert np.isnan(out[3, 2:5]).all()
    theirs = run(pytest.importorskip("numba.cuda"), tmp_path)
    np.testing.assert_array_equal(out, theirs[0])
    np.testing.assert_array_equal(counts, theirs[1])


@pytest.mark.gpu
def test_nanmin_nanmax_match_numpy(gpu, tmp_path):
    a, c, k = inputs()
    m = load_kernel_module(tmp_path, "nan_extremes", KERNEL_SOURCE, cuda)
    out = np.full((a.shape[0], 3), 99.0)
    ints = np.zeros((a.shape[0], 2), np.int32)
    sig = "void(float64[:, ::1], int32[:, ::1], float64[:, ::1], complex128[:, ::1], " \
          "int32[:, ::1])"
    cuda.jit(sig)(m.extremes)[2, 32](out, ints, a, c, k)
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):  # row 3: all NaN
        np.testing.assert_array_equal(out[:, 0], np.nanmin(a, axis=1))
        np.testing.assert_array_equal(out[:, 1], np.nanmax(a, axis=1))
    cmin = np.array([numpy_nan_extreme(r, min) for r in c])
    cmax = np.array([numpy_nan_extreme(r, max) for r in c])
    np.testing.assert_array_equal(out[:, 2], cmin.real + cmax.imag)
    np.testing.assert_array_equal(ints, np.stack([k.min(axis=1), k.max(axis=1)], axis=1))


def empty_nanmin(out, a):
    out[0] = np.nanmin(a[:0])


@pytest.mark.gpu
def test_nanmin_of_nothing_raises_in_debug(gpu):
    # numba's check_array: ValueError("zero-size array to reduction operation not possible"),
    # which a kernel compiled with debug=True reports when it ends
    k = cuda.jit("void(float64[::1], float64[::1])", debug=True, opt=False)(empty_nanmin)
    with pytest.raises(ValueError, match="zero-size array to reduction operation not possible"):
        k[1, 1](np.zeros(1), np.ones(3))


@pytest.mark.gpu
def test_result_types_match_numba_cuda(gpu):
    ncuda = pytest.importorskip("numba.cuda")
    for fn in FUNCS:
        for sig in SIGS:
            if fn in (r_nanmin, r_nanmax):
                continue  # numba-cuda 0.30.4 cannot compile these (see extremes)
            mine = str(cuda.compile_ptx(fn, sig, device=True, cc=(9, 0))[1])
            theirs = str(ncuda.compile_ptx(fn, sig, device=True, cc=(9, 0))[1])
            assert mine == theirs, (fn.__name__, sig)
