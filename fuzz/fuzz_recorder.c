/* libFuzzer harness for the recorder recovery: patches (fuzz/patch.h) over a
 * base core of a program with flight-recorder rings (the recorder or elfe
 * fixture, ASYNCORE_FUZZ_BASE), written only over the rings named in
 * ASYNCORE_FUZZ_HOT (recorder_info, ring header and entries: list links,
 * indices, format and string pointers, arguments).  The analysis runs
 * without the async splice and arguments, so every run is the discovery of
 * the rings, the recovery of their entries, the formatting of each message
 * and the merged timeline. */
#include "patch.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	struct an_options opts = {.no_async = true, .no_args = true};
	fz_harness_init("fuzz_recorder", FZ_REGION_HOT, &opts);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_harness_run(data, size);
	return 0;
}
