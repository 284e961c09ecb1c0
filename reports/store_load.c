/* A stored core back into a struct analysis: one SELECT per table, keyed by
 * the core's fingerprint (ClickHouse's key; SQLite's is unique), every read
 * through FINAL on ClickHouse so a half-written or replaced core reads as
 * its last whole version. */
#include "store_load.h"
#include "reader.h"
#include "store_rows.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A table's rows of one core: SQLite finds the core by its id. */
#define SQLITE_OF_CORE " WHERE core_id = (SELECT id FROM cores WHERE fingerprint = ?1)"
#define CH_OF_CORE " FINAL WHERE fingerprint = %1$s"

static const char *cell_text(json_t *row, size_t c)
{
	return json_string_value(json_array_get(row, c));
}

static long long cell_int(json_t *row, size_t c)
{
	return json_integer_value(json_array_get(row, c));
}

static bool cell_null(json_t *row, size_t c)
{
	json_t *v = json_array_get(row, c);
	return !v || json_is_null(v);
}

static char *cell_dup(json_t *row, size_t c)
{
	return an_strdup(cell_text(row, c));
}

/* S kept by C for as long as the analysis (where it holds static text). */
static const char *keep(struct rep_stored_core *c, const char *s)
{
	if (!s)
		return NULL;
	if (c->nstrings == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		char **p = realloc(c->strings, cap * sizeof(*p));
		if (!p)
			return NULL;
		c->strings = p;
		c->cap = cap;
	}
	char *copy = strdup(s);
	if (copy)
		c->strings[c->nstrings++] = copy;
	return copy;
}

/* The rows of TABLE's COLUMNS for the core, ordered by ORDER. */
static json_t *table_rows(struct rep_reader *r, const char *fp, const char *table, const char *columns,
			  const char *order)
{
	char sql[1024];
	json_t *rows = NULL;
	snprintf(sql, sizeof(sql), "SELECT %s FROM %s%s ORDER BY %s", columns, table,
		 rep_reader_clickhouse(r) ? CH_OF_CORE : SQLITE_OF_CORE, order);
	rep_reader_rows(r, sql, fp, &rows);
	return rows;
}

enum { CORES_COLUMNS = 38 };
static const char cores_columns[] =
	"path, file_size, size, fingerprint, sha256, crashed_at, boot_id, coredump_uid, unit, cmdline,"
	" executable, build_id, pid, uid, signal, signal_name, code, code_name, fault_address,"
	" crashing_tid, abort_message, signature, signature_hash, async_key, cause_kind, cause_summary,"
	" arch, caught_signal, caught_signal_name, caught_code, caught_code_name, caught_address,"
	" handled_by, handler_action, go_crash, go_signal, go_signal_name, go_message";

static void load_caught(struct rep_stored_core *c, json_t *q)
{
	struct an_caught *k = &c->an->caught;
	if (cell_null(q, 27))
		return;
	k->present = true;
	k->signo = (int)cell_int(q, 27);
	k->signal_name = keep(c, cell_text(q, 28));
	k->has_code = !cell_null(q, 29);
	k->code = (int)cell_int(q, 29);
	k->code_name = keep(c, cell_text(q, 30));
	k->has_fault_address = !cell_null(q, 31);
	k->fault_address = (uint64_t)cell_int(q, 31);
	k->handler = cell_dup(q, 32);
	k->action = an_handler_action_parse(cell_text(q, 33));
	k->tid = c->an->crashing_tid;
}

static void load_go(struct analysis *an, json_t *q)
{
	if (cell_null(q, 34))
		return;
	an->go.present = true;
	an->go.fatal = strcmp(cell_text(q, 34), "fatal error") == 0;
	an->go.signo = (int)cell_int(q, 35);
	an->go.message = cell_dup(q, 37);
}

