"""numba's interop helpers: is_cuda_array, as_cuda_array, from_cuda_array_interface (views of
foreign device memory, no copy), and is_float16/bfloat16/fp8_supported."""
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


def test_stream_of_the_interface_is_synchronized(tdrv):
    s = cuda.stream()
    d = cuda.device_array(8, np.int32)
    before = tdrv.calls("cuStreamSynchronize")
    cuda.as_cuda_array(Foreign(d, stream=int(s)))
    assert tdrv.calls("cuStreamSynchronize") == before + 1
    cuda.as_cuda_array(Foreign(d, stream=int(s)), sync=False)
    assert tdrv.calls("cuStreamSynchronize") == before + 1


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
