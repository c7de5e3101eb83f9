/* devicearray.h — private header shared by the three files of nbcuda's device arrays, one
 * section per file: devicearray.c (the DeviceNDArray object: its memory, dtype, copies,
 * attributes and type), devicearray_index.c (d[...] and the other views: reshape, ravel,
 * squeeze, split, view(dtype), bind, and transpose), devicearray_dlpack.c (DLPack export and
 * import) and devicearray_new.c (the module
 * functions that make arrays, the readers of host buffers and __cuda_array_interface__ they
 * use, and the view a kernel launch takes of any array argument). Nothing else includes it:
 * the rest of the extension reaches device arrays through nbcuda_py.h.
 *
 * ArrayObject is here so that each of the three reads and writes the fields directly, with
 * no accessor calls on the hot paths (to_device, d[i], the launch view).
 */
#ifndef NBCUDA_DEVICEARRAY_H
#define NBCUDA_DEVICEARRAY_H

#include "nbcuda_py.h"

#define INLINE_DIMS 4

typedef struct {
  PyObject_HEAD
  nbc_devptr_t data;
  size_t nbytes;
  int ndim;
  /* dims for up to INLINE_DIMS dimensions, else PyMem_Malloc'd (nbc__py_array_set_ndim): the
   * object then stays small enough for Python's small-object allocator */
  int64_t *shape, *strides;
  char typestr[16];
  char kind;
  int itemsize;
  int owned;         /* free the memory when the object dies */
  PyObject *base;    /* the object whose memory this wraps, or NULL */
  PyObject *context; /* the Context the memory belongs to, or NULL */
  nbc_context_t *cctx; /* its C context (NULL: wrapped memory, context unknown) */
  unsigned lifetime;   /* nbc_context_lifetime(cctx) when the memory was allocated */
  /* numpy dtype: made on first use from kind and itemsize, except for kind 'V' (structured),
   * whose exact dtype is set when the array is made */
  PyObject *dtype;
  /* the stream the array is bound to (numba's DeviceNDArray.stream): a Stream or an object
   * with __cuda_stream__, or NULL for numba's 0; methods given stream=0 use it */
  PyObject *stream;
  /* the code of its numba type for lazy kernels' dispatch (kernel.c's fast_type_code),
   * computed on the first launch that asks: an array's geometry never changes once made;
   * 0 until then (and for arrays that have no such code) */
  uint64_t type_code;
  int64_t dims[2 * INLINE_DIMS];
} ArrayObject;

/* The module state an array (or any object of the module) belongs to. */
static inline nbc__py_state *state(PyObject *self) { return nbc__py_state_of(self); }

/* ================================================================== devicearray.c === */
/* Frees the dead arrays kept for reuse (module_clear). */
void nbc__py_array_freelist_clear(nbc__py_state *st);
/* numba's ValueError for a copy of a buffer that is not one contiguous region. */
extern const char nbc__py_noncontig_msg[];
/* Sets the number of dimensions, with room for the shape and strides; -1 with MemoryError. */
int nbc__py_array_set_ndim(ArrayObject *a, int ndim);
/* numpy's typestr of (kind, itemsize) into out (16 bytes): "<f4", "|b1", "|V16". */
void nbc__py_set_typestr(char *out, char kind, int itemsize);
/* numpy's typestr of a dtype object (its str, "<M8[D]") into out (16 bytes); -1 with
 * TypeError when it does not fit. Dates take their typestr so: it holds their unit. */
int nbc__py_set_dtype_typestr(char *out, PyObject *dtype);
/* A dtype argument (nbcuda type, numpy dtype, anything numpy.dtype() takes) as its kind and
 * itemsize; for a structured dtype the numpy dtype itself in *precord (a new reference, else
 * NULL). 0, or -1 with TypeError. */
int nbc__py_dtype_arg(nbc__py_state *st, PyObject *dtype, char *pkind, int *pitemsize,
                      PyObject **precord);
/* A new, empty array object (no memory, no geometry); NULL with MemoryError. */
ArrayObject *nbc__py_array_alloc(nbc__py_state *st);
/* Allocates device memory for a's geometry (a->nbytes) in the current context; 0 or -1. */
int nbc__py_array_allocate(nbc__py_state *st, ArrayObject *a);
/* 0 while a's memory is there; -1 with CudaAPIError naming call once its context was reset. */
int nbc__py_array_alive(nbc__py_state *st, const ArrayObject *a, const char *call);
/* Whether a is contiguous in order 'C' or 'F'. */
int nbc__py_is_contig(const ArrayObject *a, char order);
/* a's element count from its shape; -1 with ValueError for a negative or too large one. */
int nbc__py_checked_count(const ArrayObject *a, int64_t *pcount);
/* Dense strides for a's shape in order 'C' or 'F'. */
void nbc__py_array_dense_strides(ArrayObject *a, char order);
/* Copies host to device and device to host, on s (NULL: synchronously), with the GIL
 * released for large copies. */
