/* Unit tests for reports/store: writing a hand-built analysis into a fresh
 * database. */
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../analyzer/signature.h"
#include "../../reports/store_resign.h"
#include "../../reports/store_sqlite.h"
#include "../../reports/store.h"

#define UNIT_GROUP "store"
#include "unit.h"
#include "unit_sqlite.h"

static struct analysis *sample_analysis(void)
{
	struct analysis *an = an_analysis_create();
	an->core_path = strdup("/tmp/core.1");
	an->core_fingerprint = strdup("00ff");
	an->core_file_size = 4096;
	an->core_size = 8192;
	an->executable = strdup("/usr/bin/prog");
	an->has_pid = true;
	an->pid = 1234;
	an->has_signal = true;
	an->signo = SIGSEGV;
	an->has_code = true;
	an->code = 1;
	an->has_fault_address = true;
	an->fault_address = 0xffffffffff600000ULL;   /* above INT64_MAX */
	an->crashing_tid = 1234;
	an->nthreads = 2;
	an->threads = calloc(2, sizeof(*an->threads));
	for (size_t t = 0; t < 2; t++) {
		an->threads[t].tid = 1234 + (int)t;
		an->threads[t].crashing = t == 0;
		an->threads[t].nframes = 3;
		an->threads[t].frames = calloc(3, sizeof(struct an_frame));
		for (size_t i = 0; i < 3; i++) {
			struct an_frame *f = &an->threads[t].frames[i];
			f->pc = 0x401000 + 16 * i;
			f->function = strdup(i == 0 ? "crash_here" : i == 1 ? "middle" : "main");
			f->kind = i == 1 ? AN_FRAME_ASYNC : AN_FRAME_NATIVE;
			f->line = (int)i + 10;
			f->file = strdup("prog.c");
		}
	}
	an->threads[1].async_root = 0x7ffd0000;
	an->nrecorders = 1;
	an->recorders = calloc(1, sizeof(*an->recorders));
	an->recorders[0].name = strdup("main");
	an->recorders[0].nevents = 12;
	an->recorders[0].events = calloc(12, sizeof(struct an_event));
	for (size_t i = 0; i < 12; i++) {
		an->recorders[0].events[i].order = i;
		an->recorders[0].events[i].nargs = 2;
		an->recorders[0].events[i].args[1] = i;
		an->recorders[0].events[i].message = strdup("event");
	}
	an->warnings = calloc(1, sizeof(*an->warnings));
	an->warnings[an->nwarnings++] = strdup("a warning");
	an_signature_compute(an, NULL);
	return an;
}

