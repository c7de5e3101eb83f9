/* resolve.c — a source file as a module: loading it (lex + parse), finding its functions,
 * and the default resolver of global names, used when the caller supplies none (the CLI,
 * nbc_compile without a resolver).
 *
 * The Python layer resolves a kernel's globals from the function's real __globals__. Here
 * there is only the text, so the module's top level is interpreted statically, once, at
 * load time, into a table of bindings:
 *
 *  - `NAME = <expr>`: the expression is evaluated when it is a constant — literals,
 *    arithmetic over them and over constants bound earlier, math.pi and friends, int(),
 *    float(), abs(), bool(), min(), max() — with Python's semantics (floor division,
 *    modulo sign, int/int -> float, overflow of int64 = not representable -> OTHER).
 *    int -> NBC_GLOBAL_INT, float -> FLOAT, bool -> BOOL, a tuple of those (or of such
 *    tuples) -> TUPLE,
 *    anything else -> OTHER.
 *    `NAME = other_name` copies the binding; `g = cuda.grid`, `add = cuda.atomic.add` and
 *    `add = atomic.add` (atomic a CUDA_NAME) -> CUDA_NAME "grid", "atomic.add";
 *    `f = cuda.jit(f)` and `f = cuda.jit(device=True)(f)` keep f a function.
 *  - imports: `import math [as m]` -> MODULE_MATH; `from math import sqrt [as s]` ->
 *    MATH_FUNCTION "sqrt" (and pi, e, tau, inf, nan -> FLOAT); `import nbcuda [as cuda]`,
 *    `import numba.cuda as cuda`, `from numba import cuda`, `from nbcuda import cuda` ->
 *    MODULE_CUDA; `from numba|nbcuda|numba.types|numba.core.types import float32 [as f]`
 *    -> TYPE "float32"; `from nbcuda|numba.cuda import grid, atomic [as a]` -> CUDA_NAME
 *    "grid", "atomic" (the kernel-language names of lib_cuda.c; other members -> OTHER);
 *    `import numpy [as np]` -> MODULE_NUMPY; `from numpy import float32, sqrt, pi` -> TYPE
 *    (numba's name of the dtype), NUMPY_FUNCTION (numpy's name of the ufunc), FLOAT
 *    (lib_numpy.c says which names kernels use). np.pi and friends also fold in constant
 *    expressions. A module of the program — a file next to this one, found as Python 3 finds
 *    absolute imports (module_file) — binds MODULE (`import helpers [as h]`, `import pkg.sub`
 *    binds pkg) or a name imported from it (`from helpers import f`); the file is read on
 *    the first resolution through it, which then resolves the rest of the name in it
 *    ("helpers.f", "pkg.sub.f": a package's modules are its attributes). Any other module or
 *    member -> OTHER.
 *  - `def f` -> FUNCTION (the whole file as its source, this module resolving its globals),
 *    marked forceinline when decorated `@cuda.jit(device=True, forceinline=True)` (or
 *    `@jit(...)`, or inline="always"), as the Python module marks such a device function,
 *    so its callers get it alwaysinline; `f = cuda.jit(forceinline=True)(f)` marks it too.
 *  - class names, loop targets and anything else bound at the top level -> OTHER.
 *
 * Statements run top to bottom, so a later unconditional binding replaces an earlier one.
 * Bindings inside `if`, `try`/`except`, loops are conditional: they apply only when the
 * name is not bound yet. That makes the common
 *     try: import nbcuda as cuda
 *     except ImportError: from numba import cuda
 * resolve `cuda` through its first binding, and keeps host code at the end of a file
 * (`if __name__ == "__main__": N = ...`) from overriding the constants kernels use.
 * Builtins (range, len, abs, ...) are not bound here: infer.c handles a name the resolver
 * does not know.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "compiler/compiler.h"

typedef struct nbc__binding {
  const char *name; /* NULL: empty slot */
  nbc_global_t g;
  nbc__node *def; /* the FUNCDEF the name was bound to by `def`, if any */
  /* A module of the program (`import helpers`, `from helpers import f`): its file, the
   * attribute bound (NULL: the module itself), the module once loaded, or a failed load. */
  const char *path, *attr;
  nbc__module *loaded;
  bool load_failed;
  /* Bound by a top-level statement that does not parse (skipped, see parse_each_statement):
   * its syntax error, reported when the code reaches the name; NULL otherwise. */
  const char *syntax_error;
  nbc_status_t syntax_status;
  nbc_error_kind_t syntax_kind;
} nbc__binding;

typedef struct builder {
  nbc__ctx *ctx;
  nbc__module *m;
} builder;

/* ------------------------------------------------------------------- the table --- */

static nbc__binding *lookup(const nbc__module *m, const char *name) {
  if (!m->capindex || !name) return NULL;
  uint32_t mask = (uint32_t)m->capindex - 1;
  for (uint32_t i = nbc__hash_name(name) & mask;; i = (i + 1) & mask) {
    if (!m->index[i]) return NULL;
    nbc__binding *b = &m->bindings[m->index[i] - 1];
    if (strcmp(b->name, name) == 0) return b;
  }
}

/* Puts binding number k into the index (which has room). */
static void index_binding(nbc__module *m, int k) {
  uint32_t mask = (uint32_t)m->capindex - 1, j = nbc__hash_name(m->bindings[k].name) & mask;
  while (m->index[j])
    j = (j + 1) & mask;
  m->index[j] = k + 1;
}

/* Room for one more binding: the array of bindings grows in place (a block of its own,
 * nothing left behind), the index is made anew at twice the size. A module of 100,000
 * functions binds as many names, and a table of whole bindings doubled in the arena took
 * ten times the size of its source. */
static bool binding_room(builder *bd) {
  nbc__module *m = bd->m;
  if (m->nbindings == m->capbindings) {
    int cap = m->capbindings ? m->capbindings * 2 : 16;
    size_t size = sizeof *m->bindings * (size_t)cap;
    nbc__binding *grown = m->bindings ? nbc__arena_block_resize(bd->ctx->arena, m->bindings, size)
                                      : nbc__arena_block_alloc(bd->ctx->arena, size);
    if (!grown) return false;
    m->bindings = grown;
    m->capbindings = cap;
  }
  if ((m->nbindings + 1) * 2 > m->capindex) {
    int cap = m->capindex ? m->capindex * 2 : 32;
    int *index = nbc__arena_alloc(bd->ctx->arena, sizeof *index * (size_t)cap);
    if (!index) return false;
    m->index = index;
    m->capindex = cap;
    for (int k = 0; k < m->nbindings; k++) index_binding(m, k);
  }
  return true;
}

/* The slot for name, inserted empty (g.kind UNDEFINED) if absent; NULL when out of memory. */
static nbc__binding *slot(builder *bd, const char *name) {
  nbc__module *m = bd->m;
  nbc__binding *b = lookup(m, name);
  if (b) return b;
  if (!binding_room(bd)) {
    nbc__diag_oom(bd->ctx);
    return NULL;
  }
  b = &m->bindings[m->nbindings];
  memset(b, 0, sizeof *b);
  b->name = name;
  index_binding(m, m->nbindings++);
  return b;
}

/* Binds name to g: always when unconditional, only if unbound when conditional. */
static void bind(builder *bd, const char *name, nbc_global_t g, bool conditional) {
  if (!name) return;
  nbc__binding *b = slot(bd, name);
  if (!b || (conditional && b->g.kind != NBC_GLOBAL_UNDEFINED)) return;
  b->g = g;
  b->path = b->attr = NULL;
  b->loaded = NULL;
  b->load_failed = false;
  b->syntax_error = NULL;
}

