/* libFuzzer harness for runtime descriptions (analyzer/rtdesc.c): the input
 * is a description file, checked as --runtime checks it (any JSON, any
 * member, any number, any template).  One that loads is loaded again (a
 * second description of that name is refused) and, with ASYNCORE_FUZZ_BASE,
 * used on that core (the hostile_rt fixture's): resolved against the
 * program's DWARF and layouts, its stacks read and spliced, the reports
 * written. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "patch.h"

static struct {
	const char *base;
	struct dbg_cache *cache;
	FILE *devnull;
} h;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *base = getenv("ASYNCORE_FUZZ_BASE");
	setenv("ASYNCORE_CACHE_DIR", "", 1);
	h.base = base && *base ? base : NULL;
	h.cache = h.base ? dbg_cache_create() : NULL;
	h.devnull = fopen("/dev/null", "w");
	if (!h.devnull)
		exit(1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = fz_memfd("description", data, size, path);
	struct an_runtimes *set = an_runtimes_create();
	if (!set)
		abort();
	struct core_error *err = an_runtimes_load(set, path, false);
	if (!err) {
		core_error_destroy(an_runtimes_load(set, path, false));   /* the same name */
		core_error_destroy(an_runtimes_load(set, path, true));    /* skipped */
		for (size_t i = 0; i < set->n; i++)
			(void)an_rt_layout_type(&set->v[i], set->v[i].stack.type);
		if (h.base) {
			struct an_options opts = {.no_recorders = true, .no_async = true, .no_tasks = true,
						  .no_args = true, .runtimes = set};
			fz_analyze_path(h.base, &opts, h.cache, h.devnull);
		}
	}
	core_error_destroy(err);
	an_runtimes_destroy(set);
	close(fd);
	return 0;
}
