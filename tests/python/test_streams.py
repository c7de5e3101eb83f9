"""Streams, events, callbacks and async_done (no Python on the driver's thread), profiler."""
import asyncio
import gc
import re
import threading
import time
import warnings

import pytest


def test_stream_reprs_and_handles(cuda):
    s = cuda.stream()
    assert re.match(r"^<CUDA stream \d+>$", repr(s)) and "efault" not in repr(s)
    assert int(s) == s.handle and int(s) != 0
    assert s.__cuda_stream__() == (0, int(s))
    assert s and not s.external
    d = cuda.default_stream()
    assert repr(d) == "<Default CUDA stream>" and int(d) == 0 and bool(d)
    assert d.__cuda_stream__()[1] == 0
    assert repr(cuda.legacy_default_stream()) == "<Legacy default CUDA stream>"
    assert int(cuda.legacy_default_stream()) == 1
    assert repr(cuda.per_thread_default_stream()) == "<Per-thread default CUDA stream>"
    assert int(cuda.per_thread_default_stream()) == 2
    e = cuda.external_stream(0x12345678)
    assert repr(e) == f"<External CUDA stream {0x12345678}>" and "efault" not in repr(e)
    assert int(e) == 0x12345678 and e.external
    with pytest.raises(TypeError, match="ptr for external stream must be an int"):
        cuda.external_stream(1.5)


def test_created_streams_are_destroyed_external_never(cuda, tdrv):
    """A stream that dies idle is kept by its context for the next stream() (the driver's
    cuStreamCreate + cuStreamDestroy cost ~5 us), at most 8; one with work pending is destroyed
    (its work completes); a reset of the context destroys the kept ones; an external stream
    is never destroyed."""
    ctx = cuda.current_context()
    held = [cuda.stream() for _ in range(8)]  # the kept streams, if any, taken
    before, creates = tdrv.live_streams(), tdrv.calls("cuStreamCreate")
    s = cuda.stream()
    handle = int(s)
    assert tdrv.live_streams() == before + 1 and tdrv.calls("cuStreamCreate") == creates + 1
    del s
    assert tdrv.live_streams() == before + 1  # kept
    s = cuda.stream()
    assert int(s) == handle and tdrv.calls("cuStreamCreate") == creates + 1
    real = cuda.stream()
    ext = cuda.external_stream(int(real))
    del ext
    assert tdrv.live_streams() == before + 2
    k = cuda.jit("void(int32[:])")(lambda a: None)
    d = cuda.device_array(1, dtype=cuda.int32)
    tdrv.set_launch_delay_ms(200)
    try:
        k[1, 1, s](d)  # pending when s dies
        del s, k  # the kernel keeps its last launch configuration, s with it
        gc.collect()
    finally:
        tdrv.set_launch_delay_ms(0)
    assert tdrv.live_streams() == before + 1  # destroyed, not kept
    del real, held
    gc.collect()
    kept = tdrv.live_streams()
    ctx.reset()
    assert tdrv.live_streams() == kept - 8  # at most 8 kept, destroyed by the reset


def test_stream_synchronize_and_auto_synchronize(cuda, tdrv):
    s = cuda.stream()
    with s.auto_synchronize() as t:
        assert t is s
    n = tdrv.calls("cuStreamSynchronize")
    with pytest.raises(ZeroDivisionError):
        with s.auto_synchronize():
            1 / 0
    assert tdrv.calls("cuStreamSynchronize") == n + 1  # synchronized although the body raised


def test_profiling_stops_when_body_raises(cuda, tdrv):
    with pytest.raises(ValueError):
        with cuda.profiling():
            assert tdrv.profiler_state() == 1
            raise ValueError("boom")
    assert tdrv.profiler_state() == 0
    cuda.profile_start()
    assert tdrv.profiler_state() == 1
    cuda.profile_stop()
    assert tdrv.profiler_state() == 0


def test_events(cuda):
    s = cuda.stream()
    a, b = cuda.event(), cuda.event()
    a.record(s)
    b.record(s)
    b.synchronize()
    assert a.query() is True and b.query() is True
    ms = cuda.event_elapsed_time(a, b)
    assert isinstance(ms, float) and ms >= 0
    assert a.elapsed_time(b) == pytest.approx(ms)
    a.wait(s)
    a.record()
    a.record(0)
    a.wait(cuda.default_stream())
    with pytest.raises(TypeError, match="Expected a Stream object or 0, got str"):
        a.record("x")


def test_default_streams_are_made_once_per_context(cuda):
    """The three default streams are singletons of the C library: their Stream objects are
    made once per context and handed out again (numba makes a new equal one per call)."""
    ctx = cuda.current_context()
    for make in (cuda.default_stream, cuda.legacy_default_stream,
                 cuda.per_thread_default_stream):
        s = make()
        assert make() is s and s.context is ctx
    assert cuda.default_stream() is not cuda.legacy_default_stream()
    if len(cuda.gpus) > 1:
        with cuda.gpus[1]:
            other = cuda.default_stream()
            assert other.context is cuda.current_context() and other.context is not ctx
            assert cuda.default_stream() is other
        assert cuda.default_stream().context is ctx


