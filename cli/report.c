/* `asyncore report`: one core, one report. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../analyzer/driver.h"
#include "../reports/bytes.h"
#include "../reports/recdump.h"
#include "../reports/report.h"
#include "budget.h"
#include "live.h"
#include "options.h"
#include "runtimes.h"

enum report_option {
	O_FORMAT, O_THREADS, O_RECORDER_TAIL, O_RECORDER_FORMAT, O_SYSROOT, O_DEBUG_DIR,
	O_MAX_FRAMES, O_NO_ASYNC, O_NO_RECORDERS, O_NO_ARGS, O_COLOR, O_SIGNATURE_LISTS, O_NO_TASKS,
	O_FRAME_REGISTERS, O_RUNTIME, O_MAX_MEMORY, O_TIMEOUT, O_LOCALS, O_SHA256, O_PID, O_MAX_PAUSE, O_THREAD,
	O_NO_SOURCE,
};

/* --locals [crashing|all]: whose frames' local variables are shown. */
static const char *const locals_choices[] = {"crashing", "all", NULL};

static const struct cli_option report_options[] = {
	{"--format", true, O_FORMAT},
	{"--threads", true, O_THREADS},
	{"--recorder-tail", true, O_RECORDER_TAIL},
	{"--recorder-format", true, O_RECORDER_FORMAT},
	{"--sysroot", true, O_SYSROOT},
	{"--debug-dir", true, O_DEBUG_DIR},
	{"--max-frames", true, O_MAX_FRAMES},
	{"--no-async", false, O_NO_ASYNC},
	{"--no-recorders", false, O_NO_RECORDERS},
	{"--no-args", false, O_NO_ARGS},
	{"--no-tasks", false, O_NO_TASKS},
	{"--no-source", false, O_NO_SOURCE},
	{"--color", true, O_COLOR},
	{"--signature-lists", true, O_SIGNATURE_LISTS},
	{"--frame-registers", false, O_FRAME_REGISTERS},
	{"--runtime", true, O_RUNTIME},
	{"--max-memory", true, O_MAX_MEMORY},
	{"--timeout", true, O_TIMEOUT},
	{"--locals", CLI_OPTIONAL_VALUE, O_LOCALS},
	{"--sha256", false, O_SHA256},
	{"--pid", true, O_PID},
	{"--max-pause", true, O_MAX_PAUSE},
	{"--thread", true, O_THREAD},
	{NULL, false, 0},
};

enum report_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_HTML };
enum color_mode { COLOR_AUTO, COLOR_ALWAYS, COLOR_NEVER };

struct report_args {
	const char *core;
	const char *binary;
	enum report_format format;
	bool all_threads;
	bool each_thread;           /* --threads each: identical stacks not grouped */
	bool library_dump;
	bool frame_registers;
	bool sha256;                /* --sha256: hash the whole file (JSON core.sha256) */
	bool no_source;             /* --no-source: no source lines in text and HTML */
	enum color_mode color;
	size_t recorder_tail;
	struct an_options an;
	const char *debug_dirs[CLI_MAX_DEBUG_DIRS];
	const char *signature_lists;
	const char *runtimes[CLI_MAX_RUNTIMES];
	size_t nruntimes;
	struct cli_limits limits;
	pid_t pid;                  /* --pid: a running process instead of a core */
	unsigned max_pause;
	pid_t thread;               /* --thread: with --pid, the thread a report signs */
};

