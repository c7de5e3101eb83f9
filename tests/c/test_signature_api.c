/* test_signature_api.c — the public signature API (nbc_signature_*, signature_api.c): the
 * parameter layout of the Numba ABI at natural alignment, the packing of arrays and scalars
 * with numba's conversions, and the errors a binding shows its users. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "nbcuda.h"
#include "test.h"

static int64_t word(const char *buf, size_t off) {
  int64_t v;
  memcpy(&v, buf + off, 8);
  return v;
}

TEST(layout) {
  nbc_signature_t *sig = NULL;
  ASSERT_OK(nbc_signature_parse("void(float32[:], float32, float64[:, ::1], int16, "
                                "complex64)", &sig));
  ASSERT_EQ(nbc_signature_nargs(sig), 5);
  ASSERT_STREQ(nbc_signature_text(sig),
               "void(float32[:], float32, float64[:, ::1], int16, complex64)");
  const nbc_param_info_t *a = nbc_signature_param(sig, 0), *x = nbc_signature_param(sig, 1);
  const nbc_param_info_t *m = nbc_signature_param(sig, 2), *s = nbc_signature_param(sig, 3);
  const nbc_param_info_t *c = nbc_signature_param(sig, 4);
  ASSERT_EQ(a->kind, NBC_PARAM_ARRAY);
  ASSERT_STREQ(a->type_name, "array(float32, 1d, A)");
  ASSERT_STREQ(a->dtype_name, "float32");
  ASSERT_EQ(a->dtype_kind, 'f');
  ASSERT_EQ(a->itemsize, 4);
  ASSERT_EQ(a->layout, 'A');
  ASSERT_EQ(a->offset, 0);
  ASSERT_EQ(a->size, 56); /* meminfo parent nitems itemsize data shape stride */
  ASSERT_EQ(x->kind, NBC_PARAM_SCALAR);
  ASSERT_EQ(x->offset, 56);
  ASSERT_EQ(m->offset, 64); /* realigned to 8 after the float */
  ASSERT_EQ(m->size, 72);
  ASSERT_EQ(m->layout, 'C');
  ASSERT_EQ(s->offset, 136);
  ASSERT_EQ(c->offset, 140); /* complex64: two floats, 4-byte aligned */
  ASSERT_EQ(c->dtype_kind, 'c');
  ASSERT_EQ(nbc_signature_params_size(sig), 148); /* no padding after the last parameter */
  ASSERT(nbc_signature_param(sig, 5) == NULL);
  ASSERT(nbc_signature_param(sig, -1) == NULL);
  ASSERT(nbc_signature_return_type(sig) != NULL);
  nbc_signature_destroy(sig);
  ASSERT_OK(nbc_signature_parse("(int32,)", &sig));
  ASSERT(nbc_signature_return_type(sig) == NULL);
  ASSERT_STREQ(nbc_signature_text(sig), "(int32,)");
  nbc_signature_destroy(sig);
  nbc_signature_destroy(NULL);
}

/* A trailing 4-byte scalar is not padded: the driver wants the exact parameter size (the
 * multi-GPU H200 run launched `void(float32[:], float32)` with 64 bytes and was refused). */
TEST(size_ends_at_the_last_parameter) {
  nbc_signature_t *sig = NULL;
  ASSERT_OK(nbc_signature_parse("void(float32[:], float32)", &sig));
  ASSERT_EQ(nbc_signature_params_size(sig), 60);
  nbc_signature_destroy(sig);
  ASSERT_OK(nbc_signature_parse("void(float64, int8)", &sig));
  ASSERT_EQ(nbc_signature_params_size(sig), 9);
  nbc_signature_destroy(sig);
}

