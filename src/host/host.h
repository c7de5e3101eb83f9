/* host.h — the internal contract between the files of src/host/: the layout of the opaque
 * handles of nbcuda.h and the nbc__ functions one host file offers the others.
 *
 * Object ownership:
 *   - devices and their primary-context records are created once, on first use, and live for
 *     the process (device.c); a device reset only drops the retained CUcontext;
 *   - streams, events, modules are heap wrappers around driver handles, owned by the caller;
 *   - functions belong to their module and are freed with it.
 *
 * Concurrency: context activation is serialised by one process-wide recursive lock
 * (context.c); the per-thread attached context (require_context) and the per-thread cache of
 * the last verified current context are thread-local. Everything else calls the driver, which
 * is thread-safe, directly.
 */
#ifndef NBC_HOST_H
#define NBC_HOST_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "base/toolkit.h"
#include "driver/driver_api.h"

struct nbc_device {
  int id;          /* ordinal */
  CUdevice handle; /* cuDeviceGet(ordinal) */
  int cc_major;
  int cc_minor;
  char name[256];
  char uuid[48]; /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */
  nbc_context_t *primary; /* the record of the primary context (always allocated) */
  /* context.c, under its lock: live NBC_MANAGED_OUTLIVE_RESET allocations, which hold the
   * primary context (one retain, of held) until the last is freed. */
  unsigned managed_holds;
  CUcontext held;
};

struct nbc_module; /* module.c */

/* kept.c: driver handles of one kind that died unused, kept by their context for the next
 * create, under the context's kept_busy; those of another lifetime than the context's are
 * stale (a release destroyed them). */
#define NBC__KEPT_MAX 16u
typedef struct nbc__kept {
  unsigned count, lifetime;
  void *handles[NBC__KEPT_MAX];
} nbc__kept_t;
/* reuse.c: a context's freed device blocks kept for reuse (a zeroed one is empty). */
#define NBC__REUSE_MAX 16u
typedef struct nbc__reuse_block {
  CUdeviceptr ptr;
  size_t bytes;
  unsigned number;   /* the context's kept_frees when it was kept */
  unsigned launches; /* the context's launches then */
} nbc__reuse_block_t;
typedef struct nbc__reuse {
  unsigned count, lifetime; /* blocks of another lifetime than the context's are gone */
  size_t bytes;             /* the blocks' total */
  nbc__reuse_block_t blocks[NBC__REUSE_MAX]; /* oldest first */
} nbc__reuse_t;
#define NBC__IDLE_STREAMS 8u
#define NBC__IDLE_EVENTS 16u

struct nbc_context {
  nbc_device_t *device;
  _Atomic(CUcontext) handle; /* retained primary context, NULL until retained / after reset */
  pthread_mutex_t lock;      /* guards modules */
  struct nbc_module *modules; /* loaded into this context, unloaded by nbc_context_reset */
  atomic_uint lifetime;       /* bumped each time the primary context is released (reset) */
  /* deferred.c, under its lock: the nesting depth of deferred-cleanup scopes and the frees
   * queued meanwhile (newest first). */
  unsigned defer_depth;
  struct nbc__deferred *deferred;
  /* staging.c: a page-locked buffer for copies into pageable memory, used by one copy at a
   * time (staging_busy, spares.c's spin lock, tried), freed by a reset; staging_failed once it
   * could not be allocated. */
  atomic_int staging_busy;
  void *staging;
  size_t staging_bytes;
  int staging_failed;
  /* kept.c, under kept_busy: streams nbc_stream_destroy found idle and events
   * nbc_event_destroy found complete ([1]: timing, [0]: not), for the next create. */
  atomic_int kept_busy;
  nbc__kept_t kept_streams, kept_events[2];
  /* reuse.c, under reuse_busy: device blocks freed and kept for the next allocation of their
   * size. kept_frees numbers the blocks kept (bumped under the lock); synced_frees is the
   * number a context-wide synchronization nbcuda made read before it began, once it has
   * completed: blocks numbered up to it are known to be no longer in use. */
  atomic_int reuse_busy;
  nbc__reuse_t reuse;
  atomic_uint kept_frees, synced_frees;
  /* launch.c: a count of the kernels launched in the context, bumped without a read-modify-
   * write (concurrent launches may count once): reuse.c only asks whether it changed. */
  unsigned launches;
};

