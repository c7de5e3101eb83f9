"""numba's interop helpers: is_cuda_array, as_cuda_array, from_cuda_array_interface (views of
foreign device memory, no copy), and is_float16/bfloat16/fp8_supported."""
import contextlib
from unittest.mock import patch

import numpy as np
import pytest

import nbcuda as cuda


class Foreign:
    """Something that only speaks __cuda_array_interface__ (as CuPy or PyTorch would)."""

    def __init__(self, d, **extra):
        self.d = d
        self.__cuda_array_interface__ = dict(d.__cuda_array_interface__, **extra)


def test_is_cuda_array():
    d = cuda.device_array(4, np.float32)
    assert cuda.is_cuda_array(d) and cuda.is_cuda_array(Foreign(d))
    assert not cuda.is_cuda_array(np.zeros(4)) and not cuda.is_cuda_array(3)


def test_as_cuda_array_views_the_same_memory():
    d = cuda.device_array((3, 4), np.float64)
    f = Foreign(d)
    a = cuda.as_cuda_array(f)
    assert a.device_pointer == d.device_pointer
    assert a.shape == (3, 4) and a.strides == (32, 8) and a.dtype == np.float64
    with pytest.raises(TypeError, match=r"^\*obj\* doesn't implement the cuda array interface\.$"):
        cuda.as_cuda_array(np.zeros(3))


def test_from_cuda_array_interface():
    d = cuda.device_array(8, np.int32)
    desc = dict(d.__cuda_array_interface__)
    a = cuda.from_cuda_array_interface(desc, owner=d)
    assert a.device_pointer == d.device_pointer and a.shape == (8,)
    with pytest.raises(NotImplementedError, match="Masked arrays are not supported"):
        cuda.from_cuda_array_interface(dict(desc, mask=object()))


@contextlib.contextmanager
def _synchronizes():
    """The streams whose Stream.synchronize is called (patched on the class, as numba-cuda's
    test_cuda_array_interface patches its driver's Stream), still synchronizing them."""
    calls, real = [], cuda.Stream.synchronize

    def synchronize(stream):
        calls.append(int(stream))
        return real(stream)
    with patch.object(cuda.Stream, "synchronize", synchronize):
        yield calls


def test_stream_of_the_interface_is_synchronized():
    s = cuda.stream()
    d = cuda.device_array(8, np.int32)
    with _synchronizes() as sync:
        cuda.as_cuda_array(Foreign(d, stream=int(s)))
    assert sync == [int(s)]
    with _synchronizes() as sync:
        cuda.as_cuda_array(Foreign(d, stream=int(s)), sync=False)
        cuda.as_cuda_array(Foreign(d))
    assert sync == []


def test_type_support_queries():
    assert cuda.is_float16_supported() is True
    assert isinstance(cuda.is_bfloat16_supported(), bool)
    assert isinstance(cuda.is_fp8_supported(), bool)


@pytest.mark.gpu
def test_as_cuda_array_values_on_the_gpu(gpu):
    h = np.arange(10, dtype=np.float32)
    d = cuda.to_device(h)
    np.testing.assert_array_equal(cuda.as_cuda_array(Foreign(d)).copy_to_host(), h)
    assert cuda.is_bfloat16_supported() is True  # the H200 is compute capability 9.0


def _touch(a):
    a[0] = 1.0


class _Interface:
    def __init__(self, desc):
        self.__cuda_array_interface__ = desc


def test_interface_version_and_mask_everywhere():
    # numba's from_cuda_array_interface needs an int version and, from version 1 on, refuses
    # a mask; as_cuda_array and kernel arguments go through the same check
    d = cuda.device_array(4, np.float64)
    desc = dict(d.__cuda_array_interface__)
    k = cuda.jit("void(float64[:])")(_touch)
    no_version = {key: v for key, v in desc.items() if key != "version"}
    for bad in (no_version, dict(desc, version="3")):
        with pytest.raises(TypeError, match="needs an int 'version'"):
            cuda.from_cuda_array_interface(bad)
        with pytest.raises(TypeError, match="needs an int 'version'"):
            cuda.as_cuda_array(_Interface(bad))
        with pytest.raises(TypeError, match="needs an int 'version'"):
            k[1, 1](_Interface(bad))
    masked = dict(desc, mask=object())
    with pytest.raises(NotImplementedError, match="Masked arrays are not supported"):
        k[1, 1](_Interface(masked))
    with pytest.raises(NotImplementedError, match="Masked arrays are not supported"):
        cuda.as_cuda_array(_Interface(masked))
    # version 0 had no mask: numba ignores the key there
    assert cuda.from_cuda_array_interface(dict(masked, version=0), owner=d).shape == (4,)
    k[1, 1](_Interface(dict(masked, version=0)))


