"""cuda.guvectorize: generalized GPU ufuncs with numba-cuda's call mechanism (layouts, core
symbols, outer-dimension loops and broadcasting, out=, stream=). CI checks what a call
schedules, allocates and returns (the test driver does not run kernels); the gpu tests compare
results with numpy and with numba-cuda (run in a fresh interpreter: other tests reset the
device under numba's objects, whose finalizers then crash at exit)."""
import os
import subprocess
import sys

import pytest

from conftest import USING_TESTDRIVER, sig_texts

np = pytest.importorskip("numpy")

HERE = os.path.dirname(os.path.abspath(__file__))
DOT_SIGS = ["void(float32[:], float32[:], float32[:])", "void(float64[:], float64[:], float64[:])"]
MATMUL_SIGS = ["void(float64[:,:], float64[:,:], float64[:,:])"]
ADDC_SIGS = ["void(int64[:], int64, int64[:])"]


def dot(a, b, out):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    out[0] = s


def matmul(A, B, C):
    m, n = A.shape
    n, p = B.shape
    for i in range(m):
        for j in range(p):
            C[i, j] = 0
            for k in range(n):
                C[i, j] += A[i, k] * B[k, j]


def addc(a, c, out):
    for i in range(a.shape[0]):
        out[i] = a[i] + c


def make(cuda):
    return (cuda.guvectorize(DOT_SIGS, "(n),(n)->()")(dot),
            cuda.guvectorize(MATMUL_SIGS, "(m,n),(n,p)->(m,p)")(matmul),
            cuda.guvectorize(ADDC_SIGS, "(n),()->(n)")(addc))


@pytest.fixture(scope="module")
def gufuncs(cuda):
    return make(cuda)


def test_layout_and_kernels(cuda, gufuncs):
    gdot, gmatmul, gaddc = gufuncs
    assert isinstance(gdot, cuda.GUFunc) and gdot.__name__ == "dot" and gdot.py_func is dot
    assert gdot.signature == "(n),(n)->()" and "(n),(n)->()" in repr(gdot)
    assert list(gdot.functions) == [(np.dtype("float32"),) * 2, (np.dtype("float64"),) * 2]
    outdtypes, kernel = gmatmul.functions[(np.dtype("float64"),) * 2]
    assert outdtypes == (np.dtype("float64"),)
    assert sig_texts(kernel) == ["void(float64[:, :, :], float64[:, :, :], float64[:, :, :])"]
    _, kernel = gaddc.functions[(np.dtype("int64"),) * 2]
    assert sig_texts(kernel) == ["void(int64[:, :], int64[:], int64[:, :])"]


def test_shapes_of_results(cuda, gufuncs, tdrv):
    gdot, gmatmul, gaddc = gufuncs
    x = np.ones((5, 8), np.float32)
    launches = tdrv.launch_count()
    r = gdot(x, x)
    assert type(r) is np.ndarray and r.shape == (5,) and r.dtype == np.float32
    assert tdrv.launch_count() == launches + 1
    assert gmatmul(np.ones((10, 3, 4)), np.ones((10, 4, 2))).shape == (10, 3, 2)
    assert gmatmul(np.ones((10, 3, 4)), np.ones((4, 2))).shape == (10, 3, 2)  # pinned input
    assert gmatmul(np.ones((3, 4)), np.ones((4, 2))).shape == (3, 2)  # no outer loop
    assert gaddc(np.arange(12).reshape(3, 4), 5).shape == (3, 4)  # a scalar input
    d = gdot(cuda.to_device(x), cuda.to_device(x))
    assert isinstance(d, cuda.DeviceNDArray) and d.shape == (5,)


def test_outputs(cuda, gufuncs):
    gdot = gufuncs[0]
    x = np.ones((5, 8), np.float32)
    out = np.empty(5, np.float32)
    assert gdot(x, x, out=out) is out
    assert gdot(x, x, out) is not None  # positional output
    dout = cuda.device_array(5, np.float32)
    assert gdot(x, x, out=dout) is dout
    with pytest.raises(ValueError, match="output shape mismatch"):
        gdot(x, x, out=np.empty(4, np.float32))
    with pytest.raises(ValueError, match="both positional and keyword"):
        gdot(x, x, out, out=out)
    with pytest.raises(TypeError, match="accepts 2 positional arguments .* Got 1 positional "
                                        "argument."):
        gdot(x)
    s = cuda.stream()
    assert gdot(x, x, stream=s).shape == (5,)


