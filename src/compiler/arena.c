/* arena.c — the compiler's memory: a chunked bump allocator and a growable string buffer.
 *
 * A compilation allocates many small objects (tokens, AST nodes, types, IR text) that all
 * die together when it ends. A bump allocator makes each allocation a pointer increment and
 * the end of the compilation one walk over a short list of chunks, and it removes every
 * individual free() (and so every leak and double free) from the phases.
 *
 * Memory is zeroed as it is handed out (not when a chunk is allocated, so a small
 * compilation does not pay for zeroing — and the kernel for faulting in — the unused part
 * of its chunk); nbc__arena_alloc_uninit skips even that, for arrays that are filled
 * element by element. A block (nbc__arena_block_alloc) is a chunk of its own that can be
 * resized with realloc, which for large blocks moves pages instead of copying bytes: the
 * tokenizer grows its array so, then trims it to the tokens it holds. A request larger
 * than a quarter of the default chunk gets a chunk of its own, placed behind the current
 * one so the current chunk's free space is not wasted. Every allocation is 16-byte aligned.
 *
 * nbc__buf is a string that grows by doubling inside the arena. When the buffer is the most
 * recent allocation of the current chunk it grows in place; otherwise it moves (the old copy
 * stays in the arena until the end, which costs at most as much as the final size). Its data
 * is always NUL-terminated, and a failed append sets `oom` instead of failing the caller, so
 * text producers need not check every append: they check `oom` once at the end.
 *
 * nbc__names maps names to ints for lookups that a scan would make quadratic (a function's
 * variables by name): open addressing in two arrays from the arena, doubled when half full
 * (the old arrays stay in the arena, at most as much as the final size).
 *
 * Tests may cap an arena's total size (nbc__arena_set_limit) to drive every phase through
 * its out-of-memory paths.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"

enum { CHUNK_SIZE = 64 * 1024, ALIGN = 16 };

typedef struct chunk {
  struct chunk *next;
  size_t size; /* usable bytes after the header */
  size_t used;
  /* The header is padded to ALIGN so that data is aligned like malloc's result. */
  _Alignas(16) unsigned char data[];
} chunk;

struct nbc__arena {
  chunk *head;  /* the chunk new small allocations come from */
  size_t total; /* bytes of all chunks */
  size_t limit; /* 0: unlimited; else the most `total` may reach (tests) */
};

nbc__arena *nbc__arena_create(void) {
  return calloc(1, sizeof(nbc__arena));
}

void nbc__arena_destroy(nbc__arena *arena) {
  if (!arena) return;
  chunk *c = arena->head;
  while (c) {
    chunk *next = c->next;
    free(c);
    c = next;
  }
  free(arena);
}

void nbc__arena_set_limit(nbc__arena *arena, size_t limit) {
  arena->limit = limit;
}

static chunk *chunk_new(nbc__arena *arena, size_t size) {
  if (size > SIZE_MAX - sizeof(chunk)) return NULL;
  if (arena->limit && (arena->total + size > arena->limit || arena->total + size < size))
    return NULL;
  chunk *c = malloc(sizeof(chunk) + size);
  if (!c) return NULL;
  c->next = NULL;
  c->size = size;
  c->used = 0;
  arena->total += size;
  return c;
}

/* A chunk holding just `size` bytes (aligned), linked behind the current chunk so that the
 * current chunk's free space stays in use. */
static void *own_chunk(nbc__arena *arena, size_t size) {
  chunk *block = chunk_new(arena, size);
  if (!block) return NULL;
  block->used = size;
  chunk *c = arena->head;
  if (c) {
    block->next = c->next;
    c->next = block;
  } else {
    arena->head = block;
  }
  return block->data;
}

void *nbc__arena_alloc(nbc__arena *arena, size_t size) {
  void *p = nbc__arena_alloc_uninit(arena, size);
  return p ? memset(p, 0, size) : NULL;
}

