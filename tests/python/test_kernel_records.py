"""Records (numpy structured dtypes) in kernels, as numba-cuda supports them: arrays of
records (a[i].x, a[i]['x'], r = a[i] as a reference, op= on fields, a[i] = a[j] copying the
record), packed records (align=False: fields at any offset, read byte by byte), records
passed to and returned from device functions (as references), record arguments (copied to the device and back, so a[0] passed as an argument is written through),
nbcuda.from_dtype and numba's Record spelling in signatures. CI checks types, signatures,
PTX and errors; the GPU compares results with numpy and numba-cuda."""
import numpy as np
import pytest

import nbcuda as cuda
from conftest import load_kernel_module, numba_side, sig_texts
from test_compile import check_ptx

ALIGNED = np.dtype([("a", np.float64), ("b", np.int32), ("flag", np.bool_),
                    ("c", np.complex64)], align=True)
PACKED = np.dtype([("x", np.int8), ("y", np.float64), ("z", np.uint16)])
NESTED = np.dtype([("i", np.int32), ("j", np.float32, (3, 2)), ("h", np.int16, 2)])

KERNELS = '''
def set_fields(ary, v):
    i = cuda.grid(1)
    if i < ary.size:
        ary[i].a = v * i
        ary[i]['b'] = ary[i].b + i
        r = ary[i]
        r.c += 2.5j * i
        r.flag = i % 2 == 0
        if r.flag:
            r['b'] *= 3


def copy_records(dst, src):
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] = src[src.size - 1 - i]


def packed_ops(out, p):
    i = cuda.grid(1)
    if i < p.size:
        out[i] = p[i].x + p[i].y + p[i]['z']
        p[i].y = p[i].y * 2.0
        p[i]['x'] -= 1
        p[i].z += 1000


def record_arg(r, out):
    out[0] = r.a + r.b
    r.a = 42.0
    r.b = 7


def nested_rw(r, a):
    r.i = 3
    r.j[1, 0] = 5.0
    a[0] = r.j[0, 1] + r.j.shape[0] + r.j.size
    r.h[1] += r.h[0]


def nested_rows(recs):
    k = cuda.grid(1)
    if k < recs.size:
        for i in range(recs[k].j.shape[0]):
            for j in range(recs[k].j.shape[1]):
                recs[k].j[i, j] = k * 100 + i * 10 + j
        recs[k]['h'][:] = k


@cuda.jit(device=True)
def bump(r, v):
    r.b += v
    return r.a * 2


@cuda.jit(device=True)
def last(a):
    return a[a.size - 1]


def through_device_functions(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = bump(a[i], i)
        if i == 0:
            r = last(a)
            r.a = -1.0


def in_local_and_shared(out, x):
    loc = cuda.local.array(4, dtype=REC)
    sm = cuda.shared.array(32, REC)
    i = cuda.threadIdx.x
    loc[0].a = x[i]
    loc[1].b = 3
    sm[i].a = loc[0].a * 2
    sm[i]['b'] = loc[1].b + i
    cuda.syncthreads()
    j = 31 - i
    out[i] = sm[j].a + sm[j].b


def by_position(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i][0] + a[i][1] + a[i][-1].imag  # a + b + c.imag, as numba's rec[k]


def grid2d(g):
    i, j = cuda.grid(2)
    if i < g.shape[0] and j < g.shape[1]:
        g[i, j].a = i * 10 + j
        g[i, j].c = complex(i, j)
'''


def kernels(cuda_module, directory):
    mod = load_kernel_module(directory, "record_kernels", KERNELS, cuda_module)
    mod.REC = record_type(cuda_module, ALIGNED)  # a global Record type, as a dtype
    return mod


def record_type(cuda_module, dtype):
    if hasattr(cuda_module, "from_dtype"):
        return cuda_module.from_dtype(dtype)
    from numba.np.numpy_support import from_dtype  # numba-cuda keeps it in numba
    return from_dtype(dtype)


