"""Generated-code speed: memory-bound corpus kernels compiled by nbcuda and by numba-cuda, on
arrays far larger than the L2, timed with CUDA events (GPU machine only).

Each kernel is launched in batches of back-to-back launches between two events, so launch
overhead on the host is hidden behind the kernels; the figure is the median over batches. The
achieved bandwidth (bytes each kernel must move / time) is given next to the card's copy
bandwidth measured in the same run (a large device-to-device copy, bytes read + written).

nbcuda's side is compiled with the `nbcuda` CLI and launched through CuPy, as in
tests/gpu/corpus_compare.py; results are checked against numba-cuda's before timing: every
array the kernel writes (role "out" or "inout") after one launch on each side, from the same
inputs. A case where no array was compared says "NO (nothing compared)", and any case whose
results differ or were not compared makes the script exit with status 1.

Usage: python3 bench/kernels.py [--cli build/gpu/nbcuda] [--json OUT]
"""
import argparse
import importlib.util
import os
import sys

import numpy as np

from report import Report  # bench/, next to this script

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
spec = importlib.util.spec_from_file_location("corpus_compare", os.path.join(ROOT, "tests/gpu/corpus_compare.py"))
cc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cc)
cp = cc.cp

N1 = 1 << 26
N2 = 8192
# name, signature, arrays (role, dtype, shape), launch, bytes moved per launch
CASES = [
    ("saxpy", "void(float32[::1], float32, float32[::1], float32[::1])",
     [("out", "float32", (N1,)), ("scalar", "float32", 2.5), ("in", "float32", (N1,)), ("in", "float32", (N1,))],
     (N1 // 256, 256), 3 * 4 * N1),
    ("saxpy", "void(float32[:], float32, float32[:], float32[:])",
     [("out", "float32", (N1,)), ("scalar", "float32", 2.5), ("in", "float32", (N1,)), ("in", "float32", (N1,))],
     (N1 // 256, 256), 3 * 4 * N1),
    ("stencil_1d", "void(float32[::1], float32[::1])",
     [("out", "float32", (N1,)), ("in", "float32", (N1,))], (N1 // 256, 256), 2 * 4 * N1),
    ("grid_stride_scale", "void(float64[::1], float64)",
     [("inout", "float64", (N1,)), ("scalar", "float64", 1.0000001)], (132 * 16, 256), 2 * 8 * N1),
    ("reverse", "void(int32[::1], int32[::1])",
     [("out", "int32", (N1,)), ("in", "int32", (N1,))], (N1 // 256, 256), 2 * 4 * N1),
    ("add_2d", "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])",
     [("out", "float32", (N2, N2)), ("in", "float32", (N2, N2)), ("in", "float32", (N2, N2))],
     ((N2 // 16, N2 // 16), (16, 16)), 3 * 4 * N2 * N2),
]


def copy_bandwidth():
    n = 1 << 28  # 1 GiB of float32
    a = cp.ones(n, dtype=cp.float32)
    b = cp.empty_like(a)
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(10):
        start.record()
        b[...] = a
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end))
    return 2 * 4 * n / (np.median(times) * 1e-3) / 1e9


def batch_time(launch, batch=20, batches=7):
    for _ in range(3):
        launch()
    cp.cuda.runtime.deviceSynchronize()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(batches):
        start.record()
        for _ in range(batch):
            launch()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) / batch)
    return float(np.median(times))


def arrays(rng, specs):
    host = []
    for role, dtype, shape in specs:
        if role == "scalar":
            host.append((role, dtype, np.dtype(dtype).type(shape)))
        elif role == "out":
            host.append((role, dtype, np.zeros(shape, dtype)))
        else:
            host.append((role, dtype, cc.generate(rng, "normal" if dtype.startswith("float") else "ints", dtype, shape)))
    return host


WRITTEN = ("out", "inout")  # the roles of the arrays a kernel writes


def same_results(host, dev_nb, dev_nu):
    """(cell, ok): whether every array the kernel writes holds the same values on both
    sides; not ok when none was compared."""
    compared = [np.array_equal(cp.asnumpy(x), cp.asnumpy(y), equal_nan=True)
                for (role, _, _), x, y in zip(host, dev_nb, dev_nu) if role in WRITTEN]
    if not compared:
        return "NO (nothing compared)", False
    n = len(compared)
    if all(compared):
        return f"yes ({n} array{'s' if n > 1 else ''})", True
    return f"NO ({n - sum(compared)} of {n} arrays differ)", False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(ROOT, "build/gpu/nbcuda"))
    ap.add_argument("--json", metavar="OUT", help="also write the tables as JSON to OUT")
    args = ap.parse_args()
    with Report("kernels", args.json) as report:
        return run(args, report)


def run(args, report):
    from numba import cuda
    rng = np.random.default_rng(1)
    source = open(os.path.join(ROOT, "tests/corpus/arrays.py")).read()
    nb = cc.Nbcuda(os.path.abspath(args.cli))
    copy_bw = copy_bandwidth()
    report.section("Generated code: memory-bound kernels, nbcuda next to numba-cuda")
    report.text(f"Device-to-device copy bandwidth: {copy_bw:.0f} GB/s. Per kernel: the median "
                "over 7 batches of 20 back-to-back launches between two CUDA events; bandwidth "
                "= bytes the kernel must move / time. \"same result\": every array the kernel "
                "writes (out and inout) compared after one launch on each side.")
    rows, bad = [], 0
    for name, sig, specs, launch, nbytes in CASES:
        host = arrays(rng, specs)
        types = [dt for _, dt, _ in host]
        dev_nb = [cp.asarray(v) if isinstance(v, np.ndarray) else v for _, _, v in host]
        dev_nu = [cp.asarray(v) if isinstance(v, np.ndarray) else v for _, _, v in host]
        kern = nb.compile(source, name, sig)
        grid, block = launch
        g = grid if isinstance(grid, tuple) else (grid,)
        b = block if isinstance(block, tuple) else (block,)
        params = tuple(nb.flatten(dev_nb, types))
        run_nb = lambda: kern(g, b, params)  # noqa: E731
        k = cc.numba_kernel(source, "arrays", name, sig)
        nu_args = [cuda.as_cuda_array(a) if isinstance(a, cp.ndarray) else a for a in dev_nu]
        run_nu = lambda: k[grid, block](*nu_args)  # noqa: E731
        run_nb()
        run_nu()
        cp.cuda.runtime.deviceSynchronize()
        same, ok = same_results(host, dev_nb, dev_nu)
        bad += not ok
        t_nb = batch_time(run_nb)
        t_nu = batch_time(run_nu)
        bw_nb = nbytes / (t_nb * 1e-3) / 1e9
        bw_nu = nbytes / (t_nu * 1e-3) / 1e9
        rows.append([name, f"`{sig}`", f"{t_nb * 1e3:.1f}", f"{t_nu * 1e3:.1f}",
                     f"{bw_nb:.0f} ({100 * bw_nb / copy_bw:.0f} %)",
                     f"{bw_nu:.0f} ({100 * bw_nu / copy_bw:.0f} %)", same])
        print(f"  {name} {sig}: {same}", file=sys.stderr, flush=True)
        del dev_nb, dev_nu, nu_args, params
        cp.get_default_memory_pool().free_all_blocks()
    report.table(["kernel", "<signature", "nbcuda µs", "numba-cuda µs", "nbcuda GB/s (% copy)",
                  "numba-cuda GB/s (% copy)", "<same result"], rows)
    if bad:
        report.text(f"**{bad} case(s) without the same result on both sides** (see the table).")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
