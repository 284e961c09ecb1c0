/* What killed the program: the `cause` of DESIGN.md's JSON, one line a
 * person reads first, decided from evidence in the core and never guessed. */
#ifndef ANALYZER_CAUSE_H
#define ANALYZER_CAUSE_H

#include "analysis.h"
#include "../dwarf/dwarf.h"

/* Decide AN->cause (replacing any) from the signal and fault address, the
 * crashing thread's registers, stack mapping and frames, glibc's abort
 * message and the C++ exception being thrown.  S may be NULL (no debug
 * session): what needs it is then missing evidence, and the kind falls back
 * to the plain signal's.  Call after the stacks are unwound.  False only
 * when memory ran out. */
bool an_cause_decide(struct core *core, struct dbg_session *s, struct analysis *an);

/* Set AN->cause to a hang: AN is a running process read live (an->live,
 * paused_us, taken_at set).  False only when memory ran out. */
bool an_cause_hang(struct analysis *an);

#endif
