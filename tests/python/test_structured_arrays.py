"""Device arrays of numpy structured (record) dtypes, as numba-cuda keeps them: the array holds
the exact numpy dtype (fields, offsets, alignment, padding) from to_device, device_array,
device_array_like or an imported __cuda_array_interface__ (whose `descr` lists the fields);
views share it; copies give back the same bytes in the same dtype; copies between a structured
dtype and another dtype raise numba's "incompatible dtype". A kernel launch sees kind 'V' and
the record's size for device arrays, interface objects and host arrays alike. Raw bytes
(np.dtype('V8')) are kept as such; subarray dtypes and dtypes holding objects are refused.
The test driver simulates device memory, so every copy round-trips for real."""
import os
import sys

import numpy as np
import pytest

import nbcuda as cuda

ALIGNED = np.dtype([("a", np.float64), ("b", np.int32)], align=True)  # 16 bytes, 4 padding
PACKED = np.dtype([("a", np.float64), ("b", np.int32)])  # 12 bytes
NESTED = np.dtype([("v", np.float32, (3,)), ("n", [("x", np.int16), ("y", np.uint8)])])
OFFSETS = np.dtype({"names": ["a"], "formats": [np.float32], "offsets": [4], "itemsize": 12})
DTYPES = [ALIGNED, PACKED, NESTED, OFFSETS]


def records(dtype, shape, order="C"):
    """A host array of dtype with distinct bytes in every element (padding included)."""
    n = int(np.prod(shape))
    raw = (np.arange(n * dtype.itemsize) % 251).astype(np.uint8)
    flat = raw.view(dtype)
    return np.array(flat.reshape(shape), order=order)


def same(a, b):
    """Same dtype, shape and bytes (== on records would skip padding)."""
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes("A") == b.tobytes("A")


def takes_floats(x):
    """A kernel typed for float64 arrays: its refusal names what the launch view saw."""
    x[0] = 1.0


class Foreign:
    """Something that only speaks __cuda_array_interface__ (as CuPy or PyTorch would)."""

    def __init__(self, d, **changes):
        self.d = d
        cai = dict(d.__cuda_array_interface__, **changes)
        self.__cuda_array_interface__ = {k: v for k, v in cai.items() if v is not Ellipsis}


@pytest.mark.parametrize("dtype", DTYPES, ids=["aligned", "packed", "nested", "offsets"])
def test_round_trip_keeps_dtype_and_bytes(cuda, dtype):
    h = records(dtype, (5,))
    d = cuda.to_device(h)
    assert d.dtype == dtype and d.dtype.isalignedstruct == dtype.isalignedstruct
    assert d.shape == (5,) and d.strides == (dtype.itemsize,) and d.nbytes == h.nbytes
    back = d.copy_to_host()
    assert same(back, h) and back.dtype.fields == dtype.fields


@pytest.mark.parametrize("order", ["C", "F"])
def test_two_d_in_either_order(cuda, order):
    h = records(ALIGNED, (3, 4), order)
    d = cuda.to_device(h)
    assert d.strides == h.strides and d.dtype == ALIGNED
    back = d.copy_to_host()
    assert same(back, h) and back.flags.f_contiguous == (order == "F")
    t = d.T  # the transpose kernel: its values are checked on a GPU (below)
    assert t.dtype == ALIGNED and t.shape == (4, 3)


@pytest.mark.gpu
@pytest.mark.parametrize("order", ["C", "F"])
def test_two_d_transpose_values_in_either_order(cuda, order):
    """d.T of a 2-D record array holds the records transposed: the transpose kernel computes
    them, so this checks the kernel on a real GPU only (tests/gpu/run.sh python)."""
    h = records(ALIGNED, (3, 4), order)
    t = cuda.to_device(h).T
    # == on records: numpy's own copy of h.T leaves the padding bytes out
    assert (t.copy_to_host() == h.T).all()


def test_device_array_and_device_array_like(cuda):
    d = cuda.device_array(4, dtype=ALIGNED)
    assert d.dtype == ALIGNED and d.dtype.isalignedstruct and d.nbytes == 64
    assert d.__cuda_array_interface__["typestr"] == "|V16"
    f = cuda.device_array((2, 3), dtype=PACKED, order="F")
    assert f.strides == (12, 24) and f.dtype == PACKED
    assert cuda.device_array(3, [("x", "<i2"), ("y", "<f4")]).dtype.itemsize == 6
    h = records(PACKED, (2, 3), "F")
    like = cuda.device_array_like(h)
    assert like.dtype == PACKED and like.strides == h.strides and like.is_f_contiguous()
    assert cuda.device_array_like(cuda.to_device(h)).dtype == PACKED


