/* A core: the crash or stop of a process as corefile/ reads it, whatever
 * its source, and the header the other modules include.
 *
 * core_open() opens a core file read-only (decompressing .zst/.xz/.gz cores
 * first, converting a minidump), indexes its PT_LOAD segments and parses
 * its notes; core_open_reader() opens one whose memory a reader serves (a
 * running process).  What the core holds is target.h's; its memory is read
 * through memory.h. */
#ifndef COREFILE_CORE_H
#define COREFILE_CORE_H

#include "arch.h"
#include "arches.h"
#include "error.h"
#include "kernel.h"
#include "mapped.h"
#include "memory.h"
#include "notes.h"
#include "reader.h"
#include "segments.h"
#include "signals.h"
#include "target.h"

/* Open the core at PATH.  On success *OUT owns the core (core_close()).
 * Fails with CORE_ERROR_IO (missing/unreadable), CORE_ERROR_FORMAT (not ELF,
 * not ET_CORE, notes unreadable). */
struct core_error *core_open(const char *path, struct core **out);

/* Open the core written at FD (taken over), whose memory is read through
 * READER instead of its segments (a running process: corefile/live.c);
 * NAME stands for the path. */
struct core_error *core_open_reader(const char *name, int fd, const struct core_reader *reader,
				    struct core **out);

/* Release the core; NULL is a no-op. */
void core_close(struct core *core);

#endif
