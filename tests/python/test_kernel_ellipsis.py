"""Ellipsis and None (np.newaxis) in array indices inside kernels, and a.nbytes, as numba:
`a[..., 0]`, `a[0, ...]`, `a[None, 1:]`, `a[:, 1, None]`, stores through them
(`a[..., 0] = v`), the element when every dimension is an integer (`a[..., 1, 2]`). The
views' layouts are numba's (tests/c/test_infer.c checks them against numba's answers);
CI: ptxas accepts the kernel, misuse is a clear error; the GPU compares every value with
numpy's and numba-cuda's."""
import inspect

import numpy as np
import pytest

import nbcuda as cuda
from conftest import load_kernel_module
from test_compile import check_ptx


def ellipsis_views(out, a, x):
    # a: (4, 5, 6) float64, x: (7,) float64
    w = a[..., 0]                 # (4, 5), A
    v = a[1, ...]                 # (5, 6), C
    m = a[..., 2, 3]              # (4,), A
    e = a[1, ..., 3]              # (5,), A
    n = x[None, :]                # (1, 7), C
    c = x[:, np.newaxis]          # (7, 1), C
    t = a[None, 1:, :, None]      # (1, 3, 5, 1, 6)
    k = 0
    for i in range(4):
        for j in range(5):
            out[k] = w[i, j]
            k += 1
    for i in range(5):
        for j in range(6):
            out[k] = v[i, j]
            k += 1
    for i in range(4):
        out[k] = m[i]
        k += 1
    for i in range(5):
        out[k] = e[i]
        k += 1
    for j in range(7):
        out[k] = n[0, j] + c[j, 0]
        k += 1
    for i in range(3):
        for j in range(5):
            out[k] = t[0, i, j, 0, 4]
            k += 1
    out[k] = a[..., 1, 2, 3] + a[2, ..., 1, 0]           # the elements themselves
    out[k + 1] = w.shape[0] * 10 + w.shape[1] + t.ndim * 100 + t.shape[4] * 1000
    out[k + 2] = a.nbytes + x[::2].nbytes * 10000 + w.nbytes * 10000000


def ellipsis_expected(a, x):
    parts = [a[..., 0].ravel(), a[1, ...].ravel(), a[..., 2, 3], a[1, ..., 3],
             x[None, :][0] + x[:, np.newaxis][:, 0],
             a[None, 1:, :, None][0, :, :, 0, 4].ravel()]
    w = a[..., 0]
    t = a[None, 1:, :, None]
    parts.append([a[..., 1, 2, 3] + a[2, ..., 1, 0],
                  w.shape[0] * 10 + w.shape[1] + t.ndim * 100 + t.shape[4] * 1000,
                  a.nbytes + x[::2].nbytes * 10000 + w.nbytes * 10000000])
    return np.concatenate([np.ravel(p) for p in parts])


def ellipsis_stores(a, x):
    a[..., 0] = 7.0              # every a[i, j, 0]
    a[1, ...] = -1.0             # the whole a[1]
    a[None, 3, :, None, 5] = 9.0 # a[3, :, 5]
    x[None] = 2.5


SIG = "void(float64[::1], float64[:, :, ::1], float64[::1])"
STORE_SIG = "void(float64[:, :, ::1], float64[::1])"


def test_kernels_compile_and_ptxas_accepts(tmp_path):
    ptx, _ = cuda.compile_ptx(ellipsis_views, SIG, cc=(9, 0))
    check_ptx(ptx, tmp_path)
    ptx, _ = cuda.compile_ptx(ellipsis_stores, STORE_SIG, cc=(9, 0))
    check_ptx(ptx, tmp_path)


def two_ellipses(a):
    return a[..., 0, ...]


def ellipsis_value(a):
    e = ...
    return a[0, 0]


def too_many(a):
    return a[None, 0, 1, 2]


@pytest.mark.parametrize("func, message", [
    (two_ellipses, "Only one ellipsis allowed in array indices"),
    (ellipsis_value, r"Ellipsis \(\.\.\.\) is only supported as an array index"),
    (too_many, r"cannot index array\(float64, 2d, C\) with 3 indices"),
])
def test_misuse_is_a_clear_error(func, message):
    with pytest.raises(cuda.CompileError, match=message):
        cuda.compile_ptx(func, "(float64[:, ::1],)", device=True, cc=(9, 0))


def inputs():
    a = np.arange(120.0).reshape(4, 5, 6) / 7
    x = np.linspace(-1.0, 1.0, 7)
    return a, x


def numba_module(tmp_path, ncuda, name, func):
    return load_kernel_module(tmp_path, name, "import numpy as np\n\n" + inspect.getsource(func),
                              ncuda)


@pytest.mark.gpu
def test_views_match_numpy_and_numba_cuda(gpu, tmp_path):
    a, x = inputs()
    want = ellipsis_expected(a, x)
    out = np.full(want.size, np.nan)
    cuda.jit(SIG)(ellipsis_views)[1, 1](out, a, x)
    np.testing.assert_array_equal(out, want)

    ncuda = pytest.importorskip("numba.cuda")
    t = numba_module(tmp_path, ncuda, "numba_ellipsis_views", ellipsis_views)
    theirs = np.full(want.size, np.nan)
    ncuda.jit(SIG)(t.ellipsis_views)[1, 1](theirs, a, x)
    np.testing.assert_array_equal(out, theirs)


@pytest.mark.gpu
def test_stores_match_numpy_and_numba_cuda(gpu, tmp_path):
    a, x = inputs()
    want_a, want_x = a.copy(), x.copy()
    want_a[..., 0] = 7.0
    want_a[1, ...] = -1.0
    want_a[None, 3, :, None, 5] = 9.0
    want_x[None] = 2.5
    mine_a, mine_x = a.copy(), x.copy()
    cuda.jit(STORE_SIG)(ellipsis_stores)[1, 1](mine_a, mine_x)
    np.testing.assert_array_equal(mine_a, want_a)
    np.testing.assert_array_equal(mine_x, want_x)

    ncuda = pytest.importorskip("numba.cuda")
    t = numba_module(tmp_path, ncuda, "numba_ellipsis_stores", ellipsis_stores)
    their_a, their_x = a.copy(), x.copy()
    ncuda.jit(STORE_SIG)(t.ellipsis_stores)[1, 1](their_a, their_x)
    np.testing.assert_array_equal(mine_a, their_a)
    np.testing.assert_array_equal(mine_x, their_x)
