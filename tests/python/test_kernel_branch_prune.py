"""numba's dead branch pruning of semantic constants: `if a.ndim == 2:`, `if len(t) == 3:`,
`if p is None:` of a parameter that is None (or is not Optional), and comparisons of integer
literals and constant integer arguments keep only the branch taken, so the other one need not
type — the generic device function that indexes `a[i, j]` only when `a.ndim == 2`, or uses `b`
only when it is not None. Code after a return (or raise, break, continue) of the taken branch
is unreachable and not typed either, as Python's compiler drops it. Kernels take None (numba's
NoneType: nothing passed, `x is None` a constant; `y == None` True only for None). A parameter
rebound before
the test (or in a loop around it) is not a constant there: both branches type, as in numba.
CI: ptxas, the pruned branches' absence, the errors; the GPU compares with numpy and
numba-cuda."""
import numpy as np
import pytest

import nbcuda as cuda
from conftest import assert_same_as_numba_cuda, load_kernel_module, sig_texts
from test_compile import compile_checked

SOURCE = '''
@cuda.jit(device=True)
def last(a):
    if a.ndim == 2:
        return a[0, a.shape[1] - 1]
    elif a.ndim != 1:
        return a[0, 0, 0]
    return a[a.shape[0] - 1]


@cuda.jit(device=True)
def third_or_first(t):
    if len(t) >= 3:
        return t[2]
    return t[0]


@cuda.jit(device=True)
def plus_first(x, b):
    if b is None:
        return x
    return x + b[0]


@cuda.jit(device=True)
def scaled(x, factor=None):  # a None default: the callee specialised for it
    if factor is None:
        return x
    return x * factor


@cuda.jit(device=True)
def unless_none(x, b):
    if b is not None:
        x += b[1]
    return x


def maybe(out, x, y):  # a kernel given None: numba's NoneType, nothing passed
    if x is None:
        out[0] = -1.0
    else:
        out[0] = x + 1
    out[1] = y == None  # noqa: E711 (numba: None equals only None)
    out[2] = y != None  # noqa: E711


def maybe_defaults(out, x, y=None):  # y omitted: its default
    out[0] = x + 1
    out[1] = y == None  # noqa: E711
    out[2] = y is None


def kernel(out, v, m):
    out[0] = last(v)
    out[1] = last(m)
    out[2] = third_or_first((1.0, 2.0, 3.0))
    out[3] = third_or_first((4.0, 5.0))
    out[4] = plus_first(1.5, None)
    out[5] = plus_first(1.5, v)
    out[6] = unless_none(2.5, None)
    out[7] = unless_none(2.5, v)
    out[8] = scaled(2.0)
    out[9] = scaled(2.0, 3.0)
'''

SIG = "void(float64[::1], float64[::1], float64[:, ::1])"


@pytest.fixture
def m(tmp_path):
    return load_kernel_module(tmp_path, "prune", SOURCE, cuda)


def test_pruned_branches_need_not_type(m, tmp_path):
    compile_checked(m.kernel, SIG, tmp_path)


def test_the_untaken_branch_is_gone(tmp_path):
    src = ("def k(out, a):\n    if a.ndim == 1:\n        out[0] = 11\n    else:\n"
           "        out[0] = 22\n")
    k = load_kernel_module(tmp_path, "prune_gone", src, cuda)
    ptx = compile_checked(k.k, "void(int64[::1], float32[:, :])", tmp_path)
    assert "22;" in ptx and "11;" not in ptx and "setp" not in ptx


@pytest.mark.parametrize("src, sig", [
    # rebound before the test: a.ndim is not the argument's any more, both branches type
    ("def k(out, a):\n    a = out\n    if a.ndim == 2:\n        out[0] = a[0, 0]\n",
     "void(int64[::1], float32[:, :])"),
    # a module's own len is not the builtin: its answer is not known before typing
    ("def len(t):\n    return 3\n\n\ndef k(out, t):\n    if len(t) == 3:\n"
     "        out[0] = t[2]\n", "void(int64[::1], UniTuple(int64, 2))"),
    # a local tuple is no argument: numba prunes arguments' semantic constants only
    ("def k(out, a):\n    t = (1, 2)\n    if len(t) == 3:\n        out[0] = t[2]\n",
     "void(int64[::1], float32[::1])"),
])
def test_not_constant_is_not_pruned(tmp_path, src, sig):
    k = load_kernel_module(tmp_path, "prune_no", src, cuda)
    with pytest.raises(cuda.TypingError):
        cuda.compile_ptx(k.k, sig, cc=(9, 0))


