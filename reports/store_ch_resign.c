/* rep_ch_store_resign() (reports/store_clickhouse.h): stored cores signed
 * again from their stored frames, symbolized again where debug info is
 * found now, their term sets read again, and each changed row written
 * again; store init's fill of term sets shares it. */
#include "store_ch_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/array.h"
#include "bytes.h"

/* ---- Resigning ------------------------------------------------------- */

/* Cores signed per round trip. */
#define CH_RESIGN_BATCH 500

/* A stored core as resigning needs it. */
struct ch_core {
	char *fingerprint;
	bool has_signal;
	int signo;
	char *signal_name;
	char *old_hash, *new_hash, *new_signature;   /* hashes may be NULL */
	int caught_signo;
	char *caught_signal_name;   /* NULL: no handler caught the crash */
	char *go_crash;             /* NULL: no Go crash */
	int go_signo;
	char *go_signal_name;
	bool has_tid;
	int64_t crashing_tid;
	bool resymbolized;          /* frames were symbolized again: NFRAMES is its count */
	int64_t nframes;
	char old_set[REP_TERM_SET_KEY];   /* its term set: stored ('': none yet) */
	char new_set[REP_TERM_SET_KEY];   /* and read again from its rows ('': not read) */
};

static char *dup_cell(json_t *row, size_t i)
{
	const char *s = json_string_value(json_array_get(row, i));
	return s ? strdup(s) : NULL;
}

static bool cell_null(json_t *row, size_t i)
{
	return json_is_null(json_array_get(row, i));
}

/* The cores resign signs again: not a deadlock's (its signature is its
 * cycle's waiting functions, which the stored frames do not hold). */
static int load_ch_cores(struct rep_ch *ch, struct ch_core **cores, size_t *n, char *why,
			 size_t whylen)
{
	/* version is read too: 18.16 fails a FINAL that reads no version
	 * column on a shard whose table holds one part */
	char *sql = printf_sql("SELECT fingerprint, signal, signal_name, signature_hash, crashing_tid,"
			       " caught_signal, caught_signal_name, go_crash, go_signal, go_signal_name,"
			       " term_set, version FROM %s.cores FINAL"
			       " WHERE ifNull(cause_kind, '') != 'deadlock' ORDER BY fingerprint",
			       rep_ch_database(ch));
	json_t *res = NULL, *row;
	size_t cap = 0, i;
	int rc = -1;
	if (!sql || rep_ch_select(ch, sql, false, &res, why, whylen) != 0)
		goto out;
	json_array_foreach(json_object_get(res, "data"), i, row) {
		struct ch_core *c = base_array_push(cores, n, &cap, sizeof(*c));
		if (!c)
			goto oom;
		c->fingerprint = dup_cell(row, 0);
		c->has_signal = !cell_null(row, 1);
		c->signo = (int)json_integer_value(json_array_get(row, 1));
		c->signal_name = dup_cell(row, 2);
		c->old_hash = dup_cell(row, 3);
		c->has_tid = !cell_null(row, 4);
		c->crashing_tid = json_integer_value(json_array_get(row, 4));
		c->caught_signo = (int)json_integer_value(json_array_get(row, 5));
		c->caught_signal_name = dup_cell(row, 6);
		c->go_crash = dup_cell(row, 7);
		c->go_signo = (int)json_integer_value(json_array_get(row, 8));
		c->go_signal_name = dup_cell(row, 9);
		const char *set = json_string_value(json_array_get(row, 10));
		snprintf(c->old_set, sizeof(c->old_set), "%s", set ? set : "");
		if (!c->fingerprint || (!cell_null(row, 2) && !c->signal_name) ||
		    (!cell_null(row, 3) && !c->old_hash) ||
		    (!cell_null(row, 6) && !c->caught_signal_name) ||
		    (!cell_null(row, 7) && !c->go_crash) || (!cell_null(row, 9) && !c->go_signal_name))
			goto oom;
	}
	rc = 0;
	goto out;
oom:
	snprintf(why, whylen, "out of memory");
out:
	json_decref(res);
	free(sql);
	return rc;
}

/* "'fp1','fp2',..." of the cores [FIRST, FIRST + N) that PICK (NULL: all)
 * picks; NULL when out of memory. */
static char *fingerprint_list(const struct ch_core *c, size_t first, size_t n,
			      bool (*pick)(const struct ch_core *))
{
	size_t len = 1;
	for (size_t i = first; i < first + n; i++)
		len += 2 * strlen(c[i].fingerprint) + 3;
	char *list = malloc(len), *q;
	size_t o = 0;
	if (!list)
		return NULL;
	list[0] = '\0';
	for (size_t i = first; i < first + n; i++) {
		if (pick && !pick(&c[i]))
			continue;
		if (!(q = rep_ch_quote(c[i].fingerprint))) {
			free(list);
			return NULL;
		}
		o += (size_t)snprintf(list + o, len - o, "%s%s", o ? "," : "", q);
		free(q);
	}
	return list;
}

/* The rows of ROWS (ordered by fingerprint, which is cell 0) that belong
 * to core C: [*CURSOR, returned end), the cursor moved past the rows of
 * cores before C. */
static size_t rows_of_core(const struct ch_core *c, json_t *rows, size_t *cursor)
{
	size_t n = json_array_size(rows), end;
	for (; *cursor < n; (*cursor)++) {
		const char *fp = json_string_value(json_array_get(json_array_get(rows, *cursor), 0));
		if (strcmp(fp ? fp : "", c->fingerprint) >= 0)
			break;
	}
	for (end = *cursor; end < n; end++) {
		const char *fp = json_string_value(json_array_get(json_array_get(rows, end), 0));
		if (strcmp(fp ? fp : "", c->fingerprint) != 0)
			break;
	}
	return end;
}

