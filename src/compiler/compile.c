/* compile.c — the compiler's pipeline and the public nbc_compile API.
 *
 * How it works. nbc__compile_ex runs the phases in order, each one a call into its own
 * file, timing each:
 *
 *   load (lex.c, parse.c, resolve.c) -> find the function -> signature (signature.c)
 *     -> infer (infer.c) -> lower (lower.c) -> libNVVM (nvvm.c)
 *
 * Everything one compilation allocates lives in one arena freed at the end; only the
 * result (code, return type, symbol, log) is copied out with malloc, so results outlive
 * the compilation and compiles on different threads share nothing. The first error stops
 * the pipeline; its text ("file:line:col: error: ...", the source line, a caret) is left
 * in nbc_last_error() for the calling thread. The pipeline runs on a thread with a large
 * stack (stack.c), so that a caller with a small stack (a Python thread, musl's 128 KB)
 * compiles the deepest input the limits accept; its error is carried back. A dump request
 * (--dump=tokens|ast|types|ir on the CLI) stops after that phase and returns the phase's
 * printed output as the code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compiler/compiler.h"
#include "driver/driver_api.h"

struct nbc_compile_result {
  char *code;
  size_t size;
  char *ir; /* the NVVM IR of the code when the options kept it (keep_ir), else NULL */
  size_t ir_size;
  char *return_type;
  char *symbol;
  char *log;
  char *warnings; /* the compiler's warnings (nbc_compile_result_warnings), NULL: none */
  int cooperative; /* calls cudadevrt's cudaCG* functions (nbc_compile_result_cooperative) */
  int fp16;        /* calls numba.cuda.fp16's wrappers (nbc_compile_result_uses_fp16) */
  nbc_raise_site_t *raises; /* a debug kernel's raise sites, their strings in raise_text */
  int nraises;
  char *raise_text;
  /* The entry's local variables: var_text[2 i] the name, [2 i + 1] numba's type text, the
   * strings in one block after the pointers. */
  const char **var_text;
  int nvars;
};

/* text copied to *pat, which advances past it; NULL for NULL. */
static const char *copy_into(char **pat, const char *text) {
  if (!text) return NULL;
  size_t n = strlen(text) + 1;
  char *copy = memcpy(*pat, text, n);
  *pat += n;
  return copy;
}

/* Copies the entry's variables (names and type texts) into r: one allocation. */
static int copy_vars(nbc_compile_result_t *r, nbc__ctx *ctx, const nbc__func *entry) {
  if (!entry || entry->nvars <= 0) return 0;
  size_t bytes = 2 * (size_t)entry->nvars * sizeof(char *);
  for (int i = 0; i < entry->nvars; i++)
    bytes += strlen(entry->vars[i].name) + strlen(nbc__type_name(ctx, entry->vars[i].type)) + 2;
  r->var_text = malloc(bytes);
  if (!r->var_text) return -1;
  char *at = (char *)(r->var_text + 2 * entry->nvars);
  for (int i = 0; i < entry->nvars; i++) {
    r->var_text[2 * i] = copy_into(&at, entry->vars[i].name);
    r->var_text[2 * i + 1] = copy_into(&at, nbc__type_name(ctx, entry->vars[i].type));
  }
  r->nvars = entry->nvars;
  return 0;
}

int nbc_compile_result_variable_count(const nbc_compile_result_t *result) {
  return result ? result->nvars : 0;
}

const char *nbc_compile_result_variable(const nbc_compile_result_t *result, int i,
                                        const char **ptype) {
  if (!result || i < 0 || i >= result->nvars) return NULL;
  if (ptype) *ptype = result->var_text[2 * i + 1];
  return result->var_text[2 * i];
}

