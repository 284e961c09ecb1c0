/* An ingest worker process: analyses the cores the supervisor sends, one at
 * a time, and writes each in its own transaction.  Its debug-info cache
 * lives as long as the process, so a build-id is parsed once per worker. */
#include "ingest.h"

#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../analyzer/driver.h"
#include "../reports/store.h"
#include "test_hooks.h"

struct worker {
	const struct ingest_opts *opts;
	int sock;
	struct rep_store *store;    /* opened at the first core */
	struct dbg_cache *cache;
};

/* Send M to the supervisor; a supervisor that is gone ends the worker. */
static void tell(struct worker *w, const struct ingest_msg *m)
{
	if (send(w->sock, m, sizeof(*m), MSG_NOSIGNAL) != (ssize_t)sizeof(*m))
		_exit(0);
}

static void started(struct worker *w, uint32_t index, const struct core_identity *id)
{
	struct ingest_msg m = {.kind = INGEST_MSG_STARTED, .index = index, .file_size = id->file_size};
	snprintf(m.fingerprint, sizeof(m.fingerprint), "%s", id->fingerprint);
	tell(w, &m);
}

/* Record the failure of core PATH (fingerprint and size when known) in
 * ingest_errors; false when the store itself failed (M says why). */
static bool record_failure(struct worker *w, const char *path, const struct core_identity *id,
			   struct ingest_msg *m)
{
	struct rep_core_id rid = {path, id ? id->fingerprint : NULL, id ? id->file_size : 0};
	char why[512];
	if (rep_store_record_error(w->store, &rid, m->reason, why, sizeof(why)) == 0)
		return true;
	snprintf(m->reason, sizeof(m->reason), "%s", why);
	return false;
}

void ingest_analysis_options(const struct ingest_opts *o, struct an_options *out)
{
	*out = (struct an_options){0};
	out->dbg.binary = o->binary;
	out->dbg.sysroot = o->sysroot;
	out->dbg.debug_dirs = o->debug_dirs;
	out->dbg.ndebug_dirs = o->ndebug_dirs;
	out->signature_lists = o->signature_lists;
	out->journal = o->journal;
	out->journal_dir = o->journal_dir;
	out->runtimes = o->runtimes;
}

enum ingest_outcome ingest_write(struct rep_store *st, const struct analysis *an, char *why,
				 size_t whylen)
{
	switch (rep_store_write(st, an, why, whylen)) {
	case REP_WRITE_STORED:
		return INGEST_STORED;
	case REP_WRITE_DUPLICATE:
		return INGEST_PRESENT;
	case REP_WRITE_FAILED:
		break;
	}
	return INGEST_FAILED;
}

/* What one core leaves to free once the supervisor is told how it went:
 * telling it first keeps the time between a core's write and the word
 * that it is written short (a worker that dies in between costs a core
 * the supervisor must look up). */
struct job {
	struct core *core;
	struct analysis *an;
};

static void job_release(struct job *j)
{
	an_analysis_destroy(j->an);
	core_close(j->core);
	*j = (struct job){0};
}

/* Analyse the open core of J (identity ID) and write it; fills M. */
static void analyse_and_store(struct worker *w, struct job *j, struct core_identity *id,
			      struct ingest_msg *m)
{
	const struct ingest_opts *o = w->opts;
	struct an_options aopts;
	ingest_analysis_options(o, &aopts);
	if (o->sha256)
		core_identity_add_sha256(j->core);
	struct core_error *err = an_analyze(j->core, id, &aopts, w->cache, &j->an);
	if (err || cli_out_of_memory(NULL)) {
		if (cli_out_of_memory(err))
			cli_memory_limit_message(&o->limits, m->reason, sizeof(m->reason));
		else
			snprintf(m->reason, sizeof(m->reason), "%s", err->message);
		core_error_destroy(err);
		m->outcome = INGEST_FAILED;
		return;
	}
	/* The analysis is plain data: the core is not needed for the write,
	 * and while it is open the worker is analysing (a test can tell). */
	core_close(j->core);
	j->core = NULL;
	struct ingest_msg writing = {.kind = INGEST_MSG_WRITING, .index = m->index};
	tell(w, &writing);
	m->outcome = ingest_write(w->store, j->an, m->reason, sizeof(m->reason));
}

/* One core: open, fingerprint (told to the supervisor, so a death from here
 * on is recorded under the core's identity), skip if present, analyse,
 * write.  Fills M's outcome and reason; J holds what to free after. */
