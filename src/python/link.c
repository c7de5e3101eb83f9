/* link.c — loading a kernel with the files it links: numba's jit(link=[...]) and the files of
 * the declare_device() functions it calls.
 *
 * The kernel layer links (nbc_module_link_ex, nbc_link_cubin/ptx): it gives each file the
 * kind its extension names as numba-cuda's linker does (nbc_image_kind_of_extension: .ptx,
 * .cubin, .fatbin, .ltoir, .o, .a, and .cu compiled with NVRTC for the device, to LTO-IR when
 * the kernel itself is LTO-IR; other extensions get numba's "Don't know how to link file with
 * extension"). What stays here is Python's part: files are read with io.open (so a missing
 * one is a FileNotFoundError naming it) at each load (one per context), LinkableCode objects
 * (linkable.c) give their data and their class's kind, and nbcuda.config's
 * CUDA_NVRTC_EXTRA_SEARCH_PATHS is read when a .cu is linked. NVRTC compiles a given .cu text
 * once per process (nbc_nvrtc_compile keeps what it made), so an edited file is compiled
 * again at the next load, and kernels already loaded keep theirs.
 *
 * compile_all (compile.c) asks for the same files' code without linking it
 * (nbc__py_link_codes): CUDA C++ compiled by NVRTC, the rest as LinkableCode objects.
 */
#include "nbcuda_py.h"

#include <stdlib.h>
#include <string.h>

PyObject *nbc__py_read_file(PyObject *path, const char *mode) {
  PyObject *io = PyImport_ImportModule("io");
  PyObject *f = io ? PyObject_CallMethod(io, "open", "Os", path, mode) : NULL;
  PyObject *data = f ? PyObject_CallMethod(f, "read", NULL) : NULL;
  if (f) { /* closed also after a failed read, whose error is kept */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *closed = PyObject_CallMethod(f, "close", NULL);
    if (closed) {
      Py_DECREF(closed);
      PyErr_Restore(type, value, tb);
    } else { /* the close failed: its error stands */
      Py_XDECREF(type);
      Py_XDECREF(value);
      Py_XDECREF(tb);
      Py_CLEAR(data);
    }
    Py_DECREF(f);
  }
  Py_XDECREF(io);
  return data;
}

/* The whole file as bytes (NUL-terminated, as bytes are). */
static PyObject *read_bytes(PyObject *path) {
  PyObject *data = nbc__py_read_file(path, "rb");
  if (data && !PyBytes_Check(data)) {
    PyErr_SetString(PyExc_TypeError, "reading a link file gave no bytes");
    Py_CLEAR(data);
  }
  return data;
}

PyObject *nbc__py_link_paths(nbc__py_state *st, PyObject *link) {
  if (!link || link == Py_None) return PyTuple_New(0);
  int single = PyUnicode_Check(link) || PyBytes_Check(link) ||
               PyObject_TypeCheck(link, st->LinkableCodeType);
  PyObject *seq = single ? Py_BuildValue("(O)", link) : PySequence_Tuple(link);
  if (!seq) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "link must be a list of file paths, not %R", link);
    return NULL;
  }
  PyObject *paths = PyTuple_New(PyTuple_GET_SIZE(seq));
  for (Py_ssize_t i = 0; paths && i < PyTuple_GET_SIZE(seq); i++) {
    if (PyObject_TypeCheck(PyTuple_GET_ITEM(seq, i), st->LinkableCodeType)) {
      PyTuple_SET_ITEM(paths, i, Py_NewRef(PyTuple_GET_ITEM(seq, i)));
      continue;
    }
    PyObject *p = PyOS_FSPath(PyTuple_GET_ITEM(seq, i));
    if (p && PyBytes_Check(p))
      Py_SETREF(p, PyUnicode_DecodeFSDefaultAndSize(PyBytes_AS_STRING(p), PyBytes_GET_SIZE(p)));
    if (!p) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError,
                   "link: %R is not a file path or LinkableCode (nbcuda links files: .cu, "
                   ".ptx, .cubin, .fatbin, .ltoir, .o, .a)",
                   PyTuple_GET_ITEM(seq, i));
      Py_CLEAR(paths);
      break;
    }
    PyTuple_SET_ITEM(paths, i, p);
  }
  Py_DECREF(seq);
  return paths;
}

/* CUDA C++ text compiled by NVRTC for sm_<major><minor> (nbc_nvrtc_compile's flags), searching
 * nbcuda.config.CUDA_NVRTC_EXTRA_SEARCH_PATHS for its headers: PTX or
 * LTO-IR as bytes; NULL with the exception set. */