TEST(pack_arrays) {
  nbc_signature_t *sig = NULL;
  ASSERT_OK(nbc_signature_parse("void(float64[:, ::1], int8[::1, :], uint16[:])", &sig));
  char buf[512];
  memset(buf, 0x77, sizeof buf);
  int64_t shape[2] = {3, 5};
  ASSERT_OK(nbc_signature_pack_array(sig, 0, buf, 0x1000, 'f', 8, 2, shape, NULL));
  int64_t expect[9] = {0, 0, 15, 8, 0x1000, 3, 5, 40, 8};
  for (int i = 0; i < 9; i++) ASSERT_EQ(word(buf, 8 * (size_t)i), expect[i]);
  /* F layout without strides: column-major */
  ASSERT_OK(nbc_signature_pack_array(sig, 1, buf, 0x2000, 'i', 1, 2, shape, NULL));
  size_t off = nbc_signature_param(sig, 1)->offset;
  ASSERT_EQ(word(buf, off + 7 * 8), 1);
  ASSERT_EQ(word(buf, off + 8 * 8), 3);
  /* A layout takes any strides, negative ones included */
  int64_t n[1] = {4}, st[1] = {-6};
  ASSERT_OK(nbc_signature_pack_array(sig, 2, buf, 0x3000, 'u', 2, 1, n, st));
  off = nbc_signature_param(sig, 2)->offset;
  ASSERT_EQ(word(buf, off + 6 * 8), -6);
  nbc_signature_destroy(sig);
}

TEST(records) {
  nbc_signature_t *sig = NULL;
  const char *rec = "Record(x[type=int8;offset=0],y[type=float64;offset=1];9;False)";
  char text[256];
  snprintf(text, sizeof text, "void(%s[::1], %s, float32)", rec, rec);
  ASSERT_OK(nbc_signature_parse(text, &sig));
  const nbc_param_info_t *a = nbc_signature_param(sig, 0), *r = nbc_signature_param(sig, 1);
  ASSERT_EQ(a->kind, NBC_PARAM_ARRAY);
  ASSERT_EQ(a->dtype_kind, 'V');
  ASSERT_EQ(a->itemsize, 9);
  ASSERT_STREQ(a->dtype_name, rec);
  ASSERT_EQ(r->kind, NBC_PARAM_RECORD);
  ASSERT_EQ(r->itemsize, 9);
  ASSERT_EQ(r->size, 8);
  ASSERT_STREQ(nbc_signature_text(sig), text);
  char buf[256];
  int64_t n[1] = {3};
  ASSERT_OK(nbc_signature_pack_array(sig, 0, buf, 0x1000, 'V', 9, 1, n, NULL));
  ASSERT_EQ(word(buf, 3 * 8), 9);  /* itemsize */
  ASSERT_EQ(word(buf, 6 * 8), 9);  /* the stride of a dense array of 9-byte records */
  ASSERT_STATUS(nbc_signature_pack_array(sig, 0, buf, 0x1000, 'V', 16, 1, n, NULL),
                NBC_INVALID_ARGUMENT);
  ASSERT_OK(nbc_signature_pack_record(sig, 1, buf, 0x2000, 9));
  ASSERT_EQ(word(buf, r->offset), 0x2000);
  ASSERT_STATUS(nbc_signature_pack_record(sig, 1, buf, 0x2000, 8), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "(9 bytes), got a record of 8 bytes");
  ASSERT_STATUS(nbc_signature_pack_record(sig, 0, buf, 0x2000, 9), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "got a record");
  ASSERT_STATUS(nbc_signature_pack_int(sig, 1, buf, 1), NBC_INVALID_ARGUMENT);
  nbc_signature_destroy(sig);
  ASSERT_STATUS(nbc_signature_parse("void(Record(a[type=int8;offset=0];1;True)", &sig),
                NBC_SIGNATURE_ERROR);
  ASSERT_STATUS(nbc_signature_parse("void(Record(a[type=int8;offset=1];1;True))", &sig),
                NBC_SIGNATURE_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "lies outside the record");
}