/* The index of the core with fingerprint FP among [FIRST, FIRST + N)
 * (sorted by fingerprint), or SIZE_MAX. */
static size_t ch_core_by_fingerprint(const struct ch_core *c, size_t first, size_t n,
				     const char *fp)
{
	size_t lo = first, hi = first + n;
	while (fp && lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int d = strcmp(c[mid].fingerprint, fp);
		if (d == 0)
			return mid;
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SIZE_MAX;
}

/* The crashing thread of core C among its THREADS rows ([fingerprint, idx,
 * tid, crashing], ordered by idx), chosen as the analyzer chooses it: the
 * one marked crashing, else the one whose tid is the crashing tid, else
 * the first.  Its index, and its tid into *TID. */
static int64_t crashing_thread(const struct ch_core *c, json_t *threads, size_t *cursor,
			       int64_t *tid)
{
	json_t *best = NULL, *by_tid = NULL, *first = NULL;
	size_t end = rows_of_core(c, threads, cursor);
	for (; *cursor < end; (*cursor)++) {
		json_t *row = json_array_get(threads, *cursor);
		if (!first)
			first = row;
		if (!best && json_integer_value(json_array_get(row, 3)))
			best = row;
		if (!by_tid && c->has_tid && json_integer_value(json_array_get(row, 2)) == c->crashing_tid)
			by_tid = row;
	}
	json_t *row = best ? best : by_tid ? by_tid : first;
	*tid = json_integer_value(json_array_get(row, 2));
	return row ? json_integer_value(json_array_get(row, 1)) : -1;
}

/* The bthread core C's crashing thread (TID) was running, among its TASKS
 * rows ([fingerprint, idx, tid], running ones with frames, ordered by idx):
 * its index, or -1 when it ran none. */
static int64_t crashing_task(const struct ch_core *c, int64_t thread, int64_t tid, json_t *tasks,
			     size_t *cursor)
{
	int64_t found = -1;
	size_t end = rows_of_core(c, tasks, cursor);
	for (; *cursor < end; (*cursor)++) {
		json_t *row = json_array_get(tasks, *cursor);
		if (found < 0 && thread >= 0 && json_integer_value(json_array_get(row, 2)) == tid)
			found = json_integer_value(json_array_get(row, 1));
	}
	return found;
}

/* The frames of thread or task OWNER of core C from FRAMES rows
 * ([fingerprint, owner's idx, kind, pc, function, module, module_offset,
 * idx, role], ordered), its strings borrowed from the rows, into *OUT
 * (reused). */
static int crash_frames(const struct ch_core *c, int64_t owner, json_t *frames, size_t *cursor,
			struct an_frame **out, size_t *n, size_t *cap, struct an_index_gap *gap)
{
	size_t end = rows_of_core(c, frames, cursor);
	*n = 0;
	*gap = (struct an_index_gap){0, 0};
	for (; *cursor < end; (*cursor)++) {
		json_t *row = json_array_get(frames, *cursor);
		if (json_integer_value(json_array_get(row, 1)) != owner)
			continue;
		rep_index_gap_note(gap, *n, json_integer_value(json_array_get(row, 7)));
		struct an_frame *f = base_array_push(out, n, cap, sizeof(*f));
		if (!f)
			return -1;
		memset(f, 0, sizeof(*f));
		f->kind = an_frame_kind_parse(json_string_value(json_array_get(row, 2)));
		f->pc = (uint64_t)json_integer_value(json_array_get(row, 3));
		f->function = (char *)json_string_value(json_array_get(row, 4));
		f->module = (char *)json_string_value(json_array_get(row, 5));
		f->has_module_offset = !cell_null(row, 6);
		f->module_offset = (uint64_t)json_integer_value(json_array_get(row, 6));
		f->role = an_frame_role_parse(json_string_value(json_array_get(row, 8)));
	}
	return 0;
}

/* SELECT COLUMNS FROM TABLE FINAL WHERE fingerprint IN (LIST) AND WHERE
 * ORDER BY ORDER: the "data" rows (borrowed from *RES, which the caller
 * frees). */
static json_t *select_in(struct rep_ch *ch, const char *columns, const char *table,
			 const char *list, const char *where, const char *order, json_t **res,
			 char *why, size_t whylen)
{
	char *sql = printf_sql("SELECT %s FROM %s.%s FINAL WHERE fingerprint IN (%s)%s%s ORDER BY %s",
			       columns, rep_ch_database(ch), table, list, where ? " AND " : "",
			       where ? where : "", order);
	json_t *data = NULL;
	if (!sql)
		snprintf(why, whylen, "out of memory");
	else if (rep_ch_select(ch, sql, false, res, why, whylen) == 0)
		data = json_object_get(*res, "data");
	free(sql);
	return data;
}

/* The rows of a batch of cores that signing reads: threads, frames, the
 * running tasks with frames, and those tasks' frames. */
struct sign_rows {
	json_t *res[4];
	json_t *threads, *frames, *tasks, *tframes;
	size_t tcur, fcur, kcur, kfcur;
};

static int sign_rows_load(struct rep_ch *ch, const char *list, struct sign_rows *r, char *why,
			  size_t whylen)
{
	static const char running[] = "state = 'running' AND nframes > 0";
	char *of_running = printf_sql("(fingerprint, task_idx) GLOBAL IN (SELECT fingerprint, idx FROM"
				      " %s.tasks FINAL WHERE fingerprint IN (%s) AND %s)",
				      rep_ch_database(ch), list, running);
	if (!of_running) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	const char *frame_columns = "kind, pc, function, module, module_offset, idx, role";
	char *fcols = printf_sql("fingerprint, thread_idx, %s", frame_columns);
	char *tfcols = printf_sql("fingerprint, task_idx, %s", frame_columns);
	r->threads = select_in(ch, "fingerprint, idx, tid, crashing", "threads", list, "1",
			       "fingerprint, idx", &r->res[0], why, whylen);
	r->frames = r->threads && fcols ? select_in(ch, fcols, "frames", list, "1",
						    "fingerprint, thread_idx, idx", &r->res[1], why,
						    whylen) : NULL;
	r->tasks = r->frames ? select_in(ch, "fingerprint, idx, tid", "tasks", list, running,
					 "fingerprint, idx", &r->res[2], why, whylen) : NULL;
	r->tframes = r->tasks && tfcols ? select_in(ch, tfcols, "task_frames", list, of_running,
						    "fingerprint, task_idx, idx", &r->res[3], why,
						    whylen) : NULL;
	free(fcols);
	free(tfcols);
	free(of_running);
	if (!r->tframes && !why[0])
		snprintf(why, whylen, "out of memory");
	return r->tframes ? 0 : -1;
}

static void sign_rows_free(struct sign_rows *r)
{
	for (int i = 0; i < 4; i++)
		json_decref(r->res[i]);
}

/* The signals of stored core C (its strings borrowed). */
static struct an_crash_signals stored_signals(const struct ch_core *c)
{
	return (struct an_crash_signals){
		.has_signal = c->has_signal, .signo = c->signo, .signal_name = c->signal_name,
		.caught_signo = c->caught_signo, .caught_signal_name = c->caught_signal_name,
		.go_crash = c->go_crash, .go_signo = c->go_signo, .go_signal_name = c->go_signal_name,
	};
}

/* Sign cores [FIRST, FIRST + N) with SIGN from their stored frames: the
 * crashing thread's, or those of the bthread it was running (as
 * an_signature_compute() and SQLite's resign choose them). */
static int sign_batch(struct rep_ch *ch, struct ch_core *c, size_t first, size_t n,
		      rep_sign_fn *sign, void *ctx, char *why, size_t whylen)
{
	char *list = fingerprint_list(c, first, n, NULL);
	struct sign_rows r = {0};
	struct an_frame *f = NULL;
	size_t nf = 0, fcap = 0;
	int rc = -1;
	if (!list) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	why[0] = '\0';
	if (sign_rows_load(ch, list, &r, why, whylen) != 0)
		goto out;
	for (size_t i = first; i < first + n; i++) {
		int64_t tid, thread = crashing_thread(&c[i], r.threads, &r.tcur, &tid);
		int64_t task = crashing_task(&c[i], thread, tid, r.tasks, &r.kcur);
		struct an_index_gap gap;
		if ((task >= 0 ? crash_frames(&c[i], task, r.tframes, &r.kfcur, &f, &nf, &fcap, &gap)
			       : crash_frames(&c[i], thread, r.frames, &r.fcur, &f, &nf, &fcap, &gap)) != 0)
			goto oom;
		const struct rep_stored_crash crash = {
			.id = (int64_t)i, .signals = stored_signals(&c[i]), .frames = f,
			.nframes = nf, .collapsed_at = gap.at,
		};
		if (sign(ctx, &crash, &c[i].new_signature, &c[i].new_hash) != 0)
			goto oom;
	}
	rc = 0;
	goto out;
oom:
	snprintf(why, whylen, "out of memory");
out:
	free(f);   /* its strings belong to the rows */
	sign_rows_free(&r);
	free(list);
	return rc;
}

/* A row of SELECT * (DATA's row ROW, META naming the columns) as an object
 * of its columns; NULL when out of memory. */
static json_t *row_object(json_t *meta, json_t *row)
{
	json_t *obj = json_object(), *col;
	size_t j;
	json_array_foreach(obj ? meta : NULL, j, col) {
		json_t *v = rep_ch_cell(json_array_get(row, j),
					json_string_value(json_object_get(col, "type")));
		const char *name = json_string_value(json_object_get(col, "name"));
		if (!v || !name || json_object_set_new(obj, name, v) != 0) {
			json_decref(obj);
			return NULL;
		}
	}
	return obj;
}

/* Rows are changed by a function of the caller: 1 when it changed ROW (an
 * object of its columns), 0 when not, -1 on error. */
typedef int ch_patch_fn(void *ctx, json_t *row);

/* Write again the rows of table T of the cores in LIST that PATCH changes:
 * the new rows replace the old ones (a ReplacingMergeTree keeps the last
 * row written of a key, or the newest version). */
static int rewrite_rows(struct rep_ch_store *st, enum ch_table t, const char *list,
			ch_patch_fn *patch, void *ctx, char *why, size_t whylen)
{
	json_t *res = NULL, *row, *data = NULL;
	char *table = printf_sql("%s%s", rep_chs_tables[t].name, st->local ? st->local : "");
	if (table)
		data = select_in(st->ch, "*", table, list, NULL, rep_chs_tables[t].order, &res, why, whylen);
	else
		snprintf(why, whylen, "out of memory");
	free(table);
	json_t *meta = json_object_get(res, "meta");
	size_t i;
	int rc = data ? 0 : -1;
	json_array_foreach(rc == 0 ? data : NULL, i, row) {
		json_t *obj = row_object(meta, row);
		int changed = obj ? patch(ctx, obj) : -1;
		if (changed > 0) {
			rc = rep_chs_add_row(&st->rows[t], obj);   /* takes OBJ */
		} else {
			json_decref(obj);
			rc = changed;
		}
		if (rc != 0) {
			snprintf(why, whylen, "rewriting %s: out of memory", rep_chs_tables[t].name);
			break;
		}
	}
	if (rc == 0)
		rc = rep_chs_insert_rows(st, t, why, whylen);
	st->rows[t].len = st->rows[t].count = 0;
	json_decref(res);
	return rc;
}

/* ---- Term sets read again --- */

/* The term sets of the cores [FIRST, FIRST + N) of C that PICK picks (NULL:
 * all), from what is stored of them as add_terms() makes them at ingest:
 * the names of their frames and task frames, and their cause summary.  Each
 * one's key into its new_set; the names of the sets not known yet written
 * to term_names. */
static int stored_term_sets(struct rep_ch_store *st, struct ch_core *c, size_t first, size_t n,
			    bool (*pick)(const struct ch_core *), char *why, size_t whylen)
{
	char *list = fingerprint_list(c, first, n, pick), *sql = NULL;
	json_t *res = NULL, *data;
	const char **names = NULL;
	size_t cap = 0, cursor = 0;
	int rc = -1;
	if (list && !*list) {
		free(list);
		return 0;
	}
	if (list)
		sql = printf_sql("SELECT fingerprint, groupUniqArray(name) FROM"
				 " (SELECT fingerprint, " FRAME_NAMES " AS name FROM %1$s.frames%2$s FINAL"
				 "   WHERE fingerprint IN (%3$s)"
				 "  UNION ALL SELECT fingerprint, " FRAME_NAMES " AS name"
				 "   FROM %1$s.task_frames%2$s FINAL WHERE fingerprint IN (%3$s)"
				 "  UNION ALL SELECT fingerprint, assumeNotNull(cause_summary) AS name FROM"
				 "   (SELECT fingerprint, cause_summary, version FROM %1$s.cores%2$s FINAL"
				 "     WHERE fingerprint IN (%3$s)) WHERE isNotNull(cause_summary))"
				 " GROUP BY fingerprint ORDER BY fingerprint", rep_ch_database(st->ch),
				 st->local ? st->local : "", list);
	if (!sql)
		goto oom;
	if (rep_ch_select(st->ch, sql, false, &res, why, whylen) != 0)
		goto out;
	data = json_object_get(res, "data");
	for (size_t i = first; i < first + n; i++) {
		if (pick && !pick(&c[i]))
			continue;
		size_t end = rows_of_core(&c[i], data, &cursor), k = 0;
		json_t *got = cursor < end ? json_array_get(json_array_get(data, cursor), 1) : NULL;
		if (!base_array_reserve(&names, &cap, json_array_size(got) + 1, sizeof(*names)))
			goto oom;
		for (size_t j = 0; j < json_array_size(got); j++)
			if (json_string_value(json_array_get(got, j)))
				names[k++] = json_string_value(json_array_get(got, j));
		rep_terms_unique(names, &k);
		rep_term_set_key(names, k, c[i].new_set);
		if (rep_chs_add_term_names(st, names, k, c[i].new_set) != 0)
			goto oom;
		rep_chs_set_remember(&st->known, c[i].new_set);
		cursor = end;
	}
	rc = rep_chs_insert_rows(st, T_TERMS, why, whylen);
	goto out;
oom:
	snprintf(why, whylen, "reading term sets: out of memory");
out:
	if (rc != 0)
		rep_chs_sets_forget(&st->known);   /* their names may not be written */
	st->rows[T_TERMS].len = st->rows[T_TERMS].count = 0;
	free(names);
	json_decref(res);
	free(sql);
	free(list);
	return rc;
}

/* ---- Frames symbolized again --- */

/* A modules row of the batch whose debug info is found now. */
struct ch_module_row {
	size_t core;                /* index of its core */
	int64_t idx;
	size_t found;               /* index into the found modules */
	uint64_t start, end;
};

/* An owner's (thread's or chain's) new frame count. */
struct ch_owner_count {
	size_t core;
	int64_t owner, nframes;
};

/* What symbolizing a batch again found and changed. */
struct ch_resym {
	struct ch_core *cores;
	size_t first, n;
	struct rep_found_modules *found;   /* across batches */
	struct ch_module_row *rows;
	size_t nrows, rcap;
	struct ch_owner_count *counts[3];  /* threads, suspended chains, tasks */
	size_t ncounts[3], ccap[3];
};

/* Which row of SORTED (by core, then owner) is CORE's OWNER; NULL if none. */
static const struct ch_owner_count *find_count(const struct ch_owner_count *sorted, size_t n,
					       size_t core, int64_t owner)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ch_owner_count *m = &sorted[mid];
		if (m->core == core && m->owner == owner)
			return m;
		if (m->core < core || (m->core == core && m->owner < owner))
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The batch's modules rows without debug info whose debug info is found
 * now, by core then idx. */
static int load_module_rows(struct rep_ch_store *st, struct ch_resym *m,
			    const struct rep_resign_fns *fns, const char *list, char *why,
			    size_t whylen)
{
	json_t *res = NULL;
	json_t *data = select_in(st->ch, "fingerprint, idx, build_id, path, start_addr, end_addr",
				 "modules", list, "debuginfo IS NULL AND isNotNull(build_id) AND"
				 " isNotNull(path)", "fingerprint, idx", &res, why, whylen);
	size_t cursor = 0;
	int rc = data ? 0 : -1;
	for (size_t i = m->first; rc == 0 && i < m->first + m->n; i++) {
		for (size_t end = rows_of_core(&m->cores[i], data, &cursor); cursor < end; cursor++) {
			json_t *row = json_array_get(data, cursor);
			const char *build_id = json_string_value(json_array_get(row, 2));
			const char *path = json_string_value(json_array_get(row, 3));
			size_t k = build_id && path ? rep_found_module(m->found, fns, build_id, path) : 0;
			struct ch_module_row *r = NULL;
			if (!build_id || !path || (k != SIZE_MAX && !m->found->v[k].debuginfo))
				continue;
			if (k == SIZE_MAX ||
			    !(r = base_array_push(&m->rows, &m->nrows, &m->rcap, sizeof(*r)))) {
				snprintf(why, whylen, "out of memory");
				rc = -1;
				break;
			}
			*r = (struct ch_module_row){i, json_integer_value(json_array_get(row, 1)), k,
						    (uint64_t)json_integer_value(json_array_get(row, 4)),
						    (uint64_t)json_integer_value(json_array_get(row, 5))};
			m->cores[i].resymbolized = true;
		}
	}
	json_decref(res);
	return rc;
}

/* The frame fields of the NCOLS columns META names (caller frees; NULL:
 * out of memory), looked up once per result. */
static enum rep_frame_field *frame_fields(json_t *meta, size_t *ncols)
{
	*ncols = json_array_size(meta);
	enum rep_frame_field *fields = calloc(*ncols ? *ncols : 1, sizeof(*fields));
	for (size_t j = 0; fields && j < *ncols; j++)
		fields[j] = rep_frame_field_of(
			json_string_value(json_object_get(json_array_get(meta, j), "name")));
	return fields;
}

/* A frame from a row of SELECT * (FIELDS of its NCOLS columns) into F. */
static int frame_of_row(const enum rep_frame_field *fields, size_t ncols, json_t *row,
			struct an_frame *f)
{
	memset(f, 0, sizeof(*f));
	for (size_t j = 0; j < ncols; j++) {
		if (fields[j] == REP_FIELD_NONE)
			continue;
		json_t *v = json_array_get(row, j);
		const struct rep_cell cell = {!v || json_is_null(v), json_integer_value(v),
					      json_string_value(v)};
		if (rep_frame_set_field(f, fields[j], &cell) != 0)
			return -1;
	}
	return 0;
}

static bool is_resymbolized(const struct ch_core *c)
{
	return c->resymbolized;
}

/* The stored-module list of core CORE's rows in M (malloc'd), *N of them. */
static struct rep_stored_module *resym_stored_modules(const struct ch_resym *m, size_t core,
						      size_t *n)
{
	struct rep_stored_module *mods = calloc(m->nrows ? m->nrows : 1, sizeof(*mods));
	*n = 0;
	for (size_t i = 0; mods && i < m->nrows; i++) {
		const struct rep_found *f = &m->found->v[m->rows[i].found];
		if (m->rows[i].core == core)
			mods[(*n)++] = (struct rep_stored_module){f->path, f->build_id, m->rows[i].start,
								  m->rows[i].end};
	}
	return mods;
}

/* A row is replaced only by one of its key, and 18.16 deletes none through
 * a Distributed table: past a recursion's run (GAP, STORED before) the
 * first frame made again keeps the index it was stored at and the others
 * follow it, the run no longer counting the inline levels gained before it
 * and in its cycle, so that every old row is replaced (SQLite's indexes
 * when none was gained).  Frames before the run that now reach past it
 * keep the new gap. */
static void keep_stored_indexes(struct an_index_gap *gap, const struct an_index_gap *stored)
{
	if (gap->at && gap->at <= stored->at + stored->left_out)
		gap->left_out = stored->at + stored->left_out - gap->at;
}

/* Symbolize again the frames of one owner: rows [FROM, TO) of DATA, all of
 * core CORE and owner OWNER; changed frames are added to table T's rows. */
static int resymbolize_owner(struct rep_ch_store *st, struct ch_resym *m,
			     const struct rep_resign_fns *fns, enum ch_table t,
			     const enum rep_frame_field *fields, size_t nfields, json_t *data,
			     size_t from, size_t to, size_t core, int64_t owner,
			     struct rep_resign_result *out)
{
	struct an_frame *f = calloc(to - from, sizeof(*f));
	size_t n = 0, nmods = 0;
	struct rep_stored_module *mods = resym_stored_modules(m, core, &nmods);
	struct an_index_gap gap = {0, 0}, stored;
	int k = f && mods ? 0 : -1;
	for (size_t r = from; k == 0 && r < to; r++, n++) {
		json_t *row = json_array_get(data, r);
		rep_index_gap_note(&gap, n, json_integer_value(json_array_get(row, REP_FRAME_INDEX_COLUMN)));
		k = frame_of_row(fields, nfields, row, &f[n]);
	}
	stored = gap;
	if (k == 0)
		k = fns->resymbolize(fns->ctx, mods, nmods, &f, &n, &gap);
	/* Symbolizing again never gives fewer frames than were stored (inline
	 * levels are only made again), so the new rows replace every old one. */
	keep_stored_indexes(&gap, &stored);
	int side = t == T_FRAMES ? 0 : t == T_SFRAMES ? 1 : 2;
	struct ch_owner_count *c = k > 0 ? base_array_push(&m->counts[side], &m->ncounts[side],
							   &m->ccap[side], sizeof(*c)) : NULL;
	if (k > 0 && (!c || rep_chs_add_frames_of(st, t, m->cores[core].fingerprint, (size_t)owner,
						  f, n, &gap) != 0))
		k = -1;
	if (k > 0) {
		*c = (struct ch_owner_count){core, owner, (int64_t)n};
		out->frames_symbolized += (size_t)k;
	}
	for (size_t i = 0; f && i < n; i++)
		an_frame_deinit(&f[i]);
	free(f);
	free(mods);
	return k < 0 ? -1 : 0;
}

/* Symbolize again the frames of table T (frames, suspended_frames or
 * task_frames, owners in column 1) of the cores in LIST, and write the changed ones. */
static int resymbolize_table(struct rep_ch_store *st, struct ch_resym *m,
			     const struct rep_resign_fns *fns, enum ch_table t, const char *list,
			     struct rep_resign_result *out, char *why, size_t whylen)
{
	json_t *res = NULL;
	json_t *data = select_in(st->ch, "*", rep_chs_tables[t].name, list, NULL, rep_chs_tables[t].order,
				 &res, why, whylen);
	size_t cursor = 0, ncols = 0;
	enum rep_frame_field *fields = data ? frame_fields(json_object_get(res, "meta"), &ncols) : NULL;
	int rc = fields ? 0 : -1;
	for (size_t i = m->first; rc == 0 && i < m->first + m->n; i++) {
		if (!m->cores[i].resymbolized)
			continue;
		size_t end = rows_of_core(&m->cores[i], data, &cursor);
		while (rc == 0 && cursor < end) {
			json_t *row = json_array_get(data, cursor);
			int64_t owner = json_integer_value(json_array_get(row, REP_FRAME_OWNER_COLUMN));
			size_t to = cursor;
			while (to < end && json_integer_value(json_array_get(json_array_get(data, to),
									     REP_FRAME_OWNER_COLUMN)) == owner)
				to++;
			rc = resymbolize_owner(st, m, fns, t, fields, ncols, data, cursor, to, i, owner,
					       out);
			cursor = to;
		}
	}
	if (rc != 0 && data)
		snprintf(why, whylen, "symbolizing frames again: out of memory");
	if (rc == 0)
		rc = rep_chs_insert_rows(st, t, why, whylen);
	st->rows[t].len = st->rows[t].count = 0;
	free(fields);
	json_decref(res);
	return rc;
}

/* The thread (SIDE 0), chain (1) or task (2) row's new nframes; a thread's count
 * also adds up into its core's. */
static int patch_owner(struct ch_resym *m, int side, json_t *row)
{
	size_t core = ch_core_by_fingerprint(m->cores, m->first, m->n,
					     json_string_value(json_object_get(row, "fingerprint")));
	int64_t idx = json_integer_value(json_object_get(row, "idx"));
	const struct ch_owner_count *c = core == SIZE_MAX ? NULL :
					 find_count(m->counts[side], m->ncounts[side], core, idx);
	if (c && json_object_set_new(row, "nframes", json_integer(c->nframes)) != 0)
		return -1;
	if (side == 0 && core != SIZE_MAX)
		m->cores[core].nframes += json_integer_value(json_object_get(row, "nframes"));
	return c != NULL;
}

static int patch_thread(void *ctx, json_t *row)
{
	return patch_owner(ctx, 0, row);
}

static int patch_chain(void *ctx, json_t *row)
{
	return patch_owner(ctx, 1, row);
}

static int patch_task(void *ctx, json_t *row)
{
	return patch_owner(ctx, 2, row);
}

/* A modules row found now: its debuginfo. */
static int patch_module(void *ctx, json_t *row)
{
	struct ch_resym *m = ctx;
	size_t core = ch_core_by_fingerprint(m->cores, m->first, m->n,
					     json_string_value(json_object_get(row, "fingerprint")));
	int64_t idx = json_integer_value(json_object_get(row, "idx"));
	for (size_t i = 0; core != SIZE_MAX && i < m->nrows; i++)
		if (m->rows[i].core == core && m->rows[i].idx == idx)
			return json_object_set_new(row, "debuginfo",
						   json_string(m->found->v[m->rows[i].found].debuginfo))
				       ? -1 : 1;
	return 0;
}

/* Symbolize again the frames of the batch's modules whose debug info is
 * found now: frames and chains rewritten, then their owners' counts and
 * the modules' debuginfo (each core's new count kept for its cores row). */
static int resymbolize_batch(struct rep_ch_store *st, struct ch_core *c, size_t first, size_t n,
			     const struct rep_resign_fns *fns, struct rep_found_modules *found,
			     struct rep_resign_result *out, char *why, size_t whylen)
{
	struct ch_resym m = {.cores = c, .first = first, .n = n, .found = found};
	char *all = fingerprint_list(c, first, n, NULL), *list = NULL;
	int rc = all ? load_module_rows(st, &m, fns, all, why, whylen) : -1;
	if (rc == 0 && m.nrows > 0 && !(list = fingerprint_list(c, first, n, is_resymbolized)))
		rc = -1;
	if (rc == 0 && list &&
	    (resymbolize_table(st, &m, fns, T_FRAMES, list, out, why, whylen) != 0 ||
	     resymbolize_table(st, &m, fns, T_SFRAMES, list, out, why, whylen) != 0 ||
	     resymbolize_table(st, &m, fns, T_TFRAMES, list, out, why, whylen) != 0 ||
	     rewrite_rows(st, T_THREADS, list, patch_thread, &m, why, whylen) != 0 ||
	     rewrite_rows(st, T_SUSPENDED, list, patch_chain, &m, why, whylen) != 0 ||
	     rewrite_rows(st, T_TASKS, list, patch_task, &m, why, whylen) != 0 ||
	     rewrite_rows(st, T_MODULES, list, patch_module, &m, why, whylen) != 0))
		rc = -1;
	for (size_t i = first; i < first + n; i++) {
		bool counted = false;
		for (int side = 0; side < 3 && !counted; side++)
			for (size_t k = 0; k < m.ncounts[side] && !counted; k++)
				counted = m.counts[side][k].core == i;
		out->cores_symbolized += counted;
	}
	if (rc != 0 && !all)
		snprintf(why, whylen, "out of memory");
	free(m.rows);
	for (int side = 0; side < 3; side++)
		free(m.counts[side]);
	free(list);
	free(all);
	return rc;
}

static bool hash_changed(const struct ch_core *c)
{
	return !c->old_hash || strcmp(c->old_hash, c->new_hash) != 0;
}

/* Whether C's term set was read again and differs from the stored one. */
static bool set_changed(const struct ch_core *c)
{
	return c->new_set[0] && strcmp(c->old_set, c->new_set) != 0;
}

/* Whether C's term set is read again: its frames changed, or it has none
 * yet (stored by an older asyncore after `store init`). */
static bool set_stale(const struct ch_core *c)
{
	return c->resymbolized || !c->old_set[0];
}

/* Whether C's cores row is written again in another group of the
 * aggregates: its signature or its term set changed. */
static bool moves_group(const struct ch_core *c)
{
	return (c->new_hash && hash_changed(c)) || set_changed(c);
}

/* Whether C's cores row is written again: its signature, its frame count
 * or its term set changed. */
static bool needs_rewrite(const struct ch_core *c)
{
	return (c->new_hash && (hash_changed(c) || c->resymbolized)) || set_changed(c);
}

/* The signing of a batch, for rewriting its cores rows. */
struct ch_signed {
	struct rep_ch_store *st;
	struct ch_core *cores;
	size_t first, n;
};

/* A cores row whose signature, frame count or term set changed: the new
 * ones (a signature when it was signed, the others when read again), and a
 * newer version (it replaces the stored row). */
static int patch_core(void *ctx, json_t *row)
{
	struct ch_signed *b = ctx;
	size_t i = ch_core_by_fingerprint(b->cores, b->first, b->n,
					  json_string_value(json_object_get(row, "fingerprint")));
	const struct ch_core *c = i == SIZE_MAX ? NULL : &b->cores[i];
	if (!c || !needs_rewrite(c))
		return 0;
	if ((c->new_hash &&
	     (json_object_set_new(row, "signature", rep_json_text(c->new_signature)) != 0 ||
	      json_object_set_new(row, "signature_hash", rep_json_text(c->new_hash)) != 0)) ||
	    (c->resymbolized && json_object_set_new(row, "nframes", json_integer(c->nframes)) != 0) ||
	    (c->new_set[0] && json_object_set_new(row, "term_set", json_string(c->new_set)) != 0) ||
	    json_object_set_new(row, "version", json_integer((json_int_t)rep_chs_next_version(b->st))) != 0)
		return -1;
	return 1;
}

/* Write the batch's changed cores rows again. */
static int rewrite_batch(struct rep_ch_store *st, struct ch_core *c, size_t first, size_t n,
			 size_t *changed, char *why, size_t whylen)
{
	struct ch_signed b = {st, c, first, n};
	char *list = fingerprint_list(c, first, n, needs_rewrite);
	int rc = list && *list ? rewrite_rows(st, T_CORES, list, patch_core, &b, why, whylen) : 0;
	if (!list) {
		snprintf(why, whylen, "out of memory");
		rc = -1;
	}
	for (size_t i = first; rc == 0 && i < first + n; i++)
		*changed += hash_changed(&c[i]);
	free(list);
	return rc;
}

static void ch_cores_free(struct ch_core *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(c[i].fingerprint);
		free(c[i].signal_name);
		free(c[i].caught_signal_name);
		free(c[i].go_crash);
		free(c[i].go_signal_name);
		free(c[i].old_hash);
		free(c[i].new_hash);
		free(c[i].new_signature);
	}
	free(c);
}

