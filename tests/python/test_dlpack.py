"""DLPack both ways: a device array's __dlpack__ / __dlpack_device__, nbcuda.from_dlpack, and
kernel arguments that are any object with __dlpack__ on CUDA memory (numba-cuda 0.30 views
those before __cuda_array_interface__). The GPU tests take CuPy both ways."""
import ctypes
import sys

import numpy as np
import pytest

import nbcuda as cuda

_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _capsule_name(capsule):
    return repr(capsule).split('"')[1]


class Producer:
    """Speaks DLPack only (no __cuda_array_interface__), as a third-party library might,
    over one of our device arrays; records the keywords each __dlpack__ call got."""

    def __init__(self, d, device=None):
        self.d = d
        self.device = device
        self.calls = []

    def __dlpack__(self, **kw):
        self.calls.append(kw)
        return self.d.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.device or self.d.__dlpack_device__()


class Legacy(Producer):
    """A producer older than DLPack 1.0: no max_version keyword."""

    def __dlpack__(self, stream=None):
        self.calls.append({"stream": stream})
        return self.d.__dlpack__(stream=stream)


class Capsule:
    """Hands out one given capsule."""

    def __init__(self, capsule, device):
        self.capsule = capsule
        self.device = device

    def __dlpack__(self, **kw):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


def test_export_device_and_capsule_names():
    d = cuda.to_device(np.arange(6, dtype=np.int32))
    assert d.__dlpack_device__() == (2, 0)  # kDLCUDA, device 0
    assert _capsule_name(d.__dlpack__()) == "dltensor"
    assert _capsule_name(d.__dlpack__(max_version=(0, 8))) == "dltensor"
    assert _capsule_name(d.__dlpack__(max_version=(1, 0))) == "dltensor_versioned"
    assert _capsule_name(d.__dlpack__(max_version=(2, 3))) == "dltensor_versioned"
    assert _capsule_name(d.__dlpack__(dl_device=(2, 0), copy=False)) == "dltensor"
    with pytest.raises(BufferError, match="not \\(1, 0\\)"):
        d.__dlpack__(dl_device=(1, 0))
    with pytest.raises(BufferError, match="copy=True"):
        d.__dlpack__(copy=True)
    with pytest.raises(ValueError, match="stream=0"):
        d.__dlpack__(stream=0)
    with pytest.raises(TypeError):
        d.__dlpack__(1)  # keywords only


def test_round_trip_shares_memory():
    host = np.arange(12, dtype=np.float64).reshape(3, 4)
    d = cuda.to_device(host)
    for p in (Producer(d), Legacy(d)):  # a versioned capsule, a legacy one
        e = cuda.from_dlpack(p)
        assert e.device_pointer == d.device_pointer
        assert (e.shape, e.strides, e.dtype) == (d.shape, d.strides, d.dtype)
    e = cuda.from_dlpack(Producer(d))
    e[1, 2] = -5.0  # written through one, read through the other
    expect = host.copy()
    expect[1, 2] = -5.0
    np.testing.assert_array_equal(d.copy_to_host(), expect)
    d[0, 0] = 42.0
    assert e.copy_to_host()[0, 0] == 42.0
    assert cuda.from_dlpack(d) is d


def test_views_keep_strides_and_offsets():
    host = np.arange(60, dtype=np.int16).reshape(5, 12)
    d = cuda.to_device(host)
    for key in [(slice(1, 4), slice(None, None, 3)), (slice(None), 5), (2,),
                (slice(None, None, 2), slice(1, 9, 2))]:
        v = d[key]
        e = cuda.from_dlpack(Producer(v))
        assert e.device_pointer == v.device_pointer
        assert e.shape == host[key].shape and e.strides == host[key].strides
        np.testing.assert_array_equal(e.copy_to_host(), host[key])
    f = cuda.to_device(np.asfortranarray(host))
    t = cuda.from_dlpack(Producer(f))
    assert t.strides == (2, 10) and t.is_f_contiguous()
    np.testing.assert_array_equal(t.copy_to_host(), host)


def test_element_types():
    for dt in (np.bool_, np.int8, np.uint16, np.int32, np.uint64, np.float16, np.float32,
               np.float64, np.complex64, np.complex128):
        host = (np.arange(5) % 2).astype(dt)
        e = cuda.from_dlpack(Producer(cuda.to_device(host)))
        assert e.dtype == np.dtype(dt)
        np.testing.assert_array_equal(e.copy_to_host(), host)
    rec = np.zeros(3, dtype=[("a", np.int32), ("b", np.float32)])
    with pytest.raises(BufferError, match="DLPack has no type"):
        cuda.to_device(rec).__dlpack__()
    with pytest.raises(BufferError, match="whole number"):
        cuda.device_array(3, np.int32, strides=(6,)).__dlpack__()


