/* The crash store, whichever it is: an SQLite file (store_sqlite.c, the
 * embedded default) or a ClickHouse server or cluster (store_clickhouse.c),
 * chosen by the --db value: clickhouse://HOST:PORT/DATABASE[?cluster=NAME]
 * is ClickHouse, anything else a file.  Commands write analyses through
 * these functions and never see which store it is.
 *
 * A core is keyed by its fingerprint: writing a core the store already has
 * changes nothing.  ClickHouse batches many cores per insert: a core it
 * accepted is stored at the latest when the store is closed, and one it
 * could not store in the end is counted by rep_store_close(). */
#ifndef REPORTS_STORE_H
#define REPORTS_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "../analyzer/analysis.h"

struct rep_store;

/* Open the store DB for writing: an SQLite file is created or migrated; a
 * ClickHouse database must have been created by rep_store_init().  Returns
 * 0 and *OUT (rep_store_close()), or -1 with a one-line reason in WHY. */
int rep_store_open(const char *db, struct rep_store **out, char *why, size_t whylen);

/* Write what the store still holds back and close it; NULL is a no-op.
 * Returns the number of cores rep_store_write() accepted that could not be
 * stored after all (each reported on stderr with its path and the reason,
 * and recorded in ingest_errors when the store still takes it). */
size_t rep_store_close(struct rep_store *st);

/* What rep_store_write() did. */
enum rep_write_result {
	REP_WRITE_STORED,           /* the core is stored (or queued to be, see above) */
	REP_WRITE_DUPLICATE,        /* a core with this fingerprint was already there */
	REP_WRITE_FAILED,           /* nothing was written; see WHY */
};

/* A core that could not be analysed, as ingest_errors records it. */
struct rep_core_id {
	const char *path;
	const char *fingerprint;    /* hex; NULL when the core could not be opened */
	uint64_t file_size;
};

/* Write AN (borrowed; the store keeps nothing of it) as one unit, keyed by
 * its core fingerprint, and clear any earlier ingest error for it. */
enum rep_write_result rep_store_write(struct rep_store *st, const struct analysis *an, char *why,
				      size_t whylen);

/* Record (or update) an ingest error for core ID (fingerprint may be NULL
 * when the file could not be read).  Returns 0 or -1 with WHY. */
int rep_store_record_error(struct rep_store *st, const struct rep_core_id *id, const char *reason,
			   char *why, size_t whylen);

/* 1 when a core with FINGERPRINT is stored, 0 when not, -1 on error. */
int rep_store_has(struct rep_store *st, const char *fingerprint);

/* What ST holds back: *HELD, how many of the cores (rep_store_write()
 * returned REP_WRITE_STORED) and errors (rep_store_record_error() returned 0)
 * it accepted are not written yet, always the last ones it accepted (0 in
 * SQLite, which writes each at once); *LOST, how many accepted cores could
 * not be stored after all so far (what rep_store_close() returns, so far).
 * An ingest worker tells its supervisor, which then knows what a worker that
 * dies takes with it. */
void rep_store_pending(struct rep_store *st, size_t *held, size_t *lost);

/* Create the schema of the ClickHouse store DB (`asyncore store init`),
 * idempotently: with ?cluster=NAME on the one shard the URL names (run it
 * on every shard).  An SQLite file is created as rep_store_open() does.
 * Returns 0, or -1 with WHY. */
int rep_store_init(const char *db, char *why, size_t whylen);

/* The backend behind a struct rep_store: each store file fills one. */
struct rep_store_ops {
	int (*has)(void *backend, const char *fingerprint);
	enum rep_write_result (*write)(void *backend, const struct analysis *an, char *why,
				       size_t whylen);
	int (*record_error)(void *backend, const struct rep_core_id *id, const char *reason,
			    char *why, size_t whylen);
	size_t (*close)(void *backend);
	void (*pending)(void *backend, size_t *held, size_t *lost);
};

extern const struct rep_store_ops rep_sqlite_ops, rep_ch_store_ops;

/* The backend of ST and its operations (for the store's own files, such as
 * store_resign.c). */
void *rep_store_backend(struct rep_store *st, const struct rep_store_ops **ops);

#endif
