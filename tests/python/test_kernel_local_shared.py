"""cuda.shared.array / cuda.local.array as numba-cuda 0.30 has them: the optional
`alignment` (third argument or keyword: a power of two, a multiple of 8, else numba's
ValueError; None the dtype's own) reaches the PTX's .align, and a local array is zero-filled
where the function begins (numba-cuda's cgutils.alloca_once stores zeros there), so a
kernel reading an element it never wrote sees 0 under both; shapes may be global constants, a
tuple or list of them or a global tuple, and the dtype numpy's name of a type ("int32"), as in
numba-cuda's test_sm_creation; `a.ctypes.data` is an array's address (numba's ArrayCTypes),
aligned as asked; `cuda.shared.array(0, dtype)`, the dynamic shared memory, is as long as
the launch's shared-memory size over the item size (numba-cuda reads %dynamic_smem_size), and
any other array with no elements is refused ("array length <= 0"); a structured numpy dtype
makes arrays of records. CI: the PTX's alignments and the errors; the GPU compares kernels
with numba-cuda and checks the addresses' alignment."""
import inspect
import re

import numpy as np
import pytest

import nbcuda as cuda
from conftest import load_kernel_module
from test_compile import check_ptx


def aligned(a):
    s = cuda.shared.array(32, np.float32, alignment=128)
    loc = cuda.local.array((4, 4), np.float64, 64)
    dyn = cuda.shared.array(0, dtype=np.int32, alignment=256)
    plain = cuda.shared.array(8, np.int8, None)
    i = cuda.grid(1)
    s[i % 32] = a[i]
    loc[i % 4, 0] = a[i]
    dyn[i] = 1
    plain[i % 8] = 2
    a[i] = s[0] + loc[1, 0] + dyn[0] + plain[0]


def test_alignment_reaches_the_ptx(tmp_path):
    ptx, _ = cuda.compile_ptx(aligned, "void(float32[::1])", cc=(9, 0))
    check_ptx(ptx, tmp_path)
    assert re.search(r"\.shared \.align 128 \.b8 \w+\[128\]", ptx)
    assert re.search(r"\.extern \.shared \.align 256 \.b8 \w+\[\]", ptx)
    assert re.search(r"\.local \.align 64 \.b8", ptx)


REC = np.dtype([("a", np.uint8), ("b", np.int32), ("c", np.float64)])


def named(out, x):
    f = cuda.local.array(4, np.float32)
    r = cuda.local.array(3, REC)  # packed records: 8-byte words, no `align` written
    b = cuda.local.array(8, np.uint8, alignment=64)
    s = cuda.shared.array(8, np.float32, alignment=256)
    t = cuda.shared.array(4, np.int32)
    i = cuda.grid(1)
    f[i % 4] = x[i]
    r[1].c = x[i]
    r[2].b = 3
    b[0] = 1
    s[0] = 1
    t[0] = 2
    out[i] = f[0] + r[1].c + r[2].b + b[0] + s[0] + t[0]


def test_arrays_named_and_aligned_as_numba_cudas_ir(tmp_path):
    """numba-cuda's test_array_alignment reads the IR: a local array is an alloca named
    %"_cudapy_lmem" (then .1, .2, ...) that says `align N` only when an alignment was asked
    for; a shared one the global @"_cudapy_smem_<n>" with its alignment, 16 at least."""
    k = cuda.jit("void(float64[::1], float64[::1])")(named)
    ir = k.inspect_llvm(k.signatures[0])
    allocas = re.findall(r'^\s*(%"_cudapy_lmem[.\d]*") = alloca (.*)$', ir, re.MULTILINE)
    assert allocas == [('%"_cudapy_lmem"', "[4 x float]"), ('%"_cudapy_lmem.1"', "[5 x i64]"),
                       ('%"_cudapy_lmem.2"', "[8 x i8], align 64")]
    assert re.findall(r'^@"_cudapy_smem_\d+".*?align (\d+)', ir, re.MULTILINE) == ["256", "16"]
    check_ptx(k.inspect_asm(k.signatures[0]), tmp_path)


