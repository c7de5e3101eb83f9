/* sass.c — SASS listings for Kernel.inspect_sass() and their control flow graphs for
 * inspect_sass_cfg(): nvdisasm run on the kernel's cubin, as numba-cuda runs it (`nvdisasm -gi
 * FILE`: line info in the listing; `nvdisasm -cfg FILE`: the graph in DOT).
 *
 * nvdisasm reads only files: the cubin goes to a temporary file (mkstemp), removed after the
 * run. nvdisasm is found by the C library (nbc_toolkit_find_program: PATH, then
 * $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin, then a Python-packaged toolkit on
 * sys.path); when none has it, or it cannot run, RuntimeError says so (numba's message, with
 * the places tried); when it fails, RuntimeError carries its stderr.
 * The GIL is released while it runs.
 */
#include "nbcuda_py.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char nvdisasm_missing[] =
    "nvdisasm was not found or could not be executed. It is included with the CUDA toolkit: "
    "install the toolkit on your system or set CUDA_HOME to it.";

/* nvdisasm's path in buf, or 0 when none is found (nbc_last_error() lists the places tried):
 * the C library's search (nbc_toolkit_find_program: PATH, the toolkit, the wheels) with the
 * entries of sys.path as the site folders where pip's nvidia-cuda-nvdisasm may be. */
static int find_nvdisasm(char *buf, size_t size) {
  PyObject *sys_path = PySys_GetObject("path"); /* borrowed */
  Py_ssize_t n = sys_path && PyList_Check(sys_path) ? PyList_GET_SIZE(sys_path) : 0;
  const char **sites = PyMem_Calloc((size_t)n + 1, sizeof *sites);
  if (!sites) return 0;
  Py_ssize_t k = 0;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *item = PyList_GET_ITEM(sys_path, i);
    const char *dir = PyUnicode_Check(item) ? PyUnicode_AsUTF8(item) : NULL;
    if (!dir) {
      PyErr_Clear();
      continue;
    }
    sites[k++] = *dir ? dir : ".";
  }
  const char *path = NULL;
  int found = nbc_toolkit_find_program("nvdisasm", sites, &path) == NBC_OK &&
              snprintf(buf, size, "%s", path) < (int)size;
  PyMem_Free(sites);
  return found;
}

/* Reads all of fd into a malloc'd, NUL-terminated buffer (NULL when out of memory). */
static char *read_all(int fd, size_t *plen) {
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  while (buf) {
    if (len + 1 == cap) {
      char *bigger = realloc(buf, cap *= 2);
      if (!bigger) {
        free(buf);
        return NULL;
      }
      buf = bigger;
    }
    ssize_t n = read(fd, buf + len, cap - len - 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    len += (size_t)n;
  }
  if (buf) buf[len] = '\0';
  *plen = len;
  return buf;
}

typedef struct {
  const char *tool, *flag, *file;
  char *out, *err; /* malloc'd */
  size_t out_len, err_len;
  int status;      /* waitpid's; -1 when the child could not be made */
  int exec_failed; /* the exec itself failed (127 from the child) */
} run_result;

/* Runs `tool <flag> file` (-gi, -cfg), collecting stdout and stderr. */
static void run_tool(run_result *r) {
  int out[2], err[2];
  r->status = -1;
  if (pipe(out) != 0) return;
  if (pipe(err) != 0) {
    close(out[0]);
    close(out[1]);
    return;
  }
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(err[1], 2);
    close(out[0]);
    close(err[0]);
    execl(r->tool, r->tool, r->flag, r->file, (char *)NULL);
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  if (pid < 0) {
    close(out[0]);
    close(err[0]);
    return;
  }
  /* nvdisasm writes little to stderr: draining stdout first cannot block it for long, and
   * stderr's pipe buffer holds what it writes on failure. */
  r->out = read_all(out[0], &r->out_len);
  r->err = read_all(err[0], &r->err_len);
  close(out[0]);
  close(err[0]);
  while (waitpid(pid, &r->status, 0) < 0 && errno == EINTR) {
  }
  r->exec_failed = WIFEXITED(r->status) && WEXITSTATUS(r->status) == 127 && r->out_len == 0;
}

PyObject *nbc__py_disassemble(nbc__py_state *st, PyObject *cubin, const char *flag) {
  (void)st;
  char tool[4096];
  if (!find_nvdisasm(tool, sizeof tool)) {
    PyErr_Format(PyExc_RuntimeError, "%s (%s)", nvdisasm_missing, nbc_last_error());
    return NULL;
  }
  const char *tmpdir = getenv("TMPDIR");
  char file[4096];
  snprintf(file, sizeof file, "%s/nbcuda-sass-XXXXXX",
           tmpdir && *tmpdir ? tmpdir : "/tmp");
  int fd = mkstemp(file);
  if (fd < 0) return PyErr_SetFromErrnoWithFilename(PyExc_OSError, file);
  const char *data = PyBytes_AS_STRING(cubin);
  size_t left = (size_t)PyBytes_GET_SIZE(cubin);
  while (left) {
    ssize_t n = write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int saved = errno;
      close(fd);
      unlink(file);
      errno = saved ? saved : EIO;
      return PyErr_SetFromErrnoWithFilename(PyExc_OSError, file);
    }
    data += n;
    left -= (size_t)n;
  }
  close(fd);
  run_result r = {.tool = tool, .flag = flag, .file = file};
  Py_BEGIN_ALLOW_THREADS run_tool(&r);
  Py_END_ALLOW_THREADS unlink(file);
  PyObject *listing = NULL;
  if (r.status == -1 || r.exec_failed) {
    PyErr_SetString(PyExc_RuntimeError, nvdisasm_missing);
  } else if (!r.out || !r.err) {
    PyErr_NoMemory();
  } else if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
    PyErr_Format(PyExc_RuntimeError, "%s %s failed (status %d):\n%s", tool, flag,
                 WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1, r.err);
  } else {
    listing = PyUnicode_DecodeUTF8(r.out, (Py_ssize_t)r.out_len, "replace");
  }
  free(r.out);
  free(r.err);
  return listing;
}
