/* test_limits.c — hostile sizes: every construct nested or chained 100,000 deep, 100,000
 * locals, chains libNVVM is slow or deep on, and the compile's time limit.
 *
 * Each input is built at run time. A deep input must end in a clear error that names the
 * limit, or compile correctly: never a crash (each test runs in its own process, so a stack
 * overflow fails only that test). Time is bounded with RLIMIT_CPU, set generously enough
 * never to trip on a loaded machine or under ASan while far below what a quadratic pass
 * takes (20,000 locals took 7 s when variables were found by a scan; 100,000 take 25 times
 * that) — never by timing assertions. Memory is bounded with RLIMIT_AS, or measured exactly
 * by the compiler's arena.
 */
#include <errno.h>
#include <sys/resource.h>
#include <sys/wait.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) /* clang's way of saying ASan is on */
#define NBC_TEST_ASAN 1
#endif
#endif
#ifndef NBC_TEST_ASAN
#define NBC_TEST_ASAN 0
#endif

#include "compiler/compiler.h"
#include "nbcuda.h"
#include "nvvm_util.h"
#include "test.h"
#include "text_util.h"

enum { DEEP = 100000 };

static void cpu_limit(int seconds) {
  struct rlimit r = {(rlim_t)seconds, (rlim_t)seconds};
  ASSERT(setrlimit(RLIMIT_CPU, &r) == 0);
}

/* Compiles f of src for sig: the status; the error message in *pmsg (or NULL; it lives
 * until the next call). */
static nbc_status_t compile_src(const char *src, const char *sig, nbc_output_t output,
                                double time_limit, const char **pmsg) {
  nbc_source_t source = {src, 0, "deep.py", 1, 0};
  nbc_compile_options_t o;
  nbc_compile_options_init(&o);
  o.output = output;
  o.time_limit = time_limit;
  nbc_compile_result_t *r = NULL;
  nbc_status_t st = nbc_compile(&source, "f", sig, &o, NULL, &r);
  static char msg[4096];
  snprintf(msg, sizeof msg, "%s", nbc_last_error());
  *pmsg = st == NBC_OK ? NULL : msg;
  nbc_compile_result_destroy(r);
  return st;
}

/* src fails with a syntax error naming limit, or compiles to NVVM IR. */
static void error_or_ir(const char *src, const char *limit) {
  const char *msg;
  nbc_status_t st = compile_src(src, "int32(int32)", NBC_OUTPUT_NVVM_IR, 0, &msg);
  if (st == NBC_OK) return;
  ASSERT_STATUS(st, NBC_SYNTAX_ERROR);
  ASSERT_CONTAINS(msg, "deep.py:");
  ASSERT_CONTAINS(msg, limit);
}

/* `def f(a): return PRE*DEEP a POST*DEEP` */
static void deep_expression(const char *pre, const char *post, const char *limit) {
  text t = {0};
  put(&t, "def f(a):\n    g = lambda v: v\n    return ");
  put_times(&t, pre, DEEP);
  put(&t, "a");
  put_times(&t, post, DEEP);
  put(&t, "\n");
  error_or_ir(t.data, limit);
  free(t.data);
}

static const char depth_limit[] = "too many nested expressions or statements (more than 10000)";

/* Before its links counted towards the depth limit, `a ** a ** ...` recursed once per link
 * and 25,000 links overflowed the stack. */
TEST(power_chain) {
  deep_expression("", " ** a", "too many '**' in one expression (more than 64)");
  deep_expression("a ** ", "", "too many '**' in one expression (more than 64)");
  deep_expression("a ** -", "", "more than");
}

TEST(comparison_chain) {
  deep_expression("", " < a", "too many chained comparisons (more than 64)");
  text t = {0}; /* 64 comparisons are still accepted */
  put(&t, "def f(a):\n    return a");
  put_times(&t, " <= a", 64);
  put(&t, "\n");
  const char *msg;
  ASSERT_OK(compile_src(t.data, "int32(int32)", NBC_OUTPUT_NVVM_IR, 0, &msg));
  free(t.data);
}

