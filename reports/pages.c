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
static void core_link(FILE *out, const char *fp, const char *label)
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
static const char *const core_names[] = {"id", "crashed_at", "executable", "boot_id", "pid", "build_id",
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
	list = objects(rows, core_names, sizeof(core_names) / sizeof(core_names[0]));
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
		core_link(out, text_of(c, "id"), when(c));
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
		rc = rep_html_write(out, c->an, true) == 0 ? 200 : 500;
	}
	rep_stored_core_destroy(c);
	return rc;
}

/* Cores matching ?1 (%1$s): a stored frame's function, module or file (a
 * thread's or a task's), or the core's signature, cause, executable or
 * build-id.  SQLite looks the text up in the few distinct names first
 * (search_names, bucket_days), then the cores holding them by index. */
#define SQLITE_HITS \
	"WITH n AS MATERIALIZED (SELECT name FROM search_names WHERE instr(name, ?1) > 0)," \
	" b AS MATERIALIZED (SELECT nullif(signature_hash, '') AS h, nullif(executable, '') AS e," \
	"  nullif(build_id, '') AS i, nullif(cause_kind, '') AS k, instr(signature, ?1) > 0 AS s," \
	"  instr(executable, ?1) > 0 AS se, instr(build_id, ?1) > 0 AS si, instr(cause_kind, ?1) > 0 AS sk" \
	"  FROM bucket_days)," \
	" hit(id) AS (SELECT core_id FROM search_terms WHERE name IN n" \
	"  UNION SELECT id FROM cores WHERE cause_summary IN n" \
	"  UNION SELECT id FROM cores WHERE signature_hash IN (SELECT h FROM b WHERE s)" \
	"  UNION SELECT id FROM cores WHERE executable IN (SELECT e FROM b WHERE se)" \
	"  UNION SELECT id FROM cores WHERE build_id IN (SELECT i FROM b WHERE si)" \
	"  UNION SELECT id FROM cores WHERE cause_kind IN (SELECT k FROM b WHERE sk)) "
/* ClickHouse: the cores that may match, found in the few names and
 * buckets (search_names, search_terms and bucket_days, kept by views), and
 * of those the current rows (FINAL) that match: a frame's name, or the
 * core's own columns. */
#define CH_NAMES "(SELECT name FROM search_names WHERE position(name, %1$s) > 0)"
#define CH_FRAME_HITS "(SELECT fingerprint FROM search_terms WHERE name IN " CH_NAMES ")"
#define CH_AGG_HITS(col, key) \
	" OR " col " IN (SELECT " key " FROM bucket_days WHERE position(" key ", %1$s) > 0)"
#define CH_MATCH \
	" WHERE fingerprint IN (" CH_FRAME_HITS " UNION ALL SELECT fingerprint FROM cores" \
	"  WHERE signature_hash IN (SELECT hash FROM bucket_days GROUP BY hash" \
	"   HAVING position(maxMerge(sig), %1$s) > 0)" \
	"  " CH_AGG_HITS("executable", "exe") CH_AGG_HITS("build_id", "build") CH_AGG_HITS("cause_kind", "cause") \
	"  OR cause_summary IN " CH_NAMES ")" \
	" AND (fingerprint IN " CH_FRAME_HITS \
	" OR position(ifNull(signature, ''), %1$s) > 0" \
	" OR position(ifNull(cause_summary, ''), %1$s) > 0 OR position(ifNull(cause_kind, ''), %1$s) > 0" \
	" OR position(ifNull(executable, ''), %1$s) > 0 OR position(ifNull(build_id, ''), %1$s) > 0)"

/* ClickHouse without FINAL over every matching core, as SQLite does it:
 * the groups of bucket_days matching by their own columns (hash by its
 * signature, executable, build-id, cause: every core of such a group
 * matches) give their counts, and of the cores a name holds (search_terms,
 * cause_summary) only those outside such a group are read (FINAL, their
 * fingerprints and "outside" in PREWHERE, before the versions merge: the
 * versions of a core in one group agree on its group's columns).  The newest 200
 * cores are those a name holds and the group-matching ones from the day
 * (CH_CUTOFF) whence the matching groups hold 200 (none: NULL, no group
 * matching, no core's own columns match).  Right while
 * bucket_days holds every core in one group (CH_EXACT, as the bucket
 * page checks; asked only when a group matches: the buckets' last column
 * says how many did), else read again by CH_MATCH over cores FINAL. */
#define CH_EXACT \
	"SELECT sum(c) = uniqExactMerge(s) FROM (SELECT uniqExactMerge(n) AS c, uniqExactMergeState(n) AS s" \
	" FROM bucket_days GROUP BY hash, exe, build, arch, cause, day)"
#define CH_SIG_HASHES \
	"(SELECT hash FROM bucket_days WHERE hash <> '' GROUP BY hash HAVING position(maxMerge(sig), %1$s) > 0)"
#define CH_GROUP_OWN \
	"(hash IN " CH_SIG_HASHES " OR position(exe, %1$s) > 0 OR position(build, %1$s) > 0" \
	" OR position(cause, %1$s) > 0)"
