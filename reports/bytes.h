/* Strings from a core or a binary, as each output needs them.
 *
 * Paths, symbol names, recorder messages and every other string a core or a
 * binary gives are bytes, not necessarily UTF-8, and may hold control
 * characters.  JSON and the store get valid UTF-8 with each invalid byte
 * replaced by U+FFFD (never dropped, never failing the document); the text
 * outputs get them escaped, so a crafted core cannot send escape sequences
 * to the reader's terminal. */
#ifndef REPORTS_BYTES_H
#define REPORTS_BYTES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence at S (1-4; no overlong forms, no
 * surrogates, nothing above U+10FFFF), 0 when S does not start one.  S is
 * NUL-terminated, so a sequence cut by the end is not valid. */
size_t rep_utf8_seq(const char *s);

/* Is the valid sequence of N bytes at S a code point a reader must not get
 * raw although it is valid: a C1 control (a terminal may take U+009B for
 * CSI) or a bidirectional embedding, override or isolate (they reorder
 * what the reader sees)? */
bool rep_utf8_hidden(const char *s, size_t n);

/* S as valid UTF-8: S itself when it already is, else a malloc'd copy with
 * each invalid byte replaced by U+FFFD, stored in *OWNED for the caller to
 * free (*OWNED is NULL when S is returned).  NULL only for a NULL S or on
 * out-of-memory. */
const char *rep_utf8(const char *s, char **owned);

/* S as a JSON string (valid UTF-8 as rep_utf8() makes it); JSON null for a
 * NULL S; NULL only on out-of-memory. */
json_t *rep_json_text(const char *s);

/* Escaped copies for a terminal, held until rep_escaper_clear(). */
struct rep_escaper {
	char **held;
	size_t n, cap;
	bool failed;                /* an escaped copy could not be made */
};

/* S for a terminal: printable text as is; a backslash as "\\"; newline, tab
 * and carriage return as "\n", "\t", "\r"; other control characters and
 * each byte that is not UTF-8 as "\xHH"; C1 controls and the bidirectional
 * overrides as "\uHHHH".  Returns S itself when nothing needs escaping,
 * else a copy held by E; "" for a NULL S.  On out-of-memory returns "?"
 * and sets E->failed. */
const char *rep_escape(struct rep_escaper *e, const char *s);

/* Free the copies E holds and forget a failure (E stays usable). */
void rep_escaper_clear(struct rep_escaper *e);

/* "asyncore: WHAT: DETAIL" and a newline on OUT (stderr, a terminal often),
 * WHAT and DETAIL escaped as rep_escape() does: a line about a core (its
 * path, a reason naming what it holds) never carries its bytes raw.  A NULL
 * DETAIL leaves out ": DETAIL". */
void rep_say(FILE *out, const char *what, const char *detail);

#endif