static nbc_global_t other(void) {
  nbc_global_t g = {0};
  g.kind = NBC_GLOBAL_OTHER;
  return g;
}

static nbc_global_t of_kind(nbc_global_kind_t kind, const char *name) {
  nbc_global_t g = {0};
  g.kind = kind;
  g.name = name;
  return g;
}

/* -------------------------------------------------------- constant expressions --- */

typedef struct value {
  nbc_global_kind_t kind; /* INT, FLOAT, BOOL or OTHER */
  int64_t i;
  double f;
} value;

static const value OTHER_VALUE = {NBC_GLOBAL_OTHER, 0, 0.0};

static value int_value(int64_t i) {
  value v = {NBC_GLOBAL_INT, i, 0.0};
  return v;
}
static value float_value(double f) {
  value v = {NBC_GLOBAL_FLOAT, 0, f};
  return v;
}
static value bool_value(bool b) {
  value v = {NBC_GLOBAL_BOOL, b, 0.0};
  return v;
}

static bool is_num(value v) {
  return v.kind == NBC_GLOBAL_INT || v.kind == NBC_GLOBAL_FLOAT || v.kind == NBC_GLOBAL_BOOL;
}
static double as_float(value v) {
  return v.kind == NBC_GLOBAL_FLOAT ? v.f : (double)v.i;
}
static bool truthy(value v) {
  return v.kind == NBC_GLOBAL_FLOAT ? v.f != 0.0 : v.i != 0;
}

static const struct {
  const char *name;
  double value;
} math_constants[] = {{"pi", 3.141592653589793},
                      {"e", 2.718281828459045},
                      {"tau", 6.283185307179586},
                      {"inf", INFINITY},
                      {"nan", NAN}};

bool nbc__math_constant(const char *name, double *pv) {
  for (size_t i = 0; i < sizeof math_constants / sizeof math_constants[0]; i++)
    if (strcmp(math_constants[i].name, name) == 0) {
      *pv = math_constants[i].value;
      return true;
    }
  return false;
}

/* Python's float divmod (Objects/floatobject.c). */
static void float_divmod(double a, double b, double *pdiv, double *pmod) {
  double mod = fmod(a, b), div = (a - mod) / b;
  if (mod != 0.0) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= 1.0;
    }
  } else {
    mod = copysign(0.0, b);
  }
  double floordiv;
  if (div != 0.0) {
    floordiv = floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
  } else {
    floordiv = copysign(0.0, a / b);
  }
  *pdiv = floordiv;
  *pmod = mod;
}

static value int_pow(int64_t a, int64_t b) {
  if (b < 0) {
    if (a == 0) return OTHER_VALUE; /* ZeroDivisionError */
    return float_value(pow((double)a, (double)b));
  }
  int64_t r = 1;
  while (b > 0) {
    if ((b & 1) && __builtin_mul_overflow(r, a, &r)) return OTHER_VALUE;
    b >>= 1;
    if (b > 0 && __builtin_mul_overflow(a, a, &a)) return OTHER_VALUE;
  }
  return int_value(r);
}

static value int_binop(nbc__op op, value x, value y) {
  int64_t a = x.i, b = y.i, r;
  bool both_bool = x.kind == NBC_GLOBAL_BOOL && y.kind == NBC_GLOBAL_BOOL;
  switch (op) {
  case NBC__OP_ADD:
    return __builtin_add_overflow(a, b, &r) ? OTHER_VALUE : int_value(r);
  case NBC__OP_SUB:
    return __builtin_sub_overflow(a, b, &r) ? OTHER_VALUE : int_value(r);
  case NBC__OP_MUL:
    return __builtin_mul_overflow(a, b, &r) ? OTHER_VALUE : int_value(r);
  case NBC__OP_DIV:
    return b == 0 ? OTHER_VALUE : float_value((double)a / (double)b);
  case NBC__OP_FLOORDIV:
    if (b == 0 || (a == INT64_MIN && b == -1)) return OTHER_VALUE;
    r = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) r--;
    return int_value(r);
  case NBC__OP_MOD:
    if (b == 0) return OTHER_VALUE;
    if (b == -1) return int_value(0);
    r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return int_value(r);
  case NBC__OP_POW:
    return int_pow(a, b);
  case NBC__OP_LSHIFT:
    if (b < 0) return OTHER_VALUE;
    if (a == 0) return int_value(0);
    if (b >= 63) return OTHER_VALUE;
    r = (int64_t)((uint64_t)a << b);
    return (r >> b) == a ? int_value(r) : OTHER_VALUE;
  case NBC__OP_RSHIFT:
    if (b < 0) return OTHER_VALUE;
    if (b >= 63) return int_value(a < 0 ? -1 : 0);
    return int_value(a >= 0 ? a >> b : ~(~a >> b));
  case NBC__OP_BITAND:
    return both_bool ? bool_value(a & b) : int_value(a & b);
  case NBC__OP_BITOR:
    return both_bool ? bool_value(a | b) : int_value(a | b);
  case NBC__OP_BITXOR:
    return both_bool ? bool_value(a ^ b) : int_value(a ^ b);
  default:
    return OTHER_VALUE;
  }
}

static value float_binop(nbc__op op, double a, double b) {
  double d, m;
  switch (op) {
  case NBC__OP_ADD:
    return float_value(a + b);
  case NBC__OP_SUB:
    return float_value(a - b);
  case NBC__OP_MUL:
    return float_value(a * b);
  case NBC__OP_DIV:
    return b == 0.0 ? OTHER_VALUE : float_value(a / b);
  case NBC__OP_FLOORDIV:
  case NBC__OP_MOD:
    if (b == 0.0) return OTHER_VALUE;
    float_divmod(a, b, &d, &m);
    return float_value(op == NBC__OP_MOD ? m : d);
  case NBC__OP_POW:
    if (a == 0.0 && b < 0.0) return OTHER_VALUE;      /* ZeroDivisionError */
    if (a < 0.0 && b != floor(b)) return OTHER_VALUE; /* a complex result */
    d = pow(a, b);
    if (isinf(d) && isfinite(a) && isfinite(b)) return OTHER_VALUE; /* OverflowError */
    return float_value(d);
  default:
    return OTHER_VALUE; /* shifts and bitwise operators need ints */
  }
}

static value eval(builder *bd, const nbc__node *n);

static value eval_binop(nbc__op op, value x, value y) {
  if (!is_num(x) || !is_num(y)) return OTHER_VALUE;
  if (x.kind == NBC_GLOBAL_FLOAT || y.kind == NBC_GLOBAL_FLOAT)
    return float_binop(op, as_float(x), as_float(y));
  return int_binop(op, x, y);
}

static value eval_unary(nbc__op op, value x) {
  if (!is_num(x)) return OTHER_VALUE;
  switch (op) {
  case NBC__OP_NOT:
    return bool_value(!truthy(x));
  case NBC__OP_POS:
    return x.kind == NBC_GLOBAL_BOOL ? int_value(x.i) : x;
  case NBC__OP_NEG:
    if (x.kind == NBC_GLOBAL_FLOAT) return float_value(-x.f);
    return x.i == INT64_MIN ? OTHER_VALUE : int_value(-x.i);
  case NBC__OP_INVERT:
    return x.kind == NBC_GLOBAL_FLOAT ? OTHER_VALUE : int_value(~x.i);
  default:
    return OTHER_VALUE;
  }
}

