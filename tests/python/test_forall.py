"""k.forall(ntasks, tpb=0, stream=0, sharedmem=0) and k.specialize(*args), as numba's
dispatcher has them: forall launches a 1-D grid of ceil(ntasks / block) blocks, the block
being tpb or, when tpb is 0, the largest block the specialisation can be launched with (what
numba-cuda 0.30's get_max_potential_block_size answers). The test-driver tests read the
recorded launch; the gpu test runs the kernels and compares with numpy and numba-cuda."""
import inspect

import numpy as np
import pytest

import nbcuda as cuda
from nbcuda import float32, void


def increment(a, n):
    i = cuda.grid(1)
    if i < n:
        a[i] += 1


def scaled_copy(out, x, factor):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] * factor


def block_size(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = cuda.blockDim.x


def launched(info):
    return list(info.grid), list(info.block), info.shared_bytes, info.stream


def test_forall_chooses_the_largest_block_and_covers_the_tasks(tdrv):
    k = cuda.jit("void(float32[::1], int64)")(increment)
    d = cuda.device_array(5000, np.float32)
    k.forall(5000)(d, 5000)
    assert launched(tdrv.last_launch()) == ([5, 1, 1], [1024, 1, 1], 0, 0)
    k.forall(1024)(d, 1024)
    assert launched(tdrv.last_launch()) == ([1, 1, 1], [1024, 1, 1], 0, 0)
    k.forall(1)(d, 1)
    assert launched(tdrv.last_launch()) == ([1, 1, 1], [1024, 1, 1], 0, 0)


def test_forall_block_follows_launch_bounds(tdrv):
    k = cuda.jit("void(float32[::1], int64)", launch_bounds=128)(increment)
    k.forall(1000)(cuda.device_array(1000, np.float32), 1000)
    assert launched(tdrv.last_launch()) == ([8, 1, 1], [128, 1, 1], 0, 0)


def test_forall_given_tpb_stream_and_shared_memory(tdrv):
    k = cuda.jit("void(float32[::1], int64)")(increment)
    s = cuda.stream()
    d = cuda.device_array(100, np.float32)
    k.forall(100, tpb=32, stream=s, sharedmem=256)(d, 100)
    assert launched(tdrv.last_launch()) == ([4, 1, 1], [32, 1, 1], 256, int(s))
    k.forall(np.int64(65), np.int32(64))(d, 65)  # numpy integers count as ints
    assert launched(tdrv.last_launch()) == ([2, 1, 1], [64, 1, 1], 0, 0)


def test_forall_of_a_lazy_kernel_specialises_on_the_arguments(tdrv):
    k = cuda.jit(scaled_copy)
    out, x = cuda.device_array(300, np.float64), cuda.device_array(300, np.float64)
    k.forall(300)(out, x, 2.0)
    assert launched(tdrv.last_launch()) == ([1, 1, 1], [1024, 1, 1], 0, 0)
    assert len(k.overloads) == 1
    k.forall(3000, 256)(cuda.device_array(3000, np.float32),
                        cuda.device_array(3000, np.float32), 2.0)
    assert launched(tdrv.last_launch()) == ([12, 1, 1], [256, 1, 1], 0, 0)
    assert len(k.overloads) == 2


def test_forall_of_no_tasks_launches_nothing_and_checks_nothing(tdrv):
    k = cuda.jit("void(float32[::1], int64)")(increment)
    before = tdrv.launch_count()
    assert k.forall(0)() is None  # numba returns before looking at the arguments
    assert tdrv.launch_count() == before


def test_forall_refuses_bad_arguments(cuda):
    k = cuda.jit("void(float32[::1], int64)")(increment)
    with pytest.raises(ValueError, match="Can't create ForAll with negative task count: -1"):
        k.forall(-1)
    with pytest.raises(TypeError):
        k.forall(1.5)
    with pytest.raises(TypeError, match="tpb must be an int"):
        k.forall(10, tpb=(32, 2))
    with pytest.raises(ValueError, match="blockdim"):
        k.forall(10, tpb=-32)
    with pytest.raises(ValueError, match="sharedmem"):
        k.forall(10, sharedmem=-1)
    with pytest.raises(TypeError):
        k.forall(10, stream="not a stream")
    with pytest.raises(ValueError, match="more than a grid can have"):
        k.forall(2**62, tpb=1)(cuda.device_array(1, np.float32), 1)
    with pytest.raises(TypeError, match="takes 2 arguments"):
        k.forall(10)(cuda.device_array(1, np.float32))


def test_specialize_compiles_for_the_argument_types(cuda):
    k = cuda.jit(scaled_copy)
    out, x = cuda.device_array(8, np.float32), cuda.device_array(8, np.float32)
    s = k.specialize(out, x, 2.0)
    assert s.specialized is True and k.specialized is False
    assert s is k.specialize(out, x, 3.0)  # the same argument types: the same kernel
    assert len(k.overloads) == 1
    s[1, 8](out, x, 2.0)
    with pytest.raises(RuntimeError, match="Dispatcher already specialized"):
        s.specialize(out, x, 2.0)
    eager = cuda.jit(void(float32[::1], float32[::1], float32))(scaled_copy)
    with pytest.raises(RuntimeError, match="Dispatcher already specialized"):
        eager.specialize(out, x, 2.0)


@pytest.mark.gpu
def test_forall_runs_like_numba_cuda(gpu, tmp_path, monkeypatch):
    """The same kernels through numba-cuda's forall: the same results, and every thread sees
    the block forall chose, the kernel's largest (the same as numba's when the registers are)."""
    n = 100_003
    x = np.arange(n, dtype=np.float32)
    a = cuda.to_device(np.zeros(n, np.float32))
    k = cuda.jit("void(float32[::1], int64)")(increment)
    k.forall(n)(a, n)
    k.forall(n, tpb=96)(a, n)
    out = cuda.device_array(n, np.float32)
    lazy = cuda.jit(scaled_copy)
    lazy.forall(n)(out, cuda.to_device(x), np.float32(3))
    cuda.synchronize()
    np.testing.assert_array_equal(a.copy_to_host(), np.full(n, 2, np.float32))
    np.testing.assert_array_equal(out.copy_to_host(), x * 3)

    blocks = cuda.device_array(n, np.int32)
    seen = cuda.jit("void(int32[::1])")(block_size)
    seen.forall(n)(blocks)
    most = seen.get_max_threads_per_block()
    np.testing.assert_array_equal(blocks.copy_to_host(), np.full(n, most, np.int32))

    ncuda = pytest.importorskip("numba.cuda")
    (tmp_path / "numba_forall_kernels.py").write_text(
        "from numba import cuda\n\n" + inspect.getsource(increment) + "\n\n" +
        inspect.getsource(block_size))
    monkeypatch.syspath_prepend(str(tmp_path))
    import numba_forall_kernels as t
    theirs = ncuda.jit("void(float32[::1], int64)")(t.increment)
    b = ncuda.to_device(np.zeros(n, np.float32))
    theirs.forall(n)(b, n)
    theirs.forall(n, tpb=96)(b, n)
    ncuda.synchronize()
    np.testing.assert_array_equal(b.copy_to_host(), a.copy_to_host())
    their_seen = ncuda.jit("void(int32[::1])")(t.block_size)
    their_blocks = ncuda.to_device(np.zeros(n, np.int32))
    their_seen.forall(n)(their_blocks)
    their_most = their_seen.get_max_threads_per_block()
    np.testing.assert_array_equal(their_blocks.copy_to_host(),
                                  np.full(n, their_most, np.int32))
    if seen.get_regs_per_thread() == their_seen.get_regs_per_thread():
        assert most == their_most
