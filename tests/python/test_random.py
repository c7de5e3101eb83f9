"""nbcuda.random, numba.cuda.random's xoroshiro128+ generators: the states are numba's word
for word (numba-cuda 0.30's init_xoroshiro128p_states_cpu gave the words below) in numba's
array of xoroshiro128p_dtype records, signatures name its type xoroshiro128p_type, and the
device functions draw numba's numbers; on the GPU every draw is compared bit for bit with
numba-cuda's from the same seed. With numba.cuda bound to nbcuda, numba.cuda.random and
numba.cuda.types are nbcuda's submodules."""
import inspect
import re

import numpy as np
import pytest

import nbcuda as cuda
import nbcuda.random as rnd
from nbcuda.random import (create_xoroshiro128p_states, xoroshiro128p_normal_float32,
                           xoroshiro128p_normal_float64, xoroshiro128p_uniform_float32,
                           xoroshiro128p_uniform_float64)

from test_compile import check_ptx

NUMBA_1234 = [0xbb0cf61b2f181cdb, 0xbb0cf61b2f181cdb, 0xd2a3e9ab32813711, 0xec7567785faa8254,
              0x580b10a019cf4e9f, 0xc56521374d0ad325]
NUMBA_0_SUB2 = [0x65853d86b6ebe9b4, 0x062a041b9acda8da, 0xe8f985721a10a3ee, 0x412be3dd3c914961]


def test_states_are_numbas(cuda):
    s = create_xoroshiro128p_states(3, seed=1234)
    assert s.shape == (3,) and s.dtype == rnd.xoroshiro128p_dtype
    assert s.copy_to_host().view(np.uint64).tolist() == NUMBA_1234
    assert s.copy_to_host()["s1"].tolist() == NUMBA_1234[1::2]
    s = create_xoroshiro128p_states(2, 0, subsequence_start=2, stream=cuda.stream())
    cuda.synchronize()
    assert s.copy_to_host().view(np.uint64).tolist() == NUMBA_0_SUB2
    rnd.init_xoroshiro128p_states(s, 1234)
    assert s.copy_to_host().view(np.uint64).tolist() == NUMBA_1234[:4]
    assert create_xoroshiro128p_states(0, 1).shape == (0,)


# numba-cuda 0.30.4's xoroshiro128p_dtype (descr, itemsize, isalignedstruct), str of
# xoroshiro128p_type, and what compile_ptx(draw_one, void(xoroshiro128p_type[::1],
# float32[:]), cc=(9, 0)) gives: the return type and the entry's parameter count
NUMBA_DTYPE = ([("s0", "<u8"), ("s1", "<u8")], 16, True)
NUMBA_TYPE = "Record(s0[type=uint64;offset=0],s1[type=uint64;offset=8];16;True)"
NUMBA_DRAW_ONE = ("none", 14)


def test_the_state_type_is_numbas():
    dt = rnd.xoroshiro128p_dtype
    assert (dt.descr, dt.itemsize, dt.isalignedstruct) == NUMBA_DTYPE
    assert str(rnd.xoroshiro128p_type) == NUMBA_TYPE
    assert "xoroshiro128p_type" in dir(rnd) and "xoroshiro128p_dtype" in dir(rnd)


