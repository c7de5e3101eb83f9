"""An array's dtype in kernels, as numba: `cuda.local.array(n, a.dtype)`,
`cuda.shared.array(n, dtype=a.dtype)`, `a.dtype.type(x)` converting as the dtype does (a.dtype
itself is not callable, as in numba), and a dtype or class bound to a name (`d = a.dtype`,
`f = np.float32`, then `d.type(x)`, `f(x)`), so one kernel serves every dtype it is compiled
for; `np.dtype("f4")` / `np.dtype(np.int64)` (numpy's names, type codes and dates) as such a
dtype. CI: the kernel compiles per dtype and ptxas accepts it; the
GPU compares it with numpy and numba-cuda."""
import inspect

import numpy as np
import pytest

import nbcuda as cuda
from conftest import load_kernel_module
from test_compile import check_ptx


def generic(out, a):
    i = cuda.grid(1)
    tmp = cuda.local.array(2, a.dtype)
    buf = cuda.shared.array(64, dtype=a.dtype)
    d = a.dtype
    f = np.float32
    if i < a.size:
        buf[i] = a[i]
        tmp[0] = a[i] * d.type(3)
        tmp[1] = a.dtype.type(7.9)
        out[i, 0] = tmp[0]
        out[i, 1] = tmp[1] + buf[i]
        out[i, 2] = d.type(a[i]) / d.type(2)
        out[i, 3] = f(a[i]) * f(0.5)


SIGS = ["void(float64[:, ::1], int32[::1])", "void(float64[:, ::1], float32[::1])",
        "void(float64[:, ::1], uint8[::1])"]


def expected(a):
    t = a.dtype.type
    out = np.zeros((a.size, 4))
    out[:, 0] = (a * t(3)).astype(a.dtype)
    out[:, 1] = t(7.9) + a if a.dtype.kind == "f" else (t(7) + a).astype(a.dtype)
    out[:, 2] = a / t(2)
    out[:, 3] = a.astype(np.float32) * np.float32(0.5)
    return out


@pytest.mark.parametrize("sig", SIGS)
def test_kernel_compiles_per_dtype(sig, tmp_path):
    ptx, _ = cuda.compile_ptx(generic, sig, cc=(9, 0))
    check_ptx(ptx, tmp_path)


def call_dtype(a):
    return a.dtype(1)


def test_dtype_is_not_callable():
    with pytest.raises(cuda.TypingError, match=r"No type info available for dtype\(int32\) as a "
                       "callable"):
        cuda.compile_ptx(call_dtype, "(int32[::1],)", device=True, cc=(9, 0))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype, sig", list(zip((np.int32, np.float32, np.uint8), SIGS)))
def test_kernel_matches_numpy_and_numba_cuda(gpu, dtype, sig, tmp_path):
    a = (np.arange(40) % 9 + 1).astype(dtype)
    out = np.full((40, 4), np.nan)
    cuda.jit(sig)(generic)[1, 64](out, a)
    np.testing.assert_allclose(out, expected(a), rtol=1e-7)

    ncuda = pytest.importorskip("numba.cuda")
    t = load_kernel_module(tmp_path, "numba_dtype_kernels",
                           "import numpy as np\n\n" + inspect.getsource(generic), ncuda)
    theirs = np.full((40, 4), np.nan)
    ncuda.jit(sig)(t.generic)[1, 64](theirs, a)
    np.testing.assert_array_equal(out, theirs)


def by_numpy_dtype(out, a):
    # np.dtype(...) of a string literal or a type, as a dtype argument
    i = cuda.grid(1)
    f8 = cuda.local.array(2, np.dtype("float64"))
    i4 = cuda.shared.array(64, dtype=np.dtype("<i4"))
    d = np.dtype(np.float32)
    f4 = cuda.local.array(1, d)
    if i < a.size:
        i4[i] = a[i]
        f8[0] = a[i] * 0.5
        f4[0] = a[i] / 3
        out[i, 0] = f8[0]
        out[i, 1] = i4[i] * 2
        out[i, 2] = f4[0]
    if i == 0:
        bits = out.view(np.dtype("i8"))  # a view by a type code
        bits[a.size, 3] = 7


def bad_dtype(a):
    return cuda.local.array(2, np.dtype("float128"))


def test_numpy_dtype_calls_compile_and_refuse_what_kernels_lack(tmp_path):
    ptx, _ = cuda.compile_ptx(by_numpy_dtype, "void(float64[:, ::1], int32[::1])", cc=(9, 0))
    check_ptx(ptx, tmp_path)
    with pytest.raises(cuda.TypingError, match=r"numpy.dtype\('float128'\): not a type kernels "
                                               "have"):
        cuda.compile_ptx(bad_dtype, "(int32[::1],)", device=True, cc=(9, 0))


@pytest.mark.gpu
def test_numpy_dtype_kernel_matches_numpy_and_numba_cuda(gpu, tmp_path):
    a = (np.arange(40) % 9 + 1).astype(np.int32)
    out = np.zeros((41, 4))
    cuda.jit(by_numpy_dtype)[1, 64](out, a)
    want = np.zeros((41, 4))
    want[:40, 0] = a * 0.5
    want[:40, 1] = a * 2
    want[:40, 2] = (a / 3).astype(np.float32)
    want.view(np.int64)[40, 3] = 7
    np.testing.assert_array_equal(out, want)

    ncuda = pytest.importorskip("numba.cuda")
    t = load_kernel_module(tmp_path, "numba_np_dtype_kernels",
                           "import numpy as np\n\n" + inspect.getsource(by_numpy_dtype), ncuda)
    theirs = np.zeros((41, 4))
    ncuda.jit(t.by_numpy_dtype)[1, 64](theirs, a)
    np.testing.assert_array_equal(out, theirs)