TEST(pack_array_errors) {
  nbc_signature_t *sig = NULL;
  ASSERT_OK(nbc_signature_parse("void(float32[::1], int64)", &sig));
  char buf[128];
  int64_t shape[2] = {4, 4}, strides[1] = {8};
  ASSERT_STATUS(nbc_signature_pack_array(sig, 0, buf, 0, 'f', 8, 1, shape, NULL),
                NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "expected array(float32, 1d, C)");
  ASSERT_STATUS(nbc_signature_pack_array(sig, 0, buf, 0, 'f', 4, 2, shape, NULL),
                NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "2d array");
  ASSERT_STATUS(nbc_signature_pack_array(sig, 0, buf, 0, 'f', 4, 1, shape, strides),
                NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "non-C-contiguous");
  int64_t negative[1] = {-4};
  memset(buf, 0x5a, sizeof buf);
  ASSERT_STATUS(nbc_signature_pack_array(sig, 0, buf, 0, 'f', 4, 1, negative, NULL),
                NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "argument 1: negative extent");
  ASSERT_STATUS(nbc_signature_pack_array(sig, 0, buf, 0, 'f', 4, 1, NULL, NULL),
                NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "argument 1: shape is NULL");
  for (size_t i = 0; i < sizeof buf; i++) ASSERT_EQ(buf[i], 0x5a); /* refused: untouched */
  ASSERT_STATUS(nbc_signature_pack_array(sig, 1, buf, 0, 'i', 8, 1, shape, NULL),
                NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_signature_pack_int(sig, 0, buf, 1), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_signature_pack_int(sig, 7, buf, 1), NBC_INVALID_ARGUMENT);
  nbc_signature_destroy(sig);
}

/* The contiguity rule packing applies: dense strides in the order's direction, axes of one
 * element ignored, and any empty axis making the array both C and F (numpy's rule: its
 * np.zeros((1, 0, 2)) has strides (0, 0, 0)). */
TEST(contiguity) {
  int64_t shape[3] = {2, 3, 4}, c[3] = {48, 16, 4}, f[3] = {4, 8, 24};
  ASSERT(nbc_array_is_contiguous('C', 3, shape, c, 4));
  ASSERT(!nbc_array_is_contiguous('F', 3, shape, c, 4));
  ASSERT(nbc_array_is_contiguous('F', 3, shape, f, 4));
  ASSERT(!nbc_array_is_contiguous('C', 3, shape, f, 4));
  int64_t one[3] = {1, 3, 1}, odd[3] = {999, 4, 777};
  ASSERT(nbc_array_is_contiguous('C', 3, one, odd, 4));
  ASSERT(nbc_array_is_contiguous('F', 3, one, odd, 4));
  int64_t empty[3] = {1, 0, 2}, zeros[3] = {0, 0, 0};
  ASSERT(nbc_array_is_contiguous('C', 3, empty, zeros, 8));
  ASSERT(nbc_array_is_contiguous('F', 3, empty, zeros, 8));
  int64_t gap[1] = {8};
  ASSERT(!nbc_array_is_contiguous('C', 1, shape, gap, 4));
  ASSERT(nbc_array_is_contiguous('C', 0, NULL, NULL, 4)); /* a 0-d array */
  /* the packing takes the empty array for a C-contiguous parameter */
  nbc_signature_t *sig = NULL;
  ASSERT_OK(nbc_signature_parse("void(float64[:, :, ::1])", &sig));
  char buf[128];
  ASSERT_OK(nbc_signature_pack_array(sig, 0, buf, 0, 'f', 8, 3, empty, zeros));
  nbc_signature_destroy(sig);
}

