"""Contexts, devices, device scopes (nesting, threads), require_context, errors."""
import re
import threading

import pytest

from conftest import USING_TESTDRIVER


def test_is_available_and_detect(cuda, capsys):
    assert cuda.is_available() is True
    assert cuda.detect() is True
    out = capsys.readouterr().out
    assert re.search(r"Found \d+ CUDA devices", out)
    assert "[SUPPORTED]" in out and "Summary:" in out and "UUID: GPU-" in out


def test_gpus_list(cuda):
    n = len(cuda.gpus)
    assert n >= 1
    assert [g.id for g in cuda.gpus] == list(range(n))
    assert str(cuda.gpus[0]) == "<Managed Device 0>"
    assert cuda.gpus[-1].id == n - 1
    assert str(cuda.gpus) == ", ".join(f"<Managed Device {i}>" for i in range(n))
    assert cuda.list_devices() is cuda.gpus
    with pytest.raises(IndexError):
        cuda.gpus[n]
    assert cuda.gpus[0:1][0].id == 0


def test_device_attributes(cuda):
    d = cuda.gpus[0]
    assert isinstance(d.name, str) and d.name
    assert re.match(r"^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
                    d.uuid)
    cc = d.compute_capability
    assert isinstance(cc, tuple) and len(cc) == 2
    assert d.supports_float16 == (cc >= (5, 3))
    assert d.MAX_THREADS_PER_BLOCK >= 1
    assert isinstance(d.MULTIPROCESSOR_COUNT, int)
    with pytest.raises(AttributeError):
        d.NOT_AN_ATTRIBUTE
    with pytest.raises(AttributeError):
        d.not_an_attribute


def test_scope_pushes_and_pops_once(cuda, clean_stack):
    assert cuda.gpus.current is None
    with cuda.gpus[0] as x:
        assert x is None
        assert cuda.gpus.current.id == 0
    assert cuda.gpus.current is None


def test_nested_scopes_restore(cuda, clean_stack):
    if len(cuda.gpus) < 2:
        pytest.skip("needs two devices")
    with cuda.gpus[0]:
        with cuda.gpus[1]:
            assert cuda.gpus.current.id == 1
            assert cuda.current_context().device.id == 1
        assert cuda.gpus.current.id == 0
    assert cuda.gpus.current is None


def test_scope_does_not_leak_or_lose_previous(cuda, clean_stack):
    ctx0 = cuda.current_context()  # lazily pushes device 0
    with cuda.gpus[0]:
        pass
    assert cuda.current_context() is ctx0
    assert cuda.gpus.current.id == 0


def test_scopes_in_threads(cuda, clean_stack):
    if len(cuda.gpus) < 2:
        pytest.skip("needs two devices")
    seen, errors = {}, []

    def work(i):
        try:
            assert cuda.gpus.current is None  # each thread starts with an empty stack
            with cuda.gpus[i % 2]:
                seen[i] = cuda.get_current_device().id
            cuda.close()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert errors == []
    assert seen == {i: i % 2 for i in range(8)}


def test_current_context_and_memory_info(cuda, clean_stack):
    ctx = cuda.current_context()
    assert ctx is cuda.current_context()
    assert ctx.device.id == 0
    assert re.match(r"<CUDA context 0x[0-9a-f]+ of device 0>", repr(ctx))
    mem = ctx.get_memory_info()
    assert mem.free == mem[0] and mem.total == mem[1] and 0 <= mem.free <= mem.total
    assert type(mem).__name__ == "MemoryInfo"


def test_select_device_and_get_current_device(cuda, clean_stack):
    dev = cuda.select_device(0)
    assert dev.id == 0 and cuda.get_current_device() is dev
    assert repr(dev) == f"<CUDA device 0 '{dev.name}'>"
    with pytest.raises(IndexError):
        cuda.select_device(len(cuda.gpus) + 5)


def test_context_push_pop(cuda, clean_stack):
    ctx = cuda.current_context()
    ctx.pop()
    assert cuda.gpus.current is None
    ctx.push()
    assert cuda.gpus.current.id == 0
    ctx.synchronize()
    cuda.synchronize()


def test_require_context_forbids_switch(cuda, clean_stack):
    if len(cuda.gpus) < 2:
        pytest.skip("needs two devices")

    @cuda.require_context
    def switch():
        with cuda.gpus[1]:
            pass

    with pytest.raises(RuntimeError, match="Cannot switch CUDA-context."):
        switch()
    assert switch.__name__ == "switch"

    @cuda.require_context
    def same():
        with cuda.gpus[0]:
            return cuda.gpus.current.id

    assert same() == 0


def test_require_context_returns_and_raises(cuda, clean_stack):
    @cuda.require_context
    def f(a, b=2):
        return a + b

    assert f(1, b=3) == 4

    @cuda.require_context
    def g():
        raise KeyError("x")

    with pytest.raises(KeyError):
        g()


def test_select_device_in_threads(cuda, clean_stack):
    errors = []

    def work():
        try:
            cuda.select_device(0)
            s = cuda.stream()
            cuda.synchronize()
            s.synchronize()
            cuda.close()
        except Exception as e:  # pragma: no cover
            errors.append(e)

    for _ in range(2):
        ts = [threading.Thread(target=work) for _ in range(10)]
        [t.start() for t in ts]
        [t.join() for t in ts]
    assert errors == []


def test_close_resets_devices_on_main_thread(cuda, tdrv, clean_stack):
    cuda.current_context()
    before = tdrv.primary_reset_count(0)
    cuda.close()
    assert tdrv.primary_reset_count(0) == before + 1
    assert cuda.gpus.current is None


