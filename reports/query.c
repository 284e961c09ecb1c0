#include "query.h"
#include "reader.h"

#include <errno.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clickhouse.h"
#include "html.h"
#include "bytes.h"

/* A result held in memory so a table can be aligned: rows x cols strings
 * (NULL for SQL NULL). */
struct result {
	int ncols;
	char **names;
	char **cells;
	size_t nrows, cap;
};

static void result_free(struct result *r)
{
	for (int c = 0; c < r->ncols; c++)
		free(r->names ? r->names[c] : NULL);
	for (size_t i = 0; i < r->nrows * (size_t)r->ncols; i++)
		free(r->cells[i]);
	free(r->names);
	free(r->cells);
	memset(r, 0, sizeof(*r));
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Append a row of TEXTS (NULL for SQL NULL) to R; false on out-of-memory. */
static bool result_add_row(struct result *r, const char *const *texts)
{
	size_t need = (r->nrows + 1) * (size_t)r->ncols;
	if (need > r->cap) {
		size_t ncap = need * 2;
		char **p = realloc(r->cells, ncap * sizeof(*p));
		if (!p)
			return false;
		r->cells = p;
		r->cap = ncap;
	}
	char **row = r->cells + r->nrows * (size_t)r->ncols;
	for (int c = 0; c < r->ncols; c++) {
		row[c] = dup_or_null(texts[c]);
		if (texts[c] && !row[c]) {
			for (int k = 0; k < c; k++)
				free(row[k]);
			return false;
		}
	}
	r->nrows++;
	return true;
}

/* The table is read on a terminal: cells are escaped as the text report's
 * strings are (reports/bytes.h).  False on out-of-memory. */
static bool print_table(const struct result *r)
{
	struct rep_escaper esc = {0};
	size_t *w = calloc((size_t)r->ncols, sizeof(*w));
	if (!w)
		return false;
	for (int c = 0; c < r->ncols; c++)
		w[c] = strlen(rep_escape(&esc, r->names[c]));
	for (size_t i = 0; i < r->nrows; i++)
		for (int c = 0; c < r->ncols; c++) {
			const char *s = r->cells[i * (size_t)r->ncols + (size_t)c];
			size_t n = s ? strlen(rep_escape(&esc, s)) : 0;
			if (n > w[c])
				w[c] = n;
		}
	for (int c = 0; c < r->ncols; c++)
		printf("%-*s%s", c + 1 < r->ncols ? (int)w[c] : 0, rep_escape(&esc, r->names[c]),
		       c + 1 < r->ncols ? "  " : "\n");
	for (int c = 0; c < r->ncols; c++) {
		for (size_t k = 0; k < w[c]; k++)
			putchar('-');
		fputs(c + 1 < r->ncols ? "  " : "\n", stdout);
	}
	for (size_t i = 0; i < r->nrows; i++)
		for (int c = 0; c < r->ncols; c++) {
			const char *s = r->cells[i * (size_t)r->ncols + (size_t)c];
			printf("%-*s%s", c + 1 < r->ncols ? (int)w[c] : 0, rep_escape(&esc, s),
			       c + 1 < r->ncols ? "  " : "\n");
		}
	free(w);
	bool ok = !esc.failed;
	rep_escaper_clear(&esc);
	return ok;
}

static void csv_cell(const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

static void csv_row(char *const *cells, int ncols)
{
	for (int c = 0; c < ncols; c++) {
		csv_cell(cells[c]);
		putchar(c + 1 < ncols ? ',' : '\n');
	}
}

/* Where a statement's rows go: a table (aligned once all rows are in),
 * CSV (streamed) or a JSON array of objects. */
struct sink {
	enum rep_format fmt;
	struct result r;
	json_t *rows;
};

/* A new statement's columns: NAMES[0 .. NCOLS). */
static int sink_begin(struct sink *k, enum rep_format fmt, const char *const *names, int ncols)
{
	memset(k, 0, sizeof(*k));
	k->fmt = fmt;
	k->r.ncols = ncols;
	k->r.names = calloc((size_t)(ncols ? ncols : 1), sizeof(*k->r.names));
	if (!k->r.names || (fmt == REP_FORMAT_JSON && !(k->rows = json_array())))
		return -1;
	for (int c = 0; c < ncols; c++)
		if (!(k->r.names[c] = strdup(names[c])))
			return -1;
	if (fmt == REP_FORMAT_CSV && ncols)
		csv_row(k->r.names, ncols);
	return 0;
}

/* One row: TEXTS for table and CSV, VALUES (typed; taken) for JSON. */
static int sink_row(struct sink *k, const char *const *texts, json_t **values)
{
	if (k->fmt == REP_FORMAT_JSON) {
		json_t *row = json_object();
		for (int c = 0; c < k->r.ncols; c++)
			if (!row || !values[c] || json_object_set_new(row, k->r.names[c], values[c]) != 0) {
				json_decref(row);
				for (int j = c + 1; j < k->r.ncols; j++)
					json_decref(values[j]);
				return -1;
			}
		return json_array_append_new(k->rows, row);
	}
	if (!result_add_row(&k->r, texts))
		return -1;
	if (k->fmt == REP_FORMAT_CSV) {   /* stream CSV rows, keep nothing */
		csv_row(k->r.cells, k->r.ncols);
		for (int c = 0; c < k->r.ncols; c++)
			free(k->r.cells[c]);
		k->r.nrows = 0;
	}
	return 0;
}

/* Print what is left (OK: every row arrived) and free the sink; -1 when
 * not OK or the table could not be printed (out of memory). */
static int sink_end(struct sink *k, bool ok)
{
	if (ok && k->fmt == REP_FORMAT_TABLE && k->r.ncols && !print_table(&k->r))
		ok = false;
	if (ok && k->fmt == REP_FORMAT_JSON && json_dumpf(k->rows, stdout, JSON_INDENT(2)) == 0)
		putchar('\n');
	json_decref(k->rows);
	result_free(&k->r);
	return ok ? 0 : -1;
}

/* One SQLite column value as JSON: integers and reals as numbers, blobs as
 * hex, text made valid UTF-8. */
static json_t *json_value(sqlite3_stmt *q, int c)
{
	switch (sqlite3_column_type(q, c)) {
	case SQLITE_INTEGER:
		return json_integer(sqlite3_column_int64(q, c));
	case SQLITE_FLOAT:
		return json_real(sqlite3_column_double(q, c));
	case SQLITE_NULL:
		return json_null();
	case SQLITE_BLOB: {
		const unsigned char *b = sqlite3_column_blob(q, c);
		int n = sqlite3_column_bytes(q, c);
		char *hex = malloc((size_t)n * 2 + 1);
		json_t *v;
		if (!hex)
			return NULL;
		for (int i = 0; i < n; i++)
			snprintf(hex + 2 * i, 3, "%02x", b[i]);
		hex[2 * n] = '\0';
		v = json_string(hex);
		free(hex);
		return v;
	}
	default: {
		const char *t = (const char *)sqlite3_column_text(q, c);
		json_t *v = json_stringn(t, (size_t)sqlite3_column_bytes(q, c));
		return v ? v : rep_json_text(t);   /* text stored before it was made valid */
	}
	}
}

/* Run one prepared, read-only statement and print its rows.  0 or -1. */
static int run_statement(sqlite3 *db, sqlite3_stmt *q, enum rep_format fmt)
{
	int ncols = sqlite3_column_count(q), step;
	const char **texts = calloc((size_t)(ncols ? ncols : 1), sizeof(*texts));
	json_t **values = calloc((size_t)(ncols ? ncols : 1), sizeof(*values));
	struct sink k;
	bool ok = false, reported = false;
	for (int c = 0; texts && c < ncols; c++)
		texts[c] = sqlite3_column_name(q, c);
	if (!texts || !values || sink_begin(&k, fmt, texts, ncols) != 0) {
		if (texts && values)
			sink_end(&k, false);
		free(texts);
		free(values);
		fprintf(stderr, "asyncore: query: out of memory\n");
		return -1;
	}
	while ((step = sqlite3_step(q)) == SQLITE_ROW) {
		for (int c = 0; c < ncols; c++) {
			texts[c] = (const char *)sqlite3_column_text(q, c);
			values[c] = fmt == REP_FORMAT_JSON ? json_value(q, c) : NULL;
		}
		if (sink_row(&k, texts, values) != 0)
			goto out;
	}
	if (step != SQLITE_DONE) {
		fprintf(stderr, "asyncore: query: %s\n", sqlite3_errmsg(db));
		reported = true;
		goto out;
	}
	ok = true;
out:
	free(texts);
	free(values);
	if (sink_end(&k, ok) == 0)
		return 0;
	if (!reported)
		fprintf(stderr, "asyncore: query: out of memory\n");
	return -1;
}

/* Refuse anything that would change a database, even through ATTACH. */
static int deny_writes(void *unused, int action, const char *a, const char *b, const char *c,
		       const char *d)
{
	(void)unused, (void)a, (void)b, (void)c, (void)d;
	return action == SQLITE_ATTACH || action == SQLITE_DETACH ? SQLITE_DENY : SQLITE_OK;
}

static int open_readonly(const char *path, sqlite3 **db)
{
	if (sqlite3_open_v2(path, db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		fprintf(stderr, "asyncore: %s: %s\n", path, *db ? sqlite3_errmsg(*db) : "out of memory");
		sqlite3_close(*db);
		*db = NULL;
		return -1;
	}
	sqlite3_busy_timeout(*db, 5000);
	sqlite3_set_authorizer(*db, deny_writes, NULL);
	return 0;
}

/* Run every statement of SQL in turn. */
static int run_sql(const char *path, const char *sql, enum rep_format fmt)
{
	sqlite3 *db = NULL;
	int rc = 2;
	if (open_readonly(path, &db) != 0)
		return 2;
	while (sql && *sql) {
		sqlite3_stmt *q = NULL;
		const char *tail = NULL;
		if (sqlite3_prepare_v2(db, sql, -1, &q, &tail) != SQLITE_OK) {
			fprintf(stderr, "asyncore: query: %s\n", sqlite3_errmsg(db));
			goto out;
		}
		sql = tail;
		if (!q)
			continue;   /* whitespace or a comment */
		if (!sqlite3_stmt_readonly(q)) {
			fprintf(stderr, "asyncore: query: refusing a statement that writes: %s\n",
				sqlite3_sql(q));
			sqlite3_finalize(q);
			goto out;
		}
		int r = run_statement(db, q, fmt);
		sqlite3_finalize(q);
		if (r != 0)
			goto out;
	}
	rc = 0;
out:
	sqlite3_close(db);
	return rc;
}

/* A ClickHouse cell as query prints it in a table or CSV: numbers as
 * SQLite prints them, strings as they are, arrays as JSON; NULL for null.
 * BUF holds what is not a string (caller frees). */
static const char *cell_text(json_t *v, char **buf)
{
	*buf = NULL;
	if (json_is_null(v))
		return NULL;
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v)) {
		if (asprintf(buf, "%lld", (long long)json_integer_value(v)) < 0)
			*buf = NULL;
	} else if (json_is_real(v)) {
		if (asprintf(buf, "%.15g", json_real_value(v)) < 0)
			*buf = NULL;
	} else {
		*buf = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	}
	return *buf ? *buf : "";
}

/* One ClickHouse row of DATA's typed cells through the sink. */
static int ch_row(struct sink *k, json_t *row, json_t *meta, const char **texts, json_t **values,
		  char **bufs)
{
	int rc;
	for (int c = 0; c < k->r.ncols; c++) {
		const char *type = json_string_value(json_object_get(json_array_get(meta, c), "type"));
		values[c] = rep_ch_cell(json_array_get(row, c), type);
		texts[c] = values[c] ? cell_text(values[c], &bufs[c]) : NULL;
	}
	rc = sink_row(k, texts, values);   /* JSON takes the values */
	for (int c = 0; k->fmt != REP_FORMAT_JSON && c < k->r.ncols; c++)
		json_decref(values[c]);
	for (int c = 0; c < k->r.ncols; c++)
		free(bufs[c]);
	return rc;
}

/* SQL on ClickHouse, read-only (the server refuses writes with readonly=1). */
static int ch_query(const char *url, const char *sql, enum rep_format fmt)
{
	struct rep_ch *ch = NULL;
	json_t *res = NULL, *row;
	char why[512];
	int rc = 2;
	if (rep_ch_open(url, &ch, why, sizeof(why)) != 0 ||
	    rep_ch_select(ch, sql, true, &res, why, sizeof(why)) != 0) {
		rep_say(stderr, "query", why);   /* the server's words, as it sent them */
		goto out;
	}
	json_t *meta = json_object_get(res, "meta"), *data = json_object_get(res, "data");
	int ncols = (int)json_array_size(meta);
	size_t n = ncols ? (size_t)ncols : 1, i;
	const char **texts = calloc(n, sizeof(*texts));
	json_t **values = calloc(n, sizeof(*values));
	char **bufs = calloc(n, sizeof(*bufs));
	struct sink k;
	bool ok = texts && values && bufs;
	for (int c = 0; ok && c < ncols; c++)
		if (!(texts[c] = json_string_value(json_object_get(json_array_get(meta, c), "name"))))
			ok = false;
	if (ok && sink_begin(&k, fmt, texts, ncols) == 0) {
		json_array_foreach(data, i, row)
			if (!(ok = ch_row(&k, row, meta, texts, values, bufs) == 0))
				break;
		rc = sink_end(&k, ok) == 0 ? 0 : 2;
	} else if (ok) {
		sink_end(&k, false);
	}
	if (rc != 0)
		fprintf(stderr, "asyncore: query: out of memory\n");
	free(texts);
	free(values);
	free(bufs);
out:
	json_decref(res);
	rep_ch_close(ch);
	return rc;
}

/* 2 when what was printed did not reach stdout in full (said on stderr),
 * else RC. */
static int flushed(int rc)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "asyncore: query: the rows could not be written: %s\n",
			strerror(errno ? errno : EIO));
		return 2;
	}
	return rc;
}

