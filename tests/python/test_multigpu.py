"""Several GPUs through the Python module: the device list, nested device scopes, one thread
per GPU working concurrently, close() resetting every device, an event of one device
waited on by a stream of another, and copies between devices (plain and peer).

Every test runs against whatever driver is loaded: on CI the software test driver, which
models 2 devices by default (NBCUDA_TESTDRIVER_DEVICES sets more), and on a machine with
several GPUs the real driver. The whole file is skipped when fewer than 2 devices are
present. The test driver runs no kernel code, so what a kernel computed is checked only
when the driver is a real one (kernels_run); introspection of the test driver (launch
delay, reset counts, live objects) is used only when it is the driver (tdrv_or_none).
"""
import contextlib
import ctypes
import os
import re
import threading

import pytest

import nbcuda as cuda
import conftest
from conftest import USING_TESTDRIVER, TESTDRIVER

np = pytest.importorskip("numpy")


def _driver_is_fixture():
    """True when the loaded driver library is the test driver, however it was chosen
    (NBCUDA_TESTDRIVER, or NBCUDA_DRIVER pointing at the fixture): launches run nothing."""
    if os.environ.get("NBCUDA_TESTDRIVER"):
        return True
    path = cuda._driver_path()
    if not path:
        return False
    try:
        return hasattr(ctypes.CDLL(path), "tdrv_call_count")
    except OSError:
        return False


def _device_count_or_skip():
    try:
        n = len(cuda.gpus)
    except cuda.CudaSupportError as e:
        if USING_TESTDRIVER:
            raise  # the fixture must always work: a failure is a bug, not a reason to skip
        pytest.skip(f"no usable CUDA driver: {e.msg}")
    if n < 2:
        pytest.skip(f"needs 2 CUDA devices, found {n}")
    return n


@pytest.fixture(scope="module", autouse=True)
def ndev():
    return _device_count_or_skip()


@pytest.fixture(scope="module")
def kernels_run():
    return not _driver_is_fixture()


@pytest.fixture(scope="module")
def tdrv_or_none():
    """The test driver's control API when it is the driver, else None (the test then checks
    only what any driver shows)."""
    if not USING_TESTDRIVER:
        return None
    t = conftest.TestDriver(TESTDRIVER)
    t.lib.tdrv_allocated_bytes.restype = ctypes.c_size_t
    t.lib.tdrv_allocated_bytes.argtypes = [ctypes.c_int]
    t.lib.tdrv_primary_refcount.restype = ctypes.c_int
    t.lib.tdrv_primary_refcount.argtypes = [ctypes.c_int]
    return t


@pytest.fixture
def clean():
    """Starts and ends with this thread's context stack empty (and, being the main thread,
    every device reset)."""
    cuda.close()
    yield
    cuda.close()


def add_value(a, v):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = a[i] + v


@pytest.fixture(scope="module")
def add_kernel():
    """One kernel, compiled once; its code is loaded into each device's context on first
    launch there."""
    return cuda.jit("void(float32[:], float32)")(add_value)


@contextlib.contextmanager
def launch_delay(tdrv, ms):
    """On the test driver, each launch 'runs' for ms milliseconds on its stream, so work is
    observably in flight; on a real driver nothing changes."""
    if tdrv is None:
        yield
        return
    tdrv.set_launch_delay_ms(ms)
    try:
        yield
    finally:
        tdrv.set_launch_delay_ms(0)


def expect_current(i):
    """Every way of asking which device is current agrees on device i (None: no context)."""
    if i is None:
        assert cuda.gpus.current is None
        return
    assert cuda.gpus.current is not None and cuda.gpus.current.id == i
    assert cuda.current_context().device.id == i
    assert cuda.get_current_device().id == i


# ------------------------------------------------------------------ the device list ----


def test_len_matches_device_count(ndev, tdrv_or_none, capsys):
    assert len(cuda.gpus) == ndev
    # The driver's own count, through detect() (nbc_detect), which does not use gpus.
    assert cuda.detect() is True
    m = re.search(r"Found (\d+) CUDA devices", capsys.readouterr().out)
    assert m and int(m.group(1)) == ndev
    if tdrv_or_none is not None:
        assert ndev == int(os.environ.get("NBCUDA_TESTDRIVER_DEVICES") or 2)