#define CH_CORE_OWN \
	"(ifNull(signature_hash, '') IN " CH_SIG_HASHES " OR position(ifNull(executable, ''), %1$s) > 0" \
	" OR position(ifNull(build_id, ''), %1$s) > 0 OR position(ifNull(cause_kind, ''), %1$s) > 0)"
#define CH_NAME_HITS \
	" PREWHERE fingerprint IN (" CH_FRAME_HITS " UNION ALL SELECT fingerprint FROM cores" \
	"  WHERE cause_summary IN " CH_NAMES ") AND NOT " CH_CORE_OWN \
	" WHERE (fingerprint IN " CH_FRAME_HITS " OR position(ifNull(cause_summary, ''), %1$s) > 0)"
#define CH_AGG_BUCKETS \
	"SELECT nullIf(h, ''), nullIf(max(s), ''), sum(c) AS k, nullIf(max(l), ''), sum(g) FROM" \
	" (SELECT hash AS h, maxMerge(sig) AS s, uniqExactMerge(n) AS c, maxMerge(last_at) AS l," \
	"  toUInt64(1) AS g FROM bucket_days WHERE " CH_GROUP_OWN " GROUP BY hash" \
	"  UNION ALL SELECT ifNull(signature_hash, '') AS h, max(ifNull(signature, '')) AS s, count() AS c," \
	"  max(ifNull(ifNull(crashed_at, file_mtime), '')) AS l, toUInt64(0) AS g FROM cores FINAL" CH_NAME_HITS \
	"  GROUP BY h)" \
	" GROUP BY h ORDER BY k DESC, h LIMIT 100"
#define CH_CUTOFF \
	"(SELECT if(arraySum(ns) = 0, NULL, if(arraySum(ns) < 200, ''," \
	"  ds[arrayFirstIndex(x -> x >= 200, arrayCumSum(ns))])) FROM" \
	" (SELECT groupArray(day) AS ds, groupArray(c) AS ns FROM (SELECT day, uniqExactMerge(n) AS c" \
	"  FROM bucket_days WHERE day <> '' AND " CH_GROUP_OWN " GROUP BY day ORDER BY day DESC)))"
#define CH_AGG_CORES \
	"SELECT fingerprint, ifNull(crashed_at, file_mtime) AS seen, executable, build_id," \
	" signature_hash, signature, cause_kind, cause_summary FROM cores FINAL" \
	" PREWHERE fingerprint IN (SELECT fingerprint FROM cores WHERE (fingerprint IN " CH_FRAME_HITS \
	"  OR cause_summary IN " CH_NAMES ") AND NOT " CH_CORE_OWN " UNION ALL SELECT fingerprint FROM cores" \
	"  PREWHERE ifNull(ifNull(crashed_at, file_mtime), '') >= " CH_CUTOFF " WHERE " CH_CORE_OWN ")" \
	" WHERE (fingerprint IN " CH_FRAME_HITS " OR position(ifNull(cause_summary, ''), %1$s) > 0" \
	" OR " CH_CORE_OWN ")" \
	" ORDER BY seen DESC NULLS LAST, analysed_at DESC, path LIMIT 200"
_Static_assert(SEARCH_MAX_CORES == 200, "CH_CUTOFF's 200");

static const char *const hit_names[] = {"id", "crashed_at", "executable", "build_id", "hash", "signature",
					"cause_kind", "cause_summary"};
static const char *const hit_bucket_names[] = {"hash", "signature", "count", "last_seen"};

/* SQLite's answers without a set of every matching core: the names and
 * hashes a search matches (n, sh), the groups of bucket_days matching by
 * their own columns (all of their cores match: g), and of the cores a name
 * holds (search_terms, cause_summary) those outside such a group. */
#define SQLITE_SETS \
	"WITH n AS MATERIALIZED (SELECT name FROM search_names WHERE instr(name, ?1) > 0)," \
	" sh AS MATERIALIZED (SELECT DISTINCT signature_hash AS h FROM bucket_days" \
	"  WHERE signature_hash <> '' AND instr(signature, ?1) > 0)," \
	" g AS MATERIALIZED (SELECT signature_hash AS h, signature AS sig, cores, last_at FROM bucket_days" \
	"  WHERE signature_hash IN sh OR instr(executable, ?1) > 0 OR instr(build_id, ?1) > 0" \
	"   OR instr(cause_kind, ?1) > 0) "
/* A core of cores (C) matching by its own columns. */
#define SQLITE_OWN(C) \
	"(" C ".signature_hash IN sh OR instr(" C ".executable, ?1) > 0 OR instr(" C ".build_id, ?1) > 0" \
	" OR instr(" C ".cause_kind, ?1) > 0)"