int rep_query(const char *db, const char *sql, enum rep_format format)
{
	errno = 0;
	return flushed(rep_ch_is_url(db) ? ch_query(db, sql, format) : run_sql(db, sql, format));
}

int rep_top(const char *db, long limit, enum rep_format format)
{
	char sql[320];
	if (format == REP_FORMAT_HTML) {
		struct rep_reader *r = NULL;
		if (rep_reader_open(db, &r) != 0)
			return 2;
		errno = 0;
		int rc = flushed(rep_html_top(stdout, r, limit) == 0 ? 0 : 2);
		rep_reader_close(r);
		return rc;
	}
	snprintf(sql, sizeof(sql),
		 "SELECT cores AS count, signature, first_seen, last_seen, last_7_days, new, build_ids,"
		 " example_core, signature_hash, hang FROM top_signatures LIMIT %ld", limit);
	return rep_query(db, sql, format);
}

/* ---- struct rep_reader ---------------------------------------------- */

struct rep_reader {
	sqlite3 *db;
	struct rep_ch *ch;
	long limit_ms;              /* each query's bound; < 0: none */
	struct timespec deadline;   /* the SQLite query's, while it runs */
	bool timed_out;             /* the last query passed its bound */
};

/* SQLite's progress callback: non-zero stops the query (SQLITE_INTERRUPT). */
static int past_deadline(void *arg)
{
	struct rep_reader *r = arg;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	r->timed_out = now.tv_sec > r->deadline.tv_sec ||
		       (now.tv_sec == r->deadline.tv_sec && now.tv_nsec >= r->deadline.tv_nsec);
	return r->timed_out;
}

