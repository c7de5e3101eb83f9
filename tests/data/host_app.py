"""An application as numba users write it: kernels and device functions next to host code
that the kernel language cannot compile. nbcuda must compile the kernels of this file
(tests/c/test_compile.c, tests/c/cli_compile.cmake); compiling a host function instead
gives the error for its first unsupported construct.
"""
import functools
import sys
import math

import numpy as np
from numba import cuda

N = 1 << 10
SCALE = 2.0


@cuda.jit(device=True)
def clamp(v, lo, hi):
    return min(max(v, lo), hi)


@cuda.jit("void(float32[:], float32, float32[:], float32[:])")
def saxpy(out, a, x, y):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = clamp(a * x[i] + y[i], -SCALE * N, SCALE * N)


def scaled(v, factor=SCALE):
    return v * factor


def kernel_calling_host(out, x):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = scaled(x[i])


class Timer:
    def __init__(self, name, *, verbose=False):
        self.name = name
        self.verbose = verbose

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def run(n=N, *args, **kwargs):
    x = np.arange(n, dtype=np.float32)
    squares = [v * v for v in range(n) if v % 2]
    table = {k: v for k, v in zip(range(3), "abc")}
    key = lambda item, default=None: item[0]
    return x, squares, table, key


def main():
    global SCALE
    import os
    from time import perf_counter
    with cuda.gpus[0]:
        try:
            out = cuda.device_array(N, dtype=np.float32)
        except Exception as exc:
            raise SystemExit(f"no GPU: {exc!r:>10}") from exc
        finally:
            pass
    del os
    assert perf_counter() > 0, "clock"
    print(f"{N=} {SCALE:.2f}", file=sys.stderr)
    return out


@functools.lru_cache(maxsize=None)
def cached(n):
    return n * 2


def numbers():
    yield 1
    yield from range(3)


async def fetch():
    async with lock:
        await something()


def big():
    return 123456789012345678901234567890


if __name__ == "__main__":
    with Timer("main", verbose=True):
        main()
