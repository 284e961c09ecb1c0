#include "query.h"

#include <errno.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static char *dup_or_null(const unsigned char *s)
{
	return s ? strdup((const char *)s) : NULL;
}

/* Append the current row of Q (as text) to R; false on out-of-memory. */
static bool result_add_row(struct result *r, sqlite3_stmt *q)
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
		bool null = sqlite3_column_type(q, c) == SQLITE_NULL;
		row[c] = null ? NULL : dup_or_null(sqlite3_column_text(q, c));
		if (!null && !row[c]) {
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

/* One column value as JSON: integers and reals as numbers, blobs as hex. */
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
	default:   /* text written before the store made it valid UTF-8, too */
		return rep_json_text((const char *)sqlite3_column_text(q, c));
	}
}

static json_t *json_row(sqlite3_stmt *q)
{
	json_t *row = json_object();
	for (int c = 0; row && c < sqlite3_column_count(q); c++) {
		json_t *v = json_value(q, c);
		if (!v || json_object_set_new(row, sqlite3_column_name(q, c), v) != 0) {
			json_decref(row);
			return NULL;
		}
	}
	return row;
}

/* Run one prepared, read-only statement and print its rows.  0 or -1. */
static int run_statement(sqlite3 *db, sqlite3_stmt *q, enum rep_format fmt)
{
	struct result r = {.ncols = sqlite3_column_count(q)};
	json_t *rows = fmt == REP_FORMAT_JSON ? json_array() : NULL;
	int rc = -1, step;
	bool reported = false;
	r.names = calloc((size_t)(r.ncols ? r.ncols : 1), sizeof(*r.names));
	if (!r.names || (fmt == REP_FORMAT_JSON && !rows))
		goto out;
	for (int c = 0; c < r.ncols; c++)
		if (!(r.names[c] = strdup(sqlite3_column_name(q, c))))
			goto out;
	if (fmt == REP_FORMAT_CSV && r.ncols)
		csv_row(r.names, r.ncols);
	while ((step = sqlite3_step(q)) == SQLITE_ROW) {
		if (fmt == REP_FORMAT_JSON) {
			if (json_array_append_new(rows, json_row(q)) != 0)
				goto out;
		} else if (!result_add_row(&r, q)) {
			goto out;
		}
		if (fmt == REP_FORMAT_CSV) {   /* stream CSV rows, keep nothing */
			csv_row(r.cells, r.ncols);
			for (int c = 0; c < r.ncols; c++)
				free(r.cells[c]);
			r.nrows = 0;
		}
	}
	if (step != SQLITE_DONE) {
		fprintf(stderr, "asyncore: query: %s\n", sqlite3_errmsg(db));
		reported = true;
		goto out;
	}
	if (fmt == REP_FORMAT_TABLE && r.ncols && !print_table(&r))
		goto out;
	if (fmt == REP_FORMAT_JSON && json_dumpf(rows, stdout, JSON_INDENT(2)) == 0)
		putchar('\n');
	rc = 0;
out:
	if (rc != 0 && !reported)
		fprintf(stderr, "asyncore: query: out of memory\n");
	json_decref(rows);
	result_free(&r);
	return rc;
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
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "asyncore: query: the rows could not be written: %s\n",
			strerror(errno ? errno : EIO));
		rc = 2;
	}
out:
	sqlite3_close(db);
	return rc;
}

int rep_query(const char *db, const char *sql, enum rep_format format)
{
	return run_sql(db, sql, format);
}

int rep_top(const char *db, long limit, enum rep_format format)
{
	char sql[256];
	snprintf(sql, sizeof(sql),
		 "SELECT cores AS count, signature, first_seen, last_seen, example_core, signature_hash"
		 " FROM top_signatures LIMIT %ld", limit);
	return run_sql(db, sql, format);
}
