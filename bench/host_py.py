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

The raw driver column comes from the same process: bench/host_calls.c built as a library
(libhost_calls.so, built with the tests; --host-calls-lib, else build/gpu/tests/, else the
newest build*/**/tests/libhost_calls.so) is loaded with ctypes and, for each operation with a
driver equivalent (RAW_ROWS), one batch of the raw driver call(s) in a C loop and one batch of
nbcuda's C API follow each batch of the Python statement, so the three figures share the
machine's state of that moment (a separate process measured at another moment differed by up
to microseconds). "overhead ns" = the median over batches of (Python - raw) per call: the C
library's own cost plus the binding's plus the interpreter's cost of a call statement. The
loop's own cost per iteration (a `pass` statement) is printed under the table; it is part of
every Python figure, for every library.

The control: bench/bare_binding.c, built here for this interpreter, is the thinnest binding
possible — a Python callable that runs the same raw row once and returns None. One batch of it
runs next to each Python batch too (before or after it, alternating), and one batch of the same
callable running the row's nbcuda C API side. bare - raw is what reaching the driver from
Python costs any binding (the call statement, and the driver running slower between
interpreter steps than back to back in C); "nbcuda - bare" is what nbcuda adds (its C library,
argument conversion, result objects, GIL release where the bare call keeps it), printed with
the interquartile range of its per-batch values, which says how far the driver's own
batch-to-batch variation lets the figure be trusted; "binding" (nbcuda - bare C API) is what
the Python binding alone adds to the C library's call.

Rows that would time nbcuda's reuse (src/host/kept.c, reuse.c: a stream that died idle, an
event that died complete, a freed device block handed to the next create or allocation) are
never compared with raw creates and destroys as if they did the same work. They get a table
of their own, beside the raw calls the reuse saves and CuPy's memory pool; the like-for-like
table has the same calls with reuse off instead ("reuse off" rows), timed in a child process
run with NBCUDA_REUSE=0 (read once per process), where every create, destroy, allocation and
free is the driver's own, paired with the raw row exactly as the other rows are. Only those
like-for-like rows enter the overhead summary.

Usage:
    python bench/host_py.py [--batches 15] [--n 2000] [--only nbcuda,numba,cupy,cuda.core]
                            [--host-calls-lib PATH] [--no-raw] [--no-import] [--no-reuse-off]
                            [--json OUT]
