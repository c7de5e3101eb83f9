"""isinstance() in kernels, as numba types it: a constant of compile time. int, float,
complex and bool are numba's types of Python's values — int64, float64, complex128, boolean —
matched exactly (an int32 is not an int, a float32 not a float: numba-cuda 0.30.4's answers,
read from its PTX), tuple matches any tuple, a numba or numpy scalar type that type, a tuple
display any of its items; `if isinstance(p, T):` of a parameter keeps only the branch taken, so
the other one need not type — `if isinstance(b, tuple): b = b[0]` (numba-cuda 0.30.4 types both
branches there and refuses `b[0]` of an int; its test_ssa issue 5219 reaches the same through
@overload). CI: the constants in the PTX, ptxas, the errors; the GPU compares with numba-cuda
(whose constants, read from its PTX on the dev box, are the table below)."""
import re

import numpy as np
import pytest

import nbcuda as cuda
from conftest import assert_same_as_numba_cuda, load_kernel_module
from test_compile import compile_checked

SOURCE = '''
import numpy as np
from numba import float32, int64


@cuda.jit(device=True)
def first(b):
    if isinstance(b, tuple):
        b = b[0]
    return b


def classify(out, x):
    out[0] = isinstance(x, int)
    out[1] = isinstance(x, float)
    out[2] = isinstance(x, complex)
    out[3] = isinstance(x, bool)
    out[4] = isinstance(x, (int, float))
    out[5] = isinstance(x, np.float32)
    out[6] = isinstance(x, int64)
    out[7] = isinstance(x, (float32, np.int32))
    out[8] = 1 if isinstance(x, tuple) else 0
    if not isinstance(x, complex):
        out[9] = 7
    else:
        out[9] = x.imag


def unpacks(out, a, b):
    out[0] = first(a) + first(b)
'''

SIGS = ["void(int64[::1], int64)", "void(int64[::1], int32)", "void(int64[::1], float32)",
        "void(int64[::1], float64)", "void(int64[::1], boolean)",
        "void(int64[::1], complex128)"]
ARGS = [np.int64(3), np.int32(3), np.float32(1.5), 1.5, True, 1 + 2j]
EXPECT = {  # int float complex bool (int,float) np.float32 int64 (float32,int32) tuple not-complex
    "int64": [1, 0, 0, 0, 1, 0, 1, 0, 0, 7],
    "int32": [0, 0, 0, 0, 0, 0, 0, 1, 0, 7],
    "float32": [0, 0, 0, 0, 0, 1, 0, 1, 0, 7],
    "float64": [0, 1, 0, 0, 1, 0, 0, 0, 0, 7],
    "boolean": [0, 0, 0, 1, 0, 0, 0, 0, 0, 7],
    "complex128": [0, 0, 1, 0, 0, 0, 0, 0, 0, 2],
}


@pytest.fixture
def m(tmp_path):
    return load_kernel_module(tmp_path, "isinst", SOURCE, cuda)


@pytest.mark.parametrize("sig", SIGS)
def test_answers_are_compile_time_constants(m, sig, tmp_path):
    ptx = compile_checked(m.classify, sig, tmp_path)
    assert "selp" not in ptx and "setp" not in ptx  # nothing decided at run time


def test_tuple_branch_is_pruned(m, tmp_path):
    # `b = b[0]` types only for the tuple; for the int the branch is gone before typing
    compile_checked(m.unpacks, "void(int64[::1], UniTuple(int64, 2), int64)", tmp_path)


def test_a_global_named_isinstance_is_not_the_builtin(tmp_path):
    # the user's function decides (False here): the branch is not pruned by the builtin's answer
    src = ("import numpy as np\n\n\ndef isinstance(a, t):\n    return False\n\n\n"
           "def k(out, x):\n    if isinstance(x, np.int64):\n        out[0] = 1\n"
           "    else:\n        out[0] = 2\n")
    k = load_kernel_module(tmp_path, "isinst_shadowed", src, cuda)
    ptx = compile_checked(k.k, "void(int64[::1], int64)", tmp_path)
    stored = re.findall(r"mov\.u64\s+%rd\d+, (\d+);", ptx)
    assert "2" in stored and "1" not in stored


@pytest.mark.parametrize("src, message", [
    ("def k(out, x):\n    out[0] = isinstance(x)\n", r"isinstance\(\) takes 2 arguments"),
    ("def k(out, x):\n    out[0] = isinstance(x, len)\n", "isinstance\\(\\) takes int, float"),
])
def test_errors(tmp_path, src, message):
    k = load_kernel_module(tmp_path, "isinst_bad", src, cuda)
    with pytest.raises(cuda.TypingError, match=message):
        cuda.compile_ptx(k.k, "void(int64[::1], int64)", cc=(9, 0))


def run_all(lib, m, unpacks=True):
    out = {}
    for sig, arg in zip(SIGS, ARGS):
        got = np.zeros(10, np.int64)
        lib.jit(sig)(m.classify)[1, 1](got, arg)
        out[sig.split(", ")[1][:-1]] = got
    if unpacks:  # nbcuda only: numba-cuda cannot type it
        got = np.zeros(1, np.int64)
        lib.jit("void(int64[::1], UniTuple(int64, 2), int64)")(m.unpacks)[1, 1](got, (5, 6), 7)
        out["unpacks"] = got
    return out


def test_launches_on_the_test_driver(m, tdrv):
    run_all(cuda, m)


@pytest.mark.gpu
def test_matches_numba_cuda(gpu, tmp_path, m):
    mine = run_all(cuda, m)
    for key, want in EXPECT.items():
        np.testing.assert_array_equal(mine[key], want, err_msg=key)
    np.testing.assert_array_equal(mine.pop("unpacks"), [12])
    assert_same_as_numba_cuda(lambda lib, m: run_all(lib, m, unpacks=False), SOURCE, tmp_path,
                              "isinst_numba", mine)
