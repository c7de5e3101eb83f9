"""The fast paths of device arrays (devicearray.c): dtype arguments answered from an identity
cache, exact numpy arrays read through numpy's C API table (numpy_api.c; the buffer
protocol and numpy.empty when NBCUDA_NUMPY_CAPI=0), shapes kept inline up to 4 dimensions and allocated beyond. Each is
checked to give what the general path gives, on repeated calls (cache hits) too."""
import pytest

np = pytest.importorskip("numpy")


@pytest.mark.parametrize("dtype, expect", [
    (np.float32, "<f4"), (np.dtype("int16"), "<i2"), ("uint8", "|u1"), (float, "<f8"),
    (np.bool_, "|b1"), (np.complex64, "<c8"), (np.float16, "<f2")])
def test_device_array_dtype_arguments_repeat(cuda, dtype, expect):
    for _ in range(3):  # the first call fills the cache, the next ones read it
        d = cuda.device_array(5, dtype)
        assert d.dtype == np.dtype(expect) and d.shape == (5,) and d.nbytes == 5 * d.dtype.itemsize
        assert d.__cuda_array_interface__["typestr"] == expect


def test_device_array_dtype_errors_are_not_cached(cuda):
    for _ in range(2):
        with pytest.raises(TypeError, match="unsupported dtype"):
            cuda.device_array(3, np.dtype(">f4"))
        with pytest.raises(TypeError):
            cuda.device_array(3, "O")
    assert cuda.device_array(3, "U4").dtype == np.dtype("U4")  # strings are device arrays now


def test_device_array_keywords_and_shapes(cuda):
    assert cuda.device_array(4).dtype == np.float64
    d = cuda.device_array(shape=(2, 3), dtype=np.int32, order="F")
    assert d.strides == (4, 8) and d.is_f_contiguous()
    with pytest.raises(ValueError, match="negative dimensions"):
        cuda.device_array(-1, np.float32)
    with pytest.raises(TypeError):
        cuda.device_array()


@pytest.mark.parametrize("ndim", [1, 4, 5, 7])
def test_round_trip_any_ndim(cuda, ndim):
    shape = (2, 3, 1, 2, 3, 1, 2)[:ndim]
    a = np.arange(int(np.prod(shape)), dtype=np.int16).reshape(shape)
    for src in (a, np.asfortranarray(a)):
        d = cuda.to_device(src)
        assert d.shape == src.shape and d.strides == src.strides
        assert (d.copy_to_host() == a).all()
    e = cuda.device_array(shape, np.float32, order="F")
    assert e.shape == shape and e.copy_to_host().flags.f_contiguous


def test_exact_ndarray_and_subclass_same_answers(cuda):
    class Sub(np.ndarray):
        pass
    a = np.arange(6, dtype=np.float32)
    for obj in (a, a.view(Sub)):
        d = cuda.to_device(obj)
        assert d.dtype == np.float32 and (d.copy_to_host() == a).all()
    with pytest.raises(TypeError, match="unsupported buffer format"):
        cuda.to_device(np.arange(3, dtype=">f4"))
    with pytest.raises(ValueError, match="non-contiguous"):
        cuda.to_device(np.arange(8.0)[::2])
    assert (cuda.to_device(np.array([True, False])).copy_to_host() == [True, False]).all()


def test_copy_to_host_arguments(cuda):
    d = cuda.to_device(np.arange(4, dtype=np.int32))
    out = np.zeros(4, np.int32)
    assert d.copy_to_host(out, 0) is out and (out == [0, 1, 2, 3]).all()
    s = cuda.stream()
    h = d.copy_to_host(ary=None, stream=s)
    s.synchronize()
    assert (h == [0, 1, 2, 3]).all()
    with pytest.raises(TypeError):
        d.copy_to_host(None, 0, 1)
    with pytest.raises(ValueError, match="bytes"):
        d.copy_to_host(np.zeros(3, np.int32))


