/* launch.c — a kernel launch: the launcher `k[grid, block]` or
 * `k[grid, block, stream, shared_bytes]` returns (numba's _KernelLauncher) and the call
 * `k[...](args)` that launches the kernel. The Kernel object is kernel.c; the structs are in
 * kernel.h.
 *
 * A launch: the kernel's code is loaded once per context by the kernel layer (nbc_kernel_t,
 * made from the compile result at the first load; linked first when it has link files, which
 * are read here at each load), the signature's parameter layout was parsed when it was
 * compiled (nbc_signature_parse), and each launch
 * packs the arguments into one stack buffer with nbc_signature_pack_* and calls
 * nbc_launch_packed. The hot path does no Python attribute lookup for nbcuda device arrays
 * and Python scalars (objects with __cuda_array_interface__ cost one lookup; host arrays are
 * copied to the device and back, as numba does; records are copied the same way). The
 * launcher supports vectorcall, so `k[g, b](x, y)` builds no argument tuple. A kernel
 * without one signature first picks the kernel for the arguments (nbc__py_specialize).
 *
 * Around the launch, as numba: the launcher's pre_launch_callbacks are called first; a
 * debug=True kernel's exception slot is cleared before and read after, raising the
 * exception of the raise site that ended a thread. A forall launcher (k.forall(ntasks,
 * tpb)) has a grid that covers ntasks threads, in blocks of tpb or, when tpb is 0, of the
 * largest block the specialisation can have (what numba-cuda's
 * get_max_potential_block_size answers).
 */
#include "devicearray.h"
#include "kernel.h"

#include <structmember.h>

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ Launch ------------------ */

/* The kernel layer's load function for a kernel with link files or global device arrays:
 * the arrays its code holds by address must still exist (memory of a context reset since is
 * gone; each is checked as a kernel argument would be), and the files are read and linked
 * now, at each load. A Python error stays set (the status is then NBC_INVALID_ARGUMENT). */
static nbc_status_t load_linked(void *data, const nbc_kernel_t *loaded, nbc_module_t **pmodule) {
  KernelObject *k = data;
  nbc__py_state *st = nbc__py_state_of((PyObject *)k);
  for (Py_ssize_t i = 0; k->referenced && i < PyList_GET_SIZE(k->referenced); i++) {
    nbc__py_array_view v;
    if (nbc__py_array_view_get(st, PyList_GET_ITEM(k->referenced, i), &v) < 0)
      return NBC_INVALID_ARGUMENT;
    nbc__py_array_view_finish(st, &v, 0);
  }
  size_t size = 0;
  const char *code = nbc_compile_result_code(nbc_kernel_result(loaded), &size);
  nbc_module_load_options_t load = {.max_registers = k->max_registers,
                                    .cudadevrt = k->cooperative,
                                    .fp16 = k->fp16};
  if (!k->links || !PyTuple_GET_SIZE(k->links))
    return nbc_module_load_data_ex(code, size, NBC_IMAGE_AUTO, &load, pmodule);
  int lto = k->opts.output == NBC_OUTPUT_LTOIR;
  if (nbc__py_link_load(st, code, size, lto, k->links, &load, pmodule) < 0)
    return NBC_INVALID_ARGUMENT;
  return NBC_OK;
}

/* k's code handed to the kernel layer at its first load, with its load options. */
static int make_loadable(nbc__py_state *st, KernelObject *k) {
  nbc_kernel_options_t o = {.module = {.max_registers = k->max_registers,
                                       .cudadevrt = k->cooperative,
                                       .fp16 = k->fp16},
                            .set_carveout = k->carveout != NBC__PY_NO_CARVEOUT,
                            .carveout = k->carveout};
  if ((k->links && PyTuple_GET_SIZE(k->links)) || k->referenced) {
    o.load = load_linked;
    o.load_data = k;
  }
  const char *sig = PyUnicode_AsUTF8(k->sigtext);
  nbc_status_t s = sig ? nbc_kernel_create_from_result(k->result, sig, &o, &k->loaded) : NBC_OK;
  return !sig ? -1 : s == NBC_OK ? 0 : nbc__py_raise_int(st, s);
}

/* The kernel's function in the current context: the kernel layer finds the module it loaded
 * there, or loads the code (no lock, no allocation when it is loaded). */
nbc_function_t *nbc__py_kernel_function(nbc__py_state *st, KernelObject *k) {
  if (!k->loaded && make_loadable(st, k) < 0) return NULL;
  nbc_function_t *fn = NULL;
  nbc_status_t s = nbc_kernel_function(k->loaded, &fn);
  if (s == NBC_OK) return fn;
  if (!PyErr_Occurred()) nbc__py_raise(st, s);
  return NULL;
}

/* An argument the signature does not accept (wrong dtype, rank, layout or kind) is a
 * TypeError, as numba's dispatcher answers ("No matching definition for argument type(s)"). */
static int argument_refused(nbc__py_state *st, nbc_status_t s) {
  if (s != NBC_INVALID_ARGUMENT) return nbc__py_raise_int(st, s);
  PyErr_SetString(PyExc_TypeError, nbc_last_error());
  return -1;
}

/* The arrays a launch views, its top-level array and record arguments and the arrays in its
 * tuple arguments: the views' storage and how many are taken. */
typedef struct {
  nbc__py_array_view *items;
  int count;
  intptr_t stream; /* the launch's stream as a DLPack stream number (nbc__py_dlpack_stream) */
} views_in_use;

/* How many views parameter p needs: 1 for an array or record, the sum for a tuple. */
static int views_needed(const nbc_param_info_t *p) {
  if (p->kind == NBC_PARAM_ARRAY || p->kind == NBC_PARAM_RECORD) return 1;
  int n = 0;
  for (int k = 0; p->kind == NBC_PARAM_TUPLE && k < p->nitems; k++)
    n += views_needed(&p->items[k]);
  return n;
}

