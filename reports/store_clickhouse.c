#include "store_clickhouse.h"

#include <assert.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "../corefile/array.h"
#include "clickhouse.h"
#include "store_rows.h"
#include "bytes.h"

/* A batch is also sent once its rows pass this size. */
#define CH_BATCH_BYTES (16u << 20)

/* The settings of every insert: a Distributed table writes to the shards
 * before it answers, so an answer means the rows are on their shard. */
#define CH_INSERT_SETTINGS "insert_distributed_sync=1"

/* The tables, in the order a batch is written: children first, then the
 * names of the cores' term sets, `cores` last (a core is stored once its
 * cores row is), ingest_errors after. */
enum ch_table {
	T_MODULES, T_THREADS, T_FRAMES, T_ROOTS, T_SUSPENDED, T_SFRAMES, T_TASKS, T_TFRAMES,
	T_RECORDERS, T_EVENTS, T_WARNINGS, T_TERMS, T_CORES, T_ERRORS, T_COUNT
};

struct ch_table_def {
	const char *name;
	const char *columns;
	const char *order;          /* the sorting (and replacing) key */
	const char *version;        /* ReplacingMergeTree's version column, or NULL */
	const char *shard;          /* the column whose cityHash64 picks the shard */
};

/* The columns of reports/SCHEMA.md, with the core's fingerprint in place of
 * core_id.  Integers are Int64 holding the values SQLite holds (addresses as
 * their two's complement), times ISO 8601 text as in SQLite. */
#define FRAME_COLUMNS \
	"kind Enum8('native' = 1, 'async' = 2, 'script' = 3, 'label' = 4), pc Nullable(Int64)," \
	" function Nullable(String)," \
	" function_offset Nullable(Int64), module Nullable(String), module_offset Nullable(Int64)," \
	" file Nullable(String), line Nullable(Int64), inlined UInt8, inline_depth Int64," \
	" tailcall UInt8, display Nullable(String), args Nullable(String)"

/* A task's state: bthreads' words, then goroutines' (appended: adding an
 * Enum's values changes only a table's metadata). */
#define TASK_STATE_TYPE \
	"Enum8('running' = 1, 'ready' = 2, 'suspended' = 3, 'created' = 4, 'runnable' = 5," \
	" 'syscall' = 6, 'waiting' = 7, 'preempted' = 8, 'idle' = 9)"

static const struct ch_table_def ch_tables[T_COUNT] = {
	[T_MODULES] = {"modules", "fingerprint String, idx Int64, path Nullable(String),"
		       " start_addr Nullable(Int64), end_addr Nullable(Int64), build_id Nullable(String),"
		       " debuginfo Nullable(String)", "fingerprint, idx", NULL, "fingerprint"},
	[T_THREADS] = {"threads", "fingerprint String, idx Int64, tid Int64, crashing UInt8,"
		       " rip Nullable(Int64), rsp Nullable(Int64), rbp Nullable(Int64),"
		       " fs_base Nullable(Int64), nframes Int64, unwind_error Nullable(String),"
		       " async_root Nullable(Int64)", "fingerprint, idx", NULL, "fingerprint"},
	[T_FRAMES] = {"frames", "fingerprint String, thread_idx Int64, idx Int64, " FRAME_COLUMNS
		      ", activation UInt8, cfa Nullable(Int64), seam UInt8, runtime Nullable(String),"
		      " detail Nullable(String), role Nullable(String)",
		      "fingerprint, thread_idx, idx", NULL, "fingerprint"},
	[T_ROOTS] = {"async_roots", "fingerprint String, thread_idx Int64, tid Int64, address Int64",
		     "fingerprint, thread_idx", NULL, "fingerprint"},
	[T_SUSPENDED] = {"suspended", "fingerprint String, idx Int64, leaf Int64, nframes Int64",
			 "fingerprint, idx", NULL, "fingerprint"},
	[T_SFRAMES] = {"suspended_frames", "fingerprint String, chain_idx Int64, idx Int64, "
		       FRAME_COLUMNS, "fingerprint, chain_idx, idx", NULL, "fingerprint"},
	[T_TASKS] = {"tasks", "fingerprint String, idx Int64, runtime String, task_id Int64,"
		     " state " TASK_STATE_TYPE ","
		     " wait_kind Nullable(String), wait_address Nullable(Int64),"
		     " wait_target Nullable(Int64), tid Nullable(Int64), fn Nullable(String),"
		     " fn_address Nullable(Int64), address Int64, nframes Int64,"
		     " unwind_error Nullable(String), created_by Nullable(String),"
		     " created_file Nullable(String), created_line Nullable(Int64),"
		     " wait_since Nullable(Int64), locked UInt8 DEFAULT 0", "fingerprint, idx", NULL,
		     "fingerprint"},
	[T_TFRAMES] = {"task_frames", "fingerprint String, task_idx Int64, idx Int64, " FRAME_COLUMNS
		       ", activation UInt8, cfa Nullable(Int64), seam UInt8, role Nullable(String)",
		       "fingerprint, task_idx, idx", NULL, "fingerprint"},
	[T_RECORDERS] = {"recorders", "fingerprint String, idx Int64, name Nullable(String),"
			 " layout Nullable(String), address Nullable(Int64), size Nullable(Int64),"
			 " writer Nullable(Int64), reader Nullable(Int64), committed Nullable(Int64),"
			 " overflow Nullable(Int64), recovered Nullable(Int64), in_flight Nullable(Int64),"
			 " overwritten Nullable(Int64), nevents Int64", "fingerprint, idx", NULL,
			 "fingerprint"},
	[T_EVENTS] = {"recorder_events", "fingerprint String, recorder_idx Int64, idx Int64,"
		      " event_order Int64, timestamp Nullable(Int64), location Nullable(String),"
		      " function Nullable(String), format Nullable(String), message Nullable(String),"
		      " args Nullable(String), strings_read Int64, in_flight UInt8",
		      "fingerprint, recorder_idx, idx", NULL, "fingerprint"},
	[T_WARNINGS] = {"warnings", "fingerprint String, idx Int64, message String", "fingerprint, idx",
			NULL, "fingerprint"},
	/* each term set's names (store_rows.h), once however many cores hold
	 * it: written through T, a set's rows on the shard its key picks;
	 * `store init` writes its shard's own (fill_term_sets()) */
	[T_TERMS] = {"term_names", "name String, term_set String", "name, term_set", NULL, "term_set"},
	[T_CORES] = {"cores", "fingerprint String, sha256 Nullable(String), path String,"
		     " file_size Nullable(Int64), size Int64, crashed_at Nullable(String),"
		     " analysed_at String, analyzer_version String, executable Nullable(String),"
		     " build_id Nullable(String), pid Nullable(Int64), uid Nullable(Int64),"
		     " signal Nullable(Int64), signal_name Nullable(String), code Nullable(Int64),"
		     " code_name Nullable(String), fault_address Nullable(Int64),"
		     " crashing_tid Nullable(Int64), abort_message Nullable(String),"
		     " signature Nullable(String), signature_hash Nullable(String),"
		     " async_key Nullable(Int64), nthreads Int64, nframes Int64, nwarnings Int64,"
		     " boot_id Nullable(String), coredump_uid Nullable(Int64), unit Nullable(String),"
		     " cmdline Nullable(String), cause_kind Nullable(String),"
		     " cause_summary Nullable(String), version UInt64, arch String DEFAULT 'x86_64',"
		     " caught_signal Nullable(Int64), caught_signal_name Nullable(String),"
		     " caught_code Nullable(Int64), caught_code_name Nullable(String),"
		     " caught_address Nullable(Int64), handled_by Nullable(String),"
		     " handler_action Nullable(String), go_crash Nullable(String),"
		     " go_signal Nullable(Int64), go_signal_name Nullable(String),"
		     " go_message Nullable(String), file_mtime Nullable(String),"
		     " term_set String DEFAULT ''",
		     "fingerprint", "version",
		     "fingerprint"},
	[T_ERRORS] = {"ingest_errors", "ident String, fingerprint Nullable(String), path String,"
		      " size Nullable(Int64), reason String, attempts Int64, first_at String,"
		      " last_at String, resolved UInt8, version UInt64", "ident", "version", "ident"},
};

/* One table's rows of the batch, as JSONEachRow. */
struct ch_rows {
	char *data;
	size_t len, cap, count;
};

/* Term sets whose names are stored, or in the batch: a set's names are
 * written once, not with each core holding it.  An open-addressing table
 * (corefile/array.h) of at most CH_KNOWN_SETS, then forgotten at once (a set
 * written again is the same rows); forgotten too when a batch is lost. */
#define CH_KNOWN_SETS 8192
struct ch_set_slot {
	uint64_t hash;              /* the key's first 64 bits; the slot is free when all zero */
	char key[REP_TERM_SET_KEY];
};

struct ch_known_sets {
	struct ch_set_slot *slots;
	size_t cap, used;
};

/* A core of the batch, for reporting it when the batch fails. */
struct ch_pending {
	char *path;
	char *fingerprint;
	uint64_t file_size;
};

struct rep_ch_store {
	struct rep_ch *ch;
	struct ch_rows rows[T_COUNT];
	struct ch_known_sets known;
	const char *local;          /* "_local": write and read this shard's own tables
				     * (store init on a cluster); NULL: through T */
	struct ch_pending *pending;
	size_t npending, cap;
	size_t nerrors;             /* ingest_errors rows in the batch */
	size_t lost;                /* accepted cores that could not be stored */
	uint64_t last_version;
};

/* Microseconds since the epoch. */
static uint64_t wall_us(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}

/* Microseconds since the epoch, strictly increasing within the store: the
 * version that makes a newer cores or ingest_errors row replace an older. */
static uint64_t next_version(struct rep_ch_store *st)
{
	uint64_t v = wall_us();
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
	size_t i = core_hash_slot(h, s->cap);
	while (s->slots[i].key[0] && strcmp(s->slots[i].key, key) != 0)
		i = (i + 1) & (s->cap - 1);
	return &s->slots[i];
}

static bool set_known(const struct ch_known_sets *s, const char *key)
{
	return s->cap && set_slot(s, key, set_hash(key))->key[0];
}

static void sets_forget(struct ch_known_sets *s)
{
	if (s->slots)
		memset(s->slots, 0, s->cap * sizeof(*s->slots));
	s->used = 0;
}

/* KEY's names are stored, or in the batch.  Best effort: out of memory,
 * it is not remembered (and written again). */
static void set_remember(struct ch_known_sets *s, const char *key)
{
	if (set_known(s, key))
		return;
	if (s->used >= CH_KNOWN_SETS)
		sets_forget(s);
	if (!core_table_reserve(&s->slots, &s->cap, s->used, sizeof(*s->slots)))
		return;
	const uint64_t h = set_hash(key);
	struct ch_set_slot *e = set_slot(s, key, h);
	e->hash = h;
	snprintf(e->key, sizeof(e->key), "%s", key);
	s->used++;
}

/* "db.name" with the store's database. */
static char *table_name(struct rep_ch *ch, const char *name, const char *suffix)
{
	char *s = NULL;
	if (asprintf(&s, "%s.%s%s", rep_ch_database(ch), name, suffix) < 0)
		return NULL;
	return s;
}

/* ---- Schema ---------------------------------------------------------- */

/* Run one DDL statement built with asprintf (SQL is freed). */
static int ddl(struct rep_ch *ch, char *sql, char *why, size_t whylen)
{
	if (!sql) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	int rc = rep_ch_run_retry(ch, sql, NULL, 0, NULL, why, whylen);
	free(sql);
	return rc;
}