def test_from_dtype_prints_numbas_record_types():
    r = cuda.from_dtype(ALIGNED)
    assert str(r) == ("Record(a[type=float64;offset=0],b[type=int32;offset=8],"
                      "flag[type=bool;offset=12],c[type=complex64;offset=16];24;True)")
    assert str(r[:]) == f"array({r}, 1d, A)"
    assert str(r[:, ::1]) == f"array({r}, 2d, C)"
    p = cuda.from_dtype(PACKED)
    assert str(p) == ("Record(x[type=int8;offset=0],y[type=float64;offset=1],"
                      "z[type=uint16;offset=9];11;False)")
    assert str(p[::1]) == f"unaligned array({p}, 1d, C)"
    assert cuda.from_dtype(np.float32) is cuda.float32
    assert cuda.from_dtype("i8") is cuda.int64
    assert str(cuda.from_dtype(NESTED)) == (
        "Record(i[type=int32;offset=0],j[type=nestedarray(float32, (3, 2));offset=4],"
        "h[type=nestedarray(int16, (2,));offset=28];32;False)")
    assert str(cuda.from_dtype(np.dtype([("r", PACKED)]))) == (  # a record in a record
        f"Record(r[type={p};offset=0];11;False)")
    with pytest.raises(TypeError, match="big-endian"):
        cuda.from_dtype(np.dtype([("v", ">f8")]))
    with pytest.raises(TypeError, match="must be booleans, integers, floats, complex numbers"):
        cuda.from_dtype(np.dtype([("s", "O")]))
    assert str(cuda.from_dtype(np.dtype([("s", "S4"), ("u", "U2")]))) == (
        "Record(s[type=[char x 4];offset=0],u[type=[unichr x 2];offset=4];12;False)")
    with pytest.raises(TypeError, match="not an identifier"):
        cuda.from_dtype(np.dtype([("a b", np.int32)]))


def test_record_kernels_compile_with_type_objects_and_text(tmp_path):
    mod = kernels(cuda, tmp_path)
    r, p = cuda.from_dtype(ALIGNED), cuda.from_dtype(PACKED)
    cases = [(mod.set_fields, (r[::1], cuda.float64)), (mod.copy_records, (r[:], r[::1])),
             (mod.packed_ops, (cuda.float64[::1], p[::1])),
             (mod.record_arg, (r, cuda.float64[::1])), (mod.grid2d, (r[:, ::1],)),
             (mod.nested_rw, (cuda.from_dtype(NESTED), cuda.float32[::1])),
             (mod.nested_rows, (cuda.from_dtype(NESTED)[::1],)),
             (mod.through_device_functions, (r[::1], cuda.float64[::1])),
             (mod.in_local_and_shared, (cuda.float64[::1], cuda.float64[::1])),
             (mod.set_fields, f"void({r}[::1], float64)")]
    for f, sig in cases:
        ptx, resty = cuda.compile_ptx(f, sig, cc=(9, 0))
        assert str(resty) == "none"
        check_ptx(ptx, tmp_path)
    # a packed float64 at offset 1 can only be read byte by byte; aligned fields in one load
    ptx, _ = cuda.compile_ptx(mod.packed_ops, (cuda.float64[::1], p[::1]), cc=(9, 0))
    assert "ld.global.u8" in ptx and "ld.global.f64" not in ptx
    ptx, _ = cuda.compile_ptx(mod.set_fields, (r[::1], cuda.float64), cc=(9, 0))
    assert "st.global.f64" in ptx


def test_record_field_types(tmp_path):
    r = cuda.from_dtype(ALIGNED)

    def typeof(body, sig):
        m = load_kernel_module(tmp_path, "record_types", f"def f(r):\n    return {body}\n", cuda)
        return str(cuda.compile(m.f, sig)[1])

    assert typeof("r.a", (r,)) == "float64"
    assert typeof("r['b']", (r,)) == "int32"
    assert typeof("r.flag", (r,)) == "bool"
    assert typeof("r.c * 2", (r,)) == "complex128"
    assert typeof("r[0].b + 1", (r[:],)) == "int64"
    assert typeof("r[0]", (r,)) == "float64"  # a field by its position, as numba's rec[k]
    assert typeof("r[1]", (r,)) == "int32"
    assert typeof("r[-1]", (r,)) == "complex64"
    n = cuda.from_dtype(NESTED)
    assert typeof("r.j", (n,)) == "array(float32, 2d, C)"
    assert typeof("r.h[1]", (n,)) == "int16"