TEST(unary_chains) {
  deep_expression("not ", "", depth_limit);
  deep_expression("- ", "", depth_limit);
  deep_expression("~", "", depth_limit);
  deep_expression("+", "", depth_limit);
}

TEST(binary_chains) {
  deep_expression("", " + a", depth_limit);
  deep_expression("", " * a", depth_limit);
  deep_expression("", " | a", depth_limit);
  deep_expression("", " and a", depth_limit);
  deep_expression("", " or a", depth_limit);
  deep_expression("a if a else ", "", depth_limit);
}

TEST(brackets) {
  deep_expression("(", ")", "too many nested parentheses");
  deep_expression("[", "]", "too many nested parentheses");
  deep_expression("(", ",)", "too many nested parentheses");
  deep_expression("g(", ")", "too many nested parentheses");
  deep_expression("{0: ", "}", "too many nested parentheses");
}

TEST(postfix_chains) {
  deep_expression("", "[0]", depth_limit);
  deep_expression("", ".real", depth_limit);
  deep_expression("g", "(a)", depth_limit);
  deep_expression("lambda: ", "", depth_limit);
}

/* Blocks nest 2,000 deep, not 100,000: each level indents one more column, so 100,000 levels
 * would take 5 GB of text; the limit (100 levels) is far below either. */
TEST(nested_blocks) {
  static const char *const heads[] = {"if a:", "while a:", "for i in range(a):", "with a:"};
  for (size_t k = 0; k < sizeof heads / sizeof heads[0]; k++) {
    text t = {0};
    put(&t, "def f(a):\n");
    for (int i = 1; i <= 2000; i++) {
      put_times(&t, " ", i);
      put(&t, heads[k]);
      put(&t, "\n");
    }
    put_times(&t, " ", 2001);
    put(&t, "return a\n    return a\n");
    error_or_ir(t.data, "too many levels of indentation");
    free(t.data);
  }
}

/* An elif chain nests each link in the one before: past the depth limit, an error; within
 * it, a compile. Each branch reads a variable bound once to a constant, which inference
 * used to look up by walking the whole function per reference. */
TEST(elif_chain) {
  cpu_limit(120);
  static const int lengths[] = {DEEP, 990, 5000}; /* 5,000: more than CPython compiles */
  for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++) {
    int n = lengths[li];
    text t = {0};
    put(&t, "def f(a):\n    k = 3\n    if a == 0:\n        return k\n");
    char line[96];
    for (int i = 1; i < n; i++) {
      snprintf(line, sizeof line, "    elif a == %d:\n        return a + k * %d\n", i, i);
      put(&t, line);
    }
    put(&t, "    return a\n");
    const char *msg;
    nbc_status_t st = compile_src(t.data, "int32(int32)", NBC_OUTPUT_NVVM_IR, 0, &msg);
    if (n == DEEP) {
      ASSERT_STATUS(st, NBC_SYNTAX_ERROR);
      ASSERT_CONTAINS(msg, depth_limit);
    } else {
      ASSERT_OK(st);
    }
    free(t.data);
  }
}

/* An elif chain testing a parameter at each link: numba's dead branch pruning asks, per
 * link, whether the parameter is bound anywhere in the function; walking the function per
 * link made 9,000 links take 8 s (quadratic), now a count kept until a branch is pruned. */
TEST(elif_chain_on_a_parameter) {
  cpu_limit(4);
  text t = {0};
  put(&t, "def f(a):\n    if a == 0:\n        return 0\n");
  char line[96];
  for (int i = 1; i < 9000; i++) {
    snprintf(line, sizeof line, "    elif a == %d:\n        return %d\n", i, i);
    put(&t, line);
  }
  put(&t, "    return -1\n");
  const char *msg;
  ASSERT_OK(compile_src(t.data, "int64(int64)", NBC_OUTPUT_NVVM_IR, 0, &msg));
  free(t.data);
}

