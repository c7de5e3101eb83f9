"""cuda.declare_device and jit(link=[...]): device functions written in CUDA C++ (compiled by
NVRTC) or given as PTX, linked with the kernel by nvJitLink when it is loaded. CI links for real
(NVRTC and nvJitLink run on the host; the test driver loads the cubin) and checks the PTX and
the errors; the gpu test runs the kernels and compares with numpy and numba-cuda (in a fresh
interpreter, as the other comparisons)."""
import os
import shutil
import subprocess
import sys

import pytest

np = pytest.importorskip("numpy")
import nbcuda as cuda  # noqa: E402
from conftest import USING_TESTDRIVER  # noqa: E402

CU_SOURCE = r"""
extern "C" __device__ int mul_f32_f32(float *ret, float a, float b) {
  *ret = a * b;
  return 0;
}
extern "C" __device__ int clamp_i64(long long *ret, long long v, long long hi) {
  *ret = v > hi ? hi : v;
  return 0;
}
"""

mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)")
clamp = cuda.declare_device("clamp_i64", "int64(int64, int64)")


def product_plus_index(out, x, y):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = mul(x[i], y[i]) + clamp(i, 5)


@pytest.fixture(scope="module")
def cu_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("link") / "functions.cu"
    path.write_text(CU_SOURCE)
    return str(path)


