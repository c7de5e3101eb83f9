/* compiler.h — the internal header of nbcuda's Python-kernel compiler, one section per file.
 *
 * The pipeline (compile.c) is:
 *
 *   source --lex.c--> tokens --parse.c--> AST --resolve.c--> names bound
 *          --infer.c--> typed functions (one per (function, argument types))
 *          --lower.c--> NVVM IR text --nvvm.c (verify, lazy libdevice, compile)--> PTX/LTO-IR
 *
 * Everything one compilation allocates lives in one arena (arena.c) freed at the end;
 * nothing global is mutable except the lazily loaded libNVVM (nvvm.c, guarded by a once),
 * so compiles run concurrently. Bad input is reported with nbc__diag_error at a token's
 * position and unwinds with a status; internal bugs use NBC__BUG (diag.c), which names the
 * C file and line. Nothing here calls exit() or abort().
 */
#ifndef NBCUDA_COMPILER_H
#define NBCUDA_COMPILER_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nbcuda.h"

/* ======================================================================== arena.c === */
/* A bump allocator in chunks; nbc__arena_free releases everything at once. Allocation
 * failure returns NULL (callers turn it into NBC_NO_MEMORY). */
typedef struct nbc__arena nbc__arena;
nbc__arena *nbc__arena_create(void);
void nbc__arena_destroy(nbc__arena *arena);
void *nbc__arena_alloc(nbc__arena *arena, size_t size);        /* zeroed, 16-byte aligned */
void *nbc__arena_alloc_uninit(nbc__arena *arena, size_t size); /* not zeroed */
char *nbc__arena_strndup(nbc__arena *arena, const char *s, size_t n);
char *nbc__arena_strdup(nbc__arena *arena, const char *s);
char *nbc__arena_printf(nbc__arena *arena, const char *fmt, ...);
/* Caps the arena's total size (0: no cap), so tests can drive every out-of-memory path. */
void nbc__arena_set_limit(nbc__arena *arena, size_t limit);
/* A block of its own chunk (not zeroed), which nbc__arena_block_resize can grow or shrink
 * without a copy in the arena: for an array whose final size is known only once it is full
 * (the tokens). NULL when out of memory. */
void *nbc__arena_block_alloc(nbc__arena *arena, size_t size);
/* Resizes a block from nbc__arena_block_alloc (its contents kept up to the smaller size);
 * the block may move. NULL when out of memory, the old block then still valid. */
void *nbc__arena_block_resize(nbc__arena *arena, void *block, size_t size);
/* The bytes the arena holds from malloc (its chunks), for the memory figures of tests. */
size_t nbc__arena_total(const nbc__arena *arena);

/* A growable string in the arena; appends are amortised O(1). data is always a valid
 * NUL-terminated string ("" after init). */
typedef struct nbc__buf {
  nbc__arena *arena;
  char *data;
  size_t len, cap;
  bool oom; /* set once an append failed; the content is then truncated */
} nbc__buf;
void nbc__buf_init(nbc__buf *b, nbc__arena *arena);
void nbc__buf_append(nbc__buf *b, const char *s, size_t n);
void nbc__buf_puts(nbc__buf *b, const char *s);
void nbc__buf_printf(nbc__buf *b, const char *fmt, ...);
void nbc__buf_vprintf(nbc__buf *b, const char *fmt, va_list ap);

/* A map from names to non-negative ints in the arena (open addressing, linear probing), so
 * that a function's thousands of variables are found in O(1), not by a scan. The names are
 * not copied: they must live as long as the map. A zeroed map is empty. */
typedef struct nbc__names {
  const char **keys;
  int *values;
  int count, cap;
} nbc__names;
/* FNV-1a of a NUL-terminated name. */
uint32_t nbc__hash_name(const char *s);
/* The value of name, or -1 when it has none. */
int nbc__names_get(const nbc__names *m, const char *name);
/* Sets name's value (value >= 0; -1 removes it, as far as get is concerned); false when out
 * of memory, which only adding a name can be. */
bool nbc__names_set(nbc__names *m, nbc__arena *arena, const char *name, int value);

/* ========================================================================= diag.c === */
/* The source of one Python file (or fragment) as the compiler sees it. */
typedef struct nbc__file {
  const char *name; /* file name for messages */
  const char *text; /* NUL-terminated copy in the arena */
  size_t size;
  int first_line; /* line number of text's first line */
  int col_offset; /* added to columns in messages */
} nbc__file;

/* State of one compilation, passed to every phase. */
typedef struct nbc__ctx {
  nbc__arena *arena;
  nbc__buf diag;       /* the first error's full text */
  nbc_status_t status; /* NBC_OK until the first error */
  nbc_error_kind_t kind; /* the first error's kind (nbcuda.h), set with it */
  int during;          /* "During:" lines appended to diag (nbc__diag_during) */
  nbc__buf warnings;   /* warnings, one a line (uninit.c); arena NULL until the first */
  const nbc_compile_options_t *options;
  const nbc_resolver_t *resolver;
  struct nbc__program *program; /* infer.c's output */
} nbc__ctx;

/* Records "file:line:col: error: <message>\n<source line>\n<caret>" (only the first error is
 * kept) and sets ctx->status to status. line/col are 1-based positions in file->text. */
void nbc__diag_error(nbc__ctx *ctx, nbc_status_t status, const nbc__file *file, int line,
                     int col, const char *fmt, ...);
/* The same with the error's kind (nbc_last_error_kind: which exception class the binding
 * raises); nbc__diag_error's kind is NONE. A message may also name numba's class in its
 * words ("ValueError: ..."), as numba prints it; the kind, not the words, decides. */
void nbc__diag_error_kind(nbc__ctx *ctx, nbc_status_t status, nbc_error_kind_t kind,
                          const nbc__file *file, int line, int col, const char *fmt, ...);
/* The rule "a kernel returns void" says this (nbc_kernel_check_return_type, typing and
 * lowering): numba's words. */
#define NBC__KERNEL_RETURN_RULE "CUDA kernel must have void return type."
/* After an error: adds a line "During: <what>" saying what was being done when it happened
 * (numba's error context: the call whose callee failed to type), innermost first. */
void nbc__diag_during(nbc__ctx *ctx, const char *fmt, ...);
/* An internal bug: message names the C file and line; status NBC_INTERNAL. */
void nbc__diag_bug(nbc__ctx *ctx, const char *cfile, int cline, const char *fmt, ...);
#define NBC__BUG(ctx, ...) nbc__diag_bug((ctx), __FILE__, __LINE__, __VA_ARGS__)
/* An allocation failed: status NBC_NO_MEMORY (unless an error was already recorded). */
void nbc__diag_oom(nbc__ctx *ctx);

/* ========================================================================== lex.c === */
#define NBC__TOKEN_KINDS(X)                                                                    \
  X(EOF)                                                                                       \
  X(NEWLINE) X(INDENT) X(DEDENT) X(NAME) X(INT) X(FLOAT) X(IMAG) X(STRING) X(OP) X(KEYWORD)

typedef enum nbc__tok_kind {
#define NBC__TOK_ENUM_(k) NBC__TOK_##k,
  NBC__TOKEN_KINDS(NBC__TOK_ENUM_)
#undef NBC__TOK_ENUM_
} nbc__tok_kind;

/* 40 bytes: a 10 MB source has about 4 million tokens, and every AST node points at one, so
 * the array lives as long as the compilation. A literal's value and a string's contents
 * share one slot (no token has both); kind and the INT flags are bit-fields. */
typedef struct nbc__token {
  /* 32 bytes: the array of a file's tokens is the largest part of the memory loading it
   * takes (a token per 2.4 bytes of source, kept as long as the compile). */
  const nbc__file *file;
  union {
    union {
      int64_t i; /* INT; when big, the bits of the uint64 value (if not huge) */
      double f;  /* FLOAT, IMAG */
    } value;
    const char *str; /* STRING: decoded contents (arena); f-strings: the raw text */
  };
  uint32_t offset;   /* of its text in file->text (nbc__tok_start) */
  int line, col;     /* 1-based, in file->text */
  unsigned len : 26; /* bytes; at most NBC__TOKEN_MAX_LEN */
  unsigned kind : 4; /* an nbc__tok_kind */
  unsigned big : 1;  /* INT that does not fit int64 (not a lexing error) */
  unsigned huge : 1; /* INT that does not fit uint64 either */
} nbc__token;

/* The longest token (a string literal) and the largest file (its offsets are 32 bits) the
 * tokenizer takes; past either it reports an error. */
#define NBC__TOKEN_MAX_LEN ((1 << 26) - 1)
#define NBC__LEX_MAX_SIZE ((size_t)UINT32_MAX)

/* The token's text in its file (len bytes, not NUL-terminated). */
static inline const char *nbc__tok_start(const nbc__token *tok) {
  return tok->file->text + tok->offset;
}

/* diag.c: the line of tok as the user's file numbers it (file->first_line is where the
 * source given to the compiler starts in that file); 0 for NULL. */