void rep_reader_set_time_limit(struct rep_reader *r, long ms)
{
	bool on = ms >= 0;
	r->limit_ms = on ? ms : -1;
	if (r->ch)
		rep_ch_set_time_limit(r->ch, r->limit_ms);
	else
		sqlite3_progress_handler(r->db, !on ? 0 : ms == 0 ? 1 : 1000, on ? past_deadline : NULL, r);
}

bool rep_reader_timed_out(const struct rep_reader *r)
{
	return r->ch ? rep_ch_timed_out(r->ch) : r->timed_out;
}

/* The deadline of a query starting now. */
static void start_clock(struct rep_reader *r)
{
	r->timed_out = false;
	if (r->limit_ms < 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &r->deadline);
	r->deadline.tv_sec += r->limit_ms / 1000;
	r->deadline.tv_nsec += (r->limit_ms % 1000) * 1000000L;
	if (r->deadline.tv_nsec >= 1000000000L) {
		r->deadline.tv_sec++;
		r->deadline.tv_nsec -= 1000000000L;
	}
}

int rep_reader_open(const char *db, struct rep_reader **out)
{
	struct rep_reader *r = calloc(1, sizeof(*r));
	char why[512];
	if (r)
		r->limit_ms = -1;
	int rc;
	if (!r) {
		fprintf(stderr, "asyncore: out of memory\n");
		return -1;
	}
	if (rep_ch_is_url(db)) {
		if ((rc = rep_ch_open(db, &r->ch, why, sizeof(why))) != 0)
			fprintf(stderr, "asyncore: %s\n", why);
	} else {
		rc = open_readonly(db, &r->db);   /* reports its own failure */
	}
	if (rc != 0) {
		free(r);
		return -1;
	}
	*out = r;
	return 0;
}

