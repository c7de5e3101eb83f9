/* lower.h — private header shared by lower.c (module, functions, statements, ABIs, debug
 * metadata), the expression lowering (lower_expr.c: names, attributes, the dispatch over
 * node kinds; lower_convert.c, lower_arith.c, lower_compare.c, lower_array.c, lower_call.c
 * and the other lower_*.c files) and lib_*.c (the kernel language's library: cuda, math,
 * numpy). Nothing else includes it.
 *
 * The lowering writes LLVM 7 text. Values are carried as operand strings ("%t12", "42",
 * "0x3FF0000000000000") together with their nbcuda type; every value is in its type's
 * *value* representation (see nbc__lower_ltype): booleans are i1, arrays are the struct
 * {meminfo, parent, nitems, itemsize, data, [N x i64] shape, [N x i64] strides} that numba
 * uses, tuples are literal structs. Every local variable lives in an alloca of the entry
 * block; control flow is branches only (no phi), which libNVVM's mem2reg/SROA turn back into
 * registers.
 */
#ifndef NBCUDA_LOWER_H
#define NBCUDA_LOWER_H

#include "compiler/compiler.h"

typedef struct nbc__lval {
  const nbc__type *type;
  const char *v; /* operand text */
} nbc__lval;

enum { NBC__LOWER_MAX_LOOPS = 64 };

typedef struct nbc__lowerer {
  nbc__ctx *ctx;
  const nbc__program *program;
  nbc__arena *arena;
  /* Module-level text, assembled at the end. */
  nbc__buf globals; /* shared arrays, NumbaEnv */
  nbc__buf decls;   /* `declare` lines, each once */
  nbc__buf meta;    /* debug metadata */
  nbc__buf used;    /* @llvm.used entries */
  nbc__buf annotations;
  int nused, nannotations;
  const char **declared;
  int ndeclared, capdeclared;
  int next_meta;   /* metadata numbering */
  bool debug_info; /* debug or lineinfo */
  int cu_meta, file_meta, subroutine_meta;
  /* lower_dbgvars.c: each number type's DIBasicType, the byte type (i8) and the composite
   * types (arrays, tuples, complex) already described, by type */
  int basic_type_meta[NBC__T_KIND_COUNT_];
  int byte_type_meta;
  struct nbc__di_type *di_types;
  int shared_count;
  int const_count; /* constant arrays (_cudapy_cmem, _cudapy_cmem.1, ...) */
  const char **strings; /* print's string constants: @__conststring__<i> is strings[i] */
  int nstrings, capstrings;
  bool uses_libdevice;
  const char *raise_symbol; /* debug kernels: the entry's symbol, whose <symbol>__errcode__
                               and friends record the first exception (lower_raise.c) */
  /* The function being lowered. */
  nbc__func *fn;
  nbc__buf allocas; /* the entry block's allocas */
  nbc__buf body;    /* everything after them */
  int tmp, label;
  int lmem_count;       /* local arrays: %"_cudapy_lmem", %"_cudapy_lmem.1", ... as numba's */
  const char **slots;   /* alloca of each variable */
  const char *ret_slot; /* Numba ABI: the return pointer parameter */
  bool terminated;      /* the current block has its terminator */
  int sp_meta;          /* the function's DISubprogram */
  int loc_meta, loc_line, loc_col;
  int loop_depth;
  int loop_break[NBC__LOWER_MAX_LOOPS], loop_continue[NBC__LOWER_MAX_LOOPS];
} nbc__lowerer;

/* lower_dbgvars.c: with options->debug, the function's parameters and locals described
 * (DILocalVariable with numba's types, llvm.dbg.declare on their slots) at its def line. */
void nbc__lower_debug_variables(nbc__lowerer *L, const nbc__func *fn, int line);

/* lower.c */
const char *nbc__lower_tmp(nbc__lowerer *L);
int nbc__lower_label(nbc__lowerer *L);
void nbc__lower_emit(nbc__lowerer *L, const char *fmt, ...);
void nbc__lower_br(nbc__lowerer *L, int label);
void nbc__lower_condbr(nbc__lowerer *L, const char *cond, int yes, int no);
void nbc__lower_block(nbc__lowerer *L, int label);
/* Ends the thread (numba's raise in a kernel); the current block is terminated. */
void nbc__lower_end_thread(nbc__lowerer *L);
/* lower_raise.c: `raise` and a failed `assert` (stmt): the thread ends; in a debug kernel
 * it first records the raise site (nbc_raise_site_t) if it is the launch's first. */
