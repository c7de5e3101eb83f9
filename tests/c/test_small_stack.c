/* test_small_stack.c — the deepest inputs the compiler accepts, compiled from a thread with
 * a 256 KB stack (a Python thread after threading.stack_size(256 * 1024); musl's default is
 * 128 KB), and one past each limit, which must end in a clear error.
 *
 * Every recursion of the compiler is bounded by a limit (the parser's depth of 10,000, 64
 * nested calls of device functions or fewer when they fill half the compile's stack, types nested 32 deep, 4,096 values in a tuple) or is a
 * loop; the product of the limits is more than a small stack holds, so nbc_compile runs the
 * pipeline on a large stack of its own (src/compiler/stack.c) and carries its error back.
 * Each input is built at run time; each test runs in its own process, so a stack overflow
 * fails only that test.
 */
#include <pthread.h>
#include <sys/stat.h>

#include "nbcuda.h"
#include "nvvm_util.h"
#include "test.h"
#include "text_util.h"

enum { SMALL_STACK = 256 * 1024 };

/* fmt's %d taken from a, b, c in turn (unused ones ignored). */
static void putf(text *t, const char *fmt, int a, int b) {
  char line[256];
  snprintf(line, sizeof line, fmt, a, b, b);
  put(t, line);
}

/* One compile, run on the small thread; the outcome copied back. */
typedef struct compile_call {
  const char *src, *filename, *sig;
  nbc_output_t output;
  nbc_status_t status;
  char message[4096];
  char code_head[256];
} compile_call;

static void *compile_thread(void *data) {
  compile_call *c = data;
  nbc_source_t source = {c->src, 0, c->filename ? c->filename : "deep.py", 1, 0};
  nbc_compile_options_t o;
  nbc_compile_options_init(&o);
  o.output = c->output;
  nbc_compile_result_t *r = NULL;
  c->status = nbc_compile(&source, "f", c->sig, &o, NULL, &r);
  snprintf(c->message, sizeof c->message, "%s", c->status == NBC_OK ? "" : nbc_last_error());
  snprintf(c->code_head, sizeof c->code_head, "%s", r ? nbc_compile_result_code(r, NULL) : "");
  nbc_compile_result_destroy(r);
  return NULL;
}

/* Compiles f of src (file name filename, NULL: deep.py) to output on a thread with a 256 KB
 * stack. */
static compile_call *compile_file_small(const char *src, const char *filename,
                                        nbc_output_t output) {
  static compile_call c;
  memset(&c, 0, sizeof c);
  c.src = src;
  c.filename = filename;
  c.sig = "int32(int32)";
  c.output = output;
  pthread_attr_t attr;
  pthread_t thread;
  ASSERT(pthread_attr_init(&attr) == 0);
  ASSERT(pthread_attr_setstacksize(&attr, SMALL_STACK) == 0);
  ASSERT(pthread_create(&thread, &attr, compile_thread, &c) == 0);
  ASSERT(pthread_join(thread, NULL) == 0);
  pthread_attr_destroy(&attr);
  return &c;
}

static compile_call *compile_small(const char *src, nbc_output_t output) {
  return compile_file_small(src, NULL, output);
}

static void accepted(const char *src) {
  compile_call *c = compile_small(src, NBC_OUTPUT_NVVM_IR);
  if (c->status != NBC_OK) TEST_FAIL_("refused: %s", c->message);
  ASSERT_CONTAINS(c->code_head, "target");
}

static void refused(const char *src, nbc_status_t status, const char *why) {
  compile_call *c = compile_small(src, NBC_OUTPUT_NVVM_IR);
  ASSERT_STATUS(c->status, status);
  ASSERT_CONTAINS(c->message, "deep.py:");
  ASSERT_CONTAINS(c->message, why);
}

static const char depth_limit[] = "too many nested expressions or statements (more than 10000)";

/* Expressions as deep as the parser allows: a unary chain, a left-deep binary chain, nested
 * brackets; every tree walk (resolve, desugar, closures, SSA, inference, lowering, the IR
 * writer) recurses along them. */
TEST(deepest_expressions) {
  static const char *const shapes[][2] = {{"- ", ""}, {"", " + a"}, {"(", ")"}, {"a if a else ", ""}};
  static const int depths[] = {9990, 9990, 199, 9990};
  for (int k = 0; k < 4; k++) {
    text t = {0};
    put(&t, "def f(a):\n    return ");
    put_times(&t, shapes[k][0], depths[k]);
    put(&t, "a");
    put_times(&t, shapes[k][1], depths[k]);
    put(&t, "\n");
    accepted(t.data);
    free(t.data);
  }
  text t = {0};
  put(&t, "def f(a):\n    return ");
  put_times(&t, "- ", 100000);
  put(&t, "a\n");
  refused(t.data, NBC_SYNTAX_ERROR, depth_limit);
  free(t.data);
}

