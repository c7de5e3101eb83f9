/* test_resolve.c — the module loader and the default resolver (src/compiler/resolve.c):
 * constants evaluated with Python's semantics, every import form of math/cuda/numba/nbcuda,
 * functions (also behind cuda.jit and in module-level if/try blocks), which binding wins,
 * and the names left to infer.c (builtins, unknown names).
 */
#include <math.h>

#include "front_util.h"
#include "test.h"

static nbc_global_t resolve(nbc__module *m, const char *name) {
  nbc_global_t g;
  memset(&g, 0xAB, sizeof g);
  int rc = nbc__module_resolve(m, name, &g);
  if (rc != 0) ASSERT_EQ(g.kind, NBC_GLOBAL_UNDEFINED);
  return g;
}

#define ASSERT_INT(m, name, v)                                                                 \
  do {                                                                                         \
    nbc_global_t g_ = resolve(m, name);                                                        \
    ASSERT_EQ(g_.kind, NBC_GLOBAL_INT);                                                        \
    ASSERT_EQ(g_.value.i, v);                                                                  \
  } while (0)

#define ASSERT_FLOAT(m, name, v)                                                               \
  do {                                                                                         \
    nbc_global_t g_ = resolve(m, name);                                                        \
    ASSERT_EQ(g_.kind, NBC_GLOBAL_FLOAT);                                                      \
    if (!(g_.value.f == (v)))                                                                  \
      TEST_FAIL_("%s = %.17g, expected %.17g", name, g_.value.f, (double)(v));                 \
  } while (0)

#define ASSERT_KIND(m, name, k) ASSERT_EQ(resolve(m, name).kind, k)