def addresses(out, which):
    loc = cuda.local.array((2, 3), np.uint8, alignment=64)
    sh = cuda.shared.array(5, np.float64, alignment=256)
    loc[0, 1] = 7
    sh[0] = 1.0
    out[0] = loc.ctypes.data if which == 0 else sh.ctypes.data
    out[1] = loc[0, 1] + sh[0]
    out[2] = loc[0:].ctypes.data - loc.ctypes.data   # a view's address is its data's


def scalar_ctypes(out, x):
    out[0] = x.ctypes.data


def test_ctypes_data_is_the_arrays_address(tmp_path, tdrv):
    # numba's ArrayCTypes: a.ctypes.data, the data's address as uint64 (uintp)
    ptx, _ = cuda.compile_ptx(addresses, "void(uint64[::1], int32)", cc=(9, 0))
    check_ptx(ptx, tmp_path)
    assert "cvta.local.u64" in ptx and "cvta.shared.u64" in ptx
    cuda.jit("void(uint64[::1], int32)")(addresses)[1, 1](np.zeros(3, np.uint64), 0)
    with pytest.raises(cuda.TypingError, match="Unknown attribute 'ctypes' of type float64"):
        cuda.compile_ptx(scalar_ctypes, "void(uint64[::1], float64)", cc=(9, 0))


@pytest.mark.gpu
def test_addresses_are_aligned_on_the_gpu(gpu):
    k = cuda.jit("void(uint64[::1], int32)")(addresses)
    for which, align in ((0, 64), (1, 256)):
        out = np.zeros(3, np.uint64)
        k[1, 1](out, which)
        assert out[0] % align == 0 and out[0] != 0
        assert out[1] == 8 and out[2] == 0


NO_ALIGNMENT = None
FLOAT_ALIGNMENT = 16.0


def global_none_alignment(a):
    s = cuda.local.array(4, np.float32, alignment=NO_ALIGNMENT)  # a global None: the default
    s[0] = 1
    a[0] = s[0] if NO_ALIGNMENT is None else 2


def float_alignment(a):
    s = cuda.local.array(4, np.float32, alignment=FLOAT_ALIGNMENT)
    a[0] = s[0]


STRING_ALIGNMENT = "16"


def string_alignment(a):
    # a global the kernel language has no type for: numba's RequireLiteralValue too
    s = cuda.shared.array(4, np.float32, alignment=STRING_ALIGNMENT)
    a[0] = s[0]


def variable_alignment(a, n):
    s = cuda.local.array(4, np.float32, alignment=n)
    a[0] = s[0]


def test_alignment_is_a_constant_integer_or_none(tmp_path):
    ptx, _ = cuda.compile_ptx(global_none_alignment, "void(float32[::1])", cc=(9, 0))
    check_ptx(ptx, tmp_path)
    for func, sig in ((float_alignment, "void(float32[::1])"),
                      (string_alignment, "void(float32[::1])"),
                      (variable_alignment, "void(float32[::1], int64)")):
        with pytest.raises(cuda.TypingError,
                           match="RequireLiteralValue: alignment must be a constant integer"):
            cuda.compile_ptx(func, sig, cc=(9, 0))


def bad_power(a):
    s = cuda.shared.array(32, np.float32, alignment=12)
    a[0] = s[0]


def bad_multiple(a):
    s = cuda.local.array(4, np.float32, 4)
    a[0] = s[0]


def bad_sign(a):
    s = cuda.local.array(4, np.float32, alignment=-8)
    a[0] = s[0]


def unknown_keyword(a):
    s = cuda.local.array(4, np.float32, align=8)
    a[0] = s[0]


@pytest.mark.parametrize("func, message", [
    (bad_power, "ValueError: Alignment must be a power of 2"),
    (bad_multiple, "ValueError: Alignment must be a multiple of 8"),
    (bad_sign, "ValueError: Alignment must be positive"),
    (unknown_keyword, r"takes \(shape, dtype, alignment=None\)"),
])
def test_bad_alignment_is_numbas_error(func, message):
    with pytest.raises(cuda.CompileError, match=message) as info:
        cuda.compile_ptx(func, "void(float32[::1])", cc=(9, 0))
    # numba raises its ValueError as it is: the TypingError is a ValueError too
    assert isinstance(info.value, ValueError) == message.startswith("ValueError")


