/* `report --pid` and `snapshot`: a running process stopped only while the
 * analysis reads it. */
#include "live.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../analyzer/cause.h"
#include "../reports/report.h"
#include "cli.h"
#include "options.h"
#include "runtimes.h"
#include "test_hooks.h"

/* What the analysis added to the core's warnings after it took them (the
 * detach's) joins its own. */
static bool take_late_warnings(struct analysis *an, struct core *core)
{
	if (!core->nwarnings)
		return true;
	char **w = realloc(an->warnings, (an->nwarnings + core->nwarnings) * sizeof(*w));
	if (!w)
		return false;
	memcpy(w + an->nwarnings, core->warnings, core->nwarnings * sizeof(*w));
	an->warnings = w;
	an->nwarnings += core->nwarnings;
	free(core->warnings);
	core->warnings = NULL;
	core->nwarnings = 0;
	return true;
}

/* The same analysis on the running process first (the threads blocked in
 * a system call show where they are without a stop), which leaves in CACHE
 * the debug information, indexes and symbols the analysis of the stopped
 * process will look up, and in LIVE the pages it read (read again while
 * stopped).  Returns that analysis (the caller destroys it), or NULL. */
static struct analysis *warm_up(struct core_live *live, const struct an_options *opts,
				struct dbg_cache *cache)
{
	struct core *core = NULL;
	struct analysis *an = NULL;
	struct core_identity id;
	if (!core_live_warm_begin(live))
		return NULL;
	struct core_error *err = core_live_open_core(live, &core);
	if (!err) {
		core_identity(core, &id);
		err = an_analyze(core, &id, opts, cache, &an);
	}
	core_error_destroy(err);
	core_close(core);
	core_live_warm_end(live);
	return an;
}

/* Whether WARM lists tasks other than goroutines. */
static bool has_other_tasks(const struct analysis *warm)
{
	for (size_t i = 0; i < warm->ntasks; i++)
		if (!warm->tasks[i].runtime || strcmp(warm->tasks[i].runtime, "go") != 0)
			return true;
	return false;
}

/* Whether the analysis, run after the detach, must run again on a second
 * stop when it wanted a page the stop did not read: when it follows
 * structures (async stacks, bthreads, runtimes' frames, recorder rings)
 * that may have moved since the warm-up, or when the warm-up did not know
 * where a thread was (running user code: what its frames point to was not
 * read).  Otherwise what it needs is the stacks, read whole above each
 * stack pointer, and the pages the warm-up read.  A Go program's goroutines are such
 * pages (allgs, each g, each parked stack from its saved stack pointer): a
 * goroutine made or moved since the warm-up reads as missing, never as
 * another moment's. */
static bool needs_stopped_analysis(const struct core_live *live, const struct analysis *warm)
{
	if (!warm || !core_live_warm_all_threads(live) || (warm->async_key_found && warm->async_key != 0xffffffffu) ||
	    has_other_tasks(warm) || warm->nrecorders || warm->nsuspended)
		return true;
	for (size_t i = 0; i < warm->nthreads; i++)
		for (size_t k = 0; k < warm->threads[i].nframes; k++)
			if (warm->threads[i].frames[k].kind != AN_FRAME_NATIVE)
				return true;
	return false;
}

/* The addresses of the asyncio tasks WARM found (*N of them; a
 * one-element array when none, so that NULL says only out of memory). */
static uint64_t *asyncio_known(const struct analysis *warm, size_t *n)
{
	uint64_t *v = malloc((warm->ntasks + 1) * sizeof(*v));
	*n = 0;
	for (size_t i = 0; v && i < warm->ntasks; i++)
		if (warm->tasks[i].runtime && strcmp(warm->tasks[i].runtime, "asyncio") == 0)
			v[(*n)++] = warm->tasks[i].address;
	return v;
}

/* LIVE, stopped, analysed (detached after, if it was not yet). */
static struct core_error *analyze_stop(struct core_live *live, pid_t pid, pid_t first_tid,
				       const struct an_options *opts, struct dbg_cache *cache,
				       struct core **core, struct analysis **an)
{
	struct core_identity id;
	struct core_error *err = NULL;
	if (first_tid && !core_live_first_thread(live, first_tid))
		err = core_error_create(CORE_ERROR_USAGE, "--thread %d: process %d has no such thread",
					(int)first_tid, (int)pid);
	if (!err)
		err = core_live_open_core(live, core);
	if (!err) {
		core_identity(*core, &id);
		err = an_analyze(*core, &id, opts, cache, an);
	}
	core_live_detach(live);
	return err;
}

