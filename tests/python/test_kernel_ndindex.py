"""np.ndindex in kernels, as numba: `for idx in np.ndindex(a.shape)` visits every index of an
array in numpy's order (the last index fastest), with integers, a tuple display or a
parameter's tuple as the shape too; break, continue and the loop's else keep their meaning;
an empty extent gives no iteration. desugar.c makes it one range loop over the product of
the extents with an odometer of indices. CI: ptxas accepts the kernel, a shape of unknown
length is a clear error; the GPU compares the results with numpy and numba-cuda."""
import inspect

import numpy as np
import pytest

import nbcuda as cuda
from conftest import load_kernel_module
from test_compile import check_ptx


def walk(a, out, dims):
    s = 0.0
    for idx in np.ndindex(a.shape):
        a[idx] += idx[0] * 100 + idx[2]
        s += a[idx]
    out[0] = s
    c = 0
    for i, j in np.ndindex(3, 4):
        if i == 2:
            break
        if j == 1:
            continue
        c += i * 10 + j
    else:
        c = -1
    out[1] = c
    out[2] = 7
    for t in np.ndindex((2, 0, 3)):
        out[2] = 99
    n = 0
    for (q,) in np.ndindex(5):
        n += q
    out[3] = n
    last = 0
    for p in np.ndindex(dims):
        last = p[0] * 1000 + p[1]
    else:
        last += 1
    out[4] = last


SIG = "void(float64[:, :, ::1], float64[::1], UniTuple(int64, 2))"


def expected(a, dims):
    a = a.copy()
    s = 0.0
    for idx in np.ndindex(a.shape):
        a[idx] += idx[0] * 100 + idx[2]
        s += a[idx]
    last = 0
    for p in np.ndindex(dims):
        last = p[0] * 1000 + p[1]
    else:
        last += 1
    return a, np.array([s, 40, 7, 10, last])


def test_kernel_compiles_and_ptxas_accepts(tmp_path):
    ptx, _ = cuda.compile_ptx(walk, SIG, cc=(9, 0))
    check_ptx(ptx, tmp_path)


def unknown_length(a):
    s = a.shape
    for idx in np.ndindex(s):
        a[idx] = 0


def test_shape_of_unknown_length_is_a_clear_error():
    with pytest.raises(cuda.CompileError, match=r"numpy.ndindex\(\.\.\.\) is supported as a for "
                       "loop's iterable, with a shape of known length"):
        cuda.compile_ptx(unknown_length, "(float32[:, ::1],)", device=True, cc=(9, 0))


@pytest.mark.gpu
def test_kernel_matches_numpy_and_numba_cuda(gpu, tmp_path):
    a = np.arange(24.0).reshape(2, 3, 4)
    dims = (3, 5)
    want_a, want = expected(a, dims)
    mine_a, out = a.copy(), np.zeros(5)
    cuda.jit(SIG)(walk)[1, 1](mine_a, out, dims)
    np.testing.assert_array_equal(mine_a, want_a)
    np.testing.assert_array_equal(out, want)

    ncuda = pytest.importorskip("numba.cuda")
    t = load_kernel_module(tmp_path, "numba_ndindex_kernels",
                           "import numpy as np\n\n" + inspect.getsource(walk), ncuda)
    their_a, theirs = a.copy(), np.zeros(5)
    ncuda.jit(SIG)(t.walk)[1, 1](their_a, theirs, dims)
    np.testing.assert_array_equal(mine_a, their_a)
    np.testing.assert_array_equal(out, theirs)
