/* diag.c — the compiler's diagnostics: one error per compilation, shown the way C compilers
 * show them.
 *
 *   kernels.py:12:9: error: expected ':' after 'if' condition, found NEWLINE
 *           if x > 0
 *                   ^
 *
 * Positions inside the compiler are 1-based lines and columns in the text the compiler was
 * given. That text is often a fragment of a bigger file: the Python layer passes the
 * dedented source of one function (inspect.getsource), together with the line the fragment
 * starts at and the columns dedenting removed. What is printed adds both back, and the
 * source line is re-indented by the removed columns, so the message, its line and its caret
 * all describe the real file.
 *
 * Only the first error is kept: a later one is usually a consequence of the first, and every
 * phase stops at its first error anyway. Columns count bytes; the caret line copies the tabs
 * of the source line and skips UTF-8 continuation bytes so the caret lands under the right
 * character in a terminal.
 *
 * An error has a kind beside its status (nbcuda.h's error kinds: what numba raises it as),
 * which compile.c hands on with the message; see nbc__diag_error_kind.
 *
 * Internal bugs (NBC__BUG) are a different path: they name the C file and line of the
 * compiler, not the user's source, and carry status NBC_INTERNAL.
 */
#include <stdio.h>
#include <string.h>

#include "compiler/compiler.h"

static void ensure_buf(nbc__ctx *ctx) {
  if (!ctx->diag.data) nbc__buf_init(&ctx->diag, ctx->arena);
}

/* Finds line `line` (1-based) of the text: its start and length without the line break.
 * Line breaks are \n, \r\n and a lone \r, as in the tokenizer. Returns false past the end. */
static bool find_line(const nbc__file *file, int line, const char **pstart, size_t *plen) {
  const char *p = file->text, *end = file->text + file->size;
  int n = 1;
  while (n < line && p < end) {
    if (*p == '\n') {
      n++;
    } else if (*p == '\r') {
      if (p + 1 < end && p[1] == '\n') p++;
      n++;
    }
    p++;
  }
  if (n != line) return false;
  const char *q = p;
  while (q < end && *q != '\n' && *q != '\r')
    q++;
  *pstart = p;
  *plen = (size_t)(q - p);
  return true;
}

/* numba's exception classes that a message can name first, and their kinds; the rule's
 * message first, before the TypeError it starts with. */
static const struct {
  const char *prefix;
  nbc_error_kind_t kind;
} class_prefixes[] = {
    {"TypeError: " NBC__KERNEL_RETURN_RULE, NBC_ERROR_KIND_KERNEL_RETURN},
    {"ValueError: ", NBC_ERROR_KIND_VALUE},
    {"TypeError: ", NBC_ERROR_KIND_TYPE},
};

static nbc_error_kind_t kind_named_by(const char *message) {
  for (size_t i = 0; i < sizeof class_prefixes / sizeof class_prefixes[0]; i++)
    if (strncmp(message, class_prefixes[i].prefix, strlen(class_prefixes[i].prefix)) == 0)
      return class_prefixes[i].kind;
  return NBC_ERROR_KIND_NONE;
}

static void diag_error_v(nbc__ctx *ctx, nbc_status_t status, int kind, const nbc__file *file,
                         int line, int col, const char *fmt, va_list ap);

void nbc__diag_error(nbc__ctx *ctx, nbc_status_t status, const nbc__file *file, int line,
                     int col, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_error_v(ctx, status, -1, file, line, col, fmt, ap);
  va_end(ap);
}

void nbc__diag_error_kind(nbc__ctx *ctx, nbc_status_t status, nbc_error_kind_t kind,
                          const nbc__file *file, int line, int col, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_error_v(ctx, status, (int)kind, file, line, col, fmt, ap);
  va_end(ap);
}

