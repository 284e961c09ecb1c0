/* What the SQLite store's own files share (store_sqlite.c opens, migrates
 * and writes; store_resign.c rewrites signatures); not for other layers. */
#ifndef REPORTS_STORE_INTERNAL_H
#define REPORTS_STORE_INTERNAL_H

#include <sqlite3.h>

#include "store_sqlite.h"

/* The store's connection (owned by the store). */
sqlite3 *rep_store_db(struct rep_store *st);

/* Run SQL on the store's connection, retrying while another connection
 * holds the lock; an SQLite result code. */
int rep_store_exec(struct rep_store *st, const char *sql);

#endif
