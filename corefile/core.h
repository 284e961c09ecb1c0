/* ELF core reader: notes, threads, segments and bounded reads of the
 * crashed process's memory.
 *
 * core_open() opens a core file read-only (decompressing .zst/.xz/.gz cores
 * first), indexes its PT_LOAD segments and parses its notes.  Everything the
 * core says is untrusted: counts, sizes and offsets are checked against the
 * file before use, and a damaged part is reported as a warning on the core
 * instead of failing the whole open where the rest is still usable. */
#ifndef COREFILE_CORE_H
#define COREFILE_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

#include "arch.h"
#include "error.h"
#include "reader.h"

struct core_thread {
	int32_t tid;
	int32_t ppid, pgrp, sid;
	int cursig;                 /* signal that stopped the thread (pr_cursig) */
	uint64_t sigpend, sighold;
	uint64_t regs[CORE_MAX_REGS];  /* core->arch's thread registers */
	unsigned nregs;             /* how many of them the core saved: all but
				       the thread pointer when its note is missing */
};

struct core_siginfo {
	bool present;
	int signo, code, errno_value;
	uint64_t addr;              /* si_addr for SIGSEGV/SIGBUS/SIGILL/SIGFPE/SIGTRAP */
	int32_t sender_pid;         /* si_pid for kill()-style codes */
	uint32_t sender_uid;
};

struct core_psinfo {
	bool present;
	char state;
	int32_t pid, ppid, pgrp, sid;
	uint32_t uid, gid;
	char fname[17];
	char args[81];
};

struct core_auxv {
	bool present;
	uint64_t phdr, phent, phnum, pagesz, base, entry, execfn, sysinfo_ehdr;
	char *execfn_string;        /* AT_EXECFN read from memory; NULL if unreadable */
};

/* One NT_FILE entry: [start, end) maps PATH at byte offset OFFSET. */
struct core_mapped_file {
	uint64_t start, end, offset;
	char *path;                 /* as recorded in the core */
};

/* Set in core_segment.flags when the file ends before the segment's bytes. */
#define CORE_SEGMENT_TRUNCATED 0x80000000u

struct core_segment {
	uint64_t vaddr, memsz, filesz, offset;
	uint32_t flags;             /* PF_R | PF_W | PF_X, CORE_SEGMENT_TRUNCATED */
};

struct core_file_cache;         /* opened backing files for unsaved pages */
struct core_image;              /* the core's bytes by file offset (image.h) */
struct core_sha256_job;         /* identity.h */

/* A core that `asyncore snapshot` wrote of a running process: its note
 * (owner "ASYNCORE", type CORE_NOTE_SNAPSHOT) says so, how long the process
 * was stopped and when.  Desc: u64 paused_us, then taken_at, ISO 8601 UTC,
 * NUL-padded to 32 bytes, then (when the desc is that long) u64 the
 * CLOCK_MONOTONIC nanoseconds at the stop. */
#define CORE_BUILD_ID_MAX 64u           /* bytes of a build-id kept, at most */

#define CORE_NOTE_OWNER "ASYNCORE"
#define CORE_NOTE_SNAPSHOT 1u
struct core_snapshot {
	bool present;
	uint64_t paused_us;
	char taken_at[32];          /* NUL-terminated; empty when unknown */
	uint64_t monotonic_ns;      /* CLOCK_MONOTONIC at the stop; 0: unknown */
};

/* A minicore (minicore.h) says which core it was cut from and that core's
 * segments (owner CORE_NOTE_OWNER).  SOURCE desc: the source's fingerprint,
 * 64 hex digits.  LAYOUT desc: per segment u64 vaddr, memsz, flags. */
#define CORE_NOTE_SOURCE 2u
#define CORE_NOTE_LAYOUT 3u

/* A core whose source kept only some of the memory (a minidump): the note
 * (owner CORE_NOTE_OWNER, no desc) says that memory of a writable mapping
 * the core does not hold is unknown, not its file's, and that a writable
 * segment's bytes past p_filesz are zeros the source held. */
