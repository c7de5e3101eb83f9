/* nvtx.c — NVTX ranges and marks (nbcuda.profiling.range / mark), through NVIDIA's NVTX v3
 * header (third_party/nvtx3, header-only): its first call reads NVTX_INJECTION64_PATH, which a
 * profiler sets to its tool library, loads that library and routes every later call to it;
 * with none set, each call is a test of a null function pointer. Nothing is linked.
 *
 * NVTX keeps the range stack per thread in the tool, and answers "no tracking" when none is
 * attached, so the depth is counted here too: a pop with no open range is refused whether or
 * not a tool listens, instead of unbalancing the tool's stack.
 */
#include "host/host.h"

#include "nvtx3/nvToolsExt.h"

static _Thread_local unsigned depth;

nbc_status_t nbc_nvtx_range_push(const char *name, uint32_t argb) {
  if (!name) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_nvtx_range_push: name is NULL");
  if (argb) {
    nvtxEventAttributes_t attributes = {0};
    attributes.version = NVTX_VERSION;
    attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes.colorType = NVTX_COLOR_ARGB;
    attributes.color = argb;
    attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attributes.message.ascii = name;
    (void)nvtxRangePushEx(&attributes);
  } else {
    (void)nvtxRangePushA(name);
  }
  depth++;
  return NBC_OK;
}

nbc_status_t nbc_nvtx_range_pop(void) {
  if (depth == 0)
    return nbc__set_error(NBC_INVALID_ARGUMENT,
                          "nbc_nvtx_range_pop: no NVTX range is open on this thread");
  depth--;
  (void)nvtxRangePop();
  return NBC_OK;
}

nbc_status_t nbc_nvtx_mark(const char *name) {
  if (!name) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_nvtx_mark: name is NULL");
  nvtxMarkA(name);
  return NBC_OK;
}

int nbc_nvtx_attached(void) {
  return NVTX_VERSIONED_IDENTIFIER(nvtxGlobals).initState == NVTX_INIT_STATE_COMPLETE &&
         NVTX_VERSIONED_IDENTIFIER(nvtxGlobals).nvtxRangePushA_impl_fnptr != 0;
}
