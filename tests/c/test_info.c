/* test_info.c — what nbcuda found (src/info.c): nbc_library_find for each library, found
 * and not found (each library's variable pointed at nothing), nbc_library_name,
 * nbc_env_names against the variables the sources read, and nbc_info_print's failures.
 * The CLI's `info` report is tested in test_host_cli.c, Python's nbcuda.info() in
 * tests/python/test_info.py.
 */
#include <glob.h>
#include <sys/stat.h>

#include "nbcuda.h"
#include "test.h"
#include "testdriver.h"

static int is_file(const char *path) {
  struct stat st;
  return path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

TEST(library_names) {
  ASSERT_STREQ(nbc_library_name(NBC_LIBRARY_DRIVER), "libcuda");
  ASSERT_STREQ(nbc_library_name(NBC_LIBRARY_NVVM), "libNVVM");
  ASSERT_STREQ(nbc_library_name(NBC_LIBRARY_CUDADEVRT), "libcudadevrt");
  ASSERT(nbc_library_name(NBC_LIBRARY_COUNT_) == NULL);
  ASSERT(nbc_library_name((nbc_library_t)-1) == NULL);
  const char *path = "x";
  ASSERT_EQ(nbc_library_find(NBC_LIBRARY_COUNT_, &path, NULL, NULL), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "is no nbc_library_t");
}

/* The driver: the test driver's version (13.0) and the file that was loaded. */
TEST(driver_found) {
  REQUIRE_DRIVER();
  const char *path = NULL;
  int major = -1, minor = -1, v = 0;
  ASSERT_OK(nbc_library_find(NBC_LIBRARY_DRIVER, &path, &major, &minor));
  ASSERT_OK(nbc_driver_version(&v));
  ASSERT_EQ(major, v / 1000);
  ASSERT_EQ(minor, (v % 1000) / 10);
  if (tdrv_present()) ASSERT_EQ(major * 1000 + minor * 10, 13000);
  ASSERT_STREQ(path, nbc_driver_path());
}

TEST(driver_disabled) {
  setenv("NBCUDA_DRIVER", "0", 1);
  const char *path = "x";
  int major = 0, minor = 0;
  ASSERT_EQ(nbc_library_find(NBC_LIBRARY_DRIVER, &path, &major, &minor), NBC_DRIVER_DISABLED);
  ASSERT(path == NULL);
  ASSERT_EQ(major, -1);
  ASSERT_EQ(minor, -1);
  ASSERT_CONTAINS(nbc_last_error(), "NBCUDA_DRIVER=0");
}

/* A stub libcuda is found but cannot be used: its path comes back with the status. */
TEST(driver_stub) {
  const char *stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!is_file(stub)) SKIP("no stub libcuda");
  setenv("NBCUDA_DRIVER", stub, 1);
  const char *path = NULL;
  ASSERT_EQ(nbc_library_find(NBC_LIBRARY_DRIVER, &path, NULL, NULL), NBC_STUB_DRIVER);
  ASSERT_STREQ(path, stub);
}

/* The toolkit's libraries, found where the compiler and the linker find them: a file, with
 * a version where the library has one, none (-1) for libdevice and libcudadevrt.a. */