static PyObject *compile_cu(nbc__py_state *st, const char *text, const char *name, int major,
                            int minor, unsigned flags) {
  char *out = NULL;
  size_t size = 0;
  PyObject *search = nbc__py_nvrtc_search_paths(st); /* nbcuda.config's, read now */
  const char *paths = search ? PyUnicode_AsUTF8(search) : NULL;
  if (!paths) {
    Py_XDECREF(search);
    return NULL;
  }
  nbc_status_t s;
  Py_BEGIN_ALLOW_THREADS s =
      nbc_nvrtc_compile_searching(text, name, major, minor, flags, paths, &out, &size);
  Py_END_ALLOW_THREADS PyObject *r =
      s == NBC_OK ? PyBytes_FromStringAndSize(out, (Py_ssize_t)size) : nbc__py_raise(st, s);
  Py_DECREF(search);
  free(out);
  return r;
}

/* The images to link: the kernel's code (PTX or LTO-IR), then each file of links of the kind
 * its extension names (a LinkableCode: its class's kind), CUDA C++ ones compiled by the kernel
 * layer at the link; *pkeep holds the bytes and names they point into, *psearch
 * nbcuda.config's NVRTC search paths when a CUDA C++ one is there. -1 with the exception set
 * (what was made is released). */
static int gather_images(nbc__py_state *st, const char *code, size_t size, int lto,
                         PyObject *links, nbc_image_t **pimages, PyObject **pkeep,
                         PyObject **psearch) {
  Py_ssize_t n = links ? PyTuple_GET_SIZE(links) : 0;
  nbc_image_t *images = PyMem_Calloc((size_t)n + 1, sizeof *images);
  PyObject *keep = PyList_New(0);
  *psearch = NULL;
  if (!images || !keep) {
    if (!images) PyErr_NoMemory();
    goto fail;
  }
  images[0] = (nbc_image_t){code, size, lto ? NBC_IMAGE_LTOIR : NBC_IMAGE_PTX, NULL};
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *item = PyTuple_GET_ITEM(links, i), *data = NULL, *name = NULL;
    const char *kindname = NULL;
    int in_memory = nbc__py_linkable(st, item, &kindname, &data, &name);
    if (in_memory < 0) goto fail;
    if (!in_memory) name = Py_NewRef(item);
    const char *path = PyUnicode_AsUTF8(name);
    int kept = path ? PyList_Append(keep, name) : -1;
    Py_DECREF(name); /* keep holds it */
    const char *dot = in_memory || !path ? NULL : strrchr(path, '.');
    nbc_image_kind_t kind = NBC_IMAGE_AUTO;
    nbc_status_t s = NBC_OK;
    if (kept == 0)
      s = nbc_image_kind_of_extension(in_memory ? kindname : dot ? dot + 1 : NULL, &kind);
    if (kept < 0 || s != NBC_OK) {
      Py_XDECREF(data);
      if (s != NBC_OK) nbc__py_raise(st, s);
      goto fail;
    }
    if (!in_memory) data = read_bytes(item);
    if (!data || PyList_Append(keep, data) < 0) {
      Py_XDECREF(data);
      goto fail;
    }
    Py_DECREF(data); /* keep holds it */
    if (kind == NBC_IMAGE_CUDA && !*psearch) {
      *psearch = nbc__py_nvrtc_search_paths(st); /* nbcuda.config's, read now */
      if (!*psearch || !PyUnicode_AsUTF8(*psearch)) goto fail;
    }
    images[i + 1] = (nbc_image_t){PyBytes_AS_STRING(data), (size_t)PyBytes_GET_SIZE(data),
                                  kind, path};
  }
  *pimages = images;
  *pkeep = keep;
  return 0;
fail:
  Py_XDECREF(keep);
  Py_CLEAR(*psearch);
  PyMem_Free(images);
  return -1;
}

int nbc__py_link_load(nbc__py_state *st, const char *code, size_t size, int lto,
                      PyObject *links, const nbc_module_load_options_t *options,
                      nbc_module_t **pmodule) {
  *pmodule = NULL;
  nbc_image_t *images = NULL;
  PyObject *keep = NULL, *search = NULL;
  if (gather_images(st, code, size, lto, links, &images, &keep, &search) < 0) return -1;
  nbc_module_load_options_t o = *options;
  o.nvrtc_search_paths = search ? PyUnicode_AsUTF8(search) : NULL;
  int count = (int)PyTuple_GET_SIZE(links) + 1, rc = 0;
  nbc_status_t s;
  Py_BEGIN_ALLOW_THREADS s = nbc_module_link_ex(images, count, &o, pmodule);
  Py_END_ALLOW_THREADS if (s != NBC_OK) rc = nbc__py_raise_int(st, s);
  Py_DECREF(keep);
  Py_XDECREF(search);
  PyMem_Free(images);
  return rc;
}

