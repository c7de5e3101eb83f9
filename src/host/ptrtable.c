/* ptrtable.c — the table of addresses nbcuda handed out: which context each allocation or
 * registration belongs to, and that context's lifetime when it was made.
 *
 * memory.c keeps one for device allocations (so nbc_context_reset frees what nbcuda made in
 * the context, and nbc_mem_free finds the context whose deferred-cleanup scope applies);
 * hostmem.c keeps one for page-locked allocations and registrations (so a free after a reset
 * of their context only drops the record); ipc.c one for IPC mappings. Each user owns a static
 * table. memory.c and hostmem.c let the table make the records (add, take): a taken record is
 * kept as a spare for the next add (spares.c's list, under the table's lock: one lock per
 * operation), so allocating and freeing in turn, the usual pattern, costs no malloc or free
 * beyond the first. ipc.c embeds its record in its mapping object and hands it over itself
 * (insert, remove).
 *
 * A record is keyed by its address and a tag (hostmem.c tells a registration from an
 * allocation at the same address by it). The table is a fixed array of chained buckets
 * (multiplicative hash of the address), every operation under the table's own spin lock
 * (spares.c): the critical sections are a few pointer moves, and call nothing.
 */
#include <stdlib.h>

#include "host/host.h"

static unsigned bucket_of(uintptr_t address) {
  uint64_t h = (uint64_t)address * 0x9E3779B97F4A7C15ull;
  return (unsigned)(h >> 54) & (NBC__PTRTABLE_BUCKETS - 1);
}

/* The link that points at the record of (address, tag), or at the NULL ending its chain. */
static nbc__ptr_record_t **link_of(nbc__ptrtable_t *table, uintptr_t address, int tag) {
  nbc__ptr_record_t **link = &table->buckets[bucket_of(address)];
  while (*link && ((*link)->address != address || (*link)->tag != tag))
    link = &(*link)->next;
  return link;
}

void nbc__ptrtable_insert(nbc__ptrtable_t *table, nbc__ptr_record_t *record) {
  nbc__ptr_record_t **head = &table->buckets[bucket_of(record->address)];
  nbc__spin_lock(&table->busy);
  record->next = *head;
  *head = record;
  nbc__spin_unlock(&table->busy);
}

int nbc__ptrtable_add(nbc__ptrtable_t *table, const nbc__ptr_record_t *fields) {
  nbc__ptr_record_t **head = &table->buckets[bucket_of(fields->address)];
  nbc__spin_lock(&table->busy);
  nbc__ptr_record_t *record = nbc__spares_pop(&table->spares);
  if (!record) { /* malloc outside the lock */
    nbc__spin_unlock(&table->busy);
    if (!(record = malloc(sizeof *record))) return -1;
    nbc__spin_lock(&table->busy);
  }
  *record = *fields;
  record->next = *head;
  *head = record;
  nbc__spin_unlock(&table->busy);
  return 0;
}

int nbc__ptrtable_take(nbc__ptrtable_t *table, uintptr_t address, int tag,
                       nbc__ptr_record_t *pcopy) {
  nbc__spin_lock(&table->busy);
  nbc__ptr_record_t **link = link_of(table, address, tag);
  nbc__ptr_record_t *record = *link;
  int found = record != NULL, kept = 0;
  if (found) {
    *link = record->next;
    *pcopy = *record;
    kept = nbc__spares_push(&table->spares, record);
  }
  nbc__spin_unlock(&table->busy);
  if (found && !kept) free(record);
  if (found) pcopy->next = NULL;
  return found;
}

nbc__ptr_record_t *nbc__ptrtable_remove(nbc__ptrtable_t *table, uintptr_t address, int tag) {
  nbc__spin_lock(&table->busy);
  nbc__ptr_record_t **link = link_of(table, address, tag);
  nbc__ptr_record_t *record = *link;
  if (record) *link = record->next;
  nbc__spin_unlock(&table->busy);
  if (record) record->next = NULL;
  return record;
}

int nbc__ptrtable_find(nbc__ptrtable_t *table, uintptr_t address, int tag,
                       nbc__ptr_record_t *pcopy) {
  nbc__spin_lock(&table->busy);
  nbc__ptr_record_t *record = *link_of(table, address, tag);
  if (record) *pcopy = *record;
  nbc__spin_unlock(&table->busy);
  if (record) pcopy->next = NULL; /* the chain is the table's, and may change at once */
  return record != NULL;
}

int nbc__ptrtable_retag(nbc__ptrtable_t *table, uintptr_t address, int from, int to,
                        unsigned unless, nbc__ptr_record_t *pcopy) {
  nbc__spin_lock(&table->busy);
  nbc__ptr_record_t *record = *link_of(table, address, from);
  int found = 0;
  if (record) {
    *pcopy = *record;
    found = record->flags & unless ? -1 : 1;
    if (found > 0) record->tag = to; /* the bucket is the address's: the chain stays */
  }
  nbc__spin_unlock(&table->busy);
  if (record) pcopy->next = NULL;
  return found;
}

int nbc__ptrtable_set_flags(nbc__ptrtable_t *table, uintptr_t address, int tag, unsigned flags) {
  nbc__spin_lock(&table->busy);
  nbc__ptr_record_t *record = *link_of(table, address, tag);
  if (record) record->flags |= flags;
  nbc__spin_unlock(&table->busy);
  return record != NULL;
}

nbc__ptr_record_t *nbc__ptrtable_detach_context(nbc__ptrtable_t *table,
                                                const nbc_context_t *context) {
  nbc__ptr_record_t *detached = NULL;
  nbc__spin_lock(&table->busy);
  for (unsigned b = 0; b < NBC__PTRTABLE_BUCKETS; b++) {
    nbc__ptr_record_t **link = &table->buckets[b];
    while (*link) {
      nbc__ptr_record_t *record = *link;
      if (record->context == context) {
        *link = record->next;
        record->next = detached;
        detached = record;
      } else {
        link = &record->next;
      }
    }
  }
  nbc__spin_unlock(&table->busy);
  return detached;
}
