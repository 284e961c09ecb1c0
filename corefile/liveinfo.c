/* Threads' names, states and CPU times and the fd table of a running
 * process, from /proc, and the notes a snapshot keeps them in. */
#include "liveinfo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/array.h"
#include "target.h"
#include "corewrite.h"

enum {
	MAX_FDS = 65536,            /* fds listed at most */
	TARGET_MAX = 4096,          /* a readlink's text */
	THREAD_NOTE_SIZE = 32,
	OFF_CPU_NOTE_SIZE = 16,
	STAT_PROCESSOR = 39,        /* stat's field: the CPU it last ran on */
	CPU_BITS_FIRST = 1024,      /* an affinity mask's size tried first */
	CPU_BITS_MAX = 1 << 20,
	SOCKET_TEXT = 192,
};

static bool read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n;
	do
		n = read(fd, buf, len - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n < 0)
		return false;
	buf[n] = '\0';
	return true;
}

bool core_liveinfo_thread(pid_t pid, pid_t tid, struct core_thread_info *out)
{
	char path[96], stat[1024];
	memset(out, 0, sizeof(*out));
	out->tid = tid;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	if (!read_small(path, stat, sizeof(stat)))
		return false;
	/* "TID (comm) S ppid ...": comm may hold spaces and parentheses */
	char *open_paren = strchr(stat, '('), *close_paren = strrchr(stat, ')');
	if (!open_paren || !close_paren || close_paren < open_paren)
		return false;
	size_t clen = (size_t)(close_paren - open_paren - 1);
	if (clen >= sizeof(out->comm))
		clen = sizeof(out->comm) - 1;
	memcpy(out->comm, open_paren + 1, clen);
	char *p = close_paren + 1;
	unsigned long long utime = 0, stime = 0;
	char state = 0;
	/* fields 3 (state) .. 15 (stime) */
	if (sscanf(p, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &state, &utime, &stime) != 3)
		return false;
	out->state = state;
	out->cpu_ticks = utime + stime;
	out->cpu = -1;
	/* fields 3 .. 38 are one word each past the comm */
	for (int field = 3; field < STAT_PROCESSOR && p; field++)
		p = strchr(p + 1, ' ');
	int cpu;
	if (p && sscanf(p, " %d", &cpu) == 1 && cpu >= 0)
		out->cpu = cpu;
	return true;
}

/* se.exec_start of a sched file (milliseconds with six decimals) in ns. */
static bool exec_start_ns(const char *path, uint64_t *ns)
{
	char buf[4096];
	if (!read_small(path, buf, sizeof(buf)))
		return false;
	const char *line = strstr(buf, "se.exec_start");
	const char *colon = line ? strchr(line, ':') : NULL;
	unsigned long long ms, frac;
	int a = 0, b = 0;
	if (!colon || sscanf(colon + 1, " %llu.%n%llu%n", &ms, &a, &frac, &b) != 2 || b - a != 6)
		return false;
	*ns = (uint64_t)ms * 1000000u + (uint64_t)frac;
	return true;
}

static bool is_asleep(const struct core_thread_info *t)
{
	return (t->state == 'S' || t->state == 'D') && t->cpu >= 0;
}

/* The calling thread's affinity into a mask it allocates (CPU_FREE);
 * NULL when it could not be read. */
static cpu_set_t *own_affinity(size_t *size)
{
	for (size_t bits = CPU_BITS_FIRST; bits <= CPU_BITS_MAX; bits *= 2) {
		cpu_set_t *set = CPU_ALLOC(bits);
		if (!set)
			return NULL;
		*size = CPU_ALLOC_SIZE(bits);
		if (sched_getaffinity(0, *size, set) == 0)
			return set;
		CPU_FREE(set);
		if (errno != EINVAL)
			return NULL;
	}
	return NULL;
}

/* Room for one CPU's reading of the threads asleep on it. */
struct off_cpu_room {
	uint64_t *stamp;
	size_t *which;
};

/* The threads of T[0, N) asleep that last ran on CPU, against that CPU's
 * clock: the calling thread's own stamp, read while it runs pinned there
 * (its affinity is the caller's to restore). */
