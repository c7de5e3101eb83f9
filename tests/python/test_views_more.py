"""DeviceNDArray.view(dtype), squeeze() and split(), as numba's: views of the same memory."""
import numpy as np
import pytest

import nbcuda as cuda


def test_view_dtype_same_and_other_size():
    d = cuda.device_array((4, 8), np.float32)
    v = d.view(np.int32)
    assert v.shape == (4, 8) and v.dtype == np.int32 and v.device_pointer == d.device_pointer
    w = d.view(np.float64)
    assert w.shape == (4, 4) and w.strides == (32, 8) and w.nbytes == d.nbytes
    b = d.view(np.uint8)
    assert b.shape == (4, 32) and b.strides == (32, 1)
    with pytest.raises(ValueError, match="must be a divisor"):
        cuda.device_array((4, 3), np.float32).view(np.float64)
    with pytest.raises(ValueError, match="must be C-contiguous"):
        d[:, ::2].view(np.float64)


def test_squeeze():
    d = cuda.device_array((1, 5, 1, 3), np.float32)
    assert d.squeeze().shape == (5, 3)
    assert d.squeeze(axis=0).shape == (5, 1, 3)
    assert d.squeeze(axis=(0, -2)).shape == (5, 3)
    assert d.squeeze().device_pointer == d.device_pointer
    with pytest.raises(ValueError, match="size not equal to one"):
        d.squeeze(axis=1)
    with pytest.raises(IndexError):
        d.squeeze(axis=4)


def test_split():
    d = cuda.device_array(10, np.float64)
    parts = list(d.split(4))
    assert [p.shape for p in parts] == [(4,), (4,), (2,)]
    assert [p.device_pointer - d.device_pointer for p in parts] == [0, 32, 64]
    with pytest.raises(ValueError, match="only support 1d array"):
        cuda.device_array((2, 2), np.float64).split(1)
    with pytest.raises(ValueError, match="only support unit stride"):
        d[::2].split(2)


@pytest.mark.gpu
def test_views_carry_values_on_the_gpu(gpu):
    h = np.arange(12, dtype=np.float32).reshape(1, 12)
    d = cuda.to_device(h)
    np.testing.assert_array_equal(d.view(np.int32).copy_to_host(), h.view(np.int32))
    np.testing.assert_array_equal(d.squeeze().copy_to_host(), h.squeeze())
    parts = list(d.squeeze().split(5))
    np.testing.assert_array_equal(parts[2].copy_to_host(), h[0, 10:])