TEST(constants_follow_python_semantics) {
  nbc__module *m = fe_load("TPB = 16\n"
                           "N = 1 << 20\n"
                           "HALF = TPB // 2\n"
                           "NEG_DIV = -7 // 2\n"
                           "NEG_MOD = -7 % 3\n"
                           "MOD_NEG = 7 % -3\n"
                           "TRUE_DIV = 7 / 2\n"
                           "POW = 2 ** 10\n"
                           "NEG_POW = 2 ** -1\n"
                           "F = 1.5e3 * 2\n"
                           "FMOD = -7.5 % 2\n"
                           "FFLOOR = -7.5 // 2\n"
                           "MIXED = TPB * 0.5 + 1\n"
                           "B = True\n"
                           "NB = not B\n"
                           "BI = True + 1\n"
                           "CMP = 0 < TPB <= 16\n"
                           "TERN = 1 if TPB > 8 else 2\n"
                           "OR = 0 or 5\n"
                           "BITS = (0xF0 | 0x0F) & ~1 ^ 2\n"
                           "RSH = -9 >> 1\n"
                           "CALLS = max(1, 2.5, 2), min(3, 1), int(-3.7), float(2), abs(-4)\n"
                           "MX = max(1, 2.5, 2)\n"
                           "MN = min(3, 1)\n"
                           "IT = int(-3.7)\n"
                           "FL = float(2)\n"
                           "AB = abs(-4)\n"
                           "A, C = 3, 4.0\n"
                           "X = Y = 7\n"
                           "Z = 1\n"
                           "Z += 2\n"
                           "ANN: int = 9\n"
                           "PARENS = (TPB + 1) * (2)\n"
                           "NOTHING = None\n");
  ASSERT(m);
  ASSERT_INT(m, "TPB", 16);
  ASSERT_INT(m, "N", 1 << 20);
  ASSERT_INT(m, "HALF", 8);
  ASSERT_INT(m, "NEG_DIV", -4);
  ASSERT_INT(m, "NEG_MOD", 2);
  ASSERT_INT(m, "MOD_NEG", -2);
  ASSERT_FLOAT(m, "TRUE_DIV", 3.5);
  ASSERT_INT(m, "POW", 1024);
  ASSERT_FLOAT(m, "NEG_POW", 0.5);
  ASSERT_FLOAT(m, "F", 3000.0);
  ASSERT_FLOAT(m, "FMOD", 0.5);
  ASSERT_FLOAT(m, "FFLOOR", -4.0);
  ASSERT_FLOAT(m, "MIXED", 9.0);
  ASSERT_KIND(m, "B", NBC_GLOBAL_BOOL);
  ASSERT_EQ(resolve(m, "B").value.i, 1);
  ASSERT_KIND(m, "NB", NBC_GLOBAL_BOOL);
  ASSERT_EQ(resolve(m, "NB").value.i, 0);
  ASSERT_INT(m, "BI", 2);
  ASSERT_KIND(m, "CMP", NBC_GLOBAL_BOOL);
  ASSERT_EQ(resolve(m, "CMP").value.i, 1);
  ASSERT_INT(m, "TERN", 1);
  ASSERT_INT(m, "OR", 5);
  ASSERT_INT(m, "BITS", (0xF0 | 0x0F) & (~1 ^ 2));
  ASSERT_INT(m, "RSH", -5);
  ASSERT_KIND(m, "NOTHING", NBC_GLOBAL_NONE); /* None, a constant as numba freezes it */
  /* a tuple of constants: numba freezes it (max(1, 2.5, 2) is 2.5, int(-3.7) is -3) */
  nbc_global_t calls = resolve(m, "CALLS");
  ASSERT_EQ(calls.kind, NBC_GLOBAL_TUPLE);
  ASSERT_EQ(calls.tuple_count, 5);
  ASSERT(calls.tuple_items[0].kind == NBC_GLOBAL_FLOAT && calls.tuple_items[0].value.f == 2.5);
  ASSERT(calls.tuple_items[2].kind == NBC_GLOBAL_INT && calls.tuple_items[2].value.i == -3);
  ASSERT(calls.tuple_items[3].kind == NBC_GLOBAL_FLOAT && calls.tuple_items[3].value.f == 2.0);
  ASSERT_FLOAT(m, "MX", 2.5);
  ASSERT_INT(m, "MN", 1);
  ASSERT_INT(m, "IT", -3);
  ASSERT_FLOAT(m, "FL", 2.0);
  ASSERT_INT(m, "AB", 4);
  ASSERT_INT(m, "A", 3);
  ASSERT_FLOAT(m, "C", 4.0);
  ASSERT_INT(m, "X", 7);
  ASSERT_INT(m, "Y", 7);
  ASSERT_INT(m, "Z", 3);
  ASSERT_INT(m, "ANN", 9);
  ASSERT_INT(m, "PARENS", 34);
}

