"""k[griddim, blockdim, stream, sharedmem]: the kernel keeps its last configuration's launcher
and returns it again for an equal configuration (so a launch in a loop makes no launcher
object); every launch must still use the configuration it was given. Against the test
driver, which records each launch's dimensions, stream and shared memory."""
import gc

import numpy as np
import pytest


def nothing():
    pass


def fill(a):
    a[0] = 1


def dims(info):
    return list(info.grid), list(info.block), info.shared_bytes, info.stream


def test_same_configuration_same_launcher(cuda):
    k = cuda.jit("void()")(nothing)
    g, b = 1, 32
    assert k[1, 32] is k[1, 32]
    assert k[g, b] is k[1, 32]  # equal ints in a new tuple
    assert k[(g, 1), b] is k[(1, 1), 32]
    assert k[2, 32] is not k[1, 32]


def test_every_launch_uses_its_configuration(cuda, tdrv):
    k = cuda.jit("void()")(nothing)
    s1, s2 = cuda.stream(), cuda.stream()
    for _ in range(2):  # the second round launches from the cache
        k[1, 32]()
        assert dims(tdrv.last_launch()) == ([1, 1, 1], [32, 1, 1], 0, 0)
        k[(4, 2), (8, 4)]()
        assert dims(tdrv.last_launch()) == ([4, 2, 1], [8, 4, 1], 0, 0)
        k[1, 32, s1]()
        assert dims(tdrv.last_launch()) == ([1, 1, 1], [32, 1, 1], 0, int(s1))
        k[1, 32, s2, 64]()
        assert dims(tdrv.last_launch()) == ([1, 1, 1], [32, 1, 1], 64, int(s2))
        n = 3
        k[n, 32]()
        assert dims(tdrv.last_launch()) == ([3, 1, 1], [32, 1, 1], 0, 0)
        k[(np.int64(5),), (np.int32(16),)]()  # not compared by value: parsed anew
        assert dims(tdrv.last_launch()) == ([5, 1, 1], [16, 1, 1], 0, 0)
        k[True, 32]()  # bool is not an exact int: compared by identity only
        assert dims(tdrv.last_launch()) == ([1, 1, 1], [32, 1, 1], 0, 0)


def test_dimensions_as_numba_reads_them(cuda, tdrv):
    # numba's normalize_kernel_dimensions: an integer or a tuple or list of 1 to 3, with its
    # errors; numpy integers and bools are integers
    k = cuda.jit("void()")(nothing)
    k[[2, 3], np.int64(32)]()
    assert dims(tdrv.last_launch())[:2] == ([2, 3, 1], [32, 1, 1])
    with pytest.raises(ValueError, match=r"griddim must be a sequence of 1, 2 or 3 integers, "
                                         r"got \[1, 2, 3, 4\]"):
        k[[1, 2, 3, 4], 32]
    with pytest.raises(TypeError, match=r"blockdim must be a sequence of integers, got "
                                        r"\[2.0\]"):
        k[1, 2.0]
    with pytest.raises(ValueError, match="below 2\\*\\*32"):
        k[2**32 + 1, 1]


def test_bad_configuration_is_not_kept(cuda, tdrv):
    k = cuda.jit("void()")(nothing)
    k[2, 32]()
    with pytest.raises(ValueError, match="griddim"):
        k[-1, 32]
    with pytest.raises(TypeError, match="Stream"):
        k[1, 32, "not a stream"]
    with pytest.raises(ValueError, match="at least the griddim"):
        k[1]
    k[2, 32]()
    assert dims(tdrv.last_launch()) == ([2, 1, 1], [32, 1, 1], 0, 0)


def test_lazy_kernel_launcher_is_kept(cuda, tdrv):
    k = cuda.jit(fill)
    a = cuda.device_array(4, np.int32)
    b = cuda.device_array(4, np.float64)
    L = k[1, 32]
    L(a)
    L(b)  # a second specialisation through the same launcher
    assert k[1, 32] is L
    assert len(k.signatures) == 2


def test_lazy_kernel_refuses_types_numba_lacks(cuda, tdrv):
    # numpy's long double (float128) and its complex have no numba type: a clear TypeError,
    # not a float64 reading of 16-byte elements
    k = cuda.jit(fill)
    with pytest.raises(TypeError, match=r"arrays of dtype\('float128'\) cannot be passed"):
        k[1, 1](np.zeros(4, np.longdouble))
    # dates in multiples of a unit and objects are not supported: the dtype is named (dates of
    # one unit are: tests/python/test_datetime.py; strings too: test_strings.py)
    for dtype in ("datetime64[25s]", "timedelta64[2D]", object):
        with pytest.raises(TypeError, match=r"arrays of dtype\(.*\) cannot be passed"):
            k[1, 1](np.zeros(3, dtype))
    with pytest.raises(cuda.TypingError, match=r"Cannot convert int64 to \[unichr x 12\]"):
        k[1, 1](np.zeros(3, "<U12"))
    with pytest.raises(TypeError, match=r"numba has no type for numpy's dtype\('complex256'\)"):
        k[1, 1](np.clongdouble(1))
    assert k.signatures == []


def test_kept_launcher_does_not_keep_kernel_alive(cuda, tdrv):
    k = cuda.jit("void(int32[::1])")(fill)
    a = cuda.device_array(4, np.int32)
    gc.collect()  # earlier tests' kernels
    modules = tdrv.live_modules()
    k[1, 32](a)
    assert tdrv.live_modules() == modules + 1
    del k
    gc.collect()  # the kernel <-> kept launcher cycle is collected
    assert tdrv.live_modules() == modules


def test_launcher_kept_by_caller_outlives_kernel_name(cuda, tdrv):
    k = cuda.jit("void(int32[::1])")(fill)
    a = cuda.device_array(4, np.int32)
    L = k[2, 16]
    del k
    gc.collect()
    n = tdrv.launch_count()
    L(a)
    assert tdrv.launch_count() == n + 1
    assert dims(tdrv.last_launch())[:2] == ([2, 1, 1], [16, 1, 1])
