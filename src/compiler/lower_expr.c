/* lower_expr.c — expressions to NVVM IR: the dispatch over node kinds, names and
 * attributes, constants of globals, and the memory and call helpers every lowering file
 * shares; numba's semantics for each kind of expression live in the files named below.
 *
 * How it works. nbc__lower_expr lowers a node to a value of node->type and then applies
 * node->cast (infer.c's record of numba's implicit conversions). Arithmetic converts both
 * operands to the operation's result type first, which is what numba's implementations do
 * (int32 + int32 is an int64 add, int64 / int64 is an fdiv of two float64), and then uses
 * the exact semantics numba-cuda gives on the GPU (shared/reference/numba_semantics.md):
 *
 *   - integer // and % floor toward -inf; a zero divisor gives 0, MIN // -1 gives 0;
 *   - shifts by the width or more (or by a negative amount) give 0, or -1 for a right
 *     shift of a negative number, written as selects so LLVM never sees a poison shift;
 *   - float // and % are numba's port of CPython's float_divmod (so 1.0 // inf is nan on
 *     the GPU, as numba-cuda gives), with a zero divisor giving inf/nan;
 *   - ** of integers is exponentiation by squaring (unrolled for constant exponents, as
 *     numba's static_power_impl does); a negative exponent gives 0 unless the base is
 *     +-1, and 0 ** -n gives the type's minimum; float ** float is libdevice pow;
 *   - float to int conversion is fptosi/fptoui, which on the GPU saturates (NaN ->
 *     INT64_MIN), exactly what numba emits.
 *
 * Conversions and constants are in lower_convert.c, arithmetic in lower_arith.c,
 * comparisons and logic in lower_compare.c, arrays and tuples in lower_array.c, calls of
 * builtins and math in lower_call.c, the cuda intrinsics in lib_cuda.c.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/lower.h"

static bool holds_bool(const nbc__type *t) {
  if (is_bool(t)) return true;
  if (t && t->kind == NBC__T_TUPLE)
    for (int i = 0; i < t->count; i++)
      if (holds_bool(t->items[i])) return true;
  return false;
}

/* Converts a value between its register form (booleans as i1) and its memory/ABI form
 * (booleans as i8), recursively through tuples: `return (a < b, a + b)` is an {i1, i64} value
 * but an {i8, i64} in memory and in a C-ABI return. to_memory chooses the direction. */
static const char *convert_bools(nbc__lowerer *L, const nbc__type *t, const char *v,
                                 bool to_memory) {
  if (!holds_bool(t)) return v;
  if (is_bool(t)) {
    const char *x = tmp(L);
    if (to_memory)
      EMIT("%s = zext i1 %s to i8", x, v);
    else
      EMIT("%s = icmp ne i8 %s, 0", x, v);
    return x;
  }
  const char *from = to_memory ? nbc__lower_ltype(L, t) : nbc__lower_mtype(L, t);
  const char *into = to_memory ? nbc__lower_mtype(L, t) : nbc__lower_ltype(L, t);
  const char *acc = "undef";
  for (int i = 0; i < t->count; i++) {
    const nbc__type *it = t->items[i];
    const char *item = tmp(L);
    EMIT("%s = extractvalue %s %s, %d", item, from, v, i);
    const char *conv = convert_bools(L, it, item, to_memory);
    const char *next = tmp(L);
    EMIT("%s = insertvalue %s %s, %s %s, %d", next, into, acc,
         to_memory ? nbc__lower_mtype(L, it) : nbc__lower_ltype(L, it), conv, i);
    acc = next;
  }
  return acc;
}

const char *nbc__lower_to_memory(nbc__lowerer *L, nbc__lval v) {
  return convert_bools(L, v.type, v.v, true);
}

const char *nbc__lower_from_memory(nbc__lowerer *L, const nbc__type *t, const char *v) {
  return convert_bools(L, t, v, false);
}