def test_kept_event_answers_as_a_new_one(cuda):
    """An event that died complete is kept for the next event(); recorded before, it still
    answers elapsed_time as a new unrecorded event does (the driver's INVALID_HANDLE)."""
    fresh, b = cuda.event(), cuda.event()
    b.record()
    b.synchronize()
    with pytest.raises(cuda.CudaAPIError, match="CUDA_ERROR_INVALID_HANDLE") as new_error:
        cuda.event_elapsed_time(fresh, b)
    for _ in range(3):
        a = cuda.event()
        a.record()
        a.synchronize()
        assert cuda.event_elapsed_time(b, a) >= 0
        del a
        e = cuda.event()
        assert e.query() is True
        e.wait(cuda.default_stream())
        with pytest.raises(cuda.CudaAPIError, match="CUDA_ERROR_INVALID_HANDLE") as error:
            cuda.event_elapsed_time(e, b)
        assert str(error.value) == str(new_error.value)
        e.record()
        e.synchronize()
        assert cuda.event_elapsed_time(b, e) >= 0


def test_event_query_false_while_pending(cuda, tdrv):
    s = cuda.stream()
    tdrv.set_launch_delay_ms(300)
    try:
        k = cuda.jit("void(int32[:])")(_noop)
        d = cuda.device_array(4, dtype=cuda.int32)
        k[1, 1, s](d)
        e = cuda.event()
        e.record(s)
        assert e.query() is False
        e.synchronize()
        assert e.query() is True
    finally:
        tdrv.set_launch_delay_ms(0)


def _noop(a):
    a[0] = 1


def test_non_timing_event_elapsed_time_is_clear_error(cuda):
    a, b = cuda.event(timing=False), cuda.event()
    a.record()
    b.record()
    b.synchronize()
    with pytest.raises(ValueError, match="timing"):
        cuda.event_elapsed_time(a, b)


def test_add_callback_with_and_without_arg(cuda):
    s = cuda.stream()
    got = []
    done = threading.Event()

    def cb(stream, status, arg):
        got.append((stream, status, arg, threading.current_thread().name))
        if len(got) == 2:
            done.set()

    s.add_callback(cb)
    s.add_callback(cb, "arg")
    assert done.wait(10)
    assert [(g[0], g[1], g[2]) for g in got] == [(s, 0, None), (s, 0, "arg")]
    assert got[0][3] == "nbcuda-callbacks"


def test_callback_exception_becomes_warning(cuda):
    s = cuda.stream()
    done = threading.Event()

    def bad(stream, status, arg):
        raise RuntimeError("oops")

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s.add_callback(bad)
        s.add_callback(lambda *a: done.set())
        assert done.wait(10)
        time.sleep(0.05)
    assert any("Exception in stream callback: oops" in str(x.message) for x in w)


def test_callback_does_not_deadlock_with_lock_held_during_synchronize(cuda, tdrv):
    """numba-cuda runs the callback on the driver's thread with the GIL; a callback that
    needs a lock the main thread holds while it waits in synchronize() deadlocks there
    (the driver waits for the callback, the callback for the lock: numba-cuda #317). nbcuda
    queues the completion and returns from synchronize at once."""
    s = cuda.stream()
    lock = threading.Lock()
    done = threading.Event()

    def cb(stream, status, arg):
        with lock:
            done.set()

    tdrv.set_launch_delay_ms(100)
    try:
        k = cuda.jit("void(int32[:])")(_noop)
        k[1, 1, s](cuda.device_array(4, dtype=cuda.int32))
        with lock:
            s.add_callback(cb)
            t0 = time.monotonic()
            s.synchronize()  # with numba's design this never returns
            assert time.monotonic() - t0 < 5
            assert not done.is_set()
    finally:
        tdrv.set_launch_delay_ms(0)
    assert done.wait(10)


def test_callback_delivered_while_main_thread_blocked(cuda):
    """The main thread is blocked (GIL released) waiting for the callback itself: a
    pending-call design would deliver only after the wait ends."""
    s = cuda.stream()
    done = threading.Event()
    s.add_callback(lambda *a: done.set())
    t0 = time.monotonic()
    assert done.wait(10)
    assert time.monotonic() - t0 < 5


def test_async_done_resolves_with_the_stream(cuda):
    s1, s2 = cuda.stream(), cuda.stream()

    async def main():
        f1, f2 = s1.async_done(), s2.async_done()
        r = await asyncio.gather(f1, f2)
        return r

    assert asyncio.run(main()) == [s1, s2]


def test_async_done_cancelled_future_does_not_break_others(cuda, tdrv):
    s = cuda.stream()

    async def main():
        f1 = s.async_done()
        f2 = s.async_done()
        f1.cancel()
        return await f2, f1.cancelled()

    tdrv.set_launch_delay_ms(50)
    try:
        k = cuda.jit("void(int32[:])")(_noop)
        k[1, 1, s](cuda.device_array(4, dtype=cuda.int32))
        assert asyncio.run(main()) == (s, True)
    finally:
        tdrv.set_launch_delay_ms(0)


def test_async_done_needs_running_loop(cuda):
    with pytest.raises(RuntimeError):
        cuda.stream().async_done()