int nbc__token_user_line(const nbc__token *tok);

/* Tokenizes the whole file into an array terminated by an EOF token. Reports errors (bad
 * indentation, unterminated string, bad number, unexpected character) and returns NULL. */
nbc__token *nbc__lex(nbc__ctx *ctx, const nbc__file *file, int *pcount);
/* True when tok is the operator or keyword spelled s. */
bool nbc__tok_is(const nbc__token *tok, const char *s);
const char *nbc__tok_kind_name(nbc__tok_kind kind);
/* Prints one token per line, "line:col KIND 'text'" (for --dump=tokens). */
void nbc__lex_dump(nbc__buf *out, const nbc__token *tokens, int count);

/* ============================================================ parse.c, parse_expr.c === */
#define NBC__NODE_KINDS(X)                                                                     \
  /* expressions */                                                                            \
  X(INT)                                                                                       \
  X(FLOAT) X(COMPLEX) X(BOOL) X(NONE) X(STR) X(NAME) X(ATTR) X(SUBSCRIPT) X(SLICE) X(CALL)     \
      X(KEYWORD) X(BINOP) X(UNARY) X(BOOLOP) X(COMPARE) X(IFEXP) X(TUPLE) X(LIST) X(DICT)      \
          X(OTHER_EXPR) X(ELLIPSIS) /* statements */                                           \
      X(ASSIGN) X(AUGASSIGN) X(EXPR_STMT) X(IF) X(WHILE) X(FOR) X(BREAK) X(CONTINUE) X(RETURN) \
          X(PASS) X(FUNCDEF) X(IMPORT) X(IMPORT_FROM) X(TRY) X(OTHER_STMT) X(MODULE)           \
              X(ASSERT) /* a: the condition, b: the message or NULL */                         \
      X(RAISE)          /* a: the exception or NULL, b: the cause (`from`) or NULL */

typedef enum nbc__node_kind {
#define NBC__NODE_ENUM_(k) NBC__N_##k,
  NBC__NODE_KINDS(NBC__NODE_ENUM_)
#undef NBC__NODE_ENUM_
} nbc__node_kind;

/* Operators, for BINOP, AUGASSIGN, UNARY, BOOLOP and COMPARE (ops[]). */
#define NBC__OPS(X)                                                                            \
  X(ADD, "+")                                                                                  \
  X(SUB, "-") X(MUL, "*") X(DIV, "/") X(FLOORDIV, "//") X(MOD, "%") X(POW, "**")               \
      X(LSHIFT, "<<") X(RSHIFT, ">>") X(BITAND, "&") X(BITOR, "|") X(BITXOR, "^")              \
          X(MATMUL, "@") X(NEG, "-") X(POS, "+") X(INVERT, "~") X(NOT, "not") X(AND, "and")    \
              X(OR, "or") X(EQ, "==") X(NE, "!=") X(LT, "<") X(LE, "<=") X(GT, ">")            \
                  X(GE, ">=") X(IS, "is") X(ISNOT, "is not") X(IN, "in") X(NOTIN, "not in")

typedef enum nbc__op {
#define NBC__OP_ENUM_(name, text) NBC__OP_##name,
  NBC__OPS(NBC__OP_ENUM_)
#undef NBC__OP_ENUM_
} nbc__op;
const char *nbc__op_text(nbc__op op);

struct nbc__type;
struct nbc__func;

typedef struct nbc__node nbc__node;
typedef struct nbc__list {
  nbc__node **items;
  int count;
} nbc__list;

/* One AST node. Which fields are used depends on kind:
 *   INT value.i (big: the literal exceeds INT64_MAX and value.i holds its uint64 bits);
 *   FLOAT value.f; COMPLEX value.f (imaginary part); BOOL value.i; STR str (value.i 1: bytes);
 *   NAME str; ATTR a.str (a: object, str: attribute); SUBSCRIPT a[b] (b may be a TUPLE);
 *   SLICE a:b:c (each may be NULL); CALL a(args) with list = the positional args followed
 *   by the keyword args (KEYWORD nodes: str = name, a = value); BINOP a op b; UNARY op a;
 *   BOOLOP a op b; COMPARE a ops[i] list.items[i] (chained); IFEXP b if a else c;
 *   TUPLE/LIST list; DICT list (keys and values alternate); ELLIPSIS `...`;
 *   ASSIGN targets list = value a (`x = y = v` has two targets); AUGASSIGN a op= b;
 *   EXPR_STMT a; IF a: body else orelse (elif is a nested IF in orelse); WHILE a: body;
 *   FOR a (target) in b: body (orelse: the for-else, refused); RETURN a (may be NULL);
 *   FUNCDEF str = name, params (NAME nodes, a = the default value or NULL; a last `*args` is
 *   one with vararg set: a device function's extra positional arguments, as a tuple),
 *   body, decorators list, c = NULL or, when the parameter list has what a function cannot
 *   (**kwargs, keyword-only parameters), an OTHER_EXPR at the first such token whose
 *   str is the message infer.c reports if the function is compiled or called; b likewise at
 *   the first default's '=' (defaults are for device functions: a kernel has none);
 *   a lambda is a FUNCDEF too, str "<lambda>", its body one RETURN of its expression;
 *   IMPORT / IMPORT_FROM: str = module (IMPORT: the first one), list of NAME nodes whose
 *   str is the imported (dotted) name and whose alias (or NULL) is the bound name;
 *   TRY body, orelse = the handlers', else and finally bodies concatenated; MODULE body.
 * Positions (tok): statements their first token ('def' for FUNCDEF), BINOP/BOOLOP/COMPARE
 * their (first) operator, ATTR the attribute name, CALL the callee's tok, SUBSCRIPT '[',
 * SLICE its first ':', IFEXP its 'if',
 * other expressions their first token.
 * OTHER_EXPR / OTHER_STMT: syntax the kernel language does not use, parsed so that whole
 * files (host code included) load; infer.c reports it only if a compiled function reaches
 * it, as "unsupported statement/expression: '<token>'" or, for an OTHER_EXPR whose str is
 * set, with that message (an integer literal beyond 64 bits). IMPORT, IMPORT_FROM and TRY
 * in a function body are likewise refused by infer.c; closure.c lifts nested FUNCDEFs out. */
struct nbc__node {
  /* The fields are ordered so that the struct has no padding but 1 byte (184 bytes). */
  nbc__node_kind kind;
  nbc__op op;
  int var;     /* filled by infer.c: NAME: index of the local variable, or -1 */
  bool big;    /* INT: see above */
  bool vararg; /* FUNCDEF params: the `*args` parameter (the last one) */
  /* FUNCDEF of a loaded module's top level whose body is not parsed yet: info is the
   * body's first token, value.i the parser's depth there (nbc__parse_body) */
  bool body_deferred;
  const nbc__token *tok; /* position for diagnostics */
  nbc__op *ops;          /* COMPARE: one per comparison */
  nbc__node *a, *b, *c;
  nbc__list list;
  nbc__list body, orelse;
  nbc__list params, decorators;
  union {
    int64_t i;
    double f;
  } value;
  const char *str;
  const char *alias;
  /* Filled by infer.c: */
  const struct nbc__type *type; /* type of an expression */
  const struct nbc__type *cast; /* when non-NULL, the value is converted to this type */
  void *info;                   /* phase-private annotation (e.g. the callee, the global) */
};

/* Parses a whole module (all statements; syntax outside the kernel language is kept as
 * OTHER_* nodes, see above). Returns the MODULE node, or NULL after a syntax error. */
nbc__node *nbc__parse_module(nbc__ctx *ctx, const nbc__token *tokens, int count);
/* The same, leaving the bodies of the functions defined outside any function unparsed once
 * checked for syntax errors (body_deferred): what loading a module does, so that memory
 * holds the trees of the functions compiled, not of the whole file. */
nbc__node *nbc__parse_module_deferred(nbc__ctx *ctx, const nbc__token *tokens, int count);
/* Parses def's deferred body (from the tokens, which live as long as the module): true at
 * once when it is parsed already; false (reported: out of memory) on failure. */
bool nbc__parse_body(nbc__ctx *ctx, nbc__node *def);
/* desugar.c: rewrites the function's `for` loops over arrays, enumerate() and zip() into
 * range loops (see there); false (out of memory reported) on failure. */
/* What desugar.c needs to unroll `for v in literal_unroll(t)`: the number of items of t when
 * t is a parameter (its type in args) or a global (tuple_len: the items of the global tuple
 * called name, -1 when it is none); env may be NULL (such loops are then left alone). */
typedef struct nbc__desugar_env {
  const struct nbc__type *const *args;
  int nargs;
  int (*tuple_len)(void *data, const char *name);
  void *data;
  bool (*is_numpy)(void *data, const char *name); /* whether global `name` is numpy */
} nbc__desugar_env;
bool nbc__desugar_loops(nbc__ctx *ctx, nbc__node *def, const nbc__desugar_env *env);
/* fold.c: what CPython's compiler removes before numba sees the code (constant arithmetic,
 * branches on constant conditions, statements after a jump), applied to a parsed module;
 * false (out of memory reported) on failure. */
