"""pytest configuration for the nbcuda Python module.

CI runs this suite against the software test driver (tests/testdriver): the lead's script
exports NBCUDA_TESTDRIVER=<path of libnbcuda_testdriver.so>, and this file points
NBCUDA_DRIVER at the same library before nbcuda loads a driver (it does so lazily, on first
use, never at import). On the GPU machine (tests/gpu/run.sh) NBCUDA_TESTDRIVER is unset and
the real libcuda is used; tests that steer the test driver are skipped there, and tests
marked `gpu` run only there.

Fixtures:
  cuda       the nbcuda module
  tdrv       the test driver's control API through ctypes (skips on a real GPU)
  gpu        skips unless a real CUDA device is in use
  run_py     runs a Python snippet in a fresh interpreter (process-wide state such as a
             failed cuInit or NBCUDA_DRIVER=0 cannot be undone in this process)
"""
import ctypes
import os
import subprocess
import sys
import textwrap

import pytest

# numba's performance warnings (a grid of fewer than 128 blocks, a host array passed to a
# kernel) are off in the suite, as numba-cuda's CUDATestCase turns them off; the tests of the
# warnings themselves turn them on (test_perf_warnings.py)
os.environ.setdefault("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")
os.environ.setdefault("NUMBA_CUDA_WARN_ON_IMPLICIT_COPY", "0")

TESTDRIVER = os.environ.get("NBCUDA_TESTDRIVER", "")
if TESTDRIVER and not os.environ.get("NBCUDA_DRIVER"):
    os.environ["NBCUDA_DRIVER"] = TESTDRIVER
USING_TESTDRIVER = bool(TESTDRIVER) and os.environ.get("NBCUDA_DRIVER") == TESTDRIVER

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS_DIRS = [os.path.join(ROOT, "tests", "corpus"), os.path.join(ROOT, "..", "shared", "corpus")]


def corpus_dir():
    for d in CORPUS_DIRS:
        if os.path.isdir(d):
            return os.path.abspath(d)
    return None


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a real CUDA device (tests/gpu/run.sh)")


def real_gpu_present():
    if USING_TESTDRIVER:
        return False
    import nbcuda
    return nbcuda.is_available()


def pytest_collection_modifyitems(config, items):
    if real_gpu_present():
        return
    skip = pytest.mark.skip(reason="needs a real CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def cuda():
    import nbcuda
    return nbcuda


class LaunchInfo(ctypes.Structure):
    _fields_ = [
        ("function", ctypes.c_char * 1024),
        ("grid", ctypes.c_uint * 3),
        ("block", ctypes.c_uint * 3),
        ("shared_bytes", ctypes.c_uint),
        ("stream", ctypes.c_size_t),
        ("per_thread", ctypes.c_int),
        ("device", ctypes.c_int),
        ("nparams", ctypes.c_int),
        ("param_size", ctypes.c_size_t * 128),
        ("param_offset", ctypes.c_size_t * 128),
        ("param_total", ctypes.c_size_t),
        ("param_bytes", ctypes.c_ubyte * 4096),
        ("cooperative", ctypes.c_int),
    ]


class TestDriver:
    """ctypes view of tests/testdriver/testdriver.h."""

    def __init__(self, path):
        self.lib = lib = ctypes.CDLL(path)
        for name, res, args in [
            ("tdrv_call_count", ctypes.c_int, [ctypes.c_char_p]),
            ("tdrv_fail", None, [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]),
            ("tdrv_context_stack_depth", ctypes.c_int, []),
            ("tdrv_live_allocations", ctypes.c_int, []),
            ("tdrv_live_streams", ctypes.c_int, []),
            ("tdrv_live_events", ctypes.c_int, []),
            ("tdrv_live_modules", ctypes.c_int, []),
            ("tdrv_launch_count", ctypes.c_int, []),
            ("tdrv_last_launch", ctypes.c_int, [ctypes.POINTER(LaunchInfo)]),
            ("tdrv_set_launch_delay_ms", None, [ctypes.c_int]),
            ("tdrv_profiler_state", ctypes.c_int, []),
            ("tdrv_host_callbacks_run", ctypes.c_int, []),
            ("tdrv_primary_reset_count", ctypes.c_int, [ctypes.c_int]),
            ("tdrv_primary_refcount", ctypes.c_int, [ctypes.c_int]),
        ]:
            fn = getattr(lib, name)
            fn.restype = res
            fn.argtypes = args

    def calls(self, name):
        return self.lib.tdrv_call_count(name.encode())

    def fail(self, name, nth, curesult):
        self.lib.tdrv_fail(name.encode(), nth, curesult)

    def stack_depth(self):
        return self.lib.tdrv_context_stack_depth()

    def live_allocations_released(self):
        """live_allocations() once every retained primary context freed the blocks nbcuda keeps
        for reuse (src/host/reuse.c): get_memory_info() frees them, its answer counting them
        free. A test that checks an array's memory went back counts with this."""
        import nbcuda
        for i in range(len(nbcuda.gpus)):
            if self.lib.tdrv_primary_refcount(i) > 0:
                nbcuda.gpus[i].get_primary_context().get_memory_info()
        return self.lib.tdrv_live_allocations()

    def last_launch(self):
        info = LaunchInfo()
        assert self.lib.tdrv_last_launch(ctypes.byref(info)) == 1, "no launch recorded"
        return info

    def __getattr__(self, name):
        return getattr(self.lib, "tdrv_" + name)


@pytest.fixture(scope="session")
def tdrv():
    if not USING_TESTDRIVER:
        pytest.skip("steers the software test driver (NBCUDA_TESTDRIVER)")
    return TestDriver(TESTDRIVER)


@pytest.fixture(scope="session")
def gpu():
    if not real_gpu_present():
        pytest.skip("needs a real CUDA device")


@pytest.fixture
def run_py():
    def run(code, env=None, check=True):
        e = dict(os.environ)
        e.update(env or {})
        p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=e,
                           capture_output=True, text=True, timeout=120)
        if check and p.returncode != 0:
            raise AssertionError(f"subprocess failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
        return p
    return run


def only(texts):
    """The one value of an inspect_*() dict: numba-cuda 0.30 answers inspect_asm() and the
    others with a dict signature -> text, a kernel jitted for one signature included."""
    (text,) = texts.values()
    return text


def sig_texts(kernel):
    """A kernel's signatures (numba's: each overload's tuple of argument types) as signature
    strings, "void(float32[::1], int64)"."""
    return key_texts(kernel.signatures)


def key_texts(keys):
    """Tuples of argument types (numba's keys of `overloads`, inspect_*() and the resource
    dicts) as signature strings, "void(float32[::1], int64)"."""
    import nbcuda
    return [nbcuda.void(*argtypes).signature_text for argtypes in keys]


def load_kernel_module(tmp_path, name, source, cuda_module):
    """source written to tmp_path/<name>.py (the compilers read a kernel's source from its
    file) and imported with `cuda` bound to cuda_module (nbcuda or numba.cuda). For nbcuda on
    a machine without numba, the source's `from numba import` lines (numba's type objects,
    which nbcuda accepts when numba is there) take the same names from nbcuda."""
    import importlib.util
    if cuda_module.__name__ == "nbcuda" and importlib.util.find_spec("numba") is None:
        source = source.replace("from numba import ", "from nbcuda import ")
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"{name}_{id(cuda_module)}", path)
    mod = importlib.util.module_from_spec(spec)
    mod.cuda = cuda_module
    spec.loader.exec_module(mod)
    return mod


