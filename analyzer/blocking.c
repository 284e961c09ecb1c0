/* blocked_on, thread by thread.  The system call comes from the registers
 * the kernel saved (corefile's architecture table); the kind and object from
 * glibc's wait functions among the innermost frames and their arguments
 * (DWARF of libc6-dbg), else from the call's own arguments; the holder from
 * the object (glibc's DWARF layouts, else glibc 2.36's). */
#include "blocking.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pthreads.h"
#include "../base/array.h"

enum {
	SCAN_FRAMES = 24,           /* frames looked at for glibc's wait functions */
	TID_MASK = 0x3fffffff,      /* FUTEX_TID_MASK: a PI or robust lock word's owner */
	FUTEX_CMD_MASK = 0x7f,      /* the futex op without FUTEX_PRIVATE_FLAG, ... */
	FUTEX_LOCK_PI = 6,
	FUTEX_LOCK_PI2 = 13,
	MUTEX_ROBUST = 16,          /* PTHREAD_MUTEX_ROBUST_NORMAL_NP in __kind */
	MUTEX_PI = 32,              /* PTHREAD_MUTEX_PRIO_INHERIT_NP */
	TID_MAX = 1 << 22,          /* PID_MAX_LIMIT */
	NAME_MAX_LEN = 256,
};

/* glibc's functions a waiting thread sits in, the kind each says and the
 * parameter holding the object; a weak one (a low-level lock, the futex
 * helpers) gives way to any other. */
struct wait_fn {
	const char *name;           /* without glibc's leading underscores and __GI_ */
	enum an_wait_kind kind;
	const char *param;          /* NULL: no object */
	bool weak;
};

static const struct wait_fn wait_fns[] = {
	{ "futex_wait", AN_WAIT_FUTEX, "futex_word", true },
	{ "futex_abstimed_wait_common64", AN_WAIT_FUTEX, "futex_word", true },
	{ "futex_abstimed_wait_common", AN_WAIT_FUTEX, "futex_word", true },
	{ "lll_lock_wait", AN_WAIT_FUTEX, "futex", true },
	{ "lll_lock_wait_private", AN_WAIT_FUTEX, "futex", true },
	{ "lll_mutex_lock_optimized", AN_WAIT_MUTEX, "mutex", false },
	{ "pthread_mutex_lock", AN_WAIT_MUTEX, "mutex", false },
	{ "pthread_mutex_lock_full", AN_WAIT_MUTEX, "mutex", false },
	{ "pthread_mutex_timedlock", AN_WAIT_MUTEX, "mutex", false },
	{ "pthread_mutex_clocklock", AN_WAIT_MUTEX, "mutex", false },
	{ "pthread_mutex_clocklock_common", AN_WAIT_MUTEX, "mutex", false },
	{ "pthread_mutex_timedlock64", AN_WAIT_MUTEX, "mutex", false },
	{ "pthread_rwlock_rdlock_full64", AN_WAIT_RWLOCK, "rwlock", false },
	{ "pthread_rwlock_wrlock_full64", AN_WAIT_RWLOCK, "rwlock", false },
	{ "pthread_rwlock_rdlock", AN_WAIT_RWLOCK, "rwlock", false },
	{ "pthread_rwlock_wrlock", AN_WAIT_RWLOCK, "rwlock", false },
	{ "pthread_rwlock_timedrdlock64", AN_WAIT_RWLOCK, "rwlock", false },
	{ "pthread_rwlock_timedwrlock64", AN_WAIT_RWLOCK, "rwlock", false },
	{ "pthread_rwlock_clockrdlock64", AN_WAIT_RWLOCK, "rwlock", false },
	{ "pthread_rwlock_clockwrlock64", AN_WAIT_RWLOCK, "rwlock", false },
	{ "pthread_clockjoin_ex", AN_WAIT_JOIN, "threadid", false },
	{ "pthread_join", AN_WAIT_JOIN, "threadid", false },
	{ "pthread_timedjoin_np", AN_WAIT_JOIN, "threadid", false },
	{ "pthread_clockjoin_np", AN_WAIT_JOIN, "threadid", false },
	{ "pthread_cond_wait_common", AN_WAIT_CONDITION, "cond", false },
	{ "pthread_cond_wait", AN_WAIT_CONDITION, "cond", false },
	{ "pthread_cond_timedwait", AN_WAIT_CONDITION, "cond", false },
	{ "pthread_cond_timedwait64", AN_WAIT_CONDITION, "cond", false },
	{ "pthread_cond_clockwait", AN_WAIT_CONDITION, "cond", false },
	{ "pthread_cond_clockwait64", AN_WAIT_CONDITION, "cond", false },
	{ "do_futex_wait", AN_WAIT_SEMAPHORE, "sem", false },
	{ "new_sem_wait_slow64", AN_WAIT_SEMAPHORE, "sem", false },
	{ "new_sem_wait", AN_WAIT_SEMAPHORE, "sem", false },
	{ "sem_wait", AN_WAIT_SEMAPHORE, "sem", false },
	{ "sem_timedwait", AN_WAIT_SEMAPHORE, "sem", false },
	{ "sem_clockwait", AN_WAIT_SEMAPHORE, "sem", false },
	{ "sem_timedwait64", AN_WAIT_SEMAPHORE, "sem", false },
	{ "pthread_barrier_wait", AN_WAIT_BARRIER, "barrier", false },
	/* calls that another call may stand for: aarch64's pause is a ppoll,
	 * a sleep a tracer interrupted goes on in restart_syscall */
	{ "pause", AN_WAIT_WAIT, NULL, false },
	{ "clock_nanosleep", AN_WAIT_SLEEP, NULL, false },
	{ "nanosleep", AN_WAIT_SLEEP, NULL, false },
	{ "sleep", AN_WAIT_SLEEP, NULL, false },
	{ "usleep", AN_WAIT_SLEEP, NULL, false },
	{ "poll", AN_WAIT_IO, NULL, false },
	{ "ppoll", AN_WAIT_IO, NULL, false },
	{ "epoll_wait", AN_WAIT_IO, NULL, false },
	{ "sigwait", AN_WAIT_WAIT, NULL, false },
	{ "sigwaitinfo", AN_WAIT_WAIT, NULL, false },
	{ "sigtimedwait", AN_WAIT_WAIT, NULL, false },
	{ "sigsuspend", AN_WAIT_WAIT, NULL, false },
};