bool nbc__fold_module(nbc__ctx *ctx, nbc__node *module);
/* The same for the body of a function (one parsed after its module, nbc__parse_body). */
bool nbc__fold_function(nbc__ctx *ctx, nbc__node *def);
/* Whether an array index item, once typed, is None (np.newaxis): neither a slice nor an
 * ellipsis, and of type none (ast.c). */
bool nbc__index_is_newaxis(const nbc__node *item);
/* Deep copy of a function's subtree (each specialisation types its own copy). */
/* A new node of that kind at tok's position (the arena's memory is zeroed; var is -1), or
 * NULL when the arena is out of memory. */
nbc__node *nbc__node_new(nbc__arena *arena, nbc__node_kind kind, const nbc__token *tok);
nbc__node *nbc__node_clone(nbc__ctx *ctx, const nbc__node *node);
/* The argument a CALL passes for the parameter at position pos named name: its positional
 * argument, else the value of its keyword argument of that name; NULL when it passes none. */
nbc__node *nbc__call_arg(const nbc__node *call, int pos, const char *name);
/* Whether pred(node, arg) holds for n or any node below it (its operands a, b, c and the
 * nodes of its list, body and orelse, nested functions included); false for NULL. */
bool nbc__node_any(const nbc__node *n, bool (*pred)(const nbc__node *, const void *),
                   const void *arg);
/* Prints the AST as an indented S-expression (for --dump=ast). */
void nbc__node_dump(nbc__buf *out, const nbc__node *node, int indent);
const char *nbc__node_kind_name(nbc__node_kind kind);

/* ======================================================================== types.c === */
#define NBC__SCALAR_TYPES(X)                                                                   \
  X(BOOL, "boolean", 1)                                                                        \
  X(INT8, "int8", 1) X(INT16, "int16", 2) X(INT32, "int32", 4) X(INT64, "int64", 8)            \
      X(UINT8, "uint8", 1) X(UINT16, "uint16", 2) X(UINT32, "uint32", 4)                       \
          X(UINT64, "uint64", 8) X(FLOAT16, "float16", 2) X(FLOAT32, "float32", 4)             \
              X(FLOAT64, "float64", 8) X(COMPLEX64, "complex64", 8)                            \
                  X(COMPLEX128, "complex128", 16)

typedef enum nbc__type_kind {
  NBC__T_VOID = 0,
#define NBC__T_ENUM_(name, text, size) NBC__T_##name,
  NBC__SCALAR_TYPES(NBC__T_ENUM_)
#undef NBC__T_ENUM_
      NBC__T_NONE,   /* the value None */
  NBC__T_ARRAY,      /* dtype, ndim, layout */
  NBC__T_TUPLE,      /* items (UniTuple / Tuple of scalars) */
  NBC__T_RANGE,      /* range(...) */
  NBC__T_MODULE,     /* math, cuda, cuda.atomic, cuda.shared, cuda.local, cuda.threadIdx... */
  NBC__T_FUNCTION,   /* a Python function, a math function, a builtin: see name */
  NBC__T_DTYPE,      /* a scalar type used as a value (float32 in shared.array(..., float32)) */
  NBC__T_GRID_GROUP, /* cuda.cg.this_grid(): the grid of a cooperative launch (an i64 handle of
                        cudadevrt's cudaCGGetIntrinsicHandle), printed GridGroup as numba's */
  NBC__T_VECTOR,     /* a CUDA vector type (numba's float32x4, int2, ...): dtype, count (1-4),
                        name "float32x4"; members x, y, z, w */
  NBC__T_RECORD,     /* numba's Record, a numpy structured dtype: count fields (field_names,
                        items their types: scalars, or C arrays of scalars for numba's
                        nestedarray fields, whose extents are field_shapes[i]; field_offsets
                        in bytes), size in bytes, aligned (numpy's align=True); a value is a
                        pointer to its bytes */
  NBC__T_FLAT,       /* a.flat, numpy's flat iterator (numba's NumpyFlatType): dtype the array
                        type; its value is the array's; len() its size, f[i] its i-th element
                        in C order */
  NBC__T_POINTER,    /* numba's CPointer(dtype), printed "dtype*": an address of dtype (a
                        number) in the generic address space; p[i] loads and stores */
  NBC__T_ENUM_CLASS, /* an enum.Enum class (numba's EnumClass): name its qualified name,
                       dtype its members' value type, int_enum for an IntEnum; compile time
                       only (members: its global's) */
  NBC__T_ENUM,       /* a member of an Enum (not IntEnum) class, numba's EnumMember: name and
                        dtype as its class's; its value is the member's value */
  NBC__T_OPTIONAL,   /* numba's Optional(dtype): a dtype value or None (a variable or a
                        function's result that is None on some paths); used where a dtype is
                        needed it converts to one, raising TypeError when it is None */
  NBC__T_DATETIME,   /* numpy's datetime64 (numba's NPDatetime): count its unit's code, name
                        its unit ("D", "" for the generic one); an int64 value, NaT INT64_MIN */
  NBC__T_TIMEDELTA,  /* numpy's timedelta64 (numba's NPTimedelta): as DATETIME */
  NBC__T_CHARSEQ,    /* numpy's S<n> (numba's CharSeq, printed [char x n]): count bytes, a
                        value [n x i8]; shorter contents are padded with zeros */
  NBC__T_UNICHARSEQ, /* numpy's U<n> (numba's UnicodeCharSeq, [unichr x n]): count UCS-4
                       code points, a value [n x i32] */
  NBC__T_BFLOAT16,   /* numba-cuda's bfloat16 (printed __nv_bfloat16, as numba names it): its 16
                        bits in an i16; arithmetic through cuda_bf16.h (bf16.c) */
  NBC__T_KIND_COUNT_
} nbc__type_kind;

typedef struct nbc__type {
  nbc__type_kind kind;
  const struct nbc__type *dtype;      /* ARRAY element, DTYPE the scalar it names */
  int ndim;                           /* ARRAY */
  char layout;                        /* ARRAY: 'C', 'F' or 'A' */
  bool readonly;                      /* ARRAY; RECORD: an element of a read-only array, whose
                                         fields cannot be assigned (type equality ignores it) */
  int count;                          /* TUPLE */
  const struct nbc__type **items;     /* TUPLE */
  const char *name;                   /* MODULE / FUNCTION: "math", "cuda.atomic", "math.sin" */
  const char *const *field_names;     /* RECORD */
  const int64_t *field_offsets;       /* RECORD */
  const int64_t *const *field_shapes; /* RECORD: extents of an array field, else NULL */
  int64_t size;                       /* RECORD: bytes, numpy's itemsize */
  bool aligned;                       /* RECORD */
  bool int_enum;                      /* ENUM_CLASS: an IntEnum */
  const void *ref; /* FUNCTION passed to a device function: the nbc__global of
                      the Python or declared function it is (NULL: named by
                      `name` alone, cuda.atomic.add, math.sin...) */
  int nest;        /* levels of types inside this one (0: none), which bounds the recursion
                      of every walk over it (inference refuses more than NBC__TYPE_MAX_NEST) */
  int values;      /* TUPLE, RECORD: the types at the leaves of its expansion (a tuple of
                      tuples counts its innermost items); 0 for a leaf itself */
} nbc__type;

/* How deeply types may nest (a tuple of tuples ...): every printer, comparison and lowering
 * of a type recurses once per level. The signature parser's tuple limit is the same. */
enum { NBC__TYPE_MAX_NEST = 32 };
/* How many values one tuple may hold in all, counting through nested tuples: lowering
 * expands a tuple into its values, and `x1 = (x0, x0)`, `x2 = (x1, x1)` ... doubles them
 * with each line. 64 tuples of 64 values fit. */
enum { NBC__TYPE_MAX_VALUES = 4096 };
/* The values t expands to (1 for a leaf). */
static inline int nbc__type_values(const nbc__type *t) {
  return t && t->values ? t->values : 1;
}

/* Interned scalar and void types (static; never freed). */
const nbc__type *nbc__type_scalar(nbc__type_kind kind);
const nbc__type *nbc__type_array(nbc__ctx *ctx, const nbc__type *dtype, int ndim, char layout);
/* The name of a Python module's MODULE type (NBC_GLOBAL_MODULE) is this prefix and the path
 * the code reaches it by ("py:helpers.sub"); the modules the compiler knows (math, numpy,
 * cuda...) are named plainly. */
#define NBC__PY_MODULE_PREFIX "py:"
/* The path of a Python module's MODULE type t ("helpers.sub"), or NULL for any other type. */
const char *nbc__py_module_path(const nbc__type *t);
/* t marked read-only (an array, or a record read from a read-only array), a copy; other
 * types as they are. */
