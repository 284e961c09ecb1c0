/* `asyncore query` and `asyncore top`: read-only questions to the crash
 * database (reports/SCHEMA.md). */
#ifndef REPORTS_QUERY_H
#define REPORTS_QUERY_H

/* `asyncore query --db FILE [--format table|csv|json] "SQL"`.  argv[0] is
 * "query".  Opens the database read-only, refuses statements that write,
 * and prints each statement's rows.  Returns the exit status (0, or 2 with a
 * one-line reason on stderr). */
int rep_query_command(int argc, char **argv);

/* `asyncore top --db FILE [--limit N] [--format table|csv|json]`: crash
 * buckets by signature, most frequent first, with first and last seen and an
 * example core.  Returns the exit status. */
int rep_top_command(int argc, char **argv);

#endif
