/* fuzz_frontend.c — libFuzzer target over (Python source, signature) pairs.
 *
 * The input is split at its first NUL byte: the source before it, the signature after it
 * (no NUL: all source, no signature). A NUL rather than a blank line separates them because
 * blank lines are everywhere in Python source.
 *
 * Front end (always): tokenize and dump the tokens; load the module (parse and bind the
 * globals), parse the function bodies the load left for later and check the tree (or the
 * syntax error) is the one parsing everything at once makes; dump the AST; deep-copy it and
 * check the copy dumps identically; resolve every name the module binds at the top level
 * plus a few fixed ones, and look each up as a function. Invariants checked: a phase that fails leaves a status and a diagnostic, one
 * that succeeds leaves NBC_OK; nothing crashes, hangs, leaks (ASan) or invokes undefined
 * behaviour (UBSan).
 *
 * The front end runs on the compiler's large stack (nbc__stack_run), as nbc_compile runs it:
 * the parser accepts trees 10,000 deep, which every recursive walk (folding, dumping,
 * copying) follows, and a sanitizer's frames at that depth are more than the fuzzer's own
 * thread holds.
 *
 * Whole pipeline (NBCUDA_FUZZ_PIPELINE=1 in the environment, and a signature present): also
 * compiles the first function of the module up to NVVM IR through nbc__compile_ex (no
 * libNVVM), as a kernel when the signature returns void (debug=True when the source's length
 * is odd), else as a device function.
 *
 * Depth: a custom mutator (LLVMFuzzerCustomMutator) grows nesting that byte-level mutation
 * would take millions of runs to build. A quarter of the mutations pick a name in the source
 * and wrap it in one construct repeated 2 to 4096 times — parentheses, brackets, calls,
 * subscripts, attributes, unary operators, `not`, `**`, `+`, comparison, `and` and `if ...
 * else` chains, lambdas — or repeat one line 2 to 4096 times (statement chains, elif chains,
 * augmented assignments), so inputs cross every depth limit of the parser and every later
 * recursive walk is fed the deepest trees the limits allow. The rest is libFuzzer's own
 * mutation.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"

#define CHECK(cond)                                                                            \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      fprintf(stderr, "fuzz_frontend: invariant failed: %s (line %d)\n", #cond, __LINE__);     \
      __builtin_trap();                                                                        \
    }                                                                                          \
  } while (0)

static void check_failed(const nbc__ctx *ctx) {
  CHECK(ctx->status != NBC_OK);
  CHECK(ctx->status == NBC_NO_MEMORY || ctx->diag.len > 0);
  CHECK(ctx->status != NBC_INTERNAL);
}

static void resolve_name(nbc__module *m, const char *name) {
  nbc_global_t g;
  int rc = nbc__module_resolve(m, name, &g);
  CHECK(rc == 0 || g.kind == NBC_GLOBAL_UNDEFINED);
  CHECK(g.kind <= NBC_GLOBAL_NONE); /* the last kind */
  if (rc == 0 && g.kind == NBC_GLOBAL_FUNCTION) CHECK(g.source && g.name);
  if (rc == 0 && g.kind == NBC_GLOBAL_CMATH_FUNCTION) CHECK(g.name != NULL);
  nbc__node *def = nbc__module_function(m, name);
  CHECK(!def || def->kind == NBC__N_FUNCDEF);
}

static void resolve_target(nbc__module *m, const nbc__node *t) {
  if (t->kind == NBC__N_NAME) {
    resolve_name(m, t->str);
  } else if (t->kind == NBC__N_TUPLE || t->kind == NBC__N_LIST) {
    for (int i = 0; i < t->list.count; i++)
      resolve_target(m, t->list.items[i]);
  }
}

static void resolve_body(nbc__module *m, const nbc__list *body) {
  for (int i = 0; i < body->count; i++) {
    const nbc__node *s = body->items[i];
    switch (s->kind) {
    case NBC__N_FUNCDEF:
      resolve_name(m, s->str);
      break;
    case NBC__N_ASSIGN:
      for (int j = 0; j < s->list.count; j++)
        resolve_target(m, s->list.items[j]);
      break;
    case NBC__N_IMPORT:
    case NBC__N_IMPORT_FROM:
      for (int j = 0; j < s->list.count; j++)
        resolve_name(m,
                     s->list.items[j]->alias ? s->list.items[j]->alias : s->list.items[j]->str);
      break;
    case NBC__N_IF:
    case NBC__N_TRY:
    case NBC__N_WHILE:
    case NBC__N_FOR:
      resolve_body(m, &s->body);
      resolve_body(m, &s->orelse);
      break;
    default:
      break;
    }
  }
}

/* The module's tree parsed and folded at once, dumped into *out; false (the error in
 * eager->diag) when it does not parse. Loading must make the same tree or the same error,
 * though it parses function bodies later (nbc__parse_module_deferred, then on use). */
