/* One stored core read back into a struct analysis (the page `serve` shows
 * for /core/ID is `report --format html`'s, written from this), from either
 * store through a reader (reports/reader.h).  What a store does not keep
 * stays unknown: registers other than the four stored, locals, a
 * recursion's cycle beyond what its frames show. */
#ifndef REPORTS_STORE_LOAD_H
#define REPORTS_STORE_LOAD_H

#include "../analyzer/analysis.h"

struct rep_reader;

/* A core read back: the analysis, and the strings that stand where the
 * analysis holds static ones (signal names, task runtimes, wait kinds). */
struct rep_stored_core {
	struct analysis *an;
	char **strings;
	size_t nstrings, cap;
};

/* Read the core whose fingerprint is FINGERPRINT.  Returns 0 and *OUT
 * (rep_stored_core_destroy()), 1 when the store has no such core, -1 when
 * the store failed (reported on stderr) or out of memory. */
int rep_stored_core_load(struct rep_reader *r, const char *fingerprint,
			 struct rep_stored_core **out);

/* Free C and its analysis; NULL is a no-op. */
void rep_stored_core_destroy(struct rep_stored_core *c);

#endif