static void off_cpu_on(pid_t pid, struct core_thread_info *t, size_t n, int cpu, struct off_cpu_room *room)
{
	cpu_set_t *only = CPU_ALLOC((size_t)cpu + 1);
	if (!only)
		return;
	size_t size = CPU_ALLOC_SIZE((size_t)cpu + 1);
	CPU_ZERO_S(size, only);
	CPU_SET_S((size_t)cpu, size, only);
	bool there = sched_setaffinity(0, size, only) == 0 && sched_getcpu() == cpu;
	CPU_FREE(only);
	char path[96];
	uint64_t now;
	size_t k = 0;
	/* the threads' stamps first, then the clock's: one that ran in
	 * between has just left the CPU */
	for (size_t i = 0; there && i < n; i++) {
		if (!is_asleep(&t[i]) || t[i].cpu != cpu)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/sched", (int)pid, (int)t[i].tid);
		if (exec_start_ns(path, &room->stamp[k]) && room->stamp[k] != 0)
			room->which[k++] = i;
	}
	if (!there || !exec_start_ns("/proc/thread-self/sched", &now))
		return;
	for (size_t j = 0; j < k; j++) {
		struct core_thread_info *w = &t[room->which[j]];
		w->off_cpu_ms = now > room->stamp[j] ? (now - room->stamp[j]) / 1000000u : 0;
		w->has_off_cpu = true;
	}
}

/* The scheduler stamps a thread's se.exec_start (its sched file) with the
 * task clock of its CPU's run queue (rq_clock_task) each time it accounts
 * the thread's run (update_curr), the last time as the thread leaves the
 * CPU to sleep; asleep, the thread keeps that stamp and its CPU (stat's
 * field 39).  The clock is per CPU, so "now" is the stamp the scheduler
 * gave this thread on being picked to run on that CPU, microseconds
 * before it reads it.  The difference is the wall time less what that CPU
 * spent in interrupts and lost to the hypervisor (steal), which the task
 * clock leaves out: never more than the wait.  A thread that a tracer
 * stopped (gdb, an earlier reading) ran when let go and counts from then. */
bool core_liveinfo_off_cpu(pid_t pid, struct core_thread_info *t, size_t n)
{
	int top = -1;
	for (size_t i = 0; i < n; i++)
		if (is_asleep(&t[i]) && t[i].cpu > top)
			top = t[i].cpu;
	if (top < 0)
		return true;
	size_t saved_size, ncpus = (size_t)top + 1;
	cpu_set_t *saved = own_affinity(&saved_size);
	struct off_cpu_room room = { malloc(n * sizeof(*room.stamp)), malloc(n * sizeof(*room.which)) };
	bool *seen = calloc(ncpus, sizeof(*seen));
	for (size_t i = 0; saved && room.stamp && room.which && seen && i < n; i++) {
		if (!is_asleep(&t[i]) || seen[t[i].cpu])
			continue;
		seen[t[i].cpu] = true;
		off_cpu_on(pid, t, n, t[i].cpu, &room);
	}
	bool restored = !saved || sched_setaffinity(0, saved_size, saved) == 0;
	CPU_FREE(saved);
	free(room.stamp);
	free(room.which);
	free(seen);
	return restored;
}

/* "a.b.c.d:port" of /proc/net/tcp's "0100007F:1538". */
static void ipv4_text(const char *hex, char *buf, size_t len)
{
	unsigned a, port;
	if (sscanf(hex, "%8X:%X", &a, &port) != 2) {
		snprintf(buf, len, "?");
		return;
	}
	snprintf(buf, len, "%u.%u.%u.%u:%u", a & 0xff, (a >> 8) & 0xff, (a >> 16) & 0xff, a >> 24, port);
}

