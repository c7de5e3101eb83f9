/* td_module.c — modules, functions and kernel launches of the test driver.
 *
 * cuModuleLoadData(Ex) accepts what the real driver accepts and rejects the same things
 * with the same codes (checked on an H200, driver 13000):
 *   - PTX text: must contain `.version` (else CUDA_ERROR_INVALID_IMAGE); a PTX ISA newer
 *     than the driver's (9.0) is CUDA_ERROR_UNSUPPORTED_PTX_VERSION; a missing `.target`
 *     or an `sm_XY` above the device's compute capability is CUDA_ERROR_INVALID_PTX.
 *     Every `.entry NAME(...)` becomes a function, and its `.param` list is parsed
 *     (type size x array length, `.align`) so cuLaunchKernel knows how many bytes to
 *     read from each kernelParams[i] — exactly what the real driver does.
 *   - ELF (cubin): every `.text.NAME` section becomes a function (parameter layout unknown).
 *   - anything else: CUDA_ERROR_INVALID_IMAGE.
 * Comments are blanked before scanning so a commented-out `.entry` does not count.
 * Module-scope variables in global memory (PTX `.global` declarations, a cubin's objects in
 * .nv.global sections) get zeroed memory behind fake device addresses that copies and
 * memsets reach: cuModuleGetGlobal finds them. tdrv_raise_in_next_kernel makes the next
 * kernel "run" write a debug=True kernel's raise (<name>__errcode__, __tid*__, __ctaid*__).
 *
 * cuFuncGetAttribute answers from the PTX text (no ptxas here), which the real driver's
 * values for nbcuda's kernels agree with except for registers:
 *   - MAX_THREADS_PER_BLOCK: the product of the entry's `.maxntid` (or `.reqntid`), else 1024;
 *   - SHARED_SIZE_BYTES / CONST_SIZE_BYTES: the bytes of the `.shared` / `.const` variables
 *     declared in the entry's body plus those declared at module scope that its body names
 *     (`.extern .shared`, dynamic shared memory, counts nothing; variables only functions it
 *     calls name are not followed);
 *   - LOCAL_SIZE_BYTES: the `.local` variables of its body (the stack depot);
 *   - NUM_REGS: a fixed 32, or the module's CU_JIT_MAX_REGISTERS when lower; PTX_VERSION / BINARY_VERSION: the target (90 for sm_90);
 *     MAX_DYNAMIC_SHARED_SIZE_BYTES 49152, the default limit, and PREFERRED_SHARED_MEMORY_
 *     CARVEOUT -1, until cuFuncSetAttribute sets them (as the real driver, the limit up to
 *     the opt-in shared memory per block less the static). A cubin's functions report
 *     1024 threads and no memory.
 * cuOccupancyMaxActiveBlocksPerMultiprocessor models the occupancy calculator without its
 * allocation granularities: the fewest of the SM's block limit, its threads over the block's
 * threads rounded up to warps, its registers over 32 per thread of those warps, and its
 * shared memory over the block's (static + dynamic + the 1 KB the driver reserves per block);
 * 0 for a block larger than the function's limit or dynamic shared memory above its limit.
 *
 * cuLaunchKernel validates the function, context, grid/block dimensions against the
 * device attributes and the function's thread limit (MAX_THREADS_PER_BLOCK above), the
 * dynamic shared memory against the function's limit and the parameters, can be refused
 * (NBCUDA_TESTDRIVER_REFUSE_LAUNCH / tdrv_set_refuse_launch / fault injection), then
 * records the launch (tdrv_last_launch) and queues an op that only sleeps for the launch
 * delay, so "kernel still running" is observable; with execution on (td__execute) the op
 * runs the kernel on the CPU device (src/cpudevice).
 */
#include <ctype.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpudevice/ptx.h"
#include "nbcuda.h" /* NBC_DEBUG_EXCEPTION_VARIABLES: what the compiler emits */
#include "td.h"

#define PTX_ISA_MAX 90 /* PTX ISA 9.0, what a 13.0 driver JIT accepts */
#define MAX_DYNAMIC_SHARED 49152
#define MODEL_REGS 32 /* registers per thread the fixture reports */

/* A decoded module (td__execute), shared by the module and the launches queued from it. */
struct td_program {
  nbc__ptx_module *ptx;
  int refs;
};

struct CUfunc_st {
  struct CUmod_st *mod;
  char name[TDRV_MAX_NAME];
  int entry; /* the entry's index in the decoded module, -1 when not decoded */
  int nparams; /* -1 when unknown (cubin) */
  size_t psize[TDRV_MAX_PARAMS];
  size_t palign[TDRV_MAX_PARAMS];
  /* cuFuncGetAttribute's model (resources_of): what the PTX text declares for it. */
  int max_threads;
  int shared_bytes, const_bytes, local_bytes;
  /* what cuFuncSetAttribute set: the dynamic shared memory limit (MAX_DYNAMIC_SHARED until
   * then) and the preferred carveout (-1 until then) */
  int dynamic_shared_limit, carveout;
};

/* A module-scope variable in global memory (cuModuleGetGlobal): zeroed host memory behind
 * a range of fake device addresses, which copies and memsets reach (td__mem_resolve). */
typedef struct td_global {
  char name[TDRV_MAX_NAME];
  CUdeviceptr va;
  size_t size;
  unsigned char *host;
} td_global;

