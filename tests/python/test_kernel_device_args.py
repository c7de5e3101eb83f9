"""What numba-cuda's own kernel tests (test_atomics, test_sync, test_device_func,
test_intrinsics, test_enums) pass to and get from device functions, under nbcuda:

- a local variable bound once to a constant is a constant: `N = 100` then
  `cuda.shared.array(N, int32)` (numba types N as the literal 100);
- a device function jitted with signatures (`jit("int32(int32, int32)", device=True)`, or a
  list of them) is called with its arguments converted to the signature numba's overload
  resolution picks (float32 arguments to an int32 signature are converted, not specialised);
  a signature of arguments only (`"(int64, int64)"`) leaves the return type to inference;
- types and functions are arguments of device functions, as numba's function and
  NumberClass types are: `helper(ary, uint32, cuda.atomic.add, other_device_function)`, the
  callee specialised for each;
- a constant argument the callee needs as a constant (numba's literal arguments): a shape
  (`cuda.shared.array(n, dtype)` of a parameter given 32 or (4, 8)) and `if flag:` of a
  parameter given a constant bool, whose dead branch numba prunes before typing it;
- a tuple variable as an atomic's index (`bin = (tx, ty)`, `cuda.atomic.add(sm, bin, 1)`);
- `i.bit_count()` of an integer (numba-cuda's overload: cuda.popc);
- Enum members returned by device functions.

CI: each kernel compiles, ptxas accepts it, it launches on the test driver, and misuse gets
a clear error. The GPU compares the results with numpy / Python and with numba-cuda."""
import numpy as np
import pytest

import nbcuda as cuda
from conftest import load_kernel_module
from test_compile import compile_checked

