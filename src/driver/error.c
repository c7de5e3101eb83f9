/* error.c — the per-thread last error: a message, its kind (nbcuda.h's error kinds), the
 * CUresult and the name of the failing driver call.
 *
 * Every fallible nbcuda function returns a status; the explanation lives here, in thread-local
 * storage, so that concurrent threads never see each other's messages and no lock is taken.
 * Successful calls do not touch it (keeping the hot path free of stores); the message is
 * written only when something fails, by nbc__driver_fail for driver calls (formatted as
 * "cuStreamCreate: CUDA_ERROR_INVALID_CONTEXT (201)") and by nbc__set_error otherwise.
 *
 * Fork detection lives here too, because it is a property of a failure: numba checks only when
 * a call returns CUDA_ERROR_NOT_INITIALIZED whether the process is a child forked after cuInit,
 * and then reports "CUDA initialized before forking" instead of the driver error.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver/driver_api.h"

#define NBC__MESSAGE_SIZE 2048

typedef struct last_error {
  char message[NBC__MESSAGE_SIZE];
  char call[64];
  int curesult;
  nbc_error_kind_t kind; /* what kind of failure the message reports (nbcuda.h) */
  size_t detail_at; /* where nbc__driver_failf's explanation starts in message; SIZE_MAX: none */
} last_error;

/* The thread's record is allocated on its first failure and freed when the thread exits;
 * thread-local storage holds only the pointer. Every nbcuda call reads other thread-local
 * state (the current context), and the library is often loaded with dlopen (the Python
 * extension): glibc places a dlopen'ed module's TLS in its small static reserve only when
 * it is small, and only there are TLS reads cheap (a load instead of a call), so a 2 KiB
 * record must not live in TLS itself. */
static _Thread_local last_error *tls_error;
static pthread_key_t error_key;
static pthread_once_t error_key_once = PTHREAD_ONCE_INIT;
static int error_key_made;

/* What a thread reads before its first failure, or when its record could not be allocated. */
static const last_error no_error = {.message = "", .call = "", .detail_at = SIZE_MAX};
static const last_error oom_error = {
    .message = "nbcuda: out of memory while recording an error message",
    .call = "",
    .detail_at = SIZE_MAX};
static _Thread_local int tls_error_oom;

/* At thread exit; a failure in a later thread-exit destructor allocates a new record. */
static void free_error(void *record) {
  if (tls_error == record) tls_error = NULL;
  free(record);
}

static void make_error_key(void) {
  error_key_made = pthread_key_create(&error_key, free_error) == 0;
}

/* The thread's record to write, NULL (nothing to write; readers see oom_error) without memory. */
static last_error *writable_error(void) {
  if (tls_error) return tls_error;
  last_error *e = calloc(1, sizeof *e);
  tls_error_oom = !e;
  if (!e) return NULL;
  pthread_once(&error_key_once, make_error_key);
  if (error_key_made) pthread_setspecific(error_key, e); /* freed at thread exit */
  return tls_error = e;
}

static const last_error *readable_error(void) {
  return tls_error ? tls_error : tls_error_oom ? &oom_error : &no_error;
}

const char *nbc_last_error(void) { return readable_error()->message; }
int nbc_last_driver_error(void) { return readable_error()->curesult; }
const char *nbc_last_driver_call(void) { return readable_error()->call; }
nbc_error_kind_t nbc_last_error_kind(void) { return readable_error()->kind; }

static const char *const kind_names[] = {
#define NBC_ERROR_KIND_NAME_(name, text) "NBC_ERROR_KIND_" #name,
    NBC_ERROR_KIND_MAP(NBC_ERROR_KIND_NAME_)
#undef NBC_ERROR_KIND_NAME_
};

