"""Global numpy arrays in kernels, frozen into constant memory as numba does (and
cuda.const.array_like, which numba lowers the same way): the bytes in `.const _cudapy_cmem`
(numba-cuda's PTX declares the same lines for the arrays below), read with ld.const, the
array read-only, any layout or byte order read in C order as numbers. PTX checked by ptxas;
the gpu test runs a kernel and compares with numpy and numba-cuda."""
import inspect

import numpy as np
import pytest

import nbcuda as cuda

from test_compile import check_ptx

LUT = np.array([1.5, 2.5, 3.5], np.float32)
M = np.arange(6, dtype=np.int16).reshape(2, 3)
F = np.asfortranarray(np.arange(6.0).reshape(2, 3))
BIG = np.array([1, 2, 3], dtype=">i4")
FLAGS = np.array([True, False, True])
Z = np.array([1 + 2j, 3 - 4j], np.complex64)
HUGE = np.zeros(65537, np.uint8)
OBJ = np.array(["a"], dtype=object)


REC = np.array([(1.0, 2), (3.0, 4)], dtype=[("x", np.float64), ("y", np.int64)])
# numba-cuda's test_constmem CONST_RECORD_ALIGN: an aligned struct with padding
REC_ALIGN = np.array([(1, 2, 3, 0xDEADBEEF, 8), (4, 5, 6, 0xBEEFDEAD, 10)],
                     dtype=np.dtype([("a", np.uint8), ("b", np.uint8), ("x", np.uint8),
                                     ("y", np.uint32), ("z", np.uint8)], align=True))
# packed: y (float64) at offset 4, read without assuming 8-byte alignment
REC_PACKED = np.array([(7, -1.5), (9, 2.25)], dtype=[("i", np.int32), ("y", np.float64)])


def reads_records(out, i):
    c = cuda.const.array_like(REC_ALIGN)
    r = REC[i]
    out[0] = r.x + REC[i]["y"]
    out[1] = c[i].a + c[i]["b"] + c[i].x + c[i].y + c[i].z
    out[2] = REC_PACKED[i].i + REC_PACKED[i].y


def writes_record_field(out):
    c = cuda.const.array_like(REC)
    c[0].x = out[0]


def writes_record_item(out):
    REC[1]["y"] = 3


def writes_through_variable(out):
    r = REC[0]
    r.x = out[0]


def reads(out, i):
    out[0] = LUT[i] + M[i, i] + F[i, 2] + BIG[i] + (1.0 if FLAGS[i] else 0.0)


def reads_complex(out, i):
    out[0] = Z[i]


def via_const(out, i):
    c = cuda.const.array_like(M)
    out[0] = LUT.size + c[i, 2] + M.shape[1]


def writes(out):
    LUT[0] = out[0]


def const_of_argument(out):
    c = cuda.const.array_like(out)
    out[0] = c[0]


def huge(out):
    out[0] = HUGE[0]


def objects(out):
    out[0] = OBJ[0]


def test_arrays_are_constant_memory_like_numbas(tmp_path):
    ptx, _ = cuda.compile_ptx(reads, "void(float64[::1], int64)", cc=(9, 0))
    decls = [line for line in ptx.splitlines() if line.startswith(".const")]
    assert decls == [
        ".const .align 4 .b8 _cudapy_cmem[12] = {0, 0, 192, 63, 0, 0, 32, 64, 0, 0, 96, 64};",
        ".const .align 2 .b8 _cudapy_cmem_$_1[12] = {0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5};",
        # F is Fortran-ordered: frozen in its own order (0 3 1 4 2 5), read with F strides
        ".const .align 8 .b8 _cudapy_cmem_$_2[48] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "
        "8, 64, 0, 0, 0, 0, 0, 0, 240, 63, 0, 0, 0, 0, 0, 0, 16, 64, 0, 0, 0, 0, 0, 0, 0, 64, 0, "
        "0, 0, 0, 0, 0, 20, 64};",
        # big-endian ints are stored in the device's byte order (numba refuses such arrays)
        ".const .align 4 .b8 _cudapy_cmem_$_3[12] = {1, 0, 0, 0, 2, 0, 0, 0, 3};",
        # (FLAGS, 3 bools, is folded into the code by LLVM)
    ]
    assert "ld.const.f32" in ptx and "ld.const.u16" in ptx
    check_ptx(ptx, tmp_path)
    ptx, _ = cuda.compile_ptx(reads_complex, "void(complex64[::1], int64)", cc=(9, 0))
    assert ".const .align 8 .b8 _cudapy_cmem[16] = {0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, " \
        "0, 0, 128, 192};" in ptx  # numba-cuda's line for Z
    check_ptx(ptx, tmp_path)