/* nbc__py_link_cubin, or with ptx nbc__py_link_ptx. */
static PyObject *link_code(nbc__py_state *st, const char *code, size_t size, int lto,
                           PyObject *links, const nbc_module_load_options_t *options,
                           int ptx) {
  int major = 0, minor = 0;
  nbc_image_t *images = NULL;
  PyObject *keep = NULL, *search = NULL;
  if (nbc__py_current_cc(st, &major, &minor) < 0 ||
      gather_images(st, code, size, lto, links, &images, &keep, &search) < 0)
    return NULL;
  nbc_module_load_options_t o = *options;
  o.nvrtc_search_paths = search ? PyUnicode_AsUTF8(search) : NULL;
  int count = (links ? (int)PyTuple_GET_SIZE(links) : 0) + 1;
  void *out = NULL;
  char *text = NULL;
  size_t out_size = 0;
  nbc_status_t s;
  Py_BEGIN_ALLOW_THREADS s =
      ptx ? nbc_link_ptx(images, count, major, minor, &o, &text, &out_size)
          : nbc_link_cubin(images, count, major, minor, &o, &out, &out_size);
  Py_END_ALLOW_THREADS if (ptx) out = text;
  PyObject *r = NULL;
  if (s != NBC_OK)
    nbc__py_raise(st, s);
  else if (ptx)
    r = PyUnicode_DecodeUTF8(text, (Py_ssize_t)out_size, "replace");
  else
    r = PyBytes_FromStringAndSize(out, (Py_ssize_t)out_size);
  nbc_cubin_free(out);
  Py_DECREF(keep);
  Py_XDECREF(search);
  PyMem_Free(images);
  return r;
}

PyObject *nbc__py_link_cubin(nbc__py_state *st, const char *code, size_t size, int lto,
                             PyObject *links, const nbc_module_load_options_t *options) {
  return link_code(st, code, size, lto, links, options, 0);
}

PyObject *nbc__py_link_ptx(nbc__py_state *st, const char *code, size_t size, int lto,
                           PyObject *links, const nbc_module_load_options_t *options) {
  return link_code(st, code, size, lto, links, options, 1);
}

/* CUDA C++ compiled for compile_all: a PTXSource or LTOIR object named after its source. */
static PyObject *compiled_code(nbc__py_state *st, PyObject *module, const char *text,
                               PyObject *name, int major, int minor, unsigned flags) {
  const char *n = PyUnicode_AsUTF8(name);
  PyObject *code = n ? compile_cu(st, text, n, major, minor, flags) : NULL;
  PyObject *cls = code ? PyObject_GetAttrString(
                             module, flags & NBC_NVRTC_LTO ? "LTOIR" : "PTXSource")
                       : NULL;
  PyObject *r = cls ? PyObject_CallFunction(cls, "OO", code, name) : NULL;
  Py_XDECREF(cls);
  Py_XDECREF(code);
  return r;
}

PyObject *nbc__py_link_codes(nbc__py_state *st, PyObject *module, PyObject *links, int fp16,
                             int major, int minor, unsigned flags) {
  PyObject *codes = PyList_New(0);
  Py_ssize_t n = links ? PySequence_Fast_GET_SIZE(links) : 0;
  for (Py_ssize_t i = 0; codes && i < n; i++) {
    PyObject *item = PySequence_Fast_GET_ITEM(links, i), *data = NULL, *name = NULL;
    PyObject *obj = PyObject_TypeCheck(item, st->LinkableCodeType)
                        ? Py_NewRef(item)
                        : PyObject_CallMethod((PyObject *)st->LinkableCodeType, "from_path",
                                              "(O)", item);
    const char *kind = NULL;
    if (!obj || nbc__py_linkable(st, obj, &kind, &data, &name) < 0) {
      Py_XDECREF(obj);
      Py_CLEAR(codes);
      break;
    }
    if (strcmp(kind, "cu") == 0)
      Py_SETREF(obj, compiled_code(st, module, PyBytes_AS_STRING(data), name, major, minor,
                                   flags));
    Py_DECREF(data);
    Py_DECREF(name);
    if (!obj || PyList_Append(codes, obj) < 0) Py_CLEAR(codes);
    Py_XDECREF(obj);
  }
  if (codes && fp16) {
    const char *shim = nbc_fp16_shim_source();
    PyObject *name = PyUnicode_FromString("nbcuda_fp16.cu");
    PyObject *obj = !shim   ? PyErr_NoMemory()
                    : name ? compiled_code(st, module, shim, name, major, minor, flags)
                           : NULL;
    Py_XDECREF(name);
    if (!obj || PyList_Append(codes, obj) < 0) Py_CLEAR(codes);
    Py_XDECREF(obj);
  }
  return codes;
}