def unwritten(out):
    i = cuda.grid(1)
    loc = cuda.local.array(8, np.int64)
    rec = cuda.local.array((2, 3), np.float32)
    if i < out.shape[0]:
        loc[i % 8] = i + 1          # one element written, the others read as numba leaves them
        rec[1, 2] = 5.0
        s = 0
        for k in range(8):
            s += loc[k]
        out[i, 0] = s
        out[i, 1] = rec[0, 0] + rec[1, 1] + rec[1, 2]


@pytest.mark.gpu
def test_unwritten_local_elements_are_zero_as_in_numba_cuda(gpu, tmp_path):
    sig = "void(float64[:, ::1])"
    out = np.full((64, 2), np.nan)
    cuda.jit(sig)(unwritten)[2, 32](out)
    want = np.stack([np.arange(1.0, 65.0), np.full(64, 5.0)], axis=1)
    np.testing.assert_array_equal(out, want)

    ncuda = pytest.importorskip("numba.cuda")
    t = load_kernel_module(tmp_path, "numba_unwritten_kernels",
                           "import numpy as np\n\n" + inspect.getsource(unwritten), ncuda)
    theirs = np.full((64, 2), np.nan)
    ncuda.jit(sig)(t.unwritten)[2, 32](theirs)
    np.testing.assert_array_equal(out, theirs)


# ---- numba-cuda's test_sm_creation forms: shapes from global constants (an int, a tuple of
# them, a global tuple; a list is refused as numba-cuda refuses it) and dtypes given as numpy's
# name of the type

SHAPE_SOURCE = '''
import numpy as np

GLOBAL_CONSTANT = 5
GLOBAL_CONSTANT_2 = 6
GLOBAL_CONSTANT_TUPLE = 5, 6


def shapes(out):
    i, j = cuda.grid(2)
    a = cuda.shared.array(shape=GLOBAL_CONSTANT, dtype=np.float32)
    b = cuda.shared.array(shape=(GLOBAL_CONSTANT, GLOBAL_CONSTANT_2), dtype=np.float32)
    c = cuda.shared.array(shape=(GLOBAL_CONSTANT, GLOBAL_CONSTANT_2), dtype=np.float64)
    d = cuda.shared.array(shape=GLOBAL_CONSTANT_TUPLE, dtype="int32")
    if i < 5 and j < 6:
        a[i] = i
        b[i, j] = i * 10 + j
        c[i, j] = 0.5
        d[i, j] = -j
        cuda.syncthreads()
        out[i, j] = a[i] + b[i, j] + c[i, j] + d[i, j] + a.size + d.shape[1]
    else:
        cuda.syncthreads()


def bad_dtype(out):
    s = cuda.shared.array(10, dtype="int33")
    out[0, 0] = s[0]


def bad_shape(out):
    s = cuda.shared.array(shape=(1, out.shape[0]), dtype=np.float32)
    out[0, 0] = s[0, 0]


def list_shape(out):
    s = cuda.shared.array(shape=[GLOBAL_CONSTANT, GLOBAL_CONSTANT_2], dtype=np.float32)
    out[0, 0] = s[0, 0]


def element_shape(out):
    s = cuda.shared.array(shape=out[0, 0], dtype=np.float32)
    out[0, 0] = s[0]


def local_element_shape(out):
    s = cuda.local.array(out.shape[0], np.int32)
    out[0, 0] = s[0]
'''