/* Copies the program's raise sites (arena) into r: one array and one block of strings. */
static int copy_raises(nbc_compile_result_t *r, const nbc__program *p) {
  if (p->nraises <= 0) return 0;
  size_t bytes = 0;
  for (int i = 0; i < p->nraises; i++) {
    const nbc_raise_site_t *s = &p->raises[i];
    const char *texts[4] = {s->function, s->filename, s->exception, s->args};
    for (int t = 0; t < 4; t++)
      bytes += texts[t] ? strlen(texts[t]) + 1 : 0;
  }
  r->raises = malloc(sizeof *r->raises * (size_t)p->nraises);
  r->raise_text = malloc(bytes ? bytes : 1);
  if (!r->raises || !r->raise_text) return -1;
  char *at = r->raise_text;
  for (int i = 0; i < p->nraises; i++) {
    const nbc_raise_site_t *s = &p->raises[i];
    nbc_raise_site_t *d = &r->raises[i];
    *d = *s;
    d->exception = copy_into(&at, s->exception);
    d->args = copy_into(&at, s->args);
    d->function = copy_into(&at, s->function);
    d->filename = copy_into(&at, s->filename);
  }
  r->nraises = p->nraises;
  return 0;
}

int nbc_compile_result_raise_count(const nbc_compile_result_t *result) {
  return result ? result->nraises : 0;
}

const nbc_raise_site_t *nbc_compile_result_raise_site(const nbc_compile_result_t *result,
                                                      int i) {
  return result && i >= 0 && i < result->nraises ? &result->raises[i] : NULL;
}

/* Whether code names a symbol starting with prefix: external functions appear in the PTX's
 * .extern declarations, in LTO-IR's string table and in NVVM IR alike. */
static int mentions(const char *code, size_t size, const char *prefix) {
  return code && memmem(code, size, prefix, strlen(prefix)) != NULL;
}

/* What linking code (size bytes) needs: cudadevrt's grid functions, numba.cuda.fp16's
 * wrappers. LTO-IR does not always show its external names plainly: the NVVM IR it was made
 * from is read then (its declarations). */
static void note_needs(nbc_compile_result_t *r, const char *code, size_t size) {
  r->cooperative |= mentions(code, size, "cudaCGGetIntrinsicHandle") ||
                    mentions(code, size, "cudaCGSynchronize");
  r->fp16 |= mentions(code, size, "nbc_fp16_") || mentions(code, size, "nbc_bf16_");
}

int nbc_compile_result_cooperative(const nbc_compile_result_t *result) {
  return result ? result->cooperative : 0;
}

int nbc_compile_result_uses_fp16(const nbc_compile_result_t *result) {
  return result ? result->fp16 : 0;
}

const char *const nbc__compile_phase_names[NBC__PHASE_COUNT] = {"load", "signature", "infer",
                                                                "lower", "nvvm"};

void nbc_compile_options_init(nbc_compile_options_t *options) {
  if (!options) return;
  memset(options, 0, sizeof *options);
  options->device = 1;
  options->opt = 1;
  options->abi = NBC_ABI_C;
  options->output = NBC_OUTPUT_PTX;
}

