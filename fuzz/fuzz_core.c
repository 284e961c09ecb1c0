/* libFuzzer harness: a hostile core through the whole analysis and both
 * report writers.  See fuzz/README.md for how to build and run it.
 *
 * Raw mode (default): the fuzz input is the whole core file.
 *
 * Patch mode (ASYNCORE_FUZZ_BASE=CORE): the input is a list of patches written
 * over a fixed base core (fuzz/patch.h), so that mutations reach the notes,
 * the segment index, the unwinder and the async/recorder walks of a real
 * core without the fuzzer having to carry megabytes.  Patch mode shares one
 * dbg_cache between runs, as an ingest worker does.  The core is analysed
 * from /proc/self/fd/N, so core_open() sees a regular file, as it would from
 * the command line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "patch.h"

static FILE *devnull;
static bool patch_mode;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *base = getenv("ASYNCORE_FUZZ_BASE");
	struct an_options opts = {0};
	patch_mode = base && *base;
	if (patch_mode)
		fz_harness_init("fuzz_core", FZ_REGION_ALL, &opts);
	setenv("ASYNCORE_CACHE_DIR", "", 1);
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		exit(1);
	return 0;
}

static void run_raw(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = fz_memfd("core", data, size, path);
	struct an_options opts = {0};
	fz_analyze_path(path, &opts, NULL, devnull);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (patch_mode)
		fz_harness_run(data, size);
	else
		run_raw(data, size);
	return 0;
}