def assert_same_as_numba_cuda(run_all, source, tmp_path, name, mine):
    """run_all(numba.cuda, the kernels of source loaded for it) gives the same arrays as mine
    (nbcuda's results), key by key; skipped without numba-cuda."""
    import numpy
    import pytest
    ncuda = pytest.importorskip("numba.cuda")
    theirs = run_all(ncuda, load_kernel_module(tmp_path, name, source, ncuda))
    for key in mine:
        numpy.testing.assert_array_equal(mine[key], theirs[key], err_msg=key)


def numba_side(test_module, expr, path, timeout=600):
    """Evaluates expr in a fresh interpreter where `t` is tests/python's test_module and `cuda`
    is numba-cuda's, saves the dict of arrays it gives to path (.npz) and returns it loaded.
    numba-cuda runs apart from the pytest process: its finalizers must not outlive the device
    resets other tests make."""
    code = f"""
import numpy as np
for old, new in (("row_stack", "vstack"), ("in1d", "isin"), ("trapz", "trapezoid")):
    if not hasattr(np, old) and hasattr(np, new):
        setattr(np, old, getattr(np, new))
import pathlib, sys
sys.path.insert(0, {HERE!r})
import {test_module} as t
from numba import cuda
np.savez({str(path)!r}, **({expr}))
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=timeout)
    assert p.returncode == 0, f"numba-cuda side failed:\n{p.stdout}\n{p.stderr[-3000:]}"
    import numpy
    return numpy.load(path)


def assert_same_bits(mine, theirs, prefix=""):
    """Each array of mine equals theirs[prefix + key] bit for bit (floats compared as integers
    of their width, so signed zeros count), except that any NaN equals any NaN: which NaN an
    operation returns (sign, payload) is the hardware's and libdevice's choice, not a result.
    Complex numbers are compared part by part."""
    import numpy
    for key, a in mine.items():
        b = theirs[prefix + key]
        if a.dtype.kind in "fc":
            if a.dtype.kind == "c":
                part = numpy.float32 if a.dtype.itemsize == 8 else numpy.float64
                a, b = a.view(part), b.view(part)
            width = {2: "u2", 4: "u4", 8: "u8"}[a.dtype.itemsize]
            differ = (a.view(width) != b.view(width)) & ~(numpy.isnan(a) & numpy.isnan(b))
        else:
            differ = a != b
        bad = differ.nonzero()
        first = [tuple(int(x[i]) for x in bad) for i in range(min(5, len(bad[0])))]
        assert len(bad[0]) == 0, (f"{prefix}{key}: {len(bad[0])} differences, first at {first} "
                                  "(complex arrays: the last index counts parts)")


@pytest.fixture
def clean_stack(cuda):
    """Starts and ends the test with this thread's context stack empty."""
    cuda.close()
    yield
    cuda.close()


def device_array_cases(cuda):
    """Device arrays of each layout and kind that travel between processes (pickle, Dask
    serializers): {name: (device array, the host array it must equal)}."""
    import numpy as np

    h2 = np.arange(24, dtype=np.float32).reshape(4, 6)
    rec = np.zeros(3, dtype=[("a", np.int32), ("b", np.float64)])
    rec["a"] = [1, 2, 3]
    rec["b"] = [0.5, 1.5, 2.5]
    return {
        "1d": (cuda.to_device(np.arange(10.0)), np.arange(10.0)),
        "2d C": (cuda.to_device(h2), h2),
        "2d F": (cuda.to_device(np.asfortranarray(h2)), np.asfortranarray(h2)),
        "strided": (cuda.to_device(h2)[:, 1::2], h2[:, 1::2]),
        "empty": (cuda.to_device(np.zeros((0, 3), np.int16)), np.zeros((0, 3), np.int16)),
        "0-d": (cuda.to_device(np.array(7, np.int64)), np.array(7, np.int64)),
        "record": (cuda.to_device(rec), rec),
        "bool": (cuda.to_device(np.array([True, False, True])), np.array([True, False, True])),
    }
