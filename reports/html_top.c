/* The HTML bucket page of a store: a table with a row per crash signature
 * (its count, a sparkline of its last days, cause, signature, executables,
 * first and last seen), dense enough to scan thirty at once.  `top
 * --format html` and serve's / are this one writer (reports/buckets.h
 * reads the data); served, each row links to /bucket/HASH and the page
 * adds the filters and sort links; a file on its own follows the table
 * with each bucket's builds, chart of crashes per day and the crashing
 * stack of its most recent core.
 * Everything read from the store came from cores and goes through
 * rep_html_text(). */
#include "buckets.h"
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

/* Days of a row's sparkline, ending on the store's last crash day. */
enum { SPARK_DAYS = 30 };

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

static const char *field_text(json_t *obj, const char *field)
{
	return json_string_value(json_object_get(obj, field));
}

static long long field_int(json_t *obj, const char *field)
{
	return json_integer_value(json_object_get(obj, field));
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

/* DAYS ({"day", "count"}, oldest first) into COUNTS, a window of the last
 * CHART_MAX_DAYS days; *FIRST and *LAST the window's (-1: no day). */
static void day_counts(json_t *days, long counts[CHART_MAX_DAYS], long *first, long *last)
{
	json_t *d;
	size_t k;
	*first = *last = -1;
	json_array_foreach(days, k, d) {
		long day = day_number(field_text(d, "day"));
		if (day < 0 || day <= *last)
			continue;
		if (*first < 0)
			*first = day;
		if (day - *first >= CHART_MAX_DAYS) {
			long shift = day - *first - CHART_MAX_DAYS + 1;
			for (long i = 0; i < CHART_MAX_DAYS; i++)
				counts[i] = i + shift < CHART_MAX_DAYS ? counts[i + shift] : 0;
			*first += shift;
		}
		counts[day - *first] = (long)field_int(d, "count");
		*last = day;
	}
}

static void chart_bar(FILE *out, double x, double w, double h, const char *label, long n)
{
	fprintf(out, "<rect class=\"bar%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">"
		"<title>%s: %ld crash%s</title></rect>\n", strcmp(label, "undated") ? "" : " undated", x,
		90 - h, w, h, label, n, n == 1 ? "" : "es");
}

/* Crashes per day of bucket B as an SVG bar chart, a bar per day from the
 * first crash to the last (the last CHART_MAX_DAYS of them), and one grey
 * bar for the cores without a crash time. */
void rep_html_bucket_chart(FILE *out, json_t *b)
{
	long counts[CHART_MAX_DAYS] = {0}, first, last, peak = 1, undated = (long)field_int(b, "undated");
	day_counts(json_object_get(b, "days"), counts, &first, &last);
	if (first < 0 && !undated)
		return;
	if (first < 0)
		first = last = 0;
	/* At least two weeks, ending on the last crash: one bar is not a trend. */
	long ndays = last - first + 1, pad = ndays < CHART_MIN_DAYS ? CHART_MIN_DAYS - ndays : 0;
	memmove(counts + pad, counts, (size_t)ndays * sizeof(*counts));
	memset(counts, 0, (size_t)pad * sizeof(*counts));
	first -= pad;
	ndays += pad;
	for (long i = 0; i < ndays; i++)
		peak = counts[i] > peak ? counts[i] : peak;
	peak = undated > peak ? undated : peak;
	const double top = 16, bottom = 90, left = 30, right = undated ? 550 : 590;
	double slot = (right - left) / (double)ndays, w = slot > 3 ? slot * 0.8 : slot;
	char d[16];
	fprintf(out, "<div class=\"chart days\"><div class=\"caption\">crashes per day (peak %ld)</div>"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 600 110\" role=\"img\" "
		"aria-label=\"crashes per day\">\n", peak);
	fprintf(out, "<line class=\"axis\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/>\n", left,
		bottom, right, bottom);
	for (long i = 0; i < ndays; i++) {
		if (!counts[i])
			continue;
		day_text(d, first + i);
		chart_bar(out, left + slot * (double)i, w, (bottom - top) * (double)counts[i] / (double)peak, d,
			  counts[i]);
	}
	if (undated) {
		chart_bar(out, 566, 24, (bottom - top) * (double)undated / (double)peak, "undated", undated);
		fputs("<text x=\"578\" y=\"106\" text-anchor=\"middle\">?</text>", out);
	}
	if (last > 0 || !undated) {
		day_text(d, first);
		fprintf(out, "<text x=\"%.0f\" y=\"106\">%s</text>", left, d);
		day_text(d, last);
		fprintf(out, "<text x=\"%.0f\" y=\"106\" text-anchor=\"end\">%s</text>", right, d);
	}
	fputs("\n</svg></div>\n", out);
}

void rep_html_bucket_builds(FILE *out, json_t *b)
{
	json_t *q;
	size_t k;
	fputs("<div class=\"scroll\"><table class=\"builds\"><tr><th>executable</th><th>build-id</th>"
	      "<th>first seen</th><th class=\"num\">cores</th></tr>\n", out);
	json_array_foreach(json_object_get(b, "builds"), k, q) {
		fputs("<tr><td class=\"mono\">", out);
		rep_html_path(out, field_text(q, "executable") ? field_text(q, "executable") : "?");
		fputs("</td><td class=\"mono\">", out);
		rep_html_text(out, field_text(q, "build_id") ? field_text(q, "build_id") : "?", 0);
		fputs("</td><td class=\"mono\">", out);
		rep_html_text(out, field_text(q, "first_seen") ? field_text(q, "first_seen") : "undated", 0);
		fprintf(out, "</td><td class=\"num\">%lld</td></tr>\n", field_int(q, "count"));
	}
	fputs("</table></div>\n", out);
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

int rep_html_example_stack(FILE *out, struct rep_reader *r, const char *fingerprint)
{
	static const char sqlite[] =
		"SELECT f.kind, f.pc, f.function, f.function_offset, f.module, f.module_offset, f.file,"
		" f.line, f.inlined, f.seam, f.tailcall, f.display, f.args, f.runtime, f.detail, f.role"
		" FROM frames f JOIN threads t ON t.core_id = f.core_id AND t.idx = f.thread_idx"
		" WHERE f.core_id = (SELECT id FROM cores WHERE fingerprint = ?1) AND t.crashing = 1"
		" ORDER BY f.idx LIMIT 200";
	static const char clickhouse[] =
		"SELECT kind, pc, function, function_offset, module, module_offset, file, line, inlined,"
		" seam, tailcall, display, args, runtime, detail, role FROM frames FINAL"
		" WHERE fingerprint = %1$s AND"
		" thread_idx GLOBAL IN (SELECT idx FROM threads FINAL WHERE fingerprint = %1$s"
		" AND crashing = 1) ORDER BY idx LIMIT 200";
	_Static_assert(EXAMPLE_MAX_FRAMES == 200, "the queries' LIMIT");
	struct an_frame *frames = calloc(EXAMPLE_MAX_FRAMES, sizeof(*frames));
	json_t *rows = NULL, *q;
	size_t n = 0, k;
	if (!frames || rep_reader_rows(r, rep_reader_clickhouse(r) ? clickhouse : sqlite, fingerprint, &rows) != 0) {
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
static int write_example(FILE *out, struct rep_reader *r, json_t *b, bool open)
{
	const char *fp = field_text(b, "example_core");
	int rc;
	if (!fp)
		return 0;
	fprintf(out, "<details class=\"example\"%s><summary>example stack <span class=\"muted\">",
		open ? " open" : "");
	rep_html_path(out, field_text(b, "example_path"));
	fputs("</span></summary>\n", out);
	if (field_text(b, "abort_message")) {
		fputs("<p class=\"abort\"><b>Abort message:</b> ", out);
		rep_html_text(out, field_text(b, "abort_message"), 0);
		fputs("</p>\n", out);
	}
	rc = rep_html_example_stack(out, r, fp);
	fputs("</details>\n", out);
	return rc;
}

/* How write_list() writes each item. */
enum list_item { ITEM_TEXT, ITEM_PATH, ITEM_FILE_NAME };

/* Bucket B's array FIELD, comma-separated: each item a string, or with KEY
 * an object's string KEY ("?" when none), written as HOW says; with COUNTS,
 * each object's count after it. */
static void write_list(FILE *out, json_t *b, const char *field, const char *key, enum list_item how,
		       bool counts)
{
	json_t *q;
	size_t k;
	json_array_foreach(json_object_get(b, field), k, q) {
		const char *s = json_string_value(key ? json_object_get(q, key) : q);
		const char *slash = s ? strrchr(s, '/') : NULL;
		fputs(k ? ", " : "", out);
		if (how == ITEM_PATH)
			rep_html_path(out, s ? s : "?");
		else
			rep_html_text(out, how == ITEM_FILE_NAME && slash ? slash + 1 : s ? s : "?", 0);
		if (counts)
			fprintf(out, " (%lld)", field_int(q, "count"));
	}
}

/* "x86_64 (3), aarch64 (1)": the architectures of a bucket's cores. */
static void write_arches(FILE *out, json_t *b)
{
	fputs("<dt>arch</dt><dd class=\"arch\">", out);
	write_list(out, b, "arches", "arch", ITEM_TEXT, true);
	fputs("</dd>", out);
}

static void write_executables(FILE *out, json_t *b)
{
	fputs("<dt>executables</dt><dd>", out);
	write_list(out, b, "executables", NULL, ITEM_PATH, false);
	fputs("</dd>", out);
}

void rep_html_hang_badge(FILE *out, const char *cause_kind)
{
	if (rep_cause_is_hang(cause_kind))
		fputs("<span class=\"badge hang\">hang</span> ", out);
}

void rep_html_bucket_cause(FILE *out, json_t *b)
{
	if (!field_text(b, "cause_kind"))
		return;
	fputs("<p class=\"cause\">", out);
	rep_html_hang_badge(out, field_text(b, "cause_kind"));
	fputs("<b>", out);
	rep_html_text(out, field_text(b, "cause_kind"), 0);
	fputs(":</b> ", out);
	rep_html_text(out, field_text(b, "cause_summary"), 0);
	fputs("</p>\n", out);
}

void rep_html_bucket_facts(FILE *out, json_t *b)
{
	fputs("<dl class=\"facts\"><dt>first seen</dt><dd>", out);
	rep_html_text(out, field_text(b, "first_seen") ? field_text(b, "first_seen") : "no crash time", 0);
	fputs("</dd><dt>last seen</dt><dd>", out);
	rep_html_text(out, field_text(b, "last_seen") ? field_text(b, "last_seen") : "no crash time", 0);
	if (field_int(b, "undated"))
		fprintf(out, " (%lld without a crash time)", field_int(b, "undated"));
	fputs("</dd><dt>signature hash</dt><dd>", out);
	rep_html_text(out, field_text(b, "hash"), 0);
	fputs("</dd>", out);
	write_executables(out, b);
	write_arches(out, b);
	fputs("</dl>\n", out);
}

/* Bucket B in detail, the RANK-th: what a file on its own shows below
 * the table, where a served page links to /bucket/HASH instead. */
static int write_bucket(FILE *out, struct rep_reader *r, json_t *b, size_t rank,
			const struct rep_bucket_page *p)
{
	fprintf(out, "<article class=\"bucket\" id=\"bucket-%zu\">\n<h2><span class=\"count\">%lld</span>",
		rank, field_int(b, "count"));
	fputs("<span class=\"signature\">", out);
	rep_html_text(out, field_text(b, "signature") ? field_text(b, "signature") : "(no signature)", 0);
	fputs("</span></h2>\n", out);
	rep_html_bucket_cause(out, b);
	rep_html_bucket_facts(out, b);
	fputs("<div class=\"cols\"><div>\n", out);
	rep_html_bucket_builds(out, b);
	fputs("</div><div>\n", out);
	rep_html_bucket_chart(out, b);
	fputs("</div></div>\n", out);
	int rc = p->example_stacks ? write_example(out, r, b, rank == 1) : 0;
	fputs("</article>\n", out);
	return rc;
}

/* Crashes per day of bucket B in the SPARK_DAYS days that end on END (a
 * day number), as a sparkline: the same axis for every row. */
static void write_sparkline(FILE *out, json_t *b, long end)
{
	long counts[SPARK_DAYS] = {0}, peak = 1, total = 0;
	json_t *d;
	size_t k;
	json_array_foreach(json_object_get(b, "days"), k, d) {
		long i = day_number(field_text(d, "day")) - (end - SPARK_DAYS + 1);
		if (end >= 0 && i >= 0 && i < SPARK_DAYS)
			counts[i] += (long)field_int(d, "count");
	}
	for (long i = 0; i < SPARK_DAYS; i++) {
		peak = counts[i] > peak ? counts[i] : peak;
		total += counts[i];
	}
	fprintf(out, "<svg class=\"spark\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"18\" "
		"viewBox=\"0 0 %d 18\" role=\"img\" aria-label=\"%ld crash%s in the last %d days\">",
		3 * SPARK_DAYS, 3 * SPARK_DAYS, total, total == 1 ? "" : "es", SPARK_DAYS);
	fprintf(out, "<line class=\"axis\" x1=\"0\" y1=\"17.5\" x2=\"%d\" y2=\"17.5\"/>", 3 * SPARK_DAYS);
	char day[16];
	for (long i = 0; i < SPARK_DAYS; i++) {
		if (!counts[i])
			continue;
		double h = 1 + 15.0 * (double)counts[i] / (double)peak;
		day_text(day, end - SPARK_DAYS + 1 + i);
		fprintf(out, "<rect class=\"spark\" x=\"%ld\" y=\"%.1f\" width=\"2\" height=\"%.1f\">"
			"<title>%s: %ld crash%s</title></rect>", 3 * i, 17 - h, h, day, counts[i],
			counts[i] == 1 ? "" : "es");
	}
	fputs("</svg>", out);
}

/* "2024-05-07 12:00" of a crash time T ("2024-05-07T12:00:00Z"), the whole
 * time on hover. */
static void write_seen(FILE *out, const char *t)
{
	if (!t) {
		fputs("<td class=\"seen none\">undated</td>", out);
		return;
	}
	fputs("<td class=\"seen\" title=\"", out);
	rep_html_text(out, t, 0);
	fputs("\">", out);
	char shown[17];
	snprintf(shown, sizeof(shown), "%s", t);
	if (strlen(shown) > 10 && shown[10] == 'T')
		shown[10] = ' ';
	rep_html_text(out, shown, 0);
	fputs("</td>", out);
}

/* The executables' file names and the architectures, the paths on hover. */
static void write_where(FILE *out, json_t *b)
{
	size_t nbuilds = json_array_size(json_object_get(b, "builds"));
	fputs("<td class=\"where\" title=\"", out);
	write_list(out, b, "executables", NULL, ITEM_TEXT, false);
	fprintf(out, " (%zu build%s)\">", nbuilds, nbuilds == 1 ? "" : "s");
	write_list(out, b, "executables", NULL, ITEM_FILE_NAME, false);
	fputs(" <span class=\"arch\">", out);
	write_list(out, b, "arches", "arch", ITEM_TEXT, false);
	fputs("</span></td>", out);
}

/* Bucket B's row, the RANK-th: count, trend, cause, signature (linked to
 * its page when served, else to its part below), where, first and last
 * seen. */
static void write_row(FILE *out, json_t *b, size_t rank, long end, const struct rep_bucket_page *p)
{
	const char *hash = field_text(b, "hash"), *sig = field_text(b, "signature");
	fprintf(out, "<tr class=\"bucket\" id=\"row-%zu\"><td class=\"num\"><span class=\"count\">%lld</span>"
		"</td><td class=\"trend\">", rank, field_int(b, "count"));
	write_sparkline(out, b, end);
	fputs("</td><td class=\"cause\" title=\"", out);
	rep_html_text(out, field_text(b, "cause_summary"), 0);
	fputs("\">", out);
	if (field_text(b, "cause_kind")) {
		rep_html_hang_badge(out, field_text(b, "cause_kind"));
		fputs("<b>", out);
		rep_html_text(out, field_text(b, "cause_kind"), 0);
		fputs("</b> ", out);
		rep_html_text(out, field_text(b, "cause_summary"), 0);
	}
	fputs("</td><td class=\"sig\" title=\"", out);
	rep_html_text(out, sig ? sig : "(no signature)", 0);
	if (p->served && hash) {   /* a hash is 16 hex digits: no escaping to do, done anyway */
		fputs("\"><a href=\"/bucket/", out);
		rep_html_url_query(out, hash);
		fputs("\">", out);
	} else {
		fprintf(out, "\"><a href=\"#bucket-%zu\">", rank);
	}
	fputs("<span class=\"signature\">", out);
	rep_html_text(out, sig ? sig : "(no signature)", 0);
	fputs("</span></a></td>", out);
	write_where(out, b);
	write_seen(out, field_text(b, "first_seen"));
	write_seen(out, field_text(b, "last_seen"));
	fputs("</tr>\n", out);
}

/* "N cores in M buckets, from FIRST to LAST" under the title. */
static void write_totals(FILE *out, const struct rep_bucket_totals *t)
{
	fprintf(out, "<p class=\"sub\">%lld cores in %lld buckets", t->cores, t->buckets);
	if (t->first[0]) {
		fputs(", from ", out);
		rep_html_text(out, t->first, 0);
		fputs(" to ", out);
		rep_html_text(out, t->last, 0);
	}
	if (t->undated)
		fprintf(out, " (%lld without a crash time)", t->undated);
	fputs("</p>\n", out);
}

/* One text input of the filter form, its value the request's (escaped). */
static void filter_input(FILE *out, const char *name, const char *label, const char *value,
			 const char *type)
{
	fprintf(out, "<label>%s <input type=\"%s\" name=\"%s\" value=\"", label, type, name);
	rep_html_text(out, value ? value : "", 200);
	fputs("\"></label>\n", out);
}

static void write_filters(FILE *out, const struct rep_bucket_filter *f)
{
	fputs("<form class=\"filters\" method=\"get\" action=\"/\">\n", out);
	filter_input(out, "executable", "executable", f->executable, "text");
	filter_input(out, "build_id", "build-id", f->build_id, "text");
	filter_input(out, "cause", "cause kind", f->cause_kind, "text");
	filter_input(out, "from", "from", f->from, "date");
	filter_input(out, "to", "to", f->to, "date");
	fputs("<button type=\"submit\">filter</button> <a href=\"/\">clear</a>\n</form>\n", out);
}

static const char *const sort_names[] = {"count", "first", "last", "signature"};

/* The filter's own parameters, for the sort links (values percent-encoded). */
static void filter_query(FILE *out, const struct rep_bucket_filter *f)
{
	const char *names[] = {"executable", "build_id", "cause", "from", "to"};
	const char *values[] = {f->executable, f->build_id, f->cause_kind, f->from, f->to};
	for (size_t i = 0; i < 5; i++)
		if (values[i] && *values[i]) {
			fprintf(out, "&amp;%s=", names[i]);
			rep_html_url_query(out, values[i]);
		}
}

/* A column's heading; served, a link that sorts by it (a second click on
 * the current key turns its order round). */
static void write_heading(FILE *out, const char *label, int sort, const char *cls,
			  const struct rep_bucket_page *p)
{
	fprintf(out, "<th class=\"%s\">", cls);
	if (sort < 0 || !p->served || !p->filter) {
		fprintf(out, "%s</th>", label);
		return;
	}
	const struct rep_bucket_filter *f = p->filter;
	bool on = f->sort == (enum rep_bucket_sort)sort;
	bool asc = on ? !f->ascending : sort == REP_SORT_SIGNATURE;
	fprintf(out, "<a%s href=\"/?sort=%s&amp;order=%s", on ? " class=\"on\"" : "", sort_names[sort],
		asc ? "asc" : "desc");
	filter_query(out, f);
	fprintf(out, "\">%s%s</a></th>", label, on ? (f->ascending ? " &uarr;" : " &darr;") : "");
}

/* The buckets as a table a team scans, a row each. */
static void write_table(FILE *out, json_t *buckets, const struct rep_bucket_totals *totals,
			const struct rep_bucket_page *p)
{
	json_t *b;
	size_t k;
	long end = day_number(totals->last);
	fputs("<div class=\"scroll\"><table class=\"buckets\"><colgroup><col class=\"c-count\">"
	      "<col class=\"c-trend\"><col class=\"c-cause\"><col class=\"c-sig\"><col class=\"c-where\">"
	      "<col class=\"c-seen\"><col class=\"c-seen\"></colgroup>\n<thead><tr>", out);
	write_heading(out, "count", REP_SORT_COUNT, "num", p);
	fprintf(out, "<th class=\"trend\">%d days</th>", SPARK_DAYS);
	write_heading(out, "cause", -1, "cause", p);
	write_heading(out, "signature", REP_SORT_SIGNATURE, "sig", p);
	write_heading(out, "executable", -1, "where", p);
	write_heading(out, "first seen", REP_SORT_FIRST, "seen", p);
	write_heading(out, "last seen", REP_SORT_LAST, "seen", p);
	fputs("</tr></thead>\n<tbody>\n", out);
	json_array_foreach(buckets, k, b)
		write_row(out, b, k + 1, end, p);
	fputs("</tbody></table></div>\n", out);
}

void rep_html_site_nav(FILE *out, const char *query)
{
	fputs("<nav class=\"site\"><a href=\"/\">buckets</a>"
	      "<form method=\"get\" action=\"/search\"><input type=\"search\" name=\"q\" value=\"", out);
	rep_html_text(out, query ? query : "", 200);
	fputs("\" placeholder=\"function, module, file, signature, build-id\"> "
	      "<button type=\"submit\">search</button></form></nav>\n", out);
}

int rep_html_buckets(FILE *out, struct rep_reader *r, json_t *buckets,
		     const struct rep_bucket_totals *totals, const struct rep_bucket_page *p)
{
	json_t *b;
	size_t k;
	int rc = 0;
	rep_html_begin_wide(out, "asyncore: crash buckets");
	if (p->served)
		rep_html_site_nav(out, NULL);
	fputs("<header class=\"top quiet\">\n<h1>Crash buckets</h1>\n", out);
	write_totals(out, totals);
	if (p->served && p->filter)
		write_filters(out, p->filter);
	fputs("</header>\n", out);
	if (json_array_size(buckets))
		write_table(out, buckets, totals, p);
	if (!p->served && json_array_size(buckets))
		fputs("<h2 class=\"details\">Each bucket</h2>\n", out);
	json_array_foreach(buckets, k, b)
		if (rc == 0 && !p->served)
			rc = write_bucket(out, r, b, k + 1, p);
	if (json_array_size(buckets) == 0)
		fputs(totals->cores ? "<p class=\"none\">No bucket matches.</p>\n"
				    : "<p class=\"none\">The store holds no core.</p>\n", out);
	rep_html_end(out);
	return rc == 0 && !ferror(out) ? 0 : -1;
}

/* top's buckets are its view's, in its order (the text and JSON formats'). */
static json_t *top_hashes(struct rep_reader *r, long limit)
{
	char sql[128];
	json_t *rows = NULL, *hashes = json_array(), *q;
	size_t k;
	snprintf(sql, sizeof(sql), "SELECT signature_hash FROM top_signatures LIMIT %ld", limit);
	if (!hashes || rep_reader_rows(r, sql, NULL, &rows) != 0) {
		json_decref(hashes);
		return NULL;
	}
	json_array_foreach(rows, k, q)
		json_array_append(hashes, json_array_get(q, 0));
	json_decref(rows);
	return hashes;
}

int rep_html_top(FILE *out, struct rep_reader *r, long limit)
{
	const struct rep_bucket_filter all = {0};
	const struct rep_bucket_page page = {.example_stacks = true};
	struct rep_bucket_totals totals;
	json_t *buckets = NULL, *hashes = top_hashes(r, limit);
	int rc = -1;
	if (hashes && rep_buckets_read(r, &all, &buckets, &totals) == 0) {
		rep_buckets_order_as(buckets, hashes);
		while (json_array_size(buckets) > json_array_size(hashes))
			json_array_remove(buckets, json_array_size(buckets) - 1);
		rc = rep_html_buckets(out, r, buckets, &totals, &page);
	}
	json_decref(hashes);
	json_decref(buckets);
	return rc;
}
