/* signature_api.c — the public signature API (nbc_signature_*): parses a numba signature
 * with the compiler's own parser and describes how each argument is passed to a kernel, so
 * that a binding (the Python module, a C++ wrapper) can pack launch parameters without
 * knowing the Numba ABI.
 *
 * How it works: nbc_signature_parse runs nbc__signature_parse (signature.c) in an arena that the
 * signature then owns, and lays the flattened parameters out once, at the natural alignment
 * of each part, which is how cuLaunchKernel's CU_LAUNCH_PARAM_BUFFER_POINTER expects them.
 * An array becomes meminfo, parent (both NULL at launch, as numba passes them), nitems,
 * itemsize, data, shape[ndim], strides[ndim]: 5 + 2 * ndim eight-byte words. Packing is then
 * a few stores at known offsets, cheap enough for the launch hot path (the Python module's
 * goal is a launch in under 4.5 microseconds). Conversions of scalars follow numba's: an
 * integer wraps to the parameter's width, a float is rounded to float32/float16, bool is
 * one byte. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "driver/driver_api.h"
#include "nbcuda.h"

struct nbc_signature {
  nbc__arena *arena;
  int nargs;
  nbc_param_info_t *params;
  const char *ret;  /* numba's name of the declared return type, or NULL */
  const char *text; /* canonical text */
  const nbc__type **args; /* the parsed argument types (in the arena) */
  size_t size;      /* bytes of the packed buffer */
  bool packable;    /* false when any parameter is NBC_PARAM_OTHER (offsets unknown) */
};

/* Records a failure of this API in the per-thread error and returns status. */
static nbc_status_t sig_fail(nbc_status_t status, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return nbc__error_set(status, "%s", msg);
}

/* numpy's kind letter of a scalar type. */
static char scalar_kind(const nbc__type *t) {
  if (t->kind == NBC__T_BOOL) return 'b';
  if (nbc__type_is_int(t)) return nbc__type_is_signed(t) ? 'i' : 'u';
  if (nbc__type_is_float(t)) return 'f';
  if (nbc__type_is_complex(t)) return 'c';
  if (t->kind == NBC__T_DATETIME) return 'M';
  if (t->kind == NBC__T_TIMEDELTA) return 'm';
  return 0;
}

/* A number, or a datetime64 / timedelta64 (an int64 count, passed and stored as one). */
static bool is_scalar(const nbc__type *t) {
  return (t->kind >= NBC__T_BOOL && t->kind <= NBC__T_COMPLEX128) || nbc__type_is_datetime(t);
}

/* Appends the type in signature syntax: "float32", "float32[:, ::1]", "UniTuple(...)". */
static void print_sig_type(nbc__buf *b, nbc__ctx *ctx, const nbc__type *t) {
  if (t->kind != NBC__T_ARRAY || t->ndim == 0) { /* 0-d: numba's printed array(T, 0d, C) */
    nbc__buf_puts(b, nbc__type_name(ctx, t));
    return;
  }
  nbc__buf_puts(b, nbc__type_name(ctx, t->dtype));
  nbc__buf_puts(b, "[");
  for (int d = 0; d < t->ndim; d++) {
    bool unit = (t->layout == 'C' && d == t->ndim - 1) || (t->layout == 'F' && d == 0);
    nbc__buf_puts(b, d ? ", " : "");
    nbc__buf_puts(b, unit ? "::1" : ":");
  }
  nbc__buf_puts(b, "]");
}

