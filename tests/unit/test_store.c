/* Unit tests for reports/store: writing a hand-built analysis into a fresh
 * database. */
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../analyzer/signature.h"
#include "../../cli/resign.h"
#include "../../reports/store_internal.h"
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
	CHECK("no handler caught it: the caught columns are NULL, the frames have no role",
	       unit_sql_long(h, "SELECT count(*) FROM cores WHERE coalesce(caught_signal,"
				" caught_signal_name, caught_code, caught_code_name, caught_address,"
				" handled_by, handler_action) IS NULL") == 1 &&
	       unit_sql_long(h, "SELECT count(*) FROM frames WHERE role IS NOT NULL") == 0);
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

/* resign's own signing (cli/resign.c) with the built-in lists. */
static int sign(void *ctx, const struct rep_stored_crash *c, char **signature, char **hash)
{
	const struct an_signature_input in = cli_stored_signature_input(c);
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


/* ---- Crashes a program's own signal handler caught ------------------- */

/* A frame of a stack built by hand: its function and its role. */
struct role_frame {
	const char *function;
	enum an_frame_role role;
};

/* N frames of SPEC, in /usr/bin/prog at offsets 0x100, 0x110, ... */
static struct an_frame *role_frames(const struct role_frame *spec, size_t n)
{
	struct an_frame *f = calloc(n, sizeof(*f));
	for (size_t i = 0; f && i < n; i++) {
		f[i].function = strdup(spec[i].function);
		f[i].role = spec[i].role;
		f[i].module = strdup("/usr/bin/prog");
		f[i].module_offset = 0x100 + 0x10 * i;
		f[i].has_module_offset = true;
		f[i].pc = 0x1000 + f[i].module_offset;
		f[i].activation = i == 0;
	}
	return f;
}

/* A core whose SIGABRT is its handler's abort(): FINGERPRINT, one crashing
 * thread (tid 77) and the SIGSEGV at 0x10 the handler on_fatal_signal
 * caught.  The frames are the caller's to add. */
static struct analysis *handled_core(const char *fingerprint)
{
	struct analysis *an = an_analysis_create();
	an->core_path = strdup(fingerprint);
	an->core_fingerprint = strdup(fingerprint);
	an->has_signal = true;
	an->signo = SIGABRT;
	an->signal_name = "SIGABRT";
	an->has_code = true;
	an->code = -6;
	an->code_name = "SI_TKILL";
	an->crashing_tid = 77;
	an->caught = (struct an_caught){
		.present = true, .signo = SIGSEGV, .signal_name = "SIGSEGV", .has_code = true,
		.code = 1, .code_name = "SEGV_MAPERR", .has_fault_address = true, .fault_address = 0x10,
		.tid = 77, .site = 4, .handler = strdup("on_fatal_signal"), .action = AN_HANDLER_ABORTED,
	};
	an->nthreads = 1;
	an->threads = calloc(1, sizeof(*an->threads));
	an->threads[0].tid = 77;
	an->threads[0].crashing = true;
	return an;
}

/* The handler's frames (abort() inside it), the trampoline, then the
 * frames the fault interrupted: the crash site first. */
static const struct role_frame handled_stack[] = {
	{"raise", AN_FRAME_HANDLER}, {"abort", AN_FRAME_HANDLER},
	{"on_fatal_signal", AN_FRAME_HANDLER}, {"__restore_rt", AN_FRAME_TRAMPOLINE},
	{"parse_header", AN_FRAME_CRASH_SITE}, {"dispatch", AN_FRAME_PLAIN}, {"main", AN_FRAME_PLAIN},
};
#define NHANDLED (sizeof(handled_stack) / sizeof(handled_stack[0]))

/* Caught on the thread's own stack; a suspended bthread with a handler's
 * frame too (task_frames.role). */
static struct analysis *caught_on_thread(void)
{
	struct analysis *an = handled_core("0c01");
	an->threads[0].frames = role_frames(handled_stack, NHANDLED);
	an->threads[0].nframes = NHANDLED;
	an->ntasks = 1;
	an->tasks = calloc(1, sizeof(*an->tasks));
	an->tasks[0].runtime = "bthread";
	an->tasks[0].state = AN_TASK_SUSPENDED;
	an->tasks[0].frames = role_frames(handled_stack + 2, 3);
	an->tasks[0].nframes = 3;
	an_signature_compute(an, NULL);
	return an;
}

/* Caught in the bthread the thread was running: the bthread's frames
 * carry the roles and are signed, the worker's are plain. */
static struct analysis *caught_in_bthread(void)
{
	static const struct role_frame worker[] = {{"bthread_run", AN_FRAME_PLAIN},
						   {"start_thread", AN_FRAME_PLAIN}};
	struct analysis *an = handled_core("0c02");
	an->threads[0].frames = role_frames(worker, 2);
	an->threads[0].nframes = 2;
	an->ntasks = 1;
	an->tasks = calloc(1, sizeof(*an->tasks));
	an->tasks[0].runtime = "bthread";
	an->tasks[0].state = AN_TASK_RUNNING;
	an->tasks[0].has_tid = true;
	an->tasks[0].tid = 77;
	an->tasks[0].frames = role_frames(handled_stack, NHANDLED);
	an->tasks[0].nframes = NHANDLED;
	an_signature_compute(an, NULL);
	return an;
}

/* A stack overflow caught on an alternate stack: the handler's frame and
 * the trampoline, then a recursion whose run was left out before
 * frames[6], its cycle on both sides (the signature's collapsed_at is
 * relative to the crash site). */
static struct analysis *caught_overflow(void)
{
	static const struct role_frame stack[] = {
		{"on_fatal_signal", AN_FRAME_HANDLER}, {"__restore_rt", AN_FRAME_TRAMPOLINE},
		{"pong", AN_FRAME_CRASH_SITE}, {"ping", AN_FRAME_PLAIN}, {"pong", AN_FRAME_PLAIN},
		{"ping", AN_FRAME_PLAIN}, {"pong", AN_FRAME_PLAIN}, {"ping", AN_FRAME_PLAIN},
		{"start_recursion", AN_FRAME_PLAIN}, {"main", AN_FRAME_PLAIN},
	};
	struct analysis *an = handled_core("0c03");
	an->caught.site = 2;
	an->threads[0].frames = role_frames(stack, 10);
	an->threads[0].nframes = 10;
	an->threads[0].recursion = calloc(1, sizeof(struct an_recursion));
	*an->threads[0].recursion = (struct an_recursion){.first = 6, .last = 205, .repeats = 100};
	an_signature_compute(an, NULL);
	return an;
}

/* Column 0 of SQL's first row, FP bound to ?1, into BUF ("" when none). */
static const char *sql_text(sqlite3 *h, const char *sql, const char *fp, char *buf, size_t len)
{
	sqlite3_stmt *q = NULL;
	buf[0] = '\0';
	if (sqlite3_prepare_v2(h, sql, -1, &q, NULL) == SQLITE_OK &&
	    sqlite3_bind_text(q, 1, fp, -1, SQLITE_STATIC) == SQLITE_OK &&
	    sqlite3_step(q) == SQLITE_ROW && sqlite3_column_text(q, 0))
		snprintf(buf, len, "%s", (const char *)sqlite3_column_text(q, 0));
	sqlite3_finalize(q);
	return buf;
}

/* The roles of FRAMES (N), "-" for a plain frame, space-separated. */
static const char *roles_of(const struct an_frame *frames, size_t n, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n && used < len; i++) {
		const char *name = an_frame_role_name(frames[i].role);
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " " : "", name ? name : "-");
	}
	return buf;
}

