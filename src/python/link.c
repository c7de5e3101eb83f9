/* link.c — loading a kernel with the files it links: numba's jit(link=[...]) and the files of
 * the declare_device() functions it calls.
 *
 * The kernel's own code (PTX or LTO-IR) and every file are linked by nvJitLink for the current
 * device (nbc_module_link) and loaded. Files go by extension, as numba-cuda's linker takes
 * them: .cu is compiled with NVRTC for the device (to LTO-IR when the kernel itself is LTO-IR,
 * else to PTX); .ptx, .cubin, .fatbin, .ltoir, relocatable objects (.o, nvcc -dc) and static
 * libraries of them (.a) are read as they are; other extensions get numba's "Don't know how
 * to link file with extension". jit(max_registers=) applies to the linked code. Files are read and
 * compiled at each load (one per context), so an edited file is seen by the next process, not
 * by kernels already loaded.
 */
#include "nbcuda_py.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The whole file, malloc'd with a NUL after it; NULL with OSError. */
static char *read_file(const char *path, size_t *psize) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    PyErr_SetFromErrnoWithFilename(PyExc_OSError, path);
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap + 1);
  while (buf) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap) break;
    char *bigger = realloc(buf, cap * 2 + 1);
    if (!bigger) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = bigger;
    cap *= 2;
  }
  int failed = ferror(f);
  fclose(f);
  if (!buf || failed) {
    free(buf);
    if (failed) {
      errno = EIO;
      PyErr_SetFromErrnoWithFilename(PyExc_OSError, path);
    } else {
      PyErr_NoMemory();
    }
    return NULL;
  }
  buf[n] = '\0';
  *psize = n;
  return buf;
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

int nbc__py_link_load(nbc__py_state *st, const char *code, size_t size, PyObject *links,
                      unsigned max_registers, nbc_module_t **pmodule) {
  *pmodule = NULL;
  Py_ssize_t n = PyTuple_GET_SIZE(links);
  nbc_context_t *ctx = NULL;
  nbc_status_t s = nbc_current_context(-1, &ctx);
  if (s != NBC_OK) return nbc__py_raise_int(st, s);
  int major = 0, minor = 0;
  nbc_device_compute_capability(nbc_context_device(ctx), &major, &minor);
  int lto = size >= 4 && (unsigned char)code[0] == 0xED && code[1] == 0x43 && code[2] == 0x4E &&
            code[3] == 0x7F;
  nbc_image_t *images = PyMem_Calloc((size_t)n + 1, sizeof *images);
  char **owned = PyMem_Calloc((size_t)n + 1, sizeof *owned);
  int rc = -1;
  if (!images || !owned) {
    PyErr_NoMemory();
    goto done;
  }
  images[0] = (nbc_image_t){code, size, lto ? NBC_IMAGE_LTOIR : NBC_IMAGE_PTX};
  for (Py_ssize_t i = 0; i < n; i++) {
    const char *path = PyUnicode_AsUTF8(PyTuple_GET_ITEM(links, i));
    if (!path) goto done;
    const char *dot = strrchr(path, '.');
    nbc_image_kind_t kind = NBC_IMAGE_PTX;
    int cu = 0;
    if (ends_with(path, ".cu"))
      cu = 1;
    else if (ends_with(path, ".ptx"))
      kind = NBC_IMAGE_PTX;
    else if (ends_with(path, ".cubin"))
      kind = NBC_IMAGE_CUBIN;
    else if (ends_with(path, ".fatbin"))
      kind = NBC_IMAGE_FATBIN;
    else if (ends_with(path, ".ltoir"))
      kind = NBC_IMAGE_LTOIR;
    else if (ends_with(path, ".o"))
      kind = NBC_IMAGE_OBJECT;
    else if (ends_with(path, ".a"))
      kind = NBC_IMAGE_LIBRARY;
    else {
      PyErr_Format(st->LinkerError, "Don't know how to link file with extension %s",
                   dot ? dot : "(none)");
      goto done;
    }
    size_t bytes = 0;
    char *data = read_file(path, &bytes);
    if (!data) goto done;
    if (cu) {
      char *out = NULL;
      size_t out_size = 0;
      Py_BEGIN_ALLOW_THREADS s =
          nbc_nvrtc_compile(data, path, major, minor, lto, &out, &out_size);
      Py_END_ALLOW_THREADS free(data);
      if (s != NBC_OK) {
        nbc__py_raise(st, s);
        goto done;
      }
      data = out;
      bytes = out_size;
      kind = lto ? NBC_IMAGE_LTOIR : NBC_IMAGE_PTX;
    }
    owned[i] = data;
    images[i + 1] = (nbc_image_t){data, bytes, kind};
  }
  nbc_module_load_options_t options = {.max_registers = max_registers};
  Py_BEGIN_ALLOW_THREADS s = nbc_module_link_ex(images, (int)n + 1, &options, pmodule);
  Py_END_ALLOW_THREADS if (s != NBC_OK) nbc__py_raise(st, s);
  else rc = 0;
done:
  for (Py_ssize_t i = 0; owned && i < n; i++)
    free(owned[i]);
  PyMem_Free(owned);
  PyMem_Free(images);
  return rc;
}