TEST(non_constants_are_other) { /* and TUP_T, a tuple of tuples, is a constant */
  nbc__module *m = fe_load("import numpy as np\n"
                           "ARR = np.zeros(4)\n"
                           "S = 'text'\n"
                           "L = [1, 2]\n"
                           "CPLX = 1j\n"
                           "BIG = 2 ** 63\n"
                           "HUGE = 18446744073709551615\n"
                           "DIV0 = 1 // 0\n"
                           "SHIFT = 1 << -1\n"
                           "UNKNOWN = some_function()\n"
                           "REF = UNDEFINED_NAME + 1\n"
                           "TUP_S = (1, 'a')\n"
                           "TUP_T = ((1, 2), 3)\n"
                           "for LOOPVAR in range(3):\n"
                           "    pass\n"
                           "class Klass:\n"
                           "    pass\n");
  ASSERT(m);
  const char *names[] = {"ARR",     "S",   "L",       "CPLX",  "BIG",  "HUGE", "DIV0",
                         "SHIFT",   "UNKNOWN", "REF", "LOOPVAR", "Klass", "TUP_S"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (resolve(m, names[i]).kind != NBC_GLOBAL_OTHER)
      TEST_FAIL_("%s is not NBC_GLOBAL_OTHER", names[i]);
  /* a tuple of tuples of constants is one too */
  nbc_global_t nested = resolve(m, "TUP_T");
  ASSERT(nested.kind == NBC_GLOBAL_TUPLE && nested.tuple_count == 2);
  ASSERT(nested.tuple_items[0].kind == NBC_GLOBAL_TUPLE && nested.tuple_items[0].tuple_count == 2);
  /* numpy itself is a module kernels use (test_numpy.c); np.zeros(4) is not. */
  ASSERT_EQ(resolve(m, "np").kind, NBC_GLOBAL_MODULE_NUMPY);
}

TEST(imports) {
  nbc__module *m = fe_load("import math\n"
                           "import math as m\n"
                           "from math import sqrt, pi, sin as s\n"
                           "import nbcuda as cuda1\n"
                           "import nbcuda\n"
                           "import numba.cuda as cuda2\n"
                           "from numba import cuda as cuda3\n"
                           "from nbcuda import cuda as cuda4\n"
                           "import numba\n"
                           "import numba.cuda\n"
                           "from numba import float32, int32 as i32, njit\n"
                           "from numba.cuda import types as ctypes_\n"
                           "from nbcuda import float64\n"
                           "from numba.types import uint8\n"
                           "from numba.core.types import f4\n"
                           "from os import path\n"
                           "from numba import carray\n"
                           "from numba.cuda.np.numpy_support import farray as fa\n"
                           "from math import *\n");
  ASSERT(m);
  ASSERT_KIND(m, "math", NBC_GLOBAL_MODULE_MATH);
  ASSERT_KIND(m, "m", NBC_GLOBAL_MODULE_MATH);
  nbc_global_t g = resolve(m, "sqrt");
  ASSERT_EQ(g.kind, NBC_GLOBAL_MATH_FUNCTION);
  ASSERT_STREQ(g.name, "sqrt");
  g = resolve(m, "s");
  ASSERT_EQ(g.kind, NBC_GLOBAL_MATH_FUNCTION);
  ASSERT_STREQ(g.name, "sin");
  ASSERT_FLOAT(m, "pi", M_PI);
  ASSERT_KIND(m, "cuda1", NBC_GLOBAL_MODULE_CUDA);
  ASSERT_KIND(m, "nbcuda", NBC_GLOBAL_MODULE_CUDA);
  ASSERT_KIND(m, "cuda2", NBC_GLOBAL_MODULE_CUDA);
  ASSERT_KIND(m, "cuda3", NBC_GLOBAL_MODULE_CUDA);
  ASSERT_KIND(m, "cuda4", NBC_GLOBAL_MODULE_CUDA);
  ASSERT_KIND(m, "numba", NBC_GLOBAL_MODULE_NUMBA); /* numba.float32, numba.cuda */
  ASSERT_KIND(m, "ctypes_", NBC_GLOBAL_MODULE_NUMBA); /* numba-cuda's numba.cuda.types */
  g = resolve(m, "float32");
  ASSERT_EQ(g.kind, NBC_GLOBAL_TYPE);
  ASSERT_STREQ(g.name, "float32");
  g = resolve(m, "i32");
  ASSERT_EQ(g.kind, NBC_GLOBAL_TYPE);
  ASSERT_STREQ(g.name, "int32");
  ASSERT_KIND(m, "int32", NBC_GLOBAL_UNDEFINED); /* bound as i32 only */
  ASSERT_KIND(m, "njit", NBC_GLOBAL_OTHER);
  ASSERT_STREQ(resolve(m, "float64").name, "float64");
  ASSERT_STREQ(resolve(m, "uint8").name, "uint8");
  ASSERT_STREQ(resolve(m, "f4").name, "f4");
  ASSERT_KIND(m, "path", NBC_GLOBAL_OTHER);
  g = resolve(m, "carray"); /* numba's carray / farray: kernel-language names */
  ASSERT_EQ(g.kind, NBC_GLOBAL_CUDA_NAME);
  ASSERT_STREQ(g.name, "carray");
  g = resolve(m, "fa");
  ASSERT_EQ(g.kind, NBC_GLOBAL_CUDA_NAME);
  ASSERT_STREQ(g.name, "farray");
  ASSERT_KIND(m, "cos", NBC_GLOBAL_UNDEFINED); /* `import *` binds nothing we can know */
}

TEST(first_binding_wins_in_try_and_if_blocks) {
  nbc__module *m = fe_load("N = 1\n"
                           "N = 2\n"
                           "try:\n"
                           "    import nbcuda as cuda\n"
                           "    from nbcuda import float32\n"
                           "except ImportError:\n"
                           "    from numba import cuda, float32\n"
                           "    import math as cuda\n"
                           "if DEBUG:\n"
                           "    N = 3\n"
                           "    M = 4\n"
                           "else:\n"
                           "    M = 5\n"
                           "if __name__ == '__main__':\n"
                           "    TPB = 1024\n"
                           "TPB = 32\n");
  ASSERT(m);
  ASSERT_INT(m, "N", 2);    /* sequential: the last; conditional later: ignored */
  ASSERT_INT(m, "M", 4);    /* conditional: the first */
  ASSERT_INT(m, "TPB", 32); /* unconditional after conditional: replaces it */
  ASSERT_KIND(m, "cuda", NBC_GLOBAL_MODULE_CUDA);
  ASSERT_KIND(m, "float32", NBC_GLOBAL_TYPE);
}

TEST(functions_of_the_module) {
  const char *src = "from numba import cuda\n"
                    "def helper(x):\n"
                    "    return x\n"
                    "helper = cuda.jit(device=True)(helper)\n"
                    "@cuda.jit\n"
                    "def kernel(a):\n"
                    "    a[0] = helper(1)\n"
                    "wrapped = cuda.jit(kernel)\n"
                    "alias = helper\n"
                    "try:\n"
                    "    def in_try(): pass\n"
                    "except Exception:\n"
                    "    def in_try(): return 1\n"
                    "if True:\n"
                    "    def in_if(): pass\n"
                    "class K:\n"
                    "    def method(self): pass\n"
                    "def later(): pass\n"
                    "later = 5\n";
  nbc__ctx *ctx = fe_new_ctx();
  nbc__file *f = fe_file(ctx, "mod.py", src);
  f->first_line = 3;
  nbc__module *m = nbc__module_load(ctx, f);
  ASSERT(m);
  nbc_global_t g = resolve(m, "helper");
  ASSERT_EQ(g.kind, NBC_GLOBAL_FUNCTION);
  ASSERT_STREQ(g.name, "helper");
  ASSERT_STREQ(g.filename, "mod.py");
  ASSERT_EQ(g.first_line, 3);
  ASSERT(g.source == f->text);
  ASSERT(g.resolver == NULL);
  ASSERT_STREQ(resolve(m, "wrapped").name, "kernel");
  ASSERT_STREQ(resolve(m, "alias").name, "helper");
  ASSERT_KIND(m, "kernel", NBC_GLOBAL_FUNCTION);
  ASSERT_KIND(m, "later", NBC_GLOBAL_INT);
  ASSERT_KIND(m, "method", NBC_GLOBAL_UNDEFINED);
  ASSERT_KIND(m, "K", NBC_GLOBAL_OTHER);

  nbc__node *def = nbc__module_function(m, "helper");
  ASSERT(def && def->kind == NBC__N_FUNCDEF && strcmp(def->str, "helper") == 0);
  ASSERT_EQ(def->tok->line, 2);
  def = nbc__module_function(m, "in_try");
  ASSERT(def);
  ASSERT_EQ(def->body.items[0]->kind, NBC__N_PASS); /* the first definition */
  ASSERT(nbc__module_function(m, "in_if"));
  ASSERT(nbc__module_function(m, "later")); /* rebound, but still the def's source */
  ASSERT(!nbc__module_function(m, "method"));
  ASSERT(!nbc__module_function(m, "nothing"));
  ASSERT(!nbc__module_function(m, NULL)); /* several functions: a name is needed */

  nbc__module *one = fe_load("import math\ndef only(x):\n    return x\n");
  ASSERT(one);
  def = nbc__module_function(one, NULL);
  ASSERT(def && strcmp(def->str, "only") == 0);
  ASSERT(nbc__module_function(one, "") == def);
}

/* jit(device=True, forceinline=True) as a decorator or applied to the function marks it
 * forceinline, as the Python module marks such a device function (numba's spellings:
 * cuda.jit or jit, forceinline=True, inline="always", the deprecated inline=True). */
TEST(jit_forceinline_marks_the_function) {
  nbc__module *m = fe_load("from numba import cuda, jit\n"
                           "INLINE = True\n"
                           "@cuda.jit(device=True, forceinline=True)\n"
                           "def fi(x): return x\n"
                           "@jit(device=True, forceinline=True)\n"
                           "def bare_jit(x): return x\n"
                           "@cuda.jit('float32(float32)', device=True, forceinline=INLINE)\n"
                           "def constant(x): return x\n"
                           "@cuda.jit(device=True, inline='always')\n"
                           "def always(x): return x\n"
                           "@cuda.jit(device=True, inline=True)\n"
                           "def inline_true(x): return x\n"
                           "def wrapped(x): return x\n"
                           "wrapped = cuda.jit(device=True, forceinline=True)(wrapped)\n"
                           "alias = fi\n"
                           "@cuda.jit(device=True)\n"
                           "def plain(x): return x\n"
                           "@cuda.jit\n"
                           "def no_call(x): return x\n"
                           "@cuda.jit(device=True, forceinline=False)\n"
                           "def off(x): return x\n"
                           "@cuda.jit(device=True, inline='never')\n"
                           "def never(x): return x\n"
                           "@other(forceinline=True)\n"
                           "def not_jit(x): return x\n"
                           "def undecorated(x): return x\n"
                           "applied = cuda.jit(device=True)(undecorated)\n");
  ASSERT(m);
  static const char *const marked[] = {"fi",          "bare_jit", "constant", "always",
                                       "inline_true", "wrapped",  "alias"};
  static const char *const unmarked[] = {"plain",   "no_call",     "off",    "never",
                                         "not_jit", "undecorated", "applied"};
  for (size_t i = 0; i < sizeof marked / sizeof marked[0]; i++) {
    nbc_global_t g = resolve(m, marked[i]);
    if (g.kind != NBC_GLOBAL_FUNCTION || g.forceinline != 1)
      TEST_FAIL_("%s: kind %d, forceinline %d; expected a forceinline function", marked[i],
                 (int)g.kind, g.forceinline);
  }
  for (size_t i = 0; i < sizeof unmarked / sizeof unmarked[0]; i++) {
    nbc_global_t g = resolve(m, unmarked[i]);
    if (g.kind != NBC_GLOBAL_FUNCTION || g.forceinline != 0)
      TEST_FAIL_("%s: kind %d, forceinline %d; expected a plain function", unmarked[i],
                 (int)g.kind, g.forceinline);
  }
}

TEST(builtins_and_unknown_names_are_left_to_infer) {
  nbc__module *m = fe_load("x = 1\n");
  ASSERT(m);
  const char *names[] = {"range", "len",  "abs",   "min",  "max",      "int",
                         "float", "bool", "round", "cuda", "undefined"};
  nbc_global_t g;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    ASSERT(nbc__module_resolve(m, names[i], &g) != 0);
    ASSERT_EQ(g.kind, NBC_GLOBAL_UNDEFINED);
  }
  /* A module that rebinds a builtin resolves it. */
  m = fe_load("range = 3\n");
  ASSERT(m);
  ASSERT_INT(m, "range", 3);
}

