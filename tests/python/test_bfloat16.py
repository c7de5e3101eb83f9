"""numba-cuda's bfloat16 in kernels (numba.cuda.bf16; here nbcuda.bf16): the type
(`bfloat16(x)`, printed __nv_bfloat16), its operators (+ - * / and comparisons through
cuda_bf16.h, mixed with other numbers by numba-cuda's conversion rules), conversions both ways,
math.<f> overloads and the module's cuda_bf16.h functions, all through Numba-ABI wrappers
compiled by NVRTC and linked with the kernel as numba-cuda binds them. CI checks the typing,
the code and the link (NVRTC and nvJitLink on the host, the test driver loads the cubin); the
gpu test runs every kind over float32 inputs rounded to bfloat16 (zeros, subnormals, infinities,
NaN included), checks facts of bfloat16 arithmetic, and compares the bits with numba-cuda's."""
import math

import pytest

np = pytest.importorskip("numpy")
import nbcuda as cuda  # noqa: E402
from conftest import assert_same_bits, load_kernel_module, numba_side  # noqa: E402

KERNELS = """
import math
from {pkg} import float32, int8, int16, int32, int64, uint32
from {pkg}.bf16 import (bfloat16, hfma, hmax, hmin_nan, habs, hsqrt, hisnan, hneg, hrcp,
                        bfloat16_as_int16, int16_as_bfloat16, float2bfloat16_rz)


def ops(x, y, out, flags, ints):
    i = cuda.grid(1)
    if i < x.size:
        a = bfloat16(x[i])
        b = bfloat16(y[i])
        out[0, i] = float32(a)
        out[1, i] = float32(a + b)
        out[2, i] = float32(a - b)
        out[3, i] = float32(a * b)
        out[4, i] = float32(a / b)
        out[5, i] = float32(-a)
        out[6, i] = float32(hfma(a, b, a))
        out[7, i] = float32(hmax(a, b))
        out[8, i] = float32(hmin_nan(a, b))
        out[9, i] = float32(hsqrt(habs(a)))
        out[10, i] = float32(math.floor(a))  # numba-cuda's overload: hfloor
        out[11, i] = float32(math.exp(a))
        out[12, i] = a * int16(3)  # float32: int16 converts to bfloat16 unsafely
        out[13, i] = float32(a + bfloat16(int16(2)))  # numba-cuda lowers no int8 -> bfloat16
        out[14, i] = math.fabs(a)  # no overload: float32
        out[15, i] = float32(hrcp(hneg(b)))
        out[16, i] = float32(float2bfloat16_rz(x[i]))
        c = a
        c += b
        c *= a
        out[17, i] = float32(c)
        flags[0, i] = a == b
        flags[1, i] = a != b
        flags[2, i] = a < b
        flags[3, i] = a >= b
        flags[4, i] = hisnan(a)
        flags[5, i] = a != bfloat16(0)  # numba-cuda lowers no bool(bfloat16)
        flags[6, i] = a > 0.5
        ints[0, i] = int32(a)
        ints[1, i] = int16(b)
        ints[2, i] = bfloat16_as_int16(a)
        ints[3, i] = uint32(habs(a))
        ints[4, i] = int64(float32(int16_as_bfloat16(int16(i * 97 - 3000))) * 1000)
        ints[5, i] = int64(a + int32(1))  # float64
        if i == 0:
            out[0, x.size - 1] = float32(bfloat16(float("nan")))  # the input's own NaN
"""

NOUT, NFLAGS, NINTS = 18, 7, 6


def load_kernels(tmp_path, cuda_module, pkg):
    return load_kernel_module(tmp_path, f"bf16_kernels_{pkg.replace('.', '_')}",
                              KERNELS.format(pkg=pkg), cuda_module)


def inputs():
    """float32 values of every bfloat16 class, and values between bfloat16's (rounded)."""
    special = np.array([0.0, -0.0, 1.0, -1.0, 1.5, 3.14159, -2.71828, 1e-39, -1e-40, 1e38,
                        3.4e38, np.inf, -np.inf, np.nan, 0.1, 255.5, 256.5, 65504.0, 1.00390625,
                        1.01171875, -7.9, 100000.0], np.float32)
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 2**32, 400, dtype=np.uint64).astype(np.uint32)
    x = np.concatenate([special, bits.view(np.float32), rng.normal(0, 50, 200).astype(np.float32),
                        np.array([np.nan], np.float32)])  # last: the kernel's float("nan")
    y = rng.permutation(x)
    return x, y


