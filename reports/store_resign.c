#include "store_resign.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/array.h"
#include "store_clickhouse.h"
#include "store_internal.h"
#include "store_rows.h"

/* A core's row as the signing needs it. */
struct resign_core {
	int64_t id;
	bool has_signal;
	int signo;
	char *signal_name;
	char *hash;                 /* the stored signature_hash, or NULL */
	int caught_signo;
	char *caught_signal_name;   /* NULL: no handler caught the crash */
	char *go_crash;             /* NULL: no Go crash */
	int go_signo;
	char *go_signal_name;
};

struct resign {
	struct rep_sqlite *st;
	sqlite3 *db;
	sqlite3_stmt *frames, *update;
	struct resign_core *cores;
	size_t ncores, cap;
	struct an_frame *f;         /* one core's frames at a time */
	size_t nf, fcap;
	struct an_index_gap gap;    /* where their stored indexes jump */
};

static char *column_text(sqlite3_stmt *q, int c)
{
	const unsigned char *s = sqlite3_column_text(q, c);
	return s ? strdup((const char *)s) : NULL;
}

static bool column_missing(sqlite3_stmt *q, int c, const char *copy)
{
	return sqlite3_column_type(q, c) != SQLITE_NULL && !copy;
}

/* Every core's id, signals and hash, before anything is rewritten; not a
 * deadlock's, whose signature is its cycle's waiting functions, which the
 * stored frames do not hold. */
static int load_cores(struct resign *r)
{
	sqlite3_stmt *q = NULL;
	int rc = -1, step;
	if (sqlite3_prepare_v2(r->db, "SELECT id, signal, signal_name, signature_hash, caught_signal,"
				      " caught_signal_name, go_crash, go_signal, go_signal_name"
				      " FROM cores WHERE cause_kind IS NOT 'deadlock' ORDER BY id", -1, &q,
				      NULL) != SQLITE_OK)
		return -1;
	while ((step = sqlite3_step(q)) == SQLITE_ROW) {
		struct resign_core *c = base_array_push(&r->cores, &r->ncores, &r->cap, sizeof(*c));
		if (!c)
			goto out;
		c->id = sqlite3_column_int64(q, 0);
		c->has_signal = sqlite3_column_type(q, 1) != SQLITE_NULL;
		c->signo = sqlite3_column_int(q, 1);
		c->signal_name = column_text(q, 2);
		c->hash = column_text(q, 3);
		c->caught_signo = sqlite3_column_int(q, 4);
		c->caught_signal_name = column_text(q, 5);
		c->go_crash = column_text(q, 6);
		c->go_signo = sqlite3_column_int(q, 7);
		c->go_signal_name = column_text(q, 8);
		if (column_missing(q, 2, c->signal_name) || column_missing(q, 3, c->hash) ||
		    column_missing(q, 5, c->caught_signal_name) || column_missing(q, 6, c->go_crash) ||
		    column_missing(q, 8, c->go_signal_name))
			goto out;
	}
	rc = step == SQLITE_DONE ? 0 : -1;
out:
	sqlite3_finalize(q);
	return rc;
}

static void frames_clear(struct resign *r)
{
	for (size_t i = 0; i < r->nf; i++)
		an_frame_deinit(&r->f[i]);
	r->nf = 0;
}

/* The crashing thread's frames of core ID into r->f, chosen as the
 * analyzer chooses it: the thread marked crashing, else the one whose tid
 * is the crashing tid, else the first. */
