/* test_cache.c — the kernel layer's disk cache (nbc_cache_*): an entry misses until a result
 * is stored, then gives that result back; another key (signature, option, extra text) is
 * another file; a source file changed since, a truncated or foreign file are misses; the
 * directory follows $NBCUDA_CACHE_DIR, else the source's __pycache__; a source that does not
 * exist and a directory that cannot be made are errors naming them. Each test works in a
 * fresh temporary directory.
 */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "nbcuda.h"

static char root[64], source[128];

/* A fresh directory with a source file k.py (its text `text`), NBCUDA_CACHE_DIR unset. */
static void fresh(const char *text) {
  snprintf(root, sizeof root, "/tmp/nbc_test_cache.XXXXXX");
  ASSERT(mkdtemp(root) != NULL);
  snprintf(source, sizeof source, "%s/k.py", root);
  FILE *f = fopen(source, "w");
  ASSERT(f != NULL);
  fputs(text, f);
  fclose(f);
  unsetenv("NBCUDA_CACHE_DIR");
  unsetenv("NUMBA_CACHE_DIR");
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

/* Removes the test's directory (a failed test leaves it to look at). */
static void done(void) { ASSERT_EQ(nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS), 0); }

static nbc_cache_key_t key_for(const char *signature) {
  return (nbc_cache_key_t){.file = source, .qualname = "f.<locals>.k", .line = 3,
                           .signature = signature};
}

static nbc_compile_result_t *result_of(const char *code, const char *symbol) {
  nbc_compile_result_t *r = NULL;
  ASSERT_OK(nbc_compile_result_create(code, strlen(code), symbol, "none", &r));
  return r;
}

static nbc_cache_entry_t *entry_for(const nbc_cache_key_t *key) {
  nbc_cache_entry_t *e = NULL;
  ASSERT_OK(nbc_cache_entry_create(key, &e));
  ASSERT(e != NULL);
  return e;
}

static nbc_compile_result_t *load(const nbc_cache_entry_t *e) {
  nbc_compile_result_t *r = (nbc_compile_result_t *)e; /* overwritten by the load */
  ASSERT_OK(nbc_cache_entry_load(e, &r));
  return r;
}

TEST(a_stored_result_is_loaded_back) {
  fresh("def k(a):\n    a[0] = 1\n");
  nbc_cache_key_t key = key_for("void(float32[::1])");
  nbc_cache_entry_t *e = entry_for(&key);
  ASSERT(load(e) == NULL); /* nothing stored yet */
  nbc_compile_result_t *stored = result_of(".version 8.5\n// kernel k\n", "_Z1kPf");
  ASSERT_OK(nbc_cache_entry_store(e, stored));
  nbc_cache_entry_destroy(e);
  e = entry_for(&key); /* another process's view: a new entry of the same key */
  nbc_compile_result_t *r = load(e);
  ASSERT(r != NULL);
  size_t n = 0, m = 0;
  const char *code = nbc_compile_result_code(r, &n);
  nbc_compile_result_code(stored, &m);
  ASSERT_EQ(n, m);
  ASSERT_STREQ(code, ".version 8.5\n// kernel k\n");
  ASSERT_STREQ(nbc_compile_result_symbol(r), "_Z1kPf");
  ASSERT_STREQ(nbc_compile_result_return_type(r), "none");
  /* the file is in the source's __pycache__, named after the stem, qualname and line */
  char expected[256];
  snprintf(expected, sizeof expected, "%s/__pycache__/k.f._locals_.k-3.", root);
  ASSERT_CONTAINS(nbc_cache_entry_path(e), expected);
  ASSERT_EQ(access(nbc_cache_entry_path(e), R_OK), 0);
  char dir[512];
  ASSERT_OK(nbc_cache_dir(source, dir, sizeof dir));
  snprintf(expected, sizeof expected, "%s/__pycache__", root);
  ASSERT_STREQ(dir, expected);
  nbc_compile_result_destroy(r);
  nbc_compile_result_destroy(stored);
  nbc_cache_entry_destroy(e);
  done();
}

