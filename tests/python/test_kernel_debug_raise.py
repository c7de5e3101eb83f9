"""Exceptions raised in debug=True kernels reach the host, as numba-cuda raises them: after the
launch, the exception of the first thread that raised (a raise or a failed assert, in the
kernel or a device function it calls), its first argument prefixed with
"In function 'f', file /abs/path.py, line N, tid=[z, y, x] ctaid=[z, y, x]". On CI the test
driver, which runs no kernels, writes what a raising thread would (tdrv_raise_in_next_kernel);
on the GPU the kernels raise for real and the exceptions are compared with numba-cuda's."""
import ctypes
import os
import warnings

import numpy as np
import pytest

import nbcuda as cuda
from conftest import load_kernel_module, numba_side

KERNELS = '''
class MyError(Exception):
    pass


@cuda.jit(device=True)
def checked(x):
    if x < 0:
        raise ValueError("negative", 3)
    return x


def kernel(out, x):
    i = cuda.grid(1)
    if i < x.size:
        assert x[i] != 5, "five"
        assert x[i] != 6
        if x[i] == 7:
            raise MyError
        if x[i] == 8:
            raise IndexError("eight", -2.5, True, None)
        if x[i] == 9:
            raise KeyError()
        out[i] = x[i] * 2


def kernel_calling(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = checked(x[i])


def floordiv(out, x, y):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] // y[i]


def mod(out, x, y):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] % y[i]


def truediv(out, x, y):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] / y[i]


def divmod_sum(out, x, y):
    i = cuda.grid(1)
    if i < x.size:
        q, r = divmod(x[i], y[i])
        out[i] = q + r
'''

# numba's error_model="python" in debug kernels: (kernel, signature, message)
DIVISIONS = [
    ("floordiv", "void(int32[::1], int32[::1], int32[::1])", "integer division by zero"),
    ("mod", "void(int32[::1], int32[::1], int32[::1])", "integer modulo by zero"),
    ("truediv", "void(float64[::1], int32[::1], int32[::1])", "division by zero"),
    ("divmod_sum", "void(int64[::1], int64[::1], int64[::1])", "integer divmod by zero"),
    ("truediv", "void(float32[::1], float32[::1], float32[::1])", "division by zero"),
    ("floordiv", "void(float64[::1], float64[::1], float64[::1])", "division by zero"),
    ("mod", "void(float32[::1], float32[::1], float32[::1])", "modulo by zero"),
    ("divmod_sum", "void(float64[::1], float64[::1], float64[::1])", "modulo by zero"),
]

SIG = "void(float32[::1], float32[::1])"
BAD_VALUES = (5, 6, 7, 8, 9)


