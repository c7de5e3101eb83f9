"""host_py_callgrind.py — instructions per Python host call, measured with callgrind.

Usage:
    python bench/host_py_callgrind.py OP N        run statement OP N times (under valgrind)
    python bench/host_py_callgrind.py --measure [OP ...] [--n1 2000] [--n2 12000] [--python P]

The second form runs `valgrind --tool=callgrind` twice per operation (N = n1 and n2) on the
first form and prints a markdown table of instructions per call: the whole process (total),
the C API functions the binding calls (inclusive, test driver included), the raw driver entry
points (the test driver's cu* functions) and what is left to the binding and the interpreter
(total - C API). Import, setup and warm-up cancel in the difference. Environment: the module
must be importable (PYTHONPATH) and NBCUDA_DRIVER must name the test driver
(build/<dir>/tests/libnbcuda_testdriver.so). Run under the real interpreter, not a pyenv shim
(--python, default sys.executable), with PYTHONHASHSEED=0 (set here). Used for
bench/RESULTS.md "Python host calls, instructions per call (dev box, test driver, callgrind)".

The same method as bench/launch_callgrind.py, for every row of bench/host_py.py that has a
raw driver figure, plus "noop" (a call of a C builtin returning a cached object: the cost of
any call statement in the loop) and "pass".
"""
import os
import re
import subprocess
import sys
import tempfile

import empty_kernels  # bench/, next to this script

# name: (statement, C API entry points the binding calls for it, whose inclusive counts add up
# to "C API"). When the binding calls nbc_require_context, the functions it runs inside it
# (INSIDE_REQUIRE) are part of its inclusive count and not added again; the binding's small
# trampoline inside it counts as C API.
INSIDE_REQUIRE = {"nbc_current_context", "nbc_mem_alloc", "nbc_event_create",
                  "nbc_stream_create"}
OPS = {
    "pass": ("pass", []),
    "noop": ("_noop()", []),
    "current_context": ("cuda.current_context()", ["nbc_current_context"]),
    "get_current_device": ("cuda.get_current_device()", ["nbc_get_current_device"]),
    "get_memory_info": ("ctx.get_memory_info()", ["nbc_context_get_memory_info"]),
    "stream": ("cuda.stream()", ["nbc_stream_create", "nbc_stream_destroy"]),
    "default_stream": ("cuda.default_stream()", ["nbc_require_context", "nbc_stream_destroy"]),
    "event": ("cuda.event()", ["nbc_event_create", "nbc_event_destroy"]),
    "event_record": ("ev.record(s)", ["nbc_event_record"]),
    "event_query": ("ev.query()", ["nbc_event_query"]),
    "event_synchronize": ("ev.synchronize()", ["nbc_event_query", "nbc_event_synchronize"]),
    "event_wait": ("ev.wait(s)", ["nbc_event_wait"]),
    "event_elapsed_time": ("cuda.event_elapsed_time(ev, ev2)", ["nbc_event_elapsed_time"]),
    "stream_query": ("s.query()", ["nbc_stream_query"]),
    "stream_synchronize": ("s.synchronize()", ["nbc_stream_query", "nbc_stream_synchronize"]),
    "synchronize": ("cuda.synchronize()", ["nbc_synchronize"]),
    "to_device": ("cuda.to_device(host)", ["nbc_mem_alloc_current", "nbc_memcpy_htod",
                                           "nbc_mem_free"]),
    "copy_to_host": ("a.copy_to_host()", ["nbc_memcpy_dtoh"]),
    "copy_to_host_into": ("a.copy_to_host(out)", ["nbc_memcpy_dtoh"]),
    "device_array": ("cuda.device_array(256, np.float32)", ["nbc_mem_alloc_current",
                                                           "nbc_mem_free"]),
    "launch0": ("k0[1, 32]()", ["nbc_launch_packed"]),
    "launch1": ("k1[1, 32](a)", ["nbc_launch_packed"]),
    "launch2": ("k2[1, 32](a, b)", ["nbc_launch_packed"]),
    "launch3": ("k3[1, 32](a, b, c)", ["nbc_launch_packed"]),
    "launch4": ("k4[1, 32](a, b, c, d)", ["nbc_launch_packed"]),
    "launch4_configured": ("L4(a, b, c, d)", ["nbc_launch_packed"]),
    "launch0_stream": ("k0[1, 32, s]()", ["nbc_launch_packed"]),
    "launch1_lazy": ("z1[1, 32](a)", ["nbc_launch_packed"]),
    "launch4_lazy": ("z4[1, 32](a, b, c, d)", ["nbc_launch_packed"]),
}


