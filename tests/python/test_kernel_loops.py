"""for loops over arrays, enumerate() and zip() in kernels (src/compiler/desugar.c rewrites
them into range loops, each iterable evaluated once), and divmod(), as numba supports them:
an array yields its elements, or its rows for more than one dimension; zip stops at the
shortest; enumerate counts from its start. divmod's result types are numba-cuda's (asked
for each row below). Without a GPU the PTX goes through ptxas; on the GPU the results are
compared with numpy and numba-cuda."""
import inspect

import numpy as np
import pytest

import nbcuda as cuda

from test_compile import check_ptx


def pair(a, b):
    return divmod(a, b)


@pytest.mark.parametrize("sig, numba_says", [
    ("(int64, int64)", "UniTuple(int64 x 2)"), ("(int32, int32)", "UniTuple(int64 x 2)"),
    ("(float32, int32)", "UniTuple(float64 x 2)"), ("(float64, float64)", "UniTuple(float64 x 2)"),
    ("(uint8, int8)", "UniTuple(int64 x 2)"), ("(float32, float32)", "UniTuple(float32 x 2)"),
    ("(boolean, int64)", "UniTuple(int64 x 2)"),
])
def test_divmod_types_are_numbas(sig, numba_says):
    assert str(cuda.compile_ptx(pair, sig, device=True, cc=(9, 0))[1]) == numba_says


def loops(out, m, x, y):
    t = cuda.grid(1)
    if t != 0:
        return
    s = 0.0
    for v in x:                       # elements
        s += v
    out[0] = s
    s = 0.0
    for row in m:                     # rows of a 2-d array
        for v in row:
            s += v
    out[1] = s
    s = 0.0
    for i, v in enumerate(x, 10):     # counted from 10
        s += i * v
    out[2] = s
    s = 0.0
    for a, b, c in zip(x, y, m[1]):   # the shortest: 3 items
        s += a * b - c
    out[3] = s
    s = 0.0
    for i, (a, b) in enumerate(zip(y, x)):
        q, r = divmod(a, 3.0)
        s += i + q * 100 + r
    out[4] = s
    s = 0.0
    for (i, a), b in zip(enumerate(x, 2), y):   # numba-cuda's test_zip_enumerate
        s += i * 1000 + a * 10 + b
    out[5] = s


SIG = "void(float64[::1], float64[:, ::1], float64[::1], float64[::1])"


def test_loops_compile_and_ptxas_accepts(tmp_path):
    ptx, _ = cuda.compile_ptx(loops, SIG, cc=(9, 0))
    check_ptx(ptx, tmp_path)


def test_what_cannot_be_iterated_is_refused():
    def scalar(out, m, x, y):
        for v in out[0]:
            pass

    with pytest.raises(cuda.TypingError, match="'float64' object is not iterable"):
        cuda.compile_ptx(scalar, SIG, cc=(9, 0))


def test_enumerate_and_zip_misuse_is_a_clear_error():
    def bad_keyword(out, m, x, y):
        for i, v in enumerate(x, foo=2):
            out[i] = v

    def not_in_a_loop(out, m, x, y):
        e = zip(x, y)  # noqa: F841

    with pytest.raises(cuda.TypingError, match=r"enumerate\(\) is supported as the iterable "
                                               r"of a for loop"):
        cuda.compile_ptx(bad_keyword, SIG, cc=(9, 0))
    with pytest.raises(cuda.TypingError, match=r"zip\(\) is supported as the iterable of a "
                                               r"for loop"):
        cuda.compile_ptx(not_in_a_loop, SIG, cc=(9, 0))


def expected(m, x, y):
    out = np.zeros(6)
    out[0] = x.sum()
    out[1] = m.sum()
    out[2] = sum(i * v for i, v in enumerate(x, 10))
    out[3] = sum(a * b - c for a, b, c in zip(x, y, m[1]))
    out[4] = sum(i + (a // 3.0) * 100 + a % 3.0 for i, (a, b) in enumerate(zip(y, x)))
    out[5] = sum(i * 1000 + a * 10 + b for (i, a), b in zip(enumerate(x, 2), y))
    return out


@pytest.mark.gpu
def test_loops_compute_what_python_computes(gpu, tmp_path, monkeypatch):
    m = np.arange(12, dtype=np.float64).reshape(4, 3) * 0.5
    x = np.array([1.5, -2.0, 3.25, 4.0, 7.0])
    y = np.array([2.0, 5.5, -1.0, 8.0])
    out = np.zeros(6)
    cuda.jit(SIG)(loops)[1, 1](out, m, x, y)
    np.testing.assert_allclose(out, expected(m, x, y), rtol=1e-14)

    ncuda = pytest.importorskip("numba.cuda")
    (tmp_path / "numba_loop_kernels.py").write_text(
        "from numba import cuda\n\n" + inspect.getsource(loops))
    monkeypatch.syspath_prepend(str(tmp_path))
    import numba_loop_kernels as t
    theirs = np.zeros(6)
    ncuda.jit(SIG)(t.loops)[1, 1](theirs, m, x, y)
    np.testing.assert_array_equal(out, theirs)