size_t nbc_compile_max_source_size(const nbc_compile_options_t *options) {
  if (options && options->max_source_size) return options->max_source_size;
  const char *env = getenv("NBCUDA_MAX_SOURCE_SIZE");
  char *end = NULL;
  unsigned long long v = env && *env ? strtoull(env, &end, 10) : 0;
  return v && end && !*end ? (size_t)v : NBC_DEFAULT_MAX_SOURCE_SIZE;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static char *dup_text(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (!d) return NULL;
  if (n) memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

void nbc_compile_result_destroy(nbc_compile_result_t *result) {
  if (!result) return;
  free(result->code);
  free(result->ir);
  free(result->return_type);
  free(result->symbol);
  free(result->log);
  free(result->warnings);
  free(result->raises);
  free(result->raise_text);
  free((void *)result->var_text);
  free(result);
}

const char *nbc_compile_result_code(const nbc_compile_result_t *result, size_t *psize) {
  if (psize) *psize = result ? result->size : 0;
  return result ? result->code : NULL;
}

const char *nbc_compile_result_ir(const nbc_compile_result_t *result, size_t *psize) {
  if (psize) *psize = result && result->ir ? result->ir_size : 0;
  return result ? result->ir : NULL;
}

const char *nbc_compile_result_return_type(const nbc_compile_result_t *result) {
  return result && result->return_type ? result->return_type : "";
}

const char *nbc_compile_result_symbol(const nbc_compile_result_t *result) {
  return result && result->symbol ? result->symbol : "";
}

const char *nbc_compile_result_log(const nbc_compile_result_t *result) {
  return result && result->log ? result->log : "";
}

const char *nbc_compile_result_warnings(const nbc_compile_result_t *result) {
  return result && result->warnings ? result->warnings : "";
}

static nbc_compile_result_t *make_result(const char *code, size_t size);

nbc_status_t nbc_compile_result_create(const char *code, size_t size, const char *symbol,
                                       const char *return_type,
                                       nbc_compile_result_t **presult) {
  if (!presult || (!code && size) || !symbol || !return_type)
    return nbc__set_error(NBC_INVALID_ARGUMENT,
                          "nbc_compile_result_create: code, symbol, return type and presult "
                          "are required");
  *presult = NULL;
  nbc_compile_result_t *r = make_result(code, size);
  if (r) {
    r->symbol = dup_text(symbol, strlen(symbol));
    r->return_type = dup_text(return_type, strlen(return_type));
  }
  if (!r || !r->symbol || !r->return_type) {
    nbc_compile_result_destroy(r);
    return nbc__set_error(NBC_NO_MEMORY, "out of memory");
  }
  *presult = r;
  return NBC_OK;
}

/* Whether name can be a C ABI symbol: a letter or '_', then letters, digits, '_' or '$' (a C
 * identifier, and a PTX one: PTX takes '$' too). It is written into the NVVM IR as it is, so
 * nothing else may pass (a quote or a newline would add IR of the caller's choosing). */
static bool is_abi_name(const char *name) {
  if (!((*name >= 'a' && *name <= 'z') || (*name >= 'A' && *name <= 'Z') || *name == '_'))
    return false;
  for (const char *p = name + 1; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          *p == '_' || *p == '$'))
      return false;
  return true;
}

/* name as a quoted Python-style literal for a message: quotes and backslashes escaped,
 * other bytes outside printable ASCII as \xNN, at most 60 of them shown. */
static void quote_name(char *out, size_t size, const char *name) {
  size_t n = 0;
  out[n++] = '\'';
  for (const unsigned char *p = (const unsigned char *)name; *p && n + 8 < size; p++) {
    if (p - (const unsigned char *)name == 60) {
      n += (size_t)snprintf(out + n, size - n, "...");
      break;
    }
    if (*p == '\'' || *p == '\\') n += (size_t)snprintf(out + n, size - n, "\\%c", *p);
    else if (*p < 0x20 || *p >= 0x7f) n += (size_t)snprintf(out + n, size - n, "\\x%02x", *p);
    else out[n++] = (char)*p;
  }
  out[n++] = '\'';
  out[n] = '\0';
}

/* The options numba refuses before compiling anything (compile()'s own checks). */
static nbc_status_t check_options(const nbc_compile_options_t *o) {
  if (o->abi_name && *o->abi_name && !is_abi_name(o->abi_name)) {
    char shown[320];
    quote_name(shown, sizeof shown, o->abi_name);
    return nbc__set_error(NBC_INVALID_ARGUMENT,
                          "invalid abi_name %s: a C ABI name is a letter or '_' followed by "
                          "letters, digits, '_' or '$'", shown);
  }
  if (o->output != NBC_OUTPUT_PTX && o->output != NBC_OUTPUT_LTOIR &&
      o->output != NBC_OUTPUT_NVVM_IR)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "Unsupported output type: %d", (int)o->output);
  if (o->abi != NBC_ABI_C && o->abi != NBC_ABI_NUMBA)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "Unsupported ABI: %d", (int)o->abi);
  if (o->abi == NBC_ABI_C && !o->device)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "The C ABI is not supported for kernels");
  if (o->forceinline && !o->device)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "Cannot force-inline kernels");
  if (o->forceinline && o->output != NBC_OUTPUT_LTOIR)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "Can only designate forced inlining in LTO-IR");
  if (!(o->time_limit >= 0) || o->time_limit > 1e9) /* NaN too */
    return nbc__set_error(NBC_INVALID_ARGUMENT,
                          "The time limit must be a number of seconds from 0 (none) to 1e9, "
                          "not %g",
                          o->time_limit);
  if (o->nlaunch_bounds < 0 || o->nlaunch_bounds > 3)
    return nbc__set_error(NBC_INVALID_ARGUMENT,
                          "Got %d launch bounds. A maximum of three are supported: "
                          "(max_threads_per_block, min_blocks_per_sm, max_blocks_per_cluster)",
                          o->nlaunch_bounds);
  return NBC_OK;
}

