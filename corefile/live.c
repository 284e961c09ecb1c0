#include "live.h"
#include "procmaps.h"
#include "liveinfo.h"
#include "../base/array.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/procfs.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../base/array.h"
#include "../base/strlist.h"
#include "corewrite.h"
#include "identity.h"

#define PAGE 4096u
#define PAGE_DOWN(a) ((a) & ~(uint64_t)(PAGE - 1))

/* Bounds: the stack read in bulk above each stack pointer, and all the
 * memory kept (the rest faults, with a warning). */
#define STACK_BULK (2u << 20)
#define CACHE_LIMIT (1024u << 20)
#define PAGE_BATCH 256          /* pages a process_vm_readv call reads, at most */

struct live_map {
	uint64_t start, end, offset;
	uint32_t flags;             /* PF_R | PF_W | PF_X */
	bool shared;
	unsigned dev_major, dev_minor;
	uint64_t inode;
	char *path;                 /* as the process names it; NULL: anonymous */
	char *host;                 /* where this host reads it; NULL: unknown */
};

struct live_thread {
	pid_t tid;
	bool seized, interrupted, stopped, gone;
	bool regs_known;            /* stopped, or rsp/rip of a warm-up */
	uint64_t warm_sp, warm_pc;  /* where the warm-up saw it blocked (0: unknown) */
	int resume_sig;             /* a signal the stop held back, re-sent at detach */
	uint64_t regs[CORE_REG_COUNT];
};

struct live_range {
	uint64_t lo, hi;
};

/* A thread's place in core_live.threads, found by its id (0: free slot). */
struct tid_slot {
	uint64_t tid;
	size_t index;
};

/* A page read from the process; data NULL: unreadable there. */
struct live_slot {
	uint64_t addr;              /* page address + 1 (0: empty slot) */
	unsigned char *data;
	bool pinned;                /* read before the stop (never changes) */
	bool in_arena;              /* DATA is a page of core_live.arena */
	bool transient;             /* the warm-up read it transiently only */
	bool missed;                /* wanted after the detach, not read by the stop */
};

struct core_live {
	pid_t pid;
	int mem_fd;                 /* /proc/PID/mem, when process_vm_readv is refused */
	bool use_mem_fd;
	char state;
	int32_t ppid, pgrp, sid;
	uint32_t uid, gid;
	char comm[17], args[81];
	struct live_map *maps;
	size_t nmaps;
	unsigned char *auxv;
	size_t auxv_len;
	struct live_thread *threads;
	size_t nthreads, threads_cap;
	struct tid_slot *tid_slots; /* the threads by id: thousands of threads
				       are looked up at every rescan */
	size_t tid_cap;

	struct live_slot *slots;
	size_t nslots, used;
	uint64_t bytes_kept;
	bool cache_full;

	bool warming;               /* a warm-up reads the running process */
	bool transient;             /* ... pages not to read again stopped */
	bool stopped;               /* every thread seized and stopped */
	volatile sig_atomic_t detached;
	volatile sig_atomic_t deadline_hit;
	volatile sig_atomic_t killed;   /* a stopped thread was gone at detach */
	bool gone;                  /* the process exited while stopped */
	struct timespec stop_start, stop_end;
	char taken_at[32];
	unsigned max_pause_ms;
	pid_t tracer_tid;
	timer_t timer;
	bool timer_armed;
	struct sigaction old_int, old_term, old_timer;
	bool handlers;
	bool handlers_done;         /* detached once: the checks made */
	bool extras_read;           /* read_extras() done, before the first stop */
	size_t nmissed;             /* pages wanted after the detach, not read */
	uint64_t paused_before_us;  /* earlier stops' (core_live_again) */

	pid_t first_tid;            /* written first */
	uint64_t *warm_pages;       /* what the warm-up read, to read again stopped */
	unsigned char *arena;       /* their pages, allocated and touched before */
	size_t arena_pages, arena_used;   /* the stop, read into while stopped */
	struct live_range *stacks;  /* stacks the warm-up's runtimes recorded */
	size_t nstacks, stacks_cap;
	bool warm_all_threads;      /* every thread's registers known to the warm-up */
	size_t nwarm_pages;
	char **warnings;            /* until a core takes them */
	size_t nwarnings;
	struct core *core;
	struct core_thread_info *infos; /* each thread's name, state, CPU time just
					   before the stop (liveinfo.h) */
	size_t ninfos;
	struct core_fd *fds;        /* the open files then */
	size_t nfds;
};

