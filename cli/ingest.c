/* `asyncore ingest`: analyse many cores into the crash database.
 *
 * The command: its options, the batch's core paths (directories expanded),
 * and the summary.  The work is done by a supervisor and its worker
 * processes (cli/ingest.h). */
#include "ingest.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../analyzer/siglists.h"
#include "../reports/store.h"
#include "cli.h"
#include "options.h"
#include "runtimes.h"

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

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Add the regular files of DIR (not hidden, sorted, ending in SUFFIX when
 * it is not NULL) to the batch. */
static int add_files(struct ingest_opts *o, const char *dir, const char *suffix)
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
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || is_db_file(dir, e->d_name, o->db) ||
		    (suffix && !ends_with(e->d_name, suffix)))
			continue;
		if (!push_path(o, realpath(path, real) ? real : path)) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	if (o->npaths > first)   /* none: the list may be NULL yet */
		qsort(o->paths + first, o->npaths - first, sizeof(*o->paths), cmp_str);
	return 0;
}

/* Whether DIR/NAME is a file (IS_DIR false) or a directory. */
static bool dir_has(const char *dir, const char *name, bool is_dir)
{
	char path[PATH_MAX];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) == 0 && (is_dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
}

/* The cores of DIR: its regular files; of a Crashpad database (its
 * settings.dat beside completed/ and pending/), the minidumps of those
 * two, not its own files. */
static int add_dir(struct ingest_opts *o, const char *dir)
{
	static const char *const reports[] = { "completed", "pending" };
	if (!dir_has(dir, "settings.dat", false) || !dir_has(dir, "completed", true))
		return add_files(o, dir, NULL);
	for (size_t i = 0; i < 2; i++) {
		char sub[PATH_MAX];
		snprintf(sub, sizeof(sub), "%s/%s", dir, reports[i]);
		if (dir_has(dir, reports[i], true) && add_files(o, sub, ".dmp") != 0)
			return -1;
	}
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
	O_DB, O_JOBS, O_BINARY, O_SYSROOT, O_DEBUG_DIR, O_QUIET, O_TIMEOUT, O_MAX_MEMORY,
	O_SIGNATURE_LISTS, O_JOURNAL, O_JOURNAL_DIR, O_RUNTIME, O_SHA256
};

static const struct cli_option ingest_options[] = {
	{"--db", true, O_DB},
	{"--jobs", true, O_JOBS},
	{"-j", true, O_JOBS},
	{"--binary", true, O_BINARY},
	{"--sysroot", true, O_SYSROOT},
	{"--debug-dir", true, O_DEBUG_DIR},
	{"--quiet", false, O_QUIET},
	{"-q", false, O_QUIET},
	{"--timeout", true, O_TIMEOUT},
	{"--max-memory", true, O_MAX_MEMORY},
	{"--signature-lists", true, O_SIGNATURE_LISTS},
	{"--journal", false, O_JOURNAL},
	{"--journal-dir", true, O_JOURNAL_DIR},
	{"--runtime", true, O_RUNTIME},
	{"--sha256", false, O_SHA256},
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
		if (!cli_number("--jobs", v, 1, INGEST_MAX_WORKERS, &n))
			return false;
		o->jobs = (unsigned)n;
		return true;
	case O_BINARY:
		o->binary = v;
		return true;
	case O_SYSROOT:
		o->sysroot = v;
		return true;
	case O_DEBUG_DIR:
		return cli_repeated("ingest", "--debug-dir", o->debug_dirs, &o->ndebug_dirs,
				    CLI_MAX_DEBUG_DIRS, v);
	case O_QUIET:
		o->quiet = true;
		return true;
	case O_TIMEOUT:
		if (!cli_number("--timeout", v, 0, 1000000, &n))
			return false;
		o->limits.timeout = (unsigned)n;
		return true;
	case O_MAX_MEMORY:
		if (!cli_size("--max-memory", v, &n))
			return false;
		o->limits.max_memory = n;
		o->max_memory_given = true;
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
		return cli_repeated("ingest", "--runtime", o->runtime_files, &o->nruntime_files,
				    CLI_MAX_RUNTIMES, v);
	case O_SHA256:
		o->sha256 = true;
		return true;
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
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	o->jobs = cpus < 1 ? 1 : cpus > INGEST_MAX_WORKERS ? INGEST_MAX_WORKERS : (unsigned)cpus;
	o->limits.timeout = CLI_DEFAULT_TIMEOUT;
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
		cli_error("ingest", "usage: asyncore ingest --db FILE|URL [--jobs N] [--timeout SECONDS] "
				    "[--max-memory SIZE] [--binary BIN | --sysroot DIR] [--debug-dir DIR]... "
				    "[--signature-lists DIR] [--journal [--journal-dir DIR]] "
				    "[--runtime FILE]... [--sha256] [--quiet] CORE... | DIR");
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

static double elapsed(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* Create or migrate the store once, before the workers open it. */
static int prepare_store(const char *db)
{
	struct rep_store *st = NULL;
	char why[512];
	if (rep_store_open(db, &st, why, sizeof(why)) != 0) {
		fprintf(stderr, "asyncore: %s\n", why);
		return -1;
	}
	rep_store_close(st);
	return 0;
}

static void print_summary(const struct ingest_opts *o, const struct ingest_tally *t, double secs)
{
	printf("ingested %zu, already present %zu, failed %zu of %zu cores in %.2f s (%.1f cores/s)%s\n",
	       t->stored, t->present, t->failed, o->npaths, secs, secs > 0 ? (double)t->done / secs : 0.0,
	       t->interrupted ? "; interrupted, the rest not started" : "");
	printf("debug info: %zu files opened, %zu with DWARF parsed, each at most once per worker "
	       "(%u worker%s)\n", t->debug_files, t->dwarf_parsed, o->jobs, o->jobs == 1 ? "" : "s");
}

int cli_ingest(int argc, char **argv)
{
	struct ingest_opts o = {0};
	struct ingest_tally t = {0};
	struct timespec start, end;
	int status = CLI_EXIT_UNUSABLE;
	if (parse_args(argc, argv, &o) != 0)
		goto out;
	if (!(o.runtimes = cli_runtimes_load(o.runtime_files, o.nruntime_files)) ||
	    prepare_store(o.db) != 0)
		goto out;
	if (o.jobs > o.npaths && o.npaths > 0)
		o.jobs = (unsigned)o.npaths;
	if (!o.max_memory_given)
		o.limits.max_memory = cli_default_max_memory(o.jobs);
	clock_gettime(CLOCK_MONOTONIC, &start);
	int rc = o.npaths ? ingest_supervise(&o, &t) : 0;
	clock_gettime(CLOCK_MONOTONIC, &end);
	if (!o.quiet)
		print_summary(&o, &t, elapsed(&start, &end));
	fflush(stdout);
	if (t.interrupted)
		status = 130;   /* as a shell reports a command stopped by Ctrl-C */
	else if (rc != 0 || t.store_failed)
		status = CLI_EXIT_UNUSABLE;
	else
		status = t.failed ? CLI_EXIT_WARNINGS : CLI_EXIT_OK;
out:
	opts_free(&o);
	return status;
}
