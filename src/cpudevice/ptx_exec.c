/* ptx_exec.c — runs a decoded kernel (ptx_decode.c) over a grid on the CPU.
 *
 * Blocks run one after the other. In a block every thread is a resumable context (the
 * current function, program counter, registers, param area, local memory and call
 * frames): run_thread() executes one thread's instructions until it exits, reaches a
 * barrier (bar.sync, bar.red) or a warp-level instruction (shfl, vote, match,
 * activemask, bar.warp.sync), and leaves its program counter on that instruction. The
 * block's scheduler (run_block) runs every runnable thread; when all threads of a warp
 * have stopped, the warp-level instruction is carried out for the lanes that wait at it
 * (they are the converged lanes); when every thread still alive waits at the barrier, the
 * barrier (and bar.red's reduction) completes. A barrier therefore orders shared memory
 * as it does on a GPU, and a kernel that is correct there is correct here. Within a warp
 * the lanes also take turns at every global or shared memory access (run_warp): each lane
 * runs to its next access, then every lane performs that access in lane order, so code
 * that relies on a warp's lanes executing together (one lane reading what another reads
 * before a later store) sees the order a GPU's lockstep gives.
 *
 * Registers are 64-bit slots; a narrower value lives in the low bits (zero-extended when
 * written). Memory operands resolve by state space: .param is the thread's param area,
 * .shared the block's shared memory, .local the thread's local memory, .global/.const the
 * driver's memory through the launch's resolve callback (with a small cache of the ranges
 * it answered). Generic addresses of shared and local memory live in windows no host
 * pointer takes (NBC__SHARED_WINDOW, NBC__LOCAL_WINDOW). An access outside every range is
 * reported with the kernel, block, thread, address and PTX line.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpudevice/ptx.h"
#include "cpudevice/ptx_float.h"

enum { TS_RUN, TS_BAR, TS_WARP, TS_MEM, TS_DONE, TS_FAULT };

typedef struct frame {
  const nbc__ptx_func *f;
  int pc;
  uint64_t *regs;
  unsigned char *param;
  size_t local_base;
  int call; /* the call-table entry that made this frame */
} frame;

typedef struct thread {
  const nbc__ptx_func *f;
  int pc;
  uint64_t *regs;
  unsigned char *param;
  size_t param_size;
  size_t local_base;
  unsigned char *local;
  size_t local_size, local_cap;
  frame *stack;
  int depth, stack_cap;
  int state;
  int carry;
  int turn; /* may perform the visible memory access it stopped at (TS_MEM) */
  unsigned tid[3];
  unsigned lane, warp;
} thread;

#define CACHE_WAYS 4

typedef struct exec {
  const nbc__ptx_module *m;
  nbc__ptx_launch *L;
  const nbc__ptx_func *entry;
  uint64_t **tmpl; /* per function: the template with symbol addresses patched */
  unsigned char *shared;
  size_t shared_size;
  unsigned char *params; /* the entry's param area as launched */
  size_t params_size;
  struct {
    uint64_t base;
    size_t len;
    unsigned char *host;
  } cache[CACHE_WAYS];
  int cache_next;
  thread *threads;
  int nthreads;
  uint64_t *regfile;
  unsigned ctaid[3];
  char *msg;
  size_t msg_size;
  uint64_t count;
} exec;

/* ---- faults ---------------------------------------------------------------------------- */

static void fault(exec *x, const thread *t, const nbc__ptx_insn *in, const char *fmt,
                  uint64_t addr) {
  char what[200];
  snprintf(what, sizeof what, fmt, (unsigned long long)addr);
  snprintf(x->msg, x->msg_size,
           "kernel '%s' block (%u,%u,%u) thread (%u,%u,%u): %s (ptx line %u)", x->entry->name,
           x->ctaid[0], x->ctaid[1], x->ctaid[2], t->tid[0], t->tid[1], t->tid[2], what,
           in ? in->line : 0);
}

/* ---- memory ---------------------------------------------------------------------------- */

static unsigned char *global_host(exec *x, uint64_t a, size_t n) {
  for (int i = 0; i < CACHE_WAYS; i++)
    if (a - x->cache[i].base < x->cache[i].len && n <= x->cache[i].len - (a - x->cache[i].base))
      return x->cache[i].host + (a - x->cache[i].base);
  uint64_t base = 0;
  size_t len = 0;
  unsigned char *h = x->L->resolve(x->L->user, a, n, &base, &len);
  if (!h) return NULL;
  if (len >= n && a - base < len) {
    int w = x->cache_next++ % CACHE_WAYS;
    x->cache[w].base = base;
    x->cache[w].len = len;
    x->cache[w].host = h - (a - base);
  }
  return h;
}

static int local_grow(thread *t, size_t need) {
  if (need <= t->local_cap) return 1;
  size_t cap = t->local_cap ? t->local_cap * 2 : 256;
  while (cap < need)
    cap *= 2;
  unsigned char *p = realloc(t->local, cap);
  if (!p) return 0;
  memset(p + t->local_cap, 0, cap - t->local_cap);
  t->local = p;
  t->local_cap = cap;
  return 1;
}

/* The host bytes of [a, a + n) in `space` for thread t, or NULL after a fault. */
static unsigned char *host_of(exec *x, thread *t, int space, uint64_t a, size_t n,
                              const nbc__ptx_insn *in) {
  if (space == NBC__S_GENERIC) {
    if ((a & NBC__WINDOW_MASK) == NBC__SHARED_WINDOW) {
      space = NBC__S_SHARED;
      a -= NBC__SHARED_WINDOW;
    } else if ((a & NBC__WINDOW_MASK) == NBC__LOCAL_WINDOW) {
      space = NBC__S_LOCAL;
      a -= NBC__LOCAL_WINDOW;
    } else {
      space = NBC__S_GLOBAL;
    }
  }
  switch (space) {
  case NBC__S_SHARED:
    if (a < x->shared_size && n <= x->shared_size - a) return x->shared + a;
    fault(x, t, in, "shared memory access out of bounds at offset 0x%llx", a);
    return NULL;
  case NBC__S_LOCAL:
    if (a < t->local_size && n <= t->local_size - a) return t->local + a;
    fault(x, t, in, "local memory access out of bounds at offset 0x%llx", a);
    return NULL;
  case NBC__S_PARAM:
    if (a < t->param_size && n <= t->param_size - a) return t->param + a;
    fault(x, t, in, "parameter access out of bounds at offset 0x%llx", a);
    return NULL;
  default: {
    unsigned char *h = (a & NBC__WINDOW_MASK) == NBC__SHARED_WINDOW ||
                               (a & NBC__WINDOW_MASK) == NBC__LOCAL_WINDOW
                           ? NULL
                           : global_host(x, a, n);
    if (!h) fault(x, t, in, "invalid global memory access at address 0x%llx", a);
    return h;
  }
  }
}

/* ---- values ---------------------------------------------------------------------------- */