static int load_frames(struct resign *r, int64_t id)
{
	sqlite3_stmt *q = r->frames;
	int step, rc = 0;
	frames_clear(r);
	r->gap = (struct an_index_gap){0, 0};
	sqlite3_bind_int64(q, 1, id);
	while ((step = sqlite3_step(q)) == SQLITE_ROW) {
		rep_index_gap_note(&r->gap, r->nf, sqlite3_column_int64(q, 5));
		struct an_frame *f = base_array_push(&r->f, &r->nf, &r->fcap, sizeof(*f));
		if (!f) {
			rc = -1;
			break;
		}
		f->kind = an_frame_kind_parse((const char *)sqlite3_column_text(q, 0));
		f->pc = (uint64_t)sqlite3_column_int64(q, 1);
		f->function = column_text(q, 2);
		f->module = column_text(q, 3);
		f->has_module_offset = sqlite3_column_type(q, 4) != SQLITE_NULL;
		f->module_offset = (uint64_t)sqlite3_column_int64(q, 4);
		f->role = an_frame_role_parse((const char *)sqlite3_column_text(q, 6));
		if (column_missing(q, 2, f->function) || column_missing(q, 3, f->module)) {
			rc = -1;
			break;
		}
	}
	if (rc == 0 && step != SQLITE_DONE)
		rc = -1;
	sqlite3_reset(q);
	return rc;
}

/* Sign one core and write its signature when it changed. */
static int resign_core(struct resign *r, const struct resign_core *c, rep_sign_fn *sign, void *ctx,
		       size_t *changed)
{
	char *sig = NULL, *hash = NULL;
	int rc = -1;
	if (load_frames(r, c->id) != 0)
		return -1;
	const struct rep_stored_crash crash = {
		.id = c->id, .frames = r->f, .nframes = r->nf, .collapsed_at = r->gap.at,
		.signals = {
			.has_signal = c->has_signal, .signo = c->signo, .signal_name = c->signal_name,
			.caught_signo = c->caught_signo, .caught_signal_name = c->caught_signal_name,
			.go_crash = c->go_crash, .go_signo = c->go_signo,
			.go_signal_name = c->go_signal_name,
		},
	};
	if (sign(ctx, &crash, &sig, &hash) != 0)
		goto out;
	if (c->hash && strcmp(c->hash, hash) == 0) {
		rc = 0;
		goto out;
	}
	sqlite3_bind_text(r->update, 1, sig, -1, SQLITE_STATIC);
	sqlite3_bind_text(r->update, 2, hash, -1, SQLITE_STATIC);
	sqlite3_bind_int64(r->update, 3, c->id);
	rc = sqlite3_step(r->update) == SQLITE_DONE ? 0 : -1;
	sqlite3_reset(r->update);
	sqlite3_clear_bindings(r->update);
	if (rc == 0)
		(*changed)++;
out:
	free(sig);
	free(hash);
	return rc;
}

static size_t count_of(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *q = NULL;
	size_t n = 0;
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
		n = (size_t)sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return n;
}

/* Buckets before (the temporary copy of the old hashes) and after. */
static void count_buckets(sqlite3 *db, struct rep_resign_result *out)
{
	out->buckets_before = count_of(db, "SELECT count(DISTINCT signature_hash) FROM resign_old");
	out->buckets_after = count_of(db, "SELECT count(DISTINCT signature_hash) FROM cores");
	out->merged = count_of(db, "SELECT count(*) FROM (SELECT 1 FROM cores c"
				   " JOIN resign_old o ON o.id = c.id GROUP BY c.signature_hash"
				   " HAVING count(DISTINCT o.signature_hash) > 1)");
	out->split = count_of(db, "SELECT count(*) FROM (SELECT 1 FROM cores c"
				  " JOIN resign_old o ON o.id = c.id GROUP BY o.signature_hash"
				  " HAVING count(DISTINCT c.signature_hash) > 1)");
}

/* ---- Frames symbolized again ---------------------------------------- */

/* A modules row of a module whose debug info is found now. */
struct module_row {
	int64_t core, idx;
	size_t found;               /* index into the found modules */
	uint64_t start, end;
};

struct resym {
	struct rep_found_modules found;
	struct module_row *rows;
	size_t nrows, rcap;
};

