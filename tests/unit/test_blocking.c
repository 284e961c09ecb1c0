/* What each thread waits for and the wait-for graph (analyzer/blocking.c,
 * analyzer/waitgraph.c) on crafted cores: the system call from the saved
 * registers (x86_64's and aarch64's tables), glibc's frames and their
 * arguments, owners from glibc 2.36's layouts (a PI mutex's lock word, an
 * owner that is no thread, a garbage one), cycles and the hang's summary. */
#define UNIT_GROUP "blocking"
#include "unit.h"

#include <elf.h>
#include <stdlib.h>

#include "craft.h"
#include "../../analyzer/blocking.h"
#include "../../analyzer/waitgraph.h"
#include "../../corefile/arch.h"

enum {
	CODE = 0x10000, SYSCALL_PC = CODE + 0x102, SVC_PC = CODE + 0x204, USER_PC = CODE + 0x300,
	DATA = 0x20000,
};

#define MUTEX(n) (DATA + 0x40 * (n))

static const char *const LIBC = "/lib/x86_64-linux-gnu/libc.so.6";

struct thread_spec {
	int32_t tid;
	uint64_t pc, nr, arg0;
	const char *wait_fn;        /* glibc's frame, with a "mutex" argument */
	uint64_t mutex;
	const char *user_fn;
};

/* A mutex in the core's memory: glibc 2.36's __lock, __owner, __kind. */
static bool put_mutex(struct craft_core *c, uint64_t at, uint32_t lock, uint32_t owner, uint32_t kind)
{
	return craft_u32(c, at, lock) && craft_u32(c, at + 8, owner) && craft_u32(c, at + 16, kind);
}

static struct craft_core *crafted(void)
{
	struct craft_core *c = craft_create();
	bool ok = c && craft_segment(c, CODE, 0x1000, PF_R | PF_X) && craft_segment(c, DATA, 0x1000, PF_R | PF_W);
	unsigned char *syscall_insn = ok ? craft_bytes(c, SYSCALL_PC - 2, 2) : NULL;
	unsigned char *svc = ok ? craft_bytes(c, SVC_PC - 4, 4) : NULL;
	if (!syscall_insn || !svc) {
		craft_destroy(c);
		return NULL;
	}
	memcpy(syscall_insn, "\x0f\x05", 2);
	memcpy(svc, "\x01\x00\x00\xd4", 4);
	ok = put_mutex(c, MUTEX(0), 2, 200, 0) &&           /* held by 200 */
	     put_mutex(c, MUTEX(1), 2, 100, 0) &&           /* held by 100 */
	     put_mutex(c, MUTEX(2), 0x80000000u | 100, 0, 32) &&   /* PI: the lock word's tid */
	     put_mutex(c, MUTEX(3), 2, 9999, 0) &&          /* its owner exited */
	     put_mutex(c, MUTEX(4), 2, 0xdeadbeefu, 0) &&   /* garbage */
	     put_mutex(c, MUTEX(5), 2, 300, 0);             /* held by 300, in read() */
	craft_prstatus(craft_notes(c), 1, 0, (uint64_t[CORE_REG_COUNT]){ 0 });
	if (!ok) {
		craft_destroy(c);
		return NULL;
	}
	return c;
}

/* Thread T of AN as SPEC says: its registers and a frame of glibc's wait
 * function over the user's. */
