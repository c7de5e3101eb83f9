/* lower_record.c — numba's records (numpy structured dtypes) to NVVM IR.
 *
 * A record value is an i8* to the record's bytes, as numba's Record data model is a pointer:
 * an element of an array of records (a[i], whose memory type is [size x i8]) or a kernel's
 * record argument (numba copies the record to the device and passes its address). Reading
 * rec.x or rec['x'] loads the field at its offset, writing stores it there, so writes through
 * r = a[i] reach the array as in numba. The alignment each access may assume is the largest
 * power of two dividing the field's offset and the record's size, at most the field's own:
 * a packed record (numpy's default align=False) puts a float64 at offset 1, which the GPU may
 * only read byte by byte. a[i] = rec copies the record's bytes (a memmove). An array field (numba's
 * nestedarray) is a C array over the record's bytes, indexed like any array; the signature
 * parser refuses one whose elements would not be aligned. A record field (a record in the
 * record, numba's nested Record) is a record value at its offset, read and written in place;
 * assigning one copies its bytes. The parser refuses one placed where its own fields would
 * not be aligned, so every record value starts at its type's nbc__type_record_align.
 */
#include <string.h>

#include "compiler/lower.h"

bool nbc__lower_is_field(const nbc__node *n) {
  return n && (n->kind == NBC__N_ATTR || n->kind == NBC__N_SUBSCRIPT) && n->a && n->a->type &&
         n->a->type->kind == NBC__T_RECORD;
}

/* The typed pointer to the field n names, its index in *pfield; NULL after an error. */
static const char *field_ptr(nbc__lowerer *L, nbc__node *n, int *pfield) {
  const nbc__type *r = n->a->type;
  const char *name = n->kind == NBC__N_ATTR ? n->str : n->b->str;
  int i = name ? nbc__type_record_field(r, name, strlen(name)) : -1;
  if (i < 0) {
    nbc__lower_error(L, n, "record %s has no field '%s'", nbc__type_name(L->ctx, r),
                     name ? name : "?");
    return NULL;
  }
  nbc__lval rec = nbc__lower_expr(L, n->a);
  const nbc__type *f = r->items[i];
  const char *mt = nbc__lower_mtype(L, f->kind == NBC__T_ARRAY ? f->dtype : f);
  const char *q = nbc__lower_tmp(L), *p = nbc__lower_tmp(L);
  nbc__lower_emit(L, "%s = getelementptr i8, i8* %s, i64 %lld", q, rec.v,
                  (long long)r->field_offsets[i]);
  nbc__lower_emit(L, "%s = bitcast i8* %s to %s*", p, q, mt);
  *pfield = i;
  return p;
}

/* An array field as numba's NestedArray: a C array over the record's bytes (no meminfo,
 * no parent), with its extents and strides as constants. */
static nbc__lval nested_array(nbc__lowerer *L, const nbc__type *r, int i, const char *data) {
  const nbc__type *at = r->items[i];
  const char *aty = nbc__lower_ltype(L, at), *ety = nbc__lower_mtype(L, at->dtype);
  int64_t itemsize = (int64_t)nbc__type_size(at->dtype);
  int64_t nitems = nbc__type_record_field_size(r, i) / itemsize;
  const char *cur = nbc__lower_tmp(L);
  nbc__lower_emit(L, "%s = insertvalue %s undef, i8* null, 0", cur, aty);
  const char *words[3] = {"i8* null", nbc__arena_printf(L->arena, "i64 %lld", (long long)nitems),
                          nbc__arena_printf(L->arena, "i64 %lld", (long long)itemsize)};
  for (int k = 1; k <= 4; k++) {
    const char *x = nbc__lower_tmp(L);
    if (k < 4)
      nbc__lower_emit(L, "%s = insertvalue %s %s, %s, %d", x, aty, cur, words[k - 1], k);
    else
      nbc__lower_emit(L, "%s = insertvalue %s %s, %s* %s, 4", x, aty, cur, ety, data);
    cur = x;
  }
  int64_t stride = itemsize;
  for (int d = at->ndim - 1; d >= 0; d--) {
    const char *x = nbc__lower_tmp(L), *y = nbc__lower_tmp(L);
    nbc__lower_emit(L, "%s = insertvalue %s %s, i64 %lld, 5, %d", x, aty, cur,
                    (long long)r->field_shapes[i][d], d);
    nbc__lower_emit(L, "%s = insertvalue %s %s, i64 %lld, 6, %d", y, aty, x, (long long)stride,
                    d);
    stride *= r->field_shapes[i][d];
    cur = y;
  }
  return (nbc__lval){at, cur};
}