/* Fills one parameter's description and advances *poffset past it. */
static void describe_param(nbc__ctx *ctx, const nbc__type *t, nbc_param_info_t *p,
                           size_t *poffset, bool *ppackable) {
  if (t->kind == NBC__T_ENUM && t->dtype->kind == NBC__T_TUPLE) {
    /* a member whose value is a tuple is passed as that tuple, named as the member's type */
    describe_param(ctx, t->dtype, p, poffset, ppackable);
    p->type_name = nbc__type_name(ctx, t);
    return;
  }
  size_t align = 8;
  p->type_name = nbc__type_name(ctx, t);
  p->dtype_name = "";
  if (is_scalar(t) || (t->kind == NBC__T_ENUM && is_scalar(t->dtype))) {
    /* an Enum member (numba's EnumMember) is passed as its value */
    const nbc__type *v = t->kind == NBC__T_ENUM ? t->dtype : t;
    p->kind = NBC_PARAM_SCALAR;
    p->dtype_name = nbc__type_name(ctx, v);
    p->dtype_kind = scalar_kind(v);
    p->itemsize = (int)nbc__type_size(v);
    p->size = (size_t)p->itemsize;
    align = p->dtype_kind == 'c' ? (size_t)p->itemsize / 2 : (size_t)p->itemsize;
  } else if (t->kind == NBC__T_POINTER && is_scalar(t->dtype)) {
    p->kind = NBC_PARAM_POINTER;
    p->dtype_name = nbc__type_name(ctx, t->dtype);
    p->dtype_kind = scalar_kind(t->dtype);
    p->itemsize = (int)nbc__type_size(t->dtype);
    p->size = 8;
  } else if (t->kind == NBC__T_RECORD) {
    p->kind = NBC_PARAM_RECORD;
    p->dtype_name = p->type_name;
    p->dtype_kind = 'V';
    p->itemsize = (int)t->size;
    p->size = 8;
  } else if (t->kind == NBC__T_ARRAY && (is_scalar(t->dtype) || t->dtype->kind == NBC__T_RECORD ||
                                         nbc__type_is_charseq(t->dtype) ||
                                         nbc__type_is_bf16(t->dtype))) {
    bool record = t->dtype->kind == NBC__T_RECORD;
    p->kind = NBC_PARAM_ARRAY;
    p->dtype_name = nbc__type_name(ctx, t->dtype);
    p->dtype_kind = record || nbc__type_is_bf16(t->dtype) ? 'V' /* ml_dtypes' bfloat16: V2 */
                    : t->dtype->kind == NBC__T_CHARSEQ    ? 'S'
                    : t->dtype->kind == NBC__T_UNICHARSEQ ? 'U'
                                                          : scalar_kind(t->dtype);
    p->itemsize = record ? (int)t->dtype->size : (int)nbc__type_size(t->dtype);
    p->ndim = t->ndim;
    p->layout = t->layout;
    p->readonly = t->readonly;
    p->unaligned = record && !t->dtype->aligned;
    p->size = 8 * (size_t)(5 + 2 * t->ndim);
  } else if (t->kind == NBC__T_NONE) { /* nothing passed */
    p->kind = NBC_PARAM_NONE;
    p->size = 0;
    align = 1;
  } else if (t->kind == NBC__T_TUPLE) {
    /* each item in turn, at its own alignment, as the kernel's flattened parameters (an
     * empty tuple has none, as numba passes nothing for it) */
    size_t n = (size_t)(t->count ? t->count : 1);
    nbc_param_info_t *items = nbc__arena_alloc(ctx->arena, sizeof *items * n);
    if (!items) {
      *ppackable = false;
      return;
    }
    memset(items, 0, sizeof *items * n);
    p->kind = NBC_PARAM_TUPLE;
    p->nitems = t->count;
    p->items = items;
    for (int i = 0; i < t->count; i++) {
      bool ok = true;
      describe_param(ctx, t->items[i], &items[i], poffset, &ok);
      if (!ok || (items[i].kind != NBC_PARAM_SCALAR && items[i].kind != NBC_PARAM_TUPLE &&
                  items[i].kind != NBC_PARAM_ARRAY)) {
        p->kind = NBC_PARAM_OTHER;
        *ppackable = false;
      }
    }
    p->offset = t->count ? items[0].offset : *poffset;
    p->size = *poffset - p->offset;
    return;
  } else {
    p->kind = NBC_PARAM_OTHER;
    *ppackable = false;
    p->size = 0;
  }
  if (align == 0) align = 1;
  *poffset = (*poffset + align - 1) / align * align;
  p->offset = *poffset;
  *poffset += p->size;
}

