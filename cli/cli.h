/* The commands.  Each takes its arguments after the command word and
 * returns the process exit status (0 analysed, 1 with warnings or failed
 * cores, 2 unusable input, with a one-line reason on stderr). */
#ifndef CLI_CLI_H
#define CLI_CLI_H

#include <stdio.h>

/* `asyncore report CORE [BINARY] [options]` (also `asyncore CORE [BINARY]`). */
int cli_report(int argc, char **argv);

/* `asyncore ingest --db FILE [options] CORE...|DIR`. */
int cli_ingest(int argc, char **argv);

/* `asyncore query --db FILE [--format table|csv|json] "SQL"`. */
int cli_query(int argc, char **argv);

/* `asyncore top --db FILE [--limit N] [--format table|csv|json]`. */
int cli_top(int argc, char **argv);

/* PREFIX/share/asyncore of an installed asyncore (runtime descriptions
 * under runtimes/), found relative to the running binary; NULL when there is
 * none (a build tree).  Static storage. */
const char *cli_share_dir(void);

/* `asyncore resign --db FILE [--signature-lists DIR]`: recompute every
 * stored signature, in one transaction. */
int cli_resign(int argc, char **argv);

/* `asyncore store init --db URL`: create the store's schema (ClickHouse:
 * idempotently, per shard). */
int cli_store(int argc, char **argv);

/* `asyncore serve --db FILE|URL [--listen HOST:PORT]`: the store in a
 * browser, read-only, until SIGINT or SIGTERM. */
int cli_serve(int argc, char **argv);

/* `asyncore runtimes [--runtime FILE]...`: the runtime descriptions a
 * report would use (name and file), then the search path. */
int cli_runtimes(int argc, char **argv);

/* The usage text of every command. */
void cli_usage(FILE *out);

#endif