static bool compare(nbc__op op, value x, value y, bool *pr) {
  if (!is_num(x) || !is_num(y)) return false;
  bool floats = x.kind == NBC_GLOBAL_FLOAT || y.kind == NBC_GLOBAL_FLOAT;
  double a = as_float(x), b = as_float(y);
  int64_t i = x.i, j = y.i;
  switch (op) {
  case NBC__OP_EQ:
    *pr = floats ? a == b : i == j;
    return true;
  case NBC__OP_NE:
    *pr = floats ? a != b : i != j;
    return true;
  case NBC__OP_LT:
    *pr = floats ? a < b : i < j;
    return true;
  case NBC__OP_LE:
    *pr = floats ? a <= b : i <= j;
    return true;
  case NBC__OP_GT:
    *pr = floats ? a > b : i > j;
    return true;
  case NBC__OP_GE:
    *pr = floats ? a >= b : i >= j;
    return true;
  default:
    return false;
  }
}

/* A call of a builtin the module has not rebound: int, float, bool, abs, min, max. */
static value eval_call(builder *bd, const nbc__node *n) {
  if (n->a->kind != NBC__N_NAME || lookup(bd->m, n->a->str)) return OTHER_VALUE;
  const char *f = n->a->str;
  int argc = n->list.count;
  value args[8];
  if (argc < 1 || argc > 8) return OTHER_VALUE;
  for (int i = 0; i < argc; i++) {
    if (n->list.items[i]->kind == NBC__N_KEYWORD) return OTHER_VALUE;
    args[i] = eval(bd, n->list.items[i]);
    if (!is_num(args[i])) return OTHER_VALUE;
  }
  value x = args[0];
  if (strcmp(f, "min") == 0 || strcmp(f, "max") == 0) {
    if (argc < 2) return OTHER_VALUE;
    bool is_max = f[1] == 'a';
    value best = x;
    for (int i = 1; i < argc; i++) {
      bool better;
      if (!compare(is_max ? NBC__OP_GT : NBC__OP_LT, args[i], best, &better))
        return OTHER_VALUE;
      if (better) best = args[i];
    }
    return best;
  }
  if (argc != 1) return OTHER_VALUE;
  if (strcmp(f, "int") == 0) {
    if (x.kind != NBC_GLOBAL_FLOAT) return int_value(x.i);
    if (!isfinite(x.f) || x.f >= 9223372036854775808.0 || x.f < -9223372036854775808.0)
      return OTHER_VALUE;
    return int_value((int64_t)x.f);
  }
  if (strcmp(f, "float") == 0) return float_value(as_float(x));
  if (strcmp(f, "bool") == 0) return bool_value(truthy(x));
  if (strcmp(f, "abs") == 0) {
    if (x.kind == NBC_GLOBAL_FLOAT) return float_value(fabs(x.f));
    return x.i == INT64_MIN ? OTHER_VALUE : int_value(x.i < 0 ? -x.i : x.i);
  }
  return OTHER_VALUE;
}

/* Evaluates a constant expression over the bindings made so far. */
static value eval(builder *bd, const nbc__node *n) {
  if (!n) return OTHER_VALUE;
  value x, y;
  const nbc__binding *b;
  double f;
  switch (n->kind) {
  case NBC__N_INT:
    return n->big ? OTHER_VALUE : int_value(n->value.i);
  case NBC__N_FLOAT:
    return float_value(n->value.f);
  case NBC__N_BOOL:
    return bool_value(n->value.i != 0);
  case NBC__N_NAME:
    b = lookup(bd->m, n->str);
    if (!b || !(b->g.kind == NBC_GLOBAL_INT || b->g.kind == NBC_GLOBAL_FLOAT ||
                b->g.kind == NBC_GLOBAL_BOOL))
      return OTHER_VALUE;
    x.kind = b->g.kind;
    x.i = b->g.kind == NBC_GLOBAL_FLOAT ? 0 : b->g.value.i;
    x.f = b->g.kind == NBC_GLOBAL_FLOAT ? b->g.value.f : 0.0;
    return x;
  case NBC__N_ATTR:
    if (n->a->kind != NBC__N_NAME) return OTHER_VALUE;
    b = lookup(bd->m, n->a->str);
    if (b && b->g.kind == NBC_GLOBAL_MODULE_MATH && nbc__math_constant(n->str, &f))
      return float_value(f);
    if (b && b->g.kind == NBC_GLOBAL_MODULE_NUMPY && nbc__numpy_constant(n->str, &f))
      return float_value(f);
    return OTHER_VALUE;
  case NBC__N_UNARY:
    return eval_unary(n->op, eval(bd, n->a));
  case NBC__N_BINOP:
    return eval_binop(n->op, eval(bd, n->a), eval(bd, n->b));
  case NBC__N_BOOLOP:
    x = eval(bd, n->a);
    if (!is_num(x)) return OTHER_VALUE;
    if (n->op == NBC__OP_AND ? !truthy(x) : truthy(x)) return x;
    return eval(bd, n->b);
  case NBC__N_COMPARE:
    x = eval(bd, n->a);
    for (int i = 0; i < n->list.count; i++) {
      bool r;
      y = eval(bd, n->list.items[i]);
      if (!compare(n->ops[i], x, y, &r)) return OTHER_VALUE;
      if (!r) return bool_value(false);
      x = y;
    }
    return bool_value(true);
  case NBC__N_IFEXP:
    x = eval(bd, n->a);
    if (!is_num(x)) return OTHER_VALUE;
    return eval(bd, truthy(x) ? n->b : n->c);
  case NBC__N_CALL:
    return eval_call(bd, n);
  default:
    return OTHER_VALUE;
  }
}

/* -------------------------------------------------------------------- bindings --- */

static bool is_jit(const nbc__node *callee) {
  return callee && ((callee->kind == NBC__N_ATTR && strcmp(callee->str, "jit") == 0) ||
                    (callee->kind == NBC__N_NAME && strcmp(callee->str, "jit") == 0));
}

/* Whether `jit(...)` (a CALL of cuda.jit or jit, as a decorator or applied to a function)
 * asks for the function to be inlined into its callers: forceinline=True (numba-cuda's
 * `alwaysinline` in the NVVM IR) or inline="always" (numba's inlining at its own IR level;
 * the deprecated inline=True means the same), which nbcuda does with alwaysinline too. The
 * values are read as constant expressions, so `forceinline=INLINE` works when INLINE is a
 * constant bound earlier. */
static bool jit_inlines(builder *bd, const nbc__node *call) {
  if (!call || call->kind != NBC__N_CALL || !is_jit(call->a)) return false;
  bool inlines = false;
  for (int i = 0; i < call->list.count; i++) {
    const nbc__node *k = call->list.items[i];
    if (k->kind != NBC__N_KEYWORD || !k->str) continue;
    if (strcmp(k->str, "forceinline") == 0)
      inlines = inlines || truthy(eval(bd, k->a));
    else if (strcmp(k->str, "inline") == 0)
      inlines = inlines || (k->a->kind == NBC__N_STR ? strcmp(k->a->str, "always") == 0
                                                     : truthy(eval(bd, k->a)));
  }
  return inlines;
}

/* The signatures `jit("int32(int32)", device=True)` (or a list of them) gives: the text,
 * several joined by ';'; NULL when it gives none as string literals. */