void nbc__lower_raise(nbc__lowerer *L, const nbc__node *stmt);
/* Where i1 cond holds, the thread raises exception(message): it ends, and a debug kernel
 * records a site located at where (NULL: none, as numba's errors of most operations). */
void nbc__lower_raise_if(nbc__lowerer *L, const char *cond, const char *exception,
                         const char *message, const nbc__node *where);
/* Before the functions: a kernel compiled with options->debug records its raise sites
 * (sets L->raise_symbol). After them: its <symbol>__errcode__, __tid{x,y,z}__ and
 * __ctaid{x,y,z}__ globals, when it has raise sites. */
void nbc__lower_raise_begin(nbc__lowerer *L);
void nbc__lower_raise_globals(nbc__lowerer *L);
const char *nbc__lower_alloca(nbc__lowerer *L, const char *type);
/* lower_range.c: range(...) as a value (numba's range_state: start, stop, step; a zero step
 * raises numba's ValueError), len() of one (Python's length) and r[i] (start + i * step). */
nbc__lval nbc__lower_range_value(nbc__lowerer *L, nbc__node *n, const nbc__call *call);
nbc__lval nbc__lower_range_len(nbc__lowerer *L, nbc__lval r);
nbc__lval nbc__lower_range_item(nbc__lowerer *L, nbc__lval r, nbc__lval i);
/* The same with an alignment (0: the type's own) and, unless NULL, a name of its own. */
const char *nbc__lower_alloca_aligned(nbc__lowerer *L, const char *type, int align,
                                      const char *name);
void nbc__lower_declare(nbc__lowerer *L, const char *decl);
void nbc__lower_error(nbc__lowerer *L, const nbc__node *node, const char *fmt, ...);
bool nbc__lower_failed(const nbc__lowerer *L);
void nbc__lower_set_loc(nbc__lowerer *L, const nbc__node *node);
/* The LLVM value type of t (i1 for booleans, the array struct, ...). */
const char *nbc__lower_ltype(nbc__lowerer *L, const nbc__type *t);
/* The type of a returned value of t (the C ABI's result, the Numba ABI's return slot): its
 * memory type, except a record, returned as its address (i8*). */
const char *nbc__lower_ret_type(nbc__lowerer *L, const nbc__type *t);
/* The LLVM type of t in memory (array elements, arguments, return slots): i8 for bool. */
const char *nbc__lower_mtype(nbc__lowerer *L, const nbc__type *t);
/* The symbol of a specialisation (sets fn->symbol on first use). */
const char *nbc__lower_symbol(nbc__lowerer *L, nbc__func *fn);
/* Appends the flattened LLVM argument list of a value of type t ("i8* %x.0, ..."); used for
 * both parameter lists and call arguments. */
void nbc__lower_flatten(nbc__lowerer *L, nbc__buf *out, const nbc__type *t, nbc__lval value,
                        bool *pfirst);

/* The expression lowering: lower_expr.c (the dispatch, loads and stores), lower_convert.c
 * (conversions, truth, constants), lower_arith.c (nbc__lower_binop_values), lower_array.c
 * (element pointers and stores). */
nbc__lval nbc__lower_expr(nbc__lowerer *L, nbc__node *node);
nbc__lval nbc__lower_convert(nbc__lowerer *L, nbc__lval v, const nbc__type *to);
/* The truth value (i1 operand) of a value, as Python's bool(). */
const char *nbc__lower_truth(nbc__lowerer *L, nbc__lval v);
/* Stores v (converted to the element type) into the array element a[index]. */
void nbc__lower_store_subscript(nbc__lowerer *L, nbc__node *target, nbc__lval v);
/* The pointer (operand of type T*) to the element named by a SUBSCRIPT node. */
const char *nbc__lower_element_ptr(nbc__lowerer *L, nbc__node *subscript, nbc__lval *parray);
/* A binary arithmetic operation on already-lowered operands (used by augmented
 * assignment); the result has type rtype. */