struct CUmod_st {
  struct CUctx_st *ctx;
  int target;   /* sm_XY as XY */
  int max_regs; /* CU_JIT_MAX_REGISTERS given at load, 0 when none */
  int nfuncs;
  struct CUfunc_st *funcs;
  int nglobals;
  td_global *globals;
  struct td_program *program; /* with td__execute, else NULL */
  struct CUmod_st *next;
};

static struct CUmod_st *modules;

/* The registers a function reports: the model's 32, or its module's CU_JIT_MAX_REGISTERS. */
static int func_regs(const struct CUfunc_st *f) {
  int cap = f->mod ? f->mod->max_regs : 0;
  return cap > 0 && cap < MODEL_REGS ? cap : MODEL_REGS;
}
static int launches;
static int have_last;
static tdrv_launch_info last;

int td__live_modules(void) {
  int n = 0;
  for (struct CUmod_st *m = modules; m; m = m->next)
    n++;
  return n;
}

int td__launch_count(void) {
  return launches;
}

int td__last_launch(tdrv_launch_info *out) {
  if (have_last) *out = last;
  return have_last;
}

void td__program_unref(struct td_program *p) {
  if (p && --p->refs == 0) {
    nbc__ptx_free(p->ptx);
    free(p);
  }
}

static void module_free(struct CUmod_st *m) {
  td__program_unref(m->program);
  for (int i = 0; i < m->nglobals; i++)
    free(m->globals[i].host);
  free(m->globals);
  free(m->funcs);
  free(m);
}

static CUresult add_global(struct CUmod_st *m, const char *name, size_t size) {
  if (!size || strlen(name) >= TDRV_MAX_NAME) return CUDA_SUCCESS; /* not addressable */
  td_global *grown = realloc(m->globals, (size_t)(m->nglobals + 1) * sizeof *grown);
  if (!grown) return CUDA_ERROR_OUT_OF_MEMORY;
  m->globals = grown;
  td_global *g = &m->globals[m->nglobals];
  g->host = calloc(1, size);
  if (!g->host) return CUDA_ERROR_OUT_OF_MEMORY;
  snprintf(g->name, sizeof g->name, "%s", name);
  g->size = size;
  g->va = td__mem_reserve(size);
  m->nglobals++;
  return CUDA_SUCCESS;
}

static td_global *find_global(struct CUmod_st *m, const char *name) {
  for (int i = 0; i < m->nglobals; i++)
    if (strcmp(m->globals[i].name, name) == 0) return &m->globals[i];
  return NULL;
}

unsigned char *td__module_global_resolve(CUdeviceptr dptr, size_t bytes) {
  for (struct CUmod_st *m = modules; m; m = m->next)
    for (int i = 0; i < m->nglobals; i++) {
      td_global *g = &m->globals[i];
      if (dptr >= g->va && dptr - g->va <= g->size && bytes <= g->size - (dptr - g->va))
        return g->host + (dptr - g->va);
    }
  return NULL;
}

void td__modules_release(struct CUctx_st *ctx) {
  for (struct CUmod_st **p = &modules; *p;) {
    struct CUmod_st *m = *p;
    if (m->ctx == ctx) {
      *p = m->next;
      module_free(m);
    } else {
      p = &m->next;
    }
  }
}

/* ---- PTX ------------------------------------------------------------------------------ */

/* A copy of the text with // and block comments replaced by spaces. */
static char *strip_comments(const char *src) {
  size_t n = strlen(src);
  char *t = malloc(n + 1);
  if (!t) return NULL;
  memcpy(t, src, n + 1);
  for (size_t i = 0; i < n; i++) {
    if (t[i] == '/' && t[i + 1] == '/') {
      while (i < n && t[i] != '\n')
        t[i++] = ' ';
    } else if (t[i] == '/' && t[i + 1] == '*') {
      t[i] = t[i + 1] = ' ';
      for (i += 2; i < n && !(t[i] == '*' && t[i + 1] == '/'); i++)
        if (t[i] != '\n') t[i] = ' ';
      if (i < n) t[i] = t[i + 1] = ' ';
      i++;
    }
  }
  return t;
}

/* The position of directive `word` (e.g. ".entry") as a whole token at or after p. */
static const char *find_directive(const char *p, const char *word) {
  size_t n = strlen(word);
  for (const char *q = strstr(p, word); q; q = strstr(q + 1, word)) {
    int before_ok = q == p || isspace((unsigned char)q[-1]) || q[-1] == '}' || q[-1] == ';';
    int after_ok = q[n] == '\0' || isspace((unsigned char)q[n]);
    if (before_ok && after_ok) return q;
  }
  return NULL;
}

static const char *skip_space(const char *p) {
  while (isspace((unsigned char)*p))
    p++;
  return p;
}

static int ident_char(char c) {
  return isalnum((unsigned char)c) || c == '_' || c == '$';
}

static size_t type_size(const char *t, size_t len) {
  static const struct {
    const char *name;
    size_t size;
  } types[] = {{".b8", 1},    {".u8", 1},    {".s8", 1},  {".b16", 2}, {".u16", 2},
               {".s16", 2},   {".f16", 2},   {".b32", 4}, {".u32", 4}, {".s32", 4},
               {".f32", 4},   {".b64", 8},   {".u64", 8}, {".s64", 8}, {".f64", 8},
               {".b128", 16}, {".f16x2", 4}, {".bf16", 2}};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (strlen(types[i].name) == len && strncmp(types[i].name, t, len) == 0)
      return types[i].size;
  return 0;
}

