/* The crash buckets of a store as data: what `top --format html` and
 * serve's / (and /api/buckets, /bucket/HASH) show, read in one pass over
 * the cores that match a filter.  A crash's time is when it crashed
 * (cores.crashed_at), else its core file's modification time (file_mtime);
 * a core with neither is counted but undated (the ingest time is no crash
 * time). */
#ifndef REPORTS_BUCKETS_H
#define REPORTS_BUCKETS_H

#include <jansson.h>
#include <stdbool.h>

struct rep_reader;

enum rep_bucket_sort { REP_SORT_COUNT, REP_SORT_FIRST, REP_SORT_LAST, REP_SORT_SIGNATURE };

/* Which cores, and the order of their buckets.  Each text is matched as
 * given ("" or NULL: any); the store receives them as bound parameters. */
struct rep_bucket_filter {
	const char *executable;     /* part of the executable's path */
	const char *build_id;       /* the executable's build-id */
	const char *cause_kind;     /* cores.cause_kind */
	const char *from, *to;      /* crash day, "YYYY-MM-DD", both included */
	const char *hash;           /* one bucket (its signature_hash) */
	enum rep_bucket_sort sort;
	bool ascending;
	long limit;                 /* buckets at most (0: all) */
};

/* What the matching cores add up to: cores and buckets (before the
 * limit), those without a crash time, the first and last crash time. */
struct rep_bucket_totals {
	long long cores, buckets, undated;
	char first[40], last[40];
	/* ClickHouse: every stored row of a core is in its one bucket (no
	 * core moved and left an older row behind), so a bucket's rows are
	 * read without FINAL */
	bool one_bucket;
};

/* The buckets of F as a JSON array (json_decref()), each object with
 * "hash", "signature", "count", "first_seen", "last_seen" (null when none
 * of its cores has a crash time), "undated" (cores without one),
 * "cause_kind", "cause_summary" (its most recent core's), "hang" (true when
 * that cause is a hang or a deadlock), "example_core"
 * (that core's fingerprint), "example_path", "abort_message",
 * "executables" [path], "builds" [{"executable", "build_id", "count",
 * "first_seen"}] (oldest first: when a build brought it),
 * "arches" [{"arch", "count"}], "days" [{"day", "count"}], and *TOTALS.
 * 0, or -1 when the store failed (reported). */
int rep_buckets_read(struct rep_reader *r, const struct rep_bucket_filter *f, json_t **out,
		     struct rep_bucket_totals *totals);

/* Whether a cause of KIND (cores.cause_kind) is a hang's: "hang" or
 * "deadlock" (DESIGN.md "Hangs"). */
bool rep_cause_is_hang(const char *kind);

/* Order BUCKETS as HASHES (an array of the hashes, null for no signature)
 * lists them, those it does not list after them (top's order). */
void rep_buckets_order_as(json_t *buckets, json_t *hashes);

#endif