def run_all(lib, m, nbcuda_only=True):
    out = lib.to_device(np.zeros(10))
    v = np.arange(1.0, 5.0)
    mat = np.arange(6.0).reshape(2, 3)
    lib.jit(SIG)(m.kernel)[1, 1](out, v, mat)
    result = {"out": out.copy_to_host()}
    if not nbcuda_only:
        return result
    # numba-cuda 0.30.4 refuses these launches: omitted arguments ("Signature mismatch") and
    # None arguments ("NotImplementedError: (none, None)" packing them)
    got = np.zeros(3)
    lib.jit(m.maybe_defaults)[1, 1](got, 2.0)
    result["defaults"] = got
    lazy = lib.jit(m.maybe)
    for name, x, y in (("none_int", None, 3), ("float_none", 2.5, None), ("none_none", None,
                                                                          None)):
        got = np.zeros(3)
        lazy[1, 1](got, x, y)
        result[name] = got
    return result


def test_omitted_arguments_are_the_defaults(tmp_path, tdrv):
    # numba's dispatcher folds omitted arguments into their defaults (test_analysis'
    # test_cond_is_kwarg_none); a lazy kernel specialises on them
    src = ("def k(out, x=None, y=1000):\n    if x is None:\n        out[0] = 10\n"
           "    else:\n        out[0] = 40\n    out[1] = y\n")
    k = cuda.jit(load_kernel_module(tmp_path, "prune_defaults", src, cuda).k)
    k[1, 1](np.zeros(2))
    k[1, 1](np.zeros(2), 3)
    k[1, 1](np.zeros(2), 3, 5)  # the same specialisation as the one before
    assert sig_texts(k) == ["void(float64[::1], void, int64)", "void(float64[::1], int64, int64)"]
    with pytest.raises(cuda.TypingError, match="the signature has 0 arguments but 'k' takes 3"):
        k[1, 1]()


def test_none_arguments(m, tdrv):
    k = cuda.jit(m.maybe)
    k[1, 1](np.zeros(3), None, 3)
    ptx = k.inspect_asm()
    sig = cuda.void(cuda.float64[::1], cuda.none, cuda.int64)
    assert "Ev" in tdrv.last_launch().function.decode()  # numba mangles None as void
    assert sig.args in [tuple(s) for s in k.signatures]
    with pytest.raises(TypeError, match="expected None, got 3"):
        cuda.jit("void(float64[::1], none, int64)")(m.maybe)[1, 1](np.zeros(3), 3, 3)
    assert ptx


def test_launches_on_the_test_driver(m, tdrv):
    run_all(cuda, m)


@pytest.mark.gpu
def test_matches_numpy_and_numba_cuda(gpu, tmp_path, m):
    mine = run_all(cuda, m)
    np.testing.assert_array_equal(mine["out"], [4.0, 2.0, 3.0, 4.0, 1.5, 2.5, 2.5, 4.5, 2.0,
                                                 6.0])
    np.testing.assert_array_equal(mine["none_int"], [-1.0, 0.0, 1.0])
    np.testing.assert_array_equal(mine["float_none"], [3.5, 1.0, 0.0])
    np.testing.assert_array_equal(mine["none_none"], [-1.0, 1.0, 0.0])
    np.testing.assert_array_equal(mine["defaults"], [3.0, 1.0, 1.0])
    assert_same_as_numba_cuda(lambda lib, m: run_all(lib, m, nbcuda_only=False), SOURCE,
                              tmp_path, "prune_numba", {"out": mine["out"]})
