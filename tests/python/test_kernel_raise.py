"""raise and assert in kernels, as numba-cuda runs them without debug=True: an exception
raised in a kernel, or in a device function it calls, ends that thread (numba returns from
the kernel and reports nothing); a failed assert raises AssertionError, so it ends the thread
too. The PTX ends the thread with `exit`; on the GPU the outputs are compared with
numba-cuda's for the same kernel."""
import inspect

import numpy as np
import pytest

import nbcuda as cuda

from test_compile import check_ptx


def checked_sqrt(x):
    if x < 0:
        raise ValueError("negative")
    return x ** 0.5


def guarded(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = 1.0
        assert x[i] != 0, "zero"
        out[i, 1] = checked_sqrt(x[i])  # raises in a device function for x < 0
        if x[i] > 100:
            raise
        out[i, 2] = 2.0


SIG = "void(float64[:, ::1], float64[::1])"


def test_raise_and_assert_end_the_thread(tmp_path):
    ptx, _ = cuda.compile_ptx(guarded, SIG, cc=(9, 0))
    assert ptx.count("exit;") >= 2
    check_ptx(ptx, tmp_path)


def test_the_condition_of_an_assert_is_typed():
    def bad(out, x):
        assert x, "arrays have no truth"

    with pytest.raises(cuda.TypingError):
        cuda.compile_ptx(bad, SIG, cc=(9, 0))


@pytest.mark.gpu
def test_threads_stop_where_numba_cuda_stops_them(gpu, tmp_path, monkeypatch):
    x = np.array([4.0, 0.0, -9.0, 250.0, 16.0, -1.0, 1e3, 2.25])
    n = x.size

    def run(cuda_mod, kernel):
        out = np.full((n, 3), -7.0)
        kernel[1, 32](out, x)
        return out

    mine = run(cuda, cuda.jit(SIG)(guarded))
    expect = np.array([[1, 2, 2], [1, -7, -7], [1, -7, -7], [1, 250 ** 0.5, -7],
                       [1, 4, 2], [1, -7, -7], [1, 1e3 ** 0.5, -7], [1, 1.5, 2]])
    np.testing.assert_allclose(mine, expect, rtol=1e-15)
    np.testing.assert_array_equal(mine == -7, expect == -7)  # where each thread stopped

    ncuda = pytest.importorskip("numba.cuda")
    (tmp_path / "numba_raise_kernels.py").write_text(
        "from numba import cuda\n\n" + inspect.getsource(checked_sqrt) + "\n\n" +
        inspect.getsource(guarded).replace("checked_sqrt(", "device_sqrt(") +
        "\n\ndevice_sqrt = cuda.jit(device=True)(checked_sqrt)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import numba_raise_kernels as t
    np.testing.assert_array_equal(run(ncuda, ncuda.jit(SIG)(t.guarded)), mine)
