/* ptx.h — the CPU device's PTX decoder and interpreter (internal to nbcuda's CPU driver).
 *
 * A module is decoded once, at load (ptx_decode.c): every function's statements become an
 * array of fixed-size instructions whose operands are register numbers (immediates,
 * symbol addresses and the per-thread special registers are registers too, filled in
 * before a thread starts), branch targets are instruction indices, and memory operands are
 * a base register plus an offset. An instruction or directive the interpreter lacks fails
 * the load with a message naming it and its PTX line.
 *
 * A launch (ptx_exec.c) runs the grid block after block; inside a block every thread is a
 * resumable context that runs until it exits or waits at a barrier or a warp-level
 * instruction, and the block's scheduler releases the waiters once all that must arrive
 * have arrived. Device memory is reached through the driver's resolve callback.
 *
 * Names: nbc__ptx_* (decoder and interpreter share this header).
 */
#ifndef NBCUDA_CPUDEVICE_PTX_H
#define NBCUDA_CPUDEVICE_PTX_H

#include <stddef.h>
#include <stdint.h>

/* Instructions: name as written in PTX, enum tag. ORDER PTX_OPS. */
#define NBC__PTX_OPS(X)                                                                        \
  X("mov", MOV) X("add", ADD) X("sub", SUB) X("mul", MUL) X("mad", MAD) X("fma", FMA)          \
  X("div", DIV) X("rem", REM) X("abs", ABS) X("neg", NEG) X("min", MIN) X("max", MAX)          \
  X("and", AND) X("or", OR) X("xor", XOR) X("not", NOT) X("shl", SHL) X("shr", SHR)            \
  X("cnot", CNOT) X("clz", CLZ) X("popc", POPC) X("brev", BREV) X("bfe", BFE) X("bfi", BFI)   \
  X("copysign", COPYSIGN) X("sqrt", SQRT) X("rsqrt", RSQRT) X("rcp", RCP) X("ex2", EX2)      \
  X("lg2", LG2) X("sin", SIN) X("cos", COS) X("tanh", TANH) X("setp", SETP) X("selp", SELP)  \
  X("set", SET) X("cvt", CVT) X("cvta", CVTA) X("ld", LD) X("ldu", LDU) X("st", ST)          \
  X("atom", ATOM) X("red", RED) X("bra", BRA) X("call", CALL) X("ret", RET) X("exit", EXIT)  \
  X("bar", BAR) X("barrier", BARRIER) X("membar", MEMBAR) X("fence", FENCE)                   \
  X("nanosleep", NANOSLEEP) X("shfl", SHFL) X("vote", VOTE) X("match", MATCH)                \
  X("activemask", ACTIVEMASK) X("addc", ADDC) X("subc", SUBC) X("madc", MADC)               \
  X("prmt", PRMT) X("testp", TESTP) X("trap", TRAP) X("brkpt", BRKPT) X("pmevent", PMEVENT)

enum nbc__ptx_op {
#define NBC__PTX_OP_ENUM(name, tag) NBC__OP_##tag,
  NBC__PTX_OPS(NBC__PTX_OP_ENUM)
#undef NBC__PTX_OP_ENUM
      NBC__OP_COUNT,
  /* forms the decoder specialises (no PTX spelling of their own) */
  NBC__OP_MOV_LOCALSYM, /* mov of a .local symbol: the frame's local base plus an offset */
  NBC__OP_MOV_CLOCK,    /* mov of %clock, %clock64 or %globaltimer */
  NBC__OP_NOP,
  /* the commonest forms with no modifier to honour, chosen by nbc__ptx_specialise: the
   * interpreter runs them without looking at types or flags */
  NBC__OP_MOV64, NBC__OP_MOV32, NBC__OP_ADD64, NBC__OP_ADD32, NBC__OP_SUB64, NBC__OP_SUB32,
  NBC__OP_MUL64, NBC__OP_MUL32, NBC__OP_MULWIDE_S32, NBC__OP_MULWIDE_U32, NBC__OP_MAD64,
  NBC__OP_MAD32, NBC__OP_SHL64, NBC__OP_SHL32, NBC__OP_AND64, NBC__OP_OR64, NBC__OP_XOR64,
  NBC__OP_AND32, NBC__OP_OR32, NBC__OP_XOR32, NBC__OP_CVT_S64_S32, NBC__OP_SETP_S64,
  NBC__OP_SETP_S32, NBC__OP_SETP_U64, NBC__OP_SETP_U32, NBC__OP_SELP64, NBC__OP_LD_PARAM64,
  NBC__OP_LD_PARAM32, NBC__OP_ADD_F64, NBC__OP_MUL_F64, NBC__OP_FMA_F64, NBC__OP_ADD_F32,
  NBC__OP_MUL_F32, NBC__OP_FMA_F32,
};

