"""Global device arrays in kernels, captured by pointer as numba-cuda captures them: a
DeviceNDArray (or any object with __cuda_array_interface__) named by a kernel becomes its
address, shape and strides, constants in the code; the kernel reads and writes that memory,
sees what the host copies into it later, and keeps the array alive. CI: the PTX holds the
address, ptxas accepts it, the kernel holds the array, read-only interfaces and records get
clear errors; the GPU compares the results with numpy and numba-cuda (whose doc example
"globals_device_array_capture" this follows)."""
import gc
import sys

import numpy as np
import pytest

import nbcuda as cuda
import conftest
from conftest import load_kernel_module
from test_compile import check_ptx

SOURCE = '''
import numpy as np

PRICES = cuda.to_device(np.array([10.0, 25.0, 5.0, 15.0, 30.0], dtype=np.float32))
GRID = cuda.to_device(np.arange(12, dtype=np.int32).reshape(3, 4))
COLUMN = GRID[:, 1]
FORTRAN = cuda.to_device(np.asfortranarray(np.arange(6.0).reshape(2, 3)))


def totals(quantities, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = quantities[i] * PRICES[i]


def views(out):
    i = cuda.grid(1)
    if i < COLUMN.size:
        out[i, 0] = COLUMN[i] + GRID.shape[1] * 100 + COLUMN.strides[0] * 1000
        out[i, 1] = FORTRAN[i % 2, i] + FORTRAN.strides[1]
        GRID[i, 0] = -i          # writes land in the global's memory
'''

TOTALS_SIG = "void(float32[::1], float32[::1])"
VIEWS_SIG = "void(float64[:, ::1])"


@pytest.fixture
def kernels(tmp_path):
    return load_kernel_module(tmp_path, "device_globals", SOURCE, cuda)


def test_ptx_holds_the_address_and_ptxas_accepts_it(kernels, tmp_path):
    ptx, resty = cuda.compile_ptx(kernels.totals, TOTALS_SIG, cc=(9, 0))
    assert str(kernels.PRICES.device_pointer) in ptx and str(resty) == "none"
    check_ptx(ptx, tmp_path)
    ptx, _ = cuda.compile_ptx(kernels.views, VIEWS_SIG, cc=(9, 0))
    # the column view: its own address, its 16-byte stride folded into the addressing
    assert str(kernels.COLUMN.device_pointer) in ptx
    assert kernels.COLUMN.device_pointer == kernels.GRID.device_pointer + 4
    check_ptx(ptx, tmp_path)


def test_kernel_keeps_the_array_alive(kernels):
    k = cuda.jit(VIEWS_SIG)(kernels.views)
    column = kernels.COLUMN
    before = sys.getrefcount(column)
    k2 = cuda.jit(VIEWS_SIG)(kernels.views)
    assert sys.getrefcount(column) == before + 1  # the new kernel's reference
    del k2
    gc.collect()
    assert sys.getrefcount(column) == before
    del k


def test_later_copies_are_seen_not_frozen(kernels):
    # captured by pointer: the code holds the address, not the values
    ptx_before, _ = cuda.compile_ptx(kernels.totals, TOTALS_SIG, cc=(9, 0))
    kernels.PRICES.copy_to_device(np.array([20.0, 50.0, 10.0, 30.0, 60.0], np.float32))
    ptx_after, _ = cuda.compile_ptx(kernels.totals, TOTALS_SIG, cc=(9, 0))
    strip = lambda p: [line for line in p.splitlines() if "_ZN" not in line]  # noqa: E731
    assert strip(ptx_before) == strip(ptx_after)