int nbc__py_launch_views(const nbc_signature_t *sig) {
  int n = 0;
  for (int i = 0; i < nbc_signature_nargs(sig); i++)
    n += views_needed(nbc_signature_param(sig, i));
  return n;
}

/* numba converts no complex value to a real type: a TypeError naming the argument. */
static int complex_refused(const nbc_param_info_t *p, int i, PyObject *a) {
  PyErr_Format(PyExc_TypeError, "argument %d: expected %s, got %R (numba converts no complex "
               "value to a real type)", i + 1, p->type_name, a);
  return -1;
}

/* Argument i (or an item of it), described by p: a scalar converted as numba converts it,
 * a tuple packed item by item, an array item of a tuple (a view taken into V, as for an
 * array argument: a host array is copied there and back). */
/* An array of dates for an array parameter (its kind checked by the pack): its unit must be
 * the parameter's (element: nbc__py_datetime_name of the array's typestr). 0, or -1 with
 * TypeError. */
static int dates_match(const nbc_param_info_t *p, const char *element, int i) {
  if (element && strcmp(element, p->dtype_name) == 0) return 0;
  PyErr_Format(PyExc_TypeError, "argument %d: expected %s, got an array of %s", i + 1,
               p->type_name, element ? element : "dates of another unit");
  return -1;
}

/* A datetime64 or timedelta64 argument: a numpy scalar of the parameter's unit, packed as its
 * int64 count (numba passes val.view(np.int64)). */
static int pack_datetime(nbc__py_state *st, const nbc_param_info_t *p, int i, char *buf,
                         PyObject *a) {
  long long v;
  const char *name = nbc__py_datetime_scalar(st, a, &v);
  if (PyErr_Occurred()) return -1;
  if (!name || strcmp(name, p->dtype_name) != 0) {
    PyErr_Format(PyExc_TypeError, "argument %d: expected %s (a numpy scalar of that unit), got "
                 "%R", i + 1, p->type_name, a);
    return -1;
  }
  nbc_status_t s = nbc_param_pack_int(p, buf, v);
  return s == NBC_OK ? 0 : argument_refused(st, s);
}

/* A Python int for a scalar parameter. A float or complex parameter takes it as a float; an
 * integer one refuses a value its type cannot hold with OverflowError, rather than pass it
 * wrapped (2**32 as 0 to an int32), as numba's ctypes conversion would. Numpy integers come
 * here as ints too but are not checked (checked = 0): they wrap as numpy's casts do. */
static int pack_int(nbc__py_state *st, const nbc_param_info_t *p, int i, char *buf,
                    PyObject *a, int checked) {
  nbc_status_t s;
  if (p->dtype_kind == 'f' || p->dtype_kind == 'c') {
    double d = PyLong_AsDouble(a);
    if (d == -1.0 && PyErr_Occurred()) return -1;
    s = nbc_param_pack_float(p, buf, d);
    return s == NBC_OK ? 0 : argument_refused(st, s);
  }
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(a, &overflow);
  int fits = 1;
  if (overflow > 0) {
    v = (long long)PyLong_AsUnsignedLongLong(a);
    fits = !PyErr_Occurred() && p->dtype_kind == 'u' && p->itemsize == 8;
    PyErr_Clear();
  } else if (overflow < 0) {
    fits = 0;
  } else if (p->dtype_kind == 'u') {
    fits = v >= 0 && (p->itemsize >= 8 || (unsigned long long)v >> (8 * p->itemsize) == 0);
  } else if (p->dtype_kind == 'i' && p->itemsize < 8) {
    long long half = 1LL << (8 * p->itemsize - 1);
    fits = v >= -half && v < half;
  }
  if (checked && !fits && (p->dtype_kind == 'i' || p->dtype_kind == 'u')) {
    PyErr_Format(PyExc_OverflowError, "argument %d: %S does not fit the parameter's type %s",
                 i + 1, a, p->type_name);
    return -1;
  }
  if (overflow && !fits) v = (long long)PyLong_AsUnsignedLongLongMask(a);
  if (PyErr_Occurred()) return -1;
  s = nbc_param_pack_int(p, buf, v);
  return s == NBC_OK ? 0 : argument_refused(st, s);
}

