"""More of numpy in kernels, as numba: a.fill(v) (numba's `a[:] = v`), a.transpose() (a.T) and
a.transpose(axes) (constant axes, as integers or a tuple; layout A as numba types it; numba-cuda
cannot lower it in a kernel),
and the bitwise ufuncs np.bitwise_and/or/xor, np.invert (np.bitwise_not), np.left_shift,
np.right_shift and np.conj/np.conjugate, typed by numpy's loops as numba types them (int32 &
int32 is int32, unlike the operator's int64). CI: every typing case gives numba-cuda 0.30.4's
answer (asked of it on this machine) and the kernel goes through ptxas; the GPU compares the
kernel with numpy and numba-cuda."""
import inspect

import numpy as np
import pytest

import nbcuda as cuda
from conftest import load_kernel_module
from test_compile import check_ptx


def band(a, b):
    return np.bitwise_and(a, b)


def bor(a, b):
    return np.bitwise_or(a, b) + 0 * np.bitwise_xor(a, b)


def lsh(a, b):
    return np.left_shift(a, b)


def rsh(a, b):
    return np.right_shift(a, b)


def inv(a):
    return np.invert(a)


def bnot(a):
    return np.bitwise_not(a)


def conj(a):
    return np.conj(a)


def conjugate(a):
    return np.conjugate(a)


# (function, signature, numba-cuda's return type or None where it refuses the types)
TYPING = [
    (band, "(int32, int32)", "int32"), (band, "(int32, int64)", "int64"),
    (band, "(boolean, boolean)", "bool"), (band, "(uint32, int32)", "int64"),
    (band, "(int8, uint8)", "int16"), (band, "(uint64, int64)", None),
    (band, "(float32, int32)", None), (bor, "(int16, int16)", "int64"),
    (lsh, "(int8, int8)", "int8"), (lsh, "(boolean, int32)", "int32"),
    (lsh, "(uint16, uint8)", "uint16"), (rsh, "(int32, int32)", "int32"),
    (rsh, "(uint64, uint64)", "uint64"), (inv, "(boolean,)", "bool"), (inv, "(uint8,)", "uint8"),
    (inv, "(int64,)", "int64"), (bnot, "(int32,)", "int32"), (inv, "(float32,)", None),
    (conj, "(complex64,)", "complex64"), (conj, "(complex128,)", "complex128"),
    (conj, "(int32,)", "int32"), (conj, "(boolean,)", "int8"), (conj, "(float32,)", "float32"),
    (conjugate, "(uint16,)", "uint16"),
]


@pytest.mark.parametrize("func, sig, want", TYPING)
def test_ufunc_types_are_numbas(func, sig, want):
    if want is None:
        with pytest.raises(cuda.TypingError):
            cuda.compile_ptx(func, sig, device=True, cc=(9, 0))
        return
    _, resty = cuda.compile_ptx(func, sig, device=True, cc=(9, 0))
    assert str(resty) == want


def kernel(out, a, m, z):
    i = cuda.grid(1)
    if i == 0:
        a.fill(3)                 # an int32 array filled with an int
        m[1].fill(2.5)            # a row view of a 2-d array
    cuda.syncthreads()
    t = m.transpose()
    if i < 8:
        x = np.int32(i * 37 - 100)
        out[i, 0] = np.bitwise_and(x, np.int32(0x5a)) + np.bitwise_or(x, np.int8(3))
        out[i, 1] = np.bitwise_xor(x, np.int32(-1)) + np.invert(np.uint8(i))
        out[i, 2] = np.left_shift(x, np.int32(i)) + np.right_shift(x, np.int32(i % 3))
        out[i, 3] = np.right_shift(np.uint16(60000 + i), np.uint16(i)) + np.invert(i > 3)
        out[i, 4] = t[i % 3, 1] + a[i]
        out[i, 5] = np.conj(z[i]).imag + np.conjugate(np.float32(i)) + np.conj(z[i]).real


SIG = "void(float64[:, ::1], int32[::1], float64[:, ::1], complex128[::1])"


