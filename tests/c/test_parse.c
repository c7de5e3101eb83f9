/* test_parse.c — the parser (src/compiler/parse.c) and the AST helpers (ast.c): the dump of
 * every statement form, operator precedence and associativity, the syntax kept as OTHER_*
 * so whole files load, deep copies, out-of-memory paths, and the public corpus: every file
 * of tests/corpus loads and every function its CASES table names is found.
 */
#include <pthread.h>
#include <time.h>

#include "front_util.h"
#include "test.h"

#define CORPUS NBCUDA_SOURCE_DIR "/tests/corpus/"

TEST(precedence_arithmetic) {
  ASSERT_STREQ(fe_stmt("a + b * c - d\n"), "(expr (- (+ a (* b c)) d))");
  ASSERT_STREQ(fe_stmt("a - b - c\n"), "(expr (- (- a b) c))");
  ASSERT_STREQ(fe_stmt("a ** b ** c\n"), "(expr (** a (** b c)))");
  ASSERT_STREQ(fe_stmt("-x ** 2\n"), "(expr (- (** x 2)))");
  ASSERT_STREQ(fe_stmt("2 ** -x\n"), "(expr (** 2 (- x)))");
  ASSERT_STREQ(fe_stmt("a // b % c * d / e @ f\n"), "(expr (@ (/ (* (% (// a b) c) d) e) f))");
  ASSERT_STREQ(fe_stmt("~a + +b - -c\n"), "(expr (- (+ (~ a) (+ b)) (- c)))");
}

TEST(precedence_bitwise_and_shifts) {
  ASSERT_STREQ(fe_stmt("a | b ^ c & d << e + f\n"), "(expr (| a (^ b (& c (<< d (+ e f))))))");
  ASSERT_STREQ(fe_stmt("a >> 1 << 2\n"), "(expr (<< (>> a 1) 2))");
  ASSERT_STREQ(fe_stmt("(a & b) ^ (a | (b << 3)) ^ (~a >> 2)\n"),
               "(expr (^ (^ (& a b) (| a (<< b 3))) (>> (~ a) 2)))");
}

TEST(precedence_boolean_and_comparisons) {
  ASSERT_STREQ(fe_stmt("not a == b and c or d\n"),
               "(expr (or (and (not (compare a == b)) c) d))");
  ASSERT_STREQ(fe_stmt("a or b or c\n"), "(expr (or (or a b) c))");
  ASSERT_STREQ(fe_stmt("0 <= b < n != m\n"), "(expr (compare 0 <= b < n != m))");
  ASSERT_STREQ(fe_stmt("a in b\n"), "(expr (compare a in b))");
  ASSERT_STREQ(fe_stmt("a not in b is not c is d\n"),
               "(expr (compare a not in b is not c is d))");
  ASSERT_STREQ(fe_stmt("a < b | c\n"), "(expr (compare a < (| b c)))");
  ASSERT_STREQ(fe_stmt("not not a\n"), "(expr (not (not a)))");
}

TEST(conditional_expressions) {
  ASSERT_STREQ(fe_stmt("x = a if b else c\n"), "(= x (ifexp b a c))");
  ASSERT_STREQ(fe_stmt("x = a if b else c if d else e\n"), "(= x (ifexp b a (ifexp d c e)))");
  ASSERT_STREQ(fe_stmt("x = a or b if c and d else e\n"), "(= x (ifexp (and c d) (or a b) e))");
}

