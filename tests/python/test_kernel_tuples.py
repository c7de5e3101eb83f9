"""Tuples in kernels as numba-cuda types them: global tuples of numbers (and of such tuples)
frozen as constants (UniTuple(float64 x 3), Tuple(int64, float64, bool)), tuples of tuples
through device functions and unpacking, a homogeneous tuple indexed at run time
(numba's getitem_unituple: negative indices count from the end, others outside raise
IndexError, which ends the thread or, in a debug kernel, reaches the host) and `for v in t`.
CI checks types and PTX; the GPU compares results and the IndexError with numba-cuda."""
import warnings

import numpy as np
import pytest

import nbcuda as cuda
from conftest import load_kernel_module, numba_side, sig_texts
from test_compile import check_ptx

KERNELS = '''
WEIGHTS = (0.25, 0.5, 0.25)
MIXED = (2, 1.5, True)
OFFSETS = (-1, 0, 1)


def smooth(out, x):
    i = cuda.grid(1)
    if 0 < i < x.size - 1:
        s = 0.0
        for k in range(3):
            s += WEIGHTS[k] * x[i + OFFSETS[k]]
        out[i] = s


def iterate(out, x):
    i = cuda.grid(1)
    if i < x.size:
        s = 0.0
        for w in WEIGHTS:
            s += w * x[i]
        out[i] = s + MIXED[0] * MIXED[1] + MIXED[2]


PAIRS = ((1.0, 2.0), (3.0, 4.0), (5.0, 6.0))


@cuda.jit(device=True)
def swap_scale(t, s):
    return (t[1] * s, t[0] * s)


def nested(out, x):
    i = cuda.grid(1)
    if i < x.size:
        p = PAIRS[i % 3]
        a, b = swap_scale(p, x[i])
        (c, d), e = ((a, b), PAIRS[2][1])
        out[i] = c - d + e


def compare(out, x, y):
    i = cuda.grid(1)
    if i < x.size:
        a = (x[i], 1)
        b = (y[i], 1)
        c = (x[i], 1, 0.5)
        r = 0
        if a == b:
            r |= 1
        if a != b:
            r |= 2
        if a < b:
            r |= 4
        if a <= b:
            r |= 8
        if a > b:
            r |= 16
        if a >= b:
            r |= 32
        if a < c:
            r |= 64
        if x[i] in (1.0, 2.0, y[i]):
            r |= 128
        if ((x[i], 2), 3) == ((y[i], 2), 3):
            r |= 256
        if x[i] not in (3.0,):
            r |= 512
        if (x[i], y[i]) > (y[i], x[i]) >= (0.0, 0.0):
            r |= 1024
        out[i] = r


def reshape_ops(out, x):
    i = cuda.grid(1)
    if i < x.size:
        t = (x[i], 2.0) + (3.0,)          # concatenation
        u = (x[i], x[i], x[i])            # (numba-cuda repeats no tuple: t * k is nbcuda's)
        v = t[1:] + u[::-2] + t[::-1][:1]
        p = (pow(x[i], 2), pow(2.0, x[i]))
        w = v + p + p
        s = 0.0
        for e in w:
            s += e
        out[i] = s + len(w) + len(t[5:])


def tuple_indexed(out, x):
    i = cuda.grid(1)
    if i < out.shape[0]:
        idx = (i, 1)
        out[idx] = x[idx] * 2.0
        j = (i, 0)
        out[j] += 1.0


def tuple_args(out, x, t, u):
    i = cuda.grid(1)
    if i < x.size:
        a, (b, c) = u
        out[i] = x[i] * t[0] + t[1] + a + (1.0 if b else 0.0) + c.real * c.imag


def pick(out, x, k):
    i = cuda.grid(1)
    if i < x.size:
        t = (x[i], 2.0 * x[i], 3.0 * x[i])
        out[i] = t[k[i]]
'''


