/* text_util.h — a growing string for tests that build their inputs at run time (deep
 * nesting, long chains). malloc'd; the test frees it or its process ends soon after. */
#ifndef NBCUDA_TEXT_UTIL_H
#define NBCUDA_TEXT_UTIL_H

#include <stdlib.h>
#include <string.h>

#include "test.h"

typedef struct text {
  char *data;
  size_t len, cap;
} text;

static inline void put(text *t, const char *s) {
  size_t n = strlen(s);
  if (t->len + n + 1 > t->cap) {
    t->cap = (t->len + n + 1) * 2;
    t->data = realloc(t->data, t->cap);
    ASSERT(t->data);
  }
  memcpy(t->data + t->len, s, n + 1);
  t->len += n;
}

static inline void put_times(text *t, const char *s, int times) {
  for (int i = 0; i < times; i++)
    put(t, s);
}

#endif /* NBCUDA_TEXT_UTIL_H */
