"""The library kernels (src/library/*.py, compiled by nbcuda like any kernel) give numpy's
values: the transpose behind DeviceNDArray.T, cuda.reduce's kernel, nbcuda.random's
generators, and the kernels vectorize and guvectorize make from their templates. Each check
here is a value computed on the device, so the tests are marked gpu and run on a real GPU only
(tests/gpu/run.sh python): the software test driver runs no kernel code. None needs numba-cuda
(the tests that compare with numba-cuda live beside each feature's other tests)."""
import numpy as np
import pytest

import nbcuda as cuda_module
from nbcuda.random import (create_xoroshiro128p_states, xoroshiro128p_normal_float64,
                           xoroshiro128p_uniform_float32, xoroshiro128p_uniform_float64)

pytestmark = pytest.mark.gpu

MASK = (1 << 64) - 1

# ------------------------------------------------------------------ transpose ------------

SHAPES = [(1, 1), (1, 33), (33, 1), (31, 33), (32, 32), (64, 96), (100, 7), (3, 1000),
          (257, 129)]
DTYPES = [np.int8, np.uint16, np.float32, np.int64, np.complex128]


@pytest.mark.parametrize("dtype", DTYPES)
def test_transpose_matches_numpy(gpu, cuda, dtype):
    """Shapes on and off the 32 x 32 tile, square and not, of 1- to 16-byte items, from C and
    F order and from strided views."""
    for shape in SHAPES:
        h = (np.arange(shape[0] * shape[1]) % 251 - 120).astype(dtype).reshape(shape)
        np.testing.assert_array_equal(cuda.to_device(h).T.copy_to_host(), h.T)
        f = np.asfortranarray(h)
        np.testing.assert_array_equal(cuda.to_device(f).transpose().copy_to_host(), h.T)
        d = cuda.to_device(h)
        view = d[::2, 1::3]
        if view.size:
            np.testing.assert_array_equal(view.T.copy_to_host(), h[::2, 1::3].T)


def test_transpose_taller_than_the_grid(gpu, cuda):
    """More row tiles than a grid is high (65535 blocks of 32 rows): the kernel loops."""
    h = (np.arange(2_100_000 * 3) % 30_000).astype(np.int16).reshape(2_100_000, 3)
    np.testing.assert_array_equal(cuda.to_device(h).T.copy_to_host(), h.T)


# ------------------------------------------------------------------ reduce ---------------

@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64])
def test_reduce_matches_numpy(gpu, cuda, dtype):
    mul_mod = cuda.reduce(lambda a, b: (a * b) % 1000003)
    smallest = cuda.reduce(lambda a, b: min(a, b))
    rng = np.random.default_rng(3)
    for n in (1, 31, 128, 129, 4097, 70_001):
        x = rng.integers(1, 50, n).astype(dtype)
        expect = 1
        for v in x.astype(np.int64):
            expect = (expect * int(v)) % 1000003
        assert mul_mod(x, init=1) == expect
        assert smallest(cuda.to_device(x - 25), init=100) == min(x.min() - 25, 100)


# ------------------------------------------------------------------ random ---------------

def _next(s):
    s0, s1 = s
    result = (s0 + s1) & MASK
    s1 ^= s0
    rotl = lambda x, k: ((x << k) | (x >> (64 - k))) & MASK  # noqa: E731
    s[0] = rotl(s0, 55) ^ s1 ^ ((s1 << 14) & MASK)
    s[1] = rotl(s1, 36)
    return result


def _jump(s):
    t = [0, 0]
    for word in (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922):
        for b in range(64):
            if word >> b & 1:
                t[0] ^= s[0]
                t[1] ^= s[1]
            _next(s)
    s[:] = t


