"""Kernel resources and occupancy, as numba's dispatcher reports them:
get_regs_per_thread / get_shared_mem_per_block / get_local_mem_per_thread /
get_const_mem_size / get_max_threads_per_block(signature=None), `specialized`, `overloads`,
and on a kernel compiled for one signature numba's _Kernel properties and
max_cooperative_grid_blocks(blockdim, dynsmemsize=0).

On the test driver the values come from its model (tests/testdriver/td_module.c: the PTX's
shared/local declarations and .maxntid, 32 registers, a simple occupancy calculator), so they
are exact; the gpu-marked test compares with numba-cuda on a real device, only where the two
must agree (static shared bytes, launch bounds, the occupancy identity)."""
import inspect
import sys

import numpy as np
import pytest

import nbcuda as cuda
from nbcuda import float32, float64, int32, int64, void

from conftest import USING_TESTDRIVER

N = 10


def simple_smem(ary):
    sm = cuda.shared.array(10, dtype=float64)
    for j in range(10):
        sm[j] = j
    for j in range(10):
        ary[j] = sm[j]


def smem400(ary):
    sm = cuda.shared.array(100, dtype=float32)
    i = cuda.grid(1)
    if i == 0:
        for j in range(100):
            sm[j] = j
    cuda.syncthreads()
    ary[i] = sm[i]


def local_depot(ary, n):
    loc = cuda.local.array(64, dtype=int32)
    for j in range(n):
        loc[j] = j * ary[j]
    ary[0] = loc[n - 1]


def rows_plus_one(M):
    col = cuda.grid(1)
    if col < M.shape[1]:
        for row in range(1, M.shape[0]):
            M[row, col] = M[row - 1, col] + 1


def test_lazy_kernel_gives_a_dict_keyed_by_argument_types():
    k = cuda.jit(simple_smem)
    assert k.specialized is False
    assert k.overloads == {} and k.get_regs_per_thread() == {}
    k[1, 1](np.zeros(N, np.float32))
    k[1, 1](np.zeros(N, np.float64))
    f32, f64 = (float32[::1],), (float64[::1],)
    assert list(k.overloads) == [f32, f64]
    shared = k.get_shared_mem_per_block()
    assert shared == {f32: 80, f64: 80}  # ten float64 either way: static shared is exact
    for name in ("get_regs_per_thread", "get_shared_mem_per_block", "get_local_mem_per_thread",
                 "get_const_mem_size", "get_max_threads_per_block"):
        every = getattr(k, name)()
        assert set(every) == {f32, f64} and all(type(v) is int for v in every.values())
        # numba's signature object, a tuple of argument types, a signature string
        assert getattr(k, name)(void(float32[::1])) == every[f32]
        assert getattr(k, name)(signature=f64) == every[f64]
        assert getattr(k, name)("void(float64[::1])") == every[f64]
    assert all(0 < v <= 1024 for v in k.get_max_threads_per_block().values())
    assert all(v > 0 for v in k.get_regs_per_thread().values())


def test_unknown_signature_is_a_key_error_and_bad_ones_are_refused():
    k = cuda.jit(simple_smem)
    k[1, 1](np.zeros(N, np.float32))
    with pytest.raises(KeyError) as info:
        k.get_regs_per_thread(void(int64[::1]))
    assert info.value.args == ((int64[::1],),)
    with pytest.raises(KeyError):
        k.get_shared_mem_per_block((float32[:],))  # layout A was not compiled
    with pytest.raises(TypeError, match="invalid signature"):
        k.get_regs_per_thread(3.5)
    with pytest.raises(cuda.TypingError, match="invalid signature"):
        k.get_regs_per_thread("void(float32[::1)")
    with pytest.raises(TypeError):
        k.get_regs_per_thread(void(float32[::1]), 1)


