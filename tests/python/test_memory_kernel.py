"""Device arrays (to_device, copy_to_host, device_array, __cuda_array_interface__) and
kernel launches: argument packing checked byte by byte in the test driver's record."""
import struct

import pytest

from conftest import sig_texts

np = pytest.importorskip("numpy")


def test_to_device_round_trip(cuda):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    d = cuda.to_device(a)
    assert d.shape == (3, 4) and d.strides == (16, 4) and d.dtype == np.float32
    assert d.size == 12 and d.ndim == 2 and len(d) == 3 and d.nbytes == 48
    h = d.copy_to_host()
    assert isinstance(h, np.ndarray) and (h == a).all()
    out = np.zeros_like(a)
    assert d.copy_to_host(out) is out and (out == a).all()
    assert (np.asarray(d) == a).all()


def test_to_device_fortran_and_buffers(cuda):
    a = np.asfortranarray(np.arange(6, dtype=np.int64).reshape(2, 3))
    d = cuda.to_device(a)
    assert d.strides == (8, 16) and d.is_f_contiguous()
    assert (d.copy_to_host() == a).all() and d.copy_to_host().flags.f_contiguous
    import array
    d = cuda.to_device(array.array("d", [1.0, 2.0]))
    assert d.dtype == np.float64 and list(d.copy_to_host()) == [1.0, 2.0]
    d = cuda.to_device([1, 2, 3])  # no buffer: through numpy.asarray like numba
    assert list(d.copy_to_host()) == [1, 2, 3]
    d = cuda.to_device(((1.0, 2.0), (3.0, 4.0)))  # a tuple is one argument of asarray
    assert d.shape == (2, 2) and d.copy_to_host().tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_to_device_non_contiguous_is_value_error(cuda):
    a = np.arange(20, dtype=np.float32)[::2]
    with pytest.raises(ValueError, match="Array contains non-contiguous buffer and cannot be "
                       "transferred as a single memory region"):
        cuda.to_device(a)


def test_to_device_with_stream_copy_and_to(cuda):
    s = cuda.stream()
    a = np.arange(5, dtype=np.int32)
    d = cuda.to_device(a, stream=s)
    s.synchronize()
    h = d.copy_to_host(stream=s)  # asynchronous on a stream, as in numba
    s.synchronize()
    assert (h == a).all()
    d2 = cuda.to_device(a * 2, to=d)
    assert d2 is d and (d.copy_to_host() == a * 2).all()
    assert cuda.to_device(d) is d
    e = cuda.to_device(np.zeros(0, np.float32))
    assert e.shape == (0,) and e.copy_to_host().shape == (0,)


def test_device_arrays_free_their_memory(cuda, tdrv):
    before = tdrv.live_allocations_released()
    d = cuda.to_device(np.ones(100))
    assert tdrv.live_allocations_released() == before + 1
    del d
    assert tdrv.live_allocations_released() == before


def test_device_array_and_cai(cuda):
    d = cuda.device_array((4, 5), dtype=np.float32)
    assert d.shape == (4, 5) and d.dtype == np.float32
    cai = d.__cuda_array_interface__
    assert cai["version"] == 3 and cai["shape"] == (4, 5) and cai["strides"] is None
    assert cai["typestr"] == "<f4" and cai["data"][1] is False and cai["data"][0] != 0
    d = cuda.device_array(7, dtype=cuda.int16)
    assert d.shape == (7,) and d.dtype == np.int16
    f = cuda.device_array((2, 3), order="F")
    assert f.dtype == np.float64 and f.strides == (8, 16)
    assert f.__cuda_array_interface__["strides"] == (8, 16)
    like = cuda.device_array_like(np.zeros((3, 2), np.uint8))
    assert like.shape == (3, 2) and like.dtype == np.uint8


class FakeCupy:
    """An object exposing only __cuda_array_interface__ (like a CuPy array)."""

    def __init__(self, dev):
        self.dev = dev
        self.__cuda_array_interface__ = dev.__cuda_array_interface__


def test_cai_objects_are_wrapped_without_copy(cuda):
    d = cuda.to_device(np.arange(3, dtype=np.float64))
    w = cuda.to_device(FakeCupy(d))
    assert w.__cuda_array_interface__["data"] == d.__cuda_array_interface__["data"]
    assert (w.copy_to_host() == [0, 1, 2]).all()


def axpy(r, a, x, n):
    i = 0
    if i < n:
        r[i] = a * x[i]


def param_sizes(info, sizes):
    """Offsets of parameters of these sizes at their natural alignment (the PTX .param
    layout the driver reads); uses the driver's own offsets when it recorded them."""
    if info.param_size[0]:
        return [(info.param_offset[k], info.param_size[k]) for k in range(info.nparams)]
    out, off = [], 0
    for size in sizes:
        off = (off + size - 1) // size * size
        out.append((off, size))
        off += size
    return out


def words(info, k, sizes=None):
    sizes = sizes or WORDS
    off, size = param_sizes(info, sizes)[k]
    return bytes(info.param_bytes[off:off + size])


WORDS = [8] * 64


