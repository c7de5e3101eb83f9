"""CUDA vector types in kernels, as numba-cuda has them (vector_types.py): float32x4, int2,
double3, ... and the C aliases (float4, uint2, ...); constructed from numbers (converted to the
element type) and smaller vectors of the same element type, members x/y/z/w read, passed to
and returned from device functions. CI checks typing and code; the gpu test compares the
results with numba-cuda's (in a fresh interpreter) and numpy's."""

import pytest

np = pytest.importorskip("numpy")
import nbcuda as cuda  # noqa: E402
from conftest import assert_same_bits, load_kernel_module, numba_side  # noqa: E402

KERNELS = """
@cuda.jit(device=True)
def dot4(a, b):
    return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w


@cuda.jit(device=True)
def widen(v):
    return cuda.float64x3(v, 0.5)


def vectors(x, y, out, ints):
    i = cuda.grid(1)
    if i < x.size:
        p = cuda.float32x2(x[i], y[i])
        q = cuda.float4(p, cuda.float32x2(y[i], 2))
        r = cuda.float32x4(1, x[i], cuda.float32x1(y[i]), -3.25)
        out[0, i] = dot4(q, r)
        w = widen(cuda.double2(x[i], y[i]))
        out[1, i] = w.x - w.y * w.z
        n = cuda.int32x3(i, 2 * i, 7)
        u = cuda.uchar4(i, 255, 256 + i, 3)
        ints[0, i] = n.x + n.y * n.z
        ints[1, i] = u.x + u.y + u.z + u.w
"""


def load_kernels(tmp_path, cuda_module):
    return load_kernel_module(tmp_path, "vector_kernels", KERNELS, cuda_module)


def inputs():
    rng = np.random.default_rng(5)
    return rng.normal(0, 10, 500).astype(np.float32), rng.normal(0, 10, 500).astype(np.float32)


def run(mod, cm):
    x, y = inputs()
    out = cm.device_array((2, x.size), np.float64)
    ints = cm.device_array((2, x.size), np.int64)
    cm.jit(mod.vectors)[4, 128](cm.to_device(x), cm.to_device(y), out, ints)
    return {"out": out.copy_to_host(), "ints": ints.copy_to_host()}


def typeof(f, sig):
    return str(cuda.compile_ptx(f, sig, device=True, cc=(9, 0))[1])


def test_types_and_members():
    assert typeof(lambda a, b: cuda.float32x4(a, b, a, b), "(float32, int64)") == "float32x4"
    assert typeof(lambda a: cuda.float4(a, a, a, a), "(float64,)") == "float32x4"
    assert typeof(lambda a: cuda.uint2(a, a), "(int32,)") == "uint32x2"
    assert typeof(lambda a: cuda.double3(a, a, a).z, "(float32,)") == "float64"
    assert typeof(lambda a: cuda.int64x4(cuda.long2(a, a), a, a).w, "(int64,)") == "int64"
    with pytest.raises(cuda.TypingError, match="float32x4"):
        cuda.compile_ptx(lambda a: cuda.float32x4(a, a), "(float32,)", device=True)
    with pytest.raises(cuda.TypingError, match="float32x2"):
        # a vector of another element type is no argument (numba's cases)
        cuda.compile_ptx(lambda a: cuda.float32x2(cuda.int2(1, 2)), "(float32,)", device=True)
    with pytest.raises(cuda.TypingError, match="Unknown attribute 'z'"):
        cuda.compile_ptx(lambda a: cuda.float32x2(a, a).z, "(float32,)", device=True)
    assert callable(cuda.float32x4) and callable(cuda.float4)


def test_kernels_compile_and_launch(tmp_path, tdrv):
    run(load_kernels(tmp_path, cuda), cuda)
    assert tdrv.last_launch().function.decode().startswith("_ZN")


@pytest.mark.gpu
def test_vector_types_match_numba_cuda(gpu, tmp_path):
    mine = run(load_kernels(tmp_path, cuda), cuda)
    x, y = inputs()
    idx = np.arange(x.size)
    np.testing.assert_array_equal(mine["ints"][0], idx + 2 * idx * 7)
    np.testing.assert_array_equal(mine["ints"][1], idx % 256 + 255 + (256 + idx) % 256 + 3)
    pytest.importorskip("numba")
    theirs = numba_side("test_vector_types",
                        f"t.run(t.load_kernels(pathlib.Path({str(tmp_path)!r}), cuda), cuda)",
                        tmp_path / "numba.npz")
    assert_same_bits(mine, theirs)


def test_cuda_names_of_vector_types_are_numbas_aliases():
    """numba-cuda's test_vector_type_alias: cuda.char2 is cuda.int8x2 (one object)."""
    for alias, name in [("char1", "int8x1"), ("uchar4", "uint8x4"), ("short2", "int16x2"),
                        ("int3", "int32x3"), ("long1", "int64x1"), ("longlong2", "int64x2"),
                        ("ulonglong3", "uint64x3"), ("float4", "float32x4"),
                        ("double2", "float64x2")]:
        assert getattr(cuda, alias) is getattr(cuda, name), alias
