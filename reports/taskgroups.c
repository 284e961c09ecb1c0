#include "taskgroups.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The order the reports show states in: bthreads' first, then those only
 * goroutines have (AN_TASK_RUNNING is both's). */
static const enum an_task_state state_order[] = {
	AN_TASK_RUNNING, AN_TASK_SUSPENDED, AN_TASK_READY, AN_TASK_CREATED, AN_TASK_SYSCALL,
	AN_TASK_RUNNABLE, AN_TASK_PREEMPTED, AN_TASK_WAITING, AN_TASK_IDLE
};
enum { NSTATES = sizeof(state_order) / sizeof(state_order[0]) };

static int state_rank(enum an_task_state s)
{
	for (int i = 0; i < NSTATES; i++)
		if (state_order[i] == s)
			return i;
	return NSTATES;
}

static bool is_go(const struct an_task *t)
{
	return t->runtime && strcmp(t->runtime, "go") == 0;
}

static bool is_asyncio(const struct an_task *t)
{
	return t->runtime && strcmp(t->runtime, "asyncio") == 0;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x100000001b3ULL;
}

static uint64_t text_hash(uint64_t h, const char *s)
{
	if (!s)
		return mix(h, 0);
	while (*s)
		h = mix(h, (unsigned char)*s++);
	return mix(h, 1);
}

/* A frame's locals (--locals) into H: a group shows its frames once, so
 * tasks whose locals differ are not one group. */
static uint64_t locals_hash(uint64_t h, const struct an_frame *f)
{
	if (!f->has_locals)
		return h;
	h = mix(h, f->nlocals);
	for (size_t i = 0; i < f->nlocals; i++)
		h = text_hash(text_hash(text_hash(h, f->locals[i].name), f->locals[i].type),
			      f->locals[i].value);
	return h;
}

static bool same_text(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static bool same_vars(const struct an_arg *a, const struct an_arg *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!same_text(a[i].name, b[i].name) || !same_text(a[i].type, b[i].type) ||
		    !same_text(a[i].value, b[i].value) || !same_text(a[i].entry_value, b[i].entry_value))
			return false;
	return true;
}

static bool same_locals(const struct an_frame *a, const struct an_frame *b)
{
	return a->has_locals == b->has_locals && a->nlocals == b->nlocals &&
	       (!a->has_locals || same_vars(a->locals, b->locals, a->nlocals));
}

static bool same_args(const struct an_frame *a, const struct an_frame *b)
{
	return a->has_args == b->has_args && a->nargs == b->nargs &&
	       (a->args == b->args || same_vars(a->args, b->args, a->nargs));
}

bool rep_task_group_same_args(const struct analysis *an, const struct rep_task_group *g)
{
	const struct an_task *first = &an->tasks[g->members[0]];
	for (size_t k = 1; k < g->n; k++) {
		const struct an_task *t = &an->tasks[g->members[k]];
		for (size_t i = 0; i < t->nframes && i < first->nframes; i++)
			if (!same_args(&first->frames[i], &t->frames[i]))
				return false;
	}
	return true;
}

/* A goroutine's part of its group's key: what its header and "created by"
 * line show, and its frames by function and line (as the runtime prints
 * them; the pcs of two calls on one line may differ). */
static uint64_t go_key(uint64_t h, const struct an_task *t)
{
	h = text_hash(text_hash(mix(mix(h, t->locked), (uint64_t)t->created_line), t->created_by),
		      t->created_file);
	h = text_hash(text_hash(h, t->wait_kind), t->fn);
	for (size_t i = 0; i < t->nframes; i++)
		h = locals_hash(mix(text_hash(h, t->frames[i].function), (uint64_t)t->frames[i].line),
				&t->frames[i]);
	return h;
}

/* A hash of what makes two tasks one group: state, entry, wait kind, stack
 * (and its locals, when asked for). */
static uint64_t group_key(const struct an_task *t)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	if (is_go(t))
		return go_key(mix(text_hash(h, "go"), (uint64_t)t->state), t);
	h = mix(mix(mix(h, (uint64_t)t->state), t->fn_address),
		t->wait_kind ? (uint64_t)(unsigned char)t->wait_kind[0] : 0);
	for (size_t i = 0; i < t->nframes; i++)   /* script frames: pc 0 */
		h = locals_hash(mix(text_hash(mix(h, t->frames[i].pc), t->frames[i].function),
				    (uint64_t)t->frames[i].line), &t->frames[i]);
	return h;
}

static bool same_go_frames(const struct an_task *a, const struct an_task *b)
{
	for (size_t i = 0; i < a->nframes; i++) {
		const struct an_frame *x = &a->frames[i], *y = &b->frames[i];
		if (x->line != y->line || x->inlined != y->inlined || !same_text(x->function, y->function) ||
		    !same_locals(x, y))
			return false;
	}
	return true;
}

