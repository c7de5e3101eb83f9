/* fp16.c — numba.cuda.fp16 and numba.cuda.bf16 in kernels: cuda_fp16.h's and cuda_bf16.h's
 * scalar functions (hadd, hsqrt, hfma, __half2int_rn, __float2bfloat16, ...), as numba-cuda
 * binds them (bf16.c has bfloat16's type, operators and conversions).
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

#include "compiler/bf16_funcs.h"
#include "compiler/compiler.h"
#include "compiler/fp16_funcs.h"

typedef struct {
  const char *name, *cname;
  char ret;
  const char *codes;
} half_func;

#define HALF_ENTRY_(name, cname, ret, codes) {#name, #cname, ret, codes},
static const half_func fp16_funcs[] = {FP16_FUNCS(HALF_ENTRY_)};
static const half_func bf16_funcs[] = {BF16_FUNCS(HALF_ENTRY_)};
#undef HALF_ENTRY_

/* The two tables and the prefix of their wrappers' names. */
static const struct {
  const half_func *funcs;
  size_t count;
  const char *prefix;
} tables[] = {{fp16_funcs, sizeof fp16_funcs / sizeof fp16_funcs[0], "nbc_fp16_"},
              {bf16_funcs, sizeof bf16_funcs / sizeof bf16_funcs[0], "nbc_bf16_"}};

static const nbc__type *type_of(char letter) {
  switch (letter) {
  case 'B': return nbc__type_bfloat16();
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

/* The C type a wrapper uses for a value of that letter (float16, bfloat16: their bits). */
static const char *c_type(char letter) {
  switch (letter) {
  case 'h': case 'B': return "unsigned short";
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

/* Function `name` of table t (its exported name, or the C function's): as nbc__fp16_find. */
static bool find(int t, nbc__ctx *ctx, const char *name, const nbc__type **pret,
                 const nbc__type *args[4], int *pnargs, const char **psymbol) {
  for (size_t i = 0; name && i < tables[t].count; i++) {
    const half_func *f = &tables[t].funcs[i];
    if (strcmp(f->name, name) != 0 && (t == 0 || strcmp(f->cname, name) != 0)) continue;
    *pret = type_of(f->ret);
    int n = 0;
    for (const char *c = f->codes; *c && n < 4; c++)
      args[n++] = type_of(*c);
    *pnargs = n;
    *psymbol = nbc__arena_printf(ctx->arena, "%s%s", tables[t].prefix, f->cname);
    return *psymbol != NULL;
  }
  return false;
}

bool nbc__fp16_find(nbc__ctx *ctx, const char *name, const nbc__type **pret,
                    const nbc__type *args[4], int *pnargs, const char **psymbol) {
  return find(0, ctx, name, pret, args, pnargs, psymbol);
}

bool nbc__bf16_find(nbc__ctx *ctx, const char *name, const nbc__type **pret,
                    const nbc__type *args[4], int *pnargs, const char **psymbol) {
  return find(1, ctx, name, pret, args, pnargs, psymbol);
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

/* How a value of that letter reaches the function: a float16's or bfloat16's bits become
 * one. */
static const char *arg_wrap(char letter) {
  return letter == 'h' ? "__ushort_as_half" : letter == 'B' ? "__ushort_as_bfloat16" : "";
}

static void make_shim(void) {
  size_t len = 0, cap = 1 << 17;
  char *buf = malloc(cap);
  bool ok = buf && append(&buf, &len, &cap, "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n");
  for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
    const half_func *funcs = tables[t].funcs;
    /* cuda_bf16.h has bfloat16's arithmetic from compute capability 8.0, as numba-cuda's
     * bfloat16 needs: below it the bf16 wrappers are left out (a kernel calling one does
     * not link) and the fp16 ones serve alone */
    if (t == 1) ok = ok && append(&buf, &len, &cap, "#if !defined(__CUDA_ARCH__) || "
                                                     "__CUDA_ARCH__ >= 800\n");
    for (size_t i = 0; ok && i < tables[t].count; i++) {
      bool seen = false; /* hadd and __hadd are one function */
      for (size_t j = 0; j < i && !seen; j++) seen = strcmp(funcs[j].cname, funcs[i].cname) == 0;
      if (seen) continue;
      const half_func *f = &funcs[i];
      ok = append(&buf, &len, &cap, "extern \"C\" __device__ int %s%s(%s *ret", tables[t].prefix,
                  f->cname, c_type(f->ret));
      for (int a = 0; ok && f->codes[a]; a++)
        ok = append(&buf, &len, &cap, ", %s a%d", c_type(f->codes[a]), a);
      const char *wrap = f->ret == 'h'   ? "__half_as_ushort("
                         : f->ret == 'B' ? "__bfloat16_as_ushort("
                         : f->ret == 'b' ? "(unsigned char)("
                                         : "(";
      ok = ok && append(&buf, &len, &cap, ") {\n  *ret = %s%s(", wrap, f->cname);
      for (int a = 0; ok && f->codes[a]; a++)
        ok = append(&buf, &len, &cap, "%s%s(a%d)", a ? ", " : "", arg_wrap(f->codes[a]), a);
      ok = ok && append(&buf, &len, &cap, "));\n  return 0;\n}\n");
    }
    if (t == 1) ok = ok && append(&buf, &len, &cap, "#endif\n");
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