static nbc_status_t parse(const char *text, const nbc__sig_mode *mode, nbc_signature_t **psig) {
  if (!psig) return sig_fail(NBC_INVALID_ARGUMENT, "nbc_signature_parse: psig is NULL");
  *psig = NULL;
  if (!text) return sig_fail(NBC_INVALID_ARGUMENT, "nbc_signature_parse: text is NULL");
  nbc__arena *arena = nbc__arena_create();
  nbc_signature_t *sig = arena ? nbc__arena_alloc(arena, sizeof *sig) : NULL;
  if (!sig) {
    nbc__arena_destroy(arena);
    return sig_fail(NBC_NO_MEMORY, "nbc_signature_parse: out of host memory");
  }
  nbc__ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.arena = arena;
  nbc__buf_init(&ctx.diag, arena);
  ctx.status = NBC_OK;
  nbc__signature parsed;
  if (!nbc__signature_parse_mode(&ctx, text, mode, &parsed)) {
    nbc_status_t st = ctx.status != NBC_OK ? ctx.status : NBC_SIGNATURE_ERROR;
    nbc_status_t rc = sig_fail(st, "%s", ctx.diag.data && ctx.diag.len ? ctx.diag.data
                                                                       : "invalid signature");
    nbc__arena_destroy(arena);
    return rc;
  }
  sig->arena = arena;
  sig->nargs = parsed.nargs;
  sig->args = parsed.args;
  sig->packable = true;
  sig->params = nbc__arena_alloc(arena, sizeof *sig->params * (size_t)(parsed.nargs + 1));
  nbc__buf text_buf;
  nbc__buf_init(&text_buf, arena);
  if (parsed.ret) {
    sig->ret = nbc__type_name(&ctx, parsed.ret);
    print_sig_type(&text_buf, &ctx, parsed.ret);
  }
  nbc__buf_puts(&text_buf, "(");
  size_t offset = 0;
  for (int i = 0; sig->params && i < parsed.nargs; i++) {
    describe_param(&ctx, parsed.args[i], &sig->params[i], &offset, &sig->packable);
    nbc__buf_puts(&text_buf, i ? ", " : "");
    print_sig_type(&text_buf, &ctx, parsed.args[i]);
  }
  nbc__buf_puts(&text_buf, parsed.nargs == 1 && !parsed.ret ? ",)" : ")");
  sig->text = text_buf.data;
  /* Exactly where the last parameter ends: cuLaunchKernel refuses a buffer of another size
   * than the kernel's parameters (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES on the H200 when a
   * trailing float32 was padded to 8 bytes). */
  sig->size = offset;
  if (!sig->params || text_buf.oom || !sig->text) {
    nbc__arena_destroy(arena);
    return sig_fail(NBC_NO_MEMORY, "nbc_signature_parse: out of host memory");
  }
  *psig = sig;
  return NBC_OK;
}

nbc_status_t nbc_signature_parse(const char *text, nbc_signature_t **psig) {
  return parse(text, NULL, psig);
}

nbc_status_t nbc_signature_parse_args(const char *text, const char *const *names, int nnames,
                                      int kernel, nbc_signature_t **psig) {
  if (nnames < 0 || (nnames && !names))
    return sig_fail(NBC_INVALID_ARGUMENT, "nbc_signature_parse_args: %d names at %p", nnames,
                    (const void *)names);
  nbc__sig_mode mode = {.kernel = kernel != 0, .names = names, .nnames = nnames};
  return parse(text, &mode, psig);
}

void nbc_signature_destroy(nbc_signature_t *sig) {
  if (sig) nbc__arena_destroy(sig->arena);
}

int nbc_signature_nargs(const nbc_signature_t *sig) { return sig ? sig->nargs : 0; }

int nbc_signature_best_match(const nbc_signature_t *actual,
                             const nbc_signature_t *const *candidates, int ncandidates) {
  return nbc_signature_best_matches(actual, candidates, ncandidates, NULL);
}