nbc__lval nbc__lower_field_load(nbc__lowerer *L, nbc__node *n) {
  int i;
  const char *p = field_ptr(L, n, &i);
  if (!p) return (nbc__lval){n->type, nbc__lower_zero(L, n->type)};
  const nbc__type *r = n->a->type;
  if (r->items[i]->kind == NBC__T_ARRAY) return nested_array(L, r, i, p);
  if (r->items[i]->kind == NBC__T_RECORD) return nbc__lower_record_at(L, r->items[i], p);
  return nbc__lower_load_aligned(L, r->items[i], p, nbc__type_record_field_align(r, i));
}

void nbc__lower_field_store(nbc__lowerer *L, nbc__node *n, nbc__lval v) {
  int i;
  const char *p = field_ptr(L, n, &i);
  if (!p) return;
  const nbc__type *r = n->a->type;
  if (r->items[i]->kind == NBC__T_RECORD) {
    nbc__lower_record_store(L, v, p);
    return;
  }
  if (r->items[i]->kind == NBC__T_ARRAY) {
    /* rec.arr = src, as numba-cuda's record_setattr: the field's element count copied from
     * src's data (memcpy; infer.c checked the dtype) */
    const nbc__type *ft = r->items[i];
    int64_t bytes = nbc__type_record_field_size(r, i);
    const char *ety = nbc__lower_mtype(L, ft->dtype), *aty = nbc__lower_ltype(L, v.type);
    const char *src = nbc__lower_tmp(L), *s8 = nbc__lower_tmp(L), *d8 = nbc__lower_tmp(L);
    nbc__lower_emit(L, "%s = extractvalue %s %s, 4", src, aty, v.v);
    nbc__lower_emit(L, "%s = bitcast %s* %s to i8*", s8, ety, src);
    nbc__lower_emit(L, "%s = bitcast %s* %s to i8*", d8, ety, p);
    nbc__lower_declare(L, "declare void @llvm.memcpy.p0i8.p0i8.i64(i8*, i8*, i64, i1)");
    nbc__lower_emit(L, "call void @llvm.memcpy.p0i8.p0i8.i64(i8* %s, i8* %s, i64 %lld, i1 false)",
                    d8, s8, (long long)bytes);
    return;
  }
  nbc__lower_store_aligned(L, nbc__lower_convert(L, v, r->items[i]), p,
                           nbc__type_record_field_align(r, i));
}

void nbc__lower_field_augassign(nbc__lowerer *L, nbc__node *s) {
  nbc__node *t = s->a;
  int i;
  const char *p = field_ptr(L, t, &i);
  if (!p) return;
  const nbc__type *r = t->a->type, *ft = r->items[i];
  if (!nbc__type_is_number(ft) && !nbc__type_is_datetime(ft)) {
    nbc__lower_error(L, s, "unsupported operand types for %s=: %s", nbc__op_text(s->op),
                     nbc__type_name(L->ctx, ft));
    return;
  }
  int align = nbc__type_record_field_align(r, i);
  nbc__lval cur = nbc__lower_load_aligned(L, ft, p, align);
  nbc__lval rhs = nbc__lower_expr(L, s->b);
  const nbc__type *rtype = s->type;
  if (!rtype) {
    const char *why = NULL;
    rtype = nbc__type_binop(s->op, ft, rhs.type, &why);
  }
  if (!rtype) {
    nbc__lower_error(L, s, "unsupported operand types for %s=", nbc__op_text(s->op));
    return;
  }
  nbc__lval res = nbc__lower_binop_values(L, s, s->op, cur, s->b, rhs, rtype);
  nbc__lower_store_aligned(L, nbc__lower_convert(L, res, ft), p, align);
}

nbc__lval nbc__lower_record_at(nbc__lowerer *L, const nbc__type *record, const char *ptr) {
  const char *x = nbc__lower_tmp(L);
  nbc__lower_emit(L, "%s = bitcast %s* %s to i8*", x, nbc__lower_mtype(L, record), ptr);
  return (nbc__lval){record, x};
}

void nbc__lower_record_store(nbc__lowerer *L, nbc__lval v, const char *ptr) {
  const nbc__type *r = v.type;
  const char *dst = nbc__lower_record_at(L, r, ptr).v;
  int align = nbc__type_record_align(r); /* where any record of the type starts */
  /* memmove: a record of a strided view may overlap its destination (memcpy allows only an
   * exact overlap); LLVM 7 takes the alignment as attributes of the pointer arguments */
  nbc__lower_declare(L, "declare void @llvm.memmove.p0i8.p0i8.i64(i8*, i8*, i64, i1)");
  nbc__lower_emit(L, "call void @llvm.memmove.p0i8.p0i8.i64(i8* align %d %s, i8* align %d %s, "
                  "i64 %lld, i1 false)", align, dst, align, v.v, (long long)r->size);
}