/* 100,000 distinct locals: linear inference (a scan per lookup made it quadratic). */
TEST(many_locals) {
  cpu_limit(90);
  text t = {0};
  put(&t, "def f(a):\n");
  char line[64];
  for (int i = 0; i < DEEP; i++) {
    snprintf(line, sizeof line, "    v%d = a + %d\n", i, i);
    put(&t, line);
  }
  snprintf(line, sizeof line, "    return v%d + v0\n", DEEP - 1);
  put(&t, line);
  const char *msg;
  nbc_status_t st = compile_src(t.data, "int32(int32)", NBC_OUTPUT_NVVM_IR, 0, &msg);
  ASSERT_OK(st);
  free(t.data);
}

/* 60 nested loops (64 is the limit) around a rebound name: the SSA pass walks each loop until it settles,
 * inside each walk of the loops around it (2^depth); past 12 loops it leaves the name as one
 * variable instead of running for ever. */
TEST(nested_loops) {
  cpu_limit(60);
  text t = {0};
  put(&t, "def f(a):\n    x = a\n");
  char indent[512] = "    ";
  for (int i = 0; i < 60; i++) {
    put(&t, indent);
    put(&t, "for i in range(2):\n");
    strcat(indent, " ");
  }
  put(&t, indent);
  put(&t, "x = x + 1\n    return x\n");
  const char *msg;
  ASSERT_OK(compile_src(t.data, "int32(int32)", NBC_OUTPUT_NVVM_IR, 0, &msg));
  free(t.data);
}

/* A fuzzer's input: a call that fails (a NameError two calls down) beside functions that call
 * each other 255 times over. Typing went on after the error, typing the failing calls again
 * at every call site (and appending "During:" lines each time): 9 GB and minutes. Once an
 * error stands nothing more is typed. The address space is bounded where ASan, which
 * reserves terabytes, is not loaded. */
TEST(typing_stops_at_the_first_error) {
  cpu_limit(60);
#if !defined(__SANITIZE_ADDRESS__) && !NBC_TEST_ASAN
  struct rlimit as = {(rlim_t)2 << 30, (rlim_t)2 << 30};
  ASSERT(setrlimit(RLIMIT_AS, &as) == 0);
#endif
  FILE *f = fopen(NBCUDA_SOURCE_DIR "/tests/fuzz/seeds/mutual_recursion_after_an_error.py", "rb");
  ASSERT(f != NULL);
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0'; /* the source ends at the seed's NUL, before its signature */
  nbc_source_t source = {buf, 0, "seed.py", 1, 0};
  nbc_compile_options_t o;
  nbc_compile_options_init(&o);
  o.device = 0;
  o.abi = NBC_ABI_NUMBA;
  o.output = NBC_OUTPUT_NVVM_IR;
  nbc_compile_result_t *r = NULL;
  ASSERT_STATUS(nbc_compile(&source, "k", "void(float64[:], int64)", &o, NULL, &r),
                NBC_TYPING_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "NameError: name 'renp' is not defined");
  nbc_compile_result_destroy(r);
  /* the error is found with the memory of a small compile, not gigabytes (kB) */
  struct rusage use;
  ASSERT(getrusage(RUSAGE_SELF, &use) == 0);
  ASSERT(use.ru_maxrss < 512 * 1024);
}

/* A valid module of about `size` bytes: f, then small functions of a few statements each
 * (about 21 AST nodes and 34 tokens in 75 bytes, as dense as ordinary Python). */
static text many_functions(size_t size) {
  text t = {0};
  put(&t, "def f(a):\n    return g0(a, 1)\n\n");
  char fn[160];
  for (int i = 0; t.len < size; i++) {
    snprintf(fn, sizeof fn,
             "def g%d(a, b):\n    x = a + b * %d\n    if x > 3:\n        x = x - 1\n"
             "    return x\n\n",
             i, i);
    put(&t, fn);
  }
  return t;
}

