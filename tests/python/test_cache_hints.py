"""numba-cuda's cache-hinted loads and stores (cache_hints.py) in kernels: cuda.ldca, ldcg, ldcs,
ldlu, ldcv load element i of an array with ld.global.<op>; cuda.stcg, stcs, stwb, stwt store a
value (converted to the dtype) with st.global.<op>. Integer and float arrays of 8 to 64 bits,
an integer index for 1-d arrays or a tuple of ndim integers, negative indices wrapping around;
numba's CPointers, any integer index (an offset).
CI checks typing, messages and code; the gpu test runs copies and transforms through every
operation and compares them with numpy and numba-cuda (in a fresh interpreter) bit for bit."""
import re

import pytest

np = pytest.importorskip("numpy")
import nbcuda  # noqa: E402
import nbcuda as cuda  # noqa: E402
from nbcuda import ldcg, stwt  # noqa: E402
from conftest import assert_same_bits, load_kernel_module, numba_side  # noqa: E402

LOADS = ["ldca", "ldcg", "ldcs", "ldlu", "ldcv"]
STORES = ["stcg", "stcs", "stwb", "stwt"]
DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
          "float32", "float64"]
BITS = {"int8": 8, "uint8": 8, "int16": 16, "uint16": 16, "float16": 16, "int32": 32,
        "uint32": 32, "float32": 32, "int64": 64, "uint64": 64, "float64": 64}

KERNELS = """
def copy_1d(src, dst, rev):
    i = cuda.grid(1)
    if i < src.size:
        cuda.stcg(dst, (0, i), cuda.ldca(src, i))
        cuda.stcs(dst, (1, i), cuda.ldcg(src, i))
        cuda.stwb(dst, (2, i), cuda.ldcs(src, i))
        cuda.stwt(dst, (3, i), cuda.ldlu(src, i))
        cuda.stwt(rev, -1 - i, cuda.ldcv(src, i))


def transform_2d(src, scaled, flipped, scale):
    i, j = cuda.grid(2)
    if i < src.shape[0] and j < src.shape[1]:
        cuda.stcs(scaled, (-1 - i, j), cuda.ldcg(src, cuda.grid(2)) * scale)
        cuda.stwb(flipped, (i, -1 - j), cuda.ldcv(src, (i - src.shape[0], j)))


def reverse_ptr(dst, src, n):
    i = cuda.grid(1)
    if i < n:
        cuda.stwt(dst, i, cuda.ldcg(src, n - 1 - i))
"""


def load_kernels(tmp_path, cuda_module):
    return load_kernel_module(tmp_path, "cache_hint_kernels", KERNELS, cuda_module)


def inputs(dtype):
    rng = np.random.default_rng(11)
    if dtype.startswith("float"):
        return rng.normal(0, 20, 300).astype(dtype), rng.normal(0, 20, (24, 20)).astype(dtype)
    # small enough that v * 1.5 fits every integer dtype: the cast back is exact truncation
    low = 0 if dtype.startswith("u") else -80
    return (rng.integers(low, 80, 300).astype(dtype),
            rng.integers(low, 80, (24, 20)).astype(dtype))


def run(mod, cm):
    out = {}
    copy_1d, transform_2d = cm.jit(mod.copy_1d), cm.jit(mod.transform_2d)
    for dt in DTYPES:
        x, m = inputs(dt)
        dst, rev = cm.device_array((4, x.size), dt), cm.device_array(x.size, dt)
        copy_1d[3, 128](cm.to_device(x), dst, rev)
        scaled, flipped = cm.device_array(m.shape, dt), cm.device_array(m.shape, dt)
        transform_2d[(3, 3), (8, 8)](cm.to_device(m), scaled, flipped, 1.5)
        # CPointer arguments take the arrays' addresses
        src, ptr_rev = cm.to_device(x), cm.device_array(x.size, dt)
        reverse_ptr = cm.jit(f"void(CPointer({dt}), CPointer({dt}), int64)")(mod.reverse_ptr)
        reverse_ptr[3, 128](ptr_rev.__cuda_array_interface__["data"][0],
                            src.__cuda_array_interface__["data"][0], x.size)
        out.update({f"{dt}_copy": dst.copy_to_host(), f"{dt}_rev": rev.copy_to_host(),
                    f"{dt}_scaled": scaled.copy_to_host(),
                    f"{dt}_flipped": flipped.copy_to_host(),
                    f"{dt}_ptr_rev": ptr_rev.copy_to_host()})
    return out


