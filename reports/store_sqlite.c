#include "store_sqlite.h"
#include "store_internal.h"
#include "store_rows.h"

#include "../base/array.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bytes.h"

/* How long one connection waits for a lock, and how long a write keeps
 * retrying BEGIN IMMEDIATE after that before it gives up. */
#define REP_BUSY_TIMEOUT_MS 5000
#define REP_RETRY_SECONDS 300


enum {
	Q_HAS, Q_CORE, Q_MODULE, Q_THREAD, Q_FRAME, Q_ROOT, Q_SUSPENDED, Q_SFRAME, Q_RECORDER,
	Q_EVENT, Q_WARNING, Q_CLEAR_ERROR, Q_ERROR, Q_TASK, Q_TFRAME, Q_TERM, Q_SET_STORED, Q_BLOCKED,
	Q_DEADLOCK, Q_MEMBER, Q_COUNT
};

static const char *const rep_queries[Q_COUNT] = {
	[Q_HAS] = "SELECT 1 FROM cores WHERE fingerprint = ?1",
	[Q_CORE] = "INSERT INTO cores (fingerprint, sha256, path, file_size, size, crashed_at,"
		   " analysed_at, analyzer_version, executable, build_id, pid, uid, signal, signal_name,"
		   " code, code_name, fault_address, crashing_tid, abort_message, signature,"
		   " signature_hash, async_key, nthreads, nframes, nwarnings, boot_id, coredump_uid,"
		   " unit, cmdline, cause_kind, cause_summary, arch, caught_signal, caught_signal_name,"
		   " caught_code, caught_code_name, caught_address, handled_by, handler_action, go_crash,"
		   " go_signal, go_signal_name, go_message, file_mtime, term_set) VALUES"
		   " (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19,"
		   " ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36,"
		   " ?37, ?38, ?39, ?40, ?41, ?42, ?43, ?44, ?45)"
		   " ON CONFLICT (fingerprint) DO NOTHING",
	[Q_MODULE] = "INSERT INTO modules VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[Q_THREAD] = "INSERT INTO threads VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
	[Q_FRAME] = "INSERT INTO frames (core_id, thread_idx, idx, kind, pc, function,"
		    " function_offset, module, module_offset, file, line, inlined, inline_depth,"
		    " tailcall, display, args, activation, cfa, seam, role, runtime, detail) VALUES (?1,"
		    " ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19,"
		    " ?20, ?21, ?22)",
	[Q_ROOT] = "INSERT INTO async_roots VALUES (?1, ?2, ?3, ?4)",
	[Q_SUSPENDED] = "INSERT INTO suspended VALUES (?1, ?2, ?3, ?4)",
	[Q_SFRAME] = "INSERT INTO suspended_frames (core_id, chain_idx, idx, kind, pc, function,"
		     " function_offset, module, module_offset, file, line, inlined, inline_depth,"
		     " tailcall, display, args) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,"
		     " ?12, ?13, ?14, ?15, ?16)",
	[Q_RECORDER] = "INSERT INTO recorders VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,"
		       " ?12, ?13, ?14)",
	[Q_EVENT] = "INSERT INTO recorder_events VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,"
		    " ?11, ?12)",
	[Q_WARNING] = "INSERT INTO warnings VALUES (?1, ?2, ?3)",
	[Q_CLEAR_ERROR] = "DELETE FROM ingest_errors WHERE fingerprint = ?1 OR ident = 'path:' || ?2",
	[Q_TASK] = "INSERT INTO tasks (core_id, idx, runtime, task_id, state, wait_kind, wait_address,"
		   " wait_target, tid, fn, fn_address, address, nframes, unwind_error, created_by,"
		   " created_file, created_line, wait_since, locked, name) VALUES (?1, ?2, ?3, ?4, ?5,"
		   " ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
	[Q_TFRAME] = "INSERT INTO task_frames (core_id, task_idx, idx, kind, pc, function,"
		     " function_offset, module, module_offset, file, line, inlined, inline_depth,"
		     " tailcall, display, args, activation, cfa, seam, role, runtime, detail) VALUES"
		     " (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,"
		     " ?19, ?20, ?21, ?22)",
	[Q_BLOCKED] = "INSERT INTO blocked_on (core_id, waiter, waiter_idx, tid, kind, object,"
		      " object_name, owner_tid, owner_gone, owner_task, syscall, fd, fd_target, since,"
		      " via, function, summary) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,"
		      " ?12, ?13, ?14, ?15, ?16, ?17)",
	[Q_DEADLOCK] = "INSERT INTO deadlocks VALUES (?1, ?2, ?3, ?4)",
	[Q_MEMBER] = "INSERT INTO deadlock_members VALUES (?1, ?2, ?3, ?4, ?5)",
	[Q_TERM] = "INSERT OR IGNORE INTO term_names VALUES (?1, ?2)",
	/* a set some core holds has its names stored with that core */
	[Q_SET_STORED] = "SELECT 1 FROM cores WHERE term_set = ?1 LIMIT 1",
	[Q_ERROR] = "INSERT INTO ingest_errors (ident, fingerprint, path, size, reason, attempts,"
		    " first_at, last_at) VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, ?6)"
		    " ON CONFLICT (ident) DO UPDATE SET path = excluded.path, reason = excluded.reason,"
		    " attempts = attempts + 1, last_at = excluded.last_at",
};

