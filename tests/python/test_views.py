"""Device-array views (numba's DeviceNDArray indexing, reshape, ravel, transpose, setitem)
and arrays whose context was reset (close(), Device.reset()).

Views share their parent's memory and keep the allocation alive; values are checked against
numpy through copies, which the test driver performs, so these run on CI and on the GPU.
Kernels compute only on a real device: those checks are marked gpu. After a reset, every use
of an array made before it raises CudaAPIError instead of touching memory that may now
belong to a new allocation."""
import gc

import pytest

import nbcuda as cuda
from conftest import sig_texts
import conftest

np = pytest.importorskip("numpy")

GONE = (r"CUDA_ERROR_CONTEXT_IS_DESTROYED \(the array was made in a context that was reset "
        r"since\)")


@pytest.fixture
def memfrees():
    """A function giving the cuMemFree calls so far on the test driver, None elsewhere."""
    if not conftest.USING_TESTDRIVER:
        return lambda: None
    t = conftest.TestDriver(conftest.TESTDRIVER)
    return lambda: t.calls("cuMemFree")


@pytest.fixture
def clean(cuda):
    cuda.close()
    yield
    cuda.close()


def host2d():
    return np.arange(24, dtype=np.float32).reshape(4, 6)


# ---- views


def test_slices_share_memory(cuda):
    h = np.arange(10, dtype=np.int32)
    d = cuda.to_device(h)
    v = d[2:8]
    assert (v.shape, v.strides, v.nbytes, len(v)) == ((6,), (4,), 24, 6)
    assert v.device_pointer == d.device_pointer + 8
    assert v.is_c_contiguous() and v.is_f_contiguous()
    np.testing.assert_array_equal(v.copy_to_host(), h[2:8])
    s = d[::2]
    assert (s.shape, s.strides) == ((5,), (8,)) and not s.is_c_contiguous()
    np.testing.assert_array_equal(s.copy_to_host(), h[::2])
    np.testing.assert_array_equal(d[-3:].copy_to_host(), h[-3:])
    np.testing.assert_array_equal(d[1:9][::3].copy_to_host(), h[1:9][::3])
    assert d[5:2].shape == (0,) and d[5:2].copy_to_host().shape == (0,)
    cai = s.__cuda_array_interface__
    assert cai["data"] == (d.device_pointer, False)
    assert (cai["shape"], cai["strides"]) == ((5,), (8,))
    assert d[2:8].__cuda_array_interface__["strides"] is None


def test_rows_columns_and_elements(cuda):
    h = host2d()
    d = cuda.to_device(h)
    row, col = d[1], d[:, 1]
    assert (row.shape, row.strides, row.device_pointer) == ((6,), (4,), d.device_pointer + 24)
    assert (col.shape, col.strides) == ((4,), (24,))
    np.testing.assert_array_equal(row.copy_to_host(), h[1])
    out = col.copy_to_host()  # numba: the enclosing extent, strided by numpy
    np.testing.assert_array_equal(out, h[:, 1])
    assert out.strides == (24,)
    x = d[2, 3]
    assert type(x) is np.float32 and x == h[2, 3]
    assert d[-1, -1] == h[-1, -1] and d[1][2] == h[1, 2]
    assert d[...].shape == (4, 6) and d[..., 2].shape == (4,)
    np.testing.assert_array_equal(d[1:3, ::2].copy_to_host(), h[1:3, ::2])
    np.testing.assert_array_equal(d[::2, 1:5:2].copy_to_host(), h[::2, 1:5:2])
    assert d.flags == {"C_CONTIGUOUS": True, "F_CONTIGUOUS": False}
    assert d[:, 1:3].flags == {"C_CONTIGUOUS": False, "F_CONTIGUOUS": False}


