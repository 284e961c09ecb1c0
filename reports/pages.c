/* The served pages: a bucket, a core, a search, and the same as JSON (the
 * bucket list is html_top.c's writer).  Lists are bounded: a page never
 * grows with the store. */
#include "pages.h"
#include "html.h"
#include "reader.h"
#include "report.h"
#include "store_load.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* Rows shown at most: a bucket's cores, a search's cores and buckets. */
enum { PAGE_MAX_CORES = 500, SEARCH_MAX_CORES = 200, SEARCH_MAX_BUCKETS = 100 };

static int json_page(FILE *out, json_t *doc)
{
	int rc = doc && json_dumpf(doc, out, JSON_INDENT(1) | JSON_ENSURE_ASCII) == 0 ? 200 : 500;
	fputc('\n', out);
	json_decref(doc);
	return rc;
}

/* ROWS (arrays) as objects with the keys NAMES. */
static json_t *objects(json_t *rows, const char *const *names, size_t n)
{
	json_t *list = json_array(), *q;
	size_t k;
	json_array_foreach(rows, k, q) {
		json_t *o = json_object();
		for (size_t c = 0; c < n; c++)
			json_object_set(o, names[c], json_array_get(q, c));
		json_array_append_new(list, o);
	}
	return list;
}

static const char *text_of(json_t *o, const char *field)
{
	return json_string_value(json_object_get(o, field));
}

/* A link to a core, the fingerprint percent-encoded. */
static void link_to_core(FILE *out, const char *fp, const char *label)
{
	fputs("<a class=\"core\" href=\"/core/", out);
	rep_html_url_query(out, fp);
	fputs("\">", out);
	rep_html_text(out, label, 0);
	fputs("</a>", out);
}

static void bucket_link(FILE *out, const char *hash, const char *signature)
{
	if (hash) {
		fputs("<a href=\"/bucket/", out);
		rep_html_url_query(out, hash);
		fputs("\">", out);
	}
	fputs("<span class=\"signature mono\">", out);
	rep_html_text(out, signature ? signature : "(no signature)", 0);
	fputs(hash ? "</span></a>" : "</span>", out);
}

int rep_page_buckets(FILE *out, struct rep_reader *r, const struct rep_bucket_filter *f, bool json)
{
	struct rep_bucket_totals totals;
	const struct rep_bucket_page page = {.served = true, .filter = f};
	json_t *buckets = NULL;
	if (rep_buckets_read(r, f, &buckets, &totals) != 0)
		return 500;
	if (json)
		return json_page(out, buckets);
	int rc = rep_html_buckets(out, r, buckets, &totals, &page) == 0 ? 200 : 500;
	json_decref(buckets);
	return rc;
}

/* Column names of a bucket's cores (the JSON keys). */
static const char *const bucket_core_keys[] = {"id", "crashed_at", "executable", "boot_id", "pid", "build_id",
					       "cause_kind", "cause_summary", "arch"};

/* A bucket's newest cores.  ClickHouse's FINAL over every core is most of a
 * page's time there: when each core's rows are all in its bucket (ONE),
 * the newest 1,000 rows of the bucket name its newest cores and each one's
 * newest row is read without FINAL; a bucket whose rows are mostly copies
 * (fewer than the page's out of COUNT) is read with FINAL, as is any
 * bucket when ONE is false. */
