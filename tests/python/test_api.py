"""The module's names, classes and exceptions, and numba's type objects."""
import re

import pytest

SEED_NAMES = """is_available detect current_context require_context synchronize close gpus
select_device get_current_device list_devices compile compile_for_current_device compile_ptx
compile_ptx_for_current_device profile_start profile_stop profiling event event_elapsed_time
stream default_stream legacy_default_stream per_thread_default_stream external_stream runtime
is_supported_version to_device device_array jit Context Device Stream Event CudaSupportError
CudaAPIError CudaDriverError NvvmError TypingError CompileError""".split()


def test_every_seed_name_exists(cuda):
    missing = [n for n in SEED_NAMES if not hasattr(cuda, n)]
    assert missing == []


@pytest.mark.parametrize("cls", ["Context", "Device", "Stream", "Event"])
def test_classes_are_not_instantiable(cuda, cls):
    with pytest.raises(TypeError):
        getattr(cuda, cls)()


def test_exception_hierarchy(cuda):
    assert issubclass(cuda.CudaSupportError, ImportError)
    assert issubclass(cuda.CudaAPIError, cuda.CudaDriverError)
    assert issubclass(cuda.TypingError, cuda.CompileError)
    e = cuda.CudaSupportError("no driver")
    assert e.msg == "no driver"
    e = cuda.CudaAPIError(201, "Call to cuStreamCreate results in CUDA_ERROR_INVALID_CONTEXT")
    assert str(e) == "[201] Call to cuStreamCreate results in CUDA_ERROR_INVALID_CONTEXT"
    assert (e.code, e.msg) == (201, "Call to cuStreamCreate results in CUDA_ERROR_INVALID_CONTEXT")
    # numba-cuda's KernelRuntimeError, for except clauses (its message as numba's)
    e = cuda.KernelRuntimeError("boom", tid=(1, 0, 0), ctaid=(2, 0, 0))
    assert isinstance(e, RuntimeError) and (e.msg, e.tid, e.ctaid) == ("boom", (1, 0, 0),
                                                                       (2, 0, 0))
    assert str(e) == "An exception was raised in thread=(1, 0, 0) block=(2, 0, 0)\n\tboom"


BAD_KERNEL = "def bad(x):\n    x[0] = undefined_name\n"


def test_typing_errors_are_numbas_too_once_numba_is_loaded(run_py, tmp_path):
    # Code written for numba catches numba's TypingError; nbcuda never imports numba, but once
    # numba's errors module is loaded its TypingError catches nbcuda's too. A stand-in module
    # here (numba-cuda has two, numba.core.errors and numba.cuda.core.errors, one deriving from
    # the other in some versions); the real numba on the GPU machine, in the test below.
    (tmp_path / "bad_kernel.py").write_text(BAD_KERNEL)
    out = run_py(r"""
import sys, types
import nbcuda as cuda
from bad_kernel import bad

try:
    cuda.compile_ptx(bad, "void(float32[:])", cc=(9, 0))
except cuda.TypingError as e:
    print(type(e) is cuda.TypingError, str(e).count("undefined_name") > 0)

class NumbaError(Exception):
    def __init__(self, msg, loc=None, highlighting=True):
        super().__init__("decorated: " + msg)
class TypingError(NumbaError):
    pass
class CudaTypingError(TypingError):
    pass
for name, cls in (("numba.core.errors", TypingError), ("numba.cuda.core.errors", CudaTypingError)):
    m = types.ModuleType(name)
    m.TypingError = cls
    sys.modules[name] = m
for _ in range(2):
    if _ == 1:  # the same class under both names, as numba-cuda re-exports numba's
        sys.modules["numba.cuda.core.errors"].TypingError = TypingError
    try:
        cuda.compile_ptx(bad, "void(float32[:])", cc=(9, 0))
    except TypingError as e:
        print(isinstance(e, cuda.TypingError), isinstance(e, CudaTypingError) == (_ == 0),
              str(e).startswith("decorated"), e.msg == str(e), type(e).__name__)
        import pickle  # pickled (a pool process's error), the class is made again
        back = pickle.loads(pickle.dumps(e))
        print(type(back) is type(e), str(back) == str(e), back.msg == e.msg)
""", env={"PYTHONPATH": str(tmp_path)}).stdout.split("\n")
    assert out[0] == "True True"
    assert out[1] == "True True False True TypingError"
    assert out[2] == "True True True"
    assert out[3] == "True True False True TypingError"
    assert out[4] == "True True True"


