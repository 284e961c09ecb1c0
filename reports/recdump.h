/* Flight-recorder events in the recorder library's own dump format. */
#ifndef REPORTS_RECDUMP_H
#define REPORTS_RECDUMP_H

#include <stdio.h>

#include "../analyzer/analysis.h"

/* Print every recovered event of every ring, merged by order, one line each
 * exactly as the library's recorder_dump() prints them:
 * "[ORDER SECONDS] NAME: MESSAGE", SECONDS being the timestamp in
 * microseconds shown with %.6f, and a plain %s argument shown as a pointer.
 * Unlike the library, the oldest slot of a wrapped ring is included, and
 * control characters and bytes that are not UTF-8 are escaped as in the text
 * report.  Returns 0, or -1 when it could not be written (errno says why). */
int rep_recorder_dump_library(FILE *out, const struct analysis *an);

#endif