TEST(pack_scalars) {
  nbc_signature_t *sig = NULL;
  ASSERT_OK(nbc_signature_parse("void(int8, uint16, boolean, float32, float16, complex128, "
                                "int64, float64)", &sig));
  char buf[128];
  memset(buf, 0, sizeof buf);
  ASSERT_OK(nbc_signature_pack_int(sig, 0, buf, 300));        /* wraps to 44 */
  ASSERT_OK(nbc_signature_pack_int(sig, 1, buf, -1));         /* 65535 */
  ASSERT_OK(nbc_signature_pack_float(sig, 2, buf, 0.5));      /* true */
  ASSERT_OK(nbc_signature_pack_float(sig, 3, buf, 1.0 / 3));  /* rounded to float32 */
  ASSERT_OK(nbc_signature_pack_float(sig, 4, buf, 1.5));      /* 0x3e00 in binary16 */
  ASSERT_OK(nbc_signature_pack_complex(sig, 5, buf, 1.25, -2.5));
  ASSERT_OK(nbc_signature_pack_float(sig, 6, buf, -7.9));     /* truncates toward zero */
  ASSERT_OK(nbc_signature_pack_int(sig, 7, buf, 3));
  int8_t i8;
  uint16_t u16, h;
  uint8_t b;
  float f;
  double re, im, d;
  int64_t i64;
  memcpy(&i8, buf + nbc_signature_param(sig, 0)->offset, 1);
  memcpy(&u16, buf + nbc_signature_param(sig, 1)->offset, 2);
  memcpy(&b, buf + nbc_signature_param(sig, 2)->offset, 1);
  memcpy(&f, buf + nbc_signature_param(sig, 3)->offset, 4);
  memcpy(&h, buf + nbc_signature_param(sig, 4)->offset, 2);
  memcpy(&re, buf + nbc_signature_param(sig, 5)->offset, 8);
  memcpy(&im, buf + nbc_signature_param(sig, 5)->offset + 8, 8);
  memcpy(&i64, buf + nbc_signature_param(sig, 6)->offset, 8);
  memcpy(&d, buf + nbc_signature_param(sig, 7)->offset, 8);
  ASSERT_EQ(i8, 44);
  ASSERT_EQ(u16, 65535);
  ASSERT_EQ(b, 1);
  ASSERT(f == (float)(1.0 / 3));
  ASSERT_EQ(h, 0x3e00);
  ASSERT(re == 1.25 && im == -2.5);
  ASSERT_EQ(i64, -7);
  ASSERT(d == 3.0);
  ASSERT_OK(nbc_signature_pack_float(sig, 6, buf, NAN)); /* no undefined behaviour */
  ASSERT_OK(nbc_signature_pack_float(sig, 6, buf, 1e300));
  memcpy(&i64, buf + nbc_signature_param(sig, 6)->offset, 8);
  ASSERT_EQ(i64, INT64_MAX);
  /* numba converts no complex value to a real type */
  ASSERT_STATUS(nbc_signature_pack_complex(sig, 6, buf, 1.0, 0.0), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "expected int64, got a complex value");
  ASSERT_STATUS(nbc_signature_pack_complex(sig, 2, buf, 1.0, 0.0), NBC_INVALID_ARGUMENT);
  nbc_signature_destroy(sig);
}

/* datetime64 / timedelta64: int64 counts, kinds 'M' and 'm'; the name says the unit */
TEST(dates) {
  nbc_signature_t *sig = NULL;
  ASSERT_OK(nbc_signature_parse("void(datetime64[D], timedelta64[s][::1])", &sig));
  const nbc_param_info_t *p = nbc_signature_param(sig, 0), *a = nbc_signature_param(sig, 1);
  ASSERT_EQ(p->kind, NBC_PARAM_SCALAR);
  ASSERT_EQ(p->dtype_kind, 'M');
  ASSERT_EQ(p->itemsize, 8);
  ASSERT_STREQ(p->dtype_name, "datetime64[D]");
  ASSERT_EQ(a->kind, NBC_PARAM_ARRAY);
  ASSERT_EQ(a->dtype_kind, 'm');
  ASSERT_STREQ(a->dtype_name, "timedelta64[s]");
  char buf[128];
  ASSERT_OK(nbc_signature_pack_int(sig, 0, buf, INT64_MIN)); /* NaT */
  int64_t v;
  memcpy(&v, buf + p->offset, 8);
  ASSERT_EQ(v, INT64_MIN);
  ASSERT_STATUS(nbc_signature_pack_float(sig, 0, buf, 1.0), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "expected datetime64[D], given as its int64 count");
  int64_t shape[1] = {4};
  ASSERT_OK(nbc_signature_pack_array(sig, 1, buf, 0x1000, 'm', 8, 1, shape, NULL));
  ASSERT_STATUS(nbc_signature_pack_array(sig, 1, buf, 0x1000, 'i', 8, 1, shape, NULL),
                NBC_INVALID_ARGUMENT);
  nbc_signature_destroy(sig);
}

/* A tuple holding arrays (numba's tuples of arrays): each array item is flattened as an
 * array argument is, at its own offset, and packed with nbc_param_pack_array. */