/* Parses one parameter declaration "[.param] .align 8 .b8 name[24]" (up to ',' or ')').
 * Returns 0 when it is not understood. */
static int parse_param(const char *p, const char *end, size_t *size, size_t *align) {
  size_t tsize = 0, explicit_align = 0, count = 1;
  while (p < end) {
    p = skip_space(p);
    if (p >= end) break;
    const char *tok = p;
    while (p < end && !isspace((unsigned char)*p) && *p != '[')
      p++;
    size_t len = (size_t)(p - tok);
    if (len == 6 && strncmp(tok, ".align", 6) == 0) {
      explicit_align = strtoul(p, (char **)&p, 10);
    } else if (type_size(tok, len)) {
      tsize = type_size(tok, len);
    } else if (*p == '[') {
      count = strtoul(p + 1, (char **)&p, 10);
      while (p < end && *p != ']')
        p++;
      if (p < end) p++;
    }
  }
  if (tsize == 0 || count == 0) return 0;
  *size = tsize * count;
  *align = explicit_align ? explicit_align : tsize;
  return 1;
}

/* Parses ".entry NAME ( params )" at e; fills f; returns the position after it. */
static const char *parse_entry(const char *e, struct CUfunc_st *f) {
  const char *p = skip_space(e + strlen(".entry"));
  size_t n = 0;
  while (ident_char(p[n]) && n + 1 < sizeof f->name)
    n++;
  memcpy(f->name, p, n);
  f->name[n] = '\0';
  p = skip_space(p + n);
  f->nparams = 0;
  if (*p != '(') return p;
  const char *close = strchr(p, ')');
  if (!close) return p + 1;
  for (const char *q = p + 1; q < close;) {
    const char *comma = memchr(q, ',', (size_t)(close - q));
    const char *item_end = comma ? comma : close;
    size_t size, align;
    if (f->nparams < TDRV_MAX_PARAMS && parse_param(q, item_end, &size, &align)) {
      f->psize[f->nparams] = size;
      f->palign[f->nparams] = align;
      f->nparams++;
    }
    q = item_end + 1;
  }
  return close + 1;
}

/* Parses a variable declaration after its state space ("[.align N] .b8 name[4][8]" up to
 * ';'): its bytes, and its name into name. Returns 0 when it is not understood. */
static size_t parse_variable(const char *p, char *name, size_t name_size) {
  size_t tsize = 0, count = 1;
  name[0] = '\0';
  while (*p && *p != ';' && *p != '=' && *p != '{' && *p != '}') {
    p = skip_space(p);
    const char *tok = p;
    while (*p && !isspace((unsigned char)*p) && *p != ';' && *p != '[' && *p != '=')
      p++;
    size_t len = (size_t)(p - tok);
    if (len == 6 && strncmp(tok, ".align", 6) == 0) {
      strtoul(p, (char **)&p, 10);
    } else if (type_size(tok, len)) {
      tsize = type_size(tok, len);
    } else if (len && ident_char(tok[0]) && !name[0]) {
      snprintf(name, name_size, "%.*s", (int)len, tok);
    }
    while (*p == '[') { /* every dimension multiplies; "[]" (extern) counts nothing */
      char *end;
      unsigned long n = strtoul(p + 1, &end, 10);
      count *= end == p + 1 ? 0 : n;
      p = strchr(p, ']');
      if (!p) return 0;
      p++;
    }
    if (len == 0 && *p && *p != ';' && *p != '=') p++;
  }
  return name[0] ? tsize * count : 0;
}

/* Whether word `name` occurs in [b, e) as a whole identifier. */
static int names(const char *b, const char *e, const char *name) {
  size_t n = strlen(name);
  for (const char *q = b; q + n <= e; q++) {
    if (strncmp(q, name, n) != 0) continue;
    if ((q == b || !ident_char(q[-1])) && (q + n == e || !ident_char(q[n]))) return 1;
  }
  return 0;
}

/* The bytes of the `space` variables (".shared", ".const", ".local") declared in [b, e):
 * all of them when own is set (the entry's body), else those at brace depth 0 (module scope)
 * that the entry's body [fb, fe) names. */
static int space_bytes(const char *b, const char *e, const char *space, int own, const char *fb,
                       const char *fe) {
  size_t total = 0, n = strlen(space);
  int depth = 0;
  for (const char *q = b; q < e; q++) {
    if (*q == '{') depth++;
    if (*q == '}') depth--;
    if (*q != '.' || strncmp(q, space, n) != 0 || !isspace((unsigned char)q[n])) continue;
    if (q > b && !isspace((unsigned char)q[-1]) && q[-1] != ';' && q[-1] != '}') continue;
    if (!own && depth != 0) continue;
    /* `.extern .shared` is dynamic shared memory: no static bytes. */
    const char *line = q;
    while (line > b && line[-1] != ';' && line[-1] != '}' && line[-1] != '{')
      line--;
    const char *ext = strstr(line, ".extern");
    if (ext && ext < q) continue;
    char name[TDRV_MAX_NAME];
    size_t bytes = parse_variable(q + n, name, sizeof name);
    if (own || names(fb, fe, name)) total += bytes;
  }
  return total > 0x7fffffff ? 0x7fffffff : (int)total;
}