static json_t *bucket_cores(struct rep_reader *r, const char *hash, json_int_t count, bool one)
{
	static const char sqlite[] =
		"SELECT fingerprint, coalesce(crashed_at, file_mtime), executable, boot_id, pid, build_id,"
		" cause_kind, cause_summary, arch FROM cores WHERE signature_hash = ?1"
		" ORDER BY coalesce(crashed_at, file_mtime) DESC, id DESC LIMIT 500";
	static const char clickhouse_newest[] =
		"SELECT fingerprint, t.1, t.2, t.3, t.4, t.5, t.6, t.7, t.8 FROM"
		" (SELECT fingerprint, argMax((ifNull(crashed_at, file_mtime), executable, boot_id, pid, build_id,"
		"   cause_kind, cause_summary, arch, analysed_at, path), version) AS t FROM cores"
		"  PREWHERE fingerprint IN (SELECT fingerprint FROM cores WHERE signature_hash = %1$s"
		"   ORDER BY ifNull(crashed_at, file_mtime) DESC NULLS LAST, analysed_at DESC, path LIMIT 1000)"
		"  GROUP BY fingerprint)"
		" ORDER BY t.1 DESC NULLS LAST, t.9 DESC, t.10 LIMIT 500";
	static const char clickhouse[] =
		"SELECT fingerprint, ifNull(crashed_at, file_mtime) AS seen, executable, boot_id, pid, build_id,"
		" cause_kind, cause_summary, arch FROM cores FINAL WHERE signature_hash = %1$s"
		" ORDER BY seen DESC NULLS LAST, analysed_at DESC, path LIMIT 500";
	_Static_assert(PAGE_MAX_CORES == 500, "the queries' LIMIT");
	json_t *rows = NULL, *list;
	bool ch = rep_reader_clickhouse(r);
	if (rep_reader_rows(r, !ch ? sqlite : one ? clickhouse_newest : clickhouse, hash, &rows) != 0)
		return NULL;
	if (ch && one && json_array_size(rows) < PAGE_MAX_CORES &&
	    (json_int_t)json_array_size(rows) < count) {
		json_decref(rows);
		if (rep_reader_rows(r, clickhouse, hash, &rows) != 0)
			return NULL;
	}
	list = objects(rows, bucket_core_keys, sizeof(bucket_core_keys) / sizeof(bucket_core_keys[0]));
	json_decref(rows);
	return list;
}

/* The time a core crashed, or what stands for an unknown one. */
static const char *when(json_t *c)
{
	return text_of(c, "crashed_at") ? text_of(c, "crashed_at") : "no crash time";
}

static void write_core_rows(FILE *out, json_t *cores)
{
	json_t *c;
	size_t k;
	fputs("<div class=\"scroll\"><table class=\"cores\"><tr><th>crashed at</th><th>executable</th>"
	      "<th class=\"num\">pid</th><th>build-id</th><th>cause</th></tr>\n", out);
	json_array_foreach(cores, k, c) {
		fputs("<tr><td class=\"mono\">", out);
		link_to_core(out, text_of(c, "id"), when(c));
		fputs("</td><td class=\"mono\">", out);
		rep_html_path(out, text_of(c, "executable") ? text_of(c, "executable") : "?");
		if (text_of(c, "boot_id")) {
			fputs(" <span class=\"muted\">boot ", out);
			rep_html_text(out, text_of(c, "boot_id"), 12);
			fputs("</span>", out);
		}
		fprintf(out, "</td><td class=\"num\">%lld</td><td class=\"mono\">",
			(long long)json_integer_value(json_object_get(c, "pid")));
		rep_html_text(out, text_of(c, "build_id") ? text_of(c, "build_id") : "?", 0);
		fputs("</td><td>", out);
		rep_html_hang_badge(out, text_of(c, "cause_kind"));
		rep_html_text(out, text_of(c, "cause_kind"), 0);
		if (text_of(c, "cause_summary")) {
			fputs(": ", out);
			rep_html_text(out, text_of(c, "cause_summary"), 200);
		}
		fputs("</td></tr>\n", out);
	}
	fputs("</table></div>\n", out);
}