nbc__lval nbc__lower_binop_values(nbc__lowerer *L, nbc__node *where, nbc__op op, nbc__lval a,
                                  nbc__node *bnode, nbc__lval b, const nbc__type *rtype);
/* The constant operand of a scalar type ("0", "0x...", "true"...). */
const char *nbc__lower_const_int(nbc__lowerer *L, const nbc__type *t, int64_t v);
const char *nbc__lower_const_float(nbc__lowerer *L, const nbc__type *t, double v);
/* A zero value of any type (used for implicit returns). */
const char *nbc__lower_zero(nbc__lowerer *L, const nbc__type *t);
/* A value in its memory and C-ABI form: booleans as i8, also inside tuples. */
const char *nbc__lower_to_memory(nbc__lowerer *L, nbc__lval v);
/* The value form of v, of type t, read in its memory form (booleans i8 -> i1). */
const char *nbc__lower_from_memory(nbc__lowerer *L, const nbc__type *t, const char *v);
nbc__lval nbc__lower_load(nbc__lowerer *L, const nbc__type *t, const char *ptr);
void nbc__lower_store(nbc__lowerer *L, nbc__lval v, const char *ptr);
/* The same with an explicit alignment (0: the type's own). */
nbc__lval nbc__lower_load_aligned(nbc__lowerer *L, const nbc__type *t, const char *ptr,
                                  int align);
void nbc__lower_store_aligned(nbc__lowerer *L, nbc__lval v, const char *ptr, int align);

/* lower_expr.c, shared with lower_call.c. */
/* A constant of string type t (CHARSEQ or UNICHARSEQ) holding text (UTF-8), cut or padded
 * with zeros to t's length. */
nbc__lval nbc__lower_string_constant(nbc__lowerer *L, const nbc__type *t, const char *text);

/* lower_datetime.c: operators on datetime64 / timedelta64 values (types from datetime.c's
 * typing: rt the result, a and b converted to the operand types it chose). */
nbc__lval nbc__lower_datetime_binop(nbc__lowerer *L, nbc__node *where, nbc__op op, nbc__lval a,
                                    nbc__lval b, const nbc__type *rt);
const char *nbc__lower_datetime_compare(nbc__lowerer *L, nbc__node *where, nbc__op op,
                                        nbc__lval a, nbc__lval b);
nbc__lval nbc__lower_datetime_unary(nbc__lowerer *L, nbc__op op, nbc__lval a); /* - + */
nbc__lval nbc__lower_datetime_abs(nbc__lowerer *L, nbc__lval a);

static inline bool nbc__lower_is_half(const nbc__type *t) {
  return t && t->kind == NBC__T_FLOAT16;
}
/* "f32", "f16" or "f64": the suffix of an LLVM float intrinsic for t. */
const char *nbc__lower_intrinsic_suffix(const nbc__type *t);
/* Whether values of t exist at run time (modules, functions, dtypes, None... do not: no
 * variable slot, no parameter, nothing passed). */
bool nbc__lower_has_value(const nbc__type *t);
/* abs.f16 or neg.f16 of float16 bits (an i16), as numba-cuda emits them (inline PTX; a
 * constant folds). */
const char *nbc__lower_half_unary(nbc__lowerer *L, const char *instr, const char *v);
/* A call of a unary / binary function of one type (declared once), its result. */
const char *nbc__lower_call1(nbc__lowerer *L, const char *ty, const char *name,
                             const char *a);
const char *nbc__lower_call2(nbc__lowerer *L, const char *ty, const char *name, const char *a,
                             const char *b);
/* a * b in type t (fmul or mul). */
const char *nbc__lower_mul(nbc__lowerer *L, const nbc__type *t, const char *a,
                           const char *b);
/* base ** e of integers by squaring (unrolled for a constant exponent enode), numba's. */
const char *nbc__lower_int_power(nbc__lowerer *L, const nbc__type *rt, const char *base,
                                 nbc__lval e, nbc__node *enode);
/* In a debug kernel, raises numba's ZeroDivisionError when divisor b of op is zero. */
void nbc__lower_check_divisor(nbc__lowerer *L, nbc__op op, const nbc__type *t, const char *b,
                              const nbc__node *divmod);
