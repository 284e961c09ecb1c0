/* UTF-8 checks shared by the writers that must emit valid UTF-8 from bytes
 * read out of a core (JSON, HTML). */
#ifndef REPORTS_UTF8_H
#define REPORTS_UTF8_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at S (1-4), 0 when it is not one
 * (S[0] is not NUL; the sequence stops at a NUL). */
size_t rep_utf8_seq(const unsigned char *s);

#endif
