/* libFuzzer harness: a hostile minidump (corefile/minidump.h) through the
 * whole analysis and both report writers, as `asyncore report FILE.dmp`
 * reads it: the input is the whole file.  See fuzz/README.md for how to
 * build and run it; fuzz/minidump_seed.py makes seeds small enough for it
 * from real minidumps. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "patch.h"

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("ASYNCORE_CACHE_DIR", "", 1);
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		exit(1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = fz_memfd("minidump", data, size, path);
	struct an_options opts = {0};
	fz_analyze_path(path, &opts, NULL, devnull);
	close(fd);
	return 0;
}