static void live_warn(struct core_live *live, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void live_warn(struct core_live *live, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (live->core)
		base_strlist_vappend(&live->core->warnings, &live->core->nwarnings, fmt, ap);
	else
		base_strlist_vappend(&live->warnings, &live->nwarnings, fmt, ap);
	va_end(ap);
}

static uint64_t elapsed_us(const struct timespec *a, const struct timespec *b)
{
	int64_t us = (int64_t)(b->tv_sec - a->tv_sec) * 1000000 + (b->tv_nsec - a->tv_nsec) / 1000;
	return us > 0 ? (uint64_t)us : 0;
}

/* ---- /proc readers ------------------------------------------------------ */

/* The whole of a small /proc file, NUL-terminated; NULL when unreadable. */
static char *read_proc(pid_t pid, const char *name, size_t *len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		if (n + 1 >= cap) {
			char *bigger = cap < (64u << 20) ? realloc(buf, cap * 2) : NULL;
			if (!bigger) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = bigger;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			buf = NULL;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (buf) {
		buf[n] = '\0';
		if (len)
			*len = n;
	}
	return buf;
}

/* A "Key:\tvalue" line of /proc/PID/status, as a number; -1 when absent. */
static long long status_number(const char *status, const char *key)
{
	size_t klen = strlen(key);
	for (const char *p = status; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, key, klen) == 0 && p[klen] == ':')
			return strtoll(p + klen + 1, NULL, 10);
	return -1;
}

static void comm_of(pid_t pid, char *out, size_t size)
{
	char *c = read_proc(pid, "comm", NULL);
	snprintf(out, size, "%s", c ? c : "?");
	out[strcspn(out, "\n")] = '\0';
	free(c);
}

static int yama_scope(void)
{
	int fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	char buf[16] = "";
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atoi(buf) : -1;
}

/* Why PTRACE_SEIZE was refused, and how to allow it. */
static struct core_error *not_permitted(struct core_live *live)
{
	pid_t pid = live->pid;
	uid_t me = geteuid();
	if (me != 0 && live->uid != me)
		return core_error_create(CORE_ERROR_USAGE,
			"process %d: not permitted to attach: it belongs to another user (uid %u, asyncore runs as uid %u); "
			"run asyncore as that user or as root", (int)pid, live->uid, (unsigned)me);
	int scope = yama_scope();
	if (scope == 1)
		return core_error_create(CORE_ERROR_USAGE,
			"process %d: not permitted to attach: Yama's ptrace_scope is 1 (only a process's ancestors may attach); "
			"run asyncore as root, give it CAP_SYS_PTRACE (setcap cap_sys_ptrace+ep), or set "
			"/proc/sys/kernel/yama/ptrace_scope to 0", (int)pid);
	if (scope == 2)
		return core_error_create(CORE_ERROR_USAGE,
			"process %d: not permitted to attach: Yama's ptrace_scope is 2 (only CAP_SYS_PTRACE may attach); "
			"run asyncore as root or give it CAP_SYS_PTRACE (setcap cap_sys_ptrace+ep)", (int)pid);
	if (scope == 3)
		return core_error_create(CORE_ERROR_USAGE,
			"process %d: not permitted to attach: Yama's ptrace_scope is 3 (no process may attach until reboot)",
			(int)pid);
	return core_error_create(CORE_ERROR_USAGE,
		"process %d: not permitted to attach: asyncore lacks CAP_SYS_PTRACE (the process is not dumpable, "
		"or runs with other credentials); run asyncore as root or give it CAP_SYS_PTRACE", (int)pid);
}

/* /proc/PID/stat: state, ppid, pgrp, session, flags (after the last ')'). */
static struct core_error *read_stat(struct core_live *live, bool *kthread)
{
	char *stat = read_proc(live->pid, "stat", NULL);
	if (!stat)
		return core_error_create(CORE_ERROR_USAGE, "no such process: %d", (int)live->pid);
	char *close_paren = strrchr(stat, ')');
	char *open_paren = strchr(stat, '(');
	int ppid = 0, pgrp = 0, sid = 0, tty = 0, tpgid = 0;
	unsigned flags = 0;
	char state = '?';
	if (open_paren && close_paren && close_paren > open_paren) {
		size_t n = (size_t)(close_paren - open_paren - 1);
		if (n > 16)
			n = 16;
		memcpy(live->comm, open_paren + 1, n);
		live->comm[n] = '\0';
		sscanf(close_paren + 1, " %c %d %d %d %d %d %u", &state, &ppid, &pgrp, &sid, &tty, &tpgid,
		       &flags);
	}
	free(stat);
	live->state = state;
	live->ppid = ppid;
	live->pgrp = pgrp;
	live->sid = sid;
	*kthread = (flags & 0x00200000u) != 0;   /* PF_KTHREAD */
	return NULL;
}

static struct core_error *check_process(struct core_live *live)
{
	pid_t pid = live->pid;
	bool kthread = false;
	struct core_error *err = read_stat(live, &kthread);
	if (err)
		return err;
	char *status = read_proc(pid, "status", NULL);
	if (!status)
		return core_error_create(CORE_ERROR_USAGE, "no such process: %d", (int)pid);
	long long tgid = status_number(status, "Tgid");
	long long tracer = status_number(status, "TracerPid");
	long long uid = status_number(status, "Uid");
	long long gid = status_number(status, "Gid");
	free(status);
	live->uid = uid >= 0 ? (uint32_t)uid : 0;
	live->gid = gid >= 0 ? (uint32_t)gid : 0;
	if (live->state == 'Z' || live->state == 'X')
		return core_error_create(CORE_ERROR_USAGE,
			"process %d is a zombie (it has exited, its parent has not reaped it): nothing to read", (int)pid);
	if (kthread)
		return core_error_create(CORE_ERROR_USAGE,
			"process %d (%s) is a kernel thread: it has no user-space memory to read", (int)pid, live->comm);
	if (tgid > 0 && tgid != pid)
		return core_error_create(CORE_ERROR_USAGE,
			"%d is a thread of process %lld: give the process id", (int)pid, tgid);
	if (tracer > 0) {
		char comm[32];
		comm_of((pid_t)tracer, comm, sizeof(comm));
		return core_error_create(CORE_ERROR_USAGE,
			"process %d is already traced by process %lld (%s): detach it first", (int)pid, tracer, comm);
	}
	return NULL;
}

static void read_args(struct core_live *live)
{
	size_t n = 0;
	char *cmd = read_proc(live->pid, "cmdline", &n);
	if (!cmd)
		return;
	if (n > 80)
		n = 80;
	for (size_t i = 0; i < n; i++)
		live->args[i] = cmd[i] ? cmd[i] : ' ';
	while (n > 0 && live->args[n - 1] == ' ')
		n--;
	live->args[n] = '\0';
	free(cmd);
}

/* Where this host reads the file the process maps: the path itself when it
 * is the same file (device and inode), else the same path under the
 * process's root (a container), else its map_files entry. */
static char *host_path(const struct core_live *live, const struct live_map *m)
{
	struct stat st;
	char buf[4200];
	if (stat(m->path, &st) == 0 && st.st_ino == m->inode && major(st.st_dev) == m->dev_major &&
	    minor(st.st_dev) == m->dev_minor)
		return strdup(m->path);
	snprintf(buf, sizeof(buf), "/proc/%d/root%s", (int)live->pid, m->path);
	if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && st.st_ino == m->inode)
		return strdup(buf);
	snprintf(buf, sizeof(buf), "/proc/%d/map_files/%llx-%llx", (int)live->pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	if (stat(buf, &st) == 0 && S_ISREG(st.st_mode))
		return strdup(buf);
	return strdup(m->path);   /* build-ids still decide */
}

static struct core_error *parse_maps(struct core_live *live)
{
	char *text = read_proc(live->pid, "maps", NULL);
	if (!text && (errno == EACCES || errno == EPERM))
		return not_permitted(live);
	if (!text)
		return core_error_create(CORE_ERROR_USAGE, "process %d: cannot read /proc/%d/maps: %s",
					 (int)live->pid, (int)live->pid, strerror(errno));
	size_t cap = 0;
	struct core_error *err = NULL;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		struct core_maps_line ml;
		if (!core_maps_line_parse(line, &ml))
			continue;
		if (live->nmaps == cap) {
			cap = cap ? 2 * cap : 64;
			struct live_map *maps = realloc(live->maps, cap * sizeof(*maps));
			if (!maps) {
				err = &core_error_nomem;
				break;
			}
			live->maps = maps;
		}
		struct live_map *m = &live->maps[live->nmaps++];
		memset(m, 0, sizeof(*m));
		m->start = ml.start;
		m->end = ml.end;
		m->offset = ml.offset;
		m->flags = ml.flags;
		m->shared = ml.shared;
		m->dev_major = ml.dev_major;
		m->dev_minor = ml.dev_minor;
		m->inode = ml.inode;
		if (*ml.path) {
			m->path = strdup(ml.path);
			if (!m->path) {
				err = &core_error_nomem;
				break;
			}
			if (ml.path[0] == '/' && ml.inode != 0)
				m->host = host_path(live, m);
		}
	}
	free(text);
	return err;
}

static void map_range(const void *elem, uint64_t *start, uint64_t *end)
{
	const struct live_map *m = elem;
	*start = m->start;
	*end = m->end;
}

static const struct live_map *map_for(const struct core_live *live, uint64_t addr)
{
	return base_range_find(live->maps, live->nmaps, sizeof(*live->maps), addr, map_range);
}

static bool is_file_map(const struct live_map *m)
{
	return m->path && m->path[0] == '/' && m->inode != 0;
}

/* ---- memory ------------------------------------------------------------ */

/* Read LEN bytes at ADDR from the process; the bytes read (up to the first
 * fault). */