static void test_store(const char *dir)
{
	char db[512], why[512];
	struct rep_store *st = NULL;
	snprintf(db, sizeof(db), "%s/crashes.db", dir);
	CHECK("open creates the database", rep_store_open(db, &st, why, sizeof(why)) == 0);
	if (!st) {
		printf("    %s\n", why);
		return;
	}
	struct analysis *an = sample_analysis();
	CHECK("write stores", rep_store_write(st, an, why, sizeof(why)) == REP_WRITE_STORED);
	CHECK("second write is a duplicate",
	       rep_store_write(st, an, why, sizeof(why)) == REP_WRITE_DUPLICATE);
	CHECK("has", rep_store_has(st, "00ff") == 1 && rep_store_has(st, "00fe") == 0);
	struct rep_core_id bad = {"/tmp/core.2", "00fe", 10};
	CHECK("record error", rep_store_record_error(st, &bad, "not a core", why, sizeof(why)) == 0 &&
			       rep_store_record_error(st, &bad, "still not", why, sizeof(why)) == 0);
	rep_store_close(st);
	an_analysis_destroy(an);

	sqlite3 *h;
	sqlite3_open(db, &h);
	CHECK("one core", unit_sql_long(h, "SELECT count(*) FROM cores") == 1);
	CHECK("six frames", unit_sql_long(h, "SELECT count(*) FROM frames") == 6);
	CHECK("one async frame per thread",
	       unit_sql_long(h, "SELECT count(*) FROM frames WHERE kind = 'async'") == 2);
	CHECK("crash_stacks shows the crashing thread",
	       unit_sql_long(h, "SELECT count(*) FROM crash_stacks WHERE function IN ('crash_here','middle','main')") == 3);
	CHECK("last_events keeps ten", unit_sql_long(h, "SELECT count(*) FROM last_events") == 10);
	CHECK("last_events newest first",
	       unit_sql_long(h, "SELECT event_order FROM last_events WHERE recency = 1") == 11);
	CHECK("top_signatures", unit_sql_long(h, "SELECT cores FROM top_signatures") == 1);
	CHECK("high address round-trips",
	       unit_sql_long(h, "SELECT printf('%x', fault_address) = 'ffffffffff600000' FROM cores") == 1);
	CHECK("error attempts", unit_sql_long(h, "SELECT attempts FROM ingest_errors") == 2);
	CHECK("async root", unit_sql_long(h, "SELECT count(*) FROM async_roots") == 1);
	CHECK("schema version", unit_sql_long(h, "PRAGMA user_version") == REP_SCHEMA_VERSION);
	CHECK("wal", unit_sql_long(h, "SELECT journal_mode = 'wal' FROM pragma_journal_mode") == 1);
	sqlite3_exec(h, "PRAGMA user_version = 99", NULL, NULL, NULL);
	sqlite3_close(h);
	CHECK("newer schema refused", rep_store_open(db, &st, why, sizeof(why)) != 0 &&
				       strstr(why, "newer") != NULL);
}

/* A core lost before it was read is recorded under its path; known later
 * by its fingerprint, or stored, it is one core, never listed twice. */
static void test_errors_by_path(const char *dir)
{
	char db[512], why[512];
	struct rep_store *st = NULL;
	snprintf(db, sizeof(db), "%s/errors.db", dir);
	if (!CHECK("errors: open", rep_store_open(db, &st, why, sizeof(why)) == 0))
		return;
	struct analysis *an = sample_analysis();
	struct rep_core_id by_path = {an->core_path, NULL, 0}, by_fp = {an->core_path, "00ff", 4096};
	sqlite3 *h;
	sqlite3_open(db, &h);
	CHECK("errors: recorded by path",
	      rep_store_record_error(st, &by_path, "timed out after 300 s", why, sizeof(why)) == 0 &&
	      unit_sql_long(h, "SELECT count(*) FROM ingest_errors WHERE ident = 'path:/tmp/core.1'") == 1);
	CHECK("errors: then by fingerprint, the path's row goes",
	      rep_store_record_error(st, &by_fp, "killed by SIGSEGV while analysing", why,
				     sizeof(why)) == 0 &&
	      unit_sql_long(h, "SELECT count(*) FROM ingest_errors") == 1);
	rep_store_record_error(st, &by_path, "timed out after 300 s", why, sizeof(why));
	CHECK("errors: stored, no row is left, by fingerprint or path",
	      rep_store_write(st, an, why, sizeof(why)) == REP_WRITE_STORED &&
	      unit_sql_long(h, "SELECT count(*) FROM ingest_errors") == 0);
	sqlite3_close(h);
	rep_store_close(st);
	an_analysis_destroy(an);
}

/* Text from a core that is not UTF-8 is stored as valid UTF-8. */
static void test_invalid_utf8(const char *dir)
{
	char db[512], why[512];
	struct rep_store *st = NULL;
	snprintf(db, sizeof(db), "%s/utf8.db", dir);
	if (!CHECK("utf8: open", rep_store_open(db, &st, why, sizeof(why)) == 0))
		return;
	struct analysis *an = sample_analysis();
	free(an->executable);
	an->executable = strdup("/usr/bin/pr\xffog");
	free(an->threads[0].frames[0].function);
	an->threads[0].frames[0].function = strdup("f\xc3");
	CHECK("utf8: stored", rep_store_write(st, an, why, sizeof(why)) == REP_WRITE_STORED);
	sqlite3 *h;
	sqlite3_open(db, &h);
	CHECK("utf8: executable with U+FFFD",
	      unit_sql_long(h, "SELECT executable = '/usr/bin/pr' || char(65533) || 'og' FROM cores") == 1);
	CHECK("utf8: function with U+FFFD",
	      unit_sql_long(h, "SELECT count(*) FROM frames WHERE function = 'f' || char(65533)") == 1);
	sqlite3_close(h);
	rep_store_close(st);
	an_analysis_destroy(an);
}