#define CORE_NOTE_HELD 4u

/* What the crashed program said of itself, as name and value pairs
 * (Crashpad's annotations): desc, each name then its value, NUL-ended. */
#define CORE_NOTE_ANNOTATIONS 5u
#define CORE_ANNOTATIONS_MAX 1000u      /* pairs kept, at most */

struct core_annotation {
	char *name, *value;
};

/* The objects the target had loaded, as its source lists them where the
 * core need not hold their ELF headers (a minidump's module list): desc,
 * per object u64 start, u64 end, u32 build-id length, the build-id, then
 * its path, NUL-ended. */
#define CORE_NOTE_MODULES 6u
#define CORE_MODULES_MAX 100000u

struct core_module {
	uint64_t start, end;
	unsigned char build_id[CORE_BUILD_ID_MAX];
	size_t build_id_len;
	char *path;
};

struct core_writer;             /* corewrite.h */
struct core_thread_info;        /* liveinfo.h */
struct core_fd;

struct core {
	char *path;                 /* as given to core_open */
	uint64_t file_size;         /* size of the file as given (compressed or not) */
	struct core_image *image;   /* the (decompressed) core, read through a page cache */
	size_t data_size;           /* size of the decompressed core */
	Elf *elf;                   /* over the same file (ELF_C_READ: read with pread) */
	const struct core_arch *arch;       /* from the ELF header's machine */
	uint64_t pac_insn_mask;     /* aarch64 NT_ARM_PAC_MASK: code-pointer bits
				       pointer authentication uses; 0 when absent */
	size_t prstatus_misfit;     /* size of an NT_PRSTATUS that is not the
				       architecture's, 0: none was */

	struct core_segment *segments;      /* sorted by vaddr */
	size_t nsegments;
	size_t last_segment;        /* the segment the last read found (a hint) */
	struct core_thread *threads;        /* core order; [0] took the signal */
	size_t nthreads;
	struct core_mapped_file *files;     /* NT_FILE order */
	size_t nfiles;
	bool files_sorted;          /* by start, without overlap (the kernel's order) */
	struct core_siginfo siginfo;
	struct core_psinfo psinfo;
	struct core_auxv auxv;
	struct core_snapshot snapshot;
	struct core_thread_info *thread_infos;  /* a snapshot's (liveinfo.h), or NULL */
	size_t nthread_infos;
	struct core_fd *fds;                    /* likewise */
	size_t nfds;

	char **warnings;            /* problems found while opening */
	size_t nwarnings;

	char *sysroot;              /* prefix for NT_FILE paths, or NULL */
	struct core_file_cache *file_cache;
	struct core_sha256_job *sha256_job;   /* identity.h: being computed, or NULL */
	struct core_reader reader;  /* where memory comes from, when not the segments */

	/* A minicore: segments is its source's layout; its own PT_LOADs, the
	 * bytes it kept, are pieces (sorted by vaddr). */
	bool held_only;             /* CORE_NOTE_HELD */
	struct core_annotation *annotations;   /* CORE_NOTE_ANNOTATIONS */
	size_t nannotations;
	struct core_module *modules;           /* CORE_NOTE_MODULES */
	size_t nmodules;
	char source_fingerprint[65];        /* "" when not a minicore */
	struct core_segment *layout;        /* from the note, until indexed */
	size_t nlayout;
	struct core_segment *pieces;
	size_t npieces;
	struct core_writer *recorder;       /* pages reads were served from the
					       core itself, when recording */
};

/* Thread T's pc, stack pointer and frame pointer (by the table's roles). */
uint64_t core_thread_pc(const struct core *core, const struct core_thread *t);
uint64_t core_thread_sp(const struct core *core, const struct core_thread *t);
uint64_t core_thread_fp(const struct core *core, const struct core_thread *t);

/* Thread T's thread pointer (fs_base, TPIDR_EL0) into *TP; false when the
 * core did not save it (qemu-user writes no NT_ARM_TLS). */
bool core_thread_tp(const struct core *core, const struct core_thread *t, uint64_t *tp);

