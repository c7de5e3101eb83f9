"""numba.cuda.fp16 in kernels: cuda_fp16.h's scalar functions (hadd, hsqrt, hfma, heq,
__half2int_rn, ...) through Numba-ABI wrappers compiled by NVRTC and linked with the kernel, as
numba-cuda binds them. CI checks the typing, the code, the shim and the link (NVRTC and
nvJitLink run on the host; the test driver loads the cubin); the gpu test runs every function
kind over float16 values including zeros, subnormals, infinities and NaN, and compares the bits
with numba-cuda's (in a fresh interpreter, as the other comparisons)."""

import pytest

np = pytest.importorskip("numpy")
import nbcuda as cuda  # noqa: E402
from conftest import assert_same_bits, key_texts, load_kernel_module, numba_side  # noqa: E402

UNARY = ["habs", "hneg", "hsqrt", "hrsqrt", "hrcp", "hexp", "hexp2", "hexp10", "hlog", "hlog2",
         "hlog10", "hsin", "hcos", "htanh", "hceil", "hfloor", "hrint", "htrunc", "__habs"]
BINARY = ["hadd", "hsub", "hmul", "hdiv", "hmax", "hmin", "__hadd_sat", "__hsub_rn",
          "__hmul_sat", "__hmax_nan", "__hmin_nan"]
COMPARE = ["heq", "hne", "hlt", "hle", "hgt", "hge", "__hequ", "__hltu", "__hgeu"]
TO_INT = ["__half2int_rn", "__half2int_rz", "__half2int_rd", "__half2short_ru", "__half2ll_rn"]

KERNELS = """
import math

def unary(x, out):
    i = cuda.grid(1)
    if i < x.size:
{unary}

def binary(x, y, out, cmp):
    i = cuda.grid(1)
    if i < x.size:
{binary}
{compare}

def misc(x, y, z, out, ints, fl, isnan):
    i = cuda.grid(1)
    if i < x.size:
        out[0, i] = cuda.fp16.hfma(x[i], y[i], z[i])
        out[1, i] = cuda.fp16.__hfma_relu(x[i], y[i], z[i])
        out[2, i] = cuda.fp16.__float2half_rd(cuda.fp16.__half2float(x[i]) * 1.001)
        out[3, i] = cuda.fp16.__int2half_rn(i * 37 - 5000)
        out[4, i] = cuda.fp16.__ushort_as_half(cuda.fp16.__half_as_ushort(x[i]) + 1)
        # math.<f> of a float16: numba-cuda's fp16 overloads (hsqrt, hlog, ...)
        out[5, i] = math.sqrt(x[i])
        out[6, i] = math.log(x[i])
        out[7, i] = math.floor(x[i])
        out[8, i] = math.cos(x[i])
        out[9, i] = math.exp2(x[i])
{to_int}
        fl[i] = cuda.fp16.__half2float(x[i])
        isnan[i] = cuda.fp16.__hisnan(x[i])
"""


def kernel_source():
    ind = " " * 8
    return KERNELS.format(
        unary="\n".join(f"{ind}out[{k}, i] = cuda.fp16.{f}(x[i])" for k, f in enumerate(UNARY)),
        binary="\n".join(f"{ind}out[{k}, i] = cuda.fp16.{f}(x[i], y[i])"
                         for k, f in enumerate(BINARY)),
        compare="\n".join(f"{ind}cmp[{k}, i] = cuda.fp16.{f}(x[i], y[i])"
                          for k, f in enumerate(COMPARE)),
        to_int="\n".join(f"{ind}ints[{k}, i] = cuda.fp16.{f}(x[i])" for k, f in enumerate(TO_INT)))


def load_kernels(tmp_path, cuda_module):
    return load_kernel_module(tmp_path, "fp16_kernels", kernel_source(), cuda_module)


def inputs():
    """Every finite float16 magnitude class: zeros, subnormals, normals, infinities, NaN."""
    bits = np.concatenate([np.arange(0, 0x7C01, 7, dtype=np.uint16),
                           np.array([0x7C00, 0x7E00, 0x0001, 0x03FF, 0x3C00, 0x7BFF],
                                    dtype=np.uint16)])
    x = np.concatenate([bits, bits | 0x8000]).view(np.float16)
    rng = np.random.default_rng(7)
    y = rng.permutation(x)
    z = rng.permutation(x)
    return x, y, z


