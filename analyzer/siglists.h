/* The two lists a crash signature is built with, as crash databases keep
 * them: POSIX extended regular expressions (regex.h), each matched against
 * the whole name of a frame (its normalised function name, or
 * "module@0xOFFSET" when it has none).
 *
 *   skip    frames that never explain a crash (abort, raise, __assert_fail,
 *           libc and thread start-up, C++ throw machinery): left out;
 *   prefix  frames that only make sense with their caller (memcpy, strlen,
 *           operator new, malloc, ...): kept, but they do not count against
 *           the signature's frame budget, so their callers always follow.
 *
 * Each list has built-in defaults; a directory may override either with a
 * file of the same name ("skip", "prefix"): one expression per line, blank
 * lines and lines starting with '#' ignored, and the line "@defaults"
 * standing for the built-in entries.  A missing file keeps the defaults. */
#ifndef ANALYZER_SIGLISTS_H
#define ANALYZER_SIGLISTS_H

#include <stdbool.h>
#include <stddef.h>

enum an_siglist { AN_SIGLIST_SKIP, AN_SIGLIST_PREFIX, AN_SIGLIST_COUNT };

struct an_signature_lists;

/* The built-in lists, compiled once (never freed); NULL on out-of-memory. */
const struct an_signature_lists *an_signature_lists_default(void);

/* Lists from the files in DIR (see above).  Returns 0 and *OUT (destroy with
 * an_signature_lists_destroy()), or -1 with a one-line reason in WHY naming
 * the file and line of a bad expression. */
int an_signature_lists_load(const char *dir, struct an_signature_lists **out, char *why,
			    size_t whylen);

/* Free lists from an_signature_lists_load(); NULL is a no-op. */
void an_signature_lists_destroy(struct an_signature_lists *lists);

/* True when NAME matches an entry of list WHICH. */
bool an_signature_lists_match(const struct an_signature_lists *lists, enum an_siglist which,
			      const char *name);

/* The file name of list WHICH ("skip", "prefix"). */
const char *an_signature_list_name(enum an_siglist which);

#endif