NUMPY_PATHS_CODE = """
import numpy as np, nbcuda as cuda
a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
for host in (a, np.asfortranarray(a), a.astype(np.int16), np.float32(2.5)):
    d = cuda.to_device(host)
    back = d.copy_to_host()
    assert back.dtype == host.dtype and back.shape == np.shape(host), (back.dtype, back.shape)
    assert (back.flags.c_contiguous, back.flags.f_contiguous) == \
        (host.flags.c_contiguous, host.flags.f_contiguous)
    assert (back == host).all()
d = cuda.to_device(a)
assert d[1, 2, 3] == a[1, 2, 3] and type(d[1, 2, 3]) is np.float64
out = np.empty_like(a)
d.copy_to_host(out)
assert (out == a).all()
ro = a.copy()
ro.flags.writeable = False
assert (cuda.to_device(ro).copy_to_host() == a).all()  # read-only is fine to read from
try:
    d.copy_to_host(ro)
    raise SystemExit("copy into a read-only array did not raise")
except ValueError:
    pass
unaligned = np.frombuffer(bytes(33), dtype=np.uint8)[1:].view(np.float64)
assert not unaligned.flags.aligned and (cuda.to_device(unaligned).copy_to_host() == 0).all()
try:
    cuda.to_device(a[:, ::2])
    raise SystemExit("a strided array was accepted")
except ValueError as e:
    assert "non-contiguous" in str(e)
print("ok")
"""


@pytest.mark.parametrize("capi", ["1", "0"])
def test_numpy_c_api_and_fallback_agree(cuda, run_py, capi):
    # numpy_api.c reads exact ndarrays and makes copy_to_host's arrays through numpy's C API
    # table; NBCUDA_NUMPY_CAPI=0 takes the numpy.empty / buffer-protocol path instead. Both
    # must give the same arrays, orders, dtypes and errors.
    p = run_py(NUMPY_PATHS_CODE, env={"NBCUDA_NUMPY_CAPI": capi})
    assert p.stdout.strip() == "ok", p.stdout + p.stderr


def test_device_array_like_keeps_the_layout(cuda):
    # numba's device_array_like: the source's order, and for a non-contiguous source
    # contiguous strides in the source's own dimension order (as mapped/pinned_array_like)
    a = np.zeros((3, 4, 5))
    assert cuda.device_array_like(a).strides == (160, 40, 8)
    f = cuda.device_array_like(np.asfortranarray(a))
    assert f.strides == (8, 24, 96) and f.is_f_contiguous()
    t = a.transpose(1, 0, 2)  # strides (40, 160, 8)
    assert cuda.device_array_like(t).strides == (40, 160, 8)
    assert cuda.device_array_like(t).shape == (4, 3, 5)
    d = cuda.to_device(np.asfortranarray(a))  # a DeviceNDArray source: its flags are a dict
    assert cuda.device_array_like(d).strides == (8, 24, 96)
    s = cuda.stream()
    assert cuda.device_array_like(a, stream=s).stream is s
    assert cuda.device_array_like(a).stream == 0
    assert cuda.device_array_like(np.zeros(3, np.int16)).dtype == np.int16


def _numba_like(a):
    """numba's device_array_like geometry: shape, dtype, and strides contiguous in the
    source's order (_order_like_array, _contiguous_strides_like_array)."""
    c, f = a.flags["C_CONTIGUOUS"], a.flags["F_CONTIGUOUS"]
    order = "F" if f and not c else "C"
    if c or f or a.ndim <= 1:  # dense in that order
        perm = range(a.ndim) if order == "F" else reversed(range(a.ndim))
    else:
        perm = sorted(range(a.ndim), key=lambda i: a.strides[i])
    strides, step = [0] * a.ndim, a.itemsize
    for i in perm:
        strides[i] = step
        step *= a.shape[i]
    return a.shape, a.dtype, tuple(strides)