const nbc__type *nbc__type_readonly(nbc__ctx *ctx, const nbc__type *t);
const nbc__type *nbc__type_tuple(nbc__ctx *ctx, const nbc__type **items, int count);
/* An enum class or member type (kind ENUM_CLASS or ENUM) of the class named name, whose
 * members' values are of type dtype. */
const nbc__type *nbc__type_enum(nbc__ctx *ctx, nbc__type_kind kind, const char *name,
                                const nbc__type *dtype, bool int_enum);
/* numba's Optional(dtype): dtype or None. */
const nbc__type *nbc__type_optional(nbc__ctx *ctx, const nbc__type *dtype);
/* numba's CPointer(dtype): a pointer to a number. */
const nbc__type *nbc__type_pointer(nbc__ctx *ctx, const nbc__type *dtype);
/* The vector type of count (1-4) elements of the scalar dtype, named as numba names it. */
const nbc__type *nbc__type_vector(nbc__ctx *ctx, const nbc__type *dtype, int count);
/* A record type of count fields (copied into the arena): scalars, or C-layout array types
 * whose extents shapes[i] gives (NULL for a scalar field; shapes itself may be NULL). */
const nbc__type *nbc__type_record(nbc__ctx *ctx, const char *const *names,
                                  const nbc__type *const *types, const int64_t *offsets,
                                  const int64_t *const *shapes, int count, int64_t size,
                                  bool aligned);
/* Bytes of field i of a record (an array field: all its elements). */
int64_t nbc__type_record_field_size(const nbc__type *record, int i);
/* The index of the record's field called name (len bytes), or -1. */
int nbc__type_record_field(const nbc__type *record, const char *name, size_t len);
/* The alignment a load or store of field i (an element of an array field) may assume: the
 * largest power of two dividing its offset and the record's size (the stride of an array of
 * them) and, for an array field, its element size, at most the scalar's natural alignment;
 * for a record field, the alignment its own fields assume (nbc__type_record_align), and for
 * an array of records, where its elements start (at most that). */
int nbc__type_record_field_align(const nbc__type *record, int i);
/* The largest alignment the accesses to a record's fields assume: where any record value of
 * this type must start (the signature parser refuses records in records placed otherwise),
 * and the alignment a copy of its bytes may assume. */
int nbc__type_record_align(const nbc__type *record);
bool nbc__type_equal(const nbc__type *a, const nbc__type *b);
bool nbc__type_is_int(const nbc__type *t); /* int8..uint64 (not bool) */
/* A tuple of numbers or of such tuples (an enum's tuple values, numba's one value type). */
bool nbc__type_is_numbers_tuple(const nbc__type *t);
bool nbc__type_is_signed(const nbc__type *t);
bool nbc__type_is_float(const nbc__type *t); /* float16/32/64 */
bool nbc__type_is_complex(const nbc__type *t);
/* The type of a complex type's parts: float32 for complex64, float64 for complex128. */
const nbc__type *nbc__type_complex_part(const nbc__type *t);
bool nbc__type_is_number(const nbc__type *t);   /* bool, int, float, complex */
bool nbc__type_is_int_enum(const nbc__type *t); /* a member of an IntEnum (IntEnumMember) */
int nbc__type_bits(const nbc__type *t);         /* scalar width in bits (bool: 1) */
size_t nbc__type_size(const nbc__type *t);      /* scalar (or record) storage bytes */
/* numba's printed name: "float64", "bool", "array(float32, 2d, C)", "UniTuple(int64 x 2)"
 * (numba's own spelling), "Tuple(float64, int32)", "none", "void". */
void nbc__type_print(nbc__buf *out, const nbc__type *t);
const char *nbc__type_name(nbc__ctx *ctx, const nbc__type *t);
/* A scalar type (or alias) by name: "float32", "f4", "intp", "double", ...; NULL if none. */
const nbc__type *nbc__type_by_name(const char *name, size_t len);

/* Numba's typing of scalar operations (numba_typing.tsv). Each returns the result type, or
 * NULL with *pwhy set to the reason ("unsupported operand types ...") when numba refuses. */
const nbc__type *nbc__type_binop(nbc__op op, const nbc__type *a, const nbc__type *b,
                                 const char **pwhy);
const nbc__type *nbc__type_unop(nbc__op op, const nbc__type *a, const char **pwhy);
/* The unification of two types (numba's rules for a variable assigned both), or NULL. */
const nbc__type *nbc__type_unify(nbc__ctx *ctx, const nbc__type *a, const nbc__type *b);
/* Whether numba converts `from` to `to` implicitly (assignment into an array element,
 * returning to a declared type, arguments of calls). */
bool nbc__type_can_convert(const nbc__type *from, const nbc__type *to);

/* numba's conversion kinds (typeconv Conversion), from the cast graph of its rules. */
enum {
  NBC__CONV_EXACT = 1,
  NBC__CONV_PROMOTE = 2,
  NBC__CONV_SAFE = 3,
  NBC__CONV_UNSAFE = 4,
  NBC__CONV_NONE = 99
};
int nbc__type_conversion(const nbc__type *from, const nbc__type *to);
/* numba's Rating of passing args to formals: rate[0..2] = the unsafe, safe and promoting
 * conversions needed; false when an argument does not convert at all (or, without
 * unsafe_casting, only unsafely). */
bool nbc__type_rate(const nbc__type *const *args, const nbc__type *const *formals, int n,
                    bool unsafe_casting, int rate[3]);
/* Rating.astuple() order: fewer unsafe, then fewer safe, then fewer promoting conversions. */
bool nbc__type_rate_less(const int rate[3], const int best[3]);
/* A MODULE / FUNCTION / DTYPE type in the arena (name copied). */
const nbc__type *nbc__type_special(nbc__ctx *ctx, nbc__type_kind kind, const char *name,
                                   const nbc__type *dtype);
/* numpy's fixed-size strings: a CHARSEQ or UNICHARSEQ type of count characters. */
const nbc__type *nbc__type_charseq(nbc__ctx *ctx, nbc__type_kind kind, int64_t count);
bool nbc__type_is_charseq(const nbc__type *t); /* a CHARSEQ or UNICHARSEQ */
/* The alignment an element of type e needs: a scalar's natural one (a complex number's part),
 * a record's nbc__type_record_align. */
int nbc__type_natural_align(const nbc__type *e);

/* ===================================================================== datetime.c === */
/* numba's unit codes: Y 0, M 1, W 2, D 4, h 5, m 6, s 7, ms 8, us 9, ns 10, ps 11, fs 12,
 * as 13, generic 14 (3 is unused). */
#define NBC__DT_UNITS 15
#define NBC__DT_GENERIC 14
/* The DATETIME or TIMEDELTA type of a unit code (interned), or NULL for no such unit. */
const nbc__type *nbc__type_datetime(nbc__type_kind kind, int unit);
/* The code of a unit's name ("D", "ms", "" generic), or -1. */
int nbc__datetime_unit(const char *name, size_t len);
bool nbc__type_is_datetime(const nbc__type *t); /* a DATETIME or TIMEDELTA */
/* The integer that converts a count of unit `from` to unit `to` (numba's
 * get_timedelta_conversion_factor), or 0 when none does (to is coarser, or Y/M to finer). */
int64_t nbc__datetime_factor(int from, int to);
/* The finer of two units, the generic one giving way (numba's get_best_unit). */
int nbc__datetime_best_unit(int a, int b);
/* Operators with a datetime64 or timedelta64 operand, as nbc__type_binop_sig (which calls
 * these): pargs receive the operands' types after conversion (integers become int64). */
const nbc__type *nbc__datetime_binop_sig(nbc__op op, const nbc__type *a, const nbc__type *b,
                                         const nbc__type **pargs, const char **pwhy);
const nbc__type *nbc__datetime_unop_sig(nbc__op op, const nbc__type *a, const nbc__type **parg,
                                        const char **pwhy);

/* The typing functions with the signature numba's overload resolution chose: pargs[i]
 * receives the type operand i is converted to before the operation (may be NULL). Every
 * operation's operands are converted to these types by lower.c (infer.c sets ->cast). */
const nbc__type *nbc__type_binop_sig(nbc__op op, const nbc__type *a, const nbc__type *b,
                                     const nbc__type **pargs, const char **pwhy);
const nbc__type *nbc__type_unop_sig(nbc__op op, const nbc__type *a, const nbc__type **parg,
                                    const char **pwhy);
/* Why a typing function found no type: no definition matches the arguments (the caller
 * reports numba's "Invalid use of ... with parameters"), or the arguments are refused for a
 * reason of their own, which the text says and the caller reports as it is. */
typedef enum nbc__type_fail { NBC__TYPE_NO_MATCH, NBC__TYPE_REFUSED } nbc__type_fail;
typedef struct nbc__type_why {
  nbc__type_fail kind;
  const char *text; /* a static string, or NULL */
} nbc__type_why;
/* Builtins abs int float bool round min max over scalars ("abs", ...); pargs as above,
 * with room for nargs (at most 64) types (min/max: every argument converts to the result). */
