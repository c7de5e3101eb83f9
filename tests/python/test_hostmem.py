"""Host memory the device can reach: pinned_array, mapped_array, managed_array (and *_like),
`with pinned(...)`, `with mapped(...) as devarys`, `with defer_cleanup()`, and
Device.get_primary_context(). The test driver counts live page-locked memory; the GPU tests at
the end launch kernels that write into mapped and managed arrays."""
import gc
import struct

import pytest

np = pytest.importorskip("numpy")


@pytest.fixture(autouse=True)
def collected():
    """Objects of earlier tests caught in reference cycles are freed now, not in the middle of
    a test that counts the test driver's live allocations."""
    gc.collect()


def fill_iota(a):
    i = 0
    while i < a.size:
        a[i] = i * 3
        i += 1


# ---------------------------------------------------------------- pinned_array -----------

def test_pinned_array_is_numpy_on_page_locked_memory(cuda, tdrv):
    n = tdrv.live_host_registrations()
    a = cuda.pinned_array((3, 4), dtype=np.float32)
    assert type(a) is np.ndarray and a.shape == (3, 4) and a.dtype == np.float32
    assert a.strides == (16, 4) and a.flags.writeable
    assert tdrv.live_host_registrations() == n + 1
    a[:] = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert (cuda.to_device(a).copy_to_host() == a).all()
    f = cuda.pinned_array(5)  # numba's defaults: float64, C order
    assert f.dtype == np.float64 and f.shape == (5,)
    g = cuda.pinned_array((2, 3), np.int16, order="F")
    assert g.flags.f_contiguous and g.strides == (2, 4)
    s = cuda.pinned_array((2, 3), np.int8, strides=(1, 2))
    assert s.strides == (1, 2)
    z = cuda.pinned_array(0)
    assert z.size == 0


def test_pinned_memory_freed_with_last_view(cuda, tdrv):
    n = tdrv.live_host_registrations()
    a = cuda.pinned_array(100, dtype=np.uint8)
    v = a[10:20]
    del a
    assert tdrv.live_host_registrations() == n + 1  # the view keeps the memory
    v[:] = 7
    del v
    assert tdrv.live_host_registrations() == n


def test_pinned_array_argument_errors(cuda):
    with pytest.raises(ValueError, match="C/F order"):
        cuda.pinned_array(4, order="K")
    with pytest.raises(ValueError, match="negative"):
        cuda.pinned_array(-1)
    with pytest.raises(TypeError):
        cuda.pinned_array(4, dtype="not a dtype")
    with pytest.raises(TypeError, match="shape must be an int or a tuple of ints"):
        cuda.pinned_array(object())
    with pytest.raises(TypeError, match="integer"):
        cuda.pinned_array(("x",))
    with pytest.raises(ValueError, match="one entry per dimension"):
        cuda.pinned_array((2, 2), strides=(8,))


def test_allocation_failures_are_cuda_api_errors(cuda, tdrv):
    n = tdrv.live_host_registrations()
    tdrv.fail("cuMemHostRegister", 1, 2)
    with pytest.raises(cuda.CudaAPIError, match="cuMemHostRegister"):
        cuda.pinned_array(10)
    tdrv.fail("cuMemHostGetDevicePointer", 1, 1)
    with pytest.raises(cuda.CudaAPIError, match="cuMemHostGetDevicePointer"):
        cuda.mapped_array(10)
    assert tdrv.live_host_registrations() == n  # nothing leaked on either failure
    allocs = tdrv.live_allocations_released()
    tdrv.fail("cuMemAllocManaged", 1, 2)
    with pytest.raises(cuda.CudaAPIError, match="cuMemAllocManaged"):
        cuda.managed_array(10)
    assert tdrv.live_allocations_released() == allocs


# ---------------------------------------------------------------- mapped_array -----------

def test_mapped_array_has_cuda_array_interface(cuda, tdrv):
    m = cuda.mapped_array(10, dtype=np.int32)
    assert isinstance(m, np.ndarray) and type(m).__name__ == "MappedNDArray"
    cai = m.__cuda_array_interface__
    assert cai["shape"] == (10,) and cai["typestr"] == "<i4" and cai["version"] == 3
    assert cai["strides"] is None and cai["stream"] is None
    assert cai["data"] == (m.ctypes.data, False)  # unified addressing: the same address
    m[:] = np.arange(10)
    d = cuda.to_device(m)  # wraps the mapped memory, no copy
    assert (d.copy_to_host() == np.arange(10)).all()
    # Slices keep the class and point into the same mapping.
    assert m[3:].__cuda_array_interface__["data"][0] == cai["data"][0] + 12
    assert type(m[3:]).__name__ == "MappedNDArray"


def test_mapped_structured_array_exports_its_fields(cuda, tdrv):
    dt = np.dtype([("a", np.float64), ("b", np.int8)], align=True)
    m = cuda.mapped_array(4, dtype=dt)
    cai = m.__cuda_array_interface__
    assert cai["typestr"] == "|V16" and cai["descr"] == dt.descr
    m["a"] = np.arange(4)
    d = cuda.as_cuda_array(m)
    assert d.dtype == dt
    np.testing.assert_equal(d.copy_to_host(), m)