static const char *jit_signature(builder *bd, const nbc__node *call) {
  if (!call || call->kind != NBC__N_CALL || !is_jit(call->a) || !call->list.count) return NULL;
  const nbc__node *sig = call->list.items[0];
  if (sig->kind == NBC__N_STR) return sig->str;
  if (sig->kind != NBC__N_LIST || !sig->list.count) return NULL;
  nbc__buf b;
  nbc__buf_init(&b, bd->ctx->arena);
  for (int i = 0; i < sig->list.count; i++) {
    if (sig->list.items[i]->kind != NBC__N_STR || !sig->list.items[i]->str) return NULL;
    nbc__buf_printf(&b, "%s%s", i ? ";" : "", sig->list.items[i]->str);
  }
  return b.data;
}

/* `cuda.jit(f)` or `cuda.jit(...)(f)` of a function f of this module: f's binding. */
static const nbc__binding *jit_wrapped(const builder *bd, const nbc__node *v) {
  if (v->kind != NBC__N_CALL || v->list.count != 1) return NULL;
  const nbc__node *arg = v->list.items[0];
  if (arg->kind != NBC__N_NAME) return NULL;
  bool jit = is_jit(v->a) || (v->a->kind == NBC__N_CALL && is_jit(v->a->a));
  const nbc__binding *b = jit ? lookup(bd->m, arg->str) : NULL;
  return b && b->g.kind == NBC_GLOBAL_FUNCTION ? b : NULL;
}

/* The kernel-language name an attribute denotes: `cuda.grid` -> "grid", `cuda.atomic.add`
 * and `atomic.add` (atomic imported from the cuda module) -> "atomic.add"; NULL when it is
 * none (lib_cuda.c lists them). */
static const char *cuda_name_of(const builder *bd, const nbc__node *v) {
  if (v->kind != NBC__N_ATTR || !v->a) return NULL;
  const char *base = NULL;
  if (v->a->kind == NBC__N_NAME) {
    const nbc__binding *b = lookup(bd->m, v->a->str);
    if (!b || (b->g.kind != NBC_GLOBAL_MODULE_CUDA && b->g.kind != NBC_GLOBAL_CUDA_NAME))
      return NULL;
    base = b->g.kind == NBC_GLOBAL_CUDA_NAME ? b->g.name : NULL;
  } else {
    base = cuda_name_of(bd, v->a);
    if (!base) return NULL;
  }
  const nbc_kernel_name_t *k =
      base ? nbc__cuda_member_find(base, v->str) : nbc__cuda_name_find(v->str);
  return k ? k->name : NULL;
}

/* What `name = v` binds name to. */
static nbc_global_t value_of(builder *bd, const nbc__node *v) {
  if (v->kind == NBC__N_NAME) {
    const nbc__binding *b = lookup(bd->m, v->str);
    if (b && b->g.kind != NBC_GLOBAL_UNDEFINED) return b->g;
  }
  const char *cuda_name = cuda_name_of(bd, v);
  if (cuda_name) return of_kind(NBC_GLOBAL_CUDA_NAME, cuda_name);
  const nbc__binding *f = jit_wrapped(bd, v);
  if (f) {
    nbc_global_t g = f->g;
    if (jit_inlines(bd, v->a)) g.forceinline = 1;
    const char *sig = jit_signature(bd, v->a);
    if (sig) g.signature = sig;
    return g;
  }
  if (v->kind == NBC__N_TUPLE && v->list.count <= 64) { /* a tuple of constants */
    nbc_global_t *items =
        nbc__arena_alloc(bd->ctx->arena, sizeof *items * (size_t)(v->list.count + 1));
    if (!items) return other();
    for (int i = 0; i < v->list.count; i++) {
      items[i] = value_of(bd, v->list.items[i]);
      nbc_global_kind_t k = items[i].kind;
      if (k != NBC_GLOBAL_INT && k != NBC_GLOBAL_FLOAT && k != NBC_GLOBAL_BOOL &&
          k != NBC_GLOBAL_TUPLE)
        return other();
    }
    nbc_global_t g = {0};
    g.kind = NBC_GLOBAL_TUPLE;
    g.tuple_items = items;
    g.tuple_count = v->list.count;
    return g;
  }
  nbc_global_t g = {0};
  if (v->kind == NBC__N_NONE) { /* `ALIGN = None` */
    g.kind = NBC_GLOBAL_NONE;
    return g;
  }
  value x = eval(bd, v);
  g.kind = x.kind;
  if (x.kind == NBC_GLOBAL_FLOAT)
    g.value.f = x.f;
  else
    g.value.i = x.i;
  return g;
}

/* Binds every name of a target to OTHER (loop targets, unpacking of non-constants). */
static void bind_other(builder *bd, const nbc__node *t, bool conditional) {
  if (t->kind == NBC__N_NAME) {
    bind(bd, t->str, other(), conditional);
  } else if (t->kind == NBC__N_TUPLE || t->kind == NBC__N_LIST) {
    for (int i = 0; i < t->list.count; i++)
      bind_other(bd, t->list.items[i], conditional);
  } else if (t->kind == NBC__N_OTHER_EXPR && t->a) {
    bind_other(bd, t->a, conditional); /* *rest */
  }
}

static void bind_assign(builder *bd, const nbc__node *target, const nbc__node *v,
                        bool conditional) {
  if (target->kind == NBC__N_NAME) {
    bind(bd, target->str, value_of(bd, v), conditional);
  } else if ((target->kind == NBC__N_TUPLE || target->kind == NBC__N_LIST) &&
             (v->kind == NBC__N_TUPLE || v->kind == NBC__N_LIST) &&
             target->list.count == v->list.count) {
    for (int i = 0; i < target->list.count; i++)
      bind_assign(bd, target->list.items[i], v->list.items[i], conditional);
  } else {
    bind_other(bd, target, conditional);
  }
}

static bool is_type_name(const char *s) {
  static const char *const names[] = {
      "boolean", "bool_",     "b1",         "int8",    "int16", "int32", "int64", "uint8",
      "uint16",  "uint32",    "uint64",     "i1",      "i2",    "i4",    "i8",    "u1",
      "u2",      "u4",        "u8",         "intp",    "uintp", "intc",  "uintc", "int_",
      "uint",    "float16",   "float32",    "float64", "f2",    "f4",    "f8",    "float_",
      "double",  "complex64", "complex128", "c8",      "c16"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(names[i], s) == 0) return true;
  return false;
}

static bool is_cuda_module(const char *m) {
  return strcmp(m, "nbcuda") == 0 || strcmp(m, "numba.cuda") == 0 ||
         strcmp(m, "nbcuda.cuda") == 0;
}

/* numba and its modules of types: `import numba as nb`, `import numba.types as nt`. */
static bool is_numba_types(const char *mod) {
  return strcmp(mod, "numba") == 0 || strcmp(mod, "numba.types") == 0 ||
         strcmp(mod, "numba.core.types") == 0 || strcmp(mod, "numba.cuda.types") == 0 ||
         strcmp(mod, "nbcuda.types") == 0;
}

/* ------------------------------------------------------- modules of the program --- */

/* The file of module `mod` (dotted) of the program, found as Python 3 finds an absolute
 * import: in the directory of the importing file or, when that directory is a package (it
 * has an __init__.py), in the first directory above it that is not (the program's root, where
 * `import helpers` of pkg/ops.py finds helpers.py): <dir>/mod.py, else the package
 * <dir>/mod/__init__.py (pkg.mod: <dir>/pkg/mod.py ...). NULL when there is none, for relative
 * imports, and for a source that is not a file ("<string>"). in_package: a submodule of the
 * package whose __init__.py `from` is, in its own directory. */