static const char handled_roles[] =
	"crash_handler crash_handler crash_handler trampoline crash_site - -";

/* The roles of core FP's frames as SQLite holds them (TABLE, owner
 * column OWNER = 0). */
static const char *stored_roles(sqlite3 *h, const char *table, const char *owner, const char *fp,
				char *buf, size_t len)
{
	char sql[512];
	snprintf(sql, sizeof(sql), "SELECT group_concat(coalesce(role, '-'), ' ') FROM (SELECT f.role"
		 " FROM %s f JOIN cores c ON c.id = f.core_id WHERE c.fingerprint = ?1 AND f.%s = 0"
		 " ORDER BY f.idx)", table, owner);
	return sql_text(h, sql, fp, buf, len);
}

/* Roles and caught columns as SQL reads them. */
static void check_caught_rows(sqlite3 *h)
{
	char buf[256];
	CHECK_STR("caught: the thread's frames keep their roles",
		  stored_roles(h, "frames", "thread_idx", "0c01", buf, sizeof(buf)), handled_roles);
	CHECK_STR("caught: a task's frames keep theirs (task_frames.role)",
		  stored_roles(h, "task_frames", "task_idx", "0c01", buf, sizeof(buf)),
		  "crash_handler trampoline crash_site");
	CHECK_STR("caught: the caught fault and its handler on cores",
		  sql_text(h, "SELECT caught_signal || ' ' || caught_signal_name || ' ' || caught_code"
			      " || ' ' || caught_code_name || ' ' || printf('0x%x', caught_address)"
			      " || ' ' || handled_by || ' ' || handler_action || ' ' || signal_name"
			      " FROM cores WHERE fingerprint = ?1", "0c01", buf, sizeof(buf)),
		  "11 SIGSEGV 1 SEGV_MAPERR 0x10 on_fatal_signal aborted SIGABRT");
	CHECK_STR("caught: the signature starts at the crash site, with the caught signal",
		  sql_text(h, "SELECT signature FROM cores WHERE fingerprint = ?1", "0c01", buf,
			   sizeof(buf)), "SIGSEGV: parse_header < dispatch < main");
}