def test_mapped_write_combined_is_accepted_and_outlives_close(cuda, tdrv):
    # wc=True is taken but the memory is not write-combined: write-combining is the driver's
    # own allocations' only, which a close frees under the array. The test driver gives
    # write-combined memory a device address unlike its host address; this has none.
    w = cuda.mapped_array(4, wc=True, portable=True)
    w[:] = [1.0, 2.0, 3.0, 4.0]
    assert w.__cuda_array_interface__["data"][0] == w.ctypes.data
    assert list(cuda.to_device(w).copy_to_host()) == [1.0, 2.0, 3.0, 4.0]
    cuda.close()
    w[:] = 5.0
    assert list(w) == [5.0] * 4


def test_mapped_array_stream(cuda):
    s = cuda.stream()
    m = cuda.mapped_array(4, stream=s)
    assert m.__cuda_array_interface__["stream"] == int(s)
    with pytest.raises(TypeError, match="Stream"):
        cuda.mapped_array(4, stream="nope")


def test_mapped_array_as_kernel_argument(cuda, tdrv):
    k = cuda.jit("void(int64[:])")(fill_iota)
    m = cuda.mapped_array(8, dtype=np.int64)
    allocs = tdrv.live_allocations_released()
    k[1, 1](m)
    info = tdrv.last_launch()
    off = info.param_offset[4] if info.param_size[0] else 32  # meminfo, parent, nitems, itemsize
    data = struct.unpack("<q", bytes(info.param_bytes[off:off + 8]))[0]
    assert data == m.__cuda_array_interface__["data"][0]
    assert tdrv.live_allocations_released() == allocs  # passed by address, not copied


# ---------------------------------------------------------------- managed_array ----------

def test_managed_array(cuda, tdrv):
    allocs = tdrv.live_allocations_released()
    g = cuda.managed_array((2, 3), dtype="f8", order="F")
    assert type(g).__name__ == "ManagedNDArray" and g.flags.f_contiguous
    assert tdrv.live_allocations_released() == allocs + 1
    cai = g.__cuda_array_interface__
    assert cai["data"][0] == g.ctypes.data and cai["strides"] == (8, 16)
    g[:] = np.arange(6).reshape(2, 3)
    assert (cuda.to_device(g).copy_to_host() == np.arange(6).reshape(2, 3)).all()
    h = cuda.managed_array(4, np.int32, attach_global=False)
    h[:] = 5
    assert h.sum() == 20
    del g, h
    assert tdrv.live_allocations_released() == allocs


def test_like_functions(cuda):
    x = np.arange(12.0).reshape(3, 4)
    p = cuda.pinned_array_like(x.T)  # F-contiguous stays F
    assert p.shape == (4, 3) and p.flags.f_contiguous and type(p) is np.ndarray
    m = cuda.mapped_array_like(x, wc=False)
    assert m.shape == (3, 4) and m.dtype == x.dtype and m.flags.c_contiguous
    g = cuda.managed_array_like(x[:, ::2])  # non-contiguous: contiguous strides, same order
    assert g.shape == (3, 2) and g.strides == (16, 8)
    assert type(cuda.managed_array_like(x, attach_global=False)).__name__ == "ManagedNDArray"


# ---------------------------------------------------------------- pinned() / mapped() ----

def test_pinned_scope_registers_and_unregisters(cuda, tdrv):
    x, y = np.zeros(1000), np.ones((10, 10), np.int32)
    n = tdrv.live_host_registrations()
    with cuda.pinned(x, y) as r:
        assert r is None
        assert tdrv.live_host_registrations() == n + 2
        cuda.to_device(x)
    assert tdrv.live_host_registrations() == n
    with pytest.raises(KeyError):
        with cuda.pinned(x):
            raise KeyError("body")
    assert tdrv.live_host_registrations() == n
    with cuda.pinned(x):  # unpinning is immediate: pin again at once
        pass
    with cuda.pinned(np.zeros(0)):  # nothing to pin
        pass


def test_pinned_scope_failure_unpins_the_others(cuda, tdrv):
    x, y = np.zeros(10), np.zeros(10)
    n = tdrv.live_host_registrations()
    tdrv.fail("cuMemHostRegister", 2, 1)
    with pytest.raises(cuda.CudaAPIError, match="cuMemHostRegister"):
        with cuda.pinned(x, y):
            pass
    assert tdrv.live_host_registrations() == n
    with pytest.raises(cuda.CudaAPIError, match="HOST_MEMORY_ALREADY_REGISTERED"):
        with cuda.pinned(x, x):
            pass
    assert tdrv.live_host_registrations() == n
    with pytest.raises(TypeError):
        with cuda.pinned(object()):
            pass


