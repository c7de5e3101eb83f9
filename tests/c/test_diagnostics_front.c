/* test_diagnostics_front.c — the exact text of the front end's diagnostics: for each kind of
 * bad input, the "file:line:col: error: message" line, the source line and the caret, and
 * the status. Syntax errors are reported when the file loads; valid Python that kernels
 * cannot use (NBC_UNSUPPORTED) only when the function f using it is compiled, so that host
 * code never stops a file from loading. Also: positions of fragments (first_line, col_offset),
 * carets under tabs, only the first error kept, internal bugs naming the C file, and the
 * nesting limits.
 */
#include "front_util.h"
#include "test.h"

typedef struct diag_case {
  const char *source;
  nbc_status_t status;
  const char *diagnostic;
} diag_case;

static const diag_case cases[] = {
    /* match is a statement (a soft keyword) kernels do not have, not an expression */
    {"def f(a):\n    match a:\n        case 1:\n            pass\n    return a\n",
     NBC_UNSUPPORTED, "t.py:2:5: error: unsupported statement: 'match'\n    match a:\n    ^"},
    {"if x > 0\n    pass\n", NBC_SYNTAX_ERROR,
     "t.py:1:9: error: expected ':' after 'if' condition, found NEWLINE\nif x > 0\n        ^"},
    {"def f(a):\n    else:\n        pass\n", NBC_SYNTAX_ERROR,
     "t.py:2:5: error: invalid syntax: unexpected 'else'\n    else:\n    ^"},
    {"for i in range(3):\nx = 1\n", NBC_SYNTAX_ERROR,
     "t.py:2:1: error: expected an indented block after 'for' statement on line 1\nx = 1\n^"},
    {"if a:\n        b = 1\n    c = 2\n", NBC_SYNTAX_ERROR,
     "t.py:3:5: error: unindent does not match any outer indentation level\n    c = 2\n    ^"},
    {"s = 'abc\n", NBC_SYNTAX_ERROR,
     "t.py:1:5: error: unterminated string literal (detected at line 1)\ns = 'abc\n    ^"},
    {"s = \"\"\"abc\n\nx\n", NBC_SYNTAX_ERROR,
     "t.py:1:5: error: unterminated triple-quoted string literal (detected at line 4)\ns = "
     "\"\"\"abc\n    ^"},
    {"x = 0x\n", NBC_SYNTAX_ERROR,
     "t.py:1:7: error: invalid hexadecimal literal\nx = 0x\n      ^"},
    {"x = 0b12\n", NBC_SYNTAX_ERROR,
     "t.py:1:8: error: invalid digit '2' in binary literal\nx = 0b12\n       ^"},
    {"x = 012\n", NBC_SYNTAX_ERROR,
     "t.py:1:5: error: leading zeros in decimal integer literals are not permitted; use an 0o "
     "prefix for octal integers\nx = 012\n    ^"},
    {"x = 1__0\n", NBC_SYNTAX_ERROR,
     "t.py:1:6: error: invalid decimal literal\nx = 1__0\n     ^"},
    {"x = a $ b\n", NBC_SYNTAX_ERROR,
     "t.py:1:7: error: unexpected character '$'\nx = a $ b\n      ^"},
    {"x = (1,\n  2\n", NBC_SYNTAX_ERROR,
     "t.py:1:5: error: '(' was never closed\nx = (1,\n    ^"},
    {"x = 1)\n", NBC_SYNTAX_ERROR, "t.py:1:6: error: unmatched ')'\nx = 1)\n     ^"},
    {"x = [1, 2)\n", NBC_SYNTAX_ERROR,
     "t.py:1:10: error: closing parenthesis ')' does not match opening parenthesis '['\nx = "
     "[1, 2)\n         ^"},
    {"def f(a, *args):\n    return a\n", NBC_UNSUPPORTED,
     "t.py:1:10: error: *args parameters are not supported in CUDA kernels (a device function "
     "called from one may have them)\ndef f(a, *args):\n         ^"},
    {"def f(a, **kw):\n    return a\n", NBC_UNSUPPORTED,
     "t.py:1:10: error: **kwargs parameters are not supported in CUDA kernels\ndef f(a, "
     "**kw):\n         ^"},
    {"def f(a, *, b):\n    return a\n", NBC_UNSUPPORTED,
     "t.py:1:10: error: keyword-only parameters are not supported in CUDA kernels\ndef f(a, *, "
     "b):\n         ^"},
    {"def f(a):\n    with a:\n        pass\n", NBC_UNSUPPORTED,
     "t.py:2:5: error: unsupported statement: 'with'\n    with a:\n    ^"},
    {"def f(a):\n    break\n", NBC_SYNTAX_ERROR,
     "t.py:2:5: error: 'break' outside loop\n    break\n    ^"},
    {"def f(a):\n    f(a) = 1\n", NBC_SYNTAX_ERROR,
     "t.py:2:5: error: cannot assign to function call\n    f(a) = 1\n    ^"},
    {"def f(a):\n    1 = a\n", NBC_SYNTAX_ERROR,
     "t.py:2:5: error: cannot assign to literal\n    1 = a\n    ^"},
    {"def f(a):\n    a, b += 1\n", NBC_SYNTAX_ERROR,
     "t.py:2:5: error: 'tuple' is an illegal expression for augmented assignment\n    a, b += "
     "1\n    ^"},
    {"def f(a):\n    g(x=1, a)\n", NBC_SYNTAX_ERROR,
     "t.py:2:12: error: positional argument follows keyword argument\n    g(x=1, a)\n          "
     " ^"},
    {"def f(a):\n    g(x=1, x=2)\n", NBC_SYNTAX_ERROR,
     "t.py:2:12: error: keyword argument repeated: x\n    g(x=1, x=2)\n           ^"},
    {"def f(a, a):\n    pass\n", NBC_SYNTAX_ERROR,
     "t.py:1:10: error: duplicate argument 'a' in function definition\ndef f(a, a):\n         "
     "^"},
    {"x = 1\n    y = 2\n", NBC_SYNTAX_ERROR,
     "t.py:2:5: error: unexpected indent\n    y = 2\n    ^"},
    {"x = (1 + )\n", NBC_SYNTAX_ERROR,
     "t.py:1:10: error: expected an expression, found ')'\nx = (1 + )\n         ^"},
    {"def f(a):\n    return 99999999999999999999999\n", NBC_UNSUPPORTED,
     "t.py:2:12: error: integer literal too large for 64 bits\n    return "
     "99999999999999999999999\n           ^"},
    {"return 1\n", NBC_SYNTAX_ERROR, "t.py:1:1: error: 'return' outside function\nreturn 1\n^"},
    {"x = 1 \\ 2\n", NBC_SYNTAX_ERROR,
     "t.py:1:8: error: unexpected character after line continuation character\nx = 1 \\ 2\n    "
     "   ^"},
    {"def f(a):\n    try:\n        pass\n    except:\n        pass\n", NBC_UNSUPPORTED,
     "t.py:2:5: error: unsupported statement: 'try'\n    try:\n    ^"},
    {"x = b'a' 'b'\n", NBC_SYNTAX_ERROR,
     "t.py:1:10: error: cannot mix bytes and nonbytes literals\nx = b'a' 'b'\n         ^"},
    {"f(a b)\n", NBC_SYNTAX_ERROR,
     "t.py:1:5: error: expected ',' or ')' in call arguments, found 'b'\nf(a b)\n    ^"},
    {"def f(a)\n    pass\n", NBC_SYNTAX_ERROR,
     "t.py:1:9: error: expected ':' after the function signature, found NEWLINE\ndef f(a)\n    "
     "    ^"},
    {"def f(a):\n    x = 1 2\n", NBC_SYNTAX_ERROR,
     "t.py:2:11: error: expected NEWLINE after the statement, found '2'\n    x = 1 2\n         "
     " ^"},
    {"def f(a):\n    import math\n", NBC_UNSUPPORTED,
     "t.py:2:5: error: unsupported statement: 'import'\n    import math\n    ^"},
    {"def f(a):\n    global x\n", NBC_UNSUPPORTED,
     "t.py:2:5: error: unsupported statement: 'global'\n    global x\n    ^"},
    {"def f(a):\n    class K: pass\n", NBC_UNSUPPORTED,
     "t.py:2:5: error: unsupported statement: 'class'\n    class K: pass\n    ^"},
    {"def f(a):\n    assert a, \n", NBC_SYNTAX_ERROR,
     "t.py:2:15: error: expected an expression, found NEWLINE\n    assert a, \n              ^"},
    {"def f(a):\n    raise ValueError from\n", NBC_SYNTAX_ERROR,
     "t.py:2:26: error: expected an expression, found NEWLINE\n    raise ValueError from\n"
     "                         ^"},
    {"def f(a):\n    del a\n", NBC_UNSUPPORTED,
     "t.py:2:5: error: unsupported statement: 'del'\n    del a\n    ^"},
    {"def f(a):\n    yield a\n", NBC_UNSUPPORTED,
     "t.py:2:5: error: unsupported statement: 'yield'\n    yield a\n    ^"},
    {"x = a.\n", NBC_SYNTAX_ERROR,
     "t.py:1:7: error: expected an attribute name after '.', found NEWLINE\nx = a.\n      ^"},
    {"x = a if b\n", NBC_SYNTAX_ERROR,
     "t.py:1:11: error: expected 'else' after the condition of an 'if' expression, found "
     "NEWLINE\nx = a if b\n          ^"},
    {"if x:\n\ty = 1\n        z = 2\n", NBC_SYNTAX_ERROR,
     "t.py:3:9: error: inconsistent use of tabs and spaces in indentation\n        z = 2\n     "
     "   ^"},
    {"while x\n", NBC_SYNTAX_ERROR,
     "t.py:1:8: error: expected ':' after 'while' condition, found NEWLINE\nwhile x\n       ^"},
    {"x = [1, 2\n", NBC_SYNTAX_ERROR,
     "t.py:1:5: error: '[' was never closed\nx = [1, 2\n    ^"},
    {"@dec\nx = 1\n", NBC_SYNTAX_ERROR,
     "t.py:2:1: error: expected 'def' or 'class' after the decorator, found 'x'\nx = 1\n^"},
    {"def f(a):\n    return a +\n", NBC_SYNTAX_ERROR,
     "t.py:2:15: error: expected an expression, found NEWLINE\n    return a +\n              "
     "^"},
    {"class:\n    pass\n", NBC_SYNTAX_ERROR,
     "t.py:1:6: error: expected a class name after 'class', found ':'\nclass:\n     ^"},
    {"def (a):\n    pass\n", NBC_SYNTAX_ERROR,
     "t.py:1:5: error: expected a function name after 'def', found '('\ndef (a):\n    ^"},
    {"x = not\n", NBC_SYNTAX_ERROR,
     "t.py:1:8: error: expected an expression, found NEWLINE\nx = not\n       ^"},
    {"x = a[]\n", NBC_SYNTAX_ERROR,
     "t.py:1:7: error: expected an expression, found ']'\nx = a[]\n      ^"},
    {"from math import\n", NBC_SYNTAX_ERROR,
     "t.py:1:17: error: expected a name to import, found NEWLINE\nfrom math import\n           "
     "     ^"},
    {"import\n", NBC_SYNTAX_ERROR,
     "t.py:1:7: error: expected a module name after 'import', found NEWLINE\nimport\n      ^"},
    {"try:\n    pass\n", NBC_SYNTAX_ERROR,
     "t.py:2:9: error: expected 'except' or 'finally' block, found end of file\n    pass\n     "
     "   ^"},
};