def test_iteration_like_numbas(cuda):
    # numba's DeviceNDArray iterates through __getitem__: host scalars for 1-D, device rows
    # for more dimensions; zip() over device arrays is the documented CPU/GPU example's
    h = host2d()
    d = cuda.to_device(h[:, 0].copy())
    items = list(d)
    assert items == list(h[:, 0]) and all(type(x) is np.float32 for x in items)
    rows = list(cuda.to_device(h))
    assert len(rows) == 4 and all(isinstance(r, cuda.DeviceNDArray) for r in rows)
    np.testing.assert_array_equal(rows[2].copy_to_host(), h[2])
    x, y = cuda.to_device([1, 10, 234]), cuda.to_device([2, 2, 4014])
    assert [a + b for a, b in zip(x, y)] == [3, 12, 4248]
    assert list(d[1:3]) == list(h[1:3, 0]) and list(d[::-2]) == list(h[::-2, 0])
    assert list(d[4:]) == [] and 5.0 not in d and 6.0 in d
    with pytest.raises(TypeError, match="iteration over a 0-d array"):
        list(cuda.to_device(np.float32(1.5)))


def test_index_errors(cuda):
    d = cuda.to_device(host2d())
    with pytest.raises(IndexError, match="1 extra indices given"):
        d[1, 2, 3]
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4"):
        d[4]
    with pytest.raises(IndexError, match="index -7 is out of bounds for axis 1 with size 6"):
        d[0, -7]
    with pytest.raises(IndexError, match="single ellipsis"):
        d[..., ...]
    with pytest.raises(IndexError, match="valid indices"):
        d["x"]


def test_negative_strides_refused_by_copy_to_host(cuda):
    h = np.arange(6, dtype=np.int64)
    r = cuda.to_device(h)[::-1]
    assert r.strides == (-8,)
    with pytest.raises(NotImplementedError,
                       match=r"D->H copy not implemented for negative strides: \(-8,\)"):
        r.copy_to_host()
    assert r[0] == 5 and r[-1] == 0  # elements are read one at a time


def test_copy_to_host_into_given_array(cuda):
    h = host2d()
    d = cuda.to_device(h)
    out = np.zeros_like(h)
    d[:, ::2].copy_to_host(out[:, ::2])
    np.testing.assert_array_equal(out[:, ::2], h[:, ::2])
    # as numba: the whole extent comes over, the elements between with it
    np.testing.assert_array_equal(out[:, 1::2][:3], h[:, 1::2][:3])
    with pytest.raises(ValueError, match="shape"):
        d[:, ::2].copy_to_host(np.zeros((4, 3), dtype=np.float32))


def test_reshape_and_ravel(cuda):
    h = host2d()
    d = cuda.to_device(h)
    r = d.reshape(2, 12)
    assert (r.shape, r.strides, r.device_pointer) == ((2, 12), (48, 4), d.device_pointer)
    np.testing.assert_array_equal(r.copy_to_host(), h.reshape(2, 12))
    assert d.reshape((3, -1)).shape == (3, 8) and d.reshape([24]).shape == (24,)
    assert d.reshape(6, 4, order="F").strides == (4, 24)
    assert d.reshape(4, 6).shape == (4, 6)
    with pytest.raises(ValueError, match="reshape changes the size of the array"):
        d.reshape(5, 5)
    with pytest.raises(ValueError, match="can only specify one unknown dimension"):
        d.reshape(-1, -1)
    with pytest.raises(NotImplementedError, match="operation requires copying"):
        d[:, 1].reshape(2, 2)
    f = d.ravel()
    assert (f.shape, f.strides, f.device_pointer) == ((24,), (4,), d.device_pointer)
    np.testing.assert_array_equal(f.copy_to_host(), h.ravel())
    with pytest.raises(NotImplementedError, match="ravel on non-contiguous array"):
        d[:, ::2].ravel()
    with pytest.raises(ValueError, match="order not C|F|A"):
        d.ravel(order="K")


