/* ptx_decode.c — decodes a PTX module once, at load, into the CPU device's instructions.
 *
 * The decoder walks the tokens (ptx_lex.c) directive by directive: `.version`, `.target`,
 * `.address_size`; variables in `.global`, `.const` and `.shared` with their initialisers;
 * `.entry` and `.func` with their parameter lists and bodies. In a body, `.reg` lines give
 * registers their numbers, `.param`/`.local`/`.shared` variables get their offsets, labels
 * become instruction indices (patched after the body), and each instruction is built by
 * build_insn() from its mnemonic's parts (`add.rn.f32` = op add, rounding rn, type f32) and
 * its operands. Immediates and symbol addresses become registers of the function's
 * template, so every operand the interpreter reads is a register.
 *
 * Anything not understood is an error naming the PTX line and the instruction or
 * directive ("ptx line 42: unsupported instruction 'tex.2d.v4.f32.s32'"); the decoder
 * never accepts what the interpreter would run wrongly. Errors unwind with longjmp to
 * nbc__ptx_load, which frees the partial module.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpudevice/ptx.h"
#include "cpudevice/ptx_lex.h"

#define MAX_OPERANDS 40

/* A register declaration: `%rd<20>` (prefix "%rd", count 20) or `%SP` (count 0). */
typedef struct reg_decl {
  char *name;
  uint32_t base;
  uint32_t count;
} reg_decl;

/* A name a body can refer to: a parameter (offset in the param area), a .local variable
 * (offset in the frame), a module variable, or a label. */
enum { SYM_PARAM, SYM_LOCAL, SYM_VAR };
typedef struct fsym {
  char *name;
  int kind;
  int64_t value; /* offset, or the module variable's index */
  size_t size;
} fsym;

typedef struct label {
  char *name;
  int index;
} label;

typedef struct fixup {
  int insn;
  char *name;
  int line;
} fixup;

typedef struct decoder {
  nbc__ptx_lex lx;
  nbc__ptx_module *m;
  jmp_buf fail;
  char *msg;
  size_t msg_size;
  /* the function being decoded */
  nbc__ptx_func *f;
  reg_decl *regs;
  int nregs, cap_regs;
  fsym *syms;
  int nsyms, cap_syms;
  label *labels;
  int nlabels, cap_labels;
  fixup *fixups;
  int nfixups, cap_fixups;
  int cap_code, cap_tmpl, cap_fix;
  nbc__ptx_func probe; /* the function being decoded, until its body is complete */
} decoder;

/* An operand as written. */
enum { OPD_REG, OPD_IMM, OPD_NAME, OPD_MEM, OPD_VEC, OPD_LIST, OPD_PAIR };
typedef struct operand {
  int kind;
  int neg; /* `!%p` */
  uint32_t reg, reg2;
  char text[1024]; /* immediate text, name, memory base name */
  int64_t off;
  int mem_reg; /* OPD_MEM: 1 when based on a register (reg) */
  uint32_t vec[4];
  int nvec;
  char (*list)[1024];
  int nlist;
} operand;