def test_api_errors_are_numba_cudas_and_cuda_cores_once_loaded(run_py):
    # numba-cuda's CudaAPIError and cuda.core's CUDAError (numba-cuda 0.30 raises the latter
    # from launches): once their modules are loaded, a failed driver call's CudaAPIError is an
    # instance of both (stand-in modules; nbcuda imports neither)
    out = run_py(r"""
import sys, types
import numpy as np
import nbcuda as cuda
exec("def noop(a):\n    pass\n")
k = cuda.jit("void(float32[::1])")(noop)
def fail():
    try:
        k[1, 2048](cuda.device_array(4, np.float32))
    except cuda.CudaAPIError as e:
        return e
e = fail()
print(type(e) is cuda.CudaAPIError, e.code, "CUDA_ERROR_INVALID_VALUE" in str(e))
class CudaDriverError(Exception):
    pass
class CudaAPIError(CudaDriverError):
    def __init__(self, code, msg):
        super().__init__(code, msg)
class CUDAError(Exception):
    pass
for name, attr, cls in (("numba.cuda.cudadrv.driver", "CudaAPIError", CudaAPIError),
                        ("cuda.core._utils.cuda_utils", "CUDAError", CUDAError)):
    m = types.ModuleType(name)
    setattr(m, attr, cls)
    sys.modules[name] = m
e = fail()
print(isinstance(e, CudaAPIError), isinstance(e, CUDAError), type(e).__name__, e.code,
      str(e).startswith("[1] Call to cuLaunchKernel"), fail().__class__ is type(e))
import pickle  # a pool process sends its exception back pickled: the class is made again
back = pickle.loads(pickle.dumps(e))
print(type(back) is type(e), back.code, str(back) == str(e), back.msg == e.msg)
""").stdout.split("\n")
    assert out[0] == "True 1 True"
    assert out[1] == "True True CudaAPIError 1 True True"
    assert out[2] == "True 1 True True"


def test_fork_error_is_numba_cudas_class_across_a_process_pool(run_py):
    # numba-cuda's test_fork: a fork-context pool's worker using CUDA initialised before the
    # fork raises CudaDriverError, which the parent receives (pickled) as numba-cuda's class
    out = run_py(r"""
import concurrent.futures, multiprocessing as mp, sys, types
import numpy as np
import nbcuda as cuda
class CudaDriverError(Exception):
    pass
m = types.ModuleType("numba.cuda.cudadrv.error")
m.CudaDriverError = CudaDriverError
sys.modules[m.__name__] = m
cuda.current_context()
with concurrent.futures.ProcessPoolExecutor(mp_context=mp.get_context("fork")) as exe:
    future = exe.submit(cuda.to_device, np.arange(1))
try:
    future.result()
except CudaDriverError as e:
    print(isinstance(e, cuda.CudaDriverError), "CUDA initialized before forking" in str(e))
""").stdout.split("\n")
    assert out[0] == "True True"


def test_typing_errors_are_caught_by_numbas_class(run_py, tmp_path):
    pytest.importorskip("numba")
    (tmp_path / "bad_kernel.py").write_text(BAD_KERNEL)
    out = run_py(r"""
import numpy as np
for old, new in (("row_stack", "vstack"), ("in1d", "isin"), ("trapz", "trapezoid")):
    if not hasattr(np, old) and hasattr(np, new):
        setattr(np, old, getattr(np, new))
from numba.core.errors import TypingError
import nbcuda as cuda
from bad_kernel import bad

try:
    cuda.compile_ptx(bad, "void(float32[:])", cc=(9, 0))
except TypingError as e:
    print(isinstance(e, cuda.TypingError), "undefined_name" in str(e))
""", env={"PYTHONPATH": str(tmp_path)}).stdout.split("\n")
    assert out[0] == "True True"


