#include "budget.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define CLI_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CLI_ASAN 1
#endif
#endif

#define MIB (1024 * 1024ull)

/* Set when an allocation failed since cli_guard_begin().  A library may
 * take a failed allocation for "not found" (libdwfl then goes on without a
 * module's debug info): without this, a report cut short by the ceiling
 * would look complete. */
static volatile sig_atomic_t allocation_failed;

#ifndef CLI_ASAN
/* malloc, calloc and realloc of the whole program (the libraries' calls
 * included, by ELF symbol interposition) are glibc's own, observed: a
 * failure is remembered.  free, memalign and the rest stay glibc's; they
 * share its one heap.  Not in AddressSanitizer builds, which replace the
 * allocator themselves. */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);

void *malloc(size_t size)
{
	void *p = __libc_malloc(size);
	if (!p)
		allocation_failed = 1;
	return p;
}

void *calloc(size_t n, size_t size)
{
	void *p = __libc_calloc(n, size);
	if (!p && n && size)
		allocation_failed = 1;
	return p;
}

void *realloc(void *old, size_t size)
{
	void *p = __libc_realloc(old, size);
	if (!p && size)
		allocation_failed = 1;
	return p;
}
#endif

uint64_t cli_default_max_memory(unsigned processes)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	uint64_t ram = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
	uint64_t share = ram / 2 / (processes ? processes : 1);
	return share > 256 * MIB ? share : 256 * MIB;
}

int cli_limit_memory(const struct cli_limits *l, char *why, size_t whylen)
{
#ifdef CLI_ASAN
	(void)l, (void)why, (void)whylen;
	return 0;
#else
	struct rlimit r;
	if (l->max_memory == 0)
		return 0;
	if (getrlimit(RLIMIT_DATA, &r) != 0)
		goto fail;
	/* Only the soft limit, never above the hard one. */
	r.rlim_cur = r.rlim_max == RLIM_INFINITY || l->max_memory < r.rlim_max ? l->max_memory
									       : r.rlim_max;
	if (setrlimit(RLIMIT_DATA, &r) != 0)
		goto fail;
	return 0;
fail:
	snprintf(why, whylen, "cannot set the memory limit (--max-memory): %s", strerror(errno));
	return -1;
#endif
}

const char *cli_memory_limit_message(const struct cli_limits *l, char *buf, size_t len)
{
	if (l->max_memory)
		snprintf(buf, len, "memory limit of %llu MiB reached (--max-memory)",
			 (unsigned long long)((l->max_memory + MIB - 1) / MIB));
	else
		snprintf(buf, len, "out of memory");
	return buf;
}

bool cli_out_of_memory(const struct core_error *err)
{
	return allocation_failed || (err && err->kind == CORE_ERROR_NOMEM);
}

/* What the guard does when the process ends during an analysis.  Written
 * before, read by an exit handler and a signal handler: only write() and
 * _exit() there. */
static struct {
	volatile sig_atomic_t active;
	int status;
	char memory[640], time[640];
	size_t memory_len, time_len;
} guard;

static void guard_at_exit(void)
{
	if (!guard.active)
		return;
	if (guard.memory_len && write(STDERR_FILENO, guard.memory, guard.memory_len) < 0)
		guard.memory_len = 0;   /* nothing more to do about a failing stderr */
	_exit(guard.status);
}

#ifndef CLI_ASAN   /* AddressSanitizer's own handlers report crashes */
/* A fatal signal after an allocation failed: a library that does not
 * handle running out of memory (libdw asserts, or follows the pointer it
 * could not get) stopped at the ceiling, so the ceiling is the reason.
 * Any other fatal signal is a crash of its own and stays one. */
static void guard_on_fatal(int sig)
{
	if (guard.active && allocation_failed) {
		if (guard.memory_len && write(STDERR_FILENO, guard.memory, guard.memory_len) < 0)
			guard.memory_len = 0;
		_exit(guard.status);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE};
#endif

static void guard_on_alarm(int sig)
{
	(void)sig;
	if (guard.time_len && write(STDERR_FILENO, guard.time, guard.time_len) < 0)
		guard.time_len = 0;
	_exit(guard.status);
}

void cli_guard_begin(const char *what, const struct cli_limits *l, int status)
{
	static bool registered;
	char limit[128];
	if (!registered)
		registered = atexit(guard_at_exit) == 0;
	guard.status = status;
	guard.memory_len = guard.time_len = 0;
	if (what) {
		int n = snprintf(guard.memory, sizeof(guard.memory), "asyncore: %s: %s\n", what,
				 cli_memory_limit_message(l, limit, sizeof(limit)));
		guard.memory_len = n > 0 && (size_t)n < sizeof(guard.memory) ? (size_t)n : 0;
		n = snprintf(guard.time, sizeof(guard.time),
			     "asyncore: %s: time limit of %u s reached (--timeout)\n", what, l->timeout);
		guard.time_len = n > 0 && (size_t)n < sizeof(guard.time) ? (size_t)n : 0;
	}
	allocation_failed = 0;
	guard.active = 1;
#ifndef CLI_ASAN   /* AddressSanitizer's own handlers report crashes */
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
		struct sigaction fatal = {.sa_handler = guard_on_fatal, .sa_flags = SA_NODEFER};
		sigemptyset(&fatal.sa_mask);
		sigaction(fatal_signals[i], &fatal, NULL);
	}
#endif
	if (l->timeout) {
		struct sigaction sa = {.sa_handler = guard_on_alarm};
		sigemptyset(&sa.sa_mask);
		sigaction(SIGALRM, &sa, NULL);
		alarm(l->timeout);
	}
}

void cli_guard_end(void)
{
	alarm(0);
	guard.active = 0;
#ifndef CLI_ASAN
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
		signal(fatal_signals[i], SIG_DFL);
#endif
}
