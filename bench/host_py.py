"""host_py.py — per-call cost of nbcuda's Python host API next to numba-cuda, CuPy and
cuda.core (each when importable), plus import + first-context time. Prints markdown tables.

Every operation is timed the same way for every library: batches of N calls in a plain
Python loop, per-call time = batch time / N, the median over batches is reported (so one
preempted batch does not move it). Work a batch queues (launches, records, async copies)
is drained with a synchronize outside the timed region. Launches go to the default stream
with device arrays already on the device, 1 block of 32 threads, kernels that do nothing
with their arguments, so the number is the launch path's cost, not the GPU's.

Usage:
    python bench/host_py.py [--batches 15] [--n 2000] [--only nbcuda,numba,cupy,cuda.core]
NBCUDA_DRIVER selects the driver as usual (the test driver gives nbcuda-only numbers on a
machine without a GPU). On numpy >= 2.5 numba-cuda needs the aliases set below before
`import numba`.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time


def compat_numpy_for_numba():
    import numpy
    for old, new in (("row_stack", "vstack"), ("in1d", "isin"), ("trapz", "trapezoid")):
        if not hasattr(numpy, old) and hasattr(numpy, new):
            setattr(numpy, old, getattr(numpy, new))


def timeit(fn, n, batches, drain=None):
    """Median per-call seconds of fn() over `batches` batches of n calls."""
    for _ in range(min(n, 200)):  # warm up (first launch loads the module, etc.)
        fn()
    if drain:
        drain()
    per_call = []
    for _ in range(batches):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        per_call.append((time.perf_counter() - t) / n)
        if drain:
            drain()
    return statistics.median(per_call)


# --------------------------------------------------------------------------- libraries ---

def setup_nbcuda():
    import numpy as np
    import nbcuda as cuda
    ctx = cuda.current_context()
    s = cuda.stream()
    ev = cuda.event()
    ev.record(s)
    dev = cuda.get_current_device()
    host = np.ones(256, np.float32)
    arrays = [cuda.to_device(np.ones(1024, np.float32)) for _ in range(4)]

    def k0():
        pass

    def k1(a):
        pass

    def k2(a, b):
        pass

    def k3(a, b, c):
        pass

    def k4(a, b, c, d):
        pass

    kernels = [cuda.jit("void()")(k0)]
    for i, f in enumerate((k1, k2, k3, k4), 1):
        kernels.append(cuda.jit("void(" + ", ".join(["float32[::1]"] * i) + ")")(f))
    launch = [kernels[i][1, 32] for i in range(5)]
    a, b, c, d = arrays
    return {
        "current_context()": cuda.current_context,
        "get_current_device()": cuda.get_current_device,
        "gpus.current": lambda: cuda.gpus.current,
        "Context.get_memory_info()": ctx.get_memory_info,
        "device attribute (MULTIPROCESSOR_COUNT)": lambda: dev.MULTIPROCESSOR_COUNT,
        "stream() create+destroy": lambda: cuda.stream(),
        "default_stream()": cuda.default_stream,
        "event() create+destroy": lambda: cuda.event(),
        "Event.record(stream)": lambda: ev.record(s),
        "Event.query()": ev.query,
        "Stream.synchronize() (idle)": s.synchronize,
        "synchronize() (idle)": cuda.synchronize,
        "to_device(1 KiB)": lambda: cuda.to_device(host),
        "copy_to_host(4 KiB)": a.copy_to_host,
        "device_array(1 KiB)": lambda: cuda.device_array(256, np.float32),
        "launch, no args": lambda: kernels[0][1, 32](),
        "launch, 1 array": lambda: kernels[1][1, 32](a),
        "launch, 2 arrays": lambda: kernels[2][1, 32](a, b),
        "launch, 3 arrays": lambda: kernels[3][1, 32](a, b, c),
        "launch, 4 arrays": lambda: kernels[4][1, 32](a, b, c, d),
        "launch, 4 arrays (configured once)": lambda: launch[4](a, b, c, d),
    }, cuda.synchronize


def setup_numba():
    compat_numpy_for_numba()
    import numpy as np
    from numba import cuda
    ctx = cuda.current_context()
    s = cuda.stream()
    ev = cuda.event()
    ev.record(s)
    dev = cuda.get_current_device()
    host = np.ones(256, np.float32)
    arrays = [cuda.to_device(np.ones(1024, np.float32)) for _ in range(4)]
    sigs = ["void(" + ", ".join(["float32[::1]"] * i) + ")" for i in range(5)]
    srcs = ["def k0():\n    pass\n", "def k1(a):\n    pass\n", "def k2(a, b):\n    pass\n",
            "def k3(a, b, c):\n    pass\n", "def k4(a, b, c, d):\n    pass\n"]
    kernels = []
    for i, src in enumerate(srcs):
        ns = {}
        exec(src, ns)
        kernels.append(cuda.jit(sigs[i])(ns[f"k{i}"]))
    launch = [kernels[i][1, 32] for i in range(5)]
    a, b, c, d = arrays
    return {
        "current_context()": cuda.current_context,
        "get_current_device()": cuda.get_current_device,
        "gpus.current": lambda: cuda.gpus.current,
        "Context.get_memory_info()": ctx.get_memory_info,
        "device attribute (MULTIPROCESSOR_COUNT)": lambda: dev.MULTIPROCESSOR_COUNT,
        "stream() create+destroy": lambda: cuda.stream(),
        "default_stream()": cuda.default_stream,
        "event() create+destroy": lambda: cuda.event(),
        "Event.record(stream)": lambda: ev.record(s),
        "Event.query()": ev.query,
        "Stream.synchronize() (idle)": s.synchronize,
        "synchronize() (idle)": cuda.synchronize,
        "to_device(1 KiB)": lambda: cuda.to_device(host),
        "copy_to_host(4 KiB)": a.copy_to_host,
        "device_array(1 KiB)": lambda: cuda.device_array(256, np.float32),
        "launch, no args": lambda: kernels[0][1, 32](),
        "launch, 1 array": lambda: kernels[1][1, 32](a),
        "launch, 2 arrays": lambda: kernels[2][1, 32](a, b),
        "launch, 3 arrays": lambda: kernels[3][1, 32](a, b, c),
        "launch, 4 arrays": lambda: kernels[4][1, 32](a, b, c, d),
        "launch, 4 arrays (configured once)": lambda: launch[4](a, b, c, d),
    }, cuda.synchronize


def setup_cupy():
    import numpy as np
    import cupy
    dev = cupy.cuda.Device()
    s = cupy.cuda.Stream()
    ev = cupy.cuda.Event()
    ev.record(s)
    host = np.ones(256, np.float32)
    arrays = [cupy.ones(1024, cupy.float32) for _ in range(4)]
    src = 'extern "C" __global__ void k0() {}\n' + "".join(
        f'extern "C" __global__ void k{i}(' + ", ".join(f"float* a{j}" for j in range(i)) +
        ") {}\n" for i in range(1, 5))
    mod = cupy.RawModule(code=src)
    kernels = [mod.get_function(f"k{i}") for i in range(5)]
    a, b, c, d = arrays
    return {
        "get_current_device()": cupy.cuda.Device,
        "Context.get_memory_info()": cupy.cuda.runtime.memGetInfo,
        "device attribute (MULTIPROCESSOR_COUNT)":
            lambda: dev.attributes["MultiProcessorCount"],
        "stream() create+destroy": lambda: cupy.cuda.Stream(),
        "event() create+destroy": lambda: cupy.cuda.Event(),
        "Event.record(stream)": lambda: ev.record(s),
        "Event.query()": lambda: ev.done,
        "Stream.synchronize() (idle)": s.synchronize,
        "synchronize() (idle)": cupy.cuda.runtime.deviceSynchronize,
        "to_device(1 KiB)": lambda: cupy.asarray(host),
        "copy_to_host(4 KiB)": a.get,
        "device_array(1 KiB)": lambda: cupy.empty(256, cupy.float32),
        "launch, no args": lambda: kernels[0]((1,), (32,), ()),
        "launch, 1 array": lambda: kernels[1]((1,), (32,), (a,)),
        "launch, 2 arrays": lambda: kernels[2]((1,), (32,), (a, b)),
        "launch, 3 arrays": lambda: kernels[3]((1,), (32,), (a, b, c)),
        "launch, 4 arrays": lambda: kernels[4]((1,), (32,), (a, b, c, d)),
    }, cupy.cuda.runtime.deviceSynchronize


def setup_cuda_core():
    try:
        from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch
    except ImportError:
        from cuda.core.experimental import Device, LaunchConfig, Program, ProgramOptions, launch
    dev = Device()
    dev.set_current()
    s = dev.create_stream()
    ev = s.record()
    cc = dev.compute_capability
    src = 'extern "C" __global__ void k0() {}\n' + "".join(
        f'extern "C" __global__ void k{i}(' + ", ".join(f"float* a{j}" for j in range(i)) +
        ") {}\n" for i in range(1, 5))
    prog = Program(src, "c++", ProgramOptions(arch=f"sm_{cc[0]}{cc[1]}"))
    mod = prog.compile("cubin", name_expressions=[f"k{i}" for i in range(5)])
    kernels = [mod.get_kernel(f"k{i}") for i in range(5)]
    bufs = [dev.memory_resource.allocate(4096, stream=s) for _ in range(4)]
    cfg = LaunchConfig(grid=1, block=32)
    a, b, c, d = bufs
    return {
        "get_current_device()": Device,
        "stream() create+destroy": lambda: dev.create_stream().close(),
        "event() create+destroy": lambda: dev.create_event().close(),
        "Event.record(stream)": lambda: s.record(ev),
        "Event.query()": lambda: ev.is_done,
        "Stream.synchronize() (idle)": s.sync,
        "synchronize() (idle)": dev.sync,
        "launch, no args": lambda: launch(s, cfg, kernels[0]),
        "launch, 1 array": lambda: launch(s, cfg, kernels[1], a),
        "launch, 2 arrays": lambda: launch(s, cfg, kernels[2], a, b),
        "launch, 3 arrays": lambda: launch(s, cfg, kernels[3], a, b, c),
        "launch, 4 arrays": lambda: launch(s, cfg, kernels[4], a, b, c, d),
    }, s.sync


LIBS = {"nbcuda": setup_nbcuda, "numba": setup_numba, "cupy": setup_cupy,
        "cuda.core": setup_cuda_core}
HEADERS = {"nbcuda": "nbcuda µs", "numba": "numba-cuda µs", "cupy": "CuPy µs",
           "cuda.core": "cuda.core µs"}


# --------------------------------------------------------------------------- import ------

IMPORT_SNIPPETS = {
    "nbcuda": "import nbcuda as cuda",
    "numba": ("import numpy\n"
              "for o, n in (('row_stack', 'vstack'), ('in1d', 'isin'), ('trapz', 'trapezoid')):\n"
              "    hasattr(numpy, o) or setattr(numpy, o, getattr(numpy, n))\n"
              "from numba import cuda"),
}


def import_time(lib, repeats=5):
    """Median (import ms, first current_context() ms) in fresh interpreters."""
    code = ("import time\nt0 = time.perf_counter()\n" + IMPORT_SNIPPETS[lib] +
            "\nt1 = time.perf_counter()\ncuda.current_context()\nt2 = time.perf_counter()\n"
            "print((t1 - t0) * 1e3, (t2 - t1) * 1e3)\n")
    # numba imports numpy itself; time numpy's import inside its number too.
    imp, ctx = [], []
    for _ in range(repeats):
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=300)
        if p.returncode != 0:
            return None
        a, b = map(float, p.stdout.split())
        imp.append(a)
        ctx.append(b)
    return statistics.median(imp), statistics.median(ctx)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", type=int, default=15)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--only", default=",".join(LIBS))
    args = ap.parse_args()
    wanted = [x for x in args.only.split(",") if x in LIBS]

    results, order, notes = {}, [], []
    for lib in wanted:
        try:
            ops, drain = LIBS[lib]()
        except Exception as e:  # not installed, or no GPU for it
            notes.append(f"{lib}: not measured ({type(e).__name__}: {str(e)[:100]})")
            continue
        results[lib] = {}
        for name, fn in ops.items():
            if name not in order:
                order.append(name)
            try:
                results[lib][name] = timeit(fn, args.n, args.batches, drain)
            except Exception as e:
                notes.append(f"{lib} / {name}: {type(e).__name__}: {str(e)[:100]}")
    libs = [lib for lib in wanted if lib in results]
    driver = os.environ.get("NBCUDA_DRIVER", "libcuda")
    print(f"## Host API per-call cost (median of {args.batches} batches x {args.n} calls; "
          f"driver: {driver}; Python {sys.version.split()[0]})\n")
    print("| operation | " + " | ".join(HEADERS[lib] for lib in libs) + " |")
    print("|---|" + "---:|" * len(libs))
    for name in order:
        cells = []
        for lib in libs:
            v = results[lib].get(name)
            cells.append(f"{v * 1e6:.2f}" if v is not None else "–")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("\n## Import and first context (median of 5 fresh interpreters)\n")
    print("| library | import ms | first current_context() ms |")
    print("|---|---:|---:|")
    for lib in ("nbcuda", "numba"):
        if lib not in wanted:
            continue
        t = import_time(lib)
        print(f"| {lib} | " + (f"{t[0]:.1f} | {t[1]:.1f} |" if t else "– | – |"))
    if notes:
        print("\nNotes:")
        for n in notes:
            print(f"- {n}")


if __name__ == "__main__":
    main()