static _Noreturn void fail(decoder *dc, int line, const char *fmt, ...) {
  char text[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  snprintf(dc->msg, dc->msg_size, "ptx line %d: %s", line, text);
  longjmp(dc->fail, 1);
}

static const char *skip_ws(const char *p) {
  while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
    p++;
  return p;
}

static void *grow(decoder *dc, void *p, int *cap, int need, size_t elem) {
  if (need <= *cap) return p;
  int n = *cap ? *cap * 2 : 16;
  while (n < need)
    n *= 2;
  void *q = realloc(p, (size_t)n * elem);
  if (!q) fail(dc, dc->lx.tok_line, "out of memory");
  memset((char *)q + (size_t)*cap * elem, 0, (size_t)(n - *cap) * elem);
  *cap = n;
  return q;
}

static char *dup_n(decoder *dc, const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (!d) fail(dc, dc->lx.tok_line, "out of memory");
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

/* ---- tokens ---------------------------------------------------------------------------- */

static void tok_text(decoder *dc, char *buf, size_t size) {
  size_t n = dc->lx.len < size - 1 ? dc->lx.len : size - 1;
  memcpy(buf, dc->lx.tok, n);
  buf[n] = '\0';
}

static void expect(decoder *dc, const char *s) {
  if (!nbc__ptx_lex_accept(&dc->lx, s)) {
    char got[64];
    tok_text(dc, got, sizeof got);
    fail(dc, dc->lx.tok_line, "expected '%s', found '%s'", s, dc->lx.kind ? got : "end of text");
  }
}

static void word(decoder *dc, char *buf, size_t size) {
  if (dc->lx.kind != NBC__TOK_WORD) {
    char got[64];
    tok_text(dc, got, sizeof got);
    fail(dc, dc->lx.tok_line, "expected a name, found '%s'", dc->lx.kind ? got : "end of text");
  }
  if (dc->lx.len >= size) fail(dc, dc->lx.tok_line, "name too long");
  tok_text(dc, buf, size);
  nbc__ptx_lex_next(&dc->lx);
}

static long long number(decoder *dc) {
  int neg = nbc__ptx_lex_accept(&dc->lx, "-");
  char buf[64], *end;
  word(dc, buf, sizeof buf);
  long long v = strtoll(buf, &end, 0);
  if (*end && !(*end == 'U' && !end[1])) fail(dc, dc->lx.tok_line, "expected a number, found '%s'", buf);
  return neg ? -v : v;
}

/* ---- types ----------------------------------------------------------------------------- */

static const struct {
  const char *name;
  int type;
  size_t size;
} types[] = {{".b8", NBC__T_U8, 1},      {".u8", NBC__T_U8, 1},     {".s8", NBC__T_S8, 1},
             {".b16", NBC__T_U16, 2},    {".u16", NBC__T_U16, 2},   {".s16", NBC__T_S16, 2},
             {".b32", NBC__T_U32, 4},    {".u32", NBC__T_U32, 4},   {".s32", NBC__T_S32, 4},
             {".b64", NBC__T_U64, 8},    {".u64", NBC__T_U64, 8},   {".s64", NBC__T_S64, 8},
             {".f16", NBC__T_F16, 2},    {".bf16", NBC__T_BF16, 2}, {".f32", NBC__T_F32, 4},
             {".f64", NBC__T_F64, 8},    {".pred", NBC__T_PRED, 1}, {".f16x2", NBC__T_F16X2, 4},
             {".b128", NBC__T_B128, 16}};

static int type_of(const char *s, size_t *size) {
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (strcmp(types[i].name, s) == 0) {
      if (size) *size = types[i].size;
      return types[i].type;
    }
  return NBC__T_NONE;
}


/* ---- variables ------------------------------------------------------------------------- */

static int space_of(const char *s) {
  if (!strcmp(s, ".global")) return NBC__S_GLOBAL;
  if (!strcmp(s, ".shared")) return NBC__S_SHARED;
  if (!strcmp(s, ".local")) return NBC__S_LOCAL;
  if (!strcmp(s, ".param")) return NBC__S_PARAM;
  if (!strcmp(s, ".const")) return NBC__S_CONST;
  return -1;
}

static uint64_t imm_bits(decoder *dc, const char *text, int t, int line);

/* Writes one initialiser element of type t (size bytes) at p. */
static void init_element(decoder *dc, unsigned char *p, int t, size_t size) {
  char buf[80] = "-";
  int neg = nbc__ptx_lex_accept(&dc->lx, "-");
  int line = dc->lx.tok_line;
  word(dc, buf + neg, sizeof buf - 1);
  uint64_t bits = imm_bits(dc, buf, t, line);
  memcpy(p, &bits, size); /* little-endian: the low bytes */
}

/* Parses "[.align N] [.vN] .type name[dims] [= init];" after the state space. Returns the
 * variable (not yet added anywhere). */
static nbc__ptx_var parse_var(decoder *dc, int space, int is_extern) {
  nbc__ptx_var v = {0};
  v.space = space;
  v.is_extern = is_extern;
  char buf[1024];
  int t = NBC__T_NONE, vec = 1;
  size_t tsize = 0;
  for (;;) {
    if (nbc__ptx_lex_accept(&dc->lx, ".align")) {
      v.align = (size_t)number(dc);
    } else if (nbc__ptx_lex_accept(&dc->lx, ".v2")) {
      vec = 2;
    } else if (nbc__ptx_lex_accept(&dc->lx, ".v4")) {
      vec = 4;
    } else if (nbc__ptx_lex_accept(&dc->lx, ".ptr")) {
    } else {
      break;
    }
  }
  int line = dc->lx.tok_line;
  word(dc, buf, sizeof buf);
  t = type_of(buf, &tsize);
  if (t == NBC__T_NONE) fail(dc, line, "unsupported variable type '%s'", buf);
  tsize *= (size_t)vec;
  word(dc, buf, sizeof buf);
  v.name = dup_n(dc, buf, strlen(buf));
  size_t count = 1;
  while (nbc__ptx_lex_accept(&dc->lx, "[")) {
    if (nbc__ptx_lex_accept(&dc->lx, "]")) {
      count = 0; /* [] : extern array (dynamic shared memory) */
      continue;
    }
    count *= (size_t)number(dc);
    expect(dc, "]");
  }
  v.size = tsize * count;
  if (!v.align) v.align = tsize ? tsize : 1;
  if (nbc__ptx_lex_accept(&dc->lx, "=")) {
    if (!v.size) fail(dc, dc->lx.tok_line, "initialiser of an unsized variable '%s'", v.name);
    v.init = calloc(1, v.size);
    if (!v.init) fail(dc, line, "out of memory");
    size_t esize = tsize / (size_t)vec, n = 0;
    int depth = 0;
    do {
      while (nbc__ptx_lex_accept(&dc->lx, "{"))
        depth++;
      if (n >= v.size / esize) fail(dc, dc->lx.tok_line, "too many initialisers for '%s'", v.name);
      init_element(dc, v.init + n * esize, t, esize);
      n++;
      while (depth > 0 && nbc__ptx_lex_accept(&dc->lx, "}"))
        depth--;
    } while (nbc__ptx_lex_accept(&dc->lx, ","));
    if (depth) expect(dc, "}");
  }
  return v;
}

static int add_module_var(decoder *dc, nbc__ptx_var v) {
  nbc__ptx_module *m = dc->m;
  nbc__ptx_var *grown = realloc(m->vars, (size_t)(m->nvars + 1) * sizeof *grown);
  if (!grown) {
    free(v.name);
    free(v.init);
    fail(dc, dc->lx.tok_line, "out of memory");
  }
  m->vars = grown;
  if (v.space == NBC__S_SHARED) {
    size_t al = v.align ? v.align : 1;
    if (al > m->shared_align) m->shared_align = al;
    if (!v.is_extern) {
      m->shared_static = (m->shared_static + al - 1) / al * al;
      v.addr = m->shared_static;
      m->shared_static += v.size;
    }
  }
  m->vars[m->nvars] = v;
  return m->nvars++;
}

static int find_module_var(const nbc__ptx_module *m, const char *name) {
  for (int i = m->nvars - 1; i >= 0; i--)
    if (!strcmp(m->vars[i].name, name)) return i;
  return -1;
}

/* ---- registers, symbols and labels of the function being decoded ---------------------- */

static uint32_t new_regs(decoder *dc, uint32_t n) {
  nbc__ptx_func *f = dc->f;
  uint32_t base = f->nregs;
  f->tmpl = grow(dc, f->tmpl, &dc->cap_tmpl, (int)(f->nregs + n), sizeof *f->tmpl);
  f->nregs += n;
  return base;
}

static void declare_regs(decoder *dc, const char *name, uint32_t count) {
  dc->regs = grow(dc, dc->regs, &dc->cap_regs, dc->nregs + 1, sizeof *dc->regs);
  reg_decl *r = &dc->regs[dc->nregs++];
  r->name = dup_n(dc, name, strlen(name));
  r->count = count;
  r->base = new_regs(dc, count ? count : 1);
}

static const char *const specials[NBC__SR_COUNT] = {
    "%tid.x",         "%tid.y",         "%tid.z",         "%ntid.x",       "%ntid.y",
    "%ntid.z",        "%ctaid.x",       "%ctaid.y",       "%ctaid.z",      "%nctaid.x",
    "%nctaid.y",      "%nctaid.z",      "%laneid",        "%warpid",       "%nwarpid",
    "%smid",          "%nsmid",         "%lanemask_eq",   "%lanemask_lt",  "%lanemask_le",
    "%lanemask_gt",   "%lanemask_ge",   "%dynamic_smem_size", "%total_smem_size", "_"};

/* The register named name, or NBC__NOREG. */
static uint32_t find_reg(decoder *dc, const char *name) {
  for (uint32_t i = 0; i < NBC__SR_COUNT; i++)
    if (!strcmp(specials[i], name)) return i;
  size_t n = strlen(name), digits = 0;
  while (digits < n && name[n - 1 - digits] >= '0' && name[n - 1 - digits] <= '9')
    digits++;
  for (int i = dc->nregs - 1; i >= 0; i--) {
    reg_decl *r = &dc->regs[i];
    if (r->count == 0 && !strcmp(r->name, name)) return r->base;
    if (r->count && digits && strlen(r->name) == n - digits &&
        !strncmp(r->name, name, n - digits)) {
      unsigned long k = strtoul(name + n - digits, NULL, 10);
      if (k < r->count) return r->base + (uint32_t)k;
    }
  }
  return NBC__NOREG;
}

static void add_sym(decoder *dc, const char *name, int kind, int64_t value, size_t size) {
  dc->syms = grow(dc, dc->syms, &dc->cap_syms, dc->nsyms + 1, sizeof *dc->syms);
  fsym *s = &dc->syms[dc->nsyms++];
  s->name = dup_n(dc, name, strlen(name));
  s->kind = kind;
  s->value = value;
  s->size = size;
}

/* The function-scope symbol name (latest declaration first), else a module variable. */
static int find_sym(decoder *dc, const char *name, fsym *out) {
  for (int i = dc->nsyms - 1; i >= 0; i--)
    if (!strcmp(dc->syms[i].name, name)) {
      *out = dc->syms[i];
      return 1;
    }
  int v = find_module_var(dc->m, name);
  if (v < 0) return 0;
  out->name = NULL;
  out->kind = SYM_VAR;
  out->value = v;
  out->size = dc->m->vars[v].size;
  return 1;
}

/* A parameter of size bytes aligned to align in the function's param area. */
static uint32_t param_slot(decoder *dc, size_t size, size_t align) {
  nbc__ptx_func *f = dc->f;
  if (!align) align = 1;
  f->param_size = (f->param_size + align - 1) / align * align;
  uint32_t off = (uint32_t)f->param_size;
  f->param_size += size;
  return off;
}

/* ---- functions ------------------------------------------------------------------------- */

static int find_func(const nbc__ptx_module *m, const char *name) {
  for (int i = 0; i < m->nfuncs; i++)
    if (!strcmp(m->funcs[i].name, name)) return i;
  return -1;
}

static int nbc_func_index(decoder *dc, const char *name, int is_entry) {
  nbc__ptx_module *m = dc->m;
  int i = find_func(m, name);
  if (i >= 0) return i;
  nbc__ptx_func *grown = realloc(m->funcs, (size_t)(m->nfuncs + 1) * sizeof *grown);
  if (!grown) fail(dc, dc->lx.tok_line, "out of memory");
  m->funcs = grown;
  nbc__ptx_func *f = &m->funcs[m->nfuncs];
  memset(f, 0, sizeof *f);
  f->name = dup_n(dc, name, strlen(name));
  f->is_entry = is_entry;
  return m->nfuncs++;
}

/* One ".param [.align N] .type name[n]" of a parameter list; adds it to the param area
 * and, with formals set, to the function's formal list. */
static void parse_param_decl(decoder *dc, int formal) {
  int line = dc->lx.tok_line;
  expect(dc, ".param");
  while (nbc__ptx_lex_is(&dc->lx, ".ptr") || nbc__ptx_lex_is(&dc->lx, ".global") ||
         nbc__ptx_lex_is(&dc->lx, ".shared") || nbc__ptx_lex_is(&dc->lx, ".const") ||
         nbc__ptx_lex_is(&dc->lx, ".local"))
    nbc__ptx_lex_next(&dc->lx);
  nbc__ptx_var v = parse_var(dc, NBC__S_PARAM, 0);
  if (v.init) fail(dc, line, "a parameter cannot have an initialiser");
  uint32_t off = param_slot(dc, v.size, v.align);
  add_sym(dc, v.name, SYM_PARAM, off, v.size);
  if (formal) {
    nbc__ptx_func *f = dc->f;
    f->formal_off = realloc(f->formal_off, (f->nformals + 1) * sizeof *f->formal_off);
    f->formal_size = realloc(f->formal_size, (f->nformals + 1) * sizeof *f->formal_size);
    if (!f->formal_off || !f->formal_size) fail(dc, line, "out of memory");
    f->formal_off[f->nformals] = off;
    f->formal_size[f->nformals] = (uint32_t)v.size;
    f->nformals++;
  }
  free(v.name);
}

static void reset_function_scope(decoder *dc) {
  for (int i = 0; i < dc->nregs; i++)
    free(dc->regs[i].name);
  for (int i = 0; i < dc->nsyms; i++)
    free(dc->syms[i].name);
  for (int i = 0; i < dc->nlabels; i++)
    free(dc->labels[i].name);
  for (int i = 0; i < dc->nfixups; i++)
    free(dc->fixups[i].name);
  dc->nregs = dc->nsyms = dc->nlabels = dc->nfixups = 0;
}

/* ---- instructions ---------------------------------------------------------------------- */

static nbc__ptx_insn *new_insn(decoder *dc, int op, int line) {
  nbc__ptx_func *f = dc->f;
  f->code = grow(dc, f->code, &dc->cap_code, f->ncode + 1, sizeof *f->code);
  nbc__ptx_insn *in = &f->code[f->ncode++];
  memset(in, 0, sizeof *in);
  in->op = (uint8_t)op;
  in->guard = NBC__NOREG;
  in->addr_reg = NBC__NOREG;
  in->a = in->b = in->c = in->e = NBC__NOREG;
  for (int i = 0; i < 4; i++)
    in->d[i] = NBC__NOREG;
  in->line = (uint32_t)line;
  return in;
}

static const struct {
  const char *name;
  int op;
} op_names[] = {
#define NBC__PTX_OP_NAME(name, tag) {name, NBC__OP_##tag},
    NBC__PTX_OPS(NBC__PTX_OP_NAME)
#undef NBC__PTX_OP_NAME
};

static const struct {
  const char *name;
  int sub;
} sub_names[] = {{"eq", NBC__C_EQ},     {"ne", NBC__C_NE},     {"lt", NBC__C_LT},
                 {"le", NBC__C_LE},     {"gt", NBC__C_GT},     {"ge", NBC__C_GE},
                 {"lo", NBC__C_LO},     {"ls", NBC__C_LS},     {"hi", NBC__C_HI},
                 {"hs", NBC__C_HS},     {"equ", NBC__C_EQU},   {"neu", NBC__C_NEU},
                 {"ltu", NBC__C_LTU},   {"leu", NBC__C_LEU},   {"gtu", NBC__C_GTU},
                 {"geu", NBC__C_GEU},   {"num", NBC__C_NUM},   {"nan", NBC__C_NAN},
                 {"and", NBC__C_AND},   {"or", NBC__C_OR},     {"xor", NBC__C_XOR},
                 {"add", NBC__C_ADD},   {"inc", NBC__C_INC},   {"dec", NBC__C_DEC},
                 {"cas", NBC__C_CAS},   {"exch", NBC__C_EXCH}, {"min", NBC__C_MIN},
                 {"max", NBC__C_MAX},   {"up", NBC__C_UP},     {"down", NBC__C_DOWN},
                 {"bfly", NBC__C_BFLY}, {"idx", NBC__C_IDX},   {"all", NBC__C_ALL},
                 {"any", NBC__C_ANY},   {"uni", NBC__C_UNI},   {"ballot", NBC__C_BALLOT},
                 {"popc", NBC__C_POPC}};

static const char *const rnd_names[] = {"", "rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi"};

/* Modifiers with no effect on a single-threaded-per-block CPU execution: memory orders
 * and scopes, cache hints, `.uni`, `.sync`, `.aligned`. */
static const char *const ignored_mods[] = {"nc",  "volatile", "relaxed", "acquire", "release",
                                           "acq_rel", "sc", "gpu", "cta", "sys", "aligned",
                                           "sync", "gl", "full", "ca", "cg", "cs", "lu", "cv",
                                           "wb", "wt", "noftz"};

typedef struct mnemonic {
  int op;
  int types[3], ntypes;
  int rnd, sub, sub2, space, vec;
  uint16_t flags;
  int warp;   /* bar.warp */
  int arrive; /* bar.arrive */
} mnemonic;

static void parse_mnemonic(decoder *dc, const char *text, mnemonic *mn, int line) {
  char buf[128];
  snprintf(buf, sizeof buf, "%s", text);
  memset(mn, 0, sizeof *mn);
  mn->space = NBC__S_GENERIC;
  mn->op = -1;
  char *save = NULL, *part = strtok_r(buf, ".", &save);
  for (size_t i = 0; part && i < sizeof op_names / sizeof op_names[0]; i++)
    if (!strcmp(op_names[i].name, part)) mn->op = op_names[i].op;
  if (mn->op < 0) fail(dc, line, "unsupported instruction '%s'", text);
  while ((part = strtok_r(NULL, ".", &save))) {
    char dotted[64];
    snprintf(dotted, sizeof dotted, ".%s", part);
    int t = type_of(dotted, NULL), s = space_of(dotted), done = 0;
    if (t != NBC__T_NONE && mn->ntypes < 3) {
      mn->types[mn->ntypes++] = t;
      continue;
    }
    if (s >= 0) {
      mn->space = s;
      continue;
    }
    for (int r = 1; r < (int)(sizeof rnd_names / sizeof rnd_names[0]); r++)
      if (!strcmp(rnd_names[r], part)) mn->rnd = r, done = 1;
    for (size_t k = 0; !done && k < sizeof sub_names / sizeof sub_names[0]; k++)
      if (!strcmp(sub_names[k].name, part)) {
        if (!mn->sub)
          mn->sub = sub_names[k].sub;
        else
          mn->sub2 = sub_names[k].sub;
        done = 1;
      }
    for (size_t k = 0; !done && k < sizeof ignored_mods / sizeof ignored_mods[0]; k++)
      if (!strcmp(ignored_mods[k], part)) done = 1;
    if (done) continue;
    if (!strcmp(part, "ftz")) mn->flags |= NBC__F_FTZ;
    else if (!strcmp(part, "sat")) mn->flags |= NBC__F_SAT;
    else if (!strcmp(part, "approx")) mn->flags |= NBC__F_APPROX;
    else if (!strcmp(part, "wide")) mn->flags |= NBC__F_WIDE;
    else if (!strcmp(part, "cc")) mn->flags |= NBC__F_CC;
    else if (!strcmp(part, "to")) mn->flags |= NBC__F_TO;
    else if (!strcmp(part, "red")) mn->flags |= NBC__F_RED;
    else if (!strcmp(part, "warp")) mn->warp = 1;
    else if (!strcmp(part, "arrive")) mn->arrive = 1;
    else if (!strcmp(part, "v2")) mn->vec = 2;
    else if (!strcmp(part, "v4")) mn->vec = 4;
    else fail(dc, line, "unsupported modifier '.%s' of instruction '%s'", part, text);
  }
  /* .lo/.hi of mul, mad and friends are the halves of the product, not comparisons */
  if (mn->op == NBC__OP_MUL || mn->op == NBC__OP_MAD || mn->op == NBC__OP_MADC) {
    if (mn->sub == NBC__C_HI) mn->flags |= NBC__F_HI;
    if (mn->sub == NBC__C_HI || mn->sub == NBC__C_LO) mn->sub = NBC__C_NONE;
  }
}

static void parse_operand(decoder *dc, operand *o) {
  nbc__ptx_lex *lx = &dc->lx;
  char buf[1024];
  memset(o, 0, sizeof *o);
  int line = lx->tok_line;
  if (nbc__ptx_lex_accept(lx, "[")) {
    o->kind = OPD_MEM;
    if (nbc__ptx_lex_is(lx, "-") || (lx->kind == NBC__TOK_WORD && lx->tok[0] >= '0' &&
                                      lx->tok[0] <= '9')) {
      o->off = number(dc);
    } else {
      word(dc, buf, sizeof buf);
      uint32_t r = find_reg(dc, buf);
      if (r != NBC__NOREG) {
        o->mem_reg = 1;
        o->reg = r;
      } else {
        snprintf(o->text, sizeof o->text, "%s", buf);
      }
      if (nbc__ptx_lex_accept(lx, "+")) o->off = number(dc);
      else if (nbc__ptx_lex_is(lx, "-")) o->off = number(dc);
    }
    expect(dc, "]");
    return;
  }
  if (nbc__ptx_lex_accept(lx, "{")) {
    o->kind = OPD_VEC;
    do {
      word(dc, buf, sizeof buf);
      uint32_t r = find_reg(dc, buf);
      if (r == NBC__NOREG) fail(dc, line, "unknown register '%s'", buf);
      if (o->nvec == 4) fail(dc, line, "more than 4 elements in a vector operand");
      o->vec[o->nvec++] = r;
    } while (nbc__ptx_lex_accept(lx, ","));
    expect(dc, "}");
    return;
  }
  if (nbc__ptx_lex_accept(lx, "(")) {
    o->kind = OPD_LIST;
    o->list = calloc(MAX_OPERANDS, sizeof *o->list);
    if (!o->list) fail(dc, line, "out of memory");
    if (!nbc__ptx_lex_is(lx, ")")) do {
        if (o->nlist == MAX_OPERANDS) fail(dc, line, "too many call arguments");
        word(dc, o->list[o->nlist++], sizeof o->list[0]);
      } while (nbc__ptx_lex_accept(lx, ","));
    expect(dc, ")");
    return;
  }
  o->neg = nbc__ptx_lex_accept(lx, "!");
  if (nbc__ptx_lex_accept(lx, "-")) {
    o->kind = OPD_IMM;
    o->text[0] = '-';
    word(dc, o->text + 1, sizeof o->text - 1);
    return;
  }
  word(dc, buf, sizeof buf);
  uint32_t r = find_reg(dc, buf);
  if (r != NBC__NOREG) {
    o->kind = OPD_REG;
    o->reg = r;
    if (nbc__ptx_lex_accept(lx, "|")) {
      word(dc, buf, sizeof buf);
      o->kind = OPD_PAIR;
      o->reg2 = find_reg(dc, buf);
      if (o->reg2 == NBC__NOREG) fail(dc, line, "unknown register '%s'", buf);
    }
    return;
  }
  snprintf(o->text, sizeof o->text, "%s", buf);
  if (buf[0] >= '0' && buf[0] <= '9') {
    o->kind = OPD_IMM;
    return;
  }
  if (buf[0] == '%' && strcmp(buf, "%clock") && strcmp(buf, "%clock64") &&
      strcmp(buf, "%globaltimer"))
    fail(dc, line, "unknown register '%s'", buf);
  o->kind = OPD_NAME;
  if (nbc__ptx_lex_accept(lx, "+")) o->off = number(dc);
}

/* The bits of immediate text for an operand of type t. */
static uint64_t imm_bits(decoder *dc, const char *text, int t, int line) {
  int neg = text[0] == '-';
  const char *s = neg ? text + 1 : text;
  uint64_t bits;
  char *end;
  if (s[0] == '0' && (s[1] == 'f' || s[1] == 'F') && s[2]) {
    bits = strtoull(s + 2, &end, 16);
    if (neg) bits ^= 0x80000000u;
    if (t == NBC__T_F64) { /* an f32 literal where f64 is wanted: its value */
      uint32_t b = (uint32_t)bits;
      float fv;
      memcpy(&fv, &b, 4);
      double dv = fv;
      memcpy(&bits, &dv, 8);
    }
  } else if (s[0] == '0' && (s[1] == 'd' || s[1] == 'D') && s[2]) {
    bits = strtoull(s + 2, &end, 16);
    if (neg) bits ^= 0x8000000000000000ull;
    if (t == NBC__T_F32) {
      double dv;
      memcpy(&dv, &bits, 8);
      float fv = (float)dv;
      uint32_t b;
      memcpy(&b, &fv, 4);
      bits = b;
    }
  } else if (strchr(s, '.') || ((t == NBC__T_F32 || t == NBC__T_F64) &&
                                !(s[0] == '0' && (s[1] == 'x' || s[1] == 'X')))) {
    double dv = strtod(s, &end);
    if (neg) dv = -dv;
    if (t == NBC__T_F32) {
      float fv = (float)dv;
      uint32_t b;
      memcpy(&b, &fv, 4);
      bits = b;
    } else {
      memcpy(&bits, &dv, 8);
    }
  } else {
    bits = strtoull(s, &end, 0);
    if (*end == 'U' && !end[1]) end++;
    if (neg) bits = 0 - bits;
  }
  if (*end) fail(dc, line, "malformed number '%s'", text);
  return bits;
}

static uint32_t const_reg(decoder *dc, uint64_t value) {
  uint32_t r = new_regs(dc, 1);
  dc->f->tmpl[r] = value;
  return r;
}

/* A register holding the address of module variable var plus off (patched at launch). */
static uint32_t var_reg(decoder *dc, int var, int64_t off) {
  uint32_t r = new_regs(dc, 1);
  nbc__ptx_func *f = dc->f;
  f->fix = grow(dc, f->fix, &dc->cap_fix, f->nfix + 1, sizeof *f->fix);
  f->fix[f->nfix].reg = r;
  f->fix[f->nfix].var = var;
  f->fix[f->nfix].off = off;
  f->nfix++;
  return r;
}

/* The register that holds source operand o (of type t). */
static uint32_t src(decoder *dc, const operand *o, int t, int line) {
  fsym s;
  switch (o->kind) {
  case OPD_REG:
    return o->reg;
  case OPD_IMM:
    return const_reg(dc, imm_bits(dc, o->text, t, line));
  case OPD_NAME:
    if (!strcmp(o->text, "WARP_SZ")) return const_reg(dc, 32); /* PTX's warp-size constant */
    if (!find_sym(dc, o->text, &s)) fail(dc, line, "unknown name '%s'", o->text);
    if (s.kind == SYM_PARAM) return const_reg(dc, (uint64_t)(s.value + o->off));
    if (s.kind == SYM_VAR) return var_reg(dc, (int)s.value, o->off);
    fail(dc, line, "the address of local variable '%s' taken outside mov", o->text);
  default:
    fail(dc, line, "expected a register or a constant operand");
  }
}

static uint32_t dst(decoder *dc, const operand *o, int line) {
  if (o->kind != OPD_REG) fail(dc, line, "expected a destination register");
  return o->reg;
}

/* The destination `d` or `d|p` (a value and a predicate). */
static void dst_pair(decoder *dc, nbc__ptx_insn *in, const operand *o, int line) {
  if (o->kind == OPD_PAIR) {
    in->d[0] = o->reg;
    in->d[1] = o->reg2;
  } else {
    in->d[0] = dst(dc, o, line);
  }
}

/* Fills in's memory operand from o. */
static void mem_operand(decoder *dc, nbc__ptx_insn *in, const operand *o, int line) {
  if (o->kind != OPD_MEM) fail(dc, line, "expected a memory operand [address]");
  in->off = o->off;
  if (o->mem_reg) {
    in->addr_reg = o->reg;
    return;
  }
  if (!o->text[0]) return; /* [absolute] */
  fsym s;
  if (!find_sym(dc, o->text, &s)) fail(dc, line, "unknown name '%s'", o->text);
  if (s.kind == SYM_PARAM) {
    in->off += s.value;
  } else if (s.kind == SYM_LOCAL) {
    in->off += s.value;
    in->flags |= NBC__F_LOCALSYM;
  } else {
    in->addr_reg = var_reg(dc, (int)s.value, 0);
  }
}

static void need(decoder *dc, int n, int want, const char *text, int line) {
  if (n != want)
    fail(dc, line, "'%s' takes %d operands, found %d", text, want, n);
}

/* call [.uni] [(ret),] func[, (args)] */
static void build_call(decoder *dc, nbc__ptx_insn *in, operand *o, int n, int line) {
  int k = 0;
  operand *ret = NULL, *args = NULL;
  if (k < n && o[k].kind == OPD_LIST) ret = &o[k++];
  if (k >= n || o[k].kind != OPD_NAME)
    fail(dc, line, "unsupported call form (only direct calls of a named function)");
  int callee = find_func(dc->m, o[k].text);
  if (callee < 0) fail(dc, line, "call of unknown function '%s'", o[k].text);
  k++;
  if (k < n && o[k].kind == OPD_LIST) args = &o[k++];
  if (k != n) fail(dc, line, "unsupported call form");
  nbc__ptx_func *cf = &dc->m->funcs[callee];
  if (!cf->defined && !strcmp(cf->name, "vprintf"))
    fail(dc, line, "unsupported call of 'vprintf' (kernel print)");
  int nargs = args ? args->nlist : 0;
  size_t first = ret ? 1 : 0;
  if ((size_t)nargs + first != cf->nformals)
    fail(dc, line, "call of '%s' with %d arguments, it takes %d", cf->name, nargs,
         (int)(cf->nformals - first));
  nbc__ptx_module *m = dc->m;
  nbc__ptx_call *grown = realloc(m->calls, (size_t)(m->ncalls + 1) * sizeof *grown);
  if (!grown) fail(dc, line, "out of memory");
  m->calls = grown;
  nbc__ptx_call *c = &m->calls[m->ncalls];
  memset(c, 0, sizeof *c);
  m->ncalls++;
  c->callee = callee;
  c->nargs = nargs;
  c->from = calloc((size_t)nargs + 1, sizeof *c->from);
  c->to = calloc((size_t)nargs + 1, sizeof *c->to);
  c->size = calloc((size_t)nargs + 1, sizeof *c->size);
  if (!c->from || !c->to || !c->size) fail(dc, line, "out of memory");
  for (int i = 0; i < nargs; i++) {
    fsym s;
    if (!find_sym(dc, args->list[i], &s) || s.kind != SYM_PARAM)
      fail(dc, line, "call argument '%s' is not a .param variable", args->list[i]);
    c->from[i] = (uint32_t)s.value;
    c->to[i] = cf->formal_off[first + (size_t)i];
    c->size[i] = cf->formal_size[first + (size_t)i];
  }
  if (ret) {
    fsym s;
    if (ret->nlist != 1 || !find_sym(dc, ret->list[0], &s) || s.kind != SYM_PARAM)
      fail(dc, line, "call's return value must be one .param variable");
    c->has_ret = 1;
    c->ret_from = cf->formal_off[0];
    c->ret_to = (uint32_t)s.value;
    c->ret_size = cf->formal_size[0];
  }
  in->target = m->ncalls - 1;
}

static void build_insn(decoder *dc, nbc__ptx_insn *in, const mnemonic *mn, operand *o, int n,
                       const char *text, int line) {
  int t = mn->ntypes ? mn->types[0] : NBC__T_NONE;
  in->type = (uint8_t)t;
  in->type2 = (uint8_t)(mn->ntypes > 1 ? mn->types[1] : t);
  in->rnd = (uint8_t)mn->rnd;
  in->sub = (uint8_t)mn->sub;
  in->sub2 = (uint8_t)mn->sub2;
  in->space = (uint8_t)mn->space;
  in->vec = (uint8_t)(mn->vec ? mn->vec : 1);
  in->flags |= mn->flags;
  int st = t; /* the type of source operands */
  if ((mn->op == NBC__OP_LD || mn->op == NBC__OP_LDU || mn->op == NBC__OP_ST ||
       mn->op == NBC__OP_ATOM || mn->op == NBC__OP_RED) &&
      (mn->space == NBC__S_GENERIC || mn->space == NBC__S_GLOBAL || mn->space == NBC__S_SHARED))
    in->flags |= NBC__F_VISIBLE;
  if ((t == NBC__T_F16X2 || t == NBC__T_B128) && mn->op != NBC__OP_MOV && mn->op != NBC__OP_LD &&
      mn->op != NBC__OP_ST)
    fail(dc, line, "unsupported instruction '%s' (packed or 128-bit type)", text);
  switch (mn->op) {
  case NBC__OP_MOV:
    need(dc, n, 2, text, line);
    if (o[1].kind == OPD_NAME) {
      fsym s;
      if (find_sym(dc, o[1].text, &s) && s.kind == SYM_LOCAL) {
        in->op = NBC__OP_MOV_LOCALSYM;
        in->d[0] = dst(dc, &o[0], line);
        in->off = s.value + o[1].off;
        return;
      }
      if (find_func(dc->m, o[1].text) >= 0)
        fail(dc, line, "unsupported: the address of function '%s'", o[1].text);
    }
    if (o[1].kind == OPD_NAME && o[1].text[0] == '%') { /* %clock64, %globaltimer */
      in->op = NBC__OP_MOV_CLOCK;
      in->d[0] = dst(dc, &o[0], line);
      return;
    }
    if (o[0].kind == OPD_VEC) { /* unpack: mov.b64 {lo, hi}, %rd */
      in->vec = (uint8_t)o[0].nvec;
      for (int i = 0; i < o[0].nvec; i++)
        in->d[i] = o[0].vec[i];
      in->a = src(dc, &o[1], t, line);
      in->sub = 1;
      return;
    }
    if (o[1].kind == OPD_VEC) { /* pack: mov.b64 %rd, {lo, hi} */
      in->vec = (uint8_t)o[1].nvec;
      in->d[0] = dst(dc, &o[0], line);
      for (int i = 0; i < o[1].nvec; i++)
        in->d[1 + i] = o[1].vec[i];
      in->sub = 2;
      return;
    }
    in->d[0] = dst(dc, &o[0], line);
    in->a = src(dc, &o[1], t, line);
    return;
  case NBC__OP_LD:
  case NBC__OP_LDU:
    in->op = NBC__OP_LD;
    need(dc, n, 2, text, line);
    if (o[0].kind == OPD_VEC) {
      for (int i = 0; i < o[0].nvec; i++)
        in->d[i] = o[0].vec[i];
      if (o[0].nvec != in->vec) fail(dc, line, "vector operand does not match '%s'", text);
    } else {
      in->d[0] = dst(dc, &o[0], line);
    }
    mem_operand(dc, in, &o[1], line);
    return;
  case NBC__OP_ST:
    need(dc, n, 2, text, line);
    mem_operand(dc, in, &o[0], line);
    if (o[1].kind == OPD_VEC) {
      for (int i = 0; i < o[1].nvec; i++)
        in->d[i] = o[1].vec[i];
      if (o[1].nvec != in->vec) fail(dc, line, "vector operand does not match '%s'", text);
    } else {
      in->d[0] = src(dc, &o[1], t, line);
    }
    return;
  case NBC__OP_ATOM:
  case NBC__OP_RED: {
    int k = 0;
    if (mn->op == NBC__OP_ATOM) in->d[0] = dst(dc, &o[k++], line);
    if (n < k + 2) fail(dc, line, "'%s' lacks operands", text);
    mem_operand(dc, in, &o[k++], line);
    in->a = src(dc, &o[k++], t, line);
    if (mn->sub == NBC__C_CAS) {
      if (n != k + 1) fail(dc, line, "'%s' takes a compare and a new value", text);
      in->b = src(dc, &o[k++], t, line);
    }
    if (k != n) fail(dc, line, "too many operands for '%s'", text);
    if (mn->sub < NBC__C_AND || mn->sub > NBC__C_MAX)
      fail(dc, line, "unsupported atomic operation in '%s'", text);
    return;
  }
  case NBC__OP_BRA:
    need(dc, n, 1, text, line);
    if (o[0].kind != OPD_NAME) fail(dc, line, "unsupported: indirect branch");
    dc->fixups = grow(dc, dc->fixups, &dc->cap_fixups, dc->nfixups + 1, sizeof *dc->fixups);
    dc->fixups[dc->nfixups].insn = (int)(in - dc->f->code);
    dc->fixups[dc->nfixups].name = dup_n(dc, o[0].text, strlen(o[0].text));
    dc->fixups[dc->nfixups].line = line;
    dc->nfixups++;
    return;
  case NBC__OP_CALL:
    build_call(dc, in, o, n, line);
    return;
  case NBC__OP_RET:
  case NBC__OP_EXIT:
  case NBC__OP_MEMBAR:
  case NBC__OP_FENCE:
  case NBC__OP_TRAP:
  case NBC__OP_BRKPT:
    need(dc, n, 0, text, line);
    if (mn->op == NBC__OP_MEMBAR || mn->op == NBC__OP_FENCE) in->op = NBC__OP_NOP;
    return;
  case NBC__OP_NANOSLEEP:
  case NBC__OP_PMEVENT:
    in->op = NBC__OP_NOP;
    return;
  case NBC__OP_BAR:
  case NBC__OP_BARRIER:
    in->op = NBC__OP_BAR;
    if (mn->arrive) fail(dc, line, "unsupported instruction '%s'", text);
    if (mn->warp) { /* bar.warp.sync mask */
      need(dc, n, 1, text, line);
      in->sub = NBC__C_NONE;
      in->a = src(dc, &o[0], NBC__T_U32, line);
      in->type = NBC__T_NONE;
      in->vec = 32; /* marks the warp form */
      return;
    }
    if (mn->flags & NBC__F_RED) { /* bar.red.op.type d, id, [count,] p */
      if (n != 3) fail(dc, line, "unsupported form of '%s'", text);
      in->d[0] = dst(dc, &o[0], line);
      in->a = src(dc, &o[2], NBC__T_PRED, line);
      in->flags |= o[2].neg ? NBC__F_NEG_B : 0;
      return;
    }
    if (n < 1 || n > 2) fail(dc, line, "unsupported form of '%s'", text);
    if (o[0].kind != OPD_IMM || imm_bits(dc, o[0].text, NBC__T_U32, line) != 0 || n == 2)
      fail(dc, line, "unsupported: barrier other than 0 with all threads in '%s'", text);
    return;
  case NBC__OP_SETP: {
    if (n < 3 || n > 4) fail(dc, line, "'%s' takes 3 or 4 operands", text);
    dst_pair(dc, in, &o[0], line);
    in->a = src(dc, &o[1], t, line);
    in->b = src(dc, &o[2], t, line);
    if (n == 4) {
      if (!mn->sub2) fail(dc, line, "'%s' has a fourth operand but no .and/.or/.xor", text);
      in->c = src(dc, &o[3], NBC__T_PRED, line);
      if (o[3].neg) in->flags |= NBC__F_NEG_B;
    } else if (mn->sub2) {
      fail(dc, line, "'%s' lacks its combining predicate", text);
    }
    if (!mn->sub) fail(dc, line, "'%s' lacks a comparison", text);
    return;
  }
  case NBC__OP_SELP:
    need(dc, n, 4, text, line);
    in->d[0] = dst(dc, &o[0], line);
    in->a = src(dc, &o[1], t, line);
    in->b = src(dc, &o[2], t, line);
    in->c = src(dc, &o[3], NBC__T_PRED, line);
    if (o[3].neg) in->flags |= NBC__F_NEG_B;
    return;
  case NBC__OP_SHFL: /* shfl.sync.mode.b32 d[|p], a, b, c, membermask */
    if (n != 5) fail(dc, line, "'%s' takes 5 operands", text);
    dst_pair(dc, in, &o[0], line);
    in->a = src(dc, &o[1], NBC__T_U32, line);
    in->b = src(dc, &o[2], NBC__T_U32, line);
    in->c = src(dc, &o[3], NBC__T_U32, line);
    in->e = src(dc, &o[4], NBC__T_U32, line);
    return;
  case NBC__OP_VOTE: /* vote.sync.mode.type d, p, membermask */
    need(dc, n, 3, text, line);
    in->d[0] = dst(dc, &o[0], line);
    in->a = src(dc, &o[1], NBC__T_PRED, line);
    if (o[1].neg) in->flags |= NBC__F_NEG_B;
    in->e = src(dc, &o[2], NBC__T_U32, line);
    return;
  case NBC__OP_MATCH: /* match.any.sync.type d, a, membermask; match.all d[|p], a, mask */
    need(dc, n, 3, text, line);
    dst_pair(dc, in, &o[0], line);
    in->a = src(dc, &o[1], t, line);
    in->e = src(dc, &o[2], NBC__T_U32, line);
    return;
  case NBC__OP_ACTIVEMASK:
    need(dc, n, 1, text, line);
    in->d[0] = dst(dc, &o[0], line);
    return;
  case NBC__OP_CVT:
    st = in->type2;
    break;
  case NBC__OP_CVTA:
    st = NBC__T_U64;
    break;
  case NBC__OP_SHL:
  case NBC__OP_SHR:
  case NBC__OP_BFE:
  case NBC__OP_BFI:
    break;
  case NBC__OP_PRMT:
    if (mn->sub || mn->sub2) fail(dc, line, "unsupported mode of '%s'", text);
    break;
  case NBC__OP_TESTP:
  case NBC__OP_SET:
    fail(dc, line, "unsupported instruction '%s'", text);
  default:
    break;
  }
  /* generic form: d, a [, b [, c [, e]]] */
  if (n < 1 || n > 5) fail(dc, line, "'%s' takes 1 to 5 operands, found %d", text, n);
  in->d[0] = dst(dc, &o[0], line);
  uint32_t *srcs[4] = {&in->a, &in->b, &in->c, &in->e};
  for (int i = 1; i < n; i++) {
    int ot = st;
    if ((mn->op == NBC__OP_SHL || mn->op == NBC__OP_SHR) && i == 2) ot = NBC__T_U32;
    if ((mn->op == NBC__OP_BFE && i >= 2) || (mn->op == NBC__OP_BFI && i >= 3)) ot = NBC__T_U32;
    *srcs[i - 1] = src(dc, &o[i], ot, line);
  }
}

/* [@[!]%p] mnemonic operands ; */
static void parse_insn(decoder *dc) {
  nbc__ptx_lex *lx = &dc->lx;
  int line = lx->tok_line;
  char text[128];
  volatile uint32_t guard = NBC__NOREG;
  volatile int neg_guard = 0;
  if (nbc__ptx_lex_accept(lx, "@")) {
    neg_guard = nbc__ptx_lex_accept(lx, "!");
    word(dc, text, sizeof text);
    guard = find_reg(dc, text);
    if (guard == NBC__NOREG) fail(dc, line, "unknown predicate register '%s'", text);
  }
  if (lx->kind != NBC__TOK_WORD) {
    tok_text(dc, text, sizeof text);
    fail(dc, line, "expected an instruction, found '%s'", lx->kind ? text : "end of text");
  }
  word(dc, text, sizeof text);
  mnemonic mn;
  parse_mnemonic(dc, text, &mn, line);
  operand o[MAX_OPERANDS];
  int n = 0;
  if (!nbc__ptx_lex_is(lx, ";")) do {
      if (n == MAX_OPERANDS) fail(dc, line, "too many operands for '%s'", text);
      parse_operand(dc, &o[n++]);
    } while (nbc__ptx_lex_accept(lx, ","));
  /* the operands' lists live until the instruction is built */
  volatile int ok = 0;
  char *lists[MAX_OPERANDS];
  for (int i = 0; i < n; i++)
    lists[i] = (char *)o[i].list;
  jmp_buf outer;
  memcpy(outer, dc->fail, sizeof outer);
  if (!setjmp(dc->fail)) {
    expect(dc, ";");
    nbc__ptx_insn *in = new_insn(dc, mn.op, line);
    in->guard = guard;
    if (neg_guard) in->flags |= NBC__F_NEG_GUARD;
    build_insn(dc, in, &mn, o, n, text, line);
    nbc__ptx_specialise(in);
    ok = 1;
  }
  memcpy(dc->fail, outer, sizeof outer);
  for (int i = 0; i < n; i++)
    free(lists[i]);
  if (!ok) longjmp(dc->fail, 1);
}

/* The body "{ ... }" of the function dc->f. */
static void parse_body(decoder *dc) {
  int depth = 0;
  expect(dc, "{");
  depth = 1;
  while (depth > 0) {
    nbc__ptx_lex *lx = &dc->lx;
    int line = lx->tok_line;
    char buf[1024];
    if (lx->kind == NBC__TOK_END) fail(dc, line, "missing '}' at the end of '%s'", dc->f->name);
    if (nbc__ptx_lex_accept(lx, "{")) {
      depth++;
    } else if (nbc__ptx_lex_accept(lx, "}")) {
      depth--;
    } else if (nbc__ptx_lex_accept(lx, ".reg")) {
      word(dc, buf, sizeof buf);
      if (nbc__ptx_lex_is(lx, ".v2") || nbc__ptx_lex_is(lx, ".v4"))
        fail(dc, line, "unsupported vector register declaration");
      if (type_of(buf, NULL) == NBC__T_NONE) fail(dc, line, "unsupported register type '%s'", buf);
      do {
        word(dc, buf, sizeof buf);
        uint32_t count = 0;
        if (nbc__ptx_lex_accept(lx, "<")) {
          count = (uint32_t)number(dc);
          expect(dc, ">");
        }
        declare_regs(dc, buf, count);
      } while (nbc__ptx_lex_accept(lx, ","));
      expect(dc, ";");
    } else if (nbc__ptx_lex_is(lx, ".param")) {
      parse_param_decl(dc, 0);
      expect(dc, ";");
    } else if (nbc__ptx_lex_accept(lx, ".local")) {
      nbc__ptx_var v = parse_var(dc, NBC__S_LOCAL, 0);
      size_t al = v.align ? v.align : 1;
      dc->f->local_size = (dc->f->local_size + al - 1) / al * al;
      add_sym(dc, v.name, SYM_LOCAL, (int64_t)dc->f->local_size, v.size);
      dc->f->local_size += v.size;
      free(v.name);
      free(v.init);
      expect(dc, ";");
    } else if (nbc__ptx_lex_accept(lx, ".shared")) {
      add_module_var(dc, parse_var(dc, NBC__S_SHARED, 0));
      expect(dc, ";");
    } else if (nbc__ptx_lex_is(lx, ".loc") || nbc__ptx_lex_is(lx, ".file")) {
      nbc__ptx_lex_skip_line(lx);
    } else if (nbc__ptx_lex_accept(lx, ".pragma")) {
      while (lx->kind != NBC__TOK_END && !nbc__ptx_lex_accept(lx, ";"))
        nbc__ptx_lex_next(lx);
    } else if (lx->kind == NBC__TOK_WORD && lx->tok[0] != '.' && *skip_ws(lx->p) == ':') {
      word(dc, buf, sizeof buf);
      expect(dc, ":");
      dc->labels = grow(dc, dc->labels, &dc->cap_labels, dc->nlabels + 1, sizeof *dc->labels);
      dc->labels[dc->nlabels].name = dup_n(dc, buf, strlen(buf));
      dc->labels[dc->nlabels].index = dc->f->ncode;
      dc->nlabels++;
    } else if (lx->kind == NBC__TOK_WORD && lx->tok[0] == '.') {
      tok_text(dc, buf, sizeof buf);
      fail(dc, line, "unsupported directive '%s'", buf);
    } else {
      parse_insn(dc);
    }
  }
  /* branch targets */
  for (int i = 0; i < dc->nfixups; i++) {
    fixup *fx = &dc->fixups[i];
    int found = -1;
    for (int k = 0; k < dc->nlabels; k++)
      if (!strcmp(dc->labels[k].name, fx->name)) found = dc->labels[k].index;
    if (found < 0) fail(dc, fx->line, "unknown label '%s'", fx->name);
    dc->f->code[fx->insn].target = found;
  }
  /* falling off the end returns */
  nbc__ptx_insn *ret = new_insn(dc, NBC__OP_RET, dc->lx.tok_line);
  (void)ret;
}

/* ".entry NAME (params) [directives] { body }" or ".func [(ret)] NAME [(params)] ... ". */
static void parse_function(decoder *dc, int is_entry) {
  char name[1024];
  nbc__ptx_lex *lx = &dc->lx;
  int line = lx->tok_line;
  int has_ret = 0;
  memset(&dc->probe, 0, sizeof dc->probe);
  dc->f = &dc->probe;
  dc->cap_code = dc->cap_tmpl = dc->cap_fix = 0;
  reset_function_scope(dc);
  new_regs(dc, NBC__SR_COUNT);
  if (!is_entry && nbc__ptx_lex_accept(lx, "(")) {
    parse_param_decl(dc, 1);
    expect(dc, ")");
    has_ret = 1;
  }
  word(dc, name, sizeof name);
  if (nbc__ptx_lex_accept(lx, "(")) {
    if (!nbc__ptx_lex_is(lx, ")")) do {
        parse_param_decl(dc, 1);
      } while (nbc__ptx_lex_accept(lx, ","));
    expect(dc, ")");
  }
  while (lx->kind == NBC__TOK_WORD && lx->tok[0] == '.') {
    if (nbc__ptx_lex_accept(lx, ".noreturn")) continue;
    if (nbc__ptx_lex_accept(lx, ".maxntid") || nbc__ptx_lex_accept(lx, ".reqntid") ||
        nbc__ptx_lex_accept(lx, ".minnctapersm") || nbc__ptx_lex_accept(lx, ".maxnreg") ||
        nbc__ptx_lex_accept(lx, ".maxclusterrank") || nbc__ptx_lex_accept(lx, ".reqnctapercluster") ||
        nbc__ptx_lex_accept(lx, ".explicitcluster")) {
      while (lx->kind == NBC__TOK_WORD && lx->tok[0] != '.') {
        nbc__ptx_lex_next(lx);
        nbc__ptx_lex_accept(lx, ",");
      }
      continue;
    }
    if (nbc__ptx_lex_accept(lx, ".pragma")) {
      while (lx->kind != NBC__TOK_END && !nbc__ptx_lex_accept(lx, ";"))
        nbc__ptx_lex_next(lx);
      continue;
    }
    char buf[64];
    tok_text(dc, buf, sizeof buf);
    fail(dc, lx->tok_line, "unsupported directive '%s' of '%s'", buf, name);
  }
  int idx = nbc_func_index(dc, name, is_entry);
  nbc__ptx_func *f = &dc->m->funcs[idx];
  nbc__ptx_func *probe = &dc->probe;
  if (nbc__ptx_lex_accept(lx, ";")) { /* a declaration: its parameter layout */
    if (!f->defined) {
      free(f->formal_off);
      free(f->formal_size);
      f->formal_off = probe->formal_off;
      f->formal_size = probe->formal_size;
      f->nformals = probe->nformals;
      f->param_size = probe->param_size;
      probe->formal_off = NULL;
      probe->formal_size = NULL;
    }
    free(probe->formal_off);
    free(probe->formal_size);
    free(probe->tmpl);
    memset(probe, 0, sizeof *probe);
    dc->f = NULL;
    return;
  }
  if (f->defined) fail(dc, line, "function '%s' defined twice", name);
  (void)has_ret;
  if (!f->formal_off) { /* a recursive call in the body needs the parameter layout now */
    size_t n = probe->nformals ? probe->nformals : 1;
    f->formal_off = malloc(n * sizeof *f->formal_off);
    f->formal_size = malloc(n * sizeof *f->formal_size);
    if (!f->formal_off || !f->formal_size) fail(dc, line, "out of memory");
    if (probe->nformals) {
      memcpy(f->formal_off, probe->formal_off, probe->nformals * sizeof *f->formal_off);
      memcpy(f->formal_size, probe->formal_size, probe->nformals * sizeof *f->formal_size);
    }
    f->nformals = probe->nformals;
    f->param_size = probe->param_size;
  }
  parse_body(dc);
  f = &dc->m->funcs[idx];
  free(f->formal_off);
  free(f->formal_size);
  char *keep = f->name;
  *f = *probe;
  memset(probe, 0, sizeof *probe);
  f->name = keep;
  f->is_entry = is_entry;
  f->defined = 1;
  dc->f = NULL;
}

static void parse_module(decoder *dc) {
  nbc__ptx_lex *lx = &dc->lx;
  char buf[1024];
  while (lx->kind != NBC__TOK_END) {
    int line = lx->tok_line;
    int is_extern = 0;
    if (nbc__ptx_lex_is(lx, ".version") || nbc__ptx_lex_is(lx, ".target") ||
        nbc__ptx_lex_is(lx, ".address_size") || nbc__ptx_lex_is(lx, ".file") ||
        nbc__ptx_lex_is(lx, ".loc")) {
      nbc__ptx_lex_skip_line(lx);
      continue;
    }
    if (nbc__ptx_lex_accept(lx, ".section")) { /* debug sections: skipped whole */
      while (lx->kind != NBC__TOK_END && !nbc__ptx_lex_is(lx, "{"))
        nbc__ptx_lex_next(lx);
      int depth = 0;
      do {
        if (nbc__ptx_lex_is(lx, "{")) depth++;
        if (nbc__ptx_lex_is(lx, "}")) depth--;
        nbc__ptx_lex_next(lx);
      } while (depth > 0 && lx->kind != NBC__TOK_END);
      continue;
    }
    for (;;) {
      if (nbc__ptx_lex_accept(lx, ".extern")) {
        is_extern = 1;
      } else if (nbc__ptx_lex_accept(lx, ".visible") || nbc__ptx_lex_accept(lx, ".weak") ||
                 nbc__ptx_lex_accept(lx, ".common")) {
      } else {
        break;
      }
    }
    if (nbc__ptx_lex_accept(lx, ".entry")) {
      parse_function(dc, 1);
    } else if (nbc__ptx_lex_accept(lx, ".func")) {
      parse_function(dc, 0);
    } else if (lx->kind == NBC__TOK_WORD && space_of((tok_text(dc, buf, sizeof buf), buf)) >= 0 &&
               space_of(buf) != NBC__S_PARAM && space_of(buf) != NBC__S_LOCAL) {
      nbc__ptx_lex_next(lx);
      nbc__ptx_var v = parse_var(dc, space_of(buf), is_extern);
      if (is_extern && v.space != NBC__S_SHARED) {
        int name_line = line;
        char name[200];
        snprintf(name, sizeof name, "%s", v.name);
        free(v.name);
        fail(dc, name_line, "unresolved external variable '%s'", name);
      }
      add_module_var(dc, v);
      expect(dc, ";");
    } else {
      tok_text(dc, buf, sizeof buf);
      fail(dc, line, "unsupported directive '%s'", lx->kind ? buf : "end of text");
    }
  }
}

int nbc__ptx_load(const char *text, nbc__ptx_module **out, char *msg, size_t msg_size) {
  decoder *dc = calloc(1, sizeof *dc);
  nbc__ptx_module *m = calloc(1, sizeof *m);
  volatile int ok = 0;
  if (!dc || !m) {
    snprintf(msg, msg_size, "out of memory");
    free(dc);
    free(m);
    return 0;
  }
  dc->m = m;
  dc->msg = msg;
  dc->msg_size = msg_size;
  m->shared_align = 16;
  if (!setjmp(dc->fail)) {
    nbc__ptx_lex_init(&dc->lx, text);
    parse_module(dc);
    for (int i = 0; i < m->ncalls; i++) {
      nbc__ptx_func *callee = &m->funcs[m->calls[i].callee];
      if (!callee->defined) {
        snprintf(msg, msg_size, "call of '%s', which the module declares but does not define",
                 callee->name);
        longjmp(dc->fail, 1);
      }
    }
    for (int i = 0; i < m->nvars; i++) { /* dynamic shared memory follows the static */
      nbc__ptx_var *v = &m->vars[i];
      size_t al = v->align ? v->align : 1;
      if (v->space == NBC__S_SHARED && v->is_extern)
        v->addr = (m->shared_static + al - 1) / al * al;
    }
    ok = 1;
  } else {
    /* what the function being decoded holds */
    free(dc->probe.code);
    free(dc->probe.tmpl);
    free(dc->probe.fix);
    free(dc->probe.formal_off);
    free(dc->probe.formal_size);
  }
  reset_function_scope(dc);
  free(dc->regs);
  free(dc->syms);
  free(dc->labels);
  free(dc->fixups);
  free(dc);
  if (!ok) {
    nbc__ptx_free(m);
    return 0;
  }
  *out = m;
  return 1;
}

void nbc__ptx_free(nbc__ptx_module *m) {
  if (!m) return;
  for (int i = 0; i < m->nfuncs; i++) {
    nbc__ptx_func *f = &m->funcs[i];
    free(f->name);
    free(f->code);
    free(f->tmpl);
    free(f->fix);
    free(f->formal_off);
    free(f->formal_size);
  }
  for (int i = 0; i < m->nvars; i++) {
    free(m->vars[i].name);
    free(m->vars[i].init);
  }
  for (int i = 0; i < m->ncalls; i++) {
    free(m->calls[i].from);
    free(m->calls[i].to);
    free(m->calls[i].size);
  }
  free(m->calls);
  free(m->funcs);
  free(m->vars);
  free(m);
}

int nbc__ptx_find_entry(const nbc__ptx_module *m, const char *name) {
  int i = find_func(m, name);
  return i >= 0 && m->funcs[i].is_entry && m->funcs[i].defined ? i : -1;
}