/* The cores row: identity, signal, cause, signature. */
static void load_core_row(struct rep_stored_core *c, json_t *q)
{
	struct analysis *an = c->an;
	an->core_path = cell_dup(q, 0);
	an->core_file_size = (uint64_t)cell_int(q, 1);
	an->core_size = (uint64_t)cell_int(q, 2);
	an->core_fingerprint = cell_dup(q, 3);
	an->core_sha256 = cell_dup(q, 4);
	an->crashed_at = cell_dup(q, 5);
	an->boot_id = cell_dup(q, 6);
	an->has_coredump_uid = !cell_null(q, 7);
	an->coredump_uid = (uint32_t)cell_int(q, 7);
	an->unit = cell_dup(q, 8);
	an->cmdline = cell_dup(q, 9);
	an->executable = cell_dup(q, 10);
	an->build_id = cell_dup(q, 11);
	an->has_pid = !cell_null(q, 12);
	an->pid = (int32_t)cell_int(q, 12);
	an->has_uid = !cell_null(q, 13);
	an->uid = (uint32_t)cell_int(q, 13);
	an->has_signal = !cell_null(q, 14);
	an->signo = (int)cell_int(q, 14);
	an->signal_name = keep(c, cell_text(q, 15));
	an->has_code = !cell_null(q, 16);
	an->code = (int)cell_int(q, 16);
	an->code_name = keep(c, cell_text(q, 17));
	an->has_fault_address = !cell_null(q, 18);
	an->fault_address = (uint64_t)cell_int(q, 18);
	an->crashing_tid = (int32_t)cell_int(q, 19);
	an->abort_message = cell_dup(q, 20);
	an->signature = cell_dup(q, 21);
	an->signature_hash = cell_dup(q, 22);
	an->async_key_found = !cell_null(q, 23);
	an->async_key = (uint32_t)cell_int(q, 23);
	an->cause.kind = an_cause_kind_parse(cell_text(q, 24));
	an->cause.summary = cell_dup(q, 25);
	an->arch = cell_text(q, 26) && strcmp(cell_text(q, 26), "aarch64") == 0 ? "aarch64" : "x86_64";
	load_caught(c, q);
	load_go(an, q);
}

static int load_modules(struct rep_reader *r, struct analysis *an, const char *fp)
{
	json_t *rows = table_rows(r, fp, "modules", "path, start_addr, end_addr, build_id, debuginfo", "idx"), *q;
	size_t k;
	if (!rows)
		return -1;
	an->modules = calloc(json_array_size(rows) + 1, sizeof(*an->modules));
	json_array_foreach(rows, k, q) {
		if (!an->modules)
			break;
		struct an_module *m = &an->modules[an->nmodules++];
		m->path = cell_dup(q, 0);
		m->start = (uint64_t)cell_int(q, 1);
		m->end = (uint64_t)cell_int(q, 2);
		m->build_id = cell_dup(q, 3);
		m->debuginfo = cell_dup(q, 4);
	}
	json_decref(rows);
	return an->modules ? 0 : -1;
}

/* The frames of every owner of one frames table, read once: each row is
 * the owner's idx, the frame's idx, then COLUMNS. */
struct frame_table {
	const char *table, *owner, *columns;
};

static const struct frame_table thread_frames = {
	"frames", "thread_idx",
	"kind, pc, activation, function, function_offset, module, module_offset, file, line, inlined,"
	" inline_depth, cfa, seam, tailcall, display, args, runtime, detail, role"};
static const struct frame_table task_frames = {
	"task_frames", "task_idx",
	"kind, pc, function, function_offset, module, module_offset, file, line, inlined, inline_depth,"
	" tailcall, display, args, activation, cfa, seam, role, runtime, detail"};
static const struct frame_table chain_frames = {
	"suspended_frames", "chain_idx",
	"kind, pc, function, function_offset, module, module_offset, file, line, inlined, inline_depth,"
	" tailcall, display, args"};

/* The field of each of T's columns. */
static size_t frame_fields(const struct frame_table *t, enum rep_frame_field *fields, size_t max)
{
	char name[64];
	size_t n = 0;
	for (const char *p = t->columns; *p && n < max;) {
		size_t len = strcspn(p, ",");
		snprintf(name, sizeof(name), "%.*s", (int)len, p);
		fields[n++] = rep_frame_field_of(name);
		p += len;
		p += strspn(p, ", ");
	}
	return n;
}

