/* NVTX ranges and marks (nbc_nvtx_*) seen by a tool library, as a profiler would see them:
 * ctest runs this with NVTX_INJECTION64_PATH naming tests/c/nvtx_tool.c's library, which
 * records every call; without it the calls must still pair and refuse as documented. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "nbcuda.h"
#include "test.h"

/* What the tool recorded so far, or NULL when no tool is configured. */
static const char *tool_events(void) {
  const char *path = getenv("NVTX_INJECTION64_PATH");
  if (!path) return NULL;
  void *tool = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (!tool) return NULL;
  const char *(*events)(void);
  void *symbol = dlsym(tool, "nbcuda_nvtx_tool_events");
  memcpy(&events, &symbol, sizeof events); /* POSIX: dlsym's object pointer is the function */
  const char *r = symbol ? events() : NULL;
  dlclose(tool);
  return r;
}

TEST(ranges_reach_the_tool) {
  ASSERT_OK(nbc_nvtx_range_push("outer", 0));
  ASSERT_OK(nbc_nvtx_range_push("inner", 0xFF00FF00u));
  ASSERT_OK(nbc_nvtx_mark("here"));
  ASSERT_OK(nbc_nvtx_range_pop());
  ASSERT_OK(nbc_nvtx_range_pop());
  if (!getenv("NVTX_INJECTION64_PATH")) {
    ASSERT_EQ(nbc_nvtx_attached(), 0);
    return;
  }
  ASSERT_EQ(nbc_nvtx_attached(), 1);
  const char *events = tool_events();
  ASSERT(events != NULL);
  ASSERT_STREQ(events, "push outer\npush inner #FF00FF00\nmark here\npop\npop\n");
}

TEST(pop_without_push_is_refused) {
  const char *before = tool_events();
  size_t n = before ? strlen(before) : 0;
  ASSERT_STATUS(nbc_nvtx_range_pop(), NBC_INVALID_ARGUMENT);
  ASSERT_CONTAINS(nbc_last_error(), "no NVTX range is open on this thread");
  const char *after = tool_events();
  ASSERT_EQ(after ? strlen(after) : 0, n); /* the tool's stack is left alone */
  ASSERT_STATUS(nbc_nvtx_range_push(NULL, 0), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_nvtx_mark(NULL), NBC_INVALID_ARGUMENT);
}

static void *push_on_a_thread(void *arg) {
  (void)arg;
  return (void *)(intptr_t)nbc_nvtx_range_push("worker", 0);
}

TEST(ranges_are_per_thread) {
  pthread_t t;
  ASSERT_EQ(pthread_create(&t, NULL, push_on_a_thread, NULL), 0);
  void *status;
  ASSERT_EQ(pthread_join(t, &status), 0);
  ASSERT_EQ((int)(intptr_t)status, NBC_OK);
  /* the worker's open range is not this thread's to close */
  ASSERT_STATUS(nbc_nvtx_range_pop(), NBC_INVALID_ARGUMENT);
}

TEST_LIST(X(ranges_reach_the_tool) X(pop_without_push_is_refused) X(ranges_are_per_thread))
TEST_MAIN()
