/* context.c — Context, current_context, require_context, synchronize, close, plus the small
 * context-manager type (Scope) that profiling() (profiling.c) and Stream.auto_synchronize()
 * return.
 *
 * Contexts are the devices' primary contexts, owned by the C library for the life of the
 * process; the Context object of each is cached per device ordinal so that
 * current_context() returns the same object every time. The context-stack rules (lazy
 * creation pushes device 0's context, a foreign primary context is adopted, a non-primary
 * one is refused, require_context forbids switching) are all the C library's; this file
 * converts arguments and results.
 *
 * Factories whose objects keep their Context check the current context once (a
 * cuCtxGetCurrent) for both the Context object and the creation: event(), stream() and the
 * device arrays through C calls that say the context they made the object in
 * (nbc_event_context, nbc_stream_context, nbc_mem_alloc_current), default_stream() and the
 * other streams by making the object inside nbc_require_context (nbc__py_context_call).
 *
 * require_context(fn) returns a wrapper whose call runs fn inside nbc_require_context. The
 * GIL stays held across that call because fn is Python code; only C calls that block
 * (synchronize, close) release it.
 *
 * Scope objects call a C function on __enter__ and another on __exit__, always, whether or
 * not the body raised: numba-cuda's generator-based profiling() and auto_synchronize()
 * skip their cleanup when the body raises, which leaves the profiler running or work in
 * flight; ours do not.
 */
#include "nbcuda_py.h"

typedef struct {
  PyObject_HEAD
  nbc_context_t *ctx;
  PyObject *device;
  /* get_memory_info's last answer, returned again while the driver's numbers are the same
   * (a MemoryInfo is an immutable tuple of ints): polling builds no objects. */
  PyObject *memory_info;
  size_t info_free, info_total;
  /* The EMM plugin instance of set_memory_manager() serving this context (emm.c), made at
   * its first device allocation; NULL: nbcuda's own allocation. */
  PyObject *manager;
  /* Context.memory_manager while no plugin is set (emm.c's NumbaCUDAMemoryManager) and
   * Context.deallocations (deallocs.c), made on first use. */
  PyObject *own_manager, *deallocations;
} ContextObject;

PyObject **nbc__py_context_manager_slot(PyObject *context) {
  return &((ContextObject *)context)->manager;
}

nbc_context_t *nbc__py_context_handle(PyObject *context) {
  return ((ContextObject *)context)->ctx;
}

/* ------------------------------------------------------------------ Context ----------- */

static int context_traverse(ContextObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->device);
  Py_VISIT(self->memory_info);
  Py_VISIT(self->manager);
  Py_VISIT(self->own_manager);
  Py_VISIT(self->deallocations);
  return 0;
}

static void context_dealloc(ContextObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  Py_CLEAR(self->device);
  Py_CLEAR(self->memory_info);
  Py_CLEAR(self->manager);
  Py_CLEAR(self->own_manager);
  Py_CLEAR(self->deallocations);
  tp->tp_free(self);
  Py_DECREF(tp);
}

PyObject *nbc__py_context_object(nbc__py_state *st, nbc_context_t *ctx) {
  nbc_device_t *dev = nbc_context_device(ctx);
  int id = dev ? nbc_device_id(dev) : 0;
  if (!st->contexts && !(st->contexts = PyList_New(0))) return NULL;
  while (PyList_GET_SIZE(st->contexts) <= id)
    if (PyList_Append(st->contexts, Py_None) < 0) return NULL;
  PyObject *o = PyList_GET_ITEM(st->contexts, id);
  if (o != Py_None && ((ContextObject *)o)->ctx == ctx) return Py_NewRef(o);
  PyObject *device = dev ? nbc__py_device_object(st, dev) : Py_NewRef(Py_None);
  if (!device) return NULL;
  ContextObject *c = PyObject_GC_New(ContextObject, st->ContextType);
  if (!c) {
    Py_DECREF(device);
    return NULL;
  }
  c->ctx = ctx;
  c->device = device;
  c->memory_info = NULL;
  c->info_free = c->info_total = 0;
  c->manager = c->own_manager = c->deallocations = NULL;
  PyObject_GC_Track(c);
  PyList_SetItem(st->contexts, id, Py_NewRef(c));
  return (PyObject *)c;
}