/* What a system call is, by its name; the fd is its first argument. */
struct call_kind {
	const char *name;
	enum an_wait_kind kind;
	bool fd;
};

static const struct call_kind call_kinds[] = {
	{ "read", AN_WAIT_IO, true }, { "write", AN_WAIT_IO, true }, { "readv", AN_WAIT_IO, true },
	{ "writev", AN_WAIT_IO, true }, { "pread64", AN_WAIT_IO, true }, { "pwrite64", AN_WAIT_IO, true },
	{ "preadv", AN_WAIT_IO, true }, { "pwritev", AN_WAIT_IO, true }, { "recvfrom", AN_WAIT_IO, true },
	{ "recvmsg", AN_WAIT_IO, true }, { "recvmmsg", AN_WAIT_IO, true }, { "sendto", AN_WAIT_IO, true },
	{ "sendmsg", AN_WAIT_IO, true }, { "sendmmsg", AN_WAIT_IO, true }, { "accept", AN_WAIT_IO, true },
	{ "accept4", AN_WAIT_IO, true }, { "connect", AN_WAIT_IO, true }, { "epoll_wait", AN_WAIT_IO, true },
	{ "epoll_pwait", AN_WAIT_IO, true }, { "epoll_pwait2", AN_WAIT_IO, true },
	{ "flock", AN_WAIT_IO, true }, { "fsync", AN_WAIT_IO, true }, { "fdatasync", AN_WAIT_IO, true },
	{ "splice", AN_WAIT_IO, true }, { "io_uring_enter", AN_WAIT_IO, true },
	{ "poll", AN_WAIT_IO, false }, { "ppoll", AN_WAIT_IO, false }, { "select", AN_WAIT_IO, false },
	{ "pselect6", AN_WAIT_IO, false }, { "io_getevents", AN_WAIT_IO, false },
	{ "msgrcv", AN_WAIT_IO, false }, { "msgsnd", AN_WAIT_IO, false },
	{ "futex", AN_WAIT_FUTEX, false }, { "futex_waitv", AN_WAIT_FUTEX, false },
	{ "nanosleep", AN_WAIT_SLEEP, false }, { "clock_nanosleep", AN_WAIT_SLEEP, false },
	{ "wait4", AN_WAIT_WAIT, false }, { "waitid", AN_WAIT_WAIT, false }, { "pause", AN_WAIT_WAIT, false },
	{ "rt_sigsuspend", AN_WAIT_WAIT, false }, { "rt_sigtimedwait", AN_WAIT_WAIT, false },
};

