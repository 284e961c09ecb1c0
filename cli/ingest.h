/* `asyncore ingest` inside cli/: the command (ingest.c), the supervisor
 * (ingest_supervisor.c) and its worker processes (ingest_worker.c).
 *
 * The supervisor hands the batch's cores, one at a time, to N worker
 * processes over one SOCK_SEQPACKET socket each.  A worker analyses a core
 * and writes it through the store interface (reports/store.h: SQLite
 * commits each core, ClickHouse batches many; a core that cannot be
 * analysed goes to ingest_errors, also written by the worker), keeping its
 * own debug-info cache across the cores it gets.  A worker that dies or
 * passes the time limit on a core costs only that core: the supervisor
 * records it in ingest_errors with the reason and starts another worker.
 * The cores and errors a dead worker still held unwritten in its batch are
 * checked and recorded by the supervisor too. */
#ifndef CLI_INGEST_H
#define CLI_INGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "budget.h"
#include "options.h"
#include "runtimes.h"

#define INGEST_MAX_WORKERS 64

struct ingest_opts {
	const char *db;
	unsigned jobs;
	const char *binary;
	const char *sysroot;
	const char *debug_dirs[CLI_MAX_DEBUG_DIRS];     /* --debug-dir */
	size_t ndebug_dirs;
	bool quiet;
	bool sha256;                /* --sha256: each core's file hashed whole */
	struct cli_limits limits;   /* per core, in each worker */
	bool max_memory_given;
	struct an_signature_lists *signature_lists;   /* --signature-lists; NULL: built-in */
	bool journal;               /* --journal (or --journal-dir) */
	const char *journal_dir;
	char **paths;               /* expanded core paths (owned) */
	size_t npaths;
	const char *runtime_files[CLI_MAX_RUNTIMES];    /* --runtime */
	size_t nruntime_files;
	struct an_runtimes *runtimes;   /* loaded once, before the workers start */
};

/* What happened to one core. */
enum ingest_outcome {
	INGEST_STORED,              /* analysed and written */
	INGEST_PRESENT,             /* the store already had it */
	INGEST_FAILED,              /* in ingest_errors with the reason */
	INGEST_STORE_FAILED,        /* the store itself is failing: the batch stops */
};

/* A worker's message to the supervisor: STARTED when the core's identity is
 * known, WRITING when its analysis is done and the write begins (the write
 * gets a time limit of its own: a worker waiting for the store's lock
 * behind a stuck one is not the one to blame), DONE at the end; CLOSED when
 * it has closed its store (written what it held) on its way out. */
struct ingest_msg {
	enum { INGEST_MSG_STARTED, INGEST_MSG_WRITING, INGEST_MSG_DONE, INGEST_MSG_CLOSED } kind;
	uint32_t index;             /* the core, in ingest_opts.paths */
	enum ingest_outcome outcome;        /* DONE */
	uint64_t file_size;                 /* STARTED */
	char fingerprint[72];               /* STARTED: the core's identity */
	char reason[512];                   /* DONE, failed */
	size_t debug_files, dwarf_parsed;   /* DONE: the worker's cache so far */
	bool leaving;                       /* DONE: the worker ends after this core */
	size_t held, lost;                  /* DONE, CLOSED: rep_store_pending() */
};

/* Exit status of a worker that reached the memory limit inside a library
 * that ends the process on out-of-memory (cli_guard_begin()). */
#define INGEST_WORKER_EXIT_MEMORY 3

/* What the batch did, for the summary. */
struct ingest_tally {
	size_t stored, present, failed, done;
	size_t debug_files, dwarf_parsed;   /* summed over the workers */
	bool interrupted;                   /* SIGINT or SIGTERM stopped it */
	bool store_failed;
};

/* The worker process, forked by SUPERVISOR: serve the cores it sends on
 * SOCK until it closes the socket, then _exit(). */
void ingest_worker_main(const struct ingest_opts *o, int sock, pid_t supervisor)
	__attribute__((noreturn));

struct an_options;
struct analysis;
struct rep_store;

/* The analysis options a worker uses for each core of O (pointers
 * borrowed from O); `collect` analyses its one core with the same. */
void ingest_analysis_options(const struct ingest_opts *o, struct an_options *out);

/* Write AN to ST as a worker does: INGEST_STORED, INGEST_PRESENT, or
 * INGEST_FAILED with the reason in WHY. */
enum ingest_outcome ingest_write(struct rep_store *st, const struct analysis *an, char *why,
				 size_t whylen);

/* Run the batch of O on O->jobs workers, filling T.  Returns 0, or -1 when
 * no worker could be started (reported). */
int ingest_supervise(const struct ingest_opts *o, struct ingest_tally *t);

#endif
