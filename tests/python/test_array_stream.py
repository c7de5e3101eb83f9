"""DeviceNDArray's stream, as numba's: to_device / device_array / device_array_like(stream=s)
and imported __cuda_array_interface__ streams bind the array to a stream (`.stream`, 0 when
none); its methods given stream=0 (copy_to_host, copy_to_device, getitem, setitem, ravel,
squeeze, split) and d[...] use that stream (numba's _default_stream), an explicit stream
wins, views inherit it (reshape excepted, as in numba), bind(stream) rebinds. Also
device_ctypes_pointer and alloc_size.

The same file runs on the GPU (tests/gpu/run.sh); the tests taking `tdrv` steer the test
driver: they count which copy entry points were called and use its launch delay to keep a
stream busy, so that a copy queued on that stream is observably held back while a copy
anywhere else is not.
"""
import ctypes
import gc
import time

from unittest.mock import patch

import numpy as np
import pytest

import nbcuda as cuda


def _noop(a):
    a[0] = 1


class CudaStream:
    """A foreign stream, speaking only the __cuda_stream__ protocol (as cuda.core's)."""

    def __init__(self, s):
        self.handle = int(s)

    def __cuda_stream__(self):
        return (0, self.handle)


class Foreign:
    """Something that only speaks __cuda_array_interface__ (as CuPy or PyTorch would)."""

    def __init__(self, d):
        self.d = d
        self.__cuda_array_interface__ = d.__cuda_array_interface__


# ------------------------------------------------------------------ binding -------------

def test_factories_bind_the_stream(cuda):
    s = cuda.stream()
    h = np.arange(12, dtype=np.float32)
    assert cuda.to_device(h).stream == 0
    assert cuda.to_device(h, stream=0).stream == 0
    assert cuda.to_device(h, stream=s).stream is s
    assert cuda.to_device(h, s).stream is s  # positional, the fast path
    assert cuda.to_device(h, stream=s, copy=False).stream is s
    assert cuda.device_array(4).stream == 0
    assert cuda.device_array(4, np.float32, stream=s).stream is s
    assert cuda.device_array((2, 3), np.float32, None, "F", s).stream is s
    assert cuda.device_array_like(h).stream == 0
    assert cuda.device_array_like(h, stream=s).stream is s
    # an existing device array is returned as it is, not rebound (numba's auto_device)
    d = cuda.device_array(4)
    assert cuda.to_device(d, stream=s) is d and d.stream == 0
    s.synchronize()


def test_views_inherit_the_stream_reshape_does_not(cuda):
    s = cuda.stream()
    d = cuda.device_array((4, 6), np.float32, stream=s)
    assert d[1:3].stream is s and d[:, 2].stream is s and d[...].stream is s
    assert d.getitem(slice(1, 3)).stream is s
    assert d.ravel().stream is s
    assert d[1:2].squeeze().stream is s
    assert d.view(np.int32).stream is s and d.view(np.float64).stream is s
    assert all(p.stream is s for p in d.ravel().split(5))
    assert d.T.stream is s and d.transpose().stream is s
    assert d.transpose((0, 1)) is d
    # numba's reshape passes no stream on, even to an unchanged shape
    assert d.reshape(24).stream == 0 and d.reshape(4, 6).stream == 0
    # an explicit stream argument binds the view to it instead
    s2 = cuda.stream()
    assert d.ravel(stream=s2).stream is s2
    assert d[1:2].squeeze(stream=s2).stream is s2
    assert next(iter(d.ravel().split(5, stream=s2))).stream is s2
    assert d.getitem(slice(0, 2), stream=s2).stream is s2
    u = cuda.device_array(4)
    assert u[1:].stream == 0 and u.ravel().stream == 0 and u.ravel(stream=s2).stream is s2
    s.synchronize()


def test_bind(cuda):
    s, s2 = cuda.stream(), cuda.stream()
    d = cuda.to_device(np.arange(6, dtype=np.int64).reshape(2, 3))
    b = d.bind(s)
    assert b is not d and b.stream is s and d.stream == 0  # numba's copy.copy
    assert b.device_pointer == d.device_pointer
    assert b.shape == d.shape and b.strides == d.strides and b.dtype == d.dtype
    assert b.bind(s2).stream is s2 and b.bind().stream == 0 and b.bind(0).stream == 0
    assert b.bind(stream=s2).stream is s2
    ext = CudaStream(s)
    assert d.bind(ext).stream is ext  # any object with __cuda_stream__
    with pytest.raises(TypeError, match="Expected a Stream object or 0, got str"):
        d.bind("x")
    with pytest.raises(TypeError, match="Expected a Stream object or 0"):
        cuda.to_device(np.zeros(3), stream="x")
    with pytest.raises(TypeError, match="Expected a Stream object or 0"):
        cuda.device_array(3, stream=object())
    with pytest.raises(TypeError, match="Expected a Stream object or 0"):
        d.ravel(stream=1.5)
    del b
    assert (d.bind(s).copy_to_host() == np.arange(6).reshape(2, 3)).all()