static size_t fetch(struct core_live *live, uint64_t addr, void *buf, size_t len)
{
	if (!live->use_mem_fd) {
		struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
		ssize_t n = process_vm_readv(live->pid, &local, 1, &remote, 1, 0);
		if (n >= 0)
			return (size_t)n;
		if (errno == ESRCH) {
			live->gone = true;
			return 0;
		}
		if (errno != ENOSYS && errno != EPERM)
			return 0;
		live->use_mem_fd = true;   /* refused: /proc/PID/mem */
	}
	if (live->mem_fd < 0)
		return 0;
	size_t done = 0;
	while (done < len) {
		ssize_t n = pread(live->mem_fd, (char *)buf + done, len - done, (off_t)(addr + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	return done;
}

/* The page cache is the base's open-addressing table (base/array.h), keyed by
 * the page's address + 1 (0 marks a free slot). */
static size_t slot_index(const struct core_live *live, uint64_t page)
{
	return base_hash_slot(page + 1, live->nslots);
}

static struct live_slot *slot_find(const struct core_live *live, uint64_t page)
{
	if (!live->nslots)
		return NULL;
	for (size_t i = slot_index(live, page);; i = (i + 1) & (live->nslots - 1)) {
		if (live->slots[i].addr == 0)
			return NULL;
		if (live->slots[i].addr == page + 1)
			return &live->slots[i];
	}
}

/* Keep DATA for PAGE: a page of its own (malloc'd: the slot's now), a page
 * of the arena (IN_ARENA), or NULL: unreadable there.  False when full
 * (DATA is not kept). */
static bool slot_keep(struct core_live *live, uint64_t page, unsigned char *data, bool in_arena)
{
	if (data && live->bytes_kept + PAGE > CACHE_LIMIT) {
		if (!live->cache_full)
			live_warn(live, "more than %u MiB of the process's memory read: the rest is not read",
				  CACHE_LIMIT >> 20);
		live->cache_full = true;
		return false;
	}
	if (!base_table_reserve(&live->slots, &live->nslots, live->used, sizeof(*live->slots)))
		return false;
	if (data)
		live->bytes_kept += PAGE;
	size_t i = slot_index(live, page);
	while (live->slots[i].addr)
		i = (i + 1) & (live->nslots - 1);
	live->slots[i] = (struct live_slot){ .addr = page + 1, .data = data, .in_arena = in_arena };
	live->used++;
	return true;
}

/* Keep a copy of DATA (PAGE bytes, or NULL: unreadable) for PAGE; false
 * when full. */
static bool slot_put(struct core_live *live, uint64_t page, const unsigned char *data)
{
	unsigned char *copy = data ? malloc(PAGE) : NULL;
	if (data && !copy)
		return false;
	if (copy)
		memcpy(copy, data, PAGE);
	if (!slot_keep(live, page, copy, false)) {
		free(copy);
		return false;
	}
	return true;
}

static void check_deadline(struct core_live *live);

/* Read [START, END) (page-aligned) into the cache in one call where it
 * can; pages already kept are read again but not replaced. */
static void prefetch(struct core_live *live, uint64_t start, uint64_t end)
{
	enum { CHUNK = 256 * PAGE };
	unsigned char *buf = malloc(CHUNK);
	if (!buf)
		return;
	for (uint64_t at = start; at < end && !live->detached;) {
		size_t want = end - at < CHUNK ? (size_t)(end - at) : CHUNK;
		size_t got = fetch(live, at, buf, want);
		for (size_t off = 0; off + PAGE <= got; off += PAGE)
			if (!slot_find(live, at + off) && !slot_put(live, at + off, buf + off))
				goto out;
		if (got < want) {
			uint64_t bad = at + PAGE_DOWN(got);
			if (!slot_find(live, bad))
				slot_put(live, bad, NULL);
			break;
		}
		at += want;
		check_deadline(live);
	}
out:
	free(buf);
}

/* After detaching, the pages of read-only file mappings are still those of
 * the stop: they are read on demand. */
static bool readable_after_detach(const struct core_live *live, uint64_t addr)
{
	const struct live_map *m = map_for(live, addr);
	return m && is_file_map(m) && !(m->flags & PF_W) && !m->shared;
}

/* PAGE, of a readable mapping, wanted after the detach and not read by
 * the stop: kept as unreadable, marked for core_live_again(). */
static void note_missed(struct core_live *live, uint64_t page)
{
	const struct live_map *m = map_for(live, page);
	if (!m || !(m->flags & PF_R) || !slot_put(live, page, NULL))
		return;
	slot_find(live, page)->missed = true;
	live->nmissed++;
}

size_t core_live_read(struct core_live *live, uint64_t addr, void *buf, size_t len)
{
	unsigned char *out = buf;
	size_t done = 0;
	while (done < len) {
		uint64_t at = addr + done;
		if (at < addr)
			break;   /* wrapped */
		uint64_t page = PAGE_DOWN(at);
		size_t in_page = (size_t)(PAGE - (at - page));
		size_t n = len - done < in_page ? len - done : in_page;
		struct live_slot *s = slot_find(live, page);
		if (!s) {
			check_deadline(live);
			if (!live->warming && !live->stopped)
				break;
			if (!live->warming && live->detached && !readable_after_detach(live, page)) {
				note_missed(live, page);
				break;
			}
			unsigned char tmp[PAGE];
			bool ok = fetch(live, page, tmp, PAGE) == PAGE;
			if (!slot_put(live, page, ok ? tmp : NULL) || !(s = slot_find(live, page)))
				break;
			s->transient = live->warming && live->transient;
		} else if (s->transient && !live->transient) {
			s->transient = false;
		}
		if (!s->data)
			break;
		memcpy(out + done, s->data + (at - page), n);
		done += n;
	}
	return done;
}

/* ---- attaching ------------------------------------------------------- */

static struct core_live *active_live;   /* for the signal handlers */

static void detach_threads(struct core_live *live)
{
	for (size_t i = 0; i < live->nthreads; i++) {
		struct live_thread *t = &live->threads[i];
		if (!t->seized || t->gone)
			continue;
		if (!t->stopped) {
			int st;
			if (waitpid(t->tid, &st, __WALL | WNOHANG) == t->tid && WIFSTOPPED(st))
				t->stopped = true;
		}
		/* A stopped thread leaves its stop only by dying (SIGKILL). */
		if (ptrace(PTRACE_DETACH, t->tid, NULL, (void *)(uintptr_t)t->resume_sig) != 0 &&
		    errno == ESRCH && t->stopped)
			live->killed = 1;
		t->seized = t->interrupted = false;
	}
}

/* Async-signal-safe: syscalls only. */
/* Marked detached first: the deadline's timer may fire while the analysis
 * detaches on seeing the same deadline, and its handler must not detach the
 * threads again (a second PTRACE_DETACH fails as for a thread killed). */
static void detach_now(struct core_live *live)
{
	if (live->detached)
		return;
	live->detached = 1;
	if ((pid_t)syscall(SYS_gettid) == live->tracer_tid)
		detach_threads(live);
	clock_gettime(CLOCK_MONOTONIC, &live->stop_end);
}

static void on_deadline(int sig)
{
	(void)sig;
	if (active_live && !active_live->detached) {
		active_live->deadline_hit = 1;
		detach_now(active_live);
	}
}

/* SIGINT, SIGTERM: let the process go, then end as the signal would.
 * Another thread than the tracer cannot detach: exiting does it. */
static void on_terminate(int sig)
{
	if (active_live)
		detach_now(active_live);
	_exit(128 + sig);
}

static void check_deadline(struct core_live *live)
{
	if (!live->stopped || live->detached || !live->max_pause_ms)
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (elapsed_us(&live->stop_start, &now) >= (uint64_t)live->max_pause_ms * 1000) {
		live->deadline_hit = 1;
		detach_now(live);
	}
}

static void install_handlers(struct core_live *live)
{
	active_live = live;
	live->tracer_tid = (pid_t)syscall(SYS_gettid);
	struct sigaction sa = {.sa_handler = on_terminate};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &live->old_int);
	sigaction(SIGTERM, &sa, &live->old_term);
	struct sigaction timer_sa = {.sa_handler = on_deadline};
	sigemptyset(&timer_sa.sa_mask);
	sigaction(SIGRTMIN + 2, &timer_sa, &live->old_timer);
	live->handlers = true;
}

static void remove_handlers(struct core_live *live)
{
	if (live->timer_armed) {
		timer_delete(live->timer);
		live->timer_armed = false;
	}
	if (!live->handlers)
		return;
	sigaction(SIGINT, &live->old_int, NULL);
	sigaction(SIGTERM, &live->old_term, NULL);
	sigaction(SIGRTMIN + 2, &live->old_timer, NULL);
	live->handlers = false;
	active_live = NULL;
}

/* The deadline also when the analysis reads nothing new for a while: a
 * timer signal to this thread, the tracer. */
static void arm_timer(struct core_live *live)
{
	if (!live->max_pause_ms)
		return;
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGRTMIN + 2;
	sev._sigev_un._tid = live->tracer_tid;
	if (timer_create(CLOCK_MONOTONIC, &sev, &live->timer) != 0)
		return;
	struct itimerspec its = {
		.it_value = {.tv_sec = live->max_pause_ms / 1000,
			     .tv_nsec = (long)(live->max_pause_ms % 1000) * 1000000},
	};
	live->timer_armed = timer_settime(live->timer, 0, &its, NULL) == 0;
}

static struct live_thread *thread_add(struct core_live *live, pid_t tid)
{
	if (!base_table_reserve(&live->tid_slots, &live->tid_cap, live->nthreads, sizeof(struct tid_slot)))
		return NULL;
	if (live->nthreads == live->threads_cap) {
		size_t cap = live->threads_cap ? 2 * live->threads_cap : 64;
		struct live_thread *t = realloc(live->threads, cap * sizeof(*t));
		if (!t)
			return NULL;
		live->threads = t;
		live->threads_cap = cap;
	}
	size_t i = base_hash_slot((uint64_t)tid, live->tid_cap);
	while (live->tid_slots[i].tid)
		i = (i + 1) & (live->tid_cap - 1);
	live->tid_slots[i] = (struct tid_slot){(uint64_t)tid, live->nthreads};
	struct live_thread *t = &live->threads[live->nthreads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	return t;
}

static struct live_thread *thread_find(struct core_live *live, pid_t tid)
{
	if (!live->tid_cap)
		return NULL;
	for (size_t i = base_hash_slot((uint64_t)tid, live->tid_cap); live->tid_slots[i].tid;
	     i = (i + 1) & (live->tid_cap - 1))
		if (live->tid_slots[i].tid == (uint64_t)tid)
			return &live->threads[live->tid_slots[i].index];
	return NULL;
}

/* /proc/PID/task of LIVE, or NULL when the process is gone. */
static DIR *open_task_dir(const struct core_live *live)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)live->pid);
	return opendir(path);
}

