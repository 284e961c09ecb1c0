/* `asyncore ingest`: analyse many cores into the crash database.
 *
 * N worker threads each take the next core, fingerprint it, skip it when the
 * database already has it, and otherwise analyse it.  All workers share one
 * dbg_cache, so a build-id's debug info is parsed once for the whole batch
 * (the cache serialises the use of its libdw handles).  Finished analyses go
 * through a bounded queue to the one writer, the calling thread, which writes
 * each core in its own transaction. */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../analyzer/driver.h"
#include "../reports/store.h"
#include "options.h"
#include "runtimes.h"

#define INGEST_MAX_JOBS 64

struct ingest_opts {
	const char *db;
	unsigned jobs;
	const char *binary;
	const char *sysroot;
	bool quiet;
	struct an_signature_lists *signature_lists;   /* --signature-lists; NULL: built-in */
	bool journal;               /* --journal (or --journal-dir) */
	const char *journal_dir;
	char **paths;               /* expanded core paths (owned) */
	size_t npaths;
	const char *runtime_files[CLI_MAX_RUNTIMES];    /* --runtime */
	size_t nruntime_files;
	struct an_runtimes *runtimes;                   /* loaded once, shared by the workers */
};

enum job_state { JOB_ANALYSED, JOB_PRESENT, JOB_FAILED };

/* One finished core, handed from a worker to the writer. */
struct job_result {
	enum job_state state;
	struct core_identity id;
	bool has_id;
	const char *path;           /* borrowed from ingest_opts */
	struct analysis *an;        /* JOB_ANALYSED: owned */
	char reason[512];           /* JOB_FAILED */
};

struct ingest {
	const struct ingest_opts *opts;
	pthread_mutex_t lock;
	pthread_cond_t not_full, not_empty;
	size_t next;                /* next path to hand out */
	struct job_result **queue;  /* ring of finished results */
	size_t cap, head, count;
	unsigned running;           /* workers still running */
	struct dbg_cache *cache;    /* shared by the workers */
};

static bool push_path(struct ingest_opts *o, const char *path)
{
	char **p = realloc(o->paths, (o->npaths + 1) * sizeof(*p));
	if (!p)
		return false;
	o->paths = p;
	if (!(o->paths[o->npaths] = strdup(path)))
		return false;
	o->npaths++;
	return true;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Is NAME one of the database's own files (FILE, FILE-wal, FILE-shm)? */
static bool is_db_file(const char *dir, const char *name, const char *db)
{
	char path[PATH_MAX], real[PATH_MAX], dbreal[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!realpath(path, real) || !realpath(db, dbreal))
		return false;
	size_t n = strlen(dbreal);
	return strncmp(real, dbreal, n) == 0 &&
	       (real[n] == '\0' || strcmp(real + n, "-wal") == 0 || strcmp(real + n, "-shm") == 0 ||
		strcmp(real + n, "-journal") == 0);
}

/* Add the regular files of DIR (not hidden, sorted) to the batch. */
static int add_dir(struct ingest_opts *o, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t first = o->npaths;
	if (!d) {
		fprintf(stderr, "asyncore: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		char path[PATH_MAX], real[PATH_MAX];
		struct stat st;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || is_db_file(dir, e->d_name, o->db))
			continue;
		if (!push_path(o, realpath(path, real) ? real : path)) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	qsort(o->paths + first, o->npaths - first, sizeof(*o->paths), cmp_str);
	return 0;
}

static void opts_free(struct ingest_opts *o)
{
	for (size_t i = 0; i < o->npaths; i++)
		free(o->paths[i]);
	free(o->paths);
	an_signature_lists_destroy(o->signature_lists);
	an_runtimes_destroy(o->runtimes);
}

enum ingest_option {
	O_DB, O_JOBS, O_BINARY, O_SYSROOT, O_QUIET, O_SIGNATURE_LISTS, O_JOURNAL, O_JOURNAL_DIR,
	O_RUNTIME
};

static const struct cli_option ingest_options[] = {
	{"--db", true, O_DB},
	{"--jobs", true, O_JOBS},
	{"-j", true, O_JOBS},
	{"--binary", true, O_BINARY},
	{"--sysroot", true, O_SYSROOT},
	{"--quiet", false, O_QUIET},
	{"-q", false, O_QUIET},
	{"--signature-lists", true, O_SIGNATURE_LISTS},
	{"--journal", false, O_JOURNAL},
	{"--journal-dir", true, O_JOURNAL_DIR},
	{"--runtime", true, O_RUNTIME},
	{NULL, false, 0},
};

/* A core argument: a directory adds its files, a file its absolute path
 * (the database outlives the cwd).  0 or -1 (reported). */
static int add_input(struct ingest_opts *o, const char *arg)
{
	struct stat st;
	char real[PATH_MAX];
	if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode))
		return add_dir(o, arg);
	return push_path(o, realpath(arg, real) ? real : arg) ? 0 : -1;
}

