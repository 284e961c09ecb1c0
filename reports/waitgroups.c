/* Threads, and tasks, grouped by what they wait for. */
#include "waitgroups.h"

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
