/* A growable list of owned strings, as the warning lists of every layer
 * use, and the hex form of addresses every layer prints. */
#ifndef COREFILE_STRLIST_H
#define COREFILE_STRLIST_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Format FMT/AP and append the result to *LIST (*N entries), unless an equal
 * string is already there.  The list owns its strings (free each, then the
 * array).  Returns false on out-of-memory (the list is unchanged). */
bool core_strlist_vappend(char ***list, size_t *n, const char *fmt, va_list ap);

/* VALUE as "0x" and lower-case hex digits into BUF; returns BUF.  Formatted
 * by hand: reports print a few for every frame of thousands of stacks. */
const char *core_hex(char buf[32], uint64_t value);

#endif
