/* test_infer.c — type inference: the return type and variable types of every corpus
 * function for its CASES signature (expected values from numba-cuda 0.30.4's
 * cuda.compile, which prints a kernel's type as "none" where nbcuda says "void"),
 * representative functions, what infer.c records for lower.c (casts, calls, non-negative
 * indices), and the exact text of typing diagnostics.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "test.h"

typedef struct run {
  nbc__ctx ctx;
  nbc_compile_options_t opts;
  nbc__module *module;
  bool ok;
} run;

static run *infer_src(const char *src, const char *fname, const char *sigtext, int device) {
  run *r = calloc(1, sizeof *r);
  r->ctx.arena = nbc__arena_create();
  nbc__buf_init(&r->ctx.diag, r->ctx.arena);
  r->opts.device = device;
  r->opts.abi = device ? NBC_ABI_C : NBC_ABI_NUMBA;
  r->opts.opt = 1;
  r->ctx.options = &r->opts;
  nbc__file *f = nbc__arena_alloc(r->ctx.arena, sizeof *f);
  f->name = "k.py";
  f->size = strlen(src);
  f->text = nbc__arena_strndup(r->ctx.arena, src, f->size);
  f->first_line = 1;
  r->module = nbc__module_load(&r->ctx, f);
  if (!r->module) TEST_FAIL_("module did not load: %s", r->ctx.diag.data);
  nbc__node *def = nbc__module_function(r->module, fname);
  if (!def) TEST_FAIL_("no function %s", fname);
  nbc__signature sig;
  if (!nbc__signature_parse(&r->ctx, sigtext, &sig)) TEST_FAIL_("bad sig %s", sigtext);
  r->ok = nbc__infer(&r->ctx, r->module, def, &sig);
  return r;
}

static const char *ret_of(run *r) {
  if (!r->ok) TEST_FAIL_("inference failed: %s", r->ctx.diag.data);
  return nbc__type_name(&r->ctx, r->ctx.program->entry->ret);
}

static const char *var_of(run *r, const char *name) {
  const nbc__func *f = r->ctx.program->entry;
  for (int i = 0; i < f->nvars; i++)
    if (strcmp(f->vars[i].name, name) == 0) return nbc__type_name(&r->ctx, f->vars[i].type);
  return "(no such variable)";
}

/* The first line of the diagnostic of a failed inference. */
static const char *error_of(run *r) {
  if (r->ok) TEST_FAIL_("inference succeeded");
  char *nl = strchr(r->ctx.diag.data, '\n');
  if (nl) *nl = 0;
  return r->ctx.diag.data;
}

static char *read_corpus(const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/corpus/%s", NBCUDA_SOURCE_DIR, name);
  FILE *f = fopen(path, "rb");
  if (!f) TEST_FAIL_("cannot read corpus file %s", path);
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  fclose(f);
  return buf;
}

