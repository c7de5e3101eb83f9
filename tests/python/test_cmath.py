"""cmath in kernels, as numba-cuda implements it: its cmathimpl.py algorithms, ported to the
kernel language (src/library/cmath.py) and compiled like any function. CI checks the
typing against numba-cuda's (complex64 stays complex64 for the lowered functions, float
arguments convert, the overloads take complex numbers only) and that everything compiles; the
gpu test runs every function on complex64 and complex128 values including zeros, infinities
and NaN, and compares the bits with numba-cuda's (in a fresh interpreter) and the values with
Python's cmath."""
import cmath
import math

import pytest

np = pytest.importorskip("numpy")
import nbcuda as cuda  # noqa: E402
from conftest import assert_same_bits, load_kernel_module, numba_side  # noqa: E402

UNARY = ["exp", "log", "log10", "sqrt", "cos", "sin", "tan", "cosh", "sinh", "tanh", "acos",
         "asin", "atan", "acosh", "asinh", "atanh"]

KERNELS = """
import cmath
from cmath import exp as cexp


def unary(z, out, flags, polar, phase):
    i = cuda.grid(1)
    if i < z.size:
{unary}
        flags[0, i] = cmath.isnan(z[i])
        flags[1, i] = cmath.isinf(z[i])
        flags[2, i] = cmath.isfinite(z[i])
        r, p = cmath.polar(z[i])
        polar[0, i] = r
        polar[1, i] = p
        phase[i] = cmath.phase(z[i])


def binary(z, w, out, re, im):
    i = cuda.grid(1)
    if i < z.size:
        out[0, i] = cmath.log(z[i], w[i])
        out[1, i] = cexp(z[i]) * w[i]
        out[2, i] = cmath.rect(re[i], im[i])
"""


def kernel_source():
    ind = " " * 8
    return KERNELS.format(unary="\n".join(f"{ind}out[{k}, i] = cmath.{f}(z[i])"
                                          for k, f in enumerate(UNARY)))


def load_kernels(tmp_path, cuda_module):
    return load_kernel_module(tmp_path, "cmath_kernels", kernel_source(), cuda_module)


def inputs(dtype):
    specials = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-30, 1e30, math.inf, -math.inf, math.nan]
    rng = np.random.default_rng(11)
    parts = np.concatenate([np.array(specials), rng.normal(0, 3, 40), rng.normal(0, 1e3, 9)])
    re, im = np.meshgrid(parts, parts)
    z = np.empty(re.size, dtype)  # parts set one by one: 1j * inf would make a NaN real part
    z.real = re.ravel()
    z.imag = im.ravel()
    w = rng.permutation(z)
    fdt = np.float32 if dtype == np.complex64 else np.float64
    return z, w, z.real.astype(fdt).copy(), np.abs(z.imag).astype(fdt).copy()


def run(mod, cm, dtype):
    z, w, re, im = inputs(dtype)
    n = z.size
    fdt = np.float32 if dtype == np.complex64 else np.float64
    grid = (n + 127) // 128
    dz = cm.to_device(z)
    # outputs start as zeros: a thread that raises (cmath.log(z, 1), a ZeroDivisionError) ends
    # before writing its elements, which must then compare equal, not as leftover memory
    out = cm.to_device(np.zeros((len(UNARY), n), np.complex128))
    flags = cm.to_device(np.zeros((3, n), np.bool_))
    polar = cm.to_device(np.zeros((2, n), np.float64))
    phase = cm.to_device(np.zeros(n, np.float64))
    cm.jit(mod.unary)[grid, 128](dz, out, flags, polar, phase)
    out2 = cm.to_device(np.zeros((3, n), np.complex128))
    cm.jit(mod.binary)[grid, 128](dz, cm.to_device(w), out2, cm.to_device(re), cm.to_device(im))
    del fdt
    return {"unary": out.copy_to_host(), "flags": flags.copy_to_host(),
            "polar": polar.copy_to_host(), "phase": phase.copy_to_host(),
            "binary": out2.copy_to_host()}