TEST(toolkit_found) {
  if (!is_file("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc")) SKIP("no CUDA toolkit");
  static const struct {
    nbc_library_t library;
    const char *stem;
    int versioned;
  } cases[] = {{NBC_LIBRARY_NVVM, "libnvvm.so", 1},
               {NBC_LIBRARY_LIBDEVICE, "libdevice.10.bc", 0},
               {NBC_LIBRARY_NVJITLINK, "libnvJitLink.so", 1},
               {NBC_LIBRARY_NVRTC, "libnvrtc.so", 1},
               {NBC_LIBRARY_CUDART, "libcudart.so", 1},
               {NBC_LIBRARY_CUDADEVRT, "libcudadevrt.a", 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *path = NULL;
    int major = -2, minor = -2;
    ASSERT_OK(nbc_library_find(cases[i].library, &path, &major, &minor));
    ASSERT(is_file(path));
    const char *base = strrchr(path, '/');
    ASSERT(base && strncmp(base + 1, cases[i].stem, strlen(cases[i].stem)) == 0);
    if (cases[i].versioned) {
      ASSERT(major >= 1);
      ASSERT(minor >= 0);
    } else {
      ASSERT_EQ(major, -1);
      ASSERT_EQ(minor, -1);
    }
  }
  /* The CUDA runtime's version is libcudart's when libcudart answers. */
  int rt_major, rt_minor, major, minor;
  nbc_runtime_source_t source;
  ASSERT_OK(nbc_runtime_get_version(&rt_major, &rt_minor, &source));
  ASSERT_OK(nbc_library_find(NBC_LIBRARY_CUDART, NULL, &major, &minor));
  if (source == NBC_RUNTIME_CUDART) {
    ASSERT_EQ(major, rt_major);
    ASSERT_EQ(minor, rt_minor);
  }
}

/* Each library's own variable pointed at a file that does not exist: its NBC_NO_* status,
 * no path, no version, and a message naming the variable. */
TEST(toolkit_not_found) {
  static const struct {
    nbc_library_t library;
    const char *variable;
    nbc_status_t status;
  } cases[] = {{NBC_LIBRARY_NVVM, "NBCUDA_NVVM", NBC_NO_NVVM},
               {NBC_LIBRARY_LIBDEVICE, "NBCUDA_LIBDEVICE", NBC_NO_LIBDEVICE},
               {NBC_LIBRARY_NVJITLINK, "NBCUDA_NVJITLINK", NBC_NO_JITLINK},
               {NBC_LIBRARY_NVRTC, "NBCUDA_NVRTC", NBC_NO_NVRTC},
               {NBC_LIBRARY_CUDART, "NBCUDA_CUDART", NBC_NO_RUNTIME},
               {NBC_LIBRARY_CUDADEVRT, "NBCUDA_CUDADEVRT", NBC_LINK_ERROR}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    setenv(cases[i].variable, "/nonexistent/lib", 1);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *path = "x";
    int major = 0, minor = 0;
    ASSERT_EQ(nbc_library_find(cases[i].library, &path, &major, &minor), cases[i].status);
    ASSERT(path == NULL);
    ASSERT_EQ(major, -1);
    ASSERT_EQ(minor, -1);
    ASSERT_CONTAINS(nbc_last_error(), cases[i].variable);
    ASSERT_CONTAINS(nbc_last_error(), "/nonexistent/lib");
  }
}

/* Every NBCUDA_* / NUMBA_* name quoted in the C sources is listed, and nothing else; the
 * list is sorted. */
static int listed(const char *name) {
  for (const char *const *n = nbc_env_names(); *n; n++)
    if (strcmp(*n, name) == 0) return 1;
  return 0;
}

static int in_sources(const char *needle) {
  static const char *const patterns[] = {NBCUDA_SOURCE_DIR "/src/*.c", NBCUDA_SOURCE_DIR "/src/*/*.c",
                                         NBCUDA_SOURCE_DIR "/tools/*.c"};
  for (size_t p = 0; p < 3; p++) {
    glob_t g;
    if (glob(patterns[p], 0, NULL, &g) != 0) continue;
    for (size_t i = 0; i < g.gl_pathc; i++) {
      if (strstr(g.gl_pathv[i], "/src/info.c")) continue; /* the list itself */
      FILE *f = fopen(g.gl_pathv[i], "r");
      char line[4096];
      int found = 0;
      while (f && !found && fgets(line, sizeof line, f)) found = strstr(line, needle) != NULL;
      if (f) fclose(f);
      if (found) {
        globfree(&g);
        return 1;
      }
    }
    globfree(&g);
  }
  return 0;
}

TEST(env_names_match_sources) {
  const char *const *names = nbc_env_names();
  ASSERT(names[0] != NULL);
  for (const char *const *n = names; *n; n++) {
    if (n != names) ASSERT(strcmp(n[-1], *n) < 0);
    char quoted[128];
    snprintf(quoted, sizeof quoted, "\"%s\"", *n);
    if (!in_sources(quoted)) TEST_FAIL_("%s is listed but no source reads it", *n);
  }
  static const char *const patterns[] = {NBCUDA_SOURCE_DIR "/src/*.c", NBCUDA_SOURCE_DIR "/src/*/*.c",
                                         NBCUDA_SOURCE_DIR "/tools/*.c"};
  int seen = 0;
  for (size_t p = 0; p < 3; p++) {
    glob_t g;
    if (glob(patterns[p], 0, NULL, &g) != 0) continue;
    for (size_t i = 0; i < g.gl_pathc; i++) {
      FILE *f = fopen(g.gl_pathv[i], "r");
      char line[4096];
      while (f && fgets(line, sizeof line, f)) {
        for (char *q = line; (q = strchr(q, '"')) != NULL; q++) {
          if (strncmp(q + 1, "NBCUDA_", 7) != 0 && strncmp(q + 1, "NUMBA_", 6) != 0) continue;
          size_t len = strspn(q + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
          if (q[1 + len] != '"') continue;
          char name[128];
          snprintf(name, sizeof name, "%.*s", (int)len, q + 1);
          if (!listed(name)) TEST_FAIL_("%s reads %s, which nbc_env_names() lacks",
                                        g.gl_pathv[i], name);
          seen++;
        }
      }
      if (f) fclose(f);
    }
    globfree(&g);
  }
  ASSERT(seen > 20);
}

TEST(info_print_errors) {
  ASSERT_EQ(nbc_info_print(NULL, 0), NBC_INVALID_ARGUMENT);
  FILE *full = fopen("/dev/full", "w");
  if (!full) SKIP("no /dev/full");
  setenv("NBCUDA_DRIVER", "0", 1);
  ASSERT_EQ(nbc_info_print(full, 1), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "cannot be written");
  fclose(full);
}

TEST_LIST(X(library_names) X(driver_found) X(driver_disabled) X(driver_stub) X(toolkit_found)
              X(toolkit_not_found) X(env_names_match_sources) X(info_print_errors))
TEST_MAIN()
