/* The analysis driver: core -> struct analysis. */
#ifndef ANALYZER_DRIVER_H
#define ANALYZER_DRIVER_H

#include "analysis.h"
#include "pyasync.h"
#include "siglists.h"
#include "rtdesc.h"
#include "../corefile/identity.h"
#include "../dwarf/dwarf.h"

struct an_options {
	struct dbg_options dbg;
	bool no_async;              /* skip the folly async splice */
	bool no_recorders;          /* skip flight-recorder recovery */
	bool no_args;               /* skip frame arguments */
	bool no_tasks;              /* skip runtimes' tasks (bthreads,
				       goroutines, asyncio's) */
	bool locals;                /* the crashing thread's frames' local variables */
	bool locals_all;            /* ... and every other thread's */
	const struct an_signature_lists *signature_lists;   /* NULL: built-in */
	bool journal;               /* read the core's systemd-coredump journal entry */
	const char *journal_dir;    /* its journal files; NULL: the system's journal */
	const struct an_runtimes *runtimes;   /* runtime descriptions (borrowed), or NULL */
	struct an_asyncio_scope asyncio;      /* where asyncio's tasks are looked for */
};

/* Analyse CORE (borrowed; its warnings move into the analysis), whose
 * identity ID the caller took with corefile/identity.h (and the SHA-256 of
 * its file, when the caller started it, collected last).  Returns an error
 * only when nothing can be reported (out of memory), or when a runtime
 * description does not fit the program (CORE_ERROR_USAGE: a member it names
 * resolves nowhere; checked before any thread is unwound); otherwise *OUT is
 * a new analysis (caller destroys it) whose warnings say what could not be
 * recovered.  CACHE may be NULL. */
struct core_error *an_analyze(struct core *core, const struct core_identity *id,
			      const struct an_options *opts, struct dbg_cache *cache,
			      struct analysis **out);

#endif
