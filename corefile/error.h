/* Error values shared by every layer.
 *
 * A function that can fail returns a struct core_error * (NULL on success).
 * The caller owns the error and releases it with core_error_destroy(), which
 * accepts NULL and the static out-of-memory error. */
#ifndef COREFILE_ERROR_H
#define COREFILE_ERROR_H

#include <stdint.h>
#include <stddef.h>

enum core_error_kind {
	CORE_ERROR_IO,      /* open/read/mmap of a file failed */
	CORE_ERROR_FORMAT,  /* input is not what it claims to be */
	CORE_ERROR_FAULT,   /* target address not readable from the core */
	CORE_ERROR_NOMEM,
	CORE_ERROR_USAGE,
	CORE_ERROR_OTHER,
};

struct core_error {
	enum core_error_kind kind;
	uint64_t address;       /* CORE_ERROR_FAULT: first unreadable address */
	char message[512];
};

extern struct core_error core_error_nomem;

/* printf-style constructor; never returns NULL (falls back to core_error_nomem). */
struct core_error *core_error_create(enum core_error_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A fault at ADDRESS while reading LEN bytes. */
struct core_error *core_error_fault(uint64_t address, size_t len);

void core_error_destroy(struct core_error *err);

#endif
