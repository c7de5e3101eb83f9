"""range() with float arguments, as numba-cuda types it (issue: real programs, item 4): each
float converts (truncating) to the integer type of the range case the arguments rate best,
int32 when every argument is a float or an int32, int64 when an int64 or uint64 takes part.
The expected cases are numba-cuda 0.30's answers (compile_ptx, cc 9.0), asked again here when
numba-cuda is installed."""
import importlib.util
import re

import pytest

SOURCE = '''
def k3(out, a, b, c):
    s = 0
    for i in range(a, b, c):
        s += i
    out[0] = s


def k1(out, x):
    s = 0.0
    for i in range(x):
        s += i
    out[0] = s


def kn(out, kk):
    n = float(kk)
    s = 0
    for i in range(1, n + 1):
        s += i
    out[0] = s
'''

CASES = [
    ("k3", "void(int64[:], float32, int64, int64)", "s64"),
    ("k3", "void(int64[:], int64, float64, int32)", "s64"),
    ("k3", "void(int64[:], uint64, float64, int64)", "s64"),
    ("k3", "void(int64[:], float64, float64, float64)", "s32"),
    ("k3", "void(int64[:], int32, int32, float64)", "s32"),
    ("k1", "void(float64[:], float64)", "s32"),
    ("kn", "void(int64[:], int64)", "s64"),
]


def _module(tmp_path, name):
    path = tmp_path / f"{name}.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _truncations(ptx):
    return sorted(set(re.findall(r"cvt\.rzi\.([su]\d+)\.f(?:32|64)", ptx)))


@pytest.mark.parametrize("fn,sig,counter", CASES)
def test_float_bounds_truncate_to_numbas_case(cuda, tmp_path, fn, sig, counter):
    mod = _module(tmp_path, "range_float_mod")
    ptx, _ = cuda.compile_ptx(getattr(mod, fn), sig, cc=(9, 0))
    assert _truncations(ptx) == [counter]


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="needs numba-cuda")
@pytest.mark.parametrize("fn,sig,counter", CASES)
def test_numba_cuda_agrees(tmp_path, fn, sig, counter):
    from numba import cuda as ncuda
    mod = _module(tmp_path, "range_float_numba")
    ptx, _ = ncuda.compile_ptx(getattr(mod, fn), sig, cc=(9, 0))
    assert _truncations(ptx) == [counter]


def test_complex_bounds_are_refused(cuda, tmp_path):
    path = tmp_path / "range_complex.py"
    path.write_text("def k(out, x):\n    for i in range(x):\n        out[0] = i\n")
    spec = importlib.util.spec_from_file_location("range_complex", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises(Exception, match="range"):
        cuda.compile_ptx(mod.k, "void(int64[:], complex128)", cc=(9, 0))
