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

/* The C library's and the language runtime's frames (a thread's waiting
 * function is its first frame outside them). */
bool an_frame_in_runtime(const struct an_frame *f);

#endif