/* The product of the numbers after directive `word` in [b, e), or 0 when it is absent. */
static int thread_limit(const char *b, const char *e, const char *word) {
  const char *d = find_directive(b, word);
  if (!d || d >= e) return 0;
  const char *p = d + strlen(word);
  long product = 1;
  for (int i = 0; i < 3; i++) {
    char *end;
    long v = strtol(p, &end, 10);
    if (end == p) break;
    product *= v;
    p = skip_space(end);
    if (*p != ',') break;
    p++;
  }
  return product > 0 && product <= 1024 ? (int)product : 0;
}

/* Fills f's resources from the PTX t, whose entry header starts at e and whose parameter list
 * ends at params_end: the body is the balanced braces after it. */
static void resources_of(struct CUfunc_st *f, const char *t, const char *params_end) {
  f->max_threads = 1024;
  const char *open = strchr(params_end, '{');
  if (!open) return;
  int maxntid = thread_limit(params_end, open, ".maxntid");
  int reqntid = thread_limit(params_end, open, ".reqntid");
  if (maxntid || reqntid) f->max_threads = maxntid ? maxntid : reqntid;
  const char *close = open;
  for (int depth = 0; *close; close++) {
    if (*close == '{') depth++;
    if (*close == '}' && --depth == 0) break;
  }
  const char *end = t + strlen(t);
  f->shared_bytes = space_bytes(open, close, ".shared", 1, open, close) +
                    space_bytes(t, end, ".shared", 0, open, close);
  f->const_bytes = space_bytes(t, end, ".const", 0, open, close);
  f->local_bytes = space_bytes(open, close, ".local", 1, open, close);
}

static void log_error(char *log, size_t size, const char *msg) {
  if (log && size > 0) snprintf(log, size, "%s", msg);
}

/* Decodes the module for the CPU device (src/cpudevice): an instruction it lacks fails the
 * load with CUDA_ERROR_INVALID_PTX and the decoder's message in the log. Its .global and
 * .const variables live in the module's globals (cuModuleGetGlobal reaches them), holding
 * their initial values. */
static CUresult decode(struct CUmod_st *m, const char *text, char *log, size_t log_size) {
  char msg[512];
  struct td_program *p = calloc(1, sizeof *p);
  if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
  p->refs = 1;
  if (!nbc__ptx_load(text, &p->ptx, msg, sizeof msg)) {
    free(p);
    char line[600];
    snprintf(line, sizeof line, "nbcuda CPU device: %s", msg);
    log_error(log, log_size, line);
    return CUDA_ERROR_INVALID_PTX;
  }
  m->program = p;
  for (int i = 0; i < p->ptx->nvars; i++) {
    nbc__ptx_var *v = &p->ptx->vars[i];
    if (v->space != NBC__S_GLOBAL && v->space != NBC__S_CONST) continue;
    td_global *g = find_global(m, v->name);
    if (!g) {
      CUresult r = add_global(m, v->name, v->size);
      if (r != CUDA_SUCCESS) return r;
      g = find_global(m, v->name);
    }
    if (!g) continue; /* not addressable: an empty variable */
    v->addr = g->va;
    if (v->init) memcpy(g->host, v->init, v->size < g->size ? v->size : g->size);
  }
  for (int i = 0; i < m->nfuncs; i++)
    m->funcs[i].entry = nbc__ptx_find_entry(p->ptx, m->funcs[i].name);
  return CUDA_SUCCESS;
}

static CUresult load_ptx(struct CUmod_st *m, const char *text, int device_cc, char *log,
                         size_t log_size) {
  char *t = strip_comments(text);
  if (!t) return CUDA_ERROR_OUT_OF_MEMORY;
  CUresult r = CUDA_SUCCESS;
  const char *v = find_directive(t, ".version");
  const char *tg = find_directive(t, ".target");
  int major = 0, minor = 0;
  if (!v) {
    r = CUDA_ERROR_INVALID_IMAGE;
  } else if (sscanf(v, ".version %d.%d", &major, &minor) != 2) {
    log_error(log, log_size, "ptxas fatal   : malformed .version directive");
    r = CUDA_ERROR_INVALID_PTX;
  } else if (major * 10 + minor > PTX_ISA_MAX) {
    log_error(log, log_size, "ptxas fatal   : Unsupported .version; current version is '9.0'");
    r = CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
  } else if (!tg || sscanf(tg, ".target sm_%d", &m->target) != 1) {
    log_error(log, log_size, "ptxas fatal   : missing or unsupported .target directive");
    r = CUDA_ERROR_INVALID_PTX;
  } else if (m->target > device_cc) {
    log_error(log, log_size,
              "ptxas fatal   : SM version specified by .target is higher than "
              "default SM version assumed");
    r = CUDA_ERROR_INVALID_PTX;
  }
  for (const char *e = t; r == CUDA_SUCCESS && (e = find_directive(e, ".entry"));) {
    struct CUfunc_st *grown = realloc(m->funcs, (size_t)(m->nfuncs + 1) * sizeof *grown);
    if (!grown) {
      r = CUDA_ERROR_OUT_OF_MEMORY;
      break;
    }
    m->funcs = grown;
    struct CUfunc_st *f = &m->funcs[m->nfuncs++];
    memset(f, 0, sizeof *f);
    f->entry = -1;
    f->dynamic_shared_limit = MAX_DYNAMIC_SHARED;
    f->carveout = -1;
    e = parse_entry(e, f);
    resources_of(f, t, e);
  }
  /* variables in global memory: `.visible .global .align 4 .u32 name;` */
  for (const char *g = t; r == CUDA_SUCCESS && (g = find_directive(g, ".global")); g++) {
    char name[TDRV_MAX_NAME + 1];
    size_t size = parse_variable(g + 7, name, sizeof name);
    r = add_global(m, name, size);
  }
  free(t);
  if (r == CUDA_SUCCESS && td__execute) r = decode(m, text, log, log_size);
  return r;
}

