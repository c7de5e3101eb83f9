"""GPU only (tests/gpu/run.sh): every corpus case run through nbcuda.jit and compared with
numba-cuda on the same inputs (bit-exact for integers, within 2 ulp for floats, or the
case's relative tolerance), plus small kernels checked against numpy."""
import importlib.util
import os
import sys
import subprocess
import textwrap

import pytest

from conftest import corpus_dir

pytestmark = pytest.mark.gpu
np = pytest.importorskip("numpy")

NTHREADS = 4096


def load_module(path, name, hide_nbcuda=False):
    saved = sys.modules.get("nbcuda")
    if hide_nbcuda:
        sys.modules["nbcuda"] = None  # `import nbcuda` fails: the file falls back to numba
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        return mod
    finally:
        if hide_nbcuda:
            if saved is None:
                del sys.modules["nbcuda"]
            else:
                sys.modules["nbcuda"] = saved


def numba_cuda():
    import numpy
    for old, new in (("row_stack", "vstack"), ("in1d", "isin"), ("trapz", "trapezoid")):
        if not hasattr(numpy, old) and hasattr(numpy, new):
            setattr(numpy, old, getattr(numpy, new))
    try:
        from numba import cuda
    except Exception as e:  # pragma: no cover - depends on the machine
        pytest.skip(f"numba-cuda not importable: {e}")
    return cuda


def corpus_cases():
    d = corpus_dir()
    out = []
    for fn in sorted(os.listdir(d)) if d else []:
        if fn.endswith(".py"):
            mod = load_module(os.path.join(d, fn), "gpucorpus_" + fn[:-3])
            for case in getattr(mod, "CASES", []):
                out.append(pytest.param(os.path.join(d, fn), case,
                                        id=f"{fn[:-3]}.{case[0]}:{case[1]}"))
    return out


def generate(gen, dtype, shape, rng):
    dt = np.dtype(dtype)
    n = int(np.prod(shape)) if shape != () else 1
    if gen == "normal":
        v = rng.standard_normal(n)
    elif gen == "uniform":
        v = rng.random(n)
    elif gen == "uniform_0_1e6":
        v = rng.random(n) * 1e6
    elif gen == "ints":
        if dt.kind in "iu" and dt.itemsize <= 2:
            info = np.iinfo(dt)
            v = rng.integers(info.min, info.max, n, endpoint=True)
        else:
            v = rng.integers(-10**6, 10**6, n, endpoint=True)
            if dt.kind == "u":
                v = np.abs(v)
    elif gen == "small_ints":
        v = rng.integers(0, 7, n, endpoint=True)
    elif gen == "positive_ints":
        v = rng.integers(1, 10**6, n, endpoint=True)
    elif gen == "ints_nonzero":
        v = rng.integers(1, 10**6, n, endpoint=True) * rng.choice([-1, 1], n)
    elif gen == "zeros":
        v = np.zeros(n)
    elif gen == "ones":
        v = np.ones(n)
    elif gen == "range":
        v = np.arange(n)
    else:
        raise ValueError(f"unknown generator {gen}")
    return v.astype(dt).reshape(shape)


def poison(dtype, shape):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return np.full(shape, np.nan, dt)
    return np.full(shape, 0x5A, np.uint8).view(dt) if dt.itemsize == 1 else \
        np.frombuffer(b"\x5a" * (dt.itemsize * int(np.prod(shape))), dt).reshape(shape).copy()


def make_inputs(case, rng):
    _, sig, kind, spec = case
    if kind == "device":
        return [generate(gen, dt, (NTHREADS,), rng) for dt, gen in spec["args"]]
    args = []
    for a in spec["arrays"]:
        role, dtype = a[0], a[1]
        if role == "scalar":
            v = a[2]
            args.append(np.dtype(dtype).type(v) if not isinstance(v, str)
                        else generate(v, dtype, (), rng).reshape(()).item())
        elif role == "out":
            args.append(poison(dtype, a[2]))
        elif role in ("in", "inout"):
            args.append(generate(a[3], dtype, a[2], rng))
        elif role == "out_zero":
            args.append(np.zeros(a[2], dtype))
        elif role == "out_min":
            dt = np.dtype(dtype)
            m = np.iinfo(dt).min if dt.kind in "iu" else -np.inf
            args.append(np.full(a[2], m, dt))
        else:
            raise ValueError(role)
    return args


