/* The HTML bucket page of a store (`asyncore top --format html`): one
 * article per crash signature, most frequent first, with its count, first
 * and last seen, the executables and build-ids it hit, a chart of crashes
 * per day and the crashing stack of its most recent core.  Everything read
 * from the store came from cores and goes through rep_html_text(). */
#include "html.h"
#include "report.h"

#include <inttypes.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Days drawn in a bucket's chart (the most recent ones), and frames shown
 * of an example stack. */
enum { CHART_MAX_DAYS = 120, CHART_MIN_DAYS = 14, EXAMPLE_MAX_FRAMES = 200 };

static const char *col_text(sqlite3_stmt *q, int c)
{
	return (const char *)sqlite3_column_text(q, c);
}

/* Prepare SQL with ?1 bound to HASH (may be NULL); NULL when it fails. */
static sqlite3_stmt *prepare_for(sqlite3 *db, const char *sql, const char *hash)
{
	sqlite3_stmt *q = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) {
		fprintf(stderr, "asyncore: top: %s\n", sqlite3_errmsg(db));
		return NULL;
	}
	if (hash)
		sqlite3_bind_text(q, 1, hash, -1, SQLITE_TRANSIENT);
	return q;
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
static int write_day_chart(FILE *out, sqlite3 *db, const char *hash)
{
	static const char sql[] =
		"SELECT substr(coalesce(crashed_at, analysed_at), 1, 10) AS day, count(*)"
		" FROM cores WHERE signature_hash IS ?1 GROUP BY day ORDER BY day";
	long counts[CHART_MAX_DAYS] = {0}, first = -1, last = -1, peak = 1;
	sqlite3_stmt *q = prepare_for(db, sql, hash);
	if (!q)
		return -1;
	/* Rows come oldest first: keep a window of the last CHART_MAX_DAYS days. */
	while (sqlite3_step(q) == SQLITE_ROW) {
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
		counts[day - first] = sqlite3_column_int64(q, 1);
		last = day;
	}
	sqlite3_finalize(q);
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

static int write_builds(FILE *out, sqlite3 *db, const char *hash)
{
	static const char sql[] =
		"SELECT executable, build_id, count(*) AS n FROM cores WHERE signature_hash IS ?1"
		" GROUP BY executable, build_id ORDER BY n DESC, executable LIMIT 20";
	sqlite3_stmt *q = prepare_for(db, sql, hash);
	if (!q)
		return -1;
	fputs("<div class=\"scroll\"><table class=\"builds\"><tr><th>executable</th><th>build-id</th>"
	      "<th class=\"num\">cores</th></tr>\n", out);
	while (sqlite3_step(q) == SQLITE_ROW) {
		fputs("<tr><td class=\"mono\">", out);
		rep_html_path(out, col_text(q, 0) ? col_text(q, 0) : "?");
		fputs("</td><td class=\"mono\">", out);
		rep_html_text(out, col_text(q, 1) ? col_text(q, 1) : "?", 0);
		fprintf(out, "</td><td class=\"num\">%lld</td></tr>\n", (long long)sqlite3_column_int64(q, 2));
	}
	fputs("</table></div>\n", out);
	sqlite3_finalize(q);
	return 0;
}

/* A frame's "args" column ([{"name", "type", "value"}] as JSON text, NULL
 * without DWARF) into F. */
static void frame_args_from_json(struct an_frame *f, const char *text)
{
	json_t *arr = text ? json_loads(text, 0, NULL) : NULL;
	if (!json_is_array(arr)) {
		json_decref(arr);
		return;
	}
	size_t n = json_array_size(arr);
	f->args = n ? calloc(n, sizeof(*f->args)) : NULL;
	f->has_args = !n || f->args;
	for (size_t i = 0; f->args && i < n; i++) {
		json_t *a = json_array_get(arr, i);
		f->args[i].name = an_strdup(json_string_value(json_object_get(a, "name")));
		f->args[i].type = an_strdup(json_string_value(json_object_get(a, "type")));
		f->args[i].value = an_strdup(json_string_value(json_object_get(a, "value")));
		f->nargs++;
	}
	json_decref(arr);
}

static void frame_from_row(struct an_frame *f, sqlite3_stmt *q)
{
	memset(f, 0, sizeof(*f));
	f->kind = an_frame_kind_parse(col_text(q, 0));
	f->pc = (uint64_t)sqlite3_column_int64(q, 1);
	f->function = an_strdup(col_text(q, 2));
	f->has_offset = sqlite3_column_type(q, 3) != SQLITE_NULL;
	f->offset = (uint64_t)sqlite3_column_int64(q, 3);
	f->module = an_strdup(col_text(q, 4));
	f->has_module_offset = sqlite3_column_type(q, 5) != SQLITE_NULL;
	f->module_offset = (uint64_t)sqlite3_column_int64(q, 5);
	f->file = an_strdup(col_text(q, 6));
	f->line = sqlite3_column_int(q, 7);
	f->inlined = sqlite3_column_int(q, 8) != 0;
	f->seam = sqlite3_column_int(q, 9) != 0;
	f->tailcall = sqlite3_column_int(q, 10) != 0;
	f->display = an_strdup(col_text(q, 11));
	frame_args_from_json(f, col_text(q, 12));
	f->runtime = an_strdup(col_text(q, 13));
	f->detail = an_strdup(col_text(q, 14));
}

/* The crashing thread's frames of core ID, as the crash page shows them. */
static int write_example_stack(FILE *out, sqlite3 *db, long long id)
{
	static const char sql[] =
		"SELECT f.kind, f.pc, f.function, f.function_offset, f.module, f.module_offset, f.file,"
		" f.line, f.inlined, f.seam, f.tailcall, f.display, f.args, f.runtime, f.detail"
		" FROM frames f JOIN threads t ON t.core_id = f.core_id AND t.idx = f.thread_idx"
		" WHERE f.core_id = ?1 AND t.crashing = 1 ORDER BY f.idx LIMIT ?2";
	struct an_frame *frames = calloc(EXAMPLE_MAX_FRAMES, sizeof(*frames));
	sqlite3_stmt *q = frames ? prepare_for(db, sql, NULL) : NULL;
	size_t n = 0;
	if (!q) {
		free(frames);
		return -1;
	}
	sqlite3_bind_int64(q, 1, id);
	sqlite3_bind_int(q, 2, EXAMPLE_MAX_FRAMES);
	while (n < EXAMPLE_MAX_FRAMES && sqlite3_step(q) == SQLITE_ROW)
		frame_from_row(&frames[n++], q);
	sqlite3_finalize(q);
	rep_html_frames(out, frames, n, true);
	for (size_t i = 0; i < n; i++)
		an_frame_deinit(&frames[i]);
	free(frames);
	return 0;
}

/* The bucket's most recent core: its path, abort message and stack. */
static int write_example(FILE *out, sqlite3 *db, const char *hash, bool open)
{
	static const char sql[] =
		"SELECT id, path, abort_message FROM cores WHERE signature_hash IS ?1"
		" ORDER BY coalesce(crashed_at, analysed_at) DESC, id DESC LIMIT 1";
	sqlite3_stmt *q = prepare_for(db, sql, hash);
	int rc = 0;
	if (!q)
		return -1;
	if (sqlite3_step(q) == SQLITE_ROW) {
		fprintf(out, "<details class=\"example\"%s><summary>example stack <span class=\"muted\">",
			open ? " open" : "");
		rep_html_path(out, col_text(q, 1));
		fputs("</span></summary>\n", out);
		if (col_text(q, 2)) {
			fputs("<p class=\"abort\"><b>Abort message:</b> ", out);
			rep_html_text(out, col_text(q, 2), 0);
			fputs("</p>\n", out);
		}
		rc = write_example_stack(out, db, sqlite3_column_int64(q, 0));
		fputs("</details>\n", out);
	}
	sqlite3_finalize(q);
	return rc;
}

/* One bucket: the current row of the top_signatures query Q. */
static int write_bucket(FILE *out, sqlite3 *db, sqlite3_stmt *q, size_t rank)
{
	const char *hash = col_text(q, 0);
	fprintf(out, "<article class=\"bucket\" id=\"bucket-%zu\">\n<h2><span class=\"count\">%lld</span>"
		"<span class=\"signature\">", rank, (long long)sqlite3_column_int64(q, 2));
	rep_html_text(out, col_text(q, 1) ? col_text(q, 1) : "(no signature)", 0);
	fputs("</span></h2>\n<dl class=\"facts\"><dt>first seen</dt><dd>", out);
	rep_html_text(out, col_text(q, 3), 0);
	fputs("</dd><dt>last seen</dt><dd>", out);
	rep_html_text(out, col_text(q, 4), 0);
	fputs("</dd><dt>signature hash</dt><dd>", out);
	rep_html_text(out, hash, 0);
	fputs("</dd></dl>\n<div class=\"cols\"><div>\n", out);
	int rc = write_builds(out, db, hash);
	fputs("</div><div>\n", out);
	if (rc == 0)
		rc = write_day_chart(out, db, hash);
	fputs("</div></div>\n", out);
	if (rc == 0)
		rc = write_example(out, db, hash, rank == 1);
	fputs("</article>\n", out);
	return rc;
}

/* "N cores in M buckets, from FIRST to LAST" under the title. */
static int write_totals(FILE *out, sqlite3 *db)
{
	static const char sql[] =
		"SELECT count(*), count(DISTINCT signature_hash), min(coalesce(crashed_at, analysed_at)),"
		" max(coalesce(crashed_at, analysed_at)) FROM cores";
	sqlite3_stmt *q = prepare_for(db, sql, NULL);
	if (!q)
		return -1;
	if (sqlite3_step(q) == SQLITE_ROW) {
		fprintf(out, "<p class=\"sub\">%lld cores in %lld buckets", (long long)sqlite3_column_int64(q, 0),
			(long long)sqlite3_column_int64(q, 1));
		if (col_text(q, 2)) {
			fputs(", from ", out);
			rep_html_text(out, col_text(q, 2), 0);
			fputs(" to ", out);
			rep_html_text(out, col_text(q, 3), 0);
		}
		fputs("</p>\n", out);
	}
	sqlite3_finalize(q);
	return 0;
}

int rep_html_top(FILE *out, struct sqlite3 *db, long limit)
{
	static const char sql[] =
		"SELECT signature_hash, signature, cores, first_seen, last_seen FROM top_signatures LIMIT ?1";
	sqlite3_stmt *q = prepare_for(db, sql, NULL);
	int rc = 0, step = SQLITE_DONE;
	size_t rank = 0;
	if (!q)
		return -1;
	sqlite3_bind_int64(q, 1, limit);
	rep_html_begin(out, "asyncore: crash buckets");
	fputs("<header class=\"top quiet\">\n<h1>Crash buckets</h1>\n", out);
	rc = write_totals(out, db);
	fputs("</header>\n", out);
	while (rc == 0 && (step = sqlite3_step(q)) == SQLITE_ROW)
		rc = write_bucket(out, db, q, ++rank);
	if (rc == 0 && step != SQLITE_DONE) {
		fprintf(stderr, "asyncore: top: %s\n", sqlite3_errmsg(db));
		rc = -1;
	}
	if (rank == 0)
		fputs("<p class=\"none\">The store holds no core.</p>\n", out);
	sqlite3_finalize(q);
	rep_html_end(out);
	return rc == 0 && !ferror(out) ? 0 : -1;
}
