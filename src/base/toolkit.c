/* toolkit.c — the one finder of NVIDIA's libraries and tools, and its record of the places
 * it tried (toolkit.h).
 *
 * One table row per item says where it may be: its override variables, its folders under a
 * toolkit root, its file names, whether a versioned name (libnvvm.so.4) may stand in for
 * the plain one, the folders beside a related file, the names for the dynamic loader, and
 * the folders of NVIDIA's pip wheels. nbc__toolkit_find walks one order for every item:
 *
 *   1. the item's variable (NBCUDA_NVVM, NBCUDA_LIBDEVICE, NBCUDA_NVJITLINK, NBCUDA_NVRTC,
 *      NBCUDA_CUDART, NBCUDA_CUDADEVRT; for libcuda NBCUDA_DRIVER, then numba-cuda's
 *      NUMBA_CUDA_DRIVER): the file, or a folder searched for the item's names. An explicit
 *      choice is authoritative: when it fails nothing else is tried, since silently using
 *      another library would hide the mistake;
 *   2. for a program, each folder of PATH, as a shell finds it (numba-cuda runs the nvdisasm
 *      that PATH gives);
 *   3. the toolkit roots: $CUDA_HOME, $CUDA_PATH, /usr/local/cuda (the only place that reads
 *      those two variables), each with the item's folders (nvvm/lib64, lib64, bin, ...);
 *   4. the folders beside a file found before (libdevice next to the libNVVM in use);
 *   5. for a shared library, the dynamic loader's own path (dlopen of the bare name:
 *      LD_LIBRARY_PATH, the ld.so cache);
 *   6. NVIDIA's pip wheels (nvidia/cu13/..., nvidia/cuda_nvcc/...) under the site-packages
 *      folders the caller passes (the Python module's sys.path) and NBCUDA_PIP_SITE; when the
 *      caller passes none, NBCUDA_PIP_SITE, the active virtualenv or conda environment, the
 *      system's and the user's site-packages, pyenv's.
 *
 * In a folder the names are tried in order (libcudart.so.13, .so.12, .so), then for items
 * that allow it every <name>* in sorted order. A file that exists is handed to the caller's
 * accept callback; a rejected one is recorded with the reason and the search goes on. Each
 * place where nothing was accepted is recorded too, so a "not found" message can list
 * them all.
 */
#include "base/toolkit.h"

#include <dlfcn.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nbcuda.h"

typedef enum { KIND_LIBRARY, KIND_FILE, KIND_PROGRAM } item_kind;

typedef struct spec {
  const char *name; /* for messages */
  item_kind kind;
  const char *env[3];        /* override variables, the first one set wins */
  const char *dirs[5];       /* under each toolkit root */
  const char *names[4];      /* in a folder, in order */
  bool versioned;            /* then <names[0]>* */
  const char *beside_label;  /* "next to libNVVM" */
  const char *beside[3];     /* relative to the folder of search->beside */
  const char *loader[3];     /* bare names for dlopen */
  const char *wheels[4];     /* under a site-packages folder */
} spec;

#define CUDA_LIBRARY(stem)                                                                     \
  .kind = KIND_LIBRARY, .dirs = {"lib64", "lib"},                                              \
  .names = {stem ".so.13", stem ".so.12", stem ".so"},                                         \
  .loader = {stem ".so.13", stem ".so.12", stem ".so"}