/* Roles as the store reads frames back for resign (rep_frame_set_field). */
static void check_caught_read_back(const char *db)
{
	char why[512], buf[256];
	struct rep_sqlite *sq = NULL;
	struct an_frame *f = NULL;
	size_t n = 0;
	struct an_index_gap gap;
	if (!CHECK("caught: the store opens again", rep_sqlite_open(db, &sq, why, sizeof(why)) == 0))
		return;
	sqlite3 *h = rep_sqlite_db(sq);
	int64_t id = unit_sql_long(h, "SELECT id FROM cores WHERE fingerprint = '0c01'");
	CHECK("caught: the thread's frames read back",
	      rep_sqlite_read_frames(sq, REP_FRAMES_THREAD, id, 0, &f, &n, &gap) == 0 && n == NHANDLED);
	CHECK_STR("caught: ... with their roles", roles_of(f, n, buf, sizeof(buf)), handled_roles);
	for (size_t i = 0; i < n; i++)
		an_frame_deinit(&f[i]);
	free(f);
	rep_sqlite_close(sq);
}

/* The expected signature and hash of each core, taken before the
 * analyses are freed. */
struct expected {
	char fp[8], signature[256], hash[32];
};

static void expect(struct expected *e, const struct analysis *an)
{
	snprintf(e->fp, sizeof(e->fp), "%s", an->core_fingerprint);
	snprintf(e->signature, sizeof(e->signature), "%s", an->signature ? an->signature : "?");
	snprintf(e->hash, sizeof(e->hash), "%s", an->signature_hash ? an->signature_hash : "?");
}

/* Every stored signature made stale, then resign: each is again the one
 * an_signature_compute() gave the analysis (WHAT names the checks). */
