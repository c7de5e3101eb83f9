/* json.h — JSON text for the reports nbcuda prints (nbc_info_print, the CLI's detect --json). */
#ifndef NBCUDA_BASE_JSON_H
#define NBCUDA_BASE_JSON_H

#include <stdio.h>

/* Writes s as a JSON string literal ("" for NULL): quotes and backslashes escaped, control
 * characters as \n, \t or \u00XX; other bytes (UTF-8 included) as they are. */
void nbc__json_string(FILE *out, const char *s);

#endif