/* One owner's stack, with the jump of its indexes (a recursion left out). */
struct stack {
	struct an_frame *frames;
	size_t n;
	struct an_index_gap gap;
};

static int frame_of_row(struct an_frame *f, json_t *q, const enum rep_frame_field *fields, size_t n)
{
	for (size_t c = 0; c < n; c++) {
		json_t *v = json_array_get(q, c + 2);
		const struct rep_cell cell = {!v || json_is_null(v), json_integer_value(v), json_string_value(v)};
		if (rep_frame_set_field(f, fields[c], &cell) != 0)
			return -1;
	}
	return 0;
}

/* Every frame of table T into STACKS[0 .. NOWNERS), by owner. */
static int load_frames(struct rep_reader *r, const char *fp, const struct frame_table *t,
		       struct stack *stacks, size_t nowners)
{
	enum rep_frame_field fields[32];
	size_t nf = frame_fields(t, fields, 32), k;
	char columns[512], order[64];
	snprintf(columns, sizeof(columns), "%s, idx, %s", t->owner, t->columns);
	snprintf(order, sizeof(order), "%s, idx", t->owner);
	json_t *rows = table_rows(r, fp, t->table, columns, order), *q;
	int rc = 0;
	if (!rows)
		return -1;
	/* counted first: each owner's array is allocated once */
	size_t *count = calloc(nowners + 1, sizeof(*count));
	json_array_foreach(rows, k, q)
		if (count && (size_t)cell_int(q, 0) < nowners)
			count[cell_int(q, 0)]++;
	for (size_t o = 0; count && o < nowners; o++)
		if (count[o] && !(stacks[o].frames = calloc(count[o], sizeof(struct an_frame))))
			rc = -1;
	json_array_foreach(rows, k, q) {
		size_t o = (size_t)cell_int(q, 0);
		if (!count || rc != 0 || o >= nowners)
			continue;
		rep_index_gap_note(&stacks[o].gap, stacks[o].n, cell_int(q, 1));
		if (frame_of_row(&stacks[o].frames[stacks[o].n++], q, fields, nf) != 0)
			rc = -1;
	}
	if (!count)
		rc = -1;
	free(count);
	json_decref(rows);
	return rc;
}

/* A table whose rows own stacks (threads, tasks, suspended chains): its
 * rows for the core, by idx, and a zeroed stack for each, for load_frames()
 * to fill and the caller to hand to its owners. */
struct owners {
	json_t *rows;
	size_t n;
	struct stack *stacks;       /* n + 1 */
};

/* O for TABLE's COLUMNS, and the caller's array for the owners: n + 1
 * zeroed elements of SIZE (caller frees); NULL (nothing to close) when
 * they cannot be read. */
static void *owners_open(struct owners *o, struct rep_reader *r, const char *fp, const char *table,
			 const char *columns, size_t size)
{
	void *owners = NULL;
	o->rows = table_rows(r, fp, table, columns, "idx");
	o->n = json_array_size(o->rows);
	o->stacks = o->rows ? calloc(o->n + 1, sizeof(*o->stacks)) : NULL;
	if (o->stacks && (owners = calloc(o->n + 1, size)))
		return owners;
	free(o->stacks);
	json_decref(o->rows);
	return NULL;
}

/* O's rows and stacks (their frames belong to whoever took them). */
static void owners_close(struct owners *o)
{
	free(o->stacks);
	json_decref(o->rows);
}

/* The name a recursion's cycle shows for F. */
static const char *cycle_name(const struct an_frame *f)
{
	return f->function ? f->function : "??";
}

static bool same_function(const struct an_frame *a, const struct an_frame *b)
{
	return strcmp(cycle_name(a), cycle_name(b)) == 0;
}

/* The run a stored stack left out (its indexes jump at GAP): the shortest
 * cycle the frames on both sides of the jump repeat, whose length divides
 * the jump; unknown (no cycle) when none does. */
