"""The operator module in kernels, as numba: operator.add(a, b) is a + b, operator.neg(a) is
-a, operator.lt(a, b) is a < b, operator.contains(a, b) is b in a, operator.getitem(a, i)
is a[i], operator.setitem(a, i, v) is a[i] = v, operator.truth(b) of a bool b is b (numba
types no other), the in-place forms (iadd...) are their operators on numbers; whether the
module is imported (`import operator`, `import operator as op`) or its functions
(`from operator import mul`). CI: each call has the type and the PTX of its operator, errors
are clear; the GPU compares a kernel's results with numpy and numba-cuda."""
import operator
import re
from operator import add, mul, getitem, not_, truth

import numpy as np
import pytest

import nbcuda as cuda
from test_compile import check_ptx


def with_operator(a, b):
    return operator.add(a, b) * operator.sub(a, b) + operator.truediv(a, b) + operator.pow(b, 2)


def with_symbols(a, b):
    return (a + b) * (a - b) + a / b + b ** 2


def bits_operator(a, b):
    return operator.xor(operator.and_(a, b), operator.or_(operator.lshift(a, 2),
                                                          operator.rshift(b, 1)))


def bits_symbols(a, b):
    return ((a & b) ^ ((a << 2) | (b >> 1)))


def compare_operator(a, b):
    return operator.lt(a, b) or operator.ge(a, b) and operator.ne(a, b)


def compare_symbols(a, b):
    return a < b or a >= b and a != b


def unary_operator(a):
    return operator.neg(a) + operator.invert(a) + operator.pos(a) + truth(a > 1) + not_(a)


def unary_symbols(a):
    return -a + ~a + +a + (a > 1) + (not a)


def strip_names(ptx):
    return re.sub(r"\b\w*(operator|symbols)\w*\b", "F", ptx)


@pytest.mark.parametrize("mine, theirs, sig", [
    (with_operator, with_symbols, "(int32, float32)"),
    (with_operator, with_symbols, "(float64, int8)"),
    (bits_operator, bits_symbols, "(int32, uint8)"),
    (compare_operator, compare_symbols, "(int64, float32)"),
    (unary_operator, unary_symbols, "(int16,)"),
])
def test_operator_functions_are_their_operators(mine, theirs, sig):
    p1, t1 = cuda.compile_ptx(mine, sig, device=True, cc=(9, 0))
    p2, t2 = cuda.compile_ptx(theirs, sig, device=True, cc=(9, 0))
    assert str(t1) == str(t2)
    assert strip_names(p1) == strip_names(p2)


def errors(a, b):
    return operator.add(a, b, 1)


def keyword(a, b):
    return operator.add(a, b=b)


def unknown(a, b):
    return operator.delitem(a, 0)


def store(a, b):
    return operator.setitem(a, 0, b)     # a[0] = b; the call is None


def truth_of_int(a):
    return truth(a)


def test_errors_are_clear():
    with pytest.raises(cuda.TypingError, match=r"operator.truth\(\) takes a bool in a kernel, "
                       "not int32"):
        cuda.compile_ptx(truth_of_int, "(int32,)", device=True, cc=(9, 0))
    with pytest.raises(cuda.TypingError, match=r"operator.add\(\) takes exactly 2 arguments "
                       r"\(3 given\)"):
        cuda.compile_ptx(errors, "(int32, int32)", device=True, cc=(9, 0))
    with pytest.raises(cuda.TypingError, match="takes no keyword arguments"):
        cuda.compile_ptx(keyword, "(int32, int32)", device=True, cc=(9, 0))
    with pytest.raises(cuda.CompileError, match="operator.delitem"):
        cuda.compile_ptx(unknown, "(float32[::1], float32)", device=True, cc=(9, 0))
    with pytest.raises(cuda.TypingError, match=r"operator.setitem\(\) takes exactly 3 arguments"):
        cuda.compile_ptx(lambda a: operator.setitem(a, 0), "(float32[::1],)", device=True,
                         cc=(9, 0))


def test_setitem_is_a_store(tmp_path):
    ptx, resty = cuda.compile_ptx(store, "(float32[::1], float64)", device=True, cc=(9, 0))
    assert str(resty) == "none"
    assert "st.f32" in ptx or "st.global.f32" in ptx