/* a op b for a comparison op (numbers or tuples), the i1 result. */
const char *nbc__lower_compare_values(nbc__lowerer *L, nbc__node *where, nbc__op op,
                                      nbc__lval a, nbc__lval b);

/* lower_call.c: every call (builtins, math, Python functions, extern, the intrinsics'
 * dispatch). */
nbc__lval nbc__lower_call(nbc__lowerer *L, nbc__node *n);

/* lower_record.c: numba's records (numpy structured dtypes). A record value is an i8* to
 * its bytes (an array element, or a kernel's record argument); fields are read and written
 * in place at their offsets. */
/* Whether n is a field of a record: rec.x or rec['x']. */
bool nbc__lower_is_field(const nbc__node *n);
nbc__lval nbc__lower_field_load(nbc__lowerer *L, nbc__node *n);
void nbc__lower_field_store(nbc__lowerer *L, nbc__node *n, nbc__lval v);
/* x op= v on a field: read once, combined, converted back and stored. */
void nbc__lower_field_augassign(nbc__lowerer *L, nbc__node *s);
/* The record value of the array element at ptr (a [size x i8]*). */
nbc__lval nbc__lower_record_at(nbc__lowerer *L, const nbc__type *record, const char *ptr);
/* Copies record value v's bytes into the array element at ptr (a [size x i8]*). */
void nbc__lower_record_store(nbc__lowerer *L, nbc__lval v, const char *ptr);

/* lib_numpy.c: an NBC__B_NUMPY call (np.minimum/maximum/fmin/fmax on floats, the bitwise,
 * comparison and logical ufuncs, np.conjugate, np.isnat). */
nbc__lval nbc__numpy_lower(nbc__lowerer *L, nbc__node *n, const nbc__call *call);

/* lower_array.c: arrays, tuples, and the cuda module's geometry, arrays, atomics and
 * cache-hinted loads and stores (called from lower_expr.c and lower_call.c). */
nbc__lval nbc__lower_subscript(nbc__lowerer *L, nbc__node *n);
/* Item i (a constant) of a tuple value. */
nbc__lval nbc__lower_tuple_at(nbc__lowerer *L, nbc__lval tup, int i);
nbc__lval nbc__lower_tuple_item(nbc__lowerer *L, nbc__node *where, nbc__lval tup,
                                nbc__node *ix);
nbc__lval nbc__lower_make_tuple(nbc__lowerer *L, const nbc__type *tt, nbc__lval *items);
nbc__lval nbc__lower_array_attr(nbc__lowerer *L, nbc__node *n, nbc__lval arr);
/* a.reshape(...): numba's array_reshape (a NBC__B_RESHAPE call n). */
nbc__lval nbc__lower_reshape(nbc__lowerer *L, nbc__node *n, const nbc__call *call);
/* a.transpose(axes): the view with shape and strides permuted (call->shape). */
nbc__lval nbc__lower_transpose(nbc__lowerer *L, nbc__node *n, const nbc__call *call);
/* a.view(dtype): numba's array_view (a NBC__B_VIEW call n); x.view(dtype) of a scalar. */
nbc__lval nbc__lower_view(nbc__lowerer *L, nbc__node *n, const nbc__call *call);
/* carray(ptr, shape) / farray: numba's np_cfarray (a NBC__B_CARRAY call n). */
nbc__lval nbc__lower_carray(nbc__lowerer *L, nbc__node *n, const nbc__call *call);
const char *nbc__lower_sreg(nbc__lowerer *L, const char *reg);
const char *nbc__lower_sreg_axis(nbc__lowerer *L, const char *reg, char axis);
/* Field `field` (axis k, or -1) of an array value: 2 nitems, 4 data, 5 shape, 6 strides. */
nbc__lval nbc__lower_array_field(nbc__lowerer *L, nbc__lval arr, int field, int k);
nbc__lval nbc__lower_grid(nbc__lowerer *L, nbc__node *n, bool size);
nbc__lval nbc__lower_local_or_shared_array(nbc__lowerer *L, nbc__node *n, const nbc__call *call,
                                           bool shared);
/* A global array (NBC_GLOBAL_ARRAY) of type at: its elements in a constant-memory global,
 * wrapped in the array struct. */
