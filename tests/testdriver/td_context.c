/* td_context.c — contexts of the test driver: one primary context per device
 * (cuDevicePrimaryCtx*), contexts made with cuCtxCreate, and each thread's context stack
 * (push/pop/get/set), with the real driver's answers for the corner cases.
 *
 * Model (checked against a real driver 13000 on an H200, see h200_probe.json):
 *   - Retain returns the same handle every time, without touching the stack; the context
 *     is active while retained. Release below zero is CUDA_ERROR_INVALID_CONTEXT; the last
 *     release frees its resources and makes it inactive.
 *   - Reset frees the resources and makes it inactive but keeps the retain count; using
 *     the context afterwards gives CUDA_ERROR_CONTEXT_IS_DESTROYED until the next Retain.
 *   - cuCtxCreate pushes the new context; cuCtxDestroy frees its resources and pops it if
 *     it is current to the caller; destroying it again gives CONTEXT_IS_DESTROYED;
 *     cuCtxDestroy of a primary context gives CUDA_ERROR_INVALID_CONTEXT.
 *   - Pop on an empty stack and cuCtxGetDevice without a context give
 *     CUDA_ERROR_INVALID_CONTEXT; cuCtxGetCurrent with an empty stack gives NULL.
 * Created contexts are never freed before unload (only marked destroyed), so a stale
 * handle on another thread's stack is still recognised instead of read after free.
 */
#include <stdlib.h>
#include <string.h>

#include "td.h"

#define STACK_MAX 1024

static _Thread_local struct CUctx_st *stack[STACK_MAX];
static _Thread_local int depth;
static struct CUctx_st *created; /* every context from cuCtxCreate, destroyed or not */

int td__stack_depth(void) {
  return depth;
}

int td__live_contexts(void) {
  int n = 0;
  for (struct CUctx_st *c = created; c; c = c->next)
    n += !c->destroyed;
  return n;
}

static int is_primary(struct CUctx_st *ctx) {
  for (int d = 0; d < TD_MAX_DEVICES; d++)
    if (ctx == &td__devices[d].primary) return 1;
  return 0;
}

static int is_known(struct CUctx_st *ctx) {
  if (is_primary(ctx)) return 1;
  for (struct CUctx_st *c = created; c; c = c->next)
    if (c == ctx) return 1;
  return 0;
}

CUresult td__ctx_check(struct CUctx_st *ctx) {
  if (!ctx || !is_known(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
  if (ctx->destroyed) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  if (ctx->primary && !td__devices[ctx->device].primary_active)
    return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  return CUDA_SUCCESS;
}

CUresult td__current(struct CUctx_st **out) {
  *out = NULL;
  if (depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
  CUresult r = td__ctx_check(stack[depth - 1]);
  if (r == CUDA_SUCCESS) *out = stack[depth - 1];
  return r;
}

void td__ctx_release_resources(struct CUctx_st *ctx) {
  td__modules_release(ctx);
  td__streams_release(ctx);
  td__mem_release(ctx);
  td__hostmem_release(ctx);
  td__ipc_release(ctx);
  ctx->npeers = 0;
  /* Other contexts' peer links to this one are dropped too. */
  for (int d = 0; d < TD_MAX_DEVICES; d++) {
    struct CUctx_st *p = &td__devices[d].primary;
    for (int i = 0; i < p->npeers; i++)
      if (p->peers[i] == ctx) p->peers[i--] = p->peers[--p->npeers];
  }
  for (struct CUctx_st *c = created; c; c = c->next)
    for (int i = 0; i < c->npeers; i++)
      if (c->peers[i] == ctx) c->peers[i--] = c->peers[--c->npeers];
}

void td__contexts_free_all(void) {
  while (created) {
    struct CUctx_st *c = created;
    created = c->next;
    if (!c->destroyed) td__ctx_release_resources(c);
    free(c);
  }
}

/* ---- primary contexts ----------------------------------------------------------------- */

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev) {
  TD_ENTER("cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain");
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  if (!td__device_valid(dev)) return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&td__lock);
  td_device *d = &td__devices[dev];
  d->primary_refcount++;
  d->primary_active = 1;
  *pctx = &d->primary;
  pthread_mutex_unlock(&td__lock);
  return CUDA_SUCCESS;
}

static CUresult primary_release(CUdevice dev) {
  if (!td__device_valid(dev)) return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&td__lock);
  td_device *d = &td__devices[dev];
  CUresult r = CUDA_SUCCESS;
  if (d->primary_refcount == 0) {
    r = CUDA_ERROR_INVALID_CONTEXT;
  } else if (--d->primary_refcount == 0) {
    td__ctx_release_resources(&d->primary);
    d->primary_active = 0;
  }
  pthread_mutex_unlock(&td__lock);
  return r;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev) {
  TD_ENTER("cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxRelease");
  return primary_release(dev);
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  TD_ENTER("cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxRelease_v2");
  return primary_release(dev);
}