SOURCE = '''
import enum
import math

import numpy as np
from numba import float64, int32, uint32, uint64

M = 8


class Color(enum.Enum):
    red = 1
    green = 2


def local_constant_shapes(out):
    N = 100
    sm = cuda.shared.array(N, int32)
    K = M
    loc = cuda.local.array((K, 2), int32)
    i = cuda.threadIdx.x
    if i == 0:
        for j in range(N):
            sm[j] = j
    for j in range(K):          # a local array is the thread's own
        loc[j, 1] = 3 * j
    cuda.syncthreads()
    out[i] = sm[i] + loc[i % K, 1]


@cuda.jit("int32(int32, int32, int32, int32)", device=True)
def rgba(r, g, b, a):
    return (((r & 0xFF) << 16) | ((g & 0xFF) << 8) | ((b & 0xFF) << 0)
            | ((a & 0xFF) << 24))


@cuda.jit(["float32(float32)", "float64(float64)"], device=True)
def twice(x):
    return x * 2


@cuda.jit(["(int64, int64)", "(float64, float64)"], device=True)
def add_inferred(x, y):  # signatures of arguments only: the return type is inferred
    return x + y


def inferred_caller(out, n, f):
    out[0] = add_inferred(n, n)
    out[1] = add_inferred(f, 2.5)


def rgba_caller(x, channels):
    for i in range(len(x)):
        x[i] = rgba(channels[0, i], channels[1, i], channels[2, i], channels[3, i])


def twice_caller(out, f, n):
    out[0] = twice(f)       # float32: its own signature
    out[1] = twice(n)       # int32: float64 holds it (a safe conversion), float32 does not


@cuda.jit(device=True)
def cast_none(num):
    return num


@cuda.jit(device=True)
def cast_to_uint64(num):
    return uint64(num)


@cuda.jit(device=True)
def binary_shared(ary, idx, op2, ary_dtype, binop_func, cast_func, initializer):
    tid = cuda.threadIdx.x
    sm = cuda.shared.array(32, ary_dtype)
    sm[tid] = initializer
    cuda.syncthreads()
    binop_func(sm, cast_func(idx[tid] % 32), op2)
    cuda.syncthreads()
    ary[tid] = sm[tid]


@cuda.jit(device=True)
def binary_global(ary, idx, nelements, op2, binop_func):
    tid = cuda.threadIdx.x
    binop_func(ary, int(idx[tid] % nelements), op2)


def atomic_add_shared(ary, idx):
    binary_shared(ary, idx, 1, uint32, cuda.atomic.add, cast_none, 0)


def atomic_or_shared(ary, idx):
    binary_shared(ary, idx, 6, uint32, cuda.atomic.or_, cast_to_uint64, 1)


def atomic_sub_shared_f64(ary, idx):
    binary_shared(ary, idx, 1.5, float64, cuda.atomic.sub, cast_none, 100.0)


def atomic_xor_global(ary, idx):
    binary_global(ary, idx, 32, 5, cuda.atomic.xor)


@cuda.jit(device=True)
def binary_shared_sized(ary, idx, op2, ary_dtype, ary_nelements, binop_func, cast_func,
                        initializer, neg_idx):
    tid = cuda.threadIdx.x
    sm = cuda.shared.array(ary_nelements, ary_dtype)     # a constant argument's value
    sm[tid] = initializer
    cuda.syncthreads()
    bin = cast_func(idx[tid] % ary_nelements)
    if neg_idx:                                          # pruned for a constant False: the
        bin = bin % ary_nelements                        # uint64 % int64 here is a float64
    binop_func(sm, bin, op2)
    cuda.syncthreads()
    ary[tid] = sm[tid]


@cuda.jit(device=True)
def binary_2dim_shared(ary, op2, ary_dtype, ary_shape, binop_func, y_cast_func, neg_idx):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    sm = cuda.shared.array(ary_shape, ary_dtype)         # a constant tuple argument
    sm[tx, ty] = ary[tx, ty]
    cuda.syncthreads()
    bin = (tx, y_cast_func(ty))
    if neg_idx:
        bin = (bin[0] % ary_shape[0], bin[1] % ary_shape[1])
    binop_func(sm, bin, op2)                             # a tuple variable as the index
    cuda.syncthreads()
    ary[tx, ty] = sm[tx, ty]


def atomic_or_sized(ary, idx):
    binary_shared_sized(ary, idx, 6, uint32, 32, cuda.atomic.or_, cast_to_uint64, 1, False)


def atomic_add_2dim(ary):
    binary_2dim_shared(ary, 1, uint32, (4, 8), cuda.atomic.add, cast_to_uint64, False)


def atomic_add_2dim_wrap(ary):
    binary_2dim_shared(ary, 1, uint32, (4, 8), cuda.atomic.add, cast_none, True)


@cuda.jit(device=True)
def apply(f, x):
    return f(x)


def apply_functions(out, x):
    i = cuda.threadIdx.x
    out[0, i] = apply(math.sqrt, x[i])
    out[1, i] = apply(cast_none, x[i])
    out[2, i] = apply(math.exp, x[i])   # (numba-cuda 0.30.4 cannot pass np.exp: KeyError)
    out[3, i] = apply(twice, x[i])

    def plus_half(v):  # nested functions reading no variable are passed as global ones are
        return v + 0.5
    cube = lambda v: v * v * v  # noqa: E731
    k = 3.0  # a constant, defined once: baked into what reads it, as numba bakes it

    def scaled(v):
        return v * k - 1
    out[4, i] = apply(plus_half, x[i])
    out[5, i] = apply(cube, x[i])
    out[6, i] = apply(scaled, x[i]) + scaled(1.0)


def apply_numpy(out, x):         # compiled only: numba-cuda 0.30.4 cannot pass np.exp
    i = cuda.threadIdx.x
    out[0, i] = apply(np.exp, x[i]) + apply(np.sqrt, x[i])


def bit_count(out, a, b, c, d):
    out[0] = a.bit_count()
    out[1] = b.bit_count()
    out[2] = c.bit_count()
    out[3] = d.bit_count()


@cuda.jit(device=True)
def pick(pred):
    return Color.red if pred else Color.green


def enum_returned(pred, out):
    out[0] = pick(pred) == Color.red
    out[1] = pick(not pred) == Color.green
'''

KERNELS = {
    "local_constant_shapes": "void(int32[::1])",
    "rgba_caller": "void(int32[::1], float32[:, ::1])",
    "twice_caller": "void(float64[::1], float32, int32)",
    "inferred_caller": "void(float64[::1], int64, float64)",
    "atomic_add_shared": "void(uint32[::1], uint32[::1])",
    "atomic_or_shared": "void(uint32[::1], uint32[::1])",
    "atomic_sub_shared_f64": "void(float64[::1], uint32[::1])",
    "atomic_xor_global": "void(uint32[::1], uint32[::1])",
    "atomic_or_sized": "void(uint32[::1], uint32[::1])",
    "atomic_add_2dim": "void(uint32[:, ::1])",
    "atomic_add_2dim_wrap": "void(uint32[:, ::1])",
    "apply_functions": "void(float64[:, ::1], float64[::1])",
    "apply_numpy": "void(float64[:, ::1], float64[::1])",
    "bit_count": "void(int32[::1], uint8, uint16, uint32, uint64)",
    "enum_returned": "void(boolean, boolean[::1])",
}


