"""cuda.vectorize: GPU ufuncs with numba-cuda's call mechanism (signature selection, scalars,
broadcasting, out=, stream=, reduce). The test driver does not run kernels, so CI checks what
a call selects, allocates, launches and returns; the gpu tests compare results with numpy and
with numba-cuda."""
import math
import os
import subprocess
import sys

import pytest

from conftest import sig_texts

np = pytest.importorskip("numpy")

HERE = os.path.dirname(os.path.abspath(__file__))
SIGS = ["float32(float32, float32)", "float64(float64, float64)"]


def add(a, b):
    return a + b


def scaled_sine(x, k):
    return math.sin(x) * k + 1


def clamp(v):
    if v < 0:
        return 0
    return v


@pytest.fixture(scope="module")
def vadd(cuda):
    return cuda.vectorize(SIGS)(add)


def test_signatures_make_kernels(cuda, vadd):
    assert isinstance(vadd, cuda.UFunc) and vadd.__name__ == "add" and vadd.py_func is add
    assert list(vadd.functions) == [(np.dtype("float32"),) * 2, (np.dtype("float64"),) * 2]
    resty, kernel = vadd.functions[(np.dtype("float64"),) * 2]
    assert resty == np.dtype("float64")
    assert sig_texts(kernel) == ["void(float64[:], float64[:], float64[:])"]
    assert "add" in repr(vadd) and vadd.identity is None


def test_tuple_arguments_are_arrays(cuda, vadd, tdrv):
    # numpy.asarray of a tuple is one array, not asarray(*tuple)
    r = vadd((1.0, 2.0, 3.0), (4.0, 5.0, 6.0))
    assert r.shape == (3,) and r.dtype == np.float64


def test_return_type_inferred_and_type_objects(cuda):
    neg = cuda.vectorize("(int32,)")(clamp)  # numba types the result: int64
    assert list(neg.functions.values())[0][0] == np.dtype("int64")
    typed = cuda.vectorize([cuda.float32(cuda.float32, cuda.int16)])(scaled_sine)
    assert list(typed.functions) == [(np.dtype("float32"), np.dtype("int16"))]


def test_host_arrays_give_host_results(cuda, vadd, tdrv):
    x = np.arange(10, dtype=np.float32)
    launches = tdrv.launch_count()
    r = vadd(x, x)
    assert type(r) is np.ndarray and r.shape == (10,) and r.dtype == np.float32
    assert tdrv.launch_count() == launches + 1
    info = tdrv.last_launch()
    assert info.grid[0] * info.block[0] >= 10


def test_device_arguments_keep_the_result_on_the_device(cuda, vadd):
    d = cuda.to_device(np.arange(10, dtype=np.float64))
    r = vadd(d, 1.5)
    assert isinstance(r, cuda.DeviceNDArray) and r.shape == (10,) and r.dtype == np.float64


def test_broadcasting_and_shapes(cuda, vadd):
    assert vadd(np.ones((3, 1)), np.ones(4)).shape == (3, 4)
    assert vadd(np.ones((2, 5), np.float32), np.float32(2)).shape == (2, 5)
    dev = vadd(cuda.to_device(np.ones((4, 3))), cuda.to_device(np.ones(3)))
    assert isinstance(dev, cuda.DeviceNDArray) and dev.shape == (4, 3)
    with pytest.raises(ValueError, match="failed to broadcast argument #1"):
        vadd(np.ones(10, np.float32), np.ones(3, np.float32))


def test_signature_selection_is_numbas(cuda, vadd):
    assert vadd(1.0, 2.0).dtype == np.float64  # exact match of the scalars first
    assert vadd(np.ones(3, np.float32), 2.0).dtype == np.float32  # then scalars take any type
    with pytest.raises(TypeError, match="ambiguous signature"):
        vadd(np.float32(1), 2.0)  # numpy scalars are untyped scalars too, as in numba
    with pytest.raises(TypeError, match="No matching version"):
        vadd(np.ones(4, np.float32), np.ones(4, np.int64))
    with pytest.raises(TypeError, match="ambiguous signature"):
        vadd(1, 2)


def test_out_arguments(cuda, vadd):
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    out = np.empty((2, 5), np.float32)
    assert vadd(x, x, out=out) is out  # several dimensions work (numba asserts here)
    dout = cuda.device_array((2, 5), np.float32)
    r = vadd(x, x, out=dout)
    assert isinstance(r, cuda.DeviceNDArray) and r.shape == (2, 5)
    with pytest.raises(ValueError, match="out= must be an array of shape"):
        vadd(x, x, out=np.empty(10, np.float32))
    with pytest.raises(ValueError, match="out= must be an array of shape"):
        vadd(x, x, out=np.empty((2, 5), np.float64))
    s = cuda.stream()
    assert vadd(x, x, stream=s).shape == (2, 5)
    with pytest.warns(UserWarning, match="unrecognized keywords: where"):
        vadd(x, x, where=True)


def test_decorator_options(cuda):
    with pytest.raises(TypeError, match="needs signatures"):
        cuda.vectorize(add)
    with pytest.raises(ValueError, match="Unsupported target: cpu"):
        cuda.vectorize(SIGS, target="cpu")
    with pytest.raises(TypeError, match="caching is not supported"):
        cuda.vectorize(SIGS, cache=True)
    with pytest.raises(ValueError, match="Invalid identity"):
        cuda.vectorize(SIGS, identity=5)
    with pytest.raises(KeyError, match="does not support option: 'fastmath'"):
        cuda.vectorize(SIGS, fastmath=True)
    with pytest.warns(RuntimeWarning, match="nopython kwarg"):
        cuda.vectorize(SIGS, nopython=True)
    assert cuda.vectorize(SIGS, identity="reorderable")(add).identity == "reorderable"
    with pytest.raises(TypeError, match="not a scalar type"):
        cuda.vectorize(["float32(float32[:], float32)"])(add)
    with pytest.raises(cuda.TypingError):
        cuda.vectorize(["float32(float32, float32)"])(lambda a, b: a.nope)


