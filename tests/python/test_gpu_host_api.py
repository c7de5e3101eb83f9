"""GPU only: a port of the checks numba-cuda's own host-API tests make (reference §5:
test_context_stack, test_events, test_streams, test_profiler, test_select_device,
test_reset_device, test_cuda_driver, test_detect, test_is_fp16) under `import nbcuda as cuda`,
against the real driver."""
import asyncio
import ctypes
import re
import threading

import pytest

import nbcuda as cuda

pytestmark = pytest.mark.gpu
np = pytest.importorskip("numpy")


def libcuda():
    lib = ctypes.CDLL(cuda._driver_path() or "libcuda.so.1")
    return lib


# ---- test_context_stack.py

def test_gpus_current(gpu):
    assert len(cuda.gpus) > 0
    for dev in cuda.list_devices():
        with cuda.gpus[dev.id]:
            assert cuda.gpus.current.id == dev.id


def test_get_memory_info(gpu):
    ctx = cuda.current_context()
    meminfo = ctx.get_memory_info()
    assert meminfo.free == meminfo[0] and meminfo.total == meminfo[1]
    assert meminfo.free <= meminfo.total and meminfo.total > 0


def test_forbidden_context_switch(gpu):
    if len(cuda.gpus) < 2:
        pytest.skip("needs two GPUs")

    @cuda.require_context
    def switch_gpu():
        with cuda.gpus[1]:
            pass

    with cuda.gpus[0]:
        with pytest.raises(RuntimeError, match="Cannot switch CUDA-context."):
            switch_gpu()


def test_accepted_context_switch(gpu):
    if len(cuda.gpus) < 2:
        pytest.skip("needs two GPUs")

    def switch_gpu():
        with cuda.gpus[1]:
            return cuda.current_context().device.id

    with cuda.gpus[0]:
        assert switch_gpu() == 1


def test_gpus_context_manager_does_not_leak_or_lose(gpu):
    cuda.close()
    with cuda.gpus[0]:
        pass
    assert cuda.gpus.current is None
    ctx = cuda.current_context()
    with cuda.gpus[0]:
        pass
    assert cuda.current_context() is ctx


def test_attached_primary_context_is_adopted(gpu):
    cuda.close()
    lib = libcuda()
    dev = ctypes.c_int()
    assert lib.cuDeviceGet(ctypes.byref(dev), 0) == 0
    hctx = ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(hctx), dev) == 0
    try:
        assert lib.cuCtxPushCurrent_v2(hctx) == 0
        ctx = cuda.current_context()
        assert ctx.handle == hctx.value
        a = cuda.to_device(np.arange(10))
        assert (a.copy_to_host() == np.arange(10)).all()
        popped = ctypes.c_void_p()
        assert lib.cuCtxPopCurrent_v2(ctypes.byref(popped)) == 0
        assert popped.value == hctx.value
    finally:
        lib.cuDevicePrimaryCtxRelease_v2(dev)


def test_attached_non_primary_context_is_refused(gpu):
    cuda.close()
    lib = libcuda()
    dev = ctypes.c_int()
    assert lib.cuDeviceGet(ctypes.byref(dev), 0) == 0
    hctx = ctypes.c_void_p()
    if lib.cuCtxCreate_v2(ctypes.byref(hctx), 0, dev) != 0:
        pytest.skip("cuCtxCreate failed")
    try:
        with pytest.raises(RuntimeError, match="non-primary CUDA context"):
            cuda.current_context()
    finally:
        lib.cuCtxDestroy_v2(hctx)
        cuda.close()


# ---- test_cuda_driver.py / test_stream_api.py

def test_stream_kinds(gpu):
    assert "Default CUDA stream" in repr(cuda.default_stream())
    assert "Legacy default CUDA stream" in repr(cuda.legacy_default_stream())
    assert int(cuda.legacy_default_stream()) == 1
    assert "Per-thread default CUDA stream" in repr(cuda.per_thread_default_stream())
    assert int(cuda.per_thread_default_stream()) == 2
    s = cuda.stream()
    assert "CUDA stream" in repr(s) and "Default" not in repr(s) and "External" not in repr(s)
    ext = cuda.external_stream(int(s))
    assert "External CUDA stream" in repr(ext) and "efault" not in repr(ext)
    assert int(ext) == int(s) and ext.external
    assert all(bool(x) for x in (s, ext, cuda.default_stream()))
    assert int(cuda.external_stream(0x12345678)) == 0x12345678