/* The next thread id in DIR, 0 at its end. */
static pid_t next_task(DIR *dir)
{
	struct dirent *d;
	while ((d = readdir(dir)) != NULL) {
		char *end;
		long tid = strtol(d->d_name, &end, 10);
		if (!*end && tid > 0 && tid <= INT32_MAX)
			return (pid_t)tid;
	}
	return 0;
}

/* True when /proc/PID/NAME (a stat file) is gone or says a zombie. */
static bool stat_gone(pid_t pid, const char *name)
{
	char *stat = read_proc(pid, name, NULL);
	const char *paren = stat ? strrchr(stat, ')') : NULL;
	bool gone = !paren || paren[1] != ' ' || paren[2] == 'Z' || paren[2] == 'X' || paren[2] == 'x';
	free(stat);
	return gone;
}

/* The kernel refuses to seize a thread that is exiting (EPERM, as for a
 * process it may not trace): true when TID is gone or a zombie. */
static bool thread_exiting(const struct core_live *live, pid_t tid)
{
	char name[48];
	snprintf(name, sizeof(name), "task/%d/stat", (int)tid);
	return stat_gone(live->pid, name);
}

/* Seize every thread in /proc/PID/task not yet seized (they go on
 * running); the number of new ones, or -1 with *ERR. */
static int seize_new_threads(struct core_live *live, struct core_error **err)
{
	DIR *dir = open_task_dir(live);
	if (!dir) {
		*err = core_error_create(CORE_ERROR_USAGE, "process %d exited", (int)live->pid);
		return -1;
	}
	int added = 0;
	pid_t tid;
	while ((tid = next_task(dir)) != 0) {
		struct live_thread *t = thread_find(live, tid);
		if (t && (t->seized || t->gone))
			continue;
		if (!t)
			t = thread_add(live, tid);
		if (!t) {
			*err = &core_error_nomem;
			added = -1;
			break;
		}
		added++;
		if (ptrace(PTRACE_SEIZE, t->tid, NULL, NULL) != 0) {
			int e = errno;
			t->gone = true;
			if (e == ESRCH || (e == EPERM && thread_exiting(live, t->tid)))
				continue;   /* exited before it could be seized */
			*err = e == EPERM ? not_permitted(live)
					  : core_error_create(CORE_ERROR_USAGE, "process %d: cannot attach to thread %d: %s",
							      (int)live->pid, t->tid, strerror(e));
			added = -1;
			break;
		}
		t->seized = true;
	}
	closedir(dir);
	return added;
}

/* Interrupt every seized thread not yet interrupted, one call after the
 * other: each wakes a thread that may take the CPU from this one, so no
 * seizing (nor reading /proc) lies between the first and the last. */
static void interrupt_seized(struct core_live *live)
{
	for (size_t i = 0; i < live->nthreads; i++) {
		struct live_thread *t = &live->threads[i];
		if (!t->seized || t->interrupted || t->gone)
			continue;
		t->interrupted = true;
		if (ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) != 0 && errno == ESRCH)
			t->gone = true;
	}
}

/* What waitpid said of seized thread T, not yet stopped: its stop, or its
 * end (dropped with a warning); no STATUS: it is no tracee of ours any more. */
static void take_wait_status(struct core_live *live, struct live_thread *t, const int *status)
{
	if (status && WIFSTOPPED(*status)) {
		t->stopped = true;
		int event = *status >> 16;
		/* A signal-delivery stop holds the signal back: send it on. */
		t->resume_sig = event == 0 && WSTOPSIG(*status) != SIGTRAP ? WSTOPSIG(*status) : 0;
		return;
	}
	if (status && !WIFEXITED(*status) && !WIFSIGNALED(*status))
		return;
	t->gone = true;
	live_warn(live, "thread %d exited while the process was being stopped: dropped", t->tid);
}

/* Wait for the events of WHO (a thread id, or -1: any tracee) until seized
 * thread T has stopped or ended.  Waiting on one thread id costs the kernel
 * nothing for the other tracees; waiting on any walks them all, every time.
 * False when the deadline's timer interrupted the wait. */
static bool wait_until_stopped(struct core_live *live, struct live_thread *t, pid_t who)
{
	while (!t->stopped && !t->gone) {
		int st;
		pid_t r = waitpid(who, &st, __WALL);
		if (r < 0 && errno == EINTR && !live->detached)
			continue;
		if (r < 0 && errno != ECHILD)
			return false;
		struct live_thread *u = r < 0 ? t : thread_find(live, r);
		if (u && u->seized && !u->stopped && !u->gone)
			take_wait_status(live, u, r < 0 ? NULL : &st);
	}
	return true;
}

/* Wait until every seized thread reports its stop (the deadline's timer
 * interrupts the wait).  Each thread by its id, the main thread last and
 * among the events of all: when the process exits, the main thread's end is
 * reported only once every other thread's end has been collected, those of
 * threads that had stopped before included.  False when the deadline came
 * first. */
