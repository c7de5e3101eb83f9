/* test_lex.c — the tokenizer (src/compiler/lex.c): token streams for the inputs where
 * Python's tokenizer is subtle (indentation, tabs, line joining, every number and string
 * form, longest-match operators) and the values it decodes. Streams are written compactly:
 * each token's text, NL/IN/DE/EOF for NEWLINE/INDENT/DEDENT/EOF.
 */
#include <math.h>
#include <time.h>

#include "front_util.h"
#include "test.h"

TEST(simple_statement) {
  ASSERT_STREQ(fe_tokens("x = a+1\n"), "x = a + 1 NL EOF");
  ASSERT_STREQ(fe_tokens(""), "EOF");
  ASSERT_STREQ(fe_tokens("\n\n   \n# only a comment\n"), "EOF");
}

TEST(indentation_blocks) {
  const char *src = "def f(a):\n"
                    "    if a:\n"
                    "        return 1\n"
                    "\n"
                    "  # a comment at an odd indentation is ignored\n"
                    "    return 2\n"
                    "x = 3\n";
  ASSERT_STREQ(fe_tokens(src), "def f ( a ) : NL IN if a : NL IN return 1 NL DE return 2 NL "
                               "DE x = 3 NL EOF");
}

TEST(dedent_several_levels_and_eof) {
  /* No newline at the end: NEWLINE then every DEDENT before EOF. */
  ASSERT_STREQ(fe_tokens("if a:\n  if b:\n    if c:\n      x"),
               "if a : NL IN if b : NL IN if c : NL IN x NL DE DE DE EOF");
  ASSERT_STREQ(fe_tokens("if a:\n  if b:\n    c\nd\n"),
               "if a : NL IN if b : NL IN c NL DE DE d NL EOF");
}

TEST(tabs_expand_to_multiples_of_eight) {
  /* A tab then "    " is column 12 either way it is read; consistent with a tab+4. */
  ASSERT_STREQ(fe_tokens("if a:\n\tb\n\tif c:\n\t    d\n"),
               "if a : NL IN b NL if c : NL IN d NL DE DE EOF");
  /* One tab and eight spaces are the same column 8 but differ with tab size 1. */
  ASSERT_STREQ(fe_tokens("if a:\n\tb\n        c\n"),
               "t.py:3:9: error: inconsistent use of tabs and spaces in indentation\n"
               "        c\n"
               "        ^");
}

TEST(implicit_joining_and_continuation) {
  ASSERT_STREQ(fe_tokens("x = (1,\n  2,\n\n 3)\n"), "x = ( 1 , 2 , 3 ) NL EOF");
  ASSERT_STREQ(fe_tokens("x = [1,  # comment\n    2]\ny = {\n}\n"),
               "x = [ 1 , 2 ] NL y = { } NL EOF");
  ASSERT_STREQ(fe_tokens("x = 1 + \\\n    2\nif a and \\\n b:\n  pass\n"),
               "x = 1 + 2 NL if a and b : NL IN pass NL DE EOF");
}

TEST(crlf_and_bom) {
  ASSERT_STREQ(fe_tokens("\xEF\xBB\xBFif a:\r\n  b\r\n"), "if a : NL IN b NL DE EOF");
  ASSERT_STREQ(fe_tokens("a\rb\r"), "a NL b NL EOF");
}

TEST(number_forms_and_values) {
  int n = 0;
  nbc__token *t =
      fe_lex("1_000 0x1F 0o17 0B101 0 00 1e-3 .5 5. 1j 1.5J 1_0.2_5e1_0 0xdead_beef", &n);
  ASSERT(t);
  ASSERT_EQ(n, 15);
  ASSERT_EQ(t[0].kind, NBC__TOK_INT);
  ASSERT_EQ(t[0].value.i, 1000);
  ASSERT_EQ(t[1].value.i, 31);
  ASSERT_EQ(t[2].value.i, 15);
  ASSERT_EQ(t[3].value.i, 5);
  ASSERT_EQ(t[4].value.i, 0);
  ASSERT_EQ(t[5].value.i, 0);
  ASSERT_EQ(t[6].kind, NBC__TOK_FLOAT);
  ASSERT(t[6].value.f == 1e-3);
  ASSERT(t[7].value.f == 0.5);
  ASSERT(t[8].kind == NBC__TOK_FLOAT && t[8].value.f == 5.0);
  ASSERT(t[9].kind == NBC__TOK_IMAG && t[9].value.f == 1.0);
  ASSERT(t[10].kind == NBC__TOK_IMAG && t[10].value.f == 1.5);
  ASSERT(t[11].kind == NBC__TOK_FLOAT && t[11].value.f == 10.25e10);
  ASSERT_EQ(t[12].value.i, 0xdeadbeef);
}

TEST(big_integers_are_marked_not_refused) {
  int n = 0;
  nbc__token *t = fe_lex("9223372036854775807 9223372036854775808 0xFFFFFFFFFFFFFFFF "
                         "18446744073709551616",
                         &n);
  ASSERT(t);
  ASSERT(!t[0].big && t[0].value.i == INT64_MAX);
  ASSERT(t[1].big && !t[1].huge && (uint64_t)t[1].value.i == 9223372036854775808ull);
  ASSERT(t[2].big && !t[2].huge && (uint64_t)t[2].value.i == UINT64_MAX);
  ASSERT(t[3].big && t[3].huge);
}

