/* Recomputing the stored signatures: the store reads each core's crashing
 * stack back as plain frames, a caller-given function signs it (cli/ hands
 * in the analyzer's), and every changed signature is written, all in one
 * transaction. */
#ifndef REPORTS_STORE_RESIGN_H
#define REPORTS_STORE_RESIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../analyzer/analysis.h"
#include "store.h"

/* One stored core as its signature is computed: the signal and the
 * crashing thread's frames (kind, function, module, module_offset and pc
 * filled; borrowed for the call). */
struct rep_stored_crash {
	int64_t id;
	bool has_signal;
	int signo;
	const char *signal_name;    /* NULL when the store has none */
	const struct an_frame *frames;
	size_t nframes;
};

/* Sign C: 0 with *SIGNATURE and *HASH (malloc'd; the store frees them), or
 * -1 (out of memory). */
typedef int rep_sign_fn(void *ctx, const struct rep_stored_crash *c, char **signature,
			char **hash);

struct rep_resign_result {
	size_t cores;               /* cores signed */
	size_t changed;             /* cores whose signature changed */
	size_t buckets_before, buckets_after;
	size_t merged;              /* buckets now holding cores of two or more old ones */
	size_t split;               /* old buckets whose cores now lie in two or more */
};

/* Recompute the signature of every core in ST with SIGN, in one
 * transaction (all or nothing).  Returns 0 and *OUT, or -1 with a one-line
 * reason in WHY. */
int rep_store_resign(struct rep_store *st, rep_sign_fn *sign, void *ctx,
		     struct rep_resign_result *out, char *why, size_t whylen);

#endif