nbc__lval nbc__lower_load_aligned(nbc__lowerer *L, const nbc__type *t, const char *ptr,
                                  int align) {
  const char *mt = nbc__lower_mtype(L, t);
  const char *x = tmp(L);
  if (align)
    EMIT("%s = load %s, %s* %s, align %d", x, mt, mt, ptr, align);
  else
    EMIT("%s = load %s, %s* %s", x, mt, mt, ptr);
  return (nbc__lval){t, convert_bools(L, t, x, false)};
}

nbc__lval nbc__lower_load(nbc__lowerer *L, const nbc__type *t, const char *ptr) {
  return nbc__lower_load_aligned(L, t, ptr, 0);
}

void nbc__lower_store_aligned(nbc__lowerer *L, nbc__lval v, const char *ptr, int align) {
  const char *mt = nbc__lower_mtype(L, v.type);
  const char *x = nbc__lower_to_memory(L, v);
  if (align)
    EMIT("store %s %s, %s* %s, align %d", mt, x, mt, ptr, align);
  else
    EMIT("store %s %s, %s* %s", mt, x, mt, ptr);
}

void nbc__lower_store(nbc__lowerer *L, nbc__lval v, const char *ptr) {
  nbc__lower_store_aligned(L, v, ptr, 0);
}

/* Declares a function once and calls it; returns the result operand. */
const char *nbc__lower_call_fn(nbc__lowerer *L, const char *ret, const char *name,
                               const char *argtys, const char *args) {
  nbc__lower_declare(L, nbc__arena_printf(L->arena, "declare %s @%s(%s)", ret, name, argtys));
  if (strcmp(ret, "void") == 0) {
    EMIT("call void @%s(%s)", name, args);
    return NULL;
  }
  const char *x = tmp(L);
  EMIT("%s = call %s @%s(%s)", x, ret, name, args);
  return x;
}

const char *nbc__lower_call1(nbc__lowerer *L, const char *ty, const char *name,
                             const char *a) {
  return nbc__lower_call_fn(L, ty, name, ty, nbc__arena_printf(L->arena, "%s %s", ty, a));
}

const char *nbc__lower_call2(nbc__lowerer *L, const char *ty, const char *name, const char *a,
                             const char *b) {
  return nbc__lower_call_fn(L, ty, name, nbc__arena_printf(L->arena, "%s, %s", ty, ty),
                            nbc__arena_printf(L->arena, "%s %s, %s %s", ty, a, ty, b));
}

const char *nbc__lower_intrinsic_suffix(const nbc__type *t) {
  return t->kind == NBC__T_FLOAT32 ? "f32" : t->kind == NBC__T_FLOAT16 ? "f16" : "f64";
}

/* --------------------------------------------------------------- names, attributes -- */

/* A frozen complex global (NBC_GLOBAL_COMPLEX) as a value of type t: its constant in its own
 * type (complex64's parts are float32 constants), converted to t where t is another
 * complex type. */
static nbc__lval complex_constant(nbc__lowerer *L, const nbc_global_t *g, const nbc__type *t) {
  const nbc__type *ct =
      T(g->name && strcmp(g->name, "complex64") == 0 ? NBC__T_COMPLEX64 : NBC__T_COMPLEX128);
  const nbc__type *pt = nbc__type_complex_part(ct);
  nbc__lval z = nbc__lower_complex_make(L, ct, nbc__lower_const_float(L, pt, g->value.f),
                                        nbc__lower_const_float(L, pt, g->imag));
  return nbc__lower_convert(L, z, t && nbc__type_is_complex(t) ? t : ct);
}

