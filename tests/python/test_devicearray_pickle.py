"""Pickling device arrays: a contiguous host copy that the unpickling process rebuilds with
to_device() on its current device, the host buffer out of band under protocol 5."""
import copy
import pickle

import numpy as np
import pytest
from conftest import device_array_cases


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_round_trip(cuda, protocol):
    for name, (d, h) in device_array_cases(cuda).items():
        r = pickle.loads(pickle.dumps(d, protocol=protocol))
        assert type(r) is cuda.DeviceNDArray, name
        assert r.shape == h.shape and r.dtype == h.dtype, name
        assert r.device_pointer != d.device_pointer or d.nbytes == 0, name
        got = r.copy_to_host()
        np.testing.assert_array_equal(got, h, err_msg=name)
        # contiguous where it came from a strided view; F order where it was F-contiguous
        assert r.is_c_contiguous() or r.is_f_contiguous(), name
        if name == "2d F":
            assert r.is_f_contiguous() and not r.is_c_contiguous()


def test_protocol5_out_of_band(cuda):
    h = np.arange(1 << 16, dtype=np.float64)
    d = cuda.to_device(h)
    buffers = []
    data = pickle.dumps(d, protocol=5, buffer_callback=buffers.append)
    assert len(buffers) == 1
    assert buffers[0].raw().nbytes == h.nbytes
    assert len(data) < 1024  # the elements are not in the stream
    r = pickle.loads(data, buffers=buffers)
    np.testing.assert_array_equal(r.copy_to_host(), h)
    # in band without a callback: the elements are in the stream
    assert len(pickle.dumps(d, protocol=5)) > h.nbytes


def test_unpickled_on_current_device(cuda):
    if len(cuda.gpus) < 2:
        pytest.skip("needs two devices")
    d = cuda.to_device(np.arange(5.0))
    data = pickle.dumps(d)
    with cuda.gpus[1]:
        r = pickle.loads(data)
        assert cuda.get_current_device().id == 1
        assert r.gpu_data.context.device.id == 1
        np.testing.assert_array_equal(r.copy_to_host(), np.arange(5.0))
    assert d.gpu_data.context.device.id == 0


def test_stream_stays_behind(cuda):
    s = cuda.stream()
    d = cuda.to_device(np.arange(4), stream=s)
    assert d.stream is s
    r = pickle.loads(pickle.dumps(d))
    assert r.stream == 0


def test_negative_strides_refused_as_copy_to_host(cuda):
    d = cuda.to_device(np.arange(6.0))[::-1]
    with pytest.raises(NotImplementedError, match="negative strides"):
        d.copy_to_host()
    with pytest.raises(NotImplementedError, match="negative strides"):
        pickle.dumps(d)


def test_copy_is_shallow_deepcopy_is_not(cuda):
    s = cuda.stream()
    d = cuda.to_device(np.arange(6.0)).bind(s)
    c = copy.copy(d)
    assert type(c) is cuda.DeviceNDArray and c is not d
    assert c.device_pointer == d.device_pointer and c.stream is s
    assert c.shape == d.shape and c.strides == d.strides
    e = copy.deepcopy(d)
    assert e.device_pointer != d.device_pointer
    np.testing.assert_array_equal(e.copy_to_host(), np.arange(6.0))


def test_unpickled_in_another_process(cuda, run_py, tmp_path):
    h = np.arange(12, dtype=np.int32).reshape(3, 4)
    path = tmp_path / "d.pkl"
    path.write_bytes(pickle.dumps(cuda.to_device(h)[:, ::2], protocol=5))
    out = run_py(f"""
        import pickle, numpy as np, nbcuda
        r = pickle.loads(open({str(path)!r}, "rb").read())
        print(type(r).__name__, r.shape, r.copy_to_host().tolist())
    """)
    assert out.stdout.strip() == f"DeviceNDArray (3, 2) {h[:, ::2].tolist()}"
