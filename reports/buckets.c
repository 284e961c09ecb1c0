/* The buckets of a store in one pass: the matching cores grouped by
 * bucket, executable, build, architecture and crash day in the store, the
 * rest summed here, so a page over 100,000 cores costs one scan. */
#include "buckets.h"
#include "reader.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The groups' columns: 0 hash, 1 signature, 2 executable, 3 build_id,
 * 4 arch, 5 day, 6 count, 7 first, 8 last, 9 example key, 10 fingerprint,
 * 11 cause_kind, 12 cause_summary, 13 path, 14 abort_message.  SQLite
 * reads them from bucket_days (kept by the store's triggers; '' there is
 * NULL) and each shown bucket's example afterwards, by index; ClickHouse
 * says argMax.  A crash's time is crashed_at, else the file's mtime. */
static const char sqlite_groups[] =
	"SELECT nullif(signature_hash, ''), max(signature), nullif(executable, ''), nullif(build_id, ''),"
	" arch, day, sum(cores), min(first_at), max(last_at) FROM bucket_days%s"
	" GROUP BY signature_hash, executable, build_id, arch, day ORDER BY signature_hash";
#define CH_SEEN "ifNull(crashed_at, file_mtime)"
#define CH_KEY "concat(ifNull(" CH_SEEN ", ''), ' ', analysed_at, ' ', path)"
static const char ch_groups[] =
	"SELECT signature_hash, any(signature), executable, build_id, arch,"
	" substring(ifNull(" CH_SEEN ", ''), 1, 10) AS day, count(), min(" CH_SEEN "), max(" CH_SEEN "),"
	" max(" CH_KEY ") AS ex, argMax(fingerprint, " CH_KEY "), argMax(cause_kind, " CH_KEY "),"
	" argMax(cause_summary, " CH_KEY "), argMax(path, " CH_KEY "), argMax(abort_message, " CH_KEY ")"
	" FROM cores FINAL%s"
	" GROUP BY signature_hash, executable, build_id, arch, day ORDER BY signature_hash";

/* ClickHouse's groups from bucket_days (kept by a view as cores rows
 * arrive, reports/store_ch_served.c: '' there is NULL, the example's
 * nullable fields come with a mask), read while that table holds every
 * core in one group only (rep_reader_aggregates_exact()); otherwise (a
 * resign whose older rows are not merged away yet) from cores. */
#define CH_EX "argMaxMerge(ex)"
#define CH_EX_NULLABLE(i, bit) \
	"if(bitAnd(tupleElement(" CH_EX ", 6), " #bit ") = 0, tupleElement(" CH_EX ", " #i "), NULL)"
static const char ch_agg_groups[] =
	"SELECT nullIf(hash, ''), nullIf(maxMerge(sig), ''), nullIf(exe, ''), nullIf(build, ''), arch, day,"
	" uniqExactMerge(n), nullIf(minMerge(first_at), ''), nullIf(maxMerge(last_at), ''),"
	" maxMerge(ex_key), tupleElement(" CH_EX ", 1), " CH_EX_NULLABLE(2, 1) ", " CH_EX_NULLABLE(3, 2) ","
	" tupleElement(" CH_EX ", 4), " CH_EX_NULLABLE(5, 4)
	" FROM bucket_days%s GROUP BY hash, exe, build, arch, day ORDER BY hash";

/* A bucket's most recent core among those F takes (SQLite; the same
 * parameters as the groups, ?6 the bucket's hash). */
static const char sqlite_example[] =
	"SELECT fingerprint, cause_kind, cause_summary, path, abort_message FROM cores"
	" WHERE signature_hash IS ?6%s ORDER BY coalesce(crashed_at, file_mtime) DESC, id DESC LIMIT 1";

/* The conditions of a filter, each with its parameter's number; only
 * those given are in the query (the values are bound, never written in). */
static const struct condition {
	const char *sqlite, *clickhouse, *sqlite_core, *clickhouse_agg;
} conditions[] = {
	{"instr(executable, ?1) > 0", "position(ifNull(executable, ''), %1$s) > 0",
	 "instr(executable, ?1) > 0", "position(exe, %1$s) > 0"},
	{"build_id = ?2", "build_id = %2$s", "build_id = ?2", "build = %2$s"},
	{"cause_kind = ?3", "cause_kind = %3$s", "cause_kind = ?3", "cause = %3$s"},
	{"day >= ?4", "ifNull(" CH_SEEN ", '') >= %4$s", "coalesce(crashed_at, file_mtime) >= ?4",
	 "day >= %4$s"},
	{"day <> '' AND day <= ?5", CH_SEEN " IS NOT NULL AND substring(" CH_SEEN ", 1, 10) <= %5$s",
	 "substr(coalesce(crashed_at, file_mtime), 1, 10) <= ?5", "day <> '' AND day <= %5$s"},
	{"signature_hash = ?6", "signature_hash = %6$s", NULL, "hash = %6$s"},
};

