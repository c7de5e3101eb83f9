/* library.c — the library kernels (the .py files of src/library, embedded in the C library)
 * for the binding's kernels made in Python: the source of the ones run as they are
 * (nbcuda.random's device functions, cuda.reduce's kernel) and the templates filled per
 * signature (vectorize's and guvectorize's kernels), as C strings or Python str, or an
 * exception.
 */
#include "nbcuda_py.h"

#include <stdlib.h>

const char *nbc__py_library_source(const char *name) {
  const char *text = nbc_library_kernel_source(name, NULL);
  if (!text) PyErr_Format(PyExc_RuntimeError, "nbcuda was built without its library kernel "
                          "'%s'", name);
  return text;
}

PyObject *nbc__py_library_fill(nbc__py_state *st, const char *name, const char *const *pairs) {
  char *text = NULL;
  nbc_status_t rc = nbc_library_kernel_fill(name, pairs, &text);
  if (rc != NBC_OK) return nbc__py_raise(st, rc);
  PyObject *s = PyUnicode_FromString(text);
  free(text);
  return s;
}
