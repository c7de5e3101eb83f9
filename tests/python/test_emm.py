"""External Memory Management plugins (numba's set_memory_manager): device memory of nbcuda's
arrays from the plugin's memalloc, which returns MemoryPointer(context, ptr, size,
finalizer=...). The plugin below allocates with the driver nbcuda uses (the test driver on CI,
libcuda on the GPU machine) through ctypes, and logs what it does. Each test runs in a fresh
interpreter: a plugin, once set, serves the process."""
import importlib.util

import pytest

PLUGIN = r'''
import ctypes, os
import numpy as np
import nbcuda as cuda

drv = ctypes.CDLL(os.environ.get("NBCUDA_DRIVER") or "libcuda.so.1")
drv.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
drv.cuMemFree_v2.argtypes = [ctypes.c_uint64]
log = []


class Logging(cuda.GetIpcHandleMixin, cuda.HostOnlyCUDAMemoryManager):
    def initialize(self):
        log.append("initialize")

    def memalloc(self, size):
        p = ctypes.c_uint64()
        assert drv.cuMemAlloc_v2(ctypes.byref(p), size) == 0
        log.append(f"alloc {size}")
        ptr = p.value

        def finalize():
            log.append(f"free {size}")
            drv.cuMemFree_v2(ptr)

        return cuda.MemoryPointer(self.context, ptr, size, finalizer=finalize)

    def get_memory_info(self):
        return cuda.MemoryInfo(free=123, total=456)

    def reset(self):
        log.append("reset")
        super().reset()

    @property
    def interface_version(self):
        return 1
'''


def run(run_py, body, env=None):
    return run_py(PLUGIN + body, env=env).stdout.split("\n")[:-1]


def test_arrays_and_memalloc_come_from_the_plugin(run_py):
    out = run(run_py, r'''
cuda.set_memory_manager(Logging)
d = cuda.to_device(np.arange(10, dtype=np.float32))
print(log)
print(d.copy_to_host().tolist())
e = cuda.device_array((3, 4), np.int64)
print(log[-1], e.shape)
print(cuda.current_context().get_memory_info())
m = cuda.current_context().memalloc(64)
print(type(m).__name__, m.size, log[-1])
v = d[2:5]
del d
print(log[-1])
del v            # the view held the memory
print(log[-1])
m.free()
print(log[-1])
try:
    m.free()     # numba's words; nothing more is freed
except RuntimeError as err:
    print(err, log.count("free 64"))
empty = cuda.device_array(0, np.float32)   # numba: no memory, no memalloc
print(log[-1], empty.size)
''')
    assert out == [
        "['initialize', 'alloc 40']",
        "[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]",
        "alloc 96 (3, 4)",
        "MemoryInfo(free=123, total=456)",
        "MemoryPointer 64 alloc 64",
        "alloc 64",
        "free 40",
        "free 64",
        "Freeing dead memory 1",
        "free 64 0",
    ]


def test_kernels_run_on_plugin_memory(run_py, tmp_path):
    # numba-cuda's kernels import numba's cuda module; nbcuda's stands in where numba is absent
    header = ("from numba import cuda" if importlib.util.find_spec("numba")
              else "import nbcuda as cuda")
    (tmp_path / "emm_saxpy.py").write_text(
        header + "\n\n\ndef saxpy(r, a, x, y):\n    i = cuda.grid(1)\n"
        "    if i < r.size:\n        r[i] = a * x[i] + y[i]\n")
    out = run(run_py, r'''
from emm_saxpy import saxpy
cuda.set_memory_manager(Logging)
k = cuda.jit("void(float32[::1], float32, float32[::1], float32[::1])")(saxpy)
x = np.arange(1000, dtype=np.float32)
d_x, d_y, d_r = cuda.to_device(x), cuda.to_device(2 * x), cuda.device_array(1000, np.float32)
k[8, 128](d_r, 3.0, d_x, d_y)
got = d_r.copy_to_host()
real = not os.environ.get("NBCUDA_DRIVER")
allocs = sum(line.startswith("alloc") for line in log)
print(bool(np.array_equal(got, 5 * x)) if real else "not run", allocs)
''', env={"PYTHONPATH": str(tmp_path)})
    assert out[0].split()[-1] == "3"
    assert out[0].split()[0] in ("True", "not")