struct core_error *cli_live_analyze(pid_t pid, unsigned max_pause_ms, pid_t first_tid,
				    const struct an_options *opts, bool tasks_from_warm_up,
				    struct core_live **livep, struct analysis **anp)
{
	*livep = NULL;
	*anp = NULL;
	struct core_live *live = NULL;
	struct core *core = NULL;
	struct analysis *an = NULL;
	uint64_t *known = NULL;
	struct an_options warm_opts = *opts, stopped_opts = *opts;
	struct dbg_cache *cache = dbg_cache_create();
	if (!cache)
		return &core_error_nomem;
	struct core_error *err = core_live_inspect(pid, max_pause_ms, &live);
	if (err)
		goto out;
	/* report --pid: the warm-up's walk of asyncio's collector lists is not
	 * read again at the stop, which reads only the tasks it found (a
	 * snapshot keeps the whole walk, for its reader) */
	warm_opts.asyncio.transient = tasks_from_warm_up;
	struct analysis *warm = warm_up(live, &warm_opts, cache);
	known = warm && tasks_from_warm_up ? asyncio_known(warm, &stopped_opts.asyncio.nknown) : NULL;
	stopped_opts.asyncio.known_only = known != NULL;
	stopped_opts.asyncio.known = known;
	opts = &stopped_opts;
	test_hook_warmed((long)pid);
	bool while_stopped = needs_stopped_analysis(live, warm);
	for (size_t i = 0; warm && i < warm->nruntime_stacks; i++)
		core_live_add_stack(live, warm->runtime_stacks[i].lo, warm->runtime_stacks[i].hi);
	an_analysis_destroy(warm);
	err = core_live_stop(live);
	if (err)
		goto out;
	test_hook_stopped((long)pid);
	/* The analysis runs after the detach, over what the stop read; one
	 * that follows structures of the stop's moment and wanted a page the
	 * stop did not read is run again on a second stop, stopped, that page
	 * read then. */
	core_live_detach(live);
	err = analyze_stop(live, pid, first_tid, opts, cache, &core, &an);
	if (!err && while_stopped && core_live_missed(live) && core_live_again(live)) {
		an_analysis_destroy(an);
		an = NULL;
		core_close(core);
		core = NULL;
		err = core_live_stop(live);
		if (!err)
			err = analyze_stop(live, pid, first_tid, opts, cache, &core, &an);
	}
	if (err)
		goto out;
	if (core_live_gone(live)) {
		err = core_error_create(CORE_ERROR_USAGE, "process %d exited during the snapshot", (int)pid);
		goto out;
	}
	an->live = true;
	an->pid = pid;
	an->has_pid = true;
	an->paused_us = core_live_paused_us(live);
	an->taken_at = strdup(core_live_taken_at(live));
	if (!an->taken_at || !take_late_warnings(an, core) || !an_cause_hang(an)) {
		err = &core_error_nomem;
		goto out;
	}
	*anp = an;
	an = NULL;
	*livep = live;
	live = NULL;
out:
	core_live_detach(live);
	an_analysis_destroy(an);
	core_close(core);
	core_live_destroy(live);
	dbg_cache_destroy(cache);
	free(known);
	return err;
}

/* ---- snapshot ---------------------------------------------------------- */

enum snapshot_option {
	S_OUTPUT, S_MAX_PAUSE, S_THREAD, S_SYSROOT, S_DEBUG_DIR, S_RUNTIME, S_NO_ASYNC,
	S_NO_RECORDERS, S_NO_TASKS, S_NO_ARGS,
};

static const struct cli_option snapshot_options[] = {
	{"-o", true, S_OUTPUT},
	{"--output", true, S_OUTPUT},
	{"--max-pause", true, S_MAX_PAUSE},
	{"--thread", true, S_THREAD},
	{"--sysroot", true, S_SYSROOT},
	{"--debug-dir", true, S_DEBUG_DIR},
	{"--runtime", true, S_RUNTIME},
	{"--no-async", false, S_NO_ASYNC},
	{"--no-recorders", false, S_NO_RECORDERS},
	{"--no-tasks", false, S_NO_TASKS},
	{"--no-args", false, S_NO_ARGS},
	{NULL, false, 0},
};

struct snapshot_args {
	pid_t pid;
	const char *output;
	unsigned max_pause;
	pid_t thread;
	struct an_options an;
	const char *debug_dirs[CLI_MAX_DEBUG_DIRS];
	const char *runtimes[CLI_MAX_RUNTIMES];
	size_t nruntimes;
};

