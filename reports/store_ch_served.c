/* What the served pages read of a ClickHouse store: the aggregates that
 * materialized views keep (bucket_days, set_days, search_names), their
 * backfill and recount, and aggregate_marks, which says whether they are
 * exact (reports/pages.c and query.c read them). */
#include "store_ch_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"

/* ---- What the served pages read ---------------------------------------
 *
 * FINAL over every core costs a page most of its time, so the pages read
 * aggregates that materialized views keep as rows arrive, each exact however
 * often a row is written again (an ingest retried, a resign): bucket_days
 * counts a group's distinct fingerprints and keeps min/max/argMax, which a
 * second copy of a row leaves unchanged; set_days does the same per term
 * set (a search reads the sets holding a name in term_names, which the
 * writer fills, then their groups here); search_names holds names, a second
 * copy of which is the same name, and term_sets the sets, as many as a
 * search's name must be held with to match every core.  Only a core whose rows differ in group
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
	{"term_sets_names_mv", "term_names", "SELECT DISTINCT term_set FROM %1$s"},
	{"term_sets_cores_mv", "cores", "SELECT DISTINCT term_set FROM %1$s"},
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
	/* every set term_names or a cores row ever named: a search whose name
	 * one server's term_names holds with each of them matches every core */
	{"term_sets", "term_set String", "ReplacingMergeTree", "term_set", false},
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
 * (rep_chs_next_version()), or one more than the newest mark there is when that
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
const struct ch_table_def rep_chs_marks_table = {
	"aggregate_marks", "kind String, shard String, at UInt64", "kind, shard", "at", "shard",
};

/* The marks of SHARD from this server's table (LOCAL) or every shard's. */
int rep_chs_marks_read(struct rep_ch *ch, const char *shard, bool local, struct ch_marks *m,
		       char *why, size_t whylen)
{
	char *q = rep_ch_quote(shard);
	char *sql = q ? printf_sql("SELECT maxIf(at, kind != 'rebuilt' AND shard IN ('', %2$s)),"
				   " maxIf(at, kind = 'rebuilt' AND shard = %2$s), max(at),"
				   " argMaxIf(kind, at, kind IN ('rewriting', 'rewritten')) = 'rewriting'"
				   " FROM %1$s.%3$s%4$s", rep_ch_database(ch), q, rep_chs_marks_table.name,
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
				   rep_ch_database(ch), rep_chs_marks_table.name,
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
int rep_chs_mark_inexact(struct rep_ch *ch, const char *kind, const char *shard, bool local,
			 uint64_t now, char *why, size_t whylen)
{
	struct ch_marks m;
	uint64_t at = now;
	for (int tries = 0; tries < 4; tries++) {
		if (rep_chs_marks_read(ch, shard, local, &m, why, whylen) != 0)
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
int rep_chs_this_shard(struct rep_ch *ch, char shard[24], bool *known, char *why, size_t whylen)
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
int rep_chs_aggregates_recount(struct rep_ch *ch, const char *shard, bool known, const char *who,
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
	if (rep_chs_marks_read(ch, shard, false, &m, why, whylen) != 0 &&
	    (!rep_ch_cluster(ch) || rep_chs_marks_read(ch, shard, true, &m, why, whylen) != 0))
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
		return known ? rep_chs_mark_inexact(ch, "inexact", shard, true, rep_chs_wall_us(),
						    why, whylen) : 0;
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
int rep_chs_drop_old(struct rep_ch *ch, char *why, size_t whylen)
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
 * is stored (those left inexact are counted again by rep_chs_aggregates_recount()). */
int rep_chs_create_aggregates(struct rep_ch *ch, char *why, size_t whylen)
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
