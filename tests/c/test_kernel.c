/* test_kernel.c — the kernel layer's C API (nbc_kernel_*): a Python kernel compiled from
 * source, loaded once per context however often it is launched, loaded again after its
 * context was reset, unloaded when destroyed; and the errors of a launch whose arguments
 * do not fit the kernel's parameters (counted and named, nothing launched).
 *
 * The load and launch counts are the software test driver's (tdrv()); on the real driver
 * those tests skip (the example examples/kernel_from_source.c checks values on a GPU).
 */
#include "kernel/kernel.h"
#include "test.h"
#include "testdriver.h"

static const char source_text[] = "from numba import cuda\n"
                                  "\n"
                                  "def saxpy(r, a, x, y):\n"
                                  "    i = cuda.grid(1)\n"
                                  "    if i < r.size:\n"
                                  "        r[i] = a * x[i] + y[i]\n"
                                  "\n"
                                  "def scale_pair(r, t):\n"
                                  "    i = cuda.grid(1)\n"
                                  "    if i < r.size:\n"
                                  "        r[i] = t[0] * t[1][i]\n";

#define SAXPY_SIG "void(float32[::1], float32, float32[::1], float32[::1])"

static nbc_kernel_t *saxpy_kernel(void) {
  nbc_source_t src = {.text = source_text, .filename = "test_kernel.py"};
  nbc_kernel_t *k = NULL;
  ASSERT_OK(nbc_kernel_create(&src, "saxpy", SAXPY_SIG, NULL, NULL, NULL, &k));
  return k;
}

static void require_testdriver(void) {
  if (!tdrv_available()) SKIP("counts the software test driver's calls");
}

static const int64_t n = 64;
static const unsigned grid[3] = {1, 1, 1}, block[3] = {64, 1, 1};

/* The four arguments of saxpy over n elements at r, x, y. */
static void saxpy_args(nbc_arg_t args[4], nbc_devptr_t r, nbc_devptr_t x, nbc_devptr_t y) {
  args[0] = nbc_arg_array(r, 'f', 4, 1, &n, NULL);
  args[1] = nbc_arg_float(2.5);
  args[2] = nbc_arg_array(x, 'f', 4, 1, &n, NULL);
  args[3] = nbc_arg_array(y, 'f', 4, 1, &n, NULL);
}

TEST(launches_load_the_code_once_per_context) {
  require_testdriver();
  nbc_kernel_t *k = saxpy_kernel();
  ASSERT_EQ(nbc_kernel_load_count(k), 0); /* compiling loads nothing */
  ASSERT_EQ(tdrv()->calls("cuModuleLoadDataEx"), 0);
  nbc_devptr_t r, x, y;
  ASSERT_OK(nbc_mem_alloc(n * 4, &r));
  ASSERT_OK(nbc_mem_alloc(n * 4, &x));
  ASSERT_OK(nbc_mem_alloc(n * 4, &y));
  nbc_arg_t args[4];
  saxpy_args(args, r, x, y);
  int launches = tdrv()->launch_count();
  ASSERT_OK(nbc_kernel_launch(k, grid, block, 0, NULL, args, 4));
  nbc_function_t *first = NULL, *again = NULL;
  ASSERT_OK(nbc_kernel_function(k, &first));
  ASSERT_OK(nbc_kernel_launch(k, grid, block, 0, NULL, args, 4));
  ASSERT_OK(nbc_kernel_function(k, &again));
  ASSERT(first == again);
  ASSERT_EQ(tdrv()->launch_count(), launches + 2);
  ASSERT_EQ(tdrv()->calls("cuModuleLoadDataEx"), 1);
  ASSERT_EQ(nbc_kernel_load_count(k), 1);
  /* another device's context loads its own copy */
  nbc_device_t *d1;
  ASSERT_OK(nbc_select_device(1, &d1));
  ASSERT_OK(nbc_kernel_function(k, &again));
  ASSERT(again != first);
  ASSERT_EQ(nbc_kernel_load_count(k), 2);
  nbc_kernel_destroy(k);
  ASSERT_EQ(tdrv()->calls("cuModuleUnload"), 2);
}

TEST(a_reset_context_loads_again) {
  require_testdriver();
  nbc_kernel_t *k = saxpy_kernel();
  nbc_function_t *fn = NULL;
  ASSERT_OK(nbc_kernel_function(k, &fn));
  nbc_device_t *d;
  ASSERT_OK(nbc_get_current_device(&d));
  ASSERT_OK(nbc_device_reset(d));
  ASSERT_OK(nbc_select_device(0, &d)); /* the primary context again, in a new lifetime */
  ASSERT_OK(nbc_kernel_function(k, &fn));
  ASSERT_EQ(nbc_kernel_load_count(k), 2);
  ASSERT_EQ(tdrv()->calls("cuModuleLoadDataEx"), 2);
  /* the reset unloaded the first module, destroying the kernel the second: the first's
   * wrapper is freed without asking the driver again */
  nbc_kernel_destroy(k);
  ASSERT_EQ(tdrv()->calls("cuModuleUnload"), 2);
}