def test_bfloat16_round_trip():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    host = np.array([1.5, -2.0, 3.25], dtype=ml_dtypes.bfloat16)
    e = cuda.from_dlpack(Producer(cuda.to_device(host)))
    assert e.dtype == host.dtype
    np.testing.assert_array_equal(e.copy_to_host(), host)


def test_consumed_capsule_is_renamed_and_refused_again():
    d = cuda.to_device(np.arange(4, dtype=np.float32))
    for version, name in [((1, 0), "dltensor_versioned"), (None, "dltensor")]:
        cap = d.__dlpack__(max_version=version)
        e = cuda.from_dlpack(Capsule(cap, (2, 0)))
        assert _capsule_name(cap) == "used_" + name
        assert e.device_pointer == d.device_pointer
        with pytest.raises(TypeError, match="not an unconsumed DLPack capsule"):
            cuda.from_dlpack(Capsule(cap, (2, 0)))
        del e, cap


def test_capsules_hold_the_array_until_deleted(tdrv):
    d = cuda.device_array(1000, np.float32)
    base = sys.getrefcount(d)
    caps = [d.__dlpack__(), d.__dlpack__(max_version=(1, 0))]
    assert sys.getrefcount(d) == base + 2
    live = tdrv.live_allocations_released()
    del d  # the capsules, never consumed, keep its memory
    assert tdrv.live_allocations_released() == live
    del caps  # their destructors call the deleters, once each
    assert tdrv.live_allocations_released() == live - 1
    d = cuda.device_array(1000, np.float32)
    base = sys.getrefcount(d)
    for _ in range(50):
        d.__dlpack__(max_version=(1, 0))
        cuda.from_dlpack(Producer(d))
    assert sys.getrefcount(d) == base


def test_imported_array_holds_the_producers_tensor(tdrv):
    d = cuda.device_array(1000, np.float32)
    live = tdrv.live_allocations_released()
    e = cuda.from_dlpack(Producer(d))
    del d
    assert tdrv.live_allocations_released() == live  # e holds the tensor, the tensor d
    e[0] = 1.0
    del e
    assert tdrv.live_allocations_released() == live - 1


def test_read_only_tensor_is_refused():
    d = cuda.to_device(np.arange(4, dtype=np.float32))
    cap = d.__dlpack__(max_version=(1, 0))
    # DLManagedTensorVersioned: version (8 bytes), manager_ctx, deleter, then flags
    flags = ctypes.c_uint64.from_address(_capsule_pointer(cap, b"dltensor_versioned") + 24)
    flags.value = 1  # DLPACK_FLAG_BITMASK_READ_ONLY
    with pytest.raises(BufferError, match="read-only"):
        cuda.from_dlpack(Capsule(cap, (2, 0)))


def test_host_tensors_are_refused_with_to_device():
    with pytest.raises(BufferError, match="host memory.*to_device"):
        cuda.from_dlpack(np.arange(3))
    with pytest.raises(TypeError, match="no __dlpack__"):
        cuda.from_dlpack([1, 2, 3])
    d = cuda.to_device(np.arange(3))
    with pytest.raises(BufferError, match="device 3, the current context on device 0"):
        cuda.from_dlpack(Producer(d, device=(2, 3)))


def test_export_orders_the_consumers_stream(tdrv):
    # the consumer's stream waits for the work queued on the array's own stream (an event);
    # nothing when both are the legacy default stream, nor for stream=-1
    s = cuda.stream()
    bound, unbound = cuda.device_array(4, stream=s), cuda.device_array(4)
    calls = ("cuEventRecord", "cuStreamWaitEvent", "cuStreamSynchronize")

    def counts():
        return [tdrv.calls(c) for c in calls]

    before = counts()
    bound.__dlpack__(stream=1)
    assert [b - a for a, b in zip(before, counts())] == [1, 1, 0]
    before = counts()
    bound.__dlpack__(stream=-1)
    bound.__dlpack__(stream=int(s))
    unbound.__dlpack__()
    unbound.__dlpack__(stream=1)
    assert counts() == before
    unbound.__dlpack__(stream=int(s))
    assert [b - a for a, b in zip(before, counts())] == [1, 1, 0]