def test_import_does_not_initialise_cuda(run_py):
    # numba: CUDA_VISIBLE_DEVICES set after the import must still count, so no cuInit.
    p = run_py("""
        import nbcuda, sys
        print(nbcuda._driver_path())
        print('numpy' in sys.modules)
    """)
    assert p.stdout.split() == ["None", "False"]


@pytest.mark.parametrize("name,printed", [
    ("float32", "float32"), ("f4", "float32"), ("float_", "float32"), ("f8", "float64"),
    ("double", "float64"), ("i4", "int32"), ("i8", "int64"), ("intp", "int64"),
    ("uintp", "uint64"), ("u4", "uint32"), ("b1", "bool"), ("boolean", "bool"), ("bool", "bool"),
    ("void", "none"), ("complex64", "complex64"), ("c16", "complex128"), ("uint8", "uint8"),
])
def test_scalar_types_print_like_numba(cuda, name, printed):
    assert str(getattr(cuda, name)) == printed


def test_aliases_are_the_same_object(cuda):
    assert cuda.f4 is cuda.float32 and cuda.i8 is cuda.int64 and cuda.b1 is cuda.boolean
    assert cuda.bool is cuda.boolean  # numba.cuda.bool


def test_array_types_by_slicing(cuda):
    f = cuda.float32
    assert str(f[:]) == "array(float32, 1d, A)"
    assert str(f[::1]) == "array(float32, 1d, C)"
    assert str(f[:, ::1]) == "array(float32, 2d, C)"
    assert str(f[::1, :]) == "array(float32, 2d, F)"
    assert str(f[:, :, :]) == "array(float32, 3d, A)"
    assert f[:, ::1].ndim == 2 and f[:, ::1].layout == "C" and f[:].dtype is f
    assert f[:] == f[:] and hash(f[::1]) == hash(f[::1]) and f[:] != f[::1]
    assert repr(f[:]) == "Array(float32, 1, 'A', False, aligned=True)"
    with pytest.raises(TypeError):
        f[1:2]
    with pytest.raises(TypeError):
        f[:, ::1, :]


def test_array_types_by_numba_constructor(cuda):
    """numba's types.Array(dtype, ndim, layout) makes the type slicing spells, readonly=True
    numba's readonly array; what nbcuda cannot model (an unaligned array of scalars, a renamed
    type) is refused, not changed."""
    t = cuda.types
    assert t.Array(t.float32, 2, "C") == t.float32[:, ::1]
    assert t.Array(t.float32, 2, "F") == t.float32[::1, :]
    assert t.Array(t.int64, 3, "A") == t.int64[:, :, :]
    assert str(t.Array(dtype=t.complex64, ndim=1, layout="C")) == "array(complex64, 1d, C)"
    assert cuda.void(t.Array(t.float32, 1, "C")).signature_text == "void(float32[::1])"
    for bad, err, text in [
            ((t.float32, 33, "C"), ValueError, "ndim must be from 0 to 32, not 33"),
            ((t.float32, 1, "X"), ValueError, "layout must be 'C', 'F' or 'A', not 'X'"),
            ((3, 1, "C"), TypeError, "Array takes a scalar or record type"),
            ((t.float32[:], 1, "C"), TypeError, "Array takes a scalar or record type"),
            ((t.float32, 1), TypeError, "layout")]:
        with pytest.raises(err, match=re.escape(text)):
            t.Array(*bad)
    assert str(t.Array(t.float32, 1, "C", readonly=True)) == "readonly array(float32, 1d, C)"
    with pytest.raises(TypeError, match="aligned=False is an array of a packed record"):
        t.Array(t.float32, 1, "C", aligned=False)
    with pytest.raises(TypeError, match="name= is not supported"):
        t.Array(t.float32, 1, "C", name="mine")


def test_type_base_class_and_underlying_float(cuda):
    """isinstance(x, types.Type) and Complex.underlying_float, as numba code uses them
    (numba-cuda's test_complex builds signatures with both)."""
    t = cuda.types
    assert isinstance(t.float32, t.Type) and isinstance(t.float32[:], t.Type)
    assert not isinstance(3, t.Type)
    # numba's Signature is no Type: code that wraps a lone type in a tuple tells them apart
    assert not isinstance(t.void(t.int32), t.Type)
    # Array is the class of array types (isinstance(tp, types.Array) in numba code)
    assert isinstance(t.float32[:, ::1], t.Array) and isinstance(t.Array(t.int8, 1, "A"), t.Array)
    assert not isinstance(t.float32, t.Array) and not isinstance(t.void(t.int32), t.Array)
    assert t.complex64.underlying_float is t.float32
    assert t.complex128.underlying_float is t.float64
    sig = t.complex64.underlying_float(t.complex64)
    assert str(sig) == "(complex64,) -> float32"
    with pytest.raises(AttributeError, match="only complex types have an underlying_float"):
        t.float32.underlying_float


