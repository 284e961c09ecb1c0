/* The ClickHouse store's tables (reports/SCHEMA.md "ClickHouse") and
 * `store init`: every table made when missing, the columns added since a
 * store was made, the views and aggregates made again, term sets filled
 * and the aggregates counted again where they need it. */
#include "store_ch_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

const struct ch_table_def rep_chs_tables[T_COUNT] = {
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
		     " wait_since Nullable(Int64), locked UInt8 DEFAULT 0, name Nullable(String)",
		     "fingerprint, idx", NULL, "fingerprint"},
	[T_TFRAMES] = {"task_frames", "fingerprint String, task_idx Int64, idx Int64, " FRAME_COLUMNS
		       ", activation UInt8, cfa Nullable(Int64), seam UInt8, role Nullable(String),"
		       " runtime Nullable(String), detail Nullable(String)",
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
	[T_BLOCKED] = {"blocked_on", "fingerprint String, waiter Enum8('thread' = 1, 'task' = 2),"
		       " waiter_idx Int64, tid Nullable(Int64), kind String, object Nullable(Int64),"
		       " object_name Nullable(String), owner_tid Nullable(Int64), owner_gone UInt8,"
		       " owner_task Nullable(Int64), syscall Nullable(String), fd Nullable(Int64),"
		       " fd_target Nullable(String), since Nullable(Int64), via Nullable(String),"
		       " function Nullable(String), summary Nullable(String)",
		       "fingerprint, waiter, waiter_idx", NULL, "fingerprint"},
	[T_DEADLOCKS] = {"deadlocks", "fingerprint String, idx Int64, summary Nullable(String),"
			 " nmembers Int64", "fingerprint, idx", NULL, "fingerprint"},
	[T_MEMBERS] = {"deadlock_members", "fingerprint String, deadlock_idx Int64, pos Int64,"
		       " tid Int64, object Nullable(Int64)", "fingerprint, deadlock_idx, pos", NULL,
		       "fingerprint"},
	/* each term set's names (store_rows.h), once however many cores hold
	 * it: written through T, a set's rows on the shard its key picks;
	 * `store init` writes its shard's own (rep_chs_fill_term_sets()) */
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

/* ---- Schema ---------------------------------------------------------- */

/* Table T: the ReplacingMergeTree (T_local with a cluster) and, with a
 * cluster, the Distributed table in front of it. */
int rep_chs_create_table(struct rep_ch *ch, const struct ch_table_def *t, char *why, size_t whylen)
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
 * the order they were added: each is last of its table in rep_chs_tables at
 * the time, so ALTER TABLE's ADD COLUMN (which appends) leaves an older
 * store with the columns of a new one, in their order.  A store made
 * before cores had `arch` held x86_64 cores only (the only machine read
 * then); the crash-handler columns are NULL for every core stored before
 * them, as in SQLite's migration to version 8; the goroutine columns of
 * tasks NULL (locked 0), and the Go crash columns of cores NULL, as in its
 * migration to version 9; the core file's mtime NULL, as in 10; the term
 * set '' (none yet), which `store init` then fills (rep_chs_fill_term_sets());
 * a task's name and its frames' runtime and detail NULL, as in 13. */
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
	{"tasks", "name", "Nullable(String)"},
	{"task_frames", "runtime", "Nullable(String)"},
	{"task_frames", "detail", "Nullable(String)"},
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
				      rep_chs_tables[T_TERMS].name, rep_ch_cluster(ch) ? "_local" : ""),
		       &had_terms, why, whylen) != 0)
		goto out;
	for (int t = 0; t < T_COUNT; t++)
		if (rep_chs_create_table(ch, &rep_chs_tables[t], why, whylen) != 0)
			goto out;
	char shard[24];
	bool known;
	if (rep_chs_create_table(ch, &rep_chs_marks_table, why, whylen) != 0 ||
	    rep_chs_this_shard(ch, shard, &known, why, whylen) != 0 ||
	    add_columns(ch, why, whylen) != 0 || rep_chs_drop_old(ch, why, whylen) != 0)
		goto out;
	/* cores stored before term sets get theirs (every core of the shard
	 * when its term_names is new), then each aggregate holding a core in
	 * two groups is counted again, and the shard's aggregates marked exact */
	if (rep_chs_create_views(ch, why, whylen) != 0 ||
	    rep_chs_create_aggregates(ch, why, whylen) != 0 ||
	    rep_chs_fill_term_sets(ch, had_terms != 1, shard, why, whylen) != 0 ||
	    rep_chs_aggregates_recount(ch, shard, known, "store init", why, whylen) != 0)
		goto out;
	rc = 0;
out:
	rep_ch_close(ch);
	return rc;
}