static int bucket_html(FILE *out, struct rep_reader *r, json_t *b, json_t *cores)
{
	char title[128];
	snprintf(title, sizeof(title), "asyncore: bucket %.20s", text_of(b, "hash"));
	rep_html_begin(out, title);
	rep_html_site_nav(out, NULL);
	fprintf(out, "<header class=\"top\">\n<h1><span class=\"count\">%lld</span> ",
		(long long)json_integer_value(json_object_get(b, "count")));
	fputs("<span class=\"signature\">", out);
	rep_html_text(out, text_of(b, "signature") ? text_of(b, "signature") : "(no signature)", 0);
	fputs("</span></h1>\n", out);
	rep_html_bucket_cause(out, b);
	rep_html_bucket_facts(out, b);
	fputs("</header>\n<section id=\"cores\">\n", out);
	fprintf(out, "<h2>Cores <span class=\"n\">(newest first%s)</span></h2>\n",
		json_array_size(cores) == PAGE_MAX_CORES ? ", the first 500" : "");
	write_core_rows(out, cores);
	fputs("</section>\n<section id=\"builds\">\n<h2>Cores per build <span class=\"n\">(oldest first)"
	      "</span></h2>\n", out);
	rep_html_bucket_builds(out, b);
	fputs("</section>\n<section id=\"trend\">\n<h2>Crashes per day</h2>\n", out);
	rep_html_bucket_chart(out, b);
	fputs("</section>\n<section id=\"example\">\n<h2>Example stack <span class=\"n\">(the most "
	      "recent core)</span></h2>\n", out);
	int rc = text_of(b, "example_core") ? rep_html_example_stack(out, r, text_of(b, "example_core")) : 0;
	fputs("</section>\n", out);
	rep_html_end(out);
	return rc == 0 ? 200 : 500;
}

int rep_page_bucket(FILE *out, struct rep_reader *r, const char *hash, bool json)
{
	const struct rep_bucket_filter f = {.hash = hash};
	struct rep_bucket_totals totals;
	json_t *buckets = NULL, *cores = NULL, *b;
	int rc = 500;
	if (rep_buckets_read(r, &f, &buckets, &totals) != 0)
		return 500;
	if (!(b = json_array_get(buckets, 0))) {
		rc = 404;
		rep_page_error(out, 404, "no such bucket", json);
		goto out;
	}
	if (!(cores = bucket_cores(r, hash, json_integer_value(json_object_get(b, "count")),
				   totals.one_bucket)))
		goto out;
	if (json) {
		json_object_set(b, "cores", cores);
		rc = json_page(out, json_incref(b));
	} else {
		rc = bucket_html(out, r, b, cores);
	}
out:
	json_decref(cores);
	json_decref(buckets);
	return rc;
}

int rep_page_core(FILE *out, struct rep_reader *r, const char *id, bool json)
{
	struct rep_stored_core *c = NULL;
	int found = rep_stored_core_load(r, id, &c), rc;
	if (found != 0) {
		if (found == 1)
			rep_page_error(out, 404, "no such core", json);
		return found == 1 ? 404 : 500;
	}
	if (json) {
		const struct rep_json_options opts = {.all_threads = true};
		rc = rep_json_write(out, c->an, &opts) == 0 ? 200 : 500;
	} else {
		/* no source lines: the paths are the core's, the files would be the server's */
		const struct rep_html_options opts = {.all_threads = true};
		rc = rep_html_write(out, c->an, &opts) == 0 ? 200 : 500;
	}
	rep_stored_core_destroy(c);
	return rc;
}

/* A search matches its text (?1, %1$s) against a stored frame's function,
 * module or file (a thread's or a task's), the cause summary, and the
 * core's signature, executable, build-id and cause kind.  It never reads
 * every matching core: the text is looked up in the few distinct names
 * (search_names), which give the term sets holding them (term_names:
 * reports/store_rows.h); the cores of those sets are counted per bucket
 * and day in set_days, and the cores matching by their own columns are
 * whole groups of bucket_days.  A core of such a group is counted there,
 * its set's count taken only outside them, so no core counts twice. */

/* SQLite's sets: the names (n), the term sets holding one (ts), the
 * hashes whose signature matches (sh) and the groups of bucket_days
 * matching by their own columns (g). */
