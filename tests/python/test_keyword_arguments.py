"""Keyword arguments of the hot functions (module.c's parse_direct): a well-formed call is read
off the argument vector, any other goes through PyArg_ParseTupleAndKeywords, so both give the
same values and Python's own error messages."""
import numpy as np
import pytest

import nbcuda as cuda


class Falsy:
    def __bool__(self):
        raise ZeroDivisionError("no truth")


def test_keywords_give_what_positions_give():
    s = cuda.stream()
    a = cuda.device_array(8, dtype=np.int16, stream=s)
    assert (a.shape, a.dtype, a.stream) == ((8,), np.dtype(np.int16), s)
    f = cuda.device_array(shape=(2, 3), order="F", dtype="float32")
    assert f.is_f_contiguous() and f.shape == (2, 3) and f.dtype == np.float32
    h = np.arange(6, dtype=np.float64)
    d = cuda.to_device(h, stream=s, copy=True)
    s.synchronize()
    np.testing.assert_array_equal(d.copy_to_host(stream=s), h)
    out = np.zeros_like(h)
    d.copy_to_host(ary=out, stream=0)
    np.testing.assert_array_equal(out, h)
    assert cuda.to_device(obj=h, copy=0).shape == (6,)
    assert not cuda.event(timing=False).timing
    assert cuda.event(timing=[1]).timing  # p: any truth value
    assert cuda.current_context(devnum=0) is cuda.current_context()


# (call, exception, words its message has: PyArg's wording differs between Python versions)
MALFORMED = [
    (lambda: cuda.device_array(4, dtype=np.float32, bogus=1), TypeError,
     ["bogus", "device_array()"]),
    (lambda: cuda.device_array(4, shape=4), TypeError, ["shape", "device_array()"]),
    (lambda: cuda.device_array(dtype=np.float32), TypeError, ["shape", "device_array()"]),
    (lambda: cuda.device_array(4, np.float32, None, "C", 0, 1, stream=0), TypeError,
     ["device_array()"]),
    (lambda: cuda.device_array(4, order=1), TypeError, ["str", "int"]),
    (lambda: cuda.device_array(4, order="C\0"), ValueError, ["null character"]),
    (lambda: cuda.device_array(4, order="X"), ValueError, ["order must be 'C' or 'F'"]),
    (lambda: cuda.to_device(np.ones(2), copy=Falsy()), ZeroDivisionError, ["no truth"]),
    (lambda: cuda.event(timing=Falsy()), ZeroDivisionError, ["no truth"]),
    (lambda: cuda.event(1, timing=1), TypeError, ["event()"]),
    (lambda: cuda.device_array(4).copy_to_host(None, 0, stream=0), TypeError,
     ["copy_to_host()"]),
]


@pytest.mark.parametrize("call, kind, words", MALFORMED)
def test_malformed_keyword_calls_raise_pythons_errors(call, kind, words):
    with pytest.raises(kind) as info:
        call()
    assert all(w in str(info.value) for w in words), str(info.value)