const char *nbc_error_kind_name(nbc_error_kind_t kind) {
  if ((int)kind < 0 || (int)kind >= (int)NBC_ERROR_KIND_COUNT_) return "NBC_ERROR_KIND_UNKNOWN";
  return kind_names[kind];
}
const char *nbc_last_driver_detail(void) {
  const last_error *e = readable_error();
  return e->detail_at < sizeof e->message ? e->message + e->detail_at : "";
}

static void set_call(last_error *e, const char *call, CUresult result) {
  e->detail_at = SIZE_MAX;
  e->kind = NBC_ERROR_KIND_NONE;
  e->curesult = result;
  snprintf(e->call, sizeof e->call, "%s", call ? call : "");
}

/* "CUDA_ERROR_INVALID_CONTEXT (201)", or "CUresult 12345" for a code cuda.h does not know. */
static void format_result(char *buf, size_t size, CUresult result) {
  const char *name = nbc_cuda_error_name(result);
  if (name)
    snprintf(buf, size, "%s (%d)", name, result);
  else
    snprintf(buf, size, "CUresult %d", result);
}

/* Writes "call: NAME (n)" (or the fork message) and returns the mapped status. */
static nbc_status_t format_failure(const char *call, CUresult result) {
  char what[96];
  format_result(what, sizeof what, result);
  long init_pid = nbc__driver_init_pid();
  int forked =
      result == NBC__CUDA_ERROR_NOT_INITIALIZED && init_pid != 0 && init_pid != (long)getpid();
  last_error *e = writable_error();
  if (!e) return forked ? NBC_FORKED : nbc__status_from_curesult(result);
  set_call(e, call, result);
  if (forked) {
    snprintf(e->message, sizeof e->message,
             "CUDA initialized before forking: %s returned %s in pid %ld, forked from pid %ld "
             "after CUDA driver init",
             call, what, (long)getpid(), init_pid);
    return NBC_FORKED;
  }
  int n = snprintf(e->message, sizeof e->message, "%s: %s", call, what);
  e->detail_at = n > 0 ? (size_t)n : 0;
  return nbc__status_from_curesult(result);
}

nbc_status_t nbc__driver_fail(const char *call, CUresult result) {
  return format_failure(call, result);
}

nbc_status_t nbc__driver_failf(const char *call, CUresult result, const char *fmt, ...) {
  nbc_status_t status = format_failure(call, result);
  last_error *e = tls_error;
  if (status == NBC_FORKED || !e) return status;
  size_t n = strlen(e->message);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->message + n, sizeof e->message - n, fmt, ap);
  va_end(ap);
  return status;
}

static nbc_status_t set_error_v(nbc_status_t status, nbc_error_kind_t kind, const char *fmt,
                                va_list ap) {
  last_error *e = writable_error();
  if (!e) return status;
  set_call(e, "", 0);
  e->kind = kind;
  vsnprintf(e->message, sizeof e->message, fmt, ap);
  return status;
}

nbc_status_t nbc__set_error(nbc_status_t status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_error_v(status, NBC_ERROR_KIND_NONE, fmt, ap);
  va_end(ap);
  return status;
}

nbc_status_t nbc__set_error_kind(nbc_status_t status, nbc_error_kind_t kind, const char *fmt,
                                 ...) {
  va_list ap;
  va_start(ap, fmt);
  set_error_v(status, kind, fmt, ap);
  va_end(ap);
  return status;
}

nbc_status_t nbc__set_driver_error(nbc_status_t status, const char *call, CUresult result,
                                   const char *message) {
  last_error *e = writable_error();
  if (!e) return status;
  set_call(e, call, result);
  snprintf(e->message, sizeof e->message, "%s", message);
  return status;
}

/* The same as nbc__set_error, under the name the compiler's files use (its declaration is
 * theirs to make, e.g. in compiler.h: nbc_status_t nbc__error_set(nbc_status_t, const char *,
 * ...)). */
nbc_status_t nbc__error_set(nbc_status_t status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_error_v(status, NBC_ERROR_KIND_NONE, fmt, ap);
  va_end(ap);
  return status;
}