/* kind -1: the kind the message names (kind_named_by). */
static void diag_error_v(nbc__ctx *ctx, nbc_status_t status, int kind, const nbc__file *file,
                         int line, int col, const char *fmt, va_list ap) {
  if (ctx->status != NBC_OK) return;
  ctx->status = status == NBC_OK ? NBC_COMPILE_ERROR : status;
  ensure_buf(ctx);
  nbc__buf *b = &ctx->diag;
  b->len = 0;
  if (b->cap) b->data[0] = '\0';
  if (line < 1) line = 1;
  if (col < 1) col = 1;
  int offset = file && file->col_offset > 0 ? file->col_offset : 0;
  int first = file && file->first_line > 0 ? file->first_line : 1;
  nbc__buf_printf(b, "%s:%d:%d: error: ", file && file->name ? file->name : "<string>",
                  line + first - 1, col + offset);
  size_t message = b->len;
  nbc__buf_vprintf(b, fmt, ap);
  ctx->kind = kind >= 0 ? (nbc_error_kind_t)kind : kind_named_by(b->data + message);

  const char *src;
  size_t len;
  if (!file || !file->text || !find_line(file, line, &src, &len)) return;
  nbc__buf_puts(b, "\n");
  for (int i = 0; i < offset; i++)
    nbc__buf_append(b, " ", 1);
  nbc__buf_append(b, src, len);
  nbc__buf_puts(b, "\n");
  for (int i = 0; i < offset; i++)
    nbc__buf_append(b, " ", 1);
  /* The caret may sit one past the end of the line (a missing ':' at the line's end). */
  for (size_t i = 0; i + 1 < (size_t)col && i < len; i++) {
    unsigned char c = (unsigned char)src[i];
    if (c == '\t')
      nbc__buf_append(b, "\t", 1);
    else if ((c & 0xC0) != 0x80)
      nbc__buf_append(b, " ", 1);
  }
  if ((size_t)col > len + 1) /* past the end: keep the distance the column says */
    for (size_t i = len + 1; i < (size_t)col; i++)
      nbc__buf_append(b, " ", 1);
  nbc__buf_append(b, "^", 1);
}

void nbc__diag_bug(nbc__ctx *ctx, const char *cfile, int cline, const char *fmt, ...) {
  if (ctx->status != NBC_OK) return;
  ctx->status = NBC_INTERNAL;
  ensure_buf(ctx);
  nbc__buf *b = &ctx->diag;
  b->len = 0;
  if (b->cap) b->data[0] = '\0';
  const char *base = strrchr(cfile, '/');
  nbc__buf_printf(b, "internal error at %s:%d: ", base ? base + 1 : cfile, cline);
  va_list ap;
  va_start(ap, fmt);
  nbc__buf_vprintf(b, fmt, ap);
  va_end(ap);
}

int nbc__token_user_line(const nbc__token *tok) {
  if (!tok) return 0;
  const nbc__file *f = tok->file;
  return tok->line + (f && f->first_line > 0 ? f->first_line - 1 : 0);
}

/* The "During:" lines one error carries at most (numba's traceback of nested calls is as
 * deep as the calls; ours stops here, with a line saying so). */
enum { MAX_DURING = 64 };

void nbc__diag_during(nbc__ctx *ctx, const char *fmt, ...) {
  if (ctx->status == NBC_OK || ctx->status == NBC_NO_MEMORY || ctx->status == NBC_INTERNAL)
    return;
  if (ctx->during == MAX_DURING) return;
  if (++ctx->during == MAX_DURING) {
    nbc__buf_puts(&ctx->diag, "\nDuring: ... (more nested calls left out)");
    return;
  }
  nbc__buf_puts(&ctx->diag, "\nDuring: ");
  va_list ap;
  va_start(ap, fmt);
  nbc__buf_vprintf(&ctx->diag, fmt, ap);
  va_end(ap);
}

void nbc__diag_oom(nbc__ctx *ctx) {
  if (ctx->status != NBC_OK) return;
  ctx->status = NBC_NO_MEMORY;
  ensure_buf(ctx);
  ctx->diag.len = 0;
  if (ctx->diag.cap) ctx->diag.data[0] = '\0';
  /* This append may itself fail; the status still says what happened. */
  nbc__buf_puts(&ctx->diag, "error: out of memory while compiling");
}
