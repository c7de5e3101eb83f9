"""a.flat in kernels, as numba: `for x in a.flat` and `enumerate(a.flat)` visit the elements
in C order whatever the layout (a transposed or strided view too), `a.flat[i]` reads and
writes the i-th of them, `len(a.flat)` is the size. CI: the kernel compiles and ptxas
accepts it, misuse is a clear error; the GPU compares it with numpy and numba-cuda."""
import inspect

import numpy as np
import pytest

import nbcuda as cuda
from conftest import load_kernel_module
from test_compile import check_ptx


def flat(a, b, out):
    for i, x in enumerate(a.flat):
        a.flat[i] = x + 1
    s = 0.0
    for x in b.T.flat:                # F order of b: a non-contiguous flat walk
        s = s * 2 + x
    out[0] = s
    v = b[::2, 1:]
    t = 0.0
    for i in range(len(v.flat)):
        t = t * 3 + v.flat[i]
    out[1] = t
    out[2] = len(b.flat) + b.flat[5] * 100


SIG = "void(float64[:, ::1], float64[:, ::1], float64[::1])"


def expected(a, b):
    a = a.copy()
    for i, x in enumerate(a.flat):
        a.flat[i] = x + 1
    s = 0.0
    for x in b.T.flat:
        s = s * 2 + x
    v = b[::2, 1:]
    t = 0.0
    for i in range(len(v.flat)):
        t = t * 3 + v.flat[i]
    return a, np.array([s, t, len(b.flat) + b.flat[5] * 100])


def test_kernel_compiles_and_ptxas_accepts(tmp_path):
    ptx, _ = cuda.compile_ptx(flat, SIG, cc=(9, 0))
    check_ptx(ptx, tmp_path)


def sliced(a):
    return a.flat[1:3]


def test_flat_slice_is_a_clear_error():
    with pytest.raises(cuda.CompileError, match="a.flat is indexed by one integer"):
        cuda.compile_ptx(sliced, "(float64[:, ::1],)", device=True, cc=(9, 0))


@pytest.mark.gpu
def test_flat_matches_numpy_and_numba_cuda(gpu, tmp_path):
    a = np.arange(12.0).reshape(3, 4)
    b = np.arange(20.0).reshape(4, 5) / 8
    want_a, want = expected(a, b)
    mine_a, out = a.copy(), np.zeros(3)
    cuda.jit(SIG)(flat)[1, 1](mine_a, b, out)
    np.testing.assert_array_equal(mine_a, want_a)
    np.testing.assert_array_equal(out, want)

    ncuda = pytest.importorskip("numba.cuda")
    t = load_kernel_module(tmp_path, "numba_flat_kernels", inspect.getsource(flat), ncuda)
    their_a, theirs = a.copy(), np.zeros(3)
    ncuda.jit(SIG)(t.flat)[1, 1](their_a, b, theirs)
    np.testing.assert_array_equal(mine_a, their_a)
    np.testing.assert_array_equal(out, theirs)