#define SQLITE_SETS \
	"WITH n AS MATERIALIZED (SELECT name FROM search_names WHERE instr(name, ?1) > 0)," \
	" ts AS MATERIALIZED (SELECT DISTINCT term_set FROM term_names WHERE name IN n)," \
	" sh AS MATERIALIZED (SELECT DISTINCT signature_hash AS h FROM bucket_days" \
	"  WHERE signature_hash <> '' AND instr(signature, ?1) > 0)," \
	" g AS MATERIALIZED (SELECT signature_hash AS h, cores, last_at FROM bucket_days" \
	"  WHERE " SQLITE_OWN("bucket_days") ") "
/* A row of C (cores, or a group of bucket_days or set_days: '' for NULL)
 * matching by its own columns. */
#define SQLITE_OWN(C) \
	"(ifnull(" C ".signature_hash, '') IN sh OR instr(ifnull(" C ".executable, ''), ?1) > 0" \
	" OR instr(ifnull(" C ".build_id, ''), ?1) > 0 OR instr(ifnull(" C ".cause_kind, ''), ?1) > 0)"
/* The buckets, from the groups matching by their own columns and the
 * cores of the matching sets outside them: the sets looked up by name
 * (ts) when few, else every group of set_days tested by index, which
 * costs at most a row per core instead of sorting a set per core. */
#define SQLITE_REST_FEW \
	"rest AS (SELECT signature_hash AS h, cores, last_at FROM set_days" \
	"  WHERE term_set IN ts AND NOT " SQLITE_OWN("set_days") ")"
#define SQLITE_REST_MANY \
	"rest AS (SELECT signature_hash AS h, cores, last_at FROM set_days" \
	"  WHERE EXISTS (SELECT 1 FROM term_names t WHERE t.name IN n AND t.term_set = set_days.term_set)" \
	"  AND NOT " SQLITE_OWN("set_days") ")"
#define SQLITE_BUCKETS(REST) \
	SQLITE_SETS ", " REST \
	"SELECT nullif(h, '') AS hash, (SELECT max(signature) FROM bucket_days b WHERE b.signature_hash = h)," \
	" sum(cores) AS n, max(last_at) FROM (SELECT * FROM g UNION ALL SELECT * FROM rest)" \
	" GROUP BY h ORDER BY n DESC, hash LIMIT 100"
/* Whether the names are held by many sets: SQLITE_MANY_SETS or more. */
#define SQLITE_MANY_SETS 20000
#define SQLITE_SET_ROWS \
	"WITH n AS MATERIALIZED (SELECT name FROM search_names WHERE instr(name, ?1) > 0)" \
	" SELECT count(*) >= 20000 FROM (SELECT 1 FROM term_names WHERE name IN n LIMIT 20000)"
_Static_assert(SQLITE_MANY_SETS == 20000, "SQLITE_SET_ROWS' bound");
/* A broad search (its buckets count at least SQLITE_BROAD_AT cores, or
 * fill the page) walks the cores newest first and stops at the page's
 * last, testing each core's set by index; a narrow one looks them up by
 * set and group. */
#define SQLITE_BROAD_AT 2000
#define SQLITE_CORE_COLUMNS \
	"SELECT fingerprint, coalesce(crashed_at, file_mtime) AS seen, executable," \
	" build_id, signature_hash, signature, cause_kind, cause_summary FROM cores"
#define SQLITE_CORES_NARROW \
	SQLITE_SETS ", hit(id) AS (SELECT id FROM cores WHERE term_set IN ts" \
	"  UNION SELECT id FROM cores WHERE signature_hash IN sh" \
	"  UNION SELECT id FROM cores WHERE executable IN (SELECT executable FROM bucket_days" \
	"   WHERE instr(executable, ?1) > 0)" \
	"  UNION SELECT id FROM cores WHERE build_id IN (SELECT build_id FROM bucket_days" \
	"   WHERE instr(build_id, ?1) > 0)" \
	"  UNION SELECT id FROM cores WHERE cause_kind IN (SELECT cause_kind FROM bucket_days" \
	"   WHERE instr(cause_kind, ?1) > 0)) " \
	SQLITE_CORE_COLUMNS " WHERE id IN hit ORDER BY seen DESC, id DESC LIMIT 200"