/* The diagnostic of loading src as t.py and, when it loads, of inferring its function f as
 * a device function taking an int64 per parameter; *ploaded says whether it loaded. */
static const char *compile_diag(const char *src, nbc_status_t *pstatus, bool *ploaded) {
  nbc__ctx *ctx = fe_new_ctx();
  static nbc_compile_options_t opts;
  nbc_compile_options_init(&opts);
  ctx->options = &opts;
  nbc__module *m = nbc__module_load(ctx, fe_file(ctx, "t.py", src));
  *ploaded = m != NULL;
  nbc__node *def = m ? nbc__module_function(m, "f") : NULL;
  if (def) {
    nbc__buf sig;
    nbc__buf_init(&sig, ctx->arena);
    nbc__buf_puts(&sig, "(");
    for (int i = 0; i < def->params.count; i++)
      nbc__buf_puts(&sig, i ? ", int64" : "int64");
    nbc__buf_puts(&sig, ")");
    nbc__signature s;
    if (nbc__signature_parse(ctx, sig.data, &s)) nbc__infer(ctx, m, def, &s);
  }
  *pstatus = ctx->status;
  return ctx->diag.data;
}

TEST(every_bad_input_has_its_exact_diagnostic) {
  int failed = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    nbc_status_t status = NBC_OK;
    bool loaded = false;
    const char *got = compile_diag(cases[i].source, &status, &loaded);
    /* Syntax errors stop the load; what is only unsupported waits for the compile. */
    if (loaded != (cases[i].status == NBC_UNSUPPORTED)) {
      fprintf(stderr, "case %zu: %s\n  %s\n", i, cases[i].source,
              loaded ? "loaded, but it has a syntax error" : "did not load");
      failed++;
    } else if (strcmp(got, cases[i].diagnostic) != 0 || status != cases[i].status) {
      fprintf(stderr, "case %zu: %s\n  got (%s):\n%s\n  want (%s):\n%s\n", i, cases[i].source,
              nbc_status_name(status), got, nbc_status_name(cases[i].status),
              cases[i].diagnostic);
      failed++;
    }
  }
  ASSERT_EQ(failed, 0);
  ASSERT(sizeof cases / sizeof cases[0] >= 50);
}