TEST(atoms_and_literals) {
  ASSERT_STREQ(fe_stmt("x = (1, 2.5, 1e-3, 2j, True, False, None, 'a' \"b\", -1)\n"),
               "(= x (tuple 1 2.5 0.001 2.0j True False None \"ab\" (- 1)))");
  ASSERT_STREQ(fe_stmt("x = ()\n"), "(= x (tuple))");
  ASSERT_STREQ(fe_stmt("x = (1,)\n"), "(= x (tuple 1))");
  ASSERT_STREQ(fe_stmt("x = (1)\n"), "(= x 1)");
  ASSERT_STREQ(fe_stmt("x = 1,\n"), "(= x (tuple 1))");
  ASSERT_STREQ(fe_stmt("x = [1, [2], []]\n"), "(= x (list 1 (list 2) (list)))");
  ASSERT_STREQ(fe_stmt("x = {'a': 1, 2: [3]}\n"), "(= x (dict \"a\" 1 2 (list 3)))");
  ASSERT_STREQ(fe_stmt("x = {}\n"), "(= x (dict))");
  ASSERT_STREQ(fe_stmt("x = 0xFFFFFFFFFFFFFFFF\n"), "(= x 18446744073709551615)");
  ASSERT_STREQ(fe_stmt("x = [0.0] * 4\n"), "(= x (* (list 0.0) 4))");
}

TEST(primaries) {
  ASSERT_STREQ(fe_stmt("a.b.c(d)[e]\n"), "(expr ([] (call (. (. a b) c) d) e))");
  ASSERT_STREQ(
      fe_stmt("cuda.shared.array(shape=(16, 16), dtype=float32)\n"),
      "(expr (call (. (. cuda shared) array) (kw shape (tuple 16 16)) (kw dtype float32)))");
  ASSERT_STREQ(fe_stmt("f(a, b,)\n"), "(expr (call f a b))");
  ASSERT_STREQ(fe_stmt("f()()\n"), "(expr (call (call f)))");
  ASSERT_STREQ(fe_stmt("f(a, *b, k=1, **d)\n"),
               "(expr (call f a (other '*') (kw k 1) (other '**')))");
}

TEST(subscripts_and_slices) {
  ASSERT_STREQ(fe_stmt("a[i, j]\n"), "(expr ([] a (tuple i j)))");
  ASSERT_STREQ(fe_stmt("a[1:2]\n"), "(expr ([] a (: 1 2 _)))");
  ASSERT_STREQ(fe_stmt("a[:, ::1]\n"), "(expr ([] a (tuple (: _ _ _) (: _ _ 1))))");
  ASSERT_STREQ(fe_stmt("a[::-1, i:]\n"), "(expr ([] a (tuple (: _ _ (- 1)) (: i _ _))))");
  ASSERT_STREQ(fe_stmt("a[-1 - i]\n"), "(expr ([] a (- (- 1) i)))");
  ASSERT_STREQ(fe_stmt("a[i,]\n"), "(expr ([] a (tuple i)))");
}

TEST(assignments) {
  ASSERT_STREQ(fe_stmt("a = b = 1\n"), "(= a b 1)");
  ASSERT_STREQ(fe_stmt("i, j = cuda.grid(2)\n"), "(= (tuple i j) (call (. cuda grid) 2))");
  ASSERT_STREQ(fe_stmt("(i, j) = [k, l] = t\n"), "(= (tuple i j) (list k l) t)");
  ASSERT_STREQ(fe_stmt("a[i], b.c = 1, 2\n"), "(= (tuple ([] a i) (. b c)) (tuple 1 2))");
  ASSERT_STREQ(fe_stmt("x: int = 1\n"), "(= x 1)");
  ASSERT_STREQ(fe_stmt("x: int\n"), "(pass)");
  const char *ops[] = {"+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^", "@"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    char src[64], want[64];
    snprintf(src, sizeof src, "x[i] %s= y\n", ops[i]);
    snprintf(want, sizeof want, "(%s= ([] x i) y)", ops[i]);
    ASSERT_STREQ(fe_stmt(src), want);
  }
}