static int pack_value(nbc__py_state *st, const nbc_param_info_t *p, int i, char *buf,
                      PyObject *a, views_in_use *V) {
  nbc_status_t s;
  if (p->kind == NBC_PARAM_TUPLE && !PyTuple_Check(a) && nbc__py_is_enum_member(a) > 0) {
    PyObject *v = PyObject_GetAttrString(a, "value"); /* a member whose value is a tuple */
    int r = v && PyTuple_Check(v) ? pack_value(st, p, i, buf, v, V) : -1;
    if (v && !PyTuple_Check(v))
      PyErr_Format(PyExc_TypeError, "argument %d: expected %s, got %R", i + 1, p->type_name, a);
    Py_XDECREF(v);
    return r;
  }
  if (p->kind == NBC_PARAM_TUPLE) {
    if (!PyTuple_Check(a) || PyTuple_GET_SIZE(a) != p->nitems) {
      PyErr_Format(PyExc_TypeError, "argument %d: expected %s, got %R", i + 1, p->type_name,
                   a);
      return -1;
    }
    for (int k = 0; k < p->nitems; k++)
      if (pack_value(st, &p->items[k], i, buf, PyTuple_GET_ITEM(a, k), V) < 0) return -1;
    return 0;
  }
  if (p->kind == NBC_PARAM_ARRAY) {
    nbc__py_array_view *v = &V->items[V->count];
    if (nbc__py_array_view_get_on(st, a, V->stream, v) < 0) return -1;
    V->count++;
    s = nbc_param_pack_array(p, buf, v->data, v->kind, v->itemsize, v->ndim, v->shape,
                             v->strides);
    if (s == NBC_OK && (v->kind == 'M' || v->kind == 'm')) return dates_match(p, v->datetime, i);
    if (s == NBC_OK) return 0;
    PyErr_Format(PyExc_TypeError, "argument %d: %s", i + 1, nbc_last_error());
    return -1;
  }
  if (p->kind == NBC_PARAM_NONE) { /* nothing to pack */
    if (a == Py_None) return 0;
    PyErr_Format(PyExc_TypeError, "argument %d: expected None, got %R", i + 1, a);
    return -1;
  }
  if (p->kind == NBC_PARAM_POINTER) { /* numba's CPointer: the int address it is given */
    PyObject *v = PyBool_Check(a) ? NULL : PyNumber_Index(a);
    unsigned long long address = v ? PyLong_AsUnsignedLongLong(v) : 0;
    Py_XDECREF(v);
    if (!v || PyErr_Occurred()) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "argument %d: expected %s, an address (an int from 0 to "
                   "2**64 - 1), got %R", i + 1, p->type_name, a);
      return -1;
    }
    s = nbc_param_pack_pointer(p, buf, address);
    return s == NBC_OK ? 0 : argument_refused(st, s);
  }
  if (p->dtype_kind == 'M' || p->dtype_kind == 'm') return pack_datetime(st, p, i, buf, a);
  if (PyLong_Check(a)) { /* bool included */
    return pack_int(st, p, i, buf, a, !PyBool_Check(a));
  } else if (PyFloat_Check(a)) {
    s = nbc_param_pack_float(p, buf, PyFloat_AS_DOUBLE(a));
  } else if (PyComplex_Check(a)) {
    if (p->dtype_kind != 'c') return complex_refused(p, i, a);
    Py_complex c = PyComplex_AsCComplex(a);
    s = nbc_param_pack_complex(p, buf, c.real, c.imag);
  } else if (PyIndex_Check(a)) { /* numpy integers */
    PyObject *v = PyNumber_Index(a);
    if (!v) return -1;
    int r = pack_int(st, p, i, buf, v, 0);
    Py_DECREF(v);
    return r;
  } else if (Py_TYPE(a)->tp_as_number && Py_TYPE(a)->tp_as_number->nb_float &&
             !strstr(Py_TYPE(a)->tp_name, "complex")) { /* numpy floats and bools */
    double d = PyFloat_AsDouble(a);
    if (d == -1.0 && PyErr_Occurred()) return -1;
    s = nbc_param_pack_float(p, buf, d);
  } else if (nbc__py_is_enum_member(a) > 0) { /* an EnumMember passes its value */
    PyObject *v = PyObject_GetAttrString(a, "value");
    int r = v ? pack_value(st, p, i, buf, v, V) : -1;
    Py_XDECREF(v);
    return r;
  } else if (PyObject_HasAttrString(a, "__complex__")) {
    if (p->dtype_kind != 'c') return complex_refused(p, i, a);
    Py_complex c = PyComplex_AsCComplex(a);
    if (PyErr_Occurred()) return -1;
    s = nbc_param_pack_complex(p, buf, c.real, c.imag);
  } else {
    PyErr_Format(PyExc_TypeError, "argument %d: expected %s, got %s", i + 1, p->type_name,
                 Py_TYPE(a)->tp_name);
    return -1;
  }
  return s == NBC_OK ? 0 : argument_refused(st, s);
}

/* numba's ForAll: the block is the one forall() was given, else the largest the kernel can
 * be launched with (numba-cuda's get_max_potential_block_size answers the function's
 * MAX_THREADS_PER_BLOCK), and the grid covers ntasks threads. */
static int forall_dims(nbc__py_state *st, const LauncherObject *L, nbc_function_t *fn,
                       unsigned grid[3], unsigned block[3]) {
  if (block[0] == 0) {
    int most = 0;
    nbc_status_t s = nbc_function_attribute(fn, NBC_FUNCTION_ATTR_MAX_THREADS_PER_BLOCK, &most);
    if (s != NBC_OK) return nbc__py_raise_int(st, s);
    block[0] = most > 0 ? (unsigned)most : 1;
  }
  unsigned long long blocks = ((unsigned long long)L->ntasks + block[0] - 1) / block[0];
  if (blocks > UINT_MAX) {
    PyErr_Format(PyExc_ValueError, "forall: %lld tasks in blocks of %u threads need %llu "
                 "blocks, more than a grid can have", L->ntasks, block[0], blocks);
    return -1;
  }
  grid[0] = (unsigned)blocks;
  return 0;
}

/* numba's pre_launch_callbacks: each called as cb(kernel, launcher), kernel being the
 * overload these arguments launch; a callback that raises stops the launch. */
static int run_pre_launch(LauncherObject *L, KernelObject *k) {
  PyObject *callbacks = PySequence_List(L->callbacks); /* a callback may change the list */
  if (!callbacks) return -1;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(callbacks); i++) {
    PyObject *r = PyObject_CallFunctionObjArgs(PyList_GET_ITEM(callbacks, i), (PyObject *)k,
                                               (PyObject *)L, NULL);
    if (!r) {
      Py_DECREF(callbacks);
      return -1;
    }
    Py_DECREF(r);
  }
  Py_DECREF(callbacks);
  return 0;
}