/* F: a frame of kind KIND at offset 0x50 of prog. */
static void prog_frame(struct an_frame *f, enum an_frame_kind kind)
{
	f->kind = kind;
	f->module = strdup("/usr/bin/prog");
	f->module_offset = 0x50;
	f->has_module_offset = true;
	f->pc = 0x1050;
}

/* A core of a stripped prog (build-id b1) and a library (b2): thread 0
 * has frames in both, thread 1 one in the library (with arguments). */
static struct analysis *stripped_analysis(void)
{
	static const struct {
		size_t thread;
		const char *module;
		uint64_t offset;
	} frames[] = {{0, "/usr/bin/prog", 0x10}, {0, "/lib/libx.so", 0x20}, {0, "/usr/bin/prog", 0x30},
		      {1, "/lib/libx.so", 0x40}};
	struct analysis *an = an_analysis_create();
	an->core_path = strdup("/tmp/core.stripped");
	an->core_fingerprint = strdup("00aa");
	an->has_signal = true;
	an->signo = SIGSEGV;
	an->signal_name = "SIGSEGV";
	an->nmodules = 2;
	an->modules = calloc(2, sizeof(*an->modules));
	an->modules[0] = (struct an_module){strdup("/usr/bin/prog"), 0x1000, 0x2000, strdup("b1"), NULL, false};
	an->modules[1] = (struct an_module){strdup("/lib/libx.so"), 0x3000, 0x4000, strdup("b2"), NULL, false};
	an->nthreads = 2;
	an->threads = calloc(2, sizeof(*an->threads));
	an->threads[0].crashing = true;
	for (size_t i = 0; i < sizeof(frames) / sizeof(frames[0]); i++) {
		struct an_thread *t = &an->threads[frames[i].thread];
		t->frames = realloc(t->frames, (t->nframes + 1) * sizeof(*t->frames));
		struct an_frame *f = memset(&t->frames[t->nframes++], 0, sizeof(*t->frames));
		f->module = strdup(frames[i].module);
		f->module_offset = frames[i].offset;
		f->has_module_offset = true;
		f->pc = frames[i].offset + (frames[i].module[1] == 'u' ? 0x1000 : 0x3000);
		f->activation = t->nframes == 1;
		f->cfa = 0x7ffd0000 + 16 * i;
	}
	/* A suspended chain and a task, each with one frame in prog. */
	an->nsuspended = an->ntasks = 1;
	an->suspended = calloc(1, sizeof(*an->suspended));
	an->tasks = calloc(1, sizeof(*an->tasks));
	an->tasks[0].runtime = "bthread";
	an->tasks[0].state = AN_TASK_SUSPENDED;
	an->suspended[0].frames = calloc(1, sizeof(struct an_frame));
	an->tasks[0].frames = calloc(1, sizeof(struct an_frame));
	an->suspended[0].nframes = an->tasks[0].nframes = 1;
	prog_frame(an->suspended[0].frames, AN_FRAME_ASYNC);
	prog_frame(an->tasks[0].frames, AN_FRAME_NATIVE);
	struct an_frame *lib = &an->threads[1].frames[0];
	lib->has_args = true;
	lib->nargs = 1;
	lib->args = an_args_pack(&(struct an_arg){"n", "int", "7", NULL, false}, 1);
	an_signature_compute(an, NULL);
	return an;
}

static char *found_prog(void *ctx, const char *build_id, const char *path)
{
	(void)path;
	++*(int *)ctx;
	return strcmp(build_id, "b1") == 0 ? strdup("/debug/prog.debug") : NULL;
}

