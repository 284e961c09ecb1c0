/* asyncore: post-mortem crash analysis of ELF core files.
 *
 * main() and the command dispatch; the one file that wires the layers
 * together (corefile -> dwarf -> analyzer -> reports). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/analyze.h"
#include "reports/fingerprint.h"
#include "reports/query.h"
#include "reports/recdump.h"
#include "reports/report.h"
#include "reports/store.h"

enum { EXIT_OK = 0, EXIT_WARNINGS = 1, EXIT_UNUSABLE = 2 };
enum { MAX_DEBUG_DIRS = 16 };

static const char usage_text[] =
	"usage: asyncore CORE [BINARY]                crash report for one core\n"
	"       asyncore report CORE [BINARY] [options]\n"
	"       asyncore ingest --db FILE [--jobs N] [--binary BIN | --sysroot DIR] CORE...|DIR\n"
	"       asyncore query --db FILE [--format table|csv|json] \"SQL\"\n"
	"       asyncore top --db FILE [--limit N] [--format table|csv|json]\n"
	"\n"
	"report options:\n"
	"  --format text|json        output format (default text)\n"
	"  --threads crashing|all    threads to show (default all)\n"
	"  --recorder-tail N         recorder events shown before the crash (default 20)\n"
	"  --recorder-format=library print the rings in the recorder library's dump format\n"
	"  --sysroot DIR             look for mapped files under DIR\n"
	"  --debug-dir DIR           also look for debug info in DIR (repeatable)\n"
	"  --max-frames N            frames per thread (default 1024)\n"
	"  --no-async                do not splice async (folly) stacks\n"
	"  --no-recorders            do not recover flight-recorder rings\n"
	"  --no-args                 do not show frame arguments\n"
	"  --help, --version\n"
	"exit status: 0 analysed, 1 analysed with warnings, 2 unusable input\n";

struct report_args {
	const char *core;
	const char *binary;
	bool json;
	bool all_threads;
	bool library_dump;
	size_t recorder_tail;
	struct an_options an;
	const char *debug_dirs[MAX_DEBUG_DIRS];
};

/* "--name value" or "--name=value"; advances *I past what it consumed. */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
	size_t len = strlen(name);
	if (strncmp(argv[*i], name, len) != 0)
		return NULL;
	if (argv[*i][len] == '=')
		return argv[*i] + len + 1;
	if (argv[*i][len] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		fprintf(stderr, "asyncore: %s needs a value\n", name);
		exit(EXIT_UNUSABLE);
	}
	return argv[++*i];
}

static size_t parse_count(const char *name, const char *v)
{
	char *end;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (errno || *end || end == v || v[0] == '-') {
		fprintf(stderr, "asyncore: %s: not a count: %s\n", name, v);
		exit(EXIT_UNUSABLE);
	}
	return (size_t)n;
}

static bool parse_flag(struct report_args *a, const char *arg)
{
	if (strcmp(arg, "--no-async") == 0)
		a->an.no_async = true;
	else if (strcmp(arg, "--no-recorders") == 0)
		a->an.no_recorders = true;
	else if (strcmp(arg, "--no-args") == 0)
		a->an.no_args = true;
	else if (strcmp(arg, "--recorder-format=library") == 0)
		a->library_dump = true;
	else
		return false;
	return true;
}

