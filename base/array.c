#include "array.h"

#include <stdlib.h>
#include <string.h>

bool base_array_reserve(void *pitems, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return true;
	size_t ncap = *cap ? *cap : 8;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return false;
		ncap *= 2;
	}
	if (elem && ncap > SIZE_MAX / elem)
		return false;
	void *items;
	memcpy(&items, pitems, sizeof(items));   /* PITEMS points at a T * */
	void *grown = realloc(items, ncap * elem);
	if (!grown)
		return false;
	memcpy(pitems, &grown, sizeof(grown));
	*cap = ncap;
	return true;
}

void base_array_shrink(void *pitems, size_t *cap, size_t n, size_t elem)
{
	if (n == 0 || n >= *cap)
		return;
	void *items;
	memcpy(&items, pitems, sizeof(items));
	void *fit = realloc(items, n * elem);
	if (fit) {
		memcpy(pitems, &fit, sizeof(fit));
		*cap = n;
	}
}

void *base_array_push(void *pitems, size_t *n, size_t *cap, size_t elem)
{
	if (*n == SIZE_MAX || !base_array_reserve(pitems, cap, *n + 1, elem))
		return NULL;
	unsigned char *items;
	memcpy(&items, pitems, sizeof(items));
	void *slot = items + (*n)++ * elem;
	memset(slot, 0, elem);
	return slot;
}

size_t base_hash_slot(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

static bool all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

bool base_table_reserve(void *pslots, size_t *cap, size_t used, size_t elem)
{
	unsigned char **slots = pslots;
	if (2 * (used + 1) <= *cap)
		return true;
	size_t ncap = *cap ? 2 * *cap : 256;
	unsigned char *fresh = calloc(ncap, elem);
	if (!fresh)
		return false;
	for (size_t i = 0; i < *cap; i++) {
		const unsigned char *e = *slots + i * elem;
		if (all_zero(e, elem))
			continue;
		uint64_t hash;
		memcpy(&hash, e, sizeof(hash));
		size_t j = base_hash_slot(hash, ncap);
		while (!all_zero(fresh + j * elem, elem))
			j = (j + 1) & (ncap - 1);
		memcpy(fresh + j * elem, e, elem);
	}
	free(*slots);
	*slots = fresh;
	*cap = ncap;
	return true;
}

const void *base_range_find(const void *base, size_t n, size_t size, uint64_t key,
			    base_range_fn *range)
{
	const unsigned char *b = base;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t start, end;
		range(b + mid * size, &start, &end);
		if (key < start)
			hi = mid;
		else if (key >= end)
			lo = mid + 1;
		else
			return b + mid * size;
	}
	return NULL;
}