nbc__lval nbc__lower_const_array(nbc__lowerer *L, const nbc__type *at, const nbc_global_t *g);
/* lower_expr.c: enum members, constants of their values: member index of enum global g as
 * a value of type t; cls.name / cls["name"] for the class node cls names. */
nbc__lval nbc__lower_enum_member(nbc__lowerer *L, const nbc_global_t *g, int index,
                                 const nbc__type *t);
nbc__lval nbc__lower_enum_lookup(nbc__lowerer *L, nbc__node *n, nbc__node *cls,
                                 const char *name);
/* A global device array (NBC_GLOBAL_DEVICE_ARRAY) of type at: the array struct over its
 * address, shape and strides, all constants, as numba-cuda embeds a captured device array. */
nbc__lval nbc__lower_device_array_global(nbc__lowerer *L, const nbc__type *at,
                                         const nbc_global_t *g);
nbc__lval nbc__lower_atomic(nbc__lowerer *L, nbc__node *n, nbc__builtin which);
/* cuda.ld<op>(array, i) / cuda.st<op>(array, i, value): numba's cache-hinted loads and
 * stores (NBC__B_CACHE_HINT). */
nbc__lval nbc__lower_cache_hint(nbc__lowerer *L, nbc__node *n, const nbc__call *call);
/* lower_complex.c: complex64/complex128 values ({float, float} / {double, double}). */
nbc__lval nbc__lower_complex_part(nbc__lowerer *L, nbc__lval z, int imag);
nbc__lval nbc__lower_complex_make(nbc__lowerer *L, const nbc__type *ct, const char *re,
                                  const char *im);
const char *nbc__lower_complex_truth(nbc__lowerer *L, nbc__lval z);
/* Conversions to, from and between complex types (from: a number or complex; to: complex or
 * bool). */
nbc__lval nbc__lower_complex_convert(nbc__lowerer *L, nbc__lval v, const nbc__type *to);

/* lower_call.c: a call of an external device function with the Numba ABI, declared once as
 * `i32 @symbol(RT*, params...)`: the values vals converted to argtypes, the result through a
 * slot. */
nbc__lval nbc__lower_extern_call(nbc__lowerer *L, const char *symbol, const nbc__type *rt,
                                 const nbc__type *const *argtypes, const nbc__lval *vals,
                                 int nargs);

/* lower_bf16.c: bfloat16 conversions (either side bfloat16), + - * / and comparisons of two
 * bfloat16 values (the operands converted to it; a comparison's result converted to rt),
 * and unary minus. */
nbc__lval nbc__lower_bf16_convert(nbc__lowerer *L, nbc__lval v, const nbc__type *to);
nbc__lval nbc__lower_bf16_binop(nbc__lowerer *L, nbc__node *where, nbc__op op, nbc__lval a,
                                nbc__lval b, const nbc__type *rt);
nbc__lval nbc__lower_bf16_neg(nbc__lowerer *L, nbc__lval a);
nbc__lval nbc__lower_complex_binop(nbc__lowerer *L, nbc__node *where, nbc__op op, nbc__lval a,
                                   nbc__lval b, const nbc__type *ct);
const char *nbc__lower_complex_compare(nbc__lowerer *L, nbc__node *where, nbc__op op,
                                       nbc__lval a, nbc__lval b, const nbc__type *ct);
nbc__lval nbc__lower_complex_neg(nbc__lowerer *L, nbc__lval z);
nbc__lval nbc__lower_complex_conjugate(nbc__lowerer *L, nbc__lval z);
nbc__lval nbc__lower_complex_abs(nbc__lowerer *L, nbc__lval z);
/* lower_print.c: print(...) as numba-cuda's printimpl.py lowers it (one vprintf). */
nbc__lval nbc__lower_print(nbc__lowerer *L, nbc__node *n, const nbc__call *call);
/* lower_call.c: the libdevice function of math.<base> for float type ft: __nv_<base>f for
 * float32 (__nv_fast_<base>f under fastmath where numba-cuda uses one: cos sin tan exp log2
 * log10 log pow), __nv_<base> for float64. */
const char *nbc__lower_libdevice_name(nbc__lowerer *L, const char *base, const nbc__type *ft);
/* lower_expr.c: declares a function once and calls it; returns the result operand. */
const char *nbc__lower_call_fn(nbc__lowerer *L, const char *ret, const char *name,
                               const char *argtys, const char *args);

