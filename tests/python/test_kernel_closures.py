"""Nested functions, lambdas, keyword arguments and default values in kernels, as numba:
`def inner(x, y=2): ...` inside a kernel reads the kernel's variables (their values at the
call, as Python's cells give), may have defaults and be called by keyword, call its siblings
and itself, and have nested functions of its own; `f = lambda x, y=1: ...` is the same; a
device function's parameters take keyword arguments and defaults (numbers, bools, global
constants). CI: the kernels compile and ptxas accepts them, misuse gets clear errors; the GPU
compares the results with numpy and with numba-cuda (whose device functions are
cuda.jit(device=True) dispatchers, the only functions it calls)."""
import inspect
import math

import numpy as np
import pytest

import nbcuda as cuda
from conftest import load_kernel_module
from test_compile import check_ptx

SCALE = 2.5
SHIFT = -3


@cuda.jit(device=True)
def scaled(v, factor=SCALE, shift=SHIFT, flip=False):
    r = v * factor + shift
    return -r if flip else r


@cuda.jit(device=True)
def combine(a, b=1, c=0.5):
    return a * 100 + b * 10 + c


def closures(out, x, y):
    i = cuda.grid(1)
    n = 3

    def inner(v, w=2):
        return v + w + n + y[i]           # n read at the call: 5 below

    def twice(v):
        return inner(v) * 2               # a sibling, and its captured variables with it

    def outer(v):
        def deeper(u):
            return u * x[0] + n
        return deeper(v) - 1

    def store(j, v):
        out[j, 5] = v                     # writes through a captured array

    half = lambda v: v / 2.0
    n = 5
    if i < x.size:
        out[i, 0] = inner(x[i])
        out[i, 1] = inner(x[i], 10)
        out[i, 2] = twice(x[i])
        out[i, 3] = outer(x[i])
        out[i, 4] = half(x[i]) + half(y[i])
        store(i, x[i] - y[i])


CLOSURES_SIG = "void(float64[:, ::1], float64[::1], float64[::1])"


def closures_expected(x, y):
    out = np.zeros((len(x), 6))
    out[:, 0] = x + 2 + 5 + y
    out[:, 1] = x + 10 + 5 + y
    out[:, 2] = (x + 2 + 5 + y) * 2
    out[:, 3] = x * x[0] + 5 - 1
    out[:, 4] = x / 2 + y / 2
    out[:, 5] = x - y
    return out


def closures_beyond_numba(out, x, y):
    # numba-cuda 0.30.4 refuses a recursive nested function ("Unsupported use of cell
    # variable"), fails on keyword arguments out of order and on a lambda's defaults (an
    # AssertionError in inline_closure_call) and, worse, ignores a keyword argument given in
    # order: inner(x[i], w=10) gives inner(x[i]) (seen on the H200); Python runs them all
    i = cuda.grid(1)

    def fact(k):
        if k <= 1:
            return 1
        return k * fact(k - 1)

    def inner(v, w=2):
        return v + w + y[i]

    half = lambda v, d=2.0: v / d
    if i < x.size:
        out[i, 0] = fact(i % 6)
        out[i, 1] = inner(w=1, v=y[i])
        out[i, 2] = half(x[i]) + half(y[i], 4.0) + half(d=8.0, v=x[i])
        out[i, 3] = inner(x[i], w=10)


def closures_beyond_numba_expected(x, y):
    out = np.zeros((len(x), 4))
    fact = np.array([1, 1, 2, 6, 24, 120], dtype=np.float64)
    out[:, 0] = fact[np.arange(len(x)) % 6]
    out[:, 1] = y + 1 + y
    out[:, 2] = x / 2 + y / 4 + x / 8
    out[:, 3] = x + 10 + y
    return out


