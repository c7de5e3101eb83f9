/* ptx_lex.c — the tokens of PTX text for the CPU device's decoder.
 *
 * A token is a word (letters, digits and `_ $ % .`, so `add.rn.f32`, `%tid.x`, `$L__BB0_2`,
 * `0f3F800000` and `9.0` are one token each), a string in double quotes, or one punctuation
 * character. Comments (`//` to the end of the line, `/ * ... * /`) are skipped. Each token
 * keeps its line, which the decoder's messages name.
 */
#include "cpudevice/ptx_lex.h"

#include <ctype.h>
#include <string.h>

static int word_char(char c) {
  return isalnum((unsigned char)c) || c == '_' || c == '$' || c == '%' || c == '.';
}

void nbc__ptx_lex_init(nbc__ptx_lex *lx, const char *text) {
  lx->p = text;
  lx->line = 1;
  nbc__ptx_lex_next(lx);
}

/* Skips white space and comments, counting lines. */
static void skip_blank(nbc__ptx_lex *lx) {
  for (;;) {
    const char *p = lx->p;
    if (*p == '\n') {
      lx->line++;
      lx->p++;
    } else if (isspace((unsigned char)*p)) {
      lx->p++;
    } else if (p[0] == '/' && p[1] == '/') {
      while (*lx->p && *lx->p != '\n')
        lx->p++;
    } else if (p[0] == '/' && p[1] == '*') {
      lx->p += 2;
      while (*lx->p && !(lx->p[0] == '*' && lx->p[1] == '/')) {
        if (*lx->p == '\n') lx->line++;
        lx->p++;
      }
      if (*lx->p) lx->p += 2;
    } else {
      return;
    }
  }
}

void nbc__ptx_lex_next(nbc__ptx_lex *lx) {
  skip_blank(lx);
  lx->tok = lx->p;
  lx->tok_line = lx->line;
  if (!*lx->p) {
    lx->len = 0;
    lx->kind = NBC__TOK_END;
  } else if (*lx->p == '"') {
    const char *q = lx->p + 1;
    while (*q && *q != '"' && *q != '\n')
      q++;
    if (*q == '"') q++;
    lx->len = (size_t)(q - lx->p);
    lx->kind = NBC__TOK_STRING;
  } else if (word_char(*lx->p)) {
    const char *q = lx->p;
    while (word_char(*q))
      q++;
    lx->len = (size_t)(q - lx->p);
    lx->kind = NBC__TOK_WORD;
  } else {
    lx->len = 1;
    lx->kind = NBC__TOK_PUNCT;
  }
  lx->p = lx->tok + lx->len;
}

int nbc__ptx_lex_is(const nbc__ptx_lex *lx, const char *s) {
  return lx->kind != NBC__TOK_END && strlen(s) == lx->len && memcmp(lx->tok, s, lx->len) == 0;
}

int nbc__ptx_lex_accept(nbc__ptx_lex *lx, const char *s) {
  if (!nbc__ptx_lex_is(lx, s)) return 0;
  nbc__ptx_lex_next(lx);
  return 1;
}

void nbc__ptx_lex_skip_line(nbc__ptx_lex *lx) {
  int line = lx->tok_line;
  while (lx->kind != NBC__TOK_END && lx->tok_line == line)
    nbc__ptx_lex_next(lx);
}
