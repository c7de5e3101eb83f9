"""launch_batch.py — whether host_py.py's launch figure depends on the batch size.

An empty kernel runs on the GPU for a few microseconds, so a long enough batch of launches
could fill the driver's queue and time the GPU instead of the host path. This times
`k[1, 32]()`, a launcher configured once (`L()`), the raw cuLaunchKernel and nbcuda's C API
(libhost_calls.so, as host_py.py loads it) for batches of 100 to 4000 launches, draining the
queue between batches; medians (and minima) of 21 batches, µs per launch.

Usage (after building the tests and installing nbcuda):
    python3 bench/launch_batch.py [--host-calls-lib PATH] [--json OUT]
"""
import argparse
import ctypes
import glob
import os
import statistics
import time

os.environ.setdefault("NUMBA_DISABLE_PERFORMANCE_WARNINGS", "1")  # one-block grids: no warnings
import nbcuda as cuda

import empty_kernels  # bench/, next to this script
from report import Report  # bench/, next to this script

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host-calls-lib", help="libhost_calls.so (default: build/gpu/tests/, "
                    "else the first build*/**/tests/)")
    ap.add_argument("--json", metavar="OUT", help="also write the table as JSON to OUT")
    args = ap.parse_args()
    paths = [args.host_calls_lib] if args.host_calls_lib else sorted(
        glob.glob(os.path.join(ROOT, "build/gpu/tests/libhost_calls.so")) +
        glob.glob(os.path.join(ROOT, "build*/**/tests/libhost_calls.so"), recursive=True))
    if not paths:
        raise SystemExit("no libhost_calls.so: build the tests first")
    with Report("launch_batch", args.json) as report:
        run(paths[0], report)


def run(path, report):
    lib = ctypes.CDLL(path)
    lib.host_calls_batch.restype = ctypes.c_double
    lib.host_calls_batch.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    if lib.host_calls_setup() != 0:
        raise SystemExit("host_calls_setup failed")
    k0 = empty_kernels.jit_all(cuda)[0]
    configured = k0[1, 32]

    def subscripted(n):
        for _ in range(n):
            k0[1, 32]()

    def once(n):
        for _ in range(n):
            configured()

    def timed(loop, n):
        cuda.synchronize()
        t = time.perf_counter()
        loop(n)
        return (time.perf_counter() - t) / n * 1e6

    def c_batch(which, n):
        cuda.synchronize()
        return lib.host_calls_batch(b"launch_default_stream", which, n) * 1e-3

    report.section("Launch cost against the batch size (`bench/launch_batch.py`)")
    report.text("An empty kernel, 1 block of 32 threads, on the default stream: `k[1, 32]()`, a "
                "launcher configured once (`L()`), the raw cuLaunchKernel and nbcuda's C API "
                "(libhost_calls.so), batches of 100 to 4000 launches with the queue drained "
                "between batches; median (and minimum) of 21 batches, µs per launch.")
    rows = []
    for n in (100, 250, 500, 1000, 2000, 4000):
        runs = [(timed(subscripted, n), timed(once, n), c_batch(1, n), c_batch(0, n))
                for _ in range(21)]
        cols = list(zip(*runs))
        rows.append([str(n)] + [f"{statistics.median(c):.2f} (min {min(c):.2f})" for c in cols])
    report.table(["launches per batch", "k[1, 32]()", "configured L()", "raw cuLaunchKernel",
                  "C API"], rows)
    cuda.synchronize()


if __name__ == "__main__":
    main()
