/* A set of target addresses, kept in insertion order with hashed membership:
 * the cycle checks and de-duplication of pointers read from a core. */
#ifndef ANALYZER_ADDRSET_H
#define ANALYZER_ADDRSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct an_addr_set {
	uint64_t *v;                /* members in insertion order */
	size_t n, cap;
	uint64_t *slots;            /* open addressing; 0 marks an empty slot */
	size_t nslots;
	bool has_zero;
};

bool an_addr_set_has(const struct an_addr_set *set, uint64_t a);

/* Add A: 1 when added, 0 when already there, -1 on out-of-memory. */
int an_addr_set_add(struct an_addr_set *set, uint64_t a);

/* Free what the set holds; it is empty (and reusable) afterwards. */
void an_addr_set_deinit(struct an_addr_set *set);

#endif
