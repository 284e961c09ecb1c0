/* A running process as a core: one more memory reader (STYLE.md rule 11).
 *
 * core_live_inspect() reads what needs no stop (/proc/PID/maps, auxv,
 * psinfo, the ELF header page of every mapped file, the vDSO) and refuses
 * what cannot be attached, with a one-line reason.  core_live_stop() seizes
 * every thread (rescanning /proc/PID/task until no new one appears),
 * interrupts each and waits until all are stopped, then reads their
 * registers and the stack above each stack pointer.  core_live_open_core()
 * gives a struct core whose reads go through the process's page cache:
 * while the process is stopped, a page not yet read is read from it
 * (process_vm_readv, else /proc/PID/mem) and kept; once it is detached
 * (core_live_detach(), --max-pause running out, SIGINT/SIGTERM), only the
 * kept pages and read-only file pages are served, so the analysis sees the
 * process as it was while stopped.  core_live_writer() writes those
 * pages as an ELF core that gdb and asyncore read
 * (through corewrite.h).
 *
 * A process is never left stopped: every path detaches, a process that was
 * stopped (SIGSTOP) before stays stopped, and if asyncore dies the kernel
 * detaches. */
#ifndef COREFILE_LIVE_H
#define COREFILE_LIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "core.h"
#include "corewrite.h"

struct core_live;

/* Look at process PID and read what needs no stop.  Errors (one line,
 * CORE_ERROR_USAGE): no such process, a zombie, a kernel thread, already
 * traced (naming the tracer), not permitted (another user, Yama's
 * ptrace_scope, no CAP_SYS_PTRACE: which, and how to allow it).  MAX_PAUSE_MS
 * bounds how long the process stays stopped (0: no bound).  *OUT is owned by
 * the caller (core_live_destroy()). */
struct core_error *core_live_inspect(pid_t pid, unsigned max_pause_ms, struct core_live **out);

/* Warm-up before the stop: the threads blocked in a system call get the
 * stack and instruction pointers /proc shows for them (the others none),
 * and reads of a core opened now come from the running process, so that an
 * analysis run on it loads the debug information, indexes and symbols the
 * stopped one will need.  core_live_warm_end() forgets what it read and
 * keeps which pages, read again by core_live_stop().  False when the
 * process's threads cannot be listed. */
bool core_live_warm_begin(struct core_live *live);
void core_live_warm_end(struct core_live *live);

/* True when the warm-up knew where every thread was (all blocked in system
 * calls): what it read is what the stopped analysis will read. */
bool core_live_warm_all_threads(const struct core_live *live);

/* [LO, HI) is a stack a runtime allocated in its own heap, as the warm-up
 * found it (a goroutine's): a thread still blocked where the warm-up saw
 * it, its stack pointer in there, has its stack read in bulk only up to
 * HI.  False: out of memory. */
bool core_live_add_stack(struct core_live *live, uint64_t lo, uint64_t hi);

/* Stop every thread and read registers and stacks.  Fails (the process
 * running again) when it cannot be attached or exits meanwhile. */
struct core_error *core_live_stop(struct core_live *live);

/* A core over LIVE (borrowed; it must outlive the core): threads, auxv,
 * psinfo and mapped files as a core's notes would give them, memory read
 * through LIVE.  The core's warnings start with LIVE's. */
struct core_error *core_live_open_core(struct core_live *live, struct core **out);

/* Let every thread run again (idempotent).  Reads after it see only what
 * was read while stopped. */
void core_live_detach(struct core_live *live);

/* How many pages of readable mappings reads after the detach wanted that
 * the stop had not read (they read as unreadable). */
size_t core_live_missed(const struct core_live *live);

/* After a detach: ready to stop again (core_live_stop()), what the last
 * stop read forgotten and, with the pages it missed, read first by the
 * next; the pause counts both stops.  The core opened over LIVE must be
 * closed first.  False when the process is gone. */
bool core_live_again(struct core_live *live);

/* Detach when needed and free LIVE; NULL is a no-op. */
void core_live_destroy(struct core_live *live);

/* How long the process was stopped, in microseconds (so far, while it is). */
uint64_t core_live_paused_us(const struct core_live *live);

/* CLOCK_MONOTONIC's nanoseconds when the stop began; 0 before it. */
uint64_t core_live_stopped_ns(const struct core_live *live);

/* When the process was stopped, ISO 8601 UTC with microseconds.  Borrowed. */
const char *core_live_taken_at(const struct core_live *live);

/* The process id. */
pid_t core_live_pid(const struct core_live *live);

/* Bytes of the process's memory kept (what a snapshot writes). */
uint64_t core_live_bytes_kept(const struct core_live *live);

/* A writer (corewrite.h) of what was read: threads' registers, psinfo,
 * auxv, mapped files and the snapshot note, the process's mappings, the
 * pages read.  Its pages are read through core_live_read_kept(LIVE).
 * *OUT is owned by the caller. */
struct core_error *core_live_writer(const struct core_live *live, struct core_writer **out);
bool core_live_read_kept(void *live, uint64_t addr, void *buf, size_t len);

/* That core written to OUT.  0, or -1 with errno set. */
int core_live_write_core(struct core_live *live, FILE *out);

/* Write thread TID first in the core (the one a report signs); by
 * default the main thread.  False when the process has no such thread. */
bool core_live_first_thread(struct core_live *live, pid_t tid);

/* True when the process exited while it was stopped (reads failed). */
bool core_live_gone(const struct core_live *live);

/* CORE, opened over LIVE, is being closed (LIVE's warnings no longer go
 * to it). */
void core_live_core_closed(struct core_live *live, const struct core *core);

/* Up to LEN bytes at ADDR; the bytes served, 0 on a fault. */
size_t core_live_read(struct core_live *live, uint64_t addr, void *buf, size_t len);

/* Where the file the process maps as RECORDED is
 * read on this host: the path itself when it is the same file, else
 * through /proc/PID/root or /proc/PID/map_files; NULL when unknown.
 * Borrowed. */
const char *core_live_file_path(struct core_live *live, const char *recorded);

#endif
