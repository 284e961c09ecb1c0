/* A growable list of owned strings, as the warning lists of every layer
 * use, and the digits of the numbers every layer prints. */
#ifndef BASE_STRLIST_H
#define BASE_STRLIST_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Format FMT/AP and append the result to *LIST (*N entries), unless an equal
 * string is already there.  The list owns its strings (free each, then the
 * array).  Returns false on out-of-memory (the list is unchanged). */
bool base_strlist_vappend(char ***list, size_t *n, const char *fmt, va_list ap);

/* The most digits base_digits() writes (2^64 - 1 in decimal). */
#define BASE_DIGITS_MAX 20

/* The digits of VALUE in BASE (10 or 16, lower case), written so that they
 * end just before END, which has BASE_DIGITS_MAX bytes of room before it;
 * returns where they start (no NUL).  Formatted by hand: reports print a
 * few numbers for every frame of thousands of stacks. */
char *base_digits(char *end, uint64_t value, unsigned base);

/* VALUE as "0x" and lower-case hex digits into BUF; returns BUF. */
const char *base_hex(char buf[32], uint64_t value);

#endif