static const struct {
  const char *file, *func, *sig;
  int device;
  const char *ret;
} corpus[] = {
    {"scalars.py", "add", "float32(float32, float32)", 1, "float32"},
    {"scalars.py", "add", "int64(int64, int64)", 1, "int64"},
    {"scalars.py", "add", "(uint8, uint8)", 1, "uint64"},
    {"scalars.py", "mixed", "(int32, float32)", 1, "float64"},
    {"scalars.py", "floordiv_mod", "int64(int64, int64)", 1, "int64"},
    {"scalars.py", "floordiv_mod", "float64(float64, float64)", 1, "float64"},
    {"scalars.py", "clamp", "float32(float32, float32, float32)", 1, "float32"},
    {"scalars.py", "poly", "float64(float64)", 1, "float64"},
    {"scalars.py", "poly", "(float32,)", 1, "float64"},
    {"scalars.py", "collatz_steps", "int32(int64)", 1, "int32"},
    {"scalars.py", "sign", "(float64,)", 1, "int64"},
    {"scalars.py", "bits", "(int32, int32)", 1, "int64"},
    {"scalars.py", "bits", "(uint16, uint16)", 1, "uint64"},
    {"scalars.py", "hypot3", "float32(float32, float32, float32)", 1, "float32"},
    {"scalars.py", "logistic", "(float64,)", 1, "float64"},
    {"scalars.py", "int_pow", "(int64,)", 1, "int64"},
    {"scalars.py", "chain_compare", "(float64, float64, float64)", 1, "bool"},
    {"scalars.py", "ternary", "(int16, int16)", 1, "int64"},
    {"arrays.py", "saxpy", "void(float32[:], float32, float32[:], float32[:])", 0, "void"},
    {"arrays.py", "grid_stride_scale", "void(float64[:], float64)", 0, "void"},
    {"arrays.py", "add_2d", "void(float32[:, :], float32[:, :], float32[:, :])", 0, "void"},
    {"arrays.py", "transpose", "void(float64[:, ::1], float64[:, ::1])", 0, "void"},
    {"arrays.py", "reverse", "void(int32[:], int32[:])", 0, "void"},
    {"arrays.py", "row_sums", "void(float64[:], float64[:, :])", 0, "void"},
    {"arrays.py", "matmul_naive", "void(float32[:, :], float32[:, :], float32[:, :])", 0,
     "void"},
    {"arrays.py", "stencil_1d", "void(float32[:], float32[:])", 0, "void"},
    {"arrays.py", "count_step", "void(int64[:], float32[:])", 0, "void"},
    {"arrays.py", "polar", "void(float64[:], float64[:], float64[:], float64[:])", 0, "void"},
    {"shared_memory.py", "block_sum", "void(float32[:], float32[:])", 0, "void"},
    {"shared_memory.py", "histogram", "void(int32[:], float64[:], float64, float64)", 0,
     "void"},
    {"shared_memory.py", "fast_matmul", "void(float32[:, :], float32[:, :], float32[:, :])", 0,
     "void"},
    {"shared_memory.py", "apply_gelu", "void(float64[:], float64[:])", 0, "void"},
    {"shared_memory.py", "local_sort3", "void(float32[:, :], float32[:, :])", 0, "void"},
    {"shared_memory.py", "max_reduce", "void(int64[:], int64[:])", 0, "void"},
};

TEST(corpus_return_types) {
  int n = 0;
  for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++) {
    run *r =
        infer_src(read_corpus(corpus[i].file), corpus[i].func, corpus[i].sig, corpus[i].device);
    if (!r->ok) TEST_FAIL_("%s %s: %s", corpus[i].func, corpus[i].sig, r->ctx.diag.data);
    if (strcmp(ret_of(r), corpus[i].ret) != 0)
      TEST_FAIL_("%s %s: returns %s, numba-cuda: %s", corpus[i].func, corpus[i].sig, ret_of(r),
                 corpus[i].ret);
    n++;
  }
  printf("%d corpus cases typed\n", n);
}

TEST(corpus_variables) {
  run *r = infer_src(read_corpus("scalars.py"), "poly", "(float32,)", 1);
  ASSERT_STREQ(var_of(r, "s"), "float64");
  ASSERT_STREQ(var_of(r, "i"), "int64");
  ASSERT_STREQ(var_of(r, "x"), "float32");
  r = infer_src(read_corpus("scalars.py"), "collatz_steps", "int32(int64)", 1);
  ASSERT_STREQ(var_of(r, "steps"), "int64");
  ASSERT_STREQ(var_of(r, "n"), "int64");
  r = infer_src(read_corpus("shared_memory.py"), "block_sum", "void(float32[:], float32[:])",
                0);
  ASSERT_STREQ(var_of(r, "tmp"), "array(float32, 1d, C)");
  ASSERT_STREQ(var_of(r, "tid"), "int32");
  ASSERT_STREQ(var_of(r, "i"), "int64");
  ASSERT_STREQ(var_of(r, "s"), "int64");
  r = infer_src(read_corpus("shared_memory.py"), "fast_matmul",
                "void(float32[:, :], float32[:, :], float32[:, :])", 0);
  ASSERT_STREQ(var_of(r, "sA"), "array(float32, 2d, C)");
  ASSERT_STREQ(var_of(r, "tmp"), "float32");
  ASSERT_STREQ(var_of(r, "x"), "int64");
  ASSERT_STREQ(var_of(r, "bpg"), "int32");
  r = infer_src(read_corpus("shared_memory.py"), "histogram",
                "void(int32[:], float64[:], float64, float64)", 0);
  ASSERT_STREQ(var_of(r, "b"), "int64");
  ASSERT_STREQ(var_of(r, "nbins"), "int64");
  r = infer_src(read_corpus("arrays.py"), "count_step", "void(int64[:], float32[:])", 0);
  ASSERT_STREQ(var_of(r, "v"), "float64"); /* float32 unified with v * 0.5 (float64) */
  ASSERT_STREQ(var_of(r, "n"), "int64");
}

