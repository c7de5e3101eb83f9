/* test_host_random.c — nbc_xoroshiro128p_init: the generator states numba.cuda.random makes,
 * word for word. The expected words are numba-cuda 0.30's init_xoroshiro128p_states_cpu
 * output for the same seeds (run on the development machine).
 */
#include <stdint.h>

#include "nbcuda.h"
#include "test.h"

TEST(states_are_numbas) {
  uint64_t s[6];
  nbc_xoroshiro128p_init(s, 3, 1234, 0);
  ASSERT_EQ(s[0], 0xbb0cf61b2f181cdbull);
  ASSERT_EQ(s[1], 0xbb0cf61b2f181cdbull);
  ASSERT_EQ(s[2], 0xd2a3e9ab32813711ull);
  ASSERT_EQ(s[3], 0xec7567785faa8254ull);
  ASSERT_EQ(s[4], 0x580b10a019cf4e9full);
  ASSERT_EQ(s[5], 0xc56521374d0ad325ull);
  nbc_xoroshiro128p_init(s, 2, 0, 2); /* the first state jumped twice */
  ASSERT_EQ(s[0], 0x65853d86b6ebe9b4ull);
  ASSERT_EQ(s[1], 0x062a041b9acda8daull);
  ASSERT_EQ(s[2], 0xe8f985721a10a3eeull);
  ASSERT_EQ(s[3], 0x412be3dd3c914961ull);
  nbc_xoroshiro128p_init(s, 1, 9223372036854775807ull, 1);
  ASSERT_EQ(s[0], 0x3375482ef1015cd2ull);
  ASSERT_EQ(s[1], 0xf14eaceb7a96b196ull);
}

TEST(nothing_to_do) {
  nbc_xoroshiro128p_init(NULL, 3, 1, 0); /* no crash */
  uint64_t s[2] = {7, 7};
  nbc_xoroshiro128p_init(s, 0, 1, 0);
  ASSERT_EQ(s[0], 7u);
}

TEST_LIST(X(states_are_numbas) X(nothing_to_do))
TEST_MAIN()