TEST(fragment_positions_name_the_real_file) {
  /* The text of a method dedented by 4 and starting at line 10 of k.py. */
  nbc__ctx *ctx = fe_new_ctx();
  nbc__file *f = fe_file(ctx, "k.py", "def f(a):\n    x = a $ 1\n");
  f->first_line = 10;
  f->col_offset = 4;
  ASSERT(!nbc__module_load(ctx, f));
  ASSERT_STREQ(ctx->diag.data, "k.py:11:15: error: unexpected character '$'\n"
                               "        x = a $ 1\n"
                               "              ^");
  /* Line numbers inside messages are the file's too. */
  ctx = fe_new_ctx();
  f = fe_file(ctx, "k.py", "def f(a):\n    for i in a:\n    return i\n");
  f->first_line = 10;
  f->col_offset = 4;
  ASSERT(!nbc__module_load(ctx, f));
  ASSERT_STREQ(ctx->diag.data,
               "k.py:12:9: error: expected an indented block after 'for' statement on line 11\n"
               "        return i\n"
               "        ^");
}

TEST(caret_follows_tabs_and_utf8) {
  ASSERT_STREQ(fe_diag("if x:\n\ty = 1 $\n"), "t.py:2:8: error: unexpected character '$'\n"
                                              "\ty = 1 $\n"
                                              "\t      ^");
  ASSERT_STREQ(fe_diag("s = 'é' ?\n"), "t.py:1:10: error: unexpected character '?'\n"
                                       "s = 'é' ?\n"
                                       "        ^");
  ASSERT_STREQ(fe_diag("x = 1 \xe2\x82\xac\n"),
               "t.py:1:7: error: invalid character '\xe2\x82\xac' (U+20AC)\n"
               "x = 1 \xe2\x82\xac\n"
               "      ^");
  ASSERT_STREQ(fe_diag("x = 1 \x01\n"), "t.py:1:7: error: unexpected character '\\x01'\n"
                                        "x = 1 \x01\n"
                                        "      ^");
}