static const spec specs[NBC__TOOLKIT_COUNT_] = {
    [NBC__TOOLKIT_LIBCUDA] = {.name = "libcuda",
                              .kind = KIND_LIBRARY,
                              .env = {"NBCUDA_DRIVER", "NUMBA_CUDA_DRIVER"},
                              .loader = {"libcuda.so.1", "libcuda.so"}},
    [NBC__TOOLKIT_NVVM] = {.name = "libNVVM",
                           .kind = KIND_LIBRARY,
                           .env = {"NBCUDA_NVVM"},
                           .dirs = {"nvvm/lib64", "lib64", "nvvm/lib", "lib"},
                           .names = {"libnvvm.so"},
                           .versioned = true,
                           .loader = {"libnvvm.so.4", "libnvvm.so"},
                           .wheels = {"nvidia/cu13/nvvm/lib64", "nvidia/cu13/lib",
                                      "nvidia/cuda_nvcc/nvvm/lib64"}},
    [NBC__TOOLKIT_LIBDEVICE] = {.name = "libdevice",
                                .kind = KIND_FILE,
                                .env = {"NBCUDA_LIBDEVICE"},
                                .dirs = {"nvvm/libdevice"},
                                .names = {"libdevice.10.bc"},
                                .versioned = true,
                                .beside_label = "next to libNVVM",
                                .beside = {"../libdevice", "../nvvm/libdevice"},
                                .wheels = {"nvidia/cu13/nvvm/libdevice",
                                           "nvidia/cuda_nvcc/nvvm/libdevice"}},
    [NBC__TOOLKIT_NVJITLINK] = {.name = "nvJitLink",
                                .env = {"NBCUDA_NVJITLINK"},
                                CUDA_LIBRARY("libnvJitLink"),
                                .wheels = {"nvidia/cu13/lib", "nvidia/nvjitlink/lib"}},
    [NBC__TOOLKIT_NVRTC] = {.name = "NVRTC",
                            .env = {"NBCUDA_NVRTC"},
                            CUDA_LIBRARY("libnvrtc"),
                            .wheels = {"nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"}},
    [NBC__TOOLKIT_CUDART] = {.name = "libcudart",
                             .env = {"NBCUDA_CUDART"},
                             CUDA_LIBRARY("libcudart"),
                             .wheels = {"nvidia/cu13/lib", "nvidia/cuda_runtime/lib"}},
    [NBC__TOOLKIT_CUDADEVRT] = {.name = "libcudadevrt.a",
                                .kind = KIND_FILE,
                                .env = {"NBCUDA_CUDADEVRT"},
                                .dirs = {"lib64", "lib"},
                                .names = {"libcudadevrt.a"},
                                .wheels = {"nvidia/cu13/lib", "nvidia/cuda_runtime/lib"}},
    [NBC__TOOLKIT_NVDISASM] = {.name = "nvdisasm",
                               .kind = KIND_PROGRAM,
                               .dirs = {"bin"},
                               .names = {"nvdisasm"},
                               .wheels = {"nvidia/cu13/bin", "nvidia/cuda_nvdisasm/bin"}},
};

const char *nbc__toolkit_name(nbc__toolkit_item item) {
  return (unsigned)item < NBC__TOOLKIT_COUNT_ ? specs[item].name : "?";
}

/* ------------------------------------------------------------------ the record -------- */

/* The reason recorded for a variable naming nothing; the inline style leaves it out, since a
 * variable listed there without a reason named nothing. */
static const char MISSING[] = "no such file";

/* Each place is kept as "<env flag><place>\x1f<origin>\x1f<why>\x1e", rendered on demand in
 * either style. */
static void record(nbc__toolkit_search *s, bool env, const char *place, const char *origin,
                   const char *why) {
  size_t left = sizeof s->record - s->record_len;
  int n = snprintf(s->record + s->record_len, left, "%c%s\x1f%s\x1f%s\x1e", env ? 'e' : '-',
                   place, origin, why ? why : "");
  if (n < 0 || (size_t)n >= left) {
    s->record[s->record_len] = '\0';
    s->dropped++;
    return;
  }
  s->record_len += (size_t)n;
  s->tried++;
}

static void out_append(char *out, size_t size, size_t *len, const char *fmt, const char *a,
                       const char *b, const char *c, const char *d) {
  if (*len + 1 >= size) return;
  int n = snprintf(out + *len, size - *len, fmt, a, b, c, d);
  if (n > 0) *len += (size_t)n < size - *len ? (size_t)n : size - *len - 1;
}

