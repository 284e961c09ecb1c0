/* What /proc says of a running process beyond its memory and registers
 * (DESIGN.md "Hangs", live extras): each thread's name, run state and CPU
 * time, and what each open fd is.  A snapshot keeps them in two notes of
 * owner CORE_NOTE_OWNER, so its report says what the live one said:
 * CORE_NOTE_THREADS, per thread {u32 tid; char state; 3 bytes 0; u64 CPU
 * ticks (utime + stime); char comm[16]}; CORE_NOTE_FDS, per fd {u32 fd;
 * u32 len; len bytes of its target, padded to 4}; CORE_NOTE_OFF_CPU, per
 * thread in state S or D whose time off the CPU is known {u32 tid; u32 0;
 * u64 milliseconds since it last ran, as of the reading}. */
#ifndef COREFILE_LIVEINFO_H
#define COREFILE_LIVEINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

#define CORE_NOTE_THREADS 7u
#define CORE_NOTE_FDS 8u
#define CORE_NOTE_OFF_CPU 9u

struct core_thread_info {
	int32_t tid;
	char state;                 /* R, S, D, ...; 0: unknown */
	uint64_t cpu_ticks;         /* utime + stime, clock ticks */
	char comm[16];              /* NUL-terminated */
	int32_t cpu;                /* the CPU it last ran on; -1: unknown */
	uint64_t off_cpu_ms;        /* state S or D: since it last ran */
	bool has_off_cpu;
};

/* A snapshot's CORE_NOTE_OFF_CPU entry. */
struct core_off_cpu {
	int32_t tid;
	uint64_t ms;
};

struct core_fd {
	int32_t fd;
	char *target;               /* "/var/log/x", "pipe:[2231]", "socket:[77]
				       127.0.0.1:5432 -> 127.0.0.1:40112" */
};

struct core_writer;

/* Thread TID of process PID from /proc/PID/task/TID (stat, comm); false
 * when the thread is gone. */
bool core_liveinfo_thread(pid_t pid, pid_t tid, struct core_thread_info *out);

/* The time off the CPU of each of the N threads of process PID in state S
 * or D (has_off_cpu), read while the process runs; the others' stay
 * unknown.  The calling thread runs on each of their CPUs in turn; false
 * when its own affinity could not be restored. */
bool core_liveinfo_off_cpu(pid_t pid, struct core_thread_info *t, size_t n);

/* Process PID's open files, a socket's addresses from /proc/PID/net (tcp,
 * tcp6, unix).  *OUT is malloc'd (core_fds_free); false when memory ran
 * out (an unreadable fd table is no fd). */
bool core_liveinfo_fds(pid_t pid, struct core_fd **out, size_t *n);

void core_fds_free(struct core_fd *fds, size_t n);

/* The notes into W (the threads' note also writes CORE_NOTE_OFF_CPU). */
void core_liveinfo_note_threads(struct core_writer *w, const struct core_thread_info *t, size_t n);
bool core_liveinfo_note_fds(struct core_writer *w, const struct core_fd *fds, size_t n);

/* Decode the notes (malformed entries end the list); *OUT malloc'd.  NULL
 * or &core_error_nomem. */
struct core_error *core_liveinfo_parse_threads(const unsigned char *desc, size_t len,
					       struct core_thread_info **out, size_t *n);
struct core_error *core_liveinfo_parse_off_cpu(const unsigned char *desc, size_t len,
					       struct core_off_cpu **out, size_t *n);
struct core_error *core_liveinfo_parse_fds(const unsigned char *desc, size_t len, struct core_fd **out,
					   size_t *n);

#endif
