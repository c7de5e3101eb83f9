/* args.c — a launch's typed arguments (nbc_arg_t) packed into numba's flattened parameter
 * buffer, from the parameter layout of the kernel's signature: scalars converted to their
 * parameter's type, arrays flattened to meminfo, parent, nitems, itemsize, data, shape and
 * strides, records and pointers as addresses, tuples item by item, None as nothing.
 *
 * The conversions and checks themselves are the signature's (nbc_signature_pack_*,
 * nbc_param_pack_*); what is here is the walk over the arguments and the errors of a kind
 * the parameter does not take at all, each naming the argument ("argument 2: expected
 * float32, got an array"), so a C caller hears what it would hear from numba.
 */
#include <stdio.h>
#include <string.h>

#include "kernel/kernel.h"

static nbc_arg_t arg_of(nbc_arg_kind_t kind) {
  nbc_arg_t a;
  memset(&a, 0, sizeof a);
  a.kind = kind;
  return a;
}

nbc_arg_t nbc_arg_int(int64_t value) {
  nbc_arg_t a = arg_of(NBC_ARG_INT);
  a.i = value;
  return a;
}

nbc_arg_t nbc_arg_float(double value) {
  nbc_arg_t a = arg_of(NBC_ARG_FLOAT);
  a.f = value;
  return a;
}

nbc_arg_t nbc_arg_complex(double re, double im) {
  nbc_arg_t a = arg_of(NBC_ARG_COMPLEX);
  a.f = re;
  a.im = im;
  return a;
}

nbc_arg_t nbc_arg_array(nbc_devptr_t data, char dtype_kind, int itemsize, int ndim,
                        const int64_t *shape, const int64_t *strides) {
  nbc_arg_t a = arg_of(NBC_ARG_ARRAY);
  a.data = data;
  a.dtype_kind = dtype_kind;
  a.itemsize = itemsize;
  a.ndim = ndim;
  a.shape = shape;
  a.strides = strides;
  return a;
}

nbc_arg_t nbc_arg_record(nbc_devptr_t data, int itemsize) {
  nbc_arg_t a = arg_of(NBC_ARG_RECORD);
  a.data = data;
  a.itemsize = itemsize;
  return a;
}

nbc_arg_t nbc_arg_pointer(uint64_t address) {
  nbc_arg_t a = arg_of(NBC_ARG_POINTER);
  a.address = address;
  return a;
}

nbc_arg_t nbc_arg_tuple(const nbc_arg_t *items, int nitems) {
  nbc_arg_t a = arg_of(NBC_ARG_TUPLE);
  a.items = items;
  a.nitems = nitems;
  return a;
}

nbc_arg_t nbc_arg_none(void) { return arg_of(NBC_ARG_NONE); }

/* How an argument of this kind is named in errors. */
static const char *given(const nbc_arg_t *a) {
  switch (a->kind) {
  case NBC_ARG_INT: return "an integer";
  case NBC_ARG_FLOAT: return "a float";
  case NBC_ARG_COMPLEX: return "a complex value";
  case NBC_ARG_ARRAY: return "an array";
  case NBC_ARG_RECORD: return "a record";
  case NBC_ARG_POINTER: return "a pointer";
  case NBC_ARG_TUPLE: return "a tuple";
  case NBC_ARG_NONE: return "None";
  default: return "an argument of unknown kind";
  }
}

/* The argument kinds a parameter of kind p takes. */
static int takes(const nbc_param_info_t *p, nbc_arg_kind_t kind) {
  switch (p->kind) {
  case NBC_PARAM_SCALAR:
    return kind == NBC_ARG_INT || kind == NBC_ARG_FLOAT || kind == NBC_ARG_COMPLEX;
  case NBC_PARAM_ARRAY: return kind == NBC_ARG_ARRAY;
  case NBC_PARAM_RECORD: return kind == NBC_ARG_RECORD;
  case NBC_PARAM_POINTER: return kind == NBC_ARG_POINTER;
  case NBC_PARAM_TUPLE: return kind == NBC_ARG_TUPLE;
  case NBC_PARAM_NONE: return kind == NBC_ARG_NONE;
  default: return 0;
  }
}

