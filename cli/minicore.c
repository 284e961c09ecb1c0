/* `asyncore minicore`: the analysis of a core, run for what it reads. */
#include "minicore.h"

#include <stdio.h>
#include <string.h>

#include "../analyzer/driver.h"
#include "../corefile/identity.h"
#include "../corefile/minicore.h"
#include "../reports/bytes.h"
#include "../reports/report.h"
#include "cli.h"
#include "options.h"
#include "runtimes.h"

enum minicore_option {
	M_OUTPUT, M_SYSROOT, M_DEBUG_DIR, M_RUNTIME, M_NO_ASYNC, M_NO_RECORDERS, M_NO_TASKS, M_NO_ARGS,
	M_NO_LOCALS, M_MAX_FRAMES,
};

static const struct cli_option minicore_options[] = {
	{"-o", true, M_OUTPUT},
	{"--output", true, M_OUTPUT},
	{"--sysroot", true, M_SYSROOT},
	{"--debug-dir", true, M_DEBUG_DIR},
	{"--runtime", true, M_RUNTIME},
	{"--max-frames", true, M_MAX_FRAMES},
	{"--no-async", false, M_NO_ASYNC},
	{"--no-recorders", false, M_NO_RECORDERS},
	{"--no-tasks", false, M_NO_TASKS},
	{"--no-args", false, M_NO_ARGS},
	{"--no-locals", false, M_NO_LOCALS},
	{NULL, false, 0},
};

struct minicore_args {
	const char *core;
	const char *output;
	struct an_options an;
	const char *debug_dirs[CLI_MAX_DEBUG_DIRS];
	const char *runtimes[CLI_MAX_RUNTIMES];
	size_t nruntimes;
};

static bool minicore_option(struct minicore_args *a, int id, const char *v)
{
	unsigned long long n;
	switch (id) {
	case M_OUTPUT:
		a->output = v;
		return true;
	case M_SYSROOT:
		a->an.dbg.sysroot = v;
		return true;
	case M_DEBUG_DIR:
		return cli_repeated("minicore", "--debug-dir", a->debug_dirs, &a->an.dbg.ndebug_dirs,
				    CLI_MAX_DEBUG_DIRS, v);
	case M_RUNTIME:
		return cli_repeated("minicore", "--runtime", a->runtimes, &a->nruntimes, CLI_MAX_RUNTIMES, v);
	case M_MAX_FRAMES:
		if (!cli_number("--max-frames", v, 1, 1000000, &n))
			return false;
		a->an.dbg.max_frames = (unsigned)n;
		return true;
	case M_NO_ASYNC:
		a->an.no_async = true;
		return true;
	case M_NO_RECORDERS:
		a->an.no_recorders = true;
		return true;
	case M_NO_TASKS:
		a->an.no_tasks = true;
		return true;
	case M_NO_ARGS:
		a->an.no_args = true;
		return true;
	case M_NO_LOCALS:
		a->an.locals = a->an.locals_all = false;
		return true;
	}
	return false;
}

/* Every thread's locals are read unless --no-locals: `report --locals`
 * of the minicore then shows what the core's does. */
static bool parse_minicore_args(struct minicore_args *a, int argc, char **argv)
{
	struct cli_args args;
	const char *v;
	int id;
	memset(a, 0, sizeof(*a));
	a->an.locals = a->an.locals_all = true;
	cli_args_init(&args, "minicore", argc, argv);
	while ((id = cli_next(&args, minicore_options, &v)) != CLI_END) {
		if (id == CLI_ERROR)
			return false;
		if (id != CLI_POSITIONAL) {
			if (!minicore_option(a, id, v))
				return false;
		} else if (!a->core) {
			a->core = v;
		} else if (!a->an.dbg.binary) {
			a->an.dbg.binary = v;
		} else {
			cli_error("minicore", "unexpected argument %s", v);
			return false;
		}
	}
	if (!a->core || !a->output) {
		cli_error("minicore", "usage: asyncore minicore CORE [BINARY] -o FILE[.zst] [options]");
		return false;
	}
	a->an.dbg.debug_dirs = a->debug_dirs;
	return true;
}

/* Open CORE, record what the analysis reads, write the minicore. */
static struct core_error *cut(const struct minicore_args *a, struct analysis **an, uint64_t *size,
			      uint64_t *kept, uint64_t *core_size)
{
	struct core *core = NULL;
	struct core_identity id;
	struct core_error *err = core_open(a->core, &core);
	if (!err) {
		core_identity(core, &id);
		*core_size = id.size;
		err = core_record_start(core);
	}
	if (!err)
		err = an_analyze(core, &id, &a->an, NULL, an);
	if (!err)
		err = core_minicore_save(core, id.fingerprint, a->output, size, kept);
	core_close(core);
	return err;
}

int cli_minicore(int argc, char **argv)
{
	struct minicore_args a;
	if (!parse_minicore_args(&a, argc, argv))
		return CLI_EXIT_UNUSABLE;
	struct an_runtimes *runtimes = cli_runtimes_load(a.runtimes, a.nruntimes);
	if (!runtimes)
		return CLI_EXIT_UNUSABLE;
	a.an.runtimes = runtimes;
	struct analysis *an = NULL;
	uint64_t size = 0, kept = 0, core_size = 0;
	struct core_error *err = cut(&a, &an, &size, &kept, &core_size);
	an_runtimes_destroy(runtimes);
	if (err) {
		rep_say(stderr, err->message, NULL);
		core_error_destroy(err);
		an_analysis_destroy(an);
		return CLI_EXIT_UNUSABLE;
	}
	int rc = an->nwarnings ? CLI_EXIT_WARNINGS : CLI_EXIT_OK;
	rep_warnings_write(stderr, an);
	fprintf(stderr, "asyncore: %s: %zu threads, %llu KiB of memory kept, %llu KiB written (the core: %llu KiB): %s\n",
		a.core, an->nthreads, (unsigned long long)(kept >> 10), (unsigned long long)(size >> 10),
		(unsigned long long)(core_size >> 10), a.output);
	an_analysis_destroy(an);
	return rc;
}