def test_device_array_like_matches_numbas_rule(cuda):
    # contiguous sources take the fast path (their order from the buffer or the device array),
    # strided ones the general one: both give numba's geometry
    rec = np.dtype([("x", np.float32), ("y", np.int16)])
    base = np.zeros((4, 6))
    sources = [base, np.asfortranarray(base), base[:1, :], base[:, :1], base[:0], base[::2],
               base.T, np.zeros((2, 3, 4), rec), np.zeros((), np.int8), np.zeros(5, bool),
               np.asfortranarray(np.zeros((1, 5, 1), np.complex64)), base[:, ::2]]
    for a in sources:
        want = _numba_like(a)
        for src in (a, cuda.to_device(a) if a.flags.contiguous or a.flags.f_contiguous else a):
            d = cuda.device_array_like(src)
            assert (d.shape, d.dtype, d.strides) == want, (a.shape, a.strides, a.dtype)


def describe(d):
    cai = d.__cuda_array_interface__
    return (d.shape, d.strides, d.dtype, d.size, d.nbytes, cai["typestr"], cai["strides"],
            cai["stream"], d.stream, d.is_c_contiguous(), d.is_f_contiguous())


def test_arrays_made_after_others_died_are_new(cuda):
    # dead arrays are kept for reuse (devicearray.c's free list): whatever the dead ones were
    # (views, bound to a stream, 6-D, records, wrapping another object's memory), an array
    # made next is exactly as a fresh one
    fresh = {"1d": describe(cuda.device_array(7, np.int16)),
             "2d": describe(cuda.device_array((3, 4), np.float32, order="F")),
             "float64": describe(cuda.device_array(5))}
    rec = np.dtype([("a", np.int32), ("b", np.float64)])
    for _ in range(3):
        s = cuda.stream()
        base = cuda.to_device(np.arange(24.0).reshape(4, 6), stream=s)
        dead = [base, base[1:, ::2], base.T, cuda.device_array((1, 2, 1, 2, 1, 2), np.uint8),
                cuda.device_array(3, rec), cuda.as_cuda_array(base), cuda.device_array(0)]
        for d in dead:
            d.copy_to_host()
        del dead, base, d
        made = {"1d": cuda.device_array(7, np.int16),
                "2d": cuda.device_array((3, 4), np.float32, order="F"),
                "float64": cuda.device_array(5)}
        assert {k: describe(v) for k, v in made.items()} == fresh
        h = np.arange(7, dtype=np.int16)
        made["1d"].copy_to_device(h)
        assert np.array_equal(made["1d"].copy_to_host(), h)


SCALAR_DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                 "uint64", "float16", "float32", "float64", "complex64", "complex128"]
SCALARS = [0, 1, -1, 127, 128, 255, 256, -129, 2**31, -2**31 - 1, 2**53 + 1, 2**63 - 1,
           -2**63, 2**64, 16777217, True, False, 1.5, -2.5, 0.1, 1e300, -1e39, 3.4e38,
           float("inf"), float("nan"), 1e-50, 3 + 4j, -0.0, np.float64(0.1), np.float64(1e300),
           np.complex128(1 - 2j), np.float32(0.1), np.int32(-7), np.bool_(True)]


def _numpy_assigned(base, index, value):
    """What d[index] = value gives by the general path: numpy converts the value
    (asarray, cast to the target's dtype), or the exception it raises."""
    import warnings
    h = base.copy()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            h[index] = np.asarray(np.asarray(value), dtype=h.dtype)
    except Exception as e:  # noqa: BLE001 - compared by type below
        return type(e)
    return h


@pytest.mark.parametrize("dtype", SCALAR_DTYPES)
def test_scalar_assignment_gives_numpys_conversion(cuda, dtype):
    """d[key] = scalar stores the element without numpy when the conversion is exact (or rounds
    as numpy's cast does); every value, in every dtype, at one element, a strided slice and a
    whole F-ordered 2-D array, ends as numpy's conversion left it (or raises its exception)."""
    import warnings
    base = (np.arange(12) % 3).astype(dtype)
    for value in SCALARS:
        for shape, index in (((12,), 5), ((12,), slice(1, None, 3)),
                             ((3, 4), (slice(None), 1))):
            start = np.asfortranarray(base.reshape(shape)) if len(shape) > 1 else base
            want = _numpy_assigned(start, index, value)
            d = cuda.to_device(start)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    d[index] = value
            except Exception as e:  # noqa: BLE001
                assert want is type(e), (dtype, value, index)
                continue
            assert not isinstance(want, type), (dtype, value, index, want)
            np.testing.assert_array_equal(d.copy_to_host(), want,
                                          err_msg=f"{dtype} {value!r} {index}")