static void check_resign(const char *what, struct rep_store *st, sqlite3 *h,
			 const struct expected *e, size_t n)
{
	char why[512], buf[256], name[512];
	struct rep_resign_result r;
	const struct rep_resign_fns fns = {sign, NULL, NULL, NULL};
	sqlite3_exec(h, "UPDATE cores SET signature = 'stale', signature_hash = '0'", NULL, NULL, NULL);
	snprintf(name, sizeof(name), "%s: resign", what);
	CHECK(name, rep_store_resign(st, &fns, &r, why, sizeof(why)) == 0 && r.changed == n);
	for (size_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s: resign signs %.7s as the analysis was (%.255s)", what,
			 e[i].fp, e[i].signature);
		CHECK_STR(name, sql_text(h, "SELECT signature FROM cores WHERE fingerprint = ?1", e[i].fp,
					 buf, sizeof(buf)), e[i].signature);
		snprintf(name, sizeof(name), "%s: ... and %.7s's hash", what, e[i].fp);
		CHECK_STR(name, sql_text(h, "SELECT signature_hash FROM cores WHERE fingerprint = ?1",
					 e[i].fp, buf, sizeof(buf)), e[i].hash);
	}
	snprintf(name, sizeof(name), "%s: a second resign changes nothing", what);
	CHECK(name, rep_store_resign(st, &fns, &r, why, sizeof(why)) == 0 && r.changed == 0);
}

/* Crashes a handler caught: roles and caught columns stored and read back,
 * and resign signs them as the analyzer does. */
static void test_caught(const char *dir)
{
	char db[512], why[512];
	struct analysis *an[] = {caught_on_thread(), caught_in_bthread(), caught_overflow()};
	enum { N = sizeof(an) / sizeof(an[0]) };
	struct expected e[N];
	struct rep_store *st = NULL;
	snprintf(db, sizeof(db), "%s/caught.db", dir);
	bool ok = rep_store_open(db, &st, why, sizeof(why)) == 0;
	for (size_t i = 0; i < N; i++) {
		expect(&e[i], an[i]);
		ok = ok && rep_store_write(st, an[i], why, sizeof(why)) == REP_WRITE_STORED;
		an_analysis_destroy(an[i]);
	}
	CHECK_STR("caught: in a bthread, signed from its crash site", e[1].signature,
		  "SIGSEGV: parse_header < dispatch < main");
	CHECK("caught: a recursion caught on an alternate stack is signed by its cycle",
	      strstr(e[2].signature, "SIGSEGV: recursion ") == e[2].signature);
	if (!CHECK("caught: stored", ok)) {
		printf("    %s\n", why);
		rep_store_close(st);
		return;
	}
	sqlite3 *h;
	sqlite3_open(db, &h);
	check_caught_rows(h);
	check_caught_read_back(db);
	check_resign("caught", st, h, e, N);
	sqlite3_close(h);
	rep_store_close(st);
}

/* Symbolizing stored frames again keeps their roles (the store reads them
 * back and writes them again), and resign still starts at the crash site. */
static void test_caught_resymbolize(const char *dir)
{
	char db[512], why[512], buf[256];
	struct rep_resign_result r;
	int asked = 0;
	const struct rep_resign_fns fns = {sign, found_prog, two_levels, &asked};
	struct analysis *an = caught_on_thread();
	an->nmodules = 1;
	an->modules = calloc(1, sizeof(*an->modules));
	an->modules[0] = (struct an_module){strdup("/usr/bin/prog"), 0x1000, 0x2000, strdup("b1"),
					    NULL, false};
	struct rep_store *st = store_of(dir, "caught_resym.db", an, db, sizeof(db));
	if (!CHECK("caught resymbolize: stored", st != NULL))
		return;
	CHECK("caught resymbolize: resign", rep_store_resign(st, &fns, &r, why, sizeof(why)) == 0 &&
					    r.frames_symbolized == NHANDLED + 3);
	sqlite3 *h;
	sqlite3_open(db, &h);
	CHECK_STR("caught resymbolize: each frame's two levels keep its role",
		  stored_roles(h, "frames", "thread_idx", "0c01", buf, sizeof(buf)),
		  "crash_handler crash_handler crash_handler crash_handler crash_handler crash_handler"
		  " trampoline trampoline crash_site crash_site - - - -");
	CHECK_STR("caught resymbolize: the task's too",
		  stored_roles(h, "task_frames", "task_idx", "0c01", buf, sizeof(buf)),
		  "crash_handler crash_handler trampoline trampoline crash_site crash_site");
	CHECK_STR("caught resymbolize: signed from the crash site, with the caught signal",
		  sql_text(h, "SELECT signature FROM cores WHERE fingerprint = ?1", "0c01", buf,
			   sizeof(buf)), "SIGSEGV: inner < outer < inner < outer < inner");
	sqlite3_close(h);
	rep_store_close(st);
}

