"""numpy's fixed-size strings in kernels (numba's CharSeq `[char x n]` for S<n> and
UnicodeCharSeq `[unichr x n]` for U<n>): arrays of them as kernel arguments, string literals
assigned to elements and record fields (padded with zeros or cut to the length, as numpy
assigns), elements copied, device arrays of strings. numba-cuda's test_const_string; on the
GPU the results are compared with numpy and with numba-cuda."""
import numpy as np
import pytest

import nbcuda as cuda

from conftest import USING_TESTDRIVER, numba_side
from test_compile import compile_checked


def k_unicode(arr):
    for i in range(arr.size):
        arr[i] = "XYZ"
    arr[arr.size - 1] = "a much longer text than twelve"  # cut, as numpy cuts
    arr[0] = "é€𝄞"  # code points beyond ASCII


def k_bytes(arr):
    for i in range(arr.size - 1):
        arr[i] = b"XYZ"
    arr[1] = b"a\xffb"


def k_records(a):
    a[0]["x"] = 1
    a[0]["y"] = "ABC"
    a[1]["x"] = 2
    a[1]["y"] = "XYZ"


def k_record_copy(a):
    a[2].y = a[0].y


def k_numba_cases(u, b):  # numba-cuda's test_const_string, for the comparison with it
    for i in range(u.size - 1):
        u[i] = "XYZ"
        b[i] = b"XYZ"


def k_gather(names, idx, out):
    for i in range(out.size):
        out[i] = names[idx[i]]
    s = names[0]
    out[0] = s


REC = np.dtype([("x", np.int32), ("y", np.dtype("<U12"))])


def run_numba_cases(cu):
    u, b, r = np.zeros(5, "<U12"), np.zeros(5, "S12"), np.zeros(3, REC)
    cu.jit(k_numba_cases)[1, 1](u, b)
    cu.jit(k_records)[1, 1](r)
    return {"u": u, "b": b, "r": r}


def run_kernels(cu):
    out = {}
    u = np.zeros(4, "<U12")
    cu.jit(k_unicode)[1, 1](u)
    out["unicode"] = u
    b = np.zeros(4, "S5")
    cu.jit(k_bytes)[1, 1](b)
    out["bytes"] = b
    r = np.zeros(3, REC)
    cu.jit(k_records)[1, 1](r)
    cu.jit(k_record_copy)[1, 1](r)
    out["records"] = r
    names = np.array(["ant", "bee", "cat", "dog"], dtype="<U6")
    idx = np.array([3, 1, 2, 0, 0])
    g = np.zeros(5, "<U6")
    cu.jit(k_gather)[1, 1](names, idx, g)
    out["gather"] = g
    return out


def expected():
    u = np.zeros(4, "<U12")
    u[:] = "XYZ"
    u[-1] = "a much longer text than twelve"
    u[0] = "é€𝄞"
    b = np.zeros(4, "S5")
    b[:-1] = b"XYZ"
    b[1] = b"a\xffb"
    r = np.zeros(3, REC)
    r[0] = (1, "ABC")
    r[1] = (2, "XYZ")
    r[2]["y"] = "ABC"
    names = np.array(["ant", "bee", "cat", "dog"], dtype="<U6")
    g = names[[3, 1, 2, 0, 0]]
    g[0] = names[0]
    return {"unicode": u, "bytes": b, "records": r, "gather": g}


def test_types_signatures_and_ptx(tmp_path):
    assert str(cuda.from_dtype(REC)) == (
        "Record(x[type=int32;offset=0],y[type=[unichr x 12];offset=4];52;False)")
    for fn, sig in ((k_unicode, "void([unichr x 12][::1])"), (k_bytes, "void([char x 5][::1])"),
                    (k_records, f"void({cuda.from_dtype(REC)}[::1])"),
                    (k_record_copy, f"void({cuda.from_dtype(REC)}[::1])"),
                    (k_gather, "void([unichr x 6][::1], int64[::1], [unichr x 6][::1])")):
        compile_checked(fn, sig, tmp_path)


def test_launches_type_string_arrays(tdrv):
    k = cuda.jit(k_gather)
    names = np.array(["ant", "bee"], dtype="<U6")
    k[1, 1](names, np.array([1, 0]), np.zeros(2, "<U6"))
    assert [str(t) for t in k.signatures[0]] == [
        "array([unichr x 6], 1d, C)", "array(int64, 1d, C)", "array([unichr x 6], 1d, C)"]
    eager = cuda.jit("void([char x 5][::1])")(k_bytes)
    with pytest.raises(TypeError, match="expected array\\(\\[char x 5\\], 1d, C\\)"):
        eager[1, 1](np.zeros(4, "S6"))
    with pytest.raises(cuda.TypingError, match="bytes go to S arrays, str to U arrays"):
        cuda.jit(k_bytes)[1, 1](np.zeros(4, "<U5"))


def test_device_arrays_of_strings(tdrv):
    u = np.array(["ant", "bee", "cat"], dtype="<U6")
    d = cuda.to_device(u)
    assert d.dtype == u.dtype and d.__cuda_array_interface__["typestr"] == "<U6"
    np.testing.assert_array_equal(d.copy_to_host(), u)
    s = cuda.device_array(3, "S5")
    assert s.dtype == np.dtype("S5") and s.__cuda_array_interface__["typestr"] == "|S5"
    w = cuda.from_cuda_array_interface(d.__cuda_array_interface__, owner=d)
    assert w.dtype == u.dtype and w.shape == (3,)


@pytest.mark.skipif(USING_TESTDRIVER, reason="kernels run on a GPU only")
def test_results_match_numpy_and_numba_cuda(tmp_path):
    mine = run_kernels(cuda)
    for key, want in expected().items():
        np.testing.assert_array_equal(mine[key], want, err_msg=key)
    ours = run_numba_cases(cuda)
    theirs = numba_side("test_strings", "t.run_numba_cases(cuda)", tmp_path / "numba.npz")
    for key in ours:
        np.testing.assert_array_equal(ours[key], theirs[key], err_msg=key)


def test_one_string_literal_stored_at_two_lengths_is_refused():
    """`a[0] = r.y = "ABC"` stores one literal, lowered once: targets of one string type take
    it; targets of two lengths (or a name, which keeps the literal's own length, beside a
    longer element) are refused with a typing error, not a compiler failure (found by the
    fuzzer)."""
    rec = "Record(x[type=int32;offset=0],y[type=[unichr x 12];offset=4];52;False)[::1]"

    def two_lengths(out, recs):
        out[0] = recs[0]["y"] = "ABC"

    def name_and_element(out, recs):
        x = out[0] = "ABC"  # noqa: F841

    for f in (two_lengths, name_and_element):
        with pytest.raises(cuda.TypingError, match="Cannot store one string literal as"):
            cuda.compile_ptx(f, f"void([unichr x 6][::1], {rec})")

    def same_length(out, out2):
        out[0] = out2[0] = "ABC"

    def two_fields(out, recs):
        recs[0].y = recs[1].y = "ABCD"

    cuda.compile_ptx(same_length, "void([unichr x 6][::1], [unichr x 6][::1])")
    cuda.compile_ptx(two_fields, f"void([unichr x 6][::1], {rec})")