/* Counts a kernel launched in context (see launches). */
static inline void nbc__count_launch(nbc_context_t *context) {
  __atomic_store_n(&context->launches, __atomic_load_n(&context->launches, __ATOMIC_RELAXED) + 1,
                   __ATOMIC_RELAXED);
}

/* Streams and events remember the context they were made in and its lifetime then: once that
 * context was reset, the driver has destroyed them with it and their handles point at freed
 * driver memory (the real driver may crash on them), so nbcuda no longer passes them on. */
struct nbc_stream {
  CUstream handle;
  nbc_stream_kind_t kind;
  nbc_context_t *context; /* NULL for the default and external streams */
  unsigned lifetime;
};

struct nbc_event {
  CUevent handle;
  int timing;
  int recorded; /* cuEventRecord succeeded on it since nbc_event_create */
  nbc_context_t *context;
  unsigned lifetime;
};

/* context.c: NBC_MANAGED_OUTLIVE_RESET memory of device's primary context holds it (a
 * retain while any lives); nbc__context_unhold ends one hold, releasing the retain with the
 * last, and nbc__context_held gives the held driver context (NULL when none). */
nbc_status_t nbc__context_hold(nbc_device_t *device);
void nbc__context_unhold(nbc_device_t *device);
CUcontext nbc__context_held(nbc_device_t *device);

/* Whether the object made in context during lifetime was destroyed by a reset since. */
static inline int nbc__outlived(const nbc_context_t *context, unsigned lifetime) {
  return context && atomic_load_explicit(&context->lifetime, memory_order_relaxed) != lifetime;
}
#define NBC__STREAM_GONE(s) ((s) && __builtin_expect(nbc__outlived((s)->context, (s)->lifetime), 0))
#define NBC__EVENT_GONE(e) __builtin_expect(nbc__outlived((e)->context, (e)->lifetime), 0)

struct nbc_function {
  CUfunction handle;
  struct nbc_module *module;
  struct nbc_function *next;
  char name[];
};

struct nbc_module {
  CUmodule handle; /* NULL once its context was reset (the driver unloaded it) */
  nbc_context_t *context;
  struct nbc_module *prev, *next; /* the context's list */
  nbc_function_t *functions;
};

/* device.c ---------------------------------------------------------------------------- */
/* Enumerates the devices once (after the driver is initialised). */
nbc_status_t nbc__devices(nbc_device_t **pdevices, int *pcount);
/* The device whose CUdevice is handle, or NULL. */
nbc_device_t *nbc__device_from_handle(CUdevice handle);

/* context.c --------------------------------------------------------------------------- */
/* nbc_current_context(-1) with a per-thread fast path: the context nbcuda operates in. */
nbc_status_t nbc__context_ensure(nbc_context_t **pcontext);
/* For calls that do not take a context (memcpy on a pointer, launch): when result is
 * CUDA_ERROR_INVALID_CONTEXT and this thread has no current context, creates one as
 * nbc_current_context(-1) does and returns 1 (retry the call); else 0. */
int nbc__context_retry(CUresult result);
/* Retains the device's primary context if needed (under the activation lock). */
nbc_status_t nbc__context_primary(nbc_device_t *device, nbc_context_t **pcontext);
/* Makes context current for a moment: *ppushed says whether it was pushed and must be popped
 * by nbc__context_leave. */
nbc_status_t nbc__context_enter(nbc_context_t *context, int *ppushed);
void nbc__context_leave(int pushed);
/* The error for a stream or event whose context was reset since it was made ("Call to <call>
 * results in CUDA_ERROR_CONTEXT_IS_DESTROYED"), without calling the driver. */
nbc_status_t nbc__outlived_fail(const char *call, const char *what);