def test_schedule_errors(cuda, gufuncs):
    gdot, gmatmul, _ = gufuncs
    x = np.ones((5, 8), np.float32)
    with pytest.raises(ValueError, match=r"arg #2: shape\[1\] mismatch argument"):
        gdot(x, np.ones((5, 7), np.float32))
    with pytest.raises(ValueError, match="arg #2: outer dimension mismatch"):
        gdot(x, np.ones((4, 8), np.float32))
    with pytest.raises(ValueError, match="arg #1: insufficient inner dimension"):
        gmatmul(np.ones(4), np.ones((4, 2)))


def test_type_selection(cuda, gufuncs):
    gdot = gufuncs[0]
    x = np.ones((5, 8), np.float32)
    # no exact kernel: the first one the inputs cast to safely (float16 -> float32)
    assert gdot(x.astype(np.float16), x.astype(np.float16)).dtype == np.float32
    assert gdot(x.astype(np.int32), x.astype(np.int32)).dtype == np.float64
    with pytest.raises(TypeError, match="no matching signature"):
        gdot(x.astype(np.complex64), x)
    # device arrays, which cannot be cast, are matched as numba-cuda matches (its
    # np.can_cast(signature's type, input's type)), so its errors are numba's
    with pytest.raises(TypeError, match="no matching signature"):
        gdot(cuda.to_device(x.astype(np.float16)), cuda.to_device(x.astype(np.float16)))
    with pytest.raises(TypeError, match="does not support .astype"):
        gdot(cuda.to_device(x.astype(np.complex128)), cuda.to_device(x.astype(np.complex128)))


def twice(inp, out):
    out[0] = inp * 2


def test_scalars_select_a_signature_that_holds_their_value(cuda):
    # numba-cuda's test_gufunc_scalar_output_bug: twice(10) for an int32 signature (a Python
    # int is int64); a value int32 cannot hold, or an int64 array, matches nothing
    g = cuda.guvectorize(["void(int32, int32[:])"], "()->()")(twice)
    assert g(10).dtype == np.int32 and g(np.int64(-7)).dtype == np.int32
    if not USING_TESTDRIVER:
        assert g(10) == 20 and g(np.int64(-7)) == -14
    assert g(np.arange(3, dtype=np.int32)).dtype == np.int32
    for bad in (2**40, np.arange(3), 1.5):
        with pytest.raises(TypeError, match="no matching signature"):
            g(bad)
    f = cuda.guvectorize(["void(float32, float32[:])"], "()->()")(twice)
    assert f(3).dtype == np.float32 and f(0.5).dtype == np.float32
    with pytest.raises(TypeError, match="no matching signature"):
        f(0.1)  # float32 does not hold 0.1 exactly


def test_decorator_errors(cuda):
    sig = ["void(float32[:], float32[:], float32[:])"]
    with pytest.raises(NameError, match="undefined output symbols: m"):
        cuda.guvectorize(sig, "(n),(n)->(m)")(dot)
    for layout in ("(n),(1)->()", "(n)(n)->()", "n->()"):
        with pytest.raises(ValueError, match="bad token in signature"):
            cuda.guvectorize(sig, layout)(dot)
    with pytest.raises(TypeError, match="cannot return values"):
        cuda.guvectorize(["float32(float32[:], float32[:], float32[:])"], "(n),(n)->()")(dot)
    with pytest.raises(ValueError, match="ndim>0 for scalar"):
        cuda.guvectorize(["void(float32, float32[:], float32[:])"], "(n),(n)->()")(dot)
    with pytest.raises(TypeError, match="has 2 arguments; the layout"):
        cuda.guvectorize(["void(float32[:], float32[:])"], "(n),(n)->()")(dot)
    with pytest.raises(TypeError, match="needs type signatures"):
        cuda.guvectorize("(n)->()")
    with pytest.raises(TypeError, match="caching is not supported"):
        cuda.guvectorize(sig, "(n),(n)->()", cache=True)
    with pytest.raises(TypeError, match="writable_args are not supported"):
        cuda.guvectorize(sig, "(n),(n)->()", writable_args=(0,))
    with pytest.raises(TypeError, match="nopython flag must be True"):
        cuda.guvectorize(sig, "(n),(n)->()", nopython=False)
    with pytest.raises(TypeError, match="target options are not supported: 'fastmath'"):
        cuda.guvectorize(sig, "(n),(n)->()", fastmath=True)
    with pytest.raises(ValueError, match="Unsupported target"):
        cuda.guvectorize(sig, "(n),(n)->()", target="cpu")


# ---------------------------------------------------------------- on the GPU -------------