/* A result whose code is the given text (PTX, or a dump). */
static nbc_compile_result_t *make_result(const char *code, size_t size) {
  nbc_compile_result_t *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->code = dup_text(code ? code : "", code ? size : 0);
  r->size = code ? size : 0;
  note_needs(r, r->code, r->size);
  r->log = dup_text("", 0);
  if (!r->code || !r->log) {
    nbc_compile_result_destroy(r);
    return NULL;
  }
  return r;
}

static nbc_status_t compile_pipeline(const nbc_source_t *source, const char *name,
                                     const char *signature, const nbc_compile_options_t *options,
                                     const nbc_resolver_t *resolver, nbc__compile_info *info,
                                     nbc_compile_result_t **presult) {
  if (presult) *presult = NULL;
  if (!source || !source->text || !signature || !presult)
    return nbc__set_error(NBC_INVALID_ARGUMENT,
                          "nbc_compile: source, source->text, signature and presult are "
                          "required");
  nbc_compile_options_t defaults;
  nbc_compile_options_init(&defaults);
  const nbc_compile_options_t *o = options ? options : &defaults;
  nbc_status_t st = check_options(o);
  if (st != NBC_OK) return st;
  size_t source_size = source->size ? source->size : strlen(source->text);
  if (source_size > nbc_compile_max_source_size(o))
    return nbc__set_error(NBC_INVALID_ARGUMENT,
                          "%s: the source is %zu bytes, more than the limit of %zu (raise it "
                          "with max_source_size, NBCUDA_MAX_SOURCE_SIZE or --max-source-size)",
                          source->filename ? source->filename : "<string>", source_size,
                          nbc_compile_max_source_size(o));
  nbc__dump dump = info ? info->dump : NBC__DUMP_NONE;
  if (dump == NBC__DUMP_NONE && o->output == NBC_OUTPUT_NVVM_IR) dump = NBC__DUMP_IR;
  if (info) memset(info->ms, 0, sizeof info->ms);

  nbc__ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.arena = nbc__arena_create();
  if (!ctx.arena) return nbc__set_error(NBC_NO_MEMORY, "out of memory");
  nbc__buf_init(&ctx.diag, ctx.arena);
  ctx.options = o;
  ctx.resolver = resolver;

  nbc__file *file = nbc__arena_alloc(ctx.arena, sizeof *file);
  size_t size = source->size ? source->size : strlen(source->text);
  nbc__buf text; /* the code a dump returns */
  nbc__buf_init(&text, ctx.arena);
  nbc__nvvm_output out = {0};
  nbc_compile_result_t *result = NULL;
  nbc__module *module = NULL;
  nbc__node *def = NULL;
  nbc__signature sig;
  nbc__buf ir;
  nbc__buf_init(&ir, ctx.arena);
  double t0 = now_ms(), t;
  if (!file) goto oom;
  file->name = nbc__arena_strdup(ctx.arena, source->filename ? source->filename : "<string>");
  file->text = nbc__arena_strndup(ctx.arena, source->text, size);
  file->size = size;
  file->first_line = source->first_line > 0 ? source->first_line : 1;
  file->col_offset = source->col_offset > 0 ? source->col_offset : 0;
  if (!file->name || !file->text) goto oom;

  /* 1. Source to a module: tokens, AST, global bindings. */
  if (dump == NBC__DUMP_TOKENS) {
    int count = 0;
    nbc__token *tokens = nbc__lex(&ctx, file, &count);
    if (!tokens) goto fail;
    nbc__lex_dump(&text, tokens, count);
    goto dumped;
  }
  module = nbc__module_load_lenient(&ctx, file);
  if (!module) goto fail;
  def = nbc__module_function_parsed(&ctx, module, name);
  if (!def && ctx.status != NBC_OK) goto fail;
  const char *what = NULL;
  const nbc__node *other = nbc__module_non_function(module, name, &what);
  if (other) {
    const nbc__token *at = other->tok; /* an async def's 'async' */
    if (nbc__tok_is(at, "def") && nbc__tok_is(at - 1, "async")) at--;
    nbc__diag_error(&ctx, NBC_INVALID_ARGUMENT, file, at->line, at->col,
                    "'%s' is %s; only functions defined with a plain def can be compiled",
                    name, what);
    goto fail;
  }
  /* the function asked for in a statement that does not parse, else (no such function) the
   * file's first statement that does not parse */
  if (!def && (nbc__module_report_unparsed(&ctx, module, name && *name ? name : NULL, false) ||
               nbc__module_report_unparsed(&ctx, module, NULL, false)))
    goto fail;
  if (!def) {
    ctx.status = NBC_INVALID_ARGUMENT;
    if (name && *name)
      nbc__buf_printf(&ctx.diag, "%s: error: no function named '%s'", file->name, name);
    else
      nbc__buf_printf(&ctx.diag,
                      "%s: error: no function name given and the file does not define "
                      "exactly one function",
                      file->name);
    goto fail;
  }
  t = now_ms();
  if (info) info->ms[NBC__PHASE_LOAD] = t - t0;
  t0 = t;
  if (dump == NBC__DUMP_AST) {
    nbc__node_dump(&text, def, 0);
    goto dumped;
  }

  /* 2. The signature. */
  nbc__sig_mode mode = {.kernel = !o->device};
  if (!nbc__signature_parse_mode(&ctx, signature, &mode, &sig)) goto fail;
  t = now_ms();
  if (info) info->ms[NBC__PHASE_SIGNATURE] = t - t0;
  t0 = t;

  /* 3. Types: the entry and every callee specialisation. */
  if (!nbc__infer(&ctx, module, def, &sig)) goto fail;
  t = now_ms();
  if (info) info->ms[NBC__PHASE_INFER] = t - t0;
  t0 = t;
  if (dump == NBC__DUMP_TYPES) {
    nbc__infer_dump(&text, ctx.program);
    goto dumped;
  }

  /* 4. NVVM IR. */
  if (!nbc__lower(&ctx, ctx.program, &ir)) goto fail;
  t = now_ms();
  if (info) info->ms[NBC__PHASE_LOWER] = t - t0;
  t0 = t;
  if (dump == NBC__DUMP_IR) {
    nbc__buf_append(&text, ir.data, ir.len);
    goto dumped;
  }

  /* 5. libNVVM: verify, then compile (with libdevice when math was used). */
  if (!nbc__nvvm_compile(&ctx, ir.data, ir.len, ctx.program->uses_libdevice, &out)) goto fail;
  t = now_ms();
  if (info) info->ms[NBC__PHASE_NVVM] = t - t0;

  result = calloc(1, sizeof *result);
  if (!result) goto oom;
  result->code = out.code;
  result->size = out.size;
  note_needs(result, result->code, result->size);
  if (ctx.options && ctx.options->output == NBC_OUTPUT_LTOIR)
    note_needs(result, ir.data, ir.len);
  result->log = out.log;
  out.code = out.log = NULL;
  if (o->keep_ir) {
    result->ir = dup_text(ir.data ? ir.data : "", ir.len);
    result->ir_size = ir.len;
    if (!result->ir) goto oom;
  }
  result->return_type = dup_text(nbc__type_name(&ctx, ctx.program->entry->ret),
                                 strlen(nbc__type_name(&ctx, ctx.program->entry->ret)));
  result->symbol = dup_text(ctx.program->entry->symbol, strlen(ctx.program->entry->symbol));
  if (ctx.warnings.len &&
      !(result->warnings = dup_text(ctx.warnings.data, ctx.warnings.len)))
    goto oom;
  if (!result->return_type || !result->symbol || !result->log ||
      copy_raises(result, ctx.program) < 0 || copy_vars(result, &ctx, ctx.program->entry) < 0)
    goto oom;
  *presult = result;
  nbc__arena_destroy(ctx.arena);
  return NBC_OK;

dumped:
  if (text.oom) goto oom;
  result = make_result(text.data, text.len);
  if (!result) goto oom;
  if (ctx.program && ctx.program->entry) {
    const char *rt = nbc__type_name(&ctx, ctx.program->entry->ret);
    result->return_type = dup_text(rt, strlen(rt));
    const char *symbol = ctx.program->entry->symbol; /* set by lowering */
    if (symbol) result->symbol = dup_text(symbol, strlen(symbol));
    if (!result->return_type || (symbol && !result->symbol) ||
        copy_vars(result, &ctx, ctx.program->entry) < 0)
      goto oom;
  }
  *presult = result;
  nbc__arena_destroy(ctx.arena);
  return NBC_OK;

oom:
  nbc__diag_oom(&ctx);
fail:
  nbc__nvvm_output_free(&out);
  nbc_compile_result_destroy(result);
  st = ctx.status != NBC_OK ? ctx.status : NBC_INTERNAL;
  if (ctx.diag.data && ctx.diag.len)
    nbc__set_error_kind(st, ctx.kind, "%s", ctx.diag.data);
  else
    nbc__set_error(st, "%s", nbc_status_string(st));
  nbc__arena_destroy(ctx.arena);
  return st;
}