TEST(apply_gelu_specialises_callee) {
  run *r = infer_src(read_corpus("shared_memory.py"), "apply_gelu",
                     "void(float64[:], float64[:])", 0);
  ASSERT(r->ok);
  int count = 0;
  const nbc__func *gelu = NULL;
  for (const nbc__func *f = r->ctx.program->funcs; f; f = f->next) {
    count++;
    if (strcmp(f->name, "gelu") == 0) gelu = f;
  }
  ASSERT_EQ(count, 2);
  ASSERT(gelu && !gelu->is_entry && !gelu->is_kernel);
  ASSERT_STREQ(nbc__type_name(&r->ctx, gelu->ret), "float64");
  ASSERT_EQ(gelu->abi, NBC_ABI_NUMBA);
}

static const char *SRC_CALLS = "def f(a):\n"
                               "    return a * 2\n"
                               "def g(x, y):\n"
                               "    return f(x) + f(y) + f(x)\n"
                               "def rec(n):\n"
                               "    return rec(n - 1)\n"
                               "def fact(n):\n"
                               "    if n <= 1:\n"
                               "        return 1\n"
                               "    return n * fact(n - 1)\n"
                               "def ping(n):\n"
                               "    return 0.5 if n < 0 else pong(n)\n"
                               "def pong(n):\n"
                               "    return ping(n - 1)\n"
                               "def other(n):\n"
                               "    return 1 if n < 0 else other(1.5)\n"
                               "def grow(t):\n"
                               "    return 1 if len(t) > 100 else grow(t + t)\n";

TEST(calls_are_cached_per_types) {
  run *r = infer_src(SRC_CALLS, "g", "(int32, float32)", 1);
  ASSERT_STREQ(ret_of(r), "float64");
  int fs = 0;
  for (const nbc__func *f = r->ctx.program->funcs; f; f = f->next)
    if (strcmp(f->name, "f") == 0) fs++;
  ASSERT_EQ(fs, 2); /* f(int32) and f(float32), the second f(x) reuses the first */
  r = infer_src(SRC_CALLS, "rec", "(int64,)", 1);
  ASSERT_STREQ(error_of(r), "k.py:6:12: error: cannot type infer runaway recursion: the return "
                            "type of the recursive function 'rec' needs a return that does not "
                            "recurse");
  /* self-recursion, typed from the return that does not recurse (as numba), also as the
   * entry (which calls a Numba-ABI copy of itself) */
  r = infer_src(SRC_CALLS, "fact", "(int32,)", 1);
  ASSERT_STREQ(ret_of(r), "int64");
  /* mutual recursion through the entry: pong calls a copy of ping, typed from ping's
   * return outside the cycle */
  r = infer_src(SRC_CALLS, "ping", "(int64,)", 1);
  ASSERT_STREQ(ret_of(r), "float64");
  r = infer_src(SRC_CALLS, "other", "(int64,)", 1); /* other(int64) calls other(float64) */
  ASSERT_STREQ(ret_of(r), "int64");
  r = infer_src(SRC_CALLS, "grow", "(UniTuple(int64, 1),)", 1);
  ASSERT_CONTAINS(error_of(r), "recursive call of 'grow' changes its argument types again");
}

static const char *SRC_LOOP = "def f(n):\n"
                              "    x = 0\n"
                              "    for i in range(n):\n"
                              "        x = x + 0.5\n"
                              "    return x\n"
                              "def g(a):\n"
                              "    r = 1\n"
                              "    if a > 0:\n"
                              "        r = a\n"
                              "    return r\n"
                              "def h(a, b):\n"
                              "    return a and b\n"
                              "def t():\n"
                              "    p = (1, 2.5)\n"
                              "    q, w = p\n"
                              "    return p[1] + q + p[-2]\n";

