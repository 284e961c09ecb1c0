/* Frame arguments: fills an_frame.args of every thread's and every task's
 * native frames. */
#ifndef ANALYZER_ARGS_H
#define ANALYZER_ARGS_H

#include "analysis.h"
#include "../dwarf/dwarf.h"

/* Evaluate the formal parameters of every native frame of the threads and
 * the tasks that carries registers (has_args stays false for async frames
 * and frames without DWARF).  Returns false on out-of-memory. */
bool an_args_fill(struct analysis *an, struct dbg_session *s);

#endif