/* The error of the last pack, prefixed with "argument N: " (the item packers do not know the
 * argument's number). */
static nbc_status_t refused(nbc_status_t st, int argno) {
  char why[1024];
  snprintf(why, sizeof why, "%s", nbc_last_error());
  return nbc__set_error(st, "argument %d: %s", argno, why);
}

/* Argument a for parameter p (argument argno, or an item of it when item). */
static nbc_status_t pack_one(const nbc_signature_t *sig, int index, const nbc_param_info_t *p,
                             const nbc_arg_t *a, int item, void *params) {
  int argno = index + 1;
  if (p->kind == NBC_PARAM_OTHER)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "argument %d: %s cannot be passed from C",
                          argno, p->type_name);
  if (!takes(p, a->kind))
    return nbc__set_error(NBC_INVALID_ARGUMENT, "argument %d: expected %s, got %s", argno,
                          p->type_name, given(a));
  nbc_status_t st = NBC_OK;
  switch (a->kind) {
  case NBC_ARG_INT:
    st = item ? nbc_param_pack_int(p, params, a->i) : nbc_signature_pack_int(sig, index, params, a->i);
    break;
  case NBC_ARG_FLOAT:
    st = item ? nbc_param_pack_float(p, params, a->f)
              : nbc_signature_pack_float(sig, index, params, a->f);
    break;
  case NBC_ARG_COMPLEX:
    st = item ? nbc_param_pack_complex(p, params, a->f, a->im)
              : nbc_signature_pack_complex(sig, index, params, a->f, a->im);
    break;
  case NBC_ARG_ARRAY:
    st = item ? nbc_param_pack_array(p, params, a->data, a->dtype_kind, a->itemsize, a->ndim,
                                     a->shape, a->strides)
              : nbc_signature_pack_array(sig, index, params, a->data, a->dtype_kind,
                                         a->itemsize, a->ndim, a->shape, a->strides);
    break;
  case NBC_ARG_RECORD:
    if (item)
      return nbc__set_error(NBC_INVALID_ARGUMENT, "argument %d: a record inside a tuple "
                            "cannot be passed from C", argno);
    st = nbc_signature_pack_record(sig, index, params, a->data, a->itemsize);
    break;
  case NBC_ARG_POINTER: st = nbc_param_pack_pointer(p, params, a->address); break;
  case NBC_ARG_TUPLE:
    if (a->nitems != p->nitems || (a->nitems > 0 && !a->items))
      return nbc__set_error(NBC_INVALID_ARGUMENT, "argument %d: expected %s, a tuple of %d "
                            "items, got a tuple of %d", argno, p->type_name, p->nitems,
                            a->nitems);
    for (int k = 0; k < p->nitems && st == NBC_OK; k++)
      st = pack_one(sig, index, &p->items[k], &a->items[k], 1, params);
    return st;
  default: return NBC_OK; /* None: nothing is passed */
  }
  /* the item packers' messages do not name the argument; the signature's do */
  if (st != NBC_OK && (item || a->kind == NBC_ARG_POINTER ||
                       strncmp(nbc_last_error(), "argument ", 9) != 0))
    return refused(st, argno);
  return st;
}

nbc_status_t nbc_kernel_pack(const nbc_kernel_t *kernel, const nbc_arg_t *args, int nargs,
                             void *params) {
  if (!kernel || !params || (nargs > 0 && !args))
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_kernel_pack: NULL argument");
  const nbc_signature_t *sig = kernel->sig;
  int n = nbc_signature_nargs(sig);
  if (nargs != n)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "kernel '%s' takes %d argument%s (%d given)",
                          kernel->name, n, n == 1 ? "" : "s", nargs);
  for (int i = 0; i < n; i++) {
    nbc_status_t st = pack_one(sig, i, nbc_signature_param(sig, i), &args[i], 0, params);
    if (st != NBC_OK) return st;
  }
  return NBC_OK;
}
