"""Recursive device functions, as numba-cuda types them: a function calling itself is typed
from its returns that do not recurse (so it needs one), with another specialisation when a
call changes the argument types; functions calling each other (mutual recursion) are typed
with what the outer one returns so far (its non-recursive returns, whether they come before or
after the call), a return type that moves after that is refused (numba's "does not converge"),
and so is a cycle none of whose functions returns without recursing. CI checks types, PTX and
errors; the GPU compares results with Python (numba-cuda 0.30.4 cannot lower a recursive call:
see the GPU test)."""
import numpy as np
import pytest

import nbcuda as cuda
from conftest import load_kernel_module
from test_compile import check_ptx

KERNELS = '''
@cuda.jit(device=True)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


@cuda.jit(device=True)
def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)


@cuda.jit(device=True)
def power_sum(x, k):
    if k == 0:
        return 1.0
    return 1.0 + x * power_sum(x, k - 1)


@cuda.jit(device=True)
def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


@cuda.jit(device=True)
def is_odd(n):
    if n > 0:  # the call before the return that does not recurse
        return is_even(n - 1)
    return False


@cuda.jit(device=True)
def collatz_a(n, steps):
    if n == 1:
        return steps
    return collatz_b(n, steps + 1)


@cuda.jit(device=True)
def collatz_b(n, steps):
    return collatz_a(n // 2 if n % 2 == 0 else 3 * n + 1, steps)


def recursive(out_i, out_f, n):
    i = cuda.grid(1)
    if i < n.size:
        out_i[i, 0] = fib(n[i])
        out_i[i, 1] = fact(n[i])
        out_f[i] = power_sum(0.5, n[i])


def mutual(out, n):
    i = cuda.grid(1)
    if i < n.size:
        out[i, 0] = is_even(n[i])
        out[i, 1] = is_odd(n[i])
        out[i, 2] = collatz_a(n[i] + 1, 0)
'''


def kernels(cuda_module, directory):
    return load_kernel_module(directory, "recursion_kernels", KERNELS, cuda_module)


def test_recursive_functions_are_typed_and_compile(tmp_path):
    mod = kernels(cuda, tmp_path)
    ptx, _ = cuda.compile_ptx(mod.recursive, "void(int64[:, ::1], float64[::1], int32[::1])",
                              cc=(9, 0))
    check_ptx(ptx, tmp_path)
    assert "call.uni" in ptx  # the recursion stays a call
    assert str(cuda.compile(mod.fib.py_func, "(int32,)")[1]) == "int64"
    assert str(cuda.compile(mod.fact.py_func, "(int64,)")[1]) == "int64"
    assert str(cuda.compile(mod.power_sum.py_func, "(float32, int64)")[1]) == "float64"
    # the entry itself calls a Numba-ABI copy of itself
    ptx, _ = cuda.compile_ptx(mod.fib.py_func, "int64(int64)", device=True, cc=(9, 0))
    assert ".visible .func" in ptx and "call.uni" in ptx


@pytest.mark.parametrize("src, message", [
    ("def f(n):\n    return f(n - 1)\n",
     "cannot type infer runaway recursion: the return type of the recursive function 'f' "
     "needs a return that does not recurse"),
    ("def f(n):\n    return h(n)\n\n\ndef h(n):\n    return g(n)\n\n\ndef g(n):\n"
     "    return h(n - 1)\n",
     "cannot type infer runaway recursion: the return type of the recursive function 'h' "
     "needs a return that does not recurse"),
    # numba's issue 4387 (numba-cuda's test_growing_return_tuple): the type would grow
    ("def f(n):\n    return g(n)\n\n\ndef g(n):\n    if n <= 0:\n        return None\n"
     "    return (n, g(n - 1))\n",
     "Return type of recursive function does not converge: 'g' returns none here"),
    # g is typed with f's int64 (its first return), then f turns out float64
    ("def f(n):\n    return k(n)\n\n\ndef k(n):\n    if n <= 0:\n        return 1\n"
     "    return g(n - 1) + 0.5\n\n\ndef g(n):\n    return k(n)\n",
     "Return type of recursive function does not converge: 'k' returns float64, and a function "
     "it calls, which calls it back, was typed with int64"),
])
def test_unsupported_recursion_is_refused(tmp_path, src, message):
    m = load_kernel_module(tmp_path, "recursion_bad", src, cuda)
    with pytest.raises(cuda.TypingError, match=message):
        cuda.compile(m.f, "(int64,)")