char *nbc__toolkit_tried(const nbc__toolkit_search *s, nbc__toolkit_style style, char *out,
                         size_t size) {
  size_t len = 0;
  if (!size) return out;
  out[0] = '\0';
  const char *p = s->record;
  while (*p) {
    bool env = *p++ == 'e';
    const char *origin = strchr(p, '\x1f');
    const char *why = origin ? strchr(origin + 1, '\x1f') : NULL;
    const char *end = why ? strchr(why + 1, '\x1e') : NULL;
    if (!end) break;
    char place[4200], from[256], reason[1100];
    snprintf(place, sizeof place, "%.*s", (int)(origin - p), p);
    snprintf(from, sizeof from, "%.*s", (int)(why - origin - 1), origin + 1);
    snprintf(reason, sizeof reason, "%s%.*s", why + 1 < end ? ": " : "", (int)(end - why - 1),
             why + 1);
    if (style == NBC__TOOLKIT_LINES)
      out_append(out, size, &len, "  - %s (%s%s)\n%s", place, from, reason, "");
    else if (env && (!*reason || strcmp(reason + 2, MISSING) == 0))
      out_append(out, size, &len, "%s%s=%s%s", len ? "; " : "", from, place, "");
    else if (env)
      out_append(out, size, &len, "%s%s=%s (%s)", len ? "; " : "", from, place, reason + 2);
    else
      out_append(out, size, &len, "%s%s (%s%s)", len ? "; " : "", place, from, reason);
    p = end + 1;
  }
  if (s->dropped) {
    char more[64];
    snprintf(more, sizeof more, "%d more places", s->dropped);
    out_append(out, size, &len, style == NBC__TOOLKIT_LINES ? "  - %s%s%s%s\n" : "; %s%s%s%s",
               more, "", "", "");
  }
  return out;
}

/* ------------------------------------------------------------------ candidates -------- */

static bool is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool default_accept(const spec *sp, nbc__toolkit_search *s, const char *path) {
  switch (sp->kind) {
  case KIND_LIBRARY: {
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle) {
      s->handle = handle;
      return true;
    }
    const char *why = dlerror();
    snprintf(s->why, sizeof s->why, "%s", why ? why : "cannot be loaded");
    return false;
  }
  case KIND_PROGRAM:
    if (access(path, X_OK) == 0) return true;
    snprintf(s->why, sizeof s->why, "not executable");
    return false;
  case KIND_FILE: return true;
  }
  return false;
}

/* Offers one candidate: true when it is accepted (s->path and s->origin are set). */
static bool offer(const spec *sp, nbc__toolkit_search *s, const char *path, bool env,
                  const char *place, const char *origin) {
  s->why[0] = '\0';
  bool ok = s->accept ? s->accept(s->data, path, s->why, sizeof s->why)
                      : default_accept(sp, s, path);
  if (ok) {
    snprintf(s->path, sizeof s->path, "%s", path);
    s->origin = origin;
    return true;
  }
  /* An accept without a reason leaves the place bare; an explicit choice says it failed. */
  record(s, env, place, origin, s->why[0] ? s->why : env ? "cannot be loaded" : NULL);
  return false;
}

/* The item's names in a folder, as a place: "dir/libnvvm.so*", "dir/{a,b,c}", "dir/a". */
static void names_place(const spec *sp, const char *dir, char *out, size_t size) {
  size_t n = 0;
  while (n < sizeof sp->names / sizeof sp->names[0] && sp->names[n]) n++;
  if (sp->versioned || n == 1) {
    snprintf(out, size, "%s/%s%s", dir, sp->names[0], sp->versioned ? "*" : "");
    return;
  }
  int len = snprintf(out, size, "%s/{", dir);
  for (size_t i = 0; i < n && len > 0 && (size_t)len < size; i++)
    len += snprintf(out + len, size - (size_t)len, "%s%s", i ? "," : "", sp->names[i]);
  if (len > 0 && (size_t)len < size) snprintf(out + len, size - (size_t)len, "}");
}

/* Tries the item's names in dir: true when one is accepted. Records dir when nothing in it
 * exists (a file that exists but is rejected is recorded by offer). */