def test_memory_manager_is_the_plugin_instance(run_py):
    out = run(run_py, r'''
ctx = cuda.current_context()
print(type(ctx.memory_manager).__name__)  # nbcuda's own until a plugin is set
cuda.set_memory_manager(Logging)
m = ctx.memory_manager
print(type(m).__name__, m is ctx.memory_manager, m.context is ctx, log)
d = cuda.device_array(4, np.float32)  # the same instance serves the allocation
print(m is ctx.memory_manager, log)
''')
    assert out == ["NumbaCUDAMemoryManager", "Logging True True ['initialize']",
                   "True ['initialize', 'alloc 16']"]


def test_reset_and_close_reach_the_plugin(run_py):
    out = run(run_py, r'''
cuda.set_memory_manager(Logging)
cuda.device_array(4, np.float32)
cuda.current_context().reset()
print(log)
print(cuda.current_context().get_memory_info().total != 456)  # nbcuda's own until reused
cuda.device_array(4, np.float32)
cuda.close()
print(log)
''')
    assert out == ["['initialize', 'alloc 16', 'free 16', 'reset']", "True",
                   "['initialize', 'alloc 16', 'free 16', 'reset', 'initialize', 'alloc 16', "
                   "'free 16', 'reset']"]


def test_interface_version_and_base_classes(run_py):
    out = run(run_py, r'''
class Two(Logging):
    @property
    def interface_version(self):
        return 2

try:
    cuda.set_memory_manager(Two)
except RuntimeError as e:
    print(e)
class Partial(cuda.HostOnlyCUDAMemoryManager):
    def memalloc(self, size):
        pass
try:
    cuda.set_memory_manager(Partial)
except TypeError as e:
    print("TypeError", "abstract" in str(e))
try:
    cuda.BaseCUDAMemoryManager.__init__(object.__new__(Logging))
except RuntimeError as e:
    print(e)
print(sorted(cuda.BaseCUDAMemoryManager.__abstractmethods__))
print(cuda.HostOnlyCUDAMemoryManager.__module__, issubclass(Logging, cuda.BaseCUDAMemoryManager))
d = cuda.to_device(np.ones(4))   # no plugin was accepted: nbcuda's own memory
print(log)
''')
    assert out == [
        "EMM Plugin interface has version 2 - version 1 required",
        "TypeError True",
        "Memory manager requires a context",
        "['defer_cleanup', 'get_ipc_handle', 'get_memory_info', 'initialize', "
        "'interface_version', 'memalloc', 'memhostalloc', 'mempin', 'reset']",
        "nbcuda True",
        "[]",
    ]


def test_plugin_named_by_the_environment(run_py, tmp_path):
    (tmp_path / "my_emm.py").write_text(PLUGIN + "\n_numba_memory_manager = Logging\n")
    out = run(run_py, r'''
import sys
import my_emm
d = cuda.to_device(np.ones(8, np.float32))
print(my_emm.log)
''', env={"NUMBA_CUDA_MEMORY_MANAGER": "my_emm", "PYTHONPATH": str(tmp_path)})
    assert out == ["['initialize', 'alloc 32']"]
    p = run_py(PLUGIN + "cuda.to_device(np.ones(2))\n",
               env={"NUMBA_CUDA_MEMORY_MANAGER": "no_such_emm_module"}, check=False)
    assert p.returncode != 0 and "No module named 'no_such_emm_module'" in p.stderr


def test_plugin_errors_reach_the_caller(run_py):
    out = run(run_py, r'''
class NoPointer(Logging):
    def memalloc(self, size):
        return 5

class Failing(Logging):
    def memalloc(self, size):
        raise MemoryError(f"pool exhausted at {size}")

class BadInit(Logging):
    def initialize(self):
        raise RuntimeError("cannot start")

for cls in (NoPointer, Failing, BadInit):
    cuda.close()   # a new context instance next
    cuda.set_memory_manager(cls)
    try:
        cuda.device_array(4, np.float32)
        print("no error")
    except Exception as e:
        print(type(e).__name__, e)
''')
    assert out == [
        "TypeError the memory manager's memalloc(16) gave 5, not a MemoryPointer (an object "
        "with device_ctypes_pointer)",
        "MemoryError pool exhausted at 16",
        "RuntimeError cannot start",
    ]


