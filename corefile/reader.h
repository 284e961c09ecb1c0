/* A source of a core's memory other than the core file's own segments: a
 * running process (live.c).  A core opened over one (core_open_reader())
 * reads its memory, the host paths of its mapped files and the time of its
 * stop through it; nothing that reads the core knows which source it has. */
#ifndef COREFILE_READER_H
#define COREFILE_READER_H

#include <stddef.h>
#include <stdint.h>

struct core;

struct core_reader_ops {
	/* Up to LEN bytes at ADDR into BUF: how many were read before the
	 * first fault. */
	size_t (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	/* Where this host reads the file the target maps as RECORDED (borrowed);
	 * NULL when unknown. */
	const char *(*file_path)(void *ctx, const char *recorded);
	/* CLOCK_MONOTONIC's nanoseconds when the target was stopped; 0: unknown. */
	uint64_t (*stopped_ns)(const void *ctx);
	/* CORE, opened over this reader, is being closed. */
	void (*closed)(void *ctx, const struct core *core);
};

struct core_reader {
	const struct core_reader_ops *ops;   /* NULL: the core file's segments */
	void *ctx;                           /* borrowed; it outlives the core */
};

#endif