def run(mod, cuda_module, x, y, z):
    n = x.size
    d = [cuda_module.to_device(v) for v in (x, y, z)]
    grid = (n + 255) // 256
    out_u = cuda_module.device_array((len(UNARY), n), np.float16)
    cuda_module.jit(mod.unary)[grid, 256](d[0], out_u)
    out_b = cuda_module.device_array((len(BINARY), n), np.float16)
    cmp = cuda_module.device_array((len(COMPARE), n), np.bool_)
    cuda_module.jit(mod.binary)[grid, 256](d[0], d[1], out_b, cmp)
    out_m = cuda_module.device_array((10, n), np.float16)
    ints = cuda_module.device_array((len(TO_INT), n), np.int64)
    fl = cuda_module.device_array(n, np.float32)
    isnan = cuda_module.device_array(n, np.bool_)
    cuda_module.jit(mod.misc)[grid, 256](d[0], d[1], d[2], out_m, ints, fl, isnan)
    return {"unary": out_u.copy_to_host(), "binary": out_b.copy_to_host(),
            "cmp": cmp.copy_to_host(), "misc": out_m.copy_to_host(),
            "ints": ints.copy_to_host(), "fl": fl.copy_to_host(), "isnan": isnan.copy_to_host()}


def test_math_of_float16_is_the_fp16_overload():
    """numba-cuda 0.30's fp16.py overloads math.sqrt/log/floor/... for float16 with
    cuda_fp16.h's hsqrt/hlog/hfloor/...: the same wrappers here; float32 keeps libdevice."""
    import math
    ptx, resty = cuda.compile_ptx(lambda a: math.sqrt(a), "float16(float16)", device=True,
                                  cc=(9, 0))
    assert "nbc_fp16_hsqrt" in ptx and str(resty) == "float16"
    ptx, _ = cuda.compile_ptx(lambda a: math.sqrt(a), "float32(float32)", device=True,
                              cc=(9, 0))
    assert "nbc_fp16" not in ptx and "sqrt.rn.f32" in ptx


def test_fp16_calls_wrappers_and_types_like_numba():
    ptx, resty = cuda.compile_ptx(lambda a, b: cuda.fp16.hadd(a, b), "float16(float16, float16)",
                                  device=True, cc=(9, 0))
    assert str(resty) == "float16"
    assert ".extern .func  (.param .b32 func_retval0) nbc_fp16___hadd" in ptx
    _, resty = cuda.compile_ptx(lambda a, b: cuda.fp16.heq(a, b), "(float16, float16)",
                                device=True, cc=(9, 0))
    assert str(resty) == "bool"
    _, resty = cuda.compile_ptx(lambda a: cuda.fp16.__half2int_rn(a), "(float16,)", device=True,
                                cc=(9, 0))
    assert str(resty) == "int32"
    # arguments convert to the parameter types, as numba's ConcreteTemplate converts them
    _, resty = cuda.compile_ptx(lambda a: cuda.fp16.hsqrt(a), "(float32,)", device=True,
                                cc=(9, 0))
    assert str(resty) == "float16"
    with pytest.raises(cuda.TypingError, match="hadd"):
        cuda.compile_ptx(lambda a: cuda.fp16.hadd(a), "float16(float16)", device=True)
    with pytest.raises(cuda.TypingError, match="fp16"):
        cuda.compile_ptx(lambda a: cuda.fp16.no_such_function(a), "float16(float16)",
                         device=True)
    from nbcuda import fp16
    assert callable(fp16.hadd) and callable(fp16.__half2float)


def test_kernels_link_the_shim(tmp_path, tdrv):
    mod = load_kernels(tmp_path, cuda)
    x, y, z = inputs()
    run(mod, cuda, x, y, z)  # NVRTC compiles the wrappers once; every kernel links them
    assert tdrv.last_launch().function.decode().startswith("_ZN")


@pytest.mark.gpu
def test_fp16_results_match_numba_cuda_bit_for_bit(gpu, tmp_path):
    mod = load_kernels(tmp_path, cuda)
    x, y, z = inputs()
    mine = run(mod, cuda, x, y, z)
    # a few facts of IEEE half arithmetic, independent of either library
    add = mine["binary"][BINARY.index("hadd")]
    with np.errstate(over="ignore", invalid="ignore"):
        total = x + y
    finite = np.isfinite(x) & np.isfinite(y) & np.isfinite(total)
    np.testing.assert_array_equal(add[finite], total[finite])
    np.testing.assert_array_equal(mine["isnan"], np.isnan(x))
    np.testing.assert_array_equal(mine["fl"], x.astype(np.float32))
    pytest.importorskip("numba")
    theirs = numba_side("test_fp16", f"t.run(t.load_kernels(pathlib.Path({str(tmp_path)!r}), "
                        "cuda), cuda, *t.inputs())", tmp_path / "numba.npz")
    assert_same_bits(mine, theirs)


