"""Complex numbers in kernels, as numba-cuda computes them: complex64/complex128 scalars,
arrays and parameters, + - * / (numba's complex_div; a zero divisor ends the thread, as
numba's ZeroDivisionError does in a kernel), ** and pow() (numba-cuda's cpow_internal),
== !=, unary minus, abs, .real, .imag (of arrays too: views of their memory), .conjugate(),
complex(re, im) and 1j literals, with
numba's result types (asked of numba-cuda 0.30 for each row below). Without a GPU the PTX goes through ptxas; on the GPU
results are compared with numpy and, bit for bit, with numba-cuda."""
import inspect

import numpy as np
import pytest

import nbcuda as cuda

from test_compile import check_ptx


def make1(a):
    return complex(a)


def make2(a, b):
    return complex(a, b)


def parts(a):
    return a.real, a.imag, a.conjugate()


@pytest.mark.parametrize("fn, sig, numba_says", [
    (make1, "(float32,)", "complex64"), (make1, "(float64,)", "complex128"),
    (make1, "(int32,)", "complex128"), (make1, "(uint8,)", "complex128"),
    (make1, "(complex64,)", "complex128"), (make2, "(float32, float32)", "complex64"),
    (make2, "(float32, int32)", "complex128"), (make2, "(int8, int8)", "complex128"),
    (make2, "(float32, float64)", "complex128"),
    (parts, "(float32,)", "UniTuple(float32 x 3)"), (parts, "(int32,)", "UniTuple(int32 x 3)"),
    (parts, "(complex64,)", "Tuple(float32, float32, complex64)"),
])
def test_types_are_numbas(fn, sig, numba_says):
    assert str(cuda.compile_ptx(fn, sig, device=True, cc=(9, 0))[1]) == numba_says


@pytest.mark.parametrize("fn, sig", [
    (make1, "(float16,)"), (make1, "(boolean,)"), (make2, "(complex64, float32)"),
    (parts, "(boolean,)"),
])
def test_what_numba_refuses_is_refused(fn, sig):
    with pytest.raises(cuda.TypingError):
        cuda.compile_ptx(fn, sig, device=True, cc=(9, 0))


def power(a, b):
    return a ** b


@pytest.mark.parametrize("sig, numba_says", [
    ("(complex64, complex64)", "complex64"), ("(complex64, complex128)", "complex128"),
    ("(complex64, int64)", "complex128"), ("(complex64, float32)", "complex64"),
    ("(complex64, int8)", "complex64"), ("(float32, complex64)", "complex64"),
    ("(int32, complex64)", "complex128"), ("(float64, complex64)", "complex128"),
    ("(complex128, boolean)", "complex128"),
])
def test_power_types_are_numbas(sig, numba_says, tmp_path):
    ptx, resty = cuda.compile_ptx(power, sig, device=True, cc=(9, 0))
    assert str(resty) == numba_says
    check_ptx(ptx, tmp_path)


def complex_power(out, a, b, k):
    i = cuda.grid(1)
    if i < a.size:
        out[i, 0] = a[i] ** b[i]
        out[i, 1] = a[i] ** 2
        out[i, 2] = a[i] ** k
        out[i, 3] = pow(a[i], 0.5)
        out[i, 4] = 2 ** a[i]
        x = b[i]
        x **= a[i]
        out[i, 5] = x


def complex_ops(out, mag, eq, a, b, s):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i]
        out[i, 0] = x + y
        out[i, 1] = x - y * s
        out[i, 2] = x * y
        out[i, 3] = -x + 2j
        out[i, 4] = x.conjugate() + complex(x.imag, y.real)
        mag[i] = abs(x)
        eq[i] = (x == y) + 2 * (x != y)
        out[i, 5] = x / y  # last: a zero y ends the thread here


@pytest.mark.parametrize("ct", ["complex64", "complex128"])
def test_kernels_compile_and_ptxas_accepts(ct, tmp_path):
    ft = "float32" if ct == "complex64" else "float64"
    sig = f"void({ct}[:, ::1], {ft}[::1], int32[::1], {ct}[::1], {ct}[::1], {ct})"
    ptx, _ = cuda.compile_ptx(complex_ops, sig, cc=(9, 0))
    assert "exit;" in ptx  # the zero-divisor path
    check_ptx(ptx, tmp_path)


def power_inputs(dt, n=1000):
    rng = np.random.default_rng(12)
    a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
    b = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
    b[1] = 0              # x ** 0 is 1
    a[2], b[2] = 0, 2j    # numba-cuda: a.real == 0 and b.real == 0 gives 0
    a[3], b[3] = 0, 1.5   # 0 ** 1.5 by the general formula
    b[4] = 3              # a real exponent
    return a, b