@pytest.mark.parametrize("body, message", [
    ("    return r.q\n", r"Unknown attribute 'q' of type Record\(a\[type=float64"),
    ("    return r[4]\n", "Requested index 4 is out of range"),
    ("    return r[-5]\n", "Requested index -5 is out of range"),
    ("    return r[r.b]\n", "or the field's position as an integer constant, not by a run-time"),
    ("    r.a = (1, 2)\n", "Cannot convert UniTuple\\(int64 x 2\\) to float64 in a record"),
    ("    x = 1.0\n    x.real = 2.0\n", "cannot assign to attribute 'real' of float64"),
])
def test_record_errors(tmp_path, body, message):
    r = cuda.from_dtype(ALIGNED)
    m = load_kernel_module(tmp_path, "record_bad", f"def f(r):\n{body}", cuda)
    with pytest.raises(cuda.TypingError, match=message):
        cuda.compile(m.f, (r,))


def test_records_of_other_types_do_not_mix(tmp_path):
    r, p = cuda.from_dtype(ALIGNED), cuda.from_dtype(PACKED)
    src = "def f(a, b):\n    a[0] = b[0]\n"
    m = load_kernel_module(tmp_path, "record_mix", src, cuda)
    with pytest.raises(cuda.TypingError, match="Cannot convert Record"):
        cuda.compile(m.f, (r[:], p[:]))
    src = "def f(a, b):\n    a[0] = b[0]\n"
    m = load_kernel_module(tmp_path, "record_into_float", src, cuda)
    with pytest.raises(cuda.TypingError, match="Cannot convert Record"):
        cuda.compile(m.f, (cuda.float64[:], r[:]))


def test_record_signatures_parse_and_refuse(tmp_path):
    m = load_kernel_module(tmp_path, "record_sig", "def f(r):\n    pass\n", cuda)
    good = "void(Record(a[type=float64;offset=0],b[type=int32;offset=8];16;True)[:])"
    cuda.compile(m.f, good)
    for bad, message in [
        ("void(Record(a[type=float64;offset=12];16;True))", "field 'a' lies outside"),
        ("void(Record(a[type=int8;offset=0],a[type=int8;offset=1];2;False))",
         "field 'a' appears twice"),
        ("void(Record(a[type=float64[:];offset=0];8;True))", "record fields must be scalars"),
        ("void(Record(a[type=float64;offset=0];8;Maybe))", "expected True or False"),
        ("void(Record(a[type=float64;offset=x];8;True))", "expected a field offset"),
        ("void(Record(a[type=nestedarray(float32, (3, 2));offset=1];25;False))",
         "the array field 'a' is not aligned for its elements"),
        ("void(Record(a[type=nestedarray(float32, (3, 2));offset=0];20;False))",
         "field 'a' lies outside"),
        ("void(Record(a[type=nestedarray(float32, (0,));offset=0];4;False))", "extent of 0"),
    ]:
        with pytest.raises(Exception, match=message):
            cuda.compile(m.f, bad)


def test_record_arguments_are_checked(tmp_path):
    mod = kernels(cuda, tmp_path)
    r = cuda.from_dtype(ALIGNED)
    k = cuda.jit((r, cuda.float64[::1]))(mod.record_arg)
    out = cuda.device_array(1)
    with pytest.raises(TypeError, match="expected a record of type Record"):
        k[1, 1](np.zeros(1, PACKED)[0], out)
    with pytest.raises(TypeError, match="expected a record of 24 bytes"):
        k[1, 1](bytearray(8), out)
    with pytest.raises(TypeError, match="expected a record"):
        k[1, 1](3.0, out)
    k[1, 1](cuda.to_device(np.zeros(1, ALIGNED)[0]), out)  # a device record, in place
    with pytest.raises(TypeError, match="got a device array of 2 of them"):
        k[1, 1](cuda.to_device(np.zeros(2, ALIGNED)), out)
    with pytest.raises(TypeError, match="expected a record of type Record"):
        k[1, 1](cuda.to_device(np.zeros(1, PACKED)[0]), out)


def test_recarray_elements_are_record_arguments(tmp_path):
    """np.recarray's elements are numpy.record, a Python subclass of numpy.void (its type's
    name is "record", not "numpy.record"): the same Record argument, written back."""
    mod = kernels(cuda, tmp_path)
    rr = np.zeros(2, ALIGNED).view(np.recarray)
    assert type(rr[1]).__name__ == "record"
    k = cuda.jit(mod.record_arg)
    k[1, 1](rr[1], cuda.device_array(1))
    assert sig_texts(k) == [f"void({cuda.from_dtype(ALIGNED)}, float64[::1])"]


