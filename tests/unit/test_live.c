/* corefile/live.c: a child process read live.  The child (a fork: the same
 * addresses) fills a buffer with a known pattern, starts a second thread
 * and blocks; the parent stops it, reads the pattern and both threads'
 * registers, lets it go, and reads the pattern again from the core it
 * writes, and how long the blocked main thread had been off the CPU (by the
 * test's clock from the moment it said it would block).  Then the
 * refusals: asyncore itself, a zombie, no such process. */
#define UNIT_GROUP "live"
#include "unit.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../corefile/live.h"
#include "../../corefile/liveinfo.h"

static unsigned char pattern[3 * 4096 + 123];
static int block_fd;

static void *second_thread(void *arg)
{
	(void)arg;
	char c;
	while (read(block_fd, &c, 1) < 0)
		;
	return NULL;
}

/* The child: the pattern, a second thread, then blocked until killed. */
static void child(int ready_fd, int block)
{
	for (size_t i = 0; i < sizeof(pattern); i++)
		pattern[i] = (unsigned char)(i * 7 + 3);
	block_fd = block;
	pthread_t t;
	pthread_create(&t, NULL, second_thread, NULL);
	if (write(ready_fd, "r", 1) != 1)
		_exit(1);
	second_thread(NULL);
	_exit(0);
}

static bool pattern_ok(const unsigned char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != (unsigned char)(i * 7 + 3))
			return false;
	return true;
}