static void work_one(struct worker *w, uint32_t index, struct ingest_msg *m, struct job *j)
{
	const char *path = w->opts->paths[index];
	struct core_identity id;
	bool has_id = false;
	char why[512];
	m->outcome = INGEST_FAILED;
	if (!w->store && rep_store_open(w->opts->db, &w->store, why, sizeof(why)) != 0) {
		snprintf(m->reason, sizeof(m->reason), "%s", why);
		m->outcome = INGEST_STORE_FAILED;
		return;
	}
	/* The memory ceiling only: the supervisor keeps the time limit (the
	 * analysis and the write, each; a worker waiting for the store's lock
	 * behind a stuck one is not to blame), and an exit by alarm here
	 * would read as the ceiling. */
	const struct cli_limits memory = {.max_memory = w->opts->limits.max_memory};
	cli_guard_begin(NULL, &memory, INGEST_WORKER_EXIT_MEMORY);
	struct core_error *err = core_open(path, &j->core);
	if (err) {
		/* Out of memory at the ceiling may look like anything (a core
		 * whose first bytes could not be read is "not an ELF file"). */
		if (cli_out_of_memory(err))
			cli_memory_limit_message(&w->opts->limits, m->reason, sizeof(m->reason));
		else
			snprintf(m->reason, sizeof(m->reason), "%s", err->message);
		core_error_destroy(err);
	} else {
		core_identity(j->core, &id);
		has_id = true;
		started(w, index, &id);
		test_hook_analysing(path);
		/* A store that cannot say (a ClickHouse shard down) is asked
		 * again by the write, which retries and changes nothing for a
		 * core it already has. */
		if (rep_store_has(w->store, id.fingerprint) == 1)
			m->outcome = INGEST_PRESENT;
		else
			analyse_and_store(w, j, &id, m);
	}
	cli_guard_end();
	if (m->outcome == INGEST_FAILED && !record_failure(w, path, has_id ? &id : NULL, m))
		m->outcome = INGEST_STORE_FAILED;
}

/* A worker that reached its memory ceiling (its cache may hold what was
 * half built when an allocation failed), or is past half of it (the cache
 * grows with every new build-id), leaves after its core, and the supervisor
 * starts a fresh one. */
static bool should_retire(const struct worker *w)
{
	if (cli_out_of_memory(NULL))
		return true;
	if (w->opts->limits.max_memory == 0)
		return false;
	/* The heap (AddressSanitizer's shadow, which the process's data size
	 * would count, is not in it). */
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd > w->opts->limits.max_memory / 2;
}

/* The process's own setup: die with the supervisor, leave interrupts to it
 * (a terminal's Ctrl-C reaches the whole process group), no core dumps of
 * its own, the memory ceiling. */
static void setup_process(const struct ingest_opts *o, pid_t supervisor)
{
	struct rlimit no_core = {0, 0};
	char why[512];
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != supervisor)
		_exit(0);   /* it died before the line above */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	setrlimit(RLIMIT_CORE, &no_core);
	if (cli_limit_memory(&o->limits, why, sizeof(why)) != 0) {
		fprintf(stderr, "asyncore: %s\n", why);
		_exit(2);
	}
}

void ingest_worker_main(const struct ingest_opts *o, int sock, pid_t supervisor)
{
	struct worker w = {.opts = o, .sock = sock};
	setup_process(o, supervisor);
	w.cache = dbg_cache_create();
	if (!w.cache)
		_exit(2);
	uint32_t index;
	while (recv(sock, &index, sizeof(index), 0) == (ssize_t)sizeof(index) && index < o->npaths) {
		struct ingest_msg m = {.kind = INGEST_MSG_DONE, .index = index};
		struct job job = {0};
		work_one(&w, index, &m, &job);
		dbg_cache_stats(w.cache, &m.debug_files, &m.dwarf_parsed);
		if (w.store)
			rep_store_pending(w.store, &m.held, &m.lost);
		m.leaving = m.outcome == INGEST_STORE_FAILED || should_retire(&w);
		tell(&w, &m);
		job_release(&job);
		if (m.leaving)
			break;
	}
	/* What a batching store held is written (or lost and counted) here. */
	struct ingest_msg closed = {.kind = INGEST_MSG_CLOSED, .lost = rep_store_close(w.store)};
	if (send(sock, &closed, sizeof(closed), MSG_NOSIGNAL) < 0) {
		/* the supervisor is gone: nothing to tell */
	}
	dbg_cache_destroy(w.cache);
	_exit(0);
}
