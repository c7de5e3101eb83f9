/* test_toolkit.c — the one finder of NVIDIA's libraries and tools (src/base/toolkit.c) on
 * fake toolkit trees built in a temporary folder at run time: an item's variable wins over
 * every folder and, when it names nothing, stops the search; a root given by CUDA_HOME (then
 * CUDA_PATH, then the default toolkit) is used; a versioned name stands in for the plain one;
 * libdevice is found beside libNVVM; a pip wheel's folder is searched; a rejected candidate
 * is recorded with its reason and the search goes on; a missing item's record lists every
 * place tried, and so do the messages built from it (nbc_toolkit_find_program). Each test
 * runs in its own child process (test.h), so the environment it sets is its own.
 */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/toolkit.h"
#include "nbcuda.h"
#include "test.h"

/* The test's temporary folder (one per test process), removed by cleanup(). */
static char tmp[256];

static const char *fresh_dir(void) {
  const char *base = getenv("TMPDIR");
  snprintf(tmp, sizeof tmp, "%s/nbcuda_toolkit_XXXXXX", base && *base ? base : "/tmp");
  if (!mkdtemp(tmp)) TEST_FAIL_("mkdtemp %s failed", tmp);
  return tmp;
}

/* Creates every folder of dir/rel and the file at its end (mode 0755 when executable). */
static void make_file(const char *dir, const char *rel, int executable) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, rel);
  for (char *p = path + strlen(dir) + 1; (p = strchr(p, '/')) != NULL; p++) {
    *p = '\0';
    mkdir(path, 0755);
    *p = '/';
  }
  FILE *f = fopen(path, "w");
  if (!f) TEST_FAIL_("cannot create %s", path);
  fputs("fake\n", f);
  fclose(f);
  chmod(path, executable ? 0755 : 0644);
}

static void make_dir(const char *dir, const char *rel) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, rel);
  mkdir(path, 0755);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