#define SQLITE_CORES_BROAD \
	SQLITE_SETS SQLITE_CORE_COLUMNS " WHERE " SQLITE_OWN("cores") \
	" OR EXISTS (SELECT 1 FROM term_names t WHERE t.name IN n AND t.term_set = cores.term_set)" \
	" ORDER BY seen DESC, id DESC LIMIT 200"

/* ClickHouse's sets, as SQLite's: names, term sets, signature hashes, and
 * a group of bucket_days or set_days (CH_GROUP_OWN) or a core (CH_CORE_OWN)
 * matching by its own columns. */
#define CH_NAMES "(SELECT name FROM search_names WHERE position(name, %1$s) > 0)"
#define CH_SETS "(SELECT DISTINCT term_set FROM term_names WHERE name IN " CH_NAMES ")"
#define CH_SIG_HASHES \
	"(SELECT hash FROM bucket_days WHERE hash <> '' GROUP BY hash HAVING position(maxMerge(sig), %1$s) > 0)"
#define CH_GROUP_OWN \
	"(hash IN " CH_SIG_HASHES " OR position(exe, %1$s) > 0 OR position(build, %1$s) > 0" \
	" OR position(cause, %1$s) > 0)"
#define CH_CORE_OWN \
	"(ifNull(signature_hash, '') IN " CH_SIG_HASHES " OR position(ifNull(executable, ''), %1$s) > 0" \
	" OR position(ifNull(build_id, ''), %1$s) > 0 OR position(ifNull(cause_kind, ''), %1$s) > 0)"
#define CH_AGG_BUCKETS \
	"SELECT nullIf(h, ''), nullIf(max(s), ''), sum(c) AS k, nullIf(max(l), '') FROM" \
	" (SELECT hash AS h, maxMerge(sig) AS s, uniqExactMerge(n) AS c, maxMerge(last_at) AS l" \
	"  FROM bucket_days WHERE " CH_GROUP_OWN " GROUP BY hash" \
	"  UNION ALL SELECT hash AS h, '' AS s, uniqExactMerge(n) AS c, maxMerge(last_at) AS l" \
	"  FROM set_days WHERE term_set IN " CH_SETS " AND NOT " CH_GROUP_OWN " GROUP BY hash" \
	"  UNION ALL SELECT hash AS h, maxMerge(sig) AS s, toUInt64(0) AS c, '' AS l FROM bucket_days" \
	"  WHERE hash IN (SELECT hash FROM set_days WHERE term_set IN " CH_SETS ") GROUP BY hash)" \
	" GROUP BY h HAVING k > 0 ORDER BY k DESC, h LIMIT 100"
/* The day from which the matching cores number 200 ('': fewer, undated
 * ones too; NULL: none match), from the matching cores' count of each day
 * (DAY_COUNTS: day, c), here from both aggregates' days. */
#define CH_CUTOFF_OF(DAY_COUNTS) \
	"(SELECT if(arraySum(ns) = 0, NULL, if(arraySum(ns) < 200, ''," \
	"  ds[arrayFirstIndex(x -> x >= 200, arrayCumSum(ns))])) FROM" \
	" (SELECT groupArray(day) AS ds, groupArray(c) AS ns FROM (SELECT day, sum(c) AS c FROM" \
	"  (" DAY_COUNTS ")" \
	"  GROUP BY day ORDER BY day DESC)))"
#define CH_CUTOFF \
	CH_CUTOFF_OF("SELECT day, uniqExactMerge(n) AS c FROM bucket_days WHERE " CH_GROUP_OWN " GROUP BY day" \
		     "   UNION ALL SELECT day, uniqExactMerge(n) AS c FROM set_days" \
		     "   WHERE term_set IN " CH_SETS " AND NOT " CH_GROUP_OWN " GROUP BY day")
