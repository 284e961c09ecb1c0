/* Unit tests for reports/taskgroups: bthreads that share a state, a wait
 * and a stack (and its locals, when asked for) are one group; the groups
 * come running first, then
 * suspended (the largest first), ready, created; what each one does reads
 * as the reports print it.  Goroutines group as the Go runtime prints them
 * alike, and their "goroutine N [...]" brackets read as the runtime's. */
#include "../../reports/taskgroups.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNIT_GROUP "taskgroups"
#include "unit.h"

static struct an_frame stack_a[2] = { { .pc = 0x1000 }, { .pc = 0x2000 } };
static struct an_frame stack_b[2] = { { .pc = 0x1000 }, { .pc = 0x3000 } };

static struct an_task task(uint64_t id, enum an_task_state state, const char *wait,
			   struct an_frame *frames, size_t n)
{
	struct an_task t = { .runtime = "bthread", .id = id, .state = state, .wait_kind = wait,
			     .fn_address = 0x400, .frames = frames, .nframes = n };
	if (wait && strcmp(wait, "butex") == 0) {
		t.wait_address = 0xb0;
		t.has_wait_address = true;
	}
	return t;
}

/* The groups of TASKS as "[ids] [ids]", into GOT. */
static void group_ids(struct an_task *tasks, size_t n, char *got, size_t len)
{
	struct analysis an = { .tasks = tasks, .ntasks = n };
	struct rep_task_groups g;
	got[0] = '\0';
	if (!CHECK("grouping", rep_task_groups_init(&g, &an)))
		return;
	for (size_t i = 0; i < g.n; i++) {
		size_t at = strlen(got);
		snprintf(got + at, len - at, "%s[", i ? " " : "");
		for (size_t k = 0; k < g.v[i].n; k++) {
			at = strlen(got);
			snprintf(got + at, len - at, "%s%zx", k ? "," : "",
				 (size_t)tasks[g.v[i].members[k]].id);
		}
		strncat(got, "]", len - strlen(got) - 1);
	}
	rep_task_groups_deinit(&g);
}

static void groups(void)
{
	struct an_task tasks[] = {
		task(0x10, AN_TASK_READY, NULL, NULL, 0),
		task(0x11, AN_TASK_SUSPENDED, "butex", stack_a, 2),
		task(0x12, AN_TASK_SUSPENDED, "sleep", stack_a, 2),   /* another wait */
		task(0x13, AN_TASK_SUSPENDED, "butex", stack_b, 2),   /* another stack */
		task(0x14, AN_TASK_SUSPENDED, "butex", stack_a, 2),
		task(0x15, AN_TASK_RUNNING, NULL, stack_a, 2),
		task(0x16, AN_TASK_RUNNING, NULL, stack_a, 2),        /* running: never grouped */
		task(0x17, AN_TASK_SUSPENDED, "butex", stack_a, 2),
		task(0x18, AN_TASK_CREATED, NULL, NULL, 0),
		task(0x19, AN_TASK_READY, NULL, NULL, 0),
	};
	struct analysis an = { .tasks = tasks, .ntasks = sizeof(tasks) / sizeof(tasks[0]) };
	char got[256];
	group_ids(tasks, an.ntasks, got, sizeof(got));
	CHECK_STR("groups in the reports' order", got, "[15] [16] [11,14,17] [12] [13] [10,19] [18]");
	struct rep_task_groups g;

	char buf[160];
	CHECK_STR("counts by state", rep_tasks_counts(&an, buf, sizeof(buf)),
		  "10: 2 running, 5 suspended, 2 ready, 1 created");
	struct analysis none = { 0 };
	CHECK("no tasks, no groups", rep_task_groups_init(&g, &none) && g.n == 0);
	rep_task_groups_deinit(&g);
}

static void doing(void)
{
	struct an_task running = task(1, AN_TASK_RUNNING, NULL, stack_a, 2);
	running.tid = 42;
	running.has_tid = true;
	struct an_task join = task(2, AN_TASK_SUSPENDED, "join", stack_a, 2);
	join.wait_target = 0x300000300;
	join.has_wait_target = true;
	struct an_task butex = task(3, AN_TASK_SUSPENDED, "butex", stack_a, 2);
	struct an_task sleep = task(4, AN_TASK_SUSPENDED, "sleep", stack_a, 2);
	struct an_task fresh = task(5, AN_TASK_READY, NULL, NULL, 0);
	struct an_task again = task(6, AN_TASK_READY, NULL, stack_a, 2);
	struct analysis an = { .has_signal = true, .crashing_tid = 42 };
	char buf[160];
	CHECK_STR("running on the crashing thread", rep_task_doing(&running, &an, buf, sizeof(buf)),
		  "running on thread 42 (crashing)");
	an.crashing_tid = 7;
	CHECK_STR("running", rep_task_doing(&running, &an, buf, sizeof(buf)), "running on thread 42");
	CHECK_STR("join", rep_task_doing(&join, &an, buf, sizeof(buf)),
		  "suspended in join of bthread 0x300000300");
	CHECK_STR("butex", rep_task_doing(&butex, &an, buf, sizeof(buf)),
		  "suspended in butex wait on 0xb0");
	CHECK_STR("sleep", rep_task_doing(&sleep, &an, buf, sizeof(buf)), "suspended in sleep");
	CHECK_STR("ready, never ran", rep_task_doing(&fresh, &an, buf, sizeof(buf)), "ready (never ran)");
	CHECK_STR("ready again", rep_task_doing(&again, &an, buf, sizeof(buf)), "ready (queued again)");
	char small[12];
	CHECK_STR("truncated, terminated", rep_task_doing(&join, &an, small, sizeof(small)),
		  "suspended i");
}

