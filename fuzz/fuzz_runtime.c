/* libFuzzer harness for the stacks that runtime descriptions describe
 * (analyzer/runtime*.c): patches (fuzz/patch.h) over a base core
 * (ASYNCORE_FUZZ_BASE, the hostile_rt or toyvm fixture) analysed with the
 * descriptions named in ASYNCORE_FUZZ_RUNTIMES ("FILE:FILE..."), written
 * over the threads' stacks (the anchors) and the writable segments that
 * hold the roots, the stack objects, their entries and strings.  The
 * analysis runs without recorders, the async splice, tasks and arguments,
 * so every run is the roots' lookup, the array and list walks, the fields,
 * the templates and the placement among the native frames. */
#include <stdlib.h>

#include "patch.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	struct an_options opts = {.no_recorders = true, .no_async = true, .no_tasks = true,
				  .no_args = true};
	opts.runtimes = fz_runtimes_from_env("fuzz_runtime");
	if (!opts.runtimes) {
		fprintf(stderr, "fuzz_runtime: set ASYNCORE_FUZZ_RUNTIMES to the descriptions\n");
		exit(1);
	}
	fz_harness_init("fuzz_runtime", FZ_REGION_STACKS | FZ_REGION_LOADS, &opts);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_harness_run(data, size);
	return 0;
}
