/* One stack is shown once (DESIGN.md, "Runtime descriptions"): the stacks
 * the descriptions of one analysis have shown, so that a description that
 * reads a stack another has shown contributes nothing there.
 *
 * Two readings are of the same stack when they read the same stack object,
 * or, on the same thread, read an entry at the same address (two roots, or
 * two layouts, that reach one runtime's frames).  Descriptions are spliced
 * in the order of their set, the ones given on the command line first, so
 * the first to show a stack is the one that wins. */
#ifndef ANALYZER_RTCLAIMS_H
#define ANALYZER_RTCLAIMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "addrset.h"

struct an_rt_claim {
	size_t desc;                /* the description's index in its set */
	uint64_t obj;               /* the stack object it read */
	int32_t tid;                /* the thread it showed the stack on */
	struct an_addr_set entries; /* the addresses of the entries it read */
};

struct an_rt_claims {
	struct an_rt_claim *v;
	size_t n, cap;
};

/* Whether a description other than DESC has shown the stack object OBJ. */
bool an_rt_claims_object(const struct an_rt_claims *c, size_t desc, uint64_t obj);

/* Whether a description other than DESC has shown, on thread TID, a stack
 * with an entry at one of ENTRIES [0, N). */
bool an_rt_claims_entries(const struct an_rt_claims *c, size_t desc, int32_t tid,
			  const uint64_t *entries, size_t n);

/* Record that DESC showed the stack object OBJ, entries ENTRIES [0, N), on
 * thread TID.  False when out of memory (the stack is then not recorded). */
bool an_rt_claims_add(struct an_rt_claims *c, size_t desc, uint64_t obj, int32_t tid,
		      const uint64_t *entries, size_t n);

/* Free what C holds (not C). */
void an_rt_claims_deinit(struct an_rt_claims *c);

#endif