def _states(n, seed):
    """numba's init_xoroshiro128p_states_cpu, in Python integers."""
    z = (seed + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    s = [z ^ (z >> 31)] * 2
    out = []
    for _ in range(n):
        out.append(list(s))
        _jump(s)
    return out


def draw(rng, out):
    i = cuda_module.grid(1)
    if i < out.shape[0]:
        for k in range(out.shape[1] // 3):
            out[i, 3 * k] = xoroshiro128p_uniform_float64(rng, i)
            out[i, 3 * k + 1] = xoroshiro128p_uniform_float32(rng, i)
            out[i, 3 * k + 2] = xoroshiro128p_normal_float64(rng, i)


def test_random_matches_a_numpy_reference(gpu, cuda):
    """The states and the draws of numba's xoroshiro128+ (uniform ones bit for bit), against
    the algorithm written here in Python integers and numpy."""
    n, rounds = 70, 4
    rng = create_xoroshiro128p_states(n, seed=12345)
    ref = _states(n, 12345)
    np.testing.assert_array_equal(rng.copy_to_host().view(np.uint64).reshape(n, 2),
                                  np.array(ref, dtype=np.uint64))
    out = np.zeros((n, 3 * rounds))
    cuda.jit(draw).forall(n)(rng, out)
    expect = np.zeros_like(out)
    unit = lambda x: (x >> 11) * (1.0 / (1 << 53))  # noqa: E731
    for i, s in enumerate(ref):
        for k in range(rounds):
            expect[i, 3 * k] = unit(_next(s))
            expect[i, 3 * k + 1] = np.float32(unit(_next(s)))
            u1, u2 = np.float32(unit(_next(s))), np.float32(unit(_next(s)))
            # numba types math.log of a float32 as float32, the rest in float64
            expect[i, 3 * k + 2] = np.sqrt(-2.0 * np.float64(np.log(u1))) * np.cos(
                2 * np.pi * np.float64(u2))
    np.testing.assert_array_equal(out[:, 0::3], expect[:, 0::3])
    np.testing.assert_array_equal(out[:, 1::3], expect[:, 1::3])
    np.testing.assert_allclose(out[:, 2::3], expect[:, 2::3], rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------------ vectorize ------------

def poly(x, y):
    return x * x - 3 * y + 1


def test_vectorize_matches_numpy(gpu, cuda):
    f = cuda.vectorize(["float32(float32, float32)", "int64(int64, int64)",
                        "float64(float64, float64)"])(poly)
    rng = np.random.default_rng(1)
    for n in (1, 255, 1000, 100_003):
        for dt in (np.float32, np.int64, np.float64):
            x, y = (rng.random(n) * 20 - 10).astype(dt), (rng.random(n) * 20).astype(dt)
            got = f(x, y)
            assert got.dtype == dt
            np.testing.assert_allclose(got, poly(x, y), rtol=1e-6, atol=1e-4)


# ------------------------------------------------------------------ guvectorize ----------

def test_guvectorize_matches_numpy(gpu, cuda):
    @cuda.guvectorize(["void(float64[:, :], float64[:, :], float64[:, :])",
                       "void(int32[:, :], int32[:, :], int32[:, :])"],
                      "(m,n),(n,p)->(m,p)")
    def matmul(a, b, c):
        for i in range(c.shape[0]):
            for j in range(c.shape[1]):
                t = 0
                for k in range(a.shape[1]):
                    t += a[i, k] * b[k, j]
                c[i, j] = t

    @cuda.guvectorize(["void(int64[:], int64[:], int64[:])"], "(n),(n)->()")
    def dot(a, b, out):
        t = 0
        for i in range(a.shape[0]):
            t += a[i] * b[i]
        out[0] = t

    rng = np.random.default_rng(2)
    for batch in (1, 7, 300):
        a, b = rng.random((batch, 5, 3)), rng.random((batch, 3, 4))
        np.testing.assert_allclose(matmul(a, b), np.matmul(a, b), rtol=1e-12)
        ai, bi = (a * 10).astype(np.int32), (b * 10).astype(np.int32)
        np.testing.assert_array_equal(matmul(ai, bi), np.matmul(ai, bi))
        x, y = rng.integers(-99, 99, (batch, 9)), rng.integers(-99, 99, (batch, 9))
        np.testing.assert_array_equal(dot(x, y), (x * y).sum(axis=-1))
