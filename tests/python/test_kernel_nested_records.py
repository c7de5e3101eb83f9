"""Records in records (numpy structured dtypes with structured fields, numba's nested
Record types): r.b.x and r['b']['x'] read and write the inner record in place, r.b is a
record value that refers to the outer record's bytes (writes through it reach the array),
r.d = s.b copies an inner record's bytes; arrays of records in records (numba's
nestedarray(Record(...), (3,))) index to such records. An inner record placed where its own
fields would not be aligned is refused with a clear message. CI: types, PTX and errors; the
GPU compares results with numpy and numba-cuda."""
import inspect

import numpy as np
import pytest

import nbcuda as cuda
from conftest import load_kernel_module
from test_compile import check_ptx

INNER = np.dtype([("x", np.int32), ("y", np.float64)], align=True)
OUTER = np.dtype([("a", np.float64), ("b", INNER), ("c", np.int8), ("d", INNER)], align=True)


def nested(arr, src, out):
    i = cuda.grid(1)
    if i < arr.size:
        r = arr[i]
        out[i] = r.a + r.b.x + r.b.y + r["b"]["x"]
        r.b.x += 1
        r.b.y = r.a * 2
        q = r.b
        q.x = q.x * 10
        r.d = src[i].b
        r.c = r.d.x % 7


POINTS = np.dtype([("a", np.float64), ("pts", INNER, (3,)), ("n", np.int32)], align=True)


def points(arr, out):
    i = cuda.grid(1)
    if i < arr.size:
        r = arr[i]
        s = 0.0
        for j in range(r.pts.shape[0]):
            s += r.pts[j].x * r.pts[j].y
            r.pts[j].x = j - r.n
        out[i] = s + len(r.pts)
        r.pts[0] = r.pts[2]


def test_nested_record_types_print_as_numbas():
    t = cuda.from_dtype(OUTER)
    assert str(t) == (
        "Record(a[type=float64;offset=0],b[type=Record(x[type=int32;offset=0],"
        "y[type=float64;offset=8];16;True);offset=8],c[type=int8;offset=24],"
        "d[type=Record(x[type=int32;offset=0],y[type=float64;offset=8];16;True);offset=32];"
        "48;True)")
    assert str(cuda.from_dtype(POINTS)) == (
        "Record(a[type=float64;offset=0],pts[type=nestedarray(Record(x[type=int32;offset=0],"
        "y[type=float64;offset=8];16;True), (3,));offset=8],n[type=int32;offset=56];64;True)")


def test_kernels_compile_and_ptxas_accepts(tmp_path):
    t = cuda.from_dtype(OUTER)
    ptx, _ = cuda.compile_ptx(nested, (t[::1], t[::1], cuda.float64[::1]), cc=(9, 0))
    check_ptx(ptx, tmp_path)
    p = cuda.from_dtype(POINTS)
    ptx, _ = cuda.compile_ptx(points, (p[::1], cuda.float64[::1]), cc=(9, 0))
    check_ptx(ptx, tmp_path)


def reads(r):
    return r.b.y


def test_misplaced_inner_records_are_refused():
    packed_inner = np.dtype([("x", np.int32), ("y", np.float64)])  # y at offset 4
    misplaced = np.dtype([("a", np.uint8), ("b", packed_inner)])
    t = cuda.from_dtype(misplaced)
    with pytest.raises(cuda.TypingError, match=r"the record field 'b' \(its fields need 4-byte "
                       r"alignment; offset 1 in a record of 13 bytes\) is not aligned"):
        cuda.compile_ptx(reads, (t,), device=True, cc=(9, 0))
    placed = np.dtype([("a", np.uint32), ("b", packed_inner)])  # offset 4: aligned enough
    t = cuda.from_dtype(placed)
    assert str(cuda.compile_ptx(reads, (t,), device=True, cc=(9, 0))[1]) == "float64"
    rows = cuda.from_dtype(np.dtype([("a", np.uint8), ("b", INNER, (2,))]))
    with pytest.raises(cuda.TypingError, match="the array field 'b' is not aligned"):
        cuda.compile_ptx(reads, (rows,), device=True, cc=(9, 0))
    outside = ("(Record(a[type=int8;offset=0],b[type=Record(x[type=int32;offset=0];4;False);"
               "offset=4];6;False),)")
    with pytest.raises(cuda.TypingError, match="field 'b' lies outside the record"):
        cuda.compile_ptx(reads, outside, device=True, cc=(9, 0))


def inputs():
    arr = np.zeros(40, OUTER)
    arr["a"] = np.linspace(-2, 3, 40)
    arr["b"]["x"] = np.arange(40)
    arr["b"]["y"] = np.arange(40) * 0.25
    src = np.zeros(40, OUTER)
    src["b"]["x"] = np.arange(40) * 3 + 1
    src["b"]["y"] = -np.arange(40)
    return arr, src


def run(cuda_mod, kernel):
    arr, src = inputs()
    out = np.zeros(40)
    d = cuda_mod.to_device(arr)
    cuda_mod.jit(kernel)[2, 32](d, src, out)
    return d.copy_to_host(), out


