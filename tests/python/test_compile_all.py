"""cuda.compile_all: compile()'s code followed by the code of every file the function links —
declare_device(link=[...]) files (CUDA C++ compiled by NVRTC with the same lineinfo / debug,
PTX and the rest as LinkableCode) and the fp16 wrappers' shim. CI compiles for real (NVRTC on
the host) and links the pieces back into a kernel (the test driver loads the cubin); on a GPU
the kernel runs and is compared with numpy."""
import warnings

import pytest

np = pytest.importorskip("numpy")
import nbcuda as cuda  # noqa: E402
from nbcuda import float16, float32, uint32, void  # noqa: E402
from conftest import USING_TESTDRIVER  # noqa: E402

CU_SOURCE = r"""
extern "C" __device__ int add_u32(unsigned *ret, unsigned a, unsigned b) {
  *ret = a + b;
  return 0;
}
"""

PTX_SOURCE = """//
.version 8.0
.target sm_75
.address_size 64
.visible .func  (.param .b32 func_retval0) twice_u32(.param .b64 r, .param .b32 a)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [r];
  ld.param.u32 %r1, [a];
  add.s32 %r2, %r1, %r1;
  st.u32 [%rd1], %r2;
  mov.u32 %r1, 0;
  st.param.b32 [func_retval0+0], %r1;
  ret;
}
"""


@pytest.fixture(scope="module")
def link_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("compile_all")
    (d / "adder.cu").write_text(CU_SOURCE)
    (d / "twice.ptx").write_text(PTX_SOURCE)
    return str(d / "adder.cu"), str(d / "twice.ptx")


def add(x, y):
    return x + y


def test_device_function_alone():
    codes, resty = cuda.compile_all(add, (float32, float32), output="ptx")
    assert isinstance(codes, list) and len(codes) == 1
    assert ".visible .func" in codes[0] and "func_retval" in codes[0]
    assert resty is float32
    assert codes[0] == cuda.compile(add, (float32, float32))[0]


def test_default_output_is_ltoir():
    codes, resty = cuda.compile_all(add, "int32(int32, int32)")
    assert isinstance(codes[0], bytes) and codes[0][:4] == b"\xed\x43\x4e\x7f"
    assert str(resty) == "int32"


def test_kernel_code_and_void():
    def k(r, x, y):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = x[i] + y[i]

    codes, resty = cuda.compile_all(k, (float32[:], float32[:], float32[:]), device=False,
                                    abi="numba", output="ptx")
    assert ".visible .entry" in codes[0] and ".visible .func" not in codes[0]
    assert resty is void


def declared_kernel(link):
    add_u32 = cuda.declare_device("add_u32", "uint32(uint32, uint32)", link=link[:1])
    twice = cuda.declare_device("twice_u32", "uint32(uint32)", link=link[1:])

    def k(z, x, y):
        z[0] = twice(add_u32(x, y))

    return k


@pytest.mark.parametrize("output", ["ptx", "ltoir"])
def test_linked_files_follow_the_code(link_files, output):
    k = declared_kernel(list(link_files))
    codes, resty = cuda.compile_all(k, (uint32[::1], uint32, uint32), device=False,
                                    abi="numba", output=output)
    assert resty is void and len(codes) == 3
    # in the order the declared functions are met: twice_u32's file, then add_u32's
    ptx, compiled = codes[1:]
    # the .cu file compiled by NVRTC into the kind asked for, named after the file (numba's
    # LinkableCode.from_path names); the PTX file as LinkableCode.from_path gives it
    assert isinstance(compiled, cuda.PTXSource if output == "ptx" else cuda.LTOIR)
    assert compiled.name == "adder"
    if output == "ptx":
        assert ".visible .func" in compiled.data.decode() and "add_u32" in compiled.data.decode()
    else:
        assert compiled.data[:4] == b"\xed\x43\x4e\x7f"
    assert isinstance(ptx, cuda.PTXSource) and ptx.kind == "ptx" and ptx.name == "twice"
    assert ptx.data == PTX_SOURCE


def test_in_memory_link_code(link_files):
    cu = cuda.CUSource(CU_SOURCE, name="mem.cu")
    k = declared_kernel([cu, cuda.PTXSource(PTX_SOURCE)])
    codes, _ = cuda.compile_all(k, (uint32[::1], uint32, uint32), device=False, abi="numba",
                                output="ptx")
    assert codes[1].kind == "ptx" and codes[1].name == "<unnamed-ptx>"
    assert isinstance(codes[2], cuda.PTXSource) and codes[2].name == "mem.cu"
    assert "add_u32" in codes[2].data.decode()


def test_lineinfo_and_debug_reach_nvrtc(link_files):
    k = declared_kernel(list(link_files))
    sig = (uint32[::1], uint32, uint32)
    plain = cuda.compile_all(k, sig, device=False, abi="numba", output="ptx")[0][2]
    assert ".loc" not in plain.data.decode()
    lined = cuda.compile_all(k, sig, device=False, abi="numba", output="ptx",
                             lineinfo=True)[0][2]
    assert ".loc" in lined.data.decode() and ".file" in lined.data.decode()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        debug = cuda.compile_all(k, sig, device=False, abi="numba", output="ptx", debug=True,
                                 opt=False)[0][2]
    text = debug.data.decode()
    assert ".section .debug_info" in text or ".section\t.debug_info" in text


def test_fp16_functions_bring_their_shim():
    codes, resty = cuda.compile_all(lambda a, b: cuda.fp16.hadd(a, b), (float16, float16),
                                    output="ptx")
    assert str(resty) == "float16" and len(codes) == 2
    assert codes[1].name == "nbcuda_fp16.cu"
    assert "nbc_fp16___hadd" in codes[1].data.decode()


def test_errors():
    with pytest.raises(NotImplementedError, match="Unsupported output type: cubin"):
        cuda.compile_all(add, (float32, float32), output="cubin")
    with pytest.raises(ValueError, match="Can only designate forced inlining in LTO-IR"):
        cuda.compile_all(add, (float32, float32), output="ptx", forceinline=True)
    bad = cuda.declare_device("nothing_here", "uint32(uint32)",
                              link=[cuda.CUSource("int broken(", name="bad.cu")])
    with pytest.raises(cuda.CompileError, match=r"nvrtcCompileProgram of bad.cu failed"):
        cuda.compile_all(lambda x: bad(x), (uint32,), output="ptx")
    missing = cuda.declare_device("nothing_here", "uint32(uint32)", link=["/nonexistent/x.cu"])
    with pytest.raises(FileNotFoundError, match="/nonexistent/x.cu"):
        cuda.compile_all(lambda x: missing(x), (uint32,), output="ptx")


def test_the_pieces_link_back_into_a_kernel(link_files):
    """What compile_all gives for the files is link code: a kernel linking it runs (on the
    test driver: NVRTC's output is linked by nvJitLink and loaded)."""
    k = declared_kernel(list(link_files))
    codes, _ = cuda.compile_all(k, (uint32[::1], uint32, uint32), device=False, abi="numba",
                                output="ltoir")
    add_u32 = cuda.declare_device("add_u32", "uint32(uint32, uint32)")
    twice = cuda.declare_device("twice_u32", "uint32(uint32)")

    def kernel(z, x, y):
        z[0] = twice(add_u32(x, y))

    linked = cuda.jit("void(uint32[::1], uint32, uint32)", link=codes[1:])(kernel)
    out = cuda.to_device(np.zeros(1, np.uint32))
    linked[1, 1](out, 20, 1)
    if not USING_TESTDRIVER:  # the test driver does not run kernels
        assert out.copy_to_host()[0] == 42