/* ---- Go programs' panics and fatal errors ---------------------------- */

/* A Go program's crash FINGERPRINT: its core's SIGABRT is the runtime's
 * abort; the panic came from SIGNO (0: none), or it is a fatal error. */
static struct analysis *go_core(const char *fingerprint, int signo, bool fatal, const char *message)
{
	static const struct role_frame stack[] = {
		{"main.applyDiscount", AN_FRAME_PLAIN}, {"main.checkout", AN_FRAME_PLAIN},
		{"main.main", AN_FRAME_PLAIN}, {"runtime.main", AN_FRAME_PLAIN},
	};
	struct analysis *an = handled_core(fingerprint);
	free(an->caught.handler);   /* no handler caught it */
	an->caught = (struct an_caught){0};
	an->go = (struct an_go_crash){.present = true, .fatal = fatal, .signo = signo,
				      .message = strdup(message)};
	an->threads[0].frames = role_frames(stack, 4);
	an->threads[0].nframes = 4;
	an_signature_compute(an, NULL);
	return an;
}

/* The Go columns of cores as SQL reads them. */
static void check_go_rows(sqlite3 *h)
{
	static const char sql[] = "SELECT go_crash || ' ' || coalesce(go_signal, '-') || ' '"
				  " || coalesce(go_signal_name, '-') || ' ' || signal_name || ': '"
				  " || go_message FROM cores WHERE fingerprint = ?1";
	char buf[256];
	CHECK_STR("go: a panic from a signal on cores", sql_text(h, sql, "60a1", buf, sizeof(buf)),
		  "panic 11 SIGSEGV SIGABRT: panic: runtime error: invalid memory address or nil"
		  " pointer dereference");
	CHECK_STR("go: a panic of the program's own", sql_text(h, sql, "60a2", buf, sizeof(buf)),
		  "panic - - SIGABRT: panic: out of stock");
	CHECK_STR("go: a fatal error", sql_text(h, sql, "60a3", buf, sizeof(buf)),
		  "fatal error - - SIGABRT: fatal error: concurrent map writes");
	CHECK("go: a crash of no Go program has NULL Go columns",
	      unit_sql_long(h, "SELECT count(*) FROM cores WHERE coalesce(go_crash, go_signal,"
			       " go_signal_name, go_message) IS NULL") == 1);
}

/* Go crashes stored, then resigned: each keeps the signature the analysis
 * gave it, its panic's signal or the runtime's word, not SIGABRT. */
static void test_go(const char *dir)
{
	char db[512], why[512];
	struct analysis *an[] = {
		go_core("60a1", SIGSEGV, false, "panic: runtime error: invalid memory address or nil"
						" pointer dereference"),
		go_core("60a2", 0, false, "panic: out of stock"),
		go_core("60a3", 0, true, "fatal error: concurrent map writes"),
		caught_on_thread(),
	};
	enum { N = sizeof(an) / sizeof(an[0]) };
	struct expected e[N];
	struct rep_store *st = NULL;
	snprintf(db, sizeof(db), "%s/go.db", dir);
	bool ok = rep_store_open(db, &st, why, sizeof(why)) == 0;
	for (size_t i = 0; i < N; i++) {
		expect(&e[i], an[i]);
		ok = ok && rep_store_write(st, an[i], why, sizeof(why)) == REP_WRITE_STORED;
		an_analysis_destroy(an[i]);
	}
	CHECK_STR("go: signed with the panic's signal", e[0].signature,
		  "SIGSEGV: main.applyDiscount < main.checkout < main.main < runtime.main");
	CHECK_STR("go: ... or \"panic\"", e[1].signature,
		  "panic: main.applyDiscount < main.checkout < main.main < runtime.main");
	CHECK_STR("go: ... or \"fatal error\"", e[2].signature,
		  "fatal error: main.applyDiscount < main.checkout < main.main < runtime.main");
	if (!CHECK("go: stored", ok)) {
		printf("    %s\n", why);
		rep_store_close(st);
		return;
	}
	sqlite3 *h;
	sqlite3_open(db, &h);
	check_go_rows(h);
	check_resign("go", st, h, e, N);
	sqlite3_close(h);
	rep_store_close(st);
}

