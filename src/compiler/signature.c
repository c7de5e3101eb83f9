/* signature.c — numba's signature syntax read into nbcuda's types.
 *
 * A recursive-descent parser over the text (the grammar is below, at sigp). Every nested
 * type goes through sig_type, which counts the nesting against one bound (NBC__SIG_MAX_DEPTH)
 * for tuples, named tuples, records, arrays, pointers and enums alike, so no text can exhaust
 * the stack; and a signature's types may expand to at most NBC__SIG_MAX_PARTS parts (a
 * UniTuple repeats its item without more text, so 81 bytes can describe millions), so that
 * no later walk of the types (inference, lowering, libNVVM) runs away. A kernel's
 * parameters are also checked against the driver's limit (nbc__signature_parse_kernel).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"

#define S_(k) nbc__type_scalar(NBC__T_##k)
/* A recursive-descent parser over the signature text:
 *   signature := [type] '(' [type {',' type} [',']] ')' | type
 *   type      := (NAME | record) ['[' dim {',' dim} ']']
 *              | ('UniTuple' '(' type (',' | 'x') INT ')')
 *              | ('Tuple' '(' [type {',' type}] ')') | ('Tuple' '((' [type {',' type}] '))')
 *              | ('CPointer' '(' NAME ')') | NAME '*'      (numba's CPointer of a number)
 *              | 'Enum<' NAME '>(' qualified class name ')'  (numba's EnumMember)
 *              | 'IntEnum<' NAME '>(' qualified class name ')'  (numba's IntEnumMember)
 *   record    := numba's printed Record(...) (sig_record)
 *   dim       := ':' | '::1'
 * Layout: '::1' last is C (also for one dimension), '::1' first is F, none is A. */
typedef struct sigp {
  nbc__ctx *ctx;
  const char *text;
  const char *p;
  nbc__file file;
  int depth; /* types being parsed, one in another (sig_type) */
  const nbc__sig_mode *mode;
  int arg; /* the argument being read (0-based), -1 for the return type */
} sigp;

