"""A name rebound to a value of another type once its old value is dead, as numba's SSA form
allows (numba-cuda's test_ssa.py issues 2194, 3931, 5493, and test_vector_type's reuse of a
loop variable): each web of bindings connected by reads is its own variable (ssa.c), so

- `arr = arr.reshape(6); arr = arr.reshape(3, 2)` types arr 2-d, 1-d, 2-d;
- `for v in (a2, b2): ...` then `for v in tuple((a3, b3)): ...` types v float32x2, then
  float32x3 (`tuple(t)` of a tuple is t);
- `for i in range(np.uint32(1))` and a later `for i in range(s, 1)` keep i an integer in each
  loop (unified, uint32 and int64 would make a float64);
- `t` a loop variable, then `t = B` an array in an inner loop;
- `N = 100 ... N = 50`, each a constant shape.

Bindings that meet (after an if, at a loop head) still unify, and a conflict there is still
an error. CI: the kernels compile, ptxas accepts them, they launch on the test driver; the GPU
compares with numpy and numba-cuda."""
import numpy as np
import pytest

import nbcuda as cuda
from conftest import assert_same_as_numba_cuda, load_kernel_module
from test_compile import compile_checked

SOURCE = '''
import numpy as np
from numba import float32, int32


def issue2194(result, V):
    s = np.uint32(1)
    for i in range(s):
        V[i] = 1
    for i in range(s, 1):
        pass
    result[0] = V[0]


def issue3931(result, arr):
    for i in range(1):
        arr = arr.reshape(3 * 2)
        arr = arr.reshape(3, 2)
    for i in range(arr.shape[0]):
        for j in range(arr.shape[1]):
            result[i, j] = arr[i, j] + 1


def issue5493(res, m, n, B):
    for t in range(1, m):
        for idx in range(n):
            t = B
            if idx == 0:
                res[0] = t[0]
            else:
                res[0] += t[0]


def vector_loops(res):
    one = float32(1.0)
    two = float32(2.0)
    three = float32(3.0)
    j = 0
    for v in (cuda.float32x2(one, two), cuda.float32x2(two, three)):
        res[j] = v.x + v.y
        j += 1
    for v in tuple((cuda.float32x3(one, two, three), cuda.float32x3(three, two, one))):
        res[j] = v.x * v.z + v.y
        j += 1


def rebound_shapes(out):
    N = 100
    a = cuda.local.array(N, int32)
    a[N - 1] = N
    out[0] = a[N - 1]
    N = 50
    b = cuda.local.array(N, int32)
    b[N - 1] = N
    out[1] = b[N - 1]


def int_then_array(out, arr):
    x = 1
    out[0] = x
    x = arr
    out[1] = x[2]
'''

KERNELS = {
    "issue2194": "void(float64[::1], float64[::1])",
    "issue3931": "void(float64[:, ::1], float64[:, ::1])",
    "issue5493": "void(float64[::1], int64, int64, float64[::1])",
    "vector_loops": "void(float32[::1])",
    "rebound_shapes": "void(int32[::1])",
    "int_then_array": "void(float64[::1], float64[::1])",
}


@pytest.fixture
def m(tmp_path):
    return load_kernel_module(tmp_path, "ssa", SOURCE, cuda)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_compiles_and_ptxas_accepts(m, name, tmp_path):
    compile_checked(getattr(m, name), KERNELS[name], tmp_path)


MEETING = '''
def meet_after_if(a, out):
    x = 1
    if a[0] > 0:
        x = a
    out[0] = x[0]


def meet_at_loop_head(a, out):
    x = 0
    for i in range(3):
        out[i] = x
        x = a
'''


@pytest.mark.parametrize("name", ["meet_after_if", "meet_at_loop_head"])
def test_bindings_that_meet_still_unify(tmp_path, name):
    mm = load_kernel_module(tmp_path, "ssa_meet", MEETING, cuda)
    with pytest.raises(cuda.TypingError, match=r"Cannot unify (int64 and array\(float64, 1d, "
                                               r"C\)|array\(float64, 1d, C\) and int64) for "
                                               r"'x'"):
        cuda.compile_ptx(getattr(mm, name), "void(float64[::1], float64[::1])", cc=(9, 0))


def run_all(lib, m):
    out = {}
    got = np.zeros(1)
    lib.jit(KERNELS["issue2194"])(m.issue2194)[1, 1](got, np.zeros(1))
    out["issue2194"] = got
    arr = np.arange(6.0).reshape(3, 2)
    got = np.zeros((3, 2))
    lib.jit(KERNELS["issue3931"])(m.issue3931)[1, 1](got, arr)
    out["issue3931"] = got
    got = np.zeros(1)
    lib.jit(KERNELS["issue5493"])(m.issue5493)[1, 1](got, 10, 10, np.array([2.5]))
    out["issue5493"] = got
    got = np.zeros(4, np.float32)
    lib.jit(KERNELS["vector_loops"])(m.vector_loops)[1, 1](got)
    out["vector_loops"] = got
    got = np.zeros(2, np.int32)
    lib.jit(KERNELS["rebound_shapes"])(m.rebound_shapes)[1, 1](got)
    out["rebound_shapes"] = got
    got = np.zeros(2)
    lib.jit(KERNELS["int_then_array"])(m.int_then_array)[1, 1](got, np.array([4.0, 5.0, 6.0]))
    out["int_then_array"] = got
    return out


def test_launches_on_the_test_driver(m, tdrv):
    run_all(cuda, m)


@pytest.mark.gpu
def test_matches_python_and_numba_cuda(gpu, tmp_path, m):
    mine = run_all(cuda, m)
    np.testing.assert_array_equal(mine["issue2194"], [1.0])
    np.testing.assert_array_equal(mine["issue3931"], np.arange(6.0).reshape(3, 2) + 1)
    np.testing.assert_array_equal(mine["issue5493"], [2.5 * 10])
    np.testing.assert_array_equal(mine["vector_loops"], [3, 5, 5, 5])
    np.testing.assert_array_equal(mine["rebound_shapes"], [100, 50])
    np.testing.assert_array_equal(mine["int_then_array"], [1, 6])
    assert_same_as_numba_cuda(run_all, SOURCE, tmp_path, "ssa_numba", mine)
