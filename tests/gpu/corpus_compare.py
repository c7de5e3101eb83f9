"""Runs every corpus case compiled by nbcuda and by numba-cuda on the same fresh random inputs
and compares the results (GPU machine only).

nbcuda's side goes through the `nbcuda` CLI (Python source -> PTX), the PTX is loaded with
CuPy's RawModule and launched with numba's flattened array arguments (meminfo, parent, nitems,
itemsize, data, shape..., strides...), so this checks the compiler end to end without the
Python module. numba-cuda's side is `numba.cuda.jit(sig)` of the same function.

Device functions are run through a small wrapper kernel `out[i] = f(a0[i], a1[i], ...)` added
to the module's source, compiled the same way by both. Integers must match bit for bit,
floats within 2 ulp (or the case's relative tolerance for order-dependent reductions).

With --bench, memory-bound kernels are also timed (CUDA events, median of many launches)
against numba-cuda's compilation of the same kernel.

Usage: corpus_compare.py --cli build/nbcuda --corpus tests/corpus [--bench] [--json out.json]
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np

for old, new in (("row_stack", "vstack"), ("in1d", "isin"), ("trapz", "trapezoid")):
    if not hasattr(np, old):
        setattr(np, old, getattr(np, new))

import cupy as cp  # noqa: E402


def load_module(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def generate(rng, gen, dtype, shape):
    dtype = np.dtype(dtype)
    if not isinstance(gen, str):
        return np.full(shape, gen, dtype=dtype)
    if gen == "normal":
        return rng.standard_normal(shape).astype(dtype)
    if gen == "uniform":
        return rng.random(shape).astype(dtype)
    if gen == "uniform_0_1e6":
        return (rng.random(shape) * 1e6).astype(dtype)
    if gen == "ints":
        if dtype.kind == "f" and dtype.itemsize <= 2:
            # float16 holds every integer up to 2048 exactly (1e6 would be inf)
            return rng.integers(-2048, 2048, size=shape, endpoint=True).astype(dtype)
        if dtype.itemsize <= 2:
            info = np.iinfo(dtype)
            return rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
        return rng.integers(-1000000, 1000000, size=shape, endpoint=True).astype(dtype)
    if gen == "small_ints":
        return rng.integers(0, 7, size=shape, endpoint=True).astype(dtype)
    if gen == "positive_ints":
        return rng.integers(1, 1000000, size=shape, endpoint=True).astype(dtype)
    if gen == "ints_nonzero":
        # float16: up to 2048, which it holds exactly (1e6 would be inf)
        top = 2048 if dtype.kind == "f" and dtype.itemsize <= 2 else 1000000
        v = rng.integers(1, top, size=shape, endpoint=True)
        return (v * rng.choice([-1, 1], size=shape)).astype(dtype)
    if gen == "zeros":
        return np.zeros(shape, dtype)
    if gen == "ones":
        return np.ones(shape, dtype)
    if gen == "range":
        return np.arange(int(np.prod(shape))).reshape(shape).astype(dtype)
    raise ValueError(f"unknown generator {gen}")


def poison(dtype, shape):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.full(shape, np.nan, dtype)
    return np.full(shape, np.iinfo(dtype).max if dtype.kind in "iu" else 1, dtype)


class Nbcuda:
    """Compiles with the nbcuda CLI and launches the PTX with CuPy."""

    def __init__(self, cli):
        self.cli = cli
        self.tmp = tempfile.mkdtemp(prefix="nbcuda-corpus-")
        self.count = 0

    def compile(self, source, name, sig):
        # One file name per compile: CuPy caches modules by path.
        self.count += 1
        path = os.path.join(self.tmp, f"{name}_{self.count}.py")
        with open(path, "w") as f:
            f.write(source)
        out = os.path.join(self.tmp, f"{name}_{self.count}.ptx")
        cmd = [self.cli, "compile", f"{path}:{name}", "--sig", sig, "--kernel", "--cc", "9.0",
               "--abi", "numba", "-o", out, "--verbose"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"nbcuda compile failed ({r.returncode}):\n{r.stderr}")
        ptx = open(out).read()
        entry = [l for l in ptx.splitlines() if ".entry" in l][0]
        symbol = entry.split(".entry")[1].strip().split("(")[0].strip()
        if "nbc_fp16_" in ptx or "cudaCG" in ptx:
            # code that calls numba.cuda.fp16's wrappers or cudadevrt is linked first: the
            # CLI's --output cubin links what it needs (nvJitLink) for sm_90
            out = out[:-4] + ".cubin"
            cmd[cmd.index("-o") + 1] = out
            cmd += ["--output", "cubin"]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError(f"nbcuda compile --output cubin failed:\n{r.stderr}")
        return cp.RawModule(path=out).get_function(symbol)

    @staticmethod
    def flatten(values, arg_types):
        params = []
        for v, t in zip(values, arg_types):
            if isinstance(v, cp.ndarray):
                params += [np.uint64(0), np.uint64(0), np.int64(v.size), np.int64(v.itemsize),
                           np.uint64(v.data.ptr)]
                params += [np.int64(s) for s in v.shape]
                params += [np.int64(s) for s in v.strides]
            else:
                params.append(np.dtype(t).type(v))
        return params

    def launch(self, kern, launch, values, arg_types):
        grid, block = launch
        grid = grid if isinstance(grid, tuple) else (grid,)
        block = block if isinstance(block, tuple) else (block,)
        kern(grid, block, tuple(self.flatten(values, arg_types)))
        cp.cuda.runtime.deviceSynchronize()


def numba_namespace(source, modname):
    """The module's globals with numba-cuda's own `cuda`: the corpus imports nbcuda first when
    it is installed, and numba-cuda cannot type nbcuda's kernel-language names."""
    source = source.replace("import nbcuda as cuda", "raise ImportError", 1)
    ns = {"__name__": f"numba_{modname}"}
    exec(compile(source, f"<numba {modname}>", "exec"), ns)
    return ns