size_t rep_found_module(struct rep_found_modules *m, const struct rep_resign_fns *fns,
			const char *build_id, const char *path)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->v[i].build_id, build_id) == 0 && strcmp(m->v[i].path, path) == 0)
			return i;
	struct rep_found *f = base_array_push(&m->v, &m->n, &m->cap, sizeof(*f));
	if (!f)
		return SIZE_MAX;
	f->build_id = strdup(build_id);
	f->path = strdup(path);
	if (!f->build_id || !f->path) {
		free(f->build_id);
		free(f->path);
		m->n--;
		return SIZE_MAX;
	}
	f->debuginfo = fns->debuginfo(fns->ctx, f->build_id, f->path);
	return m->n - 1;
}

size_t rep_found_count(const struct rep_found_modules *m)
{
	size_t n = 0;
	for (size_t i = 0; i < m->n; i++)
		n += m->v[i].debuginfo != NULL;
	return n;
}

void rep_found_modules_free(struct rep_found_modules *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].build_id);
		free(m->v[i].path);
		free(m->v[i].debuginfo);
	}
	free(m->v);
}

/* The modules rows without debug info whose debug info is found now, by
 * core (read whole before anything is written). */
static int load_module_rows(struct resign *r, const struct rep_resign_fns *fns, struct resym *m)
{
	sqlite3_stmt *q = NULL;
	int step = SQLITE_ERROR;
	if (sqlite3_prepare_v2(r->db, "SELECT core_id, idx, build_id, path, start_addr, end_addr"
				      " FROM modules WHERE debuginfo IS NULL AND build_id IS NOT NULL"
				      " AND path IS NOT NULL ORDER BY core_id, idx", -1, &q,
			       NULL) != SQLITE_OK)
		return -1;
	while ((step = sqlite3_step(q)) == SQLITE_ROW) {
		size_t k = rep_found_module(&m->found, fns, (const char *)sqlite3_column_text(q, 2),
					    (const char *)sqlite3_column_text(q, 3));
		if (k == SIZE_MAX)
			break;
		if (!m->found.v[k].debuginfo)
			continue;
		struct module_row *row = base_array_push(&m->rows, &m->nrows, &m->rcap, sizeof(*row));
		if (!row)
			break;
		*row = (struct module_row){sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1), k,
					   (uint64_t)sqlite3_column_int64(q, 4),
					   (uint64_t)sqlite3_column_int64(q, 5)};
	}
	sqlite3_finalize(q);
	return step == SQLITE_DONE ? 0 : -1;
}

/* Symbolize again the frames of every owner of core CORE in table T that
 * lie in MODS; *FRAMES counts them. */
static int resymbolize_table(struct resign *r, const struct rep_resign_fns *fns,
			     enum rep_frames_table t, int64_t core,
			     const struct rep_stored_module *mods, size_t nmods, size_t *frames)
{
	int64_t *owners = NULL;
	size_t nowners = 0;
	int rc = rep_sqlite_frame_owners(r->st, t, core, &owners, &nowners);
	for (size_t i = 0; rc == 0 && i < nowners; i++) {
		struct an_frame *f = NULL;
		size_t n = 0;
		struct an_index_gap gap;
		int k = -1;
		if (rep_sqlite_read_frames(r->st, t, core, owners[i], &f, &n, &gap) == 0)
			k = fns->resymbolize(fns->ctx, mods, nmods, &f, &n, &gap);
		if (k > 0 && rep_sqlite_replace_frames(r->st, t, core, owners[i], f, n, &gap) != 0)
			k = -1;
		for (size_t j = 0; j < n; j++)
			an_frame_deinit(&f[j]);
		free(f);
		if (k < 0)
			rc = -1;
		else
			*frames += (size_t)k;
	}
	free(owners);
	return rc;
}