@pytest.mark.gpu
def test_results_match_numpy_and_numba_cuda(gpu, tmp_path, monkeypatch):
    got, out = run(cuda, nested)
    arr, src = inputs()
    np.testing.assert_array_equal(out, arr["a"] + arr["b"]["x"] + arr["b"]["y"] + arr["b"]["x"])
    np.testing.assert_array_equal(got["b"]["x"], (arr["b"]["x"] + 1) * 10)
    np.testing.assert_array_equal(got["b"]["y"], arr["a"] * 2)
    np.testing.assert_array_equal(got["d"], src["b"])
    np.testing.assert_array_equal(got["c"], src["b"]["x"] % 7)
    np.testing.assert_array_equal(got["a"], arr["a"])

    pytest.importorskip("numba.cuda")
    from numba import cuda as ncuda
    (tmp_path / "numba_nested_records.py").write_text(
        "from numba import cuda\n\n" + inspect.getsource(nested))
    monkeypatch.syspath_prepend(str(tmp_path))
    import numba_nested_records as t
    theirs, theirs_out = run(ncuda, t.nested)
    np.testing.assert_array_equal(out, theirs_out)
    np.testing.assert_array_equal(got.view(np.uint8), theirs.view(np.uint8))


def run_points(cuda_mod, kernel):
    arr = np.zeros(24, POINTS)
    arr["n"] = np.arange(24)
    arr["pts"]["x"] = np.arange(72).reshape(24, 3)
    arr["pts"]["y"] = np.linspace(0, 1, 72).reshape(24, 3)
    out = np.zeros(24)
    d = cuda_mod.to_device(arr)
    cuda_mod.jit(kernel)[1, 32](d, out)
    return arr, d.copy_to_host(), out


@pytest.mark.gpu
def test_arrays_of_records_in_records_match_numpy_and_numba_cuda(gpu, tmp_path, monkeypatch):
    arr, got, out = run_points(cuda, points)
    x, y = arr["pts"]["x"], arr["pts"]["y"]
    want = ((x[:, 0] * y[:, 0]) + x[:, 1] * y[:, 1]) + x[:, 2] * y[:, 2]
    np.testing.assert_allclose(out, 0.0 + want + 3, rtol=1e-15)
    newx = np.arange(3)[None, :] - arr["n"][:, None]
    np.testing.assert_array_equal(got["pts"]["x"][:, 1:], newx[:, 1:])
    np.testing.assert_array_equal(got["pts"][:, 0], got["pts"][:, 2])
    np.testing.assert_array_equal(got["pts"]["y"][:, 1:], y[:, 1:])

    pytest.importorskip("numba.cuda")
    from numba import cuda as ncuda
    (tmp_path / "numba_points_records.py").write_text(
        "from numba import cuda\n\n" + inspect.getsource(points))
    monkeypatch.syspath_prepend(str(tmp_path))
    import numba_points_records as t
    _, theirs, theirs_out = run_points(ncuda, t.points)
    np.testing.assert_array_equal(out, theirs_out)
    np.testing.assert_array_equal(got.view(np.uint8), theirs.view(np.uint8))


ARRAY_FIELDS = '''
def assign_array_to_nested(dest, src):
    dest["array1"] = src


def assign_array_to_nested_2d(dest, src):
    dest["array2"] = src


def assign_wrong_dtype(dest, src):
    dest["array1"] = src
'''
NESTED1 = np.dtype([("array1", np.int16, (3,))], align=True)
NESTED2 = np.dtype([("array2", np.int16, (3, 2))], align=True)


def assign_array_fields(lib, m):
    """numba-cuda's test_assign_array_to_nested(_2d): a record's array field assigned an
    array (numba's record_setattr copies the field's element count from the array's data)."""
    got1 = np.zeros(2, NESTED1)
    lib.jit(m.assign_array_to_nested)[1, 1](got1[0], (np.arange(3) + 1).astype(np.int16))
    got2 = np.zeros(2, NESTED2)
    src2 = (np.arange(6) + 1).astype(np.int16).reshape((3, 2))
    lib.jit(m.assign_array_to_nested_2d)[1, 1](got2[0], src2)
    return got1, got2


def test_array_fields_take_arrays(tmp_path, tdrv):
    m = load_kernel_module(tmp_path, "array_fields", ARRAY_FIELDS, cuda)
    assign_array_fields(cuda, m)  # compiles and launches (the test driver runs no code)
    ptx, _ = cuda.compile_ptx(m.assign_array_to_nested_2d,
                              (cuda.from_dtype(NESTED2), cuda.int16[:, ::1]), cc=(9, 0))
    assert ".entry" in ptx
    with pytest.raises(cuda.TypingError, match="an array field takes an array of its dtype"):
        cuda.compile_ptx(m.assign_wrong_dtype, (cuda.from_dtype(NESTED1), cuda.float32[::1]),
                         cc=(9, 0))


@pytest.mark.gpu
def test_array_fields_match_python_and_numba_cuda(gpu, tmp_path):
    m = load_kernel_module(tmp_path, "array_fields", ARRAY_FIELDS, cuda)
    got1, got2 = assign_array_fields(cuda, m)
    want1, want2 = np.zeros(2, NESTED1), np.zeros(2, NESTED2)
    want1[0]["array1"] = np.arange(3) + 1
    want2[0]["array2"] = (np.arange(6) + 1).reshape(3, 2)
    np.testing.assert_array_equal(got1, want1)
    np.testing.assert_array_equal(got2, want2)
    ncuda = pytest.importorskip("numba.cuda")
    t1, t2 = assign_array_fields(ncuda, load_kernel_module(tmp_path, "array_fields_numba",
                                                           ARRAY_FIELDS, ncuda))
    np.testing.assert_array_equal(got1, t1)
    np.testing.assert_array_equal(got2, t2)