/* A load function in place of the kernel's own load: called once per context, its module
 * the kernel's (unloaded with it), its failure the launch's. */
static int loads_asked;
static nbc_status_t load_counted(void *data, const nbc_kernel_t *k, nbc_module_t **pmodule) {
  loads_asked++;
  if (data) return nbc__set_error(NBC_LINK_ERROR, "the link files are gone");
  size_t size = 0;
  const char *code = nbc_compile_result_code(nbc_kernel_result(k), &size);
  return nbc_module_load_data(code, size, NBC_IMAGE_AUTO, pmodule);
}

TEST(a_load_function_makes_the_module) {
  require_testdriver();
  nbc_source_t src = {.text = source_text};
  nbc_kernel_options_t o = {.load = load_counted, .set_carveout = 1, .carveout = 50};
  nbc_kernel_t *k = NULL;
  ASSERT_OK(nbc_kernel_create(&src, "saxpy", SAXPY_SIG, NULL, NULL, &o, &k));
  nbc_function_t *fn = NULL, *again = NULL;
  ASSERT_OK(nbc_kernel_function(k, &fn));
  ASSERT_OK(nbc_kernel_function(k, &again));
  ASSERT(fn == again && loads_asked == 1 && nbc_kernel_load_count(k) == 1);
  int carveout = 0;
  ASSERT_OK(nbc_function_attribute(fn, NBC_FUNCTION_ATTR_PREFERRED_SHARED_MEMORY_CARVEOUT,
                                    &carveout));
  ASSERT_EQ(carveout, 50);
  nbc_kernel_destroy(k);
  ASSERT_EQ(tdrv()->calls("cuModuleUnload"), 1);
  /* a failing load function: its error stands, nothing is kept, the next use asks again */
  o.load_data = &o;
  ASSERT_OK(nbc_kernel_create(&src, "saxpy", SAXPY_SIG, NULL, NULL, &o, &k));
  ASSERT_STATUS(nbc_kernel_function(k, &fn), NBC_LINK_ERROR);
  ASSERT_STREQ(nbc_last_error(), "the link files are gone");
  ASSERT_STATUS(nbc_kernel_function(k, &fn), NBC_LINK_ERROR);
  ASSERT(loads_asked == 3 && nbc_kernel_load_count(k) == 0);
  nbc_kernel_destroy(k);
}

TEST(wrong_argument_count) {
  nbc_kernel_t *k = saxpy_kernel();
  nbc_arg_t args[4];
  saxpy_args(args, 0x1000, 0x2000, 0x3000);
  ASSERT_STATUS(nbc_kernel_launch(k, grid, block, 0, NULL, args, 3), NBC_INVALID_ARGUMENT);
  ASSERT_STREQ(nbc_last_error(), "kernel 'saxpy' takes 4 arguments (3 given)");
  ASSERT_EQ(nbc_kernel_load_count(k), 0); /* refused before anything was loaded */
  nbc_kernel_destroy(k);
}

TEST(array_where_a_scalar_is_expected) {
  nbc_kernel_t *k = saxpy_kernel();
  nbc_arg_t args[4];
  saxpy_args(args, 0x1000, 0x2000, 0x3000);
  args[1] = args[0];
  ASSERT_STATUS(nbc_kernel_launch(k, grid, block, 0, NULL, args, 4), NBC_INVALID_ARGUMENT);
  ASSERT_STREQ(nbc_last_error(), "argument 2: expected float32, got an array");
  args[1] = nbc_arg_float(1);
  args[0] = nbc_arg_int(7); /* and a scalar where an array is */
  ASSERT_STATUS(nbc_kernel_launch(k, grid, block, 0, NULL, args, 4), NBC_INVALID_ARGUMENT);
  ASSERT_STREQ(nbc_last_error(), "argument 1: expected array(float32, 1d, C), got an integer");
  nbc_kernel_destroy(k);
}

