"""numba's Optional in kernels: a device function that returns a value on some paths and None
on others (`return`, `return None`, or falling off the end) returns OptionalType(T), and so
does a variable assigned both; `x is None` / `x is not None` test it, and wherever a T is
needed the Optional converts to one, raising numba's TypeError("expected T, got None") when it
is None (the thread ends; a debug=True kernel reports it), a function declaring the value's
type (`int32(int64)`) among those places. numba-cuda's recursion test "optional_return" (bar
calling foo and itself) is among the kernels; numba-cuda 0.30.4 skips that test ("Needs
insert_unresolved_ref support") and cannot compile it, nor `v > best` of a variable None
before a loop (gt(float64, none)): those two are compared with Python only. CI: they compile
and ptxas accepts them; the GPU compares with Python and numba-cuda."""
import numpy as np
import pytest

import nbcuda as cuda
from conftest import load_kernel_module
from test_compile import check_ptx

SOURCE = '''
@cuda.jit(device=True)
def foo(x):
    if x > 5:
        return x - 1
    else:
        return


@cuda.jit(device=True)
def bar(x):                  # numba-cuda's recursion_usecases.make_optional_return_case
    out = foo(x)
    if out is None:
        return out
    elif out < 8:
        return out
    else:
        return x * bar(out)


@cuda.jit(device=True)
def positive(a):             # falls off the end: None
    if a > 0:
        return a * 2.0


@cuda.jit(device=True)
def largest(arr, n):         # a variable None until assigned
    best = None
    for i in range(n):
        v = arr[i]
        if best is None or v > best:
            best = v
    return best


def recursive_kernel(out, xs):
    i = cuda.grid(1)
    if i < xs.shape[0]:
        v = bar(xs[i])
        out[i] = -1 if v is None else v


def optional_kernel(out, xs, arr):
    i = cuda.grid(1)
    if i < xs.shape[0]:
        out[i, 0] = xs[i]
        p = positive(xs[i] - 6)
        out[i, 1] = p if p is not None else -2.0


def loop_kernel(out, xs, arr):
    i = cuda.grid(1)
    if i < xs.shape[0]:
        best = largest(arr, i)
        out[i, 2] = -3.0 if best is None else best


@cuda.jit(device=True)
def pick(c, x):
    r = x if c > 0 else None         # a conditional expression with None
    return r


@cuda.jit(device=True)
def climb(x):
    best = None
    i = 0
    while best is None or best < x:  # short-circuit: best is not compared while None
        best = i * 2.5
        i += 1
    best += 1                        # augmented assignment of an Optional variable
    return best


@cuda.jit(device=True)
def reassigned(x):
    y = None
    y = x
    return y + 1


def forms_kernel(out, xs):
    i = cuda.grid(1)
    if i < xs.shape[0]:
        x = xs[i]
        v = pick(x, 3)
        out[i, 0] = 0 if v is None else v
        out[i, 1] = climb(x)
        out[i, 2] = reassigned(x)
        w = pick(-x, 2)
        out[i, 3] = -5
        if w is not None:
            out[i, 3] = w


def used_as_value(out, x):
    out[0] = foo(x) + 1      # TypeError when foo returns None


@cuda.jit("int32(int64)", device=True)
def declared_int32(x):
    # numba-cuda's test_compile_cabi_calling_device_function_returning_optional: the returned
    # OptionalType(int64) converts to the declared int32 (None: the TypeError)
    return foo(x)


def returned_as_declared(out, x):
    out[0] = declared_int32(x)
'''

SIG = "void(float64[:, ::1], int64[::1], float64[::1])"


def expected(xs, arr):
    def foo(x):
        return x - 1 if x > 5 else None

    def bar(x):
        out = foo(x)
        if out is None or out < 8:
            return out
        return x * bar(out)

    rows = []
    for i, x in enumerate(xs):
        v, p = bar(x), (x - 6) * 2.0 if x - 6 > 0 else None
        best = max(arr[:i]) if i else None
        rows.append([x, -2.0 if p is None else p, -3.0 if best is None else best])
    return np.array(rows, dtype=np.float64), np.array(
        [-1 if bar(x) is None else bar(x) for x in xs], dtype=np.int64)


@pytest.fixture
def m(tmp_path):
    return load_kernel_module(tmp_path, "optional", SOURCE, cuda)