def test_cuda_array_interface_carries_the_stream(cuda):
    s = cuda.stream()
    d = cuda.device_array(10, stream=s)
    assert d.__cuda_array_interface__["stream"] == int(s)  # numba's int(stream)
    assert cuda.device_array(10).__cuda_array_interface__["stream"] is None
    # the default stream's handle is 0, which the interface does not allow
    assert cuda.device_array(1, stream=cuda.default_stream()).__cuda_array_interface__[
        "stream"] is None
    # a consumer binds the imported array to an external stream of that handle (numba's
    # test_consume_stream), none without one (test_consume_no_stream)
    c = cuda.as_cuda_array(Foreign(d))
    assert c.stream.external and int(c.stream) == int(s)
    assert cuda.as_cuda_array(Foreign(d), sync=False).stream.external
    assert cuda.from_cuda_array_interface(d.__cuda_array_interface__, owner=d).stream.external
    assert cuda.to_device(Foreign(d)).stream.external
    assert cuda.as_cuda_array(Foreign(cuda.device_array(10))).stream == 0


def test_importing_a_stream_synchronizes_it(cuda):
    s = cuda.stream()
    f = Foreign(cuda.device_array(10, stream=s))
    calls, real = [], cuda.Stream.synchronize

    def synchronize(stream):  # patched on the class, as numba-cuda's tests patch its Stream
        calls.append(int(stream))
        return real(stream)
    with patch.object(cuda.Stream, "synchronize", synchronize):
        cuda.as_cuda_array(f)
        assert calls == [int(s)]
        cuda.as_cuda_array(f, sync=False)
        cuda.as_cuda_array(Foreign(cuda.device_array(10)))
        assert len(calls) == 1
        cuda.to_device(f)  # numba's auto_device: from_cuda_array_interface, sync on
        assert len(calls) == 2


# ------------------------------------------------------------------ copies --------------

def _counts(tdrv):
    return {n: tdrv.calls(n) for n in ("cuMemcpyHtoD", "cuMemcpyDtoH", "cuMemcpyHtoDAsync",
                                       "cuMemcpyDtoHAsync")}


def _delta(tdrv, before):
    after = _counts(tdrv)
    return {n: after[n] - before[n] for n in after if after[n] != before[n]}


def test_copies_of_a_bound_array_are_queued_on_its_stream(cuda, tdrv):
    s = cuda.stream()
    h = np.arange(8, dtype=np.int32)
    c = _counts(tdrv)
    d = cuda.to_device(h, stream=s)
    assert _delta(tdrv, c) == {"cuMemcpyHtoDAsync": 1}
    s.synchronize()
    for what, call, expect in [
        ("copy_to_host", lambda: d.copy_to_host(), {"cuMemcpyDtoHAsync": 1}),
        ("copy_to_host(out)", lambda: d.copy_to_host(np.empty(8, np.int32)),
         {"cuMemcpyDtoHAsync": 1}),
        ("strided copy_to_host", lambda: d[::2].copy_to_host(), {"cuMemcpyDtoHAsync": 1}),
        ("copy_to_device", lambda: d.copy_to_device(h), {"cuMemcpyHtoDAsync": 1}),
        ("to_device(to=)", lambda: cuda.to_device(h, to=d), {"cuMemcpyHtoDAsync": 1}),
        ("d[i]", lambda: d[3], {"cuMemcpyDtoHAsync": 1}),
        ("getitem", lambda: d.getitem(3), {"cuMemcpyDtoHAsync": 1}),
        ("d[a:b] = v", lambda: d.__setitem__(slice(0, 4), 7), {"cuMemcpyHtoDAsync": 1}),
        ("d[::2] = v", lambda: d.__setitem__(slice(None, None, 2), 7),
         {"cuMemcpyHtoDAsync": 4}),
        ("setitem", lambda: d.setitem(0, 9), {"cuMemcpyHtoDAsync": 1}),
        ("view", lambda: d[2:4].copy_to_host(), {"cuMemcpyDtoHAsync": 1}),
        ("np.asarray", lambda: np.asarray(d), {"cuMemcpyDtoHAsync": 1}),
    ]:
        c = _counts(tdrv)
        call()
        s.synchronize()
        assert _delta(tdrv, c) == expect, what


