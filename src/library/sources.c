/* sources.c — the library kernels' source by name, and the one way templates among them are
 * filled.
 *
 * nbcuda's own device code (the transpose behind DeviceNDArray.T, cuda.reduce's kernel,
 * nbcuda.random's generators, the cmath module, the kernels vectorize and guvectorize wrap
 * around a user's function, numpy's complex formulas) is kernel-language source in
 * src/library/ (one .py file each), compiled by nbcuda like any user kernel. CMake embeds each file as a C
 * array (cmake/embed.cmake, generated/library/<name>.h); NBC_LIBRARY_KERNEL_LIST names them
 * all, so adding a file adds a row here without an edit.
 *
 * A template is such a file with placeholders @KEY@ (capitals, digits and '_') where the
 * caller's text goes: a kernel's name, its parameter list. A decorator (@cuda.jit) or the
 * matrix operator are not placeholders: they are not capitals closed by '@'.
 */
#include <stdlib.h>
#include <string.h>

#include "driver/driver_api.h" /* nbc__set_error */
#include "library/all.h"       /* generated: the arrays and NBC_LIBRARY_KERNEL_LIST */

static const struct {
  const char *name;
  const unsigned char *text;
  size_t size;
} sources[] = {
#define NBC_LIBRARY_ROW_(name) {#name, nbc_library_##name, sizeof nbc_library_##name - 1},
    NBC_LIBRARY_KERNEL_LIST(NBC_LIBRARY_ROW_)
#undef NBC_LIBRARY_ROW_
};

const char *nbc_library_kernel_source(const char *name, size_t *psize) {
  for (size_t i = 0; name && i < sizeof sources / sizeof sources[0]; i++)
    if (strcmp(sources[i].name, name) == 0) {
      if (psize) *psize = sources[i].size;
      return (const char *)sources[i].text;
    }
  if (psize) *psize = 0;
  return NULL;
}

/* The length of the placeholder key starting at p (after an '@'), or 0 when p does not start
 * one: [A-Z_][A-Z0-9_]* closed by '@'. */
static size_t key_length(const char *p) {
  size_t n = 0;
  while ((p[n] >= 'A' && p[n] <= 'Z') || p[n] == '_' || (n && p[n] >= '0' && p[n] <= '9'))
    n++;
  return n && p[n] == '@' ? n : 0;
}

/* The value given for the key of n characters at key, or NULL. */
static const char *value_of(const char *const *pairs, const char *key, size_t n) {
  for (size_t i = 0; pairs && pairs[i] && pairs[i + 1]; i += 2)
    if (strlen(pairs[i]) == n && memcmp(pairs[i], key, n) == 0) return pairs[i + 1];
  return NULL;
}

/* Fills the template into out (when not NULL) and returns the filled length, or
 * (size_t)-1 after setting the error for a placeholder without a value. */
static size_t fill(const char *name, const char *text, const char *const *pairs, char *out) {
  size_t len = 0;
  for (const char *p = text; *p;) {
    size_t n = *p == '@' ? key_length(p + 1) : 0;
    const char *piece = p, *value = n ? value_of(pairs, p + 1, n) : NULL;
    size_t size = 1;
    if (n && !value) {
      nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_library_kernel_fill: template '%s' has "
                     "@%.*s@ and no value was given for it", name, (int)n, p + 1);
      return (size_t)-1;
    }
    if (value) {
      piece = value;
      size = strlen(value);
      p += n + 2;
    } else {
      p++;
    }
    if (out) memcpy(out + len, piece, size);
    len += size;
  }
  return len;
}

nbc_status_t nbc_library_kernel_fill(const char *name, const char *const *pairs, char **ptext) {
  if (!ptext) return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_library_kernel_fill: NULL ptext");
  *ptext = NULL;
  const char *text = nbc_library_kernel_source(name, NULL);
  if (!text)
    return nbc__set_error(NBC_INVALID_ARGUMENT, "nbc_library_kernel_fill: no library kernel "
                          "named '%s'", name ? name : "(null)");
  size_t len = fill(name, text, pairs, NULL);
  if (len == (size_t)-1) return NBC_INVALID_ARGUMENT;
  char *out = malloc(len + 1);
  if (!out) return nbc__set_error(NBC_NO_MEMORY, "out of host memory");
  fill(name, text, pairs, out);
  out[len] = '\0';
  *ptext = out;
  return NBC_OK;
}
