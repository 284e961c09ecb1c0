/* The unit tests' one checking helper.  Define UNIT_GROUP ("corefile")
 * before including it; each check prints "PASS: GROUP name" or
 * "FAIL: GROUP name (file:line)" for tests/run, and unit_exit() is the
 * test binary's exit status. */
#ifndef TESTS_UNIT_UNIT_H
#define TESTS_UNIT_UNIT_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#ifndef UNIT_GROUP
#error "define UNIT_GROUP before including unit.h"
#endif

static int unit_failures;

static inline bool unit_check(const char *name, bool ok, const char *detail, const char *file,
			      int line)
{
	if (ok) {
		printf("PASS: %s %s\n", UNIT_GROUP, name);
	} else {
		printf("FAIL: %s %s (%s:%d)%s%s\n", UNIT_GROUP, name, file, line,
		       detail ? ": " : "", detail ? detail : "");
		unit_failures++;
	}
	return ok;
}

/* CHECK(name, condition) */
#define CHECK(name, ok) unit_check((name), (ok), NULL, __FILE__, __LINE__)

/* CHECK_STR(name, got, want): equal strings; a NULL GOT never matches. */
#define CHECK_STR(name, got, want) unit_check_str((name), (got), (want), __FILE__, __LINE__)

static inline bool unit_check_str(const char *name, const char *got, const char *want,
				  const char *file, int line)
{
	char detail[1024];
	bool ok = got && strcmp(got, want) == 0;
	snprintf(detail, sizeof(detail), "got '%s', want '%s'", got ? got : "(null)", want);
	return unit_check(name, ok, ok ? NULL : detail, file, line);
}

static inline int unit_exit(void)
{
	return unit_failures ? 1 : 0;
}

#endif