static bool apply_option(struct ingest_opts *o, int id, const char *v)
{
	unsigned long long n;
	switch (id) {
	case O_DB:
		o->db = v;
		return true;
	case O_JOBS:
		if (!cli_number("--jobs", v, 1, INGEST_MAX_JOBS, &n))
			return false;
		o->jobs = (unsigned)n;
		return true;
	case O_BINARY:
		o->binary = v;
		return true;
	case O_SYSROOT:
		o->sysroot = v;
		return true;
	case O_QUIET:
		o->quiet = true;
		return true;
	case O_SIGNATURE_LISTS:
		an_signature_lists_destroy(o->signature_lists);
		return cli_signature_lists(v, &o->signature_lists) == 0;
	case O_JOURNAL:
		o->journal = true;
		return true;
	case O_JOURNAL_DIR:
		o->journal = true;
		o->journal_dir = v;
		return true;
	case O_RUNTIME:
		return cli_runtimes_add("ingest", o->runtime_files, &o->nruntime_files, v);
	}
	return false;
}

/* Parse the command line; 0 or -1 (reported).  Directories are expanded
 * once every option is known (the database's own files are left out). */
static int parse_args(int argc, char **argv, struct ingest_opts *o)
{
	struct cli_args args;
	const char *v;
	const char **inputs = calloc((size_t)argc + 1, sizeof(*inputs));
	size_t ninputs = 0;
	int id, rc = -1;
	o->jobs = 1;
	if (!inputs)
		return -1;
	cli_args_init(&args, "ingest", argc, argv);
	while ((id = cli_next(&args, ingest_options, &v)) != CLI_END) {
		if (id == CLI_ERROR)
			goto out;
		if (id == CLI_POSITIONAL)
			inputs[ninputs++] = v;
		else if (!apply_option(o, id, v))
			goto out;
	}
	if (!o->db || ninputs == 0 || (o->binary && o->sysroot)) {
		cli_error("ingest", "usage: asyncore ingest --db FILE [--jobs N] "
				    "[--binary BIN | --sysroot DIR] [--signature-lists DIR] "
				    "[--journal [--journal-dir DIR]] [--runtime FILE]... [--quiet] CORE... | DIR");
		goto out;
	}
	for (size_t i = 0; i < ninputs; i++)
		if (add_input(o, inputs[i]) != 0)
			goto out;
	rc = 0;
out:
	free(inputs);
	return rc;
}

/* Open, fingerprint, skip-if-present, analyse: one core, on a worker. */
static struct job_result *work_one(const struct ingest_opts *o, struct rep_store *reader,
				   struct dbg_cache *cache, const char *path)
{
	struct job_result *r = calloc(1, sizeof(*r));
	struct core *core = NULL;
	if (!r)
		return NULL;
	r->path = path;
	r->state = JOB_FAILED;
	struct core_error *err = core_open(path, &core);
	if (!err) {
		core_identity(core, &r->id);
		r->has_id = true;
		if (rep_store_has(reader, r->id.fingerprint) == 1) {
			r->state = JOB_PRESENT;
			goto out;
		}
		core_identity_add_sha256(core, &r->id);
		struct an_options aopts = {0};
		aopts.dbg.binary = o->binary;
		aopts.dbg.sysroot = o->sysroot;
		aopts.signature_lists = o->signature_lists;
		aopts.journal = o->journal;
		aopts.journal_dir = o->journal_dir;
		aopts.runtimes = o->runtimes;
		err = an_analyze(core, &r->id, &aopts, cache, &r->an);
	}
	if (err) {
		snprintf(r->reason, sizeof(r->reason), "%s", err->message);
		core_error_destroy(err);
		r->an = NULL;
		goto out;
	}
	r->state = JOB_ANALYSED;
out:
	core_close(core);
	return r;
}