def test_const_array_like_is_the_frozen_array(tmp_path):
    ptx, resty = cuda.compile_ptx(via_const, "void(float32[::1], int64)", cc=(9, 0))
    assert str(resty) == "none" and "_cudapy_cmem" in ptx
    check_ptx(ptx, tmp_path)
    assert cuda.const.array_like is not None  # the host-side name exists, as in numba


def test_arrays_of_records(tmp_path):
    # numba freezes a structured array too; its Record type is numba's printed one
    ptx, _ = cuda.compile_ptx(reads_records, "void(float64[::1], int64)", cc=(9, 0))
    decls = [line for line in ptx.splitlines() if line.startswith(".const")]
    # one per reference, as numba's (REC and REC_PACKED are read twice), 16-byte aligned
    assert len(decls) == 5 and all(".align 16" in d for d in decls)
    rec = "[32] = {0, 0, 0, 0, 0, 0, 240, 63, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 64, 4};"
    assert sum(d.endswith(rec) for d in decls) == 2
    assert "ld.const" in ptx
    check_ptx(ptx, tmp_path)


@pytest.mark.parametrize("fn, message", [
    (writes, "cannot modify a read-only array"),
    (writes_record_field, "cannot modify a read-only array"),
    (writes_record_item, "cannot modify a read-only array"),
    (writes_through_variable, "cannot modify a read-only array"),
    (const_of_argument, "takes one global array"),
    (huge, "65537 bytes; constant memory holds 65536"),
    (objects, "Untyped global name 'OBJ': Cannot determine Numba type of <class "),
])
def test_refusals(fn, message):
    with pytest.raises(cuda.TypingError, match=message):
        cuda.compile_ptx(fn, "void(float64[::1])", cc=(9, 0))


def table_kernel(out, idx):
    i = cuda.grid(1)
    if i < out.size:
        j = idx[i]
        c = cuda.const.array_like(LUT)
        out[i] = c[j % 3] * M[j % 2, j % 3] + F[j % 2, j % 3] + (FLAGS[j % 3] * 0.5)