/* Where the holder is recorded, from glibc's DWARF or its 2.36 layout. */
struct lock_layout {
	uint64_t mutex_lock, mutex_owner, mutex_kind, rwlock_cur_writer;
	uint64_t pthread_tid;
	bool from_dwarf;
};

/* An object's name, looked up once however many threads wait on it. */
struct name_memo {
	uint64_t object, size;
	char *name;                 /* NULL: it has none */
};

struct blocking_ctx {
	struct core *core;
	struct dbg_session *s;
	struct analysis *an;
	struct lock_layout layout;
	bool layout_known, layout_stated;
	struct name_memo *names;
	size_t nnames, names_cap;
};

/* NAME without glibc's prefixes: "__GI___libc_read" is "read",
 * "___pthread_mutex_lock" "pthread_mutex_lock". */
static const char *plain_name(const char *name)
{
	for (;;) {
		while (*name == '_')
			name++;
		if (strncmp(name, "GI_", 3) == 0)
			name += 3;
		else if (strncmp(name, "libc_", 5) == 0)
			name += 5;
		else
			return name;
	}
}

static bool name_is(const char *name, const char *want)
{
	size_t n = strlen(want);
	return strncmp(name, want, n) == 0 && (name[n] == '\0' || name[n] == '(');
}

static bool module_is(const char *module, const char *const *prefixes)
{
	const char *base = module ? strrchr(module, '/') : NULL;
	base = base ? base + 1 : module;
	for (; base && *prefixes; prefixes++)
		if (strncmp(base, *prefixes, strlen(*prefixes)) == 0)
			return true;
	return false;
}

bool an_frame_in_runtime(const struct an_frame *f)
{
	static const char *const libs[] = { "libc.so", "libc-", "libpthread", "ld-linux", "libstdc++", NULL };
	static const char *const inline_runtime[] = { "std::", "__gthread", "__gnu_cxx::", NULL };
	if (module_is(f->module, libs) || (f->file && strstr(f->file, "/include/c++/")))
		return true;   /* a library's own code, or its headers' inlined into the program */
	for (const char *const *p = inline_runtime; f->function && *p; p++)
		if (strncmp(f->function, *p, strlen(*p)) == 0)
			return true;
	return false;
}

const char *an_waiting_function(const struct an_thread *t)
{
	for (size_t i = 0; i < t->nframes; i++)
		if (t->frames[i].kind == AN_FRAME_SCRIPT && t->frames[i].function)
			return t->frames[i].function;
	for (size_t i = 0; i < t->nframes; i++)
		if (t->frames[i].function && !an_frame_in_runtime(&t->frames[i]))
			return t->frames[i].function;
	return NULL;
}

static const struct wait_fn *wait_fn_of(const char *function)
{
	if (!function)
		return NULL;
	const char *name = plain_name(function);
	for (size_t i = 0; i < sizeof(wait_fns) / sizeof(wait_fns[0]); i++)
		if (name_is(name, wait_fns[i].name))
			return &wait_fns[i];
	return NULL;
}

static const struct call_kind *call_kind_of(const char *name)
{
	for (size_t i = 0; name && i < sizeof(call_kinds) / sizeof(call_kinds[0]); i++)
		if (strcmp(call_kinds[i].name, name) == 0)
			return &call_kinds[i];
	return NULL;
}