@pytest.mark.parametrize("ct", ["complex64", "complex128"])
def test_power_kernel_compiles_and_ptxas_accepts(ct, tmp_path):
    sig = f"void({ct}[:, ::1], {ct}[::1], {ct}[::1], int32)"
    ptx, _ = cuda.compile_ptx(complex_power, sig, cc=(9, 0))
    check_ptx(ptx, tmp_path)
    fast, _ = cuda.compile_ptx(complex_power, sig, cc=(9, 0), fastmath=True)
    # __nv_fast_sinf and the like for float32 only, as numba-cuda's fastmath
    assert ("sin.approx.ftz.f32" in fast) == (ct == "complex64")


@pytest.mark.gpu
@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_power_matches_numpy_and_numba_cuda(gpu, dt, tmp_path, monkeypatch):
    a, b = power_inputs(dt)
    n, ct = a.size, np.dtype(dt).name
    sig = f"void({ct}[:, ::1], {ct}[::1], {ct}[::1], int32)"

    def run(cuda_mod, kernel_fn):
        out = np.zeros((n, 6), dt)
        cuda_mod.jit(sig)(kernel_fn).forall(n)(out, a, b, 3)
        return out

    out = run(cuda, complex_power)
    tol = dict(rtol=2e-4, atol=2e-5) if dt == np.complex64 else dict(rtol=1e-11, atol=1e-12)
    wide = a.astype(np.complex128)
    with np.errstate(all="ignore"):
        general = np.ones(n, bool)
        general[2] = False  # numba-cuda's zero, numpy's nan
        np.testing.assert_allclose(out[general, 0], (a ** b)[general], **tol)
        np.testing.assert_allclose(out[:, 1], wide ** 2, **tol)
        np.testing.assert_allclose(out[:, 2], wide ** 3, **tol)
        np.testing.assert_allclose(out[:, 3], wide ** 0.5, **tol)
        np.testing.assert_allclose(out[:, 4], 2 ** wide, **tol)
        # 0 ** a[1]: log(0) makes numba-cuda's phase infinite (nan), numpy's 0
        general[1] = False
        np.testing.assert_allclose(out[general, 5], (b ** a)[general], **tol)
    assert out[1, 0] == 1 and out[2, 0] == 0

    ncuda = pytest.importorskip("numba.cuda")
    (tmp_path / "numba_power_kernels.py").write_text(
        "from numba import cuda\n\n" + inspect.getsource(complex_power))
    monkeypatch.syspath_prepend(str(tmp_path))
    import numba_power_kernels as t
    np.testing.assert_array_equal(out, run(ncuda, t.complex_power))


def inputs(dt, n=1000):
    rng = np.random.default_rng(11)
    a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
    b = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
    b[::7] = a[::7]       # equal pairs
    b[3] = 0              # a zero divisor: that thread stops at the division
    b[5] = complex(0, 2)  # |imag| > |real|: the other branch
    b[6] = complex(np.nan, 1)
    return a, b


@pytest.mark.gpu
@pytest.mark.parametrize("dt, ft", [(np.complex64, np.float32), (np.complex128, np.float64)])
def test_results_match_numpy_and_numba_cuda(gpu, dt, ft, tmp_path, monkeypatch):
    a, b = inputs(dt)
    n = a.size
    s = dt(1.5 - 0.5j)
    ct, fts = np.dtype(dt).name, np.dtype(ft).name
    sig = f"void({ct}[:, ::1], {fts}[::1], int32[::1], {ct}[::1], {ct}[::1], {ct})"

    def run(cuda_mod, kernel_fn):
        out = np.full((n, 6), 77 + 77j, dt)
        mag = np.zeros(n, ft)
        eq = np.zeros(n, np.int32)
        cuda_mod.jit(sig)(kernel_fn).forall(n)(out, mag, eq, a, b, s)
        return out, mag, eq

    out, mag, eq = run(cuda, complex_ops)
    tol = dict(rtol=1e-5, atol=1e-5) if dt == np.complex64 else dict(rtol=1e-12, atol=1e-12)
    ok = np.ones(n, bool)
    ok[3] = False
    np.testing.assert_allclose(out[:, 0], a + b, **tol)
    np.testing.assert_allclose(out[:, 1], a - b * s, **tol)
    np.testing.assert_allclose(out[:, 2], a * b, **tol)
    np.testing.assert_allclose(out[:, 3], -a + 2j, **tol)
    np.testing.assert_allclose(out[:, 4], np.conj(a) + (a.imag + 1j * b.real), **tol)
    np.testing.assert_allclose(mag, np.abs(a), **tol)
    np.testing.assert_array_equal(eq, np.where(a == b, 1, 2))
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(out[ok, 5], (a / b)[ok], **tol)
    assert out[3, 5] == 77 + 77j  # the zero divisor: the thread ended before the store

    ncuda = pytest.importorskip("numba.cuda")
    (tmp_path / "numba_complex_kernels.py").write_text(
        "from numba import cuda\n\n" + inspect.getsource(complex_ops))
    monkeypatch.syspath_prepend(str(tmp_path))
    import numba_complex_kernels as t
    t_out, t_mag, t_eq = run(ncuda, t.complex_ops)
    np.testing.assert_array_equal(out, t_out)
    np.testing.assert_array_equal(mag, t_mag)
    np.testing.assert_array_equal(eq, t_eq)