def test_iteration_indices_and_str(ndev):
    gpus = cuda.gpus
    ids = [g.id for g in gpus]
    assert ids == list(range(ndev))
    assert [g.id for g in iter(gpus)] == ids  # iterating twice gives the same list
    assert [gpus[i].id for i in range(ndev)] == ids
    for k in range(1, ndev + 1):  # negative indices follow Python list rules
        assert gpus[-k].id == ndev - k
        assert gpus[-k] is gpus[ndev - k]
    with pytest.raises(IndexError):
        gpus[ndev]
    with pytest.raises(IndexError):
        gpus[-ndev - 1]
    assert [g.id for g in gpus[1:]] == list(range(1, ndev))
    assert [g.id for g in gpus[::-1]] == ids[::-1]
    assert str(gpus) == ", ".join(f"<Managed Device {i}>" for i in range(ndev))
    assert [str(g) for g in gpus] == [f"<Managed Device {i}>" for i in range(ndev)]
    assert cuda.list_devices() is gpus


def test_devices_are_distinct(ndev):
    uuids = [g.uuid for g in cuda.gpus]
    assert len(set(uuids)) == ndev
    for u in uuids:
        assert re.match(r"^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", u)
    for g in cuda.gpus:
        assert isinstance(g.name, str) and g.name
        assert isinstance(g.compute_capability, tuple) and len(g.compute_capability) == 2
    # PCI locations differ too (the devices are distinct hardware).
    locs = {(g.PCI_DOMAIN_ID, g.PCI_BUS_ID, g.PCI_DEVICE_ID) for g in cuda.gpus}
    assert len(locs) == ndev


# ------------------------------------------------------------------ device scopes ------


def test_current_inside_each_scope(ndev, clean):
    expect_current(None)
    for i in range(ndev):
        with cuda.gpus[i] as x:
            assert x is None
            expect_current(i)
            assert cuda.gpus.current is cuda.gpus[i]
        expect_current(None)


def test_nested_scopes_restore_each_previous(ndev, clean, tdrv_or_none):
    depth = tdrv_or_none.stack_depth if tdrv_or_none else (lambda: None)
    base = depth()
    with cuda.gpus[0]:
        expect_current(0)
        with cuda.gpus[1]:
            expect_current(1)
            if base is not None:
                assert depth() == base + 2
        expect_current(0)
        with cuda.gpus[1]:  # again, after the inner scope ended
            expect_current(1)
        expect_current(0)
    expect_current(None)
    if base is not None:
        assert depth() == base
    # The other order, and a device nested in itself.
    with cuda.gpus[1]:
        with cuda.gpus[0]:
            expect_current(0)
            with cuda.gpus[0]:
                expect_current(0)
            expect_current(0)
        expect_current(1)
    expect_current(None)


def test_chain_through_every_device(ndev, clean):
    """with gpus[0]: with gpus[1]: ... with gpus[n-1]:, then unwinding one scope at a time
    brings back each previous device."""
    with contextlib.ExitStack() as stack:
        for i in range(ndev):
            stack.enter_context(cuda.gpus[i])
            expect_current(i)
    expect_current(None)
    scopes = [cuda.gpus[i] for i in range(ndev)]
    for s in scopes:
        s.__enter__()
    for i in reversed(range(ndev)):
        expect_current(i)
        scopes[i].__exit__(None, None, None)
    expect_current(None)


def test_scope_exit_restores_after_exception(clean):
    with pytest.raises(KeyError):
        with cuda.gpus[0]:
            with cuda.gpus[1]:
                raise KeyError("x")
    expect_current(None)
    with cuda.gpus[0]:
        with pytest.raises(KeyError):
            with cuda.gpus[1]:
                raise KeyError("y")
        expect_current(0)


def test_select_device_switches_and_close_pops(ndev, clean):
    for i in reversed(range(ndev)):
        dev = cuda.select_device(i)
        assert dev.id == i
        expect_current(i)
    with cuda.gpus[0]:
        expect_current(0)
    expect_current(0)  # select_device pushes and nothing pops: device 0 was selected last
    cuda.close()
    expect_current(None)


# ------------------------------------------------------------------ one thread per GPU --


