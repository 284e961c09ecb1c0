/* The analysis driver: core -> struct analysis. */
#ifndef ANALYZER_ANALYZE_H
#define ANALYZER_ANALYZE_H

#include "analysis.h"
#include "../dwarf/dwarf.h"

struct an_options {
	struct dbg_options dbg;
	bool no_async;              /* skip the folly async splice */
	bool no_recorders;          /* skip flight-recorder recovery */
	bool no_hash;               /* skip the core content hash */
	bool no_args;               /* skip frame arguments */
};

/* Analyse the core at PATH.  Returns an error only when the core is unusable
 * (exit status 2); otherwise *OUT is a new analysis (caller destroys it) whose
 * warnings say what could not be recovered.  CACHE may be NULL. */
struct core_error *an_analyze(const char *path, const struct an_options *opts,
			      struct dbg_cache *cache, struct analysis **out);

#endif