def tool_env():
    """The environment for the toolkit's programs: without the sanitizer runtime the ASan
    stage of .ci/run preloads for the extension (nvcc crashes under it)."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    return env


def expected(x, y):
    return x * y + np.minimum(np.arange(x.size), 5).astype(np.float32)


def test_declared_object():
    assert mul.name == "mul_f32_f32" and mul.sig == "float32(float32, float32)"
    assert mul.link == () and "mul_f32_f32" in repr(mul)
    with pytest.raises(TypeError, match="is a device function: call it from a kernel"):
        mul(1.0, 2.0)
    d = cuda.declare_device("f", cuda.float64(cuda.float64), link="a.cu")
    assert d.sig == "float64(float64)" and d.link == ("a.cu",)
    with pytest.raises(TypeError, match="take scalars and CPointer"):
        cuda.declare_device("f", "float32(float32[:])")
    p = cuda.declare_device("g", "float32(CPointer(float32), int32)")  # numba's pointer ABI
    assert p.sig == "float32(CPointer(float32), int32)"
    with pytest.raises(TypeError, match="Return type must be provided"):  # numba's words
        cuda.declare_device("f", "(float32,)")
    with pytest.raises(NotImplementedError, match="Unsupported ABI: fortran"):
        cuda.declare_device("f", "float32(float32)", abi="fortran")
    assert not mul.c_abi and cuda.declare_device("f", "void(int32)", abi="c").c_abi
    with pytest.raises(TypeError, match="link must be a list of file paths"):
        cuda.declare_device("f", "float32(float32)", link=5)


def test_calls_use_numbas_abi():
    ptx, _ = cuda.compile_ptx(product_plus_index, "void(float32[:], float32[:], float32[:])",
                              cc=(9, 0))
    head = ptx[ptx.index(".extern .func"):]
    # int mul_f32_f32(float *ret, float a, float b): the status back, then the pointer
    assert head.startswith(".extern .func  (.param .b32 func_retval0) mul_f32_f32")
    assert "mul_f32_f32_param_0" in ptx and ".param .b64 mul_f32_f32_param_0" in ptx
    assert ".param .b32 mul_f32_f32_param_2" in ptx
    assert ".param .b64 clamp_i64_param_2" in ptx


def test_argument_errors():
    with pytest.raises(cuda.TypingError, match=r"mul_f32_f32\(\) takes 2 positional"):
        cuda.compile_ptx(lambda a: mul(a, a, a), "float32(float32)", device=True)
    with pytest.raises(cuda.TypingError, match="cannot pass a value of type array"):
        cuda.compile_ptx(lambda a: mul(a, 1.0), "float32(float32[:])", device=True)


C_ABI_SOURCE = r"""
extern "C" __device__ int add2(int a, int b) { return a + b; }
extern "C" __device__ int const42() { return 42; }
extern "C" __device__ double half(double x) { return 0.5 * x; }
extern "C" __device__ bool odd(long long v) { return v & 1; }
extern "C" __device__ void store42(int *p) { *p = 42; }
"""

add2 = cuda.declare_device("add2", "int32(int32, int32)", abi="c")
const42 = cuda.declare_device("const42", "int32()", abi="c")
half = cuda.declare_device("half", "float64(float64)", abi="c")
odd = cuda.declare_device("odd", "boolean(int64)", abi="c")
store42 = cuda.declare_device("store42", "void(CPointer(int32))", abi="c")


def c_abi_kernel(r, x, h, p):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = add2(x[i], i) + const42() + (1000 if odd(i) else 0)
        h[i] = half(x[i])
    if i == 0:
        store42(p)


C_ABI_SIG = "void(int32[::1], int32[::1], float64[::1], CPointer(int32))"


def c_abi_expected(x):
    i = np.arange(x.size)
    return x + i + 42 + np.where(i % 2 == 1, 1000, 0), 0.5 * x


def test_c_abi_declarations_are_plain_calls(tmp_path):
    # numba-cuda 0.30's declare_device(abi="c"): `RT name(args...)`, no status, no slot
    ptx, _ = cuda.compile_ptx(c_abi_kernel, C_ABI_SIG, cc=(9, 0))
    assert ".extern .func  (.param .b32 func_retval0) add2" in ptx
    assert ".extern .func  (.param .b64 func_retval0) half" in ptx
    assert ".extern .func store42" in ptx  # void: no return value
    assert ".extern .func  (.param .b32 func_retval0) const42" in ptx
    src = cuda.CUSource(C_ABI_SOURCE, name="c-abi")
    k = cuda.jit(C_ABI_SIG, link=[src])(c_abi_kernel)
    x = np.arange(40, dtype=np.int32)
    r, h, p = (cuda.device_array(40, np.int32), cuda.device_array(40),
               cuda.device_array(1, np.int32))
    k[2, 32](r, cuda.to_device(x), h, p.device_ctypes_pointer.value)  # links, loads
    if not USING_TESTDRIVER:
        er, eh = c_abi_expected(x)
        np.testing.assert_array_equal(r.copy_to_host(), er)
        np.testing.assert_array_equal(h.copy_to_host(), eh)
        assert p.copy_to_host()[0] == 42


def test_link_cu_with_nvrtc(cu_file):
    k = cuda.jit("void(float32[:], float32[:], float32[:])", link=[cu_file])(product_plus_index)
    x = np.arange(8, dtype=np.float32)
    out = cuda.device_array(8, np.float32)
    k[1, 32](out, cuda.to_device(x), cuda.to_device(x))  # NVRTC, nvJitLink, load
    if not USING_TESTDRIVER:  # the test driver does not run kernels
        np.testing.assert_array_equal(out.copy_to_host(), expected(x, x))


def test_declared_links_reach_the_kernel(cu_file):
    m = cuda.declare_device("mul_f32_f32", "float32(float32, float32)", link=[cu_file])
    c = cuda.declare_device("clamp_i64", "int64(int64, int64)", link=[cu_file])

    def kernel(out, x):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = m(x[i], x[i]) + c(i, 5)

    k = cuda.jit(kernel)  # lazily: each specialisation links the files it needs
    x = np.arange(8, dtype=np.float32)
    out = cuda.device_array(8, np.float32)
    k[1, 32](out, cuda.to_device(x))  # the file once, though two functions name it
    if not USING_TESTDRIVER:
        np.testing.assert_array_equal(out.copy_to_host(), expected(x, x))


def test_link_objects_and_libraries(cu_file, tmp_path):
    """nvcc -dc objects and static libraries of them link too (nvJitLink's OBJECT and LIBRARY
    inputs)."""
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not os.path.exists(nvcc):
        pytest.skip("no nvcc to make an object file")
    obj, lib = tmp_path / "functions.o", tmp_path / "libfunctions.a"
    subprocess.run([nvcc, "-dc", "-arch=sm_90", cu_file, "-o", str(obj)], check=True,
                   env=tool_env())
    ar = shutil.which("ar")
    for path in [obj] + ([lib] if ar else []):
        if path == lib:
            subprocess.run([ar, "rcs", str(lib), str(obj)], check=True, env=tool_env())
        k = cuda.jit("void(float32[:], float32[:], float32[:])",
                     link=[str(path)])(product_plus_index)
        x = np.arange(8, dtype=np.float32)
        out = cuda.device_array(8, np.float32)
        try:
            k[1, 32](out, cuda.to_device(x), cuda.to_device(x))
        except cuda.LinkerError as e:  # the objects are sm_90 code
            if "arch" in str(e).lower() or "sm_" in str(e):
                pytest.skip(f"the device is not sm_90: {e}")
            raise
        if not USING_TESTDRIVER:
            np.testing.assert_array_equal(out.copy_to_host(), expected(x, x))


def test_link_errors(tmp_path, cu_file):
    bad = tmp_path / "bad.cu"
    bad.write_text('extern "C" __device__ int f(float *r, float a) { *r = a return 0; }\n')

    def run(links):
        k = cuda.jit("void(float32[:], float32[:], float32[:])", link=links)(product_plus_index)
        a = cuda.device_array(4, np.float32)
        k[1, 4](a, a, a)

    with pytest.raises(cuda.CompileError, match=r"nvrtcCompileProgram of .*bad.cu failed"):
        run([str(bad)])
    with pytest.raises(FileNotFoundError):
        run([str(tmp_path / "missing.cu")])
    with pytest.raises(FileNotFoundError):
        run([str(tmp_path / "f.o")])
    with pytest.raises(cuda.LinkerError, match="Don't know how to link file with extension .xyz"):
        run([str(tmp_path / "f.xyz")])
    with pytest.raises(NotImplementedError, match="device=True, link"):
        cuda.jit(device=True, link=[cu_file])(product_plus_index)


def test_nvrtc_extra_search_paths(tmp_path, run_py):
    # numba's config.CUDA_NVRTC_EXTRA_SEARCH_PATHS: directories (':') NVRTC searches for the
    # headers of a linked .cu file, read when the file is compiled
    inc_a, inc_b = tmp_path / "a", tmp_path / "b"
    inc_a.mkdir()
    inc_b.mkdir()
    (inc_a / "twice.cuh").write_text("__device__ float twice(float v) { return 2 * v; }\n")
    (inc_b / "plus.cuh").write_text("__device__ float plus(float v, float w) { return v + w; }\n")
    cu = tmp_path / "uses_headers.cu"
    cu.write_text('#include <twice.cuh>\n#include "plus.cuh"\nextern "C" __device__ int '
                  "twice_plus(float *r, float a, float b) { *r = plus(twice(a), b); return 0; }\n")
    twice_plus = cuda.declare_device("twice_plus", "float32(float32, float32)", link=str(cu))

    def k(out):
        out[0] = twice_plus(out[0], 1.0)

    from nbcuda import config
    assert config is cuda.config and config.CUDA_NVRTC_EXTRA_SEARCH_PATHS == ""
    # numba-cuda's config facts code reads: no simulator, no Numba runtime
    assert config.ENABLE_CUDASIM is False and config.CUDA_ENABLE_NRT is False
    out = cuda.to_device(np.ones(1, np.float32))
    with pytest.raises(cuda.CompileError, match="cannot open source file"):
        cuda.jit("void(float32[::1])")(k)[1, 1](out)
    config.CUDA_NVRTC_EXTRA_SEARCH_PATHS = f"{inc_a}::{inc_b}"  # an empty entry is skipped
    try:
        cuda.jit("void(float32[::1])")(k)[1, 1](out)  # NVRTC with both, nvJitLink, load
        config.CUDA_NVRTC_EXTRA_SEARCH_PATHS = 7
        with pytest.raises(TypeError, match="CUDA_NVRTC_EXTRA_SEARCH_PATHS must be a str"):
            cuda.jit("void(float32[::1])")(k)[1, 1](out)
    finally:
        config.CUDA_NVRTC_EXTRA_SEARCH_PATHS = ""
    # the environment variable numba reads gives the starting value
    code = "import nbcuda; print(nbcuda.config.CUDA_NVRTC_EXTRA_SEARCH_PATHS)"
    r = run_py(code, env={"NUMBA_CUDA_NVRTC_EXTRA_SEARCH_PATHS": f"{inc_a}:{inc_b}"})
    assert r.stdout.strip() == f"{inc_a}:{inc_b}"


# ------------------------------------------------- code in memory: LinkableCode ---------

def test_linkable_code_classes():
    kinds = {cuda.PTXSource: "ptx", cuda.CUSource: "cu", cuda.Cubin: "cubin",
             cuda.Fatbin: "fatbin", cuda.LTOIR: "ltoir", cuda.Object: "o", cuda.Archive: "a"}
    for cls, kind in kinds.items():
        assert issubclass(cls, cuda.LinkableCode) and cls.kind == kind
        obj = cls(b"x")
        assert obj.name == cls.default_name and obj.data == b"x"
        assert cls.__name__ in repr(obj)
    import io
    assert cuda.CUSource(io.StringIO("int x;"), name="mine").data == "int x;"
    assert cuda.CUSource("a", name="mine").name == "mine"
    assert cuda.Cubin(io.BytesIO(b"\x7fELF")).data == b"\x7fELF"
    with pytest.raises(TypeError, match="setup_callback must be callable"):
        cuda.CUSource("", setup_callback=5)
    with pytest.raises(TypeError, match="teardown_callback must be callable"):
        cuda.CUSource("", teardown_callback=5)
    with pytest.raises(NotImplementedError, match="setup_callback"):
        cuda.CUSource("", setup_callback=print)
    with pytest.raises(NotImplementedError, match="nrt=True"):
        cuda.CUSource("", nrt=True)


def test_linkable_code_from_path(cu_file, tmp_path):
    src = cuda.LinkableCode.from_path(cu_file)
    assert type(src) is cuda.CUSource and src.name == "functions" and src.data == CU_SOURCE
    blob = tmp_path / "k.cubin"
    blob.write_bytes(b"\x7fELF..")
    got = cuda.CUSource.from_path(str(blob))  # numba's staticmethod: the extension decides
    assert type(got) is cuda.Cubin and got.data == b"\x7fELF.."
    assert cuda.LinkableCode.from_path_or_obj(src) is src
    assert type(cuda.LinkableCode.from_path_or_obj(cu_file)) is cuda.CUSource
    with pytest.raises(ValueError, match="Unknown extension: .xyz"):
        cuda.LinkableCode.from_path(str(tmp_path / "f.xyz"))
    with pytest.raises(FileNotFoundError):
        cuda.LinkableCode.from_path(str(tmp_path / "missing.cu"))


def test_link_code_in_memory():
    src = cuda.CUSource(CU_SOURCE, name="inline-functions")
    k = cuda.jit("void(float32[:], float32[:], float32[:])", link=[src])(product_plus_index)
    x = np.arange(8, dtype=np.float32)
    out = cuda.device_array(8, np.float32)
    k[1, 32](out, cuda.to_device(x), cuda.to_device(x))  # NVRTC from memory, nvJitLink, load
    if not USING_TESTDRIVER:
        np.testing.assert_array_equal(out.copy_to_host(), expected(x, x))
    m = cuda.declare_device("mul_f32_f32", "float32(float32, float32)", link=src)
    assert m.link == (src,)
    bad = cuda.CUSource('extern "C" __device__ int f(float *r) { *r = 1 return 0; }',
                        name="broken-inline")
    kb = cuda.jit("void(float32[:], float32[:], float32[:])", link=[bad])(product_plus_index)
    with pytest.raises(cuda.CompileError, match="broken-inline"):
        kb[1, 32](out, out, out)
    with pytest.raises(TypeError, match="not a file path or LinkableCode"):
        cuda.jit(link=[5])(product_plus_index)
    notcode = cuda.jit("void(float32[:], float32[:], float32[:])",
                       link=[cuda.PTXSource(3.5)])(product_plus_index)
    with pytest.raises(TypeError):  # data must be a str, bytes or a buffer
        notcode[1, 32](out, out, out)


def test_link_ptx_in_memory(cu_file):
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not os.path.exists(nvcc):
        pytest.skip("no nvcc to make PTX")
    ptx = subprocess.run([nvcc, "-ptx", "-rdc=true", "-arch=sm_90", cu_file, "-o", "-"],
                         check=True, capture_output=True, text=True, env=tool_env()).stdout
    k = cuda.jit("void(float32[:], float32[:], float32[:])",
                 link=[cuda.PTXSource(ptx)])(product_plus_index)
    x = np.linspace(-2, 2, 100).astype(np.float32)
    out = cuda.device_array(100, np.float32)
    k[1, 128](out, cuda.to_device(x), cuda.to_device(x))
    if not USING_TESTDRIVER:
        np.testing.assert_array_equal(out.copy_to_host(), expected(x, x))


# ---------------------------------------------------------------- on the GPU -------------

NUMBA_SIDE = """
import numpy as np
for old, new in (("row_stack", "vstack"), ("in1d", "isin"), ("trapz", "trapezoid")):
    if not hasattr(np, old) and hasattr(np, new):
        setattr(np, old, getattr(np, new))