/* After a launch of a debug=True kernel: numba's _Kernel.launch raises the exception of the
 * raise site that ended a thread first, its first argument prefixed with where and which
 * thread ("In function 'k', file /abs/f.py, line 12, tid=[0, 0, 5] ctaid=[0, 0, 1]: message";
 * an operation's error, a zero divisor, has only the thread). A bare `raise` (numba would call
 * None) is a RuntimeError "...: No active exception to reraise"; a code outside the table
 * numba's SystemError "...: unknown error N in native function". */
static int raise_from_kernel(nbc__py_state *st, KernelObject *k, nbc_function_t *fn,
                             nbc_stream_t *stream) {
  int code = 0, tid[3], ctaid[3];
  nbc_status_t s;
  Py_BEGIN_ALLOW_THREADS s = nbc_debug_exception_read(fn, stream, &code, tid, ctaid);
  Py_END_ALLOW_THREADS if (s != NBC_OK) return nbc__py_raise_int(st, s);
  if (!code) return 0;
  PyObject *cls, *args, *loc = Py_None, *owned = NULL;
  if (code >= 1 && code <= PyTuple_GET_SIZE(k->raises)) {
    PyObject *site = PyTuple_GET_ITEM(k->raises, code - 1);
    cls = PyTuple_GET_ITEM(site, 0);
    args = PyTuple_GET_ITEM(site, 1);
    loc = PyTuple_GET_ITEM(site, 2);
    if (cls == Py_None) {
      cls = PyExc_RuntimeError;
      args = owned = Py_BuildValue("(s)", "No active exception to reraise");
    }
  } else {
    cls = PyExc_SystemError;
    args = owned = Py_BuildValue("(N)", PyUnicode_FromFormat(
                                            "unknown error %d in native function", code));
  }
  PyObject *where = loc == Py_None
                        ? PyUnicode_FromString("")
                        : PyUnicode_FromFormat("In function %R, file %S, line %S, ",
                                               PyTuple_GET_ITEM(loc, 0), PyTuple_GET_ITEM(loc, 1),
                                               PyTuple_GET_ITEM(loc, 2));
  PyObject *prefix = where ? PyUnicode_FromFormat("%Utid=[%d, %d, %d] ctaid=[%d, %d, %d]", where,
                                                  tid[0], tid[1], tid[2], ctaid[0], ctaid[1],
                                                  ctaid[2])
                           : NULL;
  Py_XDECREF(where);
  PyObject *call_args = NULL;
  if (prefix && args && args != Py_None && PyTuple_GET_SIZE(args)) {
    /* ("prefix: first",) + the rest */
    PyObject *first = PyUnicode_FromFormat("%U: %S", prefix, PyTuple_GET_ITEM(args, 0));
    PyObject *rest = first ? PyTuple_GetSlice(args, 1, PyTuple_GET_SIZE(args)) : NULL;
    PyObject *head = rest ? PyTuple_Pack(1, first) : NULL;
    call_args = head ? PySequence_Concat(head, rest) : NULL;
    Py_XDECREF(first);
    Py_XDECREF(rest);
    Py_XDECREF(head);
  } else if (prefix && args) {
    call_args = PyTuple_Pack(1, prefix);
  }
  Py_XDECREF(prefix);
  Py_XDECREF(owned);
  PyObject *exc = call_args ? PyObject_Call(cls, call_args, NULL) : NULL;
  Py_XDECREF(call_args);
  if (exc) {
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
  }
  return -1;
}

/* 0 when obj's dtype is the record type p names; -1 with TypeError otherwise. */
static int same_record(nbc__py_state *st, PyObject *obj, const nbc_param_info_t *p) {
  PyObject *dt = PyObject_GetAttrString(obj, "dtype");
  PyObject *text = dt ? nbc__py_record_text(st, dt) : NULL;
  Py_XDECREF(dt);
  if (!text) return -1;
  int same = PyUnicode_CompareWithASCIIString(text, p->type_name) == 0;
  if (!same)
    PyErr_Format(PyExc_TypeError, "expected a record of type %s, got one of type %U",
                 p->type_name, text);
  Py_DECREF(text);
  return same ? 0 : -1;
}

/* A record argument, as numba passes one: its bytes (a numpy.void, or any buffer of the
 * record's size) are copied to device memory for the launch and back after it (into the
 * numpy.void's memory even though numpy exports it read-only, as numba's host_pointer
 * forces it writable: a record taken from an array, a[0], writes through to the array).
 * A record already on the device (to_device(record), numba's DeviceRecord: a 0-d device
 * array of the record dtype) is passed in place. */
static int record_view(nbc__py_state *st, PyObject *obj, const nbc_param_info_t *p,
                       nbc__py_array_view *view) {
  view->host = NULL;
  view->producer = 0;
  view->owner = NULL;
  if (Py_TYPE(obj) == st->DeviceArrayType) {
    if (same_record(st, obj, p) < 0 || nbc__py_array_view_get(st, obj, view) < 0) return -1;
    int64_t n = 1;
    for (int d = 0; d < view->ndim; d++) n *= view->shape[d];
    if (n != 1 || view->itemsize != p->itemsize) {
      PyErr_Format(PyExc_TypeError, "expected a record of type %s, got a device array of "
                   "%lld of them", p->type_name, (long long)n);
      return -1;
    }
    return 0;
  }
  if (nbc__py_is_numpy_void(st, obj) && same_record(st, obj, p) < 0) return -1;
  if (PyObject_GetBuffer(obj, &view->buffer, PyBUF_SIMPLE) < 0) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "expected a record (numpy.void) of %s, got %s",
                 p->type_name, Py_TYPE(obj)->tp_name);
    return -1;
  }
  if (view->buffer.len != p->itemsize) {
    PyErr_Format(PyExc_TypeError, "expected a record of %d bytes (%s), got %zd bytes",
                 p->itemsize, p->type_name, view->buffer.len);
    PyBuffer_Release(&view->buffer);
    return -1;
  }
  view->data = 0;
  view->kind = 'V';
  view->itemsize = p->itemsize;
  view->ndim = 0;
  view->nbytes = (size_t)p->itemsize;
  view->copy_back = !view->buffer.readonly || nbc__py_is_numpy_void(st, obj);
  nbc_status_t s = view->nbytes ? nbc_mem_alloc(view->nbytes, &view->data) : NBC_OK;
  if (s == NBC_OK && view->nbytes)
    s = nbc_memcpy_htod(view->data, view->buffer.buf, view->nbytes);
  if (s != NBC_OK) {
    if (view->data) nbc_mem_free(view->data);
    PyBuffer_Release(&view->buffer);
    return nbc__py_raise_int(st, s);
  }
  view->host = Py_NewRef(obj);
  return 0;
}

