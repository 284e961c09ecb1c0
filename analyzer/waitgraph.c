/* Deadlocks and the hang's summary from the threads' blocked_on. */
#include "waitgraph.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocking.h"

enum { CHAIN_MAX = 8, LABEL_MAX = 384 };

/* A growing line of text; a failed append leaves it NULL. */
struct line {
	char *text;
	bool failed;
};

static void say(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(struct line *l, const char *fmt, ...)
{
	if (l->failed)
		return;
	va_list ap;
	char *more = NULL, *joined = NULL;
	va_start(ap, fmt);
	int n = vasprintf(&more, fmt, ap);
	va_end(ap);
	if (n < 0 || asprintf(&joined, "%s%s", l->text ? l->text : "", more) < 0) {
		free(more);
		free(l->text);
		l->text = NULL;
		l->failed = true;
		return;
	}
	free(more);
	free(l->text);
	l->text = joined;
}


/* The thread AN's thread I waits behind, or -1. */
static long next_of(const struct analysis *an, size_t i)
{
	const struct an_blocked *b = an->threads[i].blocked;
	if (!b || !b->has_owner || b->owner_gone)
		return -1;
	for (size_t k = 0; k < an->nthreads; k++)
		if (an->threads[k].tid == b->owner_tid)
			return (long)k;
	return -1;
}

/* "thread 4211 (transfer)" */
static void say_thread(struct line *l, const struct an_thread *t)
{
	const char *fn = an_waiting_function(t);
	say(l, "thread %d", (int)t->tid);
	if (fn)
		say(l, " (%s)", fn);
}

/* "accounts_lock", "mutex at 0x55d4..." */
static void object_label(const struct an_blocked *b, char *buf, size_t len)
{
	if (b->kind == AN_WAIT_GIL)
		snprintf(buf, len, "the GIL");
	else if (b->object_name)
		snprintf(buf, len, "%s", b->object_name);
	else if (b->has_object)
		snprintf(buf, len, "%s at 0x%" PRIx64, an_wait_kind_name(b->kind), b->object);
	else
		snprintf(buf, len, "a %s", an_wait_kind_name(b->kind));
}

static bool is_lock(const struct an_blocked *b)
{
	return b->kind == AN_WAIT_MUTEX || b->kind == AN_WAIT_RWLOCK || b->kind == AN_WAIT_GIL;
}

/* One deadlock's summary: CYCLE[i] waits behind CYCLE[i + 1]. */
static char *cycle_summary(const struct analysis *an, const size_t *cycle, size_t n)
{
	struct line l = { 0 };
	char obj[LABEL_MAX];
	const struct an_thread *first = &an->threads[cycle[0]];
	const struct an_blocked *last = an->threads[cycle[n - 1]].blocked;
	say_thread(&l, first);
	if (n == 1) {
		object_label(first->blocked, obj, sizeof(obj));
		say(&l, is_lock(first->blocked) ? " holds %s and waits for it again" : " waits to join itself", obj);
		return l.text;
	}
	if (is_lock(last)) {
		object_label(last, obj, sizeof(obj));
		say(&l, " holds %s and", obj);
	}
	/* a cycle through many threads (a big process, or damaged owner
	 * words): its first hops and its length */
	size_t shown = n > CHAIN_MAX ? CHAIN_MAX : n;
	for (size_t i = 0; i < shown; i++) {
		const struct an_blocked *b = an->threads[cycle[i]].blocked;
		const struct an_thread *owner = &an->threads[cycle[(i + 1) % n]];
		object_label(b, obj, sizeof(obj));
		if (i)
			say(&l, ", which");
		if (!is_lock(b)) {
			say(&l, " waits to join ");
			if (i + 1 < n)
				say_thread(&l, owner);
			else
				say(&l, "thread %d", (int)owner->tid);
			continue;
		}
		say(&l, " waits for %s", obj);
		if (i + 1 < n) {
			say(&l, ", held by ");
			say_thread(&l, owner);
		}
	}
	if (shown < n)
		say(&l, ", ... back to thread %d: a cycle of %zu threads", (int)first->tid, n);
	return l.text;
}

static bool add_deadlock(struct analysis *an, const size_t *path, size_t n)
{
	/* the cycle from its lowest tid, so that one deadlock reads one way */
	size_t start = 0;
	for (size_t i = 1; i < n; i++)
		if (an->threads[path[i]].tid < an->threads[path[start]].tid)
			start = i;
	size_t *cycle = malloc(n * sizeof(*cycle));
	struct an_deadlock *more = realloc(an->deadlocks, (an->ndeadlocks + 1) * sizeof(*more));
	if (!cycle || !more) {
		free(cycle);
		return false;
	}
	an->deadlocks = more;
	for (size_t i = 0; i < n; i++)
		cycle[i] = path[(start + i) % n];
	struct an_deadlock *d = &an->deadlocks[an->ndeadlocks];
	memset(d, 0, sizeof(*d));
	d->threads = malloc(n * sizeof(*d->threads));
	d->objects = malloc(n * sizeof(*d->objects));
	d->summary = cycle_summary(an, cycle, n);
	d->n = n;
	for (size_t i = 0; d->threads && d->objects && i < n; i++) {
		const struct an_blocked *b = an->threads[cycle[i]].blocked;
		d->threads[i] = an->threads[cycle[i]].tid;
		d->objects[i] = b->has_object ? b->object : 0;
	}
	an->ndeadlocks++;
	free(cycle);
	return d->threads && d->objects && d->summary;
}

/* The function a task waits in: its first frame outside the C library
 * and its runtime's own code (for a goroutine also the standard library's
 * packages a wait passes through: sync, internal/poll, net, os, time),
 * else its entry function. */
static const char *task_waiter(const struct an_task *t)
{
	/* jump_stack: bRPC's bthread::jump_stack, which an inlined frame's DWARF
	 * names without its namespace */
	static const char *const runtime[] = { "runtime.", "bthread::", "bthread_", "jump_stack", NULL };
	static const char *const go_std[] = { "sync.", "internal/", "net.", "os.", "time.", "syscall.", NULL };
	bool go = t->runtime && strcmp(t->runtime, "go") == 0;
	for (size_t i = 0; i < t->nframes; i++) {
		const struct an_frame *f = &t->frames[i];
		bool own = f->function && !an_frame_in_runtime(f);
		for (const char *const *p = runtime; own && *p; p++)
			own = strncmp(f->function, *p, strlen(*p)) != 0;
		for (const char *const *p = go_std; go && own && *p; p++)
			own = strncmp(f->function, *p, strlen(*p)) != 0;
		if (own)
			return f->function;
	}
	return t->fn;
}

/* Each waiting task's one line: "waits on chan receive in main.parked". */
static bool summarize_tasks(struct analysis *an)
{
	for (size_t i = 0; i < an->ntasks; i++) {
		struct an_task *t = &an->tasks[i];
		if (!t->wait_kind || t->wait_summary)
			continue;
		const char *fn = task_waiter(t), *of = t->wait_object_name;
		char fd[64] = "", target[48];
		if (!of && t->has_wait_target) {
			snprintf(target, sizeof(target), "%s 0x%" PRIx64, t->runtime ? t->runtime : "task", t->wait_target);
			of = target;
		}
		if (t->has_wait_fd)
			snprintf(fd, sizeof(fd), " on fd %" PRId64, t->wait_fd);
		else if (t->has_wait_owner_task)
			snprintf(fd, sizeof(fd), ", held by bthread 0x%" PRIx64 ",", t->wait_owner_task);
		else if (t->has_wait_owner_tid)
			snprintf(fd, sizeof(fd), ", held by thread %d,", (int)t->wait_owner_tid);
		int n = asprintf(&t->wait_summary, "waits on %s%s%s%s%s%s", t->wait_kind, of ? " of " : "", of ? of : "",
				 fd, fn ? " in " : "", fn ? fn : "");
		if (n < 0) {
			t->wait_summary = NULL;
			return false;
		}
	}
	return true;
}

bool an_waitgraph_analyze(struct analysis *an)
{
	size_t n = an->nthreads;
	unsigned char *color = calloc(n ? n : 1, 1);   /* 0 new, 1 on the path, 2 done */
	size_t *path = malloc((n ? n : 1) * sizeof(*path));
	bool ok = color && path;
	for (size_t i = 0; ok && i < n; i++) {
		size_t len = 0;
		long k = (long)i;
		while (k >= 0 && color[k] == 0 && len < n) {
			color[k] = 1;
			path[len++] = (size_t)k;
			k = next_of(an, (size_t)k);
		}
		if (k >= 0 && color[k] == 1) {
			size_t at = 0;
			while (at < len && path[at] != (size_t)k)
				at++;
			ok = add_deadlock(an, path + at, len - at);
		}
		for (size_t p = 0; p < len; p++)
			color[path[p]] = 2;
	}
	free(color);
	free(path);
	return ok && summarize_tasks(an);
}

/* "which waits for X, held by thread H (f), which is blocked in read(fd
 * 3)": where the chain from thread I ends. */
static void say_chain_end(struct line *l, const struct analysis *an, size_t i)
{
	char obj[LABEL_MAX];
	for (int step = 0; step < CHAIN_MAX; step++) {
		const struct an_thread *t = &an->threads[i];
		const struct an_blocked *b = t->blocked;
		if (!b) {
			const char *fn = an_waiting_function(t);
			say(l, fn ? ", which is running in %s" : ", which is running", fn);
			return;
		}
		long k = next_of(an, i);
		if (k < 0 || !b->has_owner) {
			bool io = strncmp(b->summary, "blocked", 7) == 0 || strncmp(b->summary, "in ", 3) == 0;
			say(l, ", which %s%s", io ? "is " : "", b->summary);
			return;
		}
		object_label(b, obj, sizeof(obj));
		say(l, ", which waits for %s, held by ", obj);
		say_thread(l, &an->threads[k]);
		i = (size_t)k;
	}
}

/* What groups threads or tasks that wait alike: up to four strings and a
 * number, compared in that order, and whose it is. */
struct member {
	const char *key[4];
	uint64_t num;
	size_t index;
};

static int text_cmp(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

/* Members' order by their keys alone (0: they group together). */
static int keys_cmp(const struct member *a, const struct member *b)
{
	for (int i = 0; i < 4; i++) {
		int c = text_cmp(a->key[i], b->key[i]);
		if (c)
			return c;
	}
	return (a->num > b->num) - (a->num < b->num);
}

static int member_cmp(const void *pa, const void *pb)
{
	const struct member *a = pa, *b = pb;
	int c = keys_cmp(a, b);
	return c ? c : (a->index > b->index) - (a->index < b->index);
}

/* A run of equal members: where it starts in the sorted array, how long. */
struct run {
	size_t at, count, first_index;
};

/* Sort M[0, N) and cut it into runs of equal keys; *OUT malloc'd (NULL
 * when out of memory, then 0). */
static size_t runs_of(struct member *m, size_t n, struct run **out)
{
	*out = NULL;
	if (n == 0)
		return 0;
	qsort(m, n, sizeof(*m), member_cmp);
	struct run *r = malloc(n * sizeof(*r));
	size_t nr = 0;
	for (size_t i = 0; r && i < n; i++) {
		if (nr && keys_cmp(&m[r[nr - 1].at], &m[i]) == 0)
			r[nr - 1].count++;   /* sorted: the run's first is its earliest */
		else
			r[nr++] = (struct run){ .at = i, .count = 1, .first_index = m[i].index };
	}
	*out = r;
	return r ? nr : 0;
}

/* The run most members are in (the earliest member's first on a tie). */
static const struct run *biggest_run(const struct run *r, size_t nr)
{
	const struct run *best = NULL;
	for (size_t i = 0; i < nr; i++)
		if (!best || r[i].count > best->count ||
		    (r[i].count == best->count && r[i].first_index < best->first_index))
			best = &r[i];
	return best;
}

/* The biggest run among the N MEMBERS (freed here; NULL: out of memory)
 * into *FIRST and *COUNT; false when there is none. */
static bool best_run_of(struct member *m, size_t n, size_t *first, size_t *count)
{
	struct run *r = NULL;
	size_t nr = m ? runs_of(m, n, &r) : 0;
	const struct run *best = biggest_run(r, nr);
	if (best) {
		*first = best->first_index;
		*count = best->count;
	}
	free(r);
	free(m);
	return best != NULL;
}

/* The object most threads wait for that records its holder; false when
 * none does. */
static bool biggest_group(const struct analysis *an, size_t *first, size_t *count)
{
	struct member *m = malloc((an->nthreads ? an->nthreads : 1) * sizeof(*m));
	size_t n = 0;
	for (size_t i = 0; m && i < an->nthreads; i++) {
		const struct an_blocked *b = an->threads[i].blocked;
		if (b && b->has_owner && b->has_object)
			m[n++] = (struct member){ .key = { an_wait_kind_name(b->kind) }, .num = b->object, .index = i };
	}
	return best_run_of(m, n, first, count);
}

static void say_group(struct line *l, const struct analysis *an, size_t first, size_t count)
{
	const struct an_blocked *b = an->threads[first].blocked;
	char obj[LABEL_MAX];
	object_label(b, obj, sizeof(obj));
	if (b->kind == AN_WAIT_JOIN)
		say(l, "%zu thread%s wait%s to join ", count, count == 1 ? "" : "s", count == 1 ? "s" : "");
	else
		say(l, "%zu thread%s wait%s for %s, held by ", count, count == 1 ? "" : "s",
		    count == 1 ? "s" : "", obj);
	long k = next_of(an, first);
	if (k < 0) {
		say(l, "thread %d, which is no thread of the process (it exited holding it)", (int)b->owner_tid);
		return;
	}
	say_thread(l, &an->threads[k]);
	say_chain_end(l, an, (size_t)k);
}

static int run_count_cmp(const void *pa, const void *pb)
{
	const struct run *a = pa, *b = pb;
	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	return (a->at > b->at) - (a->at < b->at);   /* runs are sorted by name */
}

/* "8 in epoll_wait, 4 in pthread_cond_wait": the blocked threads by where
 * they wait, most first. */
static void say_waits(struct line *l, const struct analysis *an)
{
	struct member *m = malloc((an->nthreads ? an->nthreads : 1) * sizeof(*m));
	size_t n = 0;
	for (size_t i = 0; m && i < an->nthreads; i++) {
		const struct an_blocked *b = an->threads[i].blocked;
		if (b)
			m[n++] = (struct member){ .key = { b->via ? b->via : "a system call" }, .index = i };
	}
	struct run *r = NULL;
	size_t nr = m ? runs_of(m, n, &r) : 0;
	if (!m || (n && !r))
		l->failed = true;
	if (nr)
		qsort(r, nr, sizeof(*r), run_count_cmp);
	for (size_t i = 0; i < nr; i++)
		say(l, "%s%zu in %s", i ? ", " : "", r[i].count, m[r[i].at].key[0]);
	free(r);
	free(m);
}

/* The biggest group of tasks that wait alike (one runtime, one wait, one
 * function, one creator, one object waited on); false when none waits. */
static bool biggest_task_group(const struct analysis *an, size_t *first, size_t *count)
{
	struct member *m = malloc((an->ntasks ? an->ntasks : 1) * sizeof(*m));
	size_t n = 0;
	for (size_t i = 0; m && i < an->ntasks; i++) {
		const struct an_task *t = &an->tasks[i];
		const char *fn = task_waiter(t);
		/* the runtime's own (Go's idle GC workers): no program's wait */
		if (t->wait_kind && fn && strncmp(fn, "runtime.", 8) != 0)
			m[n++] = (struct member){ .key = { t->runtime, t->wait_kind, fn, t->created_by },
						  .num = t->has_wait_address ? t->wait_address : 0, .index = i };
	}
	return best_run_of(m, n, first, count);
}

/* "300 goroutines wait on chan receive of main.orders in main.consume,
 * created by main.startConsumers" */
static void say_task_group(struct line *l, const struct an_task *t, size_t count)
{
	const char *noun = t->runtime && strcmp(t->runtime, "go") == 0 ? "goroutine"
			 : t->runtime && strcmp(t->runtime, "bthread") == 0 ? "bthread" : "task";
	const char *fn = task_waiter(t);
	say(l, "%zu %s%s wait%s on %s", count, noun, count == 1 ? "" : "s", count == 1 ? "s" : "", t->wait_kind);
	if (t->wait_object_name)
		say(l, " of %s", t->wait_object_name);
	if (fn)
		say(l, " in %s", fn);
	if (t->created_by)
		say(l, ", created by %s", t->created_by);
}

/* An asyncio task runs: its loop's thread, not the tasks awaiting it,
 * says why the process hangs. */
static bool asyncio_task_running(const struct analysis *an)
{
	for (size_t i = 0; i < an->ntasks; i++)
		if (an->tasks[i].state == AN_TASK_RUNNING && an->tasks[i].runtime &&
		    strcmp(an->tasks[i].runtime, "asyncio") == 0)
			return true;
	return false;
}

char *an_hang_summary(const struct analysis *an, enum an_cause_kind *kind)
{
	struct line l = { 0 };
	size_t first = 0, count = 0, blocked = 0;
	*kind = AN_CAUSE_HANG;
	if (an->ndeadlocks) {
		*kind = AN_CAUSE_DEADLOCK;
		say(&l, "%s", an->deadlocks[0].summary);
		if (an->ndeadlocks > 1)
			say(&l, "; %zu more deadlocks", an->ndeadlocks - 1);
		return l.failed ? NULL : l.text;
	}
	if (biggest_group(an, &first, &count)) {
		say_group(&l, an, first, count);
		return l.failed ? NULL : l.text;
	}
	if (!asyncio_task_running(an) && biggest_task_group(an, &first, &count)) {
		say_task_group(&l, &an->tasks[first], count);
		return l.failed ? NULL : l.text;
	}
	for (size_t i = 0; i < an->nthreads; i++)
		blocked += an->threads[i].blocked != NULL;
	if (an->nthreads == 1 && blocked) {
		say_thread(&l, &an->threads[0]);
		say(&l, " %s", an->threads[0].blocked->summary);
		return l.failed ? NULL : l.text;
	}
	for (size_t i = 0; i < an->nthreads && blocked < an->nthreads; i++) {
		if (an->threads[i].blocked)
			continue;
		const char *fn = an_waiting_function(&an->threads[i]);
		say(&l, fn ? "thread %d is running in %s" : "thread %d is running", (int)an->threads[i].tid, fn);
		if (blocked)
			say(&l, "; %zu thread%s wait%s: ", blocked, blocked == 1 ? "" : "s", blocked == 1 ? "s" : "");
		break;
	}
	if (!l.text && !l.failed)
		say(&l, "all %zu threads wait: ", an->nthreads);
	if (blocked)
		say_waits(&l, an);
	return l.failed ? NULL : l.text;
}

/* ---- the hang's signature ------------------------------------------------ */

enum { SIGN_NAMES_MAX = 8 };

/* How a signature names a function: malloc'd, NULL when memory ran out. */
typedef char *normalize_fn(const char *name);

/* A line of a signature, and how it names functions. */
struct sign {
	struct line l;
	normalize_fn *normalize;
};

/* Say FN normalised ("??" when unknown). */
static void say_fn(struct sign *g, const char *fn)
{
	struct line *l = &g->l;
	char *norm = fn ? g->normalize(fn) : NULL;
	if (fn && !norm)
		l->failed = true;
	say(l, "%s", norm ? norm : "??");
	free(norm);
}

/* Where the chain from thread I ends: the thread it reaches. */
static size_t chain_end(const struct analysis *an, size_t i)
{
	for (int step = 0; step < CHAIN_MAX; step++) {
		long k = next_of(an, i);
		if (k < 0)
			break;
		i = (size_t)k;
	}
	return i;
}

/* "refill_pool (io) <- pool_worker": the function the chain of the group
 * led by thread FIRST ends in (with how it waits), and the group's
 * distinct waiting functions, sorted. */
static void sign_group(struct sign *g, const struct analysis *an, size_t first)
{
	struct line *l = &g->l;
	const struct an_blocked *fb = an->threads[first].blocked;
	if (next_of(an, first) < 0) {
		say(l, "held by a thread gone");
	} else {
		const struct an_thread *end = &an->threads[chain_end(an, (size_t)next_of(an, first))];
		say_fn(g, an_waiting_function(end));
		say(l, " (%s)", end->blocked ? an_wait_kind_name(end->blocked->kind) : "running");
	}
	struct member *m = malloc((an->nthreads ? an->nthreads : 1) * sizeof(*m));
	size_t n = 0;
	for (size_t i = 0; m && i < an->nthreads; i++) {
		const struct an_blocked *b = an->threads[i].blocked;
		if (b && b->has_owner && b->has_object && b->kind == fb->kind && b->object == fb->object)
			m[n++] = (struct member){ .key = { an_waiting_function(&an->threads[i]) }, .index = i };
	}
	struct run *r = NULL;
	size_t nr = m ? runs_of(m, n, &r) : 0;
	l->failed |= !m || (n && !r);
	say(l, " <- ");
	for (size_t i = 0; i < nr && i < SIGN_NAMES_MAX; i++) {
		say(l, "%s", i ? ", " : "");
		say_fn(g, m[r[i].at].key[0]);
	}
	free(r);
	free(m);
}

/* "idle: event_loop (io), worker_main (condition)": every blocked
 * thread's waiting function and how it waits, distinct, sorted. */
static void sign_idle(struct sign *g, const struct analysis *an)
{
	struct line *l = &g->l;
	struct member *m = malloc((an->nthreads ? an->nthreads : 1) * sizeof(*m));
	size_t n = 0;
	for (size_t i = 0; m && i < an->nthreads; i++) {
		const struct an_blocked *b = an->threads[i].blocked;
		if (b)
			m[n++] = (struct member){ .key = { an_waiting_function(&an->threads[i]),
							   an_wait_kind_name(b->kind) }, .index = i };
	}
	struct run *r = NULL;
	size_t nr = m ? runs_of(m, n, &r) : 0;
	l->failed |= !m || (n && !r);
	say(l, "idle: ");
	for (size_t i = 0; i < nr && i < SIGN_NAMES_MAX; i++) {
		say(l, "%s", i ? ", " : "");
		say_fn(g, m[r[i].at].key[0]);
		say(l, " (%s)", m[r[i].at].key[1]);
	}
	free(r);
	free(m);
}

/* The first thread on the CPU, or nthreads. */
static size_t first_running(const struct analysis *an)
{
	size_t i = 0;
	while (i < an->nthreads && an->threads[i].blocked)
		i++;
	return i;
}

char *an_hang_signature(const struct analysis *an, char *(*normalize)(const char *name))
{
	struct sign g = { .normalize = normalize };
	struct line *l = &g.l;
	size_t first = 0, count = 0, running;
	say(l, "hang: ");
	if (biggest_group(an, &first, &count)) {
		sign_group(&g, an, first);
	} else if (!asyncio_task_running(an) && biggest_task_group(an, &first, &count)) {
		const struct an_task *t = &an->tasks[first];
		say(l, "%s %s in ", t->runtime ? t->runtime : "task", t->wait_kind);
		say_fn(&g, task_waiter(t));
		if (t->created_by) {
			say(l, ", created by ");
			say_fn(&g, t->created_by);
		}
	} else if ((running = first_running(an)) < an->nthreads) {
		say(l, "running ");
		say_fn(&g, an_waiting_function(&an->threads[running]));
	} else if (an->nthreads) {
		sign_idle(&g, an);
	} else {
		free(l->text);
		return NULL;
	}
	return l->failed ? NULL : l->text;
}