TEST(tuples_of_arrays) {
  nbc_signature_t *sig = NULL;
  ASSERT_OK(nbc_signature_parse("void(Tuple(int32, float32[::1]), int64)", &sig));
  const nbc_param_info_t *t = nbc_signature_param(sig, 0);
  ASSERT_EQ(t->kind, NBC_PARAM_TUPLE);
  ASSERT_EQ(t->nitems, 2);
  const nbc_param_info_t *a = &t->items[1];
  ASSERT_EQ(a->kind, NBC_PARAM_ARRAY);
  ASSERT_EQ(a->offset, 8); /* after the int32, at the array's 8-byte alignment */
  ASSERT_EQ(a->size, 8 * 7);
  ASSERT_EQ(nbc_signature_param(sig, 1)->offset, 64);
  ASSERT_EQ(nbc_signature_params_size(sig), 72);
  _Alignas(8) unsigned char buf[72];
  memset(buf, 0xee, sizeof buf);
  int64_t shape[1] = {5};
  ASSERT_OK(nbc_param_pack_int(&t->items[0], buf, 3));
  ASSERT_OK(nbc_param_pack_array(a, buf, (nbc_devptr_t)0x1000, 'f', 4, 1, shape, NULL));
  int64_t w[7];
  memcpy(w, buf + 8, sizeof w);
  ASSERT_EQ(w[2], 5);      /* nitems */
  ASSERT_EQ(w[3], 4);      /* itemsize */
  ASSERT_EQ(w[4], 0x1000); /* data */
  ASSERT_EQ(w[5], 5);      /* shape */
  ASSERT_EQ(w[6], 4);      /* stride */
  ASSERT_STATUS(nbc_param_pack_array(a, buf, 0, 'i', 4, 1, shape, NULL), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "expected array(float32, 1d, C), got an array of i32");
  ASSERT_STATUS(nbc_param_pack_array(&t->items[0], buf, 0, 'f', 4, 1, shape, NULL),
                NBC_INVALID_ARGUMENT);
  nbc_signature_destroy(sig);
  /* integers of the signature's width, either signedness; never another width or kind */
  ASSERT_OK(nbc_signature_parse("void(uint32[:], int64[:])", &sig));
  _Alignas(8) unsigned char two[2 * 56];
  ASSERT_EQ(nbc_signature_params_size(sig), sizeof two);
  ASSERT_OK(nbc_signature_pack_array(sig, 0, two, (nbc_devptr_t)0x2000, 'i', 4, 1, shape, NULL));
  ASSERT_OK(nbc_signature_pack_array(sig, 1, two, (nbc_devptr_t)0x2000, 'u', 8, 1, shape, NULL));
  ASSERT_STATUS(nbc_signature_pack_array(sig, 0, two, 0, 'i', 8, 1, shape, NULL),
                NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "expected array(uint32, 1d, A), got an array of i64");
  ASSERT_STATUS(nbc_signature_pack_array(sig, 0, two, 0, 'f', 4, 1, shape, NULL),
                NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_signature_pack_array(sig, 1, two, 0, 'b', 8, 1, shape, NULL),
                NBC_INVALID_ARGUMENT);
  nbc_signature_destroy(sig);
}

TEST(bad_signatures) {
  nbc_signature_t *sig = (nbc_signature_t *)1;
  ASSERT_STATUS(nbc_signature_parse("void(float32, notatype)", &sig), NBC_SIGNATURE_ERROR);
  ASSERT(sig == NULL);
  ASSERT_CONTAINS(nbc_last_error(), "invalid signature");
  ASSERT_STATUS(nbc_signature_parse(NULL, &sig), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_signature_parse("void()", NULL), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_signature_parse("void(Tuple(int32, Record(a[type=int8;offset=0];1;True)))",
                                    &sig),
                NBC_SIGNATURE_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "tuples may only hold scalars, arrays and tuples of them");
  char deep[600] = "void(";
  for (int i = 0; i < 40; i++) strcat(deep, "Tuple(");
  strcat(deep, "int8");
  for (int i = 0; i < 40; i++) strcat(deep, ")");
  strcat(deep, ")");
  ASSERT_STATUS(nbc_signature_parse(deep, &sig), NBC_SIGNATURE_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "types nested more than 32 deep");
}