/* Store init: the cores of this server (a cluster's shard: all the rows of
 * its cores are here) stored without a term set (ALL: every one, its
 * term_names being new) get one from what is stored of them, its names
 * into term_names and their cores rows written again with it.  Written to
 * the shard's own tables: the cluster's other shards may not have term
 * sets yet.  The aggregates then hold those cores in two groups until
 * rep_chs_aggregates_recount(): marked so for SHARD (this server's) before the
 * first is written. */
int rep_chs_fill_term_sets(struct rep_ch *ch, bool all, const char *shard, char *why,
			   size_t whylen)
{
	struct rep_ch_store st = {.ch = ch, .local = rep_ch_cluster(ch) ? "_local" : NULL};
	char *sql = printf_sql("SELECT fingerprint, argMax(term_set, version) AS s FROM %s.cores%s"
			       " GROUP BY fingerprint%s ORDER BY fingerprint", rep_ch_database(ch),
			       st.local ? st.local : "", all ? "" : " HAVING s = ''");
	json_t *res = NULL, *row;
	struct ch_core *c = NULL;
	size_t n = 0, cap = 0, i;
	int rc = -1;
	bool marked = false;
	if (!sql)
		goto oom;
	if (rep_ch_select(ch, sql, false, &res, why, whylen) != 0)
		goto out;
	json_array_foreach(json_object_get(res, "data"), i, row) {
		struct ch_core *e = base_array_push(&c, &n, &cap, sizeof(*e));
		const char *set = json_string_value(json_array_get(row, 1));
		if (!e || !(e->fingerprint = dup_cell(row, 0)))
			goto oom;
		snprintf(e->old_set, sizeof(e->old_set), "%s", set ? set : "");
	}
	json_decref(res);
	res = NULL;
	for (size_t first = 0; first < n; first += CH_RESIGN_BATCH) {
		size_t k = n - first < CH_RESIGN_BATCH ? n - first : CH_RESIGN_BATCH;
		struct ch_signed b = {&st, c, first, k};
		if (stored_term_sets(&st, c, first, k, NULL, why, whylen) != 0)
			goto out;
		char *list = fingerprint_list(c, first, k, set_changed);
		int written = 0;
		if (list && *list && !marked) {
			written = rep_chs_mark_inexact(ch, "filling", shard, true,
						       rep_chs_next_version(&st), why, whylen);
			marked = written == 0;
		}
		if (list && *list && written == 0)
			written = rewrite_rows(&st, T_CORES, list, patch_core, &b, why, whylen);
		if (!list)
			goto oom;
		free(list);
		if (written != 0)
			goto out;
	}
	rc = 0;
	goto out;
oom:
	snprintf(why, whylen, "filling term sets: out of memory");
out:
	json_decref(res);
	ch_cores_free(c, n);
	for (int t = 0; t < T_COUNT; t++)
		free(st.rows[t].data);
	free(st.known.slots);
	free(sql);
	return rc;
}