/* spares.c ---------------------------------------------------------------------------- */
/* A spin lock (an atomic_int, 0 when free) for sections of a few pointer moves that call
 * nothing; a waiter that spins long yields, so a preempted holder is not starved. */
static inline void nbc__spin_lock(atomic_int *busy) {
  unsigned spins = 0;
  while (atomic_exchange_explicit(busy, 1, memory_order_acquire))
    while (atomic_load_explicit(busy, memory_order_relaxed))
      if (++spins % 64 == 0) sched_yield();
}

static inline void nbc__spin_unlock(atomic_int *busy) {
  atomic_store_explicit(busy, 0, memory_order_release);
}

/* Dead records of one kind kept for reuse (a zeroed static is empty). */
#define NBC__SPARES_MAX 64u
typedef struct nbc__spares {
  atomic_int busy;
  void *head;
  unsigned count;
} nbc__spares_t;
/* A spare, or new memory of size bytes: uninitialised; NULL when out of host memory. */
void *nbc__spares_take(nbc__spares_t *spares, size_t size);
/* Keeps object (made by take, of that size) as a spare, or frees it; NULL does nothing. */
void nbc__spares_give(nbc__spares_t *spares, void *object);
/* The same without the list's own lock, for a list guarded by its owner's (ptrtable.c): a
 * spare or NULL; push keeps object (1) or, with NBC__SPARES_MAX kept, leaves it to the
 * caller to free (0). */
void *nbc__spares_pop(nbc__spares_t *spares);
int nbc__spares_push(nbc__spares_t *spares, void *object);

/* ptrtable.c -------------------------------------------------------------------------- */
/* What nbcuda remembers of an address it handed out: its context and that context's lifetime
 * when it was made. Records are either the table's own (add / take: it keeps a few spares, so
 * the allocation paths make no malloc) or the caller's (insert / remove: a record embedded in
 * a larger object); one table uses one kind. */
typedef struct nbc__ptr_record {
  uintptr_t address;
  int tag; /* with address, the key: the kind of record (hostmem.c: registered or allocated) */
  unsigned lifetime; /* context->lifetime when made */
  nbc_context_t *context;
  size_t bytes;
  unsigned flags; /* the owner's (memory.c: NBC__MEM_FREE_AT_ONCE) */
  struct nbc__ptr_record *next; /* the table's chain, or the list detach_context returns */
} nbc__ptr_record_t;

#define NBC__PTRTABLE_BUCKETS 1024u
typedef struct nbc__ptrtable {
  atomic_int busy; /* the table's spin lock (spares.c) */
  nbc__ptr_record_t *buckets[NBC__PTRTABLE_BUCKETS];
  nbc__spares_t spares; /* records taken out, for the next add; under the table's lock */
} nbc__ptrtable_t;

/* Adds a record of the table's own, a copy of *fields (next ignored): 0, or -1 when out of
 * host memory. */
int nbc__ptrtable_add(nbc__ptrtable_t *table, const nbc__ptr_record_t *fields);
/* Takes the record of (address, tag) out of the table, copying it to *pcopy: 1, or 0 when
 * there is none. For records made by add. */
int nbc__ptrtable_take(nbc__ptrtable_t *table, uintptr_t address, int tag,
                       nbc__ptr_record_t *pcopy);

/* Adds record (address, tag and the rest filled in); the table holds it until removed. */
void nbc__ptrtable_insert(nbc__ptrtable_t *table, nbc__ptr_record_t *record);
/* Takes the record of (address, tag) out of the table and returns it (the caller frees it),
 * or NULL when there is none. */
nbc__ptr_record_t *nbc__ptrtable_remove(nbc__ptrtable_t *table, uintptr_t address, int tag);
/* Copies the record of (address, tag) to *pcopy, leaving it in the table: 1, or 0 when there
 * is none. */
int nbc__ptrtable_find(nbc__ptrtable_t *table, uintptr_t address, int tag,
                       nbc__ptr_record_t *pcopy);
/* Finds the record of (address, from) and copies it to *pcopy: 0 when there is none, -1 when
 * its flags include one of `unless` (left as it is), else 1 with the record's tag now `to`. */