/* Set the debuginfo of modules rows ROWS[0 .. N). */
static int set_debuginfo(struct resign *r, const struct resym *m, const struct module_row *rows,
			 size_t n)
{
	sqlite3_stmt *q = NULL;
	int rc = sqlite3_prepare_v2(r->db, "UPDATE modules SET debuginfo = ?3"
					   " WHERE core_id = ?1 AND idx = ?2", -1, &q, NULL) == SQLITE_OK
		 ? 0 : -1;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		sqlite3_bind_int64(q, 1, rows[i].core);
		sqlite3_bind_int64(q, 2, rows[i].idx);
		sqlite3_bind_text(q, 3, m->found.v[rows[i].found].debuginfo, -1, SQLITE_STATIC);
		rc = sqlite3_step(q) == SQLITE_DONE ? 0 : -1;
		sqlite3_reset(q);
	}
	sqlite3_finalize(q);
	return rc;
}

/* Set core CORE's nframes to the rows it has. */
static int count_frames(struct resign *r, int64_t core)
{
	sqlite3_stmt *q = NULL;
	int rc = sqlite3_prepare_v2(r->db, "UPDATE cores SET nframes = (SELECT count(*) FROM frames"
					   " WHERE core_id = ?1) WHERE id = ?1", -1, &q, NULL) == SQLITE_OK &&
		 sqlite3_bind_int64(q, 1, core) == SQLITE_OK && sqlite3_step(q) == SQLITE_DONE ? 0 : -1;
	sqlite3_finalize(q);
	return rc;
}

/* Core ROWS[0].core's modules ROWS[0 .. N) have debug info now: their
 * frames symbolized again, their debuginfo and the core's frame count set. */
static int resymbolize_core(struct resign *r, const struct rep_resign_fns *fns,
			    const struct resym *m, const struct module_row *rows, size_t n,
			    struct rep_resign_result *out)
{
	struct rep_stored_module *mods = calloc(n, sizeof(*mods));
	size_t frames = 0;
	int rc = mods ? 0 : -1;
	for (size_t i = 0; mods && i < n; i++) {
		const struct rep_found *f = &m->found.v[rows[i].found];
		mods[i] = (struct rep_stored_module){f->path, f->build_id, rows[i].start, rows[i].end};
	}
	for (int t = 0; rc == 0 && t < REP_FRAMES_TABLES; t++)
		rc = resymbolize_table(r, fns, (enum rep_frames_table)t, rows[0].core, mods, n, &frames);
	if (rc == 0)
		rc = set_debuginfo(r, m, rows, n);
	if (rc == 0 && frames > 0)
		rc = count_frames(r, rows[0].core);
	if (rc == 0 && frames > 0)
		rc = rep_sqlite_retally_terms(r->st, rows[0].core);
	free(mods);
	out->frames_symbolized += frames;
	out->cores_symbolized += frames > 0;
	return rc;
}

/* Symbolize again, core by core, the frames of the modules whose debug
 * info is found now. */
static int resymbolize(struct resign *r, const struct rep_resign_fns *fns,
		       struct rep_resign_result *out)
{
	struct resym m = {0};
	int rc = load_module_rows(r, fns, &m);
	for (size_t i = 0; rc == 0 && i < m.nrows;) {
		size_t j = i + 1;
		while (j < m.nrows && m.rows[j].core == m.rows[i].core)
			j++;
		rc = resymbolize_core(r, fns, &m, &m.rows[i], j - i, out);
		i = j;
	}
	out->modules_found = rep_found_count(&m.found);
	rep_found_modules_free(&m.found);
	free(m.rows);
	return rc;
}

/* The crashing thread's frames, or, when it was running a bthread that has
 * frames, that bthread's (as an_signature_compute() chooses them). */