/* Old and new hash of one core, for counting buckets. */
struct hash_pair {
	const char *a, *b;
};

static int cmp_pair(const void *x, const void *y)
{
	const struct hash_pair *p = x, *q = y;
	int c = strcmp(p->a, q->a);
	return c ? c : strcmp(p->b, q->b);
}

/* Distinct values of A, and how many A values go with two or more
 * distinct B values, over N pairs (sorted here; NULLs left out as SQL's
 * count(DISTINCT) leaves them). */
static void count_groups(struct hash_pair *p, size_t n, size_t *groups, size_t *spread)
{
	qsort(p, n, sizeof(*p), cmp_pair);
	*groups = *spread = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i + 1, distinct = 1;
		for (; j < n && strcmp(p[j].a, p[i].a) == 0; j++)
			distinct += strcmp(p[j].b, p[j - 1].b) != 0;
		(*groups)++;
		*spread += distinct > 1;
		i = j;
	}
}

static int count_buckets(const struct ch_core *c, size_t n, struct rep_resign_result *out)
{
	struct hash_pair *old_new = calloc(n ? n : 1, sizeof(*old_new));
	struct hash_pair *new_old = calloc(n ? n : 1, sizeof(*new_old));
	size_t m = 0, unused;
	if (!old_new || !new_old) {
		free(old_new);
		free(new_old);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (!c[i].old_hash)
			continue;
		old_new[m] = (struct hash_pair){c[i].old_hash, c[i].new_hash};
		new_old[m++] = (struct hash_pair){c[i].new_hash, c[i].old_hash};
	}
	count_groups(old_new, m, &out->buckets_before, &out->split);
	count_groups(new_old, m, &unused, &out->merged);
	for (size_t i = 0; i < n; i++)   /* cores without an old hash count after */
		new_old[i] = (struct hash_pair){c[i].new_hash, ""};
	count_groups(new_old, n, &out->buckets_after, &unused);
	free(old_new);
	free(new_old);
	return 0;
}

