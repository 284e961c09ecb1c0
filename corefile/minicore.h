/* Minicores: a core cut down to what an analysis of it read.
 *
 * Use: core_open(), core_record_start(), the analysis (any that reads the
 * core through corefile/), then core_minicore_save().  The file holds:
 *   - every note of the core (threads' status and registers, siginfo,
 *     auxv, NT_FILE, the architecture's extra notes), a minicore's own
 *     source and layout notes excepted;
 *   - CORE_NOTE_SOURCE: the core's fingerprint, which the minicore reports
 *     as its own (identity.h), so both are one crash in a store;
 *   - CORE_NOTE_LAYOUT: the core's segments, which the minicore presents
 *     as its own, so that what looks at mappings (stack bounds, guard
 *     pages, executable ranges) sees the core's;
 *   - PT_LOADs of the pages the recorded reads were served from the core's
 *     saved bytes (what it did not save reads as zeros or from the mapped
 *     file in both), what libdwfl reads of the core itself to list modules
 *     (the first page of each mapped ELF file the core saved, its notes and
 *     dynamic section; the dynamic linker's link map and its names), and
 *     each thread's stack from its stack pointer to the end of its
 *     mapping, at most CORE_MINICORE_STACK bytes.
 * Pages read from mapped files (text, read-only data) stay out: they are
 * read from the files again, found by path or build-id.  A minicore of a
 * minicore is a minicore of the same source. */
#ifndef COREFILE_MINICORE_H
#define COREFILE_MINICORE_H

#include <stdint.h>

#include "core.h"
#include "corewrite.h"

#define CORE_MINICORE_STACK (1u << 20)

/* A writer (corewrite.h) of CORE's minicore, FINGERPRINT being CORE's own
 * (core_identity()); CORE must be recording (core_record_start()).  Its
 * pages are read through core_minicore_read(CORE).  *OUT is owned by the
 * caller (core_writer_destroy()). */
struct core_error *core_minicore_writer(struct core *core, const char *fingerprint,
					struct core_writer **out);
bool core_minicore_read(void *core, uint64_t addr, void *buf, size_t len);

/* Write CORE's minicore to PATH (zstd-compressed when it ends in ".zst");
 * *SIZE (when not NULL) gets the file's size, *KEPT (when not NULL) the
 * bytes of memory kept. */
struct core_error *core_minicore_save(struct core *core, const char *fingerprint, const char *path,
				      uint64_t *size, uint64_t *kept);

#endif