int nbc__ptrtable_retag(nbc__ptrtable_t *table, uintptr_t address, int from, int to,
                        unsigned unless, nbc__ptr_record_t *pcopy);
/* Sets flags in the record of (address, tag): 1, or 0 when there is none. */
int nbc__ptrtable_set_flags(nbc__ptrtable_t *table, uintptr_t address, int tag, unsigned flags);
/* Takes every record of context out of the table and returns them as a list linked through
 * next (the caller frees each: free() for records made by add). */
nbc__ptr_record_t *nbc__ptrtable_detach_context(nbc__ptrtable_t *table,
                                                const nbc_context_t *context);

/* memory.c ---------------------------------------------------------------------------- */
/* Performs the context's deferred frees, then frees every allocation nbcuda made in context
 * and still tracks (context must be current). */
void nbc__memory_release_context(nbc_context_t *context);
/* Records a device allocation of context (so a reset frees it and nbc_mem_free finds it),
 * with flags (NBC__MEM_FREE_AT_ONCE: managed memory, never kept for reuse); NBC_NO_MEMORY
 * when the record cannot be made. */
nbc_status_t nbc__memory_track(nbc_devptr_t ptr, size_t bytes, nbc_context_t *context,
                               unsigned flags);
/* Frees a tracked device allocation now, bypassing deferral; an address nbcuda does not
 * track is left alone (its context was reset since). */
nbc_status_t nbc__memory_free_now(nbc_devptr_t ptr);

/* Frees the device blocks context keeps for reuse (reuse.c): whether there were any. */
int nbc__memory_release_kept(nbc_context_t *context);
/* Marks the tracked allocation at base as exported through IPC: its free goes to the driver
 * (another process may map it), never to the blocks kept for reuse. */
void nbc__memory_exported(nbc_devptr_t base);
#define NBC__MEM_FREE_AT_ONCE 1u /* a record flag: freed by the driver, never kept */
#define NBC__MEM_HOLDS_CONTEXT 2u /* a record flag: NBC_MANAGED_OUTLIVE_RESET memory */
#define NBC__MEM_TAG_KEPT 1      /* the tag of a kept block's record (a live one's is 0) */

/* reuse.c ----------------------------------------------------------------------------- */
/* Keeps a freed block of the context's lifetime `lifetime` for reuse: 1, or 0 when it is not
 * kept (too large, reuse disabled, another lifetime): the caller frees it. Keeping it may push
 * the oldest kept blocks out: their addresses go to evicted (*pevicted of them), for the
 * caller to free. */
int nbc__reuse_keep(nbc_context_t *context, unsigned lifetime, CUdeviceptr ptr, size_t bytes,
                    CUdeviceptr evicted[NBC__REUSE_MAX], unsigned *pevicted);
/* Takes a kept block of exactly bytes: 1, with *pptr, and *pidle 1 when its last use is known
 * to be over (a context synchronization begun after its free completed), 0 when the caller must
 * synchronize the context first; else 0. A block that would need the synchronization while
 * kernels were launched in the context since its free is left kept: the synchronization would
 * wait for those too, where the allocation it saves would not wait at all. */
int nbc__reuse_take(nbc_context_t *context, size_t bytes, CUdeviceptr *pptr, int *pidle);
/* Empties the context's kept blocks into out (of the current lifetime), for the caller to
 * free; returns how many. */
unsigned nbc__reuse_drain(nbc_context_t *context, CUdeviceptr out[NBC__REUSE_MAX]);
/* How many blocks the context keeps, and their bytes (those of another lifetime are gone). */
void nbc__reuse_count(nbc_context_t *context, size_t *pblocks, size_t *pbytes);
/* cuCtxSynchronize of the current context, which is context; once it succeeds, the blocks
 * kept before it began count as no longer in use (synced_frees, reuse.c). */
CUresult nbc__context_sync(nbc_context_t *context);

/* kept.c ------------------------------------------------------------------------------ */
/* A handle kept of the context's current lifetime (lifetime), or NULL. */
/* 0 when NBCUDA_REUSE=0 turned reuse off (kept streams, events and device blocks), else 1;
 * read once. */