static void queue_push(struct ingest *in, struct job_result *r)
{
	pthread_mutex_lock(&in->lock);
	while (in->count == in->cap)
		pthread_cond_wait(&in->not_full, &in->lock);
	in->queue[(in->head + in->count) % in->cap] = r;
	in->count++;
	pthread_cond_signal(&in->not_empty);
	pthread_mutex_unlock(&in->lock);
}

/* Next finished result, or NULL when every worker is done. */
static struct job_result *queue_pop(struct ingest *in)
{
	struct job_result *r = NULL;
	pthread_mutex_lock(&in->lock);
	while (in->count == 0 && in->running > 0)
		pthread_cond_wait(&in->not_empty, &in->lock);
	if (in->count) {
		r = in->queue[in->head];
		in->head = (in->head + 1) % in->cap;
		in->count--;
		pthread_cond_signal(&in->not_full);
	}
	pthread_mutex_unlock(&in->lock);
	return r;
}

/* Index of the next core to analyse, or SIZE_MAX when none is left. */
static size_t take_next(struct ingest *in)
{
	pthread_mutex_lock(&in->lock);
	size_t i = in->next < in->opts->npaths ? in->next++ : SIZE_MAX;
	pthread_mutex_unlock(&in->lock);
	return i;
}

static void *worker(void *arg)
{
	struct ingest *in = arg;
	const struct ingest_opts *o = in->opts;
	struct dbg_cache *cache = in->cache;
	struct rep_store *reader = NULL;
	char why[512];
	if (rep_store_open(o->db, &reader, why, sizeof(why)) != 0)
		fprintf(stderr, "asyncore: %s\n", why);
	for (size_t i; reader && (i = take_next(in)) != SIZE_MAX;) {
		struct job_result *r = work_one(o, reader, cache, o->paths[i]);
		if (!r) {
			fprintf(stderr, "asyncore: out of memory\n");
			break;
		}
		queue_push(in, r);
	}
	rep_store_close(reader);
	pthread_mutex_lock(&in->lock);
	in->running--;
	pthread_cond_broadcast(&in->not_empty);
	pthread_mutex_unlock(&in->lock);
	return NULL;
}

struct tally {
	size_t stored, present, failed, done;
	size_t debug_files, dwarf_parsed;   /* from the batch's debug-info cache */
	struct timespec start, last_progress;
	bool tty;
};

static double elapsed(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void progress(struct tally *t, size_t total, bool final)
{
	struct timespec now;
	if (!t->tty)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!final && elapsed(&t->last_progress, &now) < 0.2)
		return;
	t->last_progress = now;
	double secs = elapsed(&t->start, &now);
	fprintf(stderr, "\r%zu/%zu cores, %.1f cores/s, %zu failed%s", t->done, total,
		secs > 0 ? (double)t->done / secs : 0.0, t->failed, final ? "\n" : "");
	fflush(stderr);
}

/* Write one result; returns -1 only when the database itself is failing. */
static int write_result(struct rep_store *st, struct job_result *r, struct tally *t)
{
	struct rep_core_id id = {r->path, r->has_id ? r->id.fingerprint : NULL,
				 r->has_id ? r->id.file_size : 0};
	char why[512];
	if (r->state == JOB_PRESENT) {
		t->present++;
		return 0;
	}
	if (r->state == JOB_ANALYSED) {
		enum rep_write_result w = rep_store_write(st, r->an, why, sizeof(why));
		if (w == REP_WRITE_STORED) {
			t->stored++;
			return 0;
		}
		if (w == REP_WRITE_DUPLICATE) {
			t->present++;
			return 0;
		}
		snprintf(r->reason, sizeof(r->reason), "%s", why);
	}
	t->failed++;
	if (t->tty)
		fprintf(stderr, "\r\033[K");
	fprintf(stderr, "asyncore: %s: %s\n", r->path, r->reason);
	if (rep_store_record_error(st, &id, r->reason, why, sizeof(why)) != 0) {
		fprintf(stderr, "asyncore: %s\n", why);
		return -1;
	}
	return 0;
}