def test_transpose_copies_like_numba(cuda):
    h = host2d()
    d = cuda.to_device(h)
    t = d.T
    assert t.shape == (6, 4) and t.is_c_contiguous()
    assert t.device_pointer != d.device_pointer  # numba: a new array, not a view
    assert d.transpose((1, 0)).shape == (6, 4) and d[:, 1:4].T.shape == (3, 4)
    assert d.transpose((0, 1)) is d
    with pytest.raises(NotImplementedError, match="transposing a non-2D"):
        cuda.to_device(np.arange(3)).T
    with pytest.raises(ValueError, match="invalid axes list"):
        d.transpose((0, 0))


@pytest.mark.gpu
def test_transpose_values_like_numba(cuda):
    """d.T, d.transpose((1, 0)) and the transpose of a view hold numpy's transposed values:
    the transpose kernel computes them, so this checks the kernel on a real GPU only
    (tests/gpu/run.sh python); the software test driver runs no kernel code."""
    h = host2d()
    d = cuda.to_device(h)
    np.testing.assert_array_equal(d.T.copy_to_host(), h.T)
    np.testing.assert_array_equal(d.transpose((1, 0)).copy_to_host(), h.T)
    np.testing.assert_array_equal(d[:, 1:4].T.copy_to_host(), h[:, 1:4].T)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.int8, np.float16, np.float32, np.int64, np.complex128])
def test_transpose_on_the_device_every_item_size(cuda, dtype):
    """The device kernel (nbc_transpose2d) moves 1-, 2-, 4-, 8- and 16-byte items, of whole
    arrays, F-ordered ones and strided views, and of views only 4-byte aligned. Checked on a
    real GPU only (tests/gpu/run.sh python): the software test driver runs no kernel code."""
    h = (np.arange(35 * 70) % 127).astype(dtype).reshape(35, 70)
    d = cuda.to_device(h)
    np.testing.assert_array_equal(d.T.copy_to_host(), h.T)
    np.testing.assert_array_equal(cuda.to_device(np.asfortranarray(h)).T.copy_to_host(), h.T)
    np.testing.assert_array_equal(d[3:30:2, 5:60:3].T.copy_to_host(), h[3:30:2, 5:60:3].T)
    assert cuda.to_device(np.zeros((0, 5), dtype)).T.shape == (5, 0)
    words = cuda.to_device(np.arange(2 * 9, dtype=np.int32))
    h64 = np.arange(2 * 9, dtype=np.int32)[1:17].view(np.int64).reshape(2, 4)
    np.testing.assert_array_equal(words[1:17].view(np.int64).reshape(2, 4).T.copy_to_host(),
                                  h64.T)


def test_setitem(cuda):
    h = host2d()
    d = cuda.to_device(h)
    d[1:3, ::2] = -1
    h[1:3, ::2] = -1
    d[0] = np.arange(6)
    h[0] = np.arange(6)
    d[:, 5] = [10, 11, 12, 13]
    h[:, 5] = [10, 11, 12, 13]
    d[3, 3] = 99.5
    h[3, 3] = 99.5
    d[2:4] = np.arange(6, dtype=np.float64)  # broadcast over rows, cast to float32
    h[2:4] = np.arange(6)
    d[-1, ::-2] = 7
    h[-1, ::-2] = 7
    np.testing.assert_array_equal(d.copy_to_host(), h)
    d[:, 0] = cuda.to_device(np.full(4, 3, dtype=np.float32))
    h[:, 0] = 3
    np.testing.assert_array_equal(d.copy_to_host(), h)
    i = cuda.to_device(np.zeros(4, dtype=np.uint8))
    i[:] = 300  # numba's assignment kernel casts: wraps like numpy's astype
    np.testing.assert_array_equal(i.copy_to_host(), np.full(4, 44, dtype=np.uint8))
    with pytest.raises(ValueError, match="Can't assign 2-D array to 1-D self"):
        d[0] = np.zeros((2, 6))
    with pytest.raises(ValueError,
                       match="Can't copy sequence with size 3 to array axis 0 with dimension 4"):
        d[:, 1] = [1, 2, 3]
    with pytest.raises(TypeError):
        del d[0]