def debug_jit(cuda_module, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's NumbaInvalidConfigWarning and the like
        return cuda_module.jit(SIG, debug=True, opt=False)(fn)


def outcome(launch):
    try:
        launch()
    except Exception as e:  # noqa: BLE001 - the exception is the result
        return f"{type(e).__name__}: {e.args!r}"
    return "no exception"


def raised(cuda_module, directory, values=BAD_VALUES, kernel="kernel"):
    """For each value, a launch of 2 blocks of 32 threads over 64 elements where only element
    37 (block 1, thread 5) holds it: the exception as 'Class: args'."""
    mod = load_kernel_module(directory, "debug_raise_kernels", KERNELS, cuda_module)
    k = debug_jit(cuda_module, getattr(mod, kernel))
    results = []
    for v in values:
        x = np.arange(64, dtype=np.float32) + 10
        x[37] = v
        out = cuda_module.device_array(64, np.float32)
        d_x = cuda_module.to_device(x)
        results.append(outcome(lambda: k[2, 32](out, d_x)))
    return np.array(results)


def divided(cuda_module, directory, arm=None):
    """Each DIVISIONS kernel over 64 elements whose divisor is 0 only at element 37 (block 1,
    thread 5): the outcome. arm(), when given, runs before each launch (the test driver's
    stand-in for the raising thread)."""
    mod = load_kernel_module(directory, "debug_raise_kernels", KERNELS, cuda_module)
    results = []
    for name, sig, _ in DIVISIONS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            k = cuda_module.jit(sig, debug=True, opt=False)(getattr(mod, name))
        out_dtype, dtype = (np.dtype(a.split("[")[0]) for a in sig[5:].split(", ")[:2])
        x = np.arange(64).astype(dtype) + 1
        y = np.ones(64, dtype)
        y[37] = 0
        out = cuda_module.device_array(64, out_dtype)
        d_x, d_y = cuda_module.to_device(x), cuda_module.to_device(y)
        if arm:
            arm(1)
        results.append(outcome(lambda: k[2, 32](out, d_x, d_y)))
    return np.array(results)


def expected_divisions(directory, tid="[0, 0, 5]", ctaid="[0, 0, 1]"):
    """numba reports only the thread, except for divmod of floats, located at the call."""
    path = os.path.abspath(directory / "debug_raise_kernels.py")
    line = next(n + 1 for n, text in enumerate(KERNELS.splitlines()) if "divmod(x[i]" in text)
    out = []
    for name, sig, m in DIVISIONS:
        where = (f"In function {name!r}, file {path}, line {line}, "
                 if name == "divmod_sum" and "float" in sig else "")
        out.append(f"ZeroDivisionError: {(f'{where}tid={tid} ctaid={ctaid}: {m}',)!r}")
    return out


def expected(directory, line_of, tid="[0, 0, 5]", ctaid="[0, 0, 1]"):
    """The outcome of each bad value (-1: the device function's ValueError), as raised() and
    outcome() write it."""
    path = os.path.abspath(directory / "debug_raise_kernels.py")

    def at(fn, what, message=None):
        p = f"In function {fn!r}, file {path}, line {line_of[what]}, tid={tid} ctaid={ctaid}"
        return p if message is None else f"{p}: {message}"

    return {
        5: f"AssertionError: {(at('kernel', 'five', 'five'),)!r}",
        6: f"AssertionError: {(at('kernel', 'assert'),)!r}",
        7: f"MyError: {(at('kernel', 'MyError'),)!r}",
        8: f"IndexError: {(at('kernel', 'eight', 'eight'), -2.5, True, None)!r}",
        9: f"KeyError: {(at('kernel', 'KeyError'),)!r}",
        -1: f"ValueError: {(at('checked', 'negative', 'negative'), 3)!r}",
    }


def lines():
    """The line in the kernel file of each raise site."""
    text = KERNELS.splitlines()
    where = {"five": '"five"', "assert": "x[i] != 6", "MyError": "raise MyError",
             "eight": '"eight"', "KeyError": "raise KeyError", "negative": '"negative"'}
    return {k: next(n + 1 for n, line in enumerate(text) if v in line) for k, v in where.items()}


@pytest.fixture
def raise_next(tdrv):
    fn = tdrv.lib.tdrv_raise_in_next_kernel
    fn.restype = None
    fn.argtypes = [ctypes.c_int, ctypes.c_int * 3, ctypes.c_int * 3]

    def arm(code, tid=(5, 0, 0), ctaid=(1, 0, 0)):
        fn(code, (ctypes.c_int * 3)(*tid), (ctypes.c_int * 3)(*ctaid))
    return arm


def test_each_raise_site_becomes_its_exception(raise_next, tmp_path):
    mod = load_kernel_module(tmp_path, "debug_raise_kernels", KERNELS, cuda)
    k = debug_jit(cuda, mod.kernel)
    out = cuda.device_array(64, np.float32)
    d_x = cuda.to_device(np.arange(64, dtype=np.float32))
    assert outcome(lambda: k[2, 32](out, d_x)) == "no exception"
    got = set()
    for code in range(1, 6):  # the kernel's five raise sites, in the order they were lowered
        raise_next(code)
        got.add(outcome(lambda: k[2, 32](out, d_x)))
    exp = expected(tmp_path, lines())
    assert got == {exp[v] for v in BAD_VALUES}
    # a code the kernel never stores: numba's SystemError
    raise_next(6)
    assert outcome(lambda: k[2, 32](out, d_x)) == \
        "SystemError: ('tid=[0, 0, 5] ctaid=[0, 0, 1]: unknown error 6 in native function',)"
    # the next launch starts clean
    assert outcome(lambda: k[2, 32](out, d_x)) == "no exception"


def test_zero_divisors_raise(raise_next, tmp_path):
    """numba's error_model="python": the first site of each kernel is its divisor check."""
    assert list(divided(cuda, tmp_path, arm=raise_next)) == expected_divisions(tmp_path)


def test_zero_divisor_checks_only_with_debug():
    def k(out, x, y):
        out[0] = x[0] // y[0] + x[0] % y[0]

    sig = "void(int32[::1], int32[::1], int32[::1])"
    plain, _ = cuda.compile_ptx(k, sig, cc=(9, 0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        debug, _ = cuda.compile_ptx(k, sig, cc=(9, 0), debug=True, opt=False)
    assert "__errcode__" not in plain and "__errcode__" in debug
    assert debug.count("atom.global.cas.b32") == 2


def test_device_function_raise_and_thread_position(raise_next, tmp_path):
    mod = load_kernel_module(tmp_path, "debug_raise_kernels", KERNELS, cuda)
    k = debug_jit(cuda, mod.kernel_calling)
    out = cuda.device_array(64, np.float32)
    d_x = cuda.to_device(np.arange(64, dtype=np.float32))
    raise_next(1, tid=(3, 2, 1), ctaid=(7, 0, 4))
    exp = expected(tmp_path, lines(), tid="[1, 2, 3]", ctaid="[4, 0, 7]")
    assert outcome(lambda: k[2, 32](out, d_x)) == exp[-1]


def test_the_exception_keeps_host_arrays(raise_next, tmp_path):
    """As numba: the exception is raised before host arrays are copied back."""
    mod = load_kernel_module(tmp_path, "debug_raise_kernels", KERNELS, cuda)
    k = debug_jit(cuda, mod.kernel)
    host_out = np.full(64, -1, np.float32)
    raise_next(1)
    with pytest.raises(Exception, match="tid=\\[0, 0, 5\\] ctaid=\\[0, 0, 1\\]"):
        k[2, 32](host_out, np.arange(64, dtype=np.float32))
    assert (host_out == -1).all()


def test_without_debug_nothing_is_read(raise_next, tmp_path, tdrv):
    mod = load_kernel_module(tmp_path, "debug_raise_kernels", KERNELS, cuda)
    k = cuda.jit(SIG)(mod.kernel)
    out = cuda.device_array(64, np.float32)
    d_x = cuda.to_device(np.arange(64, dtype=np.float32))
    before = tdrv.calls("cuModuleGetGlobal")
    raise_next(1)
    k[2, 32](out, d_x)  # the thread ends; nothing is reported, as numba without debug
    assert tdrv.calls("cuModuleGetGlobal") == before


def test_driver_failure_reading_the_exception(tdrv, tmp_path):
    """A failing cuModuleGetGlobal (clearing before the launch, reading after it) is the
    driver's error naming the call, not a crash or a silent launch."""
    mod = load_kernel_module(tmp_path, "debug_raise_kernels", KERNELS, cuda)
    k = debug_jit(cuda, mod.kernel)
    out = cuda.device_array(64, np.float32)
    d_x = cuda.to_device(np.arange(64, dtype=np.float32))
    k[2, 32](out, d_x)  # loaded
    launches = tdrv.launch_count()
    tdrv.fail("cuModuleGetGlobal", 1, 500)  # the clear before the launch
    with pytest.raises(cuda.CudaAPIError, match="cuModuleGetGlobal") as info:
        k[2, 32](out, d_x)
    assert info.value.code == 500 and tdrv.launch_count() == launches  # nothing launched
    tdrv.fail("cuModuleGetGlobal", 2, 500)  # the read after it
    with pytest.raises(cuda.CudaAPIError, match="cuModuleGetGlobal"):
        k[2, 32](out, d_x)
    assert tdrv.launch_count() == launches + 1
    assert outcome(lambda: k[2, 32](out, d_x)) == "no exception"


def test_debug_raise_needs_an_exception_class(tmp_path):
    src = ("NotAnException = 3\n\n\ndef k(out, x):\n    if x[0] < 0:\n"
           "        raise NotAnException('x')\n")
    mod = load_kernel_module(tmp_path, "not_exc", src, cuda)
    with pytest.raises(cuda.TypingError, match="'NotAnException', raised in function 'k', is "
                                               "not an exception class"):
        debug_jit(cuda, mod.k)
    cuda.jit(SIG)(mod.k)  # without debug the exception is never looked at
    src = "def k(out, x):\n    if x[0] < 0:\n        raise ValueError(x[0])\n"
    mod = load_kernel_module(tmp_path, "dyn_exc", src, cuda)
    with pytest.raises(cuda.TypingError, match="must be constants"):
        debug_jit(cuda, mod.k)


def test_ptx_has_numbas_debug_variables():
    def k(out, x):
        assert x[0] != 0

    ptx, _ = cuda.compile_ptx(k, SIG, debug=True, opt=False, cc=(9, 0))
    for v in ("errcode", "tidx", "tidy", "tidz", "ctaidx", "ctaidy", "ctaidz"):
        assert f"__{v}__;" in ptx
    assert "atom.global.cas.b32" in ptx


@pytest.mark.gpu
def test_exceptions_match_numba_cuda(gpu, tmp_path):
    mine = raised(cuda, tmp_path)
    exp = expected(tmp_path, lines())
    assert list(mine) == [exp[v] for v in BAD_VALUES]
    theirs = numba_side("test_kernel_debug_raise", f"{{'r': t.raised(cuda, "
                        f"pathlib.Path({str(tmp_path)!r}))}}", tmp_path / "numba.npz")
    assert list(mine) == list(theirs["r"])


@pytest.mark.gpu
def test_device_function_exception_on_the_gpu(gpu, tmp_path):
    mine = raised(cuda, tmp_path, values=(-1.0, 1.0), kernel="kernel_calling")
    exp = expected(tmp_path, lines())
    assert list(mine) == [exp[-1], "no exception"]


@pytest.mark.gpu
def test_zero_divisors_match_numba_cuda(gpu, tmp_path):
    mine = divided(cuda, tmp_path)
    assert list(mine) == expected_divisions(tmp_path)
    theirs = numba_side("test_kernel_debug_raise", f"{{'r': t.divided(cuda, "
                        f"pathlib.Path({str(tmp_path)!r}))}}", tmp_path / "numba.npz")
    assert list(mine) == list(theirs["r"])
