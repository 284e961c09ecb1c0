/* Unit tests for reports/: SHA-256 vectors, the core fingerprint, and
 * writing a hand-built analysis into a fresh database. */
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../analyzer/signature.h"
#include "../../reports/fingerprint.h"
#include "../../reports/store.h"

static int failures;

static void expect(const char *name, int ok)
{
	printf("%s: store %s\n", ok ? "PASS" : "FAIL", name);
	if (!ok)
		failures++;
}

static void test_sha256(void)
{
	static const char *const v[][2] = {
		{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct rep_sha256 ctx;
		char hex[65];
		rep_sha256_init(&ctx);
		rep_sha256_update(&ctx, v[i][0], strlen(v[i][0]));
		rep_sha256_final(&ctx, hex);
		char name[32];
		snprintf(name, sizeof(name), "sha256 vector %zu", i);
		expect(name, strcmp(hex, v[i][1]) == 0);
	}
	struct rep_sha256 ctx;
	char hex[65], a[1000];
	memset(a, 'a', sizeof(a));
	rep_sha256_init(&ctx);
	for (int i = 0; i < 1000; i++)
		rep_sha256_update(&ctx, a, sizeof(a));
	rep_sha256_final(&ctx, hex);
	expect("sha256 million a", strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0);
}

static void write_file(const char *path, size_t size, size_t poke)
{
	FILE *f = fopen(path, "wb");
	for (size_t i = 0; f && i < size; i++)
		fputc(i == poke ? 0x5a : (int)(i * 7 % 251), f);
	if (f)
		fclose(f);
}

static void test_fingerprint(const char *dir)
{
	char p1[512], p2[512], h1[65], h2[65], h3[65], why[256];
	uint64_t s1 = 0, s2 = 0;
	snprintf(p1, sizeof(p1), "%s/a", dir);
	snprintf(p2, sizeof(p2), "%s/b", dir);
	write_file(p1, 300000, (size_t)-1);
	write_file(p2, 300000, (size_t)-1);
	int ok = rep_core_fingerprint(p1, h1, &s1, why, sizeof(why)) == 0 &&
		 rep_core_fingerprint(p2, h2, &s2, why, sizeof(why)) == 0;
	expect("fingerprint of equal files is equal", ok && strcmp(h1, h2) == 0 && s1 == 300000);
	write_file(p2, 300000, 100);   /* a byte in the head */
	ok = rep_core_fingerprint(p2, h3, &s2, why, sizeof(why)) == 0;
	expect("fingerprint sees a changed head byte", ok && strcmp(h1, h3) != 0);
	expect("fingerprint of a missing file fails",
	       rep_core_fingerprint("/nonexistent/core", h3, &s2, why, sizeof(why)) != 0);
	unlink(p1);
	unlink(p2);
}

static struct analysis *sample_analysis(void)
{
	struct analysis *an = an_analysis_create();
	an->core_path = strdup("/tmp/core.1");
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
	an_signature_compute(an);
	return an;
}

static long count(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *q;
	long n = -1;
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
		n = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return n;
}

static void test_store(const char *dir)
{
	char db[512], why[512];
	struct rep_store *st = NULL;
	snprintf(db, sizeof(db), "%s/crashes.db", dir);
	expect("open creates the database", rep_store_open(db, &st, why, sizeof(why)) == 0);
	if (!st) {
		printf("    %s\n", why);
		return;
	}
	struct analysis *an = sample_analysis();
	struct rep_core_id id = {"/tmp/core.1", "00ff", 4096, 0};
	expect("write stores", rep_store_write(st, &id, an, why, sizeof(why)) == REP_WRITE_STORED);
	expect("second write is a duplicate",
	       rep_store_write(st, &id, an, why, sizeof(why)) == REP_WRITE_DUPLICATE);
	expect("has", rep_store_has(st, "00ff") == 1 && rep_store_has(st, "00fe") == 0);
	struct rep_core_id bad = {"/tmp/core.2", "00fe", 10, 0};
	expect("record error", rep_store_record_error(st, &bad, "not a core", why, sizeof(why)) == 0 &&
			       rep_store_record_error(st, &bad, "still not", why, sizeof(why)) == 0);
	rep_store_close(st);
	an_analysis_destroy(an);

	sqlite3 *h;
	sqlite3_open(db, &h);
	expect("one core", count(h, "SELECT count(*) FROM cores") == 1);
	expect("six frames", count(h, "SELECT count(*) FROM frames") == 6);
	expect("one async frame per thread",
	       count(h, "SELECT count(*) FROM frames WHERE kind = 'async'") == 2);
	expect("crash_stacks shows the crashing thread",
	       count(h, "SELECT count(*) FROM crash_stacks WHERE function IN ('crash_here','middle','main')") == 3);
	expect("last_events keeps ten", count(h, "SELECT count(*) FROM last_events") == 10);
	expect("last_events newest first",
	       count(h, "SELECT event_order FROM last_events WHERE recency = 1") == 11);
	expect("top_signatures", count(h, "SELECT cores FROM top_signatures") == 1);
	expect("high address round-trips",
	       count(h, "SELECT printf('%x', fault_address) = 'ffffffffff600000' FROM cores") == 1);
	expect("error attempts", count(h, "SELECT attempts FROM ingest_errors") == 2);
	expect("async root", count(h, "SELECT count(*) FROM async_roots") == 1);
	expect("schema version", count(h, "PRAGMA user_version") == REP_SCHEMA_VERSION);
	expect("wal", count(h, "SELECT journal_mode = 'wal' FROM pragma_journal_mode") == 1);
	sqlite3_exec(h, "PRAGMA user_version = 99", NULL, NULL, NULL);
	sqlite3_close(h);
	expect("newer schema refused", rep_store_open(db, &st, why, sizeof(why)) != 0 &&
				       strstr(why, "newer") != NULL);
}

int main(void)
{
	char dir[] = "/tmp/test_store.XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	test_sha256();
	test_fingerprint(dir);
	test_store(dir);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		failures++;
	return failures ? 1 : 0;
}