/* Removes the folder with nftw: the tests change PATH, so no `rm` is run. */
static void cleanup(void) {
  if (nftw(tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
    fprintf(stderr, "could not remove %s\n", tmp);
}

/* A search that never sees the machine's own toolkit: the fixed system folders are under
 * root, the dynamic loader is not asked, the process environment is read as set by the test. */
static void isolated(nbc__toolkit_search *s, const char *root) {
  memset(s, 0, sizeof *s);
  s->root = root;
  s->no_loader = true;
}

static void isolate_environment(void) {
  static const char *const vars[] = {"CUDA_HOME", "CUDA_PATH", "NBCUDA_PIP_SITE", "VIRTUAL_ENV",
                                     "CONDA_PREFIX", "NBCUDA_CUDADEVRT", "NBCUDA_LIBDEVICE",
                                     "NBCUDA_NVVM", "NBCUDA_DRIVER", "NUMBA_CUDA_DRIVER"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
  setenv("HOME", "/nonexistent/home", 1);
}

static char *path_in(const char *dir, const char *rel) {
  static char buf[1024];
  snprintf(buf, sizeof buf, "%s/%s", dir, rel);
  return buf;
}

/* The variable wins over a root that has the file too; a folder it names is searched. */
TEST(env_override_wins) {
  isolate_environment();
  const char *d = fresh_dir();
  make_file(d, "home/lib64/libcudadevrt.a", 0);
  make_file(d, "mine/libcudadevrt.a", 0);
  setenv("CUDA_HOME", path_in(d, "home"), 1);
  setenv("NBCUDA_CUDADEVRT", path_in(d, "mine/libcudadevrt.a"), 1);
  nbc__toolkit_search s;
  isolated(&s, d);
  ASSERT_EQ(nbc__toolkit_find(NBC__TOOLKIT_CUDADEVRT, &s), 0);
  ASSERT_STREQ(s.path, path_in(d, "mine/libcudadevrt.a"));
  ASSERT_STREQ(s.origin, "NBCUDA_CUDADEVRT");
  ASSERT_STREQ(s.env_name, "NBCUDA_CUDADEVRT");
  setenv("NBCUDA_CUDADEVRT", path_in(d, "mine"), 1); /* a folder */
  isolated(&s, d);
  ASSERT_EQ(nbc__toolkit_find(NBC__TOOLKIT_CUDADEVRT, &s), 0);
  ASSERT_STREQ(s.path, path_in(d, "mine/libcudadevrt.a"));
  unsetenv("NBCUDA_CUDADEVRT");
  isolated(&s, d);
  ASSERT_EQ(nbc__toolkit_find(NBC__TOOLKIT_CUDADEVRT, &s), 0);
  ASSERT_STREQ(s.path, path_in(d, "home/lib64/libcudadevrt.a"));
  ASSERT_STREQ(s.origin, "CUDA_HOME");
  cleanup();
}

/* A variable that names nothing is authoritative: the root that has the file is not tried,
 * and the record says what the variable named. */
TEST(env_override_naming_nothing_stops_the_search) {
  isolate_environment();
  const char *d = fresh_dir();
  make_file(d, "home/nvvm/libdevice/libdevice.10.bc", 0);
  setenv("CUDA_HOME", path_in(d, "home"), 1);
  setenv("NBCUDA_LIBDEVICE", "/nonexistent/libdevice.10.bc", 1);
  nbc__toolkit_search s;
  isolated(&s, d);
  ASSERT_EQ(nbc__toolkit_find(NBC__TOOLKIT_LIBDEVICE, &s), -1);
  ASSERT_EQ(s.tried, 1);
  char text[2048];
  ASSERT_STREQ(nbc__toolkit_tried(&s, NBC__TOOLKIT_LINES, text, sizeof text),
               "  - /nonexistent/libdevice.10.bc (NBCUDA_LIBDEVICE: no such file)\n");
  ASSERT_STREQ(nbc__toolkit_tried(&s, NBC__TOOLKIT_INLINE, text, sizeof text),
               "NBCUDA_LIBDEVICE=/nonexistent/libdevice.10.bc");
  cleanup();
}

/* libcuda's variables: NBCUDA_DRIVER, then numba-cuda's NUMBA_CUDA_DRIVER when it is empty. */
TEST(driver_variables_in_order) {
  isolate_environment();
  const char *d = fresh_dir();
  make_file(d, "a/libcuda.so.1", 0);
  make_file(d, "b/libcuda.so.1", 0);
  setenv("NBCUDA_DRIVER", "", 1);
  setenv("NUMBA_CUDA_DRIVER", path_in(d, "b/libcuda.so.1"), 1);
  nbc__toolkit_search s;
  isolated(&s, d);
  /* A text file is no library: the default accept (dlopen) rejects it with the loader's
   * reason, and the search stops there (the variable is authoritative). */
  ASSERT_EQ(nbc__toolkit_find(NBC__TOOLKIT_LIBCUDA, &s), -1);
  ASSERT_STREQ(s.env_name, "NUMBA_CUDA_DRIVER");
  ASSERT(s.why[0] != '\0');
  char text[4096];
  ASSERT_CONTAINS(nbc__toolkit_tried(&s, NBC__TOOLKIT_INLINE, text, sizeof text),
                  "NUMBA_CUDA_DRIVER=");
  ASSERT_CONTAINS(text, "b/libcuda.so.1 (");
  setenv("NBCUDA_DRIVER", path_in(d, "a/libcuda.so.1"), 1);
  isolated(&s, d);
  ASSERT_EQ(nbc__toolkit_find(NBC__TOOLKIT_LIBCUDA, &s), -1);
  ASSERT_STREQ(s.env_name, "NBCUDA_DRIVER");
  cleanup();
}

/* The roots in order: CUDA_HOME, CUDA_PATH, the default toolkit (under root here). */
TEST(cuda_home_root_is_used) {
  isolate_environment();
  const char *d = fresh_dir();
  make_file(d, "home/bin/nvdisasm", 1);
  make_file(d, "path/bin/nvdisasm", 1);
  make_file(d, "usr/local/cuda/bin/nvdisasm", 1);
  make_dir(d, "emptybin");
  setenv("PATH", path_in(d, "emptybin"), 1);
  setenv("CUDA_HOME", path_in(d, "home"), 1);
  setenv("CUDA_PATH", path_in(d, "path"), 1);
  nbc__toolkit_search s;
  isolated(&s, d);
  ASSERT_EQ(nbc__toolkit_find(NBC__TOOLKIT_NVDISASM, &s), 0);
  ASSERT_STREQ(s.path, path_in(d, "home/bin/nvdisasm"));
  ASSERT_STREQ(s.origin, "CUDA_HOME");
  unsetenv("CUDA_HOME");
  isolated(&s, d);
  ASSERT_EQ(nbc__toolkit_find(NBC__TOOLKIT_NVDISASM, &s), 0);
  ASSERT_STREQ(s.origin, "CUDA_PATH");
  unsetenv("CUDA_PATH");
  isolated(&s, d);
  ASSERT_EQ(nbc__toolkit_find(NBC__TOOLKIT_NVDISASM, &s), 0);
  ASSERT_STREQ(s.path, path_in(d, "usr/local/cuda/bin/nvdisasm"));
  ASSERT_STREQ(s.origin, "default toolkit");
  /* PATH comes first for a program, as in a shell. */
  make_file(d, "emptybin/nvdisasm", 1);
  setenv("CUDA_HOME", path_in(d, "home"), 1);
  isolated(&s, d);
  ASSERT_EQ(nbc__toolkit_find(NBC__TOOLKIT_NVDISASM, &s), 0);
  ASSERT_STREQ(s.origin, "PATH");
  cleanup();
}

/* The public search for a program uses CUDA_HOME too, and a file that is not executable is
 * passed over with the reason recorded. */
TEST(find_program_uses_cuda_home) {
  isolate_environment();
  const char *d = fresh_dir();
  make_file(d, "home/bin/nvdisasm", 1);
  make_file(d, "notexec/nvdisasm", 0);
  setenv("PATH", path_in(d, "notexec"), 1);
  setenv("CUDA_HOME", path_in(d, "home"), 1);
  const char *path = NULL;
  ASSERT_OK(nbc_toolkit_find_program("nvdisasm", NULL, &path));
  ASSERT_STREQ(path, path_in(d, "home/bin/nvdisasm"));
  ASSERT_STATUS(nbc_toolkit_find_program("ptxas", NULL, &path), NBC_INVALID_ARGUMENT);
  ASSERT(path == NULL);
  cleanup();
}

/* Nothing anywhere: NBC_NO_PROGRAM, and the message lists PATH's folder, each root's bin/,
 * and the wheel folder under the site passed in. */
TEST(missing_program_lists_every_place) {
  if (access("/usr/local/cuda/bin/nvdisasm", X_OK) == 0)
    SKIP("/usr/local/cuda/bin/nvdisasm exists: the default toolkit is always looked at");
  isolate_environment();
  const char *d = fresh_dir();
  make_dir(d, "bin");
  make_dir(d, "home");
  make_dir(d, "site");
  setenv("PATH", path_in(d, "bin"), 1);
  setenv("CUDA_HOME", path_in(d, "home"), 1);
  setenv("CUDA_PATH", "/nonexistent/cudapath", 1);
  char site[1024];
  snprintf(site, sizeof site, "%s", path_in(d, "site"));
  const char *sites[] = {site, NULL};
  const char *path = "x";
  ASSERT_STATUS(nbc_toolkit_find_program("nvdisasm", sites, &path), NBC_NO_PROGRAM);
  ASSERT(path == NULL);
  const char *msg = nbc_last_error();
  ASSERT_CONTAINS(msg, "nvdisasm cannot be found (searched ");
  char place[1024];
  snprintf(place, sizeof place, "%s/bin/nvdisasm (PATH)", d);
  ASSERT_CONTAINS(msg, place);
  snprintf(place, sizeof place, "%s/home/bin/nvdisasm (CUDA_HOME)", d);
  ASSERT_CONTAINS(msg, place);
  ASSERT_CONTAINS(msg, "/nonexistent/cudapath/bin/nvdisasm (CUDA_PATH)");
  ASSERT_CONTAINS(msg, "/usr/local/cuda/bin/nvdisasm (default toolkit)");
  snprintf(place, sizeof place, "%s/site/nvidia/cu13/bin/nvdisasm (pip wheel)", d);
  ASSERT_CONTAINS(msg, place);
  cleanup();
}

/* A missing library's record, in both styles: every root's folders with the names tried. */
TEST(missing_library_lists_every_place) {
  isolate_environment();
  setenv("CUDA_HOME", "/nonexistent/cudahome", 1);
  setenv("NBCUDA_PIP_SITE", "/nonexistent/site", 1);
  nbc__toolkit_search s;
  isolated(&s, "/nonexistent/root");
  ASSERT_EQ(nbc__toolkit_find(NBC__TOOLKIT_CUDART, &s), -1);
  char text[8192];
  nbc__toolkit_tried(&s, NBC__TOOLKIT_LINES, text, sizeof text);
  static const char *const places[] = {
      "  - /nonexistent/cudahome/lib64/{libcudart.so.13,libcudart.so.12,libcudart.so} "
      "(CUDA_HOME)\n",
      "  - /nonexistent/cudahome/lib/{libcudart.so.13,libcudart.so.12,libcudart.so} "
      "(CUDA_HOME)\n",
      "  - /nonexistent/root/usr/local/cuda/lib64/{libcudart.so.13,libcudart.so.12,"
      "libcudart.so} (default toolkit)\n",
      "  - /nonexistent/site/nvidia/cu13/lib/{libcudart.so.13,libcudart.so.12,libcudart.so} "
      "(pip wheel)\n",
      "  - /nonexistent/site/nvidia/cuda_runtime/lib/{libcudart.so.13,libcudart.so.12,"
      "libcudart.so} (pip wheel)\n",
  };
  for (size_t i = 0; i < sizeof places / sizeof places[0]; i++) ASSERT_CONTAINS(text, places[i]);
  ASSERT(strstr(text, "dynamic loader") == NULL); /* not asked */
  nbc__toolkit_tried(&s, NBC__TOOLKIT_INLINE, text, sizeof text);
  ASSERT_CONTAINS(text, "/nonexistent/cudahome/lib64/{libcudart.so.13,libcudart.so.12,"
                        "libcudart.so} (CUDA_HOME); /nonexistent/cudahome/lib/");
  /* A file, not a shared library: the dynamic loader is not asked for it. */
  isolated(&s, "/nonexistent/root");
  s.no_loader = false;
  ASSERT_EQ(nbc__toolkit_find(NBC__TOOLKIT_CUDADEVRT, &s), -1);
  nbc__toolkit_tried(&s, NBC__TOOLKIT_LINES, text, sizeof text);
  ASSERT(strstr(text, "dynamic loader") == NULL);
}

/* A candidate the caller rejects is recorded with the reason, and the next root is tried. */
static bool reject_cuda_home(void *data, const char *path, char *why, size_t size) {
  if (strstr(path, (const char *)data)) {
    snprintf(why, size, "wrong version");
    return false;
  }
  return true;
}

TEST(rejected_candidate_is_recorded) {
  isolate_environment();
  const char *d = fresh_dir();
  make_file(d, "home/lib64/libnvJitLink.so.13", 0);
  make_file(d, "path/lib64/libnvJitLink.so.12", 0);
  setenv("CUDA_HOME", path_in(d, "home"), 1);
  setenv("CUDA_PATH", path_in(d, "path"), 1);
  char home[1024];
  snprintf(home, sizeof home, "%s", path_in(d, "home"));
  nbc__toolkit_search s;
  isolated(&s, d);
  s.accept = reject_cuda_home;
  s.data = home;
  ASSERT_EQ(nbc__toolkit_find(NBC__TOOLKIT_NVJITLINK, &s), 0);
  ASSERT_STREQ(s.path, path_in(d, "path/lib64/libnvJitLink.so.12"));
  char text[4096], expected[1200];
  snprintf(expected, sizeof expected, "  - %s/lib64/libnvJitLink.so.13 (CUDA_HOME: wrong version)\n",
           home);
  ASSERT_CONTAINS(nbc__toolkit_tried(&s, NBC__TOOLKIT_LINES, text, sizeof text), expected);
  cleanup();
}

/* libnvvm.so.4 stands in for libnvvm.so; libdevice is found beside the libNVVM given. */
TEST(versioned_name_and_beside) {
  isolate_environment();
  const char *d = fresh_dir();
  make_file(d, "kit/nvvm/lib64/libnvvm.so.4", 0);
  make_file(d, "kit/nvvm/libdevice/libdevice.10.bc", 0);
  setenv("CUDA_HOME", path_in(d, "kit"), 1);
  nbc__toolkit_search s;
  isolated(&s, d);
  s.accept = reject_cuda_home;
  s.data = "/no/such/part/";
  ASSERT_EQ(nbc__toolkit_find(NBC__TOOLKIT_NVVM, &s), 0);
  ASSERT_STREQ(s.path, path_in(d, "kit/nvvm/lib64/libnvvm.so.4"));
  char nvvm[4096];
  snprintf(nvvm, sizeof nvvm, "%s", s.path);
  unsetenv("CUDA_HOME");
  isolated(&s, d);
  s.beside = nvvm;
  ASSERT_EQ(nbc__toolkit_find(NBC__TOOLKIT_LIBDEVICE, &s), 0);
  ASSERT_STREQ(s.origin, "next to libNVVM");
  ASSERT_CONTAINS(s.path, "/kit/nvvm/lib64/../libdevice/libdevice.10.bc");
  cleanup();
}

/* A wheel's folder under a site passed in (the Python module's sys.path). */
TEST(wheel_under_a_site) {
  isolate_environment();
  const char *d = fresh_dir();
  make_file(d, "site/nvidia/cu13/bin/nvdisasm", 1);
  make_dir(d, "bin");
  setenv("PATH", path_in(d, "bin"), 1);
  char site[1024];
  snprintf(site, sizeof site, "%s", path_in(d, "site"));
  const char *sites[] = {site, NULL};
  nbc__toolkit_search s;
  isolated(&s, d);
  s.sites = sites;
  ASSERT_EQ(nbc__toolkit_find(NBC__TOOLKIT_NVDISASM, &s), 0);
  ASSERT_STREQ(s.origin, "pip wheel");
  ASSERT_STREQ(s.path, path_in(d, "site/nvidia/cu13/bin/nvdisasm"));
  cleanup();
}

/* A record too long for its buffer says how many places it left out. */
TEST(long_record_counts_what_it_left_out) {
  isolate_environment();
  char path[65536] = "";
  size_t len = 0;
  for (int i = 0; i < 400; i++)
    len += (size_t)snprintf(path + len, sizeof path - len, "%s/nonexistent/folder/number/%d",
                            i ? ":" : "", i);
  setenv("PATH", path, 1);
  nbc__toolkit_search s;
  isolated(&s, "/nonexistent/root");
  ASSERT_EQ(nbc__toolkit_find(NBC__TOOLKIT_NVDISASM, &s), -1);
  ASSERT(s.dropped > 0);
  char text[16384];
  ASSERT_CONTAINS(nbc__toolkit_tried(&s, NBC__TOOLKIT_LINES, text, sizeof text), "more places");
}

TEST_LIST(X(env_override_wins) X(env_override_naming_nothing_stops_the_search)
              X(driver_variables_in_order) X(cuda_home_root_is_used)
                  X(find_program_uses_cuda_home) X(missing_program_lists_every_place)
                      X(missing_library_lists_every_place) X(rejected_candidate_is_recorded)
                          X(versioned_name_and_beside) X(wheel_under_a_site)
                              X(long_record_counts_what_it_left_out))
TEST_MAIN()