def numba_kernel(source, modname, name, sig, device_function=None):
    """numba-cuda's kernel for `name`; device_function, when given, is a plain Python function
    of the same source that the kernel calls: numba needs it marked as a device function."""
    from numba import cuda
    ns = numba_namespace(source, modname)
    if device_function and not hasattr(ns[device_function], "py_func"):
        ns[device_function] = cuda.jit(device=True)(ns[device_function])
    return cuda.jit(sig)(ns[name])


def wrapper_source(name, nargs):
    args = ", ".join(f"a{k}" for k in range(nargs))
    call = ", ".join(f"a{k}[i]" for k in range(nargs))
    return textwrap.dedent(f"""

        def nbwrap_{name}(out, {args}):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = {name}({call})
        """)


def ulp_diff(a, b):
    a = np.asarray(a)
    b = np.asarray(b)
    if a.dtype.kind != "f":
        return int(np.count_nonzero(a != b))
    both_nan = np.isnan(a) & np.isnan(b)
    same = (a == b) | both_nan
    spacing = np.spacing(np.maximum(np.abs(a), np.abs(b)).astype(a.dtype))
    diff = np.where(same, 0, np.abs(a.astype(np.float64) - b.astype(np.float64)) / spacing)
    return float(np.nanmax(diff)) if diff.size else 0.0