/* With --locals a group shows its frames' locals once: tasks whose locals
 * read differently are apart, equal texts at two addresses one group. */
static void by_locals(void)
{
	char m1[] = "0x1000", m1_again[] = "0x1000", m2[] = "0x2000";
	struct an_arg one[] = { { .name = "m", .type = "TaskMeta *", .value = m1 } };
	struct an_arg same[] = { { .name = "m", .type = "TaskMeta *", .value = m1_again } };
	struct an_arg other[] = { { .name = "m", .type = "TaskMeta *", .value = m2 } };
	struct an_frame a[2] = { { .pc = 0x1000 }, { .pc = 0x2000 } }, b[2], c[2], none[2];
	memcpy(b, a, sizeof(a));
	memcpy(c, a, sizeof(a));
	memcpy(none, a, sizeof(a));
	a[1].locals = one;
	b[1].locals = other;
	c[1].locals = same;
	a[1].nlocals = b[1].nlocals = c[1].nlocals = 1;
	a[1].has_locals = b[1].has_locals = c[1].has_locals = true;
	struct an_task tasks[] = {
		task(0x21, AN_TASK_SUSPENDED, "butex", a, 2),
		task(0x22, AN_TASK_SUSPENDED, "butex", b, 2),
		task(0x23, AN_TASK_SUSPENDED, "butex", c, 2),
		task(0x24, AN_TASK_SUSPENDED, "butex", none, 2),
		task(0x25, AN_TASK_SUSPENDED, "butex", none, 2),
	};
	char got[128];
	group_ids(tasks, sizeof(tasks) / sizeof(tasks[0]), got, sizeof(got));
	CHECK_STR("locals part groups", got, "[21,23] [24,25] [22]");
}

static struct an_frame go_recv[2] = { { .pc = 0x439556, .function = "runtime.gopark", .line = 363 },
				       { .pc = 0x4d3ee5, .function = "main.receiver", .line = 56 } };
/* the same calls by function and line, another pc */
static struct an_frame go_recv2[2] = { { .pc = 0x439557, .function = "runtime.gopark", .line = 363 },
				        { .pc = 0x4d3ee6, .function = "main.receiver", .line = 56 } };
static struct an_frame go_main[1] = { { .pc = 0x4d3eac, .function = "main.main", .line = 52 } };

static struct an_task goroutine(uint64_t id, enum an_task_state state, const char *wait,
				struct an_frame *frames, size_t n, const char *created_by, int line)
{
	return (struct an_task){ .runtime = "go", .id = id, .state = state, .wait_kind = wait,
				 .fn = "main.receiver", .frames = frames, .nframes = n,
				 .created_by = created_by, .created_file = "/src/main.go",
				 .created_line = line };
}

/* The bracket of "goroutine N [...]" for the group of TASKS[0, N). */
static const char *status_of(struct an_task *tasks, size_t n, char *buf, size_t len)
{
	size_t members[8];
	for (size_t i = 0; i < n; i++)
		members[i] = i;
	struct analysis an = { .tasks = tasks, .ntasks = n };
	struct rep_task_group g = { .members = members, .n = n };
	return rep_go_status(&an, &g, buf, len);
}

/* Goroutines group as the Go runtime would print them alike: state, wait
 * reason, frames by function and line, and the same "created by". */
