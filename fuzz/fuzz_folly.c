/* libFuzzer harness for the folly walk: patches (fuzz/patch.h) over a base
 * core of a program using folly's async-stack ABI (the folly_cpp or folly_c
 * fixture, ASYNCORE_FUZZ_BASE), written only where the walk reads: the
 * threads' stacks (frame records, stackFramePtr targets) and the
 * AsyncStackRoots, frames and suspended leaves named in ASYNCORE_FUZZ_HOT.
 * The analysis runs without recorders and arguments, so every run is the
 * TLS slot lookup, the root chain, the splice and the suspended chains. */
#include "patch.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	struct an_options opts = {.no_recorders = true, .no_args = true};
	fz_harness_init("fuzz_folly", FZ_REGION_STACKS | FZ_REGION_HOT, &opts);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_harness_run(data, size);
	return 0;
}
