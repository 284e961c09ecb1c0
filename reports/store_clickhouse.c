/* The ClickHouse store's writer: analyses as rows of every table, held in
 * batches of many cores and sent one insert per table (reports/
 * store_clickhouse.h); the schema is store_ch_schema.c's. */
#include "store_ch_internal.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "../base/array.h"
#include "bytes.h"

/* A batch is also sent once its rows pass this size. */
#define CH_BATCH_BYTES (16u << 20)

/* Term sets known at most, then all forgotten (struct ch_known_sets). */
#define CH_KNOWN_SETS 8192

/* Microseconds since the epoch. */
uint64_t rep_chs_wall_us(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}

/* Microseconds since the epoch, strictly increasing within the store: the
 * version that makes a newer cores or ingest_errors row replace an older. */
uint64_t rep_chs_next_version(struct rep_ch_store *st)
{
	uint64_t v = rep_chs_wall_us();
	st->last_version = v > st->last_version ? v : st->last_version + 1;
	return st->last_version;
}

/* ---- Term sets known ------------------------------------------------ */

/* The first 64 bits of KEY (hex digits). */
static uint64_t set_hash(const char *key)
{
	uint64_t h = 0;
	for (size_t i = 0; i < 16 && key[i]; i++)
		h = h << 4 | (uint64_t)(key[i] >= 'a' ? key[i] - 'a' + 10 : key[i] - '0');
	return h;
}

/* The slot of KEY (hash H) in S: its own, or the free one it would take. */
static struct ch_set_slot *set_slot(const struct ch_known_sets *s, const char *key, uint64_t h)
{
	size_t i = base_hash_slot(h, s->cap);
	while (s->slots[i].key[0] && strcmp(s->slots[i].key, key) != 0)
		i = (i + 1) & (s->cap - 1);
	return &s->slots[i];
}

static bool set_known(const struct ch_known_sets *s, const char *key)
{
	return s->cap && set_slot(s, key, set_hash(key))->key[0];
}

void rep_chs_sets_forget(struct ch_known_sets *s)
{
	if (s->slots)
		memset(s->slots, 0, s->cap * sizeof(*s->slots));
	s->used = 0;
}

/* KEY's names are stored, or in the batch.  Best effort: out of memory,
 * it is not remembered (and written again). */
void rep_chs_set_remember(struct ch_known_sets *s, const char *key)
{
	if (set_known(s, key))
		return;
	if (s->used >= CH_KNOWN_SETS)
		rep_chs_sets_forget(s);
	if (!base_table_reserve(&s->slots, &s->cap, s->used, sizeof(*s->slots)))
		return;
	const uint64_t h = set_hash(key);
	struct ch_set_slot *e = set_slot(s, key, h);
	e->hash = h;
	snprintf(e->key, sizeof(e->key), "%s", key);
	s->used++;
}

/* ---- Writing --------------------------------------------------------- */

int rep_ch_store_open(const char *url, struct rep_ch_store **out, char *why, size_t whylen)
{
	struct rep_ch_store *st = calloc(1, sizeof(*st));
	char *reply = NULL, *sql = NULL;
	if (!st) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	if (rep_ch_open(url, &st->ch, why, whylen) != 0)
		goto fail;
	sql = printf_sql("EXISTS TABLE %s.cores", rep_ch_database(st->ch));
	if (!sql || rep_ch_run_retry(st->ch, sql, NULL, 0, NULL, why, whylen) != 0 ||
	    rep_ch_run(st->ch, sql, NULL, 0, NULL, &reply, why, whylen) != 0)
		goto fail;
	if (reply[0] != '1') {
		snprintf(why, whylen, "%s: no crash store there: run asyncore store init --db %s", url,
			 url);
		goto fail;
	}
	free(reply);
	free(sql);
	*out = st;
	return 0;
fail:
	free(reply);
	free(sql);
	rep_ch_close(st->ch);
	free(st);
	return -1;
}

/* Append OBJ (taken) to ROWS as one JSONEachRow line. */
static int dump_line(const char *buffer, size_t size, void *arg)
{
	struct ch_rows *r = arg;
	if (r->len + size + 2 > r->cap) {
		size_t cap = (r->len + size + 2) * 2;
		char *p = realloc(r->data, cap);
		if (!p)
			return -1;
		r->data = p;
		r->cap = cap;
	}
	memcpy(r->data + r->len, buffer, size);
	r->len += size;
	return 0;
}

int rep_chs_add_row(struct ch_rows *r, json_t *obj)
{
	size_t mark = r->len;
	int rc = obj && json_dump_callback(obj, dump_line, r, JSON_COMPACT) == 0 &&
			 dump_line("\n", 1, r) == 0 ? 0 : -1;
	json_decref(obj);
	if (rc != 0)
		r->len = mark;
	else
		r->count++;
	return rc;
}

