/* CPython's global interpreter lock as a lock with a holder (DESIGN.md
 * "CPython 3.8 to 3.13", "Hangs"): a thread waiting on the GIL's condition
 * waits for the GIL, held by the thread whose state the GIL names as its
 * last holder while it is locked. */
#ifndef ANALYZER_GIL_H
#define ANALYZER_GIL_H

#include "analysis.h"
#include "../dwarf/dwarf.h"

/* Make every thread blocked on the GIL's condition (an_blocking_analyze
 * first) a wait for the GIL, with its holder: 3.8-3.11 keep the GIL in
 * _PyRuntime.ceval.gil, 3.12 on each interpreter's ceval.gil points to the
 * one it uses; the holder's OS thread is its thread state's
 * native_thread_id (3.11 on), else the tid of the struct pthread its
 * thread_id is; a free-threading build's disabled GIL has no holder.  The
 * layouts from the interpreter's DWARF (none: nothing done).  False only
 * when memory ran out. */
bool an_gil_analyze(struct core *core, struct dbg_session *s, struct analysis *an);

#endif