/* Blocks nested as deep as indentation allows (a few of them loops: the SSA pass walks nested
 * loops to a fixed point each, in time exponential in their nesting), with an elif chain at
 * the bottom. */
TEST(deepest_blocks) {
  text t = {0};
  put(&t, "def f(a):\n");
  for (int i = 1; i < 99; i++) {
    put_times(&t, "    ", i);
    put(&t, i % 33 == 0 ? "for i in range(a):\n" : i % 33 == 16 ? "while a > 100:\n" : "if a:\n");
  }
  for (int i = 0; i < 300; i++) {
    put_times(&t, "    ", 99);
    putf(&t, i ? "elif a == %d:\n" : "if a == %d:\n", i, 0);
    put_times(&t, "    ", 100);
    putf(&t, "a = a + %d\n", i, 0);
  }
  put(&t, "    return a\n");
  accepted(t.data);
  free(t.data);
}

/* Device functions calling each other 63 deep (the limit is 64), each call at the bottom of
 * an expression 900 deep: inference recurses through both at once. */
TEST(deepest_call_chain) {
  text t = {0};
  for (int i = 0; i < 62; i++) {
    putf(&t, "def g%d(a):\n    return ", i, 0);
    put_times(&t, "- ", 900);
    putf(&t, "g%d(a)\n", i + 1, 0);
  }
  put(&t, "def g62(a):\n    return a\ndef f(a):\n    return g0(a)\n");
  accepted(t.data);
  free(t.data);
  t = (text){0};
  for (int i = 0; i < 10000; i++)
    putf(&t, "def g%d(a):\n    return g%d(a) + 1\n", i, i + 1);
  put(&t, "def g10000(a):\n    return a\ndef f(a):\n    return g0(a)\n");
  refused(t.data, NBC_TYPING_ERROR, "calls nested too deeply");
  free(t.data);
}

/* 63 device functions calling each other, each call at the bottom of an expression 9,990
 * deep (the depth limit is 10,000): inference would recurse through 630,000 levels, more
 * than the compile's stack holds under a sanitizer. The chain is typed until half the stack
 * is used, then refused at the call that passes it; with the stack to spare, accepted. */
TEST(deepest_call_chain_of_deepest_expressions) {
  text t = {0};
  for (int i = 0; i < 62; i++) {
    putf(&t, "def g%d(a):\n    return ", i, 0);
    put_times(&t, "- ", 9990);
    putf(&t, "g%d(a)\n", i + 1, 0);
  }
  put(&t, "def g62(a):\n    return a\ndef f(a):\n    return g0(a)\n");
  compile_call *c = compile_small(t.data, NBC_OUTPUT_NVVM_IR);
  if (c->status != NBC_OK) {
    ASSERT_STATUS(c->status, NBC_TYPING_ERROR);
    ASSERT_CONTAINS(c->message, "calls nested too deeply");
  }
  free(t.data);
}

/* A call graph whose longest path is far longer than the nesting of calls while they are
 * typed: 60 chains of 50 functions, each chain ending in a call of the previous chain's
 * head, typed earlier and reused. Marking what the entry reaches walked that path
 * recursively. */
TEST(long_call_graph_path) {
  enum { CHAINS = 60, LINKS = 50 };
  text t = {0};
  for (int c = 0; c < CHAINS; c++) {
    for (int i = 0; i < LINKS - 1; i++)
      putf(&t, "def h%d_%d(a):\n", c, i), putf(&t, "    return h%d_%d(a) + 1\n", c, i + 1);
    putf(&t, "def h%d_%d(a):\n", c, LINKS - 1);
    if (c)
      putf(&t, "    return h%d_0(a)\n", c - 1, 0);
    else
      put(&t, "    return a\n");
  }
  put(&t, "def f(a):\n    s = 0\n");
  for (int c = 0; c < CHAINS; c++)
    putf(&t, "    s += h%d_0(a)\n", c, 0);
  put(&t, "    return s\n");
  accepted(t.data);
  free(t.data);
}

/* Tuples nested 32 deep are accepted; every walk over a type (printer, comparison, unifier,
 * LLVM type writer, debug-info describer) recurses once per level, and `x1 = (x0,)`,
 * `x2 = (x1,)` ... nested them without bound. */