/* The value of a frozen global tuple of type tt (infer's global_tuple_type). */
static nbc__lval tuple_constant(nbc__lowerer *L, const nbc__type *tt, const nbc_global_t *g) {
  if (tt->kind != NBC__T_TUPLE || tt->count != g->tuple_count) return (nbc__lval){tt, "undef"};
  nbc__lval items[64];
  for (int i = 0; i < g->tuple_count; i++) {
    const nbc_global_t *it = &g->tuple_items[i];
    const nbc__type *t = tt->items[i];
    if (it->kind == NBC_GLOBAL_TUPLE) {
      items[i] = tuple_constant(L, t, it);
      continue;
    }
    if (it->kind == NBC_GLOBAL_ARRAY) {
      items[i] = t->kind == NBC__T_ARRAY ? nbc__lower_const_array(L, t, it)
                                         : (nbc__lval){t, "undef"};
      continue;
    }
    if (it->kind == NBC_GLOBAL_COMPLEX) {
      items[i] = complex_constant(L, it, t);
      continue;
    }
    const char *v = it->kind == NBC_GLOBAL_FLOAT  ? nbc__lower_const_float(L, t, it->value.f)
                    : it->kind == NBC_GLOBAL_BOOL ? (it->value.i ? "true" : "false")
                                                  : nbc__lower_const_int(L, t, it->value.i);
    items[i] = (nbc__lval){t, v};
  }
  return nbc__lower_make_tuple(L, tt, items);
}

/* Member index of enum global g as a value of type t (the member's int value for an IntEnum,
 * an ENUM value otherwise): the constant of its value. */
nbc__lval nbc__lower_enum_member(nbc__lowerer *L, const nbc_global_t *g, int index,
                                 const nbc__type *t) {
  if (!t || index < 0 || index >= g->tuple_count) return (nbc__lval){t, "undef"};
  const nbc_global_t *v = &g->tuple_items[index];
  const nbc__type *vt = t->kind == NBC__T_ENUM ? t->dtype : t;
  if (v->kind == NBC_GLOBAL_TUPLE) /* a tuple value: its constants */
    return (nbc__lval){t, tuple_constant(L, vt, v).v};
  const char *c = v->kind == NBC_GLOBAL_FLOAT ? nbc__lower_const_float(L, vt, v->value.f)
                                              : nbc__lower_const_int(L, vt, v->value.i);
  return (nbc__lval){t, c};
}

static nbc__lval global_value(nbc__lowerer *L, nbc__node *n, const nbc__global *g) {
  switch (g->g.kind) {
  case NBC_GLOBAL_ENUM_MEMBER: /* a member bound to a name (RED = Color.red) */
    return nbc__lower_enum_member(L, &g->g, (int)g->g.value.i, n->type);
  case NBC_GLOBAL_INT: {
    const nbc__type *t =
        n->type && (is_int(n->type) || is_float(n->type)) ? n->type : T(NBC__T_INT64);
    return nbc__lower_convert(
        L, (nbc__lval){T(NBC__T_INT64), nbc__lower_const_int(L, T(NBC__T_INT64), g->g.value.i)},
        t);
  }
  case NBC_GLOBAL_FLOAT: {
    nbc__lval v = {T(NBC__T_FLOAT64),
                   nbc__lower_const_float(L, T(NBC__T_FLOAT64), g->g.value.f)};
    return nbc__lower_convert(L, v, n->type && is_float(n->type) ? n->type : T(NBC__T_FLOAT64));
  }
  case NBC_GLOBAL_BOOL:
    return (nbc__lval){T(NBC__T_BOOL), g->g.value.i ? "true" : "false"};
  case NBC_GLOBAL_COMPLEX:
    return complex_constant(L, &g->g, n->type);
  case NBC_GLOBAL_DATETIME: /* numba's frozen np.datetime64 / np.timedelta64: its count */
    return (nbc__lval){n->type, nbc__lower_const_int(L, T(NBC__T_INT64), g->g.value.i)};
  case NBC_GLOBAL_NONE: /* as the literal None */
    return (nbc__lval){T(NBC__T_NONE), "null"};
  case NBC_GLOBAL_TUPLE: /* numba's frozen global tuple: its constants */
    return n->type ? tuple_constant(L, n->type, &g->g) : (nbc__lval){n->type, "undef"};
  case NBC_GLOBAL_ARRAY: /* numba's frozen global array, in constant memory */
    if (n->type && n->type->kind == NBC__T_ARRAY) return nbc__lower_const_array(L, n->type, &g->g);
    return (nbc__lval){n->type, "undef"};
  case NBC_GLOBAL_DEVICE_ARRAY: /* numba-cuda's captured device array: its address */
    if (n->type && n->type->kind == NBC__T_ARRAY)
      return nbc__lower_device_array_global(L, n->type, &g->g);
    return (nbc__lval){n->type, "undef"};
  case NBC_GLOBAL_CUDA_NAME: /* `from nbcuda import laneid`: the register, as cuda.laneid */
    if (g->g.name && (strcmp(g->g.name, "laneid") == 0 || strcmp(g->g.name, "warpsize") == 0))
      return (nbc__lval){T(NBC__T_INT32), nbc__lower_sreg(L, g->g.name)};
    return (nbc__lval){n->type, "undef"}; /* namespaces and functions: no run-time value */
  default:
    return (nbc__lval){n->type, "undef"}; /* modules, functions, types: no run-time value */
  }
}

