"""numba's Context memory methods: memalloc (MemoryPointer: memset, view, own, free),
memhostalloc, memallocmanaged, mempin, defer_cleanup and prepare_for_use, and
DeviceNDArray.gpu_data. The test driver counts live allocations; the gpu test runs the same
sequence under numba-cuda and compares the bytes."""
import ctypes
import gc
import os

import pytest

np = pytest.importorskip("numpy")


@pytest.fixture(autouse=True)
def collected():
    gc.collect()


def as_bytes(cuda, p):
    """The bytes of a MemoryPointer, through an array that keeps it alive."""
    desc = {"shape": (p.size,), "typestr": "|u1", "data": (p.device_pointer, False),
            "version": 3, "strides": None}
    return cuda.from_cuda_array_interface(desc, owner=p).copy_to_host()


def memset_sequence(ctx, stream):
    """What both libraries run: whole memset, a view's memset, a partial async memset."""
    p = ctx.memalloc(256)
    p.memset(7)
    v = p.view(16, 48)
    v.memset(1)
    p.memset(3, 8, stream=stream)
    stream.synchronize()
    return p, v


def test_memalloc_gives_numbas_memory_pointer(cuda, tdrv):
    ctx = cuda.current_context()
    live = tdrv.live_allocations_released()
    p = ctx.memalloc(1024)
    assert tdrv.live_allocations_released() == live + 1
    assert isinstance(p, cuda.MemoryPointer)
    assert p.size == p._cuda_memsize_ == 1024 and p.__cuda_memory__ is True
    assert p.context is ctx and p.owner is p
    assert p.handle == p.device_pointer == p.device_pointer_value != 0
    assert isinstance(p.device_ctypes_pointer, ctypes.c_size_t)
    assert p.device_ctypes_pointer.value == p.device_pointer
    assert "MemoryPointer" in repr(p) and "1024 bytes" in repr(p)
    del p
    assert tdrv.live_allocations_released() == live


def test_memset_view_and_stream(cuda):
    p, v = memset_sequence(cuda.current_context(), cuda.stream())
    expect = np.full(256, 7, np.uint8)
    expect[16:48] = 1
    expect[:8] = 3
    np.testing.assert_array_equal(as_bytes(cuda, p), expect)
    assert v.size == 32 and v.device_pointer == p.device_pointer + 16 and v.owner is p
    assert v.view(4).device_pointer == p.device_pointer + 20 and v.view(4).owner is p
    w = p.own()
    assert w.size == p.size and w.device_pointer == p.device_pointer and w.owner is p


def test_views_keep_the_memory_alive(cuda, tdrv):
    live = tdrv.live_allocations_released()
    p = cuda.current_context().memalloc(64)
    v = p.view(8, 16)
    del p
    gc.collect()
    assert tdrv.live_allocations_released() == live + 1
    v.memset(9)  # still usable
    del v
    assert tdrv.live_allocations_released() == live


def test_free_frees_now_and_once(cuda, tdrv):
    live = tdrv.live_allocations_released()
    p = cuda.current_context().memalloc(64)
    v = p.view(0, 8)
    v.free()  # a view frees nothing, as numba's plain MemoryPointer
    assert tdrv.live_allocations_released() == live + 1
    p.free()
    assert tdrv.live_allocations_released() == live
    assert "freed" in repr(p)
    with pytest.raises(RuntimeError, match="Freeing dead memory"):
        p.free()
    with pytest.raises(ValueError, match="the memory was freed"):
        v.memset(0)
    with pytest.raises(ValueError, match="the memory was freed"):
        p.memset(0)


def test_bad_ranges_are_refused(cuda):
    p = cuda.current_context().memalloc(100)
    with pytest.raises(ValueError, match="outside the 100 bytes"):
        p.view(0, 101)
    with pytest.raises(ValueError, match="outside the 100 bytes"):
        p.view(-1)
    with pytest.raises(RuntimeError, match="size cannot be negative"):
        p.view(50, 10)
    with pytest.raises(ValueError, match="count 101 is outside"):
        p.memset(0, 101)
    with pytest.raises(ValueError, match="negative size"):
        cuda.current_context().memalloc(-5)
    with pytest.raises(TypeError):
        p.memset(0, stream="not a stream")


