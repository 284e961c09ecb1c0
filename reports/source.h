/* Source lines of a report's frames, read from the files the debug info
 * names (as gdb's `frame` shows them).  Each file is read once per report
 * and kept until the cache is destroyed: many frames share a file. */
#ifndef REPORTS_SOURCE_H
#define REPORTS_SOURCE_H

#include <stddef.h>

/* Bytes of a line shown at most; a longer one is cut there, with "...". */
#define REP_SOURCE_LINE_MAX 240

struct rep_sources;

/* An empty cache; NULL on out-of-memory.  rep_sources_destroy() frees it
 * and every file it read; destroying NULL does nothing. */
struct rep_sources *rep_sources_create(void);
void rep_sources_destroy(struct rep_sources *s);

/* Line LINE (1-based) of PATH (relative paths from the current directory,
 * as gdb looks for them): tabs expanded, trailing blanks and a carriage
 * return dropped, at most REP_SOURCE_LINE_MAX bytes (cut at a character's
 * start, then "...").  NULL when S is NULL, PATH is not a readable regular
 * file within the size bound, has no such line, or memory ran out.  The
 * text is S's, the same pointer for the same line, until S is destroyed. */
const char *rep_source_line(struct rep_sources *s, const char *path, int line);

#endif
