/* Unit tests for what waiting tasks say (analyzer/waitgraph.c,
 * reports/waitgroups.c): each goroutine's and bthread's wait summary
 * names the object's global, a netpoll fd, a mutex's recorded owner, a
 * join's target; tasks that wait alike on different objects are two
 * groups, and the biggest group is the hang's one line; the reports'
 * groups count them, most first. */
#include "../../analyzer/waitgraph.h"
#include "../../reports/waitgroups.h"

#include <stdlib.h>
#include <string.h>

#define UNIT_GROUP "taskwaits"
#include "unit.h"

static struct an_frame consume[] = { { .function = "runtime.gopark" }, { .function = "main.consume" } };
static struct an_frame pay[] = { { .function = "sync.(*Mutex).lockSlow" }, { .function = "main.payLedger" } };
static struct an_frame accept_fr[] = { { .function = "internal/poll.runtime_pollWait" },
				       { .function = "net.(*TCPListener).Accept" },
				       { .function = "main.acceptor" } };
static struct an_frame lockw[] = { { .function = "jump_stack" }, { .function = "bthread::butex_wait" },
				   { .function = "update_shared_state()" } };

static struct an_task go_task(uint64_t id, const char *wait, struct an_frame *frames, size_t n, uint64_t object,
			      const char *name)
{
	struct an_task t = { .runtime = "go", .id = id, .state = AN_TASK_WAITING, .wait_kind = wait,
			     .frames = frames, .nframes = n, .created_by = "main.start",
			     .wait_address = object, .has_wait_address = object != 0 };
	t.wait_object_name = name ? strdup(name) : NULL;
	return t;
}

static void summaries(void)
{
	struct an_task tasks[7];
	tasks[0] = go_task(10, "chan receive", consume, 2, 0xc000010000, "main.orders");
	tasks[1] = go_task(11, "chan receive", consume, 2, 0xc000010000, "main.orders");
	tasks[2] = go_task(12, "chan receive", consume, 2, 0xc000010000, "main.orders");
	tasks[3] = go_task(13, "chan receive", consume, 2, 0xc000020000, NULL);   /* a heap channel */
	tasks[4] = go_task(14, "semacquire", pay, 2, 0x5fd598, "main.muLedger");
	tasks[5] = go_task(15, "IO wait", accept_fr, 3, 0x7f0000001000, NULL);
	tasks[5].wait_fd = 4;
	tasks[5].has_wait_fd = true;
	tasks[6] = (struct an_task){ .runtime = "bthread", .id = 0x100000302, .state = AN_TASK_SUSPENDED,
				     .wait_kind = "butex", .frames = lockw, .nframes = 3, .wait_address = 0xb0,
				     .has_wait_address = true, .wait_object_name = strdup("server_mutex"),
				     .wait_owner_task = 0x100000301, .has_wait_owner_task = true };
	struct analysis an = { .tasks = tasks, .ntasks = 7 };
	CHECK("analysis", an_waitgraph_analyze(&an));
	CHECK_STR("a channel's global", tasks[0].wait_summary, "waits on chan receive of main.orders in main.consume");
	CHECK_STR("a heap channel: no name", tasks[3].wait_summary, "waits on chan receive in main.consume");
	CHECK_STR("a sync object, sync's frames skipped", tasks[4].wait_summary,
		  "waits on semacquire of main.muLedger in main.payLedger");
	CHECK_STR("an fd, the standard library's frames skipped", tasks[5].wait_summary,
		  "waits on IO wait on fd 4 in main.acceptor");
	CHECK_STR("a bthread mutex's recorded owner", tasks[6].wait_summary,
		  "waits on butex of server_mutex, held by bthread 0x100000301, in update_shared_state()");
	enum an_cause_kind kind;
	char *line = an_hang_summary(&an, &kind);
	CHECK_STR("the biggest group waits on one channel", line,
		  "3 goroutines wait on chan receive of main.orders in main.consume, created by main.start");
	CHECK("kind hang", kind == AN_CAUSE_HANG);
	free(line);

	struct rep_task_wait_group *g = NULL;
	size_t n = rep_task_wait_groups(&an, REP_TASK_WAIT_GROUPS, &g);
	CHECK("report groups", n == 5 && g);
	if (n == 5 && g) {
		CHECK("most first", g[0].count == 3 && strcmp(g[0].noun, "goroutine") == 0 &&
		      strcmp(g[0].summary, tasks[0].wait_summary) == 0 && strcmp(g[0].created_by, "main.start") == 0);
		CHECK("then one each", g[1].count == 1 && g[4].count == 1);
	}
	free(g);
	CHECK("at most MAX groups", rep_task_wait_groups(&an, 2, &g) == 2);
	free(g);
	for (size_t i = 0; i < an.ntasks; i++) {
		free(tasks[i].wait_summary);
		free(tasks[i].wait_object_name);
	}
}

static void join_target(void)
{
	struct an_task t = { .runtime = "bthread", .id = 0x100000303, .state = AN_TASK_SUSPENDED,
			     .wait_kind = "join", .wait_target = 0x200000301, .has_wait_target = true };
	struct analysis an = { .tasks = &t, .ntasks = 1 };
	CHECK("analysis", an_waitgraph_analyze(&an));
	CHECK_STR("a join names its target", t.wait_summary, "waits on join of bthread 0x200000301");
	free(t.wait_summary);
}

int main(void)
{
	summaries();
	join_target();
	return unit_exit();
}