const nbc__type *nbc__type_call_builtin(const char *name, const nbc__type *const *args,
                                        int nargs, const nbc__type **pargs, nbc__type_why *pwhy);
/* One concrete signature of a typing template: ret(a[, b]), type kinds (b NBC__T_VOID for
 * one argument). */
typedef struct nbc__type_case {
  unsigned char ret, a, b;
} nbc__type_case;
/* numba's overload resolution over cases[0..ncases) of nargs (1 or 2) numbers: the first case
 * with the fewest (unsafe, safe, promote) conversions; its return type, pargs[] its argument
 * types; NULL when none fits. */
const nbc__type *nbc__type_resolve_cases(const nbc__type_case *cases, int ncases,
                                         const nbc__type *const *args, int nargs,
                                         bool unsafe_casting, const nbc__type **pargs);
/* The tuples math.frexp (mantissa, int32) and math.modf (part, part) return. */
const nbc__type *nbc__type_frexp_result(const nbc__type *mantissa);
const nbc__type *nbc__type_modf_result(const nbc__type *part);
/* lib_math.c: math.<name> over scalars (numba-cuda's cudamath templates; frexp/modf give
 * tuples), and whether math has a function name. */
const nbc__type *nbc__type_math(const char *name, const nbc__type *const *args, int nargs,
                                const nbc__type **pargs, const char **pwhy);
bool nbc__math_exists(const char *name);
/* resolve.c: math's float constants (pi, e, tau, inf, nan), which cmath has too. */
bool nbc__math_constant(const char *name, double *pv);
/* lib_cmath.c: the kernel language's cmath (numba-cuda's cmathimpl.py, in Python, compiled like
 * any function): how numba types cmath.<name> (NONE: no such function), and the Python source
 * of its implementation (named NBC__CMATH_FILE in diagnostics). */
typedef enum nbc__cmath_kind {
  NBC__CMATH_NONE = 0,
  NBC__CMATH_LOWERED,   /* a template of complex64 and complex128 (exp, sqrt, ...) */
  NBC__CMATH_PREDICATE, /* isnan, isinf, isfinite: the same templates, bool results */
  NBC__CMATH_OVERLOAD,  /* an overload of complex numbers only (log10, cosh, phase, ...) */
  NBC__CMATH_RECT       /* rect(r, phi) of two floats */
} nbc__cmath_kind;
nbc__cmath_kind nbc__cmath_find(const char *name);
const char *nbc__cmath_source(void);
#define NBC__CMATH_FILE "<nbcuda cmath>"
/* arraymath.c: reductions of arrays (sum prod mean var std min max amin amax argmin argmax
 * all any), numba's arraymath.py in the kernel language: whether name is one, and the Python
 * source of `_<name>(a)` for arrays of type a (NULL when out of memory or a has no rank). */
bool nbc__array_reduction_exists(const char *name);
/* Whether the reduction is an array method too (a.sum()); np.amin, np.nan* and
 * np.count_nonzero are numpy functions only. */
bool nbc__array_reduction_is_method(const char *name);
const char *nbc__array_reduction_source(nbc__ctx *ctx, const char *name, const nbc__type *a);
/* The builtins sum(it, start), min(it) and max(it) of a 1-d array or a tuple, as numba's
 * cpython/builtins.py: the source of `_sum(a, start)`, `_min(a)` or `_max(a)`. */
const char *nbc__builtin_reduction_source(nbc__ctx *ctx, const char *name, const nbc__type *it);
#define NBC__ARRAYMATH_FILE "<nbcuda arraymath>"
/* range(args): the counter type numba iterates with (int32, int64 or uint64), or NULL. */
const nbc__type *nbc__type_range(const nbc__type *const *args, int nargs, const char **pwhy);
/* Whether a value of type t may be tested for truth (if/while/and/or/not/bool()); float16
 * is refused because numba-cuda's IR for it fails in libNVVM. */
bool nbc__type_truth(const nbc__type *t, const char **pwhy);

/* A parsed signature: return type (NULL when only arguments were given) and arguments. */
typedef struct nbc__signature {
  const nbc__type *ret;
  const nbc__type **args;
  int nargs;
} nbc__signature;
/* ==================================================================== signature.c === */
/* How deep types may nest in a signature (a type inside 32 others), and how many parts (each
 * scalar, array, record, pointer and tuple, a tuple's items counted one by one) its types may
 * expand to in all: 2**15, as many one-byte parameters as a kernel may take. */
#define NBC__SIG_MAX_DEPTH 32
#define NBC__SIG_MAX_PARTS 32768
/* Parses numba's signature syntax: "float32(float32, int64)", "void(float32[:, ::1])",
 * "(float64, int32)", "float64[::1]" style arrays, aliases. Errors report the column in the
 * signature text ("invalid signature: ... at column N") with status NBC_SIGNATURE_ERROR. */
bool nbc__signature_parse(nbc__ctx *ctx, const char *text, nbc__signature *psig);
/* How a signature is read. kernel: a kernel's, whose flattened parameters must also fit
 * nbc__kernel_param_limit for the target of ctx->options (none: the default). names: the
 * signature was typed from a call's arguments (nnames of them, passed for these parameters):
 * an error in argument i names names[i] and says what is wrong with its type, without the
 * column of a text the user never wrote. */
typedef struct nbc__sig_mode {
  bool kernel;
  const char *const *names;
  int nnames;
} nbc__sig_mode;
bool nbc__signature_parse_mode(nbc__ctx *ctx, const char *text, const nbc__sig_mode *mode,
                               nbc__signature *psig);
/* The bytes a kernel's parameters may take on compute capability major.minor (0.0: the
 * default): 32,764 from 7.0 (CUDA 12.1's large kernel parameters, which libNVVM 12.1+
 * enforces), 4,096 below. */
size_t nbc__kernel_param_limit(int cc_major, int cc_minor);

/* ===================================================================== lib_cuda.c === */
/* How infer_call.c types a call of a kernel-language name (lib_cuda.c's table says it
 * for each name). */
typedef enum nbc__kernel_call {
  NBC__KERNEL_CALL_NONE,        /* not callable: a namespace or a value */
  NBC__KERNEL_CALL_GRID,        /* grid(ndim), gridsize(ndim) */
  NBC__KERNEL_CALL_SYNCTHREADS, /* syncthreads() */
  NBC__KERNEL_CALL_INTRINSIC,   /* warp, vote, match, fence, bit and math intrinsics, typed
                                   from numba-cuda's cases as NBC__B_CUDA_INTRINSIC */
  NBC__KERNEL_CALL_ARRAY,       /* shared.array(shape, dtype), local.array(shape, dtype) */
  NBC__KERNEL_CALL_CONST_ARRAY, /* const.array_like(global_array) */
  NBC__KERNEL_CALL_ATOMIC,      /* atomic.<op>(array, index, value) */
  NBC__KERNEL_CALL_LIBDEVICE,   /* libdevice.<f>(...): numba.cuda.libdevice's functions */
  NBC__KERNEL_CALL_THIS_GRID,   /* cg.this_grid(): the GridGroup of a cooperative launch */
  NBC__KERNEL_CALL_FP16,        /* fp16.<f>(...): numba.cuda.fp16's cuda_fp16.h functions */
  NBC__KERNEL_CALL_BF16,        /* bf16.<f>(...): numba.cuda.bf16's cuda_bf16.h functions */
  NBC__KERNEL_CALL_VECTOR,      /* float32x4(...), int2(...): a vector type's constructor */
  NBC__KERNEL_CALL_CACHE_HINT,  /* ldcg(array, i), stwt(array, i, value), ...: loads and
                                   stores with a cache operator (numba's cache_hints.py) */
  NBC__KERNEL_CALL_CARRAY       /* carray(ptr, shape, dtype=None), farray(...): numba's array
                                   over a CPointer's memory */
} nbc__kernel_call;

/* The entry of a kernel-language name as written after "cuda." ("grid", "atomic.add"), or
 * NULL when the compiler has no such name. */
const nbc_kernel_name_t *nbc__cuda_name_find(const char *name);
/* The entry of <namespace_>.<member> ("atomic", "add"), or NULL. */
const nbc_kernel_name_t *nbc__cuda_member_find(const char *namespace_, const char *member);
/* How a call of entry (one of the table's, or NULL) is typed; NONE for a NULL entry. */
nbc__kernel_call nbc__cuda_name_call(const nbc_kernel_name_t *entry);
/* numba.cuda.libdevice's function `name` (without "__nv_"): its return type and argument
 * codes (libdevice_funcs.h: type letter, then 'v' value or 'p' pointer), false when none. */
bool nbc__libdevice_find(const char *name, const nbc__type **pret, const char **pcodes);
/* The type of a libdevice argument type letter (f d h i l). */
const nbc__type *nbc__libdevice_type(char letter);
/* bf16.c: numba.cuda.bf16 (cuda_bf16.h through the same shim as fp16.c's functions). */
/* The bfloat16 type (one instance). */
const nbc__type *nbc__type_bfloat16(void);
bool nbc__type_is_bf16(const nbc__type *t);
/* fp16.c: numba.cuda.bf16's function `name` (exported name "hadd", or cuda_bf16.h's
 * "__hadd", as numba-cuda's objects are named): as nbc__fp16_find; its wrapper in the same
 * shim is nbc_bf16_<cuda_bf16.h name>. */
