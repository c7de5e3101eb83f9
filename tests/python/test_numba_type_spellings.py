"""Every spelling numba gives a type parses in nbcuda's signatures (issue: "a type printed by
numba parses in nbcuda"): numba's repr() (Array(float32, 0, 'C', False, aligned=True),
Record([...], 16, True)) and str() (readonly array(...), Record(a[type=...;alignment=4],...)),
and numba's own type objects, read-only arrays included. The literal spellings are numba
0.68's output; where numba is installed, its types are printed here and read back."""
import importlib.util

import pytest

RECORD = "Record(a[type=int32;offset=0],b[type=float64;offset=8];16;True)"
PACKED = "Record(a[type=int32;offset=0],b[type=float64;offset=4];12;False)"
SPELLINGS = [
    ("Array(float32, 0, 'C', False, aligned=True)", "array(float32, 0d, C)"),
    ("Array(float32, 2, 'A', False, aligned=True)", "array(float32, 2d, A)"),
    ("Array(int16, 3, 'F')", "array(int16, 3d, F)"),
    ("Array(float32, 1, 'C', True, aligned=True)", "readonly array(float32, 1d, C)"),
    ("readonly array(float64, 2d, C)", "readonly array(float64, 2d, C)"),
    ("Record([('a', {'type': int32, 'offset': 0, 'alignment': None, 'title': None, }), "
     "('b', {'type': float64, 'offset': 8, 'alignment': None, 'title': None, })], 16, True)",
     RECORD),
    ("Record(a[type=int32;offset=0;alignment=4],b[type=float64;offset=8;alignment=8];16;True)",
     RECORD),
    ("Array(Record([('a', {'type': int32, 'offset': 0, 'alignment': None, 'title': None, }), "
     "('b', {'type': float64, 'offset': 4, 'alignment': None, 'title': None, })], 12, False), "
     "1, 'C', False, aligned=False)", f"unaligned array({PACKED}, 1d, C)"),
    (f"unaligned readonly array({PACKED}, 1d, C)", f"unaligned readonly array({PACKED}, 1d, C)"),
]


def _f(a):
    pass


@pytest.mark.parametrize("spelling,printed", SPELLINGS)
def test_numba_spelling_parses(cuda, spelling, printed):
    k = cuda.jit(f"void({spelling})")(_f)
    (argtypes,) = k.signatures
    assert str(argtypes[0]) == printed


def test_readonly_array_type_object(cuda):
    t = cuda.types.Array(cuda.float32, 2, "C", True)
    assert str(t) == "readonly array(float32, 2d, C)"
    assert repr(t) == "Array(float32, 2, 'C', True, aligned=True)"
    k = cuda.jit(cuda.void(t))(_f)
    assert k.signatures == [(t,)]
    assert cuda.types.Array(cuda.float32, 2, "C") != t


def test_readonly_array_cannot_be_written(cuda, tmp_path):
    def w(a):
        a[0] = 1

    with pytest.raises(Exception, match="cannot modify a read-only array"):
        cuda.jit("void(readonly array(float32, 1d, C))")(w)


@pytest.mark.parametrize("spelling,why", [
    ("Array(float32, 1, 'C', False, aligned=False)", "an unaligned array of other than a packed"),
    ("unaligned array(float32, 1d, C)", "an unaligned array of other than a packed"),
    ("Array(float32, 1, C)", "expected the layout 'C', 'F' or 'A'"),
    ("readonly float32", "expected array"),
])
def test_bad_spellings_say_why(cuda, spelling, why):
    with pytest.raises(Exception, match=why.replace("(", r"\(")):
        cuda.jit(f"void({spelling})")(_f)


def test_unaligned_scalar_array_type_is_refused(cuda):
    with pytest.raises(TypeError, match="aligned=False is an array of a packed record"):
        cuda.types.Array(cuda.float32, 1, "C", aligned=False)


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="needs numba")
def test_every_numba_printing_reads_back(cuda):
    import numpy as np
    from numba import from_dtype
    from numba.core import types as nt

    rec = from_dtype(np.dtype([("a", np.int32), ("b", np.float64)], align=True))
    packed = from_dtype(np.dtype([("a", np.int32), ("b", np.float64)]))
    nested = from_dtype(np.dtype([("a", np.int32, (3,)), ("r", [("x", np.int8), ("y", np.float32)])],
                                 align=True))
    made = [nt.Array(dt, nd, lay, readonly=ro)
            for dt in (nt.float32, nt.int8, nt.complex128, rec, packed)
            for nd in (0, 1, 3) for lay in "CFA" for ro in (False, True)]
    made += [rec, packed, nested, nt.UniTuple(nt.int32, 3), nt.Tuple((nt.int32, nt.float64)),
             nt.CPointer(nt.float32), nt.NPDatetime("s"), nt.NPTimedelta("ms")]
    for t in made:
        for spelling in (repr(t), str(t)):
            k = cuda.jit(f"void({spelling})")(_f)
            assert str(k.signatures[0][0]) == str(t), spelling
        k = cuda.jit(nt.void(t))(_f)  # numba's own object
        # nbcuda's type objects spell a 1-d array contiguous in either order as C
        # (float32[::1]), as numba's typeof of such an array is
        one_d_f = getattr(t, "ndim", 0) == 1 and t.layout == "F"
        want = str(t).replace("1d, F)", "1d, C)") if one_d_f else str(t)
        assert str(k.signatures[0][0]) == want, repr(t)
