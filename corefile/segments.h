/* An ELF core's own memory: its PT_LOAD segments, a minicore's kept
 * pieces, and the pages of mapped files the kernel did not dump
 * (mapped.h), as the core's reader (reader.h); and the recording of what
 * reads served from the core itself, which a minicore keeps. */
#ifndef COREFILE_SEGMENTS_H
#define COREFILE_SEGMENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "target.h"

struct core_writer;

/* The reader of an ELF core's segments; its context is the core. */
extern const struct core_reader_ops core_segments_reader;

/* From now on, note every byte of memory a read serves from the core
 * itself (its saved bytes, not zeros of unsaved memory nor a mapped file) in core->recorder,
 * whose pages a minicore keeps (minicore.h).  The reads the open made are
 * made again.  A no-op for a live process. */
struct core_error *core_record_start(struct core *core);

/* A search of memory (a scan for a marker word) reads much and keeps
 * little: what it reads is not recorded between core_record_pause(),
 * which returns the recorder, and core_record_resume() with it.  A
 * minicore scanned with core_saved_next() finds what its core did: every
 * hit the analysis then looked at was recorded. */
struct core_writer *core_record_pause(struct core *core);
void core_record_resume(struct core *core, struct core_writer *recorder);

/* The next run of SEG's bytes the core saved, from *AT (SEG's vaddr for
 * the first) on: [*AT, *END).  False when there is none left.  A
 * minicore's runs are the pieces it kept. */
bool core_saved_next(const struct core *core, const struct core_segment *seg, uint64_t *at,
		     uint64_t *end);

#endif