def test_copy_to_host_into_an_array_and_copy_to_device(cuda):
    h = records(ALIGNED, (6,))
    d = cuda.device_array(6, ALIGNED)
    d.copy_to_device(h)
    out = np.zeros(6, ALIGNED)
    assert d.copy_to_host(out) is out and same(out, h)
    e = cuda.device_array_like(d)
    e.copy_to_device(d)  # device to device
    assert same(e.copy_to_host(), h)
    f = cuda.device_array(6, ALIGNED)
    assert cuda.to_device(h, to=f) is f and same(f.copy_to_host(), h)
    s = cuda.stream()
    g = cuda.to_device(h, stream=s)
    back = g.copy_to_host(stream=s)
    s.synchronize()
    assert same(back, h)


def test_other_host_objects(cuda):
    h = records(ALIGNED, (4,))
    r = cuda.to_device(h.view(np.recarray))  # a subclass: the buffer format "T{d:a:i:b:}"
    assert r.dtype == h.dtype and type(r.copy_to_host()[0]) is np.record
    m = cuda.to_device(memoryview(h))  # no dtype attribute: numpy reads the format
    assert m.dtype == ALIGNED and m.copy_to_host().tobytes() == h.tobytes()
    v = cuda.to_device(h[2])  # a numpy.void: a 0-d array
    assert v.shape == () and v.dtype == ALIGNED and v[()] == h[2]
    assert cuda.to_device([(1.5, 2), (2.5, 3)]).dtype != ALIGNED  # tuples are numbers


def test_element_reads_are_numpy_voids(cuda):
    h = records(ALIGNED, (3, 4))
    d = cuda.to_device(h)
    x = d[1, 2]
    assert type(x) is np.void and x.dtype == ALIGNED and x.tobytes() == h[1, 2].tobytes()
    assert d[-1][0] == h[-1, 0] and d.getitem((0, 3)) == h[0, 3]
    with pytest.raises(IndexError):
        d[3, 0]


def test_views_keep_the_dtype(cuda):
    h = records(PACKED, (4, 6))
    d = cuda.to_device(h)
    views = {
        "slice": (d[1:3], h[1:3]), "row": (d[2], h[2]), "strided": (d[:, ::2], h[:, ::2]),
        "reshape": (d.reshape(6, 4), h.reshape(6, 4)), "ravel": (d.ravel(), h.ravel()),
        "squeeze": (d[1:2].squeeze(), h[1:2].squeeze()), "bind": (d.bind(cuda.stream()), h),
    }
    for name, (v, expect) in views.items():
        assert v.dtype == PACKED, name
        assert same(v.copy_to_host(), expect), name
    parts = list(d.ravel().split(10))
    assert [p.dtype for p in parts] == [PACKED] * 3
    assert same(parts[2].copy_to_host(), h.ravel()[20:])
    raw = d.view(np.uint8)  # numba's view(): the same bytes as another dtype
    assert raw.shape == (4, 72) and (raw.copy_to_host() == h.view(np.uint8)).all()
    again = raw.view(PACKED)
    assert again.dtype == PACKED and same(again.copy_to_host(), h)


def test_setitem(cuda):
    h = records(ALIGNED, (4,))
    d = cuda.to_device(h)
    d[1] = (9.5, 7)  # a tuple: one record
    d[2] = h[0]  # a numpy.void
    d[3:] = np.array([(1.0, 1)], ALIGNED)  # an array, broadcast
    got = d.copy_to_host()
    assert tuple(got[1]) == (9.5, 7) and got[2] == h[0] and tuple(got[3]) == (1.0, 1)
    assert got[0] == h[0]
    d[:2] = cuda.to_device(h[2:])  # a device array
    assert (d.copy_to_host()[:2] == h[2:]).all()
    other = np.zeros(1, [("x", np.float64), ("y", np.int32)])
    with pytest.raises(TypeError, match="^incompatible dtype: "):
        d[0] = other[0]
    with pytest.raises(TypeError, match="^incompatible dtype: "):
        d[:1] = np.zeros(1, np.complex128)