static bool try_dir(const spec *sp, nbc__toolkit_search *s, const char *dir, bool env,
                    const char *origin) {
  char path[4200];
  bool existed = false;
  for (size_t i = 0; i < sizeof sp->names / sizeof sp->names[0] && sp->names[i]; i++) {
    if (snprintf(path, sizeof path, "%s/%s", dir, sp->names[i]) >= (int)sizeof path) continue;
    if (!is_file(path)) continue;
    existed = true;
    if (offer(sp, s, path, env, path, origin)) return true;
  }
  if (sp->versioned && !existed) {
    char pattern[4200];
    /* A folder too long for the buffer cannot hold an existing file: nothing to glob. */
    if (snprintf(pattern, sizeof pattern, "%s/%s*", dir, sp->names[0]) < (int)sizeof pattern) {
      glob_t g;
      bool found = false;
      if (glob(pattern, 0, NULL, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc && !found; i++)
          if (is_file(g.gl_pathv[i])) {
            existed = true;
            found = offer(sp, s, g.gl_pathv[i], env, g.gl_pathv[i], origin);
          }
      globfree(&g);
      if (found) return true;
    }
  }
  if (!existed) {
    char place[4400];
    names_place(sp, dir, place, sizeof place);
    record(s, env, place, origin, NULL);
  }
  return false;
}

/* Step 1: the item's variable. Returns 1 found, 0 not set, -1 set but failed. */
static int from_env(const spec *sp, nbc__toolkit_search *s) {
  for (size_t i = 0; i < sizeof sp->env / sizeof sp->env[0] && sp->env[i]; i++) {
    const char *value = s->getenv(sp->env[i]);
    if (!value || !*value) continue;
    s->env_name = sp->env[i];
    s->env_value = value;
    if (sp->names[0] && is_dir(value)) return try_dir(sp, s, value, true, sp->env[i]) ? 1 : -1;
    if (!is_file(value)) {
      record(s, true, value, sp->env[i], MISSING);
      return -1;
    }
    return offer(sp, s, value, true, value, sp->env[i]) ? 1 : -1;
  }
  return 0;
}

/* Step 2: PATH, for a program. */
static bool from_path(const spec *sp, nbc__toolkit_search *s) {
  const char *path = s->getenv("PATH");
  while (path && *path) {
    const char *end = strchr(path, ':');
    size_t len = end ? (size_t)(end - path) : strlen(path);
    char dir[4096];
    if (len && len < sizeof dir) {
      snprintf(dir, sizeof dir, "%.*s", (int)len, path);
      if (try_dir(sp, s, dir, false, "PATH")) return true;
    }
    path = end ? end + 1 : NULL;
  }
  return false;
}

/* Step 3: the toolkit roots. */
static bool from_roots(const spec *sp, nbc__toolkit_search *s) {
  static const char *const vars[] = {"CUDA_HOME", "CUDA_PATH"};
  char fallback[1100];
  const char *roots[3], *labels[3];
  int n = 0;
  for (int v = 0; v < 2; v++) {
    const char *home = s->getenv(vars[v]);
    if (home && *home) {
      roots[n] = home;
      labels[n++] = vars[v];
    }
  }
  snprintf(fallback, sizeof fallback, "%.1000s/usr/local/cuda", s->root ? s->root : "");
  roots[n] = fallback;
  labels[n++] = "default toolkit";
  for (int r = 0; r < n; r++)
    for (size_t k = 0; k < sizeof sp->dirs / sizeof sp->dirs[0] && sp->dirs[k]; k++) {
      char dir[4096];
      /* A root too long for the buffer cannot hold an existing file: skip it. */
      if (snprintf(dir, sizeof dir, "%s/%s", roots[r], sp->dirs[k]) >= (int)sizeof dir)
        continue;
      if (try_dir(sp, s, dir, false, labels[r])) return true;
    }
  return false;
}

/* Step 4: beside a file found before: <root>/nvvm/lib64/libnvvm.so -> <root>/nvvm/libdevice. */
static bool from_beside(const spec *sp, nbc__toolkit_search *s) {
  if (!s->beside || !strchr(s->beside, '/') || !sp->beside[0]) return false;
  char base[4096];
  snprintf(base, sizeof base, "%s", s->beside);
  *strrchr(base, '/') = '\0';
  for (size_t k = 0; k < sizeof sp->beside / sizeof sp->beside[0] && sp->beside[k]; k++) {
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/%s", base, sp->beside[k]);
    if (try_dir(sp, s, dir, false, sp->beside_label)) return true;
  }
  return false;
}

/* Step 5: the dynamic loader's own path. */
static bool from_loader(const spec *sp, nbc__toolkit_search *s) {
  if (s->no_loader) return false;
  for (size_t i = 0; i < sizeof sp->loader / sizeof sp->loader[0] && sp->loader[i]; i++)
    if (offer(sp, s, sp->loader[i], false, sp->loader[i], "dynamic loader path")) return true;
  return false;
}

/* The site-packages folders where NVIDIA's wheels may be installed, as glob patterns: the
 * caller's (the Python module's sys.path) and NBCUDA_PIP_SITE; else, since C cannot ask
 * Python for its site folders, where pip puts packages on Linux. */
static int site_patterns(const nbc__toolkit_search *s, char out[][1024], int max) {
  int n = 0;
  for (const char *const *site = s->sites; site && *site && n < max; site++)
    if (**site && strlen(*site) < 1000) snprintf(out[n++], 1024, "%s", *site);
  const char *pip = s->getenv("NBCUDA_PIP_SITE");
  for (const char *p = pip; p && *p && n < max;) {
    const char *colon = strchr(p, ':');
    size_t len = colon ? (size_t)(colon - p) : strlen(p);
    if (len > 0 && len < 1000) snprintf(out[n++], 1024, "%.*s", (int)len, p);
    p = colon ? colon + 1 : p + len;
  }
  /* The caller's own site folders are exact: the guesses below are only for a caller that
   * does not know them. */
  if (s->sites) return n;
  const char *root = s->root ? s->root : "";
  const char *venv = s->getenv("VIRTUAL_ENV");
  if (venv && *venv && n < max) snprintf(out[n++], 1024, "%s/lib/python3*/site-packages", venv);
  const char *conda = s->getenv("CONDA_PREFIX");
  if (conda && *conda && n < max)
    snprintf(out[n++], 1024, "%s/lib/python3*/site-packages", conda);
  if (n < max) snprintf(out[n++], 1024, "%s/usr/local/lib/python3*/site-packages", root);
  if (n < max) snprintf(out[n++], 1024, "%s/usr/local/lib/python3*/dist-packages", root);
  if (n < max) snprintf(out[n++], 1024, "%s/usr/lib/python3*/site-packages", root);
  if (n < max) snprintf(out[n++], 1024, "%s/usr/lib/python3/dist-packages", root);
  const char *home = s->getenv("HOME");
  if (home && *home) {
    if (n < max) snprintf(out[n++], 1024, "%s/.local/lib/python3*/site-packages", home);
    if (n < max)
      snprintf(out[n++], 1024, "%s/.pyenv/versions/*/lib/python3*/site-packages", home);
  }
  return n;
}

/* Step 6: the wheels. Each pattern's matching folders are searched; a pattern that matched
 * nothing usable is recorded as the pattern. */
static bool from_wheels(const spec *sp, nbc__toolkit_search *s) {
  if (!sp->wheels[0]) return false;
  char patterns[24][1024];
  int n = site_patterns(s, patterns, 24);
  for (int i = 0; i < n; i++)
    for (size_t k = 0; k < sizeof sp->wheels / sizeof sp->wheels[0] && sp->wheels[k]; k++) {
      char pattern[1200];
      int len = snprintf(pattern, sizeof pattern, "%s/%s", patterns[i], sp->wheels[k]);
      if (len < 0 || len >= (int)sizeof pattern) continue;
      glob_t g;
      bool found = false;
      int tried = s->tried;
      if (glob(pattern, GLOB_ONLYDIR, NULL, &g) == 0)
        for (size_t j = 0; j < g.gl_pathc && !found; j++)
          found = try_dir(sp, s, g.gl_pathv[j], false, "pip wheel");
      globfree(&g);
      if (found) return true;
      /* The folders a pattern matched are listed one by one; a pattern that matched none
       * is listed as the pattern. */
      if (s->tried == tried) {
        char place[1400];
        names_place(sp, pattern, place, sizeof place);
        record(s, false, place, "pip wheel", NULL);
      }
    }
  return false;
}

static const char *process_getenv(const char *name) { return getenv(name); }

int nbc__toolkit_find(nbc__toolkit_item item, nbc__toolkit_search *s) {
  s->path[0] = '\0';
  s->origin = NULL;
  s->handle = NULL;
  s->env_name = s->env_value = NULL;
  s->why[0] = '\0';
  s->tried = s->dropped = 0;
  s->record_len = 0;
  s->record[0] = '\0';
  if ((unsigned)item >= NBC__TOOLKIT_COUNT_) return -1;
  if (!s->getenv) s->getenv = process_getenv;
  const spec *sp = &specs[item];
  int env = from_env(sp, s);
  if (env) return env > 0 ? 0 : -1;
  bool found = (sp->kind == KIND_PROGRAM && from_path(sp, s)) || from_roots(sp, s) ||
               from_beside(sp, s) || (sp->kind == KIND_LIBRARY && from_loader(sp, s)) ||
               from_wheels(sp, s);
  return found ? 0 : -1;
}

/* ------------------------------------------------------------------ loading ----------- */

typedef struct {
  const nbc__symbol *symbols;
  size_t count;
  void *handle;
} symbols_wanted;

/* dlopen, then every entry point; a library lacking one stays loaded but is not used
 * (nothing of it was called; NVRTC loses memory when unloaded). */
static bool accept_with_symbols(void *data, const char *path, char *why, size_t why_size) {
  symbols_wanted *w = data;
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *reason = dlerror();
    snprintf(why, why_size, "%s", reason ? reason : "cannot be loaded");
    return false;
  }
  for (size_t i = 0; i < w->count; i++) {
    *w->symbols[i].slot = dlsym(handle, w->symbols[i].name);
    if (!*w->symbols[i].slot) {
      snprintf(why, why_size, "has no %s", w->symbols[i].name);
      return false;
    }
  }
  w->handle = handle;
  return true;
}

