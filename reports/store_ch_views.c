/* The ClickHouse store's views that `asyncore top` and `asyncore query`
 * read (reports/SCHEMA.md): crash_stacks, last_events, hang_waits and
 * top_signatures, as SQLite's. */
#include "store_ch_internal.h"

#include <stdio.h>
#include <stdlib.h>

/* The views of reports/SCHEMA.md.  Every read goes through FINAL (a core
 * written twice is one core) and joins on cores (a core whose cores row is
 * not written yet is not there).  %1$s is the database, %2$s the tables'
 * suffix: the views that join a core's rows run on each shard over its
 * local tables ("_local"; all rows of a core are on one shard) and are
 * read through a Distributed table; top_signatures aggregates over the
 * Distributed tables (no suffix).  ClickHouse 18.16 joins two tables per
 * SELECT, hence the nesting. */
#define HEX_OF(col) "concat('0x', replaceRegexpOne(lower(hex(toUInt64(" col "))), '^0(.)', '\\\\1'))"
#define PC_HEX HEX_OF("pc")
#define CRASHING_THREADS_SQL \
	"SELECT fingerprint, idx AS thread_idx, tid FROM %1$s.threads%2$s FINAL WHERE crashing = 1"
#define RUNNING_TASKS_SQL \
	"SELECT fingerprint, assumeNotNull(tid) AS tid, idx AS task_idx, nframes AS task_nframes" \
	" FROM %1$s.tasks%2$s FINAL WHERE state = 'running' AND isNotNull(tid) AND runtime != 'go'"
#define CORES_NAMES_SQL "SELECT fingerprint, path, signature_hash FROM %1$s.cores%2$s FINAL"

/* As SQLite's: the crashing thread's frames; when it was running a
 * bthread, that bthread's frames first, then the thread's, numbered as one
 * stack (a goroutine's are already the thread's). */
static const char crash_stacks_sql[] =
	"SELECT fingerprint, path AS core, signature_hash, idx AS frame, kind, " PC_HEX " AS pc,"
	" function, file, line, module, inline_depth, runtime, detail FROM"
	" (SELECT fingerprint, task_idx, idx, kind, pc, function, file, line, module, inline_depth,"
	"   runtime, detail FROM %1$s.task_frames%2$s FINAL)"
	" ALL INNER JOIN"
	" (SELECT fingerprint, task_idx, path, signature_hash FROM"
	"   (SELECT fingerprint, task_idx FROM (" CRASHING_THREADS_SQL ")"
	"     ALL INNER JOIN (" RUNNING_TASKS_SQL ") USING (fingerprint, tid))"
	"   ALL INNER JOIN (" CORES_NAMES_SQL ") USING fingerprint)"
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
	"   ALL INNER JOIN (" CORES_NAMES_SQL ") USING fingerprint)"
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

/* As SQLite's: hang cores with what each of their threads and tasks
 * waits for, and the deadlock a thread is in (NULL: none). */
static const char hang_waits_sql[] =
	"SELECT fingerprint, path AS core, signature_hash, cause_kind, waiter, waiter_idx, tid, kind,"
	" if(isNull(object), NULL, " HEX_OF("assumeNotNull(object)") ") AS object, object_name,"
	" owner_tid, owner_gone, syscall, fd, fd_target, since, function, summary, deadlock FROM"
	" (SELECT * FROM"
	"   (SELECT fingerprint, waiter, waiter_idx, tid, kind, object, object_name, owner_tid,"
	"     owner_gone, syscall, fd, fd_target, since, function, summary,"
	"     if(waiter = 'thread', ifNull(tid, -1), -1) AS member_tid"
	"    FROM %1$s.blocked_on%2$s FINAL)"
	"   ANY LEFT JOIN"
	"   (SELECT fingerprint, tid AS member_tid,"
	"     CAST(min(deadlock_idx) AS Nullable(Int64)) AS deadlock"
	"    FROM %1$s.deadlock_members%2$s FINAL GROUP BY fingerprint, member_tid)"
	"   USING (fingerprint, member_tid))"
	" ALL INNER JOIN"
	" (SELECT fingerprint, path, signature_hash, cause_kind FROM %1$s.cores%2$s FINAL"
	"   WHERE ifNull(cause_kind, '') IN ('hang', 'deadlock'))"
	" USING fingerprint";

/* A core's crash time (crashed_at, else the file's mtime) and its program
 * (the executable's file name). */
#define SEEN_SQL \
	"SELECT signature_hash, signature, path, analysed_at, build_id, ifNull(cause_kind, '') AS cause," \
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
	" toUInt8(min(is_new)) AS new, argMax(example, example_key) AS example_core,"
	" toUInt8(argMax(example_cause, example_key) IN ('hang', 'deadlock')) AS hang FROM"
	" (SELECT signature_hash, any(signature) AS signature, count() AS n, min(seen_at) AS first,"
	"   max(seen_at) AS last,"
	"   countIf(parseDateTimeBestEffortOrNull(seen_at) >= now() - 7 * 86400) AS n7,"
	"   ifNull(build_id, '') AS bid, isNotNull(build_id) AS has_build,"
	"   argMax(path, (seen_at, analysed_at, path)) AS example,"
	"   argMax(cause, (seen_at, analysed_at, path)) AS example_cause,"
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

int rep_chs_create_views(struct rep_ch *ch, char *why, size_t whylen)
{
	if (create_view(ch, "crash_stacks", crash_stacks_sql, true, why, whylen) != 0 ||
	    create_view(ch, "last_events", last_events_sql, true, why, whylen) != 0 ||
	    create_view(ch, "hang_waits", hang_waits_sql, true, why, whylen) != 0 ||
	    create_view(ch, "top_signatures", top_signatures_sql, false, why, whylen) != 0)
		return -1;
	return 0;
}