/* The address parameter PARAM of F holds ("0x55d4... <g_pool+8>"). */
static bool frame_param(const struct an_frame *f, const char *param, uint64_t *value)
{
	for (size_t i = 0; i < f->nargs; i++) {
		const struct an_arg *a = &f->args[i];
		if (!a->name || !a->value || strcmp(a->name, param) != 0 || strncmp(a->value, "0x", 2) != 0)
			continue;
		char *end;
		unsigned long long v = strtoull(a->value + 2, &end, 16);
		if (end == a->value + 2 || v == 0)
			return false;
		*value = v;
		return true;
	}
	return false;
}

/* glibc's layouts, looked up once, when a thread's holder is first read:
 * the members in the unit of glibc's own lock functions (a program's
 * DWARF is never indexed for them), else glibc 2.36's. */
static const struct lock_layout *layout(struct blocking_ctx *c)
{
	const struct core_glibc_locks *g = &c->core->arch->glibc_locks;
	struct lock_layout *l = &c->layout;
	if (c->layout_known)
		return l;
	c->layout_known = true;
	*l = (struct lock_layout){
		.mutex_lock = 0, .mutex_owner = g->mutex_owner, .mutex_kind = g->mutex_kind,
		.rwlock_cur_writer = g->rwlock_cur_writer, .pthread_tid = c->core->arch->pthread_tid,
	};
	if (!c->s)
		return l;
	struct an_pthread_layout pl;
	an_pthread_layout(c->s, &pl);
	l->pthread_tid = pl.tid;
	uint64_t lock, owner, kind, cw;
	l->from_dwarf =
		dbg_member_offset_near(c->s, "pthread_mutex_lock", "pthread_mutex_t", "__data.__lock", &lock) &&
		dbg_member_offset_near(c->s, "pthread_mutex_lock", "pthread_mutex_t", "__data.__owner", &owner) &&
		dbg_member_offset_near(c->s, "pthread_mutex_lock", "pthread_mutex_t", "__data.__kind", &kind) &&
		dbg_member_offset_near(c->s, "pthread_rwlock_wrlock", "pthread_rwlock_t", "__data.__cur_writer", &cw);
	if (l->from_dwarf) {
		l->mutex_lock = lock;
		l->mutex_owner = owner;
		l->mutex_kind = kind;
		l->rwlock_cur_writer = cw;
	}
	return l;
}

/* Said once per analysis, when an owner was read without glibc's DWARF. */
static void state_layout(struct blocking_ctx *c)
{
	if (c->layout_stated || c->layout.from_dwarf)
		return;
	c->layout_stated = true;
	core_warn(c->core, "glibc's lock layouts are not in its debug information: glibc 2.36's are used");
}

/* The size of the object of KIND: the ABI's (bits/pthreadtypes-arch.h,
 * semaphore.h), which no glibc changes. */
static uint64_t object_size(struct blocking_ctx *c, enum an_wait_kind kind)
{
	const struct core_glibc_locks *g = &c->core->arch->glibc_locks;
	switch (kind) {
	case AN_WAIT_MUTEX: return g->mutex_size;
	case AN_WAIT_RWLOCK: return g->rwlock_size;
	case AN_WAIT_CONDITION: return g->cond_size;
	case AN_WAIT_SEMAPHORE: return g->sem_size;
	case AN_WAIT_BARRIER: return g->barrier_size;
	case AN_WAIT_FUTEX: return 4;
	default: return 0;
	}
}

/* The thread a tid word names: a tid, or none (0, or garbage). */
static bool plausible_tid(uint32_t v)
{
	return v > 0 && v < TID_MAX;
}