TEST(another_key_is_another_entry) {
  fresh("def k(a):\n    a[0] = 1\n");
  nbc_cache_key_t key = key_for("void(float32[::1])");
  nbc_cache_entry_t *e = entry_for(&key);
  nbc_compile_result_t *stored = result_of("code", "k");
  ASSERT_OK(nbc_cache_entry_store(e, stored));
  nbc_compile_options_t fast;
  nbc_compile_options_init(&fast);
  fast.fastmath = 1;
  nbc_cache_key_t others[] = {key_for("void(float64[::1])"), key, key};
  others[1].options = &fast;
  others[2].extra = "a digest of the closure";
  for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
    nbc_cache_entry_t *o = entry_for(&others[i]);
    ASSERT(strcmp(nbc_cache_entry_path(o), nbc_cache_entry_path(e)) != 0);
    ASSERT(load(o) == NULL);
    nbc_cache_entry_destroy(o);
  }
  nbc_compile_result_destroy(stored);
  nbc_cache_entry_destroy(e);
  done();
}

TEST(a_changed_source_or_damaged_file_misses) {
  fresh("def k(a):\n    a[0] = 1\n");
  nbc_cache_key_t key = key_for("void(int32[::1])");
  nbc_cache_entry_t *e = entry_for(&key);
  nbc_compile_result_t *stored = result_of("some code", "k");
  ASSERT_OK(nbc_cache_entry_store(e, stored));
  char path[512];
  snprintf(path, sizeof path, "%s", nbc_cache_entry_path(e));
  nbc_cache_entry_destroy(e);
  /* trailing bytes */
  FILE *f = fopen(path, "ab");
  fputs("x", f);
  fclose(f);
  e = entry_for(&key);
  ASSERT(load(e) == NULL);
  /* truncated */
  struct stat sb;
  ASSERT_EQ(stat(path, &sb), 0);
  ASSERT_EQ(truncate(path, sb.st_size - 4), 0);
  ASSERT(load(e) == NULL);
  /* whole again, then the source grows: the entry made before the change still matches
   * its stamp; a new one (a later process) does not */
  ASSERT_OK(nbc_cache_entry_store(e, stored));
  ASSERT(load(e) != NULL);
  nbc_compile_result_destroy(load(e));
  f = fopen(source, "a");
  fputs("# edited\n", f);
  fclose(f);
  nbc_cache_entry_destroy(e);
  e = entry_for(&key);
  ASSERT(load(e) == NULL);
  nbc_compile_result_destroy(stored);
  nbc_cache_entry_destroy(e);
  done();
}

TEST(the_cache_directory_follows_the_environment) {
  fresh("def k(a):\n    a[0] = 1\n");
  char env[128], dir[512];
  snprintf(env, sizeof env, "%s/elsewhere", root);
  setenv("NUMBA_CACHE_DIR", env, 1);
  ASSERT_OK(nbc_cache_dir(source, dir, sizeof dir));
  ASSERT_CONTAINS(dir, env);
  ASSERT(strstr(dir, "__pycache__") == NULL);
  nbc_cache_key_t key = key_for("void(int32[::1])");
  nbc_cache_entry_t *e = entry_for(&key);
  ASSERT_CONTAINS(nbc_cache_entry_path(e), dir);
  nbc_cache_entry_destroy(e);
  unsetenv("NUMBA_CACHE_DIR");
  done();
}

TEST(errors_name_what_failed) {
  fresh("def k(a):\n    a[0] = 1\n");
  nbc_cache_entry_t *e = (nbc_cache_entry_t *)root;
  nbc_cache_key_t key = key_for("void(int32[::1])");
  char missing[160];
  snprintf(missing, sizeof missing, "%s/gone.py", root);
  key.file = missing;
  ASSERT_STATUS(nbc_cache_entry_create(&key, &e), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "gone.py");
  ASSERT(e == NULL);
  /* a cache directory under a regular file cannot be made, even by root */
  char env[160];
  snprintf(env, sizeof env, "%s/k.py/cache", root);
  setenv("NBCUDA_CACHE_DIR", env, 1);
  key.file = source;
  ASSERT_STATUS(nbc_cache_entry_create(&key, &e), NBC_CACHE_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "no cache directory for");
  ASSERT(e == NULL);
  unsetenv("NBCUDA_CACHE_DIR");
  key.signature = NULL;
  ASSERT_STATUS(nbc_cache_entry_create(&key, &e), NBC_INVALID_ARGUMENT);
  nbc_cache_entry_destroy(NULL);
  done();
}

TEST_LIST(X(a_stored_result_is_loaded_back) X(another_key_is_another_entry)
              X(a_changed_source_or_damaged_file_misses)
                  X(the_cache_directory_follows_the_environment) X(errors_name_what_failed))
TEST_MAIN()
