/* cache.c — jit(cache=True): compiled kernels kept on disk, as numba's cache=True keeps them,
 * so a new process skips the compiler (and libNVVM) for code compiled before.
 *
 * One file per (function, signature, compile options), named
 * <file stem>.<qualname>-<first line>.<64-bit hash of the key>.nbcuda, in the first of:
 * $NBCUDA_CACHE_DIR (else $NUMBA_CACHE_DIR)/<hash of the source directory>/, the source
 * file's __pycache__/ when it can be written, ${XDG_CACHE_HOME:-~/.cache}/nbcuda/<hash of the
 * source directory>/ — numba's order of locators. The file holds the source file's stamp
 * (modification time in ns and size), the full key and the result (code, symbol, return
 * type). A load is a hit only when the stamp and the key match exactly; anything else
 * (missing, stale, truncated, another key) is a miss, after which the kernel is compiled and
 * the file rewritten (to a temporary file renamed over it, so readers never see half a
 * file). Failing to write is not an error: the cache only saves time.
 *
 * The key: nbcuda's version and the size and time of the extension module's own file (a
 * rebuilt nbcuda never reads an older one's code), the source path, qualname and first line,
 * the signature, every compile option, the environment variables that pick the default
 * compute capability, and, as numba's index key has it, a digest (sha256) of the pickled
 * contents of the function's closure cells: closures made by one factory with other captured
 * values are other entries. A closure whose contents do not pickle is not cached. As in numba,
 * only the function's own file is watched: a changed device function in another module or a
 * changed global value is not seen (clear the cache).
 * Functions without a source file (the REPL, exec) cannot be cached: jit(cache=True) refuses
 * them as numba does.
 */
#include "nbcuda_py.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "NBCUDA-CACHE 1\n"
#define MAX_PART ((size_t)1 << 30)

static uint64_t fnv1a(const char *s, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)s[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

static int stamp_of(const char *path, long long *pmtime, long long *psize) {
  struct stat sb;
  if (stat(path, &sb) != 0) return -1;
  *pmtime = (long long)sb.st_mtim.tv_sec * 1000000000ll + sb.st_mtim.tv_nsec;
  *psize = (long long)sb.st_size;
  return 0;
}

/* mkdir -p of a directory path; 0 when it exists (or was made) and can be written. */
static int make_dir(const char *dir) {
  char buf[PATH_MAX];
  if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf) return -1;
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
  return access(buf, W_OK | X_OK) == 0 ? 0 : -1;
}

/* The directory the cache files of sources in srcdir go to (see the top of the file). */
static int cache_dir(const char *srcdir, char *out, size_t cap) {
  char tag[17];
  snprintf(tag, sizeof tag, "%016llx", (unsigned long long)fnv1a(srcdir, strlen(srcdir)));
  const char *env = getenv("NBCUDA_CACHE_DIR");
  if (!env || !*env) env = getenv("NUMBA_CACHE_DIR");
  if (env && *env) {
    if (snprintf(out, cap, "%s/%s", env, tag) >= (int)cap) return -1;
    return make_dir(out);
  }
  if (snprintf(out, cap, "%s/__pycache__", srcdir) < (int)cap && make_dir(out) == 0) return 0;
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  int n = xdg && *xdg ? snprintf(out, cap, "%s/nbcuda/%s", xdg, tag)
          : home      ? snprintf(out, cap, "%s/.cache/nbcuda/%s", home, tag)
                      : -1;
  if (n < 0 || n >= (int)cap) return -1;
  return make_dir(out);
}

/* A function's source file, qualname and first line (new references); -1 when it has no
 * file on disk to cache for (no exception set). */