static const char *module_file(nbc__ctx *ctx, const nbc__file *from, const char *mod,
                               bool in_package) {
  if (!from || !from->name || !from->name[0] || from->name[0] == '<' || !mod[0] ||
      mod[0] == '.')
    return NULL;
  const char *slash = strrchr(from->name, '/');
  /* dir: "" (the working directory) or ending in '/' */
  const char *dir =
      slash ? nbc__arena_printf(ctx->arena, "%.*s", (int)(slash - from->name) + 1, from->name)
            : "";
  for (int up = 0; dir && !in_package && up < 16; up++) {
    const char *init = nbc__arena_printf(ctx->arena, "%s__init__.py", dir);
    if (!init || access(init, R_OK) != 0) break;
    dir = nbc__arena_printf(ctx->arena, "%s../", dir);
  }
  char *base = dir ? nbc__arena_printf(ctx->arena, "%s%s", dir, mod) : NULL;
  if (!base) return NULL;
  for (char *p = base + strlen(dir); *p; p++)
    if (*p == '.') *p = '/';
  const char *py = nbc__arena_printf(ctx->arena, "%s.py", base);
  if (py && access(py, R_OK) == 0) return py;
  const char *init = nbc__arena_printf(ctx->arena, "%s/__init__.py", base);
  return init && access(init, R_OK) == 0 ? init : NULL;
}

/* Binds name to module file path (attr NULL) or to attribute attr of it; the module is read
 * when a kernel first uses the name (nbc__module_resolve). */
static void bind_program_module(builder *bd, const char *name, const char *path,
                                const char *attr, bool conditional) {
  nbc__binding *b = slot(bd, name);
  if (!b || (conditional && b->g.kind != NBC_GLOBAL_UNDEFINED)) return;
  b->g = attr ? other() : of_kind(NBC_GLOBAL_MODULE, name);
  b->def = NULL;
  b->path = path;
  b->attr = attr;
  b->loaded = NULL;
  b->load_failed = false;
}

static void bind_import(builder *bd, const nbc__node *s, bool conditional) {
  for (int i = 0; i < s->list.count; i++) {
    const nbc__node *item = s->list.items[i];
    const char *mod = item->str;
    if (item->alias) {
      nbc_global_t g = strcmp(mod, "math") == 0    ? of_kind(NBC_GLOBAL_MODULE_MATH, "math")
                       : strcmp(mod, "cmath") == 0 ? of_kind(NBC_GLOBAL_MODULE_CMATH, "cmath")
                       : is_cuda_module(mod)       ? of_kind(NBC_GLOBAL_MODULE_CUDA, "cuda")
                       : strcmp(mod, "numpy") == 0 ? of_kind(NBC_GLOBAL_MODULE_NUMPY, "numpy")
                       : is_numba_types(mod)       ? of_kind(NBC_GLOBAL_MODULE_NUMBA, "numba")
                       : strcmp(mod, "operator") == 0
                           ? of_kind(NBC_GLOBAL_MODULE_OPERATOR, "operator")
                           : other();
      const char *path =
          g.kind == NBC_GLOBAL_OTHER ? module_file(bd->ctx, bd->m->file, mod, false) : NULL;
      if (path)
        bind_program_module(bd, item->alias, path, NULL, conditional);
      else
        bind(bd, item->alias, g, conditional);
      continue;
    }
    /* `import a.b` binds a. */
    const char *dot = strchr(mod, '.');
    const char *first =
        dot ? nbc__arena_strndup(bd->ctx->arena, mod, (size_t)(dot - mod)) : mod;
    if (!first) {
      nbc__diag_oom(bd->ctx);
      return;
    }
    nbc_global_t g = strcmp(first, "math") == 0     ? of_kind(NBC_GLOBAL_MODULE_MATH, "math")
                     : strcmp(first, "cmath") == 0  ? of_kind(NBC_GLOBAL_MODULE_CMATH, "cmath")
                     : strcmp(first, "nbcuda") == 0 ? of_kind(NBC_GLOBAL_MODULE_CUDA, "cuda")
                     : strcmp(first, "numpy") == 0  ? of_kind(NBC_GLOBAL_MODULE_NUMPY, "numpy")
                     : strcmp(first, "numba") == 0  ? of_kind(NBC_GLOBAL_MODULE_NUMBA, "numba")
                     : strcmp(first, "operator") == 0
                         ? of_kind(NBC_GLOBAL_MODULE_OPERATOR, "operator")
                         : other();
    const char *path =
        g.kind == NBC_GLOBAL_OTHER ? module_file(bd->ctx, bd->m->file, first, false) : NULL;
    if (path)
      bind_program_module(bd, first, path, NULL, conditional);
    else
      bind(bd, first, g, conditional);
  }
}

/* The modules of numba.cuda's half-precision functions: nbcuda.bf16 / numba.cuda.bf16 (and
 * the bindings numba-cuda generates them into), nbcuda.fp16 / numba.cuda.fp16. */
static bool half_module(const char *mod) {
  static const char *const mods[] = {"numba.cuda.bf16", "nbcuda.bf16",
                                     "numba.cuda._internal.cuda_bf16", "numba.cuda.fp16",
                                     "nbcuda.fp16"};
  for (size_t i = 0; i < sizeof mods / sizeof mods[0]; i++)
    if (strcmp(mod, mods[i]) == 0) return true;
  return false;
}

static void bind_import_from(builder *bd, const nbc__node *s, bool conditional) {
  const char *mod = s->str;
  bool types_module = strcmp(mod, "numba") == 0 || strcmp(mod, "nbcuda") == 0 ||
                      strcmp(mod, "numba.cuda") == 0 || is_numba_types(mod);
  for (int i = 0; i < s->list.count; i++) {
    const nbc__node *item = s->list.items[i];
    const char *name = item->str, *as = item->alias ? item->alias : item->str;
    if (strcmp(name, "*") == 0) continue; /* names unknown without importing */
    nbc_global_t g = other();
    double f;
    if (strcmp(mod, "math") == 0 || strcmp(mod, "cmath") == 0) {
      if (nbc__math_constant(name, &f)) { /* cmath's float constants are math's */
        g.kind = NBC_GLOBAL_FLOAT;
        g.value.f = f;
      } else {
        g = of_kind(mod[0] == 'm' ? NBC_GLOBAL_MATH_FUNCTION : NBC_GLOBAL_CMATH_FUNCTION, name);
      }
    } else if (strcmp(mod, "operator") == 0) {
      g = of_kind(NBC_GLOBAL_OPERATOR_FUNCTION, name);
    } else if ((strcmp(mod, "numba") == 0 || strcmp(mod, "nbcuda") == 0) &&
               strcmp(name, "cuda") == 0) {
      g = of_kind(NBC_GLOBAL_MODULE_CUDA, "cuda");
    } else if ((strcmp(mod, "numba") == 0 || strcmp(mod, "numba.cuda") == 0 ||
                strcmp(mod, "nbcuda") == 0) &&
               strcmp(name, "types") == 0) { /* from numba.cuda import types */
      g = of_kind(NBC_GLOBAL_MODULE_NUMBA, "numba");
    } else if (types_module && is_type_name(name)) {
      g = of_kind(NBC_GLOBAL_TYPE, name);
    } else if ((is_cuda_module(mod) || strcmp(mod, "numba.cuda.stubs") == 0 ||
                strcmp(mod, "numba.cuda.intrinsics") == 0) &&
               nbc__cuda_name_find(name)) {
      g = of_kind(NBC_GLOBAL_CUDA_NAME, nbc__cuda_name_find(name)->name);
    } else if ((strcmp(mod, "numba") == 0 || strcmp(mod, "numba.np.numpy_support") == 0 ||
                strcmp(mod, "numba.cuda.np.numpy_support") == 0) &&
               (strcmp(name, "carray") == 0 || strcmp(name, "farray") == 0)) {
      g = of_kind(NBC_GLOBAL_CUDA_NAME, nbc__cuda_name_find(name)->name); /* numba's carray */
    } else if (half_module(mod)) { /* numba.cuda.bf16's and fp16's functions, bfloat16 */
      char full[160];
      snprintf(full, sizeof full, "%s.%s", strstr(mod, "bf16") ? "bf16" : "fp16", name);
      if (strcmp(name, "bfloat16") == 0 || strcmp(name, "nv_bfloat16") == 0)
        g = of_kind(NBC_GLOBAL_TYPE, "bfloat16");
      else if (nbc__cuda_name_find(full))
        g = of_kind(NBC_GLOBAL_CUDA_NAME, nbc__cuda_name_find(full)->name);
    } else if (strcmp(mod, "numpy") == 0) {
      const nbc__type *t = nbc__numpy_dtype(name);
      if (t)
        g = of_kind(NBC_GLOBAL_TYPE, nbc__type_name(bd->ctx, t)); /* numba's name */
      else if (nbc__numpy_constant(name, &f)) {
        g.kind = NBC_GLOBAL_FLOAT;
        g.value.f = f;
      } else if (nbc__numpy_ufunc(name))
        g = of_kind(NBC_GLOBAL_NUMPY_FUNCTION, nbc__numpy_ufunc(name));
    } else if (!types_module && !is_cuda_module(mod) && strcmp(mod, "numba.cuda.stubs") != 0 &&
               strcmp(mod, "numba.cuda.intrinsics") != 0 && !half_module(mod)) {
      const char *path = module_file(bd->ctx, bd->m->file, mod, false);
      if (path) {
        bind_program_module(bd, as, path, name, conditional);
        continue;
      }
    }
    bind(bd, as, g, conditional);
  }
}