TEST(compound_statements) {
  const char *src = "def f(a, b: float, /, c) -> float:\n"
                    "    s = 0\n"
                    "    for i in range(a, b, -1):\n"
                    "        if i % 2 == 0:\n"
                    "            continue\n"
                    "        elif i > 10:\n"
                    "            break\n"
                    "        else:\n"
                    "            s += i\n"
                    "    else:\n"
                    "        pass\n"
                    "    while s > 0: s -= 1\n"
                    "    x = 1; y = 2;\n"
                    "    return\n";
  ASSERT_STREQ(fe_ast(src), "(module\n"
                            "  (def f (params a b c)\n"
                            "    (= s 0)\n"
                            "    (for i (call range a b (- 1))\n"
                            "      (if (compare (% i 2) == 0)\n"
                            "        (continue)\n"
                            "        (else\n"
                            "          (if (compare i > 10)\n"
                            "            (break)\n"
                            "            (else\n"
                            "              (+= s i)))))\n"
                            "      (else\n"
                            "        (pass)))\n"
                            "    (while (compare s > 0)\n"
                            "      (-= s 1))\n"
                            "    (= x 1)\n"
                            "    (= y 2)\n"
                            "    (return)))");
}

TEST(decorators_and_nested_defs) {
  const char *src = "@cuda.jit(device=True)\n"
                    "@other\n"
                    "def g(v):\n"
                    "    return v\n";
  ASSERT_STREQ(fe_ast(src),
               "(module\n"
               "  (def g (params v) (decorators (call (. cuda jit) (kw device True)) "
               "other)\n"
               "    (return v)))");
}

TEST(imports_and_module_level_host_code) {
  const char *src = "import math, numba.cuda as cu\n"
                    "from numba import (cuda, float32 as f4,)\n"
                    "from . import x\n"
                    "from ..pkg.mod import *\n"
                    "try:\n"
                    "    import nbcuda as cuda\n"
                    "except (ImportError, OSError) as e:\n"
                    "    from numba import cuda\n"
                    "else:\n"
                    "    y = 1\n"
                    "finally:\n"
                    "    z = 2\n"
                    "global q\n"
                    "del q\n"
                    "assert x, 'message'\n"
                    "with open('f') as fh, ctx():\n"
                    "    data = fh.read()\n"
                    "class K(Base, metaclass=M):\n"
                    "    def method(self, a=1, *args, **kw):\n"
                    "        with x: pass\n"
                    "raise SystemExit(0)\n"
                    "async def coro(): pass\n"
                    "f = lambda a, b=2: a + b\n"
                    "s = {1, 2}\n"
                    "c = [i * i for i in range(3) if i]\n"
                    "d = {k: v for k, v in items}\n"
                    "g = f'{x}'\n";
  ASSERT_STREQ(fe_ast(src), "(module\n"
                            "  (import math (numba.cuda as cu))\n"
                            "  (from numba import cuda (float32 as f4))\n"
                            "  (from . import x)\n"
                            "  (from ..pkg.mod import *)\n"
                            "  (try\n"
                            "    (import (nbcuda as cuda))\n"
                            "    (handlers\n"
                            "      (from numba import cuda)\n"
                            "      (= y 1)\n"
                            "      (= z 2)))\n"
                            "  (other 'global')\n"
                            "  (other 'del')\n"
                            "  (assert x \"message\")\n"
                            "  (other 'with'\n"
                            "    (= data (call (. fh read))))\n"
                            "  (other 'class' K\n"
                            "    (def method (params self (= a 1) *args)\n"
                            "      (other 'with'\n"
                            "        (pass))))\n"
                            "  (raise (call SystemExit 0))\n"
                            "  (other 'def' coro\n"
                            "    (pass))\n"
                            "  (= f (lambda (params a (= b 2)) (+ a b)))\n"
                            "  (= s (other '{'))\n"
                            "  (= c (other '['))\n"
                            "  (= d (other '{'))\n"
                            "  (= g (other 'f'{x}'')))");
}

