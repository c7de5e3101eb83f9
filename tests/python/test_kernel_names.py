"""The kernel language's names on the nbcuda module (nbcuda.grid, nbcuda.atomic.add, ...):
host-side stubs that raise when called, kernels that use them without the module
(`from nbcuda import grid`, `add = cuda.atomic.add`, numba.cuda's own stubs), and
match_any_sync / match_all_sync / nanosleep against numba-cuda's compile_ptx."""
import os
import re

import pytest

import nbcuda
import nbcuda as cuda
from nbcuda import atomic, grid, laneid, popc, shfl_down_sync, threadIdx
from nbcuda import match_all_sync, match_any_sync, nanosleep

add = cuda.atomic.add
g = cuda.grid
xor = atomic.xor
tx = cuda.threadIdx.x
FULL = 0xFFFFFFFF

os.environ.setdefault("CUDA_HOME", "/usr/local/cuda")
try:  # numba-cuda's own objects, when it is installed
    from numba import cuda as numba_cuda
    from numba.cuda import atomic as nb_atomic
    from numba.cuda import grid as nb_grid
    from numba.cuda import popc as nb_popc
    from numba.cuda import shared as nb_shared
    from numba.cuda import shfl_down_sync as nb_shfl_down_sync
except ImportError:
    numba_cuda = None

needs_numba = pytest.mark.skipif(numba_cuda is None, reason="numba-cuda is not installed")


def insns(ptx, pattern=r"(?:match|nanosleep|shfl|atom|popc|vote)\.[\w.]+"):
    return sorted(set(re.findall(pattern, ptx)))


# ------------------------------------------------------------------ the host side


FUNCTIONS = ["grid", "gridsize", "syncthreads", "syncthreads_count", "syncthreads_and",
             "syncthreads_or", "syncwarp", "threadfence", "threadfence_block",
             "threadfence_system", "shfl_sync", "shfl_up_sync", "shfl_down_sync",
             "shfl_xor_sync", "ballot_sync", "all_sync", "any_sync", "eq_sync",
             "match_any_sync", "match_all_sync", "activemask", "lanemask_lt", "popc", "brev",
             "clz", "ffs", "fma", "cbrt", "selp", "nanosleep"]
ATOMICS = ["add", "sub", "max", "min", "nanmax", "nanmin", "and_", "or_", "xor", "exch", "inc",
           "dec", "cas", "compare_and_swap"]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_function_stubs_raise_on_the_host(name):
    stub = getattr(nbcuda, name)
    assert repr(stub) == f"<intrinsic {name}>"
    assert stub.__name__ == name and stub.__module__ == "nbcuda"
    with pytest.raises(NotImplementedError,
                       match=rf"<intrinsic {name}> cannot be called from host code: "
                             rf"cuda\.{name} is part of the CUDA kernel language"):
        stub(1, 2)


def test_namespaces_and_values():
    assert repr(cuda.threadIdx) == "<threadIdx.{x,y,z}>"
    for ns in ("blockIdx", "blockDim", "gridDim"):
        assert repr(getattr(cuda, ns)) == f"<{ns}.{{x,y,z}}>"
        assert repr(getattr(cuda, ns).z) == f"<{ns}.z>"
    assert repr(cuda.laneid) == "<laneid>" and repr(cuda.warpsize) == "<warpsize>"
    assert repr(cuda.atomic) == "<atomic>" and repr(cuda.shared) == "<shared>"
    assert repr(cuda.local.array) == "<intrinsic local.array>"
    assert repr(cuda.shared.array) == "<intrinsic shared.array>"
    for a in ATOMICS:
        stub = getattr(cuda.atomic, a)
        assert stub.__qualname__ == f"atomic.{a}" and stub.__name__ == a
    assert sorted(dir(cuda.atomic)) == sorted(ATOMICS + ["__doc__", "__module__", "__name__",
                                                         "__qualname__"])
    with pytest.raises(AttributeError):
        cuda.atomic.nope
    with pytest.raises(NotImplementedError, match=r"<laneid> cannot be called from host code"):
        cuda.laneid()
    with pytest.raises(NotImplementedError, match=r"cuda\.atomic\.cas is part of the CUDA"):
        cuda.atomic.cas(None, 0, 1, 2)
    with pytest.raises(TypeError):
        type(cuda.grid)()
    assert "kernel language" in cuda.popc.__doc__


# ------------------------------------------------------------------ kernels using them


def k_bare(out, x):
    i = grid(1)
    v = shfl_down_sync(FULL, x[i], 1)
    atomic.max(out, 0, v)
    add(out, 1, popc(i) + laneid + threadIdx.x)
    xor(out, 2, g(1))
    m, p = match_all_sync(FULL, v)
    nanosleep(10)
    out[3] = m + p + match_any_sync(FULL, i)


def k_cuda(out, x):
    i = cuda.grid(1)
    v = cuda.shfl_down_sync(FULL, x[i], 1)
    cuda.atomic.max(out, 0, v)
    cuda.atomic.add(out, 1, cuda.popc(i) + cuda.laneid + cuda.threadIdx.x)
    cuda.atomic.xor(out, 2, cuda.grid(1))
    m, p = cuda.match_all_sync(FULL, v)
    cuda.nanosleep(10)
    out[3] = m + p + cuda.match_any_sync(FULL, i)


