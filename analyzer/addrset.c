#include "addrset.h"

#include <stdlib.h>
#include <string.h>

#include "../base/array.h"

static size_t slot_of(const struct an_addr_set *set, uint64_t a)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ULL;
	size_t i = (size_t)(h >> 32) & (set->nslots - 1);
	while (set->slots[i] && set->slots[i] != a)
		i = (i + 1) & (set->nslots - 1);
	return i;
}

bool an_addr_set_has(const struct an_addr_set *set, uint64_t a)
{
	if (a == 0)
		return set->has_zero;
	return set->nslots && set->slots[slot_of(set, a)] == a;
}

static bool rehash(struct an_addr_set *set)
{
	size_t nslots = set->nslots ? 2 * set->nslots : 64;
	uint64_t *slots = calloc(nslots, sizeof(*slots));
	if (!slots)
		return false;
	free(set->slots);
	set->slots = slots;
	set->nslots = nslots;
	for (size_t i = 0; i < set->n; i++)
		if (set->v[i])
			slots[slot_of(set, set->v[i])] = set->v[i];
	return true;
}

int an_addr_set_add(struct an_addr_set *set, uint64_t a)
{
	if (an_addr_set_has(set, a))
		return 0;
	if (!base_array_reserve(&set->v, &set->cap, set->n + 1, sizeof(*set->v)) || (2 * (set->n + 1) > set->nslots && !rehash(set)))
		return -1;
	set->v[set->n++] = a;
	if (a == 0)
		set->has_zero = true;
	else
		set->slots[slot_of(set, a)] = a;
	return 1;
}

void an_addr_set_deinit(struct an_addr_set *set)
{
	free(set->v);
	free(set->slots);
	memset(set, 0, sizeof(*set));
}