/* A database of schema 8 (before the Go columns) holding one core, its
 * signature stale; false when it cannot be made. */
static bool version8_database(const char *db)
{
	sqlite3 *h;
	bool ok = sqlite3_open(db, &h) == SQLITE_OK;
	for (int v = 1; ok && v <= 8; v++)
		ok = sqlite3_exec(h, rep_store_migration(v), NULL, NULL, NULL) == SQLITE_OK;
	ok = ok && sqlite3_exec(h, "PRAGMA user_version = 8;"
			       "INSERT INTO cores (fingerprint, path, size, analysed_at, analyzer_version,"
			       " signal, signal_name, signature, signature_hash, nthreads, nframes,"
			       " nwarnings) VALUES ('0008', '/tmp/old', 1, 'now', 'x', 6, 'SIGABRT',"
			       " 'stale', '0', 1, 1, 0);"
			       "INSERT INTO threads (core_id, idx, tid, crashing, nframes)"
			       " VALUES (1, 0, 7, 1, 1);"
			       "INSERT INTO frames (core_id, thread_idx, idx, kind, pc, activation,"
			       " function, inlined, inline_depth, seam, tailcall) VALUES (1, 0, 0,"
			       " 'native', 4096, 1, 'old_function', 0, 0, 0, 0)",
			       NULL, NULL, NULL) == SQLITE_OK;
	sqlite3_close(h);
	return ok;
}

/* A store of schema 8 gets the Go columns, NULL for its cores, and
 * resigns them as before. */
static void test_go_migration(const char *dir)
{
	char db[512], why[512], buf[256];
	struct rep_store *st = NULL;
	struct rep_resign_result r;
	const struct rep_resign_fns fns = {sign, NULL, NULL, NULL};
	snprintf(db, sizeof(db), "%s/v8.db", dir);
	if (!CHECK("go migration: a version 8 store", version8_database(db)))
		return;
	bool opened = rep_store_open(db, &st, why, sizeof(why)) == 0;
	CHECK("go migration: it opens", opened);
	CHECK("go migration: resign", opened && rep_store_resign(st, &fns, &r, why, sizeof(why)) == 0 &&
				      r.changed == 1);
	rep_store_close(st);
	sqlite3 *h;
	sqlite3_open(db, &h);
	CHECK("go migration: migrated to the current version",
	      unit_sql_long(h, "PRAGMA user_version") == REP_SCHEMA_VERSION);
	CHECK("go migration: the Go columns added, NULL",
	      unit_sql_long(h, "SELECT count(*) FROM cores WHERE coalesce(go_crash, go_signal,"
			       " go_signal_name, go_message) IS NULL") == 1);
	CHECK_STR("go migration: signed with the core's signal, as before",
		  sql_text(h, "SELECT signature FROM cores WHERE fingerprint = ?1", "0008", buf,
			   sizeof(buf)), "SIGABRT: old_function");
	sqlite3_close(h);
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
	test_caught(dir);
	test_caught_resymbolize(dir);
	test_go(dir);
	test_go_migration(dir);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK("temporary directory removed", system(cmd) == 0);
	return unit_exit();
}