@pytest.mark.parametrize("fn, signature", [
    # numba-cuda's test_sm_creation checks these texts of its TypingError
    ("list_shape", "array(shape=list(int64)<iv=[5, 6]>, dtype=class(float32))"),
    ("bad_shape", "array(shape=Tuple(Literal[int](1), int64), dtype=class(float32))"),
    ("element_shape", "array(shape=float64, dtype=class(float32))"),
    ("local_element_shape", "array(int64, class(int32))"),
])
def test_refused_shapes_are_reported_as_numba_reports_them(tmp_path, fn, signature):
    m = load_kernel_module(tmp_path, "sm_refused", SHAPE_SOURCE, cuda)
    with pytest.raises(cuda.TypingError) as info:
        cuda.compile_ptx(getattr(m, fn), "void(float64[:, ::1])", cc=(9, 0))
    where = "local" if fn.startswith("local") else "shared"
    assert (f"No implementation of function Function(<function {where}.array>) found for "
            f"signature:\n \n >>> {signature}\n \nthe shape of cuda.{where}.array() must be "
            in str(info.value))


def test_shape_and_dtype_forms_compile(tmp_path):
    m = load_kernel_module(tmp_path, "sm_creation", SHAPE_SOURCE, cuda)
    ptx, _ = cuda.compile_ptx(m.shapes, "void(float64[:, ::1])", cc=(9, 0))
    check_ptx(ptx, tmp_path)
    with pytest.raises(cuda.TypingError, match="Invalid NumPy dtype specified: 'int33'"):
        cuda.compile_ptx(m.bad_dtype, "void(float64[:, ::1])", cc=(9, 0))
    with pytest.raises(cuda.TypingError, match="must be constant integers"):
        cuda.compile_ptx(m.bad_shape, "void(float64[:, ::1])", cc=(9, 0))
    with pytest.raises(cuda.TypingError, match="a tuple of them, not a list"):
        cuda.compile_ptx(m.list_shape, "void(float64[:, ::1])", cc=(9, 0))


@pytest.mark.gpu
def test_shape_and_dtype_forms_match_numba_cuda(gpu, tmp_path):
    results = []
    for lib in (cuda, pytest.importorskip("numba.cuda")):
        m = load_kernel_module(tmp_path, f"sm_creation_{lib.__name__.replace('.', '_')}",
                               SHAPE_SOURCE, lib)
        out = np.zeros((5, 6))
        lib.jit("void(float64[:, ::1])")(m.shapes)[1, (8, 8)](out)
        results.append(out)
    i, j = np.meshgrid(np.arange(5), np.arange(6), indexing="ij")
    np.testing.assert_array_equal(results[0], i + i * 10 + j + 0.5 - j + 5 + 6)
    np.testing.assert_array_equal(results[0], results[1])


DYNAMIC_SOURCE = '''
import numpy as np


def dynamic_views(x):
    # numba-cuda's test_sm dynamic-shared-memory slices: the array's length is the size the
    # launch gave over the item size, so slices start and end where they say
    dyn = cuda.shared.array(0, dtype=np.int32)
    a = dyn[1:3]
    b = dyn[4:6]
    back = dyn[7:5:-1]
    for j in range(8):
        dyn[j] = 99
    a[0] = 1
    a[1] = 2
    b[0] = 3
    b[1] = 4
    back[0] = 5
    dyn[len(dyn) - 1] = 42
    for j in range(8):
        x[j] = dyn[j]
    x[8] = len(dyn)
    x[9] = dyn.size
    x[10] = dyn.shape[0]
    x[11] = dyn[-1]  # the last element the launch made room for
    x[12] = dyn[::2].size
'''


def test_dynamic_shared_array_length_is_read_at_run_time(tmp_path):
    m = load_kernel_module(tmp_path, "dynamic_views", DYNAMIC_SOURCE, cuda)
    ptx, _ = cuda.compile_ptx(m.dynamic_views, "void(int32[::1])", cc=(9, 0))
    check_ptx(ptx, tmp_path)
    assert "%dynamic_smem_size" in ptx
    assert re.search(r"\.extern \.shared \.align \d+ \.b8 \w+\[\]", ptx)


ZERO_LENGTH_SOURCE = '''
import numpy as np


def local_zero(x):
    a = cuda.local.array(0, np.int32)
    x[0] = a.size


def shared_2d_zero(x):
    a = cuda.shared.array((0, 4), np.int32)
    x[0] = a.size
'''