/* The front end's memory is a bounded multiple of the source: tokens of 32 bytes in an array
 * trimmed to its tokens (13.4 times the source here; 16.7 with tokens of 40 bytes), and the
 * trees of the top level only: the bodies of the functions are checked and parsed again when
 * one is compiled (7.8 times, 51 when every body was kept), and the global names in one
 * array (24 times in all, 70 before). The figures are the arena's own count of its chunks,
 * so exact. */
TEST(front_end_memory) {
  text t = many_functions((size_t)10 << 20);
  nbc_compile_options_t o;
  nbc_compile_options_init(&o);
  nbc__ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.options = &o;
  ctx.arena = nbc__arena_create();
  ASSERT(ctx.arena);
  nbc__buf_init(&ctx.diag, ctx.arena);
  nbc__file file = {"many.py", t.data, t.len, 1, 0};
  int count = 0;
  size_t before = nbc__arena_total(ctx.arena);
  nbc__token *tokens = nbc__lex(&ctx, &file, &count);
  ASSERT(tokens);
  size_t lexed = nbc__arena_total(ctx.arena) - before;
  ASSERT(lexed <= 15 * t.len);
  ASSERT(nbc__parse_module_deferred(&ctx, tokens, count) != NULL);
  size_t parsed = nbc__arena_total(ctx.arena) - before - lexed;
  ASSERT(parsed <= 9 * t.len);
  nbc__arena_destroy(ctx.arena);

  ctx.arena = nbc__arena_create();
  ASSERT(ctx.arena);
  nbc__buf_init(&ctx.diag, ctx.arena);
  nbc__module *m = nbc__module_load(&ctx, &file);
  ASSERT(m);
  size_t loaded = nbc__arena_total(ctx.arena);
  ASSERT(loaded <= 27 * t.len);
  nbc__node *g = nbc__module_function(m, "g7"); /* one body: a few nodes more */
  ASSERT(g && g->body.count == 3);
  ASSERT(nbc__arena_total(ctx.arena) - loaded <= 64 * 1024);
  nbc__arena_destroy(ctx.arena);
  free(t.data);
}

/* The same 10 MB source through nbc_compile to NVVM IR, in 1 GB of address space (the
 * compile's own thread reserves 512 MB of it as its stack; the CLI needs about 0.8 GB in
 * all); it took 1.57 GB when every function's tree was kept. */
TEST(large_source_compiles) {
  text t = many_functions((size_t)10 << 20);
#if !defined(__SANITIZE_ADDRESS__) && !NBC_TEST_ASAN
  struct rlimit as = {(rlim_t)1 << 30, (rlim_t)1 << 30};
  ASSERT(setrlimit(RLIMIT_AS, &as) == 0);
#endif
  const char *msg;
  ASSERT_OK(compile_src(t.data, "int32(int32)", NBC_OUTPUT_NVVM_IR, 0, &msg));
  free(t.data);
}

/* A token longer than a token's length field holds (a string literal of 64 MiB) and a
 * source longer than a token's offset reaches (4 GiB, which no test allocates: the size is
 * refused before the text is read) are errors that say so. */
TEST(token_and_source_size) {
  size_t n = (size_t)NBC__TOKEN_MAX_LEN + 16;
  char *src = malloc(n + 1);
  ASSERT(src);
  memcpy(src, "x = '", 5);
  memset(src + 5, 'a', n - 7);
  memcpy(src + n - 2, "'\n", 2);
  src[n] = '\0';
  nbc__ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.arena = nbc__arena_create();
  ASSERT(ctx.arena);
  nbc__buf_init(&ctx.diag, ctx.arena);
  nbc__file file = {"long.py", src, n, 1, 0};
  int count = 0;
  ASSERT(!nbc__lex(&ctx, &file, &count));
  ASSERT_EQ(ctx.status, NBC_SYNTAX_ERROR);
  ASSERT(strncmp(ctx.diag.data, "long.py:1:5: error: a token of 67108874 bytes: at most "
                                "67108863 bytes are allowed\n", 82) == 0);
  free(src);
  nbc__arena_destroy(ctx.arena);
  if (sizeof(size_t) > 4) {
    memset(&ctx, 0, sizeof ctx);
    ctx.arena = nbc__arena_create();
    ASSERT(ctx.arena);
    nbc__buf_init(&ctx.diag, ctx.arena);
    nbc__file huge = {"huge.py", "x = 1\n", (size_t)UINT32_MAX + 1, 1, 0};
    ASSERT(!nbc__lex(&ctx, &huge, &count));
    ASSERT_CONTAINS(ctx.diag.data, "a source of 4294967296 bytes: at most 4294967295 bytes");
    nbc__arena_destroy(ctx.arena);
  }
}