static CUresult primary_reset(CUdevice dev) {
  if (!td__device_valid(dev)) return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&td__lock);
  td_device *d = &td__devices[dev];
  td__ctx_release_resources(&d->primary);
  d->primary_active = 0;
  d->reset_count++;
  pthread_mutex_unlock(&td__lock);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev) {
  TD_ENTER("cuDevicePrimaryCtxReset", "cuDevicePrimaryCtxReset");
  return primary_reset(dev);
}

CUresult CUDAAPI cuDevicePrimaryCtxReset_v2(CUdevice dev) {
  TD_ENTER("cuDevicePrimaryCtxReset", "cuDevicePrimaryCtxReset_v2");
  return primary_reset(dev);
}

CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active) {
  TD_ENTER("cuDevicePrimaryCtxGetState", "cuDevicePrimaryCtxGetState");
  if (!flags || !active) return CUDA_ERROR_INVALID_VALUE;
  if (!td__device_valid(dev)) return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&td__lock);
  *flags = td__devices[dev].primary.flags;
  *active = td__devices[dev].primary_active;
  pthread_mutex_unlock(&td__lock);
  return CUDA_SUCCESS;
}

/* ---- created contexts ----------------------------------------------------------------- */

static CUresult ctx_create(CUcontext *pctx, unsigned int flags, CUdevice dev) {
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  /* Scheduling, map-host, local-mem-resize, coredump and sync-memops flags. */
  if (flags & ~0xffu) return CUDA_ERROR_INVALID_VALUE;
  if (!td__device_valid(dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (depth == STACK_MAX) return CUDA_ERROR_OUT_OF_MEMORY;
  struct CUctx_st *c = calloc(1, sizeof *c);
  if (!c) return CUDA_ERROR_OUT_OF_MEMORY;
  c->device = dev;
  c->flags = flags;
  pthread_mutex_lock(&td__lock);
  c->next = created;
  created = c;
  pthread_mutex_unlock(&td__lock);
  stack[depth++] = c;
  *pctx = c;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev) {
  TD_ENTER("cuCtxCreate", "cuCtxCreate_v2");
  return ctx_create(pctx, flags, dev);
}

CUresult CUDAAPI cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray,
                                int numParams, unsigned int flags, CUdevice dev) {
  TD_ENTER("cuCtxCreate", "cuCtxCreate_v3");
  if (numParams < 0 || (numParams > 0 && !paramsArray)) return CUDA_ERROR_INVALID_VALUE;
  if (numParams > 0) return CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;
  return ctx_create(pctx, flags, dev);
}

CUresult CUDAAPI cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
                                unsigned int flags, CUdevice dev) {
  TD_ENTER("cuCtxCreate", "cuCtxCreate_v4");
  /* Execution affinity and CIG need hardware partitioning; the fixture has none. */
  if (ctxCreateParams &&
      (ctxCreateParams->numExecAffinityParams > 0 || ctxCreateParams->cigParams))
    return CUDA_ERROR_NOT_SUPPORTED;
  return ctx_create(pctx, flags, dev);
}

CUresult CUDAAPI cuCtxDestroy_v2(CUcontext ctx) {
  TD_ENTER("cuCtxDestroy", "cuCtxDestroy_v2");
  if (!ctx) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&td__lock);
  CUresult r = CUDA_SUCCESS;
  if (!is_known(ctx) || ctx->primary) {
    r = CUDA_ERROR_INVALID_CONTEXT;
  } else if (ctx->destroyed) {
    r = CUDA_ERROR_CONTEXT_IS_DESTROYED;
  } else {
    td__ctx_release_resources(ctx);
    ctx->destroyed = 1;
  }
  pthread_mutex_unlock(&td__lock);
  if (r == CUDA_SUCCESS && depth > 0 && stack[depth - 1] == ctx) depth--;
  return r;
}

/* ---- the per-thread stack ------------------------------------------------------------- */

