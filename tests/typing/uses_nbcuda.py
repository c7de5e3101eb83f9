"""A user program type-checked against nbcuda's installed stubs (tests/typing/check.py): mypy
must find no error here."""
import numpy as np

import nbcuda as cuda
from nbcuda import types


@cuda.jit("void(float32[::1], float32)")
def scale(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] *= a


def run() -> None:
    d = cuda.to_device(np.ones(16, dtype=np.float32))
    scale[1, 16](d, 2.0)
    stream = cuda.stream()
    with cuda.profiling.range("copy", color=0xFF00FF00):
        host = d.copy_to_host(stream=stream)
    cuda.profiling.mark("copied")
    stream.synchronize()
    attached: bool = cuda.profiling.attached
    print(host.sum(), attached, types.float32)