static nbc__lval lower_name(nbc__lowerer *L, nbc__node *n) {
  if (n->var >= 0) {
    const nbc__var *v = &L->fn->vars[n->var];
    if (!L->slots[n->var]) return (nbc__lval){v->type, "undef"};
    const char *ty = ltype(L, v->type), *x = tmp(L);
    EMIT("%s = load %s, %s* %s", x, ty, ty, L->slots[n->var]);
    return (nbc__lval){v->type, x};
  }
  if (n->info) return global_value(L, n, n->info);
  return (nbc__lval){n->type, "undef"};
}

/* Color.red / Color["red"] (the member called name of the class node cls names). */
nbc__lval nbc__lower_enum_lookup(nbc__lowerer *L, nbc__node *n, nbc__node *cls,
                                 const char *name) {
  const nbc__global *G = nbc__infer_enum_global(cls);
  int i = G ? nbc__enum_member_index(&G->g, name) : -1;
  if (i >= 0) return nbc__lower_enum_member(L, &G->g, i, n->type);
  nbc__lower_error(L, n, "no enum member '%s'", name ? name : "?");
  return (nbc__lval){n->type, "undef"};
}

static nbc__lval lower_attr(nbc__lowerer *L, nbc__node *n) {
  const nbc__type *ot = n->a->type;
  if (n->type && n->type->kind == NBC__T_DTYPE) /* a.dtype, np.float32: no run-time value */
    return (nbc__lval){n->type, "undef"};
  if (ot && ot->kind == NBC__T_ENUM_CLASS) return nbc__lower_enum_lookup(L, n, n->a, n->str);
  if (ot && ot->kind == NBC__T_ENUM) { /* m.value: the member's value itself */
    nbc__lval v = nbc__lower_expr(L, n->a);
    return (nbc__lval){ot->dtype, v.v};
  }
  if (ot && ot->kind == NBC__T_MODULE && ot->name) {
    const char *m = ot->name;
    const char *reg = strcmp(m, "cuda.threadIdx") == 0  ? "tid"
                      : strcmp(m, "cuda.blockDim") == 0 ? "ntid"
                      : strcmp(m, "cuda.blockIdx") == 0 ? "ctaid"
                      : strcmp(m, "cuda.gridDim") == 0  ? "nctaid"
                                                        : NULL;
    if (reg) {
      const char *s = n->str;
      if (!(s[0] == 'x' || s[0] == 'y' || s[0] == 'z') || s[1]) {
        nbc__lower_error(L, n, "%s has no attribute '%s'", m, s);
        return (nbc__lval){n->type, "0"};
      }
      nbc__lval v = {T(NBC__T_INT32), nbc__lower_sreg_axis(L, reg, s[0])};
      return v;
    }
    if (strcmp(m, "cuda") == 0 && strcmp(n->str, "warpsize") == 0)
      return (nbc__lval){T(NBC__T_INT32), nbc__lower_sreg(L, "warpsize")};
    if (strcmp(m, "cuda") == 0 && strcmp(n->str, "laneid") == 0)
      return (nbc__lval){T(NBC__T_INT32), nbc__lower_sreg(L, "laneid")};
  }
  if (ot && ot->kind == NBC__T_RECORD) return nbc__lower_field_load(L, n);
  if (n->info) return global_value(L, n, n->info);
  if (ot && ot->kind == NBC__T_ARRAY)
    return nbc__lower_array_attr(L, n, nbc__lower_expr(L, n->a));
  if (ot && (is_int(ot) || is_float(ot) || nbc__type_is_complex(ot)) &&
      (strcmp(n->str, "real") == 0 || strcmp(n->str, "imag") == 0)) {
    nbc__lval v = nbc__lower_expr(L, n->a);
    bool imag = n->str[0] == 'i';
    if (nbc__type_is_complex(ot)) return nbc__lower_complex_part(L, v, imag);
    return imag ? (nbc__lval){ot, nbc__lower_zero(L, ot)} : v;
  }
  if (ot && ot->kind == NBC__T_VECTOR && n->str[0] && !n->str[1] && strchr("xyzw", n->str[0])) {
    nbc__lval v = nbc__lower_expr(L, n->a);
    const char *x = tmp(L);
    EMIT("%s = extractvalue %s %s, %d", x, ltype(L, ot), v.v,
         (int)(strchr("xyzw", n->str[0]) - "xyzw"));
    return (nbc__lval){ot->dtype, x};
  }
  if (ot && ot->kind == NBC__T_MODULE) return (nbc__lval){n->type, "undef"};
  nbc__lower_error(L, n, "unsupported attribute '%s'", n->str);
  return (nbc__lval){n->type, "0"};
}