def defaults(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = scaled(x[i])
        out[i, 1] = scaled(x[i], 3.0)
        out[i, 2] = scaled(x[i], shift=1, flip=True)
        out[i, 3] = scaled(flip=False, v=x[i], factor=-1.0)
        out[i, 4] = combine(x[i])
        out[i, 5] = combine(x[i], c=7) + combine(x[i], 2, 3)


DEFAULTS_SIG = "void(float64[:, ::1], float64[::1])"


def defaults_expected(x):
    out = np.zeros((len(x), 6))
    out[:, 0] = x * 2.5 - 3
    out[:, 1] = x * 3.0 - 3
    out[:, 2] = -(x * 2.5 + 1)
    out[:, 3] = -x - 3
    out[:, 4] = x * 100 + 10 + 0.5
    out[:, 5] = (x * 100 + 10 + 7) + (x * 100 + 20 + 3)
    return out


@cuda.jit(device=True)
def store(arr, i, v):
    arr[i] = v


def aliases(a, out):
    # functions bound to names, as numba's function types are constants
    i = cuda.grid(1)
    if i < a.size:
        f = store
        g = f
        s = math.sqrt
        f(out, i, combine(a[i]))
        g(out, i, out[i] + s(a[i]))


ALIASES_SIG = "void(float64[::1], float64[::1])"


def bound_twice(a):
    f = combine
    if a > 0:
        f = scaled
    return f(a)


@pytest.mark.parametrize("kernel, sig", [(closures, CLOSURES_SIG), (defaults, DEFAULTS_SIG),
                                         (closures_beyond_numba, CLOSURES_SIG),
                                         (aliases, ALIASES_SIG)])
def test_kernels_compile_and_ptxas_accepts(kernel, sig, tmp_path):
    ptx, _ = cuda.compile_ptx(kernel, sig, cc=(9, 0))
    check_ptx(ptx, tmp_path)


def lambda_device(a, b):
    f = lambda u, v=3: u * v
    return f(a) + f(b, v=2)


def test_nested_functions_type_as_numba():
    # a + 3 (int64) and b * 2: float32 with int64 is float64, as numba types it
    _, resty = cuda.compile_ptx(lambda_device, "(int32, float32)", device=True, cc=(9, 0))
    assert str(resty) == "float64"
    _, resty = cuda.compile_ptx(lambda_device, "(int16, int8)", device=True, cc=(9, 0))
    assert str(resty) == "int64"


def missing(a):
    return combine()


def unexpected(a):
    return combine(a, d=1)


def twice_given(a):
    return combine(a, 1, b=2)


def too_many(a):
    return combine(a, 1, 2, 3)


def nested_as_value(a):
    def inner(v):
        return v + a  # captures a: it can only be called where a is
    g = inner
    return g(a)


def stray_lambda(a):
    return (lambda v: v)(a)


def default_reads_variable(a):
    k = 2

    def inner(v, w=k):
        return v + w
    return inner(a)


def defined_twice(a):
    if a > 0:
        def inner(v):
            return v
    else:
        def inner(v):
            return -v
    return inner(a)


def nested_wrong_arity(a):
    def inner(v):
        return v + a
    return inner(a, 1)


@pytest.mark.parametrize("func, error, message", [
    (missing, cuda.TypingError, r"combine\(\) missing 1 required positional argument: 'a'"),
    (unexpected, cuda.TypingError, r"combine\(\) got an unexpected keyword argument 'd'"),
    (twice_given, cuda.TypingError, r"combine\(\) got multiple values for argument 'b'"),
    (too_many, cuda.TypingError,
     r"combine\(\) takes 3 positional arguments but 4 were given"),
    (nested_as_value, cuda.TypingError,
     "Cannot capture the non-constant value associated with variable 'a' in a function that "
     "may escape"),
    (stray_lambda, cuda.CompileError, "a lambda can only be assigned to a name and called"),
    (default_reads_variable, cuda.CompileError,
     "the default value of a nested function's parameter reads the variable 'k'"),
    (defined_twice, cuda.CompileError, "nested function 'inner' is defined more than once"),
    # the captured `a` passed first is not the user's argument: the counts leave it out
    (nested_wrong_arity, cuda.TypingError,
     r"inner\(\) takes 1 positional argument but 2 were given"),
    (bound_twice, cuda.TypingError, r"Cannot unify Function\(combine\) and Function\(scaled\)"),
])
def test_misuse_is_a_clear_error(func, error, message):
    with pytest.raises(error, match=message):
        cuda.compile_ptx(func, "(float64,)", device=True, cc=(9, 0))


def numba_module(tmp_path, ncuda, name, *funcs):
    """The kernels' source under numba: the same text, `cuda` numba's."""
    src = ["import math", "import numpy as np", "SCALE = 2.5", "SHIFT = -3", ""]
    src += [inspect.getsource(getattr(f, "py_func", f)) for f in funcs]
    return load_kernel_module(tmp_path, name, "\n\n".join(src), ncuda)


@pytest.mark.gpu
def test_closures_match_numpy_and_numba_cuda(gpu, tmp_path):
    x = np.linspace(-2.0, 3.0, 50)
    y = np.cos(np.arange(50.0))
    beyond = np.full((50, 4), np.nan)
    cuda.jit(CLOSURES_SIG)(closures_beyond_numba)[1, 64](beyond, x, y)
    np.testing.assert_allclose(beyond, closures_beyond_numba_expected(x, y), rtol=1e-15)
    out = np.full((50, 6), np.nan)
    cuda.jit(CLOSURES_SIG)(closures)[1, 64](out, x, y)
    np.testing.assert_allclose(out, closures_expected(x, y), rtol=1e-15)

    ncuda = pytest.importorskip("numba.cuda")
    t = numba_module(tmp_path, ncuda, "numba_closure_kernels", closures)
    theirs = np.full((50, 6), np.nan)
    ncuda.jit(CLOSURES_SIG)(t.closures)[1, 64](theirs, x, y)
    np.testing.assert_array_equal(out, theirs)


@pytest.mark.gpu
def test_aliases_match_numpy_and_numba_cuda(gpu, tmp_path):
    x = np.linspace(0.5, 3.0, 50)
    out = np.full(50, np.nan)
    cuda.jit(ALIASES_SIG)(aliases)[1, 64](x, out)
    np.testing.assert_allclose(out, x * 100 + 10 + 0.5 + np.sqrt(x), rtol=1e-15)

    ncuda = pytest.importorskip("numba.cuda")
    t = numba_module(tmp_path, ncuda, "numba_alias_kernels", combine, store, aliases)
    theirs = np.full(50, np.nan)
    ncuda.jit(ALIASES_SIG)(t.aliases)[1, 64](x, theirs)
    np.testing.assert_array_equal(out, theirs)


@pytest.mark.gpu
def test_defaults_match_numpy_and_numba_cuda(gpu, tmp_path):
    x = np.linspace(-2.0, 3.0, 50)
    out = np.full((50, 6), np.nan)
    cuda.jit(DEFAULTS_SIG)(defaults)[1, 64](out, x)
    np.testing.assert_allclose(out, defaults_expected(x), rtol=1e-15)

    ncuda = pytest.importorskip("numba.cuda")
    t = numba_module(tmp_path, ncuda, "numba_default_kernels", scaled, combine, defaults)
    theirs = np.full((50, 6), np.nan)
    ncuda.jit(DEFAULTS_SIG)(t.defaults)[1, 64](theirs, x)
    np.testing.assert_array_equal(out, theirs)