/* Goroutines: the same words in "goroutine N [...]", the same frames, and
 * the same "created by" (wait times may differ: the header gives their
 * range). */
static bool same_go_group(const struct an_task *a, const struct an_task *b)
{
	return is_go(b) && a->state == b->state && a->state != AN_TASK_RUNNING &&
	       a->locked == b->locked && a->nframes == b->nframes && a->created_line == b->created_line &&
	       same_text(a->wait_kind, b->wait_kind) && same_text(a->fn, b->fn) &&
	       same_text(a->created_by, b->created_by) && same_text(a->created_file, b->created_file) &&
	       same_go_frames(a, b);
}

static bool same_group(const struct an_task *a, const struct an_task *b)
{
	if (is_go(a) || is_go(b))
		return is_go(a) && same_go_group(a, b);
	if (a->state != b->state || a->state == AN_TASK_RUNNING || a->fn_address != b->fn_address ||
	    a->nframes != b->nframes || (a->wait_kind == NULL) != (b->wait_kind == NULL) ||
	    (a->wait_kind && strcmp(a->wait_kind, b->wait_kind) != 0) || !same_text(a->fn, b->fn))
		return false;
	for (size_t i = 0; i < a->nframes; i++)
		if (a->frames[i].pc != b->frames[i].pc || a->frames[i].line != b->frames[i].line ||
		    !same_text(a->frames[i].function, b->frames[i].function) ||
		    !same_locals(&a->frames[i], &b->frames[i]))
			return false;
	return true;
}

struct sort_ctx {
	const struct analysis *an;
	const uint64_t *keys;
};

