/* The HTML bucket page of a store (`asyncore top --format html`): one
 * article per crash signature, most frequent first, with its count, first
 * and last seen, the executables and build-ids it hit, a chart of crashes
 * per day and the crashing stack of its most recent core.  Everything read
 * from the store came from cores and goes through rep_html_text(). */
#include "html.h"
#include "reader.h"
#include "report.h"
#include "store_rows.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Days drawn in a bucket's chart (the most recent ones), and frames shown
 * of an example stack. */
enum { CHART_MAX_DAYS = 120, CHART_MIN_DAYS = 14, EXAMPLE_MAX_FRAMES = 200 };

/* Cell C of ROW: text (NULL for null) and integer. */
static const char *col_text(json_t *row, size_t c)
{
	return json_string_value(json_array_get(row, c));
}

static long long col_int(json_t *row, size_t c)
{
	return json_integer_value(json_array_get(row, c));
}

static bool col_null(json_t *row, size_t c)
{
	return json_is_null(json_array_get(row, c));
}

/* Each query of the page in both stores' SQL: SQLite's with ?1 for the
 * parameter, ClickHouse's with %1$s (a literal) and %2$s the database.  In
 * ClickHouse every read is through FINAL, and a NULL hash matches NULL as
 * SQLite's IS does. */
struct page_sql {
	const char *sqlite, *clickhouse;
};

#define CH_HASH_IS "(signature_hash = %1$s OR (isNull(signature_hash) AND isNull(%1$s)))"

/* The rows of Q for PARAM (NULL when the store failed, reported). */
static json_t *page_rows(struct rep_reader *r, const struct page_sql *q, const char *param)
{
	json_t *rows = NULL;
	char *sql = NULL;
	if (!rep_reader_clickhouse(r)) {
		rep_reader_rows(r, q->sqlite, param, &rows);
		return rows;
	}
	/* the database first, so the parameter stays %1$s for the reader */
	if (asprintf(&sql, q->clickhouse, "%1$s", rep_reader_database(r)) < 0) {
		fprintf(stderr, "asyncore: out of memory\n");
		return NULL;
	}
	rep_reader_rows(r, sql, param, &rows);
	free(sql);
	return rows;
}

