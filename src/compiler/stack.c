/* stack.c — running a compile on a thread with a large stack of its own.
 *
 * Why. The compiler's passes recurse along the program: the parser and every tree walk once
 * per level of nesting (at most the parser's depth limit, 1,000), inference once per level of
 * device-function calls (at most 64) and once per level of tuple type nesting (at most 32),
 * and libNVVM's optimiser along chains of dependent instructions (100,000 `x += a` need more
 * than 8 MB). Their product does not fit the stack of every caller: a Python thread made
 * after threading.stack_size(256 * 1024), musl's 128 KB default, or a sanitizer build whose
 * frames are several times larger. So nbc_compile runs the whole pipeline, libNVVM
 * included, on a thread made for it, whose stack holds the deepest input the limits accept.
 *
 * How. nbc__stack_run creates the thread, runs the function on it and joins it: the caller
 * waits, so the function may use the caller's data freely; the per-thread last error is the
 * caller's to carry back (compile.c does). The stack is virtual memory: only the pages
 * touched are used. Where the address space is capped (RLIMIT_AS) and the large thread
 * cannot be made, a smaller one is tried, then the caller's own stack. A function already
 * running on such a thread runs its nested call directly, so there is one such thread per
 * compile, not one per phase.
 */
#include <pthread.h>
#include <stdbool.h>

#include "compiler/compiler.h"

/* The stack sizes tried, largest first: 512 MB holds the deepest accepted input under
 * AddressSanitizer; 64 MB holds it in an optimised build. */
static const size_t stack_sizes[] = {(size_t)512 << 20, (size_t)64 << 20};

/* Set on a thread nbc__stack_run made, for the time it runs its function. */
static _Thread_local bool on_large_stack;

typedef struct stack_job {
  void (*fn)(void *);
  void *arg;
} stack_job;

static void *stack_thread(void *data) {
  stack_job *job = data;
  on_large_stack = true;
  job->fn(job->arg);
  on_large_stack = false;
  return NULL;
}

static bool run_on_thread(stack_job *job, size_t stack_size) {
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return false;
  pthread_t thread;
  bool started = pthread_attr_setstacksize(&attr, stack_size) == 0 &&
                 pthread_create(&thread, &attr, stack_thread, job) == 0;
  pthread_attr_destroy(&attr);
  if (started) pthread_join(thread, NULL);
  return started;
}

void nbc__stack_run(void (*fn)(void *), void *arg) {
  if (on_large_stack) {
    fn(arg);
    return;
  }
  stack_job job = {fn, arg};
  for (size_t i = 0; i < sizeof stack_sizes / sizeof stack_sizes[0]; i++)
    if (run_on_thread(&job, stack_sizes[i])) return;
  fn(arg);
}