static const char frames_sql[] =
	"WITH t AS (SELECT t.idx, t.tid FROM threads t"
	"   WHERE t.core_id = ?1 ORDER BY t.crashing DESC,"
	"   t.tid = (SELECT crashing_tid FROM cores WHERE id = ?1) DESC, t.idx LIMIT 1),"
	" k AS (SELECT k.idx FROM tasks k, t WHERE k.core_id = ?1 AND k.state = 'running'"
	"   AND k.tid = t.tid AND k.nframes > 0 ORDER BY k.idx LIMIT 1)"
	" SELECT kind, pc, function, module, module_offset, idx, role FROM ("
	"   SELECT f.kind, f.pc, f.function, f.module, f.module_offset, f.idx, f.role"
	"   FROM task_frames f WHERE f.core_id = ?1 AND f.task_idx = (SELECT idx FROM k)"
	"   UNION ALL"
	"   SELECT f.kind, f.pc, f.function, f.module, f.module_offset, f.idx, f.role FROM frames f"
	"   WHERE f.core_id = ?1 AND f.thread_idx = (SELECT idx FROM t)"
	"     AND NOT EXISTS (SELECT 1 FROM k))"
	" ORDER BY idx";

static int run(struct resign *r, const struct rep_resign_fns *fns, struct rep_resign_result *out)
{
	if (sqlite3_exec(r->db, "CREATE TEMP TABLE resign_old AS SELECT id, signature_hash"
				" FROM cores", NULL, NULL, NULL) != SQLITE_OK ||
	    (fns->debuginfo && resymbolize(r, fns, out) != 0) ||
	    load_cores(r) != 0 ||
	    sqlite3_prepare_v2(r->db, frames_sql, -1, &r->frames, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(r->db, "UPDATE cores SET signature = ?1, signature_hash = ?2"
				      " WHERE id = ?3", -1, &r->update, NULL) != SQLITE_OK)
		return -1;
	for (size_t i = 0; i < r->ncores; i++)
		if (resign_core(r, &r->cores[i], fns->sign, fns->ctx, &out->changed) != 0)
			return -1;
	out->cores = r->ncores;
	count_buckets(r->db, out);
	return 0;
}

int rep_sqlite_resign(struct rep_sqlite *st, const struct rep_resign_fns *fns,
		      struct rep_resign_result *out, char *why, size_t whylen)
{
	struct resign r = {.st = st, .db = rep_sqlite_db(st)};
	int rc = -1;
	memset(out, 0, sizeof(*out));
	if (rep_sqlite_exec(st, "BEGIN IMMEDIATE") != SQLITE_OK) {
		snprintf(why, whylen, "cannot lock the database: %s", sqlite3_errmsg(r.db));
		return -1;
	}
	if (run(&r, fns, out) != 0) {
		snprintf(why, whylen, "recomputing signatures: %s", sqlite3_errmsg(r.db));
		goto out;
	}
	sqlite3_finalize(r.frames);
	sqlite3_finalize(r.update);
	r.frames = r.update = NULL;
	if (sqlite3_exec(r.db, "DROP TABLE temp.resign_old", NULL, NULL, NULL) != SQLITE_OK ||
	    rep_sqlite_exec(st, "COMMIT") != SQLITE_OK) {
		snprintf(why, whylen, "committing the signatures: %s", sqlite3_errmsg(r.db));
		goto out;
	}
	rc = 0;
out:
	if (rc != 0)
		sqlite3_exec(r.db, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_finalize(r.frames);
	sqlite3_finalize(r.update);
	frames_clear(&r);
	free(r.f);
	for (size_t i = 0; i < r.ncores; i++) {
		free(r.cores[i].signal_name);
		free(r.cores[i].hash);
		free(r.cores[i].caught_signal_name);
		free(r.cores[i].go_crash);
		free(r.cores[i].go_signal_name);
	}
	free(r.cores);
	return rc;
}

int rep_store_resign(struct rep_store *st, const struct rep_resign_fns *fns,
		     struct rep_resign_result *out, char *why, size_t whylen)
{
	const struct rep_store_ops *ops;
	void *backend = rep_store_backend(st, &ops);
	if (ops == &rep_sqlite_ops)
		return rep_sqlite_resign(backend, fns, out, why, whylen);
	return rep_ch_store_resign(backend, fns, out, why, whylen);
}