static int by_key(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *c = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int rx = state_rank(c->an->tasks[x].state), ry = state_rank(c->an->tasks[y].state);
	if (rx != ry)
		return rx - ry;
	if (c->keys[x] != c->keys[y])
		return c->keys[x] < c->keys[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int by_size(const void *a, const void *b, void *arg)
{
	const struct analysis *an = arg;
	const struct rep_task_group *x = a, *y = b;
	int rx = state_rank(an->tasks[x->members[0]].state);
	int ry = state_rank(an->tasks[y->members[0]].state);
	if (rx != ry)
		return rx - ry;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return x->members[0] < y->members[0] ? -1 : x->members[0] > y->members[0];
}

bool rep_task_groups_init(struct rep_task_groups *g, const struct analysis *an)
{
	memset(g, 0, sizeof(*g));
	if (an->ntasks == 0)
		return true;
	uint64_t *keys = malloc(an->ntasks * sizeof(*keys));
	g->members = malloc(an->ntasks * sizeof(*g->members));
	g->v = malloc(an->ntasks * sizeof(*g->v));
	if (!keys || !g->members || !g->v) {
		free(keys);
		rep_task_groups_deinit(g);
		return false;
	}
	for (size_t i = 0; i < an->ntasks; i++) {
		g->members[i] = i;
		keys[i] = group_key(&an->tasks[i]);
	}
	struct sort_ctx c = { an, keys };
	qsort_r(g->members, an->ntasks, sizeof(*g->members), by_key, &c);
	for (size_t i = 0; i < an->ntasks; i++) {
		size_t t = g->members[i];
		struct rep_task_group *last = g->n ? &g->v[g->n - 1] : NULL;
		if (last && keys[last->members[0]] == keys[t] &&
		    same_group(&an->tasks[last->members[0]], &an->tasks[t]))
			last->n++;
		else
			g->v[g->n++] = (struct rep_task_group){ .members = &g->members[i], .n = 1 };
	}
	free(keys);
	qsort_r(g->v, g->n, sizeof(*g->v), by_size, (void *)an);
	return true;
}

void rep_task_groups_deinit(struct rep_task_groups *g)
{
	free(g->v);
	free(g->members);
	memset(g, 0, sizeof(*g));
}


const struct an_task *rep_task_running_on(const struct analysis *an, int32_t tid)
{
	for (size_t i = 0; i < an->ntasks; i++)
		if (an->tasks[i].state == AN_TASK_RUNNING && an->tasks[i].has_tid &&
		    an->tasks[i].tid == tid)
			return &an->tasks[i];
	return NULL;
}

/* Append to BUF (LEN bytes, *AT used), truncating. */
__attribute__((format(printf, 4, 5)))
static void append(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	if (*at >= len)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	if (n > 0)
		*at = *at + (size_t)n < len ? *at + (size_t)n : len;
}

static bool of_runtime(const struct an_task *t, const char *runtime)
{
	return !runtime || (t->runtime && strcmp(t->runtime, runtime) == 0);
}

size_t rep_tasks_count(const struct analysis *an, const char *runtime)
{
	size_t n = 0;
	for (size_t i = 0; i < an->ntasks; i++)
		n += of_runtime(&an->tasks[i], runtime);
	return n;
}

const char *rep_tasks_counts_of(const struct analysis *an, const char *runtime, char *buf,
				size_t len)
{
	size_t at = 0;
	if (len)
		buf[0] = '\0';
	append(buf, len, &at, "%zu:", rep_tasks_count(an, runtime));
	const char *sep = " ";
	for (size_t k = 0; k < NSTATES; k++) {
		size_t n = 0;
		for (size_t i = 0; i < an->ntasks; i++)
			n += an->tasks[i].state == state_order[k] && of_runtime(&an->tasks[i], runtime);
		if (n) {
			append(buf, len, &at, "%s%zu %s", sep, n, an_task_state_name(state_order[k]));
			sep = ", ";
		}
	}
	return buf;
}

const char *rep_tasks_counts(const struct analysis *an, char *buf, size_t len)
{
	return rep_tasks_counts_of(an, NULL, buf, len);
}

bool rep_task_is_go(const struct an_task *t)
{
	return is_go(t);
}

const struct an_task *rep_goroutine_on(const struct analysis *an, int32_t tid)
{
	for (size_t i = 0; i < an->ntasks; i++)
		if (is_go(&an->tasks[i]) && an->tasks[i].has_tid && an->tasks[i].tid == tid)
			return &an->tasks[i];
	return NULL;
}

/* The least and most whole minutes G's members have waited. */
static void wait_minutes(const struct analysis *an, const struct rep_task_group *g, uint64_t *least,
			 uint64_t *most)
{
	*least = UINT64_MAX;
	*most = 0;
	for (size_t i = 0; i < g->n; i++) {
		const struct an_task *t = &an->tasks[g->members[i]];
		uint64_t m = t->has_wait_since ? t->wait_since / 60 : 0;
		*least = m < *least ? m : *least;
		*most = m > *most ? m : *most;
	}
}

const char *rep_go_status(const struct analysis *an, const struct rep_task_group *g, char *buf,
			  size_t len)
{
	const struct an_task *t = &an->tasks[g->members[0]];
	uint64_t least, most;
	size_t at = 0;
	if (len)
		buf[0] = '\0';
	bool waiting = t->state == AN_TASK_WAITING && t->wait_kind;
	append(buf, len, &at, "%s", waiting ? t->wait_kind : an_task_state_name(t->state));
	wait_minutes(an, g, &least, &most);
	/* the runtime counts minutes for a waiting goroutine only */
	if (t->state == AN_TASK_WAITING && most >= 1 && least == most)
		append(buf, len, &at, ", %" PRIu64 " minutes", most);
	else if (t->state == AN_TASK_WAITING && most >= 1)
		append(buf, len, &at, ", %" PRIu64 "~%" PRIu64 " minutes", least, most);
	if (t->locked)
		append(buf, len, &at, ", locked to thread");
	return buf;
}

const char *rep_task_noun(const struct an_task *t)
{
	return is_go(t) ? "goroutine" : is_asyncio(t) ? "asyncio task" : "bthread";
}

const char *rep_tasks_other_runtime(const struct analysis *an)
{
	size_t n = rep_tasks_count(an, "asyncio");
	return n && n == an->ntasks - rep_tasks_count(an, "go") ? "asyncio" : "bthread";
}

const char *rep_task_doing(const struct an_task *t, const struct analysis *an, char *buf,
			   size_t len)
{
	size_t at = 0;
	if (len)
		buf[0] = '\0';
	append(buf, len, &at, "%s", an_task_state_name(t->state));
	if (is_asyncio(t) && t->wait_kind && t->has_wait_target)
		append(buf, len, &at, " awaiting task 0x%" PRIx64, t->wait_target);
	else if (is_asyncio(t) && t->wait_kind)
		append(buf, len, &at, " awaiting %s 0x%" PRIx64, t->wait_kind, t->wait_address);
	else if (t->state == AN_TASK_RUNNING && t->has_tid)
		append(buf, len, &at, " on thread %" PRId32 "%s", t->tid,
		       an->has_signal && t->tid == an->crashing_tid ? " (crashing)" : "");
	else if (t->wait_kind && strcmp(t->wait_kind, "sleep") == 0)
		append(buf, len, &at, " in sleep");
	else if (t->wait_kind && t->has_wait_target)
		append(buf, len, &at, " in join of bthread 0x%" PRIx64, t->wait_target);
	else if (t->wait_kind)
		append(buf, len, &at, " in %s wait on 0x%" PRIx64, t->wait_kind, t->wait_address);
	if (t->state == AN_TASK_READY || t->state == AN_TASK_CREATED)
		append(buf, len, &at, "%s", t->nframes ? " (queued again)" : " (never ran)");
	return buf;
}