static bool wait_stopped(struct core_live *live)
{
	struct live_thread *main_thread = thread_find(live, live->pid);
	for (size_t i = 0; i < live->nthreads && !live->detached; i++) {
		struct live_thread *t = &live->threads[i];
		if (t != main_thread && t->seized && !wait_until_stopped(live, t, t->tid))
			return false;
	}
	if (main_thread && main_thread->seized && !live->detached &&
	    !wait_until_stopped(live, main_thread, -1))
		return false;
	return !live->detached;
}

static void read_registers(struct core_live *live)
{
	for (size_t i = 0; i < live->nthreads; i++) {
		struct live_thread *t = &live->threads[i];
		if (!t->stopped || t->gone)
			continue;
		struct iovec iov = {t->regs, sizeof(t->regs)};
		t->regs_known = false;
		if (ptrace(PTRACE_GETREGSET, t->tid, (void *)(uintptr_t)NT_PRSTATUS, &iov) != 0) {
			t->gone = true;
			live_warn(live, "thread %d exited during the snapshot: dropped", t->tid);
		} else {
			t->regs_known = true;
		}
	}
}

/* The end of the stack a runtime recorded around SP of thread T, or 0: a
 * thread still where the warm-up saw it blocked has not left that stack
 * (a goroutine's few KiB inside the runtime's heap mapping), so reading on
 * to the mapping's end reads nothing its unwind needs. */
static uint64_t recorded_stack_end(const struct core_live *live, const struct live_thread *t, uint64_t sp)
{
	if (!t->warm_sp || t->warm_sp != sp || t->warm_pc != t->regs[CORE_REG_RIP])
		return 0;
	for (size_t i = 0; i < live->nstacks; i++)
		if (sp >= live->stacks[i].lo && sp < live->stacks[i].hi)
			return PAGE_DOWN(live->stacks[i].hi + PAGE - 1);
	return 0;
}

/* The stack above each stack pointer (and its red zone), in one read per
 * thread: the unwinder reads it all, frame by frame. */
static void prefetch_stacks(struct core_live *live)
{
	for (size_t i = 0; i < live->nthreads && !live->detached; i++) {
		struct live_thread *t = &live->threads[i];
		if (t->gone)
			continue;
		uint64_t sp = t->regs[CORE_REG_RSP];
		const struct live_map *m = map_for(live, sp >= 128 ? sp - 128 : sp);
		if (!m)
			continue;
		uint64_t start = PAGE_DOWN(sp >= 128 ? sp - 128 : sp);
		if (start < m->start)
			start = m->start;
		uint64_t end = m->end - start > STACK_BULK ? start + STACK_BULK : m->end;
		uint64_t recorded = recorded_stack_end(live, t, sp);
		if (recorded > start && recorded < end)
			end = recorded;
		prefetch(live, start, end);
	}
}

static bool read_word(struct core_live *live, uint64_t addr, uint64_t *v)
{
	return core_live_read(live, addr, v, sizeof(*v)) == sizeof(*v);
}

/* The auxv entry TYPE, or 0. */
static uint64_t auxv_value(const struct core_live *live, uint64_t type)
{
	for (size_t off = 0; off + 16 <= live->auxv_len; off += 16) {
		uint64_t t, v;
		memcpy(&t, live->auxv + off, 8);
		memcpy(&v, live->auxv + off + 8, 8);
		if (t == type)
			return v;
		if (t == AT_NULL)
			break;
	}
	return 0;
}

/* The dynamic linker's list of loaded objects (r_debug through the
 * executable's DT_DEBUG), which gdb reads to find the libraries: read
 * while stopped, so that a snapshot holds it. */
static void prefetch_link_map(struct core_live *live)
{
	uint64_t phdr = auxv_value(live, AT_PHDR), phnum = auxv_value(live, AT_PHNUM);
	uint64_t dynamic = 0, bias = 0;
	bool have_phdr = false;
	for (uint64_t i = 0; i < phnum && i < 256; i++) {
		Elf64_Phdr ph;
		if (core_live_read(live, phdr + i * sizeof(ph), &ph, sizeof(ph)) != sizeof(ph))
			return;
		if (ph.p_type == PT_PHDR) {
			bias = phdr - ph.p_vaddr;
			have_phdr = true;
		} else if (ph.p_type == PT_DYNAMIC) {
			dynamic = ph.p_vaddr;
		}
	}
	if (!dynamic || !have_phdr)
		return;
	uint64_t r_debug = 0;
	for (uint64_t at = dynamic + bias, n = 0; n < 512; n++, at += 16) {
		uint64_t tag, val;
		if (!read_word(live, at, &tag) || !read_word(live, at + 8, &val) || tag == DT_NULL)
			break;
		if (tag == DT_DEBUG)
			r_debug = val;
	}
	uint64_t lm;
	if (!r_debug || !read_word(live, r_debug + 8, &lm))
		return;
	for (unsigned n = 0; lm && n < 4096; n++) {
		uint64_t link[5];   /* l_addr, l_name, l_ld, l_next, l_prev */
		char name[512];
		if (core_live_read(live, lm, link, sizeof(link)) != sizeof(link))
			return;
		core_live_read(live, link[1], name, sizeof(name));   /* the pages it spans */
		uint64_t tag;
		read_word(live, link[2], &tag);
		lm = link[3];
	}
}

/* The pages the warm-up's analysis read, read again now in runs: a hung
 * process's structures are where they were a moment ago, so the analysis
 * after the stop finds them (what moved meanwhile reads as unreadable). */
/* Read up to N pages (PAGES) in one call, into the cache; returns how many
 * were taken (read, or found unreadable: the first one that faults). */
static size_t fetch_batch(struct core_live *live, const uint64_t *pages, size_t n, unsigned char *buf)
{
	struct iovec local[PAGE_BATCH], remote[PAGE_BATCH];
	/* Into the arena's pages where they last: no copy, no allocation. */
	unsigned char *into = live->arena_pages - live->arena_used >= n ? live->arena + live->arena_used * PAGE
									 : buf;
	for (size_t k = 0; k < n; k++) {
		local[k] = (struct iovec){into + k * PAGE, PAGE};
		remote[k] = (struct iovec){(void *)(uintptr_t)pages[k], PAGE};
	}
	ssize_t r = live->use_mem_fd ? -1 : process_vm_readv(live->pid, local, n, remote, n, 0);
	if (r < 0) {
		if (errno == ESRCH)
			live->gone = true;
		/* Refused (or /proc/PID/mem already in use): one page. */
		bool ok = fetch(live, pages[0], buf, PAGE) == PAGE;
		slot_put(live, pages[0], ok ? buf : NULL);
		return 1;
	}
	size_t ok = (size_t)r / PAGE;
	for (size_t k = 0; k < ok; k++)
		if (into == buf)
			slot_put(live, pages[k], buf + k * PAGE);
		else
			slot_keep(live, pages[k], into + k * PAGE, true);
	if (into != buf)
		live->arena_used += ok;
	if (ok < n)
		slot_put(live, pages[ok++], NULL);   /* the page that faulted */
	return ok;
}

/* The pages the warm-up's analysis read, read again now, hundreds a call:
 * a hung process's structures are where they were a moment ago, so the
 * analysis finds them in the cache (what moved meanwhile is read when the
 * analysis runs stopped, or reads as unreadable after). */