static void sig_skip(sigp *s) {
  while (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r')
    s->p++;
}

static bool sig_error(sigp *s, const char *fmt, const char *arg) {
  int col = (int)(s->p - s->text) + 1;
  char msg[384];
  snprintf(msg, sizeof msg, fmt, arg);
  const nbc__sig_mode *m = s->mode;
  if (m && m->names && s->arg >= 0 && s->arg < m->nnames && s->ctx->status == NBC_OK) {
    /* typed from a call's arguments: the text is the caller's, not the user's */
    s->ctx->status = NBC_SIGNATURE_ERROR;
    s->ctx->diag.len = 0;
    nbc__buf_printf(&s->ctx->diag, "the value passed for '%s' (argument %d) cannot be typed: %s",
                    m->names[s->arg], s->arg + 1, msg);
    return false;
  }
  nbc__diag_error(s->ctx, NBC_SIGNATURE_ERROR, &s->file, 1, col,
                  "invalid signature: %s at column %d", msg, col);
  return false;
}

/* What is at the cursor, for messages. */
static const char *sig_found(sigp *s, char *buf, size_t size) {
  if (!*s->p) return "end of signature";
  const char *e = s->p;
  if ((*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z') || *e == '_') {
    while ((*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z') || *e == '_' ||
           (*e >= '0' && *e <= '9'))
      e++;
  } else {
    e++;
  }
  snprintf(buf, size, "'%.*s'", (int)(e - s->p), s->p);
  return buf;
}

static bool sig_expect(sigp *s, char c) {
  sig_skip(s);
  if (*s->p == c) {
    s->p++;
    return true;
  }
  char want[64], found[64];
  snprintf(want, sizeof want, "expected '%c' but found %%s", c);
  return sig_error(s, want, sig_found(s, found, sizeof found));
}

static const nbc__type *sig_type(sigp *s);

static bool sig_name(sigp *s, const char **pstart, size_t *plen) {
  sig_skip(s);
  const char *b = s->p;
  if (!((*b >= 'a' && *b <= 'z') || (*b >= 'A' && *b <= 'Z') || *b == '_')) {
    char found[64];
    return sig_error(s, "expected a type name but found %s", sig_found(s, found, sizeof found));
  }
  while ((*s->p >= 'a' && *s->p <= 'z') || (*s->p >= 'A' && *s->p <= 'Z') || *s->p == '_' ||
         (*s->p >= '0' && *s->p <= '9'))
    s->p++;
  *pstart = b;
  *plen = (size_t)(s->p - b);
  return true;
}

/* '[' dim {',' dim} ']' after a scalar type. */
static const nbc__type *sig_array(sigp *s, const nbc__type *dtype) {
  int ndim = 0, unit_at = -1;
  const char *unit_pos = NULL;
  s->p++; /* '[' */
  for (;;) {
    sig_skip(s);
    if (*s->p != ':') {
      char found[64];
      sig_error(s, "expected ':' or '::1' in array dimensions but found %s",
                sig_found(s, found, sizeof found));
      return NULL;
    }
    const char *dim_pos = s->p;
    s->p++;
    sig_skip(s);
    if (*s->p == ':') {
      unit_pos = dim_pos;
      s->p++;
      sig_skip(s);
      if (*s->p != '1') {
        char found[64];
        sig_error(s, "expected '1' after '::' but found %s", sig_found(s, found, sizeof found));
        return NULL;
      }
      s->p++;
      if (unit_at >= 0) {
        sig_error(s, "%s", "more than one '::1' dimension");
        return NULL;
      }
      unit_at = ndim;
    }
    if (++ndim > 32) {
      sig_error(s, "%s", "arrays have at most 32 dimensions");
      return NULL;
    }
    sig_skip(s);
    if (*s->p == ',') {
      s->p++;
      continue;
    }
    if (*s->p == ']') {
      s->p++;
      break;
    }
    char found[64];
    sig_error(s, "expected ',' or ']' but found %s", sig_found(s, found, sizeof found));
    return NULL;
  }
  char layout = 'A';
  if (unit_at == ndim - 1)
    layout = 'C';
  else if (unit_at == 0)
    layout = 'F';
  else if (unit_at > 0) {
    s->p = unit_pos;
    sig_error(s, "%s", "'::1' must be the first or the last dimension");
    return NULL;
  }
  const nbc__type *t = nbc__type_array(s->ctx, dtype, ndim, layout);
  if (!t) nbc__diag_oom(s->ctx);
  return t;
}

/* Whether a signature's tuple may hold these items (scalars, arrays, tuples); reported. */
static bool sig_tuple_items_ok(sigp *s, const nbc__type *const *items, int count) {
  for (int i = 0; i < count; i++)
    if (!nbc__type_is_number(items[i]) && !nbc__type_is_datetime(items[i]) &&
        items[i]->kind != NBC__T_TUPLE && items[i]->kind != NBC__T_ARRAY)
      return sig_error(s, "%s", "tuples may only hold scalars, arrays and tuples of them");
  return true;
}

static const nbc__type *sig_tuple(sigp *s, bool uni) {
  const nbc__type *items[64];
  int count = 0;
  if (!sig_expect(s, '(')) return NULL;
  if (uni) {
    const nbc__type *item = sig_type(s);
    if (!item) return NULL;
    sig_skip(s);
    if (*s->p == 'x') /* numba's printed form, UniTuple(float64 x 2) */
      s->p++;
    else if (!sig_expect(s, ','))
      return NULL;
    sig_skip(s);
    char *end;
    long n = strtol(s->p, &end, 10);
    if (end == s->p || n < 0 || n > 64) {
      sig_error(s, "%s", "expected a tuple length from 0 to 64");
      return NULL;
    }
    s->p = end;
    for (long i = 0; i < n; i++)
      items[count++] = item;
  } else {
    sig_skip(s);
    /* numba's own spelling, Tuple((int32, float64)): the items in a second pair of
     * parentheses */
    bool inner = *s->p == '(';
    if (inner) {
      s->p++;
      sig_skip(s);
    }
    while (*s->p != ')') {
      if (count == 64) {
        sig_error(s, "%s", "a tuple of more than 64 items (tuples hold at most 64)");
        return NULL;
      }
      if (!(items[count++] = sig_type(s))) return NULL;
      sig_skip(s);
      if (*s->p == ',') {
        s->p++;
        sig_skip(s);
      } else
        break;
    }
    if (inner && !sig_expect(s, ')')) return NULL;
  }
  if (!sig_expect(s, ')') || !sig_tuple_items_ok(s, items, count)) return NULL;
  const nbc__type *t = nbc__type_tuple(s->ctx, items, count);
  if (!t) nbc__diag_oom(s->ctx);
  return t;
}

/* Expects the literal text word (after optional blanks). */
static bool sig_word(sigp *s, const char *word) {
  sig_skip(s);
  size_t n = strlen(word);
  if (strncmp(s->p, word, n) == 0) {
    s->p += n;
    return true;
  }
  char want[96], found[64];
  snprintf(want, sizeof want, "expected '%s' but found %%s", word);
  return sig_error(s, want, sig_found(s, found, sizeof found));
}

static bool sig_int(sigp *s, int64_t *pv, const char *what) {
  sig_skip(s);
  char *end;
  long long v = strtoll(s->p, &end, 10);
  if (end == s->p || v < 0 || v > ((int64_t)1 << 40)) return sig_error(s, "expected %s", what);
  s->p = end;
  *pv = v;
  return true;
}

/* '(' and the element type of an array spelled by name (a scalar or a record), or NULL
 * reported (what: the message for another type, at its start). */
static const nbc__type *sig_element(sigp *s, const char *what) {
  if (!sig_expect(s, '(')) return NULL;
  const char *at = (sig_skip(s), s->p);
  const nbc__type *e = sig_type(s);
  if (e && !nbc__type_is_number(e) && e->kind != NBC__T_RECORD && !nbc__type_is_datetime(e) &&
      !nbc__type_is_charseq(e)) {
    s->p = at;
    return sig_error(s, "%s", what), NULL;
  }
  return e;
}

/* numba's nestedarray(scalar, (d0, d1, ...)) after its name: a C array type, its extents in
 * *pshape (arena memory). */
static const nbc__type *sig_nested_array(sigp *s, const int64_t **pshape) {
  int64_t dims[32];
  int ndim = 0;
  const nbc__type *e = sig_element(s, "a nested array holds scalars or records");
  if (!e || !sig_expect(s, ',') || !sig_expect(s, '(')) return NULL;
  for (;;) {
    sig_skip(s);
    if (*s->p == ')' && ndim > 0) break;
    if (ndim == 32) return sig_error(s, "%s", "a nested array has at most 32 dimensions"), NULL;
    if (!sig_int(s, &dims[ndim], "an extent")) return NULL;
    if (dims[ndim++] == 0) return sig_error(s, "%s", "a nested array extent of 0"), NULL;
    sig_skip(s);
    if (*s->p == ',') s->p++;
    else if (*s->p != ')') return sig_error(s, "%s", "expected ',' or ')' in the extents"), NULL;
  }
  s->p++; /* ')' */
  if (!sig_expect(s, ')')) return NULL;
  int64_t *shape = nbc__arena_alloc(s->ctx->arena, sizeof *shape * (size_t)ndim);
  const nbc__type *t = shape ? nbc__type_array(s->ctx, e, ndim, 'C') : NULL;
  if (!t) return nbc__diag_oom(s->ctx), NULL;
  memcpy(shape, dims, sizeof *shape * (size_t)ndim);
  *pshape = shape;
  return t;
}

/* True or False after optional blanks, into *pv; else reported as `what`. */
static bool sig_bool(sigp *s, bool *pv, const char *what) {
  sig_skip(s);
  if (strncmp(s->p, "True", 4) == 0) return s->p += 4, *pv = true, true;
  if (strncmp(s->p, "False", 5) == 0) return s->p += 5, *pv = false, true;
  return sig_error(s, "expected True or False (%s)", what);
}

/* A record's fields as read, before the record is made. */
enum { SIG_RECORD_MAX_FIELDS = 256 };
typedef struct sig_fields {
  const char *names[SIG_RECORD_MAX_FIELDS];
  const nbc__type *types[SIG_RECORD_MAX_FIELDS];
  const int64_t *shapes[SIG_RECORD_MAX_FIELDS];
  int64_t offsets[SIG_RECORD_MAX_FIELDS];
  int count;
} sig_fields;

/* A field's type, `nestedarray(...)` / `NestedArray(...)` included, checked to be what a record
 * may hold; into the next slot of f (its name already there). */
static bool sig_field_type(sigp *s, sig_fields *f) {
  const char *at = (sig_skip(s), s->p);
  int i = f->count;
  f->shapes[i] = NULL;
  if (strncmp(s->p, "nestedarray", 11) == 0 || strncmp(s->p, "NestedArray", 11) == 0) {
    s->p += 11;
    if (!(f->types[i] = sig_nested_array(s, &f->shapes[i]))) return false;
  } else if (!(f->types[i] = sig_type(s))) {
    return false;
  }
  const nbc__type *t = f->types[i];
  if (!nbc__type_is_number(t) && t->kind != NBC__T_RECORD && !nbc__type_is_datetime(t) &&
      !nbc__type_is_charseq(t) && !f->shapes[i]) {
    s->p = at;
    return sig_error(s, "%s", "record fields must be scalars, records or "
                              "nestedarray(scalar, (extents))");
  }
  return true;
}

/* Skips the text of a title (any object's str) up to the first of the given stops. */
static void sig_skip_title(sigp *s, const char *stops) {
  while (*s->p && !strchr(stops, *s->p)) s->p++;
}

/* numba's str of a Record, after '(':
 *   name '[type=' field ';offset=' INT [';alignment=' INT | ';title=' TEXT] ']' {',' ...}
 *   ';' size ';' ('True'|'False') ')'
 *   field := type | 'nestedarray(' scalar ', (' INT {',' INT} [','] '))' */
static bool sig_record_str(sigp *s, sig_fields *f, int64_t *psize, bool *paligned) {
  sig_skip(s);
  while (*s->p != ';') {
    if (f->count == SIG_RECORD_MAX_FIELDS) return sig_error(s, "%s", "too many record fields");
    const char *name;
    size_t len;
    if (!sig_name(s, &name, &len)) return false;
    f->names[f->count] = nbc__arena_printf(s->ctx->arena, "%.*s", (int)len, name);
    if (!sig_word(s, "[type=") || !sig_field_type(s, f) || !sig_word(s, ";offset=") ||
        !sig_int(s, &f->offsets[f->count], "a field offset"))
      return false;
    int64_t align;
    sig_skip(s);
    if (strncmp(s->p, ";alignment=", 11) == 0) {
      s->p += 11;
      if (!sig_int(s, &align, "an alignment")) return false;
    } else if (strncmp(s->p, ";title=", 7) == 0) {
      s->p += 7;
      sig_skip_title(s, "]");
    }
    if (!sig_expect(s, ']')) return false;
    f->count++;
    sig_skip(s);
    if (*s->p == ',') s->p++;
    else if (*s->p != ';') {
      char found[64];
      return sig_error(s, "expected ',' or ';' but found %s", sig_found(s, found, sizeof found));
    }
    sig_skip(s);
  }
  s->p++; /* ';' */
  return sig_int(s, psize, "the record size") && sig_expect(s, ';') &&
         sig_bool(s, paligned, "aligned") && sig_expect(s, ')');
}

/* A quoted field name ('name' or "name") into *pname (arena). */
static bool sig_quoted_name(sigp *s, const char **pname) {
  sig_skip(s);
  char q = *s->p;
  if (q != '\'' && q != '"') return sig_error(s, "%s", "expected a quoted field name");
  const char *b = ++s->p;
  while (*s->p && *s->p != q) s->p++;
  if (*s->p != q) return sig_error(s, "%s", "a field name's quote is not closed");
  *pname = nbc__arena_printf(s->ctx->arena, "%.*s", (int)(s->p - b), b);
  s->p++;
  return *pname != NULL || (nbc__diag_oom(s->ctx), false);
}

/* numba's repr of a Record, at '[':
 *   '[' ('(' QNAME ', {' "'type': " type ", 'offset': " INT ", 'alignment': " (INT|'None')
 *        ", 'title': " TEXT ', })') {',' ...} '],' size ',' ('True'|'False') ')' */
static bool sig_record_repr(sigp *s, sig_fields *f, int64_t *psize, bool *paligned) {
  s->p++; /* '[' */
  for (sig_skip(s); *s->p != ']'; sig_skip(s)) {
    if (f->count == SIG_RECORD_MAX_FIELDS) return sig_error(s, "%s", "too many record fields");
    if (!sig_expect(s, '(') || !sig_quoted_name(s, &f->names[f->count]) ||
        !sig_expect(s, ',') || !sig_expect(s, '{') || !sig_word(s, "'type':") ||
        !sig_field_type(s, f) || !sig_expect(s, ',') || !sig_word(s, "'offset':") ||
        !sig_int(s, &f->offsets[f->count], "a field offset") || !sig_expect(s, ',') ||
        !sig_word(s, "'alignment':"))
      return false;
    sig_skip(s);
    int64_t align;
    if (strncmp(s->p, "None", 4) == 0) s->p += 4;
    else if (!sig_int(s, &align, "an alignment or None")) return false;
    if (!sig_expect(s, ',') || !sig_word(s, "'title':")) return false;
    sig_skip_title(s, ",}");
    sig_skip(s);
    if (*s->p == ',') s->p++;
    if (!sig_expect(s, '}') || !sig_expect(s, ')')) return false;
    f->count++;
    sig_skip(s);
    if (*s->p == ',') s->p++;
  }
  s->p++; /* ']' */
  return sig_expect(s, ',') && sig_int(s, psize, "the record size") && sig_expect(s, ',') &&
         sig_bool(s, paligned, "aligned") && sig_expect(s, ')');
}

/* numba's printed Record (a numpy structured dtype), after the word Record: its str
 * (sig_record_str) or its repr (sig_record_repr). Fields must lie inside the record, array
 * fields aligned for their elements. */
static const nbc__type *sig_record(sigp *s) {
  sig_fields *f = nbc__arena_alloc(s->ctx->arena, sizeof *f);
  if (!f) return nbc__diag_oom(s->ctx), NULL;
  f->count = 0;
  int64_t size = 0;
  bool aligned = false;
  if (!sig_expect(s, '(')) return NULL;
  sig_skip(s);
  if (!(*s->p == '[' ? sig_record_repr : sig_record_str)(s, f, &size, &aligned)) return NULL;
  const char **names = f->names;
  const nbc__type **types = f->types;
  const int64_t *offsets = f->offsets;
  int count = f->count;
  const nbc__type *t =
      nbc__type_record(s->ctx, names, types, offsets, f->shapes, count, size, aligned);
  if (!t) return nbc__diag_oom(s->ctx), NULL;
  for (int i = 0; i < count; i++) {
    if (offsets[i] + nbc__type_record_field_size(t, i) > size)
      return sig_error(s, "field '%s' lies outside the record", names[i]), NULL;
    for (int j = 0; j < i; j++)
      if (strcmp(names[i], names[j]) == 0)
        return sig_error(s, "field '%s' appears twice", names[i]), NULL;
    /* a record or an array field must start where its (elements') fields are aligned; a
     * scalar field may not be (it is read with the alignment its offset allows) */
    bool array = types[i]->kind == NBC__T_ARRAY;
    if (!array && types[i]->kind != NBC__T_RECORD) continue;
    int need = nbc__type_natural_align(array ? types[i]->dtype : types[i]);
    if (nbc__type_record_field_align(t, i) >= need) continue;
    if (array)
      return sig_error(s, "the array field '%s' is not aligned for its elements (a packed "
                       "record's arrays must start at a multiple of their alignment)",
                       names[i]), NULL;
    const char *why = nbc__arena_printf(
        s->ctx->arena, "'%s' (its fields need %d-byte alignment; offset %lld in a record "
        "of %lld bytes)", names[i], need, (long long)offsets[i], (long long)size);
    return sig_error(s, "the record field %s is not aligned for its own fields",
                     why ? why : names[i]), NULL;
  }
  return t;
}

/* A number type (of a CPointer, an Enum), or NULL reported as `what` at its start. */
static const nbc__type *sig_number(sigp *s, const char *what) {
  const char *at = (sig_skip(s), s->p);
  const nbc__type *t = sig_type(s);
  if (t && !nbc__type_is_number(t)) {
    s->p = at;
    return sig_error(s, "%s", what), NULL;
  }
  return t;
}

/* CPointer(number), after its name. */
static const nbc__type *sig_pointer(sigp *s) {
  sig_skip(s);
  if (*s->p != '(') return sig_error(s, "%s", "expected '(' after CPointer"), NULL;
  s->p++;
  const nbc__type *t = sig_number(s, "CPointer of other than a number");
  if (!t) return NULL;
  sig_skip(s);
  if (*s->p != ')') return sig_error(s, "%s", "expected ')' after CPointer's type"), NULL;
  s->p++;
  return nbc__type_pointer(s->ctx, t);
}

/* Enum<dtype>(class), IntEnum<dtype>(class) (int_enum): after the name; the class's qualified
 * name runs to the ')' (it may hold dots and "<locals>"). */
static const nbc__type *sig_enum(sigp *s, bool int_enum) {
  s->p++; /* '<' */
  const char *at = (sig_skip(s), s->p);
  const nbc__type *t = sig_type(s);
  if (t && !nbc__type_is_number(t) && !nbc__type_is_numbers_tuple(t)) {
    s->p = at;
    return sig_error(s, "%s", "an Enum of other than numbers or tuples of them"), NULL;
  }
  if (t && int_enum && !nbc__type_is_int(t)) {
    s->p = at;
    return sig_error(s, "%s", "an IntEnum of other than integers"), NULL;
  }
  if (!t) return NULL;
  sig_skip(s);
  if (s->p[0] != '>' || s->p[1] != '(')
    return sig_error(s, "%s", "expected '>(' after Enum's value type"), NULL;
  s->p += 2;
  const char *start = s->p;
  while (*s->p && *s->p != ')' && *s->p != ',' && *s->p != ' ')
    s->p++;
  if (*s->p != ')' || s->p == start)
    return sig_error(s, "%s", "expected the enum class's name and ')'"), NULL;
  const char *name = nbc__arena_printf(s->ctx->arena, "%.*s", (int)(s->p - start), start);
  s->p++;
  return name ? nbc__type_enum(s->ctx, NBC__T_ENUM, name, t, int_enum) : NULL;
}

/* NamedTuple(Point, x: int64, y: float64): numba's NamedTuple/NamedUniTuple of the class
 * Point, its fields' names and types (numba prints it "Point(int64, float64)", without the
 * names a kernel reads the fields by). */
static const nbc__type *sig_named_tuple(sigp *s) {
  const nbc__type *items[64];
  const char *names[64];
  int count = 0;
  const char *cls;
  size_t cls_len;
  if (!sig_expect(s, '(') || (sig_skip(s), !sig_name(s, &cls, &cls_len))) return NULL;
  sig_skip(s);
  while (*s->p == ',') {
    s->p++;
    sig_skip(s);
    const char *f;
    size_t flen;
    if (count == 64)
      return sig_error(s, "%s", "a tuple of more than 64 items (tuples hold at most 64)"), NULL;
    if (!sig_name(s, &f, &flen) || !sig_expect(s, ':')) return NULL;
    names[count] = nbc__arena_printf(s->ctx->arena, "%.*s", (int)flen, f);
    if (!names[count] || !(items[count] = sig_type(s))) return NULL;
    count++;
    sig_skip(s);
  }
  if (!sig_expect(s, ')') || !sig_tuple_items_ok(s, items, count)) return NULL;
  nbc__type *t = (nbc__type *)nbc__type_tuple(s->ctx, items, count);
  const char **copy = nbc__arena_alloc(s->ctx->arena, sizeof *copy * (size_t)(count + 1));
  if (!t || !copy) return nbc__diag_oom(s->ctx), NULL;
  memcpy(copy, names, sizeof *copy * (size_t)count);
  t->field_names = copy;
  t->name = nbc__arena_printf(s->ctx->arena, "%.*s", (int)cls_len, cls);
  return t->name ? t : NULL;
}

/* A datetime64 or timedelta64 after its name: numba's NPDatetime('D') / NPTimedelta('D')
 * (quote either way; '' the generic unit) when quoted, else its printed datetime64[D]. */
static const nbc__type *sig_datetime(sigp *s, nbc__type_kind kind, bool quoted) {
  char open = quoted ? '(' : '[', close = quoted ? ')' : ']';
  if (!sig_expect(s, open)) return NULL;
  sig_skip(s);
  char quote = quoted ? *s->p : 0;
  if (quoted && quote != '\'' && quote != '"')
    return sig_error(s, "%s", "expected a quoted unit, as NPDatetime('D')"), NULL;
  if (quoted) s->p++;
  const char *start = s->p;
  while ((*s->p >= 'a' && *s->p <= 'z') || (*s->p >= 'A' && *s->p <= 'Z')) s->p++;
  int unit = nbc__datetime_unit(start, (size_t)(s->p - start));
  if (unit < 0) {
    s->p = start;
    return sig_error(s, "%s", "unknown datetime unit (Y M W D h m s ms us ns ps fs as, or "
                              "none)"), NULL;
  }
  if (quoted && *s->p++ != quote) return sig_error(s, "%s", "expected the unit's closing quote"),
                                         NULL;
  if (!sig_expect(s, close)) return NULL;
  const nbc__type *t = nbc__type_datetime(kind, unit);
  sig_skip(s);
  return *s->p == '[' ? sig_array(s, t) : t;
}

/* An array type of numba's spelling with its flags: a read-only array (numba's `readonly
 * array`, Array(..., True)), and numba's `unaligned`, which nbcuda models only as what numba
 * itself makes unaligned, an array of a packed record: elements of other types are always read
 * at their natural alignment. */
static const nbc__type *sig_array_flags(sigp *s, const char *at, const nbc__type *a,
                                        bool readonly, bool unaligned) {
  if (!a) return NULL;
  if (unaligned && !(a->dtype->kind == NBC__T_RECORD && !a->dtype->aligned)) {
    s->p = at;
    return sig_error(s, "%s", "an unaligned array of other than a packed record (nbcuda reads "
                              "array elements at their natural alignment)"), NULL;
  }
  return readonly ? nbc__type_readonly(s->ctx, a) : a;
}

/* The opening both spellings of an array type share after its name (at '('), "dtype, ndim":
 * the element type in *pe and the number of dimensions (at most 32) in *pndim. */
static bool sig_array_head(sigp *s, const nbc__type **pe, int64_t *pndim) {
  *pndim = 0;
  *pe = sig_element(s, "an array holds scalars or records");
  if (!*pe) return false;
  if (!sig_expect(s, ',') || !sig_int(s, pndim, "the number of dimensions")) return false;
  if (*pndim > 32) return sig_error(s, "%s", "an array has at most 32 dimensions");
  return true;
}

/* numba's printed array type after its name: array(dtype, <ndim>d, <layout>), the spelling
 * of every rank, 0-d arrays included (which the slice spelling cannot write). */
static const nbc__type *sig_printed_array(sigp *s) {
  const nbc__type *e;
  int64_t ndim;
  if (!sig_array_head(s, &e, &ndim)) return NULL;
  if (*s->p != 'd') return sig_error(s, "%s", "expected 'd' after the number of dimensions"),
                    NULL;
  s->p++;
  if (!sig_expect(s, ',')) return NULL;
  sig_skip(s);
  char layout = *s->p;
  if (layout != 'C' && layout != 'F' && layout != 'A')
    return sig_error(s, "%s", "expected the layout C, F or A"), NULL;
  s->p++;
  if (!sig_expect(s, ')')) return NULL;
  /* numba: the layout of an array of at most one dimension prints as it was made */
  return nbc__type_array(s->ctx, e, (int)ndim, layout);
}

/* numba's repr of an array type after its name (at '('):
 *   Array(dtype, ndim, 'layout'[, readonly][, aligned=True|False]) */
static const nbc__type *sig_repr_array(sigp *s, const char *at) {
  const nbc__type *e;
  int64_t ndim;
  if (!sig_array_head(s, &e, &ndim)) return NULL;
  if (!sig_expect(s, ',')) return NULL;
  sig_skip(s);
  char quote = *s->p, layout = quote ? s->p[1] : 0;
  if ((quote != '\'' && quote != '"') || (layout != 'C' && layout != 'F' && layout != 'A') ||
      s->p[2] != quote)
    return sig_error(s, "%s", "expected the layout 'C', 'F' or 'A'"), NULL;
  s->p += 3;
  bool readonly = false, aligned = true;
  for (int arg = 0; arg < 2; arg++) { /* [, readonly] [, aligned=...] */
    sig_skip(s);
    if (*s->p != ',') break;
    s->p++;
    sig_skip(s);
    if (*s->p == 'a') {
      if (!sig_word(s, "aligned") || !sig_expect(s, '=') ||
          !sig_bool(s, &aligned, "aligned"))
        return NULL;
      break;
    }
    if (arg > 0) return sig_word(s, "aligned="), NULL; /* reports what was found */
    if (!sig_bool(s, &readonly, "read-only")) return NULL;
  }
  if (!sig_expect(s, ')')) return NULL;
  const nbc__type *a = nbc__type_array(s->ctx, e, (int)ndim, layout);
  if (!a) return nbc__diag_oom(s->ctx), NULL;
  return sig_array_flags(s, at, a, readonly, !aligned);
}

/* numba's printed `readonly array(...)` / `unaligned array(...)` / `unaligned readonly
 * array(...)`, after the first word (its length len). */
static const nbc__type *sig_prefixed_array(sigp *s, const char *at, const char *name,
                                           size_t len) {
  bool readonly = false, unaligned = false;
  for (;;) {
    if (len == 8 && memcmp(name, "readonly", 8) == 0 && !readonly) readonly = true;
    else if (len == 9 && memcmp(name, "unaligned", 9) == 0 && !unaligned) unaligned = true;
    else break;
    if (!sig_name(s, &name, &len)) return NULL;
  }
  if (!(len == 5 && memcmp(name, "array", 5) == 0) || (sig_skip(s), *s->p != '(')) {
    s->p = name;
    return sig_error(s, "%s", "expected array(...) after readonly / unaligned"), NULL;
  }
  return sig_array_flags(s, at, sig_printed_array(s), readonly, unaligned);
}

/* numba's printed CharSeq / UnicodeCharSeq, [char x 12] / [unichr x 12], at its '['; then an
 * array of them when '[' follows. */
static const nbc__type *sig_charseq(sigp *s) {
  s->p++; /* '[' */
  sig_skip(s);
  nbc__type_kind kind = strncmp(s->p, "char", 4) == 0     ? NBC__T_CHARSEQ
                        : strncmp(s->p, "unichr", 6) == 0 ? NBC__T_UNICHARSEQ
                                                          : NBC__T_VOID;
  if (kind == NBC__T_VOID)
    return sig_error(s, "%s", "expected [char x N] or [unichr x N]"), NULL;
  s->p += kind == NBC__T_CHARSEQ ? 4 : 6;
  sig_skip(s);
  int64_t n = 0;
  if (*s->p != 'x') return sig_error(s, "%s", "expected 'x' and a length"), NULL;
  s->p++;
  if (!sig_int(s, &n, "a length")) return NULL;
  if (n < 1 || n > (1 << 24)) return sig_error(s, "%s", "a string length from 1 to 2**24"), NULL;
  if (!sig_expect(s, ']')) return NULL;
  const nbc__type *t = nbc__type_charseq(s->ctx, kind, n);
  if (!t) return nbc__diag_oom(s->ctx), NULL;
  sig_skip(s);
  return *s->p == '[' ? sig_array(s, t) : t;
}

static const nbc__type *sig_type_body(sigp *s) {
  const char *name;
  size_t len;
  const char *at = (sig_skip(s), s->p);
  if (*s->p == '[') return sig_charseq(s);
  if (!sig_name(s, &name, &len)) return NULL;
  if (len == 5 && memcmp(name, "array", 5) == 0 && (sig_skip(s), *s->p == '('))
    return sig_printed_array(s);
  if (len == 5 && memcmp(name, "Array", 5) == 0 && (sig_skip(s), *s->p == '('))
    return sig_repr_array(s, at);
  if ((len == 8 && memcmp(name, "readonly", 8) == 0) ||
      (len == 9 && memcmp(name, "unaligned", 9) == 0))
    return sig_prefixed_array(s, at, name, len);
  if (len == 8 && memcmp(name, "UniTuple", 8) == 0) return sig_tuple(s, true);
  if (len == 5 && memcmp(name, "Tuple", 5) == 0) return sig_tuple(s, false);
  if (len == 10 && memcmp(name, "NamedTuple", 10) == 0) return sig_named_tuple(s);
  if (len == 8 && memcmp(name, "CPointer", 8) == 0) return sig_pointer(s);
  if ((len == 10 && memcmp(name, "NPDatetime", 10) == 0) ||
      (len == 10 && memcmp(name, "datetime64", 10) == 0))
    return sig_datetime(s, NBC__T_DATETIME, name[0] == 'N');
  if ((len == 11 && memcmp(name, "NPTimedelta", 11) == 0) ||
      (len == 11 && memcmp(name, "timedelta64", 11) == 0))
    return sig_datetime(s, NBC__T_TIMEDELTA, name[0] == 'N');
  if (len == 4 && memcmp(name, "Enum", 4) == 0 && *s->p == '<') return sig_enum(s, false);
  if (len == 7 && memcmp(name, "IntEnum", 7) == 0 && *s->p == '<') return sig_enum(s, true);
  if (len == 6 && memcmp(name, "Record", 6) == 0) {
    const nbc__type *r = sig_record(s);
    sig_skip(s);
    return r && *s->p == '[' ? sig_array(s, r) : r;
  }
  const nbc__type *t = nbc__type_by_name(name, len);
  if (!t && len == 4 && memcmp(name, "void", 4) == 0) t = S_(VOID);
  if (!t && len == 4 && memcmp(name, "none", 4) == 0) t = S_(VOID);
  if (!t) {
    s->p = at;
    char buf[96];
    snprintf(buf, sizeof buf, "%.*s", (int)(len > 80 ? 80 : len), name);
    sig_error(s, "unknown type '%s'", buf);
    return NULL;
  }
  sig_skip(s);
  if (*s->p == '*') { /* numba's printed CPointer: float32* */
    if (!nbc__type_is_number(t))
      return sig_error(s, "%s", "a pointer to other than a number"), NULL;
    s->p++;
    return nbc__type_pointer(s->ctx, t);
  }
  if (*s->p == '[') {
    if (t->kind == NBC__T_VOID) {
      sig_error(s, "%s", "an array of void");
      return NULL;
    }
    return sig_array(s, t);
  }
  return t;
}

/* A type, nested in at most NBC__SIG_MAX_DEPTH others: every construct that holds a type
 * (tuples, named tuples, records and their nested arrays, arrays, pointers, enums) reads it
 * through here, and the parser recurses once per level. */
static const nbc__type *sig_type(sigp *s) {
  if (s->depth > NBC__SIG_MAX_DEPTH) {
    sig_skip(s);
    char msg[96];
    snprintf(msg, sizeof msg, "types nested more than %d deep", NBC__SIG_MAX_DEPTH);
    return sig_error(s, "%s", msg), NULL;
  }
  s->depth++;
  const nbc__type *t = sig_type_body(s);
  s->depth--;
  return t;
}

/* ----------------------------------------------------------------- size limits */

/* The parts t expands to: one per scalar, array, record, pointer or None, and one per tuple
 * besides its items (an empty tuple is a part too); saturating. A UniTuple's items are one
 * type, counted once and multiplied, so this walks the distinct types only (as many as the
 * text wrote), however many parts they describe. */
static size_t type_parts(const nbc__type *t) {
  if (t->kind == NBC__T_ENUM) t = t->dtype; /* a member is its value */
  if (t->kind != NBC__T_TUPLE) return 1;
  size_t n = 1, item = 0;
  for (int i = 0; i < t->count; i++) {
    if (i == 0 || t->items[i] != t->items[i - 1]) item = type_parts(t->items[i]);
    n = n > SIZE_MAX - item ? SIZE_MAX : n + item;
  }
  return n;
}

/* One flattened kernel parameter of type t (not a tuple): its bytes, and its alignment in
 * *palign; as lower.c's nbc__lower_flatten passes it (an array as 5 + 2 ndim words, a record
 * by its address, bool as one byte, a complex number or vector as its members). */
static size_t leaf_param_bytes(const nbc__type *t, size_t *palign) {
  *palign = 8;
  if (t->kind == NBC__T_ARRAY) return 8 * (size_t)(5 + 2 * t->ndim);
  if (t->kind == NBC__T_RECORD || t->kind == NBC__T_POINTER) return 8;
  if (t->kind == NBC__T_NONE || t->kind == NBC__T_VOID) return *palign = 1, 0;
  if (t->kind == NBC__T_VECTOR) {
    size_t member = nbc__type_size(t->dtype);
    *palign = member ? member : 1;
    return member * (size_t)t->count;
  }
  size_t size = nbc__type_size(t);
  *palign = (size_t)nbc__type_natural_align(t);
  if (*palign == 0) *palign = 1;
  return size;
}

/* Lays out t's flattened kernel parameters after *poffset, each at its natural alignment (as
 * PTX's parameter space and cuLaunchKernel's packed buffer hold them). Stops once *poffset
 * passes limit or more than *pbudget parts were visited (*pbudget then wraps below 0). */
static void param_layout(const nbc__type *t, size_t *poffset, size_t limit, long *pbudget) {
  if (--*pbudget < 0 || *poffset > limit) return;
  if (t->kind == NBC__T_ENUM) t = t->dtype;
  if (t->kind == NBC__T_TUPLE) {
    for (int i = 0; i < t->count && *pbudget >= 0 && *poffset <= limit; i++)
      param_layout(t->items[i], poffset, limit, pbudget);
    return;
  }
  size_t align;
  size_t bytes = leaf_param_bytes(t, &align);
  *poffset = (*poffset + align - 1) / align * align + bytes;
}

/* The flattened bytes of t without padding, saturating: what the parameters take at least. */
static size_t param_bytes_unpadded(const nbc__type *t) {
  if (t->kind == NBC__T_ENUM) t = t->dtype;
  size_t align;
  if (t->kind != NBC__T_TUPLE) return leaf_param_bytes(t, &align);
  size_t n = 0, item = 0;
  for (int i = 0; i < t->count; i++) {
    if (i == 0 || t->items[i] != t->items[i - 1]) item = param_bytes_unpadded(t->items[i]);
    n = n > SIZE_MAX - item ? SIZE_MAX : n + item;
  }
  return n;
}

size_t nbc__kernel_param_limit(int cc_major, int cc_minor) {
  if (cc_major == 0 && cc_minor == 0) nbc__nvvm_default_cc(&cc_major, &cc_minor);
  return cc_major >= 7 ? 32764 : 4096;
}

/* A kernel's flattened parameters (args[0..nargs), each starting in the text at at[i]) must
 * fit the driver's limit for the target; reported at the argument that crosses it, with their
 * size (at least the unpadded bytes when they have too many parts to lay out). */
static bool sig_check_kernel(sigp *s, const nbc__type *const *args, const char *const *at,
                             int nargs) {
  const nbc_compile_options_t *o = s->ctx->options;
  int major = o ? o->cc_major : 0, minor = o ? o->cc_minor : 0;
  if (major == 0 && minor == 0) nbc__nvvm_default_cc(&major, &minor);
  size_t limit = nbc__kernel_param_limit(major, minor), offset = 0;
  long budget = NBC__SIG_MAX_PARTS;
  int crossing = 0;
  while (crossing < nargs && offset <= limit && budget >= 0)
    param_layout(args[crossing++], &offset, limit, &budget);
  if (offset <= limit) return true; /* fits, or too many parts: sig_check_parts says so */
  size_t total = 0, unpadded = 0;
  budget = NBC__SIG_MAX_PARTS;
  for (int i = 0; i < nargs; i++) {
    param_layout(args[i], &total, SIZE_MAX, &budget);
    size_t b = param_bytes_unpadded(args[i]);
    unpadded = unpadded > SIZE_MAX - b ? SIZE_MAX : unpadded + b;
  }
  bool exact = budget >= 0;
  s->p = at[crossing - 1];
  s->arg = crossing - 1;
  char msg[320];
  snprintf(msg, sizeof msg,
           "the kernel's parameters take %s%zu bytes, more than the %zu bytes a kernel's "
           "parameters may take on compute capability %d.%d (argument %d crosses the limit)",
           exact ? "" : "at least ", exact ? total : unpadded, limit, major, minor, crossing);
  return sig_error(s, "%s", msg);
}

/* The types of a signature expand to at most NBC__SIG_MAX_PARTS parts in all; reported at
 * the type that crosses the limit. */
static bool sig_check_parts(sigp *s, const nbc__type *ret, const nbc__type *const *args,
                            const char *const *at, int nargs) {
  size_t total = 0;
  for (int i = -1; i < nargs; i++) {
    const nbc__type *t = i < 0 ? ret : args[i];
    size_t n = t ? type_parts(t) : 0;
    total = total > SIZE_MAX - n ? SIZE_MAX : total + n;
    if (total <= NBC__SIG_MAX_PARTS) continue;
    char what[32], msg[320];
    if (i < 0) snprintf(what, sizeof what, "the return type");
    else if (s->mode && s->mode->names) snprintf(what, sizeof what, "its type");
    else snprintf(what, sizeof what, "argument %d", i + 1);
    s->p = i < 0 ? s->text : at[i];
    s->arg = i;
    snprintf(msg, sizeof msg,
             "%s expands to %zu parts (scalars, arrays and tuples, each tuple item "
             "counted), more than the %d a signature's types may hold in all",
             what, n, NBC__SIG_MAX_PARTS);
    return sig_error(s, "%s", msg);
  }
  return true;
}

bool nbc__signature_parse_mode(nbc__ctx *ctx, const char *text, const nbc__sig_mode *mode,
                               nbc__signature *psig) {
  sigp s = {.ctx = ctx, .text = text ? text : "", .p = text ? text : "", .mode = mode, .arg = -1};
  s.file.name = "<signature>";
  s.file.text = s.text;
  s.file.size = strlen(s.text);
  s.file.first_line = 1;
  memset(psig, 0, sizeof *psig);
  sig_skip(&s);
  const nbc__type *ret = NULL;
  if (*s.p != '(') {
    if (!*s.p) return sig_error(&s, "%s", "empty signature");
    if (!(ret = sig_type(&s))) return false;
    sig_skip(&s);
    if (!*s.p) {
      /* A lone type names one argument with no declared return type? numba refuses
       * that ("evaluates to ... instead of tuple or Signature"); so do we. */
      s.p = s.text;
      return sig_error(&s, "%s", "expected 'ret(args...)' or '(args...)', found a single type");
    }
    if (*s.p != '(') {
      char found[64];
      return sig_error(&s, "expected '(' but found %s", sig_found(&s, found, sizeof found));
    }
  }
  s.p++; /* '(' */
  const nbc__type *args[256];
  const char *at[256];
  int nargs = 0;
  sig_skip(&s);
  while (*s.p != ')') {
    if (nargs == 256) return sig_error(&s, "%s", "too many arguments");
    at[nargs] = s.p;
    s.arg = nargs;
    const nbc__type *t = sig_type(&s);
    if (!t) return false;
    if (t->kind == NBC__T_VOID) /* numba's void is its none: a None argument */
      t = nbc__type_scalar(NBC__T_NONE);
    args[nargs++] = t;
    sig_skip(&s);
    if (*s.p == ',') {
      s.p++;
      sig_skip(&s);
    } else if (*s.p != ')') {
      char found[64];
      return sig_error(&s, "expected ',' or ')' but found %s",
                       sig_found(&s, found, sizeof found));
    }
  }
  s.p++;
  sig_skip(&s);
  if (*s.p) {
    char found[64];
    return sig_error(&s, "unexpected %s after the signature",
                     sig_found(&s, found, sizeof found));
  }
  if (mode && mode->kernel && !sig_check_kernel(&s, args, at, nargs))
    return false;
  if (!sig_check_parts(&s, ret, args, at, nargs)) return false;
  psig->ret = ret;
  psig->nargs = nargs;
  psig->args = nbc__arena_alloc(ctx->arena, sizeof *psig->args * (size_t)(nargs ? nargs : 1));
  if (!psig->args) {
    nbc__diag_oom(ctx);
    return false;
  }
  memcpy(psig->args, args, sizeof *args * (size_t)nargs);
  return true;
}

bool nbc__signature_parse(nbc__ctx *ctx, const char *text, nbc__signature *psig) {
  return nbc__signature_parse_mode(ctx, text, NULL, psig);
}