def test_specialized_kernel_gives_values_and_kernel_properties():
    k = cuda.jit(void(float32[::1]))(smem400)
    assert k.specialized is True
    assert k.overloads == {(float32[::1],): k}
    assert k.get_shared_mem_per_block() == 400
    assert k.get_shared_mem_per_block(void(float32[::1])) == 400
    assert k.shared_mem_per_block == 400
    assert type(k.get_regs_per_thread()) is int and k.get_regs_per_thread() > 0
    assert k.regs_per_thread == k.get_regs_per_thread()
    assert k.max_threads_per_block == k.get_max_threads_per_block() <= 1024
    assert k.local_mem_per_thread == k.get_local_mem_per_thread() >= 0
    assert k.const_mem_size == k.get_const_mem_size() >= 0
    with pytest.raises(KeyError):
        k.get_regs_per_thread(void(float64[::1]))


def test_signature_list_is_not_specialized():
    k = cuda.jit(["void(float32[::1])", "void(float64[::1])"])(simple_smem)
    assert k.specialized is False
    assert list(k.overloads) == [(float32[::1],), (float64[::1],)]
    assert k.get_shared_mem_per_block() == {(float32[::1],): 80, (float64[::1],): 80}
    assert k.get_shared_mem_per_block((float64[::1],)) == 80
    ov = k.overloads[(float32[::1],)]
    assert ov.specialized and ov.shared_mem_per_block == 80


def test_dispatcher_has_no_kernel_properties():
    k = cuda.jit(simple_smem)
    for name in ("regs_per_thread", "shared_mem_per_block", "max_threads_per_block"):
        assert not hasattr(k, name)
    with pytest.raises(AttributeError, match="overloads\\[argtypes\\].max_cooperative"):
        k.max_cooperative_grid_blocks(32)


def test_launch_bounds_limit_max_threads_per_block():
    k = cuda.jit(void(float32[::1]), launch_bounds=128)(smem400)
    assert k.get_max_threads_per_block() == 128
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    if USING_TESTDRIVER:  # the model refuses more threads than the kernel may be launched with
        assert k.max_cooperative_grid_blocks(256) == 0
    else:  # the real calculator answers anyway (H200: 1056), as it does for numba-cuda
        assert k.max_cooperative_grid_blocks(256) % sms == 0
    assert k.max_cooperative_grid_blocks(128) % sms == 0 and k.max_cooperative_grid_blocks(128) > 0


def test_max_cooperative_grid_blocks_is_occupancy_times_sms():
    k = cuda.jit((int32[:, ::1],))(rows_plus_one)
    ov = k.overloads[(int32[:, ::1],)]
    assert ov is k
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    b1 = ov.max_cooperative_grid_blocks(256)
    assert b1 > 0 and b1 % sms == 0
    assert ov.max_cooperative_grid_blocks((16, 16)) == b1
    assert ov.max_cooperative_grid_blocks((16, 4, 4)) == b1
    assert ov.max_cooperative_grid_blocks(blockdim=256, dynsmemsize=0) == b1
    assert ov.max_cooperative_grid_blocks(256, 16384) <= b1
    assert ov.max_cooperative_grid_blocks(32) >= b1
    for bad in (0, (0, 2), (1, 2, 3, 4), -1):
        with pytest.raises(ValueError):
            ov.max_cooperative_grid_blocks(bad)
    with pytest.raises(TypeError, match="blockdim must be a sequence of integers"):
        ov.max_cooperative_grid_blocks("32")
    with pytest.raises(ValueError):
        ov.max_cooperative_grid_blocks(32, -1)


def test_values_survive_a_context_reset():
    k = cuda.jit(void(float32[::1]))(smem400)
    assert k.get_shared_mem_per_block() == 400
    cuda.close()  # unloads the kernel's module with the context
    assert k.get_shared_mem_per_block() == 400  # loaded again in the new context
    assert k.max_cooperative_grid_blocks(32) > 0