/* The holder OBJECT records for B's kind. */
static void read_owner(struct blocking_ctx *c, struct an_blocked *b)
{
	const struct lock_layout *l = layout(c);
	uint32_t word = 0, kind = 0, lock = 0;
	bool ok = false;
	switch (b->kind) {
	case AN_WAIT_MUTEX:
		ok = core_read_u32(c->core, b->object + l->mutex_kind, &kind) &&
		     core_read_u32(c->core, b->object + l->mutex_lock, &lock) &&
		     core_read_u32(c->core, b->object + l->mutex_owner, &word);
		if (ok && (kind & (MUTEX_ROBUST | MUTEX_PI)))
			word = lock & TID_MASK;
		break;
	case AN_WAIT_RWLOCK:
		ok = core_read_u32(c->core, b->object + l->rwlock_cur_writer, &word);
		break;
	case AN_WAIT_JOIN:
		ok = core_read_u32(c->core, b->object + l->pthread_tid, &word);
		break;
	default:
		return;
	}
	if (!ok)
		return;
	state_layout(c);
	if (!plausible_tid(word)) {
		if (word != 0)
			core_warn(c->core, "%s at 0x%" PRIx64 " records 0x%" PRIx32 " as its holder: no thread id",
				  an_wait_kind_name(b->kind), b->object, word);
		return;
	}
	b->owner_tid = (int32_t)word;
	b->has_owner = true;
	b->owner_gone = an_thread_by_tid(c->an, b->owner_tid) == NULL;
}

/* The object from the futex word FUTEX the call waits on, where its kind
 * says where the word lies in it. */
static bool object_from_futex(struct blocking_ctx *c, enum an_wait_kind kind, uint64_t futex,
			      uint64_t *object)
{
	const struct lock_layout *l = layout(c);
	switch (kind) {
	case AN_WAIT_MUTEX:
		*object = futex - l->mutex_lock;
		return true;
	case AN_WAIT_JOIN:
		*object = futex - l->pthread_tid;
		return futex > l->pthread_tid;
	case AN_WAIT_FUTEX:
		*object = futex;
		return true;
	default:
		return false;   /* rwlocks, conditions, semaphores wait on one of several words */
	}
}

/* The object of KIND whose futex word is FUTEX where only the word is
 * known and the object waits on one of several words: the global that holds
 * the word when it is an object of that kind (its size says so). */
static bool object_from_symbol(struct blocking_ctx *c, enum an_wait_kind kind, uint64_t futex,
			       uint64_t *object)
{
	uint64_t start, size, want = object_size(c, kind);
	if (!c->s || kind == AN_WAIT_FUTEX || kind == AN_WAIT_MUTEX || kind == AN_WAIT_JOIN || !want ||
	    !dbg_data_symbol(c->s, futex, &start, &size) || size != want)
		return false;
	*object = start;
	return true;
}

/* The kind and object the frames of T say, innermost first, down to its
 * first frame outside the C library (which is its waiter). */
static void from_frames(struct blocking_ctx *c, const struct an_thread *t, struct an_blocked *b,
			bool *found_kind)
{
	const struct wait_fn *strong = NULL, *entry = NULL;
	bool strong_object = false, weak_object = false;
	uint64_t weak = 0;
	for (size_t i = 0; i < t->nframes && i < SCAN_FRAMES; i++) {
		const struct an_frame *f = &t->frames[i];
		if (!an_frame_in_runtime(f))
			break;
		const struct wait_fn *w = wait_fn_of(f->function);
		uint64_t v;
		if (!w || !w->param || !frame_param(f, w->param, &v)) {
			if (w && !w->weak && !strong)
				strong = w;
			if (w && !w->weak)
				entry = w;
			continue;
		}
		if (w->weak && !weak_object) {
			weak = v;
			weak_object = true;
		} else if (!w->weak && (!strong || !strong_object)) {
			strong = w;
			strong_object = true;
			b->object = v;
		}
		if (!w->weak)
			entry = w;
	}
	if (strong) {
		b->kind = strong->kind;
		b->via = entry ? entry->name : strong->name;   /* the library's entry, as the program called it */
		b->has_object = strong_object;
		*found_kind = true;
	}
	if (strong && !strong_object && weak_object)
		b->has_object = object_from_futex(c, b->kind, weak, &b->object) ||
				object_from_symbol(c, b->kind, weak, &b->object);
	else if (!strong && weak_object) {
		b->kind = AN_WAIT_FUTEX;
		b->object = weak;
		b->has_object = true;
		*found_kind = true;
	}
}