static int function_origin(PyObject *py_func, char *file, size_t cap, PyObject **pqualname,
                           long *pline) {
  PyObject *code = PyObject_GetAttrString(py_func, "__code__");
  PyObject *fname = code ? PyObject_GetAttrString(code, "co_filename") : NULL;
  PyObject *first = fname ? PyObject_GetAttrString(code, "co_firstlineno") : NULL;
  PyObject *qual = first ? PyObject_GetAttrString(py_func, "__qualname__") : NULL;
  const char *f = fname && PyUnicode_Check(fname) ? PyUnicode_AsUTF8(fname) : NULL;
  int ok = f && qual && PyUnicode_Check(qual) && realpath(f, file) != NULL && cap >= PATH_MAX;
  if (ok) {
    *pline = PyLong_AsLong(first);
    *pqualname = Py_NewRef(qual);
  }
  Py_XDECREF(qual);
  Py_XDECREF(first);
  Py_XDECREF(fname);
  Py_XDECREF(code);
  PyErr_Clear();
  return ok ? 0 : -1;
}

int nbc__py_cache_check(PyObject *py_func) {
  char file[PATH_MAX];
  PyObject *qual = NULL;
  long line = 0;
  if (function_origin(py_func, file, sizeof file, &qual, &line) == 0) {
    Py_DECREF(qual);
    return 0;
  }
  PyObject *code = PyObject_GetAttrString(py_func, "__code__");
  PyObject *fname = code ? PyObject_GetAttrString(code, "co_filename") : NULL;
  PyErr_Clear();
  PyErr_Format(PyExc_RuntimeError, "cannot cache function %R: no locator available for file %R",
               py_func, fname ? fname : Py_None);
  Py_XDECREF(fname);
  Py_XDECREF(code);
  return -1;
}

/* The sha256 (hex) of pickle.dumps(tuple of py_func's closure cell contents) into out, "-"
 * for a function without a closure; -1 (no exception set) when the contents do not pickle
 * or a cell is empty: such a function is not cached. */
static int closure_digest(PyObject *py_func, char out[65]) {
  PyObject *cells = PyFunction_Check(py_func) ? PyFunction_GetClosure(py_func) : NULL;
  if (!cells || cells == Py_None || !PyTuple_GET_SIZE(cells)) {
    strcpy(out, "-");
    return 0;
  }
  PyObject *values = PyTuple_New(PyTuple_GET_SIZE(cells)), *digest = NULL;
  for (Py_ssize_t i = 0; values && i < PyTuple_GET_SIZE(cells); i++) {
    PyObject *v = PyCell_GET(PyTuple_GET_ITEM(cells, i));
    if (!v) {
      Py_CLEAR(values);
      break;
    }
    PyTuple_SET_ITEM(values, i, Py_NewRef(v));
  }
  PyObject *pickle = values ? PyImport_ImportModule("pickle") : NULL;
  PyObject *bytes = pickle ? PyObject_CallMethod(pickle, "dumps", "Oi", values, 4) : NULL;
  PyObject *hashlib = bytes ? PyImport_ImportModule("hashlib") : NULL;
  PyObject *h = hashlib ? PyObject_CallMethod(hashlib, "sha256", "O", bytes) : NULL;
  digest = h ? PyObject_CallMethod(h, "hexdigest", NULL) : NULL;
  const char *text = digest && PyUnicode_Check(digest) ? PyUnicode_AsUTF8(digest) : NULL;
  int ok = text && strlen(text) == 64;
  if (ok) memcpy(out, text, 65);
  Py_XDECREF(values);
  Py_XDECREF(pickle);
  Py_XDECREF(bytes);
  Py_XDECREF(hashlib);
  Py_XDECREF(h);
  Py_XDECREF(digest);
  PyErr_Clear();
  return ok ? 0 : -1;
}