def test_one_thread_per_gpu_concurrently(ndev, clean, add_kernel, kernels_run, tdrv_or_none):
    """select_device(i) in thread i, then a stream, an event, to_device and a launch on that
    device, all threads at once (a barrier lines them up); each checks its current device
    after every step. On the test driver each launch stays in flight for a while, so the
    event is seen pending while every device has work queued."""
    barrier = threading.Barrier(ndev)
    results, pending, errors = {}, {}, []
    launches_before = tdrv_or_none.launch_count() if tdrv_or_none else None

    def work(i):
        try:
            assert cuda.gpus.current is None  # a new thread starts with an empty stack
            assert cuda.select_device(i).id == i
            barrier.wait(timeout=30)
            s = cuda.stream()
            assert s.context.device.id == i
            ev = cuda.event()
            expect_current(i)
            host = np.arange(256, dtype=np.float32) + 1000 * i
            d = cuda.to_device(host, stream=s)
            add_kernel[4, 64, s](d, float(i + 1))
            ev.record(s)
            pending[i] = ev.query()
            expect_current(i)
            barrier.wait(timeout=30)  # every device has its launch queued now
            ev.synchronize()
            assert ev.query() is True
            out = d.copy_to_host(stream=s)
            s.synchronize()
            expect_current(i)
            results[i] = (host, out)
        except BaseException as e:  # reported by the main thread
            errors.append((i, e))
            barrier.abort()
        finally:
            cuda.close()  # not the main thread: pops only

    with launch_delay(tdrv_or_none, 300):
        threads = [threading.Thread(target=work, args=(i,)) for i in range(ndev)]
        [t.start() for t in threads]
        [t.join(timeout=60) for t in threads]
    assert not any(t.is_alive() for t in threads)
    assert errors == []
    assert sorted(results) == list(range(ndev))
    expect_current(None)  # the workers' pushes never reached this thread
    if tdrv_or_none is not None:
        assert tdrv_or_none.launch_count() == launches_before + ndev
        assert all(pending[i] is False for i in range(ndev)), pending
    if kernels_run:
        for i, (host, out) in results.items():
            np.testing.assert_array_equal(out, host + (i + 1))


def test_kernel_loads_and_launches_on_each_device(ndev, clean, add_kernel, kernels_run,
                                                 tdrv_or_none):
    """The same kernel object launched in each device's scope runs there."""
    outs = []
    for i in range(ndev):
        with cuda.gpus[i]:
            d = cuda.to_device(np.full(64, i, dtype=np.float32))
            add_kernel[1, 64](d, 0.5)
            if tdrv_or_none is not None:
                assert tdrv_or_none.last_launch().device == i
            outs.append(d.copy_to_host())
    if kernels_run:
        for i, out in enumerate(outs):
            np.testing.assert_array_equal(out, np.full(64, i + 0.5, dtype=np.float32))


# ------------------------------------------------------------------ close() -------------


def test_close_on_main_thread_resets_every_device(ndev, clean, add_kernel, kernels_run,
                                                 tdrv_or_none):
    """close() resets every device, used or not: memory made before is returned, and work
    afterwards runs in new contexts (a kernel used before reloads its code)."""
    size = 64 << 20
    with cuda.gpus[1]:
        free0 = cuda.current_context().get_memory_info().free
        big = cuda.device_array(size, dtype=np.uint8)
        s_old = cuda.stream()
        d = cuda.to_device(np.zeros(32, np.float32))
        add_kernel[1, 32](d, 1.0)
        assert cuda.current_context().get_memory_info().free <= free0 - size
    if tdrv_or_none is not None:
        t = tdrv_or_none
        resets = [t.primary_reset_count(i) for i in range(ndev)]
        allocs, streams = t.live_allocations_released(), t.live_streams()
        used1 = t.allocated_bytes(1)
        assert used1 >= size
        loads = t.calls("cuModuleLoadDataEx")
    cuda.close()
    expect_current(None)
    if tdrv_or_none is not None:
        assert [t.primary_reset_count(i) for i in range(ndev)] == [r + 1 for r in resets]
        assert t.live_allocations_released() <= allocs - 2 and t.live_streams() <= streams - 1
        assert t.allocated_bytes(1) == 0
        # What was made before is gone: the old stream and memory are refused by the driver.
        with pytest.raises(cuda.CudaAPIError):
            s_old.synchronize()
        with pytest.raises(cuda.CudaAPIError):
            d.copy_to_host()
    with cuda.gpus[1]:
        # A new context: the memory held before is free again, and new work runs.
        assert cuda.current_context().get_memory_info().free >= free0 - size // 2
        s = cuda.stream()
        d2 = cuda.to_device(np.zeros(32, np.float32), stream=s)
        add_kernel[1, 32, s](d2, 2.0)
        out = d2.copy_to_host(stream=s)
        s.synchronize()
    if tdrv_or_none is not None:
        assert t.calls("cuModuleLoadDataEx") > loads  # the kernel's code was loaded again
    if kernels_run:
        np.testing.assert_array_equal(out, np.full(32, 2.0, dtype=np.float32))
    del big


