/* Writers for one analysis: the text crash report, the JSON object and the
 * HTML page. */
#ifndef REPORTS_REPORT_H
#define REPORTS_REPORT_H

#include <stdio.h>

#include "../analyzer/analysis.h"

struct rep_text_options {
	bool all_threads;           /* false: the crashing thread only */
	bool each_thread;           /* threads with identical stacks printed each,
				       not once as a group */
	size_t recorder_tail;       /* recorder events shown before the crash */
	bool color;                 /* ANSI colour: crashing frame, seams, warnings */
	bool source;                /* each frame's source line, where its file is readable */
};

/* Print the crash report a person reads top-down, every string from the
 * core or a binary escaped for a terminal (reports/bytes.h).  Returns 0, or
 * -1 when it could not be written in full (errno says why). */
int rep_text_write(FILE *out, const struct analysis *an, const struct rep_text_options *opts);

struct rep_json_options {
	bool all_threads;           /* false: the crashing thread only */
	bool frame_registers;       /* each frame's recovered registers too */
};

/* Print the JSON object of DESIGN.md, written in pieces as it is built.
 * Strings from the core or a binary are made valid UTF-8 (reports/bytes.h).
 * Returns 0, or -1 when a part could not be built (out of memory) or
 * written (errno says why): what was printed is then cut short, and the
 * caller says so. */
int rep_json_write(FILE *out, const struct analysis *an, const struct rep_json_options *opts);

struct rep_html_options {
	bool all_threads;           /* false: the crashing thread only */
	bool each_thread;           /* threads with identical stacks shown each,
				       not once as a group */
	bool source;                /* each frame's source lines, where its file is
				       readable (never for a served page: the paths
				       are the core's, the files the server's) */
};

/* Print the crash page (DESIGN.md "HTML"): one self-contained HTML file.
 * Strings from the core or a binary, and source lines, are made valid
 * UTF-8 and escaped for HTML.  Returns 0, or -1 when it could not be
 * written in full (errno says why). */
int rep_html_write(FILE *out, const struct analysis *an, const struct rep_html_options *opts);

/* Print each warning as one "asyncore: warning: ..." line (for stderr, so
 * a refused binary is seen even when the report goes to a file). */
void rep_warnings_write(FILE *err, const struct analysis *an);

/* ", SEGV_MAPERR, fault address 0x10" (what is known of the signal's code
 * and address) into BUF; returns BUF ("" when nothing is known). */
const char *rep_signal_detail(const struct analysis *an, char *buf, size_t len);

#endif