def test_cuda_array_interface_export(cuda):
    d = cuda.to_device(records(ALIGNED, (3, 2)))
    cai = d.__cuda_array_interface__
    assert cai["typestr"] == "|V16" and cai["descr"] == ALIGNED.descr
    assert cai["shape"] == (3, 2) and cai["strides"] is None and cai["version"] == 3
    assert d[:, 1].__cuda_array_interface__["strides"] == (32,)
    assert "descr" not in cuda.device_array(3, np.float32).__cuda_array_interface__


@pytest.mark.parametrize("dtype", DTYPES, ids=["aligned", "packed", "nested", "offsets"])
def test_cuda_array_interface_import_rebuilds_the_dtype(cuda, dtype):
    h = records(dtype, (2, 3))
    d = cuda.to_device(h)
    for a in (cuda.as_cuda_array(Foreign(d)),
              cuda.from_cuda_array_interface(d.__cuda_array_interface__, owner=d)):
        assert a.dtype == dtype and a.device_pointer == d.device_pointer
        assert same(a.copy_to_host(), h)
    # passed where a device array is expected: to_device returns a view, no copy
    t = cuda.to_device(Foreign(d))
    assert t.dtype == dtype and t.device_pointer == d.device_pointer


def test_cuda_array_interface_without_fields(cuda):
    d = cuda.to_device(records(ALIGNED, (2,)))
    for descr in (Ellipsis, None, [("", "|V16")]):  # none, None, the interface's default
        a = cuda.as_cuda_array(Foreign(d, descr=descr))
        assert a.dtype == np.dtype("V16") and a.dtype.names is None
    with pytest.raises(TypeError, match=r"describes 12-byte elements, typestr '\|V16' 16-byte"):
        cuda.as_cuda_array(Foreign(d, descr=PACKED.descr))
    with pytest.raises(TypeError, match="holds Python objects"):
        cuda.as_cuda_array(Foreign(d, descr=[("o", "|O"), ("p", "|O")]))


def test_raw_void_bytes(cuda):
    h = np.frombuffer(bytes(range(24)), dtype="V8")
    d = cuda.to_device(h)
    assert d.dtype == np.dtype("V8") and d.__cuda_array_interface__["typestr"] == "|V8"
    assert (d.copy_to_host() == h).all() and d[1] == h[1]
    assert cuda.device_array(2, "V4").dtype == np.dtype("V4")


def test_refused_dtypes(cuda):
    with pytest.raises(TypeError, match="subarray dtype .* is not supported"):
        cuda.device_array(3, np.dtype((np.float32, 3)))
    with pytest.raises(TypeError, match="holds Python objects"):
        cuda.device_array(3, [("o", object)])
    with pytest.raises(TypeError, match="holds Python objects"):
        cuda.to_device(np.zeros(2, [("a", np.float64), ("o", object)]))
    with pytest.raises(TypeError, match="subarray dtype"):
        cuda.device_array(4, np.float32).view(np.dtype((np.float32, 2)))
    with pytest.raises(TypeError, match="unsupported dtype"):
        cuda.device_array(3, np.dtype([]))


def test_incompatible_dtypes(cuda):
    h = records(ALIGNED, (4,))
    d = cuda.to_device(h)
    renamed = np.dtype([("x", np.float64), ("y", np.int32)], align=True)  # same size
    msg = "^incompatible dtype: "
    with pytest.raises(TypeError, match=msg):
        d.copy_to_host(np.zeros(4, renamed))
    with pytest.raises(TypeError, match=msg):
        d[::2].copy_to_host(np.zeros(2, renamed))  # the strided path
    with pytest.raises(TypeError, match=msg):
        d.copy_to_device(np.zeros(4, renamed))
    with pytest.raises(TypeError, match=msg):
        d.copy_to_device(cuda.device_array(4, renamed))
    with pytest.raises(TypeError, match=msg):
        d.copy_to_device(np.zeros(8, np.float64))  # 64 bytes either way
    with pytest.raises(TypeError, match=msg):
        cuda.to_device(np.zeros(4, renamed), to=d)
    f = cuda.device_array(8, np.float64)
    with pytest.raises(TypeError, match=msg):
        f.copy_to_host(np.zeros(4, ALIGNED))
    with pytest.raises(TypeError, match=msg):
        f.copy_to_device(h)
    with pytest.raises(TypeError, match=msg):
        f.copy_to_device(d)
    assert same(d.copy_to_host(), h)  # nothing was written
    # scalar dtypes are still checked by size only, as before
    f.copy_to_device(np.arange(8, dtype=np.int64))
    # a record dtype equal to the array's (numpy.record's view of it) is fine
    d.copy_to_device(h.view(np.recarray))


