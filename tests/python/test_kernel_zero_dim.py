"""0-d arrays in kernels, as numba has them: numba's Array(dtype, 0, 'C'), printed and spelled
in signatures "array(float32, 0d, C)" (slices cannot spell it), as kernel arguments (device
arrays of shape (), numpy 0-d arrays copied there and back, lazily typed), read and written as
`a[()]`, with size 1 and ndim 0 (atomics too, which numba-cuda 0.30.4 does not type); a
captured global 0-d device array; a 0-d array of integers as an index, the integer it holds
(numba's "0-d array used as integer index"). CI: the signature, the
PTX (numba's mangled name and parameters), the launches on the test driver; the GPU compares
with numpy and numba-cuda."""
import numpy as np
import pytest

import nbcuda as cuda
from nbcuda import types
from conftest import assert_same_as_numba_cuda, load_kernel_module, sig_texts
from test_compile import compile_checked

SOURCE = '''
import numpy as np


def scale(out, a, k):
    out[()] = a[()] * k + a.size + a.ndim


def pick(out, a, m, i, j):
    out[0] = a[i]  # 0-d integer arrays (numpy.asarray of a Python int) index as integers
    out[1] = m[i, j]
    row = m[j]
    out[2] = row[i] + m[j, 1:][i]


def accumulate(total, v):
    i = cuda.grid(1)
    if i < v.size:
        cuda.atomic.add(total, (), v[i])
'''

SIG = "void(array(float64, 0d, C), array(float32, 0d, C), float64)"


@pytest.fixture
def m(tmp_path):
    return load_kernel_module(tmp_path, "zero_dim", SOURCE, cuda)


def test_signatures_and_types(m, tmp_path):
    t = types.Array(types.float32, 0, "C")
    assert str(t) == "array(float32, 0d, C)" and t.ndim == 0
    assert cuda.void(t).signature_text == "void(array(float32, 0d, C))"
    ptx = compile_checked(m.scale, SIG, tmp_path)
    # numba-cuda 0.30.4's name and parameters: 5 per 0-d array (no shape, no strides)
    assert "5ArrayIdLi0E1C7mutable7alignedE5ArrayIfLi0E1C7mutable7alignedEd" in ptx
    assert ptx.count(".param .u64") + ptx.count(".param .f64") == 11


def run_all(lib, m, nbcuda_only=True):
    # type objects: numba-cuda's signature strings cannot spell a 0-d array
    t = lib.types
    sig = (t.Array(t.float64, 0, "C"), t.Array(t.float32, 0, "C"), t.float64)
    out = lib.device_array((), np.float64)
    lib.jit(sig)(m.scale)[1, 1](out, lib.to_device(np.array(2.5, np.float32)), 4.0)
    host = np.array(0.0)
    lazy = lib.jit(m.scale)
    lazy[1, 1](host, np.array(1.5, np.float32), 2.0)  # host 0-d arrays, copied back
    picked = lib.device_array(3, np.float64)
    lib.jit(m.pick)[1, 1](picked, np.arange(10.0), np.arange(50.0).reshape(5, 10),
                          np.asarray(4), np.array(2, np.uint8))
    result = {"scale": out.copy_to_host(), "host": host, "pick": picked.copy_to_host()}
    if nbcuda_only:  # numba-cuda 0.30.4 types no atomic on a 0-d array
        total = lib.to_device(np.array(0.0))
        lib.jit(m.accumulate)[4, 64](total, lib.to_device(np.arange(200.0)))
        result["total"] = total.copy_to_host()
    return result


def test_zero_dim_integer_arrays_index_as_integers(m, tmp_path):
    sig = ("void(float64[::1], float64[::1], float64[:, ::1], array(int64, 0d, C), "
           "array(uint8, 0d, A))")
    compile_checked(m.pick, sig, tmp_path)
    for bad in ("array(float64, 0d, C)", "array(int64, 1d, C)"):
        with pytest.raises(cuda.TypingError, match="array index must be an integer, not "
                           + bad.replace("(", r"\(").replace(")", r"\)")):
            cuda.compile_ptx(m.pick, sig.replace("array(int64, 0d, C)", bad), cc=(7, 5))


def test_launches_on_the_test_driver(m, tdrv):
    run_all(cuda, m)
    lazy = cuda.jit(m.scale)
    lazy[1, 1](cuda.device_array((), np.float64), np.array(1.5, np.float32), 2.0)
    assert sig_texts(lazy) == ["void(array(float64, 0d, C), array(float32, 0d, C), float64)"]
    assert list(lazy.overloads)[0][0] == types.Array(types.float64, 0, "C")


G0 = None


def test_a_captured_global(tdrv):
    global G0
    G0 = cuda.to_device(np.array(42.0, np.float32))

    def kernel_0d(output):
        output[()] = G0[()] * 2.0
    ptx, _ = cuda.compile_ptx(kernel_0d, "void(array(float32, 0d, C))", cc=(9, 0))
    assert "ld.global.f32" in ptx or "ld.f32" in ptx


@pytest.mark.gpu
def test_matches_numpy_and_numba_cuda(gpu, tmp_path, m):
    mine = run_all(cuda, m)
    assert mine["scale"] == 2.5 * 4.0 + 1 and mine["host"] == 1.5 * 2.0 + 1
    assert list(mine["pick"]) == [4.0, 42.0, 24.0 + 25.0]
    assert mine.pop("total") == np.arange(200.0).sum()
    assert_same_as_numba_cuda(lambda lib, m: run_all(lib, m, nbcuda_only=False), SOURCE,
                              tmp_path, "zero_dim_numba", mine)
