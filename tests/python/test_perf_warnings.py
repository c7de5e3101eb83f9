"""numba's performance and configuration warnings, with its config switches (config.c,
errors.c): a launch configured with a grid of fewer than 128 blocks warns
NumbaPerformanceWarning("Grid size N will likely result in GPU under-utilization due to low
occupancy.") at each k[grid, block] (a forall at its launch, where its grid is known), a numpy
array passed to a kernel (not wrapped in cuda.In/Out/InOut) warns that it is copied there and
back; config.CUDA_LOW_OCCUPANCY_WARNINGS, CUDA_WARN_ON_IMPLICIT_COPY and
DISABLE_PERFORMANCE_WARNINGS (from numba's NUMBA_* environment variables) switch them, set at
run time too. debug=True with opt=True warns NumbaInvalidConfigWarning. When numba's errors
module is loaded the classes are subclasses of numba's too, so code filtering numba's warnings
filters nbcuda's. config.CUDA_DEBUGINFO_DEFAULT and OPT are the defaults of debug and opt."""
import warnings

import numpy as np
import pytest

import nbcuda as cuda

SMALL = "Grid size 1 will likely result in GPU under-utilization due to low occupancy."
COPY = "Host array used in CUDA kernel will incur copy overhead to/from device."


def store(a):
    a[0] = 1


@pytest.fixture
def warn_on(monkeypatch):
    """The two performance warnings on, restored afterwards."""
    monkeypatch.setattr(cuda.config, "CUDA_LOW_OCCUPANCY_WARNINGS", 1)
    monkeypatch.setattr(cuda.config, "CUDA_WARN_ON_IMPLICIT_COPY", 1)
    monkeypatch.setattr(cuda.config, "DISABLE_PERFORMANCE_WARNINGS", 0)


def caught(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [(w_.category, str(w_.message)) for w_ in w]


def test_small_grids_and_host_arrays_warn(tdrv, warn_on):
    k = cuda.jit("void(float64[::1])")(store)
    d = cuda.to_device(np.zeros(1))
    perf = cuda.NumbaPerformanceWarning
    assert issubclass(perf, cuda.NumbaWarning) and issubclass(perf, Warning)
    assert caught(lambda: k[1, 1](d)) == [(perf, SMALL)]
    assert caught(lambda: k[1, 1](d)) == [(perf, SMALL)]  # each configuration, cached or not
    assert caught(lambda: k[(8, 4, 4), 32](d)) == []       # 128 blocks
    assert caught(lambda: k[128, 1](np.zeros(1))) == [(perf, COPY)]
    assert caught(lambda: k[128, 1](cuda.InOut(np.zeros(1)))) == []  # explicit: no warning
    assert caught(lambda: k.configure(2, 32)) == [(perf, SMALL.replace("1", "2", 1))]
    assert caught(lambda: k.forall(100, 32)(d)) == [(perf, SMALL.replace("1", "4", 1))]


@pytest.mark.parametrize("setting, value", [("CUDA_LOW_OCCUPANCY_WARNINGS", 0),
                                            ("DISABLE_PERFORMANCE_WARNINGS", 1)])
def test_config_switches_take_effect_at_once(tdrv, warn_on, monkeypatch, setting, value):
    k = cuda.jit("void(float64[::1])")(store)
    d = cuda.to_device(np.zeros(1))
    monkeypatch.setattr(cuda.config, setting, value)
    got = caught(lambda: k[1, 1](np.zeros(1)))
    assert (cuda.NumbaPerformanceWarning, SMALL) not in got
    assert ((cuda.NumbaPerformanceWarning, COPY) in got) == (setting != "DISABLE_PERFORMANCE_"
                                                            "WARNINGS")
    monkeypatch.delattr(cuda.config, "DISABLE_PERFORMANCE_WARNINGS")  # absent: not silenced
    monkeypatch.setattr(cuda.config, "CUDA_LOW_OCCUPANCY_WARNINGS", 1)
    assert caught(lambda: k[1, 1](d)) == [(cuda.NumbaPerformanceWarning, SMALL)]


def test_a_warning_made_an_error_fails_the_configuration(tdrv, warn_on):
    k = cuda.jit("void(float64[::1])")(store)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cuda.NumbaPerformanceWarning)
        with pytest.raises(cuda.NumbaPerformanceWarning, match="Grid size 1"):
            k[1, 1]