def close_enough(got, want, tol, fastmath=False):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
        return
    both_nan = np.isnan(got) & np.isnan(want)
    g, w = got[~both_nan], want[~both_nan]
    if tol:
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
    else:
        ulps = 8 if fastmath else 2
        bound = ulps * np.spacing(np.maximum(np.abs(g), np.abs(w)).astype(got.dtype))
        bad = ~((g == w) | (np.abs(g - w) <= bound))
        assert not bad.any(), f"{bad.sum()} elements differ by more than {ulps} ulp: " \
                              f"{g[bad][:5]} vs {w[bad][:5]}"


WRAPPER = """
def wrap(out, {params}):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = fn({items})
"""


def device_wrapper(cuda_mod, fn, nargs, tmpdir, tag):
    params = ", ".join(f"a{i}" for i in range(nargs))
    items = ", ".join(f"a{i}[i]" for i in range(nargs))
    path = os.path.join(tmpdir, f"wrap_{tag}.py")
    with open(path, "w") as f:
        f.write(WRAPPER.format(params=params, items=items))
    spec = importlib.util.spec_from_file_location(f"wrap_{tag}", path)
    mod = importlib.util.module_from_spec(spec)
    mod.cuda, mod.fn = cuda_mod, fn
    spec.loader.exec_module(mod)
    return mod.wrap