TEST(arrays_of_another_dtype_rank_or_layout) {
  nbc_kernel_t *k = saxpy_kernel();
  nbc_arg_t args[4];
  saxpy_args(args, 0x1000, 0x2000, 0x3000);
  args[2] = nbc_arg_array(0x2000, 'f', 8, 1, &n, NULL);
  ASSERT_STATUS(nbc_kernel_launch(k, grid, block, 0, NULL, args, 4), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "argument 3: expected array(float32, 1d, C), got an "
                                    "array of f64 elements");
  int64_t shape2[2] = {8, 8};
  args[2] = nbc_arg_array(0x2000, 'f', 4, 2, shape2, NULL);
  ASSERT_STATUS(nbc_kernel_launch(k, grid, block, 0, NULL, args, 4), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "argument 3: expected array(float32, 1d, C), got a 2d");
  int64_t every_other = 8;
  args[2] = nbc_arg_array(0x2000, 'f', 4, 1, &n, &every_other);
  ASSERT_STATUS(nbc_kernel_launch(k, grid, block, 0, NULL, args, 4), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "argument 3: ");
  nbc_kernel_destroy(k);
}

TEST(complex_for_a_real_parameter) {
  nbc_kernel_t *k = saxpy_kernel();
  nbc_arg_t args[4];
  saxpy_args(args, 0x1000, 0x2000, 0x3000);
  args[1] = nbc_arg_complex(1, 2);
  ASSERT_STATUS(nbc_kernel_launch(k, grid, block, 0, NULL, args, 4), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "argument 2: expected float32, got a complex value");
  nbc_kernel_destroy(k);
}

TEST(tuples_are_packed_item_by_item) {
  nbc_source_t src = {.text = source_text};
  nbc_kernel_t *k = NULL;
  ASSERT_OK(nbc_kernel_create(&src, "scale_pair", "void(float32[::1], "
                              "Tuple(float32, float32[::1]))", NULL, NULL, NULL, &k));
  const nbc_signature_t *sig = nbc_kernel_signature(k);
  size_t size = nbc_signature_params_size(sig);
  char *params = calloc(1, size), *expected = calloc(1, size);
  nbc_arg_t items[2] = {nbc_arg_float(3), nbc_arg_array(0x2000, 'f', 4, 1, &n, NULL)};
  nbc_arg_t args[2] = {nbc_arg_array(0x1000, 'f', 4, 1, &n, NULL), nbc_arg_tuple(items, 2)};
  ASSERT_OK(nbc_kernel_pack(k, args, 2, params));
  /* the same bytes as the signature's own packers make */
  const nbc_param_info_t *t = nbc_signature_param(sig, 1);
  ASSERT_OK(nbc_signature_pack_array(sig, 0, expected, 0x1000, 'f', 4, 1, &n, NULL));
  ASSERT_OK(nbc_param_pack_float(&t->items[0], expected, 3));
  ASSERT_OK(nbc_param_pack_array(&t->items[1], expected, 0x2000, 'f', 4, 1, &n, NULL));
  ASSERT(memcmp(params, expected, size) == 0);
  /* a tuple of the wrong length, an item of the wrong kind */
  args[1] = nbc_arg_tuple(items, 1);
  ASSERT_STATUS(nbc_kernel_pack(k, args, 2, params), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "argument 2: expected Tuple(float32, array(float32, 1d, "
                                    "C)), a tuple of 2 items, got a tuple of 1");
  items[1] = nbc_arg_float(1);
  args[1] = nbc_arg_tuple(items, 2);
  ASSERT_STATUS(nbc_kernel_pack(k, args, 2, params), NBC_INVALID_ARGUMENT);
  ASSERT_STREQ(nbc_last_error(), "argument 2: expected array(float32, 1d, C), got a float");
  free(params);
  free(expected);
  nbc_kernel_destroy(k);
}

TEST(create_errors) {
  nbc_source_t src = {.text = source_text};
  nbc_kernel_t *k = (nbc_kernel_t *)&src;
  ASSERT_STATUS(nbc_kernel_create(&src, "saxpy", NULL, NULL, NULL, NULL, &k),
                NBC_INVALID_ARGUMENT);
  ASSERT(k == NULL);
  /* the compiler's diagnostic stands */
  ASSERT_STATUS(nbc_kernel_create(&src, "saxpy", "void(float32[::1])", NULL, NULL, NULL, &k),
                NBC_TYPING_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "the signature has 1 argument but 'saxpy' takes 4");
  ASSERT(k == NULL);
  nbc_kernel_destroy(NULL);
}

TEST_LIST(X(launches_load_the_code_once_per_context) X(a_reset_context_loads_again)
              X(a_load_function_makes_the_module)
              X(wrong_argument_count) X(array_where_a_scalar_is_expected)
                  X(arrays_of_another_dtype_rank_or_layout) X(complex_for_a_real_parameter)
                      X(tuples_are_packed_item_by_item) X(create_errors))
TEST_MAIN()