def draw_one(rng, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = xoroshiro128p_uniform_float32(rng, i)


def _draw_one_answer(compile_ptx, types, state_type, fn):
    ptx, resty = compile_ptx(fn, types.void(state_type[::1], types.float32[:]), cc=(9, 0))
    return str(resty), len(re.findall(r"\.param \.\w+ \w+_param_\d+", ptx))


def test_signatures_name_the_state_type(tmp_path):
    assert _draw_one_answer(cuda.compile_ptx, cuda, rnd.xoroshiro128p_type,
                            draw_one) == NUMBA_DRAW_ONE
    # and such a kernel launches on the states create_xoroshiro128p_states makes
    rng, out = create_xoroshiro128p_states(4, seed=1), cuda.device_array(4, np.float32)
    cuda.jit(cuda.void(rnd.xoroshiro128p_type[::1], cuda.float32[:]))(draw_one).forall(4)(
        rng, out)
    cuda.jit(draw_one).forall(4)(rng, out)


def test_numba_cuda_agrees(tmp_path, monkeypatch):
    ncuda = pytest.importorskip("numba.cuda")
    import types
    import numba.cuda.dispatcher as nd
    from numba.cuda import random as nrandom
    # numba asks the current device's cc when a kernel calls a device function: a cc 9.0
    # device stands in for it
    monkeypatch.setattr(nd, "get_current_device",
                        lambda: types.SimpleNamespace(compute_capability=(9, 0)))
    dt = nrandom.xoroshiro128p_dtype
    assert (dt.descr, dt.itemsize, dt.isalignedstruct) == NUMBA_DTYPE
    assert str(nrandom.xoroshiro128p_type) == NUMBA_TYPE
    (tmp_path / "numba_draw_one.py").write_text(
        "from numba import cuda\nfrom numba.cuda.random import xoroshiro128p_uniform_float32"
        "\n\n" + inspect.getsource(draw_one))
    monkeypatch.syspath_prepend(str(tmp_path))
    import numba_draw_one as t
    import numba
    assert _draw_one_answer(ncuda.compile_ptx, numba, nrandom.xoroshiro128p_type,
                            t.draw_one) == NUMBA_DRAW_ONE


def test_numba_cuda_submodules_when_numba_cuda_is_nbcuda(run_py):
    out = run_py("""
import sys
import nbcuda
sys.modules["numba.cuda"] = nbcuda
from numba.cuda.random import create_xoroshiro128p_states, xoroshiro128p_type
from numba.cuda.types import float32
from numba.cuda import random, void
assert random is nbcuda.random and sys.modules["numba.cuda.random"] is nbcuda.random
assert sys.modules["numba.cuda.types"] is nbcuda.types
print(void(xoroshiro128p_type[::1], float32[:]))
try:
    import numba.cuda.no_such_module
except ModuleNotFoundError as e:
    print(e)
del sys.modules["numba.cuda"]
try:
    from numba.cuda.fp16 import hadd
except ImportError:
    print("unbound")
""")
    lines = out.stdout.splitlines()
    assert lines[0].startswith("(array(Record(s0[type=uint64;offset=0]") and "1d, C" in lines[0]
    assert lines[1] == "No module named 'numba.cuda.no_such_module'"
    assert lines[2] == "unbound"


def test_refusals(cuda):
    with pytest.raises(ValueError):
        create_xoroshiro128p_states(-1, 1)
    with pytest.raises(TypeError):
        rnd.init_xoroshiro128p_states(cuda.device_array(4), 1)
    with pytest.raises(TypeError):  # the (n, 2) uint64 layout is not numba's
        rnd.init_xoroshiro128p_states(cuda.device_array((4, 2), np.uint64), 1)
    with pytest.raises(AttributeError):
        rnd.no_such_function


def test_module_names():
    assert cuda.random is rnd
    names = dir(rnd)
    for n in ("create_xoroshiro128p_states", "init_xoroshiro128p_states",
              "xoroshiro128p_uniform_float32", "xoroshiro128p_normal_float64",
              "xoroshiro128p_next", "xoroshiro128p_jump"):
        assert n in names


def draws(out, rng):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i, 0] = xoroshiro128p_uniform_float32(rng, i)
        out[i, 1] = xoroshiro128p_uniform_float64(rng, i)
        out[i, 2] = xoroshiro128p_normal_float32(rng, i)
        out[i, 3] = xoroshiro128p_normal_float64(rng, i)


def test_kernels_compile_and_ptxas_accepts(tmp_path):
    ptx, _ = cuda.compile_ptx(
        draws, cuda.void(cuda.float64[:, ::1], rnd.xoroshiro128p_type[::1]), cc=(9, 0))
    check_ptx(ptx, tmp_path)


@pytest.mark.gpu
def test_draws_are_numbas(gpu, tmp_path, monkeypatch):
    n = 256
    rng = create_xoroshiro128p_states(n, seed=42)
    out = np.zeros((n, 4))
    cuda.jit(draws).forall(n)(out, rng)
    assert ((out[:, :2] >= 0) & (out[:, :2] < 1)).all()
    assert abs(out[:, 2:].mean()) < 0.2 and 0.8 < out[:, 2:].std() < 1.2

    ncuda = pytest.importorskip("numba.cuda")
    from numba.cuda import random as nrandom
    src = inspect.getsource(draws)
    (tmp_path / "numba_random_kernels.py").write_text(
        "from numba import cuda\nfrom numba.cuda.random import (xoroshiro128p_normal_float32,"
        " xoroshiro128p_normal_float64, xoroshiro128p_uniform_float32,"
        " xoroshiro128p_uniform_float64)\n\n" + src)
    monkeypatch.syspath_prepend(str(tmp_path))
    import numba_random_kernels as t
    theirs = np.zeros((n, 4))
    nrng = nrandom.create_xoroshiro128p_states(n, seed=42)
    ncuda.jit(t.draws).forall(n)(theirs, nrng)
    np.testing.assert_array_equal(out, theirs)
