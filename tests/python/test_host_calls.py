"""The hot host calls' fast paths (bench/host_py.py measures them): they must keep the
behaviour and the error messages of the plain paths they short-cut.

- Event.record/wait, event() and current_context() read positional arguments off the
  vectorcall vector; keywords and wrong calls go through PyArg_ParseTupleAndKeywords, so the
  messages are CPython's usual ones.
- event(), stream(), default_stream() and external_stream() ask the driver for the current
  context once (the object is made inside nbc_require_context), not twice.
- Stream.synchronize() and Event.synchronize() answer an idle stream / completed event with
  the non-blocking query and keep the GIL; pending work still gets the blocking call with
  the GIL released, and its errors.
- get_memory_info() fills the MemoryInfo namedtuple without calling the class.
- synchronize(), stream(), the default streams' factories and get_current_device() are
  METH_FASTCALL (calls of those the interpreter specializes) and refuse arguments as
  CPython refuses them for a function that takes none.
- The module has no __getattr__ (MemoryInfo and the EMM base classes are made at import), so
  the interpreter specializes the loads of its attributes (cuda.synchronize).
"""
import dis
import sys
import gc
import threading
import time

import numpy as np
import pytest


def _noop(a):
    a[0] = 1


# ------------------------------------------------------------------ argument parsing ---

def test_record_and_wait_arguments(cuda):
    s = cuda.stream()
    ev = cuda.event()
    for call in (ev.record, ev.wait):
        assert call() is None
        assert call(s) is None
        assert call(0) is None
        assert call(None) is None
        assert call(stream=s) is None
        assert call(stream=0) is None
    s.synchronize()
    assert ev.query() is True


@pytest.mark.parametrize("name", ["record", "wait"])
def test_record_and_wait_errors_read_as_pyarg_ones(cuda, name):
    s = cuda.stream()
    call = getattr(cuda.event(), name)
    with pytest.raises(TypeError) as e:
        call(s, s)
    assert str(e.value) == f"{name}() takes at most 1 argument (2 given)"
    with pytest.raises(TypeError) as e:
        call(foo=1)
    assert str(e.value) == f"'foo' is an invalid keyword argument for {name}()"
    with pytest.raises(TypeError) as e:
        call(s, stream=s)
    assert str(e.value) == f"{name}() takes at most 1 argument (2 given)"
    with pytest.raises(TypeError) as e:
        call(5)
    assert str(e.value) == "Expected a Stream object or 0, got int"


def test_event_timing_argument(cuda):
    assert cuda.event().timing is True
    assert cuda.event(True).timing is True
    assert cuda.event(False).timing is False
    assert cuda.event(timing=False).timing is False
    assert cuda.event([]).timing is False  # truth value, as the "p" format takes it
    assert cuda.event([1]).timing is True
    with pytest.raises(TypeError) as e:
        cuda.event(1, 2)
    assert str(e.value) == "event() takes at most 1 argument (2 given)"
    with pytest.raises(TypeError) as e:
        cuda.event(tim=1)
    assert str(e.value) == "'tim' is an invalid keyword argument for event()"

    class Bad:
        def __bool__(self):
            raise ValueError("no truth")

    with pytest.raises(ValueError, match="no truth"):
        cuda.event(Bad())
    with pytest.raises(ValueError, match="no truth"):
        cuda.event(timing=Bad())


@pytest.mark.parametrize("name", ["synchronize", "stream", "default_stream",
                                  "legacy_default_stream", "per_thread_default_stream",
                                  "get_current_device"])
def test_functions_without_arguments_refuse_them(cuda, name):
    f = getattr(cuda, name)
    with pytest.raises(TypeError, match=rf"^nbcuda\.{name}\(\) takes no arguments \(2 given\)$"):
        f(1, 2)
    with pytest.raises(TypeError, match=rf"^nbcuda\.{name}\(\) takes no keyword arguments$"):
        f(x=1)
    f()


