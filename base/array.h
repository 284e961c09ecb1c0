/* The growable array and the range search every layer uses. */
#ifndef BASE_ARRAY_H
#define BASE_ARRAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Make room for NEED elements of ELEM bytes in the array at *(T **)PITEMS
 * whose allocated capacity is *CAP (doubling, from 8).  The new room is not
 * initialised.  False on out-of-memory or overflow (the array is unchanged). */
bool base_array_reserve(void *pitems, size_t *cap, size_t need, size_t elem);

/* Give back the room beyond the N elements of the array at *(T **)PITEMS
 * (capacity *CAP), once it is complete; kept as it is when realloc fails. */
void base_array_shrink(void *pitems, size_t *cap, size_t n, size_t elem);

/* Append one zeroed element to the array *(T **)PITEMS holding *N of *CAP;
 * returns it (the array still owns it), or NULL on out-of-memory. */
void *base_array_push(void *pitems, size_t *n, size_t *cap, size_t elem);

/* The slot of 64-bit KEY in an open-addressing table of CAP slots (a power
 * of two): the key's bits mixed, so addresses that differ only in their
 * high or low bits spread evenly. */
size_t base_hash_slot(uint64_t key, size_t cap);

/* Room for one more entry in an open-addressing table *(T **)PSLOTS of *CAP
 * slots (a power of two, from 256) holding USED: when it would be more than
 * half full, a table twice the size with the entries moved over.  Each
 * entry begins with its uint64_t hash and is found from base_hash_slot(hash,
 * cap) on (linear probing); a free slot is all zero bytes.  False on
 * out-of-memory (the table is unchanged). */
bool base_table_reserve(void *pslots, size_t *cap, size_t used, size_t elem);

/* [*START, *END) of the element at ELEM. */
typedef void base_range_fn(const void *elem, uint64_t *start, uint64_t *end);

/* Binary search of N elements of SIZE bytes at BASE, sorted by start and not
 * overlapping, for the one whose range holds KEY; NULL when none does. */
const void *base_range_find(const void *base, size_t n, size_t size, uint64_t key,
			    base_range_fn *range);

#endif