#define SQLITE_BUCKETS \
	SQLITE_SETS ", rest AS (SELECT ifnull(c.signature_hash, '') AS h, c.signature AS sig, 1 AS cores," \
	"  coalesce(c.crashed_at, c.file_mtime) AS last_at FROM cores c" \
	"  WHERE c.id IN (SELECT core_id FROM search_terms WHERE name IN n" \
	"   UNION SELECT id FROM cores WHERE cause_summary IN n) AND NOT " SQLITE_OWN("c") ")" \
	"SELECT nullif(h, '') AS hash, max(sig), sum(cores) AS n, max(last_at) FROM" \
	" (SELECT * FROM g UNION ALL SELECT * FROM rest)" \
	" GROUP BY h ORDER BY n DESC, hash LIMIT 100"
/* How many cores may match, up to a bound: a broad search (the bound
 * reached) walks the cores newest first, a narrow one looks them up. */
#define SQLITE_BROAD_AT 2000
#define SQLITE_CANDIDATES \
	SQLITE_SETS "SELECT (SELECT ifnull(sum(cores), 0) FROM g)" \
	" + (SELECT count(*) FROM (SELECT 1 FROM search_terms WHERE name IN n LIMIT 2000))" \
	" + (SELECT count(*) FROM (SELECT 1 FROM cores WHERE cause_summary IN n LIMIT 2000))"
#define SQLITE_CORE_COLUMNS \
	"SELECT fingerprint, coalesce(crashed_at, file_mtime) AS seen, executable," \
	" build_id, signature_hash, signature, cause_kind, cause_summary FROM cores"
#define SQLITE_CORES_BROAD \
	SQLITE_SETS SQLITE_CORE_COLUMNS " WHERE " SQLITE_OWN("cores") " OR cause_summary IN n" \
	" OR EXISTS (SELECT 1 FROM search_terms t WHERE t.core_id = cores.id AND t.name IN n)" \
	" ORDER BY seen DESC, id DESC LIMIT 200"
_Static_assert(SQLITE_BROAD_AT == 2000, "SQLITE_CANDIDATES' LIMIT");

/* ClickHouse's buckets of QUERY by CH_AGG_BUCKETS in *LIST, and whether
 * they and CH_AGG_CORES are right (no group matched, or every core is in
 * one group) in *EXACT. */
static int ch_agg_buckets(struct rep_reader *r, const char *query, json_t **list, bool *exact)
{
	json_t *rows = NULL, *row, *check = NULL;
	bool grouped = false;
	size_t k;
	if (rep_reader_rows(r, CH_AGG_BUCKETS, query, &rows) != 0)
		return -1;
	json_array_foreach(rows, k, row)
		grouped |= json_integer_value(json_array_get(row, 4)) > 0;
	*exact = true;
	if (grouped) {
		if (rep_reader_rows(r, CH_EXACT, query, &check) != 0) {
			json_decref(rows);
			return -1;
		}
		*exact = json_integer_value(json_array_get(json_array_get(check, 0), 0)) == 1;
		json_decref(check);
	}
	*list = *exact ? objects(rows, hit_bucket_names, 4) : NULL;
	json_decref(rows);
	return 0;
}

static json_t *search_rows(struct rep_reader *r, const char *query, bool buckets, bool ch_exact)
{
	static const char *const sql[2][2] = {
		{SQLITE_HITS SQLITE_CORE_COLUMNS " WHERE id IN hit ORDER BY seen DESC, id DESC LIMIT 200",
		 "SELECT fingerprint, ifNull(crashed_at, file_mtime) AS seen, executable, build_id,"
		 " signature_hash, signature, cause_kind, cause_summary FROM cores FINAL" CH_MATCH
		 " ORDER BY seen DESC NULLS LAST, analysed_at DESC, path LIMIT 200"},
		{SQLITE_BUCKETS,
		 "SELECT signature_hash, any(signature), count() AS n, max(ifNull(crashed_at, file_mtime))"
		 " FROM cores FINAL" CH_MATCH
		 " GROUP BY signature_hash ORDER BY n DESC, signature_hash LIMIT 100"},
	};
	_Static_assert(SEARCH_MAX_CORES == 200 && SEARCH_MAX_BUCKETS == 100, "the queries' LIMIT");
	json_t *rows = NULL, *list;
	const char *q = sql[buckets][rep_reader_clickhouse(r)];
	if (ch_exact)
		q = buckets ? CH_AGG_BUCKETS : CH_AGG_CORES;
	if (!buckets && !rep_reader_clickhouse(r)) {
		if (rep_reader_rows(r, SQLITE_CANDIDATES, query, &rows) != 0)
			return NULL;
		json_int_t n = json_integer_value(json_array_get(json_array_get(rows, 0), 0));
		json_decref(rows);
		rows = NULL;
		if (n >= SQLITE_BROAD_AT)
			q = SQLITE_CORES_BROAD;
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
		core_link(out, text_of(c, "id"), when(c));
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
	bool exact = false;
	if (asked && rep_reader_clickhouse(r) && ch_agg_buckets(r, query, &buckets, &exact) != 0)
		goto out;
	if (asked && ((!buckets && !(buckets = search_rows(r, query, true, exact))) ||
		      !(cores = search_rows(r, query, false, exact))))
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