/* Operation types. ORDER PTX_TYPES */
enum nbc__ptx_type {
  NBC__T_NONE, NBC__T_U8, NBC__T_U16, NBC__T_U32, NBC__T_U64, NBC__T_S8, NBC__T_S16,
  NBC__T_S32, NBC__T_S64, NBC__T_F16, NBC__T_BF16, NBC__T_F32, NBC__T_F64, NBC__T_PRED,
  NBC__T_F16X2, NBC__T_B128,
};

/* State spaces. */
enum nbc__ptx_space {
  NBC__S_GENERIC, NBC__S_GLOBAL, NBC__S_SHARED, NBC__S_LOCAL, NBC__S_PARAM, NBC__S_CONST,
};

/* Rounding modes of float and conversion instructions. */
enum nbc__ptx_rnd {
  NBC__R_NONE, NBC__R_RN, NBC__R_RZ, NBC__R_RM, NBC__R_RP, NBC__R_RNI, NBC__R_RZI,
  NBC__R_RMI, NBC__R_RPI,
};

/* Sub-operations: comparisons (setp/set), boolean combiners, atomic operations, shuffle and
 * vote modes, bar.red operations. */
enum nbc__ptx_sub {
  NBC__C_NONE, NBC__C_EQ, NBC__C_NE, NBC__C_LT, NBC__C_LE, NBC__C_GT, NBC__C_GE, NBC__C_LO,
  NBC__C_LS, NBC__C_HI, NBC__C_HS, NBC__C_EQU, NBC__C_NEU, NBC__C_LTU, NBC__C_LEU,
  NBC__C_GTU, NBC__C_GEU, NBC__C_NUM, NBC__C_NAN, NBC__C_AND, NBC__C_OR, NBC__C_XOR,
  NBC__C_ADD, NBC__C_INC, NBC__C_DEC, NBC__C_CAS, NBC__C_EXCH, NBC__C_MIN, NBC__C_MAX,
  NBC__C_UP, NBC__C_DOWN, NBC__C_BFLY, NBC__C_IDX, NBC__C_ALL, NBC__C_ANY, NBC__C_UNI,
  NBC__C_BALLOT, NBC__C_POPC,
};

/* Instruction flags. */
#define NBC__F_NEG_GUARD 0x01 /* @!%p */
#define NBC__F_FTZ 0x02
#define NBC__F_SAT 0x04
#define NBC__F_HI 0x08   /* mul.hi / mad.hi */
#define NBC__F_WIDE 0x10 /* mul.wide / mad.wide */
#define NBC__F_CC 0x20   /* writes the carry flag */
#define NBC__F_APPROX 0x40
#define NBC__F_TO 0x80         /* cvta.to */
#define NBC__F_LOCALSYM 0x100  /* memory operand based on a .local symbol */
#define NBC__F_NEG_B 0x200     /* setp/selp: the combining predicate is negated */
#define NBC__F_RED 0x400       /* bar.red */
#define NBC__F_SHORT_CMP 0x800 /* setp with a single destination */
#define NBC__F_VISIBLE 0x1000  /* a memory access other threads can see (global, shared) */

#define NBC__NOREG 0xffffffffu

/* One decoded instruction. d: destination registers (vectors use d[0..vec-1]), a b c e:
 * sources; addr_reg + off: a memory operand; target: a branch's instruction index or a
 * call's entry in the module's call table. */
typedef struct nbc__ptx_insn {
  uint8_t op;
  uint8_t type, type2; /* operation type; cvt's source type, setp's second destination */
  uint8_t space;
  uint8_t rnd;
  uint8_t sub, sub2; /* comparison, combiner */
  uint8_t vec;
  uint16_t flags;
  uint32_t guard; /* predicate register or NBC__NOREG */
  uint32_t d[4];
  uint32_t a, b, c, e;
  uint32_t addr_reg;
  int64_t off;
  int32_t target;
  uint32_t line;
} nbc__ptx_insn;

/* A module-scope or function-scope variable. */
typedef struct nbc__ptx_var {
  char *name;
  int space;
  size_t size, align;
  unsigned char *init; /* initial bytes (size of them) or NULL for zeros */
  uint64_t addr;       /* .global/.const: device address set by the driver; .shared: offset */
  int is_extern;       /* .extern .shared: dynamic shared memory */
} nbc__ptx_var;