int nbc__toolkit_load(nbc__toolkit_item item, const nbc__symbol *symbols, size_t count,
                      char *path, size_t path_size, char *error, size_t error_size) {
  symbols_wanted wanted = {symbols, count, NULL};
  nbc__toolkit_search *s = calloc(1, sizeof *s);
  if (!s) {
    snprintf(error, error_size, "%s: out of host memory", nbc__toolkit_name(item));
    return -1;
  }
  s->accept = accept_with_symbols;
  s->data = &wanted;
  int rc = nbc__toolkit_find(item, s);
  if (rc == 0) {
    snprintf(path, path_size, "%s", s->path);
  } else {
    char tried[6000];
    path[0] = '\0';
    snprintf(error, error_size, "%s cannot be found or loaded (searched %s)",
             nbc__toolkit_name(item), nbc__toolkit_tried(s, NBC__TOOLKIT_INLINE, tried,
                                                         sizeof tried));
  }
  free(s);
  return rc;
}

/* ------------------------------------------------------------------ public ------------ */

int nbc_toolkit_roots(const char *roots[NBC_TOOLKIT_ROOTS_MAX]) {
  const char *candidates[NBC_TOOLKIT_ROOTS_MAX] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"),
                                                   "/usr/local/cuda"};
  int n = 0;
  for (int i = 0; i < NBC_TOOLKIT_ROOTS_MAX; i++)
    if (candidates[i] && *candidates[i]) roots[n++] = candidates[i];
  return n;
}