@pytest.mark.parametrize("dtype", ["bool", "int16", "uint64", "float32", "complex128"])
def test_array_assignment_gives_numpys_conversion(cuda, dtype):
    """d[key] = host_array copies the array's own bytes when its dtype and shape are the
    target's and it is contiguous in the target's order; any other array (another dtype, a
    shape numpy broadcasts, the other order, strided) is converted by numpy. Each ends as
    numpy's conversion left it."""
    base = np.zeros((4, 6), dtype)
    src = (np.arange(24) % 5).reshape(4, 6)
    for target_order in ("C", "F"):
        start = np.asarray(base, order=target_order)
        for index, value in (
                ((slice(None), slice(None)), src.astype(dtype)),                 # same bytes
                ((slice(None), slice(None)), np.asfortranarray(src.astype(dtype))),
                ((slice(None), slice(None)), src.astype("float64")),             # converted
                ((slice(None), slice(None)), src[0].astype(dtype)),              # broadcast
                ((slice(1, 3), slice(None)), src[:2].astype(dtype)),
                ((slice(None), slice(None, None, 2)), src[:, ::2].astype(dtype)),  # strided
                ((slice(None), slice(None, None, 2)), src.astype(dtype)[:, ::2]),
                ((2, slice(None)), src[2].astype(dtype)),
                ((slice(None), 1), src[:, 1].astype(dtype)),
                ((slice(None), slice(None)), src[:3].astype(dtype))):          # wrong shape
            want = _numpy_assigned(start, index, value)
            d = cuda.to_device(start)
            try:
                d[index] = value
            except Exception as e:  # noqa: BLE001
                assert want is type(e), (index, value.shape)
                continue
            assert not isinstance(want, type), (index, value.shape, want)
            np.testing.assert_array_equal(d.copy_to_host(), want)


def test_device_array_assignment_gives_numpys_result(cuda):
    """d[key] = device_array copies on the device when the value has the target's dtype and
    shape, both contiguous in one order, and the two do not overlap; any other value (another
    dtype, a broadcast shape, the other order, strided, overlapping: d[1:] = d[:-1]) goes
    through the host. Each ends as numpy's assignment of the same values."""
    h = np.arange(24, dtype=np.float32).reshape(4, 6)
    other = (np.arange(24, dtype=np.float32) * 10).reshape(4, 6)
    s = cuda.stream()
    cases = [
        ((slice(None),), lambda d, o: o),                                   # whole, on device
        ((slice(1, 3),), lambda d, o: o[1:3]),
        ((slice(1, None),), lambda d, o: d[:-1]),                           # overlapping
        ((slice(None, -1),), lambda d, o: d[1:]),
        ((slice(None),), lambda d, o: o.T.T),
        ((slice(None),), lambda d, o: cuda.to_device(np.asfortranarray(other))),  # other order
        ((slice(None),), lambda d, o: o[0]),                                # broadcast
        ((slice(None), slice(None, None, 2)), lambda d, o: o[:, ::2]),      # strided
        ((slice(None),), lambda d, o: cuda.to_device(other.astype(np.float64))),  # other dtype
        ((2,), lambda d, o: o[3]),
        ((slice(0, 0),), lambda d, o: o[:0]),
    ]
    for stream in (0, s):
        for key, pick in cases:
            d = cuda.to_device(h, stream=stream)
            o = cuda.to_device(other)
            value = pick(d, o)
            want = h.copy()
            want[key] = value.copy_to_host()
            d[key] = value
            np.testing.assert_array_equal(d.copy_to_host(), want, err_msg=str(key))