def expected(m, z):
    out = np.zeros((8, 6))
    a = np.full(8, 3, np.int32)
    m = m.copy()
    m[1] = 2.5
    for i in range(8):
        x = np.int32(i * 37 - 100)
        out[i, 0] = np.bitwise_and(x, np.int32(0x5a)) + np.bitwise_or(x, np.int8(3))
        out[i, 1] = np.bitwise_xor(x, np.int32(-1)) + np.invert(np.uint8(i))
        out[i, 2] = np.left_shift(x, np.int32(i)) + np.right_shift(x, np.int32(i % 3))
        out[i, 3] = np.right_shift(np.uint16(60000 + i), np.uint16(i)) + np.invert(i > 3)
        out[i, 4] = m.T[i % 3, 1] + a[i]
        out[i, 5] = np.conj(z[i]).imag + np.conjugate(np.float32(i)) + np.conj(z[i]).real
    return out, a, m


def inputs():
    m = np.arange(12.0).reshape(4, 3)
    z = np.arange(8) + 1j * np.arange(8, 0, -1)
    return m, z


def test_kernel_compiles_and_ptxas_accepts(tmp_path):
    ptx, _ = cuda.compile_ptx(kernel, SIG, cc=(9, 0))
    check_ptx(ptx, tmp_path)


def transpose_repeated(a):
    return a.transpose((1, 1))[0, 0]


def transpose_out_of_bounds(a):
    return a.transpose(0, 2)[0, 0]


def permuted(out, a):
    t = a.transpose(2, 0, 1)
    u = a.transpose((1, -1, 0))
    for i in range(t.shape[0]):
        for j in range(t.shape[1]):
            for k in range(t.shape[2]):
                out[i, j, k] = t[i, j, k] + u[k, i, j] * 1000


PERMUTED_SIG = "void(float64[:, :, ::1], float64[:, :, ::1])"


def permuted_expected(a):
    t = a.transpose(2, 0, 1)
    u = a.transpose((1, -1, 0))
    out = np.zeros(t.shape)
    for i in range(t.shape[0]):
        for j in range(t.shape[1]):
            for k in range(t.shape[2]):
                out[i, j, k] = t[i, j, k] + u[k, i, j] * 1000
    return out


def test_transpose_types_are_numbas():
    _, resty = cuda.compile_ptx(lambda a: a.transpose(1, 0)[0, 0], "(float32[:, ::1],)",
                                device=True, cc=(9, 0))
    assert str(resty) == "float32"
    ptx, _ = cuda.compile_ptx(permuted, PERMUTED_SIG, cc=(9, 0))
    assert ptx


def fill_with_array(a):
    a.fill(a)


@pytest.mark.parametrize("func, message", [
    (transpose_repeated, r"ValueError: repeated axis in transpose"),
    (transpose_out_of_bounds, r"ValueError: axis is out of bounds"),
    (fill_with_array, r"Cannot convert array\(float32, 2d, C\) to float32 in fill\(\)"),
])
def test_misuse_is_a_clear_error(func, message):
    with pytest.raises(cuda.CompileError, match=message):
        cuda.compile_ptx(func, "(float32[:, ::1],)", device=True, cc=(9, 0))


@pytest.mark.gpu
def test_permuted_views_match_numpy(gpu):
    # numba-cuda 0.30.4 types a.transpose(axes) but cannot lower it in a kernel (its
    # permute_arrays calls set(), "Untyped global name 'set'"): compared with numpy only
    a = np.arange(24.0).reshape(2, 3, 4)
    out = np.zeros((4, 2, 3))
    cuda.jit(PERMUTED_SIG)(permuted)[1, 1](out, a)
    np.testing.assert_array_equal(out, permuted_expected(a))


@pytest.mark.gpu
def test_kernel_matches_numpy_and_numba_cuda(gpu, tmp_path):
    m, z = inputs()
    want, want_a, want_m = expected(m, z)
    out, a, mine_m = np.full((8, 6), np.nan), np.zeros(8, np.int32), m.copy()
    cuda.jit(SIG)(kernel)[1, 32](out, a, mine_m, z)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(a, want_a)
    np.testing.assert_array_equal(mine_m, want_m)

    ncuda = pytest.importorskip("numba.cuda")
    t = load_kernel_module(tmp_path, "numba_array_method_kernels",
                           "import numpy as np\n\n" + inspect.getsource(kernel), ncuda)
    theirs, their_a, their_m = np.full((8, 6), np.nan), np.zeros(8, np.int32), m.copy()
    ncuda.jit(SIG)(t.kernel)[1, 32](theirs, their_a, their_m, z)
    np.testing.assert_array_equal(out, theirs)
    np.testing.assert_array_equal(a, their_a)
    np.testing.assert_array_equal(mine_m, their_m)