static void prefetch_warm_pages(struct core_live *live)
{
	unsigned char *buf = live->nwarm_pages ? malloc(PAGE_BATCH * PAGE) : NULL;
	if (!buf)
		return;
	uint64_t batch[PAGE_BATCH];
	size_t i = 0;
	while (i < live->nwarm_pages && !live->detached && !live->gone && !live->cache_full) {
		size_t k = 0;
		for (; i < live->nwarm_pages && k < PAGE_BATCH; i++)
			if (!slot_find(live, live->warm_pages[i]))
				batch[k++] = live->warm_pages[i];
		for (size_t done = 0; done < k && !live->gone;)
			done += fetch_batch(live, batch + done, k - done, buf);
		check_deadline(live);
	}
	free(buf);
}

static void set_taken_at(struct core_live *live)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	core_usec_iso8601((uint64_t)now.tv_sec * 1000000 + (uint64_t)now.tv_nsec / 1000, live->taken_at);
}

/* What /proc says of the threads the warm-up found and of the open files,
 * read just before the stop (a stopped thread's state is the tracer's, and
 * the stop wakes a sleeping thread: its time off the CPU starts again). */
static void read_extras(struct core_live *live)
{
	free(live->infos);
	live->ninfos = 0;
	live->infos = calloc(live->nthreads ? live->nthreads : 1, sizeof(*live->infos));
	for (size_t i = 0; live->infos && i < live->nthreads; i++)
		if (core_liveinfo_thread(live->pid, live->threads[i].tid, &live->infos[live->ninfos]))
			live->ninfos++;
	if (live->infos && !core_liveinfo_off_cpu(live->pid, live->infos, live->ninfos))
		live_warn(live, "cannot restore asyncore's own CPU affinity: %s", strerror(errno));
	core_fds_free(live->fds, live->nfds);
	if (!core_liveinfo_fds(live->pid, &live->fds, &live->nfds))
		live_warn(live, "process %d: its open files could not be listed (out of memory)", (int)live->pid);
}

struct core_error *core_live_stop(struct core_live *live)
{
	struct core_error *err = NULL;
	if (!live->extras_read)
		read_extras(live);   /* a second stop would see the first one's wake-ups */
	live->extras_read = true;
	install_handlers(live);
	set_taken_at(live);
	clock_gettime(CLOCK_MONOTONIC, &live->stop_start);
	live->stopped = true;
	for (;;) {
		int added = seize_new_threads(live, &err);
		interrupt_seized(live);
		if (added < 0)
			goto fail;
		if (added == 0)
			break;
	}
	arm_timer(live);
	bool all = wait_stopped(live);
	/* From here the deadline's signal must not cut the analysis's system
	 * calls short (the wait above needed it to). */
	struct sigaction timer_sa = {.sa_handler = on_deadline, .sa_flags = SA_RESTART};
	sigemptyset(&timer_sa.sa_mask);
	sigaction(SIGRTMIN + 2, &timer_sa, NULL);
	if (!all) {
		err = core_error_create(CORE_ERROR_USAGE,
			"process %d: not every thread stopped within --max-pause (%u ms): detached, nothing read",
			(int)live->pid, live->max_pause_ms);
		goto fail;
	}
	read_registers(live);
	size_t alive = 0;
	for (size_t i = 0; i < live->nthreads; i++)
		alive += !live->threads[i].gone;
	if (alive == 0) {
		err = core_error_create(CORE_ERROR_USAGE, "process %d exited while it was being stopped",
					(int)live->pid);
		goto fail;
	}
	prefetch_stacks(live);
	prefetch_link_map(live);
	prefetch_warm_pages(live);
	if (live->gone) {
		err = core_error_create(CORE_ERROR_USAGE, "process %d exited during the snapshot", (int)live->pid);
		goto fail;
	}
	return NULL;
fail:
	core_live_detach(live);
	return err;
}

/* A process killed while stopped (SIGKILL reaches traced threads) is gone
 * or a zombie once let go. */
static bool process_gone(const struct core_live *live)
{
	return stat_gone(live->pid, "stat");
}

void core_live_detach(struct core_live *live)
{
	if (!live || !live->stopped)
		return;
	bool first = !live->handlers_done;
	if (!live->detached)
		detach_now(live);
	else
		detach_threads(live);   /* a handler on another thread could not */
	remove_handlers(live);
	live->handlers_done = true;
	if (first && (live->killed || process_gone(live)))
		live->gone = true;
	if (live->deadline_hit) {
		live_warn(live, "the process was stopped for --max-pause (%u ms): detached, the report is partial "
			  "(what was not read by then is missing)", live->max_pause_ms);
		live->deadline_hit = 0;
	}
}

/* ---- warming up -------------------------------------------------------- */

/* A thread blocked in a system call shows its stack and instruction
 * pointers in /proc/PID/task/TID/syscall, without a stop. */
static void read_syscall_regs(struct core_live *live, struct live_thread *t)
{
	char name[64];
	snprintf(name, sizeof(name), "task/%d/syscall", (int)t->tid);
	char *text = read_proc(live->pid, name, NULL);
	if (!text)
		return;
	unsigned long long v[9];
	long nr;
	if (sscanf(text, "%ld %llx %llx %llx %llx %llx %llx %llx %llx", &nr, &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]) == 9 && nr >= 0) {
		memset(t->regs, 0, sizeof(t->regs));
		t->regs[CORE_REG_ORIG_RAX] = (uint64_t)nr;
		t->regs[CORE_REG_RDI] = v[0];
		t->regs[CORE_REG_RSI] = v[1];
		t->regs[CORE_REG_RDX] = v[2];
		t->regs[CORE_REG_R10] = v[3];
		t->regs[CORE_REG_R8] = v[4];
		t->regs[CORE_REG_R9] = v[5];
		t->regs[CORE_REG_RSP] = v[6];
		t->regs[CORE_REG_RIP] = v[7];
		t->warm_sp = v[6];
		t->warm_pc = v[7];
		t->regs_known = true;
	}
	free(text);
}

bool core_live_warm_begin(struct core_live *live)
{
	DIR *dir = open_task_dir(live);
	if (!dir)
		return false;
	pid_t tid;
	while ((tid = next_task(dir)) != 0) {
		struct live_thread *t = thread_find(live, tid);
		if (!t && !(t = thread_add(live, tid)))
			break;
		read_syscall_regs(live, t);
	}
	closedir(dir);
	/* A thread running user code shows nothing: it takes part with no
	 * registers (its walk ends at once), so that the rest still warms up. */
	live->warm_all_threads = true;
	for (size_t i = 0; i < live->nthreads; i++) {
		live->warm_all_threads &= live->threads[i].regs_known;
		live->threads[i].regs_known = true;
	}
	live->warming = live->nthreads > 0;
	return live->warming;
}

/* Before the stop, the room the stop fills: the arena's pages for the
 * pages the warm-up read, allocated and touched now (while stopped, each
 * page's allocation, first touch and copy cost more than its read), and a
 * page table large enough for them. */
static void prepare_stop_room(struct core_live *live)
{
	size_t want = live->used + live->nwarm_pages;
	while (2 * (want + 1) > live->nslots)
		if (!base_table_reserve(&live->slots, &live->nslots, want, sizeof(*live->slots)))
			break;
	live->arena = live->nwarm_pages ? malloc((size_t)live->nwarm_pages * PAGE) : NULL;
	if (live->arena) {
		memset(live->arena, 0, (size_t)live->nwarm_pages * PAGE);
		live->arena_pages = live->nwarm_pages;
	}
}

/* What was read (pinned pages aside) is forgotten, its pages (and the
 * missed ones) made the ones the next stop reads first. */