/* ---- ELF (cubin) ---------------------------------------------------------------------- */

static CUresult load_elf(struct CUmod_st *m, const unsigned char *image, int device_cc) {
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)image;
  if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
      eh->e_shstrndx >= eh->e_shnum)
    return CUDA_ERROR_INVALID_IMAGE;
  /* A cubin's e_flags carry the SM in bits 8..15 (older) or 0..7; accept either form. */
  m->target = device_cc;
  const Elf64_Shdr *sh = (const Elf64_Shdr *)(image + eh->e_shoff);
  const char *names = (const char *)image + sh[eh->e_shstrndx].sh_offset;
  for (int i = 0; i < eh->e_shnum; i++) { /* variables in global memory: objects of .nv.global* */
    if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum) continue;
    const Elf64_Sym *sym = (const Elf64_Sym *)(image + sh[i].sh_offset);
    const char *strtab = (const char *)image + sh[sh[i].sh_link].sh_offset;
    for (size_t k = 0; k < sh[i].sh_size / sizeof *sym; k++) {
      if (ELF64_ST_TYPE(sym[k].st_info) != STT_OBJECT || sym[k].st_shndx >= eh->e_shnum ||
          strncmp(names + sh[sym[k].st_shndx].sh_name, ".nv.global", 10) != 0)
        continue;
      CUresult r = add_global(m, strtab + sym[k].st_name, sym[k].st_size);
      if (r != CUDA_SUCCESS) return r;
    }
  }
  for (int i = 0; i < eh->e_shnum; i++) {
    const char *name = names + sh[i].sh_name;
    if (strncmp(name, ".text.", 6) != 0) continue;
    struct CUfunc_st *grown = realloc(m->funcs, (size_t)(m->nfuncs + 1) * sizeof *grown);
    if (!grown) return CUDA_ERROR_OUT_OF_MEMORY;
    m->funcs = grown;
    struct CUfunc_st *f = &m->funcs[m->nfuncs++];
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name + 6);
    f->entry = -1;
    f->nparams = -1;
    f->max_threads = 1024;
    f->dynamic_shared_limit = MAX_DYNAMIC_SHARED;
    f->carveout = -1;
  }
  return CUDA_SUCCESS;
}

static CUresult module_load(CUmodule *pmod, const void *image, char *log, size_t log_size,
                            int max_regs) {
  if (!pmod || !image) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&td__lock);
  struct CUctx_st *ctx;
  CUresult r = td__current(&ctx);
  struct CUmod_st *m = NULL;
  if (r == CUDA_SUCCESS) {
    m = calloc(1, sizeof *m);
    if (!m) r = CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (r == CUDA_SUCCESS) {
    const int *a = td__devices[ctx->device].attrs;
    int cc = a[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR] * 10 +
             a[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR];
    m->ctx = ctx;
    m->max_regs = max_regs;
    if (memcmp(image, ELFMAG, SELFMAG) == 0 && td__execute) {
      log_error(log, log_size,
                "nbcuda CPU device: a cubin (ELF image) cannot run on the CPU device; it runs "
                "the PTX it is given");
      r = CUDA_ERROR_INVALID_IMAGE;
    } else if (memcmp(image, ELFMAG, SELFMAG) == 0)
      r = load_elf(m, image, cc);
    else
      r = load_ptx(m, image, cc, log, log_size);
  }
  if (r == CUDA_SUCCESS) {
    for (int i = 0; i < m->nfuncs; i++)
      m->funcs[i].mod = m;
    m->next = modules;
    modules = m;
    *pmod = m;
  } else if (m) {
    module_free(m);
  }
  pthread_mutex_unlock(&td__lock);
  return r;
}

CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image) {
  TD_ENTER("cuModuleLoadData", "cuModuleLoadData");
  return module_load(module, image, NULL, 0, 0);
}

/* Options are accepted and ignored, except the error log buffer, which receives the
 * reason of a failed load like the real JIT's log would. */
CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image,
                                    unsigned int numOptions, CUjit_option *options,
                                    void **optionValues) {
  TD_ENTER("cuModuleLoadDataEx", "cuModuleLoadDataEx");
  if (numOptions > 0 && (!options || !optionValues)) return CUDA_ERROR_INVALID_VALUE;
  char *log = NULL;
  size_t log_size = 0;
  int max_regs = 0;
  for (unsigned i = 0; i < numOptions; i++) {
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER) log = optionValues[i];
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
      log_size = (size_t)(uintptr_t)optionValues[i];
    if (options[i] == CU_JIT_MAX_REGISTERS) max_regs = (int)(uintptr_t)optionValues[i];
  }
  if (log && log_size > 0) log[0] = '\0';
  return module_load(module, image, log, log_size, max_regs);
}

static int module_known(struct CUmod_st *m) {
  for (struct CUmod_st *it = modules; it; it = it->next)
    if (it == m) return 1;
  return 0;
}

