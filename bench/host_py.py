"""host_py.py — per-call cost of nbcuda's Python host API next to the raw driver call and to
numba-cuda, CuPy and cuda.core (each when importable), plus import + first-context time.
Prints markdown tables.

Every operation is a statement (e.g. `ev.record(s)`) timed the same way for every library:
batches of N executions in a plain Python for loop compiled for that statement (no lambda
in between, so the figure is what the call costs where a program writes it), per-call time
= batch time / N, the median over batches is reported (so one preempted batch does not
move it). Work a batch queues (launches, records, async copies) is drained with a
synchronize outside the timed region. Launches go to the default stream with device arrays
already on the device, 1 block of 32 threads, kernels that do nothing with their
arguments, so the number is the launch path's cost, not the GPU's.

The raw driver column comes from the same run: the C benchmark bench/host_calls (built with
the tests; --host-calls-bin, else build/gpu/tests/host_calls, else the newest
build*/**/tests/host_calls that answers in JSON) runs with --json against the same driver
and gives, for the driver call(s) each operation needs (RAW_ROWS), the raw per-call time
and nbcuda's C API time ("C API µs"). "overhead ns" = nbcuda's Python figure - the raw
driver figure: the C library's own cost plus the binding's (nbcuda - C API). The loop's own cost per iteration (a `pass` statement) is printed
under the table; it is part of every figure, for every library.

Usage:
    python bench/host_py.py [--batches 15] [--n 2000] [--only nbcuda,numba,cupy,cuda.core]
                            [--host-calls-bin PATH] [--no-raw] [--no-import]
NBCUDA_DRIVER selects the driver as usual (the test driver gives nbcuda-only numbers on a
machine without a GPU). On numpy >= 2.5 numba-cuda needs the aliases set below before
`import numba`.
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import time

import empty_kernels  # bench/, next to this script

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def compat_numpy_for_numba():
    import numpy
    for old, new in (("row_stack", "vstack"), ("in1d", "isin"), ("trapz", "trapezoid")):
        if not hasattr(numpy, old) and hasattr(numpy, new):
            setattr(numpy, old, getattr(numpy, new))


def compile_loop(stmt, ns):
    """A function running `stmt` n times in a plain for loop, with ns as its globals, so
    the figure is the statement's own cost (no lambda frame per call)."""
    src = f"def _bench_loop(_n):\n    for _ in range(_n):\n        {stmt}\n"
    exec(compile(src, f"<bench: {stmt}>", "exec"), ns)
    return ns.pop("_bench_loop")


def timeit(loop, n, batches, drain=None):
    """Median per-call seconds of loop(n) / n over `batches` batches."""
    loop(min(n, 200))  # warm up (first launch loads the module, etc.)
    if drain:
        drain()
    per_call = []
    for _ in range(batches):
        t = time.perf_counter()
        loop(n)
        per_call.append((time.perf_counter() - t) / n)
        if drain:
            drain()
    return statistics.median(per_call)


# --------------------------------------------------------------------------- libraries ---

