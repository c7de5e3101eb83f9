/* json.c — JSON string literals for nbcuda's machine-readable reports. The reports are
 * written with fprintf; only strings that come from outside (paths, device names, error
 * messages, environment values) need escaping, which is all this file does. */
#include "base/json.h"

void nbc__json_string(FILE *out, const char *s) {
  fputc('"', out);
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(out, "\\%c", c);
    else if (c == '\n')
      fputs("\\n", out);
    else if (c == '\t')
      fputs("\\t", out);
    else if (c < 0x20)
      fprintf(out, "\\u%04x", c);
    else
      fputc(c, out);
  }
  fputc('"', out);
}