def test_types_derived_in_python(cuda):
    """numba's extension types derive from types.Type (`class StructModelType(types.Type)`,
    numba-cuda's test_localmem): with nbcuda's types such a class still defines and
    instantiates, an opaque type of its name, which a kernel signature refuses by name."""
    t = cuda.types

    class StructModelType(t.Type):
        def __init__(self):
            super().__init__(name="TestStruct")

    class Bare(t.Type):
        pass

    s = StructModelType()
    assert str(s) == "TestStruct" and s.name == "TestStruct" and isinstance(s, t.Type)
    assert str(Bare()) == "Bare" and str(t.Type("opaque")) == "opaque"
    t.Type.__init__(t.float32, "renamed")  # nbcuda's own objects are shared: never renamed
    assert str(t.float32) == "float32" and t.float32.signature_text == "float32"
    with pytest.raises(TypeError):
        t.Type(3)
    with pytest.raises(TypeError, match="cannot be indexed"):
        s[:]

    def k(a):
        pass

    with pytest.raises(cuda.TypingError, match="TestStruct"):
        cuda.compile_ptx(k, (s,), device=True, cc=(9, 0))


def test_tuple_type_classes(cuda):
    """types.Tuple and types.UniTuple are classes, as numba's: constructors and the answer to
    isinstance (numba-cuda's test_libdevice asks isinstance(t, (types.Tuple,
    types.UniTuple))); a Tuple of items of one type is a UniTuple, as numba's Tuple.__new__
    makes it."""
    t = cuda.types
    u, v = t.UniTuple(t.float64, 2), t.Tuple((t.int32, t.float32))
    assert type(u) is t.UniTuple and type(v) is t.Tuple
    assert str(u) == "UniTuple(float64 x 2)" and str(v) == "Tuple(int32, float32)"
    assert type(t.Tuple((t.int8, t.int8))) is t.UniTuple
    assert t.Tuple((t.int8, t.int8)) == t.UniTuple(dtype=t.int8, count=2)
    assert isinstance(u, (t.Tuple, t.UniTuple)) and not isinstance(u, t.Tuple)
    assert isinstance(u, t.Type) and isinstance(v, t.Type) and not isinstance(t.int8, t.Tuple)
    assert cuda.void(u, v).signature_text == "void(Tuple(float64, float64), Tuple(int32, float32))"
    with pytest.raises(ValueError, match="count must be from 1 to 64"):
        t.UniTuple(t.int8, 0)
    assert t.Tuple([t.int8, t.float32]) == t.Tuple((t.int8, t.float32))  # a list, as numba
    # a sequence of its item types, as numba's tuples
    assert len(u) == 2 and list(u) == [t.float64, t.float64] and u[1] is t.float64
    assert v.types == (t.int32, t.float32) and v.count == 2 and v[-1] is t.float32
    assert [x[::1] for x in v] == [t.int32[::1], t.float32[::1]]
    assert u.dtype is t.float64 and t.CPointer(t.int8).dtype is t.int8
    with pytest.raises(IndexError):
        v[2]
    with pytest.raises(AttributeError, match="only array types, UniTuples and CPointers"):
        v.dtype
    with pytest.raises(TypeError, match="Tuple takes a tuple or list of 1 to 64 item types"):
        t.Tuple(t.int8)


def test_signatures_from_types(cuda):
    s = cuda.float32(cuda.float32, cuda.int64)
    assert str(s) == "(float32, int64) -> float32"
    assert s.args == (cuda.float32, cuda.int64) and s.return_type is cuda.float32
    assert str(cuda.void(cuda.float32[:])) == "(array(float32, 1d, A),) -> none"
    assert s.signature_text == "float32(float32, int64)"
    assert cuda.void(cuda.float32[:, ::1]).signature_text == "void(float32[:, ::1])"


