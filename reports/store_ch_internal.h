/* What the ClickHouse store's own files share (reports/store_clickhouse.h):
 * store_clickhouse.c writes batches of cores, store_ch_schema.c makes the
 * tables and runs `store init`, store_ch_views.c makes the views top and
 * query read, store_ch_served.c keeps the aggregates the served pages read
 * and the marks that say whether they are exact, store_ch_resign.c
 * rewrites signatures and fills term sets.  Not for other layers. */
#ifndef REPORTS_STORE_CH_INTERNAL_H
#define REPORTS_STORE_CH_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "clickhouse.h"
#include "store_clickhouse.h"
#include "store_rows.h"

/* The settings of every insert: a Distributed table writes to the shards
 * before it answers, so an answer means the rows are on their shard. */
#define CH_INSERT_SETTINGS "insert_distributed_sync=1"

/* The tables, in the order a batch is written: children first, then the
 * names of the cores' term sets, `cores` last (a core is stored once its
 * cores row is), ingest_errors after. */
enum ch_table {
	T_MODULES, T_THREADS, T_FRAMES, T_ROOTS, T_SUSPENDED, T_SFRAMES, T_TASKS, T_TFRAMES,
	T_RECORDERS, T_EVENTS, T_WARNINGS, T_BLOCKED, T_DEADLOCKS, T_MEMBERS, T_TERMS, T_CORES,
	T_ERRORS, T_COUNT
};

struct ch_table_def {
	const char *name;
	const char *columns;
	const char *order;          /* the sorting (and replacing) key */
	const char *version;        /* ReplacingMergeTree's version column, or NULL */
	const char *shard;          /* the column whose cityHash64 picks the shard */
};

/* The tables of reports/SCHEMA.md, in the order of enum ch_table
 * (store_ch_schema.c). */
extern const struct ch_table_def rep_chs_tables[T_COUNT];

/* A frame's names a search finds it by (the non-empty of COLS), one a row:
 * search_names' views and the term sets read again share it. */
#define TERMS_OF(cols) "arrayJoin(arrayFilter(x -> x != '', [" cols "]))"
#define FRAME_NAMES TERMS_OF("ifNull(function, ''), ifNull(module, ''), ifNull(file, '')")

/* One table's rows of the batch, as JSONEachRow. */
struct ch_rows {
	char *data;
	size_t len, cap, count;
};

/* Term sets whose names are stored, or in the batch: a set's names are
 * written once, not with each core holding it.  An open-addressing table
 * (base/array.h) of at most CH_KNOWN_SETS (store_clickhouse.c), then forgotten at once (a set
 * written again is the same rows); forgotten too when a batch is lost. */
struct ch_set_slot {
	uint64_t hash;              /* the key's first 64 bits; the slot is free when all zero */
	char key[REP_TERM_SET_KEY];
};

struct ch_known_sets {
	struct ch_set_slot *slots;
	size_t cap, used;
};

/* A core of the batch, for reporting it when the batch fails. */
struct ch_pending {
	char *path;
	char *fingerprint;
	uint64_t file_size;
};

struct rep_ch_store {
	struct rep_ch *ch;
	struct ch_rows rows[T_COUNT];
	struct ch_known_sets known;
	const char *local;          /* "_local": write and read this shard's own tables
				     * (store init on a cluster); NULL: through T */
	struct ch_pending *pending;
	size_t npending, cap;
	size_t nerrors;             /* ingest_errors rows in the batch */
	size_t lost;                /* accepted cores that could not be stored */
	uint64_t last_version;
};

/* The small helpers every file runs its SQL with. */