/* ------------------------------------------------ helpers of the expression lowering ----
 * Shared by lower_expr.c and lower_array.c (short names: this header is private to the
 * lowering). EMIT needs a variable `L` in scope. */
/* T(k): the scalar type of kind k (defined once for a file that includes infer.h and
 * lower.h, as lib_*.c do). */
#ifndef NBCUDA_TYPE_SHORTHAND
#define NBCUDA_TYPE_SHORTHAND
static inline const nbc__type *T(nbc__type_kind k) {
  return nbc__type_scalar(k);
}
#endif

static inline const char *ltype(nbc__lowerer *L, const nbc__type *t) {
  return nbc__lower_ltype(L, t);
}

static inline const char *tmp(nbc__lowerer *L) {
  return nbc__lower_tmp(L);
}

#define EMIT(...) nbc__lower_emit(L, __VA_ARGS__)

static inline bool is_float(const nbc__type *t) {
  return t && nbc__type_is_float(t);
}
static inline bool is_int(const nbc__type *t) {
  return t && nbc__type_is_int(t);
}
static inline bool is_bool(const nbc__type *t) {
  return t && t->kind == NBC__T_BOOL;
}
/* Types whose values exist at run time (numbers, arrays, tuples). */
static inline bool has_runtime(const nbc__type *t) {
  return is_int(t) || is_float(t) || is_bool(t) || t->kind == NBC__T_ARRAY ||
         t->kind == NBC__T_TUPLE;
}

/* ------------------------------------ lower_convert.c: conversions, the float16 helpers */
/* One native float16 instruction on float16 bits (i16 values): `instr $0, $1, $2[, $3];`.
 * Constants fold here (the asm is opaque to LLVM): the exact result in double (a product or
 * sum of float16s, or a * b + c, is exact there), rounded once, is the instruction's. */
const char *nbc__lower_convert_half_instr(nbc__lowerer *L, const char *instr, const char *a,
                                          const char *b, const char *c);
/* A float16 comparison (setp.<cmp>.f16) as an i1. */
const char *nbc__lower_convert_half_compare(nbc__lowerer *L, const char *cmp, const char *a,
                                            const char *b);
/* Operand text that is an integer literal / a hex float literal (constants fold here, so
 * that float16 constants never depend on libNVVM folding the conversion intrinsics). */
bool nbc__lower_convert_int_literal(const char *v, long *pv);
bool nbc__lower_convert_float_literal(const char *v, double *pv);
/* --------------------------------------------------- lower_arith.c: arithmetic */
/* a <op> b of numbers, float16s or tuples (n a BINOP). */
nbc__lval nbc__lower_arith_binop(nbc__lowerer *L, nbc__node *n);
/* -a, +a, ~a, not a (n a UNARY). */
nbc__lval nbc__lower_arith_unary(nbc__lowerer *L, nbc__node *n);
/* ------------------------------------------ lower_compare.c: comparisons and logic */
/* a < b < c: each operand evaluated once, later comparisons skipped once one is false. */
nbc__lval nbc__lower_compare(nbc__lowerer *L, nbc__node *n);
/* `a and b` / `a or b` return one of the operands (unified to the node's type), evaluating
 * b only when needed. */
nbc__lval nbc__lower_compare_boolop(nbc__lowerer *L, nbc__node *n);
/* `a if c else b`: only the chosen value is evaluated. */
nbc__lval nbc__lower_compare_ifexp(nbc__lowerer *L, nbc__node *n);

/* ---------------------------------------------------- lib_math.c: the math namespace */
/* An NBC__B_MATH call (math.<name>, or a numpy ufunc computed by it), lowered by its table
 * row's function: through libdevice, in the float type of its arguments. */
nbc__lval nbc__lib_math_lower(nbc__lowerer *L, nbc__node *n, const nbc__call *call);

/* --------------------------------------------- lib_cuda.c: the cuda namespace's intrinsics */
/* A call infer typed through nbc__lib_cuda_type (NBC__B_CUDA_INTRINSIC), lowered by its
 * table row's function. */
nbc__lval nbc__lib_cuda_lower(nbc__lowerer *L, nbc__node *n, const nbc__call *call);

#endif /* NBCUDA_LOWER_H */