def test_empty_allocation_is_the_null_pointer(cuda):
    p = cuda.current_context().memalloc(0)
    assert p.size == 0 and p.device_pointer == 0 and p.device_pointer_value is None
    assert p.view(0) is p  # numba: an empty view of empty memory is the memory itself
    with pytest.raises(RuntimeError, match="non-empty slice into empty slice"):
        p.view(0, 4)


def test_memalloc_uses_its_own_context(cuda, clean_stack):
    if len(cuda.gpus) < 2:
        pytest.skip("needs two devices")
    with cuda.gpus[1]:
        ctx1 = cuda.current_context()
    ctx0 = cuda.current_context(0)
    with cuda.gpus[0]:
        p = ctx1.memalloc(32)
        assert cuda.current_context() is ctx0  # the push was undone
    assert p.context is ctx1


def test_memalloc_after_reset_is_refused(cuda, clean_stack):
    ctx = cuda.current_context()
    p = ctx.memalloc(32)
    v = p.view(0, 16)
    cuda.get_current_device().reset()
    with pytest.raises(cuda.CudaAPIError, match="CUDA_ERROR_CONTEXT_IS_DESTROYED"):
        v.memset(0)
    del p, v  # frees nothing: the reset did


def test_gpu_data_of_arrays(cuda):
    x = cuda.to_device(np.arange(10, dtype=np.float32))
    g = x.gpu_data
    assert isinstance(g, cuda.MemoryPointer)
    assert g.device_pointer == x.device_pointer and g.size == 40 and g.owner is x
    y = x[::-2]  # elements 9, 7, 5, 3, 1: the lowest is element 1
    assert y.gpu_data.device_pointer == x.device_pointer + 4 and y.gpu_data.size == 36
    g.view(0, 8).memset(0)
    assert list(x.copy_to_host()[:3]) == [0, 0, 2]
    assert cuda.device_array(0, np.float32).gpu_data.size == 0
    # pointers to the same address and size are equal (and hash alike), others are not
    assert x.gpu_data == g and hash(x.gpu_data) == hash(g) and not (x.gpu_data != g)
    assert x.view(np.int32).gpu_data == g and len({g, x.gpu_data}) == 1
    assert g.view(0, 8) != g and y.gpu_data != g and (g == 40) is False


def test_memhostalloc(cuda, tdrv):
    ctx = cuda.current_context()
    n = tdrv.live_host_registrations()
    h = ctx.memhostalloc(4096)
    assert tdrv.live_host_registrations() == n + 1
    assert h.size == 4096 and h.handle == h.host_pointer and h.owner is h
    assert h.device_pointer is None
    a = np.ndarray(1024, np.float32, buffer=h)
    a[:] = 2.5
    assert (cuda.to_device(a).copy_to_host() == 2.5).all()
    m = ctx.memhostalloc(4096, mapped=True, portable=True)
    assert m.device_pointer is not None and m.handle == m.device_pointer
    b = np.ndarray(1024, np.float32, buffer=m)
    b[:] = 4.0
    desc = {"shape": (1024,), "typestr": "<f4", "data": (m.device_pointer, False),
            "version": 3, "strides": None}
    assert (cuda.from_cuda_array_interface(desc, owner=m).copy_to_host() == 4.0).all()
    del a, b, h, m
    gc.collect()
    assert tdrv.live_host_registrations() == n


def test_host_allocators_refuse_negative_sizes(cuda):
    ctx = cuda.current_context()
    with pytest.raises(ValueError, match="memhostalloc: negative size -1"):
        ctx.memhostalloc(-1)
    with pytest.raises(ValueError, match="memallocmanaged: negative size -8"):
        ctx.memallocmanaged(-8)