def test_current_context_argument(cuda):
    ctx = cuda.current_context()
    assert cuda.current_context(None) is ctx
    assert cuda.current_context(0) is cuda.current_context(devnum=0)
    with pytest.raises(TypeError) as e:
        cuda.current_context(0, 1)
    assert str(e.value) == "current_context() takes at most 1 argument (2 given)"
    with pytest.raises(TypeError) as e:
        cuda.current_context(dev=0)
    assert str(e.value) == "'dev' is an invalid keyword argument for current_context()"
    with pytest.raises(IndexError, match="device index -1 out of range"):
        cuda.current_context(-1)


# ------------------------------------------------------------- one context check -------

@pytest.mark.parametrize("make", ["event()", "event(False)", "stream()", "default_stream()",
                                  "legacy_default_stream()", "external_stream(0x1234)"])
def test_factories_ask_for_the_current_context_once(cuda, tdrv, make):
    ctx = cuda.current_context()
    eval("cuda." + make)  # the first call may adopt the context
    n = tdrv.calls("cuCtxGetCurrent")
    obj = eval("cuda." + make)
    assert tdrv.calls("cuCtxGetCurrent") == n + 1
    if "stream" in make:  # Streams show the Context they keep (Events keep it hidden)
        assert obj.context is ctx


def test_factories_inside_require_context_use_the_attached_context(cuda, tdrv):
    ctx = cuda.current_context()

    @cuda.require_context
    def body():
        n = tdrv.calls("cuCtxGetCurrent")
        made = [cuda.event(), cuda.stream(), cuda.default_stream()]
        assert tdrv.calls("cuCtxGetCurrent") == n  # the attached context: no driver call
        return made

    ev, s, d = body()
    assert s.context is ctx and d.context is ctx and ev.query() is True


def test_factory_failure_leaves_nothing_behind(cuda, tdrv):
    cuda.current_context()
    gc.collect()  # streams and events of earlier tests held in cycles must not die midway
    held = [cuda.stream() for _ in range(8)]  # no idle stream left: stream() asks the driver
    held += [cuda.event() for _ in range(16)]  # nor a kept event: event() asks the driver
    streams, events = tdrv.live_streams(), tdrv.live_events()
    tdrv.fail("cuEventCreate", 1, 2)
    with pytest.raises(cuda.CudaAPIError, match=r"\[2\] Call to cuEventCreate results in "
                                                r"CUDA_ERROR_OUT_OF_MEMORY"):
        cuda.event()
    tdrv.fail("cuStreamCreate", 1, 201)
    with pytest.raises(cuda.CudaAPIError, match="Call to cuStreamCreate results in "
                                                "CUDA_ERROR_INVALID_CONTEXT"):
        cuda.stream()
    tdrv.fail("cuCtxGetCurrent", 1, 201)
    with pytest.raises(cuda.CudaAPIError, match="Call to cuCtxGetCurrent results in "
                                                "CUDA_ERROR_INVALID_CONTEXT"):
        cuda.default_stream()
    assert (tdrv.live_streams(), tdrv.live_events()) == (streams, events)
    del held


# ------------------------------------------------------------------ synchronize --------

def test_idle_synchronize_is_answered_by_the_query(cuda, tdrv):
    s = cuda.stream()
    ev = cuda.event()
    ev.record(s)
    s.synchronize()
    calls = {n: tdrv.calls(n) for n in ("cuStreamSynchronize", "cuStreamQuery",
                                        "cuEventSynchronize", "cuEventQuery")}
    assert s.synchronize() is None
    assert ev.synchronize() is None
    assert tdrv.calls("cuStreamQuery") == calls["cuStreamQuery"] + 1
    assert tdrv.calls("cuEventQuery") == calls["cuEventQuery"] + 1
    assert tdrv.calls("cuStreamSynchronize") == calls["cuStreamSynchronize"]
    assert tdrv.calls("cuEventSynchronize") == calls["cuEventSynchronize"]


def _spins_while(fn):
    """How far another Python thread gets while fn() runs (0 when fn holds the GIL)."""
    state = {"count": 0, "stop": False}

    def spin():
        while not state["stop"]:
            state["count"] += 1

    t = threading.Thread(target=spin)
    t.start()
    while state["count"] == 0:
        time.sleep(0.001)
    before = state["count"]
    fn()
    after = state["count"]
    state["stop"] = True
    t.join()
    return after - before


