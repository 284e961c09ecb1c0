/* Where a core's memory comes from: the one interface every source of a
 * target implements.  An ELF core (or a minidump, converted into one) reads
 * its segments (segments.h); a running process reads its memory through
 * /proc (live.c, opened with core_open_reader()).  Everything that reads a
 * core goes through memory.h, which asks the reader: nothing above it knows
 * which source it has. */
#ifndef COREFILE_READER_H
#define COREFILE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct core;
struct core_error;

struct core_reader_ops {
	/* Up to LEN bytes at ADDR into BUF, the run one place holds: how many
	 * were read before the first fault (0: ADDR faults).  Memory.h reads
	 * on from where a run ends. */
	size_t (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	/* As read, of the bytes the source itself holds, never a mapped file
	 * on disk: true when all LEN were.  NULL: read's. */
	bool (*read_saved)(const void *ctx, uint64_t addr, void *buf, size_t len);
	/* Where this host reads the file the target maps as RECORDED (borrowed);
	 * NULL (or a NULL op) when unknown. */
	const char *(*file_path)(void *ctx, const char *recorded);
	/* CLOCK_MONOTONIC's nanoseconds when the target was stopped; 0: unknown. */
	uint64_t (*stopped_ns)(const void *ctx);
	/* Whether the target was read while it ran. */
	bool (*running)(const void *ctx);
	/* ON: what is read from now on (until OFF) need not be read again when
	 * the target is stopped (a live process's warm-up); NULL: no matter. */
	void (*transient)(void *ctx, bool on);
	/* Start recording what reads serve from the source itself (segments.h);
	 * NULL: the source keeps nothing to record. */
	struct core_error *(*record_start)(void *ctx);
	/* CORE, opened over this reader, is being closed; NULL: nothing to do. */
	void (*closed)(void *ctx, const struct core *core);
};

struct core_reader {
	const struct core_reader_ops *ops;
	void *ctx;                           /* borrowed; it outlives the core */
};

#endif