def test_auto_synchronize(gpu):
    s = cuda.stream()
    with s.auto_synchronize():
        d = cuda.to_device(np.arange(100), stream=s)
    assert (d.copy_to_host() == np.arange(100)).all()


def test_device_uuid_and_fp16(gpu):
    dev = cuda.get_current_device()
    assert re.match(r"^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
                    dev.uuid)
    assert dev.supports_float16


def test_detect(gpu, capsys):
    assert cuda.detect()
    out = capsys.readouterr().out
    assert "Found" in out and "CUDA devices" in out
    assert cuda.is_supported_version()


# ---- test_events.py

def test_event_elapsed(gpu):
    @cuda.jit("void(float64[:])")
    def work(a):
        i = cuda.grid(1)
        if i < a.size:
            v = a[i]
            for k in range(1000):
                v = v * 1.0000001 + 1e-9
            a[i] = v

    d = cuda.to_device(np.ones(1 << 20))
    for s in (0, cuda.stream()):
        e0, e1 = cuda.event(), cuda.event()
        e0.record(s)
        work[(1 << 20) // 256, 256, s](d)
        e1.record(s)
        e1.synchronize()
        assert e0.query() and e1.query()
        assert e0.elapsed_time(e1) > 0
        e1.wait(s)


# ---- test_streams.py (skipped in numba-cuda because of its issue #317)

def test_add_callback(gpu):
    s = cuda.stream()
    done = threading.Event()
    got = []

    def cb(stream, status, arg):
        got.append((stream, status, arg))
        done.set()

    cuda.to_device(np.arange(1000), stream=s)
    s.add_callback(cb, 42)
    assert done.wait(10)
    assert got == [(s, 0, 42)]


def test_async_done_parallel(gpu):
    streams = [cuda.stream() for _ in range(4)]

    async def main():
        for s in streams:
            cuda.to_device(np.arange(100000), stream=s)
        return await asyncio.gather(*(s.async_done() for s in streams))

    assert asyncio.run(main()) == streams


# ---- test_profiler.py

def test_profiling(gpu):
    with cuda.profiling():
        a = cuda.device_array(10)
        del a
    with cuda.profiling():
        a = cuda.device_array(100)
        del a


# ---- test_select_device.py / test_reset_device.py

def test_select_device_in_threads(gpu):
    errors = []

    def newthread():
        try:
            cuda.select_device(0)
            stream = cuda.stream()
            A = np.arange(100)
            dA = cuda.to_device(A, stream=stream)
            stream.synchronize()
            del dA
            del stream
            cuda.close()
        except Exception as e:
            errors.append(e)

    for _ in range(2):
        threads = [threading.Thread(target=newthread) for _ in range(10)]
        [t.start() for t in threads]
        [t.join() for t in threads]
    assert errors == []


def test_reset_device_in_threads(gpu):
    errors = []

    def newthread(devices):
        try:
            for _ in range(2):
                for d in devices:
                    cuda.select_device(d)
                    cuda.close()
        except Exception as e:
            errors.append(e)

    devices = range(len(cuda.list_devices()))
    t = threading.Thread(target=newthread, args=(devices,))
    t.start()
    t.join()
    assert errors == []


# ---- test_cuda_auto_context.py

def test_to_device_creates_context(gpu):
    cuda.close()
    A = np.arange(10, dtype=np.float32)
    newA = cuda.to_device(A).copy_to_host()
    assert (A == newA).all()


def test_release_primary_context_then_use_again(gpu):
    """Device.release_primary_context on the real driver: nbcuda's objects in the context are
    gone (an error naming the reset, not a crash), and the next use retains it again and
    works, kernels included."""
    cuda.close()
    A = np.arange(10, dtype=np.float32)
    old = cuda.to_device(A)

    @cuda.jit("void(float32[::1])")
    def inc(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] += 1

    inc[1, 32](old)
    cuda.synchronize()
    cuda.get_current_device().release_primary_context()
    with pytest.raises(cuda.CudaAPIError):
        old.copy_to_host()
    d = cuda.to_device(A)
    inc[1, 32](d)
    np.testing.assert_array_equal(d.copy_to_host(), A + 1)
    cuda.close()