void *nbc__arena_alloc_uninit(nbc__arena *arena, size_t size) {
  if (!arena) return NULL;
  if (size == 0) size = 1;
  if (size > SIZE_MAX - ALIGN) return NULL;
  size = (size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
  chunk *c = arena->head;
  if (c && c->size - c->used >= size) {
    void *p = c->data + c->used;
    c->used += size;
    return p;
  }
  if (size > CHUNK_SIZE / 4) return own_chunk(arena, size); /* a big block */
  chunk *fresh = chunk_new(arena, CHUNK_SIZE);
  if (!fresh) return NULL;
  fresh->next = c;
  arena->head = fresh;
  fresh->used = size;
  return fresh->data;
}

void *nbc__arena_block_alloc(nbc__arena *arena, size_t size) {
  if (!arena || size > SIZE_MAX - ALIGN) return NULL;
  return own_chunk(arena, size ? (size + ALIGN - 1) & ~(size_t)(ALIGN - 1) : ALIGN);
}

void *nbc__arena_block_resize(nbc__arena *arena, void *block, size_t size) {
  if (!arena || !block || size > SIZE_MAX - sizeof(chunk) - ALIGN) return NULL;
  size = size ? (size + ALIGN - 1) & ~(size_t)(ALIGN - 1) : ALIGN;
  /* The block's chunk is found by a walk of the chunk list: resizes are few (the array
   * doubles), and a walk needs no back pointers in every chunk. */
  chunk **link = &arena->head;
  while (*link && (*link)->data != (unsigned char *)block)
    link = &(*link)->next;
  chunk *c = *link;
  if (!c) return NULL;
  size_t others = arena->total - c->size;
  if (arena->limit && (others + size > arena->limit || others + size < size)) return NULL;
  chunk *moved = realloc(c, sizeof(chunk) + size);
  if (!moved) return NULL;
  moved->size = moved->used = size;
  *link = moved;
  arena->total = others + size;
  return moved->data;
}

size_t nbc__arena_total(const nbc__arena *arena) {
  return arena ? arena->total : 0;
}

char *nbc__arena_strndup(nbc__arena *arena, const char *s, size_t n) {
  if (n == SIZE_MAX) return NULL;
  char *p = nbc__arena_alloc_uninit(arena, n + 1);
  if (!p) return NULL;
  if (n) memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *nbc__arena_strdup(nbc__arena *arena, const char *s) {
  return nbc__arena_strndup(arena, s, strlen(s));
}

char *nbc__arena_printf(nbc__arena *arena, const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *p = NULL;
  if (n >= 0) {
    p = nbc__arena_alloc_uninit(arena, (size_t)n + 1);
    if (p) vsnprintf(p, (size_t)n + 1, fmt, ap2);
  }
  va_end(ap2);
  return p;
}

/* ------------------------------------------------------------------ the string buffer --- */

/* Written never: an empty buffer points here so that data is always a valid C string. */
static char empty_string[1];

void nbc__buf_init(nbc__buf *b, nbc__arena *arena) {
  b->arena = arena;
  b->data = empty_string;
  b->len = 0;
  b->cap = 0;
  b->oom = false;
}

/* Makes room for `extra` more bytes plus the NUL. */
static bool buf_reserve(nbc__buf *b, size_t extra) {
  if (b->oom) return false;
  if (extra > SIZE_MAX / 4 - b->len) {
    b->oom = true;
    return false;
  }
  size_t need = b->len + extra + 1;
  if (need <= b->cap) return true;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < need)
    cap *= 2;
  chunk *c = b->arena ? b->arena->head : NULL;
  /* Growing in place: the buffer is the last thing allocated in the current chunk. */
  if (c && b->cap && (unsigned char *)b->data + b->cap == c->data + c->used &&
      (size_t)((unsigned char *)b->data - c->data) + cap <= c->size) {
    c->used = (size_t)((unsigned char *)b->data - c->data) + cap;
    b->cap = cap;
    return true;
  }
  char *data = nbc__arena_alloc_uninit(b->arena, cap);
  if (!data) {
    b->oom = true;
    return false;
  }
  memcpy(data, b->data, b->len + 1);
  b->data = data;
  b->cap = cap;
  return true;
}

void nbc__buf_append(nbc__buf *b, const char *s, size_t n) {
  if (n == 0 || !buf_reserve(b, n)) return;
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void nbc__buf_puts(nbc__buf *b, const char *s) {
  nbc__buf_append(b, s, strlen(s));
}

void nbc__buf_vprintf(nbc__buf *b, const char *fmt, va_list ap) {
  if (b->oom) return;
  va_list ap2;
  va_copy(ap2, ap);
  size_t room = b->cap > b->len ? b->cap - b->len : 0;
  int n = room ? vsnprintf(b->data + b->len, room, fmt, ap) : vsnprintf(NULL, 0, fmt, ap);
  if (n < 0) {
    va_end(ap2);
    return;
  }
  if ((size_t)n < room) {
    b->len += (size_t)n;
  } else if (buf_reserve(b, (size_t)n)) {
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
    b->len += (size_t)n;
  } else if (room) {
    b->data[b->len] = '\0'; /* undo the truncated attempt */
  }
  va_end(ap2);
}

void nbc__buf_printf(nbc__buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  nbc__buf_vprintf(b, fmt, ap);
  va_end(ap);
}

/* -------------------------------------------------------------------- the name map --- */

uint32_t nbc__hash_name(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

/* The slot of name, or of the empty slot where it would go. */
static int names_slot(const char *const *keys, int cap, const char *name) {
  uint32_t mask = (uint32_t)cap - 1, i = nbc__hash_name(name) & mask;
  while (keys[i] && strcmp(keys[i], name) != 0)
    i = (i + 1) & mask;
  return (int)i;
}

int nbc__names_get(const nbc__names *m, const char *name) {
  if (!m->cap) return -1;
  int i = names_slot(m->keys, m->cap, name);
  return m->keys[i] ? m->values[i] : -1;
}

bool nbc__names_set(nbc__names *m, nbc__arena *arena, const char *name, int value) {
  if (m->cap) { /* a name already in the map: no growth, so no failure */
    int i = names_slot(m->keys, m->cap, name);
    if (m->keys[i]) {
      m->values[i] = value;
      return true;
    }
  }
  if ((m->count + 1) * 2 > m->cap) {
    int cap = m->cap ? m->cap * 2 : 64;
    const char **keys = nbc__arena_alloc(arena, sizeof *keys * (size_t)cap);
    int *values = nbc__arena_alloc_uninit(arena, sizeof *values * (size_t)cap);
    if (!keys || !values) return false;
    for (int i = 0; i < m->cap; i++) {
      if (!m->keys[i]) continue;
      int j = names_slot(keys, cap, m->keys[i]);
      keys[j] = m->keys[i];
      values[j] = m->values[i];
    }
    m->keys = keys;
    m->values = values;
    m->cap = cap;
  }
  int i = names_slot(m->keys, m->cap, name);
  m->keys[i] = name;
  m->values[i] = value;
  m->count++;
  return true;
}