def test_copy_to_device_views(cuda):
    h = host2d()
    d = cuda.to_device(h)
    d[1].copy_to_device(np.full(6, 5, dtype=np.float32))
    h[1] = 5
    np.testing.assert_array_equal(d.copy_to_host(), h)
    with pytest.raises(ValueError, match="non-contiguous buffer"):
        d[:, 1].copy_to_device(np.zeros(4, dtype=np.float32))
    with pytest.raises(ValueError, match="non-contiguous buffer"):
        cuda.device_array(4, dtype=np.float32).copy_to_device(d[:, 1])


def test_views_keep_the_allocation_alive(cuda, tdrv):
    gc.collect()
    live = tdrv.live_allocations_released()
    d = cuda.to_device(np.arange(100, dtype=np.float64))
    assert tdrv.live_allocations_released() == live + 1
    v = d[10:20][::2]
    r = d.reshape(10, 10)[3]
    del d
    gc.collect()
    assert tdrv.live_allocations_released() == live + 1
    np.testing.assert_array_equal(v.copy_to_host(), np.arange(10, 20, 2))
    np.testing.assert_array_equal(r.copy_to_host(), np.arange(30, 40))
    del v
    gc.collect()
    assert tdrv.live_allocations_released() == live + 1
    del r
    gc.collect()
    assert tdrv.live_allocations_released() == live


def test_views_as_kernel_arguments(cuda, tdrv):
    def fill(a):
        a[0] = 1

    def fill2(a):
        a[0, 0] = 1

    lazy = cuda.jit(fill)
    d = cuda.to_device(host2d())
    lazy[1, 1](d[1])
    lazy[1, 1](d[:, 1])
    lazy2 = cuda.jit(fill2)
    lazy2[1, 1](d[1:3, 1:3])
    assert sig_texts(lazy2) == ["void(float32[:, :])"]
    assert sorted(sig_texts(lazy)) == ["void(float32[::1])", "void(float32[:])"]
    info = tdrv.last_launch()
    words = np.frombuffer(bytes(info.param_bytes[:info.param_total]), dtype=np.int64)
    # Numba ABI: meminfo, parent, nitems, itemsize, data, shape..., strides...
    assert list(words[2:9]) == [4, 4, d.device_pointer + 24 + 4, 2, 2, 24, 4]
    eager_c = cuda.jit("void(float32[::1])")(fill)
    eager_a = cuda.jit("void(float32[:])")(fill)
    eager_c[1, 1](d[2])
    eager_a[1, 1](d[:, 2])
    with pytest.raises(TypeError, match="non-C-contiguous"):
        eager_c[1, 1](d[:, 2])


# ---- arrays whose context was reset


def test_arrays_refused_after_close(cuda, clean, memfrees):
    d = cuda.to_device(np.arange(8, dtype=np.float32))
    v = d[2:6]
    cuda.close()
    for use in (lambda: d.copy_to_host(), lambda: v.copy_to_host(),
                lambda: d.copy_to_device(np.zeros(8, dtype=np.float32)),
                lambda: d[1], lambda: d.__setitem__(1, 5), lambda: d[1:3],
                lambda: d.reshape(2, 4), lambda: cuda.to_device(np.zeros(8, np.float32),
                                                                to=d),
                lambda: cuda.device_array(8, dtype=np.float32).copy_to_device(d)):
        with pytest.raises(cuda.CudaAPIError, match=GONE):
            use()
    with pytest.raises(cuda.CudaAPIError, match="Call to cuMemcpyDtoH results in " + GONE):
        d.copy_to_host()
    fresh = cuda.to_device(np.ones(8, dtype=np.float32))
    np.testing.assert_array_equal(fresh.copy_to_host(), np.ones(8))
    frees = memfrees()
    del d, v
    gc.collect()
    if frees is not None:
        assert memfrees() == frees  # the reset freed it; the address may be reused


