/* compile_trace.c — the compiler's phases as the public header shows them to tools:
 * nbc_compile_trace (a compile timed phase by phase, or stopped after one phase to return
 * its printed output) and nbc_compile_phase_name.
 *
 * The CLI (`nbcuda compile --verbose`, `--dump=tokens|ast|types|ir`) sees only
 * include/nbcuda.h; the compiler's own entry (nbc__compile_ex, compiler/compile.c) keeps
 * its internal types. This file, above the compiler, converts between the two; the static
 * assertions keep the public enum and count in step with the compiler's.
 */
#include <string.h>

#include "compiler/compiler.h"
#include "driver/driver_api.h"

_Static_assert(NBC_COMPILE_PHASE_COUNT == NBC__PHASE_COUNT,
               "nbcuda.h's NBC_COMPILE_PHASE_COUNT is the compiler's number of phases");
_Static_assert((int)NBC_DUMP_NONE == (int)NBC__DUMP_NONE &&
                   (int)NBC_DUMP_TOKENS == (int)NBC__DUMP_TOKENS &&
                   (int)NBC_DUMP_AST == (int)NBC__DUMP_AST &&
                   (int)NBC_DUMP_TYPES == (int)NBC__DUMP_TYPES &&
                   (int)NBC_DUMP_IR == (int)NBC__DUMP_IR,
               "nbc_dump_t matches the compiler's nbc__dump");

nbc_status_t nbc_compile_trace(const nbc_source_t *source, const char *name,
                               const char *signature, const nbc_compile_options_t *options,
                               const nbc_resolver_t *resolver, nbc_compile_trace_t *trace,
                               nbc_compile_result_t **presult) {
  if (!trace) return nbc_compile(source, name, signature, options, resolver, presult);
  if ((unsigned)trace->stop_after > (unsigned)NBC_DUMP_IR)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_compile_trace: %d is no nbc_dump_t",
                          (int)trace->stop_after);
  nbc__compile_info info;
  memset(&info, 0, sizeof info);
  info.dump = (nbc__dump)trace->stop_after;
  nbc_status_t st =
      nbc__compile_ex(source, name, signature, options, resolver, &info, presult);
  memcpy(trace->ms, info.ms, sizeof trace->ms);
  return st;
}

const char *nbc_compile_phase_name(int phase) {
  return phase >= 0 && phase < NBC__PHASE_COUNT ? nbc__compile_phase_names[phase] : NULL;
}