def test_explicit_streams_and_unbound_arrays(cuda, tdrv):
    s, s2 = cuda.stream(), cuda.stream()
    h = np.arange(8, dtype=np.int32)
    d = cuda.to_device(h)
    for what, call, expect in [
        ("copy_to_host", lambda: d.copy_to_host(), {"cuMemcpyDtoH": 1}),
        ("copy_to_host(stream=0)", lambda: d.copy_to_host(stream=0), {"cuMemcpyDtoH": 1}),
        ("copy_to_host(stream=s)", lambda: d.copy_to_host(stream=s), {"cuMemcpyDtoHAsync": 1}),
        ("copy_to_device", lambda: d.copy_to_device(h), {"cuMemcpyHtoD": 1}),
        ("d[i]", lambda: d[3], {"cuMemcpyDtoH": 1}),
        ("getitem(stream=s)", lambda: d.getitem(3, stream=s), {"cuMemcpyDtoHAsync": 1}),
        ("d[i] = v", lambda: d.__setitem__(1, 5), {"cuMemcpyHtoD": 1}),
        ("setitem(stream=s)", lambda: d.setitem(1, 5, stream=s), {"cuMemcpyHtoDAsync": 1}),
        ("bind(s) copy", lambda: d.bind(s).copy_to_host(), {"cuMemcpyDtoHAsync": 1}),
        ("bind(s).bind() copy", lambda: d.bind(s).bind().copy_to_host(), {"cuMemcpyDtoH": 1}),
        ("reshape of bound", lambda: d.bind(s).reshape(2, 4).copy_to_host(),
         {"cuMemcpyDtoH": 1}),
    ]:
        c = _counts(tdrv)
        call()
        s.synchronize()
        assert _delta(tdrv, c) == expect, what
    s2.synchronize()


@pytest.fixture
def busy(cuda, tdrv):
    """busy(stream): queues a kernel that 'runs' 600 ms on stream (the test driver's launch
    delay), so that work queued behind it waits."""
    k = cuda.jit("void(int32[:])")(_noop)
    scratch = cuda.device_array(4, dtype=cuda.int32)
    k[1, 1](scratch)
    cuda.synchronize()
    tdrv.set_launch_delay_ms(600)

    def run(stream):
        k[1, 1, stream](scratch)

    try:
        yield run
    finally:
        tdrv.set_launch_delay_ms(0)
        cuda.synchronize()


def test_a_bound_copy_waits_for_its_stream_only(cuda, tdrv, busy):
    s1, s2 = cuda.stream(), cuda.stream()
    h = np.arange(16, dtype=np.int64)
    d = cuda.to_device(h).bind(s1)
    t0 = time.monotonic()
    busy(s1)
    out = cuda.pinned_array(16, np.int64)  # page-locked: the copy itself is asynchronous
    out[:] = -1
    assert d.copy_to_host(out) is out
    # queued behind the kernel on s1: it returned at once (a synchronous copy on the default
    # stream would have waited for s1), and the copy has not run
    assert time.monotonic() - t0 < 0.4
    time.sleep(0.1)
    if time.monotonic() - t0 < 0.5:  # the kernel cannot be done yet
        assert (out == -1).all() and s1.query() is False
    s1.synchronize()
    assert (out == h).all()

    # an explicit stream wins: the copy does not wait for s1
    t0 = time.monotonic()
    busy(s1)
    out2 = np.full(16, -1, np.int64)
    d.copy_to_host(out2, stream=s2)
    s2.synchronize()
    assert (out2 == h).all()
    if time.monotonic() - t0 < 0.5:
        assert s1.query() is False
    s1.synchronize()

    # views inherit the stream; writes queue there too
    t0 = time.monotonic()
    busy(s1)
    zeros = np.zeros(4, np.int64)  # pageable: the driver takes its bytes at the call
    d[4:8].copy_to_device(zeros)
    out3 = cuda.pinned_array(16, np.int64)
    out3[:] = -1
    d.copy_to_host(out3)
    assert time.monotonic() - t0 < 0.4
    time.sleep(0.05)
    if time.monotonic() - t0 < 0.5:
        assert (out3 == -1).all()
    s1.synchronize()
    assert (out3 == np.r_[0:4, [0] * 4, 8:16]).all()

    # into pageable memory the driver returns only once the copy is done: the call waits
    # for s1's kernel, and the values are there when it returns
    busy(s1)
    out4 = np.full(16, -1, np.int64)
    d.copy_to_host(out4)
    assert (out4 == np.r_[0:4, [0] * 4, 8:16]).all()


def test_scalar_reads_and_writes_complete_before_returning(cuda, tdrv, busy):
    s = cuda.stream()
    d = cuda.to_device(np.arange(8, dtype=np.float64), stream=s)
    busy(s)
    d[2] = 42.5  # queued behind the kernel; returns once written
    assert d[2] == 42.5 and d.getitem(2) == 42.5  # a read waits for its value
    assert (d.copy_to_host() == [0, 1, 42.5, 3, 4, 5, 6, 7]).all()  # a new host array too
    assert (np.asarray(d[1:3]) == [1, 42.5]).all()


# ------------------------------------------------------------------ values --------------

