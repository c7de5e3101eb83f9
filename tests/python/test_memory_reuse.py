"""Freed device memory kept for reuse (src/host/reuse.c): the next array of the same size in
the context gets the block back, after the work queued before the free is done (what the
cuMemFree it saves waits for); get_memory_info() counts kept blocks free."""
import pytest

np = pytest.importorskip("numpy")


def _address(a):
    return a.__cuda_array_interface__["data"][0]


def _noop(a):
    pass


def test_a_freed_block_is_reused_with_the_new_contents(cuda):
    a = cuda.to_device(np.arange(256, dtype=np.float32))
    where = _address(a)
    del a
    b = cuda.to_device(np.full(256, 7, dtype=np.float32))
    assert _address(b) == where
    np.testing.assert_array_equal(b.copy_to_host(), np.full(256, 7, dtype=np.float32))
    c = cuda.device_array(512, dtype=np.float32)  # another size: another block
    assert _address(c) != where


def test_reuse_waits_for_work_queued_before_the_free(cuda, tdrv):
    k = cuda.jit("void(int32[:])")(_noop)
    s = cuda.stream()
    a = cuda.device_array(64, dtype=np.int32)
    k[1, 1, s](a)
    s.synchronize()
    syncs = tdrv.calls("cuCtxSynchronize")
    tdrv.set_launch_delay_ms(300)
    try:
        k[1, 1, s](a)  # 'runs' 300 ms
    finally:
        tdrv.set_launch_delay_ms(0)
    assert not s.query()
    where = _address(a)
    del a  # no wait here
    assert not s.query()
    b = cuda.device_array(64, dtype=np.int32)
    assert _address(b) == where
    assert s.query()  # the kernel that used the block was done first
    assert tdrv.calls("cuCtxSynchronize") == syncs + 1
    del b
    cuda.synchronize()  # begun after the free: the next reuse needs no synchronization
    c = cuda.device_array(64, dtype=np.int32)
    assert _address(c) == where and tdrv.calls("cuCtxSynchronize") == syncs + 2


def test_no_reuse_waits_for_a_kernel_launched_after_the_free(cuda, tdrv):
    """The synchronization a reuse needs would wait for work queued after the free too: with a
    kernel launched since, the allocation goes to the driver and returns at once."""
    k = cuda.jit("void(int32[:])")(_noop)
    scratch = cuda.device_array(4, dtype=np.int32)
    s = cuda.stream()
    a = cuda.device_array(64, dtype=np.int32)
    where = _address(a)
    cuda.synchronize()
    del a
    tdrv.set_launch_delay_ms(300)
    try:
        k[1, 1, s](scratch)  # 'runs' 300 ms, queued after the free
    finally:
        tdrv.set_launch_delay_ms(0)
    b = cuda.device_array(64, dtype=np.int32)
    assert not s.query()  # the allocation did not wait for it
    assert _address(b) != where
    s.synchronize()


def test_memory_info_counts_kept_blocks_free(cuda, tdrv):
    ctx = cuda.current_context()
    free0, _ = ctx.get_memory_info()
    a = cuda.device_array(1 << 20, dtype=np.uint8)
    free1, _ = ctx.get_memory_info()
    assert free1 < free0
    live = tdrv.live_allocations()
    del a
    assert tdrv.live_allocations() == live  # kept
    free2, _ = ctx.get_memory_info()
    assert free2 == free0 and tdrv.live_allocations() == live - 1


def test_large_blocks_are_freed_at_once(cuda, tdrv):
    a = cuda.device_array(8 << 20, dtype=np.uint8)  # above the 4 MiB a kept block may have
    live = tdrv.live_allocations()
    del a
    assert tdrv.live_allocations() == live - 1


def test_reuse_turned_off_by_the_environment(tdrv, run_py):
    """NBCUDA_REUSE_BYTES=0: every free goes to the driver at once."""
    p = run_py("""
        import ctypes, os
        import numpy as np
        import nbcuda as cuda
        t = ctypes.CDLL(os.environ["NBCUDA_TESTDRIVER"])
        a = cuda.device_array(256, dtype=np.float32)
        live = t.tdrv_live_allocations()
        del a
        print(live - t.tdrv_live_allocations())
    """, env={"NBCUDA_REUSE_BYTES": "0"})
    assert p.stdout.split() == ["1"]


def test_deallocations_count_the_kept_blocks(cuda):
    """numba-cuda's test_cuda_array_interface.test_ownership: memory freed and not yet given
    back to the driver is pending in ctx.memory_manager.deallocations; clear() gives it back."""
    ctx = cuda.current_context()
    deallocs = ctx.memory_manager.deallocations
    assert deallocs is ctx.deallocations
    deallocs.clear()
    assert len(deallocs) == 0
    d_arr = cuda.to_device(np.arange(100))
    cvted = cuda.as_cuda_array(d_arr)
    del d_arr
    assert len(deallocs) == 0  # cvted holds the memory
    np.testing.assert_equal(cvted.copy_to_host(), np.arange(100))
    del cvted
    assert len(deallocs) == 1
    deallocs.clear()
    assert len(deallocs) == 0
    assert "pending deallocations" in repr(deallocs)


def test_deallocations_clear_waits_while_cleanup_is_deferred(cuda):
    ctx = cuda.current_context()
    ctx.deallocations.clear()
    assert not ctx.deallocations.is_disabled
    kept = cuda.device_array(64, dtype=np.int32)
    del kept  # kept for reuse: 1 pending
    with ctx.deallocations.disable():
        assert ctx.deallocations.is_disabled
        a = cuda.device_array(1000, dtype=np.int32)
        del a  # queued until the block ends
        assert len(ctx.deallocations) == 2
        ctx.deallocations.clear()  # numba: nothing while disabled
        assert len(ctx.deallocations) == 2
    assert not ctx.deallocations.is_disabled
    assert len(ctx.deallocations) == 2  # the queued free ran, and its block was kept
    ctx.deallocations.clear()
    assert len(ctx.deallocations) == 0


def test_own_memory_manager_delegates_to_the_context(cuda):
    ctx = cuda.current_context()
    m = ctx.memory_manager
    assert m is ctx.memory_manager and m.context is ctx
    assert type(m) is cuda.NumbaCUDAMemoryManager
    assert isinstance(m, cuda.HostOnlyCUDAMemoryManager) and m.interface_version == 1
    assert m.get_memory_info() == ctx.get_memory_info()
    p = m.memalloc(256)
    assert p.size == 256
    m.initialize()


def test_deallocations_clear_reports_a_refused_free(cuda, tdrv):
    """The driver refusing to free a kept block: clear() raises its error; the block is no
    longer pending (nor reused), and the driver keeps it until the context is reset."""
    ctx = cuda.current_context()
    ctx.deallocations.clear()
    live = tdrv.live_allocations()
    a = cuda.device_array(64, dtype=np.int32)
    del a
    assert len(ctx.deallocations) == 1
    tdrv.fail("cuMemFree", 1, 999)
    with pytest.raises(cuda.CudaAPIError, match="a freed block kept for reuse"):
        ctx.deallocations.clear()
    assert len(ctx.deallocations) == 0
    assert tdrv.live_allocations() == live + 1
    ctx.reset()
    assert tdrv.live_allocations() == live
