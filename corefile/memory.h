/* Bounded reads of a target's memory, whatever its source: every read goes
 * through the core's reader (reader.h): an ELF core's segments
 * (segments.h), or a running process (live.h).  A read that faults is an
 * ordinary result, never a crash; nothing read is trusted. */
#ifndef COREFILE_MEMORY_H
#define COREFILE_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target.h"

/* Read LEN bytes at target address ADDR into BUF.  Reads may span segments;
 * bytes between p_filesz and p_memsz read as zero; pages the kernel did not
 * dump come from the file NT_FILE names when it exists and agrees with the
 * core.  Returns NULL, or a CORE_ERROR_FAULT error naming the address. */
struct core_error *core_read(struct core *core, uint64_t addr, void *buf, size_t len);

/* As core_read, without building an error: true when all LEN bytes were read. */
bool core_read_bytes(struct core *core, uint64_t addr, void *buf, size_t len);

/* As core_read_bytes, but only from bytes the core itself saved: never
 * from a mapped file on disk, which may have changed since the crash.  Used
 * to judge whether a file on disk is the one that ran. */
bool core_read_saved(const struct core *core, uint64_t addr, void *buf, size_t len);

/* Convenience: true when the 8-byte word at ADDR was read into *VALUE. */
bool core_read_u64(struct core *core, uint64_t addr, uint64_t *value);
bool core_read_u32(struct core *core, uint64_t addr, uint32_t *value);

/* CLOCK_MONOTONIC's nanoseconds when a live process (or the snapshot of
 * one) was stopped, the clock its runtime stamps waits with; false for a
 * crash's core, which does not say. */
bool core_stopped_at(const struct core *core, uint64_t *ns);

/* Read a NUL-terminated string of at most MAX-1 bytes at ADDR into BUF.
 * Returns true when a terminator was found within MAX bytes. */
bool core_read_string(struct core *core, uint64_t addr, char *buf, size_t max);

/* The check of an untrusted pointer read from the core: not NULL, a
 * multiple of ALIGN (0: any), [ADDR, ADDR+LEN) neither wrapping around nor
 * unreadable. */
bool core_pointer_ok(struct core *core, uint64_t addr, size_t len, size_t align);

/* Why ADDR fails core_pointer_ok() with 8-byte alignment, for warnings
 * ("is NULL", "is misaligned", "is not readable", ...). */
const char *core_pointer_problem(struct core *core, uint64_t addr);

/* True when [ADDR, ADDR+LEN) is readable (in the core or a backing file). */
bool core_is_readable(struct core *core, uint64_t addr, size_t len);

/* Whether the target was read while it ran: a live process, or the
 * snapshot of one. */
bool core_read_running(const struct core *core);

/* ON: the pages read from now on (until OFF), where no other read wants
 * them, need not be read again when a running target is stopped: the
 * reader means to read only a few of them then (pyasync.c's walk of the
 * collector's lists).  Nothing for a core. */
void core_read_transient(struct core *core, bool on);

#endif
