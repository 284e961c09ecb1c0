/* libFuzzer harness for the segment index and the bounded reader
 * (corefile/core.h): the input is a whole core file.  Once it opens, every
 * segment is read at its edges and across them, strings, words and build-id
 * notes at addresses the input's last bytes give, pointers checked, and the
 * core's identity taken (its fingerprint samples the file).  Small cores
 * from fuzz/shrink_core.py are the seeds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../corefile/core.h"
#include "../corefile/identity.h"
#include "patch.h"

/* Every kind of read at ADDR. */
static void read_at(struct core *core, uint64_t addr)
{
	unsigned char buf[64];
	char str[128];
	uint64_t word;
	uint32_t half;
	size_t len;
	(void)core_read_bytes(core, addr, buf, sizeof(buf));
	(void)core_read_bytes(core, addr, buf, 1);
	(void)core_read_u64(core, addr, &word);
	(void)core_read_u32(core, addr, &half);
	(void)core_read_string(core, addr, str, sizeof(str));
	(void)core_read_saved(core, addr, buf, 16);
	(void)core_saved_build_id(core, addr, sizeof(buf), buf, &len);
	(void)core_pointer_ok(core, addr, 32, 8);
	(void)core_pointer_problem(core, addr);
	(void)core_find_segment(core, addr);
	(void)core_find_file(core, addr);
	core_error_destroy(core_read(core, addr, buf, 24));
}

static void read_everywhere(struct core *core, const uint8_t *data, size_t size)
{
	for (size_t i = 0; i < core->nsegments; i++) {
		const struct core_segment *s = &core->segments[i];
		read_at(core, s->vaddr);
		read_at(core, s->vaddr + s->filesz - 4);   /* across p_filesz */
		read_at(core, s->vaddr + s->memsz - 4);    /* across the end */
		read_at(core, s->vaddr - 4);
	}
	for (size_t i = 0; i < core->nthreads; i++)
		read_at(core, core_thread_sp(core, &core->threads[i]));
	for (size_t i = 0; size >= 8 && i < 8 && 8 * (i + 1) <= size; i++) {
		uint64_t addr;
		memcpy(&addr, data + size - 8 * (i + 1), 8);
		read_at(core, addr);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = fz_memfd("core", data, size, path);
	struct core *core = NULL;
	struct core_error *err = core_open(path, &core);
	if (!err) {
		struct core_identity id;
		core_identity(core, &id);
		read_everywhere(core, data, size);
	}
	core_error_destroy(err);
	core_close(core);
	close(fd);
	return 0;
}