/* The statements over a frames table that resign runs once per owner
 * (thread, task, chain), prepared on first use and kept with the store. */
enum { FQ_OWNERS, FQ_READ, FQ_DELETE, FQ_COUNT_FRAMES, FQ_COUNT };

struct rep_sqlite {
	sqlite3 *db;
	sqlite3_stmt *q[Q_COUNT];
	sqlite3_stmt *frames_q[REP_FRAMES_TABLES][FQ_COUNT];
	/* FQ_READ's columns as frame fields, looked up when it was prepared */
	enum rep_frame_field *read_fields[REP_FRAMES_TABLES];
};

static bool is_busy(int rc)
{
	rc &= 0xff;
	return rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
}

/* Run SQL, retrying while another connection holds the lock (the busy
 * timeout already waited; this covers the cases SQLite does not wait for,
 * such as switching a fresh database to WAL). */
static int exec_retry(sqlite3 *db, const char *sql)
{
	time_t deadline = time(NULL) + REP_RETRY_SECONDS;
	unsigned delay_us = 1000;
	for (;;) {
		int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
		if (!is_busy(rc) || time(NULL) > deadline)
			return rc;
		struct timespec now;   /* jitter, so waiting writers do not retry in step */
		clock_gettime(CLOCK_MONOTONIC, &now);
		usleep(delay_us + (unsigned)(now.tv_nsec % 1000));
		if (delay_us < 50000)
			delay_us *= 2;
	}
}

static void set_why(char *why, size_t whylen, const char *what, sqlite3 *db)
{
	snprintf(why, whylen, "%s: %s", what, db ? sqlite3_errmsg(db) : "out of memory");
}

/* asyncore_term_set(name): the aggregate giving rep_term_set_key() of its
 * names (any order, repeats and empty ones ignored), NULL for none: the
 * term sets of stored rows (schema 12's migration, resign). */
struct term_set_agg {
	char **names;
	size_t n, cap;
};

static void term_set_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	struct term_set_agg *a = sqlite3_aggregate_context(ctx, sizeof(*a));
	const char *name = (const char *)sqlite3_value_text(argv[0]);
	if (!a) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (!name || !name[0])
		return;
	char *copy = strdup(name);
	char **slot = copy ? base_array_push(&a->names, &a->n, &a->cap, sizeof(*slot)) : NULL;
	if (!slot) {
		free(copy);
		sqlite3_result_error_nomem(ctx);
		return;
	}
	*slot = copy;
}

static void term_set_final(sqlite3_context *ctx)
{
	struct term_set_agg *a = sqlite3_aggregate_context(ctx, 0);
	size_t n = a ? a->n : 0;
	const char **v = n ? malloc(n * sizeof(*v)) : NULL;
	char key[REP_TERM_SET_KEY];
	if (n && !v)
		sqlite3_result_error_nomem(ctx);
	for (size_t i = 0; v && i < n; i++)
		v[i] = a->names[i];
	if (v) {
		rep_terms_unique(v, &n);
		rep_term_set_key(v, n, key);
		sqlite3_result_text(ctx, key, -1, SQLITE_TRANSIENT);
	}
	free(v);
	for (size_t i = 0; a && i < a->n; i++)
		free(a->names[i]);
	if (a)
		free(a->names);
}