/* Column values: an integer (64-bit values as their two's complement, as
 * SQLite holds them), null when unknown, text made valid UTF-8. */
static json_t *j_int(int64_t v)
{
	return json_integer((json_int_t)v);
}

static json_t *j_u64(uint64_t v)
{
	return j_int((int64_t)v);
}

static json_t *j_opt(bool known, uint64_t v)
{
	return known ? j_u64(v) : json_null();
}

/* An object of N columns: NAMES[i] = VALUES[i] (taken); NULL when a value
 * is missing (out of memory). */
static json_t *row_of(const char *const *names, json_t **values, size_t n)
{
	json_t *obj = json_object();
	bool ok = obj != NULL;
	for (size_t i = 0; i < n; i++) {
		if (ok && values[i])
			ok = json_object_set_new(obj, names[i], values[i]) == 0;
		else
			json_decref(values[i]);
		ok = ok && values[i];
	}
	if (!ok) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

/* One row of table ROWS: the columns NAMES, one value (taken) each. */
#define ROW(rows, names, ...)                                                                 \
	add_values(rows, names, sizeof(names) / sizeof((names)[0]), (json_t *[]){__VA_ARGS__},   \
		   sizeof((json_t *[]){__VA_ARGS__}) / sizeof(json_t *))

static int add_values(struct ch_rows *rows, const char *const *names, size_t ncols, json_t **values,
		      size_t n)
{
	assert(ncols == n);
	return rep_chs_add_row(rows, row_of(names, values, ncols < n ? ncols : n));
}

static const char *const cores_cols[] = {
	"fingerprint", "sha256", "path", "file_size", "size", "crashed_at", "analysed_at",
	"analyzer_version", "executable", "build_id", "pid", "uid", "signal", "signal_name", "code",
	"code_name", "fault_address", "crashing_tid", "abort_message", "signature", "signature_hash",
	"async_key", "nthreads", "nframes", "nwarnings", "boot_id", "coredump_uid", "unit", "cmdline",
	"cause_kind", "cause_summary", "version", "arch", "caught_signal", "caught_signal_name",
	"caught_code", "caught_code_name", "caught_address", "handled_by", "handler_action",
	"go_crash", "go_signal", "go_signal_name", "go_message", "file_mtime", "term_set",
};

static const char *const term_cols[] = {"name", "term_set"};

/* The term_names rows of the set KEY, its N names, into the batch unless
 * its names are known to be stored or in the batch already. */
int rep_chs_add_term_names(struct rep_ch_store *st, const char *const *names, size_t n,
			   const char *key)
{
	if (set_known(&st->known, key))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (ROW(&st->rows[T_TERMS], term_cols, rep_json_text(names[i]), json_string(key)) != 0)
			return -1;
	return 0;
}

/* AN's term set into KEY, its names (unless known) into the batch.  The set
 * is named after the names as the store holds them (rep_utf8()), as
 * rep_chs_fill_term_sets() reads them back. */
static int add_terms(struct rep_ch_store *st, const struct analysis *an, char key[REP_TERM_SET_KEY])
{
	const char **names = NULL;
	char **owned = NULL;
	size_t n = 0, nowned = 0, cap = 0;
	int rc = -1;
	if (rep_core_terms(an, &names, &n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		char *copy = NULL;
		const char *valid = rep_utf8(names[i], &copy);
		if (!valid)
			goto out;
		if (copy) {
			char **slot = base_array_push(&owned, &nowned, &cap, sizeof(*owned));
			if (!slot) {
				free(copy);
				goto out;
			}
			*slot = copy;
		}
		names[i] = valid;
	}
	if (nowned)   /* made valid: their order and repeats again */
		rep_terms_unique(names, &n);
	rep_term_set_key(names, n, key);
	rc = rep_chs_add_term_names(st, names, n, key);
out:
	for (size_t i = 0; i < nowned; i++)
		free(owned[i]);
	free(owned);
	free(names);
	return rc;
}

static int add_core(struct rep_ch_store *st, const struct analysis *an,
		    const char key[REP_TERM_SET_KEY])
{
	char now[32], mtime[32];
	const struct rep_caught_columns c = rep_core_caught(an);
	const struct rep_go_columns g = rep_core_go(an);
	rep_store_time((int64_t)time(NULL), now);
	return ROW(&st->rows[T_CORES], cores_cols,
		   rep_json_text(an->core_fingerprint), rep_json_text(an->core_sha256),
		   rep_json_text(an->core_path ? an->core_path : ""), j_u64(an->core_file_size),
		   j_u64(an->core_size), rep_json_text(an->crashed_at), rep_json_text(now),
		   rep_json_text(AN_VERSION), rep_json_text(an->executable), rep_json_text(an->build_id),
		   j_opt(an->has_pid, (uint64_t)(int64_t)an->pid), j_opt(an->has_uid, an->uid),
		   j_opt(an->has_signal, (uint64_t)(int64_t)an->signo), rep_json_text(an->signal_name),
		   j_opt(an->has_code, (uint64_t)(int64_t)an->code), rep_json_text(an->code_name),
		   j_opt(an->has_fault_address, an->fault_address), j_int(an->crashing_tid),
		   rep_json_text(an->abort_message), rep_json_text(an->signature),
		   rep_json_text(an->signature_hash), j_opt(an->async_key_found, an->async_key),
		   j_u64(an->nthreads), j_u64(rep_total_frames(an)), j_u64(an->nwarnings),
		   rep_json_text(an->boot_id), j_opt(an->has_coredump_uid, an->coredump_uid),
		   rep_json_text(an->unit), rep_json_text(an->cmdline),
		   rep_json_text(an->cause.summary ? an_cause_kind_name(an->cause.kind) : NULL),
		   rep_json_text(an->cause.summary), j_u64(rep_chs_next_version(st)),
		   rep_json_text(rep_core_arch(an)), j_opt(c.has_signal, (uint64_t)c.signal),
		   rep_json_text(c.signal_name), j_opt(c.has_code, (uint64_t)c.code),
		   rep_json_text(c.code_name), j_opt(c.has_address, c.address),
		   rep_json_text(c.handled_by), rep_json_text(c.action), rep_json_text(g.crash),
		   j_opt(g.has_signal, (uint64_t)g.signal), rep_json_text(g.signal_name),
		   rep_json_text(g.message), rep_json_text(rep_core_file_mtime(an, mtime)),
		   json_string(key));
}

/* A frame's columns: a thread's and a task's frames have all of them, a
 * suspended chain's the first NSFRAME_COLS (as
 * SQLite's insert_frame takes the leading ones); the second names the
 * owner. */
static const char *const frame_cols[] = {
	"fingerprint", "thread_idx", "idx", "kind", "pc", "function", "function_offset", "module",
	"module_offset", "file", "line", "inlined", "inline_depth", "tailcall", "display", "args",
	"activation", "cfa", "seam", "role", "runtime", "detail",
};
enum { NFRAME_COLS = sizeof(frame_cols) / sizeof(frame_cols[0]), NTFRAME_COLS = NFRAME_COLS,
       NSFRAME_COLS = 16 };

static const char *const tframe_cols[NTFRAME_COLS] = {
	"fingerprint", "task_idx", "idx", "kind", "pc", "function", "function_offset", "module",
	"module_offset", "file", "line", "inlined", "inline_depth", "tailcall", "display", "args",
	"activation", "cfa", "seam", "role", "runtime", "detail",
};

static const char *const sframe_cols[NSFRAME_COLS] = {
	"fingerprint", "chain_idx", "idx", "kind", "pc", "function", "function_offset", "module",
	"module_offset", "file", "line", "inlined", "inline_depth", "tailcall", "display", "args",
};

/* The frames of thread, task or chain OWNER into ROWS, whose table has the
 * NCOLS columns NAMES.  They keep their true index, which jumps past a
 * recursion's run (GAP; NULL: none). */
static int add_frames(struct ch_rows *rows, const char *const *names, size_t ncols, const char *fp,
		      size_t owner, const struct an_frame *fs, size_t n, const struct an_index_gap *gap)
{
	for (size_t j = 0; j < n; j++) {
		const struct an_frame *f = &fs[j];
		char *args = rep_frame_args_json(f);
		json_t *argv = args ? json_string(args) : f->has_args ? NULL : json_null();
		free(args);
		json_t *v[NFRAME_COLS] = {
			json_string(fp), j_u64(owner), j_u64(an_index_gap_index(gap, j)),
			json_string(an_frame_kind_name(f->kind)), j_opt(!AN_FRAME_IS_RUNTIME(f), f->pc),
			rep_json_text(f->function), j_opt(f->has_offset, f->offset),
			rep_json_text(f->module), j_opt(f->has_module_offset, f->module_offset),
			rep_json_text(f->file), j_opt(f->line > 0, (uint64_t)f->line), j_int(f->inlined),
			j_int(f->inline_depth), j_int(f->tailcall), rep_json_text(f->display), argv,
			j_int(f->activation), j_opt(f->cfa != 0, f->cfa), j_int(f->seam),
			rep_json_text(an_frame_role_name(f->role)), rep_json_text(f->runtime),
			rep_json_text(f->detail),
		};
		for (size_t k = ncols; k < NFRAME_COLS; k++)
			json_decref(v[k]);
		if (rep_chs_add_row(rows, row_of(names, v, ncols)) != 0)
			return -1;
	}
	return 0;
}

int rep_chs_add_frames_of(struct rep_ch_store *st, enum ch_table t, const char *fp, size_t owner,
			  const struct an_frame *fs, size_t n, const struct an_index_gap *gap)
{
	if (t == T_TFRAMES)
		return add_frames(&st->rows[t], tframe_cols, NTFRAME_COLS, fp, owner, fs, n, gap);
	if (t == T_SFRAMES)
		return add_frames(&st->rows[t], sframe_cols, NSFRAME_COLS, fp, owner, fs, n, gap);
	return add_frames(&st->rows[T_FRAMES], frame_cols, NFRAME_COLS, fp, owner, fs, n, gap);
}

static const char *const thread_cols[] = {
	"fingerprint", "idx", "tid", "crashing", "rip", "rsp", "rbp", "fs_base", "nframes",
	"unwind_error", "async_root",
};
static const char *const root_cols[] = {"fingerprint", "thread_idx", "tid", "address"};

static int add_threads(struct rep_ch_store *st, const char *fp, const struct analysis *an)
{
	for (size_t i = 0; i < an->nthreads; i++) {
		const struct an_thread *t = &an->threads[i];
		const struct an_index_gap gap = an_thread_index_gap(t);
		if (ROW(&st->rows[T_THREADS], thread_cols, json_string(fp), j_u64(i), j_int(t->tid),
			j_int(t->crashing), j_u64(t->pc), j_u64(t->sp), j_u64(t->fp), j_u64(t->tp),
			j_u64(t->nframes),
			rep_json_text(t->unwind_error), j_opt(t->async_root != 0, t->async_root)) != 0 ||
		    add_frames(&st->rows[T_FRAMES], frame_cols, NFRAME_COLS, fp, i, t->frames,
			       t->nframes, &gap) != 0)
			return -1;
		if (t->async_root && ROW(&st->rows[T_ROOTS], root_cols, json_string(fp), j_u64(i),
					 j_int(t->tid), j_u64(t->async_root)) != 0)
			return -1;
	}
	return 0;
}

static const char *const module_cols[] = {
	"fingerprint", "idx", "path", "start_addr", "end_addr", "build_id", "debuginfo",
};
static const char *const suspended_cols[] = {"fingerprint", "idx", "leaf", "nframes"};
static const char *const warning_cols[] = {"fingerprint", "idx", "message"};

static int add_modules_suspended_warnings(struct rep_ch_store *st, const char *fp,
					  const struct analysis *an)
{
	for (size_t i = 0; i < an->nmodules; i++) {
		const struct an_module *m = &an->modules[i];
		if (ROW(&st->rows[T_MODULES], module_cols, json_string(fp), j_u64(i),
			rep_json_text(m->path), j_u64(m->start), j_u64(m->end),
			rep_json_text(m->build_id), rep_json_text(m->debuginfo)) != 0)
			return -1;
	}
	for (size_t i = 0; i < an->nsuspended; i++) {
		const struct an_suspended *s = &an->suspended[i];
		if (ROW(&st->rows[T_SUSPENDED], suspended_cols, json_string(fp), j_u64(i),
			j_u64(s->leaf), j_u64(s->nframes)) != 0 ||
		    add_frames(&st->rows[T_SFRAMES], sframe_cols, NSFRAME_COLS, fp, i, s->frames,
			       s->nframes, NULL) != 0)
			return -1;
	}
	for (size_t i = 0; i < an->nwarnings; i++)
		if (ROW(&st->rows[T_WARNINGS], warning_cols, json_string(fp), j_u64(i),
			rep_json_text(an->warnings[i] ? an->warnings[i] : "")) != 0)
			return -1;
	return 0;
}

static const char *const task_cols[] = {
	"fingerprint", "idx", "runtime", "task_id", "state", "wait_kind", "wait_address",
	"wait_target", "tid", "fn", "fn_address", "address", "nframes", "unwind_error",
	"created_by", "created_file", "created_line", "wait_since", "locked", "name",
};

static int add_tasks(struct rep_ch_store *st, const char *fp, const struct analysis *an)
{
	for (size_t i = 0; i < an->ntasks; i++) {
		const struct an_task *t = &an->tasks[i];
		if (ROW(&st->rows[T_TASKS], task_cols, json_string(fp), j_u64(i),
			rep_json_text(t->runtime), j_u64(t->id),
			json_string(an_task_state_name(t->state)), rep_json_text(t->wait_kind),
			j_opt(t->has_wait_address, t->wait_address),
			j_opt(t->has_wait_target, t->wait_target),
			j_opt(t->has_tid, (uint64_t)(int64_t)t->tid), rep_json_text(t->fn),
			j_opt(t->fn_address != 0, t->fn_address), j_u64(t->address), j_u64(t->nframes),
			rep_json_text(t->unwind_error), rep_json_text(t->created_by),
			rep_json_text(t->created_file),
			j_opt(t->created_file && t->created_line > 0, (uint64_t)t->created_line),
			j_opt(t->has_wait_since, t->wait_since), json_integer(t->locked),
			rep_json_text(t->name)) != 0 ||
		    add_frames(&st->rows[T_TFRAMES], tframe_cols, NTFRAME_COLS, fp, i, t->frames,
			       t->nframes, NULL) != 0)
			return -1;
	}
	return 0;
}

static const char *const blocked_cols[] = {
	"fingerprint", "waiter", "waiter_idx", "tid", "kind", "object", "object_name", "owner_tid",
	"owner_gone", "owner_task", "syscall", "fd", "fd_target", "since", "via", "function",
	"summary",
};
static const char *const deadlock_cols[] = {"fingerprint", "idx", "summary", "nmembers"};
static const char *const member_cols[] = {"fingerprint", "deadlock_idx", "pos", "tid", "object"};

/* What each thread and task waits for, and the wait-for graph's cycles. */
static int add_hang(struct rep_ch_store *st, const char *fp, const struct analysis *an)
{
	struct rep_blocked_columns b;
	for (size_t k = 0; k < an->nthreads + an->ntasks; k++)
		if (rep_blocked_row(an, k, &b) &&
		    ROW(&st->rows[T_BLOCKED], blocked_cols, json_string(fp), json_string(b.waiter),
			j_u64(b.waiter_idx), j_opt(b.has_tid, (uint64_t)(int64_t)b.tid),
			rep_json_text(b.kind ? b.kind : ""), j_opt(b.has_object, b.object),
			rep_json_text(b.object_name),
			j_opt(b.has_owner_tid, (uint64_t)(int64_t)b.owner_tid), j_int(b.owner_gone),
			j_opt(b.has_owner_task, b.owner_task), rep_json_text(b.syscall),
			j_opt(b.has_fd, (uint64_t)b.fd), rep_json_text(b.fd_target),
			j_opt(b.has_since, b.since), rep_json_text(b.via), rep_json_text(b.function),
			rep_json_text(b.summary)) != 0)
			return -1;
	for (size_t i = 0; i < an->ndeadlocks; i++) {
		const struct an_deadlock *d = &an->deadlocks[i];
		if (ROW(&st->rows[T_DEADLOCKS], deadlock_cols, json_string(fp), j_u64(i),
			rep_json_text(d->summary), j_u64(d->n)) != 0)
			return -1;
		for (size_t k = 0; k < d->n; k++)
			if (ROW(&st->rows[T_MEMBERS], member_cols, json_string(fp), j_u64(i), j_u64(k),
				j_int(d->threads[k]), j_opt(d->objects[k] != 0, d->objects[k])) != 0)
				return -1;
	}
	return 0;
}

static const char *const recorder_cols[] = {
	"fingerprint", "idx", "name", "layout", "address", "size", "writer", "reader", "committed",
	"overflow", "recovered", "in_flight", "overwritten", "nevents",
};
static const char *const event_cols[] = {
	"fingerprint", "recorder_idx", "idx", "event_order", "timestamp", "location", "function",
	"format", "message", "args", "strings_read", "in_flight",
};

static int add_recorders(struct rep_ch_store *st, const char *fp, const struct analysis *an)
{
	char args[REP_EVENT_ARGS_MAX];
	for (size_t i = 0; i < an->nrecorders; i++) {
		const struct an_recorder *r = &an->recorders[i];
		if (ROW(&st->rows[T_RECORDERS], recorder_cols, json_string(fp), j_u64(i),
			rep_json_text(r->name), rep_json_text(r->layout), j_u64(r->address),
			j_u64(r->size), j_u64(r->writer), j_u64(r->reader), j_u64(r->commit),
			j_u64(r->overflow), j_u64(r->recovered), j_u64(r->in_flight),
			j_u64(r->overwritten), j_u64(r->nevents)) != 0)
			return -1;
		for (size_t k = 0; k < r->nevents; k++) {
			const struct an_event *e = &r->events[k];
			rep_event_args_json(e, args, sizeof(args));
			if (ROW(&st->rows[T_EVENTS], event_cols, json_string(fp), j_u64(i), j_u64(k),
				j_u64(e->order), j_u64(e->timestamp), rep_json_text(e->location),
				rep_json_text(e->function), rep_json_text(e->format),
				rep_json_text(e->message), json_string(args), j_int(e->strings_read),
				j_int(e->in_flight)) != 0)
				return -1;
		}
	}
	return 0;
}

static bool is_pending(const struct rep_ch_store *st, const char *fingerprint)
{
	for (size_t i = 0; i < st->npending; i++)
		if (strcmp(st->pending[i].fingerprint, fingerprint) == 0)
			return true;
	return false;
}

static size_t batch_bytes(const struct rep_ch_store *st)
{
	size_t n = 0;
	for (int t = 0; t < T_COUNT; t++)
		n += st->rows[t].len;
	return n;
}

static void rows_reset(struct rep_ch_store *st)
{
	for (int t = 0; t < T_COUNT; t++)
		st->rows[t].len = st->rows[t].count = 0;
}

static void pending_clear(struct rep_ch_store *st)
{
	for (size_t i = 0; i < st->npending; i++) {
		free(st->pending[i].path);
		free(st->pending[i].fingerprint);
	}
	st->npending = 0;
	st->nerrors = 0;
}

/* ---- ingest_errors --------------------------------------------------- */

static const char *const error_cols[] = {
	"ident", "fingerprint", "path", "size", "reason", "attempts", "first_at", "last_at",
	"resolved", "version",
};

/* Earlier errors (first time, attempts) of IDENT, so a new row carries
 * them on; 0 and no row is fine.  -1 when the store cannot be read. */
static int earlier_error(struct rep_ch_store *st, const char *ident, char first_at[32],
			 int64_t *attempts)
{
	char *quoted = rep_ch_quote(ident), *sql = NULL, why[256];
	json_t *res = NULL;
	int rc = -1;
	*attempts = 0;
	if (quoted)
		sql = printf_sql("SELECT first_at, attempts FROM %s.ingest_errors FINAL WHERE ident = %s"
				 " AND resolved = 0", rep_ch_database(st->ch), quoted);
	if (sql && rep_ch_select(st->ch, sql, false, &res, why, sizeof(why)) == 0) {
		json_t *row = json_array_get(json_object_get(res, "data"), 0);
		if (row) {
			snprintf(first_at, 32, "%s", json_string_value(json_array_get(row, 0)) ? json_string_value(json_array_get(row, 0)) : "");
			*attempts = json_integer_value(json_array_get(row, 1));
		}
		rc = 0;
	}
	json_decref(res);
	free(sql);
	free(quoted);
	return rc;
}

static int add_error(struct rep_ch_store *st, const struct rep_core_id *id, const char *reason,
		     bool resolved, bool lookup, char *why, size_t whylen);

/* The core ID, known by its fingerprint now, may have failed before under
 * its path alone (its worker lost before it was read): that error is the
 * same core's, and ends. */
static int resolve_path_error(struct rep_ch_store *st, const struct rep_core_id *id, char *why,
			      size_t whylen)
{
	struct rep_core_id by_path = {id->path, NULL, 0};
	char *ident = rep_error_ident(&by_path), first_at[32] = "";
	int64_t attempts = 0;
	if (!ident) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	earlier_error(st, ident, first_at, &attempts);   /* best effort */
	free(ident);
	return attempts > 0 ? add_error(st, &by_path, "", true, false, why, whylen) : 0;
}

/* An ingest_errors row for ID into the batch (RESOLVED: the core is now
 * stored, which ends the error; LOOKUP: carry on the attempts of an earlier
 * row, which asks the store). */
static int add_error(struct rep_ch_store *st, const struct rep_core_id *id, const char *reason,
		     bool resolved, bool lookup, char *why, size_t whylen)
{
	char now[32], first_at[32] = "", *ident = rep_error_ident(id);
	int64_t attempts = 0;
	rep_store_time((int64_t)time(NULL), now);
	if (!ident) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	if (!resolved && lookup)
		earlier_error(st, ident, first_at, &attempts);   /* best effort: a new count */
	if (!resolved && lookup && id->fingerprint && resolve_path_error(st, id, why, whylen) != 0) {
		free(ident);
		return -1;
	}
	int rc = ROW(&st->rows[T_ERRORS], error_cols, rep_json_text(ident),
		     rep_json_text(id->fingerprint), rep_json_text(id->path),
		     j_opt(id->fingerprint != NULL, id->file_size), rep_json_text(reason),
		     j_int(attempts + 1), rep_json_text(first_at[0] ? first_at : now),
		     rep_json_text(now), j_int(resolved), j_u64(rep_chs_next_version(st)));
	free(ident);
	if (rc != 0)
		snprintf(why, whylen, "out of memory");
	else
		st->nerrors++;
	return rc;
}

/* Append "'TEXT'" (quoted), after a comma unless it is the first, to the
 * malloc'd list *LIST (*LEN long); -1 on out-of-memory. */
static int list_add(char **list, size_t *len, const char *text)
{
	char *q = rep_ch_quote(text);
	size_t n = q ? strlen(q) : 0;
	char *p = q ? realloc(*list, *len + n + 2) : NULL;
	if (!p) {
		free(q);
		return -1;
	}
	*len += (size_t)sprintf(p + *len, "%s%s", *len ? "," : "", q);
	*list = p;
	free(q);
	return 0;
}

/* The batch's cores that have an unresolved error, under their fingerprint
 * or (failed before they were read) their path: each gets a resolved row,
 * written after its cores row. */
static int resolve_errors(struct rep_ch_store *st)
{
	char *list = NULL, *sql = NULL, why[256];
	size_t len = 0;
	json_t *res = NULL;
	int rc = -1;
	for (size_t i = 0; i < st->npending; i++) {
		struct rep_core_id by_path = {st->pending[i].path, NULL, 0};
		char *path_ident = rep_error_ident(&by_path);
		int added = path_ident && list_add(&list, &len, st->pending[i].fingerprint) == 0 &&
			    list_add(&list, &len, path_ident) == 0;
		free(path_ident);
		if (!added)
			goto out;
	}
	sql = printf_sql("SELECT ident, path FROM %s.ingest_errors FINAL WHERE resolved = 0 AND"
			 " ident IN (%s)", rep_ch_database(st->ch), list);
	if (!sql || rep_ch_select(st->ch, sql, false, &res, why, sizeof(why)) != 0)
		goto out;
	json_t *data = json_object_get(res, "data"), *row;
	size_t k;
	json_array_foreach(data, k, row) {
		const char *ident = json_string_value(json_array_get(row, 0));
		struct rep_core_id id = {json_string_value(json_array_get(row, 1)), ident, 0};
		if (ident && strncmp(ident, "path:", 5) == 0)
			id.fingerprint = NULL;   /* its ident is its path's */
		if (ident && id.path && add_error(st, &id, "", true, false, why, sizeof(why)) != 0)
			goto out;
	}
	rc = 0;
out:
	json_decref(res);
	free(sql);
	free(list);
	return rc;
}

/* ---- Batches --------------------------------------------------------- */

int rep_chs_insert_rows(struct rep_ch_store *st, enum ch_table t, char *why, size_t whylen)
{
	struct ch_rows *r = &st->rows[t];
	if (r->count == 0)
		return 0;
	char *table = table_name(st->ch, rep_chs_tables[t].name, st->local ? st->local : ""), *sql = NULL;
	int rc = -1;
	if (table)
		sql = printf_sql("INSERT INTO %s FORMAT JSONEachRow", table);
	if (!sql)
		snprintf(why, whylen, "out of memory");
	else
		rc = rep_ch_run_retry(st->ch, sql, r->data, r->len, CH_INSERT_SETTINGS, why, whylen);
	free(sql);
	free(table);
	return rc;
}

/* The batch's cores that could not be stored: reported, counted, and
 * recorded in ingest_errors if the store takes one more try, with the
 * batch's own ingest_errors rows (the failures of other cores). */
static void report_lost(struct rep_ch_store *st, const char *reason)
{
	char why[512];
	for (int t = 0; t < T_COUNT; t++)
		if (t != T_ERRORS)
			st->rows[t].len = st->rows[t].count = 0;
	for (size_t i = 0; i < st->npending; i++) {
		const struct ch_pending *p = &st->pending[i];
		struct rep_core_id id = {p->path, p->fingerprint, p->file_size};
		char line[600];
		snprintf(line, sizeof(line), "not stored: %s", reason);
		rep_say(stderr, p->path, line);
		add_error(st, &id, reason, false, false, why, sizeof(why));
	}
	st->lost += st->npending;
	rep_chs_sets_forget(&st->known);   /* the batch's sets were not written */
	/* one try: the store just failed the retries */
	char *table = table_name(st->ch, "ingest_errors", ""), *sql = NULL;
	struct ch_rows *r = &st->rows[T_ERRORS];
	if (table && (sql = printf_sql("INSERT INTO %s FORMAT JSONEachRow", table)))
		rep_ch_run(st->ch, sql, r->data, r->len, CH_INSERT_SETTINGS, NULL, why, sizeof(why));
	free(sql);
	free(table);
	rows_reset(st);
	pending_clear(st);
}

/* Send the batch: each table in one insert, children first, cores last,
 * then ingest_errors. */
static int flush(struct rep_ch_store *st)
{
	char why[512];
	if (st->npending == 0 && st->nerrors == 0)
		return 0;
	if (st->npending && resolve_errors(st) != 0) {
		snprintf(why, sizeof(why), "cannot read ingest_errors");
		goto fail;
	}
	for (int t = 0; t < T_COUNT; t++)
		if (rep_chs_insert_rows(st, (enum ch_table)t, why, sizeof(why)) != 0)
			goto fail;
	rows_reset(st);
	pending_clear(st);
	return 0;
fail:
	report_lost(st, why);
	return -1;
}

static enum rep_write_result ch_write(void *backend, const struct analysis *an, char *why,
				      size_t whylen)
{
	struct rep_ch_store *st = backend;
	const char *fp = an->core_fingerprint;
	if (!fp) {
		snprintf(why, whylen, "the analysis has no core fingerprint");
		return REP_WRITE_FAILED;
	}
	if (is_pending(st, fp))
		return REP_WRITE_DUPLICATE;
	struct ch_pending *p = NULL;
	if (st->npending == st->cap) {
		size_t cap = st->cap ? 2 * st->cap : 64;
		struct ch_pending *np = realloc(st->pending, cap * sizeof(*np));
		if (np) {
			st->pending = np;
			st->cap = cap;
		}
	}
	size_t marks[T_COUNT], counts[T_COUNT];
	char key[REP_TERM_SET_KEY];
	for (int t = 0; t < T_COUNT; t++)
		marks[t] = st->rows[t].len, counts[t] = st->rows[t].count;
	if (st->npending < st->cap) {
		p = &st->pending[st->npending];
		p->path = strdup(an->core_path ? an->core_path : "");
		p->fingerprint = strdup(fp);
		p->file_size = an->core_file_size;
	}
	if (!p || !p->path || !p->fingerprint || add_threads(st, fp, an) != 0 ||
	    add_modules_suspended_warnings(st, fp, an) != 0 || add_tasks(st, fp, an) != 0 ||
	    add_recorders(st, fp, an) != 0 || add_hang(st, fp, an) != 0 || add_terms(st, an, key) != 0 ||
	    add_core(st, an, key) != 0) {
		for (int t = 0; t < T_COUNT; t++)   /* none of this core's rows stay */
			st->rows[t].len = marks[t], st->rows[t].count = counts[t];
		if (p) {
			free(p->path);
			free(p->fingerprint);
		}
		snprintf(why, whylen, "out of memory");
		return REP_WRITE_FAILED;
	}
	st->npending++;
	rep_chs_set_remember(&st->known, key);
	if (st->npending >= REP_CH_BATCH_CORES || batch_bytes(st) >= CH_BATCH_BYTES)
		flush(st);   /* a failure is reported and counted by rep_store_close() */
	return REP_WRITE_STORED;
}

static int ch_record_error(void *backend, const struct rep_core_id *id, const char *reason,
			   char *why, size_t whylen)
{
	struct rep_ch_store *st = backend;
	if (add_error(st, id, reason, false, true, why, whylen) != 0)
		return -1;
	if (st->nerrors >= REP_CH_BATCH_CORES)
		flush(st);
	return 0;
}

static int ch_has(void *backend, const char *fingerprint)
{
	struct rep_ch_store *st = backend;
	char *quoted = rep_ch_quote(fingerprint), *sql = NULL, *reply = NULL, why[256];
	int rc = -1;
	if (quoted)
		sql = printf_sql("SELECT count() FROM %s.cores WHERE fingerprint = %s",
				 rep_ch_database(st->ch), quoted);
	if (sql && rep_ch_run(st->ch, sql, NULL, 0, NULL, &reply, why, sizeof(why)) == 0)
		rc = atoi(reply) > 0 ? 1 : 0;
	free(reply);
	free(sql);
	free(quoted);
	return rc;
}

static size_t ch_close(void *backend)
{
	struct rep_ch_store *st = backend;
	flush(st);
	size_t lost = st->lost;
	for (int t = 0; t < T_COUNT; t++)
		free(st->rows[t].data);
	free(st->known.slots);
	pending_clear(st);
	free(st->pending);
	rep_ch_close(st->ch);
	free(st);
	return lost;
}

/* The batch's cores and ingest_errors rows: every flush writes (or loses)
 * them all, so they are the last ones accepted. */
static void ch_pending(void *backend, size_t *held, size_t *lost)
{
	const struct rep_ch_store *st = backend;
	*held = st->npending + st->nerrors;
	*lost = st->lost;
}

const struct rep_store_ops rep_ch_store_ops = {ch_has, ch_write, ch_record_error, ch_close,
					       ch_pending};