void rep_reader_close(struct rep_reader *r)
{
	if (!r)
		return;
	sqlite3_close(r->db);
	rep_ch_close(r->ch);
	free(r);
}

bool rep_reader_clickhouse(const struct rep_reader *r)
{
	return r->ch != NULL;
}

const char *rep_reader_database(const struct rep_reader *r)
{
	return r->ch ? rep_ch_database(r->ch) : "main";
}

static int sqlite_rows(sqlite3 *db, const char *sql, const char *const *params, size_t n,
		       json_t *rows)
{
	sqlite3_stmt *q = NULL;
	int step, rc = -1;
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
		goto out;
	for (int i = 1; i <= sqlite3_bind_parameter_count(q); i++)
		sqlite3_bind_text(q, i, (size_t)i <= n ? params[i - 1] : NULL, -1, SQLITE_TRANSIENT);
	while ((step = sqlite3_step(q)) == SQLITE_ROW) {
		json_t *row = json_array();
		for (int c = 0; row && c < sqlite3_column_count(q); c++)
			if (json_array_append_new(row, json_value(q, c)) != 0) {
				json_decref(row);
				row = NULL;
			}
		if (json_array_append_new(rows, row) != 0)
			goto out;
	}
	rc = step == SQLITE_DONE ? 0 : -1;
out:
	if (rc != 0)
		fprintf(stderr, "asyncore: top: %s\n", sqlite3_errmsg(db));
	sqlite3_finalize(q);
	return rc;
}