TEST(host_code_in_function_bodies_is_kept) {
  /* Host functions parse whole: their statements become OTHER nodes (or IMPORT/TRY) that
   * infer.c refuses only if a compiled function reaches them. */
  const char *src = "def main(n=10, *args, k=1, **kw):\n"
                    "    global g\n"
                    "    import os\n"
                    "    from a import b\n"
                    "    with ctx() as c:\n"
                    "        return c\n"
                    "    try:\n"
                    "        pass\n"
                    "    except E as e:\n"
                    "        raise\n"
                    "    class K:\n"
                    "        def m(self, x=1): pass\n"
                    "    yield n\n"
                    "    async def co(): pass\n"
                    "    x = 123456789012345678901234567890\n";
  ASSERT_STREQ(fe_ast(src), "(module\n"
                            "  (def main (params (= n 10) *args (= k 1))\n"
                            "    (other 'global')\n"
                            "    (import os)\n"
                            "    (from a import b)\n"
                            "    (other 'with'\n"
                            "      (return c))\n"
                            "    (try\n"
                            "      (pass)\n"
                            "      (handlers\n"
                            "        (raise)))\n"
                            "    (other 'class' K\n"
                            "      (def m (params self (= x 1))\n"
                            "        (pass)))\n"
                            "    (other 'yield')\n"
                            "    (other 'async' co\n"
                            "      (pass))\n"
                            "    (= x (other '123456789012345678901234567890'))))");
  /* The first parameter a function cannot have is noted on the FUNCDEF (c), with its
   * message, and the first default (b: a kernel has none), its value on the parameter. */
  nbc__module *m = fe_load(src);
  ASSERT(m);
  nbc__node *def = m->ast->body.items[0];
  ASSERT(def->c && def->c->kind == NBC__N_OTHER_EXPR);
  ASSERT_STREQ(def->c->str, "keyword-only parameters are not supported in CUDA kernels");
  ASSERT_EQ(def->c->tok->col, 23); /* k, after *args */
  /* *args is a parameter of its own, at its '*' (device functions gather extra arguments) */
  ASSERT_EQ(def->params.count, 3);
  ASSERT(def->params.items[1]->vararg && !def->params.items[0]->vararg);
  ASSERT_STREQ(def->params.items[1]->str, "args");
  ASSERT_EQ(def->params.items[1]->tok->col, 16);
  ASSERT(def->b && def->b->kind == NBC__N_OTHER_EXPR);
  ASSERT_STREQ(def->b->str, "default argument values are not supported in CUDA kernels");
  ASSERT_EQ(def->b->tok->line, 1);
  ASSERT_EQ(def->b->tok->col, 11);
  ASSERT(def->params.items[0]->a && def->params.items[0]->a->value.i == 10);
  m = fe_load("def f(a, *, b): pass\ndef g(a, b): pass\n");
  ASSERT(m);
  ASSERT_STREQ(nbc__module_function(m, "f")->c->str,
               "keyword-only parameters are not supported in CUDA kernels");
  ASSERT(!nbc__module_function(m, "g")->c);
  /* Real syntax errors inside host functions still stop the load. */
  ASSERT_CONTAINS(
      fe_ast("def main():\n    with x:\n    pass\n"),
      "t.py:3:5: error: expected an indented block after 'with' statement on line 2");
}

TEST(kernel_expressions_outside_the_language_are_other_nodes) {
  /* Inside a function, expressions the kernel language lacks become OTHER_EXPR (infer
   * refuses them where they are used); lists and dicts keep their own kinds. */
  ASSERT_STREQ(fe_stmt("def f(a):\n    x = [v for v in a]\n"), "(= x (other '['))");
  ASSERT_STREQ(fe_stmt("def f(a):\n    x = lambda: a\n"), "(= x (lambda (params) a))");
  ASSERT_STREQ(fe_stmt("def f(a):\n    x = [a, a]\n"), "(= x (list a a))");
  ASSERT_STREQ(fe_stmt("def f(a):\n    x = (y := a)\n"), "(= x (other ':='))");
  ASSERT_STREQ(fe_stmt("def f(a):\n    x = a[...]\n"), "(= x ([] a ...))");
}