--json writes the tables (bench/report.py's format) for bench/results.py.
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

os.environ.setdefault("NUMBA_DISABLE_PERFORMANCE_WARNINGS", "1")  # one-block grids: no warnings
import empty_kernels  # bench/, next to this script
from report import Report  # bench/, next to this script

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
    host, out = np.ones(256, np.float32), np.empty(1024, np.float32)
    a, b, c, d = [cuda.to_device(np.ones(1024, np.float32)) for _ in range(4)]
    # the same kernels jitted without a signature: each launch types its arguments (compiled
    # here, by a first launch, so that no timed batch compiles)
    lazy = [cuda.jit(f) for f in empty_kernels.KERNELS]
    lazy[1][1, 32](a)
    lazy[4][1, 32](a, b, c, d)
    cuda.synchronize()
    ns = dict(cuda=cuda, np=np, ctx=ctx, s=s, ev=ev, ev2=ev2, dev=dev, host=host, out=out,
              kernels=kernels, launch=[kernels[i][1, 32] for i in range(5)], lazy=lazy,
              a=a, b=b, c=c, d=d)
    statements = {
        "current_context()": "cuda.current_context()",
        "get_current_device()": "cuda.get_current_device()",
        "gpus.current": "cuda.gpus.current",
        "Context.get_memory_info()": "ctx.get_memory_info()",
        "device attribute (MULTIPROCESSOR_COUNT)": "dev.MULTIPROCESSOR_COUNT",
        "stream() + drop, kept stream reused": "cuda.stream()",
        "default_stream()": "cuda.default_stream()",
        "event() + drop, kept event reused": "cuda.event()",
        "Event.record(stream)": "ev.record(s)",
        "Event.query()": "ev.query()",
        "Event.synchronize() (done)": "ev.synchronize()",
        "Event.wait(stream)": "ev.wait(s)",
        "event_elapsed_time(a, b)": "cuda.event_elapsed_time(ev, ev2)",
        "Stream.query() (idle)": "s.query()",
        "Stream.synchronize() (idle)": "s.synchronize()",
        "synchronize() (idle)": "cuda.synchronize()",
        "to_device(1 KiB) + drop, freed block reused": "cuda.to_device(host)",
        "copy_to_host(4 KiB)": "a.copy_to_host()",
        "copy_to_host(out) (4 KiB)": "a.copy_to_host(out)",
        "device_array(1 KiB) + drop, freed block reused": "cuda.device_array(256, np.float32)",
        "device_array(1 KiB, dtype=) + drop, freed block reused":
            "cuda.device_array(256, dtype=np.float32)",
        "device_array_like(host 1 KiB) + drop, freed block reused":
            "cuda.device_array_like(host)",
        "d[0] = 1.0 (one element stored)": "a[0] = 1.0",
        "d[0:256] = host (1 KiB stored)": "a[0:256] = host",
        "launch, no args": "kernels[0][1, 32]()",
        "launch, 1 array": "kernels[1][1, 32](a)",
        "launch, 2 arrays": "kernels[2][1, 32](a, b)",
        "launch, 3 arrays": "kernels[3][1, 32](a, b, c)",
        "launch, 4 arrays": "kernels[4][1, 32](a, b, c, d)",
        "launch, 4 arrays (configured once)": "launch[4](a, b, c, d)",
        "launch, 1 array (jit without signature)": "lazy[1][1, 32](a)",
        "launch, 4 arrays (jit without signature)": "lazy[4][1, 32](a, b, c, d)",
    }
    # a CuPy array (__cuda_array_interface__ naming CuPy's current stream): what interop costs
    try:
        import cupy
        ns["cp_a"] = cupy.ones(1024, cupy.float32)
        statements["launch, 1 CuPy array"] = "kernels[1][1, 32](cp_a)"
        lazy[1][1, 32](ns["cp_a"])
        cuda.synchronize()
        statements["launch, 1 CuPy array (jit without signature)"] = "lazy[1][1, 32](cp_a)"
    except ImportError:
        pass
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
    ns, statements, drain = cuda_api_statements(cuda, np, empty_kernels.jit_all(cuda),
                                                skip={"Stream.query() (idle)"})
    # numba-cuda keeps no stream, event or block for reuse: each of these makes a new one (and
    # queues its destroy or free on its pending-deallocation list), so its figure belongs with
    # the reuse-off rows, not beside nbcuda's reuse.
    return ns, {REUSED_TO_OFF.get(k, k): v for k, v in statements.items()
                if k not in REUSED_ONLY}, drain


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
    host, out = np.ones(256, np.float32), np.empty(1024, np.float32)
    arrays = [cupy.ones(1024, cupy.float32) for _ in range(4)]
    src = 'extern "C" __global__ void k0() {}\n' + "".join(
        f'extern "C" __global__ void k{i}(' + ", ".join(f"float* a{j}" for j in range(i)) +
        ") {}\n" for i in range(1, 5))
    mod = cupy.RawModule(code=src)
    kernels = [mod.get_function(f"k{i}") for i in range(5)]
    a, b, c, d = arrays
    ns = dict(cupy=cupy, s=s, ev=ev, ev2=ev2, dev=dev, host=host, out=out, kernels=kernels,
              a=a, b=b, c=c, d=d)
    return ns, {
        "get_current_device()": "cupy.cuda.Device()",
        "Context.get_memory_info()": "cupy.cuda.runtime.memGetInfo()",
        "device attribute (MULTIPROCESSOR_COUNT)": 'dev.attributes["MultiProcessorCount"]',
        # no pool of streams or events in CuPy: a real create + destroy each
        "stream() create+destroy, reuse off": "cupy.cuda.Stream()",
        "event() create+destroy, reuse off": "cupy.cuda.Event()",
        "Event.record(stream)": "ev.record(s)",
        "Event.query()": "ev.done",
        "Event.synchronize() (done)": "ev.synchronize()",
        "Event.wait(stream)": "s.wait_event(ev)",
        "event_elapsed_time(a, b)": "cupy.cuda.get_elapsed_time(ev, ev2)",
        "Stream.query() (idle)": "s.done",
        "Stream.synchronize() (idle)": "s.synchronize()",
        "synchronize() (idle)": "cupy.cuda.runtime.deviceSynchronize()",
        # CuPy's memory pool hands back the freed block: beside nbcuda's reuse
        "to_device(1 KiB) + drop, freed block reused": "cupy.asarray(host)",
        "copy_to_host(4 KiB)": "a.get()",
        "copy_to_host(out) (4 KiB)": "a.get(out=out)",
        "device_array(1 KiB) + drop, freed block reused": "cupy.empty(256, cupy.float32)",
        "device_array(1 KiB, dtype=) + drop, freed block reused":
            "cupy.empty(256, dtype=cupy.float32)",
        "d[0] = 1.0 (one element stored)": "a[0] = 1.0",
        "d[0:256] = host (1 KiB stored)": "a[0:256] = host",
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
        "stream() create+destroy, reuse off": "dev.create_stream().close()",
        "event() create+destroy, reuse off": "dev.create_event().close()",
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

# nbcuda's rows that time its reuse (a kept stream or event, a freed device block handed back:
# src/host/kept.c, reuse.c) -> the row timing the same call with NBCUDA_REUSE=0, where every
# create, destroy, allocation and free is the driver's own. The reuse rows go in their own
# table beside the raw calls they save and CuPy's memory pool; the reuse-off rows, measured in a
# child process (the switch is read once per process), go with the like-for-like rows.
REUSED_TO_OFF = {
    "stream() + drop, kept stream reused": "stream() create+destroy, reuse off",
    "event() + drop, kept event reused": "event() create+destroy, reuse off",
    "device_array(1 KiB) + drop, freed block reused": "device_array(1 KiB) alloc+free, reuse off",
    "to_device(1 KiB) + drop, freed block reused": "to_device(1 KiB) alloc+copy+free, reuse off",
}
# Reuse rows without a reuse-off twin (variants of device_array's arguments).
REUSED_ONLY = {"device_array(1 KiB, dtype=) + drop, freed block reused",
               "device_array_like(host 1 KiB) + drop, freed block reused"}
REUSED = set(REUSED_TO_OFF) | REUSED_ONLY

# Python operation -> the bench/host_calls row holding the driver call(s) it needs. numba's
# event() makes timing events, so the timing rows are the ones to compare with. For a reuse
# row it is the raw calls the reuse saves (what a call without reuse makes the driver do).
RAW_ROWS = {
    "current_context()": "current_context",
    "get_current_device()": "current_context",
    "default_stream()": "current_context",
    "Context.get_memory_info()": "memory_info",
    "stream() + drop, kept stream reused": "stream_create_destroy",
    "stream() create+destroy, reuse off": "stream_create_destroy",
    "event() + drop, kept event reused": "event_create_destroy_timing",
    "event() create+destroy, reuse off": "event_create_destroy_timing",
    "Event.record(stream)": "event_record_timing",
    "Event.query()": "event_query",
    "Event.synchronize() (done)": "event_synchronize",
    "Event.wait(stream)": "event_wait",
    "event_elapsed_time(a, b)": "event_elapsed_time",
    "Stream.query() (idle)": "stream_query",
    "Stream.synchronize() (idle)": "stream_synchronize",
    "synchronize() (idle)": "synchronize",
    "to_device(1 KiB) + drop, freed block reused": "alloc_htod_free_1k",
    "to_device(1 KiB) alloc+copy+free, reuse off": "alloc_htod_free_1k",
    "copy_to_host(4 KiB)": "malloc_dtoh_free_4k",
    "copy_to_host(out) (4 KiB)": "memcpy_dtoh_4k",
    "device_array(1 KiB) + drop, freed block reused": "alloc_free_1k",
    "device_array(1 KiB) alloc+free, reuse off": "alloc_free_1k",
    "launch, no args": "launch_default_stream",
}


# Rows whose bare call releases the GIL around the driver call, as nbcuda's (and any safe
# binding of a blocking call) does: holding it there deadlocks against a driver-thread callback
# that needs it. (Stream/Event.synchronize of finished work answer from a query, GIL held.)
BARE_RELEASES_GIL = {"synchronize() (idle)"}


def bare_binding(lib):
    """bench/bare_binding.c built for this interpreter into a temporary folder and imported:
    (module, None), or (None, why). It calls host_calls rows (lib) once per Python call."""
    import ctypes
    import importlib.util
    import sysconfig
    import tempfile
    out = os.path.join(tempfile.mkdtemp(prefix="nbcuda-bare-"),
                       "bare_binding" + sysconfig.get_config_var("EXT_SUFFIX"))
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    cmd = [cc, "-O2", "-shared", "-fPIC", "-I" + sysconfig.get_paths()["include"],
           os.path.join(ROOT, "bench", "bare_binding.c"), "-o", out]
    try:
        subprocess.run(cmd, check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as e:
        return None, f"building bare_binding failed: {getattr(e, 'stderr', '') or e}"[:300]
    spec = importlib.util.spec_from_file_location("bare_binding", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    lib.host_calls_raw_op.restype = ctypes.c_void_p
    lib.host_calls_raw_op.argtypes = [ctypes.c_char_p]
    return module, None


def host_calls_library(explicit):
    """(path, ctypes library) of libhost_calls.so set up in this process (its own copy of
    nbcuda makes the current context's objects), or (None, why). Looked for: --host-calls-lib
    alone if given, else build/gpu/tests/, then every build*/.../tests/, newest first."""
    import ctypes
    if explicit:
        found = [explicit]
    else:
        found = glob.glob(os.path.join(ROOT, "build*", "**", "tests", "libhost_calls.so"),
                          recursive=True)
        found.sort(key=os.path.getmtime, reverse=True)
        preferred = os.path.join(ROOT, "build", "gpu", "tests", "libhost_calls.so")
        if preferred in found:
            found.remove(preferred)
            found.insert(0, preferred)
    if not found:
        return None, "no libhost_calls.so found (build the tests, or pass --host-calls-lib)"
    why = []
    for path in found:
        try:
            lib = ctypes.CDLL(path)
            lib.host_calls_batch.restype = ctypes.c_double
            lib.host_calls_batch.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
        except (OSError, AttributeError) as e:
            why.append(f"{path}: {e}")
            continue
        if lib.host_calls_setup() != 0:
            why.append(f"{path}: host_calls_setup failed (see stderr)")
            continue
        return (path, lib), None
    return None, "; ".join(why)


def timeit_paired(loop, n, batches, drain, raw_batch, bare_loop=None, bare_capi_loop=None):
    """Like timeit, with one batch of raw driver calls (raw_batch(1, n)) and one of nbcuda's C
    API (raw_batch(0, n)) after each Python batch, and one batch each of the bare binding's
    Python calls of the raw row (bare_loop) and of the C API row (bare_capi_loop) when given.
    The Python statement and the bare calls run in alternating order (Python first in even
    rounds, last in odd ones), so a drift of the driver's state within a round does not favour
    either. Returns a dict of medians per call in seconds — "py", "raw", "capi", "bare",
    "bare_capi" (None without the loops) — of the per-round differences "overhead" (Python -
    raw), "over_bare" (Python - bare) with its interquartile range "over_bare_iqr" (q1, q3),
    and "binding" (Python - bare C API: what the binding adds to the C library's call)."""
    loop(min(n, 200))
    bares = [b for b in (bare_loop, bare_capi_loop) if b]
    for b in bares:
        b(min(n, 200))
    if drain:
        drain()

    def timed(f):
        t = time.perf_counter()
        f(n)
        dt = (time.perf_counter() - t) / n
        if drain:
            drain()
        return dt

    py, raw, capi, bare, bare_capi = [], [], [], [], []
    for k in range(batches):
        if k % 2 == 0:
            py.append(timed(loop))
        if bare_loop:
            bare.append(timed(bare_loop))
        if bare_capi_loop:
            bare_capi.append(timed(bare_capi_loop))
        if k % 2 == 1:
            py.append(timed(loop))
        r, c = raw_batch(1, n), raw_batch(0, n)
        if r < 0 or c < 0:
            raise RuntimeError("a host_calls batch failed")
        raw.append(r * 1e-9)
        capi.append(c * 1e-9)
    med = statistics.median

    def diffs(other):
        return [p - o for p, o in zip(py, other)] if other else None
    over_bare = diffs(bare)
    q = statistics.quantiles(over_bare, n=4) if over_bare and len(over_bare) > 1 else None
    return {"py": med(py), "raw": med(raw), "capi": med(capi),
            "bare": med(bare) if bare else None,
            "bare_capi": med(bare_capi) if bare_capi else None,
            "overhead": med(diffs(raw)),
            "over_bare": med(over_bare) if over_bare else None,
            "over_bare_iqr": (q[0], q[2]) if q else None,
            "binding": med(diffs(bare_capi)) if bare_capi else None}


# What the raw side of a reuse row does: the driver calls the reuse saves (and, for
# to_device, the copy both make).
RAW_CALLS = {
    "stream_create_destroy": "cuStreamCreate + cuStreamDestroy",
    "event_create_destroy_timing": "cuEventCreate + cuEventDestroy",
    "alloc_free_1k": "cuMemAlloc + cuMemFree",
    "alloc_htod_free_1k": "cuMemAlloc + cuMemFree (and the cuMemcpyHtoD both make)",
}

GOAL_NS = 150  # issue 4: each host call within raw driver + 150 ns


def measure(lib, ns, ops, args, raw_lib, bare, results, rows, order, notes, bare_rows):
    """Times every statement of ops for lib into results[lib]; for nbcuda, statements with a
    raw row also get the paired raw / C API figures (rows), and, unless they time nbcuda's
    reuse, the bare binding's (bare_rows names those)."""
    for name, stmt in ops.items():
        if name not in order:
            order.append(name)
        try:
            loop = compile_loop(stmt, ns)
            key = RAW_ROWS.get(name)
            if raw_lib and key:
                def raw_batch(which, n, key=key.encode()):
                    return raw_lib.host_calls_batch(key, which, n)
                bare_loop = bare_capi_loop = None
                if bare and name not in REUSED:  # the bare call makes the raw row's calls
                    op = raw_lib.host_calls_raw_op(key.encode())
                    gil = name in BARE_RELEASES_GIL
                    bare_loop = compile_loop("_bare()", {"_bare": bare.call(op or 0, gil)})
                    bare_capi_loop = compile_loop("_bare()",
                                                  {"_bare": bare.call(op or 0, gil, 0)})
                    bare_rows.add(name)
                rows[name] = timeit_paired(loop, args.n, args.batches, ns["_drain"], raw_batch,
                                           bare_loop, bare_capi_loop)
                results[lib][name] = rows[name]["py"]
            else:
                results[lib][name] = timeit(loop, args.n, args.batches, ns["_drain"])
        except Exception as e:
            notes.append(f"{lib} / {name}: {type(e).__name__}: {str(e)[:100]}")


def raw_setup(args, notes):
    """(path, ctypes library, bare binding module or None), or (None, None, None)."""
    if args.no_raw:
        return None, None, None
    found, why = host_calls_library(args.host_calls_lib)
    if not found:
        notes.append(f"raw driver figures: {why}")
        return None, None, None
    path, lib = found
    bare, why = bare_binding(lib)
    if why:
        notes.append(f"bare binding: {why}")
    return path, lib, bare


def reuse_off_child(args):
    """--reuse-off-child: this process runs with NBCUDA_REUSE=0; times nbcuda's reuse rows
    under their reuse-off names and writes the figures as JSON to --child-out."""
    if os.environ.get("NBCUDA_REUSE") != "0":
        raise SystemExit("--reuse-off-child needs NBCUDA_REUSE=0 in the environment")
    notes = []
    ns, ops, drain = setup_nbcuda()
    ns["_drain"] = drain
    ops = {REUSED_TO_OFF[k]: v for k, v in ops.items() if k in REUSED_TO_OFF}
    path, lib, bare = raw_setup(args, notes)
    results, rows, order, bare_rows = {"nbcuda": {}}, {}, [], set()
    measure("nbcuda", ns, ops, args, lib, bare, results, rows, order, notes, bare_rows)
    with open(args.child_out, "w") as f:
        json.dump({"results": results["nbcuda"], "rows": rows, "bare_rows": sorted(bare_rows),
                   "notes": notes}, f)


def reuse_off_rows(args, results, rows, notes, bare_rows):
    """Runs this script again with NBCUDA_REUSE=0 for the reuse-off rows and merges them."""
    import tempfile
    fd, out = tempfile.mkstemp(prefix="nbcuda-reuse-off-", suffix=".json")
    os.close(fd)
    cmd = [sys.executable, os.path.abspath(__file__), "--reuse-off-child", "--child-out", out,
           "--batches", str(args.batches), "--n", str(args.n)]
    if args.host_calls_lib:
        cmd += ["--host-calls-lib", args.host_calls_lib]
    if args.no_raw:
        cmd.append("--no-raw")
    p = subprocess.run(cmd, env=dict(os.environ, NBCUDA_REUSE="0"), capture_output=True,
                       text=True, timeout=1800)
    try:
        with open(out) as f:
            child = json.load(f)
    except (OSError, ValueError):
        notes.append(f"reuse-off rows: the child process failed ({p.returncode}): "
                     f"{p.stderr.strip()[-300:]}")
        return
    finally:
        os.unlink(out)
    results["nbcuda"].update(child["results"])
    rows.update(child["rows"])
    bare_rows.update(child["bare_rows"])
    notes.extend(f"reuse off: {n}" for n in child["notes"])


def fmt_us(v):
    return f"{v * 1e6:.2f}" if v is not None else "–"


def fmt_ns(v):
    return f"{v * 1e9:+.0f}" if v is not None else "–"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", type=int, default=15)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--only", default=",".join(LIBS))
    ap.add_argument("--host-calls-lib", default=None,
                    help="bench/host_calls.c's library (libhost_calls.so) for the raw figures")
    ap.add_argument("--no-raw", action="store_true", help="no raw driver figures")
    ap.add_argument("--no-import", action="store_true", help="skip the import-time table")
    ap.add_argument("--no-reuse-off", action="store_true",
                    help="skip the reuse-off rows (a child process with NBCUDA_REUSE=0)")
    ap.add_argument("--json", metavar="OUT", help="also write the tables as JSON to OUT")
    ap.add_argument("--reuse-off-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--child-out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.batches < 1 or args.n < 1:
        ap.error("--batches and --n must be >= 1")
    if args.reuse_off_child:
        return reuse_off_child(args)
    wanted = [x for x in args.only.split(",") if x in LIBS]
    with Report("host_py", args.json) as report:
        run(args, wanted, report)
    return 0


def run(args, wanted, report):
    results, order, notes = {}, [], []
    rows, bare_rows = {}, set()  # operation -> in-process raw/C API figures (seconds)
    raw_path = bare = None
    floor = None
    for lib in wanted:
        try:
            ns, ops, drain = LIBS[lib]()
        except Exception as e:  # not installed, or no GPU for it
            notes.append(f"{lib}: not measured ({type(e).__name__}: {str(e)[:100]})")
            continue
        ns["_drain"] = drain
        if floor is None:
            floor = timeit(compile_loop("pass", {}), args.n, args.batches)
        results[lib] = {}
        raw_lib = None
        if lib == "nbcuda":
            raw_path, raw_lib, bare = raw_setup(args, notes)
        measure(lib, ns, ops, args, raw_lib if lib == "nbcuda" else None, bare, results, rows,
                order, notes, bare_rows)
        if lib == "nbcuda" and not args.no_reuse_off:
            reuse_off_rows(args, results, rows, notes, bare_rows)
    libs = [lib for lib in wanted if lib in results]
    has_nb = "nbcuda" in libs
    others = [lib for lib in libs if lib != "nbcuda"]

    # Table 1: each row's calls do the same driver work on every side (reuse-off rows where
    # nbcuda's default reuses).
    like = []
    for name in order:
        if name in REUSED:
            if name in REUSED_TO_OFF:
                like.append(REUSED_TO_OFF[name])
        elif name not in like:
            like.append(name)
    if has_nb and not args.no_reuse_off:  # the reuse-off rows even when no other library has them
        for off in REUSED_TO_OFF.values():
            if off not in like and off in results["nbcuda"]:
                like.append(off)
    driver = os.environ.get("NBCUDA_DRIVER", "libcuda")
    report.section("Python host API: calls doing the same driver work as the raw column")
    report.text(f"Median of {args.batches} batches x {args.n} calls per row; driver: {driver}; "
                f"Python {sys.version.split()[0]}. Every row's calls make the same driver calls "
                "as its raw column: nbcuda's rows marked \"reuse off\" run in a process with "
                "NBCUDA_REUSE=0 (no stream, event or freed block kept), so they create and "
                "destroy for real; nbcuda's reuse has its own table below. numba-cuda's stream(), "
                "event() and allocations are real creates too (their destroys and frees are "
                "queued on its pending-deallocation list and made in batches); CuPy's "
                "Stream() and Event() and cuda.core's create_stream()/create_event() are real "
                "creates and destroys.")
    cols = ["operation"]
    if has_nb:
        cols += ["nbcuda µs", "raw driver µs", "overhead ns", "C API µs"]
        if bare:
            cols += ["bare binding µs", "nbcuda - bare ns", "(IQR)", "binding ns"]
    cols += [HEADERS[lib] for lib in others]
    table = []
    for name in like:
        cells = [name]
        if has_nb:
            r = rows.get(name)
            cells += [fmt_us(results["nbcuda"].get(name)), fmt_us(r and r["raw"]),
                      fmt_ns(r and r["overhead"]), fmt_us(r and r["capi"])]
            if bare:
                has = r is not None and r.get("bare") is not None
                iqr = r and r.get("over_bare_iqr")
                cells += [fmt_us(r["bare"]) if has else "–",
                          fmt_ns(r["over_bare"]) if has else "–",
                          f"{iqr[0] * 1e9:+.0f}…{iqr[1] * 1e9:+.0f}" if iqr else "–",
                          fmt_ns(r.get("binding")) if r else "–"]
        cells += [fmt_us(results[lib].get(name)) for lib in others]
        table.append(cells)
    report.table(cols, table)
    if floor is not None:
        report.text(f"The timing loop alone (`pass`) costs {floor * 1e9:.0f} ns per iteration; "
                    "it is part of every figure.")
    compared = [n for n in like if n in rows]
    if compared:
        report.text(f"Raw driver and C API figures: `{os.path.relpath(raw_path, ROOT)}` in the "
                    "same process, one C batch of each after every Python batch (host_calls "
                    "rows: " + ", ".join(sorted({RAW_ROWS[n] for n in compared})) + "); "
                    "overhead = median over batches of (Python - raw).")
        worst = max(compared, key=lambda n: rows[n]["overhead"])
        over = [n for n in compared if rows[n]["overhead"] * 1e9 > GOAL_NS]
        report.text(f"Over the {len(compared)} rows above with a raw figure (every one the same "
                    f"driver work on both sides): largest overhead "
                    f"{rows[worst]['overhead'] * 1e9:+.0f} ns ({worst}); "
                    + (f"{len(over)} over +{GOAL_NS} ns: " + ", ".join(
                        f"{n} ({rows[n]['overhead'] * 1e9:+.0f})" for n in over)
                       if over else f"none over +{GOAL_NS} ns") + ".")
        report.data("like_for_like", {n: rows[n] for n in compared})
    if bare_rows:
        report.text("Bare binding: `bench/bare_binding.c`, a Python callable (vectorcall, no "
                    "arguments, returns None) running the same raw row once per call, timed "
                    "after each Python batch; what no binding avoids. nbcuda - bare = median "
                    "over batches of (nbcuda - bare), with the interquartile range of those "
                    "differences (IQR): what nbcuda adds, its C library included. binding = "
                    "median over batches of (nbcuda - the same bare callable running nbcuda's C "
                    "API row): what the Python binding adds to the C library's call. The Python "
                    "statement and the bare calls alternate in order between batches. The bare "
                    "call releases the GIL for: " + ", ".join(sorted(BARE_RELEASES_GIL)) + ".")

    # Table 2: nbcuda's reuse beside the raw calls it saves and CuPy's memory pool.
    reused = [n for n in order if n in REUSED]
    if reused:
        report.section("Python host API: nbcuda's reuse of kept streams, events and memory")
        report.text("nbcuda keeps a stream that dies idle, an event that dies complete and a "
                    "freed device block of up to 4 MiB, and hands them to the next stream(), "
                    "event() or allocation of that size (src/host/kept.c, reuse.c; "
                    "NBCUDA_REUSE=0 turns it off). These rows time that path: the object made "
                    "and dropped at once, as `cuda.stream()` in a loop does. Beside it: the raw "
                    "driver calls the reuse saves, from the same batches (\"saved ns\" = median "
                    "over batches of raw - nbcuda), and CuPy's memory pool, which hands back "
                    "freed blocks too (CuPy keeps no streams or events: its creates are in the "
                    "table above, with nbcuda's reuse-off rows).")
        cols = ["operation", "nbcuda µs", "nbcuda C API µs", "<raw driver calls it saves",
                "raw driver µs", "saved ns"]
        if "cupy" in libs:
            cols.append("CuPy (pool) µs")
        table = []
        for name in reused:
            r = rows.get(name)
            key = RAW_ROWS.get(name)
            cells = [name, fmt_us(results.get("nbcuda", {}).get(name)), fmt_us(r and r["capi"]),
                     RAW_CALLS.get(key, "–") if r else "–", fmt_us(r and r["raw"]),
                     fmt_ns(-r["overhead"]) if r else "–"]
            if "cupy" in libs:
                cells.append(fmt_us(results["cupy"].get(name)))
            table.append(cells)
        report.table(cols, table)
        report.data("reuse", {n: rows[n] for n in reused if n in rows})

    if not args.no_import:
        report.section("Import and first context (median of 5 fresh interpreters)")
        table = []
        for lib in ("nbcuda", "numba"):
            if lib not in wanted:
                continue
            t = import_time(lib)
            table.append([lib] + ([f"{t[0]:.1f}", f"{t[1]:.1f}"] if t else ["–", "–"]))
        report.table(["library", "import ms", "first current_context() ms"], table)
    if notes:
        report.section("host_py.py notes")
        for n in notes:
            report.text(f"- {n}")


if __name__ == "__main__":
    sys.exit(main())
