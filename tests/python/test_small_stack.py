"""Compiling from a Python thread with a small stack (threading.stack_size(256 * 1024)): the
deepest kernels the compiler accepts compile, and deeper ones fail with a clear error. The
compiler runs on a large stack of its own (src/compiler/stack.c), whatever the caller's;
tests/c/test_small_stack.c covers each limit from C."""
import threading

import pytest

import nbcuda as cuda


def on_small_thread(fn):
    """fn() on a thread with a 256 KB stack: its result, or the exception it raised."""
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as e:  # handed back to the test's thread
            out["error"] = e

    old = threading.stack_size(256 * 1024)
    try:
        t = threading.Thread(target=run)
        t.start()
        t.join()
    finally:
        threading.stack_size(old)
    if "error" in out:
        raise out["error"]
    return out["value"]


def made(source, name="f"):
    """The function `name` that exec() of source defines (nbcuda keeps exec'd source)."""
    ns = {"cuda": cuda}
    exec(compile(source, "<deep>", "exec"), ns)
    return ns[name]


def deep_source(unary, tuples, helpers):
    """A device function whose expression nests `unary` deep and whose tuples nest `tuples`
    deep, calling `helpers` device functions one inside the other."""
    lines = []
    for i in range(helpers):
        lines += [f"def g{i}(a):", f"    return {'- ' * unary}g{i + 1}(a)"]
    lines += [f"def g{helpers}(a):", "    return a", "def f(a):", "    x0 = a"]
    lines += [f"    x{i} = (x{i - 1},)" for i in range(1, tuples + 1)]
    lines += [f"    y = x{tuples} == x{tuples}", "    return g0(a)"]
    return "\n".join(lines) + "\n"


def test_deepest_accepted_kernel_compiles_on_a_small_stack():
    fn = made(deep_source(unary=900, tuples=32, helpers=40))
    ptx, resty = on_small_thread(lambda: cuda.compile_ptx(fn, "int32(int32)", device=True))
    assert ".func" in ptx
    assert str(resty) == "int32"


def test_too_deep_fails_cleanly_on_a_small_stack():
    fn = made(deep_source(unary=1, tuples=40, helpers=1))
    with pytest.raises(Exception) as info:
        on_small_thread(lambda: cuda.compile_ptx(fn, "int32(int32)", device=True))
    assert "types nested more than 32 deep" in str(info.value)
    # 1,500 links, about what CPython itself parses, within nbcuda's limit (10,000): the
    # compile on its own large stack takes it from a 256 KB thread
    fn = made("def f(a):\n    return " + "- " * 1500 + "a\n")
    ptx, _ = on_small_thread(lambda: cuda.compile_ptx(fn, "int32(int32)", device=True))
    assert ".func" in ptx