static void make_thread(struct analysis *an, size_t i, const struct thread_spec *spec, bool aarch64)
{
	struct an_thread *t = &an->threads[i];
	t->tid = spec->tid;
	if (aarch64) {
		t->nregs = CORE_A64_COUNT;
		t->regs[CORE_A64_PC] = spec->pc;
		t->regs[8] = spec->nr;
		t->regs[0] = spec->arg0;
	} else {
		t->nregs = CORE_REG_COUNT;
		t->regs[CORE_REG_RIP] = spec->pc;
		t->regs[CORE_REG_ORIG_RAX] = spec->nr;
		t->regs[CORE_REG_RDI] = spec->arg0;
		t->regs[CORE_REG_RSI] = spec->tid == 900 ? 6 | 128 : 0;   /* FUTEX_LOCK_PI_PRIVATE */
	}
	t->frames = calloc(2, sizeof(*t->frames));
	if (!t->frames)
		return;
	size_t n = 0;
	if (spec->wait_fn) {
		struct an_frame *f = &t->frames[n++];
		char value[32];
		snprintf(value, sizeof(value), "0x%llx", (unsigned long long)spec->mutex);
		struct an_arg arg = { .name = "mutex", .value = value };
		f->function = strdup(spec->wait_fn);
		f->module = strdup(LIBC);
		f->args = an_args_pack(&arg, 1);
		f->nargs = 1;
		f->has_args = true;
	}
	struct an_frame *u = &t->frames[n++];
	u->function = strdup(spec->user_fn);
	u->module = strdup("/srv/prog");
	t->nframes = n;
}

static struct analysis *analysis_of(const struct thread_spec *specs, size_t n, bool aarch64)
{
	struct analysis *an = an_analysis_create();
	if (!an || !(an->threads = calloc(n, sizeof(*an->threads)))) {
		an_analysis_destroy(an);
		return NULL;
	}
	an->nthreads = n;
	for (size_t i = 0; i < n; i++)
		make_thread(an, i, &specs[i], aarch64);
	return an;
}

static const struct an_blocked *blocked_of(struct analysis *an, int32_t tid)
{
	struct an_thread *t = an_thread_by_tid(an, tid);
	return t ? t->blocked : NULL;
}

static bool has_warning(const struct core *core, const char *part)
{
	for (size_t i = 0; i < core->nwarnings; i++)
		if (strstr(core->warnings[i], part))
			return true;
	return false;
}

static void test_owners_and_cycle(struct core *core)
{
	const struct thread_spec specs[] = {
		{ 100, SYSCALL_PC, 202, MUTEX(0), "___pthread_mutex_lock", MUTEX(0), "transfer" },
		{ 200, SYSCALL_PC, 202, MUTEX(1), "___pthread_mutex_lock", MUTEX(1), "audit" },
		{ 300, SYSCALL_PC, 202, MUTEX(2), "__pthread_mutex_lock_full", MUTEX(2), "pi_user" },
		{ 400, SYSCALL_PC, 202, MUTEX(3), "___pthread_mutex_lock", MUTEX(3), "orphan" },
		{ 500, SYSCALL_PC, 202, MUTEX(4), "___pthread_mutex_lock", MUTEX(4), "garbage" },
		{ 600, USER_PC, UINT64_MAX, 0, NULL, 0, "crunch" },
		{ 700, SYSCALL_PC, UINT64_MAX, 0, NULL, 0, "between_calls" },
		{ 800, SYSCALL_PC, 0, 5, NULL, 0, "reader" },
		{ 900, SYSCALL_PC, 202, MUTEX(2), NULL, 0, "raw_pi" },
	};
	struct analysis *an = analysis_of(specs, sizeof(specs) / sizeof(specs[0]), false);
	CHECK("x86_64: analysis", an && an_blocking_analyze(core, NULL, an) && an_waitgraph_analyze(an));
	if (!an)
		return;
	const struct an_blocked *b = blocked_of(an, 100);
	CHECK("x86_64: a mutex wait and its owner",
	      b && b->kind == AN_WAIT_MUTEX && b->object == MUTEX(0) && b->has_owner && b->owner_tid == 200 &&
	      b->syscall && strcmp(b->syscall, "futex") == 0 && b->waiter && strcmp(b->waiter, "transfer") == 0);
	b = blocked_of(an, 300);
	CHECK("x86_64: a PI mutex's owner is its lock word's", b && b->has_owner && b->owner_tid == 100);
	b = blocked_of(an, 400);
	CHECK("x86_64: an owner that is no thread", b && b->has_owner && b->owner_gone && b->owner_tid == 9999 &&
	      strstr(b->summary, "no thread of the process"));
	b = blocked_of(an, 500);
	CHECK("x86_64: a garbage owner is none", b && !b->has_owner);
	CHECK("x86_64: ... and said so", has_warning(core, "0xdeadbeef"));
	CHECK("x86_64: the layouts were glibc 2.36's, said once", has_warning(core, "glibc 2.36"));
	b = blocked_of(an, 900);
	CHECK("x86_64: a raw PI futex's owner is its word's", b && b->kind == AN_WAIT_FUTEX && b->has_owner &&
	      b->owner_tid == 100);
	CHECK("x86_64: on the CPU, none", !blocked_of(an, 600) && !blocked_of(an, 700));
	b = blocked_of(an, 800);
	CHECK("x86_64: read's fd", b && b->kind == AN_WAIT_IO && b->has_fd && b->fd == 5 &&
	      strcmp(b->summary, "blocked in read(fd 5)") == 0);
	CHECK("x86_64: one deadlock of 100 and 200", an->ndeadlocks == 1 && an->deadlocks[0].n == 2 &&
	      an->deadlocks[0].threads[0] == 100 && an->deadlocks[0].threads[1] == 200 &&
	      an->deadlocks[0].objects[0] == MUTEX(0));
	enum an_cause_kind kind;
	char *summary = an_hang_summary(an, &kind);
	CHECK_STR("x86_64: the deadlock's summary", summary,
		  "thread 100 (transfer) holds mutex at 0x20040 and waits for mutex at 0x20000, held by "
		  "thread 200 (audit), which waits for mutex at 0x20040");
	CHECK("x86_64: kind deadlock", kind == AN_CAUSE_DEADLOCK);
	free(summary);
	an_analysis_destroy(an);
}