def kernels(cuda_module, directory):
    return load_kernel_module(directory, "tuple_kernels", KERNELS, cuda_module)


def test_global_tuples_are_typed_as_numba_types_them(tmp_path):
    mod = kernels(cuda, tmp_path)
    for f in (mod.smooth, mod.iterate, mod.nested):
        ptx, _ = cuda.compile_ptx(f, "void(float64[::1], float64[::1])", cc=(9, 0))
        check_ptx(ptx, tmp_path)

    def typeof(expr):
        src = ("WEIGHTS = (0.25, 0.5, 0.25)\nMIXED = (2, 1.5, True)\n\n\n"
               f"def f(x):\n    return {expr}\n")
        m = load_kernel_module(tmp_path, "tuple_types", src, cuda)
        return str(cuda.compile(m.f, "(float64,)", output="ptx")[1])

    assert typeof("WEIGHTS") == "UniTuple(float64 x 3)"
    assert typeof("MIXED") == "Tuple(int64, float64, bool)"
    assert typeof("WEIGHTS[int(x)]") == "float64"
    assert typeof("((x, 1), WEIGHTS)") == \
        "Tuple(Tuple(float64, int64), UniTuple(float64 x 3))"


def test_tuple_arithmetic_slices_pow_and_tuple_indices(tmp_path):
    mod = kernels(cuda, tmp_path)
    for f, sig in ((mod.reshape_ops, "void(float64[::1], float64[::1])"),
                   (mod.tuple_indexed, "void(float64[:, ::1], float64[:, ::1])")):
        ptx, _ = cuda.compile_ptx(f, sig, cc=(9, 0))
        check_ptx(ptx, tmp_path)

    def typeof(body, sig="(float64,)"):
        m = load_kernel_module(tmp_path, "tuple_ops", f"def f(x):\n    return {body}\n", cuda)
        return str(cuda.compile(m.f, sig)[1])

    assert typeof("(x, 1) + (True,)") == "Tuple(float64, int64, bool)"
    assert typeof("(x,) * 3") == "UniTuple(float64 x 3)"
    assert typeof("2 * (x, 1)") == "Tuple(float64, int64, float64, int64)"
    assert typeof("(x,) * -1") == "Tuple()"
    assert typeof("(x, 1, 2.5)[::-1]") == "Tuple(float64, int64, float64)"
    assert typeof("(x, 1, 2.5)[1:]") == "Tuple(int64, float64)"
    assert typeof("pow(x, 2)") == "float64"
    assert typeof("pow(2, 3)", "(int64,)") == "int64"
    with pytest.raises(cuda.TypingError, match="a tuple can be repeated a constant number"):
        typeof("(x,) * int(x)")
    with pytest.raises(cuda.TypingError, match="a modulus is not supported"):
        typeof("pow(2, 3, 5)", "(int64,)")
    with pytest.raises(cuda.TypingError, match="sliced with constant integers only"):
        typeof("(x, 1, 2.5)[int(x):]")
    with pytest.raises(cuda.TypingError, match="slice step cannot be zero"):
        typeof("(x, 1, 2.5)[::0]")


def test_tuple_comparisons_compile(tmp_path):
    mod = kernels(cuda, tmp_path)
    ptx, _ = cuda.compile_ptx(mod.compare, "void(int64[::1], float64[::1], float64[::1])",
                              cc=(9, 0))
    check_ptx(ptx, tmp_path)
    src = "def f(x):\n    return (x, 1) < (1, x, 2)\n"
    m = load_kernel_module(tmp_path, "tuple_cmp_types", src, cuda)
    assert str(cuda.compile(m.f, "(float64,)")[1]) == "bool"
    src = "def f(x):\n    return x in 3.0\n"
    m = load_kernel_module(tmp_path, "tuple_in_bad", src, cuda)
    with pytest.raises(cuda.TypingError, match="membership in tuples"):
        cuda.compile(m.f, "(float64,)")