int nbc__reuse_on(void);
void *nbc__kept_take(nbc_context_t *context, nbc__kept_t *kept, unsigned lifetime);
/* Keeps handle, made in the context's lifetime `lifetime`, when fewer than limit are kept: 1,
 * also when the context was released since (the driver destroyed it); 0: the caller destroys
 * it. */
int nbc__kept_give(nbc_context_t *context, nbc__kept_t *kept, unsigned limit, unsigned lifetime,
                   void *handle);
/* Empties the list into out, returning how many of the current lifetime it held, for the
 * caller to destroy. */
unsigned nbc__kept_drain(nbc_context_t *context, nbc__kept_t *kept,
                         void *out[NBC__KEPT_MAX]);

/* stream.c ---------------------------------------------------------------------------- */
/* Destroys the idle streams context keeps for reuse (context current). */
void nbc__stream_release_idle(nbc_context_t *context);

/* event.c ----------------------------------------------------------------------------- */
/* Destroys the complete events context keeps for reuse (context current). */
void nbc__event_release_idle(nbc_context_t *context);

/* staging.c --------------------------------------------------------------------------- */
/* Frees context's staging buffer (context current), waiting for a copy using it. */
void nbc__staging_release(nbc_context_t *context);

/* hostmem.c --------------------------------------------------------------------------- */
/* Frees page-locked host memory now, bypassing deferral (cuMemFreeHost). */
nbc_status_t nbc__host_free_now(void *ptr);

/* deferred.c -------------------------------------------------------------------------- */
enum nbc__free_kind { NBC__FREE_DEVICE, NBC__FREE_HOST };
/* Open deferred-cleanup scopes over all contexts: frees look their context up only when
 * this is nonzero. */
extern atomic_uint nbc__defer_scopes;
static inline int nbc__defer_any(void) {
  return __builtin_expect(atomic_load_explicit(&nbc__defer_scopes, memory_order_acquire) != 0, 0);
}
/* Queues the free of ptr when a deferred-cleanup scope of context is open: 1 when queued
 * (the caller must not free), 0 when the caller frees now. */
int nbc__defer_free(nbc_context_t *context, enum nbc__free_kind kind, uint64_t ptr);
/* Performs every free queued for context, oldest first; the first failure's status. */
nbc_status_t nbc__defer_flush(nbc_context_t *context);

/* module.c ---------------------------------------------------------------------------- */
/* Unloads every module still loaded in context (context must be current); their handles stay
 * valid as empty wrappers until nbc_module_destroy. */
void nbc__module_release_context(nbc_context_t *context);
/* Loads a ready image (PTX, cubin or fatbin; PTX need not end in a NUL) into the current
 * context, created as by nbc_current_context(-1) if none; max_registers (0: no cap) applies
 * when the driver compiles PTX. The image must be what the driver loads: linking is the
 * kernel layer's (kernel/link.c). */
nbc_status_t nbc__module_load_image(const void *image, size_t size, nbc_image_kind_t kind,
                                    unsigned max_registers, nbc_module_t **pmodule);
/* The kind of an image: kind itself unless NBC_IMAGE_AUTO, else by its first bytes (ELF:
 * cubin, ED 43 4E 7F: LTO-IR, 50 ED 55 BA: fatbin, else PTX); and its name for messages. */
nbc_image_kind_t nbc__image_recognise(const void *data, size_t size, nbc_image_kind_t kind);
const char *nbc__image_kind_name(nbc_image_kind_t kind);

/* runtime.c --------------------------------------------------------------------------- */
/* Where libcudart (runtime.c) was found, loading it if that has not happened yet: NBC_OK with
 * *ppath (lives for the process) and the library's version (-1, -1 when it cannot tell), else
 * its NBC_NO_* status with the places searched in nbc_last_error(). For nbc_library_find. */
nbc_status_t nbc__cudart_find(const char **ppath, int *pmajor, int *pminor);

#endif /* NBC_HOST_H */
