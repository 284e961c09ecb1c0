/* Unit tests for reports/store: writing a hand-built analysis into a fresh
 * database. */
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../analyzer/signature.h"
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

int main(void)
{
	char dir[] = "/tmp/test_store.XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	test_store(dir);
	test_errors_by_path(dir);
	test_invalid_utf8(dir);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK("temporary directory removed", system(cmd) == 0);
	return unit_exit();
}
