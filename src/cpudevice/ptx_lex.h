/* ptx_lex.h — PTX tokens (ptx_lex.c) for the CPU device's decoder. */
#ifndef NBCUDA_CPUDEVICE_PTX_LEX_H
#define NBCUDA_CPUDEVICE_PTX_LEX_H

#include <stddef.h>

enum { NBC__TOK_END, NBC__TOK_WORD, NBC__TOK_STRING, NBC__TOK_PUNCT };

typedef struct nbc__ptx_lex {
  const char *p;   /* after the current token */
  int line;        /* line of p */
  const char *tok; /* the current token */
  size_t len;
  int kind;
  int tok_line;
} nbc__ptx_lex;

void nbc__ptx_lex_init(nbc__ptx_lex *lx, const char *text);
void nbc__ptx_lex_next(nbc__ptx_lex *lx);
/* Whether the current token is s. */
int nbc__ptx_lex_is(const nbc__ptx_lex *lx, const char *s);
/* Consumes the current token when it is s. */
int nbc__ptx_lex_accept(nbc__ptx_lex *lx, const char *s);
/* Skips the tokens left on the current token's line (`.loc`, `.file`). */
void nbc__ptx_lex_skip_line(nbc__ptx_lex *lx);

#endif