/* --------------------------------------------------------------- dispatch ----------- */

nbc__lval nbc__lower_string_constant(nbc__lowerer *L, const nbc__type *t, const char *text) {
  nbc__buf b;
  nbc__buf_init(&b, L->arena);
  const unsigned char *s = (const unsigned char *)(text ? text : "");
  bool bytes = t->kind == NBC__T_CHARSEQ;
  nbc__buf_puts(&b, "[");
  for (int64_t i = 0; i < t->size; i++) {
    uint32_t c = 0; /* past the text: zeros, as numpy pads */
    if (*s && bytes) {
      c = *s++;
    } else if (*s) { /* one UTF-8 sequence: its code point */
      int more = *s >= 0xf0 ? 3 : *s >= 0xe0 ? 2 : *s >= 0xc0 ? 1 : 0;
      c = more ? *s & (0x3f >> more) : *s;
      for (s++; more > 0 && (*s & 0xc0) == 0x80; more--) c = c << 6 | (*s++ & 0x3f);
    }
    nbc__buf_printf(&b, "%s%s %u", i ? ", " : "", bytes ? "i8" : "i32", (unsigned)c);
  }
  nbc__buf_puts(&b, "]");
  if (t->size == 0) return (nbc__lval){t, "zeroinitializer"};
  return (nbc__lval){t, b.data ? b.data : "zeroinitializer"};
}