/* The state letter of /proc/PID/stat. */
static char state_of(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return '?';
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

/* The state of PID once it has left the tracing stop ('t'): a detached
 * thread is resumed by the kernel but may not have run yet when detach
 * returns.  Bounded by the process itself, not a guessed delay: two
 * seconds of yields at most. */
static char state_after_detach(pid_t pid)
{
	char st = state_of(pid);
	for (int i = 0; i < 200000 && st == 't'; i++) {
		sched_yield();
		st = state_of(pid);
	}
	return st;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The snapshot's account of the main thread's wait (in read() since just
 * after READY_MS) against the clock around the stop, [BEFORE_MS,
 * AFTER_MS]: the kernel's task clock leaves out interrupts and steal, a
 * few per cent, and its stamps lag by a tick at most. */
static void check_off_cpu(const struct core *snap, pid_t pid, uint64_t ready_ms, uint64_t before_ms,
			  uint64_t after_ms)
{
	const struct core_off_cpu *main_wait = NULL;
	for (size_t i = 0; i < snap->noff_cpu; i++)
		if (snap->off_cpu[i].tid == pid)
			main_wait = &snap->off_cpu[i];
	CHECK("snapshot: both blocked threads' time off the CPU", snap->noff_cpu == 2 && main_wait);
	uint64_t least = before_ms - ready_ms, most = after_ms - ready_ms;
	char detail[128];
	snprintf(detail, sizeof(detail), "%llu ms, the clock %llu~%llu",
		 main_wait ? (unsigned long long)main_wait->ms : 0ull, (unsigned long long)least,
		 (unsigned long long)most);
	unit_check("snapshot: the main thread's wait by the clock",
		   main_wait && main_wait->ms + least / 10 + 20 >= least && main_wait->ms <= most + 20, detail,
		   __FILE__, __LINE__);
}

static void test_read_and_write(void)
{
	int ready[2], block[2];
	if (pipe(ready) != 0 || pipe(block) != 0)
		return;
	/* Anonymous memory the child has too, at the same address: never read
	 * while it is stopped. */
	unsigned char *unread = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (unread == MAP_FAILED)
		return;
	memset(unread, 0x5a, 4096);
	pid_t pid = fork();
	if (pid == 0)
		child(ready[1], block[0]);
	char c;
	CHECK("child ready", read(ready[0], &c, 1) == 1);
	uint64_t ready_ms = now_ms();
	usleep(100000);   /* both threads blocked in read() */

	struct core_live *live = NULL;
	struct core_error *err = core_live_inspect(pid, 5000, &live);
	CHECK("inspect", err == NULL && live != NULL);
	core_error_destroy(err);
	if (!live)
		goto out;
	/* the threads listed, as a report's warm-up lists them */
	CHECK("warm-up", core_live_warm_begin(live));
	core_live_warm_end(live);
	uint64_t before_ms = now_ms();
	err = core_live_stop(live);
	uint64_t after_ms = now_ms();
	CHECK("stop", err == NULL);
	core_error_destroy(err);
	CHECK("stopped: traced", state_of(pid) == 't');

	struct core *core = NULL;
	err = core_live_open_core(live, &core);
	CHECK("a core over the process", err == NULL && core != NULL);
	core_error_destroy(err);
	if (core) {
		CHECK("two threads, the main one first", core->nthreads == 2 && core->threads[0].tid == pid);
		bool regs = core->nthreads == 2;
		for (size_t i = 0; i < core->nthreads; i++)
			regs = regs && core->threads[i].regs[CORE_REG_RSP] && core->threads[i].regs[CORE_REG_RIP] &&
			       core->threads[i].regs[CORE_REG_FS_BASE];
		CHECK("registers read (rsp, rip, fs_base)", regs);
		unsigned char *buf = malloc(sizeof(pattern));
		CHECK("the pattern read across pages",
		      buf && core_read_bytes(core, (uint64_t)(uintptr_t)pattern, buf, sizeof(pattern)) &&
		      pattern_ok(buf, sizeof(pattern)));
		CHECK("an unmapped page faults", !core_read_bytes(core, 0x1000, buf, 8));
		core_live_detach(live);
		char st = state_after_detach(pid);
		CHECK("detached: the process runs", st == 'S' || st == 'R');
		CHECK("paused_us counted", core_live_paused_us(live) > 0);
		/* After the stop, what was read is still there; nothing new is. */
		CHECK("the pattern again after the detach",
		      buf && core_read_bytes(core, (uint64_t)(uintptr_t)pattern, buf, sizeof(pattern)) &&
		      pattern_ok(buf, sizeof(pattern)));
		CHECK("memory not read while stopped faults after",
		      buf && !core_read_bytes(core, (uint64_t)(uintptr_t)unread, buf, 8));
		free(buf);
		core_close(core);
	}

	/* The snapshot: an ELF core that core_open reads the same. */
	char path[] = "/tmp/asyncore-test-live-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	CHECK("snapshot written", f && core_live_write_core(live, f) == 0);
	if (f)
		fclose(f);
	struct core *snap = NULL;
	err = core_open(path, &snap);
	CHECK("snapshot opens as a core", err == NULL && snap != NULL);
	core_error_destroy(err);
	if (snap) {
		unsigned char *buf = malloc(sizeof(pattern));
		CHECK("snapshot: the pattern",
		      buf && core_read_bytes(snap, (uint64_t)(uintptr_t)pattern, buf, sizeof(pattern)) &&
		      pattern_ok(buf, sizeof(pattern)));
		CHECK("snapshot: two threads, psinfo, auxv, files",
		      snap->nthreads == 2 && snap->psinfo.present && snap->psinfo.pid == pid &&
		      snap->auxv.present && snap->nfiles > 0);
		check_off_cpu(snap, pid, ready_ms, before_ms, after_ms);
		free(buf);
		core_close(snap);
	}
	unlink(path);
	core_live_destroy(live);
out:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(ready[0]);
	close(ready[1]);
	close(block[0]);
	close(block[1]);
	munmap(unread, 4096);
}

static void test_refusals(void)
{
	struct core_live *live = NULL;
	struct core_error *err = core_live_inspect(getpid(), 0, &live);
	CHECK("itself refused", err && err->kind == CORE_ERROR_USAGE && !live);
	core_error_destroy(err);
	err = core_live_inspect(0x7ffffff0, 0, &live);
	CHECK("no such process", err && strstr(err->message, "no such process") && !live);
	core_error_destroy(err);
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	usleep(100000);
	err = core_live_inspect(pid, 0, &live);
	CHECK("a zombie refused", err && strstr(err->message, "zombie") && !live);
	core_error_destroy(err);
	waitpid(pid, NULL, 0);
}

int main(void)
{
	test_read_and_write();
	test_refusals();
	return unit_exit();
}