def test_launch_view_reports_the_record(cuda):
    k = cuda.jit("void(float64[::1])")(takes_floats)
    h = records(ALIGNED, (4,))
    d = cuda.to_device(h)
    for arg in (d, Foreign(d), h, h.view(np.recarray), cuda.In(h), cuda.InOut(d)):
        with pytest.raises(TypeError, match="got an array of V128 elements"):
            k[1, 1](arg)
    with pytest.raises(TypeError, match="got an array of V96 elements"):
        k[1, 1](records(PACKED, (3,)))


def test_dtype_references_are_released(cuda):
    dt = np.dtype([("p", np.float32), ("q", np.int64)], align=True)
    h = records(dt, (8,))
    assert cuda.to_device(h).dtype is dt  # the array holds the very dtype object
    f = Foreign(cuda.to_device(h))
    renamed = np.dtype([("x", np.float32), ("y", np.int64)], align=True)

    def work():
        d = cuda.to_device(h)
        d.copy_to_host()
        d.copy_to_host(np.empty_like(h))
        d[1:3].reshape(2, 1).ravel().dtype
        d.view(np.uint8).view(dt)
        d[2]
        d[0] = h[1]
        d.reshape(4, 2).T.dtype
        cuda.to_device(h.view(np.recarray)).dtype
        cuda.device_array(3, dt).copy_to_device(h[:3])
        cuda.as_cuda_array(f).dtype
        d.__cuda_array_interface__
        with pytest.raises(TypeError, match="describes"):
            cuda.as_cuda_array(Foreign(d, descr=[("p", "<f4")]))
        with pytest.raises(TypeError, match="incompatible dtype"):
            d.copy_to_device(np.zeros(8, renamed))
    work()
    before = sys.getrefcount(dt)
    for _ in range(50):
        work()
    assert sys.getrefcount(dt) == before


NUMPY_PATHS_CODE = """
import sys
import numpy as np, nbcuda as cuda
dt = np.dtype([("a", np.float64), ("b", np.int32)], align=True)
h = np.zeros((3, 2), dt, order="F")
h["a"] = np.arange(6).reshape(3, 2)
h["b"] = -np.arange(6).reshape(3, 2)
d = cuda.to_device(h)
back = d.copy_to_host()
assert back.dtype == dt and back.flags.f_contiguous and (back == h).all()
out = np.zeros((3, 2), dt, order="F")
d.copy_to_host(out)
assert (out == h).all() and d[2, 1] == h[2, 1]
for bad in (np.zeros((3, 2), np.dtype([("x", np.float64), ("y", np.int32)], align=True)),):
    try:
        d.copy_to_host(bad)
        raise SystemExit("copy into another record dtype did not raise")
    except TypeError as e:
        assert "incompatible dtype" in str(e)
try:
    cuda.device_array(12, np.float64).copy_to_host(np.zeros(6, dt))
    raise SystemExit("copy of float64 into records did not raise")
except TypeError as e:
    assert "incompatible dtype" in str(e)
sys.path.insert(0, {here!r})
from test_structured_arrays import takes_floats  # a kernel needs its source in a file
k = cuda.jit("void(float64[::1])")(takes_floats)
try:
    k[1, 1](np.zeros(4, dt))
    raise SystemExit("a record array was taken as float64")
except TypeError as e:
    assert "V128" in str(e), e
print("ok")
"""


@pytest.mark.parametrize("capi", ["1", "0"])
def test_numpy_c_api_and_fallback_agree(cuda, run_py, capi):
    # exact numpy arrays are read through numpy's C API table, or with NBCUDA_NUMPY_CAPI=0
    # through the buffer protocol ("T{d:a:i:b:}") and attributes: the same answers
    code = NUMPY_PATHS_CODE.replace("{here!r}", repr(os.path.dirname(os.path.abspath(__file__))))
    p = run_py(code, env={"NBCUDA_NUMPY_CAPI": capi})
    assert p.stdout.strip() == "ok", p.stdout + p.stderr


def test_scalar_dtypes_are_unchanged(cuda):
    a = np.arange(256, dtype=np.float32)
    d = cuda.to_device(a)
    assert d.__cuda_array_interface__["typestr"] == "<f4" and d.dtype == np.float32
    assert (d.copy_to_host() == a).all() and cuda.device_array(256, np.float32).dtype == a.dtype
    assert cuda.to_device(np.zeros(3, np.bool_)).__cuda_array_interface__["typestr"] == "|b1"
