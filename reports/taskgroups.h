/* The tasks of an analysis (bRPC bthreads, goroutines) as the reports show
 * them: those that share a state, a wait and a stack once, as a thread-dump
 * tool does ("10000 bthreads suspended in butex wait on 0x...", "3
 * goroutines [chan receive]").  Shared by the text and HTML writers. */
#ifndef REPORTS_TASKGROUPS_H
#define REPORTS_TASKGROUPS_H

#include <stdbool.h>
#include <stddef.h>

#include "../analyzer/analysis.h"

struct rep_task_group {
	const size_t *members;      /* indexes into an->tasks, by id */
	size_t n;
};

struct rep_task_groups {
	struct rep_task_group *v;   /* running first (each alone), then suspended,
				       ready, created (bthreads), syscall,
				       runnable, preempted, waiting, idle
				       (goroutines); the largest group first */
	size_t n;
	size_t *members;            /* storage the groups point into */
};

/* Group AN's tasks into G.  False on out-of-memory (G is then empty);
 * rep_task_groups_deinit() frees G either way. */
bool rep_task_groups_init(struct rep_task_groups *g, const struct analysis *an);
void rep_task_groups_deinit(struct rep_task_groups *g);

/* Whether every member of G has the arguments of its first member in each
 * frame: a group shows its first member's frames, arguments included. */
bool rep_task_group_same_args(const struct analysis *an, const struct rep_task_group *g);

/* "15: 3 running, 10 suspended, 2 ready": how many tasks, by state (the
 * states none is in left out); into BUF. */
const char *rep_tasks_counts(const struct analysis *an, char *buf, size_t len);

/* The same, of the tasks of RUNTIME ("bthread", "go") only; NULL: all. */
const char *rep_tasks_counts_of(const struct analysis *an, const char *runtime, char *buf,
				size_t len);

/* How many tasks of RUNTIME AN has; NULL: all. */
size_t rep_tasks_count(const struct analysis *an, const char *runtime);

/* What a task of T's runtime is called: "bthread", "goroutine", "asyncio
 * task". */
const char *rep_task_noun(const struct an_task *t);

/* The runtime of AN's tasks other than goroutines, for their section's
 * title and counts: "asyncio" when every one is asyncio's, else "bthread". */
const char *rep_tasks_other_runtime(const struct analysis *an);

/* Whether T is a goroutine. */
bool rep_task_is_go(const struct an_task *t);

/* The goroutine on the thread with TID (running, or in a syscall there), or
 * NULL.  Its frames are already in the thread's. */
const struct an_task *rep_goroutine_on(const struct analysis *an, int32_t tid);

/* What the Go runtime prints between the brackets of "goroutine N [...]"
 * for G's goroutines: the wait reason or the state, the minutes waited
 * (their range when the members differ), "locked to thread"; into BUF. */
const char *rep_go_status(const struct analysis *an, const struct rep_task_group *g, char *buf,
			  size_t len);

/* The task running on the thread with TID (whose frames are the top of that
 * thread's stack), or NULL. */
const struct an_task *rep_task_running_on(const struct analysis *an, int32_t tid);

/* What task T is doing, in words: "suspended in butex wait on 0x...",
 * "suspended in join of bthread 0x...", "running on thread 42 (crashing)",
 * "ready (never ran)", an asyncio task's "suspended awaiting Future 0x...",
 * "suspended awaiting task 0x..."; into BUF. */
const char *rep_task_doing(const struct an_task *t, const struct analysis *an, char *buf,
			   size_t len);

#endif