def test_tuple_arguments_are_packed_item_by_item(tmp_path):
    mod = kernels(cuda, tmp_path)
    sig = ("void(float64[::1], float64[::1], UniTuple(float64, 2), "
           "Tuple(int32, Tuple(boolean, complex128)))")
    ptx, _ = cuda.compile_ptx(mod.tuple_args, sig, cc=(9, 0))
    check_ptx(ptx, tmp_path)
    k = cuda.jit(sig)(mod.tuple_args)
    d = cuda.device_array(4)
    k[1, 4](d, d, (1.0, 2.0), (3, (True, 1j)))  # packs (the test driver runs nothing)
    with pytest.raises(TypeError, match=r"argument 3: expected UniTuple\(float64 x 2\), got "
                       r"\(1.0,\)"):
        k[1, 4](d, d, (1.0,), (3, (True, 1j)))
    with pytest.raises(TypeError, match="argument 4: expected complex128, got str"):
        k[1, 4](d, d, (1.0, 2.0), (3, (True, "x")))
    # str() of numba's own tuple types, UniTuple(float64 x 2), reads the same
    printed = ("void(float64[::1], float64[::1], UniTuple(float64 x 2), "
               "Tuple(int32, Tuple(bool, complex128)))")
    assert cuda.compile_ptx(mod.tuple_args, printed, cc=(9, 0))[0] == ptx
    # nbcuda.types' tuple constructors, as numba-cuda's numba.cuda.types
    t = cuda.types
    u = t.UniTuple(t.float64, 2)
    v = t.Tuple((t.int32, t.Tuple((t.boolean, t.complex128))))
    assert str(u) == "UniTuple(float64 x 2)" and str(v) == "Tuple(int32, Tuple(bool, complex128))"
    assert cuda.compile_ptx(mod.tuple_args, (t.float64[::1], t.float64[::1], u, v),
                            cc=(9, 0))[0] == ptx
    with pytest.raises(ValueError, match="count must be from 1 to 64"):
        t.UniTuple(t.float64, 0)
    with pytest.raises(TypeError, match="a signature takes type objects, got 3"):
        t.Tuple((t.float64, 3))
    lazy = cuda.jit(mod.tuple_args)
    lazy[1, 4](d, d, (1, 2.5), (3, (True, 1j)))
    assert sig_texts(lazy) == ["void(float64[::1], float64[::1], Tuple(int64, float64), "
                               "Tuple(int64, Tuple(bool, complex128)))"]


def test_run_time_index_needs_a_homogeneous_tuple(tmp_path):
    src = "MIXED = (2, 1.5)\n\n\ndef f(x, i):\n    return MIXED[i]\n"
    m = load_kernel_module(tmp_path, "tuple_mixed", src, cuda)
    with pytest.raises(cuda.TypingError, match="a tuple of mixed types needs a constant index"):
        cuda.compile(m.f, "(float64, int64)")
    src = "T = (2.5, 1.5)\n\n\ndef f(x, i):\n    return T[i]\n"
    m = load_kernel_module(tmp_path, "tuple_float_index", src, cuda)
    with pytest.raises(cuda.TypingError, match="tuple indices must be integers, not float64"):
        cuda.compile(m.f, "(float64, float64)")


def test_out_of_range_index_ends_the_thread(tmp_path):
    mod = kernels(cuda, tmp_path)
    ptx, _ = cuda.compile_ptx(mod.pick, "void(float64[::1], float64[::1], int64[::1])",
                              cc=(9, 0))
    assert "exit;" in ptx and "__errcode__" not in ptx
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dbg, _ = cuda.compile_ptx(mod.pick, "void(float64[::1], float64[::1], int64[::1])",
                                  cc=(9, 0), debug=True, opt=False)
    assert "__errcode__" in dbg


