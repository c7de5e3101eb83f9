/* ptrtable.c — the table of addresses nbcuda handed out: which context each allocation or
 * registration belongs to, and that context's lifetime when it was made.
 *
 * memory.c keeps one for device allocations (so nbc_context_reset frees what nbcuda made in
 * the context, and nbc_mem_free finds the context whose deferred-cleanup scope applies);
 * hostmem.c keeps one for page-locked allocations and registrations (so a free after a reset
 * of their context only drops the record). Each user owns a static table; the table owns no
 * memory: the caller allocates a record, hands it over with insert and takes it back (and
 * frees it) from remove or detach, so one allocation costs one malloc.
 *
 * A record is keyed by its address and a tag (hostmem.c tells a registration from an
 * allocation at the same address by it). The table is a fixed array of chained buckets
 * (multiplicative hash of the address), every operation under the table's own lock: the
 * critical sections are a few pointer moves, and allocation is not a contended path.
 */
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
  pthread_mutex_lock(&table->lock);
  record->next = *head;
  *head = record;
  pthread_mutex_unlock(&table->lock);
}

nbc__ptr_record_t *nbc__ptrtable_remove(nbc__ptrtable_t *table, uintptr_t address, int tag) {
  pthread_mutex_lock(&table->lock);
  nbc__ptr_record_t **link = link_of(table, address, tag);
  nbc__ptr_record_t *record = *link;
  if (record) *link = record->next;
  pthread_mutex_unlock(&table->lock);
  if (record) record->next = NULL;
  return record;
}

int nbc__ptrtable_find(nbc__ptrtable_t *table, uintptr_t address, int tag,
                       nbc__ptr_record_t *pcopy) {
  pthread_mutex_lock(&table->lock);
  nbc__ptr_record_t *record = *link_of(table, address, tag);
  if (record) *pcopy = *record;
  pthread_mutex_unlock(&table->lock);
  if (record) pcopy->next = NULL; /* the chain is the table's, and may change at once */
  return record != NULL;
}

nbc__ptr_record_t *nbc__ptrtable_detach_context(nbc__ptrtable_t *table,
                                                const nbc_context_t *context) {
  nbc__ptr_record_t *detached = NULL;
  pthread_mutex_lock(&table->lock);
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
  pthread_mutex_unlock(&table->lock);
  return detached;
}
