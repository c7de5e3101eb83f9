/* td_state.c — the test driver's process-wide state: the lock, call counting, fault
 * injection, cuInit with its failure modes and fork detection, error names and strings,
 * the introspection API of testdriver.h, and teardown when the library is unloaded.
 *
 * How calls are counted: every entry point calls td__enter(base, symbol), which bumps
 * two counters (one per base name, one per exact exported symbol) kept in small fixed
 * tables, so counting never allocates and never fails.
 *
 * Fault injection: a rule says "the call of `name` whose base-name count reaches `at`
 * returns `result`". Rules come from NBCUDA_TESTDRIVER_FAIL (parsed at the first call of
 * any entry point, counted from the start) and from tdrv_fail (counted from now). A rule
 * fires once, before the entry point does anything, so a failed call has no side effects.
 *
 * Fork: the real driver records its owner at cuInit and refuses every call in a forked
 * child with CUDA_ERROR_NOT_INITIALIZED (cuInit included), while cuDriverGetVersion,
 * cuGetErrorName/String and cuGetProcAddress keep working; this file does the same by
 * comparing getpid() with the pid seen at cuInit. pthread_atfork keeps the lock usable in
 * the child, and the unload destructor leaves a forked child's objects alone because
 * their worker threads only exist in the parent.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "td.h"

pthread_mutex_t td__lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t td__cond = PTHREAD_COND_INITIALIZER;
int td__launch_delay_ms;
int td__refuse_launch;
int td__execute;
int td__host_callbacks_run;

#define MAX_COUNTERS 512
#define MAX_RULES 128
#define NAME_LEN 64

typedef struct counter {
  char name[NAME_LEN];
  int count;
} counter;

typedef struct rule {
  char name[NAME_LEN];
  int at; /* fires on the call that makes the base count equal to this */
  int result;
} rule;

static counter base_counts[MAX_COUNTERS];
static int nbase;
static counter symbol_counts[MAX_COUNTERS];
static int nsymbol;
static rule rules[MAX_RULES];
static int nrules;
static int env_rules_read;
static int initialized;
static pid_t init_pid;

/* Finds or adds the counter of `name` (lock held); NULL when the table is full. */
static counter *counter_for(counter *table, int *n, const char *name) {
  for (int i = 0; i < *n; i++)
    if (strcmp(table[i].name, name) == 0) return &table[i];
  if (*n == MAX_COUNTERS || strlen(name) >= NAME_LEN) return NULL;
  counter *c = &table[(*n)++];
  snprintf(c->name, sizeof c->name, "%s", name);
  c->count = 0;
  return c;
}

static int count_of(counter *table, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(table[i].name, name) == 0) return table[i].count;
  return 0;
}

static void add_rule(const char *name, int at, int result) {
  if (nrules == MAX_RULES || strlen(name) >= NAME_LEN) {
    fprintf(stderr, "nbcuda testdriver: ignoring fault rule for %s (table full)\n", name);
    return;
  }
  rule *r = &rules[nrules++];
  snprintf(r->name, sizeof r->name, "%s", name);
  r->at = at;
  r->result = result;
}

/* NBCUDA_TESTDRIVER_FAIL="name:nth:result,name:nth:result". A malformed item is reported
 * on stderr and skipped: the fixture must not silently run a test without its fault. */
static void read_env_rules(void) {
  const char *env = getenv("NBCUDA_TESTDRIVER_FAIL");
  if (!env) return;
  char *copy = strdup(env);
  if (!copy) return;
  char *save = NULL;
  for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    char name[NAME_LEN];
    int nth = 0, result = 0, used = 0;
    if (sscanf(item, " %63[^:]:%d:%d %n", name, &nth, &result, &used) != 3 ||
        item[used] != '\0' || nth < 1) {
      fprintf(stderr,
              "nbcuda testdriver: bad NBCUDA_TESTDRIVER_FAIL item '%s' "
              "(expected name:nth:curesult)\n",
              item);
      continue;
    }
    add_rule(name, count_of(base_counts, nbase, name) + nth, result);
  }
  free(copy);
}

int td__forked(void) {
  return initialized && getpid() != init_pid;
}

CUresult td__enter(const char *base, const char *symbol, int flags) {
  pthread_mutex_lock(&td__lock);
  if (!env_rules_read) {
    env_rules_read = 1;
    read_env_rules();
  }
  counter *b = counter_for(base_counts, &nbase, base);
  counter *s = counter_for(symbol_counts, &nsymbol, symbol);
  int count = 0;
  if (b) count = ++b->count;
  if (s) s->count++;
  CUresult result = CUDA_SUCCESS;
  for (int i = 0; i < nrules; i++) {
    if (rules[i].at == count && strcmp(rules[i].name, base) == 0) {
      result = (CUresult)rules[i].result;
      rules[i] = rules[--nrules]; /* one-shot */
      break;
    }
  }
  if (result == CUDA_SUCCESS && !(flags & TD_BEFORE_INIT_OK) &&
      (!initialized || getpid() != init_pid))
    result = CUDA_ERROR_NOT_INITIALIZED;
  pthread_mutex_unlock(&td__lock);
  return result;
}