/* The key text of a compilation (see the top of the file); malloc'd. */
static char *key_text(const char *file, const char *qualname, long line, const char *sig,
                      const nbc_compile_options_t *o, const char *module_file,
                      const char *closure) {
  long long mtime = 0, size = 0;
  if (module_file) stamp_of(module_file, &mtime, &size);
  const char *e1 = getenv("NBCUDA_DEFAULT_PTX_CC"), *e2 = getenv("NUMBA_CUDA_DEFAULT_PTX_CC");
  char *key = NULL;
  int n = asprintf(
      &key,
      "nbcuda %s build %lld %lld\nfile %s\nfunction %s %ld\nsignature %s\n"
      "options debug=%d lineinfo=%d device=%d fastmath=%d opt=%d cc=%d.%d%c abi=%d "
      "output=%d forceinline=%d bounds=%d:%u,%u,%u\n"
      "env NBCUDA_DEFAULT_PTX_CC=%s NUMBA_CUDA_DEFAULT_PTX_CC=%s\nclosure %s\n",
      NBC_VERSION_STRING, size, mtime, file, qualname, line, sig, o->debug, o->lineinfo,
      o->device, o->fastmath, o->opt, o->cc_major, o->cc_minor, o->cc_arch ? o->cc_arch : '-',
      (int)o->abi, (int)o->output, o->forceinline, o->nlaunch_bounds, o->launch_bounds[0],
      o->launch_bounds[1], o->launch_bounds[2], e1 ? e1 : "", e2 ? e2 : "", closure);
  return n < 0 ? NULL : key;
}

void nbc__py_cache_slot_free(nbc__py_cache_slot *slot) {
  free(slot->path);
  free(slot->key);
  slot->path = slot->key = NULL;
}

/* Reads len bytes into a new NUL-terminated buffer. */
static char *read_part(FILE *f, size_t len) {
  if (len > MAX_PART) return NULL;
  char *b = malloc(len + 1);
  if (!b) return NULL;
  if (fread(b, 1, len, f) != len) {
    free(b);
    return NULL;
  }
  b[len] = 0;
  return b;
}

/* The result stored in path if its stamp and key are these; NULL otherwise. */
static nbc_compile_result_t *read_entry(const nbc__py_cache_slot *slot) {
  FILE *f = fopen(slot->path, "rb");
  if (!f) return NULL;
  char magic[sizeof MAGIC];
  long long mtime = 0, size = 0;
  size_t lk = 0, ls = 0, lr = 0, lc = 0;
  nbc_compile_result_t *r = NULL;
  char *key = NULL, *sym = NULL, *ret = NULL, *code = NULL;
  if (fread(magic, 1, sizeof MAGIC - 1, f) != sizeof MAGIC - 1 ||
      memcmp(magic, MAGIC, sizeof MAGIC - 1) != 0 ||
      fscanf(f, "%lld %lld\n%zu %zu %zu %zu\n", &mtime, &size, &lk, &ls, &lr, &lc) != 6 ||
      mtime != slot->mtime || size != slot->size || lk != strlen(slot->key))
    goto done;
  if (!(key = read_part(f, lk)) || strcmp(key, slot->key) != 0) goto done;
  if (!(sym = read_part(f, ls)) || !(ret = read_part(f, lr)) || !(code = read_part(f, lc)))
    goto done;
  if (fgetc(f) != EOF) goto done; /* trailing bytes: not a file this code wrote */
  if (nbc_compile_result_create(code, lc, sym, ret, &r) != NBC_OK) r = NULL;
done:
  free(key);
  free(sym);
  free(ret);
  free(code);
  fclose(f);
  return r;
}