def test_typeof_records_for_lazy_kernels(tmp_path):
    mod = kernels(cuda, tmp_path)
    k = cuda.jit(mod.record_arg)
    rec = np.zeros(2, ALIGNED)
    k[1, 1](rec[0], cuda.device_array(1))
    k[1, 1](cuda.to_device(rec[1]), cuda.device_array(1))  # a device record: the same type
    r = cuda.from_dtype(ALIGNED)
    assert sig_texts(k) == [f"void({r}, float64[::1])"]


def results(cuda_module, directory, packed=True):
    """Every kernel run on fixed inputs: a dict of arrays (records viewed as their bytes, so
    that np.savez keeps them whatever the dtype). packed=False leaves out what only nbcuda
    compares with numpy: the packed record, which numba-cuda refuses ("Record(...).y of type
    float64 is not aligned"), and records in local and shared arrays."""
    mod = kernels(cuda_module, directory)
    out = {}

    def raw(a):
        return np.ascontiguousarray(a).view(np.uint8).reshape(-1)

    a = np.zeros(64, ALIGNED)
    a["b"] = np.arange(64)
    a["c"] = 1 + 1j
    d = cuda_module.to_device(a)
    cuda_module.jit(mod.set_fields)[2, 32](d, 1.5)
    out["set_fields"] = raw(d.copy_to_host())
    src = cuda_module.to_device(a)
    dst = cuda_module.to_device(np.zeros(64, ALIGNED))
    cuda_module.jit(mod.copy_records)[2, 32](dst, src)
    out["copy_records"] = raw(dst.copy_to_host())
    if packed:
        p = np.zeros(40, PACKED)
        p["x"] = np.arange(40) - 20
        p["y"] = np.linspace(-1.0, 3.0, 40)
        p["z"] = np.arange(40) * 100
        s = np.zeros(40)
        cuda_module.jit(mod.packed_ops)[2, 32](s, p)  # host arrays: copied there and back
        out["packed_sum"] = s
        out["packed"] = raw(p)
        xs = np.linspace(0.0, 3.1, 32)
        ls = np.zeros(32)
        cuda_module.jit(mod.in_local_and_shared)[1, 32](ls, xs)
        out["local_shared"] = ls
    recs = np.zeros(3, ALIGNED)
    recs["a"] = [1.5, 2.5, 3.5]
    recs["b"] = [10, 20, 30]
    got = np.zeros(1)
    cuda_module.jit(mod.record_arg)[1, 1](recs[1], got)  # written through to recs
    out["record_arg"] = got
    out["record_arg_written"] = raw(recs)
    rr = np.zeros(3, ALIGNED).view(np.recarray)  # numpy.record, a Python subclass of void
    rr.a = [0.5, 4.5, 8.5]
    got = np.zeros(1)
    cuda_module.jit(mod.record_arg)[1, 1](rr[2], got)
    out["recarray_arg"] = got
    out["recarray_arg_written"] = raw(np.asarray(rr).view(ALIGNED))
    dev = cuda_module.to_device(recs[2])  # numba's DeviceRecord: used in place
    got2 = np.zeros(1)
    cuda_module.jit(mod.record_arg)[1, 1](dev, got2)
    out["device_record"] = got2
    out["device_record_written"] = raw(dev.copy_to_host())
    n = np.zeros(2, NESTED)
    n["h"] = [[1, 2], [3, 4]]
    got = np.zeros(1, np.float32)
    cuda_module.jit(mod.nested_rw)[1, 1](n[1], got)
    out["nested_rw"] = got
    out["nested_rw_written"] = raw(n)
    rows = cuda_module.to_device(np.zeros(4, NESTED))
    cuda_module.jit(mod.nested_rows)[1, 32](rows)
    out["nested_rows"] = raw(rows.copy_to_host())
    f = np.zeros(16, ALIGNED)
    f["a"] = np.arange(16) * 0.5
    fo = np.zeros(16)
    cuda_module.jit(mod.through_device_functions)[1, 32](f, fo)
    out["devfn"] = fo
    out["devfn_written"] = raw(f)
    bp = np.zeros(8, ALIGNED)
    bp["a"] = np.arange(8) * 0.25
    bp["b"] = np.arange(8) + 100
    bp["c"] = 1j * np.arange(8)
    bo = np.zeros(8)
    cuda_module.jit(mod.by_position)[1, 32](bp, bo)
    out["by_position"] = bo
    g = cuda_module.to_device(np.zeros((5, 7), ALIGNED))
    cuda_module.jit(mod.grid2d)[(1, 1), (8, 8)](g)
    out["grid2d"] = raw(g.copy_to_host())
    return out