def test_types_and_ptx(m, tmp_path):
    ptx, _ = cuda.compile_ptx(m.optional_kernel, SIG, cc=(9, 0))
    check_ptx(ptx, tmp_path)
    ptx, _ = cuda.compile_ptx(m.loop_kernel, SIG, cc=(9, 0))
    check_ptx(ptx, tmp_path)
    ptx, _ = cuda.compile_ptx(m.forms_kernel, "void(float64[:, ::1], int64[::1])", cc=(9, 0))
    check_ptx(ptx, tmp_path)
    ptx, _ = cuda.compile_ptx(m.recursive_kernel, "void(int64[::1], int64[::1])", cc=(9, 0))
    check_ptx(ptx, tmp_path)
    _, resty = cuda.compile(m.bar, "(int64,)", device=True, cc=(9, 0))
    assert str(resty) == "OptionalType(int64)"
    _, resty = cuda.compile(m.positive, "(int64,)", device=True, cc=(9, 0))
    assert str(resty) == "OptionalType(float64)"
    ptx, _ = cuda.compile_ptx(m.used_as_value, "void(int64[::1], int64)", cc=(9, 0),
                              debug=True, opt=False)
    check_ptx(ptx, tmp_path)
    # an Optional returned where the signature declares its value's type, also through the
    # C ABI as numba-cuda's test_compiler compiles it
    code, resty = cuda.compile(m.declared_int32.py_func, cuda.int32(cuda.int64), device=True,
                               output="ltoir", abi="c", cc=(9, 0))
    assert isinstance(code, bytes) and str(resty) == "int32"


def test_none_and_arrays_do_not_unify(tmp_path):
    src = "def f(a):\n    if a[0] > 0:\n        return a\n"
    mm = load_kernel_module(tmp_path, "optional_array", src, cuda)
    with pytest.raises(cuda.TypingError, match="Cannot unify array"):
        cuda.compile(mm.f, "(float32[:],)", device=True, cc=(9, 0))


XS = np.array([0, 5, 6, 7, 8, 9, 10, 12, 20, 3], dtype=np.int64)
ARR = np.array([0.5, -1.0, 3.0, 2.5, 7.0, 1.0, 6.5, 9.0, 0.0, 4.0])


def run(lib, m):
    out = np.zeros((len(XS), 3))
    lib.jit(SIG)(m.optional_kernel)[1, 32](out, XS, ARR)
    if lib is cuda:
        lib.jit(SIG)(m.loop_kernel)[1, 32](out, XS, ARR)
    return out


def forms_expected(xs):
    rows = []
    for x in xs:
        best, i = None, 0
        while best is None or best < x:
            best, i = i * 2.5, i + 1
        rows.append([3 if x > 0 else 0, best + 1, x + 1, 2 if -x > 0 else -5])
    return np.array(rows, dtype=np.float64)


@pytest.mark.gpu
def test_more_optional_forms_match_python(gpu, m):
    out = np.zeros((len(XS), 4))
    cuda.jit("void(float64[:, ::1], int64[::1])")(m.forms_kernel)[1, 32](out, XS - 4)
    np.testing.assert_array_equal(out, forms_expected(XS - 4))


@pytest.mark.gpu
def test_optional_matches_python_and_numba_cuda(gpu, tmp_path, m):
    mine = run(cuda, m)
    want, want_recursive = expected(XS, ARR)
    np.testing.assert_array_equal(mine, want)
    got = np.zeros(len(XS), np.int64)
    cuda.jit("void(int64[::1], int64[::1])")(m.recursive_kernel)[1, 32](got, XS)
    np.testing.assert_array_equal(got, want_recursive)
    ncuda = pytest.importorskip("numba.cuda")
    theirs = run(ncuda, load_kernel_module(tmp_path, "optional_numba", SOURCE, ncuda))
    np.testing.assert_array_equal(mine[:, :2], theirs[:, :2])
    for fn, dtype, value in ((m.used_as_value, np.int64, 9),
                             (m.returned_as_declared, np.int32, 8)):
        out = np.zeros(1, dtype)
        k = cuda.jit(f"void({np.dtype(dtype).name}[::1], int64)", debug=True, opt=False)(fn)
        k[1, 1](out, 9)
        assert out[0] == value
        with pytest.raises(TypeError, match="expected int64, got None"):
            k[1, 1](out, 1)