/* One option's effect; false (reported) when its value is not acceptable. */
static bool apply_option(struct report_args *a, int id, const char *v)
{
	static const char *const formats[] = {"text", "json", "html", NULL};
	static const char *const threads[] = {"crashing", "all", "each", NULL};
	static const char *const recorder_formats[] = {"library", NULL};
	static const char *const colors[] = {"auto", "always", "never", NULL};
	unsigned long long n;
	int k;
	switch (id) {
	case O_FORMAT:
		if ((k = cli_choice("--format", v, formats)) < 0)
			return false;
		a->format = (enum report_format)k;
		return true;
	case O_THREADS:
		if ((k = cli_choice("--threads", v, threads)) < 0)
			return false;
		a->all_threads = k >= 1;
		a->each_thread = k == 2;
		return true;
	case O_RECORDER_TAIL:
		if (!cli_number("--recorder-tail", v, 0, 1000000, &n))
			return false;
		a->recorder_tail = (size_t)n;
		return true;
	case O_RECORDER_FORMAT:
		a->library_dump = cli_choice("--recorder-format", v, recorder_formats) == 0;
		return a->library_dump;
	case O_SYSROOT:
		a->an.dbg.sysroot = v;
		return true;
	case O_DEBUG_DIR:
		return cli_repeated("report", "--debug-dir", a->debug_dirs, &a->an.dbg.ndebug_dirs,
				    CLI_MAX_DEBUG_DIRS, v);
	case O_MAX_FRAMES:
		if (!cli_number("--max-frames", v, 1, 1000000, &n))
			return false;
		a->an.dbg.max_frames = (unsigned)n;
		return true;
	case O_NO_ASYNC:
		a->an.no_async = true;
		return true;
	case O_NO_RECORDERS:
		a->an.no_recorders = true;
		return true;
	case O_NO_ARGS:
		a->an.no_args = true;
		return true;
	case O_NO_TASKS:
		a->an.no_tasks = true;
		return true;
	case O_NO_SOURCE:
		a->no_source = true;
		return true;
	case O_COLOR:
		if ((k = cli_choice("--color", v, colors)) < 0)
			return false;
		a->color = (enum color_mode)k;
		return true;
	case O_SIGNATURE_LISTS:
		a->signature_lists = v;
		return true;
	case O_FRAME_REGISTERS:
		a->frame_registers = true;
		return true;
	case O_RUNTIME:
		return cli_repeated("report", "--runtime", a->runtimes, &a->nruntimes, CLI_MAX_RUNTIMES,
				    v);
	case O_MAX_MEMORY:
		if (!cli_size("--max-memory", v, &n))
			return false;
		a->limits.max_memory = n;
		return true;
	case O_TIMEOUT:
		if (!cli_number("--timeout", v, 0, 1000000, &n))
			return false;
		a->limits.timeout = (unsigned)n;
		return true;
	case O_LOCALS:
		k = v ? cli_choice("--locals", v, locals_choices) : 0;
		a->an.locals = k >= 0;
		a->an.locals_all = k == 1;
		return k >= 0;
	case O_SHA256:
		a->sha256 = true;
		return true;
	case O_PID:
		if (!cli_number("--pid", v, 1, 0x7fffffff, &n))
			return false;
		a->pid = (pid_t)n;
		return true;
	case O_MAX_PAUSE:
		if (!cli_number("--max-pause", v, 0, 3600000, &n))
			return false;
		a->max_pause = (unsigned)n;
		return true;
	case O_THREAD:
		if (!cli_number("--thread", v, 1, 0x7fffffff, &n))
			return false;
		a->thread = (pid_t)n;
		return true;
	}
	return false;
}

static bool parse_report_args(struct report_args *a, int argc, char **argv)
{
	struct cli_args args;
	const char *v;
	int id;
	memset(a, 0, sizeof(*a));
	a->all_threads = true;
	a->recorder_tail = 20;
	a->limits.max_memory = cli_default_max_memory(1);
	a->limits.timeout = CLI_DEFAULT_TIMEOUT;
	a->max_pause = CLI_DEFAULT_MAX_PAUSE;
	cli_args_init(&args, "report", argc, argv);
	while ((id = cli_next(&args, report_options, &v)) != CLI_END) {
		if (id == CLI_ERROR)
			return false;
		if (id == O_LOCALS && !v)
			cli_optional_value(&args, locals_choices, &v);
		if (id != CLI_POSITIONAL) {
			if (!apply_option(a, id, v))
				return false;
		} else if (!a->core && !a->pid) {
			a->core = v;
		} else if (!a->binary) {
			a->binary = v;
		} else {
			cli_error("report", "unexpected argument %s", v);
			return false;
		}
	}
	if (a->pid && a->core && !a->binary) {
		a->binary = a->core;   /* report --pid PID BINARY, the option first */
		a->core = NULL;
	}
	if (a->pid && a->core) {
		cli_error("report", "--pid PID takes no core");
		return false;
	}
	if (a->thread && !a->pid) {
		cli_error("report", "--thread TID needs --pid (a core names its crashing thread)");
		return false;
	}
	if (!a->core && !a->pid) {
		cli_usage(stderr);
		return false;
	}
	a->an.dbg.binary = a->binary;
	a->an.dbg.debug_dirs = a->debug_dirs;
	return true;
}