@pytest.mark.skipif(not USING_TESTDRIVER, reason="the test driver's model values")
def test_test_driver_model_values():
    k = cuda.jit(void(float32[::1]))(smem400)
    assert k.regs_per_thread == 32
    assert k.max_threads_per_block == 1024
    assert k.const_mem_size == 0
    # 2048 threads, 32 blocks, 65536 registers, 233472 bytes of shared memory an SM;
    # 400 static + 1024 reserved + dynamic a block; 132 SMs
    assert k.max_cooperative_grid_blocks(32) == 32 * 132
    assert k.max_cooperative_grid_blocks(128) == 16 * 132
    assert k.max_cooperative_grid_blocks(32, 32768) == 233472 // (400 + 1024 + 32768) * 132
    assert k.max_cooperative_grid_blocks(32, 49153) == 0
    loc = cuda.jit(void(int32[::1], int64))(local_depot)
    assert "__local_depot" in "".join(loc.inspect_asm().values())
    assert loc.local_mem_per_thread == 256
    assert loc.shared_mem_per_block == 0


@pytest.mark.gpu
def test_agrees_with_numba_cuda(gpu, tmp_path, monkeypatch):
    """numba-cuda's values for the same kernels on the same device: registers may differ
    (different compilers), static shared memory and the launch bound may not, and both
    cooperative grid sizes are whole multiples of the SM count (equal when the registers are).
    numba's copies of the kernels are this file's, in a module where `cuda` is numba's."""
    ncuda = pytest.importorskip("numba.cuda")
    from numba import float32 as nf32, int32 as ni32, void as nvoid

    source = "from numba import cuda, float32, float64\n\n" + "\n".join(
        inspect.getsource(f) for f in (smem400, simple_smem, rows_plus_one))
    (tmp_path / "numba_resource_kernels.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    import numba_resource_kernels as t
    m = sys.modules[__name__]

    mine = cuda.jit(void(float32[::1]))(m.smem400)
    theirs = ncuda.jit(nvoid(nf32[::1]))(t.smem400)
    assert mine.get_shared_mem_per_block() == theirs.get_shared_mem_per_block() == 400
    assert 0 < mine.get_max_threads_per_block() <= 1024
    assert 0 < theirs.get_max_threads_per_block() <= 1024
    assert mine.get_regs_per_thread() > 0 and theirs.get_regs_per_thread() > 0
    mine_b = cuda.jit(void(float32[::1]), launch_bounds=128)(m.smem400)
    theirs_b = ncuda.jit(nvoid(nf32[::1]), launch_bounds=128)(t.smem400)
    assert mine_b.get_max_threads_per_block() == theirs_b.get_max_threads_per_block() == 128

    lazy = cuda.jit(m.simple_smem)
    nlazy = ncuda.jit(t.simple_smem)
    for dt in (np.float32, np.float64):
        lazy[1, 1](np.zeros(N, dt))
        nlazy[1, 1](np.zeros(N, dt))
    assert sorted(lazy.get_shared_mem_per_block().values()) == \
        sorted(nlazy.get_shared_mem_per_block().values()) == [80, 80]

    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    coop = cuda.jit((int32[:, ::1],))(m.rows_plus_one)
    ncoop = ncuda.jit((ni32[:, ::1],))(t.rows_plus_one)
    mine_blocks = coop.overloads[(int32[:, ::1],)].max_cooperative_grid_blocks(256)
    their_blocks = ncoop.overloads[(ni32[:, ::1],)].max_cooperative_grid_blocks(256)
    assert mine_blocks > 0 and mine_blocks % sms == 0
    assert their_blocks > 0 and their_blocks % sms == 0
    if coop.get_regs_per_thread() == ncoop.get_regs_per_thread():
        assert mine_blocks == their_blocks


def test_max_registers_caps_the_kernels_registers(cuda):
    # numba's jit(max_registers=N): the code is loaded with the register cap (CU_JIT_MAX_REGISTERS
    # / nvJitLink -maxrregcount), for eager, lazy and list-of-signature kernels alike; the test
    # driver reports the cap itself, a GPU at most the cap
    d = cuda.device_array(4, np.float32)
    eager = cuda.jit("void(float32[::1])", max_registers=16)(_store_one)
    eager[1, 1](d)
    lazy = cuda.jit(max_registers=20)(_store_one)
    lazy[1, 1](d)
    listed = cuda.jit(["void(float32[::1])"], max_registers=24)(_store_one)
    listed[1, 1](d)
    capped = [(eager.get_regs_per_thread(), 16),
              (next(iter(lazy.get_regs_per_thread().values())), 20),
              (next(iter(listed.get_regs_per_thread().values())), 24)]
    for regs, cap in capped:
        assert 0 < regs <= cap
        if USING_TESTDRIVER:
            assert regs == cap
    if USING_TESTDRIVER:
        plain = cuda.jit("void(float32[::1])")(_store_one)
        assert plain.get_regs_per_thread() == 32  # the model's uncapped figure
    for bad in (0, -1, 256, "16", 2.5):
        with pytest.raises(ValueError, match="max_registers must be None or an int"):
            cuda.jit(max_registers=bad)


def _store_one(a):
    a[0] = 1


def _add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = i + 1


def test_shared_memory_carveout_is_validated_and_set_on_the_loaded_code(tdrv):
    # numba-cuda 0.30's jit(shared_memory_carveout=...): "MaxL1", "MaxShared", "default" (any
    # case) or -1..100, checked when the decorator is made; the value is set on the code when
    # it is loaded in a context (cuFuncSetAttribute's PREFERRED_SHARED_MEMORY_CARVEOUT)
    for carveout in ("MaxL1", "maxshared", "Default", 0, 50, 100, -1):
        before = tdrv.calls("cuFuncSetAttribute")
        for k in (cuda.jit(shared_memory_carveout=carveout)(_add_one),
                  cuda.jit("void(int32[::1])", shared_memory_carveout=carveout)(_add_one)):
            d = cuda.to_device(np.zeros(10, np.int32))
            k[1, 10](d)
            k[1, 10](d)  # loaded once: set once
        assert tdrv.calls("cuFuncSetAttribute") == before + 2
    plain = cuda.jit("void(int32[::1])")(_add_one)
    before = tdrv.calls("cuFuncSetAttribute")
    plain[1, 10](cuda.to_device(np.zeros(10, np.int32)))
    assert tdrv.calls("cuFuncSetAttribute") == before
    for bad, exc, msg in ((150, ValueError, "must be between -1 and 100"),
                          (-2, ValueError, "must be between -1 and 100"),
                          (101, ValueError, "must be between -1 and 100"),
                          ("InvalidOption", ValueError, "Invalid carveout value: InvalidOption"),
                          (2.5, TypeError, "must be str or int, got float")):
        with pytest.raises(exc, match=msg):
            cuda.jit(shared_memory_carveout=bad)
        with pytest.raises(exc, match=msg):
            cuda.jit("void(int32[::1])", shared_memory_carveout=bad)
    tdrv.fail("cuFuncSetAttribute", 1, 1)  # CUDA_ERROR_INVALID_VALUE
    k = cuda.jit("void(int32[::1])", shared_memory_carveout=25)(_add_one)
    with pytest.raises(cuda.CudaAPIError, match="cuFuncSetAttribute"):
        k[1, 10](cuda.to_device(np.zeros(10, np.int32)))


def test_carveouts_run_the_kernel():
    for carveout in ("MaxL1", "MaxShared", "default", 0, 50, 100, -1):
        k = cuda.jit(shared_memory_carveout=carveout)(_add_one)
        d = cuda.to_device(np.zeros(10, np.int32))
        k[1, 10](d)
        if not USING_TESTDRIVER:  # the test driver runs no kernel code
            np.testing.assert_array_equal(d.copy_to_host(), np.arange(1, 11))


def _reverse_through_dynamic_shared(out):
    sm = cuda.shared.array(0, dtype=float32)
    n = out.size
    for j in range(cuda.threadIdx.x, n, cuda.blockDim.x):
        sm[j] = j
    cuda.syncthreads()
    for j in range(cuda.threadIdx.x, n, cuda.blockDim.x):
        out[j] = sm[n - 1 - j]


def test_dynamic_shared_memory_above_48k_raises_the_kernels_limit():
    # More than the default 48 KiB of dynamic shared memory: the launch raises the kernel's
    # limit (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) itself, up to what the device
    # lets a block opt in to (numba-cuda fails such a launch with CUDA_ERROR_INVALID_VALUE);
    # beyond that the launch fails saying so
    k = cuda.jit("void(float32[::1])")(_reverse_through_dynamic_shared)
    n = 25000  # 100000 bytes
    out = cuda.device_array(n, np.float32)
    k[1, 256, 0, n * 4](out)
    cuda.synchronize()
    if not USING_TESTDRIVER:
        np.testing.assert_array_equal(out.copy_to_host(), np.arange(n, dtype=np.float32)[::-1])
    optin = cuda.get_current_device().MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
    k[1, 256, 0, optin](out)
    cuda.synchronize()
    with pytest.raises(cuda.CudaAPIError,
                       match=rf"more than the {optin} bytes of dynamic shared memory a block of "
                             rf"this kernel may have on this device \(its opt-in maximum of "
                             rf"{optin} bytes per block less the kernel's 0 bytes of static "
                             rf"shared memory\): ask for at most {optin}"):
        k[1, 256, 0, optin + 4](out)
    if USING_TESTDRIVER:  # the test driver models an H100/H200's 227 KiB, not 48 KiB
        assert optin == 232448


class _DefaultIn:
    """numba-cuda's test_retrieve_autoconverted_arrays extension: a host array is copied in
    only (cuda.In) unless the caller wrapped it already."""

    def __init__(self):
        self.seen = []

    def prepare_args(self, ty, val, **kwargs):
        self.seen.append((ty, sorted(kwargs)))
        if isinstance(val, np.ndarray):
            kwargs["retr"].append(lambda: self.seen.append("retrieved"))
            return ty, cuda.In(val)
        return ty, val


def _set_three(arr):
    arr[0] = 3


def test_extensions_prepare_each_argument(tdrv):
    # numba's extensions: k.extensions (or jit(extensions=[...])) objects whose
    # prepare_args(ty, val, stream=, retr=) replaces each argument; retr's callables run after
    # the launch
    ext = _DefaultIn()
    k = cuda.jit(_set_three)
    assert k.extensions == []
    k.extensions.append(ext)
    host = np.zeros(1, np.int64)
    before = tdrv.calls("cuMemcpyDtoH")
    k[1, 1](host)
    assert tdrv.calls("cuMemcpyDtoH") == before  # cuda.In: not copied back
    cuda.jit(_set_three)[1, 1](host)
    assert tdrv.calls("cuMemcpyDtoH") == before + 1  # without it: copied back
    assert ext.seen[0] == (int64[::1], ["retr", "stream"]) and ext.seen[-1] == "retrieved"
    eager = cuda.jit("void(int64[::1])", extensions=[_DefaultIn()])(_set_three)
    assert len(eager.extensions) == 1
    eager[1, 1](host)
    assert eager.extensions[0].seen[0][0] == int64[::1]

    class Bad:
        def prepare_args(self, ty, val, **kwargs):
            return val

    k.extensions = [Bad()]
    with pytest.raises(TypeError, match="prepare_args must return \\(type, value\\)"):
        k[1, 1](host)
    k.extensions = []
    k[1, 1](host)  # none left: the plain launch