CUresult CUDAAPI cuCtxPushCurrent_v2(CUcontext ctx) {
  TD_ENTER("cuCtxPushCurrent", "cuCtxPushCurrent_v2");
  if (!ctx) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&td__lock);
  CUresult r = CUDA_SUCCESS;
  if (!is_known(ctx))
    r = CUDA_ERROR_INVALID_CONTEXT;
  else if (ctx->destroyed)
    r = CUDA_ERROR_CONTEXT_IS_DESTROYED;
  pthread_mutex_unlock(&td__lock);
  if (r != CUDA_SUCCESS) return r;
  if (depth == STACK_MAX) return CUDA_ERROR_OUT_OF_MEMORY;
  stack[depth++] = ctx;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPopCurrent_v2(CUcontext *pctx) {
  TD_ENTER("cuCtxPopCurrent", "cuCtxPopCurrent_v2");
  if (depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
  struct CUctx_st *top = stack[--depth];
  if (pctx) *pctx = top;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx) {
  TD_ENTER("cuCtxGetCurrent", "cuCtxGetCurrent");
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  *pctx = depth ? stack[depth - 1] : NULL;
  return CUDA_SUCCESS;
}

/* Replaces the top of the stack (pushes onto an empty one); NULL unbinds the top. */
CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) {
  TD_ENTER("cuCtxSetCurrent", "cuCtxSetCurrent");
  if (!ctx) {
    if (depth > 0) depth--;
    return CUDA_SUCCESS;
  }
  pthread_mutex_lock(&td__lock);
  CUresult r = CUDA_SUCCESS;
  if (!is_known(ctx))
    r = CUDA_ERROR_INVALID_CONTEXT;
  else if (ctx->destroyed)
    r = CUDA_ERROR_CONTEXT_IS_DESTROYED;
  pthread_mutex_unlock(&td__lock);
  if (r != CUDA_SUCCESS) return r;
  if (depth == 0) depth = 1;
  stack[depth - 1] = ctx;
  return CUDA_SUCCESS;
}

/* ctx NULL means the current context (the _v2 form; v1 always uses the current one). */
static CUresult ctx_get_device(CUdevice *device, CUcontext ctx) {
  if (!device) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&td__lock);
  CUresult r = ctx ? td__ctx_check(ctx) : td__current(&ctx);
  if (r == CUDA_SUCCESS) *device = ctx->device;
  pthread_mutex_unlock(&td__lock);
  return r;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice *device) {
  TD_ENTER("cuCtxGetDevice", "cuCtxGetDevice");
  return ctx_get_device(device, NULL);
}

CUresult CUDAAPI cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx) {
  TD_ENTER("cuCtxGetDevice", "cuCtxGetDevice_v2");
  return ctx_get_device(device, ctx);
}

static CUresult ctx_synchronize(CUcontext ctx) {
  pthread_mutex_lock(&td__lock);
  CUresult r = ctx ? td__ctx_check(ctx) : td__current(&ctx);
  if (r == CUDA_SUCCESS) r = td__ctx_wait_streams(ctx, 1);
  pthread_mutex_unlock(&td__lock);
  return r;
}

CUresult CUDAAPI cuCtxSynchronize(void) {
  TD_ENTER("cuCtxSynchronize", "cuCtxSynchronize");
  return ctx_synchronize(NULL);
}

CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx) {
  TD_ENTER("cuCtxSynchronize", "cuCtxSynchronize_v2");
  return ctx_synchronize(ctx);
}

CUresult CUDAAPI cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags) {
  TD_ENTER("cuCtxEnablePeerAccess", "cuCtxEnablePeerAccess");
  if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&td__lock);
  struct CUctx_st *cur;
  CUresult r = td__current(&cur);
  if (r == CUDA_SUCCESS) r = td__ctx_check(peerContext);
  if (r == CUDA_SUCCESS) {
    if (peerContext->device == cur->device) {
      r = CUDA_ERROR_INVALID_DEVICE;
    } else {
      for (int i = 0; i < cur->npeers; i++)
        if (cur->peers[i] == peerContext) r = CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
      if (r == CUDA_SUCCESS && cur->npeers == TD_MAX_PEERS) r = CUDA_ERROR_TOO_MANY_PEERS;
      if (r == CUDA_SUCCESS) cur->peers[cur->npeers++] = peerContext;
    }
  }
  pthread_mutex_unlock(&td__lock);
  return r;
}