static void bind_def(builder *bd, nbc__node *def, bool conditional) {
  nbc__binding *b = slot(bd, def->str);
  if (!b) return;
  if (conditional && b->g.kind != NBC_GLOBAL_UNDEFINED) return;
  const nbc__file *file = bd->m->file;
  nbc_global_t g = {0};
  g.kind = NBC_GLOBAL_FUNCTION;
  g.name = def->str;
  g.source = file->text;
  g.filename = file->name;
  g.first_line = file->first_line > 0 ? file->first_line : 1;
  g.col_offset = file->col_offset;
  g.resolver = NULL; /* this module */
  for (int i = 0; i < def->decorators.count; i++) {
    if (jit_inlines(bd, def->decorators.items[i])) g.forceinline = 1;
    const char *sig = jit_signature(bd, def->decorators.items[i]);
    if (sig) g.signature = sig;
  }
  b->g = g;
  b->def = def;
}

static void bind_body(builder *bd, const nbc__list *body, bool conditional);

static void bind_stmt(builder *bd, nbc__node *s, bool conditional) {
  switch (s->kind) {
  case NBC__N_FUNCDEF:
    bind_def(bd, s, conditional);
    break;
  case NBC__N_IMPORT:
    bind_import(bd, s, conditional);
    break;
  case NBC__N_IMPORT_FROM:
    bind_import_from(bd, s, conditional);
    break;
  case NBC__N_ASSIGN:
    /* `a = b = v`: every target gets v. */
    for (int i = 0; i < s->list.count; i++)
      bind_assign(bd, s->list.items[i], s->a, conditional);
    break;
  case NBC__N_AUGASSIGN:
    if (s->a->kind == NBC__N_NAME) {
      value v = eval_binop(s->op, eval(bd, s->a), eval(bd, s->b));
      nbc_global_t g = {0};
      g.kind = v.kind;
      if (v.kind == NBC_GLOBAL_FLOAT)
        g.value.f = v.f;
      else
        g.value.i = v.i;
      bind(bd, s->a->str, g, conditional);
    }
    break;
  case NBC__N_IF:
  case NBC__N_TRY:
  case NBC__N_WHILE:
    bind_body(bd, &s->body, true);
    bind_body(bd, &s->orelse, true);
    break;
  case NBC__N_FOR:
    bind_other(bd, s->a, true);
    bind_body(bd, &s->body, true);
    bind_body(bd, &s->orelse, true);
    break;
  case NBC__N_OTHER_STMT:
    if (nbc__tok_is(s->tok, "class") && s->str) bind(bd, s->str, other(), conditional);
    break;
  default:
    break;
  }
}

static void bind_body(builder *bd, const nbc__list *body, bool conditional) {
  for (int i = 0; i < body->count && bd->ctx->status == NBC_OK; i++)
    bind_stmt(bd, body->items[i], conditional);
}

/* ------------------------------------------------ statements that do not parse --- */

/* A file whose text does not parse as a whole (a script with `match`, PEP 695 `type X = ...`,
 * newer f-strings, anything the kernel language lacks) is parsed again one top-level statement
 * at a time, as CPython's own parser would see each; a statement that does not parse is left
 * out of the module, and the names it defines are bound to its syntax error, reported only
 * when the compiled function reaches one of them (nbc__module_report_unparsed). So
 * `nbcuda compile FILE.py:f` needs only what f reaches to be in the kernel language. */

/* The binding that keeps the first statement that does not parse, whatever it defines: a name
 * no Python code can spell. */
#define FIRST_UNPARSED " first unparsed statement"

typedef struct unparsed {
  int start, end; /* its tokens, [start, end) */
  int position;   /* the number of parsed statements before it */
  const char *error;
  nbc_status_t status;
  nbc_error_kind_t kind;
} unparsed;

/* Whether tok continues a compound statement after its block (`else:`, `except ...:`). */
static bool continues_statement(const nbc__token *tok) {
  return nbc__tok_is(tok, "else") || nbc__tok_is(tok, "elif") || nbc__tok_is(tok, "except") ||
         nbc__tok_is(tok, "finally");
}

/* One past the last token of the top-level statement starting at t[s], by its indentation:
 * its line (and its decorators' lines), then the indented block after it and the clauses
 * (else, except...) that follow at the same level. */
static int statement_end(const nbc__token *t, int count, int s) {
  int depth = 0;
  bool decorators = nbc__tok_is(&t[s], "@");
  for (int i = s; i < count; i++) {
    if (t[i].kind == NBC__TOK_EOF) return i;
    if (t[i].kind == NBC__TOK_INDENT) depth++;
    if (t[i].kind == NBC__TOK_DEDENT && --depth <= 0) {
      depth = 0;
      if (i + 1 >= count || !continues_statement(&t[i + 1])) return i + 1;
    }
    if (t[i].kind != NBC__TOK_NEWLINE || depth > 0 || i + 1 >= count) continue;
    const nbc__token *next = &t[i + 1];
    if (next->kind == NBC__TOK_INDENT) continue;
    if (decorators && nbc__tok_is(next, "@")) continue;
    if (decorators && (nbc__tok_is(next, "def") || nbc__tok_is(next, "class") ||
                       nbc__tok_is(next, "async"))) {
      decorators = false; /* the decorated statement's line comes next */
      continue;
    }
    return i + 1;
  }
  return count - 1;
}

/* Whether tok is the NAME s (a soft keyword such as `type`, which nbc__tok_is does not see). */
static bool name_is(const nbc__token *tok, const char *s) {
  return tok->kind == NBC__TOK_NAME && (size_t)tok->len == strlen(s) &&
         memcmp(nbc__tok_start(tok), s, (size_t)tok->len) == 0;
}