static void pages_to_warm(struct core_live *live)
{
	live->core = NULL;
	for (size_t i = 0; i < live->nthreads; i++)
		live->threads[i].regs_known = false;
	struct live_slot *old = live->slots;
	size_t oldn = live->nslots;
	free(live->warm_pages);
	live->warm_pages = malloc((live->used ? live->used : 1) * sizeof(*live->warm_pages));
	live->nwarm_pages = 0;
	for (size_t i = 0; live->warm_pages && i < oldn; i++)
		if (old[i].addr && !old[i].pinned && !old[i].transient && (old[i].data || old[i].missed))
			live->warm_pages[live->nwarm_pages++] = old[i].addr - 1;
	live->slots = NULL;
	live->nslots = live->used = 0;
	live->bytes_kept = 0;
	for (size_t i = 0; i < oldn; i++) {
		if (old[i].addr && old[i].pinned && old[i].data && slot_put(live, old[i].addr - 1, old[i].data))
			slot_find(live, old[i].addr - 1)->pinned = true;
		if (!old[i].in_arena)
			free(old[i].data);
	}
	free(old);
	free(live->arena);
	live->arena = NULL;
	live->arena_pages = live->arena_used = 0;
	live->nmissed = 0;
	prepare_stop_room(live);
}

void core_live_warm_end(struct core_live *live)
{
	live->warming = live->transient = false;
	/* What the warm-up read of a running process is not the stop's. */
	pages_to_warm(live);
}

size_t core_live_missed(const struct core_live *live)
{
	return live->nmissed;
}

bool core_live_again(struct core_live *live)
{
	if (!live->stopped || !live->detached || live->gone || live->killed)
		return false;
	live->paused_before_us = core_live_paused_us(live);   /* every stop so far */
	live->stopped = false;
	live->detached = 0;
	live->handlers_done = false;
	for (size_t i = 0; i < live->nthreads; i++) {
		struct live_thread *t = &live->threads[i];
		t->seized = t->interrupted = t->stopped = false;
		t->resume_sig = 0;
	}
	pages_to_warm(live);
	return true;
}

/* ---- inspecting ------------------------------------------------------ */

/* The ELF header page of each mapped file and the vDSO, read before the
 * stop: they never change, and libdwfl finds modules through them. */
static void read_headers(struct core_live *live)
{
	for (size_t i = 0; i < live->nmaps; i++) {
		const struct live_map *m = &live->maps[i];
		bool vdso = m->path && strcmp(m->path, "[vdso]") == 0;
		if (!(m->flags & PF_R) || !(vdso || (is_file_map(m) && m->offset == 0)))
			continue;
		uint64_t end = vdso ? m->end : m->start + PAGE;
		for (uint64_t page = m->start; page < end; page += PAGE) {
			unsigned char tmp[PAGE];
			struct live_slot *slot = slot_find(live, page);
			if (!slot && fetch(live, page, tmp, PAGE) == PAGE && slot_put(live, page, tmp))
				slot = slot_find(live, page);
			if (slot)
				slot->pinned = true;
		}
	}
}

struct core_error *core_live_inspect(pid_t pid, unsigned max_pause_ms, struct core_live **out)
{
	*out = NULL;
	if (pid <= 0)
		return core_error_create(CORE_ERROR_USAGE, "no such process: %d", (int)pid);
	if (pid == getpid())
		return core_error_create(CORE_ERROR_USAGE, "process %d is asyncore itself", (int)pid);
	struct core_live *live = calloc(1, sizeof(*live));
	if (!live)
		return &core_error_nomem;
	live->pid = pid;
	live->first_tid = pid;
	live->mem_fd = -1;
	live->max_pause_ms = max_pause_ms;
	struct core_error *err = check_process(live);
	if (err)
		goto fail;
	read_args(live);
	err = parse_maps(live);
	if (err)
		goto fail;
	live->auxv = (unsigned char *)read_proc(pid, "auxv", &live->auxv_len);
	if (!live->auxv) {
		err = errno == EACCES || errno == EPERM ? not_permitted(live)
			: core_error_create(CORE_ERROR_USAGE, "process %d: cannot read /proc/%d/auxv: %s", (int)pid,
					    (int)pid, strerror(errno));
		goto fail;
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	live->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
	read_headers(live);
	*out = live;
	return NULL;
fail:
	core_live_destroy(live);
	return err;
}

void core_live_destroy(struct core_live *live)
{
	if (!live)
		return;
	core_live_detach(live);
	remove_handlers(live);
	for (size_t i = 0; i < live->nmaps; i++) {
		free(live->maps[i].path);
		free(live->maps[i].host);
	}
	free(live->maps);
	for (size_t i = 0; i < live->nslots; i++)
		if (!live->slots[i].in_arena)
			free(live->slots[i].data);
	free(live->slots);
	free(live->arena);
	for (size_t i = 0; i < live->nwarnings; i++)
		free(live->warnings[i]);
	free(live->warnings);
	free(live->threads);
	free(live->infos);
	core_fds_free(live->fds, live->nfds);
	free(live->tid_slots);
	free(live->warm_pages);
	free(live->stacks);
	free(live->auxv);
	if (live->mem_fd >= 0)
		close(live->mem_fd);
	free(live);
}

uint64_t core_live_stopped_ns(const struct core_live *live)
{
	return live->stopped ? (uint64_t)live->stop_start.tv_sec * 1000000000u +
				       (uint64_t)live->stop_start.tv_nsec
			     : 0;
}

uint64_t core_live_paused_us(const struct core_live *live)
{
	if (!live->stopped)
		return live->paused_before_us;
	struct timespec now;
	const struct timespec *end = &live->stop_end;
	if (!live->detached) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		end = &now;
	}
	return live->paused_before_us + elapsed_us(&live->stop_start, end);
}

const char *core_live_taken_at(const struct core_live *live)
{
	return live->taken_at;
}

pid_t core_live_pid(const struct core_live *live)
{
	return live->pid;
}

uint64_t core_live_bytes_kept(const struct core_live *live)
{
	return live->bytes_kept;
}

bool core_live_first_thread(struct core_live *live, pid_t tid)
{
	for (size_t i = 0; i < live->nthreads; i++)
		if (live->threads[i].tid == tid && !live->threads[i].gone && live->threads[i].stopped) {
			live->first_tid = tid;
			return true;
		}
	return false;
}

void core_live_core_closed(struct core_live *live, const struct core *core)
{
	if (live && live->core == core)
		live->core = NULL;
}

bool core_live_add_stack(struct core_live *live, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return true;
	struct live_range *r = base_array_push(&live->stacks, &live->nstacks, &live->stacks_cap, sizeof(*r));
	if (r)
		*r = (struct live_range){lo, hi};
	return r != NULL;
}

bool core_live_warm_all_threads(const struct core_live *live)
{
	return live->warm_all_threads;
}

bool core_live_gone(const struct core_live *live)
{
	return live->gone;
}

const char *core_live_file_path(struct core_live *live, const char *recorded)
{
	for (size_t i = 0; i < live->nmaps; i++)
		if (live->maps[i].path && live->maps[i].host && strcmp(live->maps[i].path, recorded) == 0)
			return live->maps[i].host;
	return NULL;
}

/* ---- writing a core -------------------------------------------------- */

