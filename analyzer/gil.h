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
 * _PyRuntime.ceval.gil, 3.12 on in the main interpreter (ceval.gil points
 * to it); the layouts from the interpreter's DWARF (none: nothing done).
 * False only when memory ran out. */
bool an_gil_analyze(struct core *core, struct dbg_session *s, struct analysis *an);

#endif