def check(name, a, b, tolerance, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "iub":
        bad = int(np.count_nonzero(a != b))
        return bad == 0, f"{bad} integer mismatches"
    if tolerance:
        denom = np.linalg.norm(b.astype(np.float64)) or 1.0
        rel = float(np.linalg.norm(a.astype(np.float64) - b.astype(np.float64)) / denom)
        return rel <= tolerance, f"rel err {rel:.2e} (tol {tolerance})"
    u = ulp_diff(a, b)
    return u <= 2, f"max {u:.1f} ulp"


def run_device_case(nb, source, modname, case, rng):
    name, sig, _, inputs = case
    from numba import cuda
    argspecs = inputs["args"]
    n = 4096
    args = [generate(rng, gen, dt, (n,)) for dt, gen in argspecs]
    arg_types = [dt for dt, _ in argspecs]
    _, resty = cuda.compile(numba_namespace(source, modname)[name], sig, cc=(9, 0))
    out_dtype = np.dtype(str(resty)) if str(resty) != "bool" else np.dtype(np.bool_)
    wsrc = source + wrapper_source(name, len(args))
    wsig = f"void({out_dtype.name}[::1], " + ", ".join(f"{t}[::1]" for t in arg_types) + ")"
    wsig = wsig.replace("bool[", "boolean[")
    results = []
    for side in ("nbcuda", "numba"):
        d_args = [cp.asarray(a) for a in args]
        d_out = cp.asarray(poison(out_dtype, (n,)))
        if side == "nbcuda":
            kern = nb.compile(wsrc, f"nbwrap_{name}", wsig)
            nb.launch(kern, ((n + 127) // 128, 128), [d_out] + d_args,
                      [out_dtype] + arg_types)
        else:
            k = numba_kernel(wsrc, modname, f"nbwrap_{name}", wsig, device_function=name)
            k[(n + 127) // 128, 128](d_out, *d_args)
            cuda.synchronize()
        results.append(cp.asnumpy(d_out))
    return check(name, results[0], results[1], inputs.get("tolerance"), out_dtype)


def make_arrays(rng, specs):
    host = []
    for spec in specs:
        role = spec[0]
        dtype = spec[1]
        if role == "scalar":
            gen = spec[2]
            v = generate(rng, gen, dtype, ())
            host.append((role, dtype, v[()] if isinstance(v, np.ndarray) else v))
            continue
        shape = spec[2]
        if role == "out":
            arr = poison(dtype, shape)
        elif role == "out_zero":
            arr = np.zeros(shape, dtype)
        elif role == "out_min":
            d = np.dtype(dtype)
            arr = np.full(shape, np.iinfo(d).min if d.kind in "iu" else -np.inf, d)
        else:
            arr = generate(rng, spec[3], dtype, shape)
        host.append((role, dtype, arr))
    return host


def run_kernel_case(nb, source, modname, case, rng, bench, timings):
    name, sig, _, inputs = case
    host = make_arrays(rng, inputs["arrays"])
    arg_types = [dt for _, dt, _ in host]
    results = {}
    kernels = {}
    for side in ("nbcuda", "numba"):
        dev = [cp.asarray(v) if isinstance(v, np.ndarray) else v for _, _, v in host]
        if side == "nbcuda":
            kern = nb.compile(source, name, sig)
            nb.launch(kern, inputs["launch"], dev, arg_types)
            kernels[side] = lambda dev=dev, kern=kern: nb.launch(kern, inputs["launch"], dev, arg_types)
        else:
            from numba import cuda
            k = numba_kernel(source, modname, name, sig)
            grid, block = inputs["launch"]
            k[grid, block](*dev)
            cuda.synchronize()
            kernels[side] = lambda dev=dev, k=k: (k[grid, block](*dev), cuda.synchronize())
        results[side] = [cp.asnumpy(d) for (role, _, _), d in zip(host, dev)
                         if role in ("out", "inout", "out_zero", "out_min")]
    ok, detail = True, []
    out_dtypes = [dt for role, dt, _ in host if role in ("out", "inout", "out_zero", "out_min")]
    for k, dt in enumerate(out_dtypes):
        good, why = check(name, results["nbcuda"][k], results["numba"][k], inputs.get("tolerance"), dt)
        ok &= good
        detail.append(why)
    if bench:
        timings[name] = time_kernels(kernels, host)
    return ok, "; ".join(detail)


def time_kernels(kernels, host):
    out = {}
    for side, fn in kernels.items():
        for _ in range(3):
            fn()
        start, end = cp.cuda.Event(), cp.cuda.Event()
        times = []
        for _ in range(20):
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, end))
        out[side] = float(np.median(times))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    rng = np.random.default_rng(seed)
    print(f"corpus comparison, seed {seed}")
    nb = Nbcuda(os.path.abspath(args.cli))
    rows, timings = [], {}
    for fname in sorted(os.listdir(args.corpus)):
        if not fname.endswith(".py"):
            continue
        path = os.path.join(args.corpus, fname)
        source = open(path).read()
        modname = fname[:-3]
        mod = load_module(path)
        for case in mod.CASES:
            label = f"{modname}.{case[0]} {case[1]}"
            try:
                if case[2] == "device":
                    ok, why = run_device_case(nb, source, modname, case, rng)
                else:
                    ok, why = run_kernel_case(nb, source, modname, case, rng, args.bench, timings)
            except Exception as e:  # report and continue with the other cases
                ok, why = False, f"{type(e).__name__}: {str(e).strip().splitlines()[-1] if str(e).strip() else ''}"
                if os.environ.get("NBCUDA_VERBOSE"):
                    import traceback
                    traceback.print_exc()
            rows.append((label, ok, why))
            print(f"{'PASS' if ok else 'FAIL'}  {label}: {why}", flush=True)
    passed = sum(1 for r in rows if r[1])
    print(f"\ncorpus: {passed}/{len(rows)} cases match numba-cuda")
    if timings:
        print("\n| kernel | nbcuda ms | numba-cuda ms | ratio |\n|---|---|---|---|")
        for k, t in timings.items():
            print(f"| {k} | {t['nbcuda']:.4f} | {t['numba']:.4f} | {t['numba'] / t['nbcuda']:.2f}x |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"seed": seed, "rows": rows, "timings": timings}, f, indent=1)
    return 0 if passed == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