TEST(only_the_first_error_is_kept) {
  nbc__ctx *ctx = fe_new_ctx();
  nbc__file *f = fe_file(ctx, "a.py", "x = 1\ny = 2\n");
  nbc__diag_error(ctx, NBC_TYPING_ERROR, f, 2, 3, "first %d", 1);
  nbc__diag_error(ctx, NBC_SYNTAX_ERROR, f, 1, 1, "second");
  NBC__BUG(ctx, "third");
  ASSERT_EQ(ctx->status, NBC_TYPING_ERROR);
  ASSERT_STREQ(ctx->diag.data, "a.py:2:3: error: first 1\ny = 2\n  ^");
}

TEST(internal_bugs_name_the_c_file) {
  nbc__ctx *ctx = fe_new_ctx();
  int line = __LINE__ + 1;
  NBC__BUG(ctx, "unexpected node %s", "IFEXP");
  ASSERT_EQ(ctx->status, NBC_INTERNAL);
  char want[128];
  snprintf(want, sizeof want,
           "internal error at test_diagnostics_front.c:%d: unexpected node IFEXP", line);
  ASSERT_STREQ(ctx->diag.data, want);
  ctx = fe_new_ctx();
  nbc__diag_oom(ctx);
  ASSERT_EQ(ctx->status, NBC_NO_MEMORY);
  ASSERT_CONTAINS(ctx->diag.data, "out of memory");
}

