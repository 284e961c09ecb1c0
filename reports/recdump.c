/* The rings as the recorder library's own dump prints them (recorder.c,
 * recorder_dump_entry and recorder_format_entry, with the default tweaks:
 * order, relative time with 6 decimals, indentation by 20). */
#include "recdump.h"

#include <string.h>

#include "bytes.h"

/* The library formats each line into a 256-byte buffer. */
#define LIBRARY_LINE_MAX 255
#define LIBRARY_INDENT 20

/* The level this entry prints at, and the one the next starts from: `>`
 * indents the following entries, `<` this one and the following, `=`
 * resets this one and the following. */
static unsigned apply_mark(char mark, unsigned *indent)
{
	unsigned next = *indent;
	if (mark == '>')
		next = *indent + 1;
	else if (mark == '<' && *indent)
		next = --*indent;
	else if (mark == '=')
		next = *indent = 0;
	return next;
}

/* "(N)" for N full 20 levels, then the rest as spaces, into BUF. */
static void indent_text(char *buf, size_t size, unsigned indent)
{
	unsigned n = indent / LIBRARY_INDENT, i = indent % LIBRARY_INDENT;
	size_t len = 0;
	if (n)
		len = (size_t)snprintf(buf, size, "(%u)", n);
	for (; i > 0 && len + 1 < size; i--)
		buf[len++] = ' ';
	buf[len < size ? len : size - 1] = '\0';
}

/* Every line holds at most 255 characters.  (On a longer line the library
 * also writes its buffer's terminating NUL before the newline; the dump
 * here stays text and leaves that byte out.)  What the core wrote is then
 * escaped for a terminal (reports/bytes.h), as in the text report. */
int rep_recorder_dump_library(FILE *out, const struct analysis *an)
{
	struct rep_escaper esc = {0};
	bool failed = false;
	unsigned indent = 0;
	for (size_t i = 0; i < an->ntimeline; i++) {
		const struct an_timeline_entry *t = &an->timeline[i];
		if (t->recorder >= an->nrecorders || t->event >= an->recorders[t->recorder].nevents)
			continue;
		const struct an_recorder *r = &an->recorders[t->recorder];
		const struct an_event *e = &r->events[t->event];
		const char *msg = e->library_message ? e->library_message
				  : e->message ? e->message : "";
		unsigned next = apply_mark(e->indent_mark, &indent);
		char pad[64], line[LIBRARY_LINE_MAX + 1];
		indent_text(pad, sizeof(pad), indent);
		snprintf(line, sizeof(line), "[%llu %.6f] %s%s: %s", (unsigned long long)e->order,
			 (double)e->timestamp / 1000000.0, pad, r->name ? r->name : "", msg);
		fprintf(out, "%s\n", rep_escape(&esc, line));
		failed |= esc.failed;
		rep_escaper_clear(&esc);
		indent = next;
	}
	return failed || ferror(out) ? -1 : 0;
}