/* Binds name (the token's text; NULL: FIRST_UNPARSED) to the syntax error of statement u. */
static void bind_unparsed_name(builder *bd, const nbc__token *t, const unparsed *u) {
  const char *name =
      t ? nbc__arena_strndup(bd->ctx->arena, nbc__tok_start(t), (size_t)t->len) : FIRST_UNPARSED;
  if (!name) {
    nbc__diag_oom(bd->ctx);
    return;
  }
  bind(bd, name, other(), false);
  nbc__binding *b = lookup(bd->m, name);
  if (!b) return;
  b->syntax_error = u->error;
  b->syntax_status = u->status;
  b->syntax_kind = u->kind;
}

/* The names statement u would define, as far as its first tokens say: a def's or class's name
 * (after its decorators), a PEP 695 alias's (`type X = ...`), assignment targets
 * (`X = ...`, `a, b = ...`, `X: T = ...`, `X += ...`). */
static void bind_unparsed(builder *bd, const nbc__token *t, const unparsed *u) {
  int i = u->start, e = u->end;
  while (i < e && nbc__tok_is(&t[i], "@")) { /* a decorator line */
    while (i < e && t[i].kind != NBC__TOK_NEWLINE)
      i++;
    i++;
  }
  if (i < e && nbc__tok_is(&t[i], "async")) i++;
  if (i + 1 < e && t[i + 1].kind == NBC__TOK_NAME &&
      (nbc__tok_is(&t[i], "def") || nbc__tok_is(&t[i], "class") ||
       name_is(&t[i], "type"))) {
    bind_unparsed_name(bd, &t[i + 1], u);
    return;
  }
  int first = i; /* targets: NAME (',' NAME)* then '=', ':' or an augmented assignment */
  while (i < e && t[i].kind == NBC__TOK_NAME && i + 1 < e && nbc__tok_is(&t[i + 1], ","))
    i += 2;
  if (i + 1 >= e || t[i].kind != NBC__TOK_NAME || t[i + 1].kind != NBC__TOK_OP) return;
  const nbc__token *op = &t[i + 1];
  bool assigns = nbc__tok_is(op, "=") || nbc__tok_is(op, ":") ||
                 (op->len >= 2 && nbc__tok_start(op)[op->len - 1] == '=' && !nbc__tok_is(op, "==") &&
                  !nbc__tok_is(op, "<=") && !nbc__tok_is(op, ">=") && !nbc__tok_is(op, "!="));
  for (int k = first; assigns && k <= i; k += 2)
    bind_unparsed_name(bd, &t[k], u);
}

/* The module's statements parsed one at a time (see above): the MODULE of those that parse,
 * with *pun / *pnun the ones that do not; NULL on running out of memory or an internal bug
 * (ctx says which). */
static nbc__node *parse_each_statement(nbc__ctx *ctx, nbc__token *tokens, int count,
                                       unparsed **pun, int *pnun) {
  nbc__node **items = nbc__arena_alloc(ctx->arena, sizeof *items * (size_t)count);
  unparsed *un = nbc__arena_alloc(ctx->arena, sizeof *un * (size_t)count);
  if (!items || !un) return nbc__diag_oom(ctx), NULL;
  int nitems = 0, nun = 0;
  for (int s = 0; s < count - 1;) {
    if (tokens[s].kind == NBC__TOK_NEWLINE || tokens[s].kind == NBC__TOK_DEDENT) {
      s++;
      continue;
    }
    int e = statement_end(tokens, count, s);
    if (e <= s) break;
    /* the statement alone: its next token stands in as the end of the file while parsed */
    nbc__token after = tokens[e];
    tokens[e].kind = NBC__TOK_EOF;
    nbc__node *m = nbc__parse_module(ctx, tokens + s, e - s + 1);
    tokens[e] = after;
    if (m) {
      for (int k = 0; k < m->body.count; k++)
        items[nitems++] = m->body.items[k];
    } else if (ctx->status == NBC_NO_MEMORY || ctx->status == NBC_INTERNAL) {
      return NULL;
    } else {
      const char *error = nbc__arena_strdup(ctx->arena, ctx->diag.data ? ctx->diag.data : "");
      if (!error) return nbc__diag_oom(ctx), NULL;
      un[nun++] = (unparsed){s, e, nitems, error, ctx->status, ctx->kind};
      ctx->status = NBC_OK;
      ctx->kind = NBC_ERROR_KIND_NONE;
      ctx->during = 0;
      ctx->diag.len = 0;
      if (ctx->diag.data) ctx->diag.data[0] = '\0';
    }
    s = e;
  }
  nbc__node *module = nbc__parse_module(ctx, tokens + count - 1, 1); /* an empty MODULE */
  if (!module) return NULL;
  module->body = (nbc__list){items, nitems};
  *pun = un;
  *pnun = nun;
  return module;
}

bool nbc__module_report_unparsed(nbc__ctx *ctx, const nbc__module *module, const char *name,
                                 bool reached) {
  const nbc__binding *b = module ? lookup(module, name ? name : FIRST_UNPARSED) : NULL;
  if (!b || !b->syntax_error) return false;
  if (ctx->status == NBC_OK) {
    ctx->status = b->syntax_status;
    ctx->kind = b->syntax_kind;
    ctx->diag.len = 0;
    nbc__buf_puts(&ctx->diag, b->syntax_error);
    if (reached && name)
      nbc__diag_during(ctx, "resolving '%s', which this statement defines", name);
  }
  return true;
}

/* ----------------------------------------------------------------- the module API --- */

static nbc__module *load(nbc__ctx *ctx, const nbc__file *file, bool lenient) {
  int count = 0, nun = 0;
  unparsed *un = NULL;
  nbc__token *tokens = nbc__lex(ctx, file, &count);
  if (!tokens) return NULL;
  nbc__node *ast = nbc__parse_module_deferred(ctx, tokens, count);
  if (!ast && lenient && ctx->status != NBC_NO_MEMORY && ctx->status != NBC_INTERNAL)
    ast = parse_each_statement(ctx, tokens, count, &un, &nun);
  if (!ast || !nbc__fold_module(ctx, ast)) return NULL;
  nbc__module *m = nbc__arena_alloc(ctx->arena, sizeof *m);
  if (!m) {
    nbc__diag_oom(ctx);
    return NULL;
  }
  m->file = file;
  m->ast = ast;
  m->arena = ctx->arena;
  builder bd = {ctx, m};
  if (!nun) {
    bind_body(&bd, &ast->body, false);
    return ctx->status == NBC_OK ? m : NULL;
  }
  /* statements bind in file order, the unparsed ones where they stood */
  bind_unparsed_name(&bd, NULL, &un[0]);
  for (int i = 0, k = 0; i <= ast->body.count && ctx->status == NBC_OK; i++) {
    while (k < nun && un[k].position == i)
      bind_unparsed(&bd, tokens, &un[k++]);
    if (i < ast->body.count) bind_stmt(&bd, ast->body.items[i], false);
  }
  return ctx->status == NBC_OK ? m : NULL;
}

nbc__module *nbc__module_load(nbc__ctx *ctx, const nbc__file *file) {
  return load(ctx, file, false);
}

nbc__module *nbc__module_load_lenient(nbc__ctx *ctx, const nbc__file *file) {
  return load(ctx, file, true);
}

static void loading_ctx(nbc__ctx *ctx, const nbc__module *m);