def run(mod, cuda_module, x, y):
    n = x.size
    out = cuda_module.device_array((NOUT, n), np.float32)
    flags = cuda_module.device_array((NFLAGS, n), np.bool_)
    ints = cuda_module.device_array((NINTS, n), np.int64)
    cuda_module.jit(mod.ops)[(n + 127) // 128, 128](cuda_module.to_device(x),
                                                     cuda_module.to_device(y), out, flags, ints)
    return {"out": out.copy_to_host(), "flags": flags.copy_to_host(),
            "ints": ints.copy_to_host()}


def to_bf16(v):
    """float32 values rounded to bfloat16 (nearest, ties to even; NaN stays NaN), as float32."""
    b = np.asarray(v, np.float32).view(np.uint32).astype(np.uint64)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16 << 16).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(v), np.float32(np.nan), r)


# ------------------------------------------------------------------ typing, code, link ---

def sig(*names):
    return tuple(getattr(cuda, n) for n in names)


@pytest.mark.parametrize("other, result", [
    # int8 + bfloat16 is bfloat16 (int8 converts safely), which numba-cuda types but cannot
    # lower (it has no int8 -> bfloat16 cast): nbcuda converts through int16, exactly
    ("bfloat16", "__nv_bfloat16"), ("int8", "__nv_bfloat16"), ("uint8", "__nv_bfloat16"),
    ("float16", "float32"), ("float32", "float32"), ("int16", "float32"), ("boolean", "float32"),
    ("float64", "float64"), ("int32", "float64"), ("int64", "float64"), ("uint64", "float64")])
def test_operators_type_as_numba_cuda(other, result):
    """numba-cuda's answers (its typing context, Bfloat16.can_convert_to/from)."""
    for fn in (lambda a, b: a + b, lambda a, b: b * a, lambda a, b: a / b):
        _, resty = cuda.compile_ptx(fn, sig("bfloat16", other), device=True, cc=(9, 0))
        assert str(resty) == result
    _, resty = cuda.compile_ptx(lambda a, b: a < b, sig("bfloat16", other), device=True,
                                cc=(9, 0))
    assert str(resty) == "bool"
    _, resty = cuda.compile_ptx(lambda a, b: a // b, sig("bfloat16", "bfloat16"), device=True,
                                cc=(9, 0))
    assert str(resty) == "float32"  # // % ** have no bfloat16 operator: float32's


def test_operators_call_cuda_bf16_functions():
    ptx, resty = cuda.compile_ptx(lambda a, b: -(a * b) != a, sig("bfloat16", "bfloat16"),
                                  device=True, cc=(9, 0))
    assert str(resty) == "bool"
    for f in ("nbc_bf16___hmul", "nbc_bf16___hneg", "nbc_bf16___hneu"):
        assert f in ptx
    ptx, resty = cuda.compile_ptx(lambda a: math.sqrt(a), sig("bfloat16"), device=True,
                                  cc=(9, 0))
    assert "nbc_bf16_hsqrt" in ptx and str(resty) == "__nv_bfloat16"
    ptx, resty = cuda.compile_ptx(lambda a: math.sin(a) + math.atan(a), sig("bfloat16"),
                                  device=True, cc=(9, 0))
    assert str(resty) == "float32"  # hsin's bfloat16 then float32; atan of float32
    ptx, _ = cuda.compile_ptx(lambda a: cuda.float32(a), sig("bfloat16"), device=True,
                              cc=(9, 0))
    assert "nbc_bf16" not in ptx  # its float32 value is its bits, shifted
    _, resty = cuda.compile_ptx(lambda a: bool(a) or not a, sig("bfloat16"), device=True,
                                cc=(9, 0))
    assert str(resty) == "bool"  # its float32's truth (numba-cuda types it, lowers none)


def test_refused_as_numba_cuda_refuses():
    with pytest.raises(cuda.TypingError, match="max"):
        cuda.compile_ptx(lambda a, b: max(a, b), sig("bfloat16", "bfloat16"), device=True)
    with pytest.raises(cuda.TypingError):
        cuda.compile_ptx(lambda a, b: a + b, sig("bfloat16", "complex64"), device=True)
    with pytest.raises(TypeError, match="kernels only"):
        cuda.bfloat16(1.0)
    from nbcuda.bf16 import bfloat16, hadd
    assert bfloat16 is cuda.bfloat16 and str(bfloat16) == "__nv_bfloat16"
    assert repr(hadd) == "<intrinsic bf16.hadd>"


def test_kernels_link_the_shim(tmp_path, tdrv):
    mod = load_kernels(tmp_path, cuda, "nbcuda")
    x, y = inputs()
    run(mod, cuda, x, y)  # NVRTC compiles the wrappers for the device; nvJitLink links them
    assert tdrv.last_launch().function.decode().startswith("_ZN")


# ------------------------------------------------------------------ on the GPU ----------