def test_launch_packs_arrays_and_scalars(cuda, tdrv):
    k = cuda.jit("void(float32[:], float32, float32[:], int16)")(axpy)
    x = cuda.to_device(np.arange(10, dtype=np.float32))
    r = cuda.device_array(10, dtype=np.float32)
    s = cuda.stream()
    n = tdrv.launch_count()
    k[(3, 2), 32, s, 128](r, 2.5, x, -1234)
    assert tdrv.launch_count() == n + 1
    info = tdrv.last_launch()
    assert list(info.grid) == [3, 2, 1] and list(info.block) == [32, 1, 1]
    assert info.shared_bytes == 128 and info.stream == int(s)
    assert info.function.decode() == k.symbol
    assert info.nparams == 7 + 1 + 7 + 1
    sizes = [8] * 7 + [4] + [8] * 7 + [2]
    u = lambda i: struct.unpack("<q", words(info, i, sizes))[0]  # noqa: E731
    # r: meminfo, parent, nitems, itemsize, data, shape, stride
    assert [u(i) for i in range(7)] == [0, 0, 10, 4, r.device_pointer, 10, 4]
    assert struct.unpack("<f", words(info, 7, sizes))[0] == 2.5
    assert [u(i) for i in range(8, 15)] == [0, 0, 10, 4, x.device_pointer, 10, 4]
    assert struct.unpack("<h", words(info, 15, sizes))[0] == -1234
    # numba-cuda passes 70000 wrapped (ctypes.c_int16); nbcuda refuses it
    with pytest.raises(OverflowError, match="70000 does not fit the parameter's type int16"):
        k[(3, 2), 32, s, 128](r, 2.5, x, 70000)


def fill(a):
    a[0] = 1


def fill2d(a):
    a[0, 0] = 1


def test_launch_with_host_array_copies_back(cuda, tdrv):
    k = cuda.jit("void(float64[:, ::1])")(fill2d)
    h = np.zeros((2, 3))
    allocs = tdrv.live_allocations_released()
    k[1, 1](h)
    info = tdrv.last_launch()
    u = lambda i: struct.unpack("<q", words(info, i))[0]  # noqa: E731
    assert [u(i) for i in (2, 3, 5, 6, 7, 8)] == [6, 8, 2, 3, 24, 8]
    assert tdrv.live_allocations_released() == allocs  # the temporary device copy is freed


def test_launch_accepts_cai_objects(cuda, tdrv):
    k = cuda.jit("void(int32[:])")(fill)
    d = cuda.device_array(8, dtype=np.int32)
    k[1, 1](FakeCupy(d))
    info = tdrv.last_launch()
    assert struct.unpack("<q", words(info, 4))[0] == d.device_pointer


def test_launch_argument_errors(cuda):
    k = cuda.jit("void(float32[::1])")(fill)
    d = cuda.device_array(4, dtype=np.float64)
    # An argument the signature does not accept is a TypeError, as numba's dispatcher says.
    with pytest.raises(TypeError, match="float32"):
        k[1, 1](d)
    with pytest.raises(TypeError, match="takes 1 arguments"):
        k[1, 1](d, d)
    with pytest.raises(ValueError, match="griddim and blockdim"):
        k[1](d)
    with pytest.raises(ValueError, match="launch configuration"):
        k(d)
    f32 = cuda.to_device(np.zeros((4, 4), np.float32))
    with pytest.raises(TypeError, match="1d|2d"):
        k[1, 1](f32)
    with pytest.raises(TypeError, match="Expected a Stream object or 0"):
        k[1, 1, "stream"]


def test_lazy_jit_specializes_on_argument_types(cuda, tdrv):
    k = cuda.jit(fill)
    k[1, 1](cuda.device_array(3, dtype=np.int64))
    k[1, 1](cuda.device_array(3, dtype=np.float32))
    k[1, 1](cuda.device_array(3, dtype=np.int64))
    base = cuda.device_array(6, dtype=np.int8)
    strided = type("Strided", (), {"__cuda_array_interface__": {
        "shape": (3,), "strides": (2,), "typestr": "|i1", "version": 3,
        "data": (base.device_pointer, False)}})()
    k[1, 1](strided)  # a strided device array: layout A
    info = tdrv.last_launch()
    assert struct.unpack("<q", words(info, 6))[0] == 2  # the stride in bytes
    assert sorted(sig_texts(k)) == ["void(float32[::1])", "void(int64[::1])", "void(int8[:])"]
    assert tdrv.last_launch().function.decode() in str(k.inspect_asm())


def test_jit_device_function_keeps_py_func(cuda):
    @cuda.jit(device=True)
    def helper(x):
        return x + 1

    assert helper.py_func.__name__ == "helper" and helper.__name__ == "helper"
    with pytest.raises(TypeError):
        helper(1)

    @cuda.jit("void(float32[:])")
    def kern(a):
        a[0] = helper(a[0])

    assert ".entry" in kern.inspect_asm("void(float32[:])")


def test_kernel_reloads_after_close(cuda, tdrv):
    """close() resets the devices: the primary context that comes back may have the same
    handle, but the kernel's module is gone, so the kernel must load its code again."""
    k = cuda.jit("void(float32[:])")(fill)
    k[1, 1](cuda.device_array(4, dtype=np.float32))
    cuda.close()
    n = tdrv.launch_count()
    k[1, 1](cuda.device_array(4, dtype=np.float32))
    assert tdrv.launch_count() == n + 1
    cuda.close()  # pop first: a reset context must not stay on this thread's stack
    cuda.gpus[0].reset()
    k[1, 1](cuda.device_array(4, dtype=np.float32))
    assert tdrv.launch_count() == n + 2
