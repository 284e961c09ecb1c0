/* Writers for one analysis: the text crash report and the JSON object. */
#ifndef REPORTS_REPORT_H
#define REPORTS_REPORT_H

#include <stdio.h>

#include "../analyzer/analysis.h"

struct rep_text_options {
	bool all_threads;           /* false: the crashing thread only */
	size_t recorder_tail;       /* recorder events shown before the crash */
};

/* Print the crash report a person reads top-down, every string from the
 * core or a binary escaped for a terminal (reports/bytes.h).  Returns 0, or
 * -1 when it could not be written in full (errno says why). */
int rep_text_write(FILE *out, const struct analysis *an, const struct rep_text_options *opts);

/* Print the JSON object of DESIGN.md; ALL_THREADS false keeps the crashing
 * thread only.  Strings from the core or a binary are made valid UTF-8
 * (reports/bytes.h).  Returns 0, or -1 when the document could not be built
 * or written in full (errno says why; nothing is printed when it could not be
 * built). */
int rep_json_write(FILE *out, const struct analysis *an, bool all_threads);

/* Print each warning as one "asyncore: warning: ..." line (for stderr, so
 * a refused binary is seen even when the report goes to a file). */
void rep_warnings_write(FILE *err, const struct analysis *an);

/* Hex rendering helpers shared by the writers: "0x..." into BUF. */
const char *rep_hex(char buf[32], uint64_t value);

#endif