/* 100,000 `x += a` in a row: libNVVM's optimiser recurses along the chain and overflowed an
 * 8 MB stack; it runs on a large stack of its own. */
TEST(long_dependency_chain) {
  require_nvvm();
  text t = {0};
  put(&t, "def f(a):\n    x = a\n");
  put_times(&t, "    x += a\n", DEEP);
  put(&t, "    return x\n");
  nbc_source_t source = {t.data, 0, "deep.py", 1, 0};
  nbc_compile_options_t o;
  nbc_compile_options_init(&o);
  nbc_compile_result_t *r = NULL;
  ASSERT_OK(nbc_compile(&source, "f", "int32(int32)", &o, NULL, &r));
  ASSERT_CONTAINS(nbc_compile_result_code(r, NULL), ".func");
  nbc_compile_result_destroy(r);
  free(t.data);
}

/* A source libNVVM takes many seconds over: 30 statements of 60 nested `**`. */
static char *slow_source(void) {
  text t = {0};
  put(&t, "def f(a):\n");
  for (int i = 0; i < 30; i++) {
    put(&t, "    a = a + a");
    put_times(&t, " ** a", 60);
    put(&t, "\n");
  }
  put(&t, "    return a\n");
  return t.data;
}

TEST(time_limit_ends_the_compile) {
  require_nvvm();
  const char *msg;
  char *src = slow_source();
  ASSERT_STATUS(compile_src(src, "int32(int32)", NBC_OUTPUT_PTX, 0.5, &msg), NBC_COMPILE_ERROR);
  free(src);
  ASSERT_CONTAINS(msg, "compile exceeded the time limit of 0.5 s");
  /* the child was killed and reaped: this process has none left */
  ASSERT_EQ(waitpid(-1, NULL, WNOHANG), -1);
  ASSERT_EQ(errno, ECHILD);
}

/* Within the limit the child's result is the same as an in-process compile's. */
TEST(time_limit_result_is_the_same) {
  require_nvvm();
  const char *src = "def f(a):\n    return a * 3 + 1\n";
  nbc_source_t source = {src, 0, "t.py", 1, 0};
  nbc_compile_options_t o;
  nbc_compile_options_init(&o);
  nbc_compile_result_t *plain = NULL, *timed = NULL;
  ASSERT_OK(nbc_compile(&source, "f", "int32(int32)", &o, NULL, &plain));
  o.time_limit = 300;
  ASSERT_OK(nbc_compile(&source, "f", "int32(int32)", &o, NULL, &timed));
  ASSERT_STREQ(nbc_compile_result_code(plain, NULL), nbc_compile_result_code(timed, NULL));
  nbc_compile_result_destroy(plain);
  nbc_compile_result_destroy(timed);
  o.time_limit = -1; /* refused before anything is compiled */
  ASSERT_STATUS(nbc_compile(&source, "f", "int32(int32)", &o, NULL, &timed),
                NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "time limit");
}

TEST_LIST(X(power_chain) X(comparison_chain) X(unary_chains) X(binary_chains) X(brackets)
              X(postfix_chains) X(nested_blocks) X(elif_chain) X(elif_chain_on_a_parameter)
                  X(many_locals)
                  X(nested_loops) X(typing_stops_at_the_first_error) X(front_end_memory) X(token_and_source_size)
                      X(large_source_compiles) X(long_dependency_chain) X(time_limit_ends_the_compile)
                      X(time_limit_result_is_the_same))
TEST_MAIN()
