"""round(x, ndigits) in kernels, as numba-cuda lowers it (cudaimpl.py's round_to_impl, CPython's
fallback double_round: scale by 10**ndigits, llrint, halfway cases to even, scale back). CI
checks the typing and the PTX; on the GPU the results over float32 and float64 values and
ndigits from -4 to 25 are compared with numba-cuda's bit for bit and, where the scaled value
fits llrint, with Python's round."""
import numpy as np
import pytest

import nbcuda as cuda
from conftest import assert_same_bits, load_kernel_module, numba_side
from test_compile import check_ptx

KERNELS = '''
def rounded(out, x, nd):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = round(x[i], nd[i])
'''

NDIGITS = np.arange(-4, 26)


def values():
    rng = np.random.default_rng(7)
    base = np.concatenate([
        rng.uniform(-1e4, 1e4, 200), rng.uniform(-1, 1, 200),
        np.array([0.5, 1.5, 2.5, -0.5, 0.125, 0.375, 1.005, 2.675, 1e300, -1e300, 1e-300,
                  0.0, -0.0, np.inf, -np.inf, np.nan, 123456.789, 5e-324]),
    ])
    return np.repeat(base, NDIGITS.size), np.tile(NDIGITS, base.size)


def results(cuda_module, directory):
    mod = load_kernel_module(directory, "round_kernels", KERNELS, cuda_module)
    x, nd = values()
    out = {}
    for dt in ("float64", "float32"):
        k = cuda_module.jit(f"void({dt}[::1], {dt}[::1], int64[::1])")(mod.rounded)
        xs = x.astype(dt)
        d = cuda_module.device_array(xs.size, dt)
        k[(xs.size + 127) // 128, 128](d, cuda_module.to_device(xs), cuda_module.to_device(nd))
        out[dt] = d.copy_to_host()
    return out


def test_typing_and_ptx(tmp_path):
    mod = load_kernel_module(tmp_path, "round_kernels", KERNELS, cuda)
    for dt in ("float64", "float32"):
        ptx, _ = cuda.compile_ptx(mod.rounded, f"void({dt}[::1], {dt}[::1], int64[::1])",
                                  cc=(9, 0))
        check_ptx(ptx, tmp_path)
    src = "def f(x, n):\n    return round(x, n)\n"
    m = load_kernel_module(tmp_path, "round_types", src, cuda)
    assert str(cuda.compile(m.f, "(float32, int32)")[1]) == "float32"
    assert str(cuda.compile(m.f, "(float64, int64)")[1]) == "float64"


@pytest.mark.gpu
def test_round_ndigits_matches_numba_cuda(gpu, tmp_path):
    mine = results(cuda, tmp_path)
    x, nd = values()
    py = np.array([round(float(a), int(n)) for a, n in zip(x, nd)])
    # CPython rounds correctly (dtoa); the fallback numba follows may differ in the last digit,
    # and its llrint saturates where x * 10**ndigits passes 2**63 (numba-cuda's results too):
    # compared with Python where the scaled value stays well inside
    with np.errstate(over="ignore"):
        finite = np.isfinite(py) & (np.abs(x) * 10.0 ** nd.astype(float) < 1e15)
    unit = 10.0 ** (-nd[finite].astype(float))
    diff = np.abs(mine["float64"][finite] - py[finite])
    assert (diff <= unit * (1 + 1e-9) + np.abs(py[finite]) * 1e-15).all()
    np.testing.assert_array_equal(np.isnan(mine["float64"]), np.isnan(py))
    # the scaled value past 2**63: the saturated llrint, as numba-cuda (compared below)
    theirs = numba_side("test_round_ndigits",
                        f"t.results(cuda, pathlib.Path({str(tmp_path)!r}))",
                        tmp_path / "numba.npz")
    assert_same_bits(mine, theirs)
