/* Threads, and tasks, grouped by what they wait for. */
#include "waitgroups.h"
#include "taskgroups.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *rep_thread_label(const struct an_thread *t)
{
	if (t->name)
		return t->name;
	return t->blocked ? t->blocked->waiter : NULL;
}

const struct an_thread *rep_thread_by_tid(const struct analysis *an, int32_t tid)
{
	for (size_t i = 0; i < an->nthreads; i++)
		if (an->threads[i].tid == tid)
			return &an->threads[i];
	return NULL;
}

static int summary_cmp(const void *a, const void *b)
{
	const struct rep_wait_group *x = a, *y = b;
	int c = strcmp(x->summary, y->summary);
	return c ? c : (x->first_tid > y->first_tid) - (x->first_tid < y->first_tid);
}

static int group_cmp(const void *a, const void *b)
{
	const struct rep_wait_group *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->summary, y->summary);
}

size_t rep_wait_groups(const struct analysis *an, struct rep_wait_group **out)
{
	size_t n = 0, ng = 0;
	*out = NULL;
	struct rep_wait_group *g = calloc(an->nthreads ? an->nthreads : 1, sizeof(*g));
	if (!g)
		return 0;
	for (size_t i = 0; i < an->nthreads; i++) {
		const struct an_blocked *b = an->threads[i].blocked;
		if (b && b->summary)
			g[n++] = (struct rep_wait_group){ .summary = b->summary, .count = 1,
							  .first_tid = an->threads[i].tid };
	}
	qsort(g, n, sizeof(*g), summary_cmp);
	for (size_t i = 0; i < n; i++) {
		if (ng && strcmp(g[ng - 1].summary, g[i].summary) == 0)
			g[ng - 1].count++;
		else
			g[ng++] = g[i];
	}
	qsort(g, ng, sizeof(*g), group_cmp);
	*out = g;
	return ng;
}

static int text_cmp(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) : (a != NULL) - (b != NULL);
}

static int task_key_cmp(const struct rep_task_wait_group *x, const struct rep_task_wait_group *y)
{
	int c = strcmp(x->noun, y->noun);
	c = c ? c : strcmp(x->summary, y->summary);
	return c ? c : text_cmp(x->created_by, y->created_by);
}

static int task_group_key(const void *a, const void *b)
{
	const struct rep_task_wait_group *x = a, *y = b;
	int c = task_key_cmp(x, y);
	return c ? c : (x->first > y->first) - (x->first < y->first);
}

static int task_group_count(const void *a, const void *b)
{
	const struct rep_task_wait_group *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return task_group_key(a, b);
}

static const char *task_noun(const struct an_task *t)
{
	if (t->runtime && strcmp(t->runtime, "go") == 0)
		return "goroutine";
	return t->runtime && strcmp(t->runtime, "bthread") == 0 ? "bthread" : "task";
}

size_t rep_task_wait_groups(const struct analysis *an, size_t max, struct rep_task_wait_group **out)
{
	size_t n = 0, ng = 0;
	*out = NULL;
	struct rep_task_wait_group *g = calloc(an->ntasks ? an->ntasks : 1, sizeof(*g));
	if (!g)
		return 0;
	for (size_t i = 0; i < an->ntasks; i++) {
		const struct an_task *t = &an->tasks[i];
		if (t->wait_summary)
			g[n++] = (struct rep_task_wait_group){ .noun = task_noun(t), .summary = t->wait_summary,
							       .created_by = t->created_by, .count = 1, .first = i };
	}
	qsort(g, n, sizeof(*g), task_group_key);
	for (size_t i = 0; i < n; i++) {
		if (ng && task_key_cmp(&g[ng - 1], &g[i]) == 0)
			g[ng - 1].count++;
		else
			g[ng++] = g[i];
	}
	qsort(g, ng, sizeof(*g), task_group_count);
	*out = g;
	return ng < max ? ng : max;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static bool same_args(const struct an_arg *a, const struct an_arg *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!same_str(a[i].name, b[i].name) || !same_str(a[i].value, b[i].value) ||
		    !same_str(a[i].entry_value, b[i].entry_value))
			return false;
	return true;
}

