"""Grid synchronisation, numba's cooperative groups: `g = cuda.cg.this_grid(); g.sync()`.

The compiler calls cudadevrt's cudaCGGetIntrinsicHandle / cudaCGSynchronize as numba-cuda
does; a kernel that does is linked with the toolkit's libcudadevrt.a by nvJitLink and
launched cooperatively (cuLaunchKernelEx with the cooperative attribute). CI checks the code,
the link (nvJitLink runs on the host) and the launch the test driver records; the gpu test
runs kernels whose results are wrong without a grid-wide barrier, and compares them with numpy
and with numba-cuda (in a fresh interpreter, as the other comparisons)."""
import subprocess
import sys

import pytest

np = pytest.importorskip("numpy")
import nbcuda as cuda  # noqa: E402
from nbcuda import int32, void  # noqa: E402


def rotate(a, out, rounds):
    """Each round every element moves one place left, across block boundaries: without a
    grid-wide barrier between the rounds, blocks read values not yet written."""
    g = cuda.cg.this_grid()
    i = cuda.grid(1)
    n = a.size
    for r in range(rounds):
        if i < n:
            out[i] = a[(i + 1) % n]
        g.sync()
        if i < n:
            a[i] = out[i]
        g.sync()


def block_sums(a, partial, total):
    """Per-block sums, then, after the grid barrier, thread 0 of block 0 adds them up."""
    g = cuda.cg.this_grid()
    i = cuda.grid(1)
    if i < a.size:
        cuda.atomic.add(partial, cuda.blockIdx.x, a[i])
    status = g.sync()
    if i == 0:
        s = 0
        for b in range(partial.size):
            s += partial[b]
        total[0] = s + status  # cudaCGSynchronize's status is 0