def array_parts(values, re_out, im_out, sizes):
    # numba's array_real_part / array_imag_part: views of a complex array's memory
    i = cuda.grid(1)
    if i < values.shape[0]:
        re_out[i] = values.real[i]
        im_out[i] = values.imag[i]
        values.imag[i] = values.real[i] * 2
        cuda.atomic.add(values.real, i, 1)
        if i == 0:
            r = values.real
            sizes[0] = r.itemsize
            sizes[1] = r.strides[0]
            sizes[2] = r.size


def real_array_parts(a, out):
    # a real array is its own real part
    i = cuda.grid(1)
    if i < a.shape[0]:
        a.real[i] = a[i] + 1
        out[i] = a.real[i]


def imag_of_real_array(a):
    b = a.imag
    b[0] = 1


@pytest.mark.parametrize("ct", ["complex64", "complex128"])
def test_array_parts_compile_and_ptxas_accepts(ct, tmp_path):
    ft = "float32" if ct == "complex64" else "float64"
    sig = f"void({ct}[:], {ft}[::1], {ft}[::1], int64[::1])"
    ptx, _ = cuda.compile_ptx(array_parts, sig, cc=(9, 0))
    check_ptx(ptx, tmp_path)
    assert f"atom.global.add.f{ft[-2:]}" in ptx

    def view_types(a):
        return a.real, a.imag

    for layout in ("[::1]", "[:, ::1]", "[::1, :]"):
        res = cuda.compile_ptx(view_types, f"({ct}{layout},)", device=True, cc=(9, 0))[1]
        nd = 1 if layout == "[::1]" else 2
        assert str(res) == f"UniTuple(array({ft}, {nd}d, A) x 2)"  # numba's types
    ptx, _ = cuda.compile_ptx(real_array_parts, "void(float32[::1], float32[::1])", cc=(9, 0))
    check_ptx(ptx, tmp_path)


def test_imaginary_part_of_real_array_is_refused():
    with pytest.raises(cuda.TypingError, match="imaginary part of array.float32, 1d, C. would "
                       "be a new array of zeros"):
        cuda.compile_ptx(imag_of_real_array, "void(float32[::1])", cc=(9, 0))


@pytest.mark.gpu
@pytest.mark.parametrize("dt, ft", [(np.complex64, np.float32), (np.complex128, np.float64)])
def test_array_parts_match_numpy_and_numba_cuda(gpu, dt, ft, tmp_path, monkeypatch):
    a, _ = inputs(dt)
    n, ct, fts = a.size, np.dtype(dt).name, np.dtype(ft).name
    sig = f"void({ct}[:], {fts}[::1], {fts}[::1], int64[::1])"

    def run(cuda_mod, kernel_fn):
        values = cuda_mod.to_device(a)
        re_out, im_out = np.zeros(n, ft), np.zeros(n, ft)
        sizes = np.zeros(3, np.int64)
        cuda_mod.jit(sig)(kernel_fn).forall(n)(values, re_out, im_out, sizes)
        return values.copy_to_host(), re_out, im_out, sizes

    got = run(cuda, array_parts)
    np.testing.assert_array_equal(got[1], a.real)
    np.testing.assert_array_equal(got[2], a.imag)
    want = (a.real + 1) + 1j * (a.real * 2)
    np.testing.assert_array_equal(got[0], want.astype(dt))
    isz = np.dtype(ft).itemsize
    np.testing.assert_array_equal(got[3], [isz, 2 * isz, n])

    ncuda = pytest.importorskip("numba.cuda")
    (tmp_path / "numba_array_parts.py").write_text(
        "from numba import cuda\n\n" + inspect.getsource(array_parts))
    monkeypatch.syspath_prepend(str(tmp_path))
    import numba_array_parts as t
    for mine, theirs in zip(got, run(ncuda, t.array_parts)):
        np.testing.assert_array_equal(mine, theirs)