static int function_known(struct CUfunc_st *f) {
  for (struct CUmod_st *m = modules; m; m = m->next)
    if (m->nfuncs > 0 && f >= m->funcs && f < m->funcs + m->nfuncs) return 1;
  return 0;
}

CUresult CUDAAPI cuModuleUnload(CUmodule hmod) {
  TD_ENTER("cuModuleUnload", "cuModuleUnload");
  pthread_mutex_lock(&td__lock);
  CUresult r = CUDA_ERROR_INVALID_HANDLE;
  for (struct CUmod_st **p = &modules; *p; p = &(*p)->next) {
    if (*p == hmod) {
      *p = hmod->next;
      module_free(hmod);
      r = CUDA_SUCCESS;
      break;
    }
  }
  pthread_mutex_unlock(&td__lock);
  return r;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name) {
  TD_ENTER("cuModuleGetFunction", "cuModuleGetFunction");
  if (!hfunc || !name) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&td__lock);
  CUresult r = CUDA_ERROR_INVALID_HANDLE;
  if (module_known(hmod)) {
    r = CUDA_ERROR_NOT_FOUND;
    for (int i = 0; i < hmod->nfuncs; i++)
      if (strcmp(hmod->funcs[i].name, name) == 0) {
        *hfunc = &hmod->funcs[i];
        r = CUDA_SUCCESS;
        break;
      }
  }
  pthread_mutex_unlock(&td__lock);
  return r;
}

CUresult CUDAAPI cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod,
                                      const char *name) {
  TD_ENTER("cuModuleGetGlobal", "cuModuleGetGlobal_v2");
  if (!name || (!dptr && !bytes)) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&td__lock);
  CUresult r = CUDA_ERROR_INVALID_HANDLE;
  if (module_known(hmod)) {
    td_global *g = find_global(hmod, name);
    r = g ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
    if (g && dptr) *dptr = g->va;
    if (g && bytes) *bytes = g->size;
  }
  pthread_mutex_unlock(&td__lock);
  return r;
}

/* The model of the header comment; the real driver's values for a small sm_90 kernel. */
CUresult CUDAAPI cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc) {
  TD_ENTER("cuFuncGetAttribute", "cuFuncGetAttribute");
  if (!pi || (int)attrib < 0 || attrib >= CU_FUNC_ATTRIBUTE_MAX)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&td__lock);
  CUresult r = CUDA_ERROR_INVALID_HANDLE;
  if (function_known(hfunc)) {
    r = CUDA_SUCCESS;
    switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      *pi = hfunc->max_threads;
      break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
      *pi = hfunc->shared_bytes;
      break;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES:
      *pi = hfunc->const_bytes;
      break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES:
      *pi = hfunc->local_bytes;
      break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS:
      *pi = func_regs(hfunc);
      break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
      *pi = hfunc->mod->target;
      break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
      *pi = hfunc->dynamic_shared_limit;
      break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
      *pi = hfunc->carveout;
      break;
    default:
      *pi = 0;
      break;
    }
  }
  pthread_mutex_unlock(&td__lock);
  return r;
}

/* The occupancy calculator of the header comment: blocks of block_size threads one SM of a
 * device with attributes attrs runs at once. Lock held. */
static int occupancy_blocks(const struct CUfunc_st *func, const int *a, int block_size,
                            size_t dynamic_smem) {
  long warps = (block_size + 31) / 32;
  long smem = (long)func->shared_bytes + (long)dynamic_smem +
              a[CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK];
  long blocks = a[CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR];
  long by_threads = a[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR] / (warps * 32);
  long by_regs =
      a[CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR] / (warps * 32 * func_regs(func));
  long by_smem = a[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR] / smem;
  if (by_threads < blocks) blocks = by_threads;
  if (by_regs < blocks) blocks = by_regs;
  if (by_smem < blocks) blocks = by_smem;
  if (block_size > func->max_threads || dynamic_smem > (size_t)func->dynamic_shared_limit)
    blocks = 0;
  return (int)blocks;
}

/* The two attributes the real driver lets set: the dynamic shared memory limit, up to the
 * device's opt-in shared memory per block less the function's static shared memory, and the
 * carveout, -1 to 100; anything else CUDA_ERROR_INVALID_VALUE. */
CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value) {
  TD_ENTER("cuFuncSetAttribute", "cuFuncSetAttribute");
  pthread_mutex_lock(&td__lock);
  CUresult r = function_known(hfunc) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  if (r == CUDA_SUCCESS && attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    int optin = td__devices[hfunc->mod->ctx->device]
                    .attrs[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN];
    if (value < 0 || value > optin - hfunc->shared_bytes)
      r = CUDA_ERROR_INVALID_VALUE;
    else
      hfunc->dynamic_shared_limit = value;
  } else if (r == CUDA_SUCCESS && attrib == CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT) {
    if (value < -1 || value > 100)
      r = CUDA_ERROR_INVALID_VALUE;
    else
      hfunc->carveout = value;
  } else if (r == CUDA_SUCCESS) {
    r = CUDA_ERROR_INVALID_VALUE;
  }
  pthread_mutex_unlock(&td__lock);
  return r;
}

