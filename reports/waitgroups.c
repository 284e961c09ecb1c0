/* Threads grouped by what they wait for. */
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

static int group_cmp(const void *a, const void *b)
{
	const struct rep_wait_group *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->summary, y->summary);
}

size_t rep_wait_groups(const struct analysis *an, struct rep_wait_group **out)
{
	size_t n = 0;
	*out = NULL;
	struct rep_wait_group *g = calloc(an->nthreads ? an->nthreads : 1, sizeof(*g));
	if (!g)
		return 0;
	for (size_t i = 0; i < an->nthreads; i++) {
		const struct an_blocked *b = an->threads[i].blocked;
		if (!b || !b->summary)
			continue;
		size_t k = 0;
		while (k < n && strcmp(g[k].summary, b->summary) != 0)
			k++;
		if (k == n)
			g[n++] = (struct rep_wait_group){ .summary = b->summary, .first_tid = an->threads[i].tid };
		g[k].count++;
	}
	if (n)
		qsort(g, n, sizeof(*g), group_cmp);
	*out = g;
	return n;
}