static nbc__lval lower_raw(nbc__lowerer *L, nbc__node *n) {
  switch (n->kind) {
  case NBC__N_INT: {
    const nbc__type *t = n->type ? n->type : T(n->big ? NBC__T_UINT64 : NBC__T_INT64);
    if (is_float(t))
      return (nbc__lval){t,
                         nbc__lower_const_float(
                             L, t, n->big ? (double)(uint64_t)n->value.i : (double)n->value.i)};
    if (is_bool(t)) return (nbc__lval){t, n->value.i ? "true" : "false"};
    if (n->big)
      return (nbc__lval){t,
                         nbc__arena_printf(L->arena, "%llu", (unsigned long long)n->value.i)};
    return (nbc__lval){t, nbc__lower_const_int(L, t, n->value.i)};
  }
  case NBC__N_FLOAT: {
    const nbc__type *t = n->type && is_float(n->type) ? n->type : T(NBC__T_FLOAT64);
    return (nbc__lval){t, nbc__lower_const_float(L, t, n->value.f)};
  }
  case NBC__N_BOOL:
    return (nbc__lval){T(NBC__T_BOOL), n->value.i ? "true" : "false"};
  case NBC__N_STR: /* a string literal stored as numpy's S<n> or U<n> (infer typed it) */
    if (nbc__type_is_charseq(n->type)) return nbc__lower_string_constant(L, n->type, n->str);
    nbc__lower_error(L, n, "strings are not supported in kernels");
    return (nbc__lval){n->type, "undef"};
  case NBC__N_NONE:
    return (nbc__lval){n->type ? n->type : T(NBC__T_VOID), "null"};
  case NBC__N_NAME:
    return lower_name(L, n);
  case NBC__N_ATTR:
    return lower_attr(L, n);
  case NBC__N_SUBSCRIPT:
    if (n->alias && strcmp(n->alias, "$star") == 0 && n->c) { /* f(*t): item i of t */
      nbc__lval *t = n->c->info;
      if (n->b->value.i == 0 || !t) { /* the first item evaluates t, the others reuse it */
        t = nbc__arena_alloc(L->arena, sizeof *t);
        if (!t) return (nbc__lval){n->type, nbc__lower_zero(L, n->type)};
        *t = nbc__lower_expr(L, n->a);
        n->c->info = t;
      }
      return nbc__lower_tuple_at(L, *t, (int)n->b->value.i);
    }
    return nbc__lower_subscript(L, n);
  case NBC__N_CALL:
    return nbc__lower_call(L, n);
  case NBC__N_BINOP:
    return nbc__lower_arith_binop(L, n);
  case NBC__N_UNARY:
    return nbc__lower_arith_unary(L, n);
  case NBC__N_BOOLOP:
    return nbc__lower_compare_boolop(L, n);
  case NBC__N_COMPARE:
    return nbc__lower_compare(L, n);
  case NBC__N_IFEXP:
    return nbc__lower_compare_ifexp(L, n);
  case NBC__N_TUPLE: {
    const nbc__type *tt = n->type;
    if (!tt || tt->kind != NBC__T_TUPLE || tt->count != n->list.count) {
      nbc__lower_error(L, n, "unsupported tuple");
      return (nbc__lval){tt, "undef"};
    }
    nbc__lval *items = nbc__arena_alloc(L->arena, sizeof *items * (size_t)(tt->count + 1));
    if (!items) {
      nbc__diag_oom(L->ctx);
      return (nbc__lval){tt, "undef"};
    }
    for (int i = 0; i < tt->count; i++)
      items[i] = nbc__lower_expr(L, n->list.items[i]);
    return nbc__lower_make_tuple(L, tt, items);
  }
  case NBC__N_COMPLEX: { /* 2.5j: complex128(0, 2.5) */
    const nbc__type *ct = T(NBC__T_COMPLEX128);
    nbc__lval z = nbc__lower_complex_make(L, ct, nbc__lower_const_float(L, T(NBC__T_FLOAT64), 0.0),
                                          nbc__lower_const_float(L, T(NBC__T_FLOAT64), n->value.f));
    return nbc__lower_convert(L, z, n->type ? n->type : ct);
  }
  default:
    nbc__lower_error(L, n, "unsupported expression");
    return (nbc__lval){n->type, "undef"};
  }
}

nbc__lval nbc__lower_expr(nbc__lowerer *L, nbc__node *n) {
  if (nbc__lower_failed(L)) return (nbc__lval){n->type, nbc__lower_zero(L, n->type)};
  nbc__lower_set_loc(L, n);
  nbc__lval v = lower_raw(L, n);
  /* Values are produced in the node's type; then infer's implicit conversion applies. */
  if (n->type && v.type && !nbc__type_equal(v.type, n->type) && has_runtime(n->type))
    v = nbc__lower_convert(L, v, n->type);
  if (n->cast) v = nbc__lower_convert(L, v, n->cast);
  return v;
}