static struct an_recursion *recursion_of(const struct stack *s)
{
	struct an_recursion *rec;
	size_t at = s->gap.at, left = s->gap.left_out, len = 0;
	if (!at || !left || !(rec = calloc(1, sizeof(*rec))))
		return NULL;
	for (size_t k = 1; k <= at && at + k <= s->n && !len; k++) {
		bool same = left % k == 0;
		for (size_t i = 0; same && i < k; i++)
			same = same_function(&s->frames[at - k + i], &s->frames[at + i]);
		len = same ? k : 0;
	}
	rec->first = at;
	rec->last = at + left - 1;
	if (len && (rec->cycle = calloc(len, sizeof(*rec->cycle)))) {
		for (size_t i = 0; i < len; i++)
			rec->cycle[i] = strdup(cycle_name(&s->frames[at + i]));
		rec->ncycle = len;
		rec->repeats = left / len;
	}
	return rec;
}

static int load_threads(struct rep_reader *r, struct analysis *an, const char *fp)
{
	struct owners o;
	json_t *q;
	size_t k;
	if (!(an->threads = owners_open(&o, r, fp, "threads",
					"tid, crashing, rip, rsp, rbp, fs_base, unwind_error, async_root",
					sizeof(*an->threads))))
		return -1;
	json_array_foreach(o.rows, k, q) {
		struct an_thread *t = &an->threads[an->nthreads++];
		t->tid = (int32_t)cell_int(q, 0);
		t->crashing = cell_int(q, 1) != 0;
		t->pc = (uint64_t)cell_int(q, 2);
		t->sp = (uint64_t)cell_int(q, 3);
		t->fp = (uint64_t)cell_int(q, 4);
		t->tp = (uint64_t)cell_int(q, 5);
		t->has_tp = !cell_null(q, 5);
		t->unwind_error = cell_dup(q, 6);
		t->async_root = (uint64_t)cell_int(q, 7);
	}
	int rc = load_frames(r, fp, &thread_frames, o.stacks, o.n);
	for (size_t i = 0; i < o.n; i++) {
		an->threads[i].frames = o.stacks[i].frames;
		an->threads[i].nframes = o.stacks[i].n;
		if (rc == 0)
			an->threads[i].recursion = recursion_of(&o.stacks[i]);
	}
	owners_close(&o);
	return rc;
}

static void task_of_row(struct rep_stored_core *c, struct an_task *t, json_t *q)
{
	t->runtime = keep(c, cell_text(q, 0) ? cell_text(q, 0) : "bthread");
	const char *id = cell_text(q, 1);
	t->id = id ? strtoull(id, NULL, 0) : 0;
	t->state = an_task_state_parse(cell_text(q, 2));
	t->wait_kind = keep(c, cell_text(q, 3));
	t->has_wait_address = !cell_null(q, 4);
	t->wait_address = (uint64_t)cell_int(q, 4);
	t->has_wait_target = !cell_null(q, 5);
	t->wait_target = (uint64_t)cell_int(q, 5);
	t->has_tid = !cell_null(q, 6);
	t->tid = (int32_t)cell_int(q, 6);
	t->fn = cell_dup(q, 7);
	t->fn_address = (uint64_t)cell_int(q, 8);
	t->address = (uint64_t)cell_int(q, 9);
	t->unwind_error = cell_dup(q, 10);
	t->created_by = keep(c, cell_text(q, 11));
	t->created_file = keep(c, cell_text(q, 12));
	t->created_line = (int)cell_int(q, 13);
	t->has_wait_since = !cell_null(q, 14);
	t->wait_since = (uint64_t)cell_int(q, 14);
	t->locked = cell_int(q, 15) != 0;
	t->name = cell_dup(q, 16);
}

static int load_tasks(struct rep_reader *r, struct rep_stored_core *c, const char *fp)
{
	struct analysis *an = c->an;
	struct owners o;
	json_t *q;
	size_t k;
	if (!(an->tasks = owners_open(&o, r, fp, "tasks",
				      "runtime, task_id, state, wait_kind, wait_address, wait_target, tid, fn,"
				      " fn_address, address, unwind_error, created_by, created_file, created_line,"
				      " wait_since, locked, name", sizeof(*an->tasks))))
		return -1;
	json_array_foreach(o.rows, k, q)
		task_of_row(c, &an->tasks[an->ntasks++], q);
	int rc = o.n ? load_frames(r, fp, &task_frames, o.stacks, o.n) : 0;
	for (size_t i = 0; i < o.n; i++) {
		an->tasks[i].frames = o.stacks[i].frames;
		an->tasks[i].nframes = o.stacks[i].n;
	}
	owners_close(&o);
	return rc;
}