TEST(fixed_point_and_unification) {
  run *r = infer_src(SRC_LOOP, "f", "(int32,)", 1);
  ASSERT_STREQ(ret_of(r), "float64");
  ASSERT_STREQ(var_of(r, "x"), "float64"); /* loop-carried: needs a second walk */
  ASSERT_STREQ(var_of(r, "i"), "int32");   /* range(int32) counts in int32 */
  r = infer_src(SRC_LOOP, "g", "(int32,)", 1);
  ASSERT_STREQ(var_of(r, "r"), "int64");
  r = infer_src(SRC_LOOP, "g", "(uint64,)", 1);
  ASSERT_STREQ(var_of(r, "r"), "float64"); /* int64 with uint64: NumPy's promotion */
  r = infer_src(SRC_LOOP, "g", "(boolean,)", 1);
  ASSERT_STREQ(var_of(r, "r"), "int64");
  r = infer_src(SRC_LOOP, "h", "(int8, uint8)", 1);
  ASSERT_STREQ(ret_of(r), "int16");
  r = infer_src(SRC_LOOP, "t", "()", 1);
  ASSERT_STREQ(var_of(r, "p"), "Tuple(int64, float64)");
  ASSERT_STREQ(var_of(r, "w"), "float64");
  ASSERT_STREQ(ret_of(r), "float64");
}

TEST(declared_return_casts) {
  run *r = infer_src("def f(a):\n    return a + 1\n", "f", "int16(int16)", 1);
  ASSERT_STREQ(ret_of(r), "int16");
  const nbc__node *ret = r->ctx.program->entry->def->body.items[0];
  ASSERT_EQ(ret->kind, NBC__N_RETURN);
  ASSERT_STREQ(nbc__type_name(&r->ctx, ret->a->type), "int64");
  ASSERT_STREQ(nbc__type_name(&r->ctx, ret->a->cast), "int16");
  /* The operands of + are converted to numba's chosen signature (int64, int64). */
  ASSERT_STREQ(nbc__type_name(&r->ctx, ret->a->a->cast), "int64");
  ASSERT(ret->a->b->cast == NULL);
  r = infer_src("def f(a):\n    pass\n", "f", "(float32,)", 1);
  ASSERT_STREQ(ret_of(r), "none");
}

static const char *SRC_IDX = "def k(a, b):\n"
                             "    i = cuda.grid(1)\n"
                             "    j = i * 2 + 1\n"
                             "    a[j] = 1\n"
                             "    a[i - 1] = 2\n"
                             "    for t in range(3, 10):\n"
                             "        a[t] = b[t, 0]\n"
                             "    for u in range(10, 0, -1):\n"
                             "        a[u] = 3\n"
                             "    a[cuda.threadIdx.x] += 1.5\n";

static const nbc__node *stmt_at(run *r, int k) {
  return r->ctx.program->entry->def->body.items[k];
}

TEST(nonnegative_indices) {
  char src[1024];
  snprintf(src, sizeof src, "from numba import cuda\n%s", SRC_IDX);
  run *r = infer_src(src, "k", "void(int32[:], float64[:, ::1])", 0);
  if (!r->ok) TEST_FAIL_("%s", r->ctx.diag.data);
  ASSERT(stmt_at(r, 2)->list.items[0]->info != NULL); /* a[j]: j = grid*2+1 */
  ASSERT(stmt_at(r, 3)->list.items[0]->info == NULL); /* a[i - 1] */
  const nbc__node *loop = stmt_at(r, 4);
  ASSERT(loop->body.items[0]->list.items[0]->info != NULL); /* a[t], t in range(3, 10) */
  ASSERT(loop->body.items[0]->a->info != NULL);             /* b[t, 0] */
  ASSERT(stmt_at(r, 5)->body.items[0]->list.items[0]->info == NULL); /* negative step */
  const nbc__node *aug = stmt_at(r, 6);
  ASSERT(aug->a->info != NULL);
  ASSERT_STREQ(nbc__type_name(&r->ctx, aug->type), "float64");
  ASSERT_STREQ(nbc__type_name(&r->ctx, aug->cast), "int32"); /* stored back as int32 */
  /* The stored constant converts to the element type. */
  ASSERT_STREQ(nbc__type_name(&r->ctx, stmt_at(r, 2)->a->cast), "int32");
}