@pytest.mark.parametrize("what", ["stream", "event"])
def test_pending_synchronize_waits_with_the_gil_released(cuda, tdrv, what):
    s = cuda.stream()
    k = cuda.jit("void(int32[:])")(_noop)
    d = cuda.device_array(4, dtype=cuda.int32)
    k[1, 1, s](d)
    s.synchronize()
    tdrv.set_launch_delay_ms(300)
    try:
        k[1, 1, s](d)
        ev = cuda.event()
        ev.record(s)
        t0 = time.monotonic()
        spun = _spins_while(s.synchronize if what == "stream" else ev.synchronize)
        assert time.monotonic() - t0 >= 0.2  # it did wait for the launch
        assert spun > 1000  # and let the other thread run meanwhile
        assert ev.query() is True
    finally:
        tdrv.set_launch_delay_ms(0)


@pytest.mark.parametrize("what", ["stream", "event"])
def test_pending_synchronize_reports_the_blocking_calls_error(cuda, tdrv, what):
    s = cuda.stream()
    k = cuda.jit("void(int32[:])")(_noop)
    d = cuda.device_array(4, dtype=cuda.int32)
    k[1, 1, s](d)
    s.synchronize()
    tdrv.set_launch_delay_ms(200)
    try:
        k[1, 1, s](d)
        ev = cuda.event()
        ev.record(s)
        name = "cuStreamSynchronize" if what == "stream" else "cuEventSynchronize"
        tdrv.fail(name, 1, 700)
        with pytest.raises(cuda.CudaAPIError) as e:
            (s.synchronize if what == "stream" else ev.synchronize)()
        assert str(e.value) == f"[700] Call to {name} results in CUDA_ERROR_ILLEGAL_ADDRESS"
    finally:
        tdrv.set_launch_delay_ms(0)
        s.synchronize()


# ------------------------------------------------------------------ module attributes --

@pytest.mark.skipif(sys.version_info < (3, 11), reason="specializing interpreter: 3.11+")
def test_module_attribute_loads_are_specialized(cuda):
    """CPython refuses to specialize an attribute load on a module whose dict has a
    __getattr__ (PEP 562); every nbcuda.X would then take the generic lookup."""
    assert "__getattr__" not in vars(cuda)
    for name in ("MemoryInfo", "BaseCUDAMemoryManager", "HostOnlyCUDAMemoryManager",
                 "GetIpcHandleMixin"):
        assert name in vars(cuda) and getattr(cuda, name).__module__ == "nbcuda"

    def load():
        return cuda.default_stream

    for _ in range(200):
        load()
    ops = [i.opname for i in dis.get_instructions(load, adaptive=True)]
    assert any(op.startswith("LOAD_ATTR") and op.endswith("MODULE") for op in ops), ops


# ------------------------------------------------------------------ MemoryInfo ---------

def test_memory_info_is_the_namedtuple(cuda):
    ctx = cuda.current_context()
    m = ctx.get_memory_info()
    cls = type(m)
    assert cls.__name__ == "MemoryInfo" and cls.__module__ == "nbcuda"
    assert isinstance(m, tuple) and len(m) == 2 and cls._fields == ("free", "total")
    assert type(ctx.get_memory_info()) is cls
    assert m == (m.free, m.total) and m[0] == m.free and m[1] == m.total
    assert isinstance(m.free, int) and 0 <= m.free <= m.total
    assert repr(m) == f"MemoryInfo(free={m.free}, total={m.total})"
    assert hash(m) == hash((m.free, m.total))
    assert m._replace(free=1) == (1, m.total) and type(m._replace(free=1)) is cls
    assert m._asdict() == {"free": m.free, "total": m.total}
    free, total = m
    assert (free, total) == tuple(m)


def test_memory_info_follows_the_driver(cuda, tdrv):
    # the last MemoryInfo is returned again while the driver's numbers are the same, and a
    # new one as soon as they change (the test driver charges allocations against free)
    ctx = cuda.current_context()
    calls = tdrv.calls("cuMemGetInfo")
    m = ctx.get_memory_info()
    assert ctx.get_memory_info() is m
    assert tdrv.calls("cuMemGetInfo") == calls + 2  # the driver is asked every time
    d = cuda.device_array(1 << 20, np.uint8)
    m2 = ctx.get_memory_info()
    assert m2 is not m and m2.total == m.total and m2.free <= m.free - (1 << 20)
    del d
    m3 = ctx.get_memory_info()
    assert m3 == m and type(m3) is type(m)