TEST(resolver_through_the_public_type) {
  nbc__module *m = fe_load("K = 3\n");
  ASSERT(m);
  nbc_resolver_t r = {nbc__module_resolve, m};
  nbc_global_t g;
  ASSERT_EQ(r.resolve(r.data, "K", &g), 0);
  ASSERT_EQ(g.kind, NBC_GLOBAL_INT);
  ASSERT_EQ(g.value.i, 3);
}

TEST(many_names) {
  /* The table grows; every name is still found. */
  nbc__ctx *ctx = fe_new_ctx();
  nbc__buf b;
  nbc__buf_init(&b, ctx->arena);
  for (int i = 0; i < 5000; i++)
    nbc__buf_printf(&b, "N%d = %d\n", i, i * 3);
  nbc__module *m = fe_load(b.data);
  ASSERT(m);
  char name[16];
  for (int i = 0; i < 5000; i += 7) {
    snprintf(name, sizeof name, "N%d", i);
    ASSERT_INT(m, name, i * 3);
  }
}

/* The syntax error nbc__module_report_unparsed gives for name (NULL: the first statement
 * that does not parse), or NULL when it gives none. */
static const char *unparsed_error(nbc__module *m, const char *name) {
  nbc__ctx *ctx = fe_new_ctx();
  return nbc__module_report_unparsed(ctx, m, name, false) ? ctx->diag.data : NULL;
}