def results(cuda_module, directory):
    """Each kernel over 64 elements; pick with indices -3..2 and, in a debug kernel, one
    index out of range (element 37): the outcome as text."""
    mod = kernels(cuda_module, directory)
    x = np.linspace(-2.0, 5.0, 64)
    out = {}
    # tuple arguments, flattened item by item: an explicit signature and a lazy kernel
    # numba's spelling of tuple types (Tuple takes a tuple), which nbcuda reads too
    kt = cuda_module.jit("void(float64[::1], float64[::1], UniTuple(float64, 2), "
                         "Tuple((int32, Tuple((boolean, complex128)))))")(mod.tuple_args)
    dt = cuda_module.to_device(np.zeros(64))
    kt[2, 32](dt, cuda_module.to_device(x), (2.0, -1.0), (3, (True, 1.5 - 2j)))
    out["tuple_args"] = dt.copy_to_host()
    cuda_module.jit(mod.tuple_args)[2, 32](dt, cuda_module.to_device(x), (2, 0.5), (1, (0, 2j)))
    out["tuple_args_lazy"] = dt.copy_to_host()
    for name in ("smooth", "iterate", "nested"):
        k = cuda_module.jit("void(float64[::1], float64[::1])")(getattr(mod, name))
        d = cuda_module.to_device(np.zeros(64))
        k[2, 32](d, cuda_module.to_device(x))
        out[name] = d.copy_to_host()
    kr = cuda_module.jit("void(float64[::1], float64[::1])")(mod.reshape_ops)
    dr = cuda_module.to_device(np.zeros(64))
    kr[2, 32](dr, cuda_module.to_device(x))
    out["reshape_ops"] = dr.copy_to_host()
    kt = cuda_module.jit("void(float64[:, ::1], float64[:, ::1])")(mod.tuple_indexed)
    m = np.arange(128, dtype=np.float64).reshape(64, 2)
    dt = cuda_module.to_device(np.zeros((64, 2)))
    kt[2, 32](dt, cuda_module.to_device(m))
    out["tuple_indexed"] = dt.copy_to_host()
    xs = np.array([1.0, 2.0, 3.0, np.nan, -1.0, 0.0, 2.0, np.inf] * 8)
    ys = np.array([1.0, 1.0, 4.0, np.nan, -2.0, -0.0, np.nan, 3.0] * 8)
    kc = cuda_module.jit("void(int64[::1], float64[::1], float64[::1])")(mod.compare)
    dc = cuda_module.to_device(np.zeros(64, np.int64))
    kc[2, 32](dc, cuda_module.to_device(xs), cuda_module.to_device(ys))
    out["compare"] = dc.copy_to_host()
    idx = (np.arange(64) % 6 - 3).astype(np.int64)
    k = cuda_module.jit("void(float64[::1], float64[::1], int64[::1])")(mod.pick)
    d = cuda_module.to_device(np.full(64, -1.0))
    k[2, 32](d, cuda_module.to_device(x), cuda_module.to_device(idx))
    out["pick"] = d.copy_to_host()
    bad = idx.copy()
    bad[37] = 3
    d = cuda_module.to_device(np.full(64, -1.0))
    k[2, 32](d, cuda_module.to_device(x), cuda_module.to_device(bad))
    out["pick_bad"] = d.copy_to_host()  # the thread of element 37 ended, nothing else
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kd = cuda_module.jit("void(float64[::1], float64[::1], int64[::1])", debug=True,
                             opt=False)(mod.pick)
    try:
        kd[2, 32](d, cuda_module.to_device(x), cuda_module.to_device(bad))
        out["raised"] = np.array(["no exception"])
    except Exception as e:  # noqa: BLE001 - the exception is the result
        out["raised"] = np.array([f"{type(e).__name__}: {e.args!r}"])
    return out


