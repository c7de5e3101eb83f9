/* nvvm_util.h — for compiler tests that run libNVVM: skip (exit 77) with libNVVM's own
 * load error when it cannot be loaded, instead of failing. */
#ifndef NBCUDA_NVVM_UTIL_H
#define NBCUDA_NVVM_UTIL_H

#include "compiler/compiler.h"
#include "test.h"

static inline void require_nvvm(void) {
  if (nbc__nvvm_load() != NBC_OK) SKIP(nbc__nvvm_load_error());
}

#endif /* NBCUDA_NVVM_UTIL_H */
