/* UTF-8 checks shared by the writers that must emit valid UTF-8 from bytes
 * read out of a core (JSON, HTML). */
#ifndef REPORTS_UTF8_H
#define REPORTS_UTF8_H

#include <jansson.h>
#include <stddef.h>

/* Length of the valid UTF-8 sequence at S (1-4), 0 when it is not one
 * (S[0] is not NUL; the sequence stops at a NUL). */
size_t rep_utf8_seq(const unsigned char *s);

/* Bytes from a core or a binary as a JSON string: each byte that is not
 * part of valid UTF-8 becomes U+FFFD, so the document never fails.  NULL
 * gives JSON null.  New reference; NULL when out of memory. */
json_t *rep_utf8_json(const char *s);

#endif