static int load_suspended(struct rep_reader *r, struct analysis *an, const char *fp)
{
	struct owners o;
	json_t *q;
	size_t k;
	if (!(an->suspended = owners_open(&o, r, fp, "suspended", "leaf", sizeof(*an->suspended))))
		return -1;
	json_array_foreach(o.rows, k, q)
		an->suspended[an->nsuspended++].leaf = (uint64_t)cell_int(q, 0);
	int rc = o.n ? load_frames(r, fp, &chain_frames, o.stacks, o.n) : 0;
	for (size_t i = 0; i < o.n; i++) {
		an->suspended[i].frames = o.stacks[i].frames;
		an->suspended[i].nframes = o.stacks[i].n;
	}
	owners_close(&o);
	return rc;
}

enum { BLOCKED_INDEX = 1 };
static const char blocked_columns[] =
	"waiter, waiter_idx, kind, object, object_name, owner_tid, owner_gone, owner_task, syscall, fd,"
	" fd_target, since, via, function, summary";

/* A blocked_on row Q of a thread into a new an_blocked; NULL when out of
 * memory. */
static struct an_blocked *thread_blocked(struct rep_stored_core *c, json_t *q)
{
	struct an_blocked *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->kind = an_wait_kind_parse(cell_text(q, 2));
	b->has_object = !cell_null(q, 3);
	b->object = (uint64_t)cell_int(q, 3);
	b->object_name = cell_dup(q, 4);
	b->has_owner = !cell_null(q, 5);
	b->owner_tid = (int32_t)cell_int(q, 5);
	b->owner_gone = cell_int(q, 6) != 0;
	b->syscall = keep(c, cell_text(q, 8));
	b->has_fd = !cell_null(q, 9);
	b->fd = cell_int(q, 9);
	b->fd_target = cell_dup(q, 10);
	b->has_since = !cell_null(q, 11);
	b->since = (uint64_t)cell_int(q, 11);
	b->via = keep(c, cell_text(q, 12));
	b->waiter = cell_dup(q, 13);
	b->summary = cell_dup(q, 14);
	return b;
}

/* A blocked_on row Q of task T: what the tasks row does not hold. */
static void task_blocked(struct an_task *t, json_t *q)
{
	t->wait_object_name = cell_dup(q, 4);
	t->has_wait_owner_tid = !cell_null(q, 5);
	t->wait_owner_tid = (int32_t)cell_int(q, 5);
	t->has_wait_owner_task = !cell_null(q, 7);
	t->wait_owner_task = (uint64_t)cell_int(q, 7);
	t->has_wait_fd = !cell_null(q, 9);
	t->wait_fd = cell_int(q, 9);
	t->wait_summary = cell_dup(q, 14);
}

/* What each thread and task waits for, onto those already read. */
static int load_blocked(struct rep_reader *r, struct rep_stored_core *c, const char *fp)
{
	struct analysis *an = c->an;
	json_t *rows = table_rows(r, fp, "blocked_on", blocked_columns, "waiter, waiter_idx"), *q;
	size_t k;
	int rc = 0;
	if (!rows)
		return -1;
	json_array_foreach(rows, k, q) {
		size_t i = (size_t)cell_int(q, BLOCKED_INDEX);
		bool thread = cell_text(q, 0) && strcmp(cell_text(q, 0), "thread") == 0;
		if (thread && i < an->nthreads && !an->threads[i].blocked) {
			if (!(an->threads[i].blocked = thread_blocked(c, q)))
				rc = -1;
		} else if (!thread && i < an->ntasks && !an->tasks[i].wait_summary) {
			task_blocked(&an->tasks[i], q);
		}
	}
	json_decref(rows);
	return rc;
}