def _double(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = x[i] * 2


def test_kernel_takes_an_object_with_dlpack(tdrv):
    import struct
    d = cuda.to_device(np.arange(8, dtype=np.float32))
    s = cuda.stream()
    for k in (cuda.jit(_double), cuda.jit("void(float32[::1])")(_double)):
        p = Producer(d)
        k[1, 8](p)
        words = struct.unpack("<7q", bytes(tdrv.last_launch().param_bytes[:56]))
        assert words[2:] == (8, 4, d.device_pointer, 8, 4)
        # the launch asks with its stream (the legacy default stream: 1); typing with -1
        assert p.calls[-1]["stream"] == 1
        assert all(c["stream"] == -1 for c in p.calls[:-1])
        p.calls.clear()
        k[1, 8, s](p)
        assert p.calls[-1]["stream"] == int(s)
    v = d[1::2]  # a strided view
    cuda.jit(_double)[1, 8](Producer(v))
    words = struct.unpack("<7q", bytes(tdrv.last_launch().param_bytes[:56]))
    assert words[2:] == (4, 4, v.device_pointer, 4, 8)


def test_kernel_prefers_dlpack_to_the_interface(tdrv):
    class Both(Producer):
        @property
        def __cuda_array_interface__(self):
            raise AssertionError("__cuda_array_interface__ read before __dlpack__")

    d = cuda.to_device(np.arange(4, dtype=np.float32))
    cuda.jit(_double)[1, 4](Both(d))
    # a host device type goes the other ways (interface, buffer): numpy stays a host copy
    class HostSaid(Producer):
        def __dlpack_device__(self):
            return (1, 0)

        @property
        def __cuda_array_interface__(self):
            return self.d.__cuda_array_interface__

    h = HostSaid(d)
    cuda.jit(_double)[1, 4](h)
    assert h.calls == []


def _assign(out, arr):
    for i in range(arr.shape[0]):
        out[i] = arr[i]


@pytest.mark.parametrize("dtype", ["datetime64[D]", "timedelta64[s]",
                                   [("x", np.int32), ("y", np.float32)]])
def test_dates_and_records_go_through_the_interface(dtype):
    dt = np.dtype(dtype)
    # numba-cuda's _UNSUPPORTED_DLPACK_TYPES (test_datetime_cupy_inputs): for an object whose
    # dtype is a date or a record, which DLPack has no code for (CuPy's __dlpack__ raises
    # BufferError), the kernel asks __cuda_array_interface__ instead, typing and launching
    class CupyLike(Producer):
        dtype = dt

        def __dlpack__(self, **kw):
            raise BufferError("dtype is not supported for dlpack export")

        @property
        def __cuda_array_interface__(self):
            return self.d.__cuda_array_interface__

    h = np.zeros(4, dt)
    arr, out = CupyLike(cuda.to_device(h)), CupyLike(cuda.to_device(h))
    cuda.jit(_assign)[1, 1](out, arr)
    assert arr.calls == [] and out.calls == []


def test_kernel_dlpack_errors_are_the_producers():
    class Broken(Producer):
        def __dlpack__(self, **kw):
            raise RuntimeError("producer failed")

    d = cuda.to_device(np.arange(4, dtype=np.float32))
    with pytest.raises(RuntimeError, match="producer failed"):
        cuda.jit("void(float32[::1])")(_double)[1, 4](Broken(d))


# ------------------------------------------------------------------ CuPy, on a real GPU --

@pytest.mark.gpu
def test_cupy_takes_our_arrays(gpu):
    cupy = pytest.importorskip("cupy")
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    d = cuda.to_device(host)
    c = cupy.from_dlpack(d)
    assert c.data.ptr == d.device_pointer
    np.testing.assert_array_equal(cupy.asnumpy(c), host)
    c[1, 1] = -1
    cupy.cuda.Device().synchronize()
    assert d.copy_to_host()[1, 1] == -1
    host[1, 1] = -1  # written through CuPy above
    v = cupy.from_dlpack(d[:, 1::2])
    np.testing.assert_array_equal(cupy.asnumpy(v), host[:, 1::2])


@pytest.mark.gpu
def test_we_take_cupy_arrays(gpu):
    cupy = pytest.importorskip("cupy")
    c = cupy.arange(20, dtype=cupy.int32).reshape(4, 5)
    e = cuda.from_dlpack(c)
    assert e.device_pointer == c.data.ptr
    np.testing.assert_array_equal(e.copy_to_host(), cupy.asnumpy(c))
    e[0, 0] = 77
    assert int(c[0, 0]) == 77
    f = cuda.from_dlpack(c[:, ::2].T)
    np.testing.assert_array_equal(f.copy_to_host(), cupy.asnumpy(c[:, ::2].T))


@pytest.mark.gpu
def test_kernel_takes_cupy_arrays(gpu):
    cupy = pytest.importorskip("cupy")
    c = cupy.arange(16, dtype=cupy.float32)
    expect = cupy.asnumpy(c) * 2
    cuda.jit(_double)[1, 16](c)
    cuda.synchronize()
    np.testing.assert_array_equal(cupy.asnumpy(c), expect)
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        c2 = cupy.ones(1 << 20, dtype=cupy.float32) * 3  # queued on s
    cuda.jit(_double)[(1 << 20) // 256, 256](c2[::2])  # the launch waits for s (DLPack)
    cuda.synchronize()
    got = cupy.asnumpy(c2)
    assert (got[::2] == 6).all() and (got[1::2] == 3).all()