def test_arrays_of_a_reset_context_are_refused(tmp_path):
    # the code holds the address: after close() (the context reset) the memory is gone, and
    # loading the kernel in the new context says so instead of reading freed memory
    if not conftest.USING_TESTDRIVER:  # a reset under numba-cuda's in-process contexts
        pytest.skip("resets the device: run against the test driver")
    m = load_kernel_module(tmp_path, "device_globals_reset", SOURCE, cuda)
    k = cuda.jit(TOTALS_SIG)(m.totals)
    q, t = cuda.to_device(np.ones(5, np.float32)), cuda.device_array(5, np.float32)
    k[1, 32](q, t)
    cuda.close()
    q, t = cuda.to_device(np.ones(5, np.float32)), cuda.device_array(5, np.float32)
    with pytest.raises(cuda.CudaAPIError, match="CONTEXT_IS_DESTROYED"):
        k[1, 32](q, t)
    m.PRICES = cuda.to_device(np.ones(5, np.float32))  # a new global: a new compilation
    cuda.jit(TOTALS_SIG)(m.totals)[1, 32](q, t)


class ReadOnly:
    """A third-party device array whose interface says read-only (data = (ptr, True))."""

    def __init__(self, d):
        self._d = d
        cai = dict(d.__cuda_array_interface__)
        cai["data"] = (cai["data"][0], True)
        self.__cuda_array_interface__ = cai


MISUSE = '''
import numpy as np

RO = None
RECORDS = cuda.to_device(np.zeros(3, dtype=[("a", np.int32), ("b", np.float64)]))


def write_read_only(out):
    RO[0] = out[0]


def read_read_only(out):
    out[0] = RO[1]


def records(out):
    out[0] = RECORDS[0].a
'''


def test_read_only_interfaces_and_records(tmp_path):
    m = load_kernel_module(tmp_path, "device_globals_misuse", MISUSE, cuda)
    m.RO = ReadOnly(cuda.to_device(np.arange(4.0)))
    ptx, _ = cuda.compile_ptx(m.read_read_only, "void(float64[::1])", cc=(9, 0))
    check_ptx(ptx, tmp_path)
    with pytest.raises(cuda.TypingError, match="read-only"):
        cuda.compile_ptx(m.write_read_only, "void(float64[::1])", cc=(9, 0))
    with pytest.raises(cuda.TypingError, match="Untyped global name 'RECORDS': Cannot determine Numba type of"):
        cuda.compile_ptx(m.records, "void(float64[::1])", cc=(9, 0))


@pytest.mark.gpu
def test_device_globals_match_numpy_and_numba_cuda(gpu, tmp_path):
    ncuda = pytest.importorskip("numba.cuda")
    results = {}
    for name, lib in (("nbcuda", cuda), ("numba", ncuda)):
        m = load_kernel_module(tmp_path, f"device_globals_{name}", SOURCE, lib)
        q = lib.to_device(np.ones(5, np.float32))
        t = lib.device_array(5, np.float32)
        totals = lib.jit(TOTALS_SIG)(m.totals)
        totals[1, 32](q, t)
        first = t.copy_to_host()
        m.PRICES.copy_to_device(np.array([20.0, 50.0, 10.0, 30.0, 60.0], np.float32))
        totals[1, 32](q, t)
        second = t.copy_to_host()
        out = lib.to_device(np.zeros((3, 2)))
        lib.jit(VIEWS_SIG)(m.views)[1, 32](out)
        results[name] = (first, second, out.copy_to_host(), m.GRID.copy_to_host())
    first, second, views, grid = results["nbcuda"]
    np.testing.assert_array_equal(first, [10.0, 25.0, 5.0, 15.0, 30.0])
    np.testing.assert_array_equal(second, [20.0, 50.0, 10.0, 30.0, 60.0])
    g = np.arange(12, dtype=np.int32).reshape(3, 4)
    f = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    expect = np.array([[g[i, 1] + 400 + 16000, f[i % 2, i] + 16] for i in range(3)])
    np.testing.assert_array_equal(views, expect)
    g[:, 0] = [0, -1, -2]
    np.testing.assert_array_equal(grid, g)
    for mine, theirs in zip(results["nbcuda"], results["numba"]):
        np.testing.assert_array_equal(mine, theirs)
