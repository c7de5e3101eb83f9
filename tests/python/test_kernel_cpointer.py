"""numba's CPointer in kernels: `types.CPointer(types.uint8)` (printed `uint8*`, spelled
"CPointer(uint8)" or "uint8*" in signatures) is an address of numbers; a kernel argument of
that type takes an int address (numba-cuda's doc example "cpointer" passes a device array's
`__cuda_array_interface__["data"][0]`), `p[i]` reads and writes element i without bounds,
device functions take pointers, and declared functions (`declare_device`) take them as
CPointer parameters. CI: the kernels compile with numba-cuda's symbol names, ptxas accepts
them, misuse gets clear errors; the GPU compares with numpy and numba-cuda."""
import os

import numpy as np
import pytest

import nbcuda as cuda
from nbcuda import types
from conftest import load_kernel_module
from test_compile import check_ptx

FUNCTIONS_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "doc_examples_ffi",
                            "functions.cu")

SOURCE = '''
@cuda.jit(device=True)
def second(p):
    return p[1]


def add_one(x, n):
    i = cuda.grid(1)
    if i < n:
        x[i] += 1


def mixed(dst, src, n, out):
    i = cuda.grid(1)
    if i < n:
        dst[i] = src[i] * 2          # float64 -> float32 as an array store converts
        out[i] = second(src) + src[n - 1 - i]
    if i == 0:
        dst[-1 + 1] = -7.5           # a negative index is an offset, not wrapped


def reduce_by_pointer(result, data, n):
    result[0] = sum_reduce(data, n)
'''


def signatures():
    return {
        "add_one": types.void(types.CPointer(types.uint8), types.uint32),
        "mixed": "void(CPointer(float32), CPointer(float64), int64, float64[::1])",
        "reduce_by_pointer": "void(float32[::1], CPointer(float32), int32)",
    }


@pytest.fixture
def kernels(tmp_path):
    m = load_kernel_module(tmp_path, "cpointer", SOURCE, cuda)
    m.sum_reduce = cuda.declare_device("sum_reduce", "float32(CPointer(float32), int32)",
                                       link=FUNCTIONS_CU)
    return m


def test_types_print_and_parse_as_numba():
    p = types.CPointer(types.uint8)
    assert str(p) == repr(p) == "uint8*"
    assert str(types.void(p, types.uint32)) == "(uint8*, uint32) -> none"
    assert types.CPointer(types.float32) == types.CPointer(cuda.float32)
    with pytest.raises(TypeError, match="CPointer takes a scalar type"):
        types.CPointer(cuda.float32[:])


def test_printed_form_parses(kernels, tmp_path):
    # numba's own CPointer objects print "float64*": signatures made of them read back
    a, _ = cuda.compile_ptx(kernels.mixed, signatures()["mixed"], cc=(9, 0))
    b, _ = cuda.compile_ptx(kernels.mixed, "void(float32*, float64 *, int64, float64[::1])",
                            cc=(9, 0))
    assert a == b


@pytest.mark.parametrize("name", ["add_one", "mixed", "reduce_by_pointer"])
def test_compiles_with_numbas_names_and_ptxas_accepts(kernels, name, tmp_path):
    ptx, resty = cuda.compile_ptx(getattr(kernels, name), signatures()[name], cc=(9, 0))
    assert str(resty) == "none"
    if name == "reduce_by_pointer":  # sum_reduce is functions.cu's: linked when loaded
        k = cuda.jit(signatures()[name])(kernels.reduce_by_pointer)
        data = cuda.to_device(np.ones(4, np.float32))
        k[1, 1](cuda.device_array(1, np.float32), data.device_pointer, 4)  # NVRTC, nvJitLink
        return
    check_ptx(ptx, tmp_path)
    if name == "add_one":  # numba-cuda mangles the pointer by its name: 8uint8_2a
        assert "7add_oneB2v1E8uint8_2aj(" in ptx.replace("\n", "")
        assert "ld.global.u8" in ptx and "st.global.u8" in ptx


def test_eager_kernel_takes_an_int_address(kernels):
    k = cuda.jit(signatures()["add_one"])(kernels.add_one)
    x = cuda.to_device(np.arange(10, dtype=np.uint8))
    k[1, 32](x.__cuda_array_interface__["data"][0], len(x))  # the test driver runs no code
    k[1, 32](np.uint64(x.device_pointer), 10)
    with pytest.raises(TypeError, match=r"argument 1: expected uint8\*, an address"):
        k[1, 32](1.5, 10)
    with pytest.raises(TypeError, match=r"argument 1: expected uint8\*, an address"):
        k[1, 32](x, 10)
    with pytest.raises(TypeError, match=r"argument 1: expected uint8\*, an address"):
        k[1, 32](-1, 10)


