"""Array views inside kernels — basic indexing with slices or fewer indices than dimensions
(`a[i]`, `a[:, j]`, `x[start:stop:step]`, `m[b, :, 1:]`), `a.T`, `a.reshape()` and `a.view(dtype)`,
as numba compiles them: Python's
slice semantics (negative and out-of-range bounds, negative steps), the views' types are
numba's (tests/c/test_infer.c checks them row by row against numba-cuda's answers). Without a
GPU the PTX goes through ptxas; on the GPU every view is compared with numpy's and numba-cuda's."""
import inspect
import itertools

import numpy as np
import pytest

import nbcuda as cuda

from test_compile import check_ptx


def slice_run(out, size, x, start, stop, step):
    v = x[start:stop:step]
    size[0] = len(v)
    for k in range(v.size):
        out[k] = v[k]


def slice_open(out, x, n):
    a = x[n:]
    b = x[:n]
    c = x[::-1]
    d = x[::n]
    out[0] = a[0] + b[b.size - 1] * 10 + c[0] * 100 + d[1] * 1000 + len(d) * 10000


def rows_and_columns(rsum, csum, a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        row = a[i]
        s = 0.0
        for j in range(row.size):
            s += row[j]
        rsum[i] = s
    if i < a.shape[1]:
        col = a[:, i]
        s = 0.0
        for j in range(col.shape[0]):
            s += col[j]
        csum[i] = s


def total(v):
    s = 0.0
    for j in range(v.shape[0]):
        s += v[j]
    return s


def cube(out, m, b):
    p = m[b, :, 1:]           # 2-d, A
    q = m[b][1]               # a view of a view: 1-d, C
    r = m[:, b, ::2][1]       # 1-d, A
    out[0] = p[1, 0] + q[2] * 10 + r[1] * 100 + total(m[b, 0]) * 1000 + p.shape[1] * 1e6


SLICE_SIG = "void(float64[::1], int64[::1], float64[::1], int64, int64, int64)"


def test_views_compile_and_ptxas_accepts(tmp_path):
    for fn, sig in ((slice_run, SLICE_SIG),
                    (slice_open, "void(float64[::1], float64[::1], int64)"),
                    (rows_and_columns, "void(float64[::1], float64[::1], float64[:, ::1])"),
                    (cube, "void(float64[::1], float64[:, :, ::1], int64)")):
        ptx, _ = cuda.compile_ptx(fn, sig, cc=(9, 0))
        check_ptx(ptx, tmp_path)


def fill(a, m, v):
    a[2:7:2] = v        # a number fills the view, as numba's setitem of a scalar
    m[1, :] = 2 * v
    m[:, ::3] = -1


def test_a_number_fills_a_view_an_array_is_refused(tmp_path):
    ptx, _ = cuda.compile_ptx(fill, "void(float64[::1], int32[:, ::1], float64)", cc=(9, 0))
    check_ptx(ptx, tmp_path)

    def copy(x):
        x[1:3] = x[0:2]
    with pytest.raises(cuda.TypingError, match="assigning array.* to an array slice is not "
                                               "supported"):
        cuda.compile_ptx(copy, "void(float64[::1])", cc=(9, 0))


BOUNDS = [-12, -10, -3, -1, 0, 1, 3, 9, 10, 11]
STEPS = [-4, -1, 1, 2, 3, 0]


@pytest.mark.gpu
def test_views_read_what_numpy_reads(gpu, tmp_path, monkeypatch):
    x = np.arange(10, dtype=np.float64) + 0.5
    k = cuda.jit(SLICE_SIG)(slice_run)
    dx = cuda.to_device(x)
    d_out, d_size = cuda.device_array(10), cuda.device_array(1, np.int64)
    cases = list(itertools.product(BOUNDS, BOUNDS, STEPS))
    got = {}
    for start, stop, step in cases:
        k[1, 1](d_out, d_size, dx, start, stop, step)
        n = int(d_size.copy_to_host()[0])
        got[start, stop, step] = d_out.copy_to_host()[:n]
        expect = x[start:stop:step] if step else x[0:0]  # step 0: an empty view, no error
        np.testing.assert_array_equal(got[start, stop, step], expect,
                                      err_msg=f"x[{start}:{stop}:{step}]")

    out = np.zeros(1)
    cuda.jit("void(float64[::1], float64[::1], int64)")(slice_open)[1, 1](out, x, 3)
    assert out[0] == x[3:][0] + x[:3][-1] * 10 + x[::-1][0] * 100 + x[::3][1] * 1000 + 4 * 10000

    a = np.arange(35, dtype=np.float64).reshape(5, 7)
    rsum, csum = np.zeros(5), np.zeros(7)
    cuda.jit("void(float64[::1], float64[::1], float64[:, ::1])")(rows_and_columns)[1, 8](
        rsum, csum, a)
    np.testing.assert_array_equal(rsum, a.sum(axis=1))
    np.testing.assert_array_equal(csum, a.sum(axis=0))

    m = np.arange(60, dtype=np.float64).reshape(3, 4, 5)
    out = np.zeros(1)
    cuda.jit("void(float64[::1], float64[:, :, ::1], int64)")(cube)[1, 1](out, m, 2)
    b = 2
    assert out[0] == (m[b, :, 1:][1, 0] + m[b][1][2] * 10 + m[:, b, ::2][1][1] * 100 +
                      m[b, 0].sum() * 1000 + 4 * 1e6)

    a, mm = np.zeros(10), np.zeros((3, 7), np.int32)
    cuda.jit("void(float64[::1], int32[:, ::1], float64)")(fill)[1, 1](a, mm, 2.5)
    ea, em = np.zeros(10), np.zeros((3, 7), np.int32)
    ea[2:7:2] = 2.5
    em[1, :] = 5
    em[:, ::3] = -1
    np.testing.assert_array_equal(a, ea)
    np.testing.assert_array_equal(mm, em)

    ncuda = pytest.importorskip("numba.cuda")
    (tmp_path / "numba_view_kernels.py").write_text(
        "from numba import cuda\n\n" + inspect.getsource(slice_run) + "\n\n" +
        inspect.getsource(fill))
    monkeypatch.syspath_prepend(str(tmp_path))
    import numba_view_kernels as t
    theirs = ncuda.jit(SLICE_SIG)(t.slice_run)
    n_out, n_size = ncuda.device_array(10), ncuda.device_array(1, np.int64)
    n_x = ncuda.to_device(x)
    for start, stop, step in cases:
        if step == 0:
            continue  # numba raises for a zero step (in its debug mode) or leaves it undefined
        theirs[1, 1](n_out, n_size, n_x, start, stop, step)
        n = int(n_size.copy_to_host()[0])
        np.testing.assert_array_equal(n_out.copy_to_host()[:n], got[start, stop, step])
    ta, tm = np.zeros(10), np.zeros((3, 7), np.int32)
    ncuda.jit("void(float64[::1], int32[:, ::1], float64)")(t.fill)[1, 1](ta, tm, 2.5)
    np.testing.assert_array_equal(ta, a)
    np.testing.assert_array_equal(tm, mm)


def transposed(out, a):
    t = a.T
    i, j = cuda.grid(2)
    if i < t.shape[0] and j < t.shape[1]:
        out[i, j] = t[i, j] * 10 + t.strides[0] // 8
        if i == 1 and j == 0:
            t[1, 0] = -1.0  # after this thread's read: writes through to a[0, 1]


@pytest.mark.parametrize("sig, numba_says", [
    ("(float64[:, ::1],)", "array(float64, 2d, F)"),
    ("(float64[::1, :],)", "array(float64, 2d, C)"),
    ("(float64[:, :],)", "array(float64, 2d, A)"), ("(float32[::1],)", "array(float32, 1d, C)"),
    ("(int8[:, :, ::1],)", "array(int8, 3d, F)"),
])
def test_transpose_types_are_numbas(sig, numba_says):
    def t(a):
        return a.T
    assert str(cuda.compile_ptx(t, sig, device=True, cc=(9, 0))[1]) == numba_says


@pytest.mark.gpu
def test_transpose_matches_numpy_and_numba_cuda(gpu, tmp_path, monkeypatch):
    def run(cuda_mod, kernel):
        a = np.arange(12.0).reshape(3, 4)
        out = np.zeros((4, 3))
        cuda_mod.jit("void(float64[:, ::1], float64[:, ::1])")(kernel)[(1, 1), (8, 8)](out, a)
        return out, a

    out, a = run(cuda, transposed)
    want = np.arange(12.0).reshape(3, 4).T * 10 + 1  # a.T's first stride: 8 bytes
    np.testing.assert_array_equal(out, want)
    assert a[0, 1] == -1.0
    ncuda = pytest.importorskip("numba.cuda")
    (tmp_path / "numba_transpose_kernels.py").write_text(
        "from numba import cuda\n\n" + inspect.getsource(transposed))
    monkeypatch.syspath_prepend(str(tmp_path))
    import numba_transpose_kernels as t
    theirs, theirs_a = run(ncuda, t.transposed)
    np.testing.assert_array_equal(out, theirs)
    np.testing.assert_array_equal(a, theirs_a)


def reshaped(out, a, n):
    # numba's array_reshape: a tuple or integers, one -1 inferred; a bad size raises
    # ValueError, which ends the thread
    b = a.reshape((n, -1))
    c = a.reshape(a.size)
    i = cuda.grid(1)
    if i < b.shape[0]:
        out[i, 0] = b[i, b.shape[1] - 1] + c[i]
        out[i, 1] = b.shape[1] * 100 + b.strides[0]
    if i == b.shape[0]:
        d = a.reshape(5, -1)  # 12 elements: not a multiple of 5
        out[0, 2] = d[0, 0]


def reshape_tuple(a):
    return a.reshape((2, 3, 2))


def reshape_args(a):
    return a.reshape(2, 6)


def reshape_float(a):
    return a.reshape(2.0, 6)


@pytest.mark.parametrize("fn, sig, numba_says", [
    (reshape_tuple, "(float64[:, ::1],)", "array(float64, 3d, C)"),
    (reshape_tuple, "(int8[::1, :],)", "array(int8, 3d, F)"),
    (reshape_args, "(float32[::1],)", "array(float32, 2d, C)"),
])
def test_reshape_types_are_numbas(fn, sig, numba_says):
    assert str(cuda.compile_ptx(fn, sig, device=True, cc=(9, 0))[1]) == numba_says


def test_reshape_refuses_what_numba_refuses(tmp_path):
    with pytest.raises(cuda.TypingError, match=r"reshape\(\) supports contiguous array only"):
        cuda.compile_ptx(reshape_args, "(float32[:],)", device=True, cc=(9, 0))
    with pytest.raises(cuda.TypingError, match=r"reshape\(\) arg cannot be float64"):
        cuda.compile_ptx(reshape_float, "(float32[::1],)", device=True, cc=(9, 0))
    ptx, _ = cuda.compile_ptx(reshaped, "void(float64[:, ::1], float64[:, ::1], int64)",
                              cc=(9, 0))
    check_ptx(ptx, tmp_path)


@pytest.mark.gpu
def test_reshape_matches_numpy_and_numba_cuda(gpu, tmp_path, monkeypatch):
    def run(cuda_mod, kernel):
        a = np.arange(12.0).reshape(3, 4)
        out = np.full((6, 3), 7.0)
        cuda_mod.jit("void(float64[:, ::1], float64[:, ::1], int64)")(kernel)[1, 32](out, a, 6)
        return out

    out = run(cuda, reshaped)
    b = np.arange(12.0).reshape(6, -1)
    np.testing.assert_array_equal(out[:, 0], b[:, -1] + np.arange(6.0))
    np.testing.assert_array_equal(out[:, 1], 200 + 16)
    assert out[0, 2] == 7.0  # the thread that asked for (5, -1) ended at the ValueError
    ncuda = pytest.importorskip("numba.cuda")
    (tmp_path / "numba_reshape_kernels.py").write_text(
        "from numba import cuda\n\n" + inspect.getsource(reshaped))
    monkeypatch.syspath_prepend(str(tmp_path))
    import numba_reshape_kernels as t
    np.testing.assert_array_equal(out, run(ncuda, t.reshaped))


def viewed(out, nums, raw, start, stop):
    # a.view(dtype): numba-cuda's test_reinterpret_array_type and the other cases of
    # numba's _compatible_view / _change_dtype
    i = cuda.grid(1)
    if i == 0:
        out[0, 0] = raw[start:stop].view(np.int32)[0]
    if i == 1:
        v = nums.view(np.uint8)  # smaller: the last axis grows
        out[1, 0] = v.shape[0]
        out[1, 1] = v.shape[1]
        out[1, 2] = v[2, 5]
        out[1, 3] = v.strides[1]
    if i == 2:
        w = raw.view(np.int64)  # larger: the last axis shrinks
        out[2, 0] = w.shape[0]
        out[2, 1] = w[3]
        out[2, 2] = w.strides[0]
    if i == 3:
        out[3, 0] = nums.view(np.int32)[1, 2]  # the same size: nothing moves
    if i == 4:
        t = nums.T.view(np.uint8)  # the last axis is not contiguous: ValueError
        out[4, 0] = t[0, 0]
    if i == 5:
        s = raw[1:7].view(np.int32)  # 6 bytes are no whole int32s: ValueError
        out[5, 0] = s[0]
    if i == 6:
        sl = nums[:, 1:3].view(np.uint16)  # layout A, its last stride the itemsize
        out[6, 0] = sl.shape[1]
        out[6, 1] = sl[1, 3]
        out[6, 2] = sl.strides[0]


def view_as(a):
    return a.view(np.uint8), a.view(np.float64)


@pytest.mark.parametrize("sig, numba_says", [
    ("(float32[:, ::1],)", "Tuple(array(uint8, 2d, C), array(float64, 2d, C))"),
    ("(int16[:],)", "Tuple(array(uint8, 1d, A), array(float64, 1d, A))"),
    ("(uint8[::1, :],)", "Tuple(array(uint8, 2d, F), array(float64, 2d, F))"),
])
def test_view_types_are_numbas(sig, numba_says):
    assert str(cuda.compile_ptx(view_as, sig, device=True, cc=(9, 0))[1]) == numba_says


def test_view_compiles_and_ptxas_accepts(tmp_path):
    ptx, _ = cuda.compile_ptx(viewed, "void(int64[:, ::1], float32[:, ::1], uint8[::1], int64, "
                              "int64)", cc=(9, 0))
    check_ptx(ptx, tmp_path)

    def bad(a):
        return a.view(np.int32, np.int8)

    with pytest.raises(cuda.TypingError, match=r"view\(\) takes exactly one argument"):
        cuda.compile_ptx(bad, "(float32[::1],)", device=True, cc=(9, 0))


@pytest.mark.gpu
def test_view_matches_numpy_and_numba_cuda(gpu, tmp_path, monkeypatch):
    sig = "void(int64[:, ::1], float32[:, ::1], uint8[::1], int64, int64)"
    nums = np.arange(12, dtype=np.float32).reshape(3, 4) * 1.5
    raw = np.arange(256, dtype=np.uint8)

    def run(cuda_mod, kernel, start):
        out = np.full((8, 4), -7, np.int64)
        cuda_mod.jit(sig)(kernel)[1, 8](out, nums, raw, start, start + 4)
        return out

    for start in (0, 4, 36, 252):
        out = run(cuda, viewed, start)
        assert out[0, 0] == raw[start:start + 4].view(np.int32)[0]
    v = nums.view(np.uint8)
    np.testing.assert_array_equal(out[1], [v.shape[0], v.shape[1], v[2, 5], v.strides[1]])
    w = raw.view(np.int64)
    np.testing.assert_array_equal(out[2, :3], [w.shape[0], w[3], w.strides[0]])
    assert out[3, 0] == nums.view(np.int32)[1, 2]
    with pytest.raises(ValueError):
        nums.T.view(np.uint8)
    assert out[4, 0] == -7 and out[5, 0] == -7  # those threads ended at the ValueError
    sl = nums[:, 1:3].view(np.uint16)
    np.testing.assert_array_equal(out[6, :3], [sl.shape[1], sl[1, 3], sl.strides[0]])

    ncuda = pytest.importorskip("numba.cuda")
    (tmp_path / "numba_dtype_view_kernels.py").write_text(
        "import numpy as np\nfrom numba import cuda\n\n" + inspect.getsource(viewed))
    monkeypatch.syspath_prepend(str(tmp_path))
    import numba_dtype_view_kernels as t
    for start in (0, 36):
        np.testing.assert_array_equal(run(cuda, viewed, start), run(ncuda, t.viewed, start))


def fill3(arr, got):
    for i in range(got.shape[0]):
        for j in range(got.shape[1]):
            for k in range(got.shape[2]):
                got[i, j, k] = arr[0]


def test_empty_arrays_are_contiguous_whatever_their_strides():
    """numpy's empty arrays (np.zeros((1, 0, 2)) has strides (0, 0, 0)) are C- and
    F-contiguous, so kernels of either layout take them (numba-cuda's test_array_reshape
    launches one)."""
    got = np.zeros((1, 0, 2))
    assert got.strides == (0, 0, 0) and got.flags.c_contiguous and got.flags.f_contiguous
    cuda.jit(fill3)[1, 1](np.array([1.0]), got)
    cuda.jit("void(float64[::1], float64[:, :, ::1])")(fill3)[1, 1](np.array([1.0]), got)
    d = cuda.to_device(got)
    assert d.is_c_contiguous() and d.is_f_contiguous()
    cuda.jit("void(float64[::1], float64[::1, :, :])")(fill3)[1, 1](np.array([1.0]), d)