/* A raw futex locked with FUTEX_LOCK_PI keeps its owner's tid in its word. */
static void pi_futex_owner(struct blocking_ctx *c, const struct core_syscall *sc, struct an_blocked *b)
{
	uint32_t word;
	unsigned op = (unsigned)sc->args[1] & FUTEX_CMD_MASK;
	if (b->kind != AN_WAIT_FUTEX || !b->has_object || !(sc->known & 2) ||
	    (op != FUTEX_LOCK_PI && op != FUTEX_LOCK_PI2) || !core_read_u32(c->core, b->object, &word) ||
	    !plausible_tid(word & TID_MASK))
		return;
	b->owner_tid = (int32_t)(word & TID_MASK);
	b->has_owner = true;
	b->owner_gone = an_thread_by_tid(c->an, b->owner_tid) == NULL;
}

/* What the call itself says where the frames did not. */
static void from_call(struct blocking_ctx *c, const struct core_syscall *sc, struct an_blocked *b,
		      bool found_kind)
{
	const struct call_kind *k = call_kind_of(sc->name);
	if (!found_kind)
		b->kind = k ? k->kind : AN_WAIT_SYSCALL;
	if (!b->via)
		b->via = sc->name;
	bool arg0 = sc->known & 1;
	if (k && k->fd && arg0 && b->kind == AN_WAIT_IO && (int64_t)(int32_t)sc->args[0] >= 0) {
		b->fd = (int32_t)sc->args[0];
		b->has_fd = true;
	}
	if (!b->has_object && arg0 && k && k->kind == AN_WAIT_FUTEX)
		b->has_object = object_from_futex(c, b->kind, sc->args[0], &b->object) ||
				object_from_symbol(c, b->kind, sc->args[0], &b->object);
	pi_futex_owner(c, sc, b);
}

/* A read's fd from its frame's parameter where the register lost it. */
static void fd_from_frames(const struct an_thread *t, struct an_blocked *b)
{
	for (size_t i = 0; !b->has_fd && b->kind == AN_WAIT_IO && i < t->nframes && i < 4; i++)
		for (size_t k = 0; k < t->frames[i].nargs; k++) {
			const struct an_arg *a = &t->frames[i].args[k];
			char *end;
			long v = a->name && a->value && strcmp(a->name, "fd") == 0 ? strtol(a->value, &end, 10) : -1;
			if (v >= 0 && a->value != end && *end == '\0') {
				b->fd = v;
				b->has_fd = true;
				break;
			}
		}
}

/* "mutex ledger_lock", "mutex at 0x55d4...", "an unknown mutex". */
static void object_text(const struct an_blocked *b, char *buf, size_t len)
{
	const char *kind = an_wait_kind_name(b->kind);
	if (b->kind == AN_WAIT_GIL)
		snprintf(buf, len, "the GIL");
	else if (b->object_name)
		snprintf(buf, len, "%s %s", kind, b->object_name);
	else if (b->has_object)
		snprintf(buf, len, "%s at 0x%" PRIx64, kind, b->object);
	else
		snprintf(buf, len, "a %s", kind);
}

static bool summarize(struct an_blocked *b)
{
	char obj[NAME_MAX_LEN + 64], fd[96] = "", owner[96] = "";
	object_text(b, obj, sizeof(obj));
	if (b->has_owner)
		snprintf(owner, sizeof(owner), ", held by thread %d%s", (int)b->owner_tid,
			 b->owner_gone ? ", which is no thread of the process" : "");
	const char *call = b->syscall ? b->syscall : "an unnamed system call";
	const char *via = b->via ? b->via : call;   /* the C library's name where it has one */
	int n;
	switch (b->kind) {
	case AN_WAIT_MUTEX:
	case AN_WAIT_RWLOCK:
	case AN_WAIT_GIL:
		n = asprintf(&b->summary, "waits for %s%s", obj, owner);
		break;
	case AN_WAIT_JOIN:
		n = b->has_owner ? asprintf(&b->summary, "waits to join thread %d%s", (int)b->owner_tid,
					    b->owner_gone ? ", which is no thread of the process" : "")
				 : asprintf(&b->summary, "waits to join a thread");
		break;
	case AN_WAIT_CONDITION:
	case AN_WAIT_SEMAPHORE:
	case AN_WAIT_BARRIER:
	case AN_WAIT_FUTEX:
		n = asprintf(&b->summary, "waits on %s", obj);
		break;
	case AN_WAIT_IO:
		if (b->has_fd)
			snprintf(fd, sizeof(fd), "(fd %" PRId64 "%s%.32s)", b->fd, b->fd_target ? ", " : "",
				 b->fd_target ? b->fd_target : "");
		n = asprintf(&b->summary, "blocked in %s%s", via, fd);
		break;
	case AN_WAIT_SLEEP:
		n = asprintf(&b->summary, "sleeps in %s", via);
		break;
	case AN_WAIT_WAIT:
		n = asprintf(&b->summary, "waits in %s", via);
		break;
	default:
		n = asprintf(&b->summary, "in system call %s", call);
		break;
	}
	if (n < 0)
		b->summary = NULL;
	return n >= 0;
}

