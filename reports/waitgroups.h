/* The hang as the text and HTML reports open with it: threads by what
 * they wait for (DESIGN.md "Hangs"). */
#ifndef REPORTS_WAITGROUPS_H
#define REPORTS_WAITGROUPS_H

#include <stddef.h>

#include "../analyzer/analysis.h"

/* Blocked threads with one blocked_on summary. */
struct rep_wait_group {
	const char *summary;        /* borrowed from the analysis */
	size_t count;
	int32_t first_tid;          /* its lowest tid */
};

/* AN's blocked threads grouped by their summary, most first (then by
 * summary); *OUT malloc'd (caller frees), 0 when none or out
 * of memory. */
size_t rep_wait_groups(const struct analysis *an, struct rep_wait_group **out);

/* Waiting tasks (goroutines, bthreads) of one runtime with one wait
 * summary and one creator. */
struct rep_task_wait_group {
	const char *noun;           /* static: "goroutine", "bthread", "task" */
	const char *summary;        /* borrowed from the analysis */
	const char *created_by;     /* borrowed; NULL: unknown */
	size_t count;
	size_t first;               /* its first task's index */
};

/* How many groups of tasks the reports show. */
#define REP_TASK_WAIT_GROUPS 10

/* AN's waiting tasks grouped so, most first (then by summary), at most
 * MAX groups; *OUT malloc'd (caller frees), 0 when none or out of memory. */
size_t rep_task_wait_groups(const struct analysis *an, size_t max, struct rep_task_wait_group **out);

/* What a thread header names a thread by: its name (comm) where a live
 * process said it, else the function it waits in; NULL: neither. */
const char *rep_thread_label(const struct an_thread *t);

/* AN's thread TID, or NULL. */
const struct an_thread *rep_thread_by_tid(const struct analysis *an, int32_t tid);

/* Threads with identical stacks (the same frames, pcs and arguments, and
 * the same blocked_on kind, object and summary), as pystack and py-spy
 * group them: for each thread I, the index of its group's first thread (I
 * itself when it leads one).  The crashing thread, and one running a task
 * or recursing, is a group of its own.  malloc'd (caller frees); NULL when
 * memory ran out (then every thread is its own). */
size_t *rep_stack_groups(const struct analysis *an);

/* The number of threads in the group thread FIRST leads (1 when LEAD is
 * NULL), and the label its threads share, or NULL when they differ. */
size_t rep_group_size(const struct analysis *an, const size_t *lead, size_t first);
const char *rep_group_label(const struct analysis *an, const size_t *lead, size_t first);

/* How long the threads of the group thread FIRST leads (LEAD NULL: that
 * thread alone) have waited, as a header ends with it: ", for 12 s", or
 * ", for 3~5 s" when they differ; "" when no wait's length is known.
 * Returns BUF. */
const char *rep_group_since(const struct analysis *an, const size_t *lead, size_t first, char *buf,
			    size_t len);

#endif