bool nbc__bf16_find(nbc__ctx *ctx, const char *name, const nbc__type **pret,
                    const nbc__type *args[4], int *pnargs, const char **psymbol);
/* numba-cuda's typing of op between a and b when one is bfloat16: *pargs the operands'
 * conversions (bfloat16 both for + - * / and comparisons of bfloat16, int8 and uint8 values,
 * which cuda_bf16.h computes; else float32 stands for bfloat16 in numba's usual rules), the
 * result, or NULL. */
const nbc__type *nbc__bf16_binop_sig(nbc__op op, const nbc__type *a, const nbc__type *b,
                                     const nbc__type **pargs, const char **pwhy);
/* The cuda_bf16.h function an operator of two bfloat16 values is (+ __hadd, != __hneu...),
 * or of one (- __hneg); NULL for others. */
const char *nbc__bf16_operator_function(nbc__op op, bool unary);
/* The cuda_bf16.h function converting a number to bfloat16 (its C++ constructor), or from
 * bfloat16 to an integer (its conversion operator, toward zero); NULL for the conversions
 * lowered inline (to float32, float64, float16, bool) or none. */
const char *nbc__bf16_conversion_function(const nbc__type *from, const nbc__type *to);

/* fp16.c: numba.cuda.fp16's function `name` (as exported, "hadd", "__hsub_sat"): its return
 * type, argument types (up to 4; *pnargs of them) and the symbol of its Numba-ABI wrapper in
 * the shim (nbc_fp16_shim_source). false when there is none. */
/* lib_cuda.c: a vector type's name ("float32x4", or numba's alias "float4") as its
 * element type's name and count; false for any other name. */
bool nbc__vector_type_find(const char *name, const char **pbase, int *pcount);
bool nbc__fp16_find(nbc__ctx *ctx, const char *name, const nbc__type **pret,
                    const nbc__type *args[4], int *pnargs, const char **psymbol);

/* ====================================================================== resolve.c === */
/* The module-level view of a source file: its functions by name and what its global names
 * mean, used when the caller gives no resolver (CLI, C API) and to find a function's AST. */
typedef struct nbc__module {
  const nbc__file *file;
  nbc__node *ast;                /* MODULE */
  nbc__arena *arena;             /* where the module lives */
  struct nbc__binding *bindings; /* what each global name means (resolve.c), in the order
                                    the names were first bound */
  int nbindings, capbindings;
  int *index;   /* open addressing over bindings: 1 + a binding's position, 0 for none */
  int capindex; /* a power of two, more than twice nbindings */
} nbc__module;

/* Lexes and parses a file into a module; a syntax error anywhere fails the load. */
nbc__module *nbc__module_load(nbc__ctx *ctx, const nbc__file *file);
/* The same, but a top-level statement that does not parse is left out of the module, the
 * names it defines bound to its syntax error (nbc__module_report_unparsed): what the compile
 * pipeline loads, so that only what the compiled function reaches must parse. A lexing error
 * still fails the load. */
nbc__module *nbc__module_load_lenient(nbc__ctx *ctx, const nbc__file *file);
/* ======================================================================= uninit.c === */
/* With options->warn_uninit, records in ctx->warnings a warning for each local variable of def
 * read where some path binds it nowhere (numba's "Detected uninitialized variable x"); false
 * only when out of memory. */
bool nbc__uninit_check(nbc__ctx *ctx, nbc__node *def);

/* When name is bound by a top-level statement that does not parse (left out of the module
 * when it loaded), reports that statement's syntax error in ctx (unless an error is already
 * recorded; with a "During:" line saying the name was reached when reached) and returns true;
 * false otherwise. A NULL name stands for the file's first such statement. */
bool nbc__module_report_unparsed(nbc__ctx *ctx, const nbc__module *module, const char *name,
                                 bool reached);
/* The FUNCDEF of a top-level (or the only) function called name, or NULL; its body parsed
 * and folded on this first request (the load leaves it for later, nbc__parse_module_deferred).
 * The _parsed form reports a failure to parse it (out of memory) in ctx: NULL with ctx's
 * status set. */
nbc__node *nbc__module_function(const nbc__module *module, const char *name);
nbc__node *nbc__module_function_parsed(nbc__ctx *ctx, const nbc__module *module,
                                       const char *name);
/* Parses (and folds) every function body the load left unparsed, so that module->ast is the
 * whole tree nbc__parse_module and nbc__fold_module make (tests, the fuzz target's dumps);
 * false (reported in ctx) on failure. */
bool nbc__module_parse_bodies(nbc__ctx *ctx, nbc__module *module);
/* The top-level statement that last binds name to something other than a plain def (an async
 * def, a class, a lambda, or another value assigned to a name no def bound before, as
 * `f = cuda.jit(f)` keeps f a function), what that is in *pwhat ("an async function",
 * "a class", "a lambda", "a variable"); NULL when none does or a def binds it last. */
const nbc__node *nbc__module_non_function(const nbc__module *module, const char *name,
                                          const char **pwhat);
/* Resolves a global name within the module itself (module-level constants, imports of
 * math/cuda/numba/nbcuda and their members, functions defined in the file). */
int nbc__module_resolve(void *module, const char *name, nbc_global_t *pglobal);

/* ======================================================================== infer.c === */
/* A local variable of a specialised function. */
/* A constant argument a device function needs as one, as numba types a constant argument
 * (Literal[int](32), a tuple of them) and specialises the callee for it: an integer
 * (count 0, value[0]; a bool is 0 or 1) or a tuple of count integers (1..8). */
typedef struct nbc__literal {
  bool set;
  int count;
  int64_t value[8];
} nbc__literal;

typedef struct nbc__var {
  const char *name;
  const nbc__type *type; /* unified over all assignments */
  bool is_param;
  int param_index;
  const struct nbc__global *function; /* a variable bound to a function (`f = helper`): the
                                         global it names, whose calls the variable's are */
  const nbc__literal *literal;        /* a parameter never rebound whose argument was a constant
                                         the function needs as one (shapes, `if flag:`), or NULL */
} nbc__var;

/* One specialisation of a Python function for argument types. */
/* closure.c: a function's nested functions (its defs and `f = lambda` in its body), lifted
 * out of it; parent: the scope of the function enclosing it, whose nested functions it may
 * call too. */
typedef struct nbc__nested {
  const char *name; /* the name its enclosing function calls it by */
  nbc__node *def;   /* the lifted FUNCDEF: str = "outer.<locals>.name", params = the captured
                       variables, then its own */
  int ncaptured;
} nbc__nested;
typedef struct nbc__scope {
  nbc__nested *items;
  int count;
  const struct nbc__scope *parent;
} nbc__scope;
/* Lifts the nested functions out of def's body (a specialisation's own copy): each def or
 * `f = lambda` statement is removed and its calls pass the captured variables first. *pscope
 * is NULL when there are none. false: an error reported (nbc__diag). */
bool nbc__closure_lift(nbc__ctx *ctx, nbc__node *def, const nbc__scope *parent,
                       const nbc__scope **pscope);
/* ssa.c: calls fn(name, stmt, data) for each NAME node the statements bind, in source order
 * (assignment targets and the items of unpacked ones, augmented assignments, loop targets;
 * nested bodies included); stmt is the binding statement. */
typedef void (*nbc__binding_fn)(nbc__node *name, const nbc__node *stmt, void *data);
void nbc__each_binding(nbc__list *body, nbc__binding_fn fn, void *data);
/* ssa.c: a local name bound in places no read connects (their webs) becomes one variable
 * per web (`v`, `v.1`, ...), as numba's SSA versions are typed apart; a parameter's web keeps
 * its name. Runs on a specialisation's copy after nbc__closure_lift. false: out of memory. */
bool nbc__ssa_split(nbc__ctx *ctx, nbc__node *def);
/* The nested function called name in scope s or the scopes enclosing it (*pfound: the scope
 * it belongs to), or NULL. */
const nbc__nested *nbc__scope_find(const nbc__scope *s, const char *name,
                                   const nbc__scope **pfound);