def cuda_api_statements(cuda, np, kernels, skip=()):
    """The objects and statements timed for a library with numba.cuda's API (nbcuda itself, or
    numba-cuda: the same code runs on both); `kernels` are the 0..4-array empty kernels."""
    ctx = cuda.current_context()
    s = cuda.stream()
    ev = cuda.event()
    ev.record(s)
    ev2 = cuda.event()
    ev2.record(s)
    s.synchronize()
    dev = cuda.get_current_device()
    host = np.ones(256, np.float32)
    a, b, c, d = [cuda.to_device(np.ones(1024, np.float32)) for _ in range(4)]
    ns = dict(cuda=cuda, np=np, ctx=ctx, s=s, ev=ev, ev2=ev2, dev=dev, host=host,
              kernels=kernels, launch=[kernels[i][1, 32] for i in range(5)],
              a=a, b=b, c=c, d=d)
    statements = {
        "current_context()": "cuda.current_context()",
        "get_current_device()": "cuda.get_current_device()",
        "gpus.current": "cuda.gpus.current",
        "Context.get_memory_info()": "ctx.get_memory_info()",
        "device attribute (MULTIPROCESSOR_COUNT)": "dev.MULTIPROCESSOR_COUNT",
        "stream() create+destroy": "cuda.stream()",
        "default_stream()": "cuda.default_stream()",
        "event() create+destroy": "cuda.event()",
        "Event.record(stream)": "ev.record(s)",
        "Event.query()": "ev.query()",
        "Event.synchronize() (done)": "ev.synchronize()",
        "Event.wait(stream)": "ev.wait(s)",
        "event_elapsed_time(a, b)": "cuda.event_elapsed_time(ev, ev2)",
        "Stream.query() (idle)": "s.query()",
        "Stream.synchronize() (idle)": "s.synchronize()",
        "synchronize() (idle)": "cuda.synchronize()",
        "to_device(1 KiB)": "cuda.to_device(host)",
        "copy_to_host(4 KiB)": "a.copy_to_host()",
        "device_array(1 KiB)": "cuda.device_array(256, np.float32)",
        "launch, no args": "kernels[0][1, 32]()",
        "launch, 1 array": "kernels[1][1, 32](a)",
        "launch, 2 arrays": "kernels[2][1, 32](a, b)",
        "launch, 3 arrays": "kernels[3][1, 32](a, b, c)",
        "launch, 4 arrays": "kernels[4][1, 32](a, b, c, d)",
        "launch, 4 arrays (configured once)": "launch[4](a, b, c, d)",
    }
    return ns, {k: v for k, v in statements.items() if k not in skip}, cuda.synchronize


def setup_nbcuda():
    import numpy as np
    import nbcuda as cuda
    return cuda_api_statements(cuda, np, empty_kernels.jit_all(cuda))


def setup_numba():
    compat_numpy_for_numba()
    import numpy as np
    from numba import cuda
    # numba-cuda's Stream has no query().
    return cuda_api_statements(cuda, np, empty_kernels.jit_all(cuda),
                               skip={"Stream.query() (idle)"})


