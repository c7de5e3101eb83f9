"""cuda.reduce / cuda.Reduce, numba's reduction of a 1-D array by a binary function: numba's
kernel (4-warp blocks, at most 64 full blocks, one partial block, then one block over the
partial results) compiled by nbcuda, and numba's host steps (size=, res=, init=, stream=).
Lambdas compile as device functions for it, as in numba's documentation example. The
test-driver tests check the launches; the gpu test compares results with numpy and, bit for
bit, with numba-cuda."""
import inspect

import numpy as np
import pytest

import nbcuda as cuda


@cuda.reduce
def sum_reduce(a, b):
    return a + b


def larger(a, b):
    return a if a > b else b


@pytest.mark.parametrize("n, grids", [
    (1000, [(7, 128), (1, 104), (1, 8)]),  # full blocks, a partial block, the partials
    (128, [(1, 128)]),
    (100, [(1, 100)]),
    (128 * 100, [(64, 128), (1, 64)]),     # at most 64 full blocks
])
def test_launches_follow_numbas_plan(cuda, tdrv, n, grids):
    d = cuda.device_array(n, np.float32)
    before = tdrv.launch_count()
    sum_reduce(d)
    assert tdrv.launch_count() - before == len(grids)
    info = tdrv.last_launch()
    assert (info.grid[0], info.block[0]) == grids[-1]
    assert b"gpu_reduce_block_strided" in info.function


def test_empty_array_returns_init_of_the_arrays_type(cuda, tdrv):
    before = tdrv.launch_count()
    r = sum_reduce(np.zeros(0, np.float32), init=3)
    assert r == 3 and type(r) is np.float32
    assert sum_reduce(cuda.device_array(10, np.int32), size=0) == 0
    assert tdrv.launch_count() == before


def test_res_receives_the_result_on_the_device(cuda, tdrv):
    d = cuda.device_array(300, np.float64)
    res = cuda.device_array(4, np.float64)
    before = tdrv.calls("cuMemcpyDtoD") + tdrv.calls("cuMemcpyDtoDAsync")
    assert sum_reduce(d, res=res) is None
    assert tdrv.calls("cuMemcpyDtoD") + tdrv.calls("cuMemcpyDtoDAsync") == before + 1


def test_size_and_stream(cuda, tdrv):
    s = cuda.stream()
    d = cuda.device_array(1000, np.float64)
    sum_reduce(d, size=100, stream=s)
    info = tdrv.last_launch()
    assert (info.grid[0], info.block[0], info.stream) == (1, 100, int(s))


def test_refusals(cuda):
    with pytest.raises(TypeError, match="only support 1D array"):
        sum_reduce(np.zeros((2, 2)))
    with pytest.raises(TypeError, match="needs a function"):
        cuda.reduce(3)
    with pytest.raises(TypeError):
        cuda.reduce(max)(np.arange(4.0))  # a builtin has no Python source
    with pytest.raises(cuda.TypingError, match="Unknown attribute"):
        cuda.reduce(lambda a, b: a.nothing)(np.arange(4.0))


def test_reduce_is_the_class():
    assert cuda.reduce is cuda.Reduce
    r = cuda.Reduce(larger)
    assert isinstance(r, cuda.Reduce) and r._functor is larger


def test_lambdas_compile_as_device_functions(cuda):
    ptx, resty = cuda.compile_ptx(lambda a, b: a * b + 1, "float64(float64, float64)",
                                  device=True)
    assert str(resty) == "float64" and ".func" in ptx
    double, inc = (lambda x: x * 2), (lambda x, y: x + y)  # two on one line
    assert str(cuda.compile_ptx(inc, "int64(int64, int64)", device=True)[1]) == "int64"
    assert str(cuda.compile_ptx(double, "int32(int32)", device=True)[1]) == "int32"
    with pytest.raises(cuda.TypingError) as e:
        cuda.compile_ptx(lambda a: a.nothing, "float64(float64)", device=True)
    line = inspect.currentframe().f_lineno - 1
    assert f"test_reduce.py:{line}:" in str(e.value)


@pytest.mark.gpu
def test_results_match_numpy_and_numba_cuda(gpu):
    rng = np.random.default_rng(7)
    mine_max = cuda.reduce(larger)
    mine_lambda = cuda.reduce(lambda a, b: a + b)
    cases = []
    for n in (1, 5, 127, 128, 129, 1000, 8191, 100_003, (1 << 20) + 7):
        for dt in (np.float32, np.float64, np.int32, np.int64):
            x = (rng.random(n) * 100).astype(dt)
            got = sum_reduce(x)
            assert type(got) is np.dtype(dt).type
            if np.dtype(dt).kind == "f":
                np.testing.assert_allclose(got, x.sum(dtype=np.float64), rtol=1e-5)
            else:
                assert got == x.sum()
            assert mine_max(cuda.to_device(x)) == x.max()
            assert mine_lambda(x, init=1) == sum_reduce(x, init=1)
            cases.append((x, got))
    d = cuda.to_device(np.arange(1000, dtype=np.int64))
    res = cuda.device_array(1, np.int64)
    sum_reduce(d, res=res, init=10, stream=cuda.stream())
    cuda.synchronize()
    assert res.copy_to_host()[0] == 499500 + 10
    assert sum_reduce(d, size=10) == 45

    ncuda = pytest.importorskip("numba.cuda")
    theirs = ncuda.reduce(lambda a, b: a + b)
    for x, got in cases:
        assert theirs(x) == got  # the same kernel: the same order of additions