/* SQL with each %N$s replaced by PARAMS[N - 1] as a quoted literal (NULL:
 * NULL) and %% by %; NULL when out of memory or SQL names a parameter it
 * was not given. */
static char *ch_bind(const char *sql, const char *const *params, size_t n)
{
	char *text = NULL, *lit;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	bool ok = out != NULL;
	for (const char *p = sql; ok && *p; p++) {
		if (p[0] == '%' && p[1] == '%') {
			fputc('%', out);
			p++;
		} else if (p[0] == '%' && p[1] >= '1' && p[1] <= '9' && p[2] == '$' && p[3] == 's') {
			size_t k = (size_t)(p[1] - '1');
			lit = k < n && params[k] ? rep_ch_quote(params[k]) : strdup("NULL");
			ok = k < n && lit;
			if (lit)
				fputs(lit, out);
			free(lit);
			p += 3;
		} else {
			fputc(*p, out);
		}
	}
	if (out && fclose(out) != 0)
		ok = false;
	if (!ok) {
		free(text);
		return NULL;
	}
	return text;
}

static int ch_rows(struct rep_ch *ch, const char *sql, const char *const *params, size_t n,
		   json_t *rows)
{
	char *text = ch_bind(sql, params, n), why[512];
	json_t *res = NULL, *row;
	size_t i;
	int rc = -1;
	if (!text) {
		snprintf(why, sizeof(why), "out of memory");
		goto out;
	}
	if (rep_ch_select(ch, text, true, &res, why, sizeof(why)) != 0)
		goto out;
	json_t *meta = json_object_get(res, "meta");
	json_array_foreach(json_object_get(res, "data"), i, row) {
		json_t *typed = json_array();
		for (size_t c = 0; typed && c < json_array_size(row); c++) {
			const char *type = json_string_value(json_object_get(json_array_get(meta, c), "type"));
			if (json_array_append_new(typed, rep_ch_cell(json_array_get(row, c), type)) != 0) {
				json_decref(typed);
				typed = NULL;
			}
		}
		if (json_array_append_new(rows, typed) != 0) {
			snprintf(why, sizeof(why), "out of memory");
			goto out;
		}
	}
	rc = 0;
out:
	if (rc != 0)
		rep_say(stderr, "top", why);
	json_decref(res);
	free(text);
	return rc;
}