/* A stand-in for the analyzer's symbolization: each frame in the one
 * module found becomes an inline level and its function, and a run left
 * out at GAP (of frames like those around it) twice as many frames. */
static int two_levels(void *ctx, const struct rep_stored_module *mods, size_t nmods,
		      struct an_frame **frames, size_t *n, struct an_index_gap *gap)
{
	(void)ctx;
	struct an_frame *out = calloc(2 * *n, sizeof(*out));
	size_t k = 0;
	int count = 0;
	for (size_t i = 0; i < *n; i++) {
		struct an_frame *f = &(*frames)[i];
		if (gap->at && i == gap->at)
			*gap = (struct an_index_gap){k, 2 * gap->left_out};
		if (nmods != 1 || strcmp(f->module, mods[0].path) != 0) {
			out[k++] = *f;
			continue;
		}
		for (int level = 1; level >= 0; level--) {
			struct an_frame *g = &out[k++];
			*g = *f;
			g->module = strdup(f->module);
			g->function = strdup(level ? "inner" : "outer");
			g->inlined = level;
			g->inline_depth = level;
			g->line = 100 + level;
		}
		an_frame_deinit(f);
		count++;
	}
	free(*frames);
	*frames = out;
	*n = k;
	return count;
}

static int sign(void *ctx, const struct rep_stored_crash *c, char **signature, char **hash)
{
	const struct an_signature_input in = {.has_signal = c->has_signal, .signo = c->signo,
					      .signal_name = c->signal_name, .frames = c->frames,
					      .nframes = c->nframes};
	(void)ctx;
	return an_signature_of(&in, NULL, signature, hash);
}

/* A store DIR/NAME holding AN (then freed), or NULL; DB gets its path. */
static struct rep_store *store_of(const char *dir, const char *name, struct analysis *an, char *db,
				  size_t len)
{
	char why[512];
	struct rep_store *st = NULL;
	snprintf(db, len, "%s/%s", dir, name);
	bool ok = rep_store_open(db, &st, why, sizeof(why)) == 0 &&
		  rep_store_write(st, an, why, sizeof(why)) == REP_WRITE_STORED;
	an_analysis_destroy(an);
	if (!ok) {
		rep_store_close(st);
		return NULL;
	}
	return st;
}

/* The store's side of symbolizing stored frames again: rows rewritten
 * and renumbered, counts and debuginfo set, the rest kept, once. */
