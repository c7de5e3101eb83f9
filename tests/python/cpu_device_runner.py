"""Runs the corpus kernels (tests/corpus, tests/gpu/cases) through nbcuda.jit on the CPU device
and prints one JSON object: for every kernel case "ok", "mismatch: ..." or the error it
raised. Kernels with a numpy reference below are compared with it (bit-exact for integers,
within 2 ulp for floats, or the reference's tolerance); the others must run to completion.

Run by test_cpu_device.py in a fresh interpreter with NBCUDA_DRIVER=cpu, so the process loads
the CPU device instead of the test driver. The inputs are generated, poisoned and compared the
way tests/gpu/corpus_compare.py does it (its helpers are imported, without CuPy).
"""
import importlib.util
import json
import os
import sys
import tempfile
import types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.modules.setdefault("cupy", types.ModuleType("cupy"))  # corpus_compare's helpers only
sys.path.insert(0, os.path.join(ROOT, "tests", "gpu"))
import corpus_compare as cc  # noqa: E402

import nbcuda  # noqa: E402

F32, F64 = np.float32, np.float64


def seq_sum(terms, axis):
    """A left-to-right sum (what a kernel's loop does), not numpy's pairwise one."""
    return np.cumsum(terms, axis=axis).take(-1, axis=axis)


def count_halvings(x):
    v = x.astype(F64)
    n = np.zeros(v.shape, np.int64)
    while (v > 1.0).any():
        more = v > 1.0
        v = np.where(more, v * 0.5, v)
        n += more
    return n


# Device functions plain Python is no reference for: poly sums sin() terms with
# cancellation, so libdevice's sin and the C library's, each within 1 ulp, differ by many
# ulp in the result; bits applies ~ to uint16, which numba types differently from numpy.
NO_REFERENCE = {"poly", "bits"}


def histogram(x, lo, hi, nbins):
    b = np.trunc((x - lo) / (hi - lo) * nbins).astype(np.int64)  # int() truncates
    return np.bincount(b[(b >= 0) & (b < nbins)], minlength=nbins).astype(np.int32)


# name -> (function of the inputs returning the expected outputs in order, tolerance)
REFERENCES = {
    "saxpy": (lambda o, a, x, y: [(F64(a) * x + y).astype(F32)], None),
    "grid_stride_scale": (lambda x, f: [x * f], None),
    "add_2d": (lambda c, a, b: [a + b], None),
    "transpose": (lambda o, i: [i.T.copy()], None),
    "reverse": (lambda o, i: [i[::-1].copy()], None),
    "row_sums": (lambda o, m: [seq_sum(m, 1)], None),
    "matmul_naive": (lambda c, a, b: [seq_sum((a[:, :, None] * b[None, :, :]).astype(F64), 1)
                                      .astype(F32)], None),
    "stencil_1d": (lambda o, i: [np.concatenate(
        [i[:1], (0.25 * i[:-2].astype(F64) + 0.5 * i[1:-1] + 0.25 * i[2:]).astype(F32),
         i[-1:]])], None),
    "count_step": (lambda o, x: [count_halvings(x)], None),
    "polar": (lambda r, t, x, y: [np.hypot(x, y), np.arctan2(y, x)], None),
    "block_sum": (lambda o, x: [np.array([x.astype(F64).sum()], F32)], 1e-3),
    "histogram": (lambda h, x, lo, hi: [histogram(x, lo, hi, h.size)], None),
    "fast_matmul": (lambda c, a, b: [(a.astype(F64) @ b).astype(F32)], 1e-4),
    "apply_gelu": (lambda o, x: [0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x**3)))],
                   1e-12),
    "local_sort3": (lambda o, x: [np.sort(x, axis=1)], None),
    "max_reduce": (lambda o, x: [np.array([x.max()], np.int64)], None),
}


