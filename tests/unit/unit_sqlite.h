/* A helper of the unit tests that read a database back. */
#ifndef TESTS_UNIT_UNIT_SQLITE_H
#define TESTS_UNIT_UNIT_SQLITE_H

#include <sqlite3.h>

/* The first column of SQL's first row as an integer; -1 when there is none. */
static inline long unit_sql_long(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *q;
	long n = -1;
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
		n = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return n;
}

#endif