TEST(calls_recorded) {
  run *r = infer_src("import math\nfrom numba import cuda, float32\n"
                     "def k(a):\n"
                     "    s = cuda.shared.array((4, 8), dtype=float32)\n"
                     "    l = cuda.local.array(3, float32)\n"
                     "    old = cuda.atomic.add(a, 0, 1)\n"
                     "    y = math.sin(float32(old)) + math.pi\n"
                     "    cuda.syncthreads()\n"
                     "    g = cuda.gridsize(2)\n",
                     "k", "void(float64[:],)", 0);
  if (!r->ok) TEST_FAIL_("%s", r->ctx.diag.data);
  ASSERT_STREQ(var_of(r, "s"), "array(float32, 2d, C)");
  ASSERT_STREQ(var_of(r, "l"), "array(float32, 1d, C)");
  ASSERT_STREQ(var_of(r, "old"), "float64");
  ASSERT_STREQ(var_of(r, "y"), "float64");
  ASSERT_STREQ(var_of(r, "g"), "UniTuple(int64 x 2)");
  const nbc__call *c = stmt_at(r, 0)->a->info;
  ASSERT_EQ(c->builtin, NBC__B_CUDA_SHARED_ARRAY);
  ASSERT_EQ(c->shape[0], 4);
  ASSERT_EQ(c->shape[1], 8);
  c = stmt_at(r, 2)->a->info;
  ASSERT_EQ(c->builtin, NBC__B_ATOMIC_ADD);
  ASSERT_STREQ(nbc__type_name(&r->ctx, stmt_at(r, 2)->a->list.items[2]->cast), "float64");
  const nbc__node *sin = stmt_at(r, 3)->a->a;
  c = sin->info;
  ASSERT_EQ(c->builtin, NBC__B_MATH);
  ASSERT_STREQ(c->name, "sin");
  ASSERT_STREQ(nbc__type_name(&r->ctx, c->ret), "float32");
  ASSERT_EQ(((const nbc__call *)sin->list.items[0]->info)->builtin, NBC__B_CAST);
  const nbc__node *pi = stmt_at(r, 3)->a->b;
  ASSERT(pi->info != NULL);
  ASSERT_EQ(((const nbc__global *)pi->info)->g.kind, NBC_GLOBAL_FLOAT);
}

