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

/* Append AN's asyncio tasks; layouts from the interpreter's and _asyncio's
 * DWARF (without them, or without a CPython description resolved in RS,
 * nothing is done).  A damaged list or chain ends with a warning.  False
 * only when memory ran out. */
bool an_asyncio_tasks(struct core *core, struct dbg_session *s, struct an_runtime_session *rs,
		      struct analysis *an);

#endif
