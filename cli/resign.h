/* `asyncore resign`'s signing of a stored core (cli/resign.c), for the
 * tests that check it against the analyzer's own. */
#ifndef CLI_RESIGN_H
#define CLI_RESIGN_H

#include "../analyzer/signature.h"
#include "../reports/store_resign.h"

/* What the signature of the stored crash C is computed from, as
 * an_signature_compute() computes an analysis's: its frames from
 * an_signature_start() on (the frame a caught fault interrupted, so a crash
 * handler's frames and its trampoline are left out), the recursion's place
 * relative to that, and the signal an_signature_set_signal() picks from
 * C's (a Go crash's, the caught one, else the core's).  Borrows C's frames
 * and strings. */
struct an_signature_input cli_stored_signature_input(const struct rep_stored_crash *c);

#endif