TEST(node_positions) {
  nbc__module *m = fe_load("def f(a, b):\n    return a + b * 2\n");
  ASSERT(m);
  nbc__node *def = m->ast->body.items[0];
  ASSERT_EQ(def->kind, NBC__N_FUNCDEF);
  ASSERT_EQ(def->tok->line, 1);
  ASSERT_EQ(def->params.count, 2);
  ASSERT_EQ(def->params.items[1]->tok->col, 10);
  nbc__node *ret = def->body.items[0];
  ASSERT_EQ(ret->tok->line, 2);
  ASSERT_EQ(ret->tok->col, 5);
  ASSERT_EQ(ret->a->kind, NBC__N_BINOP);
  ASSERT_EQ(ret->a->op, NBC__OP_ADD);
  ASSERT_EQ(ret->a->tok->col, 14); /* binary operators keep their operator */
  ASSERT_EQ(ret->a->a->var, -1);
  ASSERT_STREQ(nbc__node_kind_name(ret->a->kind), "BINOP");
  ASSERT_STREQ(nbc__op_text(NBC__OP_NOTIN), "not in");
}

TEST(clone_is_deep_and_equal) {
  size_t size = 0;
  char *src = fe_read_file(CORPUS "shared_memory.py", &size);
  ASSERT(src);
  nbc__ctx *ctx = fe_new_ctx();
  nbc__module *m = nbc__module_load(ctx, fe_file(ctx, "shared_memory.py", src));
  ASSERT(m);
  nbc__node *def = nbc__module_function(m, "fast_matmul");
  ASSERT(def);
  nbc__node *copy = nbc__node_clone(ctx, def);
  ASSERT(copy && copy != def);
  ASSERT(copy->body.items != def->body.items);
  ASSERT(copy->body.items[0] != def->body.items[0]);
  nbc__buf a, b;
  nbc__buf_init(&a, ctx->arena);
  nbc__buf_init(&b, ctx->arena);
  nbc__node_dump(&a, def, 0);
  nbc__node_dump(&b, copy, 0);
  ASSERT(a.len > 500);
  ASSERT_STREQ(a.data, b.data);
  /* Changing the copy leaves the original alone. */
  copy->body.items[0]->list.items[0]->str = "changed";
  nbc__buf_init(&b, ctx->arena);
  nbc__node_dump(&b, copy, 0);
  ASSERT(strcmp(a.data, b.data) != 0);
  ASSERT(!nbc__node_clone(ctx, NULL));
}

/* The names in the CASES list of a corpus module: CASES = [("name", "sig", ...), ...]. */
static int case_names(const nbc__module *m, const char **names, int max) {
  int n = 0;
  for (int i = 0; i < m->ast->body.count; i++) {
    const nbc__node *s = m->ast->body.items[i];
    if (s->kind != NBC__N_ASSIGN || s->list.items[0]->kind != NBC__N_NAME ||
        strcmp(s->list.items[0]->str, "CASES") != 0)
      continue;
    ASSERT_EQ(s->a->kind, NBC__N_LIST);
    for (int j = 0; j < s->a->list.count && n < max; j++) {
      const nbc__node *t = s->a->list.items[j];
      ASSERT_EQ(t->kind, NBC__N_TUPLE);
      ASSERT_EQ(t->list.items[0]->kind, NBC__N_STR);
      ASSERT_EQ(t->list.items[1]->kind, NBC__N_STR);
      names[n++] = t->list.items[0]->str;
    }
  }
  return n;
}