@pytest.fixture
def m(tmp_path):
    return load_kernel_module(tmp_path, "device_args", SOURCE, cuda)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_compiles_and_ptxas_accepts(m, name, tmp_path):
    compile_checked(getattr(m, name), KERNELS[name], tmp_path)


def test_signature_conversions_and_specialisations(m):
    ptx, _ = cuda.compile_ptx(m.twice_caller, KERNELS["twice_caller"], cc=(9, 0))
    assert "mul.f32" in ptx or "add.f32" in ptx  # twice(float32)
    assert "cvt.rn.f64.s32" in ptx               # n converted to float64 for twice(float64)
    ptx, _ = cuda.compile_ptx(m.atomic_or_shared, KERNELS["atomic_or_shared"], cc=(9, 0))
    assert "atom.shared.or.b32" in ptx
    ptx, _ = cuda.compile_ptx(m.atomic_xor_global, KERNELS["atomic_xor_global"], cc=(9, 0))
    assert "atom.global.xor.b32" in ptx


MISUSE = '''
from numba import int32


@cuda.jit("int32(int32, int32)", device=True)
def add(a, b):
    return a + b


@cuda.jit(device=True)
def apply(f, x):
    return f(x)


def no_matching_signature(out):
    out[0] = add(out, 1)


def builtin_passed(out):
    out[0] = apply(abs, out[0])


def nested_passed(out):
    def inner(v):
        return v + out[1]  # captures out: only a nested function capturing none is passed
    out[0] = apply(inner, out[0])


def nested_passed_twice_defined(out):
    k = 1.0
    if out[0] > 0:
        k = 2.0

    def inner(v):
        return v * k
    out[0] = apply(inner, out[0])


def nested_defined_in_both_branches(out):
    # numba-cuda's test_multiply_defined_freevar: numba reports the variable
    if out[0] > 0:
        x = 3.0

        def inner(y):
            return y + x

        out[0] = apply(inner, 1.0)
    else:
        x = 6.0

        def inner(y):
            return y + x

        out[0] = apply(inner, 2.0)


def bit_count_of_float(out):
    out[0] = out[0].bit_count()


def bit_count_with_argument(out):
    n = 7
    out[0] = n.bit_count(1)


def grid_of_a_variable(out):
    n = out.size
    out[0] = cuda.grid(n)


def shape_bound_twice(out):
    N = 10
    if out[0] > 1:
        N = 20
    a = cuda.local.array(N, int32)
    out[0] = a[0]
'''


@pytest.mark.parametrize("name, message", [
    ("no_matching_signature", r"Invalid use of type\(CUDADispatcher\(<function add>\)\) with "
                              r"parameters \(array\(float64, 1d, C\), int64\): no matching "
                              r"definition; add\(\) was jitted for 'int32\(int32, int32\)'"),
    ("builtin_passed", r"cannot pass Function\(abs\) to 'apply'"),
    ("nested_passed", r"Cannot capture the non-constant value associated with variable 'out' "
                      r"in a function that may escape"),
    ("nested_passed_twice_defined", r"Cannot capture a constant value for variable 'k' as "
                                    r"there are multiple definitions present"),
    ("nested_defined_in_both_branches", r"Cannot capture a constant value for variable 'x' "
                                        r"as there are multiple definitions present"),
    ("bit_count_of_float", "Unknown attribute 'bit_count' of type float64"),
    ("bit_count_with_argument", r"bit_count\(\) takes no arguments"),
    ("shape_bound_twice", r"the shape of cuda.local.array\(\) must be a constant integer"),
    ("grid_of_a_variable", r"cuda.grid\(\) takes one constant argument, 1, 2 or 3 "
                           r"\(RequireLiteralValue"),
])
def test_misuse_is_a_clear_error(tmp_path, name, message):
    mm = load_kernel_module(tmp_path, "device_args_misuse", MISUSE, cuda)
    with pytest.raises(cuda.CompileError, match=message):
        cuda.compile_ptx(getattr(mm, name), "void(float64[::1])", cc=(9, 0))


