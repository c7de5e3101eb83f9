/* numba_env.h — numba-cuda's environment switches that more than one layer reads. */
#ifndef NBCUDA_BASE_NUMBA_ENV_H
#define NBCUDA_BASE_NUMBA_ENV_H

#include <stddef.h>

/* NUMBA_FORCE_CUDA_CC: the compute capability every compilation targets instead of the one
 * asked for (numba-cuda's get_arch_option, for libNVVM and NVRTC alike). Returns 1 and sets
 * *pmajor, *pminor when it is set; 0 when unset or empty; -1 when it is not "MAJOR.MINOR"
 * (with a message naming the variable and its value in why). */
int nbc__numba_forced_cc(int *pmajor, int *pminor, char *why, size_t why_size);

#endif