TEST(tuples) {
  /* flattened item by item, each at its own alignment, as the kernel's parameters */
  nbc_signature_t *sig = NULL;
  ASSERT_OK(nbc_signature_parse(
      "void(UniTuple(int32, 2), float32, Tuple(float64, Tuple(int8, complex64)))", &sig));
  const nbc_param_info_t *t = nbc_signature_param(sig, 0), *u = nbc_signature_param(sig, 2);
  ASSERT_EQ(t->kind, NBC_PARAM_TUPLE);
  ASSERT_EQ(t->nitems, 2);
  ASSERT_EQ(t->items[1].offset, 4);
  ASSERT_EQ(t->size, 8);
  ASSERT_EQ(nbc_signature_param(sig, 1)->offset, 8);
  ASSERT_EQ(u->kind, NBC_PARAM_TUPLE);
  ASSERT_EQ(u->offset, 16);
  ASSERT_EQ(u->items[1].kind, NBC_PARAM_TUPLE);
  ASSERT_EQ(u->items[1].items[0].offset, 24);
  ASSERT_EQ(u->items[1].items[1].offset, 28); /* complex64: two floats, 4-aligned */
  ASSERT_EQ(nbc_signature_params_size(sig), 36);
  char buf[64];
  memset(buf, 0, sizeof buf);
  ASSERT_OK(nbc_param_pack_int(&t->items[0], buf, 7));
  ASSERT_OK(nbc_param_pack_float(&t->items[1], buf, -2.9)); /* truncates, as numba */
  ASSERT_OK(nbc_param_pack_complex(&u->items[1].items[1], buf, 1.5, -0.5));
  int32_t a, b;
  float re, im;
  memcpy(&a, buf, 4);
  memcpy(&b, buf + 4, 4);
  memcpy(&re, buf + 28, 4);
  memcpy(&im, buf + 32, 4);
  ASSERT_EQ(a, 7);
  ASSERT_EQ(b, -2);
  ASSERT(re == 1.5f && im == -0.5f);
  nbc_signature_t *numba_spelling = NULL; /* numba's Tuple((...)) reads the same */
  ASSERT_OK(nbc_signature_parse(
      "void(UniTuple(int32, 2), float32, Tuple((float64, Tuple((int8, complex64)))))",
      &numba_spelling));
  ASSERT_STREQ(nbc_signature_text(numba_spelling), nbc_signature_text(sig));
  nbc_signature_destroy(numba_spelling);
  ASSERT_OK(nbc_signature_parse(  /* str() of numba's types */
      "void(UniTuple(int32 x 2), float32, Tuple(float64, Tuple(int8, complex64)))",
      &numba_spelling));
  ASSERT_STREQ(nbc_signature_text(numba_spelling), nbc_signature_text(sig));
  nbc_signature_destroy(numba_spelling);
  ASSERT_STATUS(nbc_param_pack_int(u, buf, 1), NBC_INVALID_ARGUMENT); /* a tuple, not a scalar */
  ASSERT_CONTAINS(nbc_last_error(), "got a scalar");
  ASSERT_STATUS(nbc_signature_pack_int(sig, 0, buf, 1), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "got a scalar");
  nbc_signature_destroy(sig);
}

/* The best of several signatures for given argument types, by numba's rating. */
static int best_of2(const char *actual_text, const char *const *texts, int n, int *psecond) {
  nbc_signature_t *actual, *cands[4];
  ASSERT_OK(nbc_signature_parse(actual_text, &actual));
  for (int i = 0; i < n; i++) ASSERT_OK(nbc_signature_parse(texts[i], &cands[i]));
  int r = psecond ? nbc_signature_best_matches(actual, (const nbc_signature_t *const *)cands, n,
                                               psecond)
                  : nbc_signature_best_match(actual, (const nbc_signature_t *const *)cands, n);
  for (int i = 0; i < n; i++) nbc_signature_destroy(cands[i]);
  nbc_signature_destroy(actual);
  return r;
}

static int best_of(const char *actual_text, const char *const *texts, int n) {
  return best_of2(actual_text, texts, n, NULL);
}

