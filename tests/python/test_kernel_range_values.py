"""range(...) as a value in kernels, as numba (its range_state): bound to a name and looped
over (`r = range(10, 0, -3); for x in r`), enumerate(range(...)), zip(range(...), a),
len(range(...)) with Python's length (negative steps, empty ranges) in the counter's type,
sum(range(...)), and r[i] (Python's; numba-cuda 0.30.4 has no getitem for a range, so that
kernel is compared with Python only); a zero step is numba's ValueError. CI: the kernel compiles and ptxas accepts it, the
types are numba's; the GPU compares the results with Python's and numba-cuda's."""
import inspect

import numpy as np
import pytest

import nbcuda as cuda
from conftest import load_kernel_module
from test_compile import check_ptx


def ranges(a, out, n):
    for i, v in enumerate(range(3, 10)):
        a[i] = v
    s = 0
    for i, v in zip(range(a.size), a):
        s += i * v
    out[0] = s
    r = range(10, 0, -3)
    t = 0
    for x in r:
        t = t * 100 + x
    out[1] = t
    out[2] = len(range(2, 11, 3)) * 100 + len(range(5, 1)) + len(r) * 10
    out[3] = sum(range(5)) + sum(range(1, 10, 2), 100)
    out[4] = len(range(n, -n, -2)) * 1000


def range_index(out, n):
    r = range(n, 0, -3)
    for i in range(len(r)):
        out[i] = r[i] * 10 + r[-1 - i]     # negative: from the end, as Python


SIG = "void(int64[::1], int64[::1], int32)"


def expected(n):
    a = np.arange(3, 10)
    r = range(10, 0, -3)
    t = 0
    for x in r:
        t = t * 100 + x
    return a, np.array([sum(i * v for i, v in zip(range(7), a)), t,
                        len(range(2, 11, 3)) * 100 + len(range(5, 1)) + len(r) * 10,
                        sum(range(5)) + sum(range(1, 10, 2), 100),
                        len(range(n, -n, -2)) * 1000])


def test_kernel_compiles_and_ptxas_accepts(tmp_path):
    ptx, _ = cuda.compile_ptx(ranges, SIG, cc=(9, 0))
    check_ptx(ptx, tmp_path)
    ptx, _ = cuda.compile_ptx(range_index, "void(int64[::1], int64)", cc=(9, 0))
    check_ptx(ptx, tmp_path)


def range_len(a, b, c):
    return len(range(a, b, c))


def range_sum(n):
    return sum(range(n))


@pytest.mark.parametrize("func, sig, want", [
    (range_len, "(int32, int32, int32)", "int32"),      # the counter's type, as numba
    (range_len, "(uint64, uint64, uint64)", "uint64"),
    (range_sum, "(int32,)", "int64"),
])
def test_types_are_numbas(func, sig, want):
    _, resty = cuda.compile_ptx(func, sig, device=True, cc=(9, 0))
    assert str(resty) == want


def zero_step(a):
    for x in range(0, 4, 0):
        a[0] = x


def test_constant_zero_step_is_refused():
    with pytest.raises(cuda.CompileError, match="range\\(\\) arg 3 must not be zero"):
        cuda.compile_ptx(zero_step, "void(int64[::1])", cc=(9, 0))


@pytest.mark.gpu
def test_range_items_are_pythons(gpu):
    out = np.zeros(8, np.int64)
    cuda.jit("void(int64[::1], int64)")(range_index)[1, 1](out, 20)
    r = range(20, 0, -3)
    want = [r[i] * 10 + r[-1 - i] for i in range(len(r))]
    np.testing.assert_array_equal(out[:len(r)], want)


@pytest.mark.gpu
def test_kernel_matches_python_and_numba_cuda(gpu, tmp_path):
    want_a, want = expected(7)
    a, out = np.zeros(7, np.int64), np.zeros(5, np.int64)
    cuda.jit(SIG)(ranges)[1, 1](a, out, 7)
    np.testing.assert_array_equal(a, want_a)
    np.testing.assert_array_equal(out, want)

    ncuda = pytest.importorskip("numba.cuda")
    t = load_kernel_module(tmp_path, "numba_range_kernels", inspect.getsource(ranges), ncuda)
    their_a, theirs = np.zeros(7, np.int64), np.zeros(5, np.int64)
    ncuda.jit(SIG)(t.ranges)[1, 1](their_a, theirs, 7)
    np.testing.assert_array_equal(a, their_a)
    np.testing.assert_array_equal(out, theirs)