/* The occupancy calculator for the current context's device. */
CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func,
                                                             int blockSize,
                                                             size_t dynamicSMemSize) {
  TD_ENTER("cuOccupancyMaxActiveBlocksPerMultiprocessor",
           "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  if (!numBlocks || blockSize <= 0) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&td__lock);
  struct CUctx_st *ctx;
  CUresult r = td__current(&ctx);
  if (r == CUDA_SUCCESS && !function_known(func)) r = CUDA_ERROR_INVALID_HANDLE;
  if (r == CUDA_SUCCESS)
    *numBlocks = occupancy_blocks(func, td__devices[ctx->device].attrs, blockSize,
                                  dynamicSMemSize);
  pthread_mutex_unlock(&td__lock);
  return r;
}

/* ---- launch --------------------------------------------------------------------------- */

static CUresult check_dims(const int *a, const unsigned g[3], const unsigned b[3],
                           unsigned shared, const struct CUfunc_st *f) {
  const int grid_max[3] = {a[CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X],
                           a[CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y],
                           a[CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z]};
  const int block_max[3] = {a[CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X],
                            a[CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y],
                            a[CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z]};
  unsigned long long threads = 1;
  for (int i = 0; i < 3; i++) {
    if (g[i] == 0 || g[i] > (unsigned)grid_max[i]) return CUDA_ERROR_INVALID_VALUE;
    if (b[i] == 0 || b[i] > (unsigned)block_max[i]) return CUDA_ERROR_INVALID_VALUE;
    threads *= b[i];
  }
  if (threads > (unsigned long long)a[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK])
    return CUDA_ERROR_INVALID_VALUE;
  if (threads > (unsigned long long)f->max_threads) /* the kernel's .maxntid / .reqntid */
    return CUDA_ERROR_INVALID_VALUE;
  if (shared > (unsigned)f->dynamic_shared_limit) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

/* Packs the arguments into info->param_bytes the way the kernel's parameter space is laid
 * out; the `extra` form (CU_LAUNCH_PARAM_BUFFER_*) is copied as given. */
static CUresult pack_params(struct CUfunc_st *f, void **kernelParams, void **extra,
                            tdrv_launch_info *info) {
  if (kernelParams && extra) return CUDA_ERROR_INVALID_VALUE;
  info->nparams = f->nparams < 0 ? 0 : f->nparams;
  if (extra) {
    void *buf = NULL;
    size_t *size = NULL;
    for (int i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
      if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
        buf = extra[i + 1];
      else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
        size = extra[i + 1];
      else
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (!buf || !size || *size > TDRV_MAX_PARAM_BYTES) return CUDA_ERROR_INVALID_VALUE;
    memcpy(info->param_bytes, buf, *size);
    info->param_total = *size;
    return CUDA_SUCCESS;
  }
  if (f->nparams > 0 && !kernelParams) return CUDA_ERROR_INVALID_VALUE;
  size_t off = 0;
  for (int i = 0; i < info->nparams; i++) {
    size_t al = f->palign[i] ? f->palign[i] : 1;
    off = (off + al - 1) / al * al;
    if (!kernelParams[i] || off + f->psize[i] > TDRV_MAX_PARAM_BYTES)
      return CUDA_ERROR_INVALID_VALUE;
    memcpy(info->param_bytes + off, kernelParams[i], f->psize[i]);
    info->param_size[i] = f->psize[i];
    info->param_offset[i] = off;
    off += f->psize[i];
  }
  info->param_total = off;
  return CUDA_SUCCESS;
}

static CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                       unsigned by, unsigned bz, unsigned shared, CUstream h, void **params,
                       void **extra, int per_thread, int cooperative) {
  tdrv_launch_info *info = calloc(1, sizeof *info);
  td_op *op = calloc(1, sizeof *op);
  if (!info || !op) {
    free(info);
    free(op);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  pthread_mutex_lock(&td__lock);
  struct CUctx_st *ctx;
  struct CUstream_st *s = NULL;
  CUresult r = function_known(f) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  if (r == CUDA_SUCCESS) r = td__current(&ctx);
  if (r == CUDA_SUCCESS && f->mod->ctx != ctx) r = CUDA_ERROR_INVALID_CONTEXT;
  info->grid[0] = gx, info->grid[1] = gy, info->grid[2] = gz;
  info->block[0] = bx, info->block[1] = by, info->block[2] = bz;
  if (r == CUDA_SUCCESS)
    r = check_dims(td__devices[ctx->device].attrs, info->grid, info->block, shared, f);
  /* a cooperative grid must be resident at once: occupancy x multiprocessors blocks */
  if (r == CUDA_SUCCESS && cooperative &&
      (unsigned long long)gx * gy * gz >
          (unsigned long long)occupancy_blocks(f, td__devices[ctx->device].attrs,
                                               (int)(bx * by * bz), shared) *
              (unsigned long long)td__devices[ctx->device]
                  .attrs[CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT])
    r = CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
  if (r == CUDA_SUCCESS) r = pack_params(f, params, extra, info);
  if (r == CUDA_SUCCESS) r = td__stream_resolve(h, &s);
  if (r == CUDA_SUCCESS && td__refuse_launch) r = CUDA_ERROR_NOT_SUPPORTED;
  if (r == CUDA_SUCCESS) {
    snprintf(info->function, sizeof info->function, "%s", f->name);
    info->shared_bytes = shared;
    info->stream = (uintptr_t)h;
    info->per_thread = per_thread;
    info->cooperative = cooperative;
    info->device = ctx->device;
    op->kind = TD_OP_LAUNCH;
    op->delay_ms = td__launch_delay_ms;
    op->launch = info; /* the op owns it now */
    if (f->mod->program && f->entry >= 0) {
      op->program = f->mod->program;
      op->program->refs++;
      op->entry = f->entry;
    }
    r = td__stream_enqueue(s, op);
    op = NULL;
    if (r == CUDA_SUCCESS) {
      last = *info;
      have_last = 1;
      launches++;
    }
  }
  pthread_mutex_unlock(&td__lock);
  if (op) {
    free(op);
    free(info);
  }
  return r;
}

/* tdrv_raise_in_next_kernel: what the next kernel run writes to its debug globals. */
static struct {
  int pending;
  unsigned values[7]; /* errcode, tid z y x, ctaid z y x */
} next_raise;

/* A debug kernel whose thread raised: <function>__errcode__, __tid{z,y,x}__, __ctaid{z,y,x}__
 * of the module that has them, as the kernel would have left them. */
static void run_raise(const tdrv_launch_info *l) {
  static const char *const what[7] = NBC_DEBUG_EXCEPTION_VARIABLES;
  next_raise.pending = 0;
  for (struct CUmod_st *m = modules; m; m = m->next)
    for (int i = 0; i < 7; i++) {
      char name[TDRV_MAX_NAME + 16];
      snprintf(name, sizeof name, "%s__%s__", l->function, what[i]);
      td_global *g = find_global(m, name);
      if (g && g->size >= 4) memcpy(g->host, &next_raise.values[i], 4);
    }
}

__attribute__((visibility("default"))) void tdrv_raise_in_next_kernel(int code, const int tid[3],
                                                                       const int ctaid[3]) {
  pthread_mutex_lock(&td__lock);
  next_raise.pending = 1;
  next_raise.values[0] = (unsigned)code;
  for (int i = 0; i < 3; i++) {
    next_raise.values[1 + i] = (unsigned)tid[2 - i];
    next_raise.values[4 + i] = (unsigned)ctaid[2 - i];
  }
  pthread_mutex_unlock(&td__lock);
}

/* The CPU device's view of device memory: the allocation (or other range) holding addr. */
static unsigned char *resolve(void *user, uint64_t addr, size_t bytes, uint64_t *base,
                              size_t *len) {
  (void)user;
  CUdeviceptr b = 0;
  unsigned char *h = td__mem_lookup(addr, bytes, &b, len);
  *base = b;
  return h;
}

CUresult td__kernel_run(const td_op *op) {
  const tdrv_launch_info *l = op->launch;
  if (next_raise.pending) run_raise(l);
  if (!op->program) return CUDA_SUCCESS;
  nbc__ptx_launch run = {.dynamic_shared = l->shared_bytes,
                         .params = l->param_bytes,
                         .param_size = l->param_total,
                         .resolve = resolve};
  for (int i = 0; i < 3; i++) {
    run.grid[i] = l->grid[i];
    run.block[i] = l->block[i];
  }
  char msg[600];
  if (!nbc__ptx_run(op->program->ptx, op->entry, &run, msg, sizeof msg)) {
    fprintf(stderr, "nbcuda CPU device: %s\n", msg);
    return CUDA_ERROR_ILLEGAL_ADDRESS;
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                unsigned int bx, unsigned int by, unsigned int bz,
                                unsigned int shared, CUstream h, void **kernelParams,
                                void **extra) {
  TD_ENTER("cuLaunchKernel", "cuLaunchKernel");
  return launch(f, gx, gy, gz, bx, by, bz, shared, h, kernelParams, extra, 0, 0);
}

CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
                                     unsigned int gz, unsigned int bx, unsigned int by,
                                     unsigned int bz, unsigned int shared, CUstream h,
                                     void **kernelParams, void **extra) {
  TD_ENTER("cuLaunchKernel", "cuLaunchKernel_ptsz");
  return launch(f, gx, gy, gz, bx, by, bz, shared, h, kernelParams, extra, 1, 0);
}

/* cuLaunchKernelEx: the configuration's launch; of its attributes only COOPERATIVE is
 * modelled (the others are accepted and ignored), an unknown id is CUDA_ERROR_INVALID_VALUE. */
static CUresult launch_ex(const CUlaunchConfig *config, CUfunction f, void **params,
                          void **extra, int per_thread) {
  if (!config || (config->numAttrs && !config->attrs)) return CUDA_ERROR_INVALID_VALUE;
  int cooperative = 0;
  for (unsigned i = 0; i < config->numAttrs; i++) {
    if ((int)config->attrs[i].id < 0 || (int)config->attrs[i].id > 64)
      return CUDA_ERROR_INVALID_VALUE;
    if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE)
      cooperative = config->attrs[i].value.cooperative != 0;
  }
  return launch(f, config->gridDimX, config->gridDimY, config->gridDimZ, config->blockDimX,
                config->blockDimY, config->blockDimZ, config->sharedMemBytes, config->hStream,
                params, extra, per_thread, cooperative);
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
                                  void **kernelParams, void **extra) {
  TD_ENTER("cuLaunchKernelEx", "cuLaunchKernelEx");
  return launch_ex(config, f, kernelParams, extra, 0);
}

CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
                                       void **kernelParams, void **extra) {
  TD_ENTER("cuLaunchKernelEx", "cuLaunchKernelEx_ptsz");
  return launch_ex(config, f, kernelParams, extra, 1);
}
