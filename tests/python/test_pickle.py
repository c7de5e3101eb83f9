"""Pickling kernels, device functions and configured launches, as numba's dispatchers pickle
(numba-cuda's test_serialize): the Python function and jit()'s options travel and the other
side jits the function again; a function defined inside another travels as its code, module
name and captured values (a device function it calls included). A pickle made here is loaded
and launched in another interpreter too, as multiprocessing would."""
import os
import pickle

import numpy as np
import pytest

import nbcuda as cuda

from conftest import USING_TESTDRIVER

HERE = os.path.dirname(os.path.abspath(__file__))


def _local_kernels():
    @cuda.jit(device=True)
    def inner(a):
        return a + 1

    @cuda.jit("void(intp[:])")
    def eager(arr):
        arr[0] = inner(arr[0])

    @cuda.jit
    def lazy(arr):
        arr[0] = inner(arr[0])

    return inner, eager, lazy


def module_level(arr, step=2):
    arr[0] += step


def _check_call(callee):
    arr = np.array([100])
    callee[1, 1](arr)
    again = pickle.loads(pickle.dumps(callee))
    assert again is not callee and type(again) is type(callee)
    assert again.py_func.__code__ is not callee.py_func.__code__
    assert again.py_func.__qualname__ == callee.py_func.__qualname__
    assert again.py_func.__globals__ is callee.py_func.__globals__  # the same module's
    again[1, 1](arr)
    twice = pickle.loads(pickle.dumps(again))
    twice[1, 1](arr)
    if not USING_TESTDRIVER:  # the test driver runs no kernel code
        assert arr[0] == 103
    launcher = pickle.loads(pickle.dumps(twice[5, 8]))
    assert launcher.griddim == (5, 1, 1) and launcher.blockdim == (8, 1, 1)
    return again


def test_local_kernels_round_trip():
    inner, eager, lazy = _local_kernels()
    again = _check_call(eager)
    assert [str(s) for s in again.signatures] == [str(s) for s in eager.signatures]
    _check_call(lazy)
    dev = pickle.loads(pickle.dumps(inner))
    assert type(dev) is type(inner) and dev.py_func.__name__ == "inner"


def test_module_level_functions_travel_by_reference():
    k = cuda.jit(module_level)
    data = pickle.dumps(k)
    assert b"module_level" in data and b"nbcuda-function" not in data
    again = pickle.loads(data)
    assert again.py_func is module_level  # the same function, found by name
    assert again.py_func.__defaults__ == (2,)
    options = cuda.jit(["void(float64[::1], float64)"], max_registers=32, fastmath=True,
                       lineinfo=True, shared_memory_carveout="MaxShared")(module_level)
    again = pickle.loads(pickle.dumps(options))
    assert [str(s) for s in again.signatures] == [str(s) for s in options.signatures]
    sig = options.signatures[0]
    assert again.inspect_asm(sig) == options.inspect_asm(sig)


def test_launches_with_callbacks_and_foralls_are_refused():
    k = cuda.jit(module_level)
    cfg = k[5, 8]
    cfg.pre_launch_callbacks.append(lambda kernel, config: None)
    with pytest.raises(pickle.PicklingError,
                       match="Cannot pickle configured launches with pre-launch callbacks"):
        pickle.dumps(cfg)
    with pytest.raises(TypeError, match="forall"):
        pickle.dumps(k.forall(10))
    s = cuda.stream()
    with pytest.raises(TypeError):  # a stream belongs to this process
        pickle.dumps(k[1, 1, s])
    assert pickle.loads(pickle.dumps(k[2, 4, 0, 16])).griddim == (2, 1, 1)


def test_another_interpreter_loads_and_launches(run_py, tmp_path):
    _, eager, lazy = _local_kernels()
    path = tmp_path / "kernels.pickle"
    path.write_bytes(pickle.dumps((eager, lazy)))
    p = run_py(f"""
        import pickle, sys
        import numpy as np
        sys.path.insert(0, {HERE!r})
        import nbcuda as cuda
        eager, lazy = pickle.loads(open({str(path)!r}, "rb").read())
        arr = np.array([100])
        eager[1, 1](arr)
        lazy[1, 1](arr)
        print(type(eager).__name__, eager.py_func.__qualname__, arr[0])
        """, env={"NUMBA_DISABLE_PERFORMANCE_WARNINGS": "1"})
    kind, name, value = p.stdout.split()
    assert (kind, name) == ("Kernel", "_local_kernels.<locals>.eager")
    if not USING_TESTDRIVER:
        assert value == "102"


def test_bad_states_are_refused():
    with pytest.raises(TypeError):
        cuda._rebuild_jit("not a config", module_level)
    k = cuda.jit(module_level)
    rebuild, (config, fstate) = k.__reduce__()
    assert fstate is module_level
    with pytest.raises(ValueError, match="not the options of a pickled kernel"):
        rebuild(config[:3], fstate)
    _, eager, _ = _local_kernels()
    _, (config, fstate) = eager.__reduce__()
    with pytest.raises(ValueError, match="not a code object"):
        rebuild(config, fstate[:1] + (b"\xe9\x00\x00\x00\x00",) + fstate[2:])
    with pytest.raises(ValueError, match="not the state of a pickled nbcuda function"):
        rebuild(config, ("other",) + fstate[1:])


def _local_ufuncs():
    @cuda.vectorize(["intp(intp)", cuda.float64(cuda.float64)], identity=1)
    def twice(x):
        return x * 2

    @cuda.guvectorize([(cuda.float64[:], cuda.float64[:])], "(n)->()")
    def total(a, out):
        s = 0.0
        for v in a:
            s += v
        out[0] = s

    return twice, total


def test_ufuncs_and_gufuncs_round_trip():
    """numba's test_pickling_vectorize: a GPU ufunc (and a gufunc) pickles as its function,
    signatures, layout and identity, and is compiled again where it is loaded."""
    twice, total = _local_ufuncs()
    u = pickle.loads(pickle.dumps(pickle.loads(pickle.dumps(twice))))
    assert type(u) is type(twice) and u is not twice and u.identity == 1
    assert list(u.functions) == list(twice.functions)
    g = pickle.loads(pickle.dumps(total))
    assert type(g) is type(total) and g.signature == "(n)->()"
    assert list(g.functions) == list(total.functions)
    ints, x = np.arange(10), np.arange(12.0).reshape(3, 4)
    got_u, got_g = u(ints), g(x)
    assert got_u.dtype == twice(ints).dtype and got_g.shape == (3,)
    if not USING_TESTDRIVER:
        np.testing.assert_equal(got_u, ints * 2)
        np.testing.assert_equal(got_g, x.sum(axis=1))


def test_only_nbcuda_decorators_rebuild():
    _, (name, args, kwargs, fstate) = _local_ufuncs()[0].__reduce__()
    assert name == "vectorize" and args == (["intp(intp)", "float64(float64)"],)
    with pytest.raises(ValueError, match="os.system is not a decorator of nbcuda"):
        cuda._rebuild_decorated("os.system", (), {}, fstate)
