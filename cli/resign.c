/* `asyncore resign`: symbolize again the stored frames of modules whose
 * debug info turned up after their cores were stored (dwarf/'s lookup,
 * the analyzer's symbolization), then recompute every stored signature
 * from the stored frames, with the analyzer's own signature function and
 * the lists given. */
#include "cli.h"
#include "resign.h"

#include <stdlib.h>
#include <string.h>

#include "../analyzer/frames.h"
#include "../analyzer/signature.h"
#include "../base/array.h"
#include "../dwarf/dwarf.h"
#include "../reports/store_resign.h"
#include "options.h"

enum resign_option { O_DB, O_SIGNATURE_LISTS, O_DEBUG_DIR };

static const struct cli_option resign_options[] = {
	{"--db", true, O_DB},
	{"--signature-lists", true, O_SIGNATURE_LISTS},
	{"--debug-dir", true, O_DEBUG_DIR},
	{NULL, false, 0},
};

/* A build-id's debug info, as found. */
struct found_file {
	char *build_id;
	struct dbg_file *file;      /* the cache's */
};

struct resign {
	struct an_signature_lists *lists;
	struct dbg_cache *cache;
	struct found_file *files;
	size_t nfiles, cap;
	size_t warnings;
	const struct rep_stored_module *modules;    /* the core being symbolized again */
	size_t nmodules;
};

struct an_signature_input cli_stored_signature_input(const struct rep_stored_crash *c)
{
	size_t start = an_signature_start(c->frames, c->nframes);
	struct an_signature_input in = {
		.frames = c->frames ? c->frames + start : NULL,
		.nframes = c->nframes - start,
		.collapsed_at = c->collapsed_at > start ? c->collapsed_at - start : 0,
	};
	an_signature_set_signal(&in, &c->signals);
	return in;
}

/* The analyzer's signature of a core the store read back. */
static int sign_stored(void *ctx, const struct rep_stored_crash *c, char **signature, char **hash)
{
	struct resign *r = ctx;
	const struct an_signature_input in = cli_stored_signature_input(c);
	return an_signature_of(&in, r->lists, signature, hash);
}

static struct dbg_file *file_of(struct resign *r, const char *build_id)
{
	for (size_t i = 0; i < r->nfiles; i++)
		if (strcmp(r->files[i].build_id, build_id) == 0)
			return r->files[i].file;
	return NULL;
}

/* The debug info of a module stored without it, looked up as a report
 * looks it up; a file passed over for its build-id is a warning. */
static char *find_debuginfo(void *ctx, const char *build_id, const char *path)
{
	struct resign *r = ctx;
	char *warning = NULL;
	struct dbg_file *f = dbg_cache_find_module(r->cache, build_id, path, &warning);
	if (warning) {
		fprintf(stderr, "asyncore: warning: %s\n", warning);
		r->warnings++;
		free(warning);
	}
	if (!f || file_of(r, build_id))
		return f ? strdup(dbg_file_debuginfo(f)) : NULL;
	struct found_file *ff = base_array_push(&r->files, &r->nfiles, &r->cap, sizeof(*ff));
	char *debuginfo = ff ? strdup(dbg_file_debuginfo(f)) : NULL;
	if (ff && (!debuginfo || !(ff->build_id = strdup(build_id)))) {
		r->nfiles--;   /* not found after all: out of memory */
		free(debuginfo);
		return NULL;
	}
	if (ff)
		ff->file = f;
	return debuginfo;
}

/* The debug info of a stored frame's module, when it was found. */
static struct dbg_file *frame_debug(void *ctx, const struct an_frame *frame)
{
	struct resign *r = ctx;
	for (size_t i = 0; i < r->nmodules; i++) {
		const struct rep_stored_module *m = &r->modules[i];
		if (strcmp(frame->module, m->path) == 0 && frame->module_offset < m->end - m->start)
			return file_of(r, m->build_id);
	}
	return NULL;
}

static int resymbolize(void *ctx, const struct rep_stored_module *modules, size_t nmodules,
		       struct an_frame **frames, size_t *n, struct an_index_gap *gap)
{
	struct resign *r = ctx;
	r->modules = modules;
	r->nmodules = nmodules;
	return an_frames_resymbolize(r->cache, frames, n, gap, frame_debug, r);
}

static int parse(int argc, char **argv, const char **db, const char **lists_dir,
		 const char **debug_dirs, size_t *ndebug_dirs)
{
	struct cli_args args;
	const char *v;
	int id;
	cli_args_init(&args, "resign", argc, argv);
	while ((id = cli_next(&args, resign_options, &v)) != CLI_END) {
		if (id == CLI_ERROR)
			return -1;
		if (id == O_DB) {
			*db = v;
		} else if (id == O_SIGNATURE_LISTS) {
			*lists_dir = v;
		} else if (id == O_DEBUG_DIR) {
			if (!cli_repeated("resign", "--debug-dir", debug_dirs, ndebug_dirs,
					  CLI_MAX_DEBUG_DIRS, v))
				return -1;
		} else {
			cli_error("resign", "unexpected argument %s", v);
			return -1;
		}
	}
	if (!*db) {
		cli_error("resign", "usage: asyncore resign --db FILE|URL [--signature-lists DIR]"
				    " [--debug-dir DIR]...");
		return -1;
	}
	return 0;
}

int cli_resign(int argc, char **argv)
{
	const char *db = NULL, *lists_dir = NULL, *debug_dirs[CLI_MAX_DEBUG_DIRS];
	size_t ndebug_dirs = 0;
	struct resign r = {0};
	struct rep_store *st = NULL;
	struct rep_resign_result out;
	char why[512];
	int status = CLI_EXIT_UNUSABLE;
	if (parse(argc, argv, &db, &lists_dir, debug_dirs, &ndebug_dirs) != 0 ||
	    cli_signature_lists(lists_dir, &r.lists) != 0)
		goto out;
	if (!(r.cache = dbg_cache_create()) ||
	    dbg_cache_set_debug_dirs(r.cache, debug_dirs, ndebug_dirs) != NULL) {
		fprintf(stderr, "asyncore: out of memory\n");
		goto out;
	}
	const struct rep_resign_fns fns = {sign_stored, find_debuginfo, resymbolize, &r};
	if (rep_store_open(db, &st, why, sizeof(why)) != 0 ||
	    rep_store_resign(st, &fns, &out, why, sizeof(why)) != 0) {
		fprintf(stderr, "asyncore: %s\n", why);
		goto out;
	}
	if (out.modules_found)
		printf("debug info found for %zu modules: %zu frames of %zu cores symbolized again\n",
		       out.modules_found, out.frames_symbolized, out.cores_symbolized);
	printf("resigned %zu cores, %zu signatures changed; buckets %zu -> %zu: %zu merged, %zu split\n",
	       out.cores, out.changed, out.buckets_before, out.buckets_after, out.merged, out.split);
	status = r.warnings ? CLI_EXIT_WARNINGS : CLI_EXIT_OK;
out:
	rep_store_close(st);
	for (size_t i = 0; i < r.nfiles; i++)
		free(r.files[i].build_id);
	free(r.files);
	dbg_cache_destroy(r.cache);
	an_signature_lists_destroy(r.lists);
	return status;
}