int nbc_signature_best_matches(const nbc_signature_t *actual,
                               const nbc_signature_t *const *candidates, int ncandidates,
                               int *psecond) {
  if (psecond) *psecond = -1;
  if (!actual || !candidates) return -1;
  int best = -1, second = -1, best_rate[3] = {0, 0, 0};
  for (int i = 0; i < ncandidates; i++) {
    const nbc_signature_t *c = candidates[i];
    int rate[3];
    if (!c || c->nargs != actual->nargs ||
        !nbc__type_rate(actual->args, c->args, c->nargs, true, rate))
      continue;
    if (best < 0 || nbc__type_rate_less(rate, best_rate)) {
      best = i;
      second = -1;
      memcpy(best_rate, rate, sizeof rate);
    } else if (second < 0 && !nbc__type_rate_less(best_rate, rate)) {
      second = i; /* as good as the best so far */
    }
  }
  if (psecond) *psecond = second;
  return best;
}

const char *nbc_signature_return_type(const nbc_signature_t *sig) {
  return sig ? sig->ret : NULL;
}

const char *nbc_signature_text(const nbc_signature_t *sig) { return sig ? sig->text : ""; }

nbc_status_t nbc_kernel_check_return_type(const char *return_type) {
  if (!return_type || strcmp(return_type, "void") == 0 || strcmp(return_type, "none") == 0)
    return NBC_OK;
  return nbc__set_error_kind(NBC_TYPING_ERROR, NBC_ERROR_KIND_KERNEL_RETURN, "%s",
                             NBC__KERNEL_RETURN_RULE);
}

const nbc_param_info_t *nbc_signature_param(const nbc_signature_t *sig, int index) {
  if (!sig || index < 0 || index >= sig->nargs) return NULL;
  return &sig->params[index];
}

size_t nbc_signature_params_size(const nbc_signature_t *sig) { return sig ? sig->size : 0; }

/* The parameter `index` when it is packable as `kind`, else NULL with the error set. */
static const nbc_param_info_t *packable_param(const nbc_signature_t *sig, int index,
                                              void *params, nbc_param_kind_t kind,
                                              nbc_status_t *pst) {
  const nbc_param_info_t *p = nbc_signature_param(sig, index);
  if (!p || !params) {
    *pst = sig_fail(NBC_INVALID_ARGUMENT, "argument %d: no such parameter", index + 1);
    return NULL;
  }
  if (!sig->packable) {
    *pst = sig_fail(NBC_INVALID_ARGUMENT,
                    "signature %s has parameters that cannot be passed from the host",
                    sig->text);
    return NULL;
  }
  if (p->kind != kind) {
    *pst = sig_fail(NBC_INVALID_ARGUMENT, "argument %d: expected %s, got %s", index + 1,
                    p->type_name, kind == NBC_PARAM_ARRAY     ? "an array"
                                  : kind == NBC_PARAM_RECORD  ? "a record"
                                  : kind == NBC_PARAM_TUPLE   ? "a tuple"
                                  : kind == NBC_PARAM_POINTER ? "a pointer"
                                                              : "a scalar");
    return NULL;
  }
  return p;
}

/* Whether strides describe the dense layout ('C' or 'F') of shape; axes of length 1 may
 * have any stride, as in numpy's contiguity flags. */
int nbc_array_is_contiguous(char order, int ndim, const int64_t *shape,
                            const int64_t *strides, int64_t itemsize) {
  for (int d = 0; d < ndim; d++)
    if (shape[d] == 0) return 1; /* an empty array is both, whatever its strides (numpy) */
  int64_t expect = itemsize;
  for (int k = 0; k < ndim; k++) {
    int d = order == 'C' ? ndim - 1 - k : k;
    if (shape[d] != 1 && strides[d] != expect) return 0;
    expect *= shape[d];
  }
  return 1;
}

/* Stores one eight-byte word of a packed parameter (the buffer need not be aligned). */
static inline void put_word(char *dst, int index, int64_t value) {
  memcpy(dst + 8 * index, &value, 8);
}

/* "argument N: " for a parameter's errors (argno its 1-based index), "" for a tuple's item;
 * made only when an error is reported. */