/* Apply the migrations this database lacks, in one transaction. */
static int migrate(sqlite3 *db, char *why, size_t whylen)
{
	sqlite3_stmt *st = NULL;
	int version = -1, rc = -1;
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	st = NULL;
	if (version == REP_SCHEMA_VERSION)
		return 0;   /* the usual case: no lock needed */
	version = -1;
	if (exec_retry(db, "BEGIN IMMEDIATE") != SQLITE_OK) {
		set_why(why, whylen, "cannot lock the database", db);
		return -1;
	}
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (version < 0) {
		set_why(why, whylen, "cannot read the schema version", db);
		goto out;
	}
	if (version > REP_SCHEMA_VERSION) {
		snprintf(why, whylen, "database schema version %d is newer than this asyncore's (%d)",
			 version, REP_SCHEMA_VERSION);
		goto out;
	}
	for (int v = version; v < REP_SCHEMA_VERSION; v++) {
		char pragma[64];
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", v + 1);
		if (sqlite3_exec(db, rep_store_migration(v + 1), NULL, NULL, NULL) != SQLITE_OK ||
		    sqlite3_exec(db, pragma, NULL, NULL, NULL) != SQLITE_OK) {
			char what[64];
			snprintf(what, sizeof(what), "migration to schema version %d failed", v + 1);
			set_why(why, whylen, what, db);
			goto out;
		}
	}
	rc = 0;
out:
	if (rc == 0 && exec_retry(db, "COMMIT") != SQLITE_OK) {
		set_why(why, whylen, "cannot commit the schema", db);
		rc = -1;
	}
	if (rc != 0)
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

int rep_sqlite_open(const char *path, struct rep_sqlite **out, char *why, size_t whylen)
{
	struct rep_sqlite *st = calloc(1, sizeof(*st));
	if (!st) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
	if (sqlite3_open_v2(path, &st->db, flags, NULL) != SQLITE_OK) {
		set_why(why, whylen, path, st->db);
		goto fail;
	}
	sqlite3_busy_timeout(st->db, REP_BUSY_TIMEOUT_MS);
	sqlite3_extended_result_codes(st->db, 1);
	/* WAL: readers never block the writer; NORMAL sync keeps every commit
	 * atomic (a crash loses at most the last commits, never half of one).
	 * A core's commit touches some 30 pages (its rows and every index's);
	 * checkpointing every 8,000 pages instead of SQLite's 1,000 copies a
	 * page that many cores touched once per 250 cores, not per 30. */
	if (exec_retry(st->db, "PRAGMA journal_mode = WAL") != SQLITE_OK ||
	    exec_retry(st->db, "PRAGMA synchronous = NORMAL") != SQLITE_OK ||
	    exec_retry(st->db, "PRAGMA wal_autocheckpoint = 8000") != SQLITE_OK ||
	    exec_retry(st->db, "PRAGMA foreign_keys = ON") != SQLITE_OK) {
		set_why(why, whylen, path, st->db);
		goto fail;
	}
	if (sqlite3_create_function_v2(st->db, "asyncore_term_set", 1, SQLITE_UTF8, NULL, NULL,
				       term_set_step, term_set_final, NULL) != SQLITE_OK) {
		set_why(why, whylen, path, st->db);
		goto fail;
	}
	if (migrate(st->db, why, whylen) != 0)
		goto fail;
	for (int i = 0; i < Q_COUNT; i++) {
		if (sqlite3_prepare_v3(st->db, rep_queries[i], -1, SQLITE_PREPARE_PERSISTENT, &st->q[i],
				       NULL) != SQLITE_OK) {
			set_why(why, whylen, "preparing statements", st->db);
			goto fail;
		}
	}
	*out = st;
	return 0;
fail:
	rep_sqlite_close(st);
	return -1;
}

void rep_sqlite_close(struct rep_sqlite *st)
{
	if (!st)
		return;
	for (int i = 0; i < Q_COUNT; i++)
		sqlite3_finalize(st->q[i]);
	for (int t = 0; t < REP_FRAMES_TABLES; t++) {
		for (int i = 0; i < FQ_COUNT; i++)
			sqlite3_finalize(st->frames_q[t][i]);
		free(st->read_fields[t]);
	}
	sqlite3_close(st->db);
	free(st);
}

/* One column value of an insert: SQL NULL, an integer (64-bit addresses
 * as their two's-complement int64) or borrowed text. */
struct rep_value {
	enum { V_NULL, V_INT, V_TEXT } type;
	int64_t i;
	const char *s;
};

static struct rep_value v_int(int64_t i)
{
	return (struct rep_value){.type = V_INT, .i = i};
}

static struct rep_value v_u64(uint64_t u)
{
	return v_int((int64_t)u);
}

static struct rep_value v_opt(bool known, uint64_t u)
{
	return known ? v_u64(u) : (struct rep_value){.type = V_NULL};
}

static struct rep_value v_text(const char *s)
{
	return s ? (struct rep_value){.type = V_TEXT, .s = s} : (struct rep_value){.type = V_NULL};
}

#define NVALUES(a) (sizeof(a) / sizeof((a)[0]))

/* Bind text from a core or a binary as valid UTF-8 (reports/bytes.h). */
static int bind_text(sqlite3_stmt *q, int col, const char *s)
{
	char *owned;
	const char *valid = rep_utf8(s, &owned);
	if (!valid)
		return SQLITE_NOMEM;
	return sqlite3_bind_text(q, col, valid, -1, owned ? free : SQLITE_STATIC);
}

/* The one bind-and-step of every insert: bind V[0..N) to Q's parameters
 * 1..N, run it, reset it.  SQLITE_DONE on success. */
static int insert_row(sqlite3_stmt *q, const struct rep_value *v, size_t n)
{
	int rc = SQLITE_OK;
	for (size_t k = 0; k < n && rc == SQLITE_OK; k++) {
		int col = (int)k + 1;
		if (v[k].type == V_INT)
			rc = sqlite3_bind_int64(q, col, v[k].i);
		else if (v[k].type == V_TEXT)
			rc = bind_text(q, col, v[k].s);
		else
			rc = sqlite3_bind_null(q, col);
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_step(q);
	sqlite3_reset(q);
	sqlite3_clear_bindings(q);
	return rc;
}

/* AN's cores row, in term set TERM_SET (NULL: it holds no names). */
static int insert_core(struct rep_sqlite *st, const struct analysis *an, const char *term_set)
{
	char now[32], mtime[32];
	rep_store_time((int64_t)time(NULL), now);
	const struct rep_caught_columns c = rep_core_caught(an);
	const struct rep_go_columns g = rep_core_go(an);
	const struct rep_value v[] = {
		v_text(an->core_fingerprint), v_text(an->core_sha256), v_text(an->core_path),
		v_u64(an->core_file_size), v_u64(an->core_size), v_text(an->crashed_at), v_text(now),
		v_text(AN_VERSION), v_text(an->executable), v_text(an->build_id),
		v_opt(an->has_pid, (uint64_t)(int64_t)an->pid), v_opt(an->has_uid, an->uid),
		v_opt(an->has_signal, (uint64_t)(int64_t)an->signo), v_text(an->signal_name),
		v_opt(an->has_code, (uint64_t)(int64_t)an->code), v_text(an->code_name),
		v_opt(an->has_fault_address, an->fault_address), v_int(an->crashing_tid),
		v_text(an->abort_message), v_text(an->signature), v_text(an->signature_hash),
		v_opt(an->async_key_found, an->async_key), v_u64(an->nthreads),
		v_u64(rep_total_frames(an)), v_u64(an->nwarnings), v_text(an->boot_id),
		v_opt(an->has_coredump_uid, an->coredump_uid), v_text(an->unit), v_text(an->cmdline),
		v_text(an->cause.summary ? an_cause_kind_name(an->cause.kind) : NULL),
		v_text(an->cause.summary), v_text(rep_core_arch(an)),
		v_opt(c.has_signal, (uint64_t)c.signal), v_text(c.signal_name),
		v_opt(c.has_code, (uint64_t)c.code), v_text(c.code_name),
		v_opt(c.has_address, c.address), v_text(c.handled_by), v_text(c.action),
		v_text(g.crash), v_opt(g.has_signal, (uint64_t)g.signal), v_text(g.signal_name),
		v_text(g.message), v_text(rep_core_file_mtime(an, mtime)), v_text(term_set),
	};
	return insert_row(st->q[Q_CORE], v, NVALUES(v));
}

/* A frame of a thread, a task or a suspended chain: Q's statement takes
 * the leading columns of the list below (a suspended chain's frames have no
 * unwinder columns, no role and no runtime ones). */
static int insert_frame(sqlite3_stmt *q, int64_t core, size_t owner, size_t idx,
			const struct an_frame *f)
{
	char *args = rep_frame_args_json(f);
	if (f->has_args && !args)
		return SQLITE_NOMEM;
	const struct rep_value v[] = {
		v_int(core), v_u64(owner), v_u64(idx),
		v_text(an_frame_kind_name(f->kind)), v_opt(!AN_FRAME_IS_RUNTIME(f), f->pc),
		v_text(f->function), v_opt(f->has_offset, f->offset), v_text(f->module),
		v_opt(f->has_module_offset, f->module_offset), v_text(f->file),
		v_opt(f->line > 0, (uint64_t)f->line), v_int(f->inlined), v_int(f->inline_depth),
		v_int(f->tailcall), v_text(f->display), v_text(args),
		v_int(f->activation), v_opt(f->cfa != 0, f->cfa), v_int(f->seam),
		v_text(an_frame_role_name(f->role)), v_text(f->runtime), v_text(f->detail),
	};
	size_t ncolumns = (size_t)sqlite3_bind_parameter_count(q);
	int rc = insert_row(q, v, ncolumns < NVALUES(v) ? ncolumns : NVALUES(v));
	free(args);
	return rc;
}

/* Frames keep their true index: past a recursion's run (GAP; NULL: none)
 * it jumps, which is how a stored core still says where the run was. */
static int insert_frames(sqlite3_stmt *q, int64_t core, size_t owner, const struct an_frame *f,
			 size_t n, const struct an_index_gap *gap)
{
	for (size_t j = 0; j < n; j++)
		if (insert_frame(q, core, owner, an_index_gap_index(gap, j), &f[j]) != SQLITE_DONE)
			return -1;
	return 0;
}

/* Each frames table with its owner column, its owners' table and the
 * statement that inserts into it. */
static const struct {
	const char *table, *owner, *owners;
	int insert;
} frame_tables[REP_FRAMES_TABLES] = {
	[REP_FRAMES_THREAD] = {"frames", "thread_idx", "threads", Q_FRAME},
	[REP_FRAMES_TASK] = {"task_frames", "task_idx", "tasks", Q_TFRAME},
	[REP_FRAMES_CHAIN] = {"suspended_frames", "chain_idx", "suspended", Q_SFRAME},
};

/* The frames-table statement WHICH of table T, prepared on first use from
 * its text, whose %s are the names of the table, its owner column and its
 * owners' table (in that order, as %1$s %2$s %3$s); reset, ready to bind.
 * NULL on error. */
static sqlite3_stmt *frames_sql(struct rep_sqlite *st, enum rep_frames_table t, int which)
{
	static const char *const fmts[FQ_COUNT] = {
		[FQ_OWNERS] = "SELECT idx FROM %3$s WHERE core_id = ?1 ORDER BY idx",
		[FQ_READ] = "SELECT * FROM %1$s WHERE core_id = ?1 AND %2$s = ?2 ORDER BY idx",
		[FQ_DELETE] = "DELETE FROM %1$s WHERE core_id = ?1 AND %2$s = ?2",
		[FQ_COUNT_FRAMES] = "UPDATE %3$s SET nframes = ?3 WHERE core_id = ?1 AND idx = ?2",
	};
	sqlite3_stmt **q = &st->frames_q[t][which];
	char *sql = NULL;
	if (*q) {
		sqlite3_reset(*q);
		sqlite3_clear_bindings(*q);
		return *q;
	}
	if (asprintf(&sql, fmts[which], frame_tables[t].table, frame_tables[t].owner,
		     frame_tables[t].owners) >= 0)
		sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, q, NULL);
	free(sql);
	return *q;
}

int rep_sqlite_frame_owners(struct rep_sqlite *st, enum rep_frames_table t, int64_t core,
			    int64_t **owners, size_t *n)
{
	sqlite3_stmt *q = frames_sql(st, t, FQ_OWNERS);
	size_t cap = 0;
	int step = SQLITE_ERROR;
	*owners = NULL;
	*n = 0;
	sqlite3_bind_int64(q, 1, core);
	while (q && (step = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t *o = base_array_push(owners, n, &cap, sizeof(**owners));
		if (!o)
			break;
		*o = sqlite3_column_int64(q, 0);
	}
	sqlite3_reset(q);
	return step == SQLITE_DONE ? 0 : -1;
}

/* The read statement of table T with its columns' fields in *FIELDS. */
static sqlite3_stmt *frames_read_sql(struct rep_sqlite *st, enum rep_frames_table t,
				     const enum rep_frame_field **fields)
{
	sqlite3_stmt *q = frames_sql(st, t, FQ_READ);
	int ncols = q ? sqlite3_column_count(q) : 0;
	if (q && !st->read_fields[t]) {
		st->read_fields[t] = calloc(ncols ? (size_t)ncols : 1, sizeof(*st->read_fields[t]));
		for (int c = 0; st->read_fields[t] && c < ncols; c++)
			st->read_fields[t][c] = rep_frame_field_of(sqlite3_column_name(q, c));
	}
	*fields = st->read_fields[t];
	return *fields ? q : NULL;
}

/* One row of Q (SELECT *) as a frame: every column that is a field. */
static int frame_of_row(sqlite3_stmt *q, const enum rep_frame_field *fields, struct an_frame *f)
{
	for (int c = 0; c < sqlite3_column_count(q); c++) {
		if (fields[c] == REP_FIELD_NONE)
			continue;
		const struct rep_cell v = {sqlite3_column_type(q, c) == SQLITE_NULL,
					   sqlite3_column_int64(q, c),
					   (const char *)sqlite3_column_text(q, c)};
		if (rep_frame_set_field(f, fields[c], &v) != 0)
			return -1;
	}
	return 0;
}

int rep_sqlite_read_frames(struct rep_sqlite *st, enum rep_frames_table t, int64_t core,
			   int64_t owner, struct an_frame **frames, size_t *n,
			   struct an_index_gap *gap)
{
	const enum rep_frame_field *fields = NULL;
	sqlite3_stmt *q = frames_read_sql(st, t, &fields);
	size_t cap = 0;
	int step = SQLITE_ERROR;
	*frames = NULL;
	*n = 0;
	*gap = (struct an_index_gap){0, 0};
	sqlite3_bind_int64(q, 1, core);
	sqlite3_bind_int64(q, 2, owner);
	while (q && (step = sqlite3_step(q)) == SQLITE_ROW) {
		rep_index_gap_note(gap, *n, sqlite3_column_int64(q, REP_FRAME_INDEX_COLUMN));
		struct an_frame *f = base_array_push(frames, n, &cap, sizeof(**frames));
		if (!f || frame_of_row(q, fields, f) != 0) {
			step = SQLITE_NOMEM;
			break;
		}
	}
	sqlite3_reset(q);
	return step == SQLITE_DONE ? 0 : -1;
}

int rep_sqlite_replace_frames(struct rep_sqlite *st, enum rep_frames_table t, int64_t core,
			      int64_t owner, const struct an_frame *frames, size_t n,
			      const struct an_index_gap *gap)
{
	sqlite3_stmt *del = frames_sql(st, t, FQ_DELETE);
	sqlite3_stmt *count = frames_sql(st, t, FQ_COUNT_FRAMES);
	const struct rep_value v[] = {v_int(core), v_int(owner), v_u64(n)};
	return del && count && insert_row(del, v, 2) == SQLITE_DONE &&
	       insert_frames(st->q[frame_tables[t].insert], core, (size_t)owner, frames, n, gap) == 0 &&
	       insert_row(count, v, 3) == SQLITE_DONE ? 0 : -1;
}

int rep_sqlite_retally_terms(struct rep_sqlite *st, int64_t core)
{
	static const char *const sql[] = {
		"UPDATE cores SET term_set = (SELECT asyncore_term_set(name) FROM (" STORED_CORE_TERMS ")"
		" WHERE core_id = ?1) WHERE id = ?1",
		"INSERT OR IGNORE INTO term_names SELECT DISTINCT t.name, c.term_set FROM (" STORED_CORE_TERMS ") t"
		" JOIN cores c ON c.id = t.core_id WHERE t.core_id = ?1",
	};
	for (size_t i = 0; i < sizeof(sql) / sizeof(sql[0]); i++) {
		sqlite3_stmt *q = NULL;
		int ok = sqlite3_prepare_v2(st->db, sql[i], -1, &q, NULL) == SQLITE_OK &&
			 sqlite3_bind_int64(q, 1, core) == SQLITE_OK && sqlite3_step(q) == SQLITE_DONE;
		sqlite3_finalize(q);
		if (!ok)
			return -1;
	}
	return 0;
}

static int insert_threads(struct rep_sqlite *st, int64_t core, const struct analysis *an)
{
	for (size_t i = 0; i < an->nthreads; i++) {
		const struct an_thread *t = &an->threads[i];
		const struct rep_value v[] = {
			v_int(core), v_u64(i), v_int(t->tid), v_int(t->crashing),
			v_u64(t->pc), v_u64(t->sp), v_u64(t->fp), v_u64(t->tp), v_u64(t->nframes),
			v_text(t->unwind_error), v_opt(t->async_root != 0, t->async_root),
		};
		const struct rep_value root[] = {v_int(core), v_u64(i), v_int(t->tid),
						 v_u64(t->async_root)};
		const struct an_index_gap gap = an_thread_index_gap(t);
		if (insert_row(st->q[Q_THREAD], v, NVALUES(v)) != SQLITE_DONE ||
		    insert_frames(st->q[Q_FRAME], core, i, t->frames, t->nframes, &gap) != 0)
			return -1;
		if (t->async_root && insert_row(st->q[Q_ROOT], root, NVALUES(root)) != SQLITE_DONE)
			return -1;
	}
	return 0;
}

static int insert_modules(struct rep_sqlite *st, int64_t core, const struct analysis *an)
{
	for (size_t i = 0; i < an->nmodules; i++) {
		const struct an_module *m = &an->modules[i];
		const struct rep_value v[] = {v_int(core), v_u64(i), v_text(m->path), v_u64(m->start),
					      v_u64(m->end), v_text(m->build_id), v_text(m->debuginfo)};
		if (insert_row(st->q[Q_MODULE], v, NVALUES(v)) != SQLITE_DONE)
			return -1;
	}
	return 0;
}

static int insert_suspended(struct rep_sqlite *st, int64_t core, const struct analysis *an)
{
	for (size_t i = 0; i < an->nsuspended; i++) {
		const struct an_suspended *s = &an->suspended[i];
		const struct rep_value v[] = {v_int(core), v_u64(i), v_u64(s->leaf), v_u64(s->nframes)};
		if (insert_row(st->q[Q_SUSPENDED], v, NVALUES(v)) != SQLITE_DONE ||
		    insert_frames(st->q[Q_SFRAME], core, i, s->frames, s->nframes, NULL) != 0)
			return -1;
	}
	return 0;
}

static int insert_tasks(struct rep_sqlite *st, int64_t core, const struct analysis *an)
{
	for (size_t i = 0; i < an->ntasks; i++) {
		const struct an_task *t = &an->tasks[i];
		const struct rep_value v[] = {
			v_int(core), v_u64(i), v_text(t->runtime), v_u64(t->id),
			v_text(an_task_state_name(t->state)), v_text(t->wait_kind),
			v_opt(t->has_wait_address, t->wait_address),
			v_opt(t->has_wait_target, t->wait_target),
			v_opt(t->has_tid, (uint64_t)(int64_t)t->tid), v_text(t->fn),
			v_opt(t->fn_address != 0, t->fn_address), v_u64(t->address), v_u64(t->nframes),
			v_text(t->unwind_error), v_text(t->created_by), v_text(t->created_file),
			v_opt(t->created_file && t->created_line > 0, (uint64_t)t->created_line),
			v_opt(t->has_wait_since, t->wait_since), v_int(t->locked), v_text(t->name),
		};
		if (insert_row(st->q[Q_TASK], v, NVALUES(v)) != SQLITE_DONE ||
		    insert_frames(st->q[Q_TFRAME], core, i, t->frames, t->nframes, NULL) != 0)
			return -1;
	}
	return 0;
}

static int insert_blocked(struct rep_sqlite *st, int64_t core, const struct analysis *an)
{
	struct rep_blocked_columns b;
	for (size_t k = 0; k < an->nthreads + an->ntasks; k++) {
		if (!rep_blocked_row(an, k, &b))
			continue;
		const struct rep_value v[] = {
			v_int(core), v_text(b.waiter), v_u64(b.waiter_idx),
			v_opt(b.has_tid, (uint64_t)(int64_t)b.tid), v_text(b.kind),
			v_opt(b.has_object, b.object), v_text(b.object_name),
			v_opt(b.has_owner_tid, (uint64_t)(int64_t)b.owner_tid), v_int(b.owner_gone),
			v_opt(b.has_owner_task, b.owner_task), v_text(b.syscall),
			v_opt(b.has_fd, (uint64_t)b.fd), v_text(b.fd_target), v_opt(b.has_since, b.since),
			v_text(b.via), v_text(b.function), v_text(b.summary),
		};
		if (insert_row(st->q[Q_BLOCKED], v, NVALUES(v)) != SQLITE_DONE)
			return -1;
	}
	return 0;
}

static int insert_deadlocks(struct rep_sqlite *st, int64_t core, const struct analysis *an)
{
	for (size_t i = 0; i < an->ndeadlocks; i++) {
		const struct an_deadlock *d = &an->deadlocks[i];
		const struct rep_value v[] = {v_int(core), v_u64(i), v_text(d->summary), v_u64(d->n)};
		if (insert_row(st->q[Q_DEADLOCK], v, NVALUES(v)) != SQLITE_DONE)
			return -1;
		for (size_t k = 0; k < d->n; k++) {
			const struct rep_value m[] = {v_int(core), v_u64(i), v_u64(k), v_int(d->threads[k]),
						      v_opt(d->objects[k] != 0, d->objects[k])};
			if (insert_row(st->q[Q_MEMBER], m, NVALUES(m)) != SQLITE_DONE)
				return -1;
		}
	}
	return 0;
}

static int insert_events(struct rep_sqlite *st, int64_t core, size_t r, const struct an_recorder *rec)
{
	char args[REP_EVENT_ARGS_MAX];
	for (size_t i = 0; i < rec->nevents; i++) {
		const struct an_event *e = &rec->events[i];
		rep_event_args_json(e, args, sizeof(args));
		const struct rep_value v[] = {
			v_int(core), v_u64(r), v_u64(i), v_u64(e->order), v_u64(e->timestamp),
			v_text(e->location), v_text(e->function), v_text(e->format), v_text(e->message),
			v_text(args), v_int(e->strings_read), v_int(e->in_flight),
		};
		if (insert_row(st->q[Q_EVENT], v, NVALUES(v)) != SQLITE_DONE)
			return -1;
	}
	return 0;
}

static int insert_recorders(struct rep_sqlite *st, int64_t core, const struct analysis *an)
{
	for (size_t i = 0; i < an->nrecorders; i++) {
		const struct an_recorder *r = &an->recorders[i];
		const struct rep_value v[] = {
			v_int(core), v_u64(i), v_text(r->name), v_text(r->layout), v_u64(r->address),
			v_u64(r->size), v_u64(r->writer), v_u64(r->reader), v_u64(r->commit),
			v_u64(r->overflow), v_u64(r->recovered), v_u64(r->in_flight),
			v_u64(r->overwritten), v_u64(r->nevents),
		};
		if (insert_row(st->q[Q_RECORDER], v, NVALUES(v)) != SQLITE_DONE ||
		    insert_events(st, core, i, r) != 0)
			return -1;
	}
	return 0;
}

static int insert_warnings(struct rep_sqlite *st, int64_t core, const struct analysis *an)
{
	for (size_t i = 0; i < an->nwarnings; i++) {
		const struct rep_value v[] = {v_int(core), v_u64(i),
					      v_text(an->warnings[i] ? an->warnings[i] : "")};
		if (insert_row(st->q[Q_WARNING], v, NVALUES(v)) != SQLITE_DONE)
			return -1;
	}
	return 0;
}

/* Everything below the cores row, inside the open transaction. */
static int insert_children(struct rep_sqlite *st, int64_t core, const struct analysis *an)
{
	/* Its earlier failures: under its fingerprint, or under its path when
	 * it failed before its fingerprint was known. */
	const struct rep_value clear[] = {v_text(an->core_fingerprint), v_text(an->core_path)};
	if (insert_modules(st, core, an) != 0 || insert_threads(st, core, an) != 0 ||
	    insert_suspended(st, core, an) != 0 || insert_tasks(st, core, an) != 0 ||
	    insert_recorders(st, core, an) != 0 || insert_warnings(st, core, an) != 0 ||
	    insert_blocked(st, core, an) != 0 || insert_deadlocks(st, core, an) != 0)
		return -1;
	return insert_row(st->q[Q_CLEAR_ERROR], clear, NVALUES(clear)) == SQLITE_DONE ? 0 : -1;
}

/* The names of term set KEY, each once in the store: none to write when
 * another core holds the set (STORED). */
static int insert_terms(struct rep_sqlite *st, const char *const *names, size_t n, const char *key,
			bool stored)
{
	for (size_t i = 0; !stored && i < n; i++) {
		const struct rep_value v[] = {v_text(names[i]), v_text(key)};
		if (insert_row(st->q[Q_TERM], v, NVALUES(v)) != SQLITE_DONE)
			return -1;
	}
	return 0;
}

enum rep_write_result rep_sqlite_write(struct rep_sqlite *st, const struct analysis *an, char *why,
				      size_t whylen)
{
	if (exec_retry(st->db, "BEGIN IMMEDIATE") != SQLITE_OK) {
		set_why(why, whylen, "cannot lock the database", st->db);
		return REP_WRITE_FAILED;
	}
	if (!an->core_fingerprint) {
		snprintf(why, whylen, "the analysis has no core fingerprint");
		return REP_WRITE_FAILED;
	}
	const char **names = NULL;
	size_t nnames = 0;
	char key[REP_TERM_SET_KEY];
	if (rep_core_terms(an, &names, &nnames) != 0) {
		snprintf(why, whylen, "out of memory");
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		return REP_WRITE_FAILED;
	}
	rep_term_set_key(names, nnames, key);
	const struct rep_value set[] = {v_text(key)};
	bool stored = nnames == 0 || insert_row(st->q[Q_SET_STORED], set, 1) == SQLITE_ROW;
	if (insert_core(st, an, nnames ? key : NULL) != SQLITE_DONE)
		goto fail;
	if (sqlite3_changes(st->db) == 0) {
		free(names);
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		return REP_WRITE_DUPLICATE;
	}
	if (insert_children(st, sqlite3_last_insert_rowid(st->db), an) != 0 ||
	    insert_terms(st, names, nnames, key, stored) != 0)
		goto fail;
	if (exec_retry(st->db, "COMMIT") != SQLITE_OK)
		goto fail;
	free(names);
	return REP_WRITE_STORED;
fail:
	free(names);
	set_why(why, whylen, "writing the core", st->db);
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return REP_WRITE_FAILED;
}

int rep_sqlite_record_error(struct rep_sqlite *st, const struct rep_core_id *id, const char *reason,
			   char *why, size_t whylen)
{
	sqlite3_stmt *q = st->q[Q_ERROR];
	char now[32], *ident = rep_error_ident(id);
	rep_store_time((int64_t)time(NULL), now);
	if (!ident) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	int rc = -1;
	if (exec_retry(st->db, "BEGIN IMMEDIATE") != SQLITE_OK) {
		set_why(why, whylen, "cannot lock the database", st->db);
		goto out;
	}
	const struct rep_value v[] = {v_text(ident), v_text(id->fingerprint), v_text(id->path),
				      v_opt(id->fingerprint != NULL, id->file_size), v_text(reason),
				      v_text(now)};
	/* Known by its fingerprint now: an error recorded under its path alone
	 * (its worker lost before it was read) is the same core. */
	const struct rep_value by_path[] = {v_text(NULL), v_text(id->path)};
	if ((id->fingerprint &&
	     insert_row(st->q[Q_CLEAR_ERROR], by_path, NVALUES(by_path)) != SQLITE_DONE) ||
	    insert_row(q, v, NVALUES(v)) != SQLITE_DONE || exec_retry(st->db, "COMMIT") != SQLITE_OK) {
		set_why(why, whylen, "recording an ingest error", st->db);
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		goto out;
	}
	rc = 0;
out:
	free(ident);
	return rc;
}

int rep_sqlite_has(struct rep_sqlite *st, const char *fingerprint)
{
	sqlite3_stmt *q = st->q[Q_HAS];
	sqlite3_bind_text(q, 1, fingerprint, -1, SQLITE_STATIC);
	int rc;
	time_t deadline = time(NULL) + REP_RETRY_SECONDS;
	while (is_busy(rc = sqlite3_step(q)) && time(NULL) <= deadline) {
		sqlite3_reset(q);
		usleep(10000);
	}
	sqlite3_reset(q);
	sqlite3_clear_bindings(q);
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

sqlite3 *rep_sqlite_db(struct rep_sqlite *st)
{
	return st->db;
}

int rep_sqlite_exec(struct rep_sqlite *st, const char *sql)
{
	return exec_retry(st->db, sql);
}

static int ops_has(void *backend, const char *fingerprint)
{
	return rep_sqlite_has(backend, fingerprint);
}

static enum rep_write_result ops_write(void *backend, const struct analysis *an, char *why,
				       size_t whylen)
{
	return rep_sqlite_write(backend, an, why, whylen);
}

static int ops_record_error(void *backend, const struct rep_core_id *id, const char *reason,
			    char *why, size_t whylen)
{
	return rep_sqlite_record_error(backend, id, reason, why, whylen);
}

/* Every core was committed by its own write: nothing is held back. */
static size_t ops_close(void *backend)
{
	rep_sqlite_close(backend);
	return 0;
}

/* Each core and error is written when it is given: nothing is held. */
static void ops_pending(void *backend, size_t *held, size_t *lost)
{
	(void)backend;
	*held = *lost = 0;
}

const struct rep_store_ops rep_sqlite_ops = {ops_has, ops_write, ops_record_error, ops_close,
					     ops_pending};
