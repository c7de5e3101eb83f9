"""Compile time of every corpus case: nbcuda next to numba-cuda's cuda.compile (issue 3).

For each case of tests/corpus (the CASES lists), numba-cuda compiles the same Python function
the way its users do, for the same compute capability and to PTX:

  - device functions: ``cuda.compile(f, sig, device=True, abi="c", cc=cc)``
  - kernels:          ``cuda.compile_ptx(f, sig, device=False, cc=cc)``

and the script measures

  - warm: the median of --repeat compiles in this process, after one warm-up compile of the
    same case (numba-cuda keeps no cache of these calls: each one runs its whole pipeline);
  - first call: the first compile in a fresh Python process (this script run again with
    --child KEY), median of --first-runs processes. These run after every warm figure is
    taken, --jobs cases at a time (a quarter of the CPUs, at most 4: one core each, so they
    hardly disturb one another on the GPU machine's 16 cores; 1 on a small machine). The child imports numba-cuda before it
    starts the clock, so "first call" is the compile call alone; the import and the whole
    process (interpreter start to result) are reported beside it.

nbcuda's figures come from the compile_bench binary (bench/compile.c, built with the tests:
build/gpu/tests/compile_bench on the GPU machine, --bench-bin to change it), run with --json
for the same cases, cc and repeat counts: its warm figure is the median nbc_compile, its first
call the first nbc_compile in a fresh process (which loads libNVVM and reads libdevice).

Output: a markdown table with both sides and the speedups, then the medians and the issue's
goals (median speedup >= 8x warm and >= 20x on the first call; nbcuda's front end + lowering
<= 10 % of libNVVM's time). A case one side cannot compile is shown with its error, and the
others go on. --json OUT also writes the tables and every figure (bench/report.py's format,
the figures under "data") for bench/results.py.

Runs without a GPU (numba-cuda compiles to PTX for a given cc without a device), so it can be
developed on a machine with only the CUDA toolkit; on the GPU machine tests/gpu/run.sh runs it
from the repository root as ``python3 bench/compile_numba.py``.
"""
import argparse
import concurrent.futures
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from report import Report  # noqa: E402  bench/, next to this script
DEFAULT_BENCH_BIN = os.path.join("build", "gpu", "tests", "compile_bench")


def prepare_numba():
    """numba-cuda 0.30 uses numpy names numpy 2.x removed: alias them before importing numba.
    The corpus modules import nbcuda when it is installed; numba-cuda must see numba.cuda
    instead, so nbcuda is hidden from them."""
    import numpy

    for old, new in (("row_stack", "vstack"), ("in1d", "isin"), ("trapz", "trapezoid")):
        if not hasattr(numpy, old):
            setattr(numpy, old, getattr(numpy, new))
    if os.path.isdir("/usr/local/cuda"):
        os.environ.setdefault("CUDA_HOME", "/usr/local/cuda")
    sys.modules["nbcuda"] = None  # `import nbcuda` raises ImportError
    warnings.simplefilter("ignore")


def load_module(path):
    name = "corpus_" + os.path.basename(path)[:-3]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def corpus_cases(corpus):
    """(key, file, name, signature, kind) for every case, files in name order (as
    compile_bench reads them). The key is compile_bench's: "name:signature"."""
    cases = []
    for fn in sorted(os.listdir(corpus)):
        if not fn.endswith(".py"):
            continue
        path = os.path.join(corpus, fn)
        mod = load_module(path)
        for case in getattr(mod, "CASES", []):
            name, sig, kind = case[0], case[1], case[2]
            cases.append({"key": f"{name}:{sig}", "file": path, "name": name, "sig": sig,
                          "kind": kind})
    return cases


def numba_compile_fn(case, cc):
    """A callable that compiles the case once with numba-cuda."""
    from numba import cuda

    mod = load_module(case["file"])
    fn = getattr(mod, case["name"])
    sig = case["sig"]
    if case["kind"] == "device":
        return lambda: cuda.compile(fn, sig, device=True, abi="c", cc=cc)
    return lambda: cuda.compile_ptx(fn, sig, device=False, cc=cc)


def first_line(exc):
    """The exception in one table cell: its type and message, lines joined."""
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text[:200].replace("|", "/")