TEST(lenient_load_leaves_out_statements_that_do_not_parse) {
  const char *src = "import math\n"
                    "type Alias = list[int]\n"          /* PEP 695: the parser's error */
                    "X = 1\n"
                    "X = (1 if)\n"                      /* rebinds X to its error */
                    "Y = 2\n"
                    "@deco(1)\n@other\n"
                    "def generic[T](x):\n    return x\n"
                    "if math.pi > 3:\n    Q = 1 +\nelse:\n    Q = 2\n" /* binds nothing */
                    "a, b = c d\n"
                    "Z: int = 3 3\n"
                    "Y += +\n"
                    "def later(a):\n    return a + Y\n"
                    "W = 4\n";
  nbc__ctx *ctx = fe_new_ctx();
  ASSERT(!nbc__module_load(ctx, fe_file(ctx, "t.py", src))); /* strict: fails */
  ctx = fe_new_ctx();
  nbc__module *m = nbc__module_load_lenient(ctx, fe_file(ctx, "t.py", src));
  ASSERT(m);
  ASSERT_EQ(ctx->status, NBC_OK);
  ASSERT_KIND(m, "math", NBC_GLOBAL_MODULE_MATH);
  ASSERT_INT(m, "W", 4);
  ASSERT_KIND(m, "later", NBC_GLOBAL_FUNCTION);
  ASSERT(nbc__module_function(m, "later"));
  ASSERT(!nbc__module_function(m, "generic"));
  ASSERT(!unparsed_error(m, "later") && !unparsed_error(m, "W") && !unparsed_error(m, "Q"));
  ASSERT_STREQ(unparsed_error(m, "Alias"),
               "t.py:2:6: error: expected NEWLINE after the statement, found 'Alias'\n"
               "type Alias = list[int]\n"
               "     ^");
  ASSERT_STREQ(unparsed_error(m, NULL), unparsed_error(m, "Alias"));
  ASSERT_CONTAINS(unparsed_error(m, "X"), "t.py:4:");
  ASSERT_CONTAINS(unparsed_error(m, "generic"), "t.py:8:12: error: ");
  ASSERT_CONTAINS(unparsed_error(m, "a"), "t.py:14:");
  ASSERT_CONTAINS(unparsed_error(m, "b"), "t.py:14:");
  ASSERT_CONTAINS(unparsed_error(m, "Z"), "t.py:15:");
  ASSERT_CONTAINS(unparsed_error(m, "Y"), "t.py:16:");
  ASSERT_KIND(m, "Q", NBC_GLOBAL_UNDEFINED);
  /* the reported error keeps its status; "During:" only when reached */
  ctx = fe_new_ctx();
  ASSERT(nbc__module_report_unparsed(ctx, m, "Alias", true));
  ASSERT_EQ(ctx->status, NBC_SYNTAX_ERROR);
  ASSERT_CONTAINS(ctx->diag.data, "During: resolving 'Alias', which this statement defines");
  /* a file that parses has none */
  ASSERT(!unparsed_error(fe_load("X = 1\n"), NULL));
}

TEST_LIST(X(constants_follow_python_semantics) X(non_constants_are_other) X(imports)
              X(first_binding_wins_in_try_and_if_blocks) X(functions_of_the_module)
                  X(jit_forceinline_marks_the_function)
                      X(builtins_and_unknown_names_are_left_to_infer)
                          X(resolver_through_the_public_type) X(many_names)
                              X(lenient_load_leaves_out_statements_that_do_not_parse))
TEST_MAIN()