bool an_blocked_summarize(struct an_blocked *b)
{
	free(b->summary);
	b->summary = NULL;
	return summarize(b);
}

/* What the process's fd table (live, or a snapshot's note) says FD is. */
static bool fd_target(const struct analysis *an, struct an_blocked *b)
{
	for (size_t i = 0; b->has_fd && i < an->nfds; i++)
		if (an->fds[i].fd == b->fd)
			return (b->fd_target = an_strdup(an->fds[i].target)) != NULL || !an->fds[i].target;
	return true;
}

/* A copy of the name of the object of SIZE bytes at OBJECT into *OUT (NULL:
 * it has none); a raw futex word (MEMBERS false) only when it is a variable
 * of its own: runtimes keep theirs inside big structures, whose DWARF
 * would be read for each.  False when memory ran out. */
static bool object_name(struct blocking_ctx *c, uint64_t object, uint64_t size, bool members, char **out)
{
	*out = NULL;
	if (!c->s || !size)
		return true;
	for (size_t i = 0; i < c->nnames; i++)
		if (c->names[i].object == object && c->names[i].size == size)
			return !c->names[i].name || (*out = strdup(c->names[i].name));
	char name[NAME_MAX_LEN];
	struct name_memo *m = base_array_push(&c->names, &c->nnames, &c->names_cap, sizeof(*c->names));
	if (!m)
		return false;
	m->object = object;
	m->size = size;
	if (dbg_data_name(c->s, object, size, members, name, sizeof(name)) && !(m->name = strdup(name)))
		return false;
	return !m->name || (*out = strdup(m->name));
}

/* Code as the core saved it, else from the module's file: a core without
 * NT_FILE (qemu-user's) keeps no library text, and reads it as zeros. */
static bool read_code(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct blocking_ctx *c = ctx;
	return c->s ? dbg_read_module_bytes(c->s, addr, buf, len) : core_read_bytes(c->core, addr, buf, len);
}

/* ---- a call whose number the source did not save ---------------------- */

/* glibc's functions whose call is another than their name: x86_64 has no
 * select, recv or send call, and glibc waits and sleeps through newer ones. */
static const struct {
	const char *function, *call;
} libc_calls[] = {
	{ "select", "pselect6" }, { "pselect", "pselect6" }, { "recv", "recvfrom" },
	{ "send", "sendto" }, { "sigtimedwait", "rt_sigtimedwait" }, { "sigwaitinfo", "rt_sigtimedwait" },
	{ "sigwait", "rt_sigtimedwait" }, { "sigsuspend", "rt_sigsuspend" }, { "waitpid", "wait4" },
	{ "wait", "wait4" }, { "open", "openat" }, { "nanosleep", "clock_nanosleep" },
};

/* The call NAME, glibc's function that makes it: its prefixes (__GI_,
 * __libc_, underscores) and _nocancel suffix off, futex waits and lll
 * locks the futex's.  BUF holds the result when it is not static. */