def load(path):
    name = "cpudev_" + os.path.basename(path)[:-3]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def run_case(mod, case, rng):
    name, sig, kind, inputs = case
    host = cc.make_arrays(rng, inputs["arrays"])
    given = [v.copy() if isinstance(v, np.ndarray) else v for _, _, v in host]
    kern = nbcuda.jit(sig)(getattr(mod, name))
    grid, block = inputs["launch"]
    args = [v for _, _, v in host]
    kern[grid, block](*args)
    nbcuda.synchronize()
    if name not in REFERENCES:
        return "ok"
    ref, tolerance = REFERENCES[name]
    outs = [(dt, v) for (role, dt, v) in host if role in ("out", "inout", "out_zero", "out_min")]
    expected = ref(*given)
    for (dt, got), want in zip(outs, expected):
        good, why = cc.check(name, got, np.asarray(want).astype(dt), tolerance, dt)
        if not good:
            return "mismatch: " + why
    return "ok"


def run_device_case(path, case, rng, tmpdir):
    """A device function through corpus_compare's wrapper kernel out[i] = f(a0[i], ...),
    compared with the Python function itself over numpy scalars where the result types
    agree (numba's typing of mixed integer widths differs from numpy's)."""
    name, sig, _, inputs = case
    argspecs = inputs["args"]
    n = 1024
    args = [cc.generate(rng, gen, dt, (n,)) for dt, gen in argspecs]
    source = open(path).read()
    mod = load(path)
    _, resty = nbcuda.compile_ptx(getattr(mod, name), sig, device=True)
    out_dtype = np.dtype(str(resty)) if str(resty) != "bool" else np.dtype(np.bool_)
    wpath = os.path.join(tmpdir, f"wrap_{name}_{abs(hash(sig))}.py")
    with open(wpath, "w") as f:
        f.write(source + cc.wrapper_source(name, len(args)))
    wmod = load(wpath)
    wsig = (f"void({out_dtype.name}[::1], " + ", ".join(f"{dt}[::1]" for dt, _ in argspecs)
            + ")").replace("bool[", "boolean[")
    out = cc.poison(out_dtype, (n,))
    nbcuda.jit(wsig)(getattr(wmod, f"nbwrap_{name}"))[(n + 127) // 128, 128](out, *args)
    nbcuda.synchronize()
    # numba widens integers to 64 bits and mixes float32 with float64 as float64: the
    # reference sees the arguments at the result's width
    ref_args = [a.astype(np.promote_types(a.dtype, out_dtype))
                if a.dtype.kind == out_dtype.kind or (a.dtype.kind in "iu" and out_dtype.kind in "iu")
                else a for a in args]
    if name in NO_REFERENCE:
        return "ok"
    try:
        with np.errstate(all="ignore"):
            want = np.asarray([getattr(mod, name)(*(a[i] for a in ref_args)) for i in range(n)])
    except Exception:
        return "ok"  # ran; the function cannot run as plain Python (kernel-only intrinsics)
    if want.dtype.kind != out_dtype.kind:
        return "ok"  # ran; numpy's scalar types are no reference for this signature
    want = want.astype(out_dtype)
    good, why = cc.check(name, out, want, inputs.get("tolerance"), out_dtype)
    if good:
        return "ok"
    i = int(np.argmax(~np.isclose(out, want, rtol=0, atol=0, equal_nan=True)))
    return (f"mismatch: {why}; first at {[a[i] for a in args]}: {out[i]!r} != {want[i]!r}")


def main():
    rng = np.random.default_rng(2026)
    tmpdir = tempfile.mkdtemp(prefix="nbcuda-cpudev-")
    results = {}
    for folder in ("tests/corpus", "tests/gpu/cases"):
        for fname in sorted(os.listdir(os.path.join(ROOT, folder))):
            if not fname.endswith(".py"):
                continue
            try:
                mod = load(os.path.join(ROOT, folder, fname))
            except ImportError as e:  # a case file that needs numba itself
                results[fname[:-3]] = f"not importable: {e}"
                continue
            for k, case in enumerate(getattr(mod, "CASES", [])):
                key = f"{fname[:-3]}.{case[0]}.{k}"
                try:
                    if case[2] == "kernel":
                        results[key] = run_case(mod, case, rng)
                    else:
                        results[key] = run_device_case(os.path.join(ROOT, folder, fname), case,
                                                       rng, tmpdir)
                except Exception as e:  # the error is the result
                    results[key] = f"{type(e).__name__}: {e}"
    print(json.dumps(results))


if __name__ == "__main__":
    main()