/* The wait-for graph's cycles: each deadlocks row with its members. */
static int load_deadlocks(struct rep_reader *r, struct analysis *an, const char *fp)
{
	json_t *rows = table_rows(r, fp, "deadlocks", "summary, nmembers", "idx"), *q;
	json_t *members = rows ? table_rows(r, fp, "deadlock_members", "deadlock_idx, pos, tid, object",
					    "deadlock_idx, pos") : NULL;
	size_t k;
	int rc = -1;
	if (!members)
		goto out;
	if (!(an->deadlocks = calloc(json_array_size(rows) + 1, sizeof(*an->deadlocks))))
		goto out;
	json_array_foreach(rows, k, q) {
		struct an_deadlock *d = &an->deadlocks[an->ndeadlocks++];
		size_t n = cell_int(q, 1) > 0 ? (size_t)cell_int(q, 1) : 0;
		d->summary = cell_dup(q, 0);
		d->threads = calloc(n + 1, sizeof(*d->threads));
		d->objects = calloc(n + 1, sizeof(*d->objects));
		if (!d->threads || !d->objects)
			goto out;
		d->n = n;
	}
	json_array_foreach(members, k, q) {
		size_t i = (size_t)cell_int(q, 0), pos = (size_t)cell_int(q, 1);
		if (i < an->ndeadlocks && pos < an->deadlocks[i].n) {
			an->deadlocks[i].threads[pos] = (int32_t)cell_int(q, 2);
			an->deadlocks[i].objects[pos] = (uint64_t)cell_int(q, 3);
		}
	}
	rc = 0;
out:
	json_decref(members);
	json_decref(rows);
	return rc;
}

/* A recorder_events row's args (a JSON array of hex strings) back. */
static void event_args(struct an_event *e, const char *text)
{
	json_t *a = text ? json_loads(text, 0, NULL) : NULL, *v;
	size_t i;
	json_array_foreach(a, i, v)
		if (e->nargs < sizeof(e->args) / sizeof(e->args[0]) && json_string_value(v))
			e->args[e->nargs++] = strtoull(json_string_value(v), NULL, 0);
	json_decref(a);
}

