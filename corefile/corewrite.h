/* The one writer of ELF cores: `snapshot` (a running process), `minicore`
 * and `collect` (a core) describe what to write to it: notes, the target's
 * mappings, and the memory to keep; the bytes are read through a callback
 * only while the file is written.
 *
 * The file: ELF header (the machine given), one PT_NOTE holding the notes
 * in the order they were added, then one PT_LOAD per run of kept pages
 * that lies in one region (a run never crosses a region's bounds and takes
 * its flags; kept pages outside every region are PF_R).  `asyncore`, gdb
 * and libdwfl read it as any core.
 *
 * Minicores (a core's pages that an analysis read) also carry two notes of
 * owner CORE_NOTE_OWNER (core.h): CORE_NOTE_SOURCE, the fingerprint of the
 * core it was cut from, and CORE_NOTE_LAYOUT, that core's segments; see
 * minicore.h. */
#ifndef COREFILE_COREWRITE_H
#define COREFILE_COREWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"

#define CORE_WRITE_PAGE 4096u

struct core_writer;

/* Read LEN bytes of the target at ADDR into BUF; false when they cannot
 * be read (the writer then writes zeros). */
typedef bool core_writer_read_fn(void *ctx, uint64_t addr, void *buf, size_t len);

/* A writer of a core for ELF machine MACHINE (EM_X86_64, EM_AARCH64).
 * *OUT is owned by the caller (core_writer_destroy()). */
struct core_error *core_writer_create(uint16_t machine, struct core_writer **out);

/* Free W; NULL is a no-op. */
void core_writer_destroy(struct core_writer *w);

/* Append a note (OWNER "CORE" for the kernel's own types); DESC is copied.
 * An out-of-memory is remembered and reported by the write. */
void core_writer_add_note(struct core_writer *w, const char *owner, uint32_t type, const void *desc,
			  size_t len);

/* A file the target maps: [START, END) from byte OFFSET of PATH. */
struct core_write_file {
	uint64_t start, end, offset;
	const char *path;
};

/* Append the NT_FILE note of the N FILES the target maps (page offsets in
 * CORE_WRITE_PAGE units, as the kernel writes them). */
void core_writer_add_files(struct core_writer *w, const struct core_write_file *files, size_t n);

/* A mapping of the target, [START, END) with PF_R | PF_W | PF_X FLAGS.
 * Regions are added in any order and must not overlap. */
void core_writer_add_region(struct core_writer *w, uint64_t start, uint64_t end, uint32_t flags);

/* Write every read-only region whole, as the kernel does: the parts no
 * kept page lies in as PT_LOADs without bytes, which a reader takes from
 * the mapped file (a minidump's code and read-only data), not only the
 * kept runs.  A writable region's unkept parts stay out: what it held is
 * unknown.  Kept pages that are all zero bytes are written without them
 * too (they read as zeros). */
void core_writer_whole_regions(struct core_writer *w);

/* Keep the pages holding [ADDR, ADDR + LEN). */
void core_writer_keep(struct core_writer *w, uint64_t addr, uint64_t len);

/* Keep every page FROM keeps (a recorder's: core_record_start()). */
void core_writer_merge(struct core_writer *w, const struct core_writer *from);

/* True when the page holding ADDR is kept. */
bool core_writer_kept(const struct core_writer *w, uint64_t addr);

/* Bytes of memory kept so far (whole pages). */
uint64_t core_writer_bytes_kept(const struct core_writer *w);

/* Write the core to OUT (from its current position), reading each kept
 * page through READ(CTX, ...).  NULL, or an error naming what failed. */
struct core_error *core_writer_write(struct core_writer *w, core_writer_read_fn *read, void *ctx,
				     FILE *out);

/* Write the core to PATH, zstd-compressed when PATH ends in ".zst".  It
 * is written beside PATH under a temporary name and renamed, so PATH is
 * never seen half-written; nothing is left behind on failure.  *SIZE (when
 * not NULL) gets the bytes of the file written. */
struct core_error *core_writer_save(struct core_writer *w, core_writer_read_fn *read, void *ctx,
				    const char *path, uint64_t *size);

/* Compress the file IN (from its start) into OUT (from its position) as
 * one zstd frame at LEVEL, OUT flushed; 0 or -1 (errno). */
int core_zstd_compress(FILE *in, FILE *out, int level);

#endif