/* A register of the template that holds a symbol's address, patched at each launch. */
typedef struct nbc__ptx_symfix {
  uint32_t reg;
  int var;
  int64_t off;
} nbc__ptx_symfix;

/* The argument copies of one call site: callee's parameter offset <- caller's, size. */
typedef struct nbc__ptx_call {
  int callee;
  int nargs;
  uint32_t *from, *to, *size; /* nargs of each */
  int has_ret;
  uint32_t ret_from, ret_to, ret_size; /* callee's retval -> caller's variable */
} nbc__ptx_call;

typedef struct nbc__ptx_func {
  char *name;
  int is_entry;
  int defined;
  nbc__ptx_insn *code;
  int ncode;
  uint32_t nregs;     /* registers: specials, declared, constants */
  uint64_t *tmpl;     /* nregs initial values (constants; specials filled per thread) */
  nbc__ptx_symfix *fix;
  int nfix;
  size_t param_size;  /* formal parameters, return value, call-sequence .param variables */
  size_t nformals;
  uint32_t *formal_off, *formal_size;
  size_t local_size;  /* the frame's .local variables */
} nbc__ptx_func;

typedef struct nbc__ptx_module {
  nbc__ptx_func *funcs;
  int nfuncs;
  nbc__ptx_var *vars;
  int nvars;
  nbc__ptx_call *calls;
  int ncalls;
  size_t shared_static; /* bytes of all .shared variables, laid out once for the module */
  size_t shared_align;
} nbc__ptx_module;

/* Special registers every thread has at fixed register numbers. */
enum {
  NBC__SR_TID_X, NBC__SR_TID_Y, NBC__SR_TID_Z, NBC__SR_NTID_X, NBC__SR_NTID_Y, NBC__SR_NTID_Z,
  NBC__SR_CTAID_X, NBC__SR_CTAID_Y, NBC__SR_CTAID_Z, NBC__SR_NCTAID_X, NBC__SR_NCTAID_Y,
  NBC__SR_NCTAID_Z, NBC__SR_LANEID, NBC__SR_WARPID, NBC__SR_NWARPID, NBC__SR_SMID,
  NBC__SR_NSMID, NBC__SR_LANEMASK_EQ, NBC__SR_LANEMASK_LT, NBC__SR_LANEMASK_LE,
  NBC__SR_LANEMASK_GT, NBC__SR_LANEMASK_GE, NBC__SR_DYNSMEM, NBC__SR_TOTALSMEM,
  NBC__SR_SINK, /* `_`: a destination that is discarded */
  NBC__SR_COUNT
};

/* Replaces in->op by a specialised form when one applies (ptx_special.c). */
void nbc__ptx_specialise(nbc__ptx_insn *in);

/* Decodes PTX text. On failure returns 0 and writes "ptx line N: message" into msg. */
int nbc__ptx_load(const char *text, nbc__ptx_module **out, char *msg, size_t msg_size);
void nbc__ptx_free(nbc__ptx_module *m);
/* The index of the entry NAME, or -1. */
int nbc__ptx_find_entry(const nbc__ptx_module *m, const char *name);

/* How a launch reaches device memory: resolve answers the host bytes behind device
 * address addr for at least `bytes` bytes, and the whole range it lies in ([*base,
 * *base + *len)) so that later accesses to that range need no call, or NULL. */
typedef struct nbc__ptx_launch {
  unsigned grid[3], block[3];
  size_t dynamic_shared;
  const unsigned char *params;
  size_t param_size;
  unsigned char *(*resolve)(void *user, uint64_t addr, size_t bytes, uint64_t *base,
                            size_t *len);
  void *user;
  uint64_t instructions; /* out: thread-instructions executed */
} nbc__ptx_launch;

/* Runs entry `entry` over the grid. Returns 1, or 0 with the fault (kernel, block,
 * thread, address, PTX line) in msg. */
int nbc__ptx_run(const nbc__ptx_module *m, int entry, nbc__ptx_launch *launch, char *msg,
                 size_t msg_size);

/* Generic-address windows of shared and local memory (addresses no host pointer takes). */
#define NBC__SHARED_WINDOW 0xfffe000000000000ull
#define NBC__LOCAL_WINDOW 0xfffd000000000000ull
#define NBC__WINDOW_MASK 0xffff000000000000ull

#endif