def test_types_have_no_numba_type_without_numba(run_py):
    """_numba_type_ (numba's typeof hook) answers only once numba's types are loaded: a
    process that never imports numba gets AttributeError, so hasattr is False."""
    out = run_py("import sys, nbcuda\n"
                 "print(hasattr(nbcuda.int32, '_numba_type_'), 'numba.core.types' in sys.modules)")
    assert out.stdout.split() == ["False", "False"]


def test_numba_compiles_code_that_uses_nbcuda_types(cuda):
    """numba's typeof reads _numba_type_: with `from nbcuda import uint64`, code numba itself
    compiles (njit here; numba-cuda's random module does `uint64(seed)` the same way) types
    nbcuda's scalars as numba's classes of them and array types as numba's TypeRefs."""
    numba = pytest.importorskip("numba")
    assert str(numba.typeof(cuda.uint64)) == "class(uint64)"
    assert str(numba.typeof(cuda.boolean)) == "class(bool)"
    assert str(numba.typeof(cuda.float32[:, ::1])) == "typeref[array(float32, 2d, C)]"
    uint64 = cuda.uint64

    @numba.njit
    def bump(x):
        return uint64(x) + uint64(1)

    assert bump(41) == 42
    assert bump.nopython_signatures[0].return_type == numba.types.uint64


def test_types_equal_numbas_own(cuda):
    """nbcuda's type objects equal numba's objects of the same types (compile()'s resty ==
    numba.types.none, numba-cuda's test_inline asks it), and numba's types may hold nbcuda's
    (numba.types.Array(nbcuda.float32, 1, "C") in a signature)."""
    numba = pytest.importorskip("numba")
    nt = numba.types
    assert cuda.float32 == nt.float32 and cuda.void == nt.none and cuda.boolean == nt.boolean
    assert cuda.float32[:, ::1] == nt.float32[:, ::1] and cuda.float32 != nt.float64
    assert not (cuda.int8 != nt.int8) and cuda.int8 != 3

    def k(a):
        a[0] = 1

    ptx, resty = cuda.compile(k, (nt.Array(cuda.float32, 1, "C"),), device=True, cc=(9, 0))
    assert resty == nt.none


def test_type_called_with_a_value_converts(cuda):
    np = pytest.importorskip("numpy")
    v = cuda.float32(1.7)
    assert isinstance(v, np.float32) and v == np.float32(1.7)
    assert isinstance(cuda.int8(5), np.int8) and cuda.int8(5) == 5


def test_runtime_version(cuda):
    v = cuda.runtime.get_version()
    assert isinstance(v, tuple) and len(v) == 2 and v[0] >= 12
    assert cuda.runtime.is_supported_version() is True
    assert cuda.is_supported_version() is True
    assert (12, 0) in cuda.runtime.supported_versions
    assert cuda.runtime.get_source() in ("cudart", "nvrtc", "nvvm")




def test_device_identity_round_trip(cuda):
    # numba's Device.get_device_identity() / Device.from_identity(): the PCI location names a
    # device across processes; an unknown one is numba's RuntimeError
    for i in range(len(cuda.gpus)):
        with cuda.gpus[i]:
            ident = cuda.get_current_device().get_device_identity()
            assert set(ident) == {"pci_domain_id", "pci_bus_id", "pci_device_id"}
            assert ident["pci_bus_id"] == cuda.get_current_device().PCI_BUS_ID
            found = cuda.Device.from_identity(ident)
            assert found.id == i and found is cuda.get_current_device()
    with pytest.raises(RuntimeError, match="No device of .* is found"):
        cuda.Device.from_identity({"pci_domain_id": 99, "pci_bus_id": 99, "pci_device_id": 99})


def test_memory_info_class_is_exported(cuda):
    info = cuda.current_context().get_memory_info()
    assert cuda.MemoryInfo is type(info) and cuda.MemoryInfo._fields == ("free", "total")
    assert cuda.MemoryInfo(1, 2).total == 2
    with pytest.raises(AttributeError, match="module 'nbcuda' has no attribute 'no_such_name'"):
        cuda.no_such_name