# ------------------------------------------------------------- copies to new host arrays ---

def test_copies_to_new_arrays_through_the_staging_buffer(cuda, tdrv):
    """copy_to_host() into an array it makes, and d[i], copy up to 1 MiB through the context's
    page-locked buffer (nbc_memcpy_dtoh_pageable): the same bytes at every size, layout and
    offset, one buffer (allocated once and grown, not per copy), and the direct path for a
    caller's own array and for a stream."""
    allocs = tdrv.calls("cuMemHostAlloc")
    for n in (1, 3, 1000, 8192, 70001, 131072, 131073, 400000):
        a = np.arange(n, dtype=np.float64) * 1.5 - 7
        d = cuda.to_device(a)
        np.testing.assert_array_equal(d.copy_to_host(), a)
        assert d[n - 1] == a[n - 1] and d[0] == a[0]
        np.testing.assert_array_equal(d[1::3].copy_to_host(), a[1::3])  # strided: packed
    f = np.asfortranarray(np.arange(600, dtype=np.int32).reshape(20, 30))
    np.testing.assert_array_equal(cuda.to_device(f).copy_to_host(), f)
    grown = tdrv.calls("cuMemHostAlloc") - allocs
    assert grown <= 5  # 64 KiB, then powers of two up to 1 MiB (if earlier tests have not)
    for _ in range(20):
        cuda.to_device(np.ones(1000)).copy_to_host()
    assert tdrv.calls("cuMemHostAlloc") - allocs == grown
    out = np.zeros(1000)
    cuda.to_device(np.full(1000, 2.0)).copy_to_host(out)  # the caller's array: direct
    assert (out == 2).all()
    s = cuda.stream()
    np.testing.assert_array_equal(cuda.to_device(np.arange(5.0)).copy_to_host(stream=s),
                                  np.arange(5.0))
    assert tdrv.calls("cuMemHostAlloc") - allocs == grown


def test_copies_into_numpy_arrays_staged_page_locked_ones_direct(run_py, tdrv):
    """copy_to_host(out) and a kernel's copy back into a host array go through the staging
    buffer when numpy allocated the array's memory (a view of such an array included), and
    directly into page-locked memory (pinned_array, mapped_array, cuda.pinned): observed in a
    fresh process by when the buffer is allocated."""
    p = run_py("""
        import ctypes, os
        import numpy as np
        import nbcuda as cuda
        lib = ctypes.CDLL(os.environ["NBCUDA_TESTDRIVER"])
        def allocs():
            return lib.tdrv_call_count(b"cuMemHostAlloc")
        want = np.arange(1000.0)
        d = cuda.to_device(want)
        pinned, mapped = cuda.pinned_array(1000), cuda.mapped_array(1000)
        registered = np.zeros(3000)
        before = allocs()
        d.copy_to_host(pinned)
        d.copy_to_host(mapped)
        with cuda.pinned(registered):
            d.copy_to_host(registered[:1000])
            d.copy_to_host(registered[1000:2000])  # a view into registered memory
        for a in (pinned, mapped, registered[:1000], registered[1000:2000]):
            assert (a == want).all()
        print(allocs() - before)
        out, big = np.zeros(1000), np.zeros(3000)
        d.copy_to_host(out)
        d.copy_to_host(big[1000:2000])
        assert (out == want).all() and (big[1000:2000] == want).all() and not big[:1000].any()
        print(allocs() - before)
        ns = {}
        exec("def k(a):\\n    pass\\n", ns)  # python -c has no source; exec's text is known
        k = cuda.jit("void(float64[::1])")(ns["k"])
        host = np.arange(5.0)
        k[1, 1](host)  # copied in and back (unchanged: the test driver runs no kernel)
        assert (host == np.arange(5.0)).all()
        print(allocs() - before)
    """)
    assert p.stdout.split() == ["0", "1", "1"]
