/* The SQLite crash database: schema, migrations, and writing analyses; the
 * embedded store behind reports/store.h for a --db that is a file.
 *
 * The schema is documented in reports/SCHEMA.md and created here (migrations
 * in store_schema.c, versioned with PRAGMA user_version).  Every connection runs in
 * WAL mode with a busy timeout; writes take BEGIN IMMEDIATE and retry on
 * SQLITE_BUSY, so several ingest processes can share one database.  Each core
 * is written in one transaction: it is wholly in the database or not at all. */
#ifndef REPORTS_STORE_SQLITE_H
#define REPORTS_STORE_SQLITE_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* Schema version this program writes (PRAGMA user_version). */
#define REP_SCHEMA_VERSION 13

/* The SQL that takes a database from schema VERSION - 1 to VERSION (1 ..
 * REP_SCHEMA_VERSION), or NULL: for tests that build an older database. */
const char *rep_store_migration(int version);

struct rep_sqlite;

/* Open the database at PATH for writing, creating it or migrating it to
 * REP_SCHEMA_VERSION.  Returns 0 and *OUT (rep_sqlite_close()), or -1 with a
 * one-line reason in WHY. */
int rep_sqlite_open(const char *path, struct rep_sqlite **out, char *why, size_t whylen);

/* Close the database; NULL is a no-op. */
void rep_sqlite_close(struct rep_sqlite *st);

/* rep_store_write(), rep_store_record_error() and rep_store_has() of
 * reports/store.h on an SQLite database: each core in its own transaction. */
enum rep_write_result rep_sqlite_write(struct rep_sqlite *st, const struct analysis *an, char *why,
				       size_t whylen);
int rep_sqlite_record_error(struct rep_sqlite *st, const struct rep_core_id *id, const char *reason,
			    char *why, size_t whylen);
int rep_sqlite_has(struct rep_sqlite *st, const char *fingerprint);

#endif