static PyObject *launch_args(LauncherObject *L, PyObject *const *args, Py_ssize_t nargs);
static PyObject *launch_kernel_args(LauncherObject *L, KernelObject *k, PyObject *const *args,
                                    Py_ssize_t nargs, const nbc__py_array_view *parsed);

/* numba's extensions: each argument through every extension's prepare_args(ty, val,
 * stream=, retr=) (ty: the argument's type in the overload the arguments choose, None when
 * they choose none before the extensions ran), then the launch with what they return, then
 * the callables they put in retr. */
static PyObject *launch_extended(LauncherObject *L, PyObject *const *args, Py_ssize_t nargs) {
  nbc__py_state *st = nbc__py_state_of((PyObject *)L);
  KernelObject *k = L->kernel;
  KernelObject *ov = k->sigtext ? k : nbc__py_specialize(st, k, args, nargs, NULL);
  PyObject *types = ov ? nbc__py_kernel_argtypes(st, ov) : NULL;
  if (!types) PyErr_Clear(); /* an argument only an extension makes launchable */
  PyObject *retr = PyList_New(0), *prepared = retr ? PyTuple_New(nargs) : NULL;
  PyObject *kwargs = prepared ? Py_BuildValue("{sOsO}", "stream",
                                              L->stream ? L->stream : Py_None, "retr", retr)
                              : NULL;
  PyObject *extensions = kwargs ? PySequence_Tuple(k->extensions) : NULL;
  PyObject *r = NULL;
  for (Py_ssize_t i = 0; extensions && i < nargs; i++) {
    PyObject *ty = types && i < PyTuple_GET_SIZE(types) ? PyTuple_GET_ITEM(types, i) : Py_None;
    PyObject *val = Py_NewRef(args[i]);
    Py_INCREF(ty);
    for (Py_ssize_t e = 0; val && e < PyTuple_GET_SIZE(extensions); e++) {
      PyObject *meth = PyObject_GetAttrString(PyTuple_GET_ITEM(extensions, e), "prepare_args");
      PyObject *call_args = meth ? PyTuple_Pack(2, ty, val) : NULL;
      PyObject *out = call_args ? PyObject_Call(meth, call_args, kwargs) : NULL;
      Py_XDECREF(meth);
      Py_XDECREF(call_args);
      Py_CLEAR(val);
      if (out && (!PyTuple_Check(out) || PyTuple_GET_SIZE(out) != 2)) {
        PyErr_Format(PyExc_TypeError, "an extension's prepare_args must return (type, value), "
                     "got %R", out);
        Py_CLEAR(out);
      }
      if (out) {
        Py_SETREF(ty, Py_NewRef(PyTuple_GET_ITEM(out, 0)));
        val = Py_NewRef(PyTuple_GET_ITEM(out, 1));
        Py_DECREF(out);
      }
    }
    Py_DECREF(ty);
    if (!val) goto done;
    PyTuple_SET_ITEM(prepared, i, val);
  }
  if (extensions) r = launch_args(L, &PyTuple_GET_ITEM(prepared, 0), nargs);
  for (Py_ssize_t i = 0; r && i < PyList_GET_SIZE(retr); i++) {
    PyObject *done = PyObject_CallNoArgs(PyList_GET_ITEM(retr, i));
    if (!done) Py_CLEAR(r);
    Py_XDECREF(done);
  }
done:
  Py_XDECREF(types);
  Py_XDECREF(retr);
  Py_XDECREF(prepared);
  Py_XDECREF(kwargs);
  Py_XDECREF(extensions);
  return r;
}

/* The launch itself. Omitted trailing arguments are the function's defaults, as numba's
 * dispatcher folds them (the hot path: one comparison). */
static PyObject *launch(LauncherObject *L, PyObject *const *args, Py_ssize_t nargs) {
  KernelObject *k = L->kernel;
  PyObject *(*run)(LauncherObject *, PyObject *const *, Py_ssize_t) =
      __builtin_expect(k->extensions != NULL, 0) && PyList_GET_SIZE(k->extensions)
          ? launch_extended
          : launch_args;
  if (nargs >= k->nparams || !k->defaults ||
      nargs < k->nparams - PyTuple_GET_SIZE(k->defaults))
    return run(L, args, nargs);
  Py_ssize_t ndef = PyTuple_GET_SIZE(k->defaults), first = k->nparams - ndef;
  PyObject *all = PyTuple_New(k->nparams);
  if (!all) return NULL;
  for (Py_ssize_t i = 0; i < k->nparams; i++)
    PyTuple_SET_ITEM(all, i, Py_NewRef(i < nargs ? args[i] : PyTuple_GET_ITEM(k->defaults,
                                                                               i - first)));
  PyObject *r = run(L, &PyTuple_GET_ITEM(all, 0), k->nparams);
  Py_DECREF(all);
  return r;
}