def test_device_reset(cuda, tdrv, clean_stack):
    before = tdrv.primary_reset_count(0)
    cuda.gpus[0].reset()
    assert tdrv.primary_reset_count(0) == before + 1


def test_release_primary_context(cuda, tdrv, clean_stack):
    """numba's Device.release_primary_context: nbcuda's retain is given back (no reset), what
    nbcuda made in the context goes with it, and the next use retains the context again."""
    import numpy as np
    dev = cuda.gpus[0]
    resets = tdrv.primary_reset_count(0)
    arr = cuda.to_device(np.arange(4, dtype=np.float32))
    assert tdrv.primary_refcount(0) == 1
    dev.release_primary_context()
    assert tdrv.primary_refcount(0) == 0
    assert tdrv.primary_reset_count(0) == resets  # released, not reset
    dev.release_primary_context()  # not held: nothing to do
    with pytest.raises(cuda.CudaAPIError, match="reset since"):
        arr.copy_to_host()
    again = cuda.to_device(np.arange(3, dtype=np.float32))
    assert tdrv.primary_refcount(0) == 1
    np.testing.assert_array_equal(again.copy_to_host(), np.arange(3, dtype=np.float32))


def test_release_primary_context_driver_failure(cuda, tdrv, clean_stack):
    """A failing cuDevicePrimaryCtxRelease is the driver's error, named; nbcuda counts the
    context as given up either way, so the next use retains it again."""
    cuda.current_context()
    tdrv.fail("cuDevicePrimaryCtxRelease", 1, 201)
    with pytest.raises(cuda.CudaAPIError, match="cuDevicePrimaryCtxRelease") as info:
        cuda.gpus[0].release_primary_context()
    assert info.value.code == 201
    cuda.current_context()  # retained and usable again


def test_cuda_api_error_names_the_call(cuda, tdrv, clean_stack):
    cuda.current_context()
    tdrv.fail("cuStreamCreate", 1, 201)
    with pytest.raises(cuda.CudaAPIError) as info:
        cuda.stream()
    assert info.value.code == 201
    assert str(info.value) == "[201] Call to cuStreamCreate results in CUDA_ERROR_INVALID_CONTEXT"


def test_no_driver_is_cuda_support_error(run_py):
    p = run_py("""
        import nbcuda as cuda
        assert cuda.is_available() is False
        try:
            len(cuda.gpus)
        except cuda.CudaSupportError as e:
            assert isinstance(e, ImportError)
            print(e.msg)
        else:
            raise SystemExit("no error")
        print(cuda.cuda_error())
    """, env={"NBCUDA_DRIVER": "0"})
    lines = p.stdout.strip().splitlines()
    assert lines[0].startswith("Error at driver init")
    assert "NBCUDA_DRIVER=0" in lines[0] or "disabled" in lines[0].lower()
    assert lines[1] != "None"


@pytest.mark.skipif(not USING_TESTDRIVER, reason="needs the test driver's modes")
@pytest.mark.parametrize("mode,text", [("stub", "STUB"), ("nodevice", "NO_DEVICE"),
                                       ("initfail", "CUDA_ERROR_UNKNOWN")])
def test_driver_init_failures(run_py, mode, text):
    p = run_py("""
        import nbcuda as cuda
        assert cuda.is_available() is False
        try:
            cuda.current_context()
        except cuda.CudaSupportError as e:
            print(e.msg)
    """, env={"NBCUDA_TESTDRIVER_MODE": mode})
    assert "Error at driver init" in p.stdout
    assert text in p.stdout.upper().replace(" ", "_") or text in p.stdout


def test_fork_after_init_is_cuda_driver_error(cuda, run_py):
    p = run_py("""
        import os, nbcuda as cuda
        cuda.current_context()
        pid = os.fork()
        if pid == 0:
            try:
                cuda.stream()
                os._exit(3)
            except cuda.CudaDriverError as e:
                os._exit(0 if "CUDA initialized before forking" in str(e) else 4)
            except BaseException:
                os._exit(5)
        _, status = os.waitpid(pid, 0)
        print(os.WEXITSTATUS(status))
    """)
    assert p.stdout.strip() == "0"


def test_context_creates_streams_and_events_in_itself(cuda, clean_stack):
    # numba's Context.create_stream/create_event/get_*_stream: made in that context, whichever
    # context is current, and the current one is left as it was
    ctx = cuda.current_context()
    s, e = ctx.create_stream(), ctx.create_event(timing=False)
    assert s.context is ctx and "no timing" in repr(e)
    assert "Default CUDA stream" in repr(ctx.get_default_stream())
    assert "Legacy default" in repr(ctx.get_legacy_default_stream())
    assert "Per-thread default" in repr(ctx.get_per_thread_default_stream())
    assert int(ctx.create_external_stream(int(s))) == int(s)
    e.record(s)
    s.synchronize()
    assert e.query()
    with pytest.raises(TypeError):
        ctx.create_event(timing=True, bogus=1)
    if len(cuda.gpus) < 2:
        return
    with cuda.gpus[1]:
        ctx1 = cuda.current_context()
    assert cuda.current_context() is ctx
    s1 = ctx1.create_stream()
    assert s1.context is ctx1 and cuda.current_context() is ctx
    ev1 = ctx1.create_event()
    ev1.record(s1)
    s1.synchronize()
    assert ev1.query() and cuda.current_context() is ctx