def test_mapped_scope_yields_device_arrays(cuda, tdrv):
    x = np.arange(12.0).reshape(3, 4)
    n = tdrv.live_host_registrations()
    with cuda.mapped(x) as dx:
        assert type(dx).__name__ == "DeviceNDArray" and dx.shape == (3, 4)
        assert tdrv.live_host_registrations() == n + 1
        assert (dx.copy_to_host() == x).all()
        x[0, 0] = 42.0  # the device sees host writes: same memory
        assert dx.copy_to_host()[0, 0] == 42.0
    assert tdrv.live_host_registrations() == n
    y = np.arange(5, dtype=np.int16)
    with cuda.mapped(x, y, stream=0, portable=True, wc=False) as ds:
        assert isinstance(ds, list) and len(ds) == 2
        assert (ds[1].copy_to_host() == y).all()
    with pytest.raises(ValueError):
        with cuda.mapped(x):
            raise ValueError("body")
    assert tdrv.live_host_registrations() == n
    with pytest.raises(TypeError):
        cuda.mapped(x, bogus=1)


# ---------------------------------------------------------------- defer_cleanup() --------

def test_defer_cleanup_delays_frees_to_outermost_exit(cuda, tdrv):
    cuda.current_context()
    n = tdrv.live_allocations_released()
    with cuda.defer_cleanup() as r:
        assert r is None
        d = cuda.device_array(100)
        del d
        assert tdrv.live_allocations_released() == n + 1
        with cuda.defer_cleanup():
            e = cuda.to_device(np.arange(4.0))
            del e
        assert tdrv.live_allocations_released() == n + 2  # the inner exit is not the outermost
        p = cuda.pinned_array(8)
        hosts = tdrv.live_host_registrations()
        del p
        assert tdrv.live_host_registrations() == hosts
    assert tdrv.live_allocations_released() == n
    assert tdrv.live_host_registrations() == hosts - 1


def test_defer_cleanup_flushes_when_the_body_raises(cuda, tdrv):
    n = tdrv.live_allocations_released()
    with pytest.raises(RuntimeError, match="body"):
        with cuda.defer_cleanup():
            d = cuda.device_array(10)
            del d
            raise RuntimeError("body")
    assert tdrv.live_allocations_released() == n
    d = cuda.device_array(10)  # outside: frees are immediate again
    del d
    assert tdrv.live_allocations_released() == n


# ---------------------------------------------------------------- get_primary_context ----

def test_get_primary_context_leaves_the_stack_alone(cuda, tdrv, clean_stack):
    dev = cuda.gpus[1]
    ctx = dev.get_primary_context()
    assert tdrv.stack_depth() == 0
    assert type(ctx).__name__ == "Context" and ctx.device.id == 1
    assert dev.get_primary_context() is ctx
    with cuda.gpus[1]:
        assert cuda.current_context() is ctx
    assert cuda.get_current_device().get_primary_context() is cuda.current_context()


# ---------------------------------------------------------------- on a GPU ---------------

@pytest.mark.gpu
def test_kernel_writes_mapped_and_managed_arrays(gpu):
    import nbcuda

    def store(a):
        i = nbcuda.grid(1)
        if i < a.size:
            a[i] = i * 3 + 1

    k = nbcuda.jit("void(int64[:])")(store)
    for make in (nbcuda.mapped_array, nbcuda.managed_array):
        a = make(1000, dtype=np.int64)
        a[:] = 0
        k[4, 256](a)
        nbcuda.synchronize()
        assert (a == np.arange(1000) * 3 + 1).all(), make.__name__


@pytest.mark.gpu
def test_kernel_writes_through_mapped_scope(gpu):
    import nbcuda

    def double(a):
        i = nbcuda.grid(1)
        if i < a.size:
            a[i] = a[i] * 2.0

    k = nbcuda.jit("void(float32[:])")(double)
    x = np.arange(500, dtype=np.float32)
    with nbcuda.mapped(x) as dx:
        k[2, 256](dx)
        nbcuda.synchronize()
    assert (x == np.arange(500, dtype=np.float32) * 2).all()
    p = nbcuda.pinned_array(500, dtype=np.float32)
    p[:] = 1.5
    d = nbcuda.to_device(p)
    k[2, 256](d)
    d.copy_to_host(p)
    assert (p == 3.0).all()


def test_mapped_and_managed_arrays_remember_their_stream(cuda):
    # numba's MappedNDArray/ManagedNDArray.stream: the stream given when made (views too),
    # else 0; the interface names the same stream
    s = cuda.stream()
    m = cuda.mapped_array(4, np.float32, stream=s)
    assert m.stream is s and m[1:].stream is s
    assert m.__cuda_array_interface__["stream"] == int(s)
    assert cuda.managed_array(4, stream=s).stream is s
    assert cuda.mapped_array(4).stream == 0 and cuda.managed_array(4).stream == 0
    assert cuda.mapped_array_like(np.zeros(3)).stream == 0
    assert cuda.mapped_array_like(np.zeros(3), stream=s).stream is s
