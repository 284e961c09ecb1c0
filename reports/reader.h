/* Reading a store back, whichever it is (reports/store.h): one read-only
 * connection to an SQLite file or a ClickHouse database, and SELECTs whose
 * rows come back as typed JSON values, for the readers that are not plain
 * SQL (the bucket page, reports/html_top.c). */
#ifndef REPORTS_READER_H
#define REPORTS_READER_H

#include <jansson.h>
#include <stdbool.h>

struct rep_reader;

/* Open DB read-only.  Returns 0 and *OUT (rep_reader_close()), or -1 with
 * the reason on stderr. */
int rep_reader_open(const char *db, struct rep_reader **out);

/* Close R; NULL is a no-op. */
void rep_reader_close(struct rep_reader *r);

/* Bound each of R's queries to MS milliseconds from its start (MS < 0: no
 * bound, the default; 0: stopped at its first check): SQLite's query is
 * interrupted, ClickHouse's stopped by the server (in whole seconds, at
 * least one) and its answer awaited a second longer at most. */
void rep_reader_set_time_limit(struct rep_reader *r, long ms);

/* True when R's last query failed by passing its bound. */
bool rep_reader_timed_out(const struct rep_reader *r);

/* True when R reads ClickHouse (its SQL is ClickHouse's dialect). */
bool rep_reader_clickhouse(const struct rep_reader *r);

/* The ClickHouse database R reads, for qualifying table names. */
const char *rep_reader_database(const struct rep_reader *r);

/* Run the SELECT in SQL with one text parameter PARAM (NULL: SQL NULL): in
 * SQLite's SQL it is ?1, in ClickHouse's each %1$s stands for it as a
 * literal.  Returns 0 and *ROWS (an array of arrays of cells: integer,
 * real, string or null; json_decref()), or -1 with the reason on stderr. */
int rep_reader_rows(struct rep_reader *r, const char *sql, const char *param, json_t **rows);

/* Most parameters rep_reader_rows_n() binds. */
#define REP_READER_MAX_PARAMS 9

/* rep_reader_rows() with N parameters PARAMS[0 .. N) (each NULL: SQL NULL):
 * SQLite's ?1 .. ?N, ClickHouse's %1$s .. %N$s (each a quoted literal; %%
 * a percent sign).  Never spliced as SQL text in either store. */
int rep_reader_rows_n(struct rep_reader *r, const char *sql, const char *const *params, size_t n,
		      json_t **rows);

/* ClickHouse: whether the aggregates the pages read (bucket_days,
 * set_days) hold every core in one group, as the writers' marks say
 * (reports/store_ch_served.c, "Marks"); else the pages read cores with
 * FINAL.  -1 when the answer took past the reader's bound. */
int rep_reader_aggregates_exact(struct rep_reader *r, bool *exact);

#endif
