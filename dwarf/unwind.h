/* Thread state for libdwfl's unwinder, fed from the core's registers and
 * bounded reader. */
#ifndef DWARF_UNWIND_H
#define DWARF_UNWIND_H

#include "internal.h"

/* Attach the core's threads to the session's Dwfl; a failure is a warning
 * (stacks then stay empty). */
void dbg_unwind_attach(struct dbg_session *s);

#endif
