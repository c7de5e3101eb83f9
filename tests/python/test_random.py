"""nbcuda.random, numba.cuda.random's xoroshiro128+ generators: the states are numba's word
for word (numba-cuda 0.30's init_xoroshiro128p_states_cpu gave the words below) in a uint64
array of shape (n, 2), and the device functions draw numba's numbers; on the GPU every draw
is compared bit for bit with numba-cuda's from the same seed."""
import inspect

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
    assert s.shape == (3, 2) and s.dtype == np.uint64
    assert s.copy_to_host().ravel().tolist() == NUMBA_1234
    s = create_xoroshiro128p_states(2, 0, subsequence_start=2, stream=cuda.stream())
    cuda.synchronize()
    assert s.copy_to_host().ravel().tolist() == NUMBA_0_SUB2
    rnd.init_xoroshiro128p_states(s, 1234)
    assert s.copy_to_host().ravel().tolist() == NUMBA_1234[:4]
    assert create_xoroshiro128p_states(0, 1).shape == (0, 2)


def test_refusals(cuda):
    with pytest.raises(ValueError):
        create_xoroshiro128p_states(-1, 1)
    with pytest.raises(TypeError):
        rnd.init_xoroshiro128p_states(cuda.device_array(4), 1)
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
    ptx, _ = cuda.compile_ptx(draws, "void(float64[:, ::1], uint64[:, ::1])", cc=(9, 0))
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