int rep_ch_store_resign(struct rep_ch_store *st, const struct rep_resign_fns *fns,
			struct rep_resign_result *out, char *why, size_t whylen)
{
	struct rep_found_modules found = {0};
	struct ch_core *c = NULL;
	struct ch_marks m;
	size_t n = 0;
	int rc = -1;
	bool marked = false;   /* "rewriting" written: "rewritten" follows */
	long long made = 0;
	memset(out, 0, sizeof(*out));
	if (ask_number(st->ch, printf_sql("EXISTS TABLE %s.%s", rep_ch_database(st->ch),
					  rep_chs_marks_table.name), &made, why, whylen) != 0)
		goto out;
	if (made != 1) {
		snprintf(why, whylen, "%s: a store of an older asyncore: run asyncore store init on it"
			 " (on every shard) first", rep_ch_database(st->ch));
		goto out;
	}
	if (load_ch_cores(st->ch, &c, &n, why, whylen) != 0)
		goto out;
	for (size_t first = 0; first < n; first += CH_RESIGN_BATCH) {
		size_t k = n - first < CH_RESIGN_BATCH ? n - first : CH_RESIGN_BATCH;
		if ((fns->debuginfo &&
		     resymbolize_batch(st, c, first, k, fns, &found, out, why, whylen) != 0) ||
		    stored_term_sets(st, c, first, k, set_stale, why, whylen) != 0 ||
		    sign_batch(st->ch, c, first, k, fns->sign, fns->ctx, why, whylen) != 0)
			goto out;
		for (size_t i = first; i < first + k && !marked; i++)
			if (moves_group(&c[i])) {
				if (rep_chs_mark_inexact(st->ch, "rewriting", "", false,
							 rep_chs_next_version(st), why,
							 whylen) != 0)
					goto out;
				marked = true;
			}
		if (rewrite_batch(st, c, first, k, &out->changed, why, whylen) != 0)
			goto out;
	}
	out->modules_found = rep_found_count(&found);
	out->cores = n;
	if (count_buckets(c, n, out) != 0) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	/* a core that changed bucket (or term set) is in two of bucket_days'
	 * (set_days') groups until its old row is merged away: its rows all
	 * written, "rewritten" (closing too the "rewriting" of a resign that
	 * died); one server's aggregates are counted again now, a cluster's
	 * shards' by their `store init` */
	bool moved = marked;
	if (rep_chs_marks_read(st->ch, "", false, &m, why, whylen) != 0 ||
	    ((moved || m.open) &&
	     rep_chs_mark_inexact(st->ch, "rewritten", "", false, rep_chs_next_version(st), why, whylen) != 0))
		goto out;
	marked = false;
	if (!rep_ch_cluster(st->ch) && (moved || m.open || m.rebuilt < m.dirty) &&
	    rep_chs_aggregates_recount(st->ch, "", true, "resign", why, whylen) != 0)
		goto out;
	rc = 0;
out:
	if (marked) {   /* failed: no more rows of this resign, but the aggregates stay inexact */
		char ignored[256];
		rep_chs_mark_inexact(st->ch, "rewritten", "", false, rep_chs_next_version(st),
				     ignored, sizeof(ignored));
	}
	rep_found_modules_free(&found);
	ch_cores_free(c, n);
	return rc;
}