/* Typing errors, exact text. */
static const struct {
  const char *src, *fn, *sig;
  int device;
  const char *msg;
} errors[] = {
    {"def f(a):\n    return a.foo\n", "f", "(float32[::1],)", 1,
     "k.py:2:14: error: Unknown attribute 'foo' of type array(float32, 1d, C)"},
    /* bindings that meet (numba's phi) must unify; a rebinding whose old value is dead need
     * not (ssa.c) */
    {"def f(a, b):\n    x = 1\n    if a > 0:\n        x = b\n    return x\n", "f",
     "(int64, float32[:])", 1,
     "k.py:4:9: error: Cannot unify int64 and array(float32, 1d, A) for 'x'"},
    {"def f(a):\n    return foo(a)\n", "f", "(int64,)", 1,
     "k.py:2:12: error: NameError: name 'foo' is not defined"},
    {"def f(a, b):\n    return a + b\n", "f", "(int64, float32[:])", 1,
     "k.py:2:14: error: Invalid use of + with parameters (int64, array(float32, 1d, A))"},
    {"def f(a):\n    return 1\n", "f", "(float32[:],)", 0,
     "k.py:1:1: error: TypeError: CUDA kernel must have void return type. (it returns int64)"},
    {"def f(a):\n    return 1\n", "f", "int64(float32[:])", 0,
     "k.py:1:1: error: TypeError: CUDA kernel must have void return type. (declared int64)"},
    {"def f(a):\n    return a << 1.5\n", "f", "(int64,)", 1,
     "k.py:2:14: error: Invalid use of << with parameters (int64, float64)"},
    {"def f(a):\n    return ~a\n", "f", "(float32,)", 1,
     "k.py:2:12: error: Invalid use of ~ with parameters (float32)"},
    {"def g(x):\n    return x\ndef f(a):\n    return g(a, a)\n", "f", "(int64,)", 1,
     "k.py:4:12: error: g() takes 1 positional argument but 2 were given"},
    {"def f(a):\n    return a\n", "f", "(int64, int64)", 1,
     "k.py:1:1: error: the signature has 2 arguments but 'f' takes 1"},
    {"def f(a):\n    return a[0, 1]\n", "f", "(float32[:],)", 1,
     "k.py:2:14: error: cannot index array(float32, 1d, A) with 2 indices"},
    {"def f(a):\n    a[0] = a\n", "f", "(float32[:],)", 1,
     "k.py:2:12: error: Cannot convert array(float32, 1d, A) to float32 in an array "
     "assignment"},
    {"def f(a):\n    return a[1.5]\n", "f", "(float32[:],)", 1,
     "k.py:2:14: error: array index must be an integer, not float64"},
    {"import math\ndef f(a):\n    return math.foo(a)\n", "f", "(float32,)", 1,
     "k.py:3:17: error: unsupported attribute 'math.foo'"},
    {"def f(a):\n    return min(a)\n", "f", "(float32,)", 1,
     "k.py:2:12: error: Invalid use of min with parameters (float32)"},
    {"def f(a):\n    return float(a)\n", "f", "(boolean,)", 1,
     "k.py:2:12: error: Invalid use of float with parameters (bool)"},
    {"def f(a):\n    for i in a:\n        pass\n", "f", "(float32,)", 1,
     "k.py:2:14: error: 'float32' object is not iterable"},
    {"def f(a):\n    if a:\n        return 1\n", "f", "(float16,)", 1,
     "k.py:2:8: error: the truth value of a float16 is not supported (float16)"},
    {"def f(a):\n    return a[0]\n", "f", "(int64,)", 1,
     "k.py:2:13: error: 'int64' object is not subscriptable"},
    {"def f(a):\n    x = (1, 2)\n    return x[5]\n", "f", "(int64,)", 1,
     "k.py:3:14: error: tuple index out of range"},
    {"def f(a):\n    i, j = a\n", "f", "(int64,)", 1,
     "k.py:2:5: error: cannot unpack int64 into 2 values"},
    {"from numba import cuda\ndef f(a):\n    return cuda.grid(4)\n", "f", "(int64,)", 1,
     "k.py:3:12: error: cuda.grid() takes one constant argument, 1, 2 or 3"},
    {"from numba import cuda\ndef f(a):\n    s = cuda.shared.array(a, dtype=cuda.float32)\n",
     "f", "(int64,)", 1,
     /* the first line; the rest, numba's signature and why, in test_kernel_local_shared.py */
     "k.py:3:27: error: No implementation of function Function(<function shared.array>) "
     "found for signature:"},
    {"def f(a):\n    if a[0] > 0:\n        return a\n", "f", "(float32[:],)", 1,
     "k.py:1:1: error: Cannot unify array(float32, 1d, A) and none for the return value of "
     "'f' (a path falls off the end of the function)"},
};

TEST(error_messages) {
  int n = 0, bad = 0;
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++) {
    run *r = infer_src(errors[i].src, errors[i].fn, errors[i].sig, errors[i].device);
    if (r->ok) TEST_FAIL_("case %zu: inference succeeded", i);
    if (errors[i].msg && strcmp(error_of(r), errors[i].msg) != 0) {
      printf("case %zu:\n  got      %s\n  expected %s\n", i, error_of(r), errors[i].msg);
      bad++;
    }
    n++;
  }
  printf("%d diagnostics checked, %d wrong\n", n, bad);
  fflush(stdout);
  ASSERT_EQ(bad, 0);
}

TEST(use_before_assignment_and_with) {
  run *r = infer_src("def f(a):\n    x = y\n    y = x\n    return a\n", "f", "(int64,)", 1);
  ASSERT_STREQ(error_of(r), "k.py:2:9: error: cannot determine the type of 'y'");
  ASSERT_EQ(r->ctx.status, NBC_TYPING_ERROR);
}

TEST(dump) {
  run *r = infer_src(SRC_LOOP, "f", "(int32,)", 1);
  nbc__buf out;
  nbc__buf_init(&out, r->ctx.arena);
  nbc__infer_dump(&out, r->ctx.program);
  ASSERT_CONTAINS(out.data, "function f(int32) -> float64\n");
  ASSERT_CONTAINS(out.data, "  var x: float64\n");
  ASSERT_CONTAINS(out.data, "NAME x : float64");
}

