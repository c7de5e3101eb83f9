/* lex.c — the tokenizer: Python 3 source text to an array of tokens.
 *
 * It follows CPython's tokenizer where the kernel language can see the difference:
 *
 *  - Logical lines. NEWLINE ends a logical line only; blank lines and comment-only lines
 *    produce nothing; inside (), [] and {} line breaks are ignored (implicit joining); a
 *    backslash before a line break joins two lines.
 *  - Indentation. At the start of each logical line the leading whitespace is measured
 *    twice: with tabs advancing to the next multiple of 8, and with tabs counting 1. The
 *    first is compared with a stack of open indentation widths to produce INDENT or
 *    DEDENTs; the second must order the lines the same way, else the file mixes tabs and
 *    spaces ambiguously (CPython's TabError). A dedent to a width that is not on the stack
 *    is "unindent does not match any outer indentation level".
 *  - Literals. Every number form (1_000, 0x1F, 0o17, 0b101, 1e-3, .5, 5., 1j, 1.5J) with
 *    its value; integers beyond int64 are marked big (and beyond uint64 huge) rather than
 *    refused, because whether that is an error depends on where the literal is used.
 *    Strings of every quoting and prefix (r, u, b, f and their mixes); escapes are decoded
 *    for plain strings and bytes, f-strings are kept as raw text (the kernel language has
 *    no use for them, but whole files must load).
 *  - Operators by longest match, including `**=`, `//=`, `->`, `:=` and `...`.
 *  - Brackets are matched here, so "'(' was never closed" points at the bracket and the
 *    parser's recursion depth is bounded by the bracket limit (as in CPython, 200).
 *
 * One pass over the text; tokens go into an array in the arena that doubles as needed and
 * is trimmed at the end (40 bytes a token).
 * Token positions are 1-based lines and byte columns of file->text.
 */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"

enum { MAX_INDENT = 100, MAX_BRACKETS = 200 };

typedef struct lexer {
  nbc__ctx *ctx;
  const nbc__file *file;
  const char *p, *end;
  const char *line_start; /* start of the current physical line */
  int line;
  nbc__token *toks;
  int count, cap;
  int indents[MAX_INDENT + 1], altindents[MAX_INDENT + 1];
  int nindent;
  const char *brackets[MAX_BRACKETS]; /* where each open bracket is */
  int bracket_lines[MAX_BRACKETS], bracket_cols[MAX_BRACKETS];
  int nbrackets;
  locale_t c_locale; /* for strtod, created on the first float literal */
} lexer;

/* Python's keywords by their first character, each list separated by spaces. A name is
 * compared only with the few keywords sharing its first character: this runs for every
 * name of the file. */
static const char *const keywords_by_first[128] = {['F'] = "False",
                                                   ['N'] = "None",
                                                   ['T'] = "True",
                                                   ['a'] = "and as assert async await",
                                                   ['b'] = "break",
                                                   ['c'] = "class continue",
                                                   ['d'] = "def del",
                                                   ['e'] = "elif else except",
                                                   ['f'] = "finally for from",
                                                   ['g'] = "global",
                                                   ['i'] = "if import in is",
                                                   ['l'] = "lambda",
                                                   ['n'] = "nonlocal not",
                                                   ['o'] = "or",
                                                   ['p'] = "pass",
                                                   ['r'] = "raise return",
                                                   ['t'] = "try",
                                                   ['w'] = "while with",
                                                   ['y'] = "yield"};

static bool is_keyword(const char *s, size_t n) {
  if (n < 2 || n > 8 || (unsigned char)*s >= 128 || !keywords_by_first[(unsigned char)*s])
    return false;
  for (const char *k = keywords_by_first[(unsigned char)*s];;) {
    size_t len = 0;
    while (k[len] && k[len] != ' ')
      len++;
    if (len == n && memcmp(k, s, n) == 0) return true;
    if (!k[len]) return false;
    k += len + 1;
  }
}

/* The length of the operator at p (longest match), or 0 when there is none. */
static int operator_len(const char *p, size_t avail) {
  char c1 = avail > 1 ? p[1] : 0, c2 = avail > 2 ? p[2] : 0;
  switch (*p) {
  case '*':
  case '/':
  case '<':
  case '>': /* ** **= // //= << <<= >> >>= and x= */
    if (c1 == *p) return c2 == '=' ? 3 : 2;
    return c1 == '=' ? 2 : 1;
  case '.':
    return c1 == '.' && c2 == '.' ? 3 : 1;
  case '!':
    return c1 == '=' ? 2 : 0;
  case '-':
    return c1 == '>' || c1 == '=' ? 2 : 1;
  case '=':
  case ':':
  case '+':
  case '%':
  case '&':
  case '|':
  case '^':
  case '@':
    return c1 == '=' ? 2 : 1;
  case '~':
  case '(':
  case ')':
  case '[':
  case ']':
  case '{':
  case '}':
  case ',':
  case ';':
    return 1;
  default:
    return 0;
  }
}

