/* Frame arguments: fills an_frame.args of every thread's and every task's
 * native frames; and on request an_frame.locals. */
#ifndef ANALYZER_ARGS_H
#define ANALYZER_ARGS_H

#include "analysis.h"
#include "../dwarf/dwarf.h"

/* Evaluate the formal parameters of every native frame of the threads and
 * the tasks that carries registers (has_args stays false for async frames
 * and frames without DWARF).  Returns false on out-of-memory. */
bool an_args_fill(struct analysis *an, struct dbg_session *s);

/* The local variables (gdb's `bt full`) of the crashing thread's native
 * frames and of the task running on it (a bthread's frames top its stack),
 * or with ALL_THREADS of every thread's and every task's, into
 * an_frame.locals.  Returns false on out-of-memory. */
bool an_locals_fill(struct analysis *an, struct dbg_session *s, bool all_threads);

#endif
