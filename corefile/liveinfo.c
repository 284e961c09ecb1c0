/* Threads' names, states and CPU times and the fd table of a running
 * process, from /proc, and the notes a snapshot keeps them in. */
#include "liveinfo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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
	return true;
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
