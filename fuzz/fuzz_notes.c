/* libFuzzer harness for the notes reader (corefile/notes.h): the input is
 * the contents of one PT_NOTE segment, parsed into an empty core (threads,
 * siginfo, psinfo, auxv, NT_FILE mappings) of each architecture in turn,
 * then looked up as the analysis does.  The input is copied to a buffer of
 * its exact size, so a read past the end of a note is caught. */
#include <stdlib.h>
#include <string.h>

#include "../corefile/core.h"

static void parse_as(const struct core_arch *arch, const uint8_t *data, size_t size)
{
	struct core *core = calloc(1, sizeof(*core));
	unsigned char *buf = malloc(size ? size : 1);
	if (!core || !buf)
		abort();
	memcpy(buf, data, size);
	core->arch = arch;
	core->reader = (struct core_reader){ &core_segments_reader, core };
	struct core_error *err = core_parse_notes(core, buf, size);
	core_error_destroy(err);
	(void)core_executable(core);
	for (size_t i = 0; i < core->nfiles; i++) {
		(void)core_find_file(core, core->files[i].start);
		(void)core_find_file(core, core->files[i].end - 1);
	}
	for (size_t i = 0; i < core->nthreads; i++) {
		uint64_t tp;
		(void)core_thread_pc(core, &core->threads[i]);
		(void)core_thread_tp(core, &core->threads[i], &tp);
	}
	free(buf);
	core_close(core);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	parse_as(&core_arch_x86_64, data, size);
	parse_as(&core_arch_aarch64, data, size);
	return 0;
}