TEST(strings_prefixes_and_escapes) {
  int n = 0;
  nbc__token *t = fe_lex("'a\\tb' \"q\\\"\" r'\\n' b'\\x41\\101' u'\\u00e9\\N{DASH}' "
                         "Rb\"\\d\" f'{x}\\n' '''tri\nple''' \"\"\"x\"y\"\"\" 'cont\\\nline'",
                         &n);
  ASSERT(t);
  ASSERT_EQ(n, 12);
  for (int i = 0; i < 10; i++)
    ASSERT_EQ(t[i].kind, NBC__TOK_STRING);
  ASSERT_STREQ(t[0].str, "a\tb");
  ASSERT_STREQ(t[1].str, "q\"");
  ASSERT_STREQ(t[2].str, "\\n");
  ASSERT_STREQ(t[3].str, "AA");
  ASSERT_STREQ(t[4].str, "\xC3\xA9\\N{DASH}");
  ASSERT_STREQ(t[5].str, "\\d");
  ASSERT_STREQ(t[6].str, "{x}\\n"); /* f-strings keep their raw text */
  ASSERT_STREQ(t[7].str, "tri\nple");
  ASSERT_STREQ(t[8].str, "x\"y");
  ASSERT_STREQ(t[9].str, "contline");
  /* Positions: a token that spans lines starts where it starts. */
  ASSERT_EQ(t[7].line, 1);
  ASSERT_EQ(t[8].line, 2);
  ASSERT_EQ(t[8].col, 8);
}

TEST(operators_longest_match) {
  ASSERT_STREQ(fe_tokens("a **= b //= c >>= d <<= e -> f := g @ h ... != == <= >= ** //"),
               "a **= b //= c >>= d <<= e -> f := g @ h ... != == <= >= ** // NL EOF");
  ASSERT_STREQ(fe_tokens("x[::1]"), "x [ : : 1 ] NL EOF");
  ASSERT_STREQ(fe_tokens("a.b(...)"), "a . b ( ... ) NL EOF");
}

TEST(keywords_and_names) {
  int n = 0;
  nbc__token *t = fe_lex("if match print None not_ _x é", &n);
  ASSERT(t);
  ASSERT_EQ(t[0].kind, NBC__TOK_KEYWORD);
  ASSERT_EQ(t[1].kind, NBC__TOK_NAME); /* soft keywords are names */
  ASSERT_EQ(t[2].kind, NBC__TOK_NAME);
  ASSERT_EQ(t[3].kind, NBC__TOK_KEYWORD);
  ASSERT_EQ(t[4].kind, NBC__TOK_NAME);
  ASSERT_EQ(t[5].kind, NBC__TOK_NAME);
  ASSERT_EQ(t[6].kind, NBC__TOK_NAME);
  ASSERT(nbc__tok_is(&t[0], "if"));
  ASSERT(!nbc__tok_is(&t[1], "if"));
  ASSERT(!nbc__tok_is(&t[1], "match")); /* only operators and keywords */
  ASSERT_STREQ(nbc__tok_kind_name(NBC__TOK_DEDENT), "DEDENT");
}

TEST(dump_format) {
  nbc__ctx *ctx = fe_new_ctx();
  int n = 0;
  nbc__token *t = nbc__lex(ctx, fe_file(ctx, "t.py", "if x:\n  y = 0x10 + 'a\\n'\n"), &n);
  ASSERT(t);
  nbc__buf out;
  nbc__buf_init(&out, ctx->arena);
  nbc__lex_dump(&out, t, n);
  ASSERT_STREQ(out.data, "1:1 KEYWORD 'if'\n"
                         "1:4 NAME 'x'\n"
                         "1:5 OP ':'\n"
                         "1:6 NEWLINE\n"
                         "2:3 INDENT\n"
                         "2:3 NAME 'y'\n"
                         "2:5 OP '='\n"
                         "2:7 INT '0x10' = 16\n"
                         "2:12 OP '+'\n"
                         "2:14 STRING '\\'a\\\\n\\'' = 'a\\n'\n"
                         "2:19 NEWLINE\n"
                         "3:1 DEDENT\n"
                         "3:1 EOF\n");
}

TEST(positions_are_one_based) {
  int n = 0;
  nbc__token *t = fe_lex("a = (\n  b)\n", &n);
  ASSERT(t);
  ASSERT_EQ(t[0].line, 1);
  ASSERT_EQ(t[0].col, 1);
  ASSERT_EQ(t[3].line, 2);
  ASSERT_EQ(t[3].col, 3);
}

TEST(lex_errors) {
  ASSERT_STREQ(fe_tokens("x = 1abc\n"), "t.py:1:6: error: invalid decimal literal\n"
                                        "x = 1abc\n"
                                        "     ^");
  ASSERT_STREQ(fe_tokens("s = 'abc\n"),
               "t.py:1:5: error: unterminated string literal (detected at line 1)\n"
               "s = 'abc\n"
               "    ^");
  ASSERT_STREQ(fe_tokens("x = a ? b\n"), "t.py:1:7: error: unexpected character '?'\n"
                                         "x = a ? b\n"
                                         "      ^");
}

TEST_LIST(X(simple_statement) X(indentation_blocks) X(dedent_several_levels_and_eof)
              X(tabs_expand_to_multiples_of_eight) X(implicit_joining_and_continuation)
                  X(crlf_and_bom) X(number_forms_and_values)
                      X(big_integers_are_marked_not_refused) X(strings_prefixes_and_escapes)
                          X(operators_longest_match) X(keywords_and_names) X(dump_format)
                              X(positions_are_one_based) X(lex_errors))
TEST_MAIN()