@pytest.mark.gpu
def test_tuples_match_numpy_and_numba_cuda(gpu, tmp_path):
    mine = results(cuda, tmp_path)
    x = np.linspace(-2.0, 5.0, 64)
    np.testing.assert_allclose(mine["tuple_args"], x * 2.0 - 1.0 + 3 + 1.0 - 3.0, rtol=1e-15)
    np.testing.assert_allclose(mine["tuple_args_lazy"], x * 2 + 0.5 + 1 + 0.0, rtol=1e-15)
    expect = np.zeros(64)
    expect[1:-1] = 0.25 * x[:-2] + 0.5 * x[1:-1] + 0.25 * x[2:]
    np.testing.assert_allclose(mine["smooth"], expect, rtol=1e-15)
    np.testing.assert_allclose(mine["iterate"], x + 4.0, rtol=1e-15)
    pairs = np.array([(1.0, 2.0), (3.0, 4.0), (5.0, 6.0)])[np.arange(64) % 3]
    np.testing.assert_allclose(mine["nested"], (pairs[:, 1] - pairs[:, 0]) * x + 6.0,
                               rtol=1e-15)
    idx = np.arange(64) % 6 - 3
    np.testing.assert_array_equal(mine["pick"], x * (np.where(idx < 0, idx + 3, idx) + 1))
    t0 = [(v, 2.0, 3.0) for v in x]
    expect_r = [sum(t[1:] + (v, v) + t[::-1][:1] + 2 * (v ** 2, 2.0 ** v)) + 9
                for v, t in zip(x, t0)]
    np.testing.assert_allclose(mine["reshape_ops"], expect_r, rtol=1e-14)
    m = np.arange(128, dtype=np.float64).reshape(64, 2)
    np.testing.assert_array_equal(mine["tuple_indexed"], np.stack([np.ones(64), 2 * m[:, 1]], 1))
    # numba's comparisons (NaN != NaN, unlike Python's identity shortcut in tuples)
    xs = np.array([1.0, 2.0, 3.0, np.nan, -1.0, 0.0, 2.0, np.inf])
    ys = np.array([1.0, 1.0, 4.0, np.nan, -2.0, -0.0, np.nan, 3.0])
    expect_cmp = []
    for x0, y0 in zip(xs, ys):
        r = 0
        lt = x0 < y0 if x0 != y0 else False  # (x, 1) < (y, 1): first differing item
        gt = x0 > y0 if x0 != y0 else False
        eq = x0 == y0
        r |= 1 if eq else 2
        r |= (4 if lt else 0) | (8 if lt or (x0 == y0) else 0)
        r |= (16 if gt else 0) | (32 if gt or (x0 == y0) else 0)
        r |= 64  # (x, 1) < (x, 1, 0.5): equal items (or NaN != NaN: NaN < NaN is False)
        if x0 != x0:
            r &= ~64
        r |= 128 if x0 in (1.0, 2.0) or x0 == y0 else 0
        r |= 256 if eq else 0
        r |= 512 if x0 != 3.0 else 0
        first = (x0 > y0 if x0 != y0 else (y0 > x0 if y0 != x0 else False))
        second = y0 > 0.0 if y0 != 0.0 else x0 >= 0.0
        r |= 1024 if first and second else 0
        expect_cmp.append(r)
    np.testing.assert_array_equal(mine["compare"], np.array(expect_cmp * 8))
    bad = mine["pick"].copy()
    bad[37] = -1.0  # only the thread with the index out of range ended before its store
    np.testing.assert_array_equal(mine["pick_bad"], bad)
    assert mine["raised"][0] == ("IndexError: ('tid=[0, 0, 5] ctaid=[0, 0, 1]: tuple index out "
                                 "of range',)")
    theirs = numba_side("test_kernel_tuples", f"t.results(cuda, pathlib.Path({str(tmp_path)!r}))",
                        tmp_path / "numba.npz")
    for key in mine:
        if key == "raised":
            assert list(mine[key]) == list(theirs[key])
        else:
            np.testing.assert_array_equal(mine[key], theirs[key], err_msg=key)