/* "[x:x:...]:port" of tcp6's four host-order words. */
static void ipv6_text(const char *hex, char *buf, size_t len)
{
	unsigned w[4], port;
	if (sscanf(hex, "%8X%8X%8X%8X:%X", &w[0], &w[1], &w[2], &w[3], &port) != 5) {
		snprintf(buf, len, "?");
		return;
	}
	unsigned char b[16];
	for (int i = 0; i < 4; i++)
		for (int k = 0; k < 4; k++)
			b[4 * i + k] = (unsigned char)(w[i] >> (8 * k));
	size_t used = (size_t)snprintf(buf, len, "[");
	for (int i = 0; i < 8 && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%x", i ? ":" : "", (b[2 * i] << 8) | b[2 * i + 1]);
	if (used < len)
		snprintf(buf + used, len - used, "]:%u", port);
}

/* The addresses of socket INODE from /proc/PID/net/tcp or tcp6 into BUF. */
static bool tcp_socket(pid_t pid, const char *table, uint64_t inode, char *buf, size_t len)
{
	char path[64], line[512];
	snprintf(path, sizeof(path), "/proc/%d/net/%s", (int)pid, table);
	FILE *f = fopen(path, "re");
	bool found = false, v6 = strcmp(table, "tcp6") == 0;
	while (f && !found && fgets(line, sizeof(line), f)) {
		char local[64], peer[64], l[80], r[80];
		unsigned long long ino;
		if (sscanf(line, " %*s %63s %63s %*s %*s %*s %*s %*s %*s %llu", local, peer, &ino) != 3 ||
		    ino != inode)
			continue;
		(v6 ? ipv6_text : ipv4_text)(local, l, sizeof(l));
		(v6 ? ipv6_text : ipv4_text)(peer, r, sizeof(r));
		snprintf(buf, len, "%s -> %s", l, r);
		found = true;
	}
	if (f)
		fclose(f);
	return found;
}

/* A unix socket's path (or "unix" when it has none). */
static bool unix_socket(pid_t pid, uint64_t inode, char *buf, size_t len)
{
	char path[64], line[512];
	snprintf(path, sizeof(path), "/proc/%d/net/unix", (int)pid);
	FILE *f = fopen(path, "re");
	bool found = false;
	while (f && !found && fgets(line, sizeof(line), f)) {
		unsigned long long ino;
		int at = 0;
		if (sscanf(line, "%*s %*s %*s %*s %*s %*s %llu%n", &ino, &at) != 1 || ino != inode)
			continue;
		char *name = line + at;
		name += strspn(name, " ");
		name[strcspn(name, "\n")] = '\0';
		snprintf(buf, len, "unix%s%s", *name ? " " : "", name);
		found = true;
	}
	if (f)
		fclose(f);
	return found;
}

/* "socket:[77]" with what the kernel's tables say of it. */
static char *socket_target(pid_t pid, const char *link)
{
	unsigned long long inode;
	char where[SOCKET_TEXT], *out = NULL;
	if (sscanf(link, "socket:[%llu]", &inode) != 1 ||
	    !(tcp_socket(pid, "tcp", inode, where, sizeof(where)) ||
	      tcp_socket(pid, "tcp6", inode, where, sizeof(where)) ||
	      unix_socket(pid, inode, where, sizeof(where))))
		return strdup(link);
	return asprintf(&out, "%s %s", link, where) < 0 ? NULL : out;
}

static int fd_cmp(const void *a, const void *b)
{
	const struct core_fd *x = a, *y = b;
	return (x->fd > y->fd) - (x->fd < y->fd);
}

bool core_liveinfo_fds(pid_t pid, struct core_fd **out, size_t *n)
{
	char path[64], link[TARGET_MAX];
	*out = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	DIR *dir = opendir(path);
	if (!dir)
		return true;
	struct core_fd *fds = NULL;
	size_t count = 0, cap = 0;
	bool ok = true;
	struct dirent *e;
	while (ok && count < MAX_FDS && (e = readdir(dir))) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		if (end == e->d_name || *end || fd < 0)
			continue;
		ssize_t len = readlinkat(dirfd(dir), e->d_name, link, sizeof(link) - 1);
		if (len < 0)
			continue;
		link[len] = '\0';
		struct core_fd *f = base_array_push(&fds, &count, &cap, sizeof(*fds));
		if (!f) {
			ok = false;
			break;
		}
		f->fd = (int32_t)fd;
		f->target = strncmp(link, "socket:", 7) == 0 ? socket_target(pid, link) : strdup(link);
		ok = f->target != NULL;
	}
	closedir(dir);
	if (!ok) {
		core_fds_free(fds, count);
		return false;
	}
	if (count)
		qsort(fds, count, sizeof(*fds), fd_cmp);
	*out = fds;
	*n = count;
	return true;
}

void core_fds_free(struct core_fd *fds, size_t n)
{
	for (size_t i = 0; fds && i < n; i++)
		free(fds[i].target);
	free(fds);
}

/* CORE_NOTE_OFF_CPU of the threads whose time off the CPU is known (none
 * when memory ran out). */
static void note_off_cpu(struct core_writer *w, const struct core_thread_info *t, size_t n)
{
	unsigned char *d = calloc(n ? n : 1, OFF_CPU_NOTE_SIZE);
	size_t k = 0;
	for (size_t i = 0; d && i < n; i++) {
		if (!t[i].has_off_cpu)
			continue;
		unsigned char *e = d + k++ * OFF_CPU_NOTE_SIZE;
		uint32_t tid = (uint32_t)t[i].tid;
		memcpy(e, &tid, 4);
		memcpy(e + 8, &t[i].off_cpu_ms, 8);
	}
	core_writer_add_note(w, CORE_NOTE_OWNER, CORE_NOTE_OFF_CPU, d, k * OFF_CPU_NOTE_SIZE);
	free(d);
}