@pytest.mark.gpu
def test_bfloat16_results_match_bfloat16_arithmetic_and_numba_cuda(gpu, tmp_path):
    if not cuda.is_bfloat16_supported():
        pytest.skip("bfloat16 needs compute capability 8.0")
    mod = load_kernels(tmp_path, cuda, "nbcuda")
    x, y = inputs()
    mine = run(mod, cuda, x, y)
    out, flags = mine["out"], mine["flags"]
    a, b = to_bf16(x), to_bf16(y)
    np.testing.assert_array_equal(out[0], a)  # __float2bfloat16: nearest, ties to even
    with np.errstate(all="ignore"):
        for k, exact in ((1, a + b), (2, a - b), (3, a * b)):
            ok = np.isfinite(exact) & (np.abs(exact) < 3e38)
            np.testing.assert_array_equal(out[k][ok], to_bf16(exact)[ok], err_msg=str(k))
        np.testing.assert_array_equal(out[5], -a)
        np.testing.assert_array_equal(out[12], a * np.float32(3))
        np.testing.assert_array_equal(out[14], np.abs(a))
    np.testing.assert_array_equal(flags[0], a == b)
    np.testing.assert_array_equal(flags[1], a != b)
    np.testing.assert_array_equal(flags[2], a < b)
    np.testing.assert_array_equal(flags[4], np.isnan(a))
    np.testing.assert_array_equal(flags[5], a != 0)  # NaN is true
    pytest.importorskip("numba")
    pytest.importorskip("ml_dtypes")  # numba-cuda's bf16 bindings import it
    theirs = numba_side("test_bfloat16", f"t.run(t.load_kernels(pathlib.Path({str(tmp_path)!r}), "
                        "cuda, 'numba.cuda'), cuda, *t.inputs())", tmp_path / "numba.npz")
    assert_same_bits(mine, theirs)


# ------------------------------------------------------------------ arrays of bfloat16 ---

def scale_and_shift(a, b, out):
    # numba-cuda's test_cupy_bfloat16_interop kernel: int64 * bfloat16 is float64, stored
    # into a bfloat16 array by __double2bfloat16
    i = cuda.grid(1)
    if i < a.size:
        out[i] = 2 * a[i] + 4 * b[i] + ml_dtypes.bfloat16(3.0)


def copy_negated(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = -a[i]


def test_arrays_of_ml_dtypes_bfloat16_type_and_launch(tdrv):
    """numpy arrays of ml_dtypes.bfloat16 (typestr <V2, named bfloat16) are numba-cuda's
    array(bfloat16): as host arrays, as device arrays, and with ml_dtypes.bfloat16 called in
    the kernel."""
    global ml_dtypes
    ml_dtypes = pytest.importorskip("ml_dtypes")
    a = np.arange(5).astype(ml_dtypes.bfloat16)
    out = np.zeros(5, ml_dtypes.bfloat16)
    k = cuda.jit(scale_and_shift)
    k[1, 32](a, np.arange(5), out)
    k[1, 32](cuda.to_device(a), cuda.to_device(np.arange(5)), cuda.to_device(out))
    assert [str(t) for t in k.signatures[0]] == [
        "array(__nv_bfloat16, 1d, C)", "array(int64, 1d, C)", "array(__nv_bfloat16, 1d, C)"]
    d = cuda.to_device(a)
    assert d.dtype == a.dtype and d.copy_to_host().dtype == a.dtype
    eager = cuda.jit((cuda.bfloat16[::1], cuda.bfloat16[::1]))(copy_negated)
    eager[1, 32](d, cuda.device_array_like(d))
    with pytest.raises(TypeError, match="argument 1"):
        eager[1, 32](cuda.to_device(np.zeros(5, np.float16)), d)


@pytest.mark.gpu
def test_arrays_of_bfloat16_match_float64_rounded_and_numba_cuda(gpu):
    global ml_dtypes
    ml_dtypes = pytest.importorskip("ml_dtypes")
    if not cuda.is_bfloat16_supported():
        pytest.skip("bfloat16 needs compute capability 8.0")
    a = (np.arange(300) * 1.37 - 150).astype(ml_dtypes.bfloat16)
    b = np.arange(300) * 7
    out = np.zeros(300, ml_dtypes.bfloat16)
    cuda.jit(scale_and_shift)[3, 128](a, b, out)
    want = (2 * a.astype(np.float64) + 4 * b + 3.0).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(out.view(np.uint16), want.view(np.uint16))
    neg = np.zeros_like(a)
    cuda.jit(copy_negated)[3, 128](cuda.to_device(a), neg)
    np.testing.assert_array_equal(neg.view(np.uint16), (-a).view(np.uint16))