def test_zero_length_arrays_other_than_dynamic_shared_are_refused(tmp_path):
    # numba-cuda's _generic_array: "array length <= 0" unless a 1-d shared array
    m = load_kernel_module(tmp_path, "zero_length", ZERO_LENGTH_SOURCE, cuda)
    for fn in (m.local_zero, m.shared_2d_zero):
        with pytest.raises(cuda.TypingError, match="array length <= 0"):
            cuda.compile_ptx(fn, "void(int32[::1])", cc=(9, 0))
        with pytest.raises(ValueError, match="array length <= 0"):
            cuda.compile_ptx(fn, "void(int32[::1])", cc=(9, 0))


@pytest.mark.gpu
def test_dynamic_shared_views_match_numba_cuda(gpu, tmp_path):
    numba_cuda = pytest.importorskip("numba.cuda")
    results = []
    for lib in (cuda, numba_cuda):
        m = load_kernel_module(tmp_path, f"dynamic_views_{lib.__name__.replace('.', '_')}",
                               DYNAMIC_SOURCE, lib)
        k = lib.jit("void(int32[::1])")(m.dynamic_views)
        out = np.zeros(13, np.int32)
        k[1, 1, 0, 10 * 4](out)  # ten int32 of dynamic shared memory
        results.append(out)
    expected = [99, 1, 2, 99, 3, 4, 99, 5]  # back[0] is dyn[7]
    np.testing.assert_array_equal(results[0][:8], expected)
    assert list(results[0][8:]) == [10, 10, 10, 42, 5]
    np.testing.assert_array_equal(results[0], results[1])


RECORD_SOURCE = '''
import numpy as np

POINT = np.dtype([("a", np.uint8), ("b", np.int32), ("c", np.float64)], align=True)


def records_in_local_and_shared(out, addresses):
    # a structured numpy dtype as the element type (numba-cuda's test_array_alignment)
    loc = cuda.local.array(4, dtype=POINT)
    sh = cuda.shared.array(4, dtype=POINT, alignment=64)
    i = cuda.threadIdx.x
    loc[i].a = i + 1
    loc[i].b = -i
    loc[i].c = i * 0.5
    sh[i] = loc[i]
    cuda.syncthreads()
    out[i] = sh[3 - i]
    if i == 0:
        addresses[0] = sh.ctypes.data
'''


def _record_kernel(tmp_path, lib, name):
    return load_kernel_module(tmp_path, name, RECORD_SOURCE, lib)


def test_structured_dtype_globals_make_record_arrays(tmp_path):
    m = _record_kernel(tmp_path, cuda, "records_local_shared")
    sig = "void(Record(a[type=uint8;offset=0],b[type=int32;offset=4],c[type=float64;offset=8];" \
          "16;True)[::1], uint64[::1])"
    ptx, _ = cuda.compile_ptx(m.records_in_local_and_shared, sig, cc=(9, 0))
    check_ptx(ptx, tmp_path)
    assert re.search(r"\.shared \.align 64 \.b8 \w+\[64\]", ptx)


@pytest.mark.gpu
def test_structured_dtype_arrays_match_numba_cuda(gpu, tmp_path):
    numba_cuda = pytest.importorskip("numba.cuda")
    results = []
    for lib in (cuda, numba_cuda):
        m = _record_kernel(tmp_path, lib, f"records_{lib.__name__.replace('.', '_')}")
        out = np.zeros(4, m.POINT)
        addresses = np.zeros(1, np.uint64)
        lib.jit(m.records_in_local_and_shared)[1, 4](out, addresses)
        assert addresses[0] % 64 == 0
        results.append(out)
    assert list(results[0]["a"]) == [4, 3, 2, 1]
    assert list(results[0]["b"]) == [-3, -2, -1, 0]
    assert list(results[0]["c"]) == [1.5, 1.0, 0.5, 0.0]
    np.testing.assert_array_equal(results[0], results[1])
