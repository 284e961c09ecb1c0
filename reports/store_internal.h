/* What the SQLite store's own files share (store_sqlite.c opens, migrates
 * and writes; store_resign.c rewrites signatures); not for other layers. */
#ifndef REPORTS_STORE_INTERNAL_H
#define REPORTS_STORE_INTERNAL_H

#include <sqlite3.h>

#include "store_resign.h"
#include "store_sqlite.h"

/* Schema 12's names of each stored core, as rep_core_terms() takes them
 * from an analysis: a migration's and resign's term sets. */
#define STORED_CORE_TERMS \
	"SELECT core_id, function AS name FROM frames WHERE function <> ''" \
	" UNION SELECT core_id, module FROM frames WHERE module <> ''" \
	" UNION SELECT core_id, file FROM frames WHERE file <> ''" \
	" UNION SELECT core_id, function FROM task_frames WHERE function <> ''" \
	" UNION SELECT core_id, module FROM task_frames WHERE module <> ''" \
	" UNION SELECT core_id, file FROM task_frames WHERE file <> ''" \
	" UNION SELECT id, cause_summary FROM cores WHERE cause_summary <> ''"

/* The store's connection (owned by the store). */
sqlite3 *rep_sqlite_db(struct rep_sqlite *st);

/* Run SQL on the store's connection, retrying while another connection
 * holds the lock; an SQLite result code. */
int rep_sqlite_exec(struct rep_sqlite *st, const char *sql);

/* rep_store_resign() on an SQLite database: one transaction. */
int rep_sqlite_resign(struct rep_sqlite *st, const struct rep_resign_fns *fns,
		      struct rep_resign_result *out, char *why, size_t whylen);

/* The tables of frames, each with its owners' table: a thread's (frames,
 * threads), a task's (task_frames, tasks), a suspended chain's
 * (suspended_frames, suspended). */
enum rep_frames_table { REP_FRAMES_THREAD, REP_FRAMES_TASK, REP_FRAMES_CHAIN, REP_FRAMES_TABLES };

/* The owners (their idx) of core CORE in table T's owners' table:
 * *OWNERS malloc'd.  0, or -1 (an SQLite error, or out of memory). */
int rep_sqlite_frame_owners(struct rep_sqlite *st, enum rep_frames_table t, int64_t core,
			    int64_t **owners, size_t *n);

/* The frames of owner OWNER of core CORE in table T, innermost first, as
 * they were written: *FRAMES malloc'd (each an_frame_deinit()), and *GAP,
 * where their indexes jump over a recursion's run.  0, or -1. */
int rep_sqlite_read_frames(struct rep_sqlite *st, enum rep_frames_table t, int64_t core,
			   int64_t owner, struct an_frame **frames, size_t *n,
			   struct an_index_gap *gap);

/* Replace those frames with FRAMES[0 .. N), indexed past GAP, and set the
 * owner's nframes; inside the caller's transaction.  0, or -1. */
int rep_sqlite_replace_frames(struct rep_sqlite *st, enum rep_frames_table t, int64_t core,
			      int64_t owner, const struct an_frame *frames, size_t n,
			      const struct an_index_gap *gap);

/* Core CORE's term set (reports/store_rows.h) taken again from its stored
 * rows after its frames changed, its names added to term_names; inside the
 * caller's transaction.  0, or -1. */
int rep_sqlite_retally_terms(struct rep_sqlite *st, int64_t core);

#endif