def setup_cupy():
    import numpy as np
    import cupy
    dev = cupy.cuda.Device()
    s = cupy.cuda.Stream()
    ev = cupy.cuda.Event()
    ev.record(s)
    ev2 = cupy.cuda.Event()
    ev2.record(s)
    s.synchronize()
    host = np.ones(256, np.float32)
    arrays = [cupy.ones(1024, cupy.float32) for _ in range(4)]
    src = 'extern "C" __global__ void k0() {}\n' + "".join(
        f'extern "C" __global__ void k{i}(' + ", ".join(f"float* a{j}" for j in range(i)) +
        ") {}\n" for i in range(1, 5))
    mod = cupy.RawModule(code=src)
    kernels = [mod.get_function(f"k{i}") for i in range(5)]
    a, b, c, d = arrays
    ns = dict(cupy=cupy, s=s, ev=ev, ev2=ev2, dev=dev, host=host, kernels=kernels,
              a=a, b=b, c=c, d=d)
    return ns, {
        "get_current_device()": "cupy.cuda.Device()",
        "Context.get_memory_info()": "cupy.cuda.runtime.memGetInfo()",
        "device attribute (MULTIPROCESSOR_COUNT)": 'dev.attributes["MultiProcessorCount"]',
        "stream() create+destroy": "cupy.cuda.Stream()",
        "event() create+destroy": "cupy.cuda.Event()",
        "Event.record(stream)": "ev.record(s)",
        "Event.query()": "ev.done",
        "Event.synchronize() (done)": "ev.synchronize()",
        "Event.wait(stream)": "s.wait_event(ev)",
        "event_elapsed_time(a, b)": "cupy.cuda.get_elapsed_time(ev, ev2)",
        "Stream.query() (idle)": "s.done",
        "Stream.synchronize() (idle)": "s.synchronize()",
        "synchronize() (idle)": "cupy.cuda.runtime.deviceSynchronize()",
        "to_device(1 KiB)": "cupy.asarray(host)",
        "copy_to_host(4 KiB)": "a.get()",
        "device_array(1 KiB)": "cupy.empty(256, cupy.float32)",
        "launch, no args": "kernels[0]((1,), (32,), ())",
        "launch, 1 array": "kernels[1]((1,), (32,), (a,))",
        "launch, 2 arrays": "kernels[2]((1,), (32,), (a, b))",
        "launch, 3 arrays": "kernels[3]((1,), (32,), (a, b, c))",
        "launch, 4 arrays": "kernels[4]((1,), (32,), (a, b, c, d))",
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
    s.sync()
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
    ns = dict(Device=Device, launch=launch, dev=dev, s=s, ev=ev, cfg=cfg, kernels=kernels,
              a=a, b=b, c=c, d=d)
    return ns, {
        "get_current_device()": "Device()",
        "stream() create+destroy": "dev.create_stream().close()",
        "event() create+destroy": "dev.create_event().close()",
        "Event.record(stream)": "s.record(ev)",
        "Event.query()": "ev.is_done",
        "Event.synchronize() (done)": "ev.sync()",
        "Event.wait(stream)": "s.wait(ev)",
        "Stream.synchronize() (idle)": "s.sync()",
        "synchronize() (idle)": "dev.sync()",
        "launch, no args": "launch(s, cfg, kernels[0])",
        "launch, 1 array": "launch(s, cfg, kernels[1], a)",
        "launch, 2 arrays": "launch(s, cfg, kernels[2], a, b)",
        "launch, 3 arrays": "launch(s, cfg, kernels[3], a, b, c)",
        "launch, 4 arrays": "launch(s, cfg, kernels[4], a, b, c, d)",
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


# --------------------------------------------------------------------------- raw driver --

# Python operation -> the bench/host_calls row holding the driver call(s) it needs. numba's
# event() makes timing events, so the timing rows are the ones to compare with.
RAW_ROWS = {
    "current_context()": "current_context",
    "get_current_device()": "current_context",
    "default_stream()": "current_context",
    "Context.get_memory_info()": "memory_info",
    "stream() create+destroy": "stream_create_destroy",
    "event() create+destroy": "event_create_destroy_timing",
    "Event.record(stream)": "event_record_timing",
    "Event.query()": "event_query",
    "Event.synchronize() (done)": "event_synchronize",
    "Event.wait(stream)": "event_wait",
    "event_elapsed_time(a, b)": "event_elapsed_time",
    "Stream.query() (idle)": "stream_query",
    "Stream.synchronize() (idle)": "stream_synchronize",
    "synchronize() (idle)": "synchronize",
    "to_device(1 KiB)": "alloc_htod_free_1k",
    "copy_to_host(4 KiB)": "memcpy_dtoh_4k",
    "device_array(1 KiB)": "alloc_free_1k",
    "launch, no args": "launch",
}


def host_calls_candidates(explicit):
    """host_calls binaries to try, in order: --host-calls-bin alone if given, else
    build/gpu/tests/host_calls, then every build*/.../tests/host_calls, newest first."""
    if explicit:
        return [explicit]
    found = [p for p in glob.glob(os.path.join(ROOT, "build*", "**", "tests", "host_calls"),
                                  recursive=True) if os.access(p, os.X_OK)]
    found.sort(key=os.path.getmtime, reverse=True)
    preferred = os.path.join(ROOT, "build", "gpu", "tests", "host_calls")
    if preferred in found:
        found.remove(preferred)
        found.insert(0, preferred)
    return found


def run_host_calls(candidates, batches):
    """(path, parsed `host_calls --json` output) of the first candidate that runs against the
    same NBCUDA_DRIVER and answers in JSON (an old build prints only markdown); (None, why)
    when none does."""
    if not candidates:
        return None, "no host_calls binary found (build the tests, or pass --host-calls-bin)"
    why = []
    for path in candidates:
        try:
            p = subprocess.run([path, "--json", str(batches)], capture_output=True, text=True,
                               timeout=600)
        except (OSError, subprocess.TimeoutExpired) as e:
            why.append(f"{path}: {e}")
            continue
        if p.returncode != 0:
            why.append(f"{path} failed ({p.returncode}): {p.stderr.strip()[-200:]}")
            continue
        try:
            return (path, json.loads(p.stdout)), None
        except ValueError:
            why.append(f"{path}: no JSON output (built before --json?)")
    return None, "; ".join(why)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", type=int, default=15)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--only", default=",".join(LIBS))
    ap.add_argument("--host-calls-bin", default=None,
                    help="the bench/host_calls binary giving the raw driver figures")
    ap.add_argument("--raw-batches", type=int, default=101,
                    help="batches of host_calls (it times 200 calls per batch)")
    ap.add_argument("--no-raw", action="store_true", help="do not run host_calls")
    ap.add_argument("--no-import", action="store_true", help="skip the import-time table")
    args = ap.parse_args()
    wanted = [x for x in args.only.split(",") if x in LIBS]

    results, order, notes = {}, [], []
    floor = None
    for lib in wanted:
        try:
            ns, ops, drain = LIBS[lib]()
        except Exception as e:  # not installed, or no GPU for it
            notes.append(f"{lib}: not measured ({type(e).__name__}: {str(e)[:100]})")
            continue
        if floor is None:
            floor = timeit(compile_loop("pass", {}), args.n, args.batches)
        results[lib] = {}
        for name, stmt in ops.items():
            if name not in order:
                order.append(name)
            try:
                loop = compile_loop(stmt, ns)
                results[lib][name] = timeit(loop, args.n, args.batches, drain)
            except Exception as e:
                notes.append(f"{lib} / {name}: {type(e).__name__}: {str(e)[:100]}")
    libs = [lib for lib in wanted if lib in results]

    raw = raw_path = None
    if not args.no_raw and "nbcuda" in libs:
        found, why = run_host_calls(host_calls_candidates(args.host_calls_bin),
                                    args.raw_batches)
        if found:
            raw_path, raw = found
        else:
            notes.append(f"raw driver figures: {why}")
    rows = raw["rows"] if raw else {}

    driver = os.environ.get("NBCUDA_DRIVER", "libcuda")
    print(f"## Host API per-call cost (median of {args.batches} batches x {args.n} calls; "
          f"driver: {driver}; Python {sys.version.split()[0]})\n")
    others = [lib for lib in libs if lib != "nbcuda"]
    cols = ["operation"]
    if "nbcuda" in libs:
        cols += ["nbcuda µs", "raw driver µs", "overhead ns", "C API µs"]
    cols += [HEADERS[lib] for lib in others]
    print("| " + " | ".join(cols) + " |")
    print("|---|" + "---:|" * (len(cols) - 1))
    for name in order:
        cells = []
        if "nbcuda" in libs:
            v = results["nbcuda"].get(name)
            r = rows.get(RAW_ROWS.get(name, ""))
            cells.append(f"{v * 1e6:.2f}" if v is not None else "–")
            cells.append(f"{r['raw_ns'] / 1e3:.2f}" if r else "–")
            cells.append(f"{v * 1e9 - r['raw_ns']:+.0f}" if r and v is not None else "–")
            cells.append(f"{r['nbcuda_ns'] / 1e3:.2f}" if r else "–")
        for lib in others:
            v = results[lib].get(name)
            cells.append(f"{v * 1e6:.2f}" if v is not None else "–")
        print(f"| {name} | " + " | ".join(cells) + " |")
    if floor is not None:
        print(f"\nThe timing loop alone (`pass`) costs {floor * 1e9:.0f} ns per iteration; it "
              "is part of every figure.")
    if raw:
        print(f"Raw driver and C API figures: `{os.path.relpath(raw_path, ROOT)} --json "
              f"{args.raw_batches}` in the same run ({raw['device']}; rows: "
              + ", ".join(sorted({RAW_ROWS[n] for n in order if n in RAW_ROWS})) + ").")
    if not args.no_import:
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