def test_environment_sets_the_defaults(run_py):
    out = run_py("""
        import nbcuda
        c = nbcuda.config
        print(c.CUDA_LOW_OCCUPANCY_WARNINGS, c.CUDA_WARN_ON_IMPLICIT_COPY,
              c.DISABLE_PERFORMANCE_WARNINGS)
        """, env={"NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS": "0", "NUMBA_CUDA_WARN_ON_IMPLICIT_COPY": "x",
                  "NUMBA_DISABLE_PERFORMANCE_WARNINGS": "1"})
    assert out.stdout.split() == ["0", "1", "1"]  # "x" is no integer: the default, as numba


def test_debug_with_opt_is_an_invalid_config_warning():
    with pytest.warns(cuda.NumbaInvalidConfigWarning, match="debug=True with opt=True"):
        cuda.compile_ptx(store, "void(float64[::1])", debug=True, opt=True, cc=(9, 0))
    # jit() warns when the decorator is made (opt defaults to True), as numba's
    for kwargs in ({"debug": True}, {"debug": True, "opt": True}):
        with pytest.warns(cuda.NumbaInvalidConfigWarning, match="not supported by CUDA"):
            cuda.jit(**kwargs)
    assert caught(lambda: cuda.jit(debug=True, opt=False)) == []
    assert caught(lambda: cuda.jit(opt=True)) == []
    # and debug with lineinfo, as numba's decorator
    with pytest.warns(cuda.NumbaInvalidConfigWarning,
                      match="debug and lineinfo are mutually exclusive"):
        cuda.jit(debug=True, lineinfo=True, opt=False)
    assert caught(lambda: cuda.jit(lineinfo=True)) == []


def test_config_gives_debug_and_opt_defaults(monkeypatch):
    # numba's CUDA_DEBUGINFO_DEFAULT (NUMBA_CUDA_DEBUGINFO) and OPT (NUMBA_OPT): the debug and
    # opt of a jit() or compile_ptx() that does not give them
    monkeypatch.setattr(cuda.config, "CUDA_DEBUGINFO_DEFAULT", 1)
    with pytest.warns(cuda.NumbaInvalidConfigWarning, match="not supported by CUDA"):
        cuda.jit()
    with pytest.warns(cuda.NumbaInvalidConfigWarning):
        ptx, _ = cuda.compile_ptx(store, "void(float64[::1])", cc=(9, 0))
    assert ".loc" in ptx  # debug information
    monkeypatch.setattr(cuda.config, "OPT", 0)
    assert caught(lambda: cuda.jit()) == []  # debug without opt
    assert caught(lambda: cuda.jit(debug=False)) == []
    monkeypatch.setattr(cuda.config, "CUDA_DEBUGINFO_DEFAULT", 0)
    monkeypatch.setattr(cuda.config, "OPT", 3)
    assert caught(lambda: cuda.jit()) == []
    ptx, _ = cuda.compile_ptx(store, "void(float64[::1])", cc=(9, 0))
    assert ".loc" not in ptx


def test_numbas_classes_catch_them(tdrv, warn_on):
    errors = pytest.importorskip("numba.core.errors")
    k = cuda.jit("void(float64[::1])")(store)
    with pytest.warns(errors.NumbaPerformanceWarning, match="Grid size 1"):
        k[1, 1]


def test_numbas_classes_join_when_numba_is_loaded_later(tdrv, warn_on, monkeypatch):
    # the class is looked up once per name while numba's errors modules stay as they are; a
    # module loaded (or gone) since makes it again, so filters on numba's class apply at once
    import sys
    import types
    for name in ("numba.core.errors", "numba.cuda.core.errors"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    k = cuda.jit("void(float64[::1])")(store)
    for _ in range(2):
        assert caught(lambda: k[1, 1]) == [(cuda.NumbaPerformanceWarning, SMALL)]
    fake = types.ModuleType("numba.core.errors")
    fake.NumbaPerformanceWarning = type("NumbaPerformanceWarning", (Warning,), {})
    monkeypatch.setitem(sys.modules, "numba.core.errors", fake)
    [(cls, text)] = caught(lambda: k[1, 1])
    assert issubclass(cls, fake.NumbaPerformanceWarning)
    assert issubclass(cls, cuda.NumbaPerformanceWarning) and text == SMALL
    del sys.modules["numba.core.errors"]
    assert caught(lambda: k[1, 1]) == [(cuda.NumbaPerformanceWarning, SMALL)]