/* SQL built by vasprintf (NULL: out of memory). */
static inline char *printf_sql(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline char *printf_sql(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

/* Run one DDL statement built with asprintf (SQL is freed). */
static inline int ddl(struct rep_ch *ch, char *sql, char *why, size_t whylen)
{
	if (!sql) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	int rc = rep_ch_run_retry(ch, sql, NULL, 0, NULL, why, whylen);
	free(sql);
	return rc;
}

/* The first line of SQL's answer (a number, 0 when empty) in *V. */
static inline int ask_number(struct rep_ch *ch, char *sql, long long *v, char *why, size_t whylen)
{
	char *reply = NULL;
	int rc = -1;
	if (!sql)
		snprintf(why, whylen, "out of memory");
	else if (rep_ch_run_retry(ch, sql, NULL, 0, NULL, why, whylen) == 0 &&
		 rep_ch_run(ch, sql, NULL, 0, NULL, &reply, why, whylen) == 0) {
		*v = atoll(reply);
		rc = 0;
	}
	free(reply);
	free(sql);
	return rc;
}

/* "db.name" with the store's database. */
static inline char *table_name(struct rep_ch *ch, const char *name, const char *suffix)
{
	char *s = NULL;
	if (asprintf(&s, "%s.%s%s", rep_ch_database(ch), name, suffix) < 0)
		return NULL;
	return s;
}

/* ---- store_clickhouse.c: the writer ---- */

/* Microseconds since the epoch. */
uint64_t rep_chs_wall_us(void);

/* Microseconds since the epoch, strictly increasing within the store: the
 * version that makes a newer cores or ingest_errors row replace an older. */
uint64_t rep_chs_next_version(struct rep_ch_store *st);

/* Term set KEY's names are stored, or in the batch (best effort); or no
 * set's are known (a batch was lost). */
void rep_chs_set_remember(struct ch_known_sets *s, const char *key);
void rep_chs_sets_forget(struct ch_known_sets *s);

/* The term_names rows of the set KEY, its N names, into the batch unless
 * its names are known to be stored or in the batch already. */
int rep_chs_add_term_names(struct rep_ch_store *st, const char *const *names, size_t n,
			   const char *key);

/* The frames FS[0 .. N) of owner OWNER of core FP into the batch's rows of
 * T (T_FRAMES, T_SFRAMES or T_TFRAMES), indexed past GAP (NULL: none). */
int rep_chs_add_frames_of(struct rep_ch_store *st, enum ch_table t, const char *fp, size_t owner,
			  const struct an_frame *fs, size_t n, const struct an_index_gap *gap);

/* Append OBJ (taken) to R as one JSONEachRow line.  0, or -1 (out of
 * memory: R as it was). */
int rep_chs_add_row(struct ch_rows *r, json_t *obj);

/* Insert the batch's rows of table T (into its _local table when ST->local
 * says so).  0, or -1 with WHY. */
int rep_chs_insert_rows(struct rep_ch_store *st, enum ch_table t, char *why, size_t whylen);

/* ---- store_ch_schema.c ---- */

/* Table T: the ReplacingMergeTree (T_local with a cluster) and, with a
 * cluster, the Distributed table in front of it. */
int rep_chs_create_table(struct rep_ch *ch, const struct ch_table_def *t, char *why, size_t whylen);

/* ---- store_ch_views.c ---- */

/* The views top and query read (crash_stacks, last_events, hang_waits,
 * top_signatures), made again.  0, or -1 with WHY. */
int rep_chs_create_views(struct rep_ch *ch, char *why, size_t whylen);

/* ---- store_ch_served.c: the aggregates and their marks ---- */

/* The table of the marks. */
extern const struct ch_table_def rep_chs_marks_table;

/* The marks as shard SHARD sees them: the newest that may have left its
 * aggregates inexact (DIRTY: its own and every shard's), its newest
 * "rebuilt", the newest of any kind, and whether resign's newest is
 * "rewriting" (OPEN). */
struct ch_marks {
	uint64_t dirty, rebuilt, newest;
	bool open;
};

/* The marks of SHARD from this server's table (LOCAL) or every shard's. */
int rep_chs_marks_read(struct rep_ch *ch, const char *shard, bool local, struct ch_marks *m,
		       char *why, size_t whylen);

/* Record, before the first cores row written again with another group,
 * that the aggregates may be inexact from now: resign's KIND for every
 * shard, or the fill's ("filling") for this server's SHARD only (LOCAL).
 * NOW is the writer's version clock. */
int rep_chs_mark_inexact(struct rep_ch *ch, const char *kind, const char *shard, bool local,
			 uint64_t now, char *why, size_t whylen);

/* This server's shard in the marks: '' on one server; on a cluster its
 * shard_num in system.clusters, *KNOWN false (and '') when it is none of
 * the cluster's shards there. */
int rep_chs_this_shard(struct rep_ch *ch, char shard[24], bool *known, char *why, size_t whylen);

/* This server's aggregates that count cores, counted again when one holds
 * a core in two groups, then marked exact unless a resign is rewriting
 * (store_ch_served.c says when).  WHO says what runs it in a note. */
int rep_chs_aggregates_recount(struct rep_ch *ch, const char *shard, bool known, const char *who,
			       char *why, size_t whylen);

/* The aggregates and their views, made when missing and filled from what
 * is stored (those left inexact are counted again by
 * rep_chs_aggregates_recount()). */
int rep_chs_create_aggregates(struct rep_ch *ch, char *why, size_t whylen);

/* The views and tables stores made before term sets held, gone. */
int rep_chs_drop_old(struct rep_ch *ch, char *why, size_t whylen);

/* ---- store_ch_resign.c ---- */

/* Store init: this server's cores stored without a term set (ALL: every
 * one) get one from what is stored of them, marked as filling for SHARD
 * first.  0, or -1 with WHY. */
int rep_chs_fill_term_sets(struct rep_ch *ch, bool all, const char *shard, char *why,
			   size_t whylen);

#endif