void nbc__py_cache_slot_make(nbc__py_state *st, PyObject *py_func, const char *sig,
                             const nbc_compile_options_t *o, nbc__py_cache_slot *slot) {
  memset(slot, 0, sizeof *slot);
  char file[PATH_MAX], dir[PATH_MAX];
  PyObject *qual = NULL;
  long line = 0;
  char closure[65];
  if (closure_digest(py_func, closure) < 0) {
    slot->uncacheable = "as the values its closure captures do not pickle";
    return;
  }
  if (function_origin(py_func, file, sizeof file, &qual, &line) < 0) return;
  const char *qualname = PyUnicode_AsUTF8(qual);
  char *slash = strrchr(file, '/');
  const char *base = slash ? slash + 1 : file;
  char srcdir[PATH_MAX];
  snprintf(srcdir, sizeof srcdir, "%.*s", slash ? (int)(slash - file) : 0, file);
  PyObject *mod_file = PyModule_GetFilenameObject(PyType_GetModule(st->KernelType));
  const char *mf = mod_file ? PyUnicode_AsUTF8(mod_file) : NULL;
  PyErr_Clear();
  char *key = qualname ? key_text(file, qualname, line, sig, o, mf, closure) : NULL;
  Py_XDECREF(mod_file);
  if (!key || stamp_of(file, &slot->mtime, &slot->size) != 0 ||
      cache_dir(srcdir, dir, sizeof dir) != 0) {
    free(key);
    Py_DECREF(qual);
    PyErr_Clear();
    return;
  }
  /* <stem>.<qualname>-<line>.<hash>.nbcuda, the qualname's <locals> and dots made plain */
  const char *dot = strrchr(base, '.');
  int stem_len = dot ? (int)(dot - base) : (int)strlen(base);
  char *qn = strdup(qualname);
  Py_DECREF(qual);
  for (char *c = qn; c && *c; c++)
    if (*c == '<' || *c == '>' || *c == '/') *c = '_';
  char *path = NULL;
  if (!qn || asprintf(&path, "%s/%.*s.%s-%ld.%016llx.nbcuda", dir, stem_len, base, qn, line,
                      (unsigned long long)fnv1a(key, strlen(key))) < 0) {
    free(qn);
    free(key);
    return;
  }
  free(qn);
  slot->path = path;
  slot->key = key;
}

int nbc__py_cache_load(nbc__py_state *st, PyObject *py_func, const char *sig,
                       const nbc_compile_options_t *o, nbc__py_cache_slot *slot,
                       nbc_compile_result_t **presult) {
  nbc__py_cache_slot_make(st, py_func, sig, o, slot);
  *presult = slot->path ? read_entry(slot) : NULL;
  return *presult ? 1 : 0;
}

void nbc__py_cache_store(const nbc__py_cache_slot *slot, const nbc_compile_result_t *r) {
  if (!slot->path || !slot->key || !r) return;
  char *tmp = NULL;
  if (asprintf(&tmp, "%s.tmp.%ld", slot->path, (long)getpid()) < 0) return;
  FILE *f = fopen(tmp, "wb");
  size_t lc = 0;
  const char *code = nbc_compile_result_code(r, &lc);
  const char *sym = nbc_compile_result_symbol(r), *ret = nbc_compile_result_return_type(r);
  int ok = f &&
           fprintf(f, MAGIC "%lld %lld\n%zu %zu %zu %zu\n", slot->mtime, slot->size,
                   strlen(slot->key), strlen(sym), strlen(ret), lc) > 0 &&
           fwrite(slot->key, 1, strlen(slot->key), f) == strlen(slot->key) &&
           fwrite(sym, 1, strlen(sym), f) == strlen(sym) &&
           fwrite(ret, 1, strlen(ret), f) == strlen(ret) && fwrite(code, 1, lc, f) == lc;
  if (f && fclose(f) != 0) ok = 0;
  if (!ok || rename(tmp, slot->path) != 0) unlink(tmp);
  free(tmp);
}

/* The directory cached files of py_func go to, for stats.cache_path; None without one. */
PyObject *nbc__py_cache_path(PyObject *py_func) {
  char file[PATH_MAX], dir[PATH_MAX];
  PyObject *qual = NULL;
  long line = 0;
  if (function_origin(py_func, file, sizeof file, &qual, &line) < 0) Py_RETURN_NONE;
  Py_DECREF(qual);
  char *slash = strrchr(file, '/');
  if (slash) *slash = 0;
  if (cache_dir(file, dir, sizeof dir) != 0) Py_RETURN_NONE;
  return PyUnicode_FromString(dir);
}