def test_memory_pointer_constructor(run_py):
    out = run(run_py, r'''
ctx = cuda.current_context()
calls = []
m = cuda.MemoryPointer(ctx, ctypes.c_void_p(4096), 128, finalizer=lambda: calls.append(1))
print(m.device_pointer, m.size, m.context is ctx, m.owner is m)
v = m.view(16, 32)
print(v.device_pointer, v.size, v.owner is m)
del m
print(calls)      # the view keeps it
del v
print(calls)
o = cuda.MemoryPointer(ctx, 8192, 16, owner=calls)
print(o.owner is calls)
del o
print(calls)      # an owned pointer frees nothing
for bad in (("x",), (-1,)):
    try:
        cuda.MemoryPointer(ctx, bad[0] if bad[0] == "x" else 1, -1 if bad[0] == -1 else 8)
    except (TypeError, ValueError) as e:
        print(type(e).__name__)
try:
    cuda.MemoryPointer(ctx, 1, 8, finalizer=3)
except TypeError as e:
    print(e)
''')
    assert out == ["4096 128 True True", "4112 16 True", "[]", "[1]", "True", "[1]",
                   "TypeError", "ValueError", "MemoryPointer: finalizer must be callable"]


CUPY_PLUGIN = r'''
import numpy as np
for old, new in (("row_stack", "vstack"), ("in1d", "isin"), ("trapz", "trapezoid")):
    if not hasattr(np, old) and hasattr(np, new):
        setattr(np, old, getattr(np, new))
import cupy
import importlib, sys
cuda = importlib.import_module(sys.argv[1] if len(sys.argv) > 1 else "nbcuda")
from emm_saxpy import saxpy


class CupyPool(cuda.HostOnlyCUDAMemoryManager):
    """Device memory from CuPy's memory pool, as RMM's and CuPy's numba plugins do."""

    def initialize(self):
        self.pool = cupy.get_default_memory_pool()

    def memalloc(self, size):
        mem = self.pool.malloc(size)
        return cuda.MemoryPointer(self.context, mem.ptr, size, owner=mem)

    def get_ipc_handle(self, memory):
        raise NotImplementedError

    def get_memory_info(self):
        return cuda.MemoryInfo(free=0, total=self.pool.total_bytes())

    @property
    def interface_version(self):
        return 1


cuda.set_memory_manager(CupyPool)
k = cuda.jit("void(float32[::1], float32, float32[::1], float32[::1])")(saxpy)
x = np.linspace(-3, 3, 4096, dtype=np.float32)
d_x, d_y = cuda.to_device(x), cuda.to_device(x * x)
d_r = cuda.device_array(4096, np.float32)
k[32, 128](d_r, np.float32(0.5), d_x, d_y)
r = d_r.copy_to_host()
used = cupy.get_default_memory_pool().used_bytes()
del d_x, d_y, d_r
print(r.tobytes().hex()[:64], used, cupy.get_default_memory_pool().used_bytes(),
      cuda.current_context().get_memory_info().total > 0)
'''


@pytest.mark.gpu
def test_cupy_pool_plugin_matches_numba_cuda(gpu, tmp_path):
    """The same plugin over CuPy's pool, once under nbcuda and once under numba-cuda: equal
    results, and the pool's memory is back when the arrays are gone."""
    pytest.importorskip("cupy")
    import os
    import subprocess
    import sys
    (tmp_path / "emm_saxpy.py").write_text(
        "import importlib, sys\ncuda = importlib.import_module(sys.argv[1])\n\n\n"
        "def saxpy(r, a, x, y):\n    i = cuda.grid(1)\n    if i < r.size:\n"
        "        r[i] = a * x[i] + y[i]\n")
    (tmp_path / "cupy_plugin.py").write_text(CUPY_PLUGIN)
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    outs = []
    for lib in ("nbcuda", "numba.cuda"):
        p = subprocess.run([sys.executable, str(tmp_path / "cupy_plugin.py"), lib], env=env,
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr[-3000:]
        outs.append(p.stdout.split())
    mine, theirs = outs
    assert mine[0] == theirs[0]                       # the same float32 results
    assert int(mine[1]) >= 3 * 4096 * 4 and mine[2] == "0" and mine[3] == "True"