def expected(dt):
    """numpy's results: the value stored is the product converted to the dtype (numba's cast:
    float rounding to nearest, integers truncated towards zero)."""
    x, m = inputs(dt)
    return {f"{dt}_copy": np.stack([x] * 4), f"{dt}_rev": x[::-1], f"{dt}_ptr_rev": x[::-1],
            f"{dt}_scaled": (m.astype(np.float64) * 1.5).astype(dt)[::-1],
            f"{dt}_flipped": m[:, ::-1]}


def compile_source(tmp_path, name, source, sig):
    """Compiles function f of source (a module where `cuda` is nbcuda) as a device function."""
    mod = load_kernel_module(tmp_path, name, source, cuda)
    return cuda.compile_ptx(mod.f, sig, device=True, cc=(9, 0))


def ptx_of(f, sig):
    ptx, rt = cuda.compile_ptx(f, sig, device=True, cc=(9, 0))
    return ptx, str(rt)


def insns(ptx):
    return sorted(set(re.findall(r"(?:ld|st)\.global\.[a-z]{2}\.b\d+", ptx)))


# ------------------------------------------------------------------ typing and code


@pytest.fixture(scope="module")
def ops(tmp_path_factory):
    """A module with one device function per operation: ld<op>_(a, i), st<op>_(a, v)."""
    source = "".join(f"def {op}_(a, i):\n    return cuda.{op}(a, i)\n" for op in LOADS)
    source += "".join(f"def {op}_(a, v):\n    return cuda.{op}(a, (0, -1), v)\n"
                      for op in STORES)
    source += "".join(f"def ptr_{op}(p, v):\n    return cuda.{op}(p, -3, v)\n"
                      for op in STORES)
    return load_kernel_module(tmp_path_factory.mktemp("ops"), "cache_hint_ops", source, cuda)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", LOADS)
