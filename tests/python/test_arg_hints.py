"""cuda.In, cuda.Out and cuda.InOut, numba's kernel-argument hints: a host array passed to a
kernel is copied in before the launch and back after it; In(a) copies in only (a may be
read-only), Out(a) back only, InOut(a) both, like a bare host array. A wrapped device array
is used in place. The test-driver tests count the driver's copies (it runs no Python
kernels); the gpu test runs a kernel and compares with numpy and numba-cuda."""
import inspect

import numpy as np
import pytest

import nbcuda as cuda


def double_and_mark(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = 2 * x[i]
        x[i] = -1


def copies(tdrv):
    return tdrv.calls("cuMemcpyHtoD"), tdrv.calls("cuMemcpyDtoH")


def test_the_hint_types_are_numbas():
    a = np.arange(4.0)
    assert cuda.In(a).value is a and cuda.Out(a).value is a and cuda.InOut(value=a).value is a
    assert isinstance(cuda.InOut(a), cuda.Out) and not isinstance(cuda.In(a), cuda.Out)
    assert repr(cuda.In(a)) == f"In({a!r})"
    with pytest.raises(TypeError):
        cuda.In()
    with pytest.raises(AttributeError):
        cuda.In(a).value = a


@pytest.mark.parametrize("hint, htod, dtoh", [
    (None, 2, 2), (cuda.InOut, 2, 2), (cuda.In, 2, 1), (cuda.Out, 1, 2),
])
def test_each_hint_makes_only_its_copies(cuda, tdrv, hint, htod, dtoh):
    k = cuda.jit("void(float64[::1], float64[::1])")(double_and_mark)
    out, x = np.zeros(16), np.arange(16.0)
    wrapped = hint(x) if hint else x
    before = copies(tdrv)
    k[1, 16](out, wrapped)  # out: a bare host array, copied both ways
    after = copies(tdrv)
    assert (after[0] - before[0], after[1] - before[1]) == (htod, dtoh)
    if hint is not cuda.Out:  # the test driver runs no kernel: what went in comes back
        assert (x == np.arange(16.0)).all()


def test_a_wrapped_device_array_is_used_in_place(cuda, tdrv):
    k = cuda.jit("void(float64[::1], float64[::1])")(double_and_mark)
    d_out, d_x = cuda.device_array(16), cuda.to_device(np.arange(16.0))
    for hint in (cuda.In, cuda.Out, cuda.InOut):
        before = copies(tdrv)
        k[1, 16](hint(d_out), hint(d_x))
        assert copies(tdrv) == before


def test_in_takes_a_read_only_array_and_out_does_not(cuda, tdrv):
    k = cuda.jit("void(float64[::1], float64[::1])")(double_and_mark)
    x = np.arange(8.0)
    x.setflags(write=False)
    k[1, 8](np.zeros(8), cuda.In(x))
    with pytest.raises(ValueError, match="read-only"):
        k[1, 8](np.zeros(8), x)
    with pytest.raises(ValueError, match="read-only"):
        k[1, 8](np.zeros(8), cuda.Out(x))
    with pytest.raises(TypeError, match="unsupported buffer format"):
        k[1, 8](np.zeros(8), cuda.In(object()))


def test_lazy_kernels_type_the_wrapped_value(cuda, tdrv):
    k = cuda.jit(double_and_mark)
    k[1, 8](cuda.Out(np.zeros(8, np.float32)), cuda.In(np.arange(8, dtype=np.float32)))
    k[1, 8](cuda.InOut(np.zeros(8, np.float32)), np.arange(8, dtype=np.float32))
    assert len(k.overloads) == 1  # In(x), Out(x), InOut(x) and x: the same argument types


def test_a_hint_on_a_scalar_parameter_is_refused(cuda, tdrv):
    def store(a, v):
        a[0] = v
    k = cuda.jit("void(float64[::1], float64)")(store)
    with pytest.raises(TypeError, match="expected float64, got nbcuda.In"):
        k[1, 1](np.zeros(1), cuda.In(1.0))


@pytest.mark.gpu
def test_hints_run_like_numba_cuda(gpu, tmp_path, monkeypatch):
    n = 1000
    mine = cuda.jit("void(float32[::1], float32[::1])")(double_and_mark)
    results = {}
    for name in ("In", "Out", "InOut"):
        out, x = np.zeros(n, np.float32), np.arange(n, dtype=np.float32)
        hint = getattr(cuda, name)
        mine.forall(n)(hint(out) if name != "In" else out, hint(x))
        results[name] = (out.copy(), x.copy())
    base = np.arange(n, dtype=np.float32)
    # In(x): the kernel's writes to x stay on the device; Out(x): x comes back all -1
    np.testing.assert_array_equal(results["In"][0], 2 * base)
    np.testing.assert_array_equal(results["In"][1], base)
    np.testing.assert_array_equal(results["InOut"][1], np.full(n, -1, np.float32))
    np.testing.assert_array_equal(results["InOut"][0], 2 * base)
    np.testing.assert_array_equal(results["Out"][1], np.full(n, -1, np.float32))

    ncuda = pytest.importorskip("numba.cuda")
    (tmp_path / "numba_hint_kernels.py").write_text(
        "from numba import cuda\n\n" + inspect.getsource(double_and_mark))
    monkeypatch.syspath_prepend(str(tmp_path))
    import numba_hint_kernels as t
    theirs = ncuda.jit("void(float32[::1], float32[::1])")(t.double_and_mark)
    for name in ("In", "InOut"):
        out, x = np.zeros(n, np.float32), np.arange(n, dtype=np.float32)
        hint = getattr(ncuda, name)
        theirs.forall(n)(hint(out) if name != "In" else out, hint(x))
        np.testing.assert_array_equal(out, results[name][0])
        np.testing.assert_array_equal(x, results[name][1])