static bool snapshot_option(struct snapshot_args *a, int id, const char *v)
{
	unsigned long long n;
	switch (id) {
	case S_OUTPUT:
		a->output = v;
		return true;
	case S_MAX_PAUSE:
		if (!cli_number("--max-pause", v, 0, 3600000, &n))
			return false;
		a->max_pause = (unsigned)n;
		return true;
	case S_THREAD:
		if (!cli_number("--thread", v, 1, 0x7fffffff, &n))
			return false;
		a->thread = (pid_t)n;
		return true;
	case S_SYSROOT:
		a->an.dbg.sysroot = v;
		return true;
	case S_DEBUG_DIR:
		return cli_repeated("snapshot", "--debug-dir", a->debug_dirs, &a->an.dbg.ndebug_dirs,
				    CLI_MAX_DEBUG_DIRS, v);
	case S_RUNTIME:
		return cli_repeated("snapshot", "--runtime", a->runtimes, &a->nruntimes, CLI_MAX_RUNTIMES, v);
	case S_NO_ASYNC:
		a->an.no_async = true;
		return true;
	case S_NO_RECORDERS:
		a->an.no_recorders = true;
		return true;
	case S_NO_TASKS:
		a->an.no_tasks = true;
		return true;
	case S_NO_ARGS:
		a->an.no_args = true;
		return true;
	}
	return false;
}

static bool parse_snapshot_args(struct snapshot_args *a, int argc, char **argv)
{
	struct cli_args args;
	const char *v;
	int id;
	unsigned long long n;
	memset(a, 0, sizeof(*a));
	a->max_pause = CLI_DEFAULT_MAX_PAUSE;
	cli_args_init(&args, "snapshot", argc, argv);
	while ((id = cli_next(&args, snapshot_options, &v)) != CLI_END) {
		if (id == CLI_ERROR)
			return false;
		if (id != CLI_POSITIONAL) {
			if (!snapshot_option(a, id, v))
				return false;
		} else if (!a->pid) {
			if (!cli_number("PID", v, 1, 0x7fffffff, &n))
				return false;
			a->pid = (pid_t)n;
		} else if (!a->an.dbg.binary) {
			a->an.dbg.binary = v;
		} else {
			cli_error("snapshot", "unexpected argument %s", v);
			return false;
		}
	}
	if (!a->pid || !a->output) {
		cli_error("snapshot", "usage: asyncore snapshot PID -o FILE[.zst] [BINARY] [options]");
		return false;
	}
	a->an.dbg.debug_dirs = a->debug_dirs;
	return true;
}

/* Write LIVE's core to PATH (compressed when it ends in .zst). */
static struct core_error *write_snapshot(struct core_live *live, const char *path)
{
	struct core_writer *w = NULL;
	struct core_error *err = core_live_writer(live, &w);
	if (!err)
		err = core_writer_save(w, core_live_read_kept, live, path, NULL);
	core_writer_destroy(w);
	return err;
}

int cli_snapshot(int argc, char **argv)
{
	struct snapshot_args a;
	if (!parse_snapshot_args(&a, argc, argv))
		return CLI_EXIT_UNUSABLE;
	struct an_runtimes *runtimes = cli_runtimes_load(a.runtimes, a.nruntimes);
	if (!runtimes)
		return CLI_EXIT_UNUSABLE;
	a.an.runtimes = runtimes;
	struct core_live *live = NULL;
	struct analysis *an = NULL;
	struct core_error *err = cli_live_analyze(a.pid, a.max_pause, a.thread, &a.an, false, &live, &an);
	an_runtimes_destroy(runtimes);
	if (err) {
		fprintf(stderr, "asyncore: %s\n", err->message);
		core_error_destroy(err);
		return CLI_EXIT_UNUSABLE;
	}
	int rc = an->nwarnings ? CLI_EXIT_WARNINGS : CLI_EXIT_OK;
	rep_warnings_write(stderr, an);
	err = write_snapshot(live, a.output);
	if (err) {
		fprintf(stderr, "asyncore: cannot write the snapshot: %s\n", err->message);
		core_error_destroy(err);
		rc = CLI_EXIT_UNUSABLE;
	} else {
		fprintf(stderr, "asyncore: process %d: %zu threads, %llu KiB read, stopped for %llu.%03llu ms: %s\n",
			(int)a.pid, an->nthreads, (unsigned long long)(core_live_bytes_kept(live) >> 10),
			(unsigned long long)(an->paused_us / 1000), (unsigned long long)(an->paused_us % 1000),
			a.output);
	}
	an_analysis_destroy(an);
	core_live_destroy(live);
	return rc;
}