from numba import cuda
mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)", link=[{cu!r}])
clamp = cuda.declare_device("clamp_i64", "int64(int64, int64)", link=[{cu!r}])

@cuda.jit("void(float32[:], float32[:], float32[:])")
def product_plus_index(out, x, y):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = mul(x[i], y[i]) + clamp(i, 5)

x = np.linspace(-2, 2, 1000).astype(np.float32)
out = cuda.device_array(1000, np.float32)
product_plus_index[4, 256](out, cuda.to_device(x), cuda.to_device(x))
np.save({path!r}, out.copy_to_host())
"""


@pytest.mark.gpu
def test_linked_functions_run_like_numba_cuda(gpu, cu_file, tmp_path):
    x = np.linspace(-2, 2, 1000).astype(np.float32)
    k = cuda.jit("void(float32[:], float32[:], float32[:])", link=[cu_file])(product_plus_index)
    out = cuda.device_array(1000, np.float32)
    k[4, 256](out, cuda.to_device(x), cuda.to_device(x))
    mine = out.copy_to_host()
    np.testing.assert_array_equal(mine, expected(x, x))
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if os.path.exists(nvcc):  # the same functions as PTX
        ptx = tmp_path / "functions.ptx"
        subprocess.run([nvcc, "-ptx", "-rdc=true", "-arch=sm_90", cu_file, "-o", str(ptx)],
                       check=True, env=tool_env())
        kp = cuda.jit("void(float32[:], float32[:], float32[:])",
                      link=[str(ptx)])(product_plus_index)
        kp[4, 256](out, cuda.to_device(x), cuda.to_device(x))
        np.testing.assert_array_equal(out.copy_to_host(), mine)
    pytest.importorskip("numba")
    path = tmp_path / "numba.npy"
    p = subprocess.run([sys.executable, "-c", NUMBA_SIDE.format(cu=cu_file, path=str(path))],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"numba-cuda side failed:\n{p.stdout}\n{p.stderr}"
    np.testing.assert_array_equal(mine, np.load(path))


def test_missing_nvrtc_is_a_linker_error(cu_file, run_py):
    """NVRTC is loaded on first use; when it cannot be, the message names where it looked."""
    code = f"""