static const char *arg_prefix(char buf[32], int argno) {
  if (!argno) return "";
  snprintf(buf, 32, "argument %d: ", argno);
  return buf;
}

/* The error pack_array reports for an array it refuses (the checks again, in order, to say
 * which failed; off the hot path). */
static nbc_status_t array_refused(const nbc_param_info_t *p, int argno, char dtype_kind,
                                  int itemsize, int ndim, const int64_t *shape) {
  char w[32];
  int same_integers = (dtype_kind == 'i' || dtype_kind == 'u') &&
                      (p->dtype_kind == 'i' || p->dtype_kind == 'u');
  if ((dtype_kind != p->dtype_kind && !same_integers) || itemsize != p->itemsize)
    return sig_fail(NBC_INVALID_ARGUMENT, "%sexpected %s, got an array of %c%d elements",
                    arg_prefix(w, argno), p->type_name, dtype_kind ? dtype_kind : '?',
                    itemsize * 8);
  if (ndim != p->ndim)
    return sig_fail(NBC_INVALID_ARGUMENT, "%sexpected %s, got a %dd array",
                    arg_prefix(w, argno), p->type_name, ndim);
  if (ndim > 0 && !shape)
    return sig_fail(NBC_INVALID_ARGUMENT, "%sshape is NULL", arg_prefix(w, argno));
  for (int d = 0; d < ndim; d++)
    if (shape[d] < 0)
      return sig_fail(NBC_INVALID_ARGUMENT, "%snegative extent", arg_prefix(w, argno));
  return sig_fail(NBC_INVALID_ARGUMENT, "%sexpected %s, got a non-%s-contiguous array",
                  arg_prefix(w, argno), p->type_name, p->layout == 'C' ? "C" : "F");
}

/* Writes an array described by p (an ARRAY parameter, argno its 1-based index, or an array
 * item of a TUPLE one, argno 0). Validates everything before the first store, so a refused
 * argument leaves the buffer as it was (array_refused says why); the words are then stored
 * in place (this runs once per array argument per launch). */
static nbc_status_t pack_array(const nbc_param_info_t *p, void *params, int argno,
                               nbc_devptr_t data, char dtype_kind, int itemsize, int ndim,
                               const int64_t *shape, const int64_t *strides) {
  /* int32 data for uint32[:] (or the reverse) is the same bits, read as the signature says */
  if (__builtin_expect(dtype_kind != p->dtype_kind, 0) &&
      !((dtype_kind == 'i' || dtype_kind == 'u') && (p->dtype_kind == 'i' || p->dtype_kind == 'u')))
    goto refused;
  if (itemsize != p->itemsize || ndim != p->ndim || (ndim > 0 && !shape)) goto refused;
  int64_t nitems = 1;
  int negative = 0;
  for (int d = 0; d < ndim; d++) {
    negative |= shape[d] < 0;
    nitems *= shape[d];
  }
  /* Without strides the dense strides below are in the layout's own order, contiguous by
   * construction ('A' arrays without strides are C order). */
  if (negative || (strides && (p->layout == 'C' || p->layout == 'F') &&
                   !nbc_array_is_contiguous(p->layout, ndim, shape, strides, itemsize)))
    goto refused;
  char *dst = (char *)params + p->offset;
  put_word(dst, 0, 0); /* meminfo */
  put_word(dst, 1, 0); /* parent */
  put_word(dst, 2, nitems);
  put_word(dst, 3, itemsize);
  put_word(dst, 4, (int64_t)data);
  for (int d = 0; d < ndim; d++) put_word(dst, 5 + d, shape[d]);
  if (strides) {
    for (int d = 0; d < ndim; d++) put_word(dst, 5 + ndim + d, strides[d]);
  } else {
    int64_t s = itemsize;
    for (int k = 0; k < ndim; k++) {
      int d = p->layout == 'F' ? k : ndim - 1 - k;
      put_word(dst, 5 + ndim + d, s);
      s *= shape[d];
    }
  }
  return NBC_OK;
refused:
  return array_refused(p, argno, dtype_kind, itemsize, ndim, shape);
}