PyObject *nbc__py_current_context(nbc__py_state *st) {
  nbc_context_t *ctx = NULL;
  nbc_status_t s = nbc_current_context(-1, &ctx);
  if (s != NBC_OK) return nbc__py_raise(st, s);
  return nbc__py_context_object(st, ctx);
}

typedef struct {
  nbc_context_fn fn;
  void *arg;
  nbc_context_t *ctx;
} context_call;

static nbc_status_t context_call_trampoline(void *arg) {
  context_call *c = arg;
  nbc_status_t s = nbc_current_context(-1, &c->ctx); /* the attached one: no driver call */
  return s != NBC_OK ? s : c->fn(c->arg);
}

PyObject *nbc__py_context_call(nbc__py_state *st, nbc_context_fn fn, void *arg) {
  context_call c = {fn, arg, NULL};
  nbc_status_t s = nbc_require_context(context_call_trampoline, &c);
  if (s != NBC_OK) return nbc__py_raise(st, s);
  return nbc__py_context_object(st, c.ctx);
}

/* The MemoryInfo is built as tuple.__new__ would build it (tp_alloc, then the items):
 * calling the class runs namedtuple's Python __new__, which costs more than the driver. */
static PyObject *context_get_memory_info(ContextObject *self, PyObject *unused) {
  (void)unused;
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  if (self->manager) return PyObject_CallMethod(self->manager, "get_memory_info", NULL);
  size_t free_bytes = 0, total = 0;
  nbc_status_t s = nbc_context_get_memory_info(self->ctx, &free_bytes, &total);
  if (s != NBC_OK) return nbc__py_raise(st, s);
  if (self->memory_info && self->info_free == free_bytes && self->info_total == total)
    return Py_NewRef(self->memory_info);
  PyObject *cls = st->emm.memory_info; /* emm.c's, made at import */
  PyObject *f = PyLong_FromSize_t(free_bytes), *t = f ? PyLong_FromSize_t(total) : NULL;
  PyObject *info = t ? ((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, 2) : NULL;
  if (!info) {
    Py_XDECREF(f);
    Py_XDECREF(t);
    return NULL;
  }
  PyTuple_SET_ITEM(info, 0, f);
  PyTuple_SET_ITEM(info, 1, t);
  Py_XSETREF(self->memory_info, Py_NewRef(info));
  self->info_free = free_bytes;
  self->info_total = total;
  return info;
}

static PyObject *context_push(ContextObject *self, PyObject *unused) {
  (void)unused;
  nbc_status_t s = nbc_context_push(self->ctx);
  if (s != NBC_OK) return nbc__py_raise(nbc__py_state_of((PyObject *)self), s);
  Py_RETURN_NONE;
}

static PyObject *context_pop(ContextObject *self, PyObject *unused) {
  (void)unused;
  nbc_status_t s = nbc_context_pop(self->ctx);
  if (s != NBC_OK) return nbc__py_raise(nbc__py_state_of((PyObject *)self), s);
  Py_RETURN_NONE;
}

/* A peer device argument: an ordinal (numba passes ints) or anything with .id (Device,
 * gpus[i]). */
static nbc_device_t *peer_arg(nbc__py_state *st, PyObject *obj) {
  PyObject *id = PyIndex_Check(obj) ? PyNumber_Index(obj) : PyObject_GetAttrString(obj, "id");
  if (!id || !PyLong_Check(id)) {
    Py_XDECREF(id);
    PyErr_Format(PyExc_TypeError, "expected a device ordinal or a Device, got %.200s",
                 Py_TYPE(obj)->tp_name);
    return NULL;
  }
  int overflow = 0;
  long n = PyLong_AsLongAndOverflow(id, &overflow);
  Py_DECREF(id);
  if (n == -1 && PyErr_Occurred()) return NULL;
  if (overflow || n < 0 || n > 0x7fffffffL) n = -1; /* an invalid ordinal: IndexError below */
  nbc_device_t *dev = NULL;
  nbc_status_t s = nbc_device_get((int)n, &dev);
  if (s != NBC_OK) {
    nbc__py_raise(st, s);
    return NULL;
  }
  return dev;
}

/* numba's Context.can_access_peer(peer_device): whether this context's device can map the
 * peer's memory (never its own). */
static PyObject *context_can_access_peer(ContextObject *self, PyObject *peer_obj) {
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  nbc_device_t *peer = peer_arg(st, peer_obj);
  if (!peer) return NULL;
  int can = 0;
  nbc_status_t s = nbc_device_can_access_peer(nbc_context_device(self->ctx), peer, &can);
  if (s != NBC_OK) return nbc__py_raise(st, s);
  return PyBool_FromLong(can);
}

/* Lets this context map the peer's memory: nbc_device_enable_peer_access acts on the current
 * context, so this context is pushed around the call. */
static PyObject *context_enable_peer_access(ContextObject *self, PyObject *peer_obj) {
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  nbc_device_t *peer = peer_arg(st, peer_obj);
  if (!peer) return NULL;
  nbc_status_t s = nbc_context_push(self->ctx);
  if (s != NBC_OK) return nbc__py_raise(st, s);
  s = nbc_device_enable_peer_access(peer);
  if (s != NBC_OK) nbc__py_raise(st, s); /* before the pop replaces the message */
  nbc_status_t popped = nbc_context_pop(self->ctx);
  if (s != NBC_OK) return NULL;
  if (popped != NBC_OK) return nbc__py_raise(st, popped);
  Py_RETURN_NONE;
}

static PyObject *context_reset(ContextObject *self, PyObject *unused) {
  (void)unused;
  if (nbc__py_emm_reset((PyObject *)self) < 0) return NULL;
  nbc_status_t s;
  Py_BEGIN_ALLOW_THREADS s = nbc_context_reset(self->ctx);
  Py_END_ALLOW_THREADS if (s != NBC_OK) return nbc__py_raise(nbc__py_state_of((PyObject *)self), s);
  Py_RETURN_NONE;
}

static PyObject *context_synchronize(ContextObject *self, PyObject *unused) {
  (void)unused;
  nbc_status_t s;
  Py_BEGIN_ALLOW_THREADS s = nbc_context_synchronize(self->ctx);
  Py_END_ALLOW_THREADS if (s != NBC_OK) return nbc__py_raise(nbc__py_state_of((PyObject *)self), s);
  Py_RETURN_NONE;
}

static PyObject *context_get_device(ContextObject *self, void *c) {
  (void)c;
  return Py_NewRef(self->device);
}

/* numba's Context.memory_manager: the EMM plugin's instance serving the context when a plugin
 * is set, else nbcuda's own (NumbaCUDAMemoryManager, emm.c). */
static PyObject *context_get_memory_manager(ContextObject *self, void *c) {
  (void)c;
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  int plugin = nbc__py_emm_active(st);
  if (plugin < 0) return NULL;
  if (plugin) return nbc__py_emm_manager(st, (PyObject *)self);
  if (!self->own_manager && !(self->own_manager = nbc__py_emm_own_manager(st, (PyObject *)self)))
    return NULL;
  return Py_NewRef(self->own_manager);
}

static PyObject *context_get_deallocations(ContextObject *self, void *c) {
  (void)c;
  if (!self->deallocations &&
      !(self->deallocations =
            nbc__py_deallocs_new(nbc__py_state_of((PyObject *)self), (PyObject *)self)))
    return NULL;
  return Py_NewRef(self->deallocations);
}

static PyObject *context_get_handle(ContextObject *self, void *c) {
  (void)c;
  return PyLong_FromVoidPtr(nbc_context_handle(self->ctx));
}

static PyObject *context_repr(ContextObject *self) {
  nbc_device_t *dev = nbc_context_device(self->ctx);
  return PyUnicode_FromFormat("<CUDA context %p of device %d>", nbc_context_handle(self->ctx),
                              dev ? nbc_device_id(dev) : -1);
}

static Py_hash_t context_hash(ContextObject *self) {
  return _Py_HashPointer(nbc_context_handle(self->ctx));
}

static PyObject *context_richcompare(PyObject *a, PyObject *b, int op) {
  if ((op != Py_EQ && op != Py_NE) || Py_TYPE(a) != Py_TYPE(b)) Py_RETURN_NOTIMPLEMENTED;
  int eq = nbc_context_handle(((ContextObject *)a)->ctx) ==
           nbc_context_handle(((ContextObject *)b)->ctx);
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

/* numba's Context.create_stream() & co: the module's function of that name, run with this
 * context pushed, so the stream or event belongs to it whichever context is current. */
static PyObject *in_context(ContextObject *self, const char *fname, PyObject *args,
                            PyObject *kwargs) {
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  PyObject *module = PyType_GetModule(Py_TYPE(self));
  PyObject *fn = module ? PyObject_GetAttrString(module, fname) : NULL;
  if (!fn) return NULL;
  nbc_status_t s = nbc_context_push(self->ctx);
  if (s != NBC_OK) {
    Py_DECREF(fn);
    return nbc__py_raise(st, s);
  }
  PyObject *r = PyObject_Call(fn, args, kwargs);
  Py_DECREF(fn);
  s = nbc_context_pop(self->ctx);
  if (s != NBC_OK && r) {
    Py_CLEAR(r);
    nbc__py_raise(st, s);
  }
  return r;
}

#define IN_CONTEXT(method, fname)                                                         \
  static PyObject *context_##method(ContextObject *self, PyObject *args, PyObject *kwargs) { \
    return in_context(self, fname, args, kwargs);                                         \
  }
IN_CONTEXT(create_stream, "stream")
IN_CONTEXT(create_event, "event")
IN_CONTEXT(create_external_stream, "external_stream")
IN_CONTEXT(get_default_stream, "default_stream")
IN_CONTEXT(get_legacy_default_stream, "legacy_default_stream")
IN_CONTEXT(get_per_thread_default_stream, "per_thread_default_stream")
IN_CONTEXT(memalloc, "_memalloc")
IN_CONTEXT(memhostalloc, "_memhostalloc")
IN_CONTEXT(memallocmanaged, "_memallocmanaged")
IN_CONTEXT(mempin, "_mempin")
#undef IN_CONTEXT

/* numba's Context.defer_cleanup(): defer_cleanup() for this context, whichever is current. */
static PyObject *context_defer_cleanup(ContextObject *self, PyObject *unused) {
  (void)unused;
  PyObject *module = PyType_GetModule(Py_TYPE(self));
  return module ? nbc__py_defer_cleanup(module, self->ctx) : NULL;
}

/* numba's Context.prepare_for_use() initialises its memory manager; the C library has
 * nothing to prepare beyond the context itself, which exists once this object does. */
static PyObject *context_prepare_for_use(ContextObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  Py_RETURN_NONE;
}

#define IN_CONTEXT_DEF(method, doc)                                                       \
  {#method, (PyCFunction)(void (*)(void))context_##method, METH_VARARGS | METH_KEYWORDS, doc}

static PyMethodDef context_methods[] = {
    IN_CONTEXT_DEF(create_stream, "create_stream($self, /)\n--\n\n"
                                  "A new Stream in this context (nbcuda.stream())."),
    IN_CONTEXT_DEF(create_event, "create_event($self, timing=True)\n--\n\n"
                                 "A new Event in this context."),
    IN_CONTEXT_DEF(create_external_stream,
                   "create_external_stream($self, ptr)\n--\n\n"
                   "A Stream over a CUstream of this context."),
    IN_CONTEXT_DEF(get_default_stream, "get_default_stream($self, /)\n--\n\n"
                                       "This context's default stream (handle 0)."),
    IN_CONTEXT_DEF(get_legacy_default_stream, "get_legacy_default_stream($self, /)\n--\n\n"
                                              "The legacy default stream (handle 1)."),
    IN_CONTEXT_DEF(get_per_thread_default_stream,
        "get_per_thread_default_stream($self, /)\n--\n\n"
        "The per-thread default stream (handle 2)."),
    IN_CONTEXT_DEF(memalloc, "memalloc($self, bytesize)\n--\n\n"
                             "A MemoryPointer to new device memory of this context, freed "
                             "when it and its views are gone."),
    IN_CONTEXT_DEF(memhostalloc, "memhostalloc($self, bytesize, mapped=False, portable=False, "
                                 "wc=False)\n--\n\n"
                                 "Page-locked host memory (mapped into the device when "
                                 "mapped is set), with the buffer protocol."),
    IN_CONTEXT_DEF(memallocmanaged,
        "memallocmanaged($self, bytesize, attach_global=True)\n--\n\n"
        "Managed memory, with the buffer protocol."),
    IN_CONTEXT_DEF(mempin, "mempin($self, owner, pointer, size, mapped=False)\n--\n\n"
                           "Page-locks size bytes at pointer (owner's memory, kept alive) "
                           "until the result dies."),
    {"defer_cleanup", (PyCFunction)context_defer_cleanup, METH_NOARGS,
     "defer_cleanup($self, /)\n--\n\n"
     "with ctx.defer_cleanup(): frees of this context's memory wait for the end of the "
     "outermost block."},
    {"prepare_for_use", (PyCFunction)context_prepare_for_use, METH_NOARGS,
     "prepare_for_use($self, /)\n--\n\n"
     "Nothing to do (numba initialises its memory manager here)."},
    {"get_memory_info", (PyCFunction)context_get_memory_info, METH_NOARGS,
     "get_memory_info($self, /)\n--\n\n"
     "MemoryInfo(free, total) in bytes."},
    {"push", (PyCFunction)context_push, METH_NOARGS, "push($self, /)\n--\n\n"
                                                     "Pushes the context on this thread."},
    {"pop", (PyCFunction)context_pop, METH_NOARGS,
     "pop($self, /)\n--\n\n"
     "Pops this thread's top context, which must be this one."},
    {"reset", (PyCFunction)context_reset, METH_NOARGS,
     "reset($self, /)\n--\n\n"
     "Frees what nbcuda holds in the context; does not destroy it."},
    {"synchronize", (PyCFunction)context_synchronize, METH_NOARGS,
     "synchronize($self, /)\n--\n\n"
     "Waits for all work in the context."},
    {"can_access_peer", (PyCFunction)context_can_access_peer, METH_O,
     "can_access_peer($self, peer_device, /)\n--\n\n"
     "Whether this context's device can map the peer's memory."},
    {"enable_peer_access", (PyCFunction)context_enable_peer_access, METH_O,
     "enable_peer_access($self, peer_device, /)\n--\n\n"
     "Lets this context map the peer's memory (again is not an error; until either device is "
     "reset)."},
    {"get_ipc_handle", nbc__py_ipc_context_get_handle, METH_O,
     "get_ipc_handle($self, memory, /)\n--\n\n"
     "An IpcHandle another process can open (Linux)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef context_getset[] = {
    {"device", (getter)context_get_device, NULL, "the Device", NULL},
    {"handle", (getter)context_get_handle, NULL, "the CUcontext as an int", NULL},
    {"memory_manager", (getter)context_get_memory_manager, NULL,
     "the EMM plugin instance serving the context, or nbcuda's own manager", NULL},
    {"deallocations", (getter)context_get_deallocations, NULL,
     "freed memory the driver does not have back yet (numba's pending deallocations)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot context_slots[] = {
    {Py_tp_dealloc, context_dealloc},
    {Py_tp_traverse, context_traverse},
    {Py_tp_repr, context_repr},
    {Py_tp_hash, context_hash},
    {Py_tp_richcompare, context_richcompare},
    {Py_tp_methods, context_methods},
    {Py_tp_getset, context_getset},
    {Py_tp_doc, (void *)"A device's primary CUDA context (see current_context())."},
    {0, NULL},
};

static PyType_Spec context_spec = {
    .name = "nbcuda.Context",
    .basicsize = sizeof(ContextObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION |
             Py_TPFLAGS_IMMUTABLETYPE,
    .slots = context_slots,
};

/* ------------------------------------------------------------ require_context --------- */

typedef struct {
  PyObject_HEAD
  PyObject *fn;
} RequireObject;

typedef struct {
  PyObject *fn, *args, *kwargs, *result;
  int called;
} require_call;

static nbc_status_t require_trampoline(void *arg) {
  require_call *c = arg;
  c->called = 1;
  c->result = PyObject_Call(c->fn, c->args, c->kwargs);
  return NBC_OK;
}

static PyObject *require_call_fn(RequireObject *self, PyObject *args, PyObject *kwargs) {
  require_call c = {self->fn, args, kwargs, NULL, 0};
  nbc_status_t s = nbc_require_context(require_trampoline, &c);
  if (c.called) return c.result; /* fn's result or its exception */
  return nbc__py_raise(nbc__py_state_of((PyObject *)self), s != NBC_OK ? s : NBC_INTERNAL);
}

static PyObject *require_descr_get(PyObject *self, PyObject *obj, PyObject *type) {
  (void)type;
  if (!obj || obj == Py_None) return Py_NewRef(self);
  return PyMethod_New(self, obj);
}

static int require_traverse(RequireObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->fn);
  return 0;
}

static void require_dealloc(RequireObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  Py_CLEAR(self->fn);
  tp->tp_free(self);
  Py_DECREF(tp);
}

/* The wrapper looks like the function it wraps (functools.wraps does the same). */
static PyObject *require_forward(RequireObject *self, void *attr) {
  return PyObject_GetAttrString(self->fn, (const char *)attr);
}

static PyObject *require_wrapped(RequireObject *self, void *c) {
  (void)c;
  return Py_NewRef(self->fn);
}

static PyGetSetDef require_getset[] = {
    {"__wrapped__", (getter)require_wrapped, NULL, NULL, NULL},
    {"__name__", (getter)require_forward, NULL, NULL, "__name__"},
    {"__qualname__", (getter)require_forward, NULL, NULL, "__qualname__"},
    {"__doc__", (getter)require_forward, NULL, NULL, "__doc__"},
    {"__module__", (getter)require_forward, NULL, NULL, "__module__"},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot require_slots[] = {
    {Py_tp_dealloc, require_dealloc},
    {Py_tp_traverse, require_traverse},
    {Py_tp_call, require_call_fn},
    {Py_tp_descr_get, require_descr_get},
    {Py_tp_getset, require_getset},
    {0, NULL},
};

static PyType_Spec require_spec = {
    .name = "nbcuda._RequireContext",
    .basicsize = sizeof(RequireObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION |
             Py_TPFLAGS_IMMUTABLETYPE,
    .slots = require_slots,
};

/* ------------------------------------------------------------------ Scope ------------- */

typedef struct {
  PyObject_HEAD
  nbc__py_scope_fn enter, exit;
  PyObject *target;
} ScopeObject;

PyObject *nbc__py_scope_new(nbc__py_state *st, nbc__py_scope_fn enter, nbc__py_scope_fn exit,
                            PyObject *target) {
  ScopeObject *s = PyObject_GC_New(ScopeObject, st->ScopeType);
  if (!s) return NULL;
  s->enter = enter;
  s->exit = exit;
  s->target = Py_NewRef(target ? target : Py_None);
  PyObject_GC_Track(s);
  return (PyObject *)s;
}

static PyObject *scope_enter(ScopeObject *self, PyObject *unused) {
  (void)unused;
  return self->enter ? self->enter(self->target) : Py_NewRef(self->target);
}

/* The cleanup runs whether or not the body raised; the body's exception propagates. */
static PyObject *scope_exit(ScopeObject *self, PyObject *args) {
  (void)args;
  PyObject *r = self->exit ? self->exit(self->target) : Py_NewRef(Py_None);
  if (!r) return NULL;
  Py_DECREF(r);
  Py_RETURN_FALSE;
}

static int scope_traverse(ScopeObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->target);
  return 0;
}

static void scope_dealloc(ScopeObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  Py_CLEAR(self->target);
  tp->tp_free(self);
  Py_DECREF(tp);
}

static PyMethodDef scope_methods[] = {
    {"__enter__", (PyCFunction)scope_enter, METH_NOARGS, "__enter__($self, /)\n--\n\n"
                                                         "Enters the scope."},
    {"__exit__", (PyCFunction)scope_exit, METH_VARARGS, "__exit__($self, *exc_info)\n--\n\n"
                                                        "Leaves the scope; exceptions "
                                                        "propagate."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot scope_slots[] = {
    {Py_tp_dealloc, scope_dealloc},
    {Py_tp_traverse, scope_traverse},
    {Py_tp_methods, scope_methods},
    {0, NULL},
};

static PyType_Spec scope_spec = {
    .name = "nbcuda._Scope",
    .basicsize = sizeof(ScopeObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION |
             Py_TPFLAGS_IMMUTABLETYPE,
    .slots = scope_slots,
};

/* ------------------------------------------------------------ module functions -------- */

static PyObject *py_current_context(PyObject *module, PyObject *const *args, Py_ssize_t nargsf,
                                    PyObject *kwnames) {
  static char *kwlist[] = {"devnum", NULL};
  PyObject *devnum = Py_None;
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (!kwnames && nargs <= 1) {
    if (nargs) devnum = args[0];
  } else if (!nbc__py_parse_slow(args, nargsf, kwnames, "|O:current_context", kwlist,
                                 &devnum)) {
    return NULL;
  }
  nbc__py_state *st = nbc__py_module_state(module);
  int n = -1;
  if (devnum != Py_None) {
    n = (int)PyLong_AsLong(devnum);
    if (n == -1 && PyErr_Occurred()) return NULL;
    if (n < 0) {
      PyErr_Format(PyExc_IndexError, "device index %d out of range", n);
      return NULL;
    }
  }
  nbc_context_t *ctx = NULL;
  nbc_status_t s = nbc_current_context(n, &ctx);
  if (s != NBC_OK) return nbc__py_raise(st, s);
  return nbc__py_context_object(st, ctx);
}

static PyObject *py_require_context(PyObject *module, PyObject *fn) {
  nbc__py_state *st = nbc__py_module_state(module);
  if (!PyCallable_Check(fn)) {
    PyErr_SetString(PyExc_TypeError, "require_context() takes a callable");
    return NULL;
  }
  RequireObject *r = PyObject_GC_New(RequireObject, st->RequireContextType);
  if (!r) return NULL;
  r->fn = Py_NewRef(fn);
  PyObject_GC_Track(r);
  return (PyObject *)r;
}

static PyObject *py_synchronize(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  (void)args;
  if (nbc__py_no_args("synchronize", nargs) < 0) return NULL;
  nbc_status_t s;
  Py_BEGIN_ALLOW_THREADS s = nbc_synchronize();
  Py_END_ALLOW_THREADS if (s != NBC_OK) return nbc__py_raise(nbc__py_module_state(module), s);
  Py_RETURN_NONE;
}

static PyObject *py_close(PyObject *module, PyObject *unused) {
  (void)unused;
  nbc__py_state *st = nbc__py_module_state(module);
  /* on the main thread close resets every device: the EMM plugins' reset() first, as numba's
   * Context.reset calls it */
  PyObject *threading = PyImport_ImportModule("threading");
  PyObject *main = threading ? PyObject_CallMethod(threading, "main_thread", NULL) : NULL;
  PyObject *cur = main ? PyObject_CallMethod(threading, "current_thread", NULL) : NULL;
  Py_XDECREF(threading);
  Py_XDECREF(main);
  Py_XDECREF(cur);
  if (!cur) return NULL;
  for (Py_ssize_t i = 0; main == cur && st->contexts && i < PyList_GET_SIZE(st->contexts); i++)
    if (PyList_GET_ITEM(st->contexts, i) != Py_None &&
        nbc__py_emm_reset(PyList_GET_ITEM(st->contexts, i)) < 0)
      return NULL;
  nbc_status_t s;
  Py_BEGIN_ALLOW_THREADS s = nbc_close();
  Py_END_ALLOW_THREADS if (s != NBC_OK) return nbc__py_raise(nbc__py_module_state(module), s);
  Py_RETURN_NONE;
}

static PyMethodDef context_functions[] = {
    {"current_context", (PyCFunction)(void (*)(void))py_current_context,
     METH_FASTCALL | METH_KEYWORDS,
     "current_context($module, devnum=None)\n--\n\n"
     "The current Context (devnum=None), creating device 0's if none; current_context(n) "
     "pushes device n's primary context."},
    {"require_context", py_require_context, METH_O,
     "require_context($module, fn, /)\n--\n\n"
     "Decorator: runs the function with a context attached; switching is refused."},
    {"synchronize", (PyCFunction)(void (*)(void))py_synchronize, METH_FASTCALL,
     "synchronize($module, /)\n--\n\n"
     "Synchronizes the current context."},
    {"close", py_close, METH_NOARGS,
     "close($module, /)\n--\n\n"
     "Pops this thread's contexts; on the main thread also resets every device."},
    {NULL, NULL, 0, NULL},
};

int nbc__py_context_init(PyObject *module, nbc__py_state *st) {
  st->ContextType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &context_spec, NULL);
  st->RequireContextType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &require_spec, NULL);
  st->ScopeType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &scope_spec, NULL);
  if (!st->ContextType || !st->RequireContextType || !st->ScopeType) return -1;
  if (PyModule_AddObjectRef(module, "Context", (PyObject *)st->ContextType) < 0) return -1;
  return PyModule_AddFunctions(module, context_functions);
}