/* ASCII classification: <ctype.h> depends on the host program's locale. */
static bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
static bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
static bool is_xdigit(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static char to_lower(char c) {
  return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}
static int hex_value(char c) {
  return is_digit(c) ? c - '0' : to_lower(c) - 'a' + 10;
}

const char *nbc__tok_kind_name(nbc__tok_kind kind) {
  switch (kind) {
#define NBC__TOK_NAME_(k)                                                                      \
  case NBC__TOK_##k:                                                                           \
    return #k;
    NBC__TOKEN_KINDS(NBC__TOK_NAME_)
#undef NBC__TOK_NAME_
  }
  return "?";
}

bool nbc__tok_is(const nbc__token *tok, const char *s) {
  /* The parser asks this many times per token: reject on the first byte before anything
   * else. */
  if (tok->kind != NBC__TOK_OP && tok->kind != NBC__TOK_KEYWORD) return false;
  const char *text = nbc__tok_start(tok);
  if (text[0] != s[0]) return false;
  int i = 1;
  while (i < tok->len && s[i] && text[i] == s[i])
    i++;
  return i == tok->len && s[i] == '\0';
}

static int col_of(const lexer *lx, const char *p) {
  return (int)(p - lx->line_start) + 1;
}

/* Reports at a position of the text; always returns false so callers can `return err(...)`. */
static bool err_at(lexer *lx, int line, int col, const char *fmt, ...) {
  if (lx->ctx->status != NBC_OK) return false;
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  nbc__diag_error(lx->ctx, NBC_SYNTAX_ERROR, lx->file, line, col, "%s", msg);
  return false;
}

#define ERR(lx, p, ...) err_at((lx), (lx)->line, col_of((lx), (p)), __VA_ARGS__)

static nbc__token *push(lexer *lx, nbc__tok_kind kind, const char *start, int len) {
  if (lx->count == lx->cap) {
    /* A first guess of a token per 4 bytes (about what real Python has), then doubling:
     * the block is resized by realloc, which moves pages rather than copying them, and
     * trimmed to the tokens found at the end (nbc__lex). */
    ptrdiff_t size = lx->end - lx->p;
    int cap = lx->cap ? lx->cap * 2 : (int)(size < (1 << 27) ? size / 4 + 512 : 1 << 25);
    if (cap < lx->cap) {
      nbc__diag_oom(lx->ctx);
      return NULL;
    }
    nbc__token *toks =
        lx->toks ? nbc__arena_block_resize(lx->ctx->arena, lx->toks, sizeof *toks * (size_t)cap)
                 : nbc__arena_block_alloc(lx->ctx->arena, sizeof *toks * (size_t)cap);
    if (!toks) {
      nbc__diag_oom(lx->ctx);
      return NULL;
    }
    lx->toks = toks;
    lx->cap = cap;
  }
  if (len > NBC__TOKEN_MAX_LEN)
    return ERR(lx, start, "a token of %d bytes: at most %d bytes are allowed", len,
               NBC__TOKEN_MAX_LEN),
           NULL;
  nbc__token *t = &lx->toks[lx->count++];
  t->value.i = 0;
  t->str = NULL;
  t->big = t->huge = false;
  t->kind = kind;
  t->offset = (uint32_t)(start - lx->file->text);
  t->len = (unsigned)len;
  t->line = lx->line;
  t->col = col_of(lx, start);
  t->file = lx->file;
  return t;
}

/* Length of the line break at p (\n, \r\n, \r), or 0. */
static int newline_len(const lexer *lx, const char *p) {
  if (p >= lx->end) return 0;
  if (*p == '\n') return 1;
  if (*p == '\r') return (p + 1 < lx->end && p[1] == '\n') ? 2 : 1;
  return 0;
}

static void next_line(lexer *lx, const char *after) {
  lx->line++;
  lx->line_start = after;
}

/* Length of a valid UTF-8 sequence at p (2-4 bytes, non-ASCII), or 0. */
static int utf8_len(const lexer *lx, const char *p) {
  unsigned char c = (unsigned char)*p;
  int n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
  if (!n || lx->end - p < n) return 0;
  for (int i = 1; i < n; i++)
    if (((unsigned char)p[i] & 0xC0) != 0x80) return 0;
  return n;
}

static bool is_ident_start(char c) {
  return is_alpha(c) || c == '_';
}

/* The code point of the UTF-8 sequence of n bytes at p. */
static uint32_t utf8_decode(const char *p, int n) {
  const unsigned char *u = (const unsigned char *)p;
  if (n == 2) return (uint32_t)(u[0] & 0x1F) << 6 | (u[1] & 0x3F);
  if (n == 3)
    return (uint32_t)(u[0] & 0x0F) << 12 | (uint32_t)(u[1] & 0x3F) << 6 | (u[2] & 0x3F);
  return (uint32_t)(u[0] & 0x07) << 18 | (uint32_t)(u[1] & 0x3F) << 12 |
         (uint32_t)(u[2] & 0x3F) << 6 | (u[3] & 0x3F);
}

/* Python accepts Unicode letters in names. Without Unicode's tables, this accepts every
 * code point except the blocks of punctuation and symbols people actually paste into code
 * (Latin-1 signs, general punctuation, currency, arrows, mathematical operators, box
 * drawing, CJK and full-width punctuation), so that `x = 1 €` is an invalid character
 * rather than a strange name. */
static bool unicode_symbol(uint32_t cp) {
  if (cp >= 0x80 && cp <= 0xBF) return cp != 0xAA && cp != 0xB5 && cp != 0xBA;
  return cp == 0xD7 || cp == 0xF7 || (cp >= 0x2000 && cp <= 0x2BFF) ||
         (cp >= 0x3000 && cp <= 0x303F) || (cp >= 0xE000 && cp <= 0xF8FF) ||
         (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF20) || cp == 0xFEFF;
}

/* Length of an identifier character at p: ASCII letters, digits, '_' or a non-ASCII
 * character that is not a symbol (see unicode_symbol). */
static int ident_char_len(const lexer *lx, const char *p) {
  if (p >= lx->end) return 0;
  if (is_alpha(*p) || is_digit(*p) || *p == '_') return 1;
  if ((unsigned char)*p < 0x80) return 0;
  int n = utf8_len(lx, p);
  return n && !unicode_symbol(utf8_decode(p, n)) ? n : 0;
}

/* ------------------------------------------------------------------------- numbers --- */

static bool digit_ok(char c, int base) {
  switch (base) {
  case 2:
    return c == '0' || c == '1';
  case 8:
    return c >= '0' && c <= '7';
  case 10:
    return is_digit(c);
  default:
    return is_xdigit(c);
  }
}

/* Scans digits of `base` with single underscores between them. Returns the end, or NULL
 * after reporting when an underscore is misplaced. */
static const char *scan_digits(lexer *lx, const char *p, int base, const char *what) {
  while (p < lx->end) {
    if (digit_ok(*p, base)) {
      p++;
    } else if (*p == '_' && p + 1 < lx->end && digit_ok(p[1], base)) {
      p++;
    } else if (*p == '_') {
      ERR(lx, p, "invalid %s literal", what);
      return NULL;
    } else {
      break;
    }
  }
  return p;
}

static void set_int_value(nbc__token *t, const char *s, const char *e, int base) {
  uint64_t v = 0;
  bool huge = false;
  for (const char *q = s; q < e; q++) {
    if (*q == '_') continue;
    int d = hex_value(*q);
    if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) huge = true;
    v = v * (uint64_t)base + (uint64_t)d;
  }
  t->huge = huge;
  t->big = huge || v > (uint64_t)INT64_MAX;
  t->value.i = huge ? 0 : (int64_t)v;
}

