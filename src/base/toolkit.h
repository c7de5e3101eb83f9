/* toolkit.h — the one finder of NVIDIA's libraries and tools (libcuda, libNVVM, libdevice,
 * nvJitLink, NVRTC, libcudart, libcudadevrt.a, nvdisasm), and the record of every place it
 * tried, for the messages that say why something is missing.
 *
 * Every search follows one order (toolkit.c says it in full): the item's own variable
 * (NBCUDA_NVVM, ...: authoritative, nothing else is tried), PATH for a program, the toolkit
 * roots ($CUDA_HOME, $CUDA_PATH, /usr/local/cuda), the folder of a related file already found
 * (libdevice beside libNVVM), the dynamic loader's own path for a shared library, and the
 * folders of NVIDIA's pip wheels. Only toolkit.c reads CUDA_HOME and CUDA_PATH.
 *
 * The finder knows where to look, not what a library must hold: each caller's accept
 * callback (dlopen and dlsym, say) decides whether a candidate is the one wanted; a rejected
 * candidate is recorded with the callback's reason and the search goes on.
 */
#ifndef NBC_BASE_TOOLKIT_H
#define NBC_BASE_TOOLKIT_H

#include <stdbool.h>
#include <stddef.h>

/* What can be looked for, one row each in toolkit.c's table. */
typedef enum nbc__toolkit_item {
  NBC__TOOLKIT_LIBCUDA,   /* the driver: only its variables and the dynamic loader */
  NBC__TOOLKIT_NVVM,      /* libnvvm.so */
  NBC__TOOLKIT_LIBDEVICE, /* libdevice.10.bc */
  NBC__TOOLKIT_NVJITLINK, /* libnvJitLink.so */
  NBC__TOOLKIT_NVRTC,     /* libnvrtc.so */
  NBC__TOOLKIT_CUDART,    /* libcudart.so */
  NBC__TOOLKIT_CUDADEVRT, /* libcudadevrt.a */
  NBC__TOOLKIT_NVDISASM,  /* the nvdisasm program */
  NBC__TOOLKIT_COUNT_
} nbc__toolkit_item;

typedef const char *(*nbc__toolkit_getenv_fn)(const char *name);
/* Whether the file at path (or, for the dynamic loader, the bare name) is the one wanted.
 * On false, why (may stay "") says what is wrong with it, for the record. */
typedef bool (*nbc__toolkit_accept_fn)(void *data, const char *path, char *why,
                                      size_t why_size);

/* One search: the inputs a caller may set (zero means the default), then what came out. */
typedef struct nbc__toolkit_search {
  nbc__toolkit_getenv_fn getenv; /* NULL: the process environment (tests pass their own) */
  const char *root;              /* prefix of the fixed system folders, "" or NULL: none */
  bool no_loader;                /* skip the dynamic loader's own path */
  const char *beside;            /* a file found before (libNVVM for libdevice), or NULL */
  const char *const *sites;      /* the site-packages folders, NULL-terminated (sys.path);
                                    NULL: guessed (toolkit.c) */
  nbc__toolkit_accept_fn accept; /* NULL: dlopen for a library (the handle goes to handle),
                                    an existing file, an executable program */
  void *data;                    /* for accept */

  char path[4096];    /* what was accepted */
  const char *origin; /* where it was found: "NBCUDA_NVVM", "CUDA_HOME", "default toolkit",
                         "next to libNVVM", "dynamic loader path", "pip wheel", "PATH" */
  void *handle;       /* the default accept's dlopen handle */
  const char *env_name;  /* the item's variable that was set (the search stopped there) */
  const char *env_value; /* its value */
  char why[1024];        /* the reason the last candidate was rejected, "" if none */
  int tried;             /* places recorded, and how many did not fit in record */
  int dropped;
  size_t record_len;
  char record[8192]; /* the places tried; read with nbc__toolkit_tried */
} nbc__toolkit_search;

/* Looks for item as said above: 0 with s->path and s->origin, -1 when nothing was accepted.
 * Either way s's record lists every place tried. */
int nbc__toolkit_find(nbc__toolkit_item item, nbc__toolkit_search *s);

/* How nbc__toolkit_tried writes the record. */
typedef enum nbc__toolkit_style {
  NBC__TOOLKIT_LINES,  /* "  - <place> (<origin>[: <why>])\n" per place */
  NBC__TOOLKIT_INLINE, /* "<VAR>=<value>[ (<why>)]" or "<place> (<origin>[: <why>])",
                          "; "-separated; a variable that names nothing has no why */
} nbc__toolkit_style;
/* The places s tried, in out (always NUL-terminated); returns out. */
char *nbc__toolkit_tried(const nbc__toolkit_search *s, nbc__toolkit_style style, char *out,
                         size_t size);
/* The item's name for messages: "libNVVM", "nvJitLink", "libcudadevrt.a", ... */
const char *nbc__toolkit_name(nbc__toolkit_item item);

/* A shared library found and opened as above, with the entry points it must have: a
 * candidate lacking one is rejected ("has no <name>") and the search goes on. 0 with path
 * what was opened and every slot filled; -1 with error "<name> cannot be found or loaded
 * (searched <the record, inline>)". The library stays loaded (NVRTC loses memory when
 * unloaded). */
typedef struct nbc__symbol {
  const char *name;
  void **slot;
} nbc__symbol;
int nbc__toolkit_load(nbc__toolkit_item item, const nbc__symbol *symbols, size_t count,
                      char *path, size_t path_size, char *error, size_t error_size);

#endif /* NBC_BASE_TOOLKIT_H */