double td__now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

long long td__parse_size(const char *s) {
  if (!s || !*s) return -1;
  errno = 0;
  char *end = NULL;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s || *s == '-') return -1;
  unsigned long long mult = 1;
  if (*end == 'K' || *end == 'k')
    mult = 1ull << 10, end++;
  else if (*end == 'M' || *end == 'm')
    mult = 1ull << 20, end++;
  else if (*end == 'G' || *end == 'g')
    mult = 1ull << 30, end++;
  if (*end == 'i' || *end == 'B') end++;
  if (*end == 'B') end++;
  if (*end != '\0' || v > (unsigned long long)(1ll << 50) / mult) return -1;
  return (long long)(v * mult);
}

/* ---- cuInit, version, error names ----------------------------------------------------- */

CUresult CUDAAPI cuInit(unsigned int flags) {
  /* Counted and fault-injectable like any call, but allowed before initialization. */
  CUresult r = td__enter("cuInit", "cuInit", TD_BEFORE_INIT_OK);
  if (r != CUDA_SUCCESS) return r;
  pthread_mutex_lock(&td__lock);
  if (initialized && getpid() != init_pid) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (flags != 0) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else if (!initialized) {
    const char *mode = getenv("NBCUDA_TESTDRIVER_MODE");
    if (mode && strcmp(mode, "stub") == 0)
      r = CUDA_ERROR_STUB_LIBRARY;
    else if (mode && strcmp(mode, "nodevice") == 0)
      r = CUDA_ERROR_NO_DEVICE;
    else if (mode && strcmp(mode, "initfail") == 0)
      r = CUDA_ERROR_UNKNOWN;
    else if (mode && *mode) {
      fprintf(stderr, "nbcuda testdriver: unknown NBCUDA_TESTDRIVER_MODE '%s'\n", mode);
      r = CUDA_ERROR_UNKNOWN;
    } else {
      td__devices_configure();
      if (td__device_count == 0) {
        r = CUDA_ERROR_NO_DEVICE;
      } else {
        long long delay = td__parse_size(getenv("NBCUDA_TESTDRIVER_LAUNCH_DELAY_MS"));
        if (delay > 0 && delay < 1000000) td__launch_delay_ms = (int)delay;
        const char *refuse = getenv("NBCUDA_TESTDRIVER_REFUSE_LAUNCH");
        if (refuse && strcmp(refuse, "0") != 0 && *refuse) td__refuse_launch = 1;
#ifdef TD_CPU_DRIVER
        td__execute = 1;
#else
        const char *execute = getenv("NBCUDA_TESTDRIVER_EXECUTE");
        td__execute = execute && strcmp(execute, "1") == 0;
#endif
        initialized = 1;
        init_pid = getpid();
      }
    }
  }
  pthread_mutex_unlock(&td__lock);
  return r;
}

CUresult CUDAAPI cuDriverGetVersion(int *driverVersion) {
  CUresult r = td__enter("cuDriverGetVersion", "cuDriverGetVersion", TD_BEFORE_INIT_OK);
  if (r != CUDA_SUCCESS) return r;
  if (!driverVersion) return CUDA_ERROR_INVALID_VALUE;
  *driverVersion = TD_DRIVER_VERSION;
  return CUDA_SUCCESS;
}

