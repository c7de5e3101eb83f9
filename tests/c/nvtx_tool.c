/* nvtx_tool.c — a minimal NVTX v3 tool library for the tests, standing in for a profiler's:
 * loaded by the NVTX calls of the process under test through NVTX_INJECTION64_PATH, it
 * records each range push / pop and mark, in memory (nbcuda_nvtx_tool_events(), for a C test
 * that dlopens it too) and, when NBCUDA_NVTX_TOOL_LOG names a file, one line each there
 * ("push NAME", "push NAME #AARRGGBB", "pop", "mark NAME"). */
#define NVTX_NO_IMPL
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvtx3/nvToolsExt.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char events[1 << 16];
static size_t used;

static void record(const char *fmt, const char *text, unsigned argb) {
  char line[512];
  int n = snprintf(line, sizeof line, fmt, text ? text : "", argb);
  if (n < 0) return;
  pthread_mutex_lock(&lock);
  if (used + (size_t)n + 2 < sizeof events) {
    memcpy(events + used, line, (size_t)n);
    used += (size_t)n;
    events[used++] = '\n';
    events[used] = '\0';
  }
  const char *path = getenv("NBCUDA_NVTX_TOOL_LOG");
  FILE *f = path ? fopen(path, "a") : NULL;
  if (f) {
    fprintf(f, "%s\n", line);
    fclose(f);
  }
  pthread_mutex_unlock(&lock);
}

static _Thread_local int depth;

static int push_a(const char *message) {
  record("push %s", message, 0);
  return depth++;
}

static int push_ex(const nvtxEventAttributes_t *a) {
  const char *text = a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : "?";
  if (a->colorType == NVTX_COLOR_ARGB)
    record("push %s #%08X", text, a->color);
  else
    record("push %s", text, 0);
  return depth++;
}

static int pop(void) {
  record("pop", NULL, 0);
  return depth > 0 ? --depth : -1;
}

static void mark_a(const char *message) { record("mark %s", message, 0); }

__attribute__((visibility("default"))) const char *nbcuda_nvtx_tool_events(void) {
  return events;
}

__attribute__((visibility("default"))) int
InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  const NvtxExportTableCallbacks *callbacks =
      (const NvtxExportTableCallbacks *)get_export_table(NVTX_ETID_CALLBACKS);
  NvtxFunctionTable table = NULL;
  unsigned size = 0;
  if (!callbacks || !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) ||
      size <= NVTX_CBID_CORE_RangePop)
    return 0;
  *table[NVTX_CBID_CORE_RangePushA] = (NvtxFunctionPointer)push_a;
  *table[NVTX_CBID_CORE_RangePushEx] = (NvtxFunctionPointer)push_ex;
  *table[NVTX_CBID_CORE_RangePop] = (NvtxFunctionPointer)pop;
  *table[NVTX_CBID_CORE_MarkA] = (NvtxFunctionPointer)mark_a;
  return 1;
}