#define CH_CORE_COLUMNS \
	"SELECT fingerprint, ifNull(crashed_at, file_mtime) AS seen, executable, build_id," \
	" signature_hash, signature, cause_kind, cause_summary FROM cores FINAL"
#define CH_NEWEST " ORDER BY seen DESC NULLS LAST, analysed_at DESC, path LIMIT 200"
#define CH_AGG_CORES \
	CH_CORE_COLUMNS " PREWHERE fingerprint IN (SELECT fingerprint FROM cores" \
	"  PREWHERE ifNull(ifNull(crashed_at, file_mtime), '') >= " CH_CUTOFF \
	"  WHERE term_set IN " CH_SETS " OR " CH_CORE_OWN ")" \
	" WHERE term_set IN " CH_SETS " OR " CH_CORE_OWN CH_NEWEST
/* Whether the shortest name the search matches is held with every term
 * set the store has named (term_sets): then every core matches through
 * its set, and the buckets and newest cores are every core's, read from
 * bucket_days alone instead of looking up each set holding the name, at
 * most one a core.  The name's sets are counted by a 64-bit hash (two sets
 * of one hash count once: fewer, never more), term_sets by its distinct
 * keys (FINAL), exactly on one server; a cluster's (term_sets Distributed)
 * look the sets up.  Another name held with every set leaves the search
 * looking them up, as exact and slower. */
#define CH_ALL_SETS_MADE \
	"SELECT count() FROM system.tables WHERE database = currentDatabase() AND name = 'term_sets'" \
	" AND engine = 'ReplacingMergeTree'"
#define CH_ALL_SETS \
	"SELECT m > 0 AND m = a FROM (SELECT (SELECT uniqExact(cityHash64(term_set)) FROM term_names" \
	"  WHERE name IN (SELECT argMin(name, length(name)) FROM search_names WHERE position(name, %1$s) > 0))" \
	" AS m, (SELECT count() FROM term_sets FINAL) AS a)"
#define CH_ALL_BUCKETS \
	"SELECT nullIf(hash, ''), nullIf(maxMerge(sig), ''), uniqExactMerge(n) AS k, nullIf(maxMerge(last_at), '')" \
	" FROM bucket_days GROUP BY hash HAVING k > 0 ORDER BY k DESC, hash LIMIT 100"
#define CH_ALL_CORES \
	CH_CORE_COLUMNS " PREWHERE fingerprint IN (SELECT fingerprint FROM cores" \
	"  PREWHERE ifNull(ifNull(crashed_at, file_mtime), '') >= " \
	CH_CUTOFF_OF("SELECT day, uniqExactMerge(n) AS c FROM bucket_days GROUP BY day") ")" CH_NEWEST
#define CH_MATCH \
	" WHERE term_set IN " CH_SETS " OR position(ifNull(cause_summary, ''), %1$s) > 0" \
	" OR position(ifNull(signature, ''), %1$s) > 0 OR position(ifNull(cause_kind, ''), %1$s) > 0" \
	" OR position(ifNull(executable, ''), %1$s) > 0 OR position(ifNull(build_id, ''), %1$s) > 0"
_Static_assert(SEARCH_MAX_CORES == 200, "CH_CUTOFF's 200");

static const char *const hit_names[] = {"id", "crashed_at", "executable", "build_id", "hash", "signature",
					"cause_kind", "cause_summary"};
static const char *const hit_bucket_names[] = {"hash", "signature", "count", "last_seen"};

/* Whether SQLite's search of BUCKETS (its buckets) is broad. */
static bool sqlite_broad(json_t *buckets)
{
	json_int_t n = 0;
	json_t *b;
	size_t k;
	json_array_foreach(buckets, k, b)
		n += json_integer_value(json_object_get(b, "count"));
	return n >= SQLITE_BROAD_AT || json_array_size(buckets) >= SEARCH_MAX_BUCKETS;
}