def gpu_inputs():
    rng = np.random.default_rng(11)
    return {
        "dot32": (rng.random((300, 17)).astype(np.float32), rng.random((300, 17)).astype(np.float32)),
        "dot64": (rng.random((4, 5, 33)), rng.random(33)),
        "matmul": (rng.random((50, 3, 4)), rng.random((50, 4, 6))),
        "matmul_pinned": (rng.random((20, 3, 4)), rng.random((4, 2))),
        "addc": (rng.integers(-9, 9, (7, 11)), 5),
        # tuples of tuples as inputs: numpy.asarray's arrays (numba-cuda's test_gufunc)
        "dot_tuples": (((1.0, 2.0, 3.0), (4.0, 5.0, 6.0)), ((1.5, 2.5, 3.5), (4.5, 5.5, 6.5))),
    }


CASES = {"dot32": 0, "dot64": 0, "matmul": 1, "matmul_pinned": 1, "addc": 2, "dot_tuples": 0}


def numba_side(path):
    """In a fresh interpreter: numba-cuda's results for gpu_inputs(), saved to path (npz)."""
    for old, new in (("row_stack", "vstack"), ("in1d", "isin"), ("trapz", "trapezoid")):
        if not hasattr(np, old) and hasattr(np, new):
            setattr(np, old, getattr(np, new))
    from numba import cuda as ncuda
    fns = make(ncuda)
    np.savez(path, **{name: fns[CASES[name]](*args) for name, args in gpu_inputs().items()})


def expected(name, args):
    if name.startswith("dot"):
        a, b = map(np.asarray, args)
        return (a * b).sum(axis=-1)
    if name.startswith("matmul"):
        return np.matmul(*args)
    return args[0] + args[1]


@pytest.mark.gpu
def test_results_match_numpy_and_numba_cuda(gpu, cuda, gufuncs, tmp_path):
    pytest.importorskip("numba")
    path = tmp_path / "numba.npz"
    code = (f"import sys; sys.path.insert(0, {HERE!r}); import test_guvectorize as t; "
            f"t.numba_side({str(path)!r})")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, f"numba-cuda side failed:\n{p.stdout}\n{p.stderr}"
    theirs = np.load(path)
    for name, args in gpu_inputs().items():
        mine = gufuncs[CASES[name]](*args)
        assert type(mine) is np.ndarray and mine.dtype == theirs[name].dtype
        assert mine.shape == theirs[name].shape
        np.testing.assert_array_equal(mine, theirs[name])
        np.testing.assert_allclose(mine, expected(name, args), rtol=1e-5)


@pytest.mark.gpu
def test_device_arrays_out_and_stream(gpu, cuda, gufuncs):
    gdot = gufuncs[0]
    a, b = gpu_inputs()["dot32"]
    s = cuda.stream()
    da, db = cuda.to_device(a, stream=s), cuda.to_device(b, stream=s)
    out = cuda.device_array(a.shape[0], np.float32, stream=s)
    r = gdot(da, db, out=out, stream=s)
    assert r is out
    s.synchronize()
    np.testing.assert_allclose(r.copy_to_host(), (a * b).sum(axis=-1), rtol=1e-5)


def test_random_layouts_never_crash(cuda):
    """Random layout strings: each is taken or refused with numba's ValueError / NameError (or
    the argument-count TypeError), never anything else."""
    import random
    rnd = random.Random(5)
    alphabet = "(),->nm_1 \t>-"
    for _ in range(3000):
        layout = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 14)))
        try:
            cuda.guvectorize(["void(float32[:], float32[:], float32[:])"], layout)(dot)
        except (ValueError, NameError, TypeError):
            pass


def test_tuple_inputs_are_arrays(cuda, gufuncs, tdrv):
    # numpy.asarray of a tuple of tuples is one 2-d array, not asarray(*tuple)
    r = gufuncs[0](*gpu_inputs()["dot_tuples"])
    assert r.shape == (2,) and r.dtype == np.float64


def test_a_gufunc_is_not_callable_from_a_kernel(cuda, gufuncs):
    # numba-cuda's test_not_supported_call_from_jit: an untyped global, not a device function
    dot_gufunc = gufuncs[0]

    def k(a, b, out):
        dot_gufunc(a, b, out)
    k.__globals__["dot_gufunc"] = dot_gufunc
    with pytest.raises(cuda.TypingError, match="Untyped global name 'dot_gufunc': Cannot "
                                               "determine Numba type of <class '.*GUFunc'>"):
        cuda.compile_ptx(k, "void(float64[::1], float64[::1], float64[::1])", cc=(9, 0))
