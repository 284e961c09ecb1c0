/* Unit tests for reports/waitgroups' stack groups: threads whose frames
 * (pcs, functions, arguments) and wait (kind, object, summary) are the same
 * are one group, led by the first; the crashing thread, a different pc, an
 * argument, an object or a wait keep a thread apart; a group's label is the
 * one its threads share, else none. */
#include "../../reports/waitgroups.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNIT_GROUP "waitgroups"
#include "unit.h"

static struct an_arg arg_one = { .name = "i", .value = "1" };
static struct an_arg arg_two = { .name = "i", .value = "2" };
static struct an_frame stack_a[2] = { { .pc = 0x1000, .function = "lock_wait" }, { .pc = 0x2000, .function = "worker" } };
static struct an_frame stack_b[2] = { { .pc = 0x1000, .function = "lock_wait" }, { .pc = 0x2008, .function = "worker" } };
static struct an_frame stack_arg1[1] = { { .pc = 0x1000, .function = "f", .args = &arg_one, .nargs = 1, .has_args = true } };
static struct an_frame stack_arg2[1] = { { .pc = 0x1000, .function = "f", .args = &arg_two, .nargs = 1, .has_args = true } };
static struct an_blocked on_pool = { .kind = AN_WAIT_MUTEX, .object = 0x50, .has_object = true,
				     .summary = "waits for mutex pool, held by thread 1" };
static struct an_blocked on_other = { .kind = AN_WAIT_MUTEX, .object = 0x60, .has_object = true,
				      .summary = "waits for mutex pool, held by thread 1" };

static struct an_thread thread(int32_t tid, struct an_frame *frames, size_t n, struct an_blocked *b, char *name)
{
	return (struct an_thread){ .tid = tid, .frames = frames, .nframes = n, .blocked = b, .name = name };
}

/* The groups as "tid,tid tid": each leader with its members. */
static void groups_of(struct an_thread *threads, size_t n, char *got, size_t len)
{
	struct analysis an = { .threads = threads, .nthreads = n };
	size_t *lead = rep_stack_groups(&an);
	got[0] = '\0';
	if (!CHECK("grouping", lead != NULL))
		return;
	for (size_t i = 0; i < n; i++) {
		if (lead[i] != i)
			continue;
		size_t at = strlen(got);
		snprintf(got + at, len - at, "%s", at ? " " : "");
		for (size_t k = i, m = 0; k < n; k++)
			if (lead[k] == i) {
				at = strlen(got);
				snprintf(got + at, len - at, "%s%d", m++ ? "," : "", (int)threads[k].tid);
			}
	}
	free(lead);
}

static void stacks(void)
{
	char got[256];
	struct an_thread t[] = {
		thread(1, stack_a, 2, &on_pool, "worker"),
		thread(2, stack_a, 2, &on_pool, "worker"),
		thread(3, stack_b, 2, &on_pool, "worker"),    /* another pc */
		thread(4, stack_a, 2, &on_other, "worker"),   /* another object */
		thread(5, stack_a, 2, NULL, "worker"),        /* on the CPU */
		thread(6, stack_a, 2, &on_pool, "pool-7"),    /* another name, same stack */
		thread(7, stack_a, 2, &on_pool, "worker"),
		thread(8, stack_arg1, 1, NULL, NULL),
		thread(9, stack_arg2, 1, NULL, NULL),         /* another argument */
		thread(10, stack_arg1, 1, NULL, NULL),
	};
	groups_of(t, 10, got, sizeof(got));
	CHECK_STR("identical stacks and waits group", got, "1,2,6,7 3 4 5 8,10 9");
	struct analysis an = { .threads = t, .nthreads = 10 };
	size_t *lead = rep_stack_groups(&an);
	if (CHECK("grouping again", lead != NULL)) {
		CHECK("the group's size", rep_group_size(&an, lead, 0) == 4 && rep_group_size(&an, lead, 2) == 1);
		CHECK("names that differ: no label", rep_group_label(&an, lead, 0) == NULL);
		CHECK("threads without a name: no label", rep_group_label(&an, lead, 7) == NULL);
	}
	free(lead);
	CHECK("no groups: every thread its own", rep_group_size(&an, NULL, 3) == 1);
	t[5].name = "worker";
	lead = rep_stack_groups(&an);
	if (CHECK("grouping a third time", lead != NULL))
		CHECK_STR("a name they share", rep_group_label(&an, lead, 0), "worker");
	free(lead);
	t[1].crashing = true;
	groups_of(t, 10, got, sizeof(got));
	CHECK_STR("the crashing thread stays apart", got, "1,6,7 2 3 4 5 8,10 9");
}

int main(void)
{
	stacks();
	return unit_exit();
}
