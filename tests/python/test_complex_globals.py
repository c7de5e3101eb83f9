"""Complex module globals read in a kernel (issue: real programs, item 2), frozen as numba
freezes them: Python's complex (1j, complex(a, b)) is complex128, numpy scalars keep their type
(np.complex64 complex64, np.complex128 complex128), tuples of them are tuples of constants.
Each case's result type and the integer immediates its PTX stores (the constants' bits) were
recorded from numba-cuda 0.30.4's compile_ptx(..., cc=(9, 0)); where numba-cuda is installed
the test asks it again. On the GPU the values are compared with numba-cuda's."""
import re

import numpy as np
import pytest

from conftest import load_kernel_module

SOURCE = '''
import numpy as np
C64 = np.complex64(1j)
C64B = np.complex64(0.1 + 0.2j)
C128 = np.complex128(1.5 - 2.25j)
PY = 1j
PYC = complex(3, -4)
TUP = (1j, 2)


def k64(x):
    return C64 * x


def k64b():
    return C64B


def k128():
    return C128


def kpy():
    return PY


def kpyc(x):
    return PYC + x


def ktup():
    return TUP[0] * TUP[1]


def kpart():
    return PYC.real + C64.imag


def kernel(out):
    out[0] = C64B
    out[1] = C128
    out[2] = PYC + PY
    out[3] = TUP[0] * TUP[1]
    out[4] = kpart()
'''

# (function, signature) -> (numba-cuda's result type, the immediates of its PTX's mov.u32/u64)
NUMBA = {
    ("k64", "(float32,)"): ("complex64", []),
    ("k64", "(float64,)"): ("complex128", []),
    ("k64b", "()"): ("complex64", ["1036831949", "1045220557"]),
    ("k128", "()"): ("complex128", ["-4611123068473966592", "4609434218613702656"]),
    ("kpy", "()"): ("complex128", ["4607182418800017408"]),
    ("kpyc", "(int32,)"): ("complex128", ["-4607182418800017408"]),
    ("ktup", "()"): ("complex128", ["4611686018427387904"]),
    ("kpart", "()"): ("float64", ["4616189618054758400"]),
}


def _answer(compile_ptx, mod, name, sig):
    ptx, resty = compile_ptx(getattr(mod, name), sig, device=True, cc=(9, 0))
    nonzero = {v for v in re.findall(r"mov\.u(?:32|64)\s+%r[d]?\d+, (-?\d+);", ptx) if v != "0"}
    return str(resty), sorted(nonzero)


@pytest.mark.parametrize("name,sig", sorted(NUMBA))
def test_types_and_constants_are_numbas(cuda, tmp_path, name, sig):
    mod = load_kernel_module(tmp_path, "complex_globals", SOURCE, cuda)
    resty, immediates = _answer(cuda.compile_ptx, mod, name, sig)
    want_type, want_immediates = NUMBA[(name, sig)]
    assert (resty, immediates) == (want_type, want_immediates)


def test_numba_cuda_agrees(cuda, tmp_path):
    ncuda = pytest.importorskip("numba.cuda")
    mine = load_kernel_module(tmp_path, "cg_mine", SOURCE, cuda)
    theirs = load_kernel_module(tmp_path, "cg_theirs", SOURCE, ncuda)
    for name, sig in sorted(NUMBA):
        assert _answer(cuda.compile_ptx, mine, name, sig) == \
            _answer(ncuda.compile_ptx, theirs, name, sig), (name, sig)


def test_a_kernel_with_complex_globals_compiles(cuda, tmp_path):
    mod = load_kernel_module(tmp_path, "complex_globals", SOURCE, cuda)
    ptx, _ = cuda.compile_ptx(mod.kernel, "void(complex128[::1])", cc=(9, 0))
    assert ".entry" in ptx


@pytest.mark.gpu
def test_values_are_numbas(gpu, cuda, tmp_path):
    out = np.zeros(5, np.complex128)
    cuda.jit(load_kernel_module(tmp_path, "complex_globals", SOURCE, cuda).kernel)[1, 1](out)
    ncuda = pytest.importorskip("numba.cuda")
    want = np.zeros(5, np.complex128)
    ncuda.jit(load_kernel_module(tmp_path, "cg_numba", SOURCE, ncuda).kernel)[1, 1](want)
    assert out.tolist() == want.tolist()
    assert out[1] == 1.5 - 2.25j and out[2] == 3 - 3j
