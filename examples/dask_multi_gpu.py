"""A chunked elementwise kernel and a sum over a Dask array whose chunks are nbcuda device
arrays, on a dask.distributed cluster of one worker per GPU.

    python examples/dask_multi_gpu.py [--n 100000000] [--chunk 10000000] [--workers N]

Each worker is a process pinned to one GPU by CUDA_VISIBLE_DEVICES (rotated, as dask-cuda's
LocalCUDACluster sets it), so its device 0 is its own GPU and every array it makes or
receives lives there. The graph:

    x  = arange(n) in chunks            numpy chunks, made on the workers
    dx = x.map_blocks(to_device)        the chunks as nbcuda device arrays
    dy = dx.map_blocks(elementwise)     y = a*x + b, one kernel launch per chunk
    ps = dy.map_blocks(partial_sum)     sum of each chunk (nbcuda's reduce), one element each
    total = combine(all partials)       on one worker: the other workers' partials travel there

The kernels travel by reference (the client uploads this file, which every worker imports as
the module dask_multi_gpu) and compile once per worker. Device arrays cross between
workers and back to the client through distributed's serializers that nbcuda registers
("dask": one host copy; "cuda" where the transport carries device memory). The result is
checked against numpy; each worker's time in its kernels is printed.

--host-math does the elementwise step and the sums with numpy on host copies of the chunks
(still device arrays between the steps): the software test driver, which runs no kernels,
checks the graph and the transfers this way.
"""
import argparse
import logging
import os
import sys
import time

import numpy as np

import nbcuda as cuda

A, B = 2.0, 1.0

# the time each worker process spends in its kernels: {step: [seconds, chunks]}
_TIMES = {}


@cuda.jit
def axpb(x, out, a, b):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + b


@cuda.reduce
def sum_reduce(a, b):
    return a + b


def _timed(step, fn, *args):
    t0 = time.perf_counter()
    r = fn(*args)
    cuda.synchronize()
    entry = _TIMES.setdefault(step, [0.0, 0])
    entry[0] += time.perf_counter() - t0
    entry[1] += 1
    return r


def to_device(chunk):
    return cuda.to_device(np.ascontiguousarray(chunk))


def _elementwise(d, host_math):
    if host_math:
        return cuda.to_device(A * d.copy_to_host() + B)
    out = cuda.device_array_like(d)
    axpb.forall(d.size)(d, out, A, B)
    return out


def elementwise(d, host_math=False):
    return _timed("elementwise", _elementwise, d, host_math)


def _partial_sum(d, host_math):
    out = cuda.device_array(1, dtype=d.dtype)
    if host_math:
        out.copy_to_device(np.array([d.copy_to_host().sum()], dtype=d.dtype))
    else:
        sum_reduce(d, res=out)
    return out


def partial_sum(d, host_math=False):
    return _timed("partial_sum", _partial_sum, d, host_math)


def combine(partials, host_math=False):
    """The total of the one-element device arrays (from every worker): gathered into one
    device array here, then summed."""
    gathered = cuda.device_array(len(partials), dtype=partials[0].dtype)
    for i, p in enumerate(partials):
        gathered[i:i + 1].copy_to_device(p)
    if host_math:
        return float(gathered.copy_to_host().sum())
    return float(sum_reduce(gathered))


def worker_report():
    """(the worker's CUDA_VISIBLE_DEVICES, its device's name, its kernel times, whether
    nbcuda's Dask serializers were loaded there: by a device array it sent or received)."""
    return (os.environ.get("CUDA_VISIBLE_DEVICES", ""), cuda.get_current_device().name,
            dict(_TIMES), "nbcuda.dask" in sys.modules)


def make_cluster(workers):
    """A local cluster of `workers` worker processes, one thread each, worker i seeing the
    devices i, i+1, ... (CUDA_VISIBLE_DEVICES, set in the worker process before nbcuda
    initialises CUDA there): its device 0 is GPU i."""
    from distributed import Nanny, Scheduler, SpecCluster

    specs = {}
    for i in range(workers):
        visible = ",".join(str((i + k) % workers) for k in range(workers))
        specs[i] = {"cls": Nanny,
                    "options": {"nthreads": 1, "silence_logs": logging.ERROR,
                                "env": {"CUDA_VISIBLE_DEVICES": visible}}}
    return SpecCluster(workers=specs, scheduler={"cls": Scheduler,
                                                  "options": {"dashboard_address": None}},
                       silence_logs=logging.ERROR)


def run(client, n, chunk, host_math=False, timeout=None):
    """Builds and computes the graph on client's cluster: (total, expected, per-worker
    reports)."""
    import dask
    import dask.array as da

    import nbcuda.dask  # noqa: F401  (this process's serializers: results come back here)

    # the workers import this file as the module dask_multi_gpu, which the tasks name
    client.upload_file(os.path.abspath(__file__))
    meta = np.empty((0,), dtype=np.float64)
    x = da.arange(n, chunks=chunk, dtype=np.float64)
    dx = x.map_blocks(to_device, meta=meta)
    dy = dx.map_blocks(elementwise, host_math, meta=meta)
    ps = dy.map_blocks(partial_sum, host_math, chunks=((1,) * dy.numblocks[0],), meta=meta)
    total = dask.delayed(combine)(ps.to_delayed().ravel().tolist(), host_math)
    result = client.compute(total).result(timeout=timeout)
    xs = np.arange(n, dtype=np.float64)
    expected = float((A * xs + B).sum())
    return result, expected, client.run(worker_report)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=100_000_000)
    p.add_argument("--chunk", type=int, default=10_000_000)
    p.add_argument("--workers", type=int, default=0, help="default: one per GPU")
    p.add_argument("--host-math", action="store_true",
                   help="elementwise and sums with numpy (drivers that run no kernels)")
    args = p.parse_args(argv)
    from distributed import Client

    workers = args.workers or len(cuda.gpus)
    with make_cluster(workers) as cluster, Client(cluster) as client:
        t0 = time.perf_counter()
        total, expected, reports = run(client, args.n, args.chunk, args.host_math)
        elapsed = time.perf_counter() - t0
    print(f"{workers} workers, n={args.n}, chunk={args.chunk}: {elapsed:.3f} s in all")
    for addr, (visible, name, times, _) in sorted(reports.items()):
        steps = ", ".join(f"{k} {v[0]:.3f} s / {v[1]} chunks" for k, v in sorted(times.items()))
        print(f"  worker {addr} (CUDA_VISIBLE_DEVICES={visible}, {name}): {steps or 'no chunks'}")
    ok = np.isclose(total, expected, rtol=1e-9)
    print(f"sum = {total!r}, numpy: {expected!r}: {'ok' if ok else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    # the tasks name this file's functions by the module name dask_multi_gpu, which the
    # workers import: run main from that module, not from __main__
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import dask_multi_gpu

    sys.exit(dask_multi_gpu.main())