/* auto: a terminal on stdout, unless NO_COLOR (https://no-color.org) is set
 * or the terminal is "dumb". */
static bool use_color(enum color_mode mode)
{
	const char *no_color = getenv("NO_COLOR"), *term = getenv("TERM");
	if (mode != COLOR_AUTO)
		return mode == COLOR_ALWAYS;
	return isatty(STDOUT_FILENO) && !(no_color && no_color[0]) &&
	       !(term && strcmp(term, "dumb") == 0);
}

/* Write the analysis as asked; 0, or -1 when the writer failed (errno
 * says why). */
static int write_report(const struct report_args *a, const struct analysis *an)
{
	if (a->library_dump)
		return rep_recorder_dump_library(stdout, an);
	if (a->format == FORMAT_JSON)
		return rep_json_write(stdout, an,
				      &(struct rep_json_options){.all_threads = a->all_threads,
								 .frame_registers = a->frame_registers});
	if (a->format == FORMAT_HTML)
		return rep_html_write(stdout, an,
				      &(struct rep_html_options){.all_threads = a->all_threads,
								 .each_thread = a->each_thread,
								 .source = !a->no_source});
	struct rep_text_options topts = {.all_threads = a->all_threads,
					 .each_thread = a->each_thread,
					 .recorder_tail = a->recorder_tail,
					 .color = use_color(a->color),
					 .source = !a->no_source};
	return rep_text_write(stdout, an, &topts);
}

int cli_report(int argc, char **argv)
{
	struct report_args a;
	struct core *core = NULL;
	struct analysis *an = NULL;
	struct core_identity id;
	struct an_signature_lists *lists = NULL;
	struct an_runtimes *runtimes = NULL;
	char why[512];
	if (!parse_report_args(&a, argc, argv) ||
	    cli_signature_lists(a.signature_lists, &lists) != 0)
		return CLI_EXIT_UNUSABLE;
	a.an.signature_lists = lists;
	if (!(runtimes = cli_runtimes_load(a.runtimes, a.nruntimes))) {
		an_signature_lists_destroy(lists);
		return CLI_EXIT_UNUSABLE;
	}
	a.an.runtimes = runtimes;
	if (cli_limit_memory(&a.limits, why, sizeof(why)) != 0) {
		fprintf(stderr, "asyncore: %s\n", why);
		an_signature_lists_destroy(lists);
		an_runtimes_destroy(runtimes);
		return CLI_EXIT_UNUSABLE;
	}
	char what[32];
	snprintf(what, sizeof(what), "process %d", (int)a.pid);
	if (a.pid)
		a.core = what;   /* what messages name */
	cli_guard_begin(a.core, &a.limits, CLI_EXIT_UNUSABLE);
	struct core_live *live = NULL;
	struct core_error *err = a.pid ? cli_live_analyze(a.pid, a.max_pause, a.thread, &a.an, true, &live, &an)
				       : core_open(a.core, &core);
	if (!err && !a.pid) {
		/* The JSON report alone shows the fingerprint. */
		if (a.format == FORMAT_JSON)
			core_identity(core, &id);
		else
			core_identity_basic(core, &id);
		/* Only when asked: it reads every byte of the file, holes included. */
		if (a.sha256)
			core_identity_add_sha256(core);
		err = an_analyze(core, &id, &a.an, NULL, &an);
	}
	core_close(core);
	core_live_destroy(live);
	an_signature_lists_destroy(lists);
	an_runtimes_destroy(runtimes);
	if (err || cli_out_of_memory(NULL)) {
		if (cli_out_of_memory(err))
			rep_say(stderr, a.core, cli_memory_limit_message(&a.limits, why, sizeof(why)));
		else
			rep_say(stderr, err->message, NULL);
		core_error_destroy(err);
		an_analysis_destroy(an);
		cli_guard_end();
		return CLI_EXIT_UNUSABLE;
	}
	int rc = an->nwarnings ? CLI_EXIT_WARNINGS : CLI_EXIT_OK;
	rep_warnings_write(stderr, an);
	errno = 0;
	if (write_report(&a, an) != 0 || fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "asyncore: %s: the report could not be written: %s\n", a.core,
			cli_out_of_memory(NULL) ? cli_memory_limit_message(&a.limits, why, sizeof(why))
						: strerror(errno ? errno : EIO));
		rc = CLI_EXIT_UNUSABLE;
	}
	cli_guard_end();
	an_analysis_destroy(an);
	return rc;
}
