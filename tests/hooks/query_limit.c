/* The test build's bound on a served query (cli/test_hooks.h).
 *
 * ASYNCORE_TEST_QUERY_MS=N: every query of `serve` may run N milliseconds;
 * 0 stops each at its first check, so a test sees the 503 of a query past
 * its bound without depending on how fast the machine is. */
#include "../../cli/test_hooks.h"

#include <stdlib.h>

long test_hook_query_limit(long ms)
{
	const char *v = getenv("ASYNCORE_TEST_QUERY_MS");
	char *end;
	long n = v && *v ? strtol(v, &end, 10) : -1;
	return v && *v && *end == '\0' && n >= 0 ? n : ms;
}