static bool same_frame(const struct an_frame *a, const struct an_frame *b)
{
	return a->pc == b->pc && a->kind == b->kind && a->inline_depth == b->inline_depth &&
	       same_str(a->function, b->function) && same_str(a->display, b->display) &&
	       a->nargs == b->nargs && same_args(a->args, b->args, a->nargs) && a->nlocals == b->nlocals &&
	       same_args(a->locals, b->locals, a->nlocals);
}

static bool same_blocked(const struct an_blocked *a, const struct an_blocked *b)
{
	return a == b || (a && b && a->kind == b->kind && a->has_object == b->has_object &&
			  a->object == b->object && same_str(a->summary, b->summary));
}

/* Whether thread T may share a group: not the crashing one, and running
 * no task whose frames its header names. */
static bool groupable(const struct analysis *an, const struct an_thread *t)
{
	return !t->crashing && !t->recursion && !t->unwind_error && !rep_goroutine_on(an, t->tid) &&
	       !rep_task_running_on(an, t->tid);
}

static bool same_stack(const struct an_thread *a, const struct an_thread *b)
{
	if (a->nframes != b->nframes || a->async_root != b->async_root || !same_blocked(a->blocked, b->blocked))
		return false;
	for (size_t i = 0; i < a->nframes; i++)
		if (!same_frame(&a->frames[i], &b->frames[i]))
			return false;
	return true;
}

size_t *rep_stack_groups(const struct analysis *an)
{
	size_t *lead = malloc((an->nthreads ? an->nthreads : 1) * sizeof(*lead));
	size_t *leaders = malloc((an->nthreads ? an->nthreads : 1) * sizeof(*leaders));
	size_t nleaders = 0;
	if (!lead || !leaders) {
		free(lead);
		free(leaders);
		return NULL;
	}
	for (size_t i = 0; i < an->nthreads; i++) {
		const struct an_thread *t = &an->threads[i];
		lead[i] = i;
		if (!groupable(an, t))
			continue;
		for (size_t k = 0; k < nleaders && lead[i] == i; k++)
			if (same_stack(&an->threads[leaders[k]], t))
				lead[i] = leaders[k];
		if (lead[i] == i)
			leaders[nleaders++] = i;
	}
	free(leaders);
	return lead;
}

const char *rep_group_label(const struct analysis *an, const size_t *lead, size_t first)
{
	const char *label = rep_thread_label(&an->threads[first]);
	for (size_t i = first + 1; label && i < an->nthreads; i++)
		if (lead[i] == first && !same_str(label, rep_thread_label(&an->threads[i])))
			return NULL;
	return label;
}

const char *rep_group_since(const struct analysis *an, const size_t *lead, size_t first, char *buf,
			    size_t len)
{
	uint64_t least = UINT64_MAX, most = 0;
	for (size_t i = first; i < an->nthreads && (lead || i == first); i++) {
		const struct an_blocked *b = an->threads[i].blocked;
		if ((lead && lead[i] != first) || !b || !b->has_since)
			continue;
		least = b->since < least ? b->since : least;
		most = b->since > most ? b->since : most;
	}
	if (len && least == UINT64_MAX)
		buf[0] = '\0';
	else if (least == most)
		snprintf(buf, len, ", for %" PRIu64 " s", most);
	else
		snprintf(buf, len, ", for %" PRIu64 "~%" PRIu64 " s", least, most);
	return buf;
}

size_t rep_group_size(const struct analysis *an, const size_t *lead, size_t first)
{
	size_t n = 0;
	for (size_t i = first; lead && i < an->nthreads; i++)
		n += lead[i] == first;
	return lead ? n : 1;
}
