#include "store_resign.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../corefile/array.h"
#include "store_clickhouse.h"
#include "store_internal.h"

/* A core's row as the signing needs it. */
struct resign_core {
	int64_t id;
	bool has_signal;
	int signo;
	char *signal_name;
	char *hash;                 /* the stored signature_hash, or NULL */
};

struct resign {
	sqlite3 *db;
	sqlite3_stmt *frames, *update;
	struct resign_core *cores;
	size_t ncores, cap;
	struct an_frame *f;         /* one core's frames at a time */
	size_t nf, fcap;
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

/* Every core's id, signal and hash, before anything is rewritten. */
static int load_cores(struct resign *r)
{
	sqlite3_stmt *q = NULL;
	int rc = -1, step;
	if (sqlite3_prepare_v2(r->db, "SELECT id, signal, signal_name, signature_hash FROM cores"
				      " ORDER BY id", -1, &q, NULL) != SQLITE_OK)
		return -1;
	while ((step = sqlite3_step(q)) == SQLITE_ROW) {
		struct resign_core *c = core_array_push(&r->cores, &r->ncores, &r->cap, sizeof(*c));
		if (!c)
			goto out;
		c->id = sqlite3_column_int64(q, 0);
		c->has_signal = sqlite3_column_type(q, 1) != SQLITE_NULL;
		c->signo = sqlite3_column_int(q, 1);
		c->signal_name = column_text(q, 2);
		c->hash = column_text(q, 3);
		if (column_missing(q, 2, c->signal_name) || column_missing(q, 3, c->hash))
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
	sqlite3_bind_int64(q, 1, id);
	while ((step = sqlite3_step(q)) == SQLITE_ROW) {
		struct an_frame *f = core_array_push(&r->f, &r->nf, &r->fcap, sizeof(*f));
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
	struct rep_stored_crash crash = {c->id, c->has_signal, c->signo, c->signal_name, r->f, r->nf};
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

/* The crashing thread's frames, or, when it was running a bthread that has
 * frames, that bthread's (as an_signature_compute() chooses them). */
static const char frames_sql[] =
	"WITH t AS (SELECT t.idx, t.tid FROM threads t"
	"   WHERE t.core_id = ?1 ORDER BY t.crashing DESC,"
	"   t.tid = (SELECT crashing_tid FROM cores WHERE id = ?1) DESC, t.idx LIMIT 1),"
	" k AS (SELECT k.idx FROM tasks k, t WHERE k.core_id = ?1 AND k.state = 'running'"
	"   AND k.tid = t.tid AND k.nframes > 0 ORDER BY k.idx LIMIT 1)"
	" SELECT kind, pc, function, module, module_offset FROM ("
	"   SELECT f.kind, f.pc, f.function, f.module, f.module_offset, f.idx FROM task_frames f"
	"   WHERE f.core_id = ?1 AND f.task_idx = (SELECT idx FROM k)"
	"   UNION ALL"
	"   SELECT f.kind, f.pc, f.function, f.module, f.module_offset, f.idx FROM frames f"
	"   WHERE f.core_id = ?1 AND f.thread_idx = (SELECT idx FROM t)"
	"     AND NOT EXISTS (SELECT 1 FROM k))"
	" ORDER BY idx";

static int run(struct resign *r, rep_sign_fn *sign, void *ctx,
	       struct rep_resign_result *out)
{
	if (sqlite3_exec(r->db, "CREATE TEMP TABLE resign_old AS SELECT id, signature_hash"
				" FROM cores", NULL, NULL, NULL) != SQLITE_OK ||
	    load_cores(r) != 0 ||
	    sqlite3_prepare_v2(r->db, frames_sql, -1, &r->frames, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(r->db, "UPDATE cores SET signature = ?1, signature_hash = ?2"
				      " WHERE id = ?3", -1, &r->update, NULL) != SQLITE_OK)
		return -1;
	for (size_t i = 0; i < r->ncores; i++)
		if (resign_core(r, &r->cores[i], sign, ctx, &out->changed) != 0)
			return -1;
	out->cores = r->ncores;
	count_buckets(r->db, out);
	return 0;
}

int rep_sqlite_resign(struct rep_sqlite *st, rep_sign_fn *sign, void *ctx,
		     struct rep_resign_result *out, char *why, size_t whylen)
{
	struct resign r = {.db = rep_sqlite_db(st)};
	int rc = -1;
	memset(out, 0, sizeof(*out));
	if (rep_sqlite_exec(st, "BEGIN IMMEDIATE") != SQLITE_OK) {
		snprintf(why, whylen, "cannot lock the database: %s", sqlite3_errmsg(r.db));
		return -1;
	}
	if (run(&r, sign, ctx, out) != 0) {
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
	}
	free(r.cores);
	return rc;
}

int rep_store_resign(struct rep_store *st, rep_sign_fn *sign, void *ctx,
		     struct rep_resign_result *out, char *why, size_t whylen)
{
	const struct rep_store_ops *ops;
	void *backend = rep_store_backend(st, &ops);
	if (ops == &rep_sqlite_ops)
		return rep_sqlite_resign(backend, sign, ctx, out, why, whylen);
	return rep_ch_store_resign(backend, sign, ctx, out, why, whylen);
}
