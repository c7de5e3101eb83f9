"""NVTX ranges and marks from Python (nbcuda.profiling.range / mark), seen by a tool library as a
profiler sees them: each case runs in a fresh interpreter with NVTX_INJECTION64_PATH naming
tests/c/nvtx_tool.c's library (built beside the test driver), which logs every call to the
file NBCUDA_NVTX_TOOL_LOG names. numba's profiling() context manager stays callable."""
import glob
import inspect
import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def tool_library():
    candidates = []
    driver = os.environ.get("NBCUDA_TESTDRIVER")
    if driver:
        candidates.append(os.path.join(os.path.dirname(driver), "libnbcuda_nvtx_tool.so"))
    candidates += glob.glob(os.path.join(HERE, "..", "..", "build", "*", "tests",
                                         "libnbcuda_nvtx_tool.so"))
    for path in candidates:
        if os.path.exists(path):
            return os.path.abspath(path)
    pytest.skip("the NVTX tool library of the C build (tests/c/nvtx_tool.c) is not built")


@pytest.fixture
def traced(run_py, tmp_path):
    """Runs code under the tool; returns (the tool's log lines, the process)."""
    tool = tool_library()

    def run(code, check=True):
        log = tmp_path / "nvtx.log"
        if log.exists():
            log.unlink()
        p = run_py(code, env={"NVTX_INJECTION64_PATH": tool,
                              "NBCUDA_NVTX_TOOL_LOG": str(log)}, check=check)
        lines = log.read_text().splitlines() if log.exists() else []
        return lines, p
    return run


def test_range_as_context_manager_and_mark(traced):
    lines, p = traced("""
        import nbcuda as cuda
        print(cuda.profiling.attached)
        with cuda.profiling.range("outer"):
            with cuda.profiling.range("inner", color=0xFF00FF00) as r:
                cuda.profiling.mark("here")
        print(cuda.profiling.attached, repr(r))
    """)
    assert p.stdout.split("\n")[:2] == [
        "False", "True <nbcuda.profiling.range 'inner' color=0xFF00FF00>"], p.stdout
    assert lines == ["push outer", "push inner #FF00FF00", "mark here", "pop", "pop"]


def test_range_closes_when_the_body_raises(traced):
    lines, p = traced("""
        import nbcuda as cuda
        try:
            with cuda.profiling.range("failing"):
                raise KeyError("x")
        except KeyError:
            print("raised")
    """)
    assert p.stdout.strip() == "raised"
    assert lines == ["push failing", "pop"]


def test_range_as_decorator(traced):
    lines, p = traced("""
        import inspect
        import nbcuda as cuda

        @cuda.profiling.range("solve")
        def solve(a, b=2):
            "Solves."
            return a * b

        class Model:
            @cuda.profiling.range("step")
            def step(self, x):
                return x + 1

            @cuda.profiling.range("fail")
            def fail(self):
                raise ValueError("no")

        m = Model()
        print(solve(3), solve(3, b=5), m.step(1), solve.__name__, solve.__doc__,
              str(inspect.signature(solve)), solve.__wrapped__.__name__)
        try:
            m.fail()
        except ValueError:
            print("raised")
    """)
    assert p.stdout.split("\n")[:2] == ["6 15 2 solve Solves. (a, b=2) solve", "raised"]
    assert lines == ["push solve", "pop", "push solve", "pop", "push step", "pop",
                     "push fail", "pop"]


def test_ranges_from_threads_pair_per_thread(traced):
    lines, p = traced("""
        import threading
        import nbcuda as cuda
        def work(i):
            with cuda.profiling.range(f"t{i}"):
                pass
        ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in ts: t.start()
        for t in ts: t.join()
        r = cuda.profiling.range("main")
        r.__enter__()
        def close_elsewhere():
            try:
                r.__exit__(None, None, None)
            except ValueError as e:
                print(e)
        t = threading.Thread(target=close_elsewhere); t.start(); t.join()
        r.__exit__(None, None, None)
    """)
    assert "nbc_nvtx_range_pop: no NVTX range is open on this thread" in p.stdout
    assert sorted(lines) == sorted([f"push t{i}" for i in range(4)] + ["pop"] * 5 +
                                   ["push main"])


def test_without_a_tool_ranges_still_pair(cuda):
    assert cuda.profiling.attached is False
    with cuda.profiling.range("quiet"):
        cuda.profiling.mark("m")
    with pytest.raises(ValueError, match="no NVTX range is open on this thread"):
        cuda.profiling.range("unopened").__exit__(None, None, None)


@pytest.mark.parametrize("args, kwargs, error, match", [
    ((3,), {}, TypeError, "the name must be a str, not int"),
    (("a\0b",), {}, ValueError, "NUL character"),
    (("a",), {"color": "red"}, TypeError, "color must be an int 0xAARRGGBB or None, not str"),
    (("a",), {"color": True}, TypeError, "not bool"),
    (("a",), {"color": -1}, ValueError, "from 0 to 0xFFFFFFFF"),
    (("a",), {"color": 1 << 32}, ValueError, "from 0 to 0xFFFFFFFF"),
    (("a",), {"colour": 1}, TypeError, "colour"),
])
def test_bad_arguments(cuda, args, kwargs, error, match):
    with pytest.raises(error, match=match):
        cuda.profiling.range(*args, **kwargs)


def test_bad_decoration_and_marks(cuda):
    with pytest.raises(TypeError, match="decorates a callable, not int"):
        cuda.profiling.range("x")(3)
    with pytest.raises(TypeError, match="the name must be a str"):
        cuda.profiling.mark(b"bytes")


def test_signatures_and_numba_profiling(cuda, tdrv):
    assert str(inspect.signature(cuda.profiling.range)) == "(name, color=None)"
    assert str(inspect.signature(cuda.profiling.mark)) == "(name, /)"
    assert "NVTX" in cuda.profiling.range.__doc__
    assert repr(cuda.profiling) == "<nbcuda.profiling>"
    before = (tdrv.calls("cuProfilerStart"), tdrv.calls("cuProfilerStop"))
    with cuda.profiling():
        pass
    assert (tdrv.calls("cuProfilerStart"), tdrv.calls("cuProfilerStop")) == (
        before[0] + 1, before[1] + 1)
    with pytest.raises(TypeError, match="takes no arguments"):
        cuda.profiling(1)
