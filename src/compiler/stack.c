/* stack.c — running a compile on a thread with a large stack of its own.
 *
 * Why. The compiler's passes recurse along the program: the parser and every tree walk once
 * per level of nesting (at most the parser's depth limit, 10,000), inference once per level
 * of device-function calls (at most 64) and once per level of tuple type nesting (at most 32),
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
 *
 * The product of the limits (64 nested calls, each from an expression 10,000 deep) is more
 * than any stack holds, so inference asks nbc__stack_half_used before it types a callee
 * inside another function: past half the stack it refuses the call ("calls nested too
 * deeply"), and the other half holds the deepest walk of one function (about 5 MB in an
 * optimised build, 50 MB under AddressSanitizer, at the depth limit).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "compiler/compiler.h"

/* The stack sizes tried, largest first: 512 MB holds the deepest accepted input under
 * AddressSanitizer; 64 MB holds it in an optimised build. */
static const size_t stack_sizes[] = {(size_t)512 << 20, (size_t)64 << 20};

/* Set on a thread nbc__stack_run made, for the time it runs its function: its size and
 * (near) the top of its stack, where the function's frames start. */
static _Thread_local bool on_large_stack;
static _Thread_local size_t large_stack_size;
static _Thread_local uintptr_t large_stack_top;

typedef struct stack_job {
  void (*fn)(void *);
  void *arg;
  size_t size;
} stack_job;

static void *stack_thread(void *data) {
  stack_job *job = data;
  on_large_stack = true;
  large_stack_size = job->size;
  large_stack_top = (uintptr_t)__builtin_frame_address(0);
  job->fn(job->arg);
  on_large_stack = false;
  return NULL;
}

static bool run_on_thread(stack_job *job, size_t stack_size) {
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return false;
  pthread_t thread;
  job->size = stack_size;
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
  stack_job job = {fn, arg, 0};
  for (size_t i = 0; i < sizeof stack_sizes / sizeof stack_sizes[0]; i++)
    if (run_on_thread(&job, stack_sizes[i])) return;
  fn(arg);
}

bool nbc__stack_half_used(void) {
  if (!on_large_stack) return false; /* the caller's stack: its size is not known */
  /* Stacks grow down on every platform the compiler runs on. The frame's own address, not
   * a local's: AddressSanitizer may keep locals in frames of its own off the stack. */
  size_t used = (size_t)(large_stack_top - (uintptr_t)__builtin_frame_address(0));
  return used > large_stack_size / 2;
}
