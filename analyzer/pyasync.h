/* asyncio's tasks in a CPython process (3.8 to 3.13): each pending
 * _asyncio.Task (or a class derived from it) among the objects the
 * collector tracks, listed in the analysis's tasks with runtime "asyncio",
 * its name, its coroutine's await chain as frames (innermost first, each
 * suspended coroutine's file and line through the CPython description)
 * and what it awaits last (a future, another task). */
#ifndef ANALYZER_PYASYNC_H
#define ANALYZER_PYASYNC_H

#include "analysis.h"
#include "runtime.h"
#include "../dwarf/dwarf.h"

/* Where the tasks are looked for: every object the collector tracks, or
 * (KNOWN_ONLY) only the objects at KNOWN (a live process stopped after a
 * warm-up found them: a task made since then is missing, one done is
 * dropped).  TRANSIENT: the walk's pages are read transiently
 * (core_read_transient: a warm-up whose stop reads only the tasks). */
struct an_asyncio_scope {
	bool transient;
	bool known_only;
	const uint64_t *known;
	size_t nknown;
};

/* Append AN's asyncio tasks, looked for in SCOPE (NULL: everywhere); layouts from the interpreter's and _asyncio's
 * DWARF (without them, or without a CPython description resolved in RS,
 * nothing is done).  A damaged list or chain ends with a warning.  False
 * only when memory ran out. */
bool an_asyncio_tasks(struct core *core, struct dbg_session *s, struct an_runtime_session *rs,
		      const struct an_asyncio_scope *scope, struct analysis *an);

#endif