static void parse_valued(struct report_args *a, int argc, char **argv, int *i)
{
	const char *v;
	if ((v = option_value(argc, argv, i, "--format"))) {
		if (strcmp(v, "json") && strcmp(v, "text")) {
			fprintf(stderr, "asyncore: --format must be text or json\n");
			exit(EXIT_UNUSABLE);
		}
		a->json = strcmp(v, "json") == 0;
	} else if ((v = option_value(argc, argv, i, "--threads"))) {
		if (strcmp(v, "all") && strcmp(v, "crashing")) {
			fprintf(stderr, "asyncore: --threads must be crashing or all\n");
			exit(EXIT_UNUSABLE);
		}
		a->all_threads = strcmp(v, "all") == 0;
	} else if ((v = option_value(argc, argv, i, "--recorder-tail"))) {
		a->recorder_tail = parse_count("--recorder-tail", v);
	} else if ((v = option_value(argc, argv, i, "--recorder-format"))) {
		if (strcmp(v, "library")) {
			fprintf(stderr, "asyncore: --recorder-format must be library\n");
			exit(EXIT_UNUSABLE);
		}
		a->library_dump = true;
	} else if ((v = option_value(argc, argv, i, "--sysroot"))) {
		a->an.dbg.sysroot = v;
	} else if ((v = option_value(argc, argv, i, "--debug-dir"))) {
		if (a->an.dbg.ndebug_dirs == MAX_DEBUG_DIRS) {
			fprintf(stderr, "asyncore: at most %d --debug-dir\n", MAX_DEBUG_DIRS);
			exit(EXIT_UNUSABLE);
		}
		a->debug_dirs[a->an.dbg.ndebug_dirs++] = v;
	} else if ((v = option_value(argc, argv, i, "--max-frames"))) {
		size_t n = parse_count("--max-frames", v);
		a->an.dbg.max_frames = n > 1000000 ? 1000000 : (unsigned)(n ? n : 1);
	} else {
		fprintf(stderr, "asyncore: unknown option %s (see --help)\n", argv[*i]);
		exit(EXIT_UNUSABLE);
	}
}

static void parse_report_args(struct report_args *a, int argc, char **argv)
{
	memset(a, 0, sizeof(*a));
	a->all_threads = true;
	a->recorder_tail = 20;
	for (int i = 0; i < argc; i++) {
		const char *arg = argv[i];
		if (arg[0] == '-' && arg[1] == '-') {
			if (!parse_flag(a, arg))
				parse_valued(a, argc, argv, &i);
		} else if (!a->core) {
			a->core = arg;
		} else if (!a->binary) {
			a->binary = arg;
		} else {
			fprintf(stderr, "asyncore: unexpected argument %s\n", arg);
			exit(EXIT_UNUSABLE);
		}
	}
	if (!a->core) {
		fputs(usage_text, stderr);
		exit(EXIT_UNUSABLE);
	}
	a->an.dbg.binary = a->binary;
	a->an.dbg.debug_dirs = a->debug_dirs;
}

static void set_core_hash(struct analysis *an)
{
	char hex[65], why[256];
	uint64_t size;
	if (rep_core_fingerprint(an->core_path, hex, &size, why, sizeof(why)) == 0)
		an->core_sha256 = strdup(hex);
}

static int run_report(int argc, char **argv)
{
	struct report_args a;
	parse_report_args(&a, argc, argv);
	struct analysis *an;
	struct core_error *err = an_analyze(a.core, &a.an, NULL, &an);
	if (err) {
		fprintf(stderr, "asyncore: %s\n", err->message);
		core_error_destroy(err);
		return EXIT_UNUSABLE;
	}
	if (a.json)
		set_core_hash(an);  /* the text report does not show it */
	if (a.library_dump) {
		rep_recorder_dump_library(stdout, an);
	} else if (a.json) {
		rep_json_write(stdout, an, a.all_threads);
	} else {
		struct rep_text_options topts = { .all_threads = a.all_threads,
						  .recorder_tail = a.recorder_tail };
		rep_text_write(stdout, an, &topts);
	}
	int rc = an->nwarnings ? EXIT_WARNINGS : EXIT_OK;
	an_analysis_destroy(an);
	if (fflush(stdout) != 0)
		return EXIT_UNUSABLE;
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage_text, stderr);
		return EXIT_UNUSABLE;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		fputs(usage_text, stdout);
		return EXIT_OK;
	}
	if (strcmp(cmd, "--version") == 0) {
		printf("asyncore %s\n", ASYNCORE_VERSION);
		return EXIT_OK;
	}
	if (strcmp(cmd, "report") == 0)
		return run_report(argc - 2, argv + 2);
	if (strcmp(cmd, "ingest") == 0)
		return rep_ingest_command(argc - 1, argv + 1);
	if (strcmp(cmd, "query") == 0)
		return rep_query_command(argc - 1, argv + 1);
	if (strcmp(cmd, "top") == 0)
		return rep_top_command(argc - 1, argv + 1);
	return run_report(argc - 1, argv + 1);
}
