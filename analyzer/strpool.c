#include "strpool.h"
#include "signature.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Open addressing over the strings' FNV-1a hashes; at most half full.
 * Callers pass the same few strings again and again (the symbolizer's
 * names of a frame's module and file), so the copies of the last strings
 * interned are also found by the caller's pointer, checked by comparing
 * the strings, before a string is hashed. */
enum { RECENT = 64 };

struct an_strpool {
	char **slots;
	uint64_t *hashes;
	size_t cap, n;
	struct {
		const char *from;       /* the caller's string, or NULL */
		char *copy;             /* its copy in the pool */
	} recent[RECENT];
};

static size_t recent_slot(const char *s)
{
	return ((uintptr_t)s >> 4) % RECENT;
}

struct an_strpool *an_strpool_create(void)
{
	return calloc(1, sizeof(struct an_strpool));
}

void an_strpool_destroy(struct an_strpool *pool)
{
	if (!pool)
		return;
	for (size_t i = 0; i < pool->cap; i++)
		free(pool->slots[i]);
	free(pool->slots);
	free(pool->hashes);
	free(pool);
}

/* The slot holding S (hash H), or the empty slot where it goes. */
static size_t slot_of(const struct an_strpool *pool, const char *s, uint64_t h)
{
	size_t i = (size_t)h & (pool->cap - 1);
	while (pool->slots[i] && !(pool->hashes[i] == h && strcmp(pool->slots[i], s) == 0))
		i = (i + 1) & (pool->cap - 1);
	return i;
}

static int grow(struct an_strpool *pool)
{
	struct an_strpool bigger = {.cap = pool->cap ? 2 * pool->cap : 256, .n = pool->n};
	bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
	bigger.hashes = calloc(bigger.cap, sizeof(*bigger.hashes));
	if (!bigger.slots || !bigger.hashes) {
		free(bigger.slots);
		free(bigger.hashes);
		return -1;
	}
	for (size_t i = 0; i < pool->cap; i++) {
		if (!pool->slots[i])
			continue;
		size_t j = slot_of(&bigger, pool->slots[i], pool->hashes[i]);
		bigger.slots[j] = pool->slots[i];
		bigger.hashes[j] = pool->hashes[i];
	}
	free(pool->slots);
	free(pool->hashes);
	*pool = bigger;
	return 0;
}

char *an_strpool_intern(struct an_strpool *pool, const char *s, int *nomem)
{
	if (!s)
		return NULL;
	size_t r = recent_slot(s);
	if (pool->recent[r].from == s && strcmp(pool->recent[r].copy, s) == 0)
		return pool->recent[r].copy;
	if (2 * (pool->n + 1) > pool->cap && grow(pool) != 0) {
		*nomem = 1;
		return NULL;
	}
	uint64_t h = an_signature_fnv1a(s);
	size_t i = slot_of(pool, s, h);
	if (!pool->slots[i]) {
		char *copy = strdup(s);
		if (!copy) {
			*nomem = 1;
			return NULL;
		}
		pool->slots[i] = copy;
		pool->hashes[i] = h;
		pool->n++;
	}
	pool->recent[r].from = s;
	pool->recent[r].copy = pool->slots[i];
	return pool->slots[i];
}