static void test_chain(struct core *core)
{
	const struct thread_spec specs[] = {
		{ 100, SYSCALL_PC, 202, MUTEX(5), "___pthread_mutex_lock", MUTEX(5), "pool_worker" },
		{ 200, SYSCALL_PC, 202, MUTEX(5), "___pthread_mutex_lock", MUTEX(5), "pool_worker" },
		{ 300, SYSCALL_PC, 0, 3, NULL, 0, "refill_pool" },
		{ 400, SYSCALL_PC, 202, MUTEX(100), "___pthread_mutex_lock", MUTEX(100), "unmapped" },
	};
	struct analysis *an = analysis_of(specs, sizeof(specs) / sizeof(specs[0]), false);
	CHECK("chain: analysis", an && an_blocking_analyze(core, NULL, an) && an_waitgraph_analyze(an));
	if (!an)
		return;
	enum an_cause_kind kind;
	char *summary = an_hang_summary(an, &kind);
	CHECK_STR("chain: the biggest group and where it ends", summary,
		  "2 threads wait for mutex at 0x20140, held by thread 300 (refill_pool), which is blocked in "
		  "read(fd 3)");
	CHECK("chain: no deadlock", kind == AN_CAUSE_HANG && an->ndeadlocks == 0);
	const struct an_blocked *b = blocked_of(an, 400);
	CHECK("chain: a mutex past the core's memory has no owner", b && b->kind == AN_WAIT_MUTEX && !b->has_owner);
	free(summary);
	an_analysis_destroy(an);
}