int rep_reader_rows(struct rep_reader *r, const char *sql, const char *param, json_t **rows)
{
	return rep_reader_rows_n(r, sql, &param, 1, rows);
}

int rep_reader_rows_n(struct rep_reader *r, const char *sql, const char *const *params, size_t n,
		      json_t **rows)
{
	if (!(*rows = json_array())) {
		fprintf(stderr, "asyncore: out of memory\n");
		return -1;
	}
	start_clock(r);
	int rc = r->ch ? ch_rows(r->ch, sql, params, n, *rows) : sqlite_rows(r->db, sql, params, n, *rows);
	if (rc != 0) {
		json_decref(*rows);
		*rows = NULL;
	}
	return rc;
}

/* Whether bucket_days and set_days hold every core in one group: a core
 * whose rows disagree on its group (resign or store init changed it, and
 * its old row is not yet merged away) would count twice, and the pages
 * then read the current rows of cores themselves (FINAL).  The
 * writers say when that may be so in aggregate_marks (reports/
 * store_ch_served.c, "Marks"): exact when each shard's newest "rebuilt"
 * mark is at or after the newest other mark of its own or of every shard
 * (''), a store without marks being exact.  The shards are those of the
 * cluster the Distributed aggregate_marks reads (system.clusters), or one
 * server's only, ''. */
#define CH_MARKS_MADE \
	"SELECT count() FROM system.tables WHERE database = currentDatabase() AND name = 'aggregate_marks'"
#define CH_SHARDS \
	"(SELECT groupUniqArray(toString(shard_num)) FROM system.clusters WHERE cluster =" \
	" (SELECT extract(engine_full, '^Distributed.([[:alnum:]_]+)') FROM system.tables" \
	"  WHERE database = currentDatabase() AND name = 'aggregate_marks'))"
/* A shard without marks is behind only when there is a mark for every
 * shard (18.16 drops the columns a lambda alone reads: none here). */
#define CH_EXACT \
	"WITH " CH_SHARDS " AS listed, if(empty(listed), [''], listed) AS shards," \
	" (SELECT maxIf(at, kind != 'rebuilt' AND shard = '') FROM aggregate_marks) AS every" \
	" SELECT countIf(has(shards, shard) AND r < greatest(d, every)) = 0" \
	" AND (every = 0 OR countIf(has(shards, shard)) = length(shards)) FROM" \
	" (SELECT shard, maxIf(at, kind = 'rebuilt') AS r, maxIf(at, kind != 'rebuilt') AS d" \
	"  FROM aggregate_marks GROUP BY shard)"
/* Whether ClickHouse's aggregates answer exactly (CH_EXACT).  A
 * store made before the marks (store init makes them), or whose marks a
 * shard cannot give (not given its own by store init yet), is read from
 * cores. */
int rep_reader_aggregates_exact(struct rep_reader *r, bool *exact)
{
	json_t *check = NULL;
	*exact = false;
	if (rep_reader_rows(r, CH_MARKS_MADE, NULL, &check) != 0)
		return -1;
	bool made = json_integer_value(json_array_get(json_array_get(check, 0), 0)) == 1;
	json_decref(check);
	check = NULL;
	if (!made)
		return 0;
	if (rep_reader_rows(r, CH_EXACT, NULL, &check) != 0)
		return rep_reader_timed_out(r) ? -1 : 0;
	*exact = json_integer_value(json_array_get(json_array_get(check, 0), 0)) == 1;
	json_decref(check);
	return 0;
}
