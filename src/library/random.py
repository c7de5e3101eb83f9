# random.py — numba.cuda.random's device functions (numba-cuda's random.py, xoroshiro128+),
# a library kernel: src/python/random.c runs this file once, on first use of nbcuda.random's
# device functions, in a namespace where `cuda` is the nbcuda module, and the jitted
# functions become the submodule's; a kernel calling them compiles them like its own.
#
# The states array is numba's: a 1-d array of the record dtype xoroshiro128p_dtype,
# [('s0', uint64), ('s1', uint64)] aligned (numba's xoroshiro128p_type). The host makes the
# initial states (nbc_xoroshiro128p_init, src/host/random.c) as numba's
# init_xoroshiro128p_states_cpu does.
import math
from nbcuda import float32, float64, uint32, int64, uint64


@cuda.jit(device=True)
def init_xoroshiro128p_state(states, index, seed):
    index = int64(index)
    seed = uint64(seed)
    z = seed + uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> uint32(30))) * uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> uint32(27))) * uint64(0x94D049BB133111EB)
    z = z ^ (z >> uint32(31))
    states[index]["s0"] = z
    states[index]["s1"] = z


@cuda.jit(device=True)
def rotl(x, k):
    x = uint64(x)
    k = uint32(k)
    return (x << k) | (x >> uint32(64 - k))


@cuda.jit(device=True)
def xoroshiro128p_next(states, index):
    index = int64(index)
    s0 = states[index]["s0"]
    s1 = states[index]["s1"]
    result = s0 + s1
    s1 ^= s0
    states[index]["s0"] = uint64(rotl(s0, uint32(55))) ^ s1 ^ (s1 << uint32(14))
    states[index]["s1"] = uint64(rotl(s1, uint32(36)))
    return result


@cuda.jit(device=True)
def xoroshiro128p_jump(states, index):
    index = int64(index)
    jump0 = uint64(0xBEAC0467EBA5FACB)
    jump1 = uint64(0xD86B048B86AA9922)
    s0 = uint64(0)
    s1 = uint64(0)
    for i in range(2):
        word = jump0 if i == 0 else jump1
        for b in range(64):
            if word & (uint64(1) << uint32(b)):
                s0 ^= states[index]["s0"]
                s1 ^= states[index]["s1"]
            xoroshiro128p_next(states, index)
    states[index]["s0"] = s0
    states[index]["s1"] = s1


@cuda.jit(device=True)
def uint64_to_unit_float64(x):
    x = uint64(x)
    return (x >> uint32(11)) * (float64(1) / (uint64(1) << uint32(53)))


@cuda.jit(device=True)
def uint64_to_unit_float32(x):
    x = uint64(x)
    return float32(uint64_to_unit_float64(x))


@cuda.jit(device=True)
def xoroshiro128p_uniform_float32(states, index):
    index = int64(index)
    return uint64_to_unit_float32(xoroshiro128p_next(states, index))


@cuda.jit(device=True)
def xoroshiro128p_uniform_float64(states, index):
    index = int64(index)
    return uint64_to_unit_float64(xoroshiro128p_next(states, index))


@cuda.jit(device=True)
def xoroshiro128p_normal_float32(states, index):
    index = int64(index)
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    two_pi = float32(2 * math.pi)
    z0 = math.sqrt(-float32(2.0) * math.log(u1)) * math.cos(two_pi * u2)
    return z0


@cuda.jit(device=True)
def xoroshiro128p_normal_float64(states, index):
    index = int64(index)
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    two_pi = float64(2 * math.pi)
    z0 = math.sqrt(-float64(2.0) * math.log(u1)) * math.cos(two_pi * u2)
    return z0
