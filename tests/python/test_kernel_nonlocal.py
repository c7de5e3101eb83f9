"""`nonlocal` in nested functions of kernels, as numba runs them (its closures are inlined; a
nested function assigning its enclosing function's variables changes them there, numba issue
#6585): nbcuda lifts such a function, which gets the variables as parameters and gives their
new values back, and each call assigns them. A call of it must be a statement or the whole
value of an assignment. CI: the kernels compile (ptxas) and the misuses get clear errors; a
launch compares with the same function run by Python on numpy arrays (the GPU's results; the
test driver runs no kernel code)."""
import numpy as np
import pytest

import nbcuda as cuda
from conftest import USING_TESTDRIVER
from test_compile import check_ptx


def can_prune(res):
    x = 1000

    def closure():
        nonlocal x
        x = 0

    closure()
    if x == 0:
        res[0] = True
    else:
        res[0] = False


def cannot_prune(n, res):
    x = 1000

    def closure(t):
        nonlocal x
        x = t

    closure(n)
    if x == 0:
        res[0] = True
    else:
        res[0] = False


def counter(out, n):
    total = 0
    count = 0

    def add(v):
        nonlocal total, count
        total += v
        count += 1
        return total

    def add_twice(v):  # assigns them too, through add
        add(v)
        last = add(v)
        return last

    r = -1
    for i in range(n):
        r = add_twice(i)
    out[0] = total
    out[1] = count
    out[2] = r


def early_return(out, a):
    best = -1.0
    where = -1

    def consider(i):
        nonlocal best, where
        if a[i] <= best:
            return
        best = a[i]
        where = i

    for i in range(a.size):
        consider(i)
    out[0] = best
    out[1] = where


def results_of_several_types(out, n):
    x = 0
    y = 0.0

    def a():
        nonlocal x
        x += 1
        return x

    def b():
        nonlocal y
        y += 0.5
        return (y, 2)

    a()  # the results nobody reads are of different types
    b()
    while x < n:
        a()
    out[0] = x + y


CASES = [
    (can_prune, "void(float64[::1])", lambda: (np.zeros(1),)),
    (cannot_prune, "void(int64, float64[::1])", lambda: (0, np.zeros(1))),
    (cannot_prune, "void(int64, float64[::1])", lambda: (7, np.full(1, 5.0))),
    (counter, "void(int64[::1], int64)", lambda: (np.zeros(3, np.int64), 5)),
    (results_of_several_types, "void(float64[::1], int64)", lambda: (np.zeros(1), 4)),
    (early_return, "void(float64[::1], float64[::1])",
     lambda: (np.zeros(2), np.array([0.5, 3.0, 2.0, 7.5, 1.0]))),
]


@pytest.mark.parametrize("func,sig,make", CASES)
def test_nonlocal_kernels_run_as_python(func, sig, make, tmp_path):
    ptx, _ = cuda.compile_ptx(func, sig, cc=(9, 0))
    check_ptx(ptx, tmp_path)
    expected, got = make(), make()
    func(*expected)
    k = cuda.jit(sig)(func)
    k[1, 1](*got)
    if not USING_TESTDRIVER:  # the test driver runs no kernel code
        for e, g in zip(expected, got):
            np.testing.assert_array_equal(g, e)


def not_a_statement(out):
    x = 1

    def bump():
        nonlocal x
        x += 1
        return x

    out[0] = bump() + 1


def assigns_no_value(out):
    x = 1

    def bump():
        nonlocal x
        x += 1

    y = bump()
    out[0] = x


def two_levels_out(out):
    z = 1

    def middle():
        def inner():
            nonlocal z
            z = 2
        inner()

    middle()
    out[0] = z


def one_level_in_a_nested_function(out):
    def middle():
        z = 1

        def inner():
            nonlocal z
            z = 2
        inner()
        return z

    out[0] = middle()


def test_misuses_are_reported():
    with pytest.raises(cuda.TypingError) as e:
        cuda.compile_ptx(not_a_statement, "void(int64[::1])", cc=(9, 0))
    assert "nested function 'bump' assigns variables of the function that defines it" in str(e.value)
    assert "out[0] = bump() + 1" in str(e.value)
    with pytest.raises(cuda.TypingError, match="'bump' returns no value: its call cannot be "
                                               "assigned"):
        cuda.compile_ptx(assigns_no_value, "void(int64[::1])", cc=(9, 0))
    with pytest.raises(cuda.TypingError, match="nonlocal 'z' names a variable two functions "
                                               "out"):
        cuda.compile_ptx(two_levels_out, "void(int64[::1])", cc=(9, 0))


def test_nonlocal_inside_a_nested_function(tmp_path):
    # the nested function's own variable: lifted when the nested function is compiled
    ptx, _ = cuda.compile_ptx(one_level_in_a_nested_function, "void(int64[::1])", cc=(9, 0))
    check_ptx(ptx, tmp_path)
    got = np.zeros(1, np.int64)
    cuda.jit("void(int64[::1])")(one_level_in_a_nested_function)[1, 1](got)
    if not USING_TESTDRIVER:
        assert got[0] == 2
