/* front_util.h — helpers shared by the front end's tests (test_lex.c, test_parse.c,
 * test_diagnostics_front.c, test_resolve.c): run the tokenizer, the parser or the module
 * loader over a string and return what they produced as text, so each test is one
 * input and one expected string.
 *
 * Each helper uses a fresh arena that lives until the test's process ends (tests fork), so
 * the strings returned need no freeing.
 */
#ifndef NBCUDA_FRONT_UTIL_H
#define NBCUDA_FRONT_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"

static inline nbc__ctx *fe_new_ctx(void) {
  nbc__ctx *ctx = calloc(1, sizeof *ctx);
  ctx->arena = nbc__arena_create();
  nbc__buf_init(&ctx->diag, ctx->arena);
  return ctx;
}

static inline nbc__file *fe_file(nbc__ctx *ctx, const char *name, const char *src) {
  nbc__file *f = nbc__arena_alloc(ctx->arena, sizeof *f);
  f->name = name;
  f->size = strlen(src);
  f->text = nbc__arena_strndup(ctx->arena, src, f->size);
  f->first_line = 1;
  return f;
}

/* A compact token stream: source text of each token, NL/IN/DE/EOF for the layout ones. */
static inline const char *fe_tokens(const char *src) {
  nbc__ctx *ctx = fe_new_ctx();
  int count = 0;
  nbc__token *t = nbc__lex(ctx, fe_file(ctx, "t.py", src), &count);
  if (!t) return ctx->diag.data;
  nbc__buf out;
  nbc__buf_init(&out, ctx->arena);
  for (int i = 0; i < count; i++) {
    if (i) nbc__buf_puts(&out, " ");
    switch (t[i].kind) {
    case NBC__TOK_NEWLINE:
      nbc__buf_puts(&out, "NL");
      break;
    case NBC__TOK_INDENT:
      nbc__buf_puts(&out, "IN");
      break;
    case NBC__TOK_DEDENT:
      nbc__buf_puts(&out, "DE");
      break;
    case NBC__TOK_EOF:
      nbc__buf_puts(&out, "EOF");
      break;
    default:
      nbc__buf_append(&out, nbc__tok_start(&t[i]), (size_t)t[i].len);
      break;
    }
  }
  return out.data;
}

/* The tokens of src, or NULL (with the diagnostic printed). */
static inline nbc__token *fe_lex(const char *src, int *pcount) {
  nbc__ctx *ctx = fe_new_ctx();
  nbc__token *t = nbc__lex(ctx, fe_file(ctx, "t.py", src), pcount);
  if (!t) fprintf(stderr, "lex failed: %s\n", ctx->diag.data);
  return t;
}

/* The loaded module of src with every function body parsed, or NULL (with the diagnostic
 * printed). */
static inline nbc__module *fe_load_named(const char *name, const char *src) {
  nbc__ctx *ctx = fe_new_ctx();
  nbc__module *m = nbc__module_load(ctx, fe_file(ctx, name, src));
  if (m && !nbc__module_parse_bodies(ctx, m)) m = NULL;
  if (!m) fprintf(stderr, "load failed: %s\n", ctx->diag.data);
  return m;
}

static inline nbc__module *fe_load(const char *src) {
  return fe_load_named("t.py", src);
}

/* The parser's tree of src (lexed and parsed, nothing folded), or NULL with the diagnostic
 * in ctx. */
static inline nbc__node *fe_parse(nbc__ctx *ctx, const char *src) {
  int count = 0;
  nbc__token *tokens = nbc__lex(ctx, fe_file(ctx, "t.py", src), &count);
  return tokens ? nbc__parse_module(ctx, tokens, count) : NULL;
}

/* The AST dump of src's module as parsed, or its diagnostic. */
static inline const char *fe_ast(const char *src) {
  nbc__ctx *ctx = fe_new_ctx();
  nbc__node *ast = fe_parse(ctx, src);
  if (!ast) return ctx->diag.data;
  nbc__buf out;
  nbc__buf_init(&out, ctx->arena);
  nbc__node_dump(&out, ast, 0);
  return out.data;
}

/* The AST dump of src's module as loaded (folded as CPython folds it: fold.c). */
static inline const char *fe_folded(const char *src) {
  nbc__ctx *ctx = fe_new_ctx();
  nbc__module *m = nbc__module_load(ctx, fe_file(ctx, "t.py", src));
  if (!m || !nbc__module_parse_bodies(ctx, m)) return ctx->diag.data;
  nbc__buf out;
  nbc__buf_init(&out, ctx->arena);
  nbc__node_dump(&out, m->ast, 0);
  return out.data;
}

/* The dump of the first statement of src's first function (or of the module's first
 * statement when there is no function) as parsed, for one-line expression tests. */
static inline const char *fe_stmt(const char *src) {
  nbc__ctx *ctx = fe_new_ctx();
  nbc__node *ast = fe_parse(ctx, src);
  if (!ast) return ctx->diag.data;
  nbc__node *s = ast->body.items[0];
  if (s->kind == NBC__N_FUNCDEF) s = s->body.items[0];
  nbc__buf out;
  nbc__buf_init(&out, ctx->arena);
  nbc__node_dump(&out, s, 0);
  return out.data;
}

/* The diagnostic of loading src as file t.py ("" when it loads), with the status. */
static inline const char *fe_diag_status(const char *src, nbc_status_t *pstatus) {
  nbc__ctx *ctx = fe_new_ctx();
  nbc__module_load(ctx, fe_file(ctx, "t.py", src));
  if (pstatus) *pstatus = ctx->status;
  return ctx->diag.data;
}

static inline const char *fe_diag(const char *src) {
  return fe_diag_status(src, NULL);
}

/* Reads a file of the repository (tests/corpus/...) into memory. */
static inline char *fe_read_file(const char *path, size_t *psize) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  size_t got = fread(s, 1, (size_t)n, f);
  fclose(f);
  s[got] = '\0';
  if (psize) *psize = got;
  return s;
}

#endif /* NBCUDA_FRONT_UTIL_H */