/* Pack, launch, copy host arrays back: the kernel's own code, or, for a kernel without one
 * signature, the overload the arguments choose (packed from the array interfaces read to
 * choose it). */
static PyObject *launch_args(LauncherObject *L, PyObject *const *args, Py_ssize_t nargs) {
  KernelObject *k = L->kernel;
  if (L->ntasks == 0) Py_RETURN_NONE; /* numba's ForAll: nothing to do, nothing checked */
  if (k->sigtext) return launch_kernel_args(L, k, args, nargs, NULL);
  nbc__py_array_view parsed[NBC__PY_FAST_ARGS];
  for (Py_ssize_t i = 0; i < nargs && i < NBC__PY_FAST_ARGS; i++) parsed[i].ndim = -1;
  KernelObject *ov = nbc__py_specialize(nbc__py_state_of((PyObject *)L), k, args, nargs, parsed);
  return ov ? launch_kernel_args(L, ov, args, nargs, parsed) : NULL;
}

/* parsed: NULL, or for each of the first NBC__PY_FAST_ARGS arguments the view its
 * __cuda_array_interface__ was parsed into to choose the kernel (ndim -1: none). */
static PyObject *launch_kernel_args(LauncherObject *L, KernelObject *k, PyObject *const *args,
                                    Py_ssize_t nargs, const nbc__py_array_view *parsed) {
  nbc__py_state *st = nbc__py_state_of((PyObject *)L);
  if (L->callbacks && PyList_GET_SIZE(L->callbacks) && run_pre_launch(L, k) < 0) return NULL;
  const nbc_signature_t *sig = k->sig;
  int n = nbc_signature_nargs(sig);
  if (nargs != n) {
    PyErr_Format(PyExc_TypeError, "kernel %R takes %d arguments (%zd given)", k->py_func, n,
                 nargs);
    return NULL;
  }
  nbc_function_t *fn = nbc__py_kernel_function(st, k);
  if (!fn) return NULL;
  unsigned grid[3], block[3];
  memcpy(grid, L->grid, sizeof grid);
  memcpy(block, L->block, sizeof block);
  if (L->ntasks >= 0 && (forall_dims(st, L, fn, grid, block) < 0 ||
                         (st->config.warn_low_occupancy && nbc__py_warn_small_grid(st, grid) < 0)))
    return NULL;
  size_t size = nbc_signature_params_size(sig);
  _Alignas(16) char stackbuf[1024];
  char *buf = size <= sizeof stackbuf ? stackbuf : malloc(size);
  nbc__py_array_view stackviews[8];
  nbc__py_array_view *views =
      k->nviews <= 8 ? stackviews : calloc((size_t)k->nviews, sizeof *views);
  if (!buf || !views) {
    if (buf != stackbuf) free(buf);
    return PyErr_NoMemory();
  }
  /* the stream first: an object's __dlpack__ is asked to order its memory before it */
  nbc_stream_t *stream = NULL, *temp = NULL;
  int nviews = 0, ok = nbc__py_stream_arg(st, L->stream, &stream, &temp) == 0;
  intptr_t dlstream = (intptr_t)nbc__py_dlpack_stream(stream);
  for (int i = 0; ok && i < n; i++) {
    const nbc_param_info_t *p = nbc_signature_param(sig, i);
    if (p->kind == NBC_PARAM_ARRAY && Py_TYPE(args[i]) == st->DeviceArrayType) {
      /* the hot path: a device array is passed in place, packed from its own fields */
      ArrayObject *a = (ArrayObject *)args[i];
      if (nbc__py_array_alive(st, a, "cuLaunchKernel") < 0) {
        ok = 0;
        break;
      }
      nbc_status_t s = nbc_signature_pack_array(sig, i, buf, a->data, a->kind, a->itemsize,
                                                a->ndim, a->shape, a->strides);
      if (s != NBC_OK) ok = argument_refused(st, s) == 0;
      else if (a->kind == 'M' || a->kind == 'm')
        ok = dates_match(p, nbc__py_datetime_name(a->typestr), i) == 0;
    } else if (p->kind == NBC_PARAM_ARRAY) {
      const nbc__py_array_view *v = &views[nviews];
      if (parsed && i < NBC__PY_FAST_ARGS && parsed[i].ndim >= 0) { /* i < nargs */
        v = &parsed[i]; /* views keeps its producer only: it holds no host copy */
        if (v->producer) views[nviews++] = (nbc__py_array_view){.producer = v->producer};
      } else if (nbc__py_array_view_get_on(st, args[i], dlstream, &views[nviews]) < 0) {
        ok = 0;
        break;
      } else {
        nviews++;
      }
      nbc_status_t s = nbc_signature_pack_array(sig, i, buf, v->data, v->kind, v->itemsize,
                                                v->ndim, v->shape, v->strides);
      if (s != NBC_OK) ok = argument_refused(st, s) == 0;
      else if (v->kind == 'M' || v->kind == 'm') ok = dates_match(p, v->datetime, i) == 0;
    } else if (p->kind == NBC_PARAM_RECORD) {
      nbc__py_array_view *v = &views[nviews];
      if (record_view(st, args[i], p, v) < 0) {
        ok = 0;
        break;
      }
      nviews++;
      nbc_status_t s = nbc_signature_pack_record(sig, i, buf, v->data, v->itemsize);
      if (s != NBC_OK) ok = argument_refused(st, s) == 0;
    } else {
      views_in_use V = {views, nviews, dlstream};
      ok = pack_value(st, p, i, buf, args[i], &V) == 0;
      nviews = V.count;
    }
  }
  /* __cuda_array_interface__ v3: the memory of an array whose producer named a stream is
   * used after the work queued there (an event waited for, not a host synchronization) */
  for (int i = 0; ok && i < nviews; i++) {
    if (!views[i].producer) continue;
    nbc_status_t s = nbc_stream_wait_handle(stream, views[i].producer);
    if (s != NBC_OK) ok = nbc__py_raise_int(st, s) == 0;
  }
  if (ok && k->raises) {
    nbc_status_t s = nbc_debug_exception_clear(fn, stream);
    if (s != NBC_OK) ok = nbc__py_raise_int(st, s) == 0;
  }
  if (ok) {
    nbc_status_t s = nbc_launch_packed_ex(fn, grid, block, L->shared, stream, buf, size,
                                          k->cooperative ? NBC_LAUNCH_COOPERATIVE : 0);
    if (s != NBC_OK) ok = nbc__py_raise_int(st, s) == 0;
  }
  if (ok && k->raises) ok = raise_from_kernel(st, k, fn, stream) == 0;
  nbc_stream_destroy(temp);
  for (int i = 0; i < nviews; i++) {
    if (!views[i].host && !views[i].owner) continue;
    if (ok) {
      ok = nbc__py_array_view_finish(st, &views[i], 1) == 0;
    } else { /* keep the first error; release the rest quietly */
      PyObject *t, *v, *tb;
      PyErr_Fetch(&t, &v, &tb);
      nbc__py_array_view_finish(st, &views[i], 0);
      PyErr_Restore(t, v, tb);
    }
  }
  if (buf != stackbuf) free(buf);
  if (views != stackviews) free(views);
  if (!ok) return NULL;
  Py_RETURN_NONE;
}