static bool given(const char *s)
{
	return s && *s;
}

/* The query STORE says of F's conditions into BUF: " WHERE ..." of the
 * groups (0: SQLite's, 1: ClickHouse's from cores, 3: from bucket_days),
 * " AND ..." of a core (2). */
static void where_clause(const struct rep_bucket_filter *f, int store, char *buf, size_t len)
{
	const char *values[] = {f->executable, f->build_id, f->cause_kind, f->from, f->to, f->hash};
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		const struct condition *c = &conditions[i];
		const char *cond = store == 0 ? c->sqlite : store == 1 ? c->clickhouse
				 : store == 2 ? c->sqlite_core : c->clickhouse_agg;
		if (!given(values[i]) || !cond)
			continue;
		used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s",
					 used || store == 2 ? " AND " : " WHERE ", cond);
	}
}

static const char *text(json_t *row, size_t c)
{
	return json_string_value(json_array_get(row, c));
}

static json_int_t integer(json_t *row, size_t c)
{
	return json_integer_value(json_array_get(row, c));
}

/* KEY's object in ARRAY (by FIELD), added with COUNT 0 when missing. */
static json_t *entry(json_t *array, const char *field, const char *key)
{
	json_t *e, *want = key ? json_string(key) : json_null();
	size_t i;
	json_array_foreach(array, i, e)
		if (json_equal(json_object_get(e, field), want)) {
			json_decref(want);
			return e;
		}
	e = json_pack("{s:o, s:I}", field, want, "count", (json_int_t)0);
	json_array_append_new(array, e);
	return e;
}

static void add_count(json_t *obj, json_int_t n)
{
	json_object_set_new(obj, "count", json_integer(json_integer_value(json_object_get(obj, "count")) + n));
}

/* Keep the least (LEAST) or greatest of OBJ's FIELD and V (a time). */
static void keep_time(json_t *obj, const char *field, const char *v, bool least)
{
	const char *old = json_string_value(json_object_get(obj, field));
	if (v && (!old || (least ? strcmp(v, old) < 0 : strcmp(v, old) > 0)))
		json_object_set_new(obj, field, json_string(v));
}

static json_t *bucket_new(json_t *q)
{
	json_t *b = json_object();
	json_object_set(b, "hash", json_array_get(q, 0));
	json_object_set(b, "signature", json_array_get(q, 1));
	json_object_set_new(b, "count", json_integer(0));
	json_object_set_new(b, "first_seen", json_null());
	json_object_set_new(b, "last_seen", json_null());
	json_object_set_new(b, "undated", json_integer(0));
	json_object_set_new(b, "example_key", json_string(""));
	json_object_set_new(b, "executables", json_array());
	json_object_set_new(b, "builds", json_array());
	json_object_set_new(b, "arches", json_array());
	json_object_set_new(b, "days", json_array());
	return b;
}

/* The most recent core of the bucket so far: its cause and identity. */
static void note_example(json_t *b, json_t *q)
{
	const char *key = text(q, 9) ? text(q, 9) : "";
	if (strcmp(key, json_string_value(json_object_get(b, "example_key"))) <= 0 &&
	    json_object_get(b, "example_core"))
		return;
	static const char *const fields[] = {"example_core", "cause_kind", "cause_summary", "example_path",
					     "abort_message"};
	json_object_set_new(b, "example_key", json_string(key));
	for (size_t i = 0; i < 5; i++)
		json_object_set(b, fields[i], json_array_get(q, 10 + i));
}

