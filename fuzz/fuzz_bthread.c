/* libFuzzer harness for the bthread walk (analyzer/bthread.c): patches
 * (fuzz/patch.h) over a base core of the bthread fixture
 * (ASYNCORE_FUZZ_BASE), written where the walk reads: the TaskMetas and the
 * saved contexts named in ASYNCORE_FUZZ_HOT (fuzz/hot-ranges.sh), the
 * threads' stacks, and the writable segments that hold the resource pool
 * (its block groups and blocks), the task control and its groups with
 * their run queues.  The analysis runs without recorders, the async splice
 * and arguments, so every run is the pool walk, the states, the saved
 * contexts and the unwinding of each suspended bthread. */
#include "patch.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	struct an_options opts = {.no_recorders = true, .no_async = true, .no_args = true};
	fz_harness_init("fuzz_bthread", FZ_REGION_HOT | FZ_REGION_STACKS | FZ_REGION_LOADS, &opts);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_harness_run(data, size);
	return 0;
}