def typeof(f, sig):
    return str(cuda.compile_ptx(f, sig, device=True, cc=(9, 0))[1])


def test_typing_follows_numba_cuda():
    # the lowered functions keep complex64, convert floats (float64 -> complex128)
    for name in ["exp", "log", "sqrt", "cos", "sin", "tan", "acos", "asin", "atan", "asinh",
                 "atanh"]:
        f = getattr(cmath, name)
        assert typeof(lambda z: f(z), "(complex64,)") == "complex64", name
        assert typeof(lambda z: f(z), "(complex128,)") == "complex128", name
        assert typeof(lambda z: f(z), "(float64,)") == "complex128", name
    for name in ["isnan", "isinf", "isfinite"]:
        f = getattr(cmath, name)
        assert typeof(lambda z: f(z), "(complex64,)") == "bool"
    assert typeof(lambda z, b: cmath.log(z, b), "(complex64, complex64)") == "complex64"
    assert typeof(lambda z: cmath.polar(z), "(complex64,)") == "UniTuple(float32 x 2)"
    assert typeof(lambda z: cmath.phase(z), "(complex128,)") == "float64"
    assert typeof(lambda r, p: cmath.rect(r, p), "(float32, float32)") == "complex64"
    # numba's overloads take complex numbers only
    for name in ["log10", "cosh", "sinh", "tanh", "acosh", "phase", "polar"]:
        f = getattr(cmath, name)
        with pytest.raises(cuda.TypingError):
            cuda.compile_ptx(lambda z: f(z), "(float64,)", device=True, cc=(9, 0))
    with pytest.raises(cuda.TypingError, match="cmath.rect"):
        cuda.compile_ptx(lambda r: cmath.rect(r, r), "(complex64,)", device=True, cc=(9, 0))
    assert typeof(lambda z: cmath.pi * z, "(float64,)") == "float64"


def test_kernels_compile_and_launch(tmp_path, tdrv):
    mod = load_kernels(tmp_path, cuda)
    for dtype in (np.complex64, np.complex128):
        run(mod, cuda, dtype)
    assert tdrv.last_launch().function.decode().startswith("_ZN")


def test_unknown_cmath_function_is_refused():
    with pytest.raises(cuda.TypingError, match="cmath.exp2"):
        cuda.compile_ptx(lambda z: cmath.exp2(z), "(complex128,)", device=True, cc=(9, 0))


@pytest.mark.gpu
def test_cmath_on_the_gpu_matches_numba_cuda_and_python(gpu, tmp_path):
    mod = load_kernels(tmp_path, cuda)
    mine = {dt.__name__: run(mod, cuda, dt) for dt in (np.complex64, np.complex128)}
    # complex128 against Python's cmath where both are finite (numba's algorithms are
    # CPython's and NumPy's; libdevice's math differs from libm in the last bits)
    z = inputs(np.complex128)[0]
    got = mine["complex128"]["unary"]
    for k, name in enumerate(UNARY):
        f = getattr(cmath, name)
        for i in range(0, z.size, 7):
            try:
                want = f(complex(z[i]))
            except (ValueError, OverflowError):
                continue
            g = got[k, i]
            if cmath.isfinite(want) and abs(want) < 1e200 and cmath.isfinite(g):
                assert abs(g - want) <= 1e-12 * max(1.0, abs(want)), (name, z[i], g, want)
    pytest.importorskip("numba")
    theirs = numba_side(
        "test_cmath", f"{{dt.__name__ + '_' + k: v for dt in (np.complex64, np.complex128) "
        f"for k, v in t.run(t.load_kernels(pathlib.Path({str(tmp_path)!r}), cuda), cuda, "
        f"dt).items()}}", tmp_path / "numba.npz")
    for dt, results in mine.items():
        assert_same_bits(results, theirs, prefix=dt + "_")