static bool set_float_value(lexer *lx, nbc__token *t, const char *s, const char *e) {
  char small[128], *buf = small;
  size_t n = (size_t)(e - s);
  if (n >= sizeof small) {
    buf = nbc__arena_alloc(lx->ctx->arena, n + 1);
    if (!buf) {
      nbc__diag_oom(lx->ctx);
      return false;
    }
  }
  size_t k = 0;
  for (const char *q = s; q < e; q++)
    if (*q != '_') buf[k++] = *q;
  buf[k] = '\0';
  /* strtod follows LC_NUMERIC, which the host program may have changed: use "C". */
  if (!lx->c_locale) {
    lx->c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (!lx->c_locale) {
      nbc__diag_oom(lx->ctx);
      return false;
    }
  }
  t->value.f = strtod_l(buf, NULL, lx->c_locale);
  return true;
}

/* number: see the file comment. p is at a digit, or at '.' followed by a digit. */
static bool lex_number(lexer *lx, const char *start) {
  const char *p = start;
  if (*p == '0' && p + 1 < lx->end && p[1] && strchr("xXoObB", p[1])) {
    char k = to_lower(p[1]);
    int base = k == 'x' ? 16 : k == 'o' ? 8 : 2;
    const char *what = k == 'x' ? "hexadecimal" : k == 'o' ? "octal" : "binary";
    p += 2;
    if (p < lx->end && *p == '_') p++;
    if (p >= lx->end || !digit_ok(*p, base)) {
      if (p < lx->end && base != 16 && is_digit(*p))
        return ERR(lx, p, "invalid digit '%c' in %s literal", *p, what);
      return ERR(lx, p, "invalid %s literal", what);
    }
    const char *digits = p;
    p = scan_digits(lx, p, base, what);
    if (!p) return false;
    if (p < lx->end && base != 16 && is_digit(*p))
      return ERR(lx, p, "invalid digit '%c' in %s literal", *p, what);
    if (ident_char_len(lx, p)) return ERR(lx, p, "invalid %s literal", what);
    nbc__token *t = push(lx, NBC__TOK_INT, start, (int)(p - start));
    if (!t) return false;
    set_int_value(t, digits, p, base);
    return true;
  }
  bool is_float = false;
  if (*p != '.') {
    p = scan_digits(lx, p, 10, "decimal");
    if (!p) return false;
  }
  const char *int_end = p;
  if (p < lx->end && *p == '.') {
    is_float = true;
    p++;
    if (p < lx->end && is_digit(*p)) {
      p = scan_digits(lx, p, 10, "decimal");
      if (!p) return false;
    } else if (p < lx->end && *p == '_') {
      return ERR(lx, p, "invalid decimal literal");
    }
  }
  if (p < lx->end && (*p == 'e' || *p == 'E')) {
    const char *q = p + 1;
    if (q < lx->end && (*q == '+' || *q == '-')) q++;
    if (q >= lx->end || !is_digit(*q)) return ERR(lx, p, "invalid decimal literal");
    p = scan_digits(lx, q, 10, "decimal");
    if (!p) return false;
    is_float = true;
  }
  bool imag = p < lx->end && (*p == 'j' || *p == 'J');
  const char *num_end = p;
  if (imag) p++;
  if (ident_char_len(lx, p)) return ERR(lx, p, "invalid decimal literal");
  if (!is_float && !imag && *start == '0') {
    for (const char *q = start; q < int_end; q++)
      if (*q != '0' && *q != '_')
        return ERR(lx, start,
                   "leading zeros in decimal integer literals are not permitted; use an 0o "
                   "prefix for octal integers");
  }
  nbc__tok_kind kind = imag ? NBC__TOK_IMAG : is_float ? NBC__TOK_FLOAT : NBC__TOK_INT;
  nbc__token *t = push(lx, kind, start, (int)(p - start));
  if (!t) return false;
  if (kind == NBC__TOK_INT) {
    set_int_value(t, start, num_end, 10);
    return true;
  }
  return set_float_value(lx, t, start, num_end);
}