static int timeline_cmp(const void *a, const void *b)
{
	const struct an_timeline_entry *x = a, *y = b;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The events of every ring, and the timeline they make, merged by order. */
static int load_events(struct rep_reader *r, struct analysis *an, const char *fp)
{
	json_t *rows = table_rows(r, fp, "recorder_events",
				  "recorder_idx, event_order, timestamp, location, function, format, message,"
				  " args, strings_read, in_flight", "recorder_idx, idx"), *q;
	size_t k, n;
	if (!rows)
		return -1;
	n = json_array_size(rows);
	/* counted first: each ring's array is allocated once */
	json_array_foreach(rows, k, q)
		if ((size_t)cell_int(q, 0) < an->nrecorders)
			an->recorders[cell_int(q, 0)].nevents++;
	an->timeline = calloc(n + 1, sizeof(*an->timeline));
	for (size_t i = 0; an->timeline && i < an->nrecorders; i++) {
		an->recorders[i].events = calloc(an->recorders[i].nevents + 1, sizeof(struct an_event));
		an->recorders[i].nevents = 0;
	}
	json_array_foreach(rows, k, q) {
		size_t ri = (size_t)cell_int(q, 0);
		struct an_recorder *rec = ri < an->nrecorders ? &an->recorders[ri] : NULL;
		if (!an->timeline || !rec || !rec->events)
			continue;   /* a ring without its array keeps nevents 0 */
		struct an_event *e = &rec->events[rec->nevents];
		e->order = (uint64_t)cell_int(q, 1);
		e->timestamp = (uint64_t)cell_int(q, 2);
		e->location = cell_dup(q, 3);
		e->function = cell_dup(q, 4);
		e->format = cell_dup(q, 5);
		e->message = cell_dup(q, 6);
		event_args(e, cell_text(q, 7));
		e->strings_read = (unsigned)cell_int(q, 8);
		e->in_flight = cell_int(q, 9) != 0;
		an->timeline[an->ntimeline++] = (struct an_timeline_entry){e->order, e->timestamp, ri,
									   rec->nevents++};
	}
	json_decref(rows);
	if (!an->timeline) {
		for (size_t i = 0; i < an->nrecorders; i++)
			an->recorders[i].nevents = 0;
		return -1;
	}
	qsort(an->timeline, an->ntimeline, sizeof(*an->timeline), timeline_cmp);
	return 0;
}

static int load_recorders(struct rep_reader *r, struct analysis *an, const char *fp)
{
	json_t *rows = table_rows(r, fp, "recorders",
				  "name, layout, address, size, writer, reader, committed, overflow, recovered,"
				  " in_flight, overwritten", "idx"), *q;
	size_t k;
	if (!rows)
		return -1;
	if (!(an->recorders = calloc(json_array_size(rows) + 1, sizeof(*an->recorders)))) {
		json_decref(rows);
		return -1;
	}
	json_array_foreach(rows, k, q) {
		struct an_recorder *rec = &an->recorders[an->nrecorders++];
		rec->name = cell_dup(q, 0);
		rec->layout = cell_dup(q, 1);
		rec->address = (uint64_t)cell_int(q, 2);
		rec->size = (uint64_t)cell_int(q, 3);
		rec->writer = (uint64_t)cell_int(q, 4);
		rec->reader = (uint64_t)cell_int(q, 5);
		rec->commit = (uint64_t)cell_int(q, 6);
		rec->overflow = (uint64_t)cell_int(q, 7);
		rec->recovered = (uint64_t)cell_int(q, 8);
		rec->in_flight = (uint64_t)cell_int(q, 9);
		rec->overwritten = (uint64_t)cell_int(q, 10);
	}
	json_decref(rows);
	return an->nrecorders ? load_events(r, an, fp) : 0;
}

static int load_warnings(struct rep_reader *r, struct analysis *an, const char *fp)
{
	json_t *rows = table_rows(r, fp, "warnings", "message", "idx"), *q;
	size_t k;
	if (!rows)
		return -1;
	an->warnings = calloc(json_array_size(rows) + 1, sizeof(*an->warnings));
	json_array_foreach(rows, k, q)
		if (an->warnings)
			an->warnings[an->nwarnings++] = cell_dup(q, 0);
	json_decref(rows);
	return an->warnings ? 0 : -1;
}

int rep_stored_core_load(struct rep_reader *r, const char *fingerprint, struct rep_stored_core **out)
{
	char sql[1024];
	json_t *rows = NULL;
	struct rep_stored_core *c = calloc(1, sizeof(*c));
	int rc = -1;
	if (!c || !(c->an = an_analysis_create()))
		goto out;
	snprintf(sql, sizeof(sql), "SELECT %s FROM cores%s", cores_columns,
		 rep_reader_clickhouse(r) ? " FINAL WHERE fingerprint = %1$s LIMIT 1"
					  : " WHERE fingerprint = ?1");
	if (rep_reader_rows(r, sql, fingerprint, &rows) != 0)
		goto out;
	if (json_array_size(rows) == 0) {
		rc = 1;
		goto out;
	}
	_Static_assert(CORES_COLUMNS == 38, "cores_columns");
	load_core_row(c, json_array_get(rows, 0));
	if (load_modules(r, c->an, fingerprint) == 0 && load_threads(r, c->an, fingerprint) == 0 &&
	    load_tasks(r, c, fingerprint) == 0 && load_suspended(r, c->an, fingerprint) == 0 &&
	    load_recorders(r, c->an, fingerprint) == 0 && load_warnings(r, c->an, fingerprint) == 0 &&
	    load_blocked(r, c, fingerprint) == 0 && load_deadlocks(r, c->an, fingerprint) == 0)
		rc = 0;
out:
	json_decref(rows);
	if (rc == 0) {
		*out = c;
		return 0;
	}
	rep_stored_core_destroy(c);
	return rc;
}

void rep_stored_core_destroy(struct rep_stored_core *c)
{
	if (!c)
		return;
	an_analysis_destroy(c->an);
	for (size_t i = 0; i < c->nstrings; i++)
		free(c->strings[i]);
	free(c->strings);
	free(c);
}