def kernel(out, x, y):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = add(x[i], y[i])
        out[i, 1] = mul(getitem(x, i), 3)
        out[i, 2] = operator.floordiv(x[i], y[i]) + operator.mod(x[i], y[i])
        out[i, 3] = operator.iadd(x[i], 1.5) - operator.itruediv(y[i], 2)
        out[i, 4] = operator.contains((1.0, 2.0, 3.0), x[i])
        out[i, 5] = operator.eq(x[i], y[i]) + 2 * truth(x[i] > y[i])
        operator.setitem(out, (i, 6), x[i] - y[i])


SIG = "void(float64[:, ::1], float64[::1], float64[::1])"


def test_kernel_compiles_and_ptxas_accepts(tmp_path):
    ptx, _ = cuda.compile_ptx(kernel, SIG, cc=(9, 0))
    check_ptx(ptx, tmp_path)


@pytest.mark.gpu
def test_kernel_matches_numpy_and_numba_cuda(gpu, tmp_path, monkeypatch):
    x = np.arange(1.0, 41.0) / 4
    y = np.linspace(0.5, 3.0, 40)
    y[3] = x[3]
    out = np.zeros((40, 7))
    cuda.jit(SIG)(kernel)[1, 64](out, x, y)
    np.testing.assert_allclose(out[:, 0], x + y)
    np.testing.assert_allclose(out[:, 1], x * 3)
    np.testing.assert_allclose(out[:, 2], x // y + x % y)
    np.testing.assert_allclose(out[:, 3], x + 1.5 - y / 2)
    np.testing.assert_array_equal(out[:, 4], np.isin(x, (1.0, 2.0, 3.0)))
    np.testing.assert_array_equal(out[:, 5], (x == y) + 2 * (x > y))
    np.testing.assert_array_equal(out[:, 6], x - y)

    ncuda = pytest.importorskip("numba.cuda")
    import inspect
    (tmp_path / "numba_operator_kernels.py").write_text(
        "import operator\nfrom operator import add, mul, getitem, truth\n"
        "from numba import cuda\n\n" + inspect.getsource(kernel))
    monkeypatch.syspath_prepend(str(tmp_path))
    import numba_operator_kernels as t
    theirs = np.zeros((40, 7))
    ncuda.jit(SIG)(t.kernel)[1, 64](theirs, x, y)
    np.testing.assert_array_equal(out, theirs)


def identity(out, x, y, k):
    # `is` as numba's generic_is: values of one type compare with ==, values of two types
    # (x[i] and the int32 k, anything and None) are never the same object
    i = cuda.grid(1)
    if i < x.size:
        out[i] = ((x[i] is None) + 2 * (x[i] is not None) + 4 * (x[i] is y[i]) +
                  8 * (x[i] is k) + 16 * operator.is_not(x[i], y[i]))


IDENTITY_SIG = "void(int64[::1], float64[::1], float64[::1], int32)"


def arrays_is(a, b):
    return a is b


def test_is_compiles_and_refuses_arrays(tmp_path):
    ptx, _ = cuda.compile_ptx(identity, IDENTITY_SIG, cc=(9, 0))
    check_ptx(ptx, tmp_path)
    with pytest.raises(cuda.CompileError, match="no default `is` implementation for array"):
        cuda.compile_ptx(arrays_is, "(float32[:], float32[:])", device=True, cc=(9, 0))


@pytest.mark.gpu
def test_is_matches_numba_cuda(gpu, tmp_path, monkeypatch):
    x = np.arange(8.0)
    y = np.where(np.arange(8) % 2 == 0, x, -1.0)
    out = np.zeros(8, np.int64)
    cuda.jit(IDENTITY_SIG)(identity)[1, 32](out, x, y, 3)
    np.testing.assert_array_equal(out, 2 + 4 * (x == y) + 16 * (x != y))
    ncuda = pytest.importorskip("numba.cuda")
    import inspect
    (tmp_path / "numba_identity_kernels.py").write_text(
        "import operator\nfrom numba import cuda\n\n" + inspect.getsource(identity))
    monkeypatch.syspath_prepend(str(tmp_path))
    import numba_identity_kernels as t
    theirs = np.zeros(8, np.int64)
    ncuda.jit(IDENTITY_SIG)(t.identity)[1, 32](theirs, x, y, 3)
    np.testing.assert_array_equal(out, theirs)