TEST(best_match) {
  const char *arrays[] = {"void(float32[:], float32)", "void(float64[:], float64)"};
  ASSERT_EQ(best_of("void(float32[::1], float64)", arrays, 2), 0);
  ASSERT_EQ(best_of("void(float64[::1], int64)", arrays, 2), 1);
  ASSERT_EQ(best_of("void(int32[::1], float64)", arrays, 2), -1);  /* no dtype conversion */
  ASSERT_EQ(best_of("void(float32[::1])", arrays, 2), -1);         /* argument count */
  const char *c_only[] = {"void(float32[:, ::1])"};
  ASSERT_EQ(best_of("void(float32[:, :])", c_only, 1), -1); /* A does not become C */
  /* int64 goes to float64 (safe) rather than int32 (unsafe); an exact int32 stays int32. */
  const char *scalars[] = {"void(int32)", "void(float64)"};
  ASSERT_EQ(best_of("void(int64)", scalars, 2), 1);
  ASSERT_EQ(best_of("void(int32)", scalars, 2), 0);
  /* Equal ratings: the first candidate. */
  const char *same[] = {"void(float64)", "void(float64)"};
  ASSERT_EQ(best_of("void(float64)", same, 2), 0);
  ASSERT_EQ(nbc_signature_best_match(NULL, NULL, 0), -1);
  /* ...which best_matches reports as the second equal one (numba's ambiguity); a better
   * candidate after a tie clears it */
  int second = 7;
  ASSERT_EQ(best_of2("void(float64)", same, 2, &second), 0);
  ASSERT_EQ(second, 1);
  const char *tie[] = {"void(float32, float64)", "void(float64, float32)", "void(int64, int64)"};
  ASSERT_EQ(best_of2("void(float64, float64)", tie, 3, &second), 0);
  ASSERT_EQ(second, 1);
  const char *tie_then_exact[] = {"void(float32)", "void(int32)", "void(float64)"};
  ASSERT_EQ(best_of2("void(float64)", tie_then_exact, 3, &second), 2);
  ASSERT_EQ(second, -1);
  ASSERT_EQ(best_of2("void(float64)", scalars, 2, &second), 1);
  ASSERT_EQ(second, -1);
}

/* numba's CPointer: an 8-byte address, spelled CPointer(T) or as numba prints it, T* */
TEST(pointers) {
  nbc_signature_t *sig = NULL;
  ASSERT_OK(nbc_signature_parse("void(int8, CPointer(uint8), float64 *)", &sig));
  ASSERT_STREQ(nbc_signature_text(sig), "void(int8, uint8*, float64*)");
  const nbc_param_info_t *p = nbc_signature_param(sig, 1), *q = nbc_signature_param(sig, 2);
  ASSERT_EQ(p->kind, NBC_PARAM_POINTER);
  ASSERT_STREQ(p->type_name, "uint8*");
  ASSERT_STREQ(p->dtype_name, "uint8");
  ASSERT_EQ(p->dtype_kind, 'u');
  ASSERT_EQ(p->itemsize, 1);
  ASSERT_EQ(p->offset, 8); /* after the int8, at 8-byte alignment */
  ASSERT_EQ(p->size, 8);
  ASSERT_EQ(q->offset, 16);
  ASSERT_EQ(nbc_signature_params_size(sig), 24);
  char buf[24] = {0};
  ASSERT_OK(nbc_signature_pack_pointer(sig, 1, buf, 0x7f0000001234ull));
  ASSERT_EQ(word(buf, 8), 0x7f0000001234ll);
  ASSERT_OK(nbc_param_pack_pointer(q, buf, 0xffffffffffffffffull));
  ASSERT_EQ(word(buf, 16), -1);
  ASSERT_STATUS(nbc_signature_pack_pointer(sig, 0, buf, 1), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "argument 1: expected int8, got a pointer");
  ASSERT_STATUS(nbc_signature_pack_int(sig, 1, buf, 1), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_param_pack_pointer(nbc_signature_param(sig, 0), buf, 1),
                NBC_INVALID_ARGUMENT);
  nbc_signature_destroy(sig);
  ASSERT_STATUS(nbc_signature_parse("void(CPointer(float32[:]))", &sig), NBC_SIGNATURE_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "CPointer of other than a number");
  ASSERT_STATUS(nbc_signature_parse("void(CPointer(int32)", &sig), NBC_SIGNATURE_ERROR);
  ASSERT_STATUS(nbc_signature_parse("void(UniTuple(int32, 2)*)", &sig), NBC_SIGNATURE_ERROR);
}

