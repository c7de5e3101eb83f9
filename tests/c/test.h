/* test.h — the tiny test harness of nbcuda's C tests.
 *
 * A test file defines tests with TEST(name) { ... } and lists them once in
 * TEST_LIST(X(name) X(other) ...), then ends with TEST_MAIN(). Each test runs in its own
 * forked child process, so that process-wide state (the loaded driver, cuInit, the fault
 * injection counters of the test driver) starts fresh for every test and a crash fails only
 * that test. `./test_x name` runs one test in-process (handy under a debugger). A test
 * passes when it returns; ASSERT* failures print file:line and exit the child with 1;
 * SKIP("why") exits with 77 and is reported as skipped.
 */
#ifndef NBCUDA_TEST_H
#define NBCUDA_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define TEST(name) static void test_##name(void)

#define TEST_FAIL_(...)                                                                    \
  do {                                                                                     \
    fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                        \
    fprintf(stderr, __VA_ARGS__);                                                          \
    fprintf(stderr, "\n");                                                                 \
    fflush(stderr);                                                                        \
    _exit(1);                                                                              \
  } while (0)

#define ASSERT(cond)                                                                       \
  do {                                                                                     \
    if (!(cond)) TEST_FAIL_("assertion failed: %s", #cond);                                \
  } while (0)

#define ASSERT_EQ(a, b)                                                                    \
  do {                                                                                     \
    long long a_ = (long long)(a), b_ = (long long)(b);                                    \
    if (a_ != b_) TEST_FAIL_("%s == %s failed: %lld != %lld", #a, #b, a_, b_);             \
  } while (0)

#define ASSERT_STREQ(a, b)                                                                 \
  do {                                                                                     \
    const char *a_ = (a), *b_ = (b);                                                       \
    if (!a_ || !b_ || strcmp(a_, b_) != 0)                                                 \
      TEST_FAIL_("%s == %s failed:\n  \"%s\"\n  \"%s\"", #a, #b, a_ ? a_ : "(null)",       \
                 b_ ? b_ : "(null)");                                                      \
  } while (0)

#define ASSERT_CONTAINS(haystack, needle)                                                  \
  do {                                                                                     \
    const char *h_ = (haystack), *n_ = (needle);                                           \
    if (!h_ || !strstr(h_, n_))                                                            \
      TEST_FAIL_("\"%s\" does not contain \"%s\"", h_ ? h_ : "(null)", n_);                \
  } while (0)

/* Asserts that an nbcuda call returns NBC_OK, printing nbc_last_error() otherwise. */
#define ASSERT_OK(call)                                                                    \
  do {                                                                                     \
    int st_ = (int)(call);                                                                 \
    if (st_ != 0)                                                                          \
      TEST_FAIL_("%s returned %s: %s", #call, nbc_status_name((nbc_status_t)st_),          \
                 nbc_last_error());                                                        \
  } while (0)

#define ASSERT_STATUS(call, expected)                                                      \
  do {                                                                                     \
    int st_ = (int)(call);                                                                 \
    if (st_ != (int)(expected))                                                            \
      TEST_FAIL_("%s returned %s, expected %s: %s", #call,                                 \
                 nbc_status_name((nbc_status_t)st_), nbc_status_name(expected),            \
                 nbc_last_error());                                                        \
  } while (0)

#define SKIP(why)                                                                          \
  do {                                                                                     \
    fprintf(stderr, "skipped: %s\n", why);                                                 \
    fflush(stderr);                                                                        \
    _exit(77);                                                                             \
  } while (0)

typedef struct test_entry_ {
  const char *name;
  void (*fn)(void);
} test_entry_;

#define TEST_ENTRY_(name) {#name, test_##name},
#define TEST_LIST(...) static const test_entry_ test_list_[] = {__VA_ARGS__};

static inline int test_run_all_(const test_entry_ *tests, size_t count, int argc,
                                char **argv) {
  if (argc > 1) {
    for (size_t i = 0; i < count; i++)
      if (strcmp(tests[i].name, argv[1]) == 0) {
        tests[i].fn();
        return 0;
      }
    fprintf(stderr, "no test named %s\n", argv[1]);
    return 2;
  }
  int failed = 0, skipped = 0;
  for (size_t i = 0; i < count; i++) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
      tests[i].fn();
      fflush(stdout);
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    const char *verdict = "ok";
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
      verdict = "skip";
      skipped++;
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      verdict = "FAIL";
      failed++;
    }
    printf("%-4s %s\n", verdict, tests[i].name);
  }
  printf("%zu tests, %d failed, %d skipped\n", count, failed, skipped);
  return failed ? 1 : 0;
}

#define X(name) TEST_ENTRY_(name)
#define TEST_MAIN()                                                                        \
  int main(int argc, char **argv) {                                                        \
    return test_run_all_(test_list_, sizeof test_list_ / sizeof test_list_[0], argc, argv); \
  }

#endif /* NBCUDA_TEST_H */