static void test_aarch64(struct core *core)
{
	const struct core_arch *saved = core->arch;
	core->arch = &core_arch_aarch64;
	const struct thread_spec specs[] = {
		/* interrupted: x0 holds -ERESTARTSYS, the frame's argument says the mutex */
		{ 100, SVC_PC, 98, (uint64_t)-512, "___pthread_mutex_lock", MUTEX(1), "transfer" },
		{ 200, SVC_PC, 63, 7, NULL, 0, "reader" },
		{ 300, SVC_PC, 63, (uint64_t)-512, NULL, 0, "lost_fd" },
		{ 400, SYSCALL_PC, 98, 0, NULL, 0, "x86_bytes" },
	};
	struct analysis *an = analysis_of(specs, sizeof(specs) / sizeof(specs[0]), true);
	CHECK("aarch64: analysis", an && an_blocking_analyze(core, NULL, an));
	if (an) {
		const struct an_blocked *b = blocked_of(an, 100);
		CHECK("aarch64: futex in x8, the mutex from the frame",
		      b && b->syscall && strcmp(b->syscall, "futex") == 0 && b->kind == AN_WAIT_MUTEX &&
		      b->object == MUTEX(1) && b->owner_tid == 100);
		b = blocked_of(an, 200);
		CHECK("aarch64: read(fd 7)", b && b->kind == AN_WAIT_IO && b->has_fd && b->fd == 7);
		b = blocked_of(an, 300);
		CHECK("aarch64: x0 overwritten by the return value is no fd", b && b->kind == AN_WAIT_IO && !b->has_fd);
		CHECK("aarch64: no svc before the pc, no call", !blocked_of(an, 400));
	}
	an_analysis_destroy(an);
	core->arch = saved;
}

/* N threads, thread I waiting for a mutex that thread OWNER(I) holds
 * (its tid, or one that is no thread): a wait-for graph built from
 * damaged owner words. */
static struct analysis *graph_of(size_t n, int32_t (*owner)(size_t, size_t))
{
	struct analysis *an = an_analysis_create();
	if (!an || !(an->threads = calloc(n, sizeof(*an->threads)))) {
		an_analysis_destroy(an);
		return NULL;
	}
	an->nthreads = n;
	for (size_t i = 0; i < n; i++) {
		struct an_blocked *b = calloc(1, sizeof(*b));
		an->threads[i].tid = (int32_t)(i + 1);
		an->threads[i].blocked = b;
		if (!b || !(b->summary = strdup("waits for a mutex"))) {
			an_analysis_destroy(an);
			return NULL;
		}
		*b = (struct an_blocked){ .kind = AN_WAIT_MUTEX, .object = 0x1000 + 64 * i, .has_object = true,
					  .has_owner = true, .owner_tid = owner(i, n), .summary = b->summary };
		b->owner_gone = (size_t)b->owner_tid > n;
	}
	return an;
}

static int32_t next_in_ring(size_t i, size_t n) { return (int32_t)((i + 1) % n + 1); }
static int32_t toward_first(size_t i, size_t n) { (void)n; return i ? (int32_t)i : 99999999; }

/* A cycle through every thread of a big process, and a chain as long:
 * found once, in time; the summary says the first few hops and how many
 * threads there are, not every hop. */
static void test_huge_graphs(void)
{
	enum { N = 20000 };
	struct analysis *an = graph_of(N, next_in_ring);
	CHECK("huge cycle: analysis", an && an_waitgraph_analyze(an));
	if (an) {
		CHECK("huge cycle: one deadlock of every thread", an->ndeadlocks == 1 && an->deadlocks[0].n == N);
		CHECK("huge cycle: its summary is short and counts them",
		      an->ndeadlocks == 1 && strlen(an->deadlocks[0].summary) < 2048 &&
		      strstr(an->deadlocks[0].summary, "20000 threads"));
		an_analysis_destroy(an);
	}
	an = graph_of(N, toward_first);
	CHECK("huge chain: analysis", an && an_waitgraph_analyze(an));
	if (an) {
		enum an_cause_kind kind;
		char *summary = an_hang_summary(an, &kind);
		CHECK("huge chain: no deadlock", an->ndeadlocks == 0 && kind == AN_CAUSE_HANG);
		CHECK("huge chain: a short summary", summary && strlen(summary) < 2048);
		free(summary);
		an_analysis_destroy(an);
	}
}

int main(void)
{
	test_huge_graphs();
	struct craft_core *c = crafted();
	struct craft_session cs;
	bool opened = c && craft_open(c, &cs);
	craft_destroy(c);
	CHECK("crafted core opens", opened);
	if (opened) {
		test_owners_and_cycle(cs.core);
		test_chain(cs.core);
		test_aarch64(cs.core);
		craft_close(&cs);
	}
	return unit_exit();
}
