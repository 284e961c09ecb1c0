/* glibc's abort message: the text assert() and __libc_message leave in
 * `__abort_msg` before they call abort(). */
#ifndef ANALYZER_ABORTMSG_H
#define ANALYZER_ABORTMSG_H

#include "analysis.h"
#include "../dwarf/dwarf.h"

/* Set AN->abort_message (malloc'd, owned by AN) from the core, or leave it
 * NULL when the program has no __abort_msg or it is unset.  A message that
 * is set but cannot be trusted (unmapped, size out of bounds, no NUL) is a
 * warning on AN instead. */
void an_abort_message_recover(struct dbg_session *s, struct analysis *an);

#endif
