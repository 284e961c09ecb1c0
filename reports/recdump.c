#include "recdump.h"

#include <string.h>

/* The library formats each line into a 256-byte buffer. */
#define LIBRARY_LINE_MAX 255

void rep_recorder_dump_library(FILE *out, const struct analysis *an)
{
	for (size_t i = 0; i < an->ntimeline; i++) {
		const struct an_timeline_entry *t = &an->timeline[i];
		if (t->recorder >= an->nrecorders || t->event >= an->recorders[t->recorder].nevents)
			continue;
		const struct an_recorder *r = &an->recorders[t->recorder];
		const struct an_event *e = &r->events[t->event];
		const char *msg = e->library_message ? e->library_message
				  : e->message ? e->message : "";
		size_t len = strlen(msg);
		if (len && msg[len - 1] == '\n')
			len--;          /* the library drops a final newline */
		char line[LIBRARY_LINE_MAX + 1];
		snprintf(line, sizeof(line), "[%llu %.6f] %s: %.*s", (unsigned long long)e->order,
			 (double)e->timestamp / 1000000.0, r->name ? r->name : "", (int)len, msg);
		fprintf(out, "%s\n", line);
	}
}
