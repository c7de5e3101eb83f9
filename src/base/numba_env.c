/* numba_env.c — numba-cuda's environment switches read below the Python module, in one place.
 *
 * NUMBA_FORCE_CUDA_CC is read as numba-cuda's config reads it: the text must start with
 * "MAJOR.MINOR" (decimal digits; anything after, such as an arch suffix "a", is ignored, as
 * numba's regex match ignores it). numba-cuda warns and ignores a value it cannot parse; a
 * compilation here fails instead, saying so, because silently compiling for another
 * architecture than the user forced is worse than stopping. */
#include "base/numba_env.h"

#include <stdio.h>
#include <stdlib.h>

static int parse_decimal(const char **ps, int *pv) {
  const char *s = *ps;
  long v = 0;
  if (*s < '0' || *s > '9') return 0;
  for (; *s >= '0' && *s <= '9'; s++) {
    v = v * 10 + (*s - '0');
    if (v > 1000) return 0;
  }
  *pv = (int)v;
  *ps = s;
  return 1;
}

int nbc__numba_forced_cc(int *pmajor, int *pminor, char *why, size_t why_size) {
  const char *env = getenv("NUMBA_FORCE_CUDA_CC");
  if (!env || !*env) return 0;
  const char *s = env;
  int major, minor;
  if (!parse_decimal(&s, &major) || *s++ != '.' || !parse_decimal(&s, &minor) || minor > 9) {
    snprintf(why, why_size,
             "NUMBA_FORCE_CUDA_CC='%.40s' is not a compute capability: it must be given as "
             "\"major.minor\" where major and minor are decimals (e.g. 9.0)",
             env);
    return -1;
  }
  *pmajor = major;
  *pminor = minor;
  return 1;
}