/* One group row into its bucket B. */
static void add_group(json_t *b, json_t *q)
{
	json_int_t n = integer(q, 6);
	const char *day = text(q, 5);
	add_count(b, n);
	keep_time(b, "first_seen", text(q, 7), true);
	keep_time(b, "last_seen", text(q, 8), false);
	if (!day || !*day)
		json_object_set_new(b, "undated", json_integer(json_integer_value(json_object_get(b, "undated")) + n));
	else
		add_count(entry(json_object_get(b, "days"), "day", day), n);
	json_t *exes = json_object_get(b, "executables"), *e;
	size_t i;
	bool seen = false;
	json_array_foreach(exes, i, e)
		seen |= json_equal(e, json_array_get(q, 2));
	if (!seen)
		json_array_append(exes, json_array_get(q, 2));
	json_t *builds = json_object_get(b, "builds"), *build = NULL;
	json_array_foreach(builds, i, e)
		if (json_equal(json_object_get(e, "executable"), json_array_get(q, 2)) &&
		    json_equal(json_object_get(e, "build_id"), json_array_get(q, 3)))
			build = e;
	if (!build) {
		build = json_pack("{s:O, s:O, s:I, s:n}", "executable", json_array_get(q, 2), "build_id",
				  json_array_get(q, 3), "count", (json_int_t)0, "first_seen");
		json_array_append_new(builds, build);
	}
	add_count(build, n);
	keep_time(build, "first_seen", text(q, 7), true);
	add_count(entry(json_object_get(b, "arches"), "arch", text(q, 4)), n);
	if (json_array_size(q) > 9)
		note_example(b, q);
}

static int day_cmp(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	return strcmp(json_string_value(json_object_get(x, "day")), json_string_value(json_object_get(y, "day")));
}

/* Nulls (undated) last, then oldest first: the build that brought a bucket first. */
static int build_cmp(const void *a, const void *b)
{
	const char *x = json_string_value(json_object_get(*(json_t *const *)a, "first_seen"));
	const char *y = json_string_value(json_object_get(*(json_t *const *)b, "first_seen"));
	if (x && y)
		return strcmp(x, y);
	return (x == NULL) - (y == NULL);
}

static int arch_cmp(const void *a, const void *b)
{
	json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "count"));
	json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "count"));
	return x != y ? (x < y ? 1 : -1)
		      : strcmp(json_string_value(json_object_get(*(json_t *const *)a, "arch")) ?: "",
			       json_string_value(json_object_get(*(json_t *const *)b, "arch")) ?: "");
}

/* ARRAY's items sorted by CMP. */
static void sort_array(json_t *array, int (*cmp)(const void *, const void *))
{
	size_t n = json_array_size(array), i;
	json_t **v = calloc(n + 1, sizeof(*v)), *e;
	if (!v)
		return;
	json_array_foreach(array, i, e)
		v[i] = json_incref(e);
	qsort(v, n, sizeof(*v), cmp);
	json_array_clear(array);
	for (i = 0; i < n; i++)
		json_array_append_new(array, v[i]);
	free(v);
}

static void bucket_finish(json_t *b)
{
	sort_array(json_object_get(b, "days"), day_cmp);
	sort_array(json_object_get(b, "builds"), build_cmp);
	sort_array(json_object_get(b, "arches"), arch_cmp);
	json_object_del(b, "example_key");
}

static const struct rep_bucket_filter *sorting;

static int str_cmp(json_t *a, json_t *b, const char *field)
{
	const char *x = json_string_value(json_object_get(a, field));
	const char *y = json_string_value(json_object_get(b, field));
	return !x || !y ? (x != NULL) - (y != NULL) : strcmp(x, y);
}

/* Most frequent first by default; ties by most recent, then hash. */
static int bucket_cmp(const void *pa, const void *pb)
{
	json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
	json_int_t x = json_integer_value(json_object_get(a, "count"));
	json_int_t y = json_integer_value(json_object_get(b, "count"));
	int c = 0;
	switch (sorting->sort) {
	case REP_SORT_COUNT: c = (x > y) - (x < y); break;
	case REP_SORT_FIRST: c = str_cmp(a, b, "first_seen"); break;
	case REP_SORT_LAST: c = str_cmp(a, b, "last_seen"); break;
	case REP_SORT_SIGNATURE: c = str_cmp(a, b, "signature"); break;
	}
	if (!sorting->ascending)
		c = -c;
	if (c == 0)
		c = -str_cmp(a, b, "last_seen");
	return c ? c : str_cmp(a, b, "hash");
}

/* T's first and last crash time with group row Q's. */
static void totals_add(struct rep_bucket_totals *t, json_t *q)
{
	const char *first = text(q, 7), *last = text(q, 8);
	t->cores += integer(q, 6);
	if (!text(q, 5) || !*text(q, 5))
		t->undated += integer(q, 6);
	if (first && (!t->first[0] || strcmp(first, t->first) < 0))
		snprintf(t->first, sizeof(t->first), "%s", first);
	if (last && strcmp(last, t->last) > 0)
		snprintf(t->last, sizeof(t->last), "%s", last);
}

