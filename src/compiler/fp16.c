/* fp16.c — numba.cuda.fp16 in kernels: cuda_fp16.h's scalar functions (hadd, hsqrt, hfma,
 * __half2int_rn, ...), as numba-cuda binds them.
 *
 * numba-cuda calls cuda_fp16.h's own functions through small CUDA C++ wrappers compiled with
 * NVRTC and linked with the kernel, so its results are CUDA's bit for bit. nbcuda does the same:
 * fp16_funcs.h (generated from numba-cuda by tools/gen_fp16.py) lists each exported name with
 * the function it calls and its signature; a call types as that signature (arguments convert
 * to the parameter types, as numba's ConcreteTemplate converts them) and lowers as a call of a
 * declared device function (Numba ABI, infer_call.c's EXTERN path) named nbc_fp16_<function>.
 * nbc_fp16_shim_source() writes every wrapper:
 *
 *   extern "C" __device__ int nbc_fp16___hadd(unsigned short *ret, unsigned short a0,
 *                                             unsigned short a1) {
 *     *ret = __half_as_ushort(__hadd(__ushort_as_half(a0), __ushort_as_half(a1)));
 *     return 0;
 *   }
 *
 * float16 values travel as their IEEE bits (nbcuda keeps a float16 in an i16 everywhere), bool
 * results as one byte. The host side (module.c) compiles the shim once per architecture with
 * NVRTC and links it when nbc_compile_result_uses_fp16 says the code calls a wrapper.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "compiler/fp16_funcs.h"

typedef struct {
  const char *name, *cname;
  char ret;
  const char *codes;
} fp16_func;

#define FP16_ENTRY_(name, cname, ret, codes) {#name, #cname, ret, codes},
static const fp16_func funcs[] = {FP16_FUNCS(FP16_ENTRY_)};
#undef FP16_ENTRY_

static const nbc__type *type_of(char letter) {
  switch (letter) {
  case 'h': return nbc__type_scalar(NBC__T_FLOAT16);
  case 'f': return nbc__type_scalar(NBC__T_FLOAT32);
  case 'd': return nbc__type_scalar(NBC__T_FLOAT64);
  case 'b': return nbc__type_scalar(NBC__T_BOOL);
  case 'a': return nbc__type_scalar(NBC__T_INT8);
  case 'A': return nbc__type_scalar(NBC__T_UINT8);
  case 's': return nbc__type_scalar(NBC__T_INT16);
  case 'S': return nbc__type_scalar(NBC__T_UINT16);
  case 'i': return nbc__type_scalar(NBC__T_INT32);
  case 'I': return nbc__type_scalar(NBC__T_UINT32);
  case 'l': return nbc__type_scalar(NBC__T_INT64);
  default: return nbc__type_scalar(NBC__T_UINT64);
  }
}

/* The C type a wrapper uses for a value of that letter (float16: its bits). */
static const char *c_type(char letter) {
  switch (letter) {
  case 'h': return "unsigned short";
  case 'f': return "float";
  case 'd': return "double";
  case 'b': return "unsigned char";
  case 'a': return "signed char";
  case 'A': return "unsigned char";
  case 's': return "short";
  case 'S': return "unsigned short";
  case 'i': return "int";
  case 'I': return "unsigned int";
  case 'l': return "long long";
  default: return "unsigned long long";
  }
}

bool nbc__fp16_find(nbc__ctx *ctx, const char *name, const nbc__type **pret,
                    const nbc__type *args[4], int *pnargs, const char **psymbol) {
  for (size_t i = 0; name && i < sizeof funcs / sizeof funcs[0]; i++) {
    if (strcmp(funcs[i].name, name) != 0) continue;
    *pret = type_of(funcs[i].ret);
    int n = 0;
    for (const char *c = funcs[i].codes; *c && n < 4; c++)
      args[n++] = type_of(*c);
    *pnargs = n;
    *psymbol = nbc__arena_printf(ctx->arena, "nbc_fp16_%s", funcs[i].cname);
    return *psymbol != NULL;
  }
  return false;
}

/* Appends printf-style text to the malloc'd buffer *pbuf (length *plen, capacity *pcap);
 * false when out of memory. */
static bool append(char **pbuf, size_t *plen, size_t *pcap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static bool append(char **pbuf, size_t *plen, size_t *pcap, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(*pbuf + *plen, *pcap - *plen, fmt, ap);
    va_end(ap);
    if (n < 0) return false;
    if ((size_t)n < *pcap - *plen) {
      *plen += (size_t)n;
      return true;
    }
    size_t cap = *pcap * 2 + (size_t)n;
    char *bigger = realloc(*pbuf, cap);
    if (!bigger) return false;
    *pbuf = bigger;
    *pcap = cap;
  }
}

static char *shim_text;
static pthread_once_t shim_once = PTHREAD_ONCE_INIT;

static void make_shim(void) {
  size_t len = 0, cap = 1 << 16;
  char *buf = malloc(cap);
  bool ok = buf && append(&buf, &len, &cap, "#include <cuda_fp16.h>\n");
  for (size_t i = 0; ok && i < sizeof funcs / sizeof funcs[0]; i++) {
    bool seen = false; /* hadd and __hadd are one function */
    for (size_t j = 0; j < i && !seen; j++) seen = strcmp(funcs[j].cname, funcs[i].cname) == 0;
    if (seen) continue;
    const fp16_func *f = &funcs[i];
    ok = append(&buf, &len, &cap, "extern \"C\" __device__ int nbc_fp16_%s(%s *ret", f->cname,
                c_type(f->ret));
    for (int a = 0; ok && f->codes[a]; a++)
      ok = append(&buf, &len, &cap, ", %s a%d", c_type(f->codes[a]), a);
    const char *wrap = f->ret == 'h'   ? "__half_as_ushort("
                       : f->ret == 'b' ? "(unsigned char)("
                                       : "(";
    ok = ok && append(&buf, &len, &cap, ") {\n  *ret = %s%s(", wrap, f->cname);
    for (int a = 0; ok && f->codes[a]; a++)
      ok = append(&buf, &len, &cap, f->codes[a] == 'h' ? "%s__ushort_as_half(a%d)" : "%sa%d",
                  a ? ", " : "", a);
    ok = ok && append(&buf, &len, &cap, "));\n  return 0;\n}\n");
  }
  if (!ok) {
    free(buf);
    buf = NULL;
  }
  shim_text = buf;
}

const char *nbc_fp16_shim_source(void) {
  pthread_once(&shim_once, make_shim);
  return shim_text;
}
