/* The SQLite crash database: schema, migrations, and writing analyses.
 *
 * The schema is documented in reports/SCHEMA.md and created here (migrations
 * in store_sqlite.c, versioned with PRAGMA user_version).  Every connection runs in
 * WAL mode with a busy timeout; writes take BEGIN IMMEDIATE and retry on
 * SQLITE_BUSY, so several ingest processes can share one database.  Each core
 * is written in one transaction: it is wholly in the database or not at all. */
#ifndef REPORTS_STORE_SQLITE_H
#define REPORTS_STORE_SQLITE_H

#include <stddef.h>
#include <stdint.h>

#include "../analyzer/analysis.h"

/* Schema version this program writes (PRAGMA user_version). */
#define REP_SCHEMA_VERSION 5

/* The SQL that takes a database from schema VERSION - 1 to VERSION (1 ..
 * REP_SCHEMA_VERSION), or NULL: for tests that build an older database. */
const char *rep_store_migration(int version);

struct rep_store;

/* Open the database at PATH for writing, creating it or migrating it to
 * REP_SCHEMA_VERSION.  Returns 0 and *OUT (rep_store_close()), or -1 with a
 * one-line reason in WHY. */
int rep_store_open(const char *path, struct rep_store **out, char *why, size_t whylen);

/* Close the store; NULL is a no-op. */
void rep_store_close(struct rep_store *st);

/* What rep_store_write() did. */
enum rep_write_result {
	REP_WRITE_STORED,           /* the core is now in the database */
	REP_WRITE_DUPLICATE,        /* a core with this fingerprint was already there */
	REP_WRITE_FAILED,           /* nothing was written; see WHY */
};

/* A core that could not be analysed, as ingest_errors records it. */
struct rep_core_id {
	const char *path;
	const char *fingerprint;    /* hex; NULL when the core could not be opened */
	uint64_t file_size;
};

/* Write AN (borrowed) in one transaction, keyed by its core fingerprint, and
 * clear any earlier ingest error for it. */
enum rep_write_result rep_store_write(struct rep_store *st, const struct analysis *an, char *why,
				      size_t whylen);

/* Record (or update) an ingest error for core ID (fingerprint may be NULL
 * when the file could not be read).  Returns 0 or -1 with WHY. */
int rep_store_record_error(struct rep_store *st, const struct rep_core_id *id, const char *reason,
			   char *why, size_t whylen);

/* 1 when a core with FINGERPRINT is in the database, 0 when not, -1 on error. */
int rep_store_has(struct rep_store *st, const char *fingerprint);

#endif