def run_case(cuda_mod, mod, case, inputs, tmpdir, tag, is_nbcuda):
    name, sig, kind, spec = case
    fn = getattr(mod, name)
    if kind == "device":
        import nbcuda
        _, resty = nbcuda.compile(getattr(mod, name), sig)
        rdt = np.dtype("bool" if str(resty) == "bool" else str(resty))
        argtypes = [dt for dt, _ in spec["args"]]
        ksig = f"void({rdt.name if rdt.name != 'bool' else 'boolean'}[::1], " + \
            ", ".join(f"{t}[::1]" for t in argtypes) + ")"
        dev = fn if is_nbcuda else cuda_mod.jit(device=True)(fn)
        if not is_nbcuda and hasattr(fn, "py_func"):
            dev = fn
        wrap = device_wrapper(cuda_mod, dev, len(argtypes), tmpdir, tag)
        k = cuda_mod.jit(ksig)(wrap)
        out = poison(rdt, (NTHREADS,))
        d_out = cuda_mod.to_device(out)
        d_in = [cuda_mod.to_device(a) for a in inputs]
        k[NTHREADS // 128, 128](d_out, *d_in)
        return [d_out.copy_to_host()]
    k = cuda_mod.jit(sig)(fn)
    grid, block = spec["launch"]
    devs = [cuda_mod.to_device(a) if isinstance(a, np.ndarray) else a for a in inputs]
    k[grid, block](*devs)
    return [d.copy_to_host() for d in devs if not np.isscalar(d) and hasattr(d, "copy_to_host")]


@pytest.mark.parametrize("path,case", corpus_cases())
def test_corpus_matches_numba(gpu, path, case, tmp_path):
    import nbcuda
    ncuda = numba_cuda()
    ours = load_module(path, "gpu_nb_" + os.path.basename(path)[:-3])
    theirs = load_module(path, "gpu_numba_" + os.path.basename(path)[:-3], hide_nbcuda=True)
    rng = np.random.default_rng(12345)
    inputs = make_inputs(case, rng)
    got = run_case(nbcuda, ours, case, [x.copy() if isinstance(x, np.ndarray) else x
                                        for x in inputs], str(tmp_path), "nb", True)
    want = run_case(ncuda, theirs, case, [x.copy() if isinstance(x, np.ndarray) else x
                                          for x in inputs], str(tmp_path), "numba", False)
    assert len(got) == len(want)
    tol = case[3].get("tolerance")
    for g, w in zip(got, want):
        close_enough(g, w, tol, case[3].get("fastmath", False))


def test_saxpy_against_numpy(gpu):
    import nbcuda

    @nbcuda.jit("void(float32[:], float32, float32[:], float32[:])")
    def k(r, a, x, y):
        i = nbcuda.grid(1)
        if i < r.size:
            r[i] = a * x[i] + y[i]

    n = 100_000
    rng = np.random.default_rng(1)
    x, y = rng.random(n, np.float32), rng.random(n, np.float32)
    r = nbcuda.device_array(n, np.float32)
    k[(n + 255) // 256, 256](r, np.float32(2.0), nbcuda.to_device(x), nbcuda.to_device(y))
    np.testing.assert_allclose(r.copy_to_host(), 2 * x + y, rtol=1e-6)


def test_launch_bounds_are_enforced_by_the_driver(gpu):
    """jit(sig, launch_bounds=64): the kernel runs with 64 threads per block and the driver
    refuses 128 (.maxntid 64 in the PTX it loaded)."""
    import nbcuda

    def fill(a):
        i = nbcuda.grid(1)
        if i < a.size:
            a[i] = i

    k = nbcuda.jit("void(int32[:])", launch_bounds=64)(fill)
    d = nbcuda.device_array(256, np.int32)
    k[4, 64](d)
    np.testing.assert_array_equal(d.copy_to_host(), np.arange(256, dtype=np.int32))
    with pytest.raises(nbcuda.CudaAPIError):
        k[2, 128](d)
        nbcuda.synchronize()


def test_trailing_small_scalar_parameter(gpu):
    """Parameters that end on a 4-byte scalar (60 bytes here): the packed buffer must have the
    kernel's exact size (padded to 64, the 2-GPU H200 run got LAUNCH_OUT_OF_RESOURCES)."""
    import nbcuda

    @nbcuda.jit("void(float32[:], float32)")
    def add_value(a, v):
        i = nbcuda.grid(1)
        if i < a.size:
            a[i] += v

    d = nbcuda.to_device(np.arange(64, dtype=np.float32))
    add_value[1, 64](d, 0.5)
    np.testing.assert_array_equal(d.copy_to_host(), np.arange(64, dtype=np.float32) + 0.5)


def test_host_arrays_are_copied_back(gpu):
    import nbcuda

    @nbcuda.jit("void(int64[:])")
    def iota(a):
        i = nbcuda.grid(1)
        if i < a.size:
            a[i] = i * 3

    h = np.zeros(1000, np.int64)
    iota[4, 256](h)
    assert (h == np.arange(1000) * 3).all()


def test_cupy_arrays_are_accepted(gpu, tmp_path):
    """A CuPy array is a kernel argument (through __cuda_array_interface__). In a fresh
    interpreter: CuPy keeps memory and modules in the device's primary context, which any
    later close() in this process resets (numba's close() does the same), and CuPy's own
    teardown at exit then fails on them."""
    pytest.importorskip("cupy")
    script = tmp_path / "cupy_interop.py"  # a file: nbcuda.jit reads the kernel's source
    script.write_text(textwrap.dedent("""
        import numpy as np, cupy, nbcuda

        @nbcuda.jit("void(float32[::1])")
        def inc(a):
            i = nbcuda.grid(1)
            if i < a.size:
                a[i] += 1

        a = cupy.arange(10, dtype=cupy.float32)
        inc[1, 32](a)
        nbcuda.synchronize()
        assert (a.get() == np.arange(10) + 1).all()

        @nbcuda.jit
        def add(a, b, out):  # typed from the interfaces, packed from the views parsed then
            i, j = nbcuda.grid(2)
            if i < out.shape[0] and j < out.shape[1]:
                out[i, j] = a[i, j] + b[i, j]

        x = cupy.arange(48, dtype=cupy.float64).reshape(4, 12)[:, ::2]  # strided
        out = cupy.zeros((4, 6))
        for scale in (1, 2, 3):  # the second and third launch reuse the dispatch
            with cupy.cuda.Stream(non_blocking=True):  # the interfaces read name it
                y = x * scale  # queued there: the launch's stream waits for it
                add[(1, 1), (8, 8)](x, y, out)
            nbcuda.synchronize()
            assert (out.get() == x.get() * (1 + scale)).all(), scale
        print("ok")
    """))
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert p.stdout.strip() == "ok" and p.stderr == "", p.stderr