static void test_resymbolize(const char *dir)
{
	char db[512], why[512];
	struct rep_resign_result r;
	int asked = 0;
	const struct rep_resign_fns fns = {sign, found_prog, two_levels, &asked};
	struct rep_store *st = store_of(dir, "stripped.db", stripped_analysis(), db, sizeof(db));
	CHECK("resymbolize: stored", st != NULL);
	if (!st)
		return;
	CHECK("resymbolize: resign", rep_store_resign(st, &fns, &r, why, sizeof(why)) == 0);
	CHECK("resymbolize: both modules asked about, one found", asked == 2 && r.modules_found == 1);
	CHECK("resymbolize: 4 frames of 1 core", r.frames_symbolized == 4 && r.cores_symbolized == 1);
	CHECK("resymbolize: the signature changed", r.changed == 1);
	sqlite3 *h;
	sqlite3_open(db, &h);
	CHECK("resymbolize: thread 0 has 5 frames, numbered 0..4, its count says so",
	       unit_sql_long(h, "SELECT count(*) || max(idx) FROM frames WHERE thread_idx = 0") == 54 &&
	       unit_sql_long(h, "SELECT nframes FROM threads WHERE idx = 0") == 5);
	CHECK("resymbolize: in order, offsets, CFAs and activations kept",
	       unit_sql_long(h, "SELECT group_concat(coalesce(function, '-') || inlined || module_offset"
				" || (cfa - 2147287040) || activation, ' ') = 'inner11601 outer01601 -032160"
				" inner148320 outer048320' FROM (SELECT * FROM frames WHERE thread_idx = 0"
				" ORDER BY idx)") == 1);
	CHECK("resymbolize: the other thread kept, its arguments too",
	       unit_sql_long(h, "SELECT count(*) FROM frames WHERE thread_idx = 1 AND function IS NULL"
				" AND args = '[{\"name\":\"n\",\"type\":\"int\",\"value\":\"7\","
				"\"entry_value\":null,\"entry_equal\":false}]'") == 1);
	CHECK("resymbolize: the core counts 6 frames",
	       unit_sql_long(h, "SELECT nframes FROM cores") == 6);
	CHECK("resymbolize: the task's and the chain's frames too, with their counts",
	       unit_sql_long(h, "SELECT count(*) FROM task_frames WHERE function IS NOT NULL") == 2 &&
	       unit_sql_long(h, "SELECT nframes FROM tasks") == 2 &&
	       unit_sql_long(h, "SELECT count(*) FROM suspended_frames WHERE function IS NOT NULL"
				" AND kind = 'async'") == 2 &&
	       unit_sql_long(h, "SELECT nframes FROM suspended") == 2);
	CHECK("resymbolize: the module found names its debug file, the other none",
	       unit_sql_long(h, "SELECT group_concat(coalesce(debuginfo, '-'), ' ') = '/debug/prog.debug -'"
				" FROM modules ORDER BY idx") == 1);
	CHECK("resymbolize: the signature names the functions",
	       unit_sql_long(h, "SELECT signature = 'SIGSEGV: inner < outer < libx.so@0x20 < inner"
				" < outer' FROM cores") == 1);
	asked = 0;
	CHECK("resymbolize: a second resign asks only about the module still without",
	       rep_store_resign(st, &fns, &r, why, sizeof(why)) == 0 && asked == 1 &&
	       r.modules_found == 0 && r.frames_symbolized == 0 && r.changed == 0 &&
	       unit_sql_long(h, "SELECT count(*) FROM frames") == 6 &&
	       unit_sql_long(h, "SELECT count(*) FROM task_frames") == 2);
	sqlite3_close(h);
	rep_store_close(st);
}

/* A stored thread whose indexes jump over a recursion's run keeps the
 * jump where the analyzer's symbolization moves it. */
static void test_resymbolize_gap(const char *dir)
{
	char db[512], why[512];
	struct rep_resign_result r;
	int asked = 0;
	const struct rep_resign_fns fns = {sign, found_prog, two_levels, &asked};
	struct analysis *an = stripped_analysis();
	struct an_recursion *rec = calloc(1, sizeof(*rec));
	*rec = (struct an_recursion){.first = 2, .last = 7, .repeats = 3};
	an->threads[0].recursion = rec;
	struct rep_store *st = store_of(dir, "gap.db", an, db, sizeof(db));
	CHECK("gap: stored, past the run at its true index", st != NULL);
	if (!st)
		return;
	sqlite3 *h;
	sqlite3_open(db, &h);
	CHECK("gap: stored indexes 0 1 8",
	      unit_sql_long(h, "SELECT group_concat(idx, ' ') = '0 1 8' FROM (SELECT idx FROM frames"
			       " WHERE thread_idx = 0 ORDER BY idx)") == 1);
	CHECK("gap: resign", rep_store_resign(st, &fns, &r, why, sizeof(why)) == 0);
	CHECK("gap: the jump moved with the frames, the run twice as long",
	      unit_sql_long(h, "SELECT group_concat(idx || coalesce(function, '-'), ' ') = '0inner 1outer"
			       " 2- 15inner 16outer' FROM (SELECT * FROM frames WHERE thread_idx = 0"
			       " ORDER BY idx)") == 1 &&
	      unit_sql_long(h, "SELECT nframes FROM threads WHERE idx = 0") == 5);
	sqlite3_close(h);
	rep_store_close(st);
}

int main(void)
{
	char dir[] = "/tmp/test_store.XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	test_store(dir);
	test_errors_by_path(dir);
	test_invalid_utf8(dir);
	test_resymbolize(dir);
	test_resymbolize_gap(dir);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK("temporary directory removed", system(cmd) == 0);
	return unit_exit();
}
