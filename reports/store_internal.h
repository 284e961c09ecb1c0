/* What the SQLite store's own files share (store_sqlite.c opens, migrates
 * and writes; store_resign.c rewrites signatures); not for other layers. */
#ifndef REPORTS_STORE_INTERNAL_H
#define REPORTS_STORE_INTERNAL_H

#include <sqlite3.h>

#include "store_resign.h"
#include "store_sqlite.h"

/* The store's connection (owned by the store). */
sqlite3 *rep_sqlite_db(struct rep_sqlite *st);

/* Run SQL on the store's connection, retrying while another connection
 * holds the lock; an SQLite result code. */
int rep_sqlite_exec(struct rep_sqlite *st, const char *sql);

/* rep_store_resign() on an SQLite database: one transaction. */
int rep_sqlite_resign(struct rep_sqlite *st, rep_sign_fn *sign, void *ctx,
		      struct rep_resign_result *out, char *why, size_t whylen);

#endif