/* Basic indexing that leaves dimensions makes a view whose type is numba's
 * (get_array_index_type, asked of numba-cuda 0.30 for each row): one dimension per slice and
 * per dimension not indexed, the layout kept only where numba keeps it. A number assigned to
 * a view fills it; an array is refused (numba-cuda cannot compile that either). */
TEST(array_views_have_numbas_types) {
  static const struct {
    const char *array, *index, *view;
  } rows[] = {
      {"float32[:, :, ::1]", "b", "array(float32, 2d, C)"},
      {"float32[:, :, ::1]", "b:", "array(float32, 3d, C)"},
      {"float32[:, :, ::1]", "b, :", "array(float32, 2d, C)"},
      {"float32[:, :, ::1]", ":, b", "array(float32, 2d, A)"},
      {"float32[:, :, ::1]", "::2", "array(float32, 3d, A)"},
      {"float32[:, :, ::1]", "1:b:1", "array(float32, 3d, A)"},
      {"float32[:, :, ::1]", "b, b", "array(float32, 1d, C)"},
      {"float32[:, :, ::1]", "b, 1:", "array(float32, 2d, C)"},
      {"float32[:, :, ::1]", ":, :, b", "array(float32, 2d, A)"},
      {"float32[:, :, ::1]", "b, :, b", "array(float32, 1d, A)"},
      {"float32[:, :, ::1]", ":", "array(float32, 3d, C)"},
      {"float32[:, :, ::1]", "b, b, :", "array(float32, 1d, C)"},
      {"float32[:, :, ::1]", ":, b:", "array(float32, 3d, A)"},
      {"float32[:, :, ::1]", "::-1, b", "array(float32, 2d, A)"},
      {"float32[::1, :, :]", "b", "array(float32, 2d, A)"},
      {"float32[::1, :, :]", ":, :, b", "array(float32, 2d, A)"},
      {"float32[::1, :, :]", "b, b, :", "array(float32, 1d, A)"},
      {"float32[:, :, :]", "b, 1:", "array(float32, 2d, A)"},
      {"float32[:, :, :]", ":", "array(float32, 3d, A)"},
      {"float32[::1]", "b:", "array(float32, 1d, C)"},
      {"float32[::1]", "::2", "array(float32, 1d, A)"},
      {"float32[::1]", "1:b:1", "array(float32, 1d, A)"},
      {"float32[::1]", ":", "array(float32, 1d, C)"},
      {"float32[:, ::1]", "b", "array(float32, 1d, C)"},
      {"float32[:, ::1]", "b:", "array(float32, 2d, C)"},
      {"float32[:, ::1]", ":, b", "array(float32, 1d, A)"},
      {"float32[:, ::1]", "b, 1:", "array(float32, 1d, C)"},
      {"float32[:, ::1]", "::-1, b", "array(float32, 1d, A)"},
      {"float32[::1, :]", "b", "array(float32, 1d, A)"},
      {"float32[::1, :]", "b, :", "array(float32, 1d, A)"},
      {"float32[::1, :]", ":, b", "array(float32, 1d, F)"},
      {"float32[::1, :]", ":", "array(float32, 2d, A)"},
      {"float32[::1, :]", "::-1, b", "array(float32, 1d, A)"},
      /* Ellipsis and None (numba 0.61's njit gives these types) */
      {"float32[:, ::1]", "None, 1:", "array(float32, 3d, C)"},
      {"float32[:, ::1]", "..., 0", "array(float32, 1d, A)"},
      {"float32[:, ::1]", "0, ...", "array(float32, 1d, C)"},
      {"float32[:, ::1]", ":, 1, None", "array(float32, 2d, A)"},
      {"float32[:, ::1]", "None", "array(float32, 3d, C)"},
      {"float32[:, ::1]", "..., None", "array(float32, 3d, A)"},
      {"float32[:, ::1]", "..., 1:", "array(float32, 2d, A)"},
      {"float32[:, ::1]", "1, None, 2", "array(float32, 1d, C)"},
      {"float32[:, ::1]", "..., 1, 2", "float32"},
      {"float32[::1, :]", "None", "array(float32, 3d, A)"},
      {"float32[::1, :]", "..., 0", "array(float32, 1d, F)"},
      {"float32[::1, :]", "0, ...", "array(float32, 1d, A)"},
      {"float32[::1, :]", ":, None", "array(float32, 3d, A)"},
      {"float32[::1]", "None, :", "array(float32, 2d, C)"},
      {"float32[::1]", ":, np.newaxis", "array(float32, 2d, C)"},
      {"float32[::1]", "np.newaxis, ::2", "array(float32, 2d, A)"},
      {"float32[::1]", "None, 0", "array(float32, 1d, C)"},
      {"float32[::1]", "None, None, 1", "array(float32, 2d, C)"},
      {"float32[::1]", "1, ...", "float32"},
      {"float32[:, :, ::1]", "0, ..., 1", "array(float32, 1d, A)"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    char src[256], sig[128];
    snprintf(src, sizeof src, "import numpy as np\ndef f(a, b):\n    return a[%s]\n",
             rows[i].index);
    snprintf(sig, sizeof sig, "(%s, int64)", rows[i].array);
    run *r = infer_src(src, "f", sig, 1);
    if (!r->ok) TEST_FAIL_("a[%s] of %s: %s", rows[i].index, rows[i].array, r->ctx.diag.data);
    if (strcmp(ret_of(r), rows[i].view) != 0)
      TEST_FAIL_("a[%s] of %s is %s, numba says %s", rows[i].index, rows[i].array, ret_of(r),
                 rows[i].view);
  }
  /* what is refused: too many indices, a zero step, assigning to a view, non-integer bounds */
  run *r = infer_src("def f(a, b):\n    return a[b, b, 1:]\n", "f", "(float32[:, ::1], int64)", 1);
  ASSERT_CONTAINS(error_of(r), "cannot index array(float32, 2d, C) with 3 indices");
  r = infer_src("def f(a, b):\n    return a[::0]\n", "f", "(float32[::1], int64)", 1);
  ASSERT_CONTAINS(error_of(r), "slice step cannot be zero");
  r = infer_src("def f(a, b):\n    a[1:] = a\n", "f", "(float32[::1], int64)", 1);
  ASSERT_CONTAINS(error_of(r), "assigning array(float32, 1d, C) to an array slice is not "
                               "supported");
  r = infer_src("def f(a, b):\n    a[1:] = b\n", "f", "(float32[::1], int64)", 1);
  ASSERT(r->ok); /* a number fills the slice */
  r = infer_src("def f(a, b):\n    return a[1.5:]\n", "f", "(float32[::1], int64)", 1);
  ASSERT_CONTAINS(error_of(r), "slice indices must be integers or None, not float64");
  r = infer_src("def f(a, b):\n    return a[..., b, ...]\n", "f", "(float32[:, ::1], int64)", 1);
  ASSERT_CONTAINS(error_of(r), "Only one ellipsis allowed in array indices");
  r = infer_src("def f(a, b):\n    x = ...\n    return b\n", "f", "(float32[::1], int64)", 1);
  ASSERT_CONTAINS(error_of(r), "Ellipsis (...) is only supported as an array index");
  r = infer_src("def f(a, b):\n    return a[None, b, b, b]\n", "f", "(float32[:, ::1], int64)",
                1);
  ASSERT_CONTAINS(error_of(r), "cannot index array(float32, 2d, C) with 3 indices");
  /* a view keeps its array's read-only-ness and elements read from it are its dtype */
  r = infer_src("def f(a, b):\n    row = a[b]\n    return row[1:][0]\n", "f",
                "(float32[:, ::1], int64)", 1);
  ASSERT_STREQ(ret_of(r), "float32");
  ASSERT_STREQ(var_of(r, "row"), "array(float32, 1d, C)");
}

TEST_LIST(X(corpus_return_types) X(corpus_variables) X(apply_gelu_specialises_callee)
              X(calls_are_cached_per_types) X(fixed_point_and_unification)
                  X(declared_return_casts) X(nonnegative_indices) X(calls_recorded)
                      X(error_messages) X(use_before_assignment_and_with) X(dump)
                          X(array_views_have_numbas_types))
TEST_MAIN()