/* A launch dimension, as numba's normalize_kernel_dimensions reads it: an integer, or a
 * tuple or list of one to three integers (numpy integers too); numba's ValueError for more
 * than three and TypeError for what is not an integer, with its messages, and a ValueError
 * for a value cuLaunchKernel cannot take (negative, or beyond 32 bits: 2**32 + 1 must not
 * launch as 1). */
int nbc__py_dims_arg(PyObject *o, unsigned out[3], const char *what) {
  out[0] = out[1] = out[2] = 1;
  if (PyLong_CheckExact(o)) { /* the common case */
    long long v = PyLong_AsLongLong(o);
    if (v < 0 || v > UINT_MAX) goto range;
    out[0] = (unsigned)v;
    return 0;
  }
  if (PyList_Check(o)) { /* as a tuple: an item's __index__ cannot change it under us */
    PyObject *t = PyList_AsTuple(o);
    int rc = t ? nbc__py_dims_arg(t, out, what) : -1;
    Py_XDECREF(t);
    return rc;
  }
  int seq = PyTuple_Check(o);
  Py_ssize_t n = seq ? PyTuple_GET_SIZE(o) : 1;
  PyObject *const *items = seq ? &PyTuple_GET_ITEM(o, 0) : &o;
  /* numba's messages show the dimension as the list it made of it */
  const char *bad = n > 3 || n < 1 ? "%s must be a sequence of 1, 2 or 3 integers, got %R"
                                   : NULL;
  for (Py_ssize_t i = 0; !bad && i < n; i++) {
    if (!PyIndex_Check(items[i])) { /* numbers.Integral, bool included */
      bad = "%s must be a sequence of integers, got %R";
      break;
    }
    long long v = PyNumber_AsSsize_t(items[i], NULL);
    if (v == -1 && PyErr_Occurred()) PyErr_Clear();
    if (v < 0 || v > UINT_MAX) goto range;
    out[i] = (unsigned)v;
  }
  if (!bad) return 0;
  PyObject *shown = seq ? PySequence_List(o) : Py_BuildValue("[O]", o);
  if (shown)
    PyErr_Format(n > 3 || n < 1 ? PyExc_ValueError : PyExc_TypeError, bad, what, shown);
  Py_XDECREF(shown);
  return -1;
range:
  PyErr_Clear();
  PyErr_Format(PyExc_ValueError, "%s must be an int or a tuple of 1 to 3 non-negative ints "
               "below 2**32, got %R", what, o);
  return -1;
}

static PyObject *launcher_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                     PyObject *kwnames) {
  if (kwnames && PyTuple_GET_SIZE(kwnames)) {
    PyErr_SetString(PyExc_TypeError, "kernels take no keyword arguments");
    return NULL;
  }
  return launch((LauncherObject *)self, args, PyVectorcall_NARGS(nargsf));
}

int nbc__py_warn_small_grid(nbc__py_state *st, const unsigned grid[3]) {
  unsigned long long blocks = (unsigned long long)grid[0] * grid[1] * grid[2];
  if (blocks >= 128) return 0;
  char msg[128];
  snprintf(msg, sizeof msg, "Grid size %llu will likely result in GPU under-utilization due "
           "to low occupancy.", blocks);
  return nbc__py_warn(st, "NumbaPerformanceWarning", msg);
}

