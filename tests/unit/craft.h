/* Crafted ELF cores for the unit tests: note buffers, PT_LOAD segments whose
 * bytes the test lays out, an executable mapped the way the kernel saves
 * one, and a core plus debug-info session opened on the result.
 *
 * Helpers report a problem by returning false or NULL (with a line on
 * stderr); the tests turn that into a FAIL. */
#ifndef TESTS_UNIT_CRAFT_H
#define TESTS_UNIT_CRAFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../corefile/core.h"
#include "../../dwarf/dwarf.h"

/* A growable buffer of ELF notes, 4-byte aligned as in a core's PT_NOTE. */
struct craft_notes {
	unsigned char *data;
	size_t len, cap;
};

/* Append a note NAME/TYPE with DLEN bytes of DESC. */
void craft_note(struct craft_notes *n, const char *name, uint32_t type, const void *desc,
		uint32_t dlen);

/* Append LEN raw bytes (for notes broken on purpose). */
void craft_raw(struct craft_notes *n, const void *bytes, size_t len);

/* Append an NT_PRSTATUS for thread TID stopped by SIGNO, with REGS
 * (CORE_REG_COUNT values in user_regs_struct order). */
void craft_prstatus(struct craft_notes *n, int32_t tid, int signo, const uint64_t *regs);

void craft_notes_reset(struct craft_notes *n);
void craft_notes_free(struct craft_notes *n);

/* A core being built; craft_destroy() frees it. */
struct craft_core;

struct craft_core *craft_create(void);
void craft_destroy(struct craft_core *c);

/* The core's note buffer: threads and any other notes go here.  NT_FILE
 * and NT_AUXV are added by craft_write() from craft_map_executable(). */
struct craft_notes *craft_notes(struct craft_core *c);

/* Add a zero-filled PT_LOAD segment [VADDR, VADDR+SIZE) with FLAGS (PF_R,
 * PF_W, PF_X); false when it overlaps another. */
bool craft_segment(struct craft_core *c, uint64_t vaddr, size_t size, uint32_t flags);

/* The bytes [ADDR, ADDR+LEN) inside one segment, for the test to fill;
 * NULL when they are not all in one segment.  Any failed store or
 * allocation marks the core broken: craft_open() then refuses it. */
void *craft_bytes(struct craft_core *c, uint64_t addr, size_t len);

/* Store a value at target address ADDR; false when ADDR is not mapped. */
bool craft_u64(struct craft_core *c, uint64_t addr, uint64_t value);
bool craft_u32(struct craft_core *c, uint64_t addr, uint32_t value);
bool craft_string(struct craft_core *c, uint64_t addr, const char *s);

/* A writable segment [VADDR, VADDR+SIZE) that craft_alloc() hands out. */
bool craft_heap(struct craft_core *c, uint64_t vaddr, size_t size);

/* SIZE zeroed bytes of the heap, 16-aligned: their target address. */
uint64_t craft_alloc(struct craft_core *c, size_t size);

/* A copy of S in the heap: its target address. */
uint64_t craft_alloc_string(struct craft_core *c, const char *s);

/* Map the ELF executable at PATH at load bias BIAS as the kernel does: one
 * segment per PT_LOAD (its file bytes, .bss as zeros), one NT_FILE entry
 * each, and AT_PHDR/AT_PHENT/AT_PHNUM/AT_ENTRY/AT_PAGESZ in NT_AUXV. */
bool craft_map_executable(struct craft_core *c, const char *path, uint64_t bias);

/* Write the core to PATH; false on error. */
bool craft_write(struct craft_core *c, const char *path);

/* A crafted core opened as the analysis opens one. */
struct craft_session {
	char dir[64];               /* temporary directory holding the core */
	char path[96];
	struct core *core;
	struct dbg_session *s;
};

/* Write C into a temporary directory, core_open() it and open a dbg_session
 * on it (no binary given: modules come from the core).  False on error
 * (*OUT is then closed). */
bool craft_open(struct craft_core *c, struct craft_session *out);

/* Close the session and the core and remove the temporary files. */
void craft_close(struct craft_session *cs);

/* Where crafted cores load the fixture program (tests/unit/data). */
#define CRAFT_FIXTURE_BIAS 0x555555554000ull

/* The fixture program's symbol NAME at CRAFT_FIXTURE_BIAS: its runtime
 * address (a line on stderr when it has no such symbol). */
uint64_t craft_fixture_symbol(const char *name);

/* Call RUN for each build of the fixture program, with its path and name:
 * "unit_fixture" (DEBUG: DWARF and .symtab), then "unit_fixture.stripped"
 * (.dynsym only). */
void craft_each_fixture(void (*run)(const char *path, const char *name, bool debug));

/* Absolute path of NAME among the unit tests' data files, which the
 * Makefile builds next to the test binaries (build/unit/data/NAME);
 * a static buffer. */
const char *craft_data_path(const char *name);

/* The symbol NAME in the ELF file at PATH, read with libelf (.symtab, else
 * .dynsym): *VALUE is st_value (a file address; a TLS offset for STT_TLS). */
bool craft_elf_symbol(const char *path, const char *name, uint64_t *value, uint64_t *size);

/* The ELF file's PT_TLS p_memsz and p_align. */
bool craft_elf_tls(const char *path, uint64_t *memsz, uint64_t *align);

#endif
