"""A probe of what a launch with a CuPy array costs (bench/RESULTS.md, eighteenth session):
the launch with an nbcuda array, with objects whose __cuda_array_interface__ is a plain dict or
a fresh copy per read, with a CuPy array, CuPy's property alone, and both statements in one
loop. Median of 9 batches of 20 000; run on the GPU machine (needs CuPy)."""
import time
import warnings

import numpy as np

warnings.simplefilter("ignore")
import cupy  # noqa: E402
import nbcuda as cuda  # noqa: E402


def empty(a):
    pass


def main():
    kf = cuda.jit("void(float32[:])")(empty)
    d = cuda.device_array(1024, np.float32)
    cp_a = cupy.ones(1024, cupy.float32)
    base = dict(cp_a.__cuda_array_interface__)

    class Static:
        __cuda_array_interface__ = base

    class Fresh:
        @property
        def __cuda_array_interface__(self):
            return dict(base)

    ns = dict(d=d, st=Static(), fresh=Fresh(), cp_a=cp_a, L=kf[1, 32])
    print(base)
    for stmt in ["L(d)", "L(st)", "L(fresh)", "L(cp_a)", "cp_a.__cuda_array_interface__",
                 "fresh.__cuda_array_interface__", "L(d); cp_a.__cuda_array_interface__"]:
        code = compile(f"for _ in range(20000):\n    {stmt}\n", "probe", "exec")
        runs = []
        for _ in range(9):
            t0 = time.perf_counter()
            exec(code, ns)
            runs.append((time.perf_counter() - t0) / 20000)
            cuda.synchronize()
        runs.sort()
        print(f"{stmt:40s} {runs[4] * 1e9:8.0f} ns")


if __name__ == "__main__":
    main()
