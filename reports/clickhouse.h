/* A ClickHouse server through its HTTP interface (libcurl): the --db value
 * clickhouse://HOST:HTTPPORT/DATABASE[?cluster=NAME], statements POSTed with
 * their settings as URL parameters, results read as JSONCompact (jansson).
 * The store (store_clickhouse.c) and the readers (query.c) talk through it. */
#ifndef REPORTS_CLICKHOUSE_H
#define REPORTS_CLICKHOUSE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The URL scheme of a ClickHouse store. */
#define REP_CH_SCHEME "clickhouse://"

struct rep_ch;

/* True when DB names a ClickHouse store rather than an SQLite file. */
bool rep_ch_is_url(const char *db);

/* Parse URL and prepare a connection (nothing is sent yet).  Returns 0 and
 * *OUT (rep_ch_close()), or -1 with a one-line reason in WHY. */
int rep_ch_open(const char *url, struct rep_ch **out, char *why, size_t whylen);

/* Close the connection; NULL is a no-op. */
void rep_ch_close(struct rep_ch *ch);

/* The URL's database and cluster (NULL: one server); owned by CH. */
const char *rep_ch_database(const struct rep_ch *ch);
const char *rep_ch_cluster(const struct rep_ch *ch);

/* Bound each of CH's reads (rep_ch_select() with READONLY) to MS
 * milliseconds (< 0: no bound, the default): the server stops it
 * (max_execution_time, whole seconds, at least one) and the wait for its
 * answer ends a second after MS. */
void rep_ch_set_time_limit(struct rep_ch *ch, long ms);

/* True when CH's last statement failed by passing its time bound. */
bool rep_ch_timed_out(const struct rep_ch *ch);

/* Run SQL once.  With DATA (LEN bytes) the statement goes in the URL and
 * DATA is the body (an INSERT's rows); SETTINGS ("name=value&...", may be
 * NULL) are added to the URL.  Returns 0 with the server's answer in
 * *REPLY when REPLY is not NULL (malloc'd, NUL-terminated), or -1 with the
 * reason (the server's message, or the transport's) in WHY.  Table names
 * in SQL are qualified with the database. */
int rep_ch_run(struct rep_ch *ch, const char *sql, const char *data, size_t len,
	       const char *settings, char **reply, char *why, size_t whylen);

/* rep_ch_run() retried with backoff while it fails in a way that may pass
 * (a server restarting, a shard unreachable, a server too busy), a bounded
 * number of times; the last reason in WHY. */
int rep_ch_run_retry(struct rep_ch *ch, const char *sql, const char *data, size_t len,
		     const char *settings, char *why, size_t whylen);

/* Run the SELECT statement SQL, the URL's database the default one
 * (READONLY: a reader's question, sent once with readonly=1, so the server
 * refuses anything that writes; otherwise the store's own, retried as
 * rep_ch_run_retry() does) and return its result as JSONCompact:
 * *OUT (json_decref()) holds "meta" [{"name", "type"}] and "data" [[...]],
 * 64-bit integers as numbers.  0, or -1 with WHY. */
int rep_ch_select(struct rep_ch *ch, const char *sql, bool readonly, json_t **out, char *why,
		  size_t whylen);

/* TEXT as a ClickHouse string literal ('...' with \ and ' escaped), or
 * NULL when out of memory (caller frees). */
char *rep_ch_quote(const char *text);

/* A result cell as a JSON value of its column's type: a 64-bit integer the
 * server sent quoted becomes a number.  New reference; NULL when out of
 * memory. */
json_t *rep_ch_cell(json_t *value, const char *type);

#endif