TEST(deepest_types) {
  text t = {0};
  put(&t, "def f(a):\n    x0 = a\n");
  for (int i = 1; i <= 32; i++)
    putf(&t, "    x%d = (x%d,)\n", i, i - 1);
  put(&t, "    y = x32 == x32\n    return a\n");
  accepted(t.data);
  free(t.data);
  t = (text){0};
  put(&t, "def f(a):\n    x0 = a\n");
  for (int i = 1; i <= 100000; i++)
    putf(&t, "    x%d = (x%d,)\n", i, i - 1);
  put(&t, "    return a\n");
  refused(t.data, NBC_UNSUPPORTED, "types nested more than 32 deep");
  free(t.data);
}

/* `x1 = (x0, x0)`, `x2 = (x1, x1)` ... doubles a tuple's values with each line: 40 lines
 * made a tuple of 2**40 values that lowering expanded (minutes, gigabytes). */
TEST(tuple_values_bounded) {
  text t = {0};
  put(&t, "def f(a):\n    x0 = a\n");
  for (int i = 1; i <= 40; i++)
    putf(&t, "    x%d = (x%d, x%d)\n", i, i - 1);
  put(&t, "    return len(x40)\n");
  refused(t.data, NBC_UNSUPPORTED, "a tuple of more than 4096 values in all");
  free(t.data);
  t = (text){0};
  put(&t, "def f(a):\n    x0 = a\n");
  for (int i = 1; i <= 12; i++)
    putf(&t, "    x%d = (x%d, x%d)\n", i, i - 1);
  put(&t, "    return len(x12)\n");
  accepted(t.data);
  free(t.data);
}

/* Two modules importing a name from each other: Python's circular ImportError. Resolving
 * the name followed the imports round the cycle until the stack overflowed. */
TEST(import_cycle) {
  char dir[] = "/tmp/nbcuda_cycleXXXXXX";
  ASSERT(mkdtemp(dir));
  char path[256];
  snprintf(path, sizeof path, "%s/modb.py", dir);
  FILE *f = fopen(path, "w");
  ASSERT(f);
  fputs("from moda import x\n", f);
  fclose(f);
  snprintf(path, sizeof path, "%s/moda.py", dir);
  static const char src[] = "from modb import x\n\ndef f(a):\n    return x(a)\n";
  f = fopen(path, "w");
  ASSERT(f);
  fputs(src, f);
  fclose(f);
  compile_call *c = compile_file_small(src, path, NBC_OUTPUT_NVVM_IR);
  ASSERT_STATUS(c->status, NBC_TYPING_ERROR);
  ASSERT_CONTAINS(c->message, "moda.py:4:12: error: NameError: name 'x' is not defined");
  remove(path);
  snprintf(path, sizeof path, "%s/modb.py", dir);
  remove(path);
  rmdir(dir);
}

/* libNVVM's optimiser recurses along 100,000 dependent additions: more than 8 MB. */
TEST(long_dependency_chain_ptx) {
  require_nvvm();
  text t = {0};
  put(&t, "def f(a):\n    x = a\n");
  put_times(&t, "    x += a\n", 100000);
  put(&t, "    return x\n");
  compile_call *c = compile_small(t.data, NBC_OUTPUT_PTX);
  if (c->status != NBC_OK) TEST_FAIL_("refused: %s", c->message);
  ASSERT_CONTAINS(c->code_head, ".version");
  free(t.data);
}

/* The error of a compile on the large stack reaches the caller's thread, and a success
 * leaves the caller's last error as it was. */
TEST(error_reaches_the_caller) {
  compile_call *c = compile_small("def f(a):\n    return a +\n", NBC_OUTPUT_NVVM_IR);
  ASSERT_STATUS(c->status, NBC_SYNTAX_ERROR);
  ASSERT_CONTAINS(c->message, "deep.py:2:15: error:");
  nbc_source_t source = {"def f(a):\n    return b\n", 0, "here.py", 1, 0};
  nbc_compile_result_t *r = NULL;
  ASSERT_STATUS(nbc_compile(&source, "f", "int32(int32)", NULL, NULL, &r), NBC_TYPING_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "here.py:2:12: error: NameError: name 'b' is not defined");
  source.text = "def f(a):\n    return a\n";
  nbc_compile_options_t o;
  nbc_compile_options_init(&o);
  o.output = NBC_OUTPUT_NVVM_IR;
  ASSERT_OK(nbc_compile(&source, "f", "int32(int32)", &o, NULL, &r));
  nbc_compile_result_destroy(r);
  ASSERT_CONTAINS(nbc_last_error(), "here.py:2:12: error: NameError");
}

TEST_LIST(X(deepest_expressions) X(deepest_blocks) X(deepest_call_chain) X(deepest_call_chain_of_deepest_expressions) X(long_call_graph_path)
              X(deepest_types) X(tuple_values_bounded) X(import_cycle)
                  X(long_dependency_chain_ptx) X(error_reaches_the_caller))
TEST_MAIN()