nbc_status_t nbc__py_copy_htod(nbc_devptr_t dst, const void *src, size_t n, nbc_stream_t *s);
nbc_status_t nbc__py_copy_dtoh(void *dst, nbc_devptr_t src, size_t n, nbc_stream_t *s);
/* The same into the memory of host (NULL or None: memory nbcuda has just made): without a
 * stream, when that memory is pageable (nbcuda's own, or what nbc__py_numpy_pageable vouches
 * for), through the context's page-locked staging buffer (nbc_memcpy_dtoh_pageable). */
nbc_status_t nbc__py_copy_dtoh_into(nbc__py_state *st, PyObject *host, void *dst,
                                    nbc_devptr_t src, size_t n, nbc_stream_t *s);
/* Device to device (a peer copy between two contexts' arrays), with the GIL released for large
 * copies; on the default stream, ordered after and before other work there, not waited for. */
nbc_status_t nbc__py_copy_dtod(const ArrayObject *dst, const ArrayObject *src, size_t n);
/* The stream a method given `stream` uses: arg, or self's own for 0 (borrowed). */
PyObject *nbc__py_own_stream(const ArrayObject *self, PyObject *arg);
/* The stream an array is to be bound to, checked: a new reference in *pout, or NULL for none;
 * 0, or -1 with TypeError. */
int nbc__py_stream_to_bind(nbc__py_state *st, PyObject *obj, PyObject **pout);
/* Waits for a copy queued on s (NULL: the copy was synchronous) whose host buffer nbcuda
 * made and reads or frees at once. */
nbc_status_t nbc__py_wait_copy(nbc_stream_t *s);
/* self's numpy dtype, made on first use; a new reference, or NULL with an exception. */
PyObject *nbc__py_array_dtype_obj(ArrayObject *self);
/* numba's "incompatible dtype" check of self's dtype against other (borrowed); 0 or -1. */
int nbc__py_check_dtype(ArrayObject *self, PyObject *other);
/* copy_to_host(ary=None, stream=0). */
PyObject *nbc__py_array_copy_to_host(ArrayObject *self, PyObject *const *args,
                                     Py_ssize_t nargsf, PyObject *kwnames);
/* copy_to_device(ary, stream_obj): a host buffer or device array into self; 0 or -1. */
int nbc__py_array_copy_from(nbc__py_state *st, ArrayObject *self, PyObject *ary,
                            PyObject *stream_obj);

/* ============================================================ devicearray_index.c === */
/* d[key] and d[key] = value, for the type's mapping slots. */
PyObject *nbc__py_array_subscript(ArrayObject *self, PyObject *key);
int nbc__py_array_ass_subscript(ArrayObject *self, PyObject *key, PyObject *value);
/* The methods of the same names, for devicearray.c's method table. */
PyObject *nbc__py_array_getitem(ArrayObject *self, PyObject *args, PyObject *kwargs);
PyObject *nbc__py_array_setitem(ArrayObject *self, PyObject *args, PyObject *kwargs);
PyObject *nbc__py_array_reshape(ArrayObject *self, PyObject *args, PyObject *kwargs);
PyObject *nbc__py_array_ravel(ArrayObject *self, PyObject *args, PyObject *kwargs);
PyObject *nbc__py_array_view_dtype(ArrayObject *self, PyObject *dtype);
PyObject *nbc__py_array_squeeze(ArrayObject *self, PyObject *args, PyObject *kwargs);
PyObject *nbc__py_array_split(ArrayObject *self, PyObject *args, PyObject *kwargs);
/* transpose(axes=None); args NULL for .T. */
PyObject *nbc__py_array_transpose(ArrayObject *self, PyObject *args, PyObject *kwargs);
PyObject *nbc__py_array_bind(ArrayObject *self, PyObject *args, PyObject *kwargs);

/* ============================================================== devicearray_new.c === */
/* A contiguous host buffer of obj (numpy.asarray for objects without one): its kind letter
 * in *pkind, for kind 'V' its numpy dtype in *precord, numpy.asarray's array in *pholder
 * (new references, else NULL). 0, or -1 with an exception and nothing held. */
int nbc__py_host_buffer(nbc__py_state *st, PyObject *obj, Py_buffer *view, int writable,
                        PyObject **pholder, char *pkind, int *pitemsize, PyObject **precord);
/* to_device, device_array, device_array_like, from_cuda_array_interface, as_cuda_array,
 * is_cuda_array: added to the module by nbc__py_devicearray_init. */
extern PyMethodDef nbc__py_array_functions[];

/* ============================================================ devicearray_dlpack.c === */
/* The array's __dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None) and
 * __dlpack_device__(), for devicearray.c's method table. */
PyObject *nbc__py_array_dlpack(ArrayObject *self, PyObject *args, PyObject *kwargs);
PyObject *nbc__py_array_dlpack_device(ArrayObject *self, PyObject *unused);
/* from_dlpack(obj): a device array over the memory of obj's DLPack tensor (no copy), which
 * holds the tensor until it dies; for devicearray_new.c's function table. */
PyObject *nbc__py_from_dlpack(PyObject *module, PyObject *obj);

#endif /* NBCUDA_DEVICEARRAY_H */
