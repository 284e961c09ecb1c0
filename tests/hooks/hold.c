/* The test build's hold points (cli/test_hooks.h).
 *
 * ASYNCORE_TEST_HOLD=DIR: a worker that starts analysing a core whose file
 * name NAME has a FIFO DIR/NAME.held waits there.  It opens DIR/NAME.held
 * for writing (which blocks until the test opens it to read), writes its
 * pid and a newline, then reads DIR/NAME.go (blocking until the test opens
 * it to write) until end of file, and goes on.  The test thus knows which
 * worker holds which core, and acts while it is held: signals it, signals
 * the supervisor, then releases it or not.  No clock is involved.
 *
 * report --pid and snapshot of process PID wait the same way at
 * DIR/live-PID.held, warmed up and not yet stopped: the test changes the
 * process then; and at DIR/stopped-PID.held, the process stopped, before
 * the detach: the test sees --max-pause let it go. */
#include "../../cli/test_hooks.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* DIR/NAME.SUFFIX into BUF; false when it does not fit. */
static bool hold_path(char *buf, size_t len, const char *dir, const char *name, const char *suffix)
{
	int n = snprintf(buf, len, "%s/%s.%s", dir, name, suffix);
	return n > 0 && (size_t)n < len;
}

static int open_retrying(const char *path, int flags)
{
	int fd;
	do
		fd = open(path, flags | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	return fd;
}

/* Held at NAME when the test made DIR/NAME.held a FIFO. */
static void hold_at(const char *name)
{
	const char *dir = getenv("ASYNCORE_TEST_HOLD");
	if (!dir || !*dir)
		return;
	char held[4096], go[4096];
	struct stat st;
	if (!hold_path(held, sizeof(held), dir, name, "held") ||
	    !hold_path(go, sizeof(go), dir, name, "go") || stat(held, &st) != 0 || !S_ISFIFO(st.st_mode))
		return;
	int fd = open_retrying(held, O_WRONLY);
	if (fd < 0)
		return;
	char line[32];
	int n = snprintf(line, sizeof(line), "%ld\n", (long)getpid());
	if (write(fd, line, (size_t)n) != n) {
		/* the test stopped reading: it gets no pid, and holds nothing */
	}
	close(fd);
	fd = open_retrying(go, O_RDONLY);
	if (fd < 0)
		return;
	char c;
	for (;;) {
		ssize_t r = read(fd, &c, 1);
		if (r > 0 || (r < 0 && errno == EINTR))
			continue;
		break;
	}
	close(fd);
}

void test_hook_analysing(const char *path)
{
	if (!path)
		return;
	const char *slash = strrchr(path, '/');
	hold_at(slash ? slash + 1 : path);
}

void test_hook_warmed(long pid)
{
	char name[32];
	snprintf(name, sizeof(name), "live-%ld", pid);
	hold_at(name);
}

void test_hook_stopped(long pid)
{
	char name[32];
	snprintf(name, sizeof(name), "stopped-%ld", pid);
	hold_at(name);
}