def run(op, n):
    import numpy as np
    import nbcuda as cuda
    ctx = cuda.current_context()
    s = cuda.stream()
    ev, ev2 = cuda.event(), cuda.event()
    ev.record(s)
    ev2.record(s)
    s.synchronize()
    host = np.ones(256, np.float32)
    a, b, c, d = [cuda.to_device(np.ones(1024, np.float32)) for _ in range(4)]
    out = np.empty(1024, np.float32)
    ns = dict(cuda=cuda, np=np, ctx=ctx, s=s, ev=ev, ev2=ev2, host=host, a=a, b=b, c=c, d=d,
              out=out, _noop=int)
    if op.startswith("launch"):
        for i, k in enumerate(empty_kernels.jit_all(cuda)):
            ns[f"k{i}"] = k
        ns["L4"] = ns["k4"][1, 32]
        ns["z1"], ns["z4"] = cuda.jit(empty_kernels.k1), cuda.jit(empty_kernels.k4)
    stmt = OPS[op][0]
    src = f"def _loop(_n):\n    for _ in range(_n):\n        {stmt}\n"
    exec(compile(src, f"<{op}>", "exec"), ns)
    loop = ns["_loop"]
    loop(200)  # warm-up: caches, lazily made objects
    cuda.synchronize()
    loop(n)
    cuda.synchronize()


LINE = re.compile(r"^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S.*?)\s*$")


def annotate(path):
    """{function name: inclusive count} and the program total of a callgrind output."""
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--auto=no",
                          "--threshold=100", path],
                         capture_output=True, text=True, check=True).stdout
    total, funcs = 0, {}
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        count, rest = int(m.group(1).replace(",", "")), m.group(2)
        if rest.startswith("PROGRAM TOTALS"):
            total = count
            continue
        name = rest.split(" [")[0]
        name = name.split(":", 1)[1] if ":" in name else name
        funcs[name] = max(funcs.get(name, 0), count)
    return total, funcs


def measure_one(python, op, n):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "cg.out")
        env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1",
                   NUMBA_DISABLE_PERFORMANCE_WARNINGS="1")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={path}",
                        python, os.path.abspath(__file__), op, str(n)],
                       env=env, check=True, capture_output=True)
        return annotate(path)


def measure(ops, n1, n2, python):
    print("| operation | statement | total | C API | raw driver (cu*) | C library own | "
          "binding + interpreter |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for op in ops:
        (t1, f1), (t2, f2) = measure_one(python, op, n1), measure_one(python, op, n2)
        per = lambda a, b: (b - a) / (n2 - n1)
        total = per(t1, t2)
        names = OPS[op][1]
        if f2.get("nbc_require_context", 0) > f1.get("nbc_require_context", 0):
            names = [f for f in names if f not in INSIDE_REQUIRE]
        capi = sum(per(f1.get(f, 0), f2.get(f, 0)) for f in names)
        raw = sum(per(f1.get(f, 0), f2.get(f, 0)) for f in set(f1) | set(f2)
                  if re.fullmatch(r"cu[A-Z]\w*", f))
        print(f"| {op} | `{OPS[op][0]}` | {total:.0f} | {capi:.0f} | {raw:.0f} | "
              f"{capi - raw:.0f} | {total - capi:.0f} |", flush=True)


def main(argv):
    if argv and argv[0] == "--measure":
        args, ops, n1, n2, python = argv[1:], [], 2000, 12000, sys.executable
        while args:
            a = args.pop(0)
            if a == "--n1":
                n1 = int(args.pop(0))
            elif a == "--n2":
                n2 = int(args.pop(0))
            elif a == "--python":
                python = args.pop(0)
            else:
                ops.append(a)
        measure(ops or list(OPS), n1, n2, python)
    elif len(argv) == 2 and argv[0] in OPS:
        run(argv[0], int(argv[1]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
