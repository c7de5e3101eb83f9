"""Smoke test of an installed nbcuda wheel (tests/run_all.sh's wheel stage runs it in a fresh
virtual environment with no compiler on PATH, against the software test driver): the module
imports and reports the package's version, the `nbcuda` command the wheel installs runs (also
as `python -m nbcuda`), the stubs and py.typed sit in the package,
a Python function compiles to PTX (libNVVM is found at run time), and the host API moves
data through the driver and launches a kernel."""
import importlib.metadata
import os
import shutil
import subprocess
import sys

import numpy as np

import nbcuda as cuda

assert "site-packages" in cuda.__file__, cuda.__file__
assert cuda.__version__ == importlib.metadata.version("nbcuda")

cli = shutil.which("nbcuda")
assert cli and os.path.dirname(cli) == os.path.dirname(sys.executable), cli
out = subprocess.run([cli, "version"], capture_output=True, text=True, check=True).stdout
assert out.startswith(f"nbcuda {cuda.__version__}\n"), out
# `python -m nbcuda` is the same command
same = subprocess.run([sys.executable, "-m", "nbcuda", "version"], capture_output=True,
                      text=True, check=True).stdout
assert same == out, (same, out)
package = os.path.dirname(cuda.__file__)
for name in ("__init__.pyi", "types.pyi", "random.pyi", "py.typed", "__main__.py"):
    assert os.path.isfile(os.path.join(package, name)), name


def add(a, b):
    return a + b


ptx, resty = cuda.compile_ptx(add, "float32(float32, float32)", device=True, cc=(9, 0))
assert ".target sm_90" in ptx and str(resty) == "float32", (ptx[:200], resty)

assert cuda.is_available()
host = np.arange(1000, dtype=np.float64)
d = cuda.to_device(host)
assert np.array_equal(d.copy_to_host(), host)


@cuda.jit("void(float64[::1], float64)")
def scale(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] *= a


scale[128, 8](d, 2.0)
cuda.synchronize()
print(f"wheel smoke test: ok (nbcuda {cuda.__version__}, Python {sys.version.split()[0]})")