static void result_free(struct job_result *r)
{
	if (r) {
		an_analysis_destroy(r->an);
		free(r);
	}
}

/* Start the workers and write what they produce. */
static int run_batch(const struct ingest_opts *o, struct rep_store *st, struct tally *t)
{
	struct ingest in = {.opts = o, .cap = 2 * (size_t)o->jobs};
	pthread_t tids[INGEST_MAX_JOBS];
	unsigned started = 0;
	int rc = 0;
	in.queue = calloc(in.cap, sizeof(*in.queue));
	in.cache = dbg_cache_create();
	if (!in.queue || !in.cache) {
		free(in.queue);
		dbg_cache_destroy(in.cache);
		return -1;
	}
	pthread_mutex_init(&in.lock, NULL);
	pthread_cond_init(&in.not_full, NULL);
	pthread_cond_init(&in.not_empty, NULL);
	in.running = o->jobs;
	for (; started < o->jobs; started++)
		if (pthread_create(&tids[started], NULL, worker, &in) != 0)
			break;
	pthread_mutex_lock(&in.lock);
	in.running -= o->jobs - started;   /* workers that never started */
	pthread_mutex_unlock(&in.lock);
	struct job_result *r;
	while ((r = queue_pop(&in))) {
		/* After a database failure keep draining so the workers can finish. */
		if (rc == 0 && write_result(st, r, t) != 0)
			rc = -1;
		t->done++;
		progress(t, o->npaths, false);
		result_free(r);
	}
	for (unsigned i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	if (started == 0 || t->done < o->npaths)
		rc = -1;
	pthread_cond_destroy(&in.not_empty);
	pthread_cond_destroy(&in.not_full);
	pthread_mutex_destroy(&in.lock);
	free(in.queue);
	dbg_cache_stats(in.cache, &t->debug_files, &t->dwarf_parsed);
	dbg_cache_destroy(in.cache);
	return rc;
}

int cli_ingest(int argc, char **argv)
{
	struct ingest_opts o = {0};
	struct rep_store *st = NULL;
	struct tally t = {0};
	char why[512];
	int status = 2;
	if (parse_args(argc, argv, &o) != 0)
		goto out;
	if (!(o.runtimes = cli_runtimes_load(o.runtime_files, o.nruntime_files)))
		goto out;
	if (rep_store_open(o.db, &st, why, sizeof(why)) != 0) {
		fprintf(stderr, "asyncore: %s\n", why);
		goto out;
	}
	if (o.jobs > o.npaths && o.npaths > 0)
		o.jobs = (unsigned)o.npaths;
	t.tty = !o.quiet && isatty(STDERR_FILENO);
	clock_gettime(CLOCK_MONOTONIC, &t.start);
	int rc = run_batch(&o, st, &t);
	size_t lost = rep_store_close(st);   /* a batching store writes its last cores here */
	st = NULL;
	t.stored -= lost < t.stored ? lost : t.stored;
	t.failed += lost;
	progress(&t, o.npaths, true);
	struct timespec end;
	clock_gettime(CLOCK_MONOTONIC, &end);
	double secs = elapsed(&t.start, &end);
	if (!o.quiet)
		printf("ingested %zu, already present %zu, failed %zu of %zu cores in %.2f s (%.1f cores/s)\n",
		       t.stored, t.present, t.failed, o.npaths, secs, secs > 0 ? (double)t.done / secs : 0.0);
	if (!o.quiet)
		printf("debug info: %zu files opened, %zu with DWARF parsed once for the batch\n",
		       t.debug_files, t.dwarf_parsed);
	status = rc != 0 ? 2 : t.failed ? 1 : 0;
out:
	rep_store_close(st);
	opts_free(&o);
	return status;
}