static bool eager_tree(nbc__ctx *eager, nbc__arena *arena, const nbc__token *tokens,
                       int count, nbc__buf *out) {
  memset(eager, 0, sizeof *eager);
  eager->arena = arena;
  nbc__buf_init(&eager->diag, arena);
  nbc__buf_init(out, arena);
  nbc__node *ast = tokens ? nbc__parse_module(eager, tokens, count) : NULL;
  if (!ast || !nbc__fold_module(eager, ast)) return false;
  nbc__node_dump(out, ast, 0);
  return true;
}

static bool same_text(const nbc__buf *a, const nbc__buf *b) {
  return a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

static void front_end(const char *src, size_t size) {
  nbc__ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.arena = nbc__arena_create();
  if (!ctx.arena) return;
  nbc__buf_init(&ctx.diag, ctx.arena);
  nbc__file file = {"fuzz.py", NULL, size, 1, 0};
  file.text = nbc__arena_strndup(ctx.arena, src, size);
  nbc__buf out;
  nbc__buf_init(&out, ctx.arena);

  int count = 0;
  nbc__token *tokens = nbc__lex(&ctx, &file, &count);
  if (tokens) {
    CHECK(ctx.status == NBC_OK && count >= 1 && tokens[count - 1].kind == NBC__TOK_EOF);
    nbc__lex_dump(&out, tokens, count);
  } else {
    check_failed(&ctx);
  }
  bool lexed = tokens != NULL;

  nbc__ctx ctx2;
  memset(&ctx2, 0, sizeof ctx2);
  ctx2.arena = ctx.arena;
  nbc__buf_init(&ctx2.diag, ctx.arena);
  nbc__module *m = nbc__module_load(&ctx2, &file);
  nbc__ctx eager;
  nbc__buf eager_dump;
  bool parsed = eager_tree(&eager, ctx.arena, tokens, count, &eager_dump);
  if (!m) {
    check_failed(&ctx2);
    if (lexed && !parsed) CHECK(same_text(&ctx2.diag, &eager.diag));
  } else {
    CHECK(lexed && ctx2.status == NBC_OK && m->ast->kind == NBC__N_MODULE);
    CHECK(nbc__module_parse_bodies(&ctx2, m));
    nbc__buf a, b;
    nbc__buf_init(&a, ctx.arena);
    nbc__buf_init(&b, ctx.arena);
    nbc__node_dump(&a, m->ast, 0);
    CHECK(parsed && same_text(&a, &eager_dump));
    nbc__node *copy = nbc__node_clone(&ctx2, m->ast);
    CHECK(copy);
    nbc__node_dump(&b, copy, 0);
    CHECK(same_text(&a, &b));
    resolve_body(m, &m->ast->body);
    static const char *const fixed[] = {"cuda", "math", "float32", "range", "", "x"};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
      resolve_name(m, fixed[i]);
    CHECK(nbc__module_function(m, NULL) == NULL || nbc__module_function(m, "") != NULL);
  }
  nbc__arena_destroy(ctx.arena);
}

/* The name of the first top-level function of the source, or "" (into buf). */
static void first_function(const char *src, size_t size, char *buf, size_t cap) {
  buf[0] = '\0';
  nbc__ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.arena = nbc__arena_create();
  if (!ctx.arena) return;
  nbc__buf_init(&ctx.diag, ctx.arena);
  nbc__file file = {"fuzz.py", NULL, size, 1, 0};
  file.text = nbc__arena_strndup(ctx.arena, src, size);
  nbc__module *m = nbc__module_load(&ctx, &file);
  for (int i = 0; m && i < m->ast->body.count; i++)
    if (m->ast->body.items[i]->kind == NBC__N_FUNCDEF) {
      snprintf(buf, cap, "%s", m->ast->body.items[i]->str);
      break;
    }
  nbc__arena_destroy(ctx.arena);
}

static void pipeline(const char *src, size_t size, const char *sig) {
  char name[256];
  first_function(src, size, name, sizeof name);
  if (!name[0]) return;
  nbc_source_t source = {src, size, "fuzz.py", 1, 0};
  nbc_compile_options_t options;
  nbc_compile_options_init(&options);
  options.device = strncmp(sig, "void", 4) != 0;
  if (!options.device) options.abi = NBC_ABI_NUMBA;
  /* half the kernels as debug=True (raise sites, debug metadata), by the source's length */
  options.debug = !options.device && (size & 1);
  options.opt = !options.debug;
  nbc__compile_info info;
  memset(&info, 0, sizeof info);
  info.dump = NBC__DUMP_IR;
  nbc_compile_result_t *result = NULL;
  nbc_status_t st = nbc__compile_ex(&source, name, sig, &options, NULL, &info, &result);
  if (st == NBC_OK) {
    size_t n = 0;
    CHECK(nbc_compile_result_code(result, &n) != NULL && n > 0);
  } else {
    if (st == NBC_INTERNAL) fprintf(stderr, "%s\n", nbc_last_error());
    CHECK(st != NBC_INTERNAL);
  }
  nbc_compile_result_destroy(result);
}

/* --------------------------------------------------------------- the mutator --- */

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

/* The constructs a name is wrapped in: prefix, suffix, each repeated. */
static const char *const wrappers[][2] = {
    {"(", ")"},           {"[", "]"},       {"f(", ")"},   {"(", ",)"},    {"", "[0]"},
    {"", ".x"},           {"not ", ""},     {"- ", ""},    {"~", ""},      {"a ** ", ""},
    {"", " ** a"},        {"", " + a"},     {"", " < a"},  {"", " and a"}, {"", " or a"},
    {"a if a else ", ""}, {"lambda: ", ""}, {"{0: ", "}"}, {"", "(a)"},    {"a * ", ""},
};

static uint32_t next_random(uint32_t *state) {
  *state = *state * 1103515245u + 12345u;
  return *state >> 8;
}

/* Wraps the name at [at, end) of data in `times` copies of a wrapper; the new size, or 0 when
 * it would not fit max_size. */
static size_t wrap_name(uint8_t *data, size_t size, size_t max_size, size_t at, size_t end,
                        const char *pre, const char *post, size_t times) {
  size_t lp = strlen(pre), ls = strlen(post);
  size_t grow = times * (lp + ls);
  if (size + grow > max_size) return 0;
  memmove(data + end + grow, data + end, size - end);   /* the tail */
  memmove(data + at + times * lp, data + at, end - at); /* the name */
  for (size_t i = 0; i < times; i++)
    memcpy(data + at + i * lp, pre, lp);
  for (size_t i = 0; i < times; i++)
    memcpy(data + end + times * lp + i * ls, post, ls);
  return size + grow;
}

/* Repeats the line holding offset at `times` times; the new size, or 0 when it would not fit.
 */
static size_t repeat_line(uint8_t *data, size_t size, size_t max_size, size_t src_size,
                          size_t at, size_t times) {
  size_t start = at, end = at;
  while (start > 0 && data[start - 1] != '\n')
    start--;
  while (end < src_size && data[end] != '\n')
    end++;
  if (end == src_size) return 0; /* the last line has no newline to repeat with */
  size_t len = end + 1 - start;
  if (size + len * (times - 1) > max_size) return 0;
  memmove(data + end + 1 + len * (times - 1), data + end + 1, size - end - 1);
  for (size_t i = 1; i < times; i++)
    memcpy(data + start + i * len, data + start, len);
  return size + len * (times - 1);
}

static bool name_char(uint8_t c, bool digits) {
  return c == '_' || (unsigned)((c | 32) - 'a') < 26u || (digits && (unsigned)(c - '0') < 10u);
}

static size_t deepen(uint8_t *data, size_t size, size_t max_size, uint32_t seed) {
  const uint8_t *nul = memchr(data, '\0', size);
  size_t src_size = nul ? (size_t)(nul - data) : size;
  if (src_size == 0) return 0;
  uint32_t r = seed;
  size_t times = (size_t)2 << next_random(&r) % 12; /* 2 .. 4096 */
  size_t pos = next_random(&r) % src_size;
  if (next_random(&r) % 4 == 0) return repeat_line(data, size, max_size, src_size, pos, times);
  /* the first name at or after pos (a letter or '_' not inside a longer name) */
  size_t at = pos;
  while (at < src_size &&
         !(name_char(data[at], false) && (at == 0 || !name_char(data[at - 1], true))))
    at++;
  if (at == src_size) return 0;
  size_t end = at;
  while (end < src_size && name_char(data[end], true))
    end++;
  const char *const *w = wrappers[next_random(&r) % (sizeof wrappers / sizeof wrappers[0])];
  while (times > 1 && size + times * (strlen(w[0]) + strlen(w[1])) > max_size)
    times /= 2;
  return wrap_name(data, size, max_size, at, end, w[0], w[1], times);
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned seed) {
  if (seed % 4 == 0) {
    size_t grown = deepen(data, size, max_size, seed);
    if (grown) return grown;
  }
  return LLVMFuzzerMutate(data, size, max_size);
}

/* front_end's arguments, for nbc__stack_run. */
typedef struct front_end_job {
  const char *src;
  size_t size;
} front_end_job;

static void front_end_on_stack(void *data) {
  const front_end_job *job = data;
  front_end(job->src, job->size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  const char *nul = memchr(text, '\0', size);
  size_t src_size = nul ? (size_t)(nul - text) : size;
  front_end_job job = {text, src_size};
  nbc__stack_run(front_end_on_stack, &job);
  static int full = -1;
  if (full < 0) full = getenv("NBCUDA_FUZZ_PIPELINE") && atoi(getenv("NBCUDA_FUZZ_PIPELINE"));
  if (full && nul) {
    size_t sig_size = size - src_size - 1;
    char *sig = malloc(sig_size + 1);
    if (!sig) return 0;
    memcpy(sig, nul + 1, sig_size);
    sig[sig_size] = '\0';
    char *src = malloc(src_size + 1);
    if (src) {
      memcpy(src, text, src_size);
      src[src_size] = '\0';
      pipeline(src, src_size, sig);
      free(src);
    }
    free(sig);
  }
  return 0;
}