static const char *libc_call_of(const char *name, char *buf, size_t len)
{
	if (strstr(name, "futex") || strstr(name, "lll_lock"))
		return "futex";
	static const char *const prefixes[] = { "GI_", "libc_", NULL };
	for (bool again = true; again;) {
		again = false;
		while (*name == '_')
			name++;
		for (const char *const *p = prefixes; *p; p++)
			if (strncmp(name, *p, strlen(*p)) == 0) {
				name += strlen(*p);
				again = true;
			}
	}
	snprintf(buf, len, "%s", name);
	char *suffix = strstr(buf, "_nocancel");
	if (suffix && suffix[9] == '\0')
		*suffix = '\0';
	for (size_t i = 0; i < sizeof(libc_calls) / sizeof(libc_calls[0]); i++)
		if (strcmp(buf, libc_calls[i].function) == 0)
			return libc_calls[i].call;
	return buf;
}

/* SC's number and name where the source saved none (a minidump's x86_64
 * contexts hold no orig_rax; SC's arguments are the registers, as at any
 * stop in a call): the call the innermost C-library function of T makes
 * (__futex_abstimed_wait_common64, __lll_lock_wait: futex; read;
 * epoll_wait).  False when no such function names a call of the table. */
static bool syscall_from_libc(struct blocking_ctx *c, const struct an_thread *t, struct core_syscall *sc)
{
	/* The innermost frame and the levels inlined at its pc. */
	for (size_t i = 0; i < t->nframes && i < SCAN_FRAMES; i++) {
		const struct an_frame *f = &t->frames[i];
		if (!an_frame_in_runtime(f) || (i > 0 && f->pc != t->frames[0].pc))
			break;
		char buf[NAME_MAX_LEN];
		const char *call = f->function ? libc_call_of(f->function, buf, sizeof(buf)) : NULL;
		long nr = call ? core_syscall_number(c->core->arch, call) : -1;
		if (nr < 0 && call == buf && strlen(buf) > 2 && strcmp(buf + strlen(buf) - 2, "64") == 0) {
			buf[strlen(buf) - 2] = '\0';
			nr = core_syscall_number(c->core->arch, buf);
		}
		if (nr >= 0) {
			sc->nr = nr;
			sc->name = core_syscall_name(c->core->arch, nr);
			return true;
		}
	}
	return false;
}

/* T's blocked_on into *OUT (NULL: on the CPU). */
static bool thread_blocked(struct blocking_ctx *c, const struct an_thread *t, struct an_blocked **out)
{
	struct core_syscall sc;
	*out = NULL;
	if (t->state == 'R' || !core_syscall_of(c->core, t->regs, t->nregs, read_code, c, &sc) ||
	    (sc.nr < 0 && !syscall_from_libc(c, t, &sc)))
		return true;
	struct an_blocked *b = calloc(1, sizeof(*b));
	if (!b)
		return false;
	bool found_kind = false;
	b->syscall = sc.name;
	b->syscall_nr = sc.nr;
	/* asleep in the call since it last left the CPU */
	b->since = t->off_cpu_ms / 1000u;
	b->has_since = t->has_off_cpu;
	from_frames(c, t, b, &found_kind);
	const char *waiter = an_waiting_function(t);
	if (waiter && !(b->waiter = strdup(waiter)))
		goto nomem;
	from_call(c, &sc, b, found_kind);
	fd_from_frames(t, b);
	if (!fd_target(c->an, b))
		goto nomem;
	if (b->has_object) {
		read_owner(c, b);
		if (!object_name(c, b->object, object_size(c, b->kind), b->kind != AN_WAIT_FUTEX, &b->object_name))
			goto nomem;
	}
	if (!an_blocked_summarize(b))
		goto nomem;
	*out = b;
	return true;
nomem:
	an_blocked_destroy(b);
	return false;
}

bool an_blocking_analyze(struct core *core, struct dbg_session *s, struct analysis *an)
{
	struct blocking_ctx c = { .core = core, .s = s, .an = an };
	bool ok = true;
	for (size_t i = 0; ok && i < an->nthreads; i++) {
		struct an_thread *t = &an->threads[i];
		an_blocked_destroy(t->blocked);
		ok = thread_blocked(&c, t, &t->blocked);
	}
	for (size_t i = 0; i < c.nnames; i++)
		free(c.names[i].name);
	free(c.names);
	return ok;
}
