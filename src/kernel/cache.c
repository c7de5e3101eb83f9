/* cache.c — the disk cache (nbc_cache_*): compiled kernels kept in files, as numba's
 * cache=True keeps them, so a new process skips the compiler (and libNVVM) for code compiled
 * before. The Python binding's jit(cache=True) is one user; a C program caching the kernels
 * it compiles from source is another.
 *
 * One file per (function, signature, compile options), named
 * <file stem>.<qualname>-<first line>.<64-bit hash of the key>.nbcuda, in the first of:
 * $NBCUDA_CACHE_DIR (else $NUMBA_CACHE_DIR)/<hash of the source directory>/, the source
 * file's __pycache__/ when it can be written, ${XDG_CACHE_HOME:-~/.cache}/nbcuda/<hash of the
 * source directory>/ — numba's order of locators. The file holds the source file's stamp
 * (modification time in ns and size), the full key and the result (code, symbol, return
 * type). A load is a hit only when the stamp and the key match exactly; anything else
 * (missing, stale, truncated, another key) is a miss, after which the caller compiles and
 * stores, to a temporary file renamed over the entry, so readers never see half a file.
 *
 * The key: nbcuda's version and the size and time of the caller's build file (the Python
 * extension module: a rebuilt nbcuda never reads an older one's code), the source path,
 * qualname and first line, the signature, every compile option, the environment variables
 * that pick the default compute capability, and the caller's extra text (the binding's
 * digest of a closure's captured values). As in numba, only the source file is watched.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/kernel.h"

#define MAGIC "NBCUDA-CACHE 1\n"
#define MAX_PART ((size_t)1 << 30)

struct nbc_cache_entry {
  char *path, *key;
  long long mtime, size; /* the source file's stamp when the entry was made */
};

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
static int dir_for(const char *srcdir, char *out, size_t cap) {
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

/* file made absolute (realpath) into abs, and its directory into dir. */
static nbc_status_t source_dirs(const char *file, char abs[PATH_MAX], char dir[PATH_MAX]) {
  if (!file) return nbc__set_error(NBC_INVALID_ARGUMENT, "cache: no source file given");
  if (!realpath(file, abs))
    return nbc__set_error(NBC_INVALID_ARGUMENT, "cache: source file %s: %s", file,
                          strerror(errno));
  char *slash = strrchr(abs, '/');
  snprintf(dir, PATH_MAX, "%.*s", slash ? (int)(slash - abs) : 0, abs);
  return NBC_OK;
}

nbc_status_t nbc_cache_dir(const char *file, char *buf, size_t size) {
  char abs[PATH_MAX], srcdir[PATH_MAX];
  nbc_status_t s = source_dirs(file, abs, srcdir);
  if (s != NBC_OK) return s;
  if (!buf || dir_for(srcdir, buf, size) != 0)
    return nbc__set_error(NBC_CACHE_ERROR, "cache: no cache directory for %s can be written "
                          "($NBCUDA_CACHE_DIR, $NUMBA_CACHE_DIR, %s/__pycache__, "
                          "${XDG_CACHE_HOME:-~/.cache}/nbcuda)", abs, srcdir);
  return NBC_OK;
}

/* The key text of a compilation (see the top of the file); malloc'd. */
static char *key_text(const nbc_cache_key_t *k, const char *file) {
  long long mtime = 0, size = 0;
  if (k->build_file) stamp_of(k->build_file, &mtime, &size);
  const char *e1 = getenv("NBCUDA_DEFAULT_PTX_CC"), *e2 = getenv("NUMBA_CUDA_DEFAULT_PTX_CC");
  nbc_compile_options_t defaults;
  nbc_compile_options_init(&defaults);
  const nbc_compile_options_t *o = k->options ? k->options : &defaults;
  char *key = NULL;
  int n = asprintf(
      &key,
      "nbcuda %s build %lld %lld\nfile %s\nfunction %s %ld\nsignature %s\n"
      "options debug=%d lineinfo=%d device=%d fastmath=%d opt=%d cc=%d.%d%c abi=%d "
      "output=%d forceinline=%d bounds=%d:%u,%u,%u\n"
      "env NBCUDA_DEFAULT_PTX_CC=%s NUMBA_CUDA_DEFAULT_PTX_CC=%s\nclosure %s\n",
      NBC_VERSION_STRING, size, mtime, file, k->qualname, k->line, k->signature, o->debug,
      o->lineinfo, o->device, o->fastmath, o->opt, o->cc_major, o->cc_minor,
      o->cc_arch ? o->cc_arch : '-', (int)o->abi, (int)o->output, o->forceinline,
      o->nlaunch_bounds, o->launch_bounds[0], o->launch_bounds[1], o->launch_bounds[2],
      e1 ? e1 : "", e2 ? e2 : "", k->extra && *k->extra ? k->extra : "-");
  return n < 0 ? NULL : key;
}

nbc_status_t nbc_cache_entry_create(const nbc_cache_key_t *key, nbc_cache_entry_t **pentry) {
  if (!pentry) return nbc__set_error(NBC_INVALID_ARGUMENT, "cache: pentry is NULL");
  *pentry = NULL;
  if (!key || !key->qualname || !key->signature)
    return nbc__set_error(NBC_INVALID_ARGUMENT,
                          "cache: the key needs a source file, a qualname and a signature");
  char file[PATH_MAX], dir[PATH_MAX];
  nbc_status_t s = nbc_cache_dir(key->file, dir, sizeof dir);
  if (s != NBC_OK) return s;
  char srcdir[PATH_MAX];
  source_dirs(key->file, file, srcdir);
  nbc_cache_entry_t *e = calloc(1, sizeof *e);
  if (!e || !(e->key = key_text(key, file))) {
    free(e);
    return nbc__set_error(NBC_NO_MEMORY, "cache: out of host memory");
  }
  if (stamp_of(file, &e->mtime, &e->size) != 0) {
    nbc_cache_entry_destroy(e);
    return nbc__set_error(NBC_INVALID_ARGUMENT, "cache: source file %s: %s", file,
                          strerror(errno));
  }
  /* <stem>.<qualname>-<line>.<hash>.nbcuda, the qualname's <locals> and dots made plain */
  const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
  const char *dot = strrchr(base, '.');
  int stem_len = dot ? (int)(dot - base) : (int)strlen(base);
  char *qn = strdup(key->qualname);
  for (char *c = qn; c && *c; c++)
    if (*c == '<' || *c == '>' || *c == '/') *c = '_';
  if (!qn || asprintf(&e->path, "%s/%.*s.%s-%ld.%016llx.nbcuda", dir, stem_len, base, qn,
                      key->line, (unsigned long long)fnv1a(e->key, strlen(e->key))) < 0) {
    e->path = NULL;
    free(qn);
    nbc_cache_entry_destroy(e);
    return nbc__set_error(NBC_NO_MEMORY, "cache: out of host memory");
  }
  free(qn);
  *pentry = e;
  return NBC_OK;
}

void nbc_cache_entry_destroy(nbc_cache_entry_t *entry) {
  if (!entry) return;
  free(entry->path);
  free(entry->key);
  free(entry);
}

const char *nbc_cache_entry_path(const nbc_cache_entry_t *entry) {
  return entry ? entry->path : NULL;
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

nbc_status_t nbc_cache_entry_load(const nbc_cache_entry_t *entry,
                                  nbc_compile_result_t **presult) {
  if (!entry || !presult)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "cache: entry or presult is NULL");
  *presult = NULL;
  FILE *f = fopen(entry->path, "rb");
  if (!f) return NBC_OK;
  char magic[sizeof MAGIC];
  long long mtime = 0, size = 0;
  size_t lk = 0, ls = 0, lr = 0, lc = 0;
  char *key = NULL, *sym = NULL, *ret = NULL, *code = NULL;
  if (fread(magic, 1, sizeof MAGIC - 1, f) != sizeof MAGIC - 1 ||
      memcmp(magic, MAGIC, sizeof MAGIC - 1) != 0 ||
      fscanf(f, "%lld %lld\n%zu %zu %zu %zu\n", &mtime, &size, &lk, &ls, &lr, &lc) != 6 ||
      mtime != entry->mtime || size != entry->size || lk != strlen(entry->key))
    goto done;
  if (!(key = read_part(f, lk)) || strcmp(key, entry->key) != 0) goto done;
  if (!(sym = read_part(f, ls)) || !(ret = read_part(f, lr)) || !(code = read_part(f, lc)))
    goto done;
  if (fgetc(f) != EOF) goto done; /* trailing bytes: not a file this code wrote */
  if (nbc_compile_result_create(code, lc, sym, ret, presult) != NBC_OK) *presult = NULL;
done:
  free(key);
  free(sym);
  free(ret);
  free(code);
  fclose(f);
  return NBC_OK;
}

nbc_status_t nbc_cache_entry_store(const nbc_cache_entry_t *entry,
                                   const nbc_compile_result_t *result) {
  if (!entry || !result)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "cache: entry or result is NULL");
  char *tmp = NULL;
  if (asprintf(&tmp, "%s.tmp.%ld", entry->path, (long)getpid()) < 0)
    return nbc__set_error(NBC_NO_MEMORY, "cache: out of host memory");
  FILE *f = fopen(tmp, "wb");
  size_t lc = 0;
  const char *code = nbc_compile_result_code(result, &lc);
  const char *sym = nbc_compile_result_symbol(result);
  const char *ret = nbc_compile_result_return_type(result);
  int ok = f &&
           fprintf(f, MAGIC "%lld %lld\n%zu %zu %zu %zu\n", entry->mtime, entry->size,
                   strlen(entry->key), strlen(sym), strlen(ret), lc) > 0 &&
           fwrite(entry->key, 1, strlen(entry->key), f) == strlen(entry->key) &&
           fwrite(sym, 1, strlen(sym), f) == strlen(sym) &&
           fwrite(ret, 1, strlen(ret), f) == strlen(ret) && fwrite(code, 1, lc, f) == lc;
  int err = errno;
  if (f && fclose(f) != 0) ok = 0;
  if (ok && rename(tmp, entry->path) != 0) {
    ok = 0;
    err = errno;
  }
  if (!ok) unlink(tmp);
  nbc_status_t s = ok ? NBC_OK
                      : nbc__set_error(NBC_CACHE_ERROR, "cache: cannot write %s: %s",
                                       entry->path, strerror(err));
  free(tmp);
  return s;
}