@pytest.mark.gpu
def test_transpose_of_a_bound_array_values(cuda):
    """d.T of an array bound to a stream holds the transposed values: the transpose kernel
    (nbc_transpose2d) queued on that stream computes them, so this checks the kernel on a real
    GPU only (tests/gpu/run.sh python); the software test driver runs no kernel code."""
    s = cuda.stream()
    h = np.arange(24, dtype=np.float32).reshape(4, 6)
    d = cuda.to_device(h, stream=s)
    t = d.T
    s.synchronize()
    assert (t.copy_to_host() == h.T).all()


def test_values_round_trip_through_a_bound_array(cuda):
    s = cuda.stream()
    h = np.arange(24, dtype=np.float32).reshape(4, 6)
    d = cuda.to_device(h, stream=s)
    s.synchronize()
    assert (d.copy_to_host() == h).all()
    d[1] = np.full(6, -1, np.float32)
    d.setitem((2, slice(0, 3)), 5, stream=s)
    d[:, 5] = 9
    expect = h.copy()
    expect[1] = -1
    expect[2, :3] = 5
    expect[:, 5] = 9
    out = np.empty_like(h)
    d.copy_to_host(out)
    s.synchronize()
    assert (out == expect).all()
    assert d[3, 4] == expect[3, 4] and d.getitem((0, 1)) == expect[0, 1]
    parts = [p.copy_to_host() for p in d.ravel().split(10)]
    assert (np.concatenate(parts) == expect.ravel()).all()
    e = cuda.device_array_like(h, stream=s)
    e.copy_to_device(d)
    assert (e.copy_to_host() == expect).all()
    assert (np.asarray(d.view(np.int32)) == expect.view(np.int32)).all()


# ------------------------------------------------------------------ pointers, sizes -----

def _alloc_size(shape, strides, itemsize):
    """numba's memory_size_from_info: from the lowest to the highest byte, 0 when empty."""
    if 0 in shape:
        return 0
    lo = sum((n - 1) * st for n, st in zip(shape, strides) if st < 0)
    hi = sum((n - 1) * st for n, st in zip(shape, strides) if st > 0)
    return hi - lo + itemsize


def test_alloc_size(cuda):
    d = cuda.device_array((5, 7), np.float64)
    assert d.alloc_size == d.nbytes == 280
    for v in (d[::2], d[:, 1:6:2], d[1], d[1:3, 2], d[::-1], d[::-2, ::-3], d[2:2], d[3, 4:5]):
        assert v.alloc_size == _alloc_size(v.shape, v.strides, 8), v.shape
    assert d[::2].alloc_size == 280  # rows 0, 2, 4: from row 0 to row 4's end
    assert d[:4:2].alloc_size == 3 * 7 * 8 and d[:, :6:2].alloc_size == 280 - 16
    assert cuda.device_array(0).alloc_size == 0
    assert cuda.device_array((3, 4), np.int32, strides=(32, 4)).alloc_size == 2 * 32 + 16
    assert cuda.to_device(np.zeros(3, np.int16)).bind(cuda.stream()).alloc_size == 6
    assert d.view(np.float32).alloc_size == 280


def test_device_ctypes_pointer(cuda):
    d = cuda.device_array(10, np.float32)
    p = d.device_ctypes_pointer
    assert isinstance(p, ctypes.c_size_t)  # as numba-cuda's MemoryPointer gives it
    assert p.value == d.device_pointer and p.value != 0
    assert d[3:].device_ctypes_pointer.value == d.device_pointer + 12
    assert cuda.device_array(0).device_ctypes_pointer.value == 0
    arg = d[2:].as_cuda_arg()  # numba's kernel-argument form: the same pointer
    assert isinstance(arg, ctypes.c_size_t) and arg.value == d.device_pointer + 8


# ------------------------------------------------------------------ lifetime ------------

def test_a_stream_that_refers_back_to_its_array_is_collected(cuda, tdrv):
    class Holder:
        def __init__(self, s):
            self.handle = int(s)

        def __cuda_stream__(self):
            return (0, self.handle)

    s = cuda.stream()
    gc.collect()
    before = tdrv.live_allocations_released()
    holder = Holder(s)
    holder.array = cuda.device_array(100, stream=holder)  # a cycle through the array
    holder.view = holder.array[1:].bind(holder)
    assert holder.array.stream is holder and tdrv.live_allocations_released() == before + 1
    del holder
    gc.collect()
    assert tdrv.live_allocations_released() == before


def test_a_bound_array_keeps_its_stream_alive(cuda):
    d = cuda.device_array(4, stream=cuda.stream())
    gc.collect()
    s = d.stream
    assert "CUDA stream" in repr(s)
    d.copy_to_device(np.zeros(4))
    s.synchronize()
    assert (d.copy_to_host() == 0).all()