/* def's body, parsed and folded in the module's arena on its first use; false after
 * reporting the failure in ctx. The body parsed without error when the module was loaded,
 * so only memory can fail. */
static bool function_body(nbc__ctx *ctx, const nbc__module *module, nbc__node *def) {
  if (!def->body_deferred) return true;
  nbc__ctx local;
  loading_ctx(&local, module);
  if (nbc__parse_body(&local, def) && nbc__fold_function(&local, def)) return true;
  if (local.status == NBC_NO_MEMORY)
    nbc__diag_oom(ctx);
  else
    NBC__BUG(ctx, "the body of '%s' parsed when its module was loaded, not when it was used",
             def->str);
  return false;
}

nbc__node *nbc__module_function(const nbc__module *module, const char *name) {
  nbc__ctx ctx;
  if (!module) return NULL;
  loading_ctx(&ctx, module);
  return nbc__module_function_parsed(&ctx, module, name);
}

/* The FUNCDEF bound to name (none: the only one), its body as the load left it. */
static nbc__node *module_def(const nbc__module *module, const char *name) {
  if (!module) return NULL;
  if (name && *name) {
    const nbc__binding *b = lookup(module, name);
    return b ? b->def : NULL;
  }
  nbc__node *only = NULL;
  for (int i = 0; i < module->nbindings; i++) {
    if (!module->bindings[i].def) continue;
    if (only) return NULL; /* several: the caller must name one */
    only = module->bindings[i].def;
  }
  return only;
}

nbc__node *nbc__module_function_parsed(nbc__ctx *ctx, const nbc__module *module,
                                       const char *name) {
  nbc__node *def = module_def(module, name);
  return def && function_body(ctx, module, def) ? def : NULL;
}

static bool parse_bodies(nbc__ctx *ctx, const nbc__module *module, const nbc__list *body) {
  for (int i = 0; i < body->count; i++) {
    nbc__node *s = body->items[i];
    if (!function_body(ctx, module, s) || !parse_bodies(ctx, module, &s->body) ||
        !parse_bodies(ctx, module, &s->orelse))
      return false;
  }
  return true;
}

bool nbc__module_parse_bodies(nbc__ctx *ctx, nbc__module *module) {
  return parse_bodies(ctx, module, &module->ast->body);
}

const nbc__node *nbc__module_non_function(const nbc__module *module, const char *name,
                                          const char **pwhat) {
  const nbc__node *found = NULL;
  bool def_seen = false; /* `f = cuda.jit(f)` after `def f` keeps it a function */
  for (int i = 0; module && name && i < module->ast->body.count; i++) {
    const nbc__node *s = module->ast->body.items[i];
    if (s->kind == NBC__N_OTHER_STMT && s->str && strcmp(s->str, name) == 0) {
      /* an async def keeps its 'def' token at the top level; a class its 'class' */
      if (nbc__tok_is(s->tok, "class")) *pwhat = "a class", found = s;
      else if (nbc__tok_is(s->tok, "def")) *pwhat = "an async function", found = s;
    } else if (s->kind == NBC__N_FUNCDEF && s->str && strcmp(s->str, name) == 0) {
      found = NULL; /* a later def rebinds it */
      def_seen = true;
    } else if (s->kind == NBC__N_ASSIGN) {
      for (int k = 0; k < s->list.count; k++) {
        const nbc__node *t = s->list.items[k];
        if (t->kind != NBC__N_NAME || strcmp(t->str, name) != 0) continue;
        bool lambda = s->a && s->a->kind == NBC__N_FUNCDEF;
        if (!lambda && def_seen) continue;
        *pwhat = lambda ? "a lambda" : "a variable";
        found = s;
      }
    }
  }
  return found;
}

/* A context for loading a module of the program from within resolution: the importing
 * module's arena; a load's diagnostics go nowhere (the names are then unknown). */
static void loading_ctx(nbc__ctx *ctx, const nbc__module *m) {
  memset(ctx, 0, sizeof *ctx);
  ctx->arena = m->arena;
  nbc__buf_init(&ctx->diag, m->arena);
}

/* The module a program-module binding names, read and loaded on first use (in the arena of
 * the module that imports it); NULL when it cannot be read or does not load (its names are
 * then unknown: the code's use of them is the error reported). */
static nbc__module *program_module(nbc__module *m, nbc__binding *b) {
  if (b->loaded || b->load_failed) return b->loaded;
  b->load_failed = true;
  FILE *f = fopen(b->path, "rb");
  if (!f) return NULL;
  char *text = NULL;
  long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  if (size >= 0 && fseek(f, 0, SEEK_SET) == 0)
    text = nbc__arena_alloc(m->arena, (size_t)size + 1);
  if (text && fread(text, 1, (size_t)size, f) == (size_t)size)
    text[size] = 0;
  else
    text = NULL;
  fclose(f);
  nbc__file *file = text ? nbc__arena_alloc(m->arena, sizeof *file) : NULL;
  if (!file) return NULL;
  *file = (nbc__file){b->path, text, (size_t)size, 1, 0};
  nbc__ctx ctx;
  loading_ctx(&ctx, m);
  b->loaded = nbc__module_load_lenient(&ctx, file);
  b->load_failed = b->loaded == NULL;
  return b->loaded;
}

/* A package's submodule used as its attribute (`import pkg.mod` then pkg.mod.f, or `from
 * pkg import mod`): bound in the package's module on first use; NULL when there is none. */
static nbc__binding *package_submodule(nbc__module *m, const char *name) {
  const char *file = m->file ? m->file->name : NULL;
  size_t n = file ? strlen(file) : 0;
  if (n < 12 || strcmp(file + n - 12, "/__init__.py") != 0) return NULL;
  nbc__ctx ctx;
  loading_ctx(&ctx, m);
  const char *path = module_file(&ctx, m->file, name, true);
  const char *copy = path ? nbc__arena_strdup(m->arena, name) : NULL;
  if (!copy) return NULL;
  builder bd = {&ctx, m};
  bind_program_module(&bd, copy, path, NULL, false);
  return lookup(m, copy);
}

/* Follows `from a import x` from module to module; past this many, a cycle (a imports x
 * from b, b from a: Python's circular-import ImportError) or an absurd chain, and the name
 * is unknown. */
enum { MAX_IMPORT_HOPS = 64 };

int nbc__module_resolve(void *module, const char *name, nbc_global_t *pglobal) {
  nbc__module *m = module;
  memset(pglobal, 0, sizeof *pglobal);
  for (int hop = 0; hop <= MAX_IMPORT_HOPS && name; hop++) {
    const char *dot = strchr(name, '.');
    char head[256];
    size_t len = dot ? (size_t)(dot - name) : strlen(name);
    if (len >= sizeof head) return 1;
    memcpy(head, name, len);
    head[len] = 0;
    nbc__binding *b = lookup(m, head);
    if (!b || b->g.kind == NBC_GLOBAL_UNDEFINED) b = package_submodule(m, head);
    if (!b || !b->path) { /* a name of this module itself */
      if (dot || !b || b->g.kind == NBC_GLOBAL_UNDEFINED) return 1;
      *pglobal = b->g;
      return 0;
    }
    if (!b->attr && !dot) { /* a module of the program, or a name imported from one */
      *pglobal = b->g;
      return 0;
    }
    nbc__module *sub = program_module(m, b);
    if (!sub) return 1;
    name = !b->attr ? dot + 1
           : dot    ? nbc__arena_printf(m->arena, "%s%s", b->attr, dot)
                    : b->attr;
    m = sub;
  }
  return 1;
}