def test_loads_return_the_dtype(ops, op, dtype):
    ptx, rt = ptx_of(getattr(ops, op + "_"), f"({dtype}[::1], int64)")
    assert rt == dtype
    assert insns(ptx) == [f"ld.global.{op[2:]}.b{BITS[dtype]}"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", STORES)
def test_stores_return_none(ops, op, dtype):
    ptx, rt = ptx_of(getattr(ops, op + "_"), f"({dtype}[:, :], float64)")
    assert rt == "none"
    assert insns(ptx) == [f"st.global.{op[2:]}.b{BITS[dtype]}"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_pointers_load_and_store(ops, dtype):
    # numba's CPointer: any integer index, the element's address as p[i] finds it
    for op in LOADS:
        ptx, rt = ptx_of(getattr(ops, op + "_"), f"(CPointer({dtype}), int32)")
        assert rt == dtype and insns(ptx) == [f"ld.global.{op[2:]}.b{BITS[dtype]}"]
    for op in STORES:
        ptx, rt = ptx_of(getattr(ops, "ptr_" + op), f"(CPointer({dtype}), float64)")
        assert rt == "none" and insns(ptx) == [f"st.global.{op[2:]}.b{BITS[dtype]}"]


def bare_names(a, i, v):
    stwt(a, i, ldcg(a, -i) + v)


def keywords(a, v):
    cuda.stcs(value=v, i=(0, 1), array=a)
    return cuda.ldlu(a, i=(1, 0))


def test_bare_names_and_keywords():
    ptx, rt = ptx_of(bare_names, "(uint16[::1], int32, float32)")
    assert rt == "none" and insns(ptx) == ["ld.global.cg.b16", "st.global.wt.b16"]
    ptx, rt = ptx_of(keywords, "(float32[:, ::1], int8)")
    assert rt == "float32" and insns(ptx) == ["ld.global.lu.b32", "st.global.cs.b32"]


def test_host_stubs():
    for name in LOADS + STORES:
        stub = getattr(nbcuda, name)
        assert repr(stub) == f"<intrinsic {name}>"
        with pytest.raises(NotImplementedError, match=rf"cuda\.{name} is part of the CUDA "
                                                      r"kernel language"):
            stub(np.zeros(1), 0)


G = np.arange(4.0)


def store_global(v):
    cuda.stcg(G, 0, v)


ERRORS = [
    ("return cuda.ldcg(a, 0)", "(complex64[::1],)",
     "ldcg requires array of integer or float type, got complex64"),
    ("cuda.stwt(a, 0, 1)", "(bool[::1],)",
     "stwt requires array of integer or float type, got bool"),
    ("return cuda.ldca(a, 0)", "(int32[:, :],)", "Expected 2 indices, got a scalar"),
    ("return cuda.ldcs(a, (0, 1, 2))", "(int32[:, :],)", "Expected 2 indices, got 3"),
    ("return cuda.ldlu(a, 1.5)", "(int32[:],)", "float64 is not a valid index"),
    ("return cuda.ldcv(a, (cuda.threadIdx.x, 1))", "(int32[:, :],)",
     r"Tuple\(int32, int64\) is not a valid index"),
    ("return cuda.ldcg(a, 0)", "(float32,)",
     "ldcg operates on arrays or pointers. Got type float32"),
    ("return cuda.ldca(a, (0, 1))", "(CPointer(int32),)",
     "Pointers only support scalar indexing, got tuple of 2"),
    ("cuda.stcs(a, 0, 1j)", "(int32[:],)", r"cannot convert complex128 to int32 in stcs\(\)"),
    ("cuda.stwb(a)", "(int32[:],)", r"stwb\(\) missing required argument: 'i'"),
]


@pytest.mark.parametrize("body, sig, message", ERRORS)
def test_typing_errors(tmp_path, body, sig, message):
    with pytest.raises(cuda.TypingError, match="error: " + message):
        compile_source(tmp_path, "cache_hint_error", f"def f(a):\n    {body}\n", sig)


def test_a_global_array_is_read_only():
    with pytest.raises(cuda.TypingError, match="cannot modify a read-only array"):
        cuda.compile_ptx(store_global, "(float64,)", device=True, cc=(9, 0))


def test_numba_cuda_names_compile(tmp_path):
    numba_cuda = pytest.importorskip("numba.cuda")
    source = ("from numba.cuda import ldcs, stcg\n"
              "def k(a, b):\n"
              "    i = cuda.grid(1)\n"
              "    stcg(b, i, ldcs(a, i))\n"
              "    cuda.stwb(b, -1, cuda.ldcv(a, 0))\n")
    mod = load_kernel_module(tmp_path, "numba_names", source, numba_cuda)
    ptx, _ = nbcuda.compile_ptx(mod.k, "void(int64[::1], int64[::1])", cc=(9, 0))
    assert insns(ptx) == ["ld.global.cs.b64", "ld.global.cv.b64", "st.global.cg.b64",
                          "st.global.wb.b64"]


def test_kernels_compile_and_launch(tmp_path, tdrv):
    run(load_kernels(tmp_path, cuda), cuda)
    assert tdrv.last_launch().function.decode().startswith("_ZN")


# ------------------------------------------------------------------ on the GPU


@pytest.mark.gpu
def test_cache_hints_match_numpy_and_numba_cuda(gpu, tmp_path):
    mine = run(load_kernels(tmp_path, cuda), cuda)
    for dt in DTYPES:
        assert_same_bits({k: v for k, v in mine.items() if k.startswith(dt + "_")},
                         expected(dt))
    pytest.importorskip("numba")
    theirs = numba_side("test_cache_hints",
                        f"t.run(t.load_kernels(pathlib.Path({str(tmp_path)!r}), cuda), cuda)",
                        tmp_path / "numba.npz")
    assert_same_bits(mine, theirs)
