/* Stacks shown by runtime descriptions, one claim per stack shown. */
#include "rtclaims.h"

#include <stdlib.h>

#include "../base/array.h"

bool an_rt_claims_object(const struct an_rt_claims *c, size_t desc, uint64_t obj)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].desc != desc && c->v[i].obj == obj)
			return true;
	return false;
}

bool an_rt_claims_entries(const struct an_rt_claims *c, size_t desc, int32_t tid,
			  const uint64_t *entries, size_t n)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct an_rt_claim *cl = &c->v[i];
		if (cl->desc == desc || cl->tid != tid)
			continue;
		for (size_t k = 0; k < n; k++)
			if (an_addr_set_has(&cl->entries, entries[k]))
				return true;
	}
	return false;
}

bool an_rt_claims_add(struct an_rt_claims *c, size_t desc, uint64_t obj, int32_t tid,
		      const uint64_t *entries, size_t n)
{
	struct an_rt_claim cl = { .desc = desc, .obj = obj, .tid = tid };
	for (size_t k = 0; k < n; k++)
		if (an_addr_set_add(&cl.entries, entries[k]) < 0) {
			an_addr_set_deinit(&cl.entries);
			return false;
		}
	struct an_rt_claim *slot = base_array_push(&c->v, &c->n, &c->cap, sizeof(*c->v));
	if (!slot) {
		an_addr_set_deinit(&cl.entries);
		return false;
	}
	*slot = cl;
	return true;
}

void an_rt_claims_deinit(struct an_rt_claims *c)
{
	for (size_t i = 0; i < c->n; i++)
		an_addr_set_deinit(&c->v[i].entries);
	free(c->v);
	*c = (struct an_rt_claims){ 0 };
}