static const td_error_entry *error_entry(CUresult error) {
  for (int i = 0; i < td__error_count; i++)
    if (td__errors[i].code == (int)error) return &td__errors[i];
  return NULL;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr) {
  CUresult r = td__enter("cuGetErrorName", "cuGetErrorName", TD_BEFORE_INIT_OK);
  if (r != CUDA_SUCCESS) return r;
  if (!pStr) return CUDA_ERROR_INVALID_VALUE;
  const td_error_entry *e = error_entry(error);
  *pStr = e ? e->name : NULL;
  return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr) {
  CUresult r = td__enter("cuGetErrorString", "cuGetErrorString", TD_BEFORE_INIT_OK);
  if (r != CUDA_SUCCESS) return r;
  if (!pStr) return CUDA_ERROR_INVALID_VALUE;
  const td_error_entry *e = error_entry(error);
  *pStr = e ? e->string : NULL;
  return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- introspection API (exported, declared in testdriver.h) --------------------------- */

#define LOCKED(expr)                                                                           \
  do {                                                                                         \
    pthread_mutex_lock(&td__lock);                                                             \
    expr;                                                                                      \
    pthread_mutex_unlock(&td__lock);                                                           \
  } while (0)

__attribute__((visibility("default"))) int tdrv_call_count(const char *name) {
  int n = 0;
  if (name) LOCKED(n = count_of(base_counts, nbase, name));
  return n;
}

__attribute__((visibility("default"))) int tdrv_variant_count(const char *symbol) {
  int n = 0;
  if (symbol) LOCKED(n = count_of(symbol_counts, nsymbol, symbol));
  return n;
}

__attribute__((visibility("default"))) void tdrv_fail(const char *name, int nth, int curesult) {
  if (!name) return;
  pthread_mutex_lock(&td__lock);
  if (!env_rules_read) {
    env_rules_read = 1;
    read_env_rules();
  }
  if (nth <= 0) {
    for (int i = 0; i < nrules;)
      if (strcmp(rules[i].name, name) == 0)
        rules[i] = rules[--nrules];
      else
        i++;
  } else {
    add_rule(name, count_of(base_counts, nbase, name) + nth, curesult);
  }
  pthread_mutex_unlock(&td__lock);
}

__attribute__((visibility("default"))) void tdrv_set_attribute(int dev, int attr, int value) {
  pthread_mutex_lock(&td__lock);
  td__devices_configure();
  if (dev >= 0 && dev < TD_MAX_DEVICES && attr > 0 && attr < td__attribute_max)
    td__devices[dev].attrs[attr] = value;
  pthread_mutex_unlock(&td__lock);
}

__attribute__((visibility("default"))) void tdrv_set_total_memory(int dev, size_t bytes) {
  pthread_mutex_lock(&td__lock);
  td__devices_configure();
  if (dev >= 0 && dev < TD_MAX_DEVICES) td__devices[dev].total_mem = bytes;
  pthread_mutex_unlock(&td__lock);
}

__attribute__((visibility("default"))) int tdrv_context_stack_depth(void) {
  return td__stack_depth();
}

__attribute__((visibility("default"))) int tdrv_primary_refcount(int dev) {
  int n = -1;
  if (dev >= 0 && dev < TD_MAX_DEVICES) LOCKED(n = td__devices[dev].primary_refcount);
  return n;
}

__attribute__((visibility("default"))) int tdrv_primary_reset_count(int dev) {
  int n = -1;
  if (dev >= 0 && dev < TD_MAX_DEVICES) LOCKED(n = td__devices[dev].reset_count);
  return n;
}

__attribute__((visibility("default"))) int tdrv_live_allocations(void) {
  int n;
  LOCKED(n = td__live_allocations());
  return n;
}

__attribute__((visibility("default"))) int tdrv_live_streams(void) {
  int n;
  LOCKED(n = td__live_streams());
  return n;
}

__attribute__((visibility("default"))) int tdrv_live_events(void) {
  int n;
  LOCKED(n = td__live_events());
  return n;
}

__attribute__((visibility("default"))) int tdrv_live_modules(void) {
  int n;
  LOCKED(n = td__live_modules());
  return n;
}

__attribute__((visibility("default"))) int tdrv_live_contexts(void) {
  int n;
  LOCKED(n = td__live_contexts());
  return n;
}

__attribute__((visibility("default"))) size_t tdrv_allocated_bytes(int dev) {
  size_t n = 0;
  if (dev >= 0 && dev < TD_MAX_DEVICES) LOCKED(n = td__devices[dev].used_mem);
  return n;
}

__attribute__((visibility("default"))) int tdrv_launch_count(void) {
  int n;
  LOCKED(n = td__launch_count());
  return n;
}

__attribute__((visibility("default"))) int tdrv_last_launch(tdrv_launch_info *out) {
  int n = 0;
  if (out) LOCKED(n = td__last_launch(out));
  return n;
}

__attribute__((visibility("default"))) void tdrv_set_launch_delay_ms(int ms) {
  LOCKED(td__launch_delay_ms = ms < 0 ? 0 : ms);
}

__attribute__((visibility("default"))) void tdrv_set_refuse_launch(int refuse) {
  LOCKED(td__refuse_launch = refuse != 0);
}

__attribute__((visibility("default"))) int tdrv_profiler_state(void) {
  int n;
  LOCKED(n = td__profiler_on);
  return n;
}

__attribute__((visibility("default"))) int tdrv_host_callbacks_run(void) {
  int n;
  LOCKED(n = td__host_callbacks_run);
  return n;
}

/* ---- fork and unload ------------------------------------------------------------------ */

static void atfork_prepare(void) {
  pthread_mutex_lock(&td__lock);
}
static void atfork_parent(void) {
  pthread_mutex_unlock(&td__lock);
}
static void atfork_child(void) {
  /* The child has one thread; reinitializing the primitives is the portable way to get
   * a usable lock and condition variable back. */
  pthread_mutex_init(&td__lock, NULL);
  pthread_cond_init(&td__cond, NULL);
}

__attribute__((constructor)) static void td_load(void) {
  pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* Joins every worker thread and frees everything, so ASan and valgrind see a clean exit.
 * In a forked child the workers do not exist: leave the memory to the exiting process. */
__attribute__((destructor)) static void td_unload(void) {
  if (td__forked()) return;
  pthread_mutex_lock(&td__lock);
  for (int d = 0; d < TD_MAX_DEVICES; d++)
    td__ctx_release_resources(&td__devices[d].primary);
  td__contexts_free_all();
  pthread_mutex_unlock(&td__lock);
}