/* Days since the epoch of "YYYY-MM-DD..."; -1 when it is not a date. */
static long day_number(const char *date)
{
	struct tm tm = {0};
	if (!date || sscanf(date, "%4d-%2d-%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday) != 3)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	time_t t = timegm(&tm);
	return t == (time_t)-1 ? -1 : (long)(t / 86400);
}

static void day_text(char buf[16], long day)
{
	time_t t = (time_t)day * 86400;
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, 16, "%Y-%m-%d", &tm);
}

/* Crashes per day of one bucket as an SVG bar chart, a bar per day from the
 * first crash to the last (the last CHART_MAX_DAYS of them). */
static int write_day_chart(FILE *out, struct rep_reader *r, const char *hash)
{
	static const struct page_sql sql = {
		"SELECT substr(coalesce(crashed_at, analysed_at), 1, 10) AS day, count(*)"
		" FROM cores WHERE signature_hash IS ?1 GROUP BY day ORDER BY day",
		"SELECT substring(ifNull(crashed_at, analysed_at), 1, 10) AS day, count()"
		" FROM %2$s.cores FINAL WHERE " CH_HASH_IS " GROUP BY day ORDER BY day"};
	long counts[CHART_MAX_DAYS] = {0}, first = -1, last = -1, peak = 1;
	json_t *rows = page_rows(r, &sql, hash), *q;
	size_t k;
	if (!rows)
		return -1;
	/* Rows come oldest first: keep a window of the last CHART_MAX_DAYS days. */
	json_array_foreach(rows, k, q) {
		long day = day_number(col_text(q, 0));
		if (day < 0 || day <= last)
			continue;
		if (first < 0)
			first = day;
		if (day - first >= CHART_MAX_DAYS) {
			long shift = day - first - CHART_MAX_DAYS + 1;
			for (long i = 0; i < CHART_MAX_DAYS; i++)
				counts[i] = i + shift < CHART_MAX_DAYS ? counts[i + shift] : 0;
			first += shift;
		}
		counts[day - first] = (long)col_int(q, 1);
		last = day;
	}
	json_decref(rows);
	if (first < 0)
		return 0;
	/* At least two weeks, ending on the last crash: one bar is not a trend. */
	long ndays = last - first + 1, pad = ndays < CHART_MIN_DAYS ? CHART_MIN_DAYS - ndays : 0;
	memmove(counts + pad, counts, (size_t)ndays * sizeof(*counts));
	memset(counts, 0, (size_t)pad * sizeof(*counts));
	first -= pad;
	ndays += pad;
	for (long i = 0; i < ndays; i++)
		peak = counts[i] > peak ? counts[i] : peak;
	const double width = 600, height = 110, top = 16, bottom = 90, left = 30, right = 590;
	double slot = (right - left) / (double)ndays;
	char d[16];
	fprintf(out, "<div class=\"chart days\"><div class=\"caption\">crashes per day (peak %ld)</div>"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
		"aria-label=\"crashes per day\">\n", peak, width, height);
	fprintf(out, "<line class=\"axis\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/>\n", left,
		bottom, right, bottom);
	for (long i = 0; i < ndays; i++) {
		if (!counts[i])
			continue;
		double h = (bottom - top) * (double)counts[i] / (double)peak;
		double w = slot > 3 ? slot * 0.8 : slot;
		day_text(d, first + i);
		fprintf(out, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">"
			"<title>%s: %ld crash%s</title></rect>\n", left + slot * (double)i, bottom - h, w, h, d,
			counts[i], counts[i] == 1 ? "" : "es");
	}
	day_text(d, first);
	fprintf(out, "<text x=\"%.0f\" y=\"106\">%s</text>", left, d);
	day_text(d, last);
	fprintf(out, "<text x=\"%.0f\" y=\"106\" text-anchor=\"end\">%s</text>\n</svg></div>\n", right, d);
	return 0;
}

static int write_builds(FILE *out, struct rep_reader *r, const char *hash)
{
	static const struct page_sql sql = {
		"SELECT executable, build_id, count(*) AS n FROM cores WHERE signature_hash IS ?1"
		" GROUP BY executable, build_id ORDER BY n DESC, executable LIMIT 20",
		"SELECT executable, build_id, count() AS n FROM %2$s.cores FINAL WHERE " CH_HASH_IS
		" GROUP BY executable, build_id ORDER BY n DESC, executable NULLS FIRST LIMIT 20"};
	json_t *rows = page_rows(r, &sql, hash), *q;
	size_t k;
	if (!rows)
		return -1;
	fputs("<div class=\"scroll\"><table class=\"builds\"><tr><th>executable</th><th>build-id</th>"
	      "<th class=\"num\">cores</th></tr>\n", out);
	json_array_foreach(rows, k, q) {
		fputs("<tr><td class=\"mono\">", out);
		rep_html_path(out, col_text(q, 0) ? col_text(q, 0) : "?");
		fputs("</td><td class=\"mono\">", out);
		rep_html_text(out, col_text(q, 1) ? col_text(q, 1) : "?", 0);
		fprintf(out, "</td><td class=\"num\">%lld</td></tr>\n", col_int(q, 2));
	}
	fputs("</table></div>\n", out);
	json_decref(rows);
	return 0;
}

static void frame_from_row(struct an_frame *f, json_t *q)
{
	memset(f, 0, sizeof(*f));
	f->kind = an_frame_kind_parse(col_text(q, 0));
	f->pc = (uint64_t)col_int(q, 1);
	f->function = an_strdup(col_text(q, 2));
	f->has_offset = !col_null(q, 3);
	f->offset = (uint64_t)col_int(q, 3);
	f->module = an_strdup(col_text(q, 4));
	f->has_module_offset = !col_null(q, 5);
	f->module_offset = (uint64_t)col_int(q, 5);
	f->file = an_strdup(col_text(q, 6));
	f->line = (int)col_int(q, 7);
	f->inlined = col_int(q, 8) != 0;
	f->seam = col_int(q, 9) != 0;
	f->tailcall = col_int(q, 10) != 0;
	f->display = an_strdup(col_text(q, 11));
	rep_frame_args_parse(f, col_text(q, 12));
	f->runtime = an_strdup(col_text(q, 13));
	f->detail = an_strdup(col_text(q, 14));
	f->role = an_frame_role_parse(col_text(q, 15));
}

/* The crashing thread's frames of core ID (SQLite: its id; ClickHouse:
 * its fingerprint), as the crash page shows them. */
static int write_example_stack(FILE *out, struct rep_reader *r, const char *id)
{
	static const struct page_sql sql = {
		"SELECT f.kind, f.pc, f.function, f.function_offset, f.module, f.module_offset, f.file,"
		" f.line, f.inlined, f.seam, f.tailcall, f.display, f.args, f.runtime, f.detail, f.role"
		" FROM frames f JOIN threads t ON t.core_id = f.core_id AND t.idx = f.thread_idx"
		" WHERE f.core_id = ?1 AND t.crashing = 1 ORDER BY f.idx LIMIT 200",
		"SELECT kind, pc, function, function_offset, module, module_offset, file, line, inlined,"
		" seam, tailcall, display, args, runtime, detail, role FROM %2$s.frames FINAL"
		" WHERE fingerprint = %1$s AND"
		" thread_idx GLOBAL IN (SELECT idx FROM %2$s.threads FINAL WHERE fingerprint = %1$s"
		" AND crashing = 1) ORDER BY idx LIMIT 200"};
	_Static_assert(EXAMPLE_MAX_FRAMES == 200, "the queries' LIMIT");
	struct an_frame *frames = calloc(EXAMPLE_MAX_FRAMES, sizeof(*frames));
	json_t *rows = frames ? page_rows(r, &sql, id) : NULL, *q;
	size_t n = 0, k;
	if (!rows) {
		free(frames);
		return -1;
	}
	json_array_foreach(rows, k, q)
		if (n < EXAMPLE_MAX_FRAMES)
			frame_from_row(&frames[n++], q);
	json_decref(rows);
	rep_html_frames(out, frames, n, true);
	for (size_t i = 0; i < n; i++)
		an_frame_deinit(&frames[i]);
	free(frames);
	return 0;
}

/* The bucket's most recent core: its path, abort message and stack. */
static int write_example(FILE *out, struct rep_reader *r, const char *hash, bool open)
{
	static const struct page_sql sql = {
		"SELECT CAST(id AS TEXT), path, abort_message FROM cores WHERE signature_hash IS ?1"
		" ORDER BY coalesce(crashed_at, analysed_at) DESC, id DESC LIMIT 1",
		"SELECT fingerprint, path, abort_message FROM %2$s.cores FINAL WHERE " CH_HASH_IS
		" ORDER BY ifNull(crashed_at, analysed_at) DESC, analysed_at DESC, path DESC LIMIT 1"};
	json_t *rows = page_rows(r, &sql, hash), *q;
	int rc = 0;
	if (!rows)
		return -1;
	if ((q = json_array_get(rows, 0))) {
		fprintf(out, "<details class=\"example\"%s><summary>example stack <span class=\"muted\">",
			open ? " open" : "");
		rep_html_path(out, col_text(q, 1));
		fputs("</span></summary>\n", out);
		if (col_text(q, 2)) {
			fputs("<p class=\"abort\"><b>Abort message:</b> ", out);
			rep_html_text(out, col_text(q, 2), 0);
			fputs("</p>\n", out);
		}
		rc = write_example_stack(out, r, col_text(q, 0));
		fputs("</details>\n", out);
	}
	json_decref(rows);
	return rc;
}

/* The architectures of a bucket's cores, most cores first: "x86_64 (3),
 * aarch64 (1)". */
static int write_arches(FILE *out, struct rep_reader *r, const char *hash)
{
	static const struct page_sql sql = {
		"SELECT arch, count(*) AS n FROM cores WHERE signature_hash IS ?1"
		" GROUP BY arch ORDER BY n DESC, arch",
		"SELECT arch, count() AS n FROM %2$s.cores FINAL WHERE " CH_HASH_IS
		" GROUP BY arch ORDER BY n DESC, arch"};
	json_t *rows = page_rows(r, &sql, hash), *q;
	size_t k;
	if (!rows)
		return -1;
	fputs("<dt>arch</dt><dd class=\"arch\">", out);
	json_array_foreach(rows, k, q) {
		fputs(k ? ", " : "", out);
		rep_html_text(out, col_text(q, 0) ? col_text(q, 0) : "?", 0);
		fprintf(out, " (%lld)", col_int(q, 1));
	}
	fputs("</dd>", out);
	json_decref(rows);
	return 0;
}

/* One bucket: the current row of the top_signatures query Q. */
static int write_bucket(FILE *out, struct rep_reader *r, json_t *q, size_t rank)
{
	const char *hash = col_text(q, 0);
	fprintf(out, "<article class=\"bucket\" id=\"bucket-%zu\">\n<h2><span class=\"count\">%lld</span>"
		"<span class=\"signature\">", rank, col_int(q, 2));
	rep_html_text(out, col_text(q, 1) ? col_text(q, 1) : "(no signature)", 0);
	fputs("</span></h2>\n<dl class=\"facts\"><dt>first seen</dt><dd>", out);
	rep_html_text(out, col_text(q, 3), 0);
	fputs("</dd><dt>last seen</dt><dd>", out);
	rep_html_text(out, col_text(q, 4), 0);
	fputs("</dd><dt>signature hash</dt><dd>", out);
	rep_html_text(out, hash, 0);
	fputs("</dd>", out);
	int rc = write_arches(out, r, hash);
	fputs("</dl>\n<div class=\"cols\"><div>\n", out);
	if (rc == 0)
		rc = write_builds(out, r, hash);
	fputs("</div><div>\n", out);
	if (rc == 0)
		rc = write_day_chart(out, r, hash);
	fputs("</div></div>\n", out);
	if (rc == 0)
		rc = write_example(out, r, hash, rank == 1);
	fputs("</article>\n", out);
	return rc;
}

/* "N cores in M buckets, from FIRST to LAST" under the title. */
static int write_totals(FILE *out, struct rep_reader *r)
{
	static const struct page_sql sql = {
		"SELECT count(*), count(DISTINCT signature_hash), min(coalesce(crashed_at, analysed_at)),"
		" max(coalesce(crashed_at, analysed_at)) FROM cores",
		"SELECT count(), uniqExact(signature_hash),"
		" if(count() = 0, NULL, min(ifNull(crashed_at, analysed_at))),"
		" if(count() = 0, NULL, max(ifNull(crashed_at, analysed_at))) FROM %2$s.cores FINAL"};
	json_t *rows = page_rows(r, &sql, NULL), *q;
	if (!rows)
		return -1;
	if ((q = json_array_get(rows, 0))) {
		fprintf(out, "<p class=\"sub\">%lld cores in %lld buckets", col_int(q, 0), col_int(q, 1));
		if (col_text(q, 2)) {
			fputs(", from ", out);
			rep_html_text(out, col_text(q, 2), 0);
			fputs(" to ", out);
			rep_html_text(out, col_text(q, 3), 0);
		}
		fputs("</p>\n", out);
	}
	json_decref(rows);
	return 0;
}

int rep_html_top(FILE *out, struct rep_reader *r, long limit)
{
	static const struct page_sql sql = {
		"SELECT signature_hash, signature, cores, first_seen, last_seen FROM top_signatures"
		" LIMIT CAST(?1 AS INTEGER)",
		"SELECT signature_hash, signature, cores, first_seen, last_seen FROM %2$s.top_signatures"
		" LIMIT %1$s"};
	char limit_text[32];
	snprintf(limit_text, sizeof(limit_text), "%ld", limit);
	json_t *rows, *q;
	size_t rank = 0, k;
	int rc = 0;
	if (!rep_reader_clickhouse(r)) {
		rows = page_rows(r, &sql, limit_text);
	} else {   /* LIMIT takes a number, not a string literal */
		char *text = NULL;
		rows = NULL;
		if (asprintf(&text, "SELECT signature_hash, signature, cores, first_seen, last_seen"
			     " FROM %s.top_signatures LIMIT %ld", rep_reader_database(r), limit) >= 0) {
			rep_reader_rows(r, text, NULL, &rows);
			free(text);
		}
	}
	if (!rows)
		return -1;
	rep_html_begin(out, "asyncore: crash buckets");
	fputs("<header class=\"top quiet\">\n<h1>Crash buckets</h1>\n", out);
	rc = write_totals(out, r);
	fputs("</header>\n", out);
	json_array_foreach(rows, k, q) {
		if (rc != 0)
			break;
		rc = write_bucket(out, r, q, ++rank);
	}
	if (rank == 0)
		fputs("<p class=\"none\">The store holds no core.</p>\n", out);
	json_decref(rows);
	rep_html_end(out);
	return rc == 0 && !ferror(out) ? 0 : -1;
}
