/* Points where the test suite holds a process to act on it at a known
 * moment (tests/hooks/, built into $(BUILD)/hooks/asyncore only, with
 * ASYNCORE_TEST_HOOKS defined).  In every other build they are no-ops. */
#ifndef CLI_TEST_HOOKS_H
#define CLI_TEST_HOOKS_H

#ifdef ASYNCORE_TEST_HOOKS
/* The bound of a served query in milliseconds: MS, or the test's
 * ASYNCORE_TEST_QUERY_MS (0: every query stopped at its first check). */
long test_hook_query_limit(long ms);

/* An ingest worker that took core PATH (open, its identity told to the
 * supervisor, not yet looked up in the store): waits there when the test
 * asked for it. */
void test_hook_analysing(const char *path);

/* report --pid or snapshot of process PID, warmed up and not yet stopped:
 * waits there when the test asked for it (the hold named "live-PID"). */
void test_hook_warmed(long pid);

/* The same, PID stopped, before the detach (the hold "stopped-PID"). */
void test_hook_stopped(long pid);
#else
static inline long test_hook_query_limit(long ms)
{
	return ms;
}

static inline void test_hook_analysing(const char *path)
{
	(void)path;
}

static inline void test_hook_warmed(long pid)
{
	(void)pid;
}

static inline void test_hook_stopped(long pid)
{
	(void)pid;
}
#endif

#endif