def test_close_on_other_thread_only_pops(ndev, clean, tdrv_or_none):
    with cuda.gpus[1]:
        cuda.current_context()
    resets = [tdrv_or_none.primary_reset_count(i) for i in range(ndev)] if tdrv_or_none \
        else None
    seen, errors = [], []

    def work():
        try:
            cuda.select_device(1)
            cuda.select_device(0)
            seen.append(cuda.gpus.current.id)
            cuda.close()
            seen.append(cuda.gpus.current)
        except BaseException as e:
            errors.append(e)

    t = threading.Thread(target=work)
    t.start()
    t.join(timeout=30)
    assert errors == [] and seen == [0, None]
    if resets is not None:
        assert [tdrv_or_none.primary_reset_count(i) for i in range(ndev)] == resets


# ------------------------------------------------------------------ cross-device work --


def test_event_of_device0_waited_on_by_stream_of_device1(clean, add_kernel, tdrv_or_none):
    """ev.wait(stream1) inside gpus[1] for an event recorded on device 0: no error, and once
    stream1 has synchronized the event has completed (stream1 waited for it)."""
    with launch_delay(tdrv_or_none, 250):
        with cuda.gpus[0]:
            s0 = cuda.stream()
            d0 = cuda.to_device(np.zeros(64, np.float32), stream=s0)
            add_kernel[1, 64, s0](d0, 1.0)
            ev = cuda.event(timing=False)
            ev.record(s0)
        with cuda.gpus[1]:
            s1 = cuda.stream()
            ev.wait(s1)
            after = cuda.event()
            after.record(s1)
            if tdrv_or_none is not None:
                assert ev.query() is False  # still running on device 0
                assert after.query() is False  # stream1 is held back by it
            s1.synchronize()
            assert ev.query() is True
            assert after.query() is True
            expect_current(1)
        expect_current(None)


def test_event_wait_on_default_stream_of_other_device(clean):
    with cuda.gpus[0]:
        ev = cuda.event()
        ev.record()
    with cuda.gpus[1]:
        ev.wait()  # the default stream of device 1
        cuda.synchronize()
        assert ev.query() is True


def test_copy_between_devices(ndev, clean, tdrv_or_none):
    """A device array of device 0 copied into one of device 1 (and back), from either
    device's scope, then read back on the host."""
    host = np.arange(1000, dtype=np.float64) * 1.5
    with cuda.gpus[0]:
        a0 = cuda.to_device(host)
    if tdrv_or_none is not None:
        bytes1 = tdrv_or_none.allocated_bytes(1)
    with cuda.gpus[1]:
        a1 = cuda.device_array_like(host)
        if tdrv_or_none is not None:  # the new array lives on device 1
            assert tdrv_or_none.allocated_bytes(1) >= bytes1 + host.nbytes
        a1.copy_to_device(a0)
        np.testing.assert_array_equal(a1.copy_to_host(), host)
        expect_current(1)
    # From the source's scope, and the other direction.
    with cuda.gpus[1]:
        b1 = cuda.to_device(host * 2)
    with cuda.gpus[0]:
        a0.copy_to_device(b1)
        np.testing.assert_array_equal(a0.copy_to_host(), host * 2)
        cuda.to_device(a0, to=a1)  # to_device(device array, to=array of device 1)
        expect_current(0)
    with cuda.gpus[1]:
        np.testing.assert_array_equal(a1.copy_to_host(), host * 2)
    # Sizes must match, whatever the devices.
    with cuda.gpus[1]:
        small = cuda.device_array(10, dtype=np.float64)
    with pytest.raises(ValueError):
        small.copy_to_device(a0)


def test_copy_between_devices_with_no_scope(clean):
    """Nothing current but the lazily created device 0: a copy from device 1's array."""
    with cuda.gpus[1]:
        src = cuda.to_device(np.arange(7, dtype=np.int32))
    dst = cuda.device_array(7, dtype=np.int32)  # device 0, pushed lazily
    expect_current(0)
    dst.copy_to_device(src)
    np.testing.assert_array_equal(dst.copy_to_host(), np.arange(7, dtype=np.int32))


