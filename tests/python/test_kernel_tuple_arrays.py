"""Tuples holding arrays, as numba: built in a kernel (`for arr in (a, b)`, `t = (a, b)`,
t[i][j] with i known at run time for a homogeneous tuple, literal_unroll over arrays of two
dtypes (which numba-cuda 0.30.4 cannot type), passed to and returned from device functions) and as kernel arguments
(`UniTuple(float32[::1], 2)`, `Tuple((int64, float64[:, ::1]))`), each array flattened as an
array argument is; device arrays and host arrays (copied there and back) alike. CI: the
kernels compile, ptxas accepts them, the launcher refuses wrong tuples clearly; the GPU
compares the results with numpy and numba-cuda."""
import inspect

import numpy as np
import pytest

import nbcuda as cuda
from conftest import load_kernel_module
from test_compile import check_ptx


@cuda.jit(device=True)
def pair_sum(arrs, i):
    return arrs[0][i] + arrs[1][i]


@cuda.jit(device=True)
def swapped(a, b):
    return (b, a)


def inside(a, b, c):
    i = cuda.grid(1)
    if i < a.size:
        for arr in (a, b):             # a homogeneous tuple of arrays, indexed at run time
            arr[i] += 1
        t = swapped(a, b)
        t[0][i] += pair_sum((a, b), i)
        for k in range(2):
            t[k][i] *= 2


def unrolled(a, b, c):
    # numba-cuda 0.30.4 cannot type literal_unroll over arrays in a kernel ("Invalid use of
    # getiter", seen on the H200): compared with numpy only
    i = cuda.grid(1)
    if i < a.size:
        for arr in cuda.literal_unroll((a, c)):   # float32 then int32 arrays
            arr[i] += 3


INSIDE_SIG = "void(float32[::1], float32[::1], int32[::1])"


def inside_expected(a, b, c):
    a, b, c = a + 1, b + 1, c.copy()
    b = b + (a + b)
    a, b = a * 2, b * 2
    return a, b, c


def as_argument(t, u):
    i = cuda.grid(1)
    if i < t[0].size:
        t[0][i] = t[1][i] * u[0]
    if i < u[1].shape[0]:
        u[1][i, 0] = u[0] * i


ARG_SIG = "void(UniTuple(float32[::1], 2), Tuple((int64, float64[:, ::1])))"


def test_kernels_compile_and_ptxas_accepts(tmp_path):
    for kernel, sig in ((inside, INSIDE_SIG), (unrolled, INSIDE_SIG), (as_argument, ARG_SIG)):
        ptx, _ = cuda.compile_ptx(kernel, sig, cc=(9, 0))
        check_ptx(ptx, tmp_path)


def test_launcher_refuses_wrong_tuples(tdrv):
    k = cuda.jit(ARG_SIG)(as_argument)
    a = np.zeros(4, np.float32)
    m = np.zeros((2, 2))
    with pytest.raises(TypeError, match=r"argument 1: expected UniTuple\(array\(float32, 1d, C\) "
                       r"x 2\), got \(array\("):
        k[1, 4]((a,), (3, m))
    with pytest.raises(TypeError, match=r"argument 1: expected array\(float32, 1d, C\), got an "
                       "array of i32 elements"):
        k[1, 4]((a, np.zeros(4, np.int32)), (3, m))
    with pytest.raises(TypeError, match="argument 2: expected Tuple"):
        k[1, 4]((a, a), 3)


@pytest.mark.gpu
def test_tuples_of_arrays_match_numpy_and_numba_cuda(gpu, tmp_path):
    a = np.linspace(0.0, 1.0, 40).astype(np.float32)
    b = np.arange(40, dtype=np.float32)
    c = np.arange(40, dtype=np.int32)
    want = inside_expected(a, b, c)
    mine = [a.copy(), b.copy(), c.copy()]
    cuda.jit(INSIDE_SIG)(inside)[1, 64](*mine)
    for m, w in zip(mine, want):
        np.testing.assert_allclose(m, w, rtol=1e-6)
    plus = [a.copy(), b.copy(), c.copy()]
    cuda.jit(INSIDE_SIG)(unrolled)[1, 64](*plus)
    for m, w in zip(plus, (a + 3, b, c + 3)):
        np.testing.assert_array_equal(m, w)

    t0, t1 = np.zeros(40, np.float32), np.arange(40, dtype=np.float32)
    m = cuda.to_device(np.zeros((8, 2)))       # a device array in a tuple, host arrays too
    cuda.jit(ARG_SIG)(as_argument)[1, 64]((t0, t1), (3, m))
    np.testing.assert_array_equal(t0, t1 * 3)
    want_m = np.zeros((8, 2))
    want_m[:, 0] = 3.0 * np.arange(8)
    np.testing.assert_array_equal(m.copy_to_host(), want_m)

    ncuda = pytest.importorskip("numba.cuda")
    src = "\n\n".join(inspect.getsource(getattr(f, "py_func", f))
                      for f in (pair_sum, swapped, inside, as_argument))
    t = load_kernel_module(tmp_path, "numba_tuple_array_kernels", src, ncuda)
    theirs = [a.copy(), b.copy(), c.copy()]
    ncuda.jit(INSIDE_SIG)(t.inside)[1, 64](*theirs)
    for m_, th in zip(mine, theirs):
        np.testing.assert_array_equal(m_, th)
    u0 = np.zeros(40, np.float32)
    ncuda.jit(ARG_SIG)(t.as_argument)[1, 64]((u0, t1), (3, np.zeros((8, 2))))
    np.testing.assert_array_equal(t0, u0)