class NvvmClock:
    """Times numba-cuda's own libNVVM calls (verify, lazy libdevice add, compile) by wrapping
    the methods of its CompilationUnit, so the table can show how much of numba-cuda's time
    is libNVVM on numba's IR. numba-cuda internals: when they are not where expected the
    column stays empty and nothing else changes."""

    def __init__(self):
        self.ms = 0.0
        self.ok = False
        try:
            from numba.cuda.cudadrv import nvvm
        except ImportError:
            return
        unit = getattr(nvvm, "CompilationUnit", None)
        names = ("verify", "lazy_add_module", "compile")
        if unit is None or not all(callable(getattr(unit, n, None)) for n in names):
            return
        for n in names:
            setattr(unit, n, self._wrap(getattr(unit, n)))
        self.ok = True

    def _wrap(self, method):
        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                self.ms += (time.perf_counter() - t0) * 1e3

        return timed


def numba_warm(case, cc, repeat, clock):
    """(median ms of repeat compiles after a warm-up, median ms of libNVVM inside them or
    None, error or None)."""
    try:
        compile_once = numba_compile_fn(case, cc)
        compile_once()
        times, nvvm = [], []
        for _ in range(repeat):
            clock.ms = 0.0
            t0 = time.perf_counter()
            compile_once()
            times.append((time.perf_counter() - t0) * 1e3)
            nvvm.append(clock.ms)
        return (statistics.median(times), statistics.median(nvvm) if clock.ok else None,
                None)
    except Exception as exc:  # a case numba-cuda cannot compile is reported, not fatal
        return None, None, first_line(exc)


def child_main(key, corpus, cc):
    """--child KEY: import numba-cuda, then time the first compile of one case."""
    t_start = time.perf_counter()
    prepare_numba()
    from numba import cuda  # noqa: F401  (the import is timed on its own)

    t_import = time.perf_counter()
    case = next((c for c in corpus_cases(corpus) if c["key"] == key), None)
    if case is None:
        print(json.dumps({"error": f"no case {key}"}))
        return 1
    try:
        compile_once = numba_compile_fn(case, cc)
        t0 = time.perf_counter()
        compile_once()
        t1 = time.perf_counter()
    except Exception as exc:
        print(json.dumps({"error": first_line(exc)}))
        return 1
    print(json.dumps({"first_ms": (t1 - t0) * 1e3, "import_ms": (t_import - t_start) * 1e3}))
    return 0