class _RaisingKey(str):
    """A str key equal in hash to a real one whose comparison raises."""

    def __hash__(self):
        return hash(str(self))

    def __eq__(self, other):
        raise RuntimeError("comparison refused")


def test_interface_lookup_errors_propagate():
    # the interface's keys are looked up by their interned names; an error raised while
    # comparing a key is the caller's error, never swallowed or turned into a crash
    d = cuda.device_array(4, np.float64)
    k = cuda.jit("void(float64[:])")(_touch)
    for key in ("version", "shape", "stream"):
        desc = dict(d.__cuda_array_interface__)
        desc.pop(key)
        desc[_RaisingKey(key)] = 0
        for call in (lambda: k[1, 1](_Interface(desc)),
                     lambda: cuda.as_cuda_array(_Interface(desc)),
                     lambda: cuda.from_cuda_array_interface(desc, owner=d)):
            with pytest.raises(RuntimeError, match="comparison refused"):
                call()


def _copy_first(src, out):
    out[0] = src[0]


def test_launch_synchronizes_the_interfaces_stream(tdrv):
    # __cuda_array_interface__ v3 as numba's launch does it: a kernel argument whose
    # producer named a stream has that stream's synchronize() called, once per argument
    # (numba-cuda's test_launch_sync, test_launch_sync_two_streams); not without a stream,
    # nor with config.CUDA_ARRAY_INTERFACE_SYNC off (test_launch_sync_disabled)
    k = cuda.jit("void(int32[::1], int32[::1])")(_copy_first)
    two = cuda.jit("void(int32[::1], int32[::1], int32[::1])")(_copy_first_of_two)
    s1, s2 = cuda.stream(), cuda.stream()
    d, out = cuda.device_array(8, np.int32), cuda.device_array(1, np.int32)
    with _synchronizes() as sync:
        k[1, 1](Foreign(d, stream=int(s1)), out)
    assert sync == [int(s1)]
    with _synchronizes() as sync:
        two[1, 1](Foreign(d, stream=int(s1)), Foreign(d, stream=int(s2)), out)
    assert sync == [int(s1), int(s2)]
    with _synchronizes() as sync:
        k[1, 1](Foreign(d, stream=None), out)  # no stream: nothing to synchronize
        k[1, 1](Foreign(d), out)
        k[1, 1](d, out)
    assert sync == []
    assert cuda.config.CUDA_ARRAY_INTERFACE_SYNC == 1
    cuda.config.CUDA_ARRAY_INTERFACE_SYNC = 0
    try:
        with _synchronizes() as sync:
            k[1, 1](Foreign(d, stream=int(s1)), out)
            cuda.as_cuda_array(Foreign(d, stream=int(s1)))
        assert sync == []
    finally:
        cuda.config.CUDA_ARRAY_INTERFACE_SYNC = 1
    with pytest.raises(TypeError):
        k[1, 1](Foreign(d, stream="s"), out)
    waits = tdrv.calls("cuStreamWaitEvent")
    k[1, 1](Foreign(d, stream=int(s1)), out)
    assert tdrv.calls("cuStreamWaitEvent") == waits  # the host synchronized: nothing to wait
    # a lazy kernel types its argument from the interface, then synchronizes at launch
    lazy = cuda.jit(_copy_first)
    with _synchronizes() as sync:
        lazy[1, 1](Foreign(d, stream=int(s2)), out)
    assert sync == [int(s2)]


def _copy_first_of_two(a, b, out):
    out[0] = a[0] + b[0]


def _slow_write(x):
    for _ in range(100):
        cuda.nanosleep(1000000)  # about 0.1 s in all
    x[0] = 42


