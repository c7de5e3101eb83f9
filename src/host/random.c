/* random.c — the initial states of numba's xoroshiro128+ generators (numba.cuda.random),
 * computed on the host exactly as numba's init_xoroshiro128p_states_cpu does:
 *
 *   - state 0 is SplitMix64 of the seed, both words the same value;
 *   - it is jumped ahead 2**64 steps subsequence_start times;
 *   - state i is state i-1 jumped ahead 2**64 steps,
 *
 * so generator i draws from its own 2**64-long stretch of one sequence. The kernels' side
 * (drawing numbers) is Python kernel code in the extension (src/python/random.c).
 */
#include "host/host.h"

static uint64_t rotl(uint64_t x, unsigned k) {
  return (x << k) | (x >> (64 - k));
}

/* numba's xoroshiro128p_next: returns s0 + s1 and advances the state. */
static uint64_t next(uint64_t s[2]) {
  uint64_t s0 = s[0], s1 = s[1], result = s0 + s1;
  s1 ^= s0;
  s[0] = rotl(s0, 55) ^ s1 ^ (s1 << 14);
  s[1] = rotl(s1, 36);
  return result;
}

/* numba's xoroshiro128p_jump: 2**64 steps ahead. */
static void jump(uint64_t s[2]) {
  static const uint64_t poly[2] = {0xBEAC0467EBA5FACBull, 0xD86B048B86AA9922ull};
  uint64_t s0 = 0, s1 = 0;
  for (int i = 0; i < 2; i++)
    for (unsigned b = 0; b < 64; b++) {
      if (poly[i] & (1ull << b)) {
        s0 ^= s[0];
        s1 ^= s[1];
      }
      next(s);
    }
  s[0] = s0;
  s[1] = s1;
}

void nbc_xoroshiro128p_init(uint64_t *states, size_t n, uint64_t seed,
                            uint64_t subsequence_start) {
  if (!states || n == 0) return;
  uint64_t z = seed + 0x9E3779B97F4A7C15ull; /* numba's init_xoroshiro128p_state */
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  states[0] = states[1] = z;
  for (uint64_t k = 0; k < subsequence_start; k++)
    jump(states);
  for (size_t i = 1; i < n; i++) {
    states[2 * i] = states[2 * i - 2];
    states[2 * i + 1] = states[2 * i - 1];
    jump(states + 2 * i);
  }
}