typedef struct nbc__func {
  const char *name;          /* Python name */
  const char *symbol;        /* the symbol emitted in the IR */
  nbc__node *def;            /* this specialisation's own (cloned, typed) FUNCDEF */
  const nbc__module *module; /* for its globals and file */
  const nbc_resolver_t *resolver;
  const nbc__type **argtypes;
  nbc__literal *literals; /* per argument, the constants it was specialised for, or NULL */
  int nargs;
  const nbc__type *ret; /* the declared or inferred return type */
  nbc__var *vars;
  int nvars;
  bool is_kernel;             /* the entry point compiled with device=False */
  bool is_entry;              /* the function asked for */
  bool forceinline;           /* emitted alwaysinline (a callee marked so by its global) */
  nbc_abi_t abi;              /* the entry's ABI; callees use the Numba ABI internally */
  struct nbc__func *next;     /* all specialisations, in the order they were created */
  struct nbc__func **callees; /* infer.c: the specialisations its calls reach */
  int ncallees;
  bool reachable; /* infer.c: reached from the entry */
  bool inferring; /* infer.c: being inferred (a self-recursive call reaches it) */
  const struct nbc__type *ret_estimate; /* infer.c: while inferring without a declared return
                                           type, the unification of the returns so far */
  const struct nbc__type *const *partial_ret; /* infer.c: while inferring, the returns typed so
                                                 far in the walk under way (mutual recursion) */
  const struct nbc__type *handed_ret; /* infer.c: the return type a function it calls (mutual
                                         recursion) was typed with while it was inferring */
  bool handed_mismatch;               /* ... and it was handed another one before */
  const nbc__scope *scope;            /* its nested functions (closure.c), or NULL */
} nbc__func;

/* What infer.c records on the typed AST for lower.c (the contract between the two):
 *  - every expression node has ->type; a node whose value must be converted before use has
 *    ->cast (the type to convert to: operands of arithmetic promoted by numba's rules,
 *    values stored to variables/array elements, returned values, call arguments);
 *  - NAME nodes of locals have ->var >= 0 (index into func->vars); NAME nodes of globals
 *    have ->var == -1 and ->info pointing to an nbc__global (the resolved global);
 *  - CALL nodes have ->info pointing to an nbc__call describing what is called;
 *  - ATTR nodes of modules (cuda.threadIdx.x, math.pi) keep a->type (a MODULE type whose
 *    name says which: "cuda.threadIdx") and ->str; constants get ->info = nbc__global;
 *  - SUBSCRIPT of arrays: a->type is the array; b is the index (a TUPLE for several axes)
 *    with each index typed as an integer; ->info is non-NULL (any value) when the index is
 *    known non-negative (so lower may skip the wraparound);
 *  - FOR over range: b is the CALL of range, whose nbc__call has builtin NBC__B_RANGE; the
 *    loop variable is a local; the step's sign decides the loop test (a non-constant step
 *    is tested at run time).
 * Additions (infer.c's header comment has the details):
 *  - range's argtypes[i] are the counter type (int32, int64 or uint64, numba's Range cases);
 *    the FOR target NAME has ->type = that counter type and ->cast = the variable's type;
 *  - BINOP/UNARY operands carry ->cast = the operand types of numba's chosen signature;
 *  - COMPARE ->info = 2 * count types: the conversions of each comparison's left and right
 *    operand (a single comparison also sets the operands' ->cast);
 *  - BOOLOP/IFEXP values ->cast to the unified type; the truth test uses the own type;
 *  - AUGASSIGN ->type = the operation's result, a/b ->cast = operand types, ->cast = the
 *    type stored back (the variable's type or the array's dtype);
 *  - tuple-unpacking NAME targets: ->type = the element type, ->cast = the variable's type;
 *  - a parameter whose variable type is wider than its argument type (reassigned with
 *    another type) is converted from func->argtypes[i] to vars[i].type at entry;
 *  - an inferred return type is "none" for a device function returning nothing, and a
 *    kernel's is "void".
 */
typedef struct nbc__global {
  nbc_global_t g;                   /* kind and value; strings copied into the arena */
  const struct nbc__module *module; /* the module of a NBC_GLOBAL_FUNCTION */
  /* A nested function (closure.c): its lifted FUNCDEF, how many captured variables its calls
   * pass first, and the scope it belongs to; NULL / 0 for any other global. */
  const nbc__nested *nested;
  const nbc__scope *scope;
} nbc__global;

#define NBC__BUILTINS(X)                                                                          \
  X(FUNC)   /* a Python function: func */                                                         \
  X(EXTERN) /* a declared device function (declare_device): name, its symbol */                   \
  X(RANGE)                                                                                        \
  X(LEN) X(ABS) X(MIN) X(MAX) X(INT) X(FLOAT) X(BOOL) X(ROUND)                                    \
      X(CAST) /* a dtype used as a conversion: float32(x); ret is the dtype */                    \
      X(MATH) /* math.<name>: name ("sin", "sqrt", ...) */                                        \
      X(CUDA_GRID) X(CUDA_GRIDSIZE) X(CUDA_SYNCTHREADS) X(CUDA_SHARED_ARRAY)                      \
          X(CUDA_LOCAL_ARRAY) /* ret: the array type (C layout) */                                \
      X(CUDA_CONST_ARRAY) /* const.array_like(a): a, a global array, already constant memory      \
                           */                                                                     \
      X(ATOMIC_ADD) X(ATOMIC_SUB) X(ATOMIC_MAX) X(ATOMIC_MIN) X(ATOMIC_NANMAX) X(                 \
          ATOMIC_NANMIN) X(ATOMIC_AND) X(ATOMIC_OR) X(ATOMIC_XOR) X(ATOMIC_EXCH) X(ATOMIC_INC)    \
          X(ATOMIC_DEC)                                                                           \
              X(ATOMIC_CAS) /* cas(ary, idx, old, val) and compare_and_swap(ary, old, val) */     \
      X(CUDA_INTRINSIC) /* name: "cuda.shfl_sync", "cuda.popc", ... lowered by lib_cuda.c */     \
      X(NUMPY) /* numpy.<name> lowered by lib_numpy.c (float minimum/maximum/fmin/fmax...) */     \
      X(PRINT) /* print(...): vprintf, lower_print.c; argtypes[i] NULL for a string literal */    \
      X(COMPLEX) /* complex(re[, im]); ret complex64 or complex128 */                             \
      X(DIVMOD)  /* divmod(a, b): (a // b, a % b); argtypes: the operands' types for // and %     \
                  */                                                                              \
      X(CONJUGATE)    /* x.conjugate() of a number: the call's callee is the attribute node */    \
      X(LIBDEVICE)    /* libdevice.<f>: name "__nv_<f>"; argtypes: the value arguments (the       \
                         pointer ones are results, nbc__libdevice_find says which) */             \
      X(CG_THIS_GRID) /* cg.this_grid(): cudadevrt's cudaCGGetIntrinsicHandle(1) */               \
      X(CG_SYNC)      /* g.sync() of a GridGroup: cudaCGSynchronize(g, 0); the callee is the      \
                         attribute node, as for CONJUGATE */                                      \
      X(VECTOR) /* a vector type's constructor: ret the vector; argtypes each argument's type     \
                   (scalars convert to its dtype, vectors give their elements in order) */        \
      X(CACHE_HINT) /* ld<op>(array, i), st<op>(array, i, value): name "cuda.ldcg", ...;          \
                       argtypes the array, the index and (st) the dtype; lower_array.c */         \
      X(RESHAPE)    /* a.reshape(shape) of a C or F array: the callee is the attribute node;      \
                       argtypes the arguments' types (integers, or one tuple of them); ret the    \
                       view; lower_array.c */                                                     \
      X(STORE) /* a.fill(v) (numba's a[:] = v) and operator.setitem(a, i, v) (a[i] = v): the      \
                  list is the target (a SUBSCRIPT, typed as an assignment's) and the value */     \
      X(TRANSPOSE) /* a.transpose(axes) with constant axes: the callee is the attribute node;     \
                      shape holds the permutation (ret->ndim entries); lower_array.c */           \
      X(CARRAY)    /* carray/farray(ptr, shape[, dtype]): name "cuda.carray" or "cuda.farray";    \
                      argtypes the pointer and the shape (an integer or a tuple of them); ret the \
                      array (layout C or F); lower_array.c */                                     \
      X(VIEW) /* a.view(dtype): the callee is the attribute node; argtypes the dtype's DTYPE;     \
                 ret the array reinterpreted (same ndim and layout); lower_array.c */             \
      X(FROM_BUFFER) /* ffi.from_buffer(array) of a cffi.FFI global: ret CPointer(dtype), the     \
                        array's data pointer (numba's cffi_utils) */

typedef enum nbc__builtin {
#define NBC__B_ENUM_(name) NBC__B_##name,
  NBC__BUILTINS(NBC__B_ENUM_)
#undef NBC__B_ENUM_
} nbc__builtin;

typedef struct nbc__call {
  nbc__builtin builtin;
  const char *name;           /* MATH: the function name; others: for messages */
  struct nbc__func *func;     /* FUNC: the callee's specialisation */
  const nbc__type *ret;       /* the result type */
  const nbc__type **argtypes; /* the types the arguments are converted to (as cast) */
  int nargs;
  int64_t *shape;    /* SHARED/LOCAL_ARRAY: constant shape, ndim = ret->ndim */
  int64_t alignment; /* SHARED/LOCAL_ARRAY: the alignment asked for, or 0 */
  bool nonneg;       /* CACHE_HINT: every index is known non-negative (infer.c's
                        analysis), so none needs the negative-index wraparound */
  bool c_abi;        /* EXTERN: a declared function with the C ABI, called as
                        `RT @name(args...)` (else `i32 @name(RT*, args...)`) */
} nbc__call;

