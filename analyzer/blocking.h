/* What each thread waits for and who holds it (DESIGN.md "Hangs"): the
 * system call its saved registers show, the C library's wait functions
 * among its frames and their arguments, and what the object records of its
 * holder (a mutex's owner, a rwlock's writer, a joined thread's tid). */
#ifndef ANALYZER_BLOCKING_H
#define ANALYZER_BLOCKING_H

#include "analysis.h"
#include "../dwarf/dwarf.h"

/* Fill every thread's blocked (NULL for one on the CPU).  Call after the
 * stacks and their arguments; S may be NULL (no debug information: the
 * system call alone says what it can).  False only when memory ran out. */
bool an_blocking_analyze(struct core *core, struct dbg_session *s, struct analysis *an);

/* B's summary ("waits for mutex ledger_lock, held by thread 4212") made
 * again from its members.  False only when memory ran out. */
bool an_blocked_summarize(struct an_blocked *b);

/* The C library's and the language runtime's frames (a thread's waiting
 * function is its first frame outside them). */
bool an_frame_in_runtime(const struct an_frame *f);

/* The function thread T waits in: its innermost script frame's (a Python
 * line, where a runtime description gave its frames), else its first named
 * frame outside the C library and the runtime; NULL: none. */
const char *an_waiting_function(const struct an_thread *t);

#endif