def test_reduce_checks(cuda, vadd):
    with pytest.raises(ValueError, match="1-D"):
        vadd.reduce(np.ones((2, 2), np.float32))
    with pytest.raises(TypeError, match="Reduction on an empty array."):
        vadd.reduce(np.ones(0, np.float32))
    assert vadd.reduce(np.array([4.5], np.float32)) == 4.5
    unary = cuda.vectorize("float32(float32)")(clamp)
    with pytest.raises(TypeError, match="binary ufunc"):
        unary.reduce(np.ones(3, np.float32))


# ---------------------------------------------------------------- on the GPU -------------
# numba-cuda runs in a fresh interpreter (numba_side below): in this process other tests reset
# the device under numba's objects, and numba's finalizers then crash the interpreter at exit.

def gpu_cases():
    """(signatures, function name, arguments, whether numba-cuda gets it right)."""
    rng = np.random.default_rng(7)
    return [
        (SIGS, "add", (rng.random(1000).astype(np.float32), rng.random(1000).astype(np.float32)),
         True),
        (SIGS, "add", (rng.random((7, 1, 5)), 2.5), True),
        (["float32(float32, int16)", "float64(float64, int32)"], "scaled_sine",
         (rng.random(513), np.arange(513, dtype=np.int32)), True),
        (["int64(int64)", "float64(float64)"], "clamp", (rng.integers(-50, 50, 300),), True),
        # numba-cuda broadcasts a host array of lower rank wrongly: its strides are zeroed by
        # comparing the array's axis i with the result's axis i (not the aligned one), so
        # (30, 40) + (40,) adds b[0] everywhere; numpy's answer is the one to have
        (SIGS, "add", (rng.random((30, 40)), rng.random(40)), False),
    ]


REDUCE_INPUT = np.linspace(-3, 3, 4097).astype(np.float32)
REDUCE_SIZES = (2, 3, 100, 4097)


def numba_side(path):
    """Run in a fresh interpreter: numba-cuda's results of gpu_cases() and of reduce, saved to
    path (npz)."""
    for old, new in (("row_stack", "vstack"), ("in1d", "isin"), ("trapz", "trapezoid")):
        if not hasattr(np, old) and hasattr(np, new):
            setattr(np, old, getattr(np, new))
    from numba import cuda as ncuda
    results = {}
    for i, (sigs, name, args, _) in enumerate(gpu_cases()):
        results[f"case{i}"] = ncuda.vectorize(sigs)(globals()[name])(*args)
    f = ncuda.vectorize(SIGS)(add)
    results["reduce"] = np.array([f.reduce(REDUCE_INPUT[:n]) for n in REDUCE_SIZES])
    np.savez(path, **results)


@pytest.fixture(scope="module")
def numba_results(tmp_path_factory, run_py_module):
    pytest.importorskip("numba")
    path = tmp_path_factory.mktemp("numba") / "vectorize.npz"
    run_py_module(f"import sys; sys.path.insert(0, {HERE!r}); import test_vectorize as t; "
                  f"t.numba_side({str(path)!r})")
    return np.load(path)


@pytest.fixture(scope="module")
def run_py_module():
    def run(code):
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=300)
        assert p.returncode == 0, f"numba-cuda side failed:\n{p.stdout}\n{p.stderr}"
    return run




@pytest.mark.gpu
def test_results_match_numpy_and_numba_cuda(gpu, cuda, numba_results):
    for i, (sigs, name, args, numba_right) in enumerate(gpu_cases()):
        fn = globals()[name]
        mine = cuda.vectorize(sigs)(fn)(*args)
        theirs = numba_results[f"case{i}"]
        expect = np.vectorize(fn)(*args)
        assert type(mine) is np.ndarray and mine.dtype == theirs.dtype
        assert mine.shape == theirs.shape == expect.shape
        np.testing.assert_allclose(mine, expect, rtol=1e-6)
        if numba_right:
            np.testing.assert_array_equal(mine, theirs)
        else:
            assert not np.allclose(theirs, expect)  # still broken there


@pytest.mark.gpu
def test_device_out_stream_and_reduce_match(gpu, cuda, numba_results):
    x = REDUCE_INPUT
    mine_f = cuda.vectorize(SIGS)(add)
    s = cuda.stream()
    d = cuda.to_device(x, stream=s)
    out = cuda.device_array_like(d, stream=s)
    r = mine_f(d, np.float32(0.25), out=out, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(r.copy_to_host(), x + np.float32(0.25))
    # reduce folds in numba's pairwise order: the same float32 sum, bit for bit
    mine = np.array([mine_f.reduce(x[:n]) for n in REDUCE_SIZES])
    np.testing.assert_array_equal(mine, numba_results["reduce"])
    np.testing.assert_allclose(mine, [x[:n].astype(np.float64).sum() for n in REDUCE_SIZES],
                               rtol=1e-4, atol=1e-3)
    assert mine_f.reduce(cuda.to_device(x)) == mine[-1]