@pytest.mark.gpu
def test_launch_on_another_stream_sees_the_producers_result(gpu):
    # the producer's kernel is still sleeping when the consumer's launch is queued on another
    # stream; the consumer reads what the producer wrote, not the zero before it
    slow = cuda.jit("void(int32[::1])")(_slow_write)
    k = cuda.jit("void(int32[::1], int32[::1])")(_copy_first)
    producer, consumer = cuda.stream(), cuda.stream()
    x = cuda.to_device(np.zeros(1, np.int32))
    out = cuda.to_device(np.full(1, -1, np.int32))
    cuda.synchronize()
    slow[1, 1, producer](x)
    k[1, 1, consumer](Foreign(x, stream=int(producer)), out)
    consumer.synchronize()
    assert out.copy_to_host()[0] == 42


class _CountedInterface:
    """An array whose interface is made anew at each read, as CuPy's is."""
    def __init__(self, array):
        self.array, self.reads = array, 0

    @property
    def __cuda_array_interface__(self):
        self.reads += 1
        return dict(self.array.__cuda_array_interface__)


def _untyped(a, b):
    b[0] = a[0]


def test_a_launch_reads_each_interface_once():
    # the dispatch of a kernel without a signature types the arguments from the interfaces
    # it reads, and the launch packs from those same dicts
    a = _CountedInterface(cuda.to_device(np.arange(4, dtype=np.float32)))
    b = _CountedInterface(cuda.device_array(4, np.float32))
    for k in (cuda.jit(_untyped), cuda.jit("void(float32[::1], float32[::1])")(_untyped)):
        k[1, 1](a, b)  # the first launch compiles (the lazy one types in full)
        a.reads = b.reads = 0
        for _ in range(3):
            k[1, 1](a, b)
        assert (a.reads, b.reads) == (3, 3)


def _uninterned(text):
    """An equal str that is not the interned object (as a key read from JSON or built)."""
    s = "".join(list(text))
    assert s == text and s is not text
    return s


def test_interface_keys_match_by_value_and_wide_values():
    # the interface's keys are matched by identity first (interned literals) and then by
    # value: a dict with equal but distinct key objects describes the same array; a typestr
    # is its kind and all of its digits; pointers and handles above 2**63 are read whole
    d = cuda.to_device(np.arange(4, dtype=np.float32))
    desc = dict(d.__cuda_array_interface__)
    rebuilt = {_uninterned(key): v for key, v in desc.items()}
    view = cuda.as_cuda_array(_Interface(rebuilt))
    assert (view.shape, view.dtype, view.device_ctypes_pointer.value) == (
        (4,), np.float32, d.device_ctypes_pointer.value)
    for bad in ("<f4x", "<f", "<f4 ", ">f4"):
        with pytest.raises(TypeError, match="unsupported typestr"):
            cuda.as_cuda_array(_Interface(dict(desc, typestr=bad)))
    high = dict(desc, data=(2**63 + 256, False), stream=None)
    assert cuda.as_cuda_array(_Interface(high)).device_ctypes_pointer.value == 2**63 + 256
    with pytest.raises(OverflowError):
        cuda.as_cuda_array(_Interface(dict(desc, data=(2**64, False))))
    with pytest.raises(OverflowError):
        cuda.as_cuda_array(_Interface(dict(desc, data=(-1, False))))


def test_launch_packs_an_interface_with_equal_keys(tdrv):
    # a kernel argument whose interface has equal but not identical keys is packed as the
    # array it describes, with and without a signature
    import struct
    d = cuda.to_device(np.arange(4, dtype=np.float32))
    rebuilt = {_uninterned(key): v for key, v in d.__cuda_array_interface__.items()}
    out = cuda.device_array(4, np.float32)
    for k in (cuda.jit(_untyped), cuda.jit("void(float32[::1], float32[::1])")(_untyped)):
        k[1, 1](_Interface(rebuilt), out)
        words = struct.unpack("<7q", bytes(tdrv.last_launch().param_bytes[:56]))
        # meminfo, parent, nitems, itemsize, data, shape, strides
        assert words[2:] == (4, 4, d.device_ctypes_pointer.value, 4, 4)