/* ------------------------------------------------------------------------- strings --- */

static void put_utf8(nbc__buf *b, uint32_t cp) {
  char s[4];
  int n;
  if (cp < 0x80) {
    s[0] = (char)cp;
    n = 1;
  } else if (cp < 0x800) {
    s[0] = (char)(0xC0 | (cp >> 6));
    s[1] = (char)(0x80 | (cp & 0x3F));
    n = 2;
  } else if (cp < 0x10000) {
    s[0] = (char)(0xE0 | (cp >> 12));
    s[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    s[2] = (char)(0x80 | (cp & 0x3F));
    n = 3;
  } else {
    s[0] = (char)(0xF0 | (cp >> 18));
    s[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    s[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    s[3] = (char)(0x80 | (cp & 0x3F));
    n = 4;
  }
  nbc__buf_append(b, s, (size_t)n);
}

/* Decodes the escapes of a plain string or bytes body [s, e). */
static bool decode_escapes(lexer *lx, nbc__token *t, const char *s, const char *e, bool bytes) {
  nbc__buf b;
  nbc__buf_init(&b, lx->ctx->arena);
  int line = t->line;
  const char *ls = nbc__tok_start(t) - (t->col - 1); /* line start of the token */
  for (const char *p = s; p < e;) {
    const char *run = p;
    while (p < e && *p != '\\')
      p++;
    nbc__buf_append(&b, run, (size_t)(p - run));
    for (const char *q = run; q < p; q++)
      if (*q == '\n' || (*q == '\r' && !(q + 1 < p && q[1] == '\n'))) line++, ls = q + 1;
    if (p >= e) break;
    const char *esc = p++; /* p at the escaped character */
    char c = *p++;
    uint32_t v;
    int want;
    switch (c) {
    case '\n':
      line++, ls = p;
      break;
    case '\r':
      if (p < e && *p == '\n') p++;
      line++, ls = p;
      break;
    case '\\':
    case '\'':
    case '"':
      nbc__buf_append(&b, &c, 1);
      break;
    case 'a':
      nbc__buf_append(&b, "\a", 1);
      break;
    case 'b':
      nbc__buf_append(&b, "\b", 1);
      break;
    case 'f':
      nbc__buf_append(&b, "\f", 1);
      break;
    case 'n':
      nbc__buf_append(&b, "\n", 1);
      break;
    case 'r':
      nbc__buf_append(&b, "\r", 1);
      break;
    case 't':
      nbc__buf_append(&b, "\t", 1);
      break;
    case 'v':
      nbc__buf_append(&b, "\v", 1);
      break;
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
      v = (uint32_t)(c - '0');
      for (int i = 0; i < 2 && p < e && *p >= '0' && *p <= '7'; i++)
        v = v * 8 + (uint32_t)(*p++ - '0');
      if (bytes) {
        char ch = (char)(v & 0xFF);
        nbc__buf_append(&b, &ch, 1);
      } else {
        put_utf8(&b, v);
      }
      break;
    case 'x':
    case 'u':
    case 'U':
      if (c != 'x' && bytes) {
        nbc__buf_append(&b, esc, 2);
        break;
      }
      want = c == 'x' ? 2 : c == 'u' ? 4 : 8;
      v = 0;
      for (int i = 0; i < want; i++) {
        if (p >= e || !is_xdigit(*p))
          return err_at(lx, line, (int)(esc - ls) + 1, "truncated \\%c escape in %s literal", c,
                        bytes ? "bytes" : "string");
        v = v * 16 + (uint32_t)hex_value(*p);
        p++;
      }
      if (c == 'U' && v > 0x10FFFF)
        return err_at(lx, line, (int)(esc - ls) + 1,
                      "illegal Unicode character in string literal");
      if (bytes) {
        char ch = (char)v;
        nbc__buf_append(&b, &ch, 1);
      } else {
        put_utf8(&b, v);
      }
      break;
    default:
      /* Unknown escapes (and \N{...}, whose names we do not know) stay as written. */
      nbc__buf_append(&b, esc, 2);
      break;
    }
  }
  if (b.oom) {
    nbc__diag_oom(lx->ctx);
    return false;
  }
  t->str = b.data;
  return true;
}

/* string: [prefix] (quote ... quote | triple-quote ... triple-quote); p at the quote. */
static bool lex_string(lexer *lx, const char *start, const char *p) {
  bool raw = false, bytes = false, fstr = false;
  for (const char *q = start; q < p; q++) {
    char c = to_lower(*q);
    raw |= c == 'r';
    bytes |= c == 'b';
    fstr |= c == 'f';
  }
  char quote = *p;
  bool triple = lx->end - p >= 3 && p[1] == quote && p[2] == quote;
  int line = lx->line, col = col_of(lx, start);
  const char *body = p + (triple ? 3 : 1), *q = body;
  for (;;) {
    if (q >= lx->end) {
      if (triple)
        return err_at(lx, line, col,
                      "unterminated triple-quoted string literal (detected at line %d)",
                      lx->line + (lx->file->first_line > 0 ? lx->file->first_line - 1 : 0));
      return err_at(lx, line, col, "unterminated string literal (detected at line %d)",
                    lx->line + (lx->file->first_line > 0 ? lx->file->first_line - 1 : 0));
    }
    int nl = newline_len(lx, q);
    if (nl) {
      if (!triple)
        return err_at(lx, line, col, "unterminated string literal (detected at line %d)",
                      lx->line + (lx->file->first_line > 0 ? lx->file->first_line - 1 : 0));
      q += nl;
      next_line(lx, q);
      continue;
    }
    if (*q == '\\') {
      q++;
      if (q < lx->end) {
        nl = newline_len(lx, q);
        if (nl) {
          q += nl;
          next_line(lx, q);
        } else {
          q++;
        }
      }
      continue;
    }
    if (*q == quote && (!triple || (lx->end - q >= 3 && q[1] == quote && q[2] == quote))) break;
    if (bytes && (unsigned char)*q >= 0x80) {
      /* Positions inside multi-line strings refer to the current line. */
      return ERR(lx, q, "bytes can only contain ASCII literal characters");
    }
    q++;
  }
  const char *body_end = q;
  q += triple ? 3 : 1;
  /* The token starts on the line where it began; its position must say so. */
  int end_line = lx->line;
  const char *end_line_start = lx->line_start;
  lx->line = line;
  lx->line_start = start - (col - 1);
  nbc__token *t = push(lx, NBC__TOK_STRING, start, (int)(q - start));
  lx->line = end_line;
  lx->line_start = end_line_start;
  if (!t) return false;
  lx->p = q;
  if (raw || fstr) {
    t->str = nbc__arena_strndup(lx->ctx->arena, body, (size_t)(body_end - body));
    if (!t->str) {
      nbc__diag_oom(lx->ctx);
      return false;
    }
    return true;
  }
  return decode_escapes(lx, t, body, body_end, bytes);
}

/* A string prefix: r u b f and the two-letter mixes br rb fr rf, any case. */
static bool is_string_prefix(const char *s, int n) {
  if (n < 1 || n > 2) return false;
  char a = to_lower(s[0]);
  if (n == 1) return a == 'r' || a == 'u' || a == 'b' || a == 'f';
  char b = to_lower(s[1]);
  return (a == 'r' && (b == 'b' || b == 'f')) || (b == 'r' && (a == 'b' || a == 'f'));
}

/* ----------------------------------------------------------------- the main loop --- */

/* Measures the indentation of the line at lx->p and emits INDENT/DEDENTs. Returns false on
 * error; sets *pblank when the line holds nothing but whitespace and a comment. */
static bool lex_indentation(lexer *lx, bool *pblank) {
  int col = 0, alt = 0;
  const char *p = lx->p;
  for (; p < lx->end; p++) {
    if (*p == ' ') {
      col++, alt++;
    } else if (*p == '\t') {
      col = (col / 8 + 1) * 8;
      alt++;
    } else if (*p == '\f') {
      col = alt = 0;
    } else {
      break;
    }
  }
  lx->p = p;
  if (p >= lx->end || *p == '#' || newline_len(lx, p)) {
    *pblank = true;
    return true;
  }
  *pblank = false;
  int top = lx->indents[lx->nindent], alttop = lx->altindents[lx->nindent];
  if (col == top) {
    if (alt != alttop) return ERR(lx, p, "inconsistent use of tabs and spaces in indentation");
  } else if (col > top) {
    if (alt <= alttop) return ERR(lx, p, "inconsistent use of tabs and spaces in indentation");
    if (lx->nindent >= MAX_INDENT) return ERR(lx, p, "too many levels of indentation");
    lx->nindent++;
    lx->indents[lx->nindent] = col;
    lx->altindents[lx->nindent] = alt;
    if (!push(lx, NBC__TOK_INDENT, p, 0)) return false;
  } else {
    while (lx->nindent > 0 && col < lx->indents[lx->nindent]) {
      lx->nindent--;
      if (!push(lx, NBC__TOK_DEDENT, p, 0)) return false;
    }
    if (col != lx->indents[lx->nindent])
      return ERR(lx, p, "unindent does not match any outer indentation level");
    if (alt != lx->altindents[lx->nindent])
      return ERR(lx, p, "inconsistent use of tabs and spaces in indentation");
  }
  return true;
}

static bool lex_operator(lexer *lx, const char *p) {
  size_t n = (size_t)operator_len(p, (size_t)(lx->end - p));
  if (n) {
    char c = *p;
    if (n == 1 && (c == '(' || c == '[' || c == '{')) {
      if (lx->nbrackets >= MAX_BRACKETS) return ERR(lx, p, "too many nested parentheses");
      lx->brackets[lx->nbrackets] = p;
      lx->bracket_lines[lx->nbrackets] = lx->line;
      lx->bracket_cols[lx->nbrackets] = col_of(lx, p);
      lx->nbrackets++;
    } else if (n == 1 && (c == ')' || c == ']' || c == '}')) {
      if (lx->nbrackets == 0) return ERR(lx, p, "unmatched '%c'", c);
      char open = *lx->brackets[lx->nbrackets - 1];
      char want = open == '(' ? ')' : open == '[' ? ']' : '}';
      if (c != want) {
        if (lx->bracket_lines[lx->nbrackets - 1] != lx->line)
          return ERR(lx, p,
                     "closing parenthesis '%c' does not match opening parenthesis '%c' on "
                     "line %d",
                     c, open,
                     lx->bracket_lines[lx->nbrackets - 1] +
                         (lx->file->first_line > 0 ? lx->file->first_line - 1 : 0));
        return ERR(lx, p, "closing parenthesis '%c' does not match opening parenthesis '%c'", c,
                   open);
      }
      lx->nbrackets--;
    }
    if (!push(lx, NBC__TOK_OP, p, (int)n)) return false;
    lx->p = p + n;
    return true;
  }
  unsigned char c = (unsigned char)*p;
  if (c == '!') return ERR(lx, p, "invalid syntax: unexpected '!'");
  if (c >= 0x20 && c < 0x7F) return ERR(lx, p, "unexpected character '%c'", c);
  int n8 = c >= 0x80 ? utf8_len(lx, p) : 0;
  if (n8)
    return ERR(lx, p, "invalid character '%.*s' (U+%04X)", n8, p, (unsigned)utf8_decode(p, n8));
  return ERR(lx, p, "unexpected character '\\x%02x'", c);
}

static bool last_is_line_end(const lexer *lx) {
  if (lx->count == 0) return true;
  nbc__tok_kind k = lx->toks[lx->count - 1].kind;
  return k == NBC__TOK_NEWLINE || k == NBC__TOK_INDENT || k == NBC__TOK_DEDENT;
}

static bool lex_all(lexer *lx) {
  bool at_line_start = true;
  while (lx->p < lx->end) {
    if (at_line_start && lx->nbrackets == 0) {
      bool blank;
      if (!lex_indentation(lx, &blank)) return false;
      at_line_start = false;
      if (blank) {
        /* Skip the comment, and the line break with the rest of the line. */
        while (lx->p < lx->end && !newline_len(lx, lx->p))
          lx->p++;
        int nl = newline_len(lx, lx->p);
        if (nl) {
          lx->p += nl;
          next_line(lx, lx->p);
          at_line_start = true;
        }
        continue;
      }
    }
    const char *p = lx->p;
    char c = *p;
    if (c == ' ' || c == '\t' || c == '\f') {
      lx->p++;
      continue;
    }
    if (c == '#') {
      while (lx->p < lx->end && !newline_len(lx, lx->p))
        lx->p++;
      continue;
    }
    int nl = newline_len(lx, p);
    if (nl) {
      if (lx->nbrackets == 0 && !last_is_line_end(lx)) {
        if (!push(lx, NBC__TOK_NEWLINE, p, nl)) return false;
      }
      lx->p += nl;
      next_line(lx, lx->p);
      at_line_start = lx->nbrackets == 0;
      continue;
    }
    if (c == '\\') {
      nl = newline_len(lx, p + 1);
      if (nl) {
        lx->p = p + 1 + nl;
        next_line(lx, lx->p);
        continue;
      }
      if (p + 1 >= lx->end)
        return ERR(lx, p, "unexpected end of file after line continuation character");
      return ERR(lx, p + 1, "unexpected character after line continuation character");
    }
    if (is_ident_start(c) || ((unsigned char)c >= 0x80 && ident_char_len(lx, p))) {
      const char *q = p;
      int n;
      while ((n = ident_char_len(lx, q)) > 0)
        q += n;
      if (q < lx->end && (*q == '\'' || *q == '"') && is_string_prefix(p, (int)(q - p))) {
        if (!lex_string(lx, p, q)) return false;
        continue;
      }
      nbc__tok_kind kind = is_keyword(p, (size_t)(q - p)) ? NBC__TOK_KEYWORD : NBC__TOK_NAME;
      if (!push(lx, kind, p, (int)(q - p))) return false;
      lx->p = q;
      continue;
    }
    if (is_digit(c) || (c == '.' && p + 1 < lx->end && is_digit(p[1]))) {
      if (!lex_number(lx, p)) return false;
      lx->p = p + lx->toks[lx->count - 1].len;
      continue;
    }
    if (c == '\'' || c == '"') {
      if (!lex_string(lx, p, p)) return false;
      continue;
    }
    if (!lex_operator(lx, p)) return false;
  }
  if (lx->nbrackets > 0) {
    int i = lx->nbrackets - 1;
    return err_at(lx, lx->bracket_lines[i], lx->bracket_cols[i], "'%c' was never closed",
                  *lx->brackets[i]);
  }
  if (!last_is_line_end(lx) && !push(lx, NBC__TOK_NEWLINE, lx->p, 0)) return false;
  for (; lx->nindent > 0; lx->nindent--)
    if (!push(lx, NBC__TOK_DEDENT, lx->p, 0)) return false;
  return push(lx, NBC__TOK_EOF, lx->p, 0) != NULL;
}

nbc__token *nbc__lex(nbc__ctx *ctx, const nbc__file *file, int *pcount) {
  if (file->size > NBC__LEX_MAX_SIZE) {
    nbc__diag_error(ctx, NBC_SYNTAX_ERROR, file, 1, 1,
                    "a source of %zu bytes: at most %zu bytes are allowed", file->size,
                    NBC__LEX_MAX_SIZE);
    return NULL;
  }
  lexer lx;
  memset(&lx, 0, sizeof lx);
  lx.ctx = ctx;
  lx.file = file;
  lx.p = file->text;
  lx.end = file->text + file->size;
  lx.line_start = file->text;
  lx.line = 1;
  /* Skip a UTF-8 byte order mark, as Python does. */
  if (file->size >= 3 && memcmp(file->text, "\xEF\xBB\xBF", 3) == 0) lx.p += 3;
  bool ok = lex_all(&lx);
  if (lx.c_locale) freelocale(lx.c_locale);
  if (!ok) {
    if (ctx->status == NBC_OK) NBC__BUG(ctx, "tokenizer failed without a diagnostic");
    return NULL;
  }
  /* Trimmed: what the first guess or the last doubling left unused returns to malloc. */
  nbc__token *toks = nbc__arena_block_resize(ctx->arena, lx.toks, sizeof *toks * (size_t)lx.count);
  if (toks) lx.toks = toks;
  if (pcount) *pcount = lx.count;
  return lx.toks;
}

/* ------------------------------------------------------------------ --dump=tokens --- */

static void dump_escaped(nbc__buf *out, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '\\' || c == '\'') {
      nbc__buf_printf(out, "\\%c", c);
    } else if (c == '\n') {
      nbc__buf_puts(out, "\\n");
    } else if (c == '\t') {
      nbc__buf_puts(out, "\\t");
    } else if (c < 0x20 || c == 0x7F) {
      nbc__buf_printf(out, "\\x%02x", c);
    } else {
      nbc__buf_append(out, (const char *)&s[i], 1);
    }
  }
}

void nbc__lex_dump(nbc__buf *out, const nbc__token *tokens, int count) {
  for (int i = 0; i < count; i++) {
    const nbc__token *t = &tokens[i];
    nbc__buf_printf(out, "%d:%d %s", t->line, t->col, nbc__tok_kind_name(t->kind));
    switch (t->kind) {
    case NBC__TOK_NAME:
    case NBC__TOK_OP:
    case NBC__TOK_KEYWORD:
    case NBC__TOK_INT:
    case NBC__TOK_FLOAT:
    case NBC__TOK_IMAG:
    case NBC__TOK_STRING:
      nbc__buf_puts(out, " '");
      dump_escaped(out, nbc__tok_start(t), (size_t)t->len);
      nbc__buf_puts(out, "'");
      break;
    default:
      break;
    }
    if (t->kind == NBC__TOK_INT) {
      if (t->huge)
        nbc__buf_puts(out, " = huge");
      else if (t->big)
        nbc__buf_printf(out, " = %llu (big)", (unsigned long long)(uint64_t)t->value.i);
      else
        nbc__buf_printf(out, " = %lld", (long long)t->value.i);
    } else if (t->kind == NBC__TOK_FLOAT || t->kind == NBC__TOK_IMAG) {
      nbc__buf_printf(out, " = %.17g", t->value.f);
    } else if (t->kind == NBC__TOK_STRING && t->str) {
      nbc__buf_puts(out, " = '");
      dump_escaped(out, t->str, strlen(t->str));
      nbc__buf_puts(out, "'");
    }
    nbc__buf_puts(out, "\n");
  }
}
