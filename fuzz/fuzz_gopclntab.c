/* libFuzzer harness for the Go symbol table reader (dwarf/gopclntab.c): the
 * input is a pclntab (header, function table, names, pc-value tables) that
 * also serves as the function data its inline trees are read from, and as
 * a .go.buildinfo section.  Every lookup runs on whatever parses: each
 * function by index, by pc (its entry, middle and end), by name, its frame
 * size, line and inlined frames. */
#include <stdint.h>
#include <stdlib.h>

#include "../dwarf/gopclntab.h"

enum { VADDR = 0x4b0000, MAX_FUNCS = 4096 };

static void one_func(const struct dbg_gotab *t, const struct dbg_gofunc *f)
{
	uint64_t pcs[3] = { f->entry, f->entry + (f->end - f->entry) / 2, f->end - 1 };
	for (size_t k = 0; k < 3; k++) {
		struct dbg_gofunc g;
		struct dbg_goframe out[16];
		const char *file;
		int line;
		int64_t delta;
		(void)dbg_gotab_func(t, pcs[k], &g);
		(void)dbg_gotab_spdelta(t, f, pcs[k], &delta);
		(void)dbg_gotab_line(t, f, pcs[k], &file, &line);
		(void)dbg_gotab_frames(t, f, pcs[k], out, 16);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	free(dbg_go_buildinfo_version(data, size, NULL, NULL));
	const char *why;
	struct dbg_gotab *t = dbg_gotab_parse(data, size, VADDR, 0x401000, &why);
	if (!t)
		return 0;
	dbg_gotab_set_funcdata(t, VADDR, data, size, VADDR);
	uint64_t start, end;
	dbg_gotab_text(t, &start, &end);
	size_t n = dbg_gotab_count(t);
	struct dbg_gofunc f;
	for (size_t i = 0; i < n && i < MAX_FUNCS; i++)
		if (dbg_gotab_func_at(t, i, &f))
			one_func(t, &f);
	(void)dbg_gotab_func_named(t, "runtime.goexit", &f);
	dbg_gotab_relocate(t, 0x1000);
	if (dbg_gotab_func_at(t, 0, &f))
		one_func(t, &f);
	dbg_gotab_destroy(t);
	return 0;
}