/* Whether the first cell of SQL's rows (with PARAM) is 1: *YES.  0, or -1. */
static int first_is_one(struct rep_reader *r, const char *sql, const char *param, bool *yes)
{
	json_t *rows = NULL;
	*yes = false;
	if (rep_reader_rows(r, sql, param, &rows) != 0)
		return -1;
	*yes = json_integer_value(json_array_get(json_array_get(rows, 0), 0)) == 1;
	json_decref(rows);
	return 0;
}

/* ClickHouse: whether QUERY's names are held with every term set
 * (CH_ALL_SETS), when the store has term_sets on one server: *ALL. */
static int ch_all_sets(struct rep_reader *r, const char *query, bool *all)
{
	bool made;
	*all = false;
	if (first_is_one(r, CH_ALL_SETS_MADE, NULL, &made) != 0)
		return -1;
	return made ? first_is_one(r, CH_ALL_SETS, query, all) : 0;
}

/* The search's buckets (BUCKETS) or newest cores, as JSON objects; BROAD:
 * the search is broad (sqlite_broad()); EXACT: ClickHouse's aggregates are
 * (rep_reader_aggregates_exact()), ALL: and every core matches
 * (ch_all_sets()). */
static json_t *search_rows(struct rep_reader *r, const char *query, bool buckets, bool exact,
			   bool all, bool broad)
{
	static const char *const sql[2][2] = {
		{SQLITE_CORES_NARROW, CH_CORE_COLUMNS CH_MATCH CH_NEWEST},
		{SQLITE_BUCKETS(SQLITE_REST_FEW),
		 "SELECT signature_hash, any(signature), count() AS n, max(ifNull(crashed_at, file_mtime))"
		 " FROM cores FINAL" CH_MATCH
		 " GROUP BY signature_hash ORDER BY n DESC, signature_hash LIMIT 100"},
	};
	_Static_assert(SEARCH_MAX_CORES == 200 && SEARCH_MAX_BUCKETS == 100, "the queries' LIMIT");
	json_t *rows = NULL, *list;
	const char *q = sql[buckets][rep_reader_clickhouse(r)];
	if (rep_reader_clickhouse(r) && exact)
		q = buckets ? CH_AGG_BUCKETS : CH_AGG_CORES;
	if (rep_reader_clickhouse(r) && exact && all)
		q = buckets ? CH_ALL_BUCKETS : CH_ALL_CORES;
	if (!buckets && !rep_reader_clickhouse(r) && broad)
		q = SQLITE_CORES_BROAD;
	if (buckets && !rep_reader_clickhouse(r)) {
		if (rep_reader_rows(r, SQLITE_SET_ROWS, query, &rows) != 0)
			return NULL;
		if (json_integer_value(json_array_get(json_array_get(rows, 0), 0)) == 1)
			q = SQLITE_BUCKETS(SQLITE_REST_MANY);
		json_decref(rows);
		rows = NULL;
	}
	if (rep_reader_rows(r, q, query, &rows) != 0)
		return NULL;
	list = buckets ? objects(rows, hit_bucket_names, 4) : objects(rows, hit_names, 8);
	json_decref(rows);
	return list;
}

static void write_hit_buckets(FILE *out, json_t *buckets)
{
	json_t *b;
	size_t k;
	fprintf(out, "<section id=\"buckets\">\n<h2>Buckets <span class=\"n\">(%zu)</span></h2>\n"
		"<div class=\"scroll\"><table class=\"buckets\"><tr><th class=\"num\">cores</th>"
		"<th>signature</th><th>last seen</th></tr>\n", json_array_size(buckets));
	json_array_foreach(buckets, k, b) {
		fprintf(out, "<tr><td class=\"num\">%lld</td><td>",
			(long long)json_integer_value(json_object_get(b, "count")));
		bucket_link(out, text_of(b, "hash"), text_of(b, "signature"));
		fputs("</td><td class=\"mono\">", out);
		rep_html_text(out, text_of(b, "last_seen") ? text_of(b, "last_seen") : "no crash time", 0);
		fputs("</td></tr>\n", out);
	}
	fputs("</table></div>\n</section>\n", out);
}

