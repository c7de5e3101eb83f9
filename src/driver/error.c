/* error.c — the per-thread last error: a message, the CUresult and the name of the failing
 * driver call.
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
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "driver/driver_api.h"

#define NBC__MESSAGE_SIZE 2048

typedef struct last_error {
  char message[NBC__MESSAGE_SIZE];
  char call[64];
  int curesult;
  size_t detail_at; /* where nbc__driver_failf's explanation starts in message; SIZE_MAX: none */
} last_error;

static _Thread_local last_error tls_error;

const char *nbc_last_error(void) { return tls_error.message; }
int nbc_last_driver_error(void) { return tls_error.curesult; }
const char *nbc_last_driver_call(void) { return tls_error.call; }
const char *nbc_last_driver_detail(void) {
  return tls_error.detail_at < sizeof tls_error.message ? tls_error.message + tls_error.detail_at
                                                         : "";
}

static void set_call(const char *call, CUresult result) {
  tls_error.detail_at = SIZE_MAX;
  tls_error.curesult = result;
  snprintf(tls_error.call, sizeof tls_error.call, "%s", call ? call : "");
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
  set_call(call, result);
  long init_pid = nbc__driver_init_pid();
  if (result == NBC__CUDA_ERROR_NOT_INITIALIZED && init_pid != 0 && init_pid != (long)getpid()) {
    snprintf(tls_error.message, sizeof tls_error.message,
             "CUDA initialized before forking: %s returned %s in pid %ld, forked from pid %ld "
             "after CUDA driver init",
             call, what, (long)getpid(), init_pid);
    return NBC_FORKED;
  }
  int n = snprintf(tls_error.message, sizeof tls_error.message, "%s: %s", call, what);
  tls_error.detail_at = n > 0 ? (size_t)n : 0;
  return nbc__status_from_curesult(result);
}

nbc_status_t nbc__driver_fail(const char *call, CUresult result) {
  return format_failure(call, result);
}

nbc_status_t nbc__driver_failf(const char *call, CUresult result, const char *fmt, ...) {
  nbc_status_t status = format_failure(call, result);
  if (status == NBC_FORKED) return status;
  size_t n = strlen(tls_error.message);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(tls_error.message + n, sizeof tls_error.message - n, fmt, ap);
  va_end(ap);
  return status;
}

static nbc_status_t set_error_v(nbc_status_t status, const char *fmt, va_list ap) {
  set_call("", 0);
  vsnprintf(tls_error.message, sizeof tls_error.message, fmt, ap);
  return status;
}

nbc_status_t nbc__set_error(nbc_status_t status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_error_v(status, fmt, ap);
  va_end(ap);
  return status;
}

nbc_status_t nbc__set_driver_error(nbc_status_t status, const char *call, CUresult result,
                                   const char *message) {
  set_call(call, result);
  snprintf(tls_error.message, sizeof tls_error.message, "%s", message);
  return status;
}

/* The same as nbc__set_error, under the name the compiler's files use (its declaration is
 * theirs to make, e.g. in compiler.h: nbc_status_t nbc__error_set(nbc_status_t, const char *,
 * ...)). */
nbc_status_t nbc__error_set(nbc_status_t status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_error_v(status, fmt, ap);
  va_end(ap);
  return status;
}
