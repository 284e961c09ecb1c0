/* libFuzzer harness for argument values (dwarf/params*.c, analyzer/args.c)
 * and local variables (dwarf/locals.c), one evaluator:
 * patches (fuzz/patch.h) over a base core of a program whose frames have
 * DWARF locations (the native_args fixture, ASYNCORE_FUZZ_BASE), written
 * over the threads' registers and stacks, where the location expressions
 * read (registers, frame bases, entry values of the callers' call sites,
 * pointers to strings and structures).  The analysis runs without
 * recorders, the async splice and tasks, with arguments and every thread's
 * locals, so every run is the evaluation and the formatting of each frame's
 * parameters and local variables. */
#include "patch.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	struct an_options opts = {.no_recorders = true, .no_async = true, .no_tasks = true,
				  .locals = true, .locals_all = true};
	fz_harness_init("fuzz_args", FZ_REGION_REGS | FZ_REGION_STACKS, &opts);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_harness_run(data, size);
	return 0;
}