/* One compile's arguments and outcome, handed to the thread that runs it. */
typedef struct compile_job {
  const nbc_source_t *source;
  const char *name, *signature;
  const nbc_compile_options_t *options;
  const nbc_resolver_t *resolver;
  nbc__compile_info *info;
  nbc_compile_result_t **presult;
  nbc_status_t status;
  char *error; /* the compiling thread's last error (malloc'd), when it failed */
  nbc_error_kind_t kind; /* and its kind */
} compile_job;

static void compile_on_stack(void *data) {
  compile_job *j = data;
  j->status = compile_pipeline(j->source, j->name, j->signature, j->options, j->resolver,
                               j->info, j->presult);
  if (j->status != NBC_OK) j->error = dup_text(nbc_last_error(), strlen(nbc_last_error()));
  j->kind = nbc_last_error_kind();
}

/* The pipeline runs on a large stack of its own (stack.c), whatever the caller's stack; the
 * error it leaves on that thread is set again on the caller's. */
nbc_status_t nbc__compile_ex(const nbc_source_t *source, const char *name,
                             const char *signature, const nbc_compile_options_t *options,
                             const nbc_resolver_t *resolver, nbc__compile_info *info,
                             nbc_compile_result_t **presult) {
  compile_job job = {source,  name,   signature, options, resolver, info,
                     presult, NBC_OK, NULL,      NBC_ERROR_KIND_NONE};
  nbc__stack_run(compile_on_stack, &job);
  if (job.status != NBC_OK) {
    if (job.error)
      nbc__set_error_kind(job.status, job.kind, "%s", job.error);
    else
      nbc__set_error(job.status, "%s", nbc_status_string(job.status));
    free(job.error);
  }
  return job.status;
}

nbc_status_t nbc_compile(const nbc_source_t *source, const char *name, const char *signature,
                         const nbc_compile_options_t *options, const nbc_resolver_t *resolver,
                         nbc_compile_result_t **presult) {
  return nbc__compile_ex(source, name, signature, options, resolver, NULL, presult);
}