/* Each bucket of LIST its example: the most recent core F takes, one
 * indexed query per bucket shown (SQLite's groups carry none). */
static int sqlite_examples(struct rep_reader *r, const struct rep_bucket_filter *f, json_t *list)
{
	static const char *const fields[] = {"example_core", "cause_kind", "cause_summary", "example_path",
					     "abort_message"};
	char where[512], sql[1024];
	json_t *b, *rows;
	size_t k;
	where_clause(f, 2, where, sizeof(where));
	snprintf(sql, sizeof(sql), sqlite_example, where);
	json_array_foreach(list, k, b) {
		const char *params[] = {f->executable, f->build_id, f->cause_kind, f->from, f->to,
					json_string_value(json_object_get(b, "hash"))};
		if (rep_reader_rows_n(r, sql, params, 6, &rows) != 0)
			return -1;
		json_t *row = json_array_get(rows, 0);
		for (size_t i = 0; i < 5; i++)
			json_object_set_new(b, fields[i], row ? json_incref(json_array_get(row, i)) : json_null());
		json_decref(rows);
	}
	return 0;
}

bool rep_cause_is_hang(const char *kind)
{
	return kind && (strcmp(kind, "hang") == 0 || strcmp(kind, "deadlock") == 0);
}

/* "hang": its cause (its most recent core's) is a hang or a deadlock. */
static void note_hang(json_t *list)
{
	json_t *b;
	size_t k;
	json_array_foreach(list, k, b)
		json_object_set_new(b, "hang", json_boolean(rep_cause_is_hang(
					   json_string_value(json_object_get(b, "cause_kind")))));
}

int rep_buckets_read(struct rep_reader *r, const struct rep_bucket_filter *f, json_t **out,
		     struct rep_bucket_totals *totals)
{
	static pthread_mutex_t sort_lock = PTHREAD_MUTEX_INITIALIZER;
	const char *params[] = {f->executable, f->build_id, f->cause_kind, f->from, f->to, f->hash};
	bool ch = rep_reader_clickhouse(r);
	char where[512], sql[4096];
	json_t *rows = NULL, *q, *b = NULL, *list = json_array();
	bool exact = false;
	size_t k;
	memset(totals, 0, sizeof(*totals));
	if (!list || (ch && rep_reader_aggregates_exact(r, &exact) != 0)) {
		json_decref(list);
		return -1;
	}
	totals->one_bucket = exact;
	where_clause(f, !ch ? 0 : exact ? 3 : 1, where, sizeof(where));
	snprintf(sql, sizeof(sql), !ch ? sqlite_groups : exact ? ch_agg_groups : ch_groups, where);
	if (rep_reader_rows_n(r, sql, params, 6, &rows) != 0) {
		json_decref(list);
		return -1;
	}
	json_array_foreach(rows, k, q) {
		if (!b || !json_equal(json_object_get(b, "hash"), json_array_get(q, 0))) {
			b = bucket_new(q);
			json_array_append_new(list, b);
		}
		add_group(b, q);
		totals_add(totals, q);
	}
	totals->buckets = (long long)json_array_size(list);
	json_decref(rows);
	json_array_foreach(list, k, b)
		bucket_finish(b);
	/* qsort takes no context: one sort at a time */
	pthread_mutex_lock(&sort_lock);
	sorting = f;
	sort_array(list, bucket_cmp);
	pthread_mutex_unlock(&sort_lock);
	while (f->limit > 0 && json_array_size(list) > (size_t)f->limit)
		json_array_remove(list, json_array_size(list) - 1);
	if (!ch && sqlite_examples(r, f, list) != 0) {
		json_decref(list);
		return -1;
	}
	note_hang(list);
	*out = list;
	return 0;
}

void rep_buckets_order_as(json_t *buckets, json_t *hashes)
{
	json_t *sorted = json_array(), *h, *b;
	size_t i, k;
	json_array_foreach(hashes, i, h)
		json_array_foreach(buckets, k, b)
			if (json_equal(json_object_get(b, "hash"), h)) {
				json_array_append(sorted, b);
				json_array_remove(buckets, k);
				break;
			}
	json_array_extend(sorted, buckets);
	json_array_clear(buckets);
	json_array_extend(buckets, sorted);
	json_decref(sorted);
}