def test_memallocmanaged(cuda):
    m = cuda.current_context().memallocmanaged(64)
    v = np.ndarray(16, np.int32, buffer=m)
    v[:] = np.arange(16)
    desc = {"shape": (16,), "typestr": "<i4", "data": (m.device_pointer, False),
            "version": 3, "strides": None}
    assert list(cuda.from_cuda_array_interface(desc, owner=m).copy_to_host()) == list(range(16))


def test_mempin(cuda):
    ctx = cuda.current_context()
    host = np.zeros(4096, np.uint8)
    pin = ctx.mempin(host, host.ctypes.data, host.nbytes, mapped=True)
    assert pin.owner is host and pin.size == 4096 and pin.device_pointer
    pin.free()
    again = ctx.mempin(host, ctypes.c_void_p(host.ctypes.data), host.nbytes)  # unpinned at once
    assert again.owner is host and again.device_pointer is None
    with pytest.raises(TypeError, match="pointer must be an int"):
        ctx.mempin(host, "x", 10)
    with pytest.raises(ValueError, match="cannot pin"):
        ctx.mempin(host, host.ctypes.data, 0)


def test_context_defer_cleanup(cuda, tdrv):
    ctx = cuda.current_context()
    live = tdrv.live_allocations_released()
    with ctx.defer_cleanup():
        with ctx.defer_cleanup():  # nested
            p = ctx.memalloc(1 << 20)
            del p
        assert tdrv.live_allocations_released() == live + 1
    assert tdrv.live_allocations_released() == live
    assert ctx.prepare_for_use() is None


NUMBA_SIDE = """
import numpy as np
for old, new in (("row_stack", "vstack"), ("in1d", "isin"), ("trapz", "trapezoid")):
    if not hasattr(np, old) and hasattr(np, new):
        setattr(np, old, getattr(np, new))
import sys
sys.path.insert(0, {here!r})
from numba import cuda
from numba.cuda.cudadrv.devicearray import DeviceNDArray
import test_memory_pointer as t
p, v = t.memset_sequence(cuda.current_context(), cuda.default_stream())
data = DeviceNDArray((256,), (1,), np.uint8, gpu_data=p).copy_to_host()
np.savez({path!r}, data=data, sizes=[p.size, v.size],
         offset=int(v.device_pointer) - int(p.device_pointer))
"""


@pytest.mark.gpu
def test_memory_pointers_match_numba_cuda(gpu, cuda, run_py, tmp_path):
    """The same memsets through numba-cuda (in a fresh interpreter: other tests here reset the
    device under numba's objects, whose finalizers then crash at exit) and through nbcuda."""
    pytest.importorskip("numba")
    path = tmp_path / "numba.npz"
    run_py(NUMBA_SIDE.format(here=os.path.dirname(os.path.abspath(__file__)), path=str(path)))
    theirs = np.load(path)
    mine, mine_view = memset_sequence(cuda.current_context(), cuda.stream())
    np.testing.assert_array_equal(as_bytes(cuda, mine), theirs["data"])
    assert [mine.size, mine_view.size] == list(theirs["sizes"])
    assert mine_view.device_pointer - mine.device_pointer == theirs["offset"] == 16
    # mapped page-locked memory: a kernel writes through the device address
    ctx = cuda.current_context()
    m = ctx.memhostalloc(4 * 64, mapped=True)
    host = np.ndarray(64, np.float32, buffer=m)
    host[:] = 0
    desc = {"shape": (64,), "typestr": "<f4", "data": (m.device_pointer, False), "version": 3,
            "strides": None}
    dev = cuda.from_cuda_array_interface(desc, owner=m)

    def fill(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = i * 0.5

    cuda.jit("void(float32[::1])")(fill)[1, 64](dev)
    cuda.synchronize()
    np.testing.assert_array_equal(host, np.arange(64, dtype=np.float32) * 0.5)