static inline float f32(uint64_t v) {
  uint32_t u = (uint32_t)v;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static inline uint64_t bits32(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static inline double f64(uint64_t v) {
  double d;
  memcpy(&d, &v, 8);
  return d;
}
static inline uint64_t bits64(double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  return u;
}

static int type_bits(int t) {
  switch (t) {
  case NBC__T_U8:
  case NBC__T_S8:
  case NBC__T_PRED:
    return 8;
  case NBC__T_U16:
  case NBC__T_S16:
  case NBC__T_F16:
  case NBC__T_BF16:
    return 16;
  case NBC__T_U32:
  case NBC__T_S32:
  case NBC__T_F32:
  case NBC__T_F16X2:
    return 32;
  default:
    return 64;
  }
}

static int is_signed(int t) {
  return t == NBC__T_S8 || t == NBC__T_S16 || t == NBC__T_S32 || t == NBC__T_S64;
}

static int is_fp(int t) {
  return t == NBC__T_F16 || t == NBC__T_BF16 || t == NBC__T_F32 || t == NBC__T_F64;
}

/* v truncated to the width of t (zero-extended into the register). */
static inline uint64_t trunc_to(int t, uint64_t v) {
  int b = type_bits(t);
  return b == 64 ? v : v & ((1ull << b) - 1);
}

/* Register value v of integer type t, sign- or zero-extended to 64 bits. */
static inline int64_t sext(int t, uint64_t v) {
  switch (t) {
  case NBC__T_S8:
    return (int8_t)v;
  case NBC__T_S16:
    return (int16_t)v;
  case NBC__T_S32:
    return (int32_t)v;
  case NBC__T_S64:
    return (int64_t)v;
  default:
    return (int64_t)trunc_to(t, v);
  }
}

/* A float register value of type t as double. */
static double fval(int t, uint64_t v) {
  switch (t) {
  case NBC__T_F16:
    return nbc__ptx_f16_to((uint16_t)v);
  case NBC__T_BF16:
    return nbc__ptx_bf16_to((uint16_t)v);
  case NBC__T_F32:
    return f32(v);
  default:
    return f64(v);
  }
}

/* A double rounded to float type t (nearest even), as register bits. */
static uint64_t fbits(int t, double d) {
  switch (t) {
  case NBC__T_F16:
    return nbc__ptx_f16_from(d);
  case NBC__T_BF16:
    return nbc__ptx_bf16_from(d);
  case NBC__T_F32:
    return bits32((float)d);
  default:
    return bits64(d);
  }
}

/* ---- arithmetic ------------------------------------------------------------------------ */

/* add sub mul fma of f32 or f64 rounded to nearest, without .ftz/.sat: the common case. */
#define NBC__FAST_ARITH(get, put, fma_fn)                                                      \
  do {                                                                                       \
    switch (in->op) {                                                                        \
    case NBC__OP_ADD:                                                                        \
      return put(get(A) + get(B));                                                           \
    case NBC__OP_SUB:                                                                        \
      return put(get(A) - get(B));                                                           \
    case NBC__OP_MUL:                                                                        \
      return put(get(A) * get(B));                                                           \
    case NBC__OP_FMA:                                                                        \
    case NBC__OP_MAD:                                                                        \
      return put(fma_fn(get(A), get(B), get(C)));                                            \
    default:                                                                                 \
      break;                                                                                 \
    }                                                                                        \
  } while (0)

static uint64_t float_op(const nbc__ptx_insn *in, uint64_t A, uint64_t B, uint64_t C) {
  int t = in->type;
  if (in->rnd <= NBC__R_RN) {
    if (t == NBC__T_F32 && !(in->flags & (NBC__F_FTZ | NBC__F_SAT | NBC__F_APPROX)))
      NBC__FAST_ARITH(f32, bits32, fmaf);
    if (t == NBC__T_F64) NBC__FAST_ARITH(f64, bits64, fma);
  }
  int op = in->op;
  double a = fval(t, A), b = fval(t, B), c = fval(t, C);
  switch (op) {
  case NBC__OP_ADD:
  case NBC__OP_SUB:
  case NBC__OP_MUL:
  case NBC__OP_MAD:
  case NBC__OP_FMA:
  case NBC__OP_DIV:
  case NBC__OP_SQRT:
  case NBC__OP_RCP:
    if (t == NBC__T_F32) {
      if ((in->flags & NBC__F_APPROX) && (op == NBC__OP_SQRT || op == NBC__OP_RCP)) {
        float fa = (in->flags & NBC__F_FTZ) ? nbc__ptx_ftz32((float)a) : (float)a;
        float r = (float)nbc__ptx_approx(op, fa);
        return bits32((in->flags & NBC__F_FTZ) ? nbc__ptx_ftz32(r) : r);
      }
      return bits32(nbc__ptx_f32_arith(op, in->rnd, in->flags, (float)a, (float)b, (float)c));
    }
    if (t == NBC__T_F64) return bits64(nbc__ptx_f64_arith(op, in->rnd, a, b, c));
    {
      double r = op == NBC__OP_ADD   ? a + b
                 : op == NBC__OP_SUB ? a - b
                 : op == NBC__OP_MUL ? a * b
                 : op == NBC__OP_DIV ? a / b
                 : op == NBC__OP_SQRT ? sqrt(a)
                 : op == NBC__OP_RCP  ? 1.0 / a
                                      : fma(a, b, c);
      if (in->flags & NBC__F_SAT) r = isnan(r) || r < 0 ? 0 : r > 1 ? 1 : r;
      return fbits(t, r);
    }
  case NBC__OP_ABS:
    return t == NBC__T_F64 ? A & ~(1ull << 63) : A & ~(1ull << (type_bits(t) - 1));
  case NBC__OP_NEG:
    return t == NBC__T_F64 ? A ^ (1ull << 63) : (A ^ (1ull << (type_bits(t) - 1))) &
                                                    ((1ull << type_bits(t)) - 1);
  case NBC__OP_MIN:
  case NBC__OP_MAX: {
    double r;
    if (isnan(a) && isnan(b))
      r = NAN;
    else if (isnan(a))
      r = b;
    else if (isnan(b))
      r = a;
    else if (a == b)
      r = op == NBC__OP_MIN ? (signbit(a) ? a : b) : (signbit(a) ? b : a);
    else
      r = op == NBC__OP_MIN ? (a < b ? a : b) : (a > b ? a : b);
    if (t == NBC__T_F32 && (in->flags & NBC__F_FTZ)) r = nbc__ptx_ftz32((float)r);
    return fbits(t, r);
  }
  case NBC__OP_COPYSIGN:
    return fbits(t, copysign(b, a));
  case NBC__OP_RSQRT:
  case NBC__OP_EX2:
  case NBC__OP_LG2:
  case NBC__OP_SIN:
  case NBC__OP_COS:
  case NBC__OP_TANH: {
    if (t == NBC__T_F32 && (in->flags & NBC__F_FTZ)) a = nbc__ptx_ftz32((float)a);
    double r = nbc__ptx_approx(op, a);
    if (t == NBC__T_F32 && (in->flags & NBC__F_FTZ)) r = nbc__ptx_ftz32((float)r);
    return fbits(t, r);
  }
  default:
    return 0;
  }
}

static inline uint64_t mask_of(int bits) {
  return bits == 64 ? ~0ull : (1ull << bits) - 1;
}

__extension__ typedef unsigned __int128 u128;
__extension__ typedef __int128 s128;

/* Integer operations; t->carry is the carry flag of the .cc/addc chain. */
static uint64_t int_op(thread *th, const nbc__ptx_insn *in, uint64_t A, uint64_t B,
                       uint64_t C, uint64_t E) {
  int t = in->type, bits = type_bits(t), sg = is_signed(t);
  uint64_t m = mask_of(bits);
  int64_t sa = sext(t, A), sb = sext(t, B);
  uint64_t ua = A & m, ub = B & m;
  switch (in->op) {
  case NBC__OP_ADD:
  case NBC__OP_ADDC: {
    uint64_t cin = in->op == NBC__OP_ADDC ? (uint64_t)th->carry : 0;
    uint64_t r = (ua + ub + cin) & m;
    if (in->flags & NBC__F_CC)
      th->carry = bits == 64 ? (r < ua || (cin && r == ua)) : ((ua + ub + cin) >> bits) & 1;
    if ((in->flags & NBC__F_SAT) && sg && bits == 32) {
      int64_t w = (int64_t)(int32_t)sa + (int32_t)sb;
      r = (uint32_t)(w > INT32_MAX ? INT32_MAX : w < INT32_MIN ? INT32_MIN : w);
    }
    return r;
  }
  case NBC__OP_SUB:
  case NBC__OP_SUBC: {
    uint64_t bin = in->op == NBC__OP_SUBC ? (uint64_t)th->carry : 0;
    uint64_t r = (ua - ub - bin) & m;
    if (in->flags & NBC__F_CC) th->carry = ua < ub + bin || (bin && ub == m);
    if ((in->flags & NBC__F_SAT) && sg && bits == 32) {
      int64_t w = (int64_t)(int32_t)sa - (int32_t)sb;
      r = (uint32_t)(w > INT32_MAX ? INT32_MAX : w < INT32_MIN ? INT32_MIN : w);
    }
    return r;
  }
  case NBC__OP_MUL:
  case NBC__OP_MAD:
  case NBC__OP_MADC: {
    u128 p;
    if (sg)
      p = (u128)((s128)sa * (s128)sb);
    else
      p = (u128)ua * ub;
    uint64_t r;
    int rbits = bits;
    if (in->flags & NBC__F_WIDE) {
      r = (uint64_t)p;
      rbits = 2 * bits;
    } else if (in->flags & NBC__F_HI) {
      r = (uint64_t)(p >> bits) & m;
    } else {
      r = (uint64_t)p & m;
    }
    if (in->op == NBC__OP_MUL) return r;
    uint64_t rm = mask_of(rbits > 64 ? 64 : rbits);
    uint64_t cin = in->op == NBC__OP_MADC ? (uint64_t)th->carry : 0;
    uint64_t cc = C & rm;
    uint64_t s = (r + cc + cin) & rm;
    if (in->flags & NBC__F_CC)
      th->carry = rbits >= 64 ? (s < r || (cin && s == r)) : ((r + cc + cin) >> rbits) & 1;
    return s;
  }
  case NBC__OP_DIV:
    if (sg) {
      if (sb == 0) return m;
      if (sb == -1) return (0 - (uint64_t)sa) & m;
      return (uint64_t)(sa / sb) & m;
    }
    return ub ? ua / ub : m;
  case NBC__OP_REM:
    if (sg) {
      if (sb == 0 || sb == -1) return sb ? 0 : ua;
      return (uint64_t)(sa % sb) & m;
    }
    return ub ? ua % ub : ua;
  case NBC__OP_ABS:
    return (sa < 0 ? 0 - (uint64_t)sa : (uint64_t)sa) & m;
  case NBC__OP_NEG:
    return (0 - ua) & m;
  case NBC__OP_MIN:
    return sg ? (uint64_t)(sa < sb ? sa : sb) & m : (ua < ub ? ua : ub);
  case NBC__OP_MAX:
    return sg ? (uint64_t)(sa > sb ? sa : sb) & m : (ua > ub ? ua : ub);
  case NBC__OP_AND:
    return ua & ub;
  case NBC__OP_OR:
    return ua | ub;
  case NBC__OP_XOR:
    return ua ^ ub;
  case NBC__OP_NOT:
    return t == NBC__T_PRED ? !(A & 1) : ~ua & m;
  case NBC__OP_CNOT:
    return ua == 0;
  case NBC__OP_SHL: {
    uint32_t n = (uint32_t)B;
    return n >= (uint32_t)bits ? 0 : (ua << n) & m;
  }
  case NBC__OP_SHR: {
    uint32_t n = (uint32_t)B;
    if (sg) return (uint64_t)(n >= (uint32_t)bits ? (sa < 0 ? -1 : 0) : sa >> n) & m;
    return n >= (uint32_t)bits ? 0 : ua >> n;
  }
  case NBC__OP_CLZ:
    return ua ? (uint64_t)(__builtin_clzll(ua) - (64 - bits)) : (uint64_t)bits;
  case NBC__OP_POPC:
    return (uint64_t)__builtin_popcountll(ua);
  case NBC__OP_BREV: {
    uint64_t r = 0;
    for (int i = 0; i < bits; i++)
      r |= ((ua >> i) & 1) << (bits - 1 - i);
    return r;
  }
  case NBC__OP_BFE: {
    uint32_t pos = (uint32_t)B & 0xff, len = (uint32_t)C & 0xff;
    if (len == 0) return 0;
    uint64_t r = pos >= (uint32_t)bits ? 0 : ua >> pos;
    if (len < 64) r &= (1ull << len) - 1;
    if (sg) { /* sign bit: bit pos+len-1 of a, or a's sign when beyond */
      uint32_t sbit = pos + len - 1 < (uint32_t)bits ? pos + len - 1 : (uint32_t)bits - 1;
      if ((ua >> sbit) & 1 && len < 64) r |= ~0ull << len;
    }
    return r & m;
  }
  case NBC__OP_BFI: { /* bfi d, a (insert), b (base), pos c, len e */
    uint32_t pos = (uint32_t)C & 0xff, len = (uint32_t)E & 0xff;
    uint64_t r = ub;
    for (uint32_t i = 0; i < len && pos + i < (uint32_t)bits; i++)
      r = (r & ~(1ull << (pos + i))) | (((ua >> i) & 1) << (pos + i));
    return r;
  }
  case NBC__OP_PRMT: {
    uint64_t bytes = (A & 0xffffffffu) | ((B & 0xffffffffu) << 32);
    uint32_t sel = (uint32_t)C, r = 0;
    for (int i = 0; i < 4; i++) {
      uint32_t s = (sel >> (4 * i)) & 0xf;
      uint32_t byte = (uint32_t)(bytes >> (8 * (s & 7))) & 0xff;
      if (s & 8) byte = (byte & 0x80) ? 0xff : 0;
      r |= byte << (8 * i);
    }
    return r;
  }
  default:
    return 0;
  }
}

static int compare(int cmp, int t, uint64_t A, uint64_t B) {
  if (is_fp(t)) {
    double a = fval(t, A), b = fval(t, B);
    int un = isnan(a) || isnan(b);
    switch (cmp) {
    case NBC__C_EQ:
      return !un && a == b;
    case NBC__C_NE:
      return !un && a != b;
    case NBC__C_LT:
      return !un && a < b;
    case NBC__C_LE:
      return !un && a <= b;
    case NBC__C_GT:
      return !un && a > b;
    case NBC__C_GE:
      return !un && a >= b;
    case NBC__C_EQU:
      return un || a == b;
    case NBC__C_NEU:
      return un || a != b;
    case NBC__C_LTU:
      return un || a < b;
    case NBC__C_LEU:
      return un || a <= b;
    case NBC__C_GTU:
      return un || a > b;
    case NBC__C_GEU:
      return un || a >= b;
    case NBC__C_NUM:
      return !un;
    case NBC__C_NAN:
      return un;
    default:
      return 0;
    }
  }
  int64_t sa = sext(t, A), sb = sext(t, B);
  uint64_t ua = trunc_to(t, A), ub = trunc_to(t, B);
  int sg = is_signed(t);
  switch (cmp) {
  case NBC__C_EQ:
    return ua == ub;
  case NBC__C_NE:
    return ua != ub;
  case NBC__C_LT:
    return sg ? sa < sb : ua < ub;
  case NBC__C_LE:
    return sg ? sa <= sb : ua <= ub;
  case NBC__C_GT:
    return sg ? sa > sb : ua > ub;
  case NBC__C_GE:
    return sg ? sa >= sb : ua >= ub;
  case NBC__C_LO:
    return ua < ub;
  case NBC__C_LS:
    return ua <= ub;
  case NBC__C_HI:
    return ua > ub;
  case NBC__C_HS:
    return ua >= ub;
  default:
    return 0;
  }
}

/* An integer comparison: signed operands sa sb for lt le gt ge, unsigned ua ub for the
 * others (eq ne and the unsigned lo ls hi hs). */
static inline int int_compare(int cmp, int64_t sa, int64_t sb, uint64_t ua, uint64_t ub) {
  switch (cmp) {
  case NBC__C_EQ:
    return ua == ub;
  case NBC__C_NE:
    return ua != ub;
  case NBC__C_LT:
    return sa < sb;
  case NBC__C_LE:
    return sa <= sb;
  case NBC__C_GT:
    return sa > sb;
  case NBC__C_GE:
    return sa >= sb;
  case NBC__C_LO:
    return ua < ub;
  case NBC__C_LS:
    return ua <= ub;
  case NBC__C_HI:
    return ua > ub;
  default:
    return ua >= ub;
  }
}

static int combine(int op, int a, int b) {
  return op == NBC__C_AND ? a && b : op == NBC__C_OR ? a || b : a != b;
}

/* cvt d.type, a.type2 */
static uint64_t convert(const nbc__ptx_insn *in, uint64_t A) {
  int dt = in->type, stype = in->type2;
  if (!is_fp(dt) && !is_fp(stype)) { /* integer to integer */
    int64_t sv = sext(stype, A);
    if (in->flags & NBC__F_SAT) {
      int db = type_bits(dt);
      if (is_signed(dt)) {
        int64_t lo = db == 64 ? INT64_MIN : -(1ll << (db - 1)), hi = db == 64 ? INT64_MAX : (1ll << (db - 1)) - 1;
        if (!is_signed(stype) && trunc_to(stype, A) > (uint64_t)hi) return trunc_to(dt, (uint64_t)hi);
        if (is_signed(stype)) sv = sv < lo ? lo : sv > hi ? hi : sv;
      } else {
        uint64_t hi = mask_of(db);
        if (is_signed(stype) && sv < 0) return 0;
        if (trunc_to(stype, A) > hi && !(is_signed(stype) && sv < 0)) return hi;
      }
    }
    return trunc_to(dt, (uint64_t)sv);
  }
  if (is_fp(dt) && is_fp(stype)) {
    double v = fval(stype, A);
    if (in->rnd >= NBC__R_RNI) v = nbc__ptx_round_integral(in->rnd, v);
    if (dt == NBC__T_F32 && (in->flags & NBC__F_FTZ)) v = nbc__ptx_ftz32((float)v);
    if (dt == NBC__T_F32 && in->rnd > NBC__R_RN && in->rnd < NBC__R_RNI)
      return bits32(nbc__ptx_to_f32(in->rnd, v));
    if (in->flags & NBC__F_SAT) v = isnan(v) || v < 0 ? 0 : v > 1 ? 1 : v;
    return fbits(dt, v);
  }
  if (is_fp(stype)) { /* float to integer: round, saturate, NaN to 0 */
    double v = fval(stype, A);
    if (stype == NBC__T_F32 && (in->flags & NBC__F_FTZ)) v = nbc__ptx_ftz32((float)v);
    if (isnan(v)) return 0;
    v = nbc__ptx_round_integral(in->rnd, v);
    int db = type_bits(dt);
    if (is_signed(dt)) {
      double lo = -ldexp(1, db - 1), hi = ldexp(1, db - 1);
      if (v < lo) return trunc_to(dt, (uint64_t)(db == 64 ? INT64_MIN : -(1ll << (db - 1))));
      if (v >= hi) return trunc_to(dt, (uint64_t)(db == 64 ? INT64_MAX : (1ll << (db - 1)) - 1));
      return trunc_to(dt, (uint64_t)(int64_t)v);
    }
    if (v <= 0) return 0;
    if (v >= ldexp(1, db)) return mask_of(db);
    return (uint64_t)v;
  }
  /* integer to float */
  if (dt == NBC__T_F64 || dt == NBC__T_F32) {
    if (in->rnd > NBC__R_RN) {
      /* exact in double for sources of up to 53 bits, then rounded once as asked */
      double d = is_signed(stype) ? (double)sext(stype, A) : (double)trunc_to(stype, A);
      return dt == NBC__T_F32 ? bits32(nbc__ptx_to_f32(in->rnd, d)) : bits64(d);
    }
    if (dt == NBC__T_F32)
      return bits32(is_signed(stype) ? (float)sext(stype, A) : (float)trunc_to(stype, A));
    return bits64(is_signed(stype) ? (double)sext(stype, A) : (double)trunc_to(stype, A));
  }
  return fbits(dt, is_signed(stype) ? (double)sext(stype, A) : (double)trunc_to(stype, A));
}

static uint64_t load_bits(const unsigned char *p, int t) {
  switch (type_bits(t)) {
  case 8: {
    uint8_t v = *p;
    return t == NBC__T_S8 ? (uint64_t)(int64_t)(int8_t)v : v;
  }
  case 16: {
    uint16_t v;
    memcpy(&v, p, 2);
    return t == NBC__T_S16 ? (uint64_t)(int64_t)(int16_t)v : v;
  }
  case 32: {
    uint32_t v;
    memcpy(&v, p, 4);
    return t == NBC__T_S32 ? (uint64_t)(int64_t)(int32_t)v : v;
  }
  default: {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
  }
  }
}

static void store_bits(unsigned char *p, int t, uint64_t v) {
  switch (type_bits(t)) {
  case 8:
    *p = (uint8_t)v;
    break;
  case 16: {
    uint16_t w = (uint16_t)v;
    memcpy(p, &w, 2);
    break;
  }
  case 32: {
    uint32_t w = (uint32_t)v;
    memcpy(p, &w, 4);
    break;
  }
  default:
    memcpy(p, &v, 8);
  }
}

/* atom/red: the read-modify-write at p; returns the old value. */
static uint64_t atomic_rmw(const nbc__ptx_insn *in, unsigned char *p, uint64_t a, uint64_t b) {
  int t = in->type;
  uint64_t old = load_bits(p, t), r = old;
  uint64_t m = mask_of(type_bits(t));
  switch (in->sub) {
  case NBC__C_ADD:
    r = is_fp(t) ? fbits(t, fval(t, old) + fval(t, a)) : (old + a) & m;
    break;
  case NBC__C_INC:
    r = (old & m) >= (a & m) ? 0 : old + 1;
    break;
  case NBC__C_DEC:
    r = (old & m) == 0 || (old & m) > (a & m) ? a : old - 1;
    break;
  case NBC__C_CAS:
    r = (old & m) == (a & m) ? b : old;
    break;
  case NBC__C_EXCH:
    r = a;
    break;
  case NBC__C_MIN:
  case NBC__C_MAX: {
    int less;
    if (is_fp(t))
      less = fval(t, a) < fval(t, old);
    else if (is_signed(t))
      less = sext(t, a) < sext(t, old);
    else
      less = (a & m) < (old & m);
    int take = in->sub == NBC__C_MIN ? less : (!less && (a & m) != (old & m));
    if (is_fp(t) && isnan(fval(t, old))) take = 1;
    r = take ? a : old;
    break;
  }
  case NBC__C_AND:
    r = old & a;
    break;
  case NBC__C_OR:
    r = old | a;
    break;
  case NBC__C_XOR:
    r = old ^ a;
    break;
  default:
    break;
  }
  store_bits(p, t, r);
  return old;
}

/* ---- calls ----------------------------------------------------------------------------- */

static int enter_call(exec *x, thread *t, const nbc__ptx_insn *in) {
  const nbc__ptx_call *c = &x->m->calls[in->target];
  const nbc__ptx_func *cf = &x->m->funcs[c->callee];
  if (t->depth == t->stack_cap) {
    int cap = t->stack_cap ? t->stack_cap * 2 : 8;
    frame *s = realloc(t->stack, (size_t)cap * sizeof *s);
    if (!s) return 0;
    t->stack = s;
    t->stack_cap = cap;
  }
  if (t->depth >= 4096) {
    fault(x, t, in, "call stack overflow (depth %llu)", (uint64_t)t->depth);
    return 0;
  }
  frame *fr = &t->stack[t->depth++];
  fr->f = t->f;
  fr->pc = t->pc + 1;
  fr->regs = t->regs;
  fr->param = t->param;
  fr->local_base = t->local_base;
  fr->call = in->target;
  uint64_t *regs = malloc(cf->nregs * sizeof *regs);
  unsigned char *param = calloc(1, cf->param_size ? cf->param_size : 1);
  if (!regs || !param) {
    free(regs);
    free(param);
    fault(x, t, in, "out of memory calling a function%.0llu", 0);
    return 0;
  }
  memcpy(regs, x->tmpl[c->callee], cf->nregs * sizeof *regs);
  memcpy(regs, t->regs, NBC__SR_COUNT * sizeof *regs);
  for (int i = 0; i < c->nargs; i++) {
    if (c->from[i] + c->size[i] > t->param_size || c->to[i] + c->size[i] > cf->param_size) {
      free(regs);
      free(param);
      fault(x, t, in, "call argument out of its parameter's bounds%.0llu", 0);
      return 0;
    }
    memcpy(param + c->to[i], t->param + c->from[i], c->size[i]);
  }
  size_t base = (t->local_size + 15) / 16 * 16;
  if (!local_grow(t, base + cf->local_size)) {
    free(regs);
    free(param);
    fault(x, t, in, "out of memory for local memory%.0llu", 0);
    return 0;
  }
  t->local_base = base;
  t->local_size = base + cf->local_size;
  t->f = cf;
  t->pc = 0;
  t->regs = regs;
  t->param = param;
  t->param_size = cf->param_size;
  return 1;
}

static void leave_call(exec *x, thread *t) {
  frame *fr = &t->stack[--t->depth];
  const nbc__ptx_call *c = &x->m->calls[fr->call];
  size_t caller_param = fr->f == x->entry ? x->entry->param_size : fr->f->param_size;
  if (c->has_ret && c->ret_from + c->ret_size <= t->param_size &&
      c->ret_to + c->ret_size <= caller_param)
    memcpy(fr->param + c->ret_to, t->param + c->ret_from, c->ret_size);
  free(t->regs);
  free(t->param);
  t->local_size = t->local_base;
  t->f = fr->f;
  t->pc = fr->pc;
  t->regs = fr->regs;
  t->param = fr->param;
  t->param_size = caller_param;
  t->local_base = fr->local_base;
}

/* ---- one thread ------------------------------------------------------------------------ */

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t address(const thread *t, const uint64_t *R, const nbc__ptx_insn *in) {
  uint64_t a = (in->addr_reg != NBC__NOREG ? R[in->addr_reg] : 0) + (uint64_t)in->off;
  return (in->flags & NBC__F_LOCALSYM) ? a + t->local_base : a;
}

/* The specialised add, mul and fma of one float type, rounded to nearest. */
#define NBC__FLOAT_CASES(T, get, put, fma_fn)                                                  \
  case NBC__OP_ADD_##T:                                                                      \
    R[in->d[0]] = put(get(R[in->a]) + get(R[in->b]));                                        \
    break;                                                                                   \
  case NBC__OP_MUL_##T:                                                                      \
    R[in->d[0]] = put(get(R[in->a]) * get(R[in->b]));                                        \
    break;                                                                                   \
  case NBC__OP_FMA_##T:                                                                      \
    R[in->d[0]] = put(fma_fn(get(R[in->a]), get(R[in->b]), get(R[in->c])));                  \
    break;

/* Runs t until it exits (TS_DONE), waits (TS_BAR, TS_WARP) or faults (TS_FAULT). */
static int run_thread(exec *x, thread *t) {
  const nbc__ptx_insn *code = t->f->code;
  uint64_t *R = t->regs;
  int pc = t->pc;
  uint64_t n = 0;
  int state = TS_RUN;
  while (state == TS_RUN) {
    const nbc__ptx_insn *in = &code[pc];
    if (in->guard != NBC__NOREG &&
        (int)(R[in->guard] & 1) == ((in->flags & NBC__F_NEG_GUARD) != 0)) {
      pc++;
      continue;
    }
    n++;
    switch (in->op) {
    case NBC__OP_MOV64:
      R[in->d[0]] = R[in->a];
      break;
    case NBC__OP_MOV32:
      R[in->d[0]] = (uint32_t)R[in->a];
      break;
    case NBC__OP_ADD64:
      R[in->d[0]] = R[in->a] + R[in->b];
      break;
    case NBC__OP_ADD32:
      R[in->d[0]] = (uint32_t)(R[in->a] + R[in->b]);
      break;
    case NBC__OP_SUB64:
      R[in->d[0]] = R[in->a] - R[in->b];
      break;
    case NBC__OP_SUB32:
      R[in->d[0]] = (uint32_t)(R[in->a] - R[in->b]);
      break;
    case NBC__OP_MUL64:
      R[in->d[0]] = R[in->a] * R[in->b];
      break;
    case NBC__OP_MUL32:
      R[in->d[0]] = (uint32_t)(R[in->a] * R[in->b]);
      break;
    case NBC__OP_MULWIDE_S32:
      R[in->d[0]] = (uint64_t)((int64_t)(int32_t)R[in->a] * (int64_t)(int32_t)R[in->b]);
      break;
    case NBC__OP_MULWIDE_U32:
      R[in->d[0]] = (uint64_t)(uint32_t)R[in->a] * (uint32_t)R[in->b];
      break;
    case NBC__OP_MAD64:
      R[in->d[0]] = R[in->a] * R[in->b] + R[in->c];
      break;
    case NBC__OP_MAD32:
      R[in->d[0]] = (uint32_t)(R[in->a] * R[in->b] + R[in->c]);
      break;
    case NBC__OP_SHL64: {
      uint32_t k = (uint32_t)R[in->b];
      R[in->d[0]] = k >= 64 ? 0 : R[in->a] << k;
      break;
    }
    case NBC__OP_SHL32: {
      uint32_t k = (uint32_t)R[in->b];
      R[in->d[0]] = k >= 32 ? 0 : (uint32_t)(R[in->a] << k);
      break;
    }
    case NBC__OP_AND64:
      R[in->d[0]] = R[in->a] & R[in->b];
      break;
    case NBC__OP_OR64:
      R[in->d[0]] = R[in->a] | R[in->b];
      break;
    case NBC__OP_XOR64:
      R[in->d[0]] = R[in->a] ^ R[in->b];
      break;
    case NBC__OP_AND32:
      R[in->d[0]] = (uint32_t)(R[in->a] & R[in->b]);
      break;
    case NBC__OP_OR32:
      R[in->d[0]] = (uint32_t)(R[in->a] | R[in->b]);
      break;
    case NBC__OP_XOR32:
      R[in->d[0]] = (uint32_t)(R[in->a] ^ R[in->b]);
      break;
    case NBC__OP_CVT_S64_S32:
      R[in->d[0]] = (uint64_t)(int64_t)(int32_t)R[in->a];
      break;
    case NBC__OP_SETP_S64:
      R[in->d[0]] = (uint64_t)int_compare(in->sub, (int64_t)R[in->a], (int64_t)R[in->b],
                                          R[in->a], R[in->b]);
      break;
    case NBC__OP_SETP_S32:
      R[in->d[0]] = (uint64_t)int_compare(in->sub, (int32_t)R[in->a], (int32_t)R[in->b],
                                          (uint32_t)R[in->a], (uint32_t)R[in->b]);
      break;
    case NBC__OP_SETP_U64:
      R[in->d[0]] = (uint64_t)int_compare(in->sub, 0, 0, R[in->a], R[in->b]);
      break;
    case NBC__OP_SETP_U32:
      R[in->d[0]] = (uint64_t)int_compare(in->sub, 0, 0, (uint32_t)R[in->a], (uint32_t)R[in->b]);
      break;
    case NBC__OP_SELP64:
      R[in->d[0]] = (R[in->c] & 1) ? R[in->a] : R[in->b];
      break;
    case NBC__OP_LD_PARAM64:
    case NBC__OP_LD_PARAM32: {
      size_t size = in->op == NBC__OP_LD_PARAM64 ? 8 : 4;
      uint64_t off = (uint64_t)in->off, v = 0;
      if (off >= t->param_size || size > t->param_size - off) {
        fault(x, t, in, "parameter access out of bounds at offset 0x%llx", off);
        state = TS_FAULT;
        break;
      }
      memcpy(&v, t->param + off, size);
      R[in->d[0]] = v;
      break;
    }
      NBC__FLOAT_CASES(F64, f64, bits64, fma)
      NBC__FLOAT_CASES(F32, f32, bits32, fmaf)
    case NBC__OP_MOV:
      if (in->sub == 1) { /* unpack */
        int eb = type_bits(in->type) / in->vec;
        for (int i = 0; i < in->vec; i++)
          if (in->d[i] != NBC__SR_SINK) R[in->d[i]] = (R[in->a] >> (i * eb)) & mask_of(eb);
      } else if (in->sub == 2) { /* pack */
        int eb = type_bits(in->type) / in->vec;
        uint64_t v = 0;
        for (int i = 0; i < in->vec; i++)
          v |= (R[in->d[1 + i]] & mask_of(eb)) << (i * eb);
        R[in->d[0]] = v;
      } else {
        R[in->d[0]] = trunc_to(in->type, R[in->a]);
      }
      break;
    case NBC__OP_MOV_LOCALSYM:
      R[in->d[0]] = t->local_base + (uint64_t)in->off;
      break;
    case NBC__OP_MOV_CLOCK:
      R[in->d[0]] = trunc_to(in->type, now_ns());
      break;
    case NBC__OP_ADD:
    case NBC__OP_SUB:
    case NBC__OP_MUL:
    case NBC__OP_MAD:
    case NBC__OP_DIV:
    case NBC__OP_ABS:
    case NBC__OP_NEG:
    case NBC__OP_MIN:
    case NBC__OP_MAX:
      if (is_fp(in->type)) {
        R[in->d[0]] = float_op(in, R[in->a], in->b != NBC__NOREG ? R[in->b] : 0,
                               in->c != NBC__NOREG ? R[in->c] : 0);
        break;
      }
      /* fall through */
    case NBC__OP_REM:
    case NBC__OP_AND:
    case NBC__OP_OR:
    case NBC__OP_XOR:
    case NBC__OP_NOT:
    case NBC__OP_CNOT:
    case NBC__OP_SHL:
    case NBC__OP_SHR:
    case NBC__OP_CLZ:
    case NBC__OP_POPC:
    case NBC__OP_BREV:
    case NBC__OP_BFE:
    case NBC__OP_BFI:
    case NBC__OP_ADDC:
    case NBC__OP_SUBC:
    case NBC__OP_MADC:
    case NBC__OP_PRMT: {
      uint64_t r = int_op(t, in, R[in->a], in->b != NBC__NOREG ? R[in->b] : 0,
                          in->c != NBC__NOREG ? R[in->c] : 0, in->e != NBC__NOREG ? R[in->e] : 0);
      if (in->d[0] != NBC__SR_SINK) R[in->d[0]] = r;
      break;
    }
    case NBC__OP_FMA:
    case NBC__OP_COPYSIGN:
    case NBC__OP_SQRT:
    case NBC__OP_RSQRT:
    case NBC__OP_RCP:
    case NBC__OP_EX2:
    case NBC__OP_LG2:
    case NBC__OP_SIN:
    case NBC__OP_COS:
    case NBC__OP_TANH:
      R[in->d[0]] = float_op(in, R[in->a], in->b != NBC__NOREG ? R[in->b] : 0,
                             in->c != NBC__NOREG ? R[in->c] : 0);
      break;
    case NBC__OP_SETP: {
      int p = compare(in->sub, in->type, R[in->a], R[in->b]);
      if (in->sub2) {
        int q = (int)(R[in->c] & 1) ^ ((in->flags & NBC__F_NEG_B) != 0);
        R[in->d[0]] = (uint64_t)combine(in->sub2, p, q);
        if (in->d[1] != NBC__NOREG) R[in->d[1]] = (uint64_t)combine(in->sub2, !p, q);
      } else {
        R[in->d[0]] = (uint64_t)p;
        if (in->d[1] != NBC__NOREG) R[in->d[1]] = (uint64_t)!p;
      }
      break;
    }
    case NBC__OP_SELP:
      R[in->d[0]] = ((R[in->c] & 1) ^ ((in->flags & NBC__F_NEG_B) != 0)) ? R[in->a] : R[in->b];
      break;
    case NBC__OP_CVT:
      R[in->d[0]] = convert(in, R[in->a]);
      break;
    case NBC__OP_CVTA: {
      uint64_t a = R[in->a], w = in->space == NBC__S_SHARED  ? NBC__SHARED_WINDOW
                                 : in->space == NBC__S_LOCAL ? NBC__LOCAL_WINDOW
                                                             : 0;
      R[in->d[0]] = trunc_to(in->type, (in->flags & NBC__F_TO) ? a - w : a + w);
      break;
    }
    case NBC__OP_LD:
    case NBC__OP_ST: {
      if ((in->flags & NBC__F_VISIBLE) && !t->turn) {
        state = TS_MEM;
        n--; /* counted when it runs */
        continue;
      }
      t->turn = 0;
      size_t esz = (size_t)type_bits(in->type) / 8;
      unsigned char *p = host_of(x, t, in->space, address(t, R, in), esz * in->vec, in);
      if (!p) {
        state = TS_FAULT;
        break;
      }
      for (int i = 0; i < in->vec; i++)
        if (in->op == NBC__OP_ST)
          store_bits(p + (size_t)i * esz, in->type, R[in->d[i]]);
        else if (in->d[i] != NBC__SR_SINK)
          R[in->d[i]] = load_bits(p + (size_t)i * esz, in->type);
      break;
    }
    case NBC__OP_ATOM:
    case NBC__OP_RED: {
      if ((in->flags & NBC__F_VISIBLE) && !t->turn) {
        state = TS_MEM;
        n--; /* counted when it runs */
        continue;
      }
      t->turn = 0;
      unsigned char *p = host_of(x, t, in->space, address(t, R, in),
                                 (size_t)type_bits(in->type) / 8, in);
      if (!p) {
        state = TS_FAULT;
        break;
      }
      uint64_t old = atomic_rmw(in, p, R[in->a], in->b != NBC__NOREG ? R[in->b] : 0);
      if (in->op == NBC__OP_ATOM && in->d[0] != NBC__SR_SINK) R[in->d[0]] = old;
      break;
    }
    case NBC__OP_BRA:
      pc = in->target;
      continue;
    case NBC__OP_CALL:
      t->pc = pc;
      if (!enter_call(x, t, in)) {
        state = TS_FAULT;
        break;
      }
      code = t->f->code;
      R = t->regs;
      pc = 0;
      continue;
    case NBC__OP_RET:
      if (t->depth == 0) {
        state = TS_DONE;
        break;
      }
      leave_call(x, t);
      code = t->f->code;
      R = t->regs;
      pc = t->pc;
      continue;
    case NBC__OP_EXIT:
      state = TS_DONE;
      break;
    case NBC__OP_BAR:
      state = in->vec == 32 ? TS_WARP : TS_BAR;
      continue;
    case NBC__OP_SHFL:
    case NBC__OP_VOTE:
    case NBC__OP_MATCH:
    case NBC__OP_ACTIVEMASK:
      state = TS_WARP;
      continue;
    case NBC__OP_NOP:
      break;
    case NBC__OP_TRAP:
    case NBC__OP_BRKPT:
      fault(x, t, in, "trap instruction%.0llu", 0);
      state = TS_FAULT;
      break;
    default:
      fault(x, t, in, "internal error: instruction %llu has no interpreter case", in->op);
      state = TS_FAULT;
      break;
    }
    if (state == TS_RUN) pc++;
  }
  t->pc = pc;
  t->state = state;
  x->count += n;
  return state;
}

/* ---- warps and barriers ---------------------------------------------------------------- */

static const nbc__ptx_insn *waiting_at(const thread *t) {
  return &t->f->code[t->pc];
}

/* Carries out the warp-level instruction the first waiting lane of warp w stopped at, for
 * every lane waiting at that same instruction. */
static void complete_warp(exec *x, int w) {
  thread *lanes = x->threads + w * 32;
  int n = x->nthreads - w * 32 < 32 ? x->nthreads - w * 32 : 32;
  const nbc__ptx_insn *in = NULL;
  uint32_t mask = 0;
  for (int i = 0; i < n; i++)
    if (lanes[i].state == TS_WARP) {
      if (!in) in = waiting_at(&lanes[i]);
      if (waiting_at(&lanes[i]) == in) mask |= 1u << i;
    }
  if (!in) return;
  uint64_t val[32] = {0};
  int pred[32] = {0};
  for (int i = 0; i < n; i++)
    if (mask >> i & 1) {
      const uint64_t *R = lanes[i].regs;
      if (in->op == NBC__OP_SHFL || in->op == NBC__OP_MATCH) val[i] = R[in->a];
      if (in->op == NBC__OP_VOTE)
        pred[i] = (int)(R[in->a] & 1) ^ ((in->flags & NBC__F_NEG_B) != 0);
    }
  uint32_t ballot = 0;
  int all = 1, any = 0;
  for (int i = 0; i < n; i++)
    if (mask >> i & 1) {
      ballot |= (uint32_t)pred[i] << i;
      all &= pred[i];
      any |= pred[i];
    }
  for (int i = 0; i < n; i++) {
    if (!(mask >> i & 1)) continue;
    thread *t = &lanes[i];
    uint64_t *R = t->regs;
    switch (in->op) {
    case NBC__OP_ACTIVEMASK:
      R[in->d[0]] = mask;
      break;
    case NBC__OP_VOTE:
      if (in->sub == NBC__C_BALLOT)
        R[in->d[0]] = ballot;
      else if (in->sub == NBC__C_ALL)
        R[in->d[0]] = (uint64_t)all;
      else if (in->sub == NBC__C_ANY)
        R[in->d[0]] = (uint64_t)any;
      else
        R[in->d[0]] = (uint64_t)(all || !any);
      break;
    case NBC__OP_SHFL: {
      int lane = i, bval = (int)(R[in->b] & 31), cval = (int)(R[in->c] & 31);
      int seg = (int)((R[in->c] >> 8) & 31);
      int maxl = (lane & seg) | (cval & ~seg), minl = lane & seg, j, ok;
      switch (in->sub) {
      case NBC__C_UP:
        j = lane - bval;
        ok = j >= maxl;
        break;
      case NBC__C_DOWN:
        j = lane + bval;
        ok = j <= maxl;
        break;
      case NBC__C_BFLY:
        j = lane ^ bval;
        ok = j <= maxl;
        break;
      default:
        j = minl | (bval & ~seg);
        ok = j <= maxl;
        break;
      }
      if (!ok || j < 0 || j >= n || !(mask >> j & 1)) j = lane;
      R[in->d[0]] = val[j] & 0xffffffffu;
      if (in->d[1] != NBC__NOREG && in->d[1] != NBC__SR_SINK) R[in->d[1]] = (uint64_t)ok;
      break;
    }
    case NBC__OP_MATCH: {
      uint64_t m = mask_of(type_bits(in->type));
      uint32_t same = 0;
      for (int k = 0; k < n; k++)
        if ((mask >> k & 1) && (val[k] & m) == (val[i] & m)) same |= 1u << k;
      if (in->sub == NBC__C_ALL) {
        int eq = same == mask;
        R[in->d[0]] = eq ? mask : 0;
        if (in->d[1] != NBC__NOREG && in->d[1] != NBC__SR_SINK) R[in->d[1]] = (uint64_t)eq;
      } else {
        R[in->d[0]] = same;
      }
      break;
    }
    default: /* bar.warp.sync */
      break;
    }
    t->pc++;
    t->state = TS_RUN;
  }
}

/* Every live thread waits at a barrier: completes it (with bar.red's reduction). */
static void complete_barrier(exec *x) {
  int count = 0, all = 1, any = 0;
  for (int i = 0; i < x->nthreads; i++) {
    thread *t = &x->threads[i];
    if (t->state != TS_BAR) continue;
    const nbc__ptx_insn *in = waiting_at(t);
    if (in->flags & NBC__F_RED) {
      int p = (int)(t->regs[in->a] & 1) ^ ((in->flags & NBC__F_NEG_B) != 0);
      count += p;
      all &= p;
      any |= p;
    }
  }
  for (int i = 0; i < x->nthreads; i++) {
    thread *t = &x->threads[i];
    if (t->state != TS_BAR) continue;
    const nbc__ptx_insn *in = waiting_at(t);
    if (in->flags & NBC__F_RED)
      t->regs[in->d[0]] = in->sub == NBC__C_POPC  ? (uint64_t)count
                          : in->sub == NBC__C_AND ? (uint64_t)all
                                                  : (uint64_t)any;
    t->pc++;
    t->state = TS_RUN;
  }
}

/* Runs the lanes of warp w until each has exited or waits at a barrier or a warp-level
 * instruction. Every lane stops before its next global or shared memory access; then each
 * performs that one access, in lane order, and runs on to the next, so the lanes of a warp
 * keep the order of their accesses as in lockstep. */
static int run_warp(exec *x, int w) {
  thread *lanes = x->threads + w * 32;
  int n = x->nthreads - w * 32 < 32 ? x->nthreads - w * 32 : 32;
  for (;;) {
    for (int i = 0; i < n; i++)
      if (lanes[i].state == TS_RUN && run_thread(x, &lanes[i]) == TS_FAULT) return 0;
    int accesses = 0;
    for (int i = 0; i < n; i++)
      if (lanes[i].state == TS_MEM) {
        lanes[i].state = TS_RUN;
        lanes[i].turn = 1;
        accesses = 1;
      }
    if (!accesses) return 1;
  }
}

/* Runs the block x->ctaid to completion. */
static int run_block(exec *x) {
  for (;;) {
    for (int w = 0; w * 32 < x->nthreads; w++)
      if (!run_warp(x, w)) return 0;
    int live = 0, at_bar = 0, warp_waits = 0;
    for (int i = 0; i < x->nthreads; i++) {
      int s = x->threads[i].state;
      live += s != TS_DONE;
      at_bar += s == TS_BAR;
      warp_waits += s == TS_WARP;
    }
    if (!live) return 1;
    if (warp_waits) {
      for (int w = 0; w * 32 < x->nthreads; w++)
        complete_warp(x, w);
    } else if (at_bar == live) {
      complete_barrier(x);
    }
  }
}

/* ---- the launch ------------------------------------------------------------------------ */

static void start_thread(exec *x, thread *t, int i, uint64_t *regs, unsigned char *param) {
  const nbc__ptx_launch *L = x->L;
  const nbc__ptx_func *f = x->entry;
  unsigned bx = L->block[0], by = L->block[1];
  t->f = f;
  t->pc = 0;
  t->regs = regs;
  memcpy(regs, x->tmpl[f - x->m->funcs], f->nregs * sizeof *regs);
  t->tid[0] = (unsigned)i % bx;
  t->tid[1] = (unsigned)i / bx % by;
  t->tid[2] = (unsigned)i / (bx * by);
  t->lane = (unsigned)i % 32;
  t->warp = (unsigned)i / 32;
  for (int k = 0; k < 3; k++) {
    regs[NBC__SR_TID_X + k] = t->tid[k];
    regs[NBC__SR_NTID_X + k] = L->block[k];
    regs[NBC__SR_CTAID_X + k] = x->ctaid[k];
    regs[NBC__SR_NCTAID_X + k] = L->grid[k];
  }
  regs[NBC__SR_LANEID] = t->lane;
  regs[NBC__SR_WARPID] = t->warp;
  regs[NBC__SR_NWARPID] = ((unsigned)x->nthreads + 31) / 32;
  regs[NBC__SR_SMID] = 0;
  regs[NBC__SR_NSMID] = 1;
  regs[NBC__SR_LANEMASK_EQ] = 1u << t->lane;
  regs[NBC__SR_LANEMASK_LT] = (1u << t->lane) - 1;
  regs[NBC__SR_LANEMASK_LE] = (uint32_t)((2ull << t->lane) - 1);
  regs[NBC__SR_LANEMASK_GT] = (uint32_t)~((2ull << t->lane) - 1);
  regs[NBC__SR_LANEMASK_GE] = (uint32_t)~((1u << t->lane) - 1);
  regs[NBC__SR_DYNSMEM] = L->dynamic_shared;
  regs[NBC__SR_TOTALSMEM] = x->shared_size;
  regs[NBC__SR_SINK] = 0;
  t->param = param;
  t->param_size = f->param_size;
  t->local_base = 0;
  t->local_size = f->local_size;
  t->depth = 0;
  t->state = TS_RUN;
  t->carry = 0;
  t->turn = 0;
}

/* The templates of every function with the module variables' addresses filled in. */
static int patch_templates(exec *x) {
  const nbc__ptx_module *m = x->m;
  x->tmpl = calloc((size_t)m->nfuncs + 1, sizeof *x->tmpl);
  if (!x->tmpl) return 0;
  for (int i = 0; i < m->nfuncs; i++) {
    const nbc__ptx_func *f = &m->funcs[i];
    if (!f->defined) continue;
    x->tmpl[i] = malloc(f->nregs * sizeof(uint64_t));
    if (!x->tmpl[i]) return 0;
    memcpy(x->tmpl[i], f->tmpl, f->nregs * sizeof(uint64_t));
    for (int k = 0; k < f->nfix; k++)
      x->tmpl[i][f->fix[k].reg] = m->vars[f->fix[k].var].addr + (uint64_t)f->fix[k].off;
  }
  return 1;
}

static void exec_free(exec *x) {
  if (x->tmpl)
    for (int i = 0; i < x->m->nfuncs; i++)
      free(x->tmpl[i]);
  free(x->tmpl);
  if (x->threads)
    for (int i = 0; i < x->nthreads; i++) {
      thread *t = &x->threads[i];
      while (t->depth > 0) { /* a fault inside a call: the frames' memory */
        free(t->regs);
        free(t->param);
        frame *fr = &t->stack[--t->depth];
        t->regs = fr->regs;
        t->param = fr->param;
      }
      free(t->local);
      free(t->stack);
    }
  free(x->threads);
  free(x->regfile);
  free(x->shared);
  free(x->params);
}

int nbc__ptx_run(const nbc__ptx_module *m, int entry, nbc__ptx_launch *L, char *msg,
                 size_t msg_size) {
  exec x;
  memset(&x, 0, sizeof x);
  x.m = m;
  x.L = L;
  x.msg = msg;
  x.msg_size = msg_size;
  x.entry = &m->funcs[entry];
  const nbc__ptx_func *f = x.entry;
  unsigned long long nthreads =
      (unsigned long long)L->block[0] * L->block[1] * L->block[2];
  int ok = 0;
  size_t formals_end = 0;
  for (size_t i = 0; i < f->nformals; i++)
    if (f->formal_off[i] + f->formal_size[i] > formals_end)
      formals_end = f->formal_off[i] + f->formal_size[i];
  int private_params = f->param_size > formals_end; /* call sequences write .param */
  x.nthreads = (int)nthreads;
  x.shared_size = (m->shared_static + 15) / 16 * 16 + L->dynamic_shared;
  x.params_size = f->param_size > L->param_size ? f->param_size : L->param_size;
  x.threads = calloc(nthreads, sizeof *x.threads);
  x.regfile = malloc(nthreads * f->nregs * sizeof(uint64_t) + 8);
  x.shared = malloc(x.shared_size + 16);
  x.params = calloc(1, (private_params ? nthreads : 1) * x.params_size + 8);
  if (!x.threads || !x.regfile || !x.shared || !x.params || !patch_templates(&x)) {
    snprintf(msg, msg_size, "out of memory for a block of %llu threads", nthreads);
    goto done;
  }
  if (L->param_size) memcpy(x.params, L->params, L->param_size);
  for (unsigned long long i = 1; private_params && i < nthreads; i++)
    memcpy(x.params + i * x.params_size, x.params, x.params_size);
  for (unsigned z = 0; z < L->grid[2]; z++)
    for (unsigned y = 0; y < L->grid[1]; y++)
      for (unsigned bxi = 0; bxi < L->grid[0]; bxi++) {
        x.ctaid[0] = bxi, x.ctaid[1] = y, x.ctaid[2] = z;
        memset(x.shared, 0, x.shared_size);
        for (int i = 0; i < x.nthreads; i++) {
          thread *t = &x.threads[i];
          unsigned char *param = x.params;
          if (private_params) {
            param = x.params + (size_t)i * x.params_size;
            if (L->param_size) memcpy(param, L->params, L->param_size);
          }
          start_thread(&x, t, i, x.regfile + (size_t)i * f->nregs, param);
          if (!local_grow(t, f->local_size)) {
            snprintf(msg, msg_size, "out of memory for local memory");
            goto done;
          }
        }
        if (!run_block(&x)) goto done;
      }
  ok = 1;
done:
  L->instructions = x.count;
  exec_free(&x);
  return ok;
}