def run_all(lib, m):
    """Every kernel of SOURCE launched through lib (nbcuda or numba.cuda): name -> result."""
    rng = np.random.default_rng(7)
    out = {}
    got = np.zeros(32, np.int32)
    lib.jit(KERNELS["local_constant_shapes"])(m.local_constant_shapes)[1, 32](got)
    out["local_constant_shapes"] = got
    channels = rng.uniform(-300, 300, (4, 16)).astype(np.float32)
    got = np.zeros(16, np.int32)
    lib.jit(KERNELS["rgba_caller"])(m.rgba_caller)[1, 1](got, channels)
    out["rgba_caller"] = got
    got = np.zeros(2)
    lib.jit(KERNELS["twice_caller"])(m.twice_caller)[1, 1](got, np.float32(1.25), 2**30 + 1)
    out["twice_caller"] = got
    got = np.zeros(2)
    lib.jit(KERNELS["inferred_caller"])(m.inferred_caller)[1, 1](got, 2**40 + 3, 1.25)
    out["inferred_caller"] = got
    idx = rng.integers(0, 1000, 32).astype(np.uint32)
    for name in ("atomic_add_shared", "atomic_or_shared", "atomic_xor_global",
                 "atomic_sub_shared_f64", "atomic_or_sized"):
        dtype = np.float64 if name.endswith("f64") else np.uint32
        got = np.arange(32).astype(dtype)
        lib.jit(KERNELS[name])(getattr(m, name))[1, 32](got, idx)
        out[name] = got
    for name in ("atomic_add_2dim", "atomic_add_2dim_wrap"):
        got = np.arange(32, dtype=np.uint32).reshape(4, 8)
        lib.jit(KERNELS[name])(getattr(m, name))[1, (4, 8)](got)
        out[name] = got
    x = rng.uniform(0, 4, 32)
    got = np.zeros((7, 32))
    lib.jit(KERNELS["apply_functions"])(m.apply_functions)[1, 32](got, x)
    out["apply_functions"] = got
    got = np.zeros(4, np.int32)
    lib.jit(KERNELS["bit_count"])(m.bit_count)[1, 1](got, np.uint8(0xB5), np.uint16(0xFFFF),
                                                      np.uint32(0x80000001),
                                                      np.uint64(2**64 - 1))
    out["bit_count"] = got
    for pred in (True, False):
        got = np.zeros(2, bool)
        lib.jit(KERNELS["enum_returned"])(m.enum_returned)[1, 1](pred, got)
        out[f"enum_returned{pred}"] = got
    return out, channels, idx, x


def expected(channels, idx, x):
    """What numpy and Python say each kernel computes."""
    want = {}
    sm, loc = np.arange(100), 3 * np.arange(8)
    want["local_constant_shapes"] = sm[:32] + loc[np.arange(32) % 8]
    c = channels.astype(np.int32).astype(np.int64)  # float32 -> int32 truncates, as numba
    v = ((c[0] & 0xFF) << 16) | ((c[1] & 0xFF) << 8) | (c[2] & 0xFF) | ((c[3] & 0xFF) << 24)
    want["rgba_caller"] = v.astype(np.uint32).view(np.int32)
    want["twice_caller"] = [2.5, 2.0 * (2**30 + 1)]
    want["inferred_caller"] = [2.0 * (2**40 + 3), 3.75]
    bins = idx % 32
    add = np.zeros(32, np.uint32)
    np.add.at(add, bins, 1)
    want["atomic_add_shared"] = add
    orr = np.ones(32, np.uint32)
    for b in bins:
        orr[b] |= 6
    want["atomic_or_shared"] = orr
    want["atomic_or_sized"] = orr
    want["atomic_add_2dim"] = np.arange(32, dtype=np.uint32).reshape(4, 8) + 1
    want["atomic_add_2dim_wrap"] = want["atomic_add_2dim"]
    xor = np.arange(32).astype(np.uint32)
    for b in bins:
        xor[b] ^= 5
    want["atomic_xor_global"] = xor
    sub = np.full(32, 100.0)
    np.subtract.at(sub, bins, 1.5)
    want["atomic_sub_shared_f64"] = sub
    want["apply_functions"] = np.stack([np.sqrt(x), x, np.exp(x), 2 * x, x + 0.5, x * x * x,
                                         x * 3.0 - 1 + 2.0])
    want["bit_count"] = [5, 16, 2, 64]
    want["enum_returnedTrue"] = [True, True]
    want["enum_returnedFalse"] = [False, False]
    return want


def test_launches_on_the_test_driver(m, tdrv):
    run_all(cuda, m)  # the test driver runs no code: launching is what is checked


@pytest.mark.gpu
def test_matches_numpy_and_numba_cuda(gpu, tmp_path, m):
    mine, channels, idx, x = run_all(cuda, m)
    want = expected(channels, idx, x)
    for key, value in want.items():
        np.testing.assert_allclose(mine[key], value, rtol=1e-15, err_msg=key)
    ncuda = pytest.importorskip("numba.cuda")
    theirs, *_ = run_all(ncuda, load_kernel_module(tmp_path, "device_args_numba", SOURCE,
                                                   ncuda))
    for key in mine:
        np.testing.assert_array_equal(mine[key], theirs[key], err_msg=key)