def plain(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += 1


def test_grid_sync_calls_cudadevrt_like_numba():
    ptx, resty = cuda.compile_ptx(rotate, "void(int32[::1], int32[::1], int64)", cc=(9, 0))
    assert str(resty) == "none"
    assert ".extern .func  (.param .b64 func_retval0) cudaCGGetIntrinsicHandle" in ptx
    assert ".extern .func  (.param .b32 func_retval0) cudaCGSynchronize" in ptx
    assert ptx.count("cudaCGSynchronize,") >= 2  # the loop body's two (unrolled: more)


def test_grid_group_typing():
    with pytest.raises(cuda.TypingError, match=r"GridGroup.sync\(\) takes no arguments"):
        cuda.compile_ptx(lambda: cuda.cg.this_grid().sync(1), "int32()", device=True)
    with pytest.raises(cuda.TypingError, match="this_grid"):
        cuda.compile_ptx(lambda: cuda.cg.this_grid(3), "int32()", device=True)
    # a GridGroup is a value: it can be kept in a variable and passed to device functions
    ptx, resty = cuda.compile_ptx(lambda: cuda.cg.this_grid().sync(), "int32()", device=True)
    assert str(resty) == "int32" and "cudaCGSynchronize" in ptx


def test_cooperative_launch(tdrv):
    k = cuda.jit(void(int32[::1], int32[::1], int32))(rotate)
    a = cuda.to_device(np.arange(1000, dtype=np.int32))
    out = cuda.device_array_like(a)
    k[8, 128](a, out, 3)  # nvJitLink links libcudadevrt.a; the test driver loads the cubin
    info = tdrv.last_launch()
    assert info.cooperative == 1 and tuple(info.grid) == (8, 1, 1)
    p = cuda.jit(plain)
    p[8, 128](a)
    assert tdrv.last_launch().cooperative == 0
    too_many = k.max_cooperative_grid_blocks(128) + 1
    with pytest.raises(cuda.CudaAPIError, match="COOPERATIVE_LAUNCH_TOO_LARGE") as e:
        k[too_many, 128](a, out, 3)
    assert e.value.code == 720 and "cooperative launch of kernel" in str(e.value)


def test_declared_cooperative_function_makes_the_launch_cooperative(tdrv):
    """numba's declare_device(..., use_cooperative=True): code elsewhere needs a cooperative
    launch, though the kernel itself does not synchronise the grid."""
    src = cuda.CUSource('extern "C" __device__ int grid_helper(int *r, int x) '
                        '{ *r = x + 1; return 0; }')
    f = cuda.declare_device("grid_helper", "int32(int32)", link=[src], use_cooperative=True)
    assert f.use_cooperative

    def uses(a):
        a[0] = f(a[0])

    assert "cudaCG" not in cuda.compile_ptx(uses, "void(int32[::1])", cc=(9, 0))[0]
    k = cuda.jit(void(int32[::1]))(uses)
    k[1, 1](cuda.to_device(np.zeros(1, np.int32)))
    assert tdrv.last_launch().cooperative == 1
    g = cuda.declare_device("grid_helper", "int32(int32)", link=[src])

    def plain_use(a):
        a[0] = g(a[0])

    k2 = cuda.jit(void(int32[::1]))(plain_use)
    k2[1, 1](cuda.to_device(np.zeros(1, np.int32)))
    assert tdrv.last_launch().cooperative == 0


def test_cooperative_kernel_sass_links_cudadevrt():
    k = cuda.jit("void(int32[::1], int32[::1], int64)")(rotate)
    try:
        sass = k.inspect_sass("void(int32[::1], int32[::1], int64)")
    except RuntimeError as e:
        if "nvdisasm" in str(e):
            pytest.skip("no nvdisasm")
        raise
    assert k.symbol in sass and "cudaCGSynchronize" in sass  # linked in from cudadevrt


# ---------------------------------------------------------------- on the GPU -------------

NUMBA_SIDE = """
import numpy as np
for old, new in (("row_stack", "vstack"), ("in1d", "isin"), ("trapz", "trapezoid")):
    if not hasattr(np, old) and hasattr(np, new):
        setattr(np, old, getattr(np, new))
import sys
sys.path.insert(0, {here!r})
import test_grid_sync as t
from numba import cuda
t.cuda = cuda  # the kernels' `cuda` is numba's here
rot = cuda.jit("void(int32[::1], int32[::1], int64)")(t.rotate)
sums = cuda.jit(t.block_sums)
a = cuda.to_device(np.arange({n}, dtype=np.int32))
out = cuda.device_array({n}, np.int32)
rot[{blocks}, 256](a, out, {rounds})
partial = cuda.to_device(np.zeros({blocks}, np.int64))
total = cuda.to_device(np.zeros(1, np.int64))
sums[{blocks}, 256](cuda.to_device(np.arange({n}, dtype=np.int64)), partial, total)
np.savez({path!r}, rotated=a.copy_to_host(), total=total.copy_to_host())
"""


@pytest.mark.gpu
def test_grid_sync_on_the_gpu_matches_numpy_and_numba_cuda(gpu, tmp_path):
    import os
    rot = cuda.jit("void(int32[::1], int32[::1], int64)")(rotate)
    sums = cuda.jit(block_sums)
    blocks = min(rot.max_cooperative_grid_blocks(256), 4 * cuda.get_current_device().MULTIPROCESSOR_COUNT)
    assert blocks >= 2
    n, rounds = blocks * 256 - 17, 40
    a = cuda.to_device(np.arange(n, dtype=np.int32))
    out = cuda.device_array(n, np.int32)
    rot[blocks, 256](a, out, rounds)
    mine = a.copy_to_host()
    np.testing.assert_array_equal(mine, np.roll(np.arange(n, dtype=np.int32), -rounds))
    partial = cuda.to_device(np.zeros(blocks, np.int64))
    total = cuda.to_device(np.zeros(1, np.int64))
    sums[blocks, 256](cuda.to_device(np.arange(n, dtype=np.int64)), partial, total)
    assert total.copy_to_host()[0] == n * (n - 1) // 2
    pytest.importorskip("numba")
    path = tmp_path / "numba.npz"
    here = os.path.dirname(os.path.abspath(__file__))
    code = NUMBA_SIDE.format(here=here, n=n, blocks=blocks, rounds=rounds, path=str(path))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, f"numba-cuda side failed:\n{p.stdout}\n{p.stderr}"
    theirs = np.load(path)
    np.testing.assert_array_equal(mine, theirs["rotated"])
    assert theirs["total"][0] == total.copy_to_host()[0]
