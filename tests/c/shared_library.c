/* shared_library.c — libnbcuda.so exports the public C API and nothing else: every nbc_
 * function a C program links against resolves, and the nbc__ internals stay hidden. The
 * program links the shared library (not the static one the tests use) and also looks the
 * symbols up with dlsym. Run by ctest (tests/c/shared_library.cmake). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "nbcuda.h"

int main(int argc, char **argv) {
  int failed = 0;
  /* linked calls: resolved by the dynamic linker at start */
  if (strcmp(nbc_status_string(NBC_OK), "") == 0) failed |= 1;
  /* the library that runs is the one this header describes */
  if (nbc_version() != NBC_VERSION || strcmp(nbc_version_string(), NBC_VERSION_STRING) != 0) {
    fprintf(stderr, "library version %d (%s), header %d (%s)\n", nbc_version(),
            nbc_version_string(), NBC_VERSION, NBC_VERSION_STRING);
    failed |= 1;
  }
  int count = -1;
  nbc_status_t st = nbc_device_count(&count);
  printf("nbc_device_count: %s, %d\n", nbc_status_string(st), count);
  if (argc < 2) return failed;
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "dlopen(%s): %s\n", argv[1], dlerror());
    return 1;
  }
  static const char *const exported[] = {"nbc_device_count", "nbc_compile", "nbc_launch_packed",
                                         "nbc_link_cubin", "nbc_fp16_shim_source",
                                         "nbc_stream_create", "nbc_mem_alloc", "nbc_version"};
  static const char *const hidden[] = {"nbc__context_ensure", "nbc__set_error", "nbc__cu",
                                       "nbc__compile_ex"};
  for (size_t i = 0; i < sizeof exported / sizeof exported[0]; i++)
    if (!dlsym(lib, exported[i])) {
      fprintf(stderr, "%s is not exported\n", exported[i]);
      failed = 1;
    }
  for (size_t i = 0; i < sizeof hidden / sizeof hidden[0]; i++)
    if (dlsym(lib, hidden[i])) {
      fprintf(stderr, "internal %s is exported\n", hidden[i]);
      failed = 1;
    }
  printf("%s\n", failed ? "FAILED" : "ok: public API exported, internals hidden");
  return failed;
}