@pytest.mark.gpu
def test_records_match_numpy_and_numba_cuda(gpu, tmp_path):
    mine = results(cuda, tmp_path)
    a = np.zeros(64, ALIGNED)
    a["b"] = np.arange(64)
    a["c"] = 1 + 1j
    i = np.arange(64)
    e = a.copy()
    e["a"] = 1.5 * i
    e["b"] = 2 * i
    e["c"] = (1 + 1j) + 2.5j * i
    e["flag"] = i % 2 == 0
    e["b"][i % 2 == 0] *= 3

    def view(key, dtype):
        return mine[key].view(dtype)

    got = view("set_fields", ALIGNED)
    for f in ALIGNED.names:
        np.testing.assert_array_equal(got[f], e[f], err_msg=f)
    np.testing.assert_array_equal(view("copy_records", ALIGNED), a[::-1])
    p = np.zeros(40, PACKED)
    p["x"] = np.arange(40) - 20
    p["y"] = np.linspace(-1.0, 3.0, 40)
    p["z"] = np.arange(40) * 100
    np.testing.assert_array_equal(mine["packed_sum"], p["x"] + p["y"] + p["z"])
    q = p.copy()
    q["y"] *= 2.0
    q["x"] -= 1
    q["z"] += 1000
    np.testing.assert_array_equal(view("packed", PACKED), q)
    xs = np.linspace(0.0, 3.1, 32)
    np.testing.assert_array_equal(mine["local_shared"], 2 * xs[::-1] + 3 + np.arange(32)[::-1])
    assert mine["record_arg"][0] == 22.5
    recs = view("record_arg_written", ALIGNED)
    assert list(recs["a"]) == [1.5, 42.0, 3.5] and list(recs["b"]) == [10, 7, 30]
    assert mine["device_record"][0] == 33.5
    dev = view("device_record_written", ALIGNED)
    assert dev["a"][0] == 42.0 and dev["b"][0] == 7
    assert mine["nested_rw"][0] == 9.0
    n = view("nested_rw_written", NESTED)
    assert n[1]["i"] == 3 and n[1]["j"][1, 0] == 5.0 and list(n[1]["h"]) == [3, 7]
    assert n[0]["i"] == 0 and list(n[0]["h"]) == [1, 2]
    rows = view("nested_rows", NESTED)
    k, i, j = np.meshgrid(np.arange(4), np.arange(3), np.arange(2), indexing="ij")
    np.testing.assert_array_equal(rows["j"], k * 100 + i * 10 + j)
    np.testing.assert_array_equal(rows["h"], np.repeat(np.arange(4), 2).reshape(4, 2))
    np.testing.assert_array_equal(mine["devfn"], np.arange(16) * 1.0)
    f = view("devfn_written", ALIGNED)
    np.testing.assert_array_equal(f["b"], np.arange(16))
    np.testing.assert_array_equal(f["a"], np.r_[np.arange(15) * 0.5, -1.0])
    np.testing.assert_array_equal(mine["by_position"], np.arange(8) * 0.25 + np.arange(8) + 100
                                  + np.arange(8))
    g = view("grid2d", ALIGNED).reshape(5, 7)
    ii, jj = np.meshgrid(np.arange(5), np.arange(7), indexing="ij")
    np.testing.assert_array_equal(g["a"], ii * 10 + jj)
    np.testing.assert_array_equal(g["c"], ii + 1j * jj)
    theirs = numba_side("test_kernel_records",
                        f"t.results(cuda, pathlib.Path({str(tmp_path)!r}), packed=False)",
                        tmp_path / "numba.npz")
    for key in theirs:
        np.testing.assert_array_equal(mine[key], theirs[key], err_msg=key)