import numpy as np
import nbcuda as cuda
import test_declare_device as t
k = cuda.jit("void(float32[:], float32[:], float32[:])", link=[{cu_file!r}])(
    t.product_plus_index)
a = cuda.device_array(4, np.float32)
try:
    k[1, 4](a, a, a)
except cuda.LinkerError as e:
    assert "NVRTC cannot be found or loaded (searched NBCUDA_NVRTC=/nonexistent" in str(e), e
else:
    raise SystemExit("no LinkerError")
"""
    env = {"NBCUDA_NVRTC": "/nonexistent/libnvrtc.so",
           "PYTHONPATH": os.pathsep.join([os.path.dirname(os.path.abspath(__file__))] +
                                         [p for p in sys.path if p])}
    run_py(code, env=env)


CTA_BARRIER_CU = r"""
#include <cooperative_groups.h>
#include <cuda/barrier>

namespace cg = cooperative_groups;

extern "C" __device__ int cta_barrier(int **ret) {
    auto cta = cg::this_thread_block();
    __shared__ cuda::barrier<cuda::thread_scope_block> barrier;
    if (threadIdx.x == 0) init(&barrier, blockDim.x);
    cta.sync();
    auto token = barrier.arrive();
    barrier.wait(std::move(token));
    *ret = nullptr;
    return 0;
}
"""


def test_cooperative_declared_function_returning_a_pointer(tmp_path):
    # numba-cuda's test_external_cooperative_func: a declared function returning
    # CPointer(int32), in CUDA C++ that includes libcu++ (<cuda/barrier>, under the toolkit's
    # include/cccl/ in CUDA 13), declared use_cooperative: the kernel is cooperative
    src = tmp_path / "cta_barrier.cu"
    src.write_text(CTA_BARRIER_CU)
    cta_barrier = cuda.declare_device("cta_barrier", sig="CPointer(int32)()", link=[str(src)],
                                      use_cooperative=True)

    @cuda.jit("void()")
    def kernel():
        cta_barrier()

    overload = kernel.overloads[()]
    assert overload.cooperative
    blocks = overload.max_cooperative_grid_blocks(32)
    assert blocks > 0
    kernel[blocks, 32]()
    cuda.synchronize()
    plain = cuda.jit("void(float32[::1], float32[::1], float32[::1])")(product_plus_index)
    assert not plain.cooperative


SUM_CU = r"""
extern "C" __device__ int sum_reduce(float *ret, float *array, int n) {
  float s = 0;
  for (int i = 0; i < n; i++) s += array[i];
  *ret = s;
  return 0;
}
"""

sum_reduce = cuda.declare_device("sum_reduce", "float32(CPointer(float32), int32)")


@pytest.fixture
def ffi(monkeypatch):
    """A cffi.FFI object; where cffi is not installed (the GPU machine), an object of a
    stand-in cffi.FFI class: nbcuda recognises instances of sys.modules['cffi'].FFI."""
    try:
        import cffi
    except ImportError:
        import types
        cffi = types.ModuleType("cffi")
        cffi.FFI = type("FFI", (), {})
        monkeypatch.setitem(sys.modules, "cffi", cffi)
    return cffi.FFI()


def test_ffi_from_buffer_passes_an_arrays_data(ffi, tmp_path):
    # numba-cuda's FFI example: ffi.from_buffer(array) is a CPointer to the array's data,
    # which a declared function takes
    src = tmp_path / "sum.cu"
    src.write_text(SUM_CU)

    def reduction_caller(result, array):
        array_ptr = ffi.from_buffer(array)
        result[()] = sum_reduce(array_ptr, len(array))

    sig = "void(array(float32, 0d, C), float32[::1])"
    k = cuda.jit(sig, link=[str(src)])(reduction_caller)
    assert "call.uni" in "".join(k.inspect_asm().values())
    a = np.arange(100, dtype=np.float32)
    result = cuda.device_array((), np.float32)
    k[1, 1](result, cuda.to_device(a))
    if not USING_TESTDRIVER:
        assert result.copy_to_host() == a.sum()

    def strided(result, array):
        result[()] = sum_reduce(ffi.from_buffer(array[::2]), 3)

    def other_method(result, array):
        result[()] = ffi.cast("float *", 0)

    for fn, message in ((strided, r"from_buffer\(\) unsupported on non-contiguous buffers"),
                        (other_method, r"'ffi.cast' is not supported in kernels")):
        with pytest.raises(cuda.CompileError, match=message):
            cuda.compile_ptx(fn, sig, cc=(9, 0))
