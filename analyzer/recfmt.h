/* Formatting of flight-recorder entries without trusting their formats.
 *
 * A recorder entry holds a printf-style format pointer and up to twelve
 * 64-bit arguments (floating-point values stored as the bits of a double).
 * The format comes from the core, so it is never handed to printf: each
 * directive is scanned here, its flags, width, precision, length and
 * conversion are validated, and one rebuilt single-directive format is used
 * per argument.  Invalid directives (`%n`, unknown conversions, widths or
 * precisions above AN_RECFMT_MAX_WIDTH, an unterminated `%`) are copied into the
 * message literally and run nothing; a terminated one still skips the
 * arguments the program passed for it, so later directives stay aligned. */
#ifndef ANALYZER_RECFMT_H
#define ANALYZER_RECFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AN_RECFMT_MAX_ARGS 12      /* three slots of four arguments */
#define AN_RECFMT_MAX_WIDTH 512    /* larger widths/precisions are refused */
#define AN_RECFMT_MAX_MESSAGE 4096 /* messages are cut at this many bytes */
#define AN_RECFMT_MAX_STRING 256   /* %s arguments read from memory, at most */

/* Reads the NUL-terminated string at ADDR into BUF (at most MAX bytes with
 * the terminator); returns false when it cannot be read. */
typedef bool (*an_recfmt_read_string_fn)(void *ctx, uint64_t addr, char *buf, size_t max);

enum an_recfmt_flags {
	/* As the recorder library's own dump does: a plain %s prints the
	 * pointer (%p); only %+s reads the string. */
	AN_RECFMT_LIBRARY = 1u << 0,
};

/* Split a "file:LINE:" prefix off FORMAT.  Returns a malloc'd "file:LINE"
 * (caller frees) and sets *REST to the user format after the prefix, or
 * returns NULL with *REST = FORMAT when there is no such prefix. */
char *an_recfmt_split_location(const char *format, const char **rest);

/* Number of arguments FORMAT consumes (each `*` counts), capped at
 * AN_RECFMT_MAX_ARGS. */
size_t an_recfmt_count_args(const char *format);

/* Format FORMAT (the user format, location already split off) with ARGS.
 * READ (may be NULL) fetches %s strings; *STRINGS_READ (may be NULL) gets
 * bit i set when argument i was shown as a string read that way.  Arguments
 * past NARGS show as "?".  Returns a malloc'd message (caller frees), NULL
 * only on out-of-memory. */
char *an_recfmt_format(const char *format, const uint64_t *args, size_t nargs,
		    an_recfmt_read_string_fn read, void *ctx, unsigned flags,
		    unsigned *strings_read);

/* The indent mark of a user format (location split off): its first
 * literal character when it is `>`, `<` or `=` (directives before it are
 * skipped, as the recorder library does); 0 when there is none.  *POS gets
 * the mark's offset in FORMAT. */
char an_recfmt_indent_mark(const char *format, size_t *pos);

/* The message as the recorder library's own dump prints it
 * (recorder_dump_entry): FORMAT is the whole "file:LINE:user format";
 * integers with the directive's own length, a plain %s as the pointer and
 * %+s read through READ, an argument taken by %% as well, the indent mark removed (returned in *MARK, 0 if
 * none), the line cut at 255 bytes counting "file:LINE:" (254 when a
 * directive's output is what overflows), a final newline dropped, then the
 * location stripped (kept when nothing follows it).  Formatting stops at a
 * directive the library cannot format.  Malloc'd; NULL on out-of-memory. */
char *an_recfmt_library_message(const char *format, const uint64_t *args, size_t nargs,
				an_recfmt_read_string_fn read, void *ctx, char *mark);

#endif