def kernel_fill(a):
    a[0] = 2


def test_kernel_argument_refused_after_close(cuda, clean):
    k = cuda.jit("void(float32[:])")(kernel_fill)
    d = cuda.to_device(np.zeros(4, dtype=np.float32))
    k[1, 1](d)
    cuda.close()
    with pytest.raises(cuda.CudaAPIError, match="Call to cuLaunchKernel results in " + GONE):
        k[1, 1](d)
    with pytest.raises(cuda.CudaAPIError, match=GONE):
        k[1, 1](d[1:])
    k[1, 1](cuda.to_device(np.zeros(4, dtype=np.float32)))


def test_reset_of_one_device_leaves_the_other(cuda, clean, tdrv):
    if len(cuda.gpus) < 2:
        pytest.skip("needs 2 devices")
    k = cuda.jit("void(float32[:])")(kernel_fill)
    with cuda.gpus[0]:
        a0 = cuda.to_device(np.arange(4, dtype=np.float32))
        k[1, 1](a0)
    with cuda.gpus[1]:
        a1 = cuda.to_device(np.arange(4, dtype=np.float32))
        k[1, 1](a1)
    live = tdrv.live_allocations_released()
    loads = tdrv.calls("cuModuleLoadDataEx")
    cuda.gpus[1].reset()
    with cuda.gpus[0]:
        np.testing.assert_array_equal(a0.copy_to_host(), np.arange(4))
        k[1, 1](a0)
        k[1, 1](a0[1:])
    assert tdrv.calls("cuModuleLoadDataEx") == loads  # device 0's module stays loaded
    with pytest.raises(cuda.CudaAPIError, match=GONE):
        a1.copy_to_host()
    with cuda.gpus[1]:
        k[1, 1](cuda.to_device(np.zeros(4, dtype=np.float32)))
    assert tdrv.calls("cuModuleLoadDataEx") == loads + 1  # device 1 loads again
    live = tdrv.live_allocations_released()
    del a1
    gc.collect()
    assert tdrv.live_allocations_released() == live  # already freed by the reset
    del a0
    gc.collect()
    assert tdrv.live_allocations_released() == live - 1  # device 0's array is freed as usual


# ---- on the GPU: kernels on views


def add_one(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += 1


def add_one_2d(a):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        a[i, j] += 1


@pytest.mark.gpu
def test_gpu_kernels_on_views(gpu):
    h = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
    d = cuda.to_device(h)
    k1 = cuda.jit(add_one)
    k2 = cuda.jit(add_one_2d)
    k1[1, 64](d[:, 3])
    h[:, 3] += 1
    k1[1, 64](d[5])
    h[5] += 1
    k1[5, 64](d.ravel()[::7])  # 293 elements
    h.ravel()[::7] += 1
    k2[(8, 8), (8, 8)](d[1:60:3, ::2])
    h[1:60:3, ::2] += 1
    cuda.synchronize()
    np.testing.assert_array_equal(d.copy_to_host(), h)
    np.testing.assert_array_equal(d[::3, 1::4].copy_to_host(), h[::3, 1::4])
    with pytest.raises(TypeError, match="non-C-contiguous"):
        cuda.jit("void(float32[::1])")(add_one)[1, 64](d[:, 3])


@pytest.mark.gpu
def test_gpu_setitem_and_transpose(gpu):
    h = np.random.default_rng(0).random((33, 17)).astype(np.float64)
    d = cuda.to_device(h)
    d[::4, 1::3] = 0.5
    h[::4, 1::3] = 0.5
    d[7] = np.arange(17)
    h[7] = np.arange(17)
    np.testing.assert_array_equal(d.copy_to_host(), h)
    np.testing.assert_array_equal(d.T.copy_to_host(), h.T)
    np.testing.assert_array_equal(d.reshape(17, 33).copy_to_host(), h.reshape(17, 33))