/* A new launcher for the configuration key. */
PyObject *nbc__py_launcher_new(KernelObject *self, PyObject *key) {
  nbc__py_state *st = nbc__py_state_of((PyObject *)self);
  if (!PyTuple_Check(key) || PyTuple_GET_SIZE(key) < 2 || PyTuple_GET_SIZE(key) > 4) {
    PyErr_SetString(PyExc_ValueError, "must specify at least the griddim and blockdim: "
                    "kernel[griddim, blockdim] or kernel[griddim, blockdim, stream, "
                    "sharedmem]");
    return NULL;
  }
  LauncherObject *L = PyObject_GC_New(LauncherObject, st->LauncherType);
  if (!L) return NULL;
  L->vectorcall = launcher_vectorcall;
  L->kernel = (KernelObject *)Py_NewRef(self);
  L->stream = NULL;
  L->shared = 0;
  L->ntasks = -1;
  L->callbacks = NULL;
  PyObject_GC_Track(L);
  Py_ssize_t n = PyTuple_GET_SIZE(key);
  if (nbc__py_dims_arg(PyTuple_GET_ITEM(key, 0), L->grid, "griddim") < 0 ||
      nbc__py_dims_arg(PyTuple_GET_ITEM(key, 1), L->block, "blockdim") < 0)
    goto fail;
  if (n > 2) {
    PyObject *s = PyTuple_GET_ITEM(key, 2);
    nbc_stream_t *dummy, *temp;
    if (nbc__py_stream_arg(st, s, &dummy, &temp) < 0) goto fail; /* validate early */
    nbc_stream_destroy(temp);
    L->stream = Py_NewRef(s);
  }
  if (n > 3) {
    long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(key, 3));
    if (v < 0 || v > UINT_MAX) { /* cuLaunchKernel takes an unsigned int: no wrap to 0 */
      if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_OverflowError)) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "sharedmem must be an int from 0 to %u, got %R",
                     UINT_MAX, PyTuple_GET_ITEM(key, 3));
      }
      goto fail;
    }
    L->shared = (unsigned)v;
  }
  return (PyObject *)L;
fail:
  Py_DECREF(L);
  return NULL;
}

/* ------------------------------------------------------------ Launcher ---------------- */

static int launcher_traverse(LauncherObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->kernel);
  Py_VISIT(self->stream);
  Py_VISIT(self->callbacks);
  return 0;
}

static int launcher_clear(LauncherObject *self) {
  Py_CLEAR(self->kernel);
  Py_CLEAR(self->stream);
  Py_CLEAR(self->callbacks);
  return 0;
}

static void launcher_dealloc(LauncherObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  launcher_clear(self);
  tp->tp_free(self);
  Py_DECREF(tp);
}

static PyMemberDef launcher_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(LauncherObject, vectorcall), READONLY, NULL},
    {"sharedmem", T_UINT, offsetof(LauncherObject, shared), READONLY,
     "dynamic shared memory bytes per block"},
    {NULL, 0, 0, 0, NULL},
};

/* griddim / blockdim: the configuration's dimensions as numba normalises them, (x, y, z).
 * A forall launcher's grid depends on the kernel's largest block: None until launched. */
static PyObject *launcher_griddim(LauncherObject *self, void *c) {
  (void)c;
  if (self->ntasks >= 0) Py_RETURN_NONE;
  return Py_BuildValue("(III)", self->grid[0], self->grid[1], self->grid[2]);
}
static PyObject *launcher_blockdim(LauncherObject *self, void *c) {
  (void)c;
  if (self->ntasks >= 0 && self->block[0] == 0) Py_RETURN_NONE;
  return Py_BuildValue("(III)", self->block[0], self->block[1], self->block[2]);
}
/* stream: the stream object given, else the default stream (numba's Stream for 0). */
static PyObject *launcher_stream(LauncherObject *self, void *c) {
  (void)c;
  if (self->stream && self->stream != Py_None &&
      !(PyLong_CheckExact(self->stream) && PyLong_AsLong(self->stream) == 0))
    return Py_NewRef(self->stream);
  return nbc__py_default_stream(nbc__py_state_of((PyObject *)self));
}
static PyObject *launcher_dispatcher(LauncherObject *self, void *c) {
  (void)c;
  return Py_NewRef((PyObject *)self->kernel);
}
/* pre_launch_callbacks: a list of its own; reading it takes the launcher out of the
 * kernel's reuse (k[g, b] then makes a new one, as every numba configuration is new). */
static PyObject *launcher_callbacks(LauncherObject *self, void *c) {
  (void)c;
  if (!self->callbacks) {
    self->callbacks = PyList_New(0);
    if (!self->callbacks) return NULL;
  }
  KernelObject *k = self->kernel;
  if (k->last_launcher == (PyObject *)self) {
    Py_CLEAR(k->last_config);
    Py_CLEAR(k->last_launcher);
  }
  return Py_NewRef(self->callbacks);
}

static PyGetSetDef launcher_getset[] = {
    {"griddim", (getter)launcher_griddim, NULL, "(x, y, z) blocks", NULL},
    {"blockdim", (getter)launcher_blockdim, NULL, "(x, y, z) threads per block", NULL},
    {"stream", (getter)launcher_stream, NULL, "the stream launches go to", NULL},
    {"dispatcher", (getter)launcher_dispatcher, NULL, "the kernel", NULL},
    {"pre_launch_callbacks", (getter)launcher_callbacks, NULL,
     "callables called as cb(kernel, launcher) before each launch", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef launcher_methods[] = {
    {"__reduce__", nbc__py_launcher_reduce, METH_NOARGS,
     "__reduce__($self, /)\n--\n\n"
     "Pickles the configuration as kernel.configure(griddim, blockdim, stream, sharedmem)."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot launcher_slots[] = {
    {Py_tp_dealloc, launcher_dealloc},
    {Py_tp_methods, launcher_methods},
    {Py_tp_traverse, launcher_traverse},
    {Py_tp_clear, launcher_clear},
    {Py_tp_getset, launcher_getset},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_members, launcher_members},
    {0, NULL},
};

static PyType_Spec launcher_spec = {
    .name = "nbcuda._KernelLauncher",
    .basicsize = sizeof(LauncherObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION |
             Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_VECTORCALL,
    .slots = launcher_slots,
};

int nbc__py_launcher_init(PyObject *module, nbc__py_state *st) {
  st->LauncherType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &launcher_spec, NULL);
  return st->LauncherType ? 0 : -1;
}
