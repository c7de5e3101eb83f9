"""f(*t) in kernels: a tuple's items as positional arguments, as numba unpacks them, for
device functions, builtins and math/cmath functions (numba-cuda's test_complex calls
complex(*cmath.polar(x))); the tuple is evaluated once. Device functions with a `*args`
parameter (numba's StarArgTuple): the extra positional arguments of each call as a tuple,
passed on with f(*args), len(args), args[i], a loop over them. CI: types and ptxas, misuse
gets clear errors; the GPU compares with Python's results and numba-cuda's."""
import numpy as np
import pytest

import nbcuda as cuda
from conftest import load_kernel_module, assert_same_as_numba_cuda
from test_compile import check_ptx

SOURCE = '''
import cmath
import math


@cuda.jit(device=True)
def add3(a, b, c):
    return a + b * 10 + c * 100


@cuda.jit(device=True)
def bump(counter):
    cuda.atomic.add(counter, 0, 1)
    return (1, 2, 3)


@cuda.jit(device=True)
def consumer(func, *args):
    return func(*args)


@cuda.jit(device=True)
def count(*args):
    return len(args)


@cuda.jit(device=True)
def total(first, *rest):
    s = first
    for r in rest:
        s += r
    return s


@cuda.jit(device=True)
def ten():
    return 10


@cuda.jit(device=True)
def mix(a, b):
    return a * 3 + b


def varargs_kernel(out, x, y):
    out[0] = consumer(ten)
    out[1] = consumer(mix, x, y)
    out[2] = count() * 100 + count(x, y, 3.5)
    out[3] = total(x, 5, 3) * 10 + total(y, x)
    t = (y, x)
    out[4] = consumer(mix, *t) + consumer(add3, x, *t)


def polar_back(x):
    return complex(*cmath.polar(x))


def star_kernel(out, counter, t):
    i = cuda.grid(1)
    if i == 0:
        out[0] = add3(*bump(counter))  # bump runs once
        out[1] = add3(*t)
        out[2] = add3(0, *(i + 1, 4))
        out[3] = max(*t)
        out[4] = math.hypot(*(3.0, 4.0))
        out[5] = complex(*cmath.polar(1 + 1j)).imag
'''


@pytest.fixture
def kernels(tmp_path):
    return load_kernel_module(tmp_path, "star_args", SOURCE, cuda)


def test_types_and_ptxas(kernels, tmp_path):
    ptx, res = cuda.compile_ptx(kernels.polar_back, "(complex128,)", device=True, cc=(9, 0))
    assert str(res) == "complex128"
    check_ptx(ptx, tmp_path)
    ptx, _ = cuda.compile_ptx(kernels.star_kernel,
                              "void(float64[::1], int32[::1], UniTuple(int64, 3))", cc=(9, 0))
    check_ptx(ptx, tmp_path)
    ptx, _ = cuda.compile_ptx(kernels.varargs_kernel, "void(float64[::1], int64, float64)",
                              cc=(9, 0))
    check_ptx(ptx, tmp_path)


def kernel_with_varargs(a, *args):
    a[0] = 1


def keyword_only(a, *args, b):
    return a


def calls_keyword_only(x):
    return keyword_only(x, b=2)


def calls_total_without_first(x):
    return TOTAL()


def calls_total_with_a_keyword(x):
    return TOTAL(x, rest=2)


def test_varargs_misuse_is_a_clear_error(kernels):
    global TOTAL
    TOTAL = kernels.total
    with pytest.raises(cuda.TypingError, match=r"\*args parameters are not supported in CUDA "
                       r"kernels \(a device function called from one may have them\)"):
        cuda.compile_ptx(kernel_with_varargs, "void(int64[::1])", cc=(9, 0))
    for fn, message in ((calls_keyword_only, "keyword-only parameters are not supported"),
                        (calls_total_without_first,
                         "total() missing 1 required positional argument: 'first'"),
                        (calls_total_with_a_keyword,
                         "total() got an unexpected keyword argument 'rest'")):
        with pytest.raises(cuda.TypingError, match=__import__("re").escape(message)):
            cuda.compile_ptx(fn, "(int64,)", device=True, cc=(9, 0))


def not_a_tuple(x):
    return complex(*x)


def empty(x):
    return complex(*())


@pytest.mark.parametrize("fn, message", [
    (not_a_tuple, "*args in a call unpacks a tuple in kernels, not float64"),
    (empty, "unpacking an empty tuple into a call is not supported"),
])
def test_misuse_is_a_clear_error(fn, message):
    with pytest.raises(cuda.TypingError, match=__import__("re").escape(message)):
        cuda.compile_ptx(fn, "(float64,)", device=True, cc=(9, 0))


def run_all(lib, m):
    out = lib.to_device(np.zeros(6))
    counter = lib.to_device(np.zeros(1, np.int32))
    lib.jit("void(float64[::1], int32[::1], UniTuple(int64, 3))")(m.star_kernel)[1, 32](
        out, counter, (7, 8, 9))
    var = lib.to_device(np.zeros(5))
    lib.jit("void(float64[::1], int64, float64)")(m.varargs_kernel)[1, 1](var, 4, 2.5)
    return {"out": out.copy_to_host(), "counter": counter.copy_to_host(),
            "varargs": var.copy_to_host()}


@pytest.mark.gpu
def test_results_match_python_and_numba_cuda(gpu, kernels, tmp_path):
    import cmath
    mine = run_all(cuda, kernels)
    assert mine["counter"][0] == 1
    want = [321, 7 + 80 + 900, 0 + 10 + 400, 9, 5.0, complex(*cmath.polar(1 + 1j)).imag]
    np.testing.assert_allclose(mine["out"], want, rtol=1e-15)
    x, y = 4, 2.5
    assert list(mine["varargs"]) == [10, x * 3 + y, 3, (x + 5 + 3) * 10 + y + x,
                                     y * 3 + x + x + y * 10 + x * 100]
    assert_same_as_numba_cuda(run_all, SOURCE, tmp_path, "star_args_numba", mine)