nbc_status_t nbc_signature_pack_array(const nbc_signature_t *sig, int index, void *params,
                                      nbc_devptr_t data, char dtype_kind, int itemsize,
                                      int ndim, const int64_t *shape, const int64_t *strides) {
  if (__builtin_expect(sig && params && index >= 0 && index < sig->nargs && sig->packable &&
                           sig->params[index].kind == NBC_PARAM_ARRAY,
                       1))
    return pack_array(&sig->params[index], params, index + 1, data, dtype_kind, itemsize, ndim,
                      shape, strides);
  nbc_status_t st = NBC_OK;
  packable_param(sig, index, params, NBC_PARAM_ARRAY, &st); /* says what is wrong */
  return st;
}

nbc_status_t nbc_param_pack_array(const nbc_param_info_t *p, void *params, nbc_devptr_t data,
                                  char dtype_kind, int itemsize, int ndim,
                                  const int64_t *shape, const int64_t *strides) {
  if (!p || !params || p->kind != NBC_PARAM_ARRAY)
    return sig_fail(NBC_INVALID_ARGUMENT, "nbc_param_pack_array: not an array parameter");
  return pack_array(p, params, 0, data, dtype_kind, itemsize, ndim, shape, strides);
}

nbc_status_t nbc_signature_pack_record(const nbc_signature_t *sig, int index, void *params,
                                       nbc_devptr_t data, int itemsize) {
  nbc_status_t st = NBC_OK;
  const nbc_param_info_t *p = packable_param(sig, index, params, NBC_PARAM_RECORD, &st);
  if (!p) return st;
  if (itemsize != p->itemsize)
    return sig_fail(NBC_INVALID_ARGUMENT, "argument %d: expected %s (%d bytes), got a record "
                    "of %d bytes", index + 1, p->type_name, p->itemsize, itemsize);
  put_word((char *)params + p->offset, 0, (int64_t)data);
  return NBC_OK;
}

nbc_status_t nbc_signature_pack_pointer(const nbc_signature_t *sig, int index, void *params,
                                        uint64_t address) {
  nbc_status_t st = NBC_OK;
  const nbc_param_info_t *p = packable_param(sig, index, params, NBC_PARAM_POINTER, &st);
  return p ? nbc_param_pack_pointer(p, params, address) : st;
}

nbc_status_t nbc_param_pack_pointer(const nbc_param_info_t *p, void *params, uint64_t address) {
  if (!p || !params || p->kind != NBC_PARAM_POINTER)
    return sig_fail(NBC_INVALID_ARGUMENT, "nbc_param_pack_pointer: not a pointer parameter");
  memcpy((char *)params + p->offset, &address, sizeof address);
  return NBC_OK;
}

/* IEEE binary16 bits of a double, rounded to nearest even (what a float -> half cast does). */
static uint16_t to_half(double value) {
  float f = (float)value;
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mant = x & 0x7fffffu;
  int exp = (int)((x >> 23) & 0xff);
  if (exp == 0xff) return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
  exp = exp - 127 + 15;
  if (exp >= 0x1f) return (uint16_t)(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10) return (uint16_t)sign;
    mant |= 0x800000u;
    int shift = 14 - exp;
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) half++;
    return (uint16_t)(sign | half);
  }
  uint32_t half = sign | ((uint32_t)exp << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) half++;
  return (uint16_t)half;
}

/* Stores an integer value wrapped to the parameter's width. */
static void store_int(void *dst, int itemsize, uint64_t v) {
  uint8_t u8 = (uint8_t)v;
  uint16_t u16 = (uint16_t)v;
  uint32_t u32 = (uint32_t)v;
  switch (itemsize) {
  case 1: memcpy(dst, &u8, 1); break;
  case 2: memcpy(dst, &u16, 2); break;
  case 4: memcpy(dst, &u32, 4); break;
  default: memcpy(dst, &v, 8); break;
  }
}

/* Stores a floating value in the parameter's float width. */
static void store_float(void *dst, int itemsize, double v) {
  if (itemsize == 2) {
    uint16_t h = to_half(v);
    memcpy(dst, &h, 2);
  } else if (itemsize == 4) {
    float f = (float)v;
    memcpy(dst, &f, 4);
  } else {
    memcpy(dst, &v, 8);
  }
}

