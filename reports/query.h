/* Read-only questions to the crash database (reports/SCHEMA.md): the rows
 * of `asyncore query` and the buckets of `asyncore top`. */
#ifndef REPORTS_QUERY_H
#define REPORTS_QUERY_H

enum rep_format { REP_FORMAT_TABLE, REP_FORMAT_CSV, REP_FORMAT_JSON, REP_FORMAT_HTML };

/* Open the database DB read-only, refuse statements that write, and print
 * each statement of SQL's rows to stdout in FORMAT.  Returns the exit
 * status (0, or 2 with a one-line reason on stderr). */
int rep_query(const char *db, const char *sql, enum rep_format format);

/* Crash buckets by signature, most frequent first (at most LIMIT): count,
 * first and last seen, crashes in the last 7 days, new (only in the newest
 * build), the build-ids, an example core; REP_FORMAT_HTML writes the bucket page
 * (reports/html_top.c).  Returns the exit status. */
int rep_top(const char *db, long limit, enum rep_format format);

#endif