static char *printf_sql(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *printf_sql(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

/* Table T: the ReplacingMergeTree (T_local with a cluster) and, with a
 * cluster, the Distributed table in front of it. */
static int create_table(struct rep_ch *ch, const struct ch_table_def *t, char *why, size_t whylen)
{
	const char *db = rep_ch_database(ch), *cluster = rep_ch_cluster(ch);
	const char *local = cluster ? "_local" : "";
	if (ddl(ch, printf_sql("CREATE TABLE IF NOT EXISTS %s.%s%s (%s) ENGINE = ReplacingMergeTree(%s)"
			       " ORDER BY (%s)", db, t->name, local, t->columns,
			       t->version ? t->version : "", t->order), why, whylen) != 0)
		return -1;
	if (!cluster)
		return 0;
	return ddl(ch, printf_sql("CREATE TABLE IF NOT EXISTS %s.%s AS %s.%s_local ENGINE ="
				  " Distributed(%s, %s, %s_local, cityHash64(%s))", db, t->name, db,
				  t->name, cluster, db, t->name, t->shard), why, whylen);
}

/* The views of reports/SCHEMA.md.  Every read goes through FINAL (a core
 * written twice is one core) and joins on cores (a core whose cores row is
 * not written yet is not there).  %1$s is the database, %2$s the tables'
 * suffix: the views that join a core's rows run on each shard over its
 * local tables ("_local"; all rows of a core are on one shard) and are
 * read through a Distributed table; top_signatures aggregates over the
 * Distributed tables (no suffix).  ClickHouse 18.16 joins two tables per
 * SELECT, hence the nesting. */
#define PC_HEX "concat('0x', replaceRegexpOne(lower(hex(toUInt64(pc))), '^0(.)', '\\\\1'))"
#define CRASHING_THREADS_SQL \
	"SELECT fingerprint, idx AS thread_idx, tid FROM %1$s.threads%2$s FINAL WHERE crashing = 1"
#define RUNNING_TASKS_SQL \
	"SELECT fingerprint, assumeNotNull(tid) AS tid, idx AS task_idx, nframes AS task_nframes" \
	" FROM %1$s.tasks%2$s FINAL WHERE state = 'running' AND isNotNull(tid) AND runtime != 'go'"
#define CORE_NAMES_SQL "SELECT fingerprint, path, signature_hash FROM %1$s.cores%2$s FINAL"

/* As SQLite's: the crashing thread's frames; when it was running a
 * bthread, that bthread's frames first, then the thread's, numbered as one
 * stack (a goroutine's are already the thread's). */
static const char crash_stacks_sql[] =
	"SELECT fingerprint, path AS core, signature_hash, idx AS frame, kind, " PC_HEX " AS pc,"
	" function, file, line, module, inline_depth, CAST(NULL AS Nullable(String)) AS runtime,"
	" CAST(NULL AS Nullable(String)) AS detail FROM"
	" (SELECT fingerprint, task_idx, idx, kind, pc, function, file, line, module, inline_depth"
	"   FROM %1$s.task_frames%2$s FINAL)"
	" ALL INNER JOIN"
	" (SELECT fingerprint, task_idx, path, signature_hash FROM"
	"   (SELECT fingerprint, task_idx FROM (" CRASHING_THREADS_SQL ")"
	"     ALL INNER JOIN (" RUNNING_TASKS_SQL ") USING (fingerprint, tid))"
	"   ALL INNER JOIN (" CORE_NAMES_SQL ") USING fingerprint)"
	" USING (fingerprint, task_idx)"
	" UNION ALL"
	" SELECT fingerprint, path AS core, signature_hash, idx + task_nframes AS frame, kind,"
	" " PC_HEX " AS pc, function, file, line, module, inline_depth, runtime, detail FROM"
	" (SELECT fingerprint, thread_idx, idx, kind, pc, function, file, line, module, inline_depth,"
	"   runtime, detail FROM %1$s.frames%2$s FINAL)"
	" ALL INNER JOIN"
	" (SELECT fingerprint, thread_idx, task_nframes, path, signature_hash FROM"
	"   (SELECT fingerprint, thread_idx, task_nframes FROM (" CRASHING_THREADS_SQL ")"
	"     ANY LEFT JOIN (" RUNNING_TASKS_SQL ") USING (fingerprint, tid))"
	"   ALL INNER JOIN (" CORE_NAMES_SQL ") USING fingerprint)"
	" USING (fingerprint, thread_idx)";

static const char last_events_sql[] =
	"SELECT fingerprint, core, recency, e.1 AS recorder, e.2 AS event_order, e.3 AS timestamp,"
	" e.4 AS location, e.5 AS function, e.6 AS message, e.7 AS in_flight FROM"
	" (SELECT fingerprint, any(path) AS core,"
	"   arraySlice(arrayReverseSort(x -> x.2, groupArray((recorder, event_order, timestamp,"
	"     location, function, message, in_flight))), 1, 10) AS ev FROM"
	"   (SELECT fingerprint, recorder_idx, event_order, timestamp, location, function, message,"
	"     in_flight FROM %1$s.recorder_events%2$s FINAL)"
	"   ALL INNER JOIN"
	"   (SELECT fingerprint, recorder_idx, recorder, path FROM"
	"     (SELECT fingerprint, idx AS recorder_idx, name AS recorder FROM %1$s.recorders%2$s FINAL)"
	"     ALL INNER JOIN (SELECT fingerprint, path FROM %1$s.cores%2$s FINAL) USING fingerprint)"
	"   USING (fingerprint, recorder_idx)"
	"  GROUP BY fingerprint)"
	" ARRAY JOIN ev AS e, arrayEnumerate(ev) AS recency";

/* A core's crash time (crashed_at, else the file's mtime) and its program
 * (the executable's file name). */
#define SEEN_SQL \
	"SELECT signature_hash, signature, path, analysed_at, build_id," \
	" ifNull(crashed_at, file_mtime) AS seen_at," \
	" ifNull(replaceRegexpOne(executable, '^.*/', ''), '') AS program FROM %1$s.cores FINAL"
#define BUILDS_SQL \
	"SELECT program, ifNull(build_id, '') AS bid, min(seen_at) AS first_at FROM (" SEEN_SQL ")" \
	" WHERE isNotNull(build_id) GROUP BY program, bid"

/* As SQLite's top_signatures: a bucket's build-ids in the order they were
 * first seen; new = every core from the newest build of its program (the
 * build first seen last), which has older builds. */
static const char top_signatures_sql[] =
	"SELECT signature_hash, any(signature) AS signature, sum(n) AS cores,"
	" min(first) AS first_seen, max(last) AS last_seen, sum(n7) AS last_7_days,"
	" if(empty(groupArrayIf(bid, has_build)), NULL, arrayStringConcat(arrayFilter((b, i) ->"
	"   indexOf(arrayMap(x -> x.2, arraySort(groupArrayIf((first, bid), has_build))), b) = i,"
	"   arrayMap(x -> x.2, arraySort(groupArrayIf((first, bid), has_build))),"
	"   arrayEnumerate(groupArrayIf(bid, has_build))), ' ')) AS build_ids,"
	" toUInt8(min(is_new)) AS new, argMax(example, example_key) AS example_core FROM"
	" (SELECT signature_hash, any(signature) AS signature, count() AS n, min(seen_at) AS first,"
	"   max(seen_at) AS last,"
	"   countIf(parseDateTimeBestEffortOrNull(seen_at) >= now() - 7 * 86400) AS n7,"
	"   ifNull(build_id, '') AS bid, isNotNull(build_id) AS has_build,"
	"   argMax(path, (seen_at, analysed_at, path)) AS example,"
	"   max((seen_at, analysed_at, path)) AS example_key,"
	"   (program, bid) GLOBAL IN"
	"     (SELECT program, bid FROM (" BUILDS_SQL ") GLOBAL ALL INNER JOIN"
	"       (SELECT program, max(first_at) AS first_at FROM (" BUILDS_SQL ")"
	"        GROUP BY program HAVING count() > 1) USING (program, first_at)) AS is_new"
	"  FROM (" SEEN_SQL ") GROUP BY signature_hash, program, build_id)"
	" GROUP BY signature_hash"
	" ORDER BY cores DESC, last_seen DESC, signature_hash NULLS FIRST";

/* View NAME with the query FMT (see above): replaced, as views hold no
 * data, so `store init` brings them up to date. */
static int create_view(struct rep_ch *ch, const char *name, const char *fmt, bool per_shard,
		       char *why, size_t whylen)
{
	const char *db = rep_ch_database(ch), *cluster = rep_ch_cluster(ch);
	bool local = cluster && per_shard;
	char *body = printf_sql(fmt, db, local ? "_local" : "");
	if (!body) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	int rc = -1;
	if (ddl(ch, printf_sql("DROP TABLE IF EXISTS %s.%s%s", db, name, local ? "_local" : ""), why,
		whylen) != 0 ||
	    ddl(ch, printf_sql("CREATE VIEW %s.%s%s AS %s", db, name, local ? "_local" : "", body), why,
		whylen) != 0)
		goto out;
	if (local && (ddl(ch, printf_sql("DROP TABLE IF EXISTS %s.%s", db, name), why, whylen) != 0 ||
		      ddl(ch, printf_sql("CREATE TABLE %s.%s AS %s.%s_local ENGINE = Distributed(%s, %s,"
					 " %s_local)", db, name, db, name, cluster, db, name), why,
			  whylen) != 0))
		goto out;
	rc = 0;
out:
	free(body);
	return rc;
}

/* Whether DB.TABLE has COLUMN: *HAS.  (ClickHouse 18.16 has no ADD
 * COLUMN IF NOT EXISTS.) */
static int has_column(struct rep_ch *ch, const char *table, const char *column, bool *has,
		      char *why, size_t whylen)
{
	char *db = rep_ch_quote(rep_ch_database(ch)), *reply = NULL, *sql = NULL;
	int rc = -1;
	if (!db || !(sql = printf_sql("SELECT count() FROM system.columns WHERE database = %s AND"
				       " table = '%s' AND name = '%s'", db, table, column))) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	if (rep_ch_run_retry(ch, sql, NULL, 0, NULL, why, whylen) != 0 ||
	    rep_ch_run(ch, sql, NULL, 0, NULL, &reply, why, whylen) != 0)
		goto out;
	*has = reply[0] != '0';
	rc = 0;
out:
	free(reply);
	free(sql);
	free(db);
	return rc;
}

/* The columns added to a table after stores were made without them, in
 * the order they were added: each is last of its table in ch_tables at
 * the time, so ALTER TABLE's ADD COLUMN (which appends) leaves an older
 * store with the columns of a new one, in their order.  A store made
 * before cores had `arch` held x86_64 cores only (the only machine read
 * then); the crash-handler columns are NULL for every core stored before
 * them, as in SQLite's migration to version 8; the goroutine columns of
 * tasks NULL (locked 0), and the Go crash columns of cores NULL, as in its
 * migration to version 9; the core file's mtime NULL, as in 10; the term
 * set '' (none yet), which `store init` then fills (fill_term_sets()). */
static const struct {
	const char *table, *column, *type;
} ch_added_columns[] = {
	{"cores", "arch", "String DEFAULT 'x86_64'"},
	{"cores", "caught_signal", "Nullable(Int64)"},
	{"cores", "caught_signal_name", "Nullable(String)"},
	{"cores", "caught_code", "Nullable(Int64)"},
	{"cores", "caught_code_name", "Nullable(String)"},
	{"cores", "caught_address", "Nullable(Int64)"},
	{"cores", "handled_by", "Nullable(String)"},
	{"cores", "handler_action", "Nullable(String)"},
	{"frames", "role", "Nullable(String)"},
	{"task_frames", "role", "Nullable(String)"},
	{"tasks", "created_by", "Nullable(String)"},
	{"tasks", "created_file", "Nullable(String)"},
	{"tasks", "created_line", "Nullable(Int64)"},
	{"tasks", "wait_since", "Nullable(Int64)"},
	{"tasks", "locked", "UInt8 DEFAULT 0"},
	{"cores", "go_crash", "Nullable(String)"},
	{"cores", "go_signal", "Nullable(Int64)"},
	{"cores", "go_signal_name", "Nullable(String)"},
	{"cores", "go_message", "Nullable(String)"},
	{"cores", "file_mtime", "Nullable(String)"},
	{"cores", "term_set", "String DEFAULT ''"},
};

/* Column K of ch_added_columns added to the table TABLE SUFFIX ("_local"
 * or "", the Distributed one) when it lacks it. */
static int add_column(struct rep_ch *ch, size_t k, const char *suffix, char *why, size_t whylen)
{
	char *table = printf_sql("%s%s", ch_added_columns[k].table, suffix);
	bool has = false;
	int rc = -1;
	if (!table)
		snprintf(why, whylen, "out of memory");
	else if (has_column(ch, table, ch_added_columns[k].column, &has, why, whylen) == 0)
		rc = has ? 0 : ddl(ch, printf_sql("ALTER TABLE %s.%s ADD COLUMN %s %s",
						  rep_ch_database(ch), table,
						  ch_added_columns[k].column, ch_added_columns[k].type),
				   why, whylen);
	free(table);
	return rc;
}

/* tasks SUFFIX made before goroutines: its state takes their words too.
 * A type already wide enough is left alone. */
static int widen_task_state(struct rep_ch *ch, const char *suffix, char *why, size_t whylen)
{
	char *db = rep_ch_quote(rep_ch_database(ch)), *reply = NULL;
	char *sql = db ? printf_sql("SELECT count() FROM system.columns WHERE database = %s AND"
				    " table = 'tasks%s' AND name = 'state' AND"
				    " position(type, 'waiting') = 0", db, suffix) : NULL;
	int rc = -1;
	if (!sql)
		snprintf(why, whylen, "out of memory");
	else if (rep_ch_run_retry(ch, sql, NULL, 0, NULL, why, whylen) == 0 &&
		 rep_ch_run(ch, sql, NULL, 0, NULL, &reply, why, whylen) == 0)
		rc = reply[0] == '0' ? 0 : ddl(ch, printf_sql("ALTER TABLE %s.tasks%s MODIFY COLUMN state "
							   TASK_STATE_TYPE, rep_ch_database(ch), suffix),
					       why, whylen);
	free(reply);
	free(sql);
	free(db);
	return rc;
}

/* A store made before some of the columns gets them, on the local and
 * the Distributed tables of this shard. */
static int add_columns(struct rep_ch *ch, char *why, size_t whylen)
{
	static const char *const suffixes[] = {"_local", ""};
	size_t n = sizeof(ch_added_columns) / sizeof(ch_added_columns[0]);
	for (size_t i = rep_ch_cluster(ch) ? 0 : 1; i < 2; i++) {
		for (size_t k = 0; k < n; k++)
			if (add_column(ch, k, suffixes[i], why, whylen) != 0)
				return -1;
		if (widen_task_state(ch, suffixes[i], why, whylen) != 0)
			return -1;
	}
	return 0;
}

/* ---- What the served pages read ---------------------------------------
 *
 * FINAL over every core costs a page most of its time, so the pages read
 * aggregates that materialized views keep as rows arrive, each exact however
 * often a row is written again (an ingest retried, a resign): bucket_days
 * counts a group's distinct fingerprints and keeps min/max/argMax, which a
 * second copy of a row leaves unchanged; set_days does the same per term
 * set (a search reads the sets holding a name in term_names, which the
 * writer fills, then their groups here); search_names holds names, a second
 * copy of which is the same name.  Only a core whose rows differ in group
 * (resign changed its signature or its term set) is in two groups, until
 * the old row is merged away and the aggregate counted again (resign on
 * one server, `store init` on each shard): aggregate_marks says when that
 * may be so ("Marks" below), and the reader then reads cores itself.
 * Group columns are '' for NULL: 18.16 keys no Nullable; the example's
 * nullable fields travel as text with a mask, as an argMax of a tuple
 * holding Nullable crashes 18.16 when stored. */
#define AGG_SEEN "ifNull(crashed_at, file_mtime)"
#define AGG_KEY "concat(ifNull(" AGG_SEEN ", ''), ' ', analysed_at, ' ', path)"
static const char bucket_days_columns[] =
	"hash String, exe String, build String, arch String, cause String, day String,"
	" sig AggregateFunction(max, String), n AggregateFunction(uniqExact, String),"
	" first_at AggregateFunction(min, String), last_at AggregateFunction(max, String),"
	" ex_key AggregateFunction(max, String),"
	" ex AggregateFunction(argMax, Tuple(String, String, String, String, String, UInt8), String)";
#define BUCKET_DAYS_KEY "hash, exe, build, arch, cause, day"
/* A cores row's group of BUCKET_DAYS_KEY. */
#define BUCKET_DAYS_GROUP \
	"ifNull(signature_hash, '') AS hash, ifNull(executable, '') AS exe," \
	" ifNull(build_id, '') AS build, arch, ifNull(cause_kind, '') AS cause," \
	" substring(ifNull(" AGG_SEEN ", ''), 1, 10) AS day"
/* %1$s the cores table (or a subquery of it when backfilling). */
static const char bucket_days_sql[] =
	"SELECT " BUCKET_DAYS_GROUP ", maxState(signature) AS sig,"
	" uniqExactState(fingerprint) AS n, minState(" AGG_SEEN ") AS first_at,"
	" maxState(" AGG_SEEN ") AS last_at, maxState(" AGG_KEY ") AS ex_key,"
	" argMaxState((fingerprint, ifNull(cause_kind, ''), ifNull(cause_summary, ''), path,"
	"   ifNull(abort_message, ''), toUInt8(isNull(cause_kind) + 2 * isNull(cause_summary)"
	"   + 4 * isNull(abort_message))), " AGG_KEY ") AS ex"
	" FROM %1$s GROUP BY " BUCKET_DAYS_KEY;
/* bucket_days' groups per term set: the cores of each (n) and the last one
 * (last_at), as bucket_days counts them. */
static const char set_days_columns[] =
	"term_set String, hash String, exe String, build String, arch String, cause String,"
	" day String, n AggregateFunction(uniqExact, String), last_at AggregateFunction(max, String)";
#define SET_DAYS_KEY "term_set, " BUCKET_DAYS_KEY
static const char set_days_sql[] =
	"SELECT term_set, " BUCKET_DAYS_GROUP ", uniqExactState(fingerprint) AS n,"
	" maxState(" AGG_SEEN ") AS last_at FROM %1$s GROUP BY " SET_DAYS_KEY;
#define TERMS_OF(cols) "arrayJoin(arrayFilter(x -> x != '', [" cols "]))"
#define FRAME_NAMES TERMS_OF("ifNull(function, ''), ifNull(module, ''), ifNull(file, '')")

/* The materialized views, each named after the table it fills, on the
 * table SOURCE of this server (_local on a cluster's shard). */
struct ch_view_def {
	const char *name, *source, *sql;    /* sql: %1$s the source table */
};
static const struct ch_view_def ch_views[] = {
	{"bucket_days_mv", "cores", bucket_days_sql},
	{"set_days_mv", "cores", set_days_sql},
	{"search_names_frames_mv", "frames", "SELECT DISTINCT " FRAME_NAMES " AS name FROM %1$s"},
	{"search_names_task_frames_mv", "task_frames", "SELECT DISTINCT " FRAME_NAMES " AS name FROM %1$s"},
	{"search_names_cores_mv", "cores",
	 "SELECT DISTINCT assumeNotNull(cause_summary) AS name FROM %1$s WHERE isNotNull(cause_summary)"},
};

/* COUNTS: the aggregate counts cores (n, a uniqExact of fingerprints) in
 * groups of ORDER, each core in one group when it is exact. */
static const struct {
	const char *name, *columns, *engine, *order;
	bool counts;
} ch_aggregates[] = {
	{"bucket_days", bucket_days_columns, "AggregatingMergeTree", BUCKET_DAYS_KEY, true},
	{"set_days", set_days_columns, "AggregatingMergeTree", SET_DAYS_KEY, true},
	{"search_names", "name String", "ReplacingMergeTree", "name", false},
};

/* What stores made before term sets held and a store no longer has: the
 * views first, then the tables they filled (and, with a cluster, the
 * shard's local table under the Distributed one). */
static const struct {
	const char *name;
	bool local;
} ch_dropped[] = {
	{"search_terms_frames_mv", false},
	{"search_terms_task_frames_mv", false},
	{"search_terms", true},
};

/* The aggregate a view fills: its name up to "_frames_mv", "_cores_mv"... */
static const char *view_target(const struct ch_view_def *v)
{
	for (size_t i = 0; i < sizeof(ch_aggregates) / sizeof(ch_aggregates[0]); i++)
		if (strncmp(v->name, ch_aggregates[i].name, strlen(ch_aggregates[i].name)) == 0)
			return ch_aggregates[i].name;
	return NULL;
}

/* The first line of SQL's answer (a number, 0 when empty) in *V. */
static int ask_number(struct rep_ch *ch, char *sql, long long *v, char *why, size_t whylen)
{
	char *reply = NULL;
	int rc = -1;
	if (!sql)
		snprintf(why, whylen, "out of memory");
	else if (rep_ch_run_retry(ch, sql, NULL, 0, NULL, why, whylen) == 0 &&
		 rep_ch_run(ch, sql, NULL, 0, NULL, &reply, why, whylen) == 0) {
		*v = atoll(reply);
		rc = 0;
	}
	free(reply);
	free(sql);
	return rc;
}

/* Whether this server's TABLE, an aggregate counting cores in groups of
 * KEY, holds every fingerprint in one group. */
static int counts_exact(struct rep_ch *ch, const char *table, const char *key, bool *exact,
			char *why, size_t whylen)
{
	long long ok = 0;
	if (ask_number(ch, printf_sql("SELECT sum(c) = uniqExactMerge(s) FROM (SELECT uniqExactMerge(n)"
				      " AS c, uniqExactMergeState(n) AS s FROM %s.%s GROUP BY %s)",
				      rep_ch_database(ch), table, key), &ok, why, whylen) != 0)
		return -1;
	*exact = ok == 1;
	return 0;
}

/* Fill this server's aggregate TABLE with what its views make of every
 * stored row (not FINAL: a core whose rows disagree on its group must show
 * in bucket_days as such), those of versions from SINCE only when SINCE > 0
 * (cores). */
static int backfill(struct rep_ch *ch, const char *target, const char *table, long long since,
		    char *why, size_t whylen)
{
	const char *db = rep_ch_database(ch), *suffix = rep_ch_cluster(ch) ? "_local" : "";
	for (size_t i = 0; i < sizeof(ch_views) / sizeof(ch_views[0]); i++) {
		const struct ch_view_def *v = &ch_views[i];
		if (strcmp(view_target(v), target) != 0)
			continue;
		char *src = since > 0 ? printf_sql("(SELECT * FROM %s.%s%s WHERE version >= %lld)", db,
						   v->source, suffix, since)
				      : printf_sql("%s.%s%s", db, v->source, suffix);
		char *body = src ? printf_sql(v->sql, src) : NULL;
		int rc = body ? ddl(ch, printf_sql("INSERT INTO %s.%s %s", db, table, body), why, whylen)
			      : (snprintf(why, whylen, "out of memory"), -1);
		free(src);
		free(body);
		if (rc != 0)
			return -1;
	}
	return 0;
}

/* This server's aggregate NAME (one that counts cores: bucket_days,
 * set_days) counted again from cores, whose replaced rows the caller had
 * merged away, into a new table that then takes its name; the rows written
 * meanwhile (which went to the old one) are added again after. */
static int aggregate_rebuild(struct rep_ch *ch, const char *name, char *why, size_t whylen)
{
	const char *db = rep_ch_database(ch), *suffix = rep_ch_cluster(ch) ? "_local" : "";
	long long since = 0;
	char next[96], old[96], live[96];
	snprintf(live, sizeof(live), "%s%s", name, suffix);
	snprintf(next, sizeof(next), "%s%s_next", name, suffix);
	snprintf(old, sizeof(old), "%s%s_old", name, suffix);
	if (ddl(ch, printf_sql("DROP TABLE IF EXISTS %s.%s", db, next), why, whylen) != 0 ||
	    ddl(ch, printf_sql("DROP TABLE IF EXISTS %s.%s", db, old), why, whylen) != 0 ||
	    ddl(ch, printf_sql("CREATE TABLE %s.%s AS %s.%s", db, next, db, live), why, whylen) != 0 ||
	    ask_number(ch, printf_sql("SELECT max(version) FROM %s.cores%s", db, suffix), &since, why,
		       whylen) != 0 ||
	    backfill(ch, name, next, 0, why, whylen) != 0 ||
	    ddl(ch, printf_sql("RENAME TABLE %1$s.%2$s TO %1$s.%3$s, %1$s.%4$s TO %1$s.%2$s", db, live,
			       old, next), why, whylen) != 0 ||
	    backfill(ch, name, live, since ? since : 1, why, whylen) != 0)
		return -1;
	return ddl(ch, printf_sql("DROP TABLE IF EXISTS %s.%s", db, old), why, whylen);
}

/* This server's aggregates NAMES[0 .. N) counted again from cores, once
 * its replaced rows are merged away.  A merge that does not happen leaves
 * them inexact, as they were, and the pages reading cores instead. */
static int aggregates_rebuild(struct rep_ch *ch, const char *const *names, size_t n, char *why,
			      size_t whylen)
{
	if (n == 0)
		return 0;
	if (ddl(ch, printf_sql("OPTIMIZE TABLE %s.cores%s FINAL", rep_ch_database(ch),
			       rep_ch_cluster(ch) ? "_local" : ""), why, whylen) != 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (aggregate_rebuild(ch, names[i], why, whylen) != 0)
			return -1;
	return 0;
}

/* ---- Marks: whether the aggregates are exact ------------------------
 *
 * Whether bucket_days and set_days hold every core in one group is known
 * for sure only by merging all their states (counts_exact()), which on a
 * large store costs a search more than its page's whole time; the few rows
 * of aggregate_marks say it instead.  Only a cores row written again with
 * another group makes an aggregate inexact, and only resign and store
 * init's term-set fill write one: before its first such row each records
 * that the aggregates may be inexact from then on ("rewriting": resign, for
 * every shard, shard ''; "filling": the fill, for its own shard), and
 * resign once more after its last ("rewritten").  When a shard's
 * aggregates are found exact again (counts_exact(), after
 * aggregates_rebuild() when need be), a "rebuilt" mark of that shard says
 * they are as of the newest mark read before they were checked; found
 * inexact still (a merge that did not happen), an "inexact" mark of the
 * shard says so.  A search takes the aggregates as exact when every
 * shard's newest "rebuilt" is at or after the newest mark that concerns it
 * (reports/pages.c); a store without marks is exact (store init built its
 * aggregates).  A shard is its shard_num in system.clusters (is_local) on
 * a cluster, '' on one server.
 *
 * The values are ordered without trusting the hosts' clocks to agree: a
 * mark that may make aggregates inexact takes the writer's version clock
 * (next_version()), or one more than the newest mark there is when that
 * clock is behind; resign reads the marks again once its mark is written
 * and writes it again above any written meanwhile, so its mark is above
 * whatever a rebuild read before it (a rebuild that ran while it was
 * being written is not taken for one after it).  A "rebuilt" mark takes
 * no clock of its own: it copies the newest mark it read, so a skewed
 * clock only makes the values jump, never a shard look exact.  While
 * resign's newest mark is "rewriting" (a resign running, or one that
 * died: the next to complete closes it) no rebuild is marked, as it may
 * miss the rows written after it.
 *
 * On a cluster resign's marks go through the Distributed table (resign
 * needs every shard), a shard's own to its table (store init runs while
 * another shard may have none yet); store init reads them through the
 * Distributed table, or from its shard's table alone when another shard's
 * cannot be read, which can only leave its shard looking inexact. */
static const struct ch_table_def marks_table = {
	"aggregate_marks", "kind String, shard String, at UInt64", "kind, shard", "at", "shard",
};

/* The marks as shard SHARD sees them: the newest that may have left its
 * aggregates inexact (DIRTY: its own and every shard's), its newest
 * "rebuilt", the newest of any kind, and whether resign's newest is
 * "rewriting" (OPEN). */
struct ch_marks {
	uint64_t dirty, rebuilt, newest;
	bool open;
};

/* The marks of SHARD from this server's table (LOCAL) or every shard's. */
static int marks_read(struct rep_ch *ch, const char *shard, bool local, struct ch_marks *m,
		      char *why, size_t whylen)
{
	char *q = rep_ch_quote(shard);
	char *sql = q ? printf_sql("SELECT maxIf(at, kind != 'rebuilt' AND shard IN ('', %2$s)),"
				   " maxIf(at, kind = 'rebuilt' AND shard = %2$s), max(at),"
				   " argMaxIf(kind, at, kind IN ('rewriting', 'rewritten')) = 'rewriting'"
				   " FROM %1$s.%3$s%4$s", rep_ch_database(ch), q, marks_table.name,
				   local && rep_ch_cluster(ch) ? "_local" : "") : NULL;
	json_t *res = NULL, *row;
	int rc = -1;
	if (!sql)
		snprintf(why, whylen, "out of memory");
	/* every shard's once (a shard without the table yet fails at once, as
	 * a transient error retried would for seconds), this one's with retries */
	else if (rep_ch_select(ch, sql, !local && rep_ch_cluster(ch), &res, why, whylen) == 0) {
		row = json_array_get(json_object_get(res, "data"), 0);
		m->dirty = (uint64_t)json_integer_value(json_array_get(row, 0));
		m->rebuilt = (uint64_t)json_integer_value(json_array_get(row, 1));
		m->newest = (uint64_t)json_integer_value(json_array_get(row, 2));
		m->open = json_integer_value(json_array_get(row, 3)) == 1;
		rc = 0;
	}
	json_decref(res);
	free(sql);
	free(q);
	return rc;
}

/* Mark KIND of SHARD, value AT, into this server's table (LOCAL) or
 * through the Distributed one. */
static int mark_write(struct rep_ch *ch, const char *kind, const char *shard, uint64_t at,
		      bool local, char *why, size_t whylen)
{
	char *q = rep_ch_quote(shard);
	char *sql = q ? printf_sql("INSERT INTO %s.%s%s (kind, shard, at) VALUES ('%s', %s, %llu)",
				   rep_ch_database(ch), marks_table.name,
				   local && rep_ch_cluster(ch) ? "_local" : "", kind, q,
				   (unsigned long long)at) : NULL;
	int rc = sql ? rep_ch_run_retry(ch, sql, NULL, 0, CH_INSERT_SETTINGS, why, whylen)
		     : (snprintf(why, whylen, "out of memory"), -1);
	free(sql);
	free(q);
	return rc;
}

/* Record, before the first cores row written again with another group,
 * that the aggregates may be inexact from now: resign's KIND for every
 * shard, or the fill's ("filling") for this server's SHARD only (LOCAL).
 * NOW is the writer's version clock. */
static int mark_inexact(struct rep_ch *ch, const char *kind, const char *shard, bool local,
			uint64_t now, char *why, size_t whylen)
{
	struct ch_marks m;
	uint64_t at = now;
	for (int tries = 0; tries < 4; tries++) {
		if (marks_read(ch, shard, local, &m, why, whylen) != 0)
			return -1;
		if (tries > 0 && m.newest <= at)
			return 0;   /* none newer meanwhile */
		at = m.newest < at ? at : m.newest + 1;
		if (mark_write(ch, kind, shard, at, local, why, whylen) != 0)
			return -1;
		if (local)
			return 0;   /* this shard's: only its own store init writes them */
	}
	return 0;
}

/* This server's shard in the marks: '' on one server; on a cluster its
 * shard_num in system.clusters, *KNOWN false (and '') when it is none of
 * the cluster's shards there. */
static int this_shard(struct rep_ch *ch, char shard[24], bool *known, char *why, size_t whylen)
{
	const char *cluster = rep_ch_cluster(ch);
	json_t *res = NULL, *row;
	shard[0] = '\0';
	*known = true;
	if (!cluster)
		return 0;
	char *sql = printf_sql("SELECT toString(min(shard_num)), count() FROM system.clusters"
			       " WHERE cluster = '%s' AND is_local = 1", cluster);   /* a plain name */
	int rc = -1;
	if (!sql)
		snprintf(why, whylen, "out of memory");
	else if (rep_ch_select(ch, sql, false, &res, why, whylen) == 0) {
		row = json_array_get(json_object_get(res, "data"), 0);
		*known = json_integer_value(json_array_get(row, 1)) > 0;
		if (*known)
			snprintf(shard, 24, "%s", json_string_value(json_array_get(row, 0)) ?
				 json_string_value(json_array_get(row, 0)) : "");
		rc = 0;
	}
	json_decref(res);
	free(sql);
	return rc;
}

/* Whether each of this server's aggregates that count cores (SUFFIX: its
 * tables' suffix) holds every core in one group: those that do not into
 * INEXACT[0 .. *N), of those in ONLY (NULL: all). */
static int aggregates_inexact(struct rep_ch *ch, const char *const *only, size_t nonly,
			      const char **inexact, size_t *n, char *why, size_t whylen)
{
	const char *suffix = rep_ch_cluster(ch) ? "_local" : "";
	*n = 0;
	for (size_t i = 0; i < sizeof(ch_aggregates) / sizeof(ch_aggregates[0]); i++) {
		char table[64];
		bool exact = true, asked = !only;
		for (size_t k = 0; k < nonly; k++)
			asked = asked || strcmp(only[k], ch_aggregates[i].name) == 0;
		if (!ch_aggregates[i].counts || !asked)
			continue;
		snprintf(table, sizeof(table), "%s%s", ch_aggregates[i].name, suffix);
		if (counts_exact(ch, table, ch_aggregates[i].order, &exact, why, whylen) != 0)
			return -1;
		if (!exact)
			inexact[(*n)++] = ch_aggregates[i].name;
	}
	return 0;
}

/* This server's aggregates that count cores, counted again when one holds
 * a core in two groups (a resign, term sets filled), then marked exact as
 * of the newest mark read before they were checked, unless a resign is
 * rewriting.  SHARD: this server's in the marks (KNOWN false: none, and
 * nothing is marked).  WHO says what runs it in a note. */
static int aggregates_recount(struct rep_ch *ch, const char *shard, bool known, const char *who,
			      char *why, size_t whylen)
{
	const char *inexact[sizeof(ch_aggregates) / sizeof(ch_aggregates[0])];
	const char *left[sizeof(ch_aggregates) / sizeof(ch_aggregates[0])];
	size_t n = 0, nleft = 0;
	struct ch_marks m;
	char note[256];
	/* before anything is counted: a mark written later is newer; another
	 * shard's unreadable (no table there yet), this one's marks alone,
	 * which are never newer than every shard's */
	if (marks_read(ch, shard, false, &m, why, whylen) != 0 &&
	    (!rep_ch_cluster(ch) || marks_read(ch, shard, true, &m, why, whylen) != 0))
		return -1;
	if (aggregates_inexact(ch, NULL, 0, inexact, &n, why, whylen) != 0 ||
	    aggregates_rebuild(ch, inexact, n, why, whylen) != 0 ||
	    (n && aggregates_inexact(ch, inexact, n, left, &nleft, why, whylen) != 0))
		return -1;
	if (nleft) {   /* a merge that did not happen: readers must read cores */
		snprintf(note, sizeof(note), "%s still holds a core in two groups (its old row not"
			 " merged away): the served searches read cores until store init runs again",
			 left[0]);
		rep_say(stderr, who, note);
		return known ? mark_inexact(ch, "inexact", shard, true, wall_us(), why, whylen) : 0;
	}
	if (m.dirty == 0 || m.rebuilt >= m.dirty)
		return 0;   /* nothing to mark, or marked so already */
	if (m.open || !known) {
		if (m.open)
			snprintf(note, sizeof(note), "a resign is rewriting cores, or ended before it"
				 " finished: the served searches read cores until a resign completes and"
				 " store init runs again");
		else
			snprintf(note, sizeof(note), "this server is none of cluster %s's shards in"
				 " system.clusters (is_local): its aggregates are not marked exact",
				 rep_ch_cluster(ch));
		rep_say(stderr, who, note);
		return 0;
	}
	return mark_write(ch, "rebuilt", shard, m.dirty, true, why, whylen);
}

/* The views and tables of ch_dropped, gone. */
static int drop_old(struct rep_ch *ch, char *why, size_t whylen)
{
	const char *db = rep_ch_database(ch);
	for (size_t i = 0; i < sizeof(ch_dropped) / sizeof(ch_dropped[0]); i++)
		if (ddl(ch, printf_sql("DROP TABLE IF EXISTS %s.%s", db, ch_dropped[i].name), why,
			whylen) != 0 ||
		    (ch_dropped[i].local && rep_ch_cluster(ch) &&
		     ddl(ch, printf_sql("DROP TABLE IF EXISTS %s.%s_local", db, ch_dropped[i].name), why,
			 whylen) != 0))
			return -1;
	return 0;
}

/* The aggregates and their views, made when missing and filled from what
 * is stored (those left inexact are counted again by aggregates_recount()). */
static int create_aggregates(struct rep_ch *ch, char *why, size_t whylen)
{
	const char *db = rep_ch_database(ch), *cluster = rep_ch_cluster(ch);
	const char *suffix = cluster ? "_local" : "";
	size_t nagg = sizeof(ch_aggregates) / sizeof(ch_aggregates[0]);
	bool made[sizeof(ch_aggregates) / sizeof(ch_aggregates[0])];
	for (size_t i = 0; i < nagg; i++) {
		long long there = 0;
		if (ask_number(ch, printf_sql("EXISTS TABLE %s.%s%s", db, ch_aggregates[i].name, suffix),
			       &there, why, whylen) != 0 ||
		    ddl(ch, printf_sql("CREATE TABLE IF NOT EXISTS %s.%s%s (%s) ENGINE = %s ORDER BY (%s)", db,
				       ch_aggregates[i].name, suffix, ch_aggregates[i].columns,
				       ch_aggregates[i].engine, ch_aggregates[i].order), why, whylen) != 0 ||
		    (cluster && ddl(ch, printf_sql("CREATE TABLE IF NOT EXISTS %s.%s AS %s.%s_local ENGINE ="
						   " Distributed(%s, %s, %s_local)", db, ch_aggregates[i].name,
						   db, ch_aggregates[i].name, cluster, db,
						   ch_aggregates[i].name), why, whylen) != 0))
			return -1;
		made[i] = !there;
	}
	for (size_t i = 0; i < sizeof(ch_views) / sizeof(ch_views[0]); i++) {
		const struct ch_view_def *v = &ch_views[i];
		char *src = printf_sql("%s.%s%s", db, v->source, suffix);
		char *body = src ? printf_sql(v->sql, src) : NULL;
		int rc = body ? ddl(ch, printf_sql("CREATE MATERIALIZED VIEW IF NOT EXISTS %s.%s TO %s.%s%s AS %s",
						   db, v->name, db, view_target(v), suffix, body), why, whylen)
			      : (snprintf(why, whylen, "out of memory"), -1);
		free(src);
		free(body);
		if (rc != 0)
			return -1;
	}
	/* made before its views: what they missed is added (twice is once) */
	for (size_t i = 0; i < nagg; i++) {
		char table[64];
		snprintf(table, sizeof(table), "%s%s", ch_aggregates[i].name, suffix);
		if (made[i] && backfill(ch, ch_aggregates[i].name, table, 0, why, whylen) != 0)
			return -1;
	}
	return 0;
}

static int fill_term_sets(struct rep_ch *ch, bool all, const char *shard, char *why,
			  size_t whylen);

int rep_ch_store_init(const char *url, char *why, size_t whylen)
{
	struct rep_ch *ch = NULL;
	int rc = -1;
	if (rep_ch_open(url, &ch, why, whylen) != 0)
		return -1;
	long long had_terms = 0;
	if (ddl(ch, printf_sql("CREATE DATABASE IF NOT EXISTS %s", rep_ch_database(ch)), why,
		whylen) != 0 ||
	    ask_number(ch, printf_sql("EXISTS TABLE %s.%s%s", rep_ch_database(ch),
				      ch_tables[T_TERMS].name, rep_ch_cluster(ch) ? "_local" : ""),
		       &had_terms, why, whylen) != 0)
		goto out;
	for (int t = 0; t < T_COUNT; t++)
		if (create_table(ch, &ch_tables[t], why, whylen) != 0)
			goto out;
	char shard[24];
	bool known;
	if (create_table(ch, &marks_table, why, whylen) != 0 ||
	    this_shard(ch, shard, &known, why, whylen) != 0 ||
	    add_columns(ch, why, whylen) != 0 || drop_old(ch, why, whylen) != 0)
		goto out;
	/* cores stored before term sets get theirs (every core of the shard
	 * when its term_names is new), then each aggregate holding a core in
	 * two groups is counted again, and the shard's aggregates marked exact */
	if (create_view(ch, "crash_stacks", crash_stacks_sql, true, why, whylen) != 0 ||
	    create_view(ch, "last_events", last_events_sql, true, why, whylen) != 0 ||
	    create_view(ch, "top_signatures", top_signatures_sql, false, why, whylen) != 0 ||
	    create_aggregates(ch, why, whylen) != 0 ||
	    fill_term_sets(ch, had_terms != 1, shard, why, whylen) != 0 ||
	    aggregates_recount(ch, shard, known, "store init", why, whylen) != 0)
		goto out;
	rc = 0;
out:
	rep_ch_close(ch);
	return rc;
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

static int add_row(struct ch_rows *r, json_t *obj)
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
	return add_row(rows, row_of(names, values, ncols < n ? ncols : n));
}

static const char *const core_cols[] = {
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
static int add_term_names(struct rep_ch_store *st, const char *const *names, size_t n,
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
 * fill_term_sets() reads them back. */
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
			char **slot = core_array_push(&owned, &nowned, &cap, sizeof(*owned));
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
	rc = add_term_names(st, names, n, key);
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
	return ROW(&st->rows[T_CORES], core_cols,
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
		   rep_json_text(an->cause.summary), j_u64(next_version(st)),
		   rep_json_text(rep_core_arch(an)), j_opt(c.has_signal, (uint64_t)c.signal),
		   rep_json_text(c.signal_name), j_opt(c.has_code, (uint64_t)c.code),
		   rep_json_text(c.code_name), j_opt(c.has_address, c.address),
		   rep_json_text(c.handled_by), rep_json_text(c.action), rep_json_text(g.crash),
		   j_opt(g.has_signal, (uint64_t)g.signal), rep_json_text(g.signal_name),
		   rep_json_text(g.message), rep_json_text(rep_core_file_mtime(an, mtime)),
		   json_string(key));
}

/* A frame's columns: a thread's frames have all of them, a task's the
 * first NTFRAME_COLS, a suspended chain's the first NSFRAME_COLS (as
 * SQLite's insert_frame takes the leading ones); the second names the
 * owner. */
static const char *const frame_cols[] = {
	"fingerprint", "thread_idx", "idx", "kind", "pc", "function", "function_offset", "module",
	"module_offset", "file", "line", "inlined", "inline_depth", "tailcall", "display", "args",
	"activation", "cfa", "seam", "role", "runtime", "detail",
};
enum { NFRAME_COLS = sizeof(frame_cols) / sizeof(frame_cols[0]), NTFRAME_COLS = 20, NSFRAME_COLS = 16 };

static const char *const tframe_cols[NTFRAME_COLS] = {
	"fingerprint", "task_idx", "idx", "kind", "pc", "function", "function_offset", "module",
	"module_offset", "file", "line", "inlined", "inline_depth", "tailcall", "display", "args",
	"activation", "cfa", "seam", "role",
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
		if (add_row(rows, row_of(names, v, ncols)) != 0)
			return -1;
	}
	return 0;
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
	"created_by", "created_file", "created_line", "wait_since", "locked",
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
			j_opt(t->has_wait_since, t->wait_since), json_integer(t->locked)) != 0 ||
		    add_frames(&st->rows[T_TFRAMES], tframe_cols, NTFRAME_COLS, fp, i, t->frames,
			       t->nframes, NULL) != 0)
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
		     rep_json_text(now), j_int(resolved), j_u64(next_version(st)));
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

static int insert_rows(struct rep_ch_store *st, enum ch_table t, char *why, size_t whylen)
{
	struct ch_rows *r = &st->rows[t];
	if (r->count == 0)
		return 0;
	char *table = table_name(st->ch, ch_tables[t].name, st->local ? st->local : ""), *sql = NULL;
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
	sets_forget(&st->known);   /* the batch's sets were not written */
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
		if (insert_rows(st, (enum ch_table)t, why, sizeof(why)) != 0)
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
	    add_recorders(st, fp, an) != 0 || add_terms(st, an, key) != 0 ||
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
	set_remember(&st->known, key);
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

/* ---- Resigning ------------------------------------------------------- */

/* Cores signed per round trip. */
#define CH_RESIGN_BATCH 500

/* A stored core as resigning needs it. */
struct ch_core {
	char *fingerprint;
	bool has_signal;
	int signo;
	char *signal_name;
	char *old_hash, *new_hash, *new_signature;   /* hashes may be NULL */
	int caught_signo;
	char *caught_signal_name;   /* NULL: no handler caught the crash */
	char *go_crash;             /* NULL: no Go crash */
	int go_signo;
	char *go_signal_name;
	bool has_tid;
	int64_t crashing_tid;
	bool resymbolized;          /* frames were symbolized again: NFRAMES is its count */
	int64_t nframes;
	char old_set[REP_TERM_SET_KEY];   /* its term set: stored ('': none yet) */
	char new_set[REP_TERM_SET_KEY];   /* and read again from its rows ('': not read) */
};

static char *dup_cell(json_t *row, size_t i)
{
	const char *s = json_string_value(json_array_get(row, i));
	return s ? strdup(s) : NULL;
}

static bool cell_null(json_t *row, size_t i)
{
	return json_is_null(json_array_get(row, i));
}

/* The cores resign signs again: not a deadlock's (its signature is its
 * cycle's waiting functions, which the stored frames do not hold). */
static int load_ch_cores(struct rep_ch *ch, struct ch_core **cores, size_t *n, char *why,
			 size_t whylen)
{
	/* version is read too: 18.16 fails a FINAL that reads no version
	 * column on a shard whose table holds one part */
	char *sql = printf_sql("SELECT fingerprint, signal, signal_name, signature_hash, crashing_tid,"
			       " caught_signal, caught_signal_name, go_crash, go_signal, go_signal_name,"
			       " term_set, version FROM %s.cores FINAL"
			       " WHERE ifNull(cause_kind, '') != 'deadlock' ORDER BY fingerprint",
			       rep_ch_database(ch));
	json_t *res = NULL, *row;
	size_t cap = 0, i;
	int rc = -1;
	if (!sql || rep_ch_select(ch, sql, false, &res, why, whylen) != 0)
		goto out;
	json_array_foreach(json_object_get(res, "data"), i, row) {
		struct ch_core *c = core_array_push(cores, n, &cap, sizeof(*c));
		if (!c)
			goto oom;
		c->fingerprint = dup_cell(row, 0);
		c->has_signal = !cell_null(row, 1);
		c->signo = (int)json_integer_value(json_array_get(row, 1));
		c->signal_name = dup_cell(row, 2);
		c->old_hash = dup_cell(row, 3);
		c->has_tid = !cell_null(row, 4);
		c->crashing_tid = json_integer_value(json_array_get(row, 4));
		c->caught_signo = (int)json_integer_value(json_array_get(row, 5));
		c->caught_signal_name = dup_cell(row, 6);
		c->go_crash = dup_cell(row, 7);
		c->go_signo = (int)json_integer_value(json_array_get(row, 8));
		c->go_signal_name = dup_cell(row, 9);
		const char *set = json_string_value(json_array_get(row, 10));
		snprintf(c->old_set, sizeof(c->old_set), "%s", set ? set : "");
		if (!c->fingerprint || (!cell_null(row, 2) && !c->signal_name) ||
		    (!cell_null(row, 3) && !c->old_hash) ||
		    (!cell_null(row, 6) && !c->caught_signal_name) ||
		    (!cell_null(row, 7) && !c->go_crash) || (!cell_null(row, 9) && !c->go_signal_name))
			goto oom;
	}
	rc = 0;
	goto out;
oom:
	snprintf(why, whylen, "out of memory");
out:
	json_decref(res);
	free(sql);
	return rc;
}

/* "'fp1','fp2',..." of the cores [FIRST, FIRST + N) that PICK (NULL: all)
 * picks; NULL when out of memory. */
static char *fingerprint_list(const struct ch_core *c, size_t first, size_t n,
			      bool (*pick)(const struct ch_core *))
{
	size_t len = 1;
	for (size_t i = first; i < first + n; i++)
		len += 2 * strlen(c[i].fingerprint) + 3;
	char *list = malloc(len), *q;
	size_t o = 0;
	if (!list)
		return NULL;
	list[0] = '\0';
	for (size_t i = first; i < first + n; i++) {
		if (pick && !pick(&c[i]))
			continue;
		if (!(q = rep_ch_quote(c[i].fingerprint))) {
			free(list);
			return NULL;
		}
		o += (size_t)snprintf(list + o, len - o, "%s%s", o ? "," : "", q);
		free(q);
	}
	return list;
}

/* The rows of ROWS (ordered by fingerprint, which is cell 0) that belong
 * to core C: [*CURSOR, returned end), the cursor moved past the rows of
 * cores before C. */
static size_t rows_of_core(const struct ch_core *c, json_t *rows, size_t *cursor)
{
	size_t n = json_array_size(rows), end;
	for (; *cursor < n; (*cursor)++) {
		const char *fp = json_string_value(json_array_get(json_array_get(rows, *cursor), 0));
		if (strcmp(fp ? fp : "", c->fingerprint) >= 0)
			break;
	}
	for (end = *cursor; end < n; end++) {
		const char *fp = json_string_value(json_array_get(json_array_get(rows, end), 0));
		if (strcmp(fp ? fp : "", c->fingerprint) != 0)
			break;
	}
	return end;
}

/* The index of the core with fingerprint FP among [FIRST, FIRST + N)
 * (sorted by fingerprint), or SIZE_MAX. */
static size_t ch_core_by_fingerprint(const struct ch_core *c, size_t first, size_t n,
				     const char *fp)
{
	size_t lo = first, hi = first + n;
	while (fp && lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int d = strcmp(c[mid].fingerprint, fp);
		if (d == 0)
			return mid;
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SIZE_MAX;
}

/* The crashing thread of core C among its THREADS rows ([fingerprint, idx,
 * tid, crashing], ordered by idx), chosen as the analyzer chooses it: the
 * one marked crashing, else the one whose tid is the crashing tid, else
 * the first.  Its index, and its tid into *TID. */
static int64_t crashing_thread(const struct ch_core *c, json_t *threads, size_t *cursor,
			       int64_t *tid)
{
	json_t *best = NULL, *by_tid = NULL, *first = NULL;
	size_t end = rows_of_core(c, threads, cursor);
	for (; *cursor < end; (*cursor)++) {
		json_t *row = json_array_get(threads, *cursor);
		if (!first)
			first = row;
		if (!best && json_integer_value(json_array_get(row, 3)))
			best = row;
		if (!by_tid && c->has_tid && json_integer_value(json_array_get(row, 2)) == c->crashing_tid)
			by_tid = row;
	}
	json_t *row = best ? best : by_tid ? by_tid : first;
	*tid = json_integer_value(json_array_get(row, 2));
	return row ? json_integer_value(json_array_get(row, 1)) : -1;
}

/* The bthread core C's crashing thread (TID) was running, among its TASKS
 * rows ([fingerprint, idx, tid], running ones with frames, ordered by idx):
 * its index, or -1 when it ran none. */
static int64_t crashing_task(const struct ch_core *c, int64_t thread, int64_t tid, json_t *tasks,
			     size_t *cursor)
{
	int64_t found = -1;
	size_t end = rows_of_core(c, tasks, cursor);
	for (; *cursor < end; (*cursor)++) {
		json_t *row = json_array_get(tasks, *cursor);
		if (found < 0 && thread >= 0 && json_integer_value(json_array_get(row, 2)) == tid)
			found = json_integer_value(json_array_get(row, 1));
	}
	return found;
}

/* The frames of thread or task OWNER of core C from FRAMES rows
 * ([fingerprint, owner's idx, kind, pc, function, module, module_offset,
 * idx, role], ordered), its strings borrowed from the rows, into *OUT
 * (reused). */
static int crash_frames(const struct ch_core *c, int64_t owner, json_t *frames, size_t *cursor,
			struct an_frame **out, size_t *n, size_t *cap, struct an_index_gap *gap)
{
	size_t end = rows_of_core(c, frames, cursor);
	*n = 0;
	*gap = (struct an_index_gap){0, 0};
	for (; *cursor < end; (*cursor)++) {
		json_t *row = json_array_get(frames, *cursor);
		if (json_integer_value(json_array_get(row, 1)) != owner)
			continue;
		rep_index_gap_note(gap, *n, json_integer_value(json_array_get(row, 7)));
		struct an_frame *f = core_array_push(out, n, cap, sizeof(*f));
		if (!f)
			return -1;
		memset(f, 0, sizeof(*f));
		f->kind = an_frame_kind_parse(json_string_value(json_array_get(row, 2)));
		f->pc = (uint64_t)json_integer_value(json_array_get(row, 3));
		f->function = (char *)json_string_value(json_array_get(row, 4));
		f->module = (char *)json_string_value(json_array_get(row, 5));
		f->has_module_offset = !cell_null(row, 6);
		f->module_offset = (uint64_t)json_integer_value(json_array_get(row, 6));
		f->role = an_frame_role_parse(json_string_value(json_array_get(row, 8)));
	}
	return 0;
}

/* SELECT COLUMNS FROM TABLE FINAL WHERE fingerprint IN (LIST) AND WHERE
 * ORDER BY ORDER: the "data" rows (borrowed from *RES, which the caller
 * frees). */
static json_t *select_in(struct rep_ch *ch, const char *columns, const char *table,
			 const char *list, const char *where, const char *order, json_t **res,
			 char *why, size_t whylen)
{
	char *sql = printf_sql("SELECT %s FROM %s.%s FINAL WHERE fingerprint IN (%s)%s%s ORDER BY %s",
			       columns, rep_ch_database(ch), table, list, where ? " AND " : "",
			       where ? where : "", order);
	json_t *data = NULL;
	if (!sql)
		snprintf(why, whylen, "out of memory");
	else if (rep_ch_select(ch, sql, false, res, why, whylen) == 0)
		data = json_object_get(*res, "data");
	free(sql);
	return data;
}

/* The rows of a batch of cores that signing reads: threads, frames, the
 * running tasks with frames, and those tasks' frames. */
struct sign_rows {
	json_t *res[4];
	json_t *threads, *frames, *tasks, *tframes;
	size_t tcur, fcur, kcur, kfcur;
};

static int sign_rows_load(struct rep_ch *ch, const char *list, struct sign_rows *r, char *why,
			  size_t whylen)
{
	static const char running[] = "state = 'running' AND nframes > 0";
	char *of_running = printf_sql("(fingerprint, task_idx) GLOBAL IN (SELECT fingerprint, idx FROM"
				      " %s.tasks FINAL WHERE fingerprint IN (%s) AND %s)",
				      rep_ch_database(ch), list, running);
	if (!of_running) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	const char *frame_columns = "kind, pc, function, module, module_offset, idx, role";
	char *fcols = printf_sql("fingerprint, thread_idx, %s", frame_columns);
	char *tfcols = printf_sql("fingerprint, task_idx, %s", frame_columns);
	r->threads = select_in(ch, "fingerprint, idx, tid, crashing", "threads", list, "1",
			       "fingerprint, idx", &r->res[0], why, whylen);
	r->frames = r->threads && fcols ? select_in(ch, fcols, "frames", list, "1",
						    "fingerprint, thread_idx, idx", &r->res[1], why,
						    whylen) : NULL;
	r->tasks = r->frames ? select_in(ch, "fingerprint, idx, tid", "tasks", list, running,
					 "fingerprint, idx", &r->res[2], why, whylen) : NULL;
	r->tframes = r->tasks && tfcols ? select_in(ch, tfcols, "task_frames", list, of_running,
						    "fingerprint, task_idx, idx", &r->res[3], why,
						    whylen) : NULL;
	free(fcols);
	free(tfcols);
	free(of_running);
	if (!r->tframes && !why[0])
		snprintf(why, whylen, "out of memory");
	return r->tframes ? 0 : -1;
}

static void sign_rows_free(struct sign_rows *r)
{
	for (int i = 0; i < 4; i++)
		json_decref(r->res[i]);
}

/* The signals of stored core C (its strings borrowed). */
static struct an_crash_signals stored_signals(const struct ch_core *c)
{
	return (struct an_crash_signals){
		.has_signal = c->has_signal, .signo = c->signo, .signal_name = c->signal_name,
		.caught_signo = c->caught_signo, .caught_signal_name = c->caught_signal_name,
		.go_crash = c->go_crash, .go_signo = c->go_signo, .go_signal_name = c->go_signal_name,
	};
}

/* Sign cores [FIRST, FIRST + N) with SIGN from their stored frames: the
 * crashing thread's, or those of the bthread it was running (as
 * an_signature_compute() and SQLite's resign choose them). */
static int sign_batch(struct rep_ch *ch, struct ch_core *c, size_t first, size_t n,
		      rep_sign_fn *sign, void *ctx, char *why, size_t whylen)
{
	char *list = fingerprint_list(c, first, n, NULL);
	struct sign_rows r = {0};
	struct an_frame *f = NULL;
	size_t nf = 0, fcap = 0;
	int rc = -1;
	if (!list) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	why[0] = '\0';
	if (sign_rows_load(ch, list, &r, why, whylen) != 0)
		goto out;
	for (size_t i = first; i < first + n; i++) {
		int64_t tid, thread = crashing_thread(&c[i], r.threads, &r.tcur, &tid);
		int64_t task = crashing_task(&c[i], thread, tid, r.tasks, &r.kcur);
		struct an_index_gap gap;
		if ((task >= 0 ? crash_frames(&c[i], task, r.tframes, &r.kfcur, &f, &nf, &fcap, &gap)
			       : crash_frames(&c[i], thread, r.frames, &r.fcur, &f, &nf, &fcap, &gap)) != 0)
			goto oom;
		const struct rep_stored_crash crash = {
			.id = (int64_t)i, .signals = stored_signals(&c[i]), .frames = f,
			.nframes = nf, .collapsed_at = gap.at,
		};
		if (sign(ctx, &crash, &c[i].new_signature, &c[i].new_hash) != 0)
			goto oom;
	}
	rc = 0;
	goto out;
oom:
	snprintf(why, whylen, "out of memory");
out:
	free(f);   /* its strings belong to the rows */
	sign_rows_free(&r);
	free(list);
	return rc;
}

/* A row of SELECT * (DATA's row ROW, META naming the columns) as an object
 * of its columns; NULL when out of memory. */
static json_t *row_object(json_t *meta, json_t *row)
{
	json_t *obj = json_object(), *col;
	size_t j;
	json_array_foreach(obj ? meta : NULL, j, col) {
		json_t *v = rep_ch_cell(json_array_get(row, j),
					json_string_value(json_object_get(col, "type")));
		const char *name = json_string_value(json_object_get(col, "name"));
		if (!v || !name || json_object_set_new(obj, name, v) != 0) {
			json_decref(obj);
			return NULL;
		}
	}
	return obj;
}

/* Rows are changed by a function of the caller: 1 when it changed ROW (an
 * object of its columns), 0 when not, -1 on error. */
typedef int ch_patch_fn(void *ctx, json_t *row);

/* Write again the rows of table T of the cores in LIST that PATCH changes:
 * the new rows replace the old ones (a ReplacingMergeTree keeps the last
 * row written of a key, or the newest version). */
static int rewrite_rows(struct rep_ch_store *st, enum ch_table t, const char *list,
			ch_patch_fn *patch, void *ctx, char *why, size_t whylen)
{
	json_t *res = NULL, *row, *data = NULL;
	char *table = printf_sql("%s%s", ch_tables[t].name, st->local ? st->local : "");
	if (table)
		data = select_in(st->ch, "*", table, list, NULL, ch_tables[t].order, &res, why, whylen);
	else
		snprintf(why, whylen, "out of memory");
	free(table);
	json_t *meta = json_object_get(res, "meta");
	size_t i;
	int rc = data ? 0 : -1;
	json_array_foreach(rc == 0 ? data : NULL, i, row) {
		json_t *obj = row_object(meta, row);
		int changed = obj ? patch(ctx, obj) : -1;
		if (changed > 0) {
			rc = add_row(&st->rows[t], obj);   /* takes OBJ */
		} else {
			json_decref(obj);
			rc = changed;
		}
		if (rc != 0) {
			snprintf(why, whylen, "rewriting %s: out of memory", ch_tables[t].name);
			break;
		}
	}
	if (rc == 0)
		rc = insert_rows(st, t, why, whylen);
	st->rows[t].len = st->rows[t].count = 0;
	json_decref(res);
	return rc;
}

/* ---- Term sets read again --- */

/* The term sets of the cores [FIRST, FIRST + N) of C that PICK picks (NULL:
 * all), from what is stored of them as add_terms() makes them at ingest:
 * the names of their frames and task frames, and their cause summary.  Each
 * one's key into its new_set; the names of the sets not known yet written
 * to term_names. */
static int stored_term_sets(struct rep_ch_store *st, struct ch_core *c, size_t first, size_t n,
			    bool (*pick)(const struct ch_core *), char *why, size_t whylen)
{
	char *list = fingerprint_list(c, first, n, pick), *sql = NULL;
	json_t *res = NULL, *data;
	const char **names = NULL;
	size_t cap = 0, cursor = 0;
	int rc = -1;
	if (list && !*list) {
		free(list);
		return 0;
	}
	if (list)
		sql = printf_sql("SELECT fingerprint, groupUniqArray(name) FROM"
				 " (SELECT fingerprint, " FRAME_NAMES " AS name FROM %1$s.frames%2$s FINAL"
				 "   WHERE fingerprint IN (%3$s)"
				 "  UNION ALL SELECT fingerprint, " FRAME_NAMES " AS name"
				 "   FROM %1$s.task_frames%2$s FINAL WHERE fingerprint IN (%3$s)"
				 "  UNION ALL SELECT fingerprint, assumeNotNull(cause_summary) AS name FROM"
				 "   (SELECT fingerprint, cause_summary, version FROM %1$s.cores%2$s FINAL"
				 "     WHERE fingerprint IN (%3$s)) WHERE isNotNull(cause_summary))"
				 " GROUP BY fingerprint ORDER BY fingerprint", rep_ch_database(st->ch),
				 st->local ? st->local : "", list);
	if (!sql)
		goto oom;
	if (rep_ch_select(st->ch, sql, false, &res, why, whylen) != 0)
		goto out;
	data = json_object_get(res, "data");
	for (size_t i = first; i < first + n; i++) {
		if (pick && !pick(&c[i]))
			continue;
		size_t end = rows_of_core(&c[i], data, &cursor), k = 0;
		json_t *got = cursor < end ? json_array_get(json_array_get(data, cursor), 1) : NULL;
		if (!core_array_reserve(&names, &cap, json_array_size(got) + 1, sizeof(*names)))
			goto oom;
		for (size_t j = 0; j < json_array_size(got); j++)
			if (json_string_value(json_array_get(got, j)))
				names[k++] = json_string_value(json_array_get(got, j));
		rep_terms_unique(names, &k);
		rep_term_set_key(names, k, c[i].new_set);
		if (add_term_names(st, names, k, c[i].new_set) != 0)
			goto oom;
		set_remember(&st->known, c[i].new_set);
		cursor = end;
	}
	rc = insert_rows(st, T_TERMS, why, whylen);
	goto out;
oom:
	snprintf(why, whylen, "reading term sets: out of memory");
out:
	if (rc != 0)
		sets_forget(&st->known);   /* their names may not be written */
	st->rows[T_TERMS].len = st->rows[T_TERMS].count = 0;
	free(names);
	json_decref(res);
	free(sql);
	free(list);
	return rc;
}

/* ---- Frames symbolized again --- */

/* A modules row of the batch whose debug info is found now. */
struct ch_module_row {
	size_t core;                /* index of its core */
	int64_t idx;
	size_t found;               /* index into the found modules */
	uint64_t start, end;
};

/* An owner's (thread's or chain's) new frame count. */
struct ch_owner_count {
	size_t core;
	int64_t owner, nframes;
};

/* What symbolizing a batch again found and changed. */
struct ch_resym {
	struct ch_core *cores;
	size_t first, n;
	struct rep_found_modules *found;   /* across batches */
	struct ch_module_row *rows;
	size_t nrows, rcap;
	struct ch_owner_count *counts[3];  /* threads, suspended chains, tasks */
	size_t ncounts[3], ccap[3];
};

/* Which row of SORTED (by core, then owner) is CORE's OWNER; NULL if none. */
static const struct ch_owner_count *find_count(const struct ch_owner_count *sorted, size_t n,
					       size_t core, int64_t owner)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ch_owner_count *m = &sorted[mid];
		if (m->core == core && m->owner == owner)
			return m;
		if (m->core < core || (m->core == core && m->owner < owner))
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The batch's modules rows without debug info whose debug info is found
 * now, by core then idx. */
static int load_module_rows(struct rep_ch_store *st, struct ch_resym *m,
			    const struct rep_resign_fns *fns, const char *list, char *why,
			    size_t whylen)
{
	json_t *res = NULL;
	json_t *data = select_in(st->ch, "fingerprint, idx, build_id, path, start_addr, end_addr",
				 "modules", list, "debuginfo IS NULL AND isNotNull(build_id) AND"
				 " isNotNull(path)", "fingerprint, idx", &res, why, whylen);
	size_t cursor = 0;
	int rc = data ? 0 : -1;
	for (size_t i = m->first; rc == 0 && i < m->first + m->n; i++) {
		for (size_t end = rows_of_core(&m->cores[i], data, &cursor); cursor < end; cursor++) {
			json_t *row = json_array_get(data, cursor);
			const char *build_id = json_string_value(json_array_get(row, 2));
			const char *path = json_string_value(json_array_get(row, 3));
			size_t k = build_id && path ? rep_found_module(m->found, fns, build_id, path) : 0;
			struct ch_module_row *r = NULL;
			if (!build_id || !path || (k != SIZE_MAX && !m->found->v[k].debuginfo))
				continue;
			if (k == SIZE_MAX ||
			    !(r = core_array_push(&m->rows, &m->nrows, &m->rcap, sizeof(*r)))) {
				snprintf(why, whylen, "out of memory");
				rc = -1;
				break;
			}
			*r = (struct ch_module_row){i, json_integer_value(json_array_get(row, 1)), k,
						    (uint64_t)json_integer_value(json_array_get(row, 4)),
						    (uint64_t)json_integer_value(json_array_get(row, 5))};
			m->cores[i].resymbolized = true;
		}
	}
	json_decref(res);
	return rc;
}

/* The frame fields of the NCOLS columns META names (caller frees; NULL:
 * out of memory), looked up once per result. */
static enum rep_frame_field *frame_fields(json_t *meta, size_t *ncols)
{
	*ncols = json_array_size(meta);
	enum rep_frame_field *fields = calloc(*ncols ? *ncols : 1, sizeof(*fields));
	for (size_t j = 0; fields && j < *ncols; j++)
		fields[j] = rep_frame_field_of(
			json_string_value(json_object_get(json_array_get(meta, j), "name")));
	return fields;
}

/* A frame from a row of SELECT * (FIELDS of its NCOLS columns) into F. */
static int frame_of_row(const enum rep_frame_field *fields, size_t ncols, json_t *row,
			struct an_frame *f)
{
	memset(f, 0, sizeof(*f));
	for (size_t j = 0; j < ncols; j++) {
		if (fields[j] == REP_FIELD_NONE)
			continue;
		json_t *v = json_array_get(row, j);
		const struct rep_cell cell = {!v || json_is_null(v), json_integer_value(v),
					      json_string_value(v)};
		if (rep_frame_set_field(f, fields[j], &cell) != 0)
			return -1;
	}
	return 0;
}

static bool is_resymbolized(const struct ch_core *c)
{
	return c->resymbolized;
}

/* The stored-module list of core CORE's rows in M (malloc'd), *N of them. */
static struct rep_stored_module *resym_stored_modules(const struct ch_resym *m, size_t core,
						      size_t *n)
{
	struct rep_stored_module *mods = calloc(m->nrows ? m->nrows : 1, sizeof(*mods));
	*n = 0;
	for (size_t i = 0; mods && i < m->nrows; i++) {
		const struct rep_found *f = &m->found->v[m->rows[i].found];
		if (m->rows[i].core == core)
			mods[(*n)++] = (struct rep_stored_module){f->path, f->build_id, m->rows[i].start,
								  m->rows[i].end};
	}
	return mods;
}

/* A row is replaced only by one of its key, and 18.16 deletes none through
 * a Distributed table: past a recursion's run (GAP, STORED before) the
 * first frame made again keeps the index it was stored at and the others
 * follow it, the run no longer counting the inline levels gained before it
 * and in its cycle, so that every old row is replaced (SQLite's indexes
 * when none was gained).  Frames before the run that now reach past it
 * keep the new gap. */
static void keep_stored_indexes(struct an_index_gap *gap, const struct an_index_gap *stored)
{
	if (gap->at && gap->at <= stored->at + stored->left_out)
		gap->left_out = stored->at + stored->left_out - gap->at;
}

/* Symbolize again the frames of one owner: rows [FROM, TO) of DATA, all of
 * core CORE and owner OWNER; changed frames are added to table T's rows. */
static int resymbolize_owner(struct rep_ch_store *st, struct ch_resym *m,
			     const struct rep_resign_fns *fns, enum ch_table t,
			     const enum rep_frame_field *fields, size_t nfields, json_t *data,
			     size_t from, size_t to, size_t core, int64_t owner,
			     struct rep_resign_result *out)
{
	struct an_frame *f = calloc(to - from, sizeof(*f));
	size_t n = 0, nmods = 0;
	struct rep_stored_module *mods = resym_stored_modules(m, core, &nmods);
	struct an_index_gap gap = {0, 0}, stored;
	int k = f && mods ? 0 : -1;
	for (size_t r = from; k == 0 && r < to; r++, n++) {
		json_t *row = json_array_get(data, r);
		rep_index_gap_note(&gap, n, json_integer_value(json_array_get(row, REP_FRAME_INDEX_COLUMN)));
		k = frame_of_row(fields, nfields, row, &f[n]);
	}
	stored = gap;
	if (k == 0)
		k = fns->resymbolize(fns->ctx, mods, nmods, &f, &n, &gap);
	/* Symbolizing again never gives fewer frames than were stored (inline
	 * levels are only made again), so the new rows replace every old one. */
	keep_stored_indexes(&gap, &stored);
	int side = t == T_FRAMES ? 0 : t == T_SFRAMES ? 1 : 2;
	struct ch_owner_count *c = k > 0 ? core_array_push(&m->counts[side], &m->ncounts[side],
							   &m->ccap[side], sizeof(*c)) : NULL;
	static const char *const *const names[] = {frame_cols, sframe_cols, tframe_cols};
	static const size_t ncols[] = {NFRAME_COLS, NSFRAME_COLS, NTFRAME_COLS};
	if (k > 0 && (!c || add_frames(&st->rows[t], names[side], ncols[side],
				       m->cores[core].fingerprint, (size_t)owner, f, n, &gap) != 0))
		k = -1;
	if (k > 0) {
		*c = (struct ch_owner_count){core, owner, (int64_t)n};
		out->frames_symbolized += (size_t)k;
	}
	for (size_t i = 0; f && i < n; i++)
		an_frame_deinit(&f[i]);
	free(f);
	free(mods);
	return k < 0 ? -1 : 0;
}

/* Symbolize again the frames of table T (frames, suspended_frames or
 * task_frames, owners in column 1) of the cores in LIST, and write the changed ones. */
static int resymbolize_table(struct rep_ch_store *st, struct ch_resym *m,
			     const struct rep_resign_fns *fns, enum ch_table t, const char *list,
			     struct rep_resign_result *out, char *why, size_t whylen)
{
	json_t *res = NULL;
	json_t *data = select_in(st->ch, "*", ch_tables[t].name, list, NULL, ch_tables[t].order,
				 &res, why, whylen);
	size_t cursor = 0, ncols = 0;
	enum rep_frame_field *fields = data ? frame_fields(json_object_get(res, "meta"), &ncols) : NULL;
	int rc = fields ? 0 : -1;
	for (size_t i = m->first; rc == 0 && i < m->first + m->n; i++) {
		if (!m->cores[i].resymbolized)
			continue;
		size_t end = rows_of_core(&m->cores[i], data, &cursor);
		while (rc == 0 && cursor < end) {
			json_t *row = json_array_get(data, cursor);
			int64_t owner = json_integer_value(json_array_get(row, REP_FRAME_OWNER_COLUMN));
			size_t to = cursor;
			while (to < end && json_integer_value(json_array_get(json_array_get(data, to),
									     REP_FRAME_OWNER_COLUMN)) == owner)
				to++;
			rc = resymbolize_owner(st, m, fns, t, fields, ncols, data, cursor, to, i, owner,
					       out);
			cursor = to;
		}
	}
	if (rc != 0 && data)
		snprintf(why, whylen, "symbolizing frames again: out of memory");
	if (rc == 0)
		rc = insert_rows(st, t, why, whylen);
	st->rows[t].len = st->rows[t].count = 0;
	free(fields);
	json_decref(res);
	return rc;
}

/* The thread (SIDE 0), chain (1) or task (2) row's new nframes; a thread's count
 * also adds up into its core's. */
static int patch_owner(struct ch_resym *m, int side, json_t *row)
{
	size_t core = ch_core_by_fingerprint(m->cores, m->first, m->n,
					     json_string_value(json_object_get(row, "fingerprint")));
	int64_t idx = json_integer_value(json_object_get(row, "idx"));
	const struct ch_owner_count *c = core == SIZE_MAX ? NULL :
					 find_count(m->counts[side], m->ncounts[side], core, idx);
	if (c && json_object_set_new(row, "nframes", json_integer(c->nframes)) != 0)
		return -1;
	if (side == 0 && core != SIZE_MAX)
		m->cores[core].nframes += json_integer_value(json_object_get(row, "nframes"));
	return c != NULL;
}

static int patch_thread(void *ctx, json_t *row)
{
	return patch_owner(ctx, 0, row);
}

static int patch_chain(void *ctx, json_t *row)
{
	return patch_owner(ctx, 1, row);
}

static int patch_task(void *ctx, json_t *row)
{
	return patch_owner(ctx, 2, row);
}

/* A modules row found now: its debuginfo. */
static int patch_module(void *ctx, json_t *row)
{
	struct ch_resym *m = ctx;
	size_t core = ch_core_by_fingerprint(m->cores, m->first, m->n,
					     json_string_value(json_object_get(row, "fingerprint")));
	int64_t idx = json_integer_value(json_object_get(row, "idx"));
	for (size_t i = 0; core != SIZE_MAX && i < m->nrows; i++)
		if (m->rows[i].core == core && m->rows[i].idx == idx)
			return json_object_set_new(row, "debuginfo",
						   json_string(m->found->v[m->rows[i].found].debuginfo))
				       ? -1 : 1;
	return 0;
}

/* Symbolize again the frames of the batch's modules whose debug info is
 * found now: frames and chains rewritten, then their owners' counts and
 * the modules' debuginfo (each core's new count kept for its cores row). */
static int resymbolize_batch(struct rep_ch_store *st, struct ch_core *c, size_t first, size_t n,
			     const struct rep_resign_fns *fns, struct rep_found_modules *found,
			     struct rep_resign_result *out, char *why, size_t whylen)
{
	struct ch_resym m = {.cores = c, .first = first, .n = n, .found = found};
	char *all = fingerprint_list(c, first, n, NULL), *list = NULL;
	int rc = all ? load_module_rows(st, &m, fns, all, why, whylen) : -1;
	if (rc == 0 && m.nrows > 0 && !(list = fingerprint_list(c, first, n, is_resymbolized)))
		rc = -1;
	if (rc == 0 && list &&
	    (resymbolize_table(st, &m, fns, T_FRAMES, list, out, why, whylen) != 0 ||
	     resymbolize_table(st, &m, fns, T_SFRAMES, list, out, why, whylen) != 0 ||
	     resymbolize_table(st, &m, fns, T_TFRAMES, list, out, why, whylen) != 0 ||
	     rewrite_rows(st, T_THREADS, list, patch_thread, &m, why, whylen) != 0 ||
	     rewrite_rows(st, T_SUSPENDED, list, patch_chain, &m, why, whylen) != 0 ||
	     rewrite_rows(st, T_TASKS, list, patch_task, &m, why, whylen) != 0 ||
	     rewrite_rows(st, T_MODULES, list, patch_module, &m, why, whylen) != 0))
		rc = -1;
	for (size_t i = first; i < first + n; i++) {
		bool counted = false;
		for (int side = 0; side < 3 && !counted; side++)
			for (size_t k = 0; k < m.ncounts[side] && !counted; k++)
				counted = m.counts[side][k].core == i;
		out->cores_symbolized += counted;
	}
	if (rc != 0 && !all)
		snprintf(why, whylen, "out of memory");
	free(m.rows);
	for (int side = 0; side < 3; side++)
		free(m.counts[side]);
	free(list);
	free(all);
	return rc;
}

static bool hash_changed(const struct ch_core *c)
{
	return !c->old_hash || strcmp(c->old_hash, c->new_hash) != 0;
}

/* Whether C's term set was read again and differs from the stored one. */
static bool set_changed(const struct ch_core *c)
{
	return c->new_set[0] && strcmp(c->old_set, c->new_set) != 0;
}

/* Whether C's term set is read again: its frames changed, or it has none
 * yet (stored by an older asyncore after `store init`). */
static bool set_stale(const struct ch_core *c)
{
	return c->resymbolized || !c->old_set[0];
}

/* Whether C's cores row is written again in another group of the
 * aggregates: its signature or its term set changed. */
static bool moves_group(const struct ch_core *c)
{
	return (c->new_hash && hash_changed(c)) || set_changed(c);
}

/* Whether C's cores row is written again: its signature, its frame count
 * or its term set changed. */
static bool needs_rewrite(const struct ch_core *c)
{
	return (c->new_hash && (hash_changed(c) || c->resymbolized)) || set_changed(c);
}

/* The signing of a batch, for rewriting its cores rows. */
struct ch_signed {
	struct rep_ch_store *st;
	struct ch_core *cores;
	size_t first, n;
};

/* A cores row whose signature, frame count or term set changed: the new
 * ones (a signature when it was signed, the others when read again), and a
 * newer version (it replaces the stored row). */
static int patch_core(void *ctx, json_t *row)
{
	struct ch_signed *b = ctx;
	size_t i = ch_core_by_fingerprint(b->cores, b->first, b->n,
					  json_string_value(json_object_get(row, "fingerprint")));
	const struct ch_core *c = i == SIZE_MAX ? NULL : &b->cores[i];
	if (!c || !needs_rewrite(c))
		return 0;
	if ((c->new_hash &&
	     (json_object_set_new(row, "signature", rep_json_text(c->new_signature)) != 0 ||
	      json_object_set_new(row, "signature_hash", rep_json_text(c->new_hash)) != 0)) ||
	    (c->resymbolized && json_object_set_new(row, "nframes", json_integer(c->nframes)) != 0) ||
	    (c->new_set[0] && json_object_set_new(row, "term_set", json_string(c->new_set)) != 0) ||
	    json_object_set_new(row, "version", j_u64(next_version(b->st))) != 0)
		return -1;
	return 1;
}

/* Write the batch's changed cores rows again. */
static int rewrite_batch(struct rep_ch_store *st, struct ch_core *c, size_t first, size_t n,
			 size_t *changed, char *why, size_t whylen)
{
	struct ch_signed b = {st, c, first, n};
	char *list = fingerprint_list(c, first, n, needs_rewrite);
	int rc = list && *list ? rewrite_rows(st, T_CORES, list, patch_core, &b, why, whylen) : 0;
	if (!list) {
		snprintf(why, whylen, "out of memory");
		rc = -1;
	}
	for (size_t i = first; rc == 0 && i < first + n; i++)
		*changed += hash_changed(&c[i]);
	free(list);
	return rc;
}

static void ch_cores_free(struct ch_core *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(c[i].fingerprint);
		free(c[i].signal_name);
		free(c[i].caught_signal_name);
		free(c[i].go_crash);
		free(c[i].go_signal_name);
		free(c[i].old_hash);
		free(c[i].new_hash);
		free(c[i].new_signature);
	}
	free(c);
}

/* Store init: the cores of this server (a cluster's shard: all the rows of
 * its cores are here) stored without a term set (ALL: every one, its
 * term_names being new) get one from what is stored of them, its names
 * into term_names and their cores rows written again with it.  Written to
 * the shard's own tables: the cluster's other shards may not have term
 * sets yet.  The aggregates then hold those cores in two groups until
 * aggregates_recount(): marked so for SHARD (this server's) before the
 * first is written. */
static int fill_term_sets(struct rep_ch *ch, bool all, const char *shard, char *why,
			  size_t whylen)
{
	struct rep_ch_store st = {.ch = ch, .local = rep_ch_cluster(ch) ? "_local" : NULL};
	char *sql = printf_sql("SELECT fingerprint, argMax(term_set, version) AS s FROM %s.cores%s"
			       " GROUP BY fingerprint%s ORDER BY fingerprint", rep_ch_database(ch),
			       st.local ? st.local : "", all ? "" : " HAVING s = ''");
	json_t *res = NULL, *row;
	struct ch_core *c = NULL;
	size_t n = 0, cap = 0, i;
	int rc = -1;
	bool marked = false;
	if (!sql)
		goto oom;
	if (rep_ch_select(ch, sql, false, &res, why, whylen) != 0)
		goto out;
	json_array_foreach(json_object_get(res, "data"), i, row) {
		struct ch_core *e = core_array_push(&c, &n, &cap, sizeof(*e));
		const char *set = json_string_value(json_array_get(row, 1));
		if (!e || !(e->fingerprint = dup_cell(row, 0)))
			goto oom;
		snprintf(e->old_set, sizeof(e->old_set), "%s", set ? set : "");
	}
	json_decref(res);
	res = NULL;
	for (size_t first = 0; first < n; first += CH_RESIGN_BATCH) {
		size_t k = n - first < CH_RESIGN_BATCH ? n - first : CH_RESIGN_BATCH;
		struct ch_signed b = {&st, c, first, k};
		if (stored_term_sets(&st, c, first, k, NULL, why, whylen) != 0)
			goto out;
		char *list = fingerprint_list(c, first, k, set_changed);
		int written = 0;
		if (list && *list && !marked) {
			written = mark_inexact(ch, "filling", shard, true, next_version(&st), why, whylen);
			marked = written == 0;
		}
		if (list && *list && written == 0)
			written = rewrite_rows(&st, T_CORES, list, patch_core, &b, why, whylen);
		if (!list)
			goto oom;
		free(list);
		if (written != 0)
			goto out;
	}
	rc = 0;
	goto out;
oom:
	snprintf(why, whylen, "filling term sets: out of memory");
out:
	json_decref(res);
	ch_cores_free(c, n);
	for (int t = 0; t < T_COUNT; t++)
		free(st.rows[t].data);
	free(st.known.slots);
	free(sql);
	return rc;
}

/* Old and new hash of one core, for counting buckets. */
struct hash_pair {
	const char *a, *b;
};

static int cmp_pair(const void *x, const void *y)
{
	const struct hash_pair *p = x, *q = y;
	int c = strcmp(p->a, q->a);
	return c ? c : strcmp(p->b, q->b);
}

/* Distinct values of A, and how many A values go with two or more
 * distinct B values, over N pairs (sorted here; NULLs left out as SQL's
 * count(DISTINCT) leaves them). */
static void count_groups(struct hash_pair *p, size_t n, size_t *groups, size_t *spread)
{
	qsort(p, n, sizeof(*p), cmp_pair);
	*groups = *spread = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i + 1, distinct = 1;
		for (; j < n && strcmp(p[j].a, p[i].a) == 0; j++)
			distinct += strcmp(p[j].b, p[j - 1].b) != 0;
		(*groups)++;
		*spread += distinct > 1;
		i = j;
	}
}

static int count_buckets(const struct ch_core *c, size_t n, struct rep_resign_result *out)
{
	struct hash_pair *old_new = calloc(n ? n : 1, sizeof(*old_new));
	struct hash_pair *new_old = calloc(n ? n : 1, sizeof(*new_old));
	size_t m = 0, unused;
	if (!old_new || !new_old) {
		free(old_new);
		free(new_old);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (!c[i].old_hash)
			continue;
		old_new[m] = (struct hash_pair){c[i].old_hash, c[i].new_hash};
		new_old[m++] = (struct hash_pair){c[i].new_hash, c[i].old_hash};
	}
	count_groups(old_new, m, &out->buckets_before, &out->split);
	count_groups(new_old, m, &unused, &out->merged);
	for (size_t i = 0; i < n; i++)   /* cores without an old hash count after */
		new_old[i] = (struct hash_pair){c[i].new_hash, ""};
	count_groups(new_old, n, &out->buckets_after, &unused);
	free(old_new);
	free(new_old);
	return 0;
}

int rep_ch_store_resign(struct rep_ch_store *st, const struct rep_resign_fns *fns,
			struct rep_resign_result *out, char *why, size_t whylen)
{
	struct rep_found_modules found = {0};
	struct ch_core *c = NULL;
	struct ch_marks m;
	size_t n = 0;
	int rc = -1;
	bool marked = false;   /* "rewriting" written: "rewritten" follows */
	long long made = 0;
	memset(out, 0, sizeof(*out));
	if (ask_number(st->ch, printf_sql("EXISTS TABLE %s.%s", rep_ch_database(st->ch),
					  marks_table.name), &made, why, whylen) != 0)
		goto out;
	if (made != 1) {
		snprintf(why, whylen, "%s: a store of an older asyncore: run asyncore store init on it"
			 " (on every shard) first", rep_ch_database(st->ch));
		goto out;
	}
	if (load_ch_cores(st->ch, &c, &n, why, whylen) != 0)
		goto out;
	for (size_t first = 0; first < n; first += CH_RESIGN_BATCH) {
		size_t k = n - first < CH_RESIGN_BATCH ? n - first : CH_RESIGN_BATCH;
		if ((fns->debuginfo &&
		     resymbolize_batch(st, c, first, k, fns, &found, out, why, whylen) != 0) ||
		    stored_term_sets(st, c, first, k, set_stale, why, whylen) != 0 ||
		    sign_batch(st->ch, c, first, k, fns->sign, fns->ctx, why, whylen) != 0)
			goto out;
		for (size_t i = first; i < first + k && !marked; i++)
			if (moves_group(&c[i])) {
				if (mark_inexact(st->ch, "rewriting", "", false, next_version(st), why,
						 whylen) != 0)
					goto out;
				marked = true;
			}
		if (rewrite_batch(st, c, first, k, &out->changed, why, whylen) != 0)
			goto out;
	}
	out->modules_found = rep_found_count(&found);
	out->cores = n;
	if (count_buckets(c, n, out) != 0) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	/* a core that changed bucket (or term set) is in two of bucket_days'
	 * (set_days') groups until its old row is merged away: its rows all
	 * written, "rewritten" (closing too the "rewriting" of a resign that
	 * died); one server's aggregates are counted again now, a cluster's
	 * shards' by their `store init` */
	bool moved = marked;
	if (marks_read(st->ch, "", false, &m, why, whylen) != 0 ||
	    ((moved || m.open) &&
	     mark_inexact(st->ch, "rewritten", "", false, next_version(st), why, whylen) != 0))
		goto out;
	marked = false;
	if (!rep_ch_cluster(st->ch) && (moved || m.open || m.rebuilt < m.dirty) &&
	    aggregates_recount(st->ch, "", true, "resign", why, whylen) != 0)
		goto out;
	rc = 0;
out:
	if (marked) {   /* failed: no more rows of this resign, but the aggregates stay inexact */
		char ignored[256];
		mark_inexact(st->ch, "rewritten", "", false, next_version(st), ignored, sizeof(ignored));
	}
	rep_found_modules_free(&found);
	ch_cores_free(c, n);
	return rc;
}