/* What marks the file as a snapshot of a running process (core.h). */
static void note_snapshot(struct core_writer *w, const struct core_live *live)
{
	enum { TAKEN_AT = sizeof(((struct core_snapshot *)0)->taken_at) };
	unsigned char desc[8 + TAKEN_AT + 8] = {0};
	uint64_t paused = core_live_paused_us(live), stopped = core_live_stopped_ns(live);
	memcpy(desc, &paused, 8);
	memcpy(desc + 8, live->taken_at, strnlen(live->taken_at, TAKEN_AT - 1));
	memcpy(desc + 8 + TAKEN_AT, &stopped, 8);
	core_writer_add_note(w, CORE_NOTE_OWNER, CORE_NOTE_SNAPSHOT, desc, sizeof(desc));
}

static void note_prstatus(struct core_writer *w, const struct core_live *live, const struct live_thread *t)
{
	struct elf_prstatus pr;
	memset(&pr, 0, sizeof(pr));
	pr.pr_pid = t->tid;
	pr.pr_ppid = live->ppid;
	pr.pr_pgrp = live->pgrp;
	pr.pr_sid = live->sid;
	_Static_assert(sizeof(pr.pr_reg) == sizeof(t->regs), "user_regs_struct is NT_PRSTATUS's");
	memcpy(&pr.pr_reg, t->regs, sizeof(t->regs));
	core_writer_add_note(w, "CORE", NT_PRSTATUS, &pr, sizeof(pr));
}

static void note_prpsinfo(struct core_writer *w, const struct core_live *live)
{
	struct elf_prpsinfo ps;
	memset(&ps, 0, sizeof(ps));
	static const char states[] = "RSDTZW";
	const char *s = strchr(states, live->state);
	ps.pr_state = s ? (char)(s - states) : 0;
	ps.pr_sname = live->state;
	ps.pr_uid = live->uid;
	ps.pr_gid = live->gid;
	ps.pr_pid = live->pid;
	ps.pr_ppid = live->ppid;
	ps.pr_pgrp = live->pgrp;
	ps.pr_sid = live->sid;
	memcpy(ps.pr_fname, live->comm, strnlen(live->comm, sizeof(ps.pr_fname)));
	memcpy(ps.pr_psargs, live->args, strnlen(live->args, sizeof(ps.pr_psargs)));
	core_writer_add_note(w, "CORE", NT_PRPSINFO, &ps, sizeof(ps));
}

/* NT_FILE: the mappings of files. */
static bool note_files(struct core_writer *w, const struct core_live *live)
{
	struct core_write_file *files = calloc(live->nmaps ? live->nmaps : 1, sizeof(*files));
	if (!files)
		return false;
	size_t n = 0;
	for (size_t i = 0; i < live->nmaps; i++) {
		const struct live_map *m = &live->maps[i];
		if (is_file_map(m))
			files[n++] = (struct core_write_file){ m->start, m->end, m->offset, m->path };
	}
	core_writer_add_files(w, files, n);
	free(files);
	return true;
}

/* The threads' status, the main thread first (a report signs it). */
static bool add_notes(struct core_writer *w, const struct core_live *live)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < live->nthreads; i++) {
			const struct live_thread *t = &live->threads[i];
			if (!t->gone && t->regs_known && (pass == 0) == (t->tid == live->first_tid))
				note_prstatus(w, live, t);
		}
	note_prpsinfo(w, live);
	note_snapshot(w, live);
	core_liveinfo_note_threads(w, live->infos, live->ninfos);
	if (!core_liveinfo_note_fds(w, live->fds, live->nfds))
		return false;
	core_writer_add_note(w, "CORE", NT_AUXV, live->auxv, live->auxv_len);
	return note_files(w, live);
}

struct core_error *core_live_writer(const struct core_live *live, struct core_writer **out)
{
	struct core_writer *w = NULL;
	struct core_error *err = core_writer_create(EM_X86_64, &w);
	if (err)
		return err;
	if (!add_notes(w, live))
		goto nomem;
	for (size_t i = 0; i < live->nmaps; i++)
		core_writer_add_region(w, live->maps[i].start, live->maps[i].end, live->maps[i].flags);
	for (size_t i = 0; i < live->nslots; i++)
		if (live->slots[i].addr && live->slots[i].data)
			core_writer_keep(w, live->slots[i].addr - 1, PAGE);
	*out = w;
	return NULL;
nomem:
	core_writer_destroy(w);
	return &core_error_nomem;
}

bool core_live_read_kept(void *live, uint64_t addr, void *buf, size_t len)
{
	const struct core_live *l = live;
	unsigned char *out = buf;
	for (size_t done = 0; done < len;) {
		uint64_t page = PAGE_DOWN(addr + done);
		const struct live_slot *s = slot_find(l, page);
		if (!s || !s->data)
			return false;
		size_t at = (size_t)(addr + done - page), n = PAGE - at < len - done ? PAGE - at : len - done;
		memcpy(out + done, s->data + at, n);
		done += n;
	}
	return true;
}

int core_live_write_core(struct core_live *live, FILE *out)
{
	struct core_writer *w = NULL;
	struct core_error *err = core_live_writer(live, &w);
	if (!err)
		err = core_writer_write(w, core_live_read_kept, live, out);
	core_writer_destroy(w);
	int rc = err ? -1 : 0;
	if (err)
		errno = err->kind == CORE_ERROR_NOMEM ? ENOMEM : EIO;
	core_error_destroy(err);
	return rc;
}

/* The core's reader (reader.h): the process's memory, its files' host
 * paths, its stop. */
static size_t reader_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return core_live_read(ctx, addr, buf, len);
}

static const char *reader_file_path(void *ctx, const char *recorded)
{
	return core_live_file_path(ctx, recorded);
}

static uint64_t reader_stopped_ns(const void *ctx)
{
	return core_live_stopped_ns(ctx);
}

static void reader_transient(void *ctx, bool on)
{
	struct core_live *live = ctx;
	live->transient = on;
}

static bool reader_running(const void *ctx)
{
	(void)ctx;
	return true;
}

static void reader_closed(void *ctx, const struct core *core)
{
	core_live_core_closed(ctx, core);
}

static const struct core_reader_ops live_reader = {
	.read = reader_read,
	.file_path = reader_file_path,
	.stopped_ns = reader_stopped_ns,
	.running = reader_running,
	.transient = reader_transient,
	.closed = reader_closed,
};

/* ---- the core over the process ---------------------------------------- */

struct core_error *core_live_open_core(struct core_live *live, struct core **out)
{
	*out = NULL;
	int fd = memfd_create("asyncore-live", MFD_CLOEXEC);
	if (fd < 0)
		return core_error_create(CORE_ERROR_IO, "cannot create a memory file: %s", strerror(errno));
	int dup_fd = dup(fd);
	FILE *f = dup_fd >= 0 ? fdopen(dup_fd, "w") : NULL;
	if (!f) {
		if (dup_fd >= 0)
			close(dup_fd);
		close(fd);
		return core_error_create(CORE_ERROR_IO, "cannot write a memory file: %s", strerror(errno));
	}
	int rc = core_live_write_core(live, f);
	int e = errno;
	fclose(f);
	if (rc != 0) {
		close(fd);
		return e == ENOMEM ? &core_error_nomem
				   : core_error_create(CORE_ERROR_IO, "cannot write a memory file: %s", strerror(e));
	}
	char name[64];
	snprintf(name, sizeof(name), "process %d", (int)live->pid);
	struct core_reader reader = { &live_reader, live };
	struct core_error *err = core_open_reader(name, fd, &reader, out);
	if (err)
		return err;
	live->core = *out;
	for (size_t i = 0; i < live->nwarnings; i++)
		core_warn(*out, "%s", live->warnings[i]);
	return NULL;
}