/* None: numba's NoneType, nothing passed (numba's void as an argument is the same type) */
TEST(none_arguments) {
  nbc_signature_t *sig = NULL;
  ASSERT_OK(nbc_signature_parse("void(int8, none, void, float64)", &sig));
  ASSERT_STREQ(nbc_signature_text(sig), "void(int8, none, none, float64)");
  nbc_signature_t *zero = NULL; /* a 0-d array: five words, its canonical text numba's */
  ASSERT_OK(nbc_signature_parse("void(array(float32, 0d, C))", &zero));
  ASSERT_STREQ(nbc_signature_text(zero), "void(array(float32, 0d, C))");
  ASSERT_EQ(nbc_signature_param(zero, 0)->size, 40);
  nbc_signature_destroy(zero);
  const nbc_param_info_t *n = nbc_signature_param(sig, 1), *f = nbc_signature_param(sig, 3);
  ASSERT_EQ(n->kind, NBC_PARAM_NONE);
  ASSERT_EQ(n->size, 0);
  ASSERT_EQ(nbc_signature_param(sig, 2)->kind, NBC_PARAM_NONE);
  ASSERT_EQ(f->offset, 8); /* the float64 right after the int8, at its alignment */
  ASSERT_EQ(nbc_signature_params_size(sig), 16);
  char buf[16] = {0};
  ASSERT_STATUS(nbc_signature_pack_int(sig, 1, buf, 1), NBC_INVALID_ARGUMENT);
  nbc_signature_destroy(sig);
}

/* numba's EnumMember: passed as its value, the class's qualified name its identity */
TEST(enum_members) {
  nbc_signature_t *sig = NULL;
  ASSERT_OK(nbc_signature_parse("void(Enum<int64>(m.f.<locals>.Color), Enum<float64>(P))",
                                &sig));
  ASSERT_STREQ(nbc_signature_text(sig),
               "void(Enum<int64>(m.f.<locals>.Color), Enum<float64>(P))");
  const nbc_param_info_t *p = nbc_signature_param(sig, 0), *q = nbc_signature_param(sig, 1);
  ASSERT_EQ(p->kind, NBC_PARAM_SCALAR);
  ASSERT_STREQ(p->dtype_name, "int64");
  ASSERT_EQ(q->dtype_kind, 'f');
  char buf[16];
  ASSERT_OK(nbc_signature_pack_int(sig, 0, buf, 3));
  ASSERT_EQ(word(buf, 0), 3);
  nbc_signature_destroy(sig);
  /* a member whose value is a tuple of numbers is passed as that tuple */
  ASSERT_OK(nbc_signature_parse("void(Enum<UniTuple(float64 x 2)>(m.Body), int32)", &sig));
  p = nbc_signature_param(sig, 0);
  ASSERT_EQ(p->kind, NBC_PARAM_TUPLE);
  ASSERT_EQ(p->nitems, 2);
  ASSERT_STREQ(p->type_name, "Enum<UniTuple(float64 x 2)>(m.Body)");
  ASSERT_EQ(p->items[1].offset, 8);
  ASSERT_EQ(nbc_signature_param(sig, 1)->offset, 16);
  nbc_signature_destroy(sig);
  ASSERT_STATUS(nbc_signature_parse("void(Enum<UniTuple(float64[:] x 2)>(C))", &sig),
                NBC_SIGNATURE_ERROR);
  ASSERT_STATUS(nbc_signature_parse("void(Enum<float32[:]>(C))", &sig), NBC_SIGNATURE_ERROR);
  ASSERT_STATUS(nbc_signature_parse("void(Enum<int64>())", &sig), NBC_SIGNATURE_ERROR);
  ASSERT_STATUS(nbc_signature_parse("void(Enum<int64>(C)", &sig), NBC_SIGNATURE_ERROR);
}

TEST_LIST(X(best_match) X(layout) X(size_ends_at_the_last_parameter) X(pack_arrays) X(records)
              X(pack_array_errors) X(contiguity) X(pack_scalars) X(tuples_of_arrays)
                  X(bad_signatures) X(tuples) X(pointers) X(none_arguments) X(enum_members)
                      X(dates))
TEST_MAIN()
