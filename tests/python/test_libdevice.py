"""numba.cuda.libdevice in kernels: libdevice's 317 functions with numba-cuda's signatures
(tools/gen_libdevice.py), reached as cuda.libdevice.f, through `from nbcuda import libdevice`
or `from nbcuda.libdevice import f`, and numba's own module; functions that store extra results
through pointers return tuples, as in numba. CI compiles; the gpu test compares results with
numpy and numba-cuda (in a fresh interpreter)."""
import inspect
import math
import subprocess
import sys

import pytest

np = pytest.importorskip("numpy")
import nbcuda as cuda  # noqa: E402
from nbcuda import libdevice  # noqa: E402
from nbcuda.libdevice import fast_expf, sincosf  # noqa: E402

SIG = "void(float32[:], int32[:], float32[:])"


def kernel(out, iout, x):
    i = cuda.grid(1)
    if i < x.size:
        s, c = sincosf(x[i])
        m, e = cuda.libdevice.frexpf(x[i])
        out[i] = fast_expf(x[i] * 0.5) + s * c + m + libdevice.fmaf(x[i], 2, 1)
        iout[i] = e + libdevice.popc(i) + libdevice.byte_perm(i, 7, 0x3210) + \
            libdevice.float2int_rz(libdevice.floorf(x[i]))


def test_the_namespace_and_its_functions():
    assert cuda.libdevice is libdevice and "libdevice" in repr(libdevice)
    assert libdevice.fast_expf is fast_expf
    with pytest.raises(NotImplementedError):
        fast_expf(1.0)


def test_kernel_compiles_and_passes_ptxas():
    ptx, _ = cuda.compile_ptx(kernel, SIG, cc=(9, 0))
    assert ".visible .entry" in ptx and "ex2.approx" in ptx  # fast_expf is ex2.approx
    assert "popc.b32" in ptx and "prmt.b32" in ptx


def test_typing_follows_numbas_signatures():
    with pytest.raises(cuda.TypingError, match="Invalid use of cuda.libdevice.fast_expf"):
        cuda.compile_ptx(lambda a: libdevice.fast_expf(a, a), "float32(float32)", device=True)
    with pytest.raises(cuda.TypingError, match="unsupported attribute 'cuda.libdevice.nope'"):
        cuda.compile_ptx(lambda a: libdevice.nope(a), "float32(float32)", device=True)
    # float64 does not convert to float32 safely, but numba's concrete signatures convert
    # any number (as numba's ConcreteTemplate): expf(float64) is float32
    _, resty = cuda.compile_ptx(lambda a: libdevice.expf(a), "(float64,)", device=True)
    assert str(resty) == "float32"
    _, resty = cuda.compile_ptx(lambda a: libdevice.sincos(a), "(float64,)", device=True)
    assert str(resty) == "UniTuple(float64 x 2)"
    _, resty = cuda.compile_ptx(lambda a: libdevice.frexp(a), "(float64,)", device=True)
    assert str(resty) == "Tuple(float64, int32)"


def test_numbas_module_is_recognised():
    ncuda = pytest.importorskip("numba.cuda")
    from numba.cuda import libdevice as nlib

    def f(a):
        return nlib.fast_expf(a) + ncuda.libdevice.sinf(a)

    _, resty = cuda.compile_ptx(f, "(float32,)", device=True)
    assert str(resty) == "float32"


NUMBA_SIDE = """
import numpy as np
for old, new in (("row_stack", "vstack"), ("in1d", "isin"), ("trapz", "trapezoid")):
    if not hasattr(np, old) and hasattr(np, new):
        setattr(np, old, getattr(np, new))
from numba import cuda
from numba.cuda import libdevice
from numba.cuda.libdevice import fast_expf, sincosf
exec({source!r})  # this file's kernel, with numba's names
x = np.linspace(-5, 5, 777).astype(np.float32)
out, iout = np.zeros(777, np.float32), np.zeros(777, np.int32)
cuda.jit({sig!r})(kernel)[4, 256](out, iout, x)
np.savez({path!r}, out=out, iout=iout)
"""


@pytest.mark.gpu
def test_results_match_numba_cuda(gpu, tmp_path):
    x = np.linspace(-5, 5, 777).astype(np.float32)
    out, iout = np.zeros(777, np.float32), np.zeros(777, np.int32)
    cuda.jit(SIG)(kernel)[4, 256](out, iout, x)
    m, e = np.frexp(x)
    np.testing.assert_allclose(out, np.exp(x * 0.5) + np.sin(x) * np.cos(x) + m + (x * 2 + 1),
                               rtol=1e-4, atol=1e-4)
    popc = np.array([bin(i).count("1") for i in range(777)])
    np.testing.assert_array_equal(iout, e + popc + np.arange(777) + np.floor(x).astype(np.int32))
    pytest.importorskip("numba")
    path = tmp_path / "numba.npz"
    code = NUMBA_SIDE.format(source=inspect.getsource(kernel), sig=SIG, path=str(path))
    p = subprocess.run([sys.executable, "-c", code],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"numba-cuda side failed:\n{p.stdout}\n{p.stderr}"
    theirs = np.load(path)
    np.testing.assert_array_equal(out, theirs["out"])
    np.testing.assert_array_equal(iout, theirs["iout"])
    assert math.isfinite(float(out.sum()))
