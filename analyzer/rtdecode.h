/* The named decoders of runtime descriptions (README, "Runtime
 * descriptions"): encodings a description cannot express with members,
 * masks and templates.  Pure functions over bytes already read from the
 * core, so each is checked on its own (tests/unit/test_rtdecode.c). */
#ifndef ANALYZER_RTDECODE_H
#define ANALYZER_RTDECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The line of the instruction at byte offset OFFSET of a CPython 3.11 code
 * object whose co_linetable holds TABLE (LEN bytes) and whose
 * co_firstlineno is FIRST_LINE, as PyCode_Addr2Line computes it
 * (Objects/locations.md): a negative OFFSET (a frame not started) is on
 * the first line.  False when the instruction has no line (a "no location"
 * entry) or the table ends before it. */
bool an_rt_cpython311_line(const unsigned char *table, size_t len, int64_t first_line,
			   int64_t offset, int64_t *line);

/* The line of the instruction at byte offset OFFSET of a CPython 3.10 code
 * object (co_linetable: TABLE, LEN bytes; co_firstlineno: FIRST_LINE), as
 * 3.10's PyCode_Addr2Line computes it: a negative OFFSET is on the first
 * line.  False when the instruction has no line or the table ends first. */
bool an_rt_cpython310_line(const unsigned char *table, size_t len, int64_t first_line,
			   int64_t offset, int64_t *line);

/* The line of byte offset OFFSET of a CPython 3.8 or 3.9 code object whose
 * co_lnotab holds TABLE (LEN bytes), as their PyCode_Addr2Line computes
 * it: every offset has one. */
int64_t an_rt_cpython_lnotab_line(const unsigned char *table, size_t len, int64_t first_line,
				  int64_t offset);

/* UNITS (N characters of WIDTH bytes: 1, 2 or 4, each a Unicode code point,
 * little-endian) as UTF-8 into OUT (CAP bytes, NUL-terminated; CAP > 0).
 * Code points that are not characters (surrogates, past U+10FFFF) become
 * U+FFFD.  Returns the bytes written, without the NUL; a character that
 * does not fit ends the text and sets *CUT. */
size_t an_rt_code_points_utf8(const unsigned char *units, size_t n, unsigned width, char *out,
			      size_t cap, bool *cut);

/* The part of PATH after its last '/' (PATH itself without one; "" for a
 * path ending in '/').  Points into PATH. */
const char *an_rt_basename(const char *path);

#endif