/* Open the core at PATH.  On success *OUT owns the core (core_close()).
 * Fails with CORE_ERROR_IO (missing/unreadable), CORE_ERROR_FORMAT (not ELF,
 * not ET_CORE, notes unreadable). */
struct core_error *core_open(const char *path, struct core **out);

/* Open the core written at FD (taken over), whose memory is read through
 * READER instead of its segments (a running process: corefile/live.c);
 * NAME stands for the path. */
struct core_error *core_open_reader(const char *name, int fd, const struct core_reader *reader,
				    struct core **out);

/* Whether the target was read while it ran: a live process, or the
 * snapshot of one. */
bool core_read_running(const struct core *core);

/* Release the core; NULL is a no-op. */
void core_close(struct core *core);

/* Look up NT_FILE paths under SYSROOT first (copied). */
void core_set_sysroot(struct core *core, const char *sysroot);

/* Serve unsaved pages of the mapping recorded as RECORDED_PATH from
 * REPLACEMENT instead (a binary given on the command line). */
struct core_error *core_set_file_replacement(struct core *core, const char *recorded_path,
					     const char *replacement);

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

#define CORE_SAVED_NOTES_MAX 65536u     /* bytes of a PT_NOTE searched, at most */

/* The GNU build-id (NT_GNU_BUILD_ID, owner "GNU") among the notes the core
 * saved (core_read_saved) at [AT, AT + SIZE) of the target's memory, a
 * loaded object's PT_NOTE, into ID[0, *LEN); *LEN is 0 when they hold none
 * of 1 to CORE_BUILD_ID_MAX bytes.  False when the core did not save them,
 * or SIZE is less than a note header or more than CORE_SAVED_NOTES_MAX. */
bool core_saved_build_id(const struct core *core, uint64_t at, uint64_t size,
			 unsigned char id[CORE_BUILD_ID_MAX], size_t *len);

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

/* Convenience: true when the 8-byte word at ADDR was read into *VALUE. */
bool core_read_u64(struct core *core, uint64_t addr, uint64_t *value);

/* CLOCK_MONOTONIC's nanoseconds when a live process (or the snapshot of
 * one) was stopped, the clock its runtime stamps waits with; false for a
 * crash's core, which does not say. */
bool core_stopped_at(const struct core *core, uint64_t *ns);
bool core_read_u32(struct core *core, uint64_t addr, uint32_t *value);

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

/* The segment holding ADDR, or NULL (binary search). */
const struct core_segment *core_find_segment(const struct core *core, uint64_t addr);

/* True when ADDR lies in an executable (PF_X) segment of the core. */
bool core_is_executable(const struct core *core, uint64_t addr);

/* The NT_FILE entry holding ADDR, or NULL. */
const struct core_mapped_file *core_find_file(const struct core *core, uint64_t addr);

/* Path of the executable: AT_EXECFN, else the NT_FILE entry mapping AT_PHDR.
 * Borrowed from the core; NULL when unknown. */
const char *core_executable(const struct core *core);

/* Open PATH read-only when it is a regular file; -1 otherwise (errno set,
 * EINVAL for a fifo, device or directory).  Never blocks: paths named by a
 * core are untrusted, and a fifo would hang a plain open(). */
int core_open_regular(const char *path);

/* Append a formatted warning to core->warnings. */
void core_warn(struct core *core, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* True when a siginfo of SIGNO with si_code CODE carries a fault address:
 * SIGILL, SIGTRAP, SIGBUS, SIGFPE or SIGSEGV raised by the hardware (a
 * positive code other than SI_KERNEL), not sent by kill() or the kernel. */
bool core_signal_has_address(int signo, int code);

/* Bytes of a siginfo_t, and its fields from D (that many bytes). */
#define CORE_SIGINFO_SIZE 128
void core_siginfo_parse(const unsigned char *d, struct core_siginfo *si);

/* Name and si_code description of a signal ("SIGSEGV", "SEGV_MAPERR"). */
const char *core_signal_name(int signo);
const char *core_signal_code_name(int signo, int code);

#endif
