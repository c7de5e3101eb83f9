"""Named and empty tuples as kernel arguments, as numba-cuda's test_array_args passes them: a
collections.namedtuple is numba's NamedTuple / NamedUniTuple (its fields read as `x.y`;
nbcuda spells its type `NamedTuple(Point, x: int64, y: int64)`, as numba's printed
`Point(int64 x 2)` lacks the field names), `()` is an empty Tuple (nothing passed; len 0),
`((), (), ())` a tuple of them. CI: the kernels compile and launch on the test driver, and
their signatures say so; the GPU compares with Python and numba-cuda."""
from collections import namedtuple

import numpy as np
import pytest

import nbcuda as cuda
from conftest import assert_same_as_numba_cuda, load_kernel_module, sig_texts

SOURCE = '''
def named_unituple(r, x):
    r[0] = x.x
    r[1] = x.y


def named_tuple(r1, r2, x):
    r1[0] = x.x
    r1[1] = x.y
    r2[0] = x.r + x[2]


def empty_tuple(r, x):
    r[0] = len(x)


def tuple_of_empty_tuples(r, x):
    r[0] = len(x)
    r[1] = len(x[0])


def no_such_field(r, p):
    r[0] = p.z
'''

Point = namedtuple("Point", ("x", "y"))
Circle = namedtuple("Circle", ("x", "y", "r"))


@pytest.fixture
def m(tmp_path):
    return load_kernel_module(tmp_path, "named_tuples", SOURCE, cuda)


def run_all(lib, m):
    out = {}
    r = np.zeros(2, np.int64)
    lib.jit(m.named_unituple)[1, 1](r, Point(1, 2))
    out["named_unituple"] = r
    r1, r2 = np.zeros(2, np.int64), np.zeros(1)
    lib.jit(m.named_tuple)[1, 1](r1, r2, Circle(1, 2, 2.236))
    out["named_tuple"] = np.concatenate([r1, r2])
    r = np.ones(1, np.int64)
    lib.jit(m.empty_tuple)[1, 1](r, ())
    out["empty_tuple"] = r
    r = np.ones(2, np.int64)
    lib.jit(m.tuple_of_empty_tuples)[1, 1](r, ((), (), ()))
    out["tuple_of_empty_tuples"] = r
    return out


def test_signatures_and_launches(m, tdrv):
    run_all(cuda, m)
    k = cuda.jit(m.named_tuple)
    k[1, 1](np.zeros(2, np.int64), np.zeros(1), Circle(1, 2, 2.5))
    assert sig_texts(k) == ["void(int64[::1], float64[::1], "
                            "NamedTuple(Circle, x: int64, y: int64, r: float64))"]
    e = cuda.jit(m.empty_tuple)
    e[1, 1](np.ones(1, np.int64), ())
    assert sig_texts(e) == ["void(int64[::1], Tuple())"]
    with pytest.raises(cuda.TypingError, match=r"Unknown attribute 'z' of type "
                                               r"NamedTuple\(Point, x: int64, y: int64\)"):
        cuda.compile_ptx(m.no_such_field,
                         "void(int64[::1], NamedTuple(Point, x: int64, y: int64))", cc=(9, 0))


@pytest.mark.gpu
def test_matches_python_and_numba_cuda(gpu, tmp_path, m):
    mine = run_all(cuda, m)
    np.testing.assert_array_equal(mine["named_unituple"], [1, 2])
    np.testing.assert_array_equal(mine["named_tuple"], [1, 2, 2 * 2.236])
    np.testing.assert_array_equal(mine["empty_tuple"], [0])
    np.testing.assert_array_equal(mine["tuple_of_empty_tuples"], [3, 0])
    assert_same_as_numba_cuda(run_all, SOURCE, tmp_path, "named_tuples_numba", mine)