MISUSE = '''
def sliced(p):
    q = p[1:3]


def two_indices(p):
    p[0, 1] = 1


def complex_store(p):
    p[0] = 1j


def float_index(p):
    p[0.5] = 1
'''


@pytest.mark.parametrize("name, message", [
    ("sliced", r"a pointer \(float32\*\) is indexed by one integer"),
    ("two_indices", r"a pointer \(float32\*\) is indexed by one integer"),
    ("complex_store", r"Cannot convert complex128 to float32 in a pointer assignment"),
    ("float_index", "array index must be an integer, not float64"),
])
def test_misuse_is_a_clear_error(tmp_path, name, message):
    m = load_kernel_module(tmp_path, "cpointer_misuse", MISUSE, cuda)
    with pytest.raises(cuda.TypingError, match=message):
        cuda.compile_ptx(getattr(m, name), "void(CPointer(float32))", cc=(9, 0))


@pytest.mark.parametrize("sig, message", [
    ("void(CPointer(float32[:]))", "CPointer of other than a number"),
    ("void(CPointer float32)", "expected '\\(' after CPointer"),
    ("void(float32[:]*)", "expected"),
])
def test_bad_pointer_signatures(sig, message):
    with pytest.raises(cuda.TypingError, match=message):
        cuda.compile_ptx(lambda p: None, sig, cc=(9, 0))


def test_declared_functions_take_pointers(kernels):
    with pytest.raises(cuda.TypingError, match=r"cannot pass a value of type float64\* to "
                       r"'sum_reduce' as float32\*"):
        cuda.compile_ptx(kernels.reduce_by_pointer,
                         "void(float32[::1], CPointer(float64), int32)", cc=(9, 0))
    with pytest.raises(TypeError, match="must take scalars and CPointer"):
        cuda.declare_device("f", "float32(float32[:])")


def run_all(lib, m):
    out = {}
    x = lib.to_device(np.arange(10, dtype=np.uint8))
    lib.jit(signatures()["add_one"] if lib is cuda else
            "void(CPointer(uint8), uint32)")(m.add_one)[1, 32](
        x.__cuda_array_interface__["data"][0], len(x))
    out["add_one"] = x.copy_to_host()
    src = np.linspace(-2.0, 3.0, 16)
    dsrc, ddst = lib.to_device(src), lib.to_device(np.zeros(16, np.float32))
    res = lib.to_device(np.zeros(16))
    lib.jit(signatures()["mixed"])(m.mixed)[1, 32](ddst.device_ctypes_pointer.value,
                                                     dsrc.device_ctypes_pointer.value, 16, res)
    out["mixed_dst"], out["mixed_out"] = ddst.copy_to_host(), res.copy_to_host()
    data = lib.to_device(np.arange(100, dtype=np.float32) / 7)
    result = lib.to_device(np.zeros(1, np.float32))
    lib.jit(signatures()["reduce_by_pointer"])(m.reduce_by_pointer)[1, 1](
        result, data.__cuda_array_interface__["data"][0], 100)
    out["reduce"] = result.copy_to_host()
    return out


@pytest.mark.gpu
def test_pointers_match_numpy_and_numba_cuda(gpu, tmp_path, kernels):
    mine = run_all(cuda, kernels)
    np.testing.assert_array_equal(mine["add_one"], np.arange(1, 11, dtype=np.uint8))
    src = np.linspace(-2.0, 3.0, 16)
    expect_dst = (src * 2).astype(np.float32)
    expect_dst[0] = -7.5
    np.testing.assert_array_equal(mine["mixed_dst"], expect_dst)
    np.testing.assert_array_equal(mine["mixed_out"], src[1] + src[::-1])
    np.testing.assert_allclose(mine["reduce"], [np.sum(np.arange(100) / 7)], rtol=1e-6)
    ncuda = pytest.importorskip("numba.cuda")
    m = load_kernel_module(tmp_path, "cpointer_numba", SOURCE, ncuda)
    m.sum_reduce = ncuda.declare_device("sum_reduce", "float32(CPointer(float32), int32)",
                                        link=FUNCTIONS_CU)
    theirs = run_all(ncuda, m)
    for key in mine:
        np.testing.assert_array_equal(mine[key], theirs[key], err_msg=key)