TEST(corpus_files_load_and_their_cases_are_found) {
  const char *files[] = {"scalars.py", "arrays.py", "shared_memory.py"};
  int total = 0;
  for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
    char path[512];
    snprintf(path, sizeof path, CORPUS "%s", files[f]);
    size_t size = 0;
    char *src = fe_read_file(path, &size);
    if (!src) TEST_FAIL_("cannot read %s", path);
    nbc__module *m = fe_load_named(files[f], src);
    ASSERT(m);
    const char *names[128];
    int n = case_names(m, names, 128);
    ASSERT(n >= 5);
    for (int i = 0; i < n; i++) {
      nbc__node *def = nbc__module_function(m, names[i]);
      if (!def) TEST_FAIL_("%s: function %s of CASES not found", files[f], names[i]);
      ASSERT_EQ(def->kind, NBC__N_FUNCDEF);
      ASSERT_STREQ(def->str, names[i]);
      ASSERT(def->body.count > 0);
      nbc_global_t g;
      ASSERT_EQ(nbc__module_resolve(m, names[i], &g), 0);
      ASSERT_EQ(g.kind, NBC_GLOBAL_FUNCTION);
    }
    nbc_global_t g;
    ASSERT_EQ(nbc__module_resolve(m, "cuda", &g), 0);
    ASSERT_EQ(g.kind, NBC_GLOBAL_MODULE_CUDA);
    ASSERT_EQ(nbc__module_resolve(m, "math", &g), 0);
    ASSERT_EQ(g.kind, NBC_GLOBAL_MODULE_MATH);
    total += n;
  }
  ASSERT(total >= 30);
}

TEST(out_of_memory_never_crashes) {
  /* Every allocation of loading a real file is made to fail in turn, through a cap on the
   * arena's size: each attempt either loads or reports NBC_NO_MEMORY, never crashes. */
  size_t size = 0;
  char *src = fe_read_file(CORPUS "shared_memory.py", &size);
  ASSERT(src);
  int failures = 0;
  for (size_t limit = 1; limit < 2 * 1024 * 1024; limit = limit * 5 / 4 + 1) {
    nbc__ctx *ctx = fe_new_ctx();
    nbc__file *f = fe_file(ctx, "shared_memory.py", src);
    nbc__arena_set_limit(ctx->arena, limit);
    nbc__module *m = nbc__module_load(ctx, f);
    if (!m) {
      ASSERT_EQ(ctx->status, NBC_NO_MEMORY);
      failures++;
    } else {
      ASSERT_EQ(ctx->status, NBC_OK);
    }
    nbc__arena_destroy(ctx->arena);
    free(ctx);
  }
  ASSERT(failures > 0);
}

/* Loads of one file on several threads at once give identical trees: the front end keeps
 * no mutable global state (the tokenizer's numeric locale is per call). */
typedef struct load_job {
  const char *src;
  const char *dump;
  int mismatches;
} load_job;

static void *load_many(void *arg) {
  load_job *job = arg;
  for (int i = 0; i < 100; i++) {
    nbc__ctx *ctx = fe_new_ctx();
    nbc__module *m = nbc__module_load(ctx, fe_file(ctx, "t.py", job->src));
    if (m && !nbc__module_parse_bodies(ctx, m)) m = NULL;
    nbc__buf out;
    nbc__buf_init(&out, ctx->arena);
    if (m) nbc__node_dump(&out, m->ast, 0);
    if (!m || strcmp(out.data, job->dump) != 0) job->mismatches++;
    nbc__arena_destroy(ctx->arena);
    free(ctx);
  }
  return NULL;
}