TEST(errors_at_the_end_of_the_file) {
  /* A file that stops early: the caret goes after its last token, not on an empty line. */
  ASSERT_STREQ(fe_diag("def f(a):\n    if a:\n"),
               "t.py:2:10: error: expected an indented block after 'if' statement on line 2\n"
               "    if a:\n"
               "         ^");
  ASSERT_STREQ(fe_diag("def f(a):"), "t.py:1:10: error: expected an indented block after "
                                     "function definition on line 1\n"
                                     "def f(a):\n"
                                     "         ^");
  ASSERT_STREQ(fe_diag("x = 1 +\\"),
               "t.py:1:8: error: unexpected end of file after line continuation character\n"
               "x = 1 +\\\n"
               "       ^");
}

static char *repeat(const char *head, const char *unit, int n, const char *tail) {
  size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
  char *s = malloc(hl + ul * (size_t)n + tl + 1), *p = s;
  memcpy(p, head, hl);
  p += hl;
  for (int i = 0; i < n; i++, p += ul)
    memcpy(p, unit, ul);
  memcpy(p, tail, tl + 1);
  return s;
}

TEST(nesting_limits_are_errors_not_crashes) {
  /* 150 parentheses are fine; 201 are CPython's limit; very long unary and operator chains
   * and deep indentation are refused before any recursive walk could exhaust the stack. */
  char *ok = repeat("x = ", "(", 150, "1");
  char *ok2 = repeat(ok, ")", 150, "\n");
  ASSERT_STREQ(fe_diag(ok2), "");
  ASSERT_CONTAINS(fe_diag(repeat("x = ", "(", 201, "1\n")), "too many nested parentheses");
  ASSERT_CONTAINS(fe_diag(repeat("x = ", "-", 20000, "1\n")),
                  "error: too many nested expressions or statements (more than 10000)");
  ASSERT_CONTAINS(fe_diag(repeat("x = 1", " + 1", 20000, "\n")),
                  "error: too many nested expressions or statements (more than 10000)");
  ASSERT_CONTAINS(fe_diag(repeat("x = a", ".b", 20000, "\n")),
                  "error: too many nested expressions or statements (more than 10000)");
  ASSERT_CONTAINS(fe_diag(repeat("x = ", "not ", 20000, "a\n")),
                  "error: too many nested expressions or statements (more than 10000)");
  ASSERT_CONTAINS(fe_diag(repeat("x = ", "a if b else ", 20000, "c\n")),
                  "error: too many nested expressions or statements (more than 10000)");
  /* 101 nested blocks: the 100 ifs are fine, the pass is the 101st level. */
  nbc__buf b;
  nbc__ctx *ctx = fe_new_ctx();
  nbc__buf_init(&b, ctx->arena);
  for (int i = 0; i <= 100; i++)
    nbc__buf_printf(&b, "%*sif x:\n", i, "");
  nbc__buf_printf(&b, "%*spass\n", 101, "");
  ASSERT_CONTAINS(fe_diag(b.data), "t.py:102:102: error: too many levels of indentation");
}

TEST_LIST(X(every_bad_input_has_its_exact_diagnostic) X(fragment_positions_name_the_real_file)
              X(caret_follows_tabs_and_utf8) X(only_the_first_error_is_kept)
                  X(internal_bugs_name_the_c_file) X(errors_at_the_end_of_the_file)
                      X(nesting_limits_are_errors_not_crashes))
TEST_MAIN()