/* A double truncated toward zero into int64 without undefined behaviour: NaN is 0 and
 * values beyond the range saturate. */
static int64_t trunc_to_int64(double v) {
  if (isnan(v)) return 0;
  if (v >= 9223372036854775807.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}

/* The common part of the three scalar packers. */
/* One scalar described by p converted as numba converts it. */
/* is_int: i is the value; else re (and im for a complex value, is_complex). */
static nbc_status_t pack_value(const nbc_param_info_t *p, void *params, bool is_int, int64_t i,
                               double re, double im, bool is_complex) {
  if (!p || !params) return sig_fail(NBC_INVALID_ARGUMENT, "nbc_param_pack: NULL argument");
  if (p->kind != NBC_PARAM_SCALAR)
    return sig_fail(NBC_INVALID_ARGUMENT, "expected %s, got a scalar", p->type_name);
  /* numba converts no complex value to a real type (can_convert: none) */
  if (is_complex && p->dtype_kind != 'c')
    return sig_fail(NBC_INVALID_ARGUMENT, "expected %s, got a complex value (numba converts "
                    "no complex to a real type)", p->type_name);
  char *dst = (char *)params + p->offset;
  switch (p->dtype_kind) {
  case 'b': {
    uint8_t b = is_int ? i != 0 : (re != 0.0 || im != 0.0);
    memcpy(dst, &b, 1);
    break;
  }
  case 'i':
  case 'u':
    store_int(dst, p->itemsize, is_int ? (uint64_t)i : (uint64_t)trunc_to_int64(re));
    break;
  case 'f': store_float(dst, p->itemsize, is_int ? (double)i : re); break;
  case 'M': /* datetime64 / timedelta64: the int64 count of its unit (NaT INT64_MIN) */
  case 'm':
    if (!is_int)
      return sig_fail(NBC_INVALID_ARGUMENT, "expected %s, given as its int64 count",
                      p->type_name);
    store_int(dst, 8, (uint64_t)i);
    break;
  case 'c':
    store_float(dst, p->itemsize / 2, is_int ? (double)i : re);
    store_float(dst + p->itemsize / 2, p->itemsize / 2, is_int ? 0.0 : im);
    break;
  default:
    return sig_fail(NBC_INVALID_ARGUMENT, "%s cannot be passed", p->type_name);
  }
  return NBC_OK;
}

static nbc_status_t pack_scalar(const nbc_signature_t *sig, int index, void *params,
                                bool is_int, int64_t i, double re, double im, bool is_complex) {
  nbc_status_t st = NBC_OK;
  const nbc_param_info_t *p = packable_param(sig, index, params, NBC_PARAM_SCALAR, &st);
  return p ? pack_value(p, params, is_int, i, re, im, is_complex) : st;
}

nbc_status_t nbc_param_pack_int(const nbc_param_info_t *p, void *params, int64_t value) {
  return pack_value(p, params, true, value, 0.0, 0.0, false);
}

nbc_status_t nbc_param_pack_float(const nbc_param_info_t *p, void *params, double value) {
  return pack_value(p, params, false, 0, value, 0.0, false);
}

nbc_status_t nbc_param_pack_complex(const nbc_param_info_t *p, void *params, double re,
                                    double im) {
  return pack_value(p, params, false, 0, re, im, true);
}

nbc_status_t nbc_signature_pack_int(const nbc_signature_t *sig, int index, void *params,
                                    int64_t value) {
  return pack_scalar(sig, index, params, true, value, 0.0, 0.0, false);
}

nbc_status_t nbc_signature_pack_float(const nbc_signature_t *sig, int index, void *params,
                                      double value) {
  return pack_scalar(sig, index, params, false, 0, value, 0.0, false);
}

nbc_status_t nbc_signature_pack_complex(const nbc_signature_t *sig, int index, void *params,
                                        double re, double im) {
  return pack_scalar(sig, index, params, false, 0, re, im, true);
}
