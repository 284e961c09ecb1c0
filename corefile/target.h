/* What a core says of its target, whatever its source (an ELF core, a
 * minidump, a running process): threads and registers, signal, process,
 * segments, mapped files and modules, as plain data in struct core, and the
 * look-ups over them that read no memory.  The memory itself is read
 * through memory.h; opening a core is core.h's.
 *
 * Everything a core says is untrusted: counts, sizes and offsets are
 * checked against the file before use, and a damaged part is reported as a
 * warning on the core instead of failing the whole open where the rest is
 * still usable. */
#ifndef COREFILE_TARGET_H
#define COREFILE_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

#include "arch.h"
#include "error.h"
#include "reader.h"
#include "signals.h"

struct core_thread {
	int32_t tid;
	int32_t ppid, pgrp, sid;
	int cursig;                 /* signal that stopped the thread (pr_cursig) */
	uint64_t sigpend, sighold;
	uint64_t regs[CORE_MAX_REGS];  /* core->arch's thread registers */
	unsigned nregs;             /* how many of them the core saved: all but
				       the thread pointer when its note is missing */
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
struct core_off_cpu;

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
	struct core_off_cpu *off_cpu;           /* likewise */
	size_t noff_cpu;

	char **warnings;            /* problems found while opening */
	size_t nwarnings;

	char *sysroot;              /* prefix for NT_FILE paths, or NULL */
	struct core_file_cache *file_cache;
	struct core_sha256_job *sha256_job;   /* identity.h: being computed, or NULL */
	struct core_reader reader;  /* where memory comes from, when not the segments */

	/* A minicore: segments is its source's layout; its own PT_LOADs, the
	 * bytes it kept, are pieces (sorted by vaddr). */
	bool held_only;             /* CORE_NOTE_HELD */
	bool syscall_nr_unsaved;    /* the source saved no thread's system call
				       number (a minidump's x86_64 contexts hold
				       no orig_rax): "in no call" is unknown
				       (kernel.h) */
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

/* The range [*START, *END) of ELEM, a struct core_segment, for
 * base_range_find(). */
void core_segment_range(const void *elem, uint64_t *start, uint64_t *end);

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

#endif