/* infer.c's record on a SUBSCRIPT node slicing a tuple (t[1:], t[::-1]): the items taken. */
typedef struct nbc__tuple_slice {
  int count;
  int index[64];
} nbc__tuple_slice;

/* The typed program: the entry and every callee specialisation. */
typedef struct nbc__program {
  nbc__func *entry;
  nbc__func *funcs;         /* list through ->next, entry included */
  bool uses_libdevice;      /* any __nv_* call was lowered */
  nbc_raise_site_t *raises; /* lower_raise.c: a debug kernel's raise sites (arena) */
  int nraises, capraises;
} nbc__program;

/* Types the function `def` of `module` for the signature, recursively specialising callees.
 * Fills ctx->program. */
bool nbc__infer(nbc__ctx *ctx, const nbc__module *module, nbc__node *def,
                const nbc__signature *sig);
/* Prints every specialisation's variables and each expression's type (--dump=types). */
void nbc__infer_dump(nbc__buf *out, const nbc__program *program);

/* infer.c: the enum class global (NBC_GLOBAL_ENUM) a NAME node names, or NULL; the lowering
 * reads its members' values from it. */
const nbc__global *nbc__infer_enum_global(const nbc__node *n);
/* The index of the member called name in enum global g (NBC_GLOBAL_ENUM), or -1. */
int nbc__enum_member_index(const nbc_global_t *g, const char *name);

/* ==================================================================== lib_numpy.c === */
/* The numpy names kernels use (`import numpy as np`): dtypes, constants, ufuncs. */
/* A numpy dtype attribute (np.float32, np.double, np.bool_, np.byte = int8...), or NULL. */
const nbc__type *nbc__numpy_dtype(const char *name);
/* What numpy.dtype(text) is, for the texts that name a type kernels have: a numpy name
 * ("float32", "double"), a type code with an optional '<', '=' or '|' ("f4", "<i8", "?", "d")
 * or a date ("M8[D]", "<m8[s]", "datetime64[ms]"); NULL for any other. */
const nbc__type *nbc__numpy_dtype_string(const char *text);
/* np.pi, np.e, np.euler_gamma, np.inf, np.nan. */
bool nbc__numpy_constant(const char *name, double *pv);
/* numpy's __name__ of a ufunc kernels support ("absolute" for "abs"), or NULL. */
const char *nbc__numpy_ufunc(const char *name);
/* numba's typing of the ufunc on scalars: the result type, with *ploop the type every
 * argument converts to (the chosen loop's input type); NULL when numba has no loop (*pwhy
 * NULL: report the argument types) or nbcuda refuses the arguments (*pwhy says why). */
const nbc__type *nbc__type_numpy(const char *name, const nbc__type *const *args, int nargs,
                                 const nbc__type **ploop, const char **pwhy);
/* The number of inputs of a ufunc kernels support, or 0. */
int nbc__numpy_ufunc_nin(const char *name);

/* ======================================================================== lower.c === */
/* Emits the NVVM IR module (LLVM 7 text, typed pointers) for the program into out:
 * datalayout, triple, every function, kernel annotations and @llvm.used, debug metadata for
 * debug/lineinfo, !nvvmir.version ({2,0} or {2,0,3,2} with debug info). */
bool nbc__lower(nbc__ctx *ctx, const nbc__program *program, nbc__buf *out);

/* ======================================================================== stack.c === */
/* Runs fn(arg) on a thread with a large stack (512 MB of address space, 64 MB where that
 * cannot be had, else the caller's own) and waits for it; on such a thread already, runs it
 * directly. The per-thread last error fn leaves is on that thread: carry it back. */
void nbc__stack_run(void (*fn)(void *), void *arg);
/* Whether the calling thread is one nbc__stack_run made and has used more than half its
 * stack (false on any other thread). Inference types no further nested callee past it. */
bool nbc__stack_half_used(void);

/* ========================================================================= nvvm.c === */
/* libNVVM, loaded once per process (NBCUDA_NVVM, CUDA_HOME/CUDA_PATH, /usr/local/cuda,
 * the loader path, NVIDIA's pip wheels; every place searched is named in the error). */
nbc_status_t nbc__nvvm_load(void);
nbc_status_t nbc__nvvm_version(int *pmajor, int *pminor);
/* "compute_XY" for a cc: the nearest supported at or below; below the minimum (7.5) is
 * NBC_UNSUPPORTED_CC naming it. cc 0.0 means the default (env or 7.5). */
nbc_status_t nbc__nvvm_arch(int cc_major, int cc_minor, char cc_arch, char *out, size_t size);

typedef struct nbc__nvvm_output {
  char *code;  /* malloc'd: PTX (NUL-terminated) or LTO-IR bytes */
  size_t size; /* PTX: strlen; LTO-IR: bytes */
  char *log;   /* malloc'd, "" if empty */
} nbc__nvvm_output;

/* Verifies then compiles the IR (options from ctx->options), lazily adding libdevice when
 * needed. libNVVM's log goes into the diagnostic on failure (NBC_NVVM_ERROR). */
bool nbc__nvvm_compile(nbc__ctx *ctx, const char *ir, size_t size, bool needs_libdevice,
                       nbc__nvvm_output *pout);
void nbc__nvvm_output_free(nbc__nvvm_output *out);
/* The reason nbc__nvvm_load failed (names every place searched), "" after success. */
const char *nbc__nvvm_load_error(void);
/* The path libNVVM was loaded from, NULL when it is not loaded. */
const char *nbc__nvvm_path(void);
/* libdevice's bytes (read once per process); *perror says why when it cannot be found. */
nbc_status_t nbc__libdevice_get(const char **pdata, size_t *psize, const char **perror);
/* The file libdevice was read from (reading it if that has not happened yet), NULL when it
 * cannot be found or read (nbc__libdevice_get says why). */
const char *nbc__libdevice_path(void);
/* The default cc: NBCUDA_DEFAULT_PTX_CC, NUMBA_CUDA_DEFAULT_PTX_CC ("M.m" prefix) or 7.5,
 * never below the lowest supported. */
void nbc__nvvm_default_cc(int *pmajor, int *pminor);
/* The compute capabilities (major*10+minor) accepted as -arch, ascending. */
void nbc__nvvm_supported_ccs(const int **plist, int *pcount);
/* Fills argv with libNVVM's options for o and arch (strings in buf); returns the count. */
int nbc__nvvm_options(const nbc_compile_options_t *o, const char *arch, char buf[][32],
                      const char **argv);
/* The search for libnvvm.so (base/toolkit.c's, with libNVVM's opener), with its inputs
 * explicit so tests can run it on a fake file system: get reads environment variables, root prefixes the system folders
 * (/usr/local/cuda, /usr/local/lib/python3*), use_loader tries dlopen by bare name, open
 * tries one existing candidate. Returns 0 with the chosen path, else 1 with message listing
 * every place searched, one "  - place (why)" line each. */
typedef const char *(*nbc__getenv_fn)(const char *name);
typedef bool (*nbc__nvvm_opener)(void *data, const char *path);
int nbc__nvvm_locate(nbc__getenv_fn get, const char *root, bool use_loader,
                     nbc__nvvm_opener open, void *opener_data, char *path, size_t size,
                     char *message, size_t msize);

/* ====================================================================== compile.c === */
/* The pipeline's phases, timed by nbc__compile_ex (for the CLI's --verbose). */
typedef enum nbc__phase {
  NBC__PHASE_LOAD, /* lex, parse, resolve, find the function */
  NBC__PHASE_SIGNATURE,
  NBC__PHASE_INFER,
  NBC__PHASE_LOWER,
  NBC__PHASE_NVVM, /* libNVVM verify + compile (+ libdevice) */
  NBC__PHASE_COUNT
} nbc__phase;
extern const char *const nbc__compile_phase_names[NBC__PHASE_COUNT];

/* Which phase's output to return instead of code (the CLI's --dump=). */
typedef enum nbc__dump {
  NBC__DUMP_NONE = 0,
  NBC__DUMP_TOKENS,
  NBC__DUMP_AST,
  NBC__DUMP_TYPES,
  NBC__DUMP_IR
} nbc__dump;

typedef struct nbc__compile_info {
  nbc__dump dump;              /* in */
  double ms[NBC__PHASE_COUNT]; /* out: milliseconds spent in each phase */
} nbc__compile_info;

/* nbc_compile with per-phase timing, and optionally stopping after a phase: then the
 * result's code is that phase's printed output (tokens, AST, types or the NVVM IR). */
nbc_status_t nbc__compile_ex(const nbc_source_t *source, const char *name,
                             const char *signature, const nbc_compile_options_t *options,
                             const nbc_resolver_t *resolver, nbc__compile_info *info,
                             nbc_compile_result_t **presult);

#endif /* NBCUDA_COMPILER_H */