SIG = "void(int64[::1], int64[::1])"


def test_imported_names_compile_as_cuda_members():
    bare, rt = nbcuda.compile_ptx(k_bare, SIG, cc=(9, 0))
    mod, _ = nbcuda.compile_ptx(k_cuda, SIG, cc=(9, 0))
    assert str(rt) == "none"  # numba-cuda reports a kernel's return type so too
    expected = ["atom.global.add.u64", "atom.global.max.s64", "atom.global.xor.b64",
                "match.all.sync.b64", "match.any.sync.b64", "nanosleep.u32", "popc.b64",
                "shfl.sync.down.b32"]
    assert insns(bare) == expected
    assert "%laneid" in bare and "%tid.x" in bare
    # the same code apart from the kernel's name (of the same length: it is mangled in)
    body = lambda ptx: ptx[ptx.index(".entry"):].replace("k_bare", "k_cuda")
    assert body(bare) == body(mod)


def bad_popc(out):
    out[0] = popc(out)


def bad_popc_module(out):
    out[0] = cuda.popc(out)


def bad_atomic(out):
    atomic.nope(out, 0, 1)


def bad_atomic_module(out):
    cuda.atomic.nope(out, 0, 1)


def bad_register(out):
    out[0] = tx


@pytest.mark.parametrize("bare, module", [(bad_popc, bad_popc_module),
                                          (bad_atomic, bad_atomic_module)])
def test_a_stub_used_wrongly_gets_the_cuda_members_diagnostic(bare, module):
    def message(f):
        with pytest.raises(nbcuda.TypingError) as e:
            nbcuda.compile_ptx(f, "void(int64[::1])", cc=(9, 0))
        return re.search(r"error: .*", str(e.value)).group(0)
    assert message(bare) == message(module)
    assert message(bare) in ("error: Invalid use of cuda.popc with parameters "
                             "(array(int64, 1d, C))",
                             "error: unsupported attribute 'cuda.atomic.nope'")


def test_a_register_read_at_module_level_is_refused():
    with pytest.raises(nbcuda.TypingError,
                       match=r"global 'tx' is cuda\.threadIdx\.x read outside a kernel"):
        nbcuda.compile_ptx(bad_register, "void(int64[::1])", cc=(9, 0))


# ------------------------------------------------------------------ numba's own objects


def k_numba_stubs(out, x):
    i = nb_grid(1)
    buf = nb_shared.array(32, numba_cuda.int64)
    buf[i % 32] = nb_shfl_down_sync(FULL, x[i], 1)
    nb_atomic.add(out, 0, nb_popc(buf[0]))


@needs_numba
def test_numba_stubs_compile():
    ptx, _ = nbcuda.compile_ptx(k_numba_stubs, SIG, cc=(9, 0))
    assert insns(ptx) == ["atom.global.add.u64", "popc.b64", "shfl.sync.down.b32"]
    assert ".shared" in ptx


# ------------------------------------------------------------------ match and nanosleep


def m_any(m, v):
    return cuda.match_any_sync(m, v)


def m_all(m, v):
    return cuda.match_all_sync(m, v)


def sleep(n):
    cuda.nanosleep(n)


MATCH_SIGS = ["(uint32, int32)", "(int32, int64)", "(uint32, float32)", "(uint32, float64)",
              "(int64, uint32)", "(uint32, uint64)", "(uint32, float16)", "(float64, bool)",
              "(uint32, int16)"]


def numba_version_of(f):
    """The same function with numba's cuda in place of nbcuda."""
    glb = dict(f.__globals__, cuda=numba_cuda)
    return type(f)(f.__code__, glb, f.__name__)


@needs_numba
@pytest.mark.parametrize("f, sigs", [(m_any, MATCH_SIGS), (m_all, MATCH_SIGS),
                                     (sleep, ["(uint32,)", "(int64,)", "(float64,)",
                                              "(bool,)"])])
def test_match_and_nanosleep_follow_numba(f, sigs):
    pattern = r"(?:match|nanosleep|cvt)\.[\w.]+"
    for sig in sigs:
        ours, rt = nbcuda.compile_ptx(f, sig, device=True, cc=(9, 0))
        try:
            theirs, nrt = numba_cuda.compile_ptx(numba_version_of(f), sig, device=True,
                                                 cc=(9, 0))
        except Exception as e:  # no libNVVM for numba-cuda here
            pytest.skip(f"numba-cuda cannot compile: {e}")
        assert str(rt) == str(nrt), sig
        assert insns(ours, pattern) == insns(theirs, pattern), sig


def test_match_argument_errors():
    with pytest.raises(nbcuda.TypingError,
                       match=r"Invalid use of cuda\.match_any_sync with parameters "
                             r"\(uint32, complex64\)"):
        nbcuda.compile_ptx(m_any, "(uint32, complex64)", device=True, cc=(9, 0))