static void write_hit_cores(FILE *out, json_t *cores)
{
	json_t *c;
	size_t k;
	fprintf(out, "<section id=\"cores\">\n<h2>Cores <span class=\"n\">(%zu%s, newest first)</span></h2>\n"
		"<div class=\"scroll\"><table class=\"cores\"><tr><th>crashed at</th><th>executable</th>"
		"<th>build-id</th><th>signature</th></tr>\n", json_array_size(cores),
		json_array_size(cores) == SEARCH_MAX_CORES ? ", the first" : "");
	json_array_foreach(cores, k, c) {
		fputs("<tr><td class=\"mono\">", out);
		link_to_core(out, text_of(c, "id"), when(c));
		fputs("</td><td class=\"mono\">", out);
		rep_html_path(out, text_of(c, "executable") ? text_of(c, "executable") : "?");
		fputs("</td><td class=\"mono\">", out);
		rep_html_text(out, text_of(c, "build_id") ? text_of(c, "build_id") : "?", 0);
		fputs("</td><td>", out);
		bucket_link(out, text_of(c, "hash"), text_of(c, "signature"));
		fputs("</td></tr>\n", out);
	}
	fputs("</table></div>\n</section>\n", out);
}

int rep_page_search(FILE *out, struct rep_reader *r, const char *query, bool json)
{
	json_t *buckets = NULL, *cores = NULL;
	bool asked = query && *query;
	int rc = 500;
	bool exact = false, all = false;
	if (asked && rep_reader_clickhouse(r) &&
	    (rep_reader_aggregates_exact(r, &exact) != 0 || (exact && ch_all_sets(r, query, &all) != 0)))
		goto out;
	if (asked && (!(buckets = search_rows(r, query, true, exact, all, false)) ||
		      !(cores = search_rows(r, query, false, exact, all, sqlite_broad(buckets)))))
		goto out;
	if (json) {
		rc = json_page(out, json_pack("{s:s, s:O, s:O}", "query", query ? query : "", "buckets",
					      buckets ? buckets : json_array(), "cores", cores ? cores : json_array()));
		goto out;
	}
	rep_html_begin(out, "asyncore: search");
	rep_html_site_nav(out, query);
	fputs("<header class=\"top quiet\">\n<h1>Search</h1>\n<p class=\"sub\">", out);
	if (asked) {
		fputs("crashes whose frames, signature, cause, executable or build-id hold <code>", out);
		rep_html_text(out, query, 0);
		fputs("</code>", out);
	} else {
		fputs("a function, module or source file, a signature, cause, executable or build-id", out);
	}
	fputs("</p>\n</header>\n", out);
	if (asked) {
		write_hit_buckets(out, buckets);
		write_hit_cores(out, cores);
	}
	rep_html_end(out);
	rc = ferror(out) ? 500 : 200;
out:
	json_decref(buckets);
	json_decref(cores);
	return rc;
}

void rep_page_error(FILE *out, int status, const char *why, bool json)
{
	if (json) {
		json_page(out, json_pack("{s:s, s:i}", "error", why, "status", status));
		return;
	}
	char title[64];
	snprintf(title, sizeof(title), "asyncore: %d", status);
	rep_html_begin(out, title);
	rep_html_site_nav(out, NULL);
	fprintf(out, "<header class=\"top quiet\">\n<h1>%d</h1>\n<p class=\"sub\">", status);
	rep_html_text(out, why, 0);
	fputs("</p>\n</header>\n", out);
	rep_html_end(out);
}