def test_cross_device_copy_is_a_peer_copy(clean, tdrv_or_none):
    """Arrays of two devices are copied with cuMemcpyPeer (both contexts named), arrays of
    one device with cuMemcpyDtoD."""
    if tdrv_or_none is None:
        pytest.skip("counts the test driver's calls")
    t = tdrv_or_none
    with cuda.gpus[0]:
        a = cuda.to_device(np.arange(16, dtype=np.int64))
        b = cuda.device_array(16, dtype=np.int64)
    with cuda.gpus[1]:
        c = cuda.device_array(16, dtype=np.int64)
    peer, dtod = t.calls("cuMemcpyPeer"), t.calls("cuMemcpyDtoD")
    with cuda.gpus[0]:
        b.copy_to_device(a)
    assert (t.calls("cuMemcpyPeer"), t.calls("cuMemcpyDtoD")) == (peer, dtod + 1)
    with cuda.gpus[0]:
        c.copy_to_device(a)
    assert (t.calls("cuMemcpyPeer"), t.calls("cuMemcpyDtoD")) == (peer + 1, dtod + 1)
    with cuda.gpus[1]:
        np.testing.assert_array_equal(c.copy_to_host(), np.arange(16))


def test_can_access_peer(ndev, clean):
    ctx = [None] * ndev
    for i in range(ndev):
        with cuda.gpus[i]:
            ctx[i] = cuda.current_context()
    for i in range(ndev):
        assert ctx[i].can_access_peer(i) is False  # a device is never its own peer
        for j in range(ndev):
            can = ctx[i].can_access_peer(j)
            assert isinstance(can, bool)
            assert ctx[i].can_access_peer(cuda.gpus[j]) is can  # a device scope works too
            assert ctx[i].can_access_peer(ctx[j].device) is can  # and a Device
            assert can == (i != j) or not USING_TESTDRIVER  # the fixture's devices all are
    with pytest.raises(IndexError):
        ctx[0].can_access_peer(ndev)
    with pytest.raises(IndexError):
        ctx[0].can_access_peer(-1)
    with pytest.raises(TypeError):
        ctx[0].can_access_peer("1")
    with pytest.raises(ValueError):
        ctx[0].enable_peer_access(0)  # its own device
    expect_current(None)


def test_peer_access_and_peer_copy(clean, add_kernel, kernels_run):
    """With peer access enabled both ways (when the devices allow it), arrays copy directly
    between devices, and a kernel of device 1 may read device 0's memory."""
    with cuda.gpus[0]:
        ctx0 = cuda.current_context()
    with cuda.gpus[1]:
        ctx1 = cuda.current_context()
    if not (ctx0.can_access_peer(1) and ctx1.can_access_peer(0)):
        pytest.skip("devices 0 and 1 cannot access each other's memory")
    ctx0.enable_peer_access(1)
    ctx1.enable_peer_access(cuda.gpus[0])
    ctx1.enable_peer_access(0)  # enabling again is not an error
    expect_current(None)  # enable_peer_access leaves the stack as it was
    host = np.linspace(0, 1, 4096, dtype=np.float32)
    with cuda.gpus[0]:
        a0 = cuda.to_device(host)
    with cuda.gpus[1]:
        a1 = cuda.device_array_like(host)
    a1.copy_to_device(a0)  # from no scope at all (device 0 is made current lazily)
    with cuda.gpus[1]:
        np.testing.assert_array_equal(a1.copy_to_host(), host)
        # Direct access: device 1 runs a kernel on device 0's memory.
        add_kernel[16, 256](a0, 1.0)
        cuda.synchronize()
    with cuda.gpus[0]:
        out = a0.copy_to_host()
    if kernels_run:
        np.testing.assert_array_equal(out, host + np.float32(1.0))
    # Mappings belong to the contexts: after close() they are enabled again without error.
    cuda.close()
    ctx0.enable_peer_access(1)
    expect_current(None)


def test_arrays_made_before_close_are_not_freed_after(clean, tdrv_or_none):
    """An array that outlives close() must not free its old address when it dies: the reset
    freed the memory, and the address may belong to a new allocation by then."""
    with cuda.gpus[1]:
        stale = cuda.to_device(np.ones(1000))
    cuda.close()
    with cuda.gpus[1]:
        fresh = cuda.to_device(np.ones(1000))
        frees = tdrv_or_none.calls("cuMemFree") if tdrv_or_none else None
        del stale
        if frees is not None:
            assert tdrv_or_none.calls("cuMemFree") == frees
        np.testing.assert_array_equal(fresh.copy_to_host(), np.ones(1000))
        frees = tdrv_or_none.calls("cuMemFree") if tdrv_or_none else None
        del fresh
        if frees is not None:
            tdrv_or_none.live_allocations_released()  # the block kept for reuse, freed
            assert tdrv_or_none.calls("cuMemFree") == frees + 1