def test_mutual_recursion_is_typed_and_compiles(tmp_path):
    mod = kernels(cuda, tmp_path)
    ptx, _ = cuda.compile_ptx(mod.mutual, "void(int64[:, ::1], int32[::1])", cc=(9, 0))
    check_ptx(ptx, tmp_path)
    assert ptx.count("call.uni") >= 4  # each function calls the other
    assert str(cuda.compile(mod.is_even.py_func, "(int64,)")[1]) == "bool"
    assert str(cuda.compile(mod.is_odd.py_func, "(int64,)")[1]) == "bool"
    assert str(cuda.compile(mod.collatz_a.py_func, "(int64, int64)")[1]) == "int64"
    # the entry called back: g calls a copy of f, typed from f's return outside the cycle
    m = load_kernel_module(tmp_path, "recursion_entry",
                           "def f(n):\n    return 0.5 if n < 0 else g(n)\n\n\n"
                           "def g(n):\n    return f(n - 1)\n", cuda)
    assert str(cuda.compile(m.f, "(int64,)")[1]) == "float64"
    ptx, _ = cuda.compile_ptx(m.f, "float64(int64)", device=True, cc=(9, 0))
    check_ptx(ptx, tmp_path)
    # a cycle of three whose returns outside it are in the first and the last
    m = load_kernel_module(tmp_path, "recursion_three",
                           "def f(n):\n    return 0.5 if n < 0 else g(n)\n\n\n"
                           "def g(n):\n    return f(n - 1) + h(n)\n\n\n"
                           "def h(n):\n    return g(n - 1) if n > 3 else 1.0\n\n\n"
                           "def k(out, n):\n    out[0] = f(n)\n", cuda)
    check_ptx(cuda.compile_ptx(m.k, "void(float64[:], int64)", cc=(9, 0))[0], tmp_path)
    assert str(cuda.compile(m.g, "(int64,)")[1]) == "float64"


DEPTH = 12  # fib's frame is 56 bytes: 20 deep would overflow CUDA's default 1 KiB stack


def results(cuda_module, directory):
    mod = kernels(cuda_module, directory)
    n = np.arange(DEPTH, dtype=np.int32)
    out_i = np.zeros((DEPTH, 2), np.int64)
    out_f = np.zeros(DEPTH)
    cuda_module.jit(mod.recursive)[1, 32](out_i, out_f, n)
    out_m = np.zeros((DEPTH, 3), np.int64)
    cuda_module.jit(mod.mutual)[1, 32](out_m, n)
    return {"ints": out_i, "floats": out_f, "mutual": out_m}


@pytest.mark.gpu
def test_recursion_matches_python(gpu, tmp_path):
    mine = results(cuda, tmp_path)

    def fib(k):
        return k if k < 2 else fib(k - 1) + fib(k - 2)

    def fact(k):
        return 1 if k <= 1 else k * fact(k - 1)

    np.testing.assert_array_equal(mine["ints"][:, 0], [fib(k) for k in range(DEPTH)])
    np.testing.assert_array_equal(mine["ints"][:, 1], [fact(k) for k in range(DEPTH)])
    np.testing.assert_allclose(mine["floats"], [2.0 - 0.5 ** k for k in range(DEPTH)], rtol=0)

    def collatz(k, steps=0):
        return steps if k == 1 else collatz(k // 2 if k % 2 == 0 else 3 * k + 1, steps + 1)

    np.testing.assert_array_equal(mine["mutual"][:, 0], [k % 2 == 0 for k in range(DEPTH)])
    np.testing.assert_array_equal(mine["mutual"][:, 1], [k % 2 == 1 for k in range(DEPTH)])
    np.testing.assert_array_equal(mine["mutual"][:, 2], [collatz(k + 1) for k in range(DEPTH)])
    # numba-cuda 0.30.4 types these kernels but fails to lower the recursive call
    # ("'JITCUDACodegen' object has no attribute 'insert_unresolved_ref'", on the H200), so
    # Python is the reference here.