void core_liveinfo_note_threads(struct core_writer *w, const struct core_thread_info *t, size_t n)
{
	unsigned char *d = calloc(n ? n : 1, THREAD_NOTE_SIZE);
	if (!d) {
		core_writer_add_note(w, CORE_NOTE_OWNER, CORE_NOTE_THREADS, NULL, 0);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char *e = d + i * THREAD_NOTE_SIZE;
		uint32_t tid = (uint32_t)t[i].tid;
		memcpy(e, &tid, 4);
		e[4] = (unsigned char)t[i].state;
		memcpy(e + 8, &t[i].cpu_ticks, 8);
		memcpy(e + 16, t[i].comm, strnlen(t[i].comm, sizeof(t[i].comm) - 1));
	}
	core_writer_add_note(w, CORE_NOTE_OWNER, CORE_NOTE_THREADS, d, n * THREAD_NOTE_SIZE);
	free(d);
	note_off_cpu(w, t, n);
}

bool core_liveinfo_note_fds(struct core_writer *w, const struct core_fd *fds, size_t n)
{
	size_t len = 0;
	for (size_t i = 0; i < n; i++)
		len += 8 + ((strlen(fds[i].target) + 3) & ~(size_t)3);
	unsigned char *d = calloc(len ? len : 1, 1);
	if (!d)
		return false;
	size_t at = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t fd = (uint32_t)fds[i].fd, tlen = (uint32_t)strlen(fds[i].target);
		memcpy(d + at, &fd, 4);
		memcpy(d + at + 4, &tlen, 4);
		memcpy(d + at + 8, fds[i].target, tlen);
		at += 8 + ((tlen + 3u) & ~3u);
	}
	core_writer_add_note(w, CORE_NOTE_OWNER, CORE_NOTE_FDS, d, len);
	free(d);
	return true;
}

struct core_error *core_liveinfo_parse_threads(const unsigned char *desc, size_t len,
					       struct core_thread_info **out, size_t *n)
{
	size_t count = len / THREAD_NOTE_SIZE;
	*out = NULL;
	*n = 0;
	if (count == 0)
		return NULL;
	struct core_thread_info *t = calloc(count, sizeof(*t));
	if (!t)
		return &core_error_nomem;
	for (size_t i = 0; i < count; i++) {
		const unsigned char *e = desc + i * THREAD_NOTE_SIZE;
		uint32_t tid;
		memcpy(&tid, e, 4);
		t[i].tid = (int32_t)tid;
		t[i].state = (char)e[4];
		memcpy(&t[i].cpu_ticks, e + 8, 8);
		memcpy(t[i].comm, e + 16, sizeof(t[i].comm) - 1);
	}
	*out = t;
	*n = count;
	return NULL;
}

struct core_error *core_liveinfo_parse_off_cpu(const unsigned char *desc, size_t len,
					       struct core_off_cpu **out, size_t *n)
{
	size_t count = len / OFF_CPU_NOTE_SIZE;
	*out = NULL;
	*n = 0;
	if (count == 0)
		return NULL;
	struct core_off_cpu *o = calloc(count, sizeof(*o));
	if (!o)
		return &core_error_nomem;
	for (size_t i = 0; i < count; i++) {
		uint32_t tid;
		memcpy(&tid, desc + i * OFF_CPU_NOTE_SIZE, 4);
		o[i].tid = (int32_t)tid;
		memcpy(&o[i].ms, desc + i * OFF_CPU_NOTE_SIZE + 8, 8);
	}
	*out = o;
	*n = count;
	return NULL;
}

struct core_error *core_liveinfo_parse_fds(const unsigned char *desc, size_t len, struct core_fd **out,
					   size_t *n)
{
	size_t count = 0, cap = 0, at = 0;
	struct core_fd *fds = NULL;
	*out = NULL;
	*n = 0;
	while (len - at >= 8) {
		uint32_t fd, tlen;
		memcpy(&fd, desc + at, 4);
		memcpy(&tlen, desc + at + 4, 4);
		if (tlen > len - at - 8 || tlen > TARGET_MAX + SOCKET_TEXT)
			break;
		struct core_fd *f = base_array_push(&fds, &count, &cap, sizeof(*fds));
		if (!f)
			goto nomem;
		f->fd = (int32_t)fd;
		f->target = strndup((const char *)desc + at + 8, tlen);
		if (!f->target)
			goto nomem;
		size_t step = 8 + ((tlen + 3u) & ~(size_t)3);
		if (step > len - at)
			break;
		at += step;
	}
	*out = fds;
	*n = count;
	return NULL;
nomem:
	core_fds_free(fds, count);
	return &core_error_nomem;
}
