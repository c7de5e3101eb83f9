/* staging_probe.c — is a small synchronous copy between pageable host memory and the device
 * faster through a pinned staging buffer (memcpy + a copy from page-locked memory) than
 * through the driver's own pageable path? Median ns per copy, both ways, several sizes; and
 * what asking the driver whether host memory is page-locked costs (cuPointerGetAttribute,
 * cuMemHostGetFlags), on pageable and on page-locked memory.
 * Build: gcc -O2 bench/staging_probe.c -I$CUDA_HOME/include -lcuda -o staging_probe */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPS 2001

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double samples[REPS];

#define CHECK(call)                                                                            \
  do {                                                                                         \
    CUresult r_ = (call);                                                                      \
    if (r_) {                                                                                  \
      fprintf(stderr, "%s failed: %d\n", #call, r_);                                           \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

/* mode 0 pageable h2d, 1 staged h2d, 2 pageable d2h, 3 staged d2h, 4 pointer attribute,
 * 5 host flags (of host when n is 0, else of pinned) */
static double run(int mode, CUdeviceptr d, char *host, char *pinned, size_t n) {
  for (int i = 0; i < REPS; i++) {
    double t0 = now_ns();
    switch (mode) {
    case 0: CHECK(cuMemcpyHtoD(d, host, n)); break;
    case 1:
      memcpy(pinned, host, n);
      CHECK(cuMemcpyHtoD(d, pinned, n));
      break;
    case 2: CHECK(cuMemcpyDtoH(host, d, n)); break;
    case 3:
      CHECK(cuMemcpyDtoH(pinned, d, n));
      memcpy(host, pinned, n);
      break;
    case 4: {
      unsigned type = 0;
      (void)cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                  (CUdeviceptr)(n ? pinned : host));
      break;
    }
    default: {
      unsigned flags = 0;
      (void)cuMemHostGetFlags(&flags, n ? pinned : host);
      break;
    }
    }
    samples[i] = now_ns() - t0;
  }
  qsort(samples, REPS, sizeof samples[0], cmp);
  return samples[REPS / 2];
}

int main(void) {
  CUdevice dev;
  CUcontext ctx;
  CHECK(cuInit(0));
  CHECK(cuDeviceGet(&dev, 0));
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  size_t sizes[] = {8, 1024, 4096, 16384, 65536, 262144, 1 << 20, 4 << 20};
  size_t max = 4 << 20;
  CUdeviceptr d;
  CHECK(cuMemAlloc(&d, max));
  char *host = malloc(max), *pinned;
  CHECK(cuMemHostAlloc((void **)&pinned, max, CU_MEMHOSTALLOC_PORTABLE));
  memset(host, 1, max);
  printf("| bytes | h2d pageable | h2d staged | d2h pageable | d2h staged |\n"
         "|---:|---:|---:|---:|---:|\n");
  for (int round = 0; round < 2; round++)
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
      size_t n = sizes[i];
      double a = run(0, d, host, pinned, n), b = run(1, d, host, pinned, n);
      double c = run(2, d, host, pinned, n), e = run(3, d, host, pinned, n);
      if (round) printf("| %zu | %.0f | %.0f | %.0f | %.0f |\n", n, a, b, c, e);
    }
  unsigned type = 0, flags = 0;
  CUresult a = cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)host);
  CUresult b = cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                     (CUdeviceptr)(pinned + 100));
  CUresult c = cuMemHostGetFlags(&flags, host), e = cuMemHostGetFlags(&flags, pinned + 100);
  printf("\npointer attribute: pageable %d, page-locked (inside) %d -> type %u; host flags: "
         "pageable %d, page-locked (inside) %d\n", a, b, type, c, e);
  printf("| query | pageable ns | page-locked ns |\n|---|---:|---:|\n");
  printf("| cuPointerGetAttribute(MEMORY_TYPE) | %.0f | %.0f |\n", run(4, d, host, pinned, 0),
         run(4, d, host, pinned, 1));
  printf("| cuMemHostGetFlags | %.0f | %.0f |\n", run(5, d, host, pinned, 0),
         run(5, d, host, pinned, 1));
  return 0;
}