def numba_first(case, args):
    """Medians of the first compile, the import and the whole process over fresh processes."""
    firsts, imports, processes = [], [], []
    for _ in range(args.first_runs):
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", case["key"],
                            "--corpus", args.corpus, "--cc", args.cc],
                           capture_output=True, text=True)
        wall = (time.perf_counter() - t0) * 1e3
        try:
            out = json.loads(r.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            err = (r.stderr.strip().splitlines() or ["no output"])[-1]
            return None, f"child process failed ({r.returncode}): {err[:200]}"
        if "error" in out:
            return None, out["error"]
        firsts.append(out["first_ms"])
        imports.append(out["import_ms"])
        processes.append(wall)
    if not firsts:
        return None, None
    return {"first_ms": statistics.median(firsts), "import_ms": statistics.median(imports),
            "process_ms": statistics.median(processes)}, None


def run_nbcuda(args):
    """compile_bench --json for the same cases; {key: case} or an error string."""
    binary = args.bench_bin
    if not os.path.isabs(binary) and not os.path.exists(binary):
        binary = os.path.join(ROOT, binary)
    if not os.path.exists(binary):
        return None, f"compile_bench not found at {args.bench_bin} (build the tests, or --bench-bin)"
    cmd = [binary, "--json", "--cc", args.cc, "--repeat", str(args.repeat),
           "--first-runs", str(args.nbcuda_first_runs), "--corpus", args.corpus]
    if args.case:
        cmd += ["--case", args.case]
    r = subprocess.run(cmd, capture_output=True, text=True)
    try:
        data = json.loads(r.stdout)
    except ValueError:
        return None, f"compile_bench failed ({r.returncode}): {r.stderr.strip()[-300:]}"
    return {c["key"]: c for c in data["cases"]}, None


def fmt(v, digits=2):
    return "–" if v is None else f"{v:.{digits}f}"


def times(v):
    return "–" if v is None else f"{v:.1f}×"


def ratio(a, b):
    return None if a is None or b is None or b <= 0 else a / b


def report_rows(rows, args, nb_error, report, versions):
    """The comparison as a bench/report.py section: the table, then the medians and goals."""
    report.section("Compile time — nbcuda next to numba-cuda (`bench/compile_numba.py`)")
    report.text(f"{versions}. Compile time per corpus case: cc {args.cc}, PTX, -opt=3 "
                f"(numba-cuda's default). Warm: median of {args.repeat} compiles after a warm-up "
                f"in the same process. First call: the first compile in a fresh process, median "
                f"of {args.first_runs} processes for numba-cuda and {args.nbcuda_first_runs} for "
                "nbcuda.")
    if nb_error:
        report.text(f"nbcuda: {nb_error}")
    table = []
    for r in rows:
        nb, nu = r["nbcuda"], r["numba"]
        ok = bool(nb and nb.get("ok"))
        nb_warm = nb.get("total_ms") if ok else None
        nb_nvvm = nb.get("nvvm_ms") if ok else None
        nb_first = nb.get("first_ms") if ok else None
        nu_warm, nu_first = nu.get("warm_ms"), nu.get("first_ms")
        r["warm_speedup"] = ratio(nu_warm, nb_warm)
        r["first_speedup"] = ratio(nu_first, nb_first)
        cells = [f"`{r['key']}`", r["kind"], fmt(nb_warm), fmt(nb_nvvm), fmt(nu_warm),
                 fmt(nu.get("nvvm_ms")),
                 times(r["warm_speedup"]),
                 fmt(nb_first), fmt(nu_first),
                 times(r["first_speedup"])]
        errors = []
        if nb and not nb.get("ok"):
            errors.append("nbcuda: " + nb.get("error", "failed")[:160])
        if nu.get("error"):
            errors.append("numba-cuda: " + nu["error"])
        if errors:
            cells[-1] += " — " + "; ".join(errors)
        table.append(cells)
    report.table(["case", "<kind", "nbcuda warm ms", "nbcuda libNVVM ms", "numba-cuda warm ms",
                  "numba-cuda libNVVM ms", "warm speedup", "nbcuda first ms",
                  "numba-cuda first ms", "first speedup"], table)

    def med(values):
        values = [v for v in values if v is not None]
        return (statistics.median(values), len(values)) if values else (None, 0)

    warm, nw = med(r["warm_speedup"] for r in rows)
    first, nf = med(r["first_speedup"] for r in rows)
    shares = [r["nbcuda"]["front_share"] for r in rows
              if r["nbcuda"] and r["nbcuda"].get("ok")]
    imports, _ = med(r["numba"].get("import_ms") for r in rows)
    procs_nu, _ = med(r["numba"].get("process_ms") for r in rows)
    procs_nb, _ = med(r["nbcuda"].get("process_ms") if r["nbcuda"] else None for r in rows)

    def goal(value, target):
        return "no data" if value is None else ("met" if value >= target else "not met")

    report.text(f"Median warm speedup {times(warm)} over {nw} cases (goal ≥ 8×: "
                f"{goal(warm, 8)}); median first-call speedup {times(first)} over {nf} cases "
                f"(goal ≥ 20×: {goal(first, 20)}).")
    if shares:
        report.text(f"nbcuda front end + lowering: median {statistics.median(shares):.1f} %, "
                    f"largest {max(shares):.1f} % of libNVVM's time (goal ≤ 10 %: "
                    f"{'met' if max(shares) <= 10 else 'not met'}).")
    nb_front, _ = med(r["nbcuda"]["front_ms"] if r["nbcuda"] and r["nbcuda"].get("ok") else None
                      for r in rows)
    nu_front, _ = med(r["numba"]["warm_ms"] - r["numba"]["nvvm_ms"]
                      if r["numba"].get("nvvm_ms") is not None else None for r in rows)
    if nb_front is not None and nu_front is not None:
        report.text(f"Time outside libNVVM per warm compile (median): nbcuda {nb_front:.3f} ms, "
                    f"numba-cuda {nu_front:.2f} ms.")
    report.text(f"Whole fresh process to result (median): nbcuda {fmt(procs_nb, 1)} ms, "
                f"numba-cuda {fmt(procs_nu, 1)} ms, of which importing numba-cuda "
                f"{fmt(imports, 1)} ms.")
    failed = [r["key"] for r in rows if r["numba"].get("error")]
    if failed:
        report.text(f"numba-cuda could not compile {len(failed)} case(s): {', '.join(failed)}.")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bench-bin", default=DEFAULT_BENCH_BIN,
                   help="the compile_bench binary (default %(default)s, from the repo root)")
    p.add_argument("--corpus", default=os.path.join(ROOT, "tests", "corpus"))
    p.add_argument("--cc", default="9.0", help="compute capability M.m (default 9.0)")
    p.add_argument("--repeat", type=int, default=10, help="warm compiles per case (default 10)")
    p.add_argument("--first-runs", type=int, default=3,
                   help="fresh numba-cuda processes per case (default 3)")
    p.add_argument("--nbcuda-first-runs", type=int, default=5,
                   help="fresh nbcuda processes per case (default 5)")
    p.add_argument("--jobs", type=int, default=max(1, min(4, (os.cpu_count() or 1) // 4)),
                   help="first-call processes run at once (default: a quarter of the CPUs, "
                   "1 to 4; %(default)s here)")
    p.add_argument("--case", help="one case: name:signature, or a function name")
    p.add_argument("--no-nbcuda", action="store_true", help="numba-cuda's figures only")
    p.add_argument("--json", metavar="OUT", help="also write every figure as JSON to OUT")
    p.add_argument("--child", metavar="KEY", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.jobs < 1 or args.repeat < 1 or args.first_runs < 0 or args.nbcuda_first_runs < 0:
        p.error("--jobs and --repeat must be >= 1, --first-runs >= 0")
    try:
        major, minor = (int(x) for x in args.cc.split("."))
    except ValueError:
        p.error(f"--cc expects M.m (e.g. 9.0), not {args.cc!r}")
    cc = (major, minor)
    args.corpus = os.path.abspath(args.corpus)
    if args.child:
        return child_main(args.child, args.corpus, cc)

    prepare_numba()
    try:
        import numba_cuda
        from numba import cuda  # noqa: F401
    except Exception as exc:  # the comparison needs numba-cuda; say so instead of a traceback
        print(f"compile_numba.py: numba-cuda cannot be imported ({first_line(exc)}); "
              "pip install numba-cuda", file=sys.stderr)
        return 1
    cases = [c for c in corpus_cases(args.corpus)
             if not args.case or args.case in (c["key"], c["name"])]
    if not cases:
        print(f"no case {args.case or ''} in {args.corpus}", file=sys.stderr)
        return 1
    nb, nb_error = (None, "skipped (--no-nbcuda)") if args.no_nbcuda else run_nbcuda(args)

    rows = []
    clock = NvvmClock()
    t_start = time.perf_counter()

    def progress(what, i):
        print(f"  {what} [{i}/{len(cases)}] ({time.perf_counter() - t_start:.0f} s)",
              file=sys.stderr, flush=True)

    # Warm figures first, alone, so that no first-call process competes with them.
    for i, case in enumerate(cases):
        numba = {}
        numba["warm_ms"], numba["nvvm_ms"], numba["error"] = numba_warm(case, cc, args.repeat,
                                                                     clock)
        rows.append({"key": case["key"], "kind": case["kind"], "numba": numba,
                     "nbcuda": (nb or {}).get(case["key"])})
        progress("warm", i + 1)
    # First calls: fresh processes, --jobs cases at a time.
    todo = [(case, row) for case, row in zip(cases, rows)
            if row["numba"]["error"] is None and args.first_runs > 0]
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(numba_first, case, args): row for case, row in todo}
        for i, fut in enumerate(concurrent.futures.as_completed(futures)):
            first, err = fut.result()
            futures[fut]["numba"].update(first or {})
            futures[fut]["numba"]["error"] = err
            progress("first call", i + 1)
    with Report("compile_numba", args.json) as report:
        report_rows(rows, args, nb_error, report,
                    f"numba-cuda {numba_cuda.__version__}, Python {sys.version.split()[0]}")
        report.data("figures", {"cc": args.cc, "repeat": args.repeat,
                                "first_runs": args.first_runs,
                                "numba_cuda": numba_cuda.__version__, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