LTO_SOURCE = """
def hadd_scalar(ary, a, b):
    ary[0] = cuda.fp16.hadd(a, b)


def hfma_scalar(ary, a, b, c):
    ary[0] = cuda.fp16.hfma(a, b, c)
"""


def lto_kernels(lib, mod):
    return (lib.jit("void(float16[:], float16, float16)", lto=True)(mod.hadd_scalar),
            lib.jit("void(float16[:], float16, float16, float16)", lto=True)(mod.hfma_scalar))


def test_lto_kernels_link_by_nvjitlink_and_show_their_ptx(tmp_path, tdrv):
    """numba-cuda's jit(lto=True): the kernel is LTO-IR, nvJitLink links it with the fp16
    wrappers (their calls inlined: no call left in the PTX inspect_lto_ptx shows), and the
    launch loads what it made. Without lto, inspect_lto_ptx is numba's RuntimeError."""
    mod = load_kernel_module(tmp_path, "fp16_lto", LTO_SOURCE, cuda)
    hadd, hfma = lto_kernels(cuda, mod)
    sig = (cuda.float16[:], cuda.float16, cuda.float16)
    assert isinstance(hadd.inspect_asm(sig), bytes)  # LTO-IR
    ptx = hadd.inspect_lto_ptx(sig)
    assert "add.f16" in ptx and "call" not in ptx.split(".entry")[1]
    assert "fma.rn.f16" in "".join(hfma.inspect_lto_ptx().values())
    out = np.zeros(1, np.float16)
    hadd[1, 1](out, np.float16(1.5), np.float16(2.25))
    lazy = cuda.jit(lto=True)(mod.hadd_scalar)
    lazy[1, 1](out, np.float16(1), np.float16(2))
    assert key_texts(lazy.inspect_lto_ptx()) == ["void(float16[::1], float16, float16)"]
    plain = cuda.jit("void(float16[:], float16, float16)")(mod.hadd_scalar)
    with pytest.raises(RuntimeError, match="LTO is not enabled"):
        plain.inspect_lto_ptx(sig)


@pytest.mark.gpu
def test_lto_kernels_match_numba_cuda(gpu, tmp_path):
    import numba.cuda as ncuda
    values = np.array([1.5, -2.25, 65504, 6e-5, np.inf], np.float16)
    results = []
    for lib in (cuda, ncuda):
        hadd, hfma = lto_kernels(lib, load_kernel_module(tmp_path, f"lto_{id(lib)}",
                                                         LTO_SOURCE, lib))
        got = []
        for a in values:
            for b in values:
                out = np.zeros(2, np.float16)
                hadd[1, 1](out[:1], a, b)
                hfma[1, 1](out[1:], a, b, np.float16(0.5))
                got.append(out)
        results.append(np.array(got))
    assert_same_bits({"lto": results[0]}, {"lto": results[1]})
    np.testing.assert_array_equal(results[0][1, 0], np.float16(1.5) + np.float16(-2.25))


def test_missing_nvrtc_is_a_linker_error(run_py, tmp_path):
    """The fp16 wrappers need NVRTC: when it cannot be loaded, loading a kernel that calls them
    is a LinkerError naming where NVRTC was looked for (no crash, nothing half-loaded)."""
    code = """
import numpy as np
import nbcuda as cuda

@cuda.jit("void(float16[::1])")
def k(a):
    a[0] = cuda.fp16.hsqrt(a[0])

a = cuda.to_device(np.ones(1, np.float16))
try:
    k[1, 1](a)
except cuda.LinkerError as e:
    assert "NVRTC cannot be found or loaded (searched NBCUDA_NVRTC=/nonexistent" in str(e), e
else:
    raise SystemExit("no LinkerError")
"""
    path = str(tmp_path / "fp16_no_nvrtc.py")  # the compiler reads the kernel's source file
    with open(path, "w") as f:
        f.write(code)
    run_py(f"exec(compile(open({path!r}).read(), {path!r}, 'exec'))",
           env={"NBCUDA_NVRTC": "/nonexistent/libnvrtc.so"})