@pytest.mark.gpu
def test_kernels_read_the_frozen_values(gpu, tmp_path, monkeypatch):
    n = 4096
    idx = np.random.default_rng(3).integers(0, 1000, n).astype(np.int64)
    j = idx
    expect = (LUT[j % 3].astype(np.float64) * M[j % 2, j % 3] + F[j % 2, j % 3] +
              FLAGS[j % 3] * 0.5)
    out = np.zeros(n)
    cuda.jit("void(float64[::1], int64[::1])")(table_kernel).forall(n)(out, idx)
    np.testing.assert_allclose(out, expect, rtol=1e-15)

    ncuda = pytest.importorskip("numba.cuda")
    source = ("import numpy as np\nfrom numba import cuda\n"
              "LUT, M, F, FLAGS = None, None, None, None\n\n" +
              inspect.getsource(table_kernel))
    (tmp_path / "numba_const_kernels.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    import numba_const_kernels as t
    t.LUT, t.M, t.F, t.FLAGS = LUT, M, F, FLAGS
    theirs = np.zeros(n)
    ncuda.jit("void(float64[::1], int64[::1])")(t.table_kernel).forall(n)(theirs, idx)
    np.testing.assert_array_equal(out, theirs)


@pytest.mark.gpu
def test_kernels_read_frozen_records(gpu):
    k = cuda.jit("void(float64[::1], int64)")(reads_records)
    for i in range(2):
        out = np.zeros(3)
        k[1, 1](out, i)
        a = REC_ALIGN[i]
        expect = [REC[i]["x"] + REC[i]["y"],
                  float(a["a"]) + a["b"] + a["x"] + float(a["y"]) + a["z"],
                  REC_PACKED[i]["i"] + REC_PACKED[i]["y"]]
        np.testing.assert_array_equal(out, expect)


TUPLE_SOURCE = '''
import numpy as np

# numba freezes a global tuple of arrays too (numba-cuda's test_array_reductions unrolls such
# tuples): each array in constant memory, the tuple's other items constants
CASES = (np.float64([1.0, 2.0, np.nan]), np.float64([-0.0, -1.5]),
         np.float64([5.0, 3.0, 1.0, 7.0]))
MIXED = (np.int32([4, 5, 6]), 2.5, (np.float32([1.5, -1.0]), 7))
# 0-d and empty arrays too (numba-cuda's test_count_nonzero_basic)
ODD = (np.array(0), np.float64([]), np.array(2.5), np.int64([1, 0, 2]))
SCALAR = np.array(7, np.int16)


def unrolled(out, j):
    i = 0
    for arr in cuda.literal_unroll(CASES):
        out[i] = np.nansum(arr) + arr[j % arr.shape[0]]
        i += 1
    ints = MIXED[0]
    out[3] = ints[j % 3] + MIXED[1] + MIXED[2][0][j % 2] + MIXED[2][1] + len(CASES[2])


def zero_d_reductions(out):
    # numba-cuda 0.30.4 cannot compile max() of a 0-d array, nor unroll a global tuple of
    # arrays of several ranks (getiter of the tuple): compared with numpy only
    k = 0
    for arr in cuda.literal_unroll(ODD):
        out[k] = np.count_nonzero(arr)
        k += 1
    out[k] = SCALAR[()]
    out[k + 1] = SCALAR.max() + SCALAR.sum() + ODD[2].mean() + ODD[0].argmax()
'''


def _tuple_kernels(tmp_path, lib):
    from conftest import load_kernel_module
    return load_kernel_module(tmp_path, f"const_tuples_{lib.__name__.replace('.', '_')}",
                              TUPLE_SOURCE, lib)


def test_tuples_of_arrays_are_frozen(tmp_path):
    m = _tuple_kernels(tmp_path, cuda)
    ptx, _ = cuda.compile_ptx(m.unrolled, "void(float64[::1], int64)", cc=(9, 0))
    check_ptx(ptx, tmp_path)
    # each array read at a run-time index once in constant memory
    assert len([line for line in ptx.splitlines() if line.startswith(".const")]) == 5
    assert "ld.const.f64" in ptx and ("ld.const.u32" in ptx or "ld.const.s32" in ptx)
    ptx, _ = cuda.compile_ptx(m.zero_d_reductions, "void(float64[::1])", cc=(9, 0))
    check_ptx(ptx, tmp_path)


@pytest.mark.gpu
def test_tuples_of_arrays_match_numpy_and_numba_cuda(gpu, tmp_path):
    results = []
    for lib in (cuda, pytest.importorskip("numba.cuda")):
        m = _tuple_kernels(tmp_path, lib)
        out = np.zeros(4)
        lib.jit("void(float64[::1], int64)")(m.unrolled)[1, 1](out, 5)
        results.append(out)
    m = _tuple_kernels(tmp_path, cuda)
    expect = [np.nansum(a) + a[5 % a.shape[0]] for a in m.CASES]
    expect.append(6 + 2.5 + -1.0 + 7 + 4)
    np.testing.assert_array_equal(results[0], expect)
    np.testing.assert_array_equal(results[0], results[1])
    out = np.zeros(6)
    cuda.jit("void(float64[::1])")(m.zero_d_reductions)[1, 1](out)
    np.testing.assert_array_equal(out, [np.count_nonzero(a) for a in m.ODD] +
                                  [7, 7 + 7 + 2.5 + 0])