TEST(concurrent_loads) {
  char *src = fe_read_file(CORPUS "scalars.py", NULL);
  ASSERT(src);
  const char *want = fe_folded(src);
  ASSERT(strncmp(want, "(module", 7) == 0);
  pthread_t threads[4];
  load_job jobs[4];
  for (int i = 0; i < 4; i++) {
    jobs[i] = (load_job){src, want, 0};
    ASSERT_EQ(pthread_create(&threads[i], NULL, load_many, &jobs[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(threads[i], NULL);
    ASSERT_EQ(jobs[i].mismatches, 0);
  }
}

/* What CPython removes before numba sees the code is gone from the loaded module (fold.c):
 * constant arithmetic, the branches a constant condition does not take, code after a jump;
 * a block left empty holds `pass`. */
TEST(constant_folding) {
  ASSERT_STREQ(fe_folded("def f(a):\n    a[32 + 2] = -(2 ** 3) // 3 + __debug__\n"),
               "(module\n  (def f (params a)\n    (= ([] a 34) -2)))");
  ASSERT_STREQ(fe_folded("def f(a):\n    if False:\n        a[0] = x\n    elif 0:\n"
                         "        a[0] = y\n    else:\n        a[0] = 1\n    while 0:\n"
                         "        a[1] = z\n    return\n    a[2] = w\n"),
               "(module\n  (def f (params a)\n    (= ([] a 0) 1)\n    (return)))");
  ASSERT_STREQ(fe_folded("def f(a, b):\n    if 0:\n        return a\n"),
               "(module\n  (def f (params a b)\n    (pass)))");
  ASSERT_STREQ(fe_folded("def f(a, b):\n    return (a if True else b) | (0 or b) | (1 and a)\n"),
               "(module\n  (def f (params a b)\n    (return (| (| a b) a))))");
  /* what Python raises on, or needs more than 64 bits, stays as written */
  ASSERT_STREQ(fe_folded("def f():\n    return 1 // 0, 2 ** 64, 1 << -1, 2.0 ** 5000\n"),
               "(module\n  (def f (params)\n    (return (tuple (// 1 0) (** 2 64) (<< 1 -1) "
               "(** 2.0 5000)))))");
}

/* Loading a module leaves the bodies of its top-level functions unparsed (most are never
 * compiled, and their trees were most of the memory a load took) once checked for syntax
 * errors: an error in a function nothing compiles still fails the load, as CPython refuses
 * the whole file; the body is parsed and folded when the function is asked for, into the
 * tree parsing it at once makes. */
TEST(function_bodies_are_parsed_when_used) {
  static const char bad[] = "def f(a):\n    return a\n\ndef g(a):\n    return (a,\n";
  nbc__ctx *ctx = fe_new_ctx();
  ASSERT(!nbc__module_load(ctx, fe_file(ctx, "t.py", bad)));
  ASSERT_EQ(ctx->status, NBC_SYNTAX_ERROR);
  ASSERT_CONTAINS(ctx->diag.data, "t.py:5:");
  static const char good[] = "def f(a):\n    return a\n\n"
                             "if True:\n    def g(a):\n        def h(b): return b\n"
                             "        return h(a) + (2 + 3)\n";
  ctx = fe_new_ctx();
  nbc__module *m = nbc__module_load(ctx, fe_file(ctx, "t.py", good));
  ASSERT(m);
  nbc__node *g = m->ast->body.items[1];
  ASSERT(g->kind == NBC__N_FUNCDEF && g->body_deferred && g->body.count == 0);
  ASSERT(nbc__module_function(m, "g") == g);
  ASSERT(!g->body_deferred && g->body.count == 2);
  ASSERT(!g->body.items[0]->body_deferred); /* nested functions are parsed with their parent */
  ASSERT(m->ast->body.items[0]->body_deferred); /* f: not asked for */
  ASSERT(nbc__module_parse_bodies(ctx, m));
  nbc__buf out;
  nbc__buf_init(&out, ctx->arena);
  nbc__node_dump(&out, m->ast, 0);
  ASSERT_STREQ(out.data, fe_folded(good));
  ASSERT_CONTAINS(out.data, "(return (+ (call h a) 5))");
}

TEST_LIST(X(constant_folding) X(precedence_arithmetic) X(precedence_bitwise_and_shifts)
              X(precedence_boolean_and_comparisons) X(conditional_expressions)
                  X(atoms_and_literals) X(primaries) X(subscripts_and_slices) X(assignments)
                      X(compound_statements) X(decorators_and_nested_defs)
                          X(imports_and_module_level_host_code)
                              X(host_code_in_function_bodies_is_kept)
                                  X(kernel_expressions_outside_the_language_are_other_nodes)
                                      X(function_bodies_are_parsed_when_used)
                                      X(node_positions) X(clone_is_deep_and_equal)
                                          X(corpus_files_load_and_their_cases_are_found)
                                              X(out_of_memory_never_crashes)

                                                  X(concurrent_loads))
TEST_MAIN()