static void go_groups(void)
{
	struct an_task tasks[] = {
		goroutine(1, AN_TASK_RUNNING, NULL, go_main, 1, NULL, 0),
		goroutine(19, AN_TASK_WAITING, "chan receive", go_recv, 2, "main.start", 241),
		goroutine(27, AN_TASK_WAITING, "chan receive", go_recv, 2, "main.workers", 96),
		goroutine(28, AN_TASK_WAITING, "chan receive", go_recv2, 2, "main.workers", 96),
		goroutine(29, AN_TASK_WAITING, "chan receive", go_recv, 2, "main.workers", 96),
		goroutine(30, AN_TASK_WAITING, "chan send", go_recv, 2, "main.workers", 96),
		goroutine(31, AN_TASK_WAITING, "chan receive", go_recv, 2, "main.workers", 96),
		goroutine(32, AN_TASK_SYSCALL, NULL, go_recv, 2, "main.workers", 96),
		goroutine(33, AN_TASK_RUNNABLE, NULL, go_recv, 2, "main.workers", 96),
	};
	tasks[6].locked = true;     /* "locked to thread": another header */
	tasks[0].tid = 7;
	tasks[0].has_tid = true;
	struct analysis an = { .tasks = tasks, .ntasks = sizeof(tasks) / sizeof(tasks[0]) };
	char got[256], buf[160];
	group_ids(tasks, an.ntasks, got, sizeof(got));
	CHECK_STR("goroutine groups", got, "[1] [20] [21] [1b,1c,1d] [13] [1e] [1f]");
	CHECK_STR("goroutine counts", rep_tasks_counts_of(&an, "go", buf, sizeof(buf)),
		  "9: 1 running, 1 syscall, 1 runnable, 6 waiting");
	CHECK_STR("no bthreads", rep_tasks_counts_of(&an, "bthread", buf, sizeof(buf)), "0:");
	CHECK("goroutines counted", rep_tasks_count(&an, "go") == 9 && rep_tasks_count(&an, NULL) == 9);
	CHECK("the thread's goroutine", rep_goroutine_on(&an, 7) == &tasks[0] && !rep_goroutine_on(&an, 8));
	CHECK("a goroutine is go, a bthread not", rep_task_is_go(&tasks[0]) && !rep_task_is_go(&(struct an_task){
		.runtime = "bthread" }));
}

static void go_status(void)
{
	char buf[160];
	struct an_task one[] = { goroutine(19, AN_TASK_WAITING, "select", go_recv, 2, NULL, 0) };
	CHECK_STR("wait reason", status_of(one, 1, buf, sizeof(buf)), "select");
	one[0].has_wait_since = true;
	one[0].wait_since = 59;
	CHECK_STR("under a minute: none", status_of(one, 1, buf, sizeof(buf)), "select");
	one[0].wait_since = 5 * 60 + 30;
	one[0].locked = true;
	CHECK_STR("minutes, locked", status_of(one, 1, buf, sizeof(buf)), "select, 5 minutes, locked to thread");
	struct an_task two[] = { one[0], one[0] };
	two[1].wait_since = 2 * 60;
	CHECK_STR("a group's range of minutes", status_of(two, 2, buf, sizeof(buf)),
		  "select, 2~5 minutes, locked to thread");
	struct an_task running[] = { goroutine(1, AN_TASK_RUNNING, NULL, go_main, 1, NULL, 0) };
	CHECK_STR("running", status_of(running, 1, buf, sizeof(buf)), "running");
	struct an_task sys[] = { goroutine(2, AN_TASK_SYSCALL, NULL, go_main, 1, NULL, 0) };
	sys[0].has_wait_since = true;
	sys[0].wait_since = 600;
	CHECK_STR("syscall: minutes of a waiting one only", status_of(sys, 1, buf, sizeof(buf)), "syscall");
}

/* asyncio's tasks: script frames (pc 0) group by function and line; what
 * each does names what it awaits. */
static void asyncio_tasks(void)
{
	struct an_frame get = { .function = "Queue.get (queues.py:158)", .line = 158 };
	struct an_frame get2 = { .function = "Queue.get (queues.py:160)", .line = 160 };
	struct an_frame nap = { .function = "sleep (tasks.py:665)", .line = 665 };
	struct an_frame a[] = { get }, b[] = { get }, c[] = { get2 }, d[] = { nap };
	struct an_task tasks[4];
	struct an_frame *stacks[] = { a, b, c, d };
	for (size_t i = 0; i < 4; i++)
		tasks[i] = (struct an_task){ .runtime = "asyncio", .id = 0x20 + i, .state = AN_TASK_SUSPENDED,
					     .wait_kind = "Future", .wait_address = 0xf0 + i,
					     .has_wait_address = true, .fn = "consumer",
					     .frames = stacks[i], .nframes = 1 };
	char got[256], buf[160];
	group_ids(tasks, 4, got, sizeof(got));
	CHECK_STR("asyncio: grouped by their frames' functions and lines", got, "[20,21] [22] [23]");
	CHECK_STR("asyncio: a task awaiting a future", rep_task_doing(&tasks[0], NULL, buf, sizeof(buf)),
		  "suspended awaiting Future 0xf0");
	tasks[1].wait_kind = "Task";
	tasks[1].wait_target = 0x23;
	tasks[1].has_wait_target = true;
	CHECK_STR("asyncio: a task awaiting a task", rep_task_doing(&tasks[1], NULL, buf, sizeof(buf)),
		  "suspended awaiting task 0x23");
	CHECK_STR("asyncio: its noun", rep_task_noun(&tasks[0]), "asyncio task");
	struct analysis an = { .tasks = tasks, .ntasks = 4 };
	CHECK_STR("asyncio: the section's runtime", rep_tasks_other_runtime(&an), "asyncio");
}

int main(void)
{
	groups();
	asyncio_tasks();
	doing();
	by_locals();
	go_groups();
	go_status();
	return unit_exit();
}
